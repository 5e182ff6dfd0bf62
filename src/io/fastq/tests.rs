use super::*;
use std::io::Read;

use crate::error::Result;
use std::path::Path;

use super::batch::{check_read, read_ok};
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
                let src =
                    ReadSource::with_pieces(Cursor::new(input.clone()), path, threads, Some(piece));
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
