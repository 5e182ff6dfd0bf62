//! The temporary file of the distributed build in parts: rank 0 creates it
//! at its final length, every rank opens it ([`open_output`]) and writes
//! pieces of its sections at their offsets ([`Piece`]: buffered, the CRC
//! computed as it goes), which rank 0 combines into each section's CRC.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use fmalign_index_format::{self as format, SectionId};

use crate::dist::Comm;
use crate::dist::index::{agreed, section_index};
use crate::error::{Error, Result};
use crate::io::output::{TempFile, temp_path, temp_path_for};

/// The temporary file every rank writes into, and where its sections are.
pub(super) struct Out {
    pub(super) file: File,
    pub(super) path: PathBuf,
    /// Section offsets in the file, in [`SectionId::ALL`] order.
    pub(super) offsets: Vec<u64>,
}

/// A contiguous piece of one section written by this rank: buffered,
/// written at its offset, its CRC computed as it goes.
pub(super) struct Piece<'o> {
    out: &'o Out,
    section: SectionId,
    /// Offset of the piece in its section.
    start: u64,
    /// Bytes written to the file so far.
    flushed: u64,
    buf: Vec<u8>,
    crc: crc32fast::Hasher,
}

/// Bytes a [`Piece`] buffers before writing.
const PIECE_BUFFER: usize = 1 << 20;

impl<'o> Piece<'o> {
    pub(super) fn new(out: &'o Out, section: SectionId, start: u64) -> Self {
        Piece {
            out,
            section,
            start,
            flushed: 0,
            buf: Vec::new(),
            crc: crc32fast::Hasher::new(),
        }
    }

    pub(super) fn push(&mut self, bytes: &[u8]) -> Result<()> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= PIECE_BUFFER {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        let at = self.out.offsets[section_index(self.section)] + self.start + self.flushed;
        self.out
            .file
            .write_all_at(&self.buf, at)
            .map_err(|e| Error::io(&self.out.path, e))?;
        self.crc.update(&self.buf);
        self.flushed += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Writes the rest; the piece as `(section index, offset, length, crc)`.
    pub(super) fn finish(mut self) -> Result<[u64; 4]> {
        self.flush()?;
        Ok([
            section_index(self.section) as u64,
            self.start,
            self.flushed,
            u64::from(self.crc.finalize()),
        ])
    }
}

/// One piece written whole.
pub(super) fn piece(out: &Out, section: SectionId, start: u64, bytes: &[u8]) -> Result<[u64; 4]> {
    let mut p = Piece::new(out, section, start);
    p.push(bytes)?;
    p.finish()
}

/// Rank 0 creates the temporary file at its final length; every rank opens
/// it. Returns it, and on rank 0 the guard that removes it on failure.
pub(super) fn open_output<C: Comm>(
    comm: &C,
    out: &Path,
    flags: u32,
    lens: &[u64],
) -> Result<(Out, Option<TempFile>)> {
    let parts: Vec<(u64, u32)> = lens.iter().map(|&l| (l, 0)).collect();
    let (_, table, file_len) = format::plan(flags, &parts);
    let offsets: Vec<u64> = table.iter().map(|s| s.offset).collect();
    let created = if comm.rank() == 0 {
        let tmp = TempFile::register(temp_path(out));
        File::create(tmp.path())
            .and_then(|f| f.set_len(file_len))
            .map(|()| Some(tmp))
            .map_err(|e| Error::io(out, e))
    } else {
        Ok(None)
    };
    let guard = agreed(comm, created)?;
    let pid = comm.broadcast(0, vec![u64::from(std::process::id())])[0];
    let path = temp_path_for(out, pid as u32);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e));
    let file = agreed(comm, file)?;
    Ok((
        Out {
            file,
            path,
            offsets,
        },
        guard,
    ))
}
