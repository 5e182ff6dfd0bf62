//! Mapping: batches of reads (single or paired) → search on both strands
//! (exact: interleaved backward search, on the GPU with `--device gpu`;
//! `-v K`: [`crate::search`]) → locate (at most `--max-locate` rows per read
//! outside `-a`) → filter (segments) → primary, MAPQ, pairing → SAM or BAM,
//! strictly in input order.
//!
//! Three stages overlap: a reader thread parses batch k+1 while rayon
//! searches and formats batch k and a writer thread writes batch k-1. A
//! read's records depend only on the read and the index, so the output is
//! byte-identical for any thread count and batch size.

#[cfg(feature = "gpu")]
pub mod cuda;

use std::io::Write;
use std::time::Instant;

use crossbeam_channel::bounded;
use rayon::prelude::*;

use crate::device::{Device, Ran};
use crate::dna;
use crate::error::{Error, Result};
use crate::fastq::{Batch, PairSource, ReadSource};
use crate::fm::{BackwardSearch, EMPTY, FmIndex, Interval, RankIndex};
use crate::index::Index;
use crate::kmer::KmerTable;
use crate::pair::Window;
use crate::read::{Hit, ReadView, Strand, base_name};
use crate::sam::{self, MAPQ_UNIQUE, MappedFields};
use crate::search::{self, BiIndex, Found};
use crate::segments::Segments;

/// How many alignments to report per read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// One primary record; alternatives in XA.
    Best,
    /// Up to N records (primary + N-1 with flag 0x100).
    UpTo(usize),
    /// Every hit.
    All,
}

/// How `-v K` searches (all give the same alignments; `verify` is the
/// fastest, the others are kept for benchmarks and as cross-checks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SearchMode {
    /// Seed and verify, search schemes for repeated seeds.
    #[default]
    Verify,
    /// Bidirectional search schemes only.
    Schemes,
    /// Backtracking over the text's index alone.
    Backtrack,
}

impl crate::Choice for SearchMode {
    const ALL: &'static [Self] = &[
        SearchMode::Verify,
        SearchMode::Schemes,
        SearchMode::Backtrack,
    ];

    fn name(self) -> &'static str {
        match self {
            SearchMode::Verify => "verify",
            SearchMode::Schemes => "schemes",
            SearchMode::Backtrack => "backtrack",
        }
    }

    fn help(self) -> &'static str {
        match self {
            SearchMode::Verify => "Seed and verify, search schemes for repeated seeds",
            SearchMode::Schemes => "Bidirectional search schemes only",
            SearchMode::Backtrack => "Backtracking over the text's index alone",
        }
    }
}

/// Options of `fmalign map`.
#[derive(Clone, Debug)]
pub struct MapConfig {
    /// Worker threads.
    pub threads: usize,
    /// Records per read.
    pub report: Report,
    /// Bases per batch.
    pub batch_bases: usize,
    /// XA lists alternatives only when a read has at most this many hits.
    pub max_xa: usize,
    /// k of the k-mer table that starts each search (0: none).
    pub kmer: u32,
    /// Without `-a`, a read with more suffix-array rows than this (both
    /// strands) is not located in full: the reported hits are found from a
    /// start chosen by the read name, and X0 counts the rows.
    pub max_locate: u64,
    /// Substitutions allowed over the whole read (`-v`, 0..=3).
    pub mismatches: u8,
    /// Report only the best stratum (`--strata`).
    pub strata: bool,
    /// Search method for `-v K` (hidden option `--search`).
    pub search: SearchMode,
    /// Where to search (`--device`): the GPU for exact mapping when present.
    pub device: Device,
    /// SAM text or BAM.
    pub format: OutputFormat,
}

/// Options of paired-end mapping.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairConfig {
    /// Orientation of a proper pair (`--fr`, `--rf`, `--ff`).
    pub orientation: crate::pair::Orientation,
    /// `-I`: shortest fragment of a proper pair.
    pub min_insert: Option<u64>,
    /// `-X`: longest; with neither, the window is estimated.
    pub max_insert: Option<u64>,
}

impl PairConfig {
    /// An error when `-I` is larger than `-X`.
    pub fn check(&self) -> Result<()> {
        match (self.min_insert, self.max_insert) {
            (Some(min), Some(max)) if min > max => {
                Err(Error::Usage(format!("-I {min} is larger than -X {max}")))
            }
            _ => Ok(()),
        }
    }

    /// The window given on the command line, if any (`-I` alone keeps the
    /// default longest fragment).
    pub fn given_window(&self) -> Option<Window> {
        match (self.min_insert, self.max_insert) {
            (None, None) => None,
            (min, max) => Some(Window {
                min: min.unwrap_or(0),
                max: max.unwrap_or(crate::pair::DEFAULT_WINDOW.max),
            }),
        }
    }
}

/// Where reads come from.
pub enum Reads {
    /// Single-end reads.
    Single(ReadSource),
    /// Pairs (two files, or one interleaved) and how they pair.
    Paired(PairSource, PairConfig),
}

impl Reads {
    /// How the mates pair, for paired reads.
    pub fn pairing(&self) -> Option<&PairConfig> {
        match self {
            Reads::Single(_) => None,
            Reads::Paired(_, p) => Some(p),
        }
    }
}

/// What `map` writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// SAM text.
    #[default]
    Sam,
    /// BAM: the same records, encoded by noodles-bam on the worker threads,
    /// BGZF blocks at fixed offsets compressed in parallel.
    Bam,
}

impl crate::Choice for OutputFormat {
    const ALL: &'static [Self] = &[OutputFormat::Sam, OutputFormat::Bam];

    fn name(self) -> &'static str {
        match self {
            OutputFormat::Sam => "sam",
            OutputFormat::Bam => "bam",
        }
    }

    fn help(self) -> &'static str {
        match self {
            OutputFormat::Sam => "SAM text",
            OutputFormat::Bam => {
                "BAM: the same records, encoded by noodles-bam on the worker threads, BGZF blocks at fixed offsets compressed in parallel"
            }
        }
    }
}

impl MapConfig {
    /// Records a read can get at most.
    fn records_per_read(&self) -> usize {
        match self.report {
            Report::Best => 1,
            Report::UpTo(n) => n,
            Report::All => usize::MAX,
        }
    }

    /// Reads with more rows than this are sampled, not located in full.
    fn locate_cap(&self) -> u64 {
        match self.report {
            Report::All => u64::MAX,
            _ => self
                .max_locate
                .max(self.records_per_read() as u64)
                .max(self.max_xa as u64),
        }
    }
}

impl Default for MapConfig {
    fn default() -> Self {
        MapConfig {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            report: Report::Best,
            batch_bases: 10_000_000,
            max_xa: 3,
            kmer: crate::kmer::DEFAULT_K,
            max_locate: 100_000,
            mismatches: 0,
            strata: false,
            search: SearchMode::Verify,
            device: Device::Auto,
            format: OutputFormat::Sam,
        }
    }
}

/// The device searching exact reads (`--device gpu`): the FM-index in
/// device memory; an uninhabited stand-in without the `gpu` feature.
#[cfg(feature = "gpu")]
pub type Dev = cuda::DeviceIndex;
/// The device searching exact reads: none without the `gpu` feature.
#[cfg(not(feature = "gpu"))]
pub enum Dev {}

#[cfg(not(feature = "gpu"))]
impl Dev {
    fn exact(&self, _: &[&[u8]]) -> Result<Vec<[Interval; 2]>> {
        match *self {}
    }
    fn locate(&self, _: &[u64]) -> Result<Vec<u64>> {
        match *self {}
    }
}

/// Counters of a mapping run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MapStats {
    /// Reads seen.
    pub reads: u64,
    /// Bases seen.
    pub bases: u64,
    /// Reads with at least one hit.
    pub mapped: u64,
    /// Records written for hits (primary and secondary).
    pub alignments: u64,
    /// Pairs seen (paired input).
    pub pairs: u64,
    /// Pairs mapped as proper pairs (flag 0x2).
    pub proper: u64,
    /// Chunks the GPU failed on, mapped on the CPU instead.
    pub gpu_fallbacks: u64,
    /// Suffix-array rows located (turned into text positions), on either
    /// device; outside `-a` at most `--max-locate` per read.
    pub located: u64,
    /// Where reads were searched.
    pub device: Ran,
    /// One-line notices (why the GPU was not used).
    pub notices: Vec<String>,
}

impl MapStats {
    fn add(&mut self, other: &MapStats) {
        self.reads += other.reads;
        self.bases += other.bases;
        self.mapped += other.mapped;
        self.alignments += other.alignments;
        self.pairs += other.pairs;
        self.proper += other.proper;
        self.notices.extend(other.notices.iter().cloned());
        self.gpu_fallbacks += other.gpu_fallbacks;
        self.located += other.located;
    }
}

/// Searches in flight at once: enough independent Occ-line loads to hide
/// memory latency (measured in docs/BENCHMARKS.md).
const INTERLEAVE: usize = 64;

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
    fn exact([f, r]: [Interval; 2]) -> Strands {
        Strands {
            rows: [as_found(f), as_found(r)],
            pos: Default::default(),
        }
    }
}

/// Seeds with at most this many occurrences are verified against the text
/// instead of extended with the search schemes (docs/ALGORITHMS.md).
pub const VERIFY_MAX: u64 = 8;

fn as_found(iv: Interval) -> Vec<Found> {
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
fn rows_of(s: &Strands) -> u64 {
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
    // Both strands of every read: the read's codes and their reverse complement.
    let codes: Vec<Vec<u8>> = reads
        .iter()
        .flat_map(|seq| {
            let fwd = dna::codes(seq);
            let rev = dna::reverse_complement(&fwd);
            [fwd, rev]
        })
        .collect();
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
    let mut found = found.into_iter();
    reads
        .iter()
        .map(|_| {
            let (fr, fp) = found.next().expect("forward strand");
            let (rr, rp) = found.next().expect("reverse strand");
            Strands {
                rows: [fr, rr],
                pos: [fp, rp],
            }
        })
        .collect()
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
fn locate_all(
    fm: &FmIndex<'_>,
    segments: &Segments,
    reads: &[&[u8]],
    found: &[Strands],
    wanted: impl Fn(usize) -> bool,
) -> Vec<Vec<Hit>> {
    locate_all_on(fm, None, segments, reads, found, wanted).hits
}

/// What [`locate_all_on`] found, and where.
struct Located {
    /// Each read's hits.
    hits: Vec<Vec<Hit>>,
    /// Rows located.
    rows: u64,
    /// The device failed and the CPU located the rows instead.
    cpu_fallback: bool,
}

/// [`locate_all`], the rows located on `dev` when given (on the CPU if it
/// fails).
fn locate_all_on(
    fm: &FmIndex<'_>,
    dev: Option<&Dev>,
    segments: &Segments,
    reads: &[&[u8]],
    found: &[Strands],
    wanted: impl Fn(usize) -> bool,
) -> Located {
    let mut rows = Vec::new();
    for (k, st) in found.iter().enumerate() {
        if wanted(k) {
            for f in st.rows.iter().flatten() {
                rows.extend(f.rows.lo..f.rows.hi);
            }
        }
    }
    let mut fell_back = false;
    let mut pos = match dev.map(|d| d.locate(&rows)) {
        Some(Ok(p)) => p,
        Some(Err(_)) => {
            fell_back = true;
            Vec::new()
        }
        None => Vec::new(),
    };
    if pos.len() != rows.len() {
        fm.locate_many(&rows, INTERLEAVE, &mut pos);
    }
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
        cpu_fallback: fell_back,
    }
}

/// Rows in the best stratum (fewest mismatches) and in the next one.
fn strata_rows(st: &Strands) -> (u64, u64) {
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
struct Candidates {
    /// Mismatches.
    nm: u8,
    /// The strand they are on.
    strand: Strand,
    /// Suffix-array rows, or (`located`) the one text position `lo`.
    rows: Interval,
    /// `rows.lo` is a text position, not a row.
    located: bool,
}

/// A read over the locate cap, sampled: its hits and the rows located.
struct Sample {
    /// Hits inside one segment, the first one found first.
    hits: Vec<Hit>,
    /// Rows located to find them.
    located: u64,
}

/// For a read with more rows than the locate cap: tries candidates in
/// stratum order (fewest mismatches first) from `start` within the best
/// stratum, wrapping, until `want` hits inside one segment are found or
/// `max_tries` candidates (located rows, at most) have been tried: the cap
/// bounds the work, also when most rows straddle a junction and do not
/// resolve. Deterministic for a given read and index.
fn sample_hits(
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
    for t in 0..total.min(max_tries) {
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
        }
    }
    out
}

/// A read's hits as the formatter gets them.
enum ReadHits {
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

/// Exact hits of one read on both strands (no k-mer table).
pub fn exact_hits(fm: &FmIndex<'_>, segments: &Segments, seq: &[u8]) -> Vec<Hit> {
    exact_hits_many(fm, &KmerTable::new(fm, 0), segments, &[seq])
        .pop()
        .expect("one read")
}

/// FNV-1a of the read name: picks the primary among equal hits, the same
/// way on every run and every machine.
fn name_hash(name: &[u8]) -> u64 {
    crate::fnv1a(name)
}

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
struct Shown<'a> {
    hits: &'a [Hit],
    primary: usize,
    c1: u64,
    c2: u64,
    /// XA may list the others.
    xa_ok: bool,
}

fn shown<'a>(read: &ReadView<'_>, found: &'a ReadHits, cfg: &MapConfig) -> Option<Shown<'a>> {
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
struct PairCtx<'a> {
    /// Bits every record of this mate carries: 0x1, 0x2, 0x8, 0x20, 0x40/0x80.
    flag: u16,
    /// Mate 1.
    first: bool,
    /// The primary the pairing chose (an index into the shown hits).
    primary: usize,
    /// MAPQ of the primary record.
    mapq: u8,
    /// The other mate's primary hit and length, when it is mapped.
    mate: Option<(&'a Hit, u64)>,
}

impl<'a> PairCtx<'a> {
    /// Mate 1 (`first`) or 2 of a pair, `proper` or not, with its primary
    /// (`own`, when mapped) and MAPQ; its mate's primary hit and length.
    fn new(
        first: bool,
        proper: bool,
        own: Option<usize>,
        mapq: u8,
        mate: Option<(&'a Hit, u64)>,
    ) -> Self {
        let flag = 0x1
            | if first { 0x40 } else { 0x80 }
            | if proper { 0x2 } else { 0 }
            | match mate {
                None => 0x8,
                Some((h, _)) if h.rev => 0x20,
                Some(_) => 0,
            };
        PairCtx {
            flag,
            first,
            primary: own.unwrap_or(0),
            mapq,
            mate,
        }
    }
}

/// Appends the SAM records of one read (of a pair, with `pair`); returns how
/// many are mapped.
fn format_read(
    out: &mut Vec<u8>,
    read: &ReadView<'_>,
    shown: Option<&Shown<'_>>,
    cfg: &MapConfig,
    index: &Index,
    pair: Option<&PairCtx<'_>>,
) -> usize {
    let layout = &index.layout;
    let Some(sh) = shown else {
        match pair {
            None => sam::push_unmapped(out, read),
            Some(p) => {
                let place = p.mate.map(|(h, _)| (h.contig, h.pos));
                let mate = sam::MateFields {
                    flag: p.flag,
                    contig: place.map(|x| x.0),
                    pos: place.map_or(0, |x| x.1),
                    tlen: 0,
                };
                sam::push_unmapped_mate(out, read, &mate, place, layout);
            }
        }
        return 0;
    };
    let hits = sh.hits;
    let (primary, mapq) = match pair {
        Some(p) => (p.primary, p.mapq),
        None => (
            sh.primary,
            mapq(sh.c1, sh.c2, hits[sh.primary].nm, cfg.mismatches),
        ),
    };
    let len = read.seq.len() as u64;
    // The mate fields of a record at `h`.
    let mate_of = |h: &Hit| {
        pair.map(|p| match p.mate {
            Some((m, mlen)) => sam::MateFields {
                flag: p.flag,
                contig: Some(m.contig),
                pos: m.pos,
                tlen: if m.contig == h.contig {
                    crate::pair::tlen(h.pos, len, m.pos, mlen, p.first)
                } else {
                    0
                },
            },
            // Mate unmapped: placed at this read's primary.
            None => sam::MateFields {
                flag: p.flag,
                contig: Some(hits[primary].contig),
                pos: hits[primary].pos,
                tlen: 0,
            },
        })
    };
    let suboptimal = (cfg.mismatches > 0).then_some(sh.c2 as usize);
    let others = || {
        hits.iter()
            .enumerate()
            .filter(move |&(k, _)| k != primary)
            .map(|(_, h)| h)
    };
    let xa: Vec<Hit> = if cfg.report == Report::Best && sh.xa_ok {
        others().copied().collect()
    } else {
        Vec::new()
    };
    let pac = index.pac();
    let fields = MappedFields {
        secondary: false,
        mapq,
        hits: sh.c1 as usize,
        suboptimal,
        xa: &xa,
    };
    let m = mate_of(&hits[primary]);
    sam::push_mapped(out, read, &hits[primary], fields, m.as_ref(), layout, pac);
    let extra = match cfg.report {
        Report::Best => 0,
        Report::UpTo(n) => n.saturating_sub(1),
        Report::All => usize::MAX,
    };
    let mut written = 1;
    for h in others().take(extra) {
        let fields = MappedFields {
            secondary: true,
            mapq,
            hits: sh.c1 as usize,
            suboptimal,
            xa: &[],
        };
        let m = mate_of(h);
        sam::push_mapped(out, read, h, fields, m.as_ref(), layout, pac);
        written += 1;
    }
    written
}

/// What [`format_pair`] wrote.
struct PairWritten {
    /// Mapped records of mate 1.
    mate1: usize,
    /// Mapped records of mate 2.
    mate2: usize,
    /// The pair is proper (flag 0x2).
    proper: bool,
}

/// Appends the records of a pair (mate 1 then mate 2).
#[allow(clippy::too_many_arguments)]
fn format_pair(
    out: &mut Vec<u8>,
    r1: &ReadView<'_>,
    r2: &ReadView<'_>,
    f1: &ReadHits,
    f2: &ReadHits,
    cfg: &MapConfig,
    pairing: &PairConfig,
    window: Window,
    index: &Index,
) -> PairWritten {
    // Both mates under the shared name, so they have one QNAME.
    let name = base_name(r1.name);
    let v1 = ReadView { name, ..*r1 };
    let v2 = ReadView { name, ..*r2 };
    let (s1, s2) = (shown(&v1, f1, cfg), shown(&v2, f2, cfg));
    let (l1, l2) = (v1.seq.len() as u64, v2.seq.len() as u64);
    let choice = match (&s1, &s2) {
        (Some(a), Some(b)) => crate::pair::best_pair(
            a.hits,
            l1,
            b.hits,
            l2,
            pairing.orientation,
            window,
            name_hash(name),
        ),
        _ => None,
    };
    // Primary and MAPQ of each mate: from the pair when there is one.
    let se = |s: &Shown<'_>, p: usize| {
        if s.hits[p].nm == s.hits[0].nm {
            mapq(s.c1, s.c2, s.hits[p].nm, cfg.mismatches)
        } else {
            0
        }
    };
    let p1 = s1.as_ref().map(|s| choice.map_or(s.primary, |c| c.a));
    let p2 = s2.as_ref().map(|s| choice.map_or(s.primary, |c| c.b));
    let mut q1 = s1.as_ref().zip(p1).map_or(0, |(s, p)| se(s, p));
    let mut q2 = s2.as_ref().zip(p2).map_or(0, |(s, p)| se(s, p));
    if choice.is_some_and(|c| c.unique) {
        // The only proper pair: a mate in a repeat is placed by its mate.
        let q = q1.max(q2);
        (q1, q2) = (q, q);
    }
    let hit1 = s1.as_ref().zip(p1).map(|(s, p)| &s.hits[p]);
    let hit2 = s2.as_ref().zip(p2).map(|(s, p)| &s.hits[p]);
    let proper = choice.is_some();
    let c1 = PairCtx::new(true, proper, p1, q1, hit2.map(|h| (h, l2)));
    let c2 = PairCtx::new(false, proper, p2, q2, hit1.map(|h| (h, l1)));
    PairWritten {
        mate1: format_read(out, &v1, s1.as_ref(), cfg, index, Some(&c1)),
        mate2: format_read(out, &v2, s2.as_ref(), cfg, index, Some(&c2)),
        proper,
    }
}

/// Reads per formatting chunk: large enough to amortise, small enough to
/// balance across threads.
const CHUNK_READS: usize = 256;

/// The hits of a chunk of reads, and what it took.
struct ChunkHits {
    /// Per read.
    hits: Vec<ReadHits>,
    /// Rows located.
    located: u64,
    /// The device failed and the CPU took over.
    cpu_fallback: bool,
}

/// The hits of each of `seqs` (read names `names`, for the sampled
/// start).
#[allow(clippy::too_many_arguments)]
fn chunk_hits(
    seqs: &[&[u8]],
    names: &[&[u8]],
    bi: &BiIndex<'_>,
    index: &Index,
    table: &KmerTable,
    cfg: &MapConfig,
    dev: Option<&Dev>,
) -> ChunkHits {
    let fm = bi.fwd;
    let pac = index.pac();
    let on_device = dev.map(|d| d.exact(seqs));
    let device_failed = matches!(on_device, Some(Err(_)));
    let found = match on_device {
        Some(Ok(ivs)) => ivs.into_iter().map(Strands::exact).collect(),
        _ => find_many(bi, pac, table, seqs, cfg.mismatches, cfg.search),
    };
    let rows = |k: usize| rows_of(&found[k]);
    let cap = cfg.locate_cap();
    let all = locate_all_on(&fm, dev, &index.segments, seqs, &found, |k| rows(k) <= cap);
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
    ChunkHits {
        hits,
        located,
        cpu_fallback: device_failed || all.cpu_fallback,
    }
}

/// Searches and formats one batch in parallel (single reads, or pairs when
/// `mates` and their pairing are given); returns the SAM text (one buffer per chunk) in input
/// order and the batch's counters. For pairs, `window` is the insert-size
/// window; when it is still unknown it is estimated from the first
/// [`crate::pair::ESTIMATE_PAIRS`] pairs of this (the first) batch, with a
/// notice.
#[allow(clippy::too_many_arguments)]
fn process_batch(
    batch: &Batch,
    mates: Option<(&Batch, &PairConfig)>,
    index: &Index,
    table: &KmerTable,
    cfg: &MapConfig,
    dev: Option<&Dev>,
    bam: Option<&noodles_sam::Header>,
    window: &mut Option<Window>,
) -> std::io::Result<(Vec<Vec<u8>>, MapStats)> {
    // The device searches exact reads only (-v 0).
    let dev = dev.filter(|_| cfg.mismatches == 0);
    let bi = BiIndex {
        fwd: index.fm(),
        rev: index.rev_fm(),
    };
    let mut stats = MapStats::default();
    let finish = |out: &mut Vec<u8>| -> std::io::Result<()> {
        if let Some(header) = bam {
            *out = sam_to_bam(header, out)?;
        }
        Ok(())
    };
    let chunks: Vec<(Vec<u8>, MapStats)> = match mates {
        None => (0..batch.len().div_ceil(CHUNK_READS))
            .into_par_iter()
            .map(|c| {
                let mut out = Vec::with_capacity(CHUNK_READS * 400);
                let mut st = MapStats::default();
                let range = c * CHUNK_READS..((c + 1) * CHUNK_READS).min(batch.len());
                let reads: Vec<ReadView<'_>> = range.map(|i| batch.get(i)).collect();
                let seqs: Vec<&[u8]> = reads.iter().map(|r| r.seq).collect();
                let names: Vec<&[u8]> = reads.iter().map(|r| r.name).collect();
                let found = chunk_hits(&seqs, &names, &bi, index, table, cfg, dev);
                st.gpu_fallbacks += u64::from(found.cpu_fallback);
                st.located += found.located;
                for (read, found) in reads.iter().zip(&found.hits) {
                    let w = format_read(
                        &mut out,
                        read,
                        shown(read, found, cfg).as_ref(),
                        cfg,
                        index,
                        None,
                    );
                    st.reads += 1;
                    st.bases += read.seq.len() as u64;
                    st.mapped += (w > 0) as u64;
                    st.alignments += w as u64;
                }
                finish(&mut out)?;
                Ok((out, st))
            })
            .collect::<std::io::Result<_>>()?,
        Some((mates, pairing)) => {
            let per = CHUNK_READS / 2;
            // Hits of both mates of every pair, chunk by chunk.
            let found: Vec<ChunkHits> = (0..batch.len().div_ceil(per))
                .into_par_iter()
                .map(|c| {
                    let range = c * per..((c + 1) * per).min(batch.len());
                    let reads: Vec<ReadView<'_>> = range
                        .clone()
                        .map(|i| batch.get(i))
                        .chain(range.map(|i| mates.get(i)))
                        .collect();
                    let seqs: Vec<&[u8]> = reads.iter().map(|r| r.seq).collect();
                    let names: Vec<&[u8]> = reads.iter().map(|r| base_name(r.name)).collect();
                    chunk_hits(&seqs, &names, &bi, index, table, cfg, dev)
                })
                .collect();
            if window.is_none() {
                let w = estimate_window(batch, mates, &found, per, pairing, &mut stats.notices);
                *window = Some(w);
            }
            let window = window.expect("set above");
            found
                .into_par_iter()
                .enumerate()
                .map(|(c, found)| {
                    let mut out = Vec::with_capacity(CHUNK_READS * 400);
                    let mut st = MapStats {
                        gpu_fallbacks: u64::from(found.cpu_fallback),
                        located: found.located,
                        ..MapStats::default()
                    };
                    let hits = &found.hits;
                    let start = c * per;
                    let n = hits.len() / 2;
                    for k in 0..n {
                        let (r1, r2) = (batch.get(start + k), mates.get(start + k));
                        let w = format_pair(
                            &mut out,
                            &r1,
                            &r2,
                            &hits[k],
                            &hits[n + k],
                            cfg,
                            pairing,
                            window,
                            index,
                        );
                        st.reads += 2;
                        st.bases += (r1.seq.len() + r2.seq.len()) as u64;
                        st.mapped += (w.mate1 > 0) as u64 + (w.mate2 > 0) as u64;
                        st.alignments += (w.mate1 + w.mate2) as u64;
                        st.pairs += 1;
                        st.proper += u64::from(w.proper);
                    }
                    finish(&mut out)?;
                    Ok((out, st))
                })
                .collect::<std::io::Result<_>>()?
        }
    };
    let mut out = Vec::with_capacity(chunks.len());
    for (text, st) in chunks {
        out.push(text);
        stats.add(&st);
    }
    Ok((out, stats))
}

/// The insert-size window from the first [`crate::pair::ESTIMATE_PAIRS`]
/// pairs of the first batch whose mates both have one best hit: the
/// fragments they form in the library's orientation (see
/// [`crate::pair::estimate`]); [`crate::pair::DEFAULT_WINDOW`] with too
/// few. Reports what it found in `notices`.
fn estimate_window(
    batch: &Batch,
    mates: &Batch,
    found: &[ChunkHits],
    per: usize,
    pairing: &PairConfig,
    notices: &mut Vec<String>,
) -> Window {
    let mut fragments = Vec::new();
    let want = crate::pair::ESTIMATE_PAIRS.min(batch.len());
    // The one best hit of a mate, if it has exactly one.
    let unique = |h: &ReadHits| match h {
        ReadHits::All(v) if !v.is_empty() && v.get(1).is_none_or(|x| x.nm > v[0].nm) => Some(v[0]),
        _ => None,
    };
    for k in 0..want {
        let hits = &found[k / per].hits;
        let n = hits.len() / 2;
        let (Some(a), Some(b)) = (unique(&hits[k % per]), unique(&hits[n + k % per])) else {
            continue;
        };
        let (l1, l2) = (batch.get(k).seq.len() as u64, mates.get(k).seq.len() as u64);
        if let Some(f) = crate::pair::fragment(&a, l1, &b, l2, pairing.orientation)
            && f <= crate::pair::ESTIMATE_MAX_FRAGMENT
        {
            fragments.push(f);
        }
    }
    match crate::pair::estimate(&fragments) {
        Some(e) => {
            notices.push(format!(
                "insert size from {} of the first {want} pairs: mean {:.1}, sd {:.1}; proper pairs {}..={} (set with -I/-X)",
                e.pairs, e.mean, e.sd, e.window.min, e.window.max
            ));
            e.window
        }
        None => {
            let w = crate::pair::DEFAULT_WINDOW;
            notices.push(format!(
                "insert size: only {} of the first {want} pairs map uniquely in the expected orientation, too few to estimate; proper pairs {}..={} (set with -I/-X)",
                fragments.len(),
                w.min,
                w.max
            ));
            w
        }
    }
}

/// Maps every read of `source` against `index` and writes SAM (header
/// included) to `out`. `progress` is called after each batch with the
/// counters so far.
pub fn map_reads<W: Write + Send>(
    index: &Index,
    source: Reads,
    out: W,
    out_name: &str,
    cfg: &MapConfig,
    command_line: &str,
    progress: &(dyn Fn(&MapStats) + Sync),
) -> Result<MapStats> {
    if let Reads::Paired(_, pairing) = &source {
        pairing.check()?;
    }
    let pool = crate::thread_pool(cfg.threads)?;
    let (header, bam) = output_header(sam::header(&index.layout, command_line)?, cfg.format)
        .map_err(|e| Error::io(out_name, e))?;
    let table = pool.install(|| KmerTable::new(&index.fm(), cfg.kmer));
    let mut notices = Vec::new();
    let dev = open_device(index, cfg, &mut notices);
    let io_err = |e| Error::io(out_name, e);
    let (batch_tx, batch_rx) = bounded::<Result<(Batch, Option<Batch>)>>(1);
    // Pairs: the window from the options, or estimated from the first batch
    // (which then holds at least ESTIMATE_PAIRS pairs, whatever -K is).
    let pairing = source.pairing().cloned();
    let mut window = pairing.as_ref().and_then(PairConfig::given_window);
    let first_min = if window.is_none() {
        crate::pair::ESTIMATE_PAIRS
    } else {
        0
    };
    let (text_tx, text_rx) = bounded::<Vec<Vec<u8>>>(1);
    let batch_bases = cfg.batch_bases.max(1);
    std::thread::scope(|s| {
        let reader = s.spawn(move || {
            let mut source = source;
            let mut min_pairs = first_min;
            loop {
                let next = match &mut source {
                    Reads::Single(src) => src.next_batch(batch_bases).map(|b| b.map(|b| (b, None))),
                    Reads::Paired(src, _) => src
                        .next_batch(batch_bases, std::mem::take(&mut min_pairs))
                        .map(|b| b.map(|(a, b)| (a, Some(b)))),
                };
                let stop = !matches!(next, Ok(Some(_)));
                match next {
                    Ok(Some(b)) => {
                        if batch_tx.send(Ok(b)).is_err() {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        let _ = batch_tx.send(Err(e));
                    }
                }
                if stop {
                    break;
                }
            }
        });
        let format = cfg.format;
        let pool = &pool;
        let writer = s.spawn(move || -> std::io::Result<()> {
            let mut out = out;
            out.write_all(&header)?;
            // BAM: the record stream cut into blocks at fixed offsets (so the
            // bytes do not depend on -t or -K), compressed in parallel.
            let mut pending: Vec<u8> = Vec::new();
            for chunks in text_rx {
                if format == OutputFormat::Sam {
                    for text in chunks {
                        out.write_all(&text)?;
                    }
                    continue;
                }
                for text in chunks {
                    pending.extend_from_slice(&text);
                }
                let full = pending.len() / BGZF_BLOCK * BGZF_BLOCK;
                out.write_all(&compress_blocks(pool, &pending[..full]))?;
                pending.drain(..full);
            }
            if format == OutputFormat::Bam {
                out.write_all(&compress_blocks(pool, &pending))?;
                out.write_all(&BGZF_EOF)?;
            }
            out.flush()
        });
        let mut stats = MapStats {
            device: if dev.is_some() { Ran::Gpu } else { Ran::Cpu },
            notices,
            ..MapStats::default()
        };
        let mut failure = None;
        for batch in batch_rx.iter() {
            let batch = match batch {
                Ok(b) => b,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            };
            let (text, st) = match pool.install(|| {
                process_batch(
                    &batch.0,
                    batch.1.as_ref().zip(pairing.as_ref()),
                    index,
                    &table,
                    cfg,
                    dev.as_ref(),
                    bam.as_ref(),
                    &mut window,
                )
            }) {
                Ok(r) => r,
                Err(e) => {
                    failure = Some(Error::io(out_name, e));
                    break;
                }
            };
            stats.add(&st);
            progress(&stats);
            if text_tx.send(text).is_err() {
                break; // the writer failed; its error is reported below
            }
        }
        drop(batch_rx);
        drop(text_tx);
        let written = writer.join().expect("writer thread panicked");
        reader.join().expect("reader thread panicked");
        match (failure, written) {
            (Some(e), _) => Err(e),
            (None, Err(e)) => Err(io_err(e)),
            (None, Ok(())) => Ok(stats),
        }
    })
}

/// Uncompressed bytes per BGZF block (the limit htslib and noodles use, so
/// that a block of incompressible data still fits its 16-bit size field).
const BGZF_BLOCK: usize = 65280;

/// The empty BGZF block that ends a BAM file (SAM spec §4.1.2).
const BGZF_EOF: [u8; 28] = [
    0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0, 0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0,
    0, 0,
];

/// Appends `data` to `out` as BGZF blocks (gzip members with the BC extra
/// field, SAM spec §4.1) of up to [`BGZF_BLOCK`] bytes each.
fn bgzf_blocks(data: &[u8], out: &mut Vec<u8>) {
    for piece in data.chunks(BGZF_BLOCK) {
        let mut z = flate2::write::DeflateEncoder::new(
            Vec::with_capacity(piece.len() / 2),
            flate2::Compression::default(),
        );
        z.write_all(piece).expect("writing to memory");
        let cdata = z.finish().expect("writing to memory");
        let bsize = (18 + cdata.len() + 8 - 1) as u16;
        out.extend_from_slice(&[
            0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0,
        ]);
        out.extend_from_slice(&bsize.to_le_bytes());
        out.extend_from_slice(&cdata);
        out.extend_from_slice(&crc32fast::hash(piece).to_le_bytes());
        out.extend_from_slice(&(piece.len() as u32).to_le_bytes());
    }
}

/// `data` as BGZF blocks of [`BGZF_BLOCK`] bytes (the last one shorter),
/// compressed in parallel on `pool`.
fn compress_blocks(pool: &rayon::ThreadPool, data: &[u8]) -> Vec<u8> {
    let blocks: Vec<Vec<u8>> = pool.install(|| {
        data.par_chunks(BGZF_BLOCK)
            .map(|piece| {
                let mut b = Vec::new();
                bgzf_blocks(piece, &mut b);
                b
            })
            .collect()
    });
    blocks.concat()
}

/// Whole SAM records (our own formatter's text) → the same records as
/// uncompressed BAM, through noodles (the SAM parser and the BAM encoder),
/// so that the BAM holds exactly what the SAM would.
fn sam_to_bam(header: &noodles_sam::Header, text: &[u8]) -> std::io::Result<Vec<u8>> {
    use noodles_sam::alignment::io::Write as _;
    let mut bam = noodles_bam::io::Writer::from(Vec::with_capacity(text.len()));
    let mut reader = noodles_sam::io::Reader::new(text);
    let mut record = noodles_sam::Record::default();
    while reader.read_record(&mut record)? != 0 {
        bam.write_alignment_record(header, &record)?;
    }
    Ok(bam.into_inner())
}

/// The first bytes of the output: the SAM header text, or the BAM header
/// (magic, text, references) in BGZF blocks and, for BAM, the parsed header
/// the workers encode records against.
fn output_header(
    text: Vec<u8>,
    format: OutputFormat,
) -> std::io::Result<(Vec<u8>, Option<noodles_sam::Header>)> {
    match format {
        OutputFormat::Sam => Ok((text, None)),
        OutputFormat::Bam => {
            let header = noodles_sam::io::Reader::new(&text[..]).read_header()?;
            let mut bam = noodles_bam::io::Writer::from(Vec::new());
            bam.write_header(&header)?;
            let mut out = Vec::new();
            bgzf_blocks(&bam.into_inner(), &mut out);
            Ok((out, Some(header)))
        }
    }
}

/// The device for `cfg.device`, or `None` (the CPU) with the reason in
/// `notices`: no GPU, `-v K` (mismatch search runs on the CPU), or a failure
/// to copy the index over.
#[cfg(feature = "gpu")]
fn open_device(index: &Index, cfg: &MapConfig, notices: &mut Vec<String>) -> Option<Dev> {
    if cfg.device == Device::Cpu {
        return None;
    }
    if cfg.mismatches > 0 {
        if cfg.device == Device::Gpu {
            notices.push("-v K is searched on the CPU (not yet on the GPU)".into());
        }
        return None;
    }
    if let Some(why) = crate::gpu::probe().why_not() {
        notices.push(format!("no GPU: {why}; mapping on the CPU"));
        return None;
    }
    match Dev::upload(index) {
        Ok(d) => Some(d),
        Err(e) => {
            notices.push(format!("{e}; mapping on the CPU"));
            None
        }
    }
}

/// Without the `gpu` feature: the CPU, with a notice if the GPU was asked for.
#[cfg(not(feature = "gpu"))]
fn open_device(_: &Index, cfg: &MapConfig, notices: &mut Vec<String>) -> Option<Dev> {
    if cfg.device == Device::Gpu {
        notices.push("built without the gpu feature; mapping on the CPU".into());
    }
    None
}

/// Wall-clock helper for logs.
pub fn rate(count: u64, since: Instant) -> f64 {
    count as f64 / since.elapsed().as_secs_f64().max(1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{IndexConfig, build_in_memory};
    use crate::reference::read_fasta_from;
    use std::path::Path;

    /// xorshift bases.
    fn bases(seed: &mut u64, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                b"ACGT"[(*seed % 4) as usize]
            })
            .collect()
    }

    /// `--max-locate N` bounds the rows located per read, also when most
    /// of a read's rows are matches across an N run (they are in the text,
    /// which leaves the N out, but never resolve): a repeat with one clean
    /// copy and 300 copies cut by an N.
    #[test]
    fn max_locate_bounds_the_rows_located() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        let unit = bases(&mut seed, 30);
        let mut fa = b">r\n".to_vec();
        fa.extend(bases(&mut seed, 50));
        fa.extend(&unit);
        for _ in 0..300 {
            fa.extend(bases(&mut seed, 20));
            fa.extend(&unit[..15]);
            fa.push(b'N');
            fa.extend(&unit[15..]);
        }
        fa.extend(bases(&mut seed, 20));
        fa.push(b'\n');
        let reference = read_fasta_from(&fa[..], Path::new("r.fa")).unwrap();
        let index = build_in_memory(
            reference,
            &IndexConfig {
                threads: 1,
                ..IndexConfig::default()
            },
        )
        .unwrap();
        let reads = 20;
        let mut fq = Vec::new();
        for i in 0..reads {
            fq.extend(format!("@q{i}\n").bytes());
            fq.extend(&unit);
            fq.extend(b"\n+\n");
            fq.extend(std::iter::repeat_n(b'I', unit.len()));
            fq.push(b'\n');
        }
        let run = |max_locate: u64| {
            let source =
                ReadSource::from_reader(std::io::Cursor::new(fq.clone()), Path::new("q.fq"))
                    .unwrap();
            let cfg = MapConfig {
                threads: 1,
                max_locate,
                ..MapConfig::default()
            };
            let mut sam = Vec::new();
            let stats = map_reads(
                &index,
                Reads::Single(source),
                &mut sam,
                "<memory>",
                &cfg,
                "test",
                &|_| {},
            )
            .unwrap();
            (stats, String::from_utf8(sam).unwrap())
        };
        // Located in full: every one of the 301 rows, one hit (the clean copy).
        let (stats, sam) = run(1000);
        assert_eq!(stats.located, 301 * reads);
        assert_eq!(stats.mapped, reads);
        assert!(sam.contains("\tr\t51\t37\t30M\t"), "{sam}");
        // Over the cap: at most 10 rows each; a read maps (to the clean
        // copy) only if one of its 10 rows is that copy.
        let (stats, sam) = run(10);
        assert!(
            stats.located <= 10 * reads,
            "{} rows located for {reads} reads with --max-locate 10",
            stats.located
        );
        for line in sam.lines().filter(|l| !l.starts_with('@')) {
            let f: Vec<&str> = line.split('\t').collect();
            assert!(f[1] == "4" || f[3] == "51", "{line}");
        }
    }
}
