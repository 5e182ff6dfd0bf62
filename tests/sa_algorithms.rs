//! The data-parallel suffix-array constructions (`--sa hybrid|skew|ls`)
//! against libsais, the brute-force sort (`sa::naive`) and a linear-time
//! checker written here (a permutation whose neighbours are ordered by
//! `(c[p], ISA[p + 1])` is the suffix array):
//!
//! * random texts over 1 to 4 symbols (plain and with built-in repeats), in
//!   32- and 64-bit positions, with 1 and 2 threads;
//! * the texts prefix doubling and recursion find hardest: one symbol,
//!   short periods, Fibonacci words, tandem repeats with a few mutations,
//!   long runs at the end, every length mod 3, lengths at the segmented-sort
//!   block (4096) and the CPU backend's work piece (16384), groups above the
//!   ls radix threshold (65536);
//! * whole indexes (N runs, IUPAC codes, >1000 tiny contigs, 32- and 64-bit)
//!   built in memory and written to files: every `--sa` gives the same
//!   sections and the same bytes;
//! * the binary on the real genomes of `../shared/data`: identical `.fmi`
//!   files for every `--sa` and for `-t 1` and `-t 2`, and `--stats` lines
//!   that end sorted and double `h` every round.

mod common;

use std::path::{Path, PathBuf};

use common::{Rng, run_ok};
use fmalign::device::Device;
use fmalign::index::{Index, IndexConfig, build_and_write, build_in_memory};
use fmalign::reference::Reference;
use fmalign::sa::hybrid::Tied;
use fmalign::sa::{self, Round, SaAlgorithm};
use fmalign::scan::read_fasta_from;
use proptest::prelude::*;

const PARALLEL: [SaAlgorithm; 3] = [SaAlgorithm::Hybrid, SaAlgorithm::Skew, SaAlgorithm::Ls];
/// The devices to build on: the CPU, and the GPU when this machine has one
/// (printed, so a run without one says so).
fn devices() -> Vec<Device> {
    match fmalign::gpu::probe().why_not() {
        None => vec![Device::Cpu, Device::Gpu],
        Some(why) => {
            use std::io::Write;
            static ONCE: std::sync::Once = std::sync::Once::new();
            // Past libtest's capture, so the skip is seen (once per run).
            ONCE.call_once(|| {
                let _ = writeln!(std::io::stderr().lock(), "SKIPPED GPU index builds: {why}");
            });
            vec![Device::Cpu]
        }
    }
}

const ALL: [SaAlgorithm; 5] = [
    SaAlgorithm::Auto,
    SaAlgorithm::Libsais,
    SaAlgorithm::Hybrid,
    SaAlgorithm::Skew,
    SaAlgorithm::Ls,
];

/// Texts up to this length are also checked against the brute-force sort.
const NAIVE_MAX: usize = 6000;

// ---------------------------------------------------------------------------
// Oracles
// ---------------------------------------------------------------------------

fn sa32(text: &[u8], algo: SaAlgorithm, threads: usize) -> Vec<u64> {
    sa::suffix_array::<u32>(text, algo, threads)
        .unwrap_or_else(|e| panic!("{algo:?} (u32, -t {threads}) failed: {e}"))
        .as_slice()
        .iter()
        .map(|&x| u64::from(x))
        .collect()
}

fn sa64(text: &[u8], algo: SaAlgorithm, threads: usize) -> Vec<u64> {
    sa::suffix_array::<u64>(text, algo, threads)
        .unwrap_or_else(|e| panic!("{algo:?} (u64, -t {threads}) failed: {e}"))
        .as_slice()
        .to_vec()
}

/// Whether `sa` is the suffix array of `text` (the end of the text sorts
/// first), in linear time: `sa` is a permutation of `0..n`, and for every
/// neighbouring pair `a, b`, `c[a] < c[b]`, or `c[a] == c[b]` and the suffix
/// at `a + 1` comes before the one at `b + 1`.
fn verify_sa(text: &[u8], sa: &[u64]) -> Result<(), String> {
    let n = text.len();
    if sa.len() != n {
        return Err(format!("{} entries for a text of {n}", sa.len()));
    }
    // isa[n] = 0: the empty suffix; isa[p] = row + 1.
    let mut isa = vec![usize::MAX; n + 1];
    isa[n] = 0;
    for (row, &p) in sa.iter().enumerate() {
        let p = p as usize;
        if p >= n || isa[p] != usize::MAX {
            return Err(format!("row {row}: {p} out of range or repeated"));
        }
        isa[p] = row + 1;
    }
    for (row, w) in sa.windows(2).enumerate() {
        let (a, b) = (w[0] as usize, w[1] as usize);
        if !(text[a] < text[b] || text[a] == text[b] && isa[a + 1] < isa[b + 1]) {
            return Err(format!("rows {row} and {}: {a} before {b}", row + 1));
        }
    }
    Ok(())
}

fn describe(text: &[u8]) -> String {
    let shown: String = text
        .iter()
        .take(80)
        .map(|&c| char::from(b"ACGT"[c as usize]))
        .collect();
    let more = if text.len() > 80 { "..." } else { "" };
    format!(
        "n = {} ({} mod 3), text {shown}{more}",
        text.len(),
        text.len() % 3
    )
}

fn first_difference(got: &[u64], want: &[u64]) -> String {
    if got.len() != want.len() {
        return format!("{} entries, expected {}", got.len(), want.len());
    }
    let i = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
    let lo = i.saturating_sub(2);
    let hi = (i + 3).min(got.len());
    format!(
        "first difference at row {i}: got {:?}, expected {:?} (rows {lo}..{hi})",
        &got[lo..hi],
        &want[lo..hi]
    )
}

/// libsais (32 and 64 bits) is the suffix array (checked in linear time,
/// and by brute force when `naive`), and hybrid, skew and ls give exactly it
/// in 32 and 64 bits with 1 and 2 threads.
fn check_text(text: &[u8], what: &str, naive: bool) {
    let want = sa32(text, SaAlgorithm::Libsais, 1);
    if let Err(e) = verify_sa(text, &want) {
        panic!(
            "{what}: libsais is not the suffix array: {e}; {}",
            describe(text)
        );
    }
    let wide = sa64(text, SaAlgorithm::Libsais, 1);
    assert!(
        wide == want,
        "{what}: libsais u64 differs from u32: {}",
        first_difference(&wide, &want)
    );
    if naive {
        let brute = sa::naive(text);
        assert!(
            brute == want,
            "{what}: brute force differs from libsais: {}; {}",
            first_difference(&brute, &want),
            describe(text)
        );
    }
    // Long texts skip 64 bits with 1 thread (the same generic code as 32
    // bits, and work pieces do not depend on the thread count below 65,536).
    let wide_one_thread = text.len() <= NAIVE_MAX;
    for algo in PARALLEL {
        for (bits, threads) in [(32, 1), (32, 2), (64, 1), (64, 2)] {
            if bits == 64 && threads == 1 && !wide_one_thread {
                continue;
            }
            let got = if bits == 32 {
                sa32(text, algo, threads)
            } else {
                sa64(text, algo, threads)
            };
            assert!(
                got == want,
                "{what}: {algo:?} (u{bits}, {threads} threads) differs from libsais: {}; {}",
                first_difference(&got, &want),
                describe(text)
            );
        }
    }
}

fn check(text: &[u8], what: &str) {
    check_text(text, what, text.len() <= NAIVE_MAX);
}

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

fn random_text(rng: &mut Rng, len: usize, sigma: u64) -> Vec<u8> {
    (0..len).map(|_| rng.below(sigma) as u8).collect()
}

/// `unit` repeated to `len` symbols.
fn periodic(unit: &[u8], len: usize) -> Vec<u8> {
    unit.iter().copied().cycle().take(len).collect()
}

/// The first `len` symbols of the infinite Fibonacci word over {a, b}
/// (S1 = a, S2 = ab, S(k) = S(k-1) S(k-2)).
fn fibonacci_word(len: usize, a: u8, b: u8) -> Vec<u8> {
    let (mut prev, mut cur) = (vec![a], vec![a, b]);
    while cur.len() < len {
        let next = [&cur[..], &prev[..]].concat();
        prev = std::mem::replace(&mut cur, next);
    }
    cur.truncate(len);
    cur
}

/// `count` substitutions at random places (each to a different symbol).
fn mutate(rng: &mut Rng, text: &mut [u8], count: usize) {
    if text.is_empty() {
        return;
    }
    for _ in 0..count {
        let p = rng.below(text.len() as u64) as usize;
        text[p] = (text[p] + 1 + rng.below(3) as u8) % 4;
    }
}

/// A text with built-in repeats, from a seed (for the second proptest).
fn structured(kind: u8, sigma: u8, len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let sigma = u64::from(sigma);
    match kind {
        // A tandem repeat of a short unit with a few mutations.
        0 => {
            let unit_len = rng.range(1, 64) as usize;
            let unit = random_text(&mut rng, unit_len, sigma);
            let mut t = periodic(&unit, len);
            let m = rng.below(4) as usize;
            mutate(&mut rng, &mut t, m);
            t
        }
        // Random, then a run of one symbol to the end.
        1 => {
            let head = rng.below(len as u64 + 1) as usize;
            let mut t = random_text(&mut rng, head, sigma);
            let c = rng.below(sigma) as u8;
            t.resize(len, c);
            t
        }
        // A run of one symbol, then random.
        2 => {
            let run = rng.below(len as u64 + 1) as usize;
            let c = rng.below(sigma) as u8;
            let mut t = vec![c; run];
            t.extend(random_text(&mut rng, len - run, sigma));
            t
        }
        // X, a little junk, X again, cut to `len`.
        3 => {
            let x = random_text(&mut rng, len / 2 + 1, sigma);
            let junk = rng.below(5) as usize;
            let mut t = x.clone();
            t.extend(random_text(&mut rng, junk, sigma));
            t.extend(&x);
            t.truncate(len);
            t
        }
        // Blocks drawn from a pool of three.
        _ => {
            let pool: Vec<Vec<u8>> = (0..3)
                .map(|_| {
                    let l = rng.range(1, 300) as usize;
                    random_text(&mut rng, l, sigma)
                })
                .collect();
            let mut t = Vec::with_capacity(len + 300);
            while t.len() < len {
                t.extend(rng.pick(&pool));
            }
            t.truncate(len);
            t
        }
    }
}

// ---------------------------------------------------------------------------
// 1. Random texts
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 150,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_texts(text in proptest::collection::vec(0u8..4, 0..=5000), sigma in 1u8..=4) {
        let text: Vec<u8> = text.into_iter().map(|c| c % sigma).collect();
        check_text(&text, "random text", true);
    }

    #[test]
    fn random_texts_with_repeats(
        kind in 0u8..5,
        sigma in 1u8..=4,
        len in 0usize..=5000,
        seed in any::<u64>(),
    ) {
        let text = structured(kind, sigma, len, seed);
        check_text(&text, &format!("structured kind {kind}, seed {seed}"), true);
    }
}

/// Every text of up to 7 symbols over {0, 1} and up to 4 over {0..3}: the
/// short ends (n = 2, 3, 4 and the skew dummy) exhaustively.
#[test]
fn all_short_texts() {
    for (sigma, max) in [(2u64, 7u32), (4, 4)] {
        for len in 0..=max {
            for code in 0..sigma.pow(len) {
                let text: Vec<u8> = (0..len)
                    .map(|i| (code / sigma.pow(i) % sigma) as u8)
                    .collect();
                check_text(&text, "short text", true);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// 2. Hard texts
// ---------------------------------------------------------------------------

/// Lengths at and around `k * 4096` (segmented-sort block) and `k * 16384`
/// (CPU work piece).
fn boundary_lengths(max: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..=40).collect();
    for base in [4096, 16384] {
        for k in 1..=max / base + 1 {
            for d in -2i64..=2 {
                let l = (k * base) as i64 + d;
                if (0..=max as i64).contains(&l) {
                    v.push(l as usize);
                }
            }
        }
    }
    // 27 and 29 (hybrid and ls key lengths) times powers of two, +-1.
    for key in [27usize, 29] {
        let mut h = key;
        while h <= max {
            v.extend([h - 1, h, h + 1]);
            h *= 2;
        }
    }
    v.extend([max - 1, max]);
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn one_symbol() {
    for len in boundary_lengths(20_002) {
        for c in [0u8, 3] {
            check(&vec![c; len], &format!("{len} x {c}"));
        }
    }
}

/// Groups larger than ls's medium class (65,536 suffixes), sorted by the
/// global radix path: one such group, and two at once (which only the
/// second, stable pass by group keeps apart); texts larger than the radix
/// sort's MSD threshold.
#[test]
fn long_runs_above_the_radix_threshold() {
    for len in [65_536 + 29, 70_001] {
        check(&vec![0u8; len], &format!("{len} x A"));
    }
    check(&vec![2u8; 100_002], "100002 x G");
    for (a, b) in [(0u8, 1u8), (3, 0)] {
        let mut text = vec![a; 70_000];
        text.resize(140_001, b);
        check(&text, &format!("70000 x {a}, 70001 x {b}"));
    }
}

#[test]
fn periodic_texts() {
    let mut rng = Rng::new(17);
    for period in 1..=17usize {
        // A unit with all four symbols where it can, and a two-symbol one.
        let mut unit4 = random_text(&mut rng, period, 4);
        if period >= 4 {
            unit4[..4].copy_from_slice(&[3, 0, 2, 1]);
        }
        let unit2 = random_text(&mut rng, period, 2);
        for len in [
            period,
            2 * period + 1,
            999,
            1000,
            1001,
            4095,
            4096,
            4097,
            16383,
            16384,
            16385,
            20_000,
        ] {
            check(
                &periodic(&unit4, len),
                &format!("period {period} {unit4:?}, n = {len}"),
            );
        }
        for len in [3000, 3001, 3002, 16384] {
            check(
                &periodic(&unit2, len),
                &format!("period {period} {unit2:?}, n = {len}"),
            );
        }
    }
}

#[test]
fn fibonacci_words() {
    let mut fib = vec![1usize, 2];
    while fib[fib.len() - 1] + fib[fib.len() - 2] <= 30_000 {
        fib.push(fib[fib.len() - 1] + fib[fib.len() - 2]);
    }
    for &f in &fib {
        for len in [f - 1, f, f + 1] {
            for (a, b) in [(0u8, 1u8), (3, 0)] {
                check(
                    &fibonacci_word(len, a, b),
                    &format!("Fibonacci word ({a}, {b}) of length {len}"),
                );
            }
        }
    }
}

#[test]
fn tandem_repeats_with_mutations() {
    let mut rng = Rng::new(2024);
    for unit_len in [
        1usize, 2, 3, 7, 26, 27, 28, 29, 30, 54, 100, 1000, 4096, 5000,
    ] {
        for (k, mutations) in [0usize, 1, 3, 12].into_iter().enumerate() {
            let unit = random_text(&mut rng, unit_len, 4);
            let len = 20_000 + k % 3;
            let mut text = periodic(&unit, len);
            mutate(&mut rng, &mut text, mutations);
            check(
                &text,
                &format!("tandem repeat of {unit_len}, {mutations} mutations, n = {len}"),
            );
        }
    }
    // A random stretch, then copies of one block, then random again.
    let block = random_text(&mut rng, 777, 4);
    let mut text = random_text(&mut rng, 3000, 4);
    for _ in 0..20 {
        text.extend(&block);
    }
    text.extend(random_text(&mut rng, 3001, 4));
    mutate(&mut rng, &mut text, 5);
    check(&text, "copies of a block between random stretches");
}

#[test]
fn texts_ending_in_repeats() {
    let mut rng = Rng::new(3);
    for head in [0usize, 1, 2, 100, 5000] {
        for run in [1usize, 2, 3, 26, 27, 28, 29, 30, 1000, 4096, 4097, 10_000] {
            for c in [0u8, 3] {
                let mut text = random_text(&mut rng, head, 4);
                text.resize(head + run, c);
                check(&text, &format!("{head} random, then {run} x {c}"));
            }
        }
    }
    for len in [3000usize, 3001, 3002, 15_000, 15_001, 15_002] {
        // The end repeats the start, the whole text is X X, X X X[..k].
        let x = random_text(&mut rng, len / 2, 4);
        let mut text = x.clone();
        text.extend(&x);
        text.extend(&x[..len % 3 + 5]);
        check(&text, &format!("X X X[..k], n = {}", text.len()));
        let mut text = random_text(&mut rng, len, 4);
        let tail = text[..64].to_vec();
        text.extend(&tail);
        check(
            &text,
            &format!("ending in its own first 64, n = {}", text.len()),
        );
        // Runs of A both at the start and at the end.
        let mut text = vec![0u8; 1000];
        text.extend(random_text(&mut rng, len - 2000, 4));
        text.resize(len, 0);
        check(&text, &format!("A runs at both ends, n = {len}"));
    }
}

/// Larger random texts: several work pieces per pass (the pieces differ
/// between 1 and 2 threads), radix sorts above the MSD threshold.
#[test]
fn large_random_texts() {
    let mut rng = Rng::new(99);
    for (len, sigma) in [(200_003usize, 4u64), (100_001, 2), (70_000, 4)] {
        let mut text = random_text(&mut rng, len, sigma);
        // A few long repeats inside.
        for _ in 0..4 {
            let (from, to, l) = (
                rng.below(len as u64 / 2) as usize,
                rng.below(len as u64 / 2) as usize + len / 2 - 5000,
                rng.range(100, 5000) as usize,
            );
            let copy = text[from..from + l].to_vec();
            text[to..to + l].copy_from_slice(&copy);
        }
        check(
            &text,
            &format!("random, sigma {sigma}, with copies, n = {len}"),
        );
    }
}

// ---------------------------------------------------------------------------
// --stats rounds
// ---------------------------------------------------------------------------

/// One `--stats` line.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    algorithm: String,
    round: u32,
    stage: String,
    h: u64,
    unsorted: u64,
    groups: u64,
}

impl From<&Round> for Row {
    fn from(r: &Round) -> Row {
        Row {
            algorithm: r.algorithm.to_string(),
            round: r.round,
            stage: r.stage.to_string(),
            h: r.h,
            unsorted: r.unsorted,
            groups: r.groups,
        }
    }
}

/// The `--stats` lines of stderr: exactly one header, before every row.
fn parse_stats(stderr: &str) -> Vec<Row> {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("#sa\t") || l.starts_with("sa\t"))
        .collect();
    assert_eq!(
        lines.first().copied(),
        Some(Round::TSV_HEADER),
        "stderr:\n{stderr}"
    );
    assert_eq!(
        Round::TSV_HEADER,
        "#sa\talgorithm\tround\tstage\th\tunsorted\tgroups\tseconds"
    );
    lines[1..]
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 8, "{l}");
            assert_eq!(f[0], "sa", "{l}");
            let seconds: f64 = f[7].parse().unwrap_or_else(|_| panic!("{l}"));
            assert!(seconds >= 0.0, "{l}");
            let num = |s: &str| -> u64 { s.parse().unwrap_or_else(|_| panic!("{l}")) };
            Row {
                algorithm: f[1].into(),
                round: num(f[2]) as u32,
                stage: f[3].into(),
                h: num(f[4]),
                unsorted: num(f[5]),
                groups: num(f[6]),
            }
        })
        .collect()
}

/// The rounds of `algo` on a text of `n` bases make sense: for hybrid and
/// ls, round 0 sorts by the first 27 / 29 characters, every later round
/// doubles `h`, only the last leaves nothing unsorted, and no round leaves a
/// suffix unsorted after comparing `h >= n` characters; hybrid then merges.
/// When hybrid's doubling stalls (`hybrid::stalled`), the rounds after the
/// stalled one are skew's levels on the reduced string of S12
/// ([`check_skew_levels`]), numbered from the next round on, and the merge
/// follows. For skew, every level hands `n02 = ceil(n/3) + floor(n/3)`
/// names down until the triples are all distinct, then merges back up.
fn check_rounds(rows: &[Row], algo: SaAlgorithm, n: u64) {
    let ctx = || format!("{algo:?}, n = {n}: {rows:#?}");
    let name = match algo {
        SaAlgorithm::Hybrid => "hybrid",
        SaAlgorithm::Skew => "skew",
        SaAlgorithm::Ls => "ls",
        _ => {
            assert!(rows.is_empty(), "{}", ctx());
            return;
        }
    };
    if n <= 1 {
        assert!(rows.is_empty(), "{}", ctx());
        return;
    }
    assert!(rows.iter().all(|r| r.algorithm == name), "{}", ctx());
    if algo == SaAlgorithm::Skew {
        let end = check_skew_levels(rows, n, |d| 3u64.pow(d + 1), &ctx);
        assert_eq!(end, rows.len(), "{}", ctx());
        return;
    }
    let (key, sample, merge) = if algo == SaAlgorithm::Hybrid {
        (27, n - n.div_ceil(3), true)
    } else {
        (29, n, false)
    };
    let prefix = rows
        .iter()
        .take_while(|r| r.stage == "sort" || r.stage == "double")
        .count();
    let doubling = &rows[..prefix];
    assert!(!doubling.is_empty(), "{}", ctx());
    let last = doubling.last().unwrap();
    // Hybrid only: the doubling handed over to the recursion.
    let switched = last.unsorted > 0;
    assert!(!switched || merge, "{}", ctx());
    for (i, r) in doubling.iter().enumerate() {
        let stage = if i == 0 { "sort" } else { "double" };
        assert_eq!(
            (r.stage.as_str(), r.round, r.h),
            (stage, i as u32, key << i),
            "{}",
            ctx()
        );
        let before = if i == 0 {
            sample
        } else {
            doubling[i - 1].unsorted
        };
        assert!(r.unsorted <= before, "{}", ctx());
        // What the rounds up to this one left, as the hybrid judges them.
        let tied: Vec<Tied> = doubling[..=i]
            .iter()
            .map(|r| Tied {
                unsorted: r.unsorted,
                groups: r.groups,
            })
            .collect();
        if i + 1 == doubling.len() {
            if switched {
                assert!(
                    fmalign::sa::hybrid::switch_now(sample, &tied),
                    "switched before stalling: {}",
                    ctx()
                );
            } else {
                assert_eq!((r.unsorted, r.groups), (0, 0), "last round: {}", ctx());
            }
            continue;
        }
        assert!(r.unsorted > 0, "{}", ctx());
        assert!(
            r.h < n,
            "unsorted suffixes after {} >= n chars: {}",
            r.h,
            ctx()
        );
        assert!(r.groups > 0 && 2 * r.groups <= r.unsorted, "{}", ctx());
        if merge {
            assert!(
                !fmalign::sa::hybrid::switch_now(sample, &tied),
                "stalled without switching: {}",
                ctx()
            );
        }
    }
    let mut end = prefix;
    if switched {
        // Skew on the reduced string of the sample's names, each spanning
        // h characters, 3 apart: all of S12 after the first sort; after a
        // round, all of S12 or, when at most a quarter of it is tied, only
        // the suffixes still tied and the chains that spell them (at least
        // the tied ones, at most twice as many).
        let (h, round) = (last.h, prefix as u32);
        let skew_rows: Vec<Row> = rows[prefix..]
            .iter()
            .map(|r| Row {
                round: r.round - round,
                ..r.clone()
            })
            .collect();
        let n02 = skew_rows
            .first()
            .unwrap_or_else(|| panic!("{}", ctx()))
            .unsorted;
        let input = if n02 == sample.div_ceil(3) + sample / 3 {
            sample
        } else {
            assert!(prefix > 1, "part of S12 after the first sort: {}", ctx());
            // The shortest string of n02 = ceil(l / 3) + floor(l / 3).
            let l = 3 * (n02 / 2) + n02 % 2;
            assert!(
                l + 1 >= last.unsorted && l <= 2 * last.unsorted && 4 * last.unsorted <= sample,
                "a partial string of {l} names for {} tied suffixes: {}",
                last.unsorted,
                ctx()
            );
            l
        };
        end += check_skew_levels(&skew_rows, input, |d| h + 3 * (3u64.pow(d + 1) - 1), &ctx);
    }
    if merge {
        assert_eq!(end + 1, rows.len(), "{}", ctx());
        let m = rows.last().unwrap();
        assert_eq!(
            (m.stage.as_str(), m.round, m.h, m.unsorted, m.groups),
            ("merge", doubling.len() as u32, last.h, 0, 0),
            "{}",
            ctx()
        );
    } else {
        assert_eq!(end, rows.len(), "{}", ctx());
    }
}

/// Skew's rows from the level of a string of `n` symbols: every
/// level hands `n02 = ceil(n/3) + floor(n/3)` names down until the triples
/// are all distinct, then merges back up; `h(d)` is the characters a triple
/// of level `d` spans. Returns the number of rows read.
fn check_skew_levels(
    rows: &[Row],
    n: u64,
    h: impl Fn(u32) -> u64,
    ctx: &dyn Fn() -> String,
) -> usize {
    let mut level_n = n;
    let mut depth = 0;
    loop {
        let r = rows
            .get(depth as usize)
            .unwrap_or_else(|| panic!("{}", ctx()));
        let n02 = level_n.div_ceil(3) + level_n / 3;
        assert_eq!((r.round, r.h), (depth, h(depth)), "{}", ctx());
        if r.stage == "unique" {
            assert_eq!((r.unsorted, r.groups), (0, n02), "{}", ctx());
            break;
        }
        assert_eq!(r.stage, "recurse", "{}", ctx());
        assert_eq!(r.unsorted, n02, "{}", ctx());
        assert!(r.groups < n02 && r.groups > 0, "{}", ctx());
        level_n = n02;
        depth += 1;
    }
    let merges = &rows[depth as usize + 1..];
    assert!(merges.len() > depth as usize, "{}", ctx());
    for (r, d) in merges.iter().zip((0..=depth).rev()) {
        assert_eq!(
            (r.stage.as_str(), r.round, r.h, r.unsorted, r.groups),
            ("merge", d, h(d), 0, 0),
            "{}",
            ctx()
        );
    }
    2 * (depth as usize + 1)
}

/// `suffix_array_with` reports sensible rounds on texts that need many of them.
#[test]
fn rounds_reported_by_suffix_array_with() {
    let mut rng = Rng::new(8);
    let mut texts: Vec<Vec<u8>> = vec![
        vec![0; 2],
        vec![1; 3],
        vec![0; 20_000],
        periodic(&[0, 1, 2], 10_001),
        fibonacci_word(17_711, 0, 1),
        random_text(&mut rng, 5000, 4),
        random_text(&mut rng, 5, 4),
    ];
    let block = random_text(&mut rng, 300, 4);
    texts.push(periodic(&block, 9000));
    // Satellite arrays inside random sequence: the doubling stalls over
    // the arrays' suffixes after a round, and only they are recursed on.
    let satellites = texts.len();
    for (unit, array) in [(50, 1500), (7, 1200), (171, 2000)] {
        let mut text = random_text(&mut rng, 6000, 4);
        text.extend(periodic(&random_text(&mut rng, unit, 4), array));
        text.extend(random_text(&mut rng, 2000, 4));
        texts.push(text);
    }
    for (t, text) in texts.iter().enumerate() {
        for algo in ALL {
            let mut rows = Vec::new();
            let sa = sa::suffix_array_with::<u32>(text, algo, 2, &mut |r| rows.push(Row::from(r)))
                .unwrap();
            let got: Vec<u64> = sa.as_slice().iter().map(|&x| u64::from(x)).collect();
            verify_sa(text, &got).unwrap();
            check_rounds(&rows, algo, text.len() as u64);
            if algo == SaAlgorithm::Hybrid && t >= satellites {
                // The recursion sorted the arrays' suffixes, not all of S12.
                let n = text.len() as u64;
                let m = n - n.div_ceil(3);
                let first = rows.iter().find(|r| r.stage == "recurse").unwrap();
                assert!(first.unsorted < m / 2, "{rows:#?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// 3. Whole indexes
// ---------------------------------------------------------------------------

fn reference(fasta: &[u8]) -> Reference {
    read_fasta_from(fasta, Path::new("gen.fa")).expect("valid FASTA")
}

fn fasta_of(contigs: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, seq) in contigs {
        out.extend_from_slice(format!(">{name} generated\n").as_bytes());
        for line in seq.chunks(61) {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
    out
}

fn acgt(text: &[u8]) -> Vec<u8> {
    text.iter().map(|&c| b"ACGT"[c as usize]).collect()
}

/// Contigs with N runs at the start, middle and end, IUPAC codes, lower
/// case, an all-N contig, duplicated contigs and a tandem repeat.
fn holes_reference() -> Vec<u8> {
    let mut rng = Rng::new(11);
    let mut contigs = Vec::new();
    let random = acgt(&random_text(&mut rng, 3000, 4));
    let mut c1 = vec![b'N'; 100];
    c1.extend(&random[..1500]);
    c1.extend(b"RYKMSWBDHVNNNNrykmswbdhvn");
    c1.extend(random[1500..].to_ascii_lowercase());
    c1.extend(vec![b'N'; 77]);
    contigs.push(("start_middle_end".to_string(), c1));
    contigs.push(("all_n".to_string(), vec![b'N'; 500]));
    contigs.push(("copy".to_string(), random.clone()));
    let unit = acgt(&random_text(&mut rng, 37, 4));
    let mut tandem = periodic(&unit, 9000);
    tandem[4500..4600].fill(b'N');
    tandem[100] = b'R';
    contigs.push(("tandem".to_string(), tandem));
    let mut sparse = periodic(b"ACGT", 4000);
    for p in (0..4000).step_by(50) {
        sparse[p] = b'N';
    }
    contigs.push(("sparse_n".to_string(), sparse));
    let mut runs = vec![b'A'; 5000];
    runs[2500..2510].fill(b'N');
    contigs.push(("a_run".to_string(), runs));
    contigs.push(("one".to_string(), b"N".to_vec()));
    contigs.push(("last".to_string(), b"NNNNACGTNNNN".to_vec()));
    fasta_of(&contigs)
}

/// 1,200 tiny contigs drawn from a small pool (so the text repeats),
/// some with N.
fn many_contigs_reference() -> Vec<u8> {
    let mut rng = Rng::new(1200);
    let pool: Vec<Vec<u8>> = (0..6)
        .map(|_| {
            let l = rng.range(1, 25) as usize;
            acgt(&random_text(&mut rng, l, 4))
        })
        .collect();
    let contigs: Vec<(String, Vec<u8>)> = (0..1200)
        .map(|k| {
            let mut s = rng.pick(&pool).clone();
            if rng.chance(1, 6) {
                let p = rng.below(s.len() as u64) as usize;
                s[p] = *rng.pick(b"NNRY");
            }
            (format!("tiny_{k}"), s)
        })
        .collect();
    fasta_of(&contigs)
}

/// The sections of an index, decoded (compared field by field).
struct Sections {
    meta: fmalign::index::Meta,
    layout: fmalign::reference::Layout,
    pac: Vec<u8>,
    occ: Vec<u8>,
    sup: Vec<[u64; 4]>,
    ssa: Vec<u64>,
}

fn sections(index: &Index) -> Sections {
    let fm = index.fm();
    Sections {
        meta: index.meta,
        layout: index.layout.clone(),
        pac: index.pac().to_vec(),
        occ: bytemuck::cast_slice(fm.occ).to_vec(),
        sup: fm.sup.to_vec(),
        ssa: (0..fm.ssa.len()).map(|k| fm.ssa.get(k)).collect(),
    }
}

fn same_sections(a: &Sections, b: &Sections, what: &str) {
    assert_eq!(a.meta, b.meta, "{what}: meta");
    assert!(a.layout == b.layout, "{what}: layout");
    assert!(a.pac == b.pac, "{what}: pac");
    assert!(a.occ == b.occ, "{what}: occ");
    assert!(a.sup == b.sup, "{what}: occ superblocks");
    assert!(
        a.ssa == b.ssa,
        "{what}: sampled SA: {}",
        first_difference(&a.ssa, &b.ssa)
    );
}

/// Every `--sa` gives the same index, in memory and as file bytes, 32- and
/// 64-bit; with `--sa-sample 1` the stored SA is `[n] ++ SA(text)`.
fn check_index(fasta: &[u8], what: &str) {
    let text = reference(fasta).text;
    let n = text.len() as u64;
    let want_sa = sa32(&text, SaAlgorithm::Libsais, 1);
    verify_sa(&text, &want_sa).unwrap();
    let mut full_sa = vec![n];
    full_sa.extend(&want_sa);
    let dir = tempfile::tempdir().unwrap();
    let mut narrow_ssa = None;
    for wide in [false, true] {
        for sa_sample in [1u32, 8] {
            let mut first: Option<(Sections, Vec<u8>)> = None;
            for (algo, device) in ALL
                .iter()
                .flat_map(|&a| devices().into_iter().map(move |d| (a, d)))
            {
                let what =
                    format!("{what}, {algo:?} on {device:?}, wide {wide}, sa_sample {sa_sample}");
                let cfg = IndexConfig {
                    threads: 2,
                    sa: algo,
                    sa_sample,
                    wide,
                    stats: false,
                    device,
                    max_memory: None,
                    max_gpu_memory: None,
                    max_part: None,
                    dcv: None,
                    dist: Default::default(),
                };
                let index = build_in_memory(reference(fasta), &cfg)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(index.meta.pos_bytes, if wide { 8 } else { 4 });
                let s = sections(&index);
                if sa_sample == 1 {
                    assert!(
                        s.ssa == full_sa,
                        "{what}: stored SA: {}",
                        first_difference(&s.ssa, &full_sa)
                    );
                }
                let path = dir.path().join("x.fmi");
                let report = build_and_write(reference(fasta), &cfg, &path)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                // A GPU build that failed and fell back to the CPU writes the
                // same bytes: it must not pass for a GPU build.
                assert!(
                    device != Device::Gpu || !report.notices.iter().any(|n| n.contains("instead")),
                    "{what}: the GPU build fell back to the CPU: {:?}",
                    report.notices
                );
                let bytes = std::fs::read(&path).unwrap();
                match &first {
                    None => {
                        fmalign::check::check_full(&index).expect("check_full");
                        let opened = Index::open(&path).unwrap();
                        same_sections(&sections(&opened), &s, &what);
                        first = Some((s, bytes));
                    }
                    Some((s0, b0)) => {
                        same_sections(s0, &s, &what);
                        assert!(*b0 == bytes, "{what}: file bytes differ from libsais");
                    }
                }
            }
            let (s, _) = first.unwrap();
            if sa_sample == 8 {
                // 32- and 64-bit indexes store the same samples.
                match &narrow_ssa {
                    None => narrow_ssa = Some(s.ssa),
                    Some(v) => assert!(*v == s.ssa, "{what}: wide samples differ"),
                }
            }
        }
    }
}

#[test]
fn index_with_holes_and_iupac_codes() {
    check_index(&holes_reference(), "holes");
}

#[test]
fn index_of_many_tiny_contigs() {
    let fasta = many_contigs_reference();
    assert_eq!(common::parse_fasta(&fasta).len(), 1200);
    check_index(&fasta, "many contigs");
}

#[test]
fn index_of_tiny_references() {
    for (k, fasta) in [
        &b">a\nA\n"[..],
        b">a\nAC\n",
        b">a\nNNNAN\n>b\nN\n>c\nC\n",
        b">a\nACG\n",
        b">a\nAAAA\n>b\nAAAA\n",
        b">a\nNNNN\n>b\nGATTACA\n",
    ]
    .into_iter()
    .enumerate()
    {
        check_index(fasta, &format!("tiny reference {k}"));
    }
}

// ---------------------------------------------------------------------------
// 4. The binary
// ---------------------------------------------------------------------------

fn shared(name: &str) -> Option<PathBuf> {
    common::shared_data(name, "--sa")
}

/// Unambiguous bases of a FASTA file: the text length.
fn text_len(fasta: &Path) -> u64 {
    common::parse_fasta(&common::read_maybe_gz(fasta))
        .iter()
        .map(|r| r.seq.iter().filter(|b| b"ACGT".contains(b)).count() as u64)
        .sum()
}

fn sa_name(algo: SaAlgorithm) -> &'static str {
    match algo {
        SaAlgorithm::Auto => "auto",
        SaAlgorithm::Libsais => "libsais",
        SaAlgorithm::Hybrid => "hybrid",
        SaAlgorithm::Skew => "skew",
        SaAlgorithm::Ls => "ls",
    }
}

/// `fmalign index --stats --sa X -t T [extra]`: the file's bytes, with its
/// `--stats` rows checked.
fn index_bytes(
    dir: &Path,
    fasta: &Path,
    n: u64,
    algo: SaAlgorithm,
    threads: u32,
    extra: &[&str],
) -> Vec<u8> {
    let out = dir.join(format!("{}.t{threads}.fmi", sa_name(algo)));
    let t = threads.to_string();
    let mut args = vec![
        "index",
        "-q",
        "--stats",
        "--sa",
        sa_name(algo),
        "-t",
        &t,
        "-p",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args.push(fasta.to_str().unwrap());
    let run = run_ok(dir, &args, None);
    let rows = parse_stats(&String::from_utf8_lossy(&run.stderr));
    check_rounds(&rows, algo, n);
    let bytes = std::fs::read(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    bytes
}

/// Every `--sa` in `algos`, with every thread count in `threads`, writes the
/// same file as `--sa libsais -t 2`; every run's `--stats` rows are checked.
fn same_file_for_every_sa(fasta: &Path, algos: &[SaAlgorithm], threads: &[u32], extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let n = text_len(fasta);
    let want = index_bytes(dir.path(), fasta, n, SaAlgorithm::Libsais, 2, extra);
    for &algo in algos {
        for &t in threads {
            let got = index_bytes(dir.path(), fasta, n, algo, t, extra);
            assert!(
                got == want,
                "{}: --sa {} -t {t} {extra:?} writes other bytes than libsais",
                fasta.display(),
                sa_name(algo)
            );
        }
    }
}

#[test]
fn lambda_same_index_for_every_sa() {
    if let Some(fasta) = shared("lambda_virus.fa") {
        same_file_for_every_sa(&fasta, &ALL, &[2], &[]);
    }
}

#[test]
fn chr_m_same_index_for_every_sa() {
    if let Some(fasta) = shared("human_chrM_NC_012920.fa") {
        same_file_for_every_sa(&fasta, &ALL, &[2], &[]);
        same_file_for_every_sa(&fasta, &PARALLEL, &[2], &["--wide-positions"]);
    }
}

#[test]
fn ecoli_same_index_for_every_sa() {
    if let Some(fasta) = shared("ecoli_K12_MG1655.fa.gz") {
        same_file_for_every_sa(&fasta, &PARALLEL, &[2], &[]);
    }
}

/// `-t 1` and `-t 2` give the same bytes for every `--sa`: on lambda and
/// chrM, and on a 120 kbp repetitive reference (several work pieces, whose
/// boundaries move with the thread count, and many doubling rounds).
#[test]
fn threads_do_not_change_the_index() {
    for name in ["lambda_virus.fa", "human_chrM_NC_012920.fa"] {
        if let Some(fasta) = shared(name) {
            same_file_for_every_sa(&fasta, &ALL, &[1, 2], &[]);
        }
    }
    let mut rng = Rng::new(120);
    let unit = acgt(&random_text(&mut rng, 2000, 4));
    let mut seq = acgt(&random_text(&mut rng, 30_000, 4));
    seq.extend(periodic(&unit, 60_000));
    seq.extend(vec![b'A'; 20_000]);
    seq.extend(b"NNNNNNNNNN");
    seq.extend(acgt(&random_text(&mut rng, 10_000, 4)));
    let mut mutated = periodic(&unit, 60_000);
    for _ in 0..5 {
        let p = rng.below(mutated.len() as u64) as usize;
        mutated[p] = if mutated[p] == b'C' { b'G' } else { b'C' };
    }
    let fasta = fasta_of(&[("rep".into(), seq), ("copy".into(), mutated)]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rep.fa");
    std::fs::write(&path, fasta).unwrap();
    same_file_for_every_sa(&path, &ALL, &[1, 2], &[]);
    same_file_for_every_sa(&path, &PARALLEL, &[1, 2], &["--wide-positions"]);
}
