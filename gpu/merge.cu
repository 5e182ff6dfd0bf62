// Merge of two sorted arrays by merge path: each thread owns CHUNK outputs,
// finds where its diagonal crosses the path by binary search, then merges
// its CHUNK elements sequentially. `first(x, y)`: x (from a) goes before y
// (from b).
//
// Orders (steps::Order): ascending (ties: a first), and the DC3 comparison of
// a suffix i (i % 3 == 0, from a) with j (j % 3 != 0, from b), with ranks of
// the positions p % 3 != 0 (0 at or past the end) and characters either from
// the packed text or one word a symbol; and the order of any two suffixes by
// a difference-cover sample (the blockwise sort of a part).

#define CHUNK 16

template <typename W, typename First>
__device__ void merge_path(const W* a, u64 na, const W* b, u64 nb, W* out, First first) {
    u64 total = na + nb;
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 start = t * CHUNK;
    if (start >= total) return;
    u64 end = start + CHUNK < total ? start + CHUNK : total;
    u64 lo = start > nb ? start - nb : 0, hi = start < na ? start : na;
    while (lo < hi) {
        u64 mid = (lo + hi) / 2;
        if (first(a[mid], b[start - mid - 1])) lo = mid + 1;
        else hi = mid;
    }
    u64 i = lo, j = start - lo;
    for (u64 k = start; k < end; k++) {
        bool take_a = j >= nb || (i < na && first(a[i], b[j]));
        out[k] = take_a ? a[i++] : b[j++];
    }
}

template <typename W>
struct Ascending {
    __device__ bool operator()(W x, W y) const { return !(y < x); }
};

// Characters: packed text (syms == 0) or symbols (already >= 1).
template <typename W>
struct Dc3 {
    const u64* packed;
    const W* syms;
    u64 n;
    const W* rank;
    u32 layout;
    u64 n0;
    __device__ u64 c(u64 p) const {
        if (p >= n) return 0;
        return syms ? (u64)syms[p] : base_at(packed, p) + 1;
    }
    __device__ u64 r(u64 p) const { return p < n ? (u64)rank[slot_of(p, layout, n0)] : 0; }
    __device__ bool operator()(W xi, W yj) const {
        u64 i = xi, j = yj;
        u64 ci = c(i), cj = c(j);
        if (ci != cj) return ci < cj;
        if (j % 3 == 1) return r(i + 1) < r(j + 1);
        u64 ci1 = c(i + 1), cj1 = c(j + 1);
        if (ci1 != cj1) return ci1 < cj1;
        return r(i + 2) < r(j + 2);
    }
};

// The order of any two suffixes by a difference-cover sample
// (steps::Order::Cover, steps::cover_cmp): their first cover_delta(i, j)
// bases, a proper prefix first, then the sample's ranks there.
template <typename W>
struct Cover {
    const u64* packed;
    u64 n;
    u64 v;
    u64 size;
    const u32* rank;
    const u32* index;
    const u32* start;
    const u32* pairs;
    __device__ bool operator()(W x, W y) const {
        u64 i = x, j = y;
        if (i == j) return true;
        u64 k = cover_delta(v, start, pairs, i, j);
        u64 li = n - i < k ? n - i : k, lj = n - j < k ? n - j : k;
        u64 l = li < lj ? li : lj;
        for (u64 o = 0; o < l; o += 32) {
            u64 rem = l - o < 32 ? l - o : 32;
            u64 mask = rem == 32 ? ~0ull : ~(~0ull >> (2 * rem));
            u64 a = packed_word(packed, i + o) & mask, b = packed_word(packed, j + o) & mask;
            if (a != b) return a < b;
        }
        if (li != lj) return li < lj;
        return cover_rank(rank, index, v, size, n, i + k) <
               cover_rank(rank, index, v, size, n, j + k);
    }
};

#define MERGE(W)                                                                          \
    extern "C" __global__ void merge_asc_##W(const W* a, u64 na, const W* b, u64 nb,      \
                                             W* out) {                                    \
        merge_path<W>(a, na, b, nb, out, Ascending<W>());                                 \
    }                                                                                     \
    extern "C" __global__ void merge_dc3_##W(const W* a, u64 na, const W* b, u64 nb,      \
                                             const u64* packed, const W* syms, u64 n,     \
                                             const W* rank, u32 layout, u64 n0, W* out) { \
        Dc3<W> f = {packed, syms, n, rank, layout, n0};                                   \
        merge_path<W>(a, na, b, nb, out, f);                                              \
    }                                                                                     \
    extern "C" __global__ void merge_cover_##W(                                           \
        const W* a, u64 na, const W* b, u64 nb, const u64* packed, u64 n, u64 v, u64 size, \
        const u32* rank, const u32* index, const u32* start, const u32* pairs, W* out) {   \
        Cover<W> f = {packed, n, v, size, rank, index, start, pairs};                     \
        merge_path<W>(a, na, b, nb, out, f);                                              \
    }

MERGE(u32)
MERGE(u64)
