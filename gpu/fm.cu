// FM-index tables from the suffix array on the device (src/build.rs is the
// CPU version and the reference): row i of SA' is n for i = 0, else sa[i-1];
// B[j] = BWT'[j + (j >= primary)] (the `$` row removed, bwa style).

// The index i with sa[i] == 0 (unique) goes to *out.
#define FM(W)                                                                            \
    extern "C" __global__ void find_zero_##W(const W* sa, u64 n, u64* out) {            \
        GRID_STRIDE(i, n) if (sa[i] == 0) * out = i;                                     \
    }                                                                                    \
    /* One Occ line (64 bytes = 8 words) per thread: word 0 = counts of A, C  */         \
    /* (u32 each, little endian), word 1 = G, T (local to the line: the host  */         \
    /* makes them cumulative), words 2..7 = 192 bases, 2 bits, low first.     */         \
    extern "C" __global__ void occ_lines_##W(const u64* packed, const W* sa, u64 n,     \
                                             u64 primary, u64 lines, u64* out) {         \
        GRID_STRIDE(l, lines) {                                                          \
            /* Counts in 16-bit fields of one register, words written as  */             \
            /* they fill: arrays indexed by c or r would be local memory. */             \
            u64 cnt = 0;                                                                 \
            u64* o = out + 8 * l;                                                        \
            for (u32 w = 0; w < 6; w++) {                                                \
                u64 word = 0;                                                            \
                for (u32 r = 0; r < 32; r++) {                                           \
                    u64 j = l * 192 + w * 32 + r;                                        \
                    if (j >= n) break;                                                   \
                    u64 row = j + (j >= primary ? 1 : 0);                                \
                    u64 p = row == 0 ? n : (u64)sa[row - 1];                             \
                    u64 c = base_at(packed, p - 1);                                      \
                    word |= c << (2 * r);                                                \
                    cnt += 1ull << (16 * c);                                             \
                }                                                                        \
                o[2 + w] = word;                                                         \
            }                                                                            \
            o[0] = (cnt & 0xffffull) | ((cnt >> 16 & 0xffffull) << 32);                  \
            o[1] = (cnt >> 32 & 0xffffull) | ((cnt >> 48 & 0xffffull) << 32);            \
        }                                                                                \
    }                                                                                    \
    extern "C" __global__ void sample_sa_##W(const W* sa, u64 n, u32 shift, u64 samples, \
                                             W* out) {                                   \
        GRID_STRIDE(k, samples) {                                                        \
            u64 row = sample_row(k, shift, n);                                           \
            out[k] = row == 0 ? (W)n : sa[row - 1];                                      \
        }                                                                                \
    }

FM(u32)
FM(u64)
