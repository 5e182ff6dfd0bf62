//! Exact mapping on the device (`fmalign map --device gpu`): the FM-index of
//! the `.fmi` file is copied to device memory once (OCC, OCC_SUPER, C, the
//! sampled SA); a whole batch of reads goes over 2-bit packed
//! ([`DeviceIndex::exact_batch`]: sub-batches of [`SUB_READS`] reads through
//! pinned host buffers on two streams, so that packing one sub-batch overlaps
//! the copies and search of the other), `gpu/map.cu` runs the backward
//! search of both strands (one thread per read) and locate (one thread per
//! row). The CPU formats the records, so the SAM is the CPU path's.

//!
//! Without the `gpu` feature `map/mod.rs` mounts `disabled.rs` here
//! instead: the same names over an uninhabited [`DeviceIndex`], so the
//! pipeline has no `cfg` of its own.

mod stream;

use std::sync::Mutex;
use std::sync::atomic::Ordering::Relaxed;

use cudarc::driver::{CudaSlice, PushKernelArg};

use crate::error::{Error, Result};
use crate::fm::{Interval, Ssa};
use crate::gpu::context::{Gpu, grid};
use crate::index::Index;
use crate::search::{BiIndex, Found, SeedEngine};

use stream::{KernelClock, Slot};
pub use stream::{pack_reads, packed_words};

/// Reads per sub-batch of [`DeviceIndex::exact_batch`]: 2^20 reads of
/// 150 bases are 37.5 MiB packed and 32 MiB of intervals, in each of the two
/// slots.
pub const SUB_READS: usize = 1 << 20;

/// Alignments `map_scheme` writes per job; a job that finds more is run
/// again on the CPU (its count says so).
const SCHEME_CAP: u32 = 32;

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
            slots.iter_mut().for_each(Slot::abandon);
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
