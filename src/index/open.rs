//! An index file found from the name a user gave, opened, validated and memory-mapped ([`Index`]).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use fmalign_index_format::{self as format, SectionId};

use super::sections::{FLAG_WIDE, Meta, WIDE_THRESHOLD, decode_layout};
use crate::error::{Error, Result};
use crate::fm::{FmIndex, LINE_BASES, OccLine, RankIndex, SUPER_LINES, Ssa};
use crate::reference::Layout;
use crate::segments::Segments;

/// The index beside a reference: `REF.fa` → `REF.fa.fmi` (`REF.fa.gz` →
/// `REF.fa.gz.fmi`).
pub fn default_path(reference: &Path) -> PathBuf {
    let mut s = reference.as_os_str().to_owned();
    s.push(".fmi");
    PathBuf::from(s)
}

/// The index a user named, as found by [`resolve`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The index file.
    pub path: PathBuf,
    /// Set when the path named a FASTA newer than its index.
    pub warning: Option<String>,
}

/// The index for a path given as INDEX: the file itself if it is an index,
/// else INDEX.fmi (see [`default_path`]) if that exists.
pub fn resolve(path: &Path) -> Result<Resolved> {
    let mut magic = [0u8; 8];
    let is_index = File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok()
        && magic == format::MAGIC;
    let sidecar = default_path(path);
    if !is_index && sidecar.is_file() {
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let warning = match (modified(path), modified(&sidecar)) {
            (Some(fasta), Some(index)) if fasta > index => Some(format!(
                "{} is newer than its index {}; rebuild the index if the reference changed",
                path.display(),
                sidecar.display()
            )),
            _ => None,
        };
        return Ok(Resolved {
            path: sidecar,
            warning,
        });
    }
    if !path.exists() {
        return Err(Error::input(
            path,
            "no such index file (build it with `fmalign index`)",
        ));
    }
    if !is_index && path.extension().is_none_or(|e| e != "fmi") {
        return Err(Error::Usage(format!(
            "{} is not an fmalign index and {} does not exist; build it with `fmalign index {}`",
            path.display(),
            sidecar.display(),
            path.display()
        )));
    }
    Ok(Resolved {
        path: path.to_owned(),
        warning: None,
    })
}

/// The bytes of an index: an mmap of the file, the file read into
/// anonymous memory (its first `len` bytes; [`read_huge`]), or 64-byte
/// aligned memory.
enum Backing {
    Mmap(memmap2::Mmap),
    Anon(memmap2::MmapMut, usize),
    Owned(Vec<OccLine>, usize),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Mmap(m) => m,
            Backing::Anon(m, len) => &m[..*len],
            Backing::Owned(v, len) => &bytemuck::cast_slice(v)[..*len],
        }
    }
}

/// The whole of `file` read into anonymous memory that the kernel is
/// asked to back with transparent huge pages (`MADV_HUGEPAGE`), or `None`
/// where such memory cannot be had (then the file is mapped instead).
/// Mapping is searched by random accesses to the rank lines, the sampled
/// suffix array and the packed text; with 4 KiB pages nearly each one
/// also misses the TLB (a chr20 index spans 15,000 pages), with 2 MiB
/// pages the whole index fits in it: on 150 bp chr20 pairs in the gapped
/// modes about 5% less CPU time, for a copy of the file (about 10 ms for
/// chr20's 62 MB).
#[cfg(target_os = "linux")]
fn read_huge(file: &File) -> std::io::Result<Option<Backing>> {
    use std::io::Read;
    const HUGE: usize = 2 << 20;
    let len = file.metadata()?.len() as usize;
    if len < HUGE {
        return Ok(None);
    }
    let Ok(mut m) = memmap2::MmapMut::map_anon(len.div_ceil(HUGE) * HUGE) else {
        return Ok(None);
    };
    if m.advise(memmap2::Advice::HugePage).is_err() {
        return Ok(None);
    }
    let mut f = file;
    f.read_exact(&mut m[..len])?;
    Ok(Some(Backing::Anon(m, len)))
}

#[cfg(not(target_os = "linux"))]
fn read_huge(_: &File) -> std::io::Result<Option<Backing>> {
    Ok(None)
}

/// A validated index, ready for search.
pub struct Index {
    path: PathBuf,
    backing: Backing,
    container: format::Container,
    /// Decoded META.
    pub meta: Meta,
    /// Contigs and holes.
    pub layout: Layout,
    /// Text → reference positions.
    pub segments: Segments,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("path", &self.path)
            .field("meta", &self.meta)
            .finish()
    }
}

impl Index {
    /// Reads (into memory backed by huge pages where the kernel gives
    /// them, else by an mmap of the file) and validates an index file
    /// (header, table, every checksum, and the consistency of the
    /// sections) before any search.
    pub fn open(path: &Path) -> Result<Index> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        if let Some(backing) = read_huge(&file).map_err(|e| Error::io(path, e))? {
            return Self::from_backing(path, backing);
        }
        Self::mapped(path, &file)
    }

    /// [`Index::open`] with the file memory-mapped rather than read: its
    /// pages are the page cache's, shared with every process that maps the
    /// same file (many workers on one machine hold one copy), at the cost
    /// of the huge pages [`Index::open`] gets where it can.
    pub fn open_mapped(path: &Path) -> Result<Index> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        Self::mapped(path, &file)
    }

    fn mapped(path: &Path, file: &File) -> Result<Index> {
        // SAFETY: the map is read-only and its bytes are checked before use.
        // Like every mmap-based reader (ripgrep, bwa's -x mode) we cannot stop
        // another process from changing the file under us: pages lost to a
        // truncation raise SIGBUS when read (the binary turns that into an
        // error exit with `io::output::exit_on_sigbus`).
        let map = unsafe { memmap2::Mmap::map(file) }.map_err(|e| Error::io(path, e))?;
        Self::from_backing(path, Backing::Mmap(map))
    }

    /// Validates an index held in memory (`path` is used in messages).
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Index> {
        let mut v = vec![OccLine::default(); bytes.len().div_ceil(64)];
        bytemuck::cast_slice_mut(&mut v)[..bytes.len()].copy_from_slice(bytes);
        Self::from_backing(path, Backing::Owned(v, bytes.len()))
    }

    fn from_backing(path: &Path, backing: Backing) -> Result<Index> {
        let bytes = backing.bytes();
        let container = format::read(bytes, true).map_err(|source| Error::Format {
            path: path.into(),
            source,
        })?;
        let corrupt = |msg: String| Error::Corrupt {
            path: path.into(),
            msg,
        };
        let meta = Meta::decode(container.bytes(bytes, SectionId::Meta)).map_err(corrupt)?;
        let layout = decode_layout(&container, bytes, &meta).map_err(corrupt)?;
        let segments = Segments::new(&layout).map_err(corrupt)?;
        let index = Index {
            path: path.into(),
            backing,
            container,
            meta,
            layout,
            segments,
        };
        index.validate().map_err(corrupt)?;
        Ok(index)
    }

    fn section(&self, id: SectionId) -> &[u8] {
        self.container.bytes(self.backing.bytes(), id)
    }

    /// Section sizes in file order, for `fmalign info`.
    pub fn section_sizes(&self) -> Vec<(SectionId, u64)> {
        self.container
            .sections
            .iter()
            .map(|s| (s.id, s.len))
            .collect()
    }

    /// `fmalign info`: the index described in tab-separated lines (file,
    /// format, sizes, sampling, sections, contigs, ambiguous runs).
    pub fn write_info(&self, o: &mut impl Write) -> std::io::Result<()> {
        let m = &self.meta;
        writeln!(o, "index\t{}", self.path.display())?;
        writeln!(o, "format_version\t{}", format::FORMAT_VERSION)?;
        writeln!(o, "file_bytes\t{}", self.file_len())?;
        writeln!(o, "reference_bases\t{}", m.ref_len)?;
        writeln!(o, "unambiguous_bases\t{}", m.text_len)?;
        writeln!(o, "ambiguous_bases\t{}", m.ref_len - m.text_len)?;
        writeln!(o, "position_bits\t{}", m.pos_bytes * 8)?;
        writeln!(o, "sa_sample\t{}", m.sa_sample)?;
        writeln!(
            o,
            "occ\t64-byte lines of 192 bases with 4 x u32 counts (0.33 bytes/base)"
        )?;
        for (id, len) in self.section_sizes() {
            writeln!(o, "section\t{id}\t{len}")?;
        }
        writeln!(o, "contigs\t{}", self.layout.contigs.len())?;
        for (k, c) in self.layout.contigs.iter().enumerate() {
            let holes: Vec<_> = self
                .layout
                .holes
                .iter()
                .filter(|h| h.contig as usize == k)
                .collect();
            let amb: u64 = holes.iter().map(|h| h.len).sum();
            let md5 = crate::dna::md5_hex(&c.md5);
            writeln!(
                o,
                "contig\t{}\t{}\tambiguous_runs={}\tambiguous_bases={amb}\tM5={md5}",
                c.name,
                c.len,
                holes.len()
            )?;
        }
        for h in &self.layout.holes {
            let c = &self.layout.contigs[h.contig as usize];
            writeln!(
                o,
                "ambiguous\t{}\t{}\t{}",
                c.name,
                h.start + 1,
                h.start + h.len
            )?;
        }
        Ok(())
    }

    /// Size of the file.
    pub fn file_len(&self) -> u64 {
        self.container.file_len
    }

    /// The path the index was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The 2-bit packed text (see [`crate::dna::pack`]).
    pub fn pac(&self) -> &[u8] {
        self.section(SectionId::Pac)
    }

    /// The codes (0..=3, [`crate::dna::NO_BASE`] in ambiguous runs) of
    /// contig `contig` over `start..end` (0-based, end exclusive, within
    /// the contig).
    pub fn codes(&self, contig: u32, start: u64, end: u64) -> Vec<u8> {
        let mut out = vec![crate::dna::NO_BASE; end.saturating_sub(start) as usize];
        let segs = &self.segments.0;
        let pac = self.pac();
        let mut k = segs.partition_point(|s| (s.contig, s.contig_start + s.len) <= (contig, start));
        while let Some(s) = segs.get(k) {
            if s.contig != contig || s.contig_start >= end {
                break;
            }
            let lo = s.contig_start.max(start);
            let hi = (s.contig_start + s.len).min(end);
            if lo < hi {
                let to = &mut out[(lo - start) as usize..(hi - start) as usize];
                crate::dna::unpack_into(pac, s.text_start + (lo - s.contig_start), to);
            }
            k += 1;
        }
        out
    }

    /// The bases of the contig named `name` over `start..end` (0-based, end
    /// exclusive; `None`: to the contig's end; both clamped to it) as upper-case
    /// letters, `N` in ambiguous runs (the index keeps no other IUPAC code);
    /// `None` when no contig has that name.
    pub fn sequence(&self, name: &str, start: u64, end: Option<u64>) -> Option<Vec<u8>> {
        let k = self.layout.contigs.iter().position(|c| c.name == name)?;
        let len = self.layout.contigs[k].len;
        let end = end.unwrap_or(len).min(len);
        let start = start.min(end);
        let mut v = self.codes(k as u32, start, end);
        for b in &mut v {
            *b = b"ACGTN"[usize::from(*b)];
        }
        Some(v)
    }

    /// The FM-index view.
    pub fn fm(&self) -> FmIndex<'_> {
        let ssa_bytes = self.section(SectionId::Ssa);
        FmIndex {
            tables: RankIndex {
                n: self.meta.text_len,
                primary: self.meta.primary,
                c: self.meta.c,
                occ: bytemuck::cast_slice(self.section(SectionId::Occ)),
                sup: bytemuck::cast_slice(self.section(SectionId::OccSuper)),
            },
            ssa: if self.meta.pos_bytes == 8 {
                Ssa::U64(bytemuck::cast_slice(ssa_bytes))
            } else {
                Ssa::U32(bytemuck::cast_slice(ssa_bytes))
            },
            sample_shift: self.meta.sa_sample.trailing_zeros(),
        }
    }

    /// The rank tables of the reversed text (the mirror of bidirectional
    /// search): rank and extension only; it has no sampled SA, so no locate.
    pub fn rev_fm(&self) -> RankIndex<'_> {
        RankIndex {
            n: self.meta.text_len,
            primary: self.meta.rev_primary,
            c: self.meta.c,
            occ: bytemuck::cast_slice(self.section(SectionId::RevOcc)),
            sup: bytemuck::cast_slice(self.section(SectionId::RevOccSuper)),
        }
    }

    /// Cross-field invariants and the Occ counts, checked before use, so that
    /// no later slice access can go out of bounds.
    fn validate(&self) -> std::result::Result<(), String> {
        let m = &self.meta;
        let n = m.text_len;
        if self.segments.text_len() != n {
            return Err(format!(
                "contigs and ambiguous runs cover {} bases, meta says {n}",
                self.segments.text_len()
            ));
        }
        if m.ref_len != self.layout.contigs.iter().map(|c| c.len).sum::<u64>() {
            return Err("reference length does not match the contigs".into());
        }
        let wide = self.container.flags & FLAG_WIDE != 0;
        if !(m.pos_bytes == 4 && !wide && n < WIDE_THRESHOLD || m.pos_bytes == 8 && wide) {
            return Err("inconsistent position width".into());
        }
        if !m.sa_sample.is_power_of_two() {
            return Err("SA sampling rate is not a power of two".into());
        }
        if (n == 0 && m.primary != 0) || (n > 0 && (m.primary == 0 || m.primary > n)) {
            return Err("primary row out of range".into());
        }
        if (n == 0 && m.rev_primary != 0) || (n > 0 && (m.rev_primary == 0 || m.rev_primary > n)) {
            return Err("primary row of the reversed text out of range".into());
        }
        if m.c[0] != 1 || m.c.windows(2).any(|w| w[0] > w[1]) || m.c[4] != n + 1 {
            return Err("C array is inconsistent".into());
        }
        let lines = n / LINE_BASES + 1;
        let expect = [
            (SectionId::Pac, n.div_ceil(4)),
            (SectionId::Occ, lines * 64),
            (SectionId::OccSuper, ((lines - 1) / SUPER_LINES + 1) * 32),
            (SectionId::RevOcc, lines * 64),
            (SectionId::RevOccSuper, ((lines - 1) / SUPER_LINES + 1) * 32),
            (
                SectionId::Ssa,
                ((n >> m.sa_sample.trailing_zeros()) + 1) * m.pos_bytes as u64,
            ),
        ];
        for (id, len) in expect {
            if self.section(id).len() as u64 != len {
                return Err(format!(
                    "section {id} has {} bytes, expected {len}",
                    self.section(id).len()
                ));
            }
        }
        if m.sa_sample > 1 << 16 {
            return Err("SA sampling rate is larger than 65536".into());
        }
        // Every Occ count, so that rank and LF stay in 0..=n+1, and every
        // sample, so that locate stays in 0..=n (one pass each; the CRCs
        // have read these bytes already).
        let fm = self.fm();
        crate::tables::verify_occ(&fm)?;
        crate::tables::verify_occ(&self.rev_fm()).map_err(|e| format!("reversed text: {e}"))?;
        if (0..fm.ssa.len()).any(|k| fm.ssa.get(k) > n) {
            return Err("a sampled SA entry is larger than the text".into());
        }
        Ok(())
    }
}
