//! [`SharedSlice`]: a slice that the tasks of one step store into at once,
//! and [`split_at_ends`], which cuts a slice into the disjoint pieces tasks
//! write on their own.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::sa::steps::Elem;

/// A mutable slice that several tasks store into at once, every store a
/// relaxed atomic store of a whole element.
///
/// Tasks that store to one element race, and the element ends up holding
/// one of their values: a race of atomic stores is defined behaviour, so a
/// step whose indices may repeat (a scatter) asks no `unsafe` promise of its
/// caller, and a slip in a step's own index arithmetic cannot corrupt memory
/// (every store is bounds-checked). Stores need no ordering among
/// themselves: the step's end (rayon's join) orders them all before any
/// later read. On x86-64 a relaxed atomic store is the same `mov` as a plain
/// store.
pub(crate) struct SharedSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    _slice: PhantomData<&'a mut [T]>,
}

// SAFETY: a `SharedSlice` gives access to its elements only by atomic stores
// (of `T` values that may come from any thread: `T: Send`) and by addresses
// for prefetch hints, which read nothing. It holds the slice's exclusive
// borrow for `'a`, so nothing else touches the elements meanwhile.
unsafe impl<T: Send> Send for SharedSlice<'_, T> {}
// SAFETY: as above; `&SharedSlice` allows nothing but those atomic stores.
unsafe impl<T: Send> Sync for SharedSlice<'_, T> {}

/// Whether `T` has the size of an atomic integer and at least its alignment.
const fn has_atomic_layout<T>() -> bool {
    let align = align_of::<T>();
    match size_of::<T>() {
        1 => align >= align_of::<AtomicU8>(),
        2 => align >= align_of::<AtomicU16>(),
        4 => align >= align_of::<AtomicU32>(),
        8 => align >= align_of::<AtomicU64>(),
        _ => false,
    }
}

impl<'a, T: Elem> SharedSlice<'a, T> {
    /// Shares `slice` among tasks, for stores.
    pub fn new(slice: &'a mut [T]) -> Self {
        const {
            assert!(
                has_atomic_layout::<T>(),
                "a SharedSlice element needs the size and alignment of an atomic integer"
            )
        };
        SharedSlice {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            _slice: PhantomData,
        }
    }

    /// Stores `v` in element `i` (panics, at the caller's line, when `i` is
    /// out of bounds).
    #[inline(always)]
    #[track_caller]
    pub fn store(&self, i: usize, v: T) {
        assert!(i < self.len, "store at {i} out of bounds ({})", self.len);
        // SAFETY: `i` is in bounds, so `p` points to a live element of the
        // slice that `self` borrows exclusively for `'a`; `new` checked that
        // `T` has the size of the atomic integer used below and at least its
        // alignment; every access to the element during `'a` is an atomic
        // store of that same size (`AtomicU*::from_ptr`'s requirements).
        unsafe {
            let p = self.ptr.add(i);
            match size_of::<T>() {
                1 => AtomicU8::from_ptr(p.cast()).store(bytemuck::cast(v), Relaxed),
                2 => AtomicU16::from_ptr(p.cast()).store(bytemuck::cast(v), Relaxed),
                4 => AtomicU32::from_ptr(p.cast()).store(bytemuck::cast(v), Relaxed),
                _ => AtomicU64::from_ptr(p.cast()).store(bytemuck::cast(v), Relaxed),
            }
        }
    }

    /// The address of element `i`, for a prefetch hint: nothing is read or
    /// written through it (`i` may be out of bounds).
    #[inline(always)]
    pub fn addr(&self, i: usize) -> *const T {
        self.ptr.wrapping_add(i)
    }
}

/// Cuts `x` into the pieces `[0, ends[0])`, `[ends[0], ends[1])`, …
/// (`ends` non-decreasing, the last at most `x.len()`), so that tasks can
/// write them in parallel without sharing anything.
pub(crate) fn split_at_ends<'a, T>(mut x: &'a mut [T], ends: &[usize]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(ends.len());
    let mut at = 0;
    for &e in ends {
        let (piece, rest) = std::mem::take(&mut x).split_at_mut(e - at);
        out.push(piece);
        x = rest;
        at = e;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn racing_stores_leave_one_of_the_values() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        for len in [1usize, 3, 64] {
            let mut x = vec![0u32; len];
            let d = SharedSlice::new(&mut x);
            // Every task stores its own value to every element.
            pool.install(|| {
                (1..=64u32).into_par_iter().for_each(|v| {
                    for i in 0..len {
                        d.store(i, v);
                    }
                })
            });
            assert!(x.iter().all(|&v| (1..=64).contains(&v)), "{x:?}");
        }
        let mut b = vec![0u8; 5];
        let d = SharedSlice::new(&mut b);
        pool.install(|| {
            (1..=8u8)
                .into_par_iter()
                .for_each(|v| d.store(v as usize % 5, v))
        });
        assert!(b.iter().all(|&v| v <= 8));
        let mut w = vec![0u64; 2];
        let d = SharedSlice::new(&mut w);
        pool.install(|| {
            (0..100u64)
                .into_par_iter()
                .for_each(|v| d.store(1, v << 40))
        });
        assert_eq!(w[0], 0);
        assert!(w[1].is_multiple_of(1 << 40) && w[1] >> 40 < 100, "{w:?}");
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn store_out_of_bounds_panics() {
        let mut x = vec![0u64; 4];
        SharedSlice::new(&mut x).store(4, 1);
    }

    #[test]
    fn split_at_ends_cuts_in_order() {
        let mut x: Vec<u32> = (0..10).collect();
        let parts = split_at_ends(&mut x, &[0, 3, 3, 7, 9]);
        let lens: Vec<usize> = parts.iter().map(|p| p.len()).collect();
        assert_eq!(lens, [0, 3, 0, 4, 2]);
        assert_eq!(parts[3], [3, 4, 5, 6]);
    }
}
