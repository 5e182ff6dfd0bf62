//! The two-slot pipeline of [`DeviceIndex::exact_batch`]: reads packed
//! to 2 bits into pinned host buffers ([`pack_reads`]), and two [`Slot`]s,
//! each a stream with its host and device buffers, so that one sub-batch is
//! packed while the other is copied over, searched and copied back. The
//! generic pieces (pinned buffers, timing events, the launch grid) are in
//! `gpu::context`; what is here knows `map_exact_packed`'s arguments.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, PinnedHostSlice, PushKernelArg,
};
use rayon::prelude::*;

use super::{DeviceIndex, err};
use crate::error::{Error, Result};
use crate::fm::Interval;
use crate::gpu::context::{Gpu, grid, pinned, timing_event};

/// Bit 31 of a packed read's length (gpu/map.cu `AMBIGUOUS`): the read holds
/// a base other than A/C/G/T and matches nowhere.
pub(super) const AMBIGUOUS: u32 = 1 << 31;

/// Reads packed per parallel task of [`pack_reads`].
const PACK_GROUP: usize = 4096;

/// Words [`pack_reads`] fills for `reads`: each read starts a word, 32
/// bases a word; at least one (a device buffer is never empty).
pub fn packed_words(reads: &[&[u8]]) -> usize {
    reads
        .iter()
        .map(|r| r.len().div_ceil(32))
        .sum::<usize>()
        .max(1)
}

/// Packs `reads` for `map_exact_packed`: read `k` starts at word
/// `starts[k]`, its base `i` at bits `2 (i % 32)` of word `starts[k] + i /
/// 32` (A, C, G, T = 0..3, the index's codes); `lens[k]` is its length, with
/// [`AMBIGUOUS`] set when it holds any other letter. `reads` are letters
/// when `ascii`, else codes (0..=3, anything else ambiguous). `words` must
/// hold [`packed_words`], `starts` and `lens` one entry per read. Groups of
/// reads are packed in parallel (rayon).
pub fn pack_reads(
    reads: &[&[u8]],
    ascii: bool,
    words: &mut [u64],
    starts: &mut [u64],
    lens: &mut [u32],
) -> Result<()> {
    let need = packed_words(reads);
    if words.len() < need || starts.len() < reads.len() || lens.len() < reads.len() {
        return Err(Error::Gpu(format!(
            "packing {} reads: buffers of {} words, {} starts, {} lengths are too small",
            reads.len(),
            words.len(),
            starts.len(),
            lens.len()
        )));
    }
    let mut at = 0;
    for (k, r) in reads.iter().enumerate() {
        if r.len() >= AMBIGUOUS as usize {
            return Err(Error::Gpu(format!(
                "a read of {} bases is too long for the GPU search",
                r.len()
            )));
        }
        starts[k] = at as u64;
        at += r.len().div_ceil(32);
    }
    words[at..].fill(0);
    // Each group's words are one piece of `words`, borrowed by one task.
    let mut pieces = Vec::with_capacity(reads.len().div_ceil(PACK_GROUP));
    let mut rest = &mut words[..at];
    for (group, lens) in reads
        .chunks(PACK_GROUP)
        .zip(lens[..reads.len()].chunks_mut(PACK_GROUP))
    {
        let len: usize = group.iter().map(|r| r.len().div_ceil(32)).sum();
        let (piece, tail) = rest.split_at_mut(len);
        rest = tail;
        pieces.push((group, piece, lens));
    }
    pieces.into_par_iter().for_each(|(group, piece, lens)| {
        let mut w = 0;
        for (r, len) in group.iter().zip(lens.iter_mut()) {
            let mut amb = false;
            for chunk in r.chunks(32) {
                let mut word = 0u64;
                for (i, &b) in chunk.iter().enumerate() {
                    let c = if ascii { crate::dna::code(b) } else { b };
                    amb |= c > 3;
                    word |= u64::from(c & 3) << (2 * i);
                }
                piece[w] = word;
                w += 1;
            }
            *len = r.len() as u32 | if amb { AMBIGUOUS } else { 0 };
        }
    });
    Ok(())
}

/// One of the two slots of [`DeviceIndex::exact_batch`]: a stream, pinned
/// host buffers and device buffers for one sub-batch, and which reads are
/// in flight in it.
pub(super) struct Slot {
    stream: Arc<CudaStream>,
    words: PinnedHostSlice<u64>,
    starts: PinnedHostSlice<u64>,
    lens: PinnedHostSlice<u32>,
    out: PinnedHostSlice<u64>,
    dwords: CudaSlice<u64>,
    dstarts: CudaSlice<u64>,
    dlens: CudaSlice<u32>,
    dout: CudaSlice<u64>,
    /// The reads (of the whole batch) whose intervals are being computed,
    /// and their bases.
    pending: Option<(Range<usize>, u64)>,
    /// Around the kernel: its time on the device.
    start: CudaEvent,
    stop: CudaEvent,
}

impl Slot {
    pub(super) fn new(gpu: &Gpu) -> Result<Self> {
        let stream = gpu.ctx.new_stream().map_err(|e| err("new stream", e))?;
        let z64 = |n| {
            stream
                .alloc_zeros::<u64>(n)
                .map_err(|e| err("device memory for reads", e))
        };
        Ok(Slot {
            words: pinned(&gpu.ctx, 1, true)?,
            starts: pinned(&gpu.ctx, 1, true)?,
            lens: pinned(&gpu.ctx, 1, true)?,
            out: pinned(&gpu.ctx, 4, false)?,
            dwords: z64(1)?,
            dstarts: z64(1)?,
            dlens: stream
                .alloc_zeros::<u32>(1)
                .map_err(|e| err("device memory for reads", e))?,
            dout: z64(4)?,
            stream,
            pending: None,
            start: timing_event(gpu)?,
            stop: timing_event(gpu)?,
        })
    }

    /// Room for `words` packed words and `reads` reads (a quarter more
    /// when it grows, so that batches of similar reads do not reallocate).
    fn reserve(&mut self, ctx: &Arc<CudaContext>, words: usize, reads: usize) -> Result<()> {
        let st = &self.stream;
        let dev = |e| err("device memory for reads", e);
        // Each group's buffers are replaced together or not at all: a slot
        // whose host buffer grew but whose device buffer did not (out of
        // memory) would pass the length checks above on the next batch and
        // then copy past the device buffer's end.
        if self.words.len() < words {
            let n = words + words / 4;
            let grown = (
                pinned(ctx, n, true)?,
                st.alloc_zeros::<u64>(n).map_err(dev)?,
            );
            (self.words, self.dwords) = grown;
        }
        if self.starts.len() < reads {
            let n = reads + reads / 4;
            let grown = (
                pinned(ctx, n, true)?,
                pinned(ctx, n, true)?,
                pinned(ctx, 4 * n, false)?,
                st.alloc_zeros::<u64>(n).map_err(dev)?,
                st.alloc_zeros::<u32>(n).map_err(dev)?,
                st.alloc_zeros::<u64>(4 * n).map_err(dev)?,
            );
            (
                self.starts,
                self.lens,
                self.out,
                self.dstarts,
                self.dlens,
                self.dout,
            ) = grown;
        }
        Ok(())
    }

    /// Packs `reads` (the batch's reads `range`) into the pinned buffers and
    /// queues, on this slot's stream: the copies over, `map_exact_packed`,
    /// the copy of the intervals back. Returns at once; [`Slot::collect`]
    /// waits.
    pub(super) fn submit(
        &mut self,
        ix: &DeviceIndex,
        reads: &[&[u8]],
        ascii: bool,
        range: Range<usize>,
    ) -> Result<()> {
        let (nw, nr) = (packed_words(reads), reads.len());
        self.reserve(&ix.gpu.ctx, nw, nr)?;
        let host = |e| err("pinned host memory", e);
        pack_reads(
            reads,
            ascii,
            &mut self.words.as_mut_slice().map_err(host)?[..nw],
            &mut self.starts.as_mut_slice().map_err(host)?[..nr],
            &mut self.lens.as_mut_slice().map_err(host)?[..nr],
        )?;
        let st = &self.stream;
        let copy = |e| err("copy reads", e);
        // Slices of pinned memory: the copies are asynchronous. The buffers
        // are not written again before `collect` synchronised the stream.
        st.memcpy_htod(
            &self.words.as_slice().map_err(host)?[..nw],
            &mut self.dwords.slice_mut(..nw),
        )
        .map_err(copy)?;
        st.memcpy_htod(
            &self.starts.as_slice().map_err(host)?[..nr],
            &mut self.dstarts.slice_mut(..nr),
        )
        .map_err(copy)?;
        st.memcpy_htod(
            &self.lens.as_slice().map_err(host)?[..nr],
            &mut self.dlens.slice_mut(..nr),
        )
        .map_err(copy)?;
        let count = nr as u64;
        // Letters are reads (both strands); codes are -v K's seeds, whose
        // reverse strands are patterns of their own.
        let both = u32::from(ascii);
        let f = ix.gpu.func("map_exact_packed")?;
        let mut b = st.launch_builder(f);
        b.arg(&ix.occ)
            .arg(&ix.sup)
            .arg(&ix.c5)
            .arg(&ix.primary)
            .arg(&ix.n)
            .arg(&self.dwords)
            .arg(&self.dstarts)
            .arg(&self.dlens)
            .arg(&count)
            .arg(&both)
            .arg(&ix.kmer)
            .arg(&ix.kk)
            .arg(&mut self.dout);
        self.start.record(st).map_err(|e| err("event", e))?;
        // SAFETY: the arguments match map_exact_packed's parameters in
        // gpu/map.cu; dstarts and dlens hold `count` entries (reserve), every
        // start plus its read's words lies within the `nw` words copied to
        // dwords (pack_reads), dout holds 4 * count, and kmer holds the
        // 2 x 4^kk values of a kk-mer table (with_kmer; one pair for kk 0).
        unsafe { b.launch(grid(nr)) }.map_err(|e| err("map_exact_packed", e))?;
        self.stop.record(st).map_err(|e| err("event", e))?;
        st.memcpy_dtoh(
            &self.dout.slice(..4 * nr),
            &mut self.out.as_mut_slice().map_err(host)?[..4 * nr],
        )
        .map_err(|e| err("copy intervals back", e))?;
        // The clock counts reads (both strands), not -v K's seeds.
        let bases = if ascii {
            reads.iter().map(|r| r.len() as u64).sum()
        } else {
            0
        };
        self.pending = Some((range, bases));
        Ok(())
    }

    /// Forgets the sub-batch in flight, if any, once its stream is idle
    /// (after an error: nothing is left for the next call to collect).
    pub(super) fn abandon(&mut self) {
        self.pending = None;
        let _ = self.stream.synchronize();
    }

    /// Waits for the sub-batch in flight, if any, writes its intervals into
    /// `out` and adds its kernel time and bases to `clock`.
    pub(super) fn collect(&mut self, out: &mut [[Interval; 2]], clock: &KernelClock) -> Result<()> {
        let Some((range, bases)) = self.pending.take() else {
            return Ok(());
        };
        self.stream
            .synchronize()
            .map_err(|e| err("map_exact_packed", e))?;
        if bases > 0 {
            let ms = self
                .start
                .elapsed_ms(&self.stop)
                .map_err(|e| err("event", e))?;
            clock.nanos.fetch_add((f64::from(ms) * 1e6) as u64, Relaxed);
            clock.bases.fetch_add(bases, Relaxed);
        }
        let v = self
            .out
            .as_slice()
            .map_err(|e| err("pinned host memory", e))?;
        for (o, w) in out[range].iter_mut().zip(v.chunks_exact(4)) {
            *o = [
                Interval { lo: w[0], hi: w[1] },
                Interval { lo: w[2], hi: w[3] },
            ];
        }
        Ok(())
    }
}

/// Time in `map_exact_packed` (device time between events around each
/// launch) and the read bases it searched, both strands each (reads only:
/// the seeds of `-v K` are not counted).
#[derive(Default)]
pub(super) struct KernelClock {
    pub(super) nanos: AtomicU64,
    pub(super) bases: AtomicU64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unpacking `pack_reads`' words gives every read's codes back, each
    /// read from a word boundary, with the flag exactly on reads holding a
    /// non-ACGT letter; groups of 4096 reads packed in parallel agree.
    #[test]
    fn packed_reads_unpack_to_their_codes() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let reads: Vec<Vec<u8>> = (0..10_000)
            .map(|q| {
                let len = (next() % 300) as usize * usize::from(q % 97 != 0);
                (0..len)
                    .map(|_| match next() % 1000 {
                        0 => b'N',
                        1 => b'r',
                        v => b"ACGTacgt"[(v % 8) as usize],
                    })
                    .collect()
            })
            .collect();
        let seqs: Vec<&[u8]> = reads.iter().map(|r| r.as_slice()).collect();
        let mut words = vec![u64::MAX; packed_words(&seqs) + 3];
        let (mut starts, mut lens) = (vec![0; seqs.len()], vec![0; seqs.len()]);
        pack_reads(&seqs, true, &mut words, &mut starts, &mut lens).unwrap();
        let mut end = 0;
        for (k, r) in seqs.iter().enumerate() {
            assert_eq!(
                starts[k], end as u64,
                "read {k} starts after the one before"
            );
            end += r.len().div_ceil(32);
            let amb = r.iter().any(|&b| crate::dna::code(b) > 3);
            assert_eq!(lens[k], r.len() as u32 | if amb { AMBIGUOUS } else { 0 });
            for (i, &b) in r.iter().enumerate() {
                let w = words[starts[k] as usize + i / 32];
                let c = (w >> (2 * (i % 32))) & 3;
                assert_eq!(c as u8, crate::dna::code(b) & 3, "read {k} base {i}");
            }
        }
        assert!(words[end..].iter().all(|&w| w == 0), "the tail is zeroed");
        // Codes in, as for the seeds of -v K.
        let codes: Vec<Vec<u8>> = reads
            .iter()
            .map(|r| r.iter().map(|&b| crate::dna::code(b)).collect())
            .collect();
        let cseqs: Vec<&[u8]> = codes.iter().map(|r| r.as_slice()).collect();
        let mut cwords = vec![0; words.len()];
        let (mut cstarts, mut clens) = (vec![0; seqs.len()], vec![0; seqs.len()]);
        pack_reads(&cseqs, false, &mut cwords, &mut cstarts, &mut clens).unwrap();
        assert!(cwords == words && cstarts == starts && clens == lens);
        // Too small a buffer is an error, not a panic.
        assert!(pack_reads(&seqs, true, &mut words[..1], &mut starts, &mut lens).is_err());
    }
}
