//! Gapped alignment (`--end-to-end`, `--local`): a read's seeds on both
//! strands ([`crate::seed`]) → located, chained → each chain's locus
//! extended ([`crate::align`]) → duplicates dropped, best first → primary,
//! MAPQ, XS, supplementary parts (local) → records. Pairs: each mate's
//! alignments, the other mate rescued in the insert window of each good
//! alignment, then the best proper pair by summed score against the best
//! unpaired placement less [`PEN_UNPAIRED`].

use crate::align::{self, Mode, Scoring};
use crate::dna;
use crate::fm::FmIndex;
use crate::index::Index;
use crate::pair::{Orientation, Window};
use crate::read::{Hit, ReadView, base_name};
use crate::sam::{self, Aligned, AlignedFields, MateCigar, MateFields};
use crate::seed::{self, Anchor, Seed};

use super::*;

/// Reference bases added on each side of a chain's diagonal: the longest
/// net indel an alignment can have.
const BAND: u64 = 32;

/// Anchors of one chain extended at most (see [`align_seeded`]).
const EXTEND_PER_CHAIN: usize = 3;

/// Candidates whose local score is more than this many mismatches' worth
/// below the best candidate's are not extended in full: as second-best
/// alignments they would leave MAPQ above 30 anyway.
const EXTEND_MARGIN_MISMATCHES: i32 = 6;

/// Chains extended per read at most.
const MAX_CHAINS: usize = 100;

/// Chains lighter than this fraction of the heaviest are not extended.
const CHAIN_DROP: f64 = 0.3;

/// Rows located for a read whose seeds are all repeats.
const REPEAT_SAMPLE: u64 = 10;

/// What an unpaired placement of the mates costs against a proper pair, in
/// mismatches (bwa mem's 17 at its scores).
const PEN_UNPAIRED_MISMATCHES: i32 = 3;

/// MAPQ of a unique alignment far above any other.
pub const MAPQ_MAX: u8 = 60;

/// Mate rescue looks at most this far either side of the aligned mate
/// (however large `-X` is).
const RESCUE_SPAN: u64 = 2000;

/// Alignments of a mate tried as anchors of a mate rescue (bwa mem: 50).
/// With 3, a pair whose mates each had 5 tied alignments on chr20 missed
/// its true placement and took a wrong one at MAPQ 30; 10 costs 2–9% of
/// the time of 150-base wgsim pairs (50: up to 27%) for the same placements.
const RESCUE_FROM: usize = 10;

/// Reference codes (0..=3, 4 in holes) of `contig` over `start..end`.
pub(super) fn ref_window(index: &Index, contig: u32, start: u64, end: u64) -> Vec<u8> {
    let mut out = vec![dna::NO_BASE; (end - start) as usize];
    let segs = &index.segments.0;
    let pac = index.pac();
    let mut k = segs.partition_point(|s| (s.contig, s.contig_start + s.len) <= (contig, start));
    while let Some(s) = segs.get(k) {
        if s.contig != contig || s.contig_start >= end {
            break;
        }
        let lo = s.contig_start.max(start);
        let hi = (s.contig_start + s.len).min(end);
        for p in lo..hi {
            out[(p - start) as usize] = dna::packed_base(pac, s.text_start + (p - s.contig_start));
        }
        k += 1;
    }
    out
}

/// Seeds searched in lockstep (see [`seed::greedy_seeds_many`]).
const SEED_LANES: usize = 32;

/// The gapped alignments of each read of a chunk (see [`align_seeded`]):
/// the seeds of all of them searched in lockstep first.
pub(super) fn align_reads(
    index: &Index,
    fm: &FmIndex<'_>,
    mode: Mode,
    reads: &[ReadView<'_>],
) -> Vec<Vec<Aligned>> {
    let codes: Vec<[Vec<u8>; 2]> = reads
        .iter()
        .map(|r| {
            let fwd = dna::codes(r.seq);
            let rc = dna::reverse_complement(&fwd);
            [fwd, rc]
        })
        .collect();
    let jobs: Vec<&[u8]> = codes.iter().flat_map(|c| [&c[0][..], &c[1][..]]).collect();
    let mut seeds = seed::greedy_seeds_many(fm, &jobs, seed::MIN_SEED, SEED_LANES).into_iter();
    reads
        .iter()
        .zip(&codes)
        .map(|(r, c)| {
            let s = [
                seeds.next().expect("two per read"),
                seeds.next().expect("two per read"),
            ];
            align_seeded(index, fm, mode, r, c, s)
        })
        .collect()
}

/// Seeds of at least this many bases with at most [`RESEED_MAX_ROWS`]
/// rows are searched again from their middle when the read also has a
/// repeated seed (bwa mem's re-seeding, `-r 1.5`).
const RESEED_MIN_LEN: u32 = 2 * seed::MIN_SEED as u32;

/// See [`RESEED_MIN_LEN`] (bwa mem's `split_width`).
const RESEED_MAX_ROWS: u64 = 10;

/// A read in a repeat (one of its seeds has more than
/// [`RESEED_MAX_ROWS`] rows) may match its true copy by a shorter exact
/// match than a wrong copy's long one, which the greedy cover then never
/// tries. For each long rare seed `[s, e)` of such a read, the longest
/// match ending at its middle is added when it is at least
/// [`seed::MIN_SEED`] long and has more rows than the seed (other copies).
fn reseed(fm: &FmIndex<'_>, codes: [&Vec<u8>; 2], seeds: &mut [Vec<Seed>; 2]) {
    if !seeds
        .iter()
        .flatten()
        .any(|s| s.rows.len() > RESEED_MAX_ROWS)
    {
        return;
    }
    for (k, v) in seeds.iter_mut().enumerate() {
        for i in 0..v.len() {
            let x = v[i];
            if x.len < RESEED_MIN_LEN || x.rows.len() > RESEED_MAX_ROWS {
                continue;
            }
            let end = (x.qpos + x.len / 2) as usize + seed::MIN_SEED / 2;
            let (start, iv) = seed::longest_ending(fm, codes[k], end);
            if end - start >= seed::MIN_SEED && iv.len() > x.rows.len() {
                v.push(Seed {
                    qpos: start as u32,
                    len: (end - start) as u32,
                    rows: iv,
                });
            }
        }
    }
}

/// The gapped alignments of a read given its codes and seeds on both
/// strands, best first (ties in reference order), none scoring below the
/// mode's minimum, no two at one locus.
fn align_seeded(
    index: &Index,
    fm: &FmIndex<'_>,
    mode: Mode,
    read: &ReadView<'_>,
    [fwd, rc]: &[Vec<u8>; 2],
    mut seeds: [Vec<Seed>; 2],
) -> Vec<Aligned> {
    let m = read.seq.len();
    if m == 0 {
        return Vec::new();
    }
    let strands = [fwd, rc];
    let quals = Quals::new(read.qual, mode);
    if seeds.iter().all(Vec::is_empty) {
        // No piece of the greedy cover was a seed: every maximal match.
        for (k, codes) in strands.iter().enumerate() {
            seed::maximal_seeds(fm, codes, seed::MIN_SEED, &mut seeds[k]);
        }
    }
    reseed(fm, [fwd, rc], &mut seeds);
    let seeds = &seeds;
    let rare = seeds
        .iter()
        .flatten()
        .any(|s| s.rows.len() <= seed::MAX_OCC);
    // Repeats only: a few rows of the longest seed (the same ones every run).
    let longest = seeds
        .iter()
        .enumerate()
        .flat_map(|(s, v)| v.iter().map(move |x| (s, *x)))
        .max_by_key(|(s, x)| (x.len, std::cmp::Reverse(*s), std::cmp::Reverse(x.qpos)));
    let mut wanted: Vec<(usize, Seed, u64)> = Vec::new();
    for (s, v) in seeds.iter().enumerate() {
        for x in v {
            if x.rows.len() <= seed::MAX_OCC {
                wanted.extend((x.rows.lo..x.rows.hi).map(|r| (s, *x, r)));
            }
        }
    }
    if !rare && let Some((s, x)) = longest {
        let step = (x.rows.len() / REPEAT_SAMPLE).max(1);
        wanted.extend((0..REPEAT_SAMPLE.min(x.rows.len())).map(|k| (s, x, x.rows.lo + k * step)));
    }
    let rows: Vec<u64> = wanted.iter().map(|w| w.2).collect();
    let mut pos = Vec::new();
    fm.locate_many(&rows, 16, &mut pos);
    // A seed that runs across an N run or from one contig into the next
    // (the text has neither) anchors each of its pieces long enough to be a
    // seed: the alignment then steps over the hole, or is clipped at the
    // contig's end with the rest a supplementary part, as bwa mem does.
    let mut anchors: Vec<Anchor> = Vec::with_capacity(wanted.len());
    for (&(s, x, _), &p) in wanted.iter().zip(&pos) {
        let pieces = index.segments.pieces(p, u64::from(x.len));
        for (off, len, contig, rpos) in pieces {
            if len < u64::from(x.len) && len < seed::MIN_SEED as u64 {
                continue;
            }
            anchors.push(Anchor {
                rev: s == 1,
                contig,
                rpos,
                qpos: x.qpos + off as u32,
                len: len as u32,
            });
        }
    }
    let chains = seed::chain(&mut anchors, m as u64 + BAND);
    let Some(top) = chains.first() else {
        return Vec::new();
    };
    let floor = (f64::from(top.weight) * CHAIN_DROP) as u32;
    let mut out: Vec<Aligned> = Vec::new();
    // Candidates: the chains' longest anchors (up to EXTEND_PER_CHAIN of
    // each, longest first; a chain can join two copies of a tandem repeat),
    // one per diagonal and strand, ranked by their local score without
    // traceback.
    let mut cands: Vec<(i32, Anchor, u64, Vec<u8>)> = Vec::new();
    let mut seen: Vec<(bool, u32, i64)> = Vec::new();
    for c in chains.iter().take(MAX_CHAINS) {
        if c.weight < floor {
            break;
        }
        let mut anchors = c.anchors.clone();
        anchors.sort_by_key(|a| (std::cmp::Reverse(a.len), a.qpos));
        for a in anchors.into_iter().take(EXTEND_PER_CHAIN) {
            let key = (a.rev, a.contig, a.diagonal());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let contig_len = index.layout.contigs[a.contig as usize].len;
            let diag = a.diagonal();
            let start = (diag - BAND as i64).max(0) as u64;
            let end = ((diag + m as i64 + BAND as i64).max(0) as u64).min(contig_len);
            if start >= end {
                continue;
            }
            let window = ref_window(index, a.contig, start, end);
            let skip = skip_before(diag, m, mode);
            let ub = align::local_score(&strands[usize::from(a.rev)][skip..], &window, mode);
            cands.push((ub, a, start, window));
        }
    }
    cands.sort_by_key(|c| std::cmp::Reverse(c.0));
    let best = cands.first().map_or(0, |c| c.0);
    let sc = Scoring::of(mode);
    let margin = EXTEND_MARGIN_MISMATCHES * (sc.matched + sc.mismatch);
    let min = Scoring::min_score(mode, m);
    let mut pruned = Vec::new();
    for (ub, a, start, window) in cands {
        if ub < best - margin {
            pruned.push((a, start, window));
            continue;
        }
        // An anchor an alignment already found aligns the same way adds
        // nothing.
        let covered = out
            .iter()
            .any(|x| x.rev == a.rev && x.contig == a.contig && ref_at(x, a.qpos) == Some(a.rpos));
        if covered {
            continue;
        }
        let codes = strands[usize::from(a.rev)];
        let at = Place {
            contig: a.contig,
            start,
            rev: a.rev,
            skip: skip_before(a.diagonal(), m, mode),
        };
        out.extend(extend_at(codes, &window, at, mode, &quals, min));
    }
    // Local: a low-scoring candidate for a part of the read the best
    // alignment leaves out (a chimeric read's other part) is extended too.
    if mode == Mode::Local
        && let Some(p) = out.iter().max_by_key(|x| x.score)
    {
        let (ps, pe) = read_span(p, m as u32);
        let mut extra = Vec::new();
        for (a, start, window) in pruned {
            let (s, e) = if a.rev {
                (m as u32 - a.qpos - a.len, m as u32 - a.qpos)
            } else {
                (a.qpos, a.qpos + a.len)
            };
            let overlap = pe.min(e).saturating_sub(ps.max(s));
            if 2 * overlap > a.len || extra.len() >= EXTEND_PER_CHAIN {
                continue;
            }
            let codes = strands[usize::from(a.rev)];
            let at = Place {
                contig: a.contig,
                start,
                rev: a.rev,
                skip: skip_before(a.diagonal(), m, mode),
            };
            extra.extend(extend_at(codes, &window, at, mode, &quals, min));
        }
        out.extend(extra);
    }
    dedup(&mut out);
    out
}

/// The reference position `x` aligns read base `qpos` (SEQ coordinates)
/// to, if it aligns it.
fn ref_at(x: &Aligned, qpos: u32) -> Option<u64> {
    let (mut q, mut r) = (0u32, x.pos);
    for &(op, n) in &x.cigar {
        match op {
            align::Op::Soft | align::Op::Ins => {
                if qpos < q + n {
                    return None;
                }
                q += n;
            }
            align::Op::Del => r += u64::from(n),
            align::Op::Match => {
                if qpos < q + n {
                    return Some(r + u64::from(qpos - q));
                }
                q += n;
                r += u64::from(n);
            }
        }
    }
    None
}

/// Where a reference window lies: contig, first position, strand.
#[derive(Clone, Copy)]
struct Place {
    contig: u32,
    start: u64,
    rev: bool,
    /// Read bases left out of the alignment and soft-clipped: those that
    /// would lie before the contig's first base ([`skip_before`]).
    skip: usize,
}

/// Read bases (local mode) that lie before the contig's start on the
/// diagonal `diag` (contig position minus read position), for a window cut
/// at the contig's start: they cannot align there, and leaving them out
/// keeps the read's path at the window's corner, where the aligner's first
/// block starts (a path `-diag` bases down the read from it is beyond that
/// block, and the aligner found only its tail). End-to-end aligns every
/// base, so nothing is left out.
fn skip_before(diag: i64, m: usize, mode: Mode) -> usize {
    if mode == Mode::Local && diag < 0 {
        (diag.unsigned_abs() as usize).min(m)
    } else {
        0
    }
}

/// `codes` (the read on strand `at.rev`) extended in `window`: the
/// alignment, AS by `quals`, if it scores at least `min`.
fn extend_at(
    codes: &[u8],
    window: &[u8],
    at: Place,
    mode: Mode,
    quals: &Quals,
    min: i32,
) -> Option<Aligned> {
    let skip = at.skip;
    let part = &codes[skip..];
    let e = align::extend(part, window, mode)?;
    let score = if skip == 0 {
        quals.score(codes, at.rev, window, &e, mode)
    } else {
        e.score
    };
    let mut cigar = e.cigar;
    if skip > 0 {
        match cigar.first_mut() {
            Some((align::Op::Soft, n)) => *n += skip as u32,
            _ => cigar.insert(0, (align::Op::Soft, skip as u32)),
        }
    }
    (score >= min).then(|| Aligned {
        contig: at.contig,
        pos: at.start + e.ref_start as u64,
        rev: at.rev,
        score,
        cigar,
        nm: e.nm,
        md: e.md,
    })
}

/// Base qualities for quality-aware scores (end-to-end), per strand.
struct Quals {
    /// As given and reversed (the reverse strand's SEQ order); empty when
    /// scores do not use them.
    fwd: Vec<u8>,
    rev: Vec<u8>,
}

impl Quals {
    fn new(qual: Option<&[u8]>, mode: Mode) -> Quals {
        match qual {
            Some(q) if Scoring::of(mode).quality_aware => Quals {
                fwd: q.to_vec(),
                rev: q.iter().rev().copied().collect(),
            },
            _ => Quals {
                fwd: Vec::new(),
                rev: Vec::new(),
            },
        }
    }

    /// AS of `e`: rescored by quality when the mode charges by it.
    fn score(
        &self,
        codes: &[u8],
        rev: bool,
        window: &[u8],
        e: &align::Extended,
        mode: Mode,
    ) -> i32 {
        let q = if rev { &self.rev } else { &self.fwd };
        if q.len() != codes.len() {
            return e.score;
        }
        align::score_with_quality(codes, q, window, e.ref_start, &e.cigar, &Scoring::of(mode))
    }
}

/// Best first, ties in reference order; an alignment that aligns its first
/// or middle aligned read base where a better one does (the same path,
/// found from two anchors) is dropped. Alignments of the read to two copies
/// of a tandem repeat both stay: they are alternatives (XS, MAPQ).
fn dedup(alns: &mut Vec<Aligned>) {
    alns.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then_with(|| (a.contig, a.pos, a.rev).cmp(&(b.contig, b.pos, b.rev)))
    });
    let mut kept: Vec<Aligned> = Vec::with_capacity(alns.len());
    for a in alns.drain(..) {
        let len: u32 = a.cigar.iter().filter(|o| o.0.reads()).map(|o| o.1).sum();
        let (first, clip_end) = align::clips(&a.cigar);
        let last = len - clip_end;
        let probes = [first, (first + last) / 2];
        let dup = kept.iter().any(|k| {
            k.rev == a.rev
                && k.contig == a.contig
                && probes
                    .iter()
                    .any(|&q| ref_at(&a, q).is_some() && ref_at(k, q) == ref_at(&a, q))
        });
        if !dup {
            kept.push(a);
        }
    }
    *alns = kept;
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
fn pair_mapq(mode: Mode, best: i32, next: Option<i32>) -> u8 {
    let Some(next) = next else {
        return MAPQ_MAX;
    };
    let sc = Scoring::of(mode);
    let q = 30.0 * f64::from(best - next) / f64::from(sc.matched + sc.mismatch);
    q.round().clamp(0.0, f64::from(MAPQ_MAX)) as u8
}

/// Read bases an alignment covers, in the read's own orientation.
fn read_span(a: &Aligned, len: u32) -> (u32, u32) {
    let (clip_start, clip_end) = align::clips(&a.cigar);
    let (s, e) = (clip_start, len - clip_end);
    if a.rev { (len - e, len - s) } else { (s, e) }
}

/// The alignment (index) that covers most of what `primary` leaves clipped:
/// at least [`seed::MIN_SEED`] bases, overlapping it on the read by at most
/// half of its own aligned bases.
fn supplementary(alns: &[Aligned], primary: usize, len: u32) -> Option<usize> {
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
fn primary_of(alns: &[Aligned], hash: u64) -> usize {
    let ties = alns.iter().take_while(|a| a.score == alns[0].score).count();
    (hash % ties as u64) as usize
}

/// Whether `a` and `b` align the same part of a read of `len` bases: they
/// overlap on the read by at least half of the shorter one's aligned bases
/// (bwa mem's mask level). A chimeric read's other part is not an
/// alternative to this one.
fn same_part(a: &Aligned, b: &Aligned, len: u32) -> bool {
    let (sa, ea) = read_span(a, len);
    let (sb, eb) = read_span(b, len);
    let ov = ea.min(eb).saturating_sub(sa.max(sb));
    2 * ov >= (ea - sa).min(eb - sb)
}

/// XS and the count of others scoring it, for the alignment `chosen` of a
/// read of `len` bases: the best of the others that align the same part.
fn second_of(alns: &[Aligned], chosen: usize, len: u32) -> (Option<i32>, usize) {
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

/// MAPQ of `alns[chosen]` as a single read.
fn single_mapq(mode: Mode, len: usize, alns: &[Aligned], chosen: usize) -> u8 {
    let (xs, n) = second_of(alns, chosen, len as u32);
    gapped_mapq(mode, len, alns[chosen].score, xs, n)
}

/// A mate's pair fields at one of its alignments, a secondary one (`true`)
/// or not.
type MateAt<'f, 'm> = dyn Fn(&Aligned, bool) -> MateFields<'m> + 'f;

/// The records of one read given its alignments, the one chosen as primary
/// and its MAPQ, and (for a mate) its pair fields at an alignment, a
/// secondary one (`true`) or not.
#[allow(clippy::too_many_arguments)]
fn write_read<'m>(
    out: &mut Vec<u8>,
    read: &ReadView<'_>,
    alns: &[Aligned],
    chosen: usize,
    mapq: u8,
    mode: Mode,
    cfg: &MapConfig,
    layout: &crate::reference::Layout,
    mate: Option<&MateAt<'_, 'm>>,
) -> usize {
    let len = read.seq.len() as u32;
    let p = &alns[chosen];
    let (xs, _) = second_of(alns, chosen, len);
    let supp = (mode == Mode::Local && cfg.report == Report::Best)
        .then(|| supplementary(alns, chosen, len))
        .flatten();
    let supp_q = supp.map(|k| single_mapq(mode, len as usize, alns, k).min(mapq));
    let mut sa = Vec::new();
    if let (Some(k), Some(q)) = (supp, supp_q) {
        sam::push_sa_entry(&mut sa, &alns[k], q, layout);
    }
    // XA: the other alignments within a fifth of the score range of the
    // primary, when there are at most --max-xa of them (default mode only).
    let sc = Scoring::of(mode);
    let range = sc.perfect(len as usize) - Scoring::min_score(mode, len as usize);
    let near: Vec<&Aligned> = alns
        .iter()
        .enumerate()
        .filter(|&(k, a)| {
            k != chosen
                && Some(k) != supp
                && same_part(a, p, len)
                && 5 * (p.score - a.score) <= range
        })
        .map(|(_, a)| a)
        .collect();
    let mut xa = Vec::new();
    if cfg.report == Report::Best && near.len() <= cfg.max_xa {
        for a in near {
            sam::push_xa_entry(&mut xa, a, layout);
        }
    }
    let fields = AlignedFields {
        flag: 0,
        mapq,
        xs,
        sa: &sa,
        xa: &xa,
    };
    let m = mate.map(|f| f(p, false));
    sam::push_aligned(out, read, p, fields, m.as_ref(), layout);
    let mut written = 1;
    if let (Some(k), Some(q)) = (supp, supp_q) {
        let mut sa = Vec::new();
        sam::push_sa_entry(&mut sa, p, mapq, layout);
        let a = &alns[k];
        // A part of the primary: the pair's flags, as bwa mem.
        let m = mate.map(|f| f(a, false));
        let fields = AlignedFields {
            // -M (bwa's): the shorter part as secondary, for tools that
            // predate supplementary records (old Picard).
            flag: if cfg.split_secondary { 0x100 } else { 0x800 },
            mapq: q,
            xs: None,
            sa: &sa,
            xa: &[],
        };
        sam::push_aligned(out, read, a, fields, m.as_ref(), layout);
        written += 1;
    }
    let extra = match cfg.report {
        Report::Best => 0,
        Report::UpTo(n) => n.saturating_sub(1),
        Report::All => usize::MAX,
    };
    for (_, a) in alns
        .iter()
        .enumerate()
        .filter(|&(k, _)| k != chosen)
        .take(extra)
    {
        let m = mate.map(|f| f(a, true));
        let fields = AlignedFields {
            flag: 0x100,
            mapq: 0,
            xs: None,
            sa: &[],
            xa: &[],
        };
        sam::push_aligned(out, read, a, fields, m.as_ref(), layout);
        written += 1;
    }
    written
}

/// Appends the records of a single read; returns how many are mapped.
pub(super) fn format_single(
    out: &mut Vec<u8>,
    read: &ReadView<'_>,
    alns: &[Aligned],
    mode: Mode,
    cfg: &MapConfig,
    index: &Index,
) -> usize {
    if alns.is_empty() {
        sam::push_unmapped(out, read);
        return 0;
    }
    let chosen = primary_of(alns, name_hash(read.name));
    let q = single_mapq(mode, read.seq.len(), alns, chosen);
    write_read(out, read, alns, chosen, q, mode, cfg, &index.layout, None)
}

/// `a` as the pair module's hit (position, strand, contig).
fn as_hit(a: &Aligned) -> Hit {
    Hit {
        nm: 0,
        contig: a.contig,
        pos: a.pos,
        rev: a.rev,
        text_pos: 0,
    }
}

/// The fragment two alignments form in orientation `o`, if any.
fn fragment(a: &Aligned, b: &Aligned, o: Orientation) -> Option<u64> {
    crate::pair::fragment(&as_hit(a), a.span(), &as_hit(b), b.span(), o)
}

/// [`fragment`] of a mate's alignment `own` with its mate's `mate`
/// (`first`: `own` is of mate 1).
fn fragment_of(first: bool, own: &Aligned, mate: &Aligned, o: Orientation) -> Option<u64> {
    crate::pair::fragment_of(
        first,
        &as_hit(own),
        own.span(),
        &as_hit(mate),
        mate.span(),
        o,
    )
}

/// Mate rescue: for each of the best alignments of `have`, aligns `seq` in
/// the insert window around it (both sides, the strand the orientation
/// wants) unless `other` already has an alignment there; new alignments are
/// added to `other`.
#[allow(clippy::too_many_arguments)]
fn rescue(
    index: &Index,
    mode: Mode,
    have: &[Aligned],
    other: &mut Vec<Aligned>,
    read: &ReadView<'_>,
    o: Orientation,
    w: Window,
    first_is_have: bool,
) {
    let fwd = dna::codes(read.seq);
    let rc = dna::reverse_complement(&fwd);
    let quals = Quals::new(read.qual, mode);
    let mut added = false;
    for a in have.iter().take(RESCUE_FROM) {
        if a.score < have[0].score - 2 * Scoring::of(mode).mismatch {
            break;
        }
        let paired = other
            .iter()
            .any(|b| w.fits(fragment_of(first_is_have, a, b, o)));
        if paired {
            continue;
        }
        let rev = match o {
            Orientation::Ff => a.rev,
            _ => !a.rev,
        };
        let contig_len = index.layout.contigs[a.contig as usize].len;
        let span = w.max.min(RESCUE_SPAN);
        let start = a.pos.saturating_sub(span);
        let end = (a.end() + span).min(contig_len);
        if start >= end {
            continue;
        }
        let window = ref_window(index, a.contig, start, end);
        let codes = if rev { &rc } else { &fwd };
        let at = Place {
            contig: a.contig,
            start,
            rev,
            skip: 0,
        };
        if let Some(x) = extend_at(
            codes,
            &window,
            at,
            mode,
            &quals,
            rescue_min(mode, codes.len()),
        ) {
            other.push(x);
            added = true;
        }
    }
    if added {
        dedup(other);
    }
}

/// The least score of a mate found by rescue: in `--local` a seed's length
/// in matches (19, what bwa mem asks of a rescued mate: inside the insert
/// window a 19-base match is no chance hit), below the minimum of 30 a read
/// aligned alone needs; end to end the mode's minimum.
fn rescue_min(mode: Mode, len: usize) -> i32 {
    let min = Scoring::min_score(mode, len);
    match mode {
        Mode::Local => min.min(seed::MIN_SEED as i32 * Scoring::of(mode).matched),
        Mode::EndToEnd => min,
    }
}

/// Pairs considered per mate.
const PAIR_TOP: usize = 256;

/// What [`format_pair`] wrote.
pub(super) struct PairOut {
    pub(super) mate1: usize,
    pub(super) mate2: usize,
    pub(super) proper: bool,
    /// Proper pairs found (0 when the mates are placed apart).
    pub(super) pairs_found: u64,
    /// Alignments of each mate (rescued ones included).
    pub(super) alns1: u64,
    pub(super) alns2: u64,
}

/// Rescues, pairs and writes the records of a pair.
#[allow(clippy::too_many_arguments)]
pub(super) fn format_pair(
    out: &mut Vec<u8>,
    r1: &ReadView<'_>,
    r2: &ReadView<'_>,
    mut a1: Vec<Aligned>,
    mut a2: Vec<Aligned>,
    mode: Mode,
    cfg: &MapConfig,
    pairing: &PairConfig,
    w: Window,
    index: &Index,
) -> PairOut {
    let o = pairing.orientation;
    let name = base_name(r1.name);
    let v1 = ReadView { name, ..*r1 };
    let v2 = ReadView { name, ..*r2 };
    let hash = name_hash(name);
    if !a1.is_empty() {
        rescue(index, mode, &a1, &mut a2, r2, o, w, true);
    }
    if !a2.is_empty() {
        rescue(index, mode, &a2, &mut a1, r1, o, w, false);
    }
    // The best proper pair by summed score (ties by the name), and the next.
    let mut pairs: Vec<(i32, usize, usize)> = Vec::new();
    for (i, x) in a1.iter().enumerate().take(PAIR_TOP) {
        for (j, y) in a2.iter().enumerate().take(PAIR_TOP) {
            if w.fits(fragment(x, y, o)) {
                pairs.push((x.score + y.score, i, j));
            }
        }
    }
    pairs.sort_by(|p, q| q.0.cmp(&p.0).then_with(|| (p.1, p.2).cmp(&(q.1, q.2))));
    let sc = Scoring::of(mode);
    let pen = PEN_UNPAIRED_MISMATCHES * (sc.matched + sc.mismatch);
    let unpaired = match (a1.first(), a2.first()) {
        (Some(x), Some(y)) => Some(x.score + y.score - pen),
        _ => None,
    };
    let best = pairs
        .first()
        .filter(|p| unpaired.is_none_or(|u| p.0 >= u))
        .map(|&p| {
            let ties = pairs.iter().take_while(|q| q.0 == p.0).count();
            pairs[(hash % ties as u64) as usize]
        });
    let (l1, l2) = (r1.seq.len(), r2.seq.len());
    let (c1, c2, q1, q2) = match best {
        Some((score, i, j)) => {
            // The next placement of the pair: another proper pair, or the
            // mates apart.
            let next = pairs
                .iter()
                .filter(|p| (p.1, p.2) != (i, j))
                .map(|p| p.0)
                .chain(unpaired.filter(|&u| u < score || a1.len() + a2.len() > 2))
                .max();
            let qp = i32::from(pair_mapq(mode, score, next));
            let s1 = i32::from(single_mapq(mode, l1, &a1, i));
            let s2 = i32::from(single_mapq(mode, l2, &a2, j));
            let q = |s: i32| s.max(qp.min(s + 40)).clamp(0, i32::from(MAPQ_MAX)) as u8;
            (Some(i), Some(j), q(s1), q(s2))
        }
        None => {
            let c1 = (!a1.is_empty()).then(|| primary_of(&a1, hash));
            let c2 = (!a2.is_empty()).then(|| primary_of(&a2, hash));
            let q1 = c1.map_or(0, |c| single_mapq(mode, l1, &a1, c));
            let q2 = c2.map_or(0, |c| single_mapq(mode, l2, &a2, c));
            (c1, c2, q1, q2)
        }
    };
    let proper = best.is_some();
    let p1 = c1.map(|c| &a1[c]);
    let p2 = c2.map(|c| &a2[c]);
    // 0x2 is added per record: see `mate_fields`.
    let flags = |first: bool, mate: Option<&Aligned>| -> u16 {
        0x1 | if first { 0x40 } else { 0x80 }
            | match mate {
                None => 0x8,
                Some(m) if m.rev => 0x20,
                Some(_) => 0,
            }
    };
    let layout = &index.layout;
    let mut write = |read: &ReadView<'_>,
                     alns: &[Aligned],
                     own: Option<usize>,
                     q: u8,
                     mate: Option<&Aligned>,
                     first: bool|
     -> usize {
        let flag = flags(first, mate);
        match own {
            Some(c) => {
                let own_primary = &alns[c];
                // 0x2 on the primary (and its supplementary part) of a
                // proper pair, and on a secondary only when it and the
                // mate's primary would be a proper pair themselves.
                let proper_at = |a: &Aligned, m: &Aligned, secondary: bool| {
                    proper && (!secondary || w.fits(fragment_of(first, a, m, o)))
                };
                let mate_fields = |a: &Aligned, secondary: bool| match mate {
                    Some(m) => MateFields {
                        flag: flag | if proper_at(a, m, secondary) { 0x2 } else { 0 },
                        contig: Some(m.contig),
                        pos: m.pos,
                        tlen: if m.contig == a.contig {
                            crate::pair::tlen(a.pos, a.span(), m.pos, m.span(), first)
                        } else {
                            0
                        },
                        cigar: MateCigar::Ops(&m.cigar),
                    },
                    // Mate unmapped: placed at this read's primary.
                    None => MateFields {
                        flag,
                        contig: Some(own_primary.contig),
                        pos: own_primary.pos,
                        tlen: 0,
                        cigar: MateCigar::None,
                    },
                };
                write_read(out, read, alns, c, q, mode, cfg, layout, Some(&mate_fields))
            }
            None => {
                let place = mate.map(|m| (m.contig, m.pos));
                let mf = MateFields {
                    flag,
                    contig: place.map(|x| x.0),
                    pos: place.map_or(0, |x| x.1),
                    tlen: 0,
                    cigar: mate.map_or(MateCigar::None, |m| MateCigar::Ops(&m.cigar)),
                };
                sam::push_unmapped_mate(out, read, &mf, place, layout);
                0
            }
        }
    };
    let mate1 = write(&v1, &a1, c1, q1, p2, true);
    let mate2 = write(&v2, &a2, c2, q2, p1, false);
    PairOut {
        mate1,
        mate2,
        proper,
        pairs_found: if proper { pairs.len() as u64 } else { 0 },
        alns1: a1.len() as u64,
        alns2: a2.len() as u64,
    }
}

/// The fragment of a pair whose mates each have one alignment clearly
/// better than any other, for the insert-size estimate.
pub(super) fn unique_fragment(a1: &[Aligned], a2: &[Aligned], o: Orientation) -> Option<u64> {
    fn unique(a: &[Aligned]) -> Option<&Aligned> {
        match a {
            [x] => Some(x),
            [x, y, ..] if x.score > y.score => Some(x),
            _ => None,
        }
    }
    fragment(unique(a1)?, unique(a2)?, o)
}

/// [`super::process_batch`] for gapped modes: the same chunks, order and
/// counters; pairs estimate their window from the first batch as ungapped
/// pairs do.
#[allow(clippy::too_many_arguments)]
pub(super) fn process_batch(
    batch: &Batch,
    mates: Option<(&Batch, &PairConfig)>,
    index: &Index,
    cfg: &MapConfig,
    mode: Mode,
    bam: Option<&noodles_sam::Header>,
    window: &mut Option<Window>,
    notices: &mut Vec<String>,
    status: bool,
) -> std::io::Result<Vec<(Vec<u8>, MapStats)>> {
    let fm = index.fm();
    let finish = |out: &mut Vec<u8>, st: &mut MapStats| {
        finish_chunk(out, st, cfg, bam, status, mates.is_some())
    };
    match mates {
        None => (0..batch.len().div_ceil(CHUNK_READS))
            .into_par_iter()
            .map(|c| {
                let mut out = Vec::with_capacity(CHUNK_READS * 400);
                let mut st = MapStats::default();
                let reads: Vec<ReadView<'_>> = (c * CHUNK_READS
                    ..((c + 1) * CHUNK_READS).min(batch.len()))
                    .map(|i| batch.get(i).named_as_in_sam())
                    .collect();
                for (read, alns) in reads.iter().zip(align_reads(index, &fm, mode, &reads)) {
                    let w = format_single(&mut out, read, &alns, mode, cfg, index);
                    st.reads += 1;
                    st.bases += read.seq.len() as u64;
                    st.mapped += (w > 0) as u64;
                    st.alignments += w as u64;
                    st.summary.single(alns.len() as u64);
                }
                finish(&mut out, &mut st)?;
                Ok((out, st))
            })
            .collect(),
        Some((mates, pairing)) => {
            let per = CHUNK_READS / 2;
            let found: Vec<Vec<(Vec<Aligned>, Vec<Aligned>)>> = (0..batch.len().div_ceil(per))
                .into_par_iter()
                .map(|c| {
                    let range = c * per..((c + 1) * per).min(batch.len());
                    let reads: Vec<ReadView<'_>> = range
                        .clone()
                        .map(|i| batch.get(i))
                        .chain(range.map(|i| mates.get(i)))
                        .collect();
                    let mut alns = align_reads(index, &fm, mode, &reads);
                    let second = alns.split_off(alns.len() / 2);
                    alns.into_iter().zip(second).collect()
                })
                .collect();
            if window.is_none() {
                let want = crate::pair::ESTIMATE_PAIRS.min(batch.len());
                let pairs = found
                    .iter()
                    .flatten()
                    .take(want)
                    .map(|(a, b)| move |o| unique_fragment(a, b, o));
                let (fragments, counts) = tally_fragments(pairs, pairing.orientation);
                *window = Some(estimated_window(
                    &fragments, want, pairing, &counts, notices,
                ));
            }
            let w = window.expect("set above");
            found
                .into_par_iter()
                .enumerate()
                .map(|(c, pairs)| {
                    let mut out = Vec::with_capacity(CHUNK_READS * 400);
                    let mut st = MapStats::default();
                    for (k, (a1, a2)) in pairs.into_iter().enumerate() {
                        let (r1, r2) = (batch.get(c * per + k), mates.get(c * per + k));
                        let p =
                            format_pair(&mut out, &r1, &r2, a1, a2, mode, cfg, pairing, w, index);
                        st.reads += 2;
                        st.bases += (r1.seq.len() + r2.seq.len()) as u64;
                        st.mapped += (p.mate1 > 0) as u64 + (p.mate2 > 0) as u64;
                        st.alignments += (p.mate1 + p.mate2) as u64;
                        st.pairs += 1;
                        st.proper += u64::from(p.proper);
                        st.summary.pair(p.pairs_found, p.alns1, p.alns2);
                    }
                    finish(&mut out, &mut st)?;
                    Ok((out, st))
                })
                .collect()
        }
    }
}
