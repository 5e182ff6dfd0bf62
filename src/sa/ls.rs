//! `--sa ls`: the GPU Larsson–Sadakane of Deng et al., "Fast In-Memory Suffix
//! Sorting on the GPU".
//!
//! All suffixes are radix sorted by their first [`KEY_CHARS`] characters
//! (the paper found 8 byte-characters best; 2-bit DNA fits 29 bases and a
//! 5-bit "length if shorter" into a `u64` key, which orders suffixes near the
//! end of the text exactly), then ranked. Every round fetches, for each
//! suffix still unsorted, the rank of the suffix `h` further on, and sorts
//! each unsorted group by it — groups of up to [`SMALL`] suffixes by a
//! segmented sort with small blocks (each group sorted where it lies),
//! groups up to [`MEDIUM`] by a segmented sort with large blocks and merge
//! rounds, larger groups by two global radix sorts (by the fetched rank, then
//! stably by the group's rank). Ranks are rewritten only for the suffixes
//! of unsorted groups; suffixes left alone are compacted away.

use std::time::Instant;

use super::Round;
use super::steps::{Backend, Iota, RankLayout, Word, bits_for};
use crate::error::Result;

/// Characters in the first sort key.
pub const KEY_CHARS: u32 = 29;
/// Largest group sorted as "small".
pub const SMALL: u64 = 256;
/// Block of the small-group segmented sort.
pub const SMALL_BLOCK: usize = 1024;
/// Largest group sorted as "medium".
pub const MEDIUM: u64 = 1 << 16;
/// Block of the medium-group segmented sort.
pub const MEDIUM_BLOCK: usize = 1 << 14;

const L: RankLayout = RankLayout::Identity;

enum How {
    Blocks(usize),
    Radix,
}

/// The suffix array of the text of `n >= 2` bases packed by
/// [`Backend::pack_text`].
pub fn build<B: Backend, W: Word>(
    b: &B,
    packed: &B::Buf<u64>,
    n: u64,
    log: &mut dyn FnMut(&Round),
) -> Result<Vec<W>> {
    let rbits = bits_for(n + 1);

    let t = Instant::now();
    let mut pos: B::Buf<W> = b.iota(n as usize, Iota::From(0))?;
    let heads = b.sort_suffixes(packed, n, &mut pos, KEY_CHARS)?;
    let mut rank: B::Buf<W> = b.head_index(&heads, 1)?;
    b.segmented_scan(&mut rank, &heads)?;
    let mut isa: B::Buf<W> = b.zeros(n as usize)?;
    b.scatter(&rank, &pos, &mut isa)?;
    let keep = b.unsorted(&heads)?;
    drop(heads);
    let mut work_pos = b.compact(&pos, &keep)?;
    let mut work_slot: B::Buf<W> = b.compact_index(&keep)?;
    let mut work_rank = b.compact(&rank, &keep)?;
    drop((rank, keep));
    let mut sa = pos;
    let mut h = u64::from(KEY_CHARS);
    log(&stats(b, 0, h, &work_rank, t)?);

    let mut round = 1;
    while b.len(&work_pos) > 0 {
        let t = Instant::now();
        let len = b.len(&work_pos);
        let mut key = b.fetch(&isa, L, &work_pos, h, n)?;
        let gheads = b.head_flags(&work_rank, None)?;
        let lens: B::Buf<W> = b.segment_lengths(&gheads)?;
        let classes = [
            (2, SMALL, How::Blocks(SMALL_BLOCK)),
            (SMALL + 1, MEDIUM, How::Blocks(MEDIUM_BLOCK)),
            (MEDIUM + 1, u64::MAX, How::Radix),
        ];
        for (lo, hi, how) in classes {
            let f = b.in_range(&lens, lo, hi)?;
            let c = b.count(&f)? as usize;
            if c == 0 {
                continue;
            }
            let idx: B::Buf<W> = b.compact(&b.iota(len, Iota::From(0))?, &f)?;
            drop(f);
            let mut ck = b.gather(&key, &idx)?;
            let mut cp = b.gather(&work_pos, &idx)?;
            match how {
                How::Blocks(block) => {
                    let ch = b.gather(&gheads, &idx)?;
                    b.segmented_sort(&ch, &mut ck, &mut cp, block)?;
                }
                How::Radix => {
                    let cr = b.gather(&work_rank, &idx)?;
                    let mut perm: B::Buf<W> = b.iota(c, Iota::From(0))?;
                    let mut k = b.copy(&ck)?;
                    b.radix_sort_pairs(&mut k, &mut perm, rbits)?;
                    drop(k);
                    let mut r = b.gather(&cr, &perm)?;
                    b.radix_sort_pairs(&mut r, &mut perm, rbits)?;
                    ck = b.gather(&ck, &perm)?;
                    cp = b.gather(&cp, &perm)?;
                }
            }
            b.scatter(&ck, &idx, &mut key)?;
            b.scatter(&cp, &idx, &mut work_pos)?;
        }
        drop(lens);
        let nheads = b.head_flags(&key, Some(&gheads))?;
        drop((key, gheads));
        let mut nrank = b.head_values(&nheads, &work_slot, 1)?;
        b.segmented_scan(&mut nrank, &nheads)?;
        b.scatter(&nrank, &work_pos, &mut isa)?;
        b.scatter(&work_pos, &work_slot, &mut sa)?;
        let keep = b.unsorted(&nheads)?;
        work_pos = b.compact(&work_pos, &keep)?;
        work_slot = b.compact(&work_slot, &keep)?;
        work_rank = b.compact(&nrank, &keep)?;
        h *= 2;
        log(&stats(b, round, h, &work_rank, t)?);
        round += 1;
    }
    b.download(sa)
}

fn stats<B: Backend, W: Word>(
    b: &B,
    round: u32,
    h: u64,
    work_rank: &B::Buf<W>,
    t: Instant,
) -> Result<Round> {
    let unsorted = b.len(work_rank) as u64;
    let groups = if unsorted == 0 {
        0
    } else {
        b.count(&b.head_flags(work_rank, None)?)?
    };
    Ok(Round {
        algorithm: "ls",
        round,
        stage: if round == 0 { "sort" } else { "double" },
        h,
        unsorted,
        groups,
        seconds: t.elapsed().as_secs_f64(),
    })
}
