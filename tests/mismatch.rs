//! `fmalign map -v K` (K = 0..=3, bowtie-1 `-v` semantics) against an
//! independent oracle: a naive Hamming scan of every contig (upper-cased) on
//! both strands that accepts a window only when it holds no ambiguous
//! (non-ACGT) reference base and differs from the read (or its reverse
//! complement) in at most K places, a non-ACGT read base counting as a
//! mismatch against any reference base. Windows never run past a contig's
//! end, so no alignment spans two contigs.
//!
//! Everything goes through the binary (`fmalign index`, `fmalign map`) and
//! the SAM is read by hand: the hit sets of `-a`, every record's NM:i and
//! MD:Z re-derived from the reference window and SEQ, CIGAR, flags, SEQ and
//! QUAL, the default mode (primary from the best stratum, X0/X1, MAPQ from
//! the oracle's stratum counts, XA), `-k 2`, `--strata`, unmapped reads, and
//! byte-identical output for any thread count or batch size. A property test
//! compares the library's `hits_many` and (fewer cases) the binary with the
//! oracle on random small references.
//!
//! "Next stratum" (X1, c2 of MAPQ) is the next non-empty stratum after the
//! best one, as in bwa aln's c2 (not necessarily best + 1 mismatch).

mod common;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use common::{
    FqRead, RefSeq, Rng, SamRec, fastq_text, parse_fasta, parse_sam, revcomp, run_ok, sam_seq,
};
use proptest::prelude::*;

/// An alignment: contig index, 0-based leftmost position, reverse strand,
/// mismatches.
type MHit = (u32, u64, bool, u8);

/// The largest `-v`.
const MAX_K: u8 = 3;

fn is_base(b: u8) -> bool {
    matches!(b, b'A' | b'C' | b'G' | b'T')
}

// ---------------------------------------------------------------------------
// The oracle
// ---------------------------------------------------------------------------

/// The naive Hamming scan over `refs` (upper-case, as `parse_fasta` gives).
struct Oracle<'a> {
    refs: &'a [RefSeq],
    /// Per contig and position `p`: the first ambiguous position `>= p`.
    next_ambiguous: Vec<Vec<usize>>,
}

impl<'a> Oracle<'a> {
    fn new(refs: &'a [RefSeq]) -> Self {
        let next_ambiguous = refs
            .iter()
            .map(|r| {
                let n = r.seq.len();
                let mut v = vec![n; n + 1];
                for p in (0..n).rev() {
                    v[p] = if is_base(r.seq[p]) { v[p + 1] } else { p };
                }
                v
            })
            .collect();
        Oracle {
            refs,
            next_ambiguous,
        }
    }

    /// Every placement of `read` with at most `k` mismatches, sorted by
    /// mismatches, contig, position and strand.
    fn hits(&self, read: &[u8], k: u8) -> Vec<MHit> {
        let fwd = read.to_ascii_uppercase();
        let rev = revcomp(&fwd);
        let m = fwd.len();
        let mut out = Vec::new();
        if m == 0 {
            return out;
        }
        for (c, r) in self.refs.iter().enumerate() {
            if r.seq.len() < m {
                continue;
            }
            for p in 0..=r.seq.len() - m {
                if self.next_ambiguous[c][p] < p + m {
                    continue;
                }
                let w = &r.seq[p..p + m];
                for (is_rev, q) in [(false, &fwd), (true, &rev)] {
                    if let Some(nm) = hamming(w, q, k) {
                        out.push((c as u32, p as u64, is_rev, nm));
                    }
                }
            }
        }
        out.sort_unstable_by_key(|&(c, p, r, nm)| (nm, c, p, r));
        out
    }
}

/// Mismatches between a reference window (A/C/G/T only) and a read (upper
/// case; anything but A/C/G/T is a mismatch), or `None` past `k`.
fn hamming(window: &[u8], read: &[u8], k: u8) -> Option<u8> {
    let mut mm = 0u8;
    for (&w, &b) in window.iter().zip(read) {
        if !is_base(b) || b != w {
            mm += 1;
            if mm > k {
                return None;
            }
        }
    }
    Some(mm)
}

/// Best mismatch count, hits in the best stratum (c1) and in the next
/// non-empty one (c2). `hits` sorted by mismatches, non-empty.
fn strata(hits: &[MHit]) -> (u8, usize, usize) {
    let best = hits[0].3;
    let c1 = hits.iter().take_while(|h| h.3 == best).count();
    let c2 = match hits.get(c1) {
        Some(next) => hits[c1..].iter().take_while(|h| h.3 == next.3).count(),
        None => 0,
    };
    (best, c1, c2)
}

/// MAPQ as documented (bwa aln's approximation).
fn want_mapq(c1: usize, c2: usize, best_nm: u8, k: u8) -> u8 {
    if c1 != 1 {
        0
    } else if k > 0 && best_nm == k {
        25
    } else if c2 == 0 {
        37
    } else {
        let penalty = (4.343 * (c2.min(255) as f64).ln() + 0.5).floor() as i64;
        (23 - penalty).max(0) as u8
    }
}

/// MD:Z and NM of SEQ (as written) against a reference window.
fn md_nm(window: &[u8], seq: &[u8]) -> (String, u8) {
    let mut md = String::new();
    let (mut run, mut nm) = (0usize, 0u8);
    for (&w, &s) in window.iter().zip(seq) {
        let s = s.to_ascii_uppercase();
        if is_base(s) && s == w {
            run += 1;
        } else {
            md.push_str(&run.to_string());
            md.push(w as char);
            run = 0;
            nm += 1;
        }
    }
    md.push_str(&run.to_string());
    (md, nm)
}

// ---------------------------------------------------------------------------
// Checking `fmalign map` output
// ---------------------------------------------------------------------------

/// How `map` was asked to report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rep {
    /// No option: one record, XA when the read has at most 3 hits.
    Default,
    /// `-k N`.
    UpTo(usize),
    /// `-a`.
    All,
    /// `--strata -a`.
    StrataAll,
    /// `--strata -k N`.
    StrataUpTo(usize),
}

impl Rep {
    fn args(self) -> Vec<String> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect();
        match self {
            Rep::Default => Vec::new(),
            Rep::UpTo(n) => s(&["-k", &n.to_string()]),
            Rep::All => s(&["-a"]),
            Rep::StrataAll => s(&["--strata", "-a"]),
            Rep::StrataUpTo(n) => s(&["--strata", "-k", &n.to_string()]),
        }
    }
}

/// What the checked output held, so that tests can insist they were not
/// vacuous.
#[derive(Clone, Debug, Default)]
struct Seen {
    reads: usize,
    unmapped: usize,
    records: usize,
    /// Mapped records per NM.
    by_nm: [usize; 4],
    /// Mapped reads with a non-empty second stratum.
    two_strata: usize,
    /// Mapped reads with several best hits.
    repeats: usize,
    /// Reads whose next stratum is more than one mismatch worse than the best.
    strata_gap: usize,
    /// Records with XA.
    with_xa: usize,
    /// MAPQ values seen.
    mapqs: BTreeSet<u8>,
    /// Mapped reads with a non-ACGT base.
    mapped_with_n: usize,
    /// Reverse-strand records.
    reverse: usize,
}

impl Seen {
    fn add(&mut self, o: &Seen) {
        self.reads += o.reads;
        self.unmapped += o.unmapped;
        self.records += o.records;
        for (a, b) in self.by_nm.iter_mut().zip(o.by_nm) {
            *a += b;
        }
        self.two_strata += o.two_strata;
        self.repeats += o.repeats;
        self.strata_gap += o.strata_gap;
        self.with_xa += o.with_xa;
        self.mapqs.extend(&o.mapqs);
        self.mapped_with_n += o.mapped_with_n;
        self.reverse += o.reverse;
    }
}

/// QUAL as written: as given, reversed on the reverse strand.
fn qual_as_written(read: &FqRead, rev: bool) -> Vec<u8> {
    if rev {
        read.qual.iter().rev().copied().collect()
    } else {
        read.qual.clone()
    }
}

/// The checks of one mapped record that need only the reference: flag,
/// CIGAR, mate fields, SEQ, QUAL, and NM:i and MD:Z re-derived from the
/// reference window at POS. Returns the record as an alignment.
fn check_record(
    refs: &[RefSeq],
    contig_of: &HashMap<&str, u32>,
    read: &FqRead,
    r: &SamRec,
    k: u8,
) -> MHit {
    let ctx = || {
        format!(
            "read {} ({}) -v {k}, record {r:?}",
            read.name,
            read.seq_str()
        )
    };
    assert_eq!(r.flag & !(16 | 256), 0, "flag: {}", ctx());
    assert_eq!(r.cigar, format!("{}M", read.seq.len()), "CIGAR: {}", ctx());
    assert_eq!(
        (r.rnext.as_str(), r.pnext, r.tlen),
        ("*", 0, 0),
        "{}",
        ctx()
    );
    let seq = if r.reverse() {
        sam_seq(&revcomp(&read.seq))
    } else {
        sam_seq(&read.seq)
    };
    assert_eq!(r.seq, seq, "SEQ: {}", ctx());
    assert_eq!(
        r.qual,
        qual_as_written(read, r.reverse()),
        "QUAL: {}",
        ctx()
    );
    let c = *contig_of
        .get(r.rname.as_str())
        .unwrap_or_else(|| panic!("unknown RNAME: {}", ctx()));
    let contig = &refs[c as usize].seq;
    assert!(r.pos >= 1, "POS: {}", ctx());
    let p = (r.pos - 1) as usize;
    assert!(
        p + read.seq.len() <= contig.len(),
        "alignment runs past the end of {}: {}",
        r.rname,
        ctx()
    );
    let window = &contig[p..p + read.seq.len()];
    assert!(
        window.iter().all(|&b| is_base(b)),
        "alignment over an ambiguous reference base ({}): {}",
        String::from_utf8_lossy(window),
        ctx()
    );
    let (md, nm) = md_nm(window, &r.seq);
    assert_eq!(r.tag("MD"), Some(md.as_str()), "MD:Z: {}", ctx());
    assert_eq!(
        r.tag("NM"),
        Some(nm.to_string().as_str()),
        "NM:i: {}",
        ctx()
    );
    assert!(nm <= k, "more than {k} mismatches: {}", ctx());
    (c, p as u64, r.reverse(), nm)
}

/// Parses XA:Z into alignments (NM as listed).
fn parse_xa(xa: &str, contig_of: &HashMap<&str, u32>, len: usize) -> Vec<MHit> {
    assert!(xa.ends_with(';'), "XA: {xa}");
    xa.trim_end_matches(';')
        .split(';')
        .map(|alt| {
            let f: Vec<&str> = alt.split(',').collect();
            assert_eq!(f.len(), 4, "XA entry {alt:?} in {xa}");
            assert_eq!(f[2], format!("{len}M"), "XA CIGAR: {xa}");
            let rev = match &f[1][..1] {
                "+" => false,
                "-" => true,
                _ => panic!("XA strand: {xa}"),
            };
            let pos: u64 = f[1][1..].parse().unwrap();
            assert!(pos >= 1, "XA position: {xa}");
            let c = *contig_of
                .get(f[0])
                .unwrap_or_else(|| panic!("XA contig: {xa}"));
            (c, pos - 1, rev, f[3].parse().unwrap())
        })
        .collect()
}

/// Checks the SAM of `fmalign map -v k` with reporting `rep` against the
/// oracle. `expect[i]`: read `i`'s oracle hits with at most `MAX_K`
/// mismatches, sorted by mismatches.
fn check_map(
    refs: &[RefSeq],
    reads: &[FqRead],
    expect: &[Vec<MHit>],
    k: u8,
    rep: Rep,
    sam: &[u8],
) -> Seen {
    let (header, recs) = parse_sam(sam);
    let sq: Vec<&String> = header.iter().filter(|h| h.starts_with("@SQ\t")).collect();
    assert_eq!(sq.len(), refs.len(), "one @SQ per contig");
    for (h, r) in sq.iter().zip(refs) {
        assert!(
            h.contains(&format!("\tSN:{}\t", r.name))
                && h.contains(&format!("\tLN:{}", r.seq.len())),
            "{h}"
        );
    }
    let contig_of: HashMap<&str, u32> = refs
        .iter()
        .enumerate()
        .map(|(c, r)| (r.name.as_str(), c as u32))
        .collect();
    let mut seen = Seen::default();
    let mut at = 0;
    for (read, expect) in reads.iter().zip(expect) {
        let ctx = || format!("read {} ({}) -v {k} {rep:?}", read.name, read.seq_str());
        let start = at;
        while at < recs.len() && recs[at].qname == read.qname() {
            at += 1;
        }
        let mine = &recs[start..at];
        assert!(!mine.is_empty(), "no record: {}", ctx());
        seen.reads += 1;
        seen.records += mine.len();
        let hits: Vec<MHit> = expect.iter().filter(|h| h.3 <= k).copied().collect();
        if hits.is_empty() {
            assert_eq!(mine.len(), 1, "unmapped read, records: {}", ctx());
            let r = &mine[0];
            assert_eq!(r.flag, 4, "unmapped read: {} {r:?}", ctx());
            assert_eq!((r.rname.as_str(), r.pos, r.mapq), ("*", 0, 0), "{}", ctx());
            assert_eq!(r.cigar, "*", "{}", ctx());
            assert_eq!(r.seq, sam_seq(&read.seq), "unmapped SEQ: {}", ctx());
            assert_eq!(r.qual, read.qual, "unmapped QUAL: {}", ctx());
            assert!(r.tags.is_empty(), "unmapped read with tags: {}", ctx());
            seen.unmapped += 1;
            continue;
        }
        let (best, c1, c2) = strata(&hits);
        let n = hits.len();
        seen.two_strata += usize::from(c2 > 0);
        seen.repeats += usize::from(c1 > 1);
        seen.strata_gap += usize::from(c2 > 0 && hits[c1].3 > best + 1);
        seen.mapped_with_n +=
            usize::from(!read.seq.to_ascii_uppercase().iter().all(|&b| is_base(b)));
        let want_records = match rep {
            Rep::Default => 1,
            Rep::UpTo(m) => m.min(n),
            Rep::All => n,
            Rep::StrataAll => c1,
            Rep::StrataUpTo(m) => m.min(c1),
        };
        assert_eq!(mine.len(), want_records, "number of records: {}", ctx());
        assert!(!mine[0].secondary(), "primary first: {}", ctx());
        assert!(
            mine[1..].iter().all(|r| r.secondary()),
            "one primary, then secondary records: {}",
            ctx()
        );
        let want_set: BTreeSet<MHit> = hits.iter().copied().collect();
        let mapq = want_mapq(c1, c2, best, k);
        let x1 = c2.to_string();
        let mut got = Vec::new();
        for r in mine {
            let h = check_record(refs, &contig_of, read, r, k);
            assert!(
                want_set.contains(&h),
                "not an oracle hit: {h:?}; oracle {hits:?}; {}",
                ctx()
            );
            // Secondaries get 0, as bwa's.
            let want = if r.secondary() { 0 } else { mapq };
            assert_eq!(
                r.mapq,
                want,
                "MAPQ (c1 {c1}, c2 {c2}, best NM {best}): {}",
                ctx()
            );
            assert_eq!(r.tag("X0"), Some(c1.to_string().as_str()), "X0: {}", ctx());
            assert_eq!(
                r.tag("X1"),
                (k > 0).then_some(x1.as_str()),
                "X1 (written only with -v > 0): {}",
                ctx()
            );
            seen.by_nm[h.3 as usize] += 1;
            seen.reverse += usize::from(h.2);
            seen.mapqs.insert(r.mapq);
            got.push(h);
        }
        assert_eq!(got[0].3, best, "primary from the best stratum: {}", ctx());
        assert!(
            got.windows(2).all(|w| w[0].3 <= w[1].3),
            "records best stratum first: {got:?}; {}",
            ctx()
        );
        let got_set: BTreeSet<MHit> = got.iter().copied().collect();
        assert_eq!(
            got_set.len(),
            got.len(),
            "duplicate records {got:?}: {}",
            ctx()
        );
        let best_set: BTreeSet<MHit> = hits[..c1].iter().copied().collect();
        match rep {
            Rep::All => assert_eq!(got_set, want_set, "-a hit set: {}", ctx()),
            Rep::StrataAll => assert_eq!(got_set, best_set, "--strata -a: {}", ctx()),
            Rep::StrataUpTo(_) => {
                assert!(
                    got_set.is_subset(&best_set),
                    "--strata -k: {got:?}: {}",
                    ctx()
                )
            }
            Rep::UpTo(m) => {
                // The best min(m, n) hits (by mismatches).
                let want_nm: Vec<u8> = hits.iter().take(m).map(|h| h.3).collect();
                let got_nm: Vec<u8> = got.iter().map(|h| h.3).collect();
                assert_eq!(got_nm, want_nm, "-k {m}: the best hits: {got:?}: {}", ctx());
            }
            Rep::Default => {}
        }
        let xa = mine[0].tag("XA");
        if rep == Rep::Default && n > 1 && n <= 3 {
            let xa = xa.unwrap_or_else(|| panic!("no XA with {n} hits: {}", ctx()));
            seen.with_xa += 1;
            let mut all = got_set.clone();
            for h in parse_xa(xa, &contig_of, read.seq.len()) {
                assert!(all.insert(h), "XA repeats a hit {h:?}: {xa}: {}", ctx());
            }
            assert_eq!(all, want_set, "primary + XA ({xa}): {}", ctx());
        } else {
            assert_eq!(xa, None, "unexpected XA ({n} hits): {}", ctx());
        }
        for r in &mine[1..] {
            assert_eq!(r.tag("XA"), None, "secondary record with XA: {}", ctx());
        }
    }
    assert_eq!(at, recs.len(), "records left over or out of order");
    seen
}

// ---------------------------------------------------------------------------
// Running the binary
// ---------------------------------------------------------------------------

/// A reference and reads written to a temporary directory and indexed.
struct Case {
    dir: tempfile::TempDir,
    refs: Vec<RefSeq>,
    reads: Vec<FqRead>,
    /// Oracle hits with at most `MAX_K` mismatches per read.
    expect: Vec<Vec<MHit>>,
}

impl Case {
    fn new(fasta: &[u8], reads: Vec<FqRead>) -> Case {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("ref.fa"), fasta).unwrap();
        std::fs::write(d.join("reads.fq"), fastq_text(&reads)).unwrap();
        run_ok(d, &["index", "-q", "-t", "2", "ref.fa"], None);
        let refs = parse_fasta(fasta);
        let oracle = Oracle::new(&refs);
        let expect = reads.iter().map(|r| oracle.hits(&r.seq, MAX_K)).collect();
        Case {
            dir,
            refs,
            reads,
            expect,
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `fmalign map -q -v k [-t 2] [extra] ref.fa reads.fq`: the SAM.
    fn map(&self, k: u8, extra: &[String]) -> Vec<u8> {
        let mut args: Vec<String> = ["map", "-q", "-v"].iter().map(|s| s.to_string()).collect();
        args.push(k.to_string());
        if !extra.iter().any(|a| a == "-t") {
            args.extend(["-t".to_string(), "2".to_string()]);
        }
        args.extend(extra.iter().cloned());
        args.push("ref.fa".into());
        args.push("reads.fq".into());
        run_ok(self.path(), &args, None).stdout
    }

    /// Maps with every K and each reporting mode and checks the output.
    fn check(&self, reps: &[Rep]) -> Seen {
        let mut seen = Seen::default();
        for k in 0..=MAX_K {
            for &rep in reps {
                let sam = self.map(k, &rep.args());
                seen.add(&check_map(
                    &self.refs,
                    &self.reads,
                    &self.expect,
                    k,
                    rep,
                    &sam,
                ));
            }
        }
        seen
    }
}

const ALL_REPS: [Rep; 5] = [
    Rep::All,
    Rep::Default,
    Rep::UpTo(2),
    Rep::StrataAll,
    Rep::StrataUpTo(2),
];

// ---------------------------------------------------------------------------
// Random references and reads
// ---------------------------------------------------------------------------

/// A random reference as FASTA text: 3..=6 contigs, random and
/// near-repeated stretches (so that reads have hits in several strata), N
/// runs (also at contig starts and ends), the odd IUPAC code, lower case,
/// low-complexity runs, contigs shorter than most reads and an all-N one.
fn random_reference(rng: &mut Rng) -> Vec<u8> {
    let contigs = rng.range(3, 6);
    let mut pool: Vec<u8> = rng.bases(60);
    let mut fasta = Vec::new();
    for c in 0..contigs {
        let mut seq = Vec::new();
        match rng.below(9) {
            0 => {
                let len = rng.range(1, 12) as usize;
                seq = rng.bases(len);
            }
            1 if c > 0 => seq = vec![b'N'; rng.range(1, 20) as usize],
            _ => {
                if rng.chance(1, 3) {
                    seq.resize(rng.range(1, 10) as usize, b'N');
                }
                let target = rng.range(60, 500) as usize;
                while seq.len() < target {
                    match rng.below(12) {
                        0..=4 => {
                            let len = rng.range(5, 80) as usize;
                            seq.extend(rng.bases(len));
                        }
                        5..=7 => {
                            // A near copy of earlier sequence, either strand.
                            let len = rng.range(12, 60).min(pool.len() as u64) as usize;
                            let s = rng.below((pool.len() - len + 1) as u64) as usize;
                            let mut piece = pool[s..s + len].to_vec();
                            let subs = rng.below(4) as usize;
                            substitute(rng, &mut piece, subs);
                            if rng.chance(1, 2) {
                                piece = revcomp(&piece);
                            }
                            seq.extend(piece);
                        }
                        8 => {
                            let len = rng.range(1, 12) as usize;
                            let b = *rng.pick(b"NNNnR");
                            seq.extend(std::iter::repeat_n(b, len));
                        }
                        9 => {
                            let len = rng.range(5, 40) as usize;
                            seq.extend(rng.bases(len).to_ascii_lowercase());
                        }
                        10 => {
                            let unit = rng.range(1, 3) as usize;
                            let unit = rng.bases(unit);
                            let times = rng.range(3, 12) as usize;
                            seq.extend(unit.iter().cycle().take(unit.len() * times));
                        }
                        _ => seq.push(*rng.pick(b"RYKMSWBDHVN")),
                    }
                }
                if rng.chance(1, 3) {
                    let len = rng.range(1, 10) as usize;
                    seq.extend(std::iter::repeat_n(b'n', len));
                }
            }
        }
        pool.extend(
            seq.iter()
                .map(|b| b.to_ascii_uppercase())
                .filter(|&b| is_base(b)),
        );
        fasta.extend_from_slice(format!(">ctg{c} contig {c}\n").as_bytes());
        let width = if rng.chance(1, 2) {
            60
        } else {
            rng.range(7, 80) as usize
        };
        for line in seq.chunks(width) {
            fasta.extend_from_slice(line);
            fasta.push(b'\n');
        }
    }
    fasta
}

/// `count` random substitutions (each to a different base; a position may
/// be hit twice).
fn substitute(rng: &mut Rng, read: &mut [u8], count: usize) {
    if read.is_empty() {
        return;
    }
    for _ in 0..count {
        let i = rng.below(read.len() as u64) as usize;
        let old = read[i].to_ascii_uppercase();
        read[i] = loop {
            let b = rng.base();
            if b != old {
                break b;
            }
        };
    }
}

/// Random strand, the occasional N (or other non-ACGT byte), random case.
fn finish(rng: &mut Rng, mut read: Vec<u8>) -> Vec<u8> {
    if !read.is_empty() && rng.chance(1, 8) {
        let i = rng.below(read.len() as u64) as usize;
        read[i] = *rng.pick(b"NNNnR.");
    }
    if rng.chance(1, 2) {
        read = revcomp(&read);
    }
    if rng.chance(1, 10) {
        read.make_ascii_lowercase();
    }
    read
}

/// A window of `len` bases (at most the contig's length) of a random
/// contig.
fn contig_window(rng: &mut Rng, refs: &[RefSeq], len: usize) -> Vec<u8> {
    let r = rng.pick(refs);
    let len = len.min(r.seq.len());
    let s = rng.below((r.seq.len() - len + 1) as u64) as usize;
    r.seq[s..s + len].to_vec()
}

/// Windows of the unambiguous bases of all contigs, concatenated (what the
/// index's text holds), around a junction: an ambiguous run or a contig end.
/// Empty when there is none.
fn junction_window(rng: &mut Rng, refs: &[RefSeq]) -> Vec<u8> {
    let flat: Vec<(u8, usize, usize)> = refs
        .iter()
        .enumerate()
        .flat_map(|(c, r)| {
            r.seq
                .iter()
                .enumerate()
                .filter(|(_, b)| is_base(**b))
                .map(move |(p, &b)| (b, c, p))
        })
        .collect();
    let junctions: Vec<usize> = (1..flat.len())
        .filter(|&j| flat[j].1 != flat[j - 1].1 || flat[j].2 != flat[j - 1].2 + 1)
        .collect();
    if junctions.is_empty() {
        return Vec::new();
    }
    let j = *rng.pick(&junctions);
    let s = j.saturating_sub(rng.range(1, 25) as usize);
    let e = (j + rng.range(1, 25) as usize).min(flat.len());
    flat[s..e].iter().map(|x| x.0).collect()
}

/// Reads for a random reference: windows with 0..=4 substitutions, windows
/// around N runs (with the Ns, and skipping them), across contig ends,
/// reads of 1..=5 bases, whole contigs, reads longer than any contig, and
/// random ones.
fn random_reads(rng: &mut Rng, refs: &[RefSeq], count: usize) -> Vec<FqRead> {
    let longest = refs.iter().map(|r| r.seq.len()).max().unwrap();
    let holes: Vec<(usize, usize, usize)> = refs
        .iter()
        .enumerate()
        .flat_map(|(c, r)| {
            (0..r.seq.len())
                .filter(|&p| !is_base(r.seq[p]) && (p == 0 || is_base(r.seq[p - 1])))
                .map(move |p| {
                    let e = (p..r.seq.len())
                        .find(|&e| is_base(r.seq[e]))
                        .unwrap_or(r.seq.len());
                    (c, p, e)
                })
        })
        .collect();
    let mut reads = Vec::with_capacity(count);
    while reads.len() < count {
        let seq = match rng.below(20) {
            0..=8 => {
                let len = if rng.chance(1, 4) {
                    rng.range(30, 120)
                } else {
                    rng.range(6, 40)
                } as usize;
                let mut w = contig_window(rng, refs, len);
                let subs = rng.below(5) as usize;
                substitute(rng, &mut w, subs);
                finish(rng, w)
            }
            9 => {
                let mut w = junction_window(rng, refs);
                let subs = rng.below(3) as usize;
                substitute(rng, &mut w, subs);
                finish(rng, w)
            }
            10 if !holes.is_empty() => {
                // Over an ambiguous run, its bases included.
                let &(c, s, e) = rng.pick(&holes);
                let seq = &refs[c].seq;
                let a = s.saturating_sub(rng.range(0, 20) as usize);
                let b = (e + rng.range(0, 20) as usize).min(seq.len());
                let mut w = seq[a..b].to_vec();
                let subs = rng.below(2) as usize;
                substitute(rng, &mut w, subs);
                finish(rng, w)
            }
            11 if refs.len() > 1 => {
                // The end of one contig (raw, Ns included) and the start of
                // the next.
                let c = rng.below(refs.len() as u64 - 1) as usize;
                let (a, b) = (&refs[c].seq, &refs[c + 1].seq);
                let ta = rng.range(1, a.len().min(30) as u64) as usize;
                let tb = rng.range(1, b.len().min(30) as u64) as usize;
                let mut w = a[a.len() - ta..].to_vec();
                w.extend_from_slice(&b[..tb]);
                let subs = rng.below(2) as usize;
                substitute(rng, &mut w, subs);
                finish(rng, w)
            }
            12..=13 => {
                let len = rng.range(1, 5) as usize;
                let mut w = if rng.chance(1, 2) {
                    contig_window(rng, refs, len)
                } else {
                    rng.bases(len)
                };
                let subs = rng.below(2) as usize;
                substitute(rng, &mut w, subs);
                finish(rng, w)
            }
            14 => {
                // Longer than any contig.
                let extra = rng.range(1, 12) as usize;
                let mut w = if rng.chance(1, 2) {
                    let r = refs.iter().find(|r| r.seq.len() == longest).unwrap();
                    let mut w = r.seq.clone();
                    if rng.chance(1, 2) {
                        w.extend(rng.bases(extra));
                    } else {
                        let mut v = rng.bases(extra);
                        v.extend(w);
                        w = v;
                    }
                    w
                } else {
                    rng.bases(longest + extra)
                };
                let subs = rng.below(3) as usize;
                substitute(rng, &mut w, subs);
                finish(rng, w)
            }
            15 => {
                // A whole contig, maybe damaged.
                let mut w = rng.pick(refs).seq.clone();
                let subs = rng.below(3) as usize;
                substitute(rng, &mut w, subs);
                finish(rng, w)
            }
            16..=19 => {
                let len = rng.range(4, 30) as usize;
                let w = rng.bases(len);
                finish(rng, w)
            }
            _ => continue,
        };
        if seq.is_empty() {
            continue;
        }
        let qual = rng.qual(seq.len());
        reads.push(FqRead {
            name: format!("r{}", reads.len()),
            seq,
            qual,
        });
    }
    reads
}

/// Reads simulated as wgsim does (uniform position and strand, uniform
/// substitution errors, the odd N, occasionally a one-base indel), of
/// several lengths.
fn wgsim_reads(rng: &mut Rng, refs: &[RefSeq], count: usize, prefix: &str) -> Vec<FqRead> {
    let mut reads = Vec::with_capacity(count);
    for i in 0..count {
        let len = *rng.pick(&[36usize, 50, 70, 100]);
        let r = rng.pick(refs);
        let s = rng.below((r.seq.len() - len) as u64) as usize;
        let mut seq = r.seq[s..s + len + 1].to_vec();
        if rng.chance(1, 12) {
            let at = rng.range(1, len as u64 - 1) as usize;
            if rng.chance(1, 2) {
                seq.remove(at);
            } else {
                seq.insert(at, rng.base());
            }
        }
        seq.truncate(len);
        // 2% substitutions, 0.2% N.
        for b in seq.iter_mut() {
            let x = rng.below(1000);
            if x < 2 {
                *b = b'N';
            } else if x < 22 {
                let old = *b;
                *b = loop {
                    let n = rng.base();
                    if n != old {
                        break n;
                    }
                };
            }
        }
        if rng.chance(1, 2) {
            seq = revcomp(&seq);
        }
        let qual = rng.qual(seq.len());
        reads.push(FqRead {
            name: format!("{prefix}{i}"),
            seq,
            qual,
        });
    }
    reads
}

#[test]
fn random_references_all_modes() {
    let mut total = Seen::default();
    for seed in 0..6 {
        let mut rng = Rng::new(0x5eed_0000 + seed);
        let fasta = random_reference(&mut rng);
        let refs = parse_fasta(&fasta);
        let reads = random_reads(&mut rng, &refs, 220);
        let case = Case::new(&fasta, reads);
        total.add(&case.check(&ALL_REPS));
    }
    eprintln!("random references: {total:?}");
    assert!(total.unmapped > 0 && total.repeats > 0 && total.two_strata > 0);
    assert!(total.by_nm.iter().all(|&n| n > 0), "{total:?}");
    assert!(total.with_xa > 0 && total.mapped_with_n > 0 && total.reverse > 0);
    assert!(total.strata_gap > 0, "{total:?}");
    assert!(
        [0u8, 25, 37].iter().all(|q| total.mapqs.contains(q)),
        "{total:?}"
    );
    assert!(total.mapqs.iter().any(|&q| q > 0 && q < 25), "{total:?}");
}

/// Hand-made edge cases: N runs at contig starts and ends, a one-base
/// contig, a contig shorter than the reads, lower case, and reads of 1..=5
/// bases with K up to and beyond their length.
#[test]
fn edge_references() {
    let fasta = b">a first\nNNNNACGTTGCAacgtNNNNGGGATTTCCCAN\n>b\nT\n>c\nNNNNNNNN\n\
>d\nCCCATTTGGGnnnTTTTTTTTTTTTTT\n>e\nGATTACAGATTACAGATTACANNN\n"
        .to_vec();
    let mut seqs: Vec<Vec<u8>> = Vec::new();
    // Every read of 1..=3 bases over ACGT, plus some with N.
    let mut level: Vec<Vec<u8>> = vec![Vec::new()];
    for _ in 0..3 {
        level = level
            .iter()
            .flat_map(|p| {
                b"ACGT".iter().map(move |&b| {
                    let mut q = p.clone();
                    q.push(b);
                    q
                })
            })
            .collect();
        seqs.extend(level.iter().cloned());
    }
    for s in [
        &b"N"[..],
        b"NN",
        b"NNNN",
        b"ANNNA",
        b"GATTA",
        b"gatta",
        b"GATTACAGATTACAGATTACA",
        b"GATTACAGATTACAGATTACAN",
        b"TGTAATCTGTAATCTGTAATC",
        b"ACGTTGCAACGT",
        b"ACGTTGCAACGTG",
        b"ACGTTGCAACGTGGGA",
        b"CGTTGCAACGTGGGATTT",
        b"GGGATTTCCCA",
        b"GGGATTTCCCAT",
        b"CCCATTTGGGTTTT",
        b"TTTGGGTTTTTTTT",
        b"TTTTTTTTTTTTTT",
        b"TTTTTTTTTTTTTTG",
        b"TTTTTTTTTTTTTTT",
        b"ACGTTGCAACGTNNNNGGGATTTCCCA",
        b"ACGTTGCAACGTGGGATTTCCCATCCCATTTGGG",
    ] {
        seqs.push(s.to_vec());
    }
    let reads: Vec<FqRead> = seqs
        .into_iter()
        .enumerate()
        .map(|(i, seq)| FqRead {
            name: format!("e{i}"),
            qual: vec![b'I'; seq.len()],
            seq,
        })
        .collect();
    let case = Case::new(&fasta, reads);
    let seen = case.check(&ALL_REPS);
    assert!(seen.unmapped > 0 && seen.repeats > 0 && seen.two_strata > 0);
}

// ---------------------------------------------------------------------------
// Real references
// ---------------------------------------------------------------------------

/// A file of `../shared/data` (or `$FMALIGN_SHARED_DATA`): `None`, with a
/// notice, when it is missing, except under CI, where that fails.
fn shared(name: &str) -> Option<PathBuf> {
    common::shared_data(name, "-v")
}

fn check_real(name: &str, seed: u64) {
    let Some(path) = shared(name) else {
        return;
    };
    let fasta = common::read_maybe_gz(&path);
    let refs = parse_fasta(&fasta);
    let mut rng = Rng::new(seed);
    let mut reads = wgsim_reads(&mut rng, &refs, 350, "w");
    // Around ambiguous bases, with them and without (chrM has one N), and
    // across the ends of the (circular) contigs.
    for (i, r) in refs.iter().enumerate() {
        for p in (0..r.seq.len()).filter(|&p| !is_base(r.seq[p])) {
            for (a, b) in [(10, 30), (30, 10), (1, 50), (50, 1)] {
                let (s, e) = (p.saturating_sub(a), (p + 1 + b).min(r.seq.len()));
                let mut skip = r.seq[s..p].to_vec();
                skip.extend_from_slice(&r.seq[p + 1..e]);
                for seq in [r.seq[s..e].to_vec(), skip] {
                    reads.push(FqRead {
                        name: format!("n{i}_{p}_{a}_{}", reads.len()),
                        qual: vec![b'5'; seq.len()],
                        seq,
                    });
                }
            }
        }
        for (a, b) in [(20, 30), (49, 1), (1, 49)] {
            let mut seq = r.seq[r.seq.len() - a..].to_vec();
            seq.extend_from_slice(&r.seq[..b]);
            substitute(&mut rng, &mut seq, 1);
            reads.push(FqRead {
                name: format!("end{i}_{a}"),
                qual: vec![b'5'; seq.len()],
                seq,
            });
        }
    }
    // A few short reads (tens of thousands of hits with -v 2..3).
    for len in [4usize, 5, 8, 12] {
        let seq = contig_window(&mut rng, &refs, len);
        reads.push(FqRead {
            name: format!("short{len}"),
            qual: vec![b'#'; seq.len()],
            seq,
        });
    }
    let case = Case::new(&fasta, reads);
    let seen = case.check(&[Rep::All, Rep::Default, Rep::UpTo(2), Rep::StrataAll]);
    eprintln!("{name}: {seen:?}");
    assert!(seen.by_nm.iter().all(|&n| n > 0), "{seen:?}");
    assert!(seen.unmapped > 0 && seen.mapped_with_n > 0, "{seen:?}");
}

#[test]
fn lambda_wgsim_reads() {
    check_real("lambda_virus.fa", 7);
}

#[test]
fn chr_m_wgsim_reads() {
    check_real("human_chrM_NC_012920.fa", 8);
}

// ---------------------------------------------------------------------------
// Determinism
// ---------------------------------------------------------------------------

/// Byte-identical SAM for any thread count and batch size; `--best` changes
/// nothing but @PG; the hidden `--search` methods agree.
#[test]
fn output_is_deterministic() {
    let mut rng = Rng::new(0xdead);
    let mut fasta = Vec::new();
    for _ in 0..3 {
        fasta.extend(random_reference(&mut rng));
    }
    // Unique contig names for the three references together.
    let mut named = Vec::new();
    for (i, line) in fasta.split(|&b| b == b'\n').enumerate() {
        if line.starts_with(b">") {
            named.extend_from_slice(format!(">c{i}").as_bytes());
        } else {
            named.extend_from_slice(line);
        }
        named.push(b'\n');
    }
    let refs = parse_fasta(&named);
    let mut reads = random_reads(&mut rng, &refs, 1200);
    // Reads of 1..=5 bases have thousands of hits each, all located: a few
    // are enough here.
    common::limit_short(&mut reads, 6, 25);
    let case = Case::new(&named, reads);
    let s = |v: &[&str]| -> Vec<String> { v.iter().map(|x| x.to_string()).collect() };
    for (k, rep) in [
        (2u8, Rep::Default),
        (2, Rep::All),
        (3, Rep::UpTo(2)),
        (1, Rep::StrataAll),
    ] {
        let base = case.map(k, &[s(&["-t", "1"]), rep.args()].concat());
        check_map(&case.refs, &case.reads, &case.expect, k, rep, &base);
        for extra in [
            s(&["-t", "3"]),
            s(&["-t", "3", "-K", "200"]),
            s(&["-t", "1", "-K", "37"]),
            s(&["-t", "2", "-K", "1"]),
        ] {
            let out = case.map(k, &[extra.clone(), rep.args()].concat());
            assert!(
                out == base,
                "-v {k} {rep:?}: output differs with {extra:?} from -t 1"
            );
        }
        let best = case.map(k, &[s(&["--best"]), rep.args()].concat());
        assert_eq!(
            common::without_pg(&best),
            common::without_pg(&base),
            "--best changes the output"
        );
        for search in ["schemes", "backtrack"] {
            let out = case.map(k, &[s(&["--search", search]), rep.args()].concat());
            assert_eq!(
                common::without_pg(&out),
                common::without_pg(&base),
                "--search {search} -v {k} {rep:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------

/// A stretch of a small reference: bases, lower case, a two-letter repeat,
/// an N run.
fn chunk() -> impl Strategy<Value = Vec<u8>> {
    let bases = |alphabet: &'static [u8], max: usize| {
        prop::collection::vec(prop::sample::select(alphabet), 1..max)
    };
    prop_oneof![
        6 => bases(b"ACGT", 60),
        2 => bases(b"acgt", 15),
        2 => bases(b"AC", 20),
        2 => (1..8usize, prop::sample::select(&b"NnR"[..])).prop_map(|(n, b)| vec![b; n]),
    ]
}

/// 1..=3 contigs of chunks; at least one unambiguous base in all.
fn small_reference() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop::collection::vec(chunk(), 1..5).prop_map(|v| v.concat()),
        1..4,
    )
    .prop_filter("some unambiguous base", |cs| {
        cs.iter().flatten().any(|b| is_base(b.to_ascii_uppercase()))
    })
    .prop_map(|cs| {
        let mut fasta = Vec::new();
        for (i, c) in cs.iter().enumerate() {
            fasta.extend_from_slice(format!(">p{i}\n").as_bytes());
            fasta.extend_from_slice(c);
            fasta.push(b'\n');
        }
        fasta
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 150,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The library's `hits_many` (seed and verify, the default search)
    /// against the oracle.
    #[test]
    fn library_hits_match_oracle(fasta in small_reference(), seed in any::<u64>(), k in 0u8..=3) {
        let refs = parse_fasta(&fasta);
        let reference = fmalign::scan::read_fasta_from(&fasta[..], Path::new("p.fa")).unwrap();
        let cfg = fmalign::index::IndexConfig { threads: 1, ..Default::default() };
        let index = fmalign::index::build_in_memory(reference, &cfg).unwrap();
        let mut rng = Rng::new(seed);
        let reads = random_reads(&mut rng, &refs, 25);
        let seqs: Vec<&[u8]> = reads.iter().map(|r| r.seq.as_slice()).collect();
        let oracle = Oracle::new(&refs);
        for (read, hits) in reads.iter().zip(fmalign::map::hits_many(&index, &seqs, k)) {
            let mut got: Vec<MHit> = hits.iter().map(|h| (h.contig, h.pos, h.rev, h.nm)).collect();
            got.sort_unstable_by_key(|&(c, p, r, nm)| (nm, c, p, r));
            let want = oracle.hits(&read.seq, k);
            prop_assert_eq!(got, want, "read {} -v {}", read.seq_str(), k);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 12,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The same through the binary, `-a`, every K, full record checks.
    #[test]
    fn binary_hits_match_oracle(fasta in small_reference(), seed in any::<u64>()) {
        let refs = parse_fasta(&fasta);
        let mut rng = Rng::new(seed);
        let reads = random_reads(&mut rng, &refs, 40);
        let case = Case::new(&fasta, reads);
        case.check(&[Rep::All]);
    }
}
