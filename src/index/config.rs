//! The options of `fmalign index` and the memory a whole-text build takes.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::sa::SaAlgorithm;

/// Options of `fmalign index`.
#[derive(Clone, Debug)]
pub struct IndexConfig {
    /// Worker threads.
    pub threads: usize,
    /// Suffix-array construction.
    pub sa: SaAlgorithm,
    /// Keep every K-th suffix-array row (a power of two).
    pub sa_sample: u32,
    /// Store 64-bit positions even when 32 bits would do (tests the >4 Gbp path).
    pub wide: bool,
    /// Print each round of a data-parallel suffix-array algorithm to stderr
    /// (one tab-separated line per round, see [`crate::sa::Round::tsv`]).
    pub stats: bool,
    /// Where to build (the index bytes are the same on every device).
    pub device: Device,
    /// Refuse, before building, when [`memory_estimate`] exceeds this many
    /// bytes (`None`: no limit).
    pub max_memory: Option<u64>,
    /// Device memory the GPU build may use (`None`: the free memory); a
    /// larger estimate builds on the CPU instead, with a notice.
    pub max_gpu_memory: Option<u64>,
    /// Build in parts of at most this many suffixes ([`super::bounded`]) even when
    /// the whole-text build fits (`None`: parts only when it does not, sized
    /// by `max_memory`).
    pub max_part: Option<u64>,
    /// The difference-cover period of a build in parts (a power of two from
    /// 4 to 4096; `None`: chosen by `max_memory`).
    pub dcv: Option<usize>,
    /// The algorithm of `--distributed` (the bytes are the same).
    pub dist: DistAlgorithm,
}

/// The algorithm of a distributed build (`--dist-algorithm`): the bytes
/// are the same either way (docs/ALGORITHMS.md says when each is used).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DistAlgorithm {
    /// In parts when every rank can hold the text and its share, else
    /// prefix doubling.
    #[default]
    Auto,
    /// Every rank holds the text and sorts its share of the parts.
    Parts,
    /// Distributed prefix doubling: each rank holds only its block of the
    /// text.
    Doubling,
}

impl crate::Choice for DistAlgorithm {
    const ALL: &'static [Self] = &[
        DistAlgorithm::Auto,
        DistAlgorithm::Parts,
        DistAlgorithm::Doubling,
    ];

    fn name(self) -> &'static str {
        match self {
            DistAlgorithm::Auto => "auto",
            DistAlgorithm::Parts => "parts",
            DistAlgorithm::Doubling => "doubling",
        }
    }

    fn help(self) -> &'static str {
        match self {
            DistAlgorithm::Auto => {
                "parts when every rank can hold the text (about 0.46 bytes per base and its share), else doubling"
            }
            DistAlgorithm::Parts => {
                "Every rank reads the text and sorts its share of the parts; a few bytes sent per rank"
            }
            DistAlgorithm::Doubling => {
                "Distributed prefix doubling: each rank holds only its block of the text (about 120 bytes per base of it); about 100 bytes sent per base"
            }
        }
    }
}

impl IndexConfig {
    /// Refuses options no build accepts (the single-process and the
    /// distributed one): an SA sampling rate that is not a power of two
    /// from 1 to 65536.
    pub fn validate(&self) -> Result<()> {
        if let Some(v) = self.dcv
            && !(v.is_power_of_two()
                && (crate::sa::blockwise::V_MIN..=crate::sa::blockwise::V_MAX).contains(&v))
        {
            return Err(Error::Usage(format!(
                "--dcv {v} must be a power of two from {} to {}",
                crate::sa::blockwise::V_MIN,
                crate::sa::blockwise::V_MAX
            )));
        }
        if self.max_part == Some(0) {
            return Err(Error::Usage("--max-part must be at least 1".into()));
        }
        if !self.sa_sample.is_power_of_two() || self.sa_sample > 1 << 16 {
            return Err(Error::Usage(format!(
                "--sa-sample {} must be a power of two from 1 to 65536",
                self.sa_sample
            )));
        }
        Ok(())
    }
}

/// Default SA sampling rate; chosen by measuring locate speed against index
/// size on chr20 (docs/BENCHMARKS.md).
pub const DEFAULT_SA_SAMPLE: u32 = 32;

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            sa: SaAlgorithm::Auto,
            sa_sample: DEFAULT_SA_SAMPLE,
            wide: false,
            stats: false,
            device: Device::Auto,
            max_memory: None,
            max_gpu_memory: None,
            max_part: None,
            dcv: None,
            dist: DistAlgorithm::Auto,
        }
    }
}

/// `fmalign index`'s memory limit when none is given (`--max-memory`):
/// 90% of the memory available now; `None` where that cannot be read.
pub fn default_max_memory() -> Option<u64> {
    crate::mem::available_memory().map(|m| m / 10 * 9)
}

/// Peak memory of the whole-text `fmalign index` for a text of `n`
/// unambiguous bases, with 64-bit positions when `wide`: bytes per base
/// from the peaks measured in docs/BENCHMARKS.md (libsais: 5.8 on chr20,
/// 5.7 on 1.89 Gbp, 7.1 on E. coli where the constant counts; ~9.5 above
/// 2^31 bases; the data-parallel algorithms on their worst inputs: hybrid
/// 25, skew 26, ls 63 on all-A), a few percent over, plus 16 MiB. The text
/// itself (1 byte per base, unpacked from the 2-bit read) is included.
pub fn memory_estimate(n: u64, wide: bool, algorithm: SaAlgorithm) -> u64 {
    let big = wide || n >= 1 << 31;
    let per_base: f64 = match (algorithm, big) {
        (SaAlgorithm::Auto | SaAlgorithm::Libsais, false) => 6.0,
        (SaAlgorithm::Auto | SaAlgorithm::Libsais, true) => 10.0,
        (SaAlgorithm::Hybrid, false) => 27.0,
        (SaAlgorithm::Skew, false) => 28.0,
        (SaAlgorithm::Ls, false) => 66.0,
        (SaAlgorithm::Hybrid, true) => 50.0,
        (SaAlgorithm::Skew, true) => 52.0,
        (SaAlgorithm::Ls, true) => 124.0,
    };
    (n as f64 * per_base) as u64 + (16 << 20)
}
