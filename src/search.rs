//! Mismatch-tolerant search (`fmalign map -v K`, bowtie's `-v` semantics):
//! every occurrence of a read in the text with at most `K` substitutions,
//! found with a bidirectional FM-index and search schemes.
//!
//! The index holds the FM-index of the text `T` and of its reverse `T^R`
//! (SPEC.md §6.9). A pattern `P` has an interval in each: the rows of the
//! suffixes of `T` that start with `P`, and those of `T^R` that start with
//! `P^R`; both have one row per occurrence. Extending `P` to the left is a
//! backward-search step in `T`'s index; extending it to the right is one in
//! `T^R`'s. Each step also moves the other interval: its rows are ordered by
//! the symbol on the far side, so the new start is the old one plus the
//! occurrences preceded (or followed) by a smaller symbol, plus one if an
//! occurrence touches the end of the text, whose "symbol" is `$`
//! (Lam et al. 2009, "High throughput short read alignment via
//! bi-directional BWT").
//!
//! A read of `m` bases is cut into `K + 1` parts; with at most `K`
//! mismatches, at least one part matches exactly (pigeonhole). Search `i`
//! matches part `i` exactly first, where the interval is widest and
//! branching would cost most, then extends right to the last part and left
//! to the first, trying every base at every position, with at most `K`
//! mismatches in all and at least one in each part left of `i`. So every
//! alignment is found by exactly one search: the one of its leftmost exact
//! part (Kucherov, Salikhov & Tsur 2016 call such sets of searches "search
//! schemes"). docs/ALGORITHMS.md compares this with backtracking on the
//! forward index alone.

use crate::dna::{NO_BASE, packed_base};
use crate::error::Result;
use crate::fm::{BackwardSearch, EMPTY, FmIndex, Interval, RankIndex};

/// The largest `-v` accepted.
pub const MAX_MISMATCHES: u8 = 3;

/// The two FM-indexes of bidirectional search.
#[derive(Clone, Copy, Debug)]
pub struct BiIndex<'a> {
    /// Index of the text.
    pub fwd: FmIndex<'a>,
    /// Rank tables of the reversed text (no sampled SA: nothing is located
    /// in it).
    pub rev: RankIndex<'a>,
}

/// A pattern's rows in both indexes (the same count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BiInterval {
    /// Rows in the text's index.
    pub fwd: Interval,
    /// First row in the reversed text's index.
    pub rev_lo: u64,
}

impl BiInterval {
    fn len(&self) -> u64 {
        self.fwd.len()
    }
}

/// One alignment found: its rows in the text's index and its mismatches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Found {
    /// Rows (one per occurrence).
    pub rows: Interval,
    /// Substitutions against the read.
    pub mismatches: u8,
}

impl<'a> BiIndex<'a> {
    /// The empty pattern.
    pub fn full(&self) -> BiInterval {
        BiInterval {
            fwd: self.fwd.full(),
            rev_lo: 0,
        }
    }

    /// The four left extensions `cP` of `iv`'s pattern.
    #[inline(always)]
    fn extend_left(&self, iv: BiInterval) -> [BiInterval; 4] {
        step(&self.fwd, iv.fwd, iv.rev_lo, |fwd, rev_lo| BiInterval {
            fwd,
            rev_lo,
        })
    }

    /// The four extensions of `iv`'s pattern on one side.
    #[inline(always)]
    fn extend(&self, iv: BiInterval, dir: Direction) -> [BiInterval; 4] {
        match dir {
            Direction::Left => self.extend_left(iv),
            Direction::Right => self.extend_right(iv),
        }
    }

    /// The four right extensions `Pc` of `iv`'s pattern.
    #[inline(always)]
    fn extend_right(&self, iv: BiInterval) -> [BiInterval; 4] {
        let r = Interval {
            lo: iv.rev_lo,
            hi: iv.rev_lo + iv.len(),
        };
        step(&self.rev, r, iv.fwd.lo, |rev, fwd_lo| BiInterval {
            fwd: Interval {
                lo: fwd_lo,
                hi: fwd_lo + rev.len(),
            },
            rev_lo: rev.lo,
        })
    }
}

/// One bidirectional step in `fm` (the index being extended) from rows `iv`,
/// with `other_lo` the start of the other index's interval: for each symbol
/// `c`, `make(new rows in fm, new start in the other index)`.
#[inline(always)]
fn step(
    fm: &RankIndex<'_>,
    iv: Interval,
    other_lo: u64,
    make: impl Fn(Interval, u64) -> BiInterval,
) -> [BiInterval; 4] {
    let lo = fm.rank4(iv.lo);
    let hi = fm.rank4(iv.hi);
    // The occurrence at the end of the text (BWT symbol `$`) sorts first.
    let mut start = other_lo + u64::from(iv.lo <= fm.primary && fm.primary < iv.hi);
    let mut out = [BiInterval {
        fwd: EMPTY,
        rev_lo: 0,
    }; 4];
    for c in 0..4 {
        let rows = Interval {
            lo: fm.c[c] + lo[c],
            hi: fm.c[c] + hi[c],
        };
        out[c] = make(rows, start);
        start += hi[c] - lo[c];
    }
    out
}

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
enum Direction {
    /// Prepend a base (backward search in the text's index).
    Left,
    /// Append a base (backward search in the reversed text's).
    Right,
}

/// One position of a search, in the order it is matched.
#[derive(Clone, Copy, Debug)]
struct Step {
    /// Position in the read.
    pos: usize,
    /// Which way it extends the pattern.
    dir: Direction,
    /// Its part (an index into `Search::parts`).
    part: usize,
}

/// Where a part's positions sit among the steps, and the mismatches it
/// must carry.
#[derive(Clone, Copy, Debug, Default)]
struct PartSteps {
    /// First step of the part.
    first: usize,
    /// Last step of the part.
    last: usize,
    /// Minimum mismatches in the part.
    min_mm: u8,
}

/// State of one search: the read's codes, the bounds and the output.
struct Search<'s, 'a> {
    bi: &'s BiIndex<'a>,
    codes: &'s [u8],
    k: u8,
    /// Positions to match, in order.
    steps: Vec<Step>,
    /// Per part: its steps and minimum mismatches.
    parts: Vec<PartSteps>,
    out: &'s mut Vec<Found>,
    /// Extension steps taken (for benchmarks).
    work: u64,
}

impl Search<'_, '_> {
    fn run(&mut self, s: usize, iv: BiInterval, mm: u8, mm_part: u8) {
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
    s: usize,
    iv: BiInterval,
    mm: u8,
    mm_part: u8,
}

/// One search of [`schemes_many`] in flight: its job, plan and the nodes
/// left to visit (depth first).
struct Lane {
    job: usize,
    steps: Vec<Step>,
    parts: Vec<PartSteps>,
    /// Per part: the minimum mismatches of the parts matched after it.
    need_after: Vec<u8>,
    exact: usize,
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

/// Mismatches between `codes` and the text at `start` (`pac` as in the
/// index's PAC section), or `None` past `k`.
#[inline]
pub fn hamming(pac: &[u8], start: u64, codes: &[u8], k: u8) -> Option<u8> {
    let mut mm = 0u8;
    for (i, &c) in codes.iter().enumerate() {
        if packed_base(pac, start + i as u64) != c {
            mm += 1;
            if mm > k {
                return None;
            }
        }
    }
    Some(mm)
}

/// Seed and verify, with the search schemes where seeds repeat: each part
/// of the read is matched exactly (backward search); a part with at most
/// `verify_max` occurrences has each one located and the whole read
/// compared with the text there (`pac`, `n` bases); a part with more runs
/// its search of the scheme instead. Every alignment with at most `k`
/// mismatches is found: its leftmost exact part is either verified or
/// searched. Alignments found twice (two exact parts) come out once in
/// `positions` (text start, mismatches); `rows` are as from [`search`] and
/// may repeat a position of `positions` (callers deduplicate after
/// locate). One pattern of [`search_verify_many`].
pub fn search_verify(
    bi: &BiIndex<'_>,
    pac: &[u8],
    codes: &[u8],
    k: u8,
    verify_max: u64,
    rows: &mut Vec<Found>,
    positions: &mut Vec<(u64, u8)>,
) {
    let (r, p) = search_verify_many(bi, pac, &[codes], k, verify_max, 1)
        .pop()
        .expect("one pattern");
    rows.extend(r);
    positions.extend(p);
}

/// Exact backward searches of many patterns (codes 0..=3; a 4 matches
/// nothing), `lanes` in lockstep ([`RankIndex::backward_search_many`]).
pub fn exact_many(fm: &RankIndex<'_>, patterns: &[&[u8]], lanes: usize) -> Vec<Interval> {
    let mut out = vec![EMPTY; patterns.len()];
    let searches = patterns.iter().enumerate().map(|(p, pat)| BackwardSearch {
        job: p,
        len: pat.len(),
        matched: 0,
        iv: fm.full(),
    });
    fm.backward_search_many(
        lanes,
        searches,
        |p, k| patterns[p][patterns[p].len() - 1 - k],
        |s| out[s.job] = s.iv,
    );
    out
}

/// Per pattern: row intervals, and verified (text position, mismatches).
pub type Verified = (Vec<Found>, Vec<(u64, u8)>);

/// [`search_verify`] of many patterns at once (each a whole read on one
/// strand, codes 0..=3 or 4 for N): the exact searches of all parts run
/// interleaved ([`exact_many`]), and so do the locates of the seeds to
/// verify ([`FmIndex::locate_many`]); seeds that repeat more than
/// `verify_max` times run their search of the scheme. Returns, per pattern,
/// the row intervals and the verified (text position, mismatches), sorted
/// and without repeats within each list.
pub fn search_verify_many(
    bi: &BiIndex<'_>,
    pac: &[u8],
    patterns: &[&[u8]],
    k: u8,
    verify_max: u64,
    lanes: usize,
) -> Vec<Verified> {
    let cpu = OnCpu {
        fm: &bi.fwd,
        pac,
        lanes,
    };
    search_verify_with(&cpu, bi, patterns, k, verify_max).expect("the CPU's engine does not fail")
}

/// Where the seeds of [`search_verify_with`] are searched, located and
/// verified: the CPU's index ([`OnCpu`], the reference) or a device
/// (`map::cuda::DeviceIndex`). Each answers in one pass over all it gets.
pub trait SeedEngine {
    /// Exact intervals of `pieces` (codes 0..=3; a 4 matches nothing).
    fn exact(&self, pieces: &[&[u8]]) -> Result<Vec<Interval>>;
    /// Text positions of suffix-array rows.
    fn locate(&self, rows: &[u64]) -> Result<Vec<u64>>;
    /// Per candidate `(pattern, text start)`, with `start + len <= n`: the
    /// mismatches of `patterns[pattern]` against the text there, or `None`
    /// past `k` (as [`hamming`]).
    fn verify(&self, patterns: &[&[u8]], cands: &[(u32, u64)], k: u8) -> Result<Vec<Option<u8>>>;
    /// Per job `(pattern, i)`, with `k < patterns[pattern].len()`: what
    /// search `i` of the scheme for `k` mismatches finds ([`scheme`] on
    /// `bi`), in any order.
    fn schemes(
        &self,
        bi: &BiIndex<'_>,
        patterns: &[&[u8]],
        jobs: &[(u32, u8)],
        k: u8,
    ) -> Result<Vec<Vec<Found>>>;
}

/// Search-scheme searches in flight at most ([`schemes_many`]): each
/// prefetches two Occ lines a round, and more than this leave the CPU's
/// line-fill buffers full (12 was about 12% faster than 32 on `-v 3`,
/// 36-base reads on chr20; 8 about as fast as 12).
const SCHEME_LANES: usize = 12;

/// The CPU's index as a [`SeedEngine`]: [`exact_many`], `locate_many`,
/// [`hamming`] over PAC.
pub struct OnCpu<'a> {
    /// The text's index.
    pub fm: &'a FmIndex<'a>,
    /// PAC.
    pub pac: &'a [u8],
    /// Searches in flight at once.
    pub lanes: usize,
}

impl SeedEngine for OnCpu<'_> {
    fn exact(&self, pieces: &[&[u8]]) -> Result<Vec<Interval>> {
        Ok(exact_many(self.fm, pieces, self.lanes))
    }
    fn locate(&self, rows: &[u64]) -> Result<Vec<u64>> {
        let mut pos = Vec::new();
        self.fm.locate_many(rows, self.lanes, &mut pos);
        Ok(pos)
    }
    fn verify(&self, patterns: &[&[u8]], cands: &[(u32, u64)], k: u8) -> Result<Vec<Option<u8>>> {
        Ok(cands
            .iter()
            .map(|&(q, start)| hamming(self.pac, start, patterns[q as usize], k))
            .collect())
    }
    fn schemes(
        &self,
        bi: &BiIndex<'_>,
        patterns: &[&[u8]],
        jobs: &[(u32, u8)],
        k: u8,
    ) -> Result<Vec<Vec<Found>>> {
        Ok(schemes_many(
            bi,
            patterns,
            jobs,
            k,
            self.lanes.min(SCHEME_LANES),
        ))
    }
}

/// [`search_verify_many`] with its exact searches, locates,
/// verifications and the search schemes of repeated seeds done by
/// `engine`, each in one pass over all patterns; backtracking for reads
/// shorter than `k + 1` runs here on `bi`. The same output as
/// [`search_verify_many`] for any engine that answers as the CPU does.
pub fn search_verify_with(
    engine: &impl SeedEngine,
    bi: &BiIndex<'_>,
    patterns: &[&[u8]],
    k: u8,
    verify_max: u64,
) -> Result<Vec<Verified>> {
    let k = k.min(MAX_MISMATCHES);
    let kk = k as usize;
    let n = bi.fwd.n;
    let mut out: Vec<Verified> = vec![(Vec::new(), Vec::new()); patterns.len()];
    let mut seeds: Vec<(usize, usize)> = Vec::new(); // (pattern, part)
    let mut slices: Vec<&[u8]> = Vec::new();
    for (q, pat) in patterns.iter().enumerate() {
        let m = pat.len();
        if m == 0 {
            continue;
        }
        if kk >= m {
            backtrack(&bi.fwd, pat, k, &mut out[q].0);
            continue;
        }
        for i in 0..=kk {
            let (s, e) = part(m, kk, i);
            seeds.push((q, i));
            slices.push(&pat[s..e]);
        }
    }
    let ivs = engine.exact(&slices)?;
    let mut rows = Vec::new();
    let mut owner = Vec::new();
    let mut jobs = Vec::new();
    for (x, (&(q, i), iv)) in seeds.iter().zip(&ivs).enumerate() {
        if iv.is_empty() {
            continue;
        }
        if iv.len() > verify_max {
            jobs.push((q as u32, i as u8));
        } else {
            rows.extend(iv.lo..iv.hi);
            owner.extend(std::iter::repeat_n(x, iv.len() as usize));
        }
    }
    for (&(q, _), found) in jobs.iter().zip(engine.schemes(bi, patterns, &jobs, k)?) {
        out[q as usize].0.extend(found);
    }
    let pos = engine.locate(&rows)?;
    let mut cands = Vec::with_capacity(pos.len());
    for (&p, &x) in pos.iter().zip(&owner) {
        let (q, i) = seeds[x];
        let pat = patterns[q];
        let (s, _) = part(pat.len(), kk, i);
        let Some(start) = p.checked_sub(s as u64) else {
            continue;
        };
        // Checked: on a crafted index (SPEC.md §8) locate may return anything.
        if start.checked_add(pat.len() as u64).is_none_or(|e| e > n) {
            continue;
        }
        cands.push((q as u32, start));
    }
    for (&(q, start), mm) in cands.iter().zip(engine.verify(patterns, &cands, k)?) {
        if let Some(mm) = mm {
            out[q as usize].1.push((start, mm));
        }
    }
    for (r, v) in &mut out {
        r.sort_unstable();
        v.sort_unstable();
        v.dedup();
    }
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dna::CODE;
    use crate::index::{IndexConfig, build_in_memory};
    use crate::scan::read_fasta_from;
    use proptest::prelude::*;
    use std::path::Path;

    fn index_of(text: &[u8]) -> crate::index::Index {
        let mut fa = b">t\n".to_vec();
        fa.extend_from_slice(text);
        fa.push(b'\n');
        let r = read_fasta_from(&fa[..], Path::new("t.fa")).unwrap();
        let cfg = IndexConfig {
            threads: 1,
            ..IndexConfig::default()
        };
        build_in_memory(r, &cfg).unwrap()
    }

    /// Text positions with at most k mismatches, and their counts: by scan.
    fn naive(text: &[u8], read: &[u8], k: u8) -> Vec<(u64, u8)> {
        let m = read.len();
        let mut out = Vec::new();
        if m == 0 || m > text.len() {
            return out;
        }
        for p in 0..=text.len() - m {
            let mm = (0..m)
                .filter(|&i| CODE[read[i] as usize] != CODE[text[p + i] as usize])
                .count();
            if mm <= k as usize {
                out.push((p as u64, mm as u8));
            }
        }
        out
    }

    fn positions(index: &crate::index::Index, found: &[Found]) -> Vec<(u64, u8)> {
        let fm = index.fm();
        let mut v: Vec<(u64, u8)> = found
            .iter()
            .flat_map(|f| (f.rows.lo..f.rows.hi).map(move |r| (r, f.mismatches)))
            .map(|(r, mm)| (fm.locate(r), mm))
            .collect();
        v.sort_unstable();
        v
    }

    fn check(text: &[u8], read: &[u8], k: u8) {
        let index = index_of(text);
        let bi = BiIndex {
            fwd: index.fm(),
            rev: index.rev_fm(),
        };
        let codes: Vec<u8> = read.iter().map(|&b| CODE[b as usize]).collect();
        let want = naive(text, read, k);
        let mut found = Vec::new();
        search(&bi, &codes, k, &mut found);
        let got = positions(&index, &found);
        assert_eq!(got, want, "search, text {text:?} read {read:?} k {k}");
        let mut bt = Vec::new();
        backtrack(&bi.fwd, &codes, k, &mut bt);
        assert_eq!(positions(&index, &bt), want, "backtrack");
        for lanes in [1, 3] {
            let many = search_verify_many(&bi, index.pac(), &[&codes, &codes], k, 2, lanes);
            for (rows, pos) in many {
                let mut all = positions(&index, &rows);
                all.extend(pos);
                all.sort_unstable();
                all.dedup();
                assert_eq!(all, want, "search_verify_many, {lanes} lanes");
            }
        }
        for verify_max in [0, 1, 4, u64::MAX] {
            let (mut rows, mut pos) = (Vec::new(), Vec::new());
            search_verify(&bi, index.pac(), &codes, k, verify_max, &mut rows, &mut pos);
            let mut all = positions(&index, &rows);
            all.extend(pos);
            all.sort_unstable();
            all.dedup();
            assert_eq!(all, want, "search_verify {verify_max}");
        }
        // The lockstep searches find what the one-at-a-time ones do.
        let kk = k.min(MAX_MISMATCHES);
        if (kk as usize) < codes.len() {
            let jobs: Vec<(u32, u8)> = (0..=kk).map(|i| (0, i)).collect();
            for lanes in [1, 2, 5] {
                let many = schemes_many(&bi, &[&codes], &jobs, kk, lanes);
                for (&(_, i), mut got) in jobs.iter().zip(many) {
                    let mut want = scheme_found(&bi, &codes, kk, usize::from(i));
                    got.sort_unstable();
                    want.sort_unstable();
                    assert_eq!(got, want, "schemes_many, search {i}, {lanes} lanes");
                }
            }
        }
        // Each occurrence once: the intervals are disjoint.
        let rows: u64 = found.iter().map(|f| f.rows.len()).sum();
        assert_eq!(rows as usize, want.len(), "an occurrence found twice");
    }

    #[test]
    fn parts_cover_the_read() {
        for m in 0..40 {
            for k in 0..4 {
                let mut next = 0;
                for p in 0..=k {
                    let (s, e) = part(m, k, p);
                    assert_eq!(s, next);
                    next = e;
                }
                assert_eq!(next, m);
            }
        }
    }

    #[test]
    fn small_cases() {
        check(b"ACGTACGTTTGACCA", b"ACGA", 1);
        check(b"ACGTACGTTTGACCA", b"A", 1);
        check(b"ACGTACGTTTGACCA", b"AC", 2);
        check(b"AAAAAAAAAA", b"AAATA", 1);
        check(b"AAAAAAAAAA", b"ANA", 1);
        check(b"ACGT", b"ACGT", 3);
        check(b"ACGT", b"ACGTA", 3);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn agrees_with_a_scan(
            text in proptest::collection::vec(0u8..4, 1..300),
            start in 0usize..300,
            len in 1usize..30,
            subs in proptest::collection::vec((0usize..30, 0u8..5), 0..4),
            k in 0u8..4,
        ) {
            let text: Vec<u8> = text.iter().map(|&c| b"ACGT"[c as usize]).collect();
            let start = start % text.len();
            let end = (start + len).min(text.len());
            let mut read = text[start..end].to_vec();
            for (at, c) in subs {
                let n = read.len();
                read[at % n] = b"ACGTN"[c as usize];
            }
            check(&text, &read, k);
        }
    }
}
