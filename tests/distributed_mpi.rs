//! `mpirun -np P fmalign index --distributed` for real (feature `mpi`, run
//! by .ci/run with OpenMPI installed): the index file must be byte-identical
//! to the single-process one for P = 1, 2, 3, 4, 8; a failing rank stops the
//! job with a message and leaves no file. The rank made to fail
//! (`FMALIGN_TEST_FAIL_RANK`) needs the feature `fault-injection` too, as
//! .ci/run builds it. The in-process tests of the same code (every rank
//! count, many references) are in tests/distributed.rs.

#![cfg(feature = "mpi")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{Rng, bin, gzip, list_dir as files, test_data};

/// `mpirun -np p fmalign index --distributed ARGS` (oversubscribed: CI has
/// 2 cores; as root when CI runs as root).
fn mpirun(p: usize, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--oversubscribe",
        "--bind-to",
        "none",
        "-np",
        &p.to_string(),
    ])
    .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
    .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    // Loopback only (containers often have no other interface).
    .env("OMPI_MCA_btl", "self,vader")
    .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
    .arg(bin())
    .args(["index", "--distributed"])
    .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run mpirun (is OpenMPI installed?)")
}

fn text(o: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn single(fasta: &Path, out: &Path, extra: &[&str]) -> Vec<u8> {
    let o = Command::new(bin())
        .args(["index", "-q", "-p"])
        .arg(out)
        .args(extra)
        .arg(fasta)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    std::fs::read(out).unwrap()
}

fn check_all_ranks(fasta: &Path, extra: &[&str], env: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    let want = single(fasta, &dir.path().join("single.fmi"), extra);
    // Phases of --stats per rank: in parts (scan, read, sample, sort,
    // tables, the same three reversed, write); by prefix doubling.
    for (algorithm, phases) in [("parts", 9), ("doubling", 6)] {
        for p in [1usize, 2, 3, 4, 8] {
            let out = dir.path().join(format!("mpi{p}.fmi"));
            let mut args = vec![
                "-p",
                out.to_str().unwrap(),
                "--stats",
                "--dist-algorithm",
                algorithm,
            ];
            args.extend_from_slice(extra);
            args.push(fasta.to_str().unwrap());
            let o = mpirun(p, &args, env);
            assert!(o.status.success(), "{algorithm}, {p} ranks: {}", text(&o));
            let got = std::fs::read(&out).unwrap();
            assert!(
                got == want,
                "{algorithm}, {p} ranks: index differs from the single-process one"
            );
            // --stats: one line per phase per rank, on rank 0 only.
            let stderr = String::from_utf8_lossy(&o.stderr);
            let lines = stderr.lines().filter(|l| l.starts_with("dist\t")).count();
            assert_eq!(
                lines,
                phases * p,
                "{algorithm}, {p} ranks: phase lines\n{stderr}"
            );
        }
    }
    let left: Vec<String> = files(dir.path())
        .into_iter()
        .filter(|f| f.contains(".tmp."))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn byte_identical_to_the_single_process_index() {
    check_all_ranks(&test_data("human_chrM_NC_012920.fa"), &[], &[]);
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(5);
    let mut fasta = Vec::new();
    for k in 0..9 {
        fasta.extend_from_slice(format!(">c{k}\n").as_bytes());
        let len = rng.range(1, 900) as usize;
        let mut seq = rng.bases(len);
        if len > 10 {
            seq[3..9].copy_from_slice(b"NNNNNN");
        }
        for line in seq.chunks(61) {
            fasta.extend_from_slice(line);
            fasta.push(b'\n');
        }
    }
    let gz = dir.path().join("r.fa.gz");
    std::fs::write(&gz, gzip(&fasta)).unwrap();
    check_all_ranks(&gz, &["--sa-sample", "4"], &[]);
    // Fewer bases than ranks; contigs shorter than a slice.
    let tiny = dir.path().join("tiny.fa");
    std::fs::write(&tiny, b">a\nAC\n>b\nNNT\n>c\nG\n").unwrap();
    check_all_ranks(&tiny, &["--sa-sample", "1"], &[]);
    // Contig boundaries exactly where the slices of ranks 1 of 8, 4, 3 and 2
    // start (1200 bases: 150, 300, 400, 600).
    let seq = rng.bases(1200);
    let mut cut = Vec::new();
    for (k, w) in [0usize, 150, 300, 400, 600, 1200].windows(2).enumerate() {
        cut.extend_from_slice(format!(">k{k}\n").as_bytes());
        cut.extend_from_slice(&seq[w[0]..w[1]]);
        cut.push(b'\n');
    }
    let cuts = dir.path().join("cuts.fa");
    std::fs::write(&cuts, cut).unwrap();
    check_all_ranks(&cuts, &["--sa-sample", "2"], &[]);
    let all_a = dir.path().join("all-a.fa");
    std::fs::write(
        &all_a,
        [b">a\n".to_vec(), vec![b'A'; 5000], b"\n".to_vec()].concat(),
    )
    .unwrap();
    check_all_ranks(&all_a, &[], &[]);
}

#[test]
fn exchanges_split_into_rounds_give_the_same_index() {
    // 1 KiB per destination per round: every exchange takes many rounds.
    check_all_ranks(
        &test_data("lambda_virus.fa"),
        &["--sa-sample", "8"],
        &[("FMALIGN_MPI_CHUNK", "1024")],
    );
}

#[cfg(feature = "fault-injection")]
#[test]
fn a_failing_rank_stops_the_job_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let fasta: PathBuf = test_data("lambda_virus.fa");
    let out = dir.path().join("x.fmi");
    let o = mpirun(
        3,
        &["-p", out.to_str().unwrap(), fasta.to_str().unwrap()],
        &[("FMALIGN_TEST_FAIL_RANK", "2")],
    );
    assert!(!o.status.success(), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("rank 2: ") && stderr.contains("injected"),
        "{stderr}"
    );
    assert!(stderr.contains("stopped: rank 2 failed"), "{stderr}");
    assert!(files(dir.path()).is_empty(), "{:?}", files(dir.path()));
}

#[test]
fn too_little_memory_or_bad_input_stops_the_job_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let fasta: PathBuf = test_data("lambda_virus.fa");
    let out = dir.path().join("x.fmi");
    // Not enough memory per rank: refused up front by every rank.
    let o = mpirun(
        2,
        &["-p", out.to_str().unwrap(), fasta.to_str().unwrap()],
        &[("FMALIGN_MEM_PER_RANK", "1000000")],
    );
    assert!(!o.status.success(), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("needs about") && stderr.contains("available per rank"),
        "{stderr}"
    );
    assert!(files(dir.path()).is_empty(), "{:?}", files(dir.path()));
    // Bad input, seen by rank 0's scan.
    let bad = dir.path().join("bad.fa");
    std::fs::write(&bad, b">a\nACGT\nAC?T\n").unwrap();
    let o = mpirun(
        2,
        &["-p", out.to_str().unwrap(), bad.to_str().unwrap()],
        &[],
    );
    assert!(!o.status.success(), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("bad.fa") && stderr.contains("line 3"),
        "{stderr}"
    );
    assert_eq!(files(dir.path()), vec!["bad.fa".to_string()]);
}
