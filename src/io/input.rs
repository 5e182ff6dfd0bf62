//! Opening FASTA/FASTQ input: gzip (and BGZF, which is gzip) is decompressed
//! here rather than inside needletail, so that an empty compressed file is
//! told apart from a truncated one, and so that the parsers see plain text.
//!
//! With threads to spare ([`decompressed_with`]), a plain gzip stream is
//! inflated on a thread of its own ([`ReadAhead`]), overlapping the parser,
//! and BGZF (independent blocks) by noodles-bgzf's multithreaded reader.

use std::io::{BufRead, BufReader, Cursor, Read};
use std::num::NonZeroUsize;
use std::path::Path;

use crossbeam_channel::{Receiver, Sender, bounded};

use crate::error::{Error, Result};

/// Bytes per block of [`ReadAhead`].
const AHEAD_BLOCK: usize = 1 << 20;

/// Blocks [`ReadAhead`] keeps ready.
const AHEAD_BLOCKS: usize = 4;

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
        return non_empty(Members::new(raw), path);
    }
    if got == 0 {
        return Ok(None);
    }
    Ok(Some(Box::new(raw)))
}

/// [`decompressed`], with `threads` to decompress: with 2 or more, BGZF
/// input is inflated by that many workers (its blocks are independent) and
/// plain gzip on one thread of its own, ahead of the reader; plain text is
/// read as is.
pub fn decompressed_with<R: Read + Send + 'static>(
    mut reader: R,
    path: &Path,
    threads: usize,
) -> Result<Option<Box<dyn Read + Send>>> {
    if threads < 2 {
        return decompressed(reader, path);
    }
    // The gzip header up to BGZF's extra subfield (SAM/BAM spec §4.1).
    let mut head = [0u8; 16];
    let got = read_up_to(&mut reader, &mut head).map_err(|e| Error::io(path, e))?;
    let raw = Cursor::new(head[..got].to_vec()).chain(reader);
    let gzip = got >= 2 && head[..2] == [0x1f, 0x8b];
    let bgzf = is_bgzf(&head[..got]);
    let inflated: Box<dyn Read + Send> = if bgzf {
        let workers = NonZeroUsize::new(threads).unwrap_or(NonZeroUsize::MIN);
        Box::new(noodles_bgzf::io::MultithreadedReader::with_worker_count(
            workers, raw,
        ))
    } else if gzip {
        Box::new(ReadAhead::new(Members::new(raw)))
    } else {
        return decompressed(raw, path);
    };
    non_empty(inflated, path)
}

/// Gzip members one after another, as `MultiGzDecoder` reads them, ending
/// at the end of the input or at zero bytes that run to it (padding, which
/// tape and some tools leave after the data: gzip, zlib's `gzread` and so
/// bwa and samtools accept it). Anything else after a member is an error,
/// not dropped in silence as zlib does: it may be the start of a damaged
/// member, whose reads would be lost.
pub struct Members<R: BufRead> {
    member: Option<flate2::bufread::GzDecoder<R>>,
}

impl<R: Read> Members<BufReader<R>> {
    /// The members of the gzip stream `raw`.
    pub fn new(raw: R) -> Self {
        Members {
            member: Some(flate2::bufread::GzDecoder::new(BufReader::with_capacity(
                1 << 16,
                raw,
            ))),
        }
    }
}

impl<R: BufRead> Read for Members<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let Some(member) = self.member.as_mut() else {
                return Ok(0);
            };
            let k = member.read(buf)?;
            if k > 0 || buf.is_empty() {
                return Ok(k);
            }
            // The member ended: another, zero padding to the end, or the end.
            let mut rest = self.member.take().expect("a member").into_inner();
            loop {
                let bytes = rest.fill_buf()?;
                if bytes.is_empty() {
                    return Ok(0);
                }
                if bytes[0] == 0x1f {
                    self.member = Some(flate2::bufread::GzDecoder::new(rest));
                    break;
                }
                let zeros = bytes.iter().take_while(|&&b| b == 0).count();
                if zeros == 0 {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "bytes after the end of the gzip data that are neither gzip nor zero padding",
                    ));
                }
                rest.consume(zeros);
            }
        }
    }
}

/// What a FASTA file may hold before its first `>` and is skipped, as bwa
/// skips it: a UTF-8 byte-order mark, blank lines (spaces, tabs, `\r`), and
/// comment lines starting with `;` (the old FASTA convention). Consumes
/// them and returns their bytes and lines; stops at the first other line
/// (the `>` header, or what the caller then refuses), which it leaves
/// unread when it starts with something other than a space or a tab, and
/// refuses otherwise (a line of spaces followed by text).
pub fn skip_fasta_preamble(input: &mut impl BufRead) -> std::io::Result<(u64, u64)> {
    const BOM: &[u8] = &[0xef, 0xbb, 0xbf];
    let (mut bytes, mut lines) = (0u64, 0u64);
    // The mark may come in pieces: a reader's first read can be short.
    while bytes < BOM.len() as u64 {
        let buf = input.fill_buf()?;
        let want = &BOM[bytes as usize..];
        let k = buf.iter().zip(want).take_while(|(a, b)| a == b).count();
        if k == 0 {
            if bytes > 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "not a FASTA file (it does not start with a '>' header line)",
                ));
            }
            break;
        }
        input.consume(k);
        bytes += k as u64;
    }
    let mut line = Vec::new();
    loop {
        let buf = input.fill_buf()?;
        match buf.first() {
            Some(b';' | b'\n' | b'\r' | b' ' | b'\t') => {}
            _ => return Ok((bytes, lines)),
        }
        line.clear();
        let k = input.read_until(b'\n', &mut line)?;
        if line[0] != b';' && line.iter().any(|b| !b.is_ascii_whitespace()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "line {}: text after spaces before the first '>' header line",
                    lines + 1
                ),
            ));
        }
        bytes += k as u64;
        lines += 1;
    }
}

/// The 28-byte empty block that ends a BGZF file (SAM/BAM spec §4.1.2).
const BGZF_EOF: [u8; 28] = [
    0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0, 0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0,
    0, 0,
];

/// Whether the header of a gzip member (its first 16 bytes) is BGZF's.
fn is_bgzf(head: &[u8]) -> bool {
    head.len() >= 16
        && head[..2] == [0x1f, 0x8b]
        && head[3] & 4 != 0
        && head[12..14] == *b"BC"
        && head[14..16] == [2, 0]
}

/// Whether `path` is a BGZF file without the end-of-file block: cut short
/// at a block boundary (a killed `bgzip`), which inflates without an error
/// to a text that simply ends early. samtools warns of the same. `false`
/// for anything else, and for what is not a regular file: a named pipe or
/// a device is never opened here, since opening and closing a FIFO to peek
/// at it loses what its writer sent (and may block), and the reads must be
/// opened once, by their reader.
pub fn bgzf_lacks_eof(path: &Path) -> bool {
    use std::io::{Seek, SeekFrom};
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = [0u8; 16];
    if read_up_to(&mut f, &mut head).ok() != Some(16) || !is_bgzf(&head) {
        return false;
    }
    let mut tail = [0u8; 28];
    let read_tail = f
        .seek(SeekFrom::End(-28))
        .and_then(|_| f.read_exact(&mut tail));
    read_tail.is_err() || tail != BGZF_EOF
}

/// The warning for a [`bgzf_lacks_eof`] file, if `path` is one.
pub fn truncation_warning(path: &Path) -> Option<String> {
    bgzf_lacks_eof(path).then(|| {
        format!(
            "{}: no BGZF end-of-file block: the file may be truncated (it may end early)",
            path.display()
        )
    })
}

/// The inflated stream, or `None` when it holds no bytes (an empty
/// compressed file, not an error); a read error here is a damaged file.
fn non_empty<'a>(
    mut inflated: impl Read + Send + 'a,
    path: &Path,
) -> Result<Option<Box<dyn Read + Send + 'a>>> {
    let mut first = [0u8; 1];
    let k = read_up_to(&mut inflated, &mut first).map_err(|e| {
        Error::input(
            path,
            format!("read error (truncated or damaged gzip file?): {e}"),
        )
    })?;
    if k == 0 {
        return Ok(None);
    }
    Ok(Some(Box::new(Cursor::new(first.to_vec()).chain(inflated))))
}

/// A reader run on a thread of its own: it reads blocks of
/// [`AHEAD_BLOCK`] bytes, up to [`AHEAD_BLOCKS`] ahead of the consumer, so
/// that the work of reading (inflating) overlaps the consumer's. The bytes,
/// and an error where the inner reader failed, come out in the inner
/// reader's order. The thread stops at the end of the input, at an error,
/// or when the `ReadAhead` is dropped.
pub struct ReadAhead {
    blocks: Receiver<std::io::Result<Vec<u8>>>,
    recycle: Sender<Vec<u8>>,
    cur: Vec<u8>,
    at: usize,
    done: bool,
}

impl ReadAhead {
    /// Starts reading `inner` on a new thread.
    pub fn new<R: Read + Send + 'static>(mut inner: R) -> ReadAhead {
        let (tx, blocks) = bounded(AHEAD_BLOCKS);
        let (recycle, used) = bounded::<Vec<u8>>(AHEAD_BLOCKS + 2);
        std::thread::spawn(move || {
            loop {
                let mut buf = used.try_recv().unwrap_or_default();
                buf.resize(AHEAD_BLOCK, 0);
                // As read_up_to, keeping what was read before an error.
                let (mut k, mut failed) = (0, None);
                while k < buf.len() {
                    match inner.read(&mut buf[k..]) {
                        Ok(0) => break,
                        Ok(got) => k += got,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                buf.truncate(k);
                // An empty block is the end; the bytes before an error come
                // first, then the error.
                let end = k == 0 || failed.is_some();
                if (k > 0 || failed.is_none()) && tx.send(Ok(buf)).is_err() {
                    break;
                }
                if let Some(e) = failed {
                    let _ = tx.send(Err(e));
                }
                if end {
                    break;
                }
            }
        });
        ReadAhead {
            blocks,
            recycle,
            cur: Vec::new(),
            at: 0,
            done: false,
        }
    }
}

impl Read for ReadAhead {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.cur.len() {
            if self.done || out.is_empty() {
                return Ok(0);
            }
            match self.blocks.recv() {
                Ok(Ok(b)) if b.is_empty() => self.done = true,
                Ok(Ok(b)) => {
                    let old = std::mem::replace(&mut self.cur, b);
                    let _ = self.recycle.try_send(old);
                    self.at = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Err(std::io::Error::other("the read-ahead thread stopped"));
                }
            }
        }
        let k = out.len().min(self.cur.len() - self.at);
        out[..k].copy_from_slice(&self.cur[self.at..self.at + k]);
        self.at += k;
        Ok(k)
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A reader that hands out `data` in pieces of odd sizes, then fails.
    struct Pieces {
        data: Vec<u8>,
        at: usize,
        fail: bool,
    }

    impl Read for Pieces {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.at == self.data.len() {
                return if self.fail {
                    Err(std::io::Error::other("broken"))
                } else {
                    Ok(0)
                };
            }
            let k = out
                .len()
                .min(1 + self.at % 7919)
                .min(self.data.len() - self.at);
            out[..k].copy_from_slice(&self.data[self.at..self.at + k]);
            self.at += k;
            Ok(k)
        }
    }

    fn bytes(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + i / 4093) as u8).collect()
    }

    #[test]
    fn read_ahead_gives_the_bytes_then_the_error() {
        for n in [0, 1, AHEAD_BLOCK - 1, AHEAD_BLOCK, 3 * AHEAD_BLOCK + 17] {
            for fail in [false, true] {
                let data = bytes(n);
                let mut r = ReadAhead::new(Pieces {
                    data: data.clone(),
                    at: 0,
                    fail,
                });
                let mut got = Vec::new();
                let res = r.read_to_end(&mut got);
                assert_eq!(got.len(), n);
                assert!(got == data, "n = {n}");
                assert_eq!(res.is_err(), fail, "n = {n}");
            }
        }
    }

    /// Plain, gzip (two members) and BGZF input, empty or not, read with
    /// one thread and with four: the same text; truncated compressed input
    /// is an error either way.
    #[test]
    fn every_encoding_reads_the_same_with_threads() {
        let text = bytes(300_000);
        let gz = |t: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(t).unwrap();
            e.finish().unwrap()
        };
        let bgzf = |t: &[u8]| {
            let mut w = noodles_bgzf::io::Writer::new(Vec::new());
            w.write_all(t).unwrap();
            w.finish().unwrap()
        };
        for t in [&text[..], &[][..]] {
            let two_members = [gz(&t[..t.len() / 2]), gz(&t[t.len() / 2..])].concat();
            for (what, input) in [
                ("plain", t.to_vec()),
                ("gzip", two_members),
                ("bgzf", bgzf(t)),
            ] {
                for threads in [1, 4] {
                    let r = decompressed_with(Cursor::new(input.clone()), Path::new("x"), threads)
                        .unwrap();
                    let mut got = Vec::new();
                    if let Some(mut r) = r {
                        r.read_to_end(&mut got).unwrap();
                    }
                    assert!(got == t, "{what}, {threads} threads, {} bytes", t.len());
                }
                if what != "plain" && !t.is_empty() {
                    // Inside the last member (or block).
                    let cut = input[..input.len() * 3 / 4].to_vec();
                    for threads in [1, 4] {
                        let r =
                            decompressed_with(Cursor::new(cut.clone()), Path::new("x"), threads);
                        let failed = match r {
                            Err(_) => true,
                            Ok(None) => false,
                            Ok(Some(mut r)) => r.read_to_end(&mut Vec::new()).is_err(),
                        };
                        assert!(failed, "{what} cut, {threads} threads: no error");
                    }
                }
            }
        }
    }
}
