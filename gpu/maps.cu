// Element-wise maps of steps::Backend (one pass each, no scratch), and
// gather/scatter/head flags. See src/sa/steps.rs for each one's meaning.

extern "C" __global__ void pack_text(const u8* text, u64 n, u64 words, u64* out) {
    GRID_STRIDE(w, words) {
        u64 word = 0;
        for (u32 j = 0; j < 32; j++) {
            u64 p = w * 32 + j;
            if (p < n) word |= (u64)(text[p] & 3) << (62 - 2 * j);
        }
        out[w] = word;
    }
}

extern "C" __global__ void unsorted_flags(const u8* heads, u64 n, u8* out) {
    GRID_STRIDE(i, n) {
        bool alone = heads[i] != 0 && (i + 1 == n || heads[i + 1] != 0);
        out[i] = alone ? 0 : 1;
    }
}

#define WORD_MAPS(W)                                                                      \
    extern "C" __global__ void iota_from_##W(W* out, u64 n, u64 start) {                 \
        GRID_STRIDE(i, n) out[i] = (W)(start + i);                                        \
    }                                                                                     \
    extern "C" __global__ void iota_mod3_##W(W* out, u64 n) {                            \
        GRID_STRIDE(i, n) out[i] = (W)(3 * (i / 2) + 1 + i % 2);                         \
    }                                                                                     \
    extern "C" __global__ void fill_##W(W* out, u64 n, u64 v) {                          \
        GRID_STRIDE(i, n) out[i] = (W)v;                                                  \
    }                                                                                     \
    extern "C" __global__ void head_index_##W(const u8* heads, u64 n, u64 add, W* out) { \
        GRID_STRIDE(i, n) out[i] = heads[i] ? (W)(i + add) : (W)0;                       \
    }                                                                                     \
    extern "C" __global__ void head_values_##W(const u8* heads, const W* base, u64 n,    \
                                               u64 add, W* out) {                         \
        GRID_STRIDE(i, n) out[i] = heads[i] ? (W)((u64)base[i] + add) : (W)0;            \
    }                                                                                     \
    /* Writes outside dst (dn elements) are dropped: a bug upstream must not      */      \
    /* become a wild write (the CPU asserts instead).                              */      \
    extern "C" __global__ void scatter_slots_##W(const W* src, const W* pos, u64 m,      \
                                                 u32 layout, u64 n0, W* dst, u64 dn) {    \
        GRID_STRIDE(i, m) {                                                               \
            u64 s = slot_of((u64)pos[i], layout, n0);                                     \
            if (s < dn) dst[s] = src[i];                                                  \
        }                                                                                 \
    }                                                                                     \
    extern "C" __global__ void symbols_##W(const u64* packed, u64 n, W* out) {           \
        GRID_STRIDE(i, n) out[i] = (W)(base_at(packed, i) + 1);                           \
    }                                                                                     \
    extern "C" __global__ void fetch_##W(const W* rank, u32 layout, u64 n0, const W* pos, \
                                         u64 m, u64 h, u64 n, W* out) {                   \
        GRID_STRIDE(i, m) {                                                               \
            u64 p = (u64)pos[i] + h;                                                      \
            out[i] = p < n ? rank[slot_of(p, layout, n0)] : (W)0;                         \
        }                                                                                 \
    }                                                                                     \
    extern "C" __global__ void slots_##W(const W* pos, u64 m, u32 layout, u64 n0,        \
                                         W* out) {                                        \
        GRID_STRIDE(i, m) out[i] = (W)slot_of((u64)pos[i], layout, n0);                   \
    }                                                                                     \
    extern "C" __global__ void split_positions_##W(const W* slots, u64 m, u64 n0,        \
                                                   W* out) {                              \
        GRID_STRIDE(i, m) {                                                               \
            u64 s = slots[i];                                                             \
            out[i] = (W)(s < n0 ? 3 * s + 1 : 3 * (s - n0) + 2);                          \
        }                                                                                 \
    }                                                                                     \
    extern "C" __global__ void add_flags_##W(W* x, const u8* flags, u64 m) {             \
        GRID_STRIDE(i, m) x[i] += (W)flags[i];                                            \
    }                                                                                     \
    extern "C" __global__ void sub_const_##W(W* x, u64 m, u64 sub) {                     \
        GRID_STRIDE(i, m) x[i] = (W)((u64)x[i] - sub);                                    \
    }                                                                                     \
    extern "C" __global__ void widen_##W(const u8* flags, u64 m, W* out) {               \
        GRID_STRIDE(i, m) out[i] = (W)flags[i];                                           \
    }                                                                                     \
    extern "C" __global__ void in_range_##W(const W* x, u64 m, u64 lo, u64 hi, u8* out) {\
        GRID_STRIDE(i, m) out[i] = (u64)x[i] >= lo && (u64)x[i] <= hi;                    \
    }                                                                                     \
    extern "C" __global__ void mod3_is_##W(const W* x, u64 m, u64 r, u8* out) {          \
        GRID_STRIDE(i, m) out[i] = (u64)x[i] % 3 == r;                                    \
    }                                                                                     \
    extern "C" __global__ void residues_##W(const W* x, u64 m, u64 v, u32* out) {        \
        GRID_STRIDE(i, m) out[i] = (u32)((u64)x[i] & (v - 1));                            \
    }                                                                                     \
    extern "C" __global__ void cover_ranks_##W(const W* pos, u64 m, u64 n, u64 v,        \
                                               u64 size, const u32* rank,                 \
                                               const u32* index, const u32* start,        \
                                               const u32* pairs, u32* out) {              \
        GRID_STRIDE(i, m) {                                                               \
            u64 p = pos[i];                                                               \
            u64 q = p + cover_delta(v, start, pairs, p, p);                               \
            out[i] = (u32)cover_rank(rank, index, v, size, n, q);                         \
        }                                                                                 \
    }                                                                                     \
    extern "C" __global__ void text_heads_##W(const u64* packed, u64 n, const W* pos,    \
                                              u64 m, u32 k, u32 lbits, u8* out) {         \
        GRID_STRIDE(i, m) {                                                               \
            out[i] = i == 0 || text_key(packed, n, pos[i], k, lbits) !=                   \
                                   text_key(packed, n, pos[i - 1], k, lbits);             \
        }                                                                                 \
    }                                                                                     \
    /* Segment lengths from ids (inclusive scan of the heads: heads at or before */      \
    /* i) and the head indices `starts` (g of them). Index 0 always starts a      */      \
    /* segment, head or not (as on the CPU).                                      */      \
    extern "C" __global__ void segment_lengths_##W(const W* ids, const W* starts, u64 g, \
                                                   u64 m, W* out) {                       \
        GRID_STRIDE(i, m) {                                                               \
            u64 id = (u64)ids[i];                                                         \
            u64 start = id == 0 ? 0 : (u64)starts[id - 1];                                \
            u64 end = id < g ? (u64)starts[id] : m;                                       \
            out[i] = (W)(end - start);                                                    \
        }                                                                                 \
    }                                                                                     \
    extern "C" __global__ void head_flags_##W(const W* keys, const u8* orf, u64 m,       \
                                              u8* out) {                                  \
        GRID_STRIDE(i, m) {                                                               \
            bool h = i == 0 || keys[i] != keys[i - 1] || (orf != 0 && orf[i] != 0);      \
            out[i] = h;                                                                   \
        }                                                                                 \
    }

WORD_MAPS(u32)
WORD_MAPS(u64)

#define TEXT_KEYS(K, W)                                                                   \
    extern "C" __global__ void text_keys_##K##_##W(const u64* packed, u64 n, const W* pos, \
                                                   u64 m, u32 k, u32 lbits, K* out) {     \
        GRID_STRIDE(i, m) out[i] = (K)text_key(packed, n, pos[i], k, lbits);              \
    }

TEXT_KEYS(u32, u32)
TEXT_KEYS(u32, u64)
TEXT_KEYS(u64, u32)
TEXT_KEYS(u64, u64)

// Skew's triple (s[p], s[p+1], s[p+2]) in one key, 0 past n (3 * bits <= bits of K).
#define TRIPLE_KEYS(K, W)                                                                 \
    extern "C" __global__ void triple_keys_##K##_##W(const W* s, const W* pos, u64 m,    \
                                                     u64 n, u32 bits, K* out) {           \
        GRID_STRIDE(i, m) {                                                               \
            u64 p = pos[i];                                                               \
            u64 a = p < n ? (u64)s[p] : 0, b = p + 1 < n ? (u64)s[p + 1] : 0;             \
            u64 c = p + 2 < n ? (u64)s[p + 2] : 0;                                        \
            out[i] = (K)(a << (2 * bits) | b << bits | c);                                \
        }                                                                                 \
    }

TRIPLE_KEYS(u32, u32)
TRIPLE_KEYS(u32, u64)
TRIPLE_KEYS(u64, u32)
TRIPLE_KEYS(u64, u64)

#define GATHER_SCATTER(T, I)                                                              \
    extern "C" __global__ void gather_##T##_##I(const T* src, const I* idx, u64 m,       \
                                                T* out) {                                 \
        GRID_STRIDE(i, m) out[i] = src[idx[i]];                                           \
    }                                                                                     \
    extern "C" __global__ void scatter_##T##_##I(const T* src, const I* idx, u64 m,      \
                                                 T* dst, u64 dn) {                        \
        GRID_STRIDE(i, m) if ((u64)idx[i] < dn) dst[idx[i]] = src[i];                     \
    }

GATHER_SCATTER(u8, u32)
GATHER_SCATTER(u8, u64)
GATHER_SCATTER(u32, u32)
GATHER_SCATTER(u32, u64)
GATHER_SCATTER(u64, u32)
GATHER_SCATTER(u64, u64)
