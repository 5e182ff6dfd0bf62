//! `fmalign check --full`: proves, in linear time, that the stored tables are
//! the FM-index of the stored reference.
//!
//! 1. Recount every Occ line and the superblocks from the stored BWT
//!    ([`crate::tables::verify_occ`], which `Index::open` runs on every index before use).
//! 2. Walk LF from row 0 (the `$` suffix, `SA'[0] = n`) for `n` steps. Each
//!    step reads `BWT'[i] = T[SA'[i] - 1]`, which must equal the stored 2-bit
//!    reference; each sampled row met on the way must hold the current
//!    position; the walk must not meet the `$` row before its last step and
//!    must end on it. LF is a permutation of the `n + 1` rows (its counts were
//!    just verified), so the walk visits every row once: the BWT inverts to
//!    the reference, hence is its BWT, and every sampled SA entry is right.

use crate::dna::packed_base;
use crate::error::{Error, Result};
use crate::index::Index;

/// Runs the full check; `Ok` carries the number of LF steps taken.
pub fn check_full(index: &Index) -> Result<u64> {
    let corrupt = |msg: String| Error::Corrupt {
        path: index.path().into(),
        msg,
    };
    let fm = index.fm();
    let n = fm.n;
    // 1. Occ counts and C: `verify_occ`, already run by `Index::open`.
    // 2. Inverse BWT against the reference, checking the samples on the way.
    let pac = index.pac();
    if fm.sample_at(0) != Some(n) {
        return Err(corrupt("sampled SA entry of row 0 is wrong".into()));
    }
    let mut i = 0u64;
    for pos in (0..n).rev() {
        let Some(c) = fm.bwt(i) else {
            return Err(corrupt(format!(
                "the BWT does not invert to the reference (reached $ with {} bases left)",
                pos + 1
            )));
        };
        if c != packed_base(pac, pos) {
            return Err(corrupt(format!(
                "the BWT does not invert to the stored reference at text position {pos}"
            )));
        }
        i = fm.lf(i);
        if let Some(s) = fm.sample_at(i).filter(|&s| s != pos) {
            return Err(corrupt(format!(
                "sampled SA entry of row {i} is {s}, expected {pos}"
            )));
        }
    }
    if i != fm.primary {
        return Err(corrupt(
            "the BWT does not invert to the reference (did not end on the $ row)".into(),
        ));
    }
    // 3. The mirror index: its BWT inverts to the reversed reference.
    let rfm = index.rev_fm();
    let mut i = 0u64;
    for pos in (0..n).rev() {
        // Row i's BWT symbol is reversed-text position `pos`, i.e. text
        // position `n - 1 - pos`.
        let ok = rfm.bwt(i) == Some(packed_base(pac, n - 1 - pos));
        if !ok {
            return Err(corrupt(format!(
                "the reversed text's BWT does not invert to the reference at text position {}",
                n - 1 - pos
            )));
        }
        i = rfm.lf(i);
    }
    if i != rfm.primary {
        return Err(corrupt(
            "the reversed text's BWT does not invert (did not end on the $ row)".into(),
        ));
    }
    Ok(2 * n)
}

/// Whether the FASTA at `fasta` is the reference `index` was built from:
/// the same contigs, in order, with the same names, lengths and MD5s (the
/// SAM `@SQ M5`, which covers every letter, ambiguous ones as written). One
/// streamed read of the FASTA. `Ok` carries the number of contigs; a
/// difference is an error naming the FASTA and the first contig that
/// differs (an edited FASTA keeps working with its old index otherwise:
/// only the modification time warns).
pub fn check_reference(index: &Index, fasta: &std::path::Path) -> Result<usize> {
    let scan = crate::scan::scan_fasta(fasta, u64::MAX)?;
    let (have, want) = (&scan.layout.contigs, &index.layout.contigs);
    let differs = |msg: String| {
        Error::input(
            fasta,
            format!(
                "{msg}: this is not the reference {} was built from (rebuild it: fmalign index)",
                index.path().display()
            ),
        )
    };
    let hex = |d: &[u8; 16]| d.iter().map(|x| format!("{x:02x}")).collect::<String>();
    for (k, (a, b)) in have.iter().zip(want).enumerate() {
        if a.name != b.name {
            return Err(differs(format!(
                "sequence {} is '{}', the index's is '{}'",
                k + 1,
                a.name,
                b.name
            )));
        }
        if a.len != b.len {
            return Err(differs(format!(
                "sequence '{}' has {} bases, the index's {}",
                a.name, a.len, b.len
            )));
        }
        if a.md5 != b.md5 {
            return Err(differs(format!(
                "sequence '{}' has MD5 {}, the index's {}",
                a.name,
                hex(&a.md5),
                hex(&b.md5)
            )));
        }
    }
    if have.len() != want.len() {
        return Err(differs(format!(
            "{} sequences, the index has {}",
            have.len(),
            want.len()
        )));
    }
    Ok(have.len())
}
