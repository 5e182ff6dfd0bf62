//! One SAM record as every mode produces it ([`Record`]: typed fields, tags
//! as values), and [`Records`], the chunk's output: SAM text, or BAM
//! records encoded here (SAM spec §4.2; noodles is the tests' oracle), with
//! `-R` and `--no-unal` applied as records are written.

mod bam;
mod sam;
mod set;
#[cfg(test)]
mod tests;

pub use bam::push_bam;
pub(super) use sam::push_int;
pub use sam::push_sam;
pub(super) use set::Chunk;
pub use set::{RecordId, RecordSet};

use std::io;

use crate::align::Op;
use crate::read::ReadView;
use crate::reference::Layout;

/// A record's CIGAR (also the mate's, for `MC:Z`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cigar<'a> {
    /// `*`: an unmapped read (for `MC`: no tag).
    #[default]
    None,
    /// `{len}M`: an ungapped hit.
    Matched(u32),
    /// A gapped alignment's operations.
    Ops(&'a [(Op, u32)]),
}

impl Cigar<'_> {
    /// `*`: no CIGAR.
    pub fn is_none(&self) -> bool {
        matches!(self, Cigar::None)
    }

    /// Operations: `f` gets each, in order.
    pub fn for_each(&self, mut f: impl FnMut(Op, u32)) {
        match *self {
            Cigar::None => {}
            Cigar::Matched(n) => f(Op::Match, n),
            Cigar::Ops(ops) => ops.iter().for_each(|&(o, n)| f(o, n)),
        }
    }

    /// Operations.
    pub fn len(&self) -> usize {
        match self {
            Cigar::None => 0,
            Cigar::Matched(_) => 1,
            Cigar::Ops(ops) => ops.len(),
        }
    }

    /// Whether there is no operation.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Soft-clipped bases at the start and at the end (as
    /// [`crate::align::clips`]).
    pub fn clips(&self) -> (u32, u32) {
        match *self {
            Cigar::Ops(ops) => crate::align::clips(ops),
            _ => (0, 0),
        }
    }

    /// Reference bases covered.
    pub fn span(&self) -> u64 {
        match *self {
            Cigar::None => 0,
            Cigar::Matched(n) => u64::from(n),
            Cigar::Ops(ops) => crate::align::ref_span(ops),
        }
    }

    /// Appends the CIGAR as SAM text (`*` when none).
    pub fn push_text(&self, out: &mut Vec<u8>) {
        match self {
            Cigar::None => out.push(b'*'),
            _ => self.for_each(|o, n| {
                push_int(out, u64::from(n));
                out.push(o.letter());
            }),
        }
    }
}

/// The optional fields a record can carry, written in this order (the
/// ungapped modes' `NM MD X0 X1 MC XA`, the gapped ones' `NM MD AS XS MC SA
/// XA`, then `RG` from the options).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tags<'a> {
    /// `NM:i`.
    pub nm: Option<u32>,
    /// `MD:Z`.
    pub md: Option<&'a [u8]>,
    /// `AS:i`: the alignment's score.
    pub score: Option<i32>,
    /// `XS:i`: the best other alignment's score.
    pub xs: Option<i32>,
    /// `X0:i`: best hits.
    pub x0: Option<u64>,
    /// `X1:i`: hits in the next stratum.
    pub x1: Option<u64>,
    /// `MC:Z`: the mate's CIGAR ([`Cigar::None`]: no tag).
    pub mc: Cigar<'a>,
    /// `SA:Z` (empty: no tag).
    pub sa: &'a [u8],
    /// `XA:Z` (empty: no tag).
    pub xa: &'a [u8],
}

/// One SAM record.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    /// QNAME (empty: `*`).
    pub name: &'a [u8],
    /// FLAG. With 0x10, SEQ is written reverse-complemented and QUAL
    /// reversed.
    pub flag: u16,
    /// RNAME and 0-based POS (`None`: `*` and 0).
    pub place: Option<(u32, u64)>,
    /// MAPQ.
    pub mapq: u8,
    /// CIGAR.
    pub cigar: Cigar<'a>,
    /// RNEXT and 0-based PNEXT (`None`: `*` and 0).
    pub next: Option<(u32, u64)>,
    /// TLEN.
    pub tlen: i64,
    /// The read's bases as given (forward strand).
    pub seq: &'a [u8],
    /// Its qualities as given (phred+33), if any.
    pub qual: Option<&'a [u8]>,
    /// Optional fields.
    pub tags: Tags<'a>,
}

/// What ties a paired read's record to its mate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mate<'a> {
    /// Pair flag bits: 0x1, 0x2, 0x8, 0x20, 0x40, 0x80.
    pub flag: u16,
    /// RNEXT and 0-based PNEXT (`None`: `*` and 0).
    pub next: Option<(u32, u64)>,
    /// TLEN.
    pub tlen: i64,
    /// The mate's CIGAR, for `MC:Z` (as bwa mem writes it; Picard and
    /// `samtools markdup` read it).
    pub mc: Cigar<'a>,
}

impl<'a> Record<'a> {
    /// The record of an unmapped read: flag 4, SEQ and QUAL as given; of a
    /// pair (`mate`), placed at its mate's place when the mate is mapped
    /// (as SAM recommends, so that it sorts beside it).
    pub fn unmapped(read: &ReadView<'a>, mate: Option<Mate<'a>>) -> Record<'a> {
        let m = mate.unwrap_or_default();
        Record {
            name: read.name,
            flag: 4 | m.flag,
            place: m.next,
            mapq: 0,
            cigar: Cigar::None,
            next: m.next,
            tlen: 0,
            seq: read.seq,
            qual: read.qual,
            tags: Tags {
                mc: m.mc,
                ..Tags::default()
            },
        }
    }

    fn rev(&self) -> bool {
        self.flag & 0x10 != 0
    }

    /// Mapped (flag 0x4 unset).
    pub fn is_mapped(&self) -> bool {
        self.flag & 0x4 == 0
    }

    /// On the reverse strand (flag 0x10).
    pub fn is_reverse(&self) -> bool {
        self.rev()
    }

    /// Mapped, neither secondary (0x100) nor supplementary (0x800).
    pub fn is_primary(&self) -> bool {
        self.is_mapped() && self.flag & 0x900 == 0
    }

    /// Secondary (flag 0x100).
    pub fn is_secondary(&self) -> bool {
        self.flag & 0x100 != 0
    }

    /// Supplementary (flag 0x800).
    pub fn is_supplementary(&self) -> bool {
        self.flag & 0x800 != 0
    }

    /// 0-based, end-exclusive reference interval aligned, if mapped.
    pub fn ref_range(&self) -> Option<(u64, u64)> {
        let (_, pos) = self.place.filter(|_| self.is_mapped())?;
        Some((pos, pos + self.cigar.span()))
    }

    /// 0-based, end-exclusive interval of the read aligned (soft clips
    /// left out), in the read's own (forward) coordinates, as mappy's
    /// `q_st`/`q_en`; `None` when unmapped.
    pub fn query_range(&self) -> Option<(u32, u32)> {
        if !self.is_mapped() {
            return None;
        }
        let n = self.seq.len() as u32;
        let (lead, trail) = self.cigar.clips();
        Some(if self.rev() {
            (trail, n - lead)
        } else {
            (lead, n - trail)
        })
    }

    /// The SAM line (with its newline) the CLI writes for this record,
    /// contigs named from `layout`, `rg` as `-R`'s ID.
    pub fn to_sam(&self, layout: &Layout, rg: Option<&str>) -> Vec<u8> {
        let mut out = Vec::new();
        push_sam(&mut out, self, layout, rg.map(str::as_bytes));
        out
    }
}

/// A record as owned values: one alignment of a read (or its unmapped
/// record), as the library's per-read API ([`super::Mapper`]) returns it.
/// [`OwnedRecord::record`] borrows it back as the [`Record`] the CLI writes,
/// so [`OwnedRecord::to_sam`] is the CLI's line byte for byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedRecord {
    /// QNAME (empty: `*`).
    pub name: Vec<u8>,
    /// FLAG.
    pub flag: u16,
    /// Contig (index into the index's layout) and 0-based POS.
    pub place: Option<(u32, u64)>,
    /// MAPQ.
    pub mapq: u8,
    /// CIGAR (empty: `*`).
    pub cigar: Vec<(Op, u32)>,
    /// RNEXT and 0-based PNEXT.
    pub next: Option<(u32, u64)>,
    /// TLEN.
    pub tlen: i64,
    /// The read's bases as given (forward strand).
    pub seq: Vec<u8>,
    /// Its qualities as given, if any.
    pub qual: Option<Vec<u8>>,
    /// `NM:i`.
    pub nm: Option<u32>,
    /// `MD:Z`.
    pub md: Option<Vec<u8>>,
    /// `AS:i`: the alignment's score.
    pub score: Option<i32>,
    /// `XS:i`: the best other alignment's score.
    pub xs: Option<i32>,
    /// `X0:i`: best hits (ungapped modes).
    pub x0: Option<u64>,
    /// `X1:i`: hits in the next stratum (ungapped modes).
    pub x1: Option<u64>,
    /// `MC:Z`: the mate's CIGAR (empty: no tag).
    pub mc: Vec<(Op, u32)>,
    /// `SA:Z` (empty: no tag).
    pub sa: Vec<u8>,
    /// `XA:Z` (empty: no tag).
    pub xa: Vec<u8>,
}

/// A CIGAR's operations as owned values (`*`: none).
fn cigar_ops(c: Cigar<'_>) -> Vec<(Op, u32)> {
    let mut v = Vec::with_capacity(c.len());
    c.for_each(|o, n| v.push((o, n)));
    v
}

/// Owned operations back as a [`Cigar`] (none: `*`).
fn cigar_of(ops: &[(Op, u32)]) -> Cigar<'_> {
    if ops.is_empty() {
        Cigar::None
    } else {
        Cigar::Ops(ops)
    }
}

impl OwnedRecord {
    /// `r` as owned values.
    pub fn of(r: &Record<'_>) -> OwnedRecord {
        let t = &r.tags;
        OwnedRecord {
            name: r.name.to_vec(),
            flag: r.flag,
            place: r.place,
            mapq: r.mapq,
            cigar: cigar_ops(r.cigar),
            next: r.next,
            tlen: r.tlen,
            seq: r.seq.to_vec(),
            qual: r.qual.map(<[u8]>::to_vec),
            nm: t.nm,
            md: t.md.map(<[u8]>::to_vec),
            score: t.score,
            xs: t.xs,
            x0: t.x0,
            x1: t.x1,
            mc: cigar_ops(t.mc),
            sa: t.sa.to_vec(),
            xa: t.xa.to_vec(),
        }
    }

    /// The record to write (borrowing this one).
    pub fn record(&self) -> Record<'_> {
        Record {
            name: &self.name,
            flag: self.flag,
            place: self.place,
            mapq: self.mapq,
            cigar: cigar_of(&self.cigar),
            next: self.next,
            tlen: self.tlen,
            seq: &self.seq,
            qual: self.qual.as_deref(),
            tags: Tags {
                nm: self.nm,
                md: self.md.as_deref(),
                score: self.score,
                xs: self.xs,
                x0: self.x0,
                x1: self.x1,
                mc: cigar_of(&self.mc),
                sa: &self.sa,
                xa: &self.xa,
            },
        }
    }

    /// The SAM line (with its newline) the CLI writes for this record,
    /// contigs named from `layout`, `rg` as `-R`'s ID.
    pub fn to_sam(&self, layout: &Layout, rg: Option<&str>) -> Vec<u8> {
        self.record().to_sam(layout, rg)
    }

    /// Mapped (flag 0x4 unset).
    pub fn is_mapped(&self) -> bool {
        self.record().is_mapped()
    }

    /// On the reverse strand (flag 0x10).
    pub fn is_reverse(&self) -> bool {
        self.record().is_reverse()
    }

    /// Mapped, neither secondary (0x100) nor supplementary (0x800).
    pub fn is_primary(&self) -> bool {
        self.record().is_primary()
    }

    /// Secondary (flag 0x100).
    pub fn is_secondary(&self) -> bool {
        self.record().is_secondary()
    }

    /// Supplementary (flag 0x800).
    pub fn is_supplementary(&self) -> bool {
        self.record().is_supplementary()
    }

    /// 0-based, end-exclusive reference interval aligned, if mapped.
    pub fn ref_range(&self) -> Option<(u64, u64)> {
        self.record().ref_range()
    }

    /// 0-based, end-exclusive interval of the read aligned (soft clips
    /// left out), in the read's own (forward) coordinates, as mappy's
    /// `q_st`/`q_en`; `None` when unmapped.
    pub fn query_range(&self) -> Option<(u32, u32)> {
        self.record().query_range()
    }
}

/// The records of a chunk as written: SAM text or uncompressed BAM, or,
/// for the library's per-read API, each read's records as owned values.
pub(super) struct Records<'a> {
    /// The bytes so far.
    pub(super) out: Vec<u8>,
    /// Collecting: each read's (pair's) records, in order.
    collected: Option<Chunk>,
    layout: &'a Layout,
    bam: bool,
    /// `-R`: `RG:Z:<ID>` on every record.
    rg: Option<&'a [u8]>,
    /// `--no-unal`.
    no_unal: bool,
    /// The first record BAM cannot hold.
    error: Option<io::Error>,
}

impl<'a> Records<'a> {
    /// An empty chunk of `bam` or SAM records for `layout`'s contigs.
    pub(super) fn new(
        layout: &'a Layout,
        bam: bool,
        rg: Option<&'a str>,
        no_unal: bool,
        capacity: usize,
    ) -> Self {
        Records {
            out: Vec::with_capacity(capacity),
            layout,
            bam,
            rg: rg.map(str::as_bytes),
            no_unal,
            collected: None,
            error: None,
        }
    }

    /// The same sink collecting each read's records ([`Chunk`]) instead of
    /// bytes.
    pub(super) fn collecting(mut self) -> Self {
        self.collected = Some(Chunk::default());
        self
    }

    /// Starts the records of the batch's read `at` (`one`) or, with `two`,
    /// of pair `at`; a no-op unless collecting.
    #[inline]
    pub(super) fn next_read(&mut self, at: usize, one: &ReadView<'_>, two: Option<&ReadView<'_>>) {
        if let Some(c) = &mut self.collected {
            c.next_read(at, one, two);
        }
    }

    /// Appends `r`, unless `--no-unal` drops it (an unmapped read; of a
    /// pair, only when its mate is unmapped too).
    pub(super) fn push(&mut self, r: &Record<'_>) {
        if self.no_unal && r.flag & 4 != 0 && (r.flag & 1 == 0 || r.flag & 8 != 0) {
            return;
        }
        if let Some(c) = &mut self.collected {
            c.push(r);
        } else if self.bam {
            if let Err(e) = push_bam(&mut self.out, r, self.rg) {
                self.error.get_or_insert(e);
            }
        } else {
            push_sam(&mut self.out, r, self.layout, self.rg);
        }
    }

    /// The bytes (and, collecting, each read's records), or the first
    /// record that could not be encoded.
    pub(super) fn finish(self) -> io::Result<Written> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(Written {
                bytes: self.out,
                chunk: self.collected.unwrap_or_default(),
            }),
        }
    }
}

/// A chunk's output: its bytes, or its reads' records.
#[derive(Debug, Default)]
pub(super) struct Written {
    /// SAM text or uncompressed BAM records.
    pub(super) bytes: Vec<u8>,
    /// Collecting: each read's (pair's) records.
    pub(super) chunk: Chunk,
}
