//! Exact mapping on the device without the `gpu` feature (mounted as
//! [`super::cuda`] by `map/mod.rs`): the same names, with no values.
//! [`DeviceIndex`] is an empty enum, so [`DeviceIndex::upload`] is the one
//! function that runs (it fails, as opening a device fails on a machine
//! without one) and every other body is `match *self {}`. The pipeline
//! (`map::open_device`, the search stage) is compiled in every build and
//! stops before its first step.

use crate::error::{Error, Result};
use crate::fm::Interval;
use crate::index::Index;
use crate::search::{BiIndex, Found, SeedEngine};

/// Reads per sub-batch of the device's exact search (as with the `gpu`
/// feature).
pub const SUB_READS: usize = 1 << 20;

/// The FM-index in device memory: none without the `gpu` feature.
pub enum DeviceIndex {}

impl DeviceIndex {
    /// Fails: built without the `gpu` feature.
    pub fn upload(_: &Index) -> Result<Self> {
        Err(Error::Gpu("built without the gpu feature".into()))
    }

    /// `[forward, reverse]` intervals of each read.
    pub fn exact(&self, _: &[&[u8]]) -> Result<Vec<[Interval; 2]>> {
        match *self {}
    }

    /// `[forward, reverse]` intervals of each read, in sub-batches.
    pub fn exact_batch(&self, _: &[&[u8]]) -> Result<Vec<[Interval; 2]>> {
        match *self {}
    }

    /// With the k-mer table on the device.
    pub fn with_kmer(self, _: &crate::kmer::KmerTable) -> Result<Self> {
        match self {}
    }

    /// With PAC on the device.
    pub fn with_pac(self, _: &Index) -> Result<Self> {
        match self {}
    }

    /// With the reversed text's rank tables on the device.
    pub fn with_rev(self, _: &Index) -> Result<Self> {
        match self {}
    }

    /// Seconds the exact search kernel ran, and the bases it searched.
    pub fn kernel_time(&self) -> (f64, u64) {
        match *self {}
    }

    /// The text positions of suffix-array rows.
    pub fn locate(&self, _: &[u64]) -> Result<Vec<u64>> {
        match *self {}
    }
}

impl SeedEngine for DeviceIndex {
    fn exact(&self, _: &[&[u8]]) -> Result<Vec<Interval>> {
        match *self {}
    }
    fn locate(&self, _: &[u64]) -> Result<Vec<u64>> {
        match *self {}
    }
    fn verify(&self, _: &[&[u8]], _: &[(u32, u64)], _: u8) -> Result<Vec<Option<u8>>> {
        match *self {}
    }
    fn schemes(
        &self,
        _: &BiIndex<'_>,
        _: &[&[u8]],
        _: &[(u32, u8)],
        _: u8,
    ) -> Result<Vec<Vec<Found>>> {
        match *self {}
    }
}
