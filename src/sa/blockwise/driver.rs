//! The parts: planned from the buckets, split by splitters where too large, collected, sorted and emitted in order.

use std::cmp::Ordering;

use rayon::prelude::*;

use super::buckets::{Buckets, key, key_at, levels, sort_buckets};
use super::sample::DcSample;
use super::{At, PartSorter, PartsSummary};
use crate::dna::PackedText;
use crate::error::{Error, Result};
use crate::sa::Pos;

/// Positions per chunk of a pass over the text. Fixed, so that the splitters
/// chosen do not depend on the number of threads.
const CHUNK: usize = 1 << 14;

/// Splitters a split may always draw (more when parts are larger: at most
/// `max_part`).
pub(super) const SPLITTERS_MIN: usize = 1024;

/// The suffixes `x` with a bucket in `buckets` and `lo < x <= hi` in suffix
/// order (`None`: unbounded), of which there are `count`.
#[derive(Clone, Debug)]
pub(super) struct Range {
    pub(super) buckets: std::ops::Range<usize>,
    lo: Option<usize>,
    pub(super) hi: Option<usize>,
    pub(super) count: usize,
}

impl Range {
    #[inline]
    pub(super) fn holds(&self, b: &Buckets, s: &DcSample, text: &PackedText, x: usize) -> bool {
        self.buckets.contains(&b.of(text, x))
            && self.lo.is_none_or(|l| s.cmp(text, l, x) == Ordering::Less)
            && self
                .hi
                .is_none_or(|h| s.cmp(text, x, h) != Ordering::Greater)
    }
}
/// Every part: the share of a single process.
const ALL: std::ops::Range<usize> = 0..usize::MAX;

/// A blockwise sort of a text: the suffix array (no sentinel), handed to
/// `emit` in parts of at most `max_part` positions, in order, their
/// concatenation exactly [`crate::sa::libsais`]'s array. The difference
/// cover has period `v` (a power of two from 4 to 4096); larger `v` means
/// smaller sample ranks and slower comparisons. [`Blockwise::run`] runs in
/// the current rayon pool; the parts do not depend on the number of
/// threads. See the module documentation for the method and its memory.
///
/// ```
/// use fmalign::dna::PackedText;
/// use fmalign::sa::blockwise::Blockwise;
///
/// let text = PackedText::from_codes(&[2, 0, 1, 0, 1, 0]); // GACACA
/// let mut sa = Vec::new();
/// Blockwise::<u32>::new(4, 2)
///     .run(&text, &mut |part, _| {
///         sa.extend_from_slice(part);
///         Ok(())
///     })
///     .unwrap();
/// assert_eq!(sa, [5, 3, 1, 4, 2, 0]);
/// ```
pub struct Blockwise<'s, P> {
    pub(super) v: usize,
    pub(super) max_part: usize,
    sorter: Option<&'s mut dyn PartSorter<P>>,
    pub(super) share: std::ops::Range<usize>,
    pub(super) sample: Option<DcSample>,
    pub(super) min_splitters: usize,
}

impl<'s, P: Pos> Blockwise<'s, P> {
    /// Every part, sorted by this module, the sample ranked by
    /// [`Blockwise::run`].
    pub fn new(v: usize, max_part: usize) -> Self {
        Blockwise {
            v,
            max_part,
            sorter: None,
            share: ALL,
            sample: None,
            min_splitters: SPLITTERS_MIN,
        }
    }

    /// The parts sorted by `sorter` (the same parts, the same order: only
    /// who sorts them changes).
    pub fn sorted_by(mut self, sorter: &'s mut dyn PartSorter<P>) -> Self {
        self.sorter = Some(sorter);
        self
    }

    /// For one rank of a distributed build: only the parts that start in
    /// `share` (suffix order: the part's first suffix is the
    /// `share.start`-th or later, before the `share.end`-th) are collected,
    /// sorted and handed to `emit`; the others are counted and passed over
    /// (a range larger than a part is split only when it overlaps `share`).
    /// Ranks that split `0..n` into shares emit every part exactly once, the
    /// same parts as a whole run with the same `max_part`.
    pub fn only(mut self, share: std::ops::Range<usize>) -> Self {
        self.share = share;
        self
    }

    /// The text's sample, already ranked (by [`DcSample::from_shares`] or
    /// [`DcSample::new`]) at period `v`; [`Blockwise::run`] refuses one of
    /// another text or period.
    pub fn with_sample(mut self, sample: DcSample) -> Self {
        self.sample = Some(sample);
        self
    }

    /// A split draws up to `max(min_splitters, max_part)` splitters (tests
    /// draw few, to split pieces again).
    #[cfg(test)]
    pub(super) fn min_splitters(mut self, min_splitters: usize) -> Self {
        self.min_splitters = min_splitters;
        self
    }

    /// Sorts `text` and hands `emit` each part with where it stands.
    pub fn run(
        self,
        text: &PackedText,
        emit: &mut dyn FnMut(&[P], At) -> Result<()>,
    ) -> Result<PartsSummary> {
        let Blockwise {
            v,
            max_part,
            mut sorter,
            share,
            sample,
            min_splitters,
        } = self;
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
        let mut summary = PartsSummary {
            sample_bytes: sample.bytes(),
            sample_seconds: t.elapsed().as_secs_f64(),
            ..PartsSummary::default()
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
}

/// The chunks of `0..n`.
pub(super) fn chunks(n: usize) -> impl IndexedParallelIterator<Item = std::ops::Range<usize>> {
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
    summary: &mut PartsSummary,
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
    let pieces = crate::sa::cpu::shared::split_at_ends(&mut part, &ends);
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
pub(super) fn split(
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
