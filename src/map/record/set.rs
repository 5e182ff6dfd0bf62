//! A batch's records kept compactly for the library's per-read API
//! ([`RecordSet`]): per chunk, one array of fixed-size records and one
//! arena each for their bytes (MD, SA, XA) and CIGAR operations; a record
//! names its read by its index in the batch instead of copying its name,
//! bases and qualities. [`Chunk::record`] gives the very [`Record`] the CLI
//! writes.

use std::ops::Range;

use super::{Cigar, Record, Tags};
use crate::align::Op;
use crate::io::fastq::Batch;
use crate::read::ReadView;

/// Where a record's bytes lie in its chunk's arena.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    at: u32,
    len: u32,
}

impl Span {
    fn range(self) -> Range<usize> {
        self.at as usize..(self.at + self.len) as usize
    }
}

/// A [`Cigar`] with its operations in the chunk's arena.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum PackedCigar {
    #[default]
    None,
    Matched(u32),
    Ops(Span),
}

/// The read a record is of: read `i` of the batch (or of the mates'
/// batch), named as in SAM, or (a record whose name, bases or qualities are
/// not its read's) its own copies in the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Read(u32),
    Mate(u32),
    Own {
        name: Span,
        seq: Span,
        qual: Option<Span>,
    },
}

/// One record, its variable-length fields in the chunk's arenas.
#[derive(Clone, Copy, Debug)]
struct Packed {
    place: Option<(u32, u64)>,
    next: Option<(u32, u64)>,
    tlen: i64,
    x0: Option<u64>,
    x1: Option<u64>,
    nm: Option<u32>,
    score: Option<i32>,
    xs: Option<i32>,
    md: Option<Span>,
    sa: Span,
    xa: Span,
    cigar: PackedCigar,
    mc: PackedCigar,
    source: Source,
    flag: u16,
    mapq: u8,
}

/// The read (or reads, of a pair) whose records come next, as the sink
/// recognises them: their slices' addresses and lengths.
#[derive(Clone, Copy, Debug)]
struct Expected {
    source: Source,
    name: (usize, usize),
    seq: (usize, usize),
    qual: Option<(usize, usize)>,
}

fn addr(s: &[u8]) -> (usize, usize) {
    (s.as_ptr() as usize, s.len())
}

impl Expected {
    fn of(source: Source, read: &ReadView<'_>) -> Expected {
        Expected {
            source,
            name: addr(read.name),
            seq: addr(read.seq),
            qual: read.qual.map(addr),
        }
    }

    /// `r`'s name, bases and qualities are this read's own slices.
    fn matches(&self, r: &Record<'_>) -> bool {
        addr(r.name) == self.name && addr(r.seq) == self.seq && r.qual.map(addr) == self.qual
    }
}

/// The records of one chunk of a batch, as the driver collects them.
#[derive(Debug, Default)]
pub(in crate::map) struct Chunk {
    recs: Vec<Packed>,
    /// Each read's (pair's) records end here in `recs`.
    ends: Vec<u32>,
    bytes: Vec<u8>,
    ops: Vec<(Op, u32)>,
    /// The reads whose records come next.
    expected: [Option<Expected>; 2],
}

/// A length or offset within one chunk's arenas (a chunk is 256 reads).
fn small(n: usize) -> u32 {
    u32::try_from(n).expect("a chunk's records hold under 4 Gi bytes")
}

impl Chunk {
    /// Starts the records of the batch's read `at` (`one`) or, with `two`,
    /// of pair `at` (mate 1 `one`, mate 2 `two`).
    pub(in crate::map) fn next_read(
        &mut self,
        at: usize,
        one: &ReadView<'_>,
        two: Option<&ReadView<'_>>,
    ) {
        self.ends.push(small(self.recs.len()));
        let at = small(at);
        self.expected = [
            Some(Expected::of(Source::Read(at), one)),
            two.map(|t| Expected::of(Source::Mate(at), t)),
        ];
    }

    fn put_bytes(&mut self, b: &[u8]) -> Span {
        let at = small(self.bytes.len());
        self.bytes.extend_from_slice(b);
        Span {
            at,
            len: small(b.len()),
        }
    }

    fn put_cigar(&mut self, c: Cigar<'_>) -> PackedCigar {
        match c {
            Cigar::None => PackedCigar::None,
            Cigar::Matched(n) => PackedCigar::Matched(n),
            Cigar::Ops(ops) => {
                let at = small(self.ops.len());
                self.ops.extend_from_slice(ops);
                PackedCigar::Ops(Span {
                    at,
                    len: small(ops.len()),
                })
            }
        }
    }

    /// Appends `r` to the current read's records.
    pub(in crate::map) fn push(&mut self, r: &Record<'_>) {
        let source = match self.expected.iter().flatten().find(|e| e.matches(r)) {
            Some(e) => e.source,
            None => Source::Own {
                name: self.put_bytes(r.name),
                seq: self.put_bytes(r.seq),
                qual: r.qual.map(|q| self.put_bytes(q)),
            },
        };
        let t = &r.tags;
        let packed = Packed {
            place: r.place,
            next: r.next,
            tlen: r.tlen,
            x0: t.x0,
            x1: t.x1,
            nm: t.nm,
            score: t.score,
            xs: t.xs,
            md: t.md.map(|md| self.put_bytes(md)),
            sa: self.put_bytes(t.sa),
            xa: self.put_bytes(t.xa),
            cigar: self.put_cigar(r.cigar),
            mc: self.put_cigar(t.mc),
            source,
            flag: r.flag,
            mapq: r.mapq,
        };
        self.recs.push(packed);
        *self
            .ends
            .last_mut()
            .expect("next_read before the first record") = small(self.recs.len());
    }

    /// Reads (pairs) in this chunk.
    pub(in crate::map) fn reads(&self) -> usize {
        self.ends.len()
    }

    /// The records of the chunk's read (pair) `k`, as indices.
    pub(in crate::map) fn of_read(&self, k: usize) -> Range<usize> {
        let start = if k == 0 { 0 } else { self.ends[k - 1] as usize };
        start..self.ends[k] as usize
    }

    fn cigar(&self, c: PackedCigar) -> Cigar<'_> {
        match c {
            PackedCigar::None => Cigar::None,
            PackedCigar::Matched(n) => Cigar::Matched(n),
            PackedCigar::Ops(s) => Cigar::Ops(&self.ops[s.range()]),
        }
    }

    /// Record `i`, its read taken from `reads` (or `mates`).
    pub(in crate::map) fn record<'s>(
        &'s self,
        i: usize,
        reads: &'s Batch,
        mates: Option<&'s Batch>,
    ) -> Record<'s> {
        let p = &self.recs[i];
        let bytes = |s: Span| &self.bytes[s.range()];
        let read = match p.source {
            Source::Read(k) => reads.get(k as usize).named_as_in_sam(),
            Source::Mate(k) => mates
                .expect("a mate's record comes with the mates")
                .get(k as usize)
                .named_as_in_sam(),
            Source::Own { name, seq, qual } => ReadView {
                name: bytes(name),
                seq: bytes(seq),
                qual: qual.map(bytes),
            },
        };
        Record {
            name: read.name,
            flag: p.flag,
            place: p.place,
            mapq: p.mapq,
            cigar: self.cigar(p.cigar),
            next: p.next,
            tlen: p.tlen,
            seq: read.seq,
            qual: read.qual,
            tags: Tags {
                nm: p.nm,
                md: p.md.map(bytes),
                score: p.score,
                xs: p.xs,
                x0: p.x0,
                x1: p.x1,
                mc: self.cigar(p.mc),
                sa: bytes(p.sa),
                xa: bytes(p.xa),
            },
        }
    }

    /// Record `i`'s FLAG.
    fn flag(&self, i: usize) -> u16 {
        self.recs[i].flag
    }
}

/// One record of a [`RecordSet`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecordId {
    chunk: u32,
    rec: u32,
}

/// Each read's (or pair's) records of a batch, as the CLI writes them, kept
/// compactly with the reads they are of: what [`crate::map::Mapper::map_set`]
/// returns. A record is an id ([`RecordSet::ids`]) until
/// [`RecordSet::record`] borrows it as the [`Record`] to write; the reads'
/// names, bases and qualities are not copied into each record, so the set
/// costs little beyond the batch it holds.
#[derive(Debug)]
pub struct RecordSet {
    chunks: Vec<Chunk>,
    /// The first read (pair) of each chunk.
    first: Vec<usize>,
    reads: Batch,
    mates: Option<Batch>,
}

impl RecordSet {
    pub(in crate::map) fn new(chunks: Vec<Chunk>, reads: Batch, mates: Option<Batch>) -> Self {
        let mut first = Vec::with_capacity(chunks.len());
        let mut n = 0;
        for c in &chunks {
            first.push(n);
            n += c.reads();
        }
        RecordSet {
            chunks,
            first,
            reads,
            mates,
        }
    }

    /// Reads (pairs) mapped.
    pub fn len(&self) -> usize {
        self.first.last().map_or(0, |&f| f) + self.chunks.last().map_or(0, Chunk::reads)
    }

    /// Whether no read was mapped.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The reads (mates 1 of pairs).
    pub fn reads(&self) -> &Batch {
        &self.reads
    }

    /// The mates 2 of pairs.
    pub fn mates(&self) -> Option<&Batch> {
        self.mates.as_ref()
    }

    /// The records of read (pair) `i`, in the order the CLI writes them
    /// (a pair's: mate 1's, then mate 2's).
    pub fn ids(&self, i: usize) -> impl ExactSizeIterator<Item = RecordId> + use<> {
        let c = self.first.partition_point(|&f| f <= i) - 1;
        let recs = self.chunks[c].of_read(i - self.first[c]);
        let chunk = c as u32;
        recs.map(move |r| RecordId {
            chunk,
            rec: r as u32,
        })
    }

    /// Each read's (pair's) records, in read order: [`RecordSet::ids`] of
    /// every read.
    pub fn each_read(
        &self,
    ) -> impl Iterator<Item = impl ExactSizeIterator<Item = RecordId> + use<>> + '_ {
        self.chunks.iter().enumerate().flat_map(|(c, chunk)| {
            (0..chunk.reads()).map(move |k| {
                chunk.of_read(k).map(move |r| RecordId {
                    chunk: c as u32,
                    rec: r as u32,
                })
            })
        })
    }

    /// Record `id`, as the CLI writes it.
    pub fn record(&self, id: RecordId) -> Record<'_> {
        self.chunks[id.chunk as usize].record(id.rec as usize, &self.reads, self.mates.as_ref())
    }

    /// Record `id`'s FLAG (without borrowing the whole record).
    pub fn flag(&self, id: RecordId) -> u16 {
        self.chunks[id.chunk as usize].flag(id.rec as usize)
    }
}
