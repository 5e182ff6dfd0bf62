//! The data-parallel steps the suffix-array algorithms of
//! [`super::DataParallel`] are written in.
//!
//! [`Backend`] is the whole interface between an algorithm (`hybrid`, `skew`,
//! `ls`) and the machine it runs on. An algorithm owns no loop over suffixes:
//! every per-element operation is one of the steps below, applied to whole
//! buffers. The CPU backend ([`super::cpu::Cpu`]) runs each step with rayon;
//! the CUDA backend runs the same steps as kernels over device buffers, so the
//! algorithms' logic is tested here, on machines without a GPU.
//!
//! Costs are given for `n` elements and `p` workers; "memory" is scratch space
//! beyond the inputs and outputs. Every step is deterministic: its result does
//! not depend on `p`.
//!
//! Two kinds of step:
//! * **generic steps** — radix sort, scans, compaction, gather/scatter, head
//!   flags, segmented sort, merge (the list in the seeds' papers);
//! * **maps** — small element-wise kernels with suffix-array meaning (pack the
//!   text, build keys, fetch ranks). Each is one pass, `O(n/p)`, no scratch.

use crate::error::Result;
pub use crate::gpu::context::DeviceElem;

/// An element a buffer can hold.
pub trait Elem:
    bytemuck::Pod
    + Default
    + Send
    + Sync
    + Ord
    + std::fmt::Debug
    + std::hash::Hash
    + DeviceElem
    + 'static
{
    /// Its name in the kernels of `gpu/` (the suffix of their names).
    const CU: &'static str;
}
impl Elem for u8 {
    const CU: &'static str = "u8";
}
impl Elem for u32 {
    const CU: &'static str = "u32";
}
impl Elem for u64 {
    const CU: &'static str = "u64";
}

/// An unsigned word used as a key, index, rank or position (`u32`, `u64`).
pub trait Word: Elem {
    /// Bits in the word.
    const BITS: u32;
    /// Widen.
    fn to_u64(self) -> u64;
    /// Narrow (truncating; callers keep values in range).
    fn from_u64(x: u64) -> Self;
}

impl Word for u32 {
    const BITS: u32 = 32;
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        x as u32
    }
}

impl Word for u64 {
    const BITS: u32 = 64;
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self
    }
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        x
    }
}

/// Bits needed to hold values up to `max`.
pub fn bits_for(max: u64) -> u32 {
    64 - max.leading_zeros()
}

/// Where the rank of the suffix at text position `p` is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankLayout {
    /// Slot `p` (a rank per text position).
    Identity,
    /// Only positions `p % 3 != 0`, interleaved: slot `2*(p/3) + p%3 - 1`.
    Interleaved,
    /// Only positions `p % 3 != 0`, the mod-1 block then the mod-2 block
    /// (Kärkkäinen–Sanders): slot `p/3` for `p%3 == 1`, `n0 + p/3` for `p%3 == 2`.
    Split {
        /// Number of mod-1 slots, `(n + 2) / 3`.
        n0: u64,
    },
}

impl RankLayout {
    /// The slot of position `p` (`p` must belong to the layout).
    #[inline(always)]
    pub fn slot(self, p: u64) -> u64 {
        match self {
            RankLayout::Identity => p,
            RankLayout::Interleaved => 2 * (p / 3) + p % 3 - 1,
            RankLayout::Split { n0 } => {
                if p % 3 == 1 {
                    p / 3
                } else {
                    n0 + p / 3
                }
            }
        }
    }
}

/// Sequences made by [`Backend::iota`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Iota {
    /// `start + i`.
    From(u64),
    /// The positions `p % 3 != 0` in increasing order: `3*(i/2) + 1 + i%2`.
    Mod3NonZero,
}

/// The characters of a text, as the comparison and fetch maps read them:
/// character `p` is `c + 1` for the stored symbol `c`, and 0 at or past the
/// end (the sentinel, below every symbol).
pub enum Chars<'a, B: Backend, W: Word> {
    /// 2-bit DNA packed by [`Backend::pack_text`] (symbol `c` in 0..=3).
    Packed(&'a B::Buf<u64>),
    /// One word per character, already `>= 1` (0 is the sentinel).
    Symbols(&'a B::Buf<W>),
}

/// The order in which [`Backend::merge`] interleaves its two inputs. The
/// first argument of the comparison always comes from the first input.
pub enum Order<'a, B: Backend, W: Word> {
    /// Ascending values; on ties the first input's element goes first.
    Ascending,
    /// The skew (DC3) comparison of a suffix `i` (`i % 3 == 0`, first input)
    /// with a suffix `j` (`j % 3 != 0`, second input), given the final ranks
    /// `r` of the suffixes `p % 3 != 0` (0 at or past the end, so the empty
    /// suffix is least): for `j % 3 == 1` compare `(c[i], r[i+1])` with
    /// `(c[j], r[j+1])`, for `j % 3 == 2` compare `(c[i], c[i+1], r[i+2])`
    /// with `(c[j], c[j+1], r[j+2])`.
    Dc3 {
        /// The text.
        text: Chars<'a, B, W>,
        /// Its length.
        n: u64,
        /// Ranks of the positions `p % 3 != 0`.
        rank: &'a B::Buf<W>,
        /// Where `rank` keeps them.
        layout: RankLayout,
    },
    /// The order of the suffixes at positions `i` and `j` (any two, from
    /// either input) by a difference-cover sample ([`cover_cmp`]): a total
    /// order, the suffix order.
    Cover {
        /// The text, packed.
        text: &'a B::Buf<u64>,
        /// Its length.
        n: u64,
        /// The sample.
        sample: &'a CoverSample<'a, B>,
    },
}

/// A difference-cover sample as the steps read it (the blockwise sort of a
/// part, [`super::partsort`]; built by [`super::blockwise::DcSample`]). The
/// period `v` is a power of two and the cover has `size` residues.
/// `rank[(p / v) * size + index[p % v]]` is the rank (1-based, all distinct)
/// of the sampled suffix at `p < n` (`index` is `u32::MAX` for residues not
/// in the cover). For each difference `e` in `0..v`,
/// `pairs[start[e]..start[e + 1]]` are the residues `a` of the cover with
/// `(a + e) mod v` in the cover too: what [`cover_delta`] searches.
pub struct CoverSample<'a, B: Backend> {
    /// The period.
    pub v: u64,
    /// Residues in the cover.
    pub size: u64,
    /// Ranks of the sampled suffixes, by slot.
    pub rank: &'a B::Buf<u32>,
    /// Slot offset of each residue (`v` entries).
    pub index: &'a B::Buf<u32>,
    /// Start of each difference's pairs (`v + 1` entries).
    pub start: &'a B::Buf<u32>,
    /// The residues of each difference's pairs.
    pub pairs: &'a B::Buf<u32>,
}

/// The smallest `k < v` with `(i + k) mod v` and `(j + k) mod v` both in the
/// cover (`start`, `pairs` as in [`CoverSample`]; `v` a power of two).
#[inline]
pub fn cover_delta(v: u64, start: &[u32], pairs: &[u32], i: u64, j: u64) -> u64 {
    let mask = v - 1;
    let (ri, rj) = (i & mask, j & mask);
    let e = ((rj + v - ri) & mask) as usize;
    pairs[start[e] as usize..start[e + 1] as usize]
        .iter()
        .map(|&a| (a as u64 + v - ri) & mask)
        .min()
        .expect("a difference cover covers every difference")
}

/// 32 bases of a text packed by [`Backend::pack_text`] from `p`, first base
/// in the top bits (bases past the last word's end read as 0; the text's
/// spare word makes `packed[p / 32 + 1]` exist for `p` up to its length).
#[inline]
pub fn packed_word(packed: &[u64], p: u64) -> u64 {
    let w = (p / 32) as usize;
    let s = 2 * (p % 32);
    let hi = packed[w] << s;
    if s == 0 {
        hi
    } else {
        hi | (packed[w + 1] >> (64 - s))
    }
}

/// The order of the suffixes `i` and `j` of a packed text of `n` bases by a
/// difference-cover sample ([`Order::Cover`]; host slices of a
/// [`CoverSample`]): their first `k = cover_delta(i, j)` bases (a proper
/// prefix first), then the ranks of the sampled suffixes at `i + k` and
/// `j + k` (0 at the end of the text). `Equal` only for `i == j`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn cover_cmp(
    packed: &[u64],
    n: u64,
    v: u64,
    size: u64,
    rank: &[u32],
    index: &[u32],
    start: &[u32],
    pairs: &[u32],
    i: u64,
    j: u64,
) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    if i == j {
        return Ordering::Equal;
    }
    let k = cover_delta(v, start, pairs, i, j);
    let (li, lj) = (k.min(n - i), k.min(n - j));
    let l = li.min(lj);
    let mut o = 0;
    while o < l {
        let rem = (l - o).min(32);
        let mask = if rem == 32 {
            u64::MAX
        } else {
            !(u64::MAX >> (2 * rem))
        };
        let (a, b) = (
            packed_word(packed, i + o) & mask,
            packed_word(packed, j + o) & mask,
        );
        if a != b {
            return a.cmp(&b);
        }
        o += 32;
    }
    if li != lj {
        return li.cmp(&lj);
    }
    let r = |q| cover_rank(rank, index, v, size, n, q);
    r(i + k).cmp(&r(j + k))
}

/// The rank of the sampled suffix at `q` (`q mod v` in the cover) in a
/// sample's `rank` by slot (host slices of a [`CoverSample`]); 0 at or past
/// the end `n`, the empty suffix.
#[inline]
pub fn cover_rank(rank: &[u32], index: &[u32], v: u64, size: u64, n: u64, q: u64) -> u32 {
    if q >= n {
        return 0;
    }
    rank[((q / v) * size + index[(q & (v - 1)) as usize] as u64) as usize]
}

/// What a segmented sort did (for `--stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SegSortReport {
    /// Merge rounds after the block sort (0 when every segment fitted a block).
    pub merge_rounds: u32,
    /// Block boundaries still crossed by a segment after the block sort.
    pub crossing: u64,
}

/// A machine that runs the steps. `Buf<T>` is a buffer in its memory (a
/// `Vec<T>` on the CPU, device memory on a GPU).
pub trait Backend: Sync + Sized {
    /// A buffer of `T` in the backend's memory.
    type Buf<T: Elem>: Send + Sync;

    /// A short name for messages.
    fn name(&self) -> &'static str;

    /// Waits until every step issued so far has finished (a GPU runs steps
    /// asynchronously); for timing. The CPU backend's steps are finished
    /// when they return.
    fn finish(&self) -> Result<()> {
        Ok(())
    }

    // ---------------------------------------------------------------- memory

    /// Elements in `b`.
    fn len<T: Elem>(&self, b: &Self::Buf<T>) -> usize;
    /// `n` zeros.
    fn zeros<T: Elem>(&self, n: usize) -> Result<Self::Buf<T>>;
    /// A host vector moved (CPU) or copied (GPU) into the backend.
    fn upload<T: Elem>(&self, v: Vec<T>) -> Result<Self::Buf<T>>;
    /// The buffer back on the host.
    fn download<T: Elem>(&self, b: Self::Buf<T>) -> Result<Vec<T>>;
    /// A copy of a host slice in the backend (no host copy on the way).
    fn upload_slice<T: Elem>(&self, v: &[T]) -> Result<Self::Buf<T>> {
        self.upload(v.to_vec())
    }
    /// The buffer copied into a host slice of its length.
    fn download_into<T: Elem>(&self, b: &Self::Buf<T>, out: &mut [T]) -> Result<()> {
        out.copy_from_slice(&self.download(self.copy(b)?)?);
        Ok(())
    }
    /// A copy of `b`.
    fn copy<T: Elem>(&self, b: &Self::Buf<T>) -> Result<Self::Buf<T>>;
    /// `a` followed by `b`.
    fn concat<T: Elem>(&self, a: &Self::Buf<T>, b: &Self::Buf<T>) -> Result<Self::Buf<T>>;
    /// A copy of `b[start..end]`.
    fn slice<T: Elem>(&self, b: &Self::Buf<T>, start: usize, end: usize) -> Result<Self::Buf<T>>;

    // --------------------------------------------------------- generic steps

    /// Stable LSD radix sort of `(keys[i], vals[i])` pairs by the low `bits`
    /// bits of the key (higher bits must be zero). Passes of up to 11 bits;
    /// a pass whose digit is the same for every key is skipped.
    /// Cost: `ceil(bits/11)` passes of `O(n/p + 2^11 p)`; memory one copy of
    /// both arrays.
    fn radix_sort_pairs<K: Word, V: Elem>(
        &self,
        keys: &mut Self::Buf<K>,
        vals: &mut Self::Buf<V>,
        bits: u32,
    ) -> Result<()>;

    /// Exclusive prefix sum in place (wrapping); returns the total.
    /// Cost: two passes, `O(n/p + p)`.
    fn exclusive_scan<W: Word>(&self, x: &mut Self::Buf<W>) -> Result<W>;

    /// Inclusive prefix sum in place that restarts at every element whose
    /// head flag is nonzero (wrapping). Cost: two passes, `O(n/p + p)`.
    fn segmented_scan<W: Word>(&self, x: &mut Self::Buf<W>, heads: &Self::Buf<u8>) -> Result<()>;

    /// The elements whose flag is nonzero, in order.
    /// Cost: two passes, `O(n/p + p)`.
    fn compact<T: Elem>(&self, x: &Self::Buf<T>, keep: &Self::Buf<u8>) -> Result<Self::Buf<T>>;

    /// `out[i] = src[idx[i]]`. Cost: `O(n/p)` random reads.
    fn gather<T: Elem, I: Word>(
        &self,
        src: &Self::Buf<T>,
        idx: &Self::Buf<I>,
    ) -> Result<Self::Buf<T>>;

    /// `dst[idx[i]] = src[i]`. Where an index repeats, the element gets one
    /// of its values, which one unspecified (the algorithms never repeat
    /// one). Cost: `O(n/p)` random writes.
    fn scatter<T: Elem, I: Word>(
        &self,
        src: &Self::Buf<T>,
        idx: &Self::Buf<I>,
        dst: &mut Self::Buf<T>,
    ) -> Result<()>;

    /// `1` where `i == 0`, `keys[i] != keys[i-1]`, or `or[i] != 0`; else 0.
    /// Cost: `O(n/p)`.
    fn head_flags<K: Word>(
        &self,
        keys: &Self::Buf<K>,
        or: Option<&Self::Buf<u8>>,
    ) -> Result<Self::Buf<u8>>;

    /// Sorts each segment (a head flag and the elements up to the next) by
    /// key, carrying values: blocks of `block` elements are sorted
    /// independently, then merged in rounds of doubling width where a merge
    /// touches only the one segment that crosses the boundary between two
    /// blocks; a segment that crosses no boundary still active is finished,
    /// and the rounds stop when no segment crosses one (the early exit of
    /// Wang, Baxter & Owens, Figure 6). The order of equal keys within a
    /// segment is by value. Cost: `O((n/p) log block)` plus, per round,
    /// the lengths of the crossing segments; memory `O(n)`.
    fn segmented_sort<K: Word, V: Elem>(
        &self,
        heads: &Self::Buf<u8>,
        keys: &mut Self::Buf<K>,
        vals: &mut Self::Buf<V>,
        block: usize,
    ) -> Result<SegSortReport>;

    /// Merges two sorted sequences by merge path: the output is cut into
    /// equal pieces, each piece's start found by a binary search along its
    /// diagonal, each piece merged on its own. Cost: `O((a+b)/p + p log(a+b))`
    /// comparisons.
    fn merge<W: Word>(
        &self,
        a: &Self::Buf<W>,
        b: &Self::Buf<W>,
        order: &Order<'_, Self, W>,
    ) -> Result<Self::Buf<W>>;

    /// Number of nonzero flags (a reduction). Cost: `O(n/p + p)`.
    fn count(&self, flags: &Self::Buf<u8>) -> Result<u64>;

    // ------------------------------------------------------------------ maps

    /// `n` elements of a sequence.
    fn iota<W: Word>(&self, n: usize, seq: Iota) -> Result<Self::Buf<W>>;

    /// `n` copies of `value`.
    fn fill<W: Word>(&self, n: usize, value: W) -> Result<Self::Buf<W>>;

    /// The text (symbols 0..=3) packed 32 bases to a word, first base in the
    /// top bits, zero-padded with one whole spare word at the end.
    fn pack_text(&self, text: &[u8]) -> Result<Self::Buf<u64>>;

    /// The sort key of the first `k` characters of each suffix `pos[i]` of a
    /// packed text of length `n`: the `k` bases (2 bits each, `A` past the
    /// end) followed by `min(n - pos, k)` in `bits_for(k)` bits, so a suffix
    /// shorter than `k` sorts before every longer one that agrees with it
    /// and is alone in its key. Needs `2k + bits_for(k) <= K::BITS`.
    fn text_keys<K: Word, W: Word>(
        &self,
        packed: &Self::Buf<u64>,
        n: u64,
        pos: &Self::Buf<W>,
        k: u32,
    ) -> Result<Self::Buf<K>>;

    /// Sorts suffix positions by their [`Backend::text_keys`] key of `k`
    /// characters (stable): the same result as `text_keys` followed by
    /// [`Backend::radix_sort_pairs`], but the keys are recomputed from the
    /// packed text in every pass instead of stored, so the scratch is one
    /// copy of `pos` (2 words a suffix at the peak instead of 6 with `u64`
    /// keys). Returns the head flags of the sorted keys (as
    /// [`Backend::text_heads`] would). Cost: the radix sort's passes plus a
    /// key computation (two reads of the packed text) per element and pass.
    fn sort_suffixes<W: Word>(
        &self,
        packed: &Self::Buf<u64>,
        n: u64,
        pos: &mut Self::Buf<W>,
        k: u32,
    ) -> Result<Self::Buf<u8>>;

    /// [`Backend::head_flags`] of the `text_keys` of `pos`, computing the
    /// keys on the fly (`u64` keys: `k` must fit one with its length field,
    /// `2k + bits(k) <= 64`, else it panics).
    fn text_heads<W: Word>(
        &self,
        packed: &Self::Buf<u64>,
        n: u64,
        pos: &Self::Buf<W>,
        k: u32,
    ) -> Result<Self::Buf<u8>>;

    /// `out[i] = heads[i] != 0 ? i + add : 0`.
    fn head_index<W: Word>(&self, heads: &Self::Buf<u8>, add: u64) -> Result<Self::Buf<W>>;

    /// The indices `i` where `keep[i] != 0`, in order (compaction of `0..n`).
    fn compact_index<W: Word>(&self, keep: &Self::Buf<u8>) -> Result<Self::Buf<W>>;

    /// Ranks after a sort of `pos` into groups (`heads[i] != 0` at the first
    /// element of each): element `i` of the group that starts at `g` gets
    /// rank `g + 1` (0 before the first head), written to
    /// `isa[layout.slot(pos[i])]` (a repeated slot gets one of its ranks,
    /// as in [`Backend::scatter`]). Returns the elements not alone in their
    /// group, in order: their positions, indices and ranks. Cost: that of
    /// [`rank_groups_by_steps`], which it equals; a backend may fuse them
    /// (the CPU does: two passes over `heads`, one over `pos`, the scatter).
    #[allow(clippy::type_complexity)]
    fn rank_groups<W: Word>(
        &self,
        pos: &Self::Buf<W>,
        heads: &Self::Buf<u8>,
        layout: RankLayout,
        isa: &mut Self::Buf<W>,
    ) -> Result<(Self::Buf<W>, Self::Buf<W>, Self::Buf<W>)> {
        rank_groups_by_steps(self, pos, heads, layout, isa)
    }

    /// `dst[layout.slot(pos[i])] = src[i]`: a scatter through a layout (a
    /// repeated slot gets one of its values, as in [`Backend::scatter`]).
    fn scatter_slots<W: Word>(
        &self,
        src: &Self::Buf<W>,
        pos: &Self::Buf<W>,
        layout: RankLayout,
        dst: &mut Self::Buf<W>,
    ) -> Result<()>;

    /// One symbol per base, `c + 1` (so 0 can be the sentinel).
    fn symbols<W: Word>(&self, packed: &Self::Buf<u64>, n: u64) -> Result<Self::Buf<W>>;

    /// `out[i] = p < n ? rank[layout.slot(p)] : 0` where `p = pos[i] + h`.
    fn fetch<W: Word>(
        &self,
        rank: &Self::Buf<W>,
        layout: RankLayout,
        pos: &Self::Buf<W>,
        h: u64,
        n: u64,
    ) -> Result<Self::Buf<W>>;

    /// Skew's triples packed in one key: `out[i] = c(p) << 2 bits | c(p + 1)
    /// << bits | c(p + 2)` where `p = pos[i]` and `c(q) = q < n ? s[q] : 0`
    /// (`s` holds symbols below `2^bits`, `3 bits <= K::BITS`). One pass
    /// with three reads of adjacent symbols; sorting by the key sorts by the
    /// triple.
    fn triple_keys<K: Word, W: Word>(
        &self,
        s: &Self::Buf<W>,
        pos: &Self::Buf<W>,
        n: u64,
        bits: u32,
    ) -> Result<Self::Buf<K>>;

    /// `out[i] = layout.slot(pos[i])`.
    fn slots<W: Word>(&self, pos: &Self::Buf<W>, layout: RankLayout) -> Result<Self::Buf<W>>;

    /// Text positions of Kärkkäinen–Sanders slots: `s < n0 ? 3s + 1 : 3(s - n0) + 2`.
    fn split_positions<W: Word>(&self, slots: &Self::Buf<W>, n0: u64) -> Result<Self::Buf<W>>;

    /// `out[i] = heads[i] != 0 ? base[i] + add : 0`.
    fn head_values<W: Word>(
        &self,
        heads: &Self::Buf<u8>,
        base: &Self::Buf<W>,
        add: u64,
    ) -> Result<Self::Buf<W>>;

    /// `x[i] += flags[i]`.
    fn add_flags<W: Word>(&self, x: &mut Self::Buf<W>, flags: &Self::Buf<u8>) -> Result<()>;

    /// `x[i] -= sub` (wrapping).
    fn sub_const<W: Word>(&self, x: &mut Self::Buf<W>, sub: u64) -> Result<()>;

    /// `flags[i] as W`.
    fn widen<W: Word>(&self, flags: &Self::Buf<u8>) -> Result<Self::Buf<W>>;

    /// 1 for an element that is not alone in its segment (`!(heads[i] &&
    /// (i + 1 == n || heads[i+1]))`): the suffixes still unsorted.
    fn unsorted(&self, heads: &Self::Buf<u8>) -> Result<Self::Buf<u8>>;

    /// Each element's segment length.
    fn segment_lengths<W: Word>(&self, heads: &Self::Buf<u8>) -> Result<Self::Buf<W>>;

    /// 1 where `lo <= x[i] <= hi`.
    fn in_range<W: Word>(&self, x: &Self::Buf<W>, lo: u64, hi: u64) -> Result<Self::Buf<u8>>;

    /// 1 where `x[i] % 3 == r`.
    fn mod3_is<W: Word>(&self, x: &Self::Buf<W>, r: u64) -> Result<Self::Buf<u8>>;

    /// `x[i] mod v` for a power of two `v` (the residue class of a position).
    fn residues<W: Word>(&self, x: &Self::Buf<W>, v: u64) -> Result<Self::Buf<u32>>;

    /// For each suffix `p = pos[i]` of a text of `n` bases, the rank in
    /// `sample` of the first sampled suffix at or after it: `p + d` for the
    /// least `d` ([`cover_delta`]`(p, p)`), 0 when `p + d >= n`. Suffixes of one
    /// residue class that share their first `d` bases are in the order of
    /// these ranks. Cost: `O(n/p)` random reads of the ranks.
    fn cover_ranks<W: Word>(
        &self,
        pos: &Self::Buf<W>,
        n: u64,
        sample: &CoverSample<'_, Self>,
    ) -> Result<Self::Buf<u32>>;
}

/// [`Backend::rank_groups`] from the steps: `head_index` + `segmented_scan`
/// (ranks), `scatter_slots`, `unsorted` + three `compact`s.
#[allow(clippy::type_complexity)]
pub fn rank_groups_by_steps<B: Backend, W: Word>(
    b: &B,
    pos: &B::Buf<W>,
    heads: &B::Buf<u8>,
    layout: RankLayout,
    isa: &mut B::Buf<W>,
) -> Result<(B::Buf<W>, B::Buf<W>, B::Buf<W>)> {
    let mut rank: B::Buf<W> = b.head_index(heads, 1)?;
    b.segmented_scan(&mut rank, heads)?;
    b.scatter_slots(&rank, pos, layout, isa)?;
    let keep = b.unsorted(heads)?;
    Ok((
        b.compact(pos, &keep)?,
        b.compact_index(&keep)?,
        b.compact(&rank, &keep)?,
    ))
}
