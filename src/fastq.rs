//! FASTQ (or FASTA) reads in batches sized by bases. A batch keeps all its
//! reads in one flat buffer, so parsing allocates per batch, not per read.

use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use needletail::FastxReader;

use crate::error::{Error, Result};
use crate::read::{ReadView, base_name};

/// One read inside a [`Batch`]'s buffers.
#[derive(Clone, Debug)]
struct Rec {
    /// Which buffer.
    part: u32,
    name: Range<usize>,
    seq: Range<usize>,
    qual: Option<Range<usize>>,
}

/// A batch of reads. Its reads lie in one or more buffers (pieces parsed
/// apart join a batch without a copy). A batch from a [`ReadSource`] gives
/// its buffers back to it when dropped ([`Recycle`]).
#[derive(Debug, Default)]
pub struct Batch {
    parts: Vec<Vec<u8>>,
    recs: Vec<Rec>,
    bases: usize,
    recycle: Option<Arc<Recycle>>,
}

impl Drop for Batch {
    fn drop(&mut self) {
        if let Some(r) = &self.recycle {
            for p in self.parts.drain(..) {
                Pool::give(&r.bytes, p);
            }
            Pool::give(&r.recs, std::mem::take(&mut self.recs));
        }
    }
}

/// Buffers of dropped batches (their bytes and their records), for the
/// next ones: memory the reader wrote before is written again, instead of
/// fresh pages the kernel must zero and map for every batch (with
/// fmalign's allocator every buffer of 4 MiB or more is a mapping of its
/// own, `alloc::BigPages`): 1.4x on the reader (docs/BENCHMARKS.md). At
/// most [`RECYCLE_BYTES`] are kept, so the peak memory stays that of the
/// batches in flight.
#[derive(Debug, Default)]
struct Recycle {
    bytes: Mutex<Pool<u8>>,
    recs: Mutex<Pool<Rec>>,
}

/// Kept buffers of one kind and their bytes.
#[derive(Debug)]
struct Pool<T> {
    free: Vec<Vec<T>>,
    bytes: usize,
}

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Pool {
            free: Vec::new(),
            bytes: 0,
        }
    }
}

/// Bytes [`Recycle`] keeps of each kind.
const RECYCLE_BYTES: usize = 64 << 20;

impl<T> Pool<T> {
    /// An empty buffer (of at least `n` elements).
    fn take(pool: &Mutex<Pool<T>>, n: usize) -> Vec<T> {
        let got = pool.lock().ok().and_then(|mut p| {
            let v = p.free.pop()?;
            p.bytes -= v.capacity() * std::mem::size_of::<T>();
            Some(v)
        });
        let mut v = got.unwrap_or_default();
        v.clear();
        v.reserve(n);
        v
    }

    fn give(pool: &Mutex<Pool<T>>, v: Vec<T>) {
        let b = v.capacity() * std::mem::size_of::<T>();
        if b == 0 {
            return;
        }
        if let Ok(mut p) = pool.lock()
            && p.bytes + b <= RECYCLE_BYTES
        {
            p.bytes += b;
            p.free.push(v);
        }
    }
}

impl Batch {
    /// An empty batch with buffers from `recycle` (the first holds `bytes`
    /// without growing), which go back there when it is dropped.
    fn recycled(recycle: &Arc<Recycle>, bytes: usize) -> Batch {
        let mut b = Batch::returning_to(recycle);
        b.parts.push(Pool::take(&recycle.bytes, bytes));
        b
    }

    /// An empty batch with no buffer yet, whose buffers go to `recycle`
    /// when it is dropped.
    fn returning_to(recycle: &Arc<Recycle>) -> Batch {
        Batch {
            parts: Vec::new(),
            recs: Pool::take(&recycle.recs, 0),
            bases: 0,
            recycle: Some(Arc::clone(recycle)),
        }
    }

    /// Number of reads.
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// Whether the batch has no reads.
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// Number of bases.
    pub fn bases(&self) -> usize {
        self.bases
    }

    /// Read `i`.
    pub fn get(&self, i: usize) -> ReadView<'_> {
        let r = &self.recs[i];
        let data = &self.parts[r.part as usize];
        ReadView {
            name: &data[r.name.clone()],
            seq: &data[r.seq.clone()],
            qual: r.qual.clone().map(|q| &data[q]),
        }
    }

    /// A batch of reads held in memory (name, bases, qualities), checked as
    /// the FASTQ reader checks a record; the message names the read.
    pub fn from_reads<'r>(
        reads: impl IntoIterator<Item = ReadView<'r>>,
    ) -> std::result::Result<Batch, String> {
        let mut b = Batch::default();
        for (i, r) in reads.into_iter().enumerate() {
            check_read(r.name, r.seq, r.qual)
                .map_err(|e| format!("read {} of the batch: {e}", i + 1))?;
            if let Some(q) = r.qual
                && q.len() != r.seq.len()
            {
                return Err(format!(
                    "read {} of the batch ('{}'): {} bases but {} qualities",
                    i + 1,
                    String::from_utf8_lossy(r.name).escape_debug(),
                    r.seq.len(),
                    q.len()
                ));
            }
            b.push(r.name, r.seq, r.qual);
        }
        Ok(b)
    }

    /// Appends the reads of `other` from read `from` on (its buffers move).
    fn append(&mut self, mut other: Batch, from: usize) {
        let k = self.parts.len() as u32;
        self.parts.append(&mut other.parts);
        for mut r in other.recs.drain(..).skip(from) {
            r.part += k;
            self.bases += r.seq.len();
            self.recs.push(r);
        }
    }

    /// Appends read `i` of `other`.
    fn append_one(&mut self, other: &Batch, i: usize) {
        let r = other.get(i);
        self.push(r.name, r.seq, r.qual);
    }

    fn push(&mut self, id: &[u8], seq: &[u8], qual: Option<&[u8]>) {
        let name_len = id
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(id.len());
        if self.parts.is_empty() {
            self.parts.push(Vec::new());
        }
        let part = self.parts.len() - 1;
        let data = &mut self.parts[part];
        let mut put = |b: &[u8]| {
            let s = data.len();
            data.extend_from_slice(b);
            s..data.len()
        };
        let name = put(&id[..name_len]);
        let seq_r = put(seq);
        let qual = qual.map(&mut put);
        self.bases += seq.len();
        self.recs.push(Rec {
            part: part as u32,
            name,
            seq: seq_r,
            qual,
        });
    }
}

/// Bytes of FASTQ per piece parsed on one thread ([`Chunked`]).
const PIECE_BYTES: usize = 4 << 20;

/// Threads from which FASTQ is parsed in pieces ([`Chunked`]). On the
/// 2-core development machine 4 threads parse 1.3x faster than one; at 2
/// threads the runs disagreed (docs/BENCHMARKS.md). Not yet measured on
/// more cores.
const CHUNKED_MIN_THREADS: usize = 4;

/// Reads from a FASTQ or FASTA file (plain or gzip), or stdin for `-`.
pub struct ReadSource {
    path: PathBuf,
    parser: Parser,
    recycle: Arc<Recycle>,
    /// Records read so far by the sequential parser (for messages).
    records: u64,
    /// A read error of the input, held until the records before it are
    /// handed out ([`EndAtError`]).
    stash: Stash,
}

/// Where [`EndAtError`] keeps its input's error.
type Stash = Arc<std::sync::Mutex<Option<std::io::Error>>>;

/// Its input until that fails, then the end: the error waits in the stash,
/// so that the parser (needletail, or the parser in pieces) hands out every
/// record read before it (and does not report a record cut by it as
/// malformed), and the message can count them.
struct EndAtError {
    input: Box<dyn Read + Send>,
    stash: Stash,
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

/// FASTQ parsed in parallel: the input is read in chunks, cut at record
/// boundaries into pieces of about `piece` bytes (needletail's FASTQ is
/// four lines a record, so the boundaries are every fourth line end, found
/// by one pass over the line ends), and the pieces are parsed by needletail
/// on a pool, each into a [`Batch`]. The reads, and the first error with
/// its file line, are those of the sequential parse: a piece's lines up to
/// its first bad record are the lines the sequential parser would see from
/// the same record on.
struct Chunked {
    input: Box<dyn Read + Send>,
    /// Where the input ([`EndAtError`]) leaves its read error.
    stash: Stash,
    pool: rayon::ThreadPool,
    /// Bytes read and not yet parsed (the first `filled`); they start a
    /// record.
    rest: Vec<u8>,
    filled: usize,
    /// The file line (1-based) of `rest[0]`.
    line: u64,
    eof: bool,
    /// The read error that ended the input after the bytes in `rest`:
    /// reported once they are parsed.
    error: Option<std::io::Error>,
    /// Parsed pieces in file order; an error ends the list.
    ready: std::collections::VecDeque<Result<Batch>>,
    /// Records of the front piece already handed out.
    taken: usize,
    /// Piece size, and bytes read at a time.
    piece: usize,
    chunk: usize,
}

impl ReadSource {
    /// Opens `path` (`-` is stdin), compressed input decompressed and FASTQ
    /// parsed with up to `threads` threads ([`crate::input::decompressed_with`],
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
    fn with_pieces<R: Read + Send + 'static>(
        reader: R,
        path: &Path,
        threads: usize,
        piece: Option<usize>,
    ) -> Result<ReadSource> {
        let stash = Stash::default();
        let parser = match crate::input::decompressed_with(reader, path, threads)? {
            None => Parser::None,
            Some(mut input) => {
                let mut first = [0u8; 1];
                let k = crate::input::read_up_to(&mut input, &mut first)
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
    fn push_next(&mut self, batch: &mut Batch) -> Result<bool> {
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
fn take_record(
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
fn io_message(e: &impl std::fmt::Display, records: u64) -> String {
    format!("read error after {records} records (truncated or damaged compressed file?): {e}")
}

impl Chunked {
    /// Reads the next chunk and parses it into pieces; false at the end.
    fn refill(&mut self, path: &Path, recycle: &Arc<Recycle>) -> Result<bool> {
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
                    crate::input::read_up_to(&mut self.input, &mut self.rest[self.filled..end])
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

/// Paired reads: two files read in step, or one interleaved file (mate 1,
/// mate 2, mate 1, …).
pub struct PairSource {
    one: ReadSource,
    two: Option<ReadSource>,
    /// Pairs read so far (for messages).
    pairs: u64,
}

impl PairSource {
    /// Mates from two files.
    pub fn two_files(one: ReadSource, two: ReadSource) -> PairSource {
        PairSource {
            one,
            two: Some(two),
            pairs: 0,
        }
    }

    /// Mates interleaved in one file.
    pub fn interleaved(one: ReadSource) -> PairSource {
        PairSource {
            one,
            two: None,
            pairs: 0,
        }
    }

    /// The file mate 2 comes from.
    fn second_path(&self) -> &Path {
        self.two.as_ref().unwrap_or(&self.one).path()
    }

    /// The next pairs, until their bases (both mates) reach `max_bases` and
    /// there are at least `min_pairs` (always at least one pair); `None` at
    /// the end. An error when one file ends before the other, when an
    /// interleaved file has an odd number of records, or when two mates'
    /// names differ (after dropping `/1` and `/2`).
    pub fn next_batch(
        &mut self,
        max_bases: usize,
        min_pairs: usize,
    ) -> Result<Option<(Batch, Batch)>> {
        let (mut a, mut b) = (
            Batch::recycled(&self.one.recycle, 0),
            Batch::recycled(&self.two.as_ref().unwrap_or(&self.one).recycle, 0),
        );
        while a.bases + b.bases < max_bases || a.len() < min_pairs.max(1) {
            let got1 = self.one.push_next(&mut a)?;
            let got2 = match self.two.as_mut() {
                Some(two) => two.push_next(&mut b)?,
                None => got1 && self.one.push_next(&mut b)?,
            };
            match (got1, got2) {
                (false, false) => break,
                (true, true) => {}
                _ if self.two.is_none() => {
                    return Err(Error::input(
                        self.one.path(),
                        format!(
                            "an odd number of records ({}): --interleaved needs mate 1 and mate 2 of every pair",
                            2 * self.pairs + 1
                        ),
                    ));
                }
                _ => {
                    let (ended, longer) = if got1 {
                        (self.second_path(), self.one.path())
                    } else {
                        (self.one.path(), self.second_path())
                    };
                    return Err(Error::input(
                        ended,
                        format!(
                            "ends after {} reads, but {} has more: the two files must hold the same pairs",
                            self.pairs,
                            longer.display()
                        ),
                    ));
                }
            }
            let k = a.len() - 1;
            let (n1, n2) = (a.get(k).name, b.get(k).name);
            if base_name(n1) != base_name(n2) {
                let shown = |n: &[u8]| String::from_utf8_lossy(n).into_owned();
                let msg = if self.two.is_some() {
                    format!(
                        "pair {}: mate names differ ('{}' in {}, '{}' here); the files must list the same pairs in the same order",
                        self.pairs + 1,
                        shown(n1),
                        self.one.path().display(),
                        shown(n2)
                    )
                } else {
                    format!(
                        "pair {} (records {} and {}): mate names differ ('{}', '{}'); --interleaved needs mate 1 and mate 2 of each pair one after the other",
                        self.pairs + 1,
                        2 * self.pairs + 1,
                        2 * self.pairs + 2,
                        shown(n1),
                        shown(n2)
                    )
                };
                return Err(Error::input(self.second_path(), msg));
            }
            self.pairs += 1;
        }
        Ok((!a.is_empty()).then_some((a, b)))
    }
}

/// What SAM can carry (SAM v1 §1.4): QNAME `[!-?A-~]{1,254}` (the name up
/// to the first whitespace; an empty one is written `*`), SEQ letters (and
/// `=`, `.`), QUAL `[!-~]`. A read that breaks them is refused with the
/// reason, rather than written as a record samtools would reject.
/// The first character of `bytes` whose byte fails `ok`, as a message
/// shows it: quoted and escaped (`'é'` for a UTF-8 character, not the
/// Latin-1 reading of its first byte, `'\t'`), or its byte in hex where it
/// is not UTF-8.
fn first_not(bytes: &[u8], ok: impl Fn(u8) -> bool) -> Option<String> {
    let i = bytes.iter().position(|&b| !ok(b))?;
    let rest = &bytes[i..];
    let valid = match std::str::from_utf8(rest) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap_or_default(),
    };
    Some(match valid.chars().next() {
        Some(c) => format!("{c:?}"),
        None => format!("byte 0x{:02X} (not UTF-8)", rest[0]),
    })
}

fn check_read(id: &[u8], seq: &[u8], qual: Option<&[u8]>) -> std::result::Result<(), String> {
    let name = &id[..id
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(id.len())];
    let shown = |b: &[u8]| String::from_utf8_lossy(b).escape_debug().to_string();
    if name.len() > 254 {
        return Err(format!(
            "read name of {} characters; SAM allows at most 254",
            name.len()
        ));
    }
    if let Some(c) = first_not(name, |b| (b'!'..=b'~').contains(&b) && b != b'@') {
        return Err(format!(
            "read name '{}' has the character {c}, which a SAM read name cannot hold (printable ASCII except '@')",
            shown(name),
        ));
    }
    if let Some(c) = first_not(seq, |b| b.is_ascii_alphabetic() || b == b'=' || b == b'.') {
        return Err(format!(
            "read '{}' has {c} in its sequence (expected letters)",
            shown(name),
        ));
    }
    if let Some(c) = qual.and_then(|q| first_not(q, |b| (b'!'..=b'~').contains(&b))) {
        return Err(format!(
            "read '{}' has {c} in its qualities (expected '!' to '~')",
            shown(name),
        ));
    }
    Ok(())
}

/// Whether [`check_read`] accepts the read, without its messages: each
/// check a branch-free fold over the bytes, which the compiler vectorizes
/// (the checks with early exits took 60% of the reader's time).
#[inline]
fn read_ok(id: &[u8], seq: &[u8], qual: Option<&[u8]>) -> bool {
    fn none(bytes: &[u8], bad: impl Fn(u8) -> bool) -> bool {
        bytes.iter().fold(0u8, |acc, &b| acc | u8::from(bad(b))) == 0
    }
    let name = &id[..id
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(id.len())];
    name.len() <= 254
        && none(name, |b| b.wrapping_sub(b'!') > b'~' - b'!' || b == b'@')
        // A letter (either case: `| 0x20` maps A-Z onto a-z), '=' or '.'.
        && none(seq, |b| {
            (b | 0x20).wrapping_sub(b'a') >= 26 && b != b'=' && b != b'.'
        })
        && qual.is_none_or(|q| none(q, |b| b.wrapping_sub(b'!') > b'~' - b'!'))
}

/// needletail's error → a message with line and record.
fn read_parse_message(e: &needletail::errors::ParseError) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn source(s: &'static [u8]) -> ReadSource {
        ReadSource::from_reader(s, Path::new("r.fq")).unwrap()
    }

    #[test]
    fn batches_by_bases() {
        let mut src = source(b"@a x\nACGT\n+\nIIII\n@b\nAC\n+\nII\n@c\nA\n+\nI\n");
        let b1 = src.next_batch(5).unwrap().unwrap();
        assert_eq!(b1.len(), 2);
        assert_eq!(b1.get(0).name, b"a");
        assert_eq!(b1.get(1).qual, Some(&b"II"[..]));
        let b2 = src.next_batch(5).unwrap().unwrap();
        assert_eq!(b2.len(), 1);
        assert!(src.next_batch(5).unwrap().is_none());
    }

    /// The fast check agrees with the one that explains: on every single
    /// byte in each field, and on random reads.
    #[test]
    fn fast_check_agrees_with_check_read() {
        for b in 0..=255u8 {
            let one = [b];
            for (id, seq, qual) in [
                (&one[..], &b"ACGT"[..], Some(&b"IIII"[..])),
                (b"r", &one[..], Some(&b"I"[..])),
                (b"r", b"A", Some(&one[..])),
                (b"r", &one[..], None),
            ] {
                assert_eq!(
                    read_ok(id, seq, qual),
                    check_read(id, seq, qual).is_ok(),
                    "byte {b}: {id:?} {seq:?} {qual:?}"
                );
            }
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut byte = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly valid bytes, sometimes any byte.
            if x.is_multiple_of(97) {
                (x >> 8) as u8
            } else {
                b'!' + (x >> 8) as u8 % 90
            }
        };
        for len in [0, 1, 31, 32, 33, 150, 254, 255, 300] {
            for _ in 0..200 {
                let id: Vec<u8> = (0..len.min(260)).map(|_| byte()).collect();
                let seq: Vec<u8> = (0..len)
                    .map(|_| b"ACGTNacgtn=.X"[byte() as usize % 13])
                    .collect();
                let qual: Vec<u8> = (0..len).map(|_| byte()).collect();
                assert_eq!(
                    read_ok(&id, &seq, Some(&qual)),
                    check_read(&id, &seq, Some(&qual)).is_ok(),
                    "{id:?} {seq:?} {qual:?}"
                );
            }
        }
    }

    type Reads = Vec<(Vec<u8>, Vec<u8>, Option<Vec<u8>>)>;

    /// Every read of `src` in batches of `bases`, or the first error.
    fn all_reads(src: Result<ReadSource>, bases: usize) -> std::result::Result<Reads, String> {
        let mut src = src.map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        while let Some(b) = src.next_batch(bases).map_err(|e| e.to_string())? {
            for i in 0..b.len() {
                let r = b.get(i);
                out.push((r.name.to_vec(), r.seq.to_vec(), r.qual.map(|q| q.to_vec())));
            }
        }
        Ok(out)
    }

    /// FASTQ of `n` reads of varied lengths (some empty, some long), names
    /// with comments, some lines ending in CR LF.
    fn fastq_text(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut t = Vec::new();
        for i in 0..n {
            let len = match next() % 10 {
                0 => 0,
                1 => 300 + (next() % 700) as usize,
                _ => 1 + (next() % 150) as usize,
            };
            let eol: &[u8] = if i % 7 == 3 { b"\r\n" } else { b"\n" };
            t.extend_from_slice(format!("@r{i} c{}", next() % 9).as_bytes());
            t.extend_from_slice(eol);
            t.extend((0..len).map(|_| b"ACGTN"[(next() % 5) as usize]));
            t.extend_from_slice(eol);
            t.push(b'+');
            t.extend_from_slice(eol);
            t.extend((0..len).map(|_| b'!' + (next() % 41) as u8));
            t.extend_from_slice(eol);
        }
        t
    }

    /// The parse in pieces on a pool gives the sequential parse's reads,
    /// and on damaged input its first error (the same message and line):
    /// pieces of 1 byte (a record each) to larger than the input, records
    /// longer than a chunk, batch sizes of one read and of many.
    #[test]
    fn pieces_parse_as_the_sequential_parser() {
        let good = fastq_text(200, 7);
        let mut inputs = vec![good.clone(), good[..good.len() - 1].to_vec()];
        let mut x = 0x51_7cc1_b727_220au64;
        for k in 0..60u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let at = (x % good.len() as u64) as usize;
            let mut t = good.clone();
            match k % 5 {
                0 => {
                    t.remove(at);
                }
                1 => t.insert(at, b'\n'),
                2 => t[at] = b' ' + (x >> 20) as u8 % 95,
                3 => t.truncate(at),
                _ => t[at] = b'@',
            }
            inputs.push(t);
        }
        for (k, input) in inputs.iter().enumerate() {
            let path = Path::new("r.fq");
            let want = all_reads(
                ReadSource::from_reader(Cursor::new(input.clone()), path),
                1000,
            );
            for (threads, piece) in [(3, 1), (2, 37), (3, 500), (2, 1 << 20)] {
                for bases in [1, 1000] {
                    let src = ReadSource::with_pieces(
                        Cursor::new(input.clone()),
                        path,
                        threads,
                        Some(piece),
                    );
                    let got = all_reads(src, bases);
                    match (&got, &want) {
                        (Ok(g), Ok(w)) => assert!(
                            g == w,
                            "input {k}: reads differ ({threads} threads, pieces of {piece})"
                        ),
                        (Err(g), Err(w)) => {
                            assert_eq!(g, w, "input {k} ({threads} threads, pieces of {piece})")
                        }
                        _ => panic!(
                            "input {k} ({threads} threads, pieces of {piece}): {got:?} against {want:?}",
                            got = got.as_ref().map(|r| r.len()),
                            want = want.as_ref().map(|r| r.len())
                        ),
                    }
                }
            }
        }
        assert!(
            matches!(all_reads(ReadSource::from_reader(Cursor::new(good), Path::new("r.fq")), 1), Ok(r) if r.len() == 200)
        );
    }

    /// Gzip input: zero padding after the data is read as its end (as zlib,
    /// bwa and samtools read it); other bytes after it are an error that
    /// counts every record before it; a cut stream, every whole record it
    /// inflates to. Both parsers, the sequential and the one in pieces.
    #[test]
    fn gzip_ends_count_every_record_before_them() {
        use std::io::Write;
        let good = fastq_text(200, 11);
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&good).unwrap();
        let gz = z.finish().unwrap();
        let with = |tail: &[u8]| [&gz[..], tail].concat();
        let cut = &gz[..gz.len() / 2];
        let mut inflated = Vec::new();
        let _ = flate2::read::GzDecoder::new(cut).read_to_end(&mut inflated);
        let whole = inflated.iter().filter(|&&b| b == b'\n').count() / 4;
        assert!(whole > 0 && whole < 200);
        let path = Path::new("r.fq.gz");
        for (input, want) in [
            (with(&[0; 3000]), Ok(200)),
            (with(&[0; 1]), Ok(200)),
            (with(b"junk"), Err(200)),
            (with(&[0, 0, 7]), Err(200)),
            (cut.to_vec(), Err(whole)),
        ] {
            let sources = [
                ReadSource::from_reader(Cursor::new(input.clone()), path),
                ReadSource::with_pieces(Cursor::new(input.clone()), path, 2, Some(300)),
                ReadSource::with_pieces(Cursor::new(input.clone()), path, 3, Some(1 << 20)),
            ];
            for (k, src) in sources.into_iter().enumerate() {
                match (all_reads(src, 1000), want) {
                    (Ok(r), Ok(n)) => assert_eq!(r.len(), n, "parser {k}"),
                    (Err(e), Err(n)) => assert!(
                        e.contains(&format!("read error after {n} records")),
                        "parser {k}: {e}"
                    ),
                    (got, want) => {
                        panic!("parser {k}: {:?} against {want:?}", got.map(|r| r.len()))
                    }
                }
            }
        }
    }

    /// Pairs from two files parsed in pieces: the pairs of the sequential
    /// parse, and its error when the files disagree.
    #[test]
    fn pairs_from_pieces() {
        let (a, b) = (fastq_text(300, 3), fastq_text(300, 3));
        let pairs = |threads: usize, a: &[u8], b: &[u8]| {
            let open = |t: &[u8], name: &str| {
                ReadSource::with_pieces(Cursor::new(t.to_vec()), Path::new(name), threads, Some(64))
                    .unwrap()
            };
            let mut src = PairSource::two_files(open(a, "1.fq"), open(b, "2.fq"));
            let mut out = Vec::new();
            loop {
                match src.next_batch(500, 0) {
                    Ok(Some((x, y))) => {
                        for i in 0..x.len() {
                            out.push((x.get(i).seq.to_vec(), y.get(i).seq.to_vec()));
                        }
                    }
                    Ok(None) => return Ok(out),
                    Err(e) => return Err(e.to_string()),
                }
            }
        };
        let want = pairs(1, &a, &b);
        assert_eq!(want.as_ref().map(|p| p.len()), Ok(300));
        assert_eq!(pairs(3, &a, &b), want);
        let short = fastq_text(200, 3);
        let want = pairs(1, &a, &short);
        assert!(want.is_err());
        assert_eq!(pairs(3, &a, &short), want);
    }

    #[test]
    fn empty_input_has_no_reads() {
        assert!(source(b"").next_batch(10).unwrap().is_none());
    }

    #[test]
    fn bad_records_name_the_line() {
        for (input, needle) in [
            (&b"@a\nACGT\n+\nIII\n"[..], "lengths differ"),
            (b"@a\nACGT\nIIII\n", "'+'"),
            (b"@a\nACGT\n+\nIIII\n@b\nAC", "truncated"),
            (b"xyz", "not a FASTQ"),
            (b"@a\nAC1T\n+\nIIII\n", "'1' in its sequence"),
            (b"@a\nACGT\n+\nII I\n", "' ' in its qualities"),
            (
                b"@ok\nA\n+\nI\n@a@b\nACGT\n+\nIIII\n",
                "line 5: read name 'a@b'",
            ),
            (b">@r x\nACGT\n", "read name '@r'"),
        ] {
            let mut src = match ReadSource::from_reader(input, Path::new("r.fq")) {
                Ok(s) => s,
                Err(e) => {
                    assert!(e.to_string().contains(needle), "{e}");
                    continue;
                }
            };
            let e = src.next_batch(100).unwrap_err().to_string();
            assert!(
                e.starts_with("r.fq: ") && e.contains(needle),
                "{input:?}: {e}"
            );
        }
    }
}
