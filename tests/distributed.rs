//! The distributed index build (`fmalign::dist::index::build`) on in-process
//! ranks (`LocalComm`, one thread per rank) against the single-process
//! index of the same FASTA: the files must be byte-identical for every rank
//! count. (tests/distributed_mpi.rs runs the same through `mpirun` when the
//! crate is built with `--features mpi`; the test of a failing rank, which
//! needs the fault-injection API, is a unit test in src/dist/index.rs.)

mod common;

use std::path::Path;

use common::{Rng, gzip, test_data};
use fmalign::dist::LocalComm;
use fmalign::dist::build;
use fmalign::dist::sa::block;
use fmalign::index::{DistAlgorithm, IndexConfig, build_and_write};

const RANKS: [usize; 5] = [1, 2, 3, 4, 8];

fn cfg(sa_sample: u32, wide: bool) -> IndexConfig {
    IndexConfig {
        threads: 1,
        sa_sample,
        wide,
        ..IndexConfig::default()
    }
}

/// The single-process index of `fasta`.
fn reference_index(fasta: &Path, cfg: &IndexConfig, dir: &Path) -> Vec<u8> {
    let out = dir.join("single.fmi");
    let r = fmalign::scan::read_fasta(fasta).unwrap();
    build_and_write(r, cfg, &out).unwrap();
    std::fs::read(&out).unwrap()
}

/// Builds on `p` in-process ranks; returns the file.
fn distributed(fasta: &Path, cfg: &IndexConfig, p: usize, dir: &Path) -> Vec<u8> {
    let out = dir.join(format!("dist{p}.fmi"));
    let results = LocalComm::run(p, |c| build(c, fasta, cfg, &out).map(|r| r.file_bytes));
    for (rank, r) in results.iter().enumerate() {
        assert!(r.is_ok(), "rank {rank} of {p}: {:?}", r.as_ref().err());
    }
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(results[0].as_ref().unwrap(), &(bytes.len() as u64));
    // No temporary file left behind.
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    bytes
}

/// Every algorithm for every rank count: `auto` (on one rank the
/// single-process build, else in parts), in parts as planned, in small
/// parts with a small period (buckets split, parts of one rank's share
/// split across ranks), and prefix doubling.
fn assert_same_for_all_ranks(fasta: &Path, cfg: &IndexConfig, what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let want = reference_index(fasta, cfg, dir.path());
    let variants = [
        (DistAlgorithm::Auto, None, None),
        (DistAlgorithm::Parts, None, None),
        (DistAlgorithm::Parts, Some(37), Some(8)),
        (DistAlgorithm::Doubling, None, None),
    ];
    for p in RANKS {
        for (dist, max_part, dcv) in variants {
            let cfg = IndexConfig {
                dist,
                max_part,
                dcv,
                ..cfg.clone()
            };
            let got = distributed(fasta, &cfg, p, dir.path());
            assert!(
                got == want,
                "{what}: {p} ranks, {dist:?}, parts {max_part:?}, period {dcv:?}: index differs from the single-process one (first byte at {:?}, lengths {} vs {})",
                got.iter().zip(&want).position(|(a, b)| a != b),
                got.len(),
                want.len()
            );
        }
    }
}

fn write(dir: &Path, name: &str, fasta: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, fasta).unwrap();
    path
}

/// A random reference: several contigs, N runs (also at contig ends),
/// IUPAC codes, lower case, an all-N contig, line width `width`.
fn random_fasta(rng: &mut Rng, contigs: usize, max_len: u64, width: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for k in 0..contigs {
        out.extend_from_slice(format!(">c{k} desc\n").as_bytes());
        let len = rng.range(1, max_len);
        let all_n = rng.chance(1, 10);
        let mut seq = Vec::new();
        while (seq.len() as u64) < len {
            if all_n || rng.chance(1, 40) {
                let run = rng.range(1, 30);
                for _ in 0..run {
                    seq.push(*rng.pick(b"NNNNnRYKM"));
                }
            } else {
                let b = rng.base();
                seq.push(if rng.chance(1, 5) {
                    b.to_ascii_lowercase()
                } else {
                    b
                });
            }
        }
        seq.truncate(len as usize);
        for line in seq.chunks(width) {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
    out
}

#[test]
fn random_references_for_every_rank_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(7);
    for (i, (contigs, max_len, width)) in [
        (1, 2000, 60),
        (5, 800, 70),
        (12, 300, 7),
        (3, 5000, 100_000),
    ]
    .into_iter()
    .enumerate()
    {
        let fasta = random_fasta(&mut rng, contigs, max_len, width);
        let path = write(dir.path(), &format!("r{i}.fa"), &fasta);
        for sa_sample in [1, 32] {
            assert_same_for_all_ranks(&path, &cfg(sa_sample, false), &format!("r{i}"));
        }
    }
}

#[test]
fn gzip_input_and_wide_positions() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(11);
    let fasta = random_fasta(&mut rng, 4, 1500, 60);
    let path = write(dir.path(), "r.fa.gz", &gzip(&fasta));
    assert_same_for_all_ranks(&path, &cfg(4, false), "gzip");
    let path = write(dir.path(), "r.fa", &fasta);
    assert_same_for_all_ranks(&path, &cfg(8, true), "wide");
}

#[test]
fn degenerate_texts() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "all-A",
            [b">a\n".to_vec(), vec![b'A'; 3000], b"\n".to_vec()].concat(),
        ),
        ("one base", b">a\nC\n".to_vec()),
        // Fewer bases than ranks.
        ("three bases", b">a\nAC\n>b\nNNT\n".to_vec()),
        // Only ambiguous bases: an empty text.
        ("all N", b">a\nNNNN\n>b\nN\n".to_vec()),
        (
            "tandem",
            [b">t\n".to_vec(), b"ACGTTGCA".repeat(400), b"\n".to_vec()].concat(),
        ),
    ];
    for (what, fasta) in cases {
        let path = write(dir.path(), &format!("{what}.fa"), &fasta);
        assert_same_for_all_ranks(&path, &cfg(2, false), what);
    }
}

#[test]
fn contigs_shorter_than_a_slice_and_a_boundary_on_a_slice_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(3);
    // 40 contigs of 1..20 bases: every slice holds several contigs.
    let mut fasta = Vec::new();
    for k in 0..40 {
        let len = rng.range(1, 20) as usize;
        fasta.extend_from_slice(format!(">s{k}\n").as_bytes());
        fasta.extend_from_slice(&rng.bases(len));
        fasta.push(b'\n');
    }
    let path = write(dir.path(), "short.fa", &fasta);
    assert_same_for_all_ranks(&path, &cfg(1, false), "short contigs");
    // Two contigs meeting exactly where rank 1 of 2, 3 and 4 starts.
    for p in [2usize, 3, 4] {
        let n = 1200u64;
        let (cut, _) = block(n, p, 1);
        let seq = rng.bases(n as usize);
        let mut f = b">x\n".to_vec();
        f.extend_from_slice(&seq[..cut as usize]);
        f.extend_from_slice(b"\n>y\n");
        f.extend_from_slice(&seq[cut as usize..]);
        f.push(b'\n');
        let path = write(dir.path(), &format!("cut{p}.fa"), &f);
        assert_same_for_all_ranks(&path, &cfg(4, false), &format!("boundary at rank 1 of {p}"));
    }
}

#[test]
fn real_genomes() {
    for name in ["lambda_virus.fa", "human_chrM_NC_012920.fa"] {
        assert_same_for_all_ranks(&test_data(name), &cfg(32, false), name);
    }
}

#[test]
fn bad_input_stops_every_rank_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "bad.fa", b">a\nACGT\n>b\nAC!T\n");
    let out = dir.path().join("bad.fmi");
    for p in [1usize, 3] {
        let results = LocalComm::run(p, |c| build(c, &path, &cfg(32, false), &out));
        let e = results[0].as_ref().unwrap_err().to_string();
        assert!(e.contains("bad.fa") && e.contains("line 4"), "{e}");
        for r in &results[1..] {
            assert!(
                matches!(r, Err(fmalign::Error::OtherRank(0))),
                "{:?}",
                r.as_ref().err()
            );
        }
        let files: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(files, vec![std::ffi::OsString::from("bad.fa")]);
    }
}
