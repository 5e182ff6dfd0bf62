//! Temporary: FASTQ parse throughput of fastq::ReadSource.
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let bases: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(10_000_000);
    let t = Instant::now();
    let mut src = fmalign::fastq::ReadSource::open(
        std::path::Path::new(&path),
        std::env::var("T").map(|t| t.parse().unwrap()).unwrap_or(1),
    )
    .unwrap();
    let (mut reads, mut b) = (0usize, 0usize);
    while let Some(batch) = src.next_batch(bases).unwrap() {
        reads += batch.len();
        b += batch.bases();
    }
    let s = t.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&path).unwrap().len() as f64;
    println!(
        "{reads} reads, {b} bases, {s:.3} s, {:.0} MB/s, {:.2} M reads/s",
        bytes / s / 1e6,
        reads as f64 / s / 1e6
    );
}
#[global_allocator]
static A: fmalign::alloc::BigPages = fmalign::alloc::BigPages;
