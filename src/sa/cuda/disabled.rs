//! The CUDA backend's stand-in without the `gpu` feature (mounted as
//! [`super::cuda`] by `sa/mod.rs`): the same names, with no values. [`Cuda`]
//! is an empty enum, so [`Cuda::open`] is the one function that runs (it
//! fails, as opening a device fails on a machine without one) and every
//! other body is `match *self {}`. The rooms that use the backend
//! (`tables::fm_on_gpu`, `index::bounded`) need no `cfg` of their own:
//! their GPU path is compiled in every build and left at its first step,
//! with the same error and fallback to the CPU as a GPU build without a
//! device.
//!
//! It lives here rather than in `gpu/disabled.rs` because it implements
//! [`Backend`], which sits in `sa`, above `gpu` in the layers.

use std::convert::Infallible;

use super::steps::{Backend, CoverSample, Elem, Iota, Order, RankLayout, SegSortReport, Word};
use crate::error::{Error, Result};
use crate::gpu::context::Gpu;

/// The CUDA backend: none without the `gpu` feature.
pub enum Cuda {}

impl Cuda {
    /// Fails: built without the `gpu` feature.
    pub fn open() -> Result<Self> {
        Err(Error::Gpu("built without the gpu feature".into()))
    }

    /// The most device memory the backend's buffers held at once.
    pub fn peak_bytes(&self) -> u64 {
        match *self {}
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        match *self {}
    }

    /// The FM-index tables of a text from its suffix array on the device.
    pub fn fm_tables<W: Word>(
        &self,
        _: &Infallible,
        _: &Infallible,
        _: u32,
    ) -> Result<(u64, Vec<u64>, Vec<W>)> {
        match *self {}
    }
}

impl Backend for Cuda {
    type Buf<T: Elem> = Infallible;

    fn name(&self) -> &'static str {
        match *self {}
    }
    fn len<T: Elem>(&self, _: &Infallible) -> usize {
        match *self {}
    }
    fn zeros<T: Elem>(&self, _: usize) -> Result<Infallible> {
        match *self {}
    }
    fn upload<T: Elem>(&self, _: Vec<T>) -> Result<Infallible> {
        match *self {}
    }
    fn download<T: Elem>(&self, _: Infallible) -> Result<Vec<T>> {
        match *self {}
    }
    fn copy<T: Elem>(&self, _: &Infallible) -> Result<Infallible> {
        match *self {}
    }
    fn concat<T: Elem>(&self, _: &Infallible, _: &Infallible) -> Result<Infallible> {
        match *self {}
    }
    fn slice<T: Elem>(&self, _: &Infallible, _: usize, _: usize) -> Result<Infallible> {
        match *self {}
    }
    fn radix_sort_pairs<K: Word, V: Elem>(
        &self,
        _: &mut Infallible,
        _: &mut Infallible,
        _: u32,
    ) -> Result<()> {
        match *self {}
    }
    fn exclusive_scan<W: Word>(&self, _: &mut Infallible) -> Result<W> {
        match *self {}
    }
    fn segmented_scan<W: Word>(&self, _: &mut Infallible, _: &Infallible) -> Result<()> {
        match *self {}
    }
    fn compact<T: Elem>(&self, _: &Infallible, _: &Infallible) -> Result<Infallible> {
        match *self {}
    }
    fn gather<T: Elem, I: Word>(&self, _: &Infallible, _: &Infallible) -> Result<Infallible> {
        match *self {}
    }
    fn scatter<T: Elem, I: Word>(
        &self,
        _: &Infallible,
        _: &Infallible,
        _: &mut Infallible,
    ) -> Result<()> {
        match *self {}
    }
    fn head_flags<K: Word>(&self, _: &Infallible, _: Option<&Infallible>) -> Result<Infallible> {
        match *self {}
    }
    fn segmented_sort<K: Word, V: Elem>(
        &self,
        _: &Infallible,
        _: &mut Infallible,
        _: &mut Infallible,
        _: usize,
    ) -> Result<SegSortReport> {
        match *self {}
    }
    fn merge<W: Word>(
        &self,
        _: &Infallible,
        _: &Infallible,
        _: &Order<'_, Self, W>,
    ) -> Result<Infallible> {
        match *self {}
    }
    fn count(&self, _: &Infallible) -> Result<u64> {
        match *self {}
    }
    fn iota<W: Word>(&self, _: usize, _: Iota) -> Result<Infallible> {
        match *self {}
    }
    fn fill<W: Word>(&self, _: usize, _: W) -> Result<Infallible> {
        match *self {}
    }
    fn pack_text(&self, _: &[u8]) -> Result<Infallible> {
        match *self {}
    }
    fn text_keys<K: Word, W: Word>(
        &self,
        _: &Infallible,
        _: u64,
        _: &Infallible,
        _: u32,
    ) -> Result<Infallible> {
        match *self {}
    }
    fn sort_suffixes<W: Word>(
        &self,
        _: &Infallible,
        _: u64,
        _: &mut Infallible,
        _: u32,
    ) -> Result<Infallible> {
        match *self {}
    }
    fn text_heads<W: Word>(
        &self,
        _: &Infallible,
        _: u64,
        _: &Infallible,
        _: u32,
    ) -> Result<Infallible> {
        match *self {}
    }
    fn head_index<W: Word>(&self, _: &Infallible, _: u64) -> Result<Infallible> {
        match *self {}
    }
    fn compact_index<W: Word>(&self, _: &Infallible) -> Result<Infallible> {
        match *self {}
    }
    fn scatter_slots<W: Word>(
        &self,
        _: &Infallible,
        _: &Infallible,
        _: RankLayout,
        _: &mut Infallible,
    ) -> Result<()> {
        match *self {}
    }
    fn symbols<W: Word>(&self, _: &Infallible, _: u64) -> Result<Infallible> {
        match *self {}
    }
    fn fetch<W: Word>(
        &self,
        _: &Infallible,
        _: RankLayout,
        _: &Infallible,
        _: u64,
        _: u64,
    ) -> Result<Infallible> {
        match *self {}
    }
    fn triple_keys<K: Word, W: Word>(
        &self,
        _: &Infallible,
        _: &Infallible,
        _: u64,
        _: u32,
    ) -> Result<Infallible> {
        match *self {}
    }
    fn slots<W: Word>(&self, _: &Infallible, _: RankLayout) -> Result<Infallible> {
        match *self {}
    }
    fn split_positions<W: Word>(&self, _: &Infallible, _: u64) -> Result<Infallible> {
        match *self {}
    }
    fn head_values<W: Word>(&self, _: &Infallible, _: &Infallible, _: u64) -> Result<Infallible> {
        match *self {}
    }
    fn add_flags<W: Word>(&self, _: &mut Infallible, _: &Infallible) -> Result<()> {
        match *self {}
    }
    fn sub_const<W: Word>(&self, _: &mut Infallible, _: u64) -> Result<()> {
        match *self {}
    }
    fn widen<W: Word>(&self, _: &Infallible) -> Result<Infallible> {
        match *self {}
    }
    fn unsorted(&self, _: &Infallible) -> Result<Infallible> {
        match *self {}
    }
    fn segment_lengths<W: Word>(&self, _: &Infallible) -> Result<Infallible> {
        match *self {}
    }
    fn in_range<W: Word>(&self, _: &Infallible, _: u64, _: u64) -> Result<Infallible> {
        match *self {}
    }
    fn mod3_is<W: Word>(&self, _: &Infallible, _: u64) -> Result<Infallible> {
        match *self {}
    }
    fn residues<W: Word>(&self, _: &Infallible, _: u64) -> Result<Infallible> {
        match *self {}
    }
    fn cover_ranks<W: Word>(
        &self,
        _: &Infallible,
        _: u64,
        _: &CoverSample<'_, Self>,
    ) -> Result<Infallible> {
        match *self {}
    }
}
