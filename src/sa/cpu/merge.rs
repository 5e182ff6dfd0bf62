//! The CPU backend's merges by merge path: ascending, and the DC3 (skew)
//! comparison with prefetched ranks, for packed DNA from the runs of the
//! first two characters.

use rayon::prelude::*;

use super::{AHEAD, Cpu, GRAIN, base, pieces_mut, prefetch, zeroed};
use crate::sa::steps::{Chars, RankLayout, Word};

/// Merge path of two lists sorted by `first` (`first(x, y)`: `x`, of `a`,
/// goes before `y`, of `b`).
pub(super) fn merge_with<W: Word>(a: &[W], b: &[W], first: impl Fn(W, W) -> bool + Sync) -> Vec<W> {
    let total = a.len() + b.len();
    let mut out: Vec<W> = zeroed(total);
    pieces_mut(&mut out).for_each(|(start, o)| {
        // Merge path: how many of the first `start` outputs come from a.
        let split = |d: usize| {
            let (mut lo, mut hi) = (d.saturating_sub(b.len()), d.min(a.len()));
            while lo < hi {
                let mid = (lo + hi) / 2;
                if first(a[mid], b[d - mid - 1]) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        let mut i = split(start);
        let mut j = start - i;
        for o in o.iter_mut() {
            let take_a = j == b.len() || (i < a.len() && first(a[i], b[j]));
            *o = if take_a {
                i += 1;
                a[i - 1]
            } else {
                j += 1;
                b[j - 1]
            };
        }
    });
    out
}

/// The first two characters (0 past the end, else symbol + 1) of the
/// suffixes of a sorted list, from where they change: a list in suffix order
/// has them non-decreasing, so a count of each pair over the list's
/// positions gives the runs, and the merge reads no text for them.
struct Runs {
    /// `ends[k]`: one past the last list index whose pair has code `k`
    /// (`5 * first + second`).
    ends: [usize; 25],
}

/// A piece's place in [`Runs`].
#[derive(Clone, Copy)]
struct RunCursor {
    code: usize,
    start: usize,
    end: usize,
}

impl Runs {
    const START: RunCursor = RunCursor {
        code: 0,
        start: 1,
        end: 0,
    };

    /// The pair code of list index `i`, moving `cur` there.
    #[inline(always)]
    fn code(&self, cur: &mut RunCursor, i: usize) -> u64 {
        if i < cur.start || i >= cur.end {
            let code = self.ends.iter().position(|&e| e > i).unwrap_or(24);
            *cur = RunCursor {
                code,
                start: if code == 0 { 0 } else { self.ends[code - 1] },
                end: self.ends[code],
            };
        }
        cur.code as u64
    }

    /// Whether lists of `a` and `b` elements are every position `p % 3 ==
    /// 0` and every `p % 3 != 0` of a text of `n` bases (the DC3 merge's
    /// lists have no other positions), with ranks that fit
    /// [`merge_dc3_runs`]' keys.
    fn apply(a: usize, b: usize, n: u64) -> bool {
        a as u64 == n.div_ceil(3) && b as u64 == n - n.div_ceil(3) && n < 1 << 58
    }

    /// The runs of the lists of positions `p % 3 == 0` and `p % 3 != 0` of
    /// the packed text of `n` bases.
    fn of_text(packed: &[u64], n: u64) -> (Runs, Runs) {
        let c = |p: u64| if p >= n { 0 } else { base(packed, p) + 1 };
        let hist = (0..n.div_ceil(GRAIN as u64))
            .into_par_iter()
            .map(|k| {
                let mut h = [[0usize; 25]; 2];
                let (s, e) = (k * GRAIN as u64, ((k + 1) * GRAIN as u64).min(n));
                let mut next = c(s);
                for p in s..e {
                    let here = next;
                    next = c(p + 1);
                    h[usize::from(p % 3 != 0)][(5 * here + next) as usize] += 1;
                }
                h
            })
            .reduce(
                || [[0usize; 25]; 2],
                |mut x, y| {
                    for (xs, ys) in x.iter_mut().zip(&y) {
                        for (a, b) in xs.iter_mut().zip(ys) {
                            *a += b;
                        }
                    }
                    x
                },
            );
        let runs = |h: &[usize; 25]| {
            let mut ends = [0usize; 25];
            let mut sum = 0;
            for (e, &x) in ends.iter_mut().zip(h) {
                sum += x;
                *e = sum;
            }
            Runs { ends }
        };
        (runs(&hist[0]), runs(&hist[1]))
    }
}

/// The DC3 merge (see [`Order::Dc3`]) of `a` (`p % 3 == 0`) and `b`
/// (`p % 3 != 0`). Each element's characters and ranks are read once, when it
/// becomes the head of its list, and the ranks `AHEAD` elements on are
/// prefetched, so the random reads overlap.
fn merge_dc3<W: Word>(
    a: &[W],
    b: &[W],
    c: impl Fn(u64) -> u64 + Sync,
    r: impl Fn(u64) -> u64 + Sync,
    pf: impl Fn(u64, u64) + Sync,
) -> Vec<W> {
    // a-key: (c[i], c[i+1], r[i+1], r[i+2]); b-key: (j%3, c[j], c[j+1], r[j + 1 or 2]).
    let ka = |i: u64| (c(i), c(i + 1), r(i + 1), r(i + 2));
    let kb = |j: u64| {
        if j % 3 == 1 {
            (1, c(j), 0, r(j + 1))
        } else {
            (2, c(j), c(j + 1), r(j + 2))
        }
    };
    let less = |x: (u64, u64, u64, u64), y: (u64, u64, u64, u64)| {
        if y.0 == 1 {
            (x.0, x.2) < (y.1, y.3)
        } else {
            (x.0, x.1, x.3) < (y.1, y.2, y.3)
        }
    };
    let total = a.len() + b.len();
    let mut out: Vec<W> = zeroed(total);
    pieces_mut(&mut out).for_each(|(start, o)| {
        let (mut lo, mut hi) = (start.saturating_sub(b.len()), start.min(a.len()));
        while lo < hi {
            let mid = (lo + hi) / 2;
            if less(ka(a[mid].to_u64()), kb(b[start - mid - 1].to_u64())) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let (mut i, mut j) = (lo, start - lo);
        let key_a = |i: usize| a.get(i).map(|&p| ka(p.to_u64()));
        let key_b = |j: usize| b.get(j).map(|&p| kb(p.to_u64()));
        let (mut x, mut y) = (key_a(i), key_b(j));
        for o in o.iter_mut() {
            if let Some(&p) = a.get(i + AHEAD) {
                pf(p.to_u64(), p.to_u64() + 1);
                pf(p.to_u64(), p.to_u64() + 2);
            }
            if let Some(&p) = b.get(j + AHEAD) {
                pf(p.to_u64(), p.to_u64() + 1 + u64::from(p.to_u64() % 3 == 2));
            }
            let take_a = match (x, y) {
                (Some(x), Some(y)) => less(x, y),
                (Some(_), None) => true,
                _ => false,
            };
            *o = if take_a {
                i += 1;
                x = key_a(i);
                a[i - 1]
            } else {
                j += 1;
                y = key_b(j);
                b[j - 1]
            };
        }
    });
    out
}

/// [`merge_dc3`] for packed DNA with [`Runs`]: every comparison is one
/// integer comparison of `(characters << 59) | rank` keys (ranks of `n <
/// 2^58` bases fit 59 bits), the characters come from the runs, and only
/// the ranks of the two heads are read, each when its list advances, the
/// one `AHEAD` elements on prefetched then.
fn merge_dc3_runs<W: Word>(
    a: &[W],
    b: &[W],
    runs: &(Runs, Runs),
    r: impl Fn(u64) -> u64 + Sync,
    pf: impl Fn(u64) + Sync,
) -> Vec<W> {
    const SHIFT: u32 = 59;
    // a: (c[i], r[i+1]) and (c[i] c[i+1], r[i+2]); b: its one key and
    // whether it compares with the first (j % 3 == 1) or the second.
    #[inline(always)]
    fn key_a<W: Word>(
        a: &[W],
        ra: &Runs,
        cur: &mut RunCursor,
        r: &impl Fn(u64) -> u64,
        k: usize,
    ) -> (u64, u64) {
        let i = a[k].to_u64();
        let code = ra.code(cur, k);
        (((code / 5) << SHIFT) | r(i + 1), (code << SHIFT) | r(i + 2))
    }
    #[inline(always)]
    fn key_b<W: Word>(
        b: &[W],
        rb: &Runs,
        cur: &mut RunCursor,
        r: &impl Fn(u64) -> u64,
        k: usize,
    ) -> (u64, bool) {
        let j = b[k].to_u64();
        let code = rb.code(cur, k);
        if j % 3 == 1 {
            (((code / 5) << SHIFT) | r(j + 1), true)
        } else {
            ((code << SHIFT) | r(j + 2), false)
        }
    }
    let (ra, rb) = (&runs.0, &runs.1);
    // The rank each list's key reads (an a-key's two share a cache line).
    let pf_a = |q: &W| pf(q.to_u64() + 1);
    let pf_b = |q: &W| pf(q.to_u64() + 1 + u64::from(q.to_u64() % 3 == 2));
    let total = a.len() + b.len();
    let mut out: Vec<W> = zeroed(total);
    pieces_mut(&mut out).for_each(|(start, o)| {
        let (mut ca, mut cb) = (Runs::START, Runs::START);
        let less = |ka: (u64, u64), kb: (u64, bool)| (if kb.1 { ka.0 } else { ka.1 }) < kb.0;
        let (mut lo, mut hi) = (start.saturating_sub(b.len()), start.min(a.len()));
        while lo < hi {
            let mid = (lo + hi) / 2;
            if less(
                key_a(a, ra, &mut ca, &r, mid),
                key_b(b, rb, &mut cb, &r, start - mid - 1),
            ) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let (mut i, mut j) = (lo, start - lo);
        // The piece's output, slot by slot.
        let mut slots = o.iter_mut();
        a.iter().skip(i).take(AHEAD).for_each(pf_a);
        b.iter().skip(j).take(AHEAD).for_each(pf_b);
        if i < a.len() && j < b.len() {
            let mut x = key_a(a, ra, &mut ca, &r, i);
            let mut y = key_b(b, rb, &mut cb, &r, j);
            for slot in slots.by_ref() {
                if less(x, y) {
                    *slot = a[i];
                    i += 1;
                    if i == a.len() {
                        break;
                    }
                    if let Some(q) = a.get(i + AHEAD) {
                        pf_a(q);
                    }
                    x = key_a(a, ra, &mut ca, &r, i);
                } else {
                    *slot = b[j];
                    j += 1;
                    if j == b.len() {
                        break;
                    }
                    if let Some(q) = b.get(j + AHEAD) {
                        pf_b(q);
                    }
                    y = key_b(b, rb, &mut cb, &r, j);
                }
            }
        }
        // One list is used up: the rest of the piece comes from the other.
        for slot in slots {
            *slot = if i < a.len() {
                i += 1;
                a[i - 1]
            } else {
                j += 1;
                b[j - 1]
            };
        }
    });
    out
}

/// The DC3 merge of `a` (`p % 3 == 0`) and `b` (`p % 3 != 0`) by
/// [`crate::sa::steps::Order::Dc3`] with the given text, length, ranks and layout.
pub(super) fn merge_dc3_order<W: Word>(
    a: &[W],
    b: &[W],
    text: &Chars<'_, Cpu, W>,
    n: u64,
    rank: &[W],
    layout: RankLayout,
) -> Vec<W> {
    // One monomorphic merge per (text, layout) pair, so the
    // character and rank reads inline.
    macro_rules! ranks {
        ($slot:expr) => {{
            let slot = $slot;
            let r = move |p: u64| {
                if p >= n {
                    0
                } else {
                    rank[slot(p) as usize].to_u64()
                }
            };
            let pf = move |q: u64| {
                if q < n {
                    prefetch(&rank[slot(q) as usize]);
                }
            };
            (r, pf)
        }};
    }
    macro_rules! by_layout {
        ($go:ident) => {
            match layout {
                RankLayout::Identity => $go!(ranks!(|p: u64| p)),
                RankLayout::Interleaved => {
                    $go!(ranks!(|p: u64| 2 * (p / 3) + p % 3 - 1))
                }
                RankLayout::Split { n0 } => $go!(ranks!(move |p: u64| {
                    if p % 3 == 1 { p / 3 } else { n0 + p / 3 }
                })),
            }
        };
    }
    // The merge that reads characters `c` from the text (and
    // prefetches them with `cpf`).
    macro_rules! by_text {
        ($c:expr, $cpf:expr) => {{
            let (c, cpf) = ($c, $cpf);
            macro_rules! go {
                ($rpf:expr) => {{
                    let (r, rpf) = $rpf;
                    merge_dc3(a, b, c, r, |p, q| {
                        cpf(p);
                        rpf(q)
                    })
                }};
            }
            by_layout!(go)
        }};
    }
    match text {
        // The lists hold every position of their classes: the
        // characters come from runs.
        Chars::Packed(t) if Runs::apply(a.len(), b.len(), n) => {
            let runs = Runs::of_text(t, n);
            macro_rules! go {
                ($rpf:expr) => {{
                    let (r, pf) = $rpf;
                    merge_dc3_runs(a, b, &runs, r, pf)
                }};
            }
            by_layout!(go)
        }
        Chars::Packed(t) => by_text!(
            |p: u64| if p >= n { 0 } else { base(t, p) + 1 },
            |p: u64| prefetch(&t[(p / 32) as usize])
        ),
        Chars::Symbols(sy) => by_text!(
            |p: u64| if p >= n { 0 } else { sy[p as usize].to_u64() },
            |p: u64| if p < n {
                prefetch(&sy[p as usize])
            }
        ),
    }
}
