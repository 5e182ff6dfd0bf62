// Stable LSD radix sort of (key, value) pairs, one digit of up to 8 bits a
// pass, reduce-then-scan:
// 1. radix_hist: per tile (RTILE elements), a count per digit, stored
//    digit-major (counts[d * tiles + t]);
// 2. the exclusive scan of scan.cu over those counts (scan_tiles_u64,
//    scan_carries, scan_apply_u64, all on the device, no copy to the host):
//    each (digit, tile) then holds its first output slot;
// 3. radix_scatter: each tile sorts itself by the digit in shared memory
//    (one stable 1-bit split a bit, a block scan each) and writes every
//    element to its slot: offset of (digit, tile) + its place among the
//    tile's elements of that digit. Stable because tiles and splits are.

#define RITEMS 8
#define RTILE (THREADS * RITEMS)
#define RADIX 256

#define RADIX_HIST(K)                                                                    \
    extern "C" __global__ void radix_hist_##K(const K* keys, u64 n, u32 shift, u32 width, \
                                              u64 tiles, u64* counts) {                  \
        __shared__ u32 h[RADIX];                                                         \
        for (u32 d = threadIdx.x; d < RADIX; d += THREADS) h[d] = 0;                     \
        __syncthreads();                                                                 \
        u64 base = (u64)blockIdx.x * RTILE;                                              \
        u64 mask = (1ull << width) - 1;                                                  \
        for (u32 j = threadIdx.x; j < RTILE; j += THREADS)                               \
            if (base + j < n) atomicAdd(&h[((u64)keys[base + j] >> shift) & mask], 1u);  \
        __syncthreads();                                                                 \
        for (u32 d = threadIdx.x; d < (1u << width); d += THREADS)                       \
            counts[(u64)d * tiles + blockIdx.x] = h[d];                                  \
    }

RADIX_HIST(u32)
RADIX_HIST(u64)

// Exclusive sum of v over the block (u32), *total the block sum.
__device__ __forceinline__ u32 block_scan_u32(u32 v, u32* total) {
    return block_exclusive_scan<u32>(v, total);
}

#define RADIX_SCATTER(K, V)                                                              \
    extern "C" __global__ void radix_scatter_##K##_##V(                                  \
        const K* keys, const V* vals, u64 n, u32 shift, u32 width, u64 tiles,            \
        const u64* offsets, K* okeys, V* ovals) {                                        \
        __shared__ K sk[RTILE];                                                          \
        __shared__ V sv[RTILE];                                                          \
        __shared__ u32 dstart[RADIX];                                                    \
        u64 base = (u64)blockIdx.x * RTILE;                                              \
        u32 count = (u32)(n - base < RTILE ? n - base : RTILE);                          \
        u64 mask = (1ull << width) - 1;                                                  \
        for (u32 j = threadIdx.x; j < RTILE; j += THREADS) {                             \
            if (j < count) {                                                             \
                sk[j] = keys[base + j];                                                  \
                sv[j] = vals[base + j];                                                  \
            }                                                                            \
        }                                                                                \
        __syncthreads();                                                                 \
        /* Padding (j >= count) has the largest digit and stays last. */                 \
        u32 first = threadIdx.x * RITEMS;                                                \
        for (u32 b = 0; b < width; b++) {                                                \
            K rk[RITEMS];                                                                \
            V rv[RITEMS];                                                                \
            u32 bit[RITEMS];                                                             \
            u32 zeros = 0;                                                               \
            for (u32 j = 0; j < RITEMS; j++) {                                           \
                u32 i = first + j;                                                       \
                if (i < count) {                                                         \
                    rk[j] = sk[i];                                                       \
                    rv[j] = sv[i];                                                       \
                    bit[j] = (u32)(((u64)rk[j] >> (shift + b)) & 1);                     \
                } else {                                                                 \
                    bit[j] = 1;                                                          \
                }                                                                        \
                zeros += 1 - bit[j];                                                     \
            }                                                                            \
            u32 total;                                                                   \
            u32 zb = block_scan_u32(zeros, &total);                                      \
            __syncthreads();                                                             \
            for (u32 j = 0; j < RITEMS; j++) {                                           \
                u32 i = first + j;                                                       \
                u32 to;                                                                  \
                if (bit[j] == 0) {                                                       \
                    to = zb++;                                                           \
                } else {                                                                 \
                    to = total + (i - zb);                                               \
                }                                                                        \
                if (i < count) {                                                         \
                    sk[to] = rk[j];                                                      \
                    sv[to] = rv[j];                                                      \
                }                                                                        \
            }                                                                            \
            __syncthreads();                                                             \
        }                                                                                \
        for (u32 i = threadIdx.x; i < count; i += THREADS) {                             \
            u32 d = (u32)(((u64)sk[i] >> shift) & mask);                                 \
            if (i == 0 || d != (u32)(((u64)sk[i - 1] >> shift) & mask)) dstart[d] = i;   \
        }                                                                                \
        __syncthreads();                                                                 \
        for (u32 i = threadIdx.x; i < count; i += THREADS) {                             \
            u32 d = (u32)(((u64)sk[i] >> shift) & mask);                                 \
            u64 o = offsets[(u64)d * tiles + blockIdx.x] + (i - dstart[d]);              \
            okeys[o] = sk[i];                                                            \
            ovals[o] = sv[i];                                                            \
        }                                                                                \
    }

RADIX_SCATTER(u32, u8)
RADIX_SCATTER(u32, u32)
RADIX_SCATTER(u32, u64)
RADIX_SCATTER(u64, u8)
RADIX_SCATTER(u64, u32)
RADIX_SCATTER(u64, u64)
