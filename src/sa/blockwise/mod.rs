//! Blockwise suffix sorting in bounded memory (Kärkkäinen 2007, "Fast BWT in
//! small space by blockwise suffix sorting"; bowtie-build's `--bmax`/`--dcv`).
//! `fmalign index` uses it when the whole-text build does not fit the memory
//! limit ([`crate::index::bounded`]).
//!
//! **Method.**
//!
//! 1. A *difference cover* `D` of `Z_v` ([`cover()`]): every `d` in `0..v` is
//!    `(a - b) mod v` for some `a, b` in `D`. For any two positions `i, j`
//!    there is a `k < v` ([`Cover::delta`]) with `i + k` and `j + k` both in
//!    the sample `{p : p mod v in D}`.
//! 2. The sampled suffixes are ranked exactly ([`DcSample`]): sorted by their
//!    first `v` characters, then refined by prefix doubling with steps
//!    `v, 2v, 4v, ...` (`p + h` is sampled when `p` is) until every rank is
//!    distinct. Ranks are `u32`, one per sample slot.
//! 3. Any two suffixes then compare in `O(v)` ([`DcSample::cmp`]): their first
//!    `delta(i, j)` characters, then the ranks of `i + delta` and `j + delta`.
//! 4. [`Blockwise::run`] counts the suffixes per bucket of their first `k <= 10`
//!    bases (one pass over the text), groups consecutive buckets into parts
//!    of at most `max_part` suffixes, and for each part places its suffixes
//!    by bucket (one more pass), sorts each bucket word by word (32 bases a
//!    level, up to `v` bases: an MSD radix sort in cache) then by step 3,
//!    and hands the part to the caller in order. A bucket over `max_part`
//!    (all-A runs, satellites) is split by splitters drawn from its own
//!    suffixes (every `r`-th, sorted by step 3; pieces counted in one more
//!    pass), and a piece still over `max_part` is split again (at least two
//!    splitters, so every piece is smaller: this terminates for any
//!    `max_part >= 1`).
//!
//! The concatenation of the parts is exactly the suffix array libsais and
//! [`crate::sa::naive`] return (the end of the text sorts before every base),
//! whatever `v`, `max_part` and the number of threads: the splitters are
//! chosen by global indices over fixed chunks, and each part's order is a
//! total order.
//!
//! **Memory.** The packed text (`n / 4` bytes), the sample ranks
//! (`4 |D| / v` bytes per base: 0.33 at `v = 256`, 0.10 at `v = 4096` with
//! the covers of [`cover()`]), the bucket counts ([`bucket_bytes`]), the
//! splitters (at most `max(1024, max_part)` positions) and one part
//! (`max_part` positions). While the sample is ranked, its order (4 bytes
//! per sampled suffix) and the (key, slot) pairs of its unsorted groups are
//! live as well. [`crate::index::bounded`] plans `v` and `max_part` from
//! these figures.
//!
//! **Who sorts the parts.** This module's own sort (above) is the CPU's;
//! [`Blockwise::sorted_by`] hands each collected part to a [`PartSorter`]
//! instead, such as [`crate::sa::partsort::OnSteps`], the same sort written in
//! the steps of [`crate::sa::steps::Backend`] (a GPU, or the CPU backend that
//! tests it). The sample and the collecting passes stay on the CPU.
//! Samples of `2^32` slots or more are refused (a larger `v` samples fewer).

use crate::dna::PackedText;
use crate::error::Result;

mod buckets;
mod cover;
mod driver;
mod sample;
#[cfg(test)]
mod tests;

pub use buckets::bucket_bytes;
pub use cover::{Cover, V_MAX, V_MIN, cover};
pub use driver::Blockwise;
pub use sample::{DcSample, sample_bytes};

/// How a blockwise sort went, for the log.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PartsSummary {
    /// Parts emitted.
    pub parts: usize,
    /// Bytes of the sample ranks.
    pub sample_bytes: usize,
    /// Seconds spent ranking the sample.
    pub sample_seconds: f64,
    /// Seconds spent collecting the parts' suffixes from the text (passes
    /// placing them by bucket, or counting and collecting a range bounded
    /// by splitters).
    pub collect_seconds: f64,
    /// Seconds spent sorting the parts once collected.
    pub sort_seconds: f64,
    /// Seconds spent drawing splitters and counting the pieces of buckets
    /// larger than a part.
    pub split_seconds: f64,
    /// Passes over the text (counting, placing, collecting, splitting).
    pub passes: usize,
}

/// Where a part handed to `emit` stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At {
    /// Suffixes emitted before this part.
    pub before: usize,
    /// Parts emitted before this one.
    pub parts: usize,
    /// Parts known so far: those emitted, this one and those planned (a
    /// range still to come may be split into more).
    pub planned: usize,
    /// Whether the suffix at 0 is among the `before` suffixes (then the
    /// row of `$` in the BWT comes before this part's rows).
    pub zero_before: bool,
}

/// A sort of the parts other than this module's own: on the steps of a
/// backend ([`crate::sa::partsort::OnSteps`]), so that a GPU can sort them.
pub trait PartSorter<P>: Send {
    /// Called once, when the sample is ranked and before the first part.
    fn prepare(&mut self, text: &PackedText, sample: &DcSample) -> Result<()>;
    /// Sorts the suffixes of `part` (distinct positions of the text) into
    /// suffix order and returns true; or returns false, leaving the part to
    /// this module's own sort (a GPU that failed hands the rest back).
    fn sort(&mut self, part: &mut [P]) -> Result<bool>;
}
