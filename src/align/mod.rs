//! Affine-gap alignment of a read against a reference window (the extension
//! step of `--end-to-end` and `--local`), by block-aligner's SIMD dynamic
//! programming, and what a SAM record needs of the result: CIGAR, NM, MD.
//!
//! A gap of length `L` costs `gap_open + gap_extend * L` (bwa's and
//! bowtie2's convention). Two scoring schemes, each its peer's default:
//!
//! | mode | match | mismatch | gap open + extend | N | minimum score |
//! |---|---:|---:|---:|---:|---|
//! | `--end-to-end` (bowtie2) | 0 | −6 (AS: −2 to −6 by base quality) | −5 − 3L | −1 | −0.6 − 0.6 × read length |
//! | `--local` (bwa mem) | 1 | −4 | −6 − 1L | −1 | 30 |
//!
//! block-aligner keeps only maxima above 0, and end-to-end scores are at
//! most 0, so its dynamic program adds 1 per aligned base ([`Scoring::bonus`]):
//! the same ranking except that an inserted base costs 1 more than in
//! bowtie2. AS is the bowtie2 score of the CIGAR found.
//!
//! End-to-end aligns the whole read and lets the reference window overhang at
//! both ends for free (block-aligner's free query-start and query-end gaps,
//! the read being its query): a semi-global alignment. Local aligns any
//! part of the read (Smith-Waterman); a clipped end then pays
//! [`Scoring::clip`] (bwa's 5): when the whole read aligned end-to-end under
//! the same scores is within the clip penalty of the local score, the whole
//! read is reported. Both fill the whole matrix (one block of at least the
//! window's and the read's length), so the score is the optimum a plain
//! dynamic program finds (the tests check this against one).

mod bound;
mod describe;
mod extend;
#[cfg(test)]
mod tests;
mod ungapped;

pub use bound::{end_to_end_bound, local_score_bound};
pub use describe::{Described, describe, score_with_quality};
pub use extend::{extend, extend_scored, local_score};
pub use ungapped::{Ungapped, diagonal_score, ungapped};

use block_aligner::scores::{Gaps, Matrix, NucMatrix};

/// Alignment mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The whole read (bowtie2's default mode).
    EndToEnd,
    /// Ends may be soft-clipped (bwa mem, bowtie2 --local).
    Local,
}

/// Scores of one mode (penalties are positive numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scoring {
    /// Added per matching base.
    pub matched: i32,
    /// Subtracted per mismatching base.
    pub mismatch: i32,
    /// Subtracted once per gap.
    pub gap_open: i32,
    /// Subtracted per gap base.
    pub gap_extend: i32,
    /// Subtracted for an N in the read or the reference.
    pub n: i32,
    /// Subtracted per clipped end (local mode).
    pub clip: i32,
    /// Added per aligned base in the dynamic program only (see
    /// [`Mode::EndToEnd`]'s note in the module docs).
    pub bonus: i32,
    /// AS charges a mismatch by its base quality (bowtie2's
    /// [`Scoring::mismatch_at`]).
    pub quality_aware: bool,
}

impl Scoring {
    /// The scores of `mode` (the table in the module docs).
    pub fn of(mode: Mode) -> Scoring {
        match mode {
            Mode::EndToEnd => Scoring {
                matched: 0,
                mismatch: 6,
                gap_open: 5,
                gap_extend: 3,
                n: 1,
                clip: 0,
                bonus: 1,
                quality_aware: true,
            },
            Mode::Local => Scoring {
                matched: 1,
                mismatch: 4,
                gap_open: 6,
                gap_extend: 1,
                n: 1,
                clip: 5,
                bonus: 0,
                quality_aware: false,
            },
        }
    }

    /// The least score a reported alignment of a read of `len` bases has.
    pub fn min_score(mode: Mode, len: usize) -> i32 {
        match mode {
            Mode::EndToEnd => (-0.6 - 0.6 * len as f64).ceil() as i32,
            Mode::Local => 30,
        }
    }

    /// The score of a perfect match of `len` bases.
    pub fn perfect(&self, len: usize) -> i32 {
        self.matched * len as i32
    }

    /// Substitution score of read code `a` against reference code `b`
    /// (codes 0..=3, 4 for N).
    pub fn substitution(&self, a: u8, b: u8) -> i32 {
        if a > 3 || b > 3 {
            -self.n
        } else if a == b {
            self.matched
        } else {
            -self.mismatch
        }
    }

    /// The penalty of a mismatch at Phred quality `q`: bowtie2's
    /// `MN + ⌊(MX − MN) · min(q, 40) / 40⌋` with MX the mismatch penalty and
    /// MN 2 when quality-aware, else the mismatch penalty.
    pub fn mismatch_at(&self, q: u8) -> i32 {
        if self.quality_aware {
            2 + (self.mismatch - 2) * i32::from(q.min(40)) / 40
        } else {
            self.mismatch
        }
    }

    /// The dynamic program's substitution score: with the bonus.
    pub fn dp_substitution(&self, a: u8, b: u8) -> i32 {
        self.substitution(a, b) + self.bonus
    }

    fn matrix(&self) -> NucMatrix {
        let mut m = NucMatrix::new();
        for (i, &a) in b"ACGTN".iter().enumerate() {
            for (j, &b) in b"ACGTN".iter().enumerate() {
                m.set(a, b, self.dp_substitution(i as u8, j as u8) as i8);
            }
        }
        m
    }

    fn gaps(&self) -> Gaps {
        Gaps {
            open: -(self.gap_open + self.gap_extend) as i8,
            extend: -self.gap_extend as i8,
        }
    }
}

/// One CIGAR operation as SAM writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Aligned base, match or mismatch (`M`).
    Match,
    /// Insertion into the reference (`I`).
    Ins,
    /// Deletion from the reference (`D`).
    Del,
    /// Soft clip (`S`).
    Soft,
}

impl Op {
    /// The SAM letter.
    pub fn letter(self) -> u8 {
        match self {
            Op::Match => b'M',
            Op::Ins => b'I',
            Op::Del => b'D',
            Op::Soft => b'S',
        }
    }

    /// Consumes read bases.
    pub fn reads(self) -> bool {
        matches!(self, Op::Match | Op::Ins | Op::Soft)
    }

    /// Consumes reference bases.
    pub fn refs(self) -> bool {
        matches!(self, Op::Match | Op::Del)
    }
}

/// A read aligned to a reference window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extended {
    /// Alignment score.
    pub score: i32,
    /// First window position aligned.
    pub ref_start: usize,
    /// One past the last window position aligned.
    pub ref_end: usize,
    /// CIGAR, soft clips included (it spans the whole read).
    pub cigar: Vec<(Op, u32)>,
    /// Edit distance to the reference (NM): mismatches (an N counts),
    /// inserted and deleted bases.
    pub nm: u32,
    /// MD:Z.
    pub md: Vec<u8>,
}

/// Read bases soft-clipped at the start and at the end of `cigar`.
pub fn clips(cigar: &[(Op, u32)]) -> (u32, u32) {
    let start = match cigar.first() {
        Some(&(Op::Soft, n)) => n,
        _ => 0,
    };
    let end = match cigar.last() {
        Some(&(Op::Soft, n)) if cigar.len() > 1 => n,
        _ => 0,
    };
    (start, end)
}

/// The reference bases a CIGAR covers.
pub fn ref_span(cigar: &[(Op, u32)]) -> u64 {
    cigar
        .iter()
        .filter(|o| o.0.refs())
        .map(|o| u64::from(o.1))
        .sum()
}

/// The SIMD instructions block-aligner was built for are present (checked
/// once before any gapped alignment: without them it would fault).
pub fn cpu_supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        true
    }
}
