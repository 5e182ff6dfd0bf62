//! Build orchestration (reference → suffix array → FM tables → `.fmi`) and
//! the validated, memory-mapped [`Index`]. The byte layout is specified in
//! `index_format/SPEC.md`; the container (header, section table, CRCs) is the
//! `fmalign-index-format` crate, the section contents are encoded here.

pub mod bounded;
pub use bounded::Progress;

mod build;
mod config;
mod open;
mod sections;

pub use build::{
    BuildReport, build_and_write, build_file, build_in_memory, build_index, checked_output,
};
pub use config::{
    DEFAULT_SA_SAMPLE, DistAlgorithm, IndexConfig, default_max_memory, memory_estimate,
};
pub use open::{Index, Resolved, default_path, resolve};
pub(crate) use sections::{FLAG_WIDE, encode_layout};
pub use sections::{Meta, WIDE_THRESHOLD};
