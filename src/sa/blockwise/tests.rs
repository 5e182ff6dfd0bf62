use super::buckets::key;
use super::driver::SPLITTERS_MIN;
use super::sample::{Groups, REFINE_BATCH};
use super::*;
use crate::sa::Pos;
use crate::sa::naive;
use proptest::prelude::*;

#[test]
fn covers_cover_every_difference_and_are_small() {
    let mut v = V_MIN;
    while v <= V_MAX {
        let d = cover(v);
        assert_eq!(d[0], 0);
        let mut seen = vec![false; v];
        for &a in &d {
            for &b in &d {
                seen[(a + v - b) % v] = true;
            }
        }
        assert!(seen.iter().all(|&x| x), "v = {v}: {d:?}");
        // |D| >= sqrt(v) for any cover; ours within 1.6 sqrt(1.5 v) + 2.
        let bound = 1.6 * (1.5 * v as f64).sqrt() + 2.0;
        assert!((d.len() as f64) <= bound, "v = {v}: |D| = {}", d.len());
        assert!(d.len() * d.len() >= v);
        v *= 2;
    }
}

#[test]
fn delta_is_the_smallest_shift() {
    for v in [4, 8, 16, 32, 64, 4096] {
        let c = Cover::new(v).unwrap();
        let mut member = vec![false; v];
        c.elements().iter().for_each(|&a| member[a] = true);
        let inside = |r: usize| member[r % v];
        let step = if v > 64 { 37 } else { 1 };
        for i in (0..2 * v).step_by(step) {
            for j in (0..2 * v).step_by(step) {
                let want = (0..v).find(|&k| inside(i + k) && inside(j + k)).unwrap();
                assert_eq!(c.delta(i, j), want, "v {v} i {i} j {j}");
            }
        }
    }
}

#[test]
fn bad_parameters_are_errors() {
    assert!(Cover::new(3).is_err());
    assert!(Cover::new(8192).is_err());
    assert!(Cover::new(48).is_err());
    let r = Blockwise::<u32>::new(8, 0).run(&PackedText::from_codes(&[0, 1]), &mut |_, _| Ok(()));
    assert!(r.is_err());
}

/// Ranks follow the suffix order of the sampled positions; `cmp` agrees
/// with the brute-force order on every pair.
fn check_sample(text: &[u8], v: usize) {
    for batch in [REFINE_BATCH, 1, 2, 7] {
        check_sample_batch(text, v, batch);
    }
}

fn check_sample_batch(text: &[u8], v: usize, batch: usize) {
    let t = PackedText::from_codes(text);
    let s = crate::thread_pool(2)
        .unwrap()
        .install(|| DcSample::refined_in_batches(&t, v, batch))
        .unwrap();
    if batch != REFINE_BATCH {
        // The ranks do not depend on the batches.
        assert_eq!(s.rank, DcSample::new(&t, v).unwrap().rank, "batch {batch}");
    }
    let sa = naive(text);
    let mut isa = vec![0usize; text.len()];
    for (r, &p) in sa.iter().enumerate() {
        isa[p as usize] = r;
    }
    let sampled: Vec<usize> = sa
        .iter()
        .map(|&p| p as usize)
        .filter(|&p| s.cover.elements().contains(&(p % v)))
        .collect();
    let ranks: Vec<u32> = sampled.iter().map(|&p| s.rank_at(p)).collect();
    assert!(ranks.windows(2).all(|w| w[0] < w[1]), "v {v} {text:?}");
    for i in 0..text.len() {
        for j in 0..text.len() {
            assert_eq!(s.cmp(&t, i, j), isa[i].cmp(&isa[j]), "v {v} {i} {j}");
            let fast = key(&t, i).cmp(&key(&t, j)).then_with(|| s.cmp(&t, i, j));
            assert_eq!(fast, isa[i].cmp(&isa[j]), "key, v {v} {i} {j}");
        }
    }
}

fn parts<P: Pos>(text: &[u8], v: usize, max_part: usize, threads: usize) -> Vec<Vec<u64>> {
    parts_drawing::<P>(text, v, max_part, threads, SPLITTERS_MIN, false)
}

/// The parts, sorted by this module or (`steps`) on the steps of the
/// CPU backend ([`crate::sa::partsort`]).
fn parts_drawing<P: Pos>(
    text: &[u8],
    v: usize,
    max_part: usize,
    threads: usize,
    min_splitters: usize,
    steps: bool,
) -> Vec<Vec<u64>> {
    let mut out: Vec<Vec<u64>> = Vec::new();
    let t = PackedText::from_codes(text);
    let cpu = crate::sa::cpu::Cpu;
    let mut on_steps = crate::sa::partsort::OnSteps::new(&cpu);
    let mut sort = Blockwise::<P>::new(v, max_part).min_splitters(min_splitters);
    if steps {
        sort = sort.sorted_by(&mut on_steps);
    }
    let summary = crate::thread_pool(threads)
        .unwrap()
        .install(|| {
            sort.run(&t, &mut |p, at| {
                assert!(!p.is_empty() && p.len() <= max_part);
                assert_eq!(at.before, out.iter().map(|p| p.len()).sum::<usize>());
                assert_eq!(at.parts, out.len());
                assert!(at.planned > at.parts);
                out.push(p.iter().map(|x| x.to_u64()).collect());
                Ok(())
            })
        })
        .unwrap();
    assert_eq!(summary.parts, out.len());
    out
}

fn check(text: &[u8], v: usize, max_part: usize) {
    let want = naive(text);
    let got = parts::<u32>(text, v, max_part, 2);
    assert_eq!(got.concat(), want, "v {v} part {max_part} {text:?}");
    let wide = parts::<u64>(text, v, max_part, 1);
    assert_eq!(wide, got, "u64, 1 thread: v {v} part {max_part}");
    let steps = parts_drawing::<u32>(text, v, max_part, 2, SPLITTERS_MIN, true);
    assert_eq!(steps, got, "on steps: v {v} part {max_part}");
}

fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn blockwise_equals_brute_force(text in proptest::collection::vec(0u8..4, 0..600), sigma in 1u8..=4) {
        let text: Vec<u8> = text.into_iter().map(|c| c % sigma).collect();
        let n = text.len().max(1);
        for v in [4, 8, 64] {
            for max_part in [1, 2, 7, n] {
                check(&text, v, max_part);
            }
        }
    }

    #[test]
    fn sample_order_and_comparison(text in proptest::collection::vec(0u8..4, 0..120), sigma in 1u8..=4) {
        let text: Vec<u8> = text.into_iter().map(|c| c % sigma).collect();
        for v in [4, 8, 64] {
            check_sample(&text, v);
        }
    }
}

/// The sample of a group of `ranks` processes: every rank's share,
/// then the whole from them (as every rank does after an all-gather).
fn shared_sample(text: &PackedText, v: usize, ranks: usize) -> DcSample {
    let shares = (0..ranks)
        .map(|r| DcSample::share_sorted(text, v, ranks, r).unwrap())
        .collect();
    DcSample::from_shares(text, v, shares).unwrap()
}

/// A group's sample has the ranks of one process's, for any group.
#[test]
fn shared_sample_equals_the_sample() {
    let mut seed = 3u64;
    let mut texts = hard_texts();
    texts.push((0..5000).map(|_| (xorshift(&mut seed) % 4) as u8).collect());
    for text in texts {
        let t = PackedText::from_codes(&text);
        for v in [4, 8, 64] {
            let want = DcSample::new(&t, v).unwrap();
            for ranks in [1, 2, 3, 7] {
                let got = shared_sample(&t, v, ranks);
                assert_eq!(
                    got.rank,
                    want.rank,
                    "v {v}, {ranks} ranks, {} bases",
                    text.len()
                );
            }
        }
    }
}

fn hard_texts() -> Vec<Vec<u8>> {
    let mut texts: Vec<Vec<u8>> = vec![vec![], vec![0], vec![3], vec![2, 2]];
    for len in [1, 2, 3, 5, 63, 64, 65, 129, 300] {
        texts.push(vec![0; len]);
    }
    let mut seed = 99u64;
    for period in [2, 3, 7, 13] {
        let unit: Vec<u8> = (0..period)
            .map(|_| (xorshift(&mut seed) % 4) as u8)
            .collect();
        for copies in [1, 10, 60] {
            texts.push(unit.iter().copied().cycle().take(period * copies).collect());
        }
    }
    // Fibonacci words.
    let (mut a, mut b) = (vec![0u8], vec![0u8, 1]);
    while b.len() < 400 {
        let next = [b.clone(), a].concat();
        a = b;
        b = next;
        texts.push(b.clone());
    }
    // Two copies of a random text (a genome with two near-identical
    // haplotypes): the sample ties in pairs.
    let unit: Vec<u8> = (0..200).map(|_| (xorshift(&mut seed) % 4) as u8).collect();
    texts.push([unit.clone(), unit].concat());
    // A long repeat with a mutation, shorter than v and longer.
    let unit: Vec<u8> = (0..150).map(|_| (xorshift(&mut seed) % 4) as u8).collect();
    let mut t = [unit.clone(), unit.clone(), unit].concat();
    t[200] ^= 1;
    texts.push(t);
    texts
}

/// Groups recorded as bits come back in order, batch by batch, and
/// cleared ones are gone.
#[test]
fn groups_as_bits() {
    let mut g = Groups::new(200);
    let want = [
        (0u32, 2u32),
        (2, 5),
        (63, 65),
        (70, 71),
        (100, 164),
        (198, 200),
    ];
    for &(a, b) in &want {
        g.mark(a as usize, b as usize);
    }
    let all: Vec<(u32, u32)> = want.iter().copied().filter(|&(a, b)| b - a > 1).collect();
    for batch in [1, 3, 64, 1000] {
        let (mut got, mut out, mut at) = (Vec::new(), Vec::new(), 0);
        loop {
            at = g.take(at, batch, &mut out);
            if out.is_empty() {
                break;
            }
            // Groups are added while fewer than `batch` elements are in.
            let (a, b) = out[out.len() - 1];
            let before: u32 = out.iter().map(|&(a, b)| b - a).sum::<u32>() - (b - a);
            assert!(out.len() == 1 || (before as usize) < batch, "batch {batch}");
            got.extend_from_slice(&out);
        }
        assert_eq!(got, all, "batch {batch}");
    }
    g.clear(2, 5);
    g.clear(100, 164);
    let mut out = Vec::new();
    g.take(0, 1000, &mut out);
    assert_eq!(out, vec![(0, 2), (63, 65), (198, 200)]);
}

#[test]
fn hard_texts_all_parameters() {
    for text in hard_texts() {
        let n = text.len().max(1);
        for v in [4, 8, 64, 256] {
            for max_part in [1, 2, 7, n / 3 + 1, n] {
                check(&text, v, max_part);
            }
        }
        if text.len() <= 150 {
            check_sample(&text, 4);
            check_sample(&text, 64);
        }
    }
}

/// Shares of a distributed build ([`Blockwise::only`]): the ranks'
/// parts are the single-process parts, each emitted by exactly one
/// rank (the one whose share holds its first suffix), and `zero_before`
/// says whether suffix 0 is ranked before the part.
#[test]
fn shares_emit_every_part_once() {
    let mut seed = 11u64;
    let mut texts = hard_texts();
    texts.push((0..700).map(|_| (xorshift(&mut seed) % 4) as u8).collect());
    for text in texts {
        let want = naive(&text);
        let n = text.len();
        let rank0 = want.iter().position(|&p| p == 0);
        let t = PackedText::from_codes(&text);
        for (v, max_part) in [(4, 1), (8, 7), (64, 40), (64, n.max(1))] {
            let single = parts::<u32>(&text, v, max_part, 1);
            for ranks in [1usize, 2, 3, 8] {
                let mut got: Vec<(usize, Vec<u64>)> = Vec::new();
                for r in 0..ranks {
                    let share = n * r / ranks..n * (r + 1) / ranks;
                    let share = if r + 1 == ranks {
                        share.start..usize::MAX
                    } else {
                        share
                    };
                    crate::thread_pool(2)
                        .unwrap()
                        .install(|| {
                            Blockwise::<u32>::new(v, max_part)
                                .with_sample(DcSample::new(&t, v).unwrap())
                                .only(share.clone())
                                .run(&t, &mut |p, at| {
                                    assert!(
                                        share.contains(&at.before),
                                        "rank {r}: part at {}",
                                        at.before
                                    );
                                    assert_eq!(
                                        at.zero_before,
                                        rank0.is_some_and(|z| z < at.before)
                                    );
                                    got.push((
                                        at.before,
                                        p.iter().map(|&x| u64::from(x)).collect(),
                                    ));
                                    Ok(())
                                })
                        })
                        .unwrap();
                }
                got.sort();
                let parts: Vec<Vec<u64>> = got.into_iter().map(|(_, p)| p).collect();
                assert_eq!(
                    parts, single,
                    "v {v} part {max_part} ranks {ranks} {text:?}"
                );
            }
        }
    }
}

/// Few splitters per split: pieces over `max_part` are split again.
#[test]
fn pieces_split_again() {
    let mut seed = 5u64;
    let mut texts = hard_texts();
    for (len, sigma) in [(300, 4), (500, 2), (257, 1), (400, 3)] {
        texts.push(
            (0..len)
                .map(|_| (xorshift(&mut seed) % sigma) as u8)
                .collect(),
        );
    }
    for text in texts {
        let want = naive(&text);
        for v in [4, 64] {
            for max_part in [1, 2, 7, 40] {
                let one = parts_drawing::<u32>(&text, v, max_part, 1, 2, false);
                assert_eq!(one.concat(), want, "v {v} part {max_part} {text:?}");
                let two = parts_drawing::<u64>(&text, v, max_part, 3, 3, false);
                assert_eq!(two.concat(), want, "u64 v {v} part {max_part}");
                let steps = parts_drawing::<u64>(&text, v, max_part, 2, 2, true);
                assert_eq!(steps, one, "on steps, u64 v {v} part {max_part}");
            }
        }
    }
}

#[test]
fn parts_do_not_depend_on_threads() {
    let mut seed = 7u64;
    let mut text: Vec<u8> = (0..50_000)
        .map(|_| (xorshift(&mut seed) % 4) as u8)
        .collect();
    // A few long repeats.
    let copy = text[1000..6000].to_vec();
    text[20_000..25_000].copy_from_slice(&copy);
    text[40_000..45_000].copy_from_slice(&copy);
    let want: Vec<u64> = crate::sa::libsais::<u64>(&text, 1)
        .unwrap()
        .as_slice()
        .to_vec();
    for (v, max_part) in [(8, 20_000), (64, 3_000), (256, 777)] {
        let one = parts::<u32>(&text, v, max_part, 1);
        let three = parts::<u32>(&text, v, max_part, 3);
        assert_eq!(one, three, "v {v} part {max_part}");
        assert_eq!(one.concat(), want, "v {v} part {max_part}");
    }
}
