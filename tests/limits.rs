//! `fmalign index --max-memory`: refused up front with the figures below
//! the floor of a build in parts; between the floor and the whole-text
//! estimate, built in parts under the limit; when the whole-text build fits,
//! its peak RSS stays under the estimate
//! (measured with `getrusage(RUSAGE_CHILDREN)`: this file holds one test, so
//! the only children are its own runs, one at a time).

mod common;

use std::process::Command;

use common::{Rng, bin};

/// Peak RSS in bytes of the largest child waited for so far.
fn children_max_rss() -> u64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    let r = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    assert_eq!(r, 0);
    ru.ru_maxrss as u64 * 1024
}

#[test]
fn max_memory_refuses_up_front_and_builds_stay_under_the_estimate() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng::new(4);
    let n = 6_000_000u64;
    let mut fasta = b">r\n".to_vec();
    for line in rng.bases(n as usize).chunks(100) {
        fasta.extend_from_slice(line);
        fasta.push(b'\n');
    }
    std::fs::write(d.join("ref.fa"), &fasta).unwrap();
    let run = |args: &[&str]| {
        Command::new(bin())
            .args(args)
            .current_dir(d)
            .output()
            .unwrap()
    };
    // Too little: refused before the suffix array, with the estimate; no file.
    let o = run(&[
        "index",
        "-q",
        "--max-memory",
        "20M",
        "-p",
        "x.fmi",
        "ref.fa",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains("6000000 unambiguous bases")
            && stderr.contains("needs at least")
            && stderr.contains("--max-memory"),
        "{stderr}"
    );
    assert!(!d.join("x.fmi").exists());
    // Between the floor and the whole-text estimate: built in parts, and
    // the peak stays under the limit (first: the figure is the largest child
    // so far).
    let o = run(&[
        "index",
        "-t",
        "2",
        "--max-memory",
        "50M",
        "-p",
        "x.fmi",
        "ref.fa",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("built in parts"), "{stderr}");
    let peak = children_max_rss();
    assert!(
        peak <= 50 << 20,
        "in parts: peak RSS {peak} above the limit"
    );
    std::fs::remove_file(d.join("x.fmi")).unwrap();
    // Bad sizes are usage errors.
    for bad in ["5X", "G", "-3M", "many"] {
        let o = run(&["index", "--max-memory", bad, "ref.fa"]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
    }
    // Enough: the build's peak stays under the estimate, for each algorithm.
    // (ascending peaks: the figure is the largest child so far)
    for sa in ["libsais", "ls", "hybrid"] {
        let o = run(&[
            "index",
            "-q",
            "-t",
            "2",
            "--sa",
            sa,
            "--max-memory",
            "4G",
            "-p",
            "x.fmi",
            "ref.fa",
        ]);
        assert!(
            o.status.success(),
            "{sa}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let peak = children_max_rss();
        let want = fmalign::index::memory_estimate(n, false, sa.parse_algorithm());
        assert!(
            peak <= want,
            "--sa {sa}: peak RSS {peak} above the estimate {want}"
        );
        std::fs::remove_file(d.join("x.fmi")).unwrap();
    }
}

trait ParseAlgorithm {
    fn parse_algorithm(&self) -> fmalign::sa::SaAlgorithm;
}

impl ParseAlgorithm for str {
    fn parse_algorithm(&self) -> fmalign::sa::SaAlgorithm {
        use fmalign::sa::SaAlgorithm as A;
        match self {
            "libsais" => A::Libsais,
            "hybrid" => A::Hybrid,
            "skew" => A::Skew,
            _ => A::Ls,
        }
    }
}
