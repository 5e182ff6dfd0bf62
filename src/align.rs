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
    if read.is_empty() || window.is_empty() {
        return None;
    }
    let sc = Scoring::of(mode);
    match mode {
        Mode::EndToEnd => semi_global(read, window, &sc),
        Mode::Local => {
            let local = smith_waterman(read, window, &sc)?;
            let clipped = local.clipped_ends();
            if clipped == 0 {
                return Some(local);
            }
            Some(match semi_global(read, window, &sc) {
                Some(whole) if whole.score >= local.score - sc.clip * clipped => whole,
                _ => local,
            })
        }
    }
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
/// alignment): the best local alignment first, then its clipped read ends
/// aligned whole, each against the window beyond it, with the window's far
/// end free (block-aligner's free query-start gaps; its free query-end gaps
/// give wrong results, see the tests). `None` when nothing scores above 0
/// in the dynamic program (block-aligner keeps only positive maxima).
fn semi_global(read: &[u8], window: &[u8], sc: &Scoring) -> Option<Extended> {
    let core = local_core(read, window, sc)?;
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
    Some(finish(read, window, ref_start, ops, sc))
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

/// The best local alignment: read `qs..qe` against window `rs..re`.
struct Core {
    qs: usize,
    qe: usize,
    rs: usize,
    re: usize,
    ops: Vec<(Op, u32)>,
}

/// Smith-Waterman by block-aligner (local start, X-drop with no drop):
/// `None` when no alignment scores above 0.
fn local_core(read: &[u8], window: &[u8], sc: &Scoring) -> Option<Core> {
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
        return None;
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
    Some(Core {
        qs,
        qe,
        rs,
        re,
        ops,
    })
}

/// The best-scoring part of the read against any part of the window.
fn smith_waterman(read: &[u8], window: &[u8], sc: &Scoring) -> Option<Extended> {
    let c = local_core(read, window, sc)?;
    let mut all = Vec::with_capacity(c.ops.len() + 2);
    if c.qs > 0 {
        all.push((Op::Soft, c.qs as u32));
    }
    all.extend(c.ops);
    if c.qe < read.len() {
        all.push((Op::Soft, (read.len() - c.qe) as u32));
    }
    Some(finish(read, window, c.rs, all, sc))
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
}
