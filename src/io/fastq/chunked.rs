//! FASTQ parsed in pieces on a pool, with the reads and the first error of the sequential parse.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use super::batch::{Batch, Recycle};
use super::source::{Stash, io_message, read_parse_message, take_record};
use crate::error::{Error, Result};

/// Bytes of FASTQ per piece parsed on one thread ([`Chunked`]).
pub(super) const PIECE_BYTES: usize = 4 << 20;

/// Threads from which FASTQ is parsed in pieces ([`Chunked`]). On the
/// 2-core development machine 4 threads parse 1.3x faster than one; at 2
/// threads the runs disagreed (docs/BENCHMARKS.md). Not yet measured on
/// more cores.
pub(super) const CHUNKED_MIN_THREADS: usize = 4;

/// FASTQ parsed in parallel: the input is read in chunks, cut at record
/// boundaries into pieces of about `piece` bytes (needletail's FASTQ is
/// four lines a record, so the boundaries are every fourth line end, found
/// by one pass over the line ends), and the pieces are parsed by needletail
/// on a pool, each into a [`Batch`]. The reads, and the first error with
/// its file line, are those of the sequential parse: a piece's lines up to
/// its first bad record are the lines the sequential parser would see from
/// the same record on.
pub(super) struct Chunked {
    pub(super) input: Box<dyn Read + Send>,
    /// Where the input ([`EndAtError`]) leaves its read error.
    pub(super) stash: Stash,
    pub(super) pool: rayon::ThreadPool,
    /// Bytes read and not yet parsed (the first `filled`); they start a
    /// record.
    pub(super) rest: Vec<u8>,
    pub(super) filled: usize,
    /// The file line (1-based) of `rest[0]`.
    pub(super) line: u64,
    pub(super) eof: bool,
    /// The read error that ended the input after the bytes in `rest`:
    /// reported once they are parsed.
    pub(super) error: Option<std::io::Error>,
    /// Parsed pieces in file order; an error ends the list.
    pub(super) ready: std::collections::VecDeque<Result<Batch>>,
    /// Records of the front piece already handed out.
    pub(super) taken: usize,
    /// Piece size, and bytes read at a time.
    pub(super) piece: usize,
    pub(super) chunk: usize,
}

impl Chunked {
    /// Reads the next chunk and parses it into pieces; false at the end.
    pub(super) fn refill(&mut self, path: &Path, recycle: &Arc<Recycle>) -> Result<bool> {
        use rayon::prelude::*;
        let mut want = self.chunk;
        let (cut, counts) = loop {
            if !self.eof {
                // `rest` keeps its length (no zeroing of what is read over);
                // `filled` bytes of it are input.
                if self.rest.len() < self.filled + want {
                    self.rest.resize(self.filled + want, 0);
                }
                let end = self.filled + want;
                // The input ends at a read error ([`EndAtError`]): what
                // was read before it is parsed first, so that the error
                // counts every record before it.
                let got =
                    crate::io::input::read_up_to(&mut self.input, &mut self.rest[self.filled..end])
                        .map_err(|e| Error::input(path, io_message(&e, (self.line - 1) / 4)))?;
                self.filled += got;
                self.eof = got < want;
                self.error = self.stash.lock().unwrap_or_else(|p| p.into_inner()).take();
            }
            if self.filled == 0 {
                return match self.error.take() {
                    // `line` starts a record: four lines each before it.
                    Some(e) => Err(Error::input(path, io_message(&e, (self.line - 1) / 4))),
                    None => Ok(false),
                };
            }
            // Line ends per region of `piece` bytes, counted in parallel.
            let buf = &self.rest[..self.filled];
            let counts: Vec<u64> = self
                .pool
                .install(|| buf.par_chunks(self.piece).map(count_line_ends).collect());
            if self.eof && self.error.is_none() {
                break (self.filled, counts);
            }
            // The end of the last whole record: one past line end number
            // 4 * (total / 4) - 1, found back from the end.
            let total: u64 = counts.iter().sum();
            let whole = total / 4 * 4;
            if whole > 0 {
                let mut nl = buf.len();
                for _ in 0..=(total - whole) {
                    nl = memchr::memrchr(b'\n', &buf[..nl]).expect("counted");
                }
                break (nl + 1, counts);
            }
            if self.error.is_some() {
                // No whole record before the error.
                break (0, counts);
            }
            // One record longer than all read: read more.
            want = want.max(self.filled);
        };
        // Pieces: a region's piece starts at the first record boundary in
        // it (its line ends' numbers known from the counts before it).
        let buf = &self.rest[..cut];
        let mut starts = vec![(0usize, 0u64)];
        let mut before = 0u64;
        for (r, &c) in counts.iter().enumerate() {
            let at = r * self.piece;
            if r > 0 && at < cut {
                // The k-th line end from `at` (0-based) is number before + k;
                // a record ends at a number 3 mod 4.
                let k = (3 + 4 - before % 4) % 4;
                let mut from = at;
                let mut found = None;
                for _ in 0..=k {
                    match memchr::memchr(b'\n', &buf[from..]) {
                        Some(x) => {
                            found = Some(from + x);
                            from += x + 1;
                        }
                        None => {
                            found = None;
                            break;
                        }
                    }
                }
                if let Some(nl) = found.filter(|&nl| nl + 1 < cut) {
                    let lines = before + k + 1;
                    if nl + 1 > starts.last().expect("first").0 {
                        starts.push((nl + 1, lines));
                    }
                }
            }
            before += c;
        }
        let pieces: Vec<(usize, usize, u64)> = starts
            .iter()
            .enumerate()
            .map(|(k, &(s, lines))| {
                let e = starts.get(k + 1).map_or(cut, |x| x.0);
                (s, e, self.line + lines)
            })
            .collect();
        // Line ends within [0, cut): all counted regions but the bytes past
        // the cut (one partial record at most).
        let lines_cut = before - count_line_ends(&self.rest[cut..self.filled]);
        let parsed: Vec<Result<Batch>> = self.pool.install(|| {
            pieces
                .par_iter()
                .map(|&(s, e, l)| parse_piece(&buf[s..e], l, path, recycle))
                .collect()
        });
        for p in parsed {
            let stop = p.is_err();
            self.ready.push_back(p);
            if stop {
                // Nothing after the first error is read.
                self.eof = true;
                self.filled = 0;
                return Ok(true);
            }
        }
        self.rest.copy_within(cut..self.filled, 0);
        self.filled -= cut;
        self.line += lines_cut;
        if let Some(e) = self.error.take() {
            // A partial record before the error is part of the damage.
            self.filled = 0;
            self.ready
                .push_back(Err(Error::input(path, io_message(&e, (self.line - 1) / 4))));
        }
        Ok(true)
    }
}

/// Line ends in `bytes`: byte counts of 255-byte blocks, which the
/// compiler vectorizes (a count over the whole slice it does not).
fn count_line_ends(bytes: &[u8]) -> u64 {
    bytes
        .chunks(255)
        .map(|c| u64::from(c.iter().map(|&b| u8::from(b == b'\n')).sum::<u8>()))
        .sum()
}

/// Parses one piece of FASTQ (whole records, or the input's last bytes)
/// starting on file line `line`.
fn parse_piece(bytes: &[u8], line: u64, path: &Path, recycle: &Arc<Recycle>) -> Result<Batch> {
    // Names, bases and qualities take less than the piece's bytes.
    let mut batch = Batch::recycled(recycle, bytes.len());
    let shift = |mut e: needletail::errors::ParseError| {
        e.position.line += line - 1;
        Error::input(path, read_parse_message(&e))
    };
    let mut parser = needletail::parse_fastx_reader(bytes).map_err(shift)?;
    while let Some(rec) = parser.next() {
        let rec = rec.map_err(shift)?;
        take_record(&rec, line - 1, path, &mut batch)?;
    }
    Ok(batch)
}
