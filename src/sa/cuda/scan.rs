//! The device-wide scans the steps are built on (reduce-then-scan over
//! tiles, the carries scanned by one block: see the table in the parent
//! module) and the LSD radix sort over them.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{Cuda, DevBuf, RTILE, TILE, gpu_err, tiles_cfg};
use crate::error::Result;
use crate::sa::steps::{Elem, Word};

impl Cuda {
    /// Scans the tile aggregates `sums[..tiles]` into exclusive carries in
    /// place on the device, one block (`scan_carries`); `sums[tiles]`, the
    /// last element, gets the total.
    pub(super) fn carries(&self, sums: &mut DevBuf<u64>) -> Result<()> {
        assert!(sums.len >= 2, "carries: no tile");
        let tiles = (sums.len - 1) as u64;
        launch!(self, "scan_carries", tiles 1; &mut sums.s, &tiles);
        Ok(())
    }

    /// The total of a carry scan (the last element of `sums`, 0 when there
    /// was no tile): the one value a scan copies to the host, a sync.
    pub(super) fn total(&self, sums: &DevBuf<u64>) -> Result<u64> {
        if sums.len < 2 {
            return Ok(0);
        }
        let last = self
            .g
            .stream
            .clone_dtoh(&sums.s.slice(sums.len - 1..sums.len))
            .map_err(|e| gpu_err("copy to host", e))?;
        Ok(last[0])
    }

    /// Exclusive or inclusive scan of the first `n` elements of `x`, all on
    /// the device. Returns the tile carries, the total last ([`Self::total`]
    /// reads it; a caller that does not need it copies nothing).
    pub(super) fn scan<W: Word>(
        &self,
        x: &mut CudaSlice<W>,
        n: usize,
        inclusive: bool,
    ) -> Result<DevBuf<u64>> {
        let tiles = n.div_ceil(TILE);
        let mut sums = self.alloc::<u64>(tiles + 1)?;
        if n == 0 {
            return Ok(sums);
        }
        let n64 = n as u64;
        launch!(self, "scan_tiles"<W>, tiles tiles; &*x, &n64, &mut sums.s);
        self.carries(&mut sums)?;
        let inc = u32::from(inclusive);
        launch!(self, "scan_apply"<W>, tiles tiles; &mut *x, &n64, &sums.s, &inc);
        Ok(sums)
    }

    /// Kept elements per tile, scanned on the device: the write offset of
    /// each tile, the total kept last ([`Self::total`]).
    pub(super) fn keep_offsets(&self, keep: &DevBuf<u8>) -> Result<DevBuf<u64>> {
        let tiles = keep.len.div_ceil(TILE);
        let mut counts = self.alloc::<u64>(tiles + 1)?;
        if tiles > 0 {
            let n = keep.len as u64;
            launch!(self, "flag_tiles", tiles tiles; &keep.s, &n, &mut counts.s);
            self.carries(&mut counts)?;
        }
        Ok(counts)
    }

    /// Stable radix sort of `keys`/`vals` by their low `bits` bits, 8 a pass.
    pub(super) fn radix<K: Word, V: Elem>(
        &self,
        keys: &mut DevBuf<K>,
        vals: &mut DevBuf<V>,
        bits: u32,
    ) -> Result<()> {
        let n = keys.len;
        if n < 2 || bits == 0 {
            return Ok(());
        }
        let tiles = n.div_ceil(RTILE);
        let mut counts = self.alloc::<u64>(256 * tiles)?;
        let mut tk = self.alloc::<K>(n)?;
        let mut tv = self.alloc::<V>(n)?;
        let (n64, t64) = (n as u64, tiles as u64);
        let mut shift = 0;
        while shift < bits {
            let width = (bits - shift).min(8);
            launch!(self, "radix_hist"<K>, tiles tiles;
                &keys.s, &n64, &shift, &width, &t64, &mut counts.s);
            self.scan::<u64>(&mut counts.s, (1usize << width) * tiles, false)?;
            launch!(self, "radix_scatter"<K, V>, tiles tiles;
                &keys.s, &vals.s, &n64, &shift, &width, &t64, &counts.s, &mut tk.s, &mut tv.s);
            std::mem::swap(keys, &mut tk);
            std::mem::swap(vals, &mut tv);
            shift += width;
        }
        Ok(())
    }
}
