//! Bad input: every case must exit non-zero with one error message that
//! names the file (and the line or record where there is one), must not
//! panic, and must leave nothing behind (no index, no `-o` file, no
//! `.NAME.tmp.*`).

mod common;

use std::path::Path;

use common::{FqRead, Rng, run_in, run_ok};

/// Runs `args` in `dir` and checks the failure: non-zero exit, no panic,
/// one `fmalign: error:` line containing every needle, and the directory
/// exactly as it was. Returns the message.
fn fails(dir: &Path, args: &[&str], stdin: Option<&[u8]>, needles: &[&str]) -> String {
    let before = common::list_dir(dir);
    let out = run_in(dir, args, stdin);
    let what = common::describe(args, &out);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "succeeded: {what}");
    assert_eq!(out.status.code(), Some(1), "{what}");
    assert!(!stderr.contains("panicked"), "{what}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one message: {what}");
    assert!(lines[0].starts_with("fmalign: error: "), "{what}");
    for n in needles {
        assert!(lines[0].contains(n), "message lacks {n:?}: {what}");
    }
    assert_eq!(common::list_dir(dir), before, "files left behind: {what}");
    lines[0].to_owned()
}

/// A command-line error (clap): exit 2, a message about the value, no panic,
/// no files.
fn usage_error(dir: &Path, args: &[&str], needle: &str) {
    let before = common::list_dir(dir);
    let out = run_in(dir, args, None);
    let what = common::describe(args, &out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "succeeded: {what}");
    assert!(!stderr.contains("panicked"), "{what}");
    assert!(
        stderr.starts_with("error: ") && stderr.contains(needle),
        "{what}"
    );
    assert_eq!(common::list_dir(dir), before, "files left behind: {what}");
}

fn index_fails(fasta: &[u8], name: &str, needles: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), fasta).unwrap();
    let mut all = vec![name];
    all.extend_from_slice(needles);
    fails(dir.path(), &["index", "-q", name], None, &all)
}

#[test]
fn empty_and_headerless_fasta() {
    index_fails(b"", "empty.fa", &[]);
    index_fails(b"\n\n", "blank.fa", &[]);
    index_fails(b"ACGTACGT\nACGT\n", "noheader.fa", &["'>'"]);
    index_fails(b"\nACGT\n", "noheader2.fa", &[]);
}

#[test]
fn fasta_without_any_bases() {
    for text in [
        &b">a\n"[..],
        b">a\n\n",
        b">a\n>b\n\n",
        b">a desc\n\n>b\n\n>c\n\n",
    ] {
        index_fails(text, "nobases.fa", &[]);
    }
}

/// An empty record among good ones is skipped with a warning that names
/// the file, the line and the record.
fn empty_record_skipped(text: &[u8], empty_name: &str, line: usize) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("ref.fa"), text).unwrap();
    let out = run_ok(d, &["index", "ref.fa"], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warning = stderr
        .lines()
        .find(|l| l.contains("warning"))
        .unwrap_or_else(|| panic!("no warning in {stderr}"));
    for n in [
        "ref.fa",
        &format!("line {line}"),
        &format!("'{empty_name}'"),
    ] {
        assert!(warning.contains(n), "{n:?} not in {warning:?}");
    }
    assert_eq!(common::list_dir(d), ["ref.fa", "ref.fa.fmi"]);
    let refs = common::parse_fasta(text);
    let info = String::from_utf8(run_ok(d, &["info", "ref.fa"], None).stdout).unwrap();
    let contigs: Vec<&str> = info
        .lines()
        .filter_map(|l| l.strip_prefix("contig\t"))
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    let want: Vec<&str> = refs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(contigs, want, "{info}");
    run_ok(d, &["check", "--full", "ref.fa"], None);
}

#[test]
fn empty_record_among_good_ones_is_skipped() {
    empty_record_skipped(b">a\n>b\nACGT\n", "a", 1);
    empty_record_skipped(b">a\nACGT\n>b\n\n>c\nGGCC\n", "b", 3);
    empty_record_skipped(b">a\nACGT\n>b\n>c\nGGCC\n", "b", 3);
}

/// The same at the very end of the file (a header line and nothing after).
#[test]
fn empty_record_at_end_of_file_is_skipped() {
    empty_record_skipped(b">a\nACGT\n>b\n\n", "b", 3);
    empty_record_skipped(b">a\nACGT\n>b\n", "b", 3);
    empty_record_skipped(b">a\nACGT\n>b", "b", 3);
}

#[test]
fn characters_outside_iupac() {
    for (text, line) in [
        (&b">a\nACGT\nACET\n"[..], 3),
        (b">a\nACGT\n>b\nAAAA\nCC1C\n", 5),
        (b">a\nAC*T\n", 2),
        (b">a\nACGTJ\n", 2),
        (b">a\r\nACGT\r\nAC!T\r\n", 3),
        (b">a\nACGT\n>b\nAAAA\n>c\n\xc3\xa9\n", 6),
    ] {
        index_fails(text, "bad.fa", &[&format!("line {line}")]);
    }
    // The byte is shown once escaped, in single quotes.
    for (text, shown) in [
        (&b">a\nAC*T\n"[..], "'*'"),
        (b">a\nAC\x01T\n", "'\\u{1}'"),
        (b">a\nACGT\x0bA\n", "'\\u{b}'"),
    ] {
        index_fails(text, "bad.fa", &[&format!("invalid character {shown} ")]);
    }
}

#[test]
fn binary_data() {
    let mut rng = Rng::new(1);
    let mut bytes: Vec<u8> = (0..4000).map(|_| rng.below(256) as u8).collect();
    bytes[0] = 0;
    index_fails(&bytes, "binary.fa", &[]);
    bytes[0] = b'>';
    bytes[1] = b'a';
    bytes[2] = b'\n';
    index_fails(&bytes, "binary2.fa", &[]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("ref.fa"), b">a\nACGTACGTTGCA\n").unwrap();
    run_ok(d, &["index", "-q", "ref.fa"], None);
    bytes[0] = 0x07;
    std::fs::write(d.join("binary.fq"), &bytes).unwrap();
    fails(
        d,
        &["map", "-q", "-o", "out.sam", "ref.fa", "binary.fq"],
        None,
        &["binary.fq"],
    );
    fails(
        d,
        &["map", "-q", "-o", "out.sam", "ref.fa", "-"],
        Some(&bytes),
        &["-"],
    );
}

#[test]
fn duplicate_contig_names() {
    let msg = index_fails(
        b">a\nAC\n>b\nGG\n>a other\nTT\n",
        "dup.fa",
        &["line 5", "'a'"],
    );
    assert!(msg.contains("line 1"), "first occurrence: {msg}");
}

#[test]
fn fastq_given_as_reference() {
    index_fails(b"@r\nACGT\n+\nIIII\n", "reads.fa", &[]);
}

#[test]
fn truncated_gzip_reference() {
    let mut rng = Rng::new(4);
    let mut text = b">a\n".to_vec();
    for _ in 0..2000 {
        text.extend(rng.bases(60));
        text.push(b'\n');
    }
    let gz = common::gzip(&text);
    index_fails(&gz[..gz.len() / 2], "cut.fa.gz", &[]);
}

/// Zero padding after the gzip data (tape blocks, some tools) is read as
/// its end, as gzip, bwa and samtools read it: the index is the unpadded
/// file's; other bytes after the data are an error, not dropped.
#[test]
fn gzip_reference_with_zero_padding_or_trailing_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng::new(5);
    let mut text = b">a\n".to_vec();
    for _ in 0..500 {
        text.extend(rng.bases(60));
        text.push(b'\n');
    }
    let gz = common::gzip(&text);
    std::fs::write(d.join("a.fa.gz"), &gz).unwrap();
    std::fs::write(d.join("pad.fa.gz"), [&gz[..], &[0u8; 4096][..]].concat()).unwrap();
    common::run_ok(d, &["index", "-q", "a.fa.gz"], None);
    common::run_ok(d, &["index", "-q", "pad.fa.gz"], None);
    assert!(
        std::fs::read(d.join("a.fa.gz.fmi")).unwrap()
            == std::fs::read(d.join("pad.fa.gz.fmi")).unwrap()
    );
    index_fails(
        &[&gz[..], b"more\n"].concat(),
        "junk.fa.gz",
        &["neither gzip nor zero padding"],
    );
}

/// A BGZF file cut at a block boundary inflates without an error: the
/// reference (and reads) would just end early. Indexing and mapping it
/// warn, naming the file, as samtools does; the whole file does not.
#[test]
fn bgzf_cut_at_a_block_boundary_warns() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng::new(5);
    let mut text = Vec::new();
    for name in ["a", "b"] {
        text.extend(format!(">{name}\n").bytes());
        for _ in 0..2000 {
            text.extend(rng.bases(60));
            text.push(b'\n');
        }
    }
    let mut w = noodles_bgzf::io::Writer::new(Vec::new());
    w.write_all(&text).unwrap();
    let whole = w.finish().unwrap();
    // The first block alone (BSIZE + 1 bytes; BSIZE at bytes 16..18).
    let first = usize::from(u16::from_le_bytes([whole[16], whole[17]])) + 1;
    assert!(first < whole.len() - 28, "more than one block");
    std::fs::write(d.join("whole.fa.gz"), &whole).unwrap();
    std::fs::write(d.join("cut.fa.gz"), &whole[..first]).unwrap();
    let warns = |args: &[&str]| {
        let out = run_ok(d, args, None);
        String::from_utf8_lossy(&out.stderr).contains("no BGZF end-of-file block")
    };
    assert!(!warns(&["index", "whole.fa.gz"]));
    assert!(warns(&["index", "cut.fa.gz"]));
    let reads = b"@r\nACGTACGTACGTACGTACGT\n+\nIIIIIIIIIIIIIIIIIIII\n".repeat(3000);
    let mut w = noodles_bgzf::io::Writer::new(Vec::new());
    w.write_all(&reads).unwrap();
    let whole = w.finish().unwrap();
    let first = usize::from(u16::from_le_bytes([whole[16], whole[17]])) + 1;
    std::fs::write(d.join("r.fq.gz"), &whole).unwrap();
    std::fs::write(d.join("cut.fq.gz"), &whole[..first]).unwrap();
    assert!(!warns(&["map", "whole.fa.gz", "r.fq.gz"]));
    // Cut mid-record, this one then fails on its last record; the warning
    // comes first.
    let out = run_in(d, &["map", "whole.fa.gz", "cut.fq.gz"], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cut.fq.gz: no BGZF end-of-file block"),
        "{err}"
    );
}

#[test]
fn missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fails(d, &["index", "-q", "nothere.fa"], None, &["nothere.fa"]);
    std::fs::write(d.join("ref.fa"), b">a\nACGTACGTTGCA\n").unwrap();
    std::fs::write(d.join("r.fq"), b"@r\nACGT\n+\nIIII\n").unwrap();
    fails(d, &["map", "-q", "ref.fa", "r.fq"], None, &["ref.fa"]);
    fails(
        d,
        &["map", "-q", "-o", "out.sam", "nothere.fmi", "r.fq"],
        None,
        &["nothere.fmi"],
    );
    run_ok(d, &["index", "-q", "ref.fa"], None);
    fails(
        d,
        &["map", "-q", "-o", "out.sam", "ref.fa", "missing.fq"],
        None,
        &["missing.fq"],
    );
    fails(d, &["info", "nothere.fmi"], None, &["nothere.fmi"]);
    fails(d, &["check", "nothere.fmi"], None, &["nothere.fmi"]);
    // The path given, not the temporary file written beside it.
    let msg = fails(
        d,
        &["map", "-q", "-o", "nodir/out.sam", "ref.fa", "r.fq"],
        None,
        &["nodir/out.sam"],
    );
    assert!(!msg.contains(".tmp."), "{msg}");
    let msg = fails(
        d,
        &["index", "-q", "-p", "nodir/x.fmi", "ref.fa"],
        None,
        &["nodir/x.fmi"],
    );
    assert!(!msg.contains(".tmp."), "{msg}");
}

/// A directory with a small index and a FASTQ of `count` good reads.
fn mapping_dir(count: usize) -> (tempfile::TempDir, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng::new(8);
    let mut fa = b">chrA\n".to_vec();
    fa.extend(rng.bases(3000));
    fa.extend_from_slice(b"\n>chrB\nNNNN");
    fa.extend(rng.bases(500));
    fa.push(b'\n');
    std::fs::write(d.join("ref.fa"), &fa).unwrap();
    run_ok(d, &["index", "-q", "ref.fa"], None);
    let refs = common::parse_fasta(&fa);
    let reads: Vec<FqRead> = common::sample_reads(&mut rng, &refs, count);
    (dir, common::fastq_text(&reads))
}

fn map_fails(name: &str, fastq: &[u8], needles: &[&str]) {
    let (dir, good) = mapping_dir(50);
    let d = dir.path();
    let mut all = vec![name];
    all.extend_from_slice(needles);
    // Alone, and after good reads (the error comes mid-stream, after SAM
    // has been written for earlier batches).
    let mut after = good.clone();
    after.extend_from_slice(fastq);
    // The rules are the same with mismatches allowed (-v 2).
    for (text, batch, v) in [
        (fastq, "1000000", "0"),
        (&after[..], "1", "0"),
        (&after[..], "100", "0"),
        (&after[..], "100", "2"),
    ] {
        std::fs::write(d.join(name), text).unwrap();
        fails(
            d,
            &[
                "map", "-q", "-v", v, "-K", batch, "-o", "out.sam", "ref.fa", name,
            ],
            None,
            &all,
        );
        std::fs::remove_file(d.join(name)).unwrap();
    }
}

#[test]
fn fastq_quality_length_differs() {
    map_fails(
        "bad.fq",
        b"@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nIII\n",
        &["line", "r2"],
    );
    map_fails("bad2.fq", b"@r1\nACGT\n+\nIIIII\n", &["line", "r1"]);
}

/// A character a read cannot hold is shown as the character it is ('é',
/// not 'Ã', the Latin-1 reading of its first UTF-8 byte), or as its byte
/// where it is not UTF-8; in the name, the sequence and the qualities.
#[test]
fn characters_a_read_cannot_hold_are_shown_as_they_are() {
    map_fails(
        "name.fq",
        "@r\u{e9}ad_\u{fc}\nACGT\n+\nIIII\n".as_bytes(),
        &["'r\u{e9}ad_\u{fc}'", "the character '\u{e9}'"],
    );
    map_fails(
        "raw.fq",
        b"@r\xffa\nACGT\n+\nIIII\n",
        &["byte 0xFF (not UTF-8)"],
    );
    map_fails(
        "seq.fq",
        "@r\nAC\u{3b1}T\n+\nIIIII\n".as_bytes(),
        &["'\u{3b1}' in its sequence"],
    );
    map_fails(
        "qual.fq",
        "@r\nACGTA\n+\nII\u{e9}I\n".as_bytes(),
        &["'\u{e9}' in its qualities"],
    );
}

/// A blank line between records, or a record that does not start with
/// '@': the message says so in words (needletail's own printed the line
/// break itself, mid-message).
#[test]
fn fastq_blank_line_or_bad_start() {
    map_fails(
        "blank.fq",
        b"@r1\nACGT\n+\nIIII\n\n@r2\nACGT\n+\nIIII\n",
        &["blank line", "'@'", "line"],
    );
    map_fails(
        "start.fq",
        b"@r1\nACGT\n+\nIIII\nxr2\nACGT\n+\nIIII\n",
        &["should start with '@', not 'x'", "line"],
    );
}

#[test]
fn fastq_without_plus() {
    map_fails(
        "bad.fq",
        b"@r1\nACGT\nIIII\n@r2\nACGT\n+\nIIII\n",
        &["line", "r1"],
    );
}

/// Multi-line FASTQ (old Sanger files): refused, and the message says why
/// and how to rewrite it.
#[test]
fn multi_line_fastq() {
    map_fails(
        "ml.fq",
        b"@r1\nACGTACGT\nACGT\n+\nIIIIIIII\nIIII\n",
        &["line", "r1", "'+'", "multi-line FASTQ", "seqtk seq -l0"],
    );
}

#[test]
fn truncated_fastq() {
    map_fails("cut.fq", b"@r1\nACGT\n+\nIIII\n@r2\nAC", &["line", "r2"]);
    map_fails("cut2.fq", b"@r1\nACGT\n+\nIIII\n@r2\n", &["line", "r2"]);
    // Cut before its quality line: said as a possible end of file, not only
    // as lengths that differ.
    map_fails(
        "cut3.fq",
        b"@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\n",
        &["line", "r2", "ends inside the record"],
    );
}

#[test]
fn truncated_gzip_fastq() {
    let (dir, good) = mapping_dir(3000);
    let d = dir.path();
    let gz = common::gzip(&good);
    // 10 bytes: the gzip header alone; 15: a few bytes of deflate data.
    for cut in [
        10,
        15,
        gz.len() / 3,
        gz.len() / 2,
        gz.len() - 10,
        gz.len() - 1,
    ] {
        std::fs::write(d.join("cut.fq.gz"), &gz[..cut]).unwrap();
        for batch in ["100", "10000000"] {
            fails(
                d,
                &[
                    "map",
                    "-q",
                    "-K",
                    batch,
                    "-o",
                    "out.sam",
                    "ref.fa",
                    "cut.fq.gz",
                ],
                None,
                &["cut.fq.gz"],
            );
        }
        // Cut in the middle, the message says how far it read: every whole
        // record the cut file inflates to.
        if cut == gz.len() / 2 {
            let msg = fails(
                d,
                &[
                    "map",
                    "-q",
                    "-t",
                    "2",
                    "-o",
                    "out.sam",
                    "ref.fa",
                    "cut.fq.gz",
                ],
                None,
                &["cut.fq.gz", "read error after "],
            );
            let n: u64 = msg
                .split("read error after ")
                .nth(1)
                .and_then(|t| t.split(' ').next())
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| panic!("{msg}"));
            let mut inflated = Vec::new();
            let _ = std::io::Read::read_to_end(
                &mut flate2::read::GzDecoder::new(&gz[..cut]),
                &mut inflated,
            );
            let whole = inflated.iter().filter(|&&b| b == b'\n').count() as u64 / 4;
            assert!(n >= 1 && n == whole, "{n} of {whole}: {msg}");
        }
        std::fs::remove_file(d.join("cut.fq.gz")).unwrap();
    }
}

/// `map`, `check` and `info` refuse `index`, each with a message naming it.
fn index_refused(d: &Path, index: &str, needles: &[&str]) {
    let mut all = vec![index];
    all.extend_from_slice(needles);
    fails(
        d,
        &["map", "-q", "-o", "out.sam", index, "r.fq"],
        None,
        &all,
    );
    fails(d, &["check", index], None, &all);
    fails(d, &["check", "--full", index], None, &all);
    fails(d, &["info", index], None, &all);
}

#[test]
fn not_an_index() {
    let (dir, good) = mapping_dir(20);
    let d = dir.path();
    std::fs::write(d.join("r.fq"), &good).unwrap();
    std::fs::copy(d.join("ref.fa"), d.join("fasta.fmi")).unwrap();
    index_refused(d, "fasta.fmi", &[]);
    std::fs::write(d.join("empty.fmi"), b"").unwrap();
    index_refused(d, "empty.fmi", &[]);
    std::fs::write(d.join("r2.fa"), b">a\nACGT\n").unwrap();
    // A FASTA without its .fmi.
    index_refused(d, "r2.fa", &[]);
    // An index for another format version.
    let mut v = std::fs::read(d.join("ref.fa.fmi")).unwrap();
    v[12] = 9;
    std::fs::write(d.join("v9.fmi"), &v).unwrap();
    index_refused(d, "v9.fmi", &[]);
    // A well-formed header of format version 1 (before the mirror index):
    // refused with a request to rebuild, not as damage.
    let mut v1 = std::fs::read(d.join("ref.fa.fmi")).unwrap();
    v1[12..16].copy_from_slice(&1u32.to_le_bytes());
    let crc = crc32(&v1[..36]);
    v1[36..40].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(d.join("v1.fmi"), &v1).unwrap();
    index_refused(
        d,
        "v1.fmi",
        &[
            "unsupported index format version 1",
            "rebuild it with `fmalign index`",
        ],
    );
}

/// CRC-32 (IEEE, as the index header uses), bit by bit.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn truncated_index() {
    let (dir, good) = mapping_dir(20);
    let d = dir.path();
    std::fs::write(d.join("r.fq"), &good).unwrap();
    let full = std::fs::read(d.join("ref.fa.fmi")).unwrap();
    let n = full.len();
    for cut in [
        1,
        7,
        8,
        40,
        63,
        64,
        100,
        319,
        320,
        383,
        384,
        500,
        n / 2,
        n - 64,
        n - 1,
    ] {
        std::fs::write(d.join("cut.fmi"), &full[..cut]).unwrap();
        index_refused(d, "cut.fmi", &[]);
    }
    // And one byte too many.
    let mut long = full.clone();
    long.push(0);
    std::fs::write(d.join("cut.fmi"), &long).unwrap();
    index_refused(d, "cut.fmi", &[]);
}

/// A small index: two contigs, an ambiguous run, 32-bit positions.
fn small_index() -> (tempfile::TempDir, Vec<u8>) {
    let (dir, good) = mapping_dir(20);
    std::fs::write(dir.path().join("r.fq"), &good).unwrap();
    let bytes = std::fs::read(dir.path().join("ref.fa.fmi")).unwrap();
    (dir, bytes)
}

/// The section table of an index: (offset, len) per section, for messages.
fn describe_offset(bytes: &[u8], off: usize) -> String {
    let u64_at = |k: usize| u64::from_le_bytes(bytes[k..k + 8].try_into().unwrap()) as usize;
    if off < 64 {
        return "header".into();
    }
    if off < 64 + 10 * 32 {
        return "section table".into();
    }
    for s in 0..10 {
        let e = 64 + 32 * s;
        let (o, l) = (u64_at(e + 8), u64_at(e + 16));
        if (o..o + l).contains(&off) {
            return format!("section {}", s + 1);
        }
    }
    "padding between sections".into()
}

/// Flipping any byte at every 97th offset of a small index must make `map`
/// and `check` refuse it.
#[test]
fn flipped_bytes_are_refused_by_the_binary() {
    let (dir, bytes) = small_index();
    let d = dir.path();
    let mut accepted = Vec::new();
    for off in (0..bytes.len()).step_by(97) {
        let mut b = bytes.clone();
        b[off] ^= 0x10;
        std::fs::write(d.join("flip.fmi"), &b).unwrap();
        for args in [
            &["check", "flip.fmi"][..],
            &["map", "-q", "-o", "out.sam", "flip.fmi", "r.fq"],
        ] {
            let out = run_in(d, args, None);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!stderr.contains("panicked"), "offset {off}: {stderr}");
            if out.status.success() {
                accepted.push(format!(
                    "{off} ({}) by {}",
                    describe_offset(&bytes, off),
                    args[0]
                ));
                let _ = std::fs::remove_file(d.join("out.sam"));
            } else {
                assert!(stderr.contains("flip.fmi"), "offset {off}: {stderr}");
            }
        }
        assert!(
            !d.join("out.sam").exists(),
            "offset {off}: out.sam left behind"
        );
    }
    assert!(
        accepted.is_empty(),
        "index with a flipped byte accepted at offsets (of {}): {accepted:#?}",
        bytes.len()
    );
}

/// In process, every single byte of a small index, and several bit
/// positions: `Index::from_bytes` must refuse every damaged copy.
#[test]
fn every_flipped_byte_is_refused_by_the_library() {
    let (_dir, bytes) = small_index();
    let mut accepted = Vec::new();
    for off in 0..bytes.len() {
        for bit in [0x01u8, 0x80] {
            let mut b = bytes.clone();
            b[off] ^= bit;
            if fmalign::Index::from_bytes(Path::new("flip.fmi"), &b).is_ok() {
                accepted.push(off);
                break;
            }
        }
    }
    let mut ranges: Vec<(usize, usize, String)> = Vec::new();
    for off in accepted {
        match ranges.last_mut() {
            Some(r) if r.1 + 1 == off => r.1 = off,
            _ => ranges.push((off, off, describe_offset(&bytes, off))),
        }
    }
    assert!(
        ranges.is_empty(),
        "damaged copies accepted at byte ranges (of {}): {ranges:?}",
        bytes.len()
    );
    assert!(fmalign::Index::from_bytes(Path::new("ok.fmi"), &bytes).is_ok());
}

#[test]
fn zero_counts_are_usage_errors() {
    let (dir, good) = mapping_dir(5);
    let d = dir.path();
    std::fs::write(d.join("r.fq"), &good).unwrap();
    std::fs::remove_file(d.join("ref.fa.fmi")).unwrap();
    usage_error(d, &["index", "-q", "-t", "0", "ref.fa"], "at least 1");
    usage_error(d, &["index", "-q", "--threads=0", "ref.fa"], "at least 1");
    run_ok(d, &["index", "-q", "ref.fa"], None);
    usage_error(
        d,
        &["map", "-q", "-t", "0", "-o", "out.sam", "ref.fa", "r.fq"],
        "at least 1",
    );
    usage_error(
        d,
        &["map", "-q", "-k", "0", "-o", "out.sam", "ref.fa", "r.fq"],
        "at least 1",
    );
    usage_error(
        d,
        &["map", "-q", "-K", "0", "-o", "out.sam", "ref.fa", "r.fq"],
        "at least 1",
    );
    usage_error(
        d,
        &[
            "map", "-q", "-k", "2", "-a", "-o", "out.sam", "ref.fa", "r.fq",
        ],
        "-a",
    );
    usage_error(
        d,
        &["map", "-q", "-t", "-1", "-o", "out.sam", "ref.fa", "r.fq"],
        "-1",
    );
    // A bad --sa-sample is the library's usage error: exit 1, no file.
    std::fs::remove_file(d.join("ref.fa.fmi")).unwrap();
    fails(
        d,
        &["index", "-q", "--sa-sample", "3", "ref.fa"],
        None,
        &["sa-sample"],
    );
    fails(
        d,
        &["index", "-q", "--sa-sample", "0", "ref.fa"],
        None,
        &["sa-sample"],
    );
}

/// Through the library: every truncation of a small index (every length
/// from 0 to one byte short) is refused by the loader, naming the file.
#[test]
fn every_truncation_is_refused_by_the_loader() {
    let (_dir, bytes) = small_index();
    let path = Path::new("small.fmi");
    assert!(fmalign::Index::from_bytes(path, &bytes).is_ok());
    for len in 0..bytes.len() {
        match fmalign::Index::from_bytes(path, &bytes[..len]) {
            Ok(_) => panic!("truncated to {len} of {} bytes: accepted", bytes.len()),
            Err(e) => assert!(e.to_string().contains("small.fmi"), "{len}: {e}"),
        }
    }
}
