//! `fmalign index` in parts (`--max-part`, `--dcv`, or a `--max-memory`
//! that the whole-text build does not fit): the file is byte for byte the
//! whole-text build's (libsais, an independent construction), for hard
//! texts, many contigs with N runs, gzip, 32- and 64-bit positions, every
//! part size down to one suffix per part, and any thread count; the mapped
//! reads come out the same; an interrupted or failed build leaves no file.

mod common;

use std::path::Path;
use std::process::Command;

use common::{Rng, bin, gzip};

fn index(dir: &Path, fasta: &str, out: &str, extra: &[&str]) {
    let o = Command::new(bin())
        .args(["index", "-q", "-p", out])
        .args(extra)
        .arg(fasta)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "index {extra:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The whole-text index of `fasta` and the ones built in parts with each
/// of `variants` (extra options) are the same bytes.
fn same_bytes(dir: &Path, fasta: &[u8], variants: &[Vec<&str>]) {
    std::fs::write(dir.join("ref.fa"), fasta).unwrap();
    for wide in [false, true] {
        let w: &[&str] = if wide { &["--wide-positions"] } else { &[] };
        index(dir, "ref.fa", "whole.fmi", w);
        let want = std::fs::read(dir.join("whole.fmi")).unwrap();
        for v in variants {
            let args: Vec<&str> = v.iter().chain(w).copied().collect();
            index(dir, "ref.fa", "parts.fmi", &args);
            let got = std::fs::read(dir.join("parts.fmi")).unwrap();
            assert!(
                got == want,
                "{args:?}: {} bytes, whole-text build {} bytes, first difference at {:?}; fasta {}",
                got.len(),
                want.len(),
                got.iter().zip(&want).position(|(a, b)| a != b),
                String::from_utf8_lossy(&fasta[..fasta.len().min(200)])
            );
        }
    }
}

fn fasta(records: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut f = Vec::new();
    for (name, seq) in records {
        f.extend_from_slice(format!(">{name}\n").as_bytes());
        for line in seq.chunks(60) {
            f.extend_from_slice(line);
            f.push(b'\n');
        }
    }
    f
}

fn fibonacci(len: usize) -> Vec<u8> {
    let (mut a, mut b) = (b"A".to_vec(), b"AC".to_vec());
    while b.len() < len {
        let next = [b.clone(), a].concat();
        a = b;
        b = next;
    }
    b.truncate(len);
    b
}

#[test]
fn hard_texts_every_part_size() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(20);
    let unit = rng.bases(7);
    let texts: Vec<(&str, Vec<u8>)> = vec![
        ("random", rng.bases(700)),
        ("all-A", vec![b'A'; 500]),
        ("tandem", unit.iter().copied().cycle().take(600).collect()),
        ("fibonacci", fibonacci(610)),
        ("one base", b"G".to_vec()),
    ];
    for (name, seq) in &texts {
        let f = fasta(&[(name, seq.clone())]);
        let n = seq.len().to_string();
        same_bytes(
            dir.path(),
            &f,
            &[
                vec!["--max-part", "1"],
                vec!["--max-part", "7", "--dcv", "4", "-t", "1"],
                vec!["--max-part", "64", "--dcv", "64", "-t", "3"],
                vec!["--max-part", "200", "--dcv", "8"],
                vec!["--max-part", &n],
                vec!["--dcv", "4096"],
            ],
        );
    }
}

#[test]
fn contigs_with_n_runs_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(21);
    let mut records = Vec::new();
    for k in 0..12 {
        let len = rng.range(1, 3000) as usize;
        let mut s = rng.bases(len);
        // N runs inside, at the ends, and a copy of another contig.
        for _ in 0..rng.below(4) {
            let at = rng.below(s.len() as u64) as usize;
            let len = rng.range(1, 50) as usize;
            for x in s.iter_mut().skip(at).take(len) {
                *x = b'N';
            }
        }
        if k % 3 == 0 {
            s.insert(0, b'N');
            s.extend_from_slice(b"nnnn");
        }
        if k % 4 == 1 {
            s.make_ascii_lowercase();
        }
        records.push((format!("chr{k}"), s));
    }
    let copy = records[2].1.clone();
    records.push(("copy".into(), copy));
    let named: Vec<(&str, Vec<u8>)> = records
        .iter()
        .map(|(n, s)| (n.as_str(), s.clone()))
        .collect();
    let f = fasta(&named);
    same_bytes(
        dir.path(),
        &f,
        &[
            vec!["--max-part", "1000", "-t", "2"],
            vec!["--max-part", "3333", "--dcv", "16", "-t", "1"],
        ],
    );
    // Gzip in, the same file out.
    std::fs::write(dir.path().join("ref.fa.gz"), gzip(&f)).unwrap();
    index(dir.path(), "ref.fa.gz", "gz.fmi", &["--max-part", "999"]);
    index(dir.path(), "ref.fa", "whole.fmi", &[]);
    assert_eq!(
        std::fs::read(dir.path().join("gz.fmi")).unwrap(),
        std::fs::read(dir.path().join("whole.fmi")).unwrap()
    );
}

/// A limit the whole-text build does not fit builds in parts by itself,
/// to the same bytes; reads map the same; below the floor, a refusal with
/// the figures and no file.
#[test]
fn a_limit_builds_in_parts_or_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng::new(22);
    let n = 8_000_000usize;
    let mut seq = rng.bases(n);
    let repeat = seq[1000..50_000].to_vec();
    seq[3_000_000..3_049_000].copy_from_slice(&repeat);
    std::fs::write(d.join("ref.fa"), fasta(&[("r", seq.clone())])).unwrap();
    index(d, "ref.fa", "whole.fmi", &[]);
    // The whole-text build needs ~6 bytes per base (61 MiB); 50M is above
    // the floor (~0.46 per base + 32 MiB + the bucket counts).
    let o = Command::new(bin())
        .args(["index", "--max-memory", "50M", "-p", "parts.fmi", "ref.fa"])
        .current_dir(d)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("built in parts"), "{stderr}");
    assert!(stderr.contains("more than the limit"), "{stderr}");
    assert_eq!(
        std::fs::read(d.join("parts.fmi")).unwrap(),
        std::fs::read(d.join("whole.fmi")).unwrap()
    );
    // Reads drawn from the text map the same through both.
    let mut fq = Vec::new();
    for k in 0..200 {
        let at = rng.below((n - 100) as u64) as usize;
        fq.extend_from_slice(format!("@q{k}\n").as_bytes());
        fq.extend_from_slice(&seq[at..at + 100]);
        fq.extend_from_slice(b"\n+\n");
        fq.extend_from_slice(&[b'I'; 100]);
        fq.push(b'\n');
    }
    std::fs::write(d.join("r.fq"), fq).unwrap();
    let map = |idx: &str| {
        let o = Command::new(bin())
            .args(["map", "-v", "1", idx, "r.fq"])
            .current_dir(d)
            .output()
            .unwrap();
        assert!(o.status.success());
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("@PG"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    assert_eq!(map("parts.fmi"), map("whole.fmi"));
    // Below the floor: refused before anything is built, with the figures.
    let o = Command::new(bin())
        .args(["index", "--max-memory", "10M", "-p", "low.fmi", "ref.fa"])
        .current_dir(d)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("8000000 unambiguous bases")
            && stderr.contains("needs at least")
            && stderr.contains("bytes per base")
            && stderr.contains("10.0 MiB"),
        "{stderr}"
    );
    assert!(!d.join("low.fmi").exists());
    // Bad part options are usage errors.
    for bad in [
        &["--max-part", "0"][..],
        &["--dcv", "3"],
        &["--dcv", "8192"],
        &["--dcv", "48"],
    ] {
        let o = Command::new(bin())
            .arg("index")
            .args(bad)
            .arg("ref.fa")
            .current_dir(d)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
}

/// The progress a build in parts reports: after every part, the suffixes
/// sorted grow to twice the text (both directions), the parts count up by
/// one, never past the parts known, and end equal to them; the file is the
/// whole-text build's.
#[test]
fn progress_counts_parts_and_suffixes() {
    use fmalign::index::{IndexConfig, Progress, build_file};
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(5);
    let mut seq = rng.bases(20_000);
    // A long exact repeat: buckets larger than a part, split by splitters
    // (parts the plan did not know of at first).
    let unit = seq[..700].to_vec();
    for _ in 0..6 {
        seq.extend_from_slice(&unit);
    }
    std::fs::write(dir.path().join("ref.fa"), fasta(&[("r", seq)])).unwrap();
    let path = dir.path().join("ref.fa");
    let cfg = IndexConfig {
        threads: 2,
        max_part: Some(1500),
        dcv: Some(64),
        ..IndexConfig::default()
    };
    let reference = fmalign::scan::read_packed(&path, 2).unwrap();
    let n = reference.text.len() as u64;
    let mut seen: Vec<Progress> = Vec::new();
    let out = dir.path().join("parts.fmi");
    build_file(reference, &cfg, &out, &mut |p: &Progress| seen.push(*p)).unwrap();
    assert!(
        seen.len() >= 2 * n.div_ceil(1500) as usize,
        "{} parts",
        seen.len()
    );
    for (k, p) in seen.iter().enumerate() {
        assert_eq!(p.total, 2 * n);
        assert_eq!(p.parts, k + 1, "parts count one by one");
        assert!(p.parts <= p.planned, "{p:?}");
        if k > 0 {
            assert!(p.suffixes > seen[k - 1].suffixes, "{p:?}");
            assert!(p.suffixes - seen[k - 1].suffixes <= 1500, "{p:?}");
        }
    }
    let last = seen.last().unwrap();
    assert_eq!(last.suffixes, 2 * n);
    assert_eq!(last.parts, last.planned);
    index(dir.path(), "ref.fa", "whole.fmi", &[]);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(dir.path().join("whole.fmi")).unwrap()
    );
}

/// The least memory the refusal states is the least: a small genome (whose
/// whole-text build needs less than the parts' fixed cost) builds at the
/// figure the message gives, rounded up to a KiB, and not 1 MiB below it.
#[test]
fn the_least_memory_stated_is_enough() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(common::test_data("lambda_virus.fa"), d.join("ref.fa")).unwrap();
    // Unforced, and with the parts' size forced (which can need more than
    // the floor of a free plan: the old figure was then not enough).
    for forced in [&[][..], &["--max-part", "2000"][..]] {
        least_stated_is_enough(d, forced);
    }
}

fn least_stated_is_enough(d: &std::path::Path, forced: &[&str]) {
    let index = |limit: &str| {
        Command::new(bin())
            .args(["index", "-q", "--max-memory", limit, "-p", "x.fmi"])
            .args(forced)
            .arg("ref.fa")
            .current_dir(d)
            .output()
            .unwrap()
    };
    let o = index("1M");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let mib: f64 = stderr
        .split("needs at least ")
        .nth(1)
        .and_then(|t| t.split(" MiB").next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{stderr}"));
    let kib = (mib * 1024.0).ceil() as u64 + 1;
    // And it is the least: well below it, still refused.
    let o = index(&format!("{}K", kib - 1024));
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let o = index(&format!("{kib}K"));
    assert!(
        o.status.success(),
        "{forced:?} {kib}K: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}
