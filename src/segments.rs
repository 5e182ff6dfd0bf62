//! Text position → reference position. The text is the concatenation of the
//! maximal runs of unambiguous bases ("segments") of every contig; a match is
//! reported only if it lies inside one segment, so it never covers an
//! ambiguous base nor spans two contigs.

use crate::reference::Layout;

/// A maximal run of unambiguous bases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// First text position.
    pub text_start: u64,
    /// Number of bases.
    pub len: u64,
    /// Contig index.
    pub contig: u32,
    /// 0-based position of the first base in the contig.
    pub contig_start: u64,
}

/// `text + len`, or an error naming the contig if the text length would
/// overflow (only a crafted layout gets there).
fn advance(text: u64, len: u64, contig: &str) -> Result<u64, String> {
    text.checked_add(len)
        .ok_or_else(|| format!("contig {contig} takes the text length past 2^64"))
}

/// All segments, sorted by text position.
#[derive(Clone, Debug, Default)]
pub struct Segments(pub Vec<Segment>);

impl Segments {
    /// Derives the segments from contigs and holes. Returns `Err` with a
    /// description if the layout is inconsistent (holes out of order or out
    /// of range, text offsets that do not add up).
    pub fn new(layout: &Layout) -> Result<Segments, String> {
        let mut segs = Vec::new();
        let mut holes = layout.holes.iter().peekable();
        let mut text = 0u64;
        for (k, contig) in layout.contigs.iter().enumerate() {
            if contig.text_offset != text {
                return Err(format!(
                    "contig {} has text offset {}, expected {text}",
                    contig.name, contig.text_offset
                ));
            }
            let mut cursor = 0u64;
            while let Some(h) = holes.next_if(|h| h.contig as usize == k) {
                if h.start < cursor
                    || h.len == 0
                    || h.start.saturating_add(h.len) > contig.len
                    || (h.start == cursor && cursor > 0)
                {
                    return Err(format!(
                        "ambiguous run at {}:{} is out of order or out of range",
                        contig.name, h.start
                    ));
                }
                if h.start > cursor {
                    segs.push(Segment {
                        text_start: text,
                        len: h.start - cursor,
                        contig: k as u32,
                        contig_start: cursor,
                    });
                    text = advance(text, h.start - cursor, &contig.name)?;
                }
                cursor = h.start + h.len;
            }
            if contig.len > cursor {
                segs.push(Segment {
                    text_start: text,
                    len: contig.len - cursor,
                    contig: k as u32,
                    contig_start: cursor,
                });
                text = advance(text, contig.len - cursor, &contig.name)?;
            }
        }
        if holes.next().is_some() {
            return Err("ambiguous runs reference a missing contig or are out of order".into());
        }
        Ok(Segments(segs))
    }

    /// Total text length the segments cover.
    pub fn text_len(&self) -> u64 {
        self.0.last().map_or(0, |s| s.text_start + s.len)
    }

    /// The contig and 0-based contig position of a match of `len` bases at
    /// text position `pos`, or `None` if it runs past its segment.
    #[inline]
    pub fn resolve(&self, pos: u64, len: u64) -> Option<(u32, u64)> {
        let k = self
            .0
            .partition_point(|s| s.text_start <= pos)
            .checked_sub(1)?;
        let s = &self.0[k];
        // checked: a crafted index's locate can return u64::MAX.
        (pos.checked_add(len)? <= s.text_start + s.len)
            .then(|| (s.contig, s.contig_start + (pos - s.text_start)))
    }

    /// The pieces of a match of `len` bases at text position `pos` that lie
    /// in one segment each, in text order: `(offset into the match, length,
    /// contig, 0-based contig position)`. A match within one segment is one
    /// piece; one that runs past the text (a crafted index) ends there.
    pub fn pieces(&self, pos: u64, len: u64) -> impl Iterator<Item = (u64, u64, u32, u64)> + '_ {
        let end = pos.saturating_add(len);
        let mut k = self
            .0
            .partition_point(|s| s.text_start <= pos)
            .checked_sub(1);
        let mut at = pos;
        std::iter::from_fn(move || {
            let s = &self.0[k?];
            let s_end = s.text_start + s.len;
            if at >= end || at >= s_end {
                return None;
            }
            let piece_end = end.min(s_end);
            let piece = (
                at - pos,
                piece_end - at,
                s.contig,
                s.contig_start + (at - s.text_start),
            );
            at = piece_end;
            k = k.map(|k| k + 1).filter(|&k| k < self.0.len());
            Some(piece)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{Contig, Hole};
    use crate::scan::read_fasta_from;
    use std::path::Path;

    #[test]
    fn resolve_respects_holes_and_contigs() {
        let r = read_fasta_from(
            &b">a\nNACNNGTN\n>b\nT\n>c\nNN\n>d\nGG\n"[..],
            Path::new("t"),
        )
        .unwrap();
        let s = Segments::new(&r.layout).unwrap();
        assert_eq!(s.text_len(), r.text.len() as u64);
        assert_eq!(s.0.len(), 4);
        assert_eq!(s.resolve(0, 2), Some((0, 1)));
        assert_eq!(s.resolve(1, 1), Some((0, 2)));
        assert_eq!(s.resolve(1, 2), None); // would cover the NN
        // The same match in pieces: AC of contig a, GT after its NN.
        let p: Vec<_> = s.pieces(1, 2).collect();
        assert_eq!(p, vec![(0, 1, 0, 2), (1, 1, 0, 5)]);
        assert_eq!(s.pieces(0, 2).collect::<Vec<_>>(), vec![(0, 2, 0, 1)]);
        // Across contigs b (T) into d (GG), past c's Ns; past the text's end.
        let t = s.text_len();
        assert_eq!(
            s.pieces(3, 3).collect::<Vec<_>>(),
            vec![(0, 1, 0, 6), (1, 1, 1, 0), (2, 1, 3, 0)]
        );
        assert_eq!(s.pieces(t - 1, 5).collect::<Vec<_>>(), vec![(0, 1, 3, 1)]);
        assert_eq!(s.pieces(t, 1).count(), 0);
        assert_eq!(s.resolve(2, 2), Some((0, 5)));
        assert_eq!(s.resolve(3, 2), None); // would span contigs a and b
        assert_eq!(s.resolve(4, 1), Some((1, 0)));
        assert_eq!(s.resolve(5, 2), Some((3, 0)));
        assert_eq!(s.resolve(6, 2), None);
        assert_eq!(s.resolve(u64::MAX, 2), None);
    }

    #[test]
    fn layout_past_u64_is_an_error() {
        // Found by the `index` fuzz target: two contigs whose lengths add up
        // past 2^64 overflowed the text counter.
        let contig = |name: &str, len, text_offset| Contig {
            name: name.into(),
            len,
            md5: [0; 16],
            text_offset,
        };
        for holes in [
            vec![],
            vec![Hole {
                contig: 1,
                start: 1,
                len: 1,
            }],
        ] {
            let layout = Layout {
                contigs: vec![contig("a", u64::MAX - 1, 0), contig("b", 5, u64::MAX - 1)],
                holes,
            };
            let err = Segments::new(&layout).unwrap_err();
            assert!(err.contains("contig b"), "{err}");
        }
    }
}
