//! The command line: clap's definitions of `fmalign`'s commands and
//! options, and their translation into the library's configurations. Only
//! the binary knows clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use fmalign::Choice;
use fmalign::align::Mode;
use fmalign::device::Device;
use fmalign::index::{DEFAULT_SA_SAMPLE, DistAlgorithm, IndexConfig};
use fmalign::map::{CopyPaths, MapConfig, OutputFormat, PairConfig, Report, SearchMode};
use fmalign::pair::Orientation;
use fmalign::sa::SaAlgorithm;
use fmalign::sam::ReadGroup;

#[derive(Parser)]
#[command(
    name = "fmalign",
    version,
    about = "FM-index read aligner: index a FASTA reference, map reads (gapped, as bwa mem, by default; or ungapped with up to 3 mismatches), write SAM or BAM"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// A count that must be at least 1 (`-t 0` is an error).
fn positive(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(x) => Ok(x),
        Err(e) => Err(e.to_string()),
    }
}

/// A difference-cover period: a power of two from 4 to 4096.
fn period(s: &str) -> std::result::Result<usize, String> {
    use fmalign::sa::blockwise::{V_MAX, V_MIN};
    match s.parse::<usize>() {
        Ok(v) if v.is_power_of_two() && (V_MIN..=V_MAX).contains(&v) => Ok(v),
        Ok(_) => Err(format!("must be a power of two from {V_MIN} to {V_MAX}")),
        Err(e) => Err(e.to_string()),
    }
}

/// The parser of a library option with named values ([`Choice`]): its
/// names, each with its help, as clap's possible values.
fn choice<T: Choice + Send + Sync>() -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        T::ALL
            .iter()
            .map(|v| PossibleValue::new(v.name()).help(v.help())),
    )
    .map(|name| T::from_name(&name).expect("clap accepts only the listed names"))
}

/// One of [`fmalign::gpu::ARCHS`], as the static string NVRTC needs.
fn arch() -> impl clap::builder::TypedValueParser<Value = &'static str> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(fmalign::gpu::ARCHS).map(|s| {
        let listed = fmalign::gpu::ARCHS.iter().find(|a| **a == s);
        *listed.expect("clap accepts only the listed names")
    })
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[derive(Subcommand)]
pub enum Command {
    /// Build REF.fa.fmi from a FASTA reference (plain, gzip or BGZF).
    Index(IndexArgs),
    /// Map FASTQ reads and write SAM or BAM: gapped local alignment by default (bwa mem's scores), --end-to-end (bowtie2's), or -v K: ungapped, up to K mismatches (bowtie's; -v 0 exact)
    Map(Box<MapArgs>),
    /// Describe an index: contigs, ambiguous stretches, sampling, sections.
    Info {
        /// The .fmi file (or the FASTA it was built from).
        index: PathBuf,
    },
    /// Verify an index: header, checksums, consistency and every Occ count; --full also re-derives it.
    Check {
        /// The .fmi file (or the FASTA it was built from).
        index: PathBuf,
        /// Also prove in linear time that BWT, C, Occ and the sampled SA are
        /// those of the stored reference.
        #[arg(long)]
        full: bool,
    },
    /// GPU report: driver, NVRTC, devices; compiles every kernel in gpu/.
    GpuInfo {
        /// Architecture to compile the kernels for
        #[arg(long, default_value = "sm_90", value_parser = arch())]
        arch: &'static str,
        /// Also write each module's PTX into this folder (MODULE.ptx), for
        /// ptxas -v: scripts/check/ptxas.sh
        #[arg(long, value_name = "DIR")]
        ptx_dir: Option<PathBuf>,
    },
}

#[derive(Args)]
pub struct IndexArgs {
    /// Output index path [default: REFERENCE.fmi, e.g. ref.fa.gz.fmi]
    #[arg(short = 'p', long = "prefix", value_name = "INDEX")]
    pub output: Option<PathBuf>,
    /// Worker threads
    #[arg(short, long, default_value_t = default_threads(), value_parser = positive)]
    pub threads: usize,
    /// Suffix-array construction (every choice gives the same index)
    #[arg(long, value_parser = choice::<SaAlgorithm>(), default_value = SaAlgorithm::Auto.name())]
    pub sa: SaAlgorithm,
    /// Keep every K-th suffix-array row (power of two; larger: smaller index, slower locate)
    #[arg(long, value_name = "K", default_value_t = DEFAULT_SA_SAMPLE)]
    pub sa_sample: u32,
    /// Store 64-bit positions even for small references (tests the >4 Gbp path)
    #[arg(long, hide = true)]
    pub wide_positions: bool,
    /// Where to build: auto = the GPU for references of 4 Mbp or more when one is present
    #[arg(long, value_parser = choice::<Device>(), default_value = Device::Auto.name())]
    pub device: Device,
    /// Log each round of --sa hybrid/skew/ls to stderr (h, suffixes still unsorted, groups, time; the text's suffix array, not the mirror index's)
    #[arg(long)]
    pub stats: bool,
    /// No log messages (warnings and errors still print)
    #[arg(short, long)]
    pub quiet: bool,
    /// Memory the build may use (e.g. 16G, 500M; K, M, G, T: powers of 1024) [default: 90% of the available memory]. A reference whose whole-text build needs more (about 6 bytes per base + 16 MiB, 10 above 2^31 bases) is built in parts within SIZE, to the same bytes; the least it can be is about 0.46 bytes per base + 32 to 56 MiB: below that, an error with the figures
    #[arg(long, value_name = "SIZE", value_parser = fmalign::mem::parse_size)]
    pub max_memory: Option<u64>,
    /// Build in parts of at most N suffixes, even when the whole-text build fits (like bowtie-build --bmax; default: as large as --max-memory allows)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_part: Option<u64>,
    /// Difference-cover period of a build in parts (a power of two from 4 to 4096, like bowtie-build --dcv; smaller: faster, more memory; default: chosen by --max-memory)
    #[arg(long, value_name = "V", value_parser = period)]
    pub dcv: Option<usize>,
    /// Device memory the GPU build may use (e.g. 40G) [default: the free device memory]; a larger estimate builds on the CPU, with a notice
    #[arg(long, value_name = "SIZE", value_parser = fmalign::mem::parse_size)]
    pub max_gpu_memory: Option<u64>,
    /// Build on all ranks of an MPI job (`mpirun -np P fmalign index --distributed ref.fa`;
    /// needs a build with `--features mpi`); the index is the same bytes as without it.
    /// --max-memory is then per rank [default: 90% of the node's available memory divided by its ranks]
    #[arg(long)]
    pub distributed: bool,
    /// Algorithm of --distributed (the index is the same bytes)
    #[arg(long, value_parser = choice::<DistAlgorithm>(), default_value = DistAlgorithm::Auto.name(), requires = "distributed")]
    pub dist_algorithm: DistAlgorithm,
    /// Reference FASTA
    pub reference: PathBuf,
}

#[derive(Args)]
pub struct MapArgs {
    /// Worker threads
    #[arg(short, long, default_value_t = default_threads(), value_parser = positive)]
    pub threads: usize,
    /// Report up to N alignments per read (extra ones with flag 0x100)
    #[arg(short = 'k', value_name = "N", conflicts_with = "all", value_parser = positive)]
    pub k: Option<usize>,
    /// Report all alignments (as bowtie -a)
    #[arg(short = 'a', long = "all")]
    pub all: bool,
    /// Ungapped mode: whole-read alignments with up to K mismatches, both strands (as bowtie -v K; -v 0: exact; N in a read is a mismatch) [default: gapped local alignment]
    #[arg(short = 'v', value_name = "K", value_parser = clap::value_parser!(u8).range(0..=3))]
    pub mismatches: Option<u8>,
    /// Gapped alignment of the whole read: indels allowed, no clipping (bowtie2's default mode; AS:i at most 0)
    #[arg(long = "end-to-end", conflicts_with = "local")]
    pub end_to_end: bool,
    /// Gapped local alignment, the default: ends may be soft-clipped (as bwa mem; its scores), chimeric parts as supplementary records
    #[arg(long)]
    pub local: bool,
    /// Best alignments first, primary from the fewest mismatches (always on; accepted for bowtie compatibility)
    #[arg(long)]
    pub best: bool,
    /// With -v: report only alignments of the best stratum (fewest mismatches), as bowtie --strata
    #[arg(long)]
    pub strata: bool,
    /// Where to search with -v K: auto = the GPU when one is present (the gapped modes run on the CPU)
    #[arg(long, value_parser = choice::<Device>(), default_value = Device::Auto.name())]
    pub device: Device,
    /// Search method for -v (benchmarks: every method gives the same alignments)
    #[arg(long, value_parser = choice::<SearchMode>(), default_value = SearchMode::Verify.name(), hide = true)]
    pub search: SearchMode,
    /// Write here instead of stdout (BAM when the name ends in .bam)
    #[arg(short = 'o', long = "output", value_name = "OUT.sam|OUT.bam")]
    pub output: Option<PathBuf>,
    /// Output format [default: bam for -o *.bam, else sam]
    #[arg(long = "output-fmt", value_parser = choice::<OutputFormat>(), value_name = "FORMAT")]
    pub output_fmt: Option<OutputFormat>,
    /// List alternative hits in XA:Z when a read has at most this many
    #[arg(long, value_name = "N", default_value_t = MapConfig::default().max_xa)]
    pub max_xa: usize,
    /// Bases per batch (does not change the output) [default: 10000000; 200000000 when the GPU searches]
    #[arg(short = 'K', long, value_name = "BASES", value_parser = positive)]
    pub batch_bases: Option<usize>,
    /// Start each search with a table of all k-mers' intervals (0: no table; memory 16 x 4^k bytes)
    #[arg(long, value_name = "K", default_value_t = MapConfig::default().kmer, value_parser = clap::value_parser!(u32).range(0..=13))]
    pub kmer: u32,
    /// Without -a, locate at most N hits of a read in full; reads with more report hits found from a name-seeded start, with X0 = rows
    #[arg(long, value_name = "N", default_value_t = MapConfig::default().max_locate)]
    pub max_locate: u64,
    /// Read group: the @RG header line, bwa's syntax ('@RG\tID:s1\tSM:a\tPL:ILLUMINA'; \t or a literal tab between fields); every record gets RG:Z:<ID>
    #[arg(
        short = 'R',
        long = "read-group",
        value_name = "STR",
        conflicts_with = "rg_id"
    )]
    pub read_group: Option<String>,
    /// Read group ID, as bowtie2's --rg-id (with --rg for its other fields)
    #[arg(long = "rg-id", value_name = "ID")]
    pub rg_id: Option<String>,
    /// A field of the read group set with --rg-id, as KEY:VALUE (repeatable; as bowtie2's --rg)
    #[arg(long = "rg", value_name = "KEY:VALUE", requires = "rg_id")]
    pub rg: Vec<String>,
    /// Write the reads that did not align here, as FASTQ in input order (gzip when the name ends in .gz); single-end input, as bowtie2 --un
    #[arg(long = "un", value_name = "FILE")]
    pub un: Option<PathBuf>,
    /// Write the reads that aligned here, as --un does the others (as bowtie2 --al)
    #[arg(long = "al", value_name = "FILE")]
    pub al: Option<PathBuf>,
    /// Write the pairs that did not align as proper pairs here: a % in the name becomes 1 and 2 for the mates, else .1 and .2 go before the extension (as bowtie2 --un-conc)
    #[arg(long = "un-conc", value_name = "FILE")]
    pub un_conc: Option<PathBuf>,
    /// Write the pairs that aligned as proper pairs here, named as for --un-conc (as bowtie2 --al-conc)
    #[arg(long = "al-conc", value_name = "FILE")]
    pub al_conc: Option<PathBuf>,
    /// With --local, flag the other part of a chimeric read 0x100 (secondary) instead of 0x800 (supplementary), as bwa mem -M (for old Picard)
    #[arg(short = 'M')]
    pub split_secondary: bool,
    /// No records for reads that did not align (for pairs: only when neither mate aligned), as bowtie2 --no-unal
    #[arg(long = "no-unal")]
    pub no_unal: bool,
    /// No log messages or progress bar (warnings and errors still print)
    #[arg(short, long)]
    pub quiet: bool,
    /// The .fmi file, or the FASTA it was built from (then FASTA.fmi is used)
    pub index: PathBuf,
    /// Reads: FASTQ (or FASTA), plain or gzip; - for stdin. Mate 1 with READS2
    pub reads: PathBuf,
    /// Mate 2 of each pair of READS (same order, same names up to /1 and /2)
    #[arg(conflicts_with = "interleaved")]
    pub reads2: Option<PathBuf>,
    /// READS holds pairs: mate 1, mate 2, mate 1, ...
    #[arg(long)]
    pub interleaved: bool,
    /// Proper pairs: mate on the forward strand upstream of the one on the reverse strand (default)
    #[arg(long, conflicts_with_all = ["rf", "ff"])]
    pub fr: bool,
    /// Proper pairs: mate on the reverse strand upstream (mate-pair libraries)
    #[arg(long, conflicts_with = "ff")]
    pub rf: bool,
    /// Proper pairs: both mates on one strand, mate 1 upstream
    #[arg(long)]
    pub ff: bool,
    /// Shortest fragment of a proper pair [default: estimated from the first pairs]
    #[arg(short = 'I', long = "minins", value_name = "BASES")]
    pub min_insert: Option<u64>,
    /// Longest fragment of a proper pair [default: estimated from the first pairs]
    #[arg(short = 'X', long = "maxins", value_name = "BASES")]
    pub max_insert: Option<u64>,
}

impl IndexArgs {
    /// The index to write: `-p`, else REFERENCE.fmi.
    pub fn out(&self) -> PathBuf {
        self.output
            .clone()
            .unwrap_or_else(|| fmalign::index::default_path(&self.reference))
    }

    /// The library's options.
    pub fn config(&self) -> IndexConfig {
        IndexConfig {
            threads: self.threads,
            sa: self.sa,
            sa_sample: self.sa_sample,
            wide: self.wide_positions,
            stats: self.stats,
            device: self.device,
            // --distributed: per rank, by default the node's share
            // (fmalign::dist::build).
            max_memory: self.max_memory.or_else(|| {
                (!self.distributed)
                    .then(fmalign::index::default_max_memory)
                    .flatten()
            }),
            max_gpu_memory: self.max_gpu_memory,
            max_part: self.max_part,
            dcv: self.dcv,
            dist: self.dist_algorithm,
        }
    }
}

impl MapArgs {
    /// The library's options.
    pub fn config(&self) -> MapConfig {
        let report = match (self.all, self.k) {
            (true, _) => Report::All,
            (false, Some(k)) => Report::UpTo(k),
            (false, None) => Report::Best,
        };
        MapConfig {
            threads: self.threads,
            report,
            batch_bases: self.batch_bases,
            max_xa: self.max_xa,
            kmer: self.kmer,
            max_locate: self.max_locate,
            mismatches: self.mismatches.unwrap_or(0),
            read_group: None,
            no_unal: self.no_unal,
            split_secondary: self.split_secondary,
            // The default is gapped local alignment (bwa mem's); -v K
            // selects the ungapped modes.
            gapped: if self.end_to_end {
                Some(Mode::EndToEnd)
            } else if self.mismatches.is_some() && !self.local {
                None
            } else {
                Some(Mode::Local)
            },
            strata: self.strata,
            search: self.search,
            copies: self.copies(),
            device: self.device,
            format: self.output_fmt.unwrap_or_else(|| {
                let bam = self
                    .output
                    .as_ref()
                    .and_then(|p| p.extension())
                    .is_some_and(|e| e.eq_ignore_ascii_case("bam"));
                if bam {
                    OutputFormat::Bam
                } else {
                    OutputFormat::Sam
                }
            }),
        }
    }

    /// The files of --un, --al, --un-conc and --al-conc.
    pub fn copies(&self) -> CopyPaths {
        CopyPaths {
            un: self.un.clone(),
            al: self.al.clone(),
            un_conc: self.un_conc.clone(),
            al_conc: self.al_conc.clone(),
        }
    }

    /// The read group of -R, or of --rg-id and --rg.
    pub fn read_group(&self) -> anyhow::Result<Option<ReadGroup>> {
        let line = match (&self.read_group, &self.rg_id) {
            (Some(r), _) => r.clone(),
            (None, Some(id)) => {
                let mut l = format!("@RG\tID:{id}");
                for f in &self.rg {
                    l.push('\t');
                    l.push_str(f);
                }
                l
            }
            (None, None) => return Ok(None),
        };
        ReadGroup::parse(&line)
            .map(Some)
            .map_err(anyhow::Error::msg)
    }

    /// Options that do not go together, with the reason.
    pub fn check(&self) -> anyhow::Result<()> {
        // A name that promises a format not written: refused, not SAM
        // under that name.
        if let Some(out) = &self.output {
            let ext = out
                .extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase());
            let out = out.display();
            match ext.as_deref() {
                Some("cram") => anyhow::bail!(
                    "-o {out}: CRAM is not written (SAM or BAM); for CRAM: fmalign map ... | samtools view -C -T REF.fa -o {out}"
                ),
                Some("gz" | "bgz" | "bgzf") => anyhow::bail!(
                    "-o {out}: compressed SAM is not written; -o OUT.bam writes BAM (compressed), or pipe the SAM to bgzip"
                ),
                _ => {}
            }
        }
        // -v selects the ungapped modes; with --local or --end-to-end
        // named, it is a contradiction.
        let mode = if self.end_to_end {
            "--end-to-end"
        } else if self.local {
            "--local"
        } else {
            if self.strata && self.mismatches.is_none() {
                anyhow::bail!(
                    "--strata applies to -v K (strata are mismatch counts); the default mode is gapped local alignment, ranked by score"
                );
            }
            return Ok(());
        };
        if let Some(k) = self.mismatches {
            anyhow::bail!(
                "-v {k} cannot be used with {mode}: -v counts the mismatches of ungapped alignments, {mode} scores gapped ones (AS:i); use one or the other"
            );
        }
        if self.strata {
            anyhow::bail!(
                "--strata cannot be used with {mode}: strata are mismatch counts of -v; gapped alignments are ranked by score"
            );
        }
        Ok(())
    }

    /// How mates pair, for paired input (READS2 or --interleaved); pair
    /// options without pairs are an error.
    pub fn pairing(&self) -> anyhow::Result<Option<PairConfig>> {
        let pairing = (self.reads2.is_some() || self.interleaved).then_some(PairConfig {
            orientation: if self.rf {
                Orientation::Rf
            } else if self.ff {
                Orientation::Ff
            } else {
                Orientation::Fr
            },
            min_insert: self.min_insert,
            max_insert: self.max_insert,
        });
        if pairing.is_none()
            && (self.fr
                || self.rf
                || self.ff
                || self.min_insert.is_some()
                || self.max_insert.is_some())
        {
            anyhow::bail!(
                "--fr, --rf, --ff, -I and -X apply to pairs: give READS2 or --interleaved"
            );
        }
        if let Some(p) = &pairing {
            p.check()?;
        }
        Ok(pairing)
    }
}

/// The command line for @PG CL, without the options that cannot change the
/// output (-t, -K, -q), so that the SAM is byte-identical for any of them.
/// Arguments that are not UTF-8 (paths may be anything) are written with
/// U+FFFD in place of the bytes that are not.
pub fn command_line() -> String {
    let mut out = Vec::new();
    let mut args = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
    while let Some(a) = args.next() {
        let takes_value = ["-t", "--threads", "-K", "--batch-bases"].contains(&a.as_str());
        if takes_value {
            args.next();
            continue;
        }
        if ["-q", "--quiet"].contains(&a.as_str())
            || ["--threads=", "--batch-bases="]
                .iter()
                .any(|p| a.starts_with(p))
            || (a.len() > 2 && (a.starts_with("-t") || a.starts_with("-K")) && !a.starts_with("--"))
        {
            continue;
        }
        out.push(a);
    }
    out.join(" ")
}
