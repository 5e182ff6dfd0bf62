//! Short reads (under [`SHORT_READ`] bases): the exhaustive search for
//! their ungapped placements within `K` mismatches ([`exhaustive_k`],
//! [`exhaustive_search`]), each placement's ungapped alignment and Phred
//! ([`located`], [`aligned_phred`]), and, for a read whose best alignment
//! has more errors than the search covered, every maximal exact match
//! located ([`wide_anchors`]): the evidence `select::short_mapq` weighs.

use crate::align::{self, Mode, Scoring};
use crate::fm::{FmIndex, Interval};
use crate::index::Index;
use crate::read::ReadView;
use crate::sam::Aligned;
use crate::seed::{self, Anchor, Seed};

use crate::map::find::VERIFY_MAX;

use super::{
    LOCATE_LANES, Memo, RESEED_MAX_ROWS, RESEED_MIN_LEN, SEED_LANES, ref_window, seed_anchors,
};

/// Rows of a maximal match located for [`wide_anchors`] at most.
pub(in crate::map) const WIDE_MAX_ROWS: u64 = 20;

/// For each read of `which` (indexes into `codes`, both strands of each
/// read): the anchors of every maximal exact match of at least
/// [`seed::MIN_SEED`] bases and at most [`WIDE_MAX_ROWS`] rows
/// ([`seed::smems_many`]) and of the longest matches through the middle
/// of long rare ones that occur more often (bwa mem's re-seeding), except
/// those the first pass located (`first`, its seeds; `memos`, its anchors).
pub(in crate::map) fn wide_anchors(
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
    // The matches of `min` bases or more each job finds, added to its
    // read's strand.
    let add =
        |seeds: &mut Vec<[Vec<Seed>; 2]>, jobs: &[seed::SmemJob<'_>], job_of: &[(usize, usize)]| {
            for (found, &(w, s)) in seed::smems_many(&bi, jobs, SEED_LANES)
                .into_iter()
                .zip(job_of)
            {
                seeds[w][s].extend(found.into_iter().filter(|f| f.1 as usize >= min).map(
                    |(qpos, len, rows): (u32, u32, Interval)| Seed {
                        qpos,
                        len,
                        rows,
                        at: None,
                    },
                ));
            }
        };
    add(&mut seeds, &jobs, &job_of);
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
    add(&mut seeds, &jobs, &job_of);
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
pub(in crate::map) const SHORT_READ: usize = 70;

/// Reads shorter than this are not (they match too many places).
pub(in crate::map) const SHORT_MIN: usize = 16;

/// Located placements of one read from the exhaustive search at most.
pub(in crate::map) const EXHAUSTIVE_MAX_HITS: u64 = 16;

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
pub(in crate::map) fn exhaustive_k(mode: Mode, len: usize, best: Option<&Aligned>) -> Option<u8> {
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
pub(in crate::map) fn best_errors(mode: Mode, len: usize, p: &Aligned) -> f64 {
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
pub(in crate::map) const CLIPPED_PER_ERROR: f64 = 4.0;

/// What the exhaustive search ([`exhaustive_k`]) found for a short read.
#[derive(Clone, Debug, Default)]
pub(in crate::map) struct Exhaustive {
    /// Mismatches searched up to.
    pub(in crate::map) k: u8,
    /// Placements located, with the ungapped alignment there.
    pub(in crate::map) hits: Vec<Located>,
    /// Placements not located (beyond [`EXHAUSTIVE_MAX_HITS`]):
    /// (mismatches, how many).
    pub(in crate::map) more: Vec<(u8, u64)>,
    /// The read's base qualities (Phred, as read; [`QUAL_ABSENT`] each
    /// without them).
    pub(in crate::map) qual: Vec<u8>,
    /// Its best alignment had more errors than `k`, so every maximal exact
    /// match of the read was located too ([`wide_anchors`]).
    pub(in crate::map) wide: bool,
}

/// Base quality taken for a read given without qualities (FASTA), as its
/// scores take it.
pub(in crate::map) const QUAL_ABSENT: u8 = 40;

/// Phred of a gap per point of its penalty in [`aligned_phred`] (a 1-base
/// indel of `--end-to-end`, 8 points, is then 40: about the rate of indel
/// errors in Illumina reads, 1 in 10,000 bases).
pub(in crate::map) const GAP_PHRED_PER_POINT: f64 = 5.0;

/// How unlikely the read is to come from where `a` places it, beside a
/// perfect match there, in Phred: its mismatches' [`mismatch_phred`] (from
/// MD, at the read's qualities `qual`, as read) and
/// [`GAP_PHRED_PER_POINT`] per point of its gaps' penalty under `sc`.
pub(in crate::map) fn aligned_phred(a: &Aligned, qual: &[u8], sc: &Scoring) -> f64 {
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
pub(in crate::map) struct Located {
    /// The whole-read anchor.
    pub(in crate::map) at: Anchor,
    /// AS of the ungapped alignment there.
    pub(in crate::map) score: i32,
    /// Its mismatches.
    pub(in crate::map) nm: u8,
    /// Its mismatches' Phred sum ([`mismatch_phred`]).
    pub(in crate::map) phred: f64,
}

/// How unlikely a read is to show a mismatch at a base of quality `q`
/// where the genome has another base, in Phred: the chance of an error
/// there (`10^(-q/10)`, `q` at most 40, as scores take it), a third of it
/// for the one base seen.
pub(in crate::map) fn mismatch_phred(q: u8) -> f64 {
    f64::from(q.min(40)) + 10.0 * 3f64.log10()
}

/// A short read's placement from [`exhaustive_search`].
pub(in crate::map) type Whole = Anchor;

/// Whether the alignment `x` lies on the diagonal of the whole-read
/// anchor `h` (within a few bases of indels).
pub(in crate::map) fn near(x: &Aligned, h: &Whole) -> bool {
    let diag = x.pos as i64 - i64::from(align::clips(&x.cigar).0);
    x.rev == h.rev && x.contig == h.contig && (diag - h.diagonal()).abs() <= 8
}

/// The ungapped alignment of the whole read at `h`: AS, mismatches and
/// their Phred sum ([`mismatch_phred`]; a base against an N or an N of
/// the read counts as one).
pub(in crate::map) fn located(
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
pub(in crate::map) fn exhaustive_search(
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
