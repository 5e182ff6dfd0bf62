//! Blockwise suffix sorting (`sa::blockwise`) against libsais on a FASTA
//! reference: time, peak memory, and whether the arrays are the same.
//!
//! cargo run --release --example blockwise -- FASTA [V [PART [THREADS [SORT]]]]
//!
//! V is the difference-cover period (default 64), PART the most suffixes a
//! part holds (default n/8), THREADS the rayon workers (default 2), SORT who
//! sorts the parts: `cpu` (blockwise's own sort, the default) or `steps`
//! (`sa::partsort` on the CPU backend's steps: the GPU's algorithm). The
//! emitted parts are not kept: their CRC-32 (positions as little-endian
//! `u32`) is compared with that of libsais' array, so the peak resident size
//! (`VmHWM`) read after the blockwise sort counts the text, the sample and
//! one part. The peak is then reset (`/proc/self/clear_refs`) before libsais
//! runs and read again after it.

use std::path::PathBuf;
use std::time::Instant;

use fmalign::sa::blockwise::Blockwise;
use fmalign::sa::{self, cpu::Cpu, partsort::OnSteps};

/// `VmHWM` (peak resident size) of this process in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Resets `VmHWM` to the current resident size (Linux 4.0 on).
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn main() -> fmalign::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(fasta) = args.first() else {
        eprintln!("usage: blockwise FASTA [V [PART [THREADS [cpu|steps]]]]");
        std::process::exit(2);
    };
    let reference = fmalign::scan::read_fasta(&PathBuf::from(fasta))?;
    let text = fmalign::dna::PackedText::from_codes(&reference.text);
    drop(reference);
    let n = text.len();
    let v: usize = args.get(1).map_or(64, |x| x.parse().expect("V"));
    let part: usize = args
        .get(2)
        .map_or(n.div_ceil(8), |x| x.parse().expect("PART"));
    let threads: usize = args.get(3).map_or(2, |x| x.parse().expect("THREADS"));
    let steps = match args.get(4).map_or("cpu", String::as_str) {
        "cpu" => false,
        "steps" => true,
        other => panic!("SORT is cpu or steps, not {other}"),
    };
    let reset = reset_peak();
    let before = peak_rss();
    println!(
        "n {n} v {v} part {part} threads {threads} sort {} rss_before {before}",
        if steps { "steps" } else { "cpu" }
    );

    let start = Instant::now();
    let mut crc = crc32fast::Hasher::new();
    let (mut parts, mut total, mut largest) = (0usize, 0usize, 0usize);
    let pool = fmalign::thread_pool(threads)?;
    let mut on_steps = OnSteps::new(&Cpu);
    let mut emit = |p: &[u32], _| {
        parts += 1;
        total += p.len();
        largest = largest.max(p.len());
        for x in p {
            crc.update(&x.to_le_bytes());
        }
        Ok(())
    };
    let summary = pool.install(|| {
        if steps {
            Blockwise::<u32>::new(v, part)
                .sorted_by(&mut on_steps)
                .run(&text, &mut emit)
        } else {
            Blockwise::<u32>::new(v, part).run(&text, &mut emit)
        }
    })?;
    let blockwise_s = start.elapsed().as_secs_f64();
    let blockwise_peak = peak_rss();
    let blockwise_crc = crc.finalize();
    println!(
        "blockwise {blockwise_s:.2} s (sample {:.2} s, {} B; collecting {:.2} s, sorting {:.2} s), {parts} parts (largest {largest}), peak {blockwise_peak} B = {:.2} B/base",
        summary.sample_seconds,
        summary.sample_bytes,
        summary.collect_seconds,
        summary.sort_seconds,
        blockwise_peak as f64 / n as f64
    );
    if steps {
        println!(
            "steps: {} text-key rounds at most, {} suffixes tied past v bases, {} class runs merged",
            on_steps.total.levels, on_steps.total.tied, on_steps.total.runs
        );
    }
    let text = text.to_codes();

    let reset = reset && reset_peak();
    let start = Instant::now();
    let sa = sa::libsais::<u32>(&text, threads)?;
    let libsais_s = start.elapsed().as_secs_f64();
    let libsais_peak = peak_rss();
    let mut crc = crc32fast::Hasher::new();
    for x in sa.as_slice() {
        crc.update(&x.to_le_bytes());
    }
    let same = total == n && crc.finalize() == blockwise_crc;
    println!(
        "libsais {libsais_s:.2} s, peak {libsais_peak} B = {:.2} B/base{}",
        libsais_peak as f64 / n as f64,
        if reset {
            ""
        } else {
            " (peak not reset: includes blockwise)"
        }
    );
    println!(
        "ratio {:.2}x time, {:.2}x peak; arrays {}",
        blockwise_s / libsais_s,
        blockwise_peak as f64 / libsais_peak as f64,
        if same { "IDENTICAL" } else { "DIFFER" }
    );
    if !same {
        std::process::exit(1);
    }
    Ok(())
}
