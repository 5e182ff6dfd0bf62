"""Shared fixtures: the CLI binary (the oracle), indexes built by the module
and by the CLI, and read sets (the real chrM pairs of test_data, wgsim
pairs from E. coli)."""

import gzip
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import fmalign

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "test_data"


def cli_binary() -> Path:
    """The `fmalign` command line: FMALIGN_BIN, or the one cargo built."""
    given = os.environ.get("FMALIGN_BIN")
    if given:
        return Path(given)
    for profile in ("release", "debug"):
        p = ROOT / "target" / profile / "fmalign"
        if p.exists():
            return p
    raise RuntimeError(
        "no fmalign binary: build it (cargo build --release) or set FMALIGN_BIN"
    )


def read_fastq(path):
    """(name, seq, qual) of every record, name up to the first whitespace."""
    opener = gzip.open if str(path).endswith(".gz") else open
    out = []
    with opener(path, "rt") as f:
        while True:
            h = f.readline()
            if not h:
                return out
            seq = f.readline().rstrip("\n")
            f.readline()
            qual = f.readline().rstrip("\n")
            out.append((h[1:].split()[0], seq, qual))


def write_fastq(path, reads):
    with open(path, "w") as f:
        for name, seq, qual in reads:
            f.write(f"@{name}\n{seq}\n+\n{qual}\n")


class Cli:
    def __init__(self, binary):
        self.binary = binary

    def run(self, *args, cwd=None):
        r = subprocess.run(
            [str(self.binary), *map(str, args)], capture_output=True, cwd=cwd
        )
        assert r.returncode == 0, r.stderr.decode()
        return r.stdout.decode()

    def sam(self, *args):
        """The records of `fmalign map ARGS` (headers left out)."""
        out = self.run("map", "-q", *args)
        return [l for l in out.split("\n") if l and not l.startswith("@")]


@pytest.fixture(scope="session")
def cli():
    return Cli(cli_binary())


@pytest.fixture(scope="session")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("fmalign-py")


@pytest.fixture(scope="session")
def chrm(work):
    """The chrM reference, its index (built by the module) and the real pairs."""
    fa = work / "chrM.fa"
    shutil.copy(DATA / "human_chrM_NC_012920.fa", fa)
    index = fmalign.build_index(fa, threads=2)
    r1, r2 = work / "m1.fq", work / "m2.fq"
    one = read_fastq(DATA / "human_chrM_ERR2438055_R1.fq.gz")[:3000]
    two = read_fastq(DATA / "human_chrM_ERR2438055_R2.fq.gz")[:3000]
    write_fastq(r1, one)
    write_fastq(r2, two)
    return {"fa": fa, "index": Path(index), "r1": r1, "r2": r2, "one": one, "two": two}


@pytest.fixture(scope="session")
def ecoli(work):
    """E. coli K-12, its index, and 2,000 wgsim pairs of 100 bases
    (wgsim's default errors, mutations and indels)."""
    if shutil.which("wgsim") is None:
        raise RuntimeError("wgsim (Debian's samtools package) is needed")
    fa = work / "ecoli.fa"
    with gzip.open(DATA / "ecoli_K12_MG1655.fa.gz", "rb") as src, open(fa, "wb") as dst:
        shutil.copyfileobj(src, dst)
    index = fmalign.build_index(fa, work / "ecoli.fmi", threads=2)
    r1, r2 = work / "e1.fq", work / "e2.fq"
    subprocess.run(
        ["wgsim", "-S", "7", "-N", "2000", "-1", "100", "-2", "100", str(fa), str(r1), str(r2)],
        check=True,
        capture_output=True,
    )
    return {
        "fa": fa,
        "index": Path(index),
        "r1": r1,
        "r2": r2,
        "one": read_fastq(r1),
        "two": read_fastq(r2),
    }
