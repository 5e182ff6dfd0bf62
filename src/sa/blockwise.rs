//! Blockwise suffix sorting in bounded memory (Kärkkäinen 2007, "Fast BWT in
//! small space by blockwise suffix sorting"; bowtie-build's `--bmax`/`--dcv`).
//! `fmalign index` uses it when the whole-text build does not fit the memory
//! limit ([`crate::index::bounded`]).
//!
//! **Method.**
//!
//! 1. A *difference cover* `D` of `Z_v` ([`cover`]): every `d` in `0..v` is
//!    `(a - b) mod v` for some `a, b` in `D`. For any two positions `i, j`
//!    there is a `k < v` ([`Cover::delta`]) with `i + k` and `j + k` both in
//!    the sample `{p : p mod v in D}`.
//! 2. The sampled suffixes are ranked exactly ([`DcSample`]): sorted by their
//!    first `v` characters, then refined by prefix doubling with steps
//!    `v, 2v, 4v, ...` (`p + h` is sampled when `p` is) until every rank is
//!    distinct. Ranks are `u32`, one per sample slot.
//! 3. Any two suffixes then compare in `O(v)` ([`DcSample::cmp`]): their first
//!    `delta(i, j)` characters, then the ranks of `i + delta` and `j + delta`.
//! 4. [`blockwise`] counts the suffixes per bucket of their first `k <= 10`
//!    bases (one pass over the text), groups consecutive buckets into parts
//!    of at most `max_part` suffixes, and for each part places its suffixes
//!    by bucket (one more pass), sorts each bucket word by word (32 bases a
//!    level, up to `v` bases: an MSD radix sort in cache) then by step 3,
//!    and hands the part to the caller in order. A bucket over `max_part`
//!    (all-A runs, satellites) is split by splitters drawn from its own
//!    suffixes (every `r`-th, sorted by step 3; pieces counted in one more
//!    pass), and a piece still over `max_part` is split again (at least two
//!    splitters, so every piece is smaller: this terminates for any
//!    `max_part >= 1`).
//!
//! The concatenation of the parts is exactly the suffix array libsais and
//! [`super::naive`] return (the end of the text sorts before every base),
//! whatever `v`, `max_part` and the number of threads: the splitters are
//! chosen by global indices over fixed chunks, and each part's order is a
//! total order.
//!
//! **Memory.** The packed text (`n / 4` bytes), the sample ranks
//! (`4 |D| / v` bytes per base: 0.33 at `v = 256`, 0.10 at `v = 4096` with
//! the covers of [`cover`]), the bucket counts ([`bucket_bytes`]), the
//! splitters (at most `max(1024, max_part)` positions) and one part
//! (`max_part` positions). While the sample is ranked, its order (4 bytes
//! per sampled suffix) and the (key, slot) pairs of its unsorted groups are
//! live as well. [`crate::index::bounded`] plans `v` and `max_part` from
//! these figures.
//!
//! **Who sorts the parts.** This module's own sort (above) is the CPU's;
//! [`blockwise_sorted_by`] hands each collected part to a [`PartSorter`]
//! instead, such as [`super::partsort::OnSteps`], the same sort written in
//! the steps of [`super::steps::Backend`] (a GPU, or the CPU backend that
//! tests it). The sample and the collecting passes stay on the CPU.
//! Samples of `2^32` slots or more are refused (a larger `v` samples fewer).

use std::cmp::Ordering;
use std::sync::OnceLock;

use rayon::prelude::*;

use super::Pos;
use super::cpu::shared::SharedSlice;
use super::steps::Elem;
use crate::dna::{PackedText, for_each_ahead};
use crate::error::{Error, Result};

/// Positions per chunk of a pass over the text. Fixed, so that the splitters
/// chosen do not depend on the number of threads.
const CHUNK: usize = 1 << 14;

/// Splitters a split may always draw (more when parts are larger: at most
/// `max_part`).
const SPLITTERS_MIN: usize = 1024;

/// Smallest and largest period accepted by [`cover`].
pub const V_MIN: usize = 4;
/// See [`V_MIN`].
pub const V_MAX: usize = 4096;

/// A difference cover of `Z_v` for `v` a power of two from 4 to 4096, sorted,
/// containing 0. Computed once per `v` (greedy: repeatedly add the residue
/// that covers the most differences not yet covered, the smallest on ties;
/// or the square grid `{0..m} ∪ m·{0..v/m}` with `m = 2^ceil(log2(v)/2)`
/// when that is smaller). Panics for other `v`. Sizes for `v` = 4, 8, ...,
/// 4096: 3, 4, 5, 7, 11, 15, 21, 31, 44, 66, 99 (`sqrt(1.5 v)`: 2.4 to 78;
/// Colbourn & Ling's construction, which Kärkkäinen and bowtie use, would
/// save up to a fifth).
pub fn cover(v: usize) -> Vec<usize> {
    assert!(
        v.is_power_of_two() && (V_MIN..=V_MAX).contains(&v),
        "difference cover period {v} is not a power of two from {V_MIN} to {V_MAX}"
    );
    static CACHE: [OnceLock<Vec<usize>>; 11] = [const { OnceLock::new() }; 11];
    CACHE[v.trailing_zeros() as usize - 2]
        .get_or_init(|| {
            let greedy = greedy_cover(v);
            let grid = grid_cover(v);
            if grid.len() < greedy.len() {
                grid
            } else {
                greedy
            }
        })
        .clone()
}

/// Greedy difference cover of `Z_v`.
fn greedy_cover(v: usize) -> Vec<usize> {
    let mask = v - 1;
    let mut d = vec![0usize];
    let mut member = vec![false; v];
    member[0] = true;
    let mut covered = vec![false; v];
    covered[0] = true;
    let mut left = v - 1;
    // stamp[x] == round: difference x already counted for this candidate.
    let mut stamp = vec![0usize; v];
    let mut round = 0;
    while left > 0 {
        let mut best = (0, 0);
        for (c, _) in member.iter().enumerate().skip(1).filter(|&(_, &m)| !m) {
            round += 1;
            let mut gain = 0;
            for &a in &d {
                for x in [(c + v - a) & mask, (a + v - c) & mask] {
                    if !covered[x] && stamp[x] != round {
                        stamp[x] = round;
                        gain += 1;
                    }
                }
            }
            if gain > best.0 {
                best = (gain, c);
            }
        }
        let c = best.1;
        for &a in &d {
            for x in [(c + v - a) & mask, (a + v - c) & mask] {
                if !covered[x] {
                    covered[x] = true;
                    left -= 1;
                }
            }
        }
        d.push(c);
        member[c] = true;
    }
    d.sort_unstable();
    d
}

/// The square-grid difference cover: `d = q·m + r` is `(q+1)·m - (m - r)`.
fn grid_cover(v: usize) -> Vec<usize> {
    let m = 1usize << v.trailing_zeros().div_ceil(2);
    let mut d: Vec<usize> = (0..m).chain((0..v / m).map(|q| q * m)).collect();
    d.sort_unstable();
    d.dedup();
    d
}

/// A difference cover with the tables [`Cover::delta`] needs.
#[derive(Clone, Debug)]
pub struct Cover {
    v: usize,
    d: Vec<usize>,
    /// Index in `d` of each residue, `u32::MAX` for residues not in `d`.
    index: Vec<u32>,
    /// For each difference `e`, the `a` in `D` with `a + e mod v` in `D`:
    /// `pairs[start[e]..start[e + 1]]`.
    start: Vec<u32>,
    pairs: Vec<u32>,
}

impl Cover {
    /// The cover of [`cover`]`(v)`; an error for a `v` it does not accept.
    pub fn new(v: usize) -> Result<Self> {
        if !(v.is_power_of_two() && (V_MIN..=V_MAX).contains(&v)) {
            return Err(Error::SuffixArray(format!(
                "blockwise: difference cover period {v} is not a power of two from {V_MIN} to {V_MAX}"
            )));
        }
        let d = cover(v);
        let mut index = vec![u32::MAX; v];
        for (x, &a) in d.iter().enumerate() {
            index[a] = x as u32;
        }
        let mut start = Vec::with_capacity(v + 1);
        let mut pairs = Vec::new();
        for e in 0..v {
            start.push(pairs.len() as u32);
            pairs.extend(
                d.iter()
                    .filter(|&&a| index[(a + e) % v] != u32::MAX)
                    .map(|&a| a as u32),
            );
        }
        start.push(pairs.len() as u32);
        Ok(Cover {
            v,
            d,
            index,
            start,
            pairs,
        })
    }

    /// The period `v`.
    pub fn period(&self) -> usize {
        self.v
    }

    /// The residues in the cover, sorted.
    pub fn elements(&self) -> &[usize] {
        &self.d
    }

    /// The tables of [`super::steps::CoverSample`]: the index of each
    /// residue in the cover (`u32::MAX` when not in it), and for each
    /// difference the start of its pairs, and the pairs.
    pub fn tables(&self) -> (&[u32], &[u32], &[u32]) {
        (&self.index, &self.start, &self.pairs)
    }

    /// The smallest `k < v` with `(i + k) mod v` and `(j + k) mod v` both in
    /// the cover.
    #[inline]
    pub fn delta(&self, i: usize, j: usize) -> usize {
        super::steps::cover_delta(self.v as u64, &self.start, &self.pairs, i as u64, j as u64)
            as usize
    }
}

/// The groups of a sample's suffixes still tied, over the `m` elements of
/// its order: bit `x` of `tied` is set when element `x` is in a group of
/// two or more, bit `x` of `head` when such a group starts at `x`.
struct Groups {
    tied: Vec<u64>,
    head: Vec<u64>,
    m: usize,
}

impl Groups {
    fn new(m: usize) -> Self {
        Groups {
            tied: vec![0; m.div_ceil(64)],
            head: vec![0; m.div_ceil(64)],
            m,
        }
    }

    fn bit(v: &[u64], x: usize) -> bool {
        v[x / 64] >> (x % 64) & 1 == 1
    }

    /// Records the group `a..b` (nothing for fewer than two elements).
    fn mark(&mut self, a: usize, b: usize) {
        if b - a < 2 {
            return;
        }
        self.head[a / 64] |= 1 << (a % 64);
        for x in a..b {
            self.tied[x / 64] |= 1 << (x % 64);
        }
    }

    /// Forgets the group `a..b`.
    fn clear(&mut self, a: usize, b: usize) {
        self.head[a / 64] &= !(1 << (a % 64));
        for x in a..b {
            self.tied[x / 64] &= !(1 << (x % 64));
        }
    }

    /// Puts in `out` the groups from element `at` on, in order, until they
    /// hold at least `batch` elements (at least one group when there is
    /// one); returns where the next call starts.
    fn take(&self, mut at: usize, batch: usize, out: &mut Vec<(u32, u32)>) -> usize {
        out.clear();
        let mut items = 0;
        while at < self.m && (out.is_empty() || items < batch) {
            // The next tied element: a head.
            let w = at / 64;
            let rest = self.tied[w] & (u64::MAX << (at % 64));
            if rest == 0 {
                at = (w + 1) * 64;
                continue;
            }
            let a = w * 64 + rest.trailing_zeros() as usize;
            debug_assert!(Self::bit(&self.head, a), "a group starts at its head");
            let mut b = a + 1;
            while b < self.m && Self::bit(&self.tied, b) && !Self::bit(&self.head, b) {
                b += 1;
            }
            out.push((a as u32, b as u32));
            items += b - a;
            at = b;
        }
        at.min(self.m)
    }
}

/// Suffixes of the sample's groups refined between two writes of ranks (a
/// batch of [`refine_batch`]): its scratch, 16 bytes a suffix, stays
/// within 16 MiB, inside [`crate::index::bounded::FIXED`].
const REFINE_BATCH: usize = 1 << 20;

/// Groups of suffixes, a task's share of a batch, refined by a doubling
/// round: the new (slot, rank) pairs and the groups still unsorted.
type Refined = (Vec<(u32, u32)>, Vec<(u32, u32)>);

/// A task of [`refine_batch`]: its groups, where its stretch of `order`
/// starts, and that stretch.
type Task<'a> = (&'a [(u32, u32)], usize, &'a mut [u32]);

/// One batch of a doubling round of [`DcSample::new`]: sorts each group
/// `start..end` of `order` (disjoint, ascending) by the rank of the slot
/// `shift` further on (0 where `past_end` says that suffix is empty), in
/// parallel over tasks of consecutive groups; returns per task the new ranks
/// (1 + the start of the sub-group in `order`) and the sub-groups still tied.
fn refine_batch(
    order: &mut [u32],
    batch: &[(u32, u32)],
    rank: &[u32],
    shift: usize,
    past_end: impl Fn(u32) -> bool + Sync,
) -> Vec<Refined> {
    const TASK: usize = 1 << 16;
    // Tasks: runs of consecutive groups of about TASK suffixes, each with
    // the stretch of `order` its groups lie in.
    let mut tasks: Vec<Task<'_>> = Vec::new();
    let mut rest: &mut [u32] = order;
    let mut at = 0usize;
    let mut groups = batch;
    while !groups.is_empty() {
        let mut take = 0;
        let mut items = 0;
        while take < groups.len() && (take == 0 || items < TASK) {
            items += (groups[take].1 - groups[take].0) as usize;
            take += 1;
        }
        let (these, tail) = groups.split_at(take);
        groups = tail;
        let (a, b) = (these[0].0 as usize, these[take - 1].1 as usize);
        let (_, r) = std::mem::take(&mut rest).split_at_mut(a - at);
        let (stretch, r) = r.split_at_mut(b - a);
        rest = r;
        at = b;
        tasks.push((these, a, stretch));
    }
    let key = |s: u32| {
        if past_end(s) {
            0
        } else {
            rank[s as usize + shift]
        }
    };
    tasks
        .into_par_iter()
        .map(|(these, a0, stretch)| {
            let mut updates = Vec::new();
            let mut sub = Vec::new();
            let mut keyed: Vec<(u32, u32)> = Vec::new();
            for &(a, b) in these {
                let (a, b) = (a as usize, b as usize);
                let g = &mut stretch[a - a0..b - a0];
                keyed.clear();
                keyed.extend(g.iter().map(|&s| (key(s), s)));
                keyed.sort_unstable();
                let mut first = 0;
                for x in 0..keyed.len() {
                    g[x] = keyed[x].1;
                    if keyed[x].0 != keyed[first].0 {
                        if x - first > 1 {
                            sub.push(((a + first) as u32, (a + x) as u32));
                        }
                        first = x;
                    }
                    updates.push((keyed[x].1, (a + first) as u32 + 1));
                }
                if keyed.len() - first > 1 {
                    sub.push(((a + first) as u32, (a + keyed.len()) as u32));
                }
            }
            (updates, sub)
        })
        .collect()
}

/// Bits `0..2k` of a word: its first `k` bases.
#[inline]
fn first_bases(k: usize) -> u64 {
    if k >= 32 {
        u64::MAX
    } else {
        (1u64 << (2 * k)) - 1
    }
}

/// The order of two runs of 32 bases read by [`PackedText::word_at`]: the
/// first base that differs decides (the lowest differing field).
#[inline]
fn cmp_words(a: u64, b: u64) -> Ordering {
    let d = a ^ b;
    if d == 0 {
        return Ordering::Equal;
    }
    let t = d.trailing_zeros() & !1;
    ((a >> t) & 3).cmp(&((b >> t) & 3))
}

/// `text[i..min(i + k, n)]` against `text[j..min(j + k, n)]`, 32 bases at a
/// time; a proper prefix sorts first.
#[inline]
fn cmp_prefix(text: &PackedText, i: usize, j: usize, k: usize) -> Ordering {
    let n = text.len();
    let (li, lj) = (k.min(n - i), k.min(n - j));
    let l = li.min(lj);
    let mut o = 0;
    while o < l {
        let m = first_bases(l - o);
        let (a, b) = (text.word_at(i + o) & m, text.word_at(j + o) & m);
        if a != b {
            return cmp_words(a, b);
        }
        o += 32;
    }
    li.cmp(&lj)
}

/// The exact ranks of the suffixes at the positions `p < n` with
/// `p mod v` in the difference cover, and the comparison of any two suffixes
/// they allow ([`DcSample::cmp`]).
#[derive(Clone, Debug)]
pub struct DcSample {
    cover: Cover,
    n: usize,
    /// Rank (1-based, all distinct) of the sampled suffix in each slot
    /// `(p / v) * |D| + index of (p mod v) in D`; 0 in slots at or past `n`.
    rank: Vec<u32>,
}

/// Bytes of the sample ranks of a text of `n` bases at period `v`.
pub fn sample_bytes(n: u64, v: usize) -> u64 {
    n.div_ceil(v as u64) * cover(v).len() as u64 * 4
}

impl DcSample {
    /// Ranks the sample of `text` for period `v` in the current rayon pool.
    /// Besides the ranks, the sampled positions (4 bytes each: as many
    /// bytes again as the ranks) are live while they are sorted.
    pub fn new(text: &PackedText, v: usize) -> Result<Self> {
        Self::refined_in_batches(text, v, REFINE_BATCH)
    }

    /// [`DcSample::new`] with doubling rounds written back every `batch`
    /// suffixes or so (tests use tiny batches: ranks refined earlier in the
    /// same round are read).
    fn refined_in_batches(text: &PackedText, v: usize, batch: usize) -> Result<Self> {
        let (order, same) = Self::first_sort(text, v, None)?;
        Self::refine_sorted(text, v, order, same, batch)
    }

    /// One rank's share of [`DcSample::new`] computed by a group of `ranks`
    /// processes: the sampled suffixes of its share of the k-mer buckets
    /// (split by their counts, the same on every rank), sorted by their
    /// first `v` bases, and a bit per suffix: whether it shares them with
    /// the one before. Every rank's share, by rank, goes to
    /// [`DcSample::from_shares`] on every rank.
    pub fn share_sorted(
        text: &PackedText,
        v: usize,
        ranks: usize,
        rank: usize,
    ) -> Result<(Vec<u32>, Vec<u64>)> {
        Self::first_sort(text, v, Some((ranks, rank)))
    }

    /// The sample from every rank's [`DcSample::share_sorted`], by rank:
    /// the doubling rounds over the suffixes still tied run here. The ranks
    /// are those of [`DcSample::new`] whatever the group.
    pub fn from_shares(
        text: &PackedText,
        v: usize,
        shares: Vec<(Vec<u32>, Vec<u64>)>,
    ) -> Result<Self> {
        // Every share's order and ties, concatenated: two shares never tie
        // (their buckets differ).
        let m: usize = shares.iter().map(|(o, _)| o.len()).sum();
        let mut order = Vec::with_capacity(m);
        let mut same = vec![0u64; m.div_ceil(64)];
        for (o, bits) in shares {
            let at = order.len();
            if bits.len() != o.len().div_ceil(64) {
                return Err(Error::SuffixArray(
                    "blockwise: a share of the sample with too few bits (a bug)".into(),
                ));
            }
            for (w, &word) in bits.iter().enumerate() {
                let mut word = word;
                while word != 0 {
                    let x = at + 64 * w + word.trailing_zeros() as usize;
                    same[x / 64] |= 1 << (x % 64);
                    word &= word - 1;
                }
            }
            order.extend_from_slice(&o);
        }
        Self::refine_sorted(text, v, order, same, REFINE_BATCH)
    }

    /// The sampled slots of this process's buckets (all, or its share of a
    /// `group` of `(ranks, rank)`) sorted by their first `v` bases, and the
    /// tie bits.
    fn first_sort(
        text: &PackedText,
        v: usize,
        group: Option<(usize, usize)>,
    ) -> Result<(Vec<u32>, Vec<u64>)> {
        let cover = Cover::new(v)?;
        let n = text.len();
        let k = cover.d.len();
        let slots = n.div_ceil(v) * k;
        if slots >= u32::MAX as usize {
            return Err(Error::SuffixArray(format!(
                "blockwise: {slots} sample slots for {n} bases at period {v}; \
                 at most 2^32 - 2 are supported (a larger period samples fewer)"
            )));
        }
        let d = &cover.d;
        let pos = |s: u32| (s as usize / k) * v + d[s as usize % k];
        // The sampled slots in order of their first v bases: placed by
        // bucket (the first few bases), then each bucket sorted on its own.
        let in_cover = |p: usize| cover.index[p & (v - 1)] != u32::MAX;
        let slot = |p: usize| ((p / v) * k) as u32 + cover.index[p & (v - 1)];
        let buckets = Buckets::new(text, in_cover);
        // This process's buckets: all, or its share of a group's (whole
        // buckets, split by count).
        let mine = match group {
            None => 0..buckets.counts.len(),
            Some((ranks, rank)) => {
                let total = buckets.total() as u64;
                let cut = |r: usize| {
                    let want = total * r as u64 / ranks as u64;
                    let mut at = 0u64;
                    buckets
                        .counts
                        .iter()
                        .position(|&c| {
                            at += c;
                            at > want
                        })
                        .unwrap_or(buckets.counts.len())
                };
                let hi = if rank + 1 == ranks {
                    buckets.counts.len()
                } else {
                    cut(rank + 1)
                };
                cut(rank).min(hi)..hi
            }
        };
        let own: u64 = buckets.counts[mine.clone()].iter().sum();
        let mut order = vec![0u32; own as usize];
        buckets.scatter(text, mine.clone(), in_cover, slot, &mut order);
        let counts: Vec<usize> = buckets.counts[mine].iter().map(|&c| c as usize).collect();
        drop(buckets);
        // Equal words over the first v bases: only their lengths (the end
        // of the text within v bases) can differ.
        sort_buckets(
            &mut order,
            &counts,
            levels(v),
            |s, l| key_at(text, pos(s), l),
            |s, l| text.prefetch(pos(s) + 32 * l),
            |a, b| v.min(n - pos(a)).cmp(&v.min(n - pos(b))),
        );
        drop(counts);
        let same_of = |order: &[u32]| {
            let m = order.len();
            // Bit x: order[x - 1] and order[x] share their first v bases
            // (both at least v long).
            let mut same = vec![0u64; m.div_ceil(64)];
            const WORDS: usize = 1024;
            same.par_chunks_mut(WORDS)
                .enumerate()
                .for_each(|(c, words)| {
                    let first = c * WORDS * 64;
                    let xs = first.max(1)..(first + words.len() * 64).min(m);
                    for_each_ahead(
                        xs.len(),
                        AHEAD,
                        |j| text.prefetch(pos(order[xs.start + j])),
                        |i| {
                            let x = xs.start + i;
                            let (a, b) = (pos(order[x - 1]), pos(order[x]));
                            if a + v <= n
                                && b + v <= n
                                && cmp_prefix(text, a, b, v) == Ordering::Equal
                            {
                                words[(x - first) / 64] |= 1 << ((x - first) % 64);
                            }
                        },
                    );
                });
            same
        };
        let same = same_of(&order);
        Ok((order, same))
    }

    /// The sample from the sampled slots sorted by their first `v` bases
    /// and their tie bits ([`DcSample::first_sort`]): first ranks, then
    /// doubling rounds over the groups still tied, written back every
    /// `batch` suffixes or so.
    fn refine_sorted(
        text: &PackedText,
        v: usize,
        mut order: Vec<u32>,
        same: Vec<u64>,
        batch: usize,
    ) -> Result<Self> {
        let cover = Cover::new(v)?;
        let n = text.len();
        let k = cover.d.len();
        let slots = n.div_ceil(v) * k;
        let d = &cover.d;
        let pos = |s: u32| (s as usize / k) * v + d[s as usize % k];
        let m = order.len();
        let mut rank = vec![0u32; slots];
        // Unsorted groups: runs of `order` whose suffixes share the first h
        // bases (all at least h long). Ranks are 1 + the start of the group
        // in `order`. The groups are kept as two bits per element
        // ([`Groups`]), not a list, which is 8 bytes a suffix when a genome
        // is two near-identical copies.
        let mut groups = Groups::new(m);
        let mut start = 0;
        for x in 1..=m {
            let tie = x < m && (same[x / 64] >> (x % 64)) & 1 == 1;
            if !tie {
                for &s in &order[start..x] {
                    rank[s as usize] = start as u32 + 1;
                }
                groups.mark(start, x);
                start = x;
            }
        }
        drop(same);
        // Prefix doubling (Larsson–Sadakane): each round sorts every group
        // by the rank of the suffix h further on. The groups go in batches
        // of about `batch` suffixes, and a batch's new ranks are written
        // before the next batch reads any: a later batch may see a rank
        // already refined this round, which orders its group by more bases,
        // never wrongly (ranks stay consistent with the suffix order). That
        // bounds the round's scratch to a batch instead of every tied suffix.
        let mut h = v;
        let mut found = Vec::new();
        loop {
            // Slot of p + h for the slot of p: the same residue, h / v blocks on.
            let shift = (h / v) * k;
            let mut at = 0;
            let mut any = false;
            loop {
                at = groups.take(at, batch, &mut found);
                if found.is_empty() {
                    break;
                }
                any = true;
                let done = refine_batch(&mut order, &found, &rank, shift, |s| pos(s) + h >= n);
                for &(a, b) in &found {
                    groups.clear(a as usize, b as usize);
                }
                for (updates, sub) in done {
                    for (s, r) in updates {
                        rank[s as usize] = r;
                    }
                    for (a, b) in sub {
                        groups.mark(a as usize, b as usize);
                    }
                }
            }
            if !any {
                break;
            }
            h *= 2;
        }
        drop(order);
        crate::alloc::trim();
        Ok(DcSample { cover, n, rank })
    }

    /// The difference cover.
    pub fn cover(&self) -> &Cover {
        &self.cover
    }

    /// The ranks by slot `(p / v) * |D| + index of (p mod v) in D` (1-based,
    /// all distinct; 0 in slots at or past the end).
    pub fn ranks(&self) -> &[u32] {
        &self.rank
    }

    /// Bytes held by the ranks.
    pub fn bytes(&self) -> usize {
        self.rank.len() * 4
    }

    /// Rank of the sampled suffix at `p` (`p mod v` in the cover); 0 (least)
    /// for `p >= n`, the empty suffix.
    #[inline]
    fn rank_at(&self, p: usize) -> u32 {
        let c = &self.cover;
        super::steps::cover_rank(
            &self.rank,
            &c.index,
            c.v as u64,
            c.d.len() as u64,
            self.n as u64,
            p as u64,
        )
    }

    /// The order of the suffixes of `text` (the text this sample was built
    /// from) at `i` and `j`; `Equal` only for `i == j`. The end of the text
    /// sorts before every base.
    #[inline]
    pub fn cmp(&self, text: &PackedText, i: usize, j: usize) -> Ordering {
        debug_assert_eq!(text.len(), self.n);
        if i == j {
            return Ordering::Equal;
        }
        let k = self.cover.delta(i, j);
        // Equal prefixes have equal lengths; for i != j that means both
        // suffixes are at least k long, so i + k and j + k are at most n.
        cmp_prefix(text, i, j, k).then_with(|| self.rank_at(i + k).cmp(&self.rank_at(j + k)))
    }
}

/// The first 32 bases from `p` as a number (the first base most
/// significant; bases past the end read as A): a smaller key is a smaller
/// suffix; equal keys decide nothing.
#[inline]
fn key(text: &PackedText, p: usize) -> u64 {
    crate::dna::reverse_fields(text.word_at(p))
}

/// Suffixes grouped by their first `k` bases (`4^k` buckets, bases past the
/// end read as A, so a bucket's suffixes all sort after every smaller
/// bucket's): the first split of the suffixes, counted in one pass, per
/// stripe of the text (so that a later pass can place them).
struct Buckets {
    k: usize,
    /// Suffixes (of those counted) per bucket.
    counts: Vec<u64>,
    /// Positions per stripe (the last may be shorter).
    stripe_len: usize,
    /// Per stripe, its suffixes per bucket.
    stripes: Vec<Vec<u32>>,
}

/// Most bases in a bucket key (`4^10` buckets: 8 MiB of counts, 4 MiB per
/// stripe).
const BUCKET_BASES_MAX: usize = 10;

/// Bases in the bucket key for a text of `n` bases: about 32 positions per
/// bucket, at most [`BUCKET_BASES_MAX`].
fn bucket_bases(n: usize) -> usize {
    let mut k = 1;
    while k < BUCKET_BASES_MAX && (1usize << (2 * k)) * 32 < n {
        k += 1;
    }
    k
}

/// Bytes of the bucket counts for a text of `n` bases (the totals and up to
/// four stripes' counts).
pub fn bucket_bytes(n: u64) -> u64 {
    24 << (2 * bucket_bases(n.min(usize::MAX as u64) as usize))
}

impl Buckets {
    /// Counts the positions `p` with `keep(p)` per bucket; `k` grows with
    /// the text (about 32 positions per bucket) up to [`BUCKET_BASES_MAX`].
    fn new(text: &PackedText, keep: impl Fn(usize) -> bool + Sync) -> Self {
        let n = text.len();
        let k = bucket_bases(n);
        let b = 1usize << (2 * k);
        // A few stripes (u32 counts: a stripe is at most 2^31 positions).
        let stripes = rayon::current_num_threads()
            .clamp(1, 4)
            .max(n.div_ceil(1 << 31));
        let stripe_len = n.div_ceil(stripes).max(1);
        let mut me = Buckets {
            k,
            counts: Vec::new(),
            stripe_len,
            stripes: Vec::new(),
        };
        me.stripes = (0..stripes)
            .into_par_iter()
            .map(|s| {
                let mut c = vec![0u32; b];
                me.walk(text, me.stripe(s, n), |p, b| {
                    if keep(p) {
                        c[b] += 1;
                    }
                });
                c
            })
            .collect();
        me.counts = vec![0u64; b];
        for c in &me.stripes {
            me.counts
                .iter_mut()
                .zip(c)
                .for_each(|(t, &x)| *t += x as u64);
        }
        me
    }

    /// Positions of stripe `s` of a text of `n` bases.
    fn stripe(&self, s: usize, n: usize) -> std::ops::Range<usize> {
        (s * self.stripe_len).min(n)..((s + 1) * self.stripe_len).min(n)
    }

    /// Suffixes counted.
    fn total(&self) -> usize {
        self.counts.iter().sum::<u64>() as usize
    }

    /// Calls `f(p, bucket of p)` for the positions `p` of `range` in
    /// order. One read of 32 bases gives the buckets of the next `33 - k`
    /// positions (shifts of one word, no chain from one position to the
    /// next).
    #[inline]
    fn walk(
        &self,
        text: &PackedText,
        range: std::ops::Range<usize>,
        mut f: impl FnMut(usize, usize),
    ) {
        let shift = 64 - 2 * self.k;
        let step = 33 - self.k;
        let mut p = range.start;
        while p < range.end {
            let w = key(text, p);
            let m = step.min(range.end - p);
            for j in 0..m {
                f(p + j, ((w << (2 * j)) >> shift) as usize);
            }
            p += m;
        }
    }

    /// The bucket of the suffix at `p`.
    #[inline]
    fn of(&self, text: &PackedText, p: usize) -> usize {
        (key(text, p) >> (64 - 2 * self.k)) as usize
    }

    /// Fills `out` with `value(p)` for the counted positions `p` (those
    /// with `keep(p)`, the same as counted) whose bucket is in `range`,
    /// ordered by bucket and by position within a bucket: one pass over the
    /// text, the stripes in parallel, each storing at its own offsets.
    fn scatter<T: Elem>(
        &self,
        text: &PackedText,
        range: std::ops::Range<usize>,
        keep: impl Fn(usize) -> bool + Sync,
        value: impl Fn(usize) -> T + Sync,
        out: &mut [T],
    ) {
        let n = text.len();
        let mut next: Vec<Vec<usize>> = vec![Vec::with_capacity(range.len()); self.stripes.len()];
        let mut at = 0;
        for b in range.clone() {
            for (s, c) in self.stripes.iter().enumerate() {
                next[s].push(at);
                at += c[b] as usize;
            }
        }
        assert_eq!(at, out.len(), "blockwise: a bucket count changed (a bug)");
        let shared = SharedSlice::new(out);
        let (start, len) = (range.start, range.len());
        next.into_par_iter().enumerate().for_each(|(s, mut next)| {
            // Positions in the range are staged without a branch (a
            // position is written, and kept when its bucket is in the range:
            // that branch was mispredicted about once per part), then
            // stored in order.
            let mut staged = vec![(0u32, 0usize); STAGE];
            let mut k = 0;
            let mut flush = |staged: &[(u32, usize)]| {
                for &(b, p) in staged {
                    if keep(p) {
                        let slot = &mut next[b as usize];
                        shared.store(*slot, value(p));
                        *slot += 1;
                    }
                }
            };
            self.walk(text, self.stripe(s, n), |p, b| {
                let local = b.wrapping_sub(start);
                staged[k] = (local as u32, p);
                k += usize::from(local < len);
                if k == STAGE {
                    flush(&staged[..k]);
                    k = 0;
                }
            });
            flush(&staged[..k]);
        });
    }
}

/// Positions a stripe of [`Buckets::scatter`] stages before storing them.
const STAGE: usize = 4096;

/// Sorts each bucket of `items` (ordered by bucket, `counts[b]` in bucket
/// `b`) by `word(item, 0)`, then among equal words by `word(item, 1)`, ...
/// up to `levels` words, then by `last` (together a total order over the
/// items). Runs of small buckets are sorted in parallel, as (word, item)
/// pairs refined level by level in cache (a most-significant-word radix
/// sort: each item's word at a level is read once); a large bucket with a
/// parallel comparison sort of its own.
fn sort_buckets<T: Copy + Send + Sync>(
    items: &mut [T],
    counts: &[usize],
    levels: usize,
    word: impl Fn(T, usize) -> u64 + Sync,
    ahead: impl Fn(T, usize) + Sync,
    last: impl Fn(T, T) -> Ordering + Sync,
) {
    const TASK: usize = 1 << 16;
    // Runs of whole buckets of about TASK items; a bucket over TASK alone.
    let mut runs: Vec<(&mut [T], &[usize])> = Vec::new();
    let mut rest = items;
    let mut b = 0;
    while b < counts.len() {
        let first = b;
        let mut len = 0;
        while b < counts.len() && (len == 0 || len + counts[b] <= TASK) {
            len += counts[b];
            b += 1;
        }
        let (run, tail) = rest.split_at_mut(len);
        runs.push((run, &counts[first..b]));
        rest = tail;
    }
    let (big, small): (Vec<_>, Vec<_>) = runs.into_iter().partition(|(r, _)| r.len() > TASK);
    small.into_par_iter().for_each(|(run, counts)| {
        let mut keyed: Vec<(u64, T)> = Vec::new();
        let mut rest = run;
        for &c in counts {
            let (bucket, tail) = rest.split_at_mut(c);
            rest = tail;
            if c < 2 {
                continue;
            }
            keyed.clear();
            keyed.extend(bucket.iter().map(|&x| (0, x)));
            fill(&mut keyed, 0, &word, &ahead);
            refine(&mut keyed, 0, levels, &word, &ahead, &last);
            bucket
                .iter_mut()
                .zip(&keyed)
                .for_each(|(x, &(_, y))| *x = y);
        }
    });
    let cmp = |a: T, b: T| {
        (0..levels)
            .map(|l| word(a, l).cmp(&word(b, l)))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| last(a, b))
    };
    for (run, _) in big {
        run.par_sort_unstable_by(|&a, &b| cmp(a, b));
    }
}

/// Sorts `keyed`, whose words are those of `level`; runs of equal words are
/// given the next level's words and sorted again, and after `levels`
/// levels ordered by `last`.
fn refine<T: Copy>(
    keyed: &mut [(u64, T)],
    level: usize,
    levels: usize,
    word: &impl Fn(T, usize) -> u64,
    ahead: &impl Fn(T, usize),
    last: &impl Fn(T, T) -> Ordering,
) {
    keyed.sort_unstable_by_key(|x| x.0);
    let mut a = 0;
    while a < keyed.len() {
        let mut b = a + 1;
        while b < keyed.len() && keyed[b].0 == keyed[a].0 {
            b += 1;
        }
        if b - a > 1 {
            let run = &mut keyed[a..b];
            if level + 1 < levels {
                fill(run, level + 1, word, ahead);
                refine(run, level + 1, levels, word, ahead, last);
            } else {
                run.sort_unstable_by(|x, y| last(x.1, y.1));
            }
        }
        a = b;
    }
}

/// Items a gather looks ahead ([`fill`]).
const AHEAD: usize = 16;

/// Sets each item's word to `word(item, level)`, first calling
/// `ahead(item, level)` [`AHEAD`] items ahead (a prefetch): the words are
/// random reads of the text, whose cache misses then overlap.
#[inline]
fn fill<T: Copy>(
    keyed: &mut [(u64, T)],
    level: usize,
    word: &impl Fn(T, usize) -> u64,
    ahead: &impl Fn(T, usize),
) {
    // Cells: the prefetch reads an item ahead while the item at hand is set.
    let cells = std::cell::Cell::from_mut(keyed).as_slice_of_cells();
    for_each_ahead(
        cells.len(),
        AHEAD,
        |j| ahead(cells[j].get().1, level),
        |i| {
            let x = cells[i].get().1;
            cells[i].set((word(x, level), x));
        },
    );
}

/// Words of 32 bases a sort compares before its final comparison, for
/// suffixes compared over `v` bases.
fn levels(v: usize) -> usize {
    v.div_ceil(32)
}

/// [`key`] of the bases `32 level ..` of the suffix at `p` (0 past the end).
#[inline]
fn key_at(text: &PackedText, p: usize, level: usize) -> u64 {
    let q = p + 32 * level;
    if q > text.len() { 0 } else { key(text, q) }
}

/// The suffixes `x` with a bucket in `buckets` and `lo < x <= hi` in suffix
/// order (`None`: unbounded), of which there are `count`.
#[derive(Clone, Debug)]
struct Range {
    buckets: std::ops::Range<usize>,
    lo: Option<usize>,
    hi: Option<usize>,
    count: usize,
}

impl Range {
    #[inline]
    fn holds(&self, b: &Buckets, s: &DcSample, text: &PackedText, x: usize) -> bool {
        self.buckets.contains(&b.of(text, x))
            && self.lo.is_none_or(|l| s.cmp(text, l, x) == Ordering::Less)
            && self
                .hi
                .is_none_or(|h| s.cmp(text, x, h) != Ordering::Greater)
    }
}

/// How a blockwise sort went, for the log.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Parts emitted.
    pub parts: usize,
    /// Bytes of the sample ranks.
    pub sample_bytes: usize,
    /// Seconds spent ranking the sample.
    pub sample_seconds: f64,
    /// Seconds spent collecting the parts' suffixes from the text (passes
    /// placing them by bucket, or counting and collecting a range bounded
    /// by splitters).
    pub collect_seconds: f64,
    /// Seconds spent sorting the parts once collected.
    pub sort_seconds: f64,
    /// Seconds spent drawing splitters and counting the pieces of buckets
    /// larger than a part.
    pub split_seconds: f64,
    /// Passes over the text (counting, placing, collecting, splitting).
    pub passes: usize,
}

/// Where a part handed to `emit` stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At {
    /// Suffixes emitted before this part.
    pub before: usize,
    /// Parts emitted before this one.
    pub parts: usize,
    /// Parts known so far: those emitted, this one and those planned (a
    /// range still to come may be split into more).
    pub planned: usize,
    /// Whether the suffix at 0 is among the `before` suffixes (then the
    /// row of `$` in the BWT comes before this part's rows).
    pub zero_before: bool,
}

/// A sort of the parts other than this module's own: on the steps of a
/// backend ([`super::partsort::OnSteps`]), so that a GPU can sort them.
pub trait PartSorter<P>: Send {
    /// Called once, when the sample is ranked and before the first part.
    fn prepare(&mut self, text: &PackedText, sample: &DcSample) -> Result<()>;
    /// Sorts the suffixes of `part` (distinct positions of the text) into
    /// suffix order and returns true; or returns false, leaving the part to
    /// this module's own sort (a GPU that failed hands the rest back).
    fn sort(&mut self, part: &mut [P]) -> Result<bool>;
}

/// The suffix array of `text` (no sentinel), handed to `emit` in parts of at
/// most `max_part` positions, in order: their concatenation is exactly
/// [`super::libsais`]'s array. The difference cover has period `v` (a power
/// of two from 4 to 4096); larger `v` means smaller sample ranks and slower
/// comparisons. Runs in the current rayon pool; the parts do not depend on
/// the number of threads. `emit` also gets the number of suffixes emitted
/// before the part. See the module documentation for the method and its
/// memory.
pub fn blockwise<P: Pos>(
    text: &PackedText,
    v: usize,
    max_part: usize,
    emit: &mut dyn FnMut(&[P], At) -> Result<()>,
) -> Result<Summary> {
    blockwise_drawing(text, v, max_part, SPLITTERS_MIN, None, ALL, None, emit)
}

/// Every part: the share of a single process.
const ALL: std::ops::Range<usize> = 0..usize::MAX;

/// [`blockwise`] with the parts sorted by `sorter` (the same parts, the same
/// order: only who sorts them changes).
pub fn blockwise_sorted_by<P: Pos>(
    text: &PackedText,
    v: usize,
    max_part: usize,
    sorter: &mut dyn PartSorter<P>,
    emit: &mut dyn FnMut(&[P], At) -> Result<()>,
) -> Result<Summary> {
    blockwise_drawing(
        text,
        v,
        max_part,
        SPLITTERS_MIN,
        Some(sorter),
        ALL,
        None,
        emit,
    )
}

/// [`blockwise`] for one rank of a distributed build: only the parts that
/// start in `share` (suffix order: the part's first suffix is the
/// `share.start`-th or later, before the `share.end`-th) are collected,
/// sorted and handed to `emit`; the others are counted and passed over
/// (a range larger than a part is split only when it overlaps `share`).
/// Ranks that split `0..n` into shares emit every part exactly once, the
/// same parts as [`blockwise`] with the same `max_part`. `sample` is the
/// text's, made by [`DcSample::from_shares`] (or [`DcSample::new`]); its
/// period is the period of the parts.
pub fn blockwise_share<P: Pos>(
    text: &PackedText,
    sample: DcSample,
    max_part: usize,
    share: std::ops::Range<usize>,
    emit: &mut dyn FnMut(&[P], At) -> Result<()>,
) -> Result<Summary> {
    let v = sample.cover.v;
    blockwise_drawing(
        text,
        v,
        max_part,
        SPLITTERS_MIN,
        None,
        share,
        Some(sample),
        emit,
    )
}

/// [`blockwise`] where a split draws up to `max(min_splitters, max_part)`
/// splitters (tests draw few, to split pieces again), and the parts are
/// sorted by `sorter` when there is one.
#[allow(clippy::too_many_arguments)]
fn blockwise_drawing<P: Pos>(
    text: &PackedText,
    v: usize,
    max_part: usize,
    min_splitters: usize,
    mut sorter: Option<&mut dyn PartSorter<P>>,
    share: std::ops::Range<usize>,
    sample: Option<DcSample>,
    emit: &mut dyn FnMut(&[P], At) -> Result<()>,
) -> Result<Summary> {
    if max_part == 0 {
        return Err(Error::SuffixArray(
            "blockwise: the part size must be at least 1".into(),
        ));
    }
    let n = text.len();
    if P::BYTES == 4 && n > 1usize << 32 {
        return Err(Error::SuffixArray(format!(
            "blockwise: {n} bases need 64-bit positions"
        )));
    }
    let t = std::time::Instant::now();
    let sample = match sample {
        Some(s) if s.n == n && s.cover.v == v => s,
        Some(_) => {
            return Err(Error::SuffixArray(
                "blockwise: a sample of another text or period (a bug)".into(),
            ));
        }
        None => DcSample::new(text, v)?,
    };
    let mut summary = Summary {
        sample_bytes: sample.bytes(),
        sample_seconds: t.elapsed().as_secs_f64(),
        ..Summary::default()
    };
    if n == 0 {
        return Ok(summary);
    }
    if let Some(s) = sorter.as_deref_mut() {
        s.prepare(text, &sample)?;
    }
    let t = std::time::Instant::now();
    let buckets = Buckets::new(text, |_| true);
    summary.collect_seconds += t.elapsed().as_secs_f64();
    // The sample's two passes (count, place) and this count.
    summary.passes += 3;
    // Parts: runs of whole buckets of at most max_part suffixes; a bucket
    // over max_part alone (split by splitters when popped).
    let mut planned: Vec<Range> = Vec::new();
    for (b, &c) in buckets.counts.iter().enumerate() {
        let c = c as usize;
        match planned.last_mut() {
            // An empty bucket joins any part that is not a lone large bucket
            // (those keep one bucket: their counts come from the splitters).
            Some(last) if c == 0 => {
                if last.count <= max_part {
                    last.buckets.end = b + 1;
                }
            }
            None if c == 0 => {}
            Some(last) if last.count + c <= max_part && last.buckets.end == b => {
                last.buckets.end = b + 1;
                last.count += c;
            }
            _ => planned.push(Range {
                buckets: b..b + 1,
                lo: None,
                hi: None,
                count: c,
            }),
        }
    }
    // Ranges still to emit, the next on top.
    let mut stack: Vec<Range> = planned.into_iter().rev().collect();
    let mut done = 0;
    // Whether the suffix at 0 is in a range already passed.
    let mut zero_before = false;
    while let Some(range) = stack.pop() {
        if range.count == 0 {
            continue;
        }
        if done >= share.end {
            // This range and every later one start past the share.
            break;
        }
        let mine = share.contains(&done);
        if !mine && (range.count <= max_part || done + range.count <= share.start) {
            // Another rank's part, or ranges that all start before the share.
            zero_before |= range.holds(&buckets, &sample, text, 0);
            done += range.count;
            continue;
        }
        if range.count == 1
            && let Some(hi) = range.hi
        {
            // `hi` is a splitter drawn from the enclosing range and above
            // `lo`: the one suffix of the range.
            let at = At {
                before: done,
                parts: summary.parts,
                planned: summary.parts + 1 + stack.len(),
                zero_before,
            };
            emit(&[P::from_u64(hi as u64)], at)?;
            zero_before |= hi == 0;
            done += 1;
            summary.parts += 1;
            continue;
        }
        if range.count <= max_part {
            let part: Vec<P> = sorted_part(
                &buckets,
                &sample,
                text,
                &range,
                sorter.as_deref_mut(),
                &mut summary,
            )?;
            if part.len() != range.count {
                return Err(Error::SuffixArray(format!(
                    "blockwise: a part of {} suffixes was counted as {} (a bug)",
                    part.len(),
                    range.count
                )));
            }
            let at = At {
                before: done,
                parts: summary.parts,
                planned: summary.parts + 1 + stack.len(),
                zero_before,
            };
            emit(&part, at)?;
            zero_before |= range.holds(&buckets, &sample, text, 0);
            done += part.len();
            summary.parts += 1;
            continue;
        }
        let t = std::time::Instant::now();
        let pieces = split(&buckets, &sample, text, &range, max_part, min_splitters);
        summary.split_seconds += t.elapsed().as_secs_f64();
        summary.passes += 3;
        // Consecutive pieces grouped into parts of at most max_part; a piece
        // over max_part alone (split again when popped).
        let mut parts: Vec<Range> = Vec::new();
        for piece in pieces {
            if piece.count == 0 {
                // Nothing to emit (its neighbours' bounds cover it when
                // they are grouped); not counted as a part to come.
                continue;
            }
            match parts.last_mut() {
                Some(last) if last.count + piece.count <= max_part => {
                    last.hi = piece.hi;
                    last.count += piece.count;
                }
                _ => parts.push(piece),
            }
        }
        stack.extend(parts.into_iter().rev());
    }
    Ok(summary)
}

/// The chunks of `0..n`.
fn chunks(n: usize) -> impl IndexedParallelIterator<Item = std::ops::Range<usize>> {
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(move |c| c * CHUNK..((c + 1) * CHUNK).min(n))
}

/// Stripes of a pass that collects a range bounded by splitters: few and
/// fixed, each filling its own stretch of the part.
const STRIPES: usize = 64;

/// The suffixes of `range`, sorted. A range of whole buckets: one pass over
/// the text places them by bucket, then each bucket is sorted. A range
/// bounded by splitters (inside one bucket): one pass counts them per
/// stripe, one more collects them, then they are sorted together. With a
/// `sorter`, it sorts them once collected.
fn sorted_part<P: Pos>(
    b: &Buckets,
    s: &DcSample,
    text: &PackedText,
    range: &Range,
    sorter: Option<&mut (dyn PartSorter<P> + '_)>,
    summary: &mut Summary,
) -> Result<Vec<P>> {
    let n = text.len();
    let t = std::time::Instant::now();
    let mut part: Vec<P> = vec![P::from_u64(0); range.count];
    let tie = |x: P, y: P| s.cmp(text, x.to_u64() as usize, y.to_u64() as usize);
    let word = |x: P, l: usize| key_at(text, x.to_u64() as usize, l);
    let key = |x: P| key(text, x.to_u64() as usize);
    if range.lo.is_none() && range.hi.is_none() {
        b.scatter(
            text,
            range.buckets.clone(),
            |_| true,
            |p| P::from_u64(p as u64),
            &mut part,
        );
        summary.passes += 1;
        summary.collect_seconds += t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        if let Some(sorter) = sorter
            && sorter.sort(&mut part)?
        {
            summary.sort_seconds += t.elapsed().as_secs_f64();
            return Ok(part);
        }
        let counts: Vec<usize> = b.counts[range.buckets.clone()]
            .iter()
            .map(|&c| c as usize)
            .collect();
        let ahead = |x: P, l: usize| text.prefetch(x.to_u64() as usize + 32 * l);
        sort_buckets(&mut part, &counts, levels(s.cover.v), word, ahead, tie);
        summary.sort_seconds += t.elapsed().as_secs_f64();
        return Ok(part);
    }
    let len = n.div_ceil(STRIPES).max(1);
    let stripe = |t: usize| (t * len).min(n)..((t + 1) * len).min(n);
    let per_stripe: Vec<usize> = (0..STRIPES)
        .into_par_iter()
        .map(|t| stripe(t).filter(|&x| range.holds(b, s, text, x)).count())
        .collect();
    if per_stripe.iter().sum::<usize>() != range.count {
        // The caller reports the mismatch.
        return Ok(Vec::new());
    }
    let ends: Vec<usize> = per_stripe
        .iter()
        .scan(0, |at, &c| {
            *at += c;
            Some(*at)
        })
        .collect();
    let pieces = super::cpu::shared::split_at_ends(&mut part, &ends);
    pieces.into_par_iter().enumerate().for_each(|(t, out)| {
        for (slot, x) in out
            .iter_mut()
            .zip(stripe(t).filter(|&x| range.holds(b, s, text, x)))
        {
            *slot = P::from_u64(x as u64);
        }
    });
    summary.passes += 2;
    summary.collect_seconds += t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    let sorted = match sorter {
        Some(sorter) => sorter.sort(&mut part)?,
        None => false,
    };
    if !sorted {
        part.par_sort_unstable_by(|&x, &y| key(x).cmp(&key(y)).then_with(|| tie(x, y)));
    }
    summary.sort_seconds += t.elapsed().as_secs_f64();
    Ok(part)
}

/// Splits `range` (more than `max_part >= 1` suffixes) into consecutive
/// pieces, each with fewer suffixes than `range`, with their counts.
fn split(
    b: &Buckets,
    s: &DcSample,
    text: &PackedText,
    range: &Range,
    max_part: usize,
    min_splitters: usize,
) -> Vec<Range> {
    let n = text.len();
    let count = range.count;
    // Splitters: the members with global index g (in text order) where
    // g % stride == stride - 1; there are count / stride >= wanted >= 2 of
    // them, so every piece misses at least one member.
    let wanted = (8 * count / max_part)
        .clamp(2, max_part.max(min_splitters).max(2))
        .min(count);
    let stride = (count / wanted).max(1);
    let per_chunk: Vec<usize> = chunks(n)
        .map(|c| c.filter(|&x| range.holds(b, s, text, x)).count())
        .collect();
    let mut before = Vec::with_capacity(per_chunk.len());
    let mut total = 0;
    for c in &per_chunk {
        before.push(total);
        total += c;
    }
    debug_assert_eq!(total, count);
    let picked: Vec<Vec<usize>> = chunks(n)
        .zip(before)
        .map(|(c, first)| {
            c.filter(|&x| range.holds(b, s, text, x))
                .enumerate()
                .filter(|&(g, _)| (first + g) % stride == stride - 1)
                .map(|(_, x)| x)
                .collect()
        })
        .collect();
    let mut splitters: Vec<usize> = picked.into_iter().flatten().collect();
    debug_assert!(splitters.len() >= 2);
    splitters.par_sort_unstable_by(|&a, &b| s.cmp(text, a, b));
    // Piece t: (splitters[t - 1], splitters[t]], bounded by the range.
    let counts = chunks(n)
        .map(|c| {
            let mut counts = vec![0usize; splitters.len() + 1];
            for x in c.filter(|&x| range.holds(b, s, text, x)) {
                counts[splitters.partition_point(|&p| s.cmp(text, p, x) == Ordering::Less)] += 1;
            }
            counts
        })
        .reduce(
            || vec![0usize; splitters.len() + 1],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        );
    (0..=splitters.len())
        .map(|t| Range {
            buckets: range.buckets.clone(),
            lo: if t == 0 {
                range.lo
            } else {
                Some(splitters[t - 1])
            },
            hi: if t == splitters.len() {
                range.hi
            } else {
                Some(splitters[t])
            },
            count: counts[t],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sa::naive;
    use proptest::prelude::*;

    #[test]
    fn covers_cover_every_difference_and_are_small() {
        let mut v = V_MIN;
        while v <= V_MAX {
            let d = cover(v);
            assert_eq!(d[0], 0);
            let mut seen = vec![false; v];
            for &a in &d {
                for &b in &d {
                    seen[(a + v - b) % v] = true;
                }
            }
            assert!(seen.iter().all(|&x| x), "v = {v}: {d:?}");
            // |D| >= sqrt(v) for any cover; ours within 1.6 sqrt(1.5 v) + 2.
            let bound = 1.6 * (1.5 * v as f64).sqrt() + 2.0;
            assert!((d.len() as f64) <= bound, "v = {v}: |D| = {}", d.len());
            assert!(d.len() * d.len() >= v);
            v *= 2;
        }
    }

    #[test]
    fn delta_is_the_smallest_shift() {
        for v in [4, 8, 16, 32, 64, 4096] {
            let c = Cover::new(v).unwrap();
            let mut member = vec![false; v];
            c.elements().iter().for_each(|&a| member[a] = true);
            let inside = |r: usize| member[r % v];
            let step = if v > 64 { 37 } else { 1 };
            for i in (0..2 * v).step_by(step) {
                for j in (0..2 * v).step_by(step) {
                    let want = (0..v).find(|&k| inside(i + k) && inside(j + k)).unwrap();
                    assert_eq!(c.delta(i, j), want, "v {v} i {i} j {j}");
                }
            }
        }
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(Cover::new(3).is_err());
        assert!(Cover::new(8192).is_err());
        assert!(Cover::new(48).is_err());
        let r = blockwise::<u32>(&PackedText::from_codes(&[0, 1]), 8, 0, &mut |_, _| Ok(()));
        assert!(r.is_err());
    }

    /// Ranks follow the suffix order of the sampled positions; `cmp` agrees
    /// with the brute-force order on every pair.
    fn check_sample(text: &[u8], v: usize) {
        for batch in [REFINE_BATCH, 1, 2, 7] {
            check_sample_batch(text, v, batch);
        }
    }

    fn check_sample_batch(text: &[u8], v: usize, batch: usize) {
        let t = PackedText::from_codes(text);
        let s = crate::thread_pool(2)
            .unwrap()
            .install(|| DcSample::refined_in_batches(&t, v, batch))
            .unwrap();
        if batch != REFINE_BATCH {
            // The ranks do not depend on the batches.
            assert_eq!(s.rank, DcSample::new(&t, v).unwrap().rank, "batch {batch}");
        }
        let sa = naive(text);
        let mut isa = vec![0usize; text.len()];
        for (r, &p) in sa.iter().enumerate() {
            isa[p as usize] = r;
        }
        let sampled: Vec<usize> = sa
            .iter()
            .map(|&p| p as usize)
            .filter(|&p| s.cover.elements().contains(&(p % v)))
            .collect();
        let ranks: Vec<u32> = sampled.iter().map(|&p| s.rank_at(p)).collect();
        assert!(ranks.windows(2).all(|w| w[0] < w[1]), "v {v} {text:?}");
        for i in 0..text.len() {
            for j in 0..text.len() {
                assert_eq!(s.cmp(&t, i, j), isa[i].cmp(&isa[j]), "v {v} {i} {j}");
                let fast = key(&t, i).cmp(&key(&t, j)).then_with(|| s.cmp(&t, i, j));
                assert_eq!(fast, isa[i].cmp(&isa[j]), "key, v {v} {i} {j}");
            }
        }
    }

    fn parts<P: Pos>(text: &[u8], v: usize, max_part: usize, threads: usize) -> Vec<Vec<u64>> {
        parts_drawing::<P>(text, v, max_part, threads, SPLITTERS_MIN, false)
    }

    /// The parts, sorted by this module or (`steps`) on the steps of the
    /// CPU backend ([`super::super::partsort`]).
    fn parts_drawing<P: Pos>(
        text: &[u8],
        v: usize,
        max_part: usize,
        threads: usize,
        min_splitters: usize,
        steps: bool,
    ) -> Vec<Vec<u64>> {
        let mut out: Vec<Vec<u64>> = Vec::new();
        let t = PackedText::from_codes(text);
        let cpu = super::super::cpu::Cpu;
        let mut on_steps = super::super::partsort::OnSteps::new(&cpu);
        let sorter: Option<&mut dyn PartSorter<P>> = if steps { Some(&mut on_steps) } else { None };
        let summary = crate::thread_pool(threads)
            .unwrap()
            .install(|| {
                blockwise_drawing::<P>(
                    &t,
                    v,
                    max_part,
                    min_splitters,
                    sorter,
                    ALL,
                    None,
                    &mut |p, at| {
                        assert!(!p.is_empty() && p.len() <= max_part);
                        assert_eq!(at.before, out.iter().map(|p| p.len()).sum::<usize>());
                        assert_eq!(at.parts, out.len());
                        assert!(at.planned > at.parts);
                        out.push(p.iter().map(|x| x.to_u64()).collect());
                        Ok(())
                    },
                )
            })
            .unwrap();
        assert_eq!(summary.parts, out.len());
        out
    }

    fn check(text: &[u8], v: usize, max_part: usize) {
        let want = naive(text);
        let got = parts::<u32>(text, v, max_part, 2);
        assert_eq!(got.concat(), want, "v {v} part {max_part} {text:?}");
        let wide = parts::<u64>(text, v, max_part, 1);
        assert_eq!(wide, got, "u64, 1 thread: v {v} part {max_part}");
        let steps = parts_drawing::<u32>(text, v, max_part, 2, SPLITTERS_MIN, true);
        assert_eq!(steps, got, "on steps: v {v} part {max_part}");
    }

    fn xorshift(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn blockwise_equals_brute_force(text in proptest::collection::vec(0u8..4, 0..600), sigma in 1u8..=4) {
            let text: Vec<u8> = text.into_iter().map(|c| c % sigma).collect();
            let n = text.len().max(1);
            for v in [4, 8, 64] {
                for max_part in [1, 2, 7, n] {
                    check(&text, v, max_part);
                }
            }
        }

        #[test]
        fn sample_order_and_comparison(text in proptest::collection::vec(0u8..4, 0..120), sigma in 1u8..=4) {
            let text: Vec<u8> = text.into_iter().map(|c| c % sigma).collect();
            for v in [4, 8, 64] {
                check_sample(&text, v);
            }
        }
    }

    /// The sample of a group of `ranks` processes: every rank's share,
    /// then the whole from them (as every rank does after an all-gather).
    fn shared_sample(text: &PackedText, v: usize, ranks: usize) -> DcSample {
        let shares = (0..ranks)
            .map(|r| DcSample::share_sorted(text, v, ranks, r).unwrap())
            .collect();
        DcSample::from_shares(text, v, shares).unwrap()
    }

    /// A group's sample has the ranks of one process's, for any group.
    #[test]
    fn shared_sample_equals_the_sample() {
        let mut seed = 3u64;
        let mut texts = hard_texts();
        texts.push((0..5000).map(|_| (xorshift(&mut seed) % 4) as u8).collect());
        for text in texts {
            let t = PackedText::from_codes(&text);
            for v in [4, 8, 64] {
                let want = DcSample::new(&t, v).unwrap();
                for ranks in [1, 2, 3, 7] {
                    let got = shared_sample(&t, v, ranks);
                    assert_eq!(
                        got.rank,
                        want.rank,
                        "v {v}, {ranks} ranks, {} bases",
                        text.len()
                    );
                }
            }
        }
    }

    fn hard_texts() -> Vec<Vec<u8>> {
        let mut texts: Vec<Vec<u8>> = vec![vec![], vec![0], vec![3], vec![2, 2]];
        for len in [1, 2, 3, 5, 63, 64, 65, 129, 300] {
            texts.push(vec![0; len]);
        }
        let mut seed = 99u64;
        for period in [2, 3, 7, 13] {
            let unit: Vec<u8> = (0..period)
                .map(|_| (xorshift(&mut seed) % 4) as u8)
                .collect();
            for copies in [1, 10, 60] {
                texts.push(unit.iter().copied().cycle().take(period * copies).collect());
            }
        }
        // Fibonacci words.
        let (mut a, mut b) = (vec![0u8], vec![0u8, 1]);
        while b.len() < 400 {
            let next = [b.clone(), a].concat();
            a = b;
            b = next;
            texts.push(b.clone());
        }
        // Two copies of a random text (a genome with two near-identical
        // haplotypes): the sample ties in pairs.
        let unit: Vec<u8> = (0..200).map(|_| (xorshift(&mut seed) % 4) as u8).collect();
        texts.push([unit.clone(), unit].concat());
        // A long repeat with a mutation, shorter than v and longer.
        let unit: Vec<u8> = (0..150).map(|_| (xorshift(&mut seed) % 4) as u8).collect();
        let mut t = [unit.clone(), unit.clone(), unit].concat();
        t[200] ^= 1;
        texts.push(t);
        texts
    }

    /// Groups recorded as bits come back in order, batch by batch, and
    /// cleared ones are gone.
    #[test]
    fn groups_as_bits() {
        let mut g = Groups::new(200);
        let want = [
            (0u32, 2u32),
            (2, 5),
            (63, 65),
            (70, 71),
            (100, 164),
            (198, 200),
        ];
        for &(a, b) in &want {
            g.mark(a as usize, b as usize);
        }
        let all: Vec<(u32, u32)> = want.iter().copied().filter(|&(a, b)| b - a > 1).collect();
        for batch in [1, 3, 64, 1000] {
            let (mut got, mut out, mut at) = (Vec::new(), Vec::new(), 0);
            loop {
                at = g.take(at, batch, &mut out);
                if out.is_empty() {
                    break;
                }
                // Groups are added while fewer than `batch` elements are in.
                let (a, b) = out[out.len() - 1];
                let before: u32 = out.iter().map(|&(a, b)| b - a).sum::<u32>() - (b - a);
                assert!(out.len() == 1 || (before as usize) < batch, "batch {batch}");
                got.extend_from_slice(&out);
            }
            assert_eq!(got, all, "batch {batch}");
        }
        g.clear(2, 5);
        g.clear(100, 164);
        let mut out = Vec::new();
        g.take(0, 1000, &mut out);
        assert_eq!(out, vec![(0, 2), (63, 65), (198, 200)]);
    }

    #[test]
    fn hard_texts_all_parameters() {
        for text in hard_texts() {
            let n = text.len().max(1);
            for v in [4, 8, 64, 256] {
                for max_part in [1, 2, 7, n / 3 + 1, n] {
                    check(&text, v, max_part);
                }
            }
            if text.len() <= 150 {
                check_sample(&text, 4);
                check_sample(&text, 64);
            }
        }
    }

    /// Shares of a distributed build ([`blockwise_share`]): the ranks'
    /// parts are the single-process parts, each emitted by exactly one
    /// rank (the one whose share holds its first suffix), and `zero_before`
    /// says whether suffix 0 is ranked before the part.
    #[test]
    fn shares_emit_every_part_once() {
        let mut seed = 11u64;
        let mut texts = hard_texts();
        texts.push((0..700).map(|_| (xorshift(&mut seed) % 4) as u8).collect());
        for text in texts {
            let want = naive(&text);
            let n = text.len();
            let rank0 = want.iter().position(|&p| p == 0);
            let t = PackedText::from_codes(&text);
            for (v, max_part) in [(4, 1), (8, 7), (64, 40), (64, n.max(1))] {
                let single = parts::<u32>(&text, v, max_part, 1);
                for ranks in [1usize, 2, 3, 8] {
                    let mut got: Vec<(usize, Vec<u64>)> = Vec::new();
                    for r in 0..ranks {
                        let share = n * r / ranks..n * (r + 1) / ranks;
                        let share = if r + 1 == ranks {
                            share.start..usize::MAX
                        } else {
                            share
                        };
                        crate::thread_pool(2)
                            .unwrap()
                            .install(|| {
                                blockwise_share::<u32>(
                                    &t,
                                    DcSample::new(&t, v).unwrap(),
                                    max_part,
                                    share.clone(),
                                    &mut |p, at| {
                                        assert!(
                                            share.contains(&at.before),
                                            "rank {r}: part at {}",
                                            at.before
                                        );
                                        assert_eq!(
                                            at.zero_before,
                                            rank0.is_some_and(|z| z < at.before)
                                        );
                                        got.push((
                                            at.before,
                                            p.iter().map(|&x| u64::from(x)).collect(),
                                        ));
                                        Ok(())
                                    },
                                )
                            })
                            .unwrap();
                    }
                    got.sort();
                    let parts: Vec<Vec<u64>> = got.into_iter().map(|(_, p)| p).collect();
                    assert_eq!(
                        parts, single,
                        "v {v} part {max_part} ranks {ranks} {text:?}"
                    );
                }
            }
        }
    }

    /// Few splitters per split: pieces over `max_part` are split again.
    #[test]
    fn pieces_split_again() {
        let mut seed = 5u64;
        let mut texts = hard_texts();
        for (len, sigma) in [(300, 4), (500, 2), (257, 1), (400, 3)] {
            texts.push(
                (0..len)
                    .map(|_| (xorshift(&mut seed) % sigma) as u8)
                    .collect(),
            );
        }
        for text in texts {
            let want = naive(&text);
            for v in [4, 64] {
                for max_part in [1, 2, 7, 40] {
                    let one = parts_drawing::<u32>(&text, v, max_part, 1, 2, false);
                    assert_eq!(one.concat(), want, "v {v} part {max_part} {text:?}");
                    let two = parts_drawing::<u64>(&text, v, max_part, 3, 3, false);
                    assert_eq!(two.concat(), want, "u64 v {v} part {max_part}");
                    let steps = parts_drawing::<u64>(&text, v, max_part, 2, 2, true);
                    assert_eq!(steps, one, "on steps, u64 v {v} part {max_part}");
                }
            }
        }
    }

    #[test]
    fn parts_do_not_depend_on_threads() {
        let mut seed = 7u64;
        let mut text: Vec<u8> = (0..50_000)
            .map(|_| (xorshift(&mut seed) % 4) as u8)
            .collect();
        // A few long repeats.
        let copy = text[1000..6000].to_vec();
        text[20_000..25_000].copy_from_slice(&copy);
        text[40_000..45_000].copy_from_slice(&copy);
        let want: Vec<u64> = crate::sa::libsais::<u64>(&text, 1)
            .unwrap()
            .as_slice()
            .to_vec();
        for (v, max_part) in [(8, 20_000), (64, 3_000), (256, 777)] {
            let one = parts::<u32>(&text, v, max_part, 1);
            let three = parts::<u32>(&text, v, max_part, 3);
            assert_eq!(one, three, "v {v} part {max_part}");
            assert_eq!(one.concat(), want, "v {v} part {max_part}");
        }
    }
}
