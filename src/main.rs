//! The `fmalign` binary: parses the command line (`cli`), runs the
//! library, prints its logs and errors. Errors print as `fmalign: error:
//! ...` with their causes and exit 1; a closed output pipe exits 0 quietly.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use clap::Parser;

use fmalign::index::{Index, IndexConfig, build_file};
use fmalign::io::output::Output;
use fmalign::map::{MapFiles, map_reads};

mod cli;

use cli::{Cli, Command, IndexArgs, MapArgs};

/// `-t`, or fewer when this process may run on fewer CPUs, said once.
fn usable_threads(asked: usize, quiet: bool) -> usize {
    let (threads, note) = fmalign::usable_threads(asked);
    if let Some(note) = note {
        log(quiet, format_args!("{note}"));
    }
    threads
}

fn log(quiet: bool, msg: std::fmt::Arguments<'_>) {
    if !quiet {
        eprintln!("[fmalign] {msg}");
    }
}

fn run_index(mut a: IndexArgs) -> Result<()> {
    a.threads = usable_threads(a.threads, a.quiet);
    let out = fmalign::index::checked_output(&a.reference, &a.out())?;
    let cfg = a.config();
    if a.distributed {
        return run_index_distributed(&a, &cfg, &out);
    }
    let t = Instant::now();
    // Streamed (no record held whole), the digests beside the parse.
    let reference = fmalign::scan::read_packed(&a.reference, cfg.threads)?;
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
    // A build in parts shows its progress on a terminal (not in a pipe, not
    // with -q).
    let bar = (!a.quiet && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(1);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "sorting suffixes: {msg} {wide_bar} {percent}% {elapsed} (about {eta} left)",
            )
            .expect("template"),
        );
        b
    });
    let mut progress = |p: &fmalign::index::Progress| {
        if let Some(b) = &bar {
            b.set_length(p.total);
            b.set_position(p.suffixes);
            b.set_message(format!("part {} of about {}", p.parts, p.planned));
        }
    };
    let report = build_file(reference, &cfg, &out, &mut progress)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
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
/// fails says why, the others stop quietly (`dist::mpi::on_all_ranks`).
#[cfg(feature = "mpi")]
fn run_index_distributed(a: &IndexArgs, cfg: &IndexConfig, out: &Path) -> Result<()> {
    let t = Instant::now();
    // Tests of the failure path only (feature fault-injection): rank K fails.
    #[cfg(feature = "fault-injection")]
    let fail: Option<usize> = std::env::var("FMALIGN_TEST_FAIL_RANK")
        .ok()
        .and_then(|s| s.parse().ok());
    let ran = fmalign::dist::mpi::on_all_ranks(&error_line, |comm| {
        #[cfg(feature = "fault-injection")]
        if let Some(fail) = fail {
            return fmalign::dist::build_with_fault(comm, &a.reference, cfg, out, fail);
        }
        fmalign::dist::build(comm, &a.reference, cfg, out)
    });
    let Some((report, size)) = ran.unwrap_or_else(|_| std::process::exit(1)) else {
        return Ok(());
    };
    if a.sa != fmalign::sa::SaAlgorithm::Auto || a.device != fmalign::device::Device::Auto {
        log(
            a.quiet,
            format_args!(
                "--sa and --device do not apply to --distributed (every rank sorts on its CPU; the index is the same)"
            ),
        );
    }
    for n in &report.notices {
        log(a.quiet, format_args!("{n}"));
    }
    for w in &report.warnings {
        eprintln!("[fmalign] warning: {w}");
    }
    if cfg.stats {
        report.write_stats(&mut std::io::stderr().lock())?;
    }
    log(
        a.quiet,
        format_args!(
            "{size} ranks: {} sequences, {} unambiguous bases, {} ambiguous runs; wrote {} ({} bytes) in {:.2} s",
            report.contigs,
            report.text_len,
            report.holes,
            out.display(),
            report.file_bytes,
            t.elapsed().as_secs_f64()
        ),
    );
    Ok(())
}

fn run_map(mut a: MapArgs) -> Result<()> {
    a.threads = usable_threads(a.threads, a.quiet);
    a.check()?;
    let mut cfg = a.config();
    cfg.read_group = a.read_group()?;
    let pairing = a.pairing()?;
    cfg.copies.check(pairing.is_some())?;
    let t = Instant::now();
    let index_path = resolve_index(&a.index)?;
    let files = MapFiles {
        given: &a.index,
        index: &index_path,
        reads: &a.reads,
        reads2: a.reads2.as_deref(),
        output: a.output.as_deref(),
    };
    let sam_path = files.checked_output(&a.copies())?;
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
    for reads in std::iter::once(&a.reads).chain(&a.reads2) {
        if let Some(w) = fmalign::io::input::truncation_warning(reads) {
            eprintln!("[fmalign] warning: {w}");
        }
    }
    let source = files.open_reads(pairing, a.threads)?;
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
    let cl = cli::command_line();
    let paired = source.pairing().is_some();
    let mut output = Output::create(sam_path.as_deref())?;
    let name = output.name().to_owned();
    let writer = std::io::BufWriter::with_capacity(1 << 20, output.writer());
    let stats = map_reads(&index, source, writer, &name, &cfg, &cl, &progress)?;
    output.finish()?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    for w in stats.warnings() {
        eprintln!("[fmalign] warning: {w}");
    }
    for line in stats.log_lines(paired) {
        log(a.quiet, format_args!("{line}"));
    }
    if !a.quiet {
        // bowtie2's layout, unprefixed: MultiQC's bowtie2 module reads it.
        eprint!("{}", stats.summary.bowtie2_text(paired));
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
    fmalign::io::output::exit_on_sigbus(&found.path);
    Ok(found.path)
}

fn run_check(given: &Path, full: bool) -> Result<()> {
    let path = resolve_index(given)?;
    let t = Instant::now();
    let index = Index::open(&path)?;
    if full {
        fmalign::check::check_full(&index)?;
    }
    // Given the FASTA (not the index): is it still what the index holds?
    let fasta = if path != given {
        let contigs = fmalign::check::check_reference(&index, given)?;
        format!("{} matches ({contigs} sequences, MD5); ", given.display())
    } else {
        String::new()
    };
    println!(
        "{}: ok ({}{fasta}{:.2} s)",
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

fn run_gpu_info(arch: &'static str, ptx_dir: Option<&std::path::Path>) -> Result<()> {
    let (report, ok) = fmalign::gpu::info(arch, ptx_dir)?;
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
    fmalign::alloc::fit_address_space_limit();
    let cli = Cli::parse();
    // An interrupted run leaves no temporary or partial output file.
    if let Err(e) = fmalign::io::output::remove_on_signal() {
        eprintln!(
            "[fmalign] warning: cannot handle signals ({e}); an interrupted run may leave a .tmp file"
        );
    }
    let result = match cli.command {
        Command::Index(a) => run_index(a),
        Command::Map(a) => run_map(*a),
        Command::Info { index } => run_info(&index),
        Command::Check { index, full } => run_check(&index, full),
        Command::GpuInfo { arch, ptx_dir } => run_gpu_info(arch, ptx_dir.as_deref()),
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
