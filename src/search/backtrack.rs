//! Backtracking over the text's index alone: the reference the searches are tested against.

use super::Found;
use crate::fm::{Interval, RankIndex};

/// Reference implementation for tests and benchmarks: backtracking over
/// the text's index alone (right to left, every base at every position),
/// pruned only by the mismatch budget. Same output as [`search`].
pub fn backtrack(fm: &RankIndex<'_>, codes: &[u8], k: u8, out: &mut Vec<Found>) -> u64 {
    struct Bt<'s, 'a> {
        fm: &'s RankIndex<'a>,
        codes: &'s [u8],
        k: u8,
        out: &'s mut Vec<Found>,
        work: u64,
    }
    impl Bt<'_, '_> {
        fn go(&mut self, at: usize, iv: Interval, mm: u8) {
            if at == 0 {
                self.out.push(Found {
                    rows: iv,
                    mismatches: mm,
                });
                return;
            }
            let want = self.codes[at - 1];
            for c in 0..4u8 {
                let mm2 = mm + u8::from(c != want);
                if mm2 > self.k {
                    continue;
                }
                self.work += 1;
                let nv = self.fm.extend(iv, c);
                if !nv.is_empty() {
                    self.go(at - 1, nv, mm2);
                }
            }
        }
    }
    let start = out.len();
    let mut bt = Bt {
        fm,
        codes,
        k,
        out,
        work: 0,
    };
    if !codes.is_empty() {
        bt.go(codes.len(), fm.full(), 0);
    }
    let work = bt.work;
    out[start..].sort_unstable();
    work
}
