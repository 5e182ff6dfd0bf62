//! A rank's Occ lines of one direction: the counts of every rank's share of
//! `B` (all-gathered) place its share in `B`; the superblock counts and the
//! bits of a line two ranks share are exchanged; its lines are written.

use fmalign_index_format::SectionId;
use rayon::prelude::*;

use super::Share;
use super::pieces::{Out, Piece};
use crate::dist::Comm;
use crate::dna::PackedText;
use crate::error::{Error, Result};
use crate::fm::{LINE_BASES, OccLine, SUPER_LINES, word_counts};

/// Counts of A, C, G, T in `b[from..to]`.
fn count_range(b: &PackedText, from: usize, to: usize) -> [u64; 4] {
    let words = (to.saturating_sub(from)).div_ceil(32);
    (0..words)
        .into_par_iter()
        .with_min_len(1 << 14)
        .map(|k| {
            let i = from + 32 * k;
            word_counts(b.word_at(i), to - i)
        })
        .reduce(
            || [0; 4],
            |x, y| [x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3]],
        )
}

/// The line of `B` holding `b[off..off + valid]` at its slots `at..`
/// (`at + valid <= 192`); its counts are those bases'.
fn line_of(b: &PackedText, off: usize, at: usize, valid: usize) -> OccLine {
    let mut line = OccLine::default();
    let mut k = 0;
    while k < valid {
        // Up to the end of the line's word that slot `at + k` is in.
        let slot = at + k;
        let take = (32 - slot % 32).min(valid - k);
        let w = b.word_at(off + k);
        let mask = if take == 32 {
            u64::MAX
        } else {
            (1u64 << (2 * take)) - 1
        };
        line.bits[slot / 32] |= (w & mask) << (2 * (slot % 32));
        let c = word_counts(w, take);
        for (x, y) in line.counts.iter_mut().zip(c) {
            *x += y as u32;
        }
        k += take;
    }
    line
}

/// Lines built at a time (12 MiB of them).
const LINE_BATCH: u64 = 1 << 18;

/// Tables of one direction: the counts of every rank's share of `B`
/// (all-gathered) place this rank's; the superblock counts and the bits of
/// shared lines are exchanged; this rank's Occ lines are written. Returns
/// its pieces, the row of `$`, the counts of `B` and every superblock's
/// counts.
#[allow(clippy::type_complexity)]
pub(super) fn occ_lines<C: Comm>(
    comm: &C,
    pool: &rayon::ThreadPool,
    share: &Share<'_>,
    occ: SectionId,
    o: &Out,
) -> Result<(Vec<[u64; 4]>, u64, [u64; 4], Vec<[u64; 4]>)> {
    let n = share.n;
    let (p, me) = (comm.size(), comm.rank());
    let b = &share.b;
    let len = b.len() as u64;
    let counts = pool.install(|| count_range(b, 0, b.len()));
    // Per rank: its bases in B, counts, row of $ (or MAX), first row and
    // rows (0 and 0 without parts), whether $ is before its first row.
    let rows = share.first_row.map_or(0, |f| share.row - f);
    let mine = [
        len,
        counts[0],
        counts[1],
        counts[2],
        counts[3],
        share.primary.unwrap_or(u64::MAX),
        share.first_row.unwrap_or(0),
        rows,
        u64::from(share.zero_before),
    ];
    let all: Vec<[u64; 9]> = comm
        .alltoallv(vec![mine.to_vec(); p])
        .into_iter()
        .map(|v| v.try_into().expect("nine numbers"))
        .collect();
    // Where each share starts in B, and the counts before it.
    let mut b_lo = vec![0u64; p + 1];
    let mut before = vec![[0u64; 4]; p + 1];
    for r in 0..p {
        b_lo[r + 1] = b_lo[r] + all[r][0];
        for c in 0..4 {
            before[r + 1][c] = before[r][c] + all[r][1 + c];
        }
    }
    let total_rows: u64 = all.iter().map(|x| x[7]).sum();
    let primaries: Vec<u64> = all
        .iter()
        .map(|x| x[5])
        .filter(|&x| x != u64::MAX)
        .collect();
    if b_lo[p] != n || total_rows != n + 1 || primaries.len() != usize::from(n > 0) {
        return Err(Error::SuffixArray(format!(
            "distributed build: {} bases of B, {total_rows} rows, {} rows of $ for {n} bases (a bug)",
            b_lo[p],
            primaries.len()
        )));
    }
    let primary = primaries.first().copied().unwrap_or(0);
    if let Some(first) = share.first_row
        && first - u64::from(share.zero_before) != b_lo[me]
    {
        return Err(Error::SuffixArray(format!(
            "distributed build: rank {me} starts at row {first} but at {} of B (a bug)",
            b_lo[me]
        )));
    }
    let lo = b_lo[me];
    // The rank that writes line l: the last whose share starts at or
    // before its first base (position n: the last rank).
    let owner = |pos: u64| (0..p).rev().find(|&r| b_lo[r] <= pos).expect("rank 0 at 0");
    let end = if me + 1 == p { n + 1 } else { b_lo[me + 1] };
    let (l0, l1) = (lo.div_ceil(LINE_BASES), end.div_ceil(LINE_BASES));
    // Superblocks whose first line is this rank's.
    let span = LINE_BASES * SUPER_LINES;
    let mut sup_mine: Vec<u64> = Vec::new();
    for k in l0.div_ceil(SUPER_LINES)..l1.div_ceil(SUPER_LINES) {
        let at = k * span;
        let c = pool.install(|| count_range(b, 0, (at - lo) as usize));
        sup_mine.push(k);
        sup_mine.extend((0..4).map(|x| before[me][x] + c[x]));
    }
    let mut sup: Vec<[u64; 5]> = comm
        .alltoallv(vec![sup_mine; p])
        .into_iter()
        .flatten()
        .collect::<Vec<u64>>()
        .chunks_exact(5)
        .map(|c| c.try_into().expect("five"))
        .collect();
    sup.sort_unstable();
    let lines = n / LINE_BASES + 1;
    let supers = (lines - 1) / SUPER_LINES + 1;
    if sup.len() as u64 != supers || sup.iter().enumerate().any(|(k, s)| s[0] != k as u64) {
        return Err(Error::SuffixArray(format!(
            "distributed build: {} superblock counts for {supers} superblocks (a bug)",
            sup.len()
        )));
    }
    let sup: Vec<[u64; 4]> = sup.iter().map(|s| [s[1], s[2], s[3], s[4]]).collect();
    // The bits of a line this rank shares with the rank that writes it.
    let mut send: Vec<Vec<u64>> = vec![Vec::new(); p];
    if len > 0 && !lo.is_multiple_of(LINE_BASES) {
        let l = lo / LINE_BASES;
        let at = (lo % LINE_BASES) as usize;
        let valid = (len as usize).min(LINE_BASES as usize - at);
        let line = line_of(b, 0, at, valid);
        send[owner(l * LINE_BASES)].push(l);
        send[owner(l * LINE_BASES)].extend_from_slice(&line.bits);
    }
    let received: Vec<u64> = comm.alltoallv(send).into_iter().flatten().collect();
    let mut extra = [0u64; 6];
    for f in received.chunks_exact(7) {
        if f[0] + 1 != l1 {
            return Err(Error::SuffixArray(format!(
                "distributed build: bits of line {} sent to the rank ending at line {l1} (a bug)",
                f[0]
            )));
        }
        for (x, y) in extra.iter_mut().zip(&f[1..]) {
            *x |= y;
        }
    }
    // This rank's lines, a batch at a time.
    let mut piece = Piece::new(o, occ, 64 * l0);
    // Counts before line l0: the shares before this one and this share's
    // bases before the line (those sent to the rank writing the line).
    let head = ((l0 * LINE_BASES).saturating_sub(lo)).min(len) as usize;
    let head = pool.install(|| count_range(b, 0, head));
    let mut total: [u64; 4] = std::array::from_fn(|c| before[me][c] + head[c]);
    let mut l = l0;
    while l < l1 {
        let upto = (l + LINE_BATCH).min(l1);
        let mut batch: Vec<OccLine> = pool.install(|| {
            (l..upto)
                .into_par_iter()
                .map(|l| {
                    let start = l * LINE_BASES;
                    let valid = (lo + len).saturating_sub(start).min(LINE_BASES);
                    line_of(b, (start - lo) as usize, 0, valid as usize)
                })
                .collect()
        });
        for (k, line) in batch.iter_mut().enumerate() {
            let l = l + k as u64;
            let base = sup[(l / SUPER_LINES) as usize];
            let own = line.counts;
            for c in 0..4 {
                line.counts[c] = (total[c] - base[c]) as u32;
                total[c] += u64::from(own[c]);
            }
            if l + 1 == l1 {
                for (x, y) in line.bits.iter_mut().zip(extra) {
                    *x |= y;
                }
            }
        }
        piece.push(bytemuck::cast_slice(&batch))?;
        l = upto;
    }
    let mut sums = Vec::new();
    if l1 > l0 {
        sums.push(piece.finish()?);
    }
    let all_counts = before[p];
    Ok((sums, primary, all_counts, sup))
}
