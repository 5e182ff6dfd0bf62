//! SAM output: the header through noodles, records through a small
//! hand-written formatter (one `Vec<u8>` per batch chunk, no per-field
//! allocation). noodles parses every record the formatter writes in the tests,
//! which keeps it honest (see `tests/cli.rs` and the tests below).

use std::num::NonZeroUsize;

use noodles_sam as sam;
use sam::header::record::value::map::{self, Map, Program, ReferenceSequence};

use crate::align::Op;
use crate::dna::{self, COMPLEMENT, md5_hex, packed_base};
use crate::error::{Error, Result};
use crate::read::{Hit, ReadView};
use crate::reference::Layout;

/// MAPQ of a read with exactly one exact hit: bwa aln's value for a unique
/// best hit. Reads with several hits get 0. (Exact mode does not look for
/// inexact hits, so it cannot grade a unique hit further.)
pub const MAPQ_UNIQUE: u8 = 37;

/// A read group (`-R`): the `@RG` header line as given (tabs resolved) and
/// its ID, which every record carries as `RG:Z`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadGroup {
    /// The header line, without a newline.
    pub line: String,
    /// Its `ID` field.
    pub id: String,
}

impl ReadGroup {
    /// Parses bwa's `-R` syntax: `@RG\tID:s1\tSM:a`, where `\t` (a
    /// backslash and a t) or a literal tab separates fields. Errors say
    /// why: not starting with `@RG`, no `ID`, an empty or repeated field
    /// tag, a newline.
    pub fn parse(s: &str) -> std::result::Result<ReadGroup, String> {
        if s.contains(['\n', '\r']) || s.contains("\\n") {
            return Err(format!(
                "read group '{s}' holds a newline; it must be one header line"
            ));
        }
        let line = s.replace("\\t", "\t");
        let mut fields = line.split('\t');
        if fields.next() != Some("@RG") {
            return Err(format!(
                "read group '{s}' must start with @RG and a tab (\\t), as '@RG\\tID:s1\\tSM:a'"
            ));
        }
        let mut id = None;
        let mut seen = Vec::new();
        for f in fields {
            let ok = f.len() > 3
                && f.as_bytes()[2] == b':'
                && f[..2].chars().all(|c| c.is_ascii_alphanumeric());
            if !ok {
                return Err(format!("read group '{s}': field {f:?} is not TAG:VALUE"));
            }
            if seen.contains(&&f[..2]) {
                return Err(format!("read group '{s}': tag {} appears twice", &f[..2]));
            }
            seen.push(&f[..2]);
            if &f[..2] == "ID" {
                id = Some(f[3..].to_owned());
            }
        }
        let id = id.ok_or_else(|| format!("read group '{s}' has no ID field (ID:...)"))?;
        Ok(ReadGroup { line, id })
    }
}

/// Inserts `line` (an `@RG` line) before the first `@PG` line of a SAM
/// header's text.
pub fn insert_header_line(header: &mut Vec<u8>, line: &str) {
    let at = header
        .windows(4)
        .position(|w| w == b"\n@PG")
        .map_or(header.len(), |p| p + 1);
    let mut l = line.as_bytes().to_vec();
    l.push(b'\n');
    header.splice(at..at, l);
}

/// The SAM header: `@HD VN:1.6 SO:unsorted`, one `@SQ` per contig with
/// `SN`, `LN` and `M5`, and `@PG` with `ID`, `PN`, `VN` and `CL`.
pub fn header(layout: &Layout, command_line: &str) -> Result<Vec<u8>> {
    let mut hd = Map::<map::Header>::new(map::header::Version::new(1, 6));
    hd.other_fields_mut()
        .insert(map::header::tag::SORT_ORDER, "unsorted".into());
    let mut builder = sam::Header::builder().set_header(hd);
    for c in &layout.contigs {
        let len = NonZeroUsize::new(c.len as usize)
            .ok_or_else(|| Error::Usage(format!("contig {} is empty", c.name)))?;
        let mut sq = Map::<ReferenceSequence>::new(len);
        sq.other_fields_mut().insert(
            map::reference_sequence::tag::MD5_CHECKSUM,
            md5_hex(&c.md5).into(),
        );
        builder = builder.add_reference_sequence(c.name.as_str(), sq);
    }
    let mut pg = Map::<Program>::default();
    let f = pg.other_fields_mut();
    f.insert(map::program::tag::NAME, "fmalign".into());
    f.insert(map::program::tag::VERSION, env!("CARGO_PKG_VERSION").into());
    // noodles writes header values of printable ASCII only (SAM allows
    // UTF-8 in CL): controls become spaces, anything else outside ASCII
    // (U+FFFD for bytes that were not UTF-8 included) a '?'.
    let cl: String = command_line
        .chars()
        .map(|c| match c {
            c if c.is_control() => ' ',
            c if !c.is_ascii() => '?',
            c => c,
        })
        .collect();
    f.insert(map::program::tag::COMMAND_LINE, cl.into());
    let header = builder.add_program("fmalign", pg).build();
    let mut w = sam::io::Writer::new(Vec::new());
    w.write_header(&header)
        .map_err(|e| Error::io("<sam header>", e))?;
    Ok(w.into_inner())
}

fn push_int(out: &mut Vec<u8>, x: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(x).as_bytes());
}

fn push_seq_qual(out: &mut Vec<u8>, read: &ReadView<'_>, rev: bool) {
    if read.seq.is_empty() {
        out.extend_from_slice(b"*\t*");
        return;
    }
    if rev {
        out.extend(dna::reverse_complement_ascii(read.seq).map(|b| dna::SAM_SEQ[b as usize]));
    } else {
        out.extend(read.seq.iter().map(|&b| dna::SAM_SEQ[b as usize]));
    }
    out.push(b'\t');
    match read.qual {
        Some(q) if rev => out.extend(q.iter().rev()),
        Some(q) => out.extend_from_slice(q),
        None => out.push(b'*'),
    }
}

fn push_name(out: &mut Vec<u8>, name: &[u8]) {
    if name.is_empty() {
        out.push(b'*');
    } else {
        out.extend_from_slice(name);
    }
}

/// Writes an unmapped record (flag 4, SEQ and QUAL as given; SEQ as
/// [`dna::SAM_SEQ`] has it).
pub fn push_unmapped(out: &mut Vec<u8>, read: &ReadView<'_>) {
    push_name(out, read.name);
    out.extend_from_slice(b"\t4\t*\t0\t0\t*\t*\t0\t0\t");
    push_seq_qual(out, read, false);
    out.push(b'\n');
}

/// What goes on one mapped record besides the hit itself.
#[derive(Clone, Copy, Debug)]
pub struct MappedFields<'a> {
    /// Flag 0x100.
    pub secondary: bool,
    /// MAPQ.
    pub mapq: u8,
    /// X0: number of best hits.
    pub hits: usize,
    /// X1: number of hits in the next stratum (written when `Some`).
    pub suboptimal: Option<usize>,
    /// Alternatives for XA (empty: no XA tag).
    pub xa: &'a [Hit],
}

/// The fields that tie a paired read to its mate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MateFields<'a> {
    /// Pair flag bits: 0x1, 0x2, 0x8, 0x20, 0x40, 0x80.
    pub flag: u16,
    /// The mate's contig (`None`: `*`).
    pub contig: Option<u32>,
    /// The mate's 0-based position (written 1-based; 0 when `contig` is None).
    pub pos: u64,
    /// TLEN.
    pub tlen: i64,
    /// The mate's CIGAR, written as `MC:Z` (as bwa mem does; Picard and
    /// `samtools markdup` read it); none for an unmapped mate.
    pub cigar: MateCigar<'a>,
}

/// The CIGAR of a read's mate, for `MC:Z`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MateCigar<'a> {
    /// The mate is unmapped: no tag.
    #[default]
    None,
    /// `{len}M` (an ungapped hit).
    Matched(u64),
    /// A gapped alignment's CIGAR.
    Ops(&'a [(Op, u32)]),
}

/// `\tMC:Z:<the mate's CIGAR>` when the record has a mapped mate.
fn push_mate_cigar(out: &mut Vec<u8>, mate: Option<&MateFields<'_>>) {
    match mate.map(|m| m.cigar) {
        Some(MateCigar::Matched(len)) => {
            out.extend_from_slice(b"\tMC:Z:");
            push_int(out, len);
            out.push(b'M');
        }
        Some(MateCigar::Ops(ops)) => {
            out.extend_from_slice(b"\tMC:Z:");
            push_cigar(out, ops);
        }
        Some(MateCigar::None) | None => {}
    }
}

/// RNEXT, PNEXT and TLEN (with their tabs) for a record on `own` contig.
fn push_mate(out: &mut Vec<u8>, mate: Option<&MateFields<'_>>, own: Option<u32>, layout: &Layout) {
    match mate {
        Some(&MateFields {
            contig: Some(c),
            pos,
            tlen,
            ..
        }) => {
            if Some(c) == own {
                out.extend_from_slice(b"\t=\t");
            } else {
                out.push(b'\t');
                out.extend_from_slice(layout.contigs[c as usize].name.as_bytes());
                out.push(b'\t');
            }
            push_int(out, pos + 1);
            out.push(b'\t');
            out.extend_from_slice(itoa::Buffer::new().format(tlen).as_bytes());
            out.push(b'\t');
        }
        _ => out.extend_from_slice(b"\t*\t0\t0\t"),
    }
}

/// Appends an unmapped read of a pair: placed at `place` (its mapped mate's
/// contig and 0-based position) when there is one, as SAM recommends, so
/// that it sorts beside its mate.
pub fn push_unmapped_mate(
    out: &mut Vec<u8>,
    read: &ReadView<'_>,
    mate: &MateFields<'_>,
    place: Option<(u32, u64)>,
    layout: &Layout,
) {
    push_name(out, read.name);
    out.push(b'\t');
    push_int(out, u64::from(4 | mate.flag));
    out.push(b'\t');
    match place {
        Some((c, p)) => {
            out.extend_from_slice(layout.contigs[c as usize].name.as_bytes());
            out.push(b'\t');
            push_int(out, p + 1);
        }
        None => out.extend_from_slice(b"*\t0"),
    }
    out.extend_from_slice(b"\t0\t*");
    push_mate(out, Some(mate), place.map(|p| p.0), layout);
    push_seq_qual(out, read, false);
    push_mate_cigar(out, Some(mate));
    out.push(b'\n');
}

/// MD:Z of `hit` (no indels): matching-run lengths between the reference
/// bases of the mismatches, `pac` the 2-bit text.
fn push_md(out: &mut Vec<u8>, read: &ReadView<'_>, hit: &Hit, pac: &[u8]) {
    let len = read.seq.len();
    let mut run = 0u64;
    for i in 0..len {
        // SEQ as written: the read, or its reverse complement.
        let b = if hit.rev {
            COMPLEMENT[read.seq[len - 1 - i] as usize]
        } else {
            read.seq[i]
        };
        let r = packed_base(pac, hit.text_pos + i as u64);
        if dna::code(b) == r {
            run += 1;
        } else {
            push_int(out, run);
            out.push(b"ACGT"[r as usize]);
            run = 0;
        }
    }
    push_int(out, run);
}

/// Writes a mapped record: CIGAR `{len}M` (substitutions only), NM:i, MD:Z,
/// X0:i, X1:i, XA:Z. `pac` is the index's 2-bit text.
pub fn push_mapped(
    out: &mut Vec<u8>,
    read: &ReadView<'_>,
    hit: &Hit,
    f: MappedFields<'_>,
    mate: Option<&MateFields<'_>>,
    layout: &Layout,
    pac: &[u8],
) {
    let len = read.seq.len() as u64;
    push_name(out, read.name);
    out.push(b'\t');
    push_int(
        out,
        (if hit.rev { 16 } else { 0 })
            | (if f.secondary { 256 } else { 0 })
            | u64::from(mate.map_or(0, |m| m.flag)),
    );
    out.push(b'\t');
    out.extend_from_slice(layout.contigs[hit.contig as usize].name.as_bytes());
    out.push(b'\t');
    push_int(out, hit.pos + 1);
    out.push(b'\t');
    push_int(out, f.mapq as u64);
    out.push(b'\t');
    push_int(out, len);
    out.push(b'M');
    push_mate(out, mate, Some(hit.contig), layout);
    push_seq_qual(out, read, hit.rev);
    out.extend_from_slice(b"\tNM:i:");
    push_int(out, hit.nm as u64);
    out.extend_from_slice(b"\tMD:Z:");
    push_md(out, read, hit, pac);
    out.extend_from_slice(b"\tX0:i:");
    push_int(out, f.hits as u64);
    if let Some(x1) = f.suboptimal {
        out.extend_from_slice(b"\tX1:i:");
        push_int(out, x1 as u64);
    }
    push_mate_cigar(out, mate);
    if !f.xa.is_empty() {
        out.extend_from_slice(b"\tXA:Z:");
        for h in f.xa {
            out.extend_from_slice(layout.contigs[h.contig as usize].name.as_bytes());
            out.extend_from_slice(if h.rev { b",-" } else { b",+" });
            push_int(out, h.pos + 1);
            out.push(b',');
            push_int(out, len);
            out.extend_from_slice(b"M,");
            push_int(out, h.nm as u64);
            out.push(b';');
        }
    }
    out.push(b'\n');
}

/// One gapped alignment of a read (`--end-to-end`, `--local`) as a record
/// shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aligned {
    /// Contig index.
    pub contig: u32,
    /// 0-based leftmost aligned reference base.
    pub pos: u64,
    /// Reverse strand.
    pub rev: bool,
    /// Alignment score (AS).
    pub score: i32,
    /// CIGAR of SEQ as written (soft clips included).
    pub cigar: Vec<(Op, u32)>,
    /// NM.
    pub nm: u32,
    /// MD:Z.
    pub md: Vec<u8>,
}

impl Aligned {
    /// Reference bases covered.
    pub fn span(&self) -> u64 {
        crate::align::ref_span(&self.cigar)
    }

    /// One past the last reference base covered.
    pub fn end(&self) -> u64 {
        self.pos + self.span()
    }
}

/// What goes on a gapped record besides the alignment.
#[derive(Clone, Copy, Debug, Default)]
pub struct AlignedFields<'a> {
    /// Flag bits besides strand and pair: 0x100 or 0x800.
    pub flag: u16,
    /// MAPQ.
    pub mapq: u8,
    /// XS:i, the best score of another alignment.
    pub xs: Option<i32>,
    /// SA:Z (the other parts of a chimeric read), without the tag.
    pub sa: &'a [u8],
    /// XA:Z (alternative alignments), without the tag.
    pub xa: &'a [u8],
}

/// Appends the CIGAR text of `cigar`.
pub fn push_cigar(out: &mut Vec<u8>, cigar: &[(Op, u32)]) {
    for &(op, n) in cigar {
        push_int(out, u64::from(n));
        out.push(op.letter());
    }
}

/// Writes a gapped record: CIGAR with M/I/D/S, NM:i, MD:Z, AS:i, XS:i, SA:Z,
/// XA:Z.
pub fn push_aligned(
    out: &mut Vec<u8>,
    read: &ReadView<'_>,
    a: &Aligned,
    f: AlignedFields<'_>,
    mate: Option<&MateFields<'_>>,
    layout: &Layout,
) {
    push_name(out, read.name);
    out.push(b'\t');
    push_int(
        out,
        u64::from(if a.rev { 16 } else { 0 } | f.flag | mate.map_or(0, |m| m.flag)),
    );
    out.push(b'\t');
    out.extend_from_slice(layout.contigs[a.contig as usize].name.as_bytes());
    out.push(b'\t');
    push_int(out, a.pos + 1);
    out.push(b'\t');
    push_int(out, u64::from(f.mapq));
    out.push(b'\t');
    push_cigar(out, &a.cigar);
    push_mate(out, mate, Some(a.contig), layout);
    push_seq_qual(out, read, a.rev);
    out.extend_from_slice(b"\tNM:i:");
    push_int(out, u64::from(a.nm));
    out.extend_from_slice(b"\tMD:Z:");
    out.extend_from_slice(&a.md);
    out.extend_from_slice(b"\tAS:i:");
    out.extend_from_slice(itoa::Buffer::new().format(a.score).as_bytes());
    if let Some(xs) = f.xs {
        out.extend_from_slice(b"\tXS:i:");
        out.extend_from_slice(itoa::Buffer::new().format(xs).as_bytes());
    }
    push_mate_cigar(out, mate);
    if !f.sa.is_empty() {
        out.extend_from_slice(b"\tSA:Z:");
        out.extend_from_slice(f.sa);
    }
    if !f.xa.is_empty() {
        out.extend_from_slice(b"\tXA:Z:");
        out.extend_from_slice(f.xa);
    }
    out.push(b'\n');
}

/// One XA:Z entry (`rname,±pos,CIGAR,NM;`, bwa mem's) for alignment `a`.
pub fn push_xa_entry(out: &mut Vec<u8>, a: &Aligned, layout: &Layout) {
    out.extend_from_slice(layout.contigs[a.contig as usize].name.as_bytes());
    out.extend_from_slice(if a.rev { b",-" } else { b",+" });
    push_int(out, a.pos + 1);
    out.push(b',');
    push_cigar(out, &a.cigar);
    out.push(b',');
    push_int(out, u64::from(a.nm));
    out.push(b';');
}

/// One SA:Z entry (`rname,pos,strand,CIGAR,mapQ,NM;`) for alignment `a`.
pub fn push_sa_entry(out: &mut Vec<u8>, a: &Aligned, mapq: u8, layout: &Layout) {
    out.extend_from_slice(layout.contigs[a.contig as usize].name.as_bytes());
    out.push(b',');
    push_int(out, a.pos + 1);
    out.extend_from_slice(if a.rev { b",-," } else { b",+," });
    push_cigar(out, &a.cigar);
    out.push(b',');
    push_int(out, u64::from(mapq));
    out.push(b',');
    push_int(out, u64::from(a.nm));
    out.push(b';');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::read_fasta_from;
    use std::path::Path;

    fn layout() -> Layout {
        read_fasta_from(&b">chr1 x\nACGTACGTNN\n>chr2\nGGGG\n"[..], Path::new("t"))
            .unwrap()
            .layout
    }

    #[test]
    fn header_and_records_parse_with_noodles() {
        let l = layout();
        let mut text = header(&l, "fmalign map x.fa r.fq").unwrap();
        let hd = String::from_utf8(text.clone()).unwrap();
        assert!(
            hd.starts_with("@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:chr1\tLN:10\tM5:"),
            "{hd}"
        );
        assert!(hd.contains("@PG\tID:fmalign\tPN:fmalign\tVN:"));
        let read = ReadView {
            name: b"r1",
            seq: b"ACgTN",
            qual: Some(b"ABCDE"),
        };
        // Text: ACGTACGT (chr1 without its Ns) then GGGG (chr2).
        let pac = dna::pack(&[0, 1, 2, 3, 0, 1, 2, 3, 2, 2, 2, 2]);
        let hits = [
            Hit {
                nm: 1,
                contig: 0,
                pos: 3,
                rev: true,
                text_pos: 3,
            },
            Hit {
                nm: 1,
                contig: 0,
                pos: 0,
                rev: false,
                text_pos: 0,
            },
        ];
        push_mapped(
            &mut text,
            &read,
            &hits[0],
            MappedFields {
                secondary: false,
                mapq: 0,
                hits: 2,
                suboptimal: Some(0),
                xa: &hits[1..],
            },
            None,
            &l,
            &pac,
        );
        push_mapped(
            &mut text,
            &read,
            &hits[1],
            MappedFields {
                secondary: true,
                mapq: 0,
                hits: 2,
                suboptimal: None,
                xa: &[],
            },
            None,
            &l,
            &pac,
        );
        push_unmapped(
            &mut text,
            &ReadView {
                name: b"",
                seq: b"",
                qual: None,
            },
        );
        let s = String::from_utf8(text.clone()).unwrap();
        assert!(
            s.contains(
                "r1\t16\tchr1\t4\t0\t5M\t*\t0\t0\tNACGT\tEDCBA\tNM:i:1\tMD:Z:0T4\tX0:i:2\tX1:i:0\tXA:Z:chr1,+1,5M,1;\n"
            ),
            "{s}"
        );
        assert!(
            s.contains(
                "r1\t256\tchr1\t1\t0\t5M\t*\t0\t0\tACGTN\tABCDE\tNM:i:1\tMD:Z:4A0\tX0:i:2\n"
            ),
            "{s}"
        );
        let mut reader = sam::io::Reader::new(&text[..]);
        let h = reader.read_header().unwrap();
        let recs: Vec<_> = reader
            .record_bufs(&h)
            .collect::<std::io::Result<_>>()
            .unwrap();
        assert_eq!(recs.len(), 3);
        assert!(recs[0].flags().is_reverse_complemented());
        assert_eq!(recs[0].alignment_start().map(usize::from), Some(4));
        assert!(recs[1].flags().is_secondary());
        assert!(recs[2].flags().is_unmapped());
        let _ = recs[0].name();
    }
}
