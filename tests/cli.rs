//! The real `fmalign` binary on the small real data in `test_data/`: index,
//! map (every reporting mode checked against the naive oracle), output that
//! does not depend on threads or batch size, stdin, `-o`, gzip input and
//! references, INDEX given as the FASTA, `info`, `check`, 64-bit positions,
//! and the SAM through noodles and (when installed) samtools.

mod common;

use std::path::Path;

use common::{FqRead, Mode, RefSeq, Rng, check_records, run_ok, samtools, without_pg};

/// A temporary directory holding a copy of a `test_data` reference.
fn setup(name: &str) -> (tempfile::TempDir, Vec<RefSeq>) {
    let dir = tempfile::tempdir().unwrap();
    let fasta = std::fs::read(common::test_data(name)).unwrap();
    std::fs::write(dir.path().join(name), &fasta).unwrap();
    (
        dir,
        common::parse_fasta(&common::read_maybe_gz(&common::test_data(name))),
    )
}

/// Reads for the lambda tests: sampled ones (both strands, any case, with
/// N, across junctions), a few tiny ones, real RNA-seq reads from human
/// chr20 (nearly all unmapped), an empty read, and reads whose names carry
/// a comment.
fn lambda_reads(refs: &[RefSeq]) -> Vec<FqRead> {
    let mut rng = Rng::new(7);
    let mut reads = common::sample_reads(&mut rng, refs, 500);
    common::limit_short(&mut reads, 6, 12);
    let human = common::parse_fastq(
        &std::fs::read(common::test_data("human_chr20_rnaseq_60bp.fq")).unwrap(),
    );
    reads.extend(human.into_iter().take(300));
    reads.push(FqRead {
        name: "empty".into(),
        seq: Vec::new(),
        qual: Vec::new(),
    });
    reads
}

fn fastq_with_comments(reads: &[FqRead]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, r) in reads.iter().enumerate() {
        out.extend_from_slice(format!("@{} comment {i}\n", r.name).as_bytes());
        out.extend_from_slice(&r.seq);
        out.extend_from_slice(b"\n+\n");
        out.extend_from_slice(&r.qual);
        out.push(b'\n');
    }
    out
}

fn stdout_of(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = run_ok(dir, args, None);
    assert!(!out.stdout.is_empty(), "no output from {args:?}");
    out.stdout
}

#[test]
fn lambda_index_and_map_in_every_mode() {
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    let out = run_ok(d, &["index", "-q", "-t", "2", "lambda_virus.fa"], None);
    assert!(out.stdout.is_empty());
    assert_eq!(
        common::list_dir(d),
        ["lambda_virus.fa", "lambda_virus.fa.fmi"]
    );
    let reads = lambda_reads(&refs);
    std::fs::write(d.join("reads.fq"), fastq_with_comments(&reads)).unwrap();
    let idx = "lambda_virus.fa.fmi";

    let base = stdout_of(d, &["map", "-v", "0", "-q", "-t", "1", idx, "reads.fq"]);
    check_records(&refs, &reads, &base, Mode::Best(3));
    // Nothing but the reads decides the output: threads and batch sizes
    // give the same bytes (@PG CL leaves -t/-K/-q out).
    for args in [
        &["map", "-v", "0", "-q", "-t", "2", idx, "reads.fq"][..],
        &["map", "-v", "0", "-q", "-t", "3", idx, "reads.fq"],
        &["map", "-v", "0", "-q", "-K", "1", idx, "reads.fq"],
        &[
            "map", "-v", "0", "-q", "-K", "100", "-t", "3", idx, "reads.fq",
        ],
        &[
            "map",
            "-v",
            "0",
            "-q",
            "--threads=2",
            "--batch-bases=7",
            idx,
            "reads.fq",
        ],
        &["map", "-v", "0", idx, "reads.fq"],
    ] {
        assert!(stdout_of(d, args) == base, "{args:?} differs from -t 1");
    }

    for (mode, args) in [
        (Mode::Best(0), &["--max-xa", "0"][..]),
        (Mode::Best(10), &["--max-xa", "10"]),
        (Mode::UpTo(1), &["-k", "1"]),
        (Mode::UpTo(2), &["-k", "2"]),
        (Mode::UpTo(5), &["-k", "5"]),
        (Mode::All, &["-a"]),
    ] {
        let mut all = vec!["map", "-q", "-t", "2"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-v", "0", idx, "reads.fq"]);
        let sam = stdout_of(d, &all);
        check_records(&refs, &reads, &sam, mode);
        all[3] = "1";
        all.insert(4, "-K");
        all.insert(5, "50");
        assert!(stdout_of(d, &all) == sam, "{all:?} differs");
    }
}

#[test]
fn stdin_output_file_and_gzip_reads() {
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    run_ok(d, &["index", "-q", "lambda_virus.fa"], None);
    let reads = lambda_reads(&refs);
    let fq = common::fastq_text(&reads);
    std::fs::write(d.join("reads.fq"), &fq).unwrap();
    std::fs::write(d.join("reads.fq.gz"), common::gzip(&fq)).unwrap();
    let base = stdout_of(
        d,
        &[
            "map",
            "-v",
            "0",
            "-q",
            "-a",
            "lambda_virus.fa.fmi",
            "reads.fq",
        ],
    );
    check_records(&refs, &reads, &base, Mode::All);
    let base = without_pg(&base);

    let stdin = run_ok(
        d,
        &["map", "-v", "0", "-q", "-a", "lambda_virus.fa.fmi", "-"],
        Some(&fq),
    );
    assert!(without_pg(&stdin.stdout) == base, "stdin differs");
    let stdin_gz = run_ok(
        d,
        &["map", "-v", "0", "-q", "-a", "lambda_virus.fa.fmi", "-"],
        Some(&common::gzip(&fq)),
    );
    assert!(without_pg(&stdin_gz.stdout) == base, "gzip stdin differs");
    let gz = stdout_of(
        d,
        &[
            "map",
            "-v",
            "0",
            "-q",
            "-a",
            "lambda_virus.fa.fmi",
            "reads.fq.gz",
        ],
    );
    assert!(without_pg(&gz) == base, "gzip file differs");

    let o = run_ok(
        d,
        &[
            "map",
            "-v",
            "0",
            "-q",
            "-a",
            "-o",
            "out.sam",
            "lambda_virus.fa.fmi",
            "reads.fq",
        ],
        None,
    );
    assert!(o.stdout.is_empty(), "-o also wrote to stdout");
    let file = std::fs::read(d.join("out.sam")).unwrap();
    assert!(without_pg(&file) == base, "-o file differs");
    assert!(
        !common::list_dir(d).iter().any(|f| f.contains(".tmp.")),
        "{:?}",
        common::list_dir(d)
    );
    // -o over an existing file replaces it.
    run_ok(
        d,
        &[
            "map",
            "-v",
            "0",
            "-q",
            "-k",
            "2",
            "-o",
            "out.sam",
            "lambda_virus.fa.fmi",
            "reads.fq",
        ],
        None,
    );
    check_records(
        &refs,
        &reads,
        &std::fs::read(d.join("out.sam")).unwrap(),
        Mode::UpTo(2),
    );

    // An empty input has a header and no records.
    let empty = run_ok(
        d,
        &["map", "-v", "0", "-q", "lambda_virus.fa.fmi", "-"],
        Some(b""),
    );
    let (header, recs) = common::parse_sam(&empty.stdout);
    assert!(recs.is_empty() && header.len() == 3, "{header:?}");
}

/// FASTA reads (no qualities: QUAL is `*`), multi-line ones included.
#[test]
fn fasta_reads() {
    let (dir, refs) = setup("human_chrM_NC_012920.fa");
    let d = dir.path();
    run_ok(d, &["index", "-q", "human_chrM_NC_012920.fa"], None);
    let mut rng = Rng::new(3);
    let mut reads = common::sample_reads(&mut rng, &refs, 300);
    common::limit_short(&mut reads, 6, 10);
    let mut fa = Vec::new();
    for r in reads.iter_mut() {
        r.qual.clear();
        fa.extend_from_slice(format!(">{}\n", r.name).as_bytes());
        for line in r.seq.chunks(37) {
            fa.extend_from_slice(line);
            fa.push(b'\n');
        }
    }
    std::fs::write(d.join("reads.fa"), &fa).unwrap();
    let sam = stdout_of(
        d,
        &[
            "map",
            "-v",
            "0",
            "-q",
            "-a",
            "human_chrM_NC_012920.fa",
            "reads.fa",
        ],
    );
    check_records(&refs, &reads, &sam, Mode::All);
}

/// The real chrM read pairs (gzip), each file mapped on its own.
#[test]
fn chr_m_real_reads() {
    let (dir, refs) = setup("human_chrM_NC_012920.fa");
    let d = dir.path();
    run_ok(
        d,
        &["index", "-q", "-t", "1", "human_chrM_NC_012920.fa"],
        None,
    );
    for r in [
        "human_chrM_ERR2438055_R1.fq.gz",
        "human_chrM_ERR2438055_R2.fq.gz",
    ] {
        let path = common::test_data(r);
        let p = path.to_str().unwrap();
        let reads = common::parse_fastq(&common::read_maybe_gz(&path));
        let sam = stdout_of(
            d,
            &[
                "map",
                "-v",
                "0",
                "-q",
                "-t",
                "1",
                "human_chrM_NC_012920.fa",
                p,
            ],
        );
        check_records(&refs, &reads, &sam, Mode::Best(3));
        let (_, recs) = common::parse_sam(&sam);
        assert!(
            recs.iter().any(|r| !r.unmapped()) && recs.iter().any(|r| r.reverse()),
            "some real reads map, on both strands"
        );
        let again = stdout_of(
            d,
            &[
                "map",
                "-v",
                "0",
                "-q",
                "-t",
                "3",
                "-K",
                "1000",
                "human_chrM_NC_012920.fa",
                p,
            ],
        );
        assert!(again == sam, "{r}: -t 3 -K 1000 differs");
    }
}

/// The holes of a reference as `info` prints them: (name, 1-based start,
/// 1-based end).
fn holes(refs: &[RefSeq]) -> Vec<String> {
    let mut out = Vec::new();
    for r in refs {
        let mut p = 0;
        while p < r.seq.len() {
            if b"ACGT".contains(&r.seq[p]) {
                p += 1;
                continue;
            }
            let s = p;
            while p < r.seq.len() && !b"ACGT".contains(&r.seq[p]) {
                p += 1;
            }
            out.push(format!("ambiguous\t{}\t{}\t{}", r.name, s + 1, p));
        }
    }
    out
}

#[test]
fn info_and_check() {
    for name in ["lambda_virus.fa", "human_chrM_NC_012920.fa"] {
        let (dir, refs) = setup(name);
        let d = dir.path();
        run_ok(d, &["index", "-q", name], None);
        let fmi = format!("{name}.fmi");
        for arg in [name, fmi.as_str()] {
            let out = run_ok(d, &["info", arg], None);
            let text = String::from_utf8(out.stdout).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let total: usize = refs.iter().map(|r| r.seq.len()).sum();
            let unamb = common::unambiguous_text(&refs).len();
            assert!(
                lines.contains(&format!("reference_bases\t{total}").as_str()),
                "{text}"
            );
            assert!(
                lines.contains(&format!("unambiguous_bases\t{unamb}").as_str()),
                "{text}"
            );
            assert!(
                lines.contains(&format!("ambiguous_bases\t{}", total - unamb).as_str()),
                "{text}"
            );
            assert!(lines.contains(&"position_bits\t32"), "{text}");
            assert!(
                lines.contains(&format!("contigs\t{}", refs.len()).as_str()),
                "{text}"
            );
            for r in &refs {
                let prefix = format!("contig\t{}\t{}\t", r.name, r.seq.len());
                assert!(
                    lines.iter().any(|l| l.starts_with(&prefix)),
                    "{prefix} in {text}"
                );
            }
            let amb: Vec<&str> = lines
                .iter()
                .copied()
                .filter(|l| l.starts_with("ambiguous\t"))
                .collect();
            assert_eq!(amb, holes(&refs), "{text}");
            let file_bytes = std::fs::metadata(d.join(&fmi)).unwrap().len();
            assert!(
                lines.contains(&format!("file_bytes\t{file_bytes}").as_str()),
                "{text}"
            );
            for full in [false, true] {
                let mut args = vec!["check", arg];
                if full {
                    args.push("--full");
                }
                let out = run_ok(d, &args, None);
                let text = String::from_utf8(out.stdout).unwrap();
                assert!(text.contains(": ok"), "{text}");
            }
        }
    }
}

/// `index REF.fa.gz` writes REF.fa.gz.fmi, identical to the index of the
/// plain file; `-p` names the output; INDEX may be the FASTA (plain or gz).
#[test]
fn gzip_reference_and_index_naming() {
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    let fasta = std::fs::read(d.join("lambda_virus.fa")).unwrap();
    std::fs::create_dir(d.join("gz")).unwrap();
    std::fs::write(d.join("gz/lambda_virus.fa.gz"), common::gzip(&fasta)).unwrap();
    run_ok(d, &["index", "-q", "gz/lambda_virus.fa.gz"], None);
    assert_eq!(
        common::list_dir(&d.join("gz")),
        ["lambda_virus.fa.gz", "lambda_virus.fa.gz.fmi"]
    );
    run_ok(d, &["index", "-q", "lambda_virus.fa"], None);
    run_ok(
        d,
        &["index", "-q", "-p", "custom.idx", "lambda_virus.fa"],
        None,
    );
    let plain = std::fs::read(d.join("lambda_virus.fa.fmi")).unwrap();
    assert!(std::fs::read(d.join("gz/lambda_virus.fa.gz.fmi")).unwrap() == plain);
    assert!(std::fs::read(d.join("custom.idx")).unwrap() == plain);

    let mut rng = Rng::new(11);
    let mut reads = common::sample_reads(&mut rng, &refs, 200);
    common::limit_short(&mut reads, 6, 5);
    std::fs::write(d.join("reads.fq"), common::fastq_text(&reads)).unwrap();
    let base = stdout_of(
        d,
        &["map", "-v", "0", "-q", "lambda_virus.fa.fmi", "reads.fq"],
    );
    check_records(&refs, &reads, &base, Mode::Best(3));
    for idx in [
        "lambda_virus.fa",
        "gz/lambda_virus.fa.gz",
        "gz/lambda_virus.fa.gz.fmi",
        "custom.idx",
    ] {
        let sam = stdout_of(d, &["map", "-v", "0", "-q", idx, "reads.fq"]);
        assert!(without_pg(&sam) == without_pg(&base), "INDEX {idx} differs");
    }
}

/// `--wide-positions` (the >4 Gbp layout) gives the same SAM.
#[test]
fn wide_positions() {
    let (dir, refs) = setup("human_chrM_NC_012920.fa");
    let d = dir.path();
    run_ok(d, &["index", "-q", "human_chrM_NC_012920.fa"], None);
    run_ok(
        d,
        &[
            "index",
            "-q",
            "--wide-positions",
            "--sa-sample",
            "4",
            "-p",
            "wide.fmi",
            "human_chrM_NC_012920.fa",
        ],
        None,
    );
    let info = String::from_utf8(run_ok(d, &["info", "wide.fmi"], None).stdout).unwrap();
    assert!(info.lines().any(|l| l == "position_bits\t64"), "{info}");
    assert!(info.lines().any(|l| l == "sa_sample\t4"), "{info}");
    run_ok(d, &["check", "--full", "wide.fmi"], None);
    let mut rng = Rng::new(5);
    let mut reads = common::sample_reads(&mut rng, &refs, 400);
    common::limit_short(&mut reads, 6, 10);
    std::fs::write(d.join("reads.fq"), common::fastq_text(&reads)).unwrap();
    let narrow = stdout_of(
        d,
        &[
            "map",
            "-v",
            "0",
            "-q",
            "-a",
            "human_chrM_NC_012920.fa.fmi",
            "reads.fq",
        ],
    );
    let wide = stdout_of(d, &["map", "-v", "0", "-q", "-a", "wide.fmi", "reads.fq"]);
    check_records(&refs, &reads, &wide, Mode::All);
    assert!(without_pg(&narrow) == without_pg(&wide));
}

/// A 4.6 Mbp gzip reference: reads sampled at known places must come back
/// there (among their hits), every hit must be a true match, and the index
/// must pass `check --full`.
#[test]
fn ecoli_gzip_reference() {
    let (dir, refs) = setup("ecoli_K12_MG1655.fa.gz");
    let d = dir.path();
    run_ok(
        d,
        &["index", "-q", "-t", "2", "ecoli_K12_MG1655.fa.gz"],
        None,
    );
    run_ok(d, &["check", "--full", "ecoli_K12_MG1655.fa.gz"], None);
    let mut rng = Rng::new(99);
    let mut reads = Vec::new();
    let mut origin = Vec::new();
    for i in 0..300 {
        let k = rng.below(refs.len() as u64) as usize;
        let len = rng.range(20, 150) as usize;
        let p = rng.below((refs[k].seq.len() - len + 1) as u64) as usize;
        let rev = rng.chance(1, 2);
        let w = &refs[k].seq[p..p + len];
        let seq = if rev { common::revcomp(w) } else { w.to_vec() };
        let qual = rng.qual(len);
        reads.push(FqRead {
            name: format!("e{i}"),
            seq,
            qual,
        });
        origin.push((k as u32, p as u64, rev));
    }
    std::fs::write(d.join("reads.fq"), common::fastq_text(&reads)).unwrap();
    let sam = stdout_of(
        d,
        &[
            "map",
            "-v",
            "0",
            "-q",
            "-a",
            "-t",
            "2",
            "ecoli_K12_MG1655.fa.gz",
            "reads.fq",
        ],
    );
    let (_, recs) = common::parse_sam(&sam);
    let contig_of = refs
        .iter()
        .enumerate()
        .map(|(k, r)| (r.name.as_str(), k as u32))
        .collect();
    let mut k = 0;
    for (read, &o) in reads.iter().zip(&origin) {
        let start = k;
        while k < recs.len() && recs[k].qname == read.qname() {
            k += 1;
        }
        let mine = &recs[start..k];
        assert!(
            !mine.is_empty() && !mine[0].unmapped(),
            "read {} unmapped",
            read.name
        );
        let hits = mine.len();
        let placed: Vec<(u32, u64, bool)> = mine
            .iter()
            .map(|r| {
                common::check_mapped_record(&refs, &contig_of, read, r, hits);
                (contig_of[r.rname.as_str()], r.pos - 1, r.reverse())
            })
            .collect();
        assert!(
            placed.contains(&o),
            "read {} not found at its origin {o:?}",
            read.name
        );
    }
    assert_eq!(k, recs.len());
}

/// noodles reads the header and every record; counts agree with the text.
#[test]
fn sam_parses_with_noodles() {
    use noodles_sam as sam;
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    run_ok(d, &["index", "-q", "lambda_virus.fa"], None);
    let reads = lambda_reads(&refs);
    std::fs::write(d.join("reads.fq"), common::fastq_text(&reads)).unwrap();
    for mode in ["-a", "-k3"] {
        let text = stdout_of(d, &["map", "-q", mode, "lambda_virus.fa", "reads.fq"]);
        let (_, mine) = common::parse_sam(&text);
        let mut reader = sam::io::Reader::new(&text[..]);
        let header = reader.read_header().unwrap();
        assert_eq!(header.reference_sequences().len(), refs.len());
        let recs: Vec<sam::alignment::RecordBuf> = reader
            .record_bufs(&header)
            .collect::<std::io::Result<_>>()
            .unwrap();
        assert_eq!(recs.len(), mine.len());
        for (r, m) in recs.iter().zip(&mine) {
            assert_eq!(r.flags().bits(), m.flag);
            assert_eq!(r.flags().is_unmapped(), m.unmapped());
            assert_eq!(r.alignment_start().map_or(0, usize::from) as u64, m.pos);
            assert_eq!(
                r.sequence().as_ref(),
                if m.seq == b"*" { &b""[..] } else { &m.seq[..] }
            );
        }
    }
}

/// samtools accepts the output: quickcheck, view -b, sort, index.
#[test]
fn samtools_accepts_output() {
    if !common::have_samtools() {
        return;
    }
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    run_ok(d, &["index", "-q", "lambda_virus.fa"], None);
    let reads = lambda_reads(&refs);
    std::fs::write(d.join("reads.fq"), common::fastq_text(&reads)).unwrap();
    for (mode, name) in [("-a", "all"), ("-k2", "k2"), ("-k1", "best")] {
        let sam = format!("{name}.sam");
        run_ok(
            d,
            &["map", "-q", mode, "-o", &sam, "lambda_virus.fa", "reads.fq"],
            None,
        );
        let (_, recs) = common::parse_sam(&std::fs::read(d.join(&sam)).unwrap());
        samtools(d, &["quickcheck", "-v", &sam]);
        let bam = format!("{name}.bam");
        let sorted = format!("{name}.sorted.bam");
        samtools(d, &["view", "-b", "-o", &bam, &sam]);
        samtools(d, &["quickcheck", "-v", &bam]);
        samtools(d, &["sort", "-o", &sorted, &bam]);
        samtools(d, &["index", &sorted]);
        assert!(d.join(format!("{sorted}.bai")).is_file());
        let count = String::from_utf8(samtools(d, &["view", "-c", &sorted])).unwrap();
        assert_eq!(count.trim(), recs.len().to_string());
        let mapped = String::from_utf8(samtools(d, &["view", "-c", "-F", "4", &sorted])).unwrap();
        assert_eq!(
            mapped.trim(),
            recs.iter().filter(|r| !r.unmapped()).count().to_string()
        );
    }
}

/// Starting searches from the k-mer table (`--kmer K`) changes nothing in
/// the output, for reads shorter and longer than k; checked against the
/// oracle too.
#[test]
fn kmer_table_gives_the_same_records() {
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    let reads = lambda_reads(&refs);
    std::fs::write(d.join("r.fq"), common::fastq_text(&reads)).unwrap();
    run_ok(d, &["index", "lambda_virus.fa"], None);
    let plain = stdout_of(
        d,
        &[
            "map",
            "-v",
            "0",
            "-a",
            "--kmer",
            "0",
            "lambda_virus.fa",
            "r.fq",
        ],
    );
    common::check_all_records(&refs, &reads, &plain);
    for k in ["1", "5", "8"] {
        let with = stdout_of(
            d,
            &[
                "map",
                "-v",
                "0",
                "-a",
                "--kmer",
                k,
                "lambda_virus.fa",
                "r.fq",
            ],
        );
        assert_eq!(
            common::without_pg(&with),
            common::without_pg(&plain),
            "--kmer {k}"
        );
    }
}

/// Reads with more suffix-array rows than `--max-locate` (here short k-mers
/// of lambda, hundreds of hits each) are not located in full outside `-a`:
/// every reported hit must still be a real one (oracle), distinct, X0 must be
/// the row count (lambda has one contig and no N, so every row is a hit),
/// MAPQ 0, no XA, and the output must not depend on -t.
#[test]
fn reads_over_the_locate_cap_report_real_hits() {
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    let mut rng = Rng::new(99);
    let seq = &refs[0].seq;
    let reads: Vec<FqRead> = (0..60)
        .map(|i| {
            let len = rng.range(3, 5) as usize;
            let p = rng.below((seq.len() - len) as u64) as usize;
            let s = seq[p..p + len].to_vec();
            FqRead {
                name: format!("short{i}"),
                qual: vec![b'I'; s.len()],
                seq: s,
            }
        })
        .collect();
    std::fs::write(d.join("r.fq"), common::fastq_text(&reads)).unwrap();
    run_ok(d, &["index", "lambda_virus.fa"], None);
    for (mode, per_read) in [(vec![], 1usize), (vec!["-k", "3"], 3)] {
        let mut args = vec!["map", "--max-locate", "20", "-t", "1"];
        args.extend(&mode);
        args.extend(["-v", "0", "lambda_virus.fa", "r.fq"]);
        let one = stdout_of(d, &args);
        args[4] = "2";
        assert_eq!(stdout_of(d, &args), one, "output depends on -t");
        let (_, recs) = common::parse_sam(&one);
        for r in &reads {
            let want = common::oracle(&refs, &r.seq);
            assert!(
                want.len() > 20,
                "test read {} should exceed the cap",
                r.name
            );
            let got: Vec<&common::SamRec> = recs.iter().filter(|x| x.qname == r.qname()).collect();
            assert_eq!(got.len(), per_read.min(want.len()), "{}", r.name);
            let mut placed = Vec::new();
            for x in &got {
                let hit = (0u32, x.pos - 1, x.flag & 16 != 0);
                assert!(want.contains(&hit), "{}: {hit:?} is not a hit", r.name);
                assert!(!placed.contains(&hit), "{}: {hit:?} reported twice", r.name);
                placed.push(hit);
                assert_eq!(x.tag("X0"), Some(want.len().to_string().as_str()));
                assert_eq!(x.mapq, 0);
                assert!(x.tag("XA").is_none());
            }
            assert_eq!(got[0].flag & 256, 0);
        }
        // Without the cap, the same reads are located in full: same X0.
        let mut full = args.clone();
        full[2] = "1000000";
        let (_, recs_full) = common::parse_sam(&stdout_of(d, &full));
        for (a, b) in recs.iter().zip(&recs_full) {
            assert_eq!(a.tag("X0"), b.tag("X0"));
        }
    }
}

/// A FASTA changed after its index was built: `map REF.fa` warns (and still
/// maps, as the index is valid in itself); an up-to-date pair gives no warning.
#[test]
fn stale_index_warns() {
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    let reads = lambda_reads(&refs);
    std::fs::write(d.join("r.fq"), common::fastq_text(&reads)).unwrap();
    run_ok(d, &["index", "-q", "lambda_virus.fa"], None);
    let fresh = run_ok(d, &["map", "-q", "lambda_virus.fa", "r.fq"], None);
    assert!(!String::from_utf8_lossy(&fresh.stderr).contains("newer"));
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    let f = std::fs::File::options()
        .write(true)
        .open(d.join("lambda_virus.fa"))
        .unwrap();
    f.set_modified(later).unwrap();
    let stale = run_ok(d, &["map", "-q", "lambda_virus.fa", "r.fq"], None);
    let err = String::from_utf8_lossy(&stale.stderr);
    assert!(
        err.contains("lambda_virus.fa is newer than its index"),
        "{err}"
    );
    assert_eq!(stale.stdout, fresh.stdout);
}

/// Paths need not be UTF-8 (Linux file names are bytes) nor ASCII: a
/// reference and an output named with the byte 0xff and reads named in
/// UTF-8 work like any others, and @PG CL shows each character outside
/// ASCII as '?'. A byte that is not UTF-8 once made `map` panic building CL
/// from `std::env::args()`, and a UTF-8 one failed noodles' header check.
#[test]
fn paths_that_are_not_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    let name = |s: &[u8]| OsStr::from_bytes(s).to_owned();
    let (fa, fq, out) = (
        name(b"\xffref.fa"),
        name("r\u{e9}ads.fq".as_bytes()),
        name(b"\xffout.sam"),
    );
    std::fs::copy(d.join("lambda_virus.fa"), d.join(&fa)).unwrap();
    let reads = common::sample_reads(&mut Rng::new(3), &refs, 50);
    std::fs::write(d.join(&fq), common::fastq_text(&reads)).unwrap();
    run_ok(d, &[OsStr::new("index"), OsStr::new("-q"), &fa], None);
    run_ok(d, &["index", "-q", "lambda_virus.fa"], None);
    let fastq = common::fastq_text(&reads);
    let plain = run_ok(d, &["map", "-q", "lambda_virus.fa", "-"], Some(&fastq));
    let stdout = run_ok(d, &[OsStr::new("map"), OsStr::new("-q"), &fa, &fq], None).stdout;
    run_ok(
        d,
        &[
            OsStr::new("map"),
            OsStr::new("-q"),
            OsStr::new("-o"),
            &out,
            &fa,
            &fq,
        ],
        None,
    );
    let written = std::fs::read(d.join(&out)).unwrap();
    assert!(without_pg(&written) == without_pg(&stdout), "-o differs");
    assert!(
        without_pg(&stdout) == without_pg(&plain.stdout),
        "records differ"
    );
    let text = String::from_utf8(stdout).unwrap();
    let pg = text.lines().find(|l| l.starts_with("@PG")).unwrap();
    assert!(
        pg.contains("\tCL:") && pg.contains(" ?ref.fa r?ads.fq"),
        "{pg}"
    );
    for args in [["info"], ["check"]] {
        run_ok(d, &[OsStr::new(args[0]), &fa], None);
    }
}

/// An output never replaces an input or a link: `index -p` naming the FASTA
/// and `map -o` naming the reads or the index are errors that leave them
/// as they were; `-p`/`-o` through a symbolic link write its target and
/// keep the link; `-p` naming a directory or a FIFO is an error (the index
/// is renamed into place); `-o -` is stdout; `-o` names promising CRAM or
/// compressed SAM are errors, not SAM under that name.
#[cfg(unix)]
#[test]
fn outputs_never_replace_inputs_or_links() {
    let (dir, _) = setup("lambda_virus.fa");
    let d = dir.path();
    let fa = std::fs::read(d.join("lambda_virus.fa")).unwrap();
    let refused = |args: &[&str], says: &str| {
        let out = common::run_in(d, args, None);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(1) && err.contains(says),
            "{}",
            common::describe(args, &out)
        );
    };
    refused(
        &["index", "-q", "-p", "lambda_virus.fa", "lambda_virus.fa"],
        "this is the reference",
    );
    std::os::unix::fs::symlink("lambda_virus.fa", d.join("ref.link")).unwrap();
    refused(
        &["index", "-q", "-p", "ref.link", "lambda_virus.fa"],
        "this is the reference",
    );
    assert!(std::fs::read(d.join("lambda_virus.fa")).unwrap() == fa);
    std::fs::create_dir(d.join("store")).unwrap();
    refused(
        &["index", "-q", "-p", "store", "lambda_virus.fa"],
        "not a regular file",
    );
    let fifo = std::process::Command::new("mkfifo")
        .arg(d.join("fifo"))
        .status();
    if fifo.is_ok_and(|s| s.success()) {
        refused(
            &["index", "-q", "-p", "fifo", "lambda_virus.fa"],
            "not a regular file",
        );
    }
    // Through a link (to a file not there yet): the target, the link kept.
    run_ok(d, &["index", "-q", "lambda_virus.fa"], None);
    std::os::unix::fs::symlink("store/real.fmi", d.join("link.fmi")).unwrap();
    run_ok(
        d,
        &["index", "-q", "-p", "link.fmi", "lambda_virus.fa"],
        None,
    );
    let meta = std::fs::symlink_metadata(d.join("link.fmi")).unwrap();
    assert!(meta.file_type().is_symlink(), "the link was replaced");
    assert!(
        std::fs::read(d.join("store/real.fmi")).unwrap()
            == std::fs::read(d.join("lambda_virus.fa.fmi")).unwrap()
    );

    let fq = b"@r\nGGGCGGCGACCTCGCGGGTTTTCGCTATTTATGAAAATTTTCCGGTTTAAGGCGTTTCCGTTCTTCTTCGTC\n+\nIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\n";
    std::fs::write(d.join("r.fq"), fq).unwrap();
    let idx = std::fs::read(d.join("lambda_virus.fa.fmi")).unwrap();
    refused(
        &["map", "-q", "-o", "r.fq", "lambda_virus.fa.fmi", "r.fq"],
        "would destroy it",
    );
    refused(
        &[
            "map",
            "-q",
            "-o",
            "lambda_virus.fa.fmi",
            "lambda_virus.fa",
            "r.fq",
        ],
        "would destroy it",
    );
    assert!(std::fs::read(d.join("r.fq")).unwrap() == fq);
    assert!(std::fs::read(d.join("lambda_virus.fa.fmi")).unwrap() == idx);
    for name in ["out.cram", "out.sam.gz", "out.bgz"] {
        refused(
            &["map", "-q", "-o", name, "lambda_virus.fa.fmi", "r.fq"],
            "is not written",
        );
        assert!(!d.join(name).exists());
    }
    let plain = stdout_of(d, &["map", "-q", "lambda_virus.fa.fmi", "r.fq"]);
    let dash = stdout_of(d, &["map", "-q", "-o", "-", "lambda_virus.fa.fmi", "r.fq"]);
    assert!(without_pg(&dash) == without_pg(&plain) && !d.join("-").exists());
    std::os::unix::fs::symlink("store/out.sam", d.join("out.sam")).unwrap();
    run_ok(
        d,
        &["map", "-q", "-o", "out.sam", "lambda_virus.fa.fmi", "r.fq"],
        None,
    );
    let meta = std::fs::symlink_metadata(d.join("out.sam")).unwrap();
    assert!(meta.file_type().is_symlink(), "the link was replaced");
    assert!(without_pg(&std::fs::read(d.join("store/out.sam")).unwrap()) == without_pg(&plain));
}

/// Every output (`-o`, `--un`, `--al`, `--un-conc`, `--al-conc`) is
/// checked against every input (the reads, the mates, the index, the FASTA
/// INDEX was given as) through links and hard links, and against the other
/// outputs, before any work: the inputs stay byte for byte, and no file is
/// left behind. Outputs that are pipes or devices are written in place:
/// `-o /dev/stdout` into a pipe, `--un /dev/stdout`, several outputs to
/// /dev/null.
#[cfg(unix)]
#[test]
fn every_output_is_checked_against_every_input() {
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    run_ok(d, &["index", "-q", "lambda_virus.fa"], None);
    let mut rng = Rng::new(39);
    let mut reads = common::sample_reads(&mut rng, &refs, 40);
    // Some reads that map nowhere, for --un.
    for (i, r) in reads.iter_mut().enumerate().take(10) {
        r.seq = (0..r.seq.len())
            .map(|k| b"ACGT"[((k * 7 + i * 3) % 4) ^ ((k / 5) % 2)])
            .collect();
    }
    let fq = common::fastq_text(&reads);
    for name in ["r.fq", "s_1.fq", "s_2.fq"] {
        std::fs::write(d.join(name), &fq).unwrap();
    }
    std::os::unix::fs::symlink("r.fq", d.join("link.fq")).unwrap();
    std::fs::hard_link(d.join("r.fq"), d.join("hard.fq")).unwrap();
    let before = common::list_dir(d);
    let contents: Vec<Vec<u8>> = before
        .iter()
        .map(|n| std::fs::read(d.join(n)).unwrap_or_default())
        .collect();
    let refused = |args: &[&str], says: &str| {
        let out = common::run_in(d, args, None);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(1) && err.contains(says) && out.stdout.is_empty(),
            "{}",
            common::describe(args, &out)
        );
    };
    let fa = "lambda_virus.fa";
    let fmi = "lambda_virus.fa.fmi";
    let destroy = "writing there would destroy it";
    let same = "are the same file";
    refused(&["map", "-q", "--un", "r.fq", fa, "r.fq"], destroy);
    refused(&["map", "-q", "--al", "hard.fq", fa, "r.fq"], destroy);
    refused(&["map", "-q", "--un", "link.fq", fa, "r.fq"], destroy);
    refused(&["map", "-q", "--un", fmi, fa, "r.fq"], destroy);
    refused(&["map", "-q", "--al", fa, fa, "r.fq"], destroy);
    refused(&["map", "-q", "-o", fa, fa, "r.fq"], destroy);
    refused(&["map", "-q", "-o", "hard.fq", fmi, "link.fq"], destroy);
    refused(
        &["map", "-q", "--un-conc", "s_%.fq", fa, "s_1.fq", "s_2.fq"],
        destroy,
    );
    refused(
        &["map", "-q", "--al-conc", "s_%.fq", fa, "r.fq", "s_1.fq"],
        destroy,
    );
    refused(
        &["map", "-q", "--un", "o.sam", "-o", "o.sam", fa, "r.fq"],
        same,
    );
    refused(
        &["map", "-q", "--un", "u.fq", "--al", "./u.fq", fa, "r.fq"],
        same,
    );
    refused(&["map", "-q", "--un", "-", fa, "r.fq"], same);
    refused(
        &[
            "map",
            "-q",
            "--un-conc",
            "p.fq",
            "--al-conc",
            "p.fq",
            fa,
            "s_1.fq",
            "s_2.fq",
        ],
        same,
    );
    assert_eq!(common::list_dir(d), before, "a file was left");
    for (n, c) in before.iter().zip(&contents) {
        assert!(
            std::fs::read(d.join(n)).unwrap_or_default() == *c,
            "{n} changed"
        );
    }
    // Pipes and devices are written in place (run_in's stdout is a pipe).
    let plain = stdout_of(d, &["map", "-q", fmi, "r.fq"]);
    let piped = stdout_of(d, &["map", "-q", "-o", "/dev/stdout", fmi, "r.fq"]);
    assert!(without_pg(&piped) == without_pg(&plain), "-o /dev/stdout");
    run_ok(
        d,
        &["map", "-q", "--un", "un.fq", "-o", "/dev/null", fmi, "r.fq"],
        None,
    );
    let un = stdout_of(
        d,
        &[
            "map",
            "-q",
            "--un",
            "/dev/stdout",
            "-o",
            "/dev/null",
            fmi,
            "r.fq",
        ],
    );
    assert!(
        !un.is_empty() && un == std::fs::read(d.join("un.fq")).unwrap(),
        "--un /dev/stdout"
    );
    run_ok(
        d,
        &[
            "map",
            "-q",
            "--un",
            "/dev/null",
            "--al",
            "/dev/null",
            "-o",
            "/dev/null",
            fmi,
            "r.fq",
        ],
        None,
    );
}

/// `index -p` into a directory that does not exist fails before the
/// reference is read (it failed after the suffix array), and `index -`
/// says the reference must be a file.
#[test]
fn index_output_checked_before_the_work() {
    let (dir, _) = setup("lambda_virus.fa");
    let d = dir.path();
    let before = common::list_dir(d);
    for (args, says) in [
        (
            &["index", "-p", "no/such/dir/x.fmi", "lambda_virus.fa"][..],
            "no/such/dir/x.fmi",
        ),
        (&["index", "-"][..], "the reference must be a file"),
    ] {
        let out = common::run_in(d, args, Some(b">a\nACGT\n"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            common::describe(args, &out)
        );
        assert!(err.contains(says), "{err}");
        assert!(
            !err.contains("read 1 sequences"),
            "the reference was read first: {err}"
        );
    }
    assert_eq!(common::list_dir(d), before);
}

/// Both mates from named pipes: each input is opened once (nothing opens
/// a FIFO to peek at it, which would lose what its writer sent or block),
/// and the SAM is the one from the files.
#[cfg(unix)]
#[test]
fn mates_from_named_pipes() {
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    run_ok(d, &["index", "-q", "lambda_virus.fa"], None);
    // 100-base windows: more than a pipe holds (64 KiB), quick to map.
    let seq = &refs[0].seq;
    let reads: Vec<FqRead> = (0..3000)
        .map(|i| FqRead {
            name: format!("p{i}"),
            seq: seq[i * 13..i * 13 + 100].to_vec(),
            qual: vec![b'I'; 100],
        })
        .collect();
    let fq = common::fastq_text(&reads);
    std::fs::write(d.join("a.fq"), &fq).unwrap();
    std::fs::write(d.join("b.fq"), &fq).unwrap();
    let want = stdout_of(d, &["map", "-q", "lambda_virus.fa.fmi", "a.fq", "b.fq"]);
    for round in 0..5 {
        for f in ["f1", "f2"] {
            let _ = std::fs::remove_file(d.join(f));
            let ok = std::process::Command::new("mkfifo").arg(d.join(f)).status();
            if !ok.is_ok_and(|s| s.success()) {
                return;
            }
        }
        let writers: Vec<_> = ["f1", "f2"]
            .iter()
            .map(|f| {
                let (path, text) = (d.join(f), fq.clone());
                std::thread::spawn(move || std::fs::write(path, text))
            })
            .collect();
        let got = stdout_of(d, &["map", "-q", "lambda_virus.fa.fmi", "f1", "f2"]);
        for w in writers {
            w.join().unwrap().unwrap();
        }
        assert!(
            without_pg(&got) == without_pg(&want),
            "round {round}: the SAM differs"
        );
    }
}

/// `-t` beyond the CPUs the process may run on is capped to them, said
/// once on stderr (without -q), and changes nothing in the output.
#[test]
fn threads_beyond_the_cpus_are_capped() {
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    let cpus = std::thread::available_parallelism().unwrap().get();
    let many = (cpus * 1000).to_string();
    let out = run_ok(
        d,
        &["index", "-t", &many, "-p", "a.fmi", "lambda_virus.fa"],
        None,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let said = format!("-t {many}: this process may run on {cpus} CPUs; using {cpus} threads");
    assert_eq!(err.matches(&said).count(), 1, "{err}");
    run_ok(
        d,
        &["index", "-q", "-t", "1", "-p", "b.fmi", "lambda_virus.fa"],
        None,
    );
    assert!(std::fs::read(d.join("a.fmi")).unwrap() == std::fs::read(d.join("b.fmi")).unwrap());
    let reads = common::sample_reads(&mut Rng::new(5), &refs, 200);
    std::fs::write(d.join("r.fq"), common::fastq_text(&reads)).unwrap();
    let out = run_ok(d, &["map", "-t", &many, "a.fmi", "r.fq"], None);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).matches(&said).count(),
        1
    );
    let one = stdout_of(d, &["map", "-q", "-t", "1", "a.fmi", "r.fq"]);
    assert!(without_pg(&out.stdout) == without_pg(&one));
    let quiet = run_ok(d, &["map", "-q", "-t", &many, "a.fmi", "r.fq"], None);
    assert!(
        quiet.stderr.is_empty(),
        "-q: {}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}

/// Single reads are named in SAM as bwa names them: a trailing `/1` or
/// `/2` dropped (other suffixes kept), so mates mapped one file at a time
/// share their QNAME; in every mode.
#[test]
fn single_reads_drop_mate_suffixes() {
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    run_ok(d, &["index", "-q", "lambda_virus.fa"], None);
    let seq = refs[0].seq[1000..1070].to_vec();
    let reads: Vec<FqRead> = ["a/1", "a/2", "b/3", "c/12", "d"]
        .iter()
        .map(|n| FqRead {
            name: n.to_string(),
            qual: vec![b'I'; seq.len()],
            seq: seq.clone(),
        })
        .collect();
    std::fs::write(d.join("r.fq"), common::fastq_text(&reads)).unwrap();
    for mode in [
        &[][..],
        &["-v", "1"][..],
        &["--end-to-end"][..],
        &["--local"][..],
    ] {
        let mut args = vec!["map", "-q"];
        args.extend_from_slice(mode);
        args.extend_from_slice(&["lambda_virus.fa.fmi", "r.fq"]);
        let (_, recs) = common::parse_sam(&stdout_of(d, &args));
        let names: Vec<&str> = recs.iter().map(|r| r.qname.as_str()).collect();
        assert_eq!(names, ["a", "a", "b/3", "c/12", "d"], "{mode:?}");
    }
}

/// Spaces and tabs in sequence lines (trailing ones in hand-edited FASTA)
/// are skipped, as samtools faidx and dict skip them: the index is the one
/// of the same FASTA without them, byte for byte, whole-text and in parts,
/// and the @SQ M5 is samtools dict's (when samtools is installed).
/// What bwa skips before the first header — a UTF-8 byte-order mark, blank
/// lines, `;` comment lines — is skipped: the index (whole and in parts,
/// plain and gzip) is the clean FASTA's, and `check` matches the file.
#[test]
fn a_preamble_before_the_first_header_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng::new(23);
    let mut clean = b">a\n".to_vec();
    for l in rng.bases(700).chunks(70) {
        clean.extend_from_slice(l);
        clean.push(b'\n');
    }
    clean.extend_from_slice(b">b\nNNACGTTGCA\n");
    let pre = [&b"\xef\xbb\xbf\n; made by hand\n \t\r\n;\n"[..], &clean].concat();
    std::fs::write(d.join("clean.fa"), &clean).unwrap();
    std::fs::write(d.join("pre.fa"), &pre).unwrap();
    std::fs::write(d.join("pre.fa.gz"), common::gzip(&pre)).unwrap();
    run_ok(d, &["index", "-q", "clean.fa"], None);
    let want = std::fs::read(d.join("clean.fa.fmi")).unwrap();
    for (name, extra) in [
        ("pre.fa", &[][..]),
        ("pre.fa.gz", &[][..]),
        ("pre.fa", &["--max-part", "100", "-p", "parts.fmi"][..]),
    ] {
        let mut args = vec!["index", "-q"];
        args.extend_from_slice(extra);
        args.push(name);
        run_ok(d, &args, None);
        let out = extra
            .last()
            .filter(|_| !extra.is_empty())
            .map_or(format!("{name}.fmi"), |p| p.to_string());
        assert!(
            std::fs::read(d.join(&out)).unwrap() == want,
            "{name} {extra:?}"
        );
    }
    run_ok(d, &["check", "pre.fa"], None);
}

#[test]
fn spaces_in_sequence_lines_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng::new(21);
    let (a, b) = (rng.bases(500), rng.bases(300));
    let lines = |s: &[u8], pad: bool| -> Vec<u8> {
        let mut out = Vec::new();
        for (k, l) in s.chunks(60).enumerate() {
            out.extend_from_slice(l);
            if pad {
                out.extend_from_slice([&b"  "[..], b"\t", b" \t "][k % 3]);
            }
            out.push(b'\n');
        }
        out
    };
    for (name, pad) in [("clean.fa", false), ("spaced.fa", true)] {
        let mut fa = b">a\n".to_vec();
        fa.extend(lines(&a, pad));
        fa.extend_from_slice(b">b desc\n");
        fa.extend(lines(&b, pad));
        std::fs::write(d.join(name), fa).unwrap();
        run_ok(d, &["index", "-q", name], None);
        let parts = format!("{name}.parts.fmi");
        run_ok(
            d,
            &["index", "-q", "--max-part", "100", "-p", &parts, name],
            None,
        );
        assert!(
            std::fs::read(d.join(&parts)).unwrap()
                == std::fs::read(d.join(format!("{name}.fmi"))).unwrap()
        );
    }
    let index = |n: &str| std::fs::read(d.join(n)).unwrap();
    assert!(index("clean.fa.fmi") == index("spaced.fa.fmi"));
    if common::have_samtools() {
        let dict = String::from_utf8(samtools(d, &["dict", "spaced.fa"])).unwrap();
        let sam = stdout_of(d, &["map", "-q", "spaced.fa", "-"]);
        let m5 = |text: &str| -> Vec<String> {
            text.lines()
                .filter(|l| l.starts_with("@SQ"))
                .flat_map(|l| l.split('\t').filter(|f| f.starts_with("M5:")))
                .map(String::from)
                .collect()
        };
        assert_eq!(m5(&String::from_utf8_lossy(&sam)), m5(&dict));
    }
}

/// `check REF.fa` (the FASTA, not the index) also compares the FASTA with
/// the index it names: ok while it is the same, an error naming the FASTA
/// and the sequence once a base is changed (even with an old modification
/// time, which hides the change from the staleness warning), or a sequence
/// added; `check INDEX` does not read the FASTA.
#[test]
fn check_given_the_fasta_compares_it() {
    let (dir, refs) = setup("lambda_virus.fa");
    let d = dir.path();
    run_ok(d, &["index", "-q", "lambda_virus.fa"], None);
    for args in [&["check"][..], &["check", "--full"][..]] {
        let out = run_ok(d, &[args, &["lambda_virus.fa"]].concat(), None);
        assert!(String::from_utf8_lossy(&out.stdout).contains("lambda_virus.fa matches"));
    }
    let name = &refs[0].name;
    let mut seq = refs[0].seq.clone();
    seq[1000] = if seq[1000] == b'A' { b'C' } else { b'A' };
    let edited = format!(">{name}\n{}\n", String::from_utf8_lossy(&seq));
    std::fs::write(d.join("lambda_virus.fa"), &edited).unwrap();
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30);
    std::fs::File::options()
        .write(true)
        .open(d.join("lambda_virus.fa"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    for args in [&["check"][..], &["check", "--full"][..]] {
        let out = common::run_in(d, &[args, &["lambda_virus.fa"]].concat(), None);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(1)
                && err.contains("lambda_virus.fa: sequence")
                && err.contains(name.as_str())
                && err.contains("MD5"),
            "{err}"
        );
    }
    // The index itself is fine, and checking it alone does not read the FASTA.
    run_ok(d, &["check", "--full", "lambda_virus.fa.fmi"], None);
    let added = format!("{edited}>extra\nACGTACGT\n");
    std::fs::write(
        d.join("lambda_virus.fa"),
        refs_text(&refs) + &added[edited.len()..],
    )
    .unwrap();
    let out = common::run_in(d, &["check", "lambda_virus.fa"], None);
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 sequences, the index has 1"));
}

fn refs_text(refs: &[RefSeq]) -> String {
    refs.iter()
        .map(|r| format!(">{}\n{}\n", r.name, String::from_utf8_lossy(&r.seq)))
        .collect()
}
