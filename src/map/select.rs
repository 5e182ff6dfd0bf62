//! Choosing among a read's alignments: the primary (a hash of the name
//! among equals), MAPQ, the records shown (`-k`, `-a`, `--strata`), the
//! mate fields of an ungapped pair; for the gapped modes XS, the
//! supplementary part of a chimeric read and MAPQ from the scores.

use crate::align::{Mode, Scoring};
use crate::pair::{Orientation, Window, fragment_of};
use crate::read::{Hit, ReadView};
use crate::sam::{Aligned, MAPQ_UNIQUE};
use crate::seed;

use super::config::MapConfig;
use super::extend::{Exhaustive, near, read_span};
use super::find::{ReadHits, name_hash};

/// MAPQ of a unique alignment far above any other (gapped modes).
pub const MAPQ_MAX: u8 = 60;

/// Mapping quality from the hit counts of the best stratum (`c1`) and the
/// next one (`c2`), the best hit's mismatches and the budget `k`: bwa aln's
/// approximation (`bwa_approx_mapQ`): 0 for a repeat, 25 for a unique hit
/// that used the whole budget (k > 0), 37 for a unique hit with nothing in
/// the next stratum, else `23 - 4.343 ln c2` (at least 0).
pub fn mapq(c1: u64, c2: u64, best_nm: u8, k: u8) -> u8 {
    if c1 != 1 {
        0
    } else if k > 0 && best_nm == k {
        25
    } else if c2 == 0 {
        MAPQ_UNIQUE
    } else {
        let penalty = (4.343 * (c2.min(255) as f64).ln() + 0.5) as i64;
        (23 - penalty).max(0) as u8
    }
}

/// A read's hits as reported (best stratum only under `--strata`), its
/// single-end primary and the counts behind MAPQ.
pub(super) struct Shown<'a> {
    pub(super) hits: &'a [Hit],
    pub(super) primary: usize,
    pub(super) c1: u64,
    pub(super) c2: u64,
    /// XA may list the others.
    pub(super) xa_ok: bool,
}

pub(super) fn shown<'a>(
    read: &ReadView<'_>,
    found: &'a ReadHits,
    cfg: &MapConfig,
) -> Option<Shown<'a>> {
    match found {
        ReadHits::All(hits) if !hits.is_empty() => {
            let c1 = hits.iter().take_while(|h| h.nm == hits[0].nm).count();
            let c2 = hits[c1..]
                .iter()
                .take_while(|h| h.nm == hits[c1].nm)
                .count();
            let primary = (name_hash(read.name) % c1 as u64) as usize;
            let shown = if cfg.strata { c1 } else { hits.len() };
            Some(Shown {
                hits: &hits[..shown],
                primary,
                c1: c1 as u64,
                c2: c2 as u64,
                xa_ok: hits.len() <= cfg.max_xa,
            })
        }
        ReadHits::Sampled { hits, best, next } if !hits.is_empty() => {
            let shown = if cfg.strata {
                hits.iter().take_while(|h| h.nm == hits[0].nm).count()
            } else {
                hits.len()
            };
            Some(Shown {
                hits: &hits[..shown],
                primary: 0,
                c1: *best,
                c2: *next,
                xa_ok: false,
            })
        }
        _ => None,
    }
}

/// How the records of one mate of a pair refer to the other.
pub(super) struct PairCtx<'a> {
    /// Bits every record of this mate carries: 0x1, 0x8, 0x20, 0x40/0x80
    /// (0x2 is per record: [`PairCtx::flag_at`]).
    pub(super) flag: u16,
    /// The pairing found a proper pair (this mate's primary is in it).
    pub(super) proper: bool,
    /// Mate 1.
    pub(super) first: bool,
    /// The primary the pairing chose (an index into the shown hits).
    pub(super) primary: usize,
    /// MAPQ of the primary record.
    pub(super) mapq: u8,
    /// The other mate's primary hit and length, when it is mapped.
    pub(super) mate: Option<(&'a Hit, u64)>,
    /// What a proper pair is: orientation and fragment window.
    pub(super) rule: (Orientation, Window),
}

impl<'a> PairCtx<'a> {
    /// Mate 1 (`first`) or 2 of a pair, `proper` or not, with its primary
    /// (`own`, when mapped) and MAPQ; its mate's primary hit and length;
    /// the orientation and window of a proper pair.
    pub(super) fn new(
        first: bool,
        proper: bool,
        own: Option<usize>,
        mapq: u8,
        mate: Option<(&'a Hit, u64)>,
        rule: (Orientation, Window),
    ) -> Self {
        let flag = 0x1
            | if first { 0x40 } else { 0x80 }
            | match mate {
                None => 0x8,
                Some((h, _)) if h.rev => 0x20,
                Some(_) => 0,
            };
        PairCtx {
            flag,
            proper,
            first,
            primary: own.unwrap_or(0),
            mapq,
            mate,
            rule,
        }
    }

    /// FLAG's pair bits of this mate's record at `h` (length `len`): 0x2
    /// on the primary of a proper pair, and on a secondary only when it and
    /// the mate's primary would themselves be a proper pair (as bowtie2
    /// marks its concordant secondaries), so a secondary in a repeat copy
    /// far from the mate is not called proper.
    pub(super) fn flag_at(&self, h: &Hit, len: u64, secondary: bool) -> u16 {
        let (o, w) = self.rule;
        let fits = || {
            self.mate
                .is_some_and(|(m, mlen)| w.fits(fragment_of(self.first, h, len, m, mlen, o)))
        };
        let proper = self.proper && (!secondary || fits());
        self.flag | if proper { 0x2 } else { 0 }
    }
}

/// MAPQ of an alignment scoring `best` when another alignment of the same
/// part of the read scores `second` and `equal_second` others score that
/// too: 6 per mismatch's worth of score between them, scaled down for a
/// best alignment near the minimum, less 4.343 ln(1 + equal_second),
/// within 0..=60 (docs/ALGORITHMS.md, "MAPQ of gapped alignments"). With
/// no other alignment, `second` is the mode's minimum score, and in
/// `--local` at most 19 (a seed's length in matches, bwa mem's default
/// there: an alignment with no seed is never found, so "none above the
/// minimum" says little about a read barely longer than the minimum).
/// In `--end-to-end` the result is at most [`e2e_cap`], and with no other
/// alignment it is that cap.
pub fn gapped_mapq(
    mode: Mode,
    len: usize,
    best: i32,
    second: Option<i32>,
    equal_second: usize,
) -> u8 {
    let sc = Scoring::of(mode);
    let floor = Scoring::min_score(mode, len);
    let none = match mode {
        Mode::Local => floor.min(seed::MIN_SEED as i32 * sc.matched),
        Mode::EndToEnd => floor,
    };
    let unit = f64::from(sc.matched + sc.mismatch);
    let mut q = match (mode, second) {
        (Mode::EndToEnd, None) => e2e_cap(len, best),
        _ => {
            let second = second.map_or(none, |s| s.max(floor));
            if second >= best {
                return 0;
            }
            let mut q = 6.0 * f64::from(best - second) / unit;
            let range = f64::from(sc.perfect(len) - floor).max(1.0);
            q *= (f64::from(best - floor) / range).clamp(0.0, 1.0).sqrt();
            match mode {
                Mode::EndToEnd => q.min(e2e_cap(len, best)),
                Mode::Local => q,
            }
        }
    };
    q -= 4.343 * (1.0 + equal_second.saturating_sub(1) as f64).ln();
    q.round().clamp(0.0, f64::from(MAPQ_MAX)) as u8
}

/// The most an `--end-to-end` alignment of a read of `len` bases scoring
/// `best` can be trusted, whatever else was found: 20 per mismatch's worth
/// (6) of score above the midpoint of the minimum and a perfect score.
/// Calibrated on chr20 against simulated reads' truth (docs/BENCHMARKS.md,
/// 2026-11-24 (seventh)): a read whose best alignment lies in the lower
/// half of that range is more often a read whose true place was not found
/// (an error kills a short read's seeds) than a read with that many errors,
/// and a short read's range is narrow (36 bases: the minimum is −22), so a
/// perfect unique 36-base read, wrongly placed about 3 times in 10,000 (1%
/// errors) to 3 in 100,000 (Illumina-like), gets 37 where 6 per mismatch
/// from the minimum gave 22.
pub fn e2e_cap(len: usize, best: i32) -> f64 {
    let sc = Scoring::of(Mode::EndToEnd);
    let mid = f64::from(sc.perfect(len) + Scoring::min_score(Mode::EndToEnd, len)) / 2.0;
    20.0 * (f64::from(best) - mid) / f64::from(sc.matched + sc.mismatch)
}

/// MAPQ of a proper pair scoring `best` against the next placement of the
/// pair (`None`: there is none): 30 per mismatch's worth of score between
/// them (bwa mem's 6 per point at its scores), within 0..=60.
pub(super) fn pair_mapq(mode: Mode, best: i32, next: Option<i32>) -> u8 {
    let Some(next) = next else {
        return MAPQ_MAX;
    };
    let sc = Scoring::of(mode);
    let q = 30.0 * f64::from(best - next) / f64::from(sc.matched + sc.mismatch);
    q.round().clamp(0.0, f64::from(MAPQ_MAX)) as u8
}

/// The alignment (index) that covers most of what `primary` leaves clipped:
/// at least [`seed::MIN_SEED`] bases, overlapping it on the read by at most
/// half of its own aligned bases.
pub(super) fn supplementary(alns: &[Aligned], primary: usize, len: u32) -> Option<usize> {
    let p = &alns[primary];
    let (ps, pe) = read_span(p, len);
    if pe - ps + seed::MIN_SEED as u32 > len {
        return None;
    }
    alns.iter()
        .enumerate()
        .filter(|&(k, _)| k != primary)
        .filter(|(_, a)| {
            let (s, e) = read_span(a, len);
            let ov = pe.min(e).saturating_sub(ps.max(s));
            e - s >= seed::MIN_SEED as u32 && 2 * ov <= e - s
        })
        .map(|(k, _)| k)
        .next()
}

/// The primary among `alns` (best first): one of the best chosen by `hash`.
pub(super) fn primary_of(alns: &[Aligned], hash: u64) -> usize {
    let ties = alns.iter().take_while(|a| a.score == alns[0].score).count();
    (hash % ties as u64) as usize
}

/// Whether `a` and `b` align the same part of a read of `len` bases: they
/// overlap on the read by at least half of the shorter one's aligned bases
/// (bwa mem's mask level). A chimeric read's other part is not an
/// alternative to this one.
pub(super) fn same_part(a: &Aligned, b: &Aligned, len: u32) -> bool {
    let (sa, ea) = read_span(a, len);
    let (sb, eb) = read_span(b, len);
    let ov = ea.min(eb).saturating_sub(sa.max(sb));
    2 * ov >= (ea - sa).min(eb - sb)
}

/// XS and the count of others scoring it, for the alignment `chosen` of a
/// read of `len` bases: the best of the others that align the same part.
pub(super) fn second_of(alns: &[Aligned], chosen: usize, len: u32) -> (Option<i32>, usize) {
    let others = || {
        alns.iter()
            .enumerate()
            .filter(move |&(k, a)| k != chosen && same_part(a, &alns[chosen], len))
            .map(|(_, a)| a.score)
    };
    let xs = others().max();
    let n = xs.map_or(0, |x| others().filter(|&s| s == x).count());
    (xs, n)
}

/// MAPQ of `alns[chosen]` as a single read, `ex` what the exhaustive
/// search of a short read found ([`short_mapq`]).
pub(super) fn single_mapq(
    mode: Mode,
    len: usize,
    alns: &[Aligned],
    chosen: usize,
    ex: Option<&Exhaustive>,
) -> u8 {
    if let Some(ex) = ex {
        return short_mapq(mode, len, alns, chosen, ex);
    }
    let (xs, n) = second_of(alns, chosen, len as u32);
    gapped_mapq(mode, len, alns[chosen].score, xs, n)
}

/// MAPQ of `alns[chosen]` for a short read searched exhaustively
/// ([`exhaustive_k`] = `K`), calibrated on chr20 against simulated reads'
/// truth (docs/ALGORITHMS.md, gapped step 6; docs/BENCHMARKS.md,
/// 2026-11-28 (tenth)). The others are the read's other alignments of the
/// same part and its ungapped placements with at most `K` mismatches that
/// no alignment covers, scored ungapped whether or not above the minimum
/// (in `--local` a 36-base read's placement with 2 mismatches scores 26,
/// under the minimum 30, yet makes the best one's place doubtful). With
/// `e` the best alignment's errors (NM, or its distance from a perfect
/// score in mismatches, whichever is more):
/// - with no other, every other placement has more than `K` mismatches,
///   and what is left is the chance that the true place has more errors
///   than `K` and was not found: `10 (K + 1 − e) + 20`, 10 more from 50
///   bases (at 36 bases: 50 for an exact read, 40 with one error);
/// - with others, the best of them `g` below (`n` of them) and `u` a
///   mismatch's worth: `(25 − 4e) g / u − 4.343 ln n` (`--local`; 37 for
///   25 end-to-end, whose mismatches at Q20 cost 4 of its 6), at most the
///   above: a mismatch of difference is worth less the more errors the
///   read has; a tie is 0.
fn short_mapq(mode: Mode, len: usize, alns: &[Aligned], chosen: usize, ex: &Exhaustive) -> u8 {
    let sc = Scoring::of(mode);
    let unit = sc.matched + sc.mismatch;
    let p = &alns[chosen];
    let best = p.score;
    let mut others: Vec<(i32, u64)> = alns
        .iter()
        .enumerate()
        .filter(|&(k, a)| k != chosen && same_part(a, p, len as u32))
        .map(|(_, a)| (a.score, 1))
        .collect();
    others.extend(
        ex.hits
            .iter()
            .filter(|h| !alns.iter().any(|x| near(x, &h.0)))
            .map(|h| (h.1, 1)),
    );
    let perfect = sc.perfect(len);
    others.extend(
        ex.more
            .iter()
            .map(|&(nm, c)| (perfect - i32::from(nm) * unit, c)),
    );
    let unit = f64::from(unit);
    let errors = f64::from(p.nm).max(f64::from(perfect - best) / unit);
    let longer = ((len as f64 - 36.0) / 14.0).clamp(0.0, 1.0);
    let none = 10.0 * (f64::from(ex.k) + 1.0 - errors) + 20.0 + 10.0 * longer;
    let q = match others.iter().map(|o| o.0).max() {
        None => none,
        Some(second) if second >= best => 0.0,
        Some(second) => {
            let n: u64 = others.iter().filter(|o| o.0 == second).map(|o| o.1).sum();
            let slope = match mode {
                Mode::Local => 25.0,
                Mode::EndToEnd => 37.0,
            } - 4.0 * errors;
            let q = slope * f64::from(best - second) / unit - 4.343 * (n as f64).ln();
            q.min(none)
        }
    };
    q.round().clamp(0.0, f64::from(MAPQ_MAX)) as u8
}
