//! What a CIGAR implies against its sequences: score, NM, MD (`describe`),
//! and AS by base quality (`score_with_quality`).

use super::{Op, Scoring};

/// What a CIGAR implies against its sequences.
pub struct Described {
    /// Score (clips not charged).
    pub score: i32,
    /// One past the last reference position.
    pub ref_end: usize,
    /// NM.
    pub nm: u32,
    /// MD:Z.
    pub md: Vec<u8>,
}

/// Walks `cigar` over `read` and `reference` from `ref_start`: its score
/// under `sc`, NM and MD (SAM spec §1.5: matching-run lengths, mismatching
/// reference bases, `^` before deleted bases, runs of 0 between adjacent
/// letters). Panics if the CIGAR does not fit the sequences.
pub fn describe(
    read: &[u8],
    reference: &[u8],
    ref_start: usize,
    cigar: &[(Op, u32)],
    sc: &Scoring,
) -> Described {
    let (mut qi, mut ri) = (0usize, ref_start);
    let (mut score, mut nm, mut run) = (0i32, 0u32, 0u32);
    let mut md = Vec::new();
    let num = |md: &mut Vec<u8>, run: u32| {
        md.extend_from_slice(itoa::Buffer::new().format(run).as_bytes())
    };
    for &(op, n) in cigar {
        match op {
            Op::Soft => qi += n as usize,
            Op::Match => {
                for _ in 0..n {
                    let (a, b) = (read[qi], reference[ri]);
                    score += sc.substitution(a, b);
                    if a == b && a < 4 {
                        run += 1;
                    } else {
                        nm += 1;
                        num(&mut md, run);
                        md.push(b"ACGTN"[b.min(4) as usize]);
                        run = 0;
                    }
                    qi += 1;
                    ri += 1;
                }
            }
            Op::Ins => {
                score -= sc.gap_open + sc.gap_extend * n as i32;
                nm += n;
                qi += n as usize;
            }
            Op::Del => {
                score -= sc.gap_open + sc.gap_extend * n as i32;
                nm += n;
                num(&mut md, run);
                run = 0;
                md.push(b'^');
                for _ in 0..n {
                    md.push(b"ACGTN"[reference[ri].min(4) as usize]);
                    ri += 1;
                }
            }
        }
    }
    num(&mut md, run);
    Described {
        score,
        ref_end: ri,
        nm,
        md,
    }
}

/// The score of `cigar` from `ref_start` with mismatches charged by base
/// quality (`qual`: Phred+33, in `read`'s orientation; see
/// [`Scoring::mismatch_at`]): AS of an end-to-end record.
pub fn score_with_quality(
    read: &[u8],
    qual: &[u8],
    reference: &[u8],
    ref_start: usize,
    cigar: &[(Op, u32)],
    sc: &Scoring,
) -> i32 {
    let (mut qi, mut ri, mut score) = (0usize, ref_start, 0i32);
    for &(op, n) in cigar {
        let n = n as usize;
        match op {
            Op::Soft => qi += n,
            Op::Match => {
                for _ in 0..n {
                    let (a, b) = (read[qi], reference[ri]);
                    score += if a > 3 || b > 3 {
                        -sc.n
                    } else if a == b {
                        sc.matched
                    } else {
                        -sc.mismatch_at(qual[qi].saturating_sub(33))
                    };
                    qi += 1;
                    ri += 1;
                }
            }
            Op::Ins => {
                score -= sc.gap_open + sc.gap_extend * n as i32;
                qi += n;
            }
            Op::Del => {
                score -= sc.gap_open + sc.gap_extend * n as i32;
                ri += n;
            }
        }
    }
    score
}
