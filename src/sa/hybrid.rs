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
//!    — or until the doubling stalls ([`switch_now`]: on a run of one base, a
//!    tandem repeat or a Fibonacci word a round settles only the suffixes
//!    near the end, for `log2(n / 27)` rounds). Then the names of the groups
//!    become a string that skew's recursion sorts (`sort_by_recursion`;
//!    why that is the S12 order is in docs/ALGORITHMS.md, hybrid step 2′):
//!    of all of S12 when the first sort stalls, of the suffixes still tied
//!    and the chains that spell them when a round does
//!    (`finish_by_recursion`: a satellite array inside a genome).
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
use super::steps::{Backend, Chars, Iota, Order, RankLayout, Word, bits_for};
use super::{DataParallel, Round, Stage};
use crate::error::Result;

/// Characters in the first sort key.
pub const KEY_CHARS: u32 = 27;

/// Block size of the segmented sort.
pub const BLOCK: usize = 4096;

/// Where the doubling keeps its ranks (a rank per S12 suffix).
const L: RankLayout = RankLayout::Interleaved;

/// The suffix array of the text of `n >= 2` bases packed by
/// [`Backend::pack_text`].
pub fn suffix_array<B: Backend, W: Word>(
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
/// doubling until it is sorted or the doubling stalls ([`switch_now`]), in
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
    let groups = b.count(&heads)?;
    // Every group but the m - left singletons.
    let first = Tied {
        unsorted: left,
        groups: groups - (m as u64 - left),
    };
    if switch_now(m as u64, &[first]) {
        // Straight to the recursion: no ranks, no unsorted lists to build.
        log(&Round {
            algorithm: DataParallel::Hybrid,
            round: 0,
            stage: Stage::Sort,
            h,
            unsorted: first.unsorted,
            groups: first.groups,
            seconds: t.elapsed().as_secs_f64(),
        });
        return sort_by_recursion(b, sa12, heads, groups, n, h, 1, log);
    }
    let mut isa: B::Buf<W> = b.zeros(m)?;
    let mut work = Unsorted::first(b, &sa12, heads, L, &mut isa)?;
    let row = work.stats(b, DataParallel::Hybrid, 0, h, t)?;
    log(&row);
    let mut tied = vec![Tied::from(&row)];

    let mut round = 1;
    while b.len(&work.pos) > 0 {
        if switch_now(m as u64, &tied) {
            return finish_by_recursion(b, sa12, isa, work, n, h, round, log);
        }
        let t = Instant::now();
        let mut key = b.fetch(&isa, L, &work.pos, h, n)?;
        let gheads = b.head_flags(&work.rank, None)?;
        b.segmented_sort(&gheads, &mut key, &mut work.pos, BLOCK)?;
        work = work.refine(b, key, gheads, L, &mut isa, &mut sa12)?;
        h *= 2;
        let row = work.stats(b, DataParallel::Hybrid, round, h, t)?;
        log(&row);
        tied.push(Tied::from(&row));
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

/// What the first sort or a doubling round left: the suffixes still tied
/// and the groups they form (a `--stats` row's `unsorted` and `groups`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tied {
    pub unsorted: u64,
    pub groups: u64,
}

impl From<&Round> for Tied {
    fn from(r: &Round) -> Tied {
        Tied {
            unsorted: r.unsorted,
            groups: r.groups,
        }
    }
}

/// Whether the doubling hands over to skew's recursion now, after the
/// rounds that left `after` (`after[0]`: the first sort; `m`: the
/// suffixes of S12).
///
/// * After the first sort: when more than half of S12 is tied. On a run of
///   one base, a tandem repeat or a Fibonacci word every round settles only
///   the suffixes within `h` of the end (or of the repeat's end), so the
///   doubling would go on for `log2(n / 27)` rounds over nearly all of S12;
///   the recursion sorts it in a few passes whatever the text
///   ([`sort_by_recursion`]).
/// * After doubling rounds: when the last two have both *stalled*, each
///   settling less than a quarter of the suffixes tied before it while
///   their groups grew by less than a quarter. An exact satellite array
///   inside a genome does that to its own suffixes for `log2` of its length
///   rounds (its groups never split); only they are then recursed on
///   ([`finish_by_recursion`]), at what two to six doubling rounds over them
///   cost (docs/BENCHMARKS.md). A diverged array (copies 99.9% alike, as in
///   the T2T human assembly) settles little per round too, but its groups
///   about double every round and the doubling finishes it in a few more,
///   for less than the recursion. The other repeats of a genome settle more
///   than a quarter of what is left in every round.
pub fn switch_now(m: u64, after: &[Tied]) -> bool {
    let stalled =
        |a: &Tied, b: &Tied| 4 * b.unsorted > 3 * a.unsorted && 4 * b.groups < 5 * a.groups;
    match after {
        [first] => 2 * first.unsorted > m,
        [.., a, b, c] => stalled(a, b) && stalled(b, c),
        _ => false,
    }
}

/// S12 sorted by the skew recursion after the doubling stalled in a round:
/// `sa12` and `isa` as the rounds left them (every suffix ranked by its
/// `h`-character prefix, the singletons in their final slots), `work` the
/// `u` suffixes still tied.
///
/// Only the tied suffixes `P` and the chains that spell them go to the
/// recursion, not all of S12: a genome's satellite array stalls the
/// doubling over its own suffixes while the rest of S12 is long sorted.
/// The reduced string lists, in the [`split`] layout's order, the suffixes
/// of `P` and each one's successor 3 bases on, named by their ranks: the
/// names of `p, p + 3, p + 6, ...` (as in [`sort_by_recursion`]) until the
/// first suffix not in `P`, which is sorted, so its name is unique and ends
/// every comparison that reaches it. The recursion's order, restricted to
/// `P`, is the order of the tied groups' suffixes in `sa12`. Every step here
/// is over `O(u)` elements, none over S12: on this path the doubling rounds
/// cost `O(u)` too. When more than a quarter of S12 is tied (the string
/// could be more than half of it), the whole of S12 goes to
/// [`sort_by_recursion`] instead: as much work, less memory.
#[allow(clippy::too_many_arguments)]
fn finish_by_recursion<B: Backend, W: Word>(
    b: &B,
    mut sa12: B::Buf<W>,
    mut isa: B::Buf<W>,
    work: Unsorted<B, W>,
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
    let u = b.len(&work.pos);
    if 4 * u > m {
        drop(work);
        // The groups of the h-prefixes, from their ranks in S12 order.
        let heads = b.head_flags(&b.fetch(&isa, L, &sa12, 0, n)?, None)?;
        drop(isa);
        let groups = b.count(&heads)?;
        return sort_by_recursion(b, sa12, heads, groups, n, h, round, log);
    }
    let Unsorted { pos, slot, rank } = work;
    drop(rank);
    // The kept slots: those of P, and in the split layout the suffix 3
    // bases after `p` has the next slot (a suffix of P is not within 27 of
    // the end, so it has one). Sorted by slot with a flag, 1 for P; a slot
    // in both lists keeps its first copy, P's (the sort is stable).
    let of_p: B::Buf<W> = b.slots(&pos, layout)?;
    drop(pos);
    let mut after = b.copy(&of_p)?;
    // sub_const wraps: subtracting 2^64 - 1 adds 1.
    b.sub_const(&mut after, u64::MAX)?;
    let mut kslots = b.concat(&of_p, &after)?;
    drop((of_p, after));
    let mut flag = b.concat(&b.fill(u, W::from_u64(1))?, &b.fill(u, W::from_u64(0))?)?;
    b.radix_sort_pairs(&mut kslots, &mut flag, bits_for(m as u64))?;
    let first = b.head_flags(&kslots, None)?;
    let kslots = b.compact(&kslots, &first)?;
    let in_p = b.in_range(&b.compact(&flag, &first)?, 1, 1)?;
    drop((flag, first));
    let kept = b.len(&kslots) as u64;
    // The reduced string: the ranks of the kept suffixes, renamed densely
    // 1..=distinct by a sort (fewer radix bits in the recursion's sorts).
    let ranks = b.fetch(&isa, L, &b.split_positions(&kslots, n1)?, 0, n)?;
    let mut sorted = b.copy(&ranks)?;
    drop(ranks);
    let mut at: B::Buf<W> = b.iota(kept as usize, Iota::From(0))?;
    b.radix_sort_pairs(&mut sorted, &mut at, bits_for(m as u64 + 1))?;
    let heads = b.head_flags(&sorted, None)?;
    drop(sorted);
    let (dense, distinct) = names_of(b, heads)?;
    let mut names: B::Buf<W> = b.zeros(kept as usize)?;
    b.scatter(&dense, &at, &mut names)?;
    drop((dense, at));
    let sub = skew::level(b, &names, kept, distinct, 0, &mut skew_rows(log, round, h))?;
    drop(names);
    // Back to text positions in suffix order, those of P in their slots,
    // ranked slot + 1.
    let of_p = b.gather(&in_p, &sub)?;
    let sorted = b.gather(&kslots, &sub)?;
    drop((kslots, sub, in_p));
    let p = b.compact(&b.split_positions(&sorted, n1)?, &of_p)?;
    drop((sorted, of_p));
    debug_assert_eq!(b.len(&p), u);
    b.scatter(&p, &slot, &mut sa12)?;
    let mut ranks = slot;
    b.sub_const(&mut ranks, u64::MAX)?;
    b.scatter_slots(&ranks, &p, L, &mut isa)?;
    Ok(SortedS12 {
        sa12,
        rank: isa,
        layout: L,
        round,
        h,
    })
}

/// The names `1..=groups` of sorted elements, from the head flags of their
/// groups (`widen` + `exclusive_scan` + `add_flags`), and `groups`.
fn names_of<B: Backend, W: Word>(b: &B, heads: B::Buf<u8>) -> Result<(B::Buf<W>, u64)> {
    let mut names: B::Buf<W> = b.widen(&heads)?;
    let groups = b.exclusive_scan(&mut names)?.to_u64();
    b.add_flags(&mut names, &heads)?;
    Ok((names, groups))
}

/// Skew's `--stats` rows as hybrid rounds from `round` on, with the
/// characters a level's triple spans: a name spans `h`, a level-`d` name
/// `3^d` of the names before it, `3 · 3^d` characters apart.
fn skew_rows(log: &mut dyn FnMut(&Round), round: u32, h: u64) -> impl FnMut(&Round) + '_ {
    move |r: &Round| {
        log(&Round {
            algorithm: DataParallel::Hybrid,
            round: round + r.round,
            h: h.saturating_add(3u64.saturating_mul(r.h.saturating_sub(1))),
            ..r.clone()
        })
    }
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
    let (names, _) = names_of(b, heads)?;
    let mut s12: B::Buf<W> = b.zeros(m)?;
    b.scatter_slots(&names, &sa12, layout, &mut s12)?;
    drop((names, sa12));
    let sub = skew::level(b, &s12, m as u64, groups, 0, &mut skew_rows(log, round, h))?;
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
        switch(text).map(|(round, _)| round)
    }

    /// [`switch_round`] and the length of the string the recursion sorted
    /// (`2/3` of it is the first level's `unsorted`).
    fn switch(text: &[u8]) -> Option<(u32, u64)> {
        let b = Cpu;
        let n = text.len() as u64;
        let packed = b.pack_text(text).unwrap();
        let mut rows = Vec::new();
        let sa: Vec<u32> = suffix_array(&b, &packed, n, &mut |r| rows.push(r.clone())).unwrap();
        let wide: Vec<u64> = suffix_array(&b, &packed, n, &mut |_| {}).unwrap();
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
        Some((rows[first].round, rows[first].unsorted))
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
    /// than halves that, the second and third settle almost nothing (only
    /// the run of A is left, in groups that do not split).
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
            assert_eq!(switch_round(&text), Some(4), "n = {n}");
        }
        // Random texts never stall.
        for n in [5000, 5001, 5002] {
            assert_eq!(switch_round(&random(n, n as u64)), None, "n = {n}");
        }
    }

    /// Random text with exact tandem arrays in it, one running to the end
    /// of the text: the first round leaves the arrays' suffixes tied, and
    /// only they (with the chains that spell them) are recursed on.
    #[test]
    fn a_satellite_alone_is_recursed_on() {
        for (unit, at_end) in [
            (1, false),
            (10, false),
            (50, true),
            (171, false),
            (37, true),
        ] {
            let u = random(unit, 3 + unit as u64);
            for n in [9000, 9001, 9002] {
                // A tenth of the text: at most a quarter of S12 tied.
                let mut text = random(if at_end { n - n / 10 } else { n / 2 }, n as u64);
                text.extend(u.iter().copied().cycle().take(n / 10));
                text.extend(random(n - text.len(), 5));
                let (round, first) = switch(&text).expect("switched");
                let m = (n - n.div_ceil(3)) as u64;
                // Two rounds that settle next to nothing, then the switch.
                assert_eq!(round, 3, "unit {unit}, n = {n}");
                // 2/3 of a string of at most half of S12.
                assert!(first <= m / 3 + 1, "unit {unit}, n = {n}: {first} of {m}");
            }
        }
    }

    #[test]
    fn switch_criterion() {
        let t = |unsorted, groups| Tied { unsorted, groups };
        // The first sort: more than half of S12 tied.
        assert!(switch_now(800, &[t(401, 3)]));
        assert!(!switch_now(800, &[t(400, 3)]));
        // One doubling round is not enough to judge.
        assert!(!switch_now(800, &[t(400, 3), t(400, 3)]));
        // Two rounds that each settled under a quarter, groups grown under
        // a quarter.
        assert!(switch_now(800, &[t(400, 8), t(301, 9), t(226, 11)]));
        assert!(switch_now(
            800,
            &[t(9, 9), t(400, 8), t(301, 9), t(226, 11)]
        ));
        assert!(!switch_now(800, &[t(400, 8), t(300, 9), t(226, 11)]));
        assert!(!switch_now(800, &[t(400, 8), t(301, 9), t(225, 11)]));
        assert!(!switch_now(800, &[t(400, 8), t(301, 10), t(226, 11)]));
        assert!(!switch_now(800, &[t(400, 8), t(301, 9), t(226, 12)]));
    }
}
