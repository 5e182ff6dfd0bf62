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

use block_aligner::cigar::{Cigar, Operation};
use block_aligner::scan_block::{AlignResult, Block, PaddedBytes};
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

/// Read codes (0..=3, 4 for anything else) as block-aligner's letters.
fn letters(codes: &[u8]) -> Vec<u8> {
    codes.iter().map(|&c| b"ACGTN"[c.min(4) as usize]).collect()
}

/// The largest block: block-aligner's trace memory grows with it (and it
/// refuses 2^16), so long windows (mate rescue with a large `-X`) are
/// covered by moving blocks instead.
const MAX_BLOCK: usize = 1024;

/// The smallest power of two above `n`, at least 32, at most [`MAX_BLOCK`].
fn block_size(n: usize) -> usize {
    (n + 1).next_power_of_two().clamp(32, MAX_BLOCK)
}

/// The block size for `read` against `window`, and both as block-aligner's
/// padded sequences.
fn padded(read: &[u8], window: &[u8]) -> (usize, PaddedBytes, PaddedBytes) {
    let size = block_size(window.len().max(read.len()));
    let q = PaddedBytes::from_bytes::<NucMatrix>(&letters(read), size);
    let r = PaddedBytes::from_bytes::<NucMatrix>(&letters(window), size);
    (size, q, r)
}

/// Smallest block block-aligner starts with (it grows blocks up to the
/// whole matrix where scores call for it).
const MIN_BLOCK: usize = 64;

/// A block-aligner instance kept for reuse (its buffers are sized by the
/// longest sequences seen; allocating them per alignment cost more than
/// aligning).
struct Kept<B> {
    query: usize,
    reference: usize,
    size: usize,
    block: B,
}

thread_local! {
    static LOCAL: std::cell::RefCell<Option<Kept<Block<true, true, true>>>> = const { std::cell::RefCell::new(None) };
    static ANCHORED: std::cell::RefCell<Option<Kept<Block<true, false, false, true, false>>>> = const { std::cell::RefCell::new(None) };
    static SCORE: std::cell::RefCell<Option<Kept<Block<false, true, true>>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with a kept block of at least these bounds from `cell`.
fn with_block<B, R>(
    cell: &'static std::thread::LocalKey<std::cell::RefCell<Option<Kept<B>>>>,
    query: usize,
    reference: usize,
    size: usize,
    make: fn(usize, usize, usize) -> B,
    f: impl FnOnce(&mut B) -> R,
) -> R {
    cell.with(|c| {
        let mut c = c.borrow_mut();
        let fits = c
            .as_ref()
            .is_some_and(|k| k.query >= query && k.reference >= reference && k.size >= size);
        if !fits {
            let (q, r, s) = c
                .as_ref()
                .map_or((0, 0, 0), |k| (k.query, k.reference, k.size));
            let (q, r, s) = (q.max(query), r.max(reference), s.max(size));
            *c = Some(Kept {
                query: q,
                reference: r,
                size: s,
                block: make(q, r, s),
            });
        }
        f(&mut c.as_mut().expect("set above").block)
    })
}

/// Aligns read codes `read` to window codes `window` (0..=3, 4 for N) in
/// `mode`. `None` when nothing aligns (an empty read or window, or no local
/// alignment with a positive score).
pub fn extend(read: &[u8], window: &[u8], mode: Mode) -> Option<Extended> {
    extend_scored(read, window, mode).1
}

/// [`local_score`] and [`extend`] of `read` in `window` from one dynamic
/// program: [`extend`]'s Smith-Waterman (with traceback) is the one
/// [`local_score`] runs without, and its best score is that score. For a
/// candidate whose score is wanted and that is then likely extended.
pub fn extend_scored(read: &[u8], window: &[u8], mode: Mode) -> (i32, Option<Extended>) {
    if read.is_empty() || window.is_empty() {
        return (0, None);
    }
    let sc = Scoring::of(mode);
    let (best, core) = local_core(read, window, &sc);
    let Some(core) = core else {
        return (best, None);
    };
    let e = match mode {
        Mode::EndToEnd => whole_read(read, window, &core, &sc),
        Mode::Local => {
            // One Smith-Waterman for both: the local alignment and the
            // whole read built on it.
            let local = smith_waterman(read, window, &core, &sc);
            let clipped = local.clipped_ends();
            if clipped == 0 {
                local
            } else {
                let whole = whole_read(read, window, &core, &sc);
                if whole.score >= local.score - sc.clip * clipped {
                    whole
                } else {
                    local
                }
            }
        }
    };
    (best, Some(e))
}

impl Extended {
    /// Ends that are soft-clipped (0, 1 or 2).
    pub fn clipped_ends(&self) -> i32 {
        let f = self.cigar.first().is_some_and(|o| o.0 == Op::Soft);
        let l = self.cigar.last().is_some_and(|o| o.0 == Op::Soft);
        i32::from(f) + i32::from(l)
    }
}

/// The whole read against any part of the window (a semi-global
/// alignment, end-to-end's [`extend`]) given its best local alignment
/// `core` ([`local_core`]): that alignment's clipped read ends aligned
/// whole, each against the window beyond it, with the window's far end
/// free (block-aligner's free query-start gaps; its free query-end gaps
/// give wrong results, see the tests). There is none when nothing scores
/// above 0 in the dynamic program (block-aligner keeps only positive
/// maxima).
fn whole_read(read: &[u8], window: &[u8], core: &Core, sc: &Scoring) -> Extended {
    let (qs, qe, rs, re) = (core.qs, core.qe, core.rs, core.re);
    let mut ops = Vec::new();
    let mut ref_start = rs;
    if qs > 0 {
        let (left, used) = anchored_end(&read[..qs], &window[..rs], sc);
        ref_start = rs - used;
        for (op, n) in left {
            push_op(&mut ops, op, n);
        }
    }
    for &(op, n) in &core.ops {
        push_op(&mut ops, op, n);
    }
    if qe < read.len() {
        let rq: Vec<u8> = read[qe..].iter().rev().copied().collect();
        let rw: Vec<u8> = window[re..].iter().rev().copied().collect();
        let (right, _) = anchored_end(&rq, &rw, sc);
        for &(op, n) in right.iter().rev() {
            push_op(&mut ops, op, n);
        }
    }
    finish(read, window, ref_start, ops, sc)
}

/// `read` aligned whole so that it ends where `window` ends, starting
/// anywhere in it: the operations and the window bases they cover.
fn anchored_end(read: &[u8], window: &[u8], sc: &Scoring) -> (Vec<(Op, u32)>, usize) {
    if window.is_empty() {
        return (vec![(Op::Ins, read.len() as u32)], 0);
    }
    let (size, q, r) = padded(read, window);
    let mut cigar = Cigar::new(read.len(), window.len());
    with_block(&ANCHORED, read.len(), window.len(), size, Block::new, |a| {
        a.align(
            &q,
            &r,
            &sc.matrix(),
            sc.gaps(),
            MIN_BLOCK.min(size)..=size,
            0,
        );
        a.trace().cigar(read.len(), window.len(), &mut cigar);
    });
    let mut ops = ops_of(&cigar);
    // The free part of the window before the read may come back as a
    // deletion.
    while ops.first().is_some_and(|o| o.0 == Op::Del) {
        ops.remove(0);
    }
    let used = ref_span(&ops) as usize;
    (ops, used)
}

/// block-aligner's CIGAR as ours (`=`/`X` merged into `M`).
fn ops_of(cigar: &Cigar) -> Vec<(Op, u32)> {
    let mut ops = Vec::new();
    for k in 0..cigar.len() {
        let o = cigar.get(k);
        let op = match o.op {
            Operation::M | Operation::Eq | Operation::X => Op::Match,
            Operation::I => Op::Ins,
            Operation::D => Op::Del,
            _ => continue,
        };
        push_op(&mut ops, op, o.len as u32);
    }
    ops
}

/// The best local alignment score of `read` in `window` under `mode`'s
/// dynamic-program scores (no traceback: cheaper). It bounds what
/// [`extend`] finds from above (local: the clip penalty only lowers it;
/// end-to-end: the semi-global alignment is one of the local ones), so
/// candidates can be ranked by it before any is extended in full.
pub fn local_score(read: &[u8], window: &[u8], mode: Mode) -> i32 {
    if read.is_empty() || window.is_empty() {
        return 0;
    }
    let sc = Scoring::of(mode);
    let (size, q, r) = padded(read, window);
    with_block(&SCORE, read.len(), window.len(), size, Block::new, |a| {
        a.align(
            &q,
            &r,
            &sc.matrix(),
            sc.gaps(),
            MIN_BLOCK.min(size)..=size,
            i32::MAX / 4,
        );
        a.res().score
    })
}

/// An upper bound of [`local_score`] (the best local score of `read` in
/// `window` under `mode`'s dynamic program), cheaper than it: a relaxed
/// dynamic program over every diagonal of the window in which a path may
/// also leave any diagonal at any row for any other at a later (or the
/// same) row for one gap's least cost (open + extend), the read bases in
/// between scoring 0. Every alignment is such a path (a gap of `L` costs at
/// least that, and inserted bases score 0), so the result bounds the
/// optimum from above. `None` for reads with an N or over 250 bases (its
/// cells are saturating bytes), or windows with an N.
///
/// With `decide`, it stops as soon as the bound is known to be below it or
/// not (then a looser bound: the best cell so far plus a match per row
/// still to come, since no cell gains more per row).
pub fn local_score_bound(
    read: &[u8],
    window: &[u8],
    mode: Mode,
    decide: Option<i32>,
) -> Option<i32> {
    let m = read.len();
    if m == 0 || window.is_empty() {
        return Some(0);
    }
    if m > 250 {
        // Cells are saturating bytes: no bound (the caller scores exactly).
        return None;
    }
    if window.iter().fold(0u8, |x, &c| x | c) > 3 || read.iter().fold(0u8, |x, &c| x | c) > 3 {
        return None;
    }
    let sc = Scoring::of(mode);
    let hit = (sc.matched + sc.bonus) as u8;
    let miss = (sc.mismatch - sc.bonus) as u8;
    let hop = (sc.gap_open + sc.gap_extend) as u8;
    // The window padded to whole vectors with a code no read base has: a
    // padded cell only mismatches, and its lane runs on into padding only
    // (a lane's window position grows with the row), so no real cell reads
    // one, and none exceeds the best cell before it (see `bound_rows`).
    let w = window.len().next_multiple_of(BOUND_VECTOR);
    let mut padded = vec![PAD_CODE; w];
    padded[..window.len()].copy_from_slice(window);
    let costs = BoundCosts { hit, miss, hop };
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked just above).
        return Some(unsafe { bound_rows_avx2(read, &padded, costs, decide) });
    }
    Some(bound_rows(read, &padded, costs, decide))
}

/// Lanes of [`local_score_bound`]'s rows are padded to a multiple of this
/// (an AVX2 vector of bytes).
const BOUND_VECTOR: usize = 32;

/// The code of [`local_score_bound`]'s padding (no read base has it).
const PAD_CODE: u8 = 0xff;

/// [`local_score_bound`]'s scores as its byte cells take them.
#[derive(Clone, Copy)]
struct BoundCosts {
    hit: u8,
    miss: u8,
    hop: u8,
}

/// [`bound_rows`] in AVX2 vectors of 32 cells (`window`'s length is a
/// multiple of [`BOUND_VECTOR`]): the same operations on the same cells.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn bound_rows_avx2(read: &[u8], window: &[u8], c: BoundCosts, decide: Option<i32>) -> i32 {
    use std::arch::x86_64::*;
    let BoundCosts { hit, miss, hop } = c;
    let (m, w) = (read.len(), window.len());
    assert!(m > 0 && w.is_multiple_of(BOUND_VECTOR));
    let mut v = vec![0u8; w + m - 1];
    let hits = _mm256_set1_epi8(hit as i8);
    let misses = _mm256_set1_epi8(miss as i8);
    let (mut top, mut from) = (0u8, 0u8);
    for (i, &a) in read.iter().enumerate() {
        let lane = m - 1 - i;
        let row = &mut v[lane..lane + w];
        let base = _mm256_set1_epi8(a as i8);
        let floor = _mm256_set1_epi8(from as i8);
        let mut best = _mm256_setzero_si256();
        for (x, b) in row
            .chunks_exact_mut(BOUND_VECTOR)
            .zip(window.chunks_exact(BOUND_VECTOR))
        {
            // SAFETY: both chunks are 32 bytes (unaligned loads and store).
            unsafe {
                let y = _mm256_max_epu8(_mm256_loadu_si256(x.as_ptr().cast()), floor);
                let eq = _mm256_cmpeq_epi8(_mm256_loadu_si256(b.as_ptr().cast()), base);
                let z =
                    _mm256_blendv_epi8(_mm256_subs_epu8(y, misses), _mm256_adds_epu8(y, hits), eq);
                _mm256_storeu_si256(x.as_mut_ptr().cast(), z);
                best = _mm256_max_epu8(best, z);
            }
        }
        let mut h = _mm_max_epu8(
            _mm256_castsi256_si128(best),
            _mm256_extracti128_si256::<1>(best),
        );
        h = _mm_max_epu8(h, _mm_srli_si128::<8>(h));
        h = _mm_max_epu8(h, _mm_srli_si128::<4>(h));
        h = _mm_max_epu8(h, _mm_srli_si128::<2>(h));
        h = _mm_max_epu8(h, _mm_srli_si128::<1>(h));
        let best = _mm_cvtsi128_si32(h) as u8;
        top = top.max(best);
        from = top.saturating_sub(hop);
        if let Some(t) = decide {
            let most = i32::from(top) + i32::from(hit) * (m - 1 - i) as i32;
            if i32::from(top) >= t || most < t {
                return most;
            }
        }
    }
    i32::from(top)
}

/// [`local_score_bound`]'s relaxed dynamic program over `window` (padded:
/// a padded cell only mismatches, so it is never above the best cell of an
/// earlier row or 0, and the result is the unpadded window's).
#[inline(always)]
fn bound_rows(read: &[u8], window: &[u8], c: BoundCosts, decide: Option<i32>) -> i32 {
    let BoundCosts { hit, miss, hop } = c;
    let m = read.len();
    // Diagonal o (window position minus read position) from 1 − m to
    // W − 1: lane o + m − 1. Row i has cells on the W lanes from m − 1 − i
    // (the window's bases in order). A lane's value before its first cell
    // is 0, and max(0, hop) is what a lane entering the window gets in any
    // case; after its last cell it cannot raise the maximum.
    let w = window.len();
    let mut v = vec![0u8; w + m - 1];
    // The best value of any cell so far, and minus a hop.
    let (mut top, mut from) = (0u8, 0u8);
    for (i, &a) in read.iter().enumerate() {
        let lane = m - 1 - i;
        let mut best = 0u8;
        for (x, &b) in v[lane..lane + w].iter_mut().zip(window) {
            let y = (*x).max(from);
            *x = if a == b {
                y.saturating_add(hit)
            } else {
                y.saturating_sub(miss)
            };
            best = best.max(*x);
        }
        top = top.max(best);
        from = top.saturating_sub(hop);
        if let Some(t) = decide {
            let most = i32::from(top) + i32::from(hit) * (m - 1 - i) as i32;
            if i32::from(top) >= t || most < t {
                return most;
            }
        }
    }
    i32::from(top)
}

/// An upper bound of the AS of every end-to-end alignment of `read` in
/// `window` (the whole read aligned, the window overhanging for free),
/// where a mismatch at read base `i` costs `penalties[i]` (what AS charges
/// there: by base quality, [`Scoring::mismatch_at`]) and a gap of `L`
/// `gap_open + gap_extend × L`, cheaper than any alignment: a relaxed
/// dynamic program of costs (minus AS) over every diagonal of the window in
/// which a path may also leave its diagonal after any row for any other at
/// a later row for a gap's least cost, `gap_open + gap_extend` × (the rows
/// it skips, at least 1): every alignment is such a path (an insertion of
/// `L` skips `L` rows, a deletion none, each costing at least that), so the
/// result bounds the best AS from above. Rows may also start with their
/// first bases skipped, or end with their last ones skipped, at that cost
/// (leading and trailing insertions). `None` for reads or windows with an
/// N.
///
/// With `floor`, it stops as soon as every path is known to score below
/// it (then a looser bound, still below `floor`): costs only grow along a
/// path, so the least cost of a row's cells and of the paths in a gap
/// across it bounds every path's from below. Costs are saturating bytes:
/// a `floor` below −254 gives `None`.
pub fn end_to_end_bound(
    read: &[u8],
    penalties: &[u8],
    window: &[u8],
    floor: Option<i32>,
) -> Option<i32> {
    let m = read.len();
    assert_eq!(penalties.len(), m, "a penalty per read base");
    if m == 0 || window.is_empty() || floor.is_some_and(|f| f < -254) {
        return None;
    }
    if window.iter().fold(0u8, |x, &c| x | c) > 3 || read.iter().fold(0u8, |x, &c| x | c) > 3 {
        return None;
    }
    // Padded to whole vectors: a padded cell is a mismatch, a path the
    // relaxation may take besides the real ones (it only lowers costs).
    let w = window.len().next_multiple_of(BOUND_VECTOR);
    let mut padded = vec![PAD_CODE; w];
    padded[..window.len()].copy_from_slice(window);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked just above).
        return Some(unsafe { cost_rows_avx2(read, penalties, &padded, floor) });
    }
    Some(cost_rows(read, penalties, &padded, floor))
}

/// [`cost_rows`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn cost_rows_avx2(read: &[u8], penalties: &[u8], window: &[u8], floor: Option<i32>) -> i32 {
    cost_rows(read, penalties, window, floor)
}

/// [`end_to_end_bound`]'s program over the padded `window`.
#[inline(always)]
fn cost_rows(read: &[u8], penalties: &[u8], window: &[u8], floor: Option<i32>) -> i32 {
    let sc = Scoring::of(Mode::EndToEnd);
    let (open, ext) = (sc.gap_open, sc.gap_extend);
    let m = read.len();
    let w = window.len();
    // Lanes as in `bound_rows`; 255: no path (or a cost of 255 or more).
    let mut v = vec![u8::MAX; w + m - 1];
    const NONE: i32 = u8::MAX as i32;
    // The least cost of row i − 1's cells (of a virtual row −1 before the
    // read: 0), and of a gap's start over rows up to i − 2 carried on to
    // row i − 1 (`ext` a row): `min over j ≤ i − 2 of low(j) + ext (i − 1 − j)`.
    let (mut low, mut gap) = (0i32, NONE);
    let limit = floor.map(|f| -f);
    for (i, (&a, &pen)) in read.iter().zip(penalties).enumerate() {
        // A path enters row i from a cell of row i − 1 (a deletion: one
        // gap) or from an earlier row (skipping rows: an insertion).
        let from = if i == 0 {
            0
        } else {
            (low + open + ext).min(gap + open).min(NONE)
        } as u8;
        let lane = m - 1 - i;
        let mut best = u8::MAX;
        for (x, b) in v[lane..lane + w]
            .chunks_exact_mut(BOUND_VECTOR)
            .zip(window.chunks_exact(BOUND_VECTOR))
        {
            for (x, &b) in x.iter_mut().zip(b) {
                let y = (*x).min(from);
                *x = if a == b { y } else { y.saturating_add(pen) };
                best = best.min(*x);
            }
        }
        gap = (gap + ext).min(low + ext).min(NONE);
        low = i32::from(best);
        if let Some(l) = limit {
            // Every path costs at least this from here on.
            let least = low.min(gap + open);
            if least > l {
                return -least;
            }
        }
    }
    // The last row, or a trailing insertion.
    -low.min(gap + open)
}

/// The best local alignment: read `qs..qe` against window `rs..re`.
struct Core {
    qs: usize,
    qe: usize,
    rs: usize,
    re: usize,
    ops: Vec<(Op, u32)>,
}

/// Smith-Waterman by block-aligner (local start, X-drop with no drop): its
/// best score ([`local_score`]'s), and the alignment, `None` when no
/// alignment scores above 0.
fn local_core(read: &[u8], window: &[u8], sc: &Scoring) -> (i32, Option<Core>) {
    let (size, q, r) = padded(read, window);
    let mut cigar = Cigar::new(read.len(), window.len());
    let AlignResult {
        score,
        query_idx,
        reference_idx,
    } = with_block(&LOCAL, read.len(), window.len(), size, Block::new, |a| {
        a.align(
            &q,
            &r,
            &sc.matrix(),
            sc.gaps(),
            MIN_BLOCK.min(size)..=size,
            i32::MAX / 4,
        );
        let res = a.res();
        if res.score > 0 {
            a.trace()
                .cigar(res.query_idx, res.reference_idx, &mut cigar);
        }
        res
    });
    if score <= 0 {
        return (score, None);
    }
    let mut ops = ops_of(&cigar);
    let (mut qs, mut rs) = (query_idx, reference_idx);
    for &(op, n) in &ops {
        if op.reads() {
            qs -= n as usize;
        }
        if op.refs() {
            rs -= n as usize;
        }
    }
    // A local alignment starts and ends on aligned bases.
    while let Some(&(op, n)) = ops.first() {
        if op == Op::Match {
            break;
        }
        if op.reads() {
            qs += n as usize;
        }
        if op.refs() {
            rs += n as usize;
        }
        ops.remove(0);
    }
    let (mut qe, mut re) = (query_idx, reference_idx);
    while let Some(&(op, n)) = ops.last() {
        if op == Op::Match {
            break;
        }
        if op.reads() {
            qe -= n as usize;
        }
        if op.refs() {
            re -= n as usize;
        }
        ops.pop();
    }
    (
        score,
        Some(Core {
            qs,
            qe,
            rs,
            re,
            ops,
        }),
    )
}

/// The best-scoring part of the read against any part of the window, given
/// the local alignment `c` ([`local_core`]).
fn smith_waterman(read: &[u8], window: &[u8], c: &Core, sc: &Scoring) -> Extended {
    let mut all = Vec::with_capacity(c.ops.len() + 2);
    if c.qs > 0 {
        all.push((Op::Soft, c.qs as u32));
    }
    all.extend_from_slice(&c.ops);
    if c.qe < read.len() {
        all.push((Op::Soft, (read.len() - c.qe) as u32));
    }
    finish(read, window, c.rs, all, sc)
}

/// Appends `op` × `n`, merging with the last run.
fn push_op(ops: &mut Vec<(Op, u32)>, op: Op, n: u32) {
    match ops.last_mut() {
        Some(last) if last.0 == op => last.1 += n,
        _ => ops.push((op, n)),
    }
}

/// Scores `cigar` (starting at window position `ref_start`) and derives NM
/// and MD.
fn finish(
    read: &[u8],
    window: &[u8],
    ref_start: usize,
    cigar: Vec<(Op, u32)>,
    sc: &Scoring,
) -> Extended {
    let s = describe(read, window, ref_start, &cigar, sc);
    Extended {
        score: s.score,
        ref_start,
        ref_end: s.ref_end,
        cigar,
        nm: s.nm,
        md: s.md,
    }
}

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

/// What [`ungapped`] proved: the dynamic program's results for a read whose
/// best alignment in its window is ungapped on the anchor's diagonal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ungapped {
    /// [`local_score`]'s value.
    pub best: i32,
    /// [`extend`]'s value.
    pub ext: Extended,
}

/// The widest band of diagonals around the anchor's that [`ungapped`]
/// searches for a gapped alignment that could win (each side).
const UNGAPPED_BAND: usize = 32;

/// The shortest exact run of the read on another diagonal that
/// [`ungapped`] looks for (shorter runs occur by chance in a window).
const UNGAPPED_MIN_RUN: usize = 12;

/// The ungapped shortcut: `read` aligned without gaps along the diagonal on
/// which its base 0 faces `window[offset]`, taken when it is provably what
/// the dynamic program finds, with no dynamic program run: `Some` with
/// [`local_score`]'s and [`extend`]'s values (the same CIGAR, NM and MD),
/// `None` when that cannot be shown cheaply (then run them).
///
/// In the dynamic program's scores (bonus included) let `s(i)` be read base
/// `i`'s score on the diagonal `d`, `δ(i) = match − s(i)` its deficit and
/// `B = Σ δ(i)` the read's (mismatches × (match + mismatch)). Any other
/// path in the window (one that leaves `d` or has a gap) splits into
/// stretches on `d` and *excursions* off it; replacing each excursion by
/// `d`'s own bases gives a path on `d` (its *projection*), and the path
/// scores its projection's score plus each excursion's gain (what the
/// excursion scores minus what `d` scores over the same read bases). This
/// function proves that every excursion's gain is negative, so that every
/// other path scores below a path on `d`; the results then follow from the
/// best segments of `d` alone (below). Three parts:
///
/// 1. An excursion that starts or ends on `d` and reaches a diagonal more
///    than `Δ` from it pays at least `gap_open + gap_extend × (Δ + 1)`
///    and gains at most `B` on the bases it covers; `Δ` is chosen so that
///    this is negative (`Δ = 0`, no band, for reads with one mismatch).
/// 2. The others within `Δ`: a Gotoh dynamic program over the `2Δ + 1`
///    diagonals, scoring each cell relative to `d` (`d`'s cells reset to 0:
///    an excursion starts or ends there; a path may start anywhere after
///    its clipped bases' gain, and end anywhere before the rest's), records
///    the largest gain of any excursion; it must be negative.
/// 3. A path that never touches `d` and scores at least `d`'s whole-read
///    score has a deficit of at most `B`: at most `g` gaps, `q`
///    mismatches and `u` unaligned bases with `g(open + extend) +
///    q(match + mismatch) + u × match ≤ B`, so an exact run of at least
///    `R = min ⌈(m − u − q) / (g + q + 1)⌉` bases on another diagonal.
///    Every such run contains one of the read's `w`-mers sampled every
///    `R − w + 1` bases (`w = min(R, 16)`); none of them may occur in the
///    window off `d`.
///
/// Then the dynamic program's local optimum is `d`'s best segment (its
/// score is [`local_score`]'s), a clipped end aligned whole is `d`'s own
/// bases, and [`extend`] gives: end-to-end, the whole read on `d`; local,
/// the whole read when it is within the clip penalty of every best segment
/// (`whole ≥ best − clip × clipped ends`), else the best segment when it
/// is the only one (ties between segments of `d` with different clips,
/// which block-aligner's choice would settle, give `None`). Reads or
/// windows with an N, diagonals that leave the window and reads with too
/// many mismatches (a band wider than [`UNGAPPED_BAND`], or runs shorter
/// than [`UNGAPPED_MIN_RUN`]) give `None`.
pub fn ungapped(read: &[u8], window: &[u8], offset: usize, mode: Mode) -> Option<Ungapped> {
    let m = read.len();
    if m == 0 || offset + m > window.len() {
        return None;
    }
    let on_d = &window[offset..offset + m];
    // Codes 0..=3; an N (4) sets a bit above them.
    if window.iter().fold(0u8, |x, &c| x | c) > 3 || read.iter().fold(0u8, |x, &c| x | c) > 3 {
        return None;
    }
    let sc = Scoring::of(mode);
    let hit = sc.matched + sc.bonus;
    let miss = sc.mismatch - sc.bonus;
    let (go, ge) = (sc.gap_open, sc.gap_extend);
    let k: i32 = read.iter().zip(on_d).map(|(a, b)| i32::from(a != b)).sum();
    let deficit = k * (hit + miss);
    // Part 1: the band.
    let mut band = 0usize;
    while deficit - go - ge * (band as i32 + 1) >= 0 {
        band += 1;
        if band > UNGAPPED_BAND {
            return None;
        }
    }
    // Prefix sums of the scores on d.
    let mut pre = Vec::with_capacity(m + 1);
    pre.push(0i32);
    let mut acc = 0;
    for (a, b) in read.iter().zip(on_d) {
        acc += if a == b { hit } else { -miss };
        pre.push(acc);
    }
    // The best segments of d.
    let seg = best_segments(&pre);
    if seg.best <= 0 {
        return None;
    }
    // Part 3: exact runs elsewhere, for a path off d scoring as much as
    // d's best segment.
    let run = min_run(m, hit * m as i32 - seg.best, hit, miss, go + ge);
    if run < UNGAPPED_MIN_RUN || runs_elsewhere(read, window, offset, run) {
        return None;
    }
    // Part 2.
    if band > 0 {
        let mism: Vec<usize> = (0..m).filter(|&i| read[i] != on_d[i]).collect();
        if excursion_may_win(read, window, offset, band, &pre, &mism, &sc) {
            return None;
        }
    }
    let whole = vec![(Op::Match, m as u32)];
    let cigar = match mode {
        Mode::EndToEnd => whole,
        Mode::Local => {
            let all = pre[m];
            if all == seg.best || all >= seg.best - sc.clip * seg.clips.0 {
                whole
            } else if seg.count == 1 && all < seg.best - sc.clip * seg.clips.1 {
                let (a, b) = seg.only;
                let mut c = Vec::with_capacity(3);
                if a > 0 {
                    c.push((Op::Soft, a as u32));
                }
                c.push((Op::Match, (b - a) as u32));
                if b < m {
                    c.push((Op::Soft, (m - b) as u32));
                }
                c
            } else {
                return None;
            }
        }
    };
    let start = offset + align_start(&cigar);
    Some(Ungapped {
        best: seg.best,
        ext: finish(read, window, start, cigar, &sc),
    })
}

/// Read bases clipped before the first aligned one.
fn align_start(cigar: &[(Op, u32)]) -> usize {
    clips(cigar).0 as usize
}

/// The least length `R` of the longest exact run of a path of a read of `m`
/// bases with a deficit of at most `deficit` (see [`ungapped`], part 3):
/// over `g` gaps (`gap` each at least), `q` mismatches (`hit + miss` each)
/// and the unaligned bases the rest allows (`hit` each).
fn min_run(m: usize, deficit: i32, hit: i32, miss: i32, gap: i32) -> usize {
    let mut run = usize::MAX;
    let mut g = 0;
    while g * gap <= deficit {
        let mut q = 0;
        while g * gap + q * (hit + miss) <= deficit {
            let u = (deficit - g * gap - q * (hit + miss)) / hit;
            let exact = m.saturating_sub((u + q) as usize);
            run = run.min(exact.div_ceil((g + q + 1) as usize));
            q += 1;
        }
        g += 1;
    }
    run
}

/// Whether some exact run of at least `run` read bases lies on another
/// diagonal of `window` than the one where base 0 faces `offset` (a
/// `w`-mer of the read, sampled every `run − w + 1` bases, occurs there).
fn runs_elsewhere(read: &[u8], window: &[u8], offset: usize, run: usize) -> bool {
    let w = run.min(16);
    if window.len() < w {
        return false;
    }
    let mask = if w == 16 {
        u32::MAX
    } else {
        (1u32 << (2 * w)) - 1
    };
    let mut kmers = Vec::with_capacity(window.len() - w + 1);
    let mut x = 0u32;
    for (j, &c) in window.iter().enumerate() {
        x = ((x << 2) | u32::from(c)) & mask;
        if j + 1 >= w {
            kmers.push(x);
        }
    }
    let step = run - w + 1;
    let mut i = 0;
    while i + w <= read.len() {
        let y = read[i..i + w]
            .iter()
            .fold(0u32, |y, &c| (y << 2) | u32::from(c));
        let home = offset + i;
        let found = kmers.iter().map(|&k| usize::from(k == y)).sum::<usize>();
        let at_home = usize::from(kmers.get(home) == Some(&y));
        if found > at_home {
            return true;
        }
        i += step;
    }
    false
}

/// Whether an excursion from the diagonal `d` where read base 0 faces
/// `window[offset]`, within `band` diagonals of it, may win (see
/// [`ungapped`], part 2; `pre`: `d`'s prefix sums, `mism`: the read bases
/// it mismatches, in order): a Gotoh dynamic program in the read's rows and
/// the band's diagonals, each cell scored relative to `d`'s, in two layers:
/// - paths that left `d` at some row `x`: one that comes back to `d` wins
///   if it gained (scored at least `d` over the same bases), and one that
///   ends at row `e` (the rest clipped) if it scored at least what `d`
///   scores from `x` to its best end after `e` (`maxpost(e)`: the largest
///   prefix sum from `e` on; at the read's end, at least `d`'s own);
/// - paths that started off `d` at row `c`, worth `−pre[c]` (what `d`
///   scores from the read's start is the yardstick): one that comes back to
///   `d` wins if it gained. Paths that never touch `d` are part 3's.
///
/// Also `true` when the band leaves the window (then nothing is shown).
/// Three reductions keep it to a few rows, with the same answer as the
/// plain program (the tests compare them):
/// - An excursion gains only on rows where `d` mismatches (elsewhere `d`
///   scores a match, as much as any cell, and an inserted base loses it).
///   One that leaves `d` before the first mismatch `p` it covers does no
///   better than one that stays on `d` up to there and takes one gap to
///   where it is at row `p`: a deletion at row `p`, or an insertion of up
///   to `band` bases ending there (or starting there). So paths leave `d`
///   only there, entering the program at row `p` directly.
/// - A state worth `v` at row `i` gains at most the deficit `rem(i)` of the
///   bases still to come, so one with `v + rem(i) < 0` is dropped; a path
///   that started off `d`, `t` diagonals from it, must also pay a gap of
///   `t` to come back. So paths start only in the first
///   `(B − open − extend) / match` rows, and rows with nothing left are
///   skipped to the next mismatch.
fn excursion_may_win(
    read: &[u8],
    window: &[u8],
    offset: usize,
    band: usize,
    pre: &[i32],
    mism: &[usize],
    sc: &Scoring,
) -> bool {
    const NEG: i32 = i32::MIN / 4;
    const LANES: usize = 2 * UNGAPPED_BAND + 1;
    let m = read.len();
    if offset < band || offset + m + band > window.len() {
        return true;
    }
    let lanes = 2 * band + 1;
    let hit = sc.matched + sc.bonus;
    let miss = sc.mismatch - sc.bonus;
    let (open, ext) = (sc.gap_open + sc.gap_extend, sc.gap_extend);
    // The cost of a gap of t.
    let gap = |t: usize| open + ext * (t as i32 - 1);
    let total = pre[m];
    let deficit = hit * m as i32 - total;
    // The deficit of read bases i.. on d.
    let rem = |i: usize| hit * (m - i) as i32 - (total - pre[i]);
    let mut maxpost = [NEG; 1024];
    let maxpost = if m < maxpost.len() {
        &mut maxpost[..=m]
    } else {
        return true;
    };
    let mut top = NEG;
    for e in (0..=m).rev() {
        top = top.max(pre[e]);
        maxpost[e] = top;
    }
    // Mismatches are asked about in order: a cursor.
    let mut cursor = 0usize;
    let mut is_mism = |i: usize| {
        while cursor < mism.len() && mism[cursor] < i {
            cursor += 1;
        }
        mism.get(cursor) == Some(&i)
    };
    // Paths may start off d at rows up to this.
    let last_start = (deficit - open) / hit;
    // What a path that started off d, l lanes from it, must still pay to
    // come back: a gap, or in an insertion its extension.
    let (mut back, mut back_f) = ([0i32; LANES], [0i32; LANES]);
    for l in 0..lanes {
        let t = l.abs_diff(band);
        if t > 0 {
            back[l] = gap(t);
            back_f[l] = ext * t as i32;
        }
    }
    // Lane l is the diagonal d + l − band; row i: i read bases consumed.
    // Per layer (0: left d, 1: started off it), the best value at each
    // lane's point and the best ending with an insertion.
    let mut h = [[NEG; LANES]; 2];
    let mut f = [[NEG; LANES]; 2];
    let (mut nh, mut nf) = (h, f);
    // Paths leaving d at row p (a mismatch): a deletion of t, or an
    // insertion of up to `band` bases ending at p.
    let leave = |h: &mut [[i32; LANES]; 2], f: &mut [[i32; LANES]; 2], p: usize| {
        for t in 1..=band {
            h[0][band + t] = h[0][band + t].max(-gap(t));
            if t <= p {
                let v = -gap(t) - (pre[p] - pre[p - t]);
                h[0][band - t] = h[0][band - t].max(v);
                f[0][band - t] = f[0][band - t].max(v);
            }
        }
    };
    let mut live = [false, true];
    if last_start >= 0 {
        h[1][..lanes].fill(0);
        h[1][band] = NEG;
    }
    let mut i = 0;
    while i < m {
        // Row i + 1 from row i: read base r = i.
        let r = i;
        i += 1;
        let a = read[r];
        let on_d = pre[i] - pre[r];
        let win = &window[offset + r - band..offset + r + band + 1];
        // An insertion may leave d at a mismatch.
        h[0][band] = if is_mism(r) { 0 } else { NEG };
        live[0] |= h[0][band] == 0;
        let starts = (i as i32) <= last_start;
        let low = -rem(i);
        for y in 0..2 {
            if !(live[y] || y == 1 && starts) {
                continue;
            }
            let (h, f) = (&h[y][..lanes], &f[y][..lanes]);
            let (nh, nf) = (&mut nh[y][..lanes], &mut nf[y][..lanes]);
            // Diagonal steps, then insertions.
            for ((x, &v), &b) in nh.iter_mut().zip(h).zip(win) {
                *x = v + if a == b { hit } else { -miss } - on_d;
            }
            nh[band] = NEG;
            let end = nh.iter().copied().max().unwrap_or(NEG);
            for ((x, &v), &w) in nf.iter_mut().zip(&h[1..]).zip(&f[1..]) {
                *x = (v - open).max(w - ext) - on_d;
            }
            nf[lanes - 1] = NEG;
            for (x, &w) in nh.iter_mut().zip(nf.iter()) {
                *x = (*x).max(w);
            }
            if y == 0 {
                // A path that left d ends here, or (last row) inserted.
                if end + pre[i] - maxpost[i] >= 0 || (i == m && nf.iter().any(|&x| x >= 0)) {
                    return true;
                }
            }
            // Deletions along the row.
            // (NEG minus a band's extensions stays far from overflow.)
            let mut e = NEG;
            for l in 1..lanes {
                e = (nh[l - 1] - open).max(e - ext);
                nh[l] = nh[l].max(e);
            }
            if nh[band] >= 0 {
                // Back on d with a gain.
                return true;
            }
            if y == 1 && starts {
                // A path starts here, its first i bases clipped.
                for x in nh.iter_mut() {
                    *x = (*x).max(-pre[i]);
                }
            }
            nh[band] = NEG;
            // A state that cannot gain back what it lost (and, started off
            // d, pay its way back) is dropped.
            let (bh, bf) = if y == 1 {
                (&back[..lanes], &back_f[..lanes])
            } else {
                (&[0i32; LANES][..lanes], &[0i32; LANES][..lanes])
            };
            for (x, &p) in nh.iter_mut().zip(bh) {
                *x = if *x - p < low { NEG } else { *x };
            }
            for (z, &q) in nf.iter_mut().zip(bf) {
                *z = if *z - q < low { NEG } else { *z };
            }
            live[y] = nh.iter().chain(nf.iter()).fold(NEG, |a, &x| a.max(x)) > NEG;
        }
        for y in 0..2 {
            if !live[y] {
                nh[y] = [NEG; LANES];
                nf[y] = [NEG; LANES];
            }
        }
        std::mem::swap(&mut h, &mut nh);
        std::mem::swap(&mut f, &mut nf);
        if i < m && is_mism(i) {
            leave(&mut h, &mut f, i);
            live[0] = true;
        } else if !live[0] && !live[1] && i as i32 > last_start {
            // Nothing can win before the next mismatch.
            let k = mism.partition_point(|&p| p < i);
            let Some(&p) = mism.get(k) else {
                return false;
            };
            i = p;
            h = [[NEG; LANES]; 2];
            f = [[NEG; LANES]; 2];
            leave(&mut h, &mut f, p);
            live[0] = true;
        }
    }
    false
}

/// The best-scoring segments `[a, b)` of a diagonal given its prefix sums.
struct Segments {
    /// Their score.
    best: i32,
    /// How many there are.
    count: usize,
    /// The fewest and most clipped ends among them.
    clips: (i32, i32),
    /// One of them (the only one when `count` is 1).
    only: (usize, usize),
}

/// The best segments of `pre` (see [`Segments`]).
fn best_segments(pre: &[i32]) -> Segments {
    let m = pre.len() - 1;
    let mut s = Segments {
        best: i32::MIN,
        count: 0,
        clips: (i32::MAX, i32::MIN),
        only: (0, 0),
    };
    // The least prefix sum before b: whether a = 0 attains it, how many
    // a > 0 do, and the last that does.
    let (mut low, mut at_zero, mut after, mut last) = (pre[0], true, 0usize, 0usize);
    for (b, &p) in pre.iter().enumerate().skip(1) {
        let v = p - low;
        if v >= s.best {
            if v > s.best {
                s.best = v;
                s.count = 0;
                s.clips = (i32::MAX, i32::MIN);
            }
            let end = i32::from(b < m);
            if at_zero {
                s.count += 1;
                s.clips = (s.clips.0.min(end), s.clips.1.max(end));
                s.only = (0, b);
            }
            if after > 0 {
                s.count += after;
                s.clips = (s.clips.0.min(1 + end), s.clips.1.max(1 + end));
                s.only = (last, b);
            }
        }
        if p < low {
            (low, at_zero, after, last) = (p, false, 1, b);
        } else if p == low {
            (after, last) = (after + 1, b);
        }
    }
    s
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain O(mn) affine-gap dynamic program (Gotoh): the best score of
    /// `read` against `window` in `mode` with the dynamic program's scores
    /// (bonus included; no clip penalties) — the oracle of block-aligner's.
    pub(super) fn dp(read: &[u8], window: &[u8], mode: Mode) -> i32 {
        let sc = Scoring::of(mode);
        let (m, n) = (read.len(), window.len());
        let neg = i32::MIN / 4;
        let local = mode == Mode::Local;
        // h: best ending at (i, j); e: ending with a deletion (gap in read);
        // f: ending with an insertion.
        let mut h = vec![vec![neg; n + 1]; m + 1];
        let mut e = vec![vec![neg; n + 1]; m + 1];
        let mut f = vec![vec![neg; n + 1]; m + 1];
        // Free window prefix (semi-global) / the empty alignment (local).
        h[0].fill(0);
        for i in 1..=m {
            h[i][0] = if local {
                0
            } else {
                -(sc.gap_open + sc.gap_extend * i as i32)
            };
            f[i][0] = h[i][0];
        }
        let (go, ge) = (sc.gap_open, sc.gap_extend);
        let mut best = 0;
        for i in 1..=m {
            for j in 1..=n {
                e[i][j] = (e[i][j - 1] - ge).max(h[i][j - 1] - go - ge);
                f[i][j] = (f[i - 1][j] - ge).max(h[i - 1][j] - go - ge);
                let d = h[i - 1][j - 1] + sc.dp_substitution(read[i - 1], window[j - 1]);
                let mut v = d.max(e[i][j]).max(f[i][j]);
                if local {
                    v = v.max(0);
                    best = best.max(v);
                }
                h[i][j] = v;
            }
        }
        if local {
            best
        } else {
            *h[m].iter().max().unwrap()
        }
    }

    pub(super) fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// A read drawn from `window` with substitutions, indels and (sometimes)
    /// random ends.
    pub(super) fn mutate(seed: &mut u64, window: &[u8]) -> Vec<u8> {
        let start = (rng(seed) % 20) as usize;
        let end = window.len() - (rng(seed) % 20) as usize;
        let mut read = Vec::new();
        let mut i = start;
        while i < end {
            match rng(seed) % 40 {
                0 => read.push((rng(seed) % 4) as u8),
                1 => i += 1 + (rng(seed) % 4) as usize,
                2 => {
                    read.push(((window[i] as u64 + 1 + rng(seed) % 3) % 4) as u8);
                    i += 1;
                }
                _ => {
                    read.push(window[i]);
                    i += 1;
                }
            }
        }
        if rng(seed).is_multiple_of(4) {
            for _ in 0..(rng(seed) % 30) {
                read.push((rng(seed) % 4) as u8);
            }
        }
        read
    }

    /// block-aligner's score equals the plain DP's, and the CIGAR it gives
    /// scores that much, spans the whole read and fits the window — for
    /// random reads with substitutions, indels, random tails and Ns.
    #[test]
    fn extension_matches_plain_dp() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let (mut cases, mut suboptimal) = (0usize, [0usize; 2]);
        for case in 0..1000 {
            let n = 40 + (rng(&mut seed) % 200) as usize;
            let mut window: Vec<u8> = (0..n).map(|_| (rng(&mut seed) % 4) as u8).collect();
            if case % 7 == 0 {
                let k = (rng(&mut seed) % n as u64) as usize;
                window[k] = 4;
            }
            let read = mutate(&mut seed, &window);
            if read.is_empty() {
                continue;
            }
            for mode in [Mode::EndToEnd, Mode::Local] {
                let sc = Scoring::of(mode);
                let want = dp(&read, &window, mode);
                let got = extend(&read, &window, mode);
                let Some(got) = got else {
                    assert!(
                        want <= 0,
                        "case {case} {mode:?}: nothing found, DP has {want}"
                    );
                    continue;
                };
                let d = describe(&read, &window, got.ref_start, &got.cigar, &sc);
                assert_eq!(d.score, got.score, "case {case} {mode:?}: CIGAR rescored");
                assert_eq!(d.ref_end, got.ref_end);
                assert!(got.ref_end <= window.len());
                let read_len: u32 = got.cigar.iter().filter(|o| o.0.reads()).map(|o| o.1).sum();
                assert_eq!(read_len as usize, read.len(), "case {case} {mode:?}");
                match mode {
                    Mode::EndToEnd => {
                        let aligned: u32 = got
                            .cigar
                            .iter()
                            .filter(|o| o.0 == Op::Match)
                            .map(|o| o.1)
                            .sum();
                        let dp_score = got.score + sc.bonus * aligned as i32;
                        assert!(dp_score <= want, "case {case}: above the optimum");
                        assert_eq!(got.clipped_ends(), 0);
                        suboptimal[0] += usize::from(dp_score < want);
                    }
                    Mode::Local => {
                        // The optimal local alignment, or the whole read
                        // within the clip penalty of it.
                        let clips = got.clipped_ends();
                        assert!(got.score <= want, "case {case}: above the optimum");
                        let bound = if clips > 0 { want } else { want - 2 * sc.clip };
                        suboptimal[1] += usize::from(got.score < bound);
                    }
                }
                cases += 1;
            }
        }
        // Adaptive blocks (block-aligner's speed) may miss the optimum of a
        // read this noisy (7.5% errors, indels of up to 4 bases) now and
        // then; never of more than 1 case in 100.
        eprintln!("suboptimal of {cases}: {suboptimal:?}");
        assert!(
            100 * (suboptimal[0] + suboptimal[1]) <= cases,
            "suboptimal of {cases}: {suboptimal:?}"
        );
    }

    /// NM, MD, score and span of a hand-made CIGAR with a deletion, a
    /// mismatch and an insertion.
    #[test]
    fn describe_md_and_nm() {
        let sc = Scoring::of(Mode::Local);
        // ref ACGTACGTAC, read AC-TAGGTACC (deletion of G, mismatch C→G, insertion C)
        let reference = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1];
        let read = [0, 1, 3, 0, 2, 2, 3, 0, 1, 1];
        let cigar = [(Op::Match, 2), (Op::Del, 1), (Op::Match, 7), (Op::Ins, 1)];
        let d = describe(&read, &reference, 0, &cigar, &sc);
        assert_eq!(String::from_utf8(d.md).unwrap(), "2^G2C4");
        assert_eq!(d.nm, 3);
        assert_eq!(d.ref_end, 10);
        assert_eq!(d.score, 8 - 4 - 7 - 7);
        assert_eq!(ref_span(&cigar), 10);
    }

    #[test]
    fn exact_read_aligns_whole() {
        let window: Vec<u8> = (0..200u64).map(|i| ((i * 7 + i / 3) % 4) as u8).collect();
        let read = window[30..130].to_vec();
        for mode in [Mode::EndToEnd, Mode::Local] {
            let a = extend(&read, &window, mode).unwrap();
            assert_eq!(a.cigar, vec![(Op::Match, 100)]);
            assert_eq!(a.nm, 0);
            assert_eq!(String::from_utf8(a.md).unwrap(), "100");
            assert_eq!(a.score, Scoring::of(mode).perfect(100));
        }
    }

    /// Whether an excursion from the diagonal `d` where read base 0 faces
    /// `window[offset]`, within `band` diagonals of it, may win, the plain
    /// way (`excursion_may_win`'s oracle): the same tests over every row,
    /// every state, paths starting and gaps leaving `d` anywhere.
    fn excursion_may_win_plain(
        read: &[u8],
        window: &[u8],
        offset: usize,
        band: usize,
        pre: &[i32],
        sc: &Scoring,
    ) -> bool {
        let neg = i32::MIN / 4;
        let lanes = 2 * band + 1;
        let m = read.len();
        let (open, ext) = (sc.gap_open + sc.gap_extend, sc.gap_extend);
        let maxpost: Vec<i32> = (0..=m).map(|e| *pre[e..].iter().max().unwrap()).collect();
        // Lane l is the diagonal d + l − band; point (i, c): i read bases
        // and c window bases consumed.
        let col = |i: usize, l: usize| (offset + i + l) as isize - band as isize;
        let valid = |c: isize| c >= 0 && c <= window.len() as isize;
        // [left d, started off d]: the best value at each point, and ending
        // with an insertion.
        let mut h = [vec![neg; lanes], vec![neg; lanes]];
        let mut f = [vec![neg; lanes], vec![neg; lanes]];
        for (l, v) in h[1].iter_mut().enumerate() {
            if valid(col(0, l)) && l != band {
                *v = 0;
            }
        }
        h[0][band] = 0;
        for i in 1..=m {
            let a = read[i - 1];
            let on_d = pre[i] - pre[i - 1];
            let mut nh = [vec![neg; lanes], vec![neg; lanes]];
            let mut nf = [vec![neg; lanes], vec![neg; lanes]];
            for y in 0..2 {
                for l in 0..lanes {
                    let c = col(i, l);
                    if !valid(c) {
                        continue;
                    }
                    if c >= 1 && h[y][l] > neg && l != band {
                        let v = h[y][l] + sc.dp_substitution(a, window[c as usize - 1]) - on_d;
                        nh[y][l] = v;
                        if y == 0 && v + pre[i] - maxpost[i] >= 0 {
                            // The path ends here.
                            return true;
                        }
                    }
                    if l + 1 < lanes && valid(col(i - 1, l + 1)) {
                        nf[y][l] = (h[y][l + 1] - open).max(f[y][l + 1] - ext) - on_d;
                        nh[y][l] = nh[y][l].max(nf[y][l]);
                        if i == m && y == 0 && nf[y][l] >= 0 {
                            // The read ends inserted.
                            return true;
                        }
                    }
                }
                let mut e = neg;
                for l in 0..lanes {
                    if !valid(col(i, l)) {
                        e = neg;
                        continue;
                    }
                    if l > 0 {
                        e = (nh[y][l - 1] - open).max(e - ext).max(neg);
                        nh[y][l] = nh[y][l].max(e);
                    }
                    if l == band {
                        if nh[y][l] >= 0 {
                            // Back on d.
                            return true;
                        }
                        nh[y][l] = if y == 0 { 0 } else { neg };
                    } else if y == 1 {
                        // A path starts here, its first i bases clipped.
                        nh[y][l] = nh[y][l].max(-pre[i]);
                    }
                }
            }
            h = nh;
            f = nf;
        }
        false
    }

    /// A read that starts (or, mirrored, ends) with `h` bases of a
    /// homopolymer run of the window followed by `l` inserted bases, the
    /// rest on the diagonal of the window's offset 32: the run lets the
    /// read's start align some diagonals off with the insertion after it.
    fn homopolymer_insertion(seed: &mut u64, m: usize) -> (Vec<u8>, Vec<u8>, usize) {
        let n = m + 64;
        let mut window: Vec<u8> = (0..n).map(|_| (rng(seed) % 4) as u8).collect();
        let h = (4 + (rng(seed) % 16) as usize).min(m / 3);
        let l = (1 + (rng(seed) % 6) as usize).min(m / 4);
        let base = (rng(seed) % 4) as u8;
        let run = 32 - (rng(seed) % 8) as usize..32 + h + l + (rng(seed) % 8) as usize;
        window[run].fill(base);
        let mut read = vec![base; h];
        read.extend((0..l).map(|_| (rng(seed) % 4) as u8));
        read.extend_from_slice(&window[32 + h + l..32 + m]);
        for _ in 0..rng(seed) % 3 {
            let i = (rng(seed) % m as u64) as usize;
            read[i] = (read[i] + 1) % 4;
        }
        if rng(seed).is_multiple_of(2) {
            read.reverse();
            window.reverse();
        }
        (window, read, 32)
    }

    /// The pruned band DP (`excursion_may_win`) answers what the plain one
    /// (every row, every state, gaps leaving d anywhere) does, for every
    /// band width, on the shortcut's random cases.
    #[test]
    fn pruned_band_dp_agrees_with_plain() {
        let mut seed = 0x1d8e_4e27_c47d_124fu64;
        let mut wins = [0usize; 2];
        for case in 0..1500 {
            let m = [150, 100, 36, 60][case % 4];
            let subs = (rng(&mut seed) % 8) as usize;
            let (window, read, offset) = if case % 3 == 0 {
                homopolymer_insertion(&mut seed, m)
            } else {
                ungapped_case(&mut seed, m, subs)
            };
            if read.iter().chain(&window).any(|&c| c > 3) {
                continue;
            }
            for mode in [Mode::EndToEnd, Mode::Local] {
                let sc = Scoring::of(mode);
                let mut pre = vec![0];
                for i in 0..m {
                    pre.push(pre[i] + sc.dp_substitution(read[i], window[offset + i]));
                }
                let mism: Vec<usize> = (0..m).filter(|&i| read[i] != window[offset + i]).collect();
                for band in 1..=UNGAPPED_BAND {
                    let plain = excursion_may_win_plain(&read, &window, offset, band, &pre, &sc);
                    let pruned = excursion_may_win(&read, &window, offset, band, &pre, &mism, &sc);
                    assert_eq!(plain, pruned, "case {case} {mode:?} band {band}");
                    wins[usize::from(plain)] += 1;
                }
            }
        }
        eprintln!("no excursion wins / one may: {wins:?}");
        assert!(wins[0] > 1000 && wins[1] > 1000, "{wins:?}");
    }

    /// The best local score of `read` in `window` under `mode`'s dynamic
    /// program (bonus included): [`local_score`]'s oracle, by the plain
    /// Gotoh DP with local starts and ends.
    fn sw(read: &[u8], window: &[u8], mode: Mode) -> i32 {
        let sc = Scoring::of(mode);
        let (m, n) = (read.len(), window.len());
        let neg = i32::MIN / 4;
        let (go, ge) = (sc.gap_open, sc.gap_extend);
        let mut h = vec![vec![0; n + 1]; m + 1];
        let mut e = vec![vec![neg; n + 1]; m + 1];
        let mut f = vec![vec![neg; n + 1]; m + 1];
        let mut best = 0;
        for i in 1..=m {
            for j in 1..=n {
                e[i][j] = (e[i][j - 1] - ge).max(h[i][j - 1] - go - ge);
                f[i][j] = (f[i - 1][j] - ge).max(h[i - 1][j] - go - ge);
                let d = h[i - 1][j - 1] + sc.dp_substitution(read[i - 1], window[j - 1]);
                h[i][j] = d.max(e[i][j]).max(f[i][j]).max(0);
                best = best.max(h[i][j]);
            }
        }
        best
    }

    /// A window as the mapper cuts one (the diagonal ± 32) around a read
    /// drawn from its middle with `subs` substitutions, and sometimes an
    /// indel, a random tail, a tandem repeat, another copy of part of the
    /// read nearby, or an N: the window, the read, and where the read's
    /// base 0 was drawn from.
    fn ungapped_case(seed: &mut u64, m: usize, subs: usize) -> (Vec<u8>, Vec<u8>, usize) {
        let n = m + 64;
        let mut window: Vec<u8> = (0..n).map(|_| (rng(seed) % 4) as u8).collect();
        match rng(seed) % 10 {
            // A tandem repeat of a short period over part of the window.
            0 => {
                let p = 1 + (rng(seed) % 40) as usize;
                let from = (rng(seed) % n as u64) as usize;
                let to = (from + 20 + (rng(seed) % n as u64) as usize).min(n);
                for j in from.max(p)..to {
                    window[j] = window[j - p];
                }
            }
            // A homopolymer run over the read's start or end (where an
            // indel next to it can shift part of the read along it).
            2 => {
                let len = 5 + (rng(seed) % 25) as usize;
                let base = (rng(seed) % 4) as u8;
                let from = if rng(seed).is_multiple_of(2) {
                    (rng(seed) % 40) as usize
                } else {
                    (32 + m).saturating_sub((rng(seed) % 40) as usize)
                };
                for x in window.iter_mut().skip(from).take(len) {
                    *x = base;
                }
            }
            // Part of the read's stretch copied to another diagonal, with
            // a few differences.
            1 => {
                let len = 10 + (rng(seed) % m as u64) as usize;
                let src = 32 + (rng(seed) % (m as u64)) as usize;
                let dst = (rng(seed) % n as u64) as usize;
                for t in 0..len {
                    if src + t < n && dst + t < n {
                        window[dst + t] = window[src + t];
                        if rng(seed).is_multiple_of(25) {
                            window[dst + t] = (rng(seed) % 4) as u8;
                        }
                    }
                }
            }
            _ => {}
        }
        let mut read = window[32..32 + m].to_vec();
        for _ in 0..subs {
            let i = (rng(seed) % m as u64) as usize;
            read[i] = (read[i] + 1 + (rng(seed) % 3) as u8) % 4;
        }
        match rng(seed) % 10 {
            // An indel of 1 to 6 bases, the read's length kept.
            0 | 1 => {
                let at = (rng(seed) % m as u64) as usize;
                let len = 1 + (rng(seed) % 6) as usize;
                if rng(seed).is_multiple_of(2) {
                    // Deletion from the read: the window's bases after it.
                    for i in at..m {
                        read[i] = window[(32 + i + len).min(n - 1)];
                    }
                } else {
                    let ins: Vec<u8> = (0..len).map(|_| (rng(seed) % 4) as u8).collect();
                    read.splice(at..at, ins);
                    read.truncate(m);
                }
            }
            // A random tail (adapter).
            2 => {
                let t = 1 + (rng(seed) % 30) as usize;
                for x in read.iter_mut().rev().take(t) {
                    *x = (rng(seed) % 4) as u8;
                }
            }
            // An N in the read or the window.
            3 if rng(seed).is_multiple_of(4) => {
                let i = (rng(seed) % m as u64) as usize;
                if rng(seed).is_multiple_of(2) {
                    read[i] = 4;
                } else {
                    window[(rng(seed) % n as u64) as usize] = 4;
                }
            }
            _ => {}
        }
        (window, read, 32)
    }

    /// Where the ungapped shortcut answers, it answers what the dynamic
    /// programs do: `extend`'s alignment (score, CIGAR, NM, MD, span) and
    /// `local_score`'s score, which is also the plain Gotoh DP's local
    /// optimum. Random reads with 0 to 7 substitutions, indels, random
    /// tails, tandem repeats, near copies and Ns, of 20 to 250 bases.
    #[test]
    fn ungapped_agrees_with_dp() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut taken = [[0usize; 8]; 2];
        let mut tried = [[0usize; 8]; 2];
        for case in 0..6000 {
            let m = match case % 4 {
                0 => 150,
                1 => 100,
                2 => 36,
                _ => 20 + (rng(&mut seed) % 230) as usize,
            };
            let subs = (rng(&mut seed) % 8) as usize;
            let (window, mut read, offset) = if case % 10 == 9 {
                homopolymer_insertion(&mut seed, m)
            } else {
                ungapped_case(&mut seed, m, subs)
            };
            if case % 3 == 0 {
                // Differences near the ends, where clips and ties between
                // segments are decided: substitutions in the first or last
                // 12 bases, or a short indel there.
                if rng(&mut seed).is_multiple_of(3) {
                    // Its first or last 1 to 4 bases all different.
                    let t = 1 + (rng(&mut seed) % 4) as usize;
                    let end = rng(&mut seed).is_multiple_of(2);
                    for j in 0..t.min(m) {
                        let i = if end { m - 1 - j } else { j };
                        read[i] = (read[i] + 1 + (rng(&mut seed) % 3) as u8) % 4;
                    }
                }
                for _ in 0..1 + rng(&mut seed) % 3 {
                    let i = (rng(&mut seed) % 12.min(m as u64)) as usize;
                    let i = if rng(&mut seed).is_multiple_of(2) {
                        i
                    } else {
                        m - 1 - i
                    };
                    if rng(&mut seed).is_multiple_of(5) {
                        read.remove(i);
                        read.push(window[(offset + m).min(window.len() - 1)]);
                    } else {
                        read[i] = (read[i] + 1 + (rng(&mut seed) % 3) as u8) % 4;
                    }
                }
            }
            for (k, mode) in [Mode::EndToEnd, Mode::Local].into_iter().enumerate() {
                // (Counted for the substitutions drawn, the homopolymer
                // cases aside.)
                let counted = case % 10 != 9;
                tried[k][subs] += usize::from(counted);
                let Some(u) = ungapped(&read, &window, offset, mode) else {
                    continue;
                };
                taken[k][subs] += usize::from(counted);
                let what = format!("case {case} {mode:?} m {m} subs {subs}");
                assert_eq!(Some(u.ext.clone()), extend(&read, &window, mode), "{what}");
                assert_eq!(u.best, local_score(&read, &window, mode), "{what}");
                assert_eq!(u.best, sw(&read, &window, mode), "{what}");
                // The CIGAR's own account: ungapped, NM and MD recomputed.
                assert!(
                    u.ext
                        .cigar
                        .iter()
                        .all(|o| matches!(o.0, Op::Match | Op::Soft))
                );
                let d = describe(
                    &read,
                    &window,
                    u.ext.ref_start,
                    &u.ext.cigar,
                    &Scoring::of(mode),
                );
                assert_eq!(
                    (d.score, d.nm, d.md),
                    (u.ext.score, u.ext.nm, u.ext.md.clone())
                );
            }
        }
        eprintln!("taken / tried by substitutions: {taken:?} / {tried:?}");
        // The shortcut settles many reads with few substitutions (40% here,
        // where a third of the cases have differences at the ends).
        for k in 0..2 {
            let (t, n): (usize, usize) = (taken[k][..3].iter().sum(), tried[k][..3].iter().sum());
            assert!(5 * t > 2 * n, "taken {t} of {n}");
        }
    }

    /// A read whose last (or first) bases all differ, where aligning them
    /// as an insertion ties with the mismatches (local: two mismatches
    /// cost 8 as a 2-base insertion does): the DP's choice, and so the
    /// shortcut's answer, must be the same (on chr20 the first version of
    /// the shortcut said `150M` where the DP said `148M2I`).
    #[test]
    fn ungapped_ties_at_the_ends() {
        let mut seed = 0x8f1b_bcdc_bfa5_3e0bu64;
        let mut taken = 0;
        for case in 0..2000 {
            let m = [150, 100, 36][case % 3];
            let mut window: Vec<u8> = (0..m + 64).map(|_| (rng(&mut seed) % 4) as u8).collect();
            if case % 7 == 0 {
                // A short tandem repeat at one end.
                for j in 150.min(m)..m + 64 {
                    window[j] = window[j - 2];
                }
            }
            let mut read = window[32..32 + m].to_vec();
            let t = 1 + case % 4;
            let end = (case / 4) % 2 == 0;
            for j in 0..t {
                let i = if end { m - 1 - j } else { j };
                read[i] = (read[i] + 1 + (rng(&mut seed) % 3) as u8) % 4;
            }
            for _ in 0..rng(&mut seed) % 3 {
                let i = (rng(&mut seed) % m as u64) as usize;
                read[i] = (read[i] + 1) % 4;
            }
            for mode in [Mode::EndToEnd, Mode::Local] {
                if let Some(u) = ungapped(&read, &window, 32, mode) {
                    taken += 1;
                    assert_eq!(
                        Some(u.ext),
                        extend(&read, &window, mode),
                        "case {case} {mode:?}"
                    );
                    assert_eq!(
                        u.best,
                        local_score(&read, &window, mode),
                        "case {case} {mode:?}"
                    );
                }
            }
        }
        assert!(taken > 700, "taken {taken}");
    }

    /// The chr20 read where the first version of the shortcut said `150M`
    /// and the DP `148M2I` (two mismatches at the end cost what a 2-base
    /// insertion does): the shortcut must leave it to the DP or agree.
    #[test]
    fn ungapped_real_tie_at_the_end() {
        let window = crate::dna::codes(
            b"TCTTCTTTAAAAAAATAGTGTTTTCATACTGATGTGGTCAGATCTCCAAGATACATTATCAAAAGAAAATAGCAAGTCACAGA\
              ACAATAATATGTAACATTTACGGTAAAAACAAAACAAACTTTCCAGGCGCAGTGGCTCACGCCTGTAATCCTAACACTTTG\
              GGAGGCTGAGGCGGGTGGATCACGAGGTCAGGAGATTGAGACTATCCTGG",
        );
        let read = crate::dna::codes(
            b"TGGGGTCAGATCTCCAAGATACATTATCTAAAGAAAATAGCAAGTCACAGAACAATAATATGTAACATTTACGGTAAAAAC\
              AAAACAAACTTTCCAGGCGCAGTGGCTCACGCCTGTAATCCTAACACTTTGGGAGGCTGAGGCGGGTCC",
        );
        let dp = extend(&read, &window, Mode::Local).unwrap();
        assert_eq!(dp.cigar, vec![(Op::Match, 148), (Op::Ins, 2)]);
        assert_eq!(ungapped(&read, &window, 32, Mode::Local), None);
    }

    /// The chr20 read where the pruned band DP once dropped a path in an
    /// insertion as if it still had to open its gap back: 11 bases of a
    /// poly-T 4 diagonals off, 4 inserted, then the anchor's diagonal
    /// (`11M4I135M`, 136) beats the ungapped `150M` (135).
    #[test]
    fn ungapped_real_insertion_after_poly_t() {
        let window = crate::dna::codes(
            b"TGATTTTGTGTTGGGGATGTGAGGAGGTTTTTTTTTTTTTTTTTTTTCTTTCTTAATCTAGATGTCTTGAACAAGTCAGCAA\
              AGAAAAACAGTTCCGCCTTTGGAATGTATGAAAATGAAGACCGTTGCAGGAGGTCTTGAGCCACAGAGCTGGCTCCAGAGGC\
              ATTGGGAGGAGAAACGCGGCAGGCCTGGCTCACTCATTATATTTCAAGAT",
        );
        let read = crate::dna::codes(
            b"TTTTTTTTTTTGTGGCTTTCTTAATCTAGATGTCTTGAACAAGTCAGCAAAGAAAAACAGTTCCGCCTTTGGAATGTATGAA\
              AATGAAGACCGTTGCAGGAGGTCTTGAGCCACAGAGCTGGCTCCAGAGGCATTGGGAGGAGAAACGCG",
        );
        let dp = extend(&read, &window, Mode::Local).unwrap();
        assert_eq!(
            dp.cigar,
            vec![(Op::Match, 11), (Op::Ins, 4), (Op::Match, 135)]
        );
        assert_eq!(ungapped(&read, &window, 32, Mode::Local), None);
    }

    /// The best AS of an end-to-end alignment of `read` in `window` (the
    /// whole read, the window's ends free) with a mismatch at read base `i`
    /// costing `pens[i]` and a gap of `L` `open + extend × L`, insertions
    /// at the read's ends too: a plain Gotoh dynamic program.
    fn end_to_end_best(read: &[u8], pens: &[u8], window: &[u8]) -> i32 {
        const NEG: i32 = i32::MIN / 4;
        let sc = Scoring::of(Mode::EndToEnd);
        let (go, ge) = (sc.gap_open, sc.gap_extend);
        let w = window.len();
        // Row i: read[..i] aligned, ending at window position j.
        let mut h = vec![0i32; w + 1];
        let mut f = vec![NEG; w + 1];
        for (i, (&a, &pen)) in read.iter().zip(pens).enumerate() {
            let mut nh = vec![NEG; w + 1];
            let mut e = NEG;
            for j in 0..=w {
                // Read base i inserted, or against window base j − 1.
                f[j] = (h[j] - go - ge).max(f[j] - ge);
                let diag = if j > 0 {
                    h[j - 1]
                        + if a == window[j - 1] {
                            0
                        } else {
                            -i32::from(pen)
                        }
                } else {
                    NEG
                };
                if j > 0 {
                    e = (nh[j - 1] - go - ge).max(e - ge);
                }
                nh[j] = diag.max(f[j]).max(e);
            }
            let _ = i;
            h = nh;
        }
        h.into_iter().max().expect("a cell")
    }

    /// `end_to_end_bound` is never below the best AS of an end-to-end
    /// alignment (the plain program above, and AS of `extend`'s alignment
    /// rescored), with random per-base penalties, in rescue-sized windows
    /// holding the read (substitutions, indels, at the window's edges) or
    /// not; stopped at a floor it is on the same side of it; and it proves
    /// most unrelated windows below end-to-end's minimum score.
    #[test]
    fn end_to_end_bound_bounds() {
        let mut seed = 0x3e2e_b0b0_d5c1_a7f3u64;
        let (mut unrelated, mut pruned) = (0, 0);
        for case in 0..400 {
            let m = [150, 100, 36, 250][case % 4];
            let n = [400, 900, 1300][case % 3].max(m + 2);
            let window: Vec<u8> = if case % 11 == 10 {
                (0..n).map(|i| ((i / 2) % 2) as u8 * 2).collect()
            } else {
                (0..n).map(|_| (rng(&mut seed) % 4) as u8).collect()
            };
            let related = case % 4 != 3;
            let mut read: Vec<u8> = if related {
                // From the window, sometimes hanging over its ends.
                let at = match case % 9 {
                    0 => 0,
                    1 => n - m,
                    _ => (rng(&mut seed) % (n - m) as u64) as usize,
                };
                window[at..at + m].to_vec()
            } else {
                (0..m).map(|_| (rng(&mut seed) % 4) as u8).collect()
            };
            for _ in 0..rng(&mut seed) % 10 {
                let k = (rng(&mut seed) % m as u64) as usize;
                read[k] = (read[k] + 1) % 4;
            }
            match rng(&mut seed) % 4 {
                0 => {
                    let k = (rng(&mut seed) % (m as u64 - 4)) as usize;
                    read.drain(k..k + 1 + (rng(&mut seed) % 3) as usize);
                }
                1 => {
                    let k = (rng(&mut seed) % m as u64) as usize;
                    read.insert(k, (rng(&mut seed) % 4) as u8);
                }
                _ => {}
            }
            let pens: Vec<u8> = (0..read.len())
                .map(|_| match case % 3 {
                    0 => 6,
                    _ => 2 + (rng(&mut seed) % 5) as u8,
                })
                .collect();
            let best = end_to_end_best(&read, &pens, &window);
            let bound = end_to_end_bound(&read, &pens, &window, None).unwrap();
            assert!(bound >= best, "case {case}: {bound} < {best}");
            if let Some(e) = extend(&read, &window, Mode::EndToEnd) {
                let qual: Vec<u8> = pens
                    .iter()
                    .map(|&p| 33 + ((i32::from(p) - 2) * 10) as u8)
                    .collect();
                let sc = Scoring::of(Mode::EndToEnd);
                let q = score_with_quality(&read, &qual, &window, e.ref_start, &e.cigar, &sc);
                assert!(bound >= q, "case {case}: {bound} < AS {q}");
            }
            for f in [best, best + 1, best - 1, bound, bound + 1, -90, -254] {
                if f < -254 {
                    continue;
                }
                let early = end_to_end_bound(&read, &pens, &window, Some(f)).unwrap();
                assert!(
                    early >= bound && (early < f) == (bound < f),
                    "case {case}, floor {f}: {early} against {bound}"
                );
            }
            assert_eq!(end_to_end_bound(&read, &pens, &window, Some(-255)), None);
            if !related {
                unrelated += 1;
                let min = Scoring::min_score(Mode::EndToEnd, read.len());
                pruned += usize::from(bound < min);
            }
        }
        assert!(
            10 * pruned >= 9 * unrelated,
            "{pruned} of {unrelated} pruned"
        );
    }

    /// `local_score_bound` as first written (no padding, no AVX2): the
    /// padded program, in both its builds, must give exactly this.
    fn bound_unpadded(read: &[u8], window: &[u8], mode: Mode, decide: Option<i32>) -> i32 {
        let sc = Scoring::of(mode);
        let hit = (sc.matched + sc.bonus) as u8;
        let miss = (sc.mismatch - sc.bonus) as u8;
        let hop = (sc.gap_open + sc.gap_extend) as u8;
        let (m, w) = (read.len(), window.len());
        let mut v = vec![0u8; w + m - 1];
        let (mut top, mut from) = (0u8, 0u8);
        for (i, &a) in read.iter().enumerate() {
            let lane = m - 1 - i;
            let mut best = 0u8;
            for (x, &b) in v[lane..lane + w].iter_mut().zip(window) {
                let y = (*x).max(from);
                *x = if a == b {
                    y.saturating_add(hit)
                } else {
                    y.saturating_sub(miss)
                };
                best = best.max(*x);
            }
            top = top.max(best);
            from = top.saturating_sub(hop);
            if let Some(t) = decide {
                let most = i32::from(top) + i32::from(hit) * (m - 1 - i) as i32;
                if i32::from(top) >= t || most < t {
                    return most;
                }
            }
        }
        i32::from(top)
    }

    /// The padded bound (AVX2 where present, and the plain build) is the
    /// unpadded one, on windows of every length modulo the vector, with and
    /// without a threshold, related and unrelated reads.
    #[test]
    fn padded_bound_is_the_unpadded_one() {
        let mut seed = 0x0b0d_2a11_5eed_7001u64;
        for case in 0..600 {
            let m = [150, 100, 36, 250, 19, 1][case % 6];
            let w = m + (rng(&mut seed) % 200) as usize;
            let window: Vec<u8> = (0..w).map(|_| (rng(&mut seed) % 4) as u8).collect();
            let read: Vec<u8> = if case % 3 == 0 {
                (0..m).map(|_| (rng(&mut seed) % 4) as u8).collect()
            } else {
                let at = (rng(&mut seed) % (w - m + 1) as u64) as usize;
                let mut r = window[at..at + m].to_vec();
                for _ in 0..rng(&mut seed) % 6 {
                    let k = (rng(&mut seed) % m as u64) as usize;
                    r[k] = (r[k] + 1) % 4;
                }
                r
            };
            for mode in [Mode::EndToEnd, Mode::Local] {
                let full = bound_unpadded(&read, &window, mode, None);
                for decide in [None, Some(full), Some(full - 7), Some(full + 3), Some(19)] {
                    let want = bound_unpadded(&read, &window, mode, decide);
                    let got = local_score_bound(&read, &window, mode, decide);
                    assert_eq!(got, Some(want), "case {case} {mode:?} {decide:?}");
                    let sc = Scoring::of(mode);
                    let costs = BoundCosts {
                        hit: (sc.matched + sc.bonus) as u8,
                        miss: (sc.mismatch - sc.bonus) as u8,
                        hop: (sc.gap_open + sc.gap_extend) as u8,
                    };
                    let mut padded = window.clone();
                    padded.resize(w.next_multiple_of(BOUND_VECTOR), PAD_CODE);
                    assert_eq!(
                        bound_rows(&read, &padded, costs, decide),
                        want,
                        "case {case}"
                    );
                }
            }
        }
    }

    /// `local_score_bound` is never below `local_score` nor the plain
    /// Gotoh DP's local optimum, on the shortcut's random cases and on
    /// unrelated windows (where it is what prunes), and is close to it on
    /// the latter.
    #[test]
    fn local_score_bound_bounds() {
        let mut seed = 0x51a1_7e0b_9c3d_2f61u64;
        let mut slack = Vec::new();
        for case in 0..1500 {
            // Reads over 250 bases have no bound (saturating cells).
            let m = if case % 7 == 6 {
                300
            } else {
                [150, 100, 36, 250][case % 4]
            };
            let subs = (rng(&mut seed) % 8) as usize;
            let (mut window, read, _) = if case % 3 == 0 {
                homopolymer_insertion(&mut seed, m)
            } else {
                ungapped_case(&mut seed, m, subs)
            };
            if case % 5 == 0 {
                // Another place: the read against an unrelated window.
                for x in window.iter_mut() {
                    *x = (rng(&mut seed) % 4) as u8;
                }
            }
            for mode in [Mode::EndToEnd, Mode::Local] {
                let Some(bound) = local_score_bound(&read, &window, mode, None) else {
                    assert!(read.len() > 250 || read.iter().chain(&window).any(|&c| c > 3));
                    continue;
                };
                let exact = local_score(&read, &window, mode);
                assert!(bound >= exact, "case {case} {mode:?}: {bound} < {exact}");
                // Stopped early at a threshold: still a bound, on the same
                // side of the threshold.
                let t = exact - 30 + (rng(&mut seed) % 60) as i32;
                let early = local_score_bound(&read, &window, mode, Some(t)).unwrap();
                assert!(
                    early >= bound && (early < t) == (bound < t),
                    "case {case} {mode:?}"
                );
                assert!(bound >= sw(&read, &window, mode), "case {case} {mode:?}");
                if case % 5 == 0 {
                    slack.push(bound - exact);
                }
            }
        }
        slack.sort_unstable();
        eprintln!(
            "slack on unrelated windows, median {}",
            slack[slack.len() / 2]
        );
        assert!(slack[slack.len() / 2] <= 10, "{slack:?}");
    }
}
