//! What a pipeline step needs of `fmalign map`: read groups (`-R`,
//! `--rg-id`/`--rg`), `--no-unal`, and help texts that read as plain words.

mod common;

use common::*;

/// lambda, indexed, with reads: 20 sampled from it (mapped), 5 random
/// (unmapped).
fn setup() -> (tempfile::TempDir, Vec<FqRead>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(test_data("lambda_virus.fa"), dir.path().join("ref.fa")).unwrap();
    run_ok(dir.path(), &["index", "-q", "ref.fa"], None);
    let refs = parse_fasta(&std::fs::read(dir.path().join("ref.fa")).unwrap());
    let mut rng = Rng::new(23);
    let seq = &refs[0].seq;
    let mut reads: Vec<FqRead> = (0..20)
        .map(|i| {
            let at = rng.below((seq.len() - 100) as u64) as usize;
            let w = seq[at..at + 100].to_vec();
            FqRead {
                name: format!("r{i}"),
                seq: if i % 2 == 0 { w } else { revcomp(&w) },
                qual: vec![b'I'; 100],
            }
        })
        .collect();
    for i in 0..5 {
        reads.push(FqRead {
            name: format!("junk{i}"),
            seq: rng.bases(60),
            qual: vec![b'I'; 60],
        });
    }
    std::fs::write(dir.path().join("r.fq"), fastq_text(&reads)).unwrap();
    (dir, reads)
}

/// -R in bwa's syntax (`\t` escapes) and with literal tabs, and
/// --rg-id/--rg: the header line as given, before @PG; RG:Z:<ID> on every
/// record, in SAM and BAM (samtools view -r keeps them all).
#[test]
fn read_group_in_header_and_on_every_record() {
    let (dir, reads) = setup();
    let want = "@RG\tID:s1\tSM:a\tPL:ILLUMINA";
    for (args, line) in [
        (vec!["-R", r"@RG\tID:s1\tSM:a\tPL:ILLUMINA"], want),
        (vec!["-R", want], want),
        (
            vec!["--rg-id", "s1", "--rg", "SM:a", "--rg", "PL:ILLUMINA"],
            want,
        ),
        (
            vec!["--local", "-R", r"@RG\tID:s1\tSM:a\tPL:ILLUMINA"],
            want,
        ),
    ] {
        let mut all = vec!["map", "-q"];
        all.extend(&args);
        all.extend(["ref.fa", "r.fq"]);
        let out = run_ok(dir.path(), &all, None).stdout;
        let (header, recs) = parse_sam(&out);
        let rg: Vec<&String> = header.iter().filter(|h| h.starts_with("@RG")).collect();
        assert_eq!(rg, vec![line], "{args:?}");
        let rg_at = header.iter().position(|h| h.starts_with("@RG")).unwrap();
        let pg_at = header.iter().position(|h| h.starts_with("@PG")).unwrap();
        assert!(rg_at < pg_at);
        assert_eq!(recs.len(), reads.len());
        for r in &recs {
            assert_eq!(r.tag("RG"), Some("s1"), "{r:?}");
        }
        if have_samtools() {
            let mut bam = all.clone();
            bam.splice(2..2, ["-o", "o.bam"]);
            run_ok(dir.path(), &bam, None);
            samtools(dir.path(), &["quickcheck", "o.bam"]);
            let h = String::from_utf8(samtools(dir.path(), &["view", "-H", "o.bam"])).unwrap();
            assert!(h.contains(&format!("{line}\n")), "{h}");
            let kept = samtools(dir.path(), &["view", "-c", "-r", "s1", "o.bam"]);
            assert_eq!(
                String::from_utf8(kept).unwrap().trim(),
                reads.len().to_string()
            );
        }
    }
}

/// Malformed read groups are errors that say why.
#[test]
fn bad_read_groups() {
    let (dir, _) = setup();
    for (rg, why) in [
        (r"ID:s1\tSM:a", "must start with @RG"),
        (r"@RG\tSM:a", "has no ID"),
        ("@RG\tID:a\nSM:b", "newline"),
        (r"@RG\tID:a\nSM:b", "newline"),
        (r"@RG\tID:a\tID:b", "appears twice"),
        (r"@RG\tID:a\tSM", "is not TAG:VALUE"),
    ] {
        let args = ["map", "-q", "-R", rg, "ref.fa", "r.fq"];
        let out = run_in(dir.path(), &args, None);
        assert!(!out.status.success(), "{}", describe(&args, &out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{}", describe(&args, &out));
    }
}

/// --no-unal drops exactly the unmapped records; for pairs, a pair keeps
/// both records when one mate aligned.
#[test]
fn no_unal_drops_unaligned_records() {
    let (dir, reads) = setup();
    let all = run_ok(dir.path(), &["map", "-q", "ref.fa", "r.fq"], None).stdout;
    let kept = run_ok(
        dir.path(),
        &["map", "-q", "--no-unal", "ref.fa", "r.fq"],
        None,
    )
    .stdout;
    let (_, all) = parse_sam(&all);
    let (_, kept) = parse_sam(&kept);
    let mapped: Vec<&SamRec> = all.iter().filter(|r| !r.unmapped()).collect();
    assert_eq!(mapped.len(), 20);
    assert_eq!(kept.iter().collect::<Vec<_>>(), mapped);
    // Pairs: mate 2 of the first five pairs is junk.
    let m1: Vec<FqRead> = reads[..10].to_vec();
    let mut m2: Vec<FqRead> = reads[10..20].to_vec();
    for (k, r) in m2.iter_mut().enumerate() {
        if k < 5 {
            r.seq = reads[20 + k].seq.clone();
            r.qual = reads[20 + k].qual.clone();
        }
    }
    let names = |v: &[FqRead], s: &str| -> Vec<FqRead> {
        v.iter()
            .enumerate()
            .map(|(i, r)| FqRead {
                name: format!("p{i}/{s}"),
                ..r.clone()
            })
            .collect()
    };
    std::fs::write(dir.path().join("a.fq"), fastq_text(&names(&m1, "1"))).unwrap();
    std::fs::write(dir.path().join("b.fq"), fastq_text(&names(&m2, "2"))).unwrap();
    let args = [
        "map",
        "-q",
        "--no-unal",
        "-X",
        "100000",
        "ref.fa",
        "a.fq",
        "b.fq",
    ];
    let (_, recs) = parse_sam(&run_ok(dir.path(), &args, None).stdout);
    assert_eq!(
        recs.len(),
        20,
        "every pair has an aligned mate 1: both records kept"
    );
    assert_eq!(recs.iter().filter(|r| r.unmapped()).count(), 5);
    // Both mates junk: no records.
    std::fs::write(
        dir.path().join("a.fq"),
        fastq_text(&names(&reads[20..25], "1")),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.fq"),
        fastq_text(&names(&reads[20..25], "2")),
    )
    .unwrap();
    let (_, recs) = parse_sam(&run_ok(dir.path(), &args, None).stdout);
    assert!(recs.is_empty(), "{recs:?}");
}

/// Every subcommand's help reads as plain words and numbers: no rustdoc
/// links or paths.
#[test]
fn help_texts_are_plain() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in ["index", "map", "info", "check"] {
        let out = run_ok(dir.path(), &[cmd, "--help"], None).stdout;
        let text = String::from_utf8(out).unwrap();
        for bad in ["[`", "`]", "crate::", "::", "[GPU_AUTO"] {
            assert!(
                !text.contains(bad),
                "fmalign {cmd} --help shows {bad:?}:\n{text}"
            );
        }
    }
}

/// The number before the line of stderr that ends with `tail`.
fn count(stderr: &str, tail: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.trim_end().ends_with(tail))
        .unwrap_or_else(|| panic!("no line ending {tail:?} in\n{stderr}"));
    line.split_whitespace().next().unwrap().parse().unwrap()
}

/// The summary on stderr has bowtie2's lines (what MultiQC's bowtie2 module
/// parses) and counts that agree with the records; -q leaves it out.
#[test]
fn summary_agrees_with_the_records() {
    let (dir, reads) = setup();
    let out = run_ok(dir.path(), &["map", "ref.fa", "r.fq"], None);
    let err = String::from_utf8(out.stderr).unwrap();
    let (_, recs) = parse_sam(&out.stdout);
    let mapped = recs.iter().filter(|r| !r.unmapped()).count() as u64;
    assert_eq!(count(&err, "reads; of these:"), reads.len() as u64);
    assert_eq!(count(&err, "were unpaired; of these:"), reads.len() as u64);
    assert_eq!(count(&err, "aligned 0 times"), reads.len() as u64 - mapped);
    let once = count(&err, "aligned exactly 1 time");
    let multi = count(&err, "aligned >1 times");
    assert_eq!(once + multi, mapped);
    let multi_records = recs
        .iter()
        .filter(|r| r.tag("X0").is_some_and(|x| x != "1"))
        .count() as u64;
    assert_eq!(multi, multi_records);
    assert!(err.contains(&format!(
        "{:.2}% overall alignment rate",
        100.0 * mapped as f64 / reads.len() as f64
    )));
    let quiet = run_ok(dir.path(), &["map", "-q", "ref.fa", "r.fq"], None);
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
    // Pairs (gapped): concordant pairs are the records flagged 0x2.
    let (m1, m2): (Vec<FqRead>, Vec<FqRead>) = (0..10)
        .map(|i| {
            let a = &reads[2 * i];
            let b = &reads[2 * i + 1];
            (
                FqRead {
                    name: format!("p{i}/1"),
                    ..a.clone()
                },
                FqRead {
                    name: format!("p{i}/2"),
                    ..b.clone()
                },
            )
        })
        .unzip();
    std::fs::write(dir.path().join("a.fq"), fastq_text(&m1)).unwrap();
    std::fs::write(dir.path().join("b.fq"), fastq_text(&m2)).unwrap();
    let args = ["map", "--local", "-X", "50000", "ref.fa", "a.fq", "b.fq"];
    let out = run_ok(dir.path(), &args, None);
    let err = String::from_utf8(out.stderr).unwrap();
    let (_, recs) = parse_sam(&out.stdout);
    let proper = recs.iter().filter(|r| r.flag & 0x902 == 2).count() as u64 / 2;
    assert_eq!(count(&err, "were paired; of these:"), 10);
    let c0 = count(&err, "aligned concordantly 0 times");
    let c1 = count(&err, "aligned concordantly exactly 1 time");
    let cm = count(&err, "aligned concordantly >1 times");
    assert_eq!(c0 + c1 + cm, 10);
    assert_eq!(c1 + cm, proper);
}

/// The names of the FASTQ records in `text`.
fn fastq_names(text: &[u8]) -> Vec<String> {
    parse_fastq(text).into_iter().map(|r| r.name).collect()
}

/// --un/--al: the unaligned and aligned reads as given (names, bases,
/// qualities), in input order, gzip when the name ends in .gz; pairs:
/// --un-conc with a % and --al-conc without, by the proper-pair flag; the
/// wrong kind of option for the input is an error; a failed run leaves no
/// file.
#[test]
fn un_and_al_copy_reads_by_outcome() {
    let (dir, reads) = setup();
    let args = [
        "map", "-q", "--un", "un.fq", "--al", "al.fq.gz", "ref.fa", "r.fq",
    ];
    let out = run_ok(dir.path(), &args, None).stdout;
    let (_, recs) = parse_sam(&out);
    let un = std::fs::read(dir.path().join("un.fq")).unwrap();
    let al = read_maybe_gz(&dir.path().join("al.fq.gz"));
    let by_name = |n: &str| reads.iter().find(|r| r.name == n).unwrap().clone();
    let want_un: Vec<FqRead> = recs
        .iter()
        .filter(|r| r.unmapped())
        .map(|r| by_name(&r.qname))
        .collect();
    let want_al: Vec<FqRead> = recs
        .iter()
        .filter(|r| !r.unmapped())
        .map(|r| by_name(&r.qname))
        .collect();
    assert_eq!(parse_fastq(&un), want_un);
    assert_eq!(parse_fastq(&al), want_al);
    assert_eq!(want_un.len(), 5);
    // Pairs.
    let m1: Vec<FqRead> = (0..12)
        .map(|i| FqRead {
            name: format!("p{i}/1"),
            ..reads[i].clone()
        })
        .collect();
    let m2: Vec<FqRead> = (0..12)
        .map(|i| FqRead {
            name: format!("p{i}/2"),
            ..reads[13 + i % 12].clone()
        })
        .collect();
    std::fs::write(dir.path().join("a.fq"), fastq_text(&m1)).unwrap();
    std::fs::write(dir.path().join("b.fq"), fastq_text(&m2)).unwrap();
    let args = [
        "map",
        "-q",
        "--local",
        "--un-conc",
        "un%.fq",
        "--al-conc",
        "al.fq.gz",
        "-X",
        "5000",
        "ref.fa",
        "a.fq",
        "b.fq",
    ];
    let (_, recs) = parse_sam(&run_ok(dir.path(), &args, None).stdout);
    let proper: Vec<&SamRec> = recs.iter().filter(|r| r.flag & 0x942 == 0x42).collect();
    let improper: Vec<&SamRec> = recs.iter().filter(|r| r.flag & 0x942 == 0x40).collect();
    assert_eq!(proper.len() + improper.len(), 12);
    let names = |v: &[&SamRec], m: u32| -> Vec<String> {
        v.iter().map(|r| format!("{}/{m}", r.qname)).collect()
    };
    let file = |n: &str| read_maybe_gz(&dir.path().join(n));
    assert_eq!(fastq_names(&file("un1.fq")), names(&improper, 1));
    assert_eq!(fastq_names(&file("un2.fq")), names(&improper, 2));
    assert_eq!(fastq_names(&file("al.1.fq.gz")), names(&proper, 1));
    assert_eq!(fastq_names(&file("al.2.fq.gz")), names(&proper, 2));
    let m2_of: Vec<FqRead> = parse_fastq(&file("al.2.fq.gz"));
    for r in &m2_of {
        assert!(m2.contains(r), "mate 2 copied as given: {r:?}");
    }
    // The wrong option for the input.
    for (args, why) in [
        (
            vec!["--un", "x.fq", "ref.fa", "a.fq", "b.fq"],
            "for pairs use --un-conc",
        ),
        (
            vec!["--al-conc", "x.fq", "ref.fa", "r.fq"],
            "for single-end reads use --un",
        ),
    ] {
        let mut all = vec!["map", "-q"];
        all.extend(args);
        let out = run_in(dir.path(), &all, None);
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(why),
            "{}",
            describe(&all, &out)
        );
    }
    // A run that fails (a truncated FASTQ at the end) leaves no copy.
    let mut bad = fastq_text(&reads);
    bad.extend_from_slice(b"@cut\nACGT\n+\n");
    std::fs::write(dir.path().join("bad.fq"), bad).unwrap();
    let all = [
        "map", "-q", "--un", "u2.fq", "--al", "a2.fq", "ref.fa", "bad.fq",
    ];
    let out = run_in(dir.path(), &all, None);
    assert!(!out.status.success(), "{}", describe(&all, &out));
    for f in std::fs::read_dir(dir.path()).unwrap() {
        let n = f.unwrap().file_name().into_string().unwrap();
        assert!(
            !n.starts_with("u2") && !n.starts_with("a2") && !n.contains("tmp"),
            "{n} left behind"
        );
    }
}

/// Compressed reads, as sequencers and pipelines write them: gzip (two
/// members) and BGZF, mapped with one thread and with three (gzip then
/// inflated on a thread of its own, BGZF by parallel workers), give the
/// SAM of the plain file; a truncated gzip or BGZF file is an error that
/// names it, with any thread count.
#[test]
fn compressed_reads_map_as_plain_with_any_threads() {
    use std::io::Write;
    let (dir, _) = setup();
    let plain = std::fs::read(dir.path().join("r.fq")).unwrap();
    let gz = |t: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(t).unwrap();
        e.finish().unwrap()
    };
    let half = plain.len() / 2;
    let two_members = [gz(&plain[..half]), gz(&plain[half..])].concat();
    let mut w = noodles_bgzf::io::Writer::new(Vec::new());
    w.write_all(&plain).unwrap();
    let bgzf = w.finish().unwrap();
    std::fs::write(dir.path().join("r.fq.gz"), &two_members).unwrap();
    std::fs::write(dir.path().join("r.fq.bgz"), &bgzf).unwrap();
    let body = |out: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(out)
            .lines()
            .filter(|l| !l.starts_with("@PG"))
            .map(String::from)
            .collect()
    };
    let want = body(
        &run_ok(
            dir.path(),
            &["map", "-q", "-t", "1", "ref.fa", "r.fq"],
            None,
        )
        .stdout,
    );
    assert!(want.iter().filter(|l| !l.starts_with('@')).count() == 25);
    for file in ["r.fq.gz", "r.fq.bgz"] {
        for threads in ["1", "3"] {
            let got = run_ok(
                dir.path(),
                &["map", "-q", "-t", threads, "ref.fa", file],
                None,
            );
            assert!(body(&got.stdout) == want, "{file} with -t {threads}");
        }
    }
    for (file, bytes) in [("cut.fq.gz", &two_members), ("cut.fq.bgz", &bgzf)] {
        std::fs::write(dir.path().join(file), &bytes[..bytes.len() * 3 / 4]).unwrap();
        for threads in ["1", "3"] {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_fmalign"))
                .current_dir(dir.path())
                .args(["map", "-q", "-t", threads, "ref.fa", file])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success() && err.contains(file),
                "{file} with -t {threads}: {err}"
            );
        }
    }
}
