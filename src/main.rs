//! The `fmalign` command line: a thin shell over the library. Errors print
//! as `fmalign: error: ...` with their causes and exit 1; a closed output
//! pipe exits 0 quietly.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};

use fmalign::Choice;
use fmalign::cleanup::Output;
use fmalign::device::Device;
use fmalign::index::{DEFAULT_SA_SAMPLE, Index, IndexConfig, build_and_write};
use fmalign::map::{MapConfig, OutputFormat, PairConfig, Reads, Report, SearchMode, map_reads};
use fmalign::pair::Orientation;
use fmalign::sa::SaAlgorithm;

#[derive(Parser)]
#[command(
    name = "fmalign",
    version,
    about = "FM-index read aligner: index a FASTA reference, map reads exactly, write SAM"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// A count that must be at least 1 (`-t 0` is an error).
fn positive(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(x) => Ok(x),
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
enum Command {
    /// Build REF.fa.fmi from a FASTA reference (plain, gzip or BGZF).
    Index(IndexArgs),
    /// Map FASTQ reads (exact matches, both strands) and write SAM.
    Map(MapArgs),
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
    },
}

#[derive(Args)]
struct IndexArgs {
    /// Output index path [default: REFERENCE.fmi, e.g. ref.fa.gz.fmi]
    #[arg(short = 'p', long = "prefix", value_name = "INDEX")]
    output: Option<PathBuf>,
    /// Worker threads
    #[arg(short, long, default_value_t = default_threads(), value_parser = positive)]
    threads: usize,
    /// Suffix-array construction (every choice gives the same index)
    #[arg(long, value_parser = choice::<SaAlgorithm>(), default_value = SaAlgorithm::Auto.name())]
    sa: SaAlgorithm,
    /// Keep every K-th suffix-array row (power of two; larger: smaller index, slower locate)
    #[arg(long, value_name = "K", default_value_t = DEFAULT_SA_SAMPLE)]
    sa_sample: u32,
    /// Store 64-bit positions even for small references (tests the >4 Gbp path)
    #[arg(long, hide = true)]
    wide_positions: bool,
    /// Where to build: auto = the GPU for references of 4 Mbp or more when one is present
    #[arg(long, value_parser = choice::<Device>(), default_value = Device::Auto.name())]
    device: Device,
    /// Log each round of --sa hybrid/skew/ls to stderr (h, suffixes still unsorted, groups, time; the text's suffix array, not the mirror index's)
    #[arg(long)]
    stats: bool,
    /// No log messages (warnings and errors still print)
    #[arg(short, long)]
    quiet: bool,
    /// Refuse up front when the build would need more memory than SIZE (e.g. 16G, 500M; K, M, G, T: powers of 1024) [default: 90% of the available memory]
    #[arg(long, value_name = "SIZE", value_parser = fmalign::mem::parse_size)]
    max_memory: Option<u64>,
    /// Device memory the GPU build may use (e.g. 40G) [default: the free device memory]; a larger estimate builds on the CPU, with a notice
    #[arg(long, value_name = "SIZE", value_parser = fmalign::mem::parse_size)]
    max_gpu_memory: Option<u64>,
    /// Build on all ranks of an MPI job (`mpirun -np P fmalign index --distributed ref.fa`;
    /// needs a build with `--features mpi`); the index is the same bytes as without it
    #[arg(long)]
    distributed: bool,
    /// Reference FASTA
    reference: PathBuf,
}

#[derive(Args)]
struct MapArgs {
    /// Worker threads
    #[arg(short, long, default_value_t = default_threads(), value_parser = positive)]
    threads: usize,
    /// Report up to N alignments per read (extra ones with flag 0x100)
    #[arg(short = 'k', value_name = "N", conflicts_with = "all", value_parser = positive)]
    k: Option<usize>,
    /// Report all alignments (as bowtie -a)
    #[arg(short = 'a', long = "all")]
    all: bool,
    /// Allow up to K mismatches over the whole read, both strands (as bowtie -v K; N in a read is a mismatch)
    #[arg(short = 'v', value_name = "K", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=3))]
    mismatches: u8,
    /// Best alignments first, primary from the fewest mismatches (always on; accepted for bowtie compatibility)
    #[arg(long)]
    best: bool,
    /// Report only alignments of the best stratum (fewest mismatches), as bowtie --strata
    #[arg(long)]
    strata: bool,
    /// Where to search exact reads: auto = the GPU when one is present (-v K runs on the CPU)
    #[arg(long, value_parser = choice::<Device>(), default_value = Device::Auto.name())]
    device: Device,
    /// Search method for -v (benchmarks: every method gives the same alignments)
    #[arg(long, value_parser = choice::<SearchMode>(), default_value = SearchMode::Verify.name(), hide = true)]
    search: SearchMode,
    /// Write here instead of stdout (BAM when the name ends in .bam)
    #[arg(short = 'o', long = "output", value_name = "OUT.sam|OUT.bam")]
    output: Option<PathBuf>,
    /// Output format [default: bam for -o *.bam, else sam]
    #[arg(long = "output-fmt", value_parser = choice::<OutputFormat>(), value_name = "FORMAT")]
    output_fmt: Option<OutputFormat>,
    /// List alternative hits in XA:Z when a read has at most this many
    #[arg(long, value_name = "N", default_value_t = MapConfig::default().max_xa)]
    max_xa: usize,
    /// Bases per batch (does not change the output)
    #[arg(short = 'K', long, value_name = "BASES", default_value_t = MapConfig::default().batch_bases, value_parser = positive)]
    batch_bases: usize,
    /// Start each search with a table of all k-mers' intervals (0: no table; memory 16 x 4^k bytes)
    #[arg(long, value_name = "K", default_value_t = MapConfig::default().kmer, value_parser = clap::value_parser!(u32).range(0..=13))]
    kmer: u32,
    /// Without -a, locate at most N hits of a read in full; reads with more report hits found from a name-seeded start, with X0 = rows
    #[arg(long, value_name = "N", default_value_t = MapConfig::default().max_locate)]
    max_locate: u64,
    /// No log messages or progress bar (warnings and errors still print)
    #[arg(short, long)]
    quiet: bool,
    /// The .fmi file, or the FASTA it was built from (then FASTA.fmi is used)
    index: PathBuf,
    /// Reads: FASTQ (or FASTA), plain or gzip; - for stdin. Mate 1 with READS2
    reads: PathBuf,
    /// Mate 2 of each pair of READS (same order, same names up to /1 and /2)
    #[arg(conflicts_with = "interleaved")]
    reads2: Option<PathBuf>,
    /// READS holds pairs: mate 1, mate 2, mate 1, ...
    #[arg(long)]
    interleaved: bool,
    /// Proper pairs: mate on the forward strand upstream of the one on the reverse strand (default)
    #[arg(long, conflicts_with_all = ["rf", "ff"])]
    fr: bool,
    /// Proper pairs: mate on the reverse strand upstream (mate-pair libraries)
    #[arg(long, conflicts_with = "ff")]
    rf: bool,
    /// Proper pairs: both mates on one strand, mate 1 upstream
    #[arg(long)]
    ff: bool,
    /// Shortest fragment of a proper pair [default: estimated from the first pairs]
    #[arg(short = 'I', long = "minins", value_name = "BASES")]
    min_insert: Option<u64>,
    /// Longest fragment of a proper pair [default: estimated from the first pairs]
    #[arg(short = 'X', long = "maxins", value_name = "BASES")]
    max_insert: Option<u64>,
}

fn log(quiet: bool, msg: std::fmt::Arguments<'_>) {
    if !quiet {
        eprintln!("[fmalign] {msg}");
    }
}

fn run_index(a: IndexArgs) -> Result<()> {
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| fmalign::index::default_path(&a.reference));
    let cfg = IndexConfig {
        threads: a.threads,
        sa: a.sa,
        sa_sample: a.sa_sample,
        wide: a.wide_positions,
        stats: a.stats,
        device: a.device,
        max_memory: a
            .max_memory
            .or_else(|| fmalign::mem::available_memory().map(|m| m / 10 * 9)),
        max_gpu_memory: a.max_gpu_memory,
    };
    if a.distributed {
        return run_index_distributed(&a, &cfg, &out);
    }
    let t = Instant::now();
    let reference = fmalign::reference::read_fasta(&a.reference)?;
    for w in &reference.warnings {
        eprintln!("[fmalign] warning: {w}");
    }
    let (n, contigs, holes) = (
        reference.text.len(),
        reference.layout.contigs.len(),
        reference.layout.holes.len(),
    );
    log(
        a.quiet,
        format_args!(
            "read {contigs} sequences, {n} unambiguous bases, {holes} ambiguous runs in {:.2} s",
            t.elapsed().as_secs_f64()
        ),
    );
    let report = build_and_write(reference, &cfg, &out)?;
    for notice in &report.notices {
        log(a.quiet, format_args!("{notice}"));
    }
    log(
        a.quiet,
        format_args!(
            "suffix array {:.2} s ({}), BWT/Occ/SA samples {:.2} s; wrote {} ({} bytes) in {:.2} s total",
            report.sa_seconds,
            report.device,
            report.fm_seconds,
            out.display(),
            report.file_bytes,
            t.elapsed().as_secs_f64()
        ),
    );
    Ok(())
}

#[cfg(not(feature = "mpi"))]
fn run_index_distributed(_: &IndexArgs, _: &IndexConfig, _: &Path) -> Result<()> {
    anyhow::bail!(
        "--distributed needs fmalign built with MPI support: `cargo build --release --features mpi` (see README)"
    )
}

/// `mpirun -np P fmalign index --distributed`: rank 0 logs; a rank that
/// fails says why, the others stop quietly (rank 0 names the failed rank).
#[cfg(feature = "mpi")]
fn run_index_distributed(a: &IndexArgs, cfg: &IndexConfig, out: &Path) -> Result<()> {
    use fmalign::dist::Comm;
    let t = Instant::now();
    let comm = fmalign::dist::mpi::MpiComm::init()?;
    // Tests of the failure path only (feature fault-injection): rank K fails.
    #[cfg(feature = "fault-injection")]
    let result = match std::env::var("FMALIGN_TEST_FAIL_RANK").map(|s| s.parse()) {
        Ok(Ok(fail)) => fmalign::dist::index::build_with_fault(&comm, &a.reference, cfg, out, fail),
        _ => fmalign::dist::index::build(&comm, &a.reference, cfg, out),
    };
    #[cfg(not(feature = "fault-injection"))]
    let result = fmalign::dist::index::build(&comm, &a.reference, cfg, out);
    let (rank, size) = (comm.rank(), comm.size());
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            // Every rank knows the build failed (the phases end in an
            // agreement). Each says its part before any exits: mpirun ends
            // the job at the first non-zero exit status.
            match e {
                fmalign::Error::OtherRank(_) if rank != 0 => {}
                e if size > 1 => error_line(&format!("fmalign: error: rank {rank}: {e}")),
                e => error_line(&format!("fmalign: error: {e}")),
            }
            comm.all_ok(false);
            drop(comm);
            std::process::exit(1);
        }
    };
    drop(comm);
    if rank != 0 {
        return Ok(());
    }
    if a.sa != SaAlgorithm::Auto || a.device != Device::Auto {
        log(
            a.quiet,
            format_args!(
                "--sa and --device do not apply to --distributed (prefix doubling on every rank's CPU; the index is the same)"
            ),
        );
    }
    for w in &report.warnings {
        eprintln!("[fmalign] warning: {w}");
    }
    if cfg.stats {
        eprintln!("#dist\trank\tphase\tseconds\tbytes_sent");
        for (r, phases) in report.phases.iter().enumerate() {
            for ph in phases {
                eprintln!(
                    "dist\t{r}\t{}\t{:.3}\t{}",
                    ph.name, ph.seconds, ph.bytes_sent
                );
            }
        }
        eprintln!("#dist-round\th\tunsorted\tgroups");
        for (h, open, groups) in &report.rounds {
            eprintln!("dist-round\t{h}\t{open}\t{groups}");
        }
    }
    log(
        a.quiet,
        format_args!(
            "{size} ranks: {} sequences, {} unambiguous bases, {} ambiguous runs; {} prefix-doubling rounds; wrote {} ({} bytes) in {:.2} s",
            report.contigs,
            report.text_len,
            report.holes,
            report.rounds.len(),
            out.display(),
            report.file_bytes,
            t.elapsed().as_secs_f64()
        ),
    );
    Ok(())
}

/// The command line for @PG CL, without the options that cannot change the
/// output (-t, -K, -q), so that the SAM is byte-identical for any of them.
/// Arguments that are not UTF-8 (paths may be anything) are written with
/// U+FFFD in place of the bytes that are not.
fn command_line() -> String {
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

fn run_map(a: MapArgs) -> Result<()> {
    let report = match (a.all, a.k) {
        (true, _) => Report::All,
        (false, Some(k)) => Report::UpTo(k),
        (false, None) => Report::Best,
    };
    let cfg = MapConfig {
        threads: a.threads,
        report,
        batch_bases: a.batch_bases,
        max_xa: a.max_xa,
        kmer: a.kmer,
        max_locate: a.max_locate,
        mismatches: a.mismatches,
        strata: a.strata,
        search: a.search,
        device: a.device,
        format: a.output_fmt.unwrap_or_else(|| {
            let bam = a
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
    };
    let pairing = (a.reads2.is_some() || a.interleaved).then_some(PairConfig {
        orientation: if a.rf {
            Orientation::Rf
        } else if a.ff {
            Orientation::Ff
        } else {
            Orientation::Fr
        },
        min_insert: a.min_insert,
        max_insert: a.max_insert,
    });
    if pairing.is_none()
        && (a.fr || a.rf || a.ff || a.min_insert.is_some() || a.max_insert.is_some())
    {
        anyhow::bail!("--fr, --rf, --ff, -I and -X apply to pairs: give READS2 or --interleaved");
    }
    if let Some(p) = &pairing {
        p.check()?;
    }
    let t = Instant::now();
    let index_path = resolve_index(&a.index)?;
    let index = Index::open(&index_path)?;
    log(
        a.quiet,
        format_args!(
            "loaded {} ({} bases) in {:.2} s",
            index_path.display(),
            index.meta.text_len,
            t.elapsed().as_secs_f64()
        ),
    );
    let source = {
        use fmalign::fastq::{PairSource, ReadSource};
        let one = ReadSource::open(&a.reads)?;
        match (&a.reads2, pairing) {
            (Some(two), _) if two == &a.reads => {
                anyhow::bail!(
                    "READS and READS2 are the same file; for one file of pairs use --interleaved"
                )
            }
            (Some(two), Some(p)) => {
                Reads::Paired(PairSource::two_files(one, ReadSource::open(two)?), p)
            }
            (None, Some(p)) => Reads::Paired(PairSource::interleaved(one), p),
            (_, None) => Reads::Single(one),
        }
    };
    let bar = (!a.quiet && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new_spinner();
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("template"),
        );
        b
    });
    let t = Instant::now();
    let progress = |s: &fmalign::map::MapStats| {
        if let Some(b) = &bar {
            b.set_message(format!(
                "{} reads, {} mapped, {:.0} reads/s",
                s.reads,
                s.mapped,
                fmalign::map::rate(s.reads, t)
            ));
            b.tick();
        }
    };
    let cl = command_line();
    let mut output = Output::create(a.output.as_deref())?;
    let name = output.name().to_owned();
    let writer = std::io::BufWriter::with_capacity(1 << 20, output.writer());
    let paired = source.pairing().is_some();
    let stats = map_reads(&index, source, writer, &name, &cfg, &cl, &progress)?;
    output.finish()?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    for notice in &stats.notices {
        log(a.quiet, format_args!("{notice}"));
    }
    if stats.gpu_fallbacks > 0 {
        eprintln!(
            "[fmalign] warning: the GPU failed on {} chunks of reads; they were mapped on the CPU",
            stats.gpu_fallbacks
        );
    }
    if paired {
        log(
            a.quiet,
            format_args!(
                "{} pairs, {} proper ({:.2}%)",
                stats.pairs,
                stats.proper,
                100.0 * stats.proper as f64 / stats.pairs.max(1) as f64
            ),
        );
    }
    log(
        a.quiet,
        format_args!(
            "mapped {} of {} reads ({} alignments) in {:.2} s, {:.0} reads/s ({})",
            stats.mapped,
            stats.reads,
            stats.alignments,
            t.elapsed().as_secs_f64(),
            fmalign::map::rate(stats.reads, t),
            stats.device
        ),
    );
    Ok(())
}

fn run_info(path: &Path) -> Result<()> {
    let path = resolve_index(path)?;
    let index = Index::open(&path)?;
    index.write_info(&mut std::io::stdout().lock())?;
    Ok(())
}

/// The index for INDEX (the file, or the one beside the FASTA), with the
/// library's warning about a stale index printed.
fn resolve_index(path: &Path) -> Result<PathBuf> {
    let found = fmalign::index::resolve(path)?;
    if let Some(w) = &found.warning {
        eprintln!("[fmalign] warning: {w}");
    }
    // The index is memory-mapped: if it is cut short while in use, say so.
    fmalign::cleanup::exit_on_sigbus(&found.path);
    Ok(found.path)
}

fn run_check(path: &Path, full: bool) -> Result<()> {
    let path = resolve_index(path)?;
    let t = Instant::now();
    let index = Index::open(&path)?;
    if full {
        fmalign::check::check_full(&index)?;
    }
    println!(
        "{}: ok ({}{:.2} s)",
        path.display(),
        if full {
            "header, checksums, BWT/Occ/SA against the reference; "
        } else {
            "header, checksums, counts; "
        },
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn run_gpu_info(arch: &'static str) -> Result<()> {
    let (report, ok) = fmalign::gpu::info(arch);
    print!("{report}");
    if !ok {
        anyhow::bail!("some kernels in gpu/ do not compile for {arch}");
    }
    Ok(())
}

/// Prints `msg` and a newline to stderr in one write, so that lines of
/// several processes sharing the stream (the ranks of an MPI job) do not
/// interleave mid-line: `eprintln!` writes its pieces separately.
fn error_line(msg: &str) {
    let line = format!("{msg}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Large blocks as their own huge-page mappings (src/alloc.rs).
#[global_allocator]
static ALLOC: fmalign::alloc::BigPages = fmalign::alloc::BigPages;

fn main() {
    let cli = Cli::parse();
    // An interrupted run leaves no temporary or partial output file.
    if let Err(e) = fmalign::cleanup::remove_on_signal() {
        eprintln!(
            "[fmalign] warning: cannot handle signals ({e}); an interrupted run may leave a .tmp file"
        );
    }
    let result = match cli.command {
        Command::Index(a) => run_index(a),
        Command::Map(a) => run_map(a),
        Command::Info { index } => run_info(&index),
        Command::Check { index, full } => run_check(&index, full),
        Command::GpuInfo { arch } => run_gpu_info(arch),
    };
    if let Err(e) = result {
        let broken_pipe = e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
                || c.downcast_ref::<fmalign::Error>()
                    .is_some_and(|f| f.is_broken_pipe())
        });
        if broken_pipe {
            std::process::exit(0);
        }
        let mut msg = format!("fmalign: error: {e}");
        for cause in e.chain().skip(1) {
            msg.push_str(&format!(": {cause}"));
        }
        error_line(&msg);
        std::process::exit(1);
    }
}
