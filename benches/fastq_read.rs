//! How fast the map reader parses FASTQ: `fastq::ReadSource` (needletail,
//! the SAM checks of every read, the copy into a batch) against needletail
//! alone (records found, nothing checked or copied), over the same 1.2 M
//! reads of 150 bases in memory, plain; then the same reads gzip- and
//! BGZF-compressed (level 1), read by `ReadSource` and by needletail alone
//! (its own one-thread inflate). `ReadSource` runs with 1, 2, 4 and all the
//! machine's threads: from 2, gzip is inflated ahead on a thread of its own
//! and BGZF by that many workers (`input::decompressed_with`); from 4, FASTQ
//! is parsed in pieces on that many threads (`fastq::Chunked`). Best of
//! five. The allocator is fmalign's (`alloc::BigPages`), as in the binary.
//!
//! cargo bench --bench fastq_read

use std::io::{Cursor, Write};
use std::path::Path;
use std::time::Instant;

use fmalign::io::fastq::ReadSource;

const READS: usize = 1_200_000;

#[global_allocator]
static A: fmalign::alloc::BigPages = fmalign::alloc::BigPages;

/// 1, 2, 4 and the machine's threads.
fn thread_counts() -> Vec<usize> {
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut t = vec![1, 2, 4, all];
    t.sort_unstable();
    t.dedup();
    t
}

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
    let read_all = |data: &'static [u8], threads: usize| {
        let mut src =
            ReadSource::with_threads(Cursor::new(data), Path::new("mem.fq"), threads).unwrap();
        let mut n = 0;
        while let Some(b) = src.next_batch(10_000_000).unwrap() {
            n += b.len();
        }
        n
    };
    let peer = best(&|| {
        let mut p = needletail::parse_fastx_reader(Cursor::new(fq)).unwrap();
        let mut n = 0;
        while let Some(r) = p.next() {
            std::hint::black_box(r.unwrap().num_bases());
            n += 1;
        }
        n
    });
    println!("{READS} reads of 150 bases, {mb:.0} MB of FASTQ, best of 5");
    println!(
        "plain: needletail alone {peer:.3} s ({:.0} MB/s, {:.2} M reads/s)",
        mb / peer,
        READS as f64 / peer / 1e6
    );
    for t in thread_counts() {
        let s = best(&|| read_all(fq, t));
        println!(
            "plain: ReadSource {t:2} threads {s:.3} s ({:.0} MB/s, {:.2} M reads/s); ratio to needletail alone {:.2}",
            mb / s,
            READS as f64 / s / 1e6,
            s / peer
        );
    }

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
            "{what} ({:.0} MB): needletail alone {peer:.3} s ({:.2} M reads/s)",
            data.len() as f64 / 1e6,
            READS as f64 / peer / 1e6
        );
        for t in thread_counts() {
            let s = best(&|| read_all(data, t));
            println!(
                "{what}: ReadSource {t:2} threads {s:.3} s ({:.2} M reads/s); ratio to needletail alone {:.2}",
                READS as f64 / s / 1e6,
                s / peer
            );
        }
    }
}
