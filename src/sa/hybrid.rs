//! `--sa hybrid`: spd-SA of Wang, Baxter & Owens (2015) — the skew split with
//! prefix doubling in place of the recursion.
//!
//! 1. The suffixes at `p % 3 != 0` ("S12") are radix sorted by their first
//!    [`KEY_CHARS`] characters and ranked (rank = 1 + the slot of the first
//!    suffix of its group, the Larsson–Sadakane convention).
//! 2. Prefix doubling over S12: every round re-sorts the unsorted groups by
//!    the rank of the suffix `h` further on (a segmented sort; `h` stays a
//!    multiple of 3 so that suffix is in S12 too), re-ranks them, and
//!    compacts away every suffix now alone in its group, until none is left.
//! 3. The suffixes at `p % 3 == 0` are induced: their order by
//!    `(c[p], rank[p+1])` is the S12 order of `p + 1` (compaction), stably
//!    sorted by `c[p]` (one 3-bit radix pass).
//! 4. The two lists are merged by merge path with the skew comparison.
//!
//! Why 27 characters: the paper packs 3 byte-characters into a key. DNA is 2
//! bits a base, so a `u64` holds 27 bases (a multiple of 3, as `h` must be)
//! and 5 bits of "length if shorter than 27" that keep suffixes near the end
//! of the text exactly ordered without a sentinel symbol. 27 bases make most
//! suffixes of a genome unique before any doubling round (a random 27-mer
//! repeats by chance once in 4^27 ≈ 1.8e16), so only repeats go on to prefix
//! doubling; 12 bases in a `u32` key would leave nearly every suffix of a
//! 60 Mbp chromosome unsorted (4^12 ≈ 1.7e7 < 4e7 suffixes).

use std::time::Instant;

use super::doubling::Unsorted;
use super::steps::{Backend, Chars, Iota, Order, RankLayout, Word};
use super::{DataParallel, Round, Stage};
use crate::error::Result;

/// Characters in the first sort key.
pub const KEY_CHARS: u32 = 27;

/// Block size of the segmented sort.
pub const BLOCK: usize = 4096;

const L: RankLayout = RankLayout::Interleaved;

/// The suffix array of the text of `n >= 2` bases packed by
/// [`Backend::pack_text`].
pub fn build<B: Backend, W: Word>(
    b: &B,
    packed: &B::Buf<u64>,
    n: u64,
    log: &mut dyn FnMut(&Round),
) -> Result<B::Buf<W>> {
    let m = (n - n.div_ceil(3)) as usize;

    // 1. Sort S12 by its first KEY_CHARS characters.
    let t = Instant::now();
    let mut pos: B::Buf<W> = b.iota(m, Iota::Mod3NonZero)?;
    let heads = b.sort_suffixes(packed, n, &mut pos, KEY_CHARS)?;
    let mut isa: B::Buf<W> = b.zeros(m)?;
    let mut work = Unsorted::first(b, &pos, heads, L, &mut isa)?;
    let mut sa12 = pos;
    let mut h = u64::from(KEY_CHARS);
    log(&work.stats(b, DataParallel::Hybrid, 0, h, t)?);

    // 2. Prefix doubling over the unsorted groups.
    let mut round = 1;
    while b.len(&work.pos) > 0 {
        let t = Instant::now();
        let mut key = b.fetch(&isa, L, &work.pos, h, n)?;
        let gheads = b.head_flags(&work.rank, None)?;
        b.segmented_sort(&gheads, &mut key, &mut work.pos, BLOCK)?;
        work = work.refine(b, key, gheads, L, &mut isa, &mut sa12)?;
        h *= 2;
        log(&work.stats(b, DataParallel::Hybrid, round, h, t)?);
        round += 1;
    }
    drop(work);

    // 3. Induce S0 from the S12 order.
    let t = Instant::now();
    let mut s0 = b.compact(&sa12, &b.mod3_is(&sa12, 1)?)?;
    b.sub_const(&mut s0, 1)?;
    if n % 3 == 1 {
        // p = n - 1 is followed by the empty suffix: first among its letter.
        let last = b.upload(vec![W::from_u64(n - 1)])?;
        s0 = b.concat(&last, &s0)?;
    }
    let mut c: B::Buf<u32> = b.text_keys(packed, n, &s0, 1)?;
    b.radix_sort_pairs(&mut c, &mut s0, 3)?;
    drop(c);

    // 4. Merge.
    let order = Order::Dc3 {
        text: Chars::Packed(packed),
        n,
        rank: &isa,
        layout: L,
    };
    let sa = b.merge(&s0, &sa12, &order)?;
    b.finish()?;
    log(&Round {
        algorithm: DataParallel::Hybrid,
        round,
        stage: Stage::Merge,
        h,
        unsorted: 0,
        groups: 0,
        seconds: t.elapsed().as_secs_f64(),
    });
    Ok(sa)
}
