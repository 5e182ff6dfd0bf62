//! The library's error type. Messages are lower case, name the file and the
//! line or record, and do not repeat their `source()`.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong in `fmalign`'s library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O error on a named file.
    #[error("{}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A FASTA or FASTQ input that cannot be used.
    #[error("{}: {msg}", path.display())]
    Input {
        /// The file (`-` for stdin).
        path: PathBuf,
        /// What is wrong, with line or record.
        msg: String,
    },
    /// An index file that cannot be used.
    #[error("{}", path.display())]
    Format {
        /// The index file.
        path: PathBuf,
        /// What the container check found.
        source: fmalign_index_format::Error,
    },
    /// An index whose sections decode to something inconsistent.
    #[error("{}: damaged index: {msg}", path.display())]
    Corrupt {
        /// The index file.
        path: PathBuf,
        /// What is inconsistent.
        msg: String,
    },
    /// Suffix-array construction failed.
    #[error("suffix array construction failed: {0}")]
    SuffixArray(String),
    /// A GPU step failed (driver, NVRTC, device memory).
    #[error("gpu: {0}")]
    Gpu(String),
    /// A bad option value.
    #[error("{0}")]
    Usage(String),
    /// Another rank of a distributed build failed (it reports why).
    #[error("stopped: rank {0} failed")]
    OtherRank(usize),
}

/// Shorthand used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// A bad input file.
    pub fn input(path: impl Into<PathBuf>, msg: impl Into<String>) -> Self {
        Error::Input {
            path: path.into(),
            msg: msg.into(),
        }
    }

    /// Whether this is a write to a closed pipe (then `fmalign` exits quietly).
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
    }
}
