//! The FASTA parser's state machine: records, their names, holes and
//! digests, checkpoints every `every` bases, and the bases packed into the
//! text when it is kept. Fed chunks of the decompressed stream of any size
//! (the tests cut it down to one byte); the byte rules are
//! `crate::reference`'s.

use std::collections::HashMap;
use std::path::Path;

use super::digests::Digests;
use super::{Checkpoint, Scan};
use crate::dna::PackedText;
use crate::error::{Error, Result};
use crate::reference::{AMBIGUOUS, CLASS, Contig, Hole, Layout, contig_name};

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// In a header line, in the name (up to the first whitespace).
    Name,
    /// In a header line, past the name.
    Description,
    /// In a record's sequence lines.
    Sequence,
}

/// The record being scanned.
struct Record {
    name: String,
    /// Line of its header.
    line: u64,
    text_offset: u64,
    /// Bases so far, ambiguous ones included.
    pos: u64,
    hole_start: Option<u64>,
}

pub(super) struct Scanner<'p> {
    path: &'p Path,
    every: u64,
    layout: Layout,
    pub(super) warnings: Vec<String>,
    checkpoints: Vec<Checkpoint>,
    seen: HashMap<String, u64>,
    /// Text position of the next checkpoint.
    next_checkpoint: u64,
    text_pos: u64,
    /// Current line (1-based).
    pub(super) line: u64,
    state: State,
    at_line_start: bool,
    /// Header line of the record whose header is being read.
    pub(super) header_line: u64,
    name: Vec<u8>,
    record: Option<Record>,
    /// Sequence bytes not yet given to the MD5, upper-cased before.
    md5_buf: Vec<u8>,
    /// The MD5 of each kept record's sequence.
    digests: Digests,
    /// Where the bases go, when they are kept.
    pub(super) text: Option<PackedText>,
}

impl<'p> Scanner<'p> {
    /// The digests on up to `threads` threads ([`Digests::new`]).
    pub(super) fn new(path: &'p Path, every: u64, threads: usize) -> Self {
        Scanner {
            path,
            every,
            layout: Layout::default(),
            warnings: Vec::new(),
            checkpoints: Vec::new(),
            seen: HashMap::new(),
            next_checkpoint: 0,
            text_pos: 0,
            line: 1,
            // The stream starts with '>' (checked by the caller).
            state: State::Sequence,
            at_line_start: true,
            header_line: 1,
            name: Vec::new(),
            record: None,
            md5_buf: Vec::new(),
            digests: Digests::new(threads),
            text: None,
        }
    }

    /// Scans `buf`, which starts at stream offset `base`.
    pub(super) fn chunk(&mut self, buf: &[u8], base: u64) -> Result<()> {
        let n = buf.len();
        let mut i = 0;
        while i < n {
            match self.state {
                State::Name => {
                    let start = i;
                    while i < n && !buf[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    self.name.extend_from_slice(&buf[start..i]);
                    if i < n {
                        if buf[i] == b'\n' {
                            self.end_header()?;
                            self.line += 1;
                        } else {
                            self.state = State::Description;
                        }
                        i += 1;
                    }
                }
                State::Description => match buf[i..].iter().position(|&b| b == b'\n') {
                    Some(k) => {
                        i += k + 1;
                        self.end_header()?;
                        self.line += 1;
                    }
                    None => i = n,
                },
                State::Sequence => i = self.sequence(buf, i, base)?,
            }
        }
        Ok(())
    }

    /// Scans sequence bytes from `buf[i..]` up to the end of `buf` or the
    /// next header; returns where it stopped.
    fn sequence(&mut self, buf: &[u8], mut i: usize, base: u64) -> Result<usize> {
        let n = buf.len();
        let every = self.every;
        let mut text_pos = self.text_pos;
        let mut next_checkpoint = self.next_checkpoint;
        let mut line = self.line;
        let mut at_line_start = self.at_line_start;
        let mut seg_start = i;
        // Before the first header (only the '>' at offset 0) there is no
        // record; a base there is impossible.
        let Some(rec) = self.record.as_mut() else {
            debug_assert!(i < n && buf[i] == b'>' && at_line_start);
            self.state = State::Name;
            self.header_line = line;
            self.at_line_start = false;
            return Ok(i + 1);
        };
        let contig = self.layout.contigs.len() as u32;
        let mut pos = rec.pos;
        let mut hole_start = rec.hole_start;
        let mut header = false;
        while i < n {
            let b = buf[i];
            let class = CLASS[b as usize];
            if class < AMBIGUOUS {
                if let Some(s) = hole_start.take() {
                    self.layout.holes.push(Hole {
                        contig,
                        start: s,
                        len: pos - s,
                    });
                }
                // The whole run of bases at once.
                let run_start = i;
                i += 1;
                while i < n && CLASS[buf[i] as usize] < AMBIGUOUS {
                    i += 1;
                }
                let run = (i - run_start) as u64;
                if let Some(t) = self.text.as_mut() {
                    t.extend_ascii(&buf[run_start..i]);
                }
                while next_checkpoint < text_pos + run {
                    self.checkpoints.push(Checkpoint {
                        text_pos: next_checkpoint,
                        offset: base + run_start as u64 + (next_checkpoint - text_pos),
                    });
                    next_checkpoint = next_checkpoint.saturating_add(every);
                }
                text_pos += run;
                pos += run;
                at_line_start = false;
                continue;
            } else if class == AMBIGUOUS {
                hole_start.get_or_insert(pos);
                pos += 1;
                at_line_start = false;
            } else {
                self.md5_buf.extend_from_slice(&buf[seg_start..i]);
                seg_start = i + 1;
                if b == b'\n' {
                    line += 1;
                    at_line_start = true;
                } else if b == b'\r' || b == b' ' || b == b'\t' {
                    // Not sequence, and not in the digest (read_fasta).
                    at_line_start = false;
                } else if b == b'>' && at_line_start {
                    header = true;
                    i += 1;
                    break;
                } else {
                    return Err(Error::input(
                        self.path,
                        format!(
                            "line {line}: invalid character '{}' in sequence '{}' (expected bases, IUPAC codes, X, - or .)",
                            char::from(b).escape_default(),
                            rec.name
                        ),
                    ));
                }
            }
            i += 1;
        }
        if !header {
            self.md5_buf.extend_from_slice(&buf[seg_start..n]);
        }
        self.md5_buf.make_ascii_uppercase();
        self.digests.update(&mut self.md5_buf);
        rec.pos = pos;
        rec.hole_start = hole_start;
        self.text_pos = text_pos;
        self.next_checkpoint = next_checkpoint;
        self.line = line;
        self.at_line_start = at_line_start;
        if header {
            self.end_record()?;
            self.state = State::Name;
            self.header_line = line;
            self.at_line_start = false;
        }
        Ok(i)
    }

    /// The header line ended: check the name and start the record.
    fn end_header(&mut self) -> Result<()> {
        let line = self.header_line;
        let name = contig_name(&self.name)
            .map_err(|m| Error::input(self.path, format!("line {line}: {m}")))?;
        self.name.clear();
        self.record = Some(Record {
            name,
            line,
            text_offset: self.text_pos,
            pos: 0,
            hole_start: None,
        });
        self.state = State::Sequence;
        self.at_line_start = true;
        Ok(())
    }

    /// The record ended: keep it (or skip it when it has no bases).
    fn end_record(&mut self) -> Result<()> {
        let Some(rec) = self.record.take() else {
            return Ok(());
        };
        let contig = self.layout.contigs.len() as u32;
        if let Some(s) = rec.hole_start {
            self.layout.holes.push(Hole {
                contig,
                start: s,
                len: rec.pos - s,
            });
        }
        let line = rec.line;
        let name = rec.name;
        self.digests.end(rec.pos != 0);
        if rec.pos == 0 {
            self.warnings.push(format!(
                "{}: line {line}: skipping sequence '{name}' with no bases",
                self.path.display()
            ));
            return Ok(());
        }
        if let Some(first) = self.seen.insert(name.clone(), line) {
            return Err(Error::input(
                self.path,
                format!("line {line}: duplicate sequence name '{name}' (first at line {first})"),
            ));
        }
        self.layout.contigs.push(Contig {
            name,
            len: rec.pos,
            // Set by `finish`, when every digest is done.
            md5: [0; 16],
            text_offset: rec.text_offset,
        });
        Ok(())
    }

    /// End of the stream.
    pub(super) fn finish(mut self) -> Result<(Scan, Option<PackedText>)> {
        if self.state != State::Sequence {
            // A header line with no line break after it.
            self.end_header()?;
        }
        self.end_record()?;
        if self.layout.contigs.is_empty() {
            return Err(Error::input(
                self.path,
                "no sequence with bases in this FASTA file",
            ));
        }
        let digests = self.digests.finish();
        assert_eq!(
            digests.len(),
            self.layout.contigs.len(),
            "scan: one digest per contig (a bug)"
        );
        for (c, d) in self.layout.contigs.iter_mut().zip(digests) {
            c.md5 = d;
        }
        let scan = Scan {
            layout: self.layout,
            text_len: self.text_pos,
            warnings: self.warnings,
            checkpoints: self.checkpoints,
        };
        let mut text = self.text;
        if let Some(t) = &mut text {
            t.shrink_to_fit();
        }
        Ok((scan, text))
    }
}
