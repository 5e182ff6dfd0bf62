//! Exact mapping on the device (`fmalign map --device gpu`): the FM-index of
//! the `.fmi` file is copied to device memory once (OCC, OCC_SUPER, C, the
//! sampled SA); a whole batch of reads goes over 2-bit packed
//! ([`DeviceIndex::exact_batch`]: sub-batches of [`SUB_READS`] reads through
//! pinned host buffers on two streams, so that packing one sub-batch overlaps
//! the copies and search of the other), `gpu/map.cu` runs the backward
//! search of both strands (one thread per read) and locate (one thread per
//! row). The CPU formats the records, so the SAM is the CPU path's.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, PinnedHostSlice, PushKernelArg,
};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::fm::{Interval, Ssa};
use crate::gpu::context::{Gpu, grid, pinned, timing_event};
use crate::index::Index;
use crate::search::{BiIndex, Found, SeedEngine};

/// Reads per sub-batch of [`DeviceIndex::exact_batch`]: 2^20 reads of
/// 150 bases are 37.5 MiB packed and 32 MiB of intervals, in each of the two
/// slots.
pub const SUB_READS: usize = 1 << 20;

/// Bit 31 of a packed read's length (gpu/map.cu `AMBIGUOUS`): the read holds
/// a base other than A/C/G/T and matches nowhere.
const AMBIGUOUS: u32 = 1 << 31;

/// Alignments `map_scheme` writes per job; a job that finds more is run
/// again on the CPU (its count says so).
const SCHEME_CAP: u32 = 32;

/// Reads packed per parallel task of [`pack_reads`].
const PACK_GROUP: usize = 4096;

/// Words [`pack_reads`] fills for `reads`: each read starts a word, 32
/// bases a word; at least one (a device buffer is never empty).
pub fn packed_words(reads: &[&[u8]]) -> usize {
    reads
        .iter()
        .map(|r| r.len().div_ceil(32))
        .sum::<usize>()
        .max(1)
}

/// Packs `reads` for `map_exact_packed`: read `k` starts at word
/// `starts[k]`, its base `i` at bits `2 (i % 32)` of word `starts[k] + i /
/// 32` (A, C, G, T = 0..3, the index's codes); `lens[k]` is its length, with
/// [`AMBIGUOUS`] set when it holds any other letter. `reads` are letters
/// when `ascii`, else codes (0..=3, anything else ambiguous). `words` must
/// hold [`packed_words`], `starts` and `lens` one entry per read. Groups of
/// reads are packed in parallel (rayon).
pub fn pack_reads(
    reads: &[&[u8]],
    ascii: bool,
    words: &mut [u64],
    starts: &mut [u64],
    lens: &mut [u32],
) -> Result<()> {
    let need = packed_words(reads);
    if words.len() < need || starts.len() < reads.len() || lens.len() < reads.len() {
        return Err(Error::Gpu(format!(
            "packing {} reads: buffers of {} words, {} starts, {} lengths are too small",
            reads.len(),
            words.len(),
            starts.len(),
            lens.len()
        )));
    }
    let mut at = 0;
    for (k, r) in reads.iter().enumerate() {
        if r.len() >= AMBIGUOUS as usize {
            return Err(Error::Gpu(format!(
                "a read of {} bases is too long for the GPU search",
                r.len()
            )));
        }
        starts[k] = at as u64;
        at += r.len().div_ceil(32);
    }
    words[at..].fill(0);
    // Each group's words are one piece of `words`, borrowed by one task.
    let mut pieces = Vec::with_capacity(reads.len().div_ceil(PACK_GROUP));
    let mut rest = &mut words[..at];
    for (group, lens) in reads
        .chunks(PACK_GROUP)
        .zip(lens[..reads.len()].chunks_mut(PACK_GROUP))
    {
        let len: usize = group.iter().map(|r| r.len().div_ceil(32)).sum();
        let (piece, tail) = rest.split_at_mut(len);
        rest = tail;
        pieces.push((group, piece, lens));
    }
    pieces.into_par_iter().for_each(|(group, piece, lens)| {
        let mut w = 0;
        for (r, len) in group.iter().zip(lens.iter_mut()) {
            let mut amb = false;
            for chunk in r.chunks(32) {
                let mut word = 0u64;
                for (i, &b) in chunk.iter().enumerate() {
                    let c = if ascii { crate::dna::code(b) } else { b };
                    amb |= c > 3;
                    word |= u64::from(c & 3) << (2 * i);
                }
                piece[w] = word;
                w += 1;
            }
            *len = r.len() as u32 | if amb { AMBIGUOUS } else { 0 };
        }
    });
    Ok(())
}

/// One of the two slots of [`DeviceIndex::exact_batch`]: a stream, pinned
/// host buffers and device buffers for one sub-batch, and which reads are
/// in flight in it.
struct Slot {
    stream: Arc<CudaStream>,
    words: PinnedHostSlice<u64>,
    starts: PinnedHostSlice<u64>,
    lens: PinnedHostSlice<u32>,
    out: PinnedHostSlice<u64>,
    dwords: CudaSlice<u64>,
    dstarts: CudaSlice<u64>,
    dlens: CudaSlice<u32>,
    dout: CudaSlice<u64>,
    /// The reads (of the whole batch) whose intervals are being computed,
    /// and their bases.
    pending: Option<(Range<usize>, u64)>,
    /// Around the kernel: its time on the device.
    start: CudaEvent,
    stop: CudaEvent,
}

impl Slot {
    fn new(gpu: &Gpu) -> Result<Self> {
        let stream = gpu.ctx.new_stream().map_err(|e| err("new stream", e))?;
        let z64 = |n| {
            stream
                .alloc_zeros::<u64>(n)
                .map_err(|e| err("device memory for reads", e))
        };
        Ok(Slot {
            words: pinned(&gpu.ctx, 1, true)?,
            starts: pinned(&gpu.ctx, 1, true)?,
            lens: pinned(&gpu.ctx, 1, true)?,
            out: pinned(&gpu.ctx, 4, false)?,
            dwords: z64(1)?,
            dstarts: z64(1)?,
            dlens: stream
                .alloc_zeros::<u32>(1)
                .map_err(|e| err("device memory for reads", e))?,
            dout: z64(4)?,
            stream,
            pending: None,
            start: timing_event(gpu)?,
            stop: timing_event(gpu)?,
        })
    }

    /// Room for `words` packed words and `reads` reads (a quarter more
    /// when it grows, so that batches of similar reads do not reallocate).
    fn reserve(&mut self, ctx: &Arc<CudaContext>, words: usize, reads: usize) -> Result<()> {
        let st = &self.stream;
        let dev = |e| err("device memory for reads", e);
        // Each group's buffers are replaced together or not at all: a slot
        // whose host buffer grew but whose device buffer did not (out of
        // memory) would pass the length checks above on the next batch and
        // then copy past the device buffer's end.
        if self.words.len() < words {
            let n = words + words / 4;
            let grown = (
                pinned(ctx, n, true)?,
                st.alloc_zeros::<u64>(n).map_err(dev)?,
            );
            (self.words, self.dwords) = grown;
        }
        if self.starts.len() < reads {
            let n = reads + reads / 4;
            let grown = (
                pinned(ctx, n, true)?,
                pinned(ctx, n, true)?,
                pinned(ctx, 4 * n, false)?,
                st.alloc_zeros::<u64>(n).map_err(dev)?,
                st.alloc_zeros::<u32>(n).map_err(dev)?,
                st.alloc_zeros::<u64>(4 * n).map_err(dev)?,
            );
            (
                self.starts,
                self.lens,
                self.out,
                self.dstarts,
                self.dlens,
                self.dout,
            ) = grown;
        }
        Ok(())
    }

    /// Packs `reads` (the batch's reads `range`) into the pinned buffers and
    /// queues, on this slot's stream: the copies over, `map_exact_packed`,
    /// the copy of the intervals back. Returns at once; [`Slot::collect`]
    /// waits.
    fn submit(
        &mut self,
        ix: &DeviceIndex,
        reads: &[&[u8]],
        ascii: bool,
        range: Range<usize>,
    ) -> Result<()> {
        let (nw, nr) = (packed_words(reads), reads.len());
        self.reserve(&ix.gpu.ctx, nw, nr)?;
        let host = |e| err("pinned host memory", e);
        pack_reads(
            reads,
            ascii,
            &mut self.words.as_mut_slice().map_err(host)?[..nw],
            &mut self.starts.as_mut_slice().map_err(host)?[..nr],
            &mut self.lens.as_mut_slice().map_err(host)?[..nr],
        )?;
        let st = &self.stream;
        let copy = |e| err("copy reads", e);
        // Slices of pinned memory: the copies are asynchronous. The buffers
        // are not written again before `collect` synchronised the stream.
        st.memcpy_htod(
            &self.words.as_slice().map_err(host)?[..nw],
            &mut self.dwords.slice_mut(..nw),
        )
        .map_err(copy)?;
        st.memcpy_htod(
            &self.starts.as_slice().map_err(host)?[..nr],
            &mut self.dstarts.slice_mut(..nr),
        )
        .map_err(copy)?;
        st.memcpy_htod(
            &self.lens.as_slice().map_err(host)?[..nr],
            &mut self.dlens.slice_mut(..nr),
        )
        .map_err(copy)?;
        let count = nr as u64;
        // Letters are reads (both strands); codes are -v K's seeds, whose
        // reverse strands are patterns of their own.
        let both = u32::from(ascii);
        let f = ix.gpu.func("map_exact_packed")?;
        let mut b = st.launch_builder(f);
        b.arg(&ix.occ)
            .arg(&ix.sup)
            .arg(&ix.c5)
            .arg(&ix.primary)
            .arg(&ix.n)
            .arg(&self.dwords)
            .arg(&self.dstarts)
            .arg(&self.dlens)
            .arg(&count)
            .arg(&both)
            .arg(&ix.kmer)
            .arg(&ix.kk)
            .arg(&mut self.dout);
        self.start.record(st).map_err(|e| err("event", e))?;
        // SAFETY: the arguments match map_exact_packed's parameters in
        // gpu/map.cu; dstarts and dlens hold `count` entries (reserve), every
        // start plus its read's words lies within the `nw` words copied to
        // dwords (pack_reads), dout holds 4 * count, and kmer holds the
        // 2 x 4^kk values of a kk-mer table (with_kmer; one pair for kk 0).
        unsafe { b.launch(grid(nr)) }.map_err(|e| err("map_exact_packed", e))?;
        self.stop.record(st).map_err(|e| err("event", e))?;
        st.memcpy_dtoh(
            &self.dout.slice(..4 * nr),
            &mut self.out.as_mut_slice().map_err(host)?[..4 * nr],
        )
        .map_err(|e| err("copy intervals back", e))?;
        // The clock counts reads (both strands), not -v K's seeds.
        let bases = if ascii {
            reads.iter().map(|r| r.len() as u64).sum()
        } else {
            0
        };
        self.pending = Some((range, bases));
        Ok(())
    }

    /// Waits for the sub-batch in flight, if any, writes its intervals into
    /// `out` and adds its kernel time and bases to `clock`.
    fn collect(&mut self, out: &mut [[Interval; 2]], clock: &KernelClock) -> Result<()> {
        let Some((range, bases)) = self.pending.take() else {
            return Ok(());
        };
        self.stream
            .synchronize()
            .map_err(|e| err("map_exact_packed", e))?;
        if bases > 0 {
            let ms = self
                .start
                .elapsed_ms(&self.stop)
                .map_err(|e| err("event", e))?;
            clock.nanos.fetch_add((f64::from(ms) * 1e6) as u64, Relaxed);
            clock.bases.fetch_add(bases, Relaxed);
        }
        let v = self
            .out
            .as_slice()
            .map_err(|e| err("pinned host memory", e))?;
        for (o, w) in out[range].iter_mut().zip(v.chunks_exact(4)) {
            *o = [
                Interval { lo: w[0], hi: w[1] },
                Interval { lo: w[2], hi: w[3] },
            ];
        }
        Ok(())
    }
}

/// Time in `map_exact_packed` (device time between events around each
/// launch) and the read bases it searched, both strands each (reads only:
/// the seeds of `-v K` are not counted).
#[derive(Default)]
struct KernelClock {
    nanos: AtomicU64,
    bases: AtomicU64,
}

/// The FM-index in device memory.
pub struct DeviceIndex {
    gpu: Gpu,
    /// The two slots of `exact_batch`, made on its first call.
    slots: Mutex<Vec<Slot>>,
    clock: KernelClock,
    occ: CudaSlice<u64>,
    sup: CudaSlice<u64>,
    c5: CudaSlice<u64>,
    ssa32: Option<CudaSlice<u32>>,
    ssa64: Option<CudaSlice<u64>>,
    shift: u32,
    primary: u64,
    n: u64,
    /// PAC, for `-v K`'s verification ([`DeviceIndex::with_pac`]).
    pac: Option<CudaSlice<u8>>,
    /// The k-mer table as [lo, hi) pairs and its k (0: none; one dummy
    /// pair), [`DeviceIndex::with_kmer`].
    kmer: CudaSlice<u64>,
    kk: u32,
    /// The reversed text's rank tables, for `-v K`'s search schemes
    /// ([`DeviceIndex::with_rev`]).
    rev: Option<RevTables>,
}

/// The rank tables of the reversed text on the device (REV_OCC,
/// REV_OCC_SUPER, C and its `$` row).
struct RevTables {
    occ: CudaSlice<u64>,
    sup: CudaSlice<u64>,
    c5: CudaSlice<u64>,
    primary: u64,
}

/// Patterns on the device as `map_verify` and `map_scheme` read them:
/// codes (a byte a base, 4 for N; never empty), offsets and lengths.
struct Patterns {
    codes: CudaSlice<u8>,
    offsets: CudaSlice<u64>,
    lens: CudaSlice<u32>,
}

fn err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Gpu(format!("{what}: {e}"))
}

impl DeviceIndex {
    /// Opens device 0 and copies the index's search tables to it.
    pub fn upload(index: &Index) -> Result<Self> {
        let gpu = Gpu::open(0)?;
        let fm = index.fm();
        let st = &gpu.stream;
        let copy = |v: &[u64], what: &str| st.clone_htod(v).map_err(|e| err(what, e));
        let occ = copy(bytemuck::cast_slice(fm.occ), "copy OCC to the device")?;
        let sup = copy(bytemuck::cast_slice(fm.sup), "copy OCC_SUPER to the device")?;
        let c5 = copy(&fm.c, "copy C to the device")?;
        let (ssa32, ssa64) = match fm.ssa {
            Ssa::U32(s) => (
                Some(
                    st.clone_htod(s)
                        .map_err(|e| err("copy SSA to the device", e))?,
                ),
                None,
            ),
            Ssa::U64(s) => (None, Some(copy(s, "copy SSA to the device")?)),
        };
        let kmer = copy(&[0, 0], "copy the k-mer table")?;
        Ok(DeviceIndex {
            gpu,
            slots: Mutex::new(Vec::new()),
            clock: KernelClock::default(),
            occ,
            sup,
            c5,
            ssa32,
            ssa64,
            shift: fm.sample_shift,
            primary: fm.primary,
            n: fm.n,
            pac: None,
            kmer,
            kk: 0,
            rev: None,
        })
    }

    /// `[forward, reverse]` intervals of each read (empty for a read that is
    /// empty or holds a base other than A/C/G/T), as
    /// `map::search_intervals`.
    pub fn exact(&self, reads: &[&[u8]]) -> Result<Vec<[Interval; 2]>> {
        if reads.is_empty() {
            return Ok(Vec::new());
        }
        let mut codes = Vec::new();
        let mut offsets = Vec::with_capacity(reads.len());
        let mut lens = Vec::with_capacity(reads.len());
        for r in reads {
            offsets.push(codes.len() as u64);
            lens.push(r.len() as u32);
            codes.extend(r.iter().map(|&b| crate::dna::code(b)));
        }
        codes.push(4); // never empty
        let st = &self.gpu.stream;
        let codes = st.clone_htod(&codes).map_err(|e| err("copy reads", e))?;
        let offsets = st.clone_htod(&offsets).map_err(|e| err("copy reads", e))?;
        let lens = st.clone_htod(&lens).map_err(|e| err("copy reads", e))?;
        let mut out = st
            .alloc_zeros::<u64>(4 * reads.len())
            .map_err(|e| err("device memory for intervals", e))?;
        let count = reads.len() as u64;
        let f = self.gpu.func("map_exact")?;
        let mut b = st.launch_builder(f);
        b.arg(&self.occ)
            .arg(&self.sup)
            .arg(&self.c5)
            .arg(&self.primary)
            .arg(&self.n)
            .arg(&codes)
            .arg(&offsets)
            .arg(&lens)
            .arg(&count)
            .arg(&mut out);
        // SAFETY: the arguments match map_exact's parameters in gpu/map.cu,
        // and every buffer holds what the kernel reads.
        unsafe { b.launch(grid(reads.len())) }.map_err(|e| err("map_exact", e))?;
        let v = st
            .clone_dtoh(&out)
            .map_err(|e| err("copy intervals back", e))?;
        Ok(v.chunks(4)
            .map(|w| {
                [
                    Interval { lo: w[0], hi: w[1] },
                    Interval { lo: w[2], hi: w[3] },
                ]
            })
            .collect())
    }

    /// [`DeviceIndex::exact`] for a whole batch in one pass: sub-batches of
    /// [`SUB_READS`] reads alternate between two slots (streams), so the
    /// host packs sub-batch `j` while the device copies and searches `j - 1`.
    pub fn exact_batch(&self, reads: &[&[u8]]) -> Result<Vec<[Interval; 2]>> {
        self.exact_packed(reads, true)
    }

    /// [`DeviceIndex::exact_batch`] of reads as letters (`ascii`) or codes.
    fn exact_packed(&self, reads: &[&[u8]], ascii: bool) -> Result<Vec<[Interval; 2]>> {
        let mut out = vec![[Interval { lo: 0, hi: 0 }; 2]; reads.len()];
        if reads.is_empty() {
            return Ok(out);
        }
        let mut slots = self
            .slots
            .lock()
            .map_err(|_| Error::Gpu("a previous search panicked".into()))?;
        while slots.len() < 2 {
            slots.push(Slot::new(&self.gpu)?);
        }
        let run = |slots: &mut Vec<Slot>, out: &mut [[Interval; 2]]| -> Result<()> {
            for (j, start) in (0..reads.len()).step_by(SUB_READS).enumerate() {
                let range = start..(start + SUB_READS).min(reads.len());
                let slot = &mut slots[j % 2];
                slot.collect(out, &self.clock)?;
                slot.submit(self, &reads[range.clone()], ascii, range)?;
            }
            slots
                .iter_mut()
                .try_for_each(|s| s.collect(out, &self.clock))
        };
        let result = run(&mut slots, &mut out);
        if result.is_err() {
            // Nothing stays in flight for the next call to collect.
            for s in slots.iter_mut() {
                s.pending = None;
                let _ = s.stream.synchronize();
            }
        }
        result.map(|()| out)
    }

    /// Also copies `table` (every k-mer's interval, 16 x 4^k bytes) to the
    /// device: the batched search then starts each read of at least k bases
    /// from it (`map --kmer K`). A table of k 0 changes nothing.
    pub fn with_kmer(mut self, table: &crate::kmer::KmerTable) -> Result<Self> {
        if table.k() == 0 {
            return Ok(self);
        }
        if table.intervals().len() as u64 != 1u64 << (2 * table.k()) {
            return Err(Error::Gpu(format!(
                "a k-mer table of {} entries for k = {}",
                table.intervals().len(),
                table.k()
            )));
        }
        let flat: Vec<u64> = table
            .intervals()
            .iter()
            .flat_map(|iv| [iv.lo, iv.hi])
            .collect();
        self.kmer = self
            .gpu
            .stream
            .clone_htod(&flat)
            .map_err(|e| err("copy the k-mer table", e))?;
        self.kk = table.k();
        Ok(self)
    }

    /// Also copies the text (PAC, n/4 bytes) to the device, for `-v K`'s
    /// verification of seeds ([`SeedEngine::verify`]).
    pub fn with_pac(mut self, index: &Index) -> Result<Self> {
        let pac = index.pac();
        if pac.len() as u64 != self.n.div_ceil(4) {
            return Err(Error::Gpu(format!(
                "PAC holds {} bytes for {} bases",
                pac.len(),
                self.n
            )));
        }
        let st = &self.gpu.stream;
        self.pac = Some(
            st.clone_htod(if pac.is_empty() { &[0u8][..] } else { pac })
                .map_err(|e| err("copy PAC to the device", e))?,
        );
        Ok(self)
    }

    /// Also copies the reversed text's rank tables (REV_OCC, 0.33 bytes a
    /// base), for `-v K`'s search schemes ([`SeedEngine::schemes`]).
    pub fn with_rev(mut self, index: &Index) -> Result<Self> {
        let rev = index.rev_fm();
        let st = &self.gpu.stream;
        let copy = |v: &[u64], what: &str| st.clone_htod(v).map_err(|e| err(what, e));
        self.rev = Some(RevTables {
            occ: copy(bytemuck::cast_slice(rev.occ), "copy REV_OCC to the device")?,
            sup: copy(
                bytemuck::cast_slice(rev.sup),
                "copy REV_OCC_SUPER to the device",
            )?,
            c5: copy(&rev.c, "copy C to the device")?,
            primary: rev.primary,
        });
        Ok(self)
    }

    /// Copies `patterns` to the device.
    fn patterns(&self, patterns: &[&[u8]]) -> Result<Patterns> {
        let mut codes = Vec::new();
        let mut offsets = Vec::with_capacity(patterns.len());
        let mut lens = Vec::with_capacity(patterns.len());
        for p in patterns {
            offsets.push(codes.len() as u64);
            lens.push(u32::try_from(p.len()).map_err(|_| err("pattern", "too long"))?);
            codes.extend_from_slice(p);
        }
        codes.push(4); // never empty
        offsets.push(0);
        lens.push(0);
        let st = &self.gpu.stream;
        let copy = |e| err("copy patterns", e);
        Ok(Patterns {
            codes: st.clone_htod(&codes).map_err(copy)?,
            offsets: st.clone_htod(&offsets).map_err(copy)?,
            lens: st.clone_htod(&lens).map_err(copy)?,
        })
    }

    /// Seconds `map_exact_packed` ran on the device so far, and the read
    /// bases it searched (each on both strands).
    pub fn kernel_time(&self) -> (f64, u64) {
        (
            self.clock.nanos.load(Relaxed) as f64 * 1e-9,
            self.clock.bases.load(Relaxed),
        )
    }

    /// The text positions of suffix-array rows (as `FmIndex::locate`).
    pub fn locate(&self, rows: &[u64]) -> Result<Vec<u64>> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let st = &self.gpu.stream;
        let drows = st.clone_htod(rows).map_err(|e| err("copy rows", e))?;
        let mut out = st
            .alloc_zeros::<u64>(rows.len())
            .map_err(|e| err("device memory for positions", e))?;
        let m = rows.len() as u64;
        let name = if self.ssa32.is_some() {
            "map_locate_u32"
        } else {
            "map_locate_u64"
        };
        let f = self.gpu.func(name)?;
        let mut b = st.launch_builder(f);
        b.arg(&self.occ)
            .arg(&self.sup)
            .arg(&self.c5)
            .arg(&self.primary)
            .arg(&self.n);
        match (&self.ssa32, &self.ssa64) {
            (Some(s), _) => b.arg(s),
            (None, Some(s)) => b.arg(s),
            (None, None) => unreachable!("one SSA width"),
        };
        b.arg(&self.shift).arg(&drows).arg(&m).arg(&mut out);
        // SAFETY: as in `exact`, for map_locate_u32/u64.
        unsafe { b.launch(grid(rows.len())) }.map_err(|e| err(name, e))?;
        st.clone_dtoh(&out)
            .map_err(|e| err("copy positions back", e))
    }
}

impl SeedEngine for DeviceIndex {
    /// The pieces' intervals, from the batched search (forward strand only).
    fn exact(&self, pieces: &[&[u8]]) -> Result<Vec<Interval>> {
        Ok(self
            .exact_packed(pieces, false)?
            .into_iter()
            .map(|[f, _]| f)
            .collect())
    }

    fn locate(&self, rows: &[u64]) -> Result<Vec<u64>> {
        DeviceIndex::locate(self, rows)
    }

    /// `map_verify`, one thread per candidate.
    fn verify(&self, patterns: &[&[u8]], cands: &[(u32, u64)], k: u8) -> Result<Vec<Option<u8>>> {
        if cands.is_empty() {
            return Ok(Vec::new());
        }
        let pac = self
            .pac
            .as_ref()
            .ok_or_else(|| Error::Gpu("-v K without PAC on the device".into()))?;
        let (owner, starts): (Vec<u32>, Vec<u64>) = cands.iter().copied().unzip();
        // What map_verify reads must lie inside its buffers: checked here.
        for &(q, s) in cands {
            let len = patterns.get(q as usize).map(|p| p.len() as u64);
            if len.is_none_or(|len| s.checked_add(len).is_none_or(|e| e > self.n)) {
                return Err(Error::Gpu(format!(
                    "verify: candidate ({q}, {s}) outside the patterns or the text"
                )));
            }
        }
        let pats = self.patterns(patterns)?;
        let st = &self.gpu.stream;
        let copy = |e| err("copy candidates", e);
        let downer = st.clone_htod(&owner).map_err(copy)?;
        let dstarts = st.clone_htod(&starts).map_err(copy)?;
        let mut out = st
            .alloc_zeros::<u8>(cands.len())
            .map_err(|e| err("device memory for candidates", e))?;
        let (count, k) = (cands.len() as u64, u32::from(k));
        let f = self.gpu.func("map_verify")?;
        let mut b = st.launch_builder(f);
        b.arg(pac)
            .arg(&pats.codes)
            .arg(&pats.offsets)
            .arg(&pats.lens)
            .arg(&downer)
            .arg(&dstarts)
            .arg(&count)
            .arg(&k)
            .arg(&mut out);
        // SAFETY: the arguments match map_verify's parameters in gpu/map.cu;
        // every owner indexes offsets/lens, and every candidate's bases lie
        // within the text (checked above) and so within PAC (n/4 bytes,
        // with_pac) and its pattern within codes.
        unsafe { b.launch(grid(cands.len())) }.map_err(|e| err("map_verify", e))?;
        let v = st
            .clone_dtoh(&out)
            .map_err(|e| err("copy mismatches back", e))?;
        Ok(v.into_iter().map(|m| (m != 255).then_some(m)).collect())
    }

    /// `map_scheme`, one thread per job; a job with more than
    /// [`SCHEME_CAP`] alignments runs again here on the CPU.
    fn schemes(
        &self,
        bi: &BiIndex<'_>,
        patterns: &[&[u8]],
        jobs: &[(u32, u8)],
        k: u8,
    ) -> Result<Vec<Vec<Found>>> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let rev = self
            .rev
            .as_ref()
            .ok_or_else(|| Error::Gpu("-v K without the reversed index on the device".into()))?;
        let k = k.min(crate::search::MAX_MISMATCHES);
        // map_scheme's parts need more bases than mismatches: checked here.
        for &(q, i) in jobs {
            let len = patterns.get(q as usize).map(|p| p.len());
            if len.is_none_or(|len| len <= usize::from(k)) || i > k {
                return Err(Error::Gpu(format!(
                    "schemes: job ({q}, {i}) outside the patterns, or too short for -v {k}"
                )));
            }
        }
        let pats = self.patterns(patterns)?;
        let (pat, part): (Vec<u32>, Vec<u8>) = jobs.iter().copied().unzip();
        let st = &self.gpu.stream;
        let copy = |e| err("copy jobs", e);
        let dpat = st.clone_htod(&pat).map_err(copy)?;
        let dpart = st.clone_htod(&part).map_err(copy)?;
        let slots = jobs.len() * SCHEME_CAP as usize;
        let mem = |e| err("device memory for alignments", e);
        let mut lo = st.alloc_zeros::<u64>(slots).map_err(mem)?;
        let mut hi = st.alloc_zeros::<u64>(slots).map_err(mem)?;
        let mut mm = st.alloc_zeros::<u8>(slots).map_err(mem)?;
        let mut count = st.alloc_zeros::<u32>(jobs.len()).map_err(mem)?;
        let (njobs, k32, cap) = (jobs.len() as u64, u32::from(k), SCHEME_CAP);
        let f = self.gpu.func("map_scheme")?;
        let mut b = st.launch_builder(f);
        b.arg(&self.occ)
            .arg(&self.sup)
            .arg(&self.c5)
            .arg(&self.primary)
            .arg(&rev.occ)
            .arg(&rev.sup)
            .arg(&rev.c5)
            .arg(&rev.primary)
            .arg(&self.n)
            .arg(&pats.codes)
            .arg(&pats.offsets)
            .arg(&pats.lens)
            .arg(&dpat)
            .arg(&dpart)
            .arg(&njobs)
            .arg(&k32)
            .arg(&cap)
            .arg(&mut lo)
            .arg(&mut hi)
            .arg(&mut mm)
            .arg(&mut count);
        // SAFETY: the arguments match map_scheme's parameters in gpu/map.cu;
        // every job's pattern indexes offsets/lens and has more than k bases
        // (checked above), so its parts lie within codes; rows stay within
        // the index's tables as the CPU's steps do; each job writes at most
        // cap alignments at job * cap, inside lo/hi/mm (jobs * cap).
        unsafe { b.launch(grid(jobs.len())) }.map_err(|e| err("map_scheme", e))?;
        let back = |e| err("copy alignments back", e);
        let (lo, hi) = (
            st.clone_dtoh(&lo).map_err(back)?,
            st.clone_dtoh(&hi).map_err(back)?,
        );
        let (mm, count) = (
            st.clone_dtoh(&mm).map_err(back)?,
            st.clone_dtoh(&count).map_err(back)?,
        );
        Ok(jobs
            .iter()
            .enumerate()
            .map(|(j, &(q, i))| {
                let c = count[j];
                if c > cap {
                    return crate::search::scheme_found(
                        bi,
                        patterns[q as usize],
                        k,
                        usize::from(i),
                    );
                }
                let at = j * cap as usize;
                (at..at + c as usize)
                    .map(|x| Found {
                        rows: Interval {
                            lo: lo[x],
                            hi: hi[x],
                        },
                        mismatches: mm[x],
                    })
                    .collect()
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unpacking `pack_reads`' words gives every read's codes back, each
    /// read from a word boundary, with the flag exactly on reads holding a
    /// non-ACGT letter; groups of 4096 reads packed in parallel agree.
    #[test]
    fn packed_reads_unpack_to_their_codes() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let reads: Vec<Vec<u8>> = (0..10_000)
            .map(|q| {
                let len = (next() % 300) as usize * usize::from(q % 97 != 0);
                (0..len)
                    .map(|_| match next() % 1000 {
                        0 => b'N',
                        1 => b'r',
                        v => b"ACGTacgt"[(v % 8) as usize],
                    })
                    .collect()
            })
            .collect();
        let seqs: Vec<&[u8]> = reads.iter().map(|r| r.as_slice()).collect();
        let mut words = vec![u64::MAX; packed_words(&seqs) + 3];
        let (mut starts, mut lens) = (vec![0; seqs.len()], vec![0; seqs.len()]);
        pack_reads(&seqs, true, &mut words, &mut starts, &mut lens).unwrap();
        let mut end = 0;
        for (k, r) in seqs.iter().enumerate() {
            assert_eq!(
                starts[k], end as u64,
                "read {k} starts after the one before"
            );
            end += r.len().div_ceil(32);
            let amb = r.iter().any(|&b| crate::dna::code(b) > 3);
            assert_eq!(lens[k], r.len() as u32 | if amb { AMBIGUOUS } else { 0 });
            for (i, &b) in r.iter().enumerate() {
                let w = words[starts[k] as usize + i / 32];
                let c = (w >> (2 * (i % 32))) & 3;
                assert_eq!(c as u8, crate::dna::code(b) & 3, "read {k} base {i}");
            }
        }
        assert!(words[end..].iter().all(|&w| w == 0), "the tail is zeroed");
        // Codes in, as for the seeds of -v K.
        let codes: Vec<Vec<u8>> = reads
            .iter()
            .map(|r| r.iter().map(|&b| crate::dna::code(b)).collect())
            .collect();
        let cseqs: Vec<&[u8]> = codes.iter().map(|r| r.as_slice()).collect();
        let mut cwords = vec![0; words.len()];
        let (mut cstarts, mut clens) = (vec![0; seqs.len()], vec![0; seqs.len()]);
        pack_reads(&cseqs, false, &mut cwords, &mut cstarts, &mut clens).unwrap();
        assert!(cwords == words && cstarts == starts && clens == lens);
        // Too small a buffer is an error, not a panic.
        assert!(pack_reads(&seqs, true, &mut words[..1], &mut starts, &mut lens).is_err());
    }
}
