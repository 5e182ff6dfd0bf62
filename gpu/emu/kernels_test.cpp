// Tests of the kernels of gpu/ without a GPU: the host side of
// src/sa/cuda/ ported to C++ over the CPU emulation of shim.h, every step
// checked against a plain sequential reference written here, at sizes on
// both sides of the kernels' tiles.
//
// Built and run by tests/gpu_emulation.rs, which writes <module>.cu.inc for
// each module of src/gpu/mod.rs SOURCES: `#include "shim.h"`, then
// gpu/prelude.cu, then gpu/<module>.cu (the text NVRTC compiles, after the
// shim line). Each is included below in a namespace of its own (its shim
// line does nothing there: shim.h is already in), so the prelude is compiled
// once per module as on the device, and every kernel is called through its
// own declaration: a host call that does not match a kernel's parameters
// does not compile.
//
// Besides the results, a run catches: writes past the end of a buffer
// (guard bytes after every allocation, checked after every launch), reads
// far outside one (the crash report names the kernel, block and thread),
// barriers or shuffles not reached by every thread (shim.h), and, with the
// sanitizer flags of the Rust test, indices past fixed-size arrays such as
// shared memory and shifts by the word size or more.
//
// Usage: kernels_test [group...] [seed=N] [shard=I/N] (no group: all of
// them, or shard I of N). Prints one line per failed check (where in this
// file, what, and the first element that differs), one line per group, a
// summary line, and a `kernels:` line naming every kernel launched (the Rust
// test checks that every kernel of gpu/ is among them). Exit status: 0 when
// every check passed, 1 when one failed, 2 on bad usage, 3 when the
// emulation stops (deadlock, invalid launch); a crash kills it by its signal.
//
// Keep it fast: each CUDA thread is a fiber, and a launch of b blocks costs
// 256 * b switches per barrier. The whole run takes about 9 s on one core,
// 5 s of it group scan_big (16.8 M elements).

#include "shim.h"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace k_maps {
#include "maps.cu.inc"
}
namespace k_scan {
#include "scan.cu.inc"
}
namespace k_radix {
#include "radix.cu.inc"
}
namespace k_merge {
#include "merge.cu.inc"
}
namespace k_fm {
#include "fm.cu.inc"
}
namespace k_map {
#include "map.cu.inc"
}

// The kernels' macros must not stand in for the host's constants below.
#undef THREADS
#undef WARPS
#undef ITEMS
#undef TILE
#undef RITEMS
#undef RTILE
#undef RADIX
#undef CHUNK
#undef LINE_BASES
#undef SUPER_LINES
#undef LOW2

typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;

// ------------------------------------------------------------------ checks

static int g_checks = 0, g_fails = 0;
static std::set<std::string> g_launched;

static std::string strf(const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

static void fail(int line, const std::string& what, const std::string& detail) {
    g_fails++;
    if (g_fails <= 50) std::printf("FAIL kernels_test.cpp:%d %s: %s\n", line, what.c_str(), detail.c_str());
    if (g_fails == 50) std::printf("(further failures not shown)\n");
    std::fflush(stdout);
}

template <class T>
static u64 as_u64(T v) {
    if constexpr (std::is_integral_v<T>)
        return (u64)v;
    else
        return v.as_u64();
}

template <class T>
static bool same_vec(const std::vector<T>& got, const std::vector<T>& want, const std::string& what, int line) {
    g_checks++;
    if (got.size() != want.size()) {
        fail(line, what, strf("%zu elements, expected %zu", got.size(), want.size()));
        return false;
    }
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < got.size(); i++) {
        if (!(got[i] == want[i])) {
            if (bad == 0) first = i;
            bad++;
        }
    }
    if (bad == 0) return true;
    fail(line, what,
         strf("%zu of %zu elements differ, first at [%zu]: got %llu (%#llx), expected %llu (%#llx)", bad,
              got.size(), first, as_u64(got[first]), as_u64(got[first]), as_u64(want[first]),
              as_u64(want[first])));
    return false;
}

static bool same_val(u64 got, u64 want, const std::string& what, int line) {
    g_checks++;
    if (got == want) return true;
    fail(line, what, strf("got %llu, expected %llu", got, want));
    return false;
}

#define SAME(got, want, ...) same_vec(got, want, strf(__VA_ARGS__), __LINE__)
#define SAME_VAL(got, want, ...) same_val((u64)(got), (u64)(want), strf(__VA_ARGS__), __LINE__)

template <class T>
static const char* tn() {
    if constexpr (std::is_same_v<T, u8>) return "u8";
    if constexpr (std::is_same_v<T, u32>) return "u32";
    if constexpr (std::is_same_v<T, u64>) return "u64";
    return "?";
}

static std::mt19937_64 g_rng;
static u64 rnd() { return g_rng(); }
static u64 below(u64 m) { return m ? g_rng() % m : 0; }

static u32 bits_for(u64 max) { return max ? 64 - (u32)__builtin_clzll(max) : 0; }

// ------------------------------------------------------- device memory model

// A device allocation: zeroed like cudarc's alloc_zeros, at least one
// element (CUDA refuses empty allocations), followed by guard bytes that
// every launch checks, so a kernel writing past a buffer fails the test.
constexpr size_t GUARD = 64;
constexpr u8 CANARY = 0xa5;

struct Alloc;
static std::set<Alloc*> g_allocs;

struct Alloc {
    std::vector<u8> bytes;
    size_t used;
    explicit Alloc(size_t n) : bytes(n + GUARD, 0), used(n) {
        std::memset(bytes.data() + used, CANARY, GUARD);
        g_allocs.insert(this);
    }
    ~Alloc() { g_allocs.erase(this); }
    Alloc(const Alloc&) = delete;
    Alloc& operator=(const Alloc&) = delete;
};

static void check_guards(const char* kernel) {
    for (Alloc* a : g_allocs) {
        for (size_t i = 0; i < GUARD; i++) {
            if (a->bytes[a->used + i] != CANARY) {
                fail(__LINE__, kernel,
                     strf("wrote past the end of a %zu-byte buffer (at byte %zu)", a->used, a->used + i));
                std::memset(a->bytes.data() + a->used, CANARY, GUARD);
                break;
            }
        }
    }
}

// DevBuf<T> of cuda.rs.
template <class T>
struct Buf {
    std::unique_ptr<Alloc> a;
    size_t len = 0;
    T* p() const { return (T*)a->bytes.data(); }
    std::vector<T> host() const { return std::vector<T>(p(), p() + len); }
};

template <class T>
static Buf<T> alloc(size_t n) {
    Buf<T> b;
    b.a = std::make_unique<Alloc>(std::max<size_t>(n, 1) * sizeof(T));
    b.len = n;
    return b;
}

template <class T>
static Buf<T> upload(const std::vector<T>& v) {
    Buf<T> b = alloc<T>(v.size());
    if (!v.empty()) std::memcpy(b.p(), v.data(), v.size() * sizeof(T));
    return b;
}

// ----------------------------------------------------------------- kernels

template <class F>
struct Kern {
    F* f;
    const char* name;
};
template <class F>
constexpr Kern<F> kern(F* f, const char* name) {
    return {f, name};
}

#define K1(ns, fam, A) static constexpr auto fam = kern(ns::fam##_##A, #fam "_" #A);
#define K2(ns, fam, A, B) static constexpr auto fam = kern(ns::fam##_##A##_##B, #fam "_" #A "_" #B);

// Kernels by word type (u32, u64).
template <class W>
struct Kw;
#define WORD_KERNELS(W)                                                                           \
    template <>                                                                                   \
    struct Kw<W> {                                                                                \
        K1(k_maps, iota_from, W) K1(k_maps, iota_mod3, W) K1(k_maps, fill, W)                     \
        K1(k_maps, head_index, W) K1(k_maps, head_values, W) K1(k_maps, scatter_slots, W)         \
        K1(k_maps, symbols, W) K1(k_maps, fetch, W) K1(k_maps, slots, W)                          \
        K1(k_maps, split_positions, W) K1(k_maps, add_flags, W) K1(k_maps, sub_const, W)          \
        K1(k_maps, widen, W) K1(k_maps, in_range, W) K1(k_maps, mod3_is, W)                       \
        K1(k_maps, text_heads, W) K1(k_maps, segment_lengths, W) K1(k_maps, head_flags, W)        \
        K1(k_scan, scan_tiles, W) K1(k_scan, scan_apply, W) K1(k_scan, segscan_tiles, W)          \
        K1(k_scan, segscan_apply, W) K1(k_scan, compact_index, W) K1(k_radix, radix_hist, W)      \
        K1(k_merge, merge_asc, W) K1(k_merge, merge_dc3, W) K1(k_fm, find_zero, W)                \
        K1(k_fm, occ_lines, W) K1(k_fm, sample_sa, W) K1(k_maps, residues, W)                     \
        K1(k_maps, cover_ranks, W) K1(k_merge, merge_cover, W)                                    \
    };
WORD_KERNELS(u32)
WORD_KERNELS(u64)

// By element type (u8, u32, u64).
template <class T>
struct Ke;
#define ELEM_KERNELS(T) \
    template <>         \
    struct Ke<T> {      \
        K1(k_scan, compact, T)        \
    };
ELEM_KERNELS(u8)
ELEM_KERNELS(u32)
ELEM_KERNELS(u64)

// By (element, index) type.
template <class T, class I>
struct Kti;
#define GS_KERNELS(T, I)                                           \
    template <>                                                    \
    struct Kti<T, I> {                                             \
        K2(k_maps, gather, T, I) K2(k_maps, scatter, T, I)         \
    };
GS_KERNELS(u8, u32)
GS_KERNELS(u8, u64)
GS_KERNELS(u32, u32)
GS_KERNELS(u32, u64)
GS_KERNELS(u64, u32)
GS_KERNELS(u64, u64)

// By (key, word) type.
template <class K, class W>
struct Kkw;
#define TK_KERNELS(K, W)                    \
    template <>                             \
    struct Kkw<K, W> {                      \
        K2(k_maps, text_keys, K, W)         \
        K2(k_maps, triple_keys, K, W)       \
    };
TK_KERNELS(u32, u32)
TK_KERNELS(u32, u64)
TK_KERNELS(u64, u32)
TK_KERNELS(u64, u64)

// By (key, value) type.
template <class K, class V>
struct Kkv;
#define RS_KERNELS(K, V)                    \
    template <>                             \
    struct Kkv<K, V> {                      \
        K2(k_radix, radix_scatter, K, V)    \
    };
RS_KERNELS(u32, u8)
RS_KERNELS(u32, u32)
RS_KERNELS(u32, u64)
RS_KERNELS(u64, u8)
RS_KERNELS(u64, u32)
RS_KERNELS(u64, u64)

static const auto PACK_TEXT = kern(k_maps::pack_text, "pack_text");
static const auto UNSORTED_FLAGS = kern(k_maps::unsorted_flags, "unsorted_flags");
static const auto FLAG_TILES = kern(k_scan::flag_tiles, "flag_tiles");
static const auto SCAN_CARRIES = kern(k_scan::scan_carries, "scan_carries");
static const auto SEGSCAN_CARRIES = kern(k_scan::segscan_carries, "segscan_carries");
static const auto MAP_EXACT = kern(k_map::map_exact, "map_exact");
static const auto MAP_EXACT_PACKED = kern(k_map::map_exact_packed, "map_exact_packed");
static const auto MAP_VERIFY = kern(k_map::map_verify, "map_verify");
static const auto MAP_SCHEME = kern(k_map::map_scheme, "map_scheme");
static const auto MAP_LOCATE_U32 = kern(k_map::map_locate_u32, "map_locate_u32");
static const auto MAP_LOCATE_U64 = kern(k_map::map_locate_u64, "map_locate_u64");

// ------------------------------------------- the host side of src/sa/cuda/

constexpr u32 THREADS = 256;
constexpr size_t TILE = 4096;  // scan.cu
constexpr size_t RTILE = 2048; // radix.cu
constexpr size_t CHUNK = 16;   // merge.cu
constexpr u64 LINE_BASES = 192;

static size_t div_ceil(size_t a, size_t b) { return (a + b - 1) / b; }

// A grid-stride launch over n elements.
static u64 grid(size_t n) { return std::clamp<size_t>(div_ceil(n, THREADS), 1, 1 << 18); }

template <class F, class... A>
static void run(u64 blocks, const Kern<F>& k, A... args) {
    if (blocks > 0x7fffffffu) {
        fail(__LINE__, k.name, strf("%llu blocks", blocks));
        return;
    }
    emu::launch((unsigned)blocks, THREADS, [&] { k.f(args...); }, k.name);
    g_launched.insert(k.name);
    check_guards(k.name);
}

// (layout, n0) of a RankLayout.
struct Layout {
    u32 kind;  // 0 identity, 1 interleaved, 2 split
    u64 n0;
    u64 slot(u64 p) const {
        if (kind == 0) return p;
        if (kind == 1) return 2 * (p / 3) + p % 3 - 1;
        return p % 3 == 1 ? p / 3 : n0 + p / 3;
    }
};
static const char* const LAYOUT_NAMES[] = {"identity", "interleaved", "split"};

// Device-to-host copies made by the ported host code (not by the tests
// reading results): cuda.rs makes one only in total().
static u64 g_copies = 0;

// Scans the tile aggregates sums[..tiles] into exclusive carries in place,
// one block; sums[tiles] gets the total.
static void carries(Buf<u64>& sums) {
    if (sums.len < 2) std::abort();
    run(1, SCAN_CARRIES, sums.p(), (u64)(sums.len - 1));
}

// The total of a carry scan (its last element; 0 with no tile): the one
// copy to the host.
static u64 total(const Buf<u64>& sums) {
    if (sums.len < 2) return 0;
    g_copies++;
    return sums.p()[sums.len - 1];
}

// The tile carries, the total last.
template <class W>
static Buf<u64> scan(Buf<W>& x, size_t n, bool inclusive) {
    size_t tiles = div_ceil(n, TILE);
    Buf<u64> sums = alloc<u64>(tiles + 1);
    if (n == 0) return sums;
    run(tiles, Kw<W>::scan_tiles, x.p(), (u64)n, sums.p());
    carries(sums);
    run(tiles, Kw<W>::scan_apply, x.p(), (u64)n, sums.p(), (u32)inclusive);
    return sums;
}

// Write offset of each tile, the total kept last.
static Buf<u64> keep_offsets(const Buf<u8>& keep) {
    size_t tiles = div_ceil(keep.len, TILE);
    Buf<u64> counts = alloc<u64>(tiles + 1);
    if (tiles > 0) {
        run(tiles, FLAG_TILES, keep.p(), (u64)keep.len, counts.p());
        carries(counts);
    }
    return counts;
}

template <class K, class V>
static void radix(Buf<K>& keys, Buf<V>& vals, u32 bits) {
    size_t n = keys.len;
    if (n < 2 || bits == 0) return;
    size_t tiles = div_ceil(n, RTILE);
    Buf<u64> counts = alloc<u64>(256 * tiles);
    Buf<K> tk = alloc<K>(n);
    Buf<V> tv = alloc<V>(n);
    u32 shift = 0;
    while (shift < bits) {
        u32 width = std::min<u32>(bits - shift, 8);
        run(tiles, Kw<K>::radix_hist, keys.p(), (u64)n, shift, width, (u64)tiles, counts.p());
        scan<u64>(counts, ((size_t)1 << width) * tiles, false);
        run(tiles, Kkv<K, V>::radix_scatter, keys.p(), vals.p(), (u64)n, shift, width, (u64)tiles,
            counts.p(), tk.p(), tv.p());
        std::swap(keys, tk);
        std::swap(vals, tv);
        shift += width;
    }
}

template <class K, class V>
static void radix_sort_pairs(Buf<K>& keys, Buf<V>& vals, u32 bits) {
    if (keys.len != vals.len) std::abort();
    radix(keys, vals, bits);
}

template <class W>
static W exclusive_scan(Buf<W>& x) {
    return (W)total(scan(x, x.len, false));
}

template <class W>
static void segmented_scan(Buf<W>& x, const Buf<u8>& heads) {
    size_t n = x.len;
    if (n == 0) return;
    size_t tiles = div_ceil(n, TILE);
    Buf<u64> sums = alloc<u64>(tiles);
    Buf<u8> flags = alloc<u8>(tiles);
    run(tiles, Kw<W>::segscan_tiles, x.p(), heads.p(), (u64)n, sums.p(), flags.p());
    run(1, SEGSCAN_CARRIES, sums.p(), flags.p(), (u64)tiles);
    run(tiles, Kw<W>::segscan_apply, x.p(), heads.p(), (u64)n, sums.p());
}

template <class T>
static Buf<T> compact(const Buf<T>& x, const Buf<u8>& keep) {
    Buf<u64> offsets = keep_offsets(keep);
    u64 kept = total(offsets);
    Buf<T> out = alloc<T>(kept);
    if (kept > 0)
        run(div_ceil(x.len, TILE), Ke<T>::compact, x.p(), keep.p(), (u64)x.len, offsets.p(), out.p());
    return out;
}

template <class T, class I>
static Buf<T> gather(const Buf<T>& src, const Buf<I>& idx) {
    Buf<T> out = alloc<T>(idx.len);
    if (idx.len > 0) run(grid(idx.len), Kti<T, I>::gather, src.p(), idx.p(), (u64)idx.len, out.p());
    return out;
}

template <class T, class I>
static void scatter(const Buf<T>& src, const Buf<I>& idx, Buf<T>& dst) {
    if (idx.len > 0)
        run(grid(idx.len), Kti<T, I>::scatter, src.p(), idx.p(), (u64)idx.len, dst.p(), (u64)dst.len);
}

template <class K>
static Buf<u8> head_flags(const Buf<K>& keys, const Buf<u8>* orf) {
    Buf<u8> out = alloc<u8>(keys.len);
    if (keys.len > 0)
        run(grid(keys.len), Kw<K>::head_flags, keys.p(), orf ? orf->p() : nullptr, (u64)keys.len, out.p());
    return out;
}

template <class W>
static Buf<W> widen(const Buf<u8>& flags) {
    Buf<W> out = alloc<W>(flags.len);
    if (flags.len > 0) run(grid(flags.len), Kw<W>::widen, flags.p(), (u64)flags.len, out.p());
    return out;
}

template <class W>
static Buf<W> iota_from(size_t n, u64 start) {
    Buf<W> out = alloc<W>(n);
    if (n > 0) run(grid(n), Kw<W>::iota_from, out.p(), (u64)n, start);
    return out;
}

template <class W>
static Buf<W> iota_mod3(size_t n) {
    Buf<W> out = alloc<W>(n);
    if (n > 0) run(grid(n), Kw<W>::iota_mod3, out.p(), (u64)n);
    return out;
}

template <class T>
static Buf<T> copy(const Buf<T>& b) {
    Buf<T> out = alloc<T>(b.len);
    std::memcpy(out.p(), b.p(), b.len * sizeof(T));
    return out;
}

// segmented_sort of cuda.rs: two stable radix sorts carrying a permutation.
template <class K, class V>
static void segmented_sort(const Buf<u8>& heads, Buf<K>& keys, Buf<V>& vals) {
    size_t m = keys.len;
    if (m < 2) return;
    Buf<u64> seg = widen<u64>(heads);
    u64 segments = total(scan(seg, m, true));
    Buf<u64> perm = iota_from<u64>(m, 0);
    Buf<K> k = copy(keys);
    radix(k, perm, sizeof(K) * 8);
    Buf<u64> s = gather(seg, perm);
    radix(s, perm, bits_for(segments));
    keys = gather(keys, perm);
    vals = gather(vals, perm);
}

template <class W>
static Buf<W> merge_asc(const Buf<W>& a, const Buf<W>& b) {
    size_t total = a.len + b.len;
    Buf<W> out = alloc<W>(total);
    if (total == 0) return out;
    run(div_ceil(div_ceil(total, CHUNK), THREADS), Kw<W>::merge_asc, a.p(), (u64)a.len, b.p(), (u64)b.len,
        out.p());
    return out;
}

// Order::Dc3 with Chars::Packed (syms null) or Chars::Symbols (packed null).
template <class W>
static Buf<W> merge_dc3(const Buf<W>& a, const Buf<W>& b, const Buf<u64>* packed, const Buf<W>* syms, u64 n,
                        const Buf<W>& rank, Layout l) {
    size_t total = a.len + b.len;
    Buf<W> out = alloc<W>(total);
    if (total == 0) return out;
    run(div_ceil(div_ceil(total, CHUNK), THREADS), Kw<W>::merge_dc3, a.p(), (u64)a.len, b.p(), (u64)b.len,
        packed ? packed->p() : nullptr, syms ? syms->p() : nullptr, n, rank.p(), l.kind, l.n0, out.p());
    return out;
}

// steps::CoverSample: a difference cover of period v with its tables and
// the ranks of a text's sampled suffixes, on the "device".
struct CoverBufs {
    u64 v, size;
    Buf<u32> rank, index, start, pairs;
};

// Order::Cover.
template <class W>
static Buf<W> merge_cover(const Buf<W>& a, const Buf<W>& b, const Buf<u64>& packed, u64 n, const CoverBufs& c) {
    size_t total = a.len + b.len;
    Buf<W> out = alloc<W>(total);
    if (total == 0) return out;
    run(div_ceil(div_ceil(total, CHUNK), THREADS), Kw<W>::merge_cover, a.p(), (u64)a.len, b.p(), (u64)b.len,
        packed.p(), n, c.v, c.size, c.rank.p(), c.index.p(), c.start.p(), c.pairs.p(), out.p());
    return out;
}

template <class W>
static Buf<u32> residues(const Buf<W>& x, u64 v) {
    Buf<u32> out = alloc<u32>(x.len);
    if (x.len > 0) run(grid(x.len), Kw<W>::residues, x.p(), (u64)x.len, v, out.p());
    return out;
}

template <class W>
static Buf<u32> cover_ranks(const Buf<W>& pos, u64 n, const CoverBufs& c) {
    Buf<u32> out = alloc<u32>(pos.len);
    if (pos.len > 0)
        run(grid(pos.len), Kw<W>::cover_ranks, pos.p(), (u64)pos.len, n, c.v, c.size, c.rank.p(), c.index.p(),
            c.start.p(), c.pairs.p(), out.p());
    return out;
}

static u64 count(const Buf<u8>& flags) { return total(keep_offsets(flags)); }

template <class W>
static Buf<W> fill(size_t n, W value) {
    Buf<W> out = alloc<W>(n);
    if (n > 0) run(grid(n), Kw<W>::fill, out.p(), (u64)n, (u64)value);
    return out;
}

static Buf<u64> pack_text(const std::vector<u8>& text) {
    size_t words = text.size() / 32 + 2;
    Buf<u64> out = alloc<u64>(words);
    if (!text.empty()) {
        Buf<u8> t = upload(text);
        run(grid(words), PACK_TEXT, t.p(), (u64)text.size(), (u64)words, out.p());
    }
    return out;
}

template <class K, class W>
static Buf<K> text_keys(const Buf<u64>& packed, u64 n, const Buf<W>& pos, u32 k) {
    u32 lbits = bits_for(k);
    if (!(k >= 1 && 2 * k + lbits <= sizeof(K) * 8)) std::abort();
    Buf<K> out = alloc<K>(pos.len);
    if (pos.len > 0)
        run(grid(pos.len), Kkw<K, W>::text_keys, packed.p(), n, pos.p(), (u64)pos.len, k, lbits, out.p());
    return out;
}

template <class W>
static Buf<u8> sort_suffixes(const Buf<u64>& packed, u64 n, Buf<W>& pos, u32 k) {
    Buf<u64> keys = text_keys<u64>(packed, n, pos, k);
    radix(keys, pos, 2 * k + bits_for(k));
    return head_flags(keys, nullptr);
}

template <class W>
static Buf<u8> text_heads(const Buf<u64>& packed, u64 n, const Buf<W>& pos, u32 k) {
    u32 lbits = bits_for(k);
    Buf<u8> out = alloc<u8>(pos.len);
    if (pos.len > 0)
        run(grid(pos.len), Kw<W>::text_heads, packed.p(), n, pos.p(), (u64)pos.len, k, lbits, out.p());
    return out;
}

template <class W>
static Buf<W> head_index(const Buf<u8>& heads, u64 add) {
    Buf<W> out = alloc<W>(heads.len);
    if (heads.len > 0) run(grid(heads.len), Kw<W>::head_index, heads.p(), (u64)heads.len, add, out.p());
    return out;
}

template <class W>
static Buf<W> compact_index(const Buf<u8>& keep) {
    Buf<u64> offsets = keep_offsets(keep);
    u64 kept = total(offsets);
    Buf<W> out = alloc<W>(kept);
    if (kept > 0)
        run(div_ceil(keep.len, TILE), Kw<W>::compact_index, keep.p(), (u64)keep.len, offsets.p(), out.p());
    return out;
}

template <class W>
static void scatter_slots(const Buf<W>& src, const Buf<W>& pos, Layout l, Buf<W>& dst) {
    if (pos.len > 0)
        run(grid(pos.len), Kw<W>::scatter_slots, src.p(), pos.p(), (u64)pos.len, l.kind, l.n0, dst.p(),
            (u64)dst.len);
}

template <class W>
static Buf<W> symbols(const Buf<u64>& packed, u64 n) {
    Buf<W> out = alloc<W>(n);
    if (n > 0) run(grid(n), Kw<W>::symbols, packed.p(), n, out.p());
    return out;
}

template <class W>
static Buf<W> fetch(const Buf<W>& rank, Layout l, const Buf<W>& pos, u64 h, u64 n) {
    Buf<W> out = alloc<W>(pos.len);
    if (pos.len > 0)
        run(grid(pos.len), Kw<W>::fetch, rank.p(), l.kind, l.n0, pos.p(), (u64)pos.len, h, n, out.p());
    return out;
}

template <class K, class W>
static Buf<K> triple_keys(const Buf<W>& s, const Buf<W>& pos, u64 n, u32 bits) {
    Buf<K> out = alloc<K>(pos.len);
    if (pos.len > 0) run(grid(pos.len), Kkw<K, W>::triple_keys, s.p(), pos.p(), (u64)pos.len, n, bits, out.p());
    return out;
}

template <class W>
static Buf<W> slots(const Buf<W>& pos, Layout l) {
    Buf<W> out = alloc<W>(pos.len);
    if (pos.len > 0) run(grid(pos.len), Kw<W>::slots, pos.p(), (u64)pos.len, l.kind, l.n0, out.p());
    return out;
}

template <class W>
static Buf<W> split_positions(const Buf<W>& s, u64 n0) {
    Buf<W> out = alloc<W>(s.len);
    if (s.len > 0) run(grid(s.len), Kw<W>::split_positions, s.p(), (u64)s.len, n0, out.p());
    return out;
}

template <class W>
static Buf<W> head_values(const Buf<u8>& heads, const Buf<W>& base, u64 add) {
    Buf<W> out = alloc<W>(heads.len);
    if (heads.len > 0)
        run(grid(heads.len), Kw<W>::head_values, heads.p(), base.p(), (u64)heads.len, add, out.p());
    return out;
}

template <class W>
static void add_flags(Buf<W>& x, const Buf<u8>& flags) {
    if (x.len > 0) run(grid(x.len), Kw<W>::add_flags, x.p(), flags.p(), (u64)x.len);
}

template <class W>
static void sub_const(Buf<W>& x, u64 sub) {
    if (x.len > 0) run(grid(x.len), Kw<W>::sub_const, x.p(), (u64)x.len, sub);
}

static Buf<u8> unsorted(const Buf<u8>& heads) {
    Buf<u8> out = alloc<u8>(heads.len);
    if (heads.len > 0) run(grid(heads.len), UNSORTED_FLAGS, heads.p(), (u64)heads.len, out.p());
    return out;
}

template <class W>
static Buf<W> segment_lengths(const Buf<u8>& heads) {
    size_t m = heads.len;
    Buf<W> ids = widen<W>(heads);
    scan(ids, m, true);
    Buf<W> starts = compact_index<W>(heads);
    Buf<W> out = alloc<W>(m);
    if (m > 0)
        run(grid(m), Kw<W>::segment_lengths, ids.p(), starts.p(), (u64)starts.len, (u64)m, out.p());
    return out;
}

template <class W>
static Buf<u8> in_range(const Buf<W>& x, u64 lo, u64 hi) {
    Buf<u8> out = alloc<u8>(x.len);
    if (x.len > 0) run(grid(x.len), Kw<W>::in_range, x.p(), (u64)x.len, lo, hi, out.p());
    return out;
}

template <class W>
static Buf<u8> mod3_is(const Buf<W>& x, u64 r) {
    Buf<u8> out = alloc<u8>(x.len);
    if (x.len > 0) run(grid(x.len), Kw<W>::mod3_is, x.p(), (u64)x.len, r, out.p());
    return out;
}

// fm_tables of cuda.rs: (primary, Occ lines as 8 words with line-local
// counts, sampled SA).
template <class W>
static void fm_tables(const Buf<u64>& packed, const Buf<W>& sa, u32 shift, u64& primary, std::vector<u64>& occ,
                      std::vector<W>& ssa) {
    u64 n = sa.len;
    Buf<u64> zero = alloc<u64>(1);
    if (n > 0) run(grid(sa.len), Kw<W>::find_zero, sa.p(), n, zero.p());
    primary = n == 0 ? 0 : 1 + zero.host()[0];
    u64 lines = n / LINE_BASES + 1;
    Buf<u64> o = alloc<u64>(8 * lines);
    run(grid(lines), Kw<W>::occ_lines, packed.p(), sa.p(), n, primary, lines, o.p());
    u64 samples = (n >> shift) + 1;
    Buf<W> s = alloc<W>(samples);
    run(grid(samples), Kw<W>::sample_sa, sa.p(), n, shift, samples, s.p());
    occ = o.host();
    ssa = s.host();
}

// -------------------------------------------------------------- references

// Positions sorted by suffix (shorter first on a common prefix).
template <class C>
static std::vector<u64> suffix_array(const std::vector<C>& t) {
    std::vector<u64> sa(t.size());
    std::iota(sa.begin(), sa.end(), 0);
    std::sort(sa.begin(), sa.end(), [&](u64 a, u64 b) {
        return std::lexicographical_compare(t.begin() + a, t.end(), t.begin() + b, t.end());
    });
    return sa;
}

// Sizes around the tiles: scan 4096, radix 2048, merge 16 per thread and
// 4096 per block.
static const size_t SIZES[] = {0, 1, 2, 31, 2047, 2048, 2049, 4095, 4096, 4097, 9000};

template <class T>
static std::vector<T> cast_vec(const std::vector<u64>& v) {
    std::vector<T> o(v.size());
    for (size_t i = 0; i < v.size(); i++) o[i] = (T)v[i];
    return o;
}

// Flags: nonzero (not only 1) with probability 1/den; den 0: none.
static std::vector<u8> random_flags(size_t n, u64 den) {
    std::vector<u8> f(n);
    for (auto& x : f) x = den && below(den) == 0 ? (u8)(1 + below(255)) : 0;
    return f;
}

static std::vector<u8> random_text(size_t n, int kind) {
    std::vector<u8> t(n);
    u64 period = 1 + below(7);
    for (size_t i = 0; i < n; i++) {
        if (kind == 0)
            t[i] = (u8)below(4);
        else if (kind == 1)
            t[i] = (u8)((i % period) * 5 % 4);  // periodic
        else
            t[i] = i >= 64 && below(8) ? t[i - 64 + below(3)] : (u8)below(4);  // repeats
    }
    return t;
}

// ------------------------------------------------------------------- tests

template <class K, class V>
static void test_radix(size_t n, u32 bits, int dist) {
    static const char* const DIST[] = {"uniform", "4 values", "runs"};
    u64 mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    u64 pool[4];
    for (u64& p : pool) p = rnd() & mask;
    std::vector<K> k(n);
    std::vector<V> v(n);
    for (size_t i = 0; i < n; i++) {
        u64 x = rnd() & mask;
        if (dist == 1) x = pool[below(4)];
        if (dist == 2 && i > 0 && below(4)) x = (u64)k[i - 1];
        k[i] = (K)x;
        v[i] = (V)i;
    }
    std::vector<size_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return k[a] < k[b]; });
    std::vector<K> ek(n);
    std::vector<V> ev(n);
    for (size_t i = 0; i < n; i++) {
        ek[i] = k[idx[i]];
        ev[i] = v[idx[i]];
    }
    Buf<K> bk = upload(k);
    Buf<V> bv = upload(v);
    u64 c0 = g_copies;
    radix_sort_pairs(bk, bv, bits);
    SAME_VAL(g_copies - c0, 0, "radix_sort_pairs<%s,%s> n=%zu: copies to the host", tn<K>(), tn<V>(), n);
    SAME(bk.host(), ek, "radix_sort_pairs<%s,%s> n=%zu bits=%u %s: keys", tn<K>(), tn<V>(), n, bits, DIST[dist]);
    SAME(bv.host(), ev, "radix_sort_pairs<%s,%s> n=%zu bits=%u %s: values (stability)", tn<K>(), tn<V>(), n, bits,
         DIST[dist]);
}

static void group_radix() {
    for (size_t n : SIZES) {
        test_radix<u32, u32>(n, 32, (int)(n % 3));
        test_radix<u64, u64>(n, 64, 2);
        test_radix<u32, u8>(n, 11, 1);
        test_radix<u32, u64>(n, 17, 0);
        test_radix<u64, u8>(n, 40, (int)(n % 3));
        test_radix<u64, u32>(n, 24, 1);
    }
    // Every width of the last pass, and keys of 1 to 64 bits.
    for (u32 bits : {1u, 2u, 3u, 5u, 7u, 8u, 9u, 15u, 16u, 23u, 31u}) test_radix<u32, u32>(2049, bits, 0);
    for (u32 bits : {33u, 47u, 57u, 63u}) test_radix<u64, u32>(2049, bits, 0);
    // bits = 0 sorts nothing.
    std::vector<u32> k = {3, 1, 2}, v = {0, 1, 2};
    Buf<u32> bk = upload(k), bv = upload(v);
    radix_sort_pairs(bk, bv, 0);
    SAME(bk.host(), k, "radix_sort_pairs bits=0");
}

// The carry scan alone, over `tiles` aggregates (more than TILE: several
// passes of its one block). Random values wrap.
static void test_carries(size_t tiles, bool small) {
    std::vector<u64> v(tiles + 1);
    for (auto& e : v) e = small ? below(5) : rnd();
    std::vector<u64> e(tiles + 1);
    u64 acc = 0;
    for (size_t t = 0; t < tiles; t++) {
        e[t] = acc;
        acc += v[t];
    }
    e[tiles] = acc;
    Buf<u64> b = upload(v);
    carries(b);
    SAME(b.host(), e, "scan_carries tiles=%zu %s", tiles, small ? "small" : "random");
}

// The segmented carry scan alone: sums[t] becomes the (sum, head) pair scan
// entering tile t; flags of 1 to 255 count as heads.
static void test_segcarries(size_t tiles, u64 den) {
    std::vector<u64> v(tiles);
    for (auto& x : v) x = rnd();
    std::vector<u8> f = random_flags(tiles, den);
    std::vector<u64> e(tiles);
    u64 acc = 0;
    for (size_t t = 0; t < tiles; t++) {
        e[t] = acc;
        acc = f[t] ? v[t] : acc + v[t];
    }
    Buf<u64> b = upload(v);
    Buf<u8> fb = upload(f);
    run(1, SEGSCAN_CARRIES, b.p(), fb.p(), (u64)tiles);
    SAME(b.host(), e, "segscan_carries tiles=%zu flags 1/%llu", tiles, den);
    SAME(fb.host(), f, "segscan_carries tiles=%zu flags 1/%llu: flags unchanged", tiles, den);
}

// Scans of x, inclusive and exclusive, their totals, and the copies to the
// host each makes (the scan none; the total one, when n > 0).
template <class W>
static void check_scan(const std::vector<W>& x, const char* what) {
    size_t n = x.size();
    u64 sum = 0;
    for (W e : x) sum += e;
    for (int inc = 0; inc < 2; inc++) {
        Buf<W> b = upload(x);
        u64 c0 = g_copies;
        Buf<u64> sums = scan(b, n, inc);
        SAME_VAL(g_copies - c0, 0, "scan<%s> n=%zu: copies to the host", tn<W>(), n);
        std::vector<W> e(n);
        u64 acc = 0;
        for (size_t i = 0; i < n; i++) {
            if (inc) acc += x[i];
            e[i] = (W)acc;
            if (!inc) acc += x[i];
        }
        SAME(b.host(), e, "%s scan<%s> n=%zu %s", inc ? "inclusive" : "exclusive", tn<W>(), n, what);
        SAME_VAL(total(sums), sum, "scan<%s> n=%zu %s: total", tn<W>(), n, what);
    }
    Buf<W> b = upload(x);
    u64 c0 = g_copies;
    SAME_VAL(exclusive_scan(b), (W)sum, "exclusive_scan<%s> n=%zu %s: returned total", tn<W>(), n, what);
    SAME_VAL(g_copies - c0, n > 0, "exclusive_scan<%s> n=%zu: copies to the host", tn<W>(), n);
}

// A segmented scan of x with heads h against the sequential one; it copies
// nothing to the host.
template <class W>
static void check_segscan(const std::vector<W>& x, const std::vector<u8>& h, const char* what) {
    size_t n = x.size();
    Buf<W> b = upload(x);
    Buf<u8> hb = upload(h);
    u64 c0 = g_copies;
    segmented_scan(b, hb);
    SAME_VAL(g_copies - c0, 0, "segmented_scan<%s> n=%zu: copies to the host", tn<W>(), n);
    std::vector<W> e(n);
    u64 acc = 0;
    for (size_t i = 0; i < n; i++) {
        if (h[i]) acc = 0;
        acc += x[i];
        e[i] = (W)acc;
    }
    SAME(b.host(), e, "segmented_scan<%s> n=%zu heads %s", tn<W>(), n, what);
}

// compact_index (both widths) and count of keep against the sequential
// ones; one copy to the host each when n > 0.
static void check_compact_index(const std::vector<u8>& keep, const char* what) {
    size_t n = keep.size();
    std::vector<u64> e;
    for (size_t i = 0; i < n; i++)
        if (keep[i]) e.push_back(i);
    Buf<u8> kb = upload(keep);
    u64 c0 = g_copies;
    SAME(compact_index<u32>(kb).host(), cast_vec<u32>(e), "compact_index<u32> n=%zu keep %s", n, what);
    SAME_VAL(g_copies - c0, n > 0, "compact_index<u32> n=%zu: copies to the host", n);
    SAME(compact_index<u64>(kb).host(), e, "compact_index<u64> n=%zu keep %s", n, what);
    c0 = g_copies;
    SAME_VAL(count(kb), e.size(), "count n=%zu flags %s", n, what);
    SAME_VAL(g_copies - c0, n > 0, "count n=%zu: copies to the host", n);
}

template <class W>
static std::vector<W> random_words(size_t n) {
    std::vector<W> x(n);
    for (auto& e : x) e = (W)rnd();
    return x;
}

template <class W>
static void test_scan(size_t n) {
    check_scan<W>(random_words<W>(n), "random");  // wraps
    check_scan<W>(std::vector<W>(n, 1), "ones");
    for (u64 den : {1, 3, 5000, 0}) {
        std::vector<u8> h = random_flags(n, den);
        if (n && den == 3) h[0] = 0;
        check_segscan<W>(random_words<W>(n), h, strf("1/%llu", den).c_str());
    }
    // Segments that cross tile boundaries, and heads on either side of one.
    if (n > TILE) {
        auto heads_at = [&](std::initializer_list<size_t> at, const char* what) {
            std::vector<u8> h(n, 0);
            for (size_t i : at)
                if (i < n) h[i] = 1;
            check_segscan<W>(random_words<W>(n), h, what);
        };
        heads_at({0}, "at 0 only");
        heads_at({TILE}, "at the start of tile 1 only");
        heads_at({TILE - 1}, "at the end of tile 0 only");
        heads_at({5, TILE + 1, 2 * TILE - 1}, "inside tiles 0 and 1 and at the end of tile 1");
        std::vector<u8> h(n, 0);
        for (size_t i = 0; i < n; i += TILE) h[i] = 1;
        check_segscan<W>(random_words<W>(n), h, "at every tile start");
    }
}

template <class T>
static void test_compact(size_t n, u64 den) {
    std::vector<T> x(n);
    for (auto& e : x) e = (T)rnd();
    std::vector<u8> keep = random_flags(n, den);
    std::vector<T> e;
    for (size_t i = 0; i < n; i++)
        if (keep[i]) e.push_back(x[i]);
    Buf<u8> kb = upload(keep);
    SAME(compact(upload(x), kb).host(), e, "compact<%s> n=%zu keep 1/%llu", tn<T>(), n, den);
}

static void group_scan() {
    for (size_t n : SIZES) {
        test_scan<u32>(n);
        test_scan<u64>(n);
        for (u64 den : {1, 2, 7, 0}) check_compact_index(random_flags(n, den), strf("1/%llu", den).c_str());
        test_compact<u8>(n, 2);
        test_compact<u32>(n, 7);
        test_compact<u64>(n, 1);
        test_compact<u64>(n, 0);
    }
    // The carry scans alone, up to several passes of their one block (TILE
    // tiles a pass).
    for (size_t tiles : {1, 2, 255, 256, 4095, 4096, 4097, 8192, 3 * 4096 + 17}) {
        test_carries(tiles, false);
        test_carries(tiles, true);
        for (u64 den : {1, 3, 5000, 0}) test_segcarries(tiles, den);
    }
}

// Inputs of more tiles than one pass of the carry scans' block (TILE
// tiles), end to end: the carry crosses from one pass to the next. Slow in
// emulation (16.8 M elements, about 1 s a launch), so a group of its own
// with one exclusive scan and one segmented scan (a compaction's offsets
// are the same scan_carries).
static void group_scan_big() {
    size_t n = (TILE + 2) * TILE + 7;  // 4099 tiles
    std::vector<u32> x = random_words<u32>(n);
    std::vector<u32> e(n);
    u64 acc = 0;
    for (size_t i = 0; i < n; i++) {
        e[i] = (u32)acc;
        acc += x[i];
    }
    Buf<u32> b = upload(x);
    u64 c0 = g_copies;
    SAME_VAL(exclusive_scan(b), (u32)acc, "exclusive_scan<u32> n=%zu: returned total", n);
    SAME_VAL(g_copies - c0, 1, "exclusive_scan<u32> n=%zu: copies to the host", n);
    SAME(b.host(), e, "exclusive scan<u32> n=%zu", n);
    // Few heads: segments over thousands of tiles; one in the first tile of
    // the carries' second pass, one in the tile before it.
    std::vector<u8> h(n, 0);
    for (size_t i : {(size_t)3, TILE * TILE + 1, TILE * TILE - 2, n - 1}) h[i] = 1;
    check_segscan<u32>(random_words<u32>(n), h, "four, across passes");
}

template <class T, class I>
static void test_gather_scatter(size_t n) {
    // Gather: any indices, repeats allowed.
    size_t sn = n + 1 + below(100);
    std::vector<T> src(sn);
    for (auto& e : src) e = (T)rnd();
    std::vector<I> idx(n);
    for (auto& e : idx) e = (I)below(sn);
    std::vector<T> e(n);
    for (size_t i = 0; i < n; i++) e[i] = src[idx[i]];
    Buf<T> sb = upload(src);
    SAME(gather(sb, upload(idx)).host(), e, "gather<%s,%s> n=%zu", tn<T>(), tn<I>(), n);
    // Scatter: distinct indices into a destination of dn elements; indices
    // at or past dn (some of them) are dropped.
    size_t dn = n + below(50);
    std::vector<u64> perm(dn + 40);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), g_rng);
    std::vector<I> sidx(n);
    for (size_t i = 0; i < n; i++) sidx[i] = (I)perm[i];
    if (n > 2) sidx[n / 2] = (I)~(u64)0;  // far out
    std::vector<T> vals(n), dst(dn);
    for (auto& v : vals) v = (T)rnd();
    for (auto& v : dst) v = (T)rnd();
    std::vector<T> want = dst;
    for (size_t i = 0; i < n; i++)
        if ((u64)sidx[i] < dn) want[sidx[i]] = vals[i];
    Buf<T> db = upload(dst);
    scatter(upload(vals), upload(sidx), db);
    SAME(db.host(), want, "scatter<%s,%s> n=%zu dn=%zu", tn<T>(), tn<I>(), n, dn);
}

template <class K>
static void test_head_flags(size_t n) {
    std::vector<K> k(n);
    for (size_t i = 0; i < n; i++) k[i] = i > 0 && below(3) ? k[i - 1] : (K)(below(4) << (sizeof(K) * 8 - 3));
    std::vector<u8> orf = random_flags(n, 5);
    std::vector<u8> e1(n), e2(n);
    for (size_t i = 0; i < n; i++) {
        e1[i] = i == 0 || k[i] != k[i - 1];
        e2[i] = e1[i] || orf[i] != 0;
    }
    Buf<K> kb = upload(k);
    Buf<u8> ob = upload(orf);
    SAME(head_flags(kb, nullptr).host(), e1, "head_flags<%s> n=%zu", tn<K>(), n);
    SAME(head_flags(kb, &ob).host(), e2, "head_flags<%s> n=%zu with or", tn<K>(), n);
}

// Heads are 0 or 1 here: cuda.rs numbers the segments by an inclusive scan of
// the widened heads, so a head of 2 would count twice (every producer of
// heads, head_flags and the like, writes 1).
template <class W>
static void test_segment_lengths(size_t n, u64 den, bool head0) {
    std::vector<u8> h = random_flags(n, den);
    for (auto& f : h) f = f != 0;
    if (n) h[0] = head0 ? 1 : 0;
    std::vector<W> e(n);
    size_t s = 0;
    for (size_t i = 1; i <= n; i++) {
        if (i == n || h[i]) {
            for (size_t j = s; j < i; j++) e[j] = (W)(i - s);
            s = i;
        }
    }
    SAME(segment_lengths<W>(upload(h)).host(), e, "segment_lengths<%s> n=%zu heads 1/%llu, index 0 %s", tn<W>(), n,
         den, head0 ? "a head" : "no head");
}

template <class W>
static void test_maps(size_t n) {
    const char* w = tn<W>();
    u64 start = below(2) ? rnd() : below(1000);
    std::vector<W> e(n);
    for (size_t i = 0; i < n; i++) e[i] = (W)(start + i);
    SAME(iota_from<W>(n, start).host(), e, "iota_from<%s> n=%zu start=%llu", w, n, start);
    for (size_t i = 0; i < n; i++) e[i] = (W)(3 * (i / 2) + 1 + i % 2);
    SAME(iota_mod3<W>(n).host(), e, "iota_mod3<%s> n=%zu", w, n);
    u64 v = rnd();
    SAME(fill<W>(n, (W)v).host(), std::vector<W>(n, (W)v), "fill<%s> n=%zu", w, n);

    std::vector<u8> h = random_flags(n, 3);
    Buf<u8> hb = upload(h);
    u64 add = below(2) ? rnd() : below(10);
    for (size_t i = 0; i < n; i++) e[i] = h[i] ? (W)(i + add) : 0;
    SAME(head_index<W>(hb, add).host(), e, "head_index<%s> n=%zu add=%llu", w, n, add);
    std::vector<W> base(n);
    for (auto& b : base) b = (W)rnd();
    for (size_t i = 0; i < n; i++) e[i] = h[i] ? (W)((u64)base[i] + add) : 0;
    SAME(head_values<W>(hb, upload(base), add).host(), e, "head_values<%s> n=%zu", w, n);
    for (size_t i = 0; i < n; i++) e[i] = (W)((u64)base[i] + h[i]);
    Buf<W> x = upload(base);
    add_flags(x, hb);
    SAME(x.host(), e, "add_flags<%s> n=%zu", w, n);
    u64 sub = below(2) ? rnd() : below(5);
    for (size_t i = 0; i < n; i++) e[i] = (W)((u64)base[i] - sub);
    x = upload(base);
    sub_const(x, sub);
    SAME(x.host(), e, "sub_const<%s> n=%zu sub=%llu", w, n, sub);
    for (size_t i = 0; i < n; i++) e[i] = (W)h[i];
    SAME(widen<W>(hb).host(), e, "widen<%s> n=%zu", w, n);

    std::vector<W> small(n);
    for (auto& s : small) s = (W)(below(4) ? below(20) : rnd());
    Buf<W> sb = upload(small);
    std::vector<u8> f(n);
    const std::pair<u64, u64> ranges[] = {{3, 9}, {0, 0}, {5, ~0ull}, {9, 3}};
    for (auto [lo, hi] : ranges) {
        for (size_t i = 0; i < n; i++) f[i] = (u64)small[i] >= lo && (u64)small[i] <= hi;
        SAME(in_range(sb, lo, hi).host(), f, "in_range<%s> n=%zu [%llu, %llu]", w, n, lo, hi);
    }
    for (u64 r = 0; r < 3; r++) {
        for (size_t i = 0; i < n; i++) f[i] = (u64)small[i] % 3 == r;
        SAME(mod3_is(sb, r).host(), f, "mod3_is<%s> n=%zu r=%llu", w, n, r);
    }
    // split_positions: slots of a split layout back to positions.
    u64 n0 = n / 2 + below(3);
    std::vector<W> sl(n);
    for (size_t i = 0; i < n; i++) sl[i] = (W)below(2 * n0 + 1);
    for (size_t i = 0; i < n; i++) {
        u64 s = sl[i];
        e[i] = (W)(s < n0 ? 3 * s + 1 : 3 * (s - n0) + 2);
    }
    SAME(split_positions(upload(sl), n0).host(), e, "split_positions<%s> n=%zu n0=%llu", w, n, n0);
}

static void test_unsorted(size_t n, u64 den) {
    std::vector<u8> h = random_flags(n, den);
    std::vector<u8> e(n);
    for (size_t i = 0; i < n; i++) e[i] = !(h[i] != 0 && (i + 1 == n || h[i + 1] != 0));
    SAME(unsorted(upload(h)).host(), e, "unsorted_flags n=%zu heads 1/%llu", n, den);
}

static void group_maps() {
    for (size_t n : SIZES) {
        test_gather_scatter<u8, u32>(n);
        test_gather_scatter<u8, u64>(n);
        test_gather_scatter<u32, u32>(n);
        test_gather_scatter<u32, u64>(n);
        test_gather_scatter<u64, u32>(n);
        test_gather_scatter<u64, u64>(n);
        test_head_flags<u32>(n);
        test_head_flags<u64>(n);
        for (u64 den : {1, 4, 3000}) {
            test_segment_lengths<u32>(n, den, true);
            test_segment_lengths<u64>(n, den, den != 1);
            test_unsorted(n, den);
        }
        test_segment_lengths<u32>(n, 0, false);
        test_maps<u32>(n);
        test_maps<u64>(n);
    }
}

// The text key of steps::Backend::text_keys, from the unpacked text.
static u64 text_key_ref(const std::vector<u8>& t, u64 p, u32 k) {
    u64 n = t.size(), chars = 0;
    for (u32 j = 0; j < k; j++) chars = chars << 2 | (p + j < n ? t[p + j] : 0);
    u64 len = std::min<u64>(n - p, k);
    return chars << bits_for(k) | len;
}

template <class K, class W>
static void test_text_keys(const std::vector<u8>& t, const Buf<u64>& packed, u32 k, const char* kind) {
    u64 n = t.size();
    std::vector<W> pos(n);
    std::iota(pos.begin(), pos.end(), 0);
    std::shuffle(pos.begin(), pos.end(), g_rng);
    std::vector<K> e(n);
    std::vector<u8> heads(n);
    for (size_t i = 0; i < n; i++) {
        e[i] = (K)text_key_ref(t, pos[i], k);
        heads[i] = i == 0 || e[i] != e[i - 1];
    }
    Buf<W> pb = upload(pos);
    SAME(text_keys<K>(packed, n, pb, k).host(), e, "text_keys<%s,%s> n=%llu k=%u %s", tn<K>(), tn<W>(), n, k, kind);
    SAME(text_heads(packed, n, pb, k).host(), heads, "text_heads<%s> n=%llu k=%u %s", tn<W>(), n, k, kind);
}

template <class W>
static void test_sort_suffixes(const std::vector<u8>& t, const Buf<u64>& packed, u32 k, const char* kind) {
    u64 n = t.size();
    std::vector<W> pos(n);
    std::iota(pos.begin(), pos.end(), 0);
    std::shuffle(pos.begin(), pos.end(), g_rng);
    std::vector<W> e = pos;
    std::stable_sort(e.begin(), e.end(), [&](W a, W b) { return text_key_ref(t, a, k) < text_key_ref(t, b, k); });
    std::vector<u8> heads(n);
    for (size_t i = 0; i < n; i++) heads[i] = i == 0 || text_key_ref(t, e[i], k) != text_key_ref(t, e[i - 1], k);
    Buf<W> pb = upload(pos);
    Buf<u8> hb = sort_suffixes(packed, n, pb, k);
    SAME(pb.host(), e, "sort_suffixes<%s> n=%llu k=%u %s: positions", tn<W>(), n, k, kind);
    SAME(hb.host(), heads, "sort_suffixes<%s> n=%llu k=%u %s: heads", tn<W>(), n, k, kind);
}

static void group_text() {
    static const char* const KIND[] = {"random", "periodic", "repeats"};
    for (size_t n : {0, 1, 2, 31, 32, 33, 63, 64, 65, 2049, 4097, 9000}) {
        for (int kind = 0; kind < 3; kind++) {
            if (n > 4097 && kind == 2) continue;
            std::vector<u8> t = random_text(n, kind);
            std::vector<u64> words(n / 32 + 2, 0);
            for (size_t p = 0; p < n; p++) words[p / 32] |= (u64)t[p] << (62 - 2 * (p % 32));
            Buf<u64> packed = pack_text(t);
            SAME(packed.host(), words, "pack_text n=%zu %s", n, KIND[kind]);
            std::vector<u64> sym(n);
            for (size_t p = 0; p < n; p++) sym[p] = t[p] + 1;
            SAME(symbols<u32>(packed, n).host(), cast_vec<u32>(sym), "symbols<u32> n=%zu", n);
            SAME(symbols<u64>(packed, n).host(), sym, "symbols<u64> n=%zu", n);
            if (kind == 0 || n < 100) {
                for (u32 k : {1u, 7u, 13u}) test_text_keys<u32, u32>(t, packed, k, KIND[kind]);
                test_text_keys<u32, u64>(t, packed, 13, KIND[kind]);
                test_text_keys<u64, u32>(t, packed, 29, KIND[kind]);
            }
            for (u32 k : {1u, 16u, 29u}) test_text_keys<u64, u64>(t, packed, k, KIND[kind]);
            if (n <= 4097) {
                test_sort_suffixes<u32>(t, packed, kind == 1 ? 29 : 5, KIND[kind]);
                test_sort_suffixes<u64>(t, packed, 12, KIND[kind]);
            }
        }
    }
}

// The positions a layout holds, for a text of n.
static std::vector<u64> layout_positions(u64 n, u32 kind) {
    std::vector<u64> ps;
    for (u64 p = 0; p < n; p++)
        if (kind == 0 || p % 3 != 0) ps.push_back(p);
    return ps;
}

template <class W>
static void test_layouts(size_t n) {
    for (u32 kind = 0; kind < 3; kind++) {
        Layout l = {kind, kind == 2 ? (u64)(n + 2) / 3 : 0};
        const char* ln = LAYOUT_NAMES[kind];
        std::vector<u64> ps = layout_positions(n, kind);
        u64 size = 0;
        for (u64 p : ps) size = std::max(size, l.slot(p) + 1);
        std::shuffle(ps.begin(), ps.end(), g_rng);
        std::vector<W> pos = cast_vec<W>(ps);
        Buf<W> pb = upload(pos);
        std::vector<W> e(ps.size());
        for (size_t i = 0; i < ps.size(); i++) e[i] = (W)l.slot(ps[i]);
        SAME(slots(pb, l).host(), e, "slots<%s> n=%zu %s", tn<W>(), n, ln);
        // scatter_slots into the full layout, and into one too short (the
        // writes past its end are dropped).
        std::vector<W> src(ps.size());
        for (auto& s : src) s = (W)rnd();
        Buf<W> srcb = upload(src);
        for (u64 dn : {size, size / 2}) {
            std::vector<W> dst(dn);
            for (auto& d : dst) d = (W)rnd();
            std::vector<W> want = dst;
            for (size_t i = 0; i < ps.size(); i++)
                if (l.slot(ps[i]) < dn) want[l.slot(ps[i])] = src[i];
            Buf<W> db = upload(dst);
            scatter_slots(srcb, pb, l, db);
            SAME(db.host(), want, "scatter_slots<%s> n=%zu %s dn=%llu", tn<W>(), n, ln, dn);
        }
        // fetch: rank of pos + h, 0 at or past n.
        std::vector<W> rank(size);
        for (auto& r : rank) r = (W)rnd();
        Buf<W> rb = upload(rank);
        for (u64 h : {0, 1, 2, 3, 9}) {
            std::vector<W> q;
            for (u64 p = 0; p < n + 5; p++)
                if (p + h >= n || kind == 0 || (p + h) % 3 != 0) q.push_back((W)p);
            std::shuffle(q.begin(), q.end(), g_rng);
            std::vector<W> want(q.size());
            for (size_t i = 0; i < q.size(); i++) {
                u64 p = (u64)q[i] + h;
                want[i] = p < n ? rank[l.slot(p)] : 0;
            }
            SAME(fetch(rb, l, upload(q), h, n).host(), want, "fetch<%s> n=%zu %s h=%llu", tn<W>(), n, ln, h);
        }
        // triple_keys: (s[p], s[p+1], s[p+2]) in one key, 0 past n.
        if (kind == 0) {
            for (u32 bits : {1u, 4u, 10u, 14u, 21u}) {
                std::vector<W> sym(n);
                for (auto& c : sym) c = (W)(rnd() & ((1ull << bits) - 1));
                std::vector<W> q;
                for (u64 p = 0; p < n + 3; p++) q.push_back((W)p);
                std::shuffle(q.begin(), q.end(), g_rng);
                auto c = [&](u64 p) -> u64 { return p < n ? (u64)sym[p] : 0; };
                std::vector<u64> want(q.size());
                for (size_t i = 0; i < q.size(); i++) {
                    u64 p = q[i];
                    want[i] = c(p) << (2 * bits) | c(p + 1) << bits | c(p + 2);
                }
                SAME(triple_keys<u64>(upload(sym), upload(q), n, bits).host(), want,
                     "triple_keys<u64,%s> n=%zu bits=%u", tn<W>(), n, bits);
                if (3 * bits <= 32) {
                    std::vector<u32> want32(want.begin(), want.end());
                    SAME(triple_keys<u32>(upload(sym), upload(q), n, bits).host(), want32,
                         "triple_keys<u32,%s> n=%zu bits=%u", tn<W>(), n, bits);
                }
            }
        }
    }
}

static void group_layouts() {
    for (size_t n : SIZES) {
        test_layouts<u32>(n);
        test_layouts<u64>(n);
    }
}

// Equal keys tell which input an element came from.
struct Tagged {
    u32 key, tag;
    bool operator==(const Tagged& o) const { return key == o.key && tag == o.tag; }
    u64 as_u64() const { return (u64)key << 32 | tag; }
};
static bool operator<(Tagged x, Tagged y) { return x.key < y.key; }

template <class W>
static void test_merge_asc(size_t na, size_t nb, u64 range) {
    std::vector<W> a(na), b(nb);
    for (auto& x : a) x = (W)(range ? below(range) : rnd());
    for (auto& x : b) x = (W)(range ? below(range) : rnd());
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::vector<W> e(na + nb);
    std::merge(a.begin(), a.end(), b.begin(), b.end(), e.begin());
    SAME(merge_asc(upload(a), upload(b)).host(), e, "merge<%s> Ascending na=%zu nb=%zu range=%llu", tn<W>(), na, nb,
         range);
}

// merge.cu's merge_path with its Ascending order on tagged elements: on
// equal keys the first input's elements come first (std::merge's rule).
static void test_merge_ties(size_t na, size_t nb, u64 range) {
    std::vector<Tagged> a(na), b(nb);
    for (size_t i = 0; i < na; i++) a[i] = {(u32)below(range), 0};
    for (size_t i = 0; i < nb; i++) b[i] = {(u32)below(range), 0};
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    for (size_t i = 0; i < na; i++) a[i].tag = 0x10000000u | (u32)i;
    for (size_t i = 0; i < nb; i++) b[i].tag = 0x20000000u | (u32)i;
    std::vector<Tagged> e(na + nb), out(na + nb);
    std::merge(a.begin(), a.end(), b.begin(), b.end(), e.begin());
    size_t total = na + nb;
    if (total) {
        emu::launch(
            (unsigned)div_ceil(div_ceil(total, CHUNK), THREADS), THREADS,
            [&] {
                k_merge::merge_path<Tagged>(a.data(), na, b.data(), nb, out.data(), k_merge::Ascending<Tagged>());
            },
            "merge_path<Tagged, Ascending>");
    }
    SAME(out, e, "merge_path Ascending ties na=%zu nb=%zu range=%llu (value = key << 32 | tag, tag 1... from a, 2... from b)",
         na, nb, range);
}

// The DC3 merge of the sorted suffixes p % 3 == 0 with the sorted p % 3 != 0
// gives the suffix array. sym: the characters, >= 1; packed: they are 1..=4
// and go through pack_text.
template <class W>
static void test_merge_dc3(const std::vector<u64>& sym, const std::vector<u64>& sa, bool packed, u32 kind,
                           const char* what) {
    u64 n = sym.size();
    std::vector<W> a, b;
    for (u64 p : sa) (p % 3 == 0 ? a : b).push_back((W)p);
    Layout l = {kind, kind == 2 ? (n + 2) / 3 : 0};
    u64 size = 0;
    for (u64 p = 0; p < n; p++)
        if (p % 3) size = std::max(size, l.slot(p) + 1);
    // Ranks 1.. of the p % 3 != 0 suffixes; slots of no position hold junk
    // (the merge must not read them).
    std::vector<W> rank(size, (W)0x5eed5eed);
    for (size_t i = 0; i < b.size(); i++) rank[l.slot(b[i])] = (W)(i + 1);
    Buf<W> rb = upload(rank);
    Buf<W> out;
    if (packed) {
        std::vector<u8> t(n);
        for (size_t p = 0; p < n; p++) t[p] = (u8)(sym[p] - 1);
        Buf<u64> pk = pack_text(t);
        out = merge_dc3<W>(upload(a), upload(b), &pk, nullptr, n, rb, l);
    } else {
        Buf<W> sb = upload(cast_vec<W>(sym));
        out = merge_dc3<W>(upload(a), upload(b), nullptr, &sb, n, rb, l);
    }
    SAME(out.host(), cast_vec<W>(sa), "merge<%s> Dc3 %s n=%llu %s layout %s", tn<W>(), packed ? "packed" : "symbols",
         n, what, LAYOUT_NAMES[kind]);
}

static void group_merge() {
    for (size_t na : {0, 1, 15, 16, 17, 2047, 4097})
        for (size_t nb : {0, 1, 16, 31, 2049, 4096}) {
            if (na + nb > 6000) continue;
            test_merge_asc<u32>(na, nb, 8);
            test_merge_asc<u64>(na, nb, 0);
            test_merge_ties(na, nb, 5);
        }
    test_merge_asc<u32>(4096, 4097, 1);
    test_merge_asc<u64>(9000, 0, 100);
    test_merge_ties(4095, 4097, 2);
    test_merge_ties(1, 8999, 3);
    for (size_t n : {1, 2, 3, 4, 5, 6, 7, 31, 2047, 4095, 4096, 4097, 9000}) {
        for (int kind = 0; kind < 3; kind++) {
            if (n > 4097 && kind != 0) continue;
            static const char* const KIND[] = {"random", "periodic", "repeats"};
            std::vector<u8> t = random_text(n, kind);
            std::vector<u64> sym(n);
            for (size_t p = 0; p < n; p++) sym[p] = t[p] + 1;
            std::vector<u64> sa = suffix_array(sym);
            u32 layout = (u32)((n + kind) % 3);
            test_merge_dc3<u32>(sym, sa, true, layout, KIND[kind]);
            test_merge_dc3<u64>(sym, sa, true, (layout + 1) % 3, KIND[kind]);
            test_merge_dc3<u32>(sym, sa, false, (layout + 2) % 3, KIND[kind]);
            // Symbols beyond 2 bits (ranks of a recursion level).
            for (auto& s : sym) s = s * 1000 + below(2);
            test_merge_dc3<u64>(sym, suffix_array(sym), false, layout, "wide symbols");
        }
    }
    // Every layout on a periodic text.
    for (u32 layout = 0; layout < 3; layout++) {
        std::vector<u8> t = random_text(100, 1);
        std::vector<u64> sym(t.size());
        for (size_t p = 0; p < t.size(); p++) sym[p] = t[p] + 1;
        std::vector<u64> sa = suffix_array(sym);
        test_merge_dc3<u32>(sym, sa, true, layout, "periodic");
        test_merge_dc3<u64>(sym, sa, false, layout, "periodic");
    }
}

// A difference cover of period v (a power of two): {0..a-1} and the
// multiples of a, a = ceil(sqrt(v)) (any difference e is q*a - s with s < a).
// Its tables as steps::CoverSample, and ranks 1.. of the sampled suffixes of
// a text in the order of its suffix array; slots past the text hold junk
// (nothing may read them).
static CoverBufs cover_for(u64 v, const std::vector<u64>& sa, u64 n, std::vector<u32>& rank_host) {
    u64 a = 1;
    while (a * a < v) a++;
    std::vector<bool> in(v, false);
    for (u64 r = 0; r < a && r < v; r++) in[r] = true;
    for (u64 m = a; m < v; m += a) in[m] = true;
    std::vector<u32> index(v, 0xffffffffu), start, pairs;
    u64 size = 0;
    for (u64 r = 0; r < v; r++)
        if (in[r]) index[r] = (u32)size++;
    for (u64 e = 0; e < v; e++) {
        start.push_back((u32)pairs.size());
        for (u64 r = 0; r < v; r++)
            if (in[r] && in[(r + e) % v]) pairs.push_back((u32)r);
    }
    start.push_back((u32)pairs.size());
    rank_host.assign(div_ceil(std::max<u64>(n, 1), v) * size, 0x5eed5eedu);
    u32 next = 1;
    for (u64 p : sa)
        if (in[p % v]) rank_host[(p / v) * size + index[p % v]] = next++;
    return {v, size, upload(rank_host), upload(index), upload(start), upload(pairs)};
}

// The blockwise sort's steps on the sample: residues, the rank at the first
// sampled position of each suffix, and the merge of two lists in suffix
// order by the sample (Order::Cover) against the brute-force suffix array.
template <class W>
static void test_cover(size_t n, int kind, u64 v) {
    std::vector<u8> t = random_text(n, kind);
    std::vector<u64> sa = suffix_array(t);
    std::vector<u32> rank;
    CoverBufs c = cover_for(v, sa, n, rank);
    std::vector<u32> index = c.index.host();
    Buf<u64> packed = pack_text(t);
    // Any split of the suffix array into two lists merges back into it.
    std::vector<W> a, b;
    u64 den = 1 + below(4);
    for (u64 p : sa) (below(den) == 0 ? a : b).push_back((W)p);
    SAME(merge_cover<W>(upload(a), upload(b), packed, n, c).host(), cast_vec<W>(sa),
         "merge<%s> Cover n=%zu kind %d v=%llu (|a|=%zu)", tn<W>(), n, kind, v, a.size());
    // cover_ranks: the least d with p + d sampled, then its rank or 0.
    std::vector<u64> pos(n);
    std::iota(pos.begin(), pos.end(), 0);
    std::vector<u32> want(n);
    for (u64 p = 0; p < n; p++) {
        u64 q = p;
        while (index[q % v] == 0xffffffffu) q++;
        want[p] = q >= n ? 0 : rank[(q / v) * c.size + index[q % v]];
    }
    SAME(cover_ranks<W>(upload(cast_vec<W>(pos)), n, c).host(), want, "cover_ranks<%s> n=%zu kind %d v=%llu",
         tn<W>(), n, kind, v);
    std::vector<u64> x(n);
    std::vector<u32> r(n);
    for (size_t i = 0; i < n; i++) {
        x[i] = below(~0ull) & (std::is_same_v<W, u32> ? 0xffffffffull : ~0ull);
        r[i] = (u32)(x[i] & (v - 1));
    }
    SAME(residues<W>(upload(cast_vec<W>(x)), v).host(), r, "residues<%s> n=%zu v=%llu", tn<W>(), n, v);
}

static void group_cover() {
    for (size_t n : {1, 2, 3, 31, 100, 2047, 4097})
        for (int kind = 0; kind < 3; kind++)
            for (u64 v : {4, 16, 64}) {
                if (n > 2047 && v != 16) continue;
                test_cover<u32>(n, kind, v);
                test_cover<u64>(n, (kind + 1) % 3, v);
            }
}

// fm_from_sa of src/build.rs, before build::cumulate: Occ lines (line-local
// counts of A, C, G, T as u32, then 6 words of 2-bit bases, low first) as
// the words the host reinterprets, the primary row and the sampled SA.
struct OccLineRef {
    u32 counts[4];
    u64 bits[6];
};
static_assert(sizeof(OccLineRef) == 64, "an Occ line is 64 bytes");

// The sampling rule of SPEC.md 5.3, written out for the references: block k
// of 2^shift rows (of n + 1) keeps the row at offset fmix64(k)'s top shift
// bits, modulo the size of a short last block; block 0 (and rate 1) keeps
// its first row.
static u64 ref_sample_row(u64 k, u32 shift, u64 n) {
    u64 block = (u64)1 << shift, first = k * block;
    if (shift == 0 || k == 0) return first;
    u64 h = k;
    h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
    h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    u64 size = std::min(block, n + 1 - first);
    return first + (h >> (64 - shift)) % size;
}

template <class W>
static void test_fm(const std::vector<u8>& t, u32 shift, const char* what) {
    u64 n = t.size();
    std::vector<W> sa = cast_vec<W>(suffix_array(t));
    u64 primary = 0;
    for (u64 i = 0; i < n; i++)
        if (sa[i] == 0) primary = i + 1;
    u64 lines = n / LINE_BASES + 1;
    std::vector<OccLineRef> occ(lines);
    for (u64 l = 0; l < lines; l++) {
        OccLineRef line = {};
        for (u64 j = l * LINE_BASES; j < std::min(n, (l + 1) * LINE_BASES); j++) {
            u64 r = j - l * LINE_BASES;
            u64 row = j + (j >= primary ? 1 : 0);
            u64 p = row == 0 ? n : (u64)sa[row - 1];
            u8 c = t[p - 1];
            line.bits[r / 32] |= (u64)c << (2 * (r % 32));
            line.counts[c]++;
        }
        occ[l] = line;
    }
    std::vector<u64> words(8 * lines);
    std::memcpy(words.data(), occ.data(), words.size() * 8);
    u64 samples = (n >> shift) + 1;
    std::vector<W> ssa(samples);
    for (u64 k = 0; k < samples; k++) {
        u64 row = ref_sample_row(k, shift, n);
        ssa[k] = row == 0 ? (W)n : sa[row - 1];
    }

    u64 gp;
    std::vector<u64> gocc;
    std::vector<W> gssa;
    Buf<u64> packed = pack_text(t);
    fm_tables(packed, upload(sa), shift, gp, gocc, gssa);
    SAME_VAL(gp, primary, "fm_tables<%s> n=%llu %s: primary", tn<W>(), n, what);
    SAME(gocc, words, "fm_tables<%s> n=%llu %s: Occ line words (line = index / 8)", tn<W>(), n, what);
    SAME(gssa, ssa, "fm_tables<%s> n=%llu shift=%u %s: sampled SA", tn<W>(), n, shift, what);
}

static void group_fm() {
    for (size_t n : {0, 1, 2, 3, 31, 191, 192, 193, 383, 384, 385, 2049, 9000}) {
        std::vector<u8> t = random_text(n, n > 2049 ? 0 : (int)(n % 3));
        test_fm<u32>(t, (u32)(n % 4), "random");
        test_fm<u64>(t, (u32)(n % 3) * 2 + 1, "random");
    }
    test_fm<u32>(std::vector<u8>(500, 3), 0, "all T");
    test_fm<u64>(std::vector<u8>(400, 0), 5, "all A");
}

// The FM-index of t as the .fmi file holds it (Occ lines with counts before
// the line, one superblock), from a sorted list of its suffixes: SA' (row 0
// the empty suffix), the `$` row, the Occ words, OCC_SUPER and C.
static void fmi_tables(const std::vector<u8>& t, std::vector<u64>& rows, u64& primary, std::vector<u64>& words,
                       std::vector<u64>& sup, std::vector<u64>& c5) {
    u64 n = t.size();
    std::vector<u64> sa = suffix_array(t);
    rows.assign(n + 1, 0);  // SA': row 0 is the empty suffix
    rows[0] = n;
    for (u64 i = 0; i < n; i++) rows[i + 1] = sa[i];
    primary = 0;
    for (u64 i = 0; i <= n; i++)
        if (rows[i] == 0 && n > 0) primary = i;
    u64 lines = n / LINE_BASES + 1;
    std::vector<OccLineRef> occ(lines);
    u64 total[4] = {0, 0, 0, 0};
    for (u64 l = 0; l < lines; l++) {
        OccLineRef line = {};
        for (int c = 0; c < 4; c++) line.counts[c] = (u32)total[c];
        for (u64 j = l * LINE_BASES; j < std::min(n, (l + 1) * LINE_BASES); j++) {
            u64 r = j - l * LINE_BASES;
            u64 row = j + (j >= primary ? 1 : 0);
            u8 c = t[rows[row] - 1];
            line.bits[r / 32] |= (u64)c << (2 * (r % 32));
            total[c]++;
        }
        occ[l] = line;
    }
    words.assign(8 * lines, 0);
    std::memcpy(words.data(), occ.data(), words.size() * 8);
    sup.assign(4, 0);
    c5.assign(5, 0);
    c5[0] = 1;
    for (int c = 0; c < 4; c++) c5[c + 1] = c5[c] + total[c];
}

// Reads one after another in `codes`, with each one's offset and length
// (the layout of map_exact, map_verify and map_scheme).
static void flatten(const std::vector<std::vector<u8>>& reads, std::vector<u8>& codes, std::vector<u64>& offsets,
                    std::vector<u32>& lens) {
    for (auto& r : reads) {
        offsets.push_back(codes.size());
        lens.push_back((u32)r.size());
        codes.insert(codes.end(), r.begin(), r.end());
    }
}

// map_scheme against a scan of every text window: per job (pattern q, search
// i of k), the windows within k substitutions (an N is one) whose part i
// matches and whose parts left of i each hold a substitution (what search i
// finds, src/search.rs), as (text start, mismatches); the kernel's
// intervals, their rows located through SA', must give exactly these, once
// each; the count of intervals is the number of distinct windows, also
// when it is over cap (only cap of them written).
static void test_scheme(const std::vector<u8>& t, const std::vector<u64>& rows, const Buf<u64>& docc,
                        const Buf<u64>& dsup, const Buf<u64>& dc5, u64 primary, const std::vector<std::vector<u8>>& reads,
                        const char* what) {
    u64 n = t.size();
    std::vector<u8> rt(t.rbegin(), t.rend());
    std::vector<u64> rrows, rwords, rsup, rc5;
    u64 rprimary;
    fmi_tables(rt, rrows, rprimary, rwords, rsup, rc5);
    Buf<u64> drocc = upload(rwords), drsup = upload(rsup), drc5 = upload(rc5);
    std::vector<u8> codes;
    std::vector<u64> offsets;
    std::vector<u32> lens;
    flatten(reads, codes, offsets, lens);
    codes.push_back(4);
    Buf<u8> dcodes = upload(codes);
    Buf<u64> doff = upload(offsets);
    Buf<u32> dlens = upload(lens);
    for (u32 k = 0; k <= 3; k++) {
        std::vector<u32> jp;
        std::vector<u8> ji;
        for (u32 q = 0; q < (u32)reads.size(); q++)
            for (u32 i = 0; i <= k && reads[q].size() > k; i++) {
                jp.push_back(q);
                ji.push_back((u8)i);
            }
        if (jp.empty()) continue;
        // Expected per job: (start, mismatches) and the distinct windows.
        std::vector<std::vector<std::pair<u64, u8>>> want(jp.size());
        std::vector<u32> distinct(jp.size());
        for (size_t j = 0; j < jp.size(); j++) {
            const auto& r = reads[jp[j]];
            u32 m = (u32)r.size(), i = ji[j], parts = k + 1;
            std::set<std::vector<u8>> windows;
            for (u64 st = 0; st + m <= n; st++) {
                u32 mm = 0, pm[4] = {0, 0, 0, 0};
                for (u32 p = 0; p < parts; p++) {
                    u32 q0 = m / parts, rem = m % parts;
                    u32 s0 = p * q0 + std::min(p, rem), e0 = s0 + q0 + (p < rem ? 1 : 0);
                    for (u32 x = s0; x < e0; x++) pm[p] += r[x] != t[st + x];
                    mm += pm[p];
                }
                bool ok = mm <= k && pm[i] == 0;
                for (u32 p = 0; p < i; p++) ok = ok && pm[p] > 0;
                if (ok) {
                    want[j].push_back({st, (u8)mm});
                    windows.insert(std::vector<u8>(t.begin() + st, t.begin() + st + m));
                }
            }
            std::sort(want[j].begin(), want[j].end());
            distinct[j] = (u32)windows.size();
        }
        for (u32 cap : {64u, 2u}) {
            size_t jobs = jp.size();
            Buf<u32> dpat = upload(jp);
            Buf<u8> dpart = upload(ji);
            Buf<u64> lo = alloc<u64>(jobs * cap), hi = alloc<u64>(jobs * cap);
            Buf<u8> mmo = alloc<u8>(jobs * cap);
            Buf<u32> cnt = alloc<u32>(jobs);
            run(grid(jobs), MAP_SCHEME, (const u64*)docc.p(), (const u64*)dsup.p(), (const u64*)dc5.p(), primary,
                (const u64*)drocc.p(), (const u64*)drsup.p(), (const u64*)drc5.p(), rprimary, n,
                (const u8*)dcodes.p(), (const u64*)doff.p(), (const u32*)dlens.p(), (const u32*)dpat.p(),
                (const u8*)dpart.p(), (u64)jobs, k, cap, lo.p(), hi.p(), mmo.p(), cnt.p());
            std::vector<u64> hl = lo.host(), hh = hi.host();
            std::vector<u8> hm = mmo.host();
            std::vector<u32> hc = cnt.host();
            SAME(hc, distinct, "map_scheme n=%llu %s k=%u cap=%u: intervals per job", n, what, k, cap);
            for (size_t j = 0; j < jobs; j++) {
                std::vector<std::pair<u64, u8>> got;
                for (u32 x = 0; x < std::min(hc[j], cap); x++)
                    for (u64 row = hl[j * cap + x]; row < hh[j * cap + x]; row++)
                        got.push_back({rows[row], hm[j * cap + x]});
                std::sort(got.begin(), got.end());
                if (hc[j] <= cap) {
                    std::vector<u64> g2, w2;
                    for (auto& [a, b] : got) g2.push_back(a << 8 | b);
                    for (auto& [a, b] : want[j]) w2.push_back(a << 8 | b);
                    SAME(g2, w2, "map_scheme n=%llu %s k=%u job %zu (pattern %u, search %u): start << 8 | mismatches",
                         n, what, k, j, jp[j], (u32)ji[j]);
                } else {
                    // Over cap: what was written is some of the alignments.
                    bool sub = std::includes(want[j].begin(), want[j].end(), got.begin(), got.end());
                    SAME_VAL(sub, true, "map_scheme n=%llu %s k=%u cap=%u job %zu: written intervals are alignments",
                             n, what, k, cap, j);
                }
            }
        }
    }
}

// gpu/map.cu: the index as the .fmi file holds it (Occ lines with counts
// before the line, one superblock), exact search of reads on both strands
// against a scan of the suffix array, locate of every row, and -v K's
// verification and search schemes.
template <class W>
static void test_map(const std::vector<u8>& t, u32 shift, const char* what) {
    u64 n = t.size();
    std::vector<u64> rows, words, sup, c5;
    u64 primary;
    fmi_tables(t, rows, primary, words, sup, c5);
    std::vector<W> ssa((n >> shift) + 1);
    for (u64 k = 0; k < ssa.size(); k++) ssa[k] = (W)rows[ref_sample_row(k, shift, n)];

    // Reads: substrings, their reverse complements, random ones, with an N, empty.
    std::vector<std::vector<u8>> reads;
    for (int q = 0; q < 60 && n > 0; q++) {
        u64 len = 1 + below(std::min<u64>(n, 40));
        u64 at = below(n - len + 1);
        std::vector<u8> r(t.begin() + at, t.begin() + at + len);
        if (q % 3 == 1) {
            std::reverse(r.begin(), r.end());
            for (auto& c : r) c = 3 - c;
        }
        reads.push_back(r);
    }
    for (int q = 0; q < 20; q++) {
        std::vector<u8> r(1 + below(12));
        for (auto& c : r) c = (u8)below(4);
        reads.push_back(r);
    }
    // Longer ones (several packed words), one with an N past the first word.
    for (int q = 0; q < 12 && n >= 100; q++) {
        u64 len = 60 + below(41);
        u64 at = below(n - len + 1);
        std::vector<u8> r(t.begin() + at, t.begin() + at + len);
        if (q % 2 == 1) {
            std::reverse(r.begin(), r.end());
            for (auto& c : r) c = 3 - c;
        }
        if (q == 5) r[40] = 4;
        reads.push_back(r);
    }
    reads.push_back({});
    reads.push_back({0, 4, 1});
    std::vector<u8> codes;
    std::vector<u64> offsets;
    std::vector<u32> lens;
    flatten(reads, codes, offsets, lens);
    // Expected: the rows whose suffix starts with the pattern.
    auto interval = [&](const std::vector<u8>& p, u64& lo, u64& hi) {
        lo = hi = 0;
        bool any = false;
        for (u64 i = 0; i <= n && !p.empty(); i++) {
            u64 s = rows[i];
            bool ok = s + p.size() <= n;
            for (size_t k = 0; ok && k < p.size(); k++) ok = t[s + k] == p[k];
            if (ok) {
                if (!any) lo = i;
                hi = i + 1;
                any = true;
            }
        }
    };
    std::vector<u64> want(4 * reads.size());
    for (size_t q = 0; q < reads.size(); q++) {
        std::vector<u8> rc(reads[q].rbegin(), reads[q].rend());
        for (auto& c : rc) c = c < 4 ? 3 - c : 4;
        interval(reads[q], want[4 * q], want[4 * q + 1]);
        interval(rc, want[4 * q + 2], want[4 * q + 3]);
    }
    Buf<u64> docc = upload(words), dsup = upload(sup), dc5 = upload(c5);
    Buf<u8> dcodes = upload(codes);
    Buf<u64> doff = upload(offsets);
    Buf<u32> dlens = upload(lens);
    Buf<u64> out = alloc<u64>(4 * reads.size());
    run(grid(reads.size()), MAP_EXACT, (const u64*)docc.p(), (const u64*)dsup.p(), (const u64*)dc5.p(), primary, n,
        (const u8*)dcodes.p(), (const u64*)doff.p(), (const u32*)dlens.p(), (u64)reads.size(), out.p());
    SAME(out.host(), want, "map_exact n=%llu %s: [fwd lo, hi, rev lo, hi] per read", n, what);

    // The same reads 2-bit packed (src/map/cuda.rs pack_reads): each read
    // from a word boundary, bit 31 of the length for a non-ACGT base.
    std::vector<u64> pwords, starts;
    std::vector<u32> plens;
    for (auto& r : reads) {
        starts.push_back(pwords.size());
        bool amb = false;
        for (size_t k = 0; k < r.size(); k++) {
            if (k % 32 == 0) pwords.push_back(0);
            amb |= r[k] > 3;
            pwords.back() |= (u64)(r[k] & 3) << (2 * (k % 32));
        }
        plens.push_back((u32)r.size() | (amb ? 1u << 31 : 0));
    }
    pwords.push_back(0);  // never empty
    Buf<u64> dwords = upload(pwords), dstarts = upload(starts);
    Buf<u32> dplens = upload(plens);
    // The k-mer tables (kk = 1..3) by the same naive search: a kk-mer's
    // interval, its empty ones as the CPU's table holds them.
    std::vector<std::vector<u64>> tables(4);
    for (u32 kk = 1; kk <= 3; kk++) {
        tables[kk].resize(2ull << (2 * kk));
        for (u64 code = 0; code < (1ull << (2 * kk)); code++) {
            std::vector<u8> p(kk);
            for (u32 d = 0; d < kk; d++) p[d] = (u8)(code >> (2 * (kk - 1 - d)) & 3);
            interval(p, tables[kk][2 * code], tables[kk][2 * code + 1]);
        }
    }
    tables[0] = {0, 0};
    for (u32 kk = 0; kk <= 3; kk++) {
        Buf<u64> dkmer = upload(tables[kk]);
        for (u32 both : {1u, 0u}) {
            Buf<u64> pout = alloc<u64>(4 * reads.size());
            run(grid(reads.size()), MAP_EXACT_PACKED, (const u64*)docc.p(), (const u64*)dsup.p(),
                (const u64*)dc5.p(), primary, n, (const u64*)dwords.p(), (const u64*)dstarts.p(),
                (const u32*)dplens.p(), (u64)reads.size(), both, (const u64*)dkmer.p(), kk, pout.p());
            std::vector<u64> w2 = want;
            if (!both)
                for (size_t q = 0; q < reads.size(); q++) w2[4 * q + 2] = w2[4 * q + 3] = 0;
            SAME(pout.host(), w2,
                 "map_exact_packed n=%llu %s both=%u kmer=%u: [fwd lo, hi, rev lo, hi] per read", n, what,
                 both, kk);
        }
    }

    // map_verify: every read against the text at random starts (and at its
    // own start when it was cut from the text), k = 0..3, against a
    // sequential count over the PAC bytes the kernel reads.
    if (n > 0) {
        std::vector<u8> pac((n + 3) / 4, 0);
        for (u64 i = 0; i < n; i++) pac[i / 4] |= (u8)(t[i] << (2 * (i % 4)));
        std::vector<u32> owner;
        std::vector<u64> cstart;
        for (u32 q = 0; q < (u32)reads.size(); q++) {
            if (reads[q].size() > n) continue;
            for (int j = 0; j < 4; j++) {
                owner.push_back(q);
                cstart.push_back(below(n - reads[q].size() + 1));
            }
        }
        owner.push_back(0);  // never empty
        cstart.push_back(0);
        if (reads[0].size() > n) owner.back() = (u32)reads.size() - 2;  // the empty read
        Buf<u8> dpac = upload(pac);
        Buf<u32> downer = upload(owner);
        Buf<u64> dcstart = upload(cstart);
        for (u32 k = 0; k <= 3; k++) {
            std::vector<u8> vwant(owner.size());
            for (size_t c = 0; c < owner.size(); c++) {
                const auto& r = reads[owner[c]];
                u32 mm = 0;
                for (size_t i = 0; i < r.size() && mm <= k; i++) mm += r[i] != t[cstart[c] + i];
                vwant[c] = mm <= k ? (u8)mm : 255;
            }
            Buf<u8> vout = alloc<u8>(owner.size());
            run(grid(owner.size()), MAP_VERIFY, (const u8*)dpac.p(), (const u8*)dcodes.p(), (const u64*)doff.p(),
                (const u32*)dlens.p(), (const u32*)downer.p(), (const u64*)dcstart.p(), (u64)owner.size(), k,
                vout.p());
            SAME(vout.host(), vwant, "map_verify n=%llu %s k=%u: mismatches per candidate", n, what, k);
        }
    }

    // The search schemes: the reads and copies of them with substitutions.
    if (sizeof(W) == 4) {
        std::vector<std::vector<u8>> sreads;
        for (size_t q = 0; q < reads.size(); q += 2) {
            sreads.push_back(reads[q]);
            std::vector<u8> r = reads[q];
            for (u32 e = 0; e < 1 + q % 4 && !r.empty(); e++) {
                size_t x = below(r.size());
                r[x] = q % 11 == 3 ? 4 : (u8)((r[x] + 1 + below(3)) % 4);
            }
            sreads.push_back(r);
        }
        test_scheme(t, rows, docc, dsup, dc5, primary, sreads, what);
    }

    std::vector<u64> all(n + 1);
    std::iota(all.begin(), all.end(), 0);
    Buf<u64> drows = upload(all);
    Buf<W> dssa = upload(ssa);
    Buf<u64> pos = alloc<u64>(all.size());
    if constexpr (sizeof(W) == 4) {
        run(grid(all.size()), MAP_LOCATE_U32, (const u64*)docc.p(), (const u64*)dsup.p(), (const u64*)dc5.p(),
            primary, n, (const u32*)dssa.p(), shift, (const u64*)drows.p(), (u64)all.size(), pos.p());
    } else {
        run(grid(all.size()), MAP_LOCATE_U64, (const u64*)docc.p(), (const u64*)dsup.p(), (const u64*)dc5.p(),
            primary, n, (const u64*)dssa.p(), shift, (const u64*)drows.p(), (u64)all.size(), pos.p());
    }
    SAME(pos.host(), rows, "map_locate<%s> n=%llu shift=%u %s: SA' of every row", tn<W>(), n, shift, what);
}

static void group_map() {
    for (size_t n : {1, 2, 5, 191, 192, 193, 700, 2500}) {
        std::vector<u8> t = random_text(n, (int)(n % 3));
        test_map<u32>(t, (u32)(n % 4), "random");
        test_map<u64>(t, (u32)(n % 3), "random");
    }
    test_map<u32>(std::vector<u8>(300, 2), 3, "all G");
}

// segmented_sort: each segment (a head and the elements to the next; index
// 0 starts one, head or not) sorted by key, stable.
template <class K, class V>
static void test_segmented_sort(size_t m, u64 den, u32 kbits) {
    std::vector<u8> h(m);
    for (auto& f : h) f = den && below(den) == 0;
    std::vector<K> k(m);
    std::vector<V> v(m);
    u64 mask = kbits >= 64 ? ~0ull : (1ull << kbits) - 1;
    for (size_t i = 0; i < m; i++) {
        k[i] = (K)(rnd() & mask);
        v[i] = (V)rnd();
    }
    std::vector<K> ek(m);
    std::vector<V> ev(m);
    size_t s = 0;
    for (size_t i = 1; i <= m; i++) {
        if (i == m || h[i]) {
            std::vector<size_t> idx(i - s);
            std::iota(idx.begin(), idx.end(), s);
            std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) { return k[x] < k[y]; });
            for (size_t j = s; j < i; j++) {
                ek[j] = k[idx[j - s]];
                ev[j] = v[idx[j - s]];
            }
            s = i;
        }
    }
    Buf<K> kb = upload(k);
    Buf<V> vb = upload(v);
    segmented_sort(upload(h), kb, vb);
    SAME(kb.host(), ek, "segmented_sort<%s,%s> m=%zu heads 1/%llu key bits %u: keys", tn<K>(), tn<V>(), m, den, kbits);
    SAME(vb.host(), ev, "segmented_sort<%s,%s> m=%zu heads 1/%llu key bits %u: values", tn<K>(), tn<V>(), m, den,
         kbits);
}

static void group_segsort() {
    for (size_t m : {0, 1, 2, 31, 2049, 4097}) {
        test_segmented_sort<u32, u32>(m, 4, 3);
        test_segmented_sort<u32, u64>(m, 300, 32);
        test_segmented_sort<u64, u8>(m, 0, 5);
    }
    test_segmented_sort<u64, u32>(9000, 1000, 64);
    test_segmented_sort<u32, u8>(9000, 1, 2);
}

// -------------------------------------------------------------------- main

struct Group {
    const char* name;
    void (*run)();
    double cost;  // seconds on one core of the machine it was measured on, for sharding
};
static const Group GROUPS[] = {
    {"maps", group_maps, 0.6},       {"scan", group_scan, 0.8},       {"radix", group_radix, 3.9},
    {"segsort", group_segsort, 1.4}, {"text", group_text, 2.2},       {"layouts", group_layouts, 0.2},
    {"merge", group_merge, 0.6},     {"fm", group_fm, 0.05},          {"map", group_map, 0.3},
    {"cover", group_cover, 0.3},     {"scan_big", group_scan_big, 14.0},
};

int main(int argc, char** argv) {
    u64 seed = 0x5eed'f3a1'1a11'9e00ull;
    unsigned shard = 0, shards = 1;
    std::vector<const Group*> chosen;
    for (int i = 1; i < argc; i++) {
        if (std::strncmp(argv[i], "seed=", 5) == 0) {
            seed = std::strtoull(argv[i] + 5, nullptr, 0);
            continue;
        }
        if (std::sscanf(argv[i], "shard=%u/%u", &shard, &shards) == 2) {
            if (shards == 0 || shard >= shards) {
                std::fprintf(stderr, "kernels_test: bad %s\n", argv[i]);
                return 2;
            }
            continue;
        }
        const Group* g = nullptr;
        for (const Group& x : GROUPS)
            if (std::strcmp(x.name, argv[i]) == 0) g = &x;
        if (!g) {
            std::fprintf(stderr, "kernels_test: unknown argument %s (groups:", argv[i]);
            for (const Group& x : GROUPS) std::fprintf(stderr, " %s", x.name);
            std::fprintf(stderr, "; seed=N; shard=I/N)\n");
            return 2;
        }
        chosen.push_back(g);
    }
    if (chosen.empty()) {
        // Shard I of N: the groups given to worker I when each group, most
        // costly first, goes to the least loaded of N workers.
        std::vector<const Group*> order;
        for (const Group& x : GROUPS) order.push_back(&x);
        std::stable_sort(order.begin(), order.end(), [](const Group* a, const Group* b) { return a->cost > b->cost; });
        std::vector<double> load(shards, 0.0);
        for (const Group* g : order) {
            unsigned w = (unsigned)(std::min_element(load.begin(), load.end()) - load.begin());
            load[w] += g->cost;
            if (w == shard) chosen.push_back(g);
        }
    }
    auto t0 = std::chrono::steady_clock::now();
    for (const Group* g : chosen) {
        g_rng.seed(seed ^ std::hash<std::string>()(g->name));
        auto t = std::chrono::steady_clock::now();
        int checks = g_checks, fails = g_fails;
        g->run();
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
        std::printf("group %-8s %5d checks, %d failed, %.1f s\n", g->name, g_checks - checks, g_fails - fails, s);
        std::fflush(stdout);
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    emu::Stats st = emu::stats();
    std::printf("kernels_test: %s: %d checks, %d failed; %zu kernels, %llu launches, %llu blocks, %llu threads, "
                "%llu switches, %.1f s (seed %#llx)\n",
                g_fails ? "FAILED" : "ok", g_checks, g_fails, g_launched.size(), st.launches, st.blocks, st.threads,
                st.switches, s, seed);
    std::printf("kernels:");
    for (const std::string& k : g_launched) std::printf(" %s", k.c_str());
    std::printf("\n");
    return g_fails ? 1 : 0;
}
