//! Upper bounds of a window's best score, cheaper than its dynamic
//! program: `local_score_bound` and `end_to_end_bound` (AVX2 or scalar rows).

#[cfg(doc)]
use super::extend::local_score;
use super::{Mode, Scoring};

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
pub(super) const BOUND_VECTOR: usize = 32;

/// The code of [`local_score_bound`]'s padding (no read base has it).
pub(super) const PAD_CODE: u8 = 0xff;

/// [`local_score_bound`]'s scores as its byte cells take them.
#[derive(Clone, Copy)]
pub(super) struct BoundCosts {
    pub(super) hit: u8,
    pub(super) miss: u8,
    pub(super) hop: u8,
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
pub(super) fn bound_rows(read: &[u8], window: &[u8], c: BoundCosts, decide: Option<i32>) -> i32 {
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
