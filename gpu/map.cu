// Mapping on the device: exact backward search of batches of reads (both
// strands) and locate of suffix-array rows, over the FM-index of the .fmi
// file copied to device memory unchanged (SPEC.md §5, §6.6–6.8):
// * occ: the OCC section as u64 words, 8 per 64-byte line: word 0 = counts
//   of A and C before the line (u32 each, little endian), word 1 = G and T,
//   words 2..7 = 192 bases, 2 bits each, least significant first;
// * sup: OCC_SUPER, 4 u64 counts per superblock of 2^24 lines;
// * c5: C[0..5]; primary: the row of `$`; n: text length;
// * ssa: the text position of one row per block of 2^shift rows (sample_row
//   in prelude.cu; u32 or u64).
// The CPU versions are src/fm.rs (rank, lf, locate) and
// src/map.rs search_intervals; results are identical.

#define LINE_BASES 192ull
#define SUPER_LINES (1ull << 24)
#define LOW2 0x5555555555555555ull

// Occurrences of c among the first r bases of line `line`.
__device__ __forceinline__ u64 line_count_before(const u64* line, u32 c, u32 r) {
    // c repeated in every 2-bit field: c * 0b0101... (an array indexed by
    // c would live in local memory: a stack frame, scripts/check/ptxas.sh).
    const u64 pat = (u64)c * LOW2;
    u64 total = 0;
    for (u32 w = 0; w < 6; w++) {
        int bits = (int)(2 * r) - 64 * (int)w;
        if (bits <= 0) break;
        u64 y = line[2 + w] ^ pat;
        u64 eq = ~(y | (y >> 1)) & LOW2;
        u64 mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
        total += __popcll(eq & mask);
    }
    return total;
}

// Occurrences of c in BWT'[0..i), i in 0..=n+1.
__device__ __forceinline__ u64 fm_rank(const u64* occ, const u64* sup, u64 primary, u32 c, u64 i) {
    u64 j = i - (i > primary ? 1 : 0);
    u64 l = j / LINE_BASES;
    const u64* line = occ + 8 * l;
    u64 counts = line[c / 2] >> (32 * (c % 2)) & 0xffffffffull;
    return sup[4 * (l / SUPER_LINES) + c] + counts + line_count_before(line, c, (u32)(j % LINE_BASES));
}

// LF of a row other than primary.
__device__ __forceinline__ u64 fm_lf(const u64* occ, const u64* sup, const u64* c5, u64 primary, u64 i) {
    u64 j = i - (i > primary ? 1 : 0);
    u64 l = j / LINE_BASES;
    u32 r = (u32)(j % LINE_BASES);
    const u64* line = occ + 8 * l;
    u32 c = (u32)((line[2 + r / 32] >> (2 * (r % 32))) & 3);
    u64 counts = line[c / 2] >> (32 * (c % 2)) & 0xffffffffull;
    return c5[c] + sup[4 * (l / SUPER_LINES) + c] + counts + line_count_before(line, c, r);
}

// One thread per read: the rows of the read (forward strand) and of its
// reverse complement, as [lo, hi) pairs in out[4 * read ..]. Codes are 0..=3,
// anything else 4: such a read, or an empty one, gets empty intervals (0, 0).
extern "C" __global__ void map_exact(const u64* occ, const u64* sup, const u64* c5, u64 primary,
                                     u64 n, const u8* codes, const u64* offsets,
                                     const u32* lens, u64 reads, u64* out) {
    GRID_STRIDE(q, reads) {
        const u8* seq = codes + offsets[q];
        u32 m = lens[q];
        bool ok = m > 0;
        for (u32 k = 0; k < m && ok; k++) ok = seq[k] < 4;
        for (u32 strand = 0; strand < 2; strand++) {
            u64 lo = 0, hi = 0;
            if (ok) {
                lo = 0;
                hi = n + 1;
                for (u32 k = 0; k < m && lo < hi; k++) {
                    // Backward: the forward read from its end; the reverse
                    // complement from its end = complement of the read's start.
                    u32 c = strand == 0 ? seq[m - 1 - k] : 3 - seq[k];
                    lo = c5[c] + fm_rank(occ, sup, primary, c, lo);
                    hi = c5[c] + fm_rank(occ, sup, primary, c, hi);
                }
                if (lo >= hi) lo = hi = 0;
            }
            out[4 * q + 2 * strand] = lo;
            out[4 * q + 2 * strand + 1] = hi;
        }
    }
}

// The batched search (src/map/cuda.rs `exact_batch`): reads 2-bit packed,
// base k of read q at bits 2 (k % 32) of words[starts[q] + k / 32]; lens[q]
// holds the length, with bit 31 set when the read has a base other than
// A/C/G/T (then, as for an empty read, both intervals are (0, 0)). One
// thread per read walks both strands in the same loop: two independent
// chains of Occ-line loads, so each thread has two requests in flight.
// The intervals are map_exact's. both = 0: the forward strand only (the
// seeds of -v K, whose reverse strands are patterns of their own); the
// reverse interval is then (0, 0). kk > 0: a read of at least kk bases
// starts both searches from the table of every kk-mer's interval (kmer:
// [lo, hi) pairs indexed by the kk-mer, first base most significant;
// src/kmer.rs), skipping the first kk steps, the widest ones.
#define AMBIGUOUS (1u << 31)
extern "C" __global__ void map_exact_packed(const u64* occ, const u64* sup, const u64* c5,
                                            u64 primary, u64 n, const u64* words,
                                            const u64* starts, const u32* lens, u64 reads,
                                            u32 both, const u64* kmer, u32 kk, u64* out) {
    GRID_STRIDE(q, reads) {
        const u64* w = words + starts[q];
        u32 m = lens[q] & ~AMBIGUOUS;
        bool ok = m > 0 && (lens[q] & AMBIGUOUS) == 0;
        u64 flo = 0, fhi = ok ? n + 1 : 0, rlo = 0, rhi = both ? fhi : 0;
        u32 k = 0;
        if (ok && kk > 0 && m >= kk) {
            // The last kk bases of each strand, left to right: the forward
            // read's end; the reverse complement's end = its start, complemented.
            u64 cf = 0, cr = 0;
            for (u32 d = 0; d < kk; d++) {
                u32 j = m - kk + d, i = kk - 1 - d;
                cf = cf << 2 | ((w[j / 32] >> (2 * (j % 32))) & 3);
                cr = cr << 2 | (3 - ((w[i / 32] >> (2 * (i % 32))) & 3));
            }
            flo = kmer[2 * cf];
            fhi = kmer[2 * cf + 1];
            if (both) {
                rlo = kmer[2 * cr];
                rhi = kmer[2 * cr + 1];
            }
            k = kk;
        }
        for (; k < m && (flo < fhi || rlo < rhi); k++) {
            // Backward: the forward read from its end; the reverse
            // complement from its end = complement of the read's start.
            u32 j = m - 1 - k;
            u32 cf = (u32)(w[j / 32] >> (2 * (j % 32))) & 3;
            u32 cr = 3 - ((u32)(w[k / 32] >> (2 * (k % 32))) & 3);
            if (flo < fhi) {
                flo = c5[cf] + fm_rank(occ, sup, primary, cf, flo);
                fhi = c5[cf] + fm_rank(occ, sup, primary, cf, fhi);
            }
            if (rlo < rhi) {
                rlo = c5[cr] + fm_rank(occ, sup, primary, cr, rlo);
                rhi = c5[cr] + fm_rank(occ, sup, primary, cr, rhi);
            }
        }
        if (flo >= fhi) flo = fhi = 0;
        if (rlo >= rhi) rlo = rhi = 0;
        out[4 * q] = flo;
        out[4 * q + 1] = fhi;
        out[4 * q + 2] = rlo;
        out[4 * q + 3] = rhi;
    }
}

// -v K's verification (src/search.rs search_verify_with, the device's
// SeedEngine::verify): one thread per candidate c, pattern owner[c] (codes,
// one byte a base, 4 for N, at codes + offsets[q], lens[q] bases) against
// the text from starts[c] (the host checked starts[c] + lens[q] <= n); pac
// is the index's PAC section, 4 bases a byte, low bits first. out[c] =
// mismatches, or 255 past k (the CPU's hamming stops there too).
extern "C" __global__ void map_verify(const u8* pac, const u8* codes, const u64* offsets,
                                      const u32* lens, const u32* owner, const u64* starts,
                                      u64 cands, u32 k, u8* out) {
    GRID_STRIDE(c, cands) {
        u32 q = owner[c];
        const u8* pat = codes + offsets[q];
        u32 m = lens[q];
        u64 s = starts[c];
        u32 mm = 0;
        for (u32 i = 0; i < m && mm <= k; i++) {
            u64 t = s + i;
            u32 b = (pac[t >> 2] >> (2 * (t & 3))) & 3;
            mm += pat[i] != b;
        }
        out[c] = mm <= k ? (u8)mm : 255;
    }
}

// One thread per row: its text position (SA'), walking LF to a sampled row
// or the `$` row.
#define LOCATE(W)                                                                         \
    extern "C" __global__ void map_locate_##W(const u64* occ, const u64* sup, const u64* c5, \
                                              u64 primary, u64 n, const W* ssa, u32 shift,  \
                                              const u64* rows, u64 m, u64* out) {           \
        GRID_STRIDE(t, m) {                                                                 \
            u64 i = rows[t], steps = 0;                                                     \
            for (;;) {                                                                      \
                if (sample_row(i >> shift, shift, n) == i) {                                \
                    out[t] = (u64)ssa[i >> shift] + steps;                                  \
                    break;                                                                  \
                }                                                                           \
                if (i == primary) {                                                         \
                    out[t] = steps;                                                         \
                    break;                                                                  \
                }                                                                           \
                if (steps > n) {                                                            \
                    out[t] = ~0ull;                                                         \
                    break;                                                                  \
                }                                                                           \
                i = fm_lf(occ, sup, c5, primary, i);                                        \
                steps++;                                                                    \
            }                                                                               \
        }                                                                                   \
    }

LOCATE(u32)
LOCATE(u64)

// ------------------------------------------------ -v K: the search schemes
// The bidirectional index (src/search.rs BiIndex): the text's tables (occ,
// sup, c5, primary) and the reversed text's (rocc, rsup, rc5, rprimary),
// the same layout. A pattern's rows are [flo, fhi) in the text's index and
// [rlo, rlo + fhi - flo) in the reversed one's.

// One bidirectional step (src/search.rs step) in the index (occ, sup, c5,
// primary) from rows [lo, hi), with olo the start of the other index's
// interval: base c's rows [*nlo, *nhi) and the other index's new start *nolo
// (olo, plus one if the `$` row is among the rows, plus the rows of the
// bases below c).
__device__ __forceinline__ void bi_extend(const u64* occ, const u64* sup, const u64* c5, u64 primary,
                                          u64 lo, u64 hi, u64 olo, u32 c, u64* nlo, u64* nhi, u64* nolo) {
    u64 start = olo + (lo <= primary && primary < hi ? 1 : 0);
    for (u32 d = 0; d < c; d++)
        start += fm_rank(occ, sup, primary, d, hi) - fm_rank(occ, sup, primary, d, lo);
    *nlo = c5[c] + fm_rank(occ, sup, primary, c, lo);
    *nhi = c5[c] + fm_rank(occ, sup, primary, c, hi);
    *nolo = start;
}

// Part p of k + 1 of a pattern of m bases (src/search.rs part): [*s, *e).
__device__ __forceinline__ void scheme_part(u32 m, u32 k, u32 p, u32* s, u32* e) {
    u32 parts = k + 1, q = m / parts, r = m % parts;
    *s = p * q + (p < r ? p : r);
    *e = *s + q + (p < r ? 1 : 0);
}

// Step `step` of search i (src/search.rs scheme): part i right to left,
// then the parts right of i left to right, then those left of i right to
// left. Gives the read position, whether it extends left (the text's
// index), and the part's first and last steps and minimum mismatches (1
// for the parts left of i).
__device__ __forceinline__ void scheme_step(u32 m, u32 k, u32 i, u32 step, u32* pos, bool* left,
                                            u32* first, u32* last, u32* min_mm) {
    u32 at = 0;
    for (u32 o = 0; o <= k; o++) {
        u32 p = o <= k - i ? i + o : k - o;
        u32 s, e;
        scheme_part(m, k, p, &s, &e);
        if (step < at + (e - s)) {
            u32 d = step - at;
            *left = p <= i;
            *pos = p <= i ? e - 1 - d : s + d;
            *first = at;
            *last = at + (e - s) - 1;
            *min_mm = p < i ? 1 : 0;
            return;
        }
        at += e - s;
    }
}

// -v K's search schemes of repeated seeds (src/search.rs search_verify_with,
// the device's SeedEngine::schemes): one thread per job j, search
// part[j] of the scheme for k <= 3 mismatches of pattern pat[j] (codes,
// one byte a base, 4 for N, at codes + offsets[q], lens[q] > k bases). The
// same depth-first search as Search::run: every base at every position
// after the exact part, at most k substitutions in all and at least one in
// each part left of the exact one. Without a stack of every position: a
// substitution raises the level (the mismatches so far) by one, and a level
// keeps one frame (its step, interval and next base to try) while the
// level above it runs, so k frames suffice; along a level the read's own
// base is taken after its substitutions were tried, in place. Each
// alignment found goes to out_lo/out_hi (rows in the text's index) and
// out_mm at j * cap + its number; out_count[j] counts them all, so a count
// over cap tells the host to run that job again on the CPU.
#define SCHEME_MAX_K 3
extern "C" __global__ void map_scheme(const u64* occ, const u64* sup, const u64* c5, u64 primary,
                                      const u64* rocc, const u64* rsup, const u64* rc5, u64 rprimary,
                                      u64 n, const u8* codes, const u64* offsets, const u32* lens,
                                      const u32* pat, const u8* part, u64 jobs, u32 k, u32 cap,
                                      u64* out_lo, u64* out_hi, u8* out_mm, u32* out_count) {
    GRID_STRIDE(j, jobs) {
        const u8* p = codes + offsets[pat[j]];
        u32 m = lens[pat[j]], i = part[j], count = 0;
        if (k > SCHEME_MAX_K) k = SCHEME_MAX_K;
        u64 flo = 0, fhi = n + 1, rlo = 0;
        u32 s0, e0;
        scheme_part(m, k, i, &s0, &e0);
        bool alive = m > k;
        // Part i exactly, right to left.
        for (u32 d = 0; alive && d < e0 - s0; d++) {
            u32 c = p[e0 - 1 - d];
            if (c >= 4) {
                alive = false;
                break;
            }
            bi_extend(occ, sup, c5, primary, flo, fhi, rlo, c, &flo, &fhi, &rlo);
            alive = flo < fhi;
        }
        // Frames of the levels below the running one.
        u32 fs[SCHEME_MAX_K], fpart[SCHEME_MAX_K], fc[SCHEME_MAX_K];
        u64 fflo[SCHEME_MAX_K], ffhi[SCHEME_MAX_K], frlo[SCHEME_MAX_K];
        u32 level = 0, step = e0 - s0, mm_part = 0, c_from = 0;
        while (alive) {
            bool up = false;
            if (step == m) {
                if (count < cap) {
                    out_lo[j * cap + count] = flo;
                    out_hi[j * cap + count] = fhi;
                    out_mm[j * cap + count] = (u8)level;
                }
                count++;
                up = true;
            } else {
                u32 pos, first, last, min_mm;
                bool left;
                scheme_step(m, k, i, step, &pos, &left, &first, &last, &min_mm);
                u32 in_part = step == first ? 0 : mm_part;
                u32 want = p[pos];
                bool down = false;
                // Substitutions first, from base c_from.
                for (u32 c = c_from; level < k && c < 4 && !down; c++) {
                    if (c == want) continue;
                    u64 nlo, nhi, nr;
                    if (left) {
                        bi_extend(occ, sup, c5, primary, flo, fhi, rlo, c, &nlo, &nhi, &nr);
                    } else {
                        u64 a, b;
                        bi_extend(rocc, rsup, rc5, rprimary, rlo, rlo + (fhi - flo), flo, c, &a, &b, &nr);
                        nlo = nr;
                        nhi = nr + (b - a);
                        nr = a;
                    }
                    if (nlo >= nhi) continue;
                    fs[level] = step;
                    fflo[level] = flo;
                    ffhi[level] = fhi;
                    frlo[level] = rlo;
                    fpart[level] = mm_part;
                    fc[level] = c + 1;
                    level++;
                    step++;
                    flo = nlo;
                    fhi = nhi;
                    rlo = nr;
                    mm_part = in_part + 1;
                    c_from = 0;
                    down = true;
                }
                if (!down) {
                    // Then the read's own base, in place.
                    bool ok = want < 4 && !(step == last && in_part < min_mm);
                    if (ok) {
                        u64 nlo, nhi, nr;
                        if (left) {
                            bi_extend(occ, sup, c5, primary, flo, fhi, rlo, want, &nlo, &nhi, &nr);
                        } else {
                            u64 a, b;
                            bi_extend(rocc, rsup, rc5, rprimary, rlo, rlo + (fhi - flo), flo, want, &a, &b,
                                      &nr);
                            nlo = nr;
                            nhi = nr + (b - a);
                            nr = a;
                        }
                        ok = nlo < nhi;
                        flo = nlo;
                        fhi = nhi;
                        rlo = nr;
                    }
                    if (ok) {
                        step++;
                        mm_part = in_part;
                        c_from = 0;
                    } else {
                        up = true;
                    }
                }
            }
            if (up) {
                if (level == 0) break;
                level--;
                step = fs[level];
                flo = fflo[level];
                fhi = ffhi[level];
                rlo = frlo[level];
                mm_part = fpart[level];
                c_from = fc[level];
            }
        }
        out_count[j] = count;
    }
}
