//! A streaming scan of a FASTA reference for distributed index construction:
//! the layout and text length without holding the text, and checkpoints from
//! which any range of the text is read back (see [`scan_fasta`] and
//! [`read_text_range`]).
//!
//! It is the one FASTA parser (SPEC §5.1): [`read_fasta`] and
//! [`read_packed`] are this scan keeping the text. A record starts at a `>`
//! that begins the file or follows a `\n`; its header runs to the next
//! `\n`; its sequence is every other byte up to the next record, where
//! `\n` and `\r` are skipped. Its tests check it against needletail's
//! parse of the same rules ([`crate::reference::oracle`]).
//!
//! One file a stage: [`scanner`] the parser (the records' state machine:
//! layout, holes, checkpoints, the bases packed when kept), [`digests`] the
//! contigs' MD5s (on a second thread when allowed), [`range`] a range of the
//! text read back from a checkpoint; here the entry points that drive them.

mod digests;
mod range;
mod scanner;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::dna::PackedText;
use crate::error::{Error, Result};
use crate::reference::{Layout, Reference};
pub use range::read_text_range;
use scanner::Scanner;

/// A point from which the text can be read: `offset` is the byte offset, in the
/// decompressed FASTA stream, of the byte holding base T[text_pos].
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Checkpoint {
    /// Position in the text.
    pub text_pos: u64,
    /// Byte offset of that base in the decompressed FASTA stream.
    pub offset: u64,
}

/// What [`scan_fasta`] finds: everything [`read_fasta`]
/// gives but the text, and checkpoints into the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scan {
    /// Contigs and holes, identical to `read_fasta`'s.
    pub layout: Layout,
    /// Length of the text (`read_fasta(..).text.len()`).
    pub text_len: u64,
    /// The same warnings as `read_fasta`'s.
    pub warnings: Vec<String>,
    /// Ascending text_pos; the first is text_pos 0 when text_len > 0; then one at
    /// (or just after, at the first base at or past) every multiple of `every` bases.
    pub checkpoints: Vec<Checkpoint>,
}

/// Read buffer size of the scan and of [`read_text_range`].
pub(super) const CHUNK: usize = 1 << 20;

/// Streams the FASTA at `path` once (plain, gzip or BGZF) and returns its
/// layout, text length, warnings and a checkpoint every `every` bases of the
/// text, with the same validation (and, as far as practical, the same error
/// messages) as [`read_fasta`]. Memory is
/// O(contigs + holes + checkpoints): neither the text nor a whole record is
/// held.
///
/// # Panics
/// If `every` is 0.
pub fn scan_fasta(path: &Path, every: u64) -> Result<Scan> {
    scan_fasta_chunked(path, every, CHUNK)
}

/// [`scan_fasta`] reading `chunk` bytes at a time (at most).
fn scan_fasta_chunked(path: &Path, every: u64, chunk: usize) -> Result<Scan> {
    Ok(scan(path, every, chunk, None, 1)?.0)
}

/// Reads a FASTA file (plain, gzip or BGZF) into a [`Reference`], its text
/// one code (0..=3) per base.
pub fn read_fasta(path: &Path) -> Result<Reference> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    read_fasta_from(file, path)
}

/// [`read_fasta`] from any reader (plain, gzip or BGZF); `path` is used in
/// messages only.
pub fn read_fasta_from<R: Read + Send>(reader: R, path: &Path) -> Result<Reference> {
    Ok(read_packed_from(reader, path, 1)?.unpacked())
}

/// The reference at `path` read in one streaming pass straight into a 2-bit
/// text: what [`read_fasta`] returns, packed; never holding a whole record
/// (needletail's parser does): memory is the packed
/// text (a quarter byte per base) and a 1 MiB buffer. For builds that must
/// fit a memory limit. With `threads > 1` the contigs' MD5 digests run on a
/// second thread, beside the parse.
pub fn read_packed(path: &Path, threads: usize) -> Result<Reference<PackedText>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    read_packed_from(file, path, threads)
}

/// [`read_packed`] from any reader; `path` is used in messages only.
fn read_packed_from<R: Read + Send>(
    reader: R,
    path: &Path,
    threads: usize,
) -> Result<Reference<PackedText>> {
    let text = Some(PackedText::default());
    let (scan, text) = scan_from(reader, path, u64::MAX, CHUNK, text, threads)?;
    Ok(Reference {
        layout: scan.layout,
        text: text.expect("asked for"),
        warnings: scan.warnings,
    })
}

/// The error of [`crate::io::input::skip_fasta_preamble`]: a read error, or
/// what it refuses.
fn preamble_error(path: &Path, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::InvalidData {
        Error::input(path, e.to_string())
    } else {
        read_error(path, e)
    }
}

/// The scan, with the text packed into `text` when given, on up to
/// `threads` threads (two at most: [`Digests`]).
fn scan(
    path: &Path,
    every: u64,
    chunk: usize,
    text: Option<PackedText>,
    threads: usize,
) -> Result<(Scan, Option<PackedText>)> {
    assert!(
        every > 0,
        "scan_fasta: checkpoint interval must be positive"
    );
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    scan_from(file, path, every, chunk, text, threads)
}

/// [`scan`] of the FASTA read from `reader`.
fn scan_from<R: Read + Send>(
    reader: R,
    path: &Path,
    every: u64,
    chunk: usize,
    text: Option<PackedText>,
    threads: usize,
) -> Result<(Scan, Option<PackedText>)> {
    let Some(input) = crate::io::input::decompressed(reader, path)? else {
        return Err(Error::input(path, "empty file, or not a FASTA file"));
    };
    let mut reader = BufReader::with_capacity(chunk, input);
    // A byte-order mark, blank and `;` lines before the first header.
    let (skipped, skipped_lines) =
        crate::io::input::skip_fasta_preamble(&mut reader).map_err(|e| preamble_error(path, e))?;
    let head = reader
        .fill_buf()
        .map_err(|e| read_error(path, e))?
        .first()
        .copied();
    if head != Some(b'>') {
        // Not FASTA: reads given where the reference goes, most likely.
        if head == Some(b'@') {
            return Err(Error::input(path, "this is FASTQ, not FASTA"));
        }
        return Err(Error::input(
            path,
            "not a FASTA file (it does not start with a '>' header line)",
        ));
    }
    let mut s = Scanner::new(path, every, threads);
    s.text = text;
    s.line += skipped_lines;
    s.header_line += skipped_lines;
    s.warnings
        .extend(crate::io::input::truncation_warning(path));
    // Offsets are of the decompressed stream (the checkpoints', read back
    // by `read_text_range`), so they count what was skipped.
    let mut consumed = skipped;
    loop {
        let buf = reader.fill_buf().map_err(|e| read_error(path, e))?;
        if buf.is_empty() {
            break;
        }
        let n = buf.len();
        s.chunk(buf, consumed)?;
        reader.consume(n);
        consumed += n as u64;
    }
    s.finish()
}

/// A read error of the (decompressed) stream, worded as `read_fasta` does.
pub(super) fn read_error(path: &Path, e: std::io::Error) -> Error {
    Error::input(
        path,
        format!("read error (truncated or damaged compressed file?): {e}"),
    )
}

#[cfg(test)]
mod tests {
    use super::digests::{JOB_BYTES, JOB_ENDS};
    use super::range::read_text_range_chunked;
    use super::*;
    use crate::reference::CLASS;
    use crate::reference::oracle::read_fasta;
    use md5::{Digest, Md5};
    use proptest::prelude::*;
    use std::io::Write;

    /// Gzip-compresses `data`, as `members` gzip members (BGZF-like when > 1).
    fn gzip(data: &[u8], members: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let step = data.len().div_ceil(members.max(1)).max(1);
        for part in data.chunks(step) {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(part).unwrap();
            out.extend(e.finish().unwrap());
        }
        if data.is_empty() {
            let e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            out.extend(e.finish().unwrap());
        }
        out
    }

    fn write(dir: &tempfile::TempDir, name: &str, data: &[u8]) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, data).unwrap();
        p
    }

    /// Error messages with the file name taken out (the plain and gzip files
    /// have different names).
    fn message(e: &Error, path: &Path) -> String {
        e.to_string().replace(&path.display().to_string(), "FILE")
    }

    /// Checks the checkpoints' positions and that each points at its base in
    /// the decompressed stream `plain`.
    fn check_checkpoints(s: &Scan, every: u64, plain: &[u8], text: &[u8]) {
        let want: Vec<u64> = (0..s.text_len)
            .step_by(every.min(1 << 40) as usize)
            .collect();
        let got: Vec<u64> = s.checkpoints.iter().map(|c| c.text_pos).collect();
        assert_eq!(got, want, "checkpoint positions, every {every}");
        for c in &s.checkpoints {
            let b = plain[c.offset as usize];
            assert_eq!(CLASS[b as usize], text[c.text_pos as usize], "{c:?}");
        }
    }

    /// Ranges worth reading for a text of `n` bases with these checkpoints.
    fn ranges(n: u64, checkpoints: &[Checkpoint], extra: &[(u64, u64)]) -> Vec<(u64, u64)> {
        let mut r = vec![
            (0, n),
            (0, 0),
            (n, n),
            (0, n.min(1)),
            (n.saturating_sub(1), n),
        ];
        for c in checkpoints.iter().take(20) {
            for from in [c.text_pos, c.text_pos + 1, c.text_pos.saturating_sub(1)] {
                if from <= n {
                    r.push((from, n));
                    r.push((from, (from + 1).min(n)));
                    r.push((from, (from + 5).min(n)));
                }
            }
        }
        for &(a, b) in extra {
            if n > 0 {
                let (a, b) = (a % (n + 1), b % (n + 1));
                r.push((a.min(b), a.max(b)));
            }
        }
        r
    }

    /// Compares scan_fasta and read_text_range with read_fasta on `data`,
    /// plain and gzipped; `all_ranges` reads every (from, to) of a small text.
    fn check(data: &[u8], everys: &[u64], chunk: usize, extra: &[(u64, u64)], all_ranges: bool) {
        let dir = tempfile::tempdir().unwrap();
        let members = 1 + data.len() % 3;
        for (path, gz) in [
            (write(&dir, "r.fa", data), false),
            (write(&dir, "r.fa.gz", &gzip(data, members)), true),
        ] {
            let oracle = read_fasta(&path);
            // The streamed 2-bit read gives read_fasta's reference, with the
            // digests here or on a thread of their own.
            for threads in [1, 2] {
                match (
                    &oracle,
                    scan(&path, u64::MAX, chunk, Some(PackedText::default()), threads),
                ) {
                    (Err(e), Err(f)) => {
                        assert_eq!(message(&f, &path), message(e, &path), "packed {data:?}")
                    }
                    (Ok(r), Ok((s, t))) => {
                        assert_eq!(s.layout, r.layout, "packed {data:?} gz {gz} t {threads}");
                        let t = t.expect("kept");
                        assert_eq!(t.to_codes(), r.text, "packed {data:?}");
                        // No room left from growing (Vec::shrink_to_fit may
                        // keep a little; never a doubling's worth).
                        assert!(t.bytes() <= 8 * (t.len() / 32 + 4), "packed {data:?}");
                    }
                    (o, s) => panic!("{data:?} gz {gz}: read_fasta {o:?}, packed {s:?}"),
                }
            }
            for &every in everys {
                let scan = scan_fasta_chunked(&path, every, chunk);
                let (r, s) = match (&oracle, scan) {
                    (Err(e), Err(f)) => {
                        assert_eq!(message(&f, &path), message(e, &path), "{data:?} gz {gz}");
                        continue;
                    }
                    (Ok(r), Ok(s)) => (r, s),
                    (o, s) => panic!("{data:?} gz {gz}: read_fasta {o:?}, scan {s:?}"),
                };
                assert_eq!(s.layout, r.layout, "{data:?} gz {gz}");
                assert_eq!(s.text_len, r.text.len() as u64);
                assert_eq!(s.warnings, r.warnings);
                check_checkpoints(&s, every, data, &r.text);
                let n = s.text_len;
                let mut rs = ranges(n, &s.checkpoints, extra);
                if all_ranges && n <= 40 {
                    for a in 0..=n {
                        for b in a..=n {
                            rs.push((a, b));
                        }
                    }
                }
                for (a, b) in rs {
                    let got = read_text_range_chunked(&path, &s.checkpoints, a, b, chunk)
                        .unwrap_or_else(|e| panic!("{data:?} every {every} {a}..{b}: {e}"));
                    assert_eq!(
                        got,
                        &r.text[a as usize..b as usize],
                        "{data:?} every {every} gz {gz} {a}..{b}"
                    );
                }
            }
        }
    }

    const EVERYS: [u64; 7] = [1, 2, 3, 7, 64, 1000, u64::MAX];

    /// The digest thread's jobs: many short records (more record ends than
    /// a job holds), empty ones among them, and records longer than a job,
    /// split across jobs, give read_fasta's digests, as on one thread.
    #[test]
    fn digests_of_many_records_and_of_long_ones() {
        let mut data = Vec::new();
        let mut x = 12345u32;
        let mut base = || {
            x = x.wrapping_mul(1103515245).wrapping_add(12345);
            b"ACGTacgtN"[(x >> 16) as usize % 9]
        };
        for k in 0..2 * JOB_ENDS {
            data.extend(format!(">r{k}\n").bytes());
            for _ in 0..k % 7 {
                data.push(base());
            }
            data.push(b'\n');
        }
        for k in 0..3 {
            data.extend(format!(">long{k}\n").bytes());
            for i in 0..(JOB_BYTES + 999 * k) {
                data.push(base());
                if i % 61 == 60 {
                    data.push(b'\n');
                }
            }
            data.push(b'\n');
        }
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "many.fa", &data);
        let want = read_fasta(&path).unwrap();
        assert!(want.layout.contigs.len() > JOB_ENDS);
        for threads in [1, 2] {
            let (s, _) = scan(&path, u64::MAX, 1 << 16, None, threads).unwrap();
            assert_eq!(s.layout, want.layout, "threads {threads}");
        }
    }

    #[test]
    fn hand_written_cases() {
        let cases: &[&[u8]] = &[
            b">a\nACGT\n",
            b">a\nACGT",
            b">a desc ription\nACgtN\nnA\n>b\nRRT\n>c\nN\n",
            b">a\r\nACGT\r\nNNac\r\n>b x\r\nGG\r\n",
            b">a\r\nACGT\r\nNNac\r\n>b x\r\nGG",
            b">a\n\nAC\n\n\nGT\n\n>b\n\n\nT\n",
            b">a\nACGT\n>b\n",
            b">a\nACGT\n>b",
            b">a\nACGT\n>b desc",
            b">a\n>b\nAC\n",
            b">a\nNNNN\n",
            b">a\nNNNN\n>b\nAC\n>c\nnnn",
            b">a\nNNACNN\n>b\nNNN\nNA\nCN\n",
            b">a\nRYSWKMBDHVUNryswkmbdhvun\nACGTacgt\n",
            b">a\tb c\nAC\n>b\x0cq\nGT\n",
            b">a\nAC\rGT\r\r\n>b\nT\n",
            b">a\nA\n>b\nC\n>c\nG\n>d\nT\n",
            b">\xff\n",
            b">a\nACGT\n>b\nNNNN\n>c\nACGT\nNNNN\n",
            b">a\n",
            b">a\n\n",
            b">",
            b">x\nA\n>y\nC>G\n",
            b">x\nAC\n\r>y\nG\n",
            // What bwa skips before the first header: a byte-order mark,
            // blank lines and `;` comments.
            b"\n>a\nACGT\n",
            b"\xef\xbb\xbf>a\nACGT\n",
            b"\xef\xbb\xbf\n;comment\n  \t\n\r\n>a\nACGT\nNNac\n>b\nGG\n",
            b";one\n;two ; >\n>a\nAC\n>b\nNNT\n",
        ];
        for c in cases {
            for chunk in [CHUNK, 1, 2, 5] {
                check(c, &EVERYS, chunk, &[], true);
            }
        }
        // One huge line and many short ones.
        let mut big = b">big desc\n".to_vec();
        for i in 0..200_000u32 {
            big.push(b"ACGTNacgtnRY"[(i.wrapping_mul(2654435761) >> 7) as usize % 12]);
        }
        big.extend_from_slice(b"\n>small\n");
        for i in 0..30_000u32 {
            big.push(b"ACGTN"[(i.wrapping_mul(40503) >> 5) as usize % 5]);
            if i % 61 == 60 {
                big.extend_from_slice(b"\r\n");
            }
        }
        for chunk in [CHUNK, 4093] {
            check(
                &big,
                &[1, 3, 7, 1 << 10, 1 << 16, u64::MAX],
                chunk,
                &[(5, 100_000), (99_999, 200_001), (123, 124)],
                false,
            );
        }
    }

    #[test]
    fn bad_inputs_fail_like_read_fasta() {
        let cases: &[(&[u8], &str)] = &[
            (b"", "empty"),
            (b"ACGT\n", "not a FASTA"),
            (
                b">a\nACGT\n>a\nAC\n",
                "duplicate sequence name 'a' (first at line 1)",
            ),
            (b">a\nAC\nAET\n", "line 3: invalid character"),
            (b">a\n\n>b\n\n", "no sequence with bases"),
            (b"@r\nACGT\n+\nIIII\n", "this is FASTQ, not FASTA"),
            (b"\x01\x02\x03\x00binary", "not a FASTA"),
            (
                b" >a\nACGT\n",
                "line 1: text after spaces before the first '>' header line",
            ),
            (b"\xef\xbbX>a\nACGT\n", "not a FASTA"),
            (b"\xef\xbb\xbf\xef\xbb\xbf>a\nACGT\n", "not a FASTA"),
            (b";c\nACGT\n>a\nAC\n", "not a FASTA"),
            (b">\nACGT\n", "empty name"),
            (b"> a\nACGT\n", "empty name"),
            (b">*a\nACGT\n", "not a valid SAM reference name"),
            (b">a,b\nACGT\n", "not a valid SAM reference name"),
            (b">a\nACGT\n>b\nAC*GT\n", "line 4: invalid character"),
            (b">a\nACGT\n>b\nAC=GT\n", "line 4: invalid character"),
            (b">a\nAC\n >b\nGT\n", "line 3: invalid character"),
            (b">a\nAC>b\nGT\n", "line 2: invalid character"),
            (b">a\n", "no sequence with bases"),
            (b">a", "no sequence with bases"),
            (b"@r\nACGT\n", "this is FASTQ, not FASTA"),
            (b"@", "this is FASTQ, not FASTA"),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (input, needle) in cases {
            for (path, gz) in [
                (write(&dir, "t.fa", input), false),
                (write(&dir, "t.fa.gz", &gzip(input, 1)), true),
            ] {
                // The oracle parses reads given as the reference as FASTQ
                // and may name another fault; the scan says what they are.
                let fastq = input.first() == Some(&b'@');
                let want = read_fasta(&path).unwrap_err().to_string();
                for chunk in [CHUNK, 1, 3] {
                    let got = scan_fasta_chunked(&path, 7, chunk).unwrap_err().to_string();
                    assert!(fastq || got == want, "{input:?} gz {gz}: {got} / {want}");
                    assert!(got.contains(needle), "{input:?} gz {gz}: {got}");
                    assert!(got.starts_with(&format!("{}: ", path.display())), "{got}");
                }
            }
        }
        // A missing file.
        let missing = dir.path().join("missing.fa");
        assert!(matches!(scan_fasta(&missing, 1), Err(Error::Io { .. })));
        // A truncated gzip file.
        let mut data = b">a\n".to_vec();
        for i in 0..100_000u32 {
            data.push(b"ACGT"[(i.wrapping_mul(2654435761) >> 9) as usize % 4]);
        }
        let gz = gzip(&data, 1);
        let path = write(&dir, "cut.fa.gz", &gz[..gz.len() / 2]);
        let want = read_fasta(&path).unwrap_err().to_string();
        let got = scan_fasta(&path, 7).unwrap_err().to_string();
        assert_eq!(got, want);
    }

    #[test]
    fn read_text_range_errors_when_file_changed() {
        let dir = tempfile::tempdir().unwrap();
        let mut data = b">a\n".to_vec();
        for i in 0..50_000u32 {
            data.push(b"ACGTN"[(i.wrapping_mul(2654435761) >> 9) as usize % 5]);
            if i % 70 == 69 {
                data.push(b'\n');
            }
        }
        data.extend_from_slice(b"\n>b\nACGTACGT\n");
        for gz in [false, true] {
            let bytes = |d: &[u8]| if gz { gzip(d, 2) } else { d.to_vec() };
            let path = write(&dir, if gz { "r.fa.gz" } else { "r.fa" }, &bytes(&data));
            let s = scan_fasta(&path, 1000).unwrap();
            let n = s.text_len;
            let all = read_text_range(&path, &s.checkpoints, 0, n).unwrap();
            assert_eq!(all, read_fasta(&path).unwrap().text);
            // Truncated in the middle, then to almost nothing.
            for cut in [data.len() / 2, data.len() - 3, 10, 1, 0] {
                std::fs::write(&path, bytes(&data[..cut])).unwrap();
                for (a, b) in [(0, n), (n - 5, n), (n / 2, n / 2 + 1), (0, 1)] {
                    let r = read_text_range(&path, &s.checkpoints, a, b);
                    let expect_ok = read_fasta(&path).ok().is_some_and(|r| {
                        (r.text.len() as u64) >= b && r.text[..b as usize] == all[..b as usize]
                    });
                    match r {
                        Ok(t) => assert!(
                            expect_ok,
                            "cut {cut} gz {gz} {a}..{b}: read {} bases",
                            t.len()
                        ),
                        Err(e) => {
                            assert!(e.to_string().contains(&path.display().to_string()), "{e}")
                        }
                    }
                }
                let e = read_text_range(&path, &s.checkpoints, 0, n).unwrap_err();
                assert!(e.to_string().contains(&path.display().to_string()), "{e}");
            }
            // A byte the scan would have refused.
            let mut bad = data.clone();
            bad[data.len() / 2] = b'*';
            std::fs::write(&path, bytes(&bad)).unwrap();
            let e = read_text_range(&path, &s.checkpoints, 0, n)
                .unwrap_err()
                .to_string();
            assert!(e.contains("reference changed since it was scanned?"), "{e}");
            // The file gone.
            std::fs::remove_file(&path).unwrap();
            assert!(read_text_range(&path, &s.checkpoints, 0, n).is_err());
        }
    }

    #[test]
    fn empty_range_and_no_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "n.fa", b">a\nNNN\n");
        let s = scan_fasta(&path, 1).unwrap();
        assert_eq!(s.text_len, 0);
        assert!(s.checkpoints.is_empty());
        assert_eq!(
            read_text_range(&path, &s.checkpoints, 0, 0).unwrap(),
            Vec::<u8>::new()
        );
        assert!(read_text_range(&path, &s.checkpoints, 0, 1).is_err());
        // Without checkpoints the text is read from the start of the file.
        let path = write(&dir, "m.fa", b">a x\nNNAC\n>b\nGT\n");
        assert_eq!(read_text_range(&path, &[], 1, 4).unwrap(), vec![1, 2, 3]);
        // The checkpoints are plain data.
        let c = Checkpoint {
            text_pos: 3,
            offset: 9,
        };
        assert_eq!(bytemuck::bytes_of(&c).len(), 16);
    }

    /// One generated FASTA line.
    fn line() -> impl Strategy<Value = Vec<u8>> {
        let letter = prop_oneof![
            8 => proptest::sample::select(b"ACGTacgt".to_vec()),
            3 => Just(b'N'),
            1 => proptest::sample::select(b"nRYSWKMBDHVUryswkmbdhvu".to_vec()),
            1 => Just(b'\r'),
            1 => proptest::sample::select(b" \t".to_vec()),
        ];
        let invalid = proptest::sample::select(b"X*->. 0\t".to_vec());
        prop_oneof![
            50 => proptest::collection::vec(letter.clone(), 0..90),
            2 => Just(Vec::new()),
            1 => proptest::collection::vec(letter, 0..20_000),
            1 => (proptest::collection::vec(proptest::sample::select(b"ACGTN".to_vec()), 0..10), invalid)
                .prop_map(|(mut v, b)| { v.push(b); v }),
        ]
    }

    /// One generated record: (name, description, lines).
    fn record() -> impl Strategy<Value = (Vec<u8>, Vec<u8>, Vec<Vec<u8>>)> {
        let name = prop_oneof![
            60 => "[a-zA-Z0-9_.|:]{1,8}".prop_map(|s| s.into_bytes()),
            1 => Just(b"*x".to_vec()),
            1 => Just(Vec::new()),
            1 => Just(b"a(b)".to_vec()),
        ];
        let desc = prop_oneof![
            3 => Just(Vec::new()),
            1 => "[ \t][ -~]{0,30}".prop_map(|s| s.into_bytes()),
        ];
        (name, desc, proptest::collection::vec(line(), 0..8))
    }

    /// A generated FASTA file.
    fn fasta() -> impl Strategy<Value = Vec<u8>> {
        (
            proptest::collection::vec(record(), 1..6),
            any::<bool>(),
            any::<bool>(),
            0u8..20,
        )
            .prop_map(|(records, crlf, final_eol, lead)| {
                let eol: &[u8] = if crlf { b"\r\n" } else { b"\n" };
                let mut f = Vec::new();
                if lead == 0 {
                    f.extend_from_slice(eol);
                }
                for (k, (name, desc, lines)) in records.iter().enumerate() {
                    f.push(b'>');
                    f.extend_from_slice(name);
                    f.extend_from_slice(desc);
                    // Unique names most of the time.
                    if lead != 1 && !name.is_empty() {
                        f.extend_from_slice(format!("_{k}").as_bytes());
                    }
                    for l in lines {
                        f.extend_from_slice(eol);
                        f.extend_from_slice(l);
                    }
                    if k + 1 < records.len() || final_eol {
                        f.extend_from_slice(eol);
                    }
                }
                f
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn random_fasta_matches_read_fasta(
            data in fasta(),
            every in prop_oneof![Just(1u64), Just(3), Just(7), 1u64..100, Just(4096), Just(u64::MAX)],
            extra in proptest::collection::vec((any::<u64>(), any::<u64>()), 0..6),
            chunk in prop_oneof![Just(CHUNK), 1usize..8, 8usize..300],
        ) {
            check(&data, &[every], chunk, &extra, data.len() < 300);
        }
    }

    /// Throughput of the scan (run with `--ignored --nocapture`).
    #[test]
    #[ignore]
    fn scan_speed() {
        let dir = tempfile::tempdir().unwrap();
        let mut data = Vec::with_capacity(210 << 20);
        let mut x = 1u64;
        for c in 0..4 {
            data.extend_from_slice(format!(">chr{c} desc\n").as_bytes());
            for i in 0..(50usize << 20) {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                data.push(if (i >> 16) % 17 == 3 {
                    b'N'
                } else {
                    b"ACGTacgt"[(x >> 61) as usize]
                });
                if i % 60 == 59 {
                    data.push(b'\n');
                }
            }
            data.push(b'\n');
        }
        let path = write(&dir, "big.fa", &data);
        let t = std::time::Instant::now();
        let d = Md5::digest(&data);
        eprintln!(
            "md5 alone: {:.0} MB/s {}",
            data.len() as f64 / t.elapsed().as_secs_f64() / 1e6,
            d[0]
        );
        let t = std::time::Instant::now();
        let s = scan_fasta(&path, 1 << 20).unwrap();
        let dt = t.elapsed().as_secs_f64();
        eprintln!("scan: {:.0} MB/s", data.len() as f64 / dt / 1e6);
        let t = std::time::Instant::now();
        let text = read_text_range(&path, &s.checkpoints, 0, s.text_len).unwrap();
        let dt = t.elapsed().as_secs_f64();
        eprintln!("read_text_range: {:.0} MB/s", data.len() as f64 / dt / 1e6);
        let t = std::time::Instant::now();
        let r = read_fasta(&path).unwrap();
        let dt = t.elapsed().as_secs_f64();
        eprintln!("read_fasta: {:.0} MB/s", data.len() as f64 / dt / 1e6);
        assert_eq!(r.text, text);
        assert_eq!(r.layout, s.layout);
    }
}
