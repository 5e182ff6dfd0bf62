//! The CPU backend: every step of [`Backend`] with rayon, buffers are `Vec`s.
//!
//! Work is cut into pieces of at least [`GRAIN`] elements, about four per
//! worker, so results never depend on the number of threads (pieces only
//! change who computes what, not what is computed).
//!
//! No step hands a raw pointer to its tasks: a task writes a piece of the
//! output that it borrows alone (`shared::split_at_ends`, `par_chunks_mut`),
//! or, where tasks write scattered elements of one buffer, stores through a
//! `shared::SharedSlice` (relaxed atomic stores, a plain `mov` on x86-64).

mod merge;
mod radix;
mod ranks;
mod segsort;
pub(crate) mod shared;

use rayon::prelude::*;

use super::steps::{
    Backend, CoverSample, Elem, Iota, Order, RankLayout, SegSortReport, Word, bits_for, cover_cmp,
    cover_delta, cover_rank,
};
use crate::error::Result;
use radix::{radix_sort, suffix_sort};
use ranks::rank_groups_cpu;
use shared::{SharedSlice, split_at_ends};

/// Smallest piece of work handed to one rayon task.
pub const GRAIN: usize = 1 << 14;

/// The rayon backend. Runs in the current rayon pool.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cpu;

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

/// The pieces of `out` (those of [`pieces`]) with their starts, for tasks
/// that each write their own.
fn pieces_mut<T: Send>(out: &mut [T]) -> impl IndexedParallelIterator<Item = (usize, &mut [T])> {
    let c = piece(out.len());
    out.par_chunks_mut(c)
        .enumerate()
        .map(move |(k, o)| (k * c, o))
}

/// `n` zeros for a step to overwrite: zeroed memory from the allocator is
/// untouched until written, so this costs no pass over the buffer.
fn zeroed<T: Elem>(n: usize) -> Vec<T> {
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

/// Hints the cache to load the line at `p`. Takes an address, not a
/// reference: `p` may point to an element another task is writing, or past
/// the end; a prefetch reads nothing and never faults.
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` only hints the cache; it accesses no memory
    // and faults on no address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// How many elements ahead the steps' random reads and writes are
/// prefetched.
const AHEAD: usize = 16;

/// Where each piece of `keep` (pieces of `c`) ends in a compaction's output:
/// the running sums of the kept counts (the last is the total).
fn keep_ends(keep: &[u8], c: usize) -> Vec<usize> {
    let counts: Vec<usize> = keep
        .par_chunks(c)
        .map(|k| k.iter().filter(|&&f| f != 0).count())
        .collect();
    counts
        .into_iter()
        .scan(0, |total, k| {
            *total += k;
            Some(*total)
        })
        .collect()
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
        let mut out: Vec<T> = zeroed(b.len());
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

    fn download_into<T: Elem>(&self, b: &Vec<T>, out: &mut [T]) -> Result<()> {
        out.copy_from_slice(b);
        Ok(())
    }

    fn slice<T: Elem>(&self, b: &Vec<T>, start: usize, end: usize) -> Result<Vec<T>> {
        Ok(b[start..end].to_vec())
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
        let mut tk: Vec<K> = zeroed(n);
        let mut tv: Vec<V> = zeroed(n);
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
        let ends = keep_ends(keep, c);
        let mut out: Vec<T> = zeroed(ends.last().copied().unwrap_or(0));
        x.par_chunks(c)
            .zip(keep.par_chunks(c))
            .zip(split_at_ends(&mut out, &ends))
            .for_each(|((p, k), o)| {
                // The piece's output has a slot for each element it keeps.
                let mut slots = o.iter_mut();
                for (&v, &f) in p.iter().zip(k) {
                    if f != 0
                        && let Some(slot) = slots.next()
                    {
                        *slot = v;
                    }
                }
            });
        Ok(out)
    }

    fn gather<T: Elem, I: Word>(&self, src: &Vec<T>, idx: &Vec<I>) -> Result<Vec<T>> {
        let mut out: Vec<T> = zeroed(idx.len());
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
        let d = SharedSlice::new(dst);
        src.par_chunks(GRAIN)
            .zip(idx.par_chunks(GRAIN))
            .for_each(|(s, ix)| {
                for (j, (&v, &i)) in s.iter().zip(ix).enumerate() {
                    if let Some(&a) = ix.get(j + AHEAD) {
                        prefetch(d.addr(a.to_u64() as usize));
                    }
                    // Bounds-checked; a repeated index is a race that one of
                    // the values wins.
                    d.store(i.to_u64() as usize, v);
                }
            });
        Ok(())
    }

    fn head_flags<K: Word>(&self, keys: &Vec<K>, or: Option<&Vec<u8>>) -> Result<Vec<u8>> {
        let mut out: Vec<u8> = zeroed(keys.len());
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
        Ok(segsort::segmented_sort(heads, keys, vals, block))
    }

    fn merge<W: Word>(&self, a: &Vec<W>, b: &Vec<W>, order: &Order<'_, Self, W>) -> Result<Vec<W>> {
        Ok(match order {
            Order::Ascending => merge::merge_with(a, b, |x, y| x <= y),
            Order::Dc3 {
                text,
                n,
                rank,
                layout,
            } => merge::merge_dc3_order(a, b, text, *n, rank, *layout),
            Order::Cover { text, n, sample } => merge::merge_with(a, b, |x, y| {
                cover_cmp(
                    text,
                    *n,
                    sample.v,
                    sample.size,
                    sample.rank,
                    sample.index,
                    sample.start,
                    sample.pairs,
                    x.to_u64(),
                    y.to_u64(),
                )
                .is_le()
            }),
        })
    }

    fn count(&self, flags: &Vec<u8>) -> Result<u64> {
        Ok(flags
            .par_chunks(GRAIN)
            .map(|c| c.iter().filter(|&&f| f != 0).count() as u64)
            .sum())
    }

    fn iota<W: Word>(&self, n: usize, seq: Iota) -> Result<Vec<W>> {
        let mut out: Vec<W> = zeroed(n);
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
        let mut out: Vec<u64> = zeroed(words);
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
        let mut out: Vec<K> = zeroed(pos.len());
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
        let mut tmp: Vec<W> = zeroed(pos.len());
        let mut heads: Vec<u8> = zeroed(pos.len());
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
        assert!(
            k >= 1 && 2 * k + lbits <= 64,
            "text_heads: {k} characters do not fit a key"
        );
        let key = |p: W| text_key(packed, n, p.to_u64(), k, lbits);
        let mut out: Vec<u8> = zeroed(pos.len());
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
        let ends = keep_ends(keep, c);
        let mut out: Vec<W> = zeroed(ends.last().copied().unwrap_or(0));
        keep.par_chunks(c)
            .enumerate()
            .zip(split_at_ends(&mut out, &ends))
            .for_each(|((ci, k), o)| {
                let mut slots = o.iter_mut();
                for (j, &f) in k.iter().enumerate() {
                    if f != 0
                        && let Some(slot) = slots.next()
                    {
                        *slot = W::from_u64((ci * c + j) as u64);
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
        let d = SharedSlice::new(dst);
        src.par_chunks(GRAIN)
            .zip(pos.par_chunks(GRAIN))
            .for_each(|(s, p)| {
                for (j, (&v, &q)) in s.iter().zip(p).enumerate() {
                    if let Some(&a) = p.get(j + AHEAD) {
                        prefetch(d.addr(layout.slot(a.to_u64()) as usize));
                    }
                    // Bounds-checked; a repeated slot is a race that one of
                    // the values wins.
                    d.store(layout.slot(q.to_u64()) as usize, v);
                }
            });
        Ok(())
    }

    fn symbols<W: Word>(&self, packed: &Vec<u64>, n: u64) -> Result<Vec<W>> {
        let mut out: Vec<W> = zeroed(n as usize);
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
        let mut out: Vec<W> = zeroed(pos.len());
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

    fn triple_keys<K: Word, W: Word>(
        &self,
        s: &Vec<W>,
        pos: &Vec<W>,
        n: u64,
        bits: u32,
    ) -> Result<Vec<K>> {
        assert!(
            bits >= 1 && 3 * bits <= K::BITS,
            "triple_keys: 3 x {bits} bits do not fit the key"
        );
        let c = |q: u64| if q < n { s[q as usize].to_u64() } else { 0 };
        Ok((0..pos.len())
            .into_par_iter()
            .with_min_len(GRAIN)
            .map(|i| {
                if let Some(&a) = pos.get(i + AHEAD) {
                    prefetch(s.as_ptr().wrapping_add(a.to_u64() as usize));
                }
                let p = pos[i].to_u64();
                K::from_u64((c(p) << (2 * bits)) | (c(p + 1) << bits) | c(p + 2))
            })
            .collect())
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
        let mut out: Vec<W> = zeroed(n);
        // Each piece of the output from the segment it starts in.
        out.par_chunks_mut(GRAIN).enumerate().for_each(|(c, o)| {
            let s = c * GRAIN;
            let mut k = starts.partition_point(|&x| x <= s) - 1;
            let mut i = s;
            while i < s + o.len() {
                let end = starts[k + 1].min(s + o.len());
                let len = W::from_u64((starts[k + 1] - starts[k]) as u64);
                o[i - s..end - s].fill(len);
                i = end;
                k += 1;
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

    fn residues<W: Word>(&self, x: &Vec<W>, v: u64) -> Result<Vec<u32>> {
        assert!(v.is_power_of_two(), "residues: {v} is not a power of two");
        Ok(x.par_iter()
            .with_min_len(GRAIN)
            .map(|&p| (p.to_u64() & (v - 1)) as u32)
            .collect())
    }

    fn cover_ranks<W: Word>(
        &self,
        pos: &Vec<W>,
        n: u64,
        s: &CoverSample<'_, Self>,
    ) -> Result<Vec<u32>> {
        let (v, size) = (s.v, s.size);
        Ok(pos
            .par_iter()
            .with_min_len(GRAIN)
            .map(|&p| {
                let p = p.to_u64();
                let q = p + cover_delta(v, s.start, s.pairs, p, p);
                cover_rank(s.rank, s.index, v, size, n, q)
            })
            .collect())
    }
}
