//! Seed and verify: exact parts searched, located and compared with the text; the engine (CPU or device) behind them.

use super::backtrack::backtrack;
use super::schemes::{part, schemes_many};
use super::{BiIndex, Found, MAX_MISMATCHES};
use crate::dna::packed_base;
use crate::error::Result;
use crate::fm::{BackwardSearch, EMPTY, FmIndex, Interval, RankIndex};

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
