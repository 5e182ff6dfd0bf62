//! One locus of a read aligned ([`extend_at`], [`aligned`]: the window,
//! where the read starts in it, the base qualities as the mode scores
//! them) and the alignments of a read tidied ([`dedup`], [`read_span`]).

use crate::align::{self, Mode, Scoring};
use crate::sam::Aligned;

/// The reference position `x` aligns read base `qpos` (SEQ coordinates)
/// to, if it aligns it.
pub(in crate::map) fn ref_at(x: &Aligned, qpos: u32) -> Option<u64> {
    let (mut q, mut r) = (0u32, x.pos);
    for &(op, n) in &x.cigar {
        match op {
            align::Op::Soft | align::Op::Ins => {
                if qpos < q + n {
                    return None;
                }
                q += n;
            }
            align::Op::Del => r += u64::from(n),
            align::Op::Match => {
                if qpos < q + n {
                    return Some(r + u64::from(qpos - q));
                }
                q += n;
                r += u64::from(n);
            }
        }
    }
    None
}

/// Where a reference window lies: contig, first position, strand.
#[derive(Clone, Copy)]
pub(in crate::map) struct Place {
    pub(in crate::map) contig: u32,
    pub(in crate::map) start: u64,
    pub(in crate::map) rev: bool,
    /// Read bases left out of the alignment and soft-clipped: those that
    /// would lie before the contig's first base ([`skip_before`]).
    pub(in crate::map) skip: usize,
}

/// Read bases (local mode) that lie before the contig's start on the
/// diagonal `diag` (contig position minus read position), for a window cut
/// at the contig's start: they cannot align there, and leaving them out
/// keeps the read's path at the window's corner, where the aligner's first
/// block starts (a path `-diag` bases down the read from it is beyond that
/// block, and the aligner found only its tail). End-to-end aligns every
/// base, so nothing is left out.
pub(in crate::map) fn skip_before(diag: i64, m: usize, mode: Mode) -> usize {
    if mode == Mode::Local && diag < 0 {
        (diag.unsigned_abs() as usize).min(m)
    } else {
        0
    }
}

/// `codes` (the read on strand `at.rev`) extended in `window`: the
/// alignment, AS by `quals`, if it scores at least `min`.
pub(in crate::map) fn extend_at(
    codes: &[u8],
    window: &[u8],
    at: Place,
    mode: Mode,
    quals: &Quals,
    min: i32,
) -> Option<Aligned> {
    let e = align::extend(&codes[at.skip..], window, mode)?;
    aligned(codes, window, at, mode, quals, min, e)
}

/// [`extend_at`]'s record of the extension `e` of `codes[at.skip..]` in
/// `window`.
pub(in crate::map) fn aligned(
    codes: &[u8],
    window: &[u8],
    at: Place,
    mode: Mode,
    quals: &Quals,
    min: i32,
    e: align::Extended,
) -> Option<Aligned> {
    let skip = at.skip;
    let score = if skip == 0 {
        quals.score(codes, at.rev, window, &e, mode)
    } else {
        e.score
    };
    let mut cigar = e.cigar;
    if skip > 0 {
        match cigar.first_mut() {
            Some((align::Op::Soft, n)) => *n += skip as u32,
            _ => cigar.insert(0, (align::Op::Soft, skip as u32)),
        }
    }
    (score >= min).then(|| Aligned {
        contig: at.contig,
        pos: at.start + e.ref_start as u64,
        rev: at.rev,
        score,
        cigar,
        nm: e.nm,
        md: e.md,
    })
}

/// Base qualities for quality-aware scores (end-to-end), per strand.
pub(in crate::map) struct Quals {
    /// As given and reversed (the reverse strand's SEQ order); empty when
    /// scores do not use them.
    fwd: Vec<u8>,
    rev: Vec<u8>,
}

impl Quals {
    pub(in crate::map) fn new(qual: Option<&[u8]>, mode: Mode) -> Quals {
        match qual {
            Some(q) if Scoring::of(mode).quality_aware => Quals {
                fwd: q.to_vec(),
                rev: q.iter().rev().copied().collect(),
            },
            _ => Quals {
                fwd: Vec::new(),
                rev: Vec::new(),
            },
        }
    }

    /// What AS charges a mismatch at each base of the read on strand `rev`
    /// (in that strand's order) of `len` bases: by quality where [`Quals::score`]
    /// rescores by it, else the mode's mismatch.
    pub(in crate::map) fn penalties(&self, rev: bool, len: usize, sc: &Scoring) -> Vec<u8> {
        let q = if rev { &self.rev } else { &self.fwd };
        if q.len() != len {
            return vec![sc.mismatch as u8; len];
        }
        q.iter()
            .map(|&c| sc.mismatch_at(c.saturating_sub(33)) as u8)
            .collect()
    }

    /// AS of `e`: rescored by quality when the mode charges by it.
    fn score(
        &self,
        codes: &[u8],
        rev: bool,
        window: &[u8],
        e: &align::Extended,
        mode: Mode,
    ) -> i32 {
        let q = if rev { &self.rev } else { &self.fwd };
        if q.len() != codes.len() {
            return e.score;
        }
        align::score_with_quality(codes, q, window, e.ref_start, &e.cigar, &Scoring::of(mode))
    }
}

/// Best first, ties in reference order; an alignment that aligns its first
/// or middle aligned read base where a better one does (the same path,
/// found from two anchors) is dropped. Alignments of the read to two copies
/// of a tandem repeat both stay: they are alternatives (XS, MAPQ).
pub(in crate::map) fn dedup(alns: &mut Vec<Aligned>) {
    alns.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then_with(|| (a.contig, a.pos, a.rev).cmp(&(b.contig, b.pos, b.rev)))
    });
    let mut kept: Vec<Aligned> = Vec::with_capacity(alns.len());
    for a in alns.drain(..) {
        let len: u32 = a.cigar.iter().filter(|o| o.0.reads()).map(|o| o.1).sum();
        let (first, clip_end) = align::clips(&a.cigar);
        let last = len - clip_end;
        let probes = [first, (first + last) / 2];
        let dup = kept.iter().any(|k| {
            k.rev == a.rev
                && k.contig == a.contig
                && probes
                    .iter()
                    .any(|&q| ref_at(&a, q).is_some() && ref_at(k, q) == ref_at(&a, q))
        });
        if !dup {
            kept.push(a);
        }
    }
    *alns = kept;
}

/// Read bases an alignment covers, in the read's own orientation.
pub(in crate::map) fn read_span(a: &Aligned, len: u32) -> (u32, u32) {
    let (clip_start, clip_end) = align::clips(&a.cigar);
    let (s, e) = (clip_start, len - clip_end);
    if a.rev { (len - e, len - s) } else { (s, e) }
}
