//! The fuzz targets' bodies (fuzz/harness.rs) in `cargo test`, without
//! libFuzzer: every committed seed (fuzz/seeds/TARGET) and every input that
//! once crashed a target (test_data/fuzz/TARGET, regression tests), then
//! random mutations of the seeds — byte flips, insertions, deletions,
//! truncations, splices — for a fixed number of rounds per target. The
//! coverage-guided runs (`cargo fuzz run TARGET`) and what they found are in
//! docs/RELIABILITY.md.

#[path = "../fuzz/harness.rs"]
mod harness;

mod common;

use std::path::Path;

use common::Rng;

fn inputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<(String, Vec<u8>)> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    v.sort();
    v
}

fn mutate(rng: &mut Rng, seeds: &[(String, Vec<u8>)], x: &[u8]) -> Vec<u8> {
    let mut v = x.to_vec();
    for _ in 0..rng.range(1, 8) {
        let at = if v.is_empty() {
            0
        } else {
            rng.below(v.len() as u64) as usize
        };
        match rng.below(7) {
            0 if !v.is_empty() => v[at] ^= 1 << rng.below(8),
            1 if !v.is_empty() => v[at] = rng.below(256) as u8,
            2 => v.insert(at, *rng.pick(b"ACGTN>@+\n\r \t!~\x00\xff")),
            3 if !v.is_empty() => {
                v.remove(at);
            }
            4 => v.truncate(at),
            5 => {
                let (_, other) = rng.pick(seeds);
                if !other.is_empty() {
                    let s = rng.below(other.len() as u64) as usize;
                    let e = (s + rng.range(1, 64) as usize).min(other.len());
                    v.splice(at..at, other[s..e].iter().copied());
                }
            }
            _ if v.len() >= 8 => {
                // Overwrite a little-endian word with an extreme value.
                let at = at.min(v.len() - 8);
                let w = *rng.pick(&[0u64, 1, u32::MAX as u64, u64::MAX, 1 << 31, 64]);
                v[at..at + 8].copy_from_slice(&w.to_le_bytes());
            }
            _ => {}
        }
    }
    v
}

fn replay(target: &str, run: fn(&[u8]) -> bool, rounds: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seeds = inputs(&root.join("fuzz/seeds").join(target));
    assert!(!seeds.is_empty(), "no seeds for {target}");
    // Every seed is a valid input: it must get past the reader's checks.
    for (name, data) in &seeds {
        assert!(run(data), "{target}: seed {name} is refused");
    }
    for (name, data) in &inputs(&root.join("test_data/fuzz").join(target)) {
        let r = std::panic::catch_unwind(|| run(data));
        assert!(r.is_ok(), "{target}: {name} fails");
    }
    let mut rng = Rng::new(target.len() as u64 * 7919);
    let mut accepted = 0;
    for round in 0..rounds {
        let (_, seed) = rng.pick(&seeds).clone();
        let input = mutate(&mut rng, &seeds, &seed);
        match std::panic::catch_unwind(|| run(&input)) {
            Ok(ok) => accepted += usize::from(ok),
            Err(_) => {
                let keep = std::env::temp_dir().join(format!("fmalign-fuzz-{target}-{round}"));
                std::fs::write(&keep, &input).unwrap();
                panic!("{target}: mutated input fails; saved as {}", keep.display());
            }
        }
    }
    eprintln!("{target}: {rounds} mutated inputs, {accepted} accepted by the reader");
}

#[test]
fn fasta() {
    replay("fasta", harness::fasta, 150_000);
}

#[test]
fn fastq() {
    replay("fastq", harness::fastq, 150_000);
}

#[test]
fn index() {
    replay("index", harness::index, 100_000);
}

#[test]
fn sam() {
    replay("sam", harness::sam, 100_000);
}
