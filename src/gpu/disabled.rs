//! The GPU context's stand-in without the `gpu` feature (mounted as
//! [`super::context`] by `gpu/mod.rs`): the names the other rooms use, with
//! no values. [`Gpu`] is an empty enum, so code over it compiles in every
//! build and never runs: nothing can open a device ([`super::probe`] says
//! [`super::Probe::NotBuilt`], and `sa::cuda::Cuda::open` fails). The CUDA
//! backend's own stand-in, which implements `sa::steps::Backend` (a layer
//! above this one), is `sa/cuda/disabled.rs`.

use crate::error::Result;

/// What a device buffer needs of its elements: nothing without the `gpu`
/// feature.
pub trait DeviceElem {}
impl<T> DeviceElem for T {}

/// A device context: none without the `gpu` feature.
pub enum Gpu {}

impl Gpu {
    /// Free and total device memory, in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        match *self {}
    }
}
