//! The contents of the small sections (META, CONTIGS, NAMES, HOLES), encoded and decoded side by side (`index_format/SPEC.md`).

use fmalign_index_format::{self as format, SectionId};

use crate::fm::{LINE_BASES, SUPER_LINES};
use crate::reference::{Contig, Hole, Layout};

/// Texts of at least this many bases store 64-bit positions.
pub const WIDE_THRESHOLD: u64 = u32::MAX as u64;

pub(super) const META_LEN: usize = 128;
pub(crate) const CONTIG_LEN: usize = 48;
const HOLE_LEN: usize = 24;
/// Header flag: positions are 64-bit.
pub(crate) const FLAG_WIDE: u32 = 1;

/// Decoded META section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Unambiguous bases in the text.
    pub text_len: u64,
    /// Row of `$`.
    pub primary: u64,
    /// Sum of contig lengths (ambiguous bases included).
    pub ref_len: u64,
    /// Number of contigs.
    pub contigs: u64,
    /// Number of ambiguous runs.
    pub holes: u64,
    /// SA sampling rate.
    pub sa_sample: u32,
    /// Bytes per stored position (4 or 8).
    pub pos_bytes: u32,
    /// `C[0..5]` (the same for the reversed text).
    pub c: [u64; 5],
    /// Row of `$` in the BWT of the reversed text (the mirror index).
    pub rev_primary: u64,
}

impl Meta {
    /// The META of an index of `layout` whose text has `text_len` bases:
    /// the rest comes from the FM tables of the text (`c`, `primary`) and of
    /// the reversed text (`rev_primary`) and the options.
    pub(crate) fn new(
        layout: &Layout,
        text_len: u64,
        sa_sample: u32,
        pos_bytes: u32,
        c: [u64; 5],
        primary: u64,
        rev_primary: u64,
    ) -> Meta {
        Meta {
            text_len,
            primary,
            ref_len: layout.contigs.iter().map(|c| c.len).sum(),
            contigs: layout.contigs.len() as u64,
            holes: layout.holes.len() as u64,
            sa_sample,
            pos_bytes,
            c,
            rev_primary,
        }
    }

    /// The 128 bytes of the META section.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut m = Vec::with_capacity(META_LEN);
        for x in [
            self.text_len,
            self.primary,
            self.ref_len,
            self.contigs,
            self.holes,
        ] {
            m.extend_from_slice(&x.to_le_bytes());
        }
        m.extend_from_slice(&self.sa_sample.to_le_bytes());
        m.extend_from_slice(&self.pos_bytes.to_le_bytes());
        for x in self.c {
            m.extend_from_slice(&x.to_le_bytes());
        }
        m.extend_from_slice(&(LINE_BASES as u32).to_le_bytes());
        m.extend_from_slice(&(SUPER_LINES as u32).to_le_bytes());
        m.extend_from_slice(&self.rev_primary.to_le_bytes());
        m.resize(META_LEN, 0);
        m
    }

    pub(super) fn decode(b: &[u8]) -> std::result::Result<Meta, String> {
        if b.len() != META_LEN {
            return Err(format!(
                "meta section has {} bytes, expected {META_LEN}",
                b.len()
            ));
        }
        let u64_at = |k: usize| u64::from_le_bytes(b[k..k + 8].try_into().expect("8"));
        let u32_at = |k: usize| u32::from_le_bytes(b[k..k + 4].try_into().expect("4"));
        if u32_at(88) as u64 != LINE_BASES || u32_at(92) as u64 != SUPER_LINES {
            return Err("unsupported Occ line geometry".into());
        }
        if b[104..].iter().any(|&x| x != 0) {
            return Err("reserved meta bytes are not zero".into());
        }
        Ok(Meta {
            text_len: u64_at(0),
            primary: u64_at(8),
            ref_len: u64_at(16),
            contigs: u64_at(24),
            holes: u64_at(32),
            sa_sample: u32_at(40),
            pos_bytes: u32_at(44),
            c: [u64_at(48), u64_at(56), u64_at(64), u64_at(72), u64_at(80)],
            rev_primary: u64_at(96),
        })
    }
}

/// The CONTIGS, NAMES and HOLES sections.
pub(crate) fn encode_layout(layout: &Layout) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let mut contigs = Vec::with_capacity(layout.contigs.len() * CONTIG_LEN);
    let mut names = Vec::new();
    for c in &layout.contigs {
        for x in [
            names.len() as u64,
            c.name.len() as u64,
            c.len,
            c.text_offset,
        ] {
            contigs.extend_from_slice(&x.to_le_bytes());
        }
        contigs.extend_from_slice(&c.md5);
        names.extend_from_slice(c.name.as_bytes());
    }
    let mut holes = Vec::with_capacity(layout.holes.len() * HOLE_LEN);
    for h in &layout.holes {
        holes.extend_from_slice(&h.contig.to_le_bytes());
        holes.extend_from_slice(&0u32.to_le_bytes());
        holes.extend_from_slice(&h.start.to_le_bytes());
        holes.extend_from_slice(&h.len.to_le_bytes());
    }
    (contigs, names, holes)
}

pub(super) fn decode_layout(
    c: &format::Container,
    file: &[u8],
    meta: &Meta,
) -> std::result::Result<Layout, String> {
    let contigs = c.bytes(file, SectionId::Contigs);
    let names = c.bytes(file, SectionId::Names);
    let holes = c.bytes(file, SectionId::Holes);
    // Checked: the counts come from the file (a crafted one could overflow).
    if meta.contigs.checked_mul(CONTIG_LEN as u64) != Some(contigs.len() as u64)
        || meta.holes.checked_mul(HOLE_LEN as u64) != Some(holes.len() as u64)
    {
        return Err("contig or ambiguous-run table has the wrong size".into());
    }
    let u64_at = |b: &[u8], k: usize| u64::from_le_bytes(b[k..k + 8].try_into().expect("8"));
    let mut layout = Layout::default();
    for rec in contigs.chunks_exact(CONTIG_LEN) {
        let (off, len) = (u64_at(rec, 0), u64_at(rec, 8));
        let name = off
            .checked_add(len)
            .filter(|&end| end <= names.len() as u64 && len > 0)
            .and_then(|end| std::str::from_utf8(&names[off as usize..end as usize]).ok())
            .ok_or("contig name out of range")?;
        layout.contigs.push(Contig {
            name: name.to_owned(),
            len: u64_at(rec, 16),
            text_offset: u64_at(rec, 24),
            md5: rec[32..48].try_into().expect("16"),
        });
    }
    for rec in holes.chunks_exact(HOLE_LEN) {
        layout.holes.push(Hole {
            contig: u32::from_le_bytes(rec[0..4].try_into().expect("4")),
            start: u64_at(rec, 8),
            len: u64_at(rec, 16),
        });
    }
    Ok(layout)
}
