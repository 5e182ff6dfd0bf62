//! Search micro-benchmark: backward-search steps per second per core (no
//! locate), then locate rate, on one thread.
//!
//! cargo bench --bench search -- INDEX.fmi READS.fq [MAX_READS]
//!
//! With no arguments it builds a random 4 Mb reference and samples reads from
//! it, so that `cargo bench` runs anywhere.

use std::path::Path;
use std::time::Instant;

use fmalign::index::{Index, IndexConfig, build_in_memory};
use fmalign::io::fastq::ReadSource;
use fmalign::map::count_steps;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let (index, reads) = if args.len() >= 2 {
        let index = Index::open(Path::new(&args[0])).expect("index");
        let max: usize = args
            .get(2)
            .map_or(usize::MAX, |s| s.parse().expect("MAX_READS"));
        let mut src = ReadSource::open(Path::new(&args[1]), 1).expect("reads");
        let mut reads = Vec::new();
        while let Some(b) = src.next_batch(1 << 24).expect("batch") {
            for i in 0..b.len() {
                if reads.len() < max {
                    reads.push(b.get(i).seq.to_vec());
                }
            }
        }
        (index, reads)
    } else {
        let mut x = 88172645463325252u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let bases = b"ACGT";
        let mut fa = b">r\n".to_vec();
        let seq: Vec<u8> = (0..4_000_000)
            .map(|_| bases[(next() % 4) as usize])
            .collect();
        fa.extend_from_slice(&seq);
        fa.push(b'\n');
        let r = fmalign::scan::read_fasta_from(&fa[..], Path::new("random")).expect("fasta");
        let index = build_in_memory(r, &IndexConfig::default()).expect("index");
        let reads = (0..100_000)
            .map(|_| {
                let p = (next() % (seq.len() as u64 - 100)) as usize;
                seq[p..p + 100].to_vec()
            })
            .collect();
        (index, reads)
    };
    let fm = index.fm();
    let k: u32 = std::env::var("FMALIGN_KMER").map_or(fmalign::kmer::DEFAULT_K, |v| {
        v.parse().expect("FMALIGN_KMER")
    });
    let t = Instant::now();
    let table = fmalign::kmer::KmerTable::new(&fm, k);
    println!(
        "k-mer table: k = {k}, built in {:.3} s",
        t.elapsed().as_secs_f64()
    );
    let views: Vec<&[u8]> = reads.iter().map(|r| r.as_slice()).collect();
    // Best of five: the machine's other load only ever slows a run down.
    let mut best = f64::INFINITY;
    let (mut steps, mut rows) = (0, 0);
    for _ in 0..5 {
        let t = Instant::now();
        (steps, rows) = count_steps(&fm, &table, &views);
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "backward search: {} reads, {steps} steps (each two rank queries), {:.1} M steps/s on one core (best of 5), {rows} rows",
        reads.len(),
        steps as f64 / best / 1e6
    );
    let t = Instant::now();
    let mut located = 0u64;
    for chunk in views.chunks(256) {
        located += fmalign::map::exact_hits_many(&fm, &table, &index.segments, chunk)
            .iter()
            .map(|h| h.len() as u64)
            .sum::<u64>();
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "search + locate: {located} hits, {:.0} reads/s on one core ({:.2} us/read)",
        reads.len() as f64 / secs,
        secs * 1e6 / reads.len() as f64
    );
}
