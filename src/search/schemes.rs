//! Search schemes: the parts of a read, each search's plan, one search and many in lockstep.

use super::backtrack::backtrack;
use super::{BiIndex, BiInterval, Found, MAX_MISMATCHES};
use crate::dna::NO_BASE;

/// Part `p` of `k + 1` of a read of `m` bases: `[start, end)`, sizes as
/// equal as possible, the longer parts first.
pub fn part(m: usize, k: usize, p: usize) -> (usize, usize) {
    let parts = k + 1;
    let (q, r) = (m / parts, m % parts);
    let start = p * q + p.min(r);
    (start, start + q + usize::from(p < r))
}

/// Search `i` of `k` mismatches: the parts in the order they are matched.
pub fn order(k: usize, i: usize) -> Vec<usize> {
    (i..=k).chain((0..i).rev()).collect()
}

/// Which way a bidirectional step extends the pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Direction {
    /// Prepend a base (backward search in the text's index).
    Left,
    /// Append a base (backward search in the reversed text's).
    Right,
}

/// One position of a search, in the order it is matched.
#[derive(Clone, Copy, Debug)]
struct Step {
    /// Position in the read.
    pub(super) pos: usize,
    /// Which way it extends the pattern.
    pub(super) dir: Direction,
    /// Its part (an index into `Search::parts`).
    pub(super) part: usize,
}

/// Where a part's positions sit among the steps, and the mismatches it
/// must carry.
#[derive(Clone, Copy, Debug, Default)]
struct PartSteps {
    /// First step of the part.
    pub(super) first: usize,
    /// Last step of the part.
    pub(super) last: usize,
    /// Minimum mismatches in the part.
    min_mm: u8,
}

/// State of one search: the read's codes, the bounds and the output.
pub(super) struct Search<'s, 'a> {
    pub(super) bi: &'s BiIndex<'a>,
    pub(super) codes: &'s [u8],
    pub(super) k: u8,
    /// Positions to match, in order.
    steps: Vec<Step>,
    /// Per part: its steps and minimum mismatches.
    parts: Vec<PartSteps>,
    pub(super) out: &'s mut Vec<Found>,
    /// Extension steps taken (for benchmarks).
    pub(super) work: u64,
}

impl Search<'_, '_> {
    pub(super) fn run(&mut self, s: usize, iv: BiInterval, mm: u8, mm_part: u8) {
        if s == self.steps.len() {
            self.out.push(Found {
                rows: iv.fwd,
                mismatches: mm,
            });
            return;
        }
        let Step { pos, dir, part } = self.steps[s];
        let PartSteps {
            first,
            last,
            min_mm,
        } = self.parts[part];
        let in_part = if s == first { 0 } else { mm_part };
        let want = self.codes[pos];
        let next = self.bi.extend(iv, dir);
        self.work += 1;
        // The read's own base first, then the substitutions (an N, code 4,
        // matches no base: all four are substitutions).
        for c in std::iter::once(want).chain((0..4).filter(|&c| c != want)) {
            if c >= NO_BASE {
                continue;
            }
            let sub = u8::from(c != want);
            let (mm2, part2) = (mm + sub, in_part + sub);
            if mm2 > self.k {
                continue;
            }
            // At the part's last position its minimum must be met.
            if s == last && part2 < min_mm {
                continue;
            }
            let nv = next[c as usize];
            if nv.len() == 0 {
                continue;
            }
            self.run(s + 1, nv, mm2, part2);
        }
    }
}

/// Every occurrence of `codes` (0..=3, 4 for N) with at most `k`
/// substitutions, as intervals of the text's index with their mismatch
/// counts; each occurrence is in exactly one interval. Also returns the
/// number of bidirectional steps taken.
pub fn search(bi: &BiIndex<'_>, codes: &[u8], k: u8, out: &mut Vec<Found>) -> u64 {
    let m = codes.len();
    let start = out.len();
    if m == 0 {
        return 0;
    }
    let k = k.min(MAX_MISMATCHES);
    if k as usize >= m {
        // Every m-mer of the text is within k: too short for k + 1 parts.
        return backtrack(&bi.fwd, codes, k, out);
    }
    let mut work = 0;
    for i in 0..=k as usize {
        work += scheme(bi, codes, k, i, out);
    }
    // Each alignment is in one interval already; sort for a stable order.
    out[start..].sort_unstable();
    work
}

/// Search `i` of the scheme for `k` mismatches on a read of `m` bases:
/// its steps in the order they are matched, each part's steps and
/// minimum mismatches, and how many steps (part `i`) are exact.
fn plan(m: usize, k: u8, i: usize, steps: &mut Vec<Step>, parts: &mut Vec<PartSteps>) -> usize {
    let kk = k as usize;
    steps.clear();
    parts.clear();
    parts.resize(kk + 1, PartSteps::default());
    for p in order(kk, i) {
        let (s, e) = part(m, kk, p);
        let first = steps.len();
        let step = |pos, dir| Step { pos, dir, part: p };
        if p > i {
            steps.extend((s..e).map(|x| step(x, Direction::Right)));
        } else {
            steps.extend((s..e).rev().map(|x| step(x, Direction::Left)));
        }
        // Parts left of the exact one carry at least one mismatch, so
        // that each alignment is found by one search only.
        parts[p] = PartSteps {
            first,
            last: steps.len() - 1,
            min_mm: u8::from(p < i),
        };
    }
    let (s, e) = part(m, kk, i);
    e - s
}

/// Search `i` of the scheme for `k` mismatches (`k < codes.len()`): part
/// `i` exact, then right to the last part, then left to the first, with at
/// least one mismatch in each part left of `i`. Returns the steps taken.
pub fn scheme(bi: &BiIndex<'_>, codes: &[u8], k: u8, i: usize, out: &mut Vec<Found>) -> u64 {
    let (mut steps, mut parts) = (Vec::with_capacity(codes.len()), Vec::new());
    let exact = plan(codes.len(), k, i, &mut steps, &mut parts);
    let mut srch = Search {
        bi,
        codes,
        k,
        steps,
        parts,
        out,
        work: 0,
    };
    srch.run_exact_then(exact);
    srch.work
}

/// A node of a search of [`schemes_many`]: the step it takes next, the
/// rows matched so far, the mismatches in all and in the current part.
#[derive(Clone, Copy, Debug)]
struct Node {
    pub(super) s: usize,
    pub(super) iv: BiInterval,
    pub(super) mm: u8,
    mm_part: u8,
}

/// One search of [`schemes_many`] in flight: its job, plan and the nodes
/// left to visit (depth first).
struct Lane {
    pub(super) job: usize,
    steps: Vec<Step>,
    parts: Vec<PartSteps>,
    /// Per part: the minimum mismatches of the parts matched after it.
    need_after: Vec<u8>,
    pub(super) exact: usize,
    stack: Vec<Node>,
}

/// Per job `(pattern, i)`, with `k < patterns[pattern].len()`: what
/// [`scheme`] finds, `lanes` searches in lockstep (each visits one node
/// per round, after prefetching the Occ lines it reads, so that the
/// searches' cache misses overlap). The same alignments as [`scheme`],
/// in another order.
pub fn schemes_many(
    bi: &BiIndex<'_>,
    patterns: &[&[u8]],
    jobs: &[(u32, u8)],
    k: u8,
    lanes: usize,
) -> Vec<Vec<Found>> {
    let mut out: Vec<Vec<Found>> = vec![Vec::new(); jobs.len()];
    let prefetch = |lane: &Lane| {
        if let Some(n) = lane.stack.last()
            && let Some(st) = lane.steps.get(n.s)
        {
            match st.dir {
                Direction::Left => {
                    bi.fwd.prefetch(n.iv.fwd.lo);
                    bi.fwd.prefetch(n.iv.fwd.hi);
                }
                Direction::Right => {
                    bi.rev.prefetch(n.iv.rev_lo);
                    bi.rev.prefetch(n.iv.rev_lo + n.iv.len());
                }
            }
        }
    };
    let mut next_job = 0;
    // Starts the next job in `lane` (its buffers reused); false when none
    // is left.
    let mut start = |lane: &mut Lane| -> bool {
        let Some(&(q, i)) = jobs.get(next_job) else {
            return false;
        };
        let m = patterns[q as usize].len();
        lane.job = next_job;
        lane.exact = plan(m, k, usize::from(i), &mut lane.steps, &mut lane.parts);
        lane.need_after.clear();
        lane.need_after.resize(lane.parts.len(), 0);
        let mut need = 0;
        for p in order(usize::from(k), usize::from(i)).into_iter().rev() {
            lane.need_after[p] = need;
            need += lane.parts[p].min_mm;
        }
        lane.stack.clear();
        lane.stack.push(Node {
            s: 0,
            iv: bi.full(),
            mm: 0,
            mm_part: 0,
        });
        next_job += 1;
        true
    };
    let mut active: Vec<Lane> = Vec::with_capacity(lanes.max(1));
    while active.len() < lanes.max(1) {
        let mut lane = Lane {
            job: 0,
            steps: Vec::new(),
            parts: Vec::new(),
            need_after: Vec::new(),
            exact: 0,
            stack: Vec::new(),
        };
        if !start(&mut lane) {
            break;
        }
        active.push(lane);
    }
    while !active.is_empty() {
        let mut x = 0;
        while x < active.len() {
            let lane = &mut active[x];
            let codes = patterns[jobs[lane.job].0 as usize];
            let n = lane.stack.pop().expect("a lane in flight has a node");
            if n.s == lane.steps.len() {
                out[lane.job].push(Found {
                    rows: n.iv.fwd,
                    mismatches: n.mm,
                });
            } else {
                let Step { pos, dir, part } = lane.steps[n.s];
                let want = codes[pos];
                if n.s < lane.exact {
                    // Part i: its own bases only (an N ends the search).
                    if want < NO_BASE {
                        let nv = bi.extend(n.iv, dir)[want as usize];
                        if nv.len() != 0 {
                            lane.stack.push(Node {
                                s: n.s + 1,
                                iv: nv,
                                mm: 0,
                                mm_part: 0,
                            });
                        }
                    }
                } else {
                    let PartSteps {
                        first,
                        last,
                        min_mm,
                    } = lane.parts[part];
                    let in_part = if n.s == first { 0 } else { n.mm_part };
                    let after = lane.need_after[part];
                    let next = bi.extend(n.iv, dir);
                    for c in 0..4u8 {
                        let sub = u8::from(c != want);
                        let (mm2, part2) = (n.mm + sub, in_part + sub);
                        if mm2 > k || (n.s == last && part2 < min_mm) {
                            continue;
                        }
                        // A node whose search cannot end within `k` (the
                        // parts still to match must carry mismatches of
                        // their own) finds nothing: [`scheme`] rejects its
                        // every path at a part's last step; here it is not
                        // visited.
                        let still = if n.s == last {
                            0
                        } else {
                            min_mm.saturating_sub(part2)
                        };
                        if mm2 + still + after > k {
                            continue;
                        }
                        let nv = next[c as usize];
                        if nv.len() == 0 {
                            continue;
                        }
                        lane.stack.push(Node {
                            s: n.s + 1,
                            iv: nv,
                            mm: mm2,
                            mm_part: part2,
                        });
                    }
                }
            }
            if lane.stack.is_empty() && !start(lane) {
                active.swap_remove(x);
                continue;
            }
            prefetch(&active[x]);
            x += 1;
        }
    }
    out
}

/// What [`scheme`] finds, as a list of its own.
pub fn scheme_found(bi: &BiIndex<'_>, codes: &[u8], k: u8, i: usize) -> Vec<Found> {
    let mut found = Vec::new();
    scheme(bi, codes, k, i, &mut found);
    found
}

impl Search<'_, '_> {
    /// Matches the first `exact` steps (part i) without mismatches, then
    /// runs the rest with substitutions.
    fn run_exact_then(&mut self, exact: usize) {
        let mut iv = self.bi.full();
        for s in 0..exact {
            let Step { pos, dir, .. } = self.steps[s];
            let c = self.codes[pos];
            if c >= NO_BASE {
                return;
            }
            let next = self.bi.extend(iv, dir);
            self.work += 1;
            iv = next[c as usize];
            if iv.len() == 0 {
                return;
            }
        }
        self.run(exact, iv, 0, 0);
    }
}
