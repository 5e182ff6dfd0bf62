//! Choosing among a read's hits: the primary (a hash of the name among
//! equals), MAPQ, the records shown (`-k`, `-a`, `--strata`), pairs.

use crate::pair::{Orientation, Window, fragment_of};
use crate::read::{Hit, ReadView};
use crate::sam::MAPQ_UNIQUE;

use super::*;

/// FNV-1a of the read name: picks the primary among equal hits, the same
/// way on every run and every machine.
pub(super) fn name_hash(name: &[u8]) -> u64 {
    crate::fnv1a(name)
}

/// Mapping quality from the hit counts of the best stratum (`c1`) and the
/// next one (`c2`), the best hit's mismatches and the budget `k`: bwa aln's
/// approximation (`bwa_approx_mapQ`): 0 for a repeat, 25 for a unique hit
/// that used the whole budget (k > 0), 37 for a unique hit with nothing in
/// the next stratum, else `23 - 4.343 ln c2` (at least 0).
pub fn mapq(c1: u64, c2: u64, best_nm: u8, k: u8) -> u8 {
    if c1 != 1 {
        0
    } else if k > 0 && best_nm == k {
        25
    } else if c2 == 0 {
        MAPQ_UNIQUE
    } else {
        let penalty = (4.343 * (c2.min(255) as f64).ln() + 0.5) as i64;
        (23 - penalty).max(0) as u8
    }
}

/// A read's hits as reported (best stratum only under `--strata`), its
/// single-end primary and the counts behind MAPQ.
pub(super) struct Shown<'a> {
    pub(super) hits: &'a [Hit],
    pub(super) primary: usize,
    pub(super) c1: u64,
    pub(super) c2: u64,
    /// XA may list the others.
    pub(super) xa_ok: bool,
}

pub(super) fn shown<'a>(
    read: &ReadView<'_>,
    found: &'a ReadHits,
    cfg: &MapConfig,
) -> Option<Shown<'a>> {
    match found {
        ReadHits::All(hits) if !hits.is_empty() => {
            let c1 = hits.iter().take_while(|h| h.nm == hits[0].nm).count();
            let c2 = hits[c1..]
                .iter()
                .take_while(|h| h.nm == hits[c1].nm)
                .count();
            let primary = (name_hash(read.name) % c1 as u64) as usize;
            let shown = if cfg.strata { c1 } else { hits.len() };
            Some(Shown {
                hits: &hits[..shown],
                primary,
                c1: c1 as u64,
                c2: c2 as u64,
                xa_ok: hits.len() <= cfg.max_xa,
            })
        }
        ReadHits::Sampled { hits, best, next } if !hits.is_empty() => {
            let shown = if cfg.strata {
                hits.iter().take_while(|h| h.nm == hits[0].nm).count()
            } else {
                hits.len()
            };
            Some(Shown {
                hits: &hits[..shown],
                primary: 0,
                c1: *best,
                c2: *next,
                xa_ok: false,
            })
        }
        _ => None,
    }
}

/// How the records of one mate of a pair refer to the other.
pub(super) struct PairCtx<'a> {
    /// Bits every record of this mate carries: 0x1, 0x8, 0x20, 0x40/0x80
    /// (0x2 is per record: [`PairCtx::flag_at`]).
    pub(super) flag: u16,
    /// The pairing found a proper pair (this mate's primary is in it).
    pub(super) proper: bool,
    /// Mate 1.
    pub(super) first: bool,
    /// The primary the pairing chose (an index into the shown hits).
    pub(super) primary: usize,
    /// MAPQ of the primary record.
    pub(super) mapq: u8,
    /// The other mate's primary hit and length, when it is mapped.
    pub(super) mate: Option<(&'a Hit, u64)>,
    /// What a proper pair is: orientation and fragment window.
    pub(super) rule: (Orientation, Window),
}

impl<'a> PairCtx<'a> {
    /// Mate 1 (`first`) or 2 of a pair, `proper` or not, with its primary
    /// (`own`, when mapped) and MAPQ; its mate's primary hit and length;
    /// the orientation and window of a proper pair.
    pub(super) fn new(
        first: bool,
        proper: bool,
        own: Option<usize>,
        mapq: u8,
        mate: Option<(&'a Hit, u64)>,
        rule: (Orientation, Window),
    ) -> Self {
        let flag = 0x1
            | if first { 0x40 } else { 0x80 }
            | match mate {
                None => 0x8,
                Some((h, _)) if h.rev => 0x20,
                Some(_) => 0,
            };
        PairCtx {
            flag,
            proper,
            first,
            primary: own.unwrap_or(0),
            mapq,
            mate,
            rule,
        }
    }

    /// FLAG's pair bits of this mate's record at `h` (length `len`): 0x2
    /// on the primary of a proper pair, and on a secondary only when it and
    /// the mate's primary would themselves be a proper pair (as bowtie2
    /// marks its concordant secondaries), so a secondary in a repeat copy
    /// far from the mate is not called proper.
    pub(super) fn flag_at(&self, h: &Hit, len: u64, secondary: bool) -> u16 {
        let (o, w) = self.rule;
        let fits = || {
            self.mate
                .is_some_and(|(m, mlen)| w.fits(fragment_of(self.first, h, len, m, mlen, o)))
        };
        let proper = self.proper && (!secondary || fits());
        self.flag | if proper { 0x2 } else { 0 }
    }
}
