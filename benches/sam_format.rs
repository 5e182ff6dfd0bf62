//! Why records are written by hand: the same mapped records written as SAM
//! by fmalign's formatter (`map::push_sam`) and by noodles-sam's writer, and
//! as BAM by fmalign's encoder (`map::push_bam`) and noodles-bam's (from
//! `RecordBuf`s built per record, as a mapper would), one thread.
//!
//! cargo bench --bench sam_format

use std::num::NonZeroUsize;
use std::time::Instant;

use noodles_sam::{self as sam, alignment::io::Write as _};
use sam::alignment::RecordBuf;
use sam::alignment::record::cigar::{Op, op::Kind};
use sam::alignment::record::data::field::Tag;
use sam::alignment::record::{Flags, MappingQuality};
use sam::alignment::record_buf::data::field::Value;
use sam::header::record::value::{Map, map::ReferenceSequence};

use fmalign::map::{Cigar, Record, Tags, push_bam, push_sam};
use fmalign::read::Hit;
use fmalign::reference::{Contig, Layout};

const READS: usize = 200_000;

fn main() {
    let layout = Layout {
        contigs: vec![Contig {
            name: "20".into(),
            len: 63_025_520,
            md5: [0; 16],
            text_offset: 0,
        }],
        holes: vec![],
    };
    let header = sam::Header::builder()
        .add_reference_sequence(
            "20",
            Map::<ReferenceSequence>::new(NonZeroUsize::new(63_025_520).unwrap()),
        )
        .build();
    let mut x = 7u64;
    let reads: Vec<(String, Vec<u8>, Vec<u8>, Hit)> = (0..READS)
        .map(|i| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let seq: Vec<u8> = (0..100)
                .map(|k| b"ACGT"[((x >> (k % 60)) & 3) as usize])
                .collect();
            let qual: Vec<u8> = (0..100)
                .map(|k| b'!' + ((x >> (k % 50)) % 41) as u8)
                .collect();
            (
                format!(
                    "20_{}_{}_0:0:0_0:0:0_{i:x}/1",
                    x % 60_000_000,
                    x % 60_000_000 + 300
                ),
                seq,
                qual,
                Hit {
                    nm: 0,
                    contig: 0,
                    pos: x % 60_000_000,
                    rev: x & 1 == 1,
                    // Read i's reference bases are text[100 i..100 i + 100] (below).
                    text_pos: 100 * i as u64,
                },
            )
        })
        .collect();

    fn record((name, seq, qual, hit): &(String, Vec<u8>, Vec<u8>, Hit)) -> Record<'_> {
        Record {
            name: name.as_bytes(),
            flag: if hit.rev { 16 } else { 0 },
            place: Some((0, hit.pos)),
            mapq: 37,
            cigar: Cigar::Matched(100),
            next: None,
            tlen: 0,
            seq,
            qual: Some(qual),
            tags: Tags {
                nm: Some(0),
                md: Some(b"100"),
                x0: Some(1),
                ..Tags::default()
            },
        }
    }
    let t = Instant::now();
    let mut ours = Vec::with_capacity(READS * 300);
    for r in &reads {
        push_sam(&mut ours, &record(r), &layout, None);
    }
    let ours_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut ours_bam = Vec::with_capacity(READS * 200);
    for r in &reads {
        push_bam(&mut ours_bam, &record(r), None).unwrap();
    }
    let ours_bam_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let mut writer = sam::io::Writer::new(Vec::with_capacity(READS * 300));
    let mut bam = noodles_bam::io::Writer::from(Vec::with_capacity(READS * 200));
    let mut bam_s = 0.0;
    for (name, seq, qual, hit) in &reads {
        let (seq, qual): (Vec<u8>, Vec<u8>) = if hit.rev {
            (
                seq.iter()
                    .rev()
                    .map(|&b| match b {
                        b'A' => b'T',
                        b'C' => b'G',
                        b'G' => b'C',
                        _ => b'A',
                    })
                    .collect(),
                qual.iter().rev().map(|q| q - 33).collect(),
            )
        } else {
            (seq.clone(), qual.iter().map(|q| q - 33).collect())
        };
        let record = RecordBuf::builder()
            .set_name(name.as_str())
            .set_flags(if hit.rev {
                Flags::REVERSE_COMPLEMENTED
            } else {
                Flags::empty()
            })
            .set_reference_sequence_id(0)
            .set_alignment_start(noodles_core::Position::try_from(hit.pos as usize + 1).unwrap())
            .set_mapping_quality(MappingQuality::new(37).unwrap())
            .set_cigar([Op::new(Kind::Match, 100)].into_iter().collect())
            .set_sequence(seq.into())
            .set_quality_scores(qual.into())
            .set_data(
                [
                    (Tag::EDIT_DISTANCE, Value::Int32(0)),
                    (Tag::MISMATCHED_POSITIONS, Value::from("100")),
                    (Tag::from([b'X', b'0']), Value::Int32(1)),
                ]
                .into_iter()
                .collect(),
            )
            .build();
        writer.write_alignment_record(&header, &record).unwrap();
        let b = Instant::now();
        bam.write_alignment_record(&header, &record).unwrap();
        bam_s += b.elapsed().as_secs_f64();
    }
    let noodles_s = t.elapsed().as_secs_f64() - bam_s;
    let theirs = writer.into_inner();
    let theirs_bam = bam.into_inner();

    assert_eq!(ours.len(), theirs.len(), "both write the same records");
    assert_eq!(
        ours_bam.len(),
        theirs_bam.len(),
        "both encode the same records"
    );
    println!(
        "{READS} records of 100 bp: fmalign formatter {:.0} k records/s ({:.0} MB/s), noodles RecordBuf + writer {:.0} k records/s; ratio {:.1}x",
        READS as f64 / ours_s / 1e3,
        ours.len() as f64 / ours_s / 1e6,
        READS as f64 / noodles_s / 1e3,
        noodles_s / ours_s
    );
    println!(
        "BAM: fmalign encoder {:.0} k records/s, noodles-bam encoder (RecordBuf given) {:.0} k records/s; ratio {:.1}x",
        READS as f64 / ours_bam_s / 1e3,
        READS as f64 / bam_s / 1e3,
        bam_s / ours_bam_s
    );
}
