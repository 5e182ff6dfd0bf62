//! fmalign: an FM-index read aligner.
//!
//! # The API
//!
//! Build an index from a FASTA ([`build_index`]), open it ([`Index::open`]:
//! validated, memory-mapped, shareable between threads) and map reads held
//! in memory with a [`Mapper`]: single reads or pairs, in `--local` (bwa
//! mem's scores, the default), `--end-to-end` (bowtie2's) or the ungapped
//! modes (`-v K`), with the options of `fmalign map` ([`MapConfig`]). Each
//! read's records come back as [`OwnedRecord`]s, whose `to_sam` writes the
//! very line `fmalign map` writes, or, for many reads, all together in a
//! [`RecordSet`] ([`Mapper::map_set`]: no allocation per record, the reads
//! not copied into each), read back as [`Record`]s.
//!
//! ```
//! use std::sync::Arc;
//! use fmalign::{Batch, Index, IndexConfig, MapConfig, Mapper, PairConfig, ReadView};
//!
//! # fn main() -> fmalign::Result<()> {
//! let dir = std::env::temp_dir().join(format!("fmalign-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let fasta = dir.join("ref.fa");
//! std::fs::write(
//!     &fasta,
//!     ">chr1\nGATTACAGGCTTACCGATCGGATCCATGGCAACGTTAGCCTAGGCATCGATCGGACTTAGCAT\n",
//! )
//! .unwrap();
//! let cfg = IndexConfig { threads: 1, ..IndexConfig::default() };
//! fmalign::build_index(&fasta, &dir.join("ref.fa.fmi"), &cfg)?;
//!
//! let index = Arc::new(Index::open(&dir.join("ref.fa.fmi"))?);
//! let mapper = Mapper::new(index, MapConfig { threads: 1, ..MapConfig::default() }, PairConfig::default())?;
//! let reads = Batch::from_reads([ReadView {
//!     name: b"r1",
//!     seq: b"GCTAACGTTGCCATGGATCCGATCGGTAAGCC", // the reverse strand
//!     qual: None,
//! }])
//! .map_err(fmalign::Error::Usage)?;
//! let (records, _stats) = mapper.map(&reads)?;
//! let hit = &records[0][0];
//! assert!(hit.is_primary() && hit.is_reverse());
//! assert_eq!(hit.ref_range(), Some((7, 39))); // 0-based, end exclusive
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok(())
//! # }
//! ```
//!
//! # The modules
//!
//! ```text
//! FASTA ──reference──▶ contigs, holes, text (unambiguous bases, 0..=3)
//!       ──sa─────────▶ suffix array (libsais, or hybrid/skew/ls on the CPU or the GPU)
//!       ──tables─────▶ C, BWT/Occ lines, sampled SA, 2-bit text
//!       ──index──────▶ REF.fmi (index_format/SPEC.md; dist: the same bytes over MPI)
//! REF.fmi ──index::Index::open (validate, mmap)──▶ fm::FmIndex
//! FASTQ ──io::fastq (batches)──▶ map (rayon: search both strands, locate, filter, pair)
//!       ──sam────────▶ SAM or BAM, in input order
//! ```
//!
//! Modules import one way, from the bottom layers up to `map`: the order is
//! `LAYERS` in `tests/layers.rs`, which checks it (docs/ARCHITECTURE.md,
//! "Module graph", draws it). They are public for the binary, the
//! tests (which check each stage against its oracle), the benchmarks and the
//! examples, but hidden from the documentation and not part of the API: what
//! this page lists is the API, and only it is kept stable.

#[doc(hidden)]
pub mod align;
#[doc(hidden)]
pub mod alloc;
#[doc(hidden)]
pub mod check;
#[doc(hidden)]
pub mod device;
#[doc(hidden)]
pub mod dist;
#[doc(hidden)]
pub mod dna;
#[doc(hidden)]
pub mod error;
#[doc(hidden)]
pub mod fm;
#[doc(hidden)]
pub mod gpu;
#[doc(hidden)]
pub mod index;
#[doc(hidden)]
pub mod io;
#[doc(hidden)]
pub mod kmer;
#[doc(hidden)]
pub mod map;
#[doc(hidden)]
pub mod mem;
#[doc(hidden)]
pub mod pair;
#[doc(hidden)]
pub mod read;
#[doc(hidden)]
pub mod reference;
#[doc(hidden)]
pub mod sa;
#[doc(hidden)]
pub mod sam;
#[doc(hidden)]
pub mod scan;
#[doc(hidden)]
pub mod search;
#[doc(hidden)]
pub mod seed;
#[doc(hidden)]
pub mod segments;
#[doc(hidden)]
pub mod tables;

// The API.
pub use align::{Mode, Op};
pub use device::Device;
pub use error::{Error, Result};
pub use index::{
    BuildReport, Index, IndexConfig, Resolved, build_in_memory, build_index, default_max_memory,
    default_path as default_index_path, resolve as resolve_index,
};
pub use io::fastq::Batch;
pub use map::{
    Cigar, MapConfig, MapStats, Mapped, Mapper, OutputFormat, OwnedRecord, PairConfig, Record,
    RecordId, RecordSet, Report,
};
pub use mem::parse_size;
pub use pair::Orientation;
pub use read::ReadView;
pub use reference::{Contig, Layout, Reference};
pub use sam::ReadGroup;
pub use scan::read_fasta;

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
