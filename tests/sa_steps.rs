//! Every step of the suffix-array [`Backend`] on the rayon backend [`Cpu`],
//! checked against plain sequential loops written here, in rayon pools of 1,
//! 2 and 3 threads (a step's result must not depend on the thread count).
//!
//! Sizes straddle the CPU backend's piece size ([`GRAIN`]) and, for the
//! segmented sort, the `block` argument. Inputs come from a deterministic
//! xorshift generator, so every failure reproduces.

use std::fmt::Debug;
use std::sync::OnceLock;

use fmalign::sa::cpu::{Cpu, GRAIN};
use fmalign::sa::steps::{
    Backend, Chars, Elem, Iota, Order, RankLayout, SegSortReport, Word, rank_groups_by_steps,
};

const G: usize = GRAIN;

// ------------------------------------------------------------------ harness

/// xorshift64* — tiny and deterministic.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// `b` random low bits.
    fn bits(&mut self, b: u32) -> u64 {
        match b {
            0 => 0,
            64.. => self.next(),
            _ => self.next() >> (64 - b),
        }
    }

    /// True with probability `num / den`.
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

/// Buffer elements the tests can make from random words (truncating).
trait Gen: Elem {
    fn make(x: u64) -> Self;
}
impl Gen for u8 {
    fn make(x: u64) -> u8 {
        x as u8
    }
}
impl Gen for u32 {
    fn make(x: u64) -> u32 {
        x as u32
    }
}
impl Gen for u64 {
    fn make(x: u64) -> u64 {
        x
    }
}

fn conv<T: Gen>(v: &[u64]) -> Vec<T> {
    v.iter().map(|&x| T::make(x)).collect()
}

fn random<T: Gen>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::make(rng.next())).collect()
}

/// `n` flags, nonzero with probability `num / den`; nonzero flags are
/// arbitrary bytes when `wild` (a flag is "nonzero", not "1").
fn flags(rng: &mut Rng, n: usize, num: u64, den: u64, wild: bool) -> Vec<u8> {
    (0..n)
        .map(|_| {
            if !rng.chance(num, den) {
                0
            } else if wild {
                1 + rng.below(255) as u8
            } else {
                1
            }
        })
        .collect()
}

/// The general sizes: empty, tiny, and around one and several pieces.
fn sizes() -> Vec<usize> {
    vec![
        0,
        1,
        2,
        3,
        7,
        100,
        1000,
        G - 1,
        G,
        G + 1,
        2 * G + 1,
        5 * G + 3,
    ]
}

/// Piece lengths the CPU backend may use for `n` elements with 1, 2 or 3
/// workers (about four pieces per worker, never below `GRAIN`).
fn piece_lengths(n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (1..=3).map(|t| n.div_ceil(4 * t).max(G)).collect();
    v.push(G);
    v.sort_unstable();
    v.dedup();
    v
}

fn pools() -> &'static [(usize, rayon::ThreadPool)] {
    static POOLS: OnceLock<Vec<(usize, rayon::ThreadPool)>> = OnceLock::new();
    POOLS.get_or_init(|| {
        [1, 2, 3]
            .into_iter()
            .map(|t| (t, fmalign::thread_pool(t).expect("thread pool")))
            .collect()
    })
}

/// Fails with the first place where `got` and `want` differ.
#[track_caller]
fn same<R: PartialEq + Debug>(what: &str, got: &R, want: &R) {
    if got == want {
        return;
    }
    let (g, w) = (format!("{got:?}"), format!("{want:?}"));
    let at = g
        .bytes()
        .zip(w.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(g.len().min(w.len()));
    let window = |s: &str| {
        let lo = at.saturating_sub(120);
        let hi = (at + 120).min(s.len());
        s.get(lo..hi).unwrap_or("").to_string()
    };
    panic!(
        "{what}: result differs from the reference at character {at} of its Debug text \
         (lengths {} and {})\n   got: ...{}...\n  want: ...{}...",
        g.len(),
        w.len(),
        window(&g),
        window(&w)
    );
}

/// Runs `f` in pools of 1, 2 and 3 threads; each result must equal `want`.
#[track_caller]
fn on_pools<R, F>(what: &str, want: &R, f: F)
where
    R: PartialEq + Debug + Send,
    F: Fn() -> R + Sync,
{
    for (t, pool) in pools() {
        let got = pool.install(&f);
        same(&format!("{what} [{t} threads]"), &got, want);
    }
}

fn up<T: Elem>(v: &[T]) -> Vec<T> {
    Cpu.upload(v.to_vec()).unwrap()
}

fn down<T: Elem>(b: Vec<T>) -> Vec<T> {
    Cpu.download(b).unwrap()
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn ref_bits_for(max: u64) -> u32 {
    let mut b = 0;
    while b < 64 && (max >> b) != 0 {
        b += 1;
    }
    b
}

/// Segment starts: 0 and every nonzero head (the end `n` appended).
fn segment_bounds(heads: &[u8]) -> Vec<usize> {
    let mut b: Vec<usize> = (0..heads.len())
        .filter(|&i| i == 0 || heads[i] != 0)
        .collect();
    b.push(heads.len());
    b
}

// ------------------------------------------------------------------- memory

fn memory_case<T: Gen>(rng: &mut Rng, n: usize) {
    let a: Vec<T> = random(rng, n);
    on_pools(
        &format!("upload/len/download n={n}"),
        &(n, a.clone()),
        || {
            let b = Cpu.upload(a.clone()).unwrap();
            (Cpu.len(&b), Cpu.download(b).unwrap())
        },
    );
    on_pools(&format!("zeros n={n}"), &vec![T::make(0); n], || {
        down(Cpu.zeros::<T>(n).unwrap())
    });
    on_pools(&format!("copy n={n}"), &(a.clone(), a.clone()), || {
        let b = up(&a);
        let c = Cpu.copy(&b).unwrap();
        (down(b), down(c))
    });
    for m in [0, 1, 5, G + 1] {
        let b: Vec<T> = random(rng, m);
        let mut want = a.clone();
        want.extend_from_slice(&b);
        on_pools(&format!("concat {n}+{m}"), &want, || {
            down(Cpu.concat(&up(&a), &up(&b)).unwrap())
        });
    }
}

#[test]
fn memory_steps() {
    assert!(!Cpu.name().is_empty());
    let mut rng = Rng::new(1);
    for n in sizes() {
        memory_case::<u8>(&mut rng, n);
        memory_case::<u32>(&mut rng, n);
        memory_case::<u64>(&mut rng, n);
    }
}

// --------------------------------------------------------------- radix sort

fn radix_case<K: Word + Gen, V: Gen>(what: &str, keys: &[K], vals: &[V], bits: u32) {
    let m = mask(bits);
    let mut pairs: Vec<(K, V)> = keys.iter().copied().zip(vals.iter().copied()).collect();
    // Stable.
    pairs.sort_by_key(|&(k, _)| k.to_u64() & m);
    let want: (Vec<K>, Vec<V>) = pairs.into_iter().unzip();
    on_pools(
        &format!("radix_sort_pairs {what} bits={bits} n={}", keys.len()),
        &want,
        || {
            let mut k = up(keys);
            let mut v = up(vals);
            Cpu.radix_sort_pairs::<K, V>(&mut k, &mut v, bits).unwrap();
            (down(k), down(v))
        },
    );
}

/// Keys below `2^bits` (`eb = min(bits, key bits)`), with many duplicates
/// in every distribution but `uniform` at large `eb`.
fn radix_keys(rng: &mut Rng, n: usize, eb: u32, dist: &str) -> Vec<u64> {
    match dist {
        "uniform" => (0..n).map(|_| rng.bits(eb)).collect(),
        "few" => {
            let pool: Vec<u64> = (0..5).map(|_| rng.bits(eb)).collect();
            (0..n).map(|_| pool[rng.below(5) as usize]).collect()
        }
        "equal" => vec![rng.bits(eb); n],
        // Only the top bits vary: the low passes see one digit and are skipped.
        "high" => {
            let t = eb.min(3);
            let low = rng.bits(eb - t);
            (0..n).map(|_| low | (rng.bits(t) << (eb - t))).collect()
        }
        // Only the two low bits vary.
        "low" => {
            let t = eb.min(2);
            let high = rng.bits(eb) & !mask(t);
            (0..n).map(|_| high | rng.bits(t)).collect()
        }
        // Only a band of bits in the middle varies (the suffix sort's buckets:
        // leading characters and length field the same in every key).
        "middle" => {
            let (lo, width) = (eb / 3, (eb / 3).min(13));
            let fixed = rng.bits(eb) & !(mask(width) << lo);
            (0..n).map(|_| fixed | (rng.bits(width) << lo)).collect()
        }
        "desc" => {
            let mut v: Vec<u64> = (0..n).map(|_| rng.bits(eb)).collect();
            for i in 1..n {
                if rng.chance(1, 3) {
                    v[i] = v[i - 1];
                }
            }
            v.sort_unstable_by(|a, b| b.cmp(a));
            v
        }
        _ => unreachable!(),
    }
}

fn radix_for_key<K: Word + Gen>(rng: &mut Rng) {
    let all_bits = [0, 1, 3, 8, 11, 12, 22, 32, 33, 59, 63, 64];
    let dists = ["uniform", "few", "equal", "high", "low", "middle", "desc"];
    for n in sizes() {
        let big = n > 1000;
        for &bits in &all_bits {
            let eb = bits.min(K::BITS);
            for dist in dists {
                if big && matches!(dist, "equal" | "low" | "desc") && bits % 11 != 0 {
                    continue;
                }
                let keys: Vec<K> = conv(&radix_keys(rng, n, eb, dist));
                // Values are the input positions, so stability shows.
                let idx: Vec<u32> = (0..n as u32).collect();
                radix_case(&format!("{dist} K=u{}", K::BITS), &keys, &idx, bits);
                if !big || bits == 64 || bits == 22 {
                    let v64: Vec<u64> = random(rng, n);
                    radix_case(&format!("{dist} K=u{} V=u64", K::BITS), &keys, &v64, bits);
                    let v8: Vec<u8> = random(rng, n);
                    radix_case(&format!("{dist} K=u{} V=u8", K::BITS), &keys, &v8, bits);
                }
            }
        }
    }
}

#[test]
fn radix_sort_pairs_u32_keys() {
    radix_for_key::<u32>(&mut Rng::new(2));
}

#[test]
fn radix_sort_pairs_u64_keys() {
    radix_for_key::<u64>(&mut Rng::new(3));
}

/// `MSD_MIN` in cpu.rs: from this many elements the radix sort starts with
/// a parallel pass on the most significant digit.
const MSD_MIN: usize = 1 << 16;

/// Widest radix digit (`DIGIT_BITS` in cpu.rs).
const DIGIT: u32 = 11;

/// Keys below `2^eb` whose top digit (the first MSD pass) is skewed.
fn radix_msd_keys(rng: &mut Rng, n: usize, eb: u32, dist: &str) -> Vec<u64> {
    let t = eb.min(DIGIT);
    let rest = eb - t;
    let top = rng.bits(t);
    match dist {
        // 90% of the keys in one top-digit bucket: a huge bucket that sorts
        // itself with a second MSD pass.
        "90% one bucket" => (0..n)
            .map(|_| {
                let d = if rng.chance(9, 10) { top } else { rng.bits(t) };
                (d << rest) | rng.bits(rest)
            })
            .collect(),
        // The same again inside the huge bucket (nested huge buckets).
        "90% one bucket, twice" => {
            let t2 = rest.min(DIGIT);
            let second = rng.bits(t2);
            (0..n)
                .map(|_| {
                    if rng.chance(9, 10) {
                        let d = if rng.chance(9, 10) {
                            second
                        } else {
                            rng.bits(t2)
                        };
                        (top << rest) | (d << (rest - t2)) | rng.bits(rest - t2)
                    } else {
                        (rng.bits(t) << rest) | rng.bits(rest)
                    }
                })
                .collect()
        }
        // One top digit: the first pass finds a single bucket and recurses.
        "top digit equal" => (0..n).map(|_| (top << rest) | rng.bits(rest)).collect(),
        // Only the three low bits vary: every digit above is one bucket.
        "low bits only" => {
            let high = rng.bits(eb) & !mask(eb.min(3));
            (0..n).map(|_| high | rng.bits(eb.min(3))).collect()
        }
        _ => unreachable!(),
    }
}

fn radix_msd_for_key<K: Word + Gen>(rng: &mut Rng, all_bits: &[u32]) {
    let dists = [
        "90% one bucket",
        "90% one bucket, twice",
        "top digit equal",
        "low bits only",
    ];
    let sizes = [MSD_MIN - 1, MSD_MIN, MSD_MIN + 1, 150_001, 300_000];
    for (si, n) in sizes.into_iter().enumerate() {
        for (bi, &bits) in all_bits.iter().enumerate() {
            // Every width at 150001; one at each size around MSD_MIN, in
            // turn; the largest size for full 32-bit keys only (time).
            let keep = match n {
                150_001 => true,
                300_000 => bits == 32,
                _ => bi == si % all_bits.len(),
            };
            if !keep {
                continue;
            }
            for (di, dist) in dists.iter().enumerate() {
                let keys: Vec<K> = conv(&radix_msd_keys(rng, n, bits, dist));
                let idx: Vec<u32> = (0..n as u32).collect();
                radix_case(&format!("{dist} K=u{}", K::BITS), &keys, &idx, bits);
                if n == 150_001 {
                    match (bi + di) % 3 {
                        0 => {
                            let v: Vec<u64> = random(rng, n);
                            radix_case(&format!("{dist} K=u{} V=u64", K::BITS), &keys, &v, bits);
                        }
                        1 => {
                            let v: Vec<u8> = random(rng, n);
                            radix_case(&format!("{dist} K=u{} V=u8", K::BITS), &keys, &v, bits);
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

/// Sizes from `MSD_MIN` up: the MSD pass, huge buckets that recurse with
/// their own parallel MSD pass, and the one-bucket recursion.
#[test]
fn radix_sort_pairs_msd() {
    let mut rng = Rng::new(23);
    radix_msd_for_key::<u32>(&mut rng, &[12, 22, 32]);
    radix_msd_for_key::<u64>(&mut rng, &[11, 33, 64]);
}

// -------------------------------------------------------------------- scans

fn exclusive_scan_case<W: Word + Gen>(what: &str, x: &[W]) {
    let mut want = Vec::with_capacity(x.len());
    let mut acc = W::make(0);
    for &v in x {
        want.push(acc);
        acc = W::from_u64(acc.to_u64().wrapping_add(v.to_u64()) & mask(W::BITS));
    }
    on_pools(
        &format!("exclusive_scan {what} u{} n={}", W::BITS, x.len()),
        &(want, acc),
        || {
            let mut b = up(x);
            let total = Cpu.exclusive_scan::<W>(&mut b).unwrap();
            (down(b), total)
        },
    );
}

fn scan_sizes() -> Vec<usize> {
    let mut s = sizes();
    s.push(9 * G + 7);
    s
}

fn scans_for<W: Word + Gen>(rng: &mut Rng) {
    for n in scan_sizes() {
        let small: Vec<W> = (0..n).map(|_| W::make(rng.below(1000))).collect();
        exclusive_scan_case("small", &small);
        exclusive_scan_case("wrapping", &random::<W>(rng, n));
        exclusive_scan_case("max", &vec![W::make(u64::MAX); n]);
        exclusive_scan_case("zeros", &vec![W::make(0); n]);
        let flags01: Vec<W> = (0..n).map(|_| W::make(rng.below(2))).collect();
        exclusive_scan_case("flags", &flags01);

        for (hname, heads) in scan_heads(rng, n) {
            let small: Vec<W> = (0..n).map(|_| W::make(rng.below(1000))).collect();
            segmented_scan_case(&format!("{hname} small"), &small, &heads);
            let wide: Vec<W> = random(rng, n);
            segmented_scan_case(&format!("{hname} wrapping"), &wide, &heads);
        }
    }
}

/// Head layouts for the segmented scan, including heads exactly at, just
/// before and just after the piece boundaries of 1, 2 and 3 workers.
fn scan_heads(rng: &mut Rng, n: usize) -> Vec<(String, Vec<u8>)> {
    let mut v = vec![
        ("none".to_string(), vec![0u8; n]),
        ("all".to_string(), vec![1u8; n]),
        ("random 1/10".to_string(), flags(rng, n, 1, 10, true)),
        ("random 1/5000".to_string(), flags(rng, n, 1, 5000, false)),
    ];
    let mut first = flags(rng, n, 1, 100, false);
    if n > 0 {
        first[0] = 1;
    }
    v.push(("random, head at 0".to_string(), first));
    for c in piece_lengths(n) {
        if c >= n {
            continue;
        }
        for d in [-1i64, 0, 1] {
            let mut h = vec![0u8; n];
            for b in (c..n).step_by(c) {
                let i = b as i64 + d;
                if (0..n as i64).contains(&i) {
                    h[i as usize] = 1;
                }
            }
            v.push((format!("heads at piece {c} {d:+}"), h));
        }
        // One head only, at the first boundary; the rest carries across.
        let mut h = vec![0u8; n];
        h[c] = 7;
        v.push((format!("single head at {c}"), h));
    }
    v
}

fn segmented_scan_case<W: Word + Gen>(what: &str, x: &[W], heads: &[u8]) {
    let mut want = Vec::with_capacity(x.len());
    let mut acc = 0u64;
    for (&v, &h) in x.iter().zip(heads) {
        if h != 0 {
            acc = 0;
        }
        acc = acc.wrapping_add(v.to_u64()) & mask(W::BITS);
        want.push(W::from_u64(acc));
    }
    on_pools(
        &format!("segmented_scan {what} u{} n={}", W::BITS, x.len()),
        &want,
        || {
            let mut b = up(x);
            Cpu.segmented_scan::<W>(&mut b, &up(heads)).unwrap();
            down(b)
        },
    );
}

#[test]
fn scans_u32() {
    scans_for::<u32>(&mut Rng::new(4));
}

#[test]
fn scans_u64() {
    scans_for::<u64>(&mut Rng::new(5));
}

// --------------------------------------------------- compact, count, gather

fn compact_case<T: Gen>(rng: &mut Rng, n: usize) {
    let x: Vec<T> = random(rng, n);
    for (num, den) in [(0, 1), (1, 1), (1, 2), (1, 1000), (999, 1000)] {
        let keep = flags(rng, n, num, den, true);
        let want: Vec<T> = x
            .iter()
            .zip(&keep)
            .filter(|&(_, &k)| k != 0)
            .map(|(&v, _)| v)
            .collect();
        on_pools(&format!("compact {num}/{den} n={n}"), &want, || {
            down(Cpu.compact::<T>(&up(&x), &up(&keep)).unwrap())
        });
        let count = keep.iter().filter(|&&k| k != 0).count() as u64;
        on_pools(&format!("count {num}/{den} n={n}"), &count, || {
            Cpu.count(&up(&keep)).unwrap()
        });
    }
}

fn gather_scatter_case<T: Gen, I: Word + Gen>(rng: &mut Rng, n: usize) {
    // Gather: any indices, repeats allowed.
    for m in [1, n.max(1), 3 * n + 1] {
        let src: Vec<T> = random(rng, m);
        let idx: Vec<I> = (0..n).map(|_| I::make(rng.below(m as u64))).collect();
        let want: Vec<T> = idx.iter().map(|&i| src[i.to_u64() as usize]).collect();
        on_pools(&format!("gather n={n} m={m}"), &want, || {
            down(Cpu.gather::<T, I>(&up(&src), &up(&idx)).unwrap())
        });
    }
    // Scatter: an injection into a destination at least as long.
    for m in [n, n + 1, 2 * n + 3] {
        let src: Vec<T> = random(rng, n);
        let mut perm: Vec<u64> = (0..m as u64).collect();
        rng.shuffle(&mut perm);
        let idx: Vec<I> = conv(&perm[..n]);
        let dst: Vec<T> = random(rng, m);
        let mut want = dst.clone();
        for (&v, &i) in src.iter().zip(&idx) {
            want[i.to_u64() as usize] = v;
        }
        on_pools(&format!("scatter n={n} m={m}"), &want, || {
            let mut d = up(&dst);
            Cpu.scatter::<T, I>(&up(&src), &up(&idx), &mut d).unwrap();
            down(d)
        });
    }
}

#[test]
fn compact_count_gather_scatter() {
    let mut rng = Rng::new(6);
    for n in sizes() {
        compact_case::<u8>(&mut rng, n);
        compact_case::<u32>(&mut rng, n);
        compact_case::<u64>(&mut rng, n);
        gather_scatter_case::<u8, u32>(&mut rng, n);
        gather_scatter_case::<u32, u64>(&mut rng, n);
        gather_scatter_case::<u64, u32>(&mut rng, n);
        gather_scatter_case::<u64, u64>(&mut rng, n);
    }
}

// --------------------------------------------------------------- head flags

fn head_flags_for<K: Word + Gen>(rng: &mut Rng) {
    for n in sizes() {
        let mut runs: Vec<K> = Vec::with_capacity(n);
        for i in 0..n {
            runs.push(if i > 0 && rng.chance(2, 3) {
                runs[i - 1]
            } else {
                K::make(rng.below(4))
            });
        }
        let key_sets: Vec<(&str, Vec<K>)> = vec![
            ("runs", runs),
            ("equal", vec![K::make(9); n]),
            ("distinct", random(rng, n)),
        ];
        for (kname, keys) in &key_sets {
            let ors: Vec<Option<Vec<u8>>> = vec![
                None,
                Some(flags(rng, n, 1, 5, true)),
                Some(vec![0; n]),
                Some(vec![1; n]),
            ];
            for or in &ors {
                let want: Vec<u8> = (0..n)
                    .map(|i| {
                        let h = i == 0
                            || keys[i] != keys[i - 1]
                            || or.as_ref().is_some_and(|o| o[i] != 0);
                        u8::from(h)
                    })
                    .collect();
                on_pools(
                    &format!("head_flags {kname} u{} or={} n={n}", K::BITS, or.is_some()),
                    &want,
                    || {
                        let o = or.as_ref().map(|o| up(o));
                        down(Cpu.head_flags::<K>(&up(keys), o.as_ref()).unwrap())
                    },
                );
            }
        }
    }
}

#[test]
fn head_flags() {
    head_flags_for::<u32>(&mut Rng::new(7));
    head_flags_for::<u64>(&mut Rng::new(8));
}

// ----------------------------------------------------------- segmented sort

fn segsort_case<K: Word + Gen, V: Gen>(
    what: &str,
    heads: &[u8],
    keys: &[K],
    vals: &[V],
    block: usize,
) {
    let n = keys.len();
    let mut pairs: Vec<(K, V)> = keys.iter().copied().zip(vals.iter().copied()).collect();
    for w in segment_bounds(heads).windows(2) {
        pairs[w[0]..w[1]].sort();
    }
    let (wk, wv): (Vec<K>, Vec<V>) = pairs.into_iter().unzip();
    // Boundaries between blocks that a segment crosses, and the rounds of
    // doubling width until the widest of them is merged.
    let crossing: Vec<usize> = (block..n)
        .step_by(block)
        .filter(|&b| heads[b] == 0)
        .collect();
    let merge_rounds = crossing
        .iter()
        .map(|&b| 1 + (b / block).trailing_zeros())
        .max()
        .unwrap_or(0);
    let report = SegSortReport {
        merge_rounds,
        crossing: crossing.len() as u64,
    };
    on_pools(
        &format!("segmented_sort {what} K=u{} block={block} n={n}", K::BITS),
        &(wk, wv, report),
        || {
            let mut k = up(keys);
            let mut v = up(vals);
            let r = Cpu
                .segmented_sort::<K, V>(&up(heads), &mut k, &mut v, block)
                .unwrap();
            (down(k), down(v), r)
        },
    );
}

/// Segment layouts (`heads[0] == 1`) for blocks of `block` elements.
fn segment_layouts(rng: &mut Rng, n: usize, block: usize) -> Vec<(String, Vec<u8>)> {
    let from_lengths = |lens: &mut dyn FnMut() -> usize| {
        let mut h = vec![0u8; n];
        let mut i = 0;
        while i < n {
            h[i] = 1;
            i += lens().max(1);
        }
        h
    };
    let mut v = vec![("singletons".to_string(), vec![1u8; n])];
    let mut one = vec![0u8; n];
    if n > 0 {
        one[0] = 1;
    }
    v.push(("one segment".to_string(), one));
    v.push((
        "random lengths".to_string(),
        from_lengths(&mut || match rng.below(20) {
            0..=13 => 1 + rng.below(8) as usize,
            14..=18 => 1 + rng.below(3 * block as u64) as usize,
            _ => 1 + rng.below(20 * block as u64) as usize,
        }),
    ));
    for m in [1, 2, 3] {
        v.push((
            format!("segments of {m} blocks, aligned"),
            (0..n).map(|i| u8::from(i % (m * block) == 0)).collect(),
        ));
    }
    // Heads one after and one before every block boundary.
    let mut offsets = vec![1, block - 1];
    offsets.dedup();
    for d in offsets.into_iter().filter(|&d| d > 0 && d < block) {
        v.push((
            format!("heads at block + {d}"),
            (0..n).map(|i| u8::from(i == 0 || i % block == d)).collect(),
        ));
    }
    let mut crossing = from_lengths(&mut || {
        block * (1 + rng.below(6) as usize) + rng.below(block as u64) as usize
    });
    if n > 1 {
        // Start at an odd offset so most segments cross several blocks.
        crossing[..n.min(block / 2 + 1)].fill(0);
        crossing[0] = 1;
    }
    v.push(("crossing several blocks".to_string(), crossing));
    v
}

fn segsort_block(rng: &mut Rng, block: usize, extra: &[usize]) {
    let mut ns = vec![
        0,
        1,
        2,
        block.saturating_sub(1),
        block,
        block + 1,
        2 * block - 1,
        2 * block,
        2 * block + 1,
        5 * block + 2,
        8 * block,
        13 * block + block / 2 + 1,
    ];
    ns.extend_from_slice(extra);
    ns.sort_unstable();
    ns.dedup();
    for n in ns {
        for (lname, heads) in segment_layouts(rng, n, block) {
            // Few distinct keys: ties broken by value (values repeat too).
            let keys: Vec<u32> = (0..n).map(|_| rng.below(4) as u32).collect();
            let vals: Vec<u32> = (0..n).map(|_| rng.below(8) as u32).collect();
            segsort_case(&format!("{lname}, few keys"), &heads, &keys, &vals, block);
            let keys: Vec<u64> = random(rng, n);
            let vals: Vec<u64> = random(rng, n);
            segsort_case(&format!("{lname}, random"), &heads, &keys, &vals, block);
            let keys: Vec<u64> = (0..n).map(|i| (n - i) as u64 / 3).collect();
            let vals: Vec<u8> = random(rng, n);
            segsort_case(&format!("{lname}, descending"), &heads, &keys, &vals, block);
        }
    }
}

#[test]
fn segmented_sort_small_blocks() {
    let mut rng = Rng::new(9);
    segsort_block(&mut rng, 1, &[G + 1, 1000]);
    segsort_block(&mut rng, 2, &[333]);
    segsort_block(&mut rng, 3, &[2 * G + 1]);
    segsort_block(&mut rng, 7, &[G - 1, G + 1]);
}

#[test]
fn segmented_sort_large_blocks() {
    let mut rng = Rng::new(10);
    segsort_block(&mut rng, 64, &[G, 5 * G + 3]);
    segsort_block(&mut rng, 4096, &[G - 1, G + 1, 5 * G + 3]);
}

// -------------------------------------------------------------------- merge

fn merge_asc_case<W: Word + Gen>(what: &str, a: &[W], b: &[W]) {
    let mut want = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i] <= b[j]) {
            want.push(a[i]);
            i += 1;
        } else {
            want.push(b[j]);
            j += 1;
        }
    }
    on_pools(
        &format!(
            "merge ascending {what} u{} {}+{}",
            W::BITS,
            a.len(),
            b.len()
        ),
        &want,
        || down(Cpu.merge::<W>(&up(a), &up(b), &Order::Ascending).unwrap()),
    );
}

fn merge_asc_for<W: Word + Gen>(rng: &mut Rng) {
    let lens = [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),
        (2, 3),
        (100, 57),
        (G - 1, 1),
        (G, G + 1),
        (1, 2 * G),
        (3 * G + 1, 2 * G + 2),
        (5 * G + 3, 0),
        (0, 5 * G + 3),
    ];
    for (na, nb) in lens {
        let sorted = |rng: &mut Rng, n: usize, lo: u64, range: u64| {
            let mut v: Vec<W> = (0..n).map(|_| W::make(lo + rng.below(range))).collect();
            v.sort_unstable();
            v
        };
        let cases: Vec<(&str, Vec<W>, Vec<W>)> = vec![
            ("dups", sorted(rng, na, 0, 10), sorted(rng, nb, 0, 10)),
            (
                "wide",
                sorted(rng, na, 0, 1 << 31),
                sorted(rng, nb, 0, 1 << 31),
            ),
            (
                "a below b",
                sorted(rng, na, 0, 100),
                sorted(rng, nb, 100, 100),
            ),
            (
                "a above b",
                sorted(rng, na, 100, 100),
                sorted(rng, nb, 0, 100),
            ),
            ("equal", vec![W::make(5); na], vec![W::make(5); nb]),
            (
                "max",
                sorted(rng, na, u32::MAX as u64 - 3, 4),
                sorted(rng, nb, u32::MAX as u64 - 3, 4),
            ),
        ];
        for (name, a, b) in &cases {
            merge_asc_case(name, a, b);
        }
    }
}

#[test]
fn merge_ascending() {
    merge_asc_for::<u32>(&mut Rng::new(11));
    merge_asc_for::<u64>(&mut Rng::new(12));
}

/// Suffix array by sorting whole suffixes (a shorter suffix that is a
/// prefix of a longer one sorts first: the end is below every character).
fn brute_sa(chars: &[u32]) -> Vec<u64> {
    let mut sa: Vec<u64> = (0..chars.len() as u64).collect();
    sa.sort_by(|&i, &j| chars[i as usize..].cmp(&chars[j as usize..]));
    sa
}

fn ref_slot(layout: RankLayout, p: u64) -> u64 {
    match layout {
        RankLayout::Identity => p,
        RankLayout::Interleaved => {
            assert!(!p.is_multiple_of(3));
            2 * (p / 3) + p % 3 - 1
        }
        RankLayout::Split { n0 } => {
            if p % 3 == 1 {
                p / 3
            } else {
                assert!(p % 3 == 2);
                n0 + p / 3
            }
        }
    }
}

/// Brute-force pack, `ceil(n/32) + 1` words.
fn ref_pack(text: &[u8]) -> Vec<u64> {
    let mut w = vec![0u64; text.len().div_ceil(32) + 1];
    for (p, &c) in text.iter().enumerate() {
        w[p / 32] |= (c as u64 & 3) << (62 - 2 * (p % 32));
    }
    w
}

/// The DC3 merge of the `p % 3 == 0` suffixes with the others, for a text
/// given as characters `>= 1` (and, for DNA, its codes to pack).
fn dc3_case<W: Word + Gen>(what: &str, chars: &[u32], dna: Option<&[u8]>, sa: &[u64]) {
    let n = chars.len() as u64;
    let a: Vec<W> = conv(
        &sa.iter()
            .copied()
            .filter(|p| p % 3 == 0)
            .collect::<Vec<_>>(),
    );
    let b: Vec<W> = conv(
        &sa.iter()
            .copied()
            .filter(|p| p % 3 != 0)
            .collect::<Vec<_>>(),
    );
    let want: Vec<W> = conv(sa);
    let symbols: Vec<W> = chars.iter().map(|&c| W::make(c as u64)).collect();
    let packed = dna.map(ref_pack);
    for layout in [
        RankLayout::Interleaved,
        RankLayout::Split { n0: n.div_ceil(3) },
        RankLayout::Identity,
    ] {
        // Final ranks of the sample suffixes, 1-based (0 is past the end).
        let slots = (0..n)
            .filter(|p| p % 3 != 0)
            .map(|p| ref_slot(layout, p) + 1);
        let mut rank = vec![W::make(0); slots.max().unwrap_or(0) as usize];
        for (r, &p) in b.iter().enumerate() {
            rank[ref_slot(layout, p.to_u64()) as usize] = W::make(r as u64 + 1);
        }
        let label = format!("merge dc3 {what} u{} n={n} {layout:?}", W::BITS);
        on_pools(&format!("{label} symbols"), &want, || {
            let (bs, br) = (up(&symbols), up(&rank));
            let order = Order::Dc3 {
                text: Chars::<Cpu, W>::Symbols(&bs),
                n,
                rank: &br,
                layout,
            };
            down(Cpu.merge::<W>(&up(&a), &up(&b), &order).unwrap())
        });
        if let Some(packed) = &packed {
            on_pools(&format!("{label} packed"), &want, || {
                let (bp, br) = (up(packed), up(&rank));
                let order = Order::Dc3 {
                    text: Chars::<Cpu, W>::Packed(&bp),
                    n,
                    rank: &br,
                    layout,
                };
                down(Cpu.merge::<W>(&up(&a), &up(&b), &order).unwrap())
            });
            // Lists missing some positions of their classes: the CPU
            // backend then reads the characters from the text instead of
            // taking them from runs.
            let keep = |x: &[W], every: usize| -> Vec<W> {
                x.iter()
                    .enumerate()
                    .filter(|(i, _)| i % every != 1)
                    .map(|(_, &p)| p)
                    .collect()
            };
            let (a2, b2) = (keep(&a, 5), keep(&b, 7));
            let kept: std::collections::HashSet<u64> =
                a2.iter().chain(&b2).map(|p| p.to_u64()).collect();
            let want2: Vec<W> = want
                .iter()
                .copied()
                .filter(|p| kept.contains(&p.to_u64()))
                .collect();
            on_pools(&format!("{label} packed, partial lists"), &want2, || {
                let (bp, br) = (up(packed), up(&rank));
                let order = Order::Dc3 {
                    text: Chars::<Cpu, W>::Packed(&bp),
                    n,
                    rank: &br,
                    layout,
                };
                down(Cpu.merge::<W>(&up(&a2), &up(&b2), &order).unwrap())
            });
        }
    }
}

fn dc3_dna(what: &str, text: &[u8]) {
    let chars: Vec<u32> = text.iter().map(|&c| c as u32 + 1).collect();
    let sa = brute_sa(&chars);
    dc3_case::<u32>(what, &chars, Some(text), &sa);
    dc3_case::<u64>(what, &chars, Some(text), &sa);
}

fn random_dna(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.below(4) as u8).collect()
}

#[test]
fn merge_dc3() {
    let mut rng = Rng::new(13);
    for n in [
        1, 2, 3, 4, 5, 6, 7, 8, 10, 31, 32, 33, 100, 3000, 3001, 3002,
    ] {
        let t = random_dna(&mut rng, n);
        dc3_dna("random", &t);
    }
    dc3_dna("all A", &vec![0; 1500]);
    dc3_dna("all T", &vec![3; 1501]);
    let ac: Vec<u8> = (0..2000).map(|i| (i % 2) as u8).collect();
    dc3_dna("(AC)*", &ac);
    let acg: Vec<u8> = (0..2001).map(|i| (i % 3) as u8).collect();
    dc3_dna("(ACG)*", &acg);
    let aac: Vec<u8> = (0..2002).map(|i| u8::from(i % 3 == 2)).collect();
    dc3_dna("(AAC)*", &aac);
    let unit = random_dna(&mut rng, 499);
    let mut rep = random_dna(&mut rng, 100);
    for _ in 0..5 {
        rep.extend_from_slice(&unit);
        rep.push(rng.below(4) as u8);
    }
    dc3_dna("repeats", &rep);
    // Several merge pieces.
    dc3_dna("random, pieces", &random_dna(&mut rng, 3 * G - 5));
    dc3_dna("random, many pieces", &random_dna(&mut rng, 5 * G + 3));
    // Larger alphabets (as at deeper levels of skew).
    for (sigma, n) in [(2u64, 3000), (50, 5000), (1000, 4001), (5, 2 * G + 1)] {
        let chars: Vec<u32> = (0..n).map(|_| 1 + rng.below(sigma) as u32).collect();
        let sa = brute_sa(&chars);
        dc3_case::<u32>(&format!("sigma={sigma}"), &chars, None, &sa);
        dc3_case::<u64>(&format!("sigma={sigma}"), &chars, None, &sa);
    }
}

// ----------------------------------------------------------- sequence maps

fn iota_fill_for<W: Word + Gen>(rng: &mut Rng) {
    for n in sizes() {
        let mut starts = vec![0u64, 1, 12345];
        if W::BITS == 64 {
            starts.push(1 << 40);
        }
        for s in starts {
            let want: Vec<W> = (0..n as u64).map(|i| W::make(s + i)).collect();
            on_pools(&format!("iota From({s}) u{} n={n}", W::BITS), &want, || {
                down(Cpu.iota::<W>(n, Iota::From(s)).unwrap())
            });
        }
        let mut want = Vec::with_capacity(n);
        let mut p = 0u64;
        while want.len() < n {
            if !p.is_multiple_of(3) {
                want.push(W::make(p));
            }
            p += 1;
        }
        on_pools(
            &format!("iota Mod3NonZero u{} n={n}", W::BITS),
            &want,
            || down(Cpu.iota::<W>(n, Iota::Mod3NonZero).unwrap()),
        );
        for value in [
            W::make(0),
            W::make(7),
            W::make(u64::MAX),
            W::make(rng.next()),
        ] {
            on_pools(&format!("fill {value:?} n={n}"), &vec![value; n], || {
                down(Cpu.fill::<W>(n, value).unwrap())
            });
        }
    }
}

#[test]
fn iota_fill() {
    iota_fill_for::<u32>(&mut Rng::new(14));
    iota_fill_for::<u64>(&mut Rng::new(15));
}

// ------------------------------------------------------------- text maps

fn text_sizes() -> Vec<usize> {
    let mut v = vec![0, 1, 2, 5, 31, 32, 33, 63, 64, 65, 95, 96, 97, 100, 1000];
    v.extend([G - 1, G, G + 1, 2 * G + 1, 5 * G + 3]);
    v
}

fn texts(rng: &mut Rng, n: usize) -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("random", random_dna(rng, n)),
        ("all T", vec![3; n]),
        ("all A", vec![0; n]),
        ("ACGT", (0..n).map(|i| (i % 4) as u8).collect()),
    ]
}

#[test]
fn pack_text_and_symbols() {
    let mut rng = Rng::new(16);
    for n in text_sizes() {
        for (tname, text) in texts(&mut rng, n) {
            let want = ref_pack(&text);
            on_pools(&format!("pack_text {tname} n={n}"), &(), || {
                let got = down(Cpu.pack_text(&text).unwrap());
                assert!(
                    got.len() >= want.len(),
                    "pack_text {tname} n={n}: {} words, want at least {} (one spare word)",
                    got.len(),
                    want.len()
                );
                same(
                    &format!("pack_text {tname} n={n}"),
                    &&got[..want.len()],
                    &&want[..],
                );
                assert!(
                    got[want.len()..].iter().all(|&w| w == 0),
                    "pack_text {tname} n={n}: padding is not zero"
                );
            });
            let packed = Cpu.pack_text(&text).unwrap();
            let sym32: Vec<u32> = text.iter().map(|&c| c as u32 + 1).collect();
            on_pools(&format!("symbols u32 {tname} n={n}"), &sym32, || {
                down(Cpu.symbols::<u32>(&packed, n as u64).unwrap())
            });
            let sym64: Vec<u64> = text.iter().map(|&c| c as u64 + 1).collect();
            on_pools(&format!("symbols u64 {tname} n={n}"), &sym64, || {
                down(Cpu.symbols::<u64>(&packed, n as u64).unwrap())
            });
        }
    }
}

fn ref_text_key(text: &[u8], p: u64, k: u32) -> u64 {
    let n = text.len() as u64;
    let mut key = 0u64;
    for j in 0..k as u64 {
        let c = if p + j < n {
            text[(p + j) as usize] as u64
        } else {
            0
        };
        key = (key << 2) | c;
    }
    (key << ref_bits_for(k as u64)) | (n - p).min(k as u64)
}

fn text_keys_case<K: Word + Gen, W: Word + Gen>(
    what: &str,
    text: &[u8],
    packed: &[u64],
    pos: &[u64],
    k: u32,
) {
    let want: Vec<K> = pos
        .iter()
        .map(|&p| K::make(ref_text_key(text, p, k)))
        .collect();
    let pos: Vec<W> = conv(pos);
    on_pools(
        &format!(
            "text_keys {what} K=u{} W=u{} k={k} n={}",
            K::BITS,
            W::BITS,
            text.len()
        ),
        &want,
        || {
            down(
                Cpu.text_keys::<K, W>(&up(packed), text.len() as u64, &up(&pos), k)
                    .unwrap(),
            )
        },
    );
}

#[test]
fn text_keys() {
    let mut rng = Rng::new(17);
    for n in text_sizes() {
        if n > 2 * G + 1 {
            continue;
        }
        for (tname, text) in texts(&mut rng, n) {
            let packed = down(Cpu.pack_text(&text).unwrap());
            // Every suffix, the empty one (at n) included; then shuffled.
            let all: Vec<u64> = (0..=n as u64).collect();
            let mut shuffled = all.clone();
            rng.shuffle(&mut shuffled);
            // Near the end of the text and near 32-base word boundaries.
            let mut near: Vec<u64> = (n.saturating_sub(31) as u64..=n as u64).collect();
            for w in (0..=n as u64).step_by(32) {
                near.extend((w.saturating_sub(30)..=(w + 2).min(n as u64)).rev());
            }
            let big = n > 1000;
            for k in [1, 3, 12, 14] {
                text_keys_case::<u32, u32>(&format!("{tname} all"), &text, &packed, &all, k);
                if !big {
                    text_keys_case::<u32, u64>(&format!("{tname} near"), &text, &packed, &near, k);
                }
            }
            for k in [1, 3, 12, 27, 29] {
                text_keys_case::<u64, u64>(&format!("{tname} all"), &text, &packed, &all, k);
                if !big || tname == "random" {
                    text_keys_case::<u64, u32>(
                        &format!("{tname} shuffled"),
                        &text,
                        &packed,
                        &shuffled,
                        k,
                    );
                    text_keys_case::<u64, u64>(&format!("{tname} near"), &text, &packed, &near, k);
                }
            }
        }
    }
}

// -------------------------------------------------------------- suffix sort

/// `IN_CACHE` in cpu.rs: a suffix sort's input or bucket of at most this
/// many elements computes its keys once and radix-sorts (key, position)
/// pairs (with an MSD pass of its own from `MSD_MIN`); a larger one takes an
/// MSD pass on keys recomputed from the text, and a bucket larger than this
/// is "huge": it sorts itself the same way, with parallel passes.
const IN_CACHE: usize = 1 << 20;

/// The `text_keys` key of every position `0..=n` (the empty suffix at `n`).
fn ref_key_table(text: &[u8], k: u32) -> Vec<u64> {
    (0..=text.len() as u64)
        .map(|p| ref_text_key(text, p, k))
        .collect()
}

/// `pos` stably sorted by key: equal keys keep their input order.
fn ref_sort_by_key(table: &[u64], pos: &[u64]) -> Vec<u64> {
    let mut v = pos.to_vec();
    v.sort_by_key(|&p| table[p as usize]);
    v
}

/// Texts for the suffix sort: few distinct keys, long runs of one key, and
/// suffixes near the end that differ only in their length.
fn suffix_texts(rng: &mut Rng, n: usize) -> Vec<(&'static str, Vec<u8>)> {
    // Tandem repeats of random units, each repeat up to a third of the text,
    // with rare point mutations and short random spacers.
    let mut tandem = Vec::with_capacity(n + 400);
    while tandem.len() < n {
        let ulen = [1, 2, 3, 5, 7, 12, 29, 64, 333][rng.below(9) as usize];
        let unit = random_dna(rng, ulen);
        let len = 1 + rng.below(n as u64 / 3 + 1) as usize;
        for i in 0..len {
            tandem.push(if rng.chance(1, 2000) {
                rng.below(4) as u8
            } else {
                unit[i % ulen]
            });
        }
        let spacer = rng.below(20) as usize;
        tandem.extend(random_dna(rng, spacer));
    }
    tandem.truncate(n);
    let mut long_a = random_dna(rng, n - n / 2);
    long_a.resize(n, 0);
    let mut short_a = random_dna(rng, n.saturating_sub(40));
    short_a.resize(n, 0);
    vec![
        ("random", random_dna(rng, n)),
        ("all A", vec![0; n]),
        ("all T", vec![3; n]),
        ("(AC)*", (0..n).map(|i| (i % 2) as u8).collect()),
        ("(ACG)*", (0..n).map(|i| (i % 3) as u8).collect()),
        ("tandem repeats", tandem),
        ("ends in A^(n/2)", long_a),
        ("ends in A^40", short_a),
    ]
}

/// Head flags of the keys of `pos`: 1 at 0 and where the key changes.
fn ref_key_heads(table: &[u64], pos: &[u64]) -> Vec<u8> {
    (0..pos.len())
        .map(|i| u8::from(i == 0 || table[pos[i] as usize] != table[pos[i - 1] as usize]))
        .collect()
}

/// `sort_suffixes` must give the stably sorted positions and their head
/// flags (what `text_heads` would give for them).
fn sort_suffixes_case<W: Word + Gen>(
    what: &str,
    text: &[u8],
    packed: &[u64],
    table: &[u64],
    pos: &[u64],
    k: u32,
) {
    let sorted = ref_sort_by_key(table, pos);
    let want: (Vec<W>, Vec<u8>) = (conv(&sorted), ref_key_heads(table, &sorted));
    let pos: Vec<W> = conv(pos);
    on_pools(
        &format!(
            "sort_suffixes {what} W=u{} k={k} n={} m={}",
            W::BITS,
            text.len(),
            pos.len()
        ),
        &want,
        || {
            let mut p = up(&pos);
            let heads = Cpu
                .sort_suffixes::<W>(&up(packed), text.len() as u64, &mut p, k)
                .unwrap();
            (down(p), down(heads))
        },
    );
}

/// The three position inputs: `Iota::From(0)` (every suffix but the empty
/// one), `Iota::Mod3NonZero` (as skew and hybrid sort S12) and every suffix,
/// the empty one included, shuffled (stability against a random order).
fn suffix_positions(rng: &mut Rng, n: usize) -> [(&'static str, Vec<u64>); 3] {
    let from0: Vec<u64> = (0..n as u64).collect();
    let m = n - n.div_ceil(3);
    let mod3: Vec<u64> = (0..n as u64).filter(|p| p % 3 != 0).collect();
    assert_eq!(mod3.len(), m);
    let mut shuffled: Vec<u64> = (0..=n as u64).collect();
    rng.shuffle(&mut shuffled);
    [
        ("iota From(0)", from0),
        ("iota Mod3NonZero", mod3),
        ("shuffled", shuffled),
    ]
}

const SUFFIX_KS: [u32; 5] = [1, 3, 12, 27, 29];

#[test]
fn sort_suffixes() {
    let mut rng = Rng::new(24);
    let small = [0, 1, 2, 3, 5, 31, 32, 33, 64, 100, 1000];
    // Around 2^15 (positions, and S12 positions at n = 3 * 2^14), around
    // MSD_MIN, several pieces, and large. Inputs above IN_CACHE are in
    // `sort_suffixes_beyond_in_cache`.
    let large = [
        (1 << 15) - 1,
        1 << 15,
        (1 << 15) + 1,
        3 << 14,
        (3 << 14) + 2,
        (1 << 16) - 1,
        1 << 16,
        (1 << 16) + 1,
        5 * G + 3,
        200_000,
        300_000,
    ];
    for (si, n) in small.into_iter().chain(large).enumerate() {
        let big = n > 1000;
        for (ti, (tname, text)) in suffix_texts(&mut rng, n).into_iter().enumerate() {
            let packed = down(Cpu.pack_text(&text).unwrap());
            let positions = suffix_positions(&mut rng, n);
            for (ki, k) in SUFFIX_KS.into_iter().enumerate() {
                // Large texts: two k per text, one position input and one
                // width per k, taking turns across texts and sizes.
                let turn = ti + ki + si;
                if big && turn % 5 >= 2 {
                    continue;
                }
                let table = ref_key_table(&text, k);
                for (pi, (pname, pos)) in positions.iter().enumerate() {
                    if big && pi != (turn + si) % 3 {
                        continue;
                    }
                    let what = format!("{tname}, {pname}");
                    if !big || (ti + si) % 2 == 0 {
                        sort_suffixes_case::<u32>(&what, &text, &packed, &table, pos, k);
                    }
                    if !big || (ti + si) % 2 == 1 {
                        sort_suffixes_case::<u64>(&what, &text, &packed, &table, pos, k);
                    }
                }
            }
        }
    }
}

/// All-A texts: every key but the last `k` is equal, so each MSD pass finds
/// one bucket and recurses, down to the length bits.
#[test]
fn sort_suffixes_one_bucket() {
    for n in [(1 << 15) + 1, 200_000] {
        let text = vec![0u8; n];
        let packed = down(Cpu.pack_text(&text).unwrap());
        for k in SUFFIX_KS {
            let table = ref_key_table(&text, k);
            let pos: Vec<u64> = (0..n as u64).collect();
            sort_suffixes_case::<u32>("all A, iota From(0)", &text, &packed, &table, &pos, k);
            let rev: Vec<u64> = (0..=n as u64).rev().collect();
            sort_suffixes_case::<u64>("all A, descending", &text, &packed, &table, &rev, k);
        }
    }
}

/// Inputs above `IN_CACHE`: the MSD pass on recomputed keys, a huge bucket
/// (the run of A) that sorts itself with parallel MSD passes of several
/// buckets and then one bucket, and an all-A text whose last pass leaves one
/// huge bucket of equal keys (stability against a random order).
#[test]
fn sort_suffixes_beyond_in_cache() {
    let mut rng = Rng::new(30);
    let mut text = random_dna(&mut rng, 40_000);
    text.resize(text.len() + IN_CACHE + 20_000, 0);
    text.extend(random_dna(&mut rng, 40_000));
    let packed = down(Cpu.pack_text(&text).unwrap());
    let table = ref_key_table(&text, 27);
    let pos: Vec<u64> = (0..text.len() as u64).collect();
    sort_suffixes_case::<u32>("A run, iota From(0)", &text, &packed, &table, &pos, 27);

    let text = vec![0u8; IN_CACHE + 1000];
    let packed = down(Cpu.pack_text(&text).unwrap());
    let table = ref_key_table(&text, 29);
    let mut pos: Vec<u64> = (0..=text.len() as u64).collect();
    rng.shuffle(&mut pos);
    sort_suffixes_case::<u64>("all A, shuffled", &text, &packed, &table, &pos, 29);
}

fn text_heads_case<W: Word + Gen>(
    what: &str,
    text: &[u8],
    packed: &[u64],
    table: &[u64],
    pos: &[u64],
    k: u32,
) {
    let want = ref_key_heads(table, pos);
    let pos: Vec<W> = conv(pos);
    on_pools(
        &format!(
            "text_heads {what} W=u{} k={k} n={} m={}",
            W::BITS,
            text.len(),
            pos.len()
        ),
        &want,
        || {
            down(
                Cpu.text_heads::<W>(&up(packed), text.len() as u64, &up(&pos), k)
                    .unwrap(),
            )
        },
    );
}

#[test]
fn text_heads() {
    let mut rng = Rng::new(25);
    for n in [
        0,
        1,
        2,
        5,
        33,
        100,
        1000,
        G - 1,
        G,
        G + 1,
        2 * G + 1,
        5 * G + 3,
    ] {
        let big = n > 1000;
        for (ti, (tname, text)) in suffix_texts(&mut rng, n).into_iter().enumerate() {
            let packed = down(Cpu.pack_text(&text).unwrap());
            let [_, (_, mod3), (_, shuffled)] = suffix_positions(&mut rng, n);
            for (ki, k) in SUFFIX_KS.into_iter().enumerate() {
                if big && (ti + ki) % 3 != 0 {
                    continue;
                }
                let table = ref_key_table(&text, k);
                let sorted = ref_sort_by_key(&table, &shuffled);
                let sorted3 = ref_sort_by_key(&table, &mod3);
                let cases = [
                    ("sorted", &sorted),
                    ("sorted Mod3NonZero", &sorted3),
                    ("random", &shuffled),
                ];
                for (ci, (pname, pos)) in cases.into_iter().enumerate() {
                    let what = format!("{tname}, {pname}");
                    if !big || (ti + ci) % 2 == 0 {
                        text_heads_case::<u32>(&what, &text, &packed, &table, pos, k);
                    }
                    if !big || (ti + ci) % 2 == 1 {
                        text_heads_case::<u64>(&what, &text, &packed, &table, pos, k);
                    }
                }
            }
        }
    }
    // Heads exactly at, just before and just after the pieces' boundaries,
    // and runs of one key across them (a piece's first flag compares with the
    // last key of the piece before). In (AC)*, the suffixes at even positions
    // share one key and those at odd positions another (away from the end).
    let text: Vec<u8> = (0..4000).map(|i| (i % 2) as u8).collect();
    let packed = down(Cpu.pack_text(&text).unwrap());
    for m in [G, G + 1, 3 * G + 2] {
        let mut at = |parity: &dyn Fn(usize) -> u64| -> Vec<u64> {
            (0..m)
                .map(|i| parity(i) + 2 * rng.below(1900))
                .collect::<Vec<u64>>()
        };
        let mut layouts: Vec<(String, Vec<u64>)> = vec![
            ("one key".to_string(), at(&|_| 0)),
            ("alternating".to_string(), at(&|i| (i % 2) as u64)),
        ];
        for d in [-1i64, 0, 1] {
            let seg = move |i: usize| ((i as i64 - d).max(0) as usize / G % 2) as u64;
            layouts.push((format!("heads at pieces {d:+}"), at(&seg)));
        }
        let single = |i: usize| u64::from(i == G);
        layouts.push(("one element alone at G".to_string(), at(&single)));
        for k in SUFFIX_KS {
            let table = ref_key_table(&text, k);
            for (lname, pos) in &layouts {
                text_heads_case::<u32>(lname, &text, &packed, &table, pos, k);
                text_heads_case::<u64>(lname, &text, &packed, &table, pos, k);
            }
        }
    }
}

// ------------------------------------------------------------- rank maps

fn layouts(n: u64) -> [RankLayout; 3] {
    [
        RankLayout::Identity,
        RankLayout::Interleaved,
        RankLayout::Split { n0: n.div_ceil(3) },
    ]
}

fn in_layout(layout: RankLayout, p: u64) -> bool {
    layout == RankLayout::Identity || !p.is_multiple_of(3)
}

/// Length of a rank array that holds a slot for every position of `pos`.
fn slot_count(layout: RankLayout, pos: impl IntoIterator<Item = u64>) -> u64 {
    pos.into_iter()
        .map(|p| ref_slot(layout, p) + 1)
        .max()
        .unwrap_or(0)
}

fn rank_maps_for<W: Word + Gen>(rng: &mut Rng) {
    for n in [
        0u64,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        100,
        1001,
        G as u64 + 2,
        3 * G as u64 + 1,
    ] {
        for layout in layouts(n) {
            let size = slot_count(layout, (0..n).filter(|&p| in_layout(layout, p)));
            let rank: Vec<W> = (0..size).map(|_| W::make(1 + rng.below(n + 1))).collect();
            for h in [0u64, 1, 2, 3, 4, 7] {
                // Positions whose p + h is in the layout or at/past the end.
                let mut pos: Vec<W> = Vec::new();
                for q in h..n + 4 {
                    if q >= n || in_layout(layout, q) {
                        pos.push(W::make(q - h));
                    }
                }
                let mut shuffled = pos.clone();
                rng.shuffle(&mut shuffled);
                pos.extend(shuffled);
                let want: Vec<W> = pos
                    .iter()
                    .map(|&p| {
                        let q = p.to_u64() + h;
                        if q < n {
                            rank[ref_slot(layout, q) as usize]
                        } else {
                            W::make(0)
                        }
                    })
                    .collect();
                on_pools(
                    &format!("fetch u{} n={n} {layout:?} h={h}", W::BITS),
                    &want,
                    || down(Cpu.fetch::<W>(&up(&rank), layout, &up(&pos), h, n).unwrap()),
                );
            }
            // slots of positions in the layout (the dummy at n included).
            let mut pos: Vec<W> = (0..=n)
                .filter(|&p| in_layout(layout, p))
                .map(W::make)
                .collect();
            rng.shuffle(&mut pos);
            let want: Vec<W> = pos
                .iter()
                .map(|&p| W::make(ref_slot(layout, p.to_u64())))
                .collect();
            on_pools(
                &format!("slots u{} n={n} {layout:?}", W::BITS),
                &want,
                || down(Cpu.slots::<W>(&up(&pos), layout).unwrap()),
            );
        }
        // split_positions: inverse of the split slots.
        let n0 = n.div_ceil(3);
        let n2 = n / 3;
        let mut slots: Vec<W> = (0..n0 + n2).map(W::make).collect();
        rng.shuffle(&mut slots);
        let want: Vec<W> = slots
            .iter()
            .map(|&s| {
                let s = s.to_u64();
                W::make(if s < n0 { 3 * s + 1 } else { 3 * (s - n0) + 2 })
            })
            .collect();
        on_pools(
            &format!("split_positions u{} n={n}", W::BITS),
            &want,
            || down(Cpu.split_positions::<W>(&up(&slots), n0).unwrap()),
        );
        // Round trip through the split layout.
        let back: Vec<W> = want
            .iter()
            .map(|&p| W::make(ref_slot(RankLayout::Split { n0 }, p.to_u64())))
            .collect();
        same("split round trip", &back, &slots);
    }
    for n0 in [0u64, 1, 5, 1000] {
        let slots: Vec<W> = (0..3000).map(|_| W::make(rng.below(2 * n0 + 7))).collect();
        let want: Vec<W> = slots
            .iter()
            .map(|&s| {
                let s = s.to_u64();
                W::make(if s < n0 { 3 * s + 1 } else { 3 * (s - n0) + 2 })
            })
            .collect();
        on_pools(
            &format!("split_positions u{} n0={n0}", W::BITS),
            &want,
            || down(Cpu.split_positions::<W>(&up(&slots), n0).unwrap()),
        );
    }
    // slots of large positions.
    for layout in [
        RankLayout::Identity,
        RankLayout::Interleaved,
        RankLayout::Split { n0: 1 << 20 },
    ] {
        let pos: Vec<W> = (0..5000)
            .map(|_| {
                loop {
                    let p = rng.below(3 << 20);
                    if in_layout(layout, p) {
                        break W::make(p);
                    }
                }
            })
            .collect();
        let want: Vec<W> = pos
            .iter()
            .map(|&p| W::make(ref_slot(layout, p.to_u64())))
            .collect();
        on_pools(
            &format!("slots u{} large {layout:?}", W::BITS),
            &want,
            || down(Cpu.slots::<W>(&up(&pos), layout).unwrap()),
        );
    }
}

#[test]
fn fetch_slots_split_positions() {
    rank_maps_for::<u32>(&mut Rng::new(18));
    rank_maps_for::<u64>(&mut Rng::new(19));
}

fn triple_keys_for<K: Word + Gen, W: Word + Gen>(rng: &mut Rng) {
    for n in [
        0u64,
        1,
        2,
        3,
        4,
        7,
        100,
        1001,
        G as u64 + 2,
        3 * G as u64 + 1,
    ] {
        for bits in [1u32, 3, 10, 14, 21]
            .into_iter()
            .filter(|&b| 3 * b <= K::BITS)
        {
            let s: Vec<W> = (0..n).map(|_| W::make(rng.below(1 << bits))).collect();
            // Every position up to 3 past the end, ascending then shuffled.
            let mut pos: Vec<W> = (0..n + 3).map(W::make).collect();
            let mut shuffled = pos.clone();
            rng.shuffle(&mut shuffled);
            pos.extend(shuffled);
            let c = |q: u64| if q < n { s[q as usize].to_u64() } else { 0 };
            let want: Vec<K> = pos
                .iter()
                .map(|&p| {
                    let p = p.to_u64();
                    K::make((c(p) << (2 * bits)) | (c(p + 1) << bits) | c(p + 2))
                })
                .collect();
            on_pools(
                &format!("triple_keys u{} u{} n={n} bits={bits}", K::BITS, W::BITS),
                &want,
                || {
                    down(
                        Cpu.triple_keys::<K, W>(&up(&s), &up(&pos), n, bits)
                            .unwrap(),
                    )
                },
            );
        }
    }
}

#[test]
fn triple_keys() {
    triple_keys_for::<u64, u32>(&mut Rng::new(31));
    triple_keys_for::<u64, u64>(&mut Rng::new(32));
    triple_keys_for::<u32, u32>(&mut Rng::new(33));
    triple_keys_for::<u32, u64>(&mut Rng::new(34));
}

fn scatter_slots_for<W: Word + Gen>(rng: &mut Rng) {
    for n in [
        0u64,
        1,
        2,
        3,
        4,
        5,
        7,
        100,
        1001,
        G as u64 + 2,
        3 * G as u64 + 1,
        5 * G as u64 + 3,
    ] {
        for layout in layouts(n) {
            // Positions in the layout, the dummy at n included.
            let all: Vec<u64> = (0..=n).filter(|&p| in_layout(layout, p)).collect();
            let size = slot_count(layout, all.iter().copied());
            let mut shuffled = all.clone();
            rng.shuffle(&mut shuffled);
            let mut some: Vec<u64> = all.iter().copied().filter(|_| rng.chance(1, 3)).collect();
            rng.shuffle(&mut some);
            let cases = [
                ("ascending", &all),
                ("shuffled", &shuffled),
                ("a third, shuffled", &some),
            ];
            for (pname, pos) in cases {
                for extra in [0, 5] {
                    let src: Vec<W> = random(rng, pos.len());
                    let dst: Vec<W> = random(rng, size as usize + extra);
                    let mut want = dst.clone();
                    for (&v, &p) in src.iter().zip(pos.iter()) {
                        want[ref_slot(layout, p) as usize] = v;
                    }
                    let pos: Vec<W> = conv(pos);
                    on_pools(
                        &format!(
                            "scatter_slots {pname} u{} n={n} {layout:?} extra={extra}",
                            W::BITS
                        ),
                        &want,
                        || {
                            let mut d = up(&dst);
                            Cpu.scatter_slots::<W>(&up(&src), &up(&pos), layout, &mut d)
                                .unwrap();
                            down(d)
                        },
                    );
                }
            }
        }
    }
}

/// `rank_groups`: the CPU's fused pass against a plain loop and against the
/// same step composed of the other steps (what the CUDA backend runs).
fn rank_groups_for<W: Word + Gen>(rng: &mut Rng) {
    type Out<W> = (Vec<W>, Vec<W>, Vec<W>, Vec<W>);
    type Heads = Box<dyn Fn(&mut Rng, usize) -> bool>;
    for n in [
        0u64,
        1,
        2,
        4,
        5,
        100,
        1001,
        G as u64 + 2,
        3 * G as u64 + 1,
        5 * G as u64 + 3,
    ] {
        for layout in layouts(n) {
            let all: Vec<u64> = (0..n).filter(|&p| in_layout(layout, p)).collect();
            let size = slot_count(layout, all.iter().copied());
            let mut pos = all.clone();
            rng.shuffle(&mut pos);
            let m = pos.len();
            let density: [(&str, Heads); 5] = [
                (
                    "random",
                    Box::new(|r: &mut Rng, i| i == 0 || r.chance(1, 3)),
                ),
                ("all heads", Box::new(|_: &mut Rng, _| true)),
                ("one group", Box::new(|_: &mut Rng, i| i == 0)),
                (
                    "no head at 0",
                    Box::new(|r: &mut Rng, i| i != 0 && r.chance(1, 4)),
                ),
                (
                    "long groups",
                    Box::new(|r: &mut Rng, i| i == 0 || r.chance(1, 2 * G as u64)),
                ),
            ];
            for (hname, head) in &density {
                let heads: Vec<u8> = (0..m).map(|i| u8::from(head(rng, i))).collect();
                let isa0: Vec<W> = random(rng, size as usize);
                // The plain loop.
                let mut isa = isa0.clone();
                let (mut kp, mut ks, mut kr) = (Vec::new(), Vec::new(), Vec::new());
                let mut g = None;
                for i in 0..m {
                    if heads[i] != 0 {
                        g = Some(i as u64);
                    }
                    let r = W::make(g.map_or(0, |g| g + 1));
                    isa[ref_slot(layout, pos[i]) as usize] = r;
                    if !(heads[i] != 0 && (i + 1 == m || heads[i + 1] != 0)) {
                        kp.push(W::make(pos[i]));
                        ks.push(W::make(i as u64));
                        kr.push(r);
                    }
                }
                let want: Out<W> = (isa, kp, ks, kr);
                let pos: Vec<W> = conv(&pos);
                let label = format!("rank_groups {hname} u{} n={n} {layout:?}", W::BITS);
                on_pools(&label, &want, || {
                    let mut d = up(&isa0);
                    let (p, s, r) = Cpu
                        .rank_groups::<W>(&up(&pos), &up(&heads), layout, &mut d)
                        .unwrap();
                    (down(d), down(p), down(s), down(r))
                });
                on_pools(&format!("{label} by steps"), &want, || {
                    let mut d = up(&isa0);
                    let (p, s, r) =
                        rank_groups_by_steps(&Cpu, &up(&pos), &up(&heads), layout, &mut d).unwrap();
                    (down(d), down(p), down(s), down(r))
                });
            }
        }
    }
}

#[test]
fn rank_groups() {
    rank_groups_for::<u32>(&mut Rng::new(30));
    rank_groups_for::<u64>(&mut Rng::new(31));
}

#[test]
fn scatter_slots() {
    scatter_slots_for::<u32>(&mut Rng::new(28));
    scatter_slots_for::<u64>(&mut Rng::new(29));
}

// ------------------------------------------------------------ index maps

fn index_maps_for<W: Word + Gen>(rng: &mut Rng) {
    let mut ns = sizes();
    ns.push(9 * G + 7);
    for n in ns {
        let mut adds = vec![0u64, 1, 12345];
        if W::BITS == 64 {
            adds.push(1 << 40);
        }
        for (hname, heads) in scan_heads(rng, n) {
            for &add in &adds {
                let want: Vec<W> = heads
                    .iter()
                    .enumerate()
                    .map(|(i, &h)| W::make(if h != 0 { i as u64 + add } else { 0 }))
                    .collect();
                on_pools(
                    &format!("head_index {hname} u{} add={add} n={n}", W::BITS),
                    &want,
                    || down(Cpu.head_index::<W>(&up(&heads), add).unwrap()),
                );
            }
            let want: Vec<W> = (0..n as u64)
                .filter(|&i| heads[i as usize] != 0)
                .map(W::make)
                .collect();
            on_pools(
                &format!("compact_index {hname} u{} n={n}", W::BITS),
                &want,
                || down(Cpu.compact_index::<W>(&up(&heads)).unwrap()),
            );
        }
        for (num, den) in [(1, 2), (1, 1000), (999, 1000)] {
            let keep = flags(rng, n, num, den, true);
            let want: Vec<W> = (0..n as u64)
                .filter(|&i| keep[i as usize] != 0)
                .map(W::make)
                .collect();
            on_pools(
                &format!("compact_index {num}/{den} u{} n={n}", W::BITS),
                &want,
                || down(Cpu.compact_index::<W>(&up(&keep)).unwrap()),
            );
        }
    }
}

#[test]
fn head_index_compact_index() {
    index_maps_for::<u32>(&mut Rng::new(26));
    index_maps_for::<u64>(&mut Rng::new(27));
}

// -------------------------------------------------------- element-wise maps

fn elementwise_for<W: Word + Gen>(rng: &mut Rng) {
    let wmask = mask(W::BITS);
    for n in sizes() {
        let heads = flags(rng, n, 1, 3, true);
        let base: Vec<W> = random(rng, n);
        for add in [0u64, 1, 7, u32::MAX as u64, u64::MAX] {
            let want: Vec<W> = heads
                .iter()
                .zip(&base)
                .map(|(&h, &b)| {
                    if h != 0 {
                        W::make(b.to_u64().wrapping_add(add) & wmask)
                    } else {
                        W::make(0)
                    }
                })
                .collect();
            on_pools(
                &format!("head_values u{} add={add} n={n}", W::BITS),
                &want,
                || down(Cpu.head_values::<W>(&up(&heads), &up(&base), add).unwrap()),
            );
        }

        for wild in [false, true] {
            let f = flags(rng, n, 1, 2, wild);
            let x: Vec<W> = (0..n).map(|_| W::make(rng.bits(W::BITS - 1))).collect();
            let want: Vec<W> = x
                .iter()
                .zip(&f)
                .map(|(&v, &f)| W::make(v.to_u64() + f as u64))
                .collect();
            on_pools(&format!("add_flags u{} n={n}", W::BITS), &want, || {
                let mut b = up(&x);
                Cpu.add_flags::<W>(&mut b, &up(&f)).unwrap();
                down(b)
            });
            let want: Vec<W> = f.iter().map(|&f| W::make(f as u64)).collect();
            on_pools(&format!("widen u{} n={n}", W::BITS), &want, || {
                down(Cpu.widen::<W>(&up(&f)).unwrap())
            });
        }

        let x: Vec<W> = random(rng, n);
        for sub in [0u64, 1, 12345, 1 << 40, u64::MAX] {
            let want: Vec<W> = x
                .iter()
                .map(|&v| W::make(v.to_u64().wrapping_sub(sub) & wmask))
                .collect();
            on_pools(
                &format!("sub_const u{} sub={sub} n={n}", W::BITS),
                &want,
                || {
                    let mut b = up(&x);
                    Cpu.sub_const::<W>(&mut b, sub).unwrap();
                    down(b)
                },
            );
        }

        let small: Vec<W> = (0..n).map(|_| W::make(rng.below(40))).collect();
        for (xname, x) in [("small", &small), ("random", &x)] {
            let ranges = [
                (0, 0),
                (0, u64::MAX),
                (10, 20),
                (20, 10),
                (5, 5),
                (1, wmask),
                (wmask, wmask),
                (wmask, u64::MAX),
            ];
            for (lo, hi) in ranges {
                let want: Vec<u8> = x
                    .iter()
                    .map(|&v| u8::from(lo <= v.to_u64() && v.to_u64() <= hi))
                    .collect();
                on_pools(
                    &format!("in_range {xname} u{} [{lo}, {hi}] n={n}", W::BITS),
                    &want,
                    || down(Cpu.in_range::<W>(&up(x), lo, hi).unwrap()),
                );
            }
            for r in 0..3 {
                let want: Vec<u8> = x.iter().map(|&v| u8::from(v.to_u64() % 3 == r)).collect();
                on_pools(
                    &format!("mod3_is {xname} u{} r={r} n={n}", W::BITS),
                    &want,
                    || down(Cpu.mod3_is::<W>(&up(x), r).unwrap()),
                );
            }
        }
    }
}

#[test]
fn elementwise_maps() {
    elementwise_for::<u32>(&mut Rng::new(20));
    elementwise_for::<u64>(&mut Rng::new(21));
}

fn segment_maps_case(what: &str, heads: &[u8]) {
    let n = heads.len();
    let want: Vec<u8> = (0..n)
        .map(|i| u8::from(!(heads[i] != 0 && (i + 1 == n || heads[i + 1] != 0))))
        .collect();
    on_pools(&format!("unsorted {what} n={n}"), &want, || {
        down(Cpu.unsorted(&up(heads)).unwrap())
    });
    if n == 0 || heads[0] != 0 {
        let mut len32: Vec<u32> = vec![0; n];
        for w in segment_bounds(heads).windows(2) {
            len32[w[0]..w[1]].fill((w[1] - w[0]) as u32);
        }
        on_pools(&format!("segment_lengths u32 {what} n={n}"), &len32, || {
            down(Cpu.segment_lengths::<u32>(&up(heads)).unwrap())
        });
        let len64: Vec<u64> = len32.iter().map(|&l| l as u64).collect();
        on_pools(&format!("segment_lengths u64 {what} n={n}"), &len64, || {
            down(Cpu.segment_lengths::<u64>(&up(heads)).unwrap())
        });
    }
}

#[test]
fn segment_maps() {
    let mut rng = Rng::new(22);
    for n in sizes() {
        segment_maps_case("none", &vec![0; n]);
        segment_maps_case("all", &vec![1; n]);
        for (num, den) in [(1, 2), (1, 10), (1, 3000)] {
            let mut h = flags(&mut rng, n, num, den, true);
            segment_maps_case(&format!("random {num}/{den}"), &h);
            if n > 0 {
                h[0] = 1;
                segment_maps_case(&format!("random {num}/{den}, head at 0"), &h);
            }
        }
        let mut one = vec![0; n];
        if n > 0 {
            one[0] = 1;
            segment_maps_case("one segment", &one);
        }
        let last: Vec<u8> = (0..n).map(|i| u8::from(i == 0 || i + 1 == n)).collect();
        segment_maps_case("last alone", &last);
        for c in piece_lengths(n) {
            let h: Vec<u8> = (0..n)
                .map(|i| u8::from(i % c == 0 || i % c == c - 1))
                .collect();
            segment_maps_case(&format!("heads around pieces of {c}"), &h);
        }
    }
}

// ------------------------------------------------- repeated indices (issue 19)
//
// `scatter`, `scatter_slots` and `rank_groups` are safe functions, so a
// caller may hand them indices that repeat. The CPU backend's tasks store
// through relaxed atomic stores: tasks that write one element race, and the
// element must end up holding one of the values written to it (or its old
// value when nothing was). These tests check that outcome on pools of 1, 2,
// 3 and 8 threads with indices that repeat across pieces, so that tasks
// really write the same elements at once. Undefined behaviour itself is not
// something an ordinary test can observe: what these show is the defined
// outcome, no panic and no torn value; the soundness argument is in
// `src/sa/cpu/shared.rs`.

/// Pools of 1, 2, 3 and 8 threads (8: more tasks than pieces of a small
/// input race at once).
fn racing_pools() -> Vec<&'static rayon::ThreadPool> {
    static EIGHT: OnceLock<rayon::ThreadPool> = OnceLock::new();
    let mut v: Vec<&rayon::ThreadPool> = pools().iter().map(|(_, p)| p).collect();
    v.push(EIGHT.get_or_init(|| fmalign::thread_pool(8).expect("thread pool")));
    v
}

/// Checks that every element of `got` is one of the values written to it
/// (`writes`: (element, value) pairs), or `old`'s when none was.
#[track_caller]
fn one_of_the_writes<T: PartialEq + Debug + Copy>(
    what: &str,
    got: &[T],
    old: &[T],
    writes: impl IntoIterator<Item = (usize, T)>,
) {
    assert_eq!(got.len(), old.len(), "{what}: length changed");
    let mut written: Vec<Vec<T>> = vec![Vec::new(); got.len()];
    for (i, v) in writes {
        written[i].push(v);
    }
    for (i, (g, w)) in got.iter().zip(&written).enumerate() {
        if w.is_empty() {
            assert_eq!(
                g, &old[i],
                "{what}: element {i} was not written but changed"
            );
        } else {
            assert!(
                w.contains(g),
                "{what}: element {i} holds {g:?}, none of {w:?}"
            );
        }
    }
}

/// Index patterns of `n` indices into `m` elements that repeat: every
/// index the same, a short cycle (every piece writes the same few
/// elements), and random draws.
fn repeating_indices(rng: &mut Rng, n: usize, m: usize) -> Vec<(&'static str, Vec<u64>)> {
    vec![
        ("all one", vec![(m as u64 - 1) / 2; n]),
        (
            "cycle of 7",
            (0..n as u64).map(|i| i % 7 % m as u64).collect(),
        ),
        ("random", (0..n).map(|_| rng.below(m as u64)).collect()),
    ]
}

fn scatter_repeats_for<T: Gen, I: Word + Gen>(rng: &mut Rng) {
    for n in [2usize, 100, G + 1, 5 * G + 3] {
        for m in [1usize, 7, n] {
            for (iname, idx) in repeating_indices(rng, n, m) {
                let src: Vec<T> = random(rng, n);
                let old: Vec<T> = random(rng, m);
                let idx: Vec<I> = conv(&idx);
                let what = format!("scatter {iname} n={n} m={m}");
                for pool in racing_pools() {
                    let mut d = up(&old);
                    pool.install(|| Cpu.scatter::<T, I>(&up(&src), &up(&idx), &mut d))
                        .unwrap();
                    let writes = idx
                        .iter()
                        .map(|i| i.to_u64() as usize)
                        .zip(src.iter().copied());
                    one_of_the_writes(&what, &down(d), &old, writes);
                }
            }
        }
    }
}

#[test]
fn scatter_with_repeated_indices_keeps_one_written_value() {
    let mut rng = Rng::new(40);
    scatter_repeats_for::<u8, u32>(&mut rng);
    scatter_repeats_for::<u32, u64>(&mut rng);
    scatter_repeats_for::<u64, u32>(&mut rng);
}

/// `m` positions of the layout (those `p % 3 != 0` unless it is the
/// identity), and the rank-array length that holds them all.
fn layout_positions(layout: RankLayout, m: usize) -> (Vec<u64>, usize) {
    let all: Vec<u64> = (0..).filter(|&p| in_layout(layout, p)).take(m).collect();
    let size = slot_count(layout, all.iter().copied()) as usize;
    (all, size)
}

fn scatter_slots_repeats_for<W: Word + Gen>(rng: &mut Rng) {
    for n in [2usize, 100, G + 1, 5 * G + 3] {
        for m in [1usize, 7, n] {
            for layout in layouts(3 * m as u64) {
                let (all, size) = layout_positions(layout, m);
                for (iname, which) in repeating_indices(rng, n, m) {
                    let pos: Vec<u64> = which.iter().map(|&k| all[k as usize]).collect();
                    let src: Vec<W> = random(rng, n);
                    let old: Vec<W> = random(rng, size);
                    let what = format!("scatter_slots {iname} u{} n={n} m={m} {layout:?}", W::BITS);
                    let pos_w: Vec<W> = conv(&pos);
                    for pool in racing_pools() {
                        let mut d = up(&old);
                        pool.install(|| {
                            Cpu.scatter_slots::<W>(&up(&src), &up(&pos_w), layout, &mut d)
                        })
                        .unwrap();
                        let writes = pos
                            .iter()
                            .map(|&p| ref_slot(layout, p) as usize)
                            .zip(src.iter().copied());
                        one_of_the_writes(&what, &down(d), &old, writes);
                    }
                }
            }
        }
    }
}

#[test]
fn scatter_slots_with_repeated_positions_keeps_one_written_value() {
    let mut rng = Rng::new(41);
    scatter_slots_repeats_for::<u32>(&mut rng);
    scatter_slots_repeats_for::<u64>(&mut rng);
}

fn rank_groups_repeats_for<W: Word + Gen>(rng: &mut Rng) {
    for n in [2usize, 100, G + 1, 5 * G + 3] {
        for m in [1usize, 7, n] {
            for layout in layouts(3 * m as u64) {
                let (all, size) = layout_positions(layout, m);
                for (iname, which) in repeating_indices(rng, n, m) {
                    let pos: Vec<u64> = which.iter().map(|&k| all[k as usize]).collect();
                    let heads: Vec<u8> = (0..n)
                        .map(|i| u8::from(i == 0 || rng.chance(1, 3)))
                        .collect();
                    let old: Vec<W> = random(rng, size);
                    // Each element's rank, and the kept elements: these do
                    // not depend on the race.
                    let (mut ranks, mut kept) = (Vec::new(), (Vec::new(), Vec::new(), Vec::new()));
                    let mut g = None;
                    for i in 0..n {
                        if heads[i] != 0 {
                            g = Some(i as u64);
                        }
                        let r = W::make(g.map_or(0, |g| g + 1));
                        ranks.push(r);
                        if !(heads[i] != 0 && (i + 1 == n || heads[i + 1] != 0)) {
                            kept.0.push(W::make(pos[i]));
                            kept.1.push(W::make(i as u64));
                            kept.2.push(r);
                        }
                    }
                    let what = format!("rank_groups {iname} u{} n={n} m={m} {layout:?}", W::BITS);
                    let pos_w: Vec<W> = conv(&pos);
                    for pool in racing_pools() {
                        let mut d = up(&old);
                        let (p, s, r) = pool
                            .install(|| {
                                Cpu.rank_groups::<W>(&up(&pos_w), &up(&heads), layout, &mut d)
                            })
                            .unwrap();
                        same(&what, &(down(p), down(s), down(r)), &kept);
                        let writes = pos
                            .iter()
                            .map(|&p| ref_slot(layout, p) as usize)
                            .zip(ranks.iter().copied());
                        one_of_the_writes(&what, &down(d), &old, writes);
                    }
                }
            }
        }
    }
}

#[test]
fn rank_groups_with_repeated_positions_keeps_one_written_rank() {
    let mut rng = Rng::new(42);
    rank_groups_repeats_for::<u32>(&mut rng);
    rank_groups_repeats_for::<u64>(&mut rng);
}
