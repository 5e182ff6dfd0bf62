//! The options of `fmalign map` (what to report, how to search, pairs,
//! the output format) and the counts a run reports.

use crate::device::{Device, Ran};
use crate::error::{Error, Result};
use crate::io::fastq::{PairSource, ReadSource};
use crate::pair::Window;
use std::path::{Path, PathBuf};

use super::cuda;

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
    /// Bases per batch; `None`: [`CPU_BATCH_BASES`], or [`GPU_BATCH_BASES`]
    /// when the GPU searches.
    pub batch_bases: Option<usize>,
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
    /// Gapped alignment (`--local`, the default, or `--end-to-end`);
    /// `None`: ungapped (`-v K`, exact with 0).
    pub gapped: Option<crate::align::Mode>,
    /// `-R`: the `@RG` line in the header and `RG:Z` on every record.
    pub read_group: Option<crate::sam::ReadGroup>,
    /// `--no-unal`: no records for unaligned reads (for pairs: for pairs
    /// with neither mate aligned).
    pub no_unal: bool,
    /// `-M`: the other part of a chimeric read (`--local`) flagged 0x100
    /// instead of 0x800, as bwa mem -M.
    pub split_secondary: bool,
    /// Copies of the reads by outcome (`--un`, `--al`, `--un-conc`,
    /// `--al-conc`).
    pub copies: CopyPaths,
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

    /// The window given on the command line when both bounds are; with one
    /// or none the window is estimated ([`PairConfig::with_given`]).
    pub fn given_window(&self) -> Option<Window> {
        Some(Window {
            min: self.min_insert?,
            max: self.max_insert?,
        })
    }

    /// `w` (estimated, or the default) with the bound given on the command
    /// line in place of its own: `-I` alone keeps the estimated longest
    /// fragment, `-X` alone the estimated shortest. A given bound beyond
    /// the other (`-I 800` where the longest estimated is 700) moves the
    /// other to it. The second value says what was given, for the notice.
    pub fn with_given(&self, w: Window) -> (Window, String) {
        match (self.min_insert, self.max_insert) {
            (Some(min), None) => (
                Window {
                    min,
                    max: w.max.max(min),
                },
                format!("-I {min} given"),
            ),
            (None, Some(max)) => (
                Window {
                    min: w.min.min(max),
                    max,
                },
                format!("-X {max} given"),
            ),
            (min, max) => (
                Window {
                    min: min.unwrap_or(w.min),
                    max: max.unwrap_or(w.max),
                },
                "set with -I/-X".to_owned(),
            ),
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

/// The files of one `map` command, as its command line names them.
#[derive(Clone, Copy, Debug)]
pub struct MapFiles<'a> {
    /// INDEX as given: the index, or the FASTA beside it.
    pub given: &'a Path,
    /// The index file it names ([`crate::index::resolve`]).
    pub index: &'a Path,
    /// READS (`-`: stdin).
    pub reads: &'a Path,
    /// READS2, the mates' file.
    pub reads2: Option<&'a Path>,
    /// `-o` (`None` or `-`: stdout, as samtools).
    pub output: Option<&'a Path>,
}

impl MapFiles<'_> {
    /// The SAM or BAM file to write (`None`: stdout), after every output
    /// (`-o`, `--un`, `--al`, `--un-conc`, `--al-conc`: `copies`) is checked
    /// against every input (the index, INDEX as given, the reads) and
    /// against each other: an output is written beside its name and renamed
    /// over it at the end, which would destroy an input, and two outputs of
    /// one name would share a temporary file.
    pub fn checked_output(&self, copies: &CopyPaths) -> Result<Option<PathBuf>> {
        let stdout = Path::new("-");
        let sam = self.output.unwrap_or(stdout);
        let sam_opt = if self.output.is_some() {
            "-o"
        } else {
            "the SAM"
        };
        let mut outputs: Vec<(&str, PathBuf)> = vec![(sam_opt, sam.to_owned())];
        outputs.extend(copies.files());
        let outputs: Vec<(&str, &Path)> = outputs.iter().map(|(o, p)| (*o, p.as_path())).collect();
        let mut inputs = vec![("the index", self.index), ("the reads", self.reads)];
        if self.given != self.index {
            inputs.push(("the reference", self.given));
        }
        if let Some(two) = self.reads2 {
            inputs.push(("the mates' reads", two));
        }
        crate::io::output::check_outputs(&outputs, &inputs)?;
        Ok((sam != stdout).then(|| sam.to_owned()))
    }

    /// The reads, opened on `threads` decompressing threads: single, or
    /// pairs from two files or (`pairing` without READS2) one interleaved.
    /// READS2 naming READS' file is refused.
    pub fn open_reads(&self, pairing: Option<PairConfig>, threads: usize) -> Result<Reads> {
        let one = ReadSource::open(self.reads, threads)?;
        Ok(match (self.reads2, pairing) {
            (Some(two), _) if crate::io::output::same_file(two, self.reads) => {
                return Err(Error::Usage(
                    "READS and READS2 are the same file; for one file of pairs use --interleaved"
                        .into(),
                ));
            }
            (Some(two), Some(p)) => Reads::Paired(
                PairSource::two_files(one, ReadSource::open(two, threads)?),
                p,
            ),
            (None, Some(p)) => Reads::Paired(PairSource::interleaved(one), p),
            (_, None) => Reads::Single(one),
        })
    }
}

/// What `map` writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// SAM text.
    #[default]
    Sam,
    /// BAM: the same records, encoded on the worker threads (`record::bam`;
    /// noodles-bam is the tests' oracle), BGZF blocks at fixed offsets
    /// deflated in parallel (libdeflate, level 6).
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
                "BAM: the same records, encoded on the worker threads, BGZF blocks at fixed offsets deflated in parallel (level 6, as samtools)"
            }
        }
    }
}

impl MapConfig {
    /// Records a read can get at most.
    pub(super) fn records_per_read(&self) -> usize {
        match self.report {
            Report::Best => 1,
            Report::UpTo(n) => n,
            Report::All => usize::MAX,
        }
    }

    /// Reads with more rows than this are sampled, not located in full.
    pub(super) fn locate_cap(&self) -> u64 {
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
            batch_bases: None,
            max_xa: 3,
            kmer: crate::kmer::DEFAULT_K,
            max_locate: 100_000,
            mismatches: 0,
            strata: false,
            search: SearchMode::Verify,
            device: Device::Auto,
            format: OutputFormat::Sam,
            gapped: Some(crate::align::Mode::Local),
            read_group: None,
            no_unal: false,
            split_secondary: false,
            copies: Default::default(),
        }
    }
}

/// Bases per batch on the CPU (`-K`): enough work for every thread, little
/// memory.
pub const CPU_BATCH_BASES: usize = 10_000_000;

/// Bases per batch when the GPU searches: a million reads or more per pass
/// (1.3 M reads of 150 bases), in sub-batches of `cuda::SUB_READS`.
pub const GPU_BATCH_BASES: usize = 200_000_000;

/// The device searching exact reads (`--device gpu`): the FM-index in
/// device memory; an uninhabited stand-in without the `gpu` feature
/// (`cuda/disabled.rs`).
pub type Dev = cuda::DeviceIndex;

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
    /// Nanoseconds the GPU's exact search kernel ran, and the read bases
    /// it searched (both strands each).
    pub gpu_kernel_nanos: u64,
    pub gpu_kernel_bases: u64,
    /// Suffix-array rows located (turned into text positions), on either
    /// device; outside `-a` at most `--max-locate` per read.
    pub located: u64,
    /// Where reads were searched.
    pub device: Ran,
    /// One-line notices (why the GPU was not used).
    pub notices: Vec<String>,
    /// How many times reads and pairs aligned (bowtie2's summary).
    pub summary: super::summary::Summary,
    /// Per read (single) or pair, in input order, whether it aligned (a
    /// pair: concordantly): collected for `--un`/`--al` only.
    pub(super) status: Vec<bool>,
}

impl MapStats {
    /// The run's notes for the log after mapping, in order: the notices,
    /// the GPU kernel's throughput when it ran, and for pairs the proper
    /// ones.
    pub fn log_lines(&self, paired: bool) -> Vec<String> {
        let mut lines = self.notices.clone();
        if self.gpu_kernel_nanos > 0 {
            let s = self.gpu_kernel_nanos as f64 * 1e-9;
            lines.push(format!(
                "GPU exact search kernel: {} read bases (both strands each) in {s:.3} s of device time: {:.2} G bases/s",
                self.gpu_kernel_bases,
                self.gpu_kernel_bases as f64 / s / 1e9
            ));
        }
        if paired {
            lines.push(format!(
                "{} pairs, {} proper ({:.2}%)",
                self.pairs,
                self.proper,
                100.0 * self.proper as f64 / self.pairs.max(1) as f64
            ));
        }
        lines
    }

    /// Warnings: batches the GPU failed on (mapped on the CPU instead).
    pub fn warnings(&self) -> Vec<String> {
        if self.gpu_fallbacks == 0 {
            return Vec::new();
        }
        vec![format!(
            "the GPU failed on {} batches of reads; they were mapped on the CPU",
            self.gpu_fallbacks
        )]
    }

    pub(super) fn add(&mut self, other: &MapStats) {
        self.reads += other.reads;
        self.bases += other.bases;
        self.mapped += other.mapped;
        self.alignments += other.alignments;
        self.pairs += other.pairs;
        self.proper += other.proper;
        self.notices.extend(other.notices.iter().cloned());
        self.gpu_fallbacks += other.gpu_fallbacks;
        self.located += other.located;
        self.summary.add(&other.summary);
        self.status.extend_from_slice(&other.status);
    }
}

/// Where the reads are copied by outcome: `--un`/`--al` (single reads) and
/// `--un-conc`/`--al-conc` (pairs: one file per mate, see [`mate_path`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyPaths {
    pub un: Option<PathBuf>,
    pub al: Option<PathBuf>,
    pub un_conc: Option<PathBuf>,
    pub al_conc: Option<PathBuf>,
}

impl CopyPaths {
    /// Whether any copy is asked for.
    pub fn any(&self) -> bool {
        self.un.is_some() || self.al.is_some() || self.un_conc.is_some() || self.al_conc.is_some()
    }

    /// The files they name, with their options: one per mate for the pairs'.
    pub fn files(&self) -> Vec<(&'static str, PathBuf)> {
        let mut out = Vec::new();
        for (opt, path) in [("--un", &self.un), ("--al", &self.al)] {
            if let Some(p) = path {
                out.push((opt, p.clone()));
            }
        }
        for (opt, path) in [("--un-conc", &self.un_conc), ("--al-conc", &self.al_conc)] {
            if let Some(p) = path {
                out.extend([1, 2].map(|m| (opt, mate_path(p, m))));
            }
        }
        out
    }

    /// An error when the copies asked for do not suit the input (`paired`).
    pub fn check(&self, paired: bool) -> Result<()> {
        if paired && (self.un.is_some() || self.al.is_some()) {
            return Err(Error::Usage(
                "--un and --al are for single-end reads; for pairs use --un-conc and --al-conc"
                    .into(),
            ));
        }
        if !paired && (self.un_conc.is_some() || self.al_conc.is_some()) {
            return Err(Error::Usage(
                "--un-conc and --al-conc are for pairs; for single-end reads use --un and --al"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// The file of mate `m` for --un-conc/--al-conc PATH: `%` replaced by the
/// mate number, else `.1`/`.2` before the extension (`.gz` kept last), as
/// bowtie2 names them.
pub fn mate_path(p: &Path, m: u32) -> PathBuf {
    let s = p.to_string_lossy();
    if s.contains('%') {
        return PathBuf::from(s.replace('%', &m.to_string()));
    }
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (stem, ext) = {
        let core = name.strip_suffix(".gz").unwrap_or(&name);
        let gz = if core.len() < name.len() { ".gz" } else { "" };
        match core.rfind('.') {
            Some(i) if i > 0 => (core[..i].to_owned(), format!("{}{gz}", &core[i..])),
            _ => (core.to_owned(), gz.to_owned()),
        }
    };
    p.with_file_name(format!("{stem}.{m}{ext}"))
}
