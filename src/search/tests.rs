use super::*;
use crate::dna::CODE;
use crate::index::{IndexConfig, build_in_memory};
use crate::scan::read_fasta_from;
use proptest::prelude::*;
use std::path::Path;

fn index_of(text: &[u8]) -> crate::index::Index {
    let mut fa = b">t\n".to_vec();
    fa.extend_from_slice(text);
    fa.push(b'\n');
    let r = read_fasta_from(&fa[..], Path::new("t.fa")).unwrap();
    let cfg = IndexConfig {
        threads: 1,
        ..IndexConfig::default()
    };
    build_in_memory(r, &cfg).unwrap()
}

/// Text positions with at most k mismatches, and their counts: by scan.
fn naive(text: &[u8], read: &[u8], k: u8) -> Vec<(u64, u8)> {
    let m = read.len();
    let mut out = Vec::new();
    if m == 0 || m > text.len() {
        return out;
    }
    for p in 0..=text.len() - m {
        let mm = (0..m)
            .filter(|&i| CODE[read[i] as usize] != CODE[text[p + i] as usize])
            .count();
        if mm <= k as usize {
            out.push((p as u64, mm as u8));
        }
    }
    out
}

fn positions(index: &crate::index::Index, found: &[Found]) -> Vec<(u64, u8)> {
    let fm = index.fm();
    let mut v: Vec<(u64, u8)> = found
        .iter()
        .flat_map(|f| (f.rows.lo..f.rows.hi).map(move |r| (r, f.mismatches)))
        .map(|(r, mm)| (fm.locate(r), mm))
        .collect();
    v.sort_unstable();
    v
}

fn check(text: &[u8], read: &[u8], k: u8) {
    let index = index_of(text);
    let bi = BiIndex {
        fwd: index.fm(),
        rev: index.rev_fm(),
    };
    let codes: Vec<u8> = read.iter().map(|&b| CODE[b as usize]).collect();
    let want = naive(text, read, k);
    let mut found = Vec::new();
    search(&bi, &codes, k, &mut found);
    let got = positions(&index, &found);
    assert_eq!(got, want, "search, text {text:?} read {read:?} k {k}");
    let mut bt = Vec::new();
    backtrack(&bi.fwd, &codes, k, &mut bt);
    assert_eq!(positions(&index, &bt), want, "backtrack");
    for lanes in [1, 3] {
        let many = search_verify_many(&bi, index.pac(), &[&codes, &codes], k, 2, lanes);
        for (rows, pos) in many {
            let mut all = positions(&index, &rows);
            all.extend(pos);
            all.sort_unstable();
            all.dedup();
            assert_eq!(all, want, "search_verify_many, {lanes} lanes");
        }
    }
    for verify_max in [0, 1, 4, u64::MAX] {
        let (mut rows, mut pos) = (Vec::new(), Vec::new());
        search_verify(&bi, index.pac(), &codes, k, verify_max, &mut rows, &mut pos);
        let mut all = positions(&index, &rows);
        all.extend(pos);
        all.sort_unstable();
        all.dedup();
        assert_eq!(all, want, "search_verify {verify_max}");
    }
    // The lockstep searches find what the one-at-a-time ones do.
    let kk = k.min(MAX_MISMATCHES);
    if (kk as usize) < codes.len() {
        let jobs: Vec<(u32, u8)> = (0..=kk).map(|i| (0, i)).collect();
        for lanes in [1, 2, 5] {
            let many = schemes_many(&bi, &[&codes], &jobs, kk, lanes);
            for (&(_, i), mut got) in jobs.iter().zip(many) {
                let mut want = scheme_found(&bi, &codes, kk, usize::from(i));
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want, "schemes_many, search {i}, {lanes} lanes");
            }
        }
    }
    // Each occurrence once: the intervals are disjoint.
    let rows: u64 = found.iter().map(|f| f.rows.len()).sum();
    assert_eq!(rows as usize, want.len(), "an occurrence found twice");
}

#[test]
fn parts_cover_the_read() {
    for m in 0..40 {
        for k in 0..4 {
            let mut next = 0;
            for p in 0..=k {
                let (s, e) = part(m, k, p);
                assert_eq!(s, next);
                next = e;
            }
            assert_eq!(next, m);
        }
    }
}

#[test]
fn small_cases() {
    check(b"ACGTACGTTTGACCA", b"ACGA", 1);
    check(b"ACGTACGTTTGACCA", b"A", 1);
    check(b"ACGTACGTTTGACCA", b"AC", 2);
    check(b"AAAAAAAAAA", b"AAATA", 1);
    check(b"AAAAAAAAAA", b"ANA", 1);
    check(b"ACGT", b"ACGT", 3);
    check(b"ACGT", b"ACGTA", 3);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn agrees_with_a_scan(
        text in proptest::collection::vec(0u8..4, 1..300),
        start in 0usize..300,
        len in 1usize..30,
        subs in proptest::collection::vec((0usize..30, 0u8..5), 0..4),
        k in 0u8..4,
    ) {
        let text: Vec<u8> = text.iter().map(|&c| b"ACGT"[c as usize]).collect();
        let start = start % text.len();
        let end = (start + len).min(text.len());
        let mut read = text[start..end].to_vec();
        for (at, c) in subs {
            let n = read.len();
            read[at % n] = b"ACGTN"[c as usize];
        }
        check(&text, &read, k);
    }
}
