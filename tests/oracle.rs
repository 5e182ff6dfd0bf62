//! `exact_hits` and `fmalign map -a` against an independent oracle: a naive
//! scan of the reference on both strands that accepts a placement only where
//! the reference window (upper-cased) consists of exactly the read's bases,
//! so it never covers an ambiguous base and never runs across two contigs.
//!
//! Narrow (32-bit) and wide (64-bit) indexes must give the same hits, and
//! `check_full` must accept both.

mod common;

use std::path::Path;

use common::{FqRead, OHit, RefSeq, Rng, lib_hits, oracle, run_ok};
use fmalign::index::{Index, IndexConfig, build_in_memory};
use fmalign::map::exact_hits;
use fmalign::scan::read_fasta_from;
use md5::{Digest, Md5};
use proptest::prelude::*;
use proptest::sample::select;

/// Builds an in-memory index from FASTA text.
fn build(fasta: &[u8], wide: bool, sa_sample: u32) -> Index {
    let reference = read_fasta_from(fasta, Path::new("gen.fa")).expect("valid FASTA");
    let cfg = IndexConfig {
        threads: 1,
        wide,
        sa_sample,
        ..IndexConfig::default()
    };
    let index = build_in_memory(reference, &cfg).expect("index builds");
    assert_eq!(index.meta.pos_bytes, if wide { 8 } else { 4 });
    fmalign::check::check_full(&index).expect("check_full accepts a fresh index");
    index
}

/// Maximal runs of bytes other than A/C/G/T, per contig: (contig, start, len).
fn oracle_holes(refs: &[RefSeq]) -> Vec<(u32, u64, u64)> {
    let mut out = Vec::new();
    for (k, r) in refs.iter().enumerate() {
        let mut start = None;
        for (p, b) in r.seq.iter().enumerate() {
            match (b"ACGT".contains(b), start) {
                (false, None) => start = Some(p),
                (true, Some(s)) => {
                    out.push((k as u32, s as u64, (p - s) as u64));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            out.push((k as u32, s as u64, (r.seq.len() - s) as u64));
        }
    }
    out
}

/// The index's contigs and ambiguous runs agree with the FASTA as the
/// oracle reads it (names, lengths, MD5 of the upper-case sequence).
fn check_layout(index: &Index, refs: &[RefSeq]) {
    let l = &index.layout;
    assert_eq!(l.contigs.len(), refs.len(), "contig count");
    for (c, r) in l.contigs.iter().zip(refs) {
        assert_eq!(c.name, r.name);
        assert_eq!(c.len, r.seq.len() as u64, "length of {}", r.name);
        let md5: [u8; 16] = Md5::digest(&r.seq).into();
        assert_eq!(c.md5, md5, "M5 of {}", r.name);
    }
    let holes: Vec<(u32, u64, u64)> = l.holes.iter().map(|h| (h.contig, h.start, h.len)).collect();
    assert_eq!(holes, oracle_holes(refs), "ambiguous runs");
    let unambiguous = refs
        .iter()
        .flat_map(|r| r.seq.iter())
        .filter(|b| b"ACGT".contains(b))
        .count();
    assert_eq!(index.meta.text_len, unambiguous as u64);
}

/// Every read: narrow hits == wide hits == oracle. Returns the number of
/// hits seen, so that callers can insist the test was not vacuous.
fn compare(indexes: &[&Index], refs: &[RefSeq], reads: &[Vec<u8>]) -> usize {
    let mut total = 0;
    for read in reads {
        let want: Vec<OHit> = oracle(refs, read);
        for index in indexes {
            let got = lib_hits(&exact_hits(&index.fm(), &index.segments, read));
            assert_eq!(
                got,
                want,
                "read {:?} (pos_bytes {}, sa_sample {})",
                String::from_utf8_lossy(read),
                index.meta.pos_bytes,
                index.meta.sa_sample
            );
        }
        total += want.len();
    }
    total
}

/// Every read of length 1..=k over A/C/G/T.
fn all_kmers(k: usize) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    let mut all = Vec::new();
    for _ in 0..k {
        out = out
            .into_iter()
            .flat_map(|p: Vec<u8>| {
                b"ACGT".iter().map(move |&b| {
                    let mut q = p.clone();
                    q.push(b);
                    q
                })
            })
            .collect();
        all.extend(out.iter().cloned());
    }
    all
}

// ---------------------------------------------------------------------------
// Random references
// ---------------------------------------------------------------------------

/// A generated reference: contigs as raw FASTA sequence (any case, N runs,
/// IUPAC codes; empty ones are records without bases), plus how to write it.
#[derive(Clone, Debug)]
struct GenRef {
    contigs: Vec<Vec<u8>>,
    line_width: usize,
    crlf: bool,
    sa_sample: u32,
    seed: u64,
}

impl GenRef {
    fn fasta(&self) -> Vec<u8> {
        let eol: &[u8] = if self.crlf { b"\r\n" } else { b"\n" };
        let mut out = Vec::new();
        for (k, c) in self.contigs.iter().enumerate() {
            out.extend_from_slice(format!(">c{k} contig number {k}").as_bytes());
            out.extend_from_slice(eol);
            for line in c.chunks(self.line_width) {
                out.extend_from_slice(line);
                out.extend_from_slice(eol);
            }
        }
        out
    }

    /// What the oracle searches: non-empty contigs, upper case.
    fn refs(&self) -> Vec<RefSeq> {
        self.contigs
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.is_empty())
            .map(|(k, c)| RefSeq {
                name: format!("c{k}"),
                seq: c.to_ascii_uppercase(),
            })
            .collect()
    }
}

fn bases(alphabet: &'static [u8], max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(select(alphabet), 1..max)
}

/// A stretch of one kind: bases (upper, lower, or a two-letter alphabet for
/// repeats), a run of N, or a few other IUPAC codes.
fn chunk(n_weight: u32) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        5 => bases(b"ACGT", 150),
        2 => bases(b"acgt", 30),
        2 => bases(b"AC", 40),
        1 => bases(b"GgTt", 20),
        n_weight => (1..40usize, select(&b"NNn"[..])).prop_map(|(n, b)| vec![b; n]),
        1 => bases(b"RYSWKMBDHVUNryswkmbdhvun", 4),
    ]
}

fn contig(n_weight: u32) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => prop::collection::vec(chunk(n_weight), 1..12).prop_map(|v| v.concat()),
        2 => select(&b"ACGTacgtNR"[..]).prop_map(|b| vec![b]),
        1 => Just(Vec::new()),
    ]
}

fn gen_ref() -> impl Strategy<Value = GenRef> {
    // Ordinary references, and mostly-N ones.
    prop_oneof![3 => Just(1u32), 1 => Just(15u32)]
        .prop_flat_map(|n_weight| {
            (
                prop::collection::vec(contig(n_weight), 1..7),
                1..90usize,
                any::<bool>(),
                select(vec![1u32, 2, 4, 32]),
                any::<u64>(),
            )
        })
        .prop_map(|(contigs, line_width, crlf, sa_sample, seed)| GenRef {
            contigs,
            line_width,
            crlf,
            sa_sample,
            seed,
        })
        // A record without bases at the very end of the file is covered by
        // tests/bad_input.rs (it currently fails to parse); here the last
        // record always has bases.
        .prop_filter("last record has bases", |g| {
            g.contigs.last().is_some_and(|c| !c.is_empty())
        })
}

/// Reads for a generated reference: sampled ones plus every 1- and 2-mer.
fn reads_for(refs: &[RefSeq], seed: u64, count: usize) -> Vec<FqRead> {
    let mut rng = Rng::new(seed);
    let mut reads = common::sample_reads(&mut rng, refs, count);
    for (i, k) in all_kmers(2).into_iter().enumerate() {
        reads.push(FqRead {
            name: format!("k{i}"),
            qual: vec![b'I'; k.len()],
            seq: k,
        });
    }
    reads
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 500,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_references_match_oracle(g in gen_ref()) {
        let fasta = g.fasta();
        let refs = g.refs();
        let narrow = build(&fasta, false, g.sa_sample);
        let wide = build(&fasta, true, g.sa_sample);
        check_layout(&narrow, &refs);
        check_layout(&wide, &refs);
        let reads: Vec<Vec<u8>> = reads_for(&refs, g.seed, 80).into_iter().map(|r| r.seq).collect();
        compare(&[&narrow, &wide], &refs, &reads);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The same through the binary: `index` (narrow and --wide-positions),
    /// `check --full`, `map -a`, SAM parsed by hand.
    #[test]
    fn random_references_match_oracle_through_binary(g in gen_ref()) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("ref.fa"), g.fasta()).unwrap();
        let refs = g.refs();
        let reads = reads_for(&refs, g.seed, 60);
        std::fs::write(d.join("reads.fq"), common::fastq_text(&reads)).unwrap();
        let ss = g.sa_sample.to_string();
        run_ok(d, &["index", "-q", "-t", "1", "--sa-sample", &ss, "ref.fa"], None);
        run_ok(
            d,
            &["index", "-q", "-t", "1", "--sa-sample", &ss, "--wide-positions", "-p", "wide.fmi", "ref.fa"],
            None,
        );
        let mut sams = Vec::new();
        for idx in ["ref.fa.fmi", "wide.fmi"] {
            run_ok(d, &["check", "--full", idx], None);
            let out = run_ok(d, &["map", "-v", "0", "-q", "-t", "2", "-a", idx, "reads.fq"], None);
            common::check_all_records(&refs, &reads, &out.stdout);
            sams.push(common::without_pg(&out.stdout));
        }
        prop_assert_eq!(&sams[0], &sams[1]);
    }
}

#[test]
fn small_edge_references() {
    for fasta in [
        &b">a\nA\n"[..],
        b">a\nN\n>b\nc\n",
        b">a\nNNNNACGTNNNN\n",
        b">a\nACGT\n>b\n\n>c\nACGT\n",
        b">a\nRYRYRYACRY\n>b\nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnG\n",
        b">a\nACGTTGCA\n>b\nTGCA\n>c\nACGT\n",
        b">x\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n>y\nAAAA\n",
    ] {
        let refs = common::parse_fasta(fasta);
        let mut reads = all_kmers(4);
        reads.push(b"NA".to_vec());
        reads.push(b"aaa".to_vec());
        reads.push(b"ACGTN".to_vec());
        reads.push(Vec::new());
        for sa_sample in [1, 4, 32] {
            let narrow = build(fasta, false, sa_sample);
            let wide = build(fasta, true, sa_sample);
            check_layout(&narrow, &refs);
            check_layout(&wide, &refs);
            compare(&[&narrow, &wide], &refs, &reads);
        }
    }
}

/// Texts whose lengths sit at and around the 32-base words and 192-base
/// Occ lines, for several sampling rates; random and low-complexity.
#[test]
fn occ_line_boundaries() {
    let mut rng = Rng::new(192);
    for n in [1, 2, 31, 32, 33, 63, 64, 191, 192, 193, 383, 384, 385, 576] {
        for alphabet in [&b"ACGT"[..], b"AT", b"C"] {
            let seq: Vec<u8> = (0..n).map(|_| *rng.pick(alphabet)).collect();
            let mut fasta = b">b\n".to_vec();
            fasta.extend_from_slice(&seq);
            fasta.push(b'\n');
            let refs = common::parse_fasta(&fasta);
            let mut reads: Vec<Vec<u8>> = common::sample_reads(&mut rng, &refs, 30)
                .into_iter()
                .map(|r| r.seq)
                .collect();
            reads.extend(all_kmers(2));
            reads.push(seq.clone());
            reads.push(common::revcomp(&seq));
            for sa_sample in [1, 2, 64] {
                let narrow = build(&fasta, false, sa_sample);
                let wide = build(&fasta, true, sa_sample);
                check_layout(&narrow, &refs);
                compare(&[&narrow, &wide], &refs, &reads);
            }
        }
    }
}

/// A reference without a single unambiguous base: either a clean error or
/// an index in which nothing maps.
#[test]
fn reference_without_unambiguous_bases() {
    let fasta = b">a\nNNNN\n>b\nRYKM\n>c\nn\n";
    let refs = common::parse_fasta(fasta);
    for wide in [false, true] {
        let reference = read_fasta_from(&fasta[..], Path::new("n.fa")).unwrap();
        let cfg = IndexConfig {
            threads: 1,
            wide,
            ..IndexConfig::default()
        };
        match build_in_memory(reference, &cfg) {
            Ok(index) => {
                fmalign::check::check_full(&index).unwrap();
                check_layout(&index, &refs);
                assert_eq!(compare(&[&index], &refs, &all_kmers(3)), 0);
            }
            Err(e) => assert!(e.to_string().contains("n.fa"), "{e}"),
        }
    }
}

// ---------------------------------------------------------------------------
// Real references
// ---------------------------------------------------------------------------

fn real(name: &str) -> (Vec<u8>, Vec<RefSeq>) {
    let fasta = common::read_maybe_gz(&common::test_data(name));
    let refs = common::parse_fasta(&fasta);
    (fasta, refs)
}

fn real_fastq(name: &str, limit: usize) -> Vec<FqRead> {
    let mut reads = common::parse_fastq(&common::read_maybe_gz(&common::test_data(name)));
    reads.truncate(limit);
    reads
}

fn check_real(name: &str, seed: u64, extra: &[FqRead]) {
    let (fasta, refs) = real(name);
    let narrow = build(&fasta, false, 32);
    let wide = build(&fasta, true, 8);
    check_layout(&narrow, &refs);
    check_layout(&wide, &refs);
    let mut rng = Rng::new(seed);
    let mut sampled = common::sample_reads(&mut rng, &refs, 800);
    common::limit_short(&mut sampled, 6, 40);
    let mut reads: Vec<Vec<u8>> = sampled.into_iter().map(|r| r.seq).collect();
    reads.extend(all_kmers(2));
    let sampled_hits = compare(&[&narrow, &wide], &refs, &reads);
    assert!(sampled_hits > reads.len(), "sampled reads should map");
    let extra: Vec<Vec<u8>> = extra.iter().map(|r| r.seq.clone()).collect();
    compare(&[&narrow, &wide], &refs, &extra);
}

#[test]
fn lambda_matches_oracle() {
    check_real("lambda_virus.fa", 1, &[]);
}

#[test]
fn chr_m_matches_oracle_with_real_reads() {
    let mut extra = real_fastq("human_chrM_ERR2438055_R1.fq.gz", 1500);
    extra.extend(real_fastq("human_chrM_ERR2438055_R2.fq.gz", 1500));
    extra.extend(real_fastq("human_chr20_rnaseq_60bp.fq", 3000));
    let (_, refs) = real("human_chrM_NC_012920.fa");
    let mapped = extra
        .iter()
        .filter(|r| !oracle(&refs, &r.seq).is_empty())
        .count();
    assert!(mapped > 0, "some real chrM reads map exactly");
    check_real("human_chrM_NC_012920.fa", 2, &extra);
}

/// `map -a` of the binary against the oracle on lambda and chrM, with
/// sampled reads and (for chrM) the real gzip-compressed reads as given.
#[test]
fn real_references_through_binary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (k, name) in ["lambda_virus.fa", "human_chrM_NC_012920.fa"]
        .into_iter()
        .enumerate()
    {
        let (fasta, refs) = real(name);
        std::fs::write(d.join(name), &fasta).unwrap();
        run_ok(d, &["index", "-q", name], None);
        let mut rng = Rng::new(10 + k as u64);
        let mut reads = common::sample_reads(&mut rng, &refs, 600);
        common::limit_short(&mut reads, 6, 10);
        std::fs::write(d.join("reads.fq"), common::fastq_text(&reads)).unwrap();
        let out = run_ok(d, &["map", "-v", "0", "-q", "-a", name, "reads.fq"], None);
        common::check_all_records(&refs, &reads, &out.stdout);
    }
    let (_, refs) = real("human_chrM_NC_012920.fa");
    let gz = common::test_data("human_chrM_ERR2438055_R1.fq.gz");
    let reads = common::parse_fastq(&common::read_maybe_gz(&gz));
    let out = run_ok(
        d,
        &[
            "map",
            "-v",
            "0",
            "-q",
            "-a",
            "human_chrM_NC_012920.fa.fmi",
            gz.to_str().unwrap(),
        ],
        None,
    );
    common::check_all_records(&refs, &reads, &out.stdout);
}

// ---------------------------------------------------------------------------
// Many contigs
// ---------------------------------------------------------------------------

/// 1,500 contigs of 1..=80 bases (some with N runs, some all N, some lower
/// case), in the library and through the binary.
#[test]
fn many_contigs() {
    let mut rng = Rng::new(1500);
    let mut fasta = Vec::new();
    for k in 0..1500 {
        let len = if rng.chance(1, 10) {
            1
        } else {
            rng.range(1, 80) as usize
        };
        let mut seq: Vec<u8> = (0..len)
            .map(|_| *rng.pick(b"ACGTACGTACGTACGTACGTacgtNR"))
            .collect();
        if rng.chance(1, 5) {
            let s = rng.below(len as u64) as usize;
            let e = rng.range(s as u64, len as u64) as usize;
            seq[s..e].fill(b'N');
        }
        fasta.extend_from_slice(format!(">contig_{k}\n").as_bytes());
        for line in seq.chunks(rng.range(1, 70) as usize) {
            fasta.extend_from_slice(line);
            fasta.push(b'\n');
        }
    }
    let refs = common::parse_fasta(&fasta);
    assert_eq!(refs.len(), 1500);
    let narrow = build(&fasta, false, 16);
    let wide = build(&fasta, true, 16);
    check_layout(&narrow, &refs);
    check_layout(&wide, &refs);
    let mut reads = common::sample_reads(&mut rng, &refs, 1500);
    common::limit_short(&mut reads, 5, 20);
    let seqs: Vec<Vec<u8>> = reads.iter().map(|r| r.seq.clone()).collect();
    assert!(compare(&[&narrow, &wide], &refs, &seqs) > 0);

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("many.fa"), &fasta).unwrap();
    std::fs::write(d.join("reads.fq"), common::fastq_text(&reads)).unwrap();
    run_ok(d, &["index", "-q", "many.fa"], None);
    run_ok(d, &["check", "--full", "many.fa"], None);
    let out = run_ok(
        d,
        &["map", "-v", "0", "-q", "-a", "many.fa", "reads.fq"],
        None,
    );
    common::check_all_records(&refs, &reads, &out.stdout);
}
