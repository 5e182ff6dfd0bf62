//! The sample's ranks ([`DcSample`]): the sampled suffixes sorted exactly, and the comparison of any two suffixes they allow.

use std::cmp::Ordering;

use rayon::prelude::*;

use super::buckets::{AHEAD, Buckets, key_at, levels, sort_buckets};
use super::cover::{Cover, cover};
use crate::dna::{PackedText, for_each_ahead};
use crate::error::{Error, Result};

/// The groups of a sample's suffixes still tied, over the `m` elements of
/// its order: bit `x` of `tied` is set when element `x` is in a group of
/// two or more, bit `x` of `head` when such a group starts at `x`.
pub(super) struct Groups {
    tied: Vec<u64>,
    head: Vec<u64>,
    pub(super) m: usize,
}

impl Groups {
    pub(super) fn new(m: usize) -> Self {
        Groups {
            tied: vec![0; m.div_ceil(64)],
            head: vec![0; m.div_ceil(64)],
            m,
        }
    }

    pub(super) fn bit(v: &[u64], x: usize) -> bool {
        v[x / 64] >> (x % 64) & 1 == 1
    }

    /// Records the group `a..b` (nothing for fewer than two elements).
    pub(super) fn mark(&mut self, a: usize, b: usize) {
        if b - a < 2 {
            return;
        }
        self.head[a / 64] |= 1 << (a % 64);
        for x in a..b {
            self.tied[x / 64] |= 1 << (x % 64);
        }
    }

    /// Forgets the group `a..b`.
    pub(super) fn clear(&mut self, a: usize, b: usize) {
        self.head[a / 64] &= !(1 << (a % 64));
        for x in a..b {
            self.tied[x / 64] &= !(1 << (x % 64));
        }
    }

    /// Puts in `out` the groups from element `at` on, in order, until they
    /// hold at least `batch` elements (at least one group when there is
    /// one); returns where the next call starts.
    pub(super) fn take(&self, mut at: usize, batch: usize, out: &mut Vec<(u32, u32)>) -> usize {
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
pub(super) const REFINE_BATCH: usize = 1 << 20;

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
    pub(super) cover: Cover,
    pub(super) n: usize,
    /// Rank (1-based, all distinct) of the sampled suffix in each slot
    /// `(p / v) * |D| + index of (p mod v) in D`; 0 in slots at or past `n`.
    pub(super) rank: Vec<u32>,
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
    pub(super) fn refined_in_batches(text: &PackedText, v: usize, batch: usize) -> Result<Self> {
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
    pub(super) fn rank_at(&self, p: usize) -> u32 {
        let c = &self.cover;
        crate::sa::steps::cover_rank(
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
