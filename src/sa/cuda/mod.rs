//! The CUDA backend: every step of [`Backend`] as kernels of `gpu/` over
//! device buffers, on one stream (so steps run in order).
//!
//! Kernel names are the step's name and the element types (`gather_u32_u64`);
//! see `gpu/prelude.cu` for the conventions.
//!
//! Scans stay on the device (reduce-then-scan, `gpu/scan.cu`): a kernel
//! writes one aggregate per 4096-element tile, one block scans those
//! aggregates in place (`scan_carries`, `segscan_carries`: a loop over them,
//! so any number of tiles), and a kernel applies each tile's carry. Launches
//! and host synchronisations per step:
//!
//! | step | launches | copies to the host (each a sync) |
//! | --- | --- | --- |
//! | `exclusive_scan` | 3 | 1: the total it returns (8 bytes) |
//! | `segmented_scan` | 3 | none |
//! | `compact`, `compact_index` | 3 | 1: the number kept, to size the output |
//! | `count` | 2 | 1: the count |
//! | a radix sort pass | 5 (hist, 3 for the scan, scatter) | none |
//! | `segmented_sort` | its radix passes | 1: the number of segments, which sets the second sort's passes |
//! | `segment_lengths` | 4 maps, a scan (3), a `compact_index` (3) | 1 (the `compact_index`'s) |
//!
//! No step copies tile carries either way. Steps with an empty input launch
//! nothing and copy nothing.
//!
//! Differences from the CPU backend, none visible in the algorithms' output:
//! * `segmented_sort` is two stable radix sorts (by key, then by segment)
//!   carrying a permutation, not the block sort and merge rounds of the CPU
//!   backend; it is stable, so equal keys keep their input order, which is
//!   the CPU's "by value" order whenever values ascend within each segment
//!   (the algorithms keep them so). Its report counts no merge rounds.
//! * `sort_suffixes` stores the `u64` text keys (the CPU recomputes them):
//!   device memory per suffix is higher during the first sort.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::steps::{
    Backend, Chars, CoverSample, Elem, Iota, Order, RankLayout, SegSortReport, Word, bits_for,
};
use crate::error::{Error, Result};
use crate::gpu::context::{Gpu, THREADS, grid};

/// A device buffer of `len` elements (at least one is allocated: CUDA
/// refuses empty allocations), counted by its backend's [`Meter`] while it
/// lives.
pub struct DevBuf<T> {
    s: CudaSlice<T>,
    len: usize,
    bytes: u64,
    meter: Arc<Meter>,
}

impl<T> Drop for DevBuf<T> {
    fn drop(&mut self) {
        self.meter.live.fetch_sub(self.bytes, Relaxed);
    }
}

/// Device memory held by the backend's buffers: now and at the most, the
/// figure the storage plan (`sa::gpu_bytes_per_base`) bounds.
#[derive(Default)]
struct Meter {
    live: AtomicU64,
    peak: AtomicU64,
}

impl Meter {
    fn add(&self, bytes: u64) {
        let live = self.live.fetch_add(bytes, Relaxed) + bytes;
        self.peak.fetch_max(live, Relaxed);
    }
}

/// The CUDA backend.
pub struct Cuda {
    g: Gpu,
    meter: Arc<Meter>,
}

/// Elements per tile of scan.cu.
const TILE: usize = 4096;
/// Elements per tile of radix.cu.
const RTILE: usize = 2048;
/// Outputs per thread of merge.cu.
const CHUNK: usize = 16;

fn gpu_err(what: impl std::fmt::Display, e: impl std::fmt::Display) -> Error {
    Error::Gpu(format!("{what}: {e}"))
}

/// One block per tile.
fn tiles_cfg(tiles: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (tiles as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn layout_args(l: RankLayout) -> (u32, u64) {
    match l {
        RankLayout::Identity => (0, 0),
        RankLayout::Interleaved => (1, 0),
        RankLayout::Split { n0 } => (2, n0),
    }
}

/// Launches a kernel of `gpu/` on the backend's stream, one line a site:
///
/// `launch!(self, "gather"<T, I>, over n; &src.s, &idx.s, &m, &mut out.s)`
///
/// * the kernel: its step and the element types its name ends with, each
///   `<T as Elem>::CU` after a `_` (`gather_u32_u64`); a name without
///   types is the step alone (`"scan_carries"`);
/// * the launch: `over n`, grid-stride over `n` elements ([`grid`]),
///   nothing launched when `n` is 0; `tiles t`, one block per tile
///   ([`tiles_cfg`]); `with c`, the [`LaunchConfig`] `c`;
/// * the arguments, each an lvalue, in the kernel's order.
macro_rules! launch {
    ($self:expr, $step:literal $(<$($t:ty),+>)?, over $n:expr; $($arg:expr),+ $(,)?) => {{
        let n: usize = $n;
        if n > 0 {
            launch!($self, $step $(<$($t),+>)?, with grid(n); $($arg),+);
        }
    }};
    ($self:expr, $step:literal $(<$($t:ty),+>)?, tiles $tiles:expr; $($arg:expr),+ $(,)?) => {
        launch!($self, $step $(<$($t),+>)?, with tiles_cfg($tiles); $($arg),+)
    };
    ($self:expr, $step:literal $(<$($t:ty),+>)?, with $cfg:expr; $($arg:expr),+ $(,)?) => {{
        let name: String = [$step $($(, <$t as Elem>::CU)+)?].join("_");
        let f = $self.g.func(&name)?;
        let mut b = $self.g.stream.launch_builder(f);
        $( b.arg($arg); )+
        // SAFETY: the argument list matches the kernel's signature in gpu/
        // (types and order), and every buffer holds the elements it reads.
        unsafe { b.launch($cfg) }.map_err(|e| gpu_err(&name, e))?;
    }};
}

// After `launch!`, which it uses.
mod scan;

impl Cuda {
    /// Opens device 0 with every kernel loaded. The caller has checked
    /// [`crate::gpu::probe`].
    pub fn open() -> Result<Self> {
        Ok(Cuda {
            g: Gpu::open(0)?,
            meter: Arc::default(),
        })
    }

    /// The most device memory the backend's buffers held at once so far
    /// (bytes; the allocator's own rounding and the index tables of
    /// `map` not included).
    pub fn peak_bytes(&self) -> u64 {
        self.meter.peak.load(Relaxed)
    }

    /// A buffer of `s` holding `len` elements, counted by the meter.
    fn wrap<T>(&self, s: CudaSlice<T>, len: usize) -> DevBuf<T> {
        let bytes = (s.len() * std::mem::size_of::<T>()) as u64;
        self.meter.add(bytes);
        DevBuf {
            s,
            len,
            bytes,
            meter: Arc::clone(&self.meter),
        }
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.g
    }

    fn alloc<T: Elem>(&self, n: usize) -> Result<DevBuf<T>> {
        let s = self
            .g
            .stream
            .alloc_zeros::<T>(n.max(1))
            .map_err(|e| gpu_err(format!("cannot allocate {n} x {}", T::CU), e))?;
        Ok(self.wrap(s, n))
    }

    fn host<T: Elem>(&self, b: &DevBuf<T>) -> Result<Vec<T>> {
        if b.len == 0 {
            return Ok(Vec::new());
        }
        self.g
            .stream
            .clone_dtoh(&b.s.slice(0..b.len))
            .map_err(|e| gpu_err("copy to host", e))
    }

    fn to_device<T: Elem>(&self, v: &[T]) -> Result<DevBuf<T>> {
        if v.is_empty() {
            return self.alloc(0);
        }
        let s = self
            .g
            .stream
            .clone_htod(v)
            .map_err(|e| gpu_err("copy to device", e))?;
        Ok(self.wrap(s, v.len()))
    }

    /// The FM-index tables of a text (packed by `pack_text`) from its
    /// suffix array on the device: (index of position 0 in `sa`, Occ lines
    /// as 8 words each with line-local counts, sampled SA).
    pub fn fm_tables<W: Word>(
        &self,
        packed: &DevBuf<u64>,
        sa: &DevBuf<W>,
        sample_shift: u32,
    ) -> Result<(u64, Vec<u64>, Vec<W>)> {
        let n = sa.len as u64;
        let mut zero = self.alloc::<u64>(1)?;
        launch!(self, "find_zero"<W>, over sa.len; &sa.s, &n, &mut zero.s);
        let primary = if n == 0 { 0 } else { 1 + self.host(&zero)?[0] };
        let lines = n / crate::fm::LINE_BASES + 1;
        let mut occ = self.alloc::<u64>(8 * lines as usize)?;
        launch!(self, "occ_lines"<W>, with grid(lines as usize);
            &packed.s, &sa.s, &n, &primary, &lines, &mut occ.s);
        let samples = (n >> sample_shift) + 1;
        let mut ssa = self.alloc::<W>(samples as usize)?;
        launch!(self, "sample_sa"<W>, with grid(samples as usize);
            &sa.s, &n, &sample_shift, &samples, &mut ssa.s);
        Ok((primary, self.host(&occ)?, self.host(&ssa)?))
    }
}

impl Backend for Cuda {
    type Buf<T: Elem> = DevBuf<T>;

    fn name(&self) -> &'static str {
        "cuda"
    }

    fn finish(&self) -> Result<()> {
        self.g
            .stream
            .synchronize()
            .map_err(|e| gpu_err("synchronize", e))
    }

    fn len<T: Elem>(&self, b: &DevBuf<T>) -> usize {
        b.len
    }

    fn zeros<T: Elem>(&self, n: usize) -> Result<DevBuf<T>> {
        self.alloc(n)
    }

    fn upload<T: Elem>(&self, v: Vec<T>) -> Result<DevBuf<T>> {
        self.to_device(&v)
    }

    fn download<T: Elem>(&self, b: DevBuf<T>) -> Result<Vec<T>> {
        self.host(&b)
    }

    fn upload_slice<T: Elem>(&self, v: &[T]) -> Result<DevBuf<T>> {
        self.to_device(v)
    }

    fn download_into<T: Elem>(&self, b: &DevBuf<T>, out: &mut [T]) -> Result<()> {
        assert_eq!(out.len(), b.len, "download_into: lengths differ");
        if b.len > 0 {
            self.g
                .stream
                .memcpy_dtoh(&b.s.slice(0..b.len), out)
                .map_err(|e| gpu_err("copy to host", e))?;
        }
        Ok(())
    }

    fn copy<T: Elem>(&self, b: &DevBuf<T>) -> Result<DevBuf<T>> {
        let s = self
            .g
            .stream
            .clone_dtod(&b.s)
            .map_err(|e| gpu_err("device copy", e))?;
        Ok(self.wrap(s, b.len))
    }

    fn concat<T: Elem>(&self, a: &DevBuf<T>, b: &DevBuf<T>) -> Result<DevBuf<T>> {
        let mut out = self.alloc::<T>(a.len + b.len)?;
        let st = &self.g.stream;
        if a.len > 0 {
            st.memcpy_dtod(&a.s.slice(0..a.len), &mut out.s.slice_mut(0..a.len))
                .map_err(|e| gpu_err("device copy", e))?;
        }
        if b.len > 0 {
            st.memcpy_dtod(
                &b.s.slice(0..b.len),
                &mut out.s.slice_mut(a.len..a.len + b.len),
            )
            .map_err(|e| gpu_err("device copy", e))?;
        }
        Ok(out)
    }

    fn slice<T: Elem>(&self, b: &DevBuf<T>, start: usize, end: usize) -> Result<DevBuf<T>> {
        assert!(
            start <= end && end <= b.len,
            "slice {start}..{end} of {}",
            b.len
        );
        let mut out = self.alloc::<T>(end - start)?;
        if end > start {
            self.g
                .stream
                .memcpy_dtod(&b.s.slice(start..end), &mut out.s.slice_mut(0..end - start))
                .map_err(|e| gpu_err("device copy", e))?;
        }
        Ok(out)
    }

    fn radix_sort_pairs<K: Word, V: Elem>(
        &self,
        keys: &mut DevBuf<K>,
        vals: &mut DevBuf<V>,
        bits: u32,
    ) -> Result<()> {
        assert_eq!(
            keys.len, vals.len,
            "radix sort: keys and values differ in length"
        );
        self.radix(keys, vals, bits)
    }

    fn exclusive_scan<W: Word>(&self, x: &mut DevBuf<W>) -> Result<W> {
        let n = x.len;
        let sums = self.scan(&mut x.s, n, false)?;
        Ok(W::from_u64(self.total(&sums)?))
    }

    fn segmented_scan<W: Word>(&self, x: &mut DevBuf<W>, heads: &DevBuf<u8>) -> Result<()> {
        assert_eq!(x.len, heads.len, "segmented scan: lengths differ");
        let n = x.len;
        if n == 0 {
            return Ok(());
        }
        let tiles = n.div_ceil(TILE);
        let mut sums = self.alloc::<u64>(tiles)?;
        let mut flags = self.alloc::<u8>(tiles)?;
        let n64 = n as u64;
        launch!(self, "segscan_tiles"<W>, tiles tiles;
            &x.s, &heads.s, &n64, &mut sums.s, &mut flags.s);
        let t64 = tiles as u64;
        launch!(self, "segscan_carries", tiles 1; &mut sums.s, &flags.s, &t64);
        launch!(self, "segscan_apply"<W>, tiles tiles; &mut x.s, &heads.s, &n64, &sums.s);
        Ok(())
    }

    fn compact<T: Elem>(&self, x: &DevBuf<T>, keep: &DevBuf<u8>) -> Result<DevBuf<T>> {
        assert_eq!(x.len, keep.len, "compact: lengths differ");
        let offsets = self.keep_offsets(keep)?;
        let total = self.total(&offsets)?;
        let mut out = self.alloc::<T>(total as usize)?;
        if total > 0 {
            let n = x.len as u64;
            launch!(self, "compact"<T>, tiles x.len.div_ceil(TILE);
                &x.s, &keep.s, &n, &offsets.s, &mut out.s);
        }
        Ok(out)
    }

    fn gather<T: Elem, I: Word>(&self, src: &DevBuf<T>, idx: &DevBuf<I>) -> Result<DevBuf<T>> {
        let mut out = self.alloc::<T>(idx.len)?;
        let m = idx.len as u64;
        launch!(self, "gather"<T, I>, over idx.len; &src.s, &idx.s, &m, &mut out.s);
        Ok(out)
    }

    fn scatter<T: Elem, I: Word>(
        &self,
        src: &DevBuf<T>,
        idx: &DevBuf<I>,
        dst: &mut DevBuf<T>,
    ) -> Result<()> {
        let (m, dn) = (idx.len as u64, dst.len as u64);
        launch!(self, "scatter"<T, I>, over idx.len; &src.s, &idx.s, &m, &mut dst.s, &dn);
        Ok(())
    }

    fn head_flags<K: Word>(&self, keys: &DevBuf<K>, or: Option<&DevBuf<u8>>) -> Result<DevBuf<u8>> {
        let mut out = self.alloc::<u8>(keys.len)?;
        let m = keys.len as u64;
        let null = 0u64;
        match or {
            Some(o) => launch!(self, "head_flags"<K>, over keys.len; &keys.s, &o.s, &m, &mut out.s),
            None => launch!(self, "head_flags"<K>, over keys.len; &keys.s, &null, &m, &mut out.s),
        }
        Ok(out)
    }

    fn segmented_sort<K: Word, V: Elem>(
        &self,
        heads: &DevBuf<u8>,
        keys: &mut DevBuf<K>,
        vals: &mut DevBuf<V>,
        _block: usize,
    ) -> Result<SegSortReport> {
        let m = keys.len;
        if m < 2 {
            return Ok(SegSortReport::default());
        }
        // Segment number of every element (inclusive scan of the heads).
        let mut seg: DevBuf<u64> = self.widen(heads)?;
        // The number of segments sets the second sort's passes: a copy.
        let segments = self.total(&self.scan(&mut seg.s, m, true)?)?;
        let mut perm: DevBuf<u64> = self.iota(m, Iota::From(0))?;
        let mut k = self.copy(keys)?;
        self.radix(&mut k, &mut perm, K::BITS)?;
        drop(k);
        let mut s = self.gather(&seg, &perm)?;
        drop(seg);
        self.radix(&mut s, &mut perm, bits_for(segments))?;
        drop(s);
        *keys = self.gather(keys, &perm)?;
        *vals = self.gather(vals, &perm)?;
        Ok(SegSortReport::default())
    }

    fn merge<W: Word>(
        &self,
        a: &DevBuf<W>,
        b: &DevBuf<W>,
        order: &Order<'_, Self, W>,
    ) -> Result<DevBuf<W>> {
        let total = a.len + b.len;
        let mut out = self.alloc::<W>(total)?;
        if total == 0 {
            return Ok(out);
        }
        // merge_path is not grid-stride: one thread per CHUNK outputs, all of them.
        let cfg = LaunchConfig {
            grid_dim: (
                total.div_ceil(CHUNK).div_ceil(THREADS as usize) as u32,
                1,
                1,
            ),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let (na, nb) = (a.len as u64, b.len as u64);
        match order {
            Order::Ascending => {
                launch!(self, "merge_asc"<W>, with cfg; &a.s, &na, &b.s, &nb, &mut out.s);
            }
            Order::Cover { text, n, sample } => {
                launch!(self, "merge_cover"<W>, with cfg;
                    &a.s, &na, &b.s, &nb, &text.s, n,
                    &sample.v, &sample.size, &sample.rank.s, &sample.index.s, &sample.start.s,
                    &sample.pairs.s, &mut out.s);
            }
            Order::Dc3 {
                text,
                n,
                rank,
                layout,
            } => {
                let (l, n0) = layout_args(*layout);
                let null = 0u64;
                match text {
                    Chars::Packed(p) => launch!(self, "merge_dc3"<W>, with cfg;
                        &a.s, &na, &b.s, &nb, &p.s, &null, n, &rank.s, &l, &n0, &mut out.s),
                    Chars::Symbols(sy) => launch!(self, "merge_dc3"<W>, with cfg;
                        &a.s, &na, &b.s, &nb, &null, &sy.s, n, &rank.s, &l, &n0, &mut out.s),
                }
            }
        }
        Ok(out)
    }

    fn count(&self, flags: &DevBuf<u8>) -> Result<u64> {
        self.total(&self.keep_offsets(flags)?)
    }

    fn iota<W: Word>(&self, n: usize, seq: Iota) -> Result<DevBuf<W>> {
        let mut out = self.alloc::<W>(n)?;
        let m = n as u64;
        match seq {
            Iota::From(start) => launch!(self, "iota_from"<W>, over n; &mut out.s, &m, &start),
            Iota::Mod3NonZero => launch!(self, "iota_mod3"<W>, over n; &mut out.s, &m),
        }
        Ok(out)
    }

    fn fill<W: Word>(&self, n: usize, value: W) -> Result<DevBuf<W>> {
        let mut out = self.alloc::<W>(n)?;
        let (m, v) = (n as u64, value.to_u64());
        launch!(self, "fill"<W>, over n; &mut out.s, &m, &v);
        Ok(out)
    }

    fn pack_text(&self, text: &[u8]) -> Result<DevBuf<u64>> {
        let n = text.len() as u64;
        let words = text.len() / 32 + 2;
        let mut out = self.alloc::<u64>(words)?;
        if !text.is_empty() {
            let t = self.to_device(text)?;
            let w = words as u64;
            launch!(self, "pack_text", with grid(words); &t.s, &n, &w, &mut out.s);
        }
        Ok(out)
    }

    fn text_keys<K: Word, W: Word>(
        &self,
        packed: &DevBuf<u64>,
        n: u64,
        pos: &DevBuf<W>,
        k: u32,
    ) -> Result<DevBuf<K>> {
        let lbits = bits_for(k as u64);
        assert!(
            k >= 1 && 2 * k + lbits <= K::BITS,
            "text_keys: {k} characters do not fit"
        );
        let mut out = self.alloc::<K>(pos.len)?;
        let m = pos.len as u64;
        launch!(self, "text_keys"<K, W>, over pos.len;
            &packed.s, &n, &pos.s, &m, &k, &lbits, &mut out.s);
        Ok(out)
    }

    fn sort_suffixes<W: Word>(
        &self,
        packed: &DevBuf<u64>,
        n: u64,
        pos: &mut DevBuf<W>,
        k: u32,
    ) -> Result<DevBuf<u8>> {
        let mut keys: DevBuf<u64> = self.text_keys(packed, n, pos, k)?;
        self.radix(&mut keys, pos, 2 * k + bits_for(k as u64))?;
        self.head_flags(&keys, None)
    }

    fn text_heads<W: Word>(
        &self,
        packed: &DevBuf<u64>,
        n: u64,
        pos: &DevBuf<W>,
        k: u32,
    ) -> Result<DevBuf<u8>> {
        let lbits = bits_for(k as u64);
        assert!(
            k >= 1 && 2 * k + lbits <= 64,
            "text_heads: {k} characters do not fit a key"
        );
        let mut out = self.alloc::<u8>(pos.len)?;
        let m = pos.len as u64;
        launch!(self, "text_heads"<W>, over pos.len;
            &packed.s, &n, &pos.s, &m, &k, &lbits, &mut out.s);
        Ok(out)
    }

    fn head_index<W: Word>(&self, heads: &DevBuf<u8>, add: u64) -> Result<DevBuf<W>> {
        let (mut out, m) = (self.alloc::<W>(heads.len)?, heads.len as u64);
        launch!(self, "head_index"<W>, over heads.len; &heads.s, &m, &add, &mut out.s);
        Ok(out)
    }

    fn compact_index<W: Word>(&self, keep: &DevBuf<u8>) -> Result<DevBuf<W>> {
        let offsets = self.keep_offsets(keep)?;
        let total = self.total(&offsets)?;
        let mut out = self.alloc::<W>(total as usize)?;
        if total > 0 {
            let n = keep.len as u64;
            launch!(self, "compact_index"<W>, tiles keep.len.div_ceil(TILE);
                &keep.s, &n, &offsets.s, &mut out.s);
        }
        Ok(out)
    }

    fn scatter_slots<W: Word>(
        &self,
        src: &DevBuf<W>,
        pos: &DevBuf<W>,
        layout: RankLayout,
        dst: &mut DevBuf<W>,
    ) -> Result<()> {
        let (l, n0) = layout_args(layout);
        let (m, dn) = (pos.len as u64, dst.len as u64);
        launch!(self, "scatter_slots"<W>, over pos.len;
            &src.s, &pos.s, &m, &l, &n0, &mut dst.s, &dn);
        Ok(())
    }

    fn symbols<W: Word>(&self, packed: &DevBuf<u64>, n: u64) -> Result<DevBuf<W>> {
        let (mut out, m) = (self.alloc::<W>(n as usize)?, n);
        launch!(self, "symbols"<W>, over n as usize; &packed.s, &m, &mut out.s);
        Ok(out)
    }

    fn fetch<W: Word>(
        &self,
        rank: &DevBuf<W>,
        layout: RankLayout,
        pos: &DevBuf<W>,
        h: u64,
        n: u64,
    ) -> Result<DevBuf<W>> {
        let (l, n0) = layout_args(layout);
        let (mut out, m) = (self.alloc::<W>(pos.len)?, pos.len as u64);
        launch!(self, "fetch"<W>, over pos.len; &rank.s, &l, &n0, &pos.s, &m, &h, &n, &mut out.s);
        Ok(out)
    }

    fn triple_keys<K: Word, W: Word>(
        &self,
        s: &DevBuf<W>,
        pos: &DevBuf<W>,
        n: u64,
        bits: u32,
    ) -> Result<DevBuf<K>> {
        assert!(
            bits >= 1 && 3 * bits <= K::BITS,
            "triple_keys: 3 x {bits} bits do not fit the key"
        );
        let m = pos.len as u64;
        let mut out = self.alloc::<K>(pos.len)?;
        launch!(self, "triple_keys"<K, W>, over pos.len; &s.s, &pos.s, &m, &n, &bits, &mut out.s);
        Ok(out)
    }

    fn slots<W: Word>(&self, pos: &DevBuf<W>, layout: RankLayout) -> Result<DevBuf<W>> {
        let (l, n0) = layout_args(layout);
        let (mut out, m) = (self.alloc::<W>(pos.len)?, pos.len as u64);
        launch!(self, "slots"<W>, over pos.len; &pos.s, &m, &l, &n0, &mut out.s);
        Ok(out)
    }

    fn split_positions<W: Word>(&self, slots: &DevBuf<W>, n0: u64) -> Result<DevBuf<W>> {
        let (mut out, m) = (self.alloc::<W>(slots.len)?, slots.len as u64);
        launch!(self, "split_positions"<W>, over slots.len; &slots.s, &m, &n0, &mut out.s);
        Ok(out)
    }

    fn head_values<W: Word>(
        &self,
        heads: &DevBuf<u8>,
        base: &DevBuf<W>,
        add: u64,
    ) -> Result<DevBuf<W>> {
        let (mut out, m) = (self.alloc::<W>(heads.len)?, heads.len as u64);
        launch!(self, "head_values"<W>, over heads.len; &heads.s, &base.s, &m, &add, &mut out.s);
        Ok(out)
    }

    fn add_flags<W: Word>(&self, x: &mut DevBuf<W>, flags: &DevBuf<u8>) -> Result<()> {
        let m = x.len as u64;
        launch!(self, "add_flags"<W>, over x.len; &mut x.s, &flags.s, &m);
        Ok(())
    }

    fn sub_const<W: Word>(&self, x: &mut DevBuf<W>, sub: u64) -> Result<()> {
        let m = x.len as u64;
        launch!(self, "sub_const"<W>, over x.len; &mut x.s, &m, &sub);
        Ok(())
    }

    fn widen<W: Word>(&self, flags: &DevBuf<u8>) -> Result<DevBuf<W>> {
        let (mut out, m) = (self.alloc::<W>(flags.len)?, flags.len as u64);
        launch!(self, "widen"<W>, over flags.len; &flags.s, &m, &mut out.s);
        Ok(out)
    }

    fn unsorted(&self, heads: &DevBuf<u8>) -> Result<DevBuf<u8>> {
        let mut out = self.alloc::<u8>(heads.len)?;
        let m = heads.len as u64;
        launch!(self, "unsorted_flags", over heads.len; &heads.s, &m, &mut out.s);
        Ok(out)
    }

    fn segment_lengths<W: Word>(&self, heads: &DevBuf<u8>) -> Result<DevBuf<W>> {
        let m = heads.len;
        // Segment numbers need heads of exactly 1 (the CPU accepts any
        // nonzero flag): normalise, then scan.
        let wide: DevBuf<W> = self.widen(heads)?;
        let ones = self.in_range(&wide, 1, u64::MAX)?;
        drop(wide);
        let mut ids: DevBuf<W> = self.widen(&ones)?;
        self.scan(&mut ids.s, m, true)?;
        let starts: DevBuf<W> = self.compact_index(heads)?;
        let (mut out, m64) = (self.alloc::<W>(m)?, m as u64);
        let g = starts.len as u64;
        launch!(self, "segment_lengths"<W>, over m; &ids.s, &starts.s, &g, &m64, &mut out.s);
        Ok(out)
    }

    fn in_range<W: Word>(&self, x: &DevBuf<W>, lo: u64, hi: u64) -> Result<DevBuf<u8>> {
        let mut out = self.alloc::<u8>(x.len)?;
        let m = x.len as u64;
        launch!(self, "in_range"<W>, over x.len; &x.s, &m, &lo, &hi, &mut out.s);
        Ok(out)
    }

    fn mod3_is<W: Word>(&self, x: &DevBuf<W>, r: u64) -> Result<DevBuf<u8>> {
        let mut out = self.alloc::<u8>(x.len)?;
        let m = x.len as u64;
        launch!(self, "mod3_is"<W>, over x.len; &x.s, &m, &r, &mut out.s);
        Ok(out)
    }

    fn residues<W: Word>(&self, x: &DevBuf<W>, v: u64) -> Result<DevBuf<u32>> {
        assert!(v.is_power_of_two(), "residues: {v} is not a power of two");
        let mut out = self.alloc::<u32>(x.len)?;
        let m = x.len as u64;
        launch!(self, "residues"<W>, over x.len; &x.s, &m, &v, &mut out.s);
        Ok(out)
    }

    fn cover_ranks<W: Word>(
        &self,
        pos: &DevBuf<W>,
        n: u64,
        sample: &CoverSample<'_, Self>,
    ) -> Result<DevBuf<u32>> {
        let mut out = self.alloc::<u32>(pos.len)?;
        let m = pos.len as u64;
        launch!(self, "cover_ranks"<W>, over pos.len;
            &pos.s, &m, &n,
            &sample.v, &sample.size, &sample.rank.s, &sample.index.s, &sample.start.s,
            &sample.pairs.s, &mut out.s);
        Ok(out)
    }
}
