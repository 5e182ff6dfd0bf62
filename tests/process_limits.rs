//! A process memory limit (`ulimit -v`, what batch schedulers set as
//! h_vmem or vmem): the default `--max-memory` fits within it, so the index
//! is built (in parts) with the bytes of an unlimited build; a build forced
//! past it ends with a clean error (exit 1, a message that says what to
//! raise, no file left), never an abort.

#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{Rng, bin, list_dir};

/// `fmalign ARGS` in `d` under `ulimit -v KB` (no limit for `None`).
fn run_limited(d: &Path, kb: Option<u64>, args: &[&str]) -> Output {
    let limit = kb.map_or("unlimited".to_owned(), |k| k.to_string());
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {limit} && exec \"$0\" \"$@\""))
        .arg(bin())
        .args(args)
        .current_dir(d)
        .output()
        .unwrap()
}

#[test]
fn a_process_memory_limit_is_respected() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(common::test_data("lambda_virus.fa"), d.join("tiny.fa")).unwrap();
    // The address space the binary needs to build a tiny index at all
    // (its own mapping, threads, libraries): the least limit, by halves.
    let tiny = |kb| {
        run_limited(d, Some(kb), &["index", "-q", "-p", "t.fmi", "tiny.fa"])
            .status
            .success()
    };
    let (mut lo, mut hi) = (1u64 << 10, 4u64 << 20);
    assert!(tiny(hi), "the tiny build fails under {hi} KB");
    while hi - lo > 2048 {
        let mid = (lo + hi) / 2;
        if tiny(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    // 100 MiB more than that: a 30 Mbp genome's whole-text build (about
    // 6 bytes a base) does not fit, a build in parts does.
    let limit = hi + (100 << 10);
    let n = 30_000_000;
    let mut fasta = b">r\n".to_vec();
    for line in Rng::new(39).bases(n).chunks(100) {
        fasta.extend_from_slice(line);
        fasta.push(b'\n');
    }
    std::fs::write(d.join("ref.fa"), &fasta).unwrap();
    let o = run_limited(d, None, &["index", "-q", "-p", "free.fmi", "ref.fa"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run_limited(d, Some(limit), &["index", "-p", "held.fmi", "ref.fa"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "under {limit} KB: {err}");
    assert!(err.contains("built in parts"), "{err}");
    assert!(
        std::fs::read(d.join("held.fmi")).unwrap() == std::fs::read(d.join("free.fmi")).unwrap(),
        "the index built under the limit differs"
    );
    // Forced past the limit: an error that says what to raise, exit 1, no
    // index and no temporary file.
    let before = list_dir(d);
    let o = run_limited(
        d,
        Some(limit),
        &["index", "--max-memory", "100G", "-p", "x.fmi", "ref.fa"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("out of memory") && err.contains("ulimit -v") && err.contains("--max-memory"),
        "{err}"
    );
    assert_eq!(list_dir(d), before, "a file was left");
}
