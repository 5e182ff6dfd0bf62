//! fmalign: an FM-index read aligner front end.
//!
//! ```text
//! FASTA ──reference──▶ contigs, holes, text (unambiguous bases, 0..=3)
//!       ──sa─────────▶ suffix array (libsais, or hybrid/skew/ls on the CPU or the GPU)
//!       ──tables─────▶ C, BWT/Occ lines, sampled SA, 2-bit text
//!       ──index──────▶ REF.fmi (index_format/SPEC.md; dist: the same bytes over MPI)
//! REF.fmi ──index::Index::open (validate, mmap)──▶ fm::FmIndex
//! FASTQ ──fastq (batches)──▶ map (rayon: search both strands, locate, filter, pair)
//!       ──sam────────▶ SAM or BAM, in input order
//! ```
//!
//! Modules import one way, from the bottom layers (error, mem, device, dna,
//! read, input, cleanup, fm) up to `map`: docs/ARCHITECTURE.md, "Module
//! graph"; `tests/layers.rs` checks it.

pub mod align;
pub mod alloc;
pub mod check;
pub mod cleanup;
pub mod device;
pub mod dist;
pub mod dna;
pub mod error;
pub mod fastq;
pub mod fm;
pub mod gpu;
pub mod index;
pub mod input;
pub mod kmer;
pub mod map;
pub mod mem;
pub mod pair;
pub mod read;
pub mod reference;
pub mod sa;
pub mod sam;
pub mod scan;
pub mod search;
pub mod seed;
pub mod segments;
pub mod tables;

pub use error::{Error, Result};
pub use index::{Index, IndexConfig};

/// A rayon pool of `threads` workers (at least 1): every parallel stage runs
/// inside one, so `-t` bounds the whole command.
pub fn thread_pool(threads: usize) -> Result<rayon::ThreadPool> {
    if threads == 0 {
        return Err(Error::Usage(
            "the number of threads must be at least 1".into(),
        ));
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Usage(format!("cannot start {threads} threads: {e}")))
}

/// `asked` threads, or the CPUs this process may run on if fewer (its
/// affinity and cgroup quota, as the standard library reads them), with a
/// note for the log when fewer: threads beyond those only cost memory and
/// switches (`map -t 3000` on 1,000 reads took 60 s and 11 GB).
pub fn usable_threads(asked: usize) -> (usize, Option<String>) {
    let cpus = std::thread::available_parallelism().map_or(asked, |n| n.get());
    if asked > cpus {
        let note = format!("-t {asked}: this process may run on {cpus} CPUs; using {cpus} threads");
        return (cpus, Some(note));
    }
    (asked, None)
}

/// An option with a fixed set of named values (`--sa hybrid`,
/// `--device gpu`): the names a command line offers and what each means.
/// The library's option enums implement it; the binary turns it into its
/// argument parser.
pub trait Choice: Copy + Eq + 'static {
    /// Every value, in the order a help text lists them.
    const ALL: &'static [Self];

    /// The value's name on the command line.
    fn name(self) -> &'static str;

    /// What the value does, in one line.
    fn help(self) -> &'static str;

    /// The value called `name`, if any.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == name)
    }
}

/// FNV-1a (64-bit) of the bytes: the kernel cache key (`gpu`), and the read-name
/// hash that picks a read's primary hit (`map`); not cryptographic.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
