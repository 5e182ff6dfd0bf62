//! Paired-end reads: which hits of two mates form a proper pair, the insert
//! size window, and the SAM fields that tie the mates together.
//!
//! A pair is *proper* when both mates are on the same contig, in the library's
//! orientation (`--fr`, `--rf`, `--ff`, as bowtie's), and the fragment — from
//! the leftmost mate start to the rightmost mate end — is within the window
//! (`-I`/`-X`, or estimated from the first pairs of the input). Among proper
//! pairs the one with the fewest mismatches in all wins, ties broken by the
//! read name (the same choice on every run), as single-end reads choose their
//! primary.

use crate::read::Hit;

/// Relative orientation of the mates of a proper pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Orientation {
    /// Mate on the forward strand upstream of the mate on the reverse strand
    /// (Illumina paired-end).
    #[default]
    Fr,
    /// Mate on the reverse strand upstream (mate-pair libraries).
    Rf,
    /// Both on one strand, mate 1 upstream on that strand.
    Ff,
}

impl crate::Choice for Orientation {
    const ALL: &'static [Self] = &[Orientation::Fr, Orientation::Rf, Orientation::Ff];

    fn name(self) -> &'static str {
        match self {
            Orientation::Fr => "fr",
            Orientation::Rf => "rf",
            Orientation::Ff => "ff",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Orientation::Fr => {
                "Mate on the forward strand upstream of the mate on the reverse strand (Illumina paired-end)"
            }
            Orientation::Rf => "Mate on the reverse strand upstream (mate-pair libraries)",
            Orientation::Ff => "Both on one strand, mate 1 upstream on that strand",
        }
    }
}

/// Fragment lengths a proper pair may have (inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Shortest fragment.
    pub min: u64,
    /// Longest fragment.
    pub max: u64,
}

impl Window {
    /// Whether mates whose [`fragment`] is `f` form a proper pair: they
    /// pair (`Some`) and the fragment is within the window.
    pub fn fits(&self, f: Option<u64>) -> bool {
        f.is_some_and(|f| f >= self.min && f <= self.max)
    }
}

/// The window used when `-X` is not given and too few pairs map uniquely to
/// estimate one (bowtie's default `-X` for paired-end reads is 250; 500
/// keeps longer Illumina libraries proper).
pub const DEFAULT_WINDOW: Window = Window { min: 0, max: 500 };

/// Pairs the estimate reads at most: the first ones of the input, so the
/// window (and the output) does not depend on `-K` or `-t`.
pub const ESTIMATE_PAIRS: usize = 10_000;

/// Fewer uniquely mapped pairs than this: no estimate.
pub const ESTIMATE_MIN: usize = 20;

/// Fragments longer than this are left out of the estimate (not a library's
/// insert: a mate in a repeat copy far away).
pub const ESTIMATE_MAX_FRAGMENT: u64 = 100_000;

/// The fragment of mate 1 at `a` (length `la`) and mate 2 at `b` (`lb`) if
/// they are on one contig in orientation `o`; `None` otherwise.
///
/// `--fr` (Illumina paired-end) goes by the mates' 5' ends, as bwa mem does:
/// the forward mate's first base must come before the reverse mate's last,
/// and the fragment runs from the one to the other. So mates that overlap
/// past each other's start (a fragment shorter than a read, with a few
/// adapter bases aligned, or an indel moving one start) still pair, as the
/// same molecule; for mates that do not overlap past each other it is the
/// span from the leftmost start to the rightmost end, as before. `--rf` and
/// `--ff` keep bowtie's rule: the upstream mate starts and ends no later
/// than the other (containment allowed, dovetailing not), and the fragment
/// is that span.
pub fn fragment(a: &Hit, la: u64, b: &Hit, lb: u64, o: Orientation) -> Option<u64> {
    if a.contig != b.contig {
        return None;
    }
    let (ea, eb) = (a.pos + la, b.pos + lb);
    // `x` upstream of `y`: starts and ends no later.
    let up = |xs: u64, xe: u64, ys: u64, ye: u64| xs <= ys && xe <= ye;
    // The forward mate at `fs`, the reverse one ending at `re`: 5' to 5'.
    let fr = |fs: u64, re: u64| (fs < re).then(|| re - fs);
    let span = || ea.max(eb) - a.pos.min(b.pos);
    match (o, a.rev, b.rev) {
        (Orientation::Fr, false, true) => fr(a.pos, eb),
        (Orientation::Fr, true, false) => fr(b.pos, ea),
        (Orientation::Rf, true, false) | (Orientation::Ff, false, false) => {
            up(a.pos, ea, b.pos, eb).then(span)
        }
        (Orientation::Rf, false, true) | (Orientation::Ff, true, true) => {
            up(b.pos, eb, a.pos, ea).then(span)
        }
        _ => None,
    }
}

/// [`fragment`] of a mate at `own` (length `own_len`) with its mate at
/// `mate`: `first` when `own` is mate 1 ([`fragment`] takes mate 1 first).
pub fn fragment_of(
    first: bool,
    own: &Hit,
    own_len: u64,
    mate: &Hit,
    mate_len: u64,
    o: Orientation,
) -> Option<u64> {
    if first {
        fragment(own, own_len, mate, mate_len, o)
    } else {
        fragment(mate, mate_len, own, own_len, o)
    }
}

/// SAM TLEN of a mate at `pos` (length `len`) whose mate is at `mpos`
/// (`mlen`) on the same contig: the fragment length, positive for the
/// leftmost mate, negative for the other; mate 1 counts as leftmost when
/// both start at the same base.
pub fn tlen(pos: u64, len: u64, mpos: u64, mlen: u64, first: bool) -> i64 {
    let span = ((pos + len).max(mpos + mlen) - pos.min(mpos)) as i64;
    if pos < mpos || (pos == mpos && first) {
        span
    } else {
        -span
    }
}

/// A proper pair chosen from the mates' hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// Index into mate 1's hits.
    pub a: usize,
    /// Index into mate 2's hits.
    pub b: usize,
    /// No other proper pair has as few mismatches.
    pub unique: bool,
}

/// The proper pair with the fewest mismatches among `h1` × `h2` (mates of
/// lengths `l1`, `l2`), ties broken by `seed` (a hash of the read name).
pub fn best_pair(
    h1: &[Hit],
    l1: u64,
    h2: &[Hit],
    l2: u64,
    o: Orientation,
    w: Window,
    seed: u64,
) -> Option<Choice> {
    if h1.is_empty() || h2.is_empty() {
        return None;
    }
    // Mate 2's hits by (contig, position): each mate-1 hit looks only at
    // those within the window's reach.
    let mut order: Vec<usize> = (0..h2.len()).collect();
    order.sort_unstable_by_key(|&j| (h2[j].contig, h2[j].pos, h2[j].rev));
    let mut best: Option<u32> = None;
    let mut ties: Vec<(usize, usize)> = Vec::new();
    for (i, a) in h1.iter().enumerate() {
        let lo = a.pos.saturating_sub(w.max);
        let from = order.partition_point(|&j| (h2[j].contig, h2[j].pos) < (a.contig, lo));
        for &j in &order[from..] {
            let b = &h2[j];
            if b.contig != a.contig || b.pos > a.pos + w.max {
                break;
            }
            if !w.fits(fragment(a, l1, b, l2, o)) {
                continue;
            }
            let score = u32::from(a.nm) + u32::from(b.nm);
            match best {
                Some(s) if score > s => continue,
                Some(s) if score == s => ties.push((i, j)),
                _ => {
                    best = Some(score);
                    ties.clear();
                    ties.push((i, j));
                }
            }
        }
    }
    if ties.is_empty() {
        return None;
    }
    ties.sort_unstable();
    let (a, b) = ties[(seed % ties.len() as u64) as usize];
    Some(Choice {
        a,
        b,
        unique: ties.len() == 1,
    })
}

/// An insert-size estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Pairs it used (after outliers were dropped).
    pub pairs: usize,
    /// Mean fragment length.
    pub mean: f64,
    /// Standard deviation.
    pub sd: f64,
    /// mean ± 4 sd, at least 0.
    pub window: Window,
}

/// Estimates the window from the fragment lengths of uniquely mapped pairs:
/// values outside the quartiles ± 2 interquartile ranges are dropped (bwa
/// sampe does the same), the window is mean ± 4 standard deviations of the
/// rest. `None` with fewer than [`ESTIMATE_MIN`] values.
pub fn estimate(fragments: &[u64]) -> Option<Estimate> {
    if fragments.len() < ESTIMATE_MIN {
        return None;
    }
    let mut f = fragments.to_vec();
    f.sort_unstable();
    let (q1, q3) = (f[f.len() / 4], f[f.len() * 3 / 4]);
    let iqr = q3 - q1;
    let (lo, hi) = (q1.saturating_sub(2 * iqr), q3 + 2 * iqr);
    let kept: Vec<f64> = f
        .iter()
        .filter(|&&x| (lo..=hi).contains(&x))
        .map(|&x| x as f64)
        .collect();
    let n = kept.len() as f64;
    let mean = kept.iter().sum::<f64>() / n;
    let sd = (kept.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt();
    Some(Estimate {
        pairs: kept.len(),
        mean,
        sd,
        window: Window {
            min: (mean - 4.0 * sd).max(0.0).floor() as u64,
            max: (mean + 4.0 * sd).ceil() as u64,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(contig: u32, pos: u64, rev: bool, nm: u8) -> Hit {
        Hit {
            nm,
            contig,
            pos,
            rev,
            text_pos: pos,
        }
    }

    /// Every orientation rule by brute force over small placements, on one
    /// contig: `--fr` pairs when the forward mate starts before the reverse
    /// mate ends (the fragment between them); `--rf`/`--ff` when the rule's
    /// upstream mate starts and ends no later than the other.
    #[test]
    fn fragments_follow_the_orientation_rules() {
        for o in [Orientation::Fr, Orientation::Rf, Orientation::Ff] {
            for (ra, rb) in [(false, false), (false, true), (true, false), (true, true)] {
                for pa in 0..12u64 {
                    for pb in 0..12u64 {
                        for (la, lb) in [(3, 3), (2, 5), (5, 2)] {
                            let (a, b) = (hit(0, pa, ra, 0), hit(0, pb, rb, 0));
                            // Which mate must be upstream, if any.
                            let first_up = match (o, ra, rb) {
                                (Orientation::Fr, false, true)
                                | (Orientation::Rf, true, false)
                                | (Orientation::Ff, false, false) => Some(true),
                                (Orientation::Fr, true, false)
                                | (Orientation::Rf, false, true)
                                | (Orientation::Ff, true, true) => Some(false),
                                _ => None,
                            };
                            let want = first_up.and_then(|up1| {
                                if o == Orientation::Fr {
                                    let (fs, re) = if up1 { (pa, pb + lb) } else { (pb, pa + la) };
                                    return (fs < re).then(|| re - fs);
                                }
                                let ok = if up1 {
                                    pa <= pb && pa + la <= pb + lb
                                } else {
                                    pb <= pa && pb + lb <= pa + la
                                };
                                ok.then(|| (pa + la).max(pb + lb) - pa.min(pb))
                            });
                            assert_eq!(fragment(&a, la, &b, lb, o), want, "{o:?} {a:?} {b:?}");
                            let other = hit(1, pb, rb, 0);
                            assert_eq!(fragment(&a, la, &other, lb, o), None);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn tlen_is_signed_by_the_leftmost_mate() {
        assert_eq!(tlen(100, 50, 300, 50, true), 250);
        assert_eq!(tlen(300, 50, 100, 50, false), -250);
        assert_eq!(tlen(300, 50, 100, 50, true), -250);
        // Same start: mate 1 positive, mate 2 negative.
        assert_eq!(tlen(10, 30, 10, 20, true), 30);
        assert_eq!(tlen(10, 20, 10, 30, false), -30);
    }

    /// `best_pair` against a brute force over every combination.
    #[test]
    fn best_pair_matches_brute_force() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |m: u64| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s % m
        };
        for case in 0..3000 {
            let n1 = rnd(6) as usize;
            let n2 = rnd(6) as usize;
            let mk = |rnd: &mut dyn FnMut(u64) -> u64| {
                hit(rnd(2) as u32, rnd(400), rnd(2) == 1, rnd(3) as u8)
            };
            let h1: Vec<Hit> = (0..n1).map(|_| mk(&mut rnd)).collect();
            let h2: Vec<Hit> = (0..n2).map(|_| mk(&mut rnd)).collect();
            let o = [Orientation::Fr, Orientation::Rf, Orientation::Ff][case % 3];
            let w = Window {
                min: rnd(50),
                max: 50 + rnd(200),
            };
            let (l1, l2) = (1 + rnd(60), 1 + rnd(60));
            let seed = rnd(1000);
            let mut all = Vec::new();
            for (i, a) in h1.iter().enumerate() {
                for (j, b) in h2.iter().enumerate() {
                    if let Some(f) = fragment(a, l1, b, l2, o)
                        && (w.min..=w.max).contains(&f)
                    {
                        all.push((u32::from(a.nm) + u32::from(b.nm), i, j));
                    }
                }
            }
            let want = all.iter().map(|x| x.0).min().map(|m| {
                let mut t: Vec<(usize, usize)> = all
                    .iter()
                    .filter(|x| x.0 == m)
                    .map(|x| (x.1, x.2))
                    .collect();
                t.sort_unstable();
                let (a, b) = t[(seed % t.len() as u64) as usize];
                Choice {
                    a,
                    b,
                    unique: t.len() == 1,
                }
            });
            assert_eq!(best_pair(&h1, l1, &h2, l2, o, w, seed), want, "case {case}");
        }
    }

    #[test]
    fn estimate_drops_outliers() {
        let mut f: Vec<u64> = (0..1000).map(|i| 300 + (i % 41) - 20).collect();
        f.extend([5, 90_000, 20_000]);
        let e = estimate(&f).unwrap();
        assert_eq!(e.pairs, 1000);
        assert!((e.mean - 300.0).abs() < 0.5, "{e:?}");
        assert!(e.sd > 11.0 && e.sd < 12.5, "{e:?}");
        assert!(e.window.min > 240 && e.window.max < 360, "{e:?}");
        assert_eq!(estimate(&f[..ESTIMATE_MIN - 1]), None);
    }
}
