//! What the read-side modules share: a read as parsed ([`ReadView`]), one
//! alignment of it ([`Hit`]), its [`Strand`] and the name its mates share
//! ([`base_name`]). Below `fastq` (which yields reads), `pair` (which pairs
//! hits), `sam` (which writes them) and `map` (which finds them).

/// One read as parsed.
#[derive(Clone, Copy, Debug)]
pub struct ReadView<'a> {
    /// QNAME (the FASTQ name up to the first whitespace).
    pub name: &'a [u8],
    /// Bases as given.
    pub seq: &'a [u8],
    /// Qualities as given; `None` for FASTA input.
    pub qual: Option<&'a [u8]>,
}

impl<'a> ReadView<'a> {
    /// The read under the QNAME it has in SAM: its name without a trailing
    /// `/1` or `/2` ([`base_name`]), for single reads as for mates (as bwa
    /// does), so that the mates of a pair mapped one file at a time keep
    /// one name (Hi-C pairs its reads that way).
    pub fn named_as_in_sam(self) -> ReadView<'a> {
        ReadView {
            name: base_name(self.name),
            ..self
        }
    }
}

/// One alignment to write. Ordered by mismatches first (strata), then
/// reference position and strand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hit {
    /// Substitutions against the read (NM).
    pub nm: u8,
    /// Contig index.
    pub contig: u32,
    /// 0-based leftmost position.
    pub pos: u64,
    /// Reverse strand.
    pub rev: bool,
    /// Position of the leftmost base in the text (the PAC section), for MD.
    pub text_pos: u64,
}

/// The strand of the reference a read (or hit) is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Strand {
    /// As given.
    Forward = 0,
    /// Reverse complemented.
    Reverse = 1,
}

impl Strand {
    /// Both strands, forward first (also the order of hits).
    pub const BOTH: [Strand; 2] = [Strand::Forward, Strand::Reverse];

    /// Whether this is the reverse strand (SAM flag 0x10, [`Hit::rev`]).
    pub fn is_reverse(self) -> bool {
        self == Strand::Reverse
    }
}

/// The name shared by both mates of a pair: `name` without a trailing `/1`
/// or `/2`.
pub fn base_name(name: &[u8]) -> &[u8] {
    match name {
        [rest @ .., b'/', b'1' | b'2'] => rest,
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_names_drop_the_mate_suffix() {
        assert_eq!(base_name(b"r1/1"), b"r1");
        assert_eq!(base_name(b"r1/2"), b"r1");
        assert_eq!(base_name(b"r1/3"), b"r1/3");
        assert_eq!(base_name(b"r1"), b"r1");
        assert_eq!(base_name(b"/1"), b"");
    }
}
