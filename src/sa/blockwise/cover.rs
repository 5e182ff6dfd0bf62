//! The difference cover: its residues and the shift that brings two positions into the sample.

use std::sync::OnceLock;

use crate::error::{Error, Result};

/// Smallest and largest period accepted by [`cover`].
pub const V_MIN: usize = 4;
/// See [`V_MIN`].
pub const V_MAX: usize = 4096;

/// A difference cover of `Z_v` for `v` a power of two from 4 to 4096, sorted,
/// containing 0. Computed once per `v` (greedy: repeatedly add the residue
/// that covers the most differences not yet covered, the smallest on ties;
/// or the square grid `{0..m} ∪ m·{0..v/m}` with `m = 2^ceil(log2(v)/2)`
/// when that is smaller). Panics for other `v`. Sizes for `v` = 4, 8, ...,
/// 4096: 3, 4, 5, 7, 11, 15, 21, 31, 44, 66, 99 (`sqrt(1.5 v)`: 2.4 to 78;
/// Colbourn & Ling's construction, which Kärkkäinen and bowtie use, would
/// save up to a fifth).
pub fn cover(v: usize) -> Vec<usize> {
    assert!(
        v.is_power_of_two() && (V_MIN..=V_MAX).contains(&v),
        "difference cover period {v} is not a power of two from {V_MIN} to {V_MAX}"
    );
    static CACHE: [OnceLock<Vec<usize>>; 11] = [const { OnceLock::new() }; 11];
    CACHE[v.trailing_zeros() as usize - 2]
        .get_or_init(|| {
            let greedy = greedy_cover(v);
            let grid = grid_cover(v);
            if grid.len() < greedy.len() {
                grid
            } else {
                greedy
            }
        })
        .clone()
}

/// Greedy difference cover of `Z_v`.
fn greedy_cover(v: usize) -> Vec<usize> {
    let mask = v - 1;
    let mut d = vec![0usize];
    let mut member = vec![false; v];
    member[0] = true;
    let mut covered = vec![false; v];
    covered[0] = true;
    let mut left = v - 1;
    // stamp[x] == round: difference x already counted for this candidate.
    let mut stamp = vec![0usize; v];
    let mut round = 0;
    while left > 0 {
        let mut best = (0, 0);
        for (c, _) in member.iter().enumerate().skip(1).filter(|&(_, &m)| !m) {
            round += 1;
            let mut gain = 0;
            for &a in &d {
                for x in [(c + v - a) & mask, (a + v - c) & mask] {
                    if !covered[x] && stamp[x] != round {
                        stamp[x] = round;
                        gain += 1;
                    }
                }
            }
            if gain > best.0 {
                best = (gain, c);
            }
        }
        let c = best.1;
        for &a in &d {
            for x in [(c + v - a) & mask, (a + v - c) & mask] {
                if !covered[x] {
                    covered[x] = true;
                    left -= 1;
                }
            }
        }
        d.push(c);
        member[c] = true;
    }
    d.sort_unstable();
    d
}

/// The square-grid difference cover: `d = q·m + r` is `(q+1)·m - (m - r)`.
fn grid_cover(v: usize) -> Vec<usize> {
    let m = 1usize << v.trailing_zeros().div_ceil(2);
    let mut d: Vec<usize> = (0..m).chain((0..v / m).map(|q| q * m)).collect();
    d.sort_unstable();
    d.dedup();
    d
}

/// A difference cover with the tables [`Cover::delta`] needs.
#[derive(Clone, Debug)]
pub struct Cover {
    pub(super) v: usize,
    pub(super) d: Vec<usize>,
    /// Index in `d` of each residue, `u32::MAX` for residues not in `d`.
    pub(super) index: Vec<u32>,
    /// For each difference `e`, the `a` in `D` with `a + e mod v` in `D`:
    /// `pairs[start[e]..start[e + 1]]`.
    pub(super) start: Vec<u32>,
    pub(super) pairs: Vec<u32>,
}

impl Cover {
    /// The cover of [`cover`]`(v)`; an error for a `v` it does not accept.
    pub fn new(v: usize) -> Result<Self> {
        if !(v.is_power_of_two() && (V_MIN..=V_MAX).contains(&v)) {
            return Err(Error::SuffixArray(format!(
                "blockwise: difference cover period {v} is not a power of two from {V_MIN} to {V_MAX}"
            )));
        }
        let d = cover(v);
        let mut index = vec![u32::MAX; v];
        for (x, &a) in d.iter().enumerate() {
            index[a] = x as u32;
        }
        let mut start = Vec::with_capacity(v + 1);
        let mut pairs = Vec::new();
        for e in 0..v {
            start.push(pairs.len() as u32);
            pairs.extend(
                d.iter()
                    .filter(|&&a| index[(a + e) % v] != u32::MAX)
                    .map(|&a| a as u32),
            );
        }
        start.push(pairs.len() as u32);
        Ok(Cover {
            v,
            d,
            index,
            start,
            pairs,
        })
    }

    /// The period `v`.
    pub fn period(&self) -> usize {
        self.v
    }

    /// The residues in the cover, sorted.
    pub fn elements(&self) -> &[usize] {
        &self.d
    }

    /// The tables of [`crate::sa::steps::CoverSample`]: the index of each
    /// residue in the cover (`u32::MAX` when not in it), and for each
    /// difference the start of its pairs, and the pairs.
    pub fn tables(&self) -> (&[u32], &[u32], &[u32]) {
        (&self.index, &self.start, &self.pairs)
    }

    /// The smallest `k < v` with `(i + k) mod v` and `(j + k) mod v` both in
    /// the cover.
    #[inline]
    pub fn delta(&self, i: usize, j: usize) -> usize {
        crate::sa::steps::cover_delta(self.v as u64, &self.start, &self.pairs, i as u64, j as u64)
            as usize
    }
}
