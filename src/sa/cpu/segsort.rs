//! The CPU backend's segmented sort: every segment's piece in a block
//! sorted, then merges across the block boundaries that segments cross.

use rayon::prelude::*;

use super::shared::split_at_ends;
use crate::sa::steps::{Elem, SegSortReport, Word};

/// [`crate::sa::steps::Backend::segmented_sort`] of `keys`/`vals` (segments
/// marked by `heads`) with blocks of `block` elements.
pub(super) fn segmented_sort<K: Word, V: Elem>(
    heads: &[u8],
    keys: &mut [K],
    vals: &mut [V],
    block: usize,
) -> SegSortReport {
    let n = keys.len();
    assert!(
        n == vals.len() && n == heads.len(),
        "segmented sort: lengths differ"
    );
    assert!(block > 0, "segmented sort: block size 0");
    let mut report = SegSortReport::default();
    // Block sort: every piece of a segment inside a block.
    keys.par_chunks_mut(block)
        .zip(vals.par_chunks_mut(block))
        .zip(heads.par_chunks(block))
        .for_each_init(Vec::new, |scratch, ((k, v), h)| {
            let mut s = 0;
            for e in 1..=k.len() {
                if e == k.len() || h[e] != 0 {
                    sort_run(&mut k[s..e], &mut v[s..e], scratch);
                    s = e;
                }
            }
        });
    // Boundaries a segment crosses.
    let mut active: Vec<usize> = (block..n)
        .step_by(block)
        .filter(|&b| heads[b] == 0)
        .collect();
    report.crossing = active.len() as u64;
    let mut width = block;
    while !active.is_empty() {
        report.merge_rounds += 1;
        let (now, later): (Vec<usize>, Vec<usize>) =
            active.iter().partition(|&&b| (b / width) % 2 == 1);
        // Each merge lies inside its own pair of blocks [b - w, b + w).
        let ranges: Vec<(usize, usize, usize)> = now
            .iter()
            .map(|&b| {
                let lo = b - width;
                let hi = (b + width).min(n);
                let s = (lo..b).rev().find(|&i| heads[i] != 0).unwrap_or(lo);
                let e = (b + 1..hi).find(|&i| heads[i] != 0).unwrap_or(hi);
                (s, b, e)
            })
            .collect();
        // Ascending and disjoint: cut both arrays at every range's start
        // and end, and merge the pieces inside ranges (every second one).
        let cuts: Vec<usize> = ranges.iter().flat_map(|&(s, _, e)| [s, e]).collect();
        let ks = split_at_ends(keys, &cuts).into_iter().skip(1).step_by(2);
        let vs = split_at_ends(vals, &cuts).into_iter().skip(1).step_by(2);
        let merges: Vec<_> = ranges.iter().zip(ks.zip(vs)).collect();
        merges.into_par_iter().for_each(|(&(s, b, _), (k, v))| {
            merge_runs(k, v, b - s);
        });
        active = later;
        width *= 2;
    }
    report
}

/// Sorts `keys` with `vals` by (key, value).
fn sort_run<K: Word, V: Elem>(keys: &mut [K], vals: &mut [V], scratch: &mut Vec<(K, V)>) {
    if keys.len() < 2 {
        return;
    }
    scratch.clear();
    scratch.extend(keys.iter().copied().zip(vals.iter().copied()));
    scratch.sort_unstable();
    for (i, &(k, v)) in scratch.iter().enumerate() {
        keys[i] = k;
        vals[i] = v;
    }
}

/// Merges the sorted runs `[0, mid)` and `[mid, len)` of `keys`/`vals` by
/// (key, value).
fn merge_runs<K: Word, V: Elem>(keys: &mut [K], vals: &mut [V], mid: usize) {
    if mid == 0 || mid == keys.len() || (keys[mid - 1], vals[mid - 1]) <= (keys[mid], vals[mid]) {
        return;
    }
    let lk = keys[..mid].to_vec();
    let lv = vals[..mid].to_vec();
    let (mut i, mut j, mut o) = (0, mid, 0);
    while i < lk.len() && j < keys.len() {
        if (lk[i], lv[i]) <= (keys[j], vals[j]) {
            keys[o] = lk[i];
            vals[o] = lv[i];
            i += 1;
        } else {
            keys[o] = keys[j];
            vals[o] = vals[j];
            j += 1;
        }
        o += 1;
    }
    while i < lk.len() {
        keys[o] = lk[i];
        vals[o] = lv[i];
        i += 1;
        o += 1;
    }
}
