//! `map -o out.bam` / `--output-fmt bam`: samtools reads the BAM as exactly
//! the records of the SAM output (and the same header but for the command
//! line), `samtools quickcheck` accepts it, noodles-bam reads it back in
//! process, and its bytes do not depend on -t or -K.

mod common;

use common::{have_samtools, run_ok, samtools, test_data};

/// Header lines with the @PG command lines dropped (they name the output).
fn header_without_cl(text: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(text)
        .lines()
        .filter(|l| !l.starts_with("@PG"))
        .map(str::to_owned)
        .collect()
}

/// A folder with chrM indexed (ref.fa) and its real reads (r.fq.gz).
fn chrm_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(test_data("human_chrM_NC_012920.fa"), d.join("ref.fa")).unwrap();
    std::fs::copy(
        test_data("human_chrM_ERR2438055_R1.fq.gz"),
        d.join("r.fq.gz"),
    )
    .unwrap();
    run_ok(d, &["index", "-q", "ref.fa"], None);
    dir
}

#[test]
fn bam_holds_exactly_the_sam_records() {
    let dir = chrm_dir();
    let d = dir.path();
    std::fs::write(d.join("empty.fq"), b"").unwrap();
    for extra in [&[][..], &["-v", "2", "-a"], &["-v", "1", "-k", "3"]] {
        let args = |out: &str, reads: &str| {
            let mut a = vec!["map", "-q", "-o", out];
            a.extend_from_slice(extra);
            a.extend_from_slice(&["ref.fa", reads]);
            a.into_iter().map(String::from).collect::<Vec<_>>()
        };
        run_ok(d, &args("out.sam", "r.fq.gz"), None);
        run_ok(d, &args("out.bam", "r.fq.gz"), None);
        // In process: noodles-bam reads every record back.
        let mut reader =
            noodles_bam::io::Reader::new(std::fs::File::open(d.join("out.bam")).unwrap());
        let header = reader.read_header().unwrap();
        let names: Vec<Vec<u8>> = reader
            .record_bufs(&header)
            .map(|r| r.unwrap().name().map_or(b"*".to_vec(), |n| n.to_vec()))
            .collect();
        let sam = std::fs::read(d.join("out.sam")).unwrap();
        let sam_names: Vec<Vec<u8>> = sam
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty() && l[0] != b'@')
            .map(|l| l.split(|&b| b == b'\t').next().unwrap().to_vec())
            .collect();
        assert!(!names.is_empty());
        assert_eq!(names, sam_names, "{extra:?}: records (names, in order)");
        if !have_samtools() {
            continue;
        }
        samtools(d, &["quickcheck", "out.bam"]);
        assert_eq!(
            samtools(d, &["view", "out.bam"]),
            samtools(d, &["view", "out.sam"]),
            "{extra:?}: records differ"
        );
        assert_eq!(
            header_without_cl(&samtools(d, &["view", "--no-PG", "-H", "out.bam"])),
            header_without_cl(&samtools(d, &["view", "--no-PG", "-H", "out.sam"])),
            "{extra:?}: headers differ"
        );
    }
    // BAM on stdout; no reads at all: a header and the EOF block.
    let out = run_ok(
        d,
        &["map", "-q", "--output-fmt", "bam", "ref.fa", "empty.fq"],
        None,
    );
    std::fs::write(d.join("empty.bam"), &out.stdout).unwrap();
    assert!(out.stdout.ends_with(&[
        0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0, 0x1b, 0, 3, 0, 0, 0, 0, 0,
        0, 0, 0, 0
    ]));
    if have_samtools() {
        samtools(d, &["quickcheck", "empty.bam"]);
        assert_eq!(samtools(d, &["view", "-c", "empty.bam"]), b"0\n");
    }
}

#[test]
fn bam_bytes_do_not_depend_on_threads_or_batch_size() {
    let dir = chrm_dir();
    let d = dir.path();
    let mut outs = Vec::new();
    for (t, k) in [("1", "1000"), ("2", "10000000"), ("3", "77777")] {
        let out = run_ok(
            d,
            &[
                "map",
                "-q",
                "-t",
                t,
                "-K",
                k,
                "-v",
                "2",
                "--output-fmt",
                "bam",
                "ref.fa",
                "r.fq.gz",
            ],
            None,
        );
        outs.push(out.stdout);
    }
    assert!(outs[0].len() > 100_000, "a BAM of several blocks");
    assert!(
        outs.iter().all(|o| *o == outs[0]),
        "BAM bytes differ across -t/-K"
    );
}

/// SEQ says the same in SAM as in BAM: reads with lower case, `.`, `X`, `U`
/// and IUPAC codes, mapped (both strands, every mode) or not, are written
/// upper-cased with what BAM cannot store as `N` (htslib's and noodles'
/// reading of them), so the SAM text is what the BAM decodes to. SAM once
/// kept them as given (`acgT.`), and a pipeline that switched from SAM to
/// BAM saw other bases.
#[test]
fn sam_seq_is_what_bam_stores() {
    let dir = chrm_dir();
    let d = dir.path();
    let fa = std::fs::read_to_string(d.join("ref.fa")).unwrap();
    let chrm: Vec<u8> = fa
        .lines()
        .skip(1)
        .flat_map(|l| l.bytes())
        .map(|b| b.to_ascii_uppercase())
        .collect();
    let odd = b"acgtRYxX.Uu=nN";
    let mut fq = Vec::new();
    for k in 0..40usize {
        let at = 500 + 300 * k;
        let mut seq = chrm[at..at + 100].to_vec();
        if k % 2 == 1 {
            seq = seq
                .iter()
                .rev()
                .map(|&b| match b {
                    b'A' => b'T',
                    b'C' => b'G',
                    b'G' => b'C',
                    b'T' => b'A',
                    b => b,
                })
                .collect();
        }
        for j in 0..3 {
            seq[(k * 7 + j * 31) % 100] = odd[(k + j) % odd.len()];
        }
        if k % 5 == 0 {
            seq[..30].make_ascii_lowercase();
        }
        fq.extend_from_slice(format!("@r{k}\n").as_bytes());
        fq.extend_from_slice(&seq);
        fq.extend_from_slice(b"\n+\n");
        fq.extend_from_slice(&vec![b'I'; seq.len()]);
        fq.push(b'\n');
    }
    // One read that maps nowhere.
    fq.extend_from_slice(b"@u\nacgtxRYacgtacgtacgtacgtaaccggttacg.ttgcaacgt\n+\n");
    fq.extend_from_slice(&[b'I'; 44]);
    fq.push(b'\n');
    std::fs::write(d.join("odd.fq"), &fq).unwrap();
    for mode in [&[][..], &["-v", "2"], &["--local"], &["--end-to-end"]] {
        let run = |out: &str| {
            let mut a = vec!["map", "-q", "-o", out];
            a.extend_from_slice(mode);
            a.extend_from_slice(&["ref.fa", "odd.fq"]);
            run_ok(d, &a, None);
        };
        run("odd.sam");
        run("odd.bam");
        let mut reader =
            noodles_bam::io::Reader::new(std::fs::File::open(d.join("odd.bam")).unwrap());
        let header = reader.read_header().unwrap();
        let bam: Vec<Vec<u8>> = reader
            .record_bufs(&header)
            .map(|r| r.unwrap().sequence().as_ref().to_vec())
            .collect();
        let sam = std::fs::read(d.join("odd.sam")).unwrap();
        let sam: Vec<Vec<u8>> = sam
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty() && l[0] != b'@')
            .map(|l| l.split(|&b| b == b'\t').nth(9).unwrap().to_vec())
            .collect();
        assert_eq!(sam.len(), bam.len(), "{mode:?}");
        assert!(sam.len() > 40, "{mode:?}");
        for (s, b) in sam.iter().zip(&bam) {
            assert_eq!(
                String::from_utf8_lossy(s),
                String::from_utf8_lossy(b),
                "{mode:?}"
            );
            assert!(
                s.iter().all(|c| b"=ACMGRSVTWYHKDBN".contains(c)),
                "{mode:?}"
            );
        }
    }
}
