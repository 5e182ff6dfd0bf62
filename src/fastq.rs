//! FASTQ (or FASTA) reads in batches sized by bases. A batch keeps all its
//! reads in one flat buffer, so parsing allocates per batch, not per read.

use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

use needletail::FastxReader;

use crate::error::{Error, Result};
use crate::read::{ReadView, base_name};

/// One read inside a [`Batch`]'s buffer.
#[derive(Clone, Debug)]
struct Rec {
    name: Range<usize>,
    seq: Range<usize>,
    qual: Option<Range<usize>>,
}

/// A batch of reads.
#[derive(Debug, Default)]
pub struct Batch {
    data: Vec<u8>,
    recs: Vec<Rec>,
    bases: usize,
}

impl Batch {
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
        ReadView {
            name: &self.data[r.name.clone()],
            seq: &self.data[r.seq.clone()],
            qual: r.qual.clone().map(|q| &self.data[q]),
        }
    }

    fn push(&mut self, id: &[u8], seq: &[u8], qual: Option<&[u8]>) {
        let name_len = id
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(id.len());
        let mut put = |b: &[u8]| {
            let s = self.data.len();
            self.data.extend_from_slice(b);
            s..self.data.len()
        };
        let name = put(&id[..name_len]);
        let seq_r = put(seq);
        let qual = qual.map(&mut put);
        self.bases += seq.len();
        self.recs.push(Rec {
            name,
            seq: seq_r,
            qual,
        });
    }
}

/// Reads from a FASTQ or FASTA file (plain or gzip), or stdin for `-`.
pub struct ReadSource {
    path: PathBuf,
    parser: Option<Box<dyn FastxReader>>,
}

impl ReadSource {
    /// Opens `path` (`-` is stdin), compressed input decompressed with up to
    /// `threads` threads ([`crate::input::decompressed_with`]). An empty
    /// input has no reads.
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

    /// [`ReadSource::from_reader`], decompressing with up to `threads`
    /// threads.
    pub fn with_threads<R: Read + Send + 'static>(
        reader: R,
        path: &Path,
        threads: usize,
    ) -> Result<ReadSource> {
        let parser = match crate::input::decompressed_with(reader, path, threads)? {
            None => None,
            Some(input) => Some(
                needletail::parse_fastx_reader(input)
                    .map_err(|e| Error::input(path, read_parse_message(&e)))?,
            ),
        };
        Ok(ReadSource {
            path: path.into(),
            parser,
        })
    }

    /// The next batch of at least one read and about `max_bases` bases, or
    /// `None` at the end of the input.
    pub fn next_batch(&mut self, max_bases: usize) -> Result<Option<Batch>> {
        let mut batch = Batch::default();
        while batch.bases < max_bases || batch.is_empty() {
            if !self.push_next(&mut batch)? {
                break;
            }
        }
        Ok((!batch.is_empty()).then_some(batch))
    }

    /// Reads one record into `batch`; false at the end of the input.
    fn push_next(&mut self, batch: &mut Batch) -> Result<bool> {
        let Some(parser) = self.parser.as_mut() else {
            return Ok(false);
        };
        let Some(rec) = parser.next() else {
            return Ok(false);
        };
        let rec = rec.map_err(|e| Error::input(&self.path, read_parse_message(&e)))?;
        let seq = rec.raw_seq();
        let qual = rec.qual();
        let line = rec.start_line_number();
        let joined;
        let seq = if rec.format() == needletail::parser::Format::Fasta && seq.contains(&b'\n') {
            joined = rec.seq();
            &joined[..]
        } else {
            seq
        };
        if !read_ok(rec.id(), seq, qual) {
            check_read(rec.id(), seq, qual)
                .map_err(|m| Error::input(&self.path, format!("record at line {line}: {m}")))?;
        }
        batch.push(rec.id(), seq, qual);
        Ok(true)
    }

    /// The path it reads (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }
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
        let (mut a, mut b) = (Batch::default(), Batch::default());
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
                return Err(Error::input(
                    self.second_path(),
                    format!(
                        "pair {}: mate names differ ('{}' in {}, '{}' here); the files must list the same pairs in the same order",
                        self.pairs + 1,
                        shown(n1),
                        self.one.path().display(),
                        shown(n2)
                    ),
                ));
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
    if let Some(&b) = name
        .iter()
        .find(|&&b| !(b'!'..=b'~').contains(&b) || b == b'@')
    {
        return Err(format!(
            "read name '{}' has the character {:?}, which a SAM read name cannot hold (printable ASCII except '@')",
            shown(name),
            char::from(b)
        ));
    }
    if let Some(&b) = seq
        .iter()
        .find(|&&b| !(b.is_ascii_alphabetic() || b == b'=' || b == b'.'))
    {
        return Err(format!(
            "read '{}' has {:?} in its sequence (expected letters)",
            shown(name),
            char::from(b)
        ));
    }
    if let Some(&b) = qual.and_then(|q| q.iter().find(|&&b| !(b'!'..=b'~').contains(&b))) {
        return Err(format!(
            "read '{}' has {:?} in its qualities (expected '!' to '~')",
            shown(name),
            char::from(b)
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
        K::UnequalLengths => format!("quality and sequence lengths differ ({at})"),
        K::InvalidSeparator => format!("expected a '+' separator line ({at})"),
        K::InvalidStart => format!("{} ({at})", e.msg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
