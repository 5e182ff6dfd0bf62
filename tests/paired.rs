//! Paired-end mapping (`fmalign map INDEX R1 R2`, `--interleaved`) against
//! the truth wgsim writes into its read names, hand-built pairs (across
//! contigs, over N, unmappable mates, other orientations) and samtools
//! flagstat.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// wgsim pairs of `len`-base mates from `fa` into dir/p1.fq, dir/p2.fq:
/// fragments of 250 ± 20, no errors or mutations (lambda has no repeats, so
/// every pair has one true placement). None when wgsim is not installed.
fn wgsim(dir: &Path, fa: &Path, n: u32, len: u32) -> Option<()> {
    let out = Command::new("wgsim")
        .args(["-S", "11", "-N", &n.to_string(), "-1", &len.to_string()])
        .args(["-2", &len.to_string(), "-d", "250", "-s", "20"])
        .args(["-e", "0", "-r", "0", "-R", "0"])
        .arg(fa)
        .args([dir.join("p1.fq"), dir.join("p2.fq")])
        .output()
        .ok()?;
    assert!(out.status.success(), "wgsim failed");
    Some(())
}

fn lambda_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(test_data("lambda_virus.fa"), dir.path().join("ref.fa")).unwrap();
    run_ok(dir.path(), &["index", "-q", "ref.fa"], None);
    dir
}

/// A directory with ref.fa, contigs c1 and c2, indexed.
fn two_contigs(c1: &[u8], c2: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fa = format!(
        ">c1\n{}\n>c2\n{}\n",
        String::from_utf8_lossy(c1),
        String::from_utf8_lossy(c2)
    );
    std::fs::write(dir.path().join("ref.fa"), fa).unwrap();
    run_ok(dir.path(), &["index", "-q", "ref.fa"], None);
    dir
}

/// Records of a SAM output grouped as (mate 1, mate 2) primaries.
fn pairs(recs: &[SamRec]) -> Vec<(SamRec, SamRec)> {
    let prim: Vec<&SamRec> = recs.iter().filter(|r| !r.secondary()).collect();
    assert_eq!(prim.len() % 2, 0);
    prim.chunks(2)
        .map(|c| {
            assert_eq!(c[0].qname, c[1].qname, "mates are adjacent and share QNAME");
            assert_eq!(c[0].flag & 0xC1, 0x41, "mate 1 first: {:?}", c[0]);
            assert_eq!(c[1].flag & 0xC1, 0x81, "mate 2 second: {:?}", c[1]);
            (c[0].clone(), c[1].clone())
        })
        .collect()
}

/// The records of SAM text (header lines dropped).
fn records(sam: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(sam)
        .lines()
        .filter(|l| !l.starts_with('@'))
        .map(str::to_owned)
        .collect()
}

/// `samtools flagstat FILE` (in `dir`) prints every line of `wants`.
fn flagstat_has(dir: &Path, file: &str, wants: &[&str]) {
    let fs = samtools(dir, &["flagstat", file]);
    let fs = String::from_utf8_lossy(&fs);
    for want in wants {
        assert!(fs.contains(want), "flagstat lacks '{want}':\n{fs}");
    }
}

/// The fields that tie two mapped mates together, checked both ways.
fn check_mates(a: &SamRec, b: &SamRec, len_a: u64, len_b: u64) {
    for (x, y, lx, ly) in [(a, b, len_a, len_b), (b, a, len_b, len_a)] {
        assert_eq!(
            x.flag & 0x20 != 0,
            y.flag & 0x10 != 0,
            "0x20 is the mate's 0x10: {x:?}"
        );
        assert_eq!(x.pnext, y.pos, "{x:?}");
        if x.rname == y.rname {
            assert_eq!(x.rnext, "=");
            let span = ((x.pos + lx).max(y.pos + ly) - x.pos.min(y.pos)) as i64;
            assert_eq!(x.tlen.abs(), span, "{x:?} {y:?}");
            assert_eq!(x.tlen, -y.tlen);
            let leftmost = x.pos < y.pos || (x.pos == y.pos && x.flag & 0x40 != 0);
            assert_eq!(x.tlen > 0, leftmost, "{x:?}");
        } else {
            assert_eq!(x.rnext, y.rname);
            assert_eq!(x.tlen, 0);
        }
    }
}

/// Every wgsim pair maps as a proper pair at its true place: the fragment
/// (from the name) is [min POS, max end], TLEN its length; the window is
/// estimated near 250; output identical for any -t/-K, and BAM reads back
/// the same through samtools.
#[test]
fn wgsim_pairs_map_at_their_truth() {
    let dir = lambda_dir();
    let d = dir.path();
    if wgsim(d, &d.join("ref.fa"), 3000, 70).is_none() {
        eprintln!("wgsim not installed: skipping");
        return;
    }
    let args = ["map", "-v", "0", "-t", "2", "ref.fa", "p1.fq", "p2.fq"];
    let out = run_ok(d, &args, None);
    let err = String::from_utf8_lossy(&out.stderr);
    let mean: f64 = err
        .split("mean ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no insert-size line: {err}"));
    assert!((240.0..260.0).contains(&mean), "{err}");
    let (_, recs) = parse_sam(&out.stdout);
    check_mate_cigars(&recs);
    let ps = pairs(&recs);
    assert_eq!(ps.len(), 3000);
    for (a, b) in &ps {
        assert!(!a.qname.ends_with("/1") && !a.qname.ends_with("/2"));
        // wgsim: {contig}_{start}_{end}_... with 1-based outer coordinates.
        let f: Vec<&str> = a.qname.rsplitn(6, '_').collect();
        let (start, end): (u64, u64) = (f[4].parse().unwrap(), f[3].parse().unwrap());
        assert_eq!(a.flag & 0x2, 0x2, "proper: {a:?}");
        assert_eq!(b.flag & 0x2, 0x2, "proper: {b:?}");
        assert_ne!(a.reverse(), b.reverse(), "FR: {a:?} {b:?}");
        assert_eq!(a.pos.min(b.pos), start, "{a:?} {b:?}");
        assert_eq!((a.pos + 70).max(b.pos + 70) - 1, end, "{a:?} {b:?}");
        assert_eq!(a.mapq, 37);
        check_mates(a, b, 70, 70);
        // The forward mate is upstream (FR).
        let (fwd, rev) = if a.reverse() { (b, a) } else { (a, b) };
        assert!(fwd.pos <= rev.pos);
    }
    // -t and -K change nothing (the window comes from the first 10,000
    // pairs whatever the batch size).
    let other = run_ok(
        d,
        &[
            "map", "-v", "0", "-t", "1", "-K", "3000", "ref.fa", "p1.fq", "p2.fq",
        ],
        None,
    );
    assert_eq!(without_pg(&out.stdout), without_pg(&other.stdout));
    // BAM: samtools reads the same records; flagstat agrees.
    run_ok(
        d,
        &[
            "map", "-v", "0", "-q", "-o", "p.bam", "ref.fa", "p1.fq", "p2.fq",
        ],
        None,
    );
    assert_eq!(
        records(&samtools(d, &["view", "p.bam"])),
        records(&out.stdout)
    );
    flagstat_has(
        d,
        "p.bam",
        &[
            "6000 + 0 paired in sequencing",
            "3000 + 0 read1",
            "3000 + 0 read2",
            "6000 + 0 properly paired (100.00%",
            "6000 + 0 with itself and mate mapped",
            "0 + 0 singletons",
        ],
    );
}

/// Reverse-complementing both mates makes an RF library, mate 2 alone an FF
/// one: proper only under the matching option. -X below the fragment and
/// -I above it make no pair proper; the given window prints no estimate.
/// Interleaved input maps like two files.
#[test]
fn orientations_windows_and_interleaved_input() {
    let dir = lambda_dir();
    let d = dir.path();
    if wgsim(d, &d.join("ref.fa"), 400, 50).is_none() {
        eprintln!("wgsim not installed: skipping");
        return;
    }
    let r1 = parse_fastq(&std::fs::read(d.join("p1.fq")).unwrap());
    let r2 = parse_fastq(&std::fs::read(d.join("p2.fq")).unwrap());
    let rc = |v: &[FqRead]| -> Vec<FqRead> {
        v.iter()
            .map(|r| FqRead {
                name: r.name.clone(),
                seq: revcomp(&r.seq),
                qual: r.qual.iter().rev().copied().collect(),
            })
            .collect()
    };
    std::fs::write(d.join("rc1.fq"), fastq_text(&rc(&r1))).unwrap();
    std::fs::write(d.join("rc2.fq"), fastq_text(&rc(&r2))).unwrap();
    let proper = |args: &[&str]| -> usize {
        let out = run_ok(d, args, None);
        let (_, recs) = parse_sam(&out.stdout);
        let ps = pairs(&recs);
        for (a, b) in &ps {
            check_mates(a, b, 50, 50);
        }
        ps.iter().filter(|(a, _)| a.flag & 2 != 0).count()
    };
    assert_eq!(proper(&["map", "-v", "0", "ref.fa", "p1.fq", "p2.fq"]), 400);
    assert_eq!(
        proper(&["map", "-v", "0", "--rf", "ref.fa", "p1.fq", "p2.fq"]),
        0
    );
    assert_eq!(
        proper(&[
            "map", "-v", "0", "--rf", "-X", "400", "ref.fa", "rc1.fq", "rc2.fq"
        ]),
        400
    );
    assert_eq!(
        proper(&["map", "-v", "0", "-X", "400", "ref.fa", "rc1.fq", "rc2.fq"]),
        0
    );
    assert_eq!(
        proper(&[
            "map", "-v", "0", "--ff", "-X", "400", "ref.fa", "p1.fq", "rc2.fq"
        ]),
        400
    );
    assert_eq!(
        proper(&[
            "map", "-v", "0", "--ff", "-X", "400", "ref.fa", "p1.fq", "p2.fq"
        ]),
        0
    );
    // Fragments are 250 ± 20: none fits under 150, none over 400.
    assert_eq!(
        proper(&["map", "-v", "0", "-X", "150", "ref.fa", "p1.fq", "p2.fq"]),
        0
    );
    assert_eq!(
        proper(&[
            "map", "-v", "0", "-I", "400", "-X", "900", "ref.fa", "p1.fq", "p2.fq"
        ]),
        0
    );
    let out = run_ok(
        d,
        &[
            "map", "-v", "0", "-I", "100", "-X", "400", "ref.fa", "p1.fq", "p2.fq",
        ],
        None,
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("insert size from"));
    // One bound given: the other is still estimated (it was 0 or 500, and
    // `-I 600` alone made every pair improper), and the notice says so.
    let window = |args: &[&str]| -> (u64, u64, String) {
        let out = run_ok(d, args, None);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let w = err
            .split("proper pairs ")
            .nth(1)
            .unwrap_or_else(|| panic!("no window in {err}"));
        let (lo, rest) = w.split_once("..=").unwrap();
        let hi: String = rest.chars().take_while(char::is_ascii_digit).collect();
        (lo.parse().unwrap(), hi.parse().unwrap(), err)
    };
    let (lo, hi, _) = window(&["map", "-v", "0", "ref.fa", "p1.fq", "p2.fq"]);
    assert!(lo > 100 && hi < 400, "estimated {lo}..={hi}");
    let (lo_i, hi_i, err) = window(&["map", "-v", "0", "-I", "240", "ref.fa", "p1.fq", "p2.fq"]);
    assert_eq!((lo_i, hi_i), (240, hi), "{err}");
    assert!(err.contains("-I 240 given"), "{err}");
    let (lo_x, hi_x, err) = window(&["map", "-v", "0", "-X", "260", "ref.fa", "p1.fq", "p2.fq"]);
    assert_eq!((lo_x, hi_x), (lo, 260), "{err}");
    let (hi_s, lo_s) = (hi.to_string(), lo.to_string());
    assert_eq!(
        proper(&["map", "-v", "0", "-I", "240", "ref.fa", "p1.fq", "p2.fq"]),
        proper(&[
            "map", "-v", "0", "-I", "240", "-X", &hi_s, "ref.fa", "p1.fq", "p2.fq"
        ])
    );
    assert_eq!(
        proper(&["map", "-v", "0", "-X", "260", "ref.fa", "p1.fq", "p2.fq"]),
        proper(&[
            "map", "-v", "0", "-I", &lo_s, "-X", "260", "ref.fa", "p1.fq", "p2.fq"
        ])
    );
    // A bound beyond the estimated other: the window is that one length.
    let (lo_b, hi_b, _) = window(&["map", "-v", "0", "-I", "600", "ref.fa", "p1.fq", "p2.fq"]);
    assert_eq!((lo_b, hi_b), (600, 600));
    // An RF library mapped as FR: nothing to estimate from, and the notice
    // names the orientation that fits.
    let (_, _, err) = window(&["map", "-v", "0", "ref.fa", "rc1.fq", "rc2.fq"]);
    assert!(err.contains("do with --rf"), "{err}");
    // Interleaved: the same records.
    let mut inter = Vec::new();
    for (a, b) in r1.iter().zip(&r2) {
        inter.push(a.clone());
        inter.push(b.clone());
    }
    std::fs::write(d.join("inter.fq"), fastq_text(&inter)).unwrap();
    let two = run_ok(
        d,
        &["map", "-v", "0", "-q", "ref.fa", "p1.fq", "p2.fq"],
        None,
    );
    let one = run_ok(
        d,
        &[
            "map",
            "-v",
            "0",
            "-q",
            "--interleaved",
            "ref.fa",
            "inter.fq",
        ],
        None,
    );
    assert_eq!(records(&two.stdout), records(&one.stdout));
}

/// Hand-built pairs on a two-contig reference with an N run: mates on two
/// contigs (mapped, not proper, RNEXT the other contig, TLEN 0), a mate
/// over the N run (unmapped, placed at its mate, which gets 0x8), both
/// unmappable (RNAME *, 0x4 and 0x8 on both); samtools flagstat counts them.
#[test]
fn pairs_across_contigs_over_n_and_unmapped() {
    let mut rng = Rng::new(99);
    let c1 = rng.bases(3000);
    let mut c2 = rng.bases(3000);
    for b in &mut c2[1000..1010] {
        *b = b'N';
    }
    let dir = two_contigs(&c1, &c2);
    let d = dir.path();
    let q = |n: usize| vec![b'I'; n];
    let read = |name: &str, seq: Vec<u8>| FqRead {
        name: name.into(),
        qual: q(seq.len()),
        seq,
    };
    let junk = |rng: &mut Rng| rng.bases(60);
    let mut m1 = Vec::new();
    let mut m2 = Vec::new();
    // 0: a proper pair on c1 (fragment 300).
    m1.push(read("p0/1", c1[100..160].to_vec()));
    m2.push(read("p0/2", revcomp(&c1[340..400])));
    // 1: mates on two contigs.
    m1.push(read("p1/1", c1[500..560].to_vec()));
    m2.push(read("p1/2", revcomp(&c2[2000..2060])));
    // 2: mate 2 over the N run of c2, mate 1 upstream of it.
    m1.push(read("p2/1", c2[800..860].to_vec()));
    m2.push(read("p2/2", revcomp(&c2[980..1040])));
    // 3: mate 1 unmappable, mate 2 on c1 reverse.
    m1.push(read("p3/1", junk(&mut rng)));
    m2.push(read("p3/2", revcomp(&c1[2000..2060])));
    // 4: both unmappable.
    m1.push(read("p4/1", junk(&mut rng)));
    m2.push(read("p4/2", junk(&mut rng)));
    std::fs::write(d.join("m1.fq"), fastq_text(&m1)).unwrap();
    std::fs::write(d.join("m2.fq"), fastq_text(&m2)).unwrap();
    for extra in [&["-v", "0"][..], &["-v", "2"][..]] {
        let mut args = vec!["map", "-q", "-I", "0", "-X", "500"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["ref.fa", "m1.fq", "m2.fq"]);
        let out = run_ok(d, &args, None);
        let (_, recs) = parse_sam(&out.stdout);
        // Unmapped mates and mates apart included.
        check_mate_cigars(&recs);
        let ps = pairs(&recs);
        assert_eq!(ps.len(), 5);
        let (a, b) = &ps[0];
        assert_eq!(
            (a.flag, b.flag),
            (0x1 | 0x2 | 0x20 | 0x40, 0x1 | 0x2 | 0x10 | 0x80)
        );
        assert_eq!((a.pos, b.pos, a.tlen, b.tlen), (101, 341, 300, -300));
        check_mates(a, b, 60, 60);
        let (a, b) = &ps[1];
        assert_eq!((a.rname.as_str(), b.rname.as_str()), ("c1", "c2"));
        assert_eq!(a.flag & 0x2, 0);
        assert_eq!((a.rnext.as_str(), b.rnext.as_str()), ("c2", "c1"));
        check_mates(a, b, 60, 60);
        // Mate 2 overlaps N: unmapped, placed at mate 1.
        let (a, b) = &ps[2];
        assert_eq!(a.flag, 0x1 | 0x8 | 0x40, "{a:?}");
        assert_eq!(b.flag, 0x1 | 0x4 | 0x80, "{b:?}");
        assert_eq!((b.rname.as_str(), b.pos), ("c2", 801));
        assert_eq!(
            (a.rnext.as_str(), a.pnext, b.rnext.as_str(), b.pnext),
            ("=", 801, "=", 801)
        );
        assert_eq!((a.tlen, b.tlen, b.mapq, b.cigar.as_str()), (0, 0, 0, "*"));
        assert_eq!(
            b.seq, m2[2].seq,
            "an unmapped mate keeps its sequence as read"
        );
        let (a, b) = &ps[3];
        assert_eq!(a.flag, 0x1 | 0x4 | 0x20 | 0x40, "{a:?}");
        assert_eq!(b.flag, 0x1 | 0x8 | 0x10 | 0x80, "{b:?}");
        assert_eq!((a.rname.as_str(), a.pos, b.pos), ("c1", 2001, 2001));
        let (a, b) = &ps[4];
        for r in [a, b] {
            assert_eq!(r.flag & 0xC, 0xC);
            assert_eq!(
                (r.rname.as_str(), r.pos, r.rnext.as_str(), r.pnext),
                ("*", 0, "*", 0)
            );
        }
        // samtools agrees on what it counts.
        std::fs::write(d.join("m.sam"), &out.stdout).unwrap();
        flagstat_has(
            d,
            "m.sam",
            &[
                "10 + 0 paired in sequencing",
                "6 + 0 mapped",
                "2 + 0 properly paired",
                "4 + 0 with itself and mate mapped",
                "2 + 0 singletons",
                "2 + 0 with mate mapped to a different chr",
            ],
        );
    }
}

/// Secondary records of a pair: 0x2 only on those that form a proper pair
/// with the mate's primary themselves (one 480 bases upstream of the mate
/// is; copies 19 kb away and on another contig are not), MAPQ 0 on every
/// secondary (a worse hit must not carry the best one's MAPQ), in every
/// mode and for a single read too. The oracle is the records' own fields:
/// POS, strand and the mate's position (PNEXT) against `-I`/`-X`.
#[test]
fn secondaries_are_proper_only_beside_the_mate() {
    let mut rng = Rng::new(7);
    let mut c1 = rng.bases(30_000);
    let mut c2 = rng.bases(5_000);
    // X: four exact copies; Y: exact once, then with 1 and 2 mismatches.
    let x = rng.bases(80);
    let y = rng.bases(80);
    for at in [1000, 1200, 20_000] {
        c1[at..at + 80].copy_from_slice(&x);
    }
    c2[2000..2080].copy_from_slice(&x);
    let mutate = |s: &[u8], at: &[usize]| {
        let mut s = s.to_vec();
        for &i in at {
            s[i] = if s[i] == b'A' { b'C' } else { b'A' };
        }
        s
    };
    c1[5000..5080].copy_from_slice(&y);
    c1[9000..9080].copy_from_slice(&mutate(&y, &[40]));
    c2[3000..3080].copy_from_slice(&mutate(&y, &[20, 60]));
    let dir = two_contigs(&c1, &c2);
    let d = dir.path();
    let read = |name: &str, seq: Vec<u8>| FqRead {
        name: name.into(),
        qual: vec![b'I'; seq.len()],
        seq,
    };
    let m1 = [read("x/1", x.clone()), read("y/1", y.clone())];
    let m2 = [
        read("x/2", revcomp(&c1[1400..1480])),
        read("y/2", revcomp(&c1[5300..5380])),
    ];
    std::fs::write(d.join("m1.fq"), fastq_text(&m1)).unwrap();
    std::fs::write(d.join("m2.fq"), fastq_text(&m2)).unwrap();
    let (min, max) = (0, 600);
    for mode in [
        &["-v", "0", "-a"][..],
        &["-v", "2", "-a"][..],
        &["-v", "2", "-k", "3"][..],
        &["--end-to-end", "-a"][..],
        &["--local", "-a"][..],
    ] {
        let mut args = vec!["map", "-q", "-I", "0", "-X", "600"];
        args.extend_from_slice(mode);
        args.extend_from_slice(&["ref.fa", "m1.fq", "m2.fq"]);
        let out = run_ok(d, &args, None);
        let (_, recs) = parse_sam(&out.stdout);
        let primary = |qname: &str, mate1: bool| {
            let want = if mate1 { 0x40 } else { 0x80 };
            recs.iter()
                .find(|r| r.qname == qname && r.flag & want != 0 && !r.secondary())
                .unwrap_or_else(|| panic!("{mode:?}: no primary of {qname}"))
        };
        let (mut proper, mut apart) = (0, 0);
        for r in recs.iter().filter(|r| r.secondary()) {
            assert_eq!(r.mapq, 0, "{mode:?}: {r:?}");
            let mate = primary(&r.qname, r.flag & 0x80 != 0);
            assert_eq!((r.pnext, r.flag & 0x20 != 0), (mate.pos, mate.reverse()));
            // FR by the 5' ends: the forward mate starts before the
            // reverse one ends (all reads here are 80 bases).
            let (fwd, rev) = if r.reverse() { (mate, r) } else { (r, mate) };
            let fits = r.rnext == "="
                && fwd.reverse() != rev.reverse()
                && fwd.pos < rev.pos + 80
                && (min..=max).contains(&(rev.pos + 80 - fwd.pos));
            assert_eq!(r.flag & 0x2 != 0, fits, "{mode:?}: {r:?} / {mate:?}");
            if fits { proper += 1 } else { apart += 1 }
        }
        assert!(
            proper >= 1 && apart >= 2,
            "{mode:?}: {proper} proper, {apart} apart"
        );
        for q in ["x", "y"] {
            for mate1 in [true, false] {
                assert_ne!(primary(q, mate1).flag & 0x2, 0, "{mode:?}: {q}");
            }
        }
        // Y's best hit is unique: its MAPQ is not 0, its worse ones' is.
        assert!(primary("y", true).mapq > 0, "{mode:?}");
    }
    // A single read: secondaries' MAPQ 0 beside a unique best hit's.
    std::fs::write(d.join("y.fq"), fastq_text(&m1[1..])).unwrap();
    for mode in [&["-v", "2", "-a"][..], &["-v", "2", "-k", "3"][..]] {
        let mut args = vec!["map", "-q"];
        args.extend_from_slice(mode);
        args.extend_from_slice(&["ref.fa", "y.fq"]);
        let (_, recs) = parse_sam(&run_ok(d, &args, None).stdout);
        assert_eq!(recs.len(), 3, "{mode:?}: {recs:?}");
        assert!(recs[0].mapq > 0 && !recs[0].secondary(), "{mode:?}");
        assert!(
            recs[1..].iter().all(|r| r.secondary() && r.mapq == 0),
            "{mode:?}"
        );
    }
}

/// Files that do not pair up are errors naming the file and the pair.
#[test]
fn mismatched_mate_files_are_errors() {
    let dir = lambda_dir();
    let d = dir.path();
    let mut rng = Rng::new(5);
    let reads: Vec<FqRead> = (0..5)
        .map(|i| FqRead {
            name: format!("r{i}"),
            seq: rng.bases(40),
            qual: vec![b'I'; 40],
        })
        .collect();
    std::fs::write(d.join("a.fq"), fastq_text(&reads)).unwrap();
    std::fs::write(d.join("short.fq"), fastq_text(&reads[..4])).unwrap();
    let mut renamed = reads.clone();
    renamed[2].name = "other".into();
    std::fs::write(d.join("renamed.fq"), fastq_text(&renamed)).unwrap();
    let fails = |args: &[&str], needles: &[&str]| {
        let out = run_in(d, args, None);
        assert!(!out.status.success(), "{}", describe(args, &out));
        let err = String::from_utf8_lossy(&out.stderr);
        for n in needles {
            assert!(err.contains(n), "'{n}' missing: {}", describe(args, &out));
        }
        assert!(!err.contains("panicked"));
    };
    fails(
        &["map", "-v", "0", "ref.fa", "a.fq", "short.fq"],
        &["short.fq", "ends after 4 reads", "a.fq"],
    );
    fails(
        &["map", "-v", "0", "ref.fa", "short.fq", "a.fq"],
        &["short.fq", "ends after 4 reads"],
    );
    fails(
        &["map", "-v", "0", "ref.fa", "a.fq", "renamed.fq"],
        &["renamed.fq", "pair 3", "'r2'", "'other'"],
    );
    fails(
        &["map", "-v", "0", "ref.fa", "a.fq", "a.fq"],
        &["same file", "--interleaved"],
    );
    // An interleaved file out of step: the records named, not "the files".
    let mut il = Vec::new();
    for (i, r) in reads.iter().enumerate() {
        il.push(r.clone());
        let mut m = r.clone();
        if i == 2 {
            m.name = "other".into();
        }
        il.push(m);
    }
    std::fs::write(d.join("il.fq"), fastq_text(&il)).unwrap();
    fails(
        &["map", "-v", "0", "--interleaved", "ref.fa", "il.fq"],
        &[
            "il.fq",
            "pair 3 (records 5 and 6)",
            "'r2'",
            "'other'",
            "--interleaved",
        ],
    );
    // The same file by another path (it ran, with no pair proper).
    fails(
        &["map", "-v", "0", "ref.fa", "a.fq", "./a.fq"],
        &["same file", "--interleaved"],
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("a.fq", d.join("link.fq")).unwrap();
        fails(
            &["map", "-v", "0", "ref.fa", "a.fq", "link.fq"],
            &["same file", "--interleaved"],
        );
    }
    fails(
        &["map", "-v", "0", "-X", "100", "ref.fa", "a.fq"],
        &["READS2 or --interleaved"],
    );
    fails(
        &[
            "map", "-v", "0", "-I", "300", "-X", "100", "ref.fa", "a.fq", "a.fq",
        ],
        &["-I 300 is larger than -X 100"],
    );
    // Mate names that differ only by /1 and /2 pair up.
    let with = |sfx: &str| -> Vec<FqRead> {
        reads
            .iter()
            .map(|r| FqRead {
                name: format!("{}{sfx}", r.name),
                ..r.clone()
            })
            .collect()
    };
    std::fs::write(d.join("s1.fq"), fastq_text(&with("/1"))).unwrap();
    std::fs::write(d.join("s2.fq"), fastq_text(&with("/2"))).unwrap();
    let (w1, w2) = (with("/1"), with("/2"));
    let odd = [&w1[0], &w2[0], &w1[1], &w2[1], &w1[2]].map(|r| r.clone());
    std::fs::write(d.join("odd.fq"), fastq_text(&odd)).unwrap();
    fails(
        &["map", "-v", "0", "--interleaved", "ref.fa", "odd.fq"],
        &["odd.fq", "odd number of records (5)"],
    );
    let out = run_ok(
        d,
        &["map", "-v", "0", "-q", "ref.fa", "s1.fq", "s2.fq"],
        None,
    );
    let (_, recs) = parse_sam(&out.stdout);
    assert_eq!(recs.len(), 10);
    assert!(
        recs.iter()
            .all(|r| r.qname.starts_with('r') && !r.qname.contains('/'))
    );
}

/// `MC:Z` against samtools: `samtools sort -n | samtools fixmate -m` writes
/// the mate's CIGAR itself; on the real chrM pairs, in an ungapped and a
/// gapped mode, it finds the same tag on every record fmalign wrote one on,
/// and none elsewhere but `MC:Z:*` (a mate unmapped, where fmalign, as bwa
/// mem, writes none).
#[test]
fn mate_cigars_match_samtools_fixmate() {
    if !have_samtools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(test_data("human_chrM_NC_012920.fa"), d.join("ref.fa")).unwrap();
    run_ok(d, &["index", "-q", "ref.fa"], None);
    let r1 = test_data("human_chrM_ERR2438055_R1.fq.gz");
    let r2 = test_data("human_chrM_ERR2438055_R2.fq.gz");
    let tags = |sam: &[u8]| -> Vec<String> {
        let (_, recs) = parse_sam(sam);
        let mut v: Vec<String> = recs
            .iter()
            .filter_map(|r| {
                r.tag("MC")
                    .filter(|&c| c != "*")
                    .map(|c| format!("{} {} {c}", r.qname, r.flag))
            })
            .collect();
        v.sort();
        v
    };
    for mode in ["-v", "--local"] {
        let mut args = vec!["map", "-q", "-o", "out.bam"];
        if mode == "-v" {
            args.extend_from_slice(&["-v", "2"]);
        } else {
            args.push(mode);
        }
        args.extend_from_slice(&["ref.fa", r1.to_str().unwrap(), r2.to_str().unwrap()]);
        run_ok(d, &args, None);
        samtools(d, &["sort", "-n", "-o", "byname.bam", "out.bam"]);
        samtools(d, &["fixmate", "-m", "byname.bam", "fixed.bam"]);
        let ours = tags(&samtools(d, &["view", "out.bam"]));
        let theirs = tags(&samtools(d, &["view", "fixed.bam"]));
        assert!(ours.len() > 5000, "{mode}: {} records with MC", ours.len());
        assert!(ours == theirs, "{mode}: MC differs from samtools fixmate's");
    }
}
