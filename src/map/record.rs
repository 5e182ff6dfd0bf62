//! One SAM record as every mode produces it ([`Record`]: typed fields, tags
//! as values), and [`Records`], the chunk's output: SAM text, or BAM
//! records encoded here (SAM spec §4.2; noodles is the tests' oracle), with
//! `-R` and `--no-unal` applied as records are written.

use std::io;

use crate::align::Op;
use crate::dna;
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
    fn is_none(&self) -> bool {
        matches!(self, Cigar::None)
    }

    /// Operations: `f` gets each, in order.
    fn for_each(&self, mut f: impl FnMut(Op, u32)) {
        match *self {
            Cigar::None => {}
            Cigar::Matched(n) => f(Op::Match, n),
            Cigar::Ops(ops) => ops.iter().for_each(|&(o, n)| f(o, n)),
        }
    }

    fn len(&self) -> usize {
        match self {
            Cigar::None => 0,
            Cigar::Matched(_) => 1,
            Cigar::Ops(ops) => ops.len(),
        }
    }

    /// Reference bases covered.
    fn span(&self) -> u64 {
        match *self {
            Cigar::None => 0,
            Cigar::Matched(n) => u64::from(n),
            Cigar::Ops(ops) => crate::align::ref_span(ops),
        }
    }

    fn push_text(&self, out: &mut Vec<u8>) {
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
        let mut out = Vec::new();
        push_sam(&mut out, &self.record(), layout, rg.map(str::as_bytes));
        out
    }

    /// Mapped (flag 0x4 unset).
    pub fn is_mapped(&self) -> bool {
        self.flag & 0x4 == 0
    }

    /// On the reverse strand (flag 0x10).
    pub fn is_reverse(&self) -> bool {
        self.flag & 0x10 != 0
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
        Some((pos, pos + cigar_of(&self.cigar).span()))
    }

    /// 0-based, end-exclusive interval of the read aligned (soft clips
    /// left out), in the read's own (forward) coordinates, as mappy's
    /// `q_st`/`q_en`; `None` when unmapped.
    pub fn query_range(&self) -> Option<(u32, u32)> {
        if !self.is_mapped() {
            return None;
        }
        let n = self.seq.len() as u32;
        let (lead, trail) = crate::align::clips(&self.cigar);
        Some(if self.is_reverse() {
            (trail, n - lead)
        } else {
            (lead, n - trail)
        })
    }
}

/// The records of a chunk as written: SAM text or uncompressed BAM, or,
/// for the library's per-read API, each read's records as owned values.
pub(super) struct Records<'a> {
    /// The bytes so far.
    pub(super) out: Vec<u8>,
    /// Collecting: each read's (pair's) records, in order.
    owned: Option<Vec<Vec<OwnedRecord>>>,
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
            owned: None,
            error: None,
        }
    }

    /// The same sink collecting owned records per read instead of bytes.
    pub(super) fn collecting(mut self) -> Self {
        self.owned = Some(Vec::new());
        self
    }

    /// Starts the next read's (or pair's) records; a no-op unless
    /// collecting.
    pub(super) fn next_read(&mut self) {
        if let Some(o) = &mut self.owned {
            o.push(Vec::new());
        }
    }

    /// Appends `r`, unless `--no-unal` drops it (an unmapped read; of a
    /// pair, only when its mate is unmapped too).
    pub(super) fn push(&mut self, r: &Record<'_>) {
        if self.no_unal && r.flag & 4 != 0 && (r.flag & 1 == 0 || r.flag & 8 != 0) {
            return;
        }
        if let Some(o) = &mut self.owned {
            o.last_mut()
                .expect("next_read before the first record")
                .push(OwnedRecord::of(r));
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
                reads: self.owned.unwrap_or_default(),
            }),
        }
    }
}

/// A chunk's output: its bytes, or its reads' owned records.
#[derive(Debug, Default)]
pub(super) struct Written {
    /// SAM text or uncompressed BAM records.
    pub(super) bytes: Vec<u8>,
    /// Collecting: each read's (pair's) records.
    pub(super) reads: Vec<Vec<OwnedRecord>>,
}

/// Appends `x` in decimal.
pub(super) fn push_int(out: &mut Vec<u8>, x: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(x).as_bytes());
}

fn push_signed(out: &mut Vec<u8>, x: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(x).as_bytes());
}

/// SEQ as written: upper case, bytes SAM and BAM cannot both store as `N`
/// ([`dna::SAM_SEQ`]), reverse-complemented for a reverse-strand record.
fn seq_bytes<'s>(r: &'s Record<'_>) -> impl Iterator<Item = u8> + 's {
    let n = r.seq.len();
    let rev = r.rev();
    (0..n).map(move |i| {
        let b = if rev {
            dna::COMPLEMENT[r.seq[n - 1 - i] as usize]
        } else {
            r.seq[i]
        };
        dna::SAM_SEQ[b as usize]
    })
}

/// QUAL as written (reversed for a reverse-strand record).
fn qual_bytes<'s>(r: &'s Record<'_>, q: &'s [u8]) -> impl Iterator<Item = u8> + 's {
    let n = q.len();
    let rev = r.rev();
    (0..n).map(move |i| if rev { q[n - 1 - i] } else { q[i] })
}

/// `r` as one line of SAM text.
pub fn push_sam(out: &mut Vec<u8>, r: &Record<'_>, layout: &Layout, rg: Option<&[u8]>) {
    let name = |c: u32| layout.contigs[c as usize].name.as_bytes();
    if r.name.is_empty() {
        out.push(b'*');
    } else {
        out.extend_from_slice(r.name);
    }
    out.push(b'\t');
    push_int(out, u64::from(r.flag));
    out.push(b'\t');
    match r.place {
        Some((c, p)) => {
            out.extend_from_slice(name(c));
            out.push(b'\t');
            push_int(out, p + 1);
        }
        None => out.extend_from_slice(b"*\t0"),
    }
    out.push(b'\t');
    push_int(out, u64::from(r.mapq));
    out.push(b'\t');
    r.cigar.push_text(out);
    out.push(b'\t');
    match r.next {
        Some((c, p)) => {
            if Some(c) == r.place.map(|x| x.0) {
                out.push(b'=');
            } else {
                out.extend_from_slice(name(c));
            }
            out.push(b'\t');
            push_int(out, p + 1);
        }
        None => out.extend_from_slice(b"*\t0"),
    }
    out.push(b'\t');
    push_signed(out, r.tlen);
    out.push(b'\t');
    if r.seq.is_empty() {
        out.extend_from_slice(b"*\t*");
    } else {
        out.extend(seq_bytes(r));
        out.push(b'\t');
        match r.qual {
            Some(q) => out.extend(qual_bytes(r, q)),
            None => out.push(b'*'),
        }
    }
    let t = &r.tags;
    if let Some(nm) = t.nm {
        out.extend_from_slice(b"\tNM:i:");
        push_int(out, u64::from(nm));
    }
    if let Some(md) = t.md {
        out.extend_from_slice(b"\tMD:Z:");
        out.extend_from_slice(md);
    }
    if let Some(s) = t.score {
        out.extend_from_slice(b"\tAS:i:");
        push_signed(out, i64::from(s));
    }
    if let Some(s) = t.xs {
        out.extend_from_slice(b"\tXS:i:");
        push_signed(out, i64::from(s));
    }
    if let Some(x) = t.x0 {
        out.extend_from_slice(b"\tX0:i:");
        push_int(out, x);
    }
    if let Some(x) = t.x1 {
        out.extend_from_slice(b"\tX1:i:");
        push_int(out, x);
    }
    if !t.mc.is_none() {
        out.extend_from_slice(b"\tMC:Z:");
        t.mc.push_text(out);
    }
    if !t.sa.is_empty() {
        out.extend_from_slice(b"\tSA:Z:");
        out.extend_from_slice(t.sa);
    }
    if !t.xa.is_empty() {
        out.extend_from_slice(b"\tXA:Z:");
        out.extend_from_slice(t.xa);
    }
    if let Some(id) = rg {
        out.extend_from_slice(b"\tRG:Z:");
        out.extend_from_slice(id);
    }
    out.push(b'\n');
}

/// 4-bit BAM code (SAM spec §4.2.3, `=ACMGRSVTWYHKDBN`) of a read byte as
/// SEQ writes it ([`dna::SAM_SEQ`]): `[forward, complemented]`.
static BAM_BASE: [[u8; 256]; 2] = {
    const fn code(b: u8) -> u8 {
        let letters = b"=ACMGRSVTWYHKDBN";
        let mut k = 0;
        while k < 16 {
            if letters[k] == b {
                return k as u8;
            }
            k += 1;
        }
        15
    }
    let mut t = [[15u8; 256]; 2];
    let mut b = 0;
    while b < 256 {
        t[0][b] = code(dna::SAM_SEQ[b]);
        t[1][b] = code(dna::SAM_SEQ[dna::COMPLEMENT[b] as usize]);
        b += 1;
    }
    t
};

/// BAM's code of a CIGAR operation.
fn op_code(o: Op) -> u32 {
    match o {
        Op::Match => 0,
        Op::Ins => 1,
        Op::Del => 2,
        Op::Soft => 4,
    }
}

/// BIN of a record over 0-based `[beg, end]` (inclusive; SAM spec §5.3).
fn reg2bin(beg: u64, end: u64) -> u16 {
    let bin = if beg >> 14 == end >> 14 {
        ((1 << 15) - 1) / 7 + (beg >> 14)
    } else if beg >> 17 == end >> 17 {
        ((1 << 12) - 1) / 7 + (beg >> 17)
    } else if beg >> 20 == end >> 20 {
        ((1 << 9) - 1) / 7 + (beg >> 20)
    } else if beg >> 23 == end >> 23 {
        ((1 << 6) - 1) / 7 + (beg >> 23)
    } else if beg >> 26 == end >> 26 {
        1 + (beg >> 26)
    } else {
        0
    };
    bin as u16
}

fn invalid(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what)
}

fn i32_of(x: u64, what: &str) -> io::Result<i32> {
    i32::try_from(x).map_err(|_| invalid(format!("{what} {x} does not fit BAM")))
}

/// A `Z` field: tag, type, the bytes, NUL.
fn push_z(out: &mut Vec<u8>, tag: &[u8; 2], value: &[u8]) {
    out.extend_from_slice(tag);
    out.push(b'Z');
    out.extend_from_slice(value);
    out.push(0);
}

/// An `i` field, as a 32-bit integer.
fn push_i(out: &mut Vec<u8>, tag: &[u8; 2], value: i64) -> io::Result<()> {
    let v = i32::try_from(value)
        .map_err(|_| invalid(format!("{} {value} does not fit BAM", tag.escape_ascii())))?;
    out.extend_from_slice(tag);
    out.push(b'i');
    out.extend_from_slice(&v.to_le_bytes());
    Ok(())
}

/// `r` as one BAM record (block size first). Integer fields are written as
/// type `i` (32 bits), as a SAM parser that does not narrow them reads
/// them. A CIGAR of more than 65,535 operations goes to the `CG` field
/// (SAM spec §4.2.2).
pub fn push_bam(out: &mut Vec<u8>, r: &Record<'_>, rg: Option<&[u8]>) -> io::Result<()> {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    let name: &[u8] = if r.name.is_empty() { b"*" } else { r.name };
    if name.len() > 254
        || name
            .iter()
            .any(|&b| !(b'!'..=b'~').contains(&b) || b == b'@')
    {
        return Err(invalid(format!(
            "read name {} cannot be written to BAM",
            name.escape_ascii()
        )));
    }
    let refid = |p: Option<(u32, u64)>| -> io::Result<(i32, i32)> {
        match p {
            Some((c, pos)) => Ok((i32_of(u64::from(c), "contig")?, i32_of(pos, "position")?)),
            None => Ok((-1, -1)),
        }
    };
    let (ref_id, pos) = refid(r.place)?;
    out.extend_from_slice(&ref_id.to_le_bytes());
    out.extend_from_slice(&pos.to_le_bytes());
    out.push((name.len() + 1) as u8);
    out.push(r.mapq);
    let bin = match r.place {
        Some((_, p)) => {
            let span = r.cigar.span();
            reg2bin(p, p + span.max(1) - 1)
        }
        None => 4680,
    };
    out.extend_from_slice(&bin.to_le_bytes());
    let n_ops = r.cigar.len();
    let long_cigar = n_ops > usize::from(u16::MAX);
    out.extend_from_slice(&(if long_cigar { 2 } else { n_ops as u16 }).to_le_bytes());
    out.extend_from_slice(&r.flag.to_le_bytes());
    let l_seq = u32::try_from(r.seq.len()).map_err(|_| invalid("read too long".into()))?;
    out.extend_from_slice(&l_seq.to_le_bytes());
    let (next_id, next_pos) = refid(r.next)?;
    out.extend_from_slice(&next_id.to_le_bytes());
    out.extend_from_slice(&next_pos.to_le_bytes());
    let tlen = i32::try_from(r.tlen).map_err(|_| invalid(format!("TLEN {}", r.tlen)))?;
    out.extend_from_slice(&tlen.to_le_bytes());
    out.extend_from_slice(name);
    out.push(0);
    let push_ops = |out: &mut Vec<u8>| {
        r.cigar
            .for_each(|o, n| out.extend_from_slice(&((n << 4) | op_code(o)).to_le_bytes()))
    };
    if long_cigar {
        // kSmN: the read's length soft-clipped, the reference span skipped.
        let span = u32::try_from(r.cigar.span()).map_err(|_| invalid("CIGAR span".into()))?;
        out.extend_from_slice(&((l_seq << 4) | 4).to_le_bytes());
        out.extend_from_slice(&((span << 4) | 3).to_le_bytes());
    } else {
        push_ops(out);
    }
    // SEQ two bases a byte (the reverse complement for a reverse record).
    let table = &BAM_BASE[usize::from(r.rev())];
    let code = |b: &u8| table[*b as usize];
    if r.rev() {
        let mut it = r.seq.iter().rev().map(code);
        while let Some(a) = it.next() {
            out.push((a << 4) | it.next().unwrap_or(0));
        }
    } else {
        let pairs = r.seq.chunks_exact(2);
        let last = pairs.remainder().first().map(|b| code(b) << 4);
        out.extend(pairs.map(|p| (code(&p[0]) << 4) | code(&p[1])));
        out.extend(last);
    }
    match r.qual {
        Some(q) if !r.seq.is_empty() => {
            if q.len() != r.seq.len() || q.iter().any(|&b| !(b'!'..=b'~').contains(&b)) {
                return Err(invalid(format!(
                    "qualities of {} cannot be written to BAM",
                    name.escape_ascii()
                )));
            }
            if r.rev() {
                out.extend(q.iter().rev().map(|b| b - 33));
            } else {
                out.extend(q.iter().map(|b| b - 33));
            }
        }
        _ => out.extend(std::iter::repeat_n(0xff, r.seq.len())),
    }
    let t = &r.tags;
    if let Some(nm) = t.nm {
        push_i(out, b"NM", i64::from(nm))?;
    }
    if let Some(md) = t.md {
        push_z(out, b"MD", md);
    }
    if let Some(s) = t.score {
        push_i(out, b"AS", i64::from(s))?;
    }
    if let Some(s) = t.xs {
        push_i(out, b"XS", i64::from(s))?;
    }
    if let Some(x) = t.x0 {
        push_i(out, b"X0", x as i64)?;
    }
    if let Some(x) = t.x1 {
        push_i(out, b"X1", x as i64)?;
    }
    if !t.mc.is_none() {
        out.extend_from_slice(b"MCZ");
        t.mc.push_text(out);
        out.push(0);
    }
    if !t.sa.is_empty() {
        push_z(out, b"SA", t.sa);
    }
    if !t.xa.is_empty() {
        push_z(out, b"XA", t.xa);
    }
    if let Some(id) = rg {
        push_z(out, b"RG", id);
    }
    if long_cigar {
        out.extend_from_slice(b"CGBI");
        out.extend_from_slice(&(n_ops as u32).to_le_bytes());
        push_ops(out);
    }
    let size = u32::try_from(out.len() - start - 4).map_err(|_| invalid("record size".into()))?;
    out[start..start + 4].copy_from_slice(&size.to_le_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::read_fasta_from;
    use std::path::Path;

    fn layout() -> Layout {
        read_fasta_from(
            &b">chr1 x\nACGTACGTNNACGTACGTACGTACGTACGTACGT\n>chr2\nGGGGCCCCAAAATTTT\n"[..],
            Path::new("t"),
        )
        .unwrap()
        .layout
    }

    /// The BAM record noodles encodes from `line` (its SAM text), block
    /// size first: the oracle of [`push_bam`].
    fn noodles_bam(header: &noodles_sam::Header, line: &[u8]) -> Vec<u8> {
        use noodles_sam::alignment::io::Write as _;
        let mut reader = noodles_sam::io::Reader::new(line);
        let mut record = noodles_sam::Record::default();
        reader.read_record(&mut record).unwrap();
        let mut bam = noodles_bam::io::Writer::from(Vec::new());
        bam.write_alignment_record(header, &record).unwrap();
        bam.into_inner()
    }

    /// xorshift.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// Records of every shape the modes write (unmapped, placed beside a
    /// mate, forward and reverse, gapped CIGARs, mates on either contig,
    /// negative scores and TLEN, no qualities, an empty read, IUPAC and
    /// lower-case bases, every tag, `RG`): the SAM text parses with noodles,
    /// and the BAM bytes are the very ones noodles encodes from that text.
    #[test]
    fn records_as_sam_and_bam_match_noodles() {
        let l = layout();
        let mut text = crate::sam::header(&l, "fmalign map x.fa r.fq").unwrap();
        let header = noodles_sam::io::Reader::new(&text[..])
            .read_header()
            .unwrap();
        let ops: Vec<Vec<(Op, u32)>> = vec![
            vec![(Op::Match, 12)],
            vec![(Op::Soft, 2), (Op::Match, 5), (Op::Ins, 1), (Op::Match, 4)],
            vec![(Op::Match, 4), (Op::Del, 3), (Op::Match, 8), (Op::Soft, 3)],
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let bases = b"ACGTNacgtRYKM=.X";
        let mut n = 0;
        for k in 0..600u64 {
            let r = next(&mut x);
            let name = format!("r{k}_{}", "x".repeat((r % 7) as usize * (k as usize % 40)));
            let cig = &ops[(r % 3) as usize];
            let len: usize = if k % 97 == 5 {
                0
            } else {
                cig.iter()
                    .filter(|o| o.0.reads())
                    .map(|o| o.1 as usize)
                    .sum()
            };
            let seq: Vec<u8> = (0..len)
                .map(|i| bases[((r >> (i % 50)) as usize + i) % bases.len()])
                .collect();
            let qual: Vec<u8> = (0..len)
                .map(|i| b'!' + ((r >> (i % 40)) % 42) as u8)
                .collect();
            let mc_ops = &ops[((r >> 8) % 3) as usize];
            let mate = match (r >> 12) % 4 {
                0 => None,
                1 => Some(Mate {
                    flag: 0x1 | 0x40 | 0x8,
                    next: None,
                    tlen: 0,
                    mc: Cigar::None,
                }),
                2 => Some(Mate {
                    flag: 0x1 | 0x80 | 0x2 | 0x20,
                    next: Some(((r >> 20) as u32 % 2, (r >> 24) % 20)),
                    tlen: -((r >> 30) as i64 % 500),
                    mc: Cigar::Ops(mc_ops),
                }),
                _ => Some(Mate {
                    flag: 0x1 | 0x40,
                    next: Some((0, (r >> 24) % 20)),
                    tlen: (r >> 30) as i64 % 500,
                    mc: Cigar::Matched(12),
                }),
            };
            let read = ReadView {
                name: name.as_bytes(),
                seq: &seq,
                qual: (k % 5 != 0).then_some(&qual[..]),
            };
            let rec = if k % 6 == 0 {
                Record::unmapped(&read, mate)
            } else {
                let m = mate.unwrap_or_default();
                let gapped = k % 2 == 0;
                Record {
                    name: read.name,
                    flag: (if r & 1 == 1 { 16 } else { 0 })
                        | (if k % 11 == 0 { 0x100 } else { 0 })
                        | (if k % 13 == 0 { 0x800 } else { 0 })
                        | m.flag,
                    place: Some(((r >> 40) as u32 % 2, (r >> 42) % 16)),
                    mapq: (r >> 50) as u8 % 61,
                    cigar: if len == 0 {
                        Cigar::None
                    } else {
                        Cigar::Ops(cig)
                    },
                    next: m.next,
                    tlen: m.tlen,
                    seq: read.seq,
                    qual: read.qual,
                    tags: Tags {
                        nm: Some((r >> 3) as u32 % 5),
                        md: Some(b"3A4^C2"),
                        score: gapped.then_some(-((r >> 5) as i32 % 40)),
                        xs: (gapped && k % 3 == 0).then_some(-((r >> 6) as i32 % 300)),
                        x0: (!gapped).then_some((r >> 7) % 70_000),
                        x1: (!gapped && k % 3 == 0).then_some(0),
                        mc: m.mc,
                        sa: if k % 4 == 1 {
                            b"chr1,5,+,3S9M,60,0;"
                        } else {
                            b""
                        },
                        xa: if k % 5 == 1 { b"chr2,-3,12M,1;" } else { b"" },
                    },
                }
            };
            let rg: Option<&[u8]> = (k % 7 == 0).then_some(b"s1");
            let mut line = Vec::new();
            push_sam(&mut line, &rec, &l, rg);
            let mut bam = Vec::new();
            push_bam(&mut bam, &rec, rg).unwrap();
            assert!(
                bam == noodles_bam(&header, &line),
                "record {k}: BAM differs from noodles'\n{}",
                String::from_utf8_lossy(&line)
            );
            text.extend_from_slice(&line);
            n += 1;
        }
        let mut reader = noodles_sam::io::Reader::new(&text[..]);
        let h = reader.read_header().unwrap();
        let recs: Vec<_> = reader
            .record_bufs(&h)
            .collect::<std::io::Result<_>>()
            .unwrap();
        assert_eq!(recs.len(), n);
    }

    /// A read's records in SAM: an unmapped one as given, a reverse-strand
    /// one reverse-complemented (IUPAC too) with its qualities reversed.
    #[test]
    fn sam_text_of_records() {
        let l = layout();
        let read = ReadView {
            name: b"r1",
            seq: b"ACgTN",
            qual: Some(b"ABCDE"),
        };
        let mut out = Vec::new();
        let rec = Record {
            name: read.name,
            flag: 16,
            place: Some((0, 3)),
            mapq: 0,
            cigar: Cigar::Matched(5),
            next: None,
            tlen: 0,
            seq: read.seq,
            qual: read.qual,
            tags: Tags {
                nm: Some(1),
                md: Some(b"0T4"),
                x0: Some(2),
                x1: Some(0),
                xa: b"chr1,+1,5M,1;",
                ..Tags::default()
            },
        };
        push_sam(&mut out, &rec, &l, None);
        push_sam(&mut out, &Record::unmapped(&read, None), &l, Some(b"g"));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "r1\t16\tchr1\t4\t0\t5M\t*\t0\t0\tNACGT\tEDCBA\tNM:i:1\tMD:Z:0T4\tX0:i:2\tX1:i:0\tXA:Z:chr1,+1,5M,1;\n\
             r1\t4\t*\t0\t0\t*\t*\t0\t0\tACGTN\tABCDE\tRG:Z:g\n"
        );
    }

    /// A CIGAR of more than 65,535 operations goes to `CG:B:I` behind a
    /// `kSmN` placeholder, as noodles (and htslib) write it.
    #[test]
    fn long_cigar_goes_to_cg() {
        let l = layout();
        let text = crate::sam::header(&l, "fmalign").unwrap();
        let header = noodles_sam::io::Reader::new(&text[..])
            .read_header()
            .unwrap();
        let ops: Vec<(Op, u32)> = (0..70_000)
            .map(|i| {
                if i % 2 == 0 {
                    (Op::Match, 1)
                } else {
                    (Op::Ins, 1)
                }
            })
            .collect();
        let seq = vec![b'A'; 70_000];
        let rec = Record {
            name: b"long",
            flag: 0,
            place: Some((0, 0)),
            mapq: 60,
            cigar: Cigar::Ops(&ops),
            next: None,
            tlen: 0,
            seq: &seq,
            qual: None,
            tags: Tags {
                score: Some(1),
                ..Tags::default()
            },
        };
        let mut line = Vec::new();
        push_sam(&mut line, &rec, &l, None);
        let mut bam = Vec::new();
        push_bam(&mut bam, &rec, None).unwrap();
        assert!(bam == noodles_bam(&header, &line));
    }
}
