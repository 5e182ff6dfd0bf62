//! Gapped extension (`--local`, `--end-to-end`): a read's seeds on both
//! strands ([`crate::seed`]) → located, chained → each chain's locus
//! extended ([`crate::align`]) → duplicates dropped, best first.

use crate::align::{self, Mode, Scoring};
use crate::dna;
use crate::fm::{FmIndex, Interval};
use crate::index::Index;
use crate::read::ReadView;
use crate::sam::Aligned;
use crate::seed::{self, Anchor, Seed};

use super::find::VERIFY_MAX;

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

/// Reference codes (0..=3, 4 in holes) of `contig` over `start..end`.
pub(super) fn ref_window(index: &Index, contig: u32, start: u64, end: u64) -> Vec<u8> {
    index.codes(contig, start, end)
}

/// Seeds searched in lockstep (see [`seed::greedy_seeds_many`]).
const SEED_LANES: usize = 32;

/// Rows of a chunk's seeds located in lockstep ([`FmIndex::locate_many`]).
const LOCATE_LANES: usize = 32;

/// The gapped alignments of each read of a chunk (see [`align_seeded`]):
/// the seeds of all of them searched in lockstep first; for short reads
/// the exhaustive search ([`exhaustive_k`]), and for those whose best
/// alignment then has more errors than it covered every maximal exact
/// match ([`wide_anchors`]), each adding the loci it finds.
pub(super) fn align_reads(
    index: &Index,
    fm: &FmIndex<'_>,
    mode: Mode,
    reads: &[ReadView<'_>],
) -> Vec<(Vec<Aligned>, Option<Exhaustive>)> {
    let codes: Vec<[Vec<u8>; 2]> = reads
        .iter()
        .map(|r| {
            let fwd = dna::codes(r.seq);
            let rc = dna::reverse_complement(&fwd);
            [fwd, rc]
        })
        .collect();
    let jobs: Vec<&[u8]> = codes.iter().flat_map(|c| [&c[0][..], &c[1][..]]).collect();
    let mut found =
        seed::greedy_seeds_many(fm, index.pac(), &jobs, seed::MIN_SEED, SEED_LANES).into_iter();
    // What the first pass found is kept where a second one may follow.
    let mut memos: Vec<Option<Memo>> = reads
        .iter()
        .map(|r| {
            (SHORT_MIN..SHORT_READ)
                .contains(&r.seq.len())
                .then(Memo::default)
        })
        .collect();
    // The rows of every read's seeds located together, so that the LF
    // walks of many reads overlap their cache misses.
    let wanted: Vec<Vec<(usize, Seed, u64)>> = codes
        .iter()
        .map(|c| {
            let s = [
                found.next().expect("two per read"),
                found.next().expect("two per read"),
            ];
            seed_rows(fm, [&c[0], &c[1]], s)
        })
        .collect();
    let rows: Vec<u64> = wanted
        .iter()
        .flatten()
        .filter(|w| w.1.at.is_none())
        .map(|w| w.2)
        .collect();
    let mut walked = Vec::new();
    fm.locate_many(&rows, LOCATE_LANES, &mut walked);
    let mut walked = walked.into_iter();
    let pos: Vec<u64> = wanted
        .iter()
        .flatten()
        .map(|w| match w.1.at {
            Some(p) => p,
            None => walked.next().expect("one position per row"),
        })
        .collect();
    let mut pos = &pos[..];
    let mut out: Vec<(Vec<Aligned>, Option<Exhaustive>)> = reads
        .iter()
        .zip(&codes)
        .zip(&mut memos)
        .zip(&wanted)
        .map(|(((r, c), memo), w)| {
            let (here, rest) = pos.split_at(w.len());
            pos = rest;
            let anchors = seed_anchors(index, w, here);
            (
                align_seeded(index, mode, r, c, anchors, &[], memo.as_mut()),
                None,
            )
        })
        .collect();
    // Short reads not already tied at the top: the exhaustive search, and
    // its placements the seeds missed extended too. A tie with more errors
    // than the search covers is searched as well: whatever it finds is
    // better, and may share no seed with the read.
    let short: Vec<(usize, u8)> = (0..reads.len())
        .filter_map(|i| {
            let a = &out[i].0;
            let len = reads[i].seq.len();
            let tied = a.len() > 1 && a[1].score == a[0].score;
            exhaustive_k(mode, len, a.first())
                .filter(|&k| !tied || best_errors(mode, len, &a[0]) > f64::from(k))
                .map(|k| (i, k))
        })
        .collect();
    for (i, memo) in memos.iter_mut().enumerate() {
        if short.binary_search_by_key(&i, |s| s.0).is_err() {
            *memo = None;
        }
    }
    for (i, k, hits, more) in exhaustive_search(index, fm, &codes, &short) {
        let alns = &mut out[i].0;
        if hits.iter().any(|h| !alns.iter().any(|x| near(x, h))) {
            // The same as the first pass with the new anchors added: its
            // anchors and candidate loci are reused (see `Memo`).
            *alns = align_seeded(
                index,
                mode,
                &reads[i],
                &codes[i],
                Vec::new(),
                &hits,
                memos[i].as_mut(),
            );
        }
        let hits = hits
            .iter()
            .map(|h| located(index, mode, &reads[i], &codes[i], h))
            .collect();
        let qual = match reads[i].qual {
            Some(q) => q.iter().map(|&c| c.saturating_sub(33)).collect(),
            None => vec![QUAL_ABSENT; reads[i].seq.len()],
        };
        out[i].1 = Some(Exhaustive {
            k,
            hits,
            more,
            qual,
            wide: false,
        });
    }
    // Short reads whose best alignment has more errors than the search
    // covered: a copy as close may share no seed with the read that the
    // greedy cover found, so every maximal match seeds them too.
    let wide: Vec<usize> = short
        .iter()
        .filter(|&&(i, k)| {
            out[i].0.first().is_some_and(|best| {
                best_errors(mode, reads[i].seq.len(), best) >= f64::from(k) + 1.0
            })
        })
        .map(|s| s.0)
        .collect();
    let extra = wide_anchors(index, fm, &codes, &wide, &wanted, &memos);
    for (&i, extra) in wide.iter().zip(extra) {
        if let Some(e) = out[i].1.as_mut() {
            e.wide = true;
        }
        if extra.is_empty() {
            continue;
        }
        let mut whole: Vec<Anchor> = (out[i].1.iter())
            .flat_map(|e| e.hits.iter().map(|h| h.at))
            .collect();
        whole.extend(extra);
        out[i].0 = align_seeded(
            index,
            mode,
            &reads[i],
            &codes[i],
            Vec::new(),
            &whole,
            memos[i].as_mut(),
        );
    }
    out
}

/// Rows of a maximal match located for [`wide_anchors`] at most.
const WIDE_MAX_ROWS: u64 = 20;

/// For each read of `which` (indexes into `codes`, both strands of each
/// read): the anchors of every maximal exact match of at least
/// [`seed::MIN_SEED`] bases and at most [`WIDE_MAX_ROWS`] rows
/// ([`seed::smems_many`]) and of the longest matches through the middle
/// of long rare ones that occur more often (bwa mem's re-seeding), except
/// those the first pass located (`first`, its seeds; `memos`, its anchors).
fn wide_anchors(
    index: &Index,
    fm: &FmIndex<'_>,
    codes: &[[Vec<u8>; 2]],
    which: &[usize],
    first: &[Vec<(usize, Seed, u64)>],
    memos: &[Option<Memo>],
) -> Vec<Vec<Anchor>> {
    let bi = crate::search::BiIndex {
        fwd: *fm,
        rev: index.rev_fm(),
    };
    let min = seed::MIN_SEED;
    // Each SMEM of `min` bases or more covers one of the bases min - 1,
    // 2 min - 1, ...; those starting before x - min + 1 cover x - min.
    let mut jobs = Vec::new();
    let mut job_of = Vec::new();
    for (w, &i) in which.iter().enumerate() {
        for (s, c) in codes[i].iter().enumerate() {
            for x in (min - 1..c.len()).step_by(min) {
                jobs.push(seed::SmemJob {
                    codes: c,
                    x,
                    min_rows: 1,
                    stop: x + 1 - min,
                });
                job_of.push((w, s));
            }
        }
    }
    let mut seeds: Vec<[Vec<Seed>; 2]> = vec![[Vec::new(), Vec::new()]; which.len()];
    let as_seed = |(qpos, len, rows): (u32, u32, Interval)| Seed {
        qpos,
        len,
        rows,
        at: None,
    };
    for (found, &(w, s)) in seed::smems_many(&bi, &jobs, SEED_LANES)
        .into_iter()
        .zip(&job_of)
    {
        seeds[w][s].extend(
            found
                .into_iter()
                .filter(|f| f.1 as usize >= min)
                .map(as_seed),
        );
    }
    // bwa mem's re-seeding: the longest matches through the middle of a
    // long rare one that occur more often.
    jobs.clear();
    job_of.clear();
    for (w, &i) in which.iter().enumerate() {
        for (s, v) in seeds[w].iter().enumerate() {
            for x in v {
                if x.len >= RESEED_MIN_LEN && x.rows.len() <= RESEED_MAX_ROWS {
                    jobs.push(seed::SmemJob {
                        codes: &codes[i][s],
                        x: (x.qpos + x.len / 2) as usize,
                        min_rows: x.rows.len() + 1,
                        stop: 0,
                    });
                    job_of.push((w, s));
                }
            }
        }
    }
    for (found, &(w, s)) in seed::smems_many(&bi, &jobs, SEED_LANES)
        .into_iter()
        .zip(&job_of)
    {
        seeds[w][s].extend(
            found
                .into_iter()
                .filter(|f| f.1 as usize >= min)
                .map(as_seed),
        );
    }
    // The rows to locate: a match that holds a seed of the first pass and
    // occurs as often occurs where it does, located already.
    let mut wanted: Vec<Vec<(usize, Seed, u64)>> = Vec::with_capacity(which.len());
    for (w, &i) in which.iter().enumerate() {
        let known = |s: usize, x: &Seed| {
            first[i].iter().any(|(fs, f, _)| {
                let n = if f.at.is_some() { 1 } else { f.rows.len() };
                *fs == s
                    && x.qpos <= f.qpos
                    && f.qpos + f.len <= x.qpos + x.len
                    && n == x.rows.len()
            })
        };
        let mut rows = Vec::new();
        for (s, v) in seeds[w].iter_mut().enumerate() {
            v.sort_unstable_by_key(|x| (x.qpos, x.len));
            v.dedup_by_key(|x| (x.qpos, x.len));
            for x in v.iter() {
                if x.rows.len() <= WIDE_MAX_ROWS && !known(s, x) {
                    rows.extend((x.rows.lo..x.rows.hi).map(|r| (s, *x, r)));
                }
            }
        }
        wanted.push(rows);
    }
    let rows: Vec<u64> = wanted.iter().flatten().map(|w| w.2).collect();
    let mut pos = Vec::new();
    fm.locate_many(&rows, LOCATE_LANES, &mut pos);
    let mut pos = &pos[..];
    which
        .iter()
        .zip(&wanted)
        .map(|(&i, w)| {
            let (here, rest) = pos.split_at(w.len());
            pos = rest;
            let old = memos[i]
                .as_ref()
                .and_then(|m| m.anchors.as_deref())
                .unwrap_or(&[]);
            let mut new = seed_anchors(index, w, here);
            new.retain(|a| !old.contains(a));
            new
        })
        .collect()
}

/// Reads shorter than this are also searched exhaustively for ungapped
/// placements ([`exhaustive_k`]).
const SHORT_READ: usize = 70;

/// Reads shorter than this are not (they match too many places).
const SHORT_MIN: usize = 16;

/// Located placements of one read from the exhaustive search at most.
const EXHAUSTIVE_MAX_HITS: u64 = 16;

/// Mismatches up to which a read of `len` bases is searched exhaustively
/// (every ungapped placement with at most that many is found, both
/// strands), as an extra source of candidates besides its seeds, given the
/// `best` alignment its seeds found: `None` for reads of [`SHORT_READ`]
/// bases or more, whose seeds find them. A short read's seeds (19 bases)
/// miss its true place when its errors leave no 19-base exact match there,
/// so that "no other alignment" says little; after this search it says
/// there is none within `K` mismatches. `K` is 2, or 1 for a read whose
/// seeds found an exact match of the whole read (two mismatches cost 2 to
/// 5 times the time of one on chr20, most of it in the search schemes of
/// parts of 10 to 12 bases; a second placement two mismatches from an
/// exact one leaves its MAPQ above 30 anyway), and for a read with no
/// alignment at most the mismatches an alignment above the minimum score
/// can have (none for `--local` reads under 35 bases: no search).
pub(super) fn exhaustive_k(mode: Mode, len: usize, best: Option<&Aligned>) -> Option<u8> {
    if !(SHORT_MIN..SHORT_READ).contains(&len) {
        return None;
    }
    let sc = Scoring::of(mode);
    let k = match best {
        Some(b) if b.nm == 0 && b.cigar.len() == 1 => 1,
        Some(_) => 2,
        None => (sc.perfect(len) - Scoring::min_score(mode, len)) / (sc.matched + sc.mismatch),
    };
    (k > 0).then_some(k.min(2) as u8)
}

/// The errors of a short read's alignment `p` for its MAPQ (`select::short_mapq`'s `e`):
/// its NM, or its distance from a perfect score in mismatches, whichever is
/// more; in `--local` at least its NM and its soft-clipped bases at one
/// error per [`CLIPPED_PER_ERROR`].
pub(super) fn best_errors(mode: Mode, len: usize, p: &Aligned) -> f64 {
    let sc = Scoring::of(mode);
    let unit = sc.matched + sc.mismatch;
    let mut errors = f64::from(p.nm).max(f64::from(sc.perfect(len) - p.score) / f64::from(unit));
    if mode == Mode::Local {
        let (l, r) = align::clips(&p.cigar);
        errors = errors.max(f64::from(p.nm) + f64::from(l + r) / CLIPPED_PER_ERROR);
    }
    errors
}

/// Soft-clipped bases of a `--local` short read's best alignment counted as
/// one error (`select::short_mapq`'s `e`) per this many. Its score counts one per
/// 5 (a mismatch's worth, the fewest mismatches that make a clip of that
/// length pay): that many crowded into the clip is rarer than as many
/// spread over the read, and a read from elsewhere, whose part there
/// aligns by chance, clips long runs: 50- and 60-base reads with no other
/// placement were wrong 73 times in 76 with a clip of 14 bases or more,
/// 10 in 67 with 9 to 13, 9 in 520 with 1 to 8 and 52 in 254,630 unclipped
/// (chr20, sixteen simulated sets, docs/BENCHMARKS.md, 2026-11-28
/// (twelfth)). A clip of up to 4 bases (one mismatch near an end) counts
/// as that mismatch would inside the read.
pub(super) const CLIPPED_PER_ERROR: f64 = 4.0;

/// What the exhaustive search ([`exhaustive_k`]) found for a short read.
#[derive(Clone, Debug, Default)]
pub(super) struct Exhaustive {
    /// Mismatches searched up to.
    pub(super) k: u8,
    /// Placements located, with the ungapped alignment there.
    pub(super) hits: Vec<Located>,
    /// Placements not located (beyond [`EXHAUSTIVE_MAX_HITS`]):
    /// (mismatches, how many).
    pub(super) more: Vec<(u8, u64)>,
    /// The read's base qualities (Phred, as read; [`QUAL_ABSENT`] each
    /// without them).
    pub(super) qual: Vec<u8>,
    /// Its best alignment had more errors than `k`, so every maximal exact
    /// match of the read was located too ([`wide_anchors`]).
    pub(super) wide: bool,
}

/// Base quality taken for a read given without qualities (FASTA), as its
/// scores take it.
const QUAL_ABSENT: u8 = 40;

/// Phred of a gap per point of its penalty in [`aligned_phred`] (a 1-base
/// indel of `--end-to-end`, 8 points, is then 40: about the rate of indel
/// errors in Illumina reads, 1 in 10,000 bases).
const GAP_PHRED_PER_POINT: f64 = 5.0;

/// How unlikely the read is to come from where `a` places it, beside a
/// perfect match there, in Phred: its mismatches' [`mismatch_phred`] (from
/// MD, at the read's qualities `qual`, as read) and
/// [`GAP_PHRED_PER_POINT`] per point of its gaps' penalty under `sc`.
pub(super) fn aligned_phred(a: &Aligned, qual: &[u8], sc: &Scoring) -> f64 {
    let len = qual.len();
    let gap = |n: u32| GAP_PHRED_PER_POINT * f64::from(sc.gap_open + sc.gap_extend * n as i32);
    // The SEQ position of each aligned column, in order.
    let mut cols: Vec<usize> = Vec::with_capacity(len);
    let (mut qi, mut phred) = (0usize, 0.0);
    for &(op, n) in &a.cigar {
        match op {
            align::Op::Soft => qi += n as usize,
            align::Op::Match => {
                cols.extend(qi..qi + n as usize);
                qi += n as usize;
            }
            align::Op::Ins => {
                qi += n as usize;
                phred += gap(n);
            }
            align::Op::Del => phred += gap(n),
        }
    }
    let (mut col, mut md) = (0usize, a.md.iter().peekable());
    while let Some(&x) = md.next() {
        match x {
            b'0'..=b'9' => {
                let mut run = usize::from(x - b'0');
                while let Some(&&d) = md.peek()
                    && d.is_ascii_digit()
                {
                    run = 10 * run + usize::from(d - b'0');
                    md.next();
                }
                col += run;
            }
            b'^' => while md.next_if(|d| !d.is_ascii_digit()).is_some() {},
            _ => {
                if let Some(&i) = cols.get(col) {
                    let i = if a.rev { len.saturating_sub(1 + i) } else { i };
                    phred += mismatch_phred(qual.get(i).copied().unwrap_or(QUAL_ABSENT));
                }
                col += 1;
            }
        }
    }
    phred
}

/// A placement of [`Exhaustive`]: the whole read ungapped at `at`.
#[derive(Clone, Debug)]
pub(super) struct Located {
    /// The whole-read anchor.
    pub(super) at: Anchor,
    /// AS of the ungapped alignment there.
    pub(super) score: i32,
    /// Its mismatches.
    pub(super) nm: u8,
    /// Its mismatches' Phred sum ([`mismatch_phred`]).
    pub(super) phred: f64,
}

/// How unlikely a read is to show a mismatch at a base of quality `q`
/// where the genome has another base, in Phred: the chance of an error
/// there (`10^(-q/10)`, `q` at most 40, as scores take it), a third of it
/// for the one base seen.
pub(super) fn mismatch_phred(q: u8) -> f64 {
    f64::from(q.min(40)) + 10.0 * 3f64.log10()
}

/// A short read's placement from [`exhaustive_search`].
type Whole = Anchor;

/// Whether the alignment `x` lies on the diagonal of the whole-read
/// anchor `h` (within a few bases of indels).
pub(super) fn near(x: &Aligned, h: &Whole) -> bool {
    let diag = x.pos as i64 - i64::from(align::clips(&x.cigar).0);
    x.rev == h.rev && x.contig == h.contig && (diag - h.diagonal()).abs() <= 8
}

/// The ungapped alignment of the whole read at `h`: AS, mismatches and
/// their Phred sum ([`mismatch_phred`]; a base against an N or an N of
/// the read counts as one).
fn located(
    index: &Index,
    mode: Mode,
    read: &ReadView<'_>,
    codes: &[Vec<u8>; 2],
    h: &Whole,
) -> Located {
    let m = read.seq.len();
    let window = ref_window(index, h.contig, h.rpos, h.rpos + m as u64);
    let qual: Vec<u8> = match read.qual {
        Some(q) if h.rev => q.iter().rev().copied().collect(),
        Some(q) => q.to_vec(),
        None => vec![b'I'; m],
    };
    let codes = &codes[usize::from(h.rev)];
    let cigar = [(align::Op::Match, m as u32)];
    let score = align::score_with_quality(codes, &qual, &window, 0, &cigar, &Scoring::of(mode));
    let (mut nm, mut phred) = (0u8, 0.0);
    for ((&a, &b), &q) in codes.iter().zip(&window).zip(&qual) {
        if a != b || a > 3 {
            nm = nm.saturating_add(1);
            phred += mismatch_phred(q.saturating_sub(33));
        }
    }
    Located {
        at: *h,
        score,
        nm,
        phred,
    }
}

/// The exhaustive search of the reads `which` (those with an
/// [`exhaustive_k`]): per read, its index, `K`, its ungapped placements
/// with at most `K` mismatches (bidirectional search schemes,
/// [`crate::search::search_verify_many`]) as whole-read anchors, up to
/// [`EXHAUSTIVE_MAX_HITS`] of them located (those inside one segment kept),
/// and how many more were not located, by mismatches.
#[allow(clippy::type_complexity)]
fn exhaustive_search(
    index: &Index,
    fm: &FmIndex<'_>,
    codes: &[[Vec<u8>; 2]],
    which: &[(usize, u8)],
) -> Vec<(usize, u8, Vec<Whole>, Vec<(u8, u64)>)> {
    let mut out = Vec::with_capacity(which.len());
    let bi = crate::search::BiIndex {
        fwd: *fm,
        rev: index.rev_fm(),
    };
    let mut ks: Vec<u8> = which.iter().map(|w| w.1).collect();
    ks.sort_unstable();
    ks.dedup();
    for k in ks {
        let group: Vec<usize> = which.iter().filter(|w| w.1 == k).map(|w| w.0).collect();
        let patterns: Vec<&[u8]> = group
            .iter()
            .flat_map(|&i| [&codes[i][0][..], &codes[i][1][..]])
            .collect();
        let found = crate::search::search_verify_many(
            &bi,
            index.pac(),
            &patterns,
            k,
            VERIFY_MAX,
            SEED_LANES,
        );
        // Per read: rows to locate (with strand and mismatches), verified
        // positions, placements left out.
        let mut rows = Vec::new();
        let mut row_of = Vec::new();
        let mut per: Vec<(Vec<(bool, u64, u8)>, Vec<(u8, u64)>)> = Vec::new();
        for (g, pair) in found.chunks(2).enumerate() {
            // Fewest mismatches first, so that the cap leaves out only the
            // worst placements (a placement found twice, verified and
            // searched, is then located twice and counted once).
            let mut items: Vec<(u8, bool, std::result::Result<u64, Interval>)> = Vec::new();
            for (s, (ivs, pos)) in pair.iter().enumerate() {
                items.extend(pos.iter().map(|&(t, nm)| (nm, s == 1, Ok(t))));
                items.extend(ivs.iter().map(|f| (f.mismatches, s == 1, Err(f.rows))));
            }
            items.sort_by_key(|x| x.0);
            let mut at = Vec::new();
            let mut more = Vec::new();
            let mut left = EXHAUSTIVE_MAX_HITS;
            for (nm, rev, x) in items {
                let (lo, n) = match x {
                    Ok(t) => (t, 1),
                    Err(iv) => (iv.lo, iv.len()),
                };
                let take = n.min(left);
                left -= take;
                if take < n {
                    more.push((nm, n - take));
                }
                match x {
                    Ok(t) if take > 0 => at.push((rev, t, nm)),
                    Ok(_) => {}
                    Err(_) => {
                        rows.extend(lo..lo + take);
                        row_of.extend(std::iter::repeat_n((g, rev, nm), take as usize));
                    }
                }
            }
            per.push((at, more));
        }
        let mut pos = Vec::new();
        fm.locate_many(&rows, SEED_LANES, &mut pos);
        for ((g, rev, nm), t) in row_of.into_iter().zip(pos) {
            per[g].0.push((rev, t, nm));
        }
        for (g, (at, more)) in per.into_iter().enumerate() {
            let i = group[g];
            let m = codes[i][0].len() as u64;
            let mut hits: Vec<(Whole, u8)> = at
                .into_iter()
                .filter_map(|(rev, t, nm)| {
                    let (contig, rpos) = index.segments.resolve(t, m)?;
                    let a = Anchor {
                        rev,
                        contig,
                        rpos,
                        qpos: 0,
                        len: m as u32,
                    };
                    Some((a, nm))
                })
                .collect();
            // A verified part and a searched one can find one placement.
            hits.sort_unstable();
            hits.dedup();
            out.push((i, k, hits.into_iter().map(|h| h.0).collect(), more));
        }
    }
    out
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
                    at: None,
                });
            }
        }
    }
}

/// What [`align_seeded`] computed for a read that depends only on the
/// read and its seeds, kept for a second call with more whole-read
/// anchors: the located anchors of its seeds, and per candidate locus
/// (strand, contig, diagonal) its window, local score and extension. Each
/// is a function of the read and the locus alone, so the second call
/// computes what it would have computed anew.
#[derive(Default)]
pub(super) struct Memo {
    /// The seeds' anchors ([`seed_anchors`]), once computed.
    anchors: Option<Vec<Anchor>>,
    loci: Vec<Locus>,
}

/// A candidate locus of [`align_seeded`].
struct Locus {
    /// Strand, contig, diagonal.
    key: (bool, u32, i64),
    /// The window's first contig position.
    start: u64,
    window: Vec<u8>,
    /// Local score without traceback ([`align::local_score`]), once
    /// computed: only where it may decide something (see `bound`).
    ub: Option<i32>,
    /// An upper bound of `ub` ([`align::local_score_bound`], or `ub`
    /// itself), once computed: a candidate whose bound is below the best
    /// exact score by more than the margin is not extended, whatever its
    /// score.
    bound: Option<i32>,
    /// The extension there when the ungapped shortcut settled it
    /// ([`align::ungapped`]: then neither dynamic program runs).
    short: Option<align::Extended>,
    /// [`align::extend`] there when the ranking computed `ub` with it
    /// ([`align::extend_scored`]: the candidates it ranks are mostly
    /// extended next), until the extension takes it.
    full: Option<Option<align::Extended>>,
    /// [`extend_at`] there, once computed (kept only with a [`Memo`]).
    ext: Option<Option<Aligned>>,
}

/// The rows to locate for a read's seeds on both strands (`codes`): every
/// maximal match when the greedy cover found no seed, re-seeded; each row
/// with its strand and seed ([`seed_anchors`] turns them into anchors),
/// and once (row 0, not to locate) each seed whose position is known.
fn seed_rows(
    fm: &FmIndex<'_>,
    [fwd, rc]: [&Vec<u8>; 2],
    mut seeds: [Vec<Seed>; 2],
) -> Vec<(usize, Seed, u64)> {
    let strands = [fwd, rc];
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
            if x.at.is_some() {
                wanted.push((s, *x, 0));
            } else if x.rows.len() <= seed::MAX_OCC {
                wanted.extend((x.rows.lo..x.rows.hi).map(|r| (s, *x, r)));
            }
        }
    }
    if !rare && let Some((s, x)) = longest {
        let step = (x.rows.len() / REPEAT_SAMPLE).max(1);
        wanted.extend((0..REPEAT_SAMPLE.min(x.rows.len())).map(|k| (s, x, x.rows.lo + k * step)));
    }
    wanted
}

/// The anchors of the rows [`seed_rows`] wanted, located at `pos`.
fn seed_anchors(index: &Index, wanted: &[(usize, Seed, u64)], pos: &[u64]) -> Vec<Anchor> {
    // A seed that runs across an N run or from one contig into the next
    // (the text has neither) anchors each of its pieces long enough to be a
    // seed: the alignment then steps over the hole, or is clipped at the
    // contig's end with the rest a supplementary part, as bwa mem does.
    let mut anchors: Vec<Anchor> = Vec::with_capacity(wanted.len());
    for (&(s, x, _), &p) in wanted.iter().zip(pos) {
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
    anchors
}

/// The gapped alignments of a read given its codes and seeds on both
/// strands, best first (ties in reference order), none scoring below the
/// mode's minimum, no two at one locus. With `memo`, what depends only on
/// the read and its seeds' `anchors` is kept there, and taken from there
/// when a previous call kept it (`anchors` are then not looked at): a
/// second call with more `whole` anchors returns what a first call with
/// them would.
#[allow(clippy::too_many_arguments)]
fn align_seeded(
    index: &Index,
    mode: Mode,
    read: &ReadView<'_>,
    [fwd, rc]: &[Vec<u8>; 2],
    seed_anchors: Vec<Anchor>,
    whole: &[Whole],
    memo: Option<&mut Memo>,
) -> Vec<Aligned> {
    let m = read.seq.len();
    if m == 0 {
        return Vec::new();
    }
    let strands = [fwd, rc];
    let quals = Quals::new(read.qual, mode);
    let keep = memo.is_some();
    let mut own = Memo::default();
    let memo = memo.unwrap_or(&mut own);
    let mut anchors = match &memo.anchors {
        Some(a) => a.clone(),
        None => {
            let a = seed_anchors;
            if keep {
                memo.anchors = Some(a.clone());
            }
            a
        }
    };
    anchors.extend_from_slice(whole);
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
    let mut cands: Vec<(Anchor, usize)> = Vec::new();
    let mut seen: Vec<(bool, u32, i64)> = Vec::new();
    let loci = &mut memo.loci;
    // Loci of a previous call (each key is a candidate once per call).
    let prior = loci.len();
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
            let at = match loci[..prior].iter().position(|l| l.key == key) {
                Some(at) => at,
                None => {
                    let contig_len = index.layout.contigs[a.contig as usize].len;
                    let diag = a.diagonal();
                    let start = (diag - BAND as i64).max(0) as u64;
                    let end = ((diag + m as i64 + BAND as i64).max(0) as u64).min(contig_len);
                    if start >= end {
                        continue;
                    }
                    let window = ref_window(index, a.contig, start, end);
                    let skip = skip_before(diag, m, mode);
                    let codes = &strands[usize::from(a.rev)][skip..];
                    // The read's base 0 faces window[diag - start] (none of
                    // it is skipped where diag >= 0).
                    let short = (diag >= 0)
                        .then(|| {
                            align::ungapped(codes, &window, (diag as u64 - start) as usize, mode)
                        })
                        .flatten();
                    let (ub, bound, short) = match short {
                        Some(u) => (Some(u.best), Some(u.best), Some(u.ext)),
                        None => (None, None, None),
                    };
                    loci.push(Locus {
                        key,
                        start,
                        window,
                        ub,
                        bound,
                        short,
                        full: None,
                        ext: None,
                    });
                    loci.len() - 1
                }
            };
            cands.push((a, at));
        }
    }
    let sc = Scoring::of(mode);
    let margin = EXTEND_MARGIN_MISMATCHES * (sc.matched + sc.mismatch);
    let min = Scoring::min_score(mode, m);
    // The local score at a locus, computed once.
    let exact = |l: &mut Locus| -> i32 {
        *l.ub.get_or_insert_with(|| {
            let (rev, _, diag) = l.key;
            let codes = &strands[usize::from(rev)][skip_before(diag, m, mode)..];
            align::local_score(codes, &l.window, mode)
        })
    };
    // Bounds of the scores the shortcut did not settle, each computed only
    // as far as the margin below the best settled score decides.
    let mut best = cands.iter().filter_map(|c| loci[c.1].ub).max();
    for &(_, at) in &cands {
        let l = &mut loci[at];
        if l.bound.is_none() {
            let (rev, _, diag) = l.key;
            let codes = &strands[usize::from(rev)][skip_before(diag, m, mode)..];
            let decide = best.map(|b| b - margin);
            l.bound = Some(
                match align::local_score_bound(codes, &l.window, mode, decide) {
                    Some(b) => b,
                    None => exact(l),
                },
            );
        }
    }
    // Exact scores where they may decide the ranking: highest bound first,
    // every candidate whose bound reaches the margin below the best exact
    // score so far. The others score below it whatever their exact score.
    // These are mostly extended next: the score comes with the extension
    // (one dynamic program, with traceback, instead of two).
    let exact_extended = |l: &mut Locus| -> i32 {
        *l.ub.get_or_insert_with(|| {
            let (rev, _, diag) = l.key;
            let codes = &strands[usize::from(rev)][skip_before(diag, m, mode)..];
            let (best, e) = align::extend_scored(codes, &l.window, mode);
            l.full = Some(e);
            best
        })
    };
    let mut order: Vec<usize> = (0..cands.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(loci[cands[k].1].bound));
    for k in order {
        let l = &mut loci[cands[k].1];
        if l.ub.is_none() {
            if best.is_some_and(|b| l.bound.is_some_and(|u| u < b - margin)) {
                break;
            }
            let x = exact_extended(l);
            best = Some(best.map_or(x, |b| b.max(x)));
        }
    }
    let best = best.unwrap_or(0);
    // Best first (ties in candidate order), as every score were known:
    // those whose score is unknown are below the margin anyway.
    let mut ranked: Vec<(i32, usize)> = (0..cands.len())
        .filter_map(|k| loci[cands[k].1].ub.map(|u| (u, k)))
        .collect();
    ranked.sort_by_key(|c| std::cmp::Reverse(c.0));
    let mut pruned: Vec<usize> = (0..cands.len())
        .filter(|&k| loci[cands[k].1].ub.is_none_or(|u| u < best - margin))
        .collect();
    // `extend_at` at a locus, or what it gave there before.
    let extend = |l: &mut Locus, a: &Anchor| -> Option<Aligned> {
        if let Some(e) = &l.ext {
            return e.clone();
        }
        let place = Place {
            contig: a.contig,
            start: l.start,
            rev: a.rev,
            skip: skip_before(a.diagonal(), m, mode),
        };
        let codes = strands[usize::from(a.rev)];
        let e = match (&l.short, l.full.take()) {
            (Some(e), _) => aligned(codes, &l.window, place, mode, &quals, min, e.clone()),
            (None, Some(full)) => {
                full.and_then(|e| aligned(codes, &l.window, place, mode, &quals, min, e))
            }
            (None, None) => extend_at(codes, &l.window, place, mode, &quals, min),
        };
        if keep {
            l.ext = Some(e.clone());
        }
        e
    };
    for (ub, k) in ranked {
        if ub < best - margin {
            continue;
        }
        let (a, at) = cands[k];
        // An anchor an alignment already found aligns the same way adds
        // nothing.
        let covered = out
            .iter()
            .any(|x| x.rev == a.rev && x.contig == a.contig && ref_at(x, a.qpos) == Some(a.rpos));
        if covered {
            continue;
        }
        out.extend(extend(&mut loci[at], &a));
    }
    // Local: a low-scoring candidate for a part of the read the best
    // alignment leaves out (a chimeric read's other part) is extended too,
    // best first (their exact scores computed for that).
    if mode == Mode::Local
        && let Some(p) = out.iter().max_by_key(|x| x.score)
    {
        let (ps, pe) = read_span(p, m as u32);
        pruned.retain(|&k| {
            let a = cands[k].0;
            let (s, e) = if a.rev {
                (m as u32 - a.qpos - a.len, m as u32 - a.qpos)
            } else {
                (a.qpos, a.qpos + a.len)
            };
            let overlap = pe.min(e).saturating_sub(ps.max(s));
            2 * overlap <= a.len
        });
        let mut outside: Vec<(i32, usize)> = pruned
            .into_iter()
            .map(|k| (exact(&mut loci[cands[k].1]), k))
            .collect();
        outside.sort_by_key(|c| (std::cmp::Reverse(c.0), c.1));
        let mut extra = Vec::new();
        for (_, k) in outside {
            if extra.len() >= EXTEND_PER_CHAIN {
                break;
            }
            let (a, at) = cands[k];
            extra.extend(extend(&mut loci[at], &a));
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
pub(super) struct Place {
    pub(super) contig: u32,
    pub(super) start: u64,
    pub(super) rev: bool,
    /// Read bases left out of the alignment and soft-clipped: those that
    /// would lie before the contig's first base ([`skip_before`]).
    pub(super) skip: usize,
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
pub(super) fn extend_at(
    codes: &[u8],
    window: &[u8],
    at: Place,
    mode: Mode,
    quals: &Quals,
    min: i32,
) -> Option<Aligned> {
    let e = align::extend(&codes[at.skip..], window, mode)?;
    aligned(codes, window, at, mode, quals, min, e)
}

/// [`extend_at`]'s record of the extension `e` of `codes[at.skip..]` in
/// `window`.
pub(super) fn aligned(
    codes: &[u8],
    window: &[u8],
    at: Place,
    mode: Mode,
    quals: &Quals,
    min: i32,
    e: align::Extended,
) -> Option<Aligned> {
    let skip = at.skip;
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
pub(super) struct Quals {
    /// As given and reversed (the reverse strand's SEQ order); empty when
    /// scores do not use them.
    fwd: Vec<u8>,
    rev: Vec<u8>,
}

impl Quals {
    pub(super) fn new(qual: Option<&[u8]>, mode: Mode) -> Quals {
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

    /// What AS charges a mismatch at each base of the read on strand `rev`
    /// (in that strand's order) of `len` bases: by quality where [`Quals::score`]
    /// rescores by it, else the mode's mismatch.
    pub(super) fn penalties(&self, rev: bool, len: usize, sc: &Scoring) -> Vec<u8> {
        let q = if rev { &self.rev } else { &self.fwd };
        if q.len() != len {
            return vec![sc.mismatch as u8; len];
        }
        q.iter()
            .map(|&c| sc.mismatch_at(c.saturating_sub(33)) as u8)
            .collect()
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
pub(super) fn dedup(alns: &mut Vec<Aligned>) {
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

/// Read bases an alignment covers, in the read's own orientation.
pub(super) fn read_span(a: &Aligned, len: u32) -> (u32, u32) {
    let (clip_start, clip_end) = align::clips(&a.cigar);
    let (s, e) = (clip_start, len - clip_end);
    if a.rev { (len - e, len - s) } else { (s, e) }
}
