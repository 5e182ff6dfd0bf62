//! Reads from a file or stdin, decompressed, parsed record by record (needletail) or in pieces.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use needletail::FastxReader;

use super::batch::{Batch, Recycle, check_read, read_ok};
use super::chunked::{CHUNKED_MIN_THREADS, Chunked, PIECE_BYTES};
use crate::error::{Error, Result};

/// Reads from a FASTQ or FASTA file (plain or gzip), or stdin for `-`.
pub struct ReadSource {
    pub(super) path: PathBuf,
    parser: Parser,
    pub(super) recycle: Arc<Recycle>,
    /// Records read so far by the sequential parser (for messages).
    pub(super) records: u64,
    /// A read error of the input, held until the records before it are
    /// handed out ([`EndAtError`]).
    pub(super) stash: Stash,
}

/// Where [`EndAtError`] keeps its input's error.
pub(super) type Stash = Arc<std::sync::Mutex<Option<std::io::Error>>>;

/// Its input until that fails, then the end: the error waits in the stash,
/// so that the parser (needletail, or the parser in pieces) hands out every
/// record read before it (and does not report a record cut by it as
/// malformed), and the message can count them.
pub(super) struct EndAtError {
    pub(super) input: Box<dyn Read + Send>,
    pub(super) stash: Stash,
}

impl Read for EndAtError {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.input.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    *self.stash.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    return Ok(0);
                }
                r => return r,
            }
        }
    }
}

/// How a [`ReadSource`] parses.
enum Parser {
    /// Empty input.
    None,
    /// needletail, record by record, on the caller's thread.
    Seq(Box<dyn FastxReader>),
    /// FASTQ in pieces on a pool (with threads to spare).
    Chunked(Box<Chunked>),
}

impl ReadSource {
    /// Opens `path` (`-` is stdin), compressed input decompressed and FASTQ
    /// parsed with up to `threads` threads ([`crate::io::input::decompressed_with`],
    /// [`Chunked`]). An empty input has no reads.
    pub fn open(path: &Path, threads: usize) -> Result<ReadSource> {
        if path.as_os_str() == "-" {
            Self::with_threads(std::io::stdin(), path, threads)
        } else {
            let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
            Self::with_threads(f, path, threads)
        }
    }

    /// Reads from any reader; `path` names it in messages. Gzip is
    /// decompressed here rather than by needletail, so that an empty
    /// compressed file (no reads) is told apart from a truncated one (error).
    pub fn from_reader<R: Read + Send + 'static>(reader: R, path: &Path) -> Result<ReadSource> {
        Self::with_threads(reader, path, 1)
    }

    /// [`ReadSource::from_reader`], decompressing and parsing with up to
    /// `threads` threads.
    pub fn with_threads<R: Read + Send + 'static>(
        reader: R,
        path: &Path,
        threads: usize,
    ) -> Result<ReadSource> {
        let pieces = (threads >= CHUNKED_MIN_THREADS).then_some(PIECE_BYTES);
        Self::with_pieces(reader, path, threads, pieces)
    }

    /// [`ReadSource::with_threads`], FASTQ parsed in pieces of `piece` bytes
    /// when given and `threads >= 2` (tests use small ones).
    pub(super) fn with_pieces<R: Read + Send + 'static>(
        reader: R,
        path: &Path,
        threads: usize,
        piece: Option<usize>,
    ) -> Result<ReadSource> {
        let stash = Stash::default();
        let parser = match crate::io::input::decompressed_with(reader, path, threads)? {
            None => Parser::None,
            Some(mut input) => {
                let mut first = [0u8; 1];
                let k = crate::io::input::read_up_to(&mut input, &mut first)
                    .map_err(|e| Error::input(path, io_message(&e, 0)))?;
                // Both parsers read through it: a read error waits until
                // the records before it are handed out, and counts them.
                let input = EndAtError {
                    input: Box::new(std::io::Cursor::new(first[..k].to_vec()).chain(input)),
                    stash: Arc::clone(&stash),
                };
                if let Some(piece) = piece.filter(|_| threads >= 2 && first[0] == b'@') {
                    let pool = crate::thread_pool(threads)?;
                    Parser::Chunked(Box::new(Chunked {
                        input: Box::new(input),
                        stash: Arc::clone(&stash),
                        pool,
                        rest: Vec::new(),
                        filled: 0,
                        line: 1,
                        eof: false,
                        error: None,
                        ready: Default::default(),
                        taken: 0,
                        piece: piece.max(1),
                        chunk: threads * piece.max(1),
                    }))
                } else {
                    Parser::Seq(
                        needletail::parse_fastx_reader(input)
                            .map_err(|e| Error::input(path, read_parse_message(&e)))?,
                    )
                }
            }
        };
        Ok(ReadSource {
            path: path.into(),
            parser,
            recycle: Arc::default(),
            records: 0,
            stash,
        })
    }

    /// The next batch of at least one read and about `max_bases` bases, or
    /// `None` at the end of the input.
    pub fn next_batch(&mut self, max_bases: usize) -> Result<Option<Batch>> {
        if let Parser::Chunked(c) = &mut self.parser {
            // The pieces' buffers join it, and go back to the pool with it.
            let mut batch = Batch::returning_to(&self.recycle);
            // Whole pieces (the first moved, not copied).
            while batch.bases < max_bases || batch.is_empty() {
                if c.ready.is_empty() && !c.refill(&self.path, &self.recycle)? {
                    break;
                }
                let front = c.ready.pop_front().expect("refilled");
                let piece = front?;
                batch.append(piece, c.taken);
                c.taken = 0;
            }
            return Ok((!batch.is_empty()).then_some(batch));
        }
        let mut batch = Batch::recycled(&self.recycle, 0);
        while batch.bases < max_bases || batch.is_empty() {
            if !self.push_next(&mut batch)? {
                break;
            }
        }
        Ok((!batch.is_empty()).then_some(batch))
    }

    /// Reads one record into `batch`; false at the end of the input.
    pub(super) fn push_next(&mut self, batch: &mut Batch) -> Result<bool> {
        match &mut self.parser {
            Parser::None => Ok(false),
            Parser::Seq(parser) => {
                let next = parser.next();
                if next.as_ref().is_none_or(|r| r.is_err()) {
                    // The input's own error first: what needletail says
                    // after it (a record cut short) is its consequence.
                    let stashed = self.stash.lock().unwrap_or_else(|p| p.into_inner()).take();
                    if let Some(e) = stashed {
                        return Err(Error::input(&self.path, io_message(&e, self.records)));
                    }
                }
                let Some(rec) = next else {
                    return Ok(false);
                };
                let rec = rec.map_err(|e| {
                    let msg = match e.kind {
                        // needletail has no position for these (line 0).
                        needletail::errors::ParseErrorKind::Io => io_message(&e.msg, self.records),
                        _ => read_parse_message(&e),
                    };
                    Error::input(&self.path, msg)
                })?;
                take_record(&rec, 0, &self.path, batch)?;
                self.records += 1;
                Ok(true)
            }
            Parser::Chunked(c) => loop {
                if c.ready.is_empty() && !c.refill(&self.path, &self.recycle)? {
                    return Ok(false);
                }
                match c.ready.front() {
                    Some(Err(_)) => {
                        return Err(c.ready.pop_front().expect("front").expect_err("an error"));
                    }
                    Some(Ok(piece)) if c.taken < piece.len() => {
                        batch.append_one(piece, c.taken);
                        c.taken += 1;
                        return Ok(true);
                    }
                    _ => {
                        c.ready.pop_front();
                        c.taken = 0;
                    }
                }
            },
        }
    }

    /// The path it reads (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A record as parsed into `batch`, checked ([`read_ok`], [`check_read`]);
/// `line_offset` is added to needletail's line (pieces start mid-file).
pub(super) fn take_record(
    rec: &needletail::parser::SequenceRecord<'_>,
    line_offset: u64,
    path: &Path,
    batch: &mut Batch,
) -> Result<()> {
    let seq = rec.raw_seq();
    let qual = rec.qual();
    let joined;
    let seq = if rec.format() == needletail::parser::Format::Fasta && seq.contains(&b'\n') {
        joined = rec.seq();
        &joined[..]
    } else {
        seq
    };
    if !read_ok(rec.id(), seq, qual) {
        let line = rec.start_line_number() + line_offset;
        check_read(rec.id(), seq, qual)
            .map_err(|m| Error::input(path, format!("record at line {line}: {m}")))?;
    }
    batch.push(rec.id(), seq, qual);
    Ok(())
}

/// A read error of the (decompressed) input after `records` whole records
/// were read, worded as needletail's.
pub(super) fn io_message(e: &impl std::fmt::Display, records: u64) -> String {
    format!("read error after {records} records (truncated or damaged compressed file?): {e}")
}

/// needletail's error → a message with line and record.
pub(super) fn read_parse_message(e: &needletail::errors::ParseError) -> String {
    use needletail::errors::ParseErrorKind as K;
    let at = &e.position;
    match e.kind {
        K::Io => format!(
            "read error (truncated or damaged compressed file?): {}",
            e.msg
        ),
        K::UnknownFormat => "not a FASTQ or FASTA file (first byte is neither '@' nor '>')".into(),
        K::EmptyFile => "not a FASTQ or FASTA file".into(),
        K::UnexpectedEnd => format!("truncated record ({at})"),
        K::UnequalLengths => format!(
            "quality and sequence lengths differ, or the file ends inside the record ({at})"
        ),
        K::InvalidSeparator => format!(
            "expected a '+' separator line ({at}); a sequence over several lines (multi-line FASTQ) is not read: `seqtk seq -l0` writes it on one"
        ),
        K::InvalidStart => {
            // needletail says "Expected '@' but found '<the byte>", the byte
            // escaped: a blank line comes out as a backslash and an n.
            let after = |tag: &str| e.msg.split_once(tag).map(|(_, rest)| rest);
            let want = after("Expected '").and_then(|r| r.chars().next());
            match (want, after("found '")) {
                (Some(want), Some(got))
                    if got.starts_with("\\n")
                        || got.starts_with("\\r")
                        || got.starts_with('\n') =>
                {
                    format!("a blank line where a record should start with '{want}' ({at})")
                }
                (Some(want), Some(got)) if !got.is_empty() => {
                    let got: String = got.chars().take_while(|&c| c != '\'').collect();
                    format!("a record should start with '{want}', not '{got}' ({at})")
                }
                _ => format!("{} ({at})", e.msg),
            }
        }
    }
}
