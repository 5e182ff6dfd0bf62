//! `fmalign index --distributed`: the whole index built by a group of ranks
//! ([`Comm`]) and written by them into one file, byte-identical to the
//! single-process index of the same reference and options.
//!
//! 1. **scan** — rank 0 streams the FASTA once ([`crate::scan::scan_fasta`]:
//!    contigs, holes, MD5s, the text length, a checkpoint every
//!    [`CHECKPOINT_BASES`] bases; never the text) and broadcasts the text
//!    length and the checkpoints.
//! 2. **read** — every rank reads only its block of text positions plus
//!    [`KEY_CHARS`] bases after it ([`crate::scan::read_text_range`], from
//!    the nearest checkpoint), and the same window of the reversed text.
//! 3. **sa**, **bwt+occ** — [`super::sa`]: distributed prefix doubling, the BWT
//!    slice of each rank's slice of the suffix array, its Occ lines and
//!    sampled SA rows; **reversed** — the same for the reversed text (the
//!    mirror index: Occ only).
//! 4. **write** — rank 0 creates the temporary file (`.NAME.tmp.PID`) at its
//!    final length; every rank writes its pieces of PAC, OCC, SSA and REV_OCC
//!    at their offsets, rank 0 the small sections; the per-piece CRCs are
//!    combined in order on rank 0 (`crc32fast::Hasher::combine`), which
//!    writes the header and section table last and renames the file.
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
use super::sa::{self as dsa, KEY_CHARS, block};
use crate::cleanup::TempFile;
use crate::error::{Error, Result};
use crate::index::{FLAG_WIDE, IndexConfig, Meta, WIDE_THRESHOLD, encode_layout, temp_path_for};
use crate::scan::{self, Checkpoint};

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
    /// their group, their groups)` after sorting by `h` bases.
    pub rounds: Vec<(u64, u64, u64)>,
}

/// Rank 0's plan of the file: header and table bytes, section offsets,
/// file length.
type Planned = (Vec<u8>, Vec<u64>, u64);

const PHASES: [&str; 6] = ["scan", "read", "sa", "bwt+occ", "reversed", "write"];

/// Runs `f` on this rank, then agrees with the others: this rank's error,
/// or [`Error::OtherRank`] naming the first rank that failed.
fn agreed<C: Comm, T>(comm: &C, r: Result<T>) -> Result<T> {
    let ok = comm.allgather(u8::from(r.is_ok()));
    match r {
        Err(e) => Err(e),
        Ok(v) => match ok.iter().position(|&x| x == 0) {
            None => Ok(v),
            Some(bad) => Err(Error::OtherRank(bad)),
        },
    }
}

/// Builds the index of the FASTA at `fasta` on all ranks of `comm` and
/// writes it to `out`. Only `sa_sample`, `wide` and `stats` of `cfg` apply
/// (the local work is sequential: one rank per core).
pub fn build<C: Comm>(comm: &C, fasta: &Path, cfg: &IndexConfig, out: &Path) -> Result<DistReport> {
    build_with_fault(comm, fasta, cfg, out, None)
}

/// [`build`], where rank `fail` (when given) fails while reading its slice
/// of the reference, as it would on a read error: for tests of the failure
/// path (`FMALIGN_TEST_FAIL_RANK` in the command-line tool).
pub fn build_with_fault<C: Comm>(
    comm: &C,
    fasta: &Path,
    cfg: &IndexConfig,
    out: &Path,
    fail: Option<usize>,
) -> Result<DistReport> {
    if !cfg.sa_sample.is_power_of_two() || cfg.sa_sample > 1 << 16 {
        return Err(Error::Usage(format!(
            "--sa-sample {} must be a power of two from 1 to 65536",
            cfg.sa_sample
        )));
    }
    let (p, me) = (comm.size(), comm.rank());
    let mut phases = Vec::new();
    let mut clock = (Instant::now(), comm.bytes_sent());
    let mut lap = |name: &'static str, comm: &C| {
        let now = (Instant::now(), comm.bytes_sent());
        phases.push(Phase {
            name,
            seconds: (now.0 - clock.0).as_secs_f64(),
            bytes_sent: now.1 - clock.1,
        });
        clock = now;
    };

    // 1. Scan on rank 0; the text length and checkpoints to everyone.
    let scanned = if me == 0 {
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
    lap("scan", comm);

    // Memory: refuse up front, on every rank, rather than fail in the middle.
    let (lo, hi) = block(n, p, me);
    let need = memory_estimate(hi - lo);
    let fits = match available_per_rank() {
        Some(have) if need > have => Err(Error::Usage(format!(
            "building its {} bases needs about {} MB, but only {} MB are available per rank on this node; use more nodes (or fewer ranks per node)",
            hi - lo,
            need >> 20,
            have >> 20
        ))),
        _ => Ok(()),
    };
    agreed(comm, fits)?;

    // 2. This rank's windows of the text and of the reversed text.
    let end = (hi + KEY_CHARS).min(n);
    let read = || -> Result<(Vec<u8>, Vec<u8>)> {
        if fail == Some(me) {
            return Err(Error::input(
                fasta,
                "failure injected by FMALIGN_TEST_FAIL_RANK",
            ));
        }
        let fwd = scan::read_text_range(fasta, &checkpoints, lo, end)?;
        let mut rev = scan::read_text_range(fasta, &checkpoints, n - end, n - lo)?;
        rev.reverse();
        Ok((fwd, rev))
    };
    let (fwd, rev) = agreed(comm, read())?;
    lap("read", comm);

    // 3. Suffix array, BWT, Occ and samples of the text, then the mirror.
    let shift = cfg.sa_sample.trailing_zeros();
    let mut rounds = Vec::new();
    let sa = dsa::suffix_array(comm, n, &fwd, &mut |h, o, g| rounds.push((h, o, g)));
    lap("sa", comm);
    let (b, primary, counts) = dsa::bwt(comm, n, &fwd, &sa);
    let share = dsa::fm_share(comm, n, &b, &sa, shift);
    drop((b, sa));
    lap("bwt+occ", comm);
    let rsa = dsa::suffix_array(comm, n, &rev, &mut |_, _, _| {});
    let (rb, rev_primary, _) = dsa::bwt(comm, n, &rev, &rsa);
    let rshare = dsa::fm_share(comm, n, &rb, &rsa, 63);
    drop((rb, rsa, rev));
    lap("reversed", comm);

    // 4. The file.
    let wide = cfg.wide || n >= WIDE_THRESHOLD;
    let w: u64 = if wide { 8 } else { 4 };
    let mut c = [1u64; 5];
    for k in 0..4 {
        c[k + 1] = c[k] + counts[k];
    }
    // This rank's pieces: (section, offset in the section, bytes).
    let mut pieces: Vec<(SectionId, u64, Vec<u8>)> = Vec::new();
    let pac_from = lo.div_ceil(4);
    let pac_to = hi.div_ceil(4);
    let pac: Vec<u8> = (pac_from..pac_to)
        .map(|k| {
            (0..4u64)
                .filter(|j| 4 * k + j < n)
                .map(|j| fwd[(4 * k + j - lo) as usize] << (2 * j))
                .sum::<u8>()
        })
        .collect();
    pieces.push((SectionId::Pac, pac_from, pac));
    drop(fwd);
    let lines = |s: &dsa::FmShare| bytemuck::cast_slice(&s.occ).to_vec();
    pieces.push((SectionId::Occ, share.first_line * 64, lines(&share)));
    pieces.push((SectionId::RevOcc, rshare.first_line * 64, lines(&rshare)));
    if let Some(&(k0, _)) = share.ssa.first() {
        let mut bytes = Vec::with_capacity(share.ssa.len() * w as usize);
        for (j, &(k, v)) in share.ssa.iter().enumerate() {
            assert_eq!(k, k0 + j as u64, "a rank's sampled rows are contiguous");
            if wide {
                bytes.extend_from_slice(&v.to_le_bytes());
            } else {
                bytes.extend_from_slice(&(v as u32).to_le_bytes());
            }
        }
        pieces.push((SectionId::Ssa, k0 * w, bytes));
    }
    let mut report = DistReport {
        text_len: n,
        ..DistReport::default()
    };
    if let Some(s) = &scanned {
        let (contigs, names, holes) = encode_layout(&s.layout);
        let meta = Meta {
            text_len: n,
            primary,
            ref_len: s.layout.contigs.iter().map(|c| c.len).sum(),
            contigs: s.layout.contigs.len() as u64,
            holes: s.layout.holes.len() as u64,
            sa_sample: cfg.sa_sample,
            pos_bytes: w as u32,
            c,
            rev_primary,
        }
        .encode();
        let sup = |s: &dsa::FmShare| bytemuck::cast_slice(&s.sup).to_vec();
        pieces.push((SectionId::Meta, 0, meta));
        pieces.push((SectionId::Contigs, 0, contigs));
        pieces.push((SectionId::Names, 0, names));
        pieces.push((SectionId::Holes, 0, holes));
        pieces.push((SectionId::OccSuper, 0, sup(&share)));
        pieces.push((SectionId::RevOccSuper, 0, sup(&rshare)));
        report.contigs = s.layout.contigs.len();
        report.holes = s.layout.holes.len();
        report.warnings = s.warnings.clone();
    }
    drop((share, rshare));
    pieces.retain(|(_, _, b)| !b.is_empty());

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
    let mut to_root = vec![Vec::new(); p];
    to_root[0] = sums;
    let gathered: Vec<[u64; 4]> = comm.alltoallv(to_root).into_iter().flatten().collect();
    let flags = if wide { FLAG_WIDE } else { 0 };
    // Rank 0: the table, the temporary file at its final length (removed
    // on an error or a signal until it is renamed).
    let mut guard: Option<TempFile> = None;
    let planned: Result<Option<Planned>> = (|| {
        if me != 0 {
            return Ok(None);
        }
        let parts = combine(&gathered)?;
        let (head, table, file_len) = format::plan(flags, &parts);
        let tmp = guard.insert(TempFile::register(temp_path_for(out, std::process::id())));
        let f = File::create(tmp.path()).map_err(|e| Error::io(tmp.path(), e))?;
        f.set_len(file_len).map_err(|e| Error::io(tmp.path(), e))?;
        Ok(Some((
            head,
            table.iter().map(|s| s.offset).collect(),
            file_len,
        )))
    })();
    let planned = agreed(comm, planned)?;
    let mut layout_msg: Vec<u64> = Vec::new();
    if let Some((_, offsets, file_len)) = &planned {
        layout_msg.push(u64::from(std::process::id()));
        layout_msg.push(*file_len);
        layout_msg.extend_from_slice(offsets);
    }
    let layout_msg = comm.broadcast(0, layout_msg);
    let tmp = temp_path_for(out, layout_msg[0] as u32);
    let file_len = layout_msg[1];
    let offsets = &layout_msg[2..];
    let write_mine = || -> Result<()> {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&tmp)
            .map_err(|e| Error::io(&tmp, e))?;
        for (id, off, bytes) in &pieces {
            f.write_all_at(bytes, offsets[section_index(*id)] + off)
                .map_err(|e| Error::io(&tmp, e))?;
        }
        f.sync_data().map_err(|e| Error::io(&tmp, e))
    };
    agreed(comm, write_mine())?;
    drop(pieces);
    let mut finish = || -> Result<()> {
        if let (Some((head, _, _)), Some(guard)) = (&planned, guard.take()) {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&tmp)
                .map_err(|e| Error::io(&tmp, e))?;
            f.write_all_at(head, 0).map_err(|e| Error::io(&tmp, e))?;
            f.sync_all().map_err(|e| Error::io(&tmp, e))?;
            guard.commit(out).map_err(|e| Error::io(out, e))?;
        }
        Ok(())
    };
    agreed(comm, finish())?;
    lap("write", comm);
    report.file_bytes = file_len;
    report.rounds = rounds;

    // Every rank's phases to rank 0.
    let mine: Vec<[u64; 2]> = phases
        .iter()
        .map(|ph| [ph.seconds.to_bits(), ph.bytes_sent])
        .collect();
    let mut send = vec![Vec::new(); p];
    send[0] = mine;
    let all = comm.alltoallv(send);
    report.phases = if me == 0 {
        all.into_iter()
            .map(|v| {
                v.iter()
                    .zip(PHASES)
                    .map(|(x, name)| Phase {
                        name,
                        seconds: f64::from_bits(x[0]),
                        bytes_sent: x[1],
                    })
                    .collect()
            })
            .collect()
    } else {
        vec![phases]
    };
    Ok(report)
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
fn available_per_rank() -> Option<u64> {
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
fn section_index(id: SectionId) -> usize {
    SectionId::ALL
        .iter()
        .position(|&s| s == id)
        .expect("a known section")
}

/// Per section, in [`SectionId::ALL`] order, `(len, crc32)` from the
/// pieces `(section index, offset, len, crc)` of all ranks, which must tile
/// each section from 0 without gaps or overlaps.
fn combine(pieces: &[[u64; 4]]) -> Result<Vec<(u64, u32)>> {
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
