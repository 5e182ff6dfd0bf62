// The fiber scheduler behind shim.h (see there). One launch at a time, on
// one host thread.
//
// Fiber i runs thread i of every block of every launch, in a loop. It is
// started once with makecontext/swapcontext, then switched with
// _setjmp/_longjmp, which neither save nor restore the signal mask (a
// swapcontext costs a system call, and a run makes tens of millions of
// switches). Every jump goes to a context suspended in _setjmp on a stack of
// its own, never to a function that has returned.

// glibc's fortified longjmp refuses to jump to another stack.
#undef _FORTIFY_SOURCE

#include "shim.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <utility>
#include <vector>

// The bounds of the shared variables' section (shim.h's __shared__), from
// the linker.
extern "C" char __start_emu_shared[], __stop_emu_shared[];

namespace emu {
namespace {

// Fills shared memory with a byte that changes from block to block.
void poison_shared() {
    static unsigned char v = 0x5a;
    v = static_cast<unsigned char>(v * 13 + 7);
    std::memset(__start_emu_shared, v, static_cast<size_t>(__stop_emu_shared - __start_emu_shared));
}

// The order a launch runs its blocks in: 0..grid shuffled by a fixed
// xorshift stream that goes on across launches.
std::vector<unsigned> block_order(unsigned grid) {
    static unsigned long long x = 88172645463325252ull;
    std::vector<unsigned> order(grid);
    for (unsigned b = 0; b < grid; b++) order[b] = b;
    for (unsigned b = grid; b > 1; b--) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::swap(order[b - 1], order[x % b]);
    }
    return order;
}

enum class State { Runnable, Waiting, Done };

struct Barrier {
    const char* what;
    unsigned index;
    unsigned expected;
    unsigned arrived;
    std::vector<unsigned> waiting;
};

struct Fiber {
    ucontext_t start;  // entry, used once
    jmp_buf env;       // where it waits
    bool started;
    State state;
    const Barrier* at;  // the barrier it waits at
};

constexpr std::size_t STACK = 64 * 1024;  // per thread, plus a guard page
constexpr unsigned MAX_BLOCK = 1024;
constexpr std::size_t SHFL_BYTES = 16;

dim3 g_tidx, g_bidx, g_bdim, g_gdim;
jmp_buf g_sched;
std::deque<Fiber> g_fibers;  // never moved: a ucontext_t points into itself
std::size_t g_page;
unsigned g_cur;
bool g_running;
const std::function<void()>* g_kernel;
const char* g_name;
Barrier g_block_bar;
std::vector<Barrier> g_warp_bars;
std::vector<unsigned char> g_shfl;  // [warp][lane][SHFL_BYTES]
Stats g_stats;

[[noreturn]] void die(const char* fmt, ...) {
    std::fflush(stdout);
    std::fprintf(stderr, "emu: ");
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "\n");
    std::exit(3);
}

// Back to the scheduler; returns when the scheduler resumes this thread.
__attribute__((noinline)) void yield() {
    g_stats.switches++;
    if (_setjmp(g_fibers[g_cur].env) == 0) _longjmp(g_sched, 1);
}

// Fiber i runs thread i of every block, launch after launch.
void fiber_main(int i) {
    for (;;) {
        (*g_kernel)();
        g_fibers[(unsigned)i].state = State::Done;
        yield();  // resumed for the next block
    }
}

// Runs fiber i until it waits or returns.
__attribute__((noinline)) void resume(unsigned i) {
    g_stats.switches++;
    if (_setjmp(g_sched) != 0) return;
    Fiber& f = g_fibers[i];
    if (f.started) _longjmp(f.env, 1);
    f.started = true;
    ucontext_t from;
    if (swapcontext(&from, &f.start) != 0) die("swapcontext failed");
    die("a fiber returned to its starting point");
}

void arrive(Barrier& b) {
    if (!g_running) die("%s outside a kernel", b.what);
    Fiber& me = g_fibers[g_cur];
    if (++b.arrived == b.expected) {
        b.arrived = 0;
        for (unsigned t : b.waiting) {
            g_fibers[t].state = State::Runnable;
            g_fibers[t].at = nullptr;
        }
        b.waiting.clear();
        // Let the scheduler choose who runs first after the barrier.
        yield();
        return;
    }
    me.state = State::Waiting;
    me.at = &b;
    b.waiting.push_back(g_cur);
    yield();
}

// A crash names the kernel and thread it happened in (or the last kernel
// run, when it happens on the host side: heap corruption by a kernel shows
// up at the next free).
char g_altstack[64 * 1024];

void on_fatal(int sig) {
    const char* what = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE" : "SIGABRT";
    char buf[512];
    int n;
    if (g_running)
        n = std::snprintf(buf, sizeof buf,
                          "emu: %s in kernel %s, block %u, thread %u (a read or write outside the "
                          "buffers, or a thread's stack overflowed)\n",
                          what, g_name, g_bidx.x, g_tidx.x);
    else
        n = std::snprintf(buf, sizeof buf, "emu: %s outside a kernel; the last kernel run was %s\n", what,
                          g_name ? g_name : "none");
    if (n > 0) {
        ssize_t w = write(2, buf, (std::size_t)n < sizeof buf ? (std::size_t)n : sizeof buf - 1);
        (void)w;
    }
    // SA_RESETHAND: returning repeats the fault, which now kills.
    if (sig == SIGABRT) raise(sig);
}

void install_crash_report() {
    static bool done = false;
    if (done) return;
    done = true;
    stack_t ss = {};
    ss.ss_sp = g_altstack;
    ss.ss_size = sizeof g_altstack;
    sigaltstack(&ss, nullptr);
    struct sigaction sa = {};
    sa.sa_handler = on_fatal;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGABRT}) sigaction(sig, &sa, nullptr);
}

// Fibers 0..block-1, each on a stack of its own above a guard page.
void ensure_fibers(unsigned block) {
    if (g_page == 0) g_page = (std::size_t)sysconf(_SC_PAGESIZE);
    while (g_fibers.size() < block) {
        unsigned i = (unsigned)g_fibers.size();
        std::size_t len = STACK + g_page;
        void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) die("cannot map a thread stack");
        if (mprotect(p, g_page, PROT_NONE) != 0) die("cannot protect a stack guard page");
        Fiber& f = g_fibers.emplace_back();
        if (getcontext(&f.start) != 0) die("getcontext failed");
        f.start.uc_stack.ss_sp = (char*)p + g_page;
        f.start.uc_stack.ss_size = STACK;
        f.start.uc_link = nullptr;
        makecontext(&f.start, (void (*)())fiber_main, 1, (int)i);
        f.started = false;
    }
}

[[noreturn]] void deadlock(unsigned block) {
    std::fflush(stdout);
    std::fprintf(stderr,
                 "emu: %s: block %u of %u deadlocks: no barrier can complete (a barrier or "
                 "shuffle not reached by every thread that must reach it)\n",
                 g_name, g_bidx.x, g_gdim.x);
    // Runs of consecutive threads in the same state.
    unsigned i = 0;
    while (i < block) {
        unsigned j = i;
        while (j + 1 < block && g_fibers[j + 1].state == g_fibers[i].state &&
               g_fibers[j + 1].at == g_fibers[i].at)
            j++;
        const Fiber& f = g_fibers[i];
        if (f.state == State::Done)
            std::fprintf(stderr, "  threads %u..%u returned\n", i, j);
        else if (f.at)
            std::fprintf(stderr, "  threads %u..%u wait at %s %u\n", i, j, f.at->what, f.at->index);
        else
            std::fprintf(stderr, "  threads %u..%u runnable\n", i, j);
        i = j + 1;
    }
    std::exit(3);
}

void run_block(unsigned block) {
    g_block_bar.what = "__syncthreads";
    g_block_bar.index = 0;
    g_block_bar.expected = block;
    g_block_bar.arrived = 0;
    g_block_bar.waiting.clear();
    unsigned warps = (block + 31) / 32;
    g_warp_bars.resize(warps);
    for (unsigned w = 0; w < warps; w++) {
        Barrier& b = g_warp_bars[w];
        b.what = "the __shfl_up_sync of warp";
        b.index = w;
        b.expected = block - 32 * w < 32 ? block - 32 * w : 32;
        b.arrived = 0;
        b.waiting.clear();
    }
    g_shfl.assign((std::size_t)warps * 32 * SHFL_BYTES, 0);
    for (unsigned i = 0; i < block; i++) {
        Fiber& f = g_fibers[i];
        f.state = State::Runnable;
        f.at = nullptr;
    }
    unsigned done = 0;
    bool forward = g_bidx.x % 2 == 0;
    while (done < block) {
        bool ran = false;
        for (unsigned k = 0; k < block; k++) {
            unsigned i = forward ? k : block - 1 - k;
            if (g_fibers[i].state != State::Runnable) continue;
            ran = true;
            g_cur = i;
            g_tidx = {i, 0, 0};
            resume(i);
            if (g_fibers[i].state == State::Done) done++;
        }
        if (!ran) deadlock(block);
        forward = !forward;
    }
}

}  // namespace

const dim3& thread_idx() { return g_tidx; }
const dim3& block_idx() { return g_bidx; }
const dim3& block_dim() { return g_bdim; }
const dim3& grid_dim() { return g_gdim; }

void sync_block() { arrive(g_block_bar); }

void shfl_up(unsigned mask, const void* in, void* out, std::size_t size, unsigned delta) {
    if (!g_running) die("__shfl_up_sync outside a kernel");
    unsigned lane = g_tidx.x % 32, w = g_tidx.x / 32;
    Barrier& b = g_warp_bars[w];
    unsigned full = b.expected == 32 ? 0xffffffffu : (1u << b.expected) - 1;
    if (mask != full)
        die("%s: __shfl_up_sync with mask %#x in warp %u: only the mask of the whole warp "
            "(%#x) is emulated",
            g_name, mask, w, full);
    unsigned char* slots = &g_shfl[(std::size_t)w * 32 * SHFL_BYTES];
    std::memcpy(slots + lane * SHFL_BYTES, in, size);
    arrive(b);
    if (lane >= delta)
        std::memcpy(out, slots + (lane - delta) * SHFL_BYTES, size);
    else
        std::memcpy(out, in, size);
    arrive(b);  // nobody overwrites a slot before every lane has read
}

void launch(unsigned grid, unsigned block, const std::function<void()>& kernel, const char* name) {
    if (g_running) die("%s launched from inside %s", name, g_name);
    if (grid == 0 || block == 0 || block > MAX_BLOCK)
        die("%s: invalid launch configuration: %u blocks of %u threads (CUDA refuses it)", name,
            grid, block);
    install_crash_report();
    ensure_fibers(block);
    g_kernel = &kernel;
    g_name = name;
    g_bdim = {block, 1, 1};
    g_gdim = {grid, 1, 1};
    g_running = true;
    g_stats.launches++;
    for (unsigned b : block_order(grid)) {
        g_bidx = {b, 0, 0};
        poison_shared();
        run_block(block);
        g_stats.blocks++;
        g_stats.threads += block;
    }
    g_running = false;
}

Stats stats() { return g_stats; }

}  // namespace emu
