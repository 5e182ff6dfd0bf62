//! Pairs: the insert-size window estimated from the first pairs (every
//! mode), and for the gapped modes mate rescue (the other mate aligned in
//! the window of each good alignment) and the choice of the pair: the best
//! proper pair by summed score against the best unpaired placement less
//! [`PEN_UNPAIRED_MISMATCHES`], and the mates' MAPQ.

use crate::align::{self, Extended, Mode, Scoring};
use crate::dna;
use crate::index::Index;
use crate::pair::{Orientation, Window};
use crate::read::{Hit, ReadView};
use crate::sam::Aligned;
use crate::seed;

use super::config::PairConfig;
use super::extend::{Exhaustive, Place, Quals, SHORT_READ, aligned, dedup, extend_at, ref_window};
use super::select::{MAPQ_MAX, pair_mapq, primary_of, single_mapq};

/// What an unpaired placement of the mates costs against a proper pair, in
/// mismatches (bwa mem's 17 at its scores).
const PEN_UNPAIRED_MISMATCHES: i32 = 3;

/// Mate rescue looks at most this far either side of the aligned mate
/// (however large `-X` is).
const RESCUE_SPAN: u64 = 2000;

/// Alignments of a mate tried as anchors of a mate rescue (bwa mem: 50).
/// With 3, a pair whose mates each had 5 tied alignments on chr20 missed
/// its true placement and took a wrong one at MAPQ 30; 10 costs 2–9% of
/// the time of 150-base wgsim pairs (50: up to 27%) for the same placements.
const RESCUE_FROM: usize = 10;

/// [`RESCUE_FROM`] for a short mate (under [`SHORT_READ`] bases): such
/// a mate's window is one-sided and its rescue cheap, and a short pair in
/// a repeat family is often placed right only from one of many copies.
/// 36-base chr20 pairs, `--local`, MAPQ >= 20 correct (wrong), two sets:
/// 10 anchors 39,445 (10) and 39,141 (12); 30: 39,476 (2) and 39,167
/// (11), 1-3% more CPU; 50 (bwa mem's): 39,488 (4) and 39,176 (11), 4-6%.
const RESCUE_FROM_SHORT: usize = 30;

/// Anchors of a mate tried to rescue a mate of `len` bases.
fn rescue_from(len: usize) -> usize {
    if len < SHORT_READ {
        RESCUE_FROM_SHORT
    } else {
        RESCUE_FROM
    }
}

/// Pairs considered per mate.
const PAIR_TOP: usize = 256;

/// The first pairs' fragments for the estimate, each pair given as its
/// fragment in an orientation (`None`: it forms none): those in the
/// `expected` orientation, and how many pairs each orientation would make
/// (fragments over [`crate::pair::ESTIMATE_MAX_FRAGMENT`] left out).
pub(super) fn tally_fragments<F: Fn(Orientation) -> Option<u64>>(
    pairs: impl Iterator<Item = F>,
    expected: Orientation,
) -> (Vec<u64>, Vec<(Orientation, usize)>) {
    let mut fragments = Vec::new();
    let mut counts: Vec<(Orientation, usize)> = <Orientation as crate::Choice>::ALL
        .iter()
        .map(|&o| (o, 0))
        .collect();
    for fragment_in in pairs {
        for (o, n) in &mut counts {
            if let Some(f) = fragment_in(*o).filter(|&f| f <= crate::pair::ESTIMATE_MAX_FRAGMENT) {
                *n += 1;
                if *o == expected {
                    fragments.push(f);
                }
            }
        }
    }
    (fragments, counts)
}

/// The window from `fragments` (of the first `want` pairs), or the default
/// with too few, with the bound given on the command line, if one was, in
/// place of its own; what was found goes in `notices`, with the orientation
/// the library seems to have when it is not the one expected (`counts`:
/// the pairs each orientation would make proper).
pub(super) fn estimated_window(
    fragments: &[u64],
    want: usize,
    pairing: &PairConfig,
    counts: &[(Orientation, usize)],
    notices: &mut Vec<String>,
) -> Window {
    match crate::pair::estimate(fragments) {
        Some(e) => {
            let (w, given) = pairing.with_given(e.window);
            notices.push(format!(
                "insert size from {} of the first {want} pairs: mean {:.1}, sd {:.1}; proper pairs {}..={} ({given})",
                e.pairs, e.mean, e.sd, w.min, w.max
            ));
            w
        }
        None => {
            let (w, given) = pairing.with_given(crate::pair::DEFAULT_WINDOW);
            let hint = counts
                .iter()
                .filter(|&&(o, n)| o != pairing.orientation && n >= crate::pair::ESTIMATE_MIN)
                .max_by_key(|&&(_, n)| n)
                .map_or(String::new(), |&(o, n)| {
                    let o = crate::Choice::name(o);
                    format!(" ({n} do with --{o}: is the library {}?)", o.to_uppercase())
                });
            notices.push(format!(
                "insert size: only {} of the first {want} pairs map uniquely in the expected orientation{hint}, too few to estimate; proper pairs {}..={} ({given})",
                fragments.len(),
                w.min,
                w.max
            ));
            w
        }
    }
}

/// `a` as the pair module's hit (position, strand, contig).
fn as_hit(a: &Aligned) -> Hit {
    Hit {
        nm: 0,
        contig: a.contig,
        pos: a.pos,
        rev: a.rev,
        text_pos: 0,
    }
}

/// The fragment two alignments form in orientation `o`, if any.
fn fragment(a: &Aligned, b: &Aligned, o: Orientation) -> Option<u64> {
    crate::pair::fragment(&as_hit(a), a.span(), &as_hit(b), b.span(), o)
}

/// [`fragment`] of a mate's alignment `own` with its mate's `mate`
/// (`first`: `own` is of mate 1).
pub(super) fn fragment_of(
    first: bool,
    own: &Aligned,
    mate: &Aligned,
    o: Orientation,
) -> Option<u64> {
    crate::pair::fragment_of(
        first,
        &as_hit(own),
        own.span(),
        &as_hit(mate),
        mate.span(),
        o,
    )
}

/// Mate rescue: for each of the best alignments of `have`, aligns `seq` in
/// the insert window beside it (the side and strand the orientation
/// wants) unless `other` already has an alignment there; new alignments are
/// added to `other`.
#[allow(clippy::too_many_arguments)]
pub(super) fn rescue(
    index: &Index,
    mode: Mode,
    have: &[Aligned],
    other: &mut Vec<Aligned>,
    read: &ReadView<'_>,
    o: Orientation,
    w: Window,
    first_is_have: bool,
) {
    let fwd = dna::codes(read.seq);
    let rc = dna::reverse_complement(&fwd);
    let quals = Quals::new(read.qual, mode);
    // What AS charges a mismatch on each strand (end-to-end's bound).
    let mut pens: [Option<Vec<u8>>; 2] = [None, None];
    let mut added = false;
    for a in have.iter().take(rescue_from(read.seq.len())) {
        if a.score < have[0].score - 2 * Scoring::of(mode).mismatch {
            break;
        }
        let paired = other
            .iter()
            .any(|b| w.fits(fragment_of(first_is_have, a, b, o)));
        if paired {
            continue;
        }
        let rev = match o {
            Orientation::Ff => a.rev,
            _ => !a.rev,
        };
        let contig_len = index.layout.contigs[a.contig as usize].len;
        let span = w.max.min(RESCUE_SPAN);
        // A short mate only on the side where it makes a proper pair with
        // `a`, as far as the longest fragment reaches (plus the mate's
        // length on the near side, where it may overlap `a`): a copy of it
        // on the other side, or past the window, would be found as well as
        // the true one and pair with nothing. (Longer mates keep both
        // sides: their output is as before.)
        let pad = read.seq.len() as u64 + RESCUE_PAD;
        let (start, end) = if read.seq.len() >= SHORT_READ {
            (a.pos.saturating_sub(span), (a.end() + span).min(contig_len))
        } else if mate_downstream(o, a.rev, first_is_have) {
            (a.pos.saturating_sub(pad), (a.pos + span).min(contig_len))
        } else {
            (
                a.end().saturating_sub(span),
                (a.end() + pad).min(contig_len),
            )
        };
        if start >= end {
            continue;
        }
        let window = ref_window(index, a.contig, start, end);
        let codes = if rev { &rc } else { &fwd };
        let at = Place {
            contig: a.contig,
            start,
            rev,
            skip: 0,
        };
        let min = rescue_min(mode, codes.len());
        let pens: &[u8] = match mode {
            Mode::EndToEnd => pens[usize::from(rev)]
                .get_or_insert_with(|| quals.penalties(rev, codes.len(), &Scoring::of(mode))),
            Mode::Local => &[],
        };
        let x = rescue_extend(codes, pens, &window, mode, min)
            .and_then(|e| aligned(codes, &window, at, mode, &quals, min, e));
        if let Some(x) = x {
            // A short mate's tandem copy in the same window would be
            // found as well as the true one: it is an alternative (the
            // pair's MAPQ, XS).
            let copies = if codes.len() < SHORT_READ {
                other_copies(codes, &window, at, &x, mode, &quals)
            } else {
                Vec::new()
            };
            other.push(x);
            other.extend(copies);
            added = true;
        }
    }
    if added {
        dedup(other);
    }
}

/// Reference bases beyond the mate's length that a rescue window reaches
/// past the anchor on its near side (a mate may overlap its anchor, with
/// deletions).
const RESCUE_PAD: u64 = 32;

/// Whether the mate of an alignment on strand `rev` (of mate 1:
/// `first`) lies downstream of it in a proper pair of orientation `o`
/// (see [`crate::pair::fragment`]): `--fr`, the forward mate's; `--rf`, the
/// reverse mate's; `--ff`, mate 1's when forward, mate 2's when reverse.
fn mate_downstream(o: Orientation, rev: bool, first: bool) -> bool {
    match o {
        Orientation::Fr => !rev,
        Orientation::Rf => rev,
        Orientation::Ff => rev != first,
    }
}

/// How much worse than the rescued mate, in mismatches, a second copy of
/// it in the same window is still kept ([`other_copies`]).
const SECOND_WITHIN_MISMATCHES: i32 = 2;

/// Diagonals [`other_copies`] aligns at most.
const SECOND_TRIES: usize = 8;

/// The other copies of a short mate in its rescue window, beside the
/// alignment `x` found there: on the diagonals where one of the read's
/// four quarters occurs exactly (every copy with at most three
/// mismatches has one) more than a few bases off `x`'s (a tandem repeat's
/// unit may be shorter than the read), each aligned in a band around its
/// diagonal; those scoring at least [`SECOND_WITHIN_MISMATCHES`] below
/// `x` (all of them: the best may lie where the pair is not proper, a
/// tie where it is). Copies with more mismatches, or whose quarters all
/// hold an indel, are not seen.
fn other_copies(
    codes: &[u8],
    window: &[u8],
    at: Place,
    x: &Aligned,
    mode: Mode,
    quals: &Quals,
) -> Vec<Aligned> {
    let m = codes.len();
    let k = m / 4;
    if k < 8 {
        return Vec::new();
    }
    let sc = Scoring::of(mode);
    let min =
        (x.score - SECOND_WITHIN_MISMATCHES * (sc.matched + sc.mismatch)).max(rescue_min(mode, m));
    let x_from = (x.pos - at.start) as usize;
    let band = 8;
    let mut tried: Vec<usize> = Vec::with_capacity(SECOND_TRIES);
    let mut found: Vec<Aligned> = Vec::new();
    for q in (0..4).map(|i| i * k) {
        for p in memchr::memmem::find_iter(window, &codes[q..q + k]) {
            let Some(off) = p.checked_sub(q) else {
                continue;
            };
            if off.abs_diff(x_from) <= band || tried.contains(&off) {
                continue;
            }
            if tried.len() == SECOND_TRIES {
                return found;
            }
            tried.push(off);
            let lo = off.saturating_sub(band);
            let hi = (off + m + band).min(window.len());
            let sub = &window[lo..hi];
            let place = Place {
                start: at.start + lo as u64,
                ..at
            };
            let y = extend_at(codes, sub, place, mode, quals, min)
                .filter(|y| y.pos.abs_diff(x.pos) > band as u64);
            found.extend(y);
        }
    }
    found
}

/// The length of the read's probes that find the diagonals
/// [`rescue_shortcut`] tries.
const PROBE: usize = 16;

/// Diagonals [`rescue_shortcut`] tries at most (a repeat in the window
/// can hold a probe many times).
const PROBE_TRIES: usize = 4;

/// [`align::extend`] of `read` in a rescue window as far as rescue uses it
/// (an alignment whose AS is below `min` is dropped): [`rescue_shortcut`]'s
/// alignment when it settles one; none where a bound of AS is below `min`
/// (no mate in the window): in `--local` [`align::local_score_bound`] (AS
/// is the dynamic program's score, the local optimum or a whole-read
/// path's, at most the optimum, which the bound bounds), end to end
/// [`align::end_to_end_bound`] with a mismatch at read base `i` costing
/// `pens[i]`, what AS charges there (AS is rescored by base quality, which
/// the dynamic program's bound does not bound); else the dynamic
/// program's.
fn rescue_extend(
    read: &[u8],
    pens: &[u8],
    window: &[u8],
    mode: Mode,
    min: i32,
) -> Option<Extended> {
    if let Some(e) = rescue_shortcut(read, window, mode) {
        return Some(e);
    }
    // (No bound for reads over 250 bases in --local, nor for N: those go
    // to the dynamic program.)
    let below = match mode {
        Mode::Local => align::local_score_bound(read, window, mode, Some(min)),
        Mode::EndToEnd => align::end_to_end_bound(read, pens, window, Some(min)),
    };
    if below.is_some_and(|b| b < min) {
        return None;
    }
    align::extend(read, window, mode)
}

/// The ungapped shortcut ([`align::ungapped`]) in a rescue window, which
/// has no anchor diagonal: tried on the diagonals where the read's first,
/// middle or last [`PROBE`] bases occur exactly in the window (at most
/// [`PROBE_TRIES`]). The shortcut proves that its alignment is what
/// [`align::extend`] finds in the whole window, so whichever diagonal
/// proves it gives the same alignment; `None` when none does.
fn rescue_shortcut(read: &[u8], window: &[u8], mode: Mode) -> Option<Extended> {
    let m = read.len();
    if m < PROBE || window.len() < m {
        return None;
    }
    let mut tried: Vec<usize> = Vec::with_capacity(PROBE_TRIES);
    for q in [0, (m - PROBE) / 2, m - PROBE] {
        for p in memchr::memmem::find_iter(window, &read[q..q + PROBE]) {
            let Some(off) = p.checked_sub(q) else {
                continue;
            };
            if off + m > window.len() || tried.contains(&off) {
                continue;
            }
            if tried.len() == PROBE_TRIES {
                return None;
            }
            tried.push(off);
            if let Some(u) = align::ungapped(read, window, off, mode) {
                return Some(u.ext);
            }
        }
    }
    None
}

/// The least score of a mate found by rescue: in `--local` a seed's length
/// in matches (19, what bwa mem asks of a rescued mate: inside the insert
/// window a 19-base match is no chance hit), below the minimum of 30 a read
/// aligned alone needs; end to end the mode's minimum.
fn rescue_min(mode: Mode, len: usize) -> i32 {
    let min = Scoring::min_score(mode, len);
    match mode {
        Mode::Local => min.min(seed::MIN_SEED as i32 * Scoring::of(mode).matched),
        Mode::EndToEnd => min,
    }
}

/// Mismatches a short mate's placements are searched with when it has
/// no alignment of its own ([`pair_weak`]).
const WEAK_K: u8 = 2;

/// A pair with a short mate that has no alignment of its own in
/// `--local` (a 36-base read with 2 mismatches scores 26, under the
/// minimum of 30 a read needs alone): that mate's placements with up to
/// [`WEAK_K`] mismatches scoring at least rescue's least
/// ([`rescue_min`]: a seed's worth), and rescue from them, count if the
/// mates then make a proper pair, as bwa mem pairs its mates'
/// alignments under its `-T`. `a1`, `a2` are the mates' alignments after
/// rescue; `Some` (the new lists) when a proper pair is found.
#[allow(clippy::too_many_arguments)]
pub(super) fn pair_weak(
    index: &Index,
    mode: Mode,
    [a1, a2]: [&[Aligned]; 2],
    [r1, r2]: [&ReadView<'_>; 2],
    o: Orientation,
    w: Window,
) -> Option<[Vec<Aligned>; 2]> {
    if mode != Mode::Local {
        return None;
    }
    let weak = |a: &[Aligned], r: &ReadView<'_>| -> Vec<Aligned> {
        let m = r.seq.len();
        if !a.is_empty() || !(PROBE..SHORT_READ).contains(&m) {
            return Vec::new();
        }
        super::extend::placements(index, mode, r, WEAK_K, rescue_min(mode, m))
    };
    let (w1, w2) = (weak(a1, r1), weak(a2, r2));
    if w1.is_empty() && w2.is_empty() {
        return None;
    }
    let mut b1 = if w1.is_empty() { a1.to_vec() } else { w1 };
    let mut b2 = if w2.is_empty() { a2.to_vec() } else { w2 };
    if a1.is_empty() && !b1.is_empty() {
        rescue(index, mode, &b1, &mut b2, r2, o, w, true);
    }
    if a2.is_empty() && !b2.is_empty() {
        rescue(index, mode, &b2, &mut b1, r1, o, w, false);
    }
    let proper = b1
        .iter()
        .take(PAIR_TOP)
        .any(|x| b2.iter().take(PAIR_TOP).any(|y| w.fits(fragment(x, y, o))));
    proper.then_some([b1, b2])
}

pub(super) fn unique_fragment(a1: &[Aligned], a2: &[Aligned], o: Orientation) -> Option<u64> {
    fn unique(a: &[Aligned]) -> Option<&Aligned> {
        match a {
            [x] => Some(x),
            [x, y, ..] if x.score > y.score => Some(x),
            _ => None,
        }
    }
    fragment(unique(a1)?, unique(a2)?, o)
}

/// How a pair is placed: each mate's primary (an index into its
/// alignments; `None`: unmapped) and MAPQ, whether the pair is proper, and
/// how many proper pairs were found (0 when the mates are placed apart).
pub(super) struct PairChoice {
    pub(super) primary: [Option<usize>; 2],
    pub(super) mapq: [u8; 2],
    pub(super) proper: bool,
    pub(super) pairs_found: u64,
}

/// The pair's placement among the mates' alignments `a1` and `a2` (best
/// first; of reads of `lens` bases; `e1`, `e2` the exhaustive search of a
/// short mate): the best proper pair by summed score
/// (ties by `hash`, of the name) unless the best unpaired placement beats
/// it by more than [`PEN_UNPAIRED_MISMATCHES`]; MAPQ from the pair's
/// margin over the next placement, at least each mate's own.
pub(super) fn choose_pair(
    mode: Mode,
    [a1, a2]: [&[Aligned]; 2],
    (l1, l2): (usize, usize),
    [e1, e2]: [Option<&Exhaustive>; 2],
    (o, w): (Orientation, Window),
    hash: u64,
) -> PairChoice {
    // The best proper pair by summed score (ties by the name), and the next.
    let mut pairs: Vec<(i32, usize, usize)> = Vec::new();
    for (i, x) in a1.iter().enumerate().take(PAIR_TOP) {
        for (j, y) in a2.iter().enumerate().take(PAIR_TOP) {
            if w.fits(fragment(x, y, o)) {
                pairs.push((x.score + y.score, i, j));
            }
        }
    }
    pairs.sort_by(|p, q| q.0.cmp(&p.0).then_with(|| (p.1, p.2).cmp(&(q.1, q.2))));
    let sc = Scoring::of(mode);
    let pen = PEN_UNPAIRED_MISMATCHES * (sc.matched + sc.mismatch);
    let unpaired = match (a1.first(), a2.first()) {
        (Some(x), Some(y)) => Some(x.score + y.score - pen),
        _ => None,
    };
    let best = pairs
        .first()
        .filter(|p| unpaired.is_none_or(|u| p.0 >= u))
        .map(|&p| {
            let ties = pairs.iter().take_while(|q| q.0 == p.0).count();
            pairs[(hash % ties as u64) as usize]
        });
    let (c1, c2, q1, q2) = match best {
        Some((score, i, j)) => {
            // The next placement of the pair: another proper pair, or the
            // mates apart.
            let others = || {
                pairs
                    .iter()
                    .filter(move |p| (p.1, p.2) != (i, j))
                    .map(|p| p.0)
                    .chain(unpaired.filter(|&u| u < score || a1.len() + a2.len() > 2))
            };
            let next = others().max();
            // (The count of placements as good as the next one is for
            // pairs with a short mate: longer pairs keep their MAPQ.)
            let short = l1.min(l2) < SHORT_READ;
            // A mate with more alignments as good as its own in this pair
            // than rescue tried as anchors, where the pair has another
            // proper placement too (its mate's segment is repeated with
            // it): each untried one stands for a pair like the next.
            let untried = |a: &[Aligned], k: usize, other_len: usize| {
                let t = a.iter().filter(|x| x.score >= a[k].score).count();
                t.saturating_sub(rescue_from(other_len))
            };
            let unseen = if short && pairs.len() > 1 {
                untried(a1, i, l2) + untried(a2, j, l1)
            } else {
                0
            };
            let alternatives = others()
                .filter(|_| short)
                .chain(next.into_iter().cycle().take(unseen));
            let qp = i32::from(pair_mapq(mode, score, next, alternatives));
            let s1 = i32::from(single_mapq(mode, l1, a1, i, e1));
            let s2 = i32::from(single_mapq(mode, l2, a2, j, e2));
            let q = |s: i32| s.max(qp.min(s + 40)).clamp(0, i32::from(MAPQ_MAX)) as u8;
            (Some(i), Some(j), q(s1), q(s2))
        }
        None => {
            let c1 = (!a1.is_empty()).then(|| primary_of(a1, hash));
            let c2 = (!a2.is_empty()).then(|| primary_of(a2, hash));
            let q1 = c1.map_or(0, |c| single_mapq(mode, l1, a1, c, e1));
            let q2 = c2.map_or(0, |c| single_mapq(mode, l2, a2, c, e2));
            (c1, c2, q1, q2)
        }
    };
    let proper = best.is_some();
    PairChoice {
        primary: [c1, c2],
        mapq: [q1, q2],
        proper,
        pairs_found: if proper { pairs.len() as u64 } else { 0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// A copy of `src` with `subs` substitutions and, sometimes, an indel.
    fn mutate(seed: &mut u64, src: &[u8], subs: usize) -> Vec<u8> {
        let mut r = src.to_vec();
        for _ in 0..subs {
            let i = (rng(seed) % r.len() as u64) as usize;
            r[i] = (r[i] + 1 + (rng(seed) % 3) as u8) % 4;
        }
        match rng(seed) % 6 {
            0 => {
                let i = 10 + (rng(seed) % (r.len() as u64 - 20)) as usize;
                let n = 1 + (rng(seed) % 4) as usize;
                r.drain(i..i + n);
            }
            1 => {
                let i = 10 + (rng(seed) % (r.len() as u64 - 20)) as usize;
                for _ in 0..1 + rng(seed) % 4 {
                    r.insert(i, (rng(seed) % 4) as u8);
                }
            }
            _ => {}
        }
        r
    }

    fn at(pos: u64, rev: bool, len: u32, score: i32) -> Aligned {
        Aligned {
            contig: 0,
            pos,
            rev,
            score,
            cigar: vec![(align::Op::Match, len)],
            nm: 0,
            md: Vec::new(),
        }
    }

    /// A short pair's MAPQ: the pair's margin over the next one (30 per
    /// mismatch's worth), less `10 log10` of the placements as good as the
    /// next, where each alignment of a mate as good as its own beyond the
    /// anchors rescue tried ([`RESCUE_FROM_SHORT`]) counts as one when the pair
    /// has another proper placement; pairs of longer mates as before.
    #[test]
    fn short_pairs_count_the_copies_rescue_did_not_try() {
        let w = Window { min: 0, max: 700 };
        let fr = Orientation::Fr;
        let mapq = |copies: u64, len: u32| {
            // Mate 1 in `copies` places 10 kb apart; mate 2 beside the
            // first (1 mismatch) and the second (2 mismatches).
            let full = len as i32;
            let a1: Vec<Aligned> = (0..copies)
                .map(|k| at(1_000 + 10_000 * k, false, len, full))
                .collect();
            let a2 = vec![
                at(1_300, true, len, full - 5),
                at(11_300, true, len, full - 10),
            ];
            let l = len as usize;
            let c = choose_pair(Mode::Local, [&a1, &a2], (l, l), [None, None], (fr, w), 0);
            assert!(c.proper);
            assert_eq!(c.primary, [Some(0), Some(0)]);
            c.mapq
        };
        // The next pair 5 points (a mismatch) below: 30.
        assert_eq!(mapq(2, 36), [30, 30]);
        assert_eq!(mapq(30, 36), [30, 30]);
        // Five copies of mate 1 not tried (30 are for a short mate):
        // 30 - 10 log10 6.
        assert_eq!(mapq(35, 36), [22, 22]);
        // 150-base mates keep the pair's margin alone (and 10 anchors).
        assert_eq!(mapq(15, 150), [30, 30]);
    }

    /// The rescue shortcut and the bounds against their oracle,
    /// `align::extend` over the whole window (its alignments that rescue
    /// keeps, end to end by their AS rescored by base quality): rescue-sized windows (1,300 bases) holding the mate
    /// with substitutions and indels, sometimes a near copy of it too, or
    /// not at all; with a window of low complexity sometimes.
    #[test]
    fn rescue_shortcut_is_extend() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for mode in [Mode::Local, Mode::EndToEnd] {
            let (mut settled, mut dropped) = (0, 0);
            for case in 0..1500 {
                let n = 1300;
                let mut window: Vec<u8> = if case % 10 == 9 {
                    (0..n).map(|i| ((i / 3) % 2) as u8 * 3).collect()
                } else {
                    (0..n).map(|_| (rng(&mut seed) % 4) as u8).collect()
                };
                let m = [100, 150, 250][case % 3];
                let at = (rng(&mut seed) % (n - m) as u64) as usize;
                let truth = window[at..at + m].to_vec();
                let subs = (rng(&mut seed) % 9) as usize;
                let read = match case % 7 {
                    6 => (0..m).map(|_| (rng(&mut seed) % 4) as u8).collect(),
                    _ => mutate(&mut seed, &truth, subs),
                };
                if case % 4 == 1 {
                    // A near copy of the read's source elsewhere.
                    let k = (rng(&mut seed) % 4) as usize;
                    let copy = mutate(&mut seed, &truth, k);
                    let to = (rng(&mut seed) % (n - copy.len()) as u64) as usize;
                    window[to..to + copy.len()].copy_from_slice(&copy);
                }
                if let Some(e) = rescue_shortcut(&read, &window, mode) {
                    settled += 1;
                    assert_eq!(
                        Some(e),
                        align::extend(&read, &window, mode),
                        "case {case}, {mode:?}"
                    );
                }
                // What rescue keeps: alignments whose AS is at least its
                // least, end to end rescored by base quality (random, or
                // all 40 sometimes: then AS is the dynamic program's).
                let min = rescue_min(mode, read.len());
                let sc = Scoring::of(mode);
                // (From a generator of their own: the cases stay those
                // drawn before qualities were.)
                let mut qseed = 0x5bd1_e995_u64 + case as u64;
                let qual: Vec<u8> = (0..read.len())
                    .map(|_| match case % 5 {
                        0 => 33 + 40,
                        _ => 33 + (rng(&mut qseed) % 42) as u8,
                    })
                    .collect();
                let pens: Vec<u8> = qual.iter().map(|&q| sc.mismatch_at(q - 33) as u8).collect();
                let score = |e: &Extended| match mode {
                    Mode::Local => e.score,
                    Mode::EndToEnd => {
                        align::score_with_quality(&read, &qual, &window, e.ref_start, &e.cigar, &sc)
                    }
                };
                let kept = |e: Option<Extended>| e.filter(|e| score(e) >= min);
                let fast = rescue_extend(&read, &pens, &window, mode, min);
                if fast.is_none() {
                    dropped += 1;
                }
                assert_eq!(
                    kept(fast),
                    kept(align::extend(&read, &window, mode)),
                    "case {case}, {mode:?}"
                );
            }
            assert!(settled > 300, "{mode:?}: {settled} settled");
            assert!(dropped > 50, "{mode:?}: {dropped} dropped by the bound");
        }
    }
}
