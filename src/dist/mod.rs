//! Distributed index construction (issue 7): the collective operations the
//! algorithm uses, behind [`Comm`], with an in-process implementation
//! ([`LocalComm`]: one thread per rank) on which the algorithm's logic is
//! tested for any number of ranks, and the MPI one (`mpi::MpiComm`, feature
//! `mpi`, rsmpi over the system's MPI library) that `mpirun -np P fmalign
//! index --distributed` uses. The algorithm is the same code over either.
//!
//! [`build`] chooses between two algorithms (`--dist-algorithm`; the bytes
//! are the same):
//! - **parts** ([`parts`]): every rank reads the whole text (2 bits per
//!   base) and sorts its share of the parts of the single-process build in
//!   parts; the ranks exchange only a few numbers each. Used whenever every
//!   rank can hold the text and its share within its memory.
//! - **doubling** ([`sa`], [`index`]): distributed prefix doubling after
//!   Flick & Aluru (2015): every rank holds one block of text positions
//!   (plus the few characters after it that its first keys read), no rank
//!   holds the whole text or suffix array; about 100 bytes per base cross
//!   the network. Used when the text does not fit one rank.

pub mod index;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod parts;
pub mod sa;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};

use crate::error::{Error, Result};
use crate::index::{DistAlgorithm, IndexConfig, WIDE_THRESHOLD};
pub use index::{DistReport, Phase};

/// Builds the index of the FASTA at `fasta` on all ranks of `comm` and
/// writes it to `out`: rank 0 scans the FASTA, the ranks agree on the
/// memory each may use (the least of theirs: `cfg.max_memory`, else the
/// node's available memory divided by its ranks), and build in parts
/// ([`parts`]) or by prefix doubling ([`index`]) as `cfg.dist` says
/// (`Auto`: in parts when it fits). `cfg.threads` threads per rank.
pub fn build<C: Comm>(comm: &C, fasta: &Path, cfg: &IndexConfig, out: &Path) -> Result<DistReport> {
    build_failing(comm, fasta, cfg, out, None)
}

/// [`build`], where rank `fail` fails while reading the reference, as it
/// would on a read error: for the tests of the failure path (feature
/// `fault-injection`: `FMALIGN_TEST_FAIL_RANK` of the command-line tool
/// under `mpirun`).
#[cfg(any(test, feature = "fault-injection"))]
pub fn build_with_fault<C: Comm>(
    comm: &C,
    fasta: &Path,
    cfg: &IndexConfig,
    out: &Path,
    fail: usize,
) -> Result<DistReport> {
    build_failing(comm, fasta, cfg, out, Some(fail))
}

fn build_failing<C: Comm>(
    comm: &C,
    fasta: &Path,
    cfg: &IndexConfig,
    out: &Path,
    fail: Option<usize>,
) -> Result<DistReport> {
    cfg.validate()?;
    let mut clock = index::Clock::start(comm);
    let (scanned, n, checkpoints) = index::scan_on_rank0(comm, fasta)?;
    clock.lap("scan", comm);
    let mine = cfg
        .max_memory
        .or_else(|| index::available_per_rank().map(|m| m / 10 * 9))
        .unwrap_or(u64::MAX);
    let limit = comm.allgather(mine).into_iter().min().unwrap_or(u64::MAX);
    let limit = (limit != u64::MAX).then_some(limit);
    match choose(n, comm.size(), cfg, limit)? {
        Plan::Single => single(comm, fasta, cfg, out, scanned, n, limit, clock, fail),
        Plan::Parts(plan) => {
            parts::build_on_ranks(comm, fasta, cfg, out, scanned, n, plan, clock, fail)
        }
        Plan::Doubling => {
            index::build_doubling(comm, fasta, cfg, out, scanned, n, checkpoints, clock, fail)
        }
    }
}

/// The failure of `rank` when it is the rank told to `fail` (tests of the
/// failure path: [`build_with_fault`]), as a read error of `fasta` would be.
fn injected_failure(fail: Option<usize>, rank: usize, fasta: &Path) -> Result<()> {
    match fail {
        Some(f) if f == rank => Err(Error::input(
            fasta,
            "failure injected by FMALIGN_TEST_FAIL_RANK",
        )),
        _ => Ok(()),
    }
}

/// The algorithm [`build`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plan {
    /// One rank, `auto`: the single-process build
    /// ([`crate::index::build_file`]: the whole text when it fits, else in
    /// parts).
    Single,
    Parts(parts::RankPlan),
    Doubling,
}

/// Phases of `--stats` of [`Plan::Single`].
const SINGLE_PHASES: [&str; 3] = ["scan", "build", "write"];

/// One rank, `--dist-algorithm auto`: the build of `fmalign index` within
/// `limit`, as if `--distributed` had not been given.
#[allow(clippy::too_many_arguments)]
fn single<C: Comm>(
    comm: &C,
    fasta: &Path,
    cfg: &IndexConfig,
    out: &Path,
    scanned: Option<crate::scan::Scan>,
    n: u64,
    limit: Option<u64>,
    mut clock: index::Clock,
    fail: Option<usize>,
) -> Result<DistReport> {
    injected_failure(fail, comm.rank(), fasta)?;
    let reference = crate::scan::read_packed(fasta, cfg.threads)?;
    let cfg = IndexConfig {
        max_memory: limit,
        ..cfg.clone()
    };
    let report = crate::index::build_file(reference, &cfg, out, &mut |_| {})?;
    clock.lap("build", comm);
    clock.lap("write", comm);
    let mut notices = vec![
        "one rank: the single-process build (--dist-algorithm parts or doubling runs those on one rank)".to_string(),
    ];
    notices.extend(report.notices);
    Ok(DistReport {
        text_len: n,
        contigs: scanned.as_ref().map_or(0, |s| s.layout.contigs.len()),
        holes: scanned.as_ref().map_or(0, |s| s.layout.holes.len()),
        warnings: scanned.map_or(Vec::new(), |s| s.warnings),
        file_bytes: report.file_bytes,
        phases: index::gather_phases(comm, clock.phases, &SINGLE_PHASES),
        rounds: Vec::new(),
        notices,
    })
}

/// The algorithm for `n` bases on `ranks` ranks of `limit` bytes each (the
/// same on every rank): as `cfg.dist` says, or when it is `Auto`, in parts
/// when that fits, else doubling when that does; an error with the figures
/// when the one asked for (or neither) fits.
fn choose(n: u64, ranks: usize, cfg: &IndexConfig, limit: Option<u64>) -> Result<Plan> {
    let wide = cfg.wide || n >= WIDE_THRESHOLD;
    let plan = parts::rank_plan(n, wide, ranks, limit, cfg.max_part, cfg.dcv);
    let block = n.div_ceil(ranks as u64);
    let doubling = index::memory_estimate(block);
    let doubling_fits = limit.is_none_or(|l| doubling <= l);
    let have = limit.unwrap_or(u64::MAX);
    let mb = |b: u64| b >> 20;
    let parts_need = || {
        parts::rank_plan(n, wide, ranks, None, cfg.max_part, cfg.dcv)
            .map_or(0, |p| p.peak)
            .min(bounded_floor(n, wide, ranks))
    };
    match (cfg.dist, plan) {
        (DistAlgorithm::Auto, _) if ranks == 1 => Ok(Plan::Single),
        (DistAlgorithm::Parts | DistAlgorithm::Auto, Some(p)) => Ok(Plan::Parts(p)),
        (DistAlgorithm::Doubling, _) | (DistAlgorithm::Auto, None) if doubling_fits => {
            Ok(Plan::Doubling)
        }
        (DistAlgorithm::Parts, None) => Err(Error::Usage(format!(
            "building in parts needs about {} MB per rank for {n} bases (the text and its share on every rank), but only {} MB are available per rank; use --dist-algorithm doubling on more nodes, or fewer ranks per node",
            mb(parts_need()),
            mb(have)
        ))),
        _ => Err(Error::Usage(format!(
            "building its {block} bases needs about {} MB by prefix doubling (or about {} MB per rank in parts), but only {} MB are available per rank on this node; use more nodes (or fewer ranks per node)",
            mb(doubling),
            mb(parts_need()),
            mb(have)
        ))),
    }
}

/// The least memory per rank of a build in parts: the single-process floor
/// and the rank's share of `B`.
fn bounded_floor(n: u64, wide: bool, ranks: usize) -> u64 {
    crate::index::bounded::floor(n, wide) + n.div_ceil(ranks as u64) / 2
}

/// The collective operations of a group of ranks. Every rank calls each
/// operation in the same order (as with MPI).
pub trait Comm {
    /// This rank, `0..size`.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// All-to-all exchange: `send[j]` goes to rank `j`; returns what each
    /// rank sent here, by sender.
    fn alltoallv<T: bytemuck::Pod + Send>(&self, send: Vec<Vec<T>>) -> Vec<Vec<T>>;

    /// Bytes this rank has sent to other ranks so far (its own share of
    /// each exchange not counted): the communication volume of `--stats`.
    fn bytes_sent(&self) -> u64;

    /// `v` of rank `root`, on every rank (`v` is ignored elsewhere).
    fn broadcast<T: bytemuck::Pod + Send>(&self, root: usize, v: Vec<T>) -> Vec<T> {
        let send = if self.rank() == root {
            vec![v; self.size()]
        } else {
            vec![Vec::new(); self.size()]
        };
        self.alltoallv(send).swap_remove(root)
    }

    /// Whether every rank passed `ok` (a barrier as well).
    fn all_ok(&self, ok: bool) -> bool {
        self.allgather(u8::from(ok)).iter().all(|&x| x == 1)
    }

    /// Every rank's `x`, by rank.
    fn allgather<T: bytemuck::Pod + Send>(&self, x: T) -> Vec<T> {
        let send = (0..self.size()).map(|_| vec![x]).collect();
        self.alltoallv(send).into_iter().map(|v| v[0]).collect()
    }
}

/// The shared state of an in-process group.
struct Shared {
    /// `boxes[from][to]`: bytes in flight.
    boxes: Mutex<Vec<Vec<Vec<u8>>>>,
    barrier: Barrier,
}

/// One rank of an in-process group (see [`LocalComm::run`]).
pub struct LocalComm<'a> {
    rank: usize,
    size: usize,
    shared: &'a Shared,
    sent: AtomicU64,
}

impl LocalComm<'_> {
    /// Runs `f` on `size` ranks, one thread each, and returns their results
    /// by rank.
    pub fn run<R: Send>(size: usize, f: impl Fn(&LocalComm<'_>) -> R + Sync) -> Vec<R> {
        assert!(size >= 1, "a group has at least one rank");
        let shared = Shared {
            boxes: Mutex::new(vec![vec![Vec::new(); size]; size]),
            barrier: Barrier::new(size),
        };
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..size)
                .map(|rank| {
                    let (shared, f) = (&shared, &f);
                    s.spawn(move || {
                        f(&LocalComm {
                            rank,
                            size,
                            shared,
                            sent: AtomicU64::new(0),
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a rank panicked"))
                .collect()
        })
    }
}

impl Comm for LocalComm<'_> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn bytes_sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    fn alltoallv<T: bytemuck::Pod + Send>(&self, send: Vec<Vec<T>>) -> Vec<Vec<T>> {
        assert_eq!(send.len(), self.size, "alltoallv: one list per rank");
        let out: usize = (send.iter().enumerate())
            .filter(|&(to, _)| to != self.rank)
            .map(|(_, v)| std::mem::size_of_val(v.as_slice()))
            .sum();
        self.sent.fetch_add(out as u64, Ordering::Relaxed);
        {
            let mut boxes = self.shared.boxes.lock().expect("no rank panicked");
            for (to, v) in send.into_iter().enumerate() {
                boxes[self.rank][to] = bytemuck::cast_slice(&v).to_vec();
            }
        }
        self.shared.barrier.wait();
        let recv = {
            let mut boxes = self.shared.boxes.lock().expect("no rank panicked");
            (0..self.size)
                .map(|from| {
                    let bytes = std::mem::take(&mut boxes[from][self.rank]);
                    bytemuck::pod_collect_to_vec::<u8, T>(&bytes)
                })
                .collect()
        };
        // Nobody writes the next round before everyone has read this one.
        self.shared.barrier.wait();
        recv
    }
}

#[cfg(test)]
mod choice_tests {
    use super::*;

    /// Auto builds in parts when every rank can hold the text and its
    /// share; prefix doubling when only its blocks fit (many small ranks);
    /// an error with the figures when neither, or the one asked for, fits.
    #[test]
    fn parts_when_the_text_fits_a_rank_else_doubling() {
        let cfg = IndexConfig::default();
        let g = 1u64 << 30;
        let n = 3_000_000_000;
        assert!(matches!(choose(n, 16, &cfg, Some(8 * g)), Ok(Plan::Parts(p)) if p.peak <= 8 * g));
        assert!(matches!(choose(n, 16, &cfg, None), Ok(Plan::Parts(_))));
        // One rank: the single-process build, whatever the memory.
        assert_eq!(choose(n, 1, &cfg, Some(g)).unwrap(), Plan::Single);
        // 1000 ranks of 1 GiB: the text (0.75 GB) and the sample do not fit,
        // 3 M bases by doubling (about 0.5 GB) do.
        assert_eq!(choose(n, 1000, &cfg, Some(g)).unwrap(), Plan::Doubling);
        let parts = IndexConfig {
            dist: DistAlgorithm::Parts,
            ..IndexConfig::default()
        };
        let e = choose(n, 1000, &parts, Some(g)).unwrap_err().to_string();
        assert!(
            e.contains("in parts needs about") && e.contains("1024 MB"),
            "{e}"
        );
        let e = choose(n, 4, &cfg, Some(g)).unwrap_err().to_string();
        assert!(
            e.contains("by prefix doubling") && e.contains("available per rank"),
            "{e}"
        );
        let doubling = IndexConfig {
            dist: DistAlgorithm::Doubling,
            ..IndexConfig::default()
        };
        assert_eq!(choose(n, 1000, &doubling, None).unwrap(), Plan::Doubling);
    }

    /// A rank's plan fits its limit, with parts small enough to balance the
    /// ranks' shares.
    #[test]
    fn rank_plans_fit_and_balance() {
        let g = 1u64 << 30;
        for (n, ranks, limit) in [
            (3_100_000_000u64, 1usize, 4 * g),
            (3_100_000_000, 8, 4 * g),
            (17_000_000_000, 64, 16 * g),
            (20_000_000, 3, g),
        ] {
            let wide = n >= WIDE_THRESHOLD;
            let p = parts::rank_plan(n, wide, ranks, Some(limit), None, None).unwrap();
            assert!(p.peak <= limit, "{n} {ranks}: {p:?}");
            if ranks > 1 {
                assert!(
                    p.max_part <= n.div_ceil(4 * ranks as u64),
                    "{n} {ranks}: {p:?}"
                );
            }
        }
    }
}
