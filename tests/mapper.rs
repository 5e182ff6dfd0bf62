//! The per-read API (`map::Mapper`) against the CLI: for the same reads and
//! options, each read's owned records written as SAM are the CLI's lines,
//! in every mode, single and paired; mapping a read alone, or from many
//! threads on one mapper, changes nothing; a bad read is refused.

mod common;

use std::sync::Arc;

use common::*;
use fmalign::align::Mode;
use fmalign::io::fastq::Batch;
use fmalign::map::{MapConfig, Mapper, OwnedRecord, PairConfig, RecordSet};
use fmalign::read::ReadView;

/// The modes compared: the CLI's options and the library's settings.
const MODES: &[(&[&str], Option<Mode>, u8)] = &[
    (&[], Some(Mode::Local), 0),
    (&["--end-to-end"], Some(Mode::EndToEnd), 0),
    (&["-v", "0"], None, 0),
    (&["-v", "2"], None, 2),
];

fn config(gapped: Option<Mode>, mismatches: u8) -> MapConfig {
    MapConfig {
        threads: 2,
        gapped,
        mismatches,
        ..MapConfig::default()
    }
}

/// The SAM lines of records (header left out).
fn body(sam: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(sam)
        .lines()
        .filter(|l| !l.starts_with('@'))
        .map(str::to_owned)
        .collect()
}

fn lines(index: &fmalign::Index, records: &[Vec<OwnedRecord>]) -> Vec<String> {
    records
        .iter()
        .flatten()
        .map(|r| {
            let text = String::from_utf8(r.to_sam(&index.layout, None)).unwrap();
            text.trim_end_matches('\n').to_owned()
        })
        .collect()
}

/// The SAM lines of a record set, read by read; checks that the set has
/// `n` reads (pairs) and that its per-read ids agree with its whole walk.
fn set_lines(index: &fmalign::Index, set: &RecordSet, n: usize) -> Vec<String> {
    assert_eq!(set.len(), n, "one entry per read (pair)");
    assert_eq!(set.each_read().count(), n);
    let mut out = Vec::new();
    for (i, ids) in set.each_read().enumerate() {
        let ids: Vec<_> = ids.collect();
        assert_eq!(ids, set.ids(i).collect::<Vec<_>>(), "read {i}: ids");
        for id in ids {
            let r = set.record(id);
            assert_eq!(set.flag(id), r.flag);
            let text = String::from_utf8(r.to_sam(&index.layout, None)).unwrap();
            out.push(text.trim_end_matches('\n').to_owned());
        }
    }
    out
}

fn batch(reads: &[FqRead]) -> Batch {
    Batch::from_reads(reads.iter().map(|r| ReadView {
        name: r.name.as_bytes(),
        seq: &r.seq,
        qual: Some(&r.qual),
    }))
    .unwrap()
}

/// Reads of `refs` with about 2% substitutions and, in one read of ten, a
/// one-base insertion or deletion.
fn mutated_reads(rng: &mut Rng, refs: &[RefSeq], count: usize) -> Vec<FqRead> {
    let mut reads = sample_reads(rng, refs, count);
    for r in &mut reads {
        for b in r.seq.iter_mut() {
            if rng.chance(1, 50) {
                *b = rng.base();
            }
        }
        if rng.chance(1, 10) && r.seq.len() > 40 {
            let at = rng.range(10, r.seq.len() as u64 - 10) as usize;
            if rng.chance(1, 2) {
                r.seq.remove(at);
                r.qual.remove(at);
            } else {
                r.seq.insert(at, rng.base());
                r.qual.insert(at, b'I');
            }
        }
    }
    reads
}

/// Real chrM pairs (single and paired) and mutated E. coli reads: the
/// mapper's records are the CLI's, line for line, in every mode.
#[test]
fn mapper_records_are_the_cli_records() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(test_data("human_chrM_NC_012920.fa"), d.join("chrM.fa")).unwrap();
    std::fs::write(
        d.join("ecoli.fa"),
        read_maybe_gz(&test_data("ecoli_K12_MG1655.fa.gz")),
    )
    .unwrap();
    run_ok(d, &["index", "-q", "chrM.fa"], None);
    run_ok(d, &["index", "-q", "ecoli.fa"], None);
    let r1 = parse_fastq(&read_maybe_gz(&test_data("human_chrM_ERR2438055_R1.fq.gz")));
    let r2 = parse_fastq(&read_maybe_gz(&test_data("human_chrM_ERR2438055_R2.fq.gz")));
    let ecoli = parse_fasta(&std::fs::read(d.join("ecoli.fa")).unwrap());
    let mut rng = Rng::new(43);
    let simulated = mutated_reads(&mut rng, &ecoli, 3000);
    std::fs::write(d.join("e.fq"), fastq_text(&simulated)).unwrap();
    std::fs::write(d.join("r1.fq"), fastq_text(&r1)).unwrap();
    std::fs::write(d.join("r2.fq"), fastq_text(&r2)).unwrap();
    let chrm = Arc::new(fmalign::Index::open(&d.join("chrM.fa.fmi")).unwrap());
    let eco = Arc::new(fmalign::Index::open(&d.join("ecoli.fa.fmi")).unwrap());
    for &(opts, gapped, k) in MODES {
        let cli = |args: &[&str]| -> Vec<String> {
            let mut all = vec!["map", "-q", "-t", "2"];
            all.extend_from_slice(opts);
            all.extend_from_slice(args);
            body(&run_ok(d, &all, None).stdout)
        };
        let cfg = config(gapped, k);
        // Single reads: E. coli, then chrM's mates 1.
        let m = Mapper::new(eco.clone(), cfg.clone(), PairConfig::default()).unwrap();
        let (got, stats) = m.map(&batch(&simulated)).unwrap();
        assert_eq!(got.len(), simulated.len(), "{opts:?}: one entry per read");
        assert_eq!(stats.reads, simulated.len() as u64);
        let want = cli(&["ecoli.fa", "e.fq"]);
        assert!(want.len() >= simulated.len());
        assert_eq!(lines(&eco, &got), want, "{opts:?}: E. coli single reads");
        // The same records kept compactly with their reads.
        let (set, _) = m.map_set(batch(&simulated)).unwrap();
        assert_eq!(
            set_lines(&eco, &set, simulated.len()),
            want,
            "{opts:?}: E. coli single reads, as a set"
        );
        let m = Mapper::new(chrm.clone(), cfg.clone(), PairConfig::default()).unwrap();
        let (got, _) = m.map(&batch(&r1)).unwrap();
        assert_eq!(
            lines(&chrm, &got),
            cli(&["chrM.fa", "r1.fq"]),
            "{opts:?}: chrM R1"
        );
        // Pairs: one entry per pair, mate 1's records then mate 2's.
        let (got, stats) = m.map_pairs(&batch(&r1), &batch(&r2)).unwrap();
        assert_eq!(got.len(), r1.len(), "{opts:?}: one entry per pair");
        assert_eq!(stats.pairs, r1.len() as u64);
        for (p, recs) in got.iter().enumerate() {
            assert!(
                recs.iter()
                    .any(|r| r.flag & 0x40 != 0 && r.flag & 0x900 == 0)
            );
            assert!(
                recs.iter()
                    .any(|r| r.flag & 0x80 != 0 && r.flag & 0x900 == 0)
            );
            assert!(
                recs.iter().all(|r| r.name == r1[p].qname().as_bytes()),
                "{opts:?}: pair {p} holds another read's records"
            );
        }
        let want = cli(&["chrM.fa", "r1.fq", "r2.fq"]);
        assert_eq!(lines(&chrm, &got), want, "{opts:?}: chrM pairs");
        let (set, _) = m.map_pairs_set(batch(&r1), batch(&r2)).unwrap();
        assert_eq!(
            set_lines(&chrm, &set, r1.len()),
            want,
            "{opts:?}: chrM pairs, as a set"
        );
    }
}

/// A read mapped alone gets the records it gets in a batch; one mapper
/// shared by four threads gives what it gives on one; the typed fields
/// agree with the record's own SAM columns.
#[test]
fn mapper_per_read_and_threads_agree() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(test_data("human_chrM_NC_012920.fa"), d.join("chrM.fa")).unwrap();
    run_ok(d, &["index", "-q", "chrM.fa"], None);
    let index = Arc::new(fmalign::Index::open(&d.join("chrM.fa.fmi")).unwrap());
    let reads = parse_fastq(&read_maybe_gz(&test_data("human_chrM_ERR2438055_R1.fq.gz")));
    let reads = &reads[..400];
    for &(_, gapped, k) in MODES {
        let m =
            Arc::new(Mapper::new(index.clone(), config(gapped, k), PairConfig::default()).unwrap());
        let (all, _) = m.map(&batch(reads)).unwrap();
        for (i, r) in reads.iter().enumerate().step_by(7) {
            let (one, _) = m.map(&batch(std::slice::from_ref(r))).unwrap();
            assert_eq!(one.len(), 1);
            assert_eq!(one[0], all[i], "read {i} alone");
        }
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let m = Arc::clone(&m);
                let part: Vec<FqRead> = reads.iter().skip(t).step_by(4).cloned().collect();
                std::thread::spawn(move || (t, m.map(&batch(&part)).unwrap().0))
            })
            .collect();
        for h in threads {
            let (t, got) = h.join().unwrap();
            for (j, recs) in got.iter().enumerate() {
                assert_eq!(recs, &all[t + 4 * j], "thread {t}, read {j}");
            }
        }
        let mut mapped = 0;
        for r in all.iter().flatten() {
            let cols: Vec<String> = String::from_utf8(r.to_sam(&index.layout, None))
                .unwrap()
                .trim_end()
                .split('\t')
                .map(str::to_owned)
                .collect();
            assert_eq!(cols[1], r.flag.to_string());
            if !r.is_mapped() {
                assert!(r.query_range().is_none() && r.ref_range().is_none());
                continue;
            }
            mapped += 1;
            let (start, end) = r.ref_range().unwrap();
            assert_eq!(cols[3], (start + 1).to_string());
            // The CIGAR's reference span and read span, from its text.
            let (mut rspan, mut clip_lead, mut clip_trail, mut qlen) = (0u64, 0u32, 0u32, 0u32);
            let mut num = 0u32;
            let ops: Vec<(u32, char)> = cols[5]
                .chars()
                .filter_map(|c| {
                    if let Some(d) = c.to_digit(10) {
                        num = num * 10 + d;
                        None
                    } else {
                        let op = (std::mem::take(&mut num), c);
                        Some(op)
                    }
                })
                .collect();
            for (i, &(n, c)) in ops.iter().enumerate() {
                match c {
                    'M' | 'D' => rspan += u64::from(n),
                    'S' if i == 0 => clip_lead = n,
                    'S' => clip_trail = n,
                    _ => {}
                }
                if matches!(c, 'M' | 'I' | 'S') {
                    qlen += n;
                }
            }
            assert_eq!(end - start, rspan, "{}", cols[5]);
            assert_eq!(qlen as usize, r.seq.len());
            let (qs, qe) = r.query_range().unwrap();
            let want = if r.is_reverse() {
                (clip_trail, qlen - clip_lead)
            } else {
                (clip_lead, qlen - clip_trail)
            };
            assert_eq!((qs, qe), want);
            assert_eq!(r.is_primary(), r.flag & 0x904 == 0);
        }
        assert!(mapped > 200, "{mapped} mapped records");
    }
}

/// Reads the FASTQ reader would refuse are refused with the read named; a
/// pair call with unequal mates is an error.
#[test]
fn mapper_refuses_bad_reads() {
    let bad = |name: &[u8], seq: &[u8], qual: Option<&[u8]>| {
        Batch::from_reads([ReadView { name, seq, qual }]).unwrap_err()
    };
    assert!(bad(b"r1", b"ACG1T", None).contains("r1"));
    assert!(bad(b"r2", b"ACGT", Some(b"III")).contains("3 qualities"));
    assert!(bad(b"r\x01", b"ACGT", None).contains("read name"));
    assert!(bad(b"r3", b"ACGT", Some(b"II\tI")).contains("qualities"));
    let ok = Batch::from_reads([ReadView {
        name: b"fine",
        seq: b"ACGTN",
        qual: None,
    }])
    .unwrap();
    assert_eq!(ok.len(), 1);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(test_data("lambda_virus.fa"), d.join("l.fa")).unwrap();
    run_ok(d, &["index", "-q", "l.fa"], None);
    let index = Arc::new(fmalign::Index::open(&d.join("l.fa.fmi")).unwrap());
    let m = Mapper::new(index, config(Some(Mode::Local), 0), PairConfig::default()).unwrap();
    let err = m.map_pairs(&ok, &Batch::default()).unwrap_err().to_string();
    assert!(err.contains("pairs need as many"), "{err}");
    let (none, _) = m.map(&Batch::default()).unwrap();
    assert!(none.is_empty());
}
