//! Finding a batch's hits: interleaved backward search of both strands
//! (exact, or `-v K` through [`crate::search`]), locate with the
//! `--max-locate` cap, the segment filter.

use crate::dna;
use crate::error::{Error, Result};
use crate::fm::{BackwardSearch, EMPTY, FmIndex, Interval, RankIndex};
use crate::index::Index;
use crate::kmer::KmerTable;
use crate::read::{Hit, Strand};
use crate::search::{self, BiIndex, Found};
use crate::segments::Segments;

use super::config::{Dev, MapConfig, SearchMode};

/// Searches in flight at once: enough independent Occ-line loads to hide
/// memory latency (measured in docs/BENCHMARKS.md).
pub(super) const INTERLEAVE: usize = 64;

/// FNV-1a of the read name: picks the primary among equal hits, the same
/// way on every run and every machine.
pub(super) fn name_hash(name: &[u8]) -> u64 {
    crate::fnv1a(name)
}

/// The hits of a chunk of reads, and what it took.
pub(super) struct ChunkHits {
    /// Per read.
    pub(super) hits: Vec<ReadHits>,
    /// Rows located.
    pub(super) located: u64,
}

/// The hits of each of `seqs` (read names `names`, for the sampled
/// start); `pre`: their intervals and located positions from the device
/// ([`BatchHits::chunk`]), else searched here.
#[allow(clippy::too_many_arguments)]
pub(super) fn chunk_hits(
    seqs: &[&[u8]],
    names: &[&[u8]],
    bi: &BiIndex<'_>,
    index: &Index,
    table: &KmerTable,
    cfg: &MapConfig,
    pre: Option<(Vec<Strands>, Vec<u64>)>,
) -> ChunkHits {
    let fm = bi.fwd;
    let pac = index.pac();
    let (found, positions) = match pre {
        Some((found, pos)) => (found, Some(pos)),
        None => (
            find_many(bi, pac, table, seqs, cfg.mismatches, cfg.search),
            None,
        ),
    };
    let rows = |k: usize| rows_of(&found[k]);
    let cap = cfg.locate_cap();
    let all = locate_all_on(&fm, positions, &index.segments, seqs, &found, |k| {
        rows(k) <= cap
    });
    let mut located = all.rows;
    let hits = all
        .hits
        .into_iter()
        .enumerate()
        .map(|(k, all)| {
            if rows(k) <= cap {
                ReadHits::All(all)
            } else {
                let (best, next) = strata_rows(&found[k]);
                let start = name_hash(names[k]) % best;
                let want = cfg.records_per_read();
                let len = seqs[k].len();
                let s = sample_hits(&fm, &index.segments, len, &found[k], start, want, cap);
                located += s.located;
                ReadHits::Sampled {
                    hits: s.hits,
                    best,
                    next,
                }
            }
        })
        .collect();
    ChunkHits { hits, located }
}

/// What the device found for a whole batch, read by read (the batch's
/// reads, then the mates'): both strands' alignments (intervals and, for
/// `-v K`, verified positions), and the text positions of the rows of reads
/// with at most `--max-locate` rows, in the order [`locate_all_on`] lists
/// them.
pub(super) struct BatchHits {
    pub(super) found: Vec<Strands>,
    /// Read `k`'s positions are `pos[at[k]..at[k + 1]]`.
    pub(super) at: Vec<usize>,
    pub(super) pos: Vec<u64>,
}

/// The device's part of mapping a batch, one pass over every read of it for
/// each step: the exact search of both strands; for `-v K` the seeds'
/// search, locate and verification ([`search::SeedEngine`]).
pub(super) trait BatchSearch: crate::search::SeedEngine {
    /// `[forward, reverse]` intervals per read, as [`search_intervals`].
    fn exact_reads(&self, reads: &[&[u8]]) -> Result<Vec<[Interval; 2]>>;
}

impl BatchSearch for Dev {
    fn exact_reads(&self, reads: &[&[u8]]) -> Result<Vec<[Interval; 2]>> {
        self.exact_batch(reads)
    }
}

impl BatchHits {
    /// Searches and locates `reads` on `dev` with up to `cfg.mismatches`
    /// (seed and verify: the search schemes of repeated seeds run here on
    /// `bi`, as on the CPU path); reads with more than the locate cap rows
    /// are left to [`sample_hits`] on the CPU, as in [`chunk_hits`].
    pub(super) fn search(
        dev: &impl BatchSearch,
        bi: &BiIndex<'_>,
        reads: &[&[u8]],
        cfg: &MapConfig,
    ) -> Result<Self> {
        let cap = cfg.locate_cap();
        let found: Vec<Strands> = if cfg.mismatches == 0 {
            dev.exact_reads(reads)?
                .into_iter()
                .map(Strands::exact)
                .collect()
        } else {
            let codes = strand_codes(reads);
            let patterns: Vec<&[u8]> = codes.iter().map(|c| c.as_slice()).collect();
            into_strands(crate::search::search_verify_with(
                dev,
                bi,
                &patterns,
                cfg.mismatches,
                VERIFY_MAX,
            )?)
        };
        let mut rows = Vec::new();
        let mut at = Vec::with_capacity(reads.len() + 1);
        at.push(0);
        for st in &found {
            if rows_of(st) <= cap {
                push_rows(st, &mut rows);
            }
            at.push(rows.len());
        }
        let pos = dev.locate(&rows)?;
        if pos.len() != rows.len() {
            return Err(Error::Gpu(format!(
                "locate returned {} positions for {} rows",
                pos.len(),
                rows.len()
            )));
        }
        Ok(BatchHits { found, at, pos })
    }

    /// The alignments and positions of the reads `ranges` (in that order),
    /// for [`chunk_hits`].
    pub(super) fn chunk(&self, ranges: &[std::ops::Range<usize>]) -> (Vec<Strands>, Vec<u64>) {
        let mut found = Vec::new();
        let mut pos = Vec::new();
        for r in ranges {
            found.extend_from_slice(&self.found[r.clone()]);
            pos.extend_from_slice(&self.pos[self.at[r.start]..self.at[r.end]]);
        }
        (found, pos)
    }
}

/// Backward search of every read on both strands, `INTERLEAVE` searches in
/// lockstep ([`RankIndex::backward_search_many`]). Each search starts with
/// the k-mer table (reads of at least k bases). Returns `[forward, reverse]`
/// intervals per read (empty for reads that cannot match) and the number of
/// backward steps, counting k for each table lookup.
pub fn search_intervals(
    fm: &RankIndex<'_>,
    table: &KmerTable,
    reads: &[&[u8]],
) -> (Vec<[Interval; 2]>, u64) {
    let mut out = vec![[EMPTY; 2]; reads.len()];
    let k = table.k() as usize;
    let searches = reads
        .iter()
        .enumerate()
        .filter(|(_, r)| dna::is_acgt(r))
        .flat_map(|(i, _)| Strand::BOTH.map(|s| (i, s)))
        .map(|(i, strand)| {
            let seq = reads[i];
            let rev = strand.is_reverse();
            let (matched, iv) = if k == 0 || seq.len() < k {
                (0, fm.full())
            } else {
                let code = (0..k).fold(0usize, |acc, d| {
                    acc << 2 | dna::code_from_end(seq, rev, k - 1 - d) as usize
                });
                (k, table.get(code))
            };
            BackwardSearch {
                // Read and strand in one word (a smaller slot).
                job: 2 * i + strand as usize,
                len: seq.len(),
                matched,
                iv,
            }
        });
    let mut steps = 0u64;
    fm.backward_search_many(
        INTERLEAVE,
        searches,
        |job, d| dna::code_from_end(reads[job / 2], job % 2 == 1, d),
        |s| {
            out[s.job / 2][s.job % 2] = s.iv;
            steps += s.matched as u64;
        },
    );
    (out, steps)
}

/// Backward-search steps and matching rows (both strands) of a set of reads,
/// without locate: the counting benchmark of `benches/search.rs`.
pub fn count_steps(fm: &RankIndex<'_>, table: &KmerTable, reads: &[&[u8]]) -> (u64, u64) {
    let (ivs, steps) = search_intervals(fm, table, reads);
    (steps, ivs.iter().map(|[f, r]| f.len() + r.len()).sum())
}

/// A read's alignments before locate, per strand (forward, reverse): row
/// intervals of the text's index with their mismatch counts, and text
/// positions already located and verified (`-v K`), with theirs.
#[derive(Clone, Debug, Default)]
pub struct Strands {
    /// Row intervals per strand.
    pub rows: [Vec<Found>; 2],
    /// (text position, mismatches) per strand.
    pub pos: [Vec<(u64, u8)>; 2],
}

impl Strands {
    pub(super) fn exact([f, r]: [Interval; 2]) -> Strands {
        Strands {
            rows: [as_found(f), as_found(r)],
            pos: Default::default(),
        }
    }
}

/// Seeds with at most this many occurrences are verified against the text
/// instead of extended with the search schemes (docs/ALGORITHMS.md).
pub const VERIFY_MAX: u64 = 8;

pub(super) fn as_found(iv: Interval) -> Vec<Found> {
    if iv.is_empty() {
        Vec::new()
    } else {
        vec![Found {
            rows: iv,
            mismatches: 0,
        }]
    }
}

/// Rows (occurrences) of a read on both strands.
pub(super) fn rows_of(s: &Strands) -> u64 {
    s.rows.iter().flatten().map(|f| f.rows.len()).sum::<u64>()
        + s.pos.iter().map(|p| p.len() as u64).sum::<u64>()
}

/// The intervals of every read: the interleaved exact search for `k == 0`,
/// the bidirectional search schemes of [`crate::search`] otherwise (the
/// reverse strand is the reverse complement; N is a mismatch).
pub fn find_many(
    bi: &BiIndex<'_>,
    pac: &[u8],
    table: &KmerTable,
    reads: &[&[u8]],
    k: u8,
    mode: SearchMode,
) -> Vec<Strands> {
    if k == 0 {
        let (ivs, _) = search_intervals(&bi.fwd, table, reads);
        return ivs.into_iter().map(Strands::exact).collect();
    }
    let codes = strand_codes(reads);
    let patterns: Vec<&[u8]> = codes.iter().map(|c| c.as_slice()).collect();
    let found: Vec<search::Verified> = match mode {
        // All patterns searched together (interleaved).
        SearchMode::Verify => {
            search::search_verify_many(bi, pac, &patterns, k, VERIFY_MAX, INTERLEAVE)
        }
        SearchMode::Schemes | SearchMode::Backtrack => patterns
            .iter()
            .map(|pat| {
                let mut rows = Vec::new();
                if mode == SearchMode::Schemes {
                    search::search(bi, pat, k, &mut rows);
                } else {
                    search::backtrack(&bi.fwd, pat, k, &mut rows);
                }
                (rows, Vec::new())
            })
            .collect(),
    };
    into_strands(found)
}

/// Both strands of every read as codes, the patterns of `-v K`: the read's
/// codes, then their reverse complement.
pub(super) fn strand_codes(reads: &[&[u8]]) -> Vec<Vec<u8>> {
    reads
        .iter()
        .flat_map(|seq| {
            let fwd = dna::codes(seq);
            let rev = dna::reverse_complement(&fwd);
            [fwd, rev]
        })
        .collect()
}

/// The per-pattern results of [`strand_codes`]' patterns, two a read,
/// back into each read's [`Strands`].
pub(super) fn into_strands(found: Vec<search::Verified>) -> Vec<Strands> {
    let mut found = found.into_iter();
    std::iter::from_fn(|| {
        let (fr, fp) = found.next()?;
        let (rr, rp) = found.next().expect("reverse strand");
        Some(Strands {
            rows: [fr, rr],
            pos: [fp, rp],
        })
    })
    .collect()
}

/// Appends the rows of `st` in the order [`locate_all_on`] reads their
/// positions back (forward strand's intervals first): the device locates
/// in this order too.
pub(super) fn push_rows(st: &Strands, rows: &mut Vec<u64>) {
    for f in st.rows.iter().flatten() {
        rows.extend(f.rows.lo..f.rows.hi);
    }
}

/// Exact hits of many reads: interleaved backward search, then interleaved
/// locate of every matching row, then the segment filter. `hits[k]` are read
/// `k`'s hits sorted by contig, position and strand.
pub fn exact_hits_many(
    fm: &FmIndex<'_>,
    table: &KmerTable,
    segments: &Segments,
    reads: &[&[u8]],
) -> Vec<Vec<Hit>> {
    let (ivs, _) = search_intervals(fm, table, reads);
    let found: Vec<Strands> = ivs.into_iter().map(Strands::exact).collect();
    locate_all(fm, segments, reads, &found, |_| true)
}

/// Hits with at most `k` mismatches of many reads (both strands), sorted by
/// mismatches, contig, position and strand.
pub fn hits_many(index: &Index, reads: &[&[u8]], k: u8) -> Vec<Vec<Hit>> {
    let bi = BiIndex {
        fwd: index.fm(),
        rev: index.rev_fm(),
    };
    let table = KmerTable::new(&bi.fwd, 0);
    let found = find_many(&bi, index.pac(), &table, reads, k, SearchMode::Verify);
    locate_all(&bi.fwd, &index.segments, reads, &found, |_| true)
}

/// Locates every row of the reads for which `wanted(k)` holds (all in one
/// interleaved pass) and keeps the hits inside one segment, sorted; other
/// reads get no hits here.
pub(super) fn locate_all(
    fm: &FmIndex<'_>,
    segments: &Segments,
    reads: &[&[u8]],
    found: &[Strands],
    wanted: impl Fn(usize) -> bool,
) -> Vec<Vec<Hit>> {
    locate_all_on(fm, None, segments, reads, found, wanted).hits
}

/// What [`locate_all_on`] found.
pub(super) struct Located {
    /// Each read's hits.
    pub(super) hits: Vec<Vec<Hit>>,
    /// Rows located.
    pub(super) rows: u64,
}

/// [`locate_all`], with the rows' positions already `located` (by the
/// device, in the order listed here: read by read, forward strand first)
/// when given.
pub(super) fn locate_all_on(
    fm: &FmIndex<'_>,
    located: Option<Vec<u64>>,
    segments: &Segments,
    reads: &[&[u8]],
    found: &[Strands],
    wanted: impl Fn(usize) -> bool,
) -> Located {
    let mut rows = Vec::new();
    for (k, st) in found.iter().enumerate() {
        if wanted(k) {
            push_rows(st, &mut rows);
        }
    }
    let pos = match located {
        Some(p) => {
            assert_eq!(p.len(), rows.len(), "positions located for other rows");
            p
        }
        None => {
            let mut pos = Vec::new();
            fm.locate_many(&rows, INTERLEAVE, &mut pos);
            pos
        }
    };
    let mut at = 0;
    let mut out = Vec::with_capacity(reads.len());
    for (k, (seq, st)) in reads.iter().zip(found).enumerate() {
        let mut hits = Vec::new();
        if wanted(k) {
            let len = seq.len() as u64;
            let mut keep = |p: u64, nm: u8, strand: Strand| {
                if let Some((contig, pos)) = segments.resolve(p, len) {
                    hits.push(Hit {
                        nm,
                        contig,
                        pos,
                        rev: strand.is_reverse(),
                        text_pos: p,
                    });
                }
            };
            for strand in Strand::BOTH {
                for f in &st.rows[strand as usize] {
                    let n = f.rows.len() as usize;
                    for &p in &pos[at..at + n] {
                        keep(p, f.mismatches, strand);
                    }
                    at += n;
                }
                for &(p, nm) in &st.pos[strand as usize] {
                    keep(p, nm, strand);
                }
            }
            // A verified seed and a searched one can find the same alignment.
            hits.sort_unstable();
            hits.dedup();
        }
        out.push(hits);
    }
    Located {
        hits: out,
        rows: rows.len() as u64,
    }
}

/// Rows in the best stratum (fewest mismatches) and in the next one.
pub(super) fn strata_rows(st: &Strands) -> (u64, u64) {
    let mut per = [0u64; search::MAX_MISMATCHES as usize + 1];
    for f in st.rows.iter().flatten() {
        per[f.mismatches as usize] += f.rows.len();
    }
    for &(_, nm) in st.pos.iter().flatten() {
        per[nm as usize] += 1;
    }
    let mut present = per.iter().copied().filter(|&r| r > 0);
    (present.next().unwrap_or(0), present.next().unwrap_or(0))
}

/// Candidates of [`sample_hits`]: the rows of one interval, or one text
/// position already located and verified.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidates {
    /// Mismatches.
    pub(super) nm: u8,
    /// The strand they are on.
    pub(super) strand: Strand,
    /// Suffix-array rows, or (`located`) the one text position `lo`.
    pub(super) rows: Interval,
    /// `rows.lo` is a text position, not a row.
    pub(super) located: bool,
}

/// A read over the locate cap, sampled: its hits and the rows located.
pub(super) struct Sample {
    /// Hits inside one segment, the first one found first.
    pub(super) hits: Vec<Hit>,
    /// Rows located to find them.
    pub(super) located: u64,
}

/// For a read with more rows than the locate cap: tries candidates in
/// stratum order (fewest mismatches first) from `start` within the best
/// stratum, wrapping, until `want` hits inside one segment are found, or
/// `max_tries` candidates gave no new hit (a match across a junction, which
/// does not resolve, or a position already found): the cap
/// bounds the work wasted, also when most rows straddle a junction, and
/// `-k N` still gets its N hits where the cap is near N (at most
/// `want + max_tries` rows are located). Deterministic for a given read and
/// index.
pub(super) fn sample_hits(
    fm: &FmIndex<'_>,
    segments: &Segments,
    len: usize,
    st: &Strands,
    start: u64,
    want: usize,
    max_tries: u64,
) -> Sample {
    let mut parts: Vec<Candidates> = Vec::new();
    for strand in Strand::BOTH {
        parts.extend(st.rows[strand as usize].iter().map(|f| Candidates {
            nm: f.mismatches,
            strand,
            rows: f.rows,
            located: false,
        }));
        parts.extend(st.pos[strand as usize].iter().map(|&(p, nm)| Candidates {
            nm,
            strand,
            rows: Interval { lo: p, hi: p + 1 },
            located: true,
        }));
    }
    parts.sort_unstable_by_key(|c| (c.nm, c.strand, c.located, c.rows.lo));
    let total: u64 = parts.iter().map(|c| c.rows.len()).sum();
    let mut out = Sample {
        hits: Vec::with_capacity(want),
        located: 0,
    };
    let mut misses = 0;
    for t in 0..total {
        if misses >= max_tries {
            break;
        }
        let mut idx = (start + t) % total;
        let (c, row) = parts
            .iter()
            .find_map(|c| {
                if idx < c.rows.len() {
                    Some((c, c.rows.lo + idx))
                } else {
                    idx -= c.rows.len();
                    None
                }
            })
            .expect("idx < total");
        let p = if c.located {
            row
        } else {
            out.located += 1;
            fm.locate(row)
        };
        let rev = c.strand.is_reverse();
        if out.hits.iter().any(|h| h.text_pos == p && h.rev == rev) {
            misses += 1;
            continue;
        }
        if let Some((contig, pos)) = segments.resolve(p, len as u64) {
            out.hits.push(Hit {
                nm: c.nm,
                contig,
                pos,
                rev,
                text_pos: p,
            });
            if out.hits.len() == want {
                break;
            }
        } else {
            misses += 1;
        }
    }
    out
}

/// A read's hits as the formatter gets them.
pub(super) enum ReadHits {
    /// Every hit, sorted (best stratum first).
    All(Vec<Hit>),
    /// Over the locate cap: `hits` were found from a start chosen by the read
    /// name (the first is the primary); `best` and `next` count the rows of
    /// the best stratum and the next one.
    Sampled {
        hits: Vec<Hit>,
        best: u64,
        next: u64,
    },
}

impl ReadHits {
    /// How many alignments the read has (rows, when sampled).
    pub(super) fn count(&self) -> u64 {
        match self {
            ReadHits::All(v) => v.len() as u64,
            ReadHits::Sampled { best, next, .. } => best + next,
        }
    }
}

/// Exact hits of one read on both strands (no k-mer table).
pub fn exact_hits(fm: &FmIndex<'_>, segments: &Segments, seq: &[u8]) -> Vec<Hit> {
    exact_hits_many(fm, &KmerTable::new(fm, 0), segments, &[seq])
        .pop()
        .expect("one read")
}
