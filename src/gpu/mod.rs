//! The GPU runtime: probing for CUDA, compiling the kernels of `gpu/` with
//! NVRTC, and `fmalign gpu-info`.
//!
//! cudarc loads `libcuda` and `libnvrtc` at run time and panics when one is
//! missing, so nothing here calls cudarc before [`probe`] has found both
//! libraries with a plain `dlopen`. With no CUDA at all, or a build without
//! the `gpu` feature, every entry point returns [`Probe`] saying why, and the
//! callers run on the CPU.
//!
//! Kernels are plain `.cu` files in `gpu/`, embedded with `include_str!`.
//! Each is compiled with [`PRELUDE`] prepended (they include no headers: the
//! NVRTC of PyPI ships none), once per process and architecture, and kept in a
//! disk cache (`$FMALIGN_CACHE`, else `$XDG_CACHE_HOME/fmalign`, else
//! `~/.cache/fmalign`) under a name made of the source hash and architecture.

// Without the `gpu` feature, a stand-in with no values (disabled.rs).
#[cfg_attr(not(feature = "gpu"), path = "disabled.rs")]
pub mod context;

/// Prepended to every kernel source.
pub const PRELUDE: &str = include_str!("../../gpu/prelude.cu");

/// The kernel sources of `gpu/`: (module name, source without the prelude).
pub const SOURCES: &[(&str, &str)] = &[
    ("maps", include_str!("../../gpu/maps.cu")),
    ("scan", include_str!("../../gpu/scan.cu")),
    ("radix", include_str!("../../gpu/radix.cu")),
    ("merge", include_str!("../../gpu/merge.cu")),
    ("fm", include_str!("../../gpu/fm.cu")),
    ("map", include_str!("../../gpu/map.cu")),
];

/// The full source NVRTC compiles for `module`.
pub fn full_source(src: &str) -> String {
    format!("{PRELUDE}\n#line 1\n{src}")
}

/// What the CUDA probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// Built without the `gpu` feature.
    NotBuilt,
    /// The driver library (`libcuda`) cannot be loaded: no NVIDIA driver.
    NoDriver,
    /// The driver is there but NVRTC (`libnvrtc`) cannot be loaded.
    NoNvrtc,
    /// The driver is older than [`MIN_DRIVER`] (its version, as
    /// `cuDriverGetVersion` gives it: 1000 * major + 10 * minor).
    OldDriver(i32),
    /// The driver loaded but reports no device (or failed to initialise).
    NoDevice(String),
    /// Devices present.
    Ready {
        /// Number of devices.
        devices: usize,
    },
}

impl Probe {
    /// A one-line reason the GPU cannot be used, or `None` when it can.
    pub fn why_not(&self) -> Option<String> {
        match self {
            Probe::NotBuilt => Some("built without the gpu feature".into()),
            Probe::NoDriver => Some("no CUDA driver (libcuda not found)".into()),
            Probe::NoNvrtc => Some(
                "CUDA driver found but not NVRTC (libnvrtc.so.13 not found; put its directory in LD_LIBRARY_PATH)"
                    .into(),
            ),
            Probe::OldDriver(v) => Some(format!(
                "the CUDA driver is {}, older than the {} fmalign's GPU code is built for (update the NVIDIA driver)",
                cuda_version(*v),
                cuda_version(MIN_DRIVER)
            )),
            Probe::NoDevice(e) => Some(format!("no usable CUDA device ({e})")),
            Probe::Ready { .. } => None,
        }
    }
}

/// The oldest driver the GPU code runs on: cudarc is built for CUDA 13.0's
/// driver API (feature `cuda-13000`; on an older driver some of its calls
/// would panic on a missing symbol), and NVRTC 13's PTX needs a 13.0 driver
/// to JIT it.
pub const MIN_DRIVER: i32 = 13000;

/// "CUDA 13.0" from a driver or runtime version number (1000 * major + 10 *
/// minor).
pub fn cuda_version(v: i32) -> String {
    format!("CUDA {}.{}", v / 1000, (v % 1000) / 10)
}

/// Whether this build has the `gpu` feature (CUDA code compiled in).
pub const BUILT: bool = cfg!(feature = "gpu");

/// Whether NVRTC can be loaded (without touching the driver).
pub fn nvrtc_present() -> bool {
    #[cfg(feature = "gpu")]
    {
        // SAFETY: only tries to dlopen the library.
        unsafe { cudarc::nvrtc::sys::is_culib_present() }
    }
    #[cfg(not(feature = "gpu"))]
    {
        false
    }
}

/// Looks for a driver, NVRTC and a device, in that order, calling cudarc
/// only once the libraries are known to load.
pub fn probe() -> Probe {
    #[cfg(feature = "gpu")]
    {
        context::probe()
    }
    #[cfg(not(feature = "gpu"))]
    {
        Probe::NotBuilt
    }
}

/// NVRTC's version, when it loads.
pub fn nvrtc_version() -> Option<(i32, i32)> {
    #[cfg(feature = "gpu")]
    {
        if !nvrtc_present() {
            return None;
        }
        let (mut major, mut minor) = (0, 0);
        // SAFETY: NVRTC is loaded (checked above); the pointers are valid.
        let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
        (r == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS).then_some((major, minor))
    }
    #[cfg(not(feature = "gpu"))]
    {
        None
    }
}

/// The result of compiling one module.
#[derive(Debug)]
pub struct Compiled {
    /// Module name.
    pub module: &'static str,
    /// PTX text, or NVRTC's log on failure.
    pub result: std::result::Result<String, String>,
    /// Whether it came from the disk cache.
    pub cached: bool,
}

/// Where compiled kernels are cached.
pub fn cache_dir() -> Option<std::path::PathBuf> {
    if let Some(d) = std::env::var_os("FMALIGN_CACHE") {
        return Some(d.into());
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(std::path::PathBuf::from(d).join("fmalign"));
    }
    std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache").join("fmalign"))
}

/// The architectures `gpu-info --arch` compiles for (NVRTC 13.0's range).
pub const ARCHS: &[&str] = &[
    "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120",
];

/// The cache file name of `module`'s PTX for `arch`: the NVRTC that made it
/// is part of the name, since PTX from a newer NVRTC than the driver's CUDA
/// does not load (and a cache written by one NVRTC must not be taken for
/// another's).
fn cache_key(module: &str, arch: &str, nvrtc: Option<(i32, i32)>, full: &str) -> String {
    let (ma, mi) = nvrtc.unwrap_or((0, 0));
    format!(
        "{module}-{arch}-nvrtc{ma}.{mi}-{:016x}.ptx",
        crate::fnv1a(full.as_bytes())
    )
}

/// Distinguishes the temporary cache files of threads (and opens) of one
/// process that compile the same module at once.
static TMP_SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Compiles one module for `arch` (e.g. `sm_90`) with NVRTC, through the
/// disk cache. NVRTC must be present ([`nvrtc_present`]).
pub fn compile(module: &'static str, src: &str, arch: &'static str, use_cache: bool) -> Compiled {
    let full = full_source(src);
    let key = cache_key(module, arch, nvrtc_version(), &full);
    let path = cache_dir().map(|d| d.join(&key));
    if let Some(ptx) = path
        .as_ref()
        .filter(|_| use_cache)
        .and_then(|p| std::fs::read_to_string(p).ok())
    {
        return Compiled {
            module,
            result: Ok(ptx),
            cached: true,
        };
    }
    let result = compile_uncached(module, &full, arch);
    if let (Ok(ptx), Some(p)) = (&result, &path) {
        cache_write(p, ptx.as_bytes());
    }
    Compiled {
        module,
        result,
        cached: false,
    }
}

/// Writes a compiled module to the disk cache. A cache that cannot be
/// written is only slower: errors are ignored, and the file is written
/// through a temporary name so that a reader never sees half of it.
fn cache_write(p: &std::path::Path, bytes: &[u8]) {
    if let Some(dir) = p.parent() {
        let _ = std::fs::create_dir_all(dir);
        let tmp = p.with_extension(format!(
            "tmp{}-{}",
            std::process::id(),
            TMP_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        if std::fs::write(&tmp, bytes).is_ok() {
            let _ = std::fs::rename(&tmp, p);
        }
    }
}

/// Machine code (CUBIN) of one module for a real architecture `arch`
/// (`sm_XX`), through the disk cache (`.cubin` beside the PTX). The device
/// loads it without its PTX JIT, so an NVRTC newer than the driver works
/// too: CUDA's minor-version compatibility covers machine code, not PTX (a
/// 13.0 driver refuses the PTX of NVRTC 13.1). An error for a virtual
/// architecture (`compute_XX`), or when NVRTC cannot make one.
pub fn compile_cubin(
    module: &'static str,
    src: &str,
    arch: &'static str,
    use_cache: bool,
) -> std::result::Result<Vec<u8>, String> {
    if !arch.starts_with("sm_") {
        return Err(format!("{arch} is a virtual architecture: PTX only"));
    }
    let full = full_source(src);
    let key = cache_key(module, arch, nvrtc_version(), &full);
    let path = cache_dir().map(|d| d.join(&key).with_extension("cubin"));
    if let Some(cubin) = path
        .as_ref()
        .filter(|_| use_cache)
        .and_then(|p| std::fs::read(p).ok())
        .filter(|c| is_elf(c))
    {
        return Ok(cubin);
    }
    let cubin = compile_cubin_uncached(module, &full, arch)?;
    if !is_elf(&cubin) {
        return Err(format!(
            "NVRTC's CUBIN of gpu/{module}.cu is not an ELF image"
        ));
    }
    if let Some(p) = &path {
        cache_write(p, &cubin);
    }
    Ok(cubin)
}

/// Whether `b` starts as an ELF file does (a CUBIN is one).
fn is_elf(b: &[u8]) -> bool {
    b.starts_with(b"\x7fELF")
}

#[cfg(feature = "gpu")]
fn compile_cubin_uncached(
    module: &str,
    full: &str,
    arch: &str,
) -> std::result::Result<Vec<u8>, String> {
    use cudarc::nvrtc::{result, sys};
    let err = |what: &str, e: result::NvrtcError| format!("{what}: {e:?}");
    let src = std::ffi::CString::new(full).map_err(|e| format!("gpu/{module}.cu: {e}"))?;
    let name = std::ffi::CString::new(format!("{module}.cu")).expect("no NUL in a module name");
    let prog =
        result::create_program(&src, Some(&name)).map_err(|e| err("nvrtcCreateProgram", e))?;
    let opts = [format!("--gpu-architecture={arch}"), "--std=c++17".into()];
    // SAFETY: `prog` was just created and is destroyed once, below; `src`
    // and `name`, which it may point into, outlive it. The CUBIN buffer
    // holds the size NVRTC reported.
    unsafe {
        let out = result::compile_program(prog, &opts)
            .map_err(|e| {
                let log: Vec<u8> = result::get_program_log(prog)
                    .map(|l| l.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect())
                    .unwrap_or_default();
                let log = String::from_utf8_lossy(&log);
                format!("{}: {log}", err("nvrtcCompileProgram", e))
            })
            .and_then(|()| {
                let mut size = 0usize;
                sys::nvrtcGetCUBINSize(prog, &mut size)
                    .result()
                    .map_err(|e| err("nvrtcGetCUBINSize", e))?;
                let mut cubin = vec![0u8; size];
                sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast())
                    .result()
                    .map_err(|e| err("nvrtcGetCUBIN", e))?;
                Ok(cubin)
            });
        let _ = result::destroy_program(prog);
        out
    }
}

#[cfg(not(feature = "gpu"))]
fn compile_cubin_uncached(_: &str, _: &str, _: &str) -> std::result::Result<Vec<u8>, String> {
    Err("built without the gpu feature".into())
}

#[cfg(feature = "gpu")]
fn compile_uncached(
    module: &str,
    full: &str,
    arch: &'static str,
) -> std::result::Result<String, String> {
    use cudarc::nvrtc::{CompileError, CompileOptions, compile_ptx_with_opts};
    let opts = CompileOptions {
        arch: Some(arch),
        name: Some(format!("{module}.cu")),
        options: vec!["--std=c++17".into()],
        ..Default::default()
    };
    match compile_ptx_with_opts(full, opts) {
        Ok(ptx) => Ok(ptx.to_src()),
        Err(CompileError::CompileError { log, .. }) => Err(log.to_string_lossy().into_owned()),
        Err(e) => Err(format!("{e:?}")),
    }
}

#[cfg(not(feature = "gpu"))]
fn compile_uncached(_: &str, _: &str, _: &'static str) -> std::result::Result<String, String> {
    Err("built without the gpu feature".into())
}

/// Counts the `.entry` kernels of a PTX text.
pub fn ptx_entries(ptx: &str) -> usize {
    ptx.lines().filter(|l| l.contains(".entry ")).count()
}

/// `fmalign gpu-info`: driver, NVRTC, devices; compiles every kernel for
/// `arch`. Returns the report text and whether every module compiled
/// (true when there is nothing to compile with). With `ptx_dir`, each
/// module's PTX is also written there as `MODULE.ptx`, for `ptxas -v`
/// (scripts/check/ptxas.sh: registers, spills, shared memory).
pub fn info(
    arch: &'static str,
    ptx_dir: Option<&std::path::Path>,
) -> crate::error::Result<(String, bool)> {
    use std::fmt::Write;
    let mut out = String::new();
    let p = probe();
    #[cfg(feature = "gpu")]
    context::describe(&p, &mut out);
    if let Some(why) = p.why_not() {
        let _ = writeln!(out, "gpu: none: {why}");
    }
    match nvrtc_version() {
        Some((a, b)) => {
            let _ = writeln!(out, "nvrtc: {a}.{b}");
        }
        None => {
            let _ = writeln!(out, "nvrtc: not found; kernels not compiled");
            if let Some(dir) = ptx_dir {
                return Err(crate::error::Error::Gpu(format!(
                    "no NVRTC: cannot write PTX to {}",
                    dir.display()
                )));
            }
            return Ok((out, true));
        }
    }
    let mut ok = 0;
    let mut kernels = 0;
    let mut failures = String::new();
    for &(module, src) in SOURCES {
        let c = compile(module, src, arch, false);
        match &c.result {
            Ok(ptx) => {
                ok += 1;
                kernels += ptx_entries(ptx);
                if let Some(dir) = ptx_dir {
                    let path = dir.join(format!("{module}.ptx"));
                    std::fs::write(&path, ptx)
                        .map_err(|source| crate::error::Error::Io { path, source })?;
                }
            }
            Err(log) => {
                let _ = writeln!(failures, "failed: gpu/{module}.cu\n{log}");
            }
        }
    }
    let total = SOURCES.len();
    let _ = writeln!(
        out,
        "kernels: {ok} of {total} compiled ({arch}): {kernels} entry points"
    );
    out.push_str(&failures);
    Ok((out, ok == total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_names_part_by_nvrtc_version_source_and_arch() {
        let full = full_source("extern \"C\" __global__ void k() {}");
        let a = cache_key("maps", "sm_90", Some((13, 0)), &full);
        assert!(a.starts_with("maps-sm_90-nvrtc13.0-"), "{a}");
        assert!(a.ends_with(".ptx"), "{a}");
        // Another NVRTC, architecture or source: another file.
        assert_ne!(a, cache_key("maps", "sm_90", Some((13, 2)), &full));
        assert_ne!(a, cache_key("maps", "sm_80", Some((13, 0)), &full));
        assert_ne!(
            a,
            cache_key("maps", "sm_90", Some((13, 0)), &full_source("x"))
        );
        assert_eq!(a, cache_key("maps", "sm_90", Some((13, 0)), &full));
    }

    #[test]
    fn an_old_driver_is_named_with_the_version_needed() {
        assert_eq!(cuda_version(12040), "CUDA 12.4");
        assert_eq!(cuda_version(MIN_DRIVER), "CUDA 13.0");
        let why = Probe::OldDriver(12040).why_not().unwrap();
        assert!(
            why.contains("CUDA 12.4") && why.contains("CUDA 13.0"),
            "{why}"
        );
        assert_eq!(Probe::Ready { devices: 1 }.why_not(), None);
    }
}
