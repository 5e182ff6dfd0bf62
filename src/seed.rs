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
