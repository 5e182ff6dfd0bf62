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
            u64 bits[6] = {0, 0, 0, 0, 0, 0};                                            \
            u32 counts[4] = {0, 0, 0, 0};                                                \
            for (u32 r = 0; r < 192; r++) {                                              \
                u64 j = l * 192 + r;                                                     \
                if (j >= n) break;                                                       \
                u64 row = j + (j >= primary ? 1 : 0);                                    \
                u64 p = row == 0 ? n : (u64)sa[row - 1];                                 \
                u64 c = base_at(packed, p - 1);                                          \
                bits[r / 32] |= c << (2 * (r % 32));                                     \
                counts[c]++;                                                             \
            }                                                                            \
            u64* o = out + 8 * l;                                                        \
            o[0] = (u64)counts[0] | ((u64)counts[1] << 32);                              \
            o[1] = (u64)counts[2] | ((u64)counts[3] << 32);                              \
            for (u32 w = 0; w < 6; w++) o[2 + w] = bits[w];                              \
        }                                                                                \
    }                                                                                    \
    extern "C" __global__ void sample_sa_##W(const W* sa, u64 n, u32 shift, u64 samples, \
                                             W* out) {                                   \
        GRID_STRIDE(k, samples) {                                                        \
            u64 row = k << shift;                                                        \
            out[k] = row == 0 ? (W)n : sa[row - 1];                                      \
        }                                                                                \
    }

FM(u32)
FM(u64)
