//! `--sa hybrid`: spd-SA of Wang, Baxter & Owens (2015) — the skew split with
//! prefix doubling in place of the recursion.
//!
//! 1. The suffixes at `p % 3 != 0` ("S12") are radix sorted by their first
//!    [`KEY_CHARS`] characters and ranked (rank = 1 + the slot of the first
//!    suffix of its group, the Larsson–Sadakane convention).
//! 2. Prefix doubling over S12: every round re-sorts the unsorted groups by
//!    the rank of the suffix `h` further on (a segmented sort; `h` stays a
//!    multiple of 3 so that suffix is in S12 too), re-ranks them, and
//!    compacts away every suffix now alone in its group, until none is left
//!    — or until the doubling stalls ([`stalled`]: on a run of one base, a
//!    tandem repeat or a Fibonacci word a round settles only the suffixes
//!    near the end, for `log2(n / 27)` rounds). Then the names of the groups
//!    become a string that skew's recursion sorts (`sort_by_recursion`;
//!    why that is the S12 order is in docs/ALGORITHMS.md, hybrid step 2′).
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
use super::skew;
use super::steps::{Backend, Chars, Iota, Order, RankLayout, Word};
use super::{DataParallel, Round, Stage};
use crate::error::Result;

/// Characters in the first sort key.
pub const KEY_CHARS: u32 = 27;

/// Block size of the segmented sort.
pub const BLOCK: usize = 4096;

/// The doubling hands S12 to the skew recursion ([`stalled`]) only while
/// more than `1 / STALL_SHARE` of S12 is unsorted: below that, even a round
/// that settles nothing costs less than an eighth of one over all of S12.
pub const STALL_SHARE: u64 = 8;

/// Where the doubling keeps its ranks (a rank per S12 suffix).
const L: RankLayout = RankLayout::Interleaved;

/// The suffix array of the text of `n >= 2` bases packed by
/// [`Backend::pack_text`].
pub fn build<B: Backend, W: Word>(
    b: &B,
    packed: &B::Buf<u64>,
    n: u64,
    log: &mut dyn FnMut(&Round),
) -> Result<B::Buf<W>> {
    // 1.-2. S12 in suffix order, with ranks.
    let s12 = sort_s12(b, packed, n, log)?;

    // 3. Induce S0 from the S12 order.
    let t = Instant::now();
    let sa12 = &s12.sa12;
    let mut s0 = b.compact(sa12, &b.mod3_is(sa12, 1)?)?;
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
        rank: &s12.rank,
        layout: s12.layout,
    };
    let sa = b.merge(&s0, sa12, &order)?;
    b.finish()?;
    log(&Round {
        algorithm: DataParallel::Hybrid,
        round: s12.round,
        stage: Stage::Merge,
        h: s12.h,
        unsorted: 0,
        groups: 0,
        seconds: t.elapsed().as_secs_f64(),
    });
    Ok(sa)
}

/// S12 sorted, what steps 3 and 4 need.
struct SortedS12<B: Backend, W: Word> {
    /// The positions `p % 3 != 0` in suffix order.
    sa12: B::Buf<W>,
    /// Their ranks (distinct, in suffix order), stored by `layout`.
    rank: B::Buf<W>,
    layout: RankLayout,
    /// The next `--stats` round and the `h` of the last prefix sort.
    round: u32,
    h: u64,
}

/// Steps 1 and 2: S12 sorted by [`KEY_CHARS`] characters, then by prefix
/// doubling until it is sorted or the doubling stalls ([`stalled`]), in
/// which case the skew recursion finishes it ([`sort_by_recursion`]).
fn sort_s12<B: Backend, W: Word>(
    b: &B,
    packed: &B::Buf<u64>,
    n: u64,
    log: &mut dyn FnMut(&Round),
) -> Result<SortedS12<B, W>> {
    let m = (n - n.div_ceil(3)) as usize;
    let t = Instant::now();
    let mut sa12: B::Buf<W> = b.iota(m, Iota::Mod3NonZero)?;
    let heads = b.sort_suffixes(packed, n, &mut sa12, KEY_CHARS)?;
    let mut h = u64::from(KEY_CHARS);
    let left = b.count(&b.unsorted(&heads)?)?;
    if stalled(m as u64, left, m as u64) {
        // Straight to the recursion: no ranks, no unsorted lists to build.
        let groups = b.count(&heads)?;
        log(&Round {
            algorithm: DataParallel::Hybrid,
            round: 0,
            stage: Stage::Sort,
            h,
            unsorted: left,
            // Every group but the m - left singletons.
            groups: groups - (m as u64 - left),
            seconds: t.elapsed().as_secs_f64(),
        });
        return sort_by_recursion(b, sa12, heads, groups, n, h, 1, log);
    }
    let mut isa: B::Buf<W> = b.zeros(m)?;
    let mut work = Unsorted::first(b, &sa12, heads, L, &mut isa)?;
    log(&work.stats(b, DataParallel::Hybrid, 0, h, t)?);

    let mut round = 1;
    let mut before = m as u64;
    while b.len(&work.pos) > 0 {
        let left = b.len(&work.pos) as u64;
        if stalled(before, left, m as u64) {
            drop(work);
            // The groups of the h-prefixes, from their ranks in S12 order.
            let heads = b.head_flags(&b.fetch(&isa, L, &sa12, 0, n)?, None)?;
            drop(isa);
            let groups = b.count(&heads)?;
            return sort_by_recursion(b, sa12, heads, groups, n, h, round, log);
        }
        before = left;
        let t = Instant::now();
        let mut key = b.fetch(&isa, L, &work.pos, h, n)?;
        let gheads = b.head_flags(&work.rank, None)?;
        b.segmented_sort(&gheads, &mut key, &mut work.pos, BLOCK)?;
        work = work.refine(b, key, gheads, L, &mut isa, &mut sa12)?;
        h *= 2;
        log(&work.stats(b, DataParallel::Hybrid, round, h, t)?);
        round += 1;
    }
    Ok(SortedS12 {
        sa12,
        rank: isa,
        layout: L,
        round,
        h,
    })
}

/// Whether the doubling has stalled: the last round (or the first sort, with
/// `before` all `m` suffixes of S12) left `left` suffixes unsorted, more than
/// half of the `before` it started with and more than `m / STALL_SHARE`.
/// On a run of one base, a tandem repeat or a Fibonacci word every round
/// settles only the suffixes within `h` of the end (or of the repeat's
/// end), so the doubling would go on for `log2(n / 27)` rounds over nearly
/// all of S12; the recursion costs a few passes over S12 whatever the text.
/// A genome's repeats leave a small share unsorted, which the doubling
/// finishes in a few cheap rounds.
pub fn stalled(before: u64, left: u64, m: u64) -> bool {
    2 * left > before && left > m / STALL_SHARE
}

/// The Kärkkäinen–Sanders layout of S12 (the mod-1 positions, then the
/// mod-2 ones) of a text of `n` bases, with no dummy: `(n + 1) / 3` mod-1
/// slots.
fn split(n: u64) -> RankLayout {
    RankLayout::Split { n0: (n + 1) / 3 }
}

/// S12 sorted by the skew recursion, from `sa12`, S12 in the order of its
/// `h`-character prefixes, and `heads`, the first of each group of equal
/// prefixes (`groups` of them); the ranks come out in the [`split`] layout.
///
/// The reduced string is the group number of each S12 suffix, the mod-1
/// positions in text order and then the mod-2 ones. As `h` is a multiple of
/// 3, the names of `p, p + 3, p + 6, ...` spell the suffix at `p` in
/// overlapping `h`-character pieces: the first two that differ decide the
/// order, so the suffixes of the reduced string are in the order of the
/// text suffixes they start. A comparison never runs from the mod-1 half
/// into the mod-2 half: the last mod-1 position is within 3 of the end,
/// shorter than `h`, so its name is unique (the key of the first sort holds
/// the length of a suffix shorter than [`KEY_CHARS`]); so is the last mod-2
/// name, so no comparison reaches the end either. That is why, unlike
/// skew's own levels, no dummy is needed whatever `n % 3`.
#[allow(clippy::too_many_arguments)]
fn sort_by_recursion<B: Backend, W: Word>(
    b: &B,
    sa12: B::Buf<W>,
    heads: B::Buf<u8>,
    groups: u64,
    n: u64,
    h: u64,
    round: u32,
    log: &mut dyn FnMut(&Round),
) -> Result<SortedS12<B, W>> {
    let m = b.len(&sa12);
    let layout = split(n);
    let RankLayout::Split { n0: n1 } = layout else {
        unreachable!("split() is a Split layout")
    };
    // Dense names 1..=groups: fewer radix bits in the recursion's sorts.
    let mut names: B::Buf<W> = b.widen(&heads)?;
    b.exclusive_scan(&mut names)?;
    b.add_flags(&mut names, &heads)?;
    drop(heads);
    let mut s12: B::Buf<W> = b.zeros(m)?;
    b.scatter_slots(&names, &sa12, layout, &mut s12)?;
    drop((names, sa12));
    // Skew's rows, as hybrid rounds from `round` on, with the characters a
    // level's triple spans: a name spans h, a level-d name 3^d of the
    // names before it, 3 * 3^d characters apart.
    let mut sub_log = |r: &Round| {
        log(&Round {
            algorithm: DataParallel::Hybrid,
            round: round + r.round,
            h: h.saturating_add(3u64.saturating_mul(r.h.saturating_sub(1))),
            ..r.clone()
        })
    };
    let sub = skew::level(b, &s12, m as u64, groups, 0, &mut sub_log)?;
    drop(s12);
    let mut rank: B::Buf<W> = b.zeros(m)?;
    b.scatter(&b.iota(m, Iota::From(1))?, &sub, &mut rank)?;
    Ok(SortedS12 {
        sa12: b.split_positions(&sub, n1)?,
        rank,
        layout,
        round,
        h,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sa::cpu::Cpu;
    use crate::sa::naive;

    /// A xorshift stream of bases.
    fn random(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 4) as u8
            })
            .collect()
    }

    fn fibonacci(len: usize) -> Vec<u8> {
        let (mut prev, mut cur) = (vec![0u8], vec![0u8, 1]);
        while cur.len() < len {
            let next = [&cur[..], &prev[..]].concat();
            prev = std::mem::replace(&mut cur, next);
        }
        cur.truncate(len);
        cur
    }

    /// The hybrid's suffix array of `text` (checked against the brute-force
    /// sort, in 32 and 64 bits) and the round at which it switched to the
    /// recursion, if it did.
    fn switch_round(text: &[u8]) -> Option<u32> {
        let b = Cpu;
        let n = text.len() as u64;
        let packed = b.pack_text(text).unwrap();
        let mut rows = Vec::new();
        let sa: Vec<u32> = build(&b, &packed, n, &mut |r| rows.push(r.clone())).unwrap();
        let wide: Vec<u64> = build(&b, &packed, n, &mut |_| {}).unwrap();
        let want = naive(text);
        let sa: Vec<u64> = sa.into_iter().map(u64::from).collect();
        assert!(sa == want, "n = {n}: {rows:#?}");
        assert!(wide == want, "n = {n} (u64)");
        let first = rows
            .iter()
            .position(|r| matches!(r.stage, Stage::Recurse | Stage::Unique))?;
        // The switch comes after the round that stalled, and is the next.
        let last = &rows[first - 1];
        assert!(matches!(last.stage, Stage::Sort | Stage::Double));
        assert_eq!(rows[first].round, last.round + 1, "{rows:#?}");
        Some(rows[first].round)
    }

    #[test]
    fn one_base_switches_after_the_first_sort() {
        for n in 2..=200 {
            let got = switch_round(&vec![2; n]);
            // Up to 27 + 27/2 bases, most suffixes are within 27 of the end.
            if n >= 60 {
                assert_eq!(got, Some(1), "n = {n}");
            }
        }
        for n in [3000, 3001, 3002] {
            assert_eq!(switch_round(&vec![0; n]), Some(1), "n = {n}");
        }
    }

    #[test]
    fn fibonacci_and_tandem_repeats_switch() {
        for n in [610, 986, 987, 988, 4180, 4181, 4182] {
            assert_eq!(switch_round(&fibonacci(n)), Some(1), "Fibonacci, n = {n}");
        }
        for unit in [1, 5, 27, 50, 100] {
            let u = random(unit, unit as u64);
            for n in [3000, 3001, 3002] {
                let text: Vec<u8> = u.iter().copied().cycle().take(n).collect();
                assert_eq!(switch_round(&text), Some(1), "unit {unit}, n = {n}");
            }
        }
    }

    /// A random stretch, copies of a 50-base block each followed by 30
    /// random bases (sorted by 54 characters), then a run of A: the first
    /// sort leaves under half of S12 unsorted, the first doubling round more
    /// than halves that, the second settles almost nothing.
    #[test]
    fn switch_after_doubling_rounds() {
        let block = random(50, 7);
        for n in [6000, 6001, 6002] {
            let noise = random(n, 11);
            let mut text = noise[..n / 5].to_vec();
            for gap in noise[n / 5..].chunks(30) {
                if text.len() >= n * 83 / 100 {
                    break;
                }
                text.extend(&block);
                text.extend(gap);
            }
            text.resize(n, 0);
            assert_eq!(switch_round(&text), Some(3), "n = {n}");
        }
        // Random texts never stall.
        for n in [5000, 5001, 5002] {
            assert_eq!(switch_round(&random(n, n as u64)), None, "n = {n}");
        }
    }

    #[test]
    fn stall_criterion() {
        let m = 800;
        // The first sort: more than half unsorted.
        assert!(stalled(m, 401, m));
        assert!(!stalled(m, 400, m));
        // Later: not halved, and above an eighth.
        assert!(stalled(300, 151, m));
        assert!(!stalled(300, 150, m));
        assert!(!stalled(100, 100, m));
        assert!(stalled(101, 101, m));
    }
}
