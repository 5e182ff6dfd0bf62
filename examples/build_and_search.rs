//! FASTA text → index in memory → exact hits of a read on both strands.
//!
//! cargo run --example build_and_search

use std::path::Path;

use fmalign::index::{IndexConfig, build_in_memory};
use fmalign::map::exact_hits;
use fmalign::scan::read_fasta_from;

fn main() -> fmalign::Result<()> {
    let fasta = b">chr1\nACGTTGCANNNNACGTTGCA\n>chr2\nTGCAACGT\n";
    let reference = read_fasta_from(&fasta[..], Path::new("example.fa"))?;
    let index = build_in_memory(reference, &IndexConfig::default())?;
    let fm = index.fm();
    for read in [&b"ACGTTGCA"[..], b"TGCAACGT", b"GCANNNNA", b"CAAC"] {
        let iv = fm.backward_search(
            &read
                .iter()
                .map(|&b| b"ACGT".iter().position(|&x| x == b).unwrap_or(0) as u8)
                .collect::<Vec<_>>(),
        );
        println!(
            "{}: {} forward-strand rows in the FM-index",
            String::from_utf8_lossy(read),
            iv.len()
        );
        for hit in exact_hits(&fm, &index.segments, read) {
            let contig = &index.layout.contigs[hit.contig as usize].name;
            println!(
                "  {contig}:{} {}",
                hit.pos + 1,
                if hit.rev { '-' } else { '+' }
            );
        }
    }
    Ok(())
}
