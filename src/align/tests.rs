use super::bound::{BOUND_VECTOR, BoundCosts, PAD_CODE, bound_rows};
use super::ungapped::{UNGAPPED_BAND, excursion_may_win};
use super::*;

/// A plain O(mn) affine-gap dynamic program (Gotoh): the best score of
/// `read` against `window` in `mode` with the dynamic program's scores
/// (bonus included; no clip penalties) — the oracle of block-aligner's.
pub(super) fn dp(read: &[u8], window: &[u8], mode: Mode) -> i32 {
    let sc = Scoring::of(mode);
    let (m, n) = (read.len(), window.len());
    let neg = i32::MIN / 4;
    let local = mode == Mode::Local;
    // h: best ending at (i, j); e: ending with a deletion (gap in read);
    // f: ending with an insertion.
    let mut h = vec![vec![neg; n + 1]; m + 1];
    let mut e = vec![vec![neg; n + 1]; m + 1];
    let mut f = vec![vec![neg; n + 1]; m + 1];
    // Free window prefix (semi-global) / the empty alignment (local).
    h[0].fill(0);
    for i in 1..=m {
        h[i][0] = if local {
            0
        } else {
            -(sc.gap_open + sc.gap_extend * i as i32)
        };
        f[i][0] = h[i][0];
    }
    let (go, ge) = (sc.gap_open, sc.gap_extend);
    let mut best = 0;
    for i in 1..=m {
        for j in 1..=n {
            e[i][j] = (e[i][j - 1] - ge).max(h[i][j - 1] - go - ge);
            f[i][j] = (f[i - 1][j] - ge).max(h[i - 1][j] - go - ge);
            let d = h[i - 1][j - 1] + sc.dp_substitution(read[i - 1], window[j - 1]);
            let mut v = d.max(e[i][j]).max(f[i][j]);
            if local {
                v = v.max(0);
                best = best.max(v);
            }
            h[i][j] = v;
        }
    }
    if local {
        best
    } else {
        *h[m].iter().max().unwrap()
    }
}

pub(super) fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// A read drawn from `window` with substitutions, indels and (sometimes)
/// random ends.
pub(super) fn mutate(seed: &mut u64, window: &[u8]) -> Vec<u8> {
    let start = (rng(seed) % 20) as usize;
    let end = window.len() - (rng(seed) % 20) as usize;
    let mut read = Vec::new();
    let mut i = start;
    while i < end {
        match rng(seed) % 40 {
            0 => read.push((rng(seed) % 4) as u8),
            1 => i += 1 + (rng(seed) % 4) as usize,
            2 => {
                read.push(((window[i] as u64 + 1 + rng(seed) % 3) % 4) as u8);
                i += 1;
            }
            _ => {
                read.push(window[i]);
                i += 1;
            }
        }
    }
    if rng(seed).is_multiple_of(4) {
        for _ in 0..(rng(seed) % 30) {
            read.push((rng(seed) % 4) as u8);
        }
    }
    read
}

/// block-aligner's score equals the plain DP's, and the CIGAR it gives
/// scores that much, spans the whole read and fits the window — for
/// random reads with substitutions, indels, random tails and Ns.
#[test]
fn extension_matches_plain_dp() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let (mut cases, mut suboptimal) = (0usize, [0usize; 2]);
    for case in 0..1000 {
        let n = 40 + (rng(&mut seed) % 200) as usize;
        let mut window: Vec<u8> = (0..n).map(|_| (rng(&mut seed) % 4) as u8).collect();
        if case % 7 == 0 {
            let k = (rng(&mut seed) % n as u64) as usize;
            window[k] = 4;
        }
        let read = mutate(&mut seed, &window);
        if read.is_empty() {
            continue;
        }
        for mode in [Mode::EndToEnd, Mode::Local] {
            let sc = Scoring::of(mode);
            let want = dp(&read, &window, mode);
            let got = extend(&read, &window, mode);
            let Some(got) = got else {
                assert!(
                    want <= 0,
                    "case {case} {mode:?}: nothing found, DP has {want}"
                );
                continue;
            };
            let d = describe(&read, &window, got.ref_start, &got.cigar, &sc);
            assert_eq!(d.score, got.score, "case {case} {mode:?}: CIGAR rescored");
            assert_eq!(d.ref_end, got.ref_end);
            assert!(got.ref_end <= window.len());
            let read_len: u32 = got.cigar.iter().filter(|o| o.0.reads()).map(|o| o.1).sum();
            assert_eq!(read_len as usize, read.len(), "case {case} {mode:?}");
            match mode {
                Mode::EndToEnd => {
                    let aligned: u32 = got
                        .cigar
                        .iter()
                        .filter(|o| o.0 == Op::Match)
                        .map(|o| o.1)
                        .sum();
                    let dp_score = got.score + sc.bonus * aligned as i32;
                    assert!(dp_score <= want, "case {case}: above the optimum");
                    assert_eq!(got.clipped_ends(), 0);
                    suboptimal[0] += usize::from(dp_score < want);
                }
                Mode::Local => {
                    // The optimal local alignment, or the whole read
                    // within the clip penalty of it.
                    let clips = got.clipped_ends();
                    assert!(got.score <= want, "case {case}: above the optimum");
                    let bound = if clips > 0 { want } else { want - 2 * sc.clip };
                    suboptimal[1] += usize::from(got.score < bound);
                }
            }
            cases += 1;
        }
    }
    // Adaptive blocks (block-aligner's speed) may miss the optimum of a
    // read this noisy (7.5% errors, indels of up to 4 bases) now and
    // then; never of more than 1 case in 100.
    eprintln!("suboptimal of {cases}: {suboptimal:?}");
    assert!(
        100 * (suboptimal[0] + suboptimal[1]) <= cases,
        "suboptimal of {cases}: {suboptimal:?}"
    );
}

/// NM, MD, score and span of a hand-made CIGAR with a deletion, a
/// mismatch and an insertion.
#[test]
fn describe_md_and_nm() {
    let sc = Scoring::of(Mode::Local);
    // ref ACGTACGTAC, read AC-TAGGTACC (deletion of G, mismatch C→G, insertion C)
    let reference = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1];
    let read = [0, 1, 3, 0, 2, 2, 3, 0, 1, 1];
    let cigar = [(Op::Match, 2), (Op::Del, 1), (Op::Match, 7), (Op::Ins, 1)];
    let d = describe(&read, &reference, 0, &cigar, &sc);
    assert_eq!(String::from_utf8(d.md).unwrap(), "2^G2C4");
    assert_eq!(d.nm, 3);
    assert_eq!(d.ref_end, 10);
    assert_eq!(d.score, 8 - 4 - 7 - 7);
    assert_eq!(ref_span(&cigar), 10);
}

#[test]
fn exact_read_aligns_whole() {
    let window: Vec<u8> = (0..200u64).map(|i| ((i * 7 + i / 3) % 4) as u8).collect();
    let read = window[30..130].to_vec();
    for mode in [Mode::EndToEnd, Mode::Local] {
        let a = extend(&read, &window, mode).unwrap();
        assert_eq!(a.cigar, vec![(Op::Match, 100)]);
        assert_eq!(a.nm, 0);
        assert_eq!(String::from_utf8(a.md).unwrap(), "100");
        assert_eq!(a.score, Scoring::of(mode).perfect(100));
    }
}

/// Whether an excursion from the diagonal `d` where read base 0 faces
/// `window[offset]`, within `band` diagonals of it, may win, the plain
/// way (`excursion_may_win`'s oracle): the same tests over every row,
/// every state, paths starting and gaps leaving `d` anywhere.
fn excursion_may_win_plain(
    read: &[u8],
    window: &[u8],
    offset: usize,
    band: usize,
    pre: &[i32],
    sc: &Scoring,
) -> bool {
    let neg = i32::MIN / 4;
    let lanes = 2 * band + 1;
    let m = read.len();
    let (open, ext) = (sc.gap_open + sc.gap_extend, sc.gap_extend);
    let maxpost: Vec<i32> = (0..=m).map(|e| *pre[e..].iter().max().unwrap()).collect();
    // Lane l is the diagonal d + l − band; point (i, c): i read bases
    // and c window bases consumed.
    let col = |i: usize, l: usize| (offset + i + l) as isize - band as isize;
    let valid = |c: isize| c >= 0 && c <= window.len() as isize;
    // [left d, started off d]: the best value at each point, and ending
    // with an insertion.
    let mut h = [vec![neg; lanes], vec![neg; lanes]];
    let mut f = [vec![neg; lanes], vec![neg; lanes]];
    for (l, v) in h[1].iter_mut().enumerate() {
        if valid(col(0, l)) && l != band {
            *v = 0;
        }
    }
    h[0][band] = 0;
    for i in 1..=m {
        let a = read[i - 1];
        let on_d = pre[i] - pre[i - 1];
        let mut nh = [vec![neg; lanes], vec![neg; lanes]];
        let mut nf = [vec![neg; lanes], vec![neg; lanes]];
        for y in 0..2 {
            for l in 0..lanes {
                let c = col(i, l);
                if !valid(c) {
                    continue;
                }
                if c >= 1 && h[y][l] > neg && l != band {
                    let v = h[y][l] + sc.dp_substitution(a, window[c as usize - 1]) - on_d;
                    nh[y][l] = v;
                    if y == 0 && v + pre[i] - maxpost[i] >= 0 {
                        // The path ends here.
                        return true;
                    }
                }
                if l + 1 < lanes && valid(col(i - 1, l + 1)) {
                    nf[y][l] = (h[y][l + 1] - open).max(f[y][l + 1] - ext) - on_d;
                    nh[y][l] = nh[y][l].max(nf[y][l]);
                    if i == m && y == 0 && nf[y][l] >= 0 {
                        // The read ends inserted.
                        return true;
                    }
                }
            }
            let mut e = neg;
            for l in 0..lanes {
                if !valid(col(i, l)) {
                    e = neg;
                    continue;
                }
                if l > 0 {
                    e = (nh[y][l - 1] - open).max(e - ext).max(neg);
                    nh[y][l] = nh[y][l].max(e);
                }
                if l == band {
                    if nh[y][l] >= 0 {
                        // Back on d.
                        return true;
                    }
                    nh[y][l] = if y == 0 { 0 } else { neg };
                } else if y == 1 {
                    // A path starts here, its first i bases clipped.
                    nh[y][l] = nh[y][l].max(-pre[i]);
                }
            }
        }
        h = nh;
        f = nf;
    }
    false
}

/// A read that starts (or, mirrored, ends) with `h` bases of a
/// homopolymer run of the window followed by `l` inserted bases, the
/// rest on the diagonal of the window's offset 32: the run lets the
/// read's start align some diagonals off with the insertion after it.
fn homopolymer_insertion(seed: &mut u64, m: usize) -> (Vec<u8>, Vec<u8>, usize) {
    let n = m + 64;
    let mut window: Vec<u8> = (0..n).map(|_| (rng(seed) % 4) as u8).collect();
    let h = (4 + (rng(seed) % 16) as usize).min(m / 3);
    let l = (1 + (rng(seed) % 6) as usize).min(m / 4);
    let base = (rng(seed) % 4) as u8;
    let run = 32 - (rng(seed) % 8) as usize..32 + h + l + (rng(seed) % 8) as usize;
    window[run].fill(base);
    let mut read = vec![base; h];
    read.extend((0..l).map(|_| (rng(seed) % 4) as u8));
    read.extend_from_slice(&window[32 + h + l..32 + m]);
    for _ in 0..rng(seed) % 3 {
        let i = (rng(seed) % m as u64) as usize;
        read[i] = (read[i] + 1) % 4;
    }
    if rng(seed).is_multiple_of(2) {
        read.reverse();
        window.reverse();
    }
    (window, read, 32)
}

/// The pruned band DP (`excursion_may_win`) answers what the plain one
/// (every row, every state, gaps leaving d anywhere) does, for every
/// band width, on the shortcut's random cases.
#[test]
fn pruned_band_dp_agrees_with_plain() {
    let mut seed = 0x1d8e_4e27_c47d_124fu64;
    let mut wins = [0usize; 2];
    for case in 0..1500 {
        let m = [150, 100, 36, 60][case % 4];
        let subs = (rng(&mut seed) % 8) as usize;
        let (window, read, offset) = if case % 3 == 0 {
            homopolymer_insertion(&mut seed, m)
        } else {
            ungapped_case(&mut seed, m, subs)
        };
        if read.iter().chain(&window).any(|&c| c > 3) {
            continue;
        }
        for mode in [Mode::EndToEnd, Mode::Local] {
            let sc = Scoring::of(mode);
            let mut pre = vec![0];
            for i in 0..m {
                pre.push(pre[i] + sc.dp_substitution(read[i], window[offset + i]));
            }
            let mism: Vec<usize> = (0..m).filter(|&i| read[i] != window[offset + i]).collect();
            for band in 1..=UNGAPPED_BAND {
                let plain = excursion_may_win_plain(&read, &window, offset, band, &pre, &sc);
                let pruned = excursion_may_win(&read, &window, offset, band, &pre, &mism, &sc);
                assert_eq!(plain, pruned, "case {case} {mode:?} band {band}");
                wins[usize::from(plain)] += 1;
            }
        }
    }
    eprintln!("no excursion wins / one may: {wins:?}");
    assert!(wins[0] > 1000 && wins[1] > 1000, "{wins:?}");
}

/// The best local score of `read` in `window` under `mode`'s dynamic
/// program (bonus included): [`local_score`]'s oracle, by the plain
/// Gotoh DP with local starts and ends.
fn sw(read: &[u8], window: &[u8], mode: Mode) -> i32 {
    let sc = Scoring::of(mode);
    let (m, n) = (read.len(), window.len());
    let neg = i32::MIN / 4;
    let (go, ge) = (sc.gap_open, sc.gap_extend);
    let mut h = vec![vec![0; n + 1]; m + 1];
    let mut e = vec![vec![neg; n + 1]; m + 1];
    let mut f = vec![vec![neg; n + 1]; m + 1];
    let mut best = 0;
    for i in 1..=m {
        for j in 1..=n {
            e[i][j] = (e[i][j - 1] - ge).max(h[i][j - 1] - go - ge);
            f[i][j] = (f[i - 1][j] - ge).max(h[i - 1][j] - go - ge);
            let d = h[i - 1][j - 1] + sc.dp_substitution(read[i - 1], window[j - 1]);
            h[i][j] = d.max(e[i][j]).max(f[i][j]).max(0);
            best = best.max(h[i][j]);
        }
    }
    best
}

/// A window as the mapper cuts one (the diagonal ± 32) around a read
/// drawn from its middle with `subs` substitutions, and sometimes an
/// indel, a random tail, a tandem repeat, another copy of part of the
/// read nearby, or an N: the window, the read, and where the read's
/// base 0 was drawn from.
fn ungapped_case(seed: &mut u64, m: usize, subs: usize) -> (Vec<u8>, Vec<u8>, usize) {
    let n = m + 64;
    let mut window: Vec<u8> = (0..n).map(|_| (rng(seed) % 4) as u8).collect();
    match rng(seed) % 10 {
        // A tandem repeat of a short period over part of the window.
        0 => {
            let p = 1 + (rng(seed) % 40) as usize;
            let from = (rng(seed) % n as u64) as usize;
            let to = (from + 20 + (rng(seed) % n as u64) as usize).min(n);
            for j in from.max(p)..to {
                window[j] = window[j - p];
            }
        }
        // A homopolymer run over the read's start or end (where an
        // indel next to it can shift part of the read along it).
        2 => {
            let len = 5 + (rng(seed) % 25) as usize;
            let base = (rng(seed) % 4) as u8;
            let from = if rng(seed).is_multiple_of(2) {
                (rng(seed) % 40) as usize
            } else {
                (32 + m).saturating_sub((rng(seed) % 40) as usize)
            };
            for x in window.iter_mut().skip(from).take(len) {
                *x = base;
            }
        }
        // Part of the read's stretch copied to another diagonal, with
        // a few differences.
        1 => {
            let len = 10 + (rng(seed) % m as u64) as usize;
            let src = 32 + (rng(seed) % (m as u64)) as usize;
            let dst = (rng(seed) % n as u64) as usize;
            for t in 0..len {
                if src + t < n && dst + t < n {
                    window[dst + t] = window[src + t];
                    if rng(seed).is_multiple_of(25) {
                        window[dst + t] = (rng(seed) % 4) as u8;
                    }
                }
            }
        }
        _ => {}
    }
    let mut read = window[32..32 + m].to_vec();
    for _ in 0..subs {
        let i = (rng(seed) % m as u64) as usize;
        read[i] = (read[i] + 1 + (rng(seed) % 3) as u8) % 4;
    }
    match rng(seed) % 10 {
        // An indel of 1 to 6 bases, the read's length kept.
        0 | 1 => {
            let at = (rng(seed) % m as u64) as usize;
            let len = 1 + (rng(seed) % 6) as usize;
            if rng(seed).is_multiple_of(2) {
                // Deletion from the read: the window's bases after it.
                for i in at..m {
                    read[i] = window[(32 + i + len).min(n - 1)];
                }
            } else {
                let ins: Vec<u8> = (0..len).map(|_| (rng(seed) % 4) as u8).collect();
                read.splice(at..at, ins);
                read.truncate(m);
            }
        }
        // A random tail (adapter).
        2 => {
            let t = 1 + (rng(seed) % 30) as usize;
            for x in read.iter_mut().rev().take(t) {
                *x = (rng(seed) % 4) as u8;
            }
        }
        // An N in the read or the window.
        3 if rng(seed).is_multiple_of(4) => {
            let i = (rng(seed) % m as u64) as usize;
            if rng(seed).is_multiple_of(2) {
                read[i] = 4;
            } else {
                window[(rng(seed) % n as u64) as usize] = 4;
            }
        }
        _ => {}
    }
    (window, read, 32)
}

/// Where the ungapped shortcut answers, it answers what the dynamic
/// programs do: `extend`'s alignment (score, CIGAR, NM, MD, span) and
/// `local_score`'s score, which is also the plain Gotoh DP's local
/// optimum. Random reads with 0 to 7 substitutions, indels, random
/// tails, tandem repeats, near copies and Ns, of 20 to 250 bases.
#[test]
fn ungapped_agrees_with_dp() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut taken = [[0usize; 8]; 2];
    let mut tried = [[0usize; 8]; 2];
    for case in 0..6000 {
        let m = match case % 4 {
            0 => 150,
            1 => 100,
            2 => 36,
            _ => 20 + (rng(&mut seed) % 230) as usize,
        };
        let subs = (rng(&mut seed) % 8) as usize;
        let (window, mut read, offset) = if case % 10 == 9 {
            homopolymer_insertion(&mut seed, m)
        } else {
            ungapped_case(&mut seed, m, subs)
        };
        if case % 3 == 0 {
            // Differences near the ends, where clips and ties between
            // segments are decided: substitutions in the first or last
            // 12 bases, or a short indel there.
            if rng(&mut seed).is_multiple_of(3) {
                // Its first or last 1 to 4 bases all different.
                let t = 1 + (rng(&mut seed) % 4) as usize;
                let end = rng(&mut seed).is_multiple_of(2);
                for j in 0..t.min(m) {
                    let i = if end { m - 1 - j } else { j };
                    read[i] = (read[i] + 1 + (rng(&mut seed) % 3) as u8) % 4;
                }
            }
            for _ in 0..1 + rng(&mut seed) % 3 {
                let i = (rng(&mut seed) % 12.min(m as u64)) as usize;
                let i = if rng(&mut seed).is_multiple_of(2) {
                    i
                } else {
                    m - 1 - i
                };
                if rng(&mut seed).is_multiple_of(5) {
                    read.remove(i);
                    read.push(window[(offset + m).min(window.len() - 1)]);
                } else {
                    read[i] = (read[i] + 1 + (rng(&mut seed) % 3) as u8) % 4;
                }
            }
        }
        for (k, mode) in [Mode::EndToEnd, Mode::Local].into_iter().enumerate() {
            // (Counted for the substitutions drawn, the homopolymer
            // cases aside.)
            let counted = case % 10 != 9;
            tried[k][subs] += usize::from(counted);
            // The diagonal's best segment: a lower bound of the local
            // score (the candidates' ranking relies on it), and the
            // shortcut's score where it settles the read.
            let diagonal = diagonal_score(&read, &window, offset, mode);
            if offset + read.len() <= window.len() && !window.iter().chain(&read).any(|&c| c > 3) {
                // Kadane's, base by base.
                let sc = Scoring::of(mode);
                let (mut run, mut best) = (0i32, 0i32);
                for (a, b) in read.iter().zip(&window[offset..]) {
                    let s = if a == b {
                        sc.matched + sc.bonus
                    } else {
                        sc.bonus - sc.mismatch
                    };
                    run = (run + s).max(0);
                    best = best.max(run);
                }
                assert_eq!(diagonal, Some(best), "case {case} {mode:?}");
            } else {
                assert_eq!(diagonal, None, "case {case} {mode:?}");
            }
            if let Some(d) = diagonal {
                assert!(
                    d <= local_score(&read, &window, mode),
                    "case {case} {mode:?}: diagonal {d}"
                );
            }
            let Some(u) = ungapped(&read, &window, offset, mode) else {
                continue;
            };
            taken[k][subs] += usize::from(counted);
            let what = format!("case {case} {mode:?} m {m} subs {subs}");
            assert_eq!(diagonal, Some(u.best), "{what}");
            assert_eq!(Some(u.ext.clone()), extend(&read, &window, mode), "{what}");
            assert_eq!(u.best, local_score(&read, &window, mode), "{what}");
            assert_eq!(u.best, sw(&read, &window, mode), "{what}");
            // The CIGAR's own account: ungapped, NM and MD recomputed.
            assert!(
                u.ext
                    .cigar
                    .iter()
                    .all(|o| matches!(o.0, Op::Match | Op::Soft))
            );
            let d = describe(
                &read,
                &window,
                u.ext.ref_start,
                &u.ext.cigar,
                &Scoring::of(mode),
            );
            assert_eq!(
                (d.score, d.nm, d.md),
                (u.ext.score, u.ext.nm, u.ext.md.clone())
            );
        }
    }
    eprintln!("taken / tried by substitutions: {taken:?} / {tried:?}");
    // The shortcut settles many reads with few substitutions (40% here,
    // where a third of the cases have differences at the ends).
    for k in 0..2 {
        let (t, n): (usize, usize) = (taken[k][..3].iter().sum(), tried[k][..3].iter().sum());
        assert!(5 * t > 2 * n, "taken {t} of {n}");
    }
}

/// A read whose last (or first) bases all differ, where aligning them
/// as an insertion ties with the mismatches (local: two mismatches
/// cost 8 as a 2-base insertion does): the DP's choice, and so the
/// shortcut's answer, must be the same (on chr20 the first version of
/// the shortcut said `150M` where the DP said `148M2I`).
#[test]
fn ungapped_ties_at_the_ends() {
    let mut seed = 0x8f1b_bcdc_bfa5_3e0bu64;
    let mut taken = 0;
    for case in 0..2000 {
        let m = [150, 100, 36][case % 3];
        let mut window: Vec<u8> = (0..m + 64).map(|_| (rng(&mut seed) % 4) as u8).collect();
        if case % 7 == 0 {
            // A short tandem repeat at one end.
            for j in 150.min(m)..m + 64 {
                window[j] = window[j - 2];
            }
        }
        let mut read = window[32..32 + m].to_vec();
        let t = 1 + case % 4;
        let end = (case / 4) % 2 == 0;
        for j in 0..t {
            let i = if end { m - 1 - j } else { j };
            read[i] = (read[i] + 1 + (rng(&mut seed) % 3) as u8) % 4;
        }
        for _ in 0..rng(&mut seed) % 3 {
            let i = (rng(&mut seed) % m as u64) as usize;
            read[i] = (read[i] + 1) % 4;
        }
        for mode in [Mode::EndToEnd, Mode::Local] {
            if let Some(u) = ungapped(&read, &window, 32, mode) {
                taken += 1;
                assert_eq!(
                    Some(u.ext),
                    extend(&read, &window, mode),
                    "case {case} {mode:?}"
                );
                assert_eq!(
                    u.best,
                    local_score(&read, &window, mode),
                    "case {case} {mode:?}"
                );
            }
        }
    }
    assert!(taken > 700, "taken {taken}");
}

/// The chr20 read where the first version of the shortcut said `150M`
/// and the DP `148M2I` (two mismatches at the end cost what a 2-base
/// insertion does): the shortcut must leave it to the DP or agree.
#[test]
fn ungapped_real_tie_at_the_end() {
    let window = crate::dna::codes(
        b"TCTTCTTTAAAAAAATAGTGTTTTCATACTGATGTGGTCAGATCTCCAAGATACATTATCAAAAGAAAATAGCAAGTCACAGA\
          ACAATAATATGTAACATTTACGGTAAAAACAAAACAAACTTTCCAGGCGCAGTGGCTCACGCCTGTAATCCTAACACTTTG\
          GGAGGCTGAGGCGGGTGGATCACGAGGTCAGGAGATTGAGACTATCCTGG",
    );
    let read = crate::dna::codes(
        b"TGGGGTCAGATCTCCAAGATACATTATCTAAAGAAAATAGCAAGTCACAGAACAATAATATGTAACATTTACGGTAAAAAC\
          AAAACAAACTTTCCAGGCGCAGTGGCTCACGCCTGTAATCCTAACACTTTGGGAGGCTGAGGCGGGTCC",
    );
    let dp = extend(&read, &window, Mode::Local).unwrap();
    assert_eq!(dp.cigar, vec![(Op::Match, 148), (Op::Ins, 2)]);
    assert_eq!(ungapped(&read, &window, 32, Mode::Local), None);
}

/// The chr20 read where the pruned band DP once dropped a path in an
/// insertion as if it still had to open its gap back: 11 bases of a
/// poly-T 4 diagonals off, 4 inserted, then the anchor's diagonal
/// (`11M4I135M`, 136) beats the ungapped `150M` (135).
#[test]
fn ungapped_real_insertion_after_poly_t() {
    let window = crate::dna::codes(
        b"TGATTTTGTGTTGGGGATGTGAGGAGGTTTTTTTTTTTTTTTTTTTTCTTTCTTAATCTAGATGTCTTGAACAAGTCAGCAA\
          AGAAAAACAGTTCCGCCTTTGGAATGTATGAAAATGAAGACCGTTGCAGGAGGTCTTGAGCCACAGAGCTGGCTCCAGAGGC\
          ATTGGGAGGAGAAACGCGGCAGGCCTGGCTCACTCATTATATTTCAAGAT",
    );
    let read = crate::dna::codes(
        b"TTTTTTTTTTTGTGGCTTTCTTAATCTAGATGTCTTGAACAAGTCAGCAAAGAAAAACAGTTCCGCCTTTGGAATGTATGAA\
          AATGAAGACCGTTGCAGGAGGTCTTGAGCCACAGAGCTGGCTCCAGAGGCATTGGGAGGAGAAACGCG",
    );
    let dp = extend(&read, &window, Mode::Local).unwrap();
    assert_eq!(
        dp.cigar,
        vec![(Op::Match, 11), (Op::Ins, 4), (Op::Match, 135)]
    );
    assert_eq!(ungapped(&read, &window, 32, Mode::Local), None);
}

/// The best AS of an end-to-end alignment of `read` in `window` (the
/// whole read, the window's ends free) with a mismatch at read base `i`
/// costing `pens[i]` and a gap of `L` `open + extend × L`, insertions
/// at the read's ends too: a plain Gotoh dynamic program.
fn end_to_end_best(read: &[u8], pens: &[u8], window: &[u8]) -> i32 {
    const NEG: i32 = i32::MIN / 4;
    let sc = Scoring::of(Mode::EndToEnd);
    let (go, ge) = (sc.gap_open, sc.gap_extend);
    let w = window.len();
    // Row i: read[..i] aligned, ending at window position j.
    let mut h = vec![0i32; w + 1];
    let mut f = vec![NEG; w + 1];
    for (i, (&a, &pen)) in read.iter().zip(pens).enumerate() {
        let mut nh = vec![NEG; w + 1];
        let mut e = NEG;
        for j in 0..=w {
            // Read base i inserted, or against window base j − 1.
            f[j] = (h[j] - go - ge).max(f[j] - ge);
            let diag = if j > 0 {
                h[j - 1]
                    + if a == window[j - 1] {
                        0
                    } else {
                        -i32::from(pen)
                    }
            } else {
                NEG
            };
            if j > 0 {
                e = (nh[j - 1] - go - ge).max(e - ge);
            }
            nh[j] = diag.max(f[j]).max(e);
        }
        let _ = i;
        h = nh;
    }
    h.into_iter().max().expect("a cell")
}

/// `end_to_end_bound` is never below the best AS of an end-to-end
/// alignment (the plain program above, and AS of `extend`'s alignment
/// rescored), with random per-base penalties, in rescue-sized windows
/// holding the read (substitutions, indels, at the window's edges) or
/// not; stopped at a floor it is on the same side of it; and it proves
/// most unrelated windows below end-to-end's minimum score.
#[test]
fn end_to_end_bound_bounds() {
    let mut seed = 0x3e2e_b0b0_d5c1_a7f3u64;
    let (mut unrelated, mut pruned) = (0, 0);
    for case in 0..400 {
        let m = [150, 100, 36, 250][case % 4];
        let n = [400, 900, 1300][case % 3].max(m + 2);
        let window: Vec<u8> = if case % 11 == 10 {
            (0..n).map(|i| ((i / 2) % 2) as u8 * 2).collect()
        } else {
            (0..n).map(|_| (rng(&mut seed) % 4) as u8).collect()
        };
        let related = case % 4 != 3;
        let mut read: Vec<u8> = if related {
            // From the window, sometimes hanging over its ends.
            let at = match case % 9 {
                0 => 0,
                1 => n - m,
                _ => (rng(&mut seed) % (n - m) as u64) as usize,
            };
            window[at..at + m].to_vec()
        } else {
            (0..m).map(|_| (rng(&mut seed) % 4) as u8).collect()
        };
        for _ in 0..rng(&mut seed) % 10 {
            let k = (rng(&mut seed) % m as u64) as usize;
            read[k] = (read[k] + 1) % 4;
        }
        match rng(&mut seed) % 4 {
            0 => {
                let k = (rng(&mut seed) % (m as u64 - 4)) as usize;
                read.drain(k..k + 1 + (rng(&mut seed) % 3) as usize);
            }
            1 => {
                let k = (rng(&mut seed) % m as u64) as usize;
                read.insert(k, (rng(&mut seed) % 4) as u8);
            }
            _ => {}
        }
        let pens: Vec<u8> = (0..read.len())
            .map(|_| match case % 3 {
                0 => 6,
                _ => 2 + (rng(&mut seed) % 5) as u8,
            })
            .collect();
        let best = end_to_end_best(&read, &pens, &window);
        let bound = end_to_end_bound(&read, &pens, &window, None).unwrap();
        assert!(bound >= best, "case {case}: {bound} < {best}");
        if let Some(e) = extend(&read, &window, Mode::EndToEnd) {
            let qual: Vec<u8> = pens
                .iter()
                .map(|&p| 33 + ((i32::from(p) - 2) * 10) as u8)
                .collect();
            let sc = Scoring::of(Mode::EndToEnd);
            let q = score_with_quality(&read, &qual, &window, e.ref_start, &e.cigar, &sc);
            assert!(bound >= q, "case {case}: {bound} < AS {q}");
        }
        for f in [best, best + 1, best - 1, bound, bound + 1, -90, -254] {
            if f < -254 {
                continue;
            }
            let early = end_to_end_bound(&read, &pens, &window, Some(f)).unwrap();
            assert!(
                early >= bound && (early < f) == (bound < f),
                "case {case}, floor {f}: {early} against {bound}"
            );
        }
        assert_eq!(end_to_end_bound(&read, &pens, &window, Some(-255)), None);
        if !related {
            unrelated += 1;
            let min = Scoring::min_score(Mode::EndToEnd, read.len());
            pruned += usize::from(bound < min);
        }
    }
    assert!(
        10 * pruned >= 9 * unrelated,
        "{pruned} of {unrelated} pruned"
    );
}

/// `local_score_bound` as first written (no padding, no AVX2): the
/// padded program, in both its builds, must give exactly this.
fn bound_unpadded(read: &[u8], window: &[u8], mode: Mode, decide: Option<i32>) -> i32 {
    let sc = Scoring::of(mode);
    let hit = (sc.matched + sc.bonus) as u8;
    let miss = (sc.mismatch - sc.bonus) as u8;
    let hop = (sc.gap_open + sc.gap_extend) as u8;
    let (m, w) = (read.len(), window.len());
    let mut v = vec![0u8; w + m - 1];
    let (mut top, mut from) = (0u8, 0u8);
    for (i, &a) in read.iter().enumerate() {
        let lane = m - 1 - i;
        let mut best = 0u8;
        for (x, &b) in v[lane..lane + w].iter_mut().zip(window) {
            let y = (*x).max(from);
            *x = if a == b {
                y.saturating_add(hit)
            } else {
                y.saturating_sub(miss)
            };
            best = best.max(*x);
        }
        top = top.max(best);
        from = top.saturating_sub(hop);
        if let Some(t) = decide {
            let most = i32::from(top) + i32::from(hit) * (m - 1 - i) as i32;
            if i32::from(top) >= t || most < t {
                return most;
            }
        }
    }
    i32::from(top)
}

/// The padded bound (AVX2 where present, and the plain build) is the
/// unpadded one, on windows of every length modulo the vector, with and
/// without a threshold, related and unrelated reads.
#[test]
fn padded_bound_is_the_unpadded_one() {
    let mut seed = 0x0b0d_2a11_5eed_7001u64;
    for case in 0..600 {
        let m = [150, 100, 36, 250, 19, 1][case % 6];
        let w = m + (rng(&mut seed) % 200) as usize;
        let window: Vec<u8> = (0..w).map(|_| (rng(&mut seed) % 4) as u8).collect();
        let read: Vec<u8> = if case % 3 == 0 {
            (0..m).map(|_| (rng(&mut seed) % 4) as u8).collect()
        } else {
            let at = (rng(&mut seed) % (w - m + 1) as u64) as usize;
            let mut r = window[at..at + m].to_vec();
            for _ in 0..rng(&mut seed) % 6 {
                let k = (rng(&mut seed) % m as u64) as usize;
                r[k] = (r[k] + 1) % 4;
            }
            r
        };
        for mode in [Mode::EndToEnd, Mode::Local] {
            let full = bound_unpadded(&read, &window, mode, None);
            for decide in [None, Some(full), Some(full - 7), Some(full + 3), Some(19)] {
                let want = bound_unpadded(&read, &window, mode, decide);
                let got = local_score_bound(&read, &window, mode, decide);
                assert_eq!(got, Some(want), "case {case} {mode:?} {decide:?}");
                let sc = Scoring::of(mode);
                let costs = BoundCosts {
                    hit: (sc.matched + sc.bonus) as u8,
                    miss: (sc.mismatch - sc.bonus) as u8,
                    hop: (sc.gap_open + sc.gap_extend) as u8,
                };
                let mut padded = window.clone();
                padded.resize(w.next_multiple_of(BOUND_VECTOR), PAD_CODE);
                assert_eq!(
                    bound_rows(&read, &padded, costs, decide),
                    want,
                    "case {case}"
                );
            }
        }
    }
}

/// `local_score_bound` is never below `local_score` nor the plain
/// Gotoh DP's local optimum, on the shortcut's random cases and on
/// unrelated windows (where it is what prunes), and is close to it on
/// the latter.
#[test]
fn local_score_bound_bounds() {
    let mut seed = 0x51a1_7e0b_9c3d_2f61u64;
    let mut slack = Vec::new();
    for case in 0..1500 {
        // Reads over 250 bases have no bound (saturating cells).
        let m = if case % 7 == 6 {
            300
        } else {
            [150, 100, 36, 250][case % 4]
        };
        let subs = (rng(&mut seed) % 8) as usize;
        let (mut window, read, _) = if case % 3 == 0 {
            homopolymer_insertion(&mut seed, m)
        } else {
            ungapped_case(&mut seed, m, subs)
        };
        if case % 5 == 0 {
            // Another place: the read against an unrelated window.
            for x in window.iter_mut() {
                *x = (rng(&mut seed) % 4) as u8;
            }
        }
        for mode in [Mode::EndToEnd, Mode::Local] {
            let Some(bound) = local_score_bound(&read, &window, mode, None) else {
                assert!(read.len() > 250 || read.iter().chain(&window).any(|&c| c > 3));
                continue;
            };
            let exact = local_score(&read, &window, mode);
            assert!(bound >= exact, "case {case} {mode:?}: {bound} < {exact}");
            // Stopped early at a threshold: still a bound, on the same
            // side of the threshold.
            let t = exact - 30 + (rng(&mut seed) % 60) as i32;
            let early = local_score_bound(&read, &window, mode, Some(t)).unwrap();
            assert!(
                early >= bound && (early < t) == (bound < t),
                "case {case} {mode:?}"
            );
            assert!(bound >= sw(&read, &window, mode), "case {case} {mode:?}");
            if case % 5 == 0 {
                slack.push(bound - exact);
            }
        }
    }
    slack.sort_unstable();
    eprintln!(
        "slack on unrelated windows, median {}",
        slack[slack.len() / 2]
    );
    assert!(slack[slack.len() / 2] <= 10, "{slack:?}");
}

/// Windows longer than block-aligner's largest block (mate rescue with a
/// large `-X`): a read drawn from anywhere in them, with a few
/// substitutions and sometimes an indel of 1 to 3 bases, is found with the
/// plain DP's score in both modes (local: within the clip penalties). Not
/// the windows' length but a read's noise makes block-aligner's adaptive
/// blocks miss the optimum: reads of 100 to 250 bases with 7.5% errors
/// ([`mutate`]) missed it 6 times in 100 in these windows and 5 in 100 in
/// windows of the read plus 300 bases (2026-11-28, fourteenth).
#[test]
fn long_windows_find_the_read_anywhere() {
    let mut seed = 0x5151_7a7a_0c0c_3e3eu64;
    let mut missed = Vec::new();
    for case in 0..100 {
        let n = 1100 + (rng(&mut seed) % 3000) as usize;
        let window: Vec<u8> = (0..n).map(|_| (rng(&mut seed) % 4) as u8).collect();
        let m = 100 + (rng(&mut seed) % 151) as usize;
        let at = (rng(&mut seed) % (n - m - 4) as u64) as usize;
        let mut read = window[at..at + m].to_vec();
        for _ in 0..(rng(&mut seed) % 4) {
            let k = (rng(&mut seed) % m as u64) as usize;
            read[k] = (read[k] + 1 + (rng(&mut seed) % 3) as u8) % 4;
        }
        if case % 3 == 0 {
            let k = 20 + (rng(&mut seed) % (m as u64 - 40)) as usize;
            let len = 1 + (rng(&mut seed) % 3) as usize;
            if case % 2 == 0 {
                read.drain(k..k + len);
            } else {
                let b = read[k] as usize;
                read.splice(k..k, (0..len).map(|i| ((b + 1 + i) % 4) as u8));
            }
        }
        for mode in [Mode::Local, Mode::EndToEnd] {
            let sc = Scoring::of(mode);
            let want = dp(&read, &window, mode);
            let got = extend(&read, &window, mode).map(|e| {
                let aligned: u32 = (e.cigar.iter().filter(|o| o.0 == Op::Match))
                    .map(|o| o.1)
                    .sum();
                match mode {
                    Mode::EndToEnd => e.score + sc.bonus * aligned as i32,
                    // The local alignment, or the whole read within the
                    // clip penalties of it (as `extension_matches_plain_dp`).
                    Mode::Local if e.clipped_ends() == 0 => e.score + 2 * sc.clip,
                    Mode::Local => e.score,
                }
            });
            if got.is_none_or(|g| g < want) {
                missed.push((case, n, at, m, mode, want, got));
            }
        }
    }
    assert!(missed.is_empty(), "{} missed: {missed:?}", missed.len());
}
