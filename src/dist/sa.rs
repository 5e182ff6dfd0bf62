//! Distributed suffix array by prefix doubling (Flick & Aluru, "Parallel
//! distributed memory construction of suffix and longest common prefix
//! arrays", SC 2015), over the collectives of [`Comm`].
//!
//! Rank `r` of `p` owns the text positions of [`block`]`(n, p, r)` and holds
//! only those bases plus the [`KEY_CHARS`] after them, and their ranks. The
//! first round sorts all suffixes by their first `KEY_CHARS` bases (packed
//! into a `u64` with the length field of the CPU algorithms,
//! `sa::steps::Backend::text_keys`); every later round takes only the
//! suffixes **not yet alone in their group** — Flick & Aluru's
//! optimisation, which on a genome leaves a few percent after the first
//! round — as tuples `(rank of i, rank of i + h, i)`, sorts them across all
//! ranks (a sample sort: local sort, regular samples, splitters, one
//! all-to-all), gives each the rank 1 + slot of the first suffix of its new
//! group, sends the ranks to the owners of the positions, and doubles `h`.
//! A suffix alone in its group has its final slot: it is kept, with the
//! slot, on the rank that found it, and when no group is left every rank
//! sends its finished suffixes to the owners of their slots. The result,
//! each rank's [`block`] of the suffix array, is exactly libsais' suffix
//! array whatever `p` is.

use super::Comm;

/// Bases in the first sort key (2 bits each and a 5-bit length: 59 bits).
pub const KEY_CHARS: u64 = 27;

/// Positions owned by rank `r` of `p`: `[n r / p, n (r + 1) / p)`.
pub fn block(n: u64, p: usize, r: usize) -> (u64, u64) {
    let at = |k: usize| (n as u128 * k as u128 / p as u128) as u64;
    (at(r), at(r + 1))
}

/// The rank owning position `i < n`.
pub fn owner(n: u64, p: usize, i: u64) -> usize {
    let mut r = ((i as u128 * p as u128) / n.max(1) as u128) as usize;
    r = r.min(p - 1);
    while r + 1 < p && block(n, p, r + 1).0 <= i {
        r += 1;
    }
    while block(n, p, r).0 > i {
        r -= 1;
    }
    r
}

/// [`owner`] for many positions: the blocks' starts, searched.
pub struct Owners {
    starts: Vec<u64>,
}

impl Owners {
    /// The blocks of `n` positions over `p` ranks.
    pub fn new(n: u64, p: usize) -> Self {
        Owners {
            starts: (0..p).map(|r| block(n, p, r).0).collect(),
        }
    }

    /// The rank owning position `i` (`i < n`).
    pub fn of(&self, i: u64) -> usize {
        self.starts.partition_point(|&s| s <= i) - 1
    }
}

type Tuple = [u64; 3];

/// Sorts tuples across the group: returns this rank's slice of the global
/// order (tuples are distinct, so the order is total and the slices do not
/// depend on timing).
fn sample_sort<C: Comm>(comm: &C, mut v: Vec<Tuple>) -> Vec<Tuple> {
    let p = comm.size();
    v.sort_unstable();
    if p == 1 {
        return v;
    }
    let samples: Vec<Tuple> = if v.is_empty() {
        Vec::new()
    } else {
        (1..p).map(|k| v[k * v.len() / p]).collect()
    };
    let mut all: Vec<Tuple> = comm
        .alltoallv(vec![samples; p])
        .into_iter()
        .flatten()
        .collect();
    all.sort_unstable();
    let splitters: Vec<Tuple> = if all.is_empty() {
        Vec::new()
    } else {
        (1..p).map(|k| all[k * all.len() / p]).collect()
    };
    let mut parts = vec![Vec::new(); p];
    for t in v {
        parts[splitters.partition_point(|s| *s <= t)].push(t);
    }
    let mut out: Vec<Tuple> = comm.alltoallv(parts).into_iter().flatten().collect();
    // p sorted runs: the stable sort finds and merges them.
    out.sort();
    out
}

/// What [`refine`] finds for one sorted tuple.
struct Refined {
    /// Text position.
    pos: u64,
    /// New rank: 1 + the global slot of the first suffix of its new group.
    rank: u64,
    /// Alone in its new group: the rank is its final slot + 1.
    single: bool,
}

/// New ranks of globally sorted tuples `[old rank, next rank, position]`:
/// the tuples of one old group (equal `t[0]`, which is 1 + the group's first
/// slot) are now split by `t[1]`, so a tuple's new rank is its old rank plus
/// the distance from the head of its old group to the head of its new one.
/// Also returns, over all ranks, the tuples not yet alone and the groups
/// they form.
fn refine<C: Comm>(comm: &C, sorted: &[Tuple]) -> (Vec<Refined>, u64, u64) {
    let me = comm.rank();
    let counts = comm.allgather(sorted.len() as u64);
    let off: u64 = counts[..me].iter().sum();
    // The neighbours across rank boundaries: the last tuple of the nearest
    // non-empty rank before me, the first of the nearest one after me.
    let key = |t: &Tuple| [1, t[0], t[1]];
    let lasts = comm.allgather(sorted.last().map_or([0; 3], key));
    let firsts = comm.allgather(sorted.first().map_or([0; 3], key));
    let prev = lasts[..me].iter().rev().find(|l| l[0] == 1).copied();
    let next = firsts[me + 1..].iter().find(|f| f[0] == 1).copied();
    let k = |j: usize| key(&sorted[j]);
    let before = |j: usize| if j == 0 { prev } else { Some(k(j - 1)) };
    let after = |j: usize| {
        if j + 1 == sorted.len() {
            next
        } else {
            Some(k(j + 1))
        }
    };
    let group_head = |j: usize| before(j).is_none_or(|b| b[1] != k(j)[1]);
    let head = |j: usize| before(j) != Some(k(j));
    // Global index of the last (group, new group) head at or before each of
    // my tuples, carried in from the ranks before me.
    let last_of = |f: &dyn Fn(usize) -> bool| {
        (0..sorted.len())
            .rev()
            .find(|&j| f(j))
            .map_or([0, 0], |j| [1, off + j as u64])
    };
    let carried = |mine: [u64; 2]| {
        comm.allgather(mine)[..me]
            .iter()
            .rev()
            .find(|s| s[0] == 1)
            .map_or(0, |s| s[1])
    };
    let mut gh = carried(last_of(&group_head));
    let mut sh = carried(last_of(&head));
    let mut out = Vec::with_capacity(sorted.len());
    let (mut open, mut groups) = (0u64, 0u64);
    for (j, t) in sorted.iter().enumerate() {
        let at = off + j as u64;
        if group_head(j) {
            gh = at;
        }
        let is_head = head(j);
        if is_head {
            sh = at;
        }
        let single = is_head && after(j) != Some(k(j));
        if !single {
            open += 1;
            groups += u64::from(is_head);
        }
        out.push(Refined {
            pos: t[2],
            rank: t[0] + (sh - gh),
            single,
        });
    }
    let open = comm.allgather(open).iter().sum();
    let groups = comm.allgather(groups).iter().sum();
    (out, open, groups)
}

/// Sends `(position, value)` pairs to the owners of the positions, which
/// store the values in `local` (indexed from `lo`).
fn to_owners<C: Comm>(comm: &C, n: u64, pairs: &[[u64; 2]], lo: u64, local: &mut [u64]) {
    let p = comm.size();
    let own = Owners::new(n, p);
    let mut parts = vec![Vec::new(); p];
    for &pv in pairs {
        parts[own.of(pv[0])].push(pv);
    }
    for pv in comm.alltoallv(parts).into_iter().flatten() {
        local[(pv[0] - lo) as usize] = pv[1];
    }
}

/// For each position `q` of `at`, `local[q − lo]` on the rank owning `q`
/// (`missing` for `q >= n`): one all-to-all of the questions, one of the
/// answers, read back in the order asked. `local` holds this rank's
/// positions from `lo`.
fn fetch<C: Comm, T: bytemuck::Pod + Send>(
    comm: &C,
    n: u64,
    local: &[T],
    lo: u64,
    at: &[u64],
    missing: T,
) -> Vec<T> {
    let p = comm.size();
    let own = Owners::new(n, p);
    let mut asks = vec![Vec::new(); p];
    for &q in at {
        if q < n {
            asks[own.of(q)].push(q);
        }
    }
    let asked = comm.alltoallv(asks);
    let answers: Vec<Vec<T>> = asked
        .into_iter()
        .map(|qs| qs.into_iter().map(|q| local[(q - lo) as usize]).collect())
        .collect();
    let got = comm.alltoallv(answers);
    let mut cursor = vec![0usize; p];
    at.iter()
        .map(|&q| {
            if q < n {
                let o = own.of(q);
                cursor[o] += 1;
                got[o][cursor[o] - 1]
            } else {
                missing
            }
        })
        .collect()
}

/// The first sort key of suffix `i`: `KEY_CHARS` bases (A past the end),
/// then `min(n - i, KEY_CHARS)` in 5 bits. `text` holds positions
/// `lo..min(n, hi + KEY_CHARS)` (codes 0..=3).
fn first_key(text: &[u8], lo: u64, n: u64, i: u64) -> u64 {
    let len = (n - i).min(KEY_CHARS);
    let mut key = 0u64;
    for k in 0..KEY_CHARS {
        let c = if k < len {
            text[(i + k - lo) as usize] as u64
        } else {
            0
        };
        key = key << 2 | c;
    }
    key << 5 | len
}

/// [`first_key`] of every position `lo..hi`, rolling the bases through a
/// window (the last `KEY_CHARS` positions of the text one by one).
fn first_keys(text: &[u8], lo: u64, hi: u64, n: u64) -> Vec<u64> {
    let full = n.saturating_sub(KEY_CHARS - 1).clamp(lo, hi);
    let mask = (1u64 << (2 * KEY_CHARS)) - 1;
    let mut out = Vec::with_capacity((hi - lo) as usize);
    if full > lo {
        let mut w = first_key(text, lo, n, lo) >> 5;
        out.push(w << 5 | KEY_CHARS);
        for i in lo + 1..full {
            let c = u64::from(text[(i + KEY_CHARS - 1 - lo) as usize]);
            w = (w << 2 | c) & mask;
            out.push(w << 5 | KEY_CHARS);
        }
    }
    out.extend((full..hi).map(|i| first_key(text, lo, n, i)));
    out
}

/// This rank's slice of the suffix array of a text of `n` bases; `text`
/// holds this rank's block of positions ([`block`]) and the following
/// `KEY_CHARS` bases (fewer at the end of the text). The slices of ranks
/// `0..p`, concatenated, are the suffix array; rank `r` holds the slots of
/// [`block`]`(n, p, r)`. `log` gets one line per round: (h, suffixes not
/// yet alone in their group, their groups).
pub fn suffix_array<C: Comm>(
    comm: &C,
    n: u64,
    text: &[u8],
    log: &mut dyn FnMut(u64, u64, u64),
) -> Vec<u64> {
    let (p, me) = (comm.size(), comm.rank());
    let (lo, hi) = block(n, p, me);
    assert_eq!(
        text.len() as u64,
        (hi + KEY_CHARS).min(n) - lo,
        "rank {me}: the text slice must hold its block and the {KEY_CHARS} bases after it"
    );
    // Every suffix starts in one group (old rank 1) and is split by its
    // first KEY_CHARS bases; then only the suffixes not yet alone in their
    // group take part in a round, by (rank, rank of the suffix h on).
    let mut tuples: Vec<Tuple> = first_keys(text, lo, hi, n)
        .into_iter()
        .zip(lo..hi)
        .map(|(k, i)| [1, k, i])
        .collect();
    let mut isa = vec![0u64; (hi - lo) as usize];
    let mut done: Vec<[u64; 2]> = Vec::new();
    let mut h = KEY_CHARS;
    loop {
        let sorted = sample_sort(comm, tuples);
        let (refined, open, groups) = refine(comm, &sorted);
        drop(sorted);
        log(h, open, groups);
        let pairs: Vec<[u64; 2]> = refined.iter().map(|r| [r.pos, r.rank]).collect();
        to_owners(comm, n, &pairs, lo, &mut isa);
        drop(pairs);
        done.extend(refined.iter().filter(|r| r.single).map(|r| [r.rank, r.pos]));
        if open == 0 {
            break;
        }
        let (rank, pos): (Vec<u64>, Vec<u64>) = refined
            .iter()
            .filter(|r| !r.single)
            .map(|r| (r.rank, r.pos))
            .unzip();
        drop(refined);
        let ahead: Vec<u64> = pos.iter().map(|&q| q + h).collect();
        let next = fetch(comm, n, &isa, lo, &ahead, 0);
        tuples = (0..pos.len()).map(|j| [rank[j], next[j], pos[j]]).collect();
        h *= 2;
    }
    drop(isa);
    // Slot `rank - 1` of the suffix array goes to the rank owning it (the
    // slots are spread like the positions, by `block`).
    let own = Owners::new(n, p);
    let mut parts = vec![Vec::new(); p];
    for rp in done {
        parts[own.of(rp[0] - 1)].push(rp);
    }
    let mut mine: Vec<[u64; 2]> = comm.alltoallv(parts).into_iter().flatten().collect();
    mine.sort_unstable();
    mine.into_iter().map(|rp| rp[1]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::LocalComm;

    fn distributed(text: &[u8], p: usize) -> Vec<u64> {
        let n = text.len() as u64;
        let parts = LocalComm::run(p, |c| {
            let (lo, hi) = block(n, p, c.rank());
            let end = (hi + KEY_CHARS).min(n);
            suffix_array(c, n, &text[lo as usize..end as usize], &mut |_, _, _| {})
        });
        parts.into_iter().flatten().collect()
    }

    #[test]
    fn rolling_first_keys_equal_first_key() {
        let mut x = 5u64;
        let text: Vec<u8> = (0..300)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                (x >> 62) as u8
            })
            .collect();
        for n in [0u64, 1, 26, 27, 28, 100, 300] {
            for p in [1, 2, 5, 40] {
                for r in 0..p {
                    let (lo, hi) = block(n, p, r);
                    let t = &text[lo as usize..(hi + KEY_CHARS).min(n) as usize];
                    let want: Vec<u64> = (lo..hi).map(|i| first_key(t, lo, n, i)).collect();
                    assert_eq!(first_keys(t, lo, hi, n), want, "n {n} p {p} r {r}");
                }
            }
        }
    }

    #[test]
    fn owner_inverts_block() {
        for n in [1u64, 2, 7, 100, 1001] {
            for p in 1..=9 {
                for i in 0..n {
                    let r = owner(n, p, i);
                    assert_eq!(Owners::new(n, p).of(i), r);
                    let (lo, hi) = block(n, p, r);
                    assert!(lo <= i && i < hi, "n {n} p {p} i {i} -> {r}");
                }
            }
        }
    }

    #[test]
    fn equals_a_brute_force_sort_for_any_rank_count() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut texts: Vec<Vec<u8>> = vec![
            vec![],
            vec![2],
            vec![0; 3],
            vec![0; 500],
            (0..600).map(|i| [0u8, 1, 0, 3][i % 4]).collect(),
        ];
        for len in [5usize, 30, 57, 1000, 3000] {
            texts.push((0..len).map(|_| (next() % 4) as u8).collect());
            texts.push((0..len).map(|_| (next() % 2) as u8).collect());
        }
        // Tandem repeats with a mutation.
        let unit: Vec<u8> = (0..37).map(|_| (next() % 4) as u8).collect();
        let mut t: Vec<u8> = unit.iter().cycle().take(2500).copied().collect();
        t[1200] = (t[1200] + 1) % 4;
        texts.push(t);
        for text in &texts {
            let want = crate::sa::naive(text);
            for p in [1, 2, 3, 4, 8] {
                assert_eq!(distributed(text, p), want, "n {} p {p}", text.len());
            }
        }
    }
}

/// The BWT of this rank's slice of the suffix array (as returned by
/// [`suffix_array`]): for each entry `s`, the base before it, `T[s − 1]`
/// (fetched from its owner), and for `s = 0` the code 4 (`$`); rank 0's
/// starts with row 0 of `SA'`, the empty suffix, whose base is `T[n − 1]`. Also the
/// global `primary` row (`1 +` the index of the entry 0 in the suffix array,
/// as in SPEC.md §5.2) and the counts of A, C, G, T over all ranks, from
/// which `C` follows. Concatenated over ranks with the 4 removed, the BWTs
/// are the `B` of the index.
pub fn bwt<C: Comm>(comm: &C, n: u64, text: &[u8], sa: &[u64]) -> (Vec<u8>, u64, [u64; 4]) {
    let (p, me) = (comm.size(), comm.rank());
    let (lo, _) = block(n, p, me);
    // Text positions whose base each output row needs (`n` stands for `$`):
    // the empty suffix's row first on rank 0.
    let before: Vec<u64> = (me == 0 && n > 0)
        .then_some(n)
        .into_iter()
        .chain(sa.iter().copied())
        .map(|s| if s == 0 { n } else { s - 1 })
        .collect();
    // `$` (code 4) for the row of the suffix starting at 0.
    let bwt = fetch(comm, n, text, lo, &before, 4u8);
    let mut counts = [0u64; 4];
    for &c in bwt.iter().filter(|&&c| c < 4) {
        counts[c as usize] += 1;
    }
    let off: u64 = comm.allgather(sa.len() as u64)[..me].iter().sum();
    let mine = sa
        .iter()
        .position(|&s| s == 0)
        .map_or(0, |j| off + j as u64 + 1);
    let primary = comm.allgather(mine).into_iter().max().unwrap_or(0);
    let mut total = [0u64; 4];
    for c in comm.allgather(counts) {
        for k in 0..4 {
            total[k] += c[k];
        }
    }
    (bwt, primary, total)
}

#[cfg(test)]
mod bwt_tests {
    use super::*;
    use crate::dist::LocalComm;

    #[test]
    fn bwt_primary_and_counts_equal_the_single_process_ones() {
        let mut x = 7u64;
        for len in [1usize, 2, 10, 193, 2000] {
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (x >> 62) as u8
                })
                .collect();
            let n = len as u64;
            let sa = crate::sa::naive(&text);
            let primary = 1 + sa.iter().position(|&s| s == 0).unwrap() as u64;
            // B: BWT' without `$`; row 0 (the empty suffix) has T[n - 1].
            let b: Vec<u8> = std::iter::once(text[len - 1])
                .chain(sa.iter().filter(|&&s| s > 0).map(|&s| text[s as usize - 1]))
                .collect();
            let mut counts = [0u64; 4];
            for &c in &text {
                counts[c as usize] += 1;
            }
            for p in [1, 2, 3, 5, 8] {
                let parts = LocalComm::run(p, |c| {
                    let (lo, hi) = block(n, p, c.rank());
                    let slice = &text[lo as usize..(hi + KEY_CHARS).min(n) as usize];
                    let sa = suffix_array(c, n, slice, &mut |_, _, _| {});
                    bwt(c, n, slice, &sa)
                });
                let got: Vec<u8> = parts
                    .iter()
                    .flat_map(|t| t.0.iter().copied())
                    .filter(|&c| c < 4)
                    .collect();
                assert_eq!(got, b, "n {n} p {p}: B");
                for t in &parts {
                    assert_eq!(
                        (t.1, t.2),
                        (primary, counts),
                        "n {n} p {p}: primary, counts"
                    );
                }
            }
        }
    }
}

/// A rank's share of the FM tables, from its BWT slice ([`bwt`]) and its
/// suffix-array slice: the Occ lines it owns (lines are spread over the
/// ranks by [`block`], so a line's bases may come from two ranks) with their
/// counts relative to the superblock, as in the index; every superblock's
/// counts (the same on every rank); and its sampled-SA entries as (index,
/// position). Concatenated over ranks they are `build::fm_from_sa`'s tables.
pub struct FmShare {
    /// Index of the first line owned.
    pub first_line: u64,
    /// The lines owned.
    pub occ: Vec<crate::fm::OccLine>,
    /// Counts of A, C, G, T before each superblock.
    pub sup: Vec<[u64; 4]>,
    /// `(k, SA'[fm::sample_row(k)])` for this rank's sampled rows.
    pub ssa: Vec<(u64, u64)>,
}

/// [`FmShare`] of this rank; `bwt` and `sa` as returned by [`bwt`] and
/// [`suffix_array`].
pub fn fm_share<C: Comm>(comm: &C, n: u64, bwt: &[u8], sa: &[u64], shift: u32) -> FmShare {
    use crate::fm::{LINE_BASES, OccLine, SUPER_LINES};
    let (p, me) = (comm.size(), comm.rank());
    let lines = n / LINE_BASES + 1;
    // B (the BWT without `$`) is the concatenation of the slices minus the 4.
    let b: Vec<u8> = bwt.iter().copied().filter(|&c| c < 4).collect();
    let b_start: u64 = comm.allgather(b.len() as u64)[..me].iter().sum();
    let own = Owners::new(lines, p);
    let mut parts = vec![Vec::new(); p];
    for (k, &c) in b.iter().enumerate() {
        let q = b_start + k as u64;
        parts[own.of(q / LINE_BASES)].push(q << 2 | c as u64);
    }
    let (l0, l1) = block(lines, p, me);
    let mut occ = vec![OccLine::default(); (l1 - l0) as usize];
    for v in comm.alltoallv(parts).into_iter().flatten() {
        let (q, c) = (v >> 2, (v & 3) as u8);
        occ[(q / LINE_BASES - l0) as usize].push(q % LINE_BASES, c);
    }
    // Counts before my first line: the totals of the ranks before me.
    /// `acc += add`, per symbol.
    fn add4(acc: &mut [u64; 4], add: impl IntoIterator<Item = u64>) {
        for (a, x) in acc.iter_mut().zip(add) {
            *a += x;
        }
    }
    let mut mine = [0u64; 4];
    for line in &occ {
        add4(&mut mine, line.counts.map(u64::from));
    }
    let mut before = [0u64; 4];
    for t in &comm.allgather(mine)[..me] {
        add4(&mut before, *t);
    }
    // Global counts before each of my lines; superblock starts among them.
    let mut at = before;
    let mut local = Vec::with_capacity(occ.len());
    let mut starts = Vec::new();
    for (k, line) in occ.iter().enumerate() {
        let l = l0 + k as u64;
        if l.is_multiple_of(SUPER_LINES) {
            starts.push([l / SUPER_LINES, at[0], at[1], at[2], at[3]]);
        }
        local.push(at);
        add4(&mut at, line.counts.map(u64::from));
    }
    let mut sup_all: Vec<[u64; 5]> = comm
        .alltoallv(vec![starts; p])
        .into_iter()
        .flatten()
        .collect();
    sup_all.sort_unstable();
    let sup: Vec<[u64; 4]> = sup_all.iter().map(|s| [s[1], s[2], s[3], s[4]]).collect();
    for (k, line) in occ.iter_mut().enumerate() {
        let l = l0 + k as u64;
        let base = sup[(l / SUPER_LINES) as usize];
        for c in 0..4 {
            line.counts[c] = (local[k][c] - base[c]) as u32;
        }
    }
    // Sampled rows: row 0 (the empty suffix, position n) on rank 0, then
    // row 1 + global index of each SA entry.
    let off: u64 = comm.allgather(sa.len() as u64)[..me].iter().sum();
    let mut ssa: Vec<(u64, u64)> = Vec::new();
    if me == 0 {
        ssa.push((0, n));
    }
    let rows = 1 + off..1 + off + sa.len() as u64;
    for row in crate::fm::sampled_rows(rows.start, rows.end, shift, n) {
        ssa.push((row >> shift, sa[(row - rows.start) as usize]));
    }
    FmShare {
        first_line: l0,
        occ,
        sup,
        ssa,
    }
}

#[cfg(test)]
mod fm_tests {
    use super::*;
    use crate::dist::LocalComm;

    #[test]
    fn occ_sup_and_ssa_equal_fm_from_sa() {
        let mut x = 11u64;
        for len in [1usize, 2, 191, 192, 193, 1000, 2500] {
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (x >> 62) as u8
                })
                .collect();
            let n = len as u64;
            let sa: Vec<u32> = crate::sa::naive(&text).iter().map(|&s| s as u32).collect();
            for shift in [0u32, 2, 5] {
                let want = crate::tables::fm_from_sa(&text, &sa, shift);
                for p in [1, 2, 3, 8] {
                    let shares = LocalComm::run(p, |c| {
                        let (lo, hi) = block(n, p, c.rank());
                        let slice = &text[lo as usize..(hi + KEY_CHARS).min(n) as usize];
                        let sa = suffix_array(c, n, slice, &mut |_, _, _| {});
                        let (b, _, _) = bwt(c, n, slice, &sa);
                        fm_share(c, n, &b, &sa, shift)
                    });
                    let mut next_line = 0;
                    let mut occ = Vec::new();
                    let mut ssa = Vec::new();
                    for s in &shares {
                        assert_eq!(s.first_line, next_line, "n {n} p {p}: lines in order");
                        next_line += s.occ.len() as u64;
                        occ.extend_from_slice(&s.occ);
                        ssa.extend_from_slice(&s.ssa);
                        assert_eq!(s.sup, want.sup, "n {n} p {p}: superblocks");
                    }
                    assert!(occ == want.occ, "n {n} p {p} shift {shift}: Occ lines");
                    ssa.sort_unstable();
                    let got: Vec<u64> = ssa.iter().map(|&(_, v)| v).collect();
                    let want_ssa: Vec<u64> = want.ssa.iter().map(|&v| v as u64).collect();
                    assert_eq!(got, want_ssa, "n {n} p {p} shift {shift}: sampled SA");
                }
            }
        }
    }
}
