//! The CUDA context behind the `gpu` feature: probe, device description,
//! and the compiled kernels of `gpu/` loaded as modules.

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaStream, DeviceRepr, LaunchConfig, PinnedHostSlice,
    ValidAsZeroBits,
};

use super::{MIN_DRIVER, Probe, SOURCES, compile, cuda_version, nvrtc_present, nvrtc_version};
use crate::error::{Error, Result};

/// What a device buffer needs of its elements (`sa::steps::Elem` asks it of
/// every element type; nothing without the `gpu` feature, `disabled.rs`).
pub trait DeviceElem: DeviceRepr + ValidAsZeroBits {}
impl<T: DeviceRepr + ValidAsZeroBits> DeviceElem for T {}

/// Driver present (dlopen only), then NVRTC, then a device.
pub fn probe() -> Probe {
    // SAFETY: only tries to dlopen the library.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Probe::NoDriver;
    }
    if let Some(v) = driver_version()
        && v < MIN_DRIVER
    {
        return Probe::OldDriver(v);
    }
    if !nvrtc_present() {
        return Probe::NoNvrtc;
    }
    match CudaContext::device_count() {
        Ok(0) => Probe::NoDevice("the driver reports 0 devices".into()),
        Ok(n) => Probe::Ready {
            devices: n as usize,
        },
        Err(e) => Probe::NoDevice(e.to_string()),
    }
}

/// The driver's CUDA version (1000 * major + 10 * minor), once [`probe`]
/// found the library: `cuDriverGetVersion` exists in every driver and needs
/// no `cuInit`.
pub fn driver_version() -> Option<i32> {
    let mut v = 0;
    // SAFETY: the driver library loads (probe's dlopen); v is a valid pointer.
    (unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }
        == cudarc::driver::sys::CUresult::CUDA_SUCCESS)
        .then_some(v)
}

/// Driver version and each device, for `gpu-info`.
pub fn describe(p: &Probe, out: &mut String) {
    if matches!(p, Probe::NoDriver) {
        return;
    }
    if let Some(v) = driver_version() {
        let _ = writeln!(out, "driver: {}", cuda_version(v));
    }
    let Probe::Ready { devices } = p else { return };
    for d in 0..*devices {
        match CudaContext::new(d) {
            Ok(ctx) => {
                let name = ctx.name().unwrap_or_else(|e| format!("? ({e})"));
                let mem = ctx.total_mem().unwrap_or(0);
                let sms = ctx
                    .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                    .unwrap_or(0);
                let (ma, mi) = compute_capability(&ctx);
                // Where the backend's buffers come from, set as Gpu::open
                // sets it.
                let pool = match (ctx.has_async_alloc(), keep_freed_memory(&ctx)) {
                    (true, true) => "stream-ordered pool, freed memory kept",
                    (true, false) => "stream-ordered pool, freed memory released",
                    (false, _) => "cuMemAlloc",
                };
                let _ = writeln!(
                    out,
                    "device {d}: {name}, {:.1} GiB, {sms} SMs, compute capability {ma}.{mi}, buffers: {pool}",
                    mem as f64 / (1u64 << 30) as f64
                );
            }
            Err(e) => {
                let _ = writeln!(out, "device {d}: cannot open: {e}");
            }
        }
    }
}

fn compute_capability(ctx: &Arc<CudaContext>) -> (i32, i32) {
    let ma = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        .unwrap_or(0);
    let mi = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        .unwrap_or(0);
    (ma, mi)
}

/// The architecture names NVRTC takes, by compute capability.
fn arch_name(ma: i32, mi: i32) -> &'static str {
    match (ma, mi) {
        (7, 5) => "sm_75",
        (8, 0) => "sm_80",
        (8, 6) => "sm_86",
        (8, 9) => "sm_89",
        (9, 0) => "sm_90",
        (10, 0) => "sm_100",
        (12, 0) => "sm_120",
        // Newer or odd devices: PTX for the oldest target the driver JITs up.
        _ => "compute_75",
    }
}

/// Threads per block of every kernel (`THREADS` in gpu/prelude.cu).
pub const THREADS: u32 = 256;

/// A grid-stride launch over `n` elements (gpu/prelude.cu `GRID_STRIDE`):
/// enough blocks for one element a thread, at most 2^18.
pub fn grid(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(THREADS as usize).clamp(1, 1 << 18) as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Makes the device's default memory pool keep the memory of freed
/// buffers. cudarc allocates with `cuMemAllocAsync` from that pool where the
/// driver supports it, and by default the pool hands unused memory back to
/// the driver at every synchronization (release threshold 0): each round of
/// an algorithm, which syncs for a length, would then map its buffers
/// afresh. With the threshold at its maximum, a build reuses the memory of
/// its first round's buffers (its storage plan, `sa::gpu_bytes_per_base`)
/// for the rest, as the CUDA programming guide advises for stream-ordered
/// allocation. Whether the pool now keeps it (false without async
/// allocation, or if the driver refuses).
fn keep_freed_memory(ctx: &CudaContext) -> bool {
    use cudarc::driver::{result, sys};
    if !ctx.has_async_alloc() {
        return false;
    }
    let mut threshold: u64 = u64::MAX;
    // SAFETY: the device is the context's own (cu_device of a live
    // context), so its default pool is valid; RELEASE_THRESHOLD takes a
    // cuuint64_t, and `threshold` is a u64 that lives through the call.
    unsafe {
        result::device::get_default_mem_pool(ctx.cu_device()).is_ok_and(|pool| {
            result::mem_pool::set_attribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut threshold as *mut u64).cast(),
            )
            .is_ok()
        })
    }
}

/// A device with every kernel of `gpu/` loaded.
pub struct Gpu {
    /// The context.
    pub ctx: Arc<CudaContext>,
    /// The stream every step runs on (in order).
    pub stream: Arc<CudaStream>,
    funcs: HashMap<String, CudaFunction>,
    /// Architecture the kernels were compiled for.
    pub arch: &'static str,
}

fn driver_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Gpu(format!("{what}: {e}"))
}

/// Compiles `module` for `arch` (through the disk cache when `use_cache`)
/// and loads it into `ctx`, as machine code where NVRTC makes it for that
/// architecture, else as PTX; also returns its kernels' names (from the
/// PTX).
fn load(
    ctx: &Arc<CudaContext>,
    module: &'static str,
    src: &str,
    arch: &'static str,
    use_cache: bool,
) -> Result<(Arc<cudarc::driver::CudaModule>, Vec<String>)> {
    let ptx = compile(module, src, arch, use_cache)
        .result
        .map_err(|log| Error::Gpu(format!("gpu/{module}.cu does not compile: {log}")))?;
    let names: Vec<String> = ptx
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.split(".entry ").nth(1)?;
            Some(rest.trim_end_matches('(').trim().to_string())
        })
        .collect();
    // Machine code first (no JIT, and an NVRTC newer than the driver works);
    // the PTX when there is none or it does not load.
    if let Ok(cubin) = super::compile_cubin(module, src, arch, use_cache)
        && let Ok(m) = ctx.load_module(cudarc::nvrtc::Ptx::from_binary(cubin))
    {
        return Ok((m, names));
    }
    let m = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(ptx))
        .map_err(|e| {
            // PTX from an NVRTC newer than the driver is the likely cause.
            let nvrtc = nvrtc_version().map_or("?".into(), |(a, b)| format!("{a}.{b}"));
            let driver = driver_version().map_or("?".into(), cuda_version);
            driver_err(
                &format!(
                    "cannot load gpu/{module}.cu (PTX of NVRTC {nvrtc}, driver {driver}: \
                     the driver must be as new as NVRTC)"
                ),
                e,
            )
        })?;
    Ok((m, names))
}

impl Gpu {
    /// Opens device `ordinal` (after [`probe`] said Ready) and loads every
    /// kernel module, compiling (or taking from the cache) for its
    /// architecture.
    pub fn open(ordinal: usize) -> Result<Self> {
        let ctx = CudaContext::new(ordinal).map_err(|e| driver_err("cannot open the device", e))?;
        let (ma, mi) = compute_capability(&ctx);
        let arch = arch_name(ma, mi);
        let stream = ctx.default_stream();
        let mut funcs = HashMap::new();
        for &(module, src) in SOURCES {
            let (m, names) = match load(&ctx, module, src, arch, true) {
                // A cached file that does not load (cut short, or damaged)
                // is compiled afresh once.
                Err(_) if compile(module, src, arch, true).cached => {
                    load(&ctx, module, src, arch, false)?
                }
                r => r?,
            };
            for name in names {
                let f = m
                    .load_function(&name)
                    .map_err(|e| driver_err(&format!("kernel {name}"), e))?;
                funcs.insert(name, f);
            }
        }
        // Only speed depends on it: a driver that refuses keeps its default.
        let _kept = keep_freed_memory(&ctx);
        Ok(Gpu {
            ctx,
            stream,
            funcs,
            arch,
        })
    }

    /// The kernel named `name`.
    pub fn func(&self, name: &str) -> Result<&CudaFunction> {
        self.funcs
            .get(name)
            .ok_or_else(|| Error::Gpu(format!("no kernel named {name} in gpu/")))
    }

    /// Free and total device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        self.ctx
            .mem_get_info()
            .map_err(|e| driver_err("cannot read device memory", e))
    }
}

// Host-side machinery of the device runs (streams, page-locked buffers,
// timing), shared by the rooms that launch kernels.

/// Page-locked host memory of `len` elements (at least one), zeroed:
/// copies from and to it run asynchronously on a stream.
/// `write_combined` for buffers the host only writes (faster over PCIe,
/// slow to read back).
pub fn pinned<T: DeviceRepr + ValidAsZeroBits>(
    ctx: &Arc<CudaContext>,
    len: usize,
    write_combined: bool,
) -> Result<PinnedHostSlice<T>> {
    let len = len.max(1);
    let flags = if write_combined {
        cudarc::driver::sys::CU_MEMHOSTALLOC_WRITECOMBINED
    } else {
        0
    };
    // SAFETY: the allocation is uninitialised; it is zeroed below, before
    // any slice of it exists (T is valid as zero bits).
    let mut p = unsafe { ctx.alloc_pinned_with_flags::<T>(len, flags) }
        .map_err(|e| driver_err("pinned host memory", e))?;
    let ptr = p
        .as_mut_ptr()
        .map_err(|e| driver_err("pinned host memory", e))?;
    // SAFETY: ptr points to `len` elements of T just allocated above.
    unsafe { std::ptr::write_bytes(ptr, 0, len) };
    Ok(p)
}

/// An event that records time (cudarc's default does not).
pub fn timing_event(gpu: &Gpu) -> Result<CudaEvent> {
    gpu.ctx
        .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(|e| driver_err("new event", e))
}
