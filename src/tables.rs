//! Suffix array + text → BWT/Occ lines, superblock counts, C and the sampled
//! suffix array (the conventions are in [`crate::fm`]). Every pass is split
//! over Occ lines with rayon; the result does not depend on the thread count.
//! On a GPU ([`fm_on_gpu`]) the suffix array and the tables are one device
//! run. [`verify_occ`] recounts the Occ lines of a stored index.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::fm::{LINE_BASES, OccLine, RankIndex, SUPER_LINES};
use crate::sa::{Pos, Round, SaAlgorithm};

/// The FM-index tables in owned vectors, ready to be written.
#[derive(Debug)]
pub struct FmParts<P> {
    /// Row of `$` in `BWT'`.
    pub primary: u64,
    /// `C[0..5]`.
    pub c: [u64; 5],
    /// Interleaved BWT and counts.
    pub occ: Vec<OccLine>,
    /// Absolute counts per superblock.
    pub sup: Vec<[u64; 4]>,
    /// Sampled suffix array (`SA'[fm::sample_row(k)]` for each block `k`).
    pub ssa: Vec<P>,
}

/// Derives the FM-index tables from the text (codes 0..=3) and its suffix
/// array (without the sentinel row). `sample_shift` is log2 of the SA
/// sampling rate.
pub fn fm_from_sa<P: Pos>(text: &[u8], sa: &[P], sample_shift: u32) -> FmParts<P> {
    let n = text.len() as u64;
    assert_eq!(sa.len() as u64, n);
    // Row i of SA' is n for i = 0, else sa[i - 1].
    let primary = if n == 0 {
        0
    } else {
        1 + sa
            .par_iter()
            .position_any(|&p| p.to_u64() == 0)
            .expect("SA contains 0") as u64
    };
    // B[j] = BWT'[row] = T[SA'[row] - 1], row = j + (j >= primary): the
    // index in `text` of B[j].
    let b_index = |j: u64| -> usize {
        let row = j + (j >= primary) as u64;
        let p = if row == 0 {
            n
        } else {
            sa[row as usize - 1].to_u64()
        };
        p as usize - 1
    };
    // `text` is read at random (the SA in order): prefetched this many
    // bases ahead, so that the misses overlap.
    const AHEAD: usize = 48;
    let lines = n / LINE_BASES + 1;
    let mut occ: Vec<OccLine> = (0..lines)
        .into_par_iter()
        .map(|l| {
            let mut line = OccLine::default();
            let start = l * LINE_BASES;
            let end = (start + LINE_BASES).min(n);
            crate::dna::for_each_ahead(
                (end - start) as usize,
                AHEAD,
                |r| crate::dna::prefetch(&text[b_index(start + r as u64)]),
                // Local counts, made cumulative below.
                |r| line.push(r as u64, text[b_index(start + r as u64)]),
            );
            line
        })
        .collect();
    let (sup, c) = cumulate(&mut occ);
    let samples = (n >> sample_shift) + 1;
    let ssa = (0..samples)
        .into_par_iter()
        .map(|k| {
            let row = crate::fm::sample_row(k, sample_shift, n);
            if row == 0 {
                P::from_u64(n)
            } else {
                sa[row as usize - 1]
            }
        })
        .collect();
    FmParts {
        primary,
        c,
        occ,
        sup,
        ssa,
    }
}

/// The FM tables of a text from its BWT without the sentinel's row
/// (`bwt[j]` is `BWT'[j + (j >= primary)]`, as [`crate::sa::libsais_bwt`]
/// gives it) and the row of `$`: what [`fm_from_sa`] gives with no suffix
/// array samples but row 0's (`sample_shift` 63, the mirror index).
pub fn fm_from_bwt<P: Pos>(bwt: &[u8], primary: u64) -> FmParts<P> {
    let n = bwt.len() as u64;
    let lines = n / LINE_BASES + 1;
    let mut occ: Vec<OccLine> = (0..lines)
        .into_par_iter()
        .map(|l| {
            let start = (l * LINE_BASES) as usize;
            let end = (start + LINE_BASES as usize).min(bwt.len());
            OccLine::from_bases(&bwt[start..end])
        })
        .collect();
    let (sup, c) = cumulate(&mut occ);
    FmParts {
        primary,
        c,
        occ,
        sup,
        ssa: vec![P::from_u64(n)],
    }
}

/// `C[0..5]` from the counts of A, C, G, T in the text: `C[0] = 1` (the
/// row of `$`), then each symbol's rows start after the previous one's.
pub fn c_from_counts(counts: [u64; 4]) -> [u64; 5] {
    let mut c = [0u64; 5];
    c[0] = 1;
    for k in 0..4 {
        c[k + 1] = c[k] + counts[k];
    }
    c
}

/// Turns the line-local counts of `occ` into counts before each line,
/// relative to its superblock; returns the superblock counts and `C`.
pub fn cumulate(occ: &mut [OccLine]) -> (Vec<[u64; 4]>, [u64; 5]) {
    let lines = occ.len() as u64;
    let mut sup = Vec::with_capacity((lines / SUPER_LINES + 1) as usize);
    let mut total = [0u64; 4];
    for (l, line) in occ.iter_mut().enumerate() {
        if (l as u64).is_multiple_of(SUPER_LINES) {
            sup.push(total);
        }
        let base = sup.last().expect("pushed");
        let local = line.counts;
        for c in 0..4 {
            line.counts[c] = (total[c] - base[c]) as u32;
            total[c] += local[c] as u64;
        }
    }
    (sup, c_from_counts(total))
}

/// Builds the FM tables of `text` on the GPU: the suffix array with a
/// data-parallel `algorithm` (`auto` and `libsais` mean `hybrid`), then BWT,
/// Occ lines and the sampled SA on the device; only those come back.
/// Also returns the most device memory its buffers held at once (bytes).
/// An error (no device, out of device memory, a kernel failure) leaves the
/// caller free to build on the CPU instead (as does a build without the
/// `gpu` feature, where opening the device fails).
pub fn fm_on_gpu<P: Pos>(
    text: &[u8],
    algorithm: SaAlgorithm,
    sample_shift: u32,
    max_memory: Option<u64>,
    log: &mut (dyn FnMut(&Round) + Send),
) -> Result<(FmParts<P>, u64)> {
    use crate::sa::steps::Backend;
    use crate::sa::{by_steps, cuda, gpu_bytes_per_base};
    let n = text.len() as u64;
    let gpu = cuda::Cuda::open()?;
    let (free, _) = gpu.gpu().memory()?;
    let need = n.saturating_mul(gpu_bytes_per_base(
        std::mem::size_of::<P>() as u64,
        algorithm,
    ));
    let budget = max_memory.unwrap_or(u64::MAX).min(free as u64);
    if need > budget {
        return Err(Error::Gpu(format!(
            "{n} bases need about {} of device memory, more than the {} allowed (free device memory{})",
            crate::mem::human_bytes(need),
            crate::mem::human_bytes(budget),
            if max_memory.is_some() {
                ", --max-gpu-memory"
            } else {
                ""
            }
        )));
    }
    let packed = gpu.pack_text(text)?;
    let sa = if n < 2 {
        gpu.upload((0..n).map(P::from_u64).collect())?
    } else {
        by_steps::<_, P>(&gpu, &packed, n, algorithm.on_gpu(), log)?
    };
    let (primary, words, ssa) = gpu.fm_tables(&packed, &sa, sample_shift)?;
    let mut occ: Vec<OccLine> = bytemuck::zeroed_vec(words.len() / 8);
    bytemuck::cast_slice_mut::<OccLine, u64>(&mut occ).copy_from_slice(&words);
    let (sup, c) = cumulate(&mut occ);
    let parts = FmParts {
        primary,
        c,
        occ,
        sup,
        ssa,
    };
    Ok((parts, gpu.peak_bytes()))
}

/// Recounts every Occ line and superblock from the stored BWT, requires the
/// padding after the last base to be zero and the totals to agree with C.
/// One pass over the Occ section: cheap enough to run on every open, and it
/// guarantees that rank and LF stay inside `0..=n+1`.
pub fn verify_occ(fm: &RankIndex<'_>) -> std::result::Result<(), String> {
    let n = fm.n;
    let mut total = [0u64; 4];
    for (l, line) in fm.occ.iter().enumerate() {
        let l = l as u64;
        let base = fm.sup[(l / SUPER_LINES) as usize];
        if l.is_multiple_of(SUPER_LINES) && base != total {
            return Err(format!("superblock {} counts are wrong", l / SUPER_LINES));
        }
        for c in 0..4 {
            if line.counts[c] as u64 != total[c] - base[c] {
                return Err(format!("Occ line {l} counts are wrong"));
            }
        }
        let len = (n - (l * LINE_BASES).min(n)).min(LINE_BASES) as u32;
        for c in 0..4u8 {
            total[c as usize] += line.count_before(c, len);
        }
        if line.count_before(0, LINE_BASES as u32) - line.count_before(0, len)
            != LINE_BASES - len as u64
        {
            return Err(format!("Occ line {l} has non-zero padding"));
        }
    }
    if (0..4).any(|c| fm.c[c + 1] - fm.c[c] != total[c]) {
        return Err("C disagrees with the BWT".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fm::{FmIndex, RankIndex, Ssa};
    use crate::sa::{SaAlgorithm, naive, suffix_array};
    use proptest::prelude::*;

    fn view<'a>(parts: &'a FmParts<u32>, n: u64, shift: u32) -> FmIndex<'a> {
        FmIndex {
            tables: RankIndex {
                n,
                primary: parts.primary,
                c: parts.c,
                occ: &parts.occ,
                sup: &parts.sup,
            },
            ssa: Ssa::U32(&parts.ssa),
            sample_shift: shift,
        }
    }

    /// BWT', rank and locate against direct computation from the naive SA.
    fn check(text: &[u8], shift: u32) {
        let n = text.len() as u64;
        let sa = suffix_array::<u32>(text, SaAlgorithm::Auto, 2).unwrap();
        let parts = fm_from_sa(text, sa.as_slice(), shift);
        let fm = view(&parts, n, shift);
        let mut full = vec![n];
        full.extend(naive(text));
        let bwt: Vec<Option<u8>> = full
            .iter()
            .map(|&p| {
                if p == 0 {
                    None
                } else {
                    Some(text[p as usize - 1])
                }
            })
            .collect();
        let mut counts = [0u64; 4];
        for i in 0..=n {
            for c in 0..4u8 {
                assert_eq!(
                    fm.rank(c, i),
                    counts[c as usize],
                    "rank({c},{i}) of {text:?}"
                );
            }
            assert_eq!(fm.bwt(i), bwt[i as usize]);
            if let Some(c) = bwt[i as usize] {
                counts[c as usize] += 1;
            }
            assert_eq!(fm.locate(i), full[i as usize], "locate({i})");
        }
        for c in 0..4u8 {
            assert_eq!(fm.rank(c, n + 1), counts[c as usize]);
        }
    }

    #[test]
    fn small_and_boundary_sizes() {
        for n in [0usize, 1, 2, 3, 191, 192, 193, 383, 384, 385, 1000] {
            let text: Vec<u8> = (0..n)
                .map(|i| ((i * 2654435761usize) >> 7) as u8 & 3)
                .collect();
            for shift in [0, 1, 3, 5] {
                check(&text, shift);
            }
        }
        check(&[0; 500], 4);
        check(&[3; 400], 2);
    }

    /// Every sample block holds one row, in the block, row 0 in block 0;
    /// and the LF walks of locate stay short on exactly periodic texts
    /// whose copies are a multiple of the rate, where sampling every
    /// rate-th row leaves most walks to run to the start of the text (each
    /// interval of one offset in the unit starts at the same row modulo the
    /// rate): with a hashed row per block, a walk exceeds `t` steps with
    /// probability at most `exp(-t / rate)`, whatever the text.
    #[test]
    fn locate_walks_are_short_on_periodic_texts() {
        for (n, shift) in [
            (0u64, 3u32),
            (1, 1),
            (1000, 5),
            (1023, 5),
            (1024, 5),
            (77, 63),
        ] {
            let blocks = (n >> shift) + 1;
            for k in 0..blocks {
                let r = crate::fm::sample_row(k, shift, n);
                assert_eq!(r >> shift.min(63), k, "n {n} shift {shift} block {k}");
                assert!(
                    r <= n && (k > 0 || r == 0),
                    "n {n} shift {shift} block {k}: {r}"
                );
            }
        }
        let mut rng = 88172645463325252u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % 4) as u8
        };
        for (unit_len, copies, shift) in [(50usize, 64usize, 5u32), (97, 128, 4), (31, 256, 3)] {
            let unit: Vec<u8> = (0..unit_len).map(|_| next()).collect();
            let text = unit.repeat(copies);
            let n = text.len() as u64;
            let sa = suffix_array::<u32>(&text, SaAlgorithm::Auto, 2).unwrap();
            let parts = fm_from_sa(&text, sa.as_slice(), shift);
            let fm = view(&parts, n, shift);
            let mut longest = 0;
            for i in 0..=n {
                let (pos, steps) = fm.locate_walk(i);
                let want = if i == 0 {
                    n
                } else {
                    sa.as_slice()[i as usize - 1] as u64
                };
                assert_eq!(pos, want, "row {i}");
                longest = longest.max(steps);
            }
            // About rate * ln(n) expected; rows every rate-th: ~n.
            let rate = 1u64 << shift;
            assert!(
                longest <= 16 * rate,
                "unit {unit_len} x {copies}, rate {rate}: a walk of {longest} steps"
            );
        }
    }

    /// The mirror's tables from libsais' BWT equal those from the
    /// brute-force suffix array.
    fn check_bwt(text: &[u8]) {
        let sa: Vec<u32> = naive(text).into_iter().map(|p| p as u32).collect();
        let want = fm_from_sa(text, &sa, 63);
        let mut bwt = text.to_vec();
        let primary = crate::sa::libsais_bwt(&mut bwt, 2).unwrap();
        let got = fm_from_bwt::<u32>(&bwt, primary);
        assert_eq!(got.primary, want.primary, "{text:?}");
        assert_eq!(got.c, want.c, "{text:?}");
        assert_eq!(got.occ, want.occ, "{text:?}");
        assert_eq!(got.sup, want.sup, "{text:?}");
        assert_eq!(got.ssa, want.ssa, "{text:?}");
    }

    #[test]
    fn bwt_tables_small_and_boundary_sizes() {
        for n in [0usize, 1, 2, 3, 191, 192, 193, 383, 384, 385, 1000] {
            let text: Vec<u8> = (0..n)
                .map(|i| ((i * 2654435761usize) >> 7) as u8 & 3)
                .collect();
            check_bwt(&text);
        }
        check_bwt(&[0; 500]);
        check_bwt(&[3; 400]);
        check_bwt(&[1, 0].repeat(300));
    }

    proptest! {
        #[test]
        fn random_texts(text in proptest::collection::vec(0u8..4, 0..800), shift in 0u32..6) {
            check(&text, shift);
        }

        #[test]
        fn bwt_tables_of_random_texts(text in proptest::collection::vec(0u8..4, 0..800), sigma in 1u8..=4) {
            let text: Vec<u8> = text.into_iter().map(|c| c % sigma).collect();
            check_bwt(&text);
        }
    }
}
