//! Exact mapping on the device (`fmalign map --device gpu`): the FM-index of
//! the `.fmi` file is copied to device memory once (OCC, OCC_SUPER, C, the
//! sampled SA), reads go over as codes, and `gpu/map.cu` runs the backward
//! search of both strands (one thread per read) and locate (one thread per
//! row). The CPU formats the records, so the SAM is the CPU path's.

use cudarc::driver::{CudaSlice, PushKernelArg};

use crate::error::{Error, Result};
use crate::fm::{Interval, Ssa};
use crate::gpu::device::{Gpu, grid};
use crate::index::Index;

/// The FM-index in device memory.
pub struct DeviceIndex {
    gpu: Gpu,
    occ: CudaSlice<u64>,
    sup: CudaSlice<u64>,
    c5: CudaSlice<u64>,
    ssa32: Option<CudaSlice<u32>>,
    ssa64: Option<CudaSlice<u64>>,
    shift: u32,
    primary: u64,
    n: u64,
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
        Ok(DeviceIndex {
            gpu,
            occ,
            sup,
            c5,
            ssa32,
            ssa64,
            shift: fm.sample_shift,
            primary: fm.primary,
            n: fm.n,
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
