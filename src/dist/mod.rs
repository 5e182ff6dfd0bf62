//! Distributed index construction (issue 7): the collective operations the
//! algorithm uses, behind [`Comm`], with an in-process implementation
//! ([`LocalComm`]: one thread per rank) on which the algorithm's logic is
//! tested for any number of ranks, and the MPI one (`mpi::MpiComm`, feature
//! `mpi`, rsmpi over the system's MPI library) that `mpirun -np P fmalign
//! index --distributed` uses. The algorithm is the same code over either.
//!
//! The algorithm is distributed prefix doubling after Flick & Aluru (2015),
//! in [`sa`]: every rank holds one block of text positions (plus the few
//! characters after it that its first keys read), no rank ever holds the
//! whole suffix array. [`index`] is the whole build, from the FASTA to the
//! file.

pub mod index;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod sa;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};

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
