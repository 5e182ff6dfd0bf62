//! The index built in bounded memory (issue 20): the text held 2 bits per
//! base, the suffix array sorted in parts by [`crate::sa::blockwise`], and
//! each part's BWT, Occ lines and sampled-SA rows appended to the file as
//! soon as it is sorted ([`fmalign_index_format::StreamWriter`]); then the
//! same for the reversed text (the mirror index). The bytes are those of the
//! whole-text build for every limit, part size and thread count.
//!
//! Memory ([`Plan::peak`]): the packed text (`n / 4`), the difference-cover
//! sample's ranks (`4 |D| / v` bytes per base; while they are computed, the
//! sampled positions as well), the bucket counts (at most 24 MiB) and one
//! part (`P + 1` bytes per suffix: its positions and their BWT bases), plus
//! [`FIXED`]. The estimate is checked against measured peaks in
//! docs/BENCHMARKS.md. The Occ lines and SSA rows go straight to the file.

use std::fs::File;
use std::path::Path;
use std::time::Instant;

use fmalign_index_format::{SectionId, StreamWriter};
use rayon::prelude::*;

use super::sections::META_LEN;
use super::{BuildReport, FLAG_WIDE, IndexConfig, Meta, encode_layout};
use crate::device::Ran;
use crate::dna::PackedText;
use crate::error::{Error, Result};
use crate::fm::{LINE_BASES, OccLine, SUPER_LINES};
use crate::io::output::{TempFile, temp_path};
use crate::reference::Reference;
use crate::sa::Pos;
use crate::sa::blockwise::{self, Blockwise, DcSample, PartSorter, sample_bytes};
use crate::tables::c_from_counts;

/// Memory besides the tables, whatever the text: the program, thread
/// stacks, the file writer's buffers (up to 1 MiB per section).
pub const FIXED: u64 = 32 << 20;

/// Memory besides the text, the sample and the part: [`FIXED`] and the
/// bucket counts (24 bytes per bucket, at most 24 MiB).
fn fixed(n: u64) -> u64 {
    FIXED + blockwise::bucket_bytes(n)
}

/// Difference-cover periods tried, smallest (the larger sample) first.
/// 256 is not among them (`--dcv 256` still is): measured, it ranked its
/// larger sample more slowly and sorted no faster, on chr20 and on 3.1 Gbp
/// of near-copies (docs/BENCHMARKS.md).
const PERIODS: [usize; 4] = [512, 1024, 2048, 4096];

/// Bytes per base of [`floor`] for 32-bit positions (the text 0.25, the
/// sample at period 4096 while it is ranked 0.21), for messages.
pub const FLOOR_BYTES_PER_BASE: f64 = 0.46;

/// Parts at the memory floor: the text is read this many times per
/// direction.
const FLOOR_PARTS: u64 = 64;

/// Bytes per suffix of a part: its position (its BWT base is read in
/// batches of [`BWT_BATCH`]).
fn part_bytes(wide: bool) -> u64 {
    if wide { 8 } else { 4 }
}

/// A build's parameters and the memory they need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Difference-cover period.
    pub v: usize,
    /// Most suffixes per part.
    pub max_part: u64,
    /// Peak memory in bytes (the text read in, the tables, one part).
    pub peak: u64,
}

/// Bytes of the packed text of `n` bases (and its zero word).
fn text_bytes(n: u64) -> u64 {
    n / 4 + 64
}

/// Memory of the sample while it is ranked, for ranks of `ranks` bytes
/// (S): the ranks, the sampled positions (as many bytes), two bits per
/// sampled suffix for the groups still tied (S/16), a bit per sampled
/// suffix while the first groups are found (S/32); S/32 more as headroom.
/// The batch of new ranks (16 MiB) is within [`FIXED`]. Measured: 2 S +
/// S/16 + 16 MiB (docs/BENCHMARKS.md).
fn sample_build_bytes(ranks: u64) -> u64 {
    2 * ranks + ranks / 8
}

/// Peak of a build in parts of `n` bases with period `v` and parts of
/// `max_part` suffixes: the text, then the larger of the sample while it
/// is ranked and the ranks beside a part. The reference is read streamed
/// ([`crate::scan::read_packed`]): the packed text and a 1 MiB buffer.
pub(crate) fn peak(n: u64, wide: bool, v: usize, max_part: u64) -> u64 {
    let ranks = sample_bytes(n, v);
    let sorting = ranks + max_part.min(n) * part_bytes(wide);
    text_bytes(n) + sample_build_bytes(ranks).max(sorting) + fixed(n)
}

/// The least memory a build in parts of `n` bases can run in: the largest
/// period, parts of `n / 64` suffixes. About 0.46 bytes per base plus
/// [`FIXED`] and the bucket counts.
pub fn floor(n: u64, wide: bool) -> u64 {
    // The largest period but for tiny texts, where every period samples
    // one block and a smaller cover is smaller.
    PERIODS
        .iter()
        .map(|&v| peak(n, wide, v, n.div_ceil(FLOOR_PARTS)))
        .min()
        .expect("periods")
}

/// The least limit under which [`plan`] finds a build in parts with these
/// `max_part` and `v` (forced or not): what an error should state, since
/// forced values can need more than [`floor`]. `None` when no limit does.
pub fn least_limit(n: u64, wide: bool, max_part: Option<u64>, v: Option<usize>) -> Option<u64> {
    let fits = |limit: u64| plan(n, wide, Some(limit), max_part, v).is_some();
    if !fits(u64::MAX) {
        return None;
    }
    // The plans grow with the limit: the least limit that fits, by halves.
    let (mut lo, mut hi) = (0u64, u64::MAX);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The share of a limit that parts are not sized into: what no plan
/// counts (the allocator's slack, page tables). Measured peaks have come
/// within 1% of their plans since `alloc::trim` (docs/BENCHMARKS.md).
const MARGIN: u64 = 12;

/// The plan for `n` bases within `limit` bytes: the smallest period whose
/// parts hold at least `n / 16` suffixes (or 2^20), else the largest
/// period with the largest parts that fit; `None` below [`floor`]. Parts
/// are sized beside the sample's ranks into the limit less a twelfth
/// ([`MARGIN`]), or into the whole limit when that leaves less than the
/// floor's parts. `max_part` / `v` force those values (tests, benchmarks).
pub fn plan(
    n: u64,
    wide: bool,
    limit: Option<u64>,
    max_part: Option<u64>,
    v: Option<usize>,
) -> Option<Plan> {
    let periods: &[usize] = match &v {
        Some(v) => std::slice::from_ref(v),
        None => &PERIODS,
    };
    let limit = limit.unwrap_or(u64::MAX);
    let wanted = n.div_ceil(16).max(1 << 20).min(n.max(1));
    let least = n.div_ceil(FLOOR_PARTS).max(1);
    let mut best: Option<Plan> = None;
    for &v in periods {
        let part = match max_part {
            Some(p) => p.max(1),
            None => {
                let ranks = sample_bytes(n, v);
                let base = text_bytes(n) + ranks + fixed(n);
                if peak(n, wide, v, 0) > limit {
                    continue;
                }
                let room = |limit: u64| limit.saturating_sub(base) / part_bytes(wide);
                let part = room(limit - limit / MARGIN);
                let part = if part >= least { part } else { room(limit) };
                // At least one suffix when that fits (tiny texts, where
                // the sample's transient is the peak whatever the part).
                part.clamp(1, n.max(1))
            }
        };
        let p = Plan {
            v,
            max_part: part,
            peak: peak(n, wide, v, part),
        };
        if p.peak > limit {
            continue;
        }
        if part >= wanted || max_part.is_some() {
            return Some(p);
        }
        if best.is_none_or(|b| p.max_part > b.max_part) {
            best = Some(p);
        }
    }
    best.filter(|b| b.max_part >= least)
}

/// Progress of a build in parts, after each part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Suffixes sorted so far, of `total` (the text's and the reversed
    /// text's).
    pub suffixes: u64,
    /// See `suffixes`.
    pub total: u64,
    /// Parts done (both directions).
    pub parts: usize,
    /// Parts in all, as far as known: while the text is sorted, the
    /// reversed text is expected to take as many (a range larger than a
    /// part adds parts when it is split).
    pub planned: usize,
}

/// What a build calls after each part.
pub type OnProgress<'p> = dyn FnMut(&Progress) + Send + 'p;

/// The lengths of the sections of an index of `n` bases, in
/// [`SectionId::ALL`] order, with SSA entries of `width` bytes every
/// `2^shift` rows and the encoded CONTIGS, NAMES and HOLES of `small`
/// bytes: known before anything is built (the build in parts streams the
/// sections; the distributed build places them).
pub(crate) fn section_lengths(n: u64, width: u64, shift: u32, small: [u64; 3]) -> [u64; 10] {
    let lines = n / LINE_BASES + 1;
    let supers = (lines - 1) / SUPER_LINES + 1;
    [
        META_LEN as u64,
        small[0],
        small[1],
        small[2],
        n.div_ceil(4),
        64 * lines,
        32 * supers,
        width * ((n >> shift) + 1),
        64 * lines,
        32 * supers,
    ]
}

/// Builds the index of `reference` by `plan` and writes it to `out`
/// (through a temporary file renamed at the end).
pub(super) fn build_in_parts<P: Pos>(
    reference: Reference<PackedText>,
    cfg: &IndexConfig,
    plan: &Plan,
    out: &Path,
    progress: &mut OnProgress<'_>,
) -> Result<BuildReport> {
    let Reference {
        layout, mut text, ..
    } = reference;
    let n = text.len() as u64;
    let tmp = TempFile::register(temp_path(out));
    let file = File::create(tmp.path()).map_err(|e| Error::io(out, e))?;
    let io = |e| Error::io(out, e);
    let mut report = BuildReport {
        device: Ran::Cpu,
        ..BuildReport::default()
    };
    let shift = cfg.sa_sample.trailing_zeros();
    let (contigs, names, holes) = encode_layout(&layout);
    let lens = section_lengths(
        n,
        u64::from(P::BYTES),
        shift,
        [&contigs, &names, &holes].map(|s| s.len() as u64),
    );
    let flags = if P::BYTES == 8 { FLAG_WIDE } else { 0 };
    let mut w = StreamWriter::new(&file, flags, lens);
    w.append(SectionId::Contigs, &contigs).map_err(io)?;
    w.append(SectionId::Names, &names).map_err(io)?;
    w.append(SectionId::Holes, &holes).map_err(io)?;
    w.append(SectionId::Pac, text.pac()).map_err(io)?;
    let total = 2 * n;
    let max_part = usize::try_from(plan.max_part).unwrap_or(usize::MAX);
    let mut fwd = Tables::new(
        n,
        P::BYTES == 8,
        Some(shift),
        SectionId::Occ,
        SectionId::Ssa,
    );
    let cuda = gpu_for_parts(cfg, n, plan, u64::from(P::BYTES), &mut report.notices);
    let mut sorter = Sorter::new(cuda.as_ref());
    let summary = Blockwise::<P>::new(plan.v, max_part)
        .sorted_by(&mut sorter)
        .run(&text, &mut |part, at| {
            let t = Instant::now();
            fwd.part(&text, part, &mut w).map_err(io)?;
            report.fm_seconds += t.elapsed().as_secs_f64();
            progress(&Progress {
                suffixes: (at.before + part.len()) as u64,
                total,
                parts: at.parts + 1,
                planned: 2 * at.planned,
            });
            Ok(())
        })?;
    let t = Instant::now();
    let (fwd_primary, c, fwd_super) = fwd.finish(&text, &mut w).map_err(io)?;
    w.append(SectionId::OccSuper, bytemuck::cast_slice(&fwd_super))
        .map_err(io)?;
    text.reverse();
    report.fm_seconds += t.elapsed().as_secs_f64();
    let mut rev = Tables::new(n, P::BYTES == 8, None, SectionId::RevOcc, SectionId::Ssa);
    let rev_summary = Blockwise::<P>::new(plan.v, max_part)
        .sorted_by(&mut sorter)
        .run(&text, &mut |part, at| {
            let t = Instant::now();
            rev.part(&text, part, &mut w).map_err(io)?;
            report.fm_seconds += t.elapsed().as_secs_f64();
            progress(&Progress {
                suffixes: n + (at.before + part.len()) as u64,
                total,
                parts: summary.parts + at.parts + 1,
                planned: summary.parts + at.planned,
            });
            Ok(())
        })?;
    let t = Instant::now();
    let (rev_primary, _, rev_super) = rev.finish(&text, &mut w).map_err(io)?;
    drop(text);
    w.append(SectionId::RevOccSuper, bytemuck::cast_slice(&rev_super))
        .map_err(io)?;
    let meta = Meta::new(
        &layout,
        n,
        cfg.sa_sample,
        P::BYTES,
        c,
        fwd_primary,
        rev_primary,
    );
    w.append(SectionId::Meta, &meta.encode()).map_err(io)?;
    report.file_bytes = w.finish().map_err(io)?;
    file.sync_all().map_err(io)?;
    drop(file);
    tmp.commit(out).map_err(io)?;
    report.fm_seconds += t.elapsed().as_secs_f64();
    report.device = sorter.ran();
    report.notices.extend(sorter.notice());
    // Sorting time: everything in blockwise but the tables' share.
    report.notices.push(format!(
        "built in parts within the memory limit: difference-cover period {}, at most {} suffixes per part, {} + {} parts, sample {}; planned peak {}",
        plan.v,
        plan.max_part,
        summary.parts,
        rev_summary.parts,
        crate::mem::human_bytes(summary.sample_bytes as u64),
        crate::mem::human_bytes(plan.peak),
    ));
    report.notices.push(format!(
        "in parts: sample {:.1} s, collecting {:.1} s, sorting {:.1} s, splitting {:.1} s, tables {:.1} s; {} passes over the text",
        summary.sample_seconds + rev_summary.sample_seconds,
        summary.collect_seconds + rev_summary.collect_seconds,
        summary.sort_seconds + rev_summary.sort_seconds,
        summary.split_seconds + rev_summary.split_seconds,
        report.fm_seconds,
        summary.passes + rev_summary.passes,
    ));
    Ok(report)
}

/// The FM tables of one text, derived part by part in suffix order and
/// appended to the file: Occ lines as they fill, SSA rows as they come.
struct Tables {
    n: u64,
    /// log2 of the SA sampling rate; `None`: no SSA (the mirror index).
    shift: Option<u32>,
    occ: SectionId,
    ssa: SectionId,
    /// Next row of `SA'` (row 0, the sentinel, is handled first).
    row: u64,
    /// Bases of `B` pushed so far.
    b: u64,
    /// Occ lines written so far.
    lines: u64,
    /// SSA rows are `u64` (else `u32`).
    wide: bool,
    line: OccLine,
    /// Counts of A, C, G, T in `B` before the current line.
    total: [u64; 4],
    sup: Vec<[u64; 4]>,
    primary: u64,
    /// BWT bases of the current batch (reused).
    bases: Vec<u8>,
}

/// The BWT base of the suffix at 0 (the row of `$`): no base in `B`.
pub(crate) const DOLLAR: u8 = 4;

/// Suffixes of a part whose BWT bases are read at a time (a 1 MiB buffer,
/// within [`FIXED`]).
pub(crate) const BWT_BATCH: usize = 1 << 20;

/// The BWT bases of the suffixes at `batch` into `bases` (its length
/// becomes the batch's): the base before each, [`DOLLAR`] for the suffix at
/// 0. Random reads of the text, prefetched a few ahead, in parallel.
pub(crate) fn bwt_bases<P: Pos>(text: &PackedText, batch: &[P], bases: &mut Vec<u8>) {
    const AHEAD: usize = 48;
    bases.clear();
    bases.resize(batch.len(), 0);
    bases
        .par_chunks_mut(1 << 14)
        .zip(batch.par_chunks(1 << 14))
        .for_each(|(out, ps)| {
            crate::dna::for_each_ahead(
                ps.len(),
                AHEAD,
                |j| text.prefetch((ps[j].to_u64() as usize).saturating_sub(1)),
                |i| {
                    out[i] = match ps[i].to_u64() {
                        0 => DOLLAR,
                        p => text.get(p as usize - 1),
                    }
                },
            );
        });
}

impl Tables {
    fn new(n: u64, wide: bool, shift: Option<u32>, occ: SectionId, ssa: SectionId) -> Self {
        Tables {
            n,
            lines: 0,
            wide,
            shift,
            occ,
            ssa,
            row: 0,
            b: 0,
            line: OccLine::default(),
            total: [0; 4],
            sup: Vec::new(),
            primary: 0,
            bases: Vec::new(),
        }
    }

    /// Row 0 (`SA'[0] = n`, `BWT'[0] = T[n - 1]`), before the first part.
    fn start<W: fmalign_index_format::WriteAt>(
        &mut self,
        text: &PackedText,
        w: &mut StreamWriter<W>,
    ) -> std::io::Result<()> {
        if self.shift.is_some() {
            self.ssa_row(self.n, w)?;
        }
        if self.n > 0 {
            self.push(text.get(self.n as usize - 1), w)?;
        }
        self.row = 1;
        Ok(())
    }

    fn ssa_row<W: fmalign_index_format::WriteAt>(
        &mut self,
        p: u64,
        w: &mut StreamWriter<W>,
    ) -> std::io::Result<()> {
        if self.wide {
            w.append(self.ssa, &p.to_ne_bytes())
        } else {
            w.append(self.ssa, &(p as u32).to_ne_bytes())
        }
    }

    /// Appends a base to `B`, writing the line when it is full.
    #[inline]
    fn push<W: fmalign_index_format::WriteAt>(
        &mut self,
        c: u8,
        w: &mut StreamWriter<W>,
    ) -> std::io::Result<()> {
        let r = self.b % LINE_BASES;
        self.line.push(r, c);
        self.b += 1;
        if r + 1 == LINE_BASES {
            self.emit_line(w)?;
        }
        Ok(())
    }

    /// Appends bases to `B`: up to a line boundary one at a time, then
    /// whole lines built in parallel and written in order, then the rest.
    fn push_all<W: fmalign_index_format::WriteAt>(
        &mut self,
        mut bases: &[u8],
        w: &mut StreamWriter<W>,
    ) -> std::io::Result<()> {
        while !bases.is_empty() && !self.b.is_multiple_of(LINE_BASES) {
            self.push(bases[0], w)?;
            bases = &bases[1..];
        }
        let line = LINE_BASES as usize;
        let whole = bases.len() / line * line;
        let lines: Vec<OccLine> = bases[..whole]
            .par_chunks(line)
            .map(OccLine::from_bases)
            .collect();
        for l in lines {
            self.line = l;
            self.b += LINE_BASES;
            self.emit_line(w)?;
        }
        for &c in &bases[whole..] {
            self.push(c, w)?;
        }
        Ok(())
    }

    /// Writes the current line (its counts made relative to the total
    /// before it and its superblock) and starts the next.
    fn emit_line<W: fmalign_index_format::WriteAt>(
        &mut self,
        w: &mut StreamWriter<W>,
    ) -> std::io::Result<()> {
        let l = self.lines;
        self.lines += 1;
        if l.is_multiple_of(SUPER_LINES) {
            self.sup.push(self.total);
        }
        let base = *self.sup.last().expect("pushed");
        let local = self.line.counts;
        for c in 0..4 {
            self.line.counts[c] = (self.total[c] - base[c]) as u32;
            self.total[c] += u64::from(local[c]);
        }
        w.append(self.occ, bytemuck::bytes_of(&self.line))?;
        self.line = OccLine::default();
        Ok(())
    }

    /// One part of the suffix array, in order.
    fn part<P: Pos, W: fmalign_index_format::WriteAt>(
        &mut self,
        text: &PackedText,
        part: &[P],
        w: &mut StreamWriter<W>,
    ) -> std::io::Result<()> {
        if self.row == 0 {
            self.start(text, w)?;
        }
        // BWT bases, a batch at a time (no buffer the size of the part).
        let mut bases = std::mem::take(&mut self.bases);
        for batch in part.chunks(BWT_BATCH) {
            bwt_bases(text, batch, &mut bases);
            // `B` skips the row of `$`.
            match bases.iter().position(|&c| c == DOLLAR) {
                Some(k) => {
                    self.primary = self.row + k as u64;
                    self.push_all(&bases[..k], w)?;
                    self.push_all(&bases[k + 1..], w)?;
                }
                None => self.push_all(&bases, w)?,
            }
            if let Some(shift) = self.shift {
                for row in
                    crate::fm::sampled_rows(self.row, self.row + batch.len() as u64, shift, self.n)
                {
                    self.ssa_row(batch[(row - self.row) as usize].to_u64(), w)?;
                }
            }
            self.row += batch.len() as u64;
        }
        self.bases = bases;
        Ok(())
    }

    /// After the last part: the last (partial, possibly empty) line.
    /// Returns the row of `$`, `C` and the superblock counts.
    fn finish<W: fmalign_index_format::WriteAt>(
        mut self,
        text: &PackedText,
        w: &mut StreamWriter<W>,
    ) -> std::io::Result<(u64, [u64; 5], Vec<[u64; 4]>)> {
        if self.row == 0 {
            self.start(text, w)?;
        }
        if self.row != self.n + 1 || self.b != self.n {
            return Err(std::io::Error::other(format!(
                "{} rows for {} bases (a bug)",
                self.row, self.n
            )));
        }
        self.emit_line(w)?;
        Ok((self.primary, c_from_counts(self.total), self.sup))
    }
}

/// Who sorts the parts: the GPU's steps ([`crate::sa::partsort`]) while they
/// work, else the CPU's own sort of [`Blockwise`]. A GPU error hands the
/// part at hand and every later one back to the CPU, with a notice: the
/// bytes are the same either way.
struct Sorter<'a> {
    gpu: Option<crate::sa::partsort::OnSteps<'a, crate::sa::cuda::Cuda>>,
    /// Parts the GPU sorted.
    sorted: usize,
    /// Why the GPU stopped.
    failed: Option<String>,
}

impl<'a> Sorter<'a> {
    fn new(cuda: Option<&'a crate::sa::cuda::Cuda>) -> Self {
        Sorter {
            gpu: cuda.map(crate::sa::partsort::OnSteps::new),
            sorted: 0,
            failed: None,
        }
    }

    fn fail(&mut self, e: Error) {
        self.gpu = None;
        self.failed = Some(e.to_string());
    }

    /// Where the parts were sorted.
    fn ran(&self) -> Ran {
        if self.sorted > 0 { Ran::Gpu } else { Ran::Cpu }
    }

    /// What the log should say about the GPU.
    fn notice(&self) -> Option<String> {
        match &self.failed {
            Some(why) => Some(format!(
                "{why}; {} parts sorted on the GPU, the rest on the CPU",
                self.sorted
            )),
            None if self.sorted > 0 => Some(format!("{} parts sorted on the GPU", self.sorted)),
            None => None,
        }
    }
}

impl<P: Pos> PartSorter<P> for Sorter<'_> {
    fn prepare(&mut self, text: &PackedText, sample: &DcSample) -> Result<()> {
        if let Some(g) = self.gpu.as_mut()
            && let Err(e) = PartSorter::<P>::prepare(g, text, sample)
        {
            self.fail(e);
        }
        Ok(())
    }

    fn sort(&mut self, part: &mut [P]) -> Result<bool> {
        if let Some(g) = self.gpu.as_mut() {
            match g.sort(part) {
                Ok(done) => {
                    self.sorted += usize::from(done);
                    return Ok(done);
                }
                Err(e) => self.fail(e),
            }
        }
        Ok(false)
    }
}

/// The GPU that sorts the parts, when the build asks for one (`--device
/// gpu`; `auto` keeps the CPU until a device run has measured the parts'
/// sort against it) and it opens, and the text, the sample's ranks and a
/// part fit its memory; else `None`, with the reason in `notices`.
fn gpu_for_parts(
    cfg: &IndexConfig,
    n: u64,
    plan: &Plan,
    pos_bytes: u64,
    notices: &mut Vec<String>,
) -> Option<crate::sa::cuda::Cuda> {
    if cfg.device != crate::device::Device::Gpu || !super::build::gpu_wanted(cfg, n, notices) {
        return None;
    }
    let opened = crate::sa::cuda::Cuda::open().and_then(|g| {
        let (free, _) = g.gpu().memory()?;
        Ok((g, free as u64))
    });
    let (g, free) = match opened {
        Ok(x) => x,
        Err(e) => {
            notices.push(format!("{e}; sorting the parts on the CPU"));
            return None;
        }
    };
    let budget = cfg.max_gpu_memory.unwrap_or(u64::MAX).min(free);
    let need = crate::sa::partsort::device_bytes(n, plan.v, plan.max_part, pos_bytes);
    if need > budget {
        notices.push(format!(
            "parts of {} suffixes need about {} of device memory, more than the {} allowed; sorting the parts on the CPU",
            plan.max_part,
            crate::mem::human_bytes(need),
            crate::mem::human_bytes(budget),
        ));
        return None;
    }
    Some(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every plan fits its limit; its parts are the largest that fit beside
    /// the sample's ranks in the limit less its margin (or the whole
    /// limit, at the floor), and at least the floor's; the sample's
    /// transient fits too; at the floor a plan exists and below it none.
    #[test]
    fn plans_fit_their_limits_with_the_largest_parts() {
        for &n in &[
            1u64,
            1000,
            59_505_520,
            2_927_460_000,
            5_000_000_000,
            17_000_000_000,
        ] {
            let wide = n >= 1 << 32;
            let least = floor(n, wide);
            assert!(
                plan(n, wide, Some(least), None, None).is_some(),
                "{n} at the floor"
            );
            assert!(
                plan(n, wide, Some(least - 1), None, None).is_none(),
                "{n} under it"
            );
            for mult in [1.0, 1.1, 1.5, 2.0, 4.0, 8.0, 40.0] {
                let limit = (least as f64 * mult) as u64;
                let p = plan(n, wide, Some(limit), None, None).expect("above the floor");
                assert!(p.peak <= limit, "{n} {limit}: {p:?}");
                assert_eq!(p.peak, peak(n, wide, p.v, p.max_part));
                let ranks = sample_bytes(n, p.v);
                assert!(text_bytes(n) + sample_build_bytes(ranks) + fixed(n) <= limit);
                assert!(p.max_part >= n.div_ceil(FLOOR_PARTS), "{n} {limit}: {p:?}");
                if p.max_part < n && p.max_part > 1 {
                    // No larger part fits beside the ranks, within the
                    // margin or, at the floor, within the limit.
                    let base = text_bytes(n) + ranks + fixed(n);
                    let beside = |part: u64| base + part * part_bytes(wide);
                    let margin = limit - limit / MARGIN;
                    let within = if beside(n.div_ceil(FLOOR_PARTS)) <= margin {
                        margin
                    } else {
                        limit
                    };
                    assert!(
                        beside(p.max_part) <= within && beside(p.max_part + 1) > within,
                        "{n} {limit}: not the largest part: {p:?}"
                    );
                }
            }
        }
    }

    /// The floor in bytes per base is what messages say.
    #[test]
    fn floor_per_base_as_stated() {
        let n = 3_000_000_000u64;
        let per_base = (floor(n, false) - fixed(n)) as f64 / n as f64;
        assert!(
            (per_base - FLOOR_BYTES_PER_BASE).abs() < 0.005,
            "{per_base} bytes per base"
        );
    }

    /// Forced values are taken as given.
    #[test]
    fn forced_part_and_period() {
        let p = plan(1_000_000, false, None, Some(1000), Some(64)).unwrap();
        assert_eq!((p.v, p.max_part), (64, 1000));
    }
}
