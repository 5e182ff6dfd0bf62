//! The sort of one part of a blockwise suffix sort ([`super::blockwise`]) on
//! the steps of a [`Backend`]: so that a GPU can sort the parts of a text
//! that does not fit it, and ranks of a distributed build can sort theirs.
//!
//! **Method.** A part is any set of distinct suffix positions.
//!
//! 1. The positions are sorted by their first [`KEY`] bases
//!    ([`Backend::sort_suffixes`]: the key holds the bases and, for a suffix
//!    shorter than that, its length, so a suffix that ends is alone in its
//!    key).
//! 2. The suffixes still tied are compacted and sorted within their groups
//!    by the next [`KEY`] bases ([`Backend::text_keys`] at an offset,
//!    [`Backend::segmented_sort`], [`Backend::head_flags`]), group by group,
//!    until every suffix is alone or the groups share `v` bases: the word
//!    levels of the CPU sort, one level per round.
//! 3. A group still tied shares its first `v` bases. Two suffixes `i`, `j` of
//!    one residue class `i ≡ j (mod v)` then compare by the sample's ranks at
//!    `i + d` and `j + d`, where `d < v` is the least shift into the cover
//!    ([`Backend::cover_ranks`]): the tied suffixes are sorted by residue
//!    class, then group, then that rank (three stable radix sorts, least
//!    significant first), which makes one sorted run per class.
//! 4. The runs (at most `v`) are merged pairwise, `log2` of their number
//!    rounds of [`Backend::merge`] with [`Order::Cover`], the comparison of
//!    any two suffixes by the sample ([`super::steps::cover_cmp`], the
//!    comparison [`super::blockwise::DcSample::cmp`] makes). Groups are in
//!    order, so the merged list is the tied suffixes in their slots' order.
//!
//! The result is the order [`super::blockwise`] sorts a part into on the
//! CPU: the suffix order, which is total, so the same on every backend.
//!
//! **Cost.** Step 1 is the hybrid's first sort (its radix passes over the
//! part); each round of step 2 touches only the suffixes still tied; steps 3
//! and 4 only those tied over `v` bases (repeats longer than `v`), with
//! comparisons of up to `v` bases each. Memory: the part, its keys and the
//! radix sort's copies (about 4 words a suffix at the peak), beside the
//! packed text and the sample's ranks, which stay on the backend for every
//! part ([`Uploaded`]).

use super::blockwise::{DcSample, PartSorter};
use super::steps::{Backend, CoverSample, Iota, Order, Word, bits_for};
use crate::dna::PackedText;
use crate::error::Result;

/// Bases per text key: the most a `u64` key holds with its length field
/// (`2 * 29 + 5 = 63` bits).
pub const KEY: u32 = 29;

/// Block size of the segmented sorts.
const BLOCK: usize = 4096;

/// Backend memory for sorting parts of at most `max_part` suffixes of a text
/// of `n` bases with a sample of period `v`, positions of `pos_bytes` bytes:
/// the packed text, the sample's ranks and tables, and per suffix of a part
/// its position, the tied suffixes' positions, slots and heads, a `u64` key
/// and the segmented sort's copies (`6 * pos_bytes + 32` bytes, a bound on
/// the peak of every step above).
pub fn device_bytes(n: u64, v: usize, max_part: u64, pos_bytes: u64) -> u64 {
    let k = super::blockwise::cover(v).len() as u64;
    let tables = 4 * (v as u64 + 1 + k * k + v as u64);
    8 * (n / 32 + 2)
        + super::blockwise::sample_bytes(n, v)
        + tables
        + max_part.saturating_mul(6 * pos_bytes + 32)
}

/// What the sort of one part did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Rounds of step 2 (text keys after the first).
    pub levels: u32,
    /// Suffixes still tied after `v` bases, ordered by the sample.
    pub tied: u64,
    /// Residue classes among them (runs merged).
    pub runs: u64,
}

/// The text and the sample on a backend, for every part of a build.
pub struct Uploaded<B: Backend> {
    text: B::Buf<u64>,
    n: u64,
    v: u64,
    size: u64,
    rank: B::Buf<u32>,
    index: B::Buf<u32>,
    start: B::Buf<u32>,
    pairs: B::Buf<u32>,
}

impl<B: Backend> Uploaded<B> {
    /// Copies `text` (repacked as [`Backend::pack_text`] packs) and the
    /// ranks and tables of its `sample` to `b`.
    pub fn new(b: &B, text: &PackedText, sample: &DcSample) -> Result<Self> {
        let cover = sample.cover();
        let (index, start, pairs) = cover.tables();
        Ok(Uploaded {
            text: b.upload(text.msb_words())?,
            n: text.len() as u64,
            v: cover.period() as u64,
            size: cover.elements().len() as u64,
            rank: b.upload_slice(sample.ranks())?,
            index: b.upload_slice(index)?,
            start: b.upload_slice(start)?,
            pairs: b.upload_slice(pairs)?,
        })
    }

    /// The sample as the steps read it.
    pub fn sample(&self) -> CoverSample<'_, B> {
        CoverSample {
            v: self.v,
            size: self.size,
            rank: &self.rank,
            index: &self.index,
            start: &self.start,
            pairs: &self.pairs,
        }
    }

    /// Sorts the suffixes at `pos` (distinct positions of the text) into
    /// suffix order.
    pub fn sort<W: Word>(&self, b: &B, pos: &mut B::Buf<W>) -> Result<Report> {
        sort_part(b, &self.text, self.n, &self.sample(), pos)
    }
}

/// Sorts the suffixes at `pos` (distinct positions `< n` of the text packed
/// by [`Backend::pack_text`]) into suffix order, with the difference-cover
/// `sample` of that text for the ties (see the module documentation).
pub fn sort_part<B: Backend, W: Word>(
    b: &B,
    text: &B::Buf<u64>,
    n: u64,
    sample: &CoverSample<'_, B>,
    pos: &mut B::Buf<W>,
) -> Result<Report> {
    let mut report = Report::default();
    if b.len(pos) < 2 {
        return Ok(report);
    }
    // 1. The first KEY bases.
    let heads = b.sort_suffixes(text, n, pos, KEY)?;
    let keep = b.unsorted(&heads)?;
    if b.count(&keep)? == 0 {
        return Ok(report);
    }
    // The tied suffixes: positions, their slots in `pos`, group heads.
    let mut tpos: B::Buf<W> = b.compact(pos, &keep)?;
    let mut slot: B::Buf<W> = b.compact_index(&keep)?;
    let mut theads = b.compact(&heads, &keep)?;
    drop((heads, keep));
    // 2. KEY more bases a round, until v bases are compared.
    let mut h = u64::from(KEY);
    while h < sample.v && b.len(&tpos) > 0 {
        report.levels += 1;
        let mut at = b.copy(&tpos)?;
        // Every tied suffix is at least h long (equal keys, equal lengths):
        // at + h <= n. Adding h is subtracting its two's complement.
        b.sub_const(&mut at, h.wrapping_neg())?;
        let mut keys = b.text_keys::<u64, W>(text, n, &at, KEY)?;
        drop(at);
        b.segmented_sort(&theads, &mut keys, &mut tpos, BLOCK)?;
        let heads = b.head_flags(&keys, Some(&theads))?;
        drop(keys);
        // The new order in place; then only the suffixes still tied go on.
        b.scatter(&tpos, &slot, pos)?;
        let keep = b.unsorted(&heads)?;
        tpos = b.compact(&tpos, &keep)?;
        slot = b.compact(&slot, &keep)?;
        theads = b.compact(&heads, &keep)?;
        h += u64::from(KEY);
    }
    let m = b.len(&tpos);
    if m == 0 {
        return Ok(report);
    }
    report.tied = m as u64;
    // 3. Runs by residue class: sorted by (class, group, rank at the first
    // sampled position), least significant first.
    let mut group: B::Buf<W> = b.head_index(&theads, 0)?;
    b.segmented_scan(&mut group, &theads)?;
    drop(theads);
    let mut perm: B::Buf<W> = b.iota(m, Iota::From(0))?;
    let mut key = b.cover_ranks(&tpos, n, sample)?;
    b.radix_sort_pairs(&mut key, &mut perm, 32)?;
    let mut key = b.gather(&group, &perm)?;
    drop(group);
    b.radix_sort_pairs(&mut key, &mut perm, bits_for(m as u64))?;
    let mut key = b.residues(&b.gather(&tpos, &perm)?, sample.v)?;
    b.radix_sort_pairs(&mut key, &mut perm, bits_for(sample.v - 1))?;
    let sorted = b.gather(&tpos, &perm)?;
    drop((tpos, perm));
    // Where each class's run starts.
    let starts: Vec<W> = b.download(b.compact_index(&b.head_flags(&key, None)?)?)?;
    drop(key);
    let mut bounds: Vec<usize> = starts.iter().map(|s| s.to_u64() as usize).collect();
    bounds.push(m);
    report.runs = starts.len() as u64;
    let mut runs: Vec<B::Buf<W>> = bounds
        .windows(2)
        .map(|w| b.slice(&sorted, w[0], w[1]))
        .collect::<Result<_>>()?;
    drop(sorted);
    // 4. Pairwise merges by the sample.
    let order = Order::Cover { text, n, sample };
    while runs.len() > 1 {
        let mut next = Vec::with_capacity(runs.len().div_ceil(2));
        let mut it = runs.into_iter();
        while let Some(a) = it.next() {
            match it.next() {
                Some(c) => next.push(b.merge(&a, &c, &order)?),
                None => next.push(a),
            }
        }
        runs = next;
    }
    let merged = runs.pop().expect("at least one run");
    b.scatter(&merged, &slot, pos)?;
    Ok(report)
}

/// A [`PartSorter`] on a backend: each part is copied there, sorted by
/// [`sort_part`] and copied back (into the part: no second host copy). It
/// never declines a part; an error of the backend is returned.
pub struct OnSteps<'a, B: Backend> {
    b: &'a B,
    up: Option<Uploaded<B>>,
    /// Totals over the parts sorted so far.
    pub total: Report,
}

impl<'a, B: Backend> OnSteps<'a, B> {
    /// A sorter on `b` (the text goes there when the sample is ready).
    pub fn new(b: &'a B) -> Self {
        OnSteps {
            b,
            up: None,
            total: Report::default(),
        }
    }
}

impl<B: Backend, W: Word> PartSorter<W> for OnSteps<'_, B> {
    fn prepare(&mut self, text: &PackedText, sample: &DcSample) -> Result<()> {
        self.up = Some(Uploaded::new(self.b, text, sample)?);
        Ok(())
    }

    fn sort(&mut self, part: &mut [W]) -> Result<bool> {
        let up = self
            .up
            .as_ref()
            .expect("PartSorter::prepare runs before the first part");
        let mut pos = self.b.upload_slice(part)?;
        let r = up.sort(self.b, &mut pos)?;
        self.b.download_into(&pos, part)?;
        self.total.levels = self.total.levels.max(r.levels);
        self.total.tied += r.tied;
        self.total.runs += r.runs;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sa::cpu::Cpu;
    use crate::sa::naive;

    fn xorshift(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    fn texts() -> Vec<Vec<u8>> {
        let mut seed = 3u64;
        let mut texts: Vec<Vec<u8>> = vec![vec![1], vec![0; 2], vec![0; 300], vec![3; 77]];
        for (period, copies) in [(2, 150), (7, 40), (13, 30), (61, 6)] {
            let unit: Vec<u8> = (0..period)
                .map(|_| (xorshift(&mut seed) % 4) as u8)
                .collect();
            texts.push(unit.iter().copied().cycle().take(period * copies).collect());
        }
        let (mut a, mut b) = (vec![0u8], vec![0u8, 1]);
        while b.len() < 500 {
            let next = [b.clone(), a].concat();
            a = b;
            b = next;
        }
        texts.push(b);
        // Copies of a random unit with a few mutations (near repeats).
        let unit: Vec<u8> = (0..200).map(|_| (xorshift(&mut seed) % 4) as u8).collect();
        let mut t: Vec<u8> = unit.iter().copied().cycle().take(1000).collect();
        for p in [150, 420, 777] {
            t[p] ^= 2;
        }
        texts.push(t);
        texts.push((0..700).map(|_| (xorshift(&mut seed) % 4) as u8).collect());
        texts
    }

    /// Subsets of the suffixes (all, every third, a random half, given in
    /// scrambled order) sorted on the CPU backend's steps come out in the
    /// brute-force order, for several periods; the tie-break by the sample
    /// (steps 3 and 4) is exercised, with several runs to merge.
    #[test]
    fn parts_sort_like_brute_force() {
        let mut seed = 11u64;
        let mut total = Report::default();
        for text in texts() {
            let sa = naive(&text);
            let t = PackedText::from_codes(&text);
            for v in [4, 8, 64, 256] {
                let sample = DcSample::new(&t, v).unwrap();
                let up = Uploaded::new(&Cpu, &t, &sample).unwrap();
                let subsets: Vec<Vec<u64>> = vec![
                    sa.clone(),
                    sa.iter().copied().filter(|p| p % 3 == 0).collect(),
                    sa.iter()
                        .copied()
                        .filter(|_| xorshift(&mut seed).is_multiple_of(2))
                        .collect(),
                ];
                for want in subsets {
                    let mut input = want.clone();
                    for i in (1..input.len()).rev() {
                        input.swap(i, (xorshift(&mut seed) % (i as u64 + 1)) as usize);
                    }
                    let mut pos: Vec<u64> = input.clone();
                    let r = up.sort(&Cpu, &mut pos).unwrap();
                    assert_eq!(pos, want, "u64, v {v}, {} bases", text.len());
                    let mut narrow: Vec<u32> = input.iter().map(|&p| p as u32).collect();
                    up.sort(&Cpu, &mut narrow).unwrap();
                    let narrow: Vec<u64> = narrow.iter().map(|&p| p as u64).collect();
                    assert_eq!(narrow, want, "u32, v {v}, {} bases", text.len());
                    total.levels = total.levels.max(r.levels);
                    total.tied += r.tied;
                    total.runs = total.runs.max(r.runs);
                }
            }
        }
        assert!(total.levels >= 8, "{total:?}");
        assert!(total.tied > 1000 && total.runs > 16, "{total:?}");
    }

    /// The merge by the sample alone (step 4) orders any two suffixes as
    /// the brute force does, whatever their classes.
    #[test]
    fn cover_order_is_the_suffix_order() {
        for text in texts() {
            let sa = naive(&text);
            let mut isa = vec![0usize; text.len()];
            for (r, &p) in sa.iter().enumerate() {
                isa[p as usize] = r;
            }
            let t = PackedText::from_codes(&text);
            let packed = t.msb_words();
            for v in [4, 16, 128] {
                let sample = DcSample::new(&t, v).unwrap();
                let up = Uploaded::new(&Cpu, &t, &sample).unwrap();
                let s = up.sample();
                let n = text.len();
                let step = n.div_ceil(40).max(1);
                for i in (0..n).step_by(step) {
                    for j in 0..n {
                        let got = crate::sa::steps::cover_cmp(
                            &packed, n as u64, s.v, s.size, s.rank, s.index, s.start, s.pairs,
                            i as u64, j as u64,
                        );
                        assert_eq!(got, isa[i].cmp(&isa[j]), "v {v} {i} {j} of {n}");
                    }
                }
            }
        }
    }
}
