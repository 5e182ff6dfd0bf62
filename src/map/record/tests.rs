use super::*;
use crate::scan::read_fasta_from;
use std::path::Path;

fn layout() -> Layout {
    read_fasta_from(
        &b">chr1 x\nACGTACGTNNACGTACGTACGTACGTACGTACGT\n>chr2\nGGGGCCCCAAAATTTT\n"[..],
        Path::new("t"),
    )
    .unwrap()
    .layout
}

/// The BAM record noodles encodes from `line` (its SAM text), block
/// size first: the oracle of [`push_bam`].
fn noodles_bam(header: &noodles_sam::Header, line: &[u8]) -> Vec<u8> {
    use noodles_sam::alignment::io::Write as _;
    let mut reader = noodles_sam::io::Reader::new(line);
    let mut record = noodles_sam::Record::default();
    reader.read_record(&mut record).unwrap();
    let mut bam = noodles_bam::io::Writer::from(Vec::new());
    bam.write_alignment_record(header, &record).unwrap();
    bam.into_inner()
}

/// xorshift.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Records of every shape the modes write (unmapped, placed beside a
/// mate, forward and reverse, gapped CIGARs, mates on either contig,
/// negative scores and TLEN, no qualities, an empty read, IUPAC and
/// lower-case bases, every tag, `RG`): the SAM text parses with noodles,
/// and the BAM bytes are the very ones noodles encodes from that text.
#[test]
fn records_as_sam_and_bam_match_noodles() {
    let l = layout();
    let mut text = crate::sam::header(&l, "fmalign map x.fa r.fq").unwrap();
    let header = noodles_sam::io::Reader::new(&text[..])
        .read_header()
        .unwrap();
    let ops: Vec<Vec<(Op, u32)>> = vec![
        vec![(Op::Match, 12)],
        vec![(Op::Soft, 2), (Op::Match, 5), (Op::Ins, 1), (Op::Match, 4)],
        vec![(Op::Match, 4), (Op::Del, 3), (Op::Match, 8), (Op::Soft, 3)],
    ];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let bases = b"ACGTNacgtRYKM=.X";
    let mut n = 0;
    for k in 0..600u64 {
        let r = next(&mut x);
        let name = format!("r{k}_{}", "x".repeat((r % 7) as usize * (k as usize % 40)));
        let cig = &ops[(r % 3) as usize];
        let len: usize = if k % 97 == 5 {
            0
        } else {
            cig.iter()
                .filter(|o| o.0.reads())
                .map(|o| o.1 as usize)
                .sum()
        };
        let seq: Vec<u8> = (0..len)
            .map(|i| bases[((r >> (i % 50)) as usize + i) % bases.len()])
            .collect();
        let qual: Vec<u8> = (0..len)
            .map(|i| b'!' + ((r >> (i % 40)) % 42) as u8)
            .collect();
        let mc_ops = &ops[((r >> 8) % 3) as usize];
        let mate = match (r >> 12) % 4 {
            0 => None,
            1 => Some(Mate {
                flag: 0x1 | 0x40 | 0x8,
                next: None,
                tlen: 0,
                mc: Cigar::None,
            }),
            2 => Some(Mate {
                flag: 0x1 | 0x80 | 0x2 | 0x20,
                next: Some(((r >> 20) as u32 % 2, (r >> 24) % 20)),
                tlen: -((r >> 30) as i64 % 500),
                mc: Cigar::Ops(mc_ops),
            }),
            _ => Some(Mate {
                flag: 0x1 | 0x40,
                next: Some((0, (r >> 24) % 20)),
                tlen: (r >> 30) as i64 % 500,
                mc: Cigar::Matched(12),
            }),
        };
        let read = ReadView {
            name: name.as_bytes(),
            seq: &seq,
            qual: (k % 5 != 0).then_some(&qual[..]),
        };
        let rec = if k % 6 == 0 {
            Record::unmapped(&read, mate)
        } else {
            let m = mate.unwrap_or_default();
            let gapped = k % 2 == 0;
            Record {
                name: read.name,
                flag: (if r & 1 == 1 { 16 } else { 0 })
                    | (if k % 11 == 0 { 0x100 } else { 0 })
                    | (if k % 13 == 0 { 0x800 } else { 0 })
                    | m.flag,
                place: Some(((r >> 40) as u32 % 2, (r >> 42) % 16)),
                mapq: (r >> 50) as u8 % 61,
                cigar: if len == 0 {
                    Cigar::None
                } else {
                    Cigar::Ops(cig)
                },
                next: m.next,
                tlen: m.tlen,
                seq: read.seq,
                qual: read.qual,
                tags: Tags {
                    nm: Some((r >> 3) as u32 % 5),
                    md: Some(b"3A4^C2"),
                    score: gapped.then_some(-((r >> 5) as i32 % 40)),
                    xs: (gapped && k % 3 == 0).then_some(-((r >> 6) as i32 % 300)),
                    x0: (!gapped).then_some((r >> 7) % 70_000),
                    x1: (!gapped && k % 3 == 0).then_some(0),
                    mc: m.mc,
                    sa: if k % 4 == 1 {
                        b"chr1,5,+,3S9M,60,0;"
                    } else {
                        b""
                    },
                    xa: if k % 5 == 1 { b"chr2,-3,12M,1;" } else { b"" },
                },
            }
        };
        let rg: Option<&[u8]> = (k % 7 == 0).then_some(b"s1");
        let mut line = Vec::new();
        push_sam(&mut line, &rec, &l, rg);
        let mut bam = Vec::new();
        push_bam(&mut bam, &rec, rg).unwrap();
        assert!(
            bam == noodles_bam(&header, &line),
            "record {k}: BAM differs from noodles'\n{}",
            String::from_utf8_lossy(&line)
        );
        text.extend_from_slice(&line);
        n += 1;
    }
    let mut reader = noodles_sam::io::Reader::new(&text[..]);
    let h = reader.read_header().unwrap();
    let recs: Vec<_> = reader
        .record_bufs(&h)
        .collect::<std::io::Result<_>>()
        .unwrap();
    assert_eq!(recs.len(), n);
}

/// A read's records in SAM: an unmapped one as given, a reverse-strand
/// one reverse-complemented (IUPAC too) with its qualities reversed.
#[test]
fn sam_text_of_records() {
    let l = layout();
    let read = ReadView {
        name: b"r1",
        seq: b"ACgTN",
        qual: Some(b"ABCDE"),
    };
    let mut out = Vec::new();
    let rec = Record {
        name: read.name,
        flag: 16,
        place: Some((0, 3)),
        mapq: 0,
        cigar: Cigar::Matched(5),
        next: None,
        tlen: 0,
        seq: read.seq,
        qual: read.qual,
        tags: Tags {
            nm: Some(1),
            md: Some(b"0T4"),
            x0: Some(2),
            x1: Some(0),
            xa: b"chr1,+1,5M,1;",
            ..Tags::default()
        },
    };
    push_sam(&mut out, &rec, &l, None);
    push_sam(&mut out, &Record::unmapped(&read, None), &l, Some(b"g"));
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "r1\t16\tchr1\t4\t0\t5M\t*\t0\t0\tNACGT\tEDCBA\tNM:i:1\tMD:Z:0T4\tX0:i:2\tX1:i:0\tXA:Z:chr1,+1,5M,1;\n\
         r1\t4\t*\t0\t0\t*\t*\t0\t0\tACGTN\tABCDE\tRG:Z:g\n"
    );
}

/// A CIGAR of more than 65,535 operations goes to `CG:B:I` behind a
/// `kSmN` placeholder, as noodles (and htslib) write it.
#[test]
fn long_cigar_goes_to_cg() {
    let l = layout();
    let text = crate::sam::header(&l, "fmalign").unwrap();
    let header = noodles_sam::io::Reader::new(&text[..])
        .read_header()
        .unwrap();
    let ops: Vec<(Op, u32)> = (0..70_000)
        .map(|i| {
            if i % 2 == 0 {
                (Op::Match, 1)
            } else {
                (Op::Ins, 1)
            }
        })
        .collect();
    let seq = vec![b'A'; 70_000];
    let rec = Record {
        name: b"long",
        flag: 0,
        place: Some((0, 0)),
        mapq: 60,
        cigar: Cigar::Ops(&ops),
        next: None,
        tlen: 0,
        seq: &seq,
        qual: None,
        tags: Tags {
            score: Some(1),
            ..Tags::default()
        },
    };
    let mut line = Vec::new();
    push_sam(&mut line, &rec, &l, None);
    let mut bam = Vec::new();
    push_bam(&mut bam, &rec, None).unwrap();
    assert!(bam == noodles_bam(&header, &line));
}

/// A chunk of collected records gives back every field of every record
/// pushed: a read's own name, bases and qualities by reference to the batch
/// (no copy), any other ones copied; each CIGAR variant as it was (`*`, an
/// ungapped `{n}M`, operations, none at all); every tag.
#[test]
fn collected_records_come_back_whole() {
    let l = layout();
    let batch = crate::io::fastq::Batch::from_reads([
        ReadView {
            name: b"r1/1 comment",
            seq: b"ACGTACGTAC",
            qual: Some(b"ABCDEFGHIJ"),
        },
        ReadView {
            name: b"r2",
            seq: b"GGGGCCCCAA",
            qual: None,
        },
    ])
    .unwrap();
    let (v0, v1) = (
        batch.get(0).named_as_in_sam(),
        batch.get(1).named_as_in_sam(),
    );
    let ops = [(Op::Soft, 2), (Op::Match, 5), (Op::Del, 1), (Op::Match, 3)];
    let mc = [(Op::Match, 10)];
    let full = Record {
        name: v0.name,
        flag: 16 | 0x100,
        place: Some((1, 7)),
        mapq: 3,
        cigar: Cigar::Ops(&ops),
        next: Some((0, 2)),
        tlen: -40,
        seq: v0.seq,
        qual: v0.qual,
        tags: Tags {
            nm: Some(2),
            md: Some(b"3A1^C3"),
            score: Some(-4),
            xs: Some(-9),
            x0: Some(7),
            x1: Some(1 << 40),
            mc: Cigar::Ops(&mc),
            sa: b"chr1,5,+,10M,0,0;",
            xa: b"chr2,-3,10M,1;",
        },
    };
    let trimmed = Record {
        name: b"other",
        seq: &v0.seq[1..],
        qual: None,
        cigar: Cigar::Matched(9),
        tags: Tags {
            mc: Cigar::Ops(&[]),
            md: None,
            ..Tags::default()
        },
        ..full
    };
    let unmapped = Record::unmapped(&v1, None);
    let mut chunk = Chunk::default();
    chunk.next_read(0, &v0, None);
    chunk.push(&full);
    chunk.push(&trimmed);
    chunk.next_read(1, &v1, None);
    chunk.push(&unmapped);
    assert_eq!(chunk.reads(), 2);
    assert_eq!((chunk.of_read(0), chunk.of_read(1)), (0..2, 2..3));
    for (i, want) in [full, trimmed, unmapped].iter().enumerate() {
        let got = chunk.record(i, &batch, None);
        assert_eq!(OwnedRecord::of(&got), OwnedRecord::of(want), "record {i}");
        assert_eq!((got.cigar, got.tags.mc), (want.cigar, want.tags.mc));
        assert_eq!(got.to_sam(&l, Some("g")), want.to_sam(&l, Some("g")));
        // The read's own slices are the batch's; others are copies.
        let shared = i != 1;
        assert_eq!(got.seq.as_ptr() == want.seq.as_ptr(), shared, "record {i}");
    }
}
