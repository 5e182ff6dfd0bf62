//! Seeds and chains of gapped alignment (`--end-to-end`, `--local`).
//!
//! Seeds are maximal exact matches found greedily from the read's right end
//! by backward search: the longest match ending at the last base, then the
//! longest ending just before the base that stopped it, and so on (the
//! greedy cover of bwa-sw and of bowtie2's exact-end seeds; the base that
//! breaks a match is skipped, so a read with `e` errors gives about `e + 1`
//! seeds). Each is left-maximal; seeds shorter than [`MIN_SEED`] are
//! dropped; a read left with none is seeded with every maximal match
//! ([`maximal_seeds`]). Located seeds become anchors (strand, contig, position); anchors
//! on one strand and contig, in read order and near one diagonal, form a
//! chain, weighted by the read bases its anchors cover. Each chain is then
//! one candidate locus for the extension ([`crate::align`]).

use crate::dna;
use crate::fm::{FmIndex, Interval, RankIndex};
use crate::search::{BiIndex, BiInterval};

/// Shortest seed (bwa mem's `-k`).
pub const MIN_SEED: usize = 19;

/// Seeds with more occurrences than this are not located (bwa mem's
/// `-c`): they place nothing, unless no seed of the read is rarer.
pub const MAX_OCC: u64 = 500;

/// Anchors join a chain when their diagonals differ by at most this.
pub const MAX_DIAGONAL_GAP: i64 = 64;

/// One exact match of the read (in the strand's coordinates).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seed {
    /// First read base.
    pub qpos: u32,
    /// Bases.
    pub len: u32,
    /// Rows of the text's index; with `at`, one row of a suffix of the
    /// seed, not of the seed itself (see [`greedy_seeds_many`]).
    pub rows: Interval,
    /// The text position of its first base, when the search found it
    /// (the seed is then unique): not located again.
    pub at: Option<u64>,
}

/// The longest exact match of `codes` ending at `end` (codes 0..=3;
/// anything else stops it): its first base and its rows.
pub fn longest_ending(fm: &RankIndex<'_>, codes: &[u8], end: usize) -> (usize, Interval) {
    let mut iv = fm.full();
    let mut start = end;
    while start > 0 && codes[start - 1] < 4 {
        let next = fm.extend(iv, codes[start - 1]);
        if next.is_empty() {
            break;
        }
        iv = next;
        start -= 1;
    }
    (start, iv)
}

/// The greedy maximal exact matches of `codes` (0..=3; anything else ends a
/// match) of at least `min_len` bases, right to left, appended to `out`:
/// one read at a time (the reference [`greedy_seeds_many`] is tested
/// against).
pub fn greedy_seeds(fm: &RankIndex<'_>, codes: &[u8], min_len: usize, out: &mut Vec<Seed>) {
    let mut end = codes.len();
    while end >= min_len.max(1) {
        let (start, iv) = longest_ending(fm, codes, end);
        if end - start >= min_len {
            out.push(Seed {
                qpos: start as u32,
                len: (end - start) as u32,
                rows: iv,
                at: None,
            });
        }
        // Skip the base that stopped the match.
        match start.checked_sub(1) {
            Some(s) => end = s,
            None => break,
        }
    }
}

/// Every exact match of `codes` of at least `min_len` bases that no longer
/// one contains (maximal on both sides, bwa mem's SMEMs found the slow way),
/// right to left, appended to `out`: the longest match ending at each base,
/// kept when it starts left of every match kept so far. For a read whose
/// [`greedy_seeds`] found nothing: a cover's pieces can each fall short of
/// `min_len` around an exact match that is long enough (a 30-base match cut
/// 14 + 15 + 15 by where the cover restarts), and bwa mem, which seeds
/// from every base, finds it. `O(length²)` steps of backward search at
/// most, so only for such reads.
pub fn maximal_seeds(fm: &RankIndex<'_>, codes: &[u8], min_len: usize, out: &mut Vec<Seed>) {
    let min_len = min_len.max(1);
    let mut leftmost = usize::MAX;
    for end in (min_len..=codes.len()).rev() {
        let (start, iv) = longest_ending(fm, codes, end);
        if end - start >= min_len && start < leftmost {
            leftmost = start;
            out.push(Seed {
                qpos: start as u32,
                len: (end - start) as u32,
                rows: iv,
                at: None,
            });
        }
    }
}

/// The supermaximal exact matches (SMEMs) of `codes` (0..=3; anything
/// else ends a match) that cover read base `x` and occur at least
/// `min_rows` times, appended to `out` (first base, length, rows), by bwa
/// mem's algorithm (`bwt_smem1`): the matches starting at `x` extended
/// right in the reversed text's index, keeping one per count of rows,
/// then all of them extended left together, each kept where it can go no
/// further unless a longer one still can (it is then contained in it).
/// Returns where the longest match from `x` ends, the next `x` to search
/// from to find every SMEM. With `min_rows` 1 they are the maximal exact
/// matches no longer one contains; with more, bwa mem's re-seeding: the
/// longest matches through `x` with at least that many occurrences.
pub fn smems_at(
    bi: &BiIndex<'_>,
    codes: &[u8],
    x: usize,
    min_rows: u64,
    stop: usize,
    out: &mut Vec<(u32, u32, Interval)>,
) -> usize {
    let m = codes.len();
    if x >= m || codes[x] > 3 {
        return x + 1;
    }
    // (interval, end): the matches from x, one per count of rows.
    let mut prev: Vec<(BiInterval, usize)> = Vec::new();
    let mut ik = bi.extend_right(bi.full())[codes[x] as usize];
    let mut end = x + 1;
    while end < m {
        if codes[end] > 3 {
            break;
        }
        let ok = bi.extend_right(ik)[codes[end] as usize];
        if ok.len() != ik.len() {
            prev.push((ik, end));
            if ok.len() < min_rows {
                break;
            }
        }
        ik = ok;
        end += 1;
    }
    if end == m || codes[end] > 3 {
        prev.push((ik, end));
    }
    // Longest (fewest rows) first.
    prev.reverse();
    let ret = prev.first().map_or(x + 1, |p| p.1);
    let first_out = out.len();
    let mut curr: Vec<(BiInterval, usize)> = Vec::with_capacity(prev.len());
    let mut i = x;
    loop {
        let c = if i == 0 {
            None
        } else {
            Some(codes[i - 1]).filter(|&c| c < 4)
        };
        curr.clear();
        for &(p, pend) in &prev {
            let ok = c.map(|c| bi.extend_left(p)[c as usize]);
            match ok {
                Some(ok) if ok.len() >= min_rows => {
                    if curr.last().is_none_or(|l| l.0.len() != ok.len()) {
                        curr.push((ok, pend));
                    }
                }
                _ => {
                    // Ends here (at i): kept unless a longer one goes on, or
                    // one kept already starts here or before.
                    let contained = out[first_out..].last().is_some_and(|l| i as u32 >= l.0);
                    if curr.is_empty() && !contained {
                        out.push((i as u32, (pend - i) as u32, p.fwd));
                    }
                }
            }
        }
        if curr.is_empty() || i <= stop {
            break;
        }
        std::mem::swap(&mut prev, &mut curr);
        i -= 1;
    }
    ret
}

/// One search of [`smems_many`]: [`smems_at`]'s arguments.
#[derive(Clone, Copy, Debug)]
pub struct SmemJob<'a> {
    pub codes: &'a [u8],
    pub x: usize,
    pub min_rows: u64,
    pub stop: usize,
}

/// A search of [`smems_many`] under way.
struct SmemLane {
    job: usize,
    /// Extending right (the matches from `x`), or left from `i`.
    right: bool,
    ik: BiInterval,
    end: usize,
    prev: Vec<(BiInterval, usize)>,
    curr: Vec<(BiInterval, usize)>,
    i: usize,
}

/// [`smems_at`] of each job (its SMEMs in `out[job]`, as `smems_at`
/// appends them to an empty vector), `lanes` searches in lockstep: after
/// each step a lane prefetches the Occ lines its next step reads, so that
/// the lanes' cache misses overlap.
pub fn smems_many(
    bi: &BiIndex<'_>,
    jobs: &[SmemJob<'_>],
    lanes: usize,
) -> Vec<Vec<(u32, u32, Interval)>> {
    let mut out: Vec<Vec<(u32, u32, Interval)>> = vec![Vec::new(); jobs.len()];
    let mut active: Vec<SmemLane> = Vec::with_capacity(lanes);
    let mut next = 0;
    let prefetch_right = |iv: &BiInterval| {
        bi.rev.prefetch(iv.rev_lo);
        bi.rev.prefetch(iv.rev_lo + iv.len());
    };
    let prefetch_left = |prev: &[(BiInterval, usize)]| {
        for (p, _) in prev {
            bi.fwd.prefetch(p.fwd.lo);
            bi.fwd.prefetch(p.fwd.hi);
        }
    };
    loop {
        while active.len() < lanes.max(1) && next < jobs.len() {
            let j = jobs[next];
            if j.x < j.codes.len() && j.codes[j.x] <= 3 {
                let ik = bi.extend_right(bi.full())[j.codes[j.x] as usize];
                prefetch_right(&ik);
                active.push(SmemLane {
                    job: next,
                    right: true,
                    ik,
                    end: j.x + 1,
                    prev: Vec::new(),
                    curr: Vec::new(),
                    i: j.x,
                });
            }
            next += 1;
        }
        if active.is_empty() {
            break;
        }
        let mut k = 0;
        while k < active.len() {
            let l = &mut active[k];
            let j = jobs[l.job];
            let (codes, m) = (j.codes, j.codes.len());
            let mut done = false;
            if l.right {
                // One step of smems_at's first loop.
                let mut stopped = l.end >= m || codes[l.end] > 3;
                if !stopped {
                    let ok = bi.extend_right(l.ik)[codes[l.end] as usize];
                    if ok.len() != l.ik.len() {
                        l.prev.push((l.ik, l.end));
                        if ok.len() < j.min_rows {
                            stopped = true;
                        }
                    }
                    if !stopped {
                        l.ik = ok;
                        l.end += 1;
                        prefetch_right(&l.ik);
                    }
                }
                if stopped {
                    if l.end == m || codes[l.end] > 3 {
                        l.prev.push((l.ik, l.end));
                    }
                    l.prev.reverse();
                    l.right = false;
                    if l.i > 0 {
                        prefetch_left(&l.prev);
                    }
                }
            } else {
                // One step of smems_at's second loop.
                let i = l.i;
                let c = if i == 0 {
                    None
                } else {
                    Some(codes[i - 1]).filter(|&c| c < 4)
                };
                l.curr.clear();
                let o = &mut out[l.job];
                for &(p, pend) in &l.prev {
                    let ok = c.map(|c| bi.extend_left(p)[c as usize]);
                    match ok {
                        Some(ok) if ok.len() >= j.min_rows => {
                            if l.curr.last().is_none_or(|x| x.0.len() != ok.len()) {
                                l.curr.push((ok, pend));
                            }
                        }
                        _ => {
                            let contained = o.last().is_some_and(|x| i as u32 >= x.0);
                            if l.curr.is_empty() && !contained {
                                o.push((i as u32, (pend - i) as u32, p.fwd));
                            }
                        }
                    }
                }
                if l.curr.is_empty() || i <= j.stop {
                    done = true;
                } else {
                    std::mem::swap(&mut l.prev, &mut l.curr);
                    l.i -= 1;
                    if l.i > 0 {
                        prefetch_left(&l.prev);
                    }
                }
            }
            if done {
                active.swap_remove(k);
            } else {
                k += 1;
            }
        }
    }
    out
}

/// Every SMEM of `codes` of at least `min_len` bases, appended to `out` as
/// seeds, in no particular order: [`smems_at`] from every `min_len`-th
/// base (`min_len - 1`, `2 min_len - 1`, ...), which each such SMEM
/// covers (bwa mem searches from where the previous search stopped, which
/// also finds the shorter ones).
pub fn smems(bi: &BiIndex<'_>, codes: &[u8], min_len: usize, out: &mut Vec<Seed>) {
    let min_len = min_len.max(1);
    let mut found = Vec::new();
    let mut x = min_len - 1;
    while x < codes.len() {
        // Those that start before x - min_len + 1 cover the previous x.
        smems_at(bi, codes, x, 1, (x + 1).saturating_sub(min_len), &mut found);
        x += min_len;
    }
    found.retain(|f| f.1 as usize >= min_len);
    found.sort_unstable_by_key(|f| (f.0, f.1));
    found.dedup_by_key(|f| (f.0, f.1));
    out.extend(found.into_iter().map(|(qpos, len, rows)| Seed {
        qpos,
        len,
        rows,
        at: None,
    }));
}

/// [`greedy_seeds`] of many reads, `lanes` searches in lockstep: each
/// step prefetches the Occ lines of the lane's next one, so that the
/// lanes' cache misses overlap. `out[k]` holds the seeds of `reads[k]`, in
/// the order [`greedy_seeds`] finds them, with as many rows.
///
/// A match that is already a seed (`min_len` bases or more) and has one
/// row is not searched further in the index: its row is located (LF walk
/// to a sampled row, in the same lockstep) and the match extended by
/// comparing the read with the text (`pac`) leftwards from there. For one
/// row that is what backward search does (its one BWT letter is the text's
/// base before it, `$` at the text's start), in a few sequential reads
/// instead of one random Occ line per base; the seed then has `at` (its
/// text position, which the caller needs anyway), and `rows` is that of
/// the match when it became unique.
pub fn greedy_seeds_many(
    fm: &FmIndex<'_>,
    pac: &[u8],
    reads: &[&[u8]],
    min_len: usize,
    lanes: usize,
) -> Vec<Vec<Seed>> {
    struct Lane {
        job: usize,
        end: usize,
        start: usize,
        iv: Interval,
        /// Locating the one row: (row, LF steps so far).
        walk: Option<(u64, u64)>,
        /// Text position minus read position of the read's last seed
        /// with `at` (where a seed after a substitution lies).
        diag: Option<i64>,
    }
    // Whether `codes` occurs at text position `p`.
    let in_text = |codes: &[u8], p: i64| {
        p >= 0
            && p as u64 + codes.len() as u64 <= fm.n
            && codes
                .iter()
                .zip(p as u64..)
                .all(|(&c, t)| dna::packed_base(pac, t) == c)
    };
    let min_len = min_len.max(1);
    let mut out = vec![Vec::new(); reads.len()];
    let mut next = 0;
    let mut active: Vec<Lane> = Vec::with_capacity(lanes);
    loop {
        while active.len() < lanes.max(1) && next < reads.len() {
            let len = reads[next].len();
            if len >= min_len {
                active.push(Lane {
                    job: next,
                    end: len,
                    start: len,
                    iv: fm.full(),
                    walk: None,
                    diag: None,
                });
            }
            next += 1;
        }
        if active.is_empty() {
            break;
        }
        let mut i = 0;
        while i < active.len() {
            let l = &mut active[i];
            let codes = reads[l.job];
            let mut at = None;
            if let Some((row, steps)) = l.walk {
                // A unique match where the last seed's diagonal puts it
                // (only one occurrence: that one) needs no walk.
                let known = l
                    .diag
                    .map(|d| d + l.start as i64)
                    .filter(|&p| steps == 0 && in_text(&codes[l.start..l.end], p));
                match known.map(|p| p as u64).or_else(|| fm.walk_end(row, steps)) {
                    None => {
                        let row = fm.lf(row);
                        fm.prefetch(row);
                        l.walk = Some((row, steps + 1));
                        i += 1;
                        continue;
                    }
                    Some(mut p) => {
                        // `p`: where read base `l.start` lies in the text.
                        if p != u64::MAX {
                            while l.start > 0
                                && p > 0
                                && codes[l.start - 1] < 4
                                && dna::packed_base(pac, p - 1) == codes[l.start - 1]
                            {
                                l.start -= 1;
                                p -= 1;
                            }
                        }
                        l.walk = None;
                        at = Some(p);
                        if p != u64::MAX {
                            l.diag = Some(p as i64 - l.start as i64);
                        }
                    }
                }
            } else if l.start > 0 && codes[l.start - 1] < 4 {
                let iv = fm.extend(l.iv, codes[l.start - 1]);
                if !iv.is_empty() {
                    l.iv = iv;
                    l.start -= 1;
                    fm.prefetch(iv.lo);
                    if iv.len() == 1 && l.end - l.start >= min_len {
                        l.walk = Some((iv.lo, 0));
                    } else {
                        fm.prefetch(iv.hi);
                    }
                    i += 1;
                    continue;
                }
            }
            // The match ends here.
            if l.end - l.start >= min_len {
                out[l.job].push(Seed {
                    qpos: l.start as u32,
                    len: (l.end - l.start) as u32,
                    rows: l.iv,
                    at,
                });
            }
            match l.start.checked_sub(1) {
                Some(s) if s >= min_len => {
                    l.end = s;
                    l.start = s;
                    l.iv = fm.full();
                    i += 1;
                }
                _ => {
                    active.swap_remove(i);
                }
            }
        }
    }
    out
}

/// A located seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Anchor {
    /// On the reverse strand (the seed is of the read's reverse complement).
    pub rev: bool,
    /// Contig.
    pub contig: u32,
    /// 0-based contig position of the seed's first base.
    pub rpos: u64,
    /// First read base (in the strand's coordinates).
    pub qpos: u32,
    /// Bases.
    pub len: u32,
}

impl Anchor {
    /// Reference position minus read position.
    pub fn diagonal(&self) -> i64 {
        self.rpos as i64 - i64::from(self.qpos)
    }
}

/// Anchors that may belong to one alignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    /// In reference order (and read order).
    pub anchors: Vec<Anchor>,
    /// Read bases covered by its anchors.
    pub weight: u32,
}

impl Chain {
    /// The longest anchor (the first of equals): where extension centres.
    pub fn best_anchor(&self) -> Anchor {
        let mut best = self.anchors[0];
        for a in &self.anchors[1..] {
            if a.len > best.len {
                best = *a;
            }
        }
        best
    }
}

/// Chains of `anchors` (sorted here), heaviest first (ties in reference
/// order). An anchor joins the most recent chain on its strand and contig
/// whose last anchor is before it on the read and the reference, within
/// [`MAX_DIAGONAL_GAP`] of its diagonal and at most `max_span` bases
/// upstream; otherwise it starts a chain.
pub fn chain(anchors: &mut [Anchor], max_span: u64) -> Vec<Chain> {
    anchors.sort_unstable();
    let mut chains: Vec<Chain> = Vec::new();
    // Chains of the current strand and contig, by index.
    let mut open: Vec<usize> = Vec::new();
    let mut key = None;
    for &a in anchors.iter() {
        if key != Some((a.rev, a.contig)) {
            key = Some((a.rev, a.contig));
            open.clear();
        }
        // Chains too far upstream never take another anchor.
        open.retain(|&c| {
            let l = chains[c].anchors.last().expect("chains are not empty");
            a.rpos - l.rpos <= max_span
        });
        let joined = open.iter().rev().copied().find(|&c| {
            let l = chains[c].anchors.last().expect("chains are not empty");
            a.qpos > l.qpos && (a.diagonal() - l.diagonal()).abs() <= MAX_DIAGONAL_GAP
        });
        match joined {
            Some(c) => {
                let l = *chains[c].anchors.last().expect("chains are not empty");
                let overlap = (l.qpos + l.len).saturating_sub(a.qpos).min(a.len);
                chains[c].weight += a.len - overlap;
                chains[c].anchors.push(a);
            }
            None => {
                open.push(chains.len());
                chains.push(Chain {
                    anchors: vec![a],
                    weight: a.len,
                });
            }
        }
    }
    chains.sort_by(|x, y| {
        y.weight
            .cmp(&x.weight)
            .then_with(|| x.anchors[0].cmp(&y.anchors[0]))
    });
    chains
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{IndexConfig, build_in_memory};
    use crate::scan::read_fasta_from;

    /// The index of one contig of `text` (codes 0..=3).
    fn index_of(text: &[u8]) -> crate::index::Index {
        let mut fa = b">t\n".to_vec();
        fa.extend(text.iter().map(|&c| b"ACGT"[c as usize]));
        fa.push(b'\n');
        let reference = read_fasta_from(&fa[..], std::path::Path::new("t.fa")).unwrap();
        build_in_memory(reference, &IndexConfig::default()).unwrap()
    }

    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// Every seed is an exact match with as many rows as a naive count of
    /// its occurrences, left-maximal (its left extension does not occur, or
    /// is an N or the read's start), at least `min_len` long; seeds do not
    /// overlap and are found right to left; the lockstep version finds the
    /// same seeds as the one-read one.
    #[test]
    fn seeds_are_left_maximal_exact_matches() {
        let mut seed = 0x1234_5678_9abc_def1u64;
        let text: Vec<u8> = (0..20_000).map(|_| (rng(&mut seed) % 4) as u8).collect();
        let index = index_of(&text);
        let fm = index.fm();
        let occurrences = |p: &[u8]| text.windows(p.len()).filter(|w| *w == p).count() as u64;
        let mut reads: Vec<Vec<u8>> = Vec::new();
        for _ in 0..60 {
            let at = (rng(&mut seed) % 19_000) as usize;
            let mut r = text[at..at + 100].to_vec();
            for _ in 0..(rng(&mut seed) % 6) {
                let k = (rng(&mut seed) % 100) as usize;
                r[k] = if rng(&mut seed).is_multiple_of(5) {
                    4
                } else {
                    (r[k] + 1) % 4
                };
            }
            reads.push(r);
        }
        // Matches that run to the text's start.
        reads.push(text[..100].to_vec());
        let mut r = text[..80].to_vec();
        r[60] = (r[60] + 1) % 4;
        reads.push(r);
        let refs: Vec<&[u8]> = reads.iter().map(|r| &r[..]).collect();
        let many = greedy_seeds_many(&fm, index.pac(), &refs, 12, 7);
        let mut found_at = 0;
        for (r, got) in reads.iter().zip(&many) {
            let mut one = Vec::new();
            greedy_seeds(&fm, r, 12, &mut one);
            // The same seeds; those found in the text where the index
            // places them, and only unique ones.
            assert_eq!(one.len(), got.len());
            for (o, g) in one.iter().zip(got) {
                assert_eq!((o.qpos, o.len, o.rows.len()), (g.qpos, g.len, g.rows.len()));
                match g.at {
                    Some(p) => {
                        assert_eq!(o.rows.len(), 1);
                        assert_eq!(p, fm.locate(o.rows.lo), "{o:?}");
                        found_at += 1;
                    }
                    None => assert_eq!(o, g),
                }
            }
            let got = &one;
            let mut last = r.len();
            for s in got {
                let (q, l) = (s.qpos as usize, s.len as usize);
                assert!(l >= 12 && q + l <= last, "{s:?}");
                last = q;
                let p = &r[q..q + l];
                assert_eq!(s.rows.len(), occurrences(p), "{s:?}");
                if q > 0 && r[q - 1] < 4 {
                    let mut ext = vec![r[q - 1]];
                    ext.extend_from_slice(p);
                    assert_eq!(occurrences(&ext), 0, "{s:?} is not left-maximal");
                }
            }
        }
        assert!(found_at > 50, "{found_at} seeds found in the text");
    }

    /// `maximal_seeds` gives exactly the exact matches of at least
    /// `min_len` that extend neither left nor right (an N, a read end, or
    /// an extension that does not occur in the text), found by brute force
    /// over every substring of the read, right to left, with naive counts of
    /// their occurrences; and it finds a 30-base match that the greedy
    /// cover cuts into pieces shorter than the minimum.
    #[test]
    fn maximal_seeds_are_every_maximal_match() {
        let mut seed = 0x0fed_cba9_8765_4321u64;
        let mut text: Vec<u8> = (0..10_000).map(|_| (rng(&mut seed) % 4) as u8).collect();
        // For the last read: X[15..30] at 9000, not preceded by X[14].
        text.copy_within(5015..5030, 9000);
        text[8999] = (text[5014] + 1) % 4;
        let index = index_of(&text);
        let fm = index.fm();
        let min = 12;
        let len = 50;
        // Occurrences of every text substring of min..=len + 1 bases.
        let mut counts: std::collections::HashMap<&[u8], u64> = Default::default();
        for l in min..=len + 1 {
            for w in text.windows(l) {
                *counts.entry(w).or_default() += 1;
            }
        }
        let occurs = |p: &[u8]| counts.get(p).copied().unwrap_or(0);
        for k in 0..40 {
            let at = (rng(&mut seed) % 9_900) as usize;
            let mut r = text[at..at + len].to_vec();
            for _ in 0..(rng(&mut seed) % 7) {
                let i = (rng(&mut seed) % len as u64) as usize;
                r[i] = if k % 9 == 0 { 4 } else { (r[i] + 1) % 4 };
            }
            let mut want = Vec::new();
            for e in (min..=r.len()).rev() {
                for q in 0..=e - min {
                    let p = &r[q..e];
                    let ok = |b: u8| b < 4;
                    if !p.iter().all(|&b| ok(b)) || occurs(p) == 0 {
                        continue;
                    }
                    let grows = |ext: &[u8]| ext.iter().all(|&b| ok(b)) && occurs(ext) > 0;
                    let left = q > 0 && grows(&r[q - 1..e]);
                    let right = e < r.len() && grows(&r[q..e + 1]);
                    if !left && !right {
                        want.push((q as u32, (e - q) as u32, occurs(p)));
                    }
                }
            }
            let mut got = Vec::new();
            maximal_seeds(&fm, &r, min, &mut got);
            let got: Vec<(u32, u32, u64)> =
                got.iter().map(|s| (s.qpos, s.len, s.rows.len())).collect();
            assert_eq!(got, want, "read {k}");
        }
        // The read X + W: X the 30 bases at 5000, and X's last 15 bases
        // planted at 9000 (before W, the 3 bases at 9015). The greedy cover
        // takes the 18 bases X[15..] + W (at 9000), skips X[14], then X[..14]:
        // both shorter than 19, no seed; the 30-base X is a maximal match.
        let r: Vec<u8> = [&text[5000..5030], &text[9015..9018]].concat();
        let mut greedy = Vec::new();
        greedy_seeds(&fm, &r, 19, &mut greedy);
        assert!(greedy.is_empty(), "{greedy:?}");
        let mut got = Vec::new();
        maximal_seeds(&fm, &r, 19, &mut got);
        assert!(got.iter().any(|s| s.qpos == 0 && s.len == 30), "{got:?}");
    }

    /// SMEMs from the bidirectional index ([`smems`], from every
    /// `min`-th base) are the maximal matches found the slow way
    /// ([`maximal_seeds`], tested above against a naive count), rows
    /// included; [`smems_many`] in lockstep finds what [`smems_at`] finds
    /// job by job, for any least count of rows and stop: matches through
    /// `x`, starting at `stop` or after, with at least that many rows.
    #[test]
    fn smems_are_the_maximal_matches() {
        let mut seed = 0x5eed_0f5e_ed5e_ed01u64;
        let mut text: Vec<u8> = (0..20_000).map(|_| (rng(&mut seed) % 4) as u8).collect();
        // Near copies, so that matches shadow one another.
        for k in 0..20 {
            let from = (rng(&mut seed) % 19_000) as usize;
            let to = (rng(&mut seed) % 19_000) as usize;
            let piece = text[from..from + 200].to_vec();
            text[to..to + 200].copy_from_slice(&piece);
            text[to + 7 * k % 200] = (text[to + 7 * k % 200] + 1) % 4;
        }
        let index = index_of(&text);
        let bi = BiIndex {
            fwd: index.fm(),
            rev: index.rev_fm(),
        };
        let mut reads = Vec::new();
        for k in 0..60 {
            let at = (rng(&mut seed) % 19_900) as usize;
            let len = [36, 50, 60][k % 3];
            let mut r = text[at..at + len].to_vec();
            for _ in 0..(rng(&mut seed) % 6) {
                let i = (rng(&mut seed) % len as u64) as usize;
                r[i] = if k % 11 == 0 { 4 } else { (r[i] + 1) % 4 };
            }
            reads.push(r);
        }
        let mut jobs = Vec::new();
        for (k, r) in reads.iter().enumerate() {
            for min in [12, 19] {
                let mut want = Vec::new();
                maximal_seeds(&bi.fwd, r, min, &mut want);
                let mut got = Vec::new();
                smems(&bi, r, min, &mut got);
                let key = |v: &[Seed]| {
                    let mut v: Vec<(u32, u32, Interval)> =
                        v.iter().map(|s| (s.qpos, s.len, s.rows)).collect();
                    v.sort_unstable_by_key(|x| (x.0, x.1));
                    v
                };
                assert_eq!(key(&got), key(&want), "read {k}, min {min}");
            }
            for x in (0..r.len()).step_by(7) {
                for min_rows in [1, 2, 5] {
                    for stop in [0, x / 2, x] {
                        jobs.push(SmemJob {
                            codes: r,
                            x,
                            min_rows,
                            stop,
                        });
                    }
                }
            }
        }
        let many = smems_many(&bi, &jobs, 7);
        let mut reseeded = 0;
        for (j, got) in jobs.iter().zip(&many) {
            let mut one = Vec::new();
            smems_at(&bi, j.codes, j.x, j.min_rows, j.stop, &mut one);
            assert_eq!(got, &one, "{j:?}");
            for &(q, l, rows) in got {
                let (q, l) = (q as usize, l as usize);
                assert!(q >= j.stop && q <= j.x && j.x < q + l, "{j:?} {q} {l}");
                assert_eq!(rows, bi.fwd.backward_search(&j.codes[q..q + l]));
                assert!(rows.len() >= j.min_rows);
                reseeded += usize::from(j.min_rows > 1);
            }
        }
        assert!(reseeded > 100, "{reseeded}");
    }

    fn anchor(rev: bool, rpos: u64, qpos: u32, len: u32) -> Anchor {
        Anchor {
            rev,
            contig: 0,
            rpos,
            qpos,
            len,
        }
    }

    #[test]
    fn chains_follow_the_diagonal() {
        // Two seeds of one locus with a 3-base deletion between them, one
        // seed of another locus and one on the other strand.
        let mut a = vec![
            anchor(false, 1000, 0, 40),
            anchor(false, 1044, 41, 60),
            anchor(false, 50_000, 10, 30),
            anchor(true, 1000, 0, 100),
        ];
        let c = chain(&mut a, 300);
        assert_eq!(c.len(), 3);
        // Equal weights: reference order (the forward strand first).
        assert_eq!(c[0].weight, 100);
        assert_eq!(c[0].anchors.len(), 2);
        assert_eq!(c[0].best_anchor().qpos, 41);
        assert_eq!(c[1].weight, 100);
        assert_eq!(c[1].anchors.len(), 1);
        assert!(c[1].anchors[0].rev);
        assert_eq!(c[2].weight, 30);
    }

    #[test]
    fn out_of_order_or_far_anchors_start_chains() {
        // The second is before the first on the read; the third is past the
        // diagonal gap.
        let mut a = vec![
            anchor(false, 1000, 50, 30),
            anchor(false, 1100, 10, 30),
            anchor(false, 1300, 90, 30),
        ];
        let c = chain(&mut a, 1000);
        assert_eq!(c.len(), 3);
    }
}
