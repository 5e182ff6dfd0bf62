//! The bodies of the fuzz targets, shared by `cargo fuzz` (fuzz/fuzz_targets)
//! and the replay test run by `cargo test` (tests/fuzz_replay.rs). Each takes
//! arbitrary bytes; any panic, hang or failed check is a bug. Besides "no
//! panic" each checks what it can against an independent rule.

#![allow(dead_code)]

use std::io::Cursor;
use std::path::Path;

/// FASTA reader: errors are fine; a parsed reference must be consistent.
pub fn fasta(data: &[u8]) -> bool {
    let Ok(r) = fmalign::scan::read_fasta_from(Cursor::new(data.to_vec()), Path::new("f.fa"))
    else {
        return false;
    };
    let l = &r.layout;
    assert!(!l.contigs.is_empty());
    assert!(r.text.iter().all(|&c| c < 4));
    // Every base of every contig is either in the text or in a hole.
    let mut text = 0u64;
    for (k, c) in l.contigs.iter().enumerate() {
        assert_eq!(c.text_offset, text);
        let holes: u64 = l
            .holes
            .iter()
            .filter(|h| h.contig as usize == k)
            .map(|h| h.len)
            .sum();
        assert!(holes <= c.len);
        text += c.len - holes;
    }
    assert_eq!(text, r.text.len() as u64);
    for w in l.holes.windows(2) {
        assert!((w[0].contig, w[0].start + w[0].len) < (w[1].contig, w[1].start));
    }
    true
}

/// FASTQ reader in small batches: errors are fine; reads must be whole,
/// and hold no more bases than the input's (decompressed) bytes.
pub fn fastq(data: &[u8]) -> bool {
    let Ok(mut src) =
        fmalign::io::fastq::ReadSource::from_reader(Cursor::new(data.to_vec()), Path::new("r.fq"))
    else {
        return false;
    };
    // Gzip input inflates to more than its bytes: the bound is what it
    // inflates to, up to an error (the reads before one are handed out).
    let mut plain = Vec::new();
    if let Ok(Some(mut r)) = fmalign::io::input::decompressed(Cursor::new(data), Path::new("r.fq"))
    {
        let mut buf = [0u8; 4096];
        while let Ok(k) = std::io::Read::read(&mut r, &mut buf) {
            if k == 0 {
                break;
            }
            plain.extend_from_slice(&buf[..k]);
        }
    }
    let bound = data.len().max(plain.len());
    let mut total = 0usize;
    loop {
        let batch = match src.next_batch(64) {
            Ok(Some(b)) => b,
            Ok(None) => return true,
            Err(_) => return false,
        };
        for i in 0..batch.len() {
            let r = batch.get(i);
            if let Some(q) = r.qual {
                assert_eq!(q.len(), r.seq.len());
            }
            assert!(!r.name.iter().any(|b| b.is_ascii_whitespace()));
            total += r.seq.len();
        }
        assert!(total <= bound);
    }
}

/// Index loader. The first byte chooses: as given (the checksums must
/// catch damage), or with every CRC recomputed first, so that the
/// structural checks behind them are what refuses a bad file. A file that
/// loads is searched, located and proved with `check --full`: a bad file
/// must be refused, never crash or loop.
pub fn index(data: &[u8]) -> bool {
    let Some((&mode, rest)) = data.split_first() else {
        return false;
    };
    let mut file = rest.to_vec();
    if mode & 1 == 1 && !fmalign_index_format::reseal(&mut file) {
        return false;
    }
    let Ok(index) = fmalign::index::Index::from_bytes(Path::new("x.fmi"), &file) else {
        return false;
    };
    // Per SPEC.md §8, a crafted file that passes the checks may give wrong
    // hits, but no search may read out of bounds, panic or loop: search,
    // locate, and map reads through it (exact and with mismatches).
    let fm = index.fm();
    let n = index.meta.text_len;
    for pattern in [&[0u8][..], &[1, 2], &[3, 3, 0], &[2, 0, 1, 3]] {
        let iv = fm.backward_search(pattern);
        assert!(iv.lo <= iv.hi && iv.hi <= n + 1);
        for row in iv.lo..iv.hi.min(iv.lo + 8) {
            let _ = fm.locate(row);
        }
    }
    let reads =
        b"@a\nACGT\n+\nIIII\n@b\nGGGCA\n+\nIIIII\n@c\nTTTTTTTTTTAC\n+\nIIIIIIIIIIII\n@d\nA\n+\nI\n"
            .to_vec();
    for mismatches in [0u8, 2] {
        let source = fmalign::io::fastq::ReadSource::from_reader(
            Cursor::new(reads.clone()),
            Path::new("r.fq"),
        )
        .unwrap();
        let cfg = fmalign::map::MapConfig {
            threads: 1,
            mismatches,
            device: fmalign::device::Device::Cpu,
            ..fmalign::map::MapConfig::default()
        };
        let mut out = Vec::new();
        let _ = fmalign::map::map_reads(
            &index,
            fmalign::map::Reads::Single(source),
            &mut out,
            "out",
            &cfg,
            "fmalign map",
            &|_| {},
        );
    }
    let _ = fmalign::check::check_full(&index);
    true
}

/// Records: the reads of `data` (as FASTQ) written unmapped and mapped on a
/// small reference, as SAM (`map::push_sam`) and BAM (`map::push_bam`);
/// noodles (the library the writers replace) must parse every SAM record,
/// with the same name and lengths, and encode it to the very BAM bytes.
pub fn sam(data: &[u8]) -> bool {
    use fmalign::map::{Cigar, Mate, Record, Tags, push_bam, push_sam};
    use fmalign::sam::header;
    let Ok(mut src) =
        fmalign::io::fastq::ReadSource::from_reader(Cursor::new(data.to_vec()), Path::new("r.fq"))
    else {
        return false;
    };
    let reference: Vec<u8> = (0..300u32)
        .map(|i| b"ACGT"[(i * 7 % 11 % 4) as usize])
        .collect();
    let fa = [
        b">chr1 x\n".to_vec(),
        reference.clone(),
        b"\n>c2\nNNACGT\n".to_vec(),
    ]
    .concat();
    let r = fmalign::scan::read_fasta_from(Cursor::new(fa), Path::new("ref.fa")).unwrap();
    let mut out = header(&r.layout, "fmalign map ref.fa r.fq").unwrap();
    let bam_header = noodles_sam::io::Reader::new(&out[..])
        .read_header()
        .expect("the header parses");
    let mut expect = Vec::new();
    let push = |out: &mut Vec<u8>, rec: &Record<'_>| {
        let start = out.len();
        push_sam(out, rec, &r.layout, None);
        let mut bam = Vec::new();
        // The reader keeps reads BAM can hold (names, qualities).
        push_bam(&mut bam, rec, None).expect("BAM holds the record");
        let line = &out[start..];
        let mut reader = noodles_sam::io::Reader::new(line);
        let mut record = noodles_sam::Record::default();
        reader.read_record(&mut record).expect("the record parses");
        let mut theirs = noodles_bam::io::Writer::from(Vec::new());
        use noodles_sam::alignment::io::Write as _;
        theirs
            .write_alignment_record(&bam_header, &record)
            .expect("noodles encodes it");
        assert!(
            bam == theirs.into_inner(),
            "BAM differs from noodles': {}",
            String::from_utf8_lossy(line)
        );
    };
    while let Ok(Some(batch)) = src.next_batch(256) {
        for i in 0..batch.len() {
            let read = batch.get(i);
            push(&mut out, &Record::unmapped(&read, None));
            expect.push((read.name.to_vec(), read.seq.len()));
            // An unmapped mate placed beside its mapped mate, or not placed.
            let placed = (i % 2 == 1).then_some((0u32, i as u64 % 300));
            let mate = Mate {
                flag: 0x1 | 0x80 | if placed.is_some() { 0x20 } else { 0x8 },
                next: placed,
                tlen: 0,
                mc: placed.map_or(Cigar::None, |_| Cigar::Matched(i as u32 % 200 + 1)),
            };
            push(&mut out, &Record::unmapped(&read, Some(mate)));
            expect.push((read.name.to_vec(), read.seq.len()));
            let len = read.seq.len() as u64;
            if len == 0 || len > 300 {
                continue;
            }
            let pos = (i as u64 * 13) % (300 - len + 1);
            // Every third record a paired one: mate on this or the last
            // contig, or unmapped.
            let mate = (i % 3 == 0).then(|| Mate {
                flag: 0x1 | 0x40 | if i % 2 == 0 { 0x2 | 0x20 } else { 0x8 },
                next: (i % 2 == 0)
                    .then_some(((i % r.layout.contigs.len()) as u32, (i as u64 * 7) % 1000)),
                tlen: if i % 4 == 0 { -(i as i64) } else { i as i64 },
                mc: if i % 2 == 0 {
                    Cigar::Matched(i as u32 % 150 + 1)
                } else {
                    Cigar::None
                },
            });
            let m = mate.unwrap_or_default();
            let md = format!("{}A0", len - 1);
            let rec = Record {
                name: read.name,
                flag: (if i % 2 == 1 { 16 } else { 0 })
                    | (if i % 5 == 0 { 0x100 } else { 0 })
                    | m.flag,
                place: Some((0, pos)),
                mapq: (i % 61) as u8,
                cigar: Cigar::Matched(len as u32),
                next: m.next,
                tlen: m.tlen,
                seq: read.seq,
                qual: read.qual,
                tags: Tags {
                    nm: Some((i % 4) as u32),
                    md: Some(md.as_bytes()),
                    x0: Some(1 + i as u64 % 3),
                    x1: (i % 2 == 0).then_some(i as u64 % 7),
                    mc: m.mc,
                    xa: if i % 2 == 0 { b"chr1,+1,5M,1;" } else { b"" },
                    ..Tags::default()
                },
            };
            push(&mut out, &rec);
            expect.push((read.name.to_vec(), read.seq.len()));
        }
    }
    let mut reader = noodles_sam::io::Reader::new(&out[..]);
    let h = reader.read_header().expect("the header parses");
    let mut got = 0;
    for (rec, (name, len)) in reader.record_bufs(&h).zip(&expect) {
        let rec = rec.unwrap_or_else(|e| {
            panic!(
                "record {got} does not parse: {e}\n{}",
                String::from_utf8_lossy(&out)
            )
        });
        let want: &[u8] = if name.is_empty() { b"*" } else { name };
        let have: &[u8] = rec.name().map_or(b"*", |n| n.as_ref());
        assert_eq!(have, want, "record {got}: name");
        assert_eq!(rec.sequence().len(), *len, "record {got}: SEQ length");
        got += 1;
    }
    assert_eq!(got, expect.len());
    true
}
