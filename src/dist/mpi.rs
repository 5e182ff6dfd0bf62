//! [`Comm`] over MPI (rsmpi, feature `mpi`): what `mpirun -np P fmalign index
//! --distributed` runs on.
//!
//! Every exchange is an `MPI_Alltoallv` of bytes. MPI counts and
//! displacements are `int`, so an exchange is split into rounds in which no
//! rank sends more than [`MpiComm::chunk`] bytes to any one rank (at most
//! `i32::MAX / P`, so a round's displacements fit too); the number of rounds
//! is agreed by all ranks first. Send and receive buffers are always
//! allocated (at least one byte): OpenMPI takes the dangling pointer of an
//! empty `Vec` for `MPI_IN_PLACE`.

use std::cell::Cell;

use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives};

use super::Comm;
use crate::error::{Error, Result};

/// A build that failed on some rank, each rank's part already said.
#[derive(Debug)]
pub struct Reported;

/// Runs `build` on every rank of `mpirun` (MPI initialized here and
/// finalized before returning) with the failure protocol of `fmalign index
/// --distributed`: when the build fails, every rank knows (its phases end in
/// an agreement), and each says its part through `say` before any exits,
/// since mpirun ends the job at the first non-zero exit status. The rank
/// that failed names itself (`rank R: ...`, or no rank with one process);
/// the others, failing only because another did, say nothing unless they
/// are rank 0. Returns rank 0's report and the number of ranks; `None` on
/// the other ranks.
pub fn on_all_ranks(
    say: &dyn Fn(&str),
    build: impl FnOnce(&MpiComm) -> Result<super::DistReport>,
) -> std::result::Result<Option<(super::DistReport, usize)>, Reported> {
    let comm = match MpiComm::init() {
        Ok(c) => c,
        Err(e) => {
            say(&format!("fmalign: error: {e}"));
            return Err(Reported);
        }
    };
    let result = build(&comm);
    let (rank, size) = (comm.rank, comm.size);
    match result {
        Ok(report) => Ok((rank == 0).then_some((report, size))),
        Err(e) => {
            match e {
                Error::OtherRank(_) if rank != 0 => {}
                e if size > 1 => say(&format!("fmalign: error: rank {rank}: {e}")),
                e => say(&format!("fmalign: error: {e}")),
            }
            comm.all_ok(false);
            Err(Reported)
        }
    }
}

/// This process's rank in `MPI_COMM_WORLD`.
pub struct MpiComm {
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
    /// Most bytes sent to one rank in one round of an exchange.
    chunk: usize,
    sent: Cell<u64>,
    // Dropped last: finalizes MPI.
    _universe: Universe,
}

/// `FMALIGN_MPI_CHUNK` (bytes), read only in the test build (feature
/// `fault-injection`): a smaller per-round limit, to exercise the split
/// exchanges.
fn test_chunk() -> Option<usize> {
    #[cfg(feature = "fault-injection")]
    return std::env::var("FMALIGN_MPI_CHUNK")
        .ok()
        .and_then(|s| s.parse::<usize>().ok());
    #[cfg(not(feature = "fault-injection"))]
    None
}

impl MpiComm {
    /// Initializes MPI (once per process). In the test build (feature
    /// `fault-injection`) `FMALIGN_MPI_CHUNK` (bytes) lowers the per-round
    /// limit, to exercise the split exchanges.
    pub fn init() -> Result<Self> {
        let universe = mpi::initialize()
            .ok_or_else(|| Error::Usage("MPI was already initialized in this process".into()))?;
        let world = universe.world();
        let rank = world.rank() as usize;
        let size = world.size() as usize;
        let max = (i32::MAX as usize / size).max(1);
        let chunk = test_chunk().unwrap_or(1 << 28).clamp(1, max);
        Ok(MpiComm {
            world,
            rank,
            size,
            chunk,
            sent: Cell::new(0),
            _universe: universe,
        })
    }

    /// The per-round limit in bytes per destination.
    pub fn chunk(&self) -> usize {
        self.chunk
    }

    /// Ends every process of the job (`MPI_Abort`) with `code`.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    /// One `MPI_Alltoallv` round: `parts[j]` to rank `j`, `lens[j]` bytes
    /// from rank `j`.
    fn round(&self, parts: &[&[u8]], lens: &[usize]) -> Vec<Vec<u8>> {
        let counts: Vec<i32> = parts.iter().map(|p| p.len() as i32).collect();
        let displs = displacements(&counts);
        let mut sbuf = Vec::with_capacity(parts.iter().map(|p| p.len()).sum::<usize>().max(1));
        for p in parts {
            sbuf.extend_from_slice(p);
        }
        if sbuf.is_empty() {
            sbuf.push(0);
        }
        let rcounts: Vec<i32> = lens.iter().map(|&l| l as i32).collect();
        let rdispls = displacements(&rcounts);
        let mut rbuf = vec![0u8; lens.iter().sum::<usize>().max(1)];
        {
            let send = Partition::new(&sbuf[..], &counts[..], &displs[..]);
            let mut recv = PartitionMut::new(&mut rbuf[..], &rcounts[..], &rdispls[..]);
            self.world.all_to_all_varcount_into(&send, &mut recv);
        }
        (0..self.size)
            .map(|j| {
                let at = rdispls[j] as usize;
                rbuf[at..at + lens[j]].to_vec()
            })
            .collect()
    }
}

/// Exclusive prefix sums of `counts`.
fn displacements(counts: &[i32]) -> Vec<i32> {
    counts
        .iter()
        .scan(0i32, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect()
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn bytes_sent(&self) -> u64 {
        self.sent.get()
    }

    fn alltoallv<T: bytemuck::Pod + Send>(&self, send: Vec<Vec<T>>) -> Vec<Vec<T>> {
        assert_eq!(send.len(), self.size, "alltoallv: one list per rank");
        let bytes: Vec<&[u8]> = send.iter().map(|v| bytemuck::cast_slice(v)).collect();
        let send_len: Vec<u64> = bytes.iter().map(|b| b.len() as u64).collect();
        let mut recv_len = vec![0u64; self.size];
        self.world.all_to_all_into(&send_len[..], &mut recv_len[..]);
        let out: u64 = (send_len.iter().enumerate())
            .filter(|&(j, _)| j != self.rank)
            .map(|(_, &l)| l)
            .sum();
        self.sent.set(self.sent.get() + out);
        let chunk = self.chunk as u64;
        let mine = (send_len.iter().chain(&recv_len))
            .map(|l| l.div_ceil(chunk))
            .max()
            .unwrap_or(0);
        let mut all = vec![0u64; self.size];
        self.world.all_gather_into(&mine, &mut all[..]);
        let rounds = all.into_iter().max().unwrap_or(0);
        let piece = |len: u64, r: u64| {
            let s = (r * chunk).min(len) as usize;
            let e = ((r + 1) * chunk).min(len) as usize;
            (s, e)
        };
        let mut recv: Vec<Vec<u8>> = recv_len
            .iter()
            .map(|&l| Vec::with_capacity(l as usize))
            .collect();
        for r in 0..rounds {
            let parts: Vec<&[u8]> = (bytes.iter().zip(&send_len))
                .map(|(b, &l)| {
                    let (s, e) = piece(l, r);
                    &b[s..e]
                })
                .collect();
            let lens: Vec<usize> = recv_len
                .iter()
                .map(|&l| {
                    let (s, e) = piece(l, r);
                    e - s
                })
                .collect();
            for (acc, got) in recv.iter_mut().zip(self.round(&parts, &lens)) {
                acc.extend_from_slice(&got);
            }
        }
        recv.iter()
            .map(|b| bytemuck::pod_collect_to_vec::<u8, T>(b))
            .collect()
    }
}
