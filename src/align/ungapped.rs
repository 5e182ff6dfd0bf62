//! The ungapped shortcut: a read's anchor diagonal proven to hold the
//! dynamic program's alignment, with no dynamic program run (`ungapped`).

use super::extend::finish;
#[cfg(doc)]
use super::extend::{extend, local_score};
use super::{Extended, Mode, Op, Scoring, clips};

/// What [`ungapped`] proved: the dynamic program's results for a read whose
/// best alignment in its window is ungapped on the anchor's diagonal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ungapped {
    /// [`local_score`]'s value.
    pub best: i32,
    /// [`extend`]'s value.
    pub ext: Extended,
}

/// The widest band of diagonals around the anchor's that [`ungapped`]
/// searches for a gapped alignment that could win (each side).
pub(super) const UNGAPPED_BAND: usize = 32;

/// The shortest exact run of the read on another diagonal that
/// [`ungapped`] looks for (shorter runs occur by chance in a window).
const UNGAPPED_MIN_RUN: usize = 12;

/// The ungapped shortcut: `read` aligned without gaps along the diagonal on
/// which its base 0 faces `window[offset]`, taken when it is provably what
/// the dynamic program finds, with no dynamic program run: `Some` with
/// [`local_score`]'s and [`extend`]'s values (the same CIGAR, NM and MD),
/// `None` when that cannot be shown cheaply (then run them).
///
/// In the dynamic program's scores (bonus included) let `s(i)` be read base
/// `i`'s score on the diagonal `d`, `δ(i) = match − s(i)` its deficit and
/// `B = Σ δ(i)` the read's (mismatches × (match + mismatch)). Any other
/// path in the window (one that leaves `d` or has a gap) splits into
/// stretches on `d` and *excursions* off it; replacing each excursion by
/// `d`'s own bases gives a path on `d` (its *projection*), and the path
/// scores its projection's score plus each excursion's gain (what the
/// excursion scores minus what `d` scores over the same read bases). This
/// function proves that every excursion's gain is negative, so that every
/// other path scores below a path on `d`; the results then follow from the
/// best segments of `d` alone (below). Three parts:
///
/// 1. An excursion that starts or ends on `d` and reaches a diagonal more
///    than `Δ` from it pays at least `gap_open + gap_extend × (Δ + 1)`
///    and gains at most `B` on the bases it covers; `Δ` is chosen so that
///    this is negative (`Δ = 0`, no band, for reads with one mismatch).
/// 2. The others within `Δ`: a Gotoh dynamic program over the `2Δ + 1`
///    diagonals, scoring each cell relative to `d` (`d`'s cells reset to 0:
///    an excursion starts or ends there; a path may start anywhere after
///    its clipped bases' gain, and end anywhere before the rest's), records
///    the largest gain of any excursion; it must be negative.
/// 3. A path that never touches `d` and scores at least `d`'s whole-read
///    score has a deficit of at most `B`: at most `g` gaps, `q`
///    mismatches and `u` unaligned bases with `g(open + extend) +
///    q(match + mismatch) + u × match ≤ B`, so an exact run of at least
///    `R = min ⌈(m − u − q) / (g + q + 1)⌉` bases on another diagonal.
///    Every such run contains one of the read's `w`-mers sampled every
///    `R − w + 1` bases (`w = min(R, 16)`); none of them may occur in the
///    window off `d`.
///
/// Then the dynamic program's local optimum is `d`'s best segment (its
/// score is [`local_score`]'s), a clipped end aligned whole is `d`'s own
/// bases, and [`extend`] gives: end-to-end, the whole read on `d`; local,
/// the whole read when it is within the clip penalty of every best segment
/// (`whole ≥ best − clip × clipped ends`), else the best segment when it
/// is the only one (ties between segments of `d` with different clips,
/// which block-aligner's choice would settle, give `None`). Reads or
/// windows with an N, diagonals that leave the window and reads with too
/// many mismatches (a band wider than [`UNGAPPED_BAND`], or runs shorter
/// than [`UNGAPPED_MIN_RUN`]) give `None`.
pub fn ungapped(read: &[u8], window: &[u8], offset: usize, mode: Mode) -> Option<Ungapped> {
    let m = read.len();
    if m == 0 || offset + m > window.len() {
        return None;
    }
    let on_d = &window[offset..offset + m];
    // Codes 0..=3; an N (4) sets a bit above them.
    if window.iter().fold(0u8, |x, &c| x | c) > 3 || read.iter().fold(0u8, |x, &c| x | c) > 3 {
        return None;
    }
    let sc = Scoring::of(mode);
    let hit = sc.matched + sc.bonus;
    let miss = sc.mismatch - sc.bonus;
    let (go, ge) = (sc.gap_open, sc.gap_extend);
    let k: i32 = read.iter().zip(on_d).map(|(a, b)| i32::from(a != b)).sum();
    let deficit = k * (hit + miss);
    // Part 1: the band.
    let mut band = 0usize;
    while deficit - go - ge * (band as i32 + 1) >= 0 {
        band += 1;
        if band > UNGAPPED_BAND {
            return None;
        }
    }
    // Prefix sums of the scores on d.
    let mut pre = Vec::with_capacity(m + 1);
    pre.push(0i32);
    let mut acc = 0;
    for (a, b) in read.iter().zip(on_d) {
        acc += if a == b { hit } else { -miss };
        pre.push(acc);
    }
    // The best segments of d.
    let seg = best_segments(&pre);
    if seg.best <= 0 {
        return None;
    }
    // Part 3: exact runs elsewhere, for a path off d scoring as much as
    // d's best segment.
    let run = min_run(m, hit * m as i32 - seg.best, hit, miss, go + ge);
    if run < UNGAPPED_MIN_RUN || runs_elsewhere(read, window, offset, run) {
        return None;
    }
    // Part 2.
    if band > 0 {
        let mism: Vec<usize> = (0..m).filter(|&i| read[i] != on_d[i]).collect();
        if excursion_may_win(read, window, offset, band, &pre, &mism, &sc) {
            return None;
        }
    }
    let whole = vec![(Op::Match, m as u32)];
    let cigar = match mode {
        Mode::EndToEnd => whole,
        Mode::Local => {
            let all = pre[m];
            if all == seg.best || all >= seg.best - sc.clip * seg.clips.0 {
                whole
            } else if seg.count == 1 && all < seg.best - sc.clip * seg.clips.1 {
                let (a, b) = seg.only;
                let mut c = Vec::with_capacity(3);
                if a > 0 {
                    c.push((Op::Soft, a as u32));
                }
                c.push((Op::Match, (b - a) as u32));
                if b < m {
                    c.push((Op::Soft, (m - b) as u32));
                }
                c
            } else {
                return None;
            }
        }
    };
    let start = offset + align_start(&cigar);
    Some(Ungapped {
        best: seg.best,
        ext: finish(read, window, start, cigar, &sc),
    })
}

/// The best score of a segment of the diagonal on which read base 0 faces
/// `window[offset]`, under `mode`'s dynamic-program scores (0 for the empty
/// one): the score of a local path, so at most [`local_score`]'s, and the
/// `best` [`ungapped`] gives when it gives one. `None` where the diagonal
/// leaves the window or the read or the window holds an N (where
/// [`ungapped`] gives `None` too). A few operations a base: what ranks
/// candidates before any shortcut or dynamic program runs.
pub fn diagonal_score(read: &[u8], window: &[u8], offset: usize, mode: Mode) -> Option<i32> {
    let m = read.len();
    if offset + m > window.len() {
        return None;
    }
    if window.iter().fold(0u8, |x, &c| x | c) > 3 || read.iter().fold(0u8, |x, &c| x | c) > 3 {
        return None;
    }
    let sc = Scoring::of(mode);
    let hit = sc.matched + sc.bonus;
    let miss = sc.mismatch - sc.bonus;
    let (mut run, mut best) = (0i32, 0i32);
    for (a, b) in read.iter().zip(&window[offset..offset + m]) {
        run = (run + if a == b { hit } else { -miss }).max(0);
        best = best.max(run);
    }
    Some(best)
}

/// Read bases clipped before the first aligned one.
fn align_start(cigar: &[(Op, u32)]) -> usize {
    clips(cigar).0 as usize
}

/// The least length `R` of the longest exact run of a path of a read of `m`
/// bases with a deficit of at most `deficit` (see [`ungapped`], part 3):
/// over `g` gaps (`gap` each at least), `q` mismatches (`hit + miss` each)
/// and the unaligned bases the rest allows (`hit` each).
fn min_run(m: usize, deficit: i32, hit: i32, miss: i32, gap: i32) -> usize {
    let mut run = usize::MAX;
    let mut g = 0;
    while g * gap <= deficit {
        let mut q = 0;
        while g * gap + q * (hit + miss) <= deficit {
            let u = (deficit - g * gap - q * (hit + miss)) / hit;
            let exact = m.saturating_sub((u + q) as usize);
            run = run.min(exact.div_ceil((g + q + 1) as usize));
            q += 1;
        }
        g += 1;
    }
    run
}

/// Whether some exact run of at least `run` read bases lies on another
/// diagonal of `window` than the one where base 0 faces `offset` (a
/// `w`-mer of the read, sampled every `run − w + 1` bases, occurs there).
fn runs_elsewhere(read: &[u8], window: &[u8], offset: usize, run: usize) -> bool {
    let w = run.min(16);
    if window.len() < w {
        return false;
    }
    let mask = if w == 16 {
        u32::MAX
    } else {
        (1u32 << (2 * w)) - 1
    };
    let mut kmers = Vec::with_capacity(window.len() - w + 1);
    let mut x = 0u32;
    for (j, &c) in window.iter().enumerate() {
        x = ((x << 2) | u32::from(c)) & mask;
        if j + 1 >= w {
            kmers.push(x);
        }
    }
    let step = run - w + 1;
    let mut i = 0;
    while i + w <= read.len() {
        let y = read[i..i + w]
            .iter()
            .fold(0u32, |y, &c| (y << 2) | u32::from(c));
        let home = offset + i;
        // (Counted in 32 bits: four compares a 128-bit vector.)
        let found = kmers.iter().fold(0u32, |n, &k| n + u32::from(k == y));
        let at_home = u32::from(kmers.get(home) == Some(&y));
        if found > at_home {
            return true;
        }
        i += step;
    }
    false
}

/// Whether an excursion from the diagonal `d` where read base 0 faces
/// `window[offset]`, within `band` diagonals of it, may win (see
/// [`ungapped`], part 2; `pre`: `d`'s prefix sums, `mism`: the read bases
/// it mismatches, in order): a Gotoh dynamic program in the read's rows and
/// the band's diagonals, each cell scored relative to `d`'s, in two layers:
/// - paths that left `d` at some row `x`: one that comes back to `d` wins
///   if it gained (scored at least `d` over the same bases), and one that
///   ends at row `e` (the rest clipped) if it scored at least what `d`
///   scores from `x` to its best end after `e` (`maxpost(e)`: the largest
///   prefix sum from `e` on; at the read's end, at least `d`'s own);
/// - paths that started off `d` at row `c`, worth `−pre[c]` (what `d`
///   scores from the read's start is the yardstick): one that comes back to
///   `d` wins if it gained. Paths that never touch `d` are part 3's.
///
/// Also `true` when the band leaves the window (then nothing is shown).
/// Three reductions keep it to a few rows, with the same answer as the
/// plain program (the tests compare them):
/// - An excursion gains only on rows where `d` mismatches (elsewhere `d`
///   scores a match, as much as any cell, and an inserted base loses it).
///   One that leaves `d` before the first mismatch `p` it covers does no
///   better than one that stays on `d` up to there and takes one gap to
///   where it is at row `p`: a deletion at row `p`, or an insertion of up
///   to `band` bases ending there (or starting there). So paths leave `d`
///   only there, entering the program at row `p` directly.
/// - A state worth `v` at row `i` gains at most the deficit `rem(i)` of the
///   bases still to come, so one with `v + rem(i) < 0` is dropped; a path
///   that started off `d`, `t` diagonals from it, must also pay a gap of
///   `t` to come back. So paths start only in the first
///   `(B − open − extend) / match` rows, and rows with nothing left are
///   skipped to the next mismatch.
pub(super) fn excursion_may_win(
    read: &[u8],
    window: &[u8],
    offset: usize,
    band: usize,
    pre: &[i32],
    mism: &[usize],
    sc: &Scoring,
) -> bool {
    const NEG: i32 = i32::MIN / 4;
    const LANES: usize = 2 * UNGAPPED_BAND + 1;
    let m = read.len();
    if offset < band || offset + m + band > window.len() {
        return true;
    }
    let lanes = 2 * band + 1;
    let hit = sc.matched + sc.bonus;
    let miss = sc.mismatch - sc.bonus;
    let (open, ext) = (sc.gap_open + sc.gap_extend, sc.gap_extend);
    // The cost of a gap of t.
    let gap = |t: usize| open + ext * (t as i32 - 1);
    let total = pre[m];
    let deficit = hit * m as i32 - total;
    // The deficit of read bases i.. on d.
    let rem = |i: usize| hit * (m - i) as i32 - (total - pre[i]);
    let mut maxpost = [NEG; 1024];
    let maxpost = if m < maxpost.len() {
        &mut maxpost[..=m]
    } else {
        return true;
    };
    let mut top = NEG;
    for e in (0..=m).rev() {
        top = top.max(pre[e]);
        maxpost[e] = top;
    }
    // Mismatches are asked about in order: a cursor.
    let mut cursor = 0usize;
    let mut is_mism = |i: usize| {
        while cursor < mism.len() && mism[cursor] < i {
            cursor += 1;
        }
        mism.get(cursor) == Some(&i)
    };
    // Paths may start off d at rows up to this.
    let last_start = (deficit - open) / hit;
    // What a path that started off d, l lanes from it, must still pay to
    // come back: a gap, or in an insertion its extension.
    let (mut back, mut back_f) = ([0i32; LANES], [0i32; LANES]);
    for l in 0..lanes {
        let t = l.abs_diff(band);
        if t > 0 {
            back[l] = gap(t);
            back_f[l] = ext * t as i32;
        }
    }
    // Lane l is the diagonal d + l − band; row i: i read bases consumed.
    // Per layer (0: left d, 1: started off it), the best value at each
    // lane's point and the best ending with an insertion.
    let mut h = [[NEG; LANES]; 2];
    let mut f = [[NEG; LANES]; 2];
    let (mut nh, mut nf) = (h, f);
    // Paths leaving d at row p (a mismatch): a deletion of t, or an
    // insertion of up to `band` bases ending at p.
    let leave = |h: &mut [[i32; LANES]; 2], f: &mut [[i32; LANES]; 2], p: usize| {
        for t in 1..=band {
            h[0][band + t] = h[0][band + t].max(-gap(t));
            if t <= p {
                let v = -gap(t) - (pre[p] - pre[p - t]);
                h[0][band - t] = h[0][band - t].max(v);
                f[0][band - t] = f[0][band - t].max(v);
            }
        }
    };
    let mut live = [false, true];
    if last_start >= 0 {
        h[1][..lanes].fill(0);
        h[1][band] = NEG;
    }
    let mut i = 0;
    while i < m {
        // Row i + 1 from row i: read base r = i.
        let r = i;
        i += 1;
        let a = read[r];
        let on_d = pre[i] - pre[r];
        let win = &window[offset + r - band..offset + r + band + 1];
        // An insertion may leave d at a mismatch.
        h[0][band] = if is_mism(r) { 0 } else { NEG };
        live[0] |= h[0][band] == 0;
        let starts = (i as i32) <= last_start;
        let low = -rem(i);
        for y in 0..2 {
            if !(live[y] || y == 1 && starts) {
                continue;
            }
            let (h, f) = (&h[y][..lanes], &f[y][..lanes]);
            let (nh, nf) = (&mut nh[y][..lanes], &mut nf[y][..lanes]);
            // Diagonal steps, then insertions.
            for ((x, &v), &b) in nh.iter_mut().zip(h).zip(win) {
                *x = v + if a == b { hit } else { -miss } - on_d;
            }
            nh[band] = NEG;
            let end = nh.iter().copied().max().unwrap_or(NEG);
            for ((x, &v), &w) in nf.iter_mut().zip(&h[1..]).zip(&f[1..]) {
                *x = (v - open).max(w - ext) - on_d;
            }
            nf[lanes - 1] = NEG;
            for (x, &w) in nh.iter_mut().zip(nf.iter()) {
                *x = (*x).max(w);
            }
            if y == 0 {
                // A path that left d ends here, or (last row) inserted.
                if end + pre[i] - maxpost[i] >= 0 || (i == m && nf.iter().any(|&x| x >= 0)) {
                    return true;
                }
            }
            // Deletions along the row.
            // (NEG minus a band's extensions stays far from overflow.)
            let mut e = NEG;
            for l in 1..lanes {
                e = (nh[l - 1] - open).max(e - ext);
                nh[l] = nh[l].max(e);
            }
            if nh[band] >= 0 {
                // Back on d with a gain.
                return true;
            }
            if y == 1 && starts {
                // A path starts here, its first i bases clipped.
                for x in nh.iter_mut() {
                    *x = (*x).max(-pre[i]);
                }
            }
            nh[band] = NEG;
            // A state that cannot gain back what it lost (and, started off
            // d, pay its way back) is dropped.
            let (bh, bf) = if y == 1 {
                (&back[..lanes], &back_f[..lanes])
            } else {
                (&[0i32; LANES][..lanes], &[0i32; LANES][..lanes])
            };
            for (x, &p) in nh.iter_mut().zip(bh) {
                *x = if *x - p < low { NEG } else { *x };
            }
            for (z, &q) in nf.iter_mut().zip(bf) {
                *z = if *z - q < low { NEG } else { *z };
            }
            live[y] = nh.iter().chain(nf.iter()).fold(NEG, |a, &x| a.max(x)) > NEG;
        }
        for y in 0..2 {
            if !live[y] {
                nh[y] = [NEG; LANES];
                nf[y] = [NEG; LANES];
            }
        }
        std::mem::swap(&mut h, &mut nh);
        std::mem::swap(&mut f, &mut nf);
        if i < m && is_mism(i) {
            leave(&mut h, &mut f, i);
            live[0] = true;
        } else if !live[0] && !live[1] && i as i32 > last_start {
            // Nothing can win before the next mismatch.
            let k = mism.partition_point(|&p| p < i);
            let Some(&p) = mism.get(k) else {
                return false;
            };
            i = p;
            h = [[NEG; LANES]; 2];
            f = [[NEG; LANES]; 2];
            leave(&mut h, &mut f, p);
            live[0] = true;
        }
    }
    false
}

/// The best-scoring segments `[a, b)` of a diagonal given its prefix sums.
struct Segments {
    /// Their score.
    best: i32,
    /// How many there are.
    count: usize,
    /// The fewest and most clipped ends among them.
    clips: (i32, i32),
    /// One of them (the only one when `count` is 1).
    only: (usize, usize),
}

/// The best segments of `pre` (see [`Segments`]).
fn best_segments(pre: &[i32]) -> Segments {
    let m = pre.len() - 1;
    let mut s = Segments {
        best: i32::MIN,
        count: 0,
        clips: (i32::MAX, i32::MIN),
        only: (0, 0),
    };
    // The least prefix sum before b: whether a = 0 attains it, how many
    // a > 0 do, and the last that does.
    let (mut low, mut at_zero, mut after, mut last) = (pre[0], true, 0usize, 0usize);
    for (b, &p) in pre.iter().enumerate().skip(1) {
        let v = p - low;
        if v >= s.best {
            if v > s.best {
                s.best = v;
                s.count = 0;
                s.clips = (i32::MAX, i32::MIN);
            }
            let end = i32::from(b < m);
            if at_zero {
                s.count += 1;
                s.clips = (s.clips.0.min(end), s.clips.1.max(end));
                s.only = (0, b);
            }
            if after > 0 {
                s.count += after;
                s.clips = (s.clips.0.min(1 + end), s.clips.1.max(1 + end));
                s.only = (last, b);
            }
        }
        if p < low {
            (low, at_zero, after, last) = (p, false, 1, b);
        } else if p == low {
            (after, last) = (after + 1, b);
        }
    }
    s
}
