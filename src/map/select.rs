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
use super::extend::{
    Exhaustive, Located, aligned_phred, best_errors, mismatch_phred, near, read_span,
};
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
/// them (bwa mem's 6 per point at its scores), less `10 log10 n` where `n`
/// counts the other placements (`others`, scores) as the next one, each
/// weighted by that phred scale's chance beside it (one alternative just
/// below the next one counts nearly 1, one a mismatch below 0.001): the
/// chance that the pair is wrong grows with the number of placements
/// nearly as good (bwa mem's `4.343 ln(n_sub + 1)`); within 0..=60.
pub(super) fn pair_mapq(
    mode: Mode,
    best: i32,
    next: Option<i32>,
    others: impl Iterator<Item = i32>,
) -> u8 {
    let Some(next) = next else {
        return MAPQ_MAX;
    };
    let sc = Scoring::of(mode);
    let per_point = 30.0 / f64::from(sc.matched + sc.mismatch);
    let n: f64 = others
        .map(|s| 10f64.powf(-per_point * f64::from(next - s) / 10.0))
        .sum();
    let q = per_point * f64::from(best - next) - 10.0 * n.max(1.0).log10();
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
/// 2026-11-28 (tenth) and (eleventh)). The others are the read's other
/// alignments of the same part and its ungapped placements with at most
/// `K` mismatches that no alignment covers, whether or not above the
/// minimum (in `--local` a 36-base read's placement with 2 mismatches
/// scores 26, under the minimum 30, yet makes the best one's place
/// doubtful); one scoring at least the best makes it 0. With `e` the best
/// alignment's errors (NM, or its distance from a perfect score in
/// mismatches, whichever is more), the chance that the true place has
/// more errors than `K` and was not found is `10^(-none/10)` with
/// `none = 10 (K + 1 − e) + 20`, 10 more from 50 bases in `--end-to-end`
/// and from 60 in `--local`, linearly from 36 ([`longer_over`]; at 36
/// bases: 50 for an exact read, 40 with one error). Then:
/// - `--end-to-end` ([`e2e_short_mapq`]): the chance that the read comes
///   from each other placement rather than the best, by its base
///   qualities, summed with that one;
/// - `--local` (scores not by quality): `e` counts the best alignment's
///   soft-clipped bases too, one error per `CLIPPED_PER_ERROR` (4, `extend/short.rs`) on top
///   of its NM, where its score counts one per 5: a read from elsewhere
///   whose part there aligns by chance shows long clips, a read from there
///   only its errors crowded near an end. With no other, `none`; else the
///   best of them `g` below (`n` of them) and `u` a mismatch's worth, the
///   chance of the others, `10^(-s/10)` with
///   `s = (25 − 4e) g / u − 4.343 ln n` (a mismatch of difference is worth
///   less the more errors the read has), summed with that of a place not
///   found, `10^(-none/10)`, times `1 + 30 n'` when `e` exceeds `K` and
///   `n'` others were seen and the read's maximal exact matches were not
///   all located ([`Exhaustive::wide`]), as in `--end-to-end`
///   ([`UNSEEN_PER_OTHER`]: the search cannot vouch for placements as
///   close as the best then, and the others show a repeat). MAPQ is that
///   sum in Phred.
///
/// [`exhaustive_k`]: super::extend::exhaustive_k
fn short_mapq(mode: Mode, len: usize, alns: &[Aligned], chosen: usize, ex: &Exhaustive) -> u8 {
    let sc = Scoring::of(mode);
    let unit = sc.matched + sc.mismatch;
    let p = &alns[chosen];
    let best = p.score;
    let same: Vec<&Aligned> = alns
        .iter()
        .enumerate()
        .filter(|&(k, a)| k != chosen && same_part(a, p, len as u32))
        .map(|(_, a)| a)
        .collect();
    let hits: Vec<&Located> = ex
        .hits
        .iter()
        .filter(|h| !alns.iter().any(|x| near(x, &h.at)))
        .collect();
    let perfect = sc.perfect(len);
    let more = |nm: u8| perfect - i32::from(nm) * unit;
    let errors = best_errors(mode, len, p);
    let longer = ((len as f64 - 36.0) / longer_over(mode)).clamp(0.0, 1.0);
    let none = 10.0 * (f64::from(ex.k) + 1.0 - errors) + 20.0 + 10.0 * longer;
    let second = (same.iter().map(|a| a.score))
        .chain(hits.iter().map(|h| h.score))
        .chain(ex.more.iter().map(|m| more(m.0)))
        .max();
    if second.is_some_and(|s| s >= best) {
        return 0;
    }
    let q = match mode {
        Mode::EndToEnd => e2e_short_mapq(p, &same, &hits, ex, errors, none),
        Mode::Local => match second {
            None => none,
            Some(second) => {
                // The others' scores, each with how many placements score it.
                let scores = || {
                    (same.iter().map(|a| (a.score, 1)))
                        .chain(hits.iter().map(|h| (h.score, 1)))
                        .chain(ex.more.iter().map(|m| (more(m.0), m.1)))
                };
                let n: u64 = scores().filter(|o| o.0 == second).map(|o| o.1).sum();
                let all: u64 = scores().map(|o| o.1).sum();
                let slope = 25.0 - 4.0 * errors;
                let seen =
                    slope * f64::from(best - second) / f64::from(unit) - 4.343 * (n as f64).ln();
                let per_other = if errors >= f64::from(ex.k) + 1.0 && !ex.wide {
                    UNSEEN_PER_OTHER
                } else {
                    0.0
                };
                let unseen = 10f64.powf(-none / 10.0) * (1.0 + per_other * all as f64);
                -10.0 * (10f64.powf(-seen / 10.0) + unseen).log10()
            }
        },
    };
    q.round().clamp(0.0, f64::from(MAPQ_MAX)) as u8
}

/// Bases over 36 by which a short read's `none` ([`short_mapq`]) has
/// gained its 10 for length: 14 in `--end-to-end` (the tenth session's
/// fit), 24 in `--local` since 2026-11-28 (twelfth), where unclipped
/// 50-base reads with no other placement were wrong 4 times in 1,095 with
/// 3 errors (Q24.4) and 3 in 118 with 4 (Q15.9), given 30 and 20 by the
/// full 10, and 60-base ones 6 in 7,531 (Q31.0) and 11 in 2,080 (Q22.8),
/// given 30 and 20 either way (wgsim's 50- and 60-base sets, old and
/// fresh).
fn longer_over(mode: Mode) -> f64 {
    match mode {
        Mode::Local => 24.0,
        Mode::EndToEnd => 14.0,
    }
}

/// How much more likely the read's unseen placements are, each, when its
/// best alignment `p` has more errors than the search covers (`K`) and it
/// has others: reads of 60 bases with 3 errors and another placement were
/// wrong at Q15 where those with none were at Q31, and 36-base ones at Q4
/// where Q19 (docs/BENCHMARKS.md, 2026-11-28 (eleventh)); so each other
/// placement seen stands for 30 more of the kind the search cannot see.
/// `--local` too, since 2026-11-28 (twelfth): there the 60-base reads of
/// two sets with 3 errors and another placement were wrong 13 times in 471
/// (Q15.6), 297 of them at MAPQ 20 or more, where those alone were at Q31.
/// Not in `--local` for a read whose maximal exact matches were all located
/// ([`Exhaustive::wide`], since 2026-11-28 (thirteenth)): the copies the
/// factor stood for share a 19-base match with the read and were looked
/// for; such reads with 3 or more errors at MAPQ 20–29 were then wrong 4
/// times in 3,716 (Q29.7) on the sixteen fitted sets. `--end-to-end` keeps
/// it: its quality-weighted odds of the others so found were too sure
/// without it (docs/BENCHMARKS.md, 2026-11-28 (thirteenth)).
const UNSEEN_PER_OTHER: f64 = 30.0;

/// [`short_mapq`] in `--end-to-end`, none of the others scoring the best's
/// `p`: the chance that the read comes from another placement rather than
/// `p`, Bayes' with each placement as likely a source, is the sum over the
/// others of `10^(-(φ - φp)/10)`, `φ` a placement's [`aligned_phred`]
/// (each mismatch the Phred of its base quality and 4.8 more, so a Q23
/// base's mismatch is 27.8 and one at Q37 41.8: bowtie2's scores, which
/// charge 4 and 5, keep less of that). Placements not located (beyond 16)
/// count as the least unlikely located one with as many mismatches (else
/// as if at the read's weakest bases). Added: the chance that the true
/// place was not found, `10^(-none/10)`, times `1 + 30 n` when `e` exceeds
/// `K` and there are `n` others ([`UNSEEN_PER_OTHER`]). MAPQ is that sum
/// in Phred.
fn e2e_short_mapq(
    p: &Aligned,
    same: &[&Aligned],
    hits: &[&Located],
    ex: &Exhaustive,
    errors: f64,
    none: f64,
) -> f64 {
    let sc = Scoring::of(Mode::EndToEnd);
    let own = aligned_phred(p, &ex.qual, &sc);
    let odds = |phred: f64| 10f64.powf(-(phred - own) / 10.0);
    let mut seen: f64 = same
        .iter()
        .map(|a| odds(aligned_phred(a, &ex.qual, &sc)))
        .sum();
    seen += hits.iter().map(|h| odds(h.phred)).sum::<f64>();
    let mut n = (same.len() + hits.len()) as u64;
    for &(nm, count) in &ex.more {
        let phred = (ex.hits.iter())
            .filter(|h| h.nm == nm)
            .map(|h| h.phred)
            .reduce(f64::min)
            .unwrap_or_else(|| {
                let mut q = ex.qual.clone();
                q.sort_unstable();
                q.iter()
                    .take(usize::from(nm))
                    .map(|&b| mismatch_phred(b))
                    .sum()
            });
        seen += count as f64 * odds(phred);
        n += count;
    }
    let per_other = if errors >= f64::from(ex.k) + 1.0 {
        UNSEEN_PER_OTHER
    } else {
        0.0
    };
    let unseen = 10f64.powf(-none / 10.0) * (1.0 + per_other * n as f64);
    -10.0 * (seen + unseen).log10()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::align::Op;
    use crate::seed::Anchor;

    fn aln(pos: u64, score: i32, nm: u32, cigar: &[(Op, u32)], md: &str) -> Aligned {
        Aligned {
            contig: 0,
            pos,
            rev: false,
            score,
            cigar: cigar.to_vec(),
            nm,
            md: md.as_bytes().to_vec(),
        }
    }

    fn located(pos: u64, len: u32, score: i32, nm: u8, phred: f64) -> Located {
        let at = Anchor {
            rev: false,
            contig: 0,
            rpos: pos,
            qpos: 0,
            len,
        };
        Located {
            at,
            score,
            nm,
            phred,
        }
    }

    /// The pair's MAPQ: 30 per mismatch's worth over the next placement
    /// (bwa mem's 6 per point in `--local`), less `10 log10 n` for `n`
    /// placements as good as the next one, those below it weighted by the
    /// same scale (a mismatch below counts 0.001).
    #[test]
    fn pair_mapq_counts_the_placements_as_good_as_the_next() {
        let l = Mode::Local;
        assert_eq!(pair_mapq(l, 72, None, std::iter::empty()), 60);
        assert_eq!(pair_mapq(l, 72, Some(67), std::iter::empty()), 30);
        assert_eq!(pair_mapq(l, 72, Some(67), [67].into_iter()), 30);
        assert_eq!(pair_mapq(l, 72, Some(72), [72, 72].into_iter()), 0);
        // Ten placements a mismatch below: 30 - 10.
        assert_eq!(pair_mapq(l, 72, Some(67), [67; 10].into_iter()), 20);
        // Twenty-seven: under 20, as bwa mem's 30 - 4.343 ln 28.
        assert_eq!(pair_mapq(l, 72, Some(67), [67; 27].into_iter()), 16);
        // One more a mismatch below the next one barely counts.
        assert_eq!(pair_mapq(l, 72, Some(67), [67, 62].into_iter()), 30);
        // End to end a mismatch's worth is 6 points.
        let e = Mode::EndToEnd;
        assert_eq!(pair_mapq(e, -6, Some(-12), [-12, -12].into_iter()), 27);
    }

    #[test]
    fn aligned_phred_reads_md_and_gaps() {
        let sc = Scoring::of(Mode::EndToEnd);
        let mut qual = vec![30u8; 10];
        qual[3] = 10;
        qual[6] = 20;
        let m = mismatch_phred;
        let mut a = aln(0, -3, 1, &[(Op::Match, 10)], "3A6");
        assert!((aligned_phred(&a, &qual, &sc) - m(10)).abs() < 1e-9);
        // On the reverse strand SEQ's base 3 is the read's base 6.
        a.rev = true;
        assert!((aligned_phred(&a, &qual, &sc) - m(20)).abs() < 1e-9);
        // A 2-base deletion: 5 + 2 * 3 points, 5 each.
        let d = aln(
            0,
            -14,
            3,
            &[(Op::Match, 5), (Op::Del, 2), (Op::Match, 5)],
            "2C2^GT5",
        );
        assert!((aligned_phred(&d, &qual, &sc) - (m(30) + 55.0)).abs() < 1e-9);
        // An inserted base (the read's base 4) is not an MD column: the
        // mismatch after it is the read's base 6.
        let i = aln(
            0,
            -12,
            2,
            &[(Op::Match, 4), (Op::Ins, 1), (Op::Match, 5)],
            "5T3",
        );
        assert!((aligned_phred(&i, &qual, &sc) - (m(20) + 40.0)).abs() < 1e-9);
        // Mismatches next to each other, and a read of 12 bases in MD.
        let q12 = vec![40u8; 12];
        let b = aln(0, -12, 2, &[(Op::Match, 12)], "10A0C0");
        assert!((aligned_phred(&b, &q12, &sc) - 2.0 * m(40)).abs() < 1e-9);
    }

    /// An exact 36-base read (searched with `K` 1) whose other placements
    /// are one mismatch away: MAPQ by the quality of the base that differs.
    #[test]
    fn e2e_short_mapq_weighs_the_differing_base() {
        let best = aln(1000, 0, 0, &[(Op::Match, 36)], "36");
        let ex = |others: &[(u64, i32, u8)]| Exhaustive {
            k: 1,
            hits: std::iter::once(located(1000, 36, 0, 0, 0.0))
                .chain(
                    others
                        .iter()
                        .map(|&(pos, s, q)| located(pos, 36, s, 1, mismatch_phred(q))),
                )
                .collect(),
            more: Vec::new(),
            qual: vec![23; 36],
            wide: false,
        };
        let q = |mode: Mode, others: &[(u64, i32, u8)]| {
            short_mapq(mode, 36, std::slice::from_ref(&best), 0, &ex(others))
        };
        // None: 40 (K + 1 = 2 errors short of a placement not found).
        assert_eq!(q(Mode::EndToEnd, &[]), 40);
        // One, at a Q23 base (4 points): 27.8 less the unseen's share.
        assert_eq!(q(Mode::EndToEnd, &[(5000, -4, 23)]), 28);
        // Six of them: 27.8 - 10 log10 6 = 20.
        let six: Vec<(u64, i32, u8)> = (0..6).map(|k| (5000 + 100 * k, -4, 23)).collect();
        assert_eq!(q(Mode::EndToEnd, &six), 20);
        // At a Q40 base (6 points): 44.8, summed with the unseen's 40.
        assert_eq!(q(Mode::EndToEnd, &[(5000, -6, 40)]), 39);
        // A placement scoring as well: 0.
        assert_eq!(q(Mode::EndToEnd, &[(5000, 0, 23)]), 0);
        // `--local` (the scores): 25 per mismatch's worth of gap.
        let local = aln(1000, 36, 0, &[(Op::Match, 36)], "36");
        let ex1 = ex(&[(5000, 31, 23)]);
        assert_eq!(short_mapq(Mode::Local, 36, &[local], 0, &ex1), 25);
    }

    /// A best alignment with more errors than the search covers: another
    /// placement seen (here by the seeds, 2 mismatches worse) drops MAPQ
    /// well under the 20 it has alone.
    #[test]
    fn e2e_short_mapq_beyond_the_search() {
        let qual = vec![30u8; 36];
        let best = aln(1000, -15, 3, &[(Op::Match, 36)], "3A10C10G10");
        let other = aln(9000, -25, 5, &[(Op::Match, 36)], "1A1C1G10T10A9");
        let ex = Exhaustive {
            k: 2,
            hits: Vec::new(),
            more: Vec::new(),
            qual,
            wide: false,
        };
        let alone = short_mapq(Mode::EndToEnd, 36, std::slice::from_ref(&best), 0, &ex);
        assert_eq!(alone, 20);
        let both = short_mapq(Mode::EndToEnd, 36, &[best, other], 0, &ex);
        assert!(both < 10, "{both}");
    }

    /// A 50-base read in `--local` with no other placement: MAPQ falls
    /// with each error of its best alignment, and a clip counts for more
    /// than its score says: 40M10S (score 40) gets less than 50M with two
    /// mismatches (score 40 too), and a longer clip less again.
    #[test]
    fn local_short_mapq_counts_clipped_bases() {
        let ex = Exhaustive {
            k: 2,
            hits: Vec::new(),
            more: Vec::new(),
            qual: vec![30; 50],
            wide: false,
        };
        let q = |a: Aligned| short_mapq(Mode::Local, 50, &[a], 0, &ex);
        let mds = ["50", "25A24", "10A20C18", "10A10C10G17", "5A10C10G10T11"];
        let by_nm: Vec<u8> = (0..5)
            .map(|nm| {
                q(aln(
                    1000,
                    50 - 5 * nm as i32,
                    nm,
                    &[(Op::Match, 50)],
                    mds[nm as usize],
                ))
            })
            .collect();
        assert!(by_nm.windows(2).all(|w| w[0] > w[1]), "{by_nm:?}");
        let clipped = |c: u32| {
            let cigar = [(Op::Match, 50 - c), (Op::Soft, c)];
            q(aln(1000, 50 - c as i32, 0, &cigar, &(50 - c).to_string()))
        };
        assert!(clipped(10) < by_nm[2], "{} {}", clipped(10), by_nm[2]);
        assert!(clipped(20) < clipped(10));
        assert!(clipped(20) < by_nm[4], "{} {}", clipped(20), by_nm[4]);
        // A clip short enough to be one mismatch near the end costs
        // no more than that mismatch inside the read.
        assert!(clipped(4) >= by_nm[1], "{} {}", clipped(4), by_nm[1]);
    }

    /// `--local`, a best alignment with more errors than the search covers
    /// (`K` 2, three mismatches): another placement seen, even 4
    /// mismatches' worth below, stands for more of the kind the search
    /// cannot see and drops MAPQ by at least 10 log10(1 + 30), unless every
    /// maximal exact match of the read was located too (`wide`): then it
    /// counts as itself, and MAPQ stays within 1 of the lesser of the
    /// read's MAPQ alone and what 4 mismatches' worth gives; within `K`,
    /// the same other changes little.
    #[test]
    fn local_short_mapq_beyond_the_search() {
        let mut ex = Exhaustive {
            k: 2,
            hits: Vec::new(),
            more: Vec::new(),
            qual: vec![30; 60],
            wide: false,
        };
        let q = |alns: &[Aligned], ex: &Exhaustive| short_mapq(Mode::Local, 60, alns, 0, ex);
        let other = aln(9000, 25, 7, &[(Op::Match, 60)], "5A5C5G5T5A5C5G18");
        let three = aln(1000, 45, 3, &[(Op::Match, 60)], "10A20C20G7");
        let alone = q(std::slice::from_ref(&three), &ex);
        let both = q(&[three.clone(), other.clone()], &ex);
        assert!(
            f64::from(both) <= f64::from(alone) - 10.0 * 31f64.log10() + 0.5,
            "{alone} {both}"
        );
        ex.wide = true;
        let wide = q(&[three.clone(), other.clone()], &ex);
        // 25 - 4 * 3 per mismatch's worth: 52.
        let seen = (25 - 4 * 3) * 4;
        assert!(
            i32::from(alone.min(seen)) - i32::from(wide) <= 1 && wide <= alone,
            "{alone} {wide}"
        );
        ex.wide = false;
        let q = |alns: &[Aligned]| q(alns, &ex);
        let one = aln(1000, 55, 1, &[(Op::Match, 60)], "30A29");
        let alone = q(std::slice::from_ref(&one));
        let both = q(&[one, other]);
        assert!(alone >= both && alone - both <= 1, "{alone} {both}");
    }

    /// `--local`, a read with one mismatch and no other placement: `none`
    /// gains its 10 for length over 36 to 60 bases, no more beyond.
    #[test]
    fn local_short_mapq_rises_with_length_to_60() {
        let q = |len: usize| {
            let ex = Exhaustive {
                k: 2,
                hits: Vec::new(),
                more: Vec::new(),
                qual: vec![30; len],
                wide: false,
            };
            let md = format!("10A{}", len - 11);
            let a = aln(1000, len as i32 - 5, 1, &[(Op::Match, len as u32)], &md);
            short_mapq(Mode::Local, len, &[a], 0, &ex)
        };
        let by_len: Vec<u8> = [36, 50, 60, 65].into_iter().map(q).collect();
        assert!(by_len[0] < by_len[1] && by_len[1] < by_len[2], "{by_len:?}");
        assert_eq!(by_len[2], by_len[3]);
        assert_eq!(by_len[0] + 10, by_len[2]);
    }
}
