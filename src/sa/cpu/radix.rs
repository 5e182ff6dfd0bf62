//! The CPU backend's sorts: the radix sort of (key, value) pairs and the
//! suffix sort by text keys, both most significant digit first through
//! memory, then each bucket in cache.

use rayon::prelude::*;

use super::{AHEAD, Shared, piece, pieces, uninit};
use crate::sa::steps::{Elem, Word};

/// Widest radix digit.
const DIGIT_BITS: u32 = 11;

/// Elements at or below which a suffix sort's bucket computes its keys once
/// and sorts them as stored (key, position) pairs: 24 bytes of scratch an
/// element, at most 24 MiB a worker.
const IN_CACHE: usize = 1 << 20;

/// Stable sort of `pos` by bits `0..hi` of `key(pos)` (higher bits equal);
/// `tmp` is scratch of the same length. Sets `heads[i]` to 1 where the key
/// differs from the previous element's (always at 0: the caller's slices
/// start where the key changes).
pub(super) fn suffix_sort<W: Word>(
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

/// Stable sort of `keys`/`vals` by bits `lo..hi` of the key (bits above `hi`
/// are equal within the slice); `tk`/`tv` are scratch of the same length.
/// The result is left in `keys`/`vals`.
pub(super) fn radix_sort<K: Word, V: Elem>(
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
