//! Opening FASTA/FASTQ input: gzip (and BGZF, which is gzip) is decompressed
//! here rather than inside needletail, so that an empty compressed file is
//! told apart from a truncated one, and so that the parsers see plain text.

use std::io::{Cursor, Read};
use std::path::Path;

use crate::error::{Error, Result};

/// Plain text of `reader`, or `None` when the input (after decompression)
/// is empty.
pub fn decompressed<'a, R: Read + Send + 'a>(
    mut reader: R,
    path: &Path,
) -> Result<Option<Box<dyn Read + Send + 'a>>> {
    let mut head = [0u8; 2];
    let got = read_up_to(&mut reader, &mut head).map_err(|e| Error::io(path, e))?;
    let raw = Cursor::new(head[..got].to_vec()).chain(reader);
    if got == 2 && head == [0x1f, 0x8b] {
        let mut gz = flate2::read::MultiGzDecoder::new(raw);
        let mut first = [0u8; 1];
        let k = read_up_to(&mut gz, &mut first).map_err(|e| {
            Error::input(
                path,
                format!("read error (truncated or damaged gzip file?): {e}"),
            )
        })?;
        if k == 0 {
            return Ok(None);
        }
        return Ok(Some(Box::new(Cursor::new(first.to_vec()).chain(gz))));
    }
    if got == 0 {
        return Ok(None);
    }
    Ok(Some(Box::new(raw)))
}

/// Fills `buf` as far as the input allows; returns the bytes read.
pub(crate) fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}
