//! `--sa skew`: wbo-skew, the GPU DC3 of Wang, Baxter & Owens (2015), after
//! Kärkkäinen & Sanders.
//!
//! Each level radix sorts the suffixes `p % 3 != 0` (plus a dummy at `n`
//! when `n % 3 == 1`, which keeps the mod-1 and mod-2 halves apart) by their
//! first three characters: by one key that packs the three (when `3
//! bits(sigma) <= 64`; a key as wide as the positions when it fits that),
//! else in three stable passes. Head flags mark distinct
//! triples; only when they are not all distinct are names computed (the
//! prefix sum) and the level recursed on the string of names. The suffixes
//! `p % 3 == 0` are then ordered without a second sort by triple: their order
//! by `rank[p+1]` is the mod-1 order, taken by compaction, and one stable
//! pass by `c[p]` finishes it. Merge path with the skew comparison joins
//! the two lists.

use std::time::Instant;

use super::steps::{Backend, Chars, Iota, Order, RankLayout, Word, bits_for};
use super::{DataParallel, Round, Stage};
use crate::error::Result;

/// The suffix array of the text of `n >= 2` bases packed by
/// [`Backend::pack_text`].
pub fn suffix_array<B: Backend, W: Word>(
    b: &B,
    packed: &B::Buf<u64>,
    n: u64,
    log: &mut dyn FnMut(&Round),
) -> Result<B::Buf<W>> {
    let s = b.symbols::<W>(packed, n)?;
    let sa = level(b, &s, n, 4, 0, log)?;
    Ok(sa)
}

/// Sorts `pos` by the triples of `s` (symbols of `sbits` bits) at its
/// positions, packed in one key of `K` ([`Backend::triple_keys`]), and
/// returns the head flags of the distinct triples.
fn sort_triples<B: Backend, K: Word, W: Word>(
    b: &B,
    s: &B::Buf<W>,
    pos: &mut B::Buf<W>,
    n: u64,
    sbits: u32,
) -> Result<B::Buf<u8>> {
    let mut k: B::Buf<K> = b.triple_keys(s, pos, n, sbits)?;
    b.radix_sort_pairs(&mut k, pos, 3 * sbits)?;
    b.head_flags(&k, None)
}

/// The suffix array of `s` (symbols `1..=sigma`, 0 past the end).
pub(super) fn level<B: Backend, W: Word>(
    b: &B,
    s: &B::Buf<W>,
    n: u64,
    sigma: u64,
    depth: u32,
    log: &mut dyn FnMut(&Round),
) -> Result<B::Buf<W>> {
    if n <= 1 {
        return b.iota(n as usize, Iota::From(0));
    }
    let t = Instant::now();
    let sbits = bits_for(sigma);
    let (n0, n1, n2) = (n.div_ceil(3), (n + 1) / 3, n / 3);
    let n02 = (n0 + n2) as usize;
    let layout = RankLayout::Split { n0 };
    let id = RankLayout::Identity;

    // Sort S12 (with the dummy) by triples.
    let mut pos: B::Buf<W> = b.iota(n02, Iota::Mod3NonZero)?;
    let heads = if 3 * sbits <= W::BITS {
        // The three symbols in one key, one fetch and one sort; a key no
        // wider than the positions keeps the memory of the three passes.
        sort_triples::<B, W, W>(b, s, &mut pos, n, sbits)?
    } else if 3 * sbits <= 64 {
        sort_triples::<B, u64, W>(b, s, &mut pos, n, sbits)?
    } else {
        // Three stable passes, last character first.
        for d in [2, 1] {
            let mut k = b.fetch(s, id, &pos, d, n)?;
            b.radix_sort_pairs(&mut k, &mut pos, sbits)?;
        }
        // The last pass's keys are the first characters, in the sorted order.
        let mut k = b.fetch(s, id, &pos, 0, n)?;
        b.radix_sort_pairs(&mut k, &mut pos, sbits)?;
        let mut heads = b.head_flags(&k, None)?;
        drop(k);
        for d in [1, 2] {
            heads = b.head_flags(&b.fetch(s, id, &pos, d, n)?, Some(&heads))?;
        }
        heads
    };
    let distinct = b.count(&heads)?;
    let unique = distinct == n02 as u64;
    log(&Round {
        algorithm: DataParallel::Skew,
        round: depth,
        stage: if unique {
            Stage::Unique
        } else {
            Stage::Recurse
        },
        h: 3u64.saturating_pow(depth + 1),
        unsorted: if unique { 0 } else { n02 as u64 },
        groups: distinct,
        seconds: t.elapsed().as_secs_f64(),
    });
    let mut rank: B::Buf<W>;
    let sa12 = if unique {
        rank = b.zeros(n02)?;
        // Ranks are the sorted order: no prefix sum, no recursion.
        let r = b.iota(n02, Iota::From(1))?;
        b.scatter_slots(&r, &pos, layout, &mut rank)?;
        pos
    } else {
        let mut names: B::Buf<W> = b.widen(&heads)?;
        b.exclusive_scan(&mut names)?;
        b.add_flags(&mut names, &heads)?;
        drop(heads);
        let mut s12: B::Buf<W> = b.zeros(n02)?;
        b.scatter_slots(&names, &pos, layout, &mut s12)?;
        drop((names, pos));
        let sub = level(b, &s12, n02 as u64, distinct, depth + 1, log)?;
        drop(s12);
        rank = b.zeros(n02)?;
        let r = b.iota(n02, Iota::From(1))?;
        b.scatter(&r, &sub, &mut rank)?;
        b.split_positions(&sub, n0)?
    };

    // S0 from the mod-1 order (the dummy at n gives p = n - 1), then by c[p].
    let t = Instant::now();
    let mut s0 = b.compact(&sa12, &b.mod3_is(&sa12, 1)?)?;
    b.sub_const(&mut s0, 1)?;
    let mut k = b.fetch(s, id, &s0, 0, n)?;
    b.radix_sort_pairs(&mut k, &mut s0, sbits)?;
    drop(k);
    let sa12 = if n0 > n1 {
        b.compact(&sa12, &b.in_range(&sa12, 0, n - 1)?)?
    } else {
        sa12
    };
    let order = Order::Dc3 {
        text: Chars::Symbols(s),
        n,
        rank: &rank,
        layout,
    };
    let sa = b.merge(&s0, &sa12, &order)?;
    b.finish()?;
    log(&Round {
        algorithm: DataParallel::Skew,
        round: depth,
        stage: Stage::Merge,
        h: 3u64.saturating_pow(depth + 1),
        unsorted: 0,
        groups: 0,
        seconds: t.elapsed().as_secs_f64(),
    });
    Ok(sa)
}
