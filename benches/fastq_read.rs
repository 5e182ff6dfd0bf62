//! How fast the map reader parses FASTQ: `fastq::ReadSource` (needletail,
//! the SAM checks of every read, the copy into a batch) against needletail
//! alone (records found, nothing checked or copied), over the same 1.2 M
//! reads of 150 bases in memory, plain (one thread); then the same reads
//! gzip- and BGZF-compressed (level 1), read by `ReadSource` with one
//! thread and with two (gzip inflated ahead on a thread of its own, BGZF by
//! two workers: `input::decompressed_with`) and by needletail alone (its own
//! one-thread inflate). Best of five.
//!
//! cargo bench --bench fastq_read

use std::io::{Cursor, Write};
use std::path::Path;
use std::time::Instant;

use fmalign::fastq::ReadSource;

const READS: usize = 1_200_000;

fn main() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut fq = Vec::with_capacity(READS * 340);
    for i in 0..READS {
        fq.extend_from_slice(format!("@sim_{i}_{:x}/1\n", next() % 1_000_000).as_bytes());
        for _ in 0..150 {
            fq.push(b"ACGT"[(next() % 4) as usize]);
        }
        fq.extend_from_slice(b"\n+\n");
        for _ in 0..150 {
            fq.push(b'!' + (next() % 41) as u8);
        }
        fq.push(b'\n');
    }
    // 'static, so that each run reads it in place (no copy timed).
    let fq: &'static [u8] = Box::leak(fq.into_boxed_slice());
    let mb = fq.len() as f64 / 1e6;
    let best = |f: &dyn Fn() -> usize| {
        (0..5)
            .map(|_| {
                let t = Instant::now();
                assert_eq!(f(), READS);
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let ours = best(&|| {
        let mut src = ReadSource::from_reader(Cursor::new(fq), Path::new("mem.fq")).unwrap();
        let mut n = 0;
        while let Some(b) = src.next_batch(10_000_000).unwrap() {
            n += b.len();
        }
        n
    });
    let peer = best(&|| {
        let mut p = needletail::parse_fastx_reader(Cursor::new(fq)).unwrap();
        let mut n = 0;
        while let Some(r) = p.next() {
            std::hint::black_box(r.unwrap().num_bases());
            n += 1;
        }
        n
    });
    println!("{READS} reads of 150 bases, {mb:.0} MB of FASTQ, one thread, best of 5");
    for (what, s) in [("fmalign ReadSource", ours), ("needletail alone", peer)] {
        println!(
            "{what:20} {s:.3} s  {:6.0} MB/s  {:5.2} M reads/s",
            mb / s,
            READS as f64 / s / 1e6
        );
    }
    println!("ratio ReadSource / needletail time: {:.2}", ours / peer);

    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(fq).unwrap();
        e.finish().unwrap()
    };
    let bgzf = {
        let mut w = noodles_bgzf::io::writer::Builder::default()
            .set_compression_level(noodles_bgzf::io::writer::CompressionLevel::FAST)
            .build_from_writer(Vec::new());
        w.write_all(fq).unwrap();
        w.finish().unwrap()
    };
    for (what, data) in [("gzip", gz), ("BGZF", bgzf)] {
        let data: &'static [u8] = Box::leak(data.into_boxed_slice());
        let ours = |threads: usize| {
            best(&|| {
                let mut src =
                    ReadSource::with_threads(Cursor::new(data), Path::new("mem.fq.gz"), threads)
                        .unwrap();
                let mut n = 0;
                while let Some(b) = src.next_batch(10_000_000).unwrap() {
                    n += b.len();
                }
                n
            })
        };
        let (one, two) = (ours(1), ours(2));
        let peer = best(&|| {
            let mut p = needletail::parse_fastx_reader(Cursor::new(data)).unwrap();
            let mut n = 0;
            while let Some(r) = p.next() {
                std::hint::black_box(r.unwrap().num_bases());
                n += 1;
            }
            n
        });
        println!(
            "{what} ({:.0} MB): ReadSource 1 thread {one:.3} s ({:.2} M reads/s), 2 threads {two:.3} s ({:.2} M reads/s); needletail alone {peer:.3} s ({:.2} M reads/s); ratio 2 threads / needletail {:.2}",
            data.len() as f64 / 1e6,
            READS as f64 / one / 1e6,
            READS as f64 / two / 1e6,
            READS as f64 / peer / 1e6,
            two / peer
        );
    }
}
