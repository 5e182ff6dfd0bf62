//! Interrupted runs (SIGINT, SIGTERM, SIGHUP, and what batch schedulers
//! send: SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU): no output file that looks
//! complete, no temporary file left, and the exit status of the signal.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Rng, bin, list_dir as files, run_ok, test_data};

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig}");
}

/// Waits until `dir` holds a file whose name contains `part`.
fn wait_for(dir: &Path, part: &str) {
    let t = Instant::now();
    while !files(dir).iter().any(|f| f.contains(part)) {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no {part} in {dir:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `map -q -K 100 -o out.sam ref.fa -` in `d`, reading from a pipe.
fn map_from_pipe(d: &Path) -> Child {
    Command::new(bin())
        .args(["map", "-q", "-K", "100", "-o", "out.sam", "ref.fa", "-"])
        .current_dir(d)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads `from..to` of a lambda sequence, written to `stdin` (a closed
/// pipe is ignored: the run may have ended).
fn write_reads(stdin: &mut impl Write, from: usize, to: usize) {
    for i in from..to {
        let _ = writeln!(
            stdin,
            "@r{i}\nGGGCGGCGACCTCGCGGGTTTTCGCTATTTATGAAAATTTTCCGGTTTAAGGCGTTTCCG\n+\n{}",
            "I".repeat(60)
        );
    }
    let _ = stdin.flush();
}

/// `map -o` reading from a pipe that stays open: the run is mid-output,
/// its temporary file exists; the signal must remove it.
#[test]
fn map_output_is_removed_on_each_signal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(test_data("lambda_virus.fa"), d.join("ref.fa")).unwrap();
    run_ok(d, &["index", "-q", "ref.fa"], None);
    let signals = [
        ("INT", 2),
        ("TERM", 15),
        ("HUP", 1),
        ("USR1", 10),
        ("USR2", 12),
        ("ALRM", 14),
        ("XCPU", 24),
    ];
    for (sig, code) in signals {
        let mut child = map_from_pipe(d);
        // Some reads, and the pipe left open: map waits for more.
        let mut stdin = child.stdin.take().unwrap();
        write_reads(&mut stdin, 0, 50);
        wait_for(d, ".out.sam.tmp.");
        std::thread::sleep(Duration::from_millis(100));
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        drop(stdin);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            out.status.signal(),
            Some(code),
            "SIG{sig}: {:?}",
            out.status
        );
        // SIGXCPU's default action may leave a core file.
        let left: Vec<String> = files(d)
            .into_iter()
            .filter(|f| !f.starts_with("core"))
            .collect();
        assert_eq!(left, vec!["ref.fa", "ref.fa.fmi"], "SIG{sig}");
    }
}

/// The index cut short under a running `map` (`cp new.fmi ref.fa.fmi`
/// truncates the file in use): the mapped pages are gone and the next
/// read of them raises SIGBUS. map must say what happened, remove its
/// temporary output and exit 1, not die of the signal with no message.
#[test]
fn index_truncated_under_map_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(test_data("lambda_virus.fa"), d.join("ref.fa")).unwrap();
    run_ok(d, &["index", "-q", "ref.fa"], None);
    let mut child = map_from_pipe(d);
    let mut stdin = child.stdin.take().unwrap();
    write_reads(&mut stdin, 0, 100);
    // The temporary output exists once the index is open and checked and
    // the reads have started.
    wait_for(d, ".out.sam.tmp.");
    std::fs::File::create(d.join("ref.fa.fmi")).unwrap();
    write_reads(&mut stdin, 100, 200);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{:?}: {stderr}", out.status);
    assert!(
        stderr.starts_with("fmalign: error: ")
            && stderr.contains("ref.fa.fmi")
            && stderr.contains("changed or was truncated while in use"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(files(d), vec!["ref.fa", "ref.fa.fmi"]);
}

/// `index` stopped at many moments (reading, sorting, writing): afterwards
/// either the run finished and the index is valid, or it was stopped and
/// there is no index and no temporary file — unless the signal came after
/// the rename, when the index is there and valid. Never a partial file.
#[test]
fn index_stopped_at_any_moment_leaves_nothing_or_a_valid_index() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng::new(9);
    let mut fasta = Vec::new();
    for k in 0..4 {
        fasta.extend_from_slice(format!(">c{k}\n").as_bytes());
        for line in rng.bases(400_000).chunks(80) {
            fasta.extend_from_slice(line);
            fasta.push(b'\n');
        }
    }
    std::fs::write(d.join("ref.fa"), &fasta).unwrap();
    // How long a whole run takes here.
    let t = Instant::now();
    run_ok(
        d,
        &["index", "-q", "-t", "1", "-p", "full.fmi", "ref.fa"],
        None,
    );
    let whole = t.elapsed();
    std::fs::remove_file(d.join("full.fmi")).unwrap();
    let (mut stopped, mut finished) = (0, 0);
    // Twelve moments from 0 to 110% of that run; then, when a busy machine
    // (CI runs the tests in parallel) made every run slower than the first,
    // later and later moments until one run finishes.
    for step in 0..40u32 {
        if step >= 12 && finished > 0 {
            break;
        }
        let delay = if step < 12 {
            whole * step / 10
        } else {
            whole * (1 << (step - 11).min(6))
        };
        let child = Command::new(bin())
            .args(["index", "-q", "-t", "1", "-p", "x.fmi", "ref.fa"])
            .current_dir(d)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let out = child.wait_with_output().unwrap();
        let names = files(d);
        if out.status.success() {
            finished += 1;
            assert_eq!(names, vec!["ref.fa", "x.fmi"], "after {delay:?}");
            run_ok(d, &["check", "x.fmi"], None);
            std::fs::remove_file(d.join("x.fmi")).unwrap();
        } else {
            stopped += 1;
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(
                out.status.signal(),
                Some(15),
                "after {delay:?}: {:?}",
                out.status
            );
            // A signal that lands after the rename (the commit point) but
            // before the process exits finds the index already complete:
            // then it must be whole and valid, with no temporary file.
            if names.len() == 2 {
                assert_eq!(names, vec!["ref.fa", "x.fmi"], "after {delay:?}");
                run_ok(d, &["check", "x.fmi"], None);
                std::fs::remove_file(d.join("x.fmi")).unwrap();
            } else {
                assert_eq!(names, vec!["ref.fa"], "after {delay:?}");
            }
        }
    }
    assert!(
        stopped > 0 && finished > 0,
        "stopped {stopped}, finished {finished}"
    );
}
