// Scans, segmented scans, compaction and counting, tile by tile, all on the
// device (reduce-then-scan, three kernels):
// 1. `*_tiles` (one block per tile): one aggregate per tile (a sum, a kept
//    count, or a segmented (sum, head) pair);
// 2. `*_carries` (ONE block): an exclusive scan of those aggregates in
//    place, looping over them TILE at a time, so any number of tiles; the
//    plain one also writes the grand total after the last tile's carry;
// 3. `*_apply` / `compact*` (one block per tile): the tile's own scan from
//    its carry.
// Nothing comes back to the host but that total, and only where the host
// must know it (src/sa/cuda/). A tile is TILE consecutive elements, one
// block of THREADS threads, each thread ITEMS consecutive elements. Values
// are summed as u64 and truncated to the element type on writing (wrapping,
// as the CPU).

#define ITEMS 16
#define TILE (THREADS * ITEMS)

struct SegVal {
    u64 v;
    u32 f;
};

struct SumOp {
    __device__ u64 operator()(u64 a, u64 b) const { return a + b; }
};

struct SegOp {
    __device__ SegVal operator()(SegVal a, SegVal b) const {
        SegVal r;
        r.v = b.f ? b.v : a.v + b.v;
        r.f = a.f | b.f;
        return r;
    }
};

// Exclusive scan across the block with op (left operand first).
template <typename T, typename Op>
__device__ T block_scan(T v, T identity, Op op, T* total) {
    __shared__ T buf[THREADS];
    u32 t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (u32 o = 1; o < THREADS; o <<= 1) {
        T y = t >= o ? buf[t - o] : identity;
        __syncthreads();
        if (t >= o) buf[t] = op(y, buf[t]);
        __syncthreads();
    }
    T excl = t == 0 ? identity : buf[t - 1];
    *total = buf[THREADS - 1];
    __syncthreads();
    return excl;
}

// Exclusive scan of the aggregates sums[0..tiles] in place by one block,
// TILE at a time with a running carry; sums[tiles] gets the total (sums
// holds tiles + 1 values).
extern "C" __global__ void scan_carries(u64* sums, u64 tiles) {
    u64 carry = 0;
    for (u64 base = 0; base < tiles; base += TILE) {
        u64 first = base + (u64)threadIdx.x * ITEMS;
        u64 s = 0;
        for (u32 j = 0; j < ITEMS; j++)
            if (first + j < tiles) s += sums[first + j];
        u64 total;
        u64 acc = carry + block_scan<u64>(s, 0ull, SumOp(), &total);
        for (u32 j = 0; j < ITEMS; j++) {
            if (first + j < tiles) {
                u64 v = sums[first + j];
                sums[first + j] = acc;
                acc += v;
            }
        }
        carry += total;
    }
    if (threadIdx.x == 0) sums[tiles] = carry;
}

// The segmented carries: sums[t] becomes the running segmented sum entering
// tile t, a (sum, has a head) pair scan of the tiles' aggregates, so a head
// in tile t restarts the sum for the tiles after it. One block, TILE tiles
// at a time, as scan_carries.
extern "C" __global__ void segscan_carries(u64* sums, const u8* flags, u64 tiles) {
    SegVal carry = {0, 0};
    for (u64 base = 0; base < tiles; base += TILE) {
        u64 first = base + (u64)threadIdx.x * ITEMS;
        SegVal a = {0, 0};
        for (u32 j = 0; j < ITEMS; j++) {
            if (first + j < tiles) {
                SegVal b = {sums[first + j], flags[first + j] ? 1u : 0u};
                a = SegOp()(a, b);
            }
        }
        SegVal id = {0, 0}, total;
        SegVal acc = SegOp()(carry, block_scan<SegVal>(a, id, SegOp(), &total));
        for (u32 j = 0; j < ITEMS; j++) {
            if (first + j < tiles) {
                SegVal b = {sums[first + j], flags[first + j] ? 1u : 0u};
                sums[first + j] = acc.v;
                acc = SegOp()(acc, b);
            }
        }
        carry = SegOp()(carry, total);
    }
}

#define SCAN(W)                                                                         \
    extern "C" __global__ void scan_tiles_##W(const W* x, u64 n, u64* sums) {         \
        u64 first = (u64)blockIdx.x * TILE + (u64)threadIdx.x * ITEMS;                  \
        u64 s = 0;                                                                      \
        for (u32 j = 0; j < ITEMS; j++)                                                 \
            if (first + j < n) s += x[first + j];                                       \
        u64 total;                                                                      \
        block_scan<u64>(s, 0ull, SumOp(), &total);                                      \
        if (threadIdx.x == 0) sums[blockIdx.x] = total;                                 \
    }                                                                                   \
    /* carry[t]: the sum of every element before tile t (scan_carries). */                             \
    extern "C" __global__ void scan_apply_##W(W* x, u64 n, const u64* carry,           \
                                              u32 inclusive) {                          \
        u64 first = (u64)blockIdx.x * TILE + (u64)threadIdx.x * ITEMS;                  \
        u64 s = 0;                                                                      \
        for (u32 j = 0; j < ITEMS; j++)                                                 \
            if (first + j < n) s += x[first + j];                                       \
        u64 total;                                                                      \
        u64 acc = carry[blockIdx.x] + block_scan<u64>(s, 0ull, SumOp(), &total);        \
        for (u32 j = 0; j < ITEMS; j++) {                                               \
            if (first + j < n) {                                                        \
                u64 v = x[first + j];                                                   \
                if (inclusive) acc += v;                                                \
                x[first + j] = (W)acc;                                                  \
                if (!inclusive) acc += v;                                               \
            }                                                                           \
        }                                                                               \
    }                                                                                   \
    /* Per tile: whether it has a head, and the sum from its last head on. */           \
    extern "C" __global__ void segscan_tiles_##W(const W* x, const u8* heads, u64 n,   \
                                                 u64* sums, u8* flags) {                \
        u64 first = (u64)blockIdx.x * TILE + (u64)threadIdx.x * ITEMS;                  \
        SegVal a = {0, 0};                                                              \
        for (u32 j = 0; j < ITEMS; j++) {                                               \
            if (first + j < n) {                                                        \
                SegVal b = {(u64)x[first + j], heads[first + j] ? 1u : 0u};             \
                a = SegOp()(a, b);                                                      \
            }                                                                           \
        }                                                                               \
        SegVal id = {0, 0}, total;                                                      \
        SegVal before = block_scan<SegVal>(a, id, SegOp(), &total);                     \
        (void)before;                                                                   \
        if (threadIdx.x == 0) {                                                         \
            sums[blockIdx.x] = total.v;                                                 \
            flags[blockIdx.x] = (u8)total.f;                                            \
        }                                                                               \
    }                                                                                   \
    /* carry[t]: the running sum entering tile t (segscan_carries). */             \
    extern "C" __global__ void segscan_apply_##W(W* x, const u8* heads, u64 n,         \
                                                 const u64* carry) {                    \
        u64 first = (u64)blockIdx.x * TILE + (u64)threadIdx.x * ITEMS;                  \
        SegVal a = {0, 0};                                                              \
        for (u32 j = 0; j < ITEMS; j++) {                                               \
            if (first + j < n) {                                                        \
                SegVal b = {(u64)x[first + j], heads[first + j] ? 1u : 0u};             \
                a = SegOp()(a, b);                                                      \
            }                                                                           \
        }                                                                               \
        SegVal id = {0, 0}, total;                                                      \
        SegVal before = block_scan<SegVal>(a, id, SegOp(), &total);                     \
        u64 acc = before.f ? before.v : carry[blockIdx.x] + before.v;                   \
        for (u32 j = 0; j < ITEMS; j++) {                                               \
            if (first + j < n) {                                                        \
                if (heads[first + j]) acc = 0;                                          \
                acc += (u64)x[first + j];                                               \
                x[first + j] = (W)acc;                                                  \
            }                                                                           \
        }                                                                               \
    }                                                                                   \
    extern "C" __global__ void compact_index_##W(const u8* keep, u64 n,                \
                                                 const u64* offsets, W* out) {          \
        u64 first = (u64)blockIdx.x * TILE + (u64)threadIdx.x * ITEMS;                  \
        u64 c = 0;                                                                      \
        for (u32 j = 0; j < ITEMS; j++)                                                 \
            if (first + j < n && keep[first + j]) c++;                                  \
        u64 total;                                                                      \
        u64 o = offsets[blockIdx.x] + block_scan<u64>(c, 0ull, SumOp(), &total);        \
        for (u32 j = 0; j < ITEMS; j++)                                                 \
            if (first + j < n && keep[first + j]) out[o++] = (W)(first + j);            \
    }

SCAN(u32)
SCAN(u64)

// Kept elements per tile (for compaction and counting); scan_carries turns
// them into each tile's first output slot and the total kept.
extern "C" __global__ void flag_tiles(const u8* keep, u64 n, u64* counts) {
    u64 first = (u64)blockIdx.x * TILE + (u64)threadIdx.x * ITEMS;
    u64 c = 0;
    for (u32 j = 0; j < ITEMS; j++)
        if (first + j < n && keep[first + j]) c++;
    u64 total;
    block_scan<u64>(c, 0ull, SumOp(), &total);
    if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

#define COMPACT(T)                                                                      \
    extern "C" __global__ void compact_##T(const T* x, const u8* keep, u64 n,          \
                                           const u64* offsets, T* out) {                \
        u64 first = (u64)blockIdx.x * TILE + (u64)threadIdx.x * ITEMS;                  \
        u64 c = 0;                                                                      \
        for (u32 j = 0; j < ITEMS; j++)                                                 \
            if (first + j < n && keep[first + j]) c++;                                  \
        u64 total;                                                                      \
        u64 o = offsets[blockIdx.x] + block_scan<u64>(c, 0ull, SumOp(), &total);        \
        for (u32 j = 0; j < ITEMS; j++)                                                 \
            if (first + j < n && keep[first + j]) out[o++] = x[first + j];              \
    }

COMPACT(u8)
COMPACT(u32)
COMPACT(u64)
