//! The binary's global allocator: large blocks straight from the kernel.
//!
//! Blocks of at least [`BIG`] bytes (suffix arrays, rank arrays, radix-sort
//! scratch, SA and Occ tables) are their own anonymous mappings, asked to be
//! backed by transparent huge pages; smaller ones go to the system allocator.
//! Two reasons, both measured on the index build (docs/BENCHMARKS.md):
//!
//! * **Memory.** glibc raises its mmap threshold each time a mapped block is
//!   freed (up to 32 MiB), so later blocks of a few MiB come from its heaps,
//!   where freed memory is kept: the peak RSS of `index --sa hybrid` on a
//!   20 Mbp genome varied between 306 and 364 MB from run to run. Unmapping
//!   on free makes the peak the live data (236 MB).
//! * **Time.** The suffix sorts read and write ranks at random positions of
//!   arrays of tens of MB; with 4 KiB pages nearly every such access misses
//!   the TLB (in a virtual machine a miss walks two page tables). Huge pages
//!   cover 512 times more per TLB entry.
//!
//! **Out of memory.** An allocation the system refuses (a process limit,
//! `ulimit -v`, as batch schedulers set h_vmem; memory overcommit off)
//! does not abort with Rust's "memory allocation failed": [`BigPages`]
//! writes an error that says what to raise, marks the process
//! ([`out_of_memory`]) and raises SIGTERM, whose handler
//! (`cleanup::remove_on_signal`) removes the temporary outputs and exits
//! with status 1. [`fit_address_space_limit`] keeps glibc's per-thread
//! arenas, 64 MiB of address space each, from spending such a limit.
//!
//! Where the kernel does not give huge pages on request
//! (`/sys/kernel/mm/transparent_hugepage/enabled` = `never`) the advice is
//! ignored and only the first reason remains. Other systems than Linux use
//! the system allocator for everything.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// Blocks at least this large are mapped on their own.
pub const BIG: usize = 4 << 20;

/// Set when an allocation failed (the process is ending).
static OUT_OF_MEMORY: AtomicBool = AtomicBool::new(false);

/// Whether an allocation failed: the process is ending with the error
/// [`BigPages`] wrote, and should exit with status 1.
pub fn out_of_memory() -> bool {
    OUT_OF_MEMORY.load(Ordering::SeqCst)
}

/// The process's soft limit on its address space (`RLIMIT_AS`, `ulimit -v`)
/// and on its data (`RLIMIT_DATA`, `ulimit -d`), in bytes; `None` where
/// unlimited (or elsewhere than Linux). A system call and no allocation:
/// [`BigPages`] asks it after an allocation failed.
pub fn process_limits() -> [Option<u64>; 2] {
    #[cfg(target_os = "linux")]
    {
        let limit = |resource| {
            let mut r = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: getrlimit writes the one struct it is given.
            let ok = unsafe { libc::getrlimit(resource, &mut r) } == 0;
            (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
        };
        [limit(libc::RLIMIT_AS), limit(libc::RLIMIT_DATA)]
    }
    #[cfg(not(target_os = "linux"))]
    [None, None]
}

/// Formats into a buffer on the stack (no allocation: the allocator has
/// just failed).
struct StackText {
    buf: [u8; 512],
    len: usize,
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let room = self.buf.len() - self.len;
        let k = s.len().min(room);
        self.buf[self.len..self.len + k].copy_from_slice(&s.as_bytes()[..k]);
        self.len += k;
        Ok(())
    }
}

/// An allocation of `size` bytes failed: the error on stderr (once), then
/// SIGTERM for the signal handler to clean up and exit 1; this thread
/// waits for that (returning null would abort).
#[cold]
#[inline(never)]
fn failed(size: usize) -> ! {
    use std::fmt::Write;
    if !OUT_OF_MEMORY.swap(true, Ordering::SeqCst) {
        let mut t = StackText {
            buf: [0; 512],
            len: 0,
        };
        let _ = write!(
            t,
            "fmalign: error: out of memory: {:.1} MiB could not be allocated",
            size as f64 / (1u64 << 20) as f64
        );
        let what = ["address space (ulimit -v)", "data (ulimit -d)"];
        for (limit, what) in process_limits().into_iter().zip(what) {
            if let Some(l) = limit {
                let _ = write!(
                    t,
                    "; the process's {what} is limited to {:.1} MiB",
                    l as f64 / (1u64 << 20) as f64
                );
            }
        }
        let _ = writeln!(
            t,
            "; raise the limit (ulimit, or the memory a batch job asks for), or ask for less (index --max-memory, map -K or -t)"
        );
        #[cfg(unix)]
        // SAFETY: write(2) and raise(3) of a buffer on this stack.
        unsafe {
            libc::write(libc::STDERR_FILENO, t.buf.as_ptr().cast(), t.len);
            libc::raise(libc::SIGTERM);
        }
    }
    #[cfg(unix)]
    loop {
        // SAFETY: pause(2) only waits for a signal.
        unsafe { libc::pause() };
    }
    #[cfg(not(unix))]
    std::process::exit(1)
}

/// `p`, or the end of the process with an error if it is null.
#[inline]
fn checked(p: *mut u8, size: usize) -> *mut u8 {
    if p.is_null() {
        failed(size)
    }
    p
}

/// Under a process address-space limit (`RLIMIT_AS`), one malloc arena
/// instead of glibc's one per thread, each of which reserves 64 MiB of
/// address space: with 6 threads a third of a 1 GB limit went to arenas
/// (blocks of [`BIG`] bytes and more are mapped on their own anyway). Call
/// at the start of `main`, before any thread. A no-op elsewhere.
pub fn fit_address_space_limit() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if process_limits()[0].is_some() {
        // SAFETY: mallopt takes two integers.
        unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) };
    }
}

/// See the module documentation. Install with
/// `#[global_allocator] static A: fmalign::alloc::BigPages = fmalign::alloc::BigPages;`.
#[derive(Clone, Copy, Debug, Default)]
pub struct BigPages;

#[cfg(target_os = "linux")]
mod imp {
    use super::*;

    /// Whether a block of `size` bytes aligned to `align` is mapped.
    #[inline]
    pub(super) fn big(size: usize, align: usize) -> bool {
        size >= BIG && align <= 4096
    }

    /// A fresh zeroed mapping of `size` bytes, or null.
    pub(super) unsafe fn map(size: usize) -> *mut u8 {
        // SAFETY: an anonymous private mapping; no existing memory involved.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        // SAFETY: advice on the mapping just made; a failure changes nothing.
        unsafe { libc::madvise(p, size, libc::MADV_HUGEPAGE) };
        p.cast()
    }

    unsafe impl GlobalAlloc for BigPages {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            let p = if big(l.size(), l.align()) {
                // SAFETY: see `map`.
                unsafe { map(l.size()) }
            } else {
                // SAFETY: forwarded with the caller's layout.
                unsafe { System.alloc(l) }
            };
            checked(p, l.size())
        }

        unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
            let p = if big(l.size(), l.align()) {
                // SAFETY: a fresh anonymous mapping reads as zeros.
                unsafe { map(l.size()) }
            } else {
                // SAFETY: forwarded with the caller's layout.
                unsafe { System.alloc_zeroed(l) }
            };
            checked(p, l.size())
        }

        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            if big(l.size(), l.align()) {
                // SAFETY: `p` is a mapping of `l.size()` bytes made by `map`
                // or `realloc` (the layout decides, as it did at allocation).
                unsafe { libc::munmap(p.cast(), l.size()) };
            } else {
                // SAFETY: allocated by System with this layout.
                unsafe { System.dealloc(p, l) }
            }
        }

        unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
            let (was, is) = (big(l.size(), l.align()), big(new, l.align()));
            if !was && !is {
                // SAFETY: forwarded; both sizes belong to System.
                return checked(unsafe { System.realloc(p, l, new) }, new);
            }
            if was && is {
                // SAFETY: `p` is our mapping of `l.size()` bytes; the kernel
                // moves or resizes it, keeping the contents and the advice.
                let q = unsafe { libc::mremap(p.cast(), l.size(), new, libc::MREMAP_MAYMOVE) };
                if q == libc::MAP_FAILED {
                    failed(new);
                }
                // SAFETY: advice on our own mapping.
                unsafe { libc::madvise(q, new, libc::MADV_HUGEPAGE) };
                return q.cast();
            }
            // Across the threshold: a new block, the contents, the old freed.
            // SAFETY: `new` is non-zero (GlobalAlloc contract) with l's align.
            let nl = unsafe { Layout::from_size_align_unchecked(new, l.align()) };
            // SAFETY: as for `alloc`.
            let q = unsafe { self.alloc(nl) };
            if !q.is_null() {
                // SAFETY: both blocks hold at least min(old, new) bytes and
                // are distinct.
                unsafe {
                    std::ptr::copy_nonoverlapping(p, q, l.size().min(new));
                    self.dealloc(p, l);
                }
            }
            q
        }
    }
}

#[cfg(not(target_os = "linux"))]
unsafe impl GlobalAlloc for BigPages {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        // SAFETY: forwarded.
        unsafe { System.realloc(p, l, new) }
    }
}

/// Gives the system allocator's free memory back to the kernel (glibc's
/// `malloc_trim`): after a phase that made and freed many small blocks
/// from several threads (the sample's doubling rounds), the freed memory
/// would otherwise stay resident in glibc's per-thread heaps and count in
/// the peak of the next phase. A no-op elsewhere.
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointer and may be called at any time;
    // it only returns free pages of the malloc heaps to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fills `len` bytes at `p` with a pattern of `seed`.
    unsafe fn fill(p: *mut u8, len: usize, seed: u8) {
        for i in (0..len).step_by(4093) {
            // SAFETY: within the block.
            unsafe { *p.add(i) = seed.wrapping_add((i / 4093) as u8) };
        }
    }

    /// Whether the pattern of `fill` is at `p` over `len` bytes.
    unsafe fn holds(p: *const u8, len: usize, seed: u8) -> bool {
        (0..len)
            .step_by(4093)
            // SAFETY: within the block.
            .all(|i| unsafe { *p.add(i) } == seed.wrapping_add((i / 4093) as u8))
    }

    #[test]
    fn blocks_of_every_size_class_keep_their_contents() {
        let a = BigPages;
        // Below, at and above the threshold; growing and shrinking across it.
        let steps = [
            100,
            BIG - 1,
            BIG,
            BIG + 1,
            3 * BIG + 12345,
            BIG + 7,
            BIG - 8,
            64,
            2 * BIG,
            17,
        ];
        for align in [1, 8, 64, 4096, 8192] {
            let mut l = Layout::from_size_align(steps[0], align).unwrap();
            // SAFETY: the GlobalAlloc contract is kept: non-zero sizes, the
            // layout of each block passed back with it.
            unsafe {
                let mut p = a.alloc(l);
                assert!(!p.is_null());
                assert_eq!(p as usize % align, 0);
                fill(p, l.size(), 1);
                for (k, &s) in steps.iter().enumerate().skip(1) {
                    let q = a.realloc(p, l, s);
                    assert!(!q.is_null(), "realloc {} -> {s}", l.size());
                    assert_eq!(q as usize % align, 0);
                    assert!(
                        holds(q, l.size().min(s), k as u8),
                        "after {} -> {s}",
                        l.size()
                    );
                    l = Layout::from_size_align(s, align).unwrap();
                    p = q;
                    fill(p, s, k as u8 + 1);
                }
                a.dealloc(p, l);
            }
        }
    }

    #[test]
    fn zeroed_blocks_are_zero() {
        let a = BigPages;
        for size in [1000, BIG, 2 * BIG + 3] {
            let l = Layout::from_size_align(size, 8).unwrap();
            // SAFETY: a block of `l`, read within it and freed with it.
            unsafe {
                let p = a.alloc_zeroed(l);
                assert!(!p.is_null());
                assert!((0..size).step_by(511).all(|i| *p.add(i) == 0));
                assert_eq!(*p.add(size - 1), 0);
                a.dealloc(p, l);
            }
        }
    }
}
