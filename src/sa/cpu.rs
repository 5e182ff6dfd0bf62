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

/// Character `p` (`c + 1`, 0 past the end).
#[inline(always)]
fn char_at<W: Word>(text: &CharsRef<'_, W>, n: u64, p: u64) -> u64 {
    if p >= n {
        return 0;
    }
    match text {
        CharsRef::Packed(t) => base(t, p) + 1,
        CharsRef::Symbols(s) => s[p as usize].to_u64(),
    }
}

enum CharsRef<'a, W> {
    Packed(&'a [u64]),
    Symbols(&'a [W]),
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
        let passes = bits.div_ceil(DIGIT_BITS);
        let digit = bits.div_ceil(passes);
        let parts = pieces(n);
        let mut tk: Vec<K> = Vec::new();
        let mut tv: Vec<V> = Vec::new();
        for pass in 0..passes {
            let shift = pass * digit;
            let width = digit.min(bits - shift);
            let buckets = 1usize << width;
            let mask = (buckets - 1) as u64;
            let digit_of = |k: K| ((k.to_u64() >> shift) & mask) as usize;
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
            // Skip a pass in which every key has the same digit.
            let first = digit_of(keys[0]);
            if hist.iter().map(|h| h[first]).sum::<usize>() == n {
                continue;
            }
            // offsets[part][bucket]: bucket-major, then part order (stable).
            let mut offsets = vec![vec![0usize; buckets]; parts.len()];
            let mut sum = 0;
            for b in 0..buckets {
                for (p, h) in hist.iter().enumerate() {
                    offsets[p][b] = sum;
                    sum += h[b];
                }
            }
            if tk.is_empty() {
                tk = uninit(n);
                tv = uninit(n);
            }
            let (dk, dv) = (Shared(tk.as_mut_ptr()), Shared(tv.as_mut_ptr()));
            let (sk, sv) = (&keys[..], &vals[..]);
            parts
                .par_iter()
                .zip(offsets.into_par_iter())
                .for_each(|(&(s, e), mut off)| {
                    for i in s..e {
                        let d = digit_of(sk[i]);
                        // SAFETY: offsets give every element its own slot < n.
                        unsafe {
                            dk.write(off[d], sk[i]);
                            dv.write(off[d], sv[i]);
                        }
                        off[d] += 1;
                    }
                });
            std::mem::swap(keys, &mut tk);
            std::mem::swap(vals, &mut tv);
        }
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
                for (o, &i) in o.iter_mut().zip(i) {
                    *o = src[i.to_u64() as usize];
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
            .for_each(|(s, i)| {
                for (&v, &i) in s.iter().zip(i) {
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
                let n = *n;
                let layout = *layout;
                let t = match text {
                    Chars::Packed(p) => CharsRef::Packed(&p[..]),
                    Chars::Symbols(s) => CharsRef::Symbols(&s[..]),
                };
                let r = |p: u64| {
                    if p >= n {
                        0
                    } else {
                        rank[layout.slot(p) as usize].to_u64()
                    }
                };
                let c = |p: u64| char_at(&t, n, p);
                Ok(self.merge_with(a, b, |i, j| {
                    let (i, j) = (i.to_u64(), j.to_u64());
                    if j % 3 == 1 {
                        (c(i), r(i + 1)) < (c(j), r(j + 1))
                    } else {
                        (c(i), c(i + 1), r(i + 2)) < (c(j), c(j + 1), r(j + 2))
                    }
                }))
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
                for (o, &p) in o.iter_mut().zip(p) {
                    let p = p.to_u64();
                    let w = (p / 32) as usize;
                    let s = 2 * (p % 32) as u32;
                    let hi = packed[w] << s;
                    let lo = if s == 0 { 0 } else { packed[w + 1] >> (64 - s) };
                    let window = hi | lo;
                    let chars = window >> (64 - 2 * k);
                    // Bases past the end are zero in the packed text already,
                    // except that the window may run into the padding word.
                    let len = (n - p).min(k as u64);
                    let chars = if len < k as u64 {
                        chars & !((1u64 << (2 * (k as u64 - len))) - 1)
                    } else {
                        chars
                    };
                    *o = K::from_u64((chars << lbits) | len);
                }
            });
        Ok(out)
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
                for (o, &p) in o.iter_mut().zip(p) {
                    let q = p.to_u64() + h;
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
