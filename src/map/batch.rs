//! The batch driver, one for every mode: a batch cut into chunks mapped in
//! parallel (find → choose → records), pairs' insert-size window estimated
//! from the first batch, the chunks' records in input order with their
//! counters and, for `--un`/`--al`, each read's outcome.

use std::ops::Range;

use rayon::prelude::*;

use crate::io::fastq::Batch;
use crate::pair::{Orientation, Window};
use crate::read::ReadView;

use super::config::{MapConfig, MapStats, OutputFormat, PairConfig};
use super::mates::{estimated_window, tally_fragments};
use super::record::{Records, Written};

/// Reads per chunk: large enough to amortise, small enough to balance
/// across threads.
pub(super) const CHUNK_READS: usize = 256;

/// What a mode found for one read.
pub(super) trait Found: Send + Sync {
    /// Alignments found (bowtie2's summary: 0, 1, more).
    fn count(&self) -> u64;
}

/// What [`MapMode::write_pair`] wrote.
pub(super) struct PairWritten {
    /// Mapped records of mate 1.
    pub(super) mate1: usize,
    /// Mapped records of mate 2.
    pub(super) mate2: usize,
    /// The pair is proper (flag 0x2).
    pub(super) proper: bool,
    /// Proper pairs found: 0, 1, or more.
    pub(super) pairs_found: u64,
    /// Alignments of each mate (for the summary; rescued ones included).
    pub(super) found: (u64, u64),
}

/// A mapping mode: how it finds a chunk's alignments and writes a read's
/// or a pair's records. The driver does the rest.
pub(super) trait MapMode: Sync {
    /// What it finds for one read.
    type Found: Found;

    /// The alignments of `reads` (named as in SAM), which are the batch's
    /// reads `at` (the mates' indices follow the batch's: `n + i`);
    /// returns them and the suffix-array rows located.
    fn find(&self, reads: &[ReadView<'_>], at: &[Range<usize>]) -> (Vec<Self::Found>, u64);

    /// The fragment of a pair whose mates each have one clearly best
    /// alignment, in orientation `o` (the insert-size estimate).
    fn unique_fragment(
        &self,
        one: (&ReadView<'_>, &Self::Found),
        two: (&ReadView<'_>, &Self::Found),
        o: Orientation,
    ) -> Option<u64>;

    /// Writes the records of a single read; returns how many are mapped.
    fn write_single(&self, out: &mut Records<'_>, read: &ReadView<'_>, found: Self::Found)
    -> usize;

    /// Writes the records of a pair (mate 1, then mate 2).
    fn write_pair(
        &self,
        out: &mut Records<'_>,
        one: (&ReadView<'_>, Self::Found),
        two: (&ReadView<'_>, Self::Found),
        pairing: &PairConfig,
        window: Window,
    ) -> PairWritten;
}

/// How a batch's records are written.
pub(super) struct Writing<'a> {
    pub(super) layout: &'a crate::reference::Layout,
    pub(super) cfg: &'a MapConfig,
    /// Collect each read's (pair's) outcome, for `--un`/`--al`.
    pub(super) status: bool,
    /// Collect each read's (pair's) records as owned values instead of
    /// bytes (the library's per-read API).
    pub(super) collect: bool,
}

impl Writing<'_> {
    fn records(&self) -> Records<'_> {
        let r = Records::new(
            self.layout,
            self.cfg.format == OutputFormat::Bam,
            self.cfg.read_group.as_ref().map(|rg| rg.id.as_str()),
            self.cfg.no_unal,
            if self.collect { 0 } else { CHUNK_READS * 400 },
        );
        if self.collect { r.collecting() } else { r }
    }
}

/// Maps one batch (single reads, or pairs when `mates` and their pairing
/// are given) in chunks on the current rayon pool: the records of each
/// chunk (SAM text or uncompressed BAM) in input order, and the batch's
/// counters (collecting: each read's, or pair's, records). For pairs, `window` is the insert-size window; while it is
/// unknown it is estimated from the first [`crate::pair::ESTIMATE_PAIRS`]
/// pairs of this (the first) batch, with a notice.
pub(super) fn map_batch<M: MapMode>(
    mode: &M,
    batch: &Batch,
    mates: Option<(&Batch, &PairConfig)>,
    writing: &Writing<'_>,
    window: &mut Option<Window>,
) -> std::io::Result<(Vec<Written>, MapStats)> {
    let mut stats = MapStats::default();
    let chunks: Vec<(Written, MapStats)> = match mates {
        None => (0..batch.len().div_ceil(CHUNK_READS))
            .into_par_iter()
            .map(|c| {
                let range = c * CHUNK_READS..((c + 1) * CHUNK_READS).min(batch.len());
                let reads: Vec<ReadView<'_>> = range
                    .clone()
                    .map(|i| batch.get(i).named_as_in_sam())
                    .collect();
                let (found, located) = mode.find(&reads, std::slice::from_ref(&range));
                let mut out = writing.records();
                let mut st = MapStats {
                    located,
                    ..MapStats::default()
                };
                for (k, (read, found)) in reads.iter().zip(found).enumerate() {
                    let n = found.count();
                    out.next_read(range.start + k, read, None);
                    let w = mode.write_single(&mut out, read, found);
                    st.reads += 1;
                    st.bases += read.seq.len() as u64;
                    st.mapped += (w > 0) as u64;
                    st.alignments += w as u64;
                    st.summary.single(n);
                    if writing.status {
                        st.status.push(w > 0);
                    }
                }
                Ok((out.finish()?, st))
            })
            .collect::<std::io::Result<_>>()?,
        Some((mates, pairing)) => {
            let per = CHUNK_READS / 2;
            let n = batch.len();
            let views = |range: Range<usize>| -> Vec<ReadView<'_>> {
                range
                    .clone()
                    .map(|i| batch.get(i).named_as_in_sam())
                    .chain(range.map(|i| mates.get(i).named_as_in_sam()))
                    .collect()
            };
            // Both mates of every pair found, chunk by chunk: the chunk's
            // mates 1, then its mates 2 (reads and what was found for them).
            type Chunk<'r, F> = (usize, Vec<ReadView<'r>>, Vec<F>, u64);
            let found: Vec<Chunk<'_, M::Found>> = (0..n.div_ceil(per))
                .into_par_iter()
                .map(|c| {
                    let range = c * per..((c + 1) * per).min(n);
                    let reads = views(range.clone());
                    let (f, located) =
                        mode.find(&reads, &[range.clone(), n + range.start..n + range.end]);
                    (range.start, reads, f, located)
                })
                .collect();
            if window.is_none() {
                let want = crate::pair::ESTIMATE_PAIRS.min(n);
                let pairs = (0..want).map(|k| {
                    let f = &found[k / per].2;
                    let half = f.len() / 2;
                    let (r1, r2) = (batch.get(k), mates.get(k));
                    let (a, b) = (&f[k % per], &f[half + k % per]);
                    move |o| mode.unique_fragment((&r1, a), (&r2, b), o)
                });
                let (fragments, counts) = tally_fragments(pairs, pairing.orientation);
                *window = Some(estimated_window(
                    &fragments,
                    want,
                    pairing,
                    &counts,
                    &mut stats.notices,
                ));
            }
            let window = window.expect("set above");
            found
                .into_par_iter()
                .map(|(start, reads, mut found, located)| {
                    let half = found.len() / 2;
                    let second = found.split_off(half);
                    let mut out = writing.records();
                    let mut st = MapStats {
                        located,
                        ..MapStats::default()
                    };
                    for (k, (f1, f2)) in found.into_iter().zip(second).enumerate() {
                        let (r1, r2) = (&reads[k], &reads[half + k]);
                        out.next_read(start + k, r1, Some(r2));
                        let w = mode.write_pair(&mut out, (r1, f1), (r2, f2), pairing, window);
                        st.reads += 2;
                        st.bases += (r1.seq.len() + r2.seq.len()) as u64;
                        st.mapped += (w.mate1 > 0) as u64 + (w.mate2 > 0) as u64;
                        st.alignments += (w.mate1 + w.mate2) as u64;
                        st.pairs += 1;
                        st.proper += u64::from(w.proper);
                        st.summary.pair(w.pairs_found, w.found.0, w.found.1);
                        if writing.status {
                            st.status.push(w.proper);
                        }
                    }
                    Ok((out.finish()?, st))
                })
                .collect::<std::io::Result<_>>()?
        }
    };
    let texts = chunks
        .into_iter()
        .map(|(text, st)| {
            stats.add(&st);
            text
        })
        .collect();
    Ok((texts, stats))
}
