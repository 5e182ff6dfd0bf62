// Prepended by fmalign (src/gpu/mod.rs) to every kernel source in gpu/
// before NVRTC compiles it: the kernels include no headers, because the
// NVRTC of PyPI ships none.
//
// Conventions of every kernel:
// * element counts are u64 and loops are grid-stride, so any launch covers
//   any n;
// * extern "C" names end in the element types they take (`_u32`, `_u64_u32`):
//   one instance per type the Rust side uses (src/sa/cuda/);
// * a rank layout is (layout, n0): 0 identity, 1 interleaved, 2 split
//   (steps::RankLayout).

typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;

#define FULL_MASK 0xffffffffu
#define THREADS 256
#define WARPS (THREADS / 32)

#define GRID_STRIDE(i, n)                                                   \
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < (u64)(n); \
         i += (u64)blockDim.x * gridDim.x)

__device__ __forceinline__ u64 slot_of(u64 p, u32 layout, u64 n0) {
    if (layout == 0) return p;
    if (layout == 1) return 2 * (p / 3) + p % 3 - 1;
    return p % 3 == 1 ? p / 3 : n0 + p / 3;
}

// Base p (0..=3) of a text packed 32 bases a word, first base in the top bits.
__device__ __forceinline__ u64 base_at(const u64* packed, u64 p) {
    return (packed[p / 32] >> (62 - 2 * (p % 32))) & 3;
}

// Character p as the comparisons read it: base + 1, 0 at or past the end.
__device__ __forceinline__ u64 char_at(const u64* packed, u64 n, u64 p) {
    return p < n ? base_at(packed, p) + 1 : 0;
}

// 32 bases from p, first base in the top bits (steps::packed_word). Reads
// packed[p/32 + 1], which exists (one spare zero word at the end).
__device__ __forceinline__ u64 packed_word(const u64* packed, u64 p) {
    u64 w = p / 32;
    u32 s = (u32)(2 * (p % 32));
    u64 hi = packed[w] << s;
    return s == 0 ? hi : hi | (packed[w + 1] >> (64 - s));
}

// The text key of steps::Backend::text_keys: k bases (A past the end), then
// min(n - p, k) in lbits bits.
__device__ __forceinline__ u64 text_key(const u64* packed, u64 n, u64 p, u32 k, u32 lbits) {
    u64 chars = packed_word(packed, p) >> (64 - 2 * k);
    u64 len = n - p < (u64)k ? n - p : (u64)k;
    if (len < k) chars &= ~((1ull << (2 * ((u64)k - len))) - 1);
    return (chars << lbits) | len;
}

// Exclusive scan across a block of THREADS threads; *total gets the block sum.
template <typename T>
__device__ __forceinline__ T block_exclusive_scan(T v, T* total) {
    __shared__ T sums[WARPS];
    u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    T x = v;
#pragma unroll
    for (u32 o = 1; o < 32; o <<= 1) {
        T y = __shfl_up_sync(FULL_MASK, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        T s = lane < WARPS ? sums[lane] : (T)0;
#pragma unroll
        for (u32 o = 1; o < WARPS; o <<= 1) {
            T y = __shfl_up_sync(FULL_MASK, s, o);
            if (lane >= o) s += y;
        }
        if (lane < WARPS) sums[lane] = s;
    }
    __syncthreads();
    T before = warp == 0 ? (T)0 : sums[warp - 1];
    *total = sums[WARPS - 1];
    __syncthreads();
    return before + x - v;
}

// A difference cover of period v (a power of two), as steps::CoverSample:
// the smallest k < v with (i + k) mod v and (j + k) mod v both in the cover
// (steps::cover_delta).
__device__ __forceinline__ u64 cover_delta(u64 v, const u32* start, const u32* pairs, u64 i,
                                           u64 j) {
    u64 mask = v - 1, ri = i & mask, rj = j & mask;
    u64 e = (rj + v - ri) & mask;
    u64 best = v;
    for (u32 x = start[e]; x < start[e + 1]; x++) {
        u64 d = ((u64)pairs[x] + v - ri) & mask;
        if (d < best) best = d;
    }
    return best;
}

// Rank of the sampled suffix at q (q mod v in the cover); 0 at or past n.
__device__ __forceinline__ u64 cover_rank(const u32* rank, const u32* index, u64 v, u64 size,
                                          u64 n, u64 q) {
    return q >= n ? 0 : (u64)rank[(q / v) * size + index[q & (v - 1)]];
}

// The row of sample k of the suffix array (n + 1 rows, rate 2^shift): one
// row per block of 2^shift rows, at an offset drawn from k by MurmurHash3's
// 64-bit finalizer (row 0 for block 0 and rate 1), modulo the size of a
// short last block. The same as fm::sample_row (index_format/SPEC.md 5.3).
__device__ __forceinline__ u64 sample_row(u64 k, u32 shift, u64 n) {
    u64 first = k << shift;
    if (shift == 0 || k == 0) return first;
    u64 h = k;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    u64 offset = h >> (64 - shift);
    u64 block = 1ull << shift;
    u64 size = n + 1 - first < block ? n + 1 - first : block;
    return first + (size < block ? offset % size : offset);
}
