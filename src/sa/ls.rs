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

use super::doubling::Unsorted;
use super::steps::{Backend, Iota, RankLayout, Word, bits_for};
use super::{DataParallel, Round};
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
pub fn suffix_array<B: Backend, W: Word>(
    b: &B,
    packed: &B::Buf<u64>,
    n: u64,
    log: &mut dyn FnMut(&Round),
) -> Result<B::Buf<W>> {
    let rbits = bits_for(n + 1);

    let t = Instant::now();
    let mut pos: B::Buf<W> = b.iota(n as usize, Iota::From(0))?;
    let heads = b.sort_suffixes(packed, n, &mut pos, KEY_CHARS)?;
    let mut isa: B::Buf<W> = b.zeros(n as usize)?;
    let mut work = Unsorted::first(b, &pos, heads, L, &mut isa)?;
    let mut sa = pos;
    let mut h = u64::from(KEY_CHARS);
    log(&work.stats(b, DataParallel::Ls, 0, h, t)?);

    let mut round = 1;
    while b.len(&work.pos) > 0 {
        let t = Instant::now();

        let mut key = b.fetch(&isa, L, &work.pos, h, n)?;
        let gheads = b.head_flags(&work.rank, None)?;
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
            let idx: B::Buf<W> = b.compact_index(&f)?;
            drop(f);
            let mut ck = b.gather(&key, &idx)?;
            let mut cp = b.gather(&work.pos, &idx)?;
            match how {
                How::Blocks(block) => {
                    let ch = b.gather(&gheads, &idx)?;
                    b.segmented_sort(&ch, &mut ck, &mut cp, block)?;
                }
                How::Radix => {
                    let cr = b.gather(&work.rank, &idx)?;
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
            b.scatter(&cp, &idx, &mut work.pos)?;
        }
        drop(lens);
        work = work.refine(b, key, gheads, L, &mut isa, &mut sa)?;
        h *= 2;
        log(&work.stats(b, DataParallel::Ls, round, h, t)?);
        round += 1;
    }
    Ok(sa)
}
