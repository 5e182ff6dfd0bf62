// Host emulation of the CUDA built-ins that the kernels of gpu/ use, so that
// their logic runs, and is tested, on a machine without a GPU
// (tests/gpu_emulation.rs builds gpu/emu/kernels_test.cpp with g++). Test
// code only: fmalign itself never compiles this.
//
// Each kernel module is compiled as `#include "shim.h"` + gpu/prelude.cu +
// the module, the same text NVRTC gets after the shim line. The shim maps:
// * __global__, __device__ to nothing, __forceinline__ to inline;
// * __shared__ to static: one copy per kernel, shared by the threads of the
//   block that runs (blocks run one after another);
// * threadIdx, blockIdx, blockDim, gridDim to the running thread's values;
// * __syncthreads to a barrier of the block; __shfl_up_sync to an exchange
//   between the 32 lanes of a warp (two warp barriers), full mask only;
// * atomicAdd on u32 to a plain add (threads never run at the same time);
// * __popcll to the compiler's popcount.
//
// A launch runs its blocks one after another, in a shuffled order (a fixed
// xorshift stream, so every run is the same): code that needs block b - 1 to
// run before block b fails here as it may on a GPU. The threads of a block are
// fibers on the calling thread (shim.cpp), each running until it waits at a
// barrier or returns. The scheduler sweeps the runnable threads alternately
// in increasing and decreasing order, so code that races between two
// barriers sees both orders. A block whose threads all wait without any
// barrier completing (a barrier in divergent code, a partial shuffle) is
// reported and the process exits with status 3; so is an invalid launch
// (0 blocks, more than 1024 threads). A crash (SIGSEGV and the like) is
// reported with the kernel, block and thread it happened in.
//
// Shared memory is filled with a new garbage byte before each block (a
// __shared__ array of a kernel; a `static __shared__` inside a function
// template may land outside the section and keep the last block's values).
// Not emulated: warp lockstep beyond the shuffle, memory models; only the
// built-ins listed above exist.

#pragma once

#include <cstddef>
#include <functional>
#include <type_traits>

struct dim3 {
    unsigned x, y, z;
};

namespace emu {

// The running thread's coordinates (valid inside a kernel).
const dim3& thread_idx();
const dim3& block_idx();
const dim3& block_dim();
const dim3& grid_dim();

// Barrier of the running block.
void sync_block();

// __shfl_up_sync on `size` bytes: *out gets lane (lane - delta)'s *in, or
// the caller's own *in when lane < delta.
void shfl_up(unsigned mask, const void* in, void* out, std::size_t size, unsigned delta);

// Runs `kernel` on a grid of `grid` blocks of `block` threads (x only) and
// returns when every thread has returned. `name` names the kernel in reports.
void launch(unsigned grid, unsigned block, const std::function<void()>& kernel, const char* name);

// Totals since the start of the process.
struct Stats {
    unsigned long long launches, blocks, threads, switches;
};
Stats stats();

}  // namespace emu

#define threadIdx (::emu::thread_idx())
#define blockIdx (::emu::block_idx())
#define blockDim (::emu::block_dim())
#define gridDim (::emu::grid_dim())

#define __global__
#define __device__
#define __forceinline__ inline
// Shared variables get a section of their own, which the launcher fills with
// garbage before each block (shim.cpp): a block that reads shared memory it
// did not write sees neither zeros nor the last block's values.
#define __shared__ static __attribute__((section("emu_shared")))

inline void __syncthreads() { ::emu::sync_block(); }

template <typename T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 16,
                  "__shfl_up_sync: unsupported type");
    T out;
    ::emu::shfl_up(mask, &v, &out, sizeof(T), delta);
    return out;
}

inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline unsigned atomicAdd(unsigned* p, unsigned v) {
    unsigned old = *p;
    *p = old + v;
    return old;
}
