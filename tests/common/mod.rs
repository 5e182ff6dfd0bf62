//! Shared helpers of the integration tests: a deterministic RNG, an
//! independent FASTA/FASTQ/SAM reader, the naive-search oracle, read
//! sampling and a way to run the real binary.
//!
//! Nothing here uses `fmalign`'s own parsing or search code: every expected
//! result is recomputed from the input files by the simplest possible means.

#![allow(dead_code)]

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The directory of the small real data files copied into the repository.
pub fn test_data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("test_data")
        .join(name)
}

/// SplitMix64: tiny, deterministic, good enough for sampling test inputs.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        self.next_u64() % n
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi);
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    pub fn base(&mut self) -> u8 {
        b"ACGT"[self.below(4) as usize]
    }

    pub fn bases(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.base()).collect()
    }

    /// A Phred+33 quality string.
    pub fn qual(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| b'!' + self.below(41) as u8).collect()
    }
}

/// Watson-Crick complement of A, C, G, T (either case, case kept); every
/// other byte is returned unchanged except the common IUPAC codes.
pub fn complement(b: u8) -> u8 {
    let up = match b.to_ascii_uppercase() {
        b'A' => b'T',
        b'C' => b'G',
        b'G' => b'C',
        b'T' => b'A',
        b'N' => b'N',
        b'R' => b'Y',
        b'Y' => b'R',
        b'K' => b'M',
        b'M' => b'K',
        b'B' => b'V',
        b'V' => b'B',
        b'D' => b'H',
        b'H' => b'D',
        b'S' => b'S',
        b'W' => b'W',
        _ => return b,
    };
    if b.is_ascii_lowercase() {
        up.to_ascii_lowercase()
    } else {
        up
    }
}

/// Reverse complement, keeping case.
pub fn revcomp(seq: &[u8]) -> Vec<u8> {
    seq.iter().rev().map(|&b| complement(b)).collect()
}

/// A read's bases as SAM's SEQ holds them: upper case, and what BAM cannot
/// store (`.`, `X`, `U`, …) as `N`.
pub fn sam_seq(seq: &[u8]) -> Vec<u8> {
    seq.iter()
        .map(|b| b.to_ascii_uppercase())
        .map(|b| {
            if b"=ACMGRSVTWYHKDBN".contains(&b) {
                b
            } else {
                b'N'
            }
        })
        .collect()
}

/// `MC:Z` on paired records (as bwa mem writes it): every record whose
/// mate is mapped carries the CIGAR of the mate's primary record, and a
/// record whose mate is unmapped carries none. `recs`: a paired SAM's
/// records, each pair's primaries present.
pub fn check_mate_cigars(recs: &[SamRec]) {
    let primary = |name: &str, first: bool| {
        recs.iter()
            .find(|r| r.qname == name && r.flag & 0x900 == 0 && (r.flag & 0x40 != 0) == first)
            .unwrap_or_else(|| panic!("no primary of {name}"))
    };
    let mut checked = 0;
    for r in recs.iter().filter(|r| r.flag & 1 != 0) {
        let mate = primary(&r.qname, r.flag & 0x40 == 0);
        if mate.unmapped() {
            assert_eq!(r.tag("MC"), None, "mate unmapped: {r:?}");
        } else {
            assert_eq!(r.tag("MC"), Some(mate.cigar.as_str()), "{r:?} {mate:?}");
            checked += 1;
        }
    }
    assert!(checked > 0, "no record with a mapped mate");
}

/// One reference sequence, as the oracle sees it: the name and the bases,
/// upper-cased, without line breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefSeq {
    pub name: String,
    pub seq: Vec<u8>,
}

/// A minimal FASTA reader (plain text): `>` starts a record whose name is
/// the header up to the first whitespace; records without bases are
/// dropped (as `fmalign` drops them).
pub fn parse_fasta(text: &[u8]) -> Vec<RefSeq> {
    let mut out: Vec<RefSeq> = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(h) = line.strip_prefix(b">") {
            let end = h
                .iter()
                .position(|b| b.is_ascii_whitespace())
                .unwrap_or(h.len());
            out.push(RefSeq {
                name: String::from_utf8(h[..end].to_vec()).unwrap(),
                seq: Vec::new(),
            });
        } else {
            let r = out.last_mut().expect("FASTA starts with a header");
            r.seq.extend(line.iter().map(|b| b.to_ascii_uppercase()));
        }
    }
    out.retain(|r| !r.seq.is_empty());
    out
}

/// Reads a whole file, decompressing it if it is gzip.
pub fn read_maybe_gz(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    }
}

/// One read of a FASTQ file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FqRead {
    pub name: String,
    pub seq: Vec<u8>,
    pub qual: Vec<u8>,
}

impl FqRead {
    /// The QNAME of the read's records: the name without a trailing `/1`
    /// or `/2` (as bwa; written here, not taken from the library).
    pub fn qname(&self) -> &str {
        let n = self.name.as_str();
        match n.strip_suffix("/1").or_else(|| n.strip_suffix("/2")) {
            Some(base) => base,
            None => n,
        }
    }
}

/// A minimal four-line FASTQ reader.
pub fn parse_fastq(text: &[u8]) -> Vec<FqRead> {
    let lines: Vec<&[u8]> = text
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k + 3 < lines.len() {
        let h = lines[k].strip_prefix(b"@").expect("FASTQ header");
        assert!(lines[k + 2].starts_with(b"+"), "FASTQ '+' line");
        let end = h
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(h.len());
        out.push(FqRead {
            name: String::from_utf8(h[..end].to_vec()).unwrap(),
            seq: lines[k + 1].to_vec(),
            qual: lines[k + 3].to_vec(),
        });
        k += 4;
    }
    out
}

/// FASTQ text for `reads`.
pub fn fastq_text(reads: &[FqRead]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in reads {
        out.push(b'@');
        out.extend_from_slice(r.name.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(&r.seq);
        out.extend_from_slice(b"\n+\n");
        out.extend_from_slice(&r.qual);
        out.push(b'\n');
    }
    out
}

/// Gzip-compresses `data`.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// An exact hit as the oracle reports it: contig index, 0-based position,
/// reverse strand.
pub type OHit = (u32, u64, bool);

/// The oracle: every placement of `read` (case-insensitive) on either strand
/// where the reference window is made of the same unambiguous bases. A read
/// with anything but A/C/G/T (or that is empty) has no hits. A read matches
/// the reverse strand at `p` if its reverse complement equals
/// `ref[p..p + len]`. Sorted by contig, position, strand.
pub fn oracle(refs: &[RefSeq], read: &[u8]) -> Vec<OHit> {
    let fwd: Vec<u8> = read.iter().map(|b| b.to_ascii_uppercase()).collect();
    if fwd.is_empty() || fwd.iter().any(|b| !b"ACGT".contains(b)) {
        return Vec::new();
    }
    let rev = revcomp(&fwd);
    let m = fwd.len();
    let mut hits = Vec::new();
    for (k, r) in refs.iter().enumerate() {
        if r.seq.len() < m {
            continue;
        }
        for (p, w) in r.seq.windows(m).enumerate() {
            if w == &fwd[..] {
                hits.push((k as u32, p as u64, false));
            }
            if w == &rev[..] {
                hits.push((k as u32, p as u64, true));
            }
        }
    }
    hits.sort_unstable();
    hits
}

/// Converts the library's hits into oracle form.
pub fn lib_hits(hits: &[fmalign::read::Hit]) -> Vec<OHit> {
    hits.iter().map(|h| (h.contig, h.pos, h.rev)).collect()
}

/// A length for a sampled read: often tiny (many hits), often medium, and
/// sometimes long.
fn read_len(rng: &mut Rng, max: u64) -> u64 {
    let want = match rng.below(10) {
        0..=2 => rng.range(1, 3),
        3..=6 => rng.range(4, 24),
        _ => rng.range(25, 160),
    };
    want.clamp(1, max.max(1))
}

/// A random window of `seq` (which must be non-empty).
fn window(rng: &mut Rng, seq: &[u8]) -> Vec<u8> {
    let len = read_len(rng, seq.len() as u64) as usize;
    let start = rng.below((seq.len() - len + 1) as u64) as usize;
    seq[start..start + len].to_vec()
}

/// Samples one read from `refs`: windows of contigs (either strand, any
/// case, possibly damaged by an N or an IUPAC code), windows of the
/// concatenation of all unambiguous bases (these cross ambiguous runs and
/// contig ends, where `fmalign`'s text has junctions), windows across two
/// consecutive contigs, and random reads (length 1..=3 included).
pub fn sample_read(rng: &mut Rng, refs: &[RefSeq], unambiguous: &[u8]) -> Vec<u8> {
    let kind = rng.below(12);
    let mut read = match kind {
        0..=3 => {
            let r = rng.pick(refs);
            window(rng, &r.seq)
        }
        4 | 5 if !unambiguous.is_empty() => window(rng, unambiguous),
        6 if refs.len() > 1 => {
            let k = rng.below(refs.len() as u64 - 1) as usize;
            let (a, b) = (&refs[k].seq, &refs[k + 1].seq);
            let ta = rng.range(1, a.len().min(40) as u64) as usize;
            let tb = rng.range(1, b.len().min(40) as u64) as usize;
            let mut v = a[a.len() - ta..].to_vec();
            v.extend_from_slice(&b[..tb]);
            v
        }
        7 => {
            let len = rng.range(1, 3) as usize;
            rng.bases(len)
        }
        8 => {
            let len = rng.range(4, 40) as usize;
            rng.bases(len)
        }
        _ => {
            let r = rng.pick(refs);
            let mut w = window(rng, &r.seq);
            let k = rng.below(w.len() as u64) as usize;
            w[k] = *rng.pick(b"NNNNnRY.");
            w
        }
    };
    if rng.chance(1, 2) {
        read = revcomp(&read);
    }
    if rng.chance(1, 8) {
        read.make_ascii_lowercase();
    } else if rng.chance(1, 16) {
        for b in read.iter_mut() {
            if rng.chance(1, 2) {
                *b = b.to_ascii_lowercase();
            }
        }
    }
    read
}

/// The unambiguous bases of all contigs, concatenated: where a window can
/// cross an ambiguous run or a contig end in `fmalign`'s text.
pub fn unambiguous_text(refs: &[RefSeq]) -> Vec<u8> {
    refs.iter()
        .flat_map(|r| r.seq.iter().copied())
        .filter(|b| b"ACGT".contains(b))
        .collect()
}

/// `count` reads sampled from `refs`, named r0, r1, ..., with qualities.
pub fn sample_reads(rng: &mut Rng, refs: &[RefSeq], count: usize) -> Vec<FqRead> {
    let text = unambiguous_text(refs);
    (0..count)
        .map(|i| {
            let seq = sample_read(rng, refs, &text);
            let qual = rng.qual(seq.len());
            FqRead {
                name: format!("r{i}"),
                seq,
                qual,
            }
        })
        .collect()
}

/// Whether samtools is on PATH (required in CI).
pub fn have_samtools() -> bool {
    let have = Command::new("samtools")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        eprintln!("NOTICE: samtools is not on PATH; skipping the samtools checks");
        assert!(
            std::env::var_os("CI").is_none(),
            "samtools is required in CI (.ci/run installs it)"
        );
    }
    have
}

/// Runs samtools in `dir`, insisting on success; its stdout.
pub fn samtools(dir: &Path, args: &[&str]) -> Vec<u8> {
    let o = Command::new("samtools")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "samtools {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// The path of the `fmalign` binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_fmalign")
}

/// Runs the binary with `args` in `dir`, feeding `stdin`.
pub fn run_in<S: AsRef<OsStr>>(dir: &Path, args: &[S], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = cmd.spawn().expect("spawn fmalign");
    let writer = stdin.map(|data| {
        let data = data.to_vec();
        let mut pipe = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = pipe.write_all(&data);
        })
    });
    let out = child.wait_with_output().expect("wait for fmalign");
    if let Some(w) = writer {
        w.join().unwrap();
    }
    out
}

/// Describes a finished command for assertion messages.
pub fn describe<S: AsRef<OsStr>>(args: &[S], out: &Output) -> String {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect();
    format!(
        "fmalign {}\nstatus: {}\nstderr:\n{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs the binary and insists on success and a stderr free of panics.
pub fn run_ok<S: AsRef<OsStr>>(dir: &Path, args: &[S], stdin: Option<&[u8]>) -> Output {
    let out = run_in(dir, args, stdin);
    assert!(out.status.success(), "{}", describe(args, &out));
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{}",
        describe(args, &out)
    );
    out
}

/// One SAM record, split by hand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SamRec {
    pub qname: String,
    pub flag: u16,
    pub rname: String,
    pub pos: u64,
    pub mapq: u8,
    pub cigar: String,
    pub rnext: String,
    pub pnext: u64,
    pub tlen: i64,
    pub seq: Vec<u8>,
    pub qual: Vec<u8>,
    pub tags: Vec<String>,
}

impl SamRec {
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|t| t.len() > 5 && &t[..2] == name)
            .map(|t| &t[5..])
    }

    pub fn unmapped(&self) -> bool {
        self.flag & 4 != 0
    }

    pub fn reverse(&self) -> bool {
        self.flag & 16 != 0
    }

    pub fn secondary(&self) -> bool {
        self.flag & 256 != 0
    }
}

/// Splits SAM text into header lines and records.
pub fn parse_sam(text: &[u8]) -> (Vec<String>, Vec<SamRec>) {
    let text = std::str::from_utf8(text).expect("SAM is UTF-8");
    let mut header = Vec::new();
    let mut recs = Vec::new();
    for line in text.lines() {
        if line.starts_with('@') {
            header.push(line.to_owned());
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert!(f.len() >= 11, "SAM record with {} fields: {line}", f.len());
        recs.push(SamRec {
            qname: f[0].into(),
            flag: f[1].parse().unwrap(),
            rname: f[2].into(),
            pos: f[3].parse().unwrap(),
            mapq: f[4].parse().unwrap(),
            cigar: f[5].into(),
            rnext: f[6].into(),
            pnext: f[7].parse().unwrap(),
            tlen: f[8].parse().unwrap(),
            seq: f[9].as_bytes().to_vec(),
            qual: f[10].as_bytes().to_vec(),
            tags: f[11..].iter().map(|s| s.to_string()).collect(),
        });
    }
    assert!(text.is_empty() || text.ends_with('\n'), "SAM ends mid-line");
    (header, recs)
}

/// The SAM text without its `@PG` lines (which hold the command line).
pub fn without_pg(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in text.split_inclusive(|&b| b == b'\n') {
        if !line.starts_with(b"@PG\t") {
            out.extend_from_slice(line);
        }
    }
    out
}

/// What `fmalign map` was asked to report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Default: one record per read, alternatives in XA when there are at
    /// most this many hits (`--max-xa`, default 3).
    Best(usize),
    /// `-k N`.
    UpTo(usize),
    /// `-a`.
    All,
}

/// Checks `-a` output against the oracle.
pub fn check_all_records(refs: &[RefSeq], reads: &[FqRead], sam: &[u8]) {
    check_records(refs, reads, sam, Mode::All);
}

/// Checks `map` output against the oracle. The header has one `@SQ` per
/// contig with its name, length and MD5. Records come in input order,
/// grouped by read. A read without hits has one flag-4 record with SEQ/QUAL
/// as given. A read with `n` hits has 1 (default), `min(k, n)` (`-k`) or
/// `n` (`-a`) records: the primary first, the others flagged 256, all
/// distinct and all among the oracle's hits (all of them for `-a`); in the
/// default mode XA lists the other hits exactly when `1 < n <= max_xa`.
/// Every mapped record has CIGAR `{len}M`, NM:i:0, X0:i:n, MAPQ 37 when
/// unique and 0 otherwise, SEQ as given (reverse-complemented with flag
/// 16), QUAL as given (reversed with flag 16), and SEQ equals the reference
/// window at POS.
pub fn check_records(refs: &[RefSeq], reads: &[FqRead], sam: &[u8], mode: Mode) {
    use md5::{Digest, Md5};
    let (header, recs) = parse_sam(sam);
    assert!(header[0].starts_with("@HD\tVN:"), "{}", header[0]);
    let sq: Vec<&String> = header.iter().filter(|h| h.starts_with("@SQ\t")).collect();
    assert_eq!(sq.len(), refs.len(), "one @SQ per contig");
    for (h, r) in sq.iter().zip(refs) {
        let md5: String = Md5::digest(&r.seq)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let mut fields: Vec<&str> = h.split('\t').skip(1).collect();
        fields.sort();
        let mut want = vec![
            format!("SN:{}", r.name),
            format!("LN:{}", r.seq.len()),
            format!("M5:{md5}"),
        ];
        want.sort();
        assert_eq!(fields, want, "{h}");
    }
    let contig_of: HashMap<&str, u32> = refs
        .iter()
        .enumerate()
        .map(|(k, r)| (r.name.as_str(), k as u32))
        .collect();
    let mut k = 0;
    for read in reads {
        let expect = oracle(refs, &read.seq);
        let start = k;
        while k < recs.len() && recs[k].qname == read.qname() {
            k += 1;
        }
        let mine = &recs[start..k];
        assert!(!mine.is_empty(), "no record for read {}", read.name);
        if expect.is_empty() {
            assert_eq!(mine.len(), 1, "read {}", read.name);
            let r = &mine[0];
            assert_eq!(r.flag, 4, "unmapped read {}", read.name);
            assert_eq!((r.rname.as_str(), r.pos, r.mapq), ("*", 0, 0));
            assert_eq!(r.cigar, "*");
            let seq = if read.seq.is_empty() {
                b"*".to_vec()
            } else {
                sam_seq(&read.seq)
            };
            assert_eq!(r.seq, seq, "unmapped SEQ of {}", read.name);
            assert_eq!(
                r.qual,
                expected_qual(read, false),
                "unmapped QUAL of {}",
                read.name
            );
            assert!(r.tags.is_empty(), "unmapped read {} has tags", read.name);
            continue;
        }
        let n = expect.len();
        let want_records = match mode {
            Mode::Best(_) => 1,
            Mode::UpTo(m) => m.min(n),
            Mode::All => n,
        };
        assert_eq!(mine.len(), want_records, "records of read {}", read.name);
        assert!(!mine[0].secondary(), "read {}: primary first", read.name);
        assert!(
            mine[1..].iter().all(|r| r.secondary()),
            "read {}: one primary",
            read.name
        );
        let want: BTreeSet<OHit> = expect.into_iter().collect();
        let mut got = BTreeSet::new();
        for r in mine {
            check_mapped_record(refs, &contig_of, read, r, n);
            assert!(
                got.insert((contig_of[r.rname.as_str()], r.pos - 1, r.reverse())),
                "read {}: duplicate record {r:?}",
                read.name
            );
        }
        assert!(
            got.is_subset(&want),
            "read {}: {got:?} not in {want:?}",
            read.name
        );
        if mode == Mode::All {
            assert_eq!(got, want, "read {} ({:?})", read.name, read.seq_str());
        }
        let xa = mine[0].tag("XA");
        match mode {
            Mode::Best(max_xa) if n > 1 && n <= max_xa => {
                let xa = xa.unwrap_or_else(|| panic!("read {}: no XA", read.name));
                assert!(xa.ends_with(';'), "{xa}");
                for alt in xa.trim_end_matches(';').split(';') {
                    let f: Vec<&str> = alt.split(',').collect();
                    assert_eq!(f.len(), 4, "{xa}");
                    assert_eq!(f[2], format!("{}M", read.seq.len()), "{xa}");
                    assert_eq!(f[3], "0", "{xa}");
                    let rev = match &f[1][..1] {
                        "+" => false,
                        "-" => true,
                        _ => panic!("XA strand: {xa}"),
                    };
                    let pos: u64 = f[1][1..].parse().unwrap();
                    assert!(
                        got.insert((contig_of[f[0]], pos - 1, rev)),
                        "read {}: XA repeats a hit: {xa}",
                        read.name
                    );
                }
                assert_eq!(got, want, "read {}: primary + XA", read.name);
            }
            _ => assert_eq!(xa, None, "read {}: unexpected XA", read.name),
        }
        for r in &mine[1..] {
            assert_eq!(r.tag("XA"), None, "secondary record with XA");
        }
    }
    assert_eq!(k, recs.len(), "records left over / out of order");
}

/// QUAL as `fmalign` must write it: as given (reversed on the reverse
/// strand), `*` when the read has none (FASTA input, empty read).
fn expected_qual(read: &FqRead, rev: bool) -> Vec<u8> {
    if read.qual.is_empty() {
        b"*".to_vec()
    } else if rev {
        read.qual.iter().rev().copied().collect()
    } else {
        read.qual.clone()
    }
}

/// The checks every mapped record must pass, given the oracle's hit count.
pub fn check_mapped_record(
    refs: &[RefSeq],
    contig_of: &HashMap<&str, u32>,
    read: &FqRead,
    r: &SamRec,
    hits: usize,
) {
    let ctx = || format!("read {} record {r:?}", read.name);
    assert_eq!(r.flag & !(16 | 256), 0, "{}", ctx());
    assert_eq!(r.cigar, format!("{}M", read.seq.len()), "{}", ctx());
    assert_eq!(
        (r.rnext.as_str(), r.pnext, r.tlen),
        ("*", 0, 0),
        "{}",
        ctx()
    );
    assert_eq!(r.mapq, if hits == 1 { 37 } else { 0 }, "{}", ctx());
    assert_eq!(r.tag("NM"), Some("0"), "{}", ctx());
    assert_eq!(r.tag("X0"), Some(hits.to_string().as_str()), "{}", ctx());
    let seq = if r.reverse() {
        sam_seq(&revcomp(&read.seq))
    } else {
        sam_seq(&read.seq)
    };
    assert_eq!(r.seq, seq, "SEQ: {}", ctx());
    assert_eq!(r.qual, expected_qual(read, r.reverse()), "QUAL: {}", ctx());
    let c = contig_of[r.rname.as_str()] as usize;
    let p = (r.pos - 1) as usize;
    let window = &refs[c].seq[p..p + read.seq.len()];
    assert_eq!(
        window,
        &r.seq.to_ascii_uppercase()[..],
        "reference window: {}",
        ctx()
    );
}

impl FqRead {
    pub fn seq_str(&self) -> String {
        String::from_utf8_lossy(&self.seq).into_owned()
    }
}

/// Files in `dir`, sorted, as names.
pub fn list_dir(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Keeps at most `max_short` reads shorter than `short` (reads of 1..=3
/// bases have thousands of hits on a real genome; a few are enough).
pub fn limit_short(reads: &mut Vec<FqRead>, short: usize, max_short: usize) {
    let mut seen = 0;
    reads.retain(|r| {
        if r.seq.len() >= short {
            return true;
        }
        seen += 1;
        seen <= max_short
    });
}

/// A file of `../shared/data` (or `$FMALIGN_SHARED_DATA`, where
/// scripts/gpu-check.sh carries the data to the GPU machine): `None`, with a
/// notice naming what goes unchecked (`what`), when it is missing, except
/// under CI, where that fails.
pub fn shared_data(name: &str, what: &str) -> Option<PathBuf> {
    let p = std::env::var_os("FMALIGN_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
        .join(name);
    if p.exists() {
        return Some(p);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "../shared/data/{name} is missing under CI"
    );
    eprintln!("NOTICE: ../shared/data/{name} not found; {what} not checked on it");
    None
}
