//! The `.fmi` container: a 64-byte header, a section table and 64-byte aligned,
//! CRC-32 checked sections. `SPEC.md` beside this crate is the byte-level
//! specification; this file is its executable mirror (`write` and `read` field by
//! field). What the sections mean is the business of the `fmalign` crate.
//!
//! Three ways to write the same bytes: [`write()`] takes every section in
//! memory; [`StreamWriter`] takes the section lengths up front and the bytes
//! as they are produced, any section after any other, so that no section
//! need be held whole (the bounded-memory build); [`plan`] gives the header
//! and offsets to writers that place the sections themselves (several
//! processes writing one file).

use std::fmt;
use std::io::{self, Write};

mod stream;
pub use stream::{STREAM_BUFFER, StreamWriter, WriteAt};

/// The first eight bytes of every index file.
pub const MAGIC: [u8; 8] = *b"FMALIGN\0";
/// Version of the byte layout described by SPEC.md; bumped on any change.
pub const FORMAT_VERSION: u32 = 3;
/// Written in the writer's native byte order, like the bulk sections (OCC,
/// OCC_SUPER, SSA, REV_OCC, REV_OCC_SUPER), which are used straight from an mmap: it reads back as
/// this value only on a machine of the same byte order (every supported
/// platform is little-endian).
pub const ENDIAN_CHECK: u32 = 0x0A0B_0C0D;
/// Every section starts at a multiple of this (one cache line).
pub const ALIGN: u64 = 64;
/// Size of the fixed header.
pub const HEADER_LEN: u64 = 64;
/// Size of one section-table entry.
pub const ENTRY_LEN: u64 = 32;

/// The sections of a version-2 index, in the order they are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum SectionId {
    /// Fixed-size parameters: text length, primary row, C array, sampling.
    Meta = 1,
    /// One fixed-size record per contig.
    Contigs = 2,
    /// Contig names, concatenated.
    Names = 3,
    /// Maximal runs of ambiguous bases.
    Holes = 4,
    /// The unambiguous bases, 2 bits each.
    Pac = 5,
    /// BWT interleaved with occurrence counts, 64-byte lines.
    Occ = 6,
    /// 64-bit superblock counts for the Occ lines.
    OccSuper = 7,
    /// Sampled suffix array.
    Ssa = 8,
    /// BWT of the reversed text interleaved with occurrence counts (the
    /// mirror index of bidirectional search), 64-byte lines.
    RevOcc = 9,
    /// 64-bit superblock counts for the reversed text's Occ lines.
    RevOccSuper = 10,
}

impl SectionId {
    /// All sections of a version-2 file, in file order.
    pub const ALL: [SectionId; 10] = [
        SectionId::Meta,
        SectionId::Contigs,
        SectionId::Names,
        SectionId::Holes,
        SectionId::Pac,
        SectionId::Occ,
        SectionId::OccSuper,
        SectionId::Ssa,
        SectionId::RevOcc,
        SectionId::RevOccSuper,
    ];

    /// Lower-case name used in messages and `fmalign info`.
    pub fn name(self) -> &'static str {
        match self {
            SectionId::Meta => "meta",
            SectionId::Contigs => "contigs",
            SectionId::Names => "names",
            SectionId::Holes => "holes",
            SectionId::Pac => "pac",
            SectionId::Occ => "occ",
            SectionId::OccSuper => "occ_super",
            SectionId::Ssa => "ssa",
            SectionId::RevOcc => "rev_occ",
            SectionId::RevOccSuper => "rev_occ_super",
        }
    }
}

impl fmt::Display for SectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What can be wrong with a file that claims to be an index.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// Shorter than the header, or shorter than the header says.
    #[error("truncated: {len} bytes, expected at least {expected}")]
    Truncated {
        /// Bytes present.
        len: u64,
        /// Bytes the header or table require.
        expected: u64,
    },
    /// Does not start with `FMALIGN\0`.
    #[error("not an fmalign index (bad magic bytes)")]
    BadMagic,
    /// Written on a machine of the other byte order.
    #[error("byte order mismatch: the index was written on a big-endian machine or is damaged")]
    Endianness,
    /// Another format version.
    #[error(
        "unsupported index format version {found}, expected {FORMAT_VERSION}; rebuild it with `fmalign index`"
    )]
    Version {
        /// The version in the file.
        found: u32,
    },
    /// Header fields or the section table disagree with themselves.
    #[error("damaged header: {0}")]
    Header(&'static str),
    /// Header CRC does not match.
    #[error("damaged header (checksum mismatch)")]
    HeaderChecksum,
    /// A section entry points outside the file, overlaps or is misaligned.
    #[error("damaged section table: section {section} {what}")]
    Bounds {
        /// Which section.
        section: SectionId,
        /// What is wrong.
        what: &'static str,
    },
    /// The table does not list the expected sections in order.
    #[error("damaged section table: entry {index} has id {found}, expected {expected}")]
    Layout {
        /// Entry number.
        index: usize,
        /// Id found.
        found: u32,
        /// Id expected.
        expected: SectionId,
    },
    /// A section's CRC does not match its bytes.
    #[error(
        "damaged section {section}: checksum mismatch (stored {stored:08x}, computed {computed:08x})"
    )]
    Checksum {
        /// Which section.
        section: SectionId,
        /// CRC in the table.
        stored: u32,
        /// CRC of the bytes.
        computed: u32,
    },
}

/// One entry of the section table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    /// Which section.
    pub id: SectionId,
    /// Byte offset from the start of the file (multiple of [`ALIGN`]).
    pub offset: u64,
    /// Length in bytes (without padding).
    pub len: u64,
    /// CRC-32 (ISO-HDLC, as zlib) of the section's bytes.
    pub crc32: u32,
}

fn align_up(x: u64) -> u64 {
    x.div_ceil(ALIGN) * ALIGN
}

fn table_len() -> u64 {
    SectionId::ALL.len() as u64 * ENTRY_LEN
}

/// Lays out the sections: returns the table for the given section lengths and
/// checksums, in [`SectionId::ALL`] order, and the total file length.
fn layout(parts: &[(u64, u32)]) -> (Vec<Section>, u64) {
    let mut offset = align_up(HEADER_LEN + table_len());
    let mut table = Vec::with_capacity(parts.len());
    for (&id, &(len, crc32)) in SectionId::ALL.iter().zip(parts) {
        table.push(Section {
            id,
            offset,
            len,
            crc32,
        });
        offset = align_up(offset + len);
    }
    (table, offset)
}

fn encode_header(flags: u32, file_len: u64, table: &[Section]) -> Vec<u8> {
    let mut t = Vec::with_capacity(table.len() * ENTRY_LEN as usize);
    for s in table {
        t.extend_from_slice(&(s.id as u32).to_le_bytes());
        t.extend_from_slice(&0u32.to_le_bytes());
        t.extend_from_slice(&s.offset.to_le_bytes());
        t.extend_from_slice(&s.len.to_le_bytes());
        t.extend_from_slice(&s.crc32.to_le_bytes());
        t.extend_from_slice(&0u32.to_le_bytes());
    }
    let mut h = Vec::with_capacity(HEADER_LEN as usize + t.len());
    h.extend_from_slice(&MAGIC);
    h.extend_from_slice(&ENDIAN_CHECK.to_ne_bytes());
    h.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    h.extend_from_slice(&flags.to_le_bytes());
    h.extend_from_slice(&(table.len() as u32).to_le_bytes());
    h.extend_from_slice(&file_len.to_le_bytes());
    h.extend_from_slice(&crc32fast::hash(&t).to_le_bytes());
    let header_crc = crc32fast::hash(&h);
    h.extend_from_slice(&header_crc.to_le_bytes());
    h.resize(HEADER_LEN as usize, 0);
    h.extend_from_slice(&t);
    h
}

/// The first bytes of a file whose sections have the given `(len, crc32)` in
/// [`SectionId::ALL`] order: header and section table (up to the first
/// section), with the table and the file length. For writers that place the
/// sections themselves (several processes writing one file); the bytes
/// between and after sections are zero. [`write()`] is this plus the sections.
pub fn plan(flags: u32, parts: &[(u64, u32)]) -> (Vec<u8>, Vec<Section>, u64) {
    assert_eq!(parts.len(), SectionId::ALL.len(), "one entry per section");
    let (table, file_len) = layout(parts);
    let head = encode_header(flags, file_len, &table);
    (head, table, file_len)
}

/// Recomputes every CRC of `file` in place — each section's (for table
/// entries that lie inside the file), the table's and the header's — so that
/// a file edited on purpose passes the checksum checks and reaches the
/// structural ones behind them. For tests and fuzzing; returns `false` (and
/// changes nothing) when the file is too short to hold a header and table.
pub fn reseal(file: &mut [u8]) -> bool {
    let table_end = (HEADER_LEN + table_len()) as usize;
    if file.len() < table_end {
        return false;
    }
    for k in 0..SectionId::ALL.len() {
        let e = HEADER_LEN as usize + k * ENTRY_LEN as usize;
        let word = |at: usize| u64::from_le_bytes(file[at..at + 8].try_into().unwrap());
        let (offset, len) = (word(e + 8), word(e + 16));
        let end = offset.checked_add(len);
        if let Some(end) = end.filter(|&end| end <= file.len() as u64) {
            let crc = crc32fast::hash(&file[offset as usize..end as usize]);
            file[e + 24..e + 28].copy_from_slice(&crc.to_le_bytes());
        }
    }
    let t = crc32fast::hash(&file[HEADER_LEN as usize..table_end]);
    file[32..36].copy_from_slice(&t.to_le_bytes());
    let h = crc32fast::hash(&file[..36]);
    file[36..40].copy_from_slice(&h.to_le_bytes());
    true
}

/// Writes a complete index: `flags` and the sections' bytes in
/// [`SectionId::ALL`] order. Returns the number of bytes written.
pub fn write<W: Write>(mut out: W, flags: u32, sections: &[&[u8]]) -> io::Result<u64> {
    assert_eq!(
        sections.len(),
        SectionId::ALL.len(),
        "one slice per section"
    );
    let parts: Vec<(u64, u32)> = sections
        .iter()
        .map(|s| (s.len() as u64, crc32fast::hash(s)))
        .collect();
    let (table, file_len) = layout(&parts);
    let head = encode_header(flags, file_len, &table);
    out.write_all(&head)?;
    let mut pos = head.len() as u64;
    let zeros = [0u8; ALIGN as usize];
    for (s, bytes) in table.iter().zip(sections) {
        out.write_all(&zeros[..(s.offset - pos) as usize])?;
        out.write_all(bytes)?;
        pos = s.offset + s.len;
    }
    out.write_all(&zeros[..(file_len - pos) as usize])?;
    Ok(file_len)
}

/// A validated index: header fields and the section table.
#[derive(Clone, Debug)]
pub struct Container {
    /// Header flags (meaning defined by SPEC.md).
    pub flags: u32,
    /// File length recorded in the header.
    pub file_len: u64,
    /// The section table, in [`SectionId::ALL`] order.
    pub sections: Vec<Section>,
}

impl Container {
    /// The bytes of one section inside `file`.
    pub fn bytes<'a>(&self, file: &'a [u8], id: SectionId) -> &'a [u8] {
        let s = self.section(id);
        &file[s.offset as usize..(s.offset + s.len) as usize]
    }

    /// The table entry of one section.
    pub fn section(&self, id: SectionId) -> &Section {
        &self.sections[SectionId::ALL
            .iter()
            .position(|&x| x == id)
            .expect("known id")]
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Validates the header and section table (magic, byte order, version,
/// checksums of header and table, bounds, alignment, order). With
/// `verify_sections`, also checks every section's CRC-32.
pub fn read(file: &[u8], verify_sections: bool) -> Result<Container, Error> {
    let len = file.len() as u64;
    if len < 8 || file[..8] != MAGIC {
        if len < 8 && MAGIC.starts_with(file) && !file.is_empty() {
            return Err(Error::Truncated {
                len,
                expected: HEADER_LEN,
            });
        }
        return Err(Error::BadMagic);
    }
    if len < HEADER_LEN {
        return Err(Error::Truncated {
            len,
            expected: HEADER_LEN,
        });
    }
    let endian = u32::from_ne_bytes(file[8..12].try_into().expect("4 bytes"));
    if endian != ENDIAN_CHECK {
        return Err(if endian == ENDIAN_CHECK.swap_bytes() {
            Error::Endianness
        } else {
            Error::HeaderChecksum
        });
    }
    if crc32fast::hash(&file[..36]) != u32_at(file, 36) {
        return Err(Error::HeaderChecksum);
    }
    let version = u32_at(file, 12);
    if version != FORMAT_VERSION {
        return Err(Error::Version { found: version });
    }
    let flags = u32_at(file, 16);
    let count = u32_at(file, 20) as usize;
    let file_len = u64_at(file, 24);
    if count != SectionId::ALL.len() {
        return Err(Error::Header("unexpected number of sections"));
    }
    if flags & !1 != 0 {
        return Err(Error::Header("unknown flag bits are set"));
    }
    if file[40..HEADER_LEN as usize].iter().any(|&b| b != 0) {
        return Err(Error::Header("reserved bytes are not zero"));
    }
    let table_end = HEADER_LEN + table_len();
    if len < table_end || len < file_len {
        return Err(Error::Truncated {
            len,
            expected: file_len.max(table_end),
        });
    }
    if len > file_len {
        return Err(Error::Header("file is longer than the header says"));
    }
    let table_bytes = &file[HEADER_LEN as usize..table_end as usize];
    if crc32fast::hash(table_bytes) != u32_at(file, 32) {
        return Err(Error::Header("section table checksum mismatch"));
    }
    let mut sections = Vec::with_capacity(count);
    let mut min_offset = align_up(table_end);
    for (index, (chunk, &expected)) in table_bytes
        .chunks_exact(ENTRY_LEN as usize)
        .zip(SectionId::ALL.iter())
        .enumerate()
    {
        let found = u32_at(chunk, 0);
        if u32_at(chunk, 4) != 0 || u32_at(chunk, 28) != 0 {
            return Err(Error::Header("reserved section-table bytes are not zero"));
        }
        if found != expected as u32 {
            return Err(Error::Layout {
                index,
                found,
                expected,
            });
        }
        let s = Section {
            id: expected,
            offset: u64_at(chunk, 8),
            len: u64_at(chunk, 16),
            crc32: u32_at(chunk, 24),
        };
        if !s.offset.is_multiple_of(ALIGN) {
            return Err(Error::Bounds {
                section: s.id,
                what: "is not 64-byte aligned",
            });
        }
        if s.offset < min_offset {
            return Err(Error::Bounds {
                section: s.id,
                what: "overlaps the previous one",
            });
        }
        let end = s.offset.checked_add(s.len).ok_or(Error::Bounds {
            section: s.id,
            what: "has an impossible length",
        })?;
        if end > file_len {
            return Err(Error::Bounds {
                section: s.id,
                what: "ends past the end of the file",
            });
        }
        min_offset = align_up(end);
        sections.push(s);
    }
    // Padding (after the table, between sections, at the end) is zero, so
    // that every byte of a valid file is accounted for.
    let mut pad_start = HEADER_LEN + table_len();
    for s in sections
        .iter()
        .map(|s| (s.offset, s.offset + s.len))
        .chain([(file_len, file_len)])
    {
        if file[pad_start as usize..s.0 as usize]
            .iter()
            .any(|&b| b != 0)
        {
            return Err(Error::Header("padding bytes are not zero"));
        }
        pad_start = s.1;
    }
    if file_len != align_up(pad_start) {
        return Err(Error::Header(
            "file length is not the end of the last section",
        ));
    }
    let c = Container {
        flags,
        file_len,
        sections,
    };
    if verify_sections {
        for s in &c.sections {
            let computed = crc32fast::hash(c.bytes(file, s.id));
            if computed != s.crc32 {
                return Err(Error::Checksum {
                    section: s.id,
                    stored: s.crc32,
                    computed,
                });
            }
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let a = vec![1u8; 100];
        let b: Vec<u8> = (0..=255).collect();
        let secs: Vec<&[u8]> = vec![
            &a,
            &b,
            &[],
            &[7],
            &a[..64],
            &b[..3],
            &a[..1],
            &b,
            &a[..5],
            &[],
        ];
        let mut out = Vec::new();
        let n = write(&mut out, 1, &secs).unwrap();
        assert_eq!(n as usize, out.len());
        out
    }

    #[test]
    fn round_trip() {
        let f = sample();
        let c = read(&f, true).unwrap();
        assert_eq!(c.flags, 1);
        assert_eq!(c.bytes(&f, SectionId::Meta), &[1u8; 100][..]);
        assert_eq!(c.bytes(&f, SectionId::Names), &[] as &[u8]);
        assert_eq!(c.bytes(&f, SectionId::Ssa).len(), 256);
        for s in &c.sections {
            assert_eq!(s.offset % ALIGN, 0);
        }
    }

    #[test]
    fn every_flipped_byte_is_refused() {
        let f = sample();
        for i in 0..f.len() {
            let mut g = f.clone();
            g[i] ^= 0x5a;
            assert!(read(&g, true).is_err(), "flip at {i} accepted");
        }
    }

    #[test]
    fn truncation_and_garbage() {
        let f = sample();
        for cut in [0, 3, 8, 40, 64, 100, f.len() - 1] {
            assert!(read(&f[..cut], true).is_err(), "cut {cut}");
        }
        assert_eq!(read(b">chr1\nACGT\n", true).unwrap_err(), Error::BadMagic);
        let mut v = f.clone();
        v[12] = 9;
        // Header CRC covers the version, so fix it to see the version error.
        let crc = crc32fast::hash(&v[..36]);
        v[36..40].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(read(&v, true).unwrap_err(), Error::Version { found: 9 });
    }
}
