//! The CPU backend's sorts: the radix sort of (key, value) pairs and the
//! suffix sort by text keys, both most significant digit first through
//! memory, then each bucket in cache.

use rayon::prelude::*;

use super::shared::{SharedSlice, split_at_ends};
use super::{AHEAD, piece, pieces, zeroed};
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
        let mut ks: Vec<u64> = zeroed(n);
        for i in 0..n {
            if let Some(&q) = pos.get(i + AHEAD) {
                touch(q);
            }
            ks[i] = key(pos[i]);
        }
        let mut kt: Vec<u64> = zeroed(n);
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
    let (hist, vary): (Vec<Vec<usize>>, Vec<u64>) = parts
        .par_iter()
        .map(|&(s, e)| {
            let mut h = vec![0usize; buckets];
            let (mut or, mut and) = (0u64, u64::MAX);
            let part = &pos[s..e];
            for (i, &p) in part.iter().enumerate() {
                if let Some(&q) = part.get(i + AHEAD) {
                    touch(q);
                }
                let k = key(p);
                (or, and) = (or | k, and & k);
                h[((k >> shift) & mask) as usize] += 1;
            }
            (h, or ^ and)
        })
        .unzip();
    if hist.iter().map(|h| h[digit_of(pos[0])]).sum::<usize>() == n {
        // One bucket: go straight to the highest bit that differs between
        // two keys (a run of one base agrees in all 54 character bits).
        let vary = vary.iter().fold(0, |a, &v| a | v) & low_bits(shift);
        suffix_sort(pos, tmp, heads, key, touch, 64 - vary.leading_zeros());
        return;
    }
    let (offsets, ends) = plan_buckets(&hist);
    {
        // The offsets give every element its own slot.
        let d = SharedSlice::new(tmp);
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
                    d.store(off[b], p);
                    off[b] += 1;
                }
            });
    }
    let buckets: Vec<_> = split_at_ends(tmp, &ends)
        .into_iter()
        .zip(split_at_ends(pos, &ends))
        .zip(split_at_ends(heads, &ends))
        .collect();
    let big = piece(n).max(IN_CACHE);
    for_buckets(
        buckets,
        |((t, _), _)| t.len(),
        big,
        |((t, p), h)| {
            suffix_sort(t, p, h, key, touch, shift);
            p.copy_from_slice(t);
        },
    );
}

/// The bits `0..k` of a word set (`k <= 64`).
fn low_bits(k: u32) -> u64 {
    if k >= 64 { u64::MAX } else { (1u64 << k) - 1 }
}

/// Above this many elements a radix sort runs its first pass on the most
/// significant digit (in parallel, through memory) and then sorts each bucket
/// by the remaining digits in cache.
const MSD_MIN: usize = 1 << 16;

/// From per-piece digit histograms of an MSD pass: each piece's write offset
/// per bucket (bucket-major, then piece order: stable), and the ends of the
/// non-empty buckets, in order.
fn plan_buckets(hist: &[Vec<usize>]) -> (Vec<Vec<usize>>, Vec<usize>) {
    let buckets = hist.first().map_or(0, Vec::len);
    let mut offsets = vec![vec![0usize; buckets]; hist.len()];
    let mut ends = Vec::new();
    let mut sum = 0;
    for b in 0..buckets {
        let start = sum;
        for (p, h) in hist.iter().enumerate() {
            offsets[p][b] = sum;
            sum += h[b];
        }
        if sum > start {
            ends.push(sum);
        }
    }
    (offsets, ends)
}

/// Runs `one` on every bucket, largest first (better balance): buckets
/// longer than `big` one after another (each sorts itself in parallel), the
/// rest one per task.
fn for_buckets<B: Send>(
    mut buckets: Vec<B>,
    len: impl Fn(&B) -> usize,
    big: usize,
    one: impl Fn(B) + Sync,
) {
    buckets.sort_by_key(|b| std::cmp::Reverse(len(b)));
    let (huge, small): (Vec<B>, Vec<B>) = buckets.into_iter().partition(|b| len(b) > big);
    huge.into_iter().for_each(&one);
    small.into_par_iter().for_each(&one);
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
    let (hist, vary): (Vec<Vec<usize>>, Vec<u64>) = parts
        .par_iter()
        .map(|&(s, e)| {
            let mut h = vec![0usize; buckets];
            let (mut or, mut and) = (0u64, u64::MAX);
            for &k in &keys[s..e] {
                let k = k.to_u64();
                (or, and) = (or | k, and & k);
                h[((k >> shift) & mask) as usize] += 1;
            }
            (h, or ^ and)
        })
        .unzip();
    if hist.iter().map(|h| h[digit_of(keys[0])]).sum::<usize>() == n {
        // One bucket: this digit sorts nothing, nor do the bits below it
        // that are the same in every key.
        let vary = vary.iter().fold(0, |a, &v| a | v) & low_bits(shift);
        radix_sort(keys, vals, tk, tv, lo, (64 - vary.leading_zeros()).max(lo));
        return;
    }
    let (offsets, ends) = plan_buckets(&hist);
    {
        // The offsets give every element its own slot.
        let (dk, dv) = (SharedSlice::new(tk), SharedSlice::new(tv));
        let (sk, sv) = (&*keys, &*vals);
        parts
            .par_iter()
            .zip(offsets.into_par_iter())
            .for_each(|(&(s, e), mut off)| {
                for i in s..e {
                    let d = digit_of(sk[i]);
                    dk.store(off[d], sk[i]);
                    dv.store(off[d], sv[i]);
                    off[d] += 1;
                }
            });
    }
    // Each bucket by the remaining bits: the sorted bucket must end in
    // keys/vals, so sort it in tk/tv (with keys/vals as scratch) and copy
    // back when it ended in the scratch.
    let buckets: Vec<_> = split_at_ends(tk, &ends)
        .into_iter()
        .zip(split_at_ends(tv, &ends))
        .zip(
            split_at_ends(keys, &ends)
                .into_iter()
                .zip(split_at_ends(vals, &ends)),
        )
        .collect();
    let big = piece(n).max(MSD_MIN);
    for_buckets(
        buckets,
        |((k, _), _)| k.len(),
        big,
        |((k, v), (bk, bv))| {
            radix_sort(k, v, bk, bv, lo, shift);
            bk.copy_from_slice(k);
            bv.copy_from_slice(v);
        },
    );
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
