//! Suffix-array construction behind one small interface.
//!
//! [`suffix_array`] takes the text (codes 0..=3, no sentinel; the end of the text
//! sorts before every base) and returns its suffix array in the position type
//! the index uses. Algorithms are values of [`SaAlgorithm`]: libsais
//! ([`libsais`]), and the data-parallel algorithms ([`DataParallel`]:
//! [`hybrid`], [`skew`], [`ls`]) written once over the steps of
//! [`steps::Backend`] and run here on the rayon backend [`cpu::Cpu`]. Every
//! algorithm returns exactly what libsais returns.

pub mod blockwise;
pub mod cpu;
// Without the `gpu` feature, a stand-in with no values (cuda/disabled.rs).
#[cfg_attr(not(feature = "gpu"), path = "cuda/disabled.rs")]
pub mod cuda;
mod doubling;
pub mod hybrid;
pub mod ls;
pub mod partsort;
pub mod skew;
pub mod steps;

use crate::error::{Error, Result};
use steps::{Backend, Word};

/// Which suffix-array construction to use. Every choice yields the same array.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SaAlgorithm {
    /// The fastest available on this machine (libsais today).
    #[default]
    Auto,
    /// Ilya Grebnov's SA-IS implementation (single-threaded unless built with
    /// the `openmp` feature).
    Libsais,
    /// spd-SA of Wang, Baxter & Owens: skew split, prefix doubling on the
    /// 2/3 sample, merge (data-parallel steps).
    Hybrid,
    /// wbo-skew, the data-parallel DC3 of Wang, Baxter & Owens.
    Skew,
    /// The data-parallel Larsson–Sadakane of Deng et al.
    Ls,
}

impl crate::Choice for SaAlgorithm {
    const ALL: &'static [Self] = &[
        SaAlgorithm::Auto,
        SaAlgorithm::Libsais,
        SaAlgorithm::Hybrid,
        SaAlgorithm::Skew,
        SaAlgorithm::Ls,
    ];

    fn name(self) -> &'static str {
        match self {
            SaAlgorithm::Auto => "auto",
            SaAlgorithm::Libsais => "libsais",
            SaAlgorithm::Hybrid => "hybrid",
            SaAlgorithm::Skew => "skew",
            SaAlgorithm::Ls => "ls",
        }
    }

    fn help(self) -> &'static str {
        match self {
            SaAlgorithm::Auto => "The fastest available on this machine (libsais today)",
            SaAlgorithm::Libsais => {
                "Ilya Grebnov's SA-IS implementation (single-threaded unless built with the `openmp` feature)"
            }
            SaAlgorithm::Hybrid => {
                "spd-SA of Wang, Baxter & Owens: skew split, prefix doubling on the 2/3 sample, merge (data-parallel steps)"
            }
            SaAlgorithm::Skew => "wbo-skew, the data-parallel DC3 of Wang, Baxter & Owens",
            SaAlgorithm::Ls => "The data-parallel Larsson–Sadakane of Deng et al",
        }
    }
}

impl SaAlgorithm {
    /// The data-parallel algorithm this choice runs on the CPU; `None` for
    /// libsais (`auto` is libsais on the CPU).
    pub fn data_parallel(self) -> Option<DataParallel> {
        match self {
            SaAlgorithm::Auto | SaAlgorithm::Libsais => None,
            SaAlgorithm::Hybrid => Some(DataParallel::Hybrid),
            SaAlgorithm::Skew => Some(DataParallel::Skew),
            SaAlgorithm::Ls => Some(DataParallel::Ls),
        }
    }

    /// The data-parallel algorithm this choice runs on the GPU, which has
    /// no libsais: `auto` and `libsais` are hybrid there.
    pub fn on_gpu(self) -> DataParallel {
        match self {
            SaAlgorithm::Auto | SaAlgorithm::Libsais | SaAlgorithm::Hybrid => DataParallel::Hybrid,
            SaAlgorithm::Skew => DataParallel::Skew,
            SaAlgorithm::Ls => DataParallel::Ls,
        }
    }
}

/// The data-parallel algorithms, written once over the steps of
/// [`steps::Backend`]: the CPU runs them for `--sa hybrid|skew|ls`, the GPU
/// for every `--sa` (libsais has no GPU version: `auto` and `libsais` mean
/// hybrid there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataParallel {
    /// [`hybrid`]: spd-SA of Wang, Baxter & Owens.
    Hybrid,
    /// [`skew`]: wbo-skew DC3.
    Skew,
    /// [`ls`]: Larsson–Sadakane of Deng et al.
    Ls,
}

impl std::fmt::Display for DataParallel {
    /// The `--sa` name: `hybrid`, `skew`, `ls`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DataParallel::Hybrid => "hybrid",
            DataParallel::Skew => "skew",
            DataParallel::Ls => "ls",
        })
    }
}

/// `--device auto` uses the GPU from this many bases on. Provisional: below
/// it the NVRTC compile and the context start-up (tenths of a second once,
/// the compile cached on disk after) outweigh the work; not yet measured on
/// a GPU.
pub const GPU_AUTO_MIN_BASES: u64 = 1 << 22;

/// Device memory the GPU build needs, in bytes per base, estimated from
/// the buffers live at its peak, the first sort (`p` = 4 or 8 bytes a
/// position): the positions sorted and their `u64` text keys, the radix
/// sort's copies of both, its digit counts (1 byte a base), the rank array
/// and the packed text. The hybrid sorts the 2n/3 suffixes of S12, ls all n;
/// skew's first level is bounded like ls (symbols, then S12 by triples).
/// When the hybrid's doubling stalls it holds the string of S12's names
/// (`p` bytes each) while skew sorts it: `2/3 (p + 3p + 18)` a base; when a
/// round stalls, at most half of S12 is recursed on, with `sa12` and the
/// tied suffixes' slots beside it, which is less (docs/ALGORITHMS.md). The
/// CUDA backend meters the real peak (`Cuda::peak_bytes`; `tests/gpu.rs`
/// checks it against this on a GPU); not measured on a GPU yet.
pub fn gpu_bytes_per_base(p: u64, algorithm: SaAlgorithm) -> u64 {
    match algorithm.on_gpu() {
        DataParallel::Ls | DataParallel::Skew => 3 * p + 18,
        DataParallel::Hybrid => {
            let doubling = (2 * (2 * p + 16) + 2 * p) / 3 + 2;
            let recursion = 2 * (4 * p + 18) / 3 + 1;
            doubling.max(recursion)
        }
    }
}

/// One round of a data-parallel algorithm, for `--stats`.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    /// The algorithm (printed `hybrid`, `skew` or `ls`).
    pub algorithm: DataParallel,
    /// Round (prefix doubling) or recursion depth (skew).
    pub round: u32,
    /// What the round did.
    pub stage: Stage,
    /// Characters by which the suffixes are sorted after the round.
    pub h: u64,
    /// Suffixes still unsorted after the round (for skew: the length of
    /// the string handed to the next level).
    pub unsorted: u64,
    /// Groups they form (for skew: distinct triples at this level).
    pub groups: u64,
    /// Wall time of the round.
    pub seconds: f64,
}

/// What a [`Round`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// `sort`: the first sort by the first characters (prefix doubling).
    Sort,
    /// `double`: a prefix-doubling round.
    Double,
    /// `recurse`: a skew level whose triples are not all distinct, so the
    /// string of their names goes down a level.
    Recurse,
    /// `unique`: a skew level whose triples are all distinct (no recursion).
    Unique,
    /// `merge`: the DC3 merge of a level (skew) or of the whole (hybrid).
    Merge,
}

impl std::fmt::Display for Stage {
    /// The name in the `--stats` line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stage::Sort => "sort",
            Stage::Double => "double",
            Stage::Recurse => "recurse",
            Stage::Unique => "unique",
            Stage::Merge => "merge",
        })
    }
}

impl Round {
    /// Header of [`Round::tsv`].
    pub const TSV_HEADER: &str = "#sa\talgorithm\tround\tstage\th\tunsorted\tgroups\tseconds";

    /// One tab-separated line.
    pub fn tsv(&self) -> String {
        format!(
            "sa\t{}\t{}\t{}\t{}\t{}\t{}\t{:.3}",
            self.algorithm,
            self.round,
            self.stage,
            self.h,
            self.unsorted,
            self.groups,
            self.seconds
        )
    }
}

/// A text position as stored in the index: `u32` while the text fits, `u64`
/// beyond.
pub trait Pos: Word + bytemuck::Pod + Ord + Send + Sync + std::fmt::Debug + 'static {
    /// Bytes per position in the file.
    const BYTES: u32;
}

/// A suffix array in the index's position width. For texts of 2^31 to 2^32
/// bases libsais can only sort into 64-bit entries; they are narrowed to 32
/// bits inside the same allocation (9 bytes per base at the peak, not 13).
#[derive(Debug)]
pub struct SuffixArray<P> {
    store: Store<P>,
}

#[derive(Debug)]
enum Store<P> {
    Native(Vec<P>),
    /// 32-bit entries packed at the front of a 64-bit allocation.
    Narrowed(Vec<u64>, usize),
}

impl<P: Pos> SuffixArray<P> {
    /// The entries.
    pub fn as_slice(&self) -> &[P] {
        match &self.store {
            Store::Native(v) => v,
            Store::Narrowed(v, n) => &bytemuck::cast_slice(v)[..*n],
        }
    }
}

impl<P> From<Vec<P>> for SuffixArray<P> {
    fn from(v: Vec<P>) -> Self {
        SuffixArray {
            store: Store::Native(v),
        }
    }
}

/// Narrows 64-bit suffix-array entries (each below 2^32) to 32 bits in place:
/// entry `i` moves to 32-bit word `i`, which lies at or before the words of
/// every entry not yet moved.
pub fn narrow_in_place(sa: Vec<u64>) -> SuffixArray<u32> {
    narrowed(sa)
}

/// [`narrow_in_place`] for a 32-bit `P` (`P::BYTES == 4`, checked).
fn narrowed<P: Pos>(mut sa: Vec<u64>) -> SuffixArray<P> {
    assert_eq!(P::BYTES, 4, "narrowing into {}-byte positions", P::BYTES);
    let n = sa.len();
    let words: &mut [u32] = bytemuck::cast_slice_mut(&mut sa);
    let low = usize::from(cfg!(target_endian = "big"));
    for i in 0..n {
        words[i] = words[2 * i + low];
    }
    SuffixArray {
        store: Store::Narrowed(sa, n),
    }
}

impl Pos for u32 {
    const BYTES: u32 = 4;
}

impl Pos for u64 {
    const BYTES: u32 = 8;
}

/// libsais' suffix array of `text` in the width `P`. libsais writes signed
/// entries, `i32` for texts of up to `i32::MAX` bases, else `i64`; a 32-bit
/// array of 2^31 to 2^32 bases is sorted into 64-bit entries and narrowed
/// in place ([`narrow_in_place`]). `threads` is the number of OpenMP workers
/// with the `openmp` feature; without it libsais runs on one thread.
pub fn libsais<P: Pos>(text: &[u8], threads: usize) -> Result<SuffixArray<P>> {
    if P::BYTES == 4 && text.len() <= i32::MAX as usize {
        // Non-negative i32 entries are the same bits as u32 ones.
        let sa: Vec<P> = bytemuck::cast_vec(libsais_signed::<i32>(text, threads)?);
        return Ok(sa.into());
    }
    let sa: Vec<u64> = bytemuck::cast_vec(libsais_signed::<i64>(text, threads)?);
    Ok(if P::BYTES == 4 {
        // 2^31 <= n < 2^32: libsais has no unsigned 32-bit output.
        narrowed(sa)
    } else {
        bytemuck::cast_vec::<u64, P>(sa).into()
    })
}

/// libsais into entries of type `O` (`i32` or `i64`).
fn libsais_signed<O: libsais::OutputElement>(text: &[u8], threads: usize) -> Result<Vec<O>> {
    let construction = libsais::SuffixArrayConstruction::for_text(text).in_owned_buffer::<O>();
    #[cfg(feature = "openmp")]
    let construction = construction.multi_threaded(libsais::ThreadCount::fixed(
        threads.clamp(1, u16::MAX as usize) as u16,
    ));
    #[cfg(not(feature = "openmp"))]
    let construction = {
        let _ = threads;
        construction.single_threaded()
    };
    construction
        .run()
        .map(|sa| sa.into_vec())
        .map_err(|e| Error::SuffixArray(format!("libsais: {e:?}")))
}

/// Replaces `text` (codes 0..=3) by its BWT with libsais, the sentinel's
/// row left out, and returns the primary index: 1 + the row of suffix 0 in
/// the suffix array ([`crate::tables::fm_from_sa`]'s `primary`). For the
/// mirror index, which needs no suffix array samples: the BWT comes out of
/// the sort itself, with no random reads of the text afterwards.
pub fn libsais_bwt(text: &mut [u8], threads: usize) -> Result<u64> {
    fn run<O: libsais::OutputElement>(text: &mut [u8], threads: usize) -> Result<u64> {
        let construction =
            libsais::BwtConstruction::replace_text(text).with_owned_temporary_array_buffer::<O>();
        #[cfg(feature = "openmp")]
        let construction = construction.multi_threaded(libsais::ThreadCount::fixed(
            threads.clamp(1, u16::MAX as usize) as u16,
        ));
        #[cfg(not(feature = "openmp"))]
        let construction = {
            let _ = threads;
            construction.single_threaded()
        };
        construction
            .run()
            .map(|bwt| bwt.primary_index() as u64)
            .map_err(|e| Error::SuffixArray(format!("libsais: {e:?}")))
    }
    if text.len() <= i32::MAX as usize {
        run::<i32>(text, threads)
    } else {
        run::<i64>(text, threads)
    }
}

/// The suffix array of `text` (codes 0..=3), as positions of type `P`.
pub fn suffix_array<P: Pos>(
    text: &[u8],
    algorithm: SaAlgorithm,
    threads: usize,
) -> Result<SuffixArray<P>> {
    suffix_array_with(text, algorithm, threads, &mut |_| {})
}

/// [`suffix_array`], reporting every round of a data-parallel algorithm to `log`.
/// Runs in a pool of `threads` workers.
pub fn suffix_array_with<P: Pos>(
    text: &[u8],
    algorithm: SaAlgorithm,
    threads: usize,
    log: &mut (dyn FnMut(&Round) + Send),
) -> Result<SuffixArray<P>> {
    if text.is_empty() {
        return Ok(Vec::new().into());
    }
    if text.len() == 1 {
        return Ok(vec![P::from_u64(0)].into());
    }
    let Some(data_parallel) = algorithm.data_parallel() else {
        return libsais(text, threads);
    };
    let pool = crate::thread_pool(threads)?;
    let packed = pool.install(|| cpu::Cpu.pack_text(text))?;
    pool.install(|| by_steps_cpu(&packed, text.len() as u64, data_parallel, log))
}

/// [`suffix_array_with`] that takes the text by value and gives it back: the
/// data-parallel algorithms work from the 2-bit packed text, so the byte text
/// (a byte per base) is dropped while they run and rebuilt from the packed
/// one afterwards.
pub fn suffix_array_owned<P: Pos>(
    text: Vec<u8>,
    algorithm: SaAlgorithm,
    threads: usize,
    log: &mut (dyn FnMut(&Round) + Send),
) -> Result<(SuffixArray<P>, Vec<u8>)> {
    let Some(data_parallel) = algorithm.data_parallel().filter(|_| text.len() >= 2) else {
        let sa = suffix_array_with(&text, algorithm, threads, log)?;
        return Ok((sa, text));
    };
    let n = text.len() as u64;
    let pool = crate::thread_pool(threads)?;
    let packed = pool.install(|| cpu::Cpu.pack_text(&text))?;
    drop(text);
    let sa = pool.install(|| by_steps_cpu(&packed, n, data_parallel, log))?;
    let text = pool.install(|| unpack(&packed, n as usize));
    Ok((sa, text))
}

/// The suffix array of the text of `n >= 2` bases packed by
/// [`steps::Backend::pack_text`], by a data-parallel `algorithm` on backend `b`.
pub fn by_steps<B: Backend, P: Pos>(
    b: &B,
    packed: &B::Buf<u64>,
    n: u64,
    algorithm: DataParallel,
    log: &mut dyn FnMut(&Round),
) -> Result<B::Buf<P>> {
    match algorithm {
        DataParallel::Hybrid => hybrid::suffix_array::<B, P>(b, packed, n, log),
        DataParallel::Skew => skew::suffix_array::<B, P>(b, packed, n, log),
        DataParallel::Ls => ls::suffix_array::<B, P>(b, packed, n, log),
    }
}

/// [`by_steps`] on the CPU backend (in the current pool), whose buffers are
/// host vectors: nothing to download.
#[allow(clippy::ptr_arg)] // the CPU backend's buffer type is `Vec`
fn by_steps_cpu<P: Pos>(
    packed: &Vec<u64>,
    n: u64,
    algorithm: DataParallel,
    log: &mut (dyn FnMut(&Round) + Send),
) -> Result<SuffixArray<P>> {
    Ok(by_steps::<_, P>(&cpu::Cpu, packed, n, algorithm, log)?.into())
}

/// The byte text (codes 0..=3) of a text packed by [`steps::Backend::pack_text`].
fn unpack(packed: &[u64], n: usize) -> Vec<u8> {
    use rayon::prelude::*;
    let mut text = vec![0u8; n];
    text.par_chunks_mut(32 * 1024)
        .enumerate()
        .for_each(|(c, t)| {
            for (j, b) in t.iter_mut().enumerate() {
                let p = c * 32 * 1024 + j;
                *b = ((packed[p / 32] >> (62 - 2 * (p % 32))) & 3) as u8;
            }
        });
    text
}

/// Brute-force suffix sorting: the oracle other constructions are tested
/// against. O(n² log n); tests only.
pub fn naive(text: &[u8]) -> Vec<u64> {
    let mut sa: Vec<u64> = (0..text.len() as u64).collect();
    sa.sort_by(|&a, &b| text[a as usize..].cmp(&text[b as usize..]));
    sa
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn libsais_equals_brute_force(text in proptest::collection::vec(0u8..4, 0..600), sigma in 1u8..=4) {
            let text: Vec<u8> = text.into_iter().map(|c| c % sigma).collect();
            let want = naive(&text);
            let narrow: Vec<u64> = suffix_array::<u32>(&text, SaAlgorithm::Auto, 1).unwrap().as_slice().iter().map(|&x| u64::from(x)).collect();
            let wide = suffix_array::<u64>(&text, SaAlgorithm::Libsais, 1).unwrap().as_slice().to_vec();
            let narrowed: Vec<u64> = narrow_in_place(wide.clone()).as_slice().iter().map(|&x| u64::from(x)).collect();
            prop_assert_eq!(&narrowed, &want);
            prop_assert_eq!(&narrow, &want);
            prop_assert_eq!(&wide, &want);
        }
    }

    #[test]
    fn libsais_of_texts_shorter_than_two() {
        for text in [&[][..], &[2][..]] {
            let want = naive(text);
            let narrow: Vec<u64> = libsais::<u32>(text, 1)
                .unwrap()
                .as_slice()
                .iter()
                .map(|&x| u64::from(x))
                .collect();
            assert_eq!(narrow, want);
            assert_eq!(libsais::<u64>(text, 2).unwrap().as_slice(), want);
        }
    }

    #[test]
    fn narrowing_keeps_values_above_2_pow_31() {
        let big: Vec<u64> = (0..1000u64)
            .map(|i| (u32::MAX as u64) - i * 4_000_001)
            .collect();
        let got: Vec<u64> = narrow_in_place(big.clone())
            .as_slice()
            .iter()
            .map(|&x| u64::from(x))
            .collect();
        assert_eq!(got, big);
    }

    #[test]
    fn periodic_and_unary() {
        for period in 1..=17usize {
            let text: Vec<u8> = (0..1000).map(|i| ((i % period) * 7 % 4) as u8).collect();
            let sa: Vec<u64> = suffix_array::<u32>(&text, SaAlgorithm::Auto, 2)
                .unwrap()
                .as_slice()
                .iter()
                .map(|&x| u64::from(x))
                .collect();
            assert_eq!(sa, naive(&text), "period {period}");
        }
    }
}

#[cfg(test)]
mod data_parallel_tests {
    use super::*;

    fn check(text: &[u8]) {
        let want = naive(text);
        for algo in [SaAlgorithm::Hybrid, SaAlgorithm::Skew, SaAlgorithm::Ls] {
            let got: Vec<u64> = suffix_array::<u32>(text, algo, 2)
                .unwrap()
                .as_slice()
                .iter()
                .map(|&x| u64::from(x))
                .collect();
            assert_eq!(got, want, "{algo:?} on {text:?}");
            let wide = suffix_array::<u64>(text, algo, 1)
                .unwrap()
                .as_slice()
                .to_vec();
            assert_eq!(wide, want, "{algo:?} (u64) on {text:?}");
        }
    }

    #[test]
    fn small_texts() {
        let mut x = 12345u64;
        for len in 0..200usize {
            for sigma in 1..=4u64 {
                let t: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x % sigma) as u8
                    })
                    .collect();
                check(&t);
            }
        }
    }
}
