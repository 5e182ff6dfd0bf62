//! Reads of 100 kb (and a whole 48.5 kb genome) through `fmalign map`, exact
//! and with `-v 2`, against the naive oracle: located on the right strand and
//! position, with intact SEQ and QUAL, and the same output for any thread
//! count and batch size.

mod common;

use common::{FqRead, Rng, fastq_text, oracle, parse_fasta, parse_sam, revcomp, run_ok, test_data};

#[test]
fn hundred_kb_reads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // E. coli: 4.6 Mbp; reads of 100 kb from it, both strands, one with two
    // substitutions, one random, and lambda whole (48.5 kb).
    let ecoli = std::fs::read(test_data("ecoli_K12_MG1655.fa.gz")).unwrap();
    std::fs::write(d.join("ref.fa.gz"), &ecoli).unwrap();
    let refs = parse_fasta(&common::read_maybe_gz(&d.join("ref.fa.gz")));
    let genome = &refs[0].seq;
    let mut rng = Rng::new(100);
    let mut reads = Vec::new();
    for k in 0..4 {
        let at = rng.below((genome.len() - 100_000) as u64) as usize;
        let mut seq = genome[at..at + 100_000].to_vec();
        if k % 2 == 1 {
            seq = revcomp(&seq);
        }
        reads.push(FqRead {
            name: format!("exact{k}"),
            qual: rng.qual(seq.len()),
            seq,
        });
    }
    let at = rng.below((genome.len() - 100_000) as u64) as usize;
    let mut two = genome[at..at + 100_000].to_vec();
    for p in [10usize, 77_777] {
        two[p] = if two[p] == b'A' { b'C' } else { b'A' };
    }
    reads.push(FqRead {
        name: "two-mismatches".into(),
        qual: rng.qual(two.len()),
        seq: two,
    });
    let random = rng.bases(100_000);
    reads.push(FqRead {
        name: "random".into(),
        qual: rng.qual(random.len()),
        seq: random,
    });
    let lambda = parse_fasta(&std::fs::read(test_data("lambda_virus.fa")).unwrap());
    reads.push(FqRead {
        name: "lambda".into(),
        qual: rng.qual(lambda[0].seq.len()),
        seq: lambda[0].seq.clone(),
    });
    std::fs::write(d.join("r.fq"), fastq_text(&reads)).unwrap();
    run_ok(d, &["index", "-q", "-t", "2", "ref.fa.gz"], None);
    let mut outputs = Vec::new();
    for (v, t, batch) in [
        ("0", "1", "1000"),
        ("2", "2", "100000000"),
        ("2", "1", "1000"),
    ] {
        let out = run_ok(
            d,
            &[
                "map",
                "-q",
                "-v",
                v,
                "-t",
                t,
                "-K",
                batch,
                "ref.fa.gz",
                "r.fq",
            ],
            None,
        );
        let (_, recs) = parse_sam(&out.stdout);
        assert_eq!(recs.len(), reads.len(), "-v {v}");
        for (read, rec) in reads.iter().zip(&recs) {
            assert_eq!(rec.qname, read.qname());
            let want = oracle(&refs, &read.seq);
            match read.name.as_str() {
                "two-mismatches" if v == "2" => {
                    assert_eq!(
                        (rec.pos, rec.flag & 16),
                        (at as u64 + 1, 0),
                        "{}",
                        read.name
                    );
                    assert_eq!(rec.tag("NM"), Some("2"));
                }
                _ if want.is_empty() => assert!(rec.unmapped(), "{} -v {v}", read.name),
                _ => {
                    let (c, p, rev) = want[0];
                    assert_eq!(want.len(), 1, "{}", read.name);
                    assert_eq!(
                        (rec.rname.as_str(), rec.pos, rec.reverse()),
                        (refs[c as usize].name.as_str(), p + 1, rev),
                        "{} -v {v}",
                        read.name
                    );
                    // SEQ as on the forward strand, QUAL reversed with it.
                    let seq = if rev {
                        revcomp(&read.seq)
                    } else {
                        read.seq.clone()
                    };
                    assert_eq!(rec.seq, seq);
                    let mut qual = read.qual.clone();
                    if rev {
                        qual.reverse();
                    }
                    assert_eq!(rec.qual, qual);
                }
            }
        }
        if v == "2" {
            outputs.push(out.stdout);
        }
    }
    assert!(outputs[0] == outputs[1], "-v 2: -t/-K change the output");
}
