//! Mismatch-tolerant search (`fmalign map -v K`, bowtie's `-v` semantics):
//! every occurrence of a read in the text with at most `K` substitutions,
//! found with a bidirectional FM-index and search schemes.
//!
//! The index holds the FM-index of the text `T` and of its reverse `T^R`
//! (SPEC.md §6.9). A pattern `P` has an interval in each: the rows of the
//! suffixes of `T` that start with `P`, and those of `T^R` that start with
//! `P^R`; both have one row per occurrence. Extending `P` to the left is a
//! backward-search step in `T`'s index; extending it to the right is one in
//! `T^R`'s. Each step also moves the other interval: its rows are ordered by
//! the symbol on the far side, so the new start is the old one plus the
//! occurrences preceded (or followed) by a smaller symbol, plus one if an
//! occurrence touches the end of the text, whose "symbol" is `$`
//! (Lam et al. 2009, "High throughput short read alignment via
//! bi-directional BWT").
//!
//! A read of `m` bases is cut into `K + 1` parts; with at most `K`
//! mismatches, at least one part matches exactly (pigeonhole). Search `i`
//! matches part `i` exactly first, where the interval is widest and
//! branching would cost most, then extends right to the last part and left
//! to the first, trying every base at every position, with at most `K`
//! mismatches in all and at least one in each part left of `i`. So every
//! alignment is found by exactly one search: the one of its leftmost exact
//! part (Kucherov, Salikhov & Tsur 2016 call such sets of searches "search
//! schemes"). docs/ALGORITHMS.md compares this with backtracking on the
//! forward index alone.
//!
//! The files: [`schemes`] (the search schemes), [`verify`] (seed and
//! verify, [`SeedEngine`]), [`backtrack`] (the tests' reference).

use crate::fm::{EMPTY, FmIndex, Interval, RankIndex};

mod backtrack;
mod schemes;
#[cfg(test)]
mod tests;
mod verify;

use schemes::Direction;

pub use backtrack::backtrack;
pub use schemes::{order, part, scheme, scheme_found, schemes_many, search};
pub use verify::{
    OnCpu, SeedEngine, Verified, exact_many, hamming, search_verify, search_verify_many,
    search_verify_with,
};

/// The largest `-v` accepted.
pub const MAX_MISMATCHES: u8 = 3;

/// The two FM-indexes of bidirectional search.
#[derive(Clone, Copy, Debug)]
pub struct BiIndex<'a> {
    /// Index of the text.
    pub fwd: FmIndex<'a>,
    /// Rank tables of the reversed text (no sampled SA: nothing is located
    /// in it).
    pub rev: RankIndex<'a>,
}

/// A pattern's rows in both indexes (the same count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BiInterval {
    /// Rows in the text's index.
    pub fwd: Interval,
    /// First row in the reversed text's index.
    pub rev_lo: u64,
}

impl BiInterval {
    /// Rows (occurrences).
    pub(crate) fn len(&self) -> u64 {
        self.fwd.len()
    }
}

/// One alignment found: its rows in the text's index and its mismatches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Found {
    /// Rows (one per occurrence).
    pub rows: Interval,
    /// Substitutions against the read.
    pub mismatches: u8,
}

impl<'a> BiIndex<'a> {
    /// The empty pattern.
    pub fn full(&self) -> BiInterval {
        BiInterval {
            fwd: self.fwd.full(),
            rev_lo: 0,
        }
    }

    /// The four left extensions `cP` of `iv`'s pattern.
    #[inline(always)]
    pub(crate) fn extend_left(&self, iv: BiInterval) -> [BiInterval; 4] {
        step(&self.fwd, iv.fwd, iv.rev_lo, |fwd, rev_lo| BiInterval {
            fwd,
            rev_lo,
        })
    }

    /// The four extensions of `iv`'s pattern on one side.
    #[inline(always)]
    fn extend(&self, iv: BiInterval, dir: Direction) -> [BiInterval; 4] {
        match dir {
            Direction::Left => self.extend_left(iv),
            Direction::Right => self.extend_right(iv),
        }
    }

    /// The four right extensions `Pc` of `iv`'s pattern.
    #[inline(always)]
    pub(crate) fn extend_right(&self, iv: BiInterval) -> [BiInterval; 4] {
        let r = Interval {
            lo: iv.rev_lo,
            hi: iv.rev_lo + iv.len(),
        };
        step(&self.rev, r, iv.fwd.lo, |rev, fwd_lo| BiInterval {
            fwd: Interval {
                lo: fwd_lo,
                hi: fwd_lo + rev.len(),
            },
            rev_lo: rev.lo,
        })
    }
}

/// One bidirectional step in `fm` (the index being extended) from rows `iv`,
/// with `other_lo` the start of the other index's interval: for each symbol
/// `c`, `make(new rows in fm, new start in the other index)`.
#[inline(always)]
pub(super) fn step(
    fm: &RankIndex<'_>,
    iv: Interval,
    other_lo: u64,
    make: impl Fn(Interval, u64) -> BiInterval,
) -> [BiInterval; 4] {
    let lo = fm.rank4(iv.lo);
    let hi = fm.rank4(iv.hi);
    // The occurrence at the end of the text (BWT symbol `$`) sorts first.
    let mut start = other_lo + u64::from(iv.lo <= fm.primary && fm.primary < iv.hi);
    let mut out = [BiInterval {
        fwd: EMPTY,
        rev_lo: 0,
    }; 4];
    for c in 0..4 {
        let rows = Interval {
            lo: fm.c[c] + lo[c],
            hi: fm.c[c] + hi[c],
        };
        out[c] = make(rows, start);
        start += hi[c] - lo[c];
    }
    out
}
