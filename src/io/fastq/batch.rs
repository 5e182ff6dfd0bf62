//! A batch of reads in flat buffers, recycled, and the checks every read passes (what SAM can carry).

use std::ops::Range;
use std::sync::{Arc, Mutex};

use crate::read::ReadView;

/// One read inside a [`Batch`]'s buffers.
#[derive(Clone, Debug)]
struct Rec {
    /// Which buffer.
    pub(super) part: u32,
    pub(super) name: Range<usize>,
    pub(super) seq: Range<usize>,
    pub(super) qual: Option<Range<usize>>,
}

/// A batch of reads. Its reads lie in one or more buffers (pieces parsed
/// apart join a batch without a copy). A batch from a [`ReadSource`] gives
/// its buffers back to it when dropped ([`Recycle`]).
#[derive(Debug, Default)]
pub struct Batch {
    parts: Vec<Vec<u8>>,
    recs: Vec<Rec>,
    pub(super) bases: usize,
    pub(super) recycle: Option<Arc<Recycle>>,
}

impl Drop for Batch {
    fn drop(&mut self) {
        if let Some(r) = &self.recycle {
            for p in self.parts.drain(..) {
                Pool::give(&r.bytes, p);
            }
            Pool::give(&r.recs, std::mem::take(&mut self.recs));
        }
    }
}

/// Buffers of dropped batches (their bytes and their records), for the
/// next ones: memory the reader wrote before is written again, instead of
/// fresh pages the kernel must zero and map for every batch (with
/// fmalign's allocator every buffer of 4 MiB or more is a mapping of its
/// own, `alloc::BigPages`): 1.4x on the reader (docs/BENCHMARKS.md). At
/// most [`RECYCLE_BYTES`] are kept, so the peak memory stays that of the
/// batches in flight.
#[derive(Debug, Default)]
pub(super) struct Recycle {
    bytes: Mutex<Pool<u8>>,
    recs: Mutex<Pool<Rec>>,
}

/// Kept buffers of one kind and their bytes.
#[derive(Debug)]
struct Pool<T> {
    free: Vec<Vec<T>>,
    pub(super) bytes: usize,
}

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Pool {
            free: Vec::new(),
            bytes: 0,
        }
    }
}

/// Bytes [`Recycle`] keeps of each kind.
const RECYCLE_BYTES: usize = 64 << 20;

impl<T> Pool<T> {
    /// An empty buffer (of at least `n` elements).
    pub(super) fn take(pool: &Mutex<Pool<T>>, n: usize) -> Vec<T> {
        let got = pool.lock().ok().and_then(|mut p| {
            let v = p.free.pop()?;
            p.bytes -= v.capacity() * std::mem::size_of::<T>();
            Some(v)
        });
        let mut v = got.unwrap_or_default();
        v.clear();
        v.reserve(n);
        v
    }

    fn give(pool: &Mutex<Pool<T>>, v: Vec<T>) {
        let b = v.capacity() * std::mem::size_of::<T>();
        if b == 0 {
            return;
        }
        if let Ok(mut p) = pool.lock()
            && p.bytes + b <= RECYCLE_BYTES
        {
            p.bytes += b;
            p.free.push(v);
        }
    }
}

impl Batch {
    /// An empty batch with buffers from `recycle` (the first holds `bytes`
    /// without growing), which go back there when it is dropped.
    pub(super) fn recycled(recycle: &Arc<Recycle>, bytes: usize) -> Batch {
        let mut b = Batch::returning_to(recycle);
        b.parts.push(Pool::take(&recycle.bytes, bytes));
        b
    }

    /// An empty batch with no buffer yet, whose buffers go to `recycle`
    /// when it is dropped.
    pub(super) fn returning_to(recycle: &Arc<Recycle>) -> Batch {
        Batch {
            parts: Vec::new(),
            recs: Pool::take(&recycle.recs, 0),
            bases: 0,
            recycle: Some(Arc::clone(recycle)),
        }
    }

    /// Number of reads.
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// Whether the batch has no reads.
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// Number of bases.
    pub fn bases(&self) -> usize {
        self.bases
    }

    /// Read `i`.
    pub fn get(&self, i: usize) -> ReadView<'_> {
        let r = &self.recs[i];
        let data = &self.parts[r.part as usize];
        ReadView {
            name: &data[r.name.clone()],
            seq: &data[r.seq.clone()],
            qual: r.qual.clone().map(|q| &data[q]),
        }
    }

    /// A batch of reads held in memory (name, bases, qualities), checked as
    /// the FASTQ reader checks a record; the message names the read.
    pub fn from_reads<'r>(
        reads: impl IntoIterator<Item = ReadView<'r>>,
    ) -> std::result::Result<Batch, String> {
        let mut b = Batch::default();
        for (i, r) in reads.into_iter().enumerate() {
            check_read(r.name, r.seq, r.qual)
                .map_err(|e| format!("read {} of the batch: {e}", i + 1))?;
            if let Some(q) = r.qual
                && q.len() != r.seq.len()
            {
                return Err(format!(
                    "read {} of the batch ('{}'): {} bases but {} qualities",
                    i + 1,
                    String::from_utf8_lossy(r.name).escape_debug(),
                    r.seq.len(),
                    q.len()
                ));
            }
            b.push(r.name, r.seq, r.qual);
        }
        Ok(b)
    }

    /// Appends the reads of `other` from read `from` on (its buffers move).
    pub(super) fn append(&mut self, mut other: Batch, from: usize) {
        let k = self.parts.len() as u32;
        self.parts.append(&mut other.parts);
        for mut r in other.recs.drain(..).skip(from) {
            r.part += k;
            self.bases += r.seq.len();
            self.recs.push(r);
        }
    }

    /// Appends read `i` of `other`.
    pub(super) fn append_one(&mut self, other: &Batch, i: usize) {
        let r = other.get(i);
        self.push(r.name, r.seq, r.qual);
    }

    pub(super) fn push(&mut self, id: &[u8], seq: &[u8], qual: Option<&[u8]>) {
        let name_len = id
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(id.len());
        if self.parts.is_empty() {
            self.parts.push(Vec::new());
        }
        let part = self.parts.len() - 1;
        let data = &mut self.parts[part];
        let mut put = |b: &[u8]| {
            let s = data.len();
            data.extend_from_slice(b);
            s..data.len()
        };
        let name = put(&id[..name_len]);
        let seq_r = put(seq);
        let qual = qual.map(&mut put);
        self.bases += seq.len();
        self.recs.push(Rec {
            part: part as u32,
            name,
            seq: seq_r,
            qual,
        });
    }
}

/// What SAM can carry (SAM v1 §1.4): QNAME `[!-?A-~]{1,254}` (the name up
/// to the first whitespace; an empty one is written `*`), SEQ letters (and
/// `=`, `.`), QUAL `[!-~]`. A read that breaks them is refused with the
/// reason, rather than written as a record samtools would reject.
/// The first character of `bytes` whose byte fails `ok`, as a message
/// shows it: quoted and escaped (`'é'` for a UTF-8 character, not the
/// Latin-1 reading of its first byte, `'\t'`), or its byte in hex where it
/// is not UTF-8.
fn first_not(bytes: &[u8], ok: impl Fn(u8) -> bool) -> Option<String> {
    let i = bytes.iter().position(|&b| !ok(b))?;
    let rest = &bytes[i..];
    let valid = match std::str::from_utf8(rest) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap_or_default(),
    };
    Some(match valid.chars().next() {
        Some(c) => format!("{c:?}"),
        None => format!("byte 0x{:02X} (not UTF-8)", rest[0]),
    })
}

pub(super) fn check_read(
    id: &[u8],
    seq: &[u8],
    qual: Option<&[u8]>,
) -> std::result::Result<(), String> {
    let name = &id[..id
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(id.len())];
    let shown = |b: &[u8]| String::from_utf8_lossy(b).escape_debug().to_string();
    if name.len() > 254 {
        return Err(format!(
            "read name of {} characters; SAM allows at most 254",
            name.len()
        ));
    }
    if let Some(c) = first_not(name, |b| (b'!'..=b'~').contains(&b) && b != b'@') {
        return Err(format!(
            "read name '{}' has the character {c}, which a SAM read name cannot hold (printable ASCII except '@')",
            shown(name),
        ));
    }
    if let Some(c) = first_not(seq, |b| b.is_ascii_alphabetic() || b == b'=' || b == b'.') {
        return Err(format!(
            "read '{}' has {c} in its sequence (expected letters)",
            shown(name),
        ));
    }
    if let Some(c) = qual.and_then(|q| first_not(q, |b| (b'!'..=b'~').contains(&b))) {
        return Err(format!(
            "read '{}' has {c} in its qualities (expected '!' to '~')",
            shown(name),
        ));
    }
    Ok(())
}

/// Whether [`check_read`] accepts the read, without its messages: each
/// check a branch-free fold over the bytes, which the compiler vectorizes
/// (the checks with early exits took 60% of the reader's time).
#[inline]
pub(super) fn read_ok(id: &[u8], seq: &[u8], qual: Option<&[u8]>) -> bool {
    fn none(bytes: &[u8], bad: impl Fn(u8) -> bool) -> bool {
        bytes.iter().fold(0u8, |acc, &b| acc | u8::from(bad(b))) == 0
    }
    let name = &id[..id
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(id.len())];
    name.len() <= 254
        && none(name, |b| b.wrapping_sub(b'!') > b'~' - b'!' || b == b'@')
        // A letter (either case: `| 0x20` maps A-Z onto a-z), '=' or '.'.
        && none(seq, |b| {
            (b | 0x20).wrapping_sub(b'a') >= 26 && b != b'=' && b != b'.'
        })
        && qual.is_none_or(|q| none(q, |b| b.wrapping_sub(b'!') > b'~' - b'!'))
}
