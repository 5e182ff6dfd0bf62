//! `fmalign index --distributed` over the parts of the bounded build (issue
//! 21): every rank holds the whole text at 2 bits per base, the ranks sort
//! the difference-cover sample together, and each sorts only the parts
//! whose first suffix falls in its share of the suffix order
//! ([`Blockwise::only`]); the parts are those of the single-process build in
//! parts ([`crate::index::bounded`]) with the same `max_part`, so every
//! suffix is sorted by exactly one rank. Neither the text nor the suffix
//! array crosses the network: the ranks exchange the sample's shares (4
//! bytes and a bit per sampled suffix, 0.23 bytes per base at v = 512), a
//! few numbers per rank (the BWT counts of each share, the superblock
//! counts, the bits of the Occ line that two ranks share) and the pieces'
//! CRCs.
//!
//! 1. **scan** (rank 0, [`super::index`]) and the choice of algorithm
//!    ([`super::build`]);
//! 2. **read** — every rank reads the text, 2 bits per base
//!    ([`crate::scan::read_packed`]); rank 0 creates the temporary file at
//!    its final length (the section lengths are known from `n`), every rank
//!    writes its share of PAC;
//! 3. **sample** — each rank sorts the sampled suffixes of its share of the
//!    k-mer buckets by their first `v` bases
//!    ([`DcSample::share_sorted`]); the shares are all-gathered and every
//!    rank runs the doubling rounds over the suffixes still tied
//!    ([`DcSample::from_shares`]);
//!    **sort** — [`Blockwise::only`]: each part's BWT bases go to a packed
//!    buffer (the rank's share of `B`, a quarter byte per suffix), its
//!    sampled SA rows straight to the file;
//! 4. **tables** — the counts of every rank's share (an all-gather) place
//!    each share in `B`; superblock counts are computed by the rank that
//!    holds their line and all-gathered; a line that starts in one rank's
//!    share and ends in another's is written by the first, with the bits of
//!    the others sent to it; each rank then writes its Occ lines;
//! 5. the same for the reversed text (no SSA), reversed in place;
//! 6. **write** — rank 0 writes the small sections, combines every piece's
//!    CRC, writes the header and renames the file.
//!
//! Memory per rank ([`RankPlan::peak`]): the single-process plan's (text,
//! sample, one part) plus the rank's share of `B` (`(n / P + max_part) /
//! 4` bytes). Every phase ends with an agreement, as in [`super::index`].
//!
//! Here the plan and the phases; [`pieces`] the temporary file and the
//! pieces of its sections each rank writes at their offsets, with their
//! CRCs; [`occ`] a share's Occ lines, placed in `B` by the counts of every
//! rank's share.

mod occ;
mod pieces;

use std::path::Path;

use fmalign_index_format::{self as format, SectionId};

use super::Comm;
use super::index::{Clock, DistReport, agreed, combine, gather_phases, seal};
use super::sa::block;
use crate::dna::PackedText;
use crate::error::{Error, Result};
use crate::index::bounded::{self, BWT_BATCH, DOLLAR};
use crate::index::{FLAG_WIDE, IndexConfig, Meta, WIDE_THRESHOLD, encode_layout};
use crate::reference::Reference;
use crate::sa::Pos;
use crate::sa::blockwise::{At, Blockwise, DcSample};
use crate::scan::Scan;
use crate::tables::c_from_counts;
use occ::occ_lines;
use pieces::{Out, Piece, open_output, piece};

/// Phases of `--stats`, in order.
pub const PHASES: [&str; 9] = [
    "scan",
    "read",
    "sample",
    "sort",
    "tables",
    "rev-sample",
    "rev-sort",
    "rev-tables",
    "write",
];

/// Parts per rank that [`rank_plan`] aims at with two or more ranks (parts
/// are at most `n / (4 P)` suffixes): a rank's share is its `n / P`
/// suffixes and at most one part more, so the slowest rank sorts at most a
/// quarter more than the mean.
pub const PARTS_PER_RANK: u64 = 4;

/// The plan of every rank of a distributed build in parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankPlan {
    /// Difference-cover period.
    pub v: usize,
    /// Most suffixes per part.
    pub max_part: u64,
    /// Peak bytes of a rank: the single-process plan's and its share of
    /// `B`.
    pub peak: u64,
}

/// Bytes of a rank's share of `B`: at most its `n / P` suffixes and one
/// part more, packed.
fn share_bytes(n: u64, ranks: usize, max_part: u64) -> u64 {
    let share = if ranks == 1 {
        n
    } else {
        n.min(n.div_ceil(ranks as u64) + max_part)
    };
    share / 4 + 64
}

/// The plan of a build in parts of `n` bases on `ranks` ranks, each within
/// `limit` bytes; `None` when it does not fit. `max_part` and `dcv` force
/// those values.
pub fn rank_plan(
    n: u64,
    wide: bool,
    ranks: usize,
    limit: Option<u64>,
    max_part: Option<u64>,
    dcv: Option<usize>,
) -> Option<RankPlan> {
    let cap = if ranks > 1 {
        Some(n.div_ceil(PARTS_PER_RANK * ranks as u64).max(1))
    } else {
        None
    };
    let reserve = share_bytes(n, ranks, max_part.or(cap).unwrap_or(n));
    let plan = bounded::plan(
        n,
        wide,
        limit.map(|l| l.saturating_sub(reserve)),
        max_part,
        dcv,
    )?;
    let part = match (max_part, cap) {
        (Some(p), _) => p,
        (None, Some(c)) => plan.max_part.min(c),
        (None, None) => plan.max_part,
    };
    let peak = bounded::peak(n, wide, plan.v, part) + share_bytes(n, ranks, part);
    if limit.is_some_and(|l| peak > l) {
        return None;
    }
    Some(RankPlan {
        v: plan.v,
        max_part: part,
        peak,
    })
}

/// The build in parts on every rank of `comm`, after the scan (`scanned` on
/// rank 0) found `n` bases: see the module documentation. `fail`: a rank
/// that fails on purpose while reading (tests).
#[allow(clippy::too_many_arguments)]
pub(super) fn build_on_ranks<C: Comm>(
    comm: &C,
    fasta: &Path,
    cfg: &IndexConfig,
    out: &Path,
    scanned: Option<Scan>,
    n: u64,
    plan: RankPlan,
    mut clock: Clock,
    fail: Option<usize>,
) -> Result<DistReport> {
    let me = comm.rank();
    let pool = crate::thread_pool(cfg.threads)?;
    // 2. The text on every rank (rank 0's failure is the input's: the
    // others only say that it failed).
    let read = super::injected_failure(fail, me, fasta).and_then(|()| {
        crate::scan::read_packed(fasta, cfg.threads).and_then(|r| {
            if r.text.len() as u64 == n {
                Ok(r)
            } else {
                Err(Error::input(
                    fasta,
                    format!(
                        "the file changed while it was read: {} bases, then {n}",
                        r.text.len()
                    ),
                ))
            }
        })
    });
    let reference = agreed(comm, read)?;
    let wide = cfg.wide || n >= WIDE_THRESHOLD;
    let shift = cfg.sa_sample.trailing_zeros();
    let (contigs, names, holes) = encode_layout(&reference.layout);
    let lens = bounded::section_lengths(
        n,
        if wide { 8 } else { 4 },
        shift,
        [&contigs, &names, &holes].map(|s| s.len() as u64),
    );
    let flags = if wide { FLAG_WIDE } else { 0 };
    let (o, guard) = open_output(comm, out, flags, &lens)?;
    let Reference {
        layout,
        mut text,
        warnings,
    } = reference;
    let mut sums = Vec::new();
    // This rank's share of PAC.
    let pac = text.pac();
    let (a, b) = block(pac.len() as u64, comm.size(), me);
    sums.push(agreed(
        comm,
        piece(&o, SectionId::Pac, a, &pac[a as usize..b as usize]),
    )?);
    clock.lap("read", comm);

    // 3-4. The text's suffix array in parts, its tables.
    let mut notices = Vec::new();
    let fwd = {
        direction(
            comm,
            &pool,
            &text,
            &plan,
            wide,
            Some(shift),
            [SectionId::Occ, SectionId::Ssa],
            &o,
            &mut clock,
            "",
        )
    }?;
    sums.extend(fwd.sums);
    // 5. The mirror index.
    pool.install(|| text.reverse());
    let rev = {
        direction(
            comm,
            &pool,
            &text,
            &plan,
            wide,
            None,
            [SectionId::RevOcc, SectionId::Ssa],
            &o,
            &mut clock,
            "rev-",
        )
    }?;
    sums.extend(rev.sums);
    drop(text);
    notices.push(format!(
        "in parts on {} ranks: difference-cover period {}, at most {} suffixes per part; this rank: {} + {} parts, {} passes over the text; planned peak per rank {}",
        comm.size(),
        plan.v,
        plan.max_part,
        fwd.summary.parts,
        rev.summary.parts,
        fwd.summary.passes + rev.summary.passes,
        crate::mem::human_bytes(plan.peak),
    ));

    // 6. Rank 0: the small sections; then the CRCs, the header, the name.
    if me == 0 {
        let meta = Meta::new(
            &layout,
            n,
            cfg.sa_sample,
            if wide { 8 } else { 4 },
            c_from_counts(fwd.counts),
            fwd.primary,
            rev.primary,
        );
        let small = [
            (SectionId::Meta, meta.encode()),
            (SectionId::Contigs, contigs),
            (SectionId::Names, names),
            (SectionId::Holes, holes),
            (SectionId::OccSuper, bytemuck::cast_slice(&fwd.sup).to_vec()),
            (
                SectionId::RevOccSuper,
                bytemuck::cast_slice(&rev.sup).to_vec(),
            ),
        ];
        for (id, bytes) in small {
            sums.push(piece(&o, id, 0, &bytes)?);
        }
    }
    let synced = o.file.sync_data().map_err(|e| Error::io(&o.path, e));
    agreed(comm, synced)?;
    sums.retain(|s| s[2] > 0);
    let gathered: Vec<[u64; 4]> = super::index::gather_on_rank0(comm, sums)
        .into_iter()
        .flatten()
        .collect();
    let sealed = match guard {
        Some(guard) => combine(&gathered).and_then(|parts| {
            let (head, table, _) = format::plan(flags, &parts);
            if table.iter().map(|s| s.offset).ne(o.offsets.iter().copied()) {
                return Err(Error::SuffixArray(
                    "distributed write: the sections moved (a bug)".into(),
                ));
            }
            seal(guard, &head, out)
        }),
        None => Ok(()),
    };
    agreed(comm, sealed)?;
    clock.lap("write", comm);
    let file_len = o.file.metadata().map_or(0, |m| m.len());
    Ok(DistReport {
        text_len: n,
        contigs: scanned.as_ref().map_or(0, |s| s.layout.contigs.len()),
        holes: scanned.as_ref().map_or(0, |s| s.layout.holes.len()),
        warnings: if me == 0 { warnings } else { Vec::new() },
        file_bytes: file_len,
        phases: gather_phases(comm, clock.phases, &PHASES),
        rounds: Vec::new(),
        notices,
    })
}

/// What one direction (the text or the reversed text) leaves.
struct Tables {
    /// This rank's pieces.
    sums: Vec<[u64; 4]>,
    /// Row of `$`.
    primary: u64,
    /// Counts of A, C, G, T in `B`.
    counts: [u64; 4],
    /// Every superblock's counts.
    sup: Vec<[u64; 4]>,
    summary: crate::sa::blockwise::PartsSummary,
}

/// One direction: this rank's parts sorted ([`Blockwise::only`]), their
/// BWT bases kept and their SSA rows written (`shift`: `None`, none), then
/// the Occ lines of its share of `B` written after the counts of every
/// rank's share are known. `ids`: the Occ and SSA sections.
#[allow(clippy::too_many_arguments)]
fn direction<C: Comm>(
    comm: &C,
    pool: &rayon::ThreadPool,
    text: &PackedText,
    plan: &RankPlan,
    wide: bool,
    shift: Option<u32>,
    [occ, ssa]: [SectionId; 2],
    o: &Out,
    clock: &mut Clock,
    prefix: &'static str,
) -> Result<Tables> {
    let n = text.len() as u64;
    let mut share = Share {
        n,
        shift,
        wide,
        first_row: None,
        zero_before: false,
        row: 0,
        b: PackedText::with_capacity(0),
        primary: None,
        ssa: None,
        ssa_section: ssa,
        out: o,
        bases: Vec::new(),
    };
    let me = comm.rank();
    let (lo, hi) = block(n, comm.size(), me);
    let max_part = usize::try_from(plan.max_part).unwrap_or(usize::MAX);
    // The sample: each rank sorts its share by the first v bases; the
    // shares go to every rank, which ranks the rest.
    let (ranks, v) = (comm.size(), plan.v);
    let mine = agreed(
        comm,
        pool.install(|| DcSample::share_sorted(text, v, ranks, me)),
    )?;
    let shares = all_gather_share(comm, mine);
    let sample = agreed(
        comm,
        pool.install(|| DcSample::from_shares(text, v, shares)),
    )?;
    clock.lap(name(prefix, "sample"), comm);
    let sorted = pool.install(|| {
        if me == 0 {
            share.start(text)?;
        }
        let summary = if wide {
            Blockwise::<u64>::new(v, max_part)
                .with_sample(sample)
                .only(lo as usize..hi as usize)
                .run(text, &mut |part, at| share.part(text, part, at))?
        } else {
            Blockwise::<u32>::new(v, max_part)
                .with_sample(sample)
                .only(lo as usize..hi as usize)
                .run(text, &mut |part, at| share.part(text, part, at))?
        };
        let ssa = share.ssa.take().map(Piece::finish).transpose()?;
        Ok((summary, ssa))
    });
    let (summary, ssa_sum) = agreed(comm, sorted)?;
    clock.lap(name(prefix, "sort"), comm);
    let tables = agreed(comm, occ_lines(comm, pool, &share, occ, o));
    let (mut sums, primary, counts, sup) = tables?;
    sums.extend(ssa_sum);
    clock.lap(name(prefix, "tables"), comm);
    Ok(Tables {
        sums,
        primary,
        counts,
        sup,
        summary,
    })
}

/// Every rank's share of the sample ([`DcSample::share_sorted`]), by rank,
/// on every rank.
fn all_gather_share<C: Comm>(
    comm: &C,
    (order, bits): (Vec<u32>, Vec<u64>),
) -> Vec<(Vec<u32>, Vec<u64>)> {
    let p = comm.size();
    let orders = comm.alltoallv(vec![order; p]);
    let bits = comm.alltoallv(vec![bits; p]);
    orders.into_iter().zip(bits).collect()
}

/// `prefix` + `phase`, among [`PHASES`].
fn name(prefix: &str, phase: &str) -> &'static str {
    PHASES
        .iter()
        .find(|p| p.strip_prefix(prefix) == Some(phase))
        .expect("a phase of PHASES")
}

/// This rank's rows of one direction as its parts come: their BWT bases
/// (its share of `B`, packed) and its SSA rows (written as they come).
struct Share<'o> {
    n: u64,
    shift: Option<u32>,
    wide: bool,
    /// This rank's first row (`None` before its first part).
    first_row: Option<u64>,
    /// Whether the row of `$` comes before `first_row`.
    zero_before: bool,
    /// Next row.
    row: u64,
    /// `B`'s bases of this rank's rows.
    b: PackedText,
    /// Row of `$`, when it is one of this rank's.
    primary: Option<u64>,
    ssa: Option<Piece<'o>>,
    ssa_section: SectionId,
    out: &'o Out,
    /// BWT bases of the batch at hand (reused).
    bases: Vec<u8>,
}

impl Share<'_> {
    /// Rank 0: row 0 (`SA'[0] = n`, `BWT'[0] = T[n - 1]`), before its first
    /// part.
    fn start(&mut self, text: &PackedText) -> Result<()> {
        self.first_row = Some(0);
        if self.shift.is_some() {
            self.ssa_row(0, self.n)?;
        }
        if self.n > 0 {
            self.b.push(text.get(self.n as usize - 1));
        }
        self.row = 1;
        Ok(())
    }

    fn ssa_row(&mut self, row: u64, p: u64) -> Result<()> {
        let shift = self.shift.expect("an SSA");
        let width = if self.wide { 8 } else { 4 };
        let (out, section) = (self.out, self.ssa_section);
        let piece = self
            .ssa
            .get_or_insert_with(|| Piece::new(out, section, (row >> shift) * width));
        if self.wide {
            piece.push(&p.to_le_bytes())
        } else {
            piece.push(&(p as u32).to_le_bytes())
        }
    }

    /// One of this rank's parts, in order.
    fn part<P: Pos>(&mut self, text: &PackedText, part: &[P], at: At) -> Result<()> {
        let first = at.before as u64 + 1;
        match self.first_row {
            None => {
                self.first_row = Some(first);
                self.zero_before = at.zero_before;
                self.row = first;
            }
            Some(_) if self.row != first => {
                return Err(Error::SuffixArray(format!(
                    "distributed build: a part at row {first} after row {} (a bug)",
                    self.row
                )));
            }
            Some(_) => {}
        }
        let mut bases = std::mem::take(&mut self.bases);
        for batch in part.chunks(BWT_BATCH) {
            bounded::bwt_bases(text, batch, &mut bases);
            match bases.iter().position(|&c| c == DOLLAR) {
                Some(k) => {
                    self.primary = Some(self.row + k as u64);
                    self.b.extend_codes(&bases[..k]);
                    self.b.extend_codes(&bases[k + 1..]);
                }
                None => self.b.extend_codes(&bases),
            }
            if let Some(shift) = self.shift {
                let end = self.row + batch.len() as u64;
                for row in crate::fm::sampled_rows(self.row, end, shift, self.n) {
                    self.ssa_row(row, batch[(row - self.row) as usize].to_u64())?;
                }
            }
            self.row += batch.len() as u64;
        }
        self.bases = bases;
        Ok(())
    }
}
