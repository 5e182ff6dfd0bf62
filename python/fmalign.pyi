"""fmalign: an FM-index read aligner for Python.

Build an index (`build_index`, the same bytes as `fmalign index`), open it
with an `Aligner` and map reads held in memory: one read (`map`), one pair
(`map_pair`), or many on the aligner's threads with the GIL released
(`map_batch`, `map_pair_batch`). Hits carry mappy's attribute names, and
`Alignment.to_sam()` is the record `fmalign map` writes for the same read
with the same options.
"""

import os
from pathlib import Path
from typing import Iterable, List, Literal, Optional, Tuple, Union, final

__all__ = ["build_index", "Aligner", "Alignment", "FmalignError", "__version__"]

__version__: str

_Text = Union[str, bytes]
_Path = Union[str, os.PathLike]

class FmalignError(Exception):
    """An error of the fmalign library: a damaged index, a FASTA it cannot
    use. The message names the file and the record. (A missing file raises
    FileNotFoundError, a bad option or read ValueError.)"""

def build_index(
    fasta: _Path,
    index: Optional[_Path] = None,
    threads: int = 0,
    max_memory: Union[int, str, None] = None,
) -> Path:
    """Build the index of `fasta` (plain, gzip or BGZF FASTA) as
    `fmalign index` does and return its path (`index`, or fasta + ".fmi").

    threads: 0 uses every CPU. max_memory: bytes or a size such as "4G"
    (default: 90% of the available memory); a larger build runs in parts.
    No progress is shown; the FASTA is never overwritten."""

@final
class Alignment:
    """One alignment of a read (mappy's attribute names). Small: the
    alignments of one call share its records and reads, which stay in
    memory while any of them is kept."""

    ctg: str
    """Contig name."""
    ctg_len: int
    """Contig length."""
    r_st: int
    """0-based start on the contig."""
    r_en: int
    """0-based end on the contig (exclusive)."""
    q_st: int
    """0-based start on the read, in the read's own (forward) coordinates."""
    q_en: int
    """0-based end on the read (exclusive)."""
    strand: int
    """+1 forward, -1 reverse."""
    mapq: int
    """Mapping quality."""
    NM: int
    """Edit distance (NM:i)."""
    MD: str
    """MD:Z."""
    score: Optional[int]
    """Alignment score (AS:i)."""
    read_num: int
    """1 or 2: which mate of a pair (1 for a single read)."""
    flag: int
    """SAM FLAG."""
    name: str
    """The read's name (QNAME)."""
    @property
    def cigar_str(self) -> str:
        """The CIGAR, e.g. "5S95M"."""
    @property
    def cigar(self) -> List[List[int]]:
        """The CIGAR as [length, op] pairs, ops as in BAM (M 0, I 1, D 2, S 4)."""
    @property
    def is_primary(self) -> bool:
        """Neither secondary nor supplementary."""
    @property
    def is_secondary(self) -> bool:
        """FLAG 0x100."""
    @property
    def is_supplementary(self) -> bool:
        """FLAG 0x800: another part of a chimeric read."""
    def to_sam(self) -> str:
        """The SAM record `fmalign map` writes for this alignment (no newline)."""

@final
class Aligner:
    """Maps reads against one index with one set of options, as `fmalign map`.

    index: an index file, or the FASTA it was built from. Aligners of one
    index in one process share one copy of it.
    mode: "local" (bwa mem's scores; the default), "end-to-end" (bowtie2's)
    or "ungapped" (bowtie's -v K with K = mismatches; 0: exact matches).
    threads: 0 uses every CPU. k: up to k alignments per read (-k); all:
    every alignment (-a); strata: only the best stratum (--strata);
    split_secondary: -M. Pairs: orientation "fr", "rf" or "ff"; min_insert
    and max_insert (-I/-X) give the proper-pair window, otherwise the first
    call of map_pair_batch or map_pair estimates it from its pairs (0..500
    from fewer than 20 uniquely mapped pairs). read_group: the ID written as
    RG:Z by Alignment.to_sam(). mmap: map the index file rather than read
    it into memory (the CLI's way, huge pages where it can): one copy in
    the page cache for every process on the machine, at some speed; the
    file must not change while it is open.
    """

    def __new__(
        cls,
        index: _Path,
        mode: Literal["local", "end-to-end", "ungapped"] = "local",
        mismatches: int = 0,
        threads: int = 0,
        k: Optional[int] = None,
        all: bool = False,
        strata: bool = False,
        split_secondary: bool = False,
        orientation: Literal["fr", "rf", "ff"] = "fr",
        min_insert: Optional[int] = None,
        max_insert: Optional[int] = None,
        read_group: Optional[str] = None,
        mmap: bool = False,
    ) -> "Aligner": ...
    @property
    def seq_names(self) -> List[str]:
        """The contigs' names, in the reference's order."""
    def seq(self, name: str, start: int = 0, end: Optional[int] = None) -> Optional[str]:
        """Reference bases of `name` over [start, end), upper case, N in
        ambiguous runs; None for an unknown name."""
    @property
    def mode(self) -> str: ...
    @property
    def mismatches(self) -> int: ...
    @property
    def threads(self) -> int: ...
    @property
    def index(self) -> Path:
        """The index file mapped against."""
    def map(
        self, seq: _Text, qual: Optional[_Text] = None, name: Optional[_Text] = None
    ) -> List[Alignment]:
        """The alignments of one read (empty when it does not map), primary first."""
    def map_pair(
        self,
        seq1: _Text,
        seq2: _Text,
        qual1: Optional[_Text] = None,
        qual2: Optional[_Text] = None,
        name: Optional[_Text] = None,
    ) -> List[Alignment]:
        """The alignments of a pair: mate 1's, then mate 2's (see read_num)."""
    def map_batch(
        self, reads: Iterable[Tuple[Optional[_Text], _Text, Optional[_Text]]]
    ) -> List[List[Alignment]]:
        """Map (name, seq, qual) reads on the aligner's threads, GIL released;
        one list of alignments per read, in read order."""
    def map_pair_batch(
        self,
        pairs: Iterable[
            Tuple[Optional[_Text], _Text, Optional[_Text], _Text, Optional[_Text]]
        ],
    ) -> List[List[Alignment]]:
        """Map (name, seq1, qual1, seq2, qual2) pairs as `fmalign map R1 R2`;
        one list per pair (mate 1's alignments, then mate 2's)."""
