//! Gapped alignment (`fmalign map --end-to-end` / `--local`): reads with
//! substitutions and indels whose truth is in their names, placed where they
//! came from or reported unmapped or at low MAPQ; every record's CIGAR, SEQ,
//! MD, NM and AS checked against the reference (an independent walk, with
//! the scores written out here); pairs with mate rescue; chimeric reads as
//! supplementary records; samtools; the real chrM pairs; bad option mixes.

mod common;

use std::path::Path;

use common::*;

/// `n` random contigs `chr0`, `chr1`, ... of `len` bases each.
fn random_contigs(rng: &mut Rng, n: usize, len: usize) -> Vec<RefSeq> {
    (0..n)
        .map(|c| RefSeq {
            name: format!("chr{c}"),
            seq: rng.bases(len),
        })
        .collect()
}

/// `seq` with the bases at `at` substituted (A to C, any other to A).
fn substituted(seq: &[u8], at: &[usize]) -> Vec<u8> {
    let mut c = seq.to_vec();
    for &i in at {
        c[i] = if c[i] == b'A' { b'C' } else { b'A' };
    }
    c
}

/// A reference of random contigs with a few diverged copies of one segment
/// (so some reads have a second-best placement).
fn reference(rng: &mut Rng) -> Vec<RefSeq> {
    let unit = rng.bases(1500);
    let mut refs = Vec::new();
    for c in 0..3 {
        let mut seq = rng.bases(60_000);
        if c < 2 {
            // A copy of `unit` with 1% substitutions.
            let at = 20_000 + 10_000 * c;
            for (k, &b) in unit.iter().enumerate() {
                seq[at + k] = if rng.chance(1, 100) { rng.base() } else { b };
            }
        }
        // An N run.
        for b in &mut seq[45_000..45_020] {
            *b = b'N';
        }
        refs.push(RefSeq {
            name: format!("chr{c}"),
            seq,
        });
    }
    refs
}

fn fasta(refs: &[RefSeq]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in refs {
        out.extend(format!(">{}\n", r.name).bytes());
        for line in r.seq.chunks(70) {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
    out
}

/// A fragment of `len` bases at `pos` of `seq` with substitutions (1 in
/// `sub`) and, with probability 1/2, one indel of 1..=4 bases (insertion or
/// deletion) somewhere in the middle.
fn mutate(rng: &mut Rng, seq: &[u8], pos: usize, len: usize, sub: u64) -> Vec<u8> {
    let mut out: Vec<u8> = seq[pos..pos + len + 8].to_vec();
    if rng.chance(1, 2) {
        let at = rng.range(20, len as u64 - 20) as usize;
        let n = rng.range(1, 5) as usize;
        if rng.chance(1, 2) {
            out.drain(at..at + n);
        } else {
            let ins = rng.bases(n);
            out.splice(at..at, ins);
        }
    }
    out.truncate(len);
    for b in &mut out {
        if rng.chance(1, sub) {
            *b = common::complement(*b); // always a different base
        }
    }
    out
}

/// Reads `r{i}_{contig}_{pos}_{strand}` (pos 1-based, of the read's
/// leftmost reference base) avoiding N runs.
fn simulate(rng: &mut Rng, refs: &[RefSeq], n: usize, len: usize, sub: u64) -> Vec<FqRead> {
    let mut out = Vec::new();
    while out.len() < n {
        let c = rng.below(refs.len() as u64) as usize;
        let seq = &refs[c].seq;
        let pos = rng.below((seq.len() - len - 10) as u64) as usize;
        if seq[pos..pos + len + 8].contains(&b'N') {
            continue;
        }
        let frag = mutate(rng, seq, pos, len, sub);
        let rev = rng.chance(1, 2);
        let s = if rev { revcomp(&frag) } else { frag };
        out.push(FqRead {
            name: format!(
                "r{}_{}_{}_{}",
                out.len(),
                refs[c].name,
                pos + 1,
                u8::from(rev)
            ),
            qual: vec![b'I'; s.len()],
            seq: s,
        });
    }
    out
}

/// CIGAR text → (op, len).
fn cigar(text: &str) -> Vec<(u8, usize)> {
    let mut out = Vec::new();
    let mut n = 0usize;
    for b in text.bytes() {
        if b.is_ascii_digit() {
            n = n * 10 + usize::from(b - b'0');
        } else {
            out.push((b, n));
            n = 0;
        }
    }
    out
}

/// Scores of a mode, as documented (match, mismatch, gap open, gap extend,
/// N): bowtie2's end-to-end (its mismatch penalty at quality 40 or more;
/// lower qualities cost less, see [`mismatch`]) and bwa mem's.
fn scores(local: bool) -> (i64, i64, i64, i64, i64) {
    if local {
        (1, 4, 6, 1, 1)
    } else {
        (0, 6, 5, 3, 1)
    }
}

/// The mismatch penalty at a QUAL character: bowtie2's 2 + ⌊4 · min(Q, 40)
/// / 40⌋ end-to-end, bwa mem's 4 local.
fn mismatch(local: bool, qual: u8) -> i64 {
    if local {
        4
    } else {
        2 + 4 * i64::from(qual.saturating_sub(33).min(40)) / 40
    }
}

/// Checks one mapped record against the reference: CIGAR spans SEQ; the
/// bases the CIGAR aligns, the MD string and NM agree with the reference at
/// POS; AS is the score of the CIGAR; only soft clips at the ends, and none
/// end-to-end. Returns the leftmost reference base (1-based) the read would
/// have without its leading clip.
fn check_record(refs: &[RefSeq], r: &SamRec, local: bool) -> u64 {
    let reference = &refs
        .iter()
        .find(|x| x.name == r.rname)
        .expect("known contig")
        .seq;
    let ops = cigar(&r.cigar);
    let qlen: usize = ops
        .iter()
        .filter(|o| b"MIS".contains(&o.0))
        .map(|o| o.1)
        .sum();
    assert_eq!(qlen, r.seq.len(), "CIGAR spans SEQ: {r:?}");
    for (k, o) in ops.iter().enumerate() {
        assert!(b"MIDS".contains(&o.0), "{r:?}");
        if o.0 == b'S' {
            assert!(local, "no clipping end-to-end: {r:?}");
            assert!(k == 0 || k == ops.len() - 1, "S only at the ends: {r:?}");
        }
    }
    let (ma, _, go, ge, np) = scores(local);
    let (mut qi, mut ri) = (0usize, r.pos as usize - 1);
    let (mut score, mut nm, mut run) = (0i64, 0u64, 0u64);
    let mut md = String::new();
    for &(op, n) in &ops {
        match op {
            b'S' => qi += n,
            b'M' => {
                for _ in 0..n {
                    let (a, b) = (r.seq[qi].to_ascii_uppercase(), reference[ri]);
                    if a == b'N' || b == b'N' {
                        score -= np;
                    } else if a == b {
                        score += ma;
                    } else {
                        score -= mismatch(local, r.qual.get(qi).copied().unwrap_or(b'I'));
                    }
                    if a == b && a != b'N' {
                        run += 1;
                    } else {
                        nm += 1;
                        md += &format!("{run}{}", b as char);
                        run = 0;
                    }
                    qi += 1;
                    ri += 1;
                }
            }
            b'I' => {
                score -= go + ge * n as i64;
                nm += n as u64;
                qi += n;
            }
            b'D' => {
                score -= go + ge * n as i64;
                nm += n as u64;
                md += &format!("{run}^{}", String::from_utf8_lossy(&reference[ri..ri + n]));
                run = 0;
                ri += n;
            }
            _ => unreachable!(),
        }
    }
    md += &run.to_string();
    assert_eq!(r.tag("MD"), Some(md.as_str()), "MD: {r:?}");
    assert_eq!(r.tag("NM"), Some(nm.to_string().as_str()), "NM: {r:?}");
    assert_eq!(r.tag("AS"), Some(score.to_string().as_str()), "AS: {r:?}");
    // XA: each alternative's NM is its edit distance at its place, on its
    // strand; none repeats the record's own place.
    if let Some(xa) = r.tag("XA") {
        for entry in xa.split_terminator(';') {
            let f: Vec<&str> = entry.split(',').collect();
            assert_eq!(f.len(), 4, "XA entry {entry}: {r:?}");
            let alt = refs.iter().find(|x| x.name == f[0]).expect("XA contig");
            let rev = f[1].starts_with('-');
            let pos: usize = f[1][1..].parse().unwrap();
            assert!(
                !(f[0] == r.rname && pos as u64 == r.pos && rev == r.reverse()),
                "{r:?}"
            );
            let seq = if rev == r.reverse() {
                r.seq.clone()
            } else {
                revcomp(&r.seq)
            };
            let (mut qi, mut ri, mut nm) = (0usize, pos - 1, 0u64);
            for (op, n) in cigar(f[2]) {
                match op {
                    b'S' => qi += n,
                    b'M' => {
                        for _ in 0..n {
                            let (a, b) = (seq[qi].to_ascii_uppercase(), alt.seq[ri]);
                            nm += u64::from(a != b || a == b'N');
                            qi += 1;
                            ri += 1;
                        }
                    }
                    b'I' => {
                        nm += n as u64;
                        qi += n;
                    }
                    b'D' => {
                        nm += n as u64;
                        ri += n;
                    }
                    _ => panic!("XA CIGAR {}", f[2]),
                }
            }
            assert_eq!(qi, seq.len(), "XA CIGAR spans SEQ: {entry}");
            assert_eq!(f[3], nm.to_string(), "XA NM: {entry} in {r:?}");
        }
    }
    let lead = match ops.first() {
        Some(&(b'S', n)) => n as u64,
        _ => 0,
    };
    r.pos.saturating_sub(lead)
}

/// The truth of a simulated read: contig and 1-based position.
fn truth(name: &str) -> (String, u64) {
    let f: Vec<&str> = name.split('_').collect();
    (f[1].to_string(), f[2].parse().unwrap())
}

/// Index `refs` in a temporary directory.
fn indexed(refs: &[RefSeq]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ref.fa"), fasta(refs)).unwrap();
    run_ok(dir.path(), &["index", "-q", "ref.fa"], None);
    dir
}

/// Maps `reads` (single) with `args`; the SAM text.
fn map(dir: &Path, reads: &[FqRead], args: &[&str]) -> Vec<u8> {
    std::fs::write(dir.join("r.fq"), fastq_text(reads)).unwrap();
    let mut all = vec!["map", "-q"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["ref.fa", "r.fq"]);
    run_ok(dir, &all, None).stdout
}

/// Read pairs at Q40, named `{name}/1` and `{name}/2`.
#[derive(Default)]
struct Pairs {
    one: Vec<FqRead>,
    two: Vec<FqRead>,
}

impl Pairs {
    fn push(&mut self, name: &str, a: Vec<u8>, b: Vec<u8>) {
        for (mates, m, seq) in [(&mut self.one, 1, a), (&mut self.two, 2, b)] {
            mates.push(FqRead {
                name: format!("{name}/{m}"),
                qual: vec![b'I'; seq.len()],
                seq,
            });
        }
    }
}

/// Maps `pairs` (written to r1.fq and r2.fq in `dir`) with `args`; the SAM
/// text.
fn map_pairs(dir: &Path, pairs: &Pairs, args: &[&str]) -> Vec<u8> {
    std::fs::write(dir.join("r1.fq"), fastq_text(&pairs.one)).unwrap();
    std::fs::write(dir.join("r2.fq"), fastq_text(&pairs.two)).unwrap();
    let mut all = vec!["map", "-q"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["ref.fa", "r1.fq", "r2.fq"]);
    run_ok(dir, &all, None).stdout
}

/// Single reads with indels: every primary at MAPQ >= 20 where it came
/// from (within the indel's shift), nearly all mapped, every record
/// consistent with the reference; the same output for any -t and -K.
#[test]
fn single_reads_with_indels_place_correctly() {
    let mut rng = Rng::new(22);
    let refs = reference(&mut rng);
    let dir = indexed(&refs);
    let reads = simulate(&mut rng, &refs, 600, 150, 100);
    for (flag, local) in [("--local", true), ("--end-to-end", false)] {
        let sam = map(dir.path(), &reads, &[flag, "-t", "2"]);
        let (_, recs) = parse_sam(&sam);
        assert_eq!(recs.len(), reads.len(), "{flag}: one record per read");
        let (mut mapped, mut confident, mut wrong) = (0, 0, 0);
        for (r, read) in recs.iter().zip(&reads) {
            assert_eq!(r.qname, read.qname());
            if r.unmapped() {
                continue;
            }
            mapped += 1;
            let start = check_record(&refs, r, local);
            let (contig, pos) = truth(&r.qname);
            let ok = r.rname == contig && start.abs_diff(pos) <= 8;
            if r.mapq >= 20 {
                confident += 1;
                wrong += usize::from(!ok);
                assert!(ok, "{flag}: wrong at MAPQ {}: {r:?}", r.mapq);
            }
        }
        assert!(mapped >= reads.len() * 99 / 100, "{flag}: {mapped} mapped");
        // Reads from the diverged copies list the other copy in XA.
        let with_xa = recs.iter().filter(|r| r.tag("XA").is_some()).count();
        assert!(with_xa > 0, "{flag}: no XA at all");
        assert!(
            confident >= reads.len() * 95 / 100,
            "{flag}: {confident} at MAPQ >= 20"
        );
        assert_eq!(wrong, 0);
        // Output independent of threads and batch size.
        let other = map(dir.path(), &reads, &[flag, "-t", "1", "-K", "3000"]);
        assert_eq!(
            without_pg(&other),
            without_pg(&sam),
            "{flag}: -t/-K change the output"
        );
    }
}

/// wgsim reads (its default errors, mutations and indels) when wgsim is
/// installed: correct at MAPQ >= 20 by the names' truth, records
/// consistent.
#[test]
fn wgsim_reads_place_correctly() {
    let mut rng = Rng::new(7);
    let refs = reference(&mut rng);
    let dir = indexed(&refs);
    let ok = std::process::Command::new("wgsim")
        .args([
            "-S", "5", "-N", "400", "-1", "150", "-2", "150", "ref.fa", "w1.fq", "w2.fq",
        ])
        .current_dir(dir.path())
        .output();
    if !ok.is_ok_and(|o| o.status.success()) {
        eprintln!("NOTICE: wgsim is not installed; skipping");
        return;
    }
    for (flag, local) in [("--local", true), ("--end-to-end", false)] {
        let out = run_ok(
            dir.path(),
            &["map", "-q", flag, "ref.fa", "w1.fq", "w2.fq"],
            None,
        )
        .stdout;
        let (_, recs) = parse_sam(&out);
        let mut confident = 0;
        for r in recs.iter().filter(|r| !r.unmapped()) {
            check_record(&refs, r, local);
            if r.flag & 0x900 != 0 || r.mapq < 20 {
                continue;
            }
            confident += 1;
            // wgsim: CONTIG_START_END_..., the fragment's outer ends.
            let f: Vec<&str> = r.qname.rsplitn(6, '_').collect();
            let (end, start, contig) = (
                f[3].parse::<u64>().unwrap(),
                f[4].parse::<u64>().unwrap(),
                f[5],
            );
            let left = r.pos;
            let right = r.pos
                + cigar(&r.cigar)
                    .iter()
                    .filter(|o| b"MD".contains(&o.0))
                    .map(|o| o.1 as u64)
                    .sum::<u64>()
                - 1;
            assert!(
                r.rname == contig && (left.abs_diff(start) <= 20 || right.abs_diff(end) <= 20),
                "{flag}: wrong at MAPQ {}: {r:?}",
                r.mapq
            );
        }
        assert!(confident >= 700, "{flag}: {confident} of 800 at MAPQ >= 20");
    }
}

/// Pairs: fragments of 300 ± 30, mate 2 of every tenth pair mutated at 1
/// base in 12 (few or no seeds of 19 bases; mate rescue aligns it in its
/// mate's insert window). Proper pairs, TLEN, mate fields;
/// samtools reads the output (SAM and BAM) and counts as we do.
#[test]
fn pairs_with_mate_rescue() {
    let mut rng = Rng::new(99);
    let refs = reference(&mut rng);
    let dir = indexed(&refs);
    let mut pairs = Pairs::default();
    let mut hard = Vec::new();
    while pairs.one.len() < 300 {
        let c = rng.below(refs.len() as u64) as usize;
        let seq = &refs[c].seq;
        let frag = rng.range(270, 331) as usize;
        let pos = rng.below((seq.len() - frag - 10) as u64) as usize;
        if seq[pos..pos + frag + 8].contains(&b'N') {
            continue;
        }
        let i = pairs.one.len();
        let a = mutate(&mut rng, seq, pos, 150, 100);
        let sub = if i % 10 == 0 { 12 } else { 100 };
        let b = revcomp(&mutate(&mut rng, seq, pos + frag - 150, 150, sub));
        let name = format!("p{i}_{}_{}", refs[c].name, pos + 1);
        if i % 10 == 0 {
            hard.push(name.clone());
        }
        pairs.push(&name, a, b);
    }
    for (flag, local) in [("--local", true), ("--end-to-end", false)] {
        let out = map_pairs(dir.path(), &pairs, &[flag, "-I", "200", "-X", "400"]);
        let (_, recs) = parse_sam(&out);
        check_mate_cigars(&recs);
        let prim: Vec<&SamRec> = recs.iter().filter(|r| r.flag & 0x900 == 0).collect();
        assert_eq!(prim.len(), 600);
        let mut proper = 0;
        let mut rescued = 0;
        for p in prim.chunks(2) {
            let (a, b) = (p[0], p[1]);
            assert_eq!(a.qname, b.qname);
            assert_eq!((a.flag & 0xC1, b.flag & 0xC1), (0x41, 0x81));
            if a.flag & 2 != 0 {
                proper += 1;
                assert!(!a.reverse() && b.reverse(), "FR: {a:?} {b:?}");
                assert_eq!(a.rnext, "=");
                assert_eq!(a.pnext, b.pos);
                assert_eq!(b.pnext, a.pos);
                assert_eq!(a.tlen, -b.tlen);
                assert!((200..=400).contains(&a.tlen.abs()), "{a:?}");
            }
            for r in [a, b] {
                if !r.unmapped() {
                    check_record(&refs, r, local);
                }
            }
            if hard.contains(&a.qname) && !b.unmapped() && a.flag & 2 != 0 {
                rescued += 1;
            }
        }
        assert!(proper >= 285, "{flag}: {proper} of 300 proper");
        // The same pairs for any -t and -K (the window comes from the given
        // -I/-X here; estimated windows are tested in tests/paired.rs).
        let small = [
            "map", "-q", flag, "-I", "200", "-X", "400", "-t", "1", "-K", "4000", "ref.fa",
            "r1.fq", "r2.fq",
        ];
        let again = run_ok(dir.path(), &small, None).stdout;
        assert_eq!(
            without_pg(&again),
            without_pg(&out),
            "{flag}: -t/-K change pairs"
        );
        assert!(
            rescued >= 25,
            "{flag}: {rescued} of 30 hard mates rescued into proper pairs"
        );
        if have_samtools() {
            std::fs::write(dir.path().join("o.sam"), &out).unwrap();
            samtools(dir.path(), &["quickcheck", "o.sam"]);
            let fs = String::from_utf8(samtools(dir.path(), &["flagstat", "o.sam"])).unwrap();
            assert!(
                fs.contains(&format!("{} + 0 properly paired", 2 * proper)),
                "{fs}"
            );
            let bam = [
                "map", "-q", flag, "-I", "200", "-X", "400", "-o", "o.bam", "ref.fa", "r1.fq",
                "r2.fq",
            ];
            run_ok(dir.path(), &bam, None);
            samtools(dir.path(), &["quickcheck", "o.bam"]);
            let sam_again = samtools(dir.path(), &["view", "o.bam"]);
            let (_, again) = parse_sam(&sam_again);
            assert_eq!(again, recs, "{flag}: BAM holds the SAM's records");
        }
    }
}

/// A chimeric read (90 bases of one contig, 60 of another) with --local:
/// a primary and a supplementary record (0x800), each with SA:Z naming the
/// other; end-to-end aligns it whole or not at all.
#[test]
fn chimeric_read_gets_a_supplementary_record() {
    let mut rng = Rng::new(5);
    let refs = reference(&mut rng);
    let dir = indexed(&refs);
    let mut seq = refs[0].seq[5000..5090].to_vec();
    seq.extend_from_slice(&refs[2].seq[30_000..30_060]);
    let reads = vec![FqRead {
        name: "chim".into(),
        qual: vec![b'I'; 150],
        seq,
    }];
    let sam = map(dir.path(), &reads, &["--local"]);
    let (_, recs) = parse_sam(&sam);
    assert_eq!(recs.len(), 2, "{}", String::from_utf8_lossy(&sam));
    let (p, s) = (&recs[0], &recs[1]);
    assert_eq!(p.flag & 0x800, 0);
    assert_eq!(s.flag & 0x800, 0x800);
    // The parts meet near read base 90 (a base either side may match both).
    let clip = |c: &str, at_end: bool| -> usize {
        let ops = cigar(c);
        assert_eq!(ops.len(), 2, "{c}");
        let o = if at_end { ops[1] } else { ops[0] };
        assert_eq!(o.0, b'S', "{c}");
        o.1
    };
    assert_eq!((p.rname.as_str(), p.pos), ("chr0", 5001));
    assert!(clip(&p.cigar, true).abs_diff(60) <= 3, "{p:?}");
    assert_eq!(s.rname, "chr2");
    assert!(clip(&s.cigar, false).abs_diff(90) <= 3, "{s:?}");
    assert_eq!(s.pos + clip(&s.cigar, false) as u64, 30_001 + 90, "{s:?}");
    let sa = |r: &SamRec| format!("{},{},+,{},", r.rname, r.pos, r.cigar);
    assert!(p.tag("SA").unwrap().starts_with(&sa(s)), "{p:?}");
    assert!(s.tag("SA").unwrap().starts_with(&sa(p)), "{s:?}");
    for r in &recs {
        check_record(&refs, r, true);
    }
    // Each part is unique in the reference: the other part is no
    // alternative to it (no XS from it, as bwa mem), and neither gets MAPQ 0.
    for r in &recs {
        assert_eq!(r.tag("XS"), None, "{r:?}");
        assert!(r.mapq > 0, "{r:?}");
    }
    // -M: the same records, the other part flagged secondary.
    let sam = map(dir.path(), &reads, &["--local", "-M"]);
    let (_, m) = parse_sam(&sam);
    assert_eq!(m.len(), 2);
    assert_eq!(m[1].flag & 0x900, 0x100);
    assert_eq!(
        (m[1].flag & !0x900, &m[1].cigar),
        (s.flag & !0x900, &s.cigar)
    );
    let sam = map(dir.path(), &reads, &["--end-to-end"]);
    let (_, recs) = parse_sam(&sam);
    assert_eq!(recs.len(), 1);
    assert!(!recs[0].cigar.contains('S'));
}

/// Short reads (36 and 50 bases, as in ChIP-seq and old RNA-seq runs)
/// from unique places of the reference, without errors: both modes place
/// each where it came from with a MAPQ a Q20 (`--local`, 36 bases) or Q30
/// filter keeps. With the mode's minimum score standing in for the
/// second-best, a 36-base read scored 7 (`--local`) and 22
/// (`--end-to-end`), a 50-base read 24 and 30, though on chr20 such reads
/// are placed wrongly about 3 times in 10,000 (docs/BENCHMARKS.md,
/// 2026-11-24 (sixth) and (seventh)). End to end, a 36-base read two
/// mismatches (at Q40) from its only place gets a middle MAPQ, 20 to 39:
/// it stayed under 5 while fmalign's seeds were all that looked for other
/// places (42% of such reads simulated from chr20 were placed wrongly);
/// the exhaustive search of short reads now proves no other place within
/// two mismatches, and of 78 such reads of chr20 (wgsim, 0.5–2% errors)
/// none was placed wrongly (docs/BENCHMARKS.md, 2026-11-28 (tenth)).
#[test]
fn short_unique_reads_are_confident() {
    let mut rng = Rng::new(41);
    let refs = reference(&mut rng);
    let dir = indexed(&refs);
    let mut reads = Vec::new();
    for len in [36usize, 50] {
        for k in 0..40 {
            // chr2 has no copy of the shared unit; stay clear of its Ns.
            let pos = 1000 + k * 1000;
            reads.push(FqRead {
                name: format!("s_chr2_{}_{len}", pos + 1),
                qual: vec![b'I'; len],
                seq: refs[2].seq[pos..pos + len].to_vec(),
            });
        }
    }
    let mut two_off = Vec::new();
    for k in 0..20 {
        let pos = 1500 + k * 1000;
        let mut seq = refs[2].seq[pos..pos + 36].to_vec();
        for i in [2, 5] {
            seq[i] = if seq[i] == b'A' { b'C' } else { b'A' };
        }
        two_off.push(FqRead {
            name: format!("m_chr2_{}_36", pos + 1),
            qual: vec![b'I'; 36],
            seq,
        });
    }
    for mode in ["--local", "--end-to-end"] {
        let sam = map(dir.path(), &reads, &[mode]);
        let (_, recs) = parse_sam(&sam);
        assert_eq!(recs.len(), reads.len());
        for r in &recs {
            let (contig, pos) = truth(&r.qname);
            assert_eq!(
                (r.rname.as_str(), r.pos),
                (contig.as_str(), pos),
                "{mode}: {r:?}"
            );
            let want = if r.seq.len() == 36 && mode == "--local" {
                20
            } else {
                30
            };
            assert!(r.mapq >= want, "{mode}: {r:?}");
        }
    }
    let sam = map(dir.path(), &two_off, &["--end-to-end"]);
    let (_, recs) = parse_sam(&sam);
    assert_eq!(recs.len(), two_off.len());
    for r in &recs {
        let (contig, pos) = truth(&r.qname);
        assert_eq!((r.rname.as_str(), r.pos), (contig.as_str(), pos), "{r:?}");
        assert!((20..40).contains(&r.mapq), "{r:?}");
    }
}

/// Reads of 30 to 36 bases and the exhaustive search of short reads
/// (`gapped::exhaustive_k`): a unique exact read of 30 bases is placed
/// confidently in both modes (`--local` gave it MAPQ 0: its score is the
/// mode's minimum, 30, and its seeds were all that looked for a second
/// place), a 36-base read with one mismatch in its middle (no 19-base
/// exact match on either side of it, so no seed) is found and placed
/// confidently (it was unmapped), and a read of a segment present twice,
/// exactly, gets MAPQ 0 at one of its two places.
#[test]
fn short_reads_found_and_placed_by_the_exhaustive_search() {
    let mut rng = Rng::new(77);
    let mut refs = random_contigs(&mut rng, 2, 50_000);
    let copy = refs[0].seq[10_000..10_300].to_vec();
    refs[1].seq[30_000..30_300].copy_from_slice(&copy);
    let dir = indexed(&refs);
    let mut unique = Vec::new();
    for k in 0..10 {
        for len in [30usize, 36] {
            let pos = 2_000 + k * 2_000 + len;
            unique.push(FqRead {
                name: format!("u_chr1_{}_{len}", pos + 1),
                qual: vec![b'I'; len],
                seq: refs[1].seq[pos..pos + len].to_vec(),
            });
        }
        let pos = 3_000 + k * 2_000;
        let seq = substituted(&refs[1].seq[pos..pos + 36], &[17]);
        unique.push(FqRead {
            name: format!("m_chr1_{}_36", pos + 1),
            qual: vec![b'I'; 36],
            seq,
        });
    }
    let tied: Vec<FqRead> = (0..5)
        .map(|k| FqRead {
            name: format!("t{k}"),
            qual: vec![b'I'; 36],
            seq: copy[40 * k..40 * k + 36].to_vec(),
        })
        .collect();
    for mode in ["--local", "--end-to-end"] {
        let (_, recs) = parse_sam(&map(dir.path(), &unique, &[mode]));
        assert_eq!(recs.len(), unique.len());
        for r in &recs {
            let (contig, pos) = truth(&r.qname);
            assert_eq!(
                (r.rname.as_str(), r.pos),
                (contig.as_str(), pos),
                "{mode}: {r:?}"
            );
            assert!(r.mapq >= 20, "{mode}: {r:?}");
        }
        let (_, recs) = parse_sam(&map(dir.path(), &tied, &[mode]));
        assert_eq!(recs.len(), tied.len());
        for (k, r) in recs.iter().enumerate() {
            let off = 40 * k as u64;
            let got = (r.rname.as_str(), r.pos);
            assert!(
                got == ("chr0", 10_001 + off) || got == ("chr1", 30_001 + off),
                "{mode}: {r:?}"
            );
            assert_eq!(r.mapq, 0, "{mode}: {r:?}");
        }
    }
}

/// Short reads whose best alignment has more errors than the exhaustive
/// search covers (`K` = 2) are seeded with every maximal exact match too
/// (`extend::wide_anchors`): a 60-base read with two copies in the
/// reference, each 4 mismatches from it, where the greedy cover's seed of
/// 27 bases ends at the read's end in copy A and so steps over copy B's
/// longest exact match (25 bases, 30..55), which starts left of it and
/// ends right of it: both copies are found, with the same score, so the
/// read gets MAPQ 0 in both modes (before, copy A alone at MAPQ 20).
/// Copy B is on either strand.
#[test]
fn short_reads_beyond_the_search_find_a_shadowed_copy() {
    let mut rng = Rng::new(4040);
    let mut refs = random_contigs(&mut rng, 2, 50_000);
    let mut reads = Vec::new();
    for k in 0..10 {
        let r = rng.bases(60);
        let a = substituted(&r, &[5, 10, 20, 32]);
        let b = substituted(&r, &[8, 15, 29, 55]);
        let b = if k % 2 == 1 { revcomp(&b) } else { b };
        let at = 5_000 + 4_000 * k;
        refs[0].seq[at..at + 60].copy_from_slice(&a);
        refs[1].seq[at..at + 60].copy_from_slice(&b);
        reads.push(FqRead {
            name: format!("r{k}_{}", at + 1),
            qual: vec![b'I'; 60],
            seq: r,
        });
    }
    let dir = indexed(&refs);
    for mode in ["--local", "--end-to-end"] {
        let (_, recs) = parse_sam(&map(dir.path(), &reads, &[mode]));
        assert_eq!(recs.len(), reads.len());
        for r in &recs {
            let at: u64 = r.qname.split('_').nth(1).unwrap().parse().unwrap();
            assert_eq!(r.pos, at, "{mode}: {r:?}");
            assert_eq!(r.tag("XS"), r.tag("AS"), "{mode}: {r:?}");
            assert_eq!(r.mapq, 0, "{mode}: {r:?}");
        }
    }
}

/// A 36-base read whose seeds find only two copies that tie, with more
/// errors than the search's K (2), is still searched exhaustively. Its own place (copy T)
/// differs from it at base 17, so holds no exact match of 19 bases; two
/// identical copies D share bases 0..26 with it and differ at 26, 30 and
/// 34. The seeds reach D alone, twice, with the same score; the tie used to
/// skip the exhaustive search, and in `--end-to-end` the read went to a D
/// at MAPQ 0 (so did 6 reads of each 36-base ART set from chr20 that
/// bowtie2 placed at 1 mismatch, docs/BENCHMARKS.md, 2026-11-28
/// (fourteenth)). Now T is found in both modes, with a MAPQ of 20 or more.
/// T is on either strand.
#[test]
fn short_reads_tied_at_an_imperfect_score_are_searched() {
    let mut rng = Rng::new(4141);
    let mut refs = random_contigs(&mut rng, 2, 50_000);
    let mut reads = Vec::new();
    for k in 0..10 {
        let r = rng.bases(36);
        let t = substituted(&r, &[17]);
        let t = if k % 2 == 1 { revcomp(&t) } else { t };
        let d = substituted(&r, &[26, 30, 34]);
        let at = 5_000 + 4_000 * k;
        refs[0].seq[at..at + 36].copy_from_slice(&t);
        refs[1].seq[at..at + 36].copy_from_slice(&d);
        refs[1].seq[at + 2_000..at + 2_036].copy_from_slice(&d);
        reads.push(FqRead {
            name: format!("r{k}_{}", at + 1),
            qual: vec![b'I'; 36],
            seq: r,
        });
    }
    let dir = indexed(&refs);
    for mode in ["--local", "--end-to-end"] {
        let (_, recs) = parse_sam(&map(dir.path(), &reads, &[mode]));
        assert_eq!(recs.len(), reads.len());
        for r in &recs {
            let at: u64 = r.qname.split('_').nth(1).unwrap().parse().unwrap();
            assert_eq!((r.rname.as_str(), r.pos), ("chr0", at), "{mode}: {r:?}");
            assert!(r.mapq >= 20, "{mode}: {r:?}");
        }
    }
}

/// `--end-to-end` MAPQ of a short read by the quality of the base where
/// its only other placement differs: an exact 36-base read whose segment
/// is present once more with one base changed is placed at its own copy
/// with MAPQ about that base's quality and 4.8 (the chance that the base
/// was misread as this one): 15, 25 and 34 at Q10, Q20 and Q30. bowtie2's
/// scores charge 3, 4 and 5 for such a mismatch, and 37 per 6 of them gave
/// 19, 25 and 31 (docs/BENCHMARKS.md, 2026-11-28 (eleventh)).
#[test]
fn e2e_short_mapq_follows_the_differing_base_quality() {
    let mut rng = Rng::new(5);
    let mut refs = random_contigs(&mut rng, 2, 30_000);
    let seg = refs[0].seq[10_000..10_036].to_vec();
    let copy = substituted(&seg, &[18]);
    refs[1].seq[20_000..20_036].copy_from_slice(&copy);
    let dir = indexed(&refs);
    for (q, want) in [(10u8, 15u8), (20, 25), (30, 34)] {
        let mut qual = vec![b'I'; 36];
        qual[18] = 33 + q;
        let read = FqRead {
            name: format!("q{q}"),
            qual,
            seq: seg.clone(),
        };
        let (_, recs) = parse_sam(&map(dir.path(), &[read], &["--end-to-end"]));
        assert_eq!(recs.len(), 1);
        let r = &recs[0];
        assert_eq!((r.rname.as_str(), r.pos), ("chr0", 10_001), "{r:?}");
        assert_eq!(r.mapq, want, "{r:?}");
    }
}

/// Fragments shorter than the reads (60 to 140 bases, 150-base reads that
/// run on into the adapter), where a few adapter bases happen to match the
/// reference past the fragment's ends: `--local` aligns them, so the
/// reverse mate starts before the forward one, or the forward mate ends
/// after the reverse one. They are one molecule and, as bwa mem has them,
/// a proper pair, its fragment from the forward mate's 5' end to the
/// reverse mate's. With the mates required to start and end in order, such
/// pairs were not proper (of 2,000 pairs with adapters simulated from
/// chr20, fragments of 60 to 400 bases, 1,543 were proper; now all 2,000,
/// bwa mem 1,998).
#[test]
fn short_fragments_with_adapters_pair() {
    let mut rng = Rng::new(7);
    let mut refs = reference(&mut rng);
    let adapter = b"AGATCGGAAGAGCACACGTCTGAACTCCAGTCACGGCTTAGCTACGTAGCTAGCAGTCAGTACGATCGATCGTAGCTAGCTGACTAGCTAGCTAGCAGCGACTGCAGCTAGCATCGACTACGATGCACTGACGATCGATCGAC";
    let mut frags = Vec::new();
    for i in 0..60usize {
        let c = i % 3;
        let pos = 2_000 + 600 * i;
        let len = 60 + (i * 37) % 81;
        let seq = &mut refs[c].seq;
        // The adapter's first 1-3 bases also follow the fragment on the
        // reference (forward mate runs on), or, reverse-complemented,
        // precede it (reverse mate runs on): every third pair each way.
        let k = 1 + i % 3;
        match i % 3 {
            0 => seq[pos + len..pos + len + k].copy_from_slice(&adapter[..k]),
            1 => {
                let rc = revcomp(&adapter[..k]);
                seq[pos - k..pos].copy_from_slice(&rc);
            }
            _ => {}
        }
        frags.push((c, pos, len));
    }
    let dir = indexed(&refs);
    let mut pairs = Pairs::default();
    for (i, &(c, pos, len)) in frags.iter().enumerate() {
        let frag = &refs[c].seq[pos..pos + len];
        let mut a = frag.to_vec();
        a.extend_from_slice(&adapter[..150 - len]);
        let mut b = revcomp(frag);
        b.extend_from_slice(&adapter[..150 - len]);
        let name = format!("f{i}_{}_{}_{len}", refs[c].name, pos + 1);
        pairs.push(&name, a, b);
    }
    let (_, recs) = parse_sam(&map_pairs(
        dir.path(),
        &pairs,
        &["--local", "-I", "0", "-X", "600"],
    ));
    let prim: Vec<&SamRec> = recs.iter().filter(|r| r.flag & 0x900 == 0).collect();
    assert_eq!(prim.len(), 2 * frags.len());
    for r in &prim {
        check_record(&refs, r, true);
        let mut f = r.qname.split('_');
        let (contig, pos) = (f.nth(1).unwrap(), f.next().unwrap().parse::<u64>().unwrap());
        let len: u64 = f.next().unwrap().parse().unwrap();
        assert_eq!(r.rname, contig, "{r:?}");
        let (s, e) = ref_span(r);
        // The fragment, give or take the adapter bases that match past
        // either end (planted or by chance).
        assert!(s + 10 >= pos && s <= pos + 10, "{r:?}");
        assert!(e + 10 >= pos + len && e <= pos + len + 10, "{r:?}");
        assert!(r.flag & 2 != 0, "not proper: {r:?}");
    }
}

/// Short pairs whose mates each score under `--local`'s minimum of 30
/// alone: 36 bases with 2 mismatches (AS 26) each, in a random genome.
/// Both mates were unmapped; now a short mate with no alignment of its
/// own is searched for its placements with up to 2 mismatches, which count
/// when the mates make a proper pair (as bwa mem pairs alignments under
/// its `-T`: 36-base chr20 pairs with 2% errors, 1,128 more records right
/// at MAPQ >= 20, docs/BENCHMARKS.md, 2026-11-28 (fifteenth)). A mate
/// alone stays unmapped, and a lone read too.
#[test]
fn short_mates_under_the_minimum_pair() {
    let mut rng = Rng::new(99);
    let refs = random_contigs(&mut rng, 1, 60_000);
    let mut pairs = Pairs::default();
    for k in 0..10 {
        let at = 5_000 + 5_000 * k;
        let one = substituted(&refs[0].seq[at..at + 36], &[10, 25]);
        let two = substituted(&refs[0].seq[at + 364..at + 400], &[10, 25]);
        pairs.push(&format!("p{k}_{}", at + 1), one, revcomp(&two));
    }
    // Mate 1 alike with a mate 2 from nowhere: it stays unmapped.
    let mut lone = Vec::new();
    for k in 0..5 {
        let at = 7_500 + 5_000 * k;
        let one = substituted(&refs[0].seq[at..at + 36], &[10, 25]);
        lone.push(one.clone());
        pairs.push(&format!("x{k}_{}", at + 1), one, rng.bases(36));
    }
    let dir = indexed(&refs);
    let (_, recs) = parse_sam(&map_pairs(
        dir.path(),
        &pairs,
        &["--local", "-I", "200", "-X", "600"],
    ));
    let primary: Vec<&SamRec> = recs.iter().filter(|r| r.flag & 0x900 == 0).collect();
    assert_eq!(primary.len(), 30);
    for r in primary {
        if r.qname.starts_with('x') {
            assert!(r.flag & 0x4 != 0, "{r:?}");
            continue;
        }
        let at: u64 = r.qname.split('_').nth(1).unwrap().parse().unwrap();
        assert!(r.flag & 0x2 != 0, "{r:?}");
        let want = if r.flag & 0x40 != 0 { at } else { at + 364 };
        assert_eq!(r.pos, want, "{r:?}");
        assert!(r.mapq >= 20, "{r:?}");
    }
    let reads: Vec<FqRead> = lone
        .into_iter()
        .enumerate()
        .map(|(k, seq)| FqRead {
            name: format!("s{k}"),
            qual: vec![b'I'; seq.len()],
            seq,
        })
        .collect();
    let (_, recs) = parse_sam(&map(dir.path(), &reads, &["--local"]));
    assert!(recs.iter().all(|r| r.flag & 0x4 != 0), "{recs:?}");
}

/// The primary records of second mates.
fn second_mates(recs: &[SamRec]) -> Vec<&SamRec> {
    recs.iter()
        .filter(|r| r.flag & 0x900 == 0 && r.flag & 0x80 != 0)
        .collect()
}

/// A short mate found only by rescue, in a window that holds its segment
/// twice: mate 1 (36 bases) is unique; mate 2 (36 bases, 3 substitutions
/// spread so that it has no 19-base seed and no placement with 2
/// mismatches) lies in a tandem duplicate 150 bases long, both copies
/// inside the insert window. Rescue aligned the first copy it met and mate
/// 2 kept MAPQ 60 as if it were alone; now the window is searched for a
/// second copy of a short mate (`mates::other_copies`), the copies tie and
/// mate 2 gets MAPQ 0, as in bwa mem (36-base chr20 pairs, docs/BENCHMARKS.md,
/// 2026-11-28 (fifteenth)).
#[test]
fn short_mates_rescued_see_a_tandem_copy_in_the_window() {
    let mut rng = Rng::new(4242);
    let mut refs = random_contigs(&mut rng, 2, 60_000);
    let mut pairs = Pairs::default();
    for k in 0..10 {
        let at = 5_000 + 5_000 * k;
        // Mate 2's segment and its tandem copy, 150 bases apart.
        let unit = refs[0].seq[at + 200..at + 350].to_vec();
        refs[0].seq[at + 350..at + 500].copy_from_slice(&unit);
        let one = refs[0].seq[at..at + 36].to_vec();
        let two = substituted(&refs[0].seq[at + 250..at + 286], &[8, 17, 27]);
        pairs.push(&format!("p{k}_{}", at + 251), one, revcomp(&two));
    }
    let dir = indexed(&refs);
    for mode in ["--local", "--end-to-end"] {
        let (_, recs) = parse_sam(&map_pairs(
            dir.path(),
            &pairs,
            &[mode, "-I", "200", "-X", "600"],
        ));
        let twos = second_mates(&recs);
        assert_eq!(twos.len(), 10);
        for r in twos {
            let at: u64 = r.qname.split('_').nth(1).unwrap().parse().unwrap();
            assert_eq!(r.rname, "chr0", "{mode}: {r:?}");
            assert!(r.pos == at || r.pos == at + 150, "{mode}: {r:?}");
            assert!(r.mapq < 20, "{mode}: {r:?}");
        }
    }
}

/// A short mate found only by rescue whose segment also lies on the other
/// side of its mate, where the pair would not be proper: mate 1 (36
/// bases, forward) is unique; mate 2 (36 bases, 3 substitutions: found only
/// by rescue) lies 250 bases downstream, as `--fr` wants, and an exact copy
/// of its segment 300 bases upstream of mate 1. Rescue searched both sides
/// and could meet the upstream copy first (the better, with the read's
/// errors): mate 2 was placed there, the pair not proper. Now a short
/// mate is rescued only on the side and within the reach of a proper pair.
#[test]
fn short_mates_are_rescued_on_the_proper_side() {
    let mut rng = Rng::new(77);
    let mut refs = random_contigs(&mut rng, 1, 60_000);
    let mut pairs = Pairs::default();
    for k in 0..10 {
        let at = 5_000 + 5_000 * k;
        // The upstream copy of mate 2's segment (as read: its errors too).
        let two = substituted(&refs[0].seq[at + 250..at + 286], &[8, 17, 27]);
        refs[0].seq[at - 300..at - 264].copy_from_slice(&two);
        let one = refs[0].seq[at..at + 36].to_vec();
        pairs.push(&format!("p{k}_{}", at + 251), one, revcomp(&two));
    }
    let dir = indexed(&refs);
    for mode in ["--local", "--end-to-end"] {
        let (_, recs) = parse_sam(&map_pairs(
            dir.path(),
            &pairs,
            &[mode, "-I", "200", "-X", "600"],
        ));
        let twos = second_mates(&recs);
        assert_eq!(twos.len(), 10);
        for r in twos {
            let at: u64 = r.qname.split('_').nth(1).unwrap().parse().unwrap();
            assert_eq!(r.pos, at, "{mode}: {r:?}");
            assert!(r.flag & 0x2 != 0, "{mode}: {r:?}");
        }
    }
}

/// Mate rescue from up to 10 tied alignments of a mate, not only the
/// first 3: mate 1 matches six identical copies of a segment equally well, and
/// mate 2 (one substitution in 10: no seed of 19 bases) is found only by
/// aligning it next to mate 1's copies. Its true place is next to the fifth
/// copy in reference order; rescue from the first 3 missed it (mate 2
/// unmapped, mate 1 on a copy chosen by name), and on chr20 left a pair of
/// tied mates at MAPQ 30 in the wrong copy.
#[test]
fn rescue_tries_the_tied_copies() {
    let mut rng = Rng::new(31);
    let mut refs = reference(&mut rng);
    let unit = rng.bases(150);
    // Six copies, in reference order: chr0 at 5k and 35k, chr1 at 5k and
    // 35k, chr2 at 5k (the fifth: the true one) and 35k.
    let mut copies = Vec::new();
    for (c, r) in refs.iter_mut().enumerate() {
        for at in [5_000usize, 35_000] {
            r.seq[at..at + 150].copy_from_slice(&unit);
            copies.push((c, at));
        }
    }
    let dir = indexed(&refs);
    let (c, at) = copies[4];
    let frag = 400;
    let mut pairs = Pairs::default();
    for i in 0..10 {
        let seq = &refs[c].seq;
        let mut b = seq[at + frag - 150..at + frag].to_vec();
        for k in (i % 10..150).step_by(10) {
            b[k] = if b[k] == b'A' { b'C' } else { b'A' };
        }
        pairs.push(&format!("t{i}"), unit.clone(), revcomp(&b));
    }
    // Mate 2 alone is not found.
    let (_, recs) = parse_sam(&map(dir.path(), &pairs.two, &["--local"]));
    assert!(recs.iter().all(|r| r.unmapped()), "mate 2 alone maps");
    let (_, recs) = parse_sam(&map_pairs(
        dir.path(),
        &pairs,
        &["--local", "-I", "300", "-X", "500"],
    ));
    let prim: Vec<&SamRec> = recs.iter().filter(|r| r.flag & 0x900 == 0).collect();
    assert_eq!(prim.len(), 20);
    for r in &prim {
        check_record(&refs, r, true);
        assert!(r.flag & 2 != 0, "not proper: {r:?}");
        assert_eq!(r.rname, refs[c].name, "{r:?}");
        let want = if r.flag & 0x40 != 0 {
            at
        } else {
            at + frag - 150
        };
        assert_eq!(r.pos, want as u64 + 1, "{r:?}");
    }
}

/// `--local` rescue keeps a mate that matches only 24 bases beside its
/// mate (the rest adapter or junk), as bwa mem does (it asks a rescued mate
/// for a seed's length, 19): inside the insert window that is no chance
/// match. Needing the minimum of a read aligned alone (30) left it
/// unmapped (chrM's real pairs: 27 singletons, now 19; bwa mem 15).
#[test]
fn local_rescue_keeps_a_short_mate() {
    let mut rng = Rng::new(77);
    let refs = reference(&mut rng);
    let dir = indexed(&refs);
    let mut pairs = Pairs::default();
    for i in 0..10usize {
        let c = i % 3;
        let pos = 3_000 + 2_000 * i;
        let frag = 300;
        let seq = &refs[c].seq;
        let mut b = revcomp(&seq[pos + frag - 24..pos + frag]);
        b.extend(rng.bases(126));
        pairs.push(&format!("s{i}"), seq[pos..pos + 150].to_vec(), b);
    }
    let (_, recs) = parse_sam(&map_pairs(
        dir.path(),
        &pairs,
        &["--local", "-I", "200", "-X", "400"],
    ));
    for r in recs.iter().filter(|r| r.flag & 0x80 != 0) {
        assert!(!r.unmapped(), "{r:?}");
        check_record(&refs, r, true);
        assert!(r.flag & 2 != 0, "not proper: {r:?}");
        // The 24 bases, and any junk base next to them that matches too.
        let ops = cigar(&r.cigar);
        assert!(
            matches!(ops[..], [(b'S', _), (b'M', m)] if (24..=30).contains(&m)),
            "{r:?}"
        );
    }
}

/// The reference span `[pos, end)` (1-based, end exclusive) a record's
/// CIGAR covers.
fn ref_span(r: &SamRec) -> (u64, u64) {
    let len: usize = cigar(&r.cigar)
        .iter()
        .filter(|o| b"MD".contains(&o.0))
        .map(|o| o.1)
        .sum();
    (r.pos, r.pos + len as u64)
}

/// Reads whose exact match runs across an N run (the N bases missing from
/// the read, as where an assembly's placeholder N is a deletion in the
/// sample: rCRS 3107) or from one contig into the next (a draft assembly):
/// the index's text has neither the Ns nor a break between contigs, so the
/// seed spans them and must be cut there, not dropped. Each read maps where
/// it came from, every record consistent with the reference, both strands;
/// with --local a read across two contigs also gets its other part as a
/// supplementary record once that part is 30 bases or more.
#[test]
fn reads_across_n_runs_and_contig_ends_map() {
    let mut rng = Rng::new(31);
    let refs = reference(&mut rng);
    let dir = indexed(&refs);
    let mut reads = Vec::new();
    // chr1 has its 20 Ns at 45,000..45,020 (0-based).
    let c1 = &refs[1].seq;
    for left in [10usize, 40, 75, 110, 140] {
        let mut seq = c1[45_000 - left..45_000].to_vec();
        seq.extend_from_slice(&c1[45_020..45_020 + 150 - left]);
        for rev in [false, true] {
            reads.push(FqRead {
                name: format!("hole_{left}_{}", u8::from(rev)),
                qual: vec![b'I'; 150],
                seq: if rev { revcomp(&seq) } else { seq.clone() },
            });
        }
    }
    // The last `left` bases of chr0, then the first of chr1.
    let c0 = &refs[0].seq;
    for left in [10usize, 40, 110, 140] {
        let mut seq = c0[c0.len() - left..].to_vec();
        seq.extend_from_slice(&c1[..150 - left]);
        reads.push(FqRead {
            name: format!("join_{left}_0"),
            qual: vec![b'I'; 150],
            seq,
        });
    }
    for (flag, local) in [("--local", true), ("--end-to-end", false)] {
        let sam = map(dir.path(), &reads, &[flag]);
        let (_, recs) = parse_sam(&sam);
        for read in &reads {
            let mine: Vec<&SamRec> = recs.iter().filter(|r| r.qname == read.qname()).collect();
            let f: Vec<&str> = read.name.split('_').collect();
            let left: u64 = f[1].parse().unwrap();
            let p = mine[0];
            if f[0] == "join" && !local && p.unmapped() {
                // No end-to-end alignment runs off a contig's end.
                continue;
            }
            assert!(!p.unmapped(), "{flag}: {} unmapped", read.name);
            assert_eq!(p.reverse(), f[2] == "1", "{flag}: {p:?}");
            for r in &mine {
                check_record(&refs, r, local);
            }
            let (start, end) = ref_span(p);
            if f[0] == "hole" {
                // End-to-end a 20-base deletion costs 65 of the 90 points
                // a 150-base read may lose: a low MAPQ, as bowtie2 gives.
                assert!(!local || p.mapq >= 20, "{flag}: {p:?}");
                // Within the read's two pieces and the Ns between them.
                assert_eq!(p.rname, "chr1", "{flag}: {p:?}");
                assert!(
                    start > 45_000 - left && end <= 45_021 + 150 - left,
                    "{flag}: {p:?}"
                );
                // The longer piece aligned whole at least.
                assert!(end - start >= left.max(150 - left), "{flag}: {p:?}");
                continue;
            }
            // Across contigs: the longer side is the primary.
            if 2 * left > 150 {
                assert_eq!(
                    (p.rname.as_str(), end),
                    ("chr0", c0.len() as u64 + 1),
                    "{p:?}"
                );
            } else {
                assert_eq!((p.rname.as_str(), start), ("chr1", 1), "{p:?}");
            }
            if local {
                assert!(p.mapq >= 20, "{flag}: {p:?}");
                // The other side, when it is 30 bases or more.
                let short = left.min(150 - left);
                assert_eq!(mine.len(), 1 + usize::from(short >= 30), "{mine:?}");
                if let Some(s) = mine.get(1) {
                    assert_eq!(s.flag & 0x800, 0x800, "{s:?}");
                    assert_ne!(s.rname, p.rname, "{s:?}");
                }
            }
        }
    }
}

/// The real chrM pairs (150 bp, ERR2438055): at least 99.5% mapped with
/// --local; at least 98.5% end-to-end (reads with adapter or low-quality
/// tails fall below bowtie2's minimum score without its quality-aware
/// penalties, which fmalign does not have yet).
#[test]
fn real_chrm_pairs_map() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        test_data("human_chrM_NC_012920.fa"),
        dir.path().join("ref.fa"),
    )
    .unwrap();
    run_ok(dir.path(), &["index", "-q", "ref.fa"], None);
    let r1 = test_data("human_chrM_ERR2438055_R1.fq.gz");
    let r2 = test_data("human_chrM_ERR2438055_R2.fq.gz");
    let refs = parse_fasta(&std::fs::read(dir.path().join("ref.fa")).unwrap());
    for (flag, local) in [("--local", true), ("--end-to-end", false)] {
        let args = [
            "map".as_ref(),
            "-q".as_ref(),
            flag.as_ref(),
            "ref.fa".as_ref(),
            r1.as_os_str(),
            r2.as_os_str(),
        ];
        let out = run_ok(dir.path(), &args, None).stdout;
        let (_, recs) = parse_sam(&out);
        let prim: Vec<&SamRec> = recs.iter().filter(|r| r.flag & 0x900 == 0).collect();
        let mapped = prim.iter().filter(|r| !r.unmapped()).count();
        let want = if local { 995 } else { 985 };
        assert!(
            mapped * 1000 >= prim.len() * want,
            "{flag}: {mapped} of {} mapped",
            prim.len()
        );
        for r in recs.iter().filter(|r| !r.unmapped()).step_by(7) {
            check_record(&refs, r, local);
        }
    }
}

/// The default mode is `--local` (as bwa mem maps real reads): the README's
/// main job (the real chrM reads, single-end, no option) maps at least 99%
/// of its reads, with the very records `--local` writes; `-v 0` maps only
/// the reads that match exactly, fewer. `--device gpu` in the default mode
/// maps on the CPU with a notice.
#[test]
fn default_mode_maps_real_reads_as_local() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(test_data("human_chrM_NC_012920.fa"), d.join("ref.fa")).unwrap();
    run_ok(d, &["index", "-q", "ref.fa"], None);
    let r1 = test_data("human_chrM_ERR2438055_R1.fq.gz");
    let r1 = r1.to_str().unwrap();
    let body = |args: &[&str]| -> Vec<u8> {
        let out = run_ok(d, args, None).stdout;
        out.split_inclusive(|&b| b == b'\n')
            .filter(|l| !l.starts_with(b"@PG"))
            .flatten()
            .copied()
            .collect()
    };
    let default = body(&["map", "-q", "ref.fa", r1]);
    assert!(
        default == body(&["map", "-q", "--local", "ref.fa", r1]),
        "the default mode differs from --local"
    );
    let mapped = |sam: &[u8]| {
        let (_, recs) = parse_sam(sam);
        let prim: Vec<SamRec> = recs.into_iter().filter(|r| r.flag & 0x900 == 0).collect();
        let m = prim.iter().filter(|r| !r.unmapped()).count();
        (m, prim.len())
    };
    let (m, n) = mapped(&default);
    assert!(m * 100 >= n * 99, "default mode: {m} of {n} mapped");
    let (exact, n0) = mapped(&body(&["map", "-q", "-v", "0", "ref.fa", r1]));
    assert_eq!(n0, n);
    assert!(exact < m, "-v 0 maps {exact}, the default {m}");
    let gpu = run_ok(d, &["map", "--device", "gpu", "ref.fa", r1], None);
    let err = String::from_utf8_lossy(&gpu.stderr);
    assert!(
        err.contains("on the CPU"),
        "no notice for --device gpu: {err}"
    );
}

/// -v and --strata with a gapped mode named are errors that say why, and
/// so is --strata without -v (the default mode is gapped); the two gapped
/// modes exclude each other.
#[test]
fn bad_option_mixes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(test_data("lambda_virus.fa"), dir.path().join("ref.fa")).unwrap();
    std::fs::write(dir.path().join("r.fq"), b"@a\nACGT\n+\nIIII\n").unwrap();
    for (args, want) in [
        (
            vec!["-v", "1", "--local"],
            "-v 1 cannot be used with --local",
        ),
        (
            vec!["-v", "0", "--end-to-end"],
            "-v 0 cannot be used with --end-to-end",
        ),
        (
            vec!["--strata", "--local"],
            "--strata cannot be used with --local",
        ),
        (vec!["--local", "--end-to-end"], "cannot be used with"),
        (vec!["--strata"], "--strata applies to -v K"),
    ] {
        let mut all = vec!["map"];
        all.extend(args);
        all.extend(["ref.fa", "r.fq"]);
        let out = run_in(dir.path(), &all, None);
        assert!(!out.status.success(), "{}", describe(&all, &out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{}", describe(&all, &out));
    }
}
