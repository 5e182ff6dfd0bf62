//! A range of the text read back from the nearest checkpoint of a
//! [`super::Scan`] (the distributed build's windows of the text): the file
//! decoded forward from there, by the rules the scan applied.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::{CHUNK, Checkpoint, read_error};
use crate::error::{Error, Result};
use crate::io::input::read_up_to;
use crate::reference::{AMBIGUOUS, CLASS};

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Codes (0..=3) of T[from..to), read from `path` starting at the last
/// checkpoint with text_pos <= from (from the start of the file when there is
/// none): for a plain file by seeking to its offset; for gzip/BGZF by
/// decompressing and discarding the bytes before it. Then decodes forward:
/// base letters (either case) are text; ambiguous bytes (IUPAC codes, `X`,
/// `-`, `.`), `\n`, `\r` are skipped; a `>` at the start of a line begins a
/// header line that is skipped to its end.
///
/// Errors when the file ends early or holds a byte the scan would have
/// refused (the file changed since it was scanned).
///
/// # Panics
/// If `from > to`. (`to <= text_len` is required too; a `to` past the end of
/// the text gives an error.)
pub fn read_text_range(
    path: &Path,
    checkpoints: &[Checkpoint],
    from: u64,
    to: u64,
) -> Result<Vec<u8>> {
    read_text_range_chunked(path, checkpoints, from, to, CHUNK)
}

/// [`read_text_range`] reading `chunk` bytes at a time (at most).
pub(super) fn read_text_range_chunked(
    path: &Path,
    checkpoints: &[Checkpoint],
    from: u64,
    to: u64,
    chunk: usize,
) -> Result<Vec<u8>> {
    assert!(from <= to, "read_text_range: from {from} > to {to}");
    if from == to {
        return Ok(Vec::new());
    }
    let k = checkpoints.partition_point(|c| c.text_pos <= from);
    let start = if k == 0 {
        None
    } else {
        Some(checkpoints[k - 1])
    };
    let offset = start.map_or(0, |c| c.offset);
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut magic = [0u8; 2];
    let got = read_up_to(&mut file, &mut magic).map_err(|e| Error::io(path, e))?;
    let mut reader: Box<dyn BufRead> = if got == 2 && magic == GZIP_MAGIC {
        file.seek(SeekFrom::Start(0))
            .map_err(|e| Error::io(path, e))?;
        let Some(input) = crate::io::input::decompressed(file, path)? else {
            return Err(changed(path, "the file is empty"));
        };
        let mut input = BufReader::with_capacity(chunk, input);
        let skipped = std::io::copy(&mut (&mut input).take(offset), &mut std::io::sink())
            .map_err(|e| read_error(path, e))?;
        if skipped < offset {
            return Err(changed(
                path,
                &format!("the file ends before byte {offset} of its decompressed text"),
            ));
        }
        Box::new(input)
    } else {
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if len <= offset {
            return Err(changed(
                path,
                &format!("the file ends before byte {offset}"),
            ));
        }
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| Error::io(path, e))?;
        Box::new(BufReader::with_capacity(
            chunk.min((to - from).saturating_add(4096) as usize),
            file,
        ))
    };
    let mut d = Decoder {
        text_pos: start.map_or(0, |c| c.text_pos),
        offset,
        at_line_start: start.is_none(),
        in_header: false,
        out: Vec::with_capacity((to - from) as usize),
    };
    if let Some(c) = start {
        // The checkpoint's byte must be a base.
        let buf = reader.fill_buf().map_err(|e| read_error(path, e))?;
        if buf.first().is_none_or(|&b| CLASS[b as usize] >= AMBIGUOUS) {
            return Err(changed(
                path,
                &format!(
                    "no base at byte {} (text position {})",
                    c.offset, c.text_pos
                ),
            ));
        }
    }
    loop {
        let buf = reader.fill_buf().map_err(|e| read_error(path, e))?;
        if buf.is_empty() {
            return Err(changed(
                path,
                &format!("the file ends before text position {to}"),
            ));
        }
        let n = buf.len();
        if d.chunk(buf, from, to).map_err(|m| changed(path, &m))? {
            return Ok(d.out);
        }
        reader.consume(n);
    }
}

/// The error for a file that no longer matches its scan.
fn changed(path: &Path, what: &str) -> Error {
    Error::input(
        path,
        format!("{what} (reference changed since it was scanned?)"),
    )
}

/// State of [`read_text_range`]'s forward decoding.
struct Decoder {
    /// Text position of the next base.
    text_pos: u64,
    /// Stream offset of the next chunk.
    offset: u64,
    at_line_start: bool,
    in_header: bool,
    out: Vec<u8>,
}

impl Decoder {
    /// Decodes one chunk; true once T[from..to) is complete. Err: what is
    /// wrong.
    fn chunk(&mut self, buf: &[u8], from: u64, to: u64) -> std::result::Result<bool, String> {
        let mut i = 0;
        let n = buf.len();
        let mut text_pos = self.text_pos;
        let mut at_line_start = self.at_line_start;
        while i < n {
            if self.in_header {
                match buf[i..].iter().position(|&b| b == b'\n') {
                    Some(k) => {
                        i += k + 1;
                        self.in_header = false;
                        at_line_start = true;
                    }
                    None => i = n,
                }
                continue;
            }
            let b = buf[i];
            let class = CLASS[b as usize];
            if class < AMBIGUOUS {
                // The whole run of bases, cut to [from, to).
                let run_start = i;
                i += 1;
                while i < n && CLASS[buf[i] as usize] < AMBIGUOUS {
                    i += 1;
                }
                let run_end = text_pos + (i - run_start) as u64;
                if run_end > from {
                    let a = run_start + from.saturating_sub(text_pos) as usize;
                    let b = i - run_end.saturating_sub(to) as usize;
                    self.out
                        .extend(buf[a..b].iter().map(|&b| CLASS[b as usize]));
                    if run_end >= to {
                        return Ok(true);
                    }
                }
                text_pos = run_end;
                at_line_start = false;
                continue;
            } else if class == AMBIGUOUS || b == b'\r' || b == b' ' || b == b'\t' {
                at_line_start = false;
            } else if b == b'\n' {
                at_line_start = true;
            } else if b == b'>' && at_line_start {
                self.in_header = true;
            } else {
                return Err(format!(
                    "unexpected byte '{}' at byte {} of the sequence text",
                    char::from(b).escape_default(),
                    self.offset + i as u64
                ));
            }
            i += 1;
        }
        self.text_pos = text_pos;
        self.at_line_start = at_line_start;
        self.offset += n as u64;
        Ok(false)
    }
}
