//! The FM-index over borrowed slices: C, the BWT interleaved with occurrence
//! counts in 64-byte lines, and the sampled suffix array.
//!
//! Conventions (after bwa's `bwt.h`): the text `T` of length `n` gets a
//! virtual sentinel `$` at `T[n]`, smaller than every base. The full suffix
//! array `SA'` has `n + 1` rows, `SA'[0] = n`. `BWT'[i] = T[SA'[i] - 1]`, and
//! `$` at the row `primary` where `SA'[primary] = 0`. The stored BWT `B` is
//! `BWT'` with the `$` removed (`n` bases, 2 bits each), so row `i` maps to
//! `B[i - (i > primary)]`.
//!
//! Occ layout: one [`OccLine`] of 64 bytes (one cache line) per 192 bases of
//! `B`: four `u32` counts of A, C, G, T in `B` before the line, relative to
//! the line's superblock, then the line's 192 bases in six `u64` words (32
//! bases each, least significant bits first). 64 / 192 = 0.33 bytes per base.
//! A superblock covers `2^24` lines (3.2 G bases, so the `u32` counts never
//! overflow); its four `u64` absolute counts sit in a separate small table
//! that stays in cache. A rank query reads one Occ line.
//!
//! [`RankIndex`] holds C and the Occ lines: rank, LF and backward search
//! (the reversed text's mirror index is one). [`FmIndex`] is a `RankIndex`
//! plus the sampled SA, so only it can locate. Batches of walks (backward
//! searches, locates) go through one interleaved walker, `lockstep`.

use bytemuck::{Pod, Zeroable};

/// Bases per Occ line.
pub const LINE_BASES: u64 = 192;
/// Occ lines per superblock.
pub const SUPER_LINES: u64 = 1 << 24;

/// One 64-byte line of the interleaved BWT/Occ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(64))]
pub struct OccLine {
    /// Counts of A, C, G, T in `B` before this line, minus the superblock's.
    pub counts: [u32; 4],
    /// 192 bases, 2 bits each, 32 per word, least significant first.
    pub bits: [u64; 6],
}

const LOW: u64 = 0x5555_5555_5555_5555;

/// `PREFIX_MASKS[r]`: the bits of the first `r` bases of a line, per word
/// (193 × 48 bytes, stays in L1/L2).
static PREFIX_MASKS: [[u64; 6]; LINE_BASES as usize + 1] = {
    let mut t = [[0u64; 6]; LINE_BASES as usize + 1];
    let mut r = 0;
    while r <= LINE_BASES as usize {
        let mut w = 0;
        while w < 6 {
            let bits = 2 * r as i64 - 64 * w as i64;
            t[r][w] = if bits >= 64 {
                u64::MAX
            } else if bits <= 0 {
                0
            } else {
                (1u64 << bits) - 1
            };
            w += 1;
        }
        r += 1;
    }
    t
};
/// Each code repeated over a word.
const PATTERN: [u64; 4] = [0, LOW, LOW << 1, u64::MAX];

/// Counts of A, C, G, T among the first `valid` of the 32 bases of `w`
/// (base `k` in bits `2k`, as in a line's words and a `PackedText`'s).
#[inline]
pub fn word_counts(w: u64, valid: usize) -> [u64; 4] {
    let mask = if valid >= 32 {
        LOW
    } else {
        LOW & ((1u64 << (2 * valid)) - 1)
    };
    PATTERN.map(|pat| {
        let y = w ^ pat;
        u64::from((!(y | (y >> 1)) & mask).count_ones())
    })
}

impl OccLine {
    /// Per word, a mask of the bits of each base equal to `c` (its low bit).
    #[inline(always)]
    fn equal(&self, c: u8) -> [u64; 6] {
        let pat = PATTERN[c as usize];
        self.bits.map(|w| {
            let y = w ^ pat;
            !(y | (y >> 1)) & LOW
        })
    }

    /// Occurrences of `c` among the first `r` (0..=192) bases of this line.
    /// Branch-free: all six words are counted under masks from a table,
    /// which beats a loop whose trip count the branch predictor cannot guess.
    #[inline(always)]
    pub fn count_before(&self, c: u8, r: u32) -> u64 {
        let eq = self.equal(c);
        let m = &PREFIX_MASKS[r as usize];
        (0..6).map(|w| (eq[w] & m[w]).count_ones() as u64).sum()
    }

    /// Occurrences of `c` among the first `r1` and the first `r2` bases: one
    /// pass for both ends of an interval that falls in one line.
    #[inline(always)]
    pub fn count_before2(&self, c: u8, r1: u32, r2: u32) -> (u64, u64) {
        let eq = self.equal(c);
        let (m1, m2) = (&PREFIX_MASKS[r1 as usize], &PREFIX_MASKS[r2 as usize]);
        let a = (0..6).map(|w| (eq[w] & m1[w]).count_ones() as u64).sum();
        let b = (0..6).map(|w| (eq[w] & m2[w]).count_ones() as u64).sum();
        (a, b)
    }

    /// The base at offset `r` (0..192).
    #[inline(always)]
    pub fn base(&self, r: u32) -> u8 {
        ((self.bits[(r / 32) as usize] >> (2 * (r % 32))) & 3) as u8
    }

    /// Puts base `c` at offset `r` (0..192) of a line being built and
    /// counts it: the counts are then the line's own, made cumulative by
    /// the builder (`build::cumulate`).
    #[inline]
    pub fn push(&mut self, r: u64, c: u8) {
        self.bits[(r / 32) as usize] |= (c as u64) << (2 * (r % 32));
        self.counts[c as usize] += 1;
    }

    /// A line of up to 192 bases (codes 0..=3), its counts its own
    /// ([`OccLine::push`] of each).
    pub fn from_bases(bases: &[u8]) -> Self {
        let mut line = OccLine::default();
        for (r, &c) in bases.iter().enumerate() {
            line.push(r as u64, c);
        }
        line
    }
}

/// The row that sample `k` of the suffix array holds, of `n + 1` rows
/// sampled at rate `2^shift`: one row in each block of `2^shift` rows, at
/// an offset in the block drawn from `k` by a fixed hash (MurmurHash3's
/// 64-bit finalizer), row 0 for block 0 and for rate 1; in the last block,
/// which may be short, the offset modulo its size (index_format/SPEC.md
/// §5.3).
///
/// Why not every `2^shift`-th row, as bwa and bowtie sample: an LF walk
/// from a row to the next sampled one then has no bound. On an exactly
/// periodic text whose copies are a multiple of the rate, every interval
/// of suffixes at one offset in the unit starts at the same row modulo the
/// rate, so the walks of most rows never meet a multiple of it until they
/// leave the array (a 1 kb unit 50,000 times: 8 s to locate one read's
/// 50,000 hits). A hashed offset is the same for any text, so for every
/// text each step of a walk is sampled with probability `2^-shift`: a walk
/// takes `2^shift` steps on average and exceeds `t` steps with probability
/// at most `exp(-t / 2^shift)`, at the same space as before.
#[inline(always)]
pub fn sample_row(k: u64, shift: u32, n: u64) -> u64 {
    let first = k << shift;
    if shift == 0 || k == 0 {
        return first;
    }
    let mut h = k;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    let offset = h >> (64 - shift);
    let size = (n + 1 - first).min(1 << shift);
    first
        + if size < 1 << shift {
            offset % size
        } else {
            offset
        }
}

/// The sampled rows ([`sample_row`]) in `from..to`, in order, of a text of
/// `n` bases sampled every `2^shift` rows.
pub fn sampled_rows(from: u64, to: u64, shift: u32, n: u64) -> impl Iterator<Item = u64> {
    let first = from >> shift;
    let last = to.div_ceil(1 << shift).min((n >> shift) + 1);
    (first..last)
        .map(move |k| sample_row(k, shift, n))
        .filter(move |r| (from..to).contains(r))
}

/// The sampled suffix array, in the width the index was built with.
#[derive(Clone, Copy, Debug)]
pub enum Ssa<'a> {
    /// Texts of fewer than 2^32 bases.
    U32(&'a [u32]),
    /// Larger texts (or a forced 64-bit build).
    U64(&'a [u64]),
}

impl Ssa<'_> {
    /// Sample `k`, i.e. `SA'[sample_row(k, ..)]`.
    #[inline]
    pub fn get(&self, k: usize) -> u64 {
        match self {
            Ssa::U32(s) => s[k] as u64,
            Ssa::U64(s) => s[k],
        }
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        match self {
            Ssa::U32(s) => s.len(),
            Ssa::U64(s) => s.len(),
        }
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A half-open range of suffix-array rows: the suffixes prefixed by a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Interval {
    /// First row.
    pub lo: u64,
    /// One past the last row.
    pub hi: u64,
}

impl Interval {
    /// Number of rows (occurrences).
    pub fn len(&self) -> u64 {
        self.hi - self.lo
    }

    /// Whether the pattern does not occur.
    pub fn is_empty(&self) -> bool {
        self.hi <= self.lo
    }
}

/// The rank tables of an FM-index, borrowed (from an mmap or from owned
/// vectors): C and the interleaved BWT/Occ. Enough for rank, LF and backward
/// search, not for locate: the mirror index of bidirectional search (the
/// reversed text's, which has no sampled SA) is one, and [`FmIndex`] adds
/// the samples to one.
#[derive(Clone, Copy, Debug)]
pub struct RankIndex<'a> {
    /// Text length (without the sentinel).
    pub n: u64,
    /// Row whose BWT symbol is `$`.
    pub primary: u64,
    /// `C[c]`: rows whose suffix starts with a symbol smaller than `c`
    /// (the `$` row included); `C[4] = n + 1`.
    pub c: [u64; 5],
    /// Interleaved BWT and counts.
    pub occ: &'a [OccLine],
    /// Absolute counts at each superblock.
    pub sup: &'a [[u64; 4]],
}

/// An FM-index: the rank tables and the sampled suffix array, so that rows
/// can be located. It dereferences to its [`RankIndex`].
#[derive(Clone, Copy, Debug)]
pub struct FmIndex<'a> {
    /// C, BWT and Occ.
    pub tables: RankIndex<'a>,
    /// `SA'[sample_row(k)]` for each block `k` of `2^sample_shift` rows.
    pub ssa: Ssa<'a>,
    /// log2 of the sampling rate.
    pub sample_shift: u32,
}

impl<'a> std::ops::Deref for FmIndex<'a> {
    type Target = RankIndex<'a>;

    #[inline(always)]
    fn deref(&self) -> &RankIndex<'a> {
        &self.tables
    }
}

/// The empty interval.
pub const EMPTY: Interval = Interval { lo: 0, hi: 0 };

/// One backward search for [`RankIndex::backward_search_many`]: the
/// caller's `job`, the pattern's length, how many of its bases (from the
/// end) `iv` already matches: 0 with the full interval, or k from a k-mer
/// table.
#[derive(Clone, Copy, Debug)]
pub struct BackwardSearch<J> {
    /// What the caller knows the search by.
    pub job: J,
    /// Bases in the pattern.
    pub len: usize,
    /// Bases matched so far, from the end.
    pub matched: usize,
    /// Their rows.
    pub iv: Interval,
}

/// Walks that [`lockstep`] interleaves.
trait Walks {
    /// One walk in flight.
    type Walk;
    /// The next walk to start; `None` when there are no more.
    fn start(&mut self) -> Option<Self::Walk>;
    /// Advances `w` by one step, prefetching what its next step reads;
    /// true when it has finished.
    fn step(&mut self, w: &mut Self::Walk) -> bool;
}

/// The interleaved walker behind every batch of FM-index walks (backward
/// searches, locates): up to `lanes` walks in flight, each advanced one step
/// per round, so that the cache misses of different walks overlap (each
/// step prefetches what its next one reads). A finished walk's slot goes
/// to the next one.
#[inline(always)]
fn lockstep<W: Walks>(lanes: usize, walks: &mut W) {
    let mut slots: Vec<W::Walk> = Vec::with_capacity(lanes.max(1));
    while slots.len() < lanes.max(1) {
        match walks.start() {
            Some(w) => slots.push(w),
            None => break,
        }
    }
    while !slots.is_empty() {
        let mut k = 0;
        while k < slots.len() {
            if walks.step(&mut slots[k]) {
                match walks.start() {
                    Some(w) => slots[k] = w,
                    None => {
                        slots.swap_remove(k);
                        continue;
                    }
                }
            }
            k += 1;
        }
    }
}

/// The backward searches of [`RankIndex::backward_search_many`].
struct Searches<'f, 'a, I, C, D> {
    fm: &'f RankIndex<'a>,
    searches: I,
    code: C,
    done: D,
}

impl<J, I, C, D> Walks for Searches<'_, '_, I, C, D>
where
    J: Copy,
    I: Iterator<Item = BackwardSearch<J>>,
    C: Fn(J, usize) -> u8,
    D: FnMut(BackwardSearch<J>),
{
    type Walk = BackwardSearch<J>;

    /// The next search with a base left to match; those already over (a
    /// whole pattern from the k-mer table, an empty interval, an empty
    /// pattern) go straight to `done`.
    #[inline(always)]
    fn start(&mut self) -> Option<BackwardSearch<J>> {
        for s in self.searches.by_ref() {
            if s.matched < s.len && !s.iv.is_empty() {
                self.fm.prefetch(s.iv.lo);
                self.fm.prefetch(s.iv.hi);
                return Some(s);
            }
            (self.done)(s);
        }
        None
    }

    #[inline(always)]
    fn step(&mut self, s: &mut BackwardSearch<J>) -> bool {
        let c = (self.code)(s.job, s.matched);
        s.iv = if c < 4 {
            self.fm.extend(s.iv, c)
        } else {
            EMPTY
        };
        s.matched += 1;
        if s.iv.is_empty() || s.matched == s.len {
            (self.done)(*s);
            return true;
        }
        self.fm.prefetch(s.iv.lo);
        self.fm.prefetch(s.iv.hi);
        false
    }
}

/// One locate walk of [`FmIndex::locate_many`].
struct LocateWalk {
    /// Index into the rows.
    idx: usize,
    /// The row it stands on.
    row: u64,
    /// LF steps taken.
    steps: u64,
}

/// The LF walks of [`FmIndex::locate_many`].
struct Locates<'f, 'a, 'o> {
    fm: &'f FmIndex<'a>,
    rows: &'o [u64],
    next: usize,
    out: &'o mut [u64],
}

impl Walks for Locates<'_, '_, '_> {
    type Walk = LocateWalk;

    #[inline(always)]
    fn start(&mut self) -> Option<LocateWalk> {
        let idx = self.next;
        let &row = self.rows.get(idx)?;
        self.next += 1;
        self.fm.prefetch(row);
        Some(LocateWalk { idx, row, steps: 0 })
    }

    #[inline(always)]
    fn step(&mut self, w: &mut LocateWalk) -> bool {
        match self.fm.walk_end(w.row, w.steps) {
            Some(pos) => {
                self.out[w.idx] = pos;
                true
            }
            None => {
                w.row = self.fm.lf(w.row);
                self.fm.prefetch(w.row);
                w.steps += 1;
                false
            }
        }
    }
}

impl RankIndex<'_> {
    /// Position in `B` of row `i`.
    #[inline(always)]
    fn b_pos(&self, i: u64) -> u64 {
        i - (i > self.primary) as u64
    }

    /// Occurrences of `c` in `BWT'[0..i)`, `i` in `0..=n+1`.
    #[inline(always)]
    pub fn rank(&self, c: u8, i: u64) -> u64 {
        let j = self.b_pos(i);
        let l = j / LINE_BASES;
        let line = &self.occ[l as usize];
        self.sup[(l / SUPER_LINES) as usize][c as usize]
            + line.counts[c as usize] as u64
            + line.count_before(c, (j % LINE_BASES) as u32)
    }

    /// Occurrences of every symbol in `BWT'[0..i)`, `i` in `0..=n+1`: one
    /// Occ line for all four (A is what the others leave of the prefix).
    #[inline(always)]
    pub fn rank4(&self, i: u64) -> [u64; 4] {
        let j = self.b_pos(i);
        let l = j / LINE_BASES;
        let line = &self.occ[l as usize];
        let sup = &self.sup[(l / SUPER_LINES) as usize];
        let r = (j % LINE_BASES) as u32;
        let c = line.count_before(1, r);
        let g = line.count_before(2, r);
        let t = line.count_before(3, r);
        let a = r as u64 - c - g - t;
        [
            sup[0] + line.counts[0] as u64 + a,
            sup[1] + line.counts[1] as u64 + c,
            sup[2] + line.counts[2] as u64 + g,
            sup[3] + line.counts[3] as u64 + t,
        ]
    }

    /// `BWT'[i]`, or `None` at the `$` row.
    #[inline]
    pub fn bwt(&self, i: u64) -> Option<u8> {
        if i == self.primary {
            return None;
        }
        let j = self.b_pos(i);
        Some(self.occ[(j / LINE_BASES) as usize].base((j % LINE_BASES) as u32))
    }

    /// LF mapping of a row other than `primary`: the row of the suffix one
    /// position to the left.
    #[inline(always)]
    pub fn lf(&self, i: u64) -> u64 {
        let j = self.b_pos(i);
        let l = j / LINE_BASES;
        let line = &self.occ[l as usize];
        let r = (j % LINE_BASES) as u32;
        let c = line.base(r);
        self.c[c as usize]
            + self.sup[(l / SUPER_LINES) as usize][c as usize]
            + line.counts[c as usize] as u64
            + line.count_before(c, r)
    }

    /// Hints the CPU to load the Occ line that a rank query at row `i` reads.
    #[inline(always)]
    pub fn prefetch(&self, i: u64) {
        let l = (self.b_pos(i) / LINE_BASES) as usize;
        #[cfg(target_arch = "x86_64")]
        if let Some(line) = self.occ.get(l) {
            // SAFETY: prefetching is a hint; the pointer is to a live element.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    (line as *const OccLine).cast(),
                );
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = l;
    }

    /// All rows (the empty pattern).
    pub fn full(&self) -> Interval {
        Interval {
            lo: 0,
            hi: self.n + 1,
        }
    }

    /// One backward-search step: prepend `c` to the pattern of `iv`.
    #[inline(always)]
    pub fn extend(&self, iv: Interval, c: u8) -> Interval {
        let base = self.c[c as usize];
        let (jlo, jhi) = (self.b_pos(iv.lo), self.b_pos(iv.hi));
        let l = jlo / LINE_BASES;
        if l == jhi / LINE_BASES {
            // Narrow intervals (most steps after the first dozen): one line.
            let line = &self.occ[l as usize];
            let before = base
                + self.sup[(l / SUPER_LINES) as usize][c as usize]
                + line.counts[c as usize] as u64;
            let (a, b) =
                line.count_before2(c, (jlo % LINE_BASES) as u32, (jhi % LINE_BASES) as u32);
            return Interval {
                lo: before + a,
                hi: before + b,
            };
        }
        Interval {
            lo: base + self.rank(c, iv.lo),
            hi: base + self.rank(c, iv.hi),
        }
    }

    /// Rows of the suffixes prefixed by `pattern` (codes 0..=3). The rows
    /// include only real suffixes: the `$` row never matches a non-empty
    /// pattern.
    pub fn backward_search(&self, pattern: &[u8]) -> Interval {
        let mut out = self.full();
        let search = BackwardSearch {
            job: (),
            len: pattern.len(),
            matched: 0,
            iv: self.full(),
        };
        self.backward_search_many(
            1,
            [search],
            |(), k| pattern[pattern.len() - 1 - k],
            |s| out = s.iv,
        );
        out
    }

    /// Backward searches of many patterns, `lanes` in lockstep
    /// (`lockstep`): each step prefetches the Occ lines of the next one.
    /// `code(job, k)` is the code prepended `k` bases in (the pattern's
    /// base `len - 1 - k`; above 3 it matches nothing); `done` gets each
    /// search as it ends: every base matched, or an empty interval.
    #[inline]
    pub fn backward_search_many<J: Copy>(
        &self,
        lanes: usize,
        searches: impl IntoIterator<Item = BackwardSearch<J>>,
        code: impl Fn(J, usize) -> u8,
        done: impl FnMut(BackwardSearch<J>),
    ) {
        let mut walks = Searches {
            fm: self,
            searches: searches.into_iter(),
            code,
            done,
        };
        lockstep(lanes, &mut walks);
    }
}

impl FmIndex<'_> {
    /// [`FmIndex::locate`] of many rows, `lanes` LF walks in lockstep
    /// (`lockstep`) with prefetching so that their cache misses overlap.
    /// `out[k]` is the position of `rows[k]`.
    pub fn locate_many(&self, rows: &[u64], lanes: usize, out: &mut Vec<u64>) {
        out.clear();
        out.resize(rows.len(), 0);
        let mut walks = Locates {
            fm: self,
            rows,
            next: 0,
            out,
        };
        lockstep(lanes, &mut walks);
    }

    /// The stored `SA'[i]` when row `i` is the sampled row of its block.
    #[inline(always)]
    pub fn sample_at(&self, i: u64) -> Option<u64> {
        let k = i >> self.sample_shift;
        (sample_row(k, self.sample_shift, self.n) == i).then(|| self.ssa.get(k as usize))
    }

    /// Where an LF walk that has taken `steps` steps and stands on row `i`
    /// ends: the text position of its start if `i` is sampled or the `$`
    /// row, else `None` (walk on). `u64::MAX`, a position no segment holds,
    /// once the walk is longer than the text: only a crafted index whose LF
    /// has a cycle without samples gets there.
    #[inline(always)]
    pub fn walk_end(&self, i: u64, steps: u64) -> Option<u64> {
        if let Some(p) = self.sample_at(i) {
            Some(p + steps)
        } else if i == self.primary {
            Some(steps)
        } else if steps > self.n {
            Some(u64::MAX)
        } else {
            None
        }
    }

    /// `SA'[i]`: the text position of row `i`, by LF-walking to a sampled row.
    #[inline]
    pub fn locate(&self, i: u64) -> u64 {
        self.locate_walk(i).0
    }

    /// [`FmIndex::locate`], and the LF steps its walk took.
    #[inline]
    pub fn locate_walk(&self, mut i: u64) -> (u64, u64) {
        let mut steps = 0;
        loop {
            if let Some(pos) = self.walk_end(i, steps) {
                return (pos, steps);
            }
            i = self.lf(i);
            steps += 1;
        }
    }
}
