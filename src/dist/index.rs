//! `fmalign index --distributed`: the whole index built by a group of ranks
//! ([`Comm`]) and written by them into one file, byte-identical to the
//! single-process index of the same reference and options.
//!
//! 1. **scan** (`scan_on_rank0`) — rank 0 streams the FASTA once
//!    ([`crate::scan::scan_fasta`]: contigs, holes, MD5s, the text length, a
//!    checkpoint every [`CHECKPOINT_BASES`] bases; never the text) and
//!    broadcasts the text length and the checkpoints.
//! 2. **read** (`read_windows`) — every rank (whose block fits in its
//!    memory, [`memory_estimate`], as [`super::build`] checked) reads only its
//!    block of text positions plus [`KEY_CHARS`] bases after it
//!    ([`crate::scan::read_text_range`], from the nearest checkpoint), and
//!    the same window of the reversed text.
//! 3. **sa**, **bwt+occ** (`share_of`) — [`super::sa`]: distributed prefix
//!    doubling, the BWT slice of each rank's slice of the suffix array, its
//!    Occ lines and sampled SA rows; **reversed** — the same for the
//!    reversed text (the mirror index: Occ only).
//! 4. **write** (`rank_pieces`, `rank0_pieces`, `write_file`) — every rank
//!    cuts its pieces of PAC, OCC, SSA and REV_OCC, rank 0 also the small
//!    sections; the pieces' CRCs go to rank 0, which combines them in order
//!    per section (`crc32fast::Hasher::combine`), plans the file and creates
//!    the temporary file (`.NAME.tmp.PID`) at its final length
//!    (`plan_file`); every rank writes its pieces at their offsets
//!    (`write_pieces`); rank 0 writes the header and section table last and
//!    renames the file (`seal`).
//!
//! Every phase ends with an agreement: when any rank fails (bad input seen
//! by rank 0, a read or write error anywhere), every rank stops with an
//! error — the failing rank's says why, the others' say which rank failed —
//! and the temporary file is removed: no index file is left.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Instant;

use fmalign_index_format::{self as format, SectionId};

use super::Comm;
use super::sa::{self as dsa, FmShare, KEY_CHARS, block};
use crate::error::{Error, Result};
use crate::index::{FLAG_WIDE, IndexConfig, Meta, WIDE_THRESHOLD, encode_layout};
use crate::io::output::{TempFile, temp_path, temp_path_for};
use crate::scan::{self, Checkpoint, Scan};
use crate::tables::c_from_counts;

/// Text bases between two checkpoints of the scan.
pub const CHECKPOINT_BASES: u64 = 1 << 20;

/// One phase on one rank: wall seconds and bytes sent to other ranks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phase {
    /// Phase name (scan, read, sa, bwt+occ, reversed, write).
    pub name: &'static str,
    /// Wall seconds on this rank.
    pub seconds: f64,
    /// Bytes this rank sent to other ranks during the phase.
    pub bytes_sent: u64,
}

/// The outcome of a distributed build.
#[derive(Debug, Default)]
pub struct DistReport {
    /// Unambiguous bases (the text length).
    pub text_len: u64,
    /// Contigs and ambiguous runs (known on rank 0; 0 elsewhere).
    pub contigs: usize,
    /// Ambiguous runs (rank 0).
    pub holes: usize,
    /// Warnings of the FASTA scan (rank 0).
    pub warnings: Vec<String>,
    /// Index file length.
    pub file_bytes: u64,
    /// Every rank's phases, by rank (complete on rank 0; this rank's elsewhere).
    pub phases: Vec<Vec<Phase>>,
    /// Prefix-doubling rounds of the text: `(h, suffixes not yet alone in
    /// their group, their groups)` after sorting by `h` bases (none in
    /// parts).
    pub rounds: Vec<(u64, u64, u64)>,
    /// One-line notes for the log: the algorithm and its plan.
    pub notices: Vec<String>,
}

impl DistReport {
    /// The `--stats` tables: each rank's phases (seconds, bytes sent), then
    /// the prefix-doubling rounds of the text, if any.
    pub fn write_stats(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        writeln!(w, "#dist\trank\tphase\tseconds\tbytes_sent")?;
        for (r, phases) in self.phases.iter().enumerate() {
            for ph in phases {
                writeln!(
                    w,
                    "dist\t{r}\t{}\t{:.3}\t{}",
                    ph.name, ph.seconds, ph.bytes_sent
                )?;
            }
        }
        if !self.rounds.is_empty() {
            writeln!(w, "#dist-round\th\tunsorted\tgroups")?;
            for (h, open, groups) in &self.rounds {
                writeln!(w, "dist-round\t{h}\t{open}\t{groups}")?;
            }
        }
        Ok(())
    }
}

/// Phases of `--stats` for prefix doubling, in order.
pub const PHASES: [&str; 6] = ["scan", "read", "sa", "bwt+occ", "reversed", "write"];

/// The build by distributed prefix doubling after the scan (`scanned` on
/// rank 0 found `n` bases and `checkpoints`): the phases of the module's
/// list in order, each ended by an agreement. `fail`: a rank that fails on
/// purpose while reading its windows (tests).
#[allow(clippy::too_many_arguments)]
pub(super) fn build_doubling<C: Comm>(
    comm: &C,
    fasta: &Path,
    cfg: &IndexConfig,
    out: &Path,
    scanned: Option<Scan>,
    n: u64,
    checkpoints: Vec<Checkpoint>,
    mut clock: Clock,
    fail: Option<usize>,
) -> Result<DistReport> {
    let read = |fasta: &Path, checkpoints: &[Checkpoint], n: u64, range: (u64, u64)| {
        super::injected_failure(fail, comm.rank(), fasta)?;
        read_windows(fasta, checkpoints, n, range)
    };
    // 2. This rank's windows of the text and of the reversed text, after
    // refusing, on every rank, a block that would not fit in memory.
    let (lo, hi) = block(n, comm.size(), comm.rank());
    let (fwd, rev) = agreed(comm, read(fasta, &checkpoints, n, (lo, hi)))?;
    clock.lap("read", comm);

    // 3. Suffix array, BWT, Occ and samples of the text, then the mirror.
    let mut rounds = Vec::new();
    let sa = dsa::suffix_array(comm, n, &fwd, &mut |h, o, g| rounds.push((h, o, g)));
    clock.lap("sa", comm);
    let shift = cfg.sa_sample.trailing_zeros();
    let (share, primary, counts) = share_of(comm, n, &fwd, sa, shift);
    clock.lap("bwt+occ", comm);
    let rsa = dsa::suffix_array(comm, n, &rev, &mut |_, _, _| {});
    let (rshare, rev_primary, _) = share_of(comm, n, &rev, rsa, 63);
    drop(rev);
    clock.lap("reversed", comm);

    // 4. The file: this rank's pieces (rank 0's with the small sections).
    let wide = cfg.wide || n >= WIDE_THRESHOLD;
    let mut pieces = rank_pieces(n, (lo, hi), &fwd, &share, &rshare, wide);
    drop(fwd);
    if let Some(s) = &scanned {
        let meta = Meta::new(
            &s.layout,
            n,
            cfg.sa_sample,
            if wide { 8 } else { 4 },
            c_from_counts(counts),
            primary,
            rev_primary,
        );
        pieces.extend(rank0_pieces(s, &meta, &share, &rshare));
    }
    drop((share, rshare));
    pieces.retain(|(_, _, b)| !b.is_empty());
    let file_bytes = write_file(comm, out, wide, pieces)?;
    clock.lap("write", comm);
    let rounds_len = rounds.len();

    Ok(DistReport {
        text_len: n,
        contigs: scanned.as_ref().map_or(0, |s| s.layout.contigs.len()),
        holes: scanned.as_ref().map_or(0, |s| s.layout.holes.len()),
        warnings: scanned.map_or(Vec::new(), |s| s.warnings),
        file_bytes,
        phases: gather_phases(comm, clock.phases, &PHASES),
        rounds,
        notices: vec![format!(
            "prefix doubling on {} ranks: {} rounds",
            comm.size(),
            rounds_len
        )],
    })
}

/// This rank's outcome `r`, agreed with the others (a collective): this
/// rank's error, or [`Error::OtherRank`] naming the first rank that failed.
pub(super) fn agreed<C: Comm, T>(comm: &C, r: Result<T>) -> Result<T> {
    let ok = comm.allgather(u8::from(r.is_ok()));
    match r {
        Err(e) => Err(e),
        Ok(v) => match ok.iter().position(|&x| x == 0) {
            None => Ok(v),
            Some(bad) => Err(Error::OtherRank(bad)),
        },
    }
}

/// This rank's [`Phase`]s so far, and when the current one started.
pub(super) struct Clock {
    pub(super) phases: Vec<Phase>,
    since: (Instant, u64),
}

impl Clock {
    pub(super) fn start<C: Comm>(comm: &C) -> Clock {
        Clock {
            phases: Vec::new(),
            since: (Instant::now(), comm.bytes_sent()),
        }
    }

    /// Ends the phase `name` now.
    pub(super) fn lap<C: Comm>(&mut self, name: &'static str, comm: &C) {
        let now = (Instant::now(), comm.bytes_sent());
        self.phases.push(Phase {
            name,
            seconds: (now.0 - self.since.0).as_secs_f64(),
            bytes_sent: now.1 - self.since.1,
        });
        self.since = now;
    }
}

/// `mine` of every rank on rank 0, by rank (empty lists elsewhere).
pub(super) fn gather_on_rank0<C: Comm, T: bytemuck::Pod + Send>(
    comm: &C,
    mine: Vec<T>,
) -> Vec<Vec<T>> {
    let mut send = vec![Vec::new(); comm.size()];
    send[0] = mine;
    comm.alltoallv(send)
}

/// Phase 1 (scan): rank 0's scan of the FASTA (`None` elsewhere), and on
/// every rank the text length and the checkpoints.
pub(super) fn scan_on_rank0<C: Comm>(
    comm: &C,
    fasta: &Path,
) -> Result<(Option<Scan>, u64, Vec<Checkpoint>)> {
    let scanned = if comm.rank() == 0 {
        scan::scan_fasta(fasta, CHECKPOINT_BASES).map(Some)
    } else {
        Ok(None)
    };
    let scanned = agreed(comm, scanned)?;
    let head: Vec<u64> = scanned.as_ref().map_or(Vec::new(), |s| vec![s.text_len]);
    let n = comm.broadcast(0, head)[0];
    let checkpoints: Vec<Checkpoint> = comm.broadcast(
        0,
        scanned
            .as_ref()
            .map_or(Vec::new(), |s| s.checkpoints.clone()),
    );
    Ok((scanned, n, checkpoints))
}

/// Phase 2 (read): the window of the text of a rank owning the positions
/// `lo..hi` of a text of `n` bases (the block and the [`KEY_CHARS`] bases
/// after it, fewer at the end), and the same window of the reversed text.
fn read_windows(
    fasta: &Path,
    checkpoints: &[Checkpoint],
    n: u64,
    (lo, hi): (u64, u64),
) -> Result<(Vec<u8>, Vec<u8>)> {
    let end = (hi + KEY_CHARS).min(n);
    let fwd = scan::read_text_range(fasta, checkpoints, lo, end)?;
    let mut rev = scan::read_text_range(fasta, checkpoints, n - end, n - lo)?;
    rev.reverse();
    Ok((fwd, rev))
}

/// Phase 3 (sa, bwt+occ, reversed): this rank's share of the FM tables of the
/// text whose window is `text` and whose suffix-array block is `sa` (SA
/// sampled every `2^shift` rows), with the `primary` row and the counts of A,
/// C, G, T.
fn share_of<C: Comm>(
    comm: &C,
    n: u64,
    text: &[u8],
    sa: Vec<u64>,
    shift: u32,
) -> (FmShare, u64, [u64; 4]) {
    let (b, primary, counts) = dsa::bwt(comm, n, text, &sa);
    (dsa::fm_share(comm, n, &b, &sa, shift), primary, counts)
}

/// A piece of a section: the section, the offset in it, the bytes.
type Piece = (SectionId, u64, Vec<u8>);

/// Phase 4 (write): this rank's pieces of the large sections: PAC of its
/// block `lo..hi` of the text (`text` is its window), its Occ lines of both
/// indexes, its sampled SA rows (`wide`: 8-byte positions).
fn rank_pieces(
    n: u64,
    (lo, hi): (u64, u64),
    text: &[u8],
    share: &FmShare,
    rshare: &FmShare,
    wide: bool,
) -> Vec<Piece> {
    let lines = |s: &FmShare| bytemuck::cast_slice(&s.occ).to_vec();
    let mut pieces = vec![
        pac_piece(n, (lo, hi), text),
        (SectionId::Occ, share.first_line * 64, lines(share)),
        (SectionId::RevOcc, rshare.first_line * 64, lines(rshare)),
    ];
    if let Some(&(k0, _)) = share.ssa.first() {
        let w = if wide { 8 } else { 4 };
        let mut bytes = Vec::with_capacity(share.ssa.len() * w);
        for (j, &(k, v)) in share.ssa.iter().enumerate() {
            assert_eq!(k, k0 + j as u64, "a rank's sampled rows are contiguous");
            if wide {
                bytes.extend_from_slice(&v.to_le_bytes());
            } else {
                bytes.extend_from_slice(&(v as u32).to_le_bytes());
            }
        }
        pieces.push((SectionId::Ssa, k0 * w as u64, bytes));
    }
    pieces
}

/// The PAC bytes of the rank owning bases `lo..hi` of `n` (`text` holds
/// `lo..` up to at least the end of the last byte, as its window does):
/// those that start in its block, base `i` in bits `2*(i%4)` of byte `i/4`.
fn pac_piece(n: u64, (lo, hi): (u64, u64), text: &[u8]) -> Piece {
    let (first, last) = (lo.div_ceil(4), hi.div_ceil(4));
    let (from, to) = ((4 * first).min(n), (4 * last).min(n));
    // One byte at a time (dna::pack4): a rank's work is sequential, while
    // dna::pack runs on the rayon pool.
    let pac = text[(from - lo) as usize..(to - lo) as usize]
        .chunks(4)
        .map(crate::dna::pack4)
        .collect();
    (SectionId::Pac, first, pac)
}

/// Phase 4 (write): rank 0's pieces: the small sections whole (META, CONTIGS,
/// NAMES, HOLES) and the superblock counts of both indexes (the same on every
/// rank).
fn rank0_pieces(s: &Scan, meta: &Meta, share: &FmShare, rshare: &FmShare) -> Vec<Piece> {
    let (contigs, names, holes) = encode_layout(&s.layout);
    let sup = |s: &FmShare| bytemuck::cast_slice(&s.sup).to_vec();
    vec![
        (SectionId::Meta, 0, meta.encode()),
        (SectionId::Contigs, 0, contigs),
        (SectionId::Names, 0, names),
        (SectionId::Holes, 0, holes),
        (SectionId::OccSuper, 0, sup(share)),
        (SectionId::RevOccSuper, 0, sup(rshare)),
    ]
}

/// Rank 0's plan of the file: header and table bytes, section offsets,
/// file length.
struct Plan {
    head: Vec<u8>,
    offsets: Vec<u64>,
    file_len: u64,
}

/// Phase 4 (write): writes every rank's `pieces` into rank 0's temporary file
/// at their offsets; rank 0 then writes the header and section table, whose
/// CRCs it combines from the pieces', and renames the file to `out`. Returns
/// the file length.
fn write_file<C: Comm>(comm: &C, out: &Path, wide: bool, pieces: Vec<Piece>) -> Result<u64> {
    // Piece CRCs to rank 0: (section index, offset, length, crc).
    let sums: Vec<[u64; 4]> = pieces
        .iter()
        .map(|(id, off, b)| {
            [
                section_index(*id) as u64,
                *off,
                b.len() as u64,
                crc32fast::hash(b) as u64,
            ]
        })
        .collect();
    let gathered: Vec<[u64; 4]> = gather_on_rank0(comm, sums).into_iter().flatten().collect();
    // Rank 0: the table, the temporary file at its final length (removed
    // on an error or a signal until it is renamed).
    let mut guard: Option<TempFile> = None;
    let planned = if comm.rank() == 0 {
        plan_file(&gathered, wide, out).map(|(tmp, plan)| {
            guard = Some(tmp);
            Some(plan)
        })
    } else {
        Ok(None)
    };
    let planned = agreed(comm, planned)?;
    // Everyone: rank 0's process id (its temporary file's name), the file
    // length and the section offsets.
    let mut layout_msg: Vec<u64> = Vec::new();
    if let Some(plan) = &planned {
        layout_msg.push(u64::from(std::process::id()));
        layout_msg.push(plan.file_len);
        layout_msg.extend_from_slice(&plan.offsets);
    }
    let layout_msg = comm.broadcast(0, layout_msg);
    let tmp = temp_path_for(out, layout_msg[0] as u32);
    let file_len = layout_msg[1];
    let offsets = &layout_msg[2..];
    agreed(comm, write_pieces(&tmp, offsets, &pieces))?;
    drop(pieces);
    let sealed = match (&planned, guard) {
        (Some(plan), Some(guard)) => seal(guard, &plan.head, out),
        _ => Ok(()),
    };
    agreed(comm, sealed)?;
    Ok(file_len)
}

/// Rank 0: the plan of the file from the pieces' CRCs of all ranks, and
/// the temporary file created at its final length.
fn plan_file(gathered: &[[u64; 4]], wide: bool, out: &Path) -> Result<(TempFile, Plan)> {
    let parts = combine(gathered)?;
    let flags = if wide { FLAG_WIDE } else { 0 };
    let (head, table, file_len) = format::plan(flags, &parts);
    let tmp = TempFile::register(temp_path(out));
    let f = File::create(tmp.path()).map_err(|e| Error::io(tmp.path(), e))?;
    f.set_len(file_len).map_err(|e| Error::io(tmp.path(), e))?;
    let offsets = table.iter().map(|s| s.offset).collect();
    Ok((
        tmp,
        Plan {
            head,
            offsets,
            file_len,
        },
    ))
}

/// Writes each of `pieces` into `tmp` at its section's offset (`offsets`,
/// by section) plus its own offset in the section.
fn write_pieces(tmp: &Path, offsets: &[u64], pieces: &[Piece]) -> Result<()> {
    let f = open_for_writing(tmp)?;
    for (id, off, bytes) in pieces {
        f.write_all_at(bytes, offsets[section_index(*id)] + off)
            .map_err(|e| Error::io(tmp, e))?;
    }
    f.sync_data().map_err(|e| Error::io(tmp, e))
}

/// Rank 0, once every piece is written: the header and table at the start
/// of the temporary file, then the rename to `out`.
pub(super) fn seal(tmp: TempFile, head: &[u8], out: &Path) -> Result<()> {
    let f = open_for_writing(tmp.path())?;
    f.write_all_at(head, 0)
        .map_err(|e| Error::io(tmp.path(), e))?;
    f.sync_all().map_err(|e| Error::io(tmp.path(), e))?;
    tmp.commit(out).map_err(|e| Error::io(out, e))
}

/// An existing file, opened for writing in place.
fn open_for_writing(path: &Path) -> Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))
}

/// Every rank's phases on rank 0, by rank; this rank's elsewhere.
pub(super) fn gather_phases<C: Comm>(
    comm: &C,
    phases: Vec<Phase>,
    names: &[&'static str],
) -> Vec<Vec<Phase>> {
    let mine: Vec<[u64; 2]> = phases
        .iter()
        .map(|ph| [ph.seconds.to_bits(), ph.bytes_sent])
        .collect();
    let all = gather_on_rank0(comm, mine);
    if comm.rank() != 0 {
        return vec![phases];
    }
    all.into_iter()
        .map(|v| {
            v.iter()
                .zip(names)
                .map(|(x, &name)| Phase {
                    name,
                    seconds: f64::from_bits(x[0]),
                    bytes_sent: x[1],
                })
                .collect()
        })
        .collect()
}

/// Peak bytes of a rank building `m` bases: tuples, their sorted and
/// exchanged copies, ranks and the received parts, plus the MPI library's
/// buffers (measured on chr20, docs/BENCHMARKS.md: 5.2 GiB for 59.5 M bases
/// on 1 rank, 0.91 GiB for 7.4 M on each of 8; this gives 7.1 and 0.96).
pub fn memory_estimate(m: u64) -> u64 {
    BYTES_PER_BASE * m + (128 << 20)
}

/// See [`memory_estimate`].
pub const BYTES_PER_BASE: u64 = 120;

/// Memory this rank may use: `FMALIGN_MEM_PER_RANK` (bytes) when set (for
/// schedulers whose limits the files below do not show), else the smaller
/// of `MemAvailable` and the cgroup limit, divided by the ranks on this
/// node (`OMPI_COMM_WORLD_LOCAL_SIZE`, `MPI_LOCALNRANKS` or
/// `SLURM_NTASKS_PER_NODE`; 1 without them). `None` when unknown.
pub(super) fn available_per_rank() -> Option<u64> {
    if let Some(v) = std::env::var("FMALIGN_MEM_PER_RANK")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return Some(v);
    }
    let avail = crate::mem::available_memory()?;
    let local = [
        "OMPI_COMM_WORLD_LOCAL_SIZE",
        "MPI_LOCALNRANKS",
        "SLURM_NTASKS_PER_NODE",
    ]
    .iter()
    .find_map(|k| std::env::var(k).ok()?.parse::<u64>().ok())
    .unwrap_or(1)
    .max(1);
    Some(avail / local)
}

/// Position of `id` in [`SectionId::ALL`].
pub(super) fn section_index(id: SectionId) -> usize {
    SectionId::ALL
        .iter()
        .position(|&s| s == id)
        .expect("a known section")
}

/// Per section, in [`SectionId::ALL`] order, `(len, crc32)` from the
/// pieces `(section index, offset, len, crc)` of all ranks, which must tile
/// each section from 0 without gaps or overlaps.
pub(super) fn combine(pieces: &[[u64; 4]]) -> Result<Vec<(u64, u32)>> {
    let mut sorted = pieces.to_vec();
    sorted.sort_unstable();
    let mut out = vec![(0u64, 0u32); SectionId::ALL.len()];
    let mut hashers: Vec<crc32fast::Hasher> =
        (0..out.len()).map(|_| crc32fast::Hasher::new()).collect();
    for &[s, off, len, crc] in &sorted {
        let s = s as usize;
        if off != out[s].0 {
            return Err(Error::SuffixArray(format!(
                "distributed write: section {} has a piece at {off}, expected {}",
                SectionId::ALL[s].name(),
                out[s].0
            )));
        }
        hashers[s].combine(&crc32fast::Hasher::new_with_initial_len(crc as u32, len));
        out[s].0 += len;
    }
    for (o, h) in out.iter_mut().zip(hashers) {
        o.1 = h.finalize();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::LocalComm;

    /// A rank that fails (injected, [`super::super::build_with_fault`]) stops every rank;
    /// no file is left. (The same through `mpirun` is in
    /// tests/distributed_mpi.rs, feature `fault-injection`.)
    #[test]
    fn a_failing_rank_stops_every_rank_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ok.fa");
        std::fs::write(&path, b">a\nACGTACGTTTGACCA\n").unwrap();
        let out = dir.path().join("ok.fmi");
        let cfg = IndexConfig {
            threads: 1,
            sa_sample: 32,
            wide: false,
            ..IndexConfig::default()
        };
        for (p, bad) in [(2usize, 1usize), (4, 2), (3, 0)] {
            let results = LocalComm::run(p, |c| {
                super::super::build_with_fault(c, &path, &cfg, &out, bad)
            });
            for (rank, r) in results.iter().enumerate() {
                let e = r.as_ref().unwrap_err();
                if rank == bad {
                    assert!(e.to_string().contains("injected"), "{e}");
                } else {
                    assert!(matches!(e, Error::OtherRank(r) if *r == bad), "{e}");
                }
            }
            let files: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(
                files,
                vec![std::ffi::OsString::from("ok.fa")],
                "{p} ranks, rank {bad} failing"
            );
        }
    }
}
