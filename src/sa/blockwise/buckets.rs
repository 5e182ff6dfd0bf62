//! Suffixes by their first bases: bucket counts, placing by bucket, and the word-by-word sort within buckets.

use std::cmp::Ordering;

use rayon::prelude::*;

use crate::dna::{PackedText, for_each_ahead};
use crate::sa::cpu::shared::SharedSlice;
use crate::sa::steps::Elem;

/// The first 32 bases from `p` as a number (the first base most
/// significant; bases past the end read as A): a smaller key is a smaller
/// suffix; equal keys decide nothing.
#[inline]
pub(super) fn key(text: &PackedText, p: usize) -> u64 {
    crate::dna::reverse_fields(text.word_at(p))
}

/// Suffixes grouped by their first `k` bases (`4^k` buckets, bases past the
/// end read as A, so a bucket's suffixes all sort after every smaller
/// bucket's): the first split of the suffixes, counted in one pass, per
/// stripe of the text (so that a later pass can place them).
pub(super) struct Buckets {
    pub(super) k: usize,
    /// Suffixes (of those counted) per bucket.
    pub(super) counts: Vec<u64>,
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
    pub(super) fn new(text: &PackedText, keep: impl Fn(usize) -> bool + Sync) -> Self {
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
    pub(super) fn stripe(&self, s: usize, n: usize) -> std::ops::Range<usize> {
        (s * self.stripe_len).min(n)..((s + 1) * self.stripe_len).min(n)
    }

    /// Suffixes counted.
    pub(super) fn total(&self) -> usize {
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
    pub(super) fn of(&self, text: &PackedText, p: usize) -> usize {
        (key(text, p) >> (64 - 2 * self.k)) as usize
    }

    /// Fills `out` with `value(p)` for the counted positions `p` (those
    /// with `keep(p)`, the same as counted) whose bucket is in `range`,
    /// ordered by bucket and by position within a bucket: one pass over the
    /// text, the stripes in parallel, each storing at its own offsets.
    pub(super) fn scatter<T: Elem>(
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
pub(super) fn sort_buckets<T: Copy + Send + Sync>(
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
pub(super) const AHEAD: usize = 16;

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
pub(super) fn levels(v: usize) -> usize {
    v.div_ceil(32)
}

/// [`key`] of the bases `32 level ..` of the suffix at `p` (0 past the end).
#[inline]
pub(super) fn key_at(text: &PackedText, p: usize, level: usize) -> u64 {
    let q = p + 32 * level;
    if q > text.len() { 0 } else { key(text, q) }
}
