//! The CPU backend: every step of [`Backend`] with rayon, buffers are `Vec`s.
//!
//! Work is cut into pieces of at least [`GRAIN`] elements, about four per
//! worker, so results never depend on the number of threads (pieces only
//! change who computes what, not what is computed).

use rayon::prelude::*;

use super::steps::{Backend, Chars, Elem, Iota, Order, RankLayout, SegSortReport, Word, bits_for};
use crate::error::Result;

/// Smallest piece of work handed to one rayon task.
pub const GRAIN: usize = 1 << 14;

/// Widest radix digit.
const DIGIT_BITS: u32 = 11;

/// The rayon backend. Runs in the current rayon pool.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cpu;

/// A raw pointer shared by tasks that write disjoint elements.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
unsafe impl<T> Send for Shared<T> {}
unsafe impl<T> Sync for Shared<T> {}
impl<T> Shared<T> {
    #[inline(always)]
    fn ptr(self) -> *mut T {
        self.0
    }
    /// # Safety
    /// `i` is in bounds and no other task touches element `i`.
    #[inline(always)]
    unsafe fn write(self, i: usize, v: T) {
        unsafe { self.0.add(i).write(v) }
    }
}

/// Piece length for `n` elements.
fn piece(n: usize) -> usize {
    let p = rayon::current_num_threads().max(1) * 4;
    n.div_ceil(p).max(GRAIN)
}

/// Piece ranges covering `0..n`.
fn pieces(n: usize) -> Vec<(usize, usize)> {
    let c = piece(n);
    (0..n.div_ceil(c))
        .map(|k| (k * c, ((k + 1) * c).min(n)))
        .collect()
}

fn uninit<T: Elem>(n: usize) -> Vec<T> {
    // Zeroed memory from the allocator is untouched until written, so this
    // costs no pass over the buffer.
    bytemuck::zeroed_vec(n)
}

/// Packed base `p` (0..=3) of a text packed by [`Cpu::pack_text`].
#[inline(always)]
fn base(packed: &[u64], p: u64) -> u64 {
    (packed[(p / 32) as usize] >> (62 - 2 * (p % 32))) & 3
}

/// The `text_keys` key of the suffix at `p`.
#[inline(always)]
fn text_key(packed: &[u64], n: u64, p: u64, k: u32, lbits: u32) -> u64 {
    let w = (p / 32) as usize;
    let s = 2 * (p % 32) as u32;
    let hi = packed[w] << s;
    let lo = if s == 0 { 0 } else { packed[w + 1] >> (64 - s) };
    let chars = (hi | lo) >> (64 - 2 * k);
    let len = (n - p).min(k as u64);
    // Past the end the window may read the padding word, which is zero, or
    // nothing at all; clear it anyway.
    let chars = if len < k as u64 {
        chars & !((1u64 << (2 * (k as u64 - len))) - 1)
    } else {
        chars
    };
    (chars << lbits) | len
}

/// Elements at or below which a suffix sort's bucket computes its keys once
/// and sorts them as stored (key, position) pairs: 24 bytes of scratch an
/// element, at most 24 MiB a worker.
const IN_CACHE: usize = 1 << 20;

/// Stable sort of `pos` by bits `0..hi` of `key(pos)` (higher bits equal);
/// `tmp` is scratch of the same length. Sets `heads[i]` to 1 where the key
/// differs from the previous element's (always at 0: the caller's slices
/// start where the key changes).
fn suffix_sort<W: Word>(
    pos: &mut [W],
    tmp: &mut [W],
    heads: &mut [u8],
    key: &(impl Fn(W) -> u64 + Sync),
    touch: &(impl Fn(W) + Sync),
    hi: u32,
) {
    let n = pos.len();
    if n < 2 || hi == 0 {
        heads.fill(0);
        if let Some(h) = heads.first_mut() {
            *h = 1;
        }
        return;
    }
    if n <= IN_CACHE {
        let mut ks: Vec<u64> = uninit(n);
        for i in 0..n {
            if let Some(&q) = pos.get(i + AHEAD) {
                touch(q);
            }
            ks[i] = key(pos[i]);
        }
        let mut kt: Vec<u64> = uninit(n);
        radix_sort(&mut ks, pos, &mut kt, &mut tmp[..], 0, hi);
        heads[0] = 1;
        for i in 1..n {
            heads[i] = u8::from(ks[i] != ks[i - 1]);
        }
        return;
    }
    let width = hi.min(DIGIT_BITS);
    let shift = hi - width;
    let buckets = 1usize << width;
    let mask = (buckets - 1) as u64;
    let digit_of = |p: W| ((key(p) >> shift) & mask) as usize;
    let parts = pieces(n);
    let hist: Vec<Vec<usize>> = parts
        .par_iter()
        .map(|&(s, e)| {
            let mut h = vec![0usize; buckets];
            let part = &pos[s..e];
            for (i, &p) in part.iter().enumerate() {
                if let Some(&q) = part.get(i + AHEAD) {
                    touch(q);
                }
                h[digit_of(p)] += 1;
            }
            h
        })
        .collect();
    if hist.iter().map(|h| h[digit_of(pos[0])]).sum::<usize>() == n {
        suffix_sort(pos, tmp, heads, key, touch, shift);
        return;
    }
    let (offsets, ranges) = plan_buckets(&hist);
    {
        let d = Shared(tmp.as_mut_ptr());
        let src = &*pos;
        parts
            .par_iter()
            .zip(offsets.into_par_iter())
            .for_each(|(&(s, e), mut off)| {
                let part = &src[s..e];
                for (i, &p) in part.iter().enumerate() {
                    if let Some(&q) = part.get(i + AHEAD) {
                        touch(q);
                    }
                    let b = digit_of(p);
                    // SAFETY: the offsets give every element its own slot < n.
                    unsafe { d.write(off[b], p) };
                    off[b] += 1;
                }
            });
    }
    let (pp, tp) = (Shared(pos.as_mut_ptr()), Shared(tmp.as_mut_ptr()));
    let hp = Shared(heads.as_mut_ptr());
    let one = |&(s, e): &(usize, usize)| {
        // SAFETY: buckets are disjoint ranges of the three arrays.
        let (t, p, h) = unsafe {
            (
                std::slice::from_raw_parts_mut(tp.ptr().add(s), e - s),
                std::slice::from_raw_parts_mut(pp.ptr().add(s), e - s),
                std::slice::from_raw_parts_mut(hp.ptr().add(s), e - s),
            )
        };
        suffix_sort(t, p, h, key, touch, shift);
        p.copy_from_slice(t);
    };
    for_buckets(&ranges, piece(n).max(IN_CACHE), one);
}

impl Cpu {
    fn merge_with<W: Word>(&self, a: &[W], b: &[W], first: impl Fn(W, W) -> bool + Sync) -> Vec<W> {
        let total = a.len() + b.len();
        let mut out: Vec<W> = uninit(total);
        let dst = Shared(out.as_mut_ptr());
        pieces(total).into_par_iter().for_each(|(start, end)| {
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
            for k in start..end {
                let take_a = j == b.len() || (i < a.len() && first(a[i], b[j]));
                let v = if take_a {
                    i += 1;
                    a[i - 1]
                } else {
                    j += 1;
                    b[j - 1]
                };
                // SAFETY: pieces are disjoint and within `total`.
                unsafe { dst.write(k, v) };
            }
        });
        out
    }
}

/// Hints the cache to load `x`.
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; the pointer is to a live element.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (x as *const T).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// How far ahead the DC3 merge prefetches ranks.
const AHEAD: usize = 16;

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
    let mut out: Vec<W> = uninit(total);
    let dst = Shared(out.as_mut_ptr());
    pieces(total).into_par_iter().for_each(|(start, end)| {
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
        for k in start..end {
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
            let v = if take_a {
                i += 1;
                x = key_a(i);
                a[i - 1]
            } else {
                j += 1;
                y = key_b(j);
                b[j - 1]
            };
            // SAFETY: pieces are disjoint and within `total`.
            unsafe { dst.write(k, v) };
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
    let mut out: Vec<W> = uninit(total);
    let dst = Shared(out.as_mut_ptr());
    pieces(total).into_par_iter().for_each(|(start, end)| {
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
        let mut k = start;
        a.iter().skip(i).take(AHEAD).for_each(pf_a);
        b.iter().skip(j).take(AHEAD).for_each(pf_b);
        if i < a.len() && j < b.len() {
            let mut x = key_a(a, ra, &mut ca, &r, i);
            let mut y = key_b(b, rb, &mut cb, &r, j);
            while k < end {
                if less(x, y) {
                    // SAFETY: pieces are disjoint and within `total`.
                    unsafe { dst.write(k, a[i]) };
                    i += 1;
                    k += 1;
                    if i == a.len() {
                        break;
                    }
                    if let Some(q) = a.get(i + AHEAD) {
                        pf_a(q);
                    }
                    x = key_a(a, ra, &mut ca, &r, i);
                } else {
                    // SAFETY: as above.
                    unsafe { dst.write(k, b[j]) };
                    j += 1;
                    k += 1;
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
        while k < end {
            let v = if i < a.len() {
                i += 1;
                a[i - 1]
            } else {
                j += 1;
                b[j - 1]
            };
            // SAFETY: as above.
            unsafe { dst.write(k, v) };
            k += 1;
        }
    });
    out
}

/// Sorts `keys[lo..hi]` with `vals[lo..hi]` by (key, value).
fn sort_run<K: Word, V: Elem>(keys: &mut [K], vals: &mut [V], scratch: &mut Vec<(K, V)>) {
    if keys.len() < 2 {
        return;
    }
    scratch.clear();
    scratch.extend(keys.iter().copied().zip(vals.iter().copied()));
    scratch.sort_unstable();
    for (i, &(k, v)) in scratch.iter().enumerate() {
        keys[i] = k;
        vals[i] = v;
    }
}

/// Merges the sorted runs `[0, mid)` and `[mid, len)` of `keys`/`vals` by
/// (key, value).
fn merge_runs<K: Word, V: Elem>(keys: &mut [K], vals: &mut [V], mid: usize) {
    if mid == 0 || mid == keys.len() || (keys[mid - 1], vals[mid - 1]) <= (keys[mid], vals[mid]) {
        return;
    }
    let lk = keys[..mid].to_vec();
    let lv = vals[..mid].to_vec();
    let (mut i, mut j, mut o) = (0, mid, 0);
    while i < lk.len() && j < keys.len() {
        if (lk[i], lv[i]) <= (keys[j], vals[j]) {
            keys[o] = lk[i];
            vals[o] = lv[i];
            i += 1;
        } else {
            keys[o] = keys[j];
            vals[o] = vals[j];
            j += 1;
        }
        o += 1;
    }
    while i < lk.len() {
        keys[o] = lk[i];
        vals[o] = lv[i];
        i += 1;
        o += 1;
    }
}

/// Above this many elements a radix sort runs its first pass on the most
/// significant digit (in parallel, through memory) and then sorts each bucket
/// by the remaining digits in cache.
const MSD_MIN: usize = 1 << 16;

/// From per-piece digit histograms of an MSD pass: each piece's write offset
/// per bucket (bucket-major, then piece order: stable), and the non-empty
/// bucket ranges, largest first (better balance).
fn plan_buckets(hist: &[Vec<usize>]) -> (Vec<Vec<usize>>, Vec<(usize, usize)>) {
    let buckets = hist.first().map_or(0, Vec::len);
    let mut offsets = vec![vec![0usize; buckets]; hist.len()];
    let mut ranges = Vec::new();
    let mut sum = 0;
    for b in 0..buckets {
        let start = sum;
        for (p, h) in hist.iter().enumerate() {
            offsets[p][b] = sum;
            sum += h[b];
        }
        if sum > start {
            ranges.push((start, sum));
        }
    }
    ranges.sort_by_key(|&(s, e)| std::cmp::Reverse(e - s));
    (offsets, ranges)
}

/// Runs `one` on every bucket: buckets longer than `big` one after another
/// (each sorts itself in parallel), the rest one per task.
fn for_buckets(ranges: &[(usize, usize)], big: usize, one: impl Fn(&(usize, usize)) + Sync) {
    let (huge, small): (Vec<_>, Vec<_>) = ranges.iter().partition(|&&(s, e)| e - s > big);
    huge.into_iter().for_each(&one);
    small.par_iter().for_each(|r| one(r));
}

/// Where each piece of `keep` (pieces of `c`) starts writing in a
/// compaction, and the total kept.
fn keep_starts(keep: &[u8], c: usize) -> (Vec<usize>, usize) {
    let counts: Vec<usize> = keep
        .par_chunks(c)
        .map(|k| k.iter().filter(|&&f| f != 0).count())
        .collect();
    let mut starts = Vec::with_capacity(counts.len());
    let mut total = 0;
    for k in counts {
        starts.push(total);
        total += k;
    }
    (starts, total)
}

/// Stable sort of `keys`/`vals` by bits `lo..hi` of the key (bits above `hi`
/// are equal within the slice); `tk`/`tv` are scratch of the same length.
/// The result is left in `keys`/`vals`.
fn radix_sort<K: Word, V: Elem>(
    keys: &mut [K],
    vals: &mut [V],
    tk: &mut [K],
    tv: &mut [V],
    lo: u32,
    hi: u32,
) {
    let n = keys.len();
    if n < 2 || hi <= lo {
        return;
    }
    if n < MSD_MIN {
        lsd_sequential(keys, vals, tk, tv, lo, hi);
        return;
    }
    // Most significant digit first, in parallel, into the scratch arrays.
    let width = (hi - lo).min(DIGIT_BITS);
    let shift = hi - width;
    let buckets = 1usize << width;
    let mask = (buckets - 1) as u64;
    let digit_of = |k: K| ((k.to_u64() >> shift) & mask) as usize;
    let parts = pieces(n);
    let hist: Vec<Vec<usize>> = parts
        .par_iter()
        .map(|&(s, e)| {
            let mut h = vec![0usize; buckets];
            for &k in &keys[s..e] {
                h[digit_of(k)] += 1;
            }
            h
        })
        .collect();
    let (offsets, ranges) = plan_buckets(&hist);
    if hist.iter().map(|h| h[digit_of(keys[0])]).sum::<usize>() == n {
        // One bucket: this digit sorts nothing.
        radix_sort(keys, vals, tk, tv, lo, shift);
        return;
    }
    {
        let (dk, dv) = (Shared(tk.as_mut_ptr()), Shared(tv.as_mut_ptr()));
        let (sk, sv) = (&*keys, &*vals);
        parts
            .par_iter()
            .zip(offsets.into_par_iter())
            .for_each(|(&(s, e), mut off)| {
                for i in s..e {
                    let d = digit_of(sk[i]);
                    // SAFETY: the offsets give every element its own slot < n.
                    unsafe {
                        dk.write(off[d], sk[i]);
                        dv.write(off[d], sv[i]);
                    }
                    off[d] += 1;
                }
            });
    }
    // Each bucket by the remaining bits: the sorted bucket must end in
    // keys/vals, so sort it in tk/tv (with keys/vals as scratch) and copy
    // back when it ended in the scratch.
    let (kp, vp) = (Shared(keys.as_mut_ptr()), Shared(vals.as_mut_ptr()));
    let (tkp, tvp) = (Shared(tk.as_mut_ptr()), Shared(tv.as_mut_ptr()));
    let one = |&(s, e): &(usize, usize)| {
        let len = e - s;
        // SAFETY: buckets are disjoint ranges of the four arrays.
        let (k, v, bk, bv) = unsafe {
            (
                std::slice::from_raw_parts_mut(tkp.ptr().add(s), len),
                std::slice::from_raw_parts_mut(tvp.ptr().add(s), len),
                std::slice::from_raw_parts_mut(kp.ptr().add(s), len),
                std::slice::from_raw_parts_mut(vp.ptr().add(s), len),
            )
        };
        radix_sort(k, v, bk, bv, lo, shift);
        bk.copy_from_slice(k);
        bv.copy_from_slice(v);
    };
    for_buckets(&ranges, piece(n).max(MSD_MIN), one);
}

/// Sequential stable LSD radix sort of bits `lo..hi`, result in `keys`/`vals`.
fn lsd_sequential<K: Word, V: Elem>(
    keys: &mut [K],
    vals: &mut [V],
    tk: &mut [K],
    tv: &mut [V],
    lo: u32,
    hi: u32,
) {
    let n = keys.len();
    let bits_of = |k: K| (k.to_u64() >> lo) & (u64::MAX >> (64 - (hi - lo)));
    if n <= 32 {
        // Stable insertion sort: cheaper than clearing counters.
        for i in 1..n {
            let (k, v) = (keys[i], vals[i]);
            let mut j = i;
            while j > 0 && bits_of(keys[j - 1]) > bits_of(k) {
                keys[j] = keys[j - 1];
                vals[j] = vals[j - 1];
                j -= 1;
            }
            keys[j] = k;
            vals[j] = v;
        }
        return;
    }
    // Only the bits that differ between two keys need sorting: in a bucket
    // of a suffix sort the leading characters and the length field (27 but
    // near the end of the text) are the same in every key.
    let (mut or, mut and) = (0u64, u64::MAX);
    for &k in keys.iter() {
        let b = bits_of(k);
        or |= b;
        and &= b;
    }
    let vary = or ^ and;
    if vary == 0 {
        return;
    }
    let (lo, hi) = (lo + vary.trailing_zeros(), lo + 64 - vary.leading_zeros());
    // Narrower digits for short runs: fewer counters to clear per pass.
    let widest = if n < 2048 { 8 } else { DIGIT_BITS };
    let passes = (hi - lo).div_ceil(widest);
    let digit = (hi - lo).div_ceil(passes);
    let mask = (1u64 << digit) - 1;
    // Every pass's histogram in one sweep.
    let mut count = vec![0usize; (passes as usize) << digit];
    for &k in keys.iter() {
        let b = k.to_u64() >> lo;
        for pass in 0..passes {
            count[((pass as usize) << digit) + ((b >> (pass * digit)) & mask) as usize] += 1;
        }
    }
    let mut in_keys = true; // data currently in keys/vals?
    for (pass, count) in count.chunks_mut(1 << digit).enumerate() {
        let shift = lo + pass as u32 * digit;
        // One digit value throughout: the pass would move nothing.
        if count[((keys[0].to_u64() >> shift) & mask) as usize] == n {
            continue;
        }
        let (sk, sv, dk, dv): (&[K], &[V], &mut [K], &mut [V]) = if in_keys {
            (keys, vals, tk, tv)
        } else {
            (tk, tv, keys, vals)
        };
        let mut sum = 0;
        for c in count.iter_mut() {
            let here = *c;
            *c = sum;
            sum += here;
        }
        for i in 0..n {
            let d = ((sk[i].to_u64() >> shift) & mask) as usize;
            dk[count[d]] = sk[i];
            dv[count[d]] = sv[i];
            count[d] += 1;
        }
        in_keys = !in_keys;
    }
    if !in_keys {
        keys.copy_from_slice(tk);
        vals.copy_from_slice(tv);
    }
}

impl Backend for Cpu {
    type Buf<T: Elem> = Vec<T>;

    fn name(&self) -> &'static str {
        "cpu"
    }

    fn len<T: Elem>(&self, b: &Vec<T>) -> usize {
        b.len()
    }

    fn zeros<T: Elem>(&self, n: usize) -> Result<Vec<T>> {
        Ok(bytemuck::zeroed_vec(n))
    }

    fn upload<T: Elem>(&self, v: Vec<T>) -> Result<Vec<T>> {
        Ok(v)
    }

    fn download<T: Elem>(&self, b: Vec<T>) -> Result<Vec<T>> {
        Ok(b)
    }

    fn copy<T: Elem>(&self, b: &Vec<T>) -> Result<Vec<T>> {
        let mut out: Vec<T> = uninit(b.len());
        out.par_chunks_mut(GRAIN)
            .zip(b.par_chunks(GRAIN))
            .for_each(|(o, i)| o.copy_from_slice(i));
        Ok(out)
    }

    fn concat<T: Elem>(&self, a: &Vec<T>, b: &Vec<T>) -> Result<Vec<T>> {
        let mut out = Vec::with_capacity(a.len() + b.len());
        out.extend_from_slice(a);
        out.extend_from_slice(b);
        Ok(out)
    }

    fn radix_sort_pairs<K: Word, V: Elem>(
        &self,
        keys: &mut Vec<K>,
        vals: &mut Vec<V>,
        bits: u32,
    ) -> Result<()> {
        let n = keys.len();
        assert_eq!(
            n,
            vals.len(),
            "radix sort: keys and values differ in length"
        );
        if n < 2 || bits == 0 {
            return Ok(());
        }
        let mut tk: Vec<K> = uninit(n);
        let mut tv: Vec<V> = uninit(n);
        radix_sort(keys, vals, &mut tk, &mut tv, 0, bits);
        Ok(())
    }

    fn exclusive_scan<W: Word>(&self, x: &mut Vec<W>) -> Result<W> {
        let c = piece(x.len());
        let sums: Vec<u64> = x
            .par_chunks(c)
            .map(|p| p.iter().fold(0u64, |a, &v| a.wrapping_add(v.to_u64())))
            .collect();
        let mut carry = Vec::with_capacity(sums.len());
        let mut total = 0u64;
        for s in sums {
            carry.push(total);
            total = total.wrapping_add(s);
        }
        x.par_chunks_mut(c).zip(carry).for_each(|(p, mut acc)| {
            for v in p {
                let here = v.to_u64();
                *v = W::from_u64(acc);
                acc = acc.wrapping_add(here);
            }
        });
        Ok(W::from_u64(total))
    }

    fn segmented_scan<W: Word>(&self, x: &mut Vec<W>, heads: &Vec<u8>) -> Result<()> {
        assert_eq!(x.len(), heads.len(), "segmented scan: lengths differ");
        let c = piece(x.len());
        // Local scans; per piece (has a head, last value).
        let tails: Vec<(bool, u64)> = x
            .par_chunks_mut(c)
            .zip(heads.par_chunks(c))
            .map(|(p, h)| {
                let mut acc = 0u64;
                let mut seen = false;
                for (v, &f) in p.iter_mut().zip(h) {
                    if f != 0 {
                        acc = 0;
                        seen = true;
                    }
                    acc = acc.wrapping_add(v.to_u64());
                    *v = W::from_u64(acc);
                }
                (seen, acc)
            })
            .collect();
        let mut carry = Vec::with_capacity(tails.len());
        let mut acc = 0u64;
        for (seen, last) in tails {
            carry.push(acc);
            acc = if seen { last } else { acc.wrapping_add(last) };
        }
        x.par_chunks_mut(c)
            .zip(heads.par_chunks(c))
            .zip(carry)
            .for_each(|((p, h), add)| {
                if add == 0 {
                    return;
                }
                for (v, &f) in p.iter_mut().zip(h) {
                    if f != 0 {
                        break;
                    }
                    *v = W::from_u64(v.to_u64().wrapping_add(add));
                }
            });
        Ok(())
    }

    fn compact<T: Elem>(&self, x: &Vec<T>, keep: &Vec<u8>) -> Result<Vec<T>> {
        assert_eq!(x.len(), keep.len(), "compact: lengths differ");
        let c = piece(x.len());
        let (starts, total) = keep_starts(keep, c);
        let mut out: Vec<T> = uninit(total);
        let dst = Shared(out.as_mut_ptr());
        x.par_chunks(c)
            .zip(keep.par_chunks(c))
            .zip(starts)
            .for_each(|((p, k), mut o)| {
                for (&v, &f) in p.iter().zip(k) {
                    if f != 0 {
                        // SAFETY: each piece writes its own range of `out`.
                        unsafe { dst.write(o, v) };
                        o += 1;
                    }
                }
            });
        Ok(out)
    }

    fn gather<T: Elem, I: Word>(&self, src: &Vec<T>, idx: &Vec<I>) -> Result<Vec<T>> {
        let mut out: Vec<T> = uninit(idx.len());
        out.par_chunks_mut(GRAIN)
            .zip(idx.par_chunks(GRAIN))
            .for_each(|(o, i)| {
                for (j, o) in o.iter_mut().enumerate() {
                    if let Some(&a) = i.get(j + AHEAD)
                        && let Some(x) = src.get(a.to_u64() as usize)
                    {
                        prefetch(x);
                    }
                    *o = src[i[j].to_u64() as usize];
                }
            });
        Ok(out)
    }

    fn scatter<T: Elem, I: Word>(
        &self,
        src: &Vec<T>,
        idx: &Vec<I>,
        dst: &mut Vec<T>,
    ) -> Result<()> {
        assert_eq!(src.len(), idx.len(), "scatter: lengths differ");
        let len = dst.len();
        let d = Shared(dst.as_mut_ptr());
        src.par_chunks(GRAIN)
            .zip(idx.par_chunks(GRAIN))
            .for_each(|(s, ix)| {
                for (j, (&v, &i)) in s.iter().zip(ix).enumerate() {
                    if let Some(&a) = ix.get(j + AHEAD)
                        && (a.to_u64() as usize) < len
                    {
                        // SAFETY: in bounds; only a hint.
                        prefetch(unsafe { &*d.ptr().add(a.to_u64() as usize) });
                    }
                    let i = i.to_u64() as usize;
                    assert!(i < len, "scatter index {i} out of bounds ({len})");
                    // SAFETY: in bounds; indices do not repeat (documented).
                    unsafe { d.write(i, v) };
                }
            });
        Ok(())
    }

    fn head_flags<K: Word>(&self, keys: &Vec<K>, or: Option<&Vec<u8>>) -> Result<Vec<u8>> {
        let mut out: Vec<u8> = uninit(keys.len());
        out.par_chunks_mut(GRAIN).enumerate().for_each(|(c, o)| {
            let s = c * GRAIN;
            for (k, f) in o.iter_mut().enumerate() {
                let i = s + k;
                let h = i == 0 || keys[i] != keys[i - 1] || or.is_some_and(|or| or[i] != 0);
                *f = u8::from(h);
            }
        });
        Ok(out)
    }

    fn segmented_sort<K: Word, V: Elem>(
        &self,
        heads: &Vec<u8>,
        keys: &mut Vec<K>,
        vals: &mut Vec<V>,
        block: usize,
    ) -> Result<SegSortReport> {
        let n = keys.len();
        assert!(
            n == vals.len() && n == heads.len(),
            "segmented sort: lengths differ"
        );
        assert!(block > 0, "segmented sort: block size 0");
        let mut report = SegSortReport::default();
        // Block sort: every piece of a segment inside a block.
        keys.par_chunks_mut(block)
            .zip(vals.par_chunks_mut(block))
            .zip(heads.par_chunks(block))
            .for_each_init(Vec::new, |scratch, ((k, v), h)| {
                let mut s = 0;
                for e in 1..=k.len() {
                    if e == k.len() || h[e] != 0 {
                        sort_run(&mut k[s..e], &mut v[s..e], scratch);
                        s = e;
                    }
                }
            });
        // Boundaries a segment crosses.
        let mut active: Vec<usize> = (block..n)
            .step_by(block)
            .filter(|&b| heads[b] == 0)
            .collect();
        report.crossing = active.len() as u64;
        let mut width = block;
        while !active.is_empty() {
            report.merge_rounds += 1;
            let (now, later): (Vec<usize>, Vec<usize>) =
                active.iter().partition(|&&b| (b / width) % 2 == 1);
            // Each merge lies inside its own pair of blocks [b - w, b + w).
            let ranges: Vec<(usize, usize, usize)> = now
                .iter()
                .map(|&b| {
                    let lo = b - width;
                    let hi = (b + width).min(n);
                    let s = (lo..b).rev().find(|&i| heads[i] != 0).unwrap_or(lo);
                    let e = (b + 1..hi).find(|&i| heads[i] != 0).unwrap_or(hi);
                    (s, b, e)
                })
                .collect();
            let kp = Shared(keys.as_mut_ptr());
            let vp = Shared(vals.as_mut_ptr());
            ranges.par_iter().for_each(|&(s, b, e)| {
                // SAFETY: the ranges lie in disjoint block pairs.
                let (k, v) = unsafe {
                    (
                        std::slice::from_raw_parts_mut(kp.ptr().add(s), e - s),
                        std::slice::from_raw_parts_mut(vp.ptr().add(s), e - s),
                    )
                };
                merge_runs(k, v, b - s);
            });
            active = later;
            width *= 2;
        }
        Ok(report)
    }

    fn merge<W: Word>(&self, a: &Vec<W>, b: &Vec<W>, order: &Order<'_, Self, W>) -> Result<Vec<W>> {
        match order {
            Order::Ascending => Ok(self.merge_with(a, b, |x, y| x <= y)),
            Order::Dc3 {
                text,
                n,
                rank,
                layout,
            } => {
                let (n, layout) = (*n, *layout);
                let rank = &rank[..];
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
                Ok(match text {
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
                })
            }
        }
    }

    fn count(&self, flags: &Vec<u8>) -> Result<u64> {
        Ok(flags
            .par_chunks(GRAIN)
            .map(|c| c.iter().filter(|&&f| f != 0).count() as u64)
            .sum())
    }

    fn iota<W: Word>(&self, n: usize, seq: Iota) -> Result<Vec<W>> {
        let mut out: Vec<W> = uninit(n);
        out.par_chunks_mut(GRAIN).enumerate().for_each(|(c, o)| {
            let s = (c * GRAIN) as u64;
            for (k, v) in o.iter_mut().enumerate() {
                let i = s + k as u64;
                *v = W::from_u64(match seq {
                    Iota::From(start) => start + i,
                    Iota::Mod3NonZero => 3 * (i / 2) + 1 + i % 2,
                });
            }
        });
        Ok(out)
    }

    fn fill<W: Word>(&self, n: usize, value: W) -> Result<Vec<W>> {
        Ok(vec![value; n])
    }

    fn pack_text(&self, text: &[u8]) -> Result<Vec<u64>> {
        let words = text.len() / 32 + 2;
        let mut out: Vec<u64> = uninit(words);
        out.par_chunks_mut(GRAIN / 32)
            .enumerate()
            .for_each(|(c, o)| {
                for (k, w) in o.iter_mut().enumerate() {
                    let s = (c * (GRAIN / 32) + k) * 32;
                    let mut v = 0u64;
                    for j in 0..32 {
                        let b = text.get(s + j).copied().unwrap_or(0) as u64 & 3;
                        v |= b << (62 - 2 * j);
                    }
                    *w = v;
                }
            });
        Ok(out)
    }

    fn text_keys<K: Word, W: Word>(
        &self,
        packed: &Vec<u64>,
        n: u64,
        pos: &Vec<W>,
        k: u32,
    ) -> Result<Vec<K>> {
        let lbits = bits_for(k as u64);
        assert!(
            k >= 1 && 2 * k + lbits <= K::BITS,
            "text_keys: {k} characters do not fit the key"
        );
        let mut out: Vec<K> = uninit(pos.len());
        out.par_chunks_mut(GRAIN)
            .zip(pos.par_chunks(GRAIN))
            .for_each(|(o, p)| {
                for (j, o) in o.iter_mut().enumerate() {
                    if let Some(&a) = p.get(j + AHEAD) {
                        prefetch(&packed[(a.to_u64() / 32) as usize]);
                    }
                    *o = K::from_u64(text_key(packed, n, p[j].to_u64(), k, lbits));
                }
            });
        Ok(out)
    }

    fn sort_suffixes<W: Word>(
        &self,
        packed: &Vec<u64>,
        n: u64,
        pos: &mut Vec<W>,
        k: u32,
    ) -> Result<Vec<u8>> {
        let lbits = bits_for(k as u64);
        assert!(
            k >= 1 && 2 * k + lbits <= 64,
            "sort_suffixes: {k} characters do not fit"
        );
        let key = |p: W| text_key(packed, n, p.to_u64(), k, lbits);
        let touch = |p: W| prefetch(&packed[(p.to_u64() / 32) as usize]);
        let mut tmp: Vec<W> = uninit(pos.len());
        let mut heads: Vec<u8> = uninit(pos.len());
        suffix_sort(pos, &mut tmp, &mut heads, &key, &touch, 2 * k + lbits);
        Ok(heads)
    }

    fn text_heads<W: Word>(
        &self,
        packed: &Vec<u64>,
        n: u64,
        pos: &Vec<W>,
        k: u32,
    ) -> Result<Vec<u8>> {
        let lbits = bits_for(k as u64);
        let key = |p: W| text_key(packed, n, p.to_u64(), k, lbits);
        let mut out: Vec<u8> = uninit(pos.len());
        out.par_chunks_mut(GRAIN).enumerate().for_each(|(c, o)| {
            let s = c * GRAIN;
            let mut prev = if s == 0 { None } else { Some(key(pos[s - 1])) };
            for (j, f) in o.iter_mut().enumerate() {
                if let Some(&q) = pos.get(s + j + AHEAD) {
                    prefetch(&packed[(q.to_u64() / 32) as usize]);
                }
                let here = key(pos[s + j]);
                *f = u8::from(prev != Some(here));
                prev = Some(here);
            }
        });
        Ok(out)
    }

    fn head_index<W: Word>(&self, heads: &Vec<u8>, add: u64) -> Result<Vec<W>> {
        Ok(heads
            .par_iter()
            .with_min_len(GRAIN)
            .enumerate()
            .map(|(i, &h)| {
                if h != 0 {
                    W::from_u64(i as u64 + add)
                } else {
                    W::default()
                }
            })
            .collect())
    }

    fn compact_index<W: Word>(&self, keep: &Vec<u8>) -> Result<Vec<W>> {
        let c = piece(keep.len());
        let (starts, total) = keep_starts(keep, c);
        let mut out: Vec<W> = uninit(total);
        let dst = Shared(out.as_mut_ptr());
        keep.par_chunks(c)
            .enumerate()
            .zip(starts)
            .for_each(|((ci, k), mut o)| {
                for (j, &f) in k.iter().enumerate() {
                    if f != 0 {
                        // SAFETY: each piece writes its own range of `out`.
                        unsafe { dst.write(o, W::from_u64((ci * c + j) as u64)) };
                        o += 1;
                    }
                }
            });
        Ok(out)
    }

    fn scatter_slots<W: Word>(
        &self,
        src: &Vec<W>,
        pos: &Vec<W>,
        layout: RankLayout,
        dst: &mut Vec<W>,
    ) -> Result<()> {
        assert_eq!(src.len(), pos.len(), "scatter_slots: lengths differ");
        let len = dst.len();
        let d = Shared(dst.as_mut_ptr());
        src.par_chunks(GRAIN)
            .zip(pos.par_chunks(GRAIN))
            .for_each(|(s, p)| {
                for (j, (&v, &q)) in s.iter().zip(p).enumerate() {
                    if let Some(&a) = p.get(j + AHEAD) {
                        let i = layout.slot(a.to_u64()) as usize;
                        if i < len {
                            // SAFETY: in bounds; only a hint.
                            prefetch(unsafe { &*d.ptr().add(i) });
                        }
                    }
                    let i = layout.slot(q.to_u64()) as usize;
                    assert!(i < len, "scatter_slots: slot {i} out of bounds ({len})");
                    // SAFETY: in bounds; positions do not repeat.
                    unsafe { d.write(i, v) };
                }
            });
        Ok(())
    }

    fn symbols<W: Word>(&self, packed: &Vec<u64>, n: u64) -> Result<Vec<W>> {
        let mut out: Vec<W> = uninit(n as usize);
        out.par_chunks_mut(GRAIN).enumerate().for_each(|(c, o)| {
            let s = (c * GRAIN) as u64;
            for (k, v) in o.iter_mut().enumerate() {
                *v = W::from_u64(base(packed, s + k as u64) + 1);
            }
        });
        Ok(out)
    }

    fn fetch<W: Word>(
        &self,
        rank: &Vec<W>,
        layout: RankLayout,
        pos: &Vec<W>,
        h: u64,
        n: u64,
    ) -> Result<Vec<W>> {
        let mut out: Vec<W> = uninit(pos.len());
        out.par_chunks_mut(GRAIN)
            .zip(pos.par_chunks(GRAIN))
            .for_each(|(o, p)| {
                for (j, o) in o.iter_mut().enumerate() {
                    if let Some(&a) = p.get(j + AHEAD) {
                        let q = a.to_u64() + h;
                        if q < n {
                            prefetch(&rank[layout.slot(q) as usize]);
                        }
                    }
                    let q = p[j].to_u64() + h;
                    *o = if q < n {
                        rank[layout.slot(q) as usize]
                    } else {
                        W::default()
                    };
                }
            });
        Ok(out)
    }

    fn slots<W: Word>(&self, pos: &Vec<W>, layout: RankLayout) -> Result<Vec<W>> {
        Ok(pos
            .par_iter()
            .with_min_len(GRAIN)
            .map(|&p| W::from_u64(layout.slot(p.to_u64())))
            .collect())
    }

    fn split_positions<W: Word>(&self, slots: &Vec<W>, n0: u64) -> Result<Vec<W>> {
        Ok(slots
            .par_iter()
            .with_min_len(GRAIN)
            .map(|&s| {
                let s = s.to_u64();
                W::from_u64(if s < n0 { 3 * s + 1 } else { 3 * (s - n0) + 2 })
            })
            .collect())
    }

    fn head_values<W: Word>(&self, heads: &Vec<u8>, base: &Vec<W>, add: u64) -> Result<Vec<W>> {
        Ok(heads
            .par_iter()
            .with_min_len(GRAIN)
            .zip(base.par_iter())
            .map(|(&h, &b)| {
                if h != 0 {
                    W::from_u64(b.to_u64().wrapping_add(add))
                } else {
                    W::default()
                }
            })
            .collect())
    }

    fn add_flags<W: Word>(&self, x: &mut Vec<W>, flags: &Vec<u8>) -> Result<()> {
        x.par_iter_mut()
            .with_min_len(GRAIN)
            .zip(flags.par_iter())
            .for_each(|(v, &f)| *v = W::from_u64(v.to_u64().wrapping_add(f as u64)));
        Ok(())
    }

    fn sub_const<W: Word>(&self, x: &mut Vec<W>, sub: u64) -> Result<()> {
        x.par_iter_mut()
            .with_min_len(GRAIN)
            .for_each(|v| *v = W::from_u64(v.to_u64().wrapping_sub(sub)));
        Ok(())
    }

    fn widen<W: Word>(&self, flags: &Vec<u8>) -> Result<Vec<W>> {
        Ok(flags
            .par_iter()
            .with_min_len(GRAIN)
            .map(|&f| W::from_u64(f as u64))
            .collect())
    }

    fn rank_groups<W: Word>(
        &self,
        pos: &Vec<W>,
        heads: &Vec<u8>,
        layout: RankLayout,
        isa: &mut Vec<W>,
    ) -> Result<(Vec<W>, Vec<W>, Vec<W>)> {
        Ok(rank_groups_cpu(pos, heads, layout, isa))
    }

    fn unsorted(&self, heads: &Vec<u8>) -> Result<Vec<u8>> {
        let n = heads.len();
        Ok((0..n)
            .into_par_iter()
            .with_min_len(GRAIN)
            .map(|i| u8::from(!(heads[i] != 0 && (i + 1 == n || heads[i + 1] != 0))))
            .collect())
    }

    fn segment_lengths<W: Word>(&self, heads: &Vec<u8>) -> Result<Vec<W>> {
        let n = heads.len();
        let mut starts: Vec<usize> = (0..n)
            .into_par_iter()
            .with_min_len(GRAIN)
            .filter(|&i| i == 0 || heads[i] != 0)
            .collect();
        starts.push(n);
        let mut out: Vec<W> = uninit(n);
        let d = Shared(out.as_mut_ptr());
        starts.par_windows(2).for_each(|w| {
            let len = W::from_u64((w[1] - w[0]) as u64);
            for i in w[0]..w[1] {
                // SAFETY: segments are disjoint.
                unsafe { d.write(i, len) };
            }
        });
        Ok(out)
    }

    fn in_range<W: Word>(&self, x: &Vec<W>, lo: u64, hi: u64) -> Result<Vec<u8>> {
        Ok(x.par_iter()
            .with_min_len(GRAIN)
            .map(|&v| u8::from((lo..=hi).contains(&v.to_u64())))
            .collect())
    }

    fn mod3_is<W: Word>(&self, x: &Vec<W>, r: u64) -> Result<Vec<u8>> {
        Ok(x.par_iter()
            .with_min_len(GRAIN)
            .map(|&v| u8::from(v.to_u64() % 3 == r))
            .collect())
    }
}

/// The CPU's [`Backend::rank_groups`]: one pass over the heads for each
/// piece's last head and kept count, one pass that carries the group head,
/// scatters every rank and writes the kept elements.
fn rank_groups_cpu<W: Word>(
    pos: &[W],
    heads: &[u8],
    layout: RankLayout,
    isa: &mut [W],
) -> (Vec<W>, Vec<W>, Vec<W>) {
    assert_eq!(pos.len(), heads.len(), "rank_groups: lengths differ");
    let n = heads.len();
    let kept = |i: usize| !(heads[i] != 0 && (i + 1 == n || heads[i + 1] != 0));
    let parts = pieces(n);
    let info: Vec<(Option<usize>, usize)> = parts
        .par_iter()
        .map(|&(s, e)| {
            let last = (s..e).rev().find(|&i| heads[i] != 0);
            (last, (s..e).filter(|&i| kept(i)).count())
        })
        .collect();
    let (mut starts, mut total, mut head) = (Vec::with_capacity(parts.len()), 0, None);
    for &(last, k) in &info {
        starts.push((head, total));
        total += k;
        head = last.or(head);
    }
    let (mut kp, mut ks, mut kr): (Vec<W>, Vec<W>, Vec<W>) =
        (uninit(total), uninit(total), uninit(total));
    let (dp, ds, dr) = (
        Shared(kp.as_mut_ptr()),
        Shared(ks.as_mut_ptr()),
        Shared(kr.as_mut_ptr()),
    );
    let len = isa.len();
    let d = Shared(isa.as_mut_ptr());
    parts
        .par_iter()
        .zip(starts)
        .for_each(|(&(s, e), (mut head, mut o))| {
            for i in s..e {
                if let Some(&a) = pos.get(i + AHEAD) {
                    let t = layout.slot(a.to_u64()) as usize;
                    if t < len {
                        // SAFETY: in bounds; only a hint.
                        prefetch(unsafe { &*d.ptr().add(t) });
                    }
                }
                if heads[i] != 0 {
                    head = Some(i);
                }
                let r = W::from_u64(head.map_or(0, |h| h as u64 + 1));
                let t = layout.slot(pos[i].to_u64()) as usize;
                assert!(t < len, "rank_groups: slot {t} out of bounds ({len})");
                // SAFETY: in bounds; positions do not repeat, so no two
                // elements write one slot; kept elements get their own
                // output index from the piece's start.
                unsafe {
                    d.write(t, r);
                    if kept(i) {
                        dp.write(o, pos[i]);
                        ds.write(o, W::from_u64(i as u64));
                        dr.write(o, r);
                        o += 1;
                    }
                }
            }
        });
    (kp, ks, kr)
}
