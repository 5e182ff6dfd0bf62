//! Build orchestration: reference → suffix array → FM tables → sections, written to a file or to memory.

use std::path::{Path, PathBuf};
use std::time::Instant;

use fmalign_index_format::{self as format};

use super::bounded;
use super::config::{IndexConfig, memory_estimate};
use super::open::Index;
use super::sections::{FLAG_WIDE, Meta, WIDE_THRESHOLD, encode_layout};
use crate::device::{Device, Ran};
use crate::dna::{PackedText, pack};
use crate::error::{Error, Result};
use crate::reference::{Layout, Reference};
use crate::sa::{self, Pos};
use crate::tables::{FmParts, fm_from_bwt, fm_from_sa};

/// `fmalign index FASTA -p OUT` as a function: reads the FASTA at `fasta`
/// (plain, gzip or BGZF; streamed, 2 bits per base), builds its index with
/// `cfg` and writes it to `out` ([`checked_output`] first: the FASTA is
/// never overwritten). The FASTA's warnings (skipped empty records) are in
/// the report's `notices`. No progress is shown.
pub fn build_index(fasta: &Path, out: &Path, cfg: &IndexConfig) -> Result<BuildReport> {
    cfg.validate()?;
    let out = checked_output(fasta, out)?;
    let reference = crate::scan::read_packed(fasta, cfg.threads)?;
    let warnings = reference.warnings.clone();
    let mut report = build_file(reference, cfg, &out, &mut |_| {})?;
    report.notices.extend(warnings);
    Ok(report)
}

/// The file an index of `reference` is written to, checked before any work:
/// `asked` (`-p`, or [`super::default_path`]), through a symbolic link to
/// its target. Refused: a reference read from stdin (`-`: it is read more
/// than once and names the index); an `asked` that is not a regular file
/// (the index is written beside it and renamed into place, which would
/// replace a FIFO or a device); the reference itself; a file that cannot be
/// created (a missing or read-only directory).
pub fn checked_output(reference: &Path, asked: &Path) -> Result<PathBuf> {
    if reference == Path::new("-") {
        return Err(Error::Usage(
            "-: the reference must be a file (it is read more than once, and the index is named after it); save it to a file first".into(),
        ));
    }
    let out = crate::io::output::follow_links(asked);
    if crate::io::output::written_in_place(&out) {
        return Err(Error::Usage(format!(
            "{}: not a regular file; the index is written as a file beside it and renamed into place, so -p must name a file",
            asked.display()
        )));
    }
    crate::io::output::check_outputs(&[("-p", asked)], &[("the reference", reference)]).map_err(
        |e| {
            Error::Usage(format!(
                "{e} (-p names the index file, e.g. {})",
                super::default_path(reference).display()
            ))
        },
    )?;
    crate::io::output::check_writable(&out)?;
    Ok(out)
}

/// Timings and sizes of a build, for the log.
#[derive(Clone, Debug, Default)]
pub struct BuildReport {
    /// Seconds spent in suffix sorting.
    pub sa_seconds: f64,
    /// Seconds spent deriving BWT, Occ and sampled SA.
    pub fm_seconds: f64,
    /// Bytes written.
    pub file_bytes: u64,
    /// `cpu` or `gpu`: where the suffix array and FM tables were built.
    pub device: Ran,
    /// One-line notices (the GPU was not used, and why).
    pub notices: Vec<String>,
}

/// Builds the index of `reference` and writes it to `out` (through a
/// temporary file renamed at the end, so that no partial file ever carries
/// the final name).
pub fn build_and_write(reference: Reference, cfg: &IndexConfig, out: &Path) -> Result<BuildReport> {
    build_with(reference, cfg, &mut |flags, sections| {
        crate::io::output::write_atomically(out, |w| format::write(w, flags, sections))
    })
}

/// Builds the index of a reference read 2 bits per base
/// ([`crate::scan::read_packed`]) and writes it to `out`: the
/// whole-text build when its [`memory_estimate`] fits `max_memory`, else
/// (or when `max_part`/`dcv` ask for it) the build in parts of
/// [`bounded`], within the limit; below [`bounded::least_limit`] an error
/// with the figures. The bytes are the same either way. `progress` is called
/// after each part of a build in parts ([`bounded::Progress`]).
pub fn build_file(
    reference: Reference<PackedText>,
    cfg: &IndexConfig,
    out: &Path,
    progress: &mut bounded::OnProgress<'_>,
) -> Result<BuildReport> {
    cfg.validate()?;
    let n = reference.text.len() as u64;
    let wide = cfg.wide || n >= WIDE_THRESHOLD;
    let forced = cfg.max_part.is_some() || cfg.dcv.is_some();
    let need = memory_estimate(n, wide, cfg.sa);
    if !forced && cfg.max_memory.is_none_or(|limit| need <= limit) {
        return build_and_write(reference.unpacked(), cfg, out);
    }
    let Some(plan) = bounded::plan(n, wide, cfg.max_memory, cfg.max_part, cfg.dcv) else {
        // The least limit that would succeed: of the build in parts with
        // the options given (forced parts can need more than the floor),
        // and unforced, of the whole-text build too (a small genome's
        // needs less than the parts' fixed cost).
        let Some(parts) = bounded::least_limit(n, wide, cfg.max_part, cfg.dcv) else {
            return Err(Error::Usage(format!(
                "no build in parts of {n} unambiguous bases meets --max-part/--dcv within any memory limit; leave them out"
            )));
        };
        let least = if forced { parts } else { parts.min(need) };
        let hum = crate::mem::human_bytes;
        // Rounded up, so that the figure stated is enough.
        let stated = hum(least.div_ceil(1 << 20) << 20);
        return Err(Error::Usage(format!(
            "building the index of {n} unambiguous bases needs at least {stated} of memory (whole-text: {}; in parts{}: {}, at best {:.2} bytes per base + {}), more than the limit of {} (--max-memory; default: 90% of the memory available, within the process's limits); raise it, or build with --distributed on several machines",
            hum(need),
            if forced {
                ", as --max-part/--dcv ask"
            } else {
                ""
            },
            hum(parts),
            bounded::FLOOR_BYTES_PER_BASE,
            hum(bounded::FIXED),
            hum(cfg.max_memory.unwrap_or(0)),
        )));
    };
    let pool = crate::thread_pool(cfg.threads)?;
    let t = Instant::now();
    let mut report = pool.install(|| {
        if wide {
            bounded::build_in_parts::<u64>(reference, cfg, &plan, out, progress)
        } else {
            bounded::build_in_parts::<u32>(reference, cfg, &plan, out, progress)
        }
    })?;
    report.sa_seconds = (t.elapsed().as_secs_f64() - report.fm_seconds).max(0.0);
    if !forced {
        report.notices.insert(
            0,
            format!(
                "the whole-text build needs about {} of memory, more than the limit of {}",
                crate::mem::human_bytes(need),
                crate::mem::human_bytes(cfg.max_memory.unwrap_or(0))
            ),
        );
    }
    Ok(report)
}

/// Receives the header flags and the encoded sections, writes them, returns
/// the byte count.
type Sink<'s> = dyn FnMut(u32, &[&[u8]]) -> Result<u64> + Send + 's;

fn build_with(reference: Reference, cfg: &IndexConfig, sink: &mut Sink<'_>) -> Result<BuildReport> {
    cfg.validate()?;
    let pool = crate::thread_pool(cfg.threads)?;
    let n = reference.text.len() as u64;
    let wide = cfg.wide || n >= WIDE_THRESHOLD;
    if let Some(limit) = cfg.max_memory {
        let need = memory_estimate(n, wide, cfg.sa);
        if need > limit {
            return Err(Error::Usage(format!(
                "building the index of {n} unambiguous bases with --sa {} needs about {} of memory, more than the limit of {} (--max-memory; default: 90% of the memory available); raise it, or build with --distributed on several machines",
                crate::Choice::name(cfg.sa),
                crate::mem::human_bytes(need),
                crate::mem::human_bytes(limit)
            )));
        }
    }
    pool.install(|| {
        if wide {
            build_typed::<u64>(reference, cfg, sink)
        } else {
            build_typed::<u32>(reference, cfg, sink)
        }
    })
}

fn build_typed<P: Pos>(
    reference: Reference,
    cfg: &IndexConfig,
    sink: &mut Sink<'_>,
) -> Result<BuildReport> {
    let Reference { layout, text, .. } = reference;
    let shift = cfg.sa_sample.trailing_zeros();
    let mut report = BuildReport::default();
    let stats = cfg.stats;
    if stats {
        eprintln!("{}", sa::Round::TSV_HEADER);
    }
    let mut log = |r: &sa::Round| {
        if stats {
            eprintln!("{}", r.tsv());
        }
    };
    let mut on_gpu = gpu_wanted(cfg, text.len() as u64, &mut report.notices);
    // The mirror index (bidirectional search) first: the same tables for the
    // reversed text, with no sampled SA (one entry: it is never located).
    // Built in this order, the forward suffix array — the peak of memory —
    // runs beside the mirror's Occ alone, not beside the forward tables and
    // PAC as well.
    let t = Instant::now();
    let n = text.len() as u64;
    let (rev, text) = if !on_gpu && cfg.sa.data_parallel().is_none() {
        // libsais on the CPU: the mirror's BWT straight from libsais, in
        // place of the reversed text (no suffix array to read the BWT
        // from at random); the text comes back from a 2-bit copy.
        let packed = PackedText::from_codes(&text);
        let mut bwt = text;
        bwt.reverse();
        report.fm_seconds += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let primary = sa::libsais_bwt(&mut bwt, cfg.threads)?;
        report.sa_seconds += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let rev = fm_from_bwt::<P>(&bwt, primary);
        drop(bwt);
        let text = packed.to_codes();
        report.fm_seconds += t.elapsed().as_secs_f64();
        (rev, text)
    } else {
        let mut reversed = text;
        reversed.reverse();
        report.fm_seconds += t.elapsed().as_secs_f64();
        // --stats logs the text's rounds only; the reversed text's follow
        // the same course and would double every table that reads them.
        let mut quiet = |_: &sa::Round| {};
        let (rev, mut text) =
            fm_tables::<P>(reversed, cfg, 63, &mut on_gpu, &mut report, &mut quiet)?;
        text.reverse();
        (rev, text)
    };
    let (parts, text) = fm_tables::<P>(text, cfg, shift, &mut on_gpu, &mut report, &mut log)?;
    let t = Instant::now();
    let pac = pack(&text);
    drop(text);
    report.fm_seconds += t.elapsed().as_secs_f64();
    report.device = if on_gpu { Ran::Gpu } else { Ran::Cpu };
    report.file_bytes = write_sections(sink, &layout, n, cfg.sa_sample, &parts, &rev, &pac)?;
    Ok(report)
}

/// The FM tables of `text` (SA sampled every `2^shift` rows) on the GPU
/// while `on_gpu` holds (a GPU error clears it, with a notice, and the CPU
/// takes over), else on the CPU. Adds the stage times to `report`.
fn fm_tables<P: Pos>(
    text: Vec<u8>,
    cfg: &IndexConfig,
    shift: u32,
    on_gpu: &mut bool,
    report: &mut BuildReport,
    log: &mut (dyn FnMut(&sa::Round) + Send),
) -> Result<(FmParts<P>, Vec<u8>)> {
    let t = Instant::now();
    if *on_gpu {
        match crate::tables::fm_on_gpu::<P>(&text, cfg.sa, shift, cfg.max_gpu_memory, log) {
            Ok((parts, peak)) => {
                // SA and FM tables were one device run: counted as the SA stage.
                report.sa_seconds += t.elapsed().as_secs_f64();
                let n = text.len().max(1) as f64;
                let plan = sa::gpu_bytes_per_base(std::mem::size_of::<P>() as u64, cfg.sa);
                report.notices.push(format!(
                    "device memory: peak {} = {:.1} bytes per base (plan: {plan})",
                    crate::mem::human_bytes(peak),
                    peak as f64 / n
                ));
                return Ok((parts, text));
            }
            Err(e) => {
                report
                    .notices
                    .push(format!("{e}; building on the CPU instead"));
                *on_gpu = false;
            }
        }
    }
    let t = Instant::now();
    let (sa, text) = sa::suffix_array_owned::<P>(text, cfg.sa, cfg.threads, log)?;
    report.sa_seconds += t.elapsed().as_secs_f64();
    let t = Instant::now();
    let parts = fm_from_sa(&text, sa.as_slice(), shift);
    report.fm_seconds += t.elapsed().as_secs_f64();
    Ok((parts, text))
}

/// Whether to try the GPU for a text of `n` bases; records why not when
/// the device was wanted but cannot be used.
pub(super) fn gpu_wanted(cfg: &IndexConfig, n: u64, notices: &mut Vec<String>) -> bool {
    match cfg.device {
        Device::Cpu => return false,
        Device::Auto if n < sa::GPU_AUTO_MIN_BASES => return false,
        Device::Auto if cfg.sa == sa::SaAlgorithm::Libsais => return false,
        Device::Gpu if cfg.sa == sa::SaAlgorithm::Libsais => {
            notices.push("--sa libsais runs on the CPU only; building on the CPU".into());
            return false;
        }
        _ => {}
    }
    match crate::gpu::probe().why_not() {
        None => true,
        Some(why) => {
            notices.push(format!("no GPU: {why}; building on the CPU"));
            false
        }
    }
}

fn write_sections<P: Pos>(
    sink: &mut Sink<'_>,
    layout: &Layout,
    n: u64,
    sa_sample: u32,
    parts: &FmParts<P>,
    rev: &FmParts<P>,
    pac: &[u8],
) -> Result<u64> {
    let meta = Meta::new(
        layout,
        n,
        sa_sample,
        P::BYTES,
        parts.c,
        parts.primary,
        rev.primary,
    )
    .encode();
    let (contigs, names, holes) = encode_layout(layout);
    let sections: [&[u8]; 10] = [
        &meta,
        &contigs,
        &names,
        &holes,
        pac,
        bytemuck::cast_slice(&parts.occ),
        bytemuck::cast_slice(&parts.sup),
        bytemuck::cast_slice(&parts.ssa),
        bytemuck::cast_slice(&rev.occ),
        bytemuck::cast_slice(&rev.sup),
    ];
    let flags = if P::BYTES == 8 { FLAG_WIDE } else { 0 };
    sink(flags, &sections)
}

/// Builds an index in memory (for tests and examples).
pub fn build_in_memory(reference: Reference, cfg: &IndexConfig) -> Result<Index> {
    let mut bytes = Vec::new();
    build_with(reference, cfg, &mut |flags, sections| {
        format::write(&mut bytes, flags, sections).map_err(|e| Error::io("<memory>", e))
    })?;
    Index::from_bytes(Path::new("<memory>"), &bytes)
}
