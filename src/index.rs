//! Build orchestration (reference → suffix array → FM tables → `.fmi`) and
//! the validated, memory-mapped [`Index`]. The byte layout is specified in
//! `index_format/SPEC.md`; the container (header, section table, CRCs) is the
//! `fmalign-index-format` crate, the section contents are encoded here.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use fmalign_index_format::{self as format, SectionId};

pub mod bounded;
pub use bounded::Progress;

use crate::build::{FmParts, fm_from_bwt, fm_from_sa};
use crate::device::{Device, Ran};
use crate::dna::{PackedText, pack};
use crate::error::{Error, Result};
use crate::fm::{FmIndex, LINE_BASES, OccLine, RankIndex, SUPER_LINES, Ssa};
use crate::reference::{Contig, Hole, Layout, Reference};
use crate::sa::{self, Pos, SaAlgorithm};
use crate::segments::Segments;

/// Options of `fmalign index`.
#[derive(Clone, Debug)]
pub struct IndexConfig {
    /// Worker threads.
    pub threads: usize,
    /// Suffix-array construction.
    pub sa: SaAlgorithm,
    /// Keep every K-th suffix-array row (a power of two).
    pub sa_sample: u32,
    /// Store 64-bit positions even when 32 bits would do (tests the >4 Gbp path).
    pub wide: bool,
    /// Print each round of a data-parallel suffix-array algorithm to stderr
    /// (one tab-separated line per round, see [`sa::Round::tsv`]).
    pub stats: bool,
    /// Where to build (the index bytes are the same on every device).
    pub device: Device,
    /// Refuse, before building, when [`memory_estimate`] exceeds this many
    /// bytes (`None`: no limit).
    pub max_memory: Option<u64>,
    /// Device memory the GPU build may use (`None`: the free memory); a
    /// larger estimate builds on the CPU instead, with a notice.
    pub max_gpu_memory: Option<u64>,
    /// Build in parts of at most this many suffixes ([`bounded`]) even when
    /// the whole-text build fits (`None`: parts only when it does not, sized
    /// by `max_memory`).
    pub max_part: Option<u64>,
    /// The difference-cover period of a build in parts (a power of two from
    /// 4 to 4096; `None`: chosen by `max_memory`).
    pub dcv: Option<usize>,
    /// The algorithm of `--distributed` (the bytes are the same).
    pub dist: DistAlgorithm,
}

/// The algorithm of a distributed build (`--dist-algorithm`): the bytes
/// are the same either way (docs/ALGORITHMS.md says when each is used).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DistAlgorithm {
    /// In parts when every rank can hold the text and its share, else
    /// prefix doubling.
    #[default]
    Auto,
    /// Every rank holds the text and sorts its share of the parts.
    Parts,
    /// Distributed prefix doubling: each rank holds only its block of the
    /// text.
    Doubling,
}

impl crate::Choice for DistAlgorithm {
    const ALL: &'static [Self] = &[
        DistAlgorithm::Auto,
        DistAlgorithm::Parts,
        DistAlgorithm::Doubling,
    ];

    fn name(self) -> &'static str {
        match self {
            DistAlgorithm::Auto => "auto",
            DistAlgorithm::Parts => "parts",
            DistAlgorithm::Doubling => "doubling",
        }
    }

    fn help(self) -> &'static str {
        match self {
            DistAlgorithm::Auto => {
                "parts when every rank can hold the text (about 0.46 bytes per base and its share), else doubling"
            }
            DistAlgorithm::Parts => {
                "Every rank reads the text and sorts its share of the parts; a few bytes sent per rank"
            }
            DistAlgorithm::Doubling => {
                "Distributed prefix doubling: each rank holds only its block of the text (about 120 bytes per base of it); about 100 bytes sent per base"
            }
        }
    }
}

impl IndexConfig {
    /// Refuses options no build accepts (the single-process and the
    /// distributed one): an SA sampling rate that is not a power of two
    /// from 1 to 65536.
    pub fn validate(&self) -> Result<()> {
        if let Some(v) = self.dcv
            && !(v.is_power_of_two()
                && (crate::sa::blockwise::V_MIN..=crate::sa::blockwise::V_MAX).contains(&v))
        {
            return Err(Error::Usage(format!(
                "--dcv {v} must be a power of two from {} to {}",
                crate::sa::blockwise::V_MIN,
                crate::sa::blockwise::V_MAX
            )));
        }
        if self.max_part == Some(0) {
            return Err(Error::Usage("--max-part must be at least 1".into()));
        }
        if !self.sa_sample.is_power_of_two() || self.sa_sample > 1 << 16 {
            return Err(Error::Usage(format!(
                "--sa-sample {} must be a power of two from 1 to 65536",
                self.sa_sample
            )));
        }
        Ok(())
    }
}

/// Default SA sampling rate; chosen by measuring locate speed against index
/// size on chr20 (docs/BENCHMARKS.md).
pub const DEFAULT_SA_SAMPLE: u32 = 32;

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            sa: SaAlgorithm::Auto,
            sa_sample: DEFAULT_SA_SAMPLE,
            wide: false,
            stats: false,
            device: Device::Auto,
            max_memory: None,
            max_gpu_memory: None,
            max_part: None,
            dcv: None,
            dist: DistAlgorithm::Auto,
        }
    }
}

/// Peak memory of the whole-text `fmalign index` for a text of `n`
/// unambiguous bases, with 64-bit positions when `wide`: bytes per base
/// from the peaks measured in docs/BENCHMARKS.md (libsais: 5.8 on chr20,
/// 5.7 on 1.89 Gbp, 7.1 on E. coli where the constant counts; ~9.5 above
/// 2^31 bases; the data-parallel algorithms on their worst inputs: hybrid
/// 25, skew 26, ls 63 on all-A), a few percent over, plus 16 MiB. The text
/// itself (1 byte per base, unpacked from the 2-bit read) is included.
pub fn memory_estimate(n: u64, wide: bool, algorithm: SaAlgorithm) -> u64 {
    let big = wide || n >= 1 << 31;
    let per_base: f64 = match (algorithm, big) {
        (SaAlgorithm::Auto | SaAlgorithm::Libsais, false) => 6.0,
        (SaAlgorithm::Auto | SaAlgorithm::Libsais, true) => 10.0,
        (SaAlgorithm::Hybrid, false) => 27.0,
        (SaAlgorithm::Skew, false) => 28.0,
        (SaAlgorithm::Ls, false) => 66.0,
        (SaAlgorithm::Hybrid, true) => 50.0,
        (SaAlgorithm::Skew, true) => 52.0,
        (SaAlgorithm::Ls, true) => 124.0,
    };
    (n as f64 * per_base) as u64 + (16 << 20)
}

/// The index beside a reference: `REF.fa` → `REF.fa.fmi` (`REF.fa.gz` →
/// `REF.fa.gz.fmi`).
pub fn default_path(reference: &Path) -> PathBuf {
    let mut s = reference.as_os_str().to_owned();
    s.push(".fmi");
    PathBuf::from(s)
}

/// The index a user named, as found by [`resolve`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The index file.
    pub path: PathBuf,
    /// Set when the path named a FASTA newer than its index.
    pub warning: Option<String>,
}

/// The index for a path given as INDEX: the file itself if it is an index,
/// else INDEX.fmi (see [`default_path`]) if that exists.
pub fn resolve(path: &Path) -> Result<Resolved> {
    let mut magic = [0u8; 8];
    let is_index = File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok()
        && magic == format::MAGIC;
    let sidecar = default_path(path);
    if !is_index && sidecar.is_file() {
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let warning = match (modified(path), modified(&sidecar)) {
            (Some(fasta), Some(index)) if fasta > index => Some(format!(
                "{} is newer than its index {}; rebuild the index if the reference changed",
                path.display(),
                sidecar.display()
            )),
            _ => None,
        };
        return Ok(Resolved {
            path: sidecar,
            warning,
        });
    }
    if !path.exists() {
        return Err(Error::input(
            path,
            "no such index file (build it with `fmalign index`)",
        ));
    }
    if !is_index && path.extension().is_none_or(|e| e != "fmi") {
        return Err(Error::Usage(format!(
            "{} is not an fmalign index and {} does not exist; build it with `fmalign index {}`",
            path.display(),
            sidecar.display(),
            path.display()
        )));
    }
    Ok(Resolved {
        path: path.to_owned(),
        warning: None,
    })
}

/// Texts of at least this many bases store 64-bit positions.
pub const WIDE_THRESHOLD: u64 = u32::MAX as u64;

const META_LEN: usize = 128;
pub(crate) const CONTIG_LEN: usize = 48;
const HOLE_LEN: usize = 24;
/// Header flag: positions are 64-bit.
pub(crate) const FLAG_WIDE: u32 = 1;

/// Decoded META section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Unambiguous bases in the text.
    pub text_len: u64,
    /// Row of `$`.
    pub primary: u64,
    /// Sum of contig lengths (ambiguous bases included).
    pub ref_len: u64,
    /// Number of contigs.
    pub contigs: u64,
    /// Number of ambiguous runs.
    pub holes: u64,
    /// SA sampling rate.
    pub sa_sample: u32,
    /// Bytes per stored position (4 or 8).
    pub pos_bytes: u32,
    /// `C[0..5]` (the same for the reversed text).
    pub c: [u64; 5],
    /// Row of `$` in the BWT of the reversed text (the mirror index).
    pub rev_primary: u64,
}

impl Meta {
    /// The META of an index of `layout` whose text has `text_len` bases:
    /// the rest comes from the FM tables of the text (`c`, `primary`) and of
    /// the reversed text (`rev_primary`) and the options.
    pub(crate) fn new(
        layout: &Layout,
        text_len: u64,
        sa_sample: u32,
        pos_bytes: u32,
        c: [u64; 5],
        primary: u64,
        rev_primary: u64,
    ) -> Meta {
        Meta {
            text_len,
            primary,
            ref_len: layout.contigs.iter().map(|c| c.len).sum(),
            contigs: layout.contigs.len() as u64,
            holes: layout.holes.len() as u64,
            sa_sample,
            pos_bytes,
            c,
            rev_primary,
        }
    }

    /// The 128 bytes of the META section.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut m = Vec::with_capacity(META_LEN);
        for x in [
            self.text_len,
            self.primary,
            self.ref_len,
            self.contigs,
            self.holes,
        ] {
            m.extend_from_slice(&x.to_le_bytes());
        }
        m.extend_from_slice(&self.sa_sample.to_le_bytes());
        m.extend_from_slice(&self.pos_bytes.to_le_bytes());
        for x in self.c {
            m.extend_from_slice(&x.to_le_bytes());
        }
        m.extend_from_slice(&(LINE_BASES as u32).to_le_bytes());
        m.extend_from_slice(&(SUPER_LINES as u32).to_le_bytes());
        m.extend_from_slice(&self.rev_primary.to_le_bytes());
        m.resize(META_LEN, 0);
        m
    }

    fn decode(b: &[u8]) -> std::result::Result<Meta, String> {
        if b.len() != META_LEN {
            return Err(format!(
                "meta section has {} bytes, expected {META_LEN}",
                b.len()
            ));
        }
        let u64_at = |k: usize| u64::from_le_bytes(b[k..k + 8].try_into().expect("8"));
        let u32_at = |k: usize| u32::from_le_bytes(b[k..k + 4].try_into().expect("4"));
        if u32_at(88) as u64 != LINE_BASES || u32_at(92) as u64 != SUPER_LINES {
            return Err("unsupported Occ line geometry".into());
        }
        if b[104..].iter().any(|&x| x != 0) {
            return Err("reserved meta bytes are not zero".into());
        }
        Ok(Meta {
            text_len: u64_at(0),
            primary: u64_at(8),
            ref_len: u64_at(16),
            contigs: u64_at(24),
            holes: u64_at(32),
            sa_sample: u32_at(40),
            pos_bytes: u32_at(44),
            c: [u64_at(48), u64_at(56), u64_at(64), u64_at(72), u64_at(80)],
            rev_primary: u64_at(96),
        })
    }
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
        crate::cleanup::write_atomically(out, |w| format::write(w, flags, sections))
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
            bounded::build::<u64>(reference, cfg, &plan, out, progress)
        } else {
            bounded::build::<u32>(reference, cfg, &plan, out, progress)
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
        match crate::build::fm_on_gpu::<P>(&text, cfg.sa, shift, cfg.max_gpu_memory, log) {
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
    let (sa, text) = sa::build_owned::<P>(text, cfg.sa, cfg.threads, log)?;
    report.sa_seconds += t.elapsed().as_secs_f64();
    let t = Instant::now();
    let parts = fm_from_sa(&text, sa.as_slice(), shift);
    report.fm_seconds += t.elapsed().as_secs_f64();
    Ok((parts, text))
}

/// Whether to try the GPU for a text of `n` bases; records why not when
/// the device was wanted but cannot be used.
fn gpu_wanted(cfg: &IndexConfig, n: u64, notices: &mut Vec<String>) -> bool {
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

/// The CONTIGS, NAMES and HOLES sections.
pub(crate) fn encode_layout(layout: &Layout) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let mut contigs = Vec::with_capacity(layout.contigs.len() * CONTIG_LEN);
    let mut names = Vec::new();
    for c in &layout.contigs {
        for x in [
            names.len() as u64,
            c.name.len() as u64,
            c.len,
            c.text_offset,
        ] {
            contigs.extend_from_slice(&x.to_le_bytes());
        }
        contigs.extend_from_slice(&c.md5);
        names.extend_from_slice(c.name.as_bytes());
    }
    let mut holes = Vec::with_capacity(layout.holes.len() * HOLE_LEN);
    for h in &layout.holes {
        holes.extend_from_slice(&h.contig.to_le_bytes());
        holes.extend_from_slice(&0u32.to_le_bytes());
        holes.extend_from_slice(&h.start.to_le_bytes());
        holes.extend_from_slice(&h.len.to_le_bytes());
    }
    (contigs, names, holes)
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

/// The bytes of an index: an mmap of the file, the file read into
/// anonymous memory (its first `len` bytes; [`read_huge`]), or 64-byte
/// aligned memory.
enum Backing {
    Mmap(memmap2::Mmap),
    Anon(memmap2::MmapMut, usize),
    Owned(Vec<OccLine>, usize),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Mmap(m) => m,
            Backing::Anon(m, len) => &m[..*len],
            Backing::Owned(v, len) => &bytemuck::cast_slice(v)[..*len],
        }
    }
}

/// The whole of `file` read into anonymous memory that the kernel is
/// asked to back with transparent huge pages (`MADV_HUGEPAGE`), or `None`
/// where such memory cannot be had (then the file is mapped instead).
/// Mapping is searched by random accesses to the rank lines, the sampled
/// suffix array and the packed text; with 4 KiB pages nearly each one
/// also misses the TLB (a chr20 index spans 15,000 pages), with 2 MiB
/// pages the whole index fits in it: on 150 bp chr20 pairs in the gapped
/// modes about 5% less CPU time, for a copy of the file (about 10 ms for
/// chr20's 62 MB).
#[cfg(target_os = "linux")]
fn read_huge(file: &File) -> std::io::Result<Option<Backing>> {
    use std::io::Read;
    const HUGE: usize = 2 << 20;
    let len = file.metadata()?.len() as usize;
    if len < HUGE {
        return Ok(None);
    }
    let Ok(mut m) = memmap2::MmapMut::map_anon(len.div_ceil(HUGE) * HUGE) else {
        return Ok(None);
    };
    if m.advise(memmap2::Advice::HugePage).is_err() {
        return Ok(None);
    }
    let mut f = file;
    f.read_exact(&mut m[..len])?;
    Ok(Some(Backing::Anon(m, len)))
}

#[cfg(not(target_os = "linux"))]
fn read_huge(_: &File) -> std::io::Result<Option<Backing>> {
    Ok(None)
}

/// A validated index, ready for search.
pub struct Index {
    path: PathBuf,
    backing: Backing,
    container: format::Container,
    /// Decoded META.
    pub meta: Meta,
    /// Contigs and holes.
    pub layout: Layout,
    /// Text → reference positions.
    pub segments: Segments,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("path", &self.path)
            .field("meta", &self.meta)
            .finish()
    }
}

impl Index {
    /// Reads (into memory backed by huge pages where the kernel gives
    /// them, else by an mmap of the file) and validates an index file
    /// (header, table, every checksum, and the consistency of the
    /// sections) before any search.
    pub fn open(path: &Path) -> Result<Index> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        // SAFETY: the map is read-only and its bytes are checked before use.
        // Like every mmap-based reader (ripgrep, bwa's -x mode) we cannot stop
        // another process from changing the file under us: pages lost to a
        // truncation raise SIGBUS when read (the binary turns that into an
        // error exit with `cleanup::exit_on_sigbus`).
        if let Some(backing) = read_huge(&file).map_err(|e| Error::io(path, e))? {
            return Self::from_backing(path, backing);
        }
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        Self::from_backing(path, Backing::Mmap(map))
    }

    /// Validates an index held in memory (`path` is used in messages).
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Index> {
        let mut v = vec![OccLine::default(); bytes.len().div_ceil(64)];
        bytemuck::cast_slice_mut(&mut v)[..bytes.len()].copy_from_slice(bytes);
        Self::from_backing(path, Backing::Owned(v, bytes.len()))
    }

    fn from_backing(path: &Path, backing: Backing) -> Result<Index> {
        let bytes = backing.bytes();
        let container = format::read(bytes, true).map_err(|source| Error::Format {
            path: path.into(),
            source,
        })?;
        let corrupt = |msg: String| Error::Corrupt {
            path: path.into(),
            msg,
        };
        let meta = Meta::decode(container.bytes(bytes, SectionId::Meta)).map_err(corrupt)?;
        let layout = decode_layout(&container, bytes, &meta).map_err(corrupt)?;
        let segments = Segments::new(&layout).map_err(corrupt)?;
        let index = Index {
            path: path.into(),
            backing,
            container,
            meta,
            layout,
            segments,
        };
        index.validate().map_err(corrupt)?;
        Ok(index)
    }

    fn section(&self, id: SectionId) -> &[u8] {
        self.container.bytes(self.backing.bytes(), id)
    }

    /// Section sizes in file order, for `fmalign info`.
    pub fn section_sizes(&self) -> Vec<(SectionId, u64)> {
        self.container
            .sections
            .iter()
            .map(|s| (s.id, s.len))
            .collect()
    }

    /// `fmalign info`: the index described in tab-separated lines (file,
    /// format, sizes, sampling, sections, contigs, ambiguous runs).
    pub fn write_info(&self, o: &mut impl Write) -> std::io::Result<()> {
        let m = &self.meta;
        writeln!(o, "index\t{}", self.path.display())?;
        writeln!(o, "format_version\t{}", format::FORMAT_VERSION)?;
        writeln!(o, "file_bytes\t{}", self.file_len())?;
        writeln!(o, "reference_bases\t{}", m.ref_len)?;
        writeln!(o, "unambiguous_bases\t{}", m.text_len)?;
        writeln!(o, "ambiguous_bases\t{}", m.ref_len - m.text_len)?;
        writeln!(o, "position_bits\t{}", m.pos_bytes * 8)?;
        writeln!(o, "sa_sample\t{}", m.sa_sample)?;
        writeln!(
            o,
            "occ\t64-byte lines of 192 bases with 4 x u32 counts (0.33 bytes/base)"
        )?;
        for (id, len) in self.section_sizes() {
            writeln!(o, "section\t{id}\t{len}")?;
        }
        writeln!(o, "contigs\t{}", self.layout.contigs.len())?;
        for (k, c) in self.layout.contigs.iter().enumerate() {
            let holes: Vec<_> = self
                .layout
                .holes
                .iter()
                .filter(|h| h.contig as usize == k)
                .collect();
            let amb: u64 = holes.iter().map(|h| h.len).sum();
            let md5 = crate::dna::md5_hex(&c.md5);
            writeln!(
                o,
                "contig\t{}\t{}\tambiguous_runs={}\tambiguous_bases={amb}\tM5={md5}",
                c.name,
                c.len,
                holes.len()
            )?;
        }
        for h in &self.layout.holes {
            let c = &self.layout.contigs[h.contig as usize];
            writeln!(
                o,
                "ambiguous\t{}\t{}\t{}",
                c.name,
                h.start + 1,
                h.start + h.len
            )?;
        }
        Ok(())
    }

    /// Size of the file.
    pub fn file_len(&self) -> u64 {
        self.container.file_len
    }

    /// The path the index was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The 2-bit packed text (see [`crate::dna::pack`]).
    pub fn pac(&self) -> &[u8] {
        self.section(SectionId::Pac)
    }

    /// The FM-index view.
    pub fn fm(&self) -> FmIndex<'_> {
        let ssa_bytes = self.section(SectionId::Ssa);
        FmIndex {
            tables: RankIndex {
                n: self.meta.text_len,
                primary: self.meta.primary,
                c: self.meta.c,
                occ: bytemuck::cast_slice(self.section(SectionId::Occ)),
                sup: bytemuck::cast_slice(self.section(SectionId::OccSuper)),
            },
            ssa: if self.meta.pos_bytes == 8 {
                Ssa::U64(bytemuck::cast_slice(ssa_bytes))
            } else {
                Ssa::U32(bytemuck::cast_slice(ssa_bytes))
            },
            sample_shift: self.meta.sa_sample.trailing_zeros(),
        }
    }

    /// The rank tables of the reversed text (the mirror of bidirectional
    /// search): rank and extension only; it has no sampled SA, so no locate.
    pub fn rev_fm(&self) -> RankIndex<'_> {
        RankIndex {
            n: self.meta.text_len,
            primary: self.meta.rev_primary,
            c: self.meta.c,
            occ: bytemuck::cast_slice(self.section(SectionId::RevOcc)),
            sup: bytemuck::cast_slice(self.section(SectionId::RevOccSuper)),
        }
    }

    /// Cross-field invariants and the Occ counts, checked before use, so that
    /// no later slice access can go out of bounds.
    fn validate(&self) -> std::result::Result<(), String> {
        let m = &self.meta;
        let n = m.text_len;
        if self.segments.text_len() != n {
            return Err(format!(
                "contigs and ambiguous runs cover {} bases, meta says {n}",
                self.segments.text_len()
            ));
        }
        if m.ref_len != self.layout.contigs.iter().map(|c| c.len).sum::<u64>() {
            return Err("reference length does not match the contigs".into());
        }
        let wide = self.container.flags & FLAG_WIDE != 0;
        if !(m.pos_bytes == 4 && !wide && n < WIDE_THRESHOLD || m.pos_bytes == 8 && wide) {
            return Err("inconsistent position width".into());
        }
        if !m.sa_sample.is_power_of_two() {
            return Err("SA sampling rate is not a power of two".into());
        }
        if (n == 0 && m.primary != 0) || (n > 0 && (m.primary == 0 || m.primary > n)) {
            return Err("primary row out of range".into());
        }
        if (n == 0 && m.rev_primary != 0) || (n > 0 && (m.rev_primary == 0 || m.rev_primary > n)) {
            return Err("primary row of the reversed text out of range".into());
        }
        if m.c[0] != 1 || m.c.windows(2).any(|w| w[0] > w[1]) || m.c[4] != n + 1 {
            return Err("C array is inconsistent".into());
        }
        let lines = n / LINE_BASES + 1;
        let expect = [
            (SectionId::Pac, n.div_ceil(4)),
            (SectionId::Occ, lines * 64),
            (SectionId::OccSuper, ((lines - 1) / SUPER_LINES + 1) * 32),
            (SectionId::RevOcc, lines * 64),
            (SectionId::RevOccSuper, ((lines - 1) / SUPER_LINES + 1) * 32),
            (
                SectionId::Ssa,
                ((n >> m.sa_sample.trailing_zeros()) + 1) * m.pos_bytes as u64,
            ),
        ];
        for (id, len) in expect {
            if self.section(id).len() as u64 != len {
                return Err(format!(
                    "section {id} has {} bytes, expected {len}",
                    self.section(id).len()
                ));
            }
        }
        if m.sa_sample > 1 << 16 {
            return Err("SA sampling rate is larger than 65536".into());
        }
        // Every Occ count, so that rank and LF stay in 0..=n+1, and every
        // sample, so that locate stays in 0..=n (one pass each; the CRCs
        // have read these bytes already).
        let fm = self.fm();
        crate::build::verify_occ(&fm)?;
        crate::build::verify_occ(&self.rev_fm()).map_err(|e| format!("reversed text: {e}"))?;
        if (0..fm.ssa.len()).any(|k| fm.ssa.get(k) > n) {
            return Err("a sampled SA entry is larger than the text".into());
        }
        Ok(())
    }
}

fn decode_layout(
    c: &format::Container,
    file: &[u8],
    meta: &Meta,
) -> std::result::Result<Layout, String> {
    let contigs = c.bytes(file, SectionId::Contigs);
    let names = c.bytes(file, SectionId::Names);
    let holes = c.bytes(file, SectionId::Holes);
    // Checked: the counts come from the file (a crafted one could overflow).
    if meta.contigs.checked_mul(CONTIG_LEN as u64) != Some(contigs.len() as u64)
        || meta.holes.checked_mul(HOLE_LEN as u64) != Some(holes.len() as u64)
    {
        return Err("contig or ambiguous-run table has the wrong size".into());
    }
    let u64_at = |b: &[u8], k: usize| u64::from_le_bytes(b[k..k + 8].try_into().expect("8"));
    let mut layout = Layout::default();
    for rec in contigs.chunks_exact(CONTIG_LEN) {
        let (off, len) = (u64_at(rec, 0), u64_at(rec, 8));
        let name = off
            .checked_add(len)
            .filter(|&end| end <= names.len() as u64 && len > 0)
            .and_then(|end| std::str::from_utf8(&names[off as usize..end as usize]).ok())
            .ok_or("contig name out of range")?;
        layout.contigs.push(Contig {
            name: name.to_owned(),
            len: u64_at(rec, 16),
            text_offset: u64_at(rec, 24),
            md5: rec[32..48].try_into().expect("16"),
        });
    }
    for rec in holes.chunks_exact(HOLE_LEN) {
        layout.holes.push(Hole {
            contig: u32::from_le_bytes(rec[0..4].try_into().expect("4")),
            start: u64_at(rec, 8),
            len: u64_at(rec, 16),
        });
    }
    Ok(layout)
}

/// Builds an index in memory (for tests and examples).
pub fn build_in_memory(reference: Reference, cfg: &IndexConfig) -> Result<Index> {
    let mut bytes = Vec::new();
    build_with(reference, cfg, &mut |flags, sections| {
        format::write(&mut bytes, flags, sections).map_err(|e| Error::io("<memory>", e))
    })?;
    Index::from_bytes(Path::new("<memory>"), &bytes)
}
