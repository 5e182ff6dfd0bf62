//! A lookup table of the suffix-array interval of every k-mer, so that a
//! search starts k steps in. The first steps of a backward search are the
//! expensive ones (the interval is wide, so its two ends sit on two random
//! Occ lines); a read's reverse strand often fails within about
//! log4(text length) steps, so for it the table saves most of the work.
//! Built at load time from the FM-index (no file format change) in
//! about 4^k · 4/3 extend steps; docs/BENCHMARKS.md has the measured gain.

use rayon::prelude::*;

use crate::fm::{EMPTY, Interval, RankIndex};

/// Default k: off. On chr20 with 100 bp reads a 10-mer table (16 MiB,
/// 0.13 s to build on 2 cores) made the search 4–8% faster, within the
/// noise of this machine, once the interleaved search had hidden the memory
/// latency of the first steps (docs/BENCHMARKS.md). `fmalign map --kmer 10`
/// turns it on.
pub const DEFAULT_K: u32 = 0;

/// Intervals of all k-mers, indexed by the k-mer as a base-4 number (first
/// base most significant).
#[derive(Debug, Clone)]
pub struct KmerTable {
    k: u32,
    intervals: Vec<Interval>,
}

impl KmerTable {
    /// Builds the table for `k` (0 gives an empty table that is never used).
    pub fn new(fm: &RankIndex<'_>, k: u32) -> KmerTable {
        if k == 0 {
            return KmerTable {
                k,
                intervals: Vec::new(),
            };
        }
        let mut intervals = vec![EMPTY; 1 << (2 * k)];
        // One task per last base: the k-mers ending in base `c` are the
        // indices congruent to c mod 4.
        let parts: Vec<Vec<(usize, Interval)>> = (0..4u8)
            .into_par_iter()
            .map(|c| {
                let mut out = Vec::with_capacity(1 << (2 * (k - 1)));
                fill(fm, k, 1, c as usize, fm.extend(fm.full(), c), &mut out);
                out
            })
            .collect();
        for (code, iv) in parts.into_iter().flatten() {
            intervals[code] = iv;
        }
        KmerTable { k, intervals }
    }

    /// k.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Every k-mer's interval, indexed by the k-mer (empty when k is 0).
    pub fn intervals(&self) -> &[Interval] {
        &self.intervals
    }

    /// The interval of the k-mer `code`.
    #[inline(always)]
    pub fn get(&self, code: usize) -> Interval {
        self.intervals[code]
    }
}

/// Depth-first: `code` holds the `depth` bases prepended so far (the first
/// prepended is the least significant digit).
fn fill(
    fm: &RankIndex<'_>,
    k: u32,
    depth: u32,
    code: usize,
    iv: Interval,
    out: &mut Vec<(usize, Interval)>,
) {
    if depth == k {
        out.push((code, iv));
        return;
    }
    for c in 0..4u8 {
        let next = if iv.is_empty() { iv } else { fm.extend(iv, c) };
        fill(
            fm,
            k,
            depth + 1,
            code | (c as usize) << (2 * depth),
            next,
            out,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{IndexConfig, build_in_memory};
    use crate::scan::read_fasta_from;
    use std::path::Path;

    #[test]
    fn table_equals_backward_search() {
        let mut x = 12345u64;
        let seq: Vec<u8> = (0..5000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                b"ACGT"[(x >> 62) as usize]
            })
            .collect();
        let mut fa = b">a\n".to_vec();
        fa.extend_from_slice(&seq[..2000]);
        fa.extend_from_slice(b"\n>b\nAAAAAAAAAAAAAAAAAAAAAAAA\n>c\n");
        fa.extend_from_slice(&seq[2000..]);
        let index = build_in_memory(
            read_fasta_from(&fa[..], Path::new("t")).unwrap(),
            &IndexConfig::default(),
        )
        .unwrap();
        let fm = index.fm();
        for k in [1, 3, 5] {
            let t = KmerTable::new(&fm, k);
            for code in 0..1usize << (2 * k) {
                let pattern: Vec<u8> = (0..k)
                    .rev()
                    .map(|i| ((code >> (2 * i)) & 3) as u8)
                    .collect();
                let want = fm.backward_search(&pattern);
                let got = t.get(code);
                if want.is_empty() {
                    assert!(got.is_empty());
                } else {
                    assert_eq!(got, want, "k={k} code={code}");
                }
            }
        }
    }
}
