//! The output beside the records: BGZF blocks (BAM), the header, and the
//! copies of reads by outcome (`--un`, `--al`, `--un-conc`, `--al-conc`).

use std::io::Write;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::io::output::Output;
use crate::read::ReadView;

use super::config::{CopyPaths, OutputFormat, mate_path};

/// Appends `read` to `out` as FASTQ (FASTA when it has no qualities).
fn push_fastq(out: &mut Vec<u8>, read: &ReadView<'_>) {
    out.push(if read.qual.is_some() { b'@' } else { b'>' });
    out.extend_from_slice(read.name);
    out.push(b'\n');
    out.extend_from_slice(read.seq);
    out.push(b'\n');
    if let Some(q) = read.qual {
        out.extend_from_slice(b"+\n");
        out.extend_from_slice(q);
        out.push(b'\n');
    }
}

/// Uncompressed bytes per BGZF block (the limit htslib and noodles use, so
/// that a block of incompressible data still fits its 16-bit size field).
pub(super) const BGZF_BLOCK: usize = 65280;

/// The empty BGZF block that ends a BAM file (SAM spec §4.1.2).
pub(super) const BGZF_EOF: [u8; 28] = [
    0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0, 0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0,
    0, 0,
];

/// Deflate level of BAM output: zlib's and htslib's default (6), which
/// `samtools view -b` writes too.
const BAM_LEVEL: i32 = 6;

thread_local! {
    /// Each thread's deflate state, made once (libdeflate's compressor
    /// holds its hash tables: too big to set up per 64 KiB block).
    static DEFLATE: std::cell::RefCell<libdeflater::Compressor> = std::cell::RefCell::new(
        libdeflater::Compressor::new(
            libdeflater::CompressionLvl::new(BAM_LEVEL).expect("a valid deflate level"),
        ),
    );
}

/// Appends `data` to `out` as BGZF blocks (gzip members with the BC extra
/// field, SAM spec §4.1) of up to [`BGZF_BLOCK`] bytes each, deflated by
/// libdeflate (as htslib built with it, and noodles-bgzf's `libdeflate`
/// feature): with zlib-rs at the same level, BAM cost `-v 0` 0.18 s of
/// CPU more than SAM on 100k reads of 100 bases, with libdeflate 0.12 s
/// (docs/BENCHMARKS.md, 2026-11-28 (fourteenth)).
pub(super) fn bgzf_blocks(data: &[u8], out: &mut Vec<u8>) {
    DEFLATE.with_borrow_mut(|z| {
        for piece in data.chunks(BGZF_BLOCK) {
            let head = out.len();
            out.extend_from_slice(&[
                0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0, 0, 0,
            ]);
            let at = out.len();
            out.resize(at + z.deflate_compress_bound(piece.len()), 0);
            let n = z
                .deflate_compress(piece, &mut out[at..])
                .expect("the bound holds the deflated block");
            out.truncate(at + n);
            // BSIZE: the block's size minus one (fits: BGZF_BLOCK leaves
            // room for an incompressible block).
            let bsize = (18 + n + 8 - 1) as u16;
            out[head + 16..head + 18].copy_from_slice(&bsize.to_le_bytes());
            out.extend_from_slice(&crc32fast::hash(piece).to_le_bytes());
            out.extend_from_slice(&(piece.len() as u32).to_le_bytes());
        }
    });
}

/// `data` as BGZF blocks of [`BGZF_BLOCK`] bytes (the last one shorter),
/// compressed in parallel on `pool`.
pub(super) fn compress_blocks(pool: &rayon::ThreadPool, data: &[u8]) -> Vec<u8> {
    let blocks: Vec<Vec<u8>> = pool.install(|| {
        data.par_chunks(BGZF_BLOCK)
            .map(|piece| {
                let mut b = Vec::new();
                bgzf_blocks(piece, &mut b);
                b
            })
            .collect()
    });
    blocks.concat()
}

/// The first bytes of the output: the SAM header text, or the BAM header
/// (magic, text, references) in BGZF blocks.
pub(super) fn output_header(text: Vec<u8>, format: OutputFormat) -> std::io::Result<Vec<u8>> {
    match format {
        OutputFormat::Sam => Ok(text),
        OutputFormat::Bam => {
            let header = noodles_sam::io::Reader::new(&text[..]).read_header()?;
            let mut bam = noodles_bam::io::Writer::from(Vec::new());
            bam.write_header(&header)?;
            let mut out = Vec::new();
            bgzf_blocks(&bam.into_inner(), &mut out);
            Ok(out)
        }
    }
}

/// One file of read copies: written like `-o` (a temporary name, renamed
/// at the end), gzip when its name ends in `.gz`; `-` is stdout.
struct CopyFile {
    out: Output,
    gz: Option<flate2::write::GzEncoder<Vec<u8>>>,
}

impl CopyFile {
    fn create(path: &Path) -> Result<CopyFile> {
        let gz = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
            .then(|| flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default()));
        let stdout = path == Path::new("-");
        Ok(CopyFile {
            out: Output::create((!stdout).then_some(path))?,
            gz,
        })
    }

    fn write(&mut self, data: &[u8]) -> Result<()> {
        let name = self.out.name().to_owned();
        let io = |e| Error::io(&name, e);
        match &mut self.gz {
            Some(z) => {
                z.write_all(data).map_err(io)?;
                let buf = z.get_mut();
                self.out.writer().write_all(buf).map_err(io)?;
                buf.clear();
            }
            None => self.out.writer().write_all(data).map_err(io)?,
        }
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        if let Some(z) = self.gz.take() {
            let name = self.out.name().to_owned();
            let rest = z.finish().map_err(|e| Error::io(&name, e))?;
            self.out
                .writer()
                .write_all(&rest)
                .map_err(|e| Error::io(&name, e))?;
        }
        self.out.finish()
    }
}

/// The files reads are copied to by outcome: `[not aligned, aligned]`,
/// each one file per mate (none when not asked for).
pub(super) struct ReadCopies {
    files: [Vec<CopyFile>; 2],
}

impl ReadCopies {
    /// Creates the files of `paths` for `paired` input or not.
    pub(super) fn open(paths: &CopyPaths, paired: bool) -> Result<ReadCopies> {
        paths.check(paired)?;
        let files = |single: &Option<PathBuf>, conc: &Option<PathBuf>| -> Result<Vec<CopyFile>> {
            match (single, conc) {
                (Some(p), _) => Ok(vec![CopyFile::create(p)?]),
                (None, Some(p)) => [1, 2]
                    .iter()
                    .map(|&m| CopyFile::create(&mate_path(p, m)))
                    .collect(),
                (None, None) => Ok(Vec::new()),
            }
        };
        Ok(ReadCopies {
            files: [
                files(&paths.un, &paths.un_conc)?,
                files(&paths.al, &paths.al_conc)?,
            ],
        })
    }

    /// Whether any read is copied.
    pub(super) fn wanted(&self) -> bool {
        self.files.iter().any(|f| !f.is_empty())
    }

    /// Copies a batch's reads (and mates) by `status` (aligned or not,
    /// in input order), as FASTQ.
    pub(super) fn copy(
        &mut self,
        status: &[bool],
        reads: &crate::io::fastq::Batch,
        mates: Option<&crate::io::fastq::Batch>,
    ) -> Result<()> {
        let mut bufs: [[Vec<u8>; 2]; 2] = Default::default();
        for (i, &ok) in status.iter().enumerate() {
            push_fastq(&mut bufs[usize::from(ok)][0], &reads.get(i));
            if let Some(m) = mates {
                push_fastq(&mut bufs[usize::from(ok)][1], &m.get(i));
            }
        }
        for (files, bufs) in self.files.iter_mut().zip(&bufs) {
            for (f, buf) in files.iter_mut().zip(bufs) {
                f.write(buf)?;
            }
        }
        Ok(())
    }

    /// Ends every file (renamed into place).
    pub(super) fn finish(self) -> Result<()> {
        for f in self.files.into_iter().flatten() {
            f.finish()?;
        }
        Ok(())
    }
}
