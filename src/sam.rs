//! SAM's pieces below the mapper: the header (through noodles), the read
//! group of `-R`, a gapped alignment as records show it ([`Aligned`]) and
//! its CIGAR, `XA:Z` and `SA:Z` texts. The records themselves are
//! `map::record`'s.

use std::num::NonZeroUsize;

use noodles_sam as sam;
use sam::header::record::value::map::{self, Map, Program, ReferenceSequence};

use crate::align::Op;
use crate::dna::md5_hex;
use crate::error::{Error, Result};
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

/// Appends the CIGAR text of `cigar`.
pub fn push_cigar(out: &mut Vec<u8>, cigar: &[(Op, u32)]) {
    for &(op, n) in cigar {
        push_int(out, u64::from(n));
        out.push(op.letter());
    }
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
