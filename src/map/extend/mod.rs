//! Gapped extension (`--local`, `--end-to-end`): a read's seeds on both
//! strands ([`crate::seed`]) → located, chained → each chain's locus
//! extended ([`crate::align`]) → duplicates dropped, best first.

use crate::align::{self, Mode, Scoring};
use crate::dna;
use crate::fm::FmIndex;
use crate::index::Index;
use crate::read::ReadView;
use crate::sam::Aligned;
use crate::seed::{self, Anchor, Seed};

mod place;
mod short;

pub(super) use place::{Place, Quals, aligned, dedup, extend_at, read_span};
use place::{ref_at, skip_before};
pub(super) use short::SHORT_READ;
pub(super) use short::{
    Exhaustive, Located, aligned_phred, best_errors, exhaustive_k, mismatch_phred, near,
};
use short::{QUAL_ABSENT, SHORT_MIN, Whole, exhaustive_search, located, wide_anchors};

/// A short read's ungapped placements with at most `k` mismatches (the
/// exhaustive search, up to its cap), each aligned in a band around it,
/// those scoring at least `min`, best first: for a mate whose alignments
/// all fell under the minimum a read needs alone (`mates::pair_weak`).
pub(super) fn placements(
    index: &Index,
    mode: Mode,
    read: &ReadView<'_>,
    k: u8,
    min: i32,
) -> Vec<Aligned> {
    let fwd = dna::codes(read.seq);
    let rc = dna::reverse_complement(&fwd);
    let codes = [[fwd, rc]];
    let fm = index.fm();
    let quals = Quals::new(read.qual, mode);
    let m = read.seq.len() as u64;
    let mut out = Vec::new();
    for (_, _, hits, _) in exhaustive_search(index, &fm, &codes, &[(0, k)]) {
        for h in hits {
            let Some((start, window)) = band_window(index, h.contig, h.rpos as i64, m) else {
                continue;
            };
            let at = Place {
                contig: h.contig,
                start,
                rev: h.rev,
                skip: 0,
            };
            let codes = &codes[0][usize::from(h.rev)];
            out.extend(extend_at(codes, &window, at, mode, &quals, min));
        }
    }
    dedup(&mut out);
    out
}

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

/// A mate of a pair (at least [`SHORT_READ`] bases) that has a seed of at
/// most this many rows (on either strand) does not locate its seeds of
/// more rows (see [`seed_rows`]).
const PAIRED_MAX_OCC: u64 = 50;

/// Reference codes (0..=3, 4 in holes) of `contig` over `start..end`.
pub(super) fn ref_window(index: &Index, contig: u32, start: u64, end: u64) -> Vec<u8> {
    index.codes(contig, start, end)
}

/// The window of `contig` around the diagonal `diag` (contig position
/// minus read position) of a read of `m` bases, [`BAND`] bases wider on
/// each side and cut at the contig's ends: its first position and codes
/// (`None` where nothing of it lies on the contig).
fn band_window(index: &Index, contig: u32, diag: i64, m: u64) -> Option<(u64, Vec<u8>)> {
    let contig_len = index.layout.contigs[contig as usize].len;
    let start = (diag - BAND as i64).max(0) as u64;
    let end = ((diag + m as i64 + BAND as i64).max(0) as u64).min(contig_len);
    (start < end).then(|| (start, ref_window(index, contig, start, end)))
}

/// Seeds searched in lockstep (see [`seed::greedy_seeds_many`]).
const SEED_LANES: usize = 32;

/// Rows of a chunk's seeds located in lockstep ([`FmIndex::locate_many`]).
const LOCATE_LANES: usize = 32;

/// The gapped alignments of each read of a chunk (see [`align_seeded`]):
/// the seeds of all of them searched in lockstep first; for short reads
/// the exhaustive search ([`exhaustive_k`]), and for those whose best
/// alignment then has more errors than it covered every maximal exact
/// match ([`wide_anchors`]), each adding the loci it finds. `paired`: the
/// reads are mates of pairs, each to be reported by its best alignment
/// (fewer rows located: see [`seed_rows`]).
pub(super) fn align_reads(
    index: &Index,
    fm: &FmIndex<'_>,
    mode: Mode,
    reads: &[ReadView<'_>],
    paired: bool,
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
            seed_rows(fm, [&c[0], &c[1]], s, paired)
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
    /// The best segment of the anchor's diagonal
    /// ([`align::diagonal_score`]: a lower bound of `ub`); `None` where the
    /// ungapped shortcut cannot apply.
    diagonal: Option<i32>,
    /// Whether the ungapped shortcut was tried (it settles `ub`, `bound`
    /// and `short` where it applies).
    tried: bool,
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
/// Seeds of more than [`seed::MAX_OCC`] rows are not located; for a mate
/// of a pair reported by its best alignment (`paired`) of at least
/// [`SHORT_READ`] bases with a seed of at most [`PAIRED_MAX_OCC`] rows,
/// none of more than that (with `-k`/`-a` every copy is wanted). Those
/// rows were most of the rows located (83% of them for the 5% of 150 bp
/// mates with more than 30) and mostly anchored chains below the floor; a
/// copy that only such seeds find is one the mate's rescue next to the
/// other mate still finds. On single reads the same cap placed reads
/// wrongly at MAPQ ≥ 20 (docs/BENCHMARKS.md, 2026-11-28 (fifteenth)).
fn seed_rows(
    fm: &FmIndex<'_>,
    [fwd, rc]: [&Vec<u8>; 2],
    mut seeds: [Vec<Seed>; 2],
    paired: bool,
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
    // A mate with a seed of few rows: its seeds of many rows are not
    // located (see `PAIRED_MAX_OCC`).
    let cap = if paired
        && fwd.len() >= SHORT_READ
        && seeds
            .iter()
            .flatten()
            .any(|x| x.at.is_some() || x.rows.len() <= PAIRED_MAX_OCC)
    {
        PAIRED_MAX_OCC
    } else {
        seed::MAX_OCC
    };
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
            } else if x.rows.len() <= cap {
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
                    let diag = a.diagonal();
                    let Some((start, window)) = band_window(index, a.contig, diag, m as u64) else {
                        continue;
                    };
                    // The read's base 0 faces window[diag - start] (none of
                    // it is skipped where diag >= 0).
                    let diagonal = (diag >= 0)
                        .then(|| {
                            let codes = &strands[usize::from(a.rev)];
                            align::diagonal_score(
                                codes,
                                &window,
                                (diag as u64 - start) as usize,
                                mode,
                            )
                        })
                        .flatten();
                    loci.push(Locus {
                        key,
                        start,
                        window,
                        diagonal,
                        tried: false,
                        ub: None,
                        bound: None,
                        short: None,
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
    // The ungapped shortcut at a locus, tried once: where it settles it,
    // its local score (`ub`, also its bound) and extension, with no
    // dynamic program run.
    let shortcut = |l: &mut Locus| {
        if l.tried || l.ub.is_some() {
            return;
        }
        l.tried = true;
        if l.diagonal.is_none() {
            // A diagonal that leaves the window, or an N: no shortcut.
            return;
        }
        let (rev, _, diag) = l.key;
        let codes = strands[usize::from(rev)];
        if let Some(u) = align::ungapped(codes, &l.window, (diag - l.start as i64) as usize, mode) {
            l.ub = Some(u.best);
            l.bound = Some(u.best);
            l.short = Some(u.ext);
        }
    };
    // The shortcut first where the diagonal alone scores within the margin
    // of the best diagonal: the candidates likely to rank at the top, which
    // it mostly settles. The others are mostly settled below by a bound
    // (cheaper for a diagonal with many mismatches, where the shortcut
    // searches a wide band); where the bound leaves them in the ranking the
    // shortcut is tried then. Which of the two settles a candidate changes
    // no result: the shortcut gives the dynamic program's own.
    let top_diagonal = cands.iter().filter_map(|c| loci[c.1].diagonal).max();
    for &(_, at) in &cands {
        let l = &mut loci[at];
        if l.diagonal
            .is_some_and(|d| top_diagonal.is_some_and(|t| d >= t - margin))
        {
            shortcut(l);
        }
    }
    // The local score at a locus, computed once.
    let exact = |l: &mut Locus| -> i32 {
        shortcut(l);
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
        shortcut(l);
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
