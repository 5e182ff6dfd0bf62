//! Suffix-array construction behind one small interface.
//!
//! [`build`] takes the text (codes 0..=3, no sentinel; the end of the text
//! sorts before every base) and returns its suffix array in the position type
//! the index uses. Backends are values of [`SaAlgorithm`]; later work adds the
//! seeds' data-parallel algorithms (CPU, GPU, MPI) as further variants, each
//! of which must return exactly what libsais returns.

use crate::error::{Error, Result};

/// Which suffix-array construction to use. Every choice yields the same array.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SaAlgorithm {
    /// The fastest available on this machine (libsais today).
    #[default]
    Auto,
    /// Ilya Grebnov's SA-IS implementation (single-threaded unless built with
    /// the `openmp` feature).
    Libsais,
}

/// A text position as stored in the index: `u32` while the text fits, `u64`
/// beyond.
pub trait Pos: bytemuck::Pod + Ord + Send + Sync + std::fmt::Debug + 'static {
    /// Bytes per position in the file.
    const BYTES: u32;
    /// Widen.
    fn to_u64(self) -> u64;
    /// Narrow; the caller guarantees that `x` fits.
    fn from_u64(x: u64) -> Self;
    /// libsais into this width.
    fn libsais(text: &[u8], threads: usize) -> Result<SuffixArray<Self>>;
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
pub fn narrow_in_place(mut sa: Vec<u64>) -> SuffixArray<u32> {
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
    #[inline]
    fn to_u64(self) -> u64 {
        self as u64
    }
    #[inline]
    fn from_u64(x: u64) -> Self {
        x as u32
    }
    fn libsais(text: &[u8], threads: usize) -> Result<SuffixArray<u32>> {
        if text.len() <= i32::MAX as usize {
            let sa: Vec<u32> = bytemuck::cast_vec(libsais32(text, threads)?);
            Ok(sa.into())
        } else {
            // 2^31 <= n < 2^32: libsais has no unsigned 32-bit output.
            Ok(narrow_in_place(bytemuck::cast_vec(libsais64(
                text, threads,
            )?)))
        }
    }
}

impl Pos for u64 {
    const BYTES: u32 = 8;
    #[inline]
    fn to_u64(self) -> u64 {
        self
    }
    #[inline]
    fn from_u64(x: u64) -> Self {
        x
    }
    fn libsais(text: &[u8], threads: usize) -> Result<SuffixArray<u64>> {
        let sa: Vec<u64> = bytemuck::cast_vec(libsais64(text, threads)?);
        Ok(sa.into())
    }
}

fn sa_error(e: libsais::LibsaisError) -> Error {
    Error::SuffixArray(format!("libsais: {e:?}"))
}

#[cfg(feature = "openmp")]
fn libsais32(text: &[u8], threads: usize) -> Result<Vec<i32>> {
    use libsais::{SuffixArrayConstruction, ThreadCount};
    let t = ThreadCount::fixed(threads.clamp(1, u16::MAX as usize) as u16);
    let r = SuffixArrayConstruction::for_text(text)
        .in_owned_buffer32()
        .multi_threaded(t)
        .run();
    r.map(|r| r.into_vec()).map_err(sa_error)
}

#[cfg(not(feature = "openmp"))]
fn libsais32(text: &[u8], _threads: usize) -> Result<Vec<i32>> {
    use libsais::SuffixArrayConstruction;
    let r = SuffixArrayConstruction::for_text(text)
        .in_owned_buffer32()
        .single_threaded()
        .run();
    r.map(|r| r.into_vec()).map_err(sa_error)
}

#[cfg(feature = "openmp")]
fn libsais64(text: &[u8], threads: usize) -> Result<Vec<i64>> {
    use libsais::{SuffixArrayConstruction, ThreadCount};
    let t = ThreadCount::fixed(threads.clamp(1, u16::MAX as usize) as u16);
    let r = SuffixArrayConstruction::for_text(text)
        .in_owned_buffer64()
        .multi_threaded(t)
        .run();
    r.map(|r| r.into_vec()).map_err(sa_error)
}

#[cfg(not(feature = "openmp"))]
fn libsais64(text: &[u8], _threads: usize) -> Result<Vec<i64>> {
    use libsais::SuffixArrayConstruction;
    let r = SuffixArrayConstruction::for_text(text)
        .in_owned_buffer64()
        .single_threaded()
        .run();
    r.map(|r| r.into_vec()).map_err(sa_error)
}

/// The suffix array of `text` (codes 0..=3), as positions of type `P`.
pub fn build<P: Pos>(
    text: &[u8],
    algorithm: SaAlgorithm,
    threads: usize,
) -> Result<SuffixArray<P>> {
    if text.is_empty() {
        return Ok(Vec::new().into());
    }
    if text.len() == 1 {
        return Ok(vec![P::from_u64(0)].into());
    }
    match algorithm {
        SaAlgorithm::Auto | SaAlgorithm::Libsais => P::libsais(text, threads),
    }
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
            let narrow: Vec<u64> = build::<u32>(&text, SaAlgorithm::Auto, 1).unwrap().as_slice().iter().map(|&x| u64::from(x)).collect();
            let wide = build::<u64>(&text, SaAlgorithm::Libsais, 1).unwrap().as_slice().to_vec();
            let narrowed: Vec<u64> = narrow_in_place(wide.clone()).as_slice().iter().map(|&x| u64::from(x)).collect();
            prop_assert_eq!(&narrowed, &want);
            prop_assert_eq!(&narrow, &want);
            prop_assert_eq!(&wide, &want);
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
            let sa: Vec<u64> = build::<u32>(&text, SaAlgorithm::Auto, 2)
                .unwrap()
                .as_slice()
                .iter()
                .map(|&x| u64::from(x))
                .collect();
            assert_eq!(sa, naive(&text), "period {period}");
        }
    }
}
