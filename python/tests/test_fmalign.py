"""The Python module against the `fmalign` command line, its oracle: every
mode, `map`, `map_pair`, `map_batch` and `map_pair_batch` give the records
the CLI writes for the same reads (compared field by field, and each hit's
attributes recomputed from the SAM fields); bad input raises and leaves the
interpreter running; aligners in threads agree with one."""

import os
import random
import re
import subprocess
import sys
import threading

import pytest

import fmalign

# (name, Aligner keywords, the CLI's options)
MODES = [
    ("local", {}, []),
    ("end-to-end", {"mode": "end-to-end"}, ["--end-to-end"]),
    ("exact", {"mode": "ungapped"}, ["-v", "0"]),
    ("ungapped-2", {"mode": "ungapped", "mismatches": 2}, ["-v", "2"]),
    ("local-k3", {"k": 3}, ["-k", "3"]),
]
MODE_IDS = [m[0] for m in MODES]


def grouped(lines):
    """The CLI's mapped records per read (or pair), in input order: records
    of one read are consecutive and share its QNAME; unmapped ones (flag
    0x4) are left out, as the module returns no hit for them."""
    groups, last = [], None
    for line in lines:
        name = line.split("\t", 1)[0]
        if name != last:
            groups.append([])
            last = name
        if int(line.split("\t")[1]) & 0x4 == 0:
            groups[-1].append(line)
    return groups


def ref_span(cigar):
    return sum(int(n) for n, op in re.findall(r"(\d+)([MIDNSHP=X])", cigar) if op in "MDN=X")


def check_fields(hit, line, seq_len):
    """The hit's attributes against the SAM record, recomputed independently."""
    f = line.split("\t")
    tags = dict((t[:2], t[5:]) for t in f[11:])
    flag = int(f[1])
    assert hit.to_sam() == line
    assert hit.name == f[0]
    assert hit.flag == flag
    assert hit.ctg == f[2]
    assert hit.r_st == int(f[3]) - 1
    assert hit.r_en == hit.r_st + ref_span(f[5])
    assert hit.mapq == int(f[4])
    assert hit.cigar_str == f[5]
    codes = {"M": 0, "I": 1, "D": 2, "S": 4}
    assert hit.cigar == [[int(n), codes[op]] for n, op in re.findall(r"(\d+)([MIDS])", f[5])]
    assert hit.strand == (-1 if flag & 0x10 else 1)
    assert hit.is_primary == (flag & 0x900 == 0)
    assert hit.is_secondary == bool(flag & 0x100)
    assert hit.is_supplementary == bool(flag & 0x800)
    assert hit.read_num == (2 if flag & 0x80 else 1)
    assert hit.NM == int(tags["NM"])
    assert hit.MD == tags.get("MD", "")
    assert hit.score == (int(tags["AS"]) if "AS" in tags else None)
    lead = re.match(r"^(\d+)S", f[5])
    trail = re.search(r"(\d+)S$", f[5])
    lead = int(lead.group(1)) if lead else 0
    trail = int(trail.group(1)) if trail else 0
    if flag & 0x10:
        assert (hit.q_st, hit.q_en) == (trail, seq_len - lead)
    else:
        assert (hit.q_st, hit.q_en) == (lead, seq_len - trail)


def assert_same(hits, lines, lens):
    assert len(hits) == len(lines)
    for h, group, n in zip(hits, lines, lens):
        assert [x.to_sam() for x in h] == group
        for x, line in zip(h, group):
            check_fields(x, line, n[x.read_num - 1])


@pytest.fixture(params=["chrm", "ecoli"])
def data(request):
    return request.getfixturevalue(request.param)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_single_reads_as_the_cli(cli, data, mode):
    _, kw, flags = mode
    aligner = fmalign.Aligner(data["index"], threads=2, **kw)
    lines = grouped(cli.sam(*flags, "-t", "2", data["index"], data["r1"]))
    lens = [(len(s),) for _, s, _ in data["one"]]
    batch = aligner.map_batch(data["one"])
    assert_same(batch, lines, lens)
    # Something to compare: even exact matching maps a tenth of these.
    assert sum(1 for h in batch if h) > 0.1 * len(batch)
    # One read at a time: the same records.
    one_by_one = [aligner.map(s, q, name=n) for n, s, q in data["one"]]
    assert_same(one_by_one, lines, lens)


def test_hits_outlive_their_batch_and_the_collector_is_left_as_found(chrm):
    """A hit kept after its batch's lists and its aligner are gone reads the
    same; map_batch leaves the cyclic collector on or off as it found it;
    hits (which refer to no Python object) are not tracked by it."""
    import gc

    aligner = fmalign.Aligner(chrm["index"], threads=2)
    reads = chrm["one"][:500]
    assert gc.isenabled()
    batch = aligner.map_batch(reads)
    assert gc.isenabled()
    kept = [hs[0] for hs in batch if hs][::7]
    assert kept
    want = [(h.to_sam(), h.ctg, h.r_st, h.r_en, h.cigar, h.MD, repr(h)) for h in kept]
    assert not any(gc.is_tracked(h) for h in kept)
    assert gc.is_tracked(batch) and all(gc.is_tracked(hs) for hs in batch)
    del batch, aligner
    gc.collect()
    assert [(h.to_sam(), h.ctg, h.r_st, h.r_en, h.cigar, h.MD, repr(h)) for h in kept] == want
    gc.disable()
    try:
        again = fmalign.Aligner(chrm["index"], threads=2).map_batch(reads)
        assert not gc.isenabled()
        pairs = [(n, s, q, s2, q2) for (n, s, q), (_, s2, q2) in zip(reads, chrm["two"])]
        fmalign.Aligner(chrm["index"], threads=2).map_pair_batch(pairs)
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert [h.to_sam() for hs in again for h in hs] != []


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_pairs_as_the_cli(cli, data, mode):
    _, kw, flags = mode
    # A batch estimates the insert size from its first pairs, as the CLI.
    aligner = fmalign.Aligner(data["index"], threads=2, **kw)
    pairs = [(a[0], a[1], a[2], b[1], b[2]) for a, b in zip(data["one"], data["two"])]
    lens = [(len(a[1]), len(b[1])) for a, b in zip(data["one"], data["two"])]
    lines = grouped(cli.sam(*flags, "-t", "2", data["index"], data["r1"], data["r2"]))
    assert_same(aligner.map_pair_batch(pairs), lines, lens)
    # Pair by pair with the window given, against the CLI given the same.
    given = fmalign.Aligner(data["index"], threads=1, min_insert=50, max_insert=700, **kw)
    lines = grouped(
        cli.sam(*flags, "-I", "50", "-X", "700", data["index"], data["r1"], data["r2"])
    )
    some = range(0, len(pairs), 7)
    hits = [given.map_pair(p[1], p[3], p[2], p[4], name=p[0]) for p in (pairs[i] for i in some)]
    assert_same(hits, [lines[i] for i in some], [lens[i] for i in some])


def test_read_group_and_fasta_as_index(cli, chrm):
    # The FASTA names its index, as for the CLI.
    aligner = fmalign.Aligner(chrm["fa"], threads=2, read_group="s1")
    lines = grouped(cli.sam("-t", "2", "-R", r"@RG\tID:s1\tSM:a", chrm["fa"], chrm["r1"]))
    hits = aligner.map_batch(chrm["one"])
    assert [[x.to_sam() for x in h] for h in hits] == lines
    assert all("\tRG:Z:s1" in x.to_sam() for h in hits for x in h)


def test_settings(chrm):
    a = fmalign.Aligner(str(chrm["index"]), mode="ungapped", mismatches=1, threads=1)
    assert (a.mode, a.mismatches, a.threads) == ("ungapped", 1, 1)
    assert str(a.index) == str(chrm["index"])
    assert a.seq_names == ["chrM"]
    assert fmalign.Aligner(chrm["index"]).mode == "local"


def fasta_records(path):
    recs, name = {}, None
    for line in open(path):
        line = line.strip()
        if line.startswith(">"):
            name = line[1:].split()[0]
            recs[name] = []
        elif line:
            recs[name].append(line)
    return {k: "".join(v).upper() for k, v in recs.items()}


def test_seq_is_the_fasta(chrm, ecoli):
    rng = random.Random(5)
    for d in (chrm, ecoli):
        aligner = fmalign.Aligner(d["index"], threads=1)
        for name, seq in fasta_records(d["fa"]).items():
            # The index keeps ambiguous bases as N.
            want = re.sub("[^ACGT]", "N", seq)
            assert aligner.seq(name) == want
            for _ in range(200):
                s = rng.randrange(0, len(seq))
                e = s + rng.randrange(0, 300)
                assert aligner.seq(name, s, e) == want[s:e]
            assert aligner.seq(name, len(seq) - 5, len(seq) + 100) == want[-5:]
        assert aligner.seq("no-such-contig") is None
    # chrM has an N (position 3107): the test covers a hole.
    assert "N" in fmalign.Aligner(chrm["index"]).seq("chrM")


def test_build_index_is_the_cli_bytes(cli, chrm, work):
    cli.run("index", "-q", "-t", "2", "-p", work / "cli.fmi", chrm["fa"])
    assert (work / "cli.fmi").read_bytes() == chrm["index"].read_bytes()
    # A size as text or bytes bounds the build as --max-memory does.
    for limit in ("64M", 64 << 20):
        out = fmalign.build_index(chrm["fa"], work / "limited.fmi", threads=1, max_memory=limit)
        assert open(out, "rb").read() == chrm["index"].read_bytes()
    with pytest.raises(ValueError, match="more than the limit of 1.0 MiB"):
        fmalign.build_index(chrm["fa"], work / "limited.fmi", max_memory="1M")
    with pytest.raises(ValueError):
        fmalign.build_index(chrm["fa"], work / "limited.fmi", max_memory="lots")


def test_bad_input_raises(chrm, work):
    with pytest.raises(FileNotFoundError, match="no-such.fmi"):
        fmalign.Aligner(work / "no-such.fmi")
    with pytest.raises(FileNotFoundError):
        fmalign.build_index(work / "no-such.fa")
    # The FASTA named as the index: refused, left as it was.
    before = chrm["fa"].read_bytes()
    with pytest.raises(ValueError, match="reference"):
        fmalign.build_index(chrm["fa"], chrm["fa"])
    assert chrm["fa"].read_bytes() == before
    # A damaged index: one byte changed, or cut short.
    data = bytearray(chrm["index"].read_bytes())
    data[len(data) // 2] ^= 0x40
    (work / "flipped.fmi").write_bytes(bytes(data))
    with pytest.raises(fmalign.FmalignError, match="flipped.fmi"):
        fmalign.Aligner(work / "flipped.fmi")
    (work / "short.fmi").write_bytes(bytes(data[: len(data) // 3]))
    with pytest.raises(fmalign.FmalignError, match="short.fmi"):
        fmalign.Aligner(work / "short.fmi")
    (work / "notdna.fa").write_text(">x\nACGT\x01GT\n")
    with pytest.raises((fmalign.FmalignError, ValueError)):
        fmalign.build_index(work / "notdna.fa")
    aligner = fmalign.Aligner(chrm["index"], threads=1)
    with pytest.raises(ValueError, match="sequence"):
        aligner.map("ACGT12ACGT")
    with pytest.raises(ValueError, match="qualities"):
        aligner.map("ACGTACGT", "IIII")
    with pytest.raises(ValueError, match="read 2 of the batch"):
        aligner.map_batch([("a", "ACGT", None), ("b", "AC GT", None)])
    with pytest.raises(ValueError, match="tuple"):
        aligner.map_batch([("a",)])
    with pytest.raises(ValueError, match="tuple"):
        aligner.map_pair_batch([("a", "ACGT", None)])
    with pytest.raises(ValueError):
        fmalign.Aligner(chrm["index"], mode="global")
    with pytest.raises(ValueError):
        fmalign.Aligner(chrm["index"], mode="ungapped", mismatches=4)
    with pytest.raises(ValueError):
        fmalign.Aligner(chrm["index"], orientation="xy")
    with pytest.raises(ValueError):
        fmalign.Aligner(chrm["index"], min_insert=800, max_insert=100)
    # After all that, the aligner still maps.
    s = aligner.seq("chrM", 2000, 2100)
    assert [(h.r_st, h.cigar_str) for h in aligner.map(s)] == [(2000, "100M")]


def test_errors_never_crash_the_interpreter(chrm, work):
    script = f"""
import fmalign
for f in [lambda: fmalign.Aligner({str(work / 'flipped.fmi')!r}),
          lambda: fmalign.Aligner({str(chrm['index'])!r}).map('@@@'),
          lambda: fmalign.Aligner({str(chrm['index'])!r}).map_batch([None]),
          lambda: fmalign.Aligner({str(chrm['index'])!r}).map_batch(5),
          lambda: fmalign.build_index('/')]:
    try:
        f()
    except Exception as e:
        print(type(e).__name__)
print("alive")
"""
    data = bytearray(chrm["index"].read_bytes())
    data[100] ^= 1
    (work / "flipped.fmi").write_bytes(bytes(data))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = r.stdout.split()
    assert out[-1] == "alive" and len(out) == 6, r.stdout


def test_aligners_in_threads_agree_with_one(ecoli):
    reads = ecoli["one"]
    want = [[x.to_sam() for x in h] for h in fmalign.Aligner(ecoli["index"], threads=2).map_batch(reads)]
    got, errors = {}, []
    shared = fmalign.Aligner(ecoli["index"], threads=1)

    def work(i):
        try:
            # Half the threads open their own aligner (the index is shared;
            # one maps the file instead), half use one aligner together.
            own = fmalign.Aligner(ecoli["index"], threads=1, mmap=i == 3)
            a = own if i % 2 else shared
            chunk = reads[i * 250 : (i + 1) * 250] if i < 4 else reads
            got[i] = [[x.to_sam() for x in h] for h in a.map_batch(chunk)]
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(4):
        assert got[i] == want[i * 250 : (i + 1) * 250]
    assert got[4] == want and got[5] == want


def test_stubs_match_the_module():
    """fmalign.pyi against the compiled module (mypy's stubtest): every
    name, signature and default as the module has them."""
    if not os.environ.get("CI"):
        pytest.importorskip("mypy", reason="stubtest needs mypy (pip install mypy)")
    r = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "fmalign", "--ignore-missing-stub"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr
