//! block-aligner's dynamic programs: Smith-Waterman (`local_core`), the
//! whole read semi-global (`whole_read`), `extend` and `local_score`.

use block_aligner::cigar::{Cigar, Operation};
use block_aligner::scan_block::{AlignResult, Block, PaddedBytes};
use block_aligner::scores::NucMatrix;

use super::describe::describe;
use super::{Extended, Mode, Op, Scoring, ref_span};

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
pub(super) fn finish(
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
