//! The CUDA kernels of `gpu/` run without a GPU: `gpu/emu/shim.h` emulates
//! the CUDA built-ins they use on the CPU (each CUDA thread a fiber), and
//! `gpu/emu/kernels_test.cpp` ports the host side of `src/sa/cuda/` and
//! checks every step against a sequential reference at sizes around the
//! kernels' tiles. This test compiles both with `g++` together with the
//! kernel sources exactly as NVRTC gets them (`gpu::PRELUDE` + each module
//! of `gpu::SOURCES`, after an `#include "shim.h"` line), runs the driver in
//! two shards at once, and checks that every kernel of `gpu/` was launched.
//! On a failure the build directory is kept and named, so that the driver
//! can be rerun there by group (`kernels_test radix`).
//!
//! Without `g++` (or off Linux: the emulation uses ucontext) the test prints
//! that it was skipped, unless `CI` is set: then it fails.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::Command;

use fmalign::gpu;

const SHIM_H: &str = include_str!("../gpu/emu/shim.h");
const SHIM_CPP: &str = include_str!("../gpu/emu/shim.cpp");
const DRIVER: &str = include_str!("../gpu/emu/kernels_test.cpp");

/// Driver processes run at once (CI has 2 cores).
const SHARDS: usize = 2;

/// `-fsanitize=bounds,shift`: an index past a fixed-size array (shared
/// memory, per-thread arrays) or a shift by the word size or more stops the
/// run, instead of doing on the CPU what the GPU would not.
const CXXFLAGS: &[&str] = &[
    "-std=c++20",
    "-O1",
    "-pthread",
    "-fsanitize=bounds,shift",
    "-fno-sanitize-recover=all",
];

/// Prints a notice past libtest's output capture (which only takes
/// `print!`/`eprint!`), so that it is seen even when the test passes.
fn notice(msg: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{msg}");
}

/// Skips the test with a notice, or fails it when `CI` is set.
fn skip_or_fail(why: &str) {
    if std::env::var_os("CI").is_some() {
        panic!("{why}, but CI is set: the kernel emulation test must run");
    }
    notice(&format!("SKIPPED gpu_emulation: {why}"));
}

/// The text of `<module>.cu.inc`: what NVRTC compiles (src/gpu/mod.rs
/// `full_source`), after the shim, with `#line` marks naming the files.
fn module_source(module: &str, src: &str) -> String {
    format!(
        "#include \"shim.h\"\n#line 1 \"gpu/prelude.cu\"\n{}\n#line 1 \"gpu/{module}.cu\"\n{src}",
        gpu::PRELUDE
    )
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `extern "C" __global__` kernels a module defines, from its
/// preprocessed source (most names are made by macros).
fn defined_kernels(dir: &Path, module: &str, src: &str) -> Vec<String> {
    let file = dir.join(format!("{module}.names.cpp"));
    std::fs::write(&file, format!("{}\n{src}", gpu::PRELUDE)).unwrap();
    let out = Command::new("g++")
        .args(["-std=c++20", "-E", "-P"])
        .arg(&file)
        .output()
        .expect("run g++ -E");
    assert!(
        out.status.success(),
        "g++ -E gpu/{module}.cu failed:\n{}",
        text(&out.stderr)
    );
    let pre = text(&out.stdout);
    let mut names = Vec::new();
    for piece in pre.split("__global__").skip(1) {
        let rest = piece.trim_start();
        let Some(rest) = rest.strip_prefix("void") else {
            continue;
        };
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            names.push(name);
        }
    }
    names
}

#[test]
fn kernels_match_sequential_references_in_cpu_emulation() {
    if !cfg!(target_os = "linux") {
        skip_or_fail("the kernel emulation (ucontext fibers) is built on Linux only");
        return;
    }
    if Command::new("g++").arg("--version").output().is_err() {
        skip_or_fail("g++ not found");
        return;
    }
    let started = std::time::Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("shim.h"), SHIM_H).unwrap();
    std::fs::write(dir.join("shim.cpp"), SHIM_CPP).unwrap();
    std::fs::write(dir.join("kernels_test.cpp"), DRIVER).unwrap();
    for &(module, src) in gpu::SOURCES {
        std::fs::write(
            dir.join(format!("{module}.cu.inc")),
            module_source(module, src),
        )
        .unwrap();
    }

    let exe = dir.join("kernels_test");
    let out = Command::new("g++")
        .args(CXXFLAGS)
        .arg("-I")
        .arg(dir)
        .arg("-o")
        .arg(&exe)
        .arg(dir.join("shim.cpp"))
        .arg(dir.join("kernels_test.cpp"))
        .output()
        .expect("run g++");
    if !out.status.success() {
        let kept = tmp.keep();
        panic!(
            "the kernel emulation does not compile (sources kept in {}):\n{}",
            kept.display(),
            text(&out.stderr)
        );
    }
    let compiled = started.elapsed();

    let runs: Vec<_> = (0..SHARDS)
        .map(|i| {
            let exe = exe.clone();
            std::thread::spawn(move || {
                Command::new(&exe)
                    .arg(format!("shard={i}/{SHARDS}"))
                    .output()
                    .expect("run kernels_test")
            })
        })
        .collect();
    let mut failed = Vec::new();
    let mut summaries = Vec::new();
    let mut launched = BTreeSet::new();
    let mut checks = 0u64;
    for (i, run) in runs.into_iter().enumerate() {
        let out = run.join().expect("shard thread");
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        for line in stdout.lines() {
            if let Some(names) = line.strip_prefix("kernels:") {
                launched.extend(names.split_whitespace().map(str::to_string));
            } else if line.starts_with("kernels_test:") {
                summaries.push(format!("shard {i}/{SHARDS}: {line}"));
                if let Some(n) = line
                    .split(": ")
                    .nth(2)
                    .and_then(|s| s.split(' ').next())
                    .and_then(|s| s.parse::<u64>().ok())
                {
                    checks += n;
                }
            }
        }
        if !out.status.success() {
            failed.push(format!(
                "shard {i}/{SHARDS} ({}):\n{stdout}{stderr}",
                out.status
            ));
        }
    }
    if !failed.is_empty() {
        let kept = tmp.keep();
        panic!(
            "kernel emulation failed (rerun: {}/kernels_test [group...]):\n{}",
            kept.display(),
            failed.join("\n")
        );
    }

    let mut missing = Vec::new();
    for &(module, src) in gpu::SOURCES {
        for k in defined_kernels(dir, module, src) {
            if !launched.contains(&k) {
                missing.push(format!("{k} (gpu/{module}.cu)"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "kernels never launched by gpu/emu/kernels_test.cpp (add a check there): {}",
        missing.join(", ")
    );
    notice(&format!(
        "gpu_emulation: {checks} checks passed, {} kernels launched; compile {:.1} s, total {:.1} s\n  {}",
        launched.len(),
        compiled.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        summaries.join("\n  ")
    ));
}
