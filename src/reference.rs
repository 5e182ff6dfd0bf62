//! FASTA → [`Reference`]: contigs (name, length, MD5), the maximal runs of
//! ambiguous bases ("holes"), and the text the FM-index is built over: the
//! unambiguous bases of all contigs, concatenated, as codes 0..=3 (A, C, G, T).
//!
//! Ambiguous bases (N and the other IUPAC codes) are left out of the text
//! rather than replaced by random bases as bwa does. A match in the text can
//! then never cover an ambiguous base; it can only run across the junction of
//! two runs of unambiguous bases ("segments"), and the `segments` module
//! (the layer above this one) filters those out.
//!
//! The one FASTA parser is [`crate::scan`]'s, which streams (it never holds
//! a record) into a `Vec<u8>` of codes ([`crate::scan::read_fasta`]) or 2
//! bits per base ([`crate::scan::read_packed`]); this module holds what it
//! produces and, in tests, needletail's parse of the same rules as its
//! oracle ([`oracle`]).

use crate::dna::PackedText;

/// One reference sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contig {
    /// The FASTA header up to the first whitespace.
    pub name: String,
    /// Length in bases, ambiguous ones included.
    pub len: u64,
    /// MD5 of the upper-case sequence (SAM `@SQ M5`).
    pub md5: [u8; 16],
    /// Where this contig's unambiguous bases start in the text.
    pub text_offset: u64,
}

/// A maximal run of ambiguous bases inside one contig.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hole {
    /// Index of the contig.
    pub contig: u32,
    /// 0-based start in the contig.
    pub start: u64,
    /// Number of bases.
    pub len: u64,
}

/// Contigs and holes: what maps text positions back to the reference.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// The contigs in input order.
    pub contigs: Vec<Contig>,
    /// Ambiguous runs, sorted by contig and start.
    pub holes: Vec<Hole>,
}

/// A parsed reference; its text is one byte per base (`Vec<u8>`, the
/// default) or 2 bits per base ([`PackedText`], [`crate::scan::read_packed`]).
#[derive(Debug, Default)]
pub struct Reference<T = Vec<u8>> {
    /// Contigs and holes.
    pub layout: Layout,
    /// Unambiguous bases, codes 0..=3, all contigs concatenated.
    pub text: T,
    /// Non-fatal findings (skipped empty records), for the log.
    pub warnings: Vec<String>,
}

impl Reference<PackedText> {
    /// The same reference with the text as one code per byte (the packed
    /// words are dropped once unpacked).
    pub fn unpacked(self) -> Reference {
        Reference {
            layout: self.layout,
            text: self.text.to_codes(),
            warnings: self.warnings,
        }
    }
}

/// Where the FASTA parser puts the unambiguous bases, in order: a
/// `Vec<u8>` of codes or a [`PackedText`].
pub trait Bases {
    /// Appends a code 0..=3.
    fn push(&mut self, code: u8);
    /// Number of bases so far.
    fn len(&self) -> usize;
    /// Whether there are no bases.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Gives back the room grown for bases that never came (a text grown by
    /// doubling holds up to twice its size: 0.3 GiB at 3 Gbp, packed).
    fn shrink_to_fit(&mut self);
}

impl Bases for Vec<u8> {
    #[inline]
    fn push(&mut self, code: u8) {
        Vec::push(self, code);
    }
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn shrink_to_fit(&mut self) {
        Vec::shrink_to_fit(self);
    }
}

impl Bases for PackedText {
    #[inline]
    fn push(&mut self, code: u8) {
        PackedText::push(self, code);
    }
    fn len(&self) -> usize {
        PackedText::len(self)
    }
    fn shrink_to_fit(&mut self) {
        PackedText::shrink_to_fit(self);
    }
}

const BASE_A: u8 = 0;
pub(crate) const AMBIGUOUS: u8 = 4;
const NEWLINE: u8 = 5;
const INVALID: u8 = 6;

/// Byte → class: 0..=3 base code, 4 ambiguous (an IUPAC ambiguity code, or
/// `X`, `-` or `.`, which masking and alignment tools write and bwa reads as
/// N), 5 line break, 6 other.
pub(crate) static CLASS: [u8; 256] = {
    let mut t = [INVALID; 256];
    t[b'\n' as usize] = NEWLINE;
    t[b'\r' as usize] = NEWLINE;
    let amb = b"NRYSWKMBDHVUX-.";
    let mut i = 0;
    while i < amb.len() {
        t[amb[i] as usize] = AMBIGUOUS;
        t[amb[i].to_ascii_lowercase() as usize] = AMBIGUOUS;
        i += 1;
    }
    let bases = b"ACGT";
    let mut c = 0;
    while c < 4 {
        t[bases[c] as usize] = BASE_A + c as u8;
        t[bases[c].to_ascii_lowercase() as usize] = BASE_A + c as u8;
        c += 1;
    }
    t
};

/// The SAM rule: the header up to the first whitespace; must be a valid
/// SAM reference name.
pub(crate) fn contig_name(id: &[u8]) -> std::result::Result<String, String> {
    let end = id
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(id.len());
    let name = &id[..end];
    if name.is_empty() {
        return Err("sequence header has an empty name".into());
    }
    let valid = name.iter().all(|&b| (b'!'..=b'~').contains(&b))
        && !matches!(name[0], b'*' | b'=')
        && !name.iter().any(|b| {
            matches!(
                b,
                b'\\'
                    | b','
                    | b'"'
                    | b'`'
                    | b'\''
                    | b'('
                    | b')'
                    | b'['
                    | b']'
                    | b'{'
                    | b'}'
                    | b'<'
                    | b'>'
            )
        });
    if !valid {
        return Err(format!(
            "sequence name '{}' is not a valid SAM reference name",
            String::from_utf8_lossy(name)
        ));
    }
    Ok(String::from_utf8_lossy(name).into_owned())
}

/// The FASTA rules (SPEC §5.1) parsed by needletail, record by record: the
/// independent oracle of the one parser in production
/// ([`crate::scan::read_fasta`], which streams and never holds a record).
#[cfg(test)]
pub(crate) mod oracle {
    use std::collections::HashMap;
    use std::io::Read;
    use std::path::Path;

    use md5::{Digest, Md5};

    use super::{AMBIGUOUS, Bases, CLASS, Contig, Hole, Layout, NEWLINE, Reference, contig_name};
    use crate::dna::PackedText;
    use crate::error::{Error, Result};

    /// Reads a FASTA file (plain, gzip or BGZF) into a [`Reference`].
    pub fn read_fasta(path: &Path) -> Result<Reference> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        read_fasta_from(file, path)
    }

    /// Reads FASTA from any reader; `path` is used in messages only.
    pub fn read_fasta_from<'a, R: Read + Send + 'a>(reader: R, path: &Path) -> Result<Reference> {
        read_into(reader, path, Vec::new())
    }

    /// Reads a FASTA file (plain, gzip or BGZF) with the text 2 bits per base:
    /// [`read_fasta`] in a quarter of the memory for the text.
    pub fn read_fasta_packed(path: &Path) -> Result<Reference<PackedText>> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        read_fasta_packed_from(file, path)
    }

    /// [`read_fasta_packed`] from any reader; `path` is used in messages only.
    pub fn read_fasta_packed_from<'a, R: Read + Send + 'a>(
        reader: R,
        path: &Path,
    ) -> Result<Reference<PackedText>> {
        // Not `PackedText::default()`: `with_capacity` keeps the zero word
        // after the last base that `push` relies on.
        read_into(reader, path, PackedText::with_capacity(0))
    }

    /// The parser behind both: appends the bases to `text` (empty).
    fn read_into<'a, R: Read + Send + 'a, T: Bases>(
        reader: R,
        path: &Path,
        text: T,
    ) -> Result<Reference<T>> {
        let Some(input) = crate::io::input::decompressed(reader, path)? else {
            return Err(Error::input(path, "empty file, or not a FASTA file"));
        };
        // A byte-order mark, blank and `;` lines before the first header, as
        // the streamed scan skips them (`scan::scan`).
        let mut input = std::io::BufReader::new(input);
        let (_, skipped) = crate::io::input::skip_fasta_preamble(&mut input).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                Error::input(path, e.to_string())
            } else {
                Error::input(path, fasta_parse_message_io(&e))
            }
        })?;
        // Two extra line breaks turn a header with no sequence line at the very
        // end into an empty record, which is skipped like the others (needletail
        // reports it as truncated); they add no bases.
        let input = input.chain(&b"\n\n"[..]);
        let mut parser = needletail::parse_fastx_reader(input)
            .map_err(|e| Error::input(path, fasta_parse_message(&e)))?;
        let mut r = Reference {
            layout: Layout::default(),
            text,
            warnings: crate::io::input::truncation_warning(path)
                .into_iter()
                .collect(),
        };
        let mut seen: HashMap<String, u64> = HashMap::new();
        let mut line_buf = Vec::new();
        while let Some(rec) = parser.next() {
            // Lines are the file's: the parser's count less the preamble.
            let rec = rec.map_err(|mut e| {
                if e.position.line > 0 {
                    e.position.line += skipped;
                }
                Error::input(path, fasta_parse_message(&e))
            })?;
            let line = rec.start_line_number() + skipped;
            if rec.format() != needletail::parser::Format::Fasta {
                return Err(Error::input(path, "this is FASTQ, not FASTA"));
            }
            let name = contig_name(rec.id())
                .map_err(|m| Error::input(path, format!("line {line}: {m}")))?;
            let contig = r.layout.contigs.len() as u32;
            let text_offset = r.text.len() as u64;
            let mut md5 = Md5::new();
            let mut pos = 0u64;
            let mut hole_start: Option<u64> = None;
            for (k, raw_line) in rec.raw_seq().split(|&b| b == b'\n').enumerate() {
                line_buf.clear();
                for &b in raw_line {
                    let class = CLASS[b as usize];
                    if class < AMBIGUOUS {
                        if let Some(s) = hole_start.take() {
                            r.layout.holes.push(Hole {
                                contig,
                                start: s,
                                len: pos - s,
                            });
                        }
                        r.text.push(class);
                    } else if class == AMBIGUOUS {
                        hole_start.get_or_insert(pos);
                    } else if class == NEWLINE || b == b' ' || b == b'\t' {
                        // Spaces and tabs (trailing ones in hand-edited files)
                        // are not sequence: samtools faidx and dict skip them
                        // too, and the SAM spec's M5 leaves them out.
                        continue;
                    } else {
                        return Err(Error::input(
                            path,
                            format!(
                                "line {}: invalid character '{}' in sequence '{name}' (expected bases, IUPAC codes, X, - or .)",
                                line + 1 + k as u64,
                                char::from(b).escape_default()
                            ),
                        ));
                    }
                    line_buf.push(b.to_ascii_uppercase());
                    pos += 1;
                }
                md5.update(&line_buf);
            }
            if let Some(s) = hole_start {
                r.layout.holes.push(Hole {
                    contig,
                    start: s,
                    len: pos - s,
                });
            }
            if pos == 0 {
                r.warnings.push(format!(
                    "{}: line {line}: skipping sequence '{name}' with no bases",
                    path.display()
                ));
                continue;
            }
            if let Some(first) = seen.insert(name.clone(), line) {
                return Err(Error::input(
                    path,
                    format!(
                        "line {line}: duplicate sequence name '{name}' (first at line {first})"
                    ),
                ));
            }
            r.layout.contigs.push(Contig {
                name,
                len: pos,
                md5: md5.finalize().into(),
                text_offset,
            });
        }
        if r.layout.contigs.is_empty() {
            return Err(Error::input(
                path,
                "no sequence with bases in this FASTA file",
            ));
        }
        r.text.shrink_to_fit();
        Ok(r)
    }

    /// A read error of the reference, worded as for needletail's.
    fn fasta_parse_message_io(e: &std::io::Error) -> String {
        format!("read error (truncated or damaged compressed file?): {e}")
    }

    /// Turns needletail's error into a message with the line (and record).
    pub(crate) fn fasta_parse_message(e: &needletail::errors::ParseError) -> String {
        use needletail::errors::ParseErrorKind as K;
        match e.kind {
            K::EmptyFile => "empty file, or not a FASTA file".into(),
            K::UnknownFormat | K::InvalidStart => {
                if e.position.line <= 1 {
                    "not a FASTA file (it does not start with a '>' header line)".into()
                } else {
                    format!("{}: expected a '>' header line ({})", e.msg, e.position)
                }
            }
            K::Io => format!(
                "read error (truncated or damaged compressed file?): {}",
                e.msg
            ),
            K::UnexpectedEnd => format!("unexpected end of file ({})", e.position),
            _ => format!("{} ({})", e.msg, e.position),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Result;
    use crate::scan::{read_fasta, read_fasta_from};
    use md5::{Digest, Md5};
    use std::path::Path;

    fn parse(s: &str) -> Result<Reference> {
        read_fasta_from(s.as_bytes(), Path::new("t.fa"))
    }

    #[test]
    fn contigs_holes_and_text() {
        let r = parse(">a desc\nACgtN\nnA\n>b\nRRT\n>c\nN\n").unwrap();
        let l = &r.layout;
        assert_eq!(l.contigs.len(), 3);
        assert_eq!(l.contigs[0].name, "a");
        assert_eq!(l.contigs[0].len, 7);
        assert_eq!(l.contigs[1].text_offset, 5);
        assert_eq!(l.contigs[2].text_offset, 6);
        assert_eq!(r.text, vec![0, 1, 2, 3, 0, 3]);
        assert_eq!(
            l.holes,
            vec![
                Hole {
                    contig: 0,
                    start: 4,
                    len: 2
                },
                Hole {
                    contig: 1,
                    start: 0,
                    len: 2
                },
                Hole {
                    contig: 2,
                    start: 0,
                    len: 1
                },
            ]
        );
        let md5: [u8; 16] = Md5::digest(b"ACGTNNA").into();
        assert_eq!(l.contigs[0].md5, md5);
    }

    /// `X` (masking tools), `-` and `.` (alignments) read as N, as in bwa:
    /// the same text and holes as the N-masked record; the MD5 is of the
    /// bytes as written (upper-cased), as SAM's M5 is.
    #[test]
    fn masking_and_gap_characters_are_ambiguous() {
        let masked = parse(">a\nACxX-.GT\n>b\nT.\n").unwrap();
        let n = parse(">a\nACNNNNGT\n>b\nTN\n").unwrap();
        assert_eq!(masked.text, n.text);
        assert_eq!(masked.layout.holes, n.layout.holes);
        assert_eq!(masked.layout.holes[0].start, 2);
        assert_eq!(masked.layout.holes[0].len, 4);
        let md5: [u8; 16] = Md5::digest(b"ACXX-.GT").into();
        assert_eq!(masked.layout.contigs[0].md5, md5);
        check_packed(b">a\nACxX-.GT\n>b\nT.\n");
    }

    #[test]
    fn bad_inputs() {
        for (input, needle) in [
            ("", "empty"),
            ("ACGT\n", "not a FASTA"),
            (
                ">a\nACGT\n>a\nAC\n",
                "duplicate sequence name 'a' (first at line 1)",
            ),
            (">a\nAC\nAET\n", "line 3: invalid character"),
            (">a\n\n>b\n\n", "no sequence with bases"),
            ("@r\nACGT\n+\nIIII\n", "FASTQ"),
            ("\u{1}\u{2}\u{3}\u{0}binary", "not a FASTA"),
        ] {
            let e = parse(input).unwrap_err().to_string();
            assert!(e.contains(needle), "{input:?}: {e}");
            assert!(e.starts_with("t.fa: "), "{e}");
        }
    }

    #[test]
    fn empty_record_is_skipped_with_warning() {
        let r = parse(">a\n>b\nAC\n").unwrap();
        assert_eq!(r.layout.contigs.len(), 1);
        assert_eq!(r.warnings.len(), 1);
    }

    /// The packed read of a parsed reference against the byte read: the
    /// same layout, warnings and codes (and PAC bytes).
    fn assert_same(bytes: &Reference, packed: Reference<PackedText>, what: &str) {
        assert_eq!(packed.layout, bytes.layout, "{what}");
        assert_eq!(packed.warnings, bytes.warnings, "{what}");
        assert_eq!(packed.text.len(), bytes.text.len(), "{what}");
        assert!(
            packed.text.bytes() <= 8 * (packed.text.len() / 32 + 4),
            "{what}: room left from growing"
        );
        assert_eq!(
            packed.text.pac(),
            crate::dna::pack(&bytes.text).as_slice(),
            "{what}"
        );
        let unpacked = packed.unpacked();
        assert_eq!(unpacked.text, bytes.text, "{what}");
        assert_eq!(unpacked.layout, bytes.layout, "{what}");
        assert_eq!(unpacked.warnings, bytes.warnings, "{what}");
    }

    /// Reads `data` both ways: both succeed alike or fail with one message.
    fn check_packed(data: &[u8]) {
        let path = Path::new("t.fa");
        let what = String::from_utf8_lossy(&data[..data.len().min(200)]).into_owned();
        match (
            read_fasta_from(data, path),
            oracle::read_fasta_packed_from(data, path),
        ) {
            (Ok(b), Ok(p)) => assert_same(&b, p, &what),
            (Err(e), Err(f)) => assert_eq!(f.to_string(), e.to_string(), "{what}"),
            (b, p) => panic!("{what}: bytes {b:?}, packed {p:?}"),
        }
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn packed_read_equals_byte_read_on_test_data() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data");
        for name in [
            "lambda_virus.fa",
            "human_chrM_NC_012920.fa",
            "ecoli_K12_MG1655.fa.gz",
        ] {
            let path = dir.join(name);
            let bytes = read_fasta(&path).unwrap();
            assert!(!bytes.text.is_empty(), "{name}");
            assert_same(&bytes, oracle::read_fasta_packed(&path).unwrap(), name);
        }
        let missing = dir.join("no such file.fa");
        assert_eq!(
            oracle::read_fasta_packed(&missing).unwrap_err().to_string(),
            read_fasta(&missing).unwrap_err().to_string()
        );
    }

    #[test]
    fn packed_read_equals_byte_read_on_made_up_files() {
        let long: String = (0..1000)
            .map(|i| ["ACGT", "acgt", "NNNN", "ryN"][i % 7 % 4])
            .collect();
        let cases: Vec<Vec<u8>> = vec![
            b">a desc\nACgtN\nnA\n>b\nRRT\n>c\nN\n".to_vec(),
            b">a\n>b\nAC\n>c\n\n>d\nNNNN\n>e\n".to_vec(),
            b">a\r\nacgtacgtacgtacgtacgtacgtacgtacgtA\r\nNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN\r\nC".to_vec(),
            format!(">long\n{long}\n>x\nT").into_bytes(),
            // 31, 32 and 33 bases: the word boundaries of the packed text.
            format!(">w\n{}\n>v\n{}N\n>u\n{}", "G".repeat(31), "T".repeat(32), "c".repeat(33)).into_bytes(),
            b">only\nNNNN\n".to_vec(),
            b"".to_vec(),
            b"ACGT\n".to_vec(),
            b">a\nACGT\n>a\nAC\n".to_vec(),
            b">a\nAC\nAXT\n".to_vec(),
            b">a\n\n>b\n\n".to_vec(),
            b"@r\nACGT\n+\nIIII\n".to_vec(),
            b">(bad)\nAC\n".to_vec(),
        ];
        for data in cases {
            check_packed(&data);
            check_packed(&gzip(&data));
        }
        // A truncated gzip file fails alike.
        let gz = gzip(b">a\nACGTACGTACGTNNNNACGT\n>b\nTTTT\n");
        check_packed(&gz[..gz.len() - 6]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Random FASTA (bases of either case, IUPAC runs, empty records,
        /// CRLF, the odd invalid byte) reads alike both ways.
        #[test]
        fn packed_read_equals_byte_read_on_random_fasta(
            records in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::collection::vec(
                        proptest::sample::select(b"ACGTACGTacgtNNnRy\r.E".to_vec()),
                        0..80,
                    ),
                    0..5,
                ),
                1..5,
            ),
        ) {
            let mut data = Vec::new();
            for (k, lines) in records.iter().enumerate() {
                data.extend_from_slice(format!(">r{k} d\n").as_bytes());
                for l in lines {
                    // 'E' is an invalid byte; keep it rare.
                    let l: Vec<u8> = l.iter().map(|&b| if b == b'E' && l.len() % 5 != 0 { b'A' } else { b }).collect();
                    data.extend_from_slice(&l);
                    data.push(b'\n');
                }
            }
            check_packed(&data);
        }
    }
}
