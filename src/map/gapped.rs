//! The gapped modes (`--local`, the default, and `--end-to-end`) for the
//! batch driver: each read's alignments ([`super::extend`]); pairs rescued
//! and paired ([`super::mates`]); primary, MAPQ, XS, XA and a chimeric
//! read's supplementary part ([`super::select`]) → [`Record`]s.

use std::ops::Range;

use crate::align::{Mode, Scoring};
use crate::index::Index;
use crate::pair::{Orientation, Window};
use crate::read::ReadView;
use crate::sam::{self, Aligned};

use super::batch::{Found, MapMode, PairWritten};
use super::config::{MapConfig, PairConfig, Report};
use super::extend::{Exhaustive, align_reads};
use super::find::name_hash;
use super::mates::{PairChoice, choose_pair, pair_weak, rescue, unique_fragment};
use super::record::{Cigar, Mate, Record, Records, Tags};
use super::select::{primary_of, same_part, second_of, single_mapq, supplementary};

/// A gapped mode over one index.
pub(super) struct Gapped<'a> {
    pub(super) index: &'a Index,
    pub(super) cfg: &'a MapConfig,
    pub(super) mode: Mode,
}

/// A read's alignments, best first, and what the exhaustive search of a
/// short read found.
impl Found for (Vec<Aligned>, Option<Exhaustive>) {
    fn count(&self) -> u64 {
        self.0.len() as u64
    }
}

impl MapMode for Gapped<'_> {
    type Found = (Vec<Aligned>, Option<Exhaustive>);

    fn find(&self, reads: &[ReadView<'_>], at: &[Range<usize>]) -> (Vec<Self::Found>, u64) {
        let fm = self.index.fm();
        // Mates of pairs, each reported by its best alignment: fewer rows
        // of repeated seeds located (`-k`/`-a` want the other copies).
        let few_rows = at.len() > 1 && self.cfg.report == Report::Best;
        (align_reads(self.index, &fm, self.mode, reads, few_rows), 0)
    }

    fn unique_fragment(
        &self,
        (_, a1): (&ReadView<'_>, &Self::Found),
        (_, a2): (&ReadView<'_>, &Self::Found),
        o: Orientation,
    ) -> Option<u64> {
        unique_fragment(&a1.0, &a2.0, o)
    }

    fn write_single(
        &self,
        out: &mut Records<'_>,
        read: &ReadView<'_>,
        (alns, ex): Self::Found,
    ) -> usize {
        if alns.is_empty() {
            out.push(&Record::unmapped(read, None));
            return 0;
        }
        let chosen = primary_of(&alns, name_hash(read.name));
        let q = single_mapq(self.mode, read.seq.len(), &alns, chosen, ex.as_ref());
        let layout = &self.index.layout;
        write_read(
            out, read, &alns, chosen, q, self.mode, self.cfg, layout, None,
        )
    }

    fn write_pair(
        &self,
        out: &mut Records<'_>,
        (r1, (mut a1, e1)): (&ReadView<'_>, Self::Found),
        (r2, (mut a2, e2)): (&ReadView<'_>, Self::Found),
        pairing: &PairConfig,
        w: Window,
    ) -> PairWritten {
        let (index, mode, o) = (self.index, self.mode, pairing.orientation);
        if !a1.is_empty() {
            rescue(index, mode, &a1, &mut a2, r2, o, w, true);
        }
        if !a2.is_empty() {
            rescue(index, mode, &a2, &mut a1, r1, o, w, false);
        }
        let hash = name_hash(r1.name);
        let lens = (r1.seq.len(), r2.seq.len());
        let ex = [e1.as_ref(), e2.as_ref()];
        let mut c = choose_pair(mode, [&a1, &a2], lens, ex, (o, w), hash);
        // A short mate under the minimum counts only in a proper pair.
        if let Some([b1, b2]) = pair_weak(index, mode, [&a1, &a2], [r1, r2], o, w) {
            let d = choose_pair(mode, [&b1, &b2], lens, ex, (o, w), hash);
            if d.proper {
                (a1, a2, c) = (b1, b2, d);
            }
        }
        let (mate1, mate2) = self.write_mates(out, (r1, &a1), (r2, &a2), &c, o, w);
        PairWritten {
            mate1,
            mate2,
            proper: c.proper,
            pairs_found: c.pairs_found,
            found: (a1.len() as u64, a2.len() as u64),
        }
    }
}

impl Gapped<'_> {
    /// The records of both mates given the pairing's choice.
    fn write_mates(
        &self,
        out: &mut Records<'_>,
        (r1, a1): (&ReadView<'_>, &[Aligned]),
        (r2, a2): (&ReadView<'_>, &[Aligned]),
        c: &PairChoice,
        o: Orientation,
        w: Window,
    ) -> (usize, usize) {
        let p1 = c.primary[0].map(|k| &a1[k]);
        let p2 = c.primary[1].map(|k| &a2[k]);
        let layout = &self.index.layout;
        // 0x2 is added per record: see `mate_fields`.
        let flags = |first: bool, mate: Option<&Aligned>| -> u16 {
            0x1 | if first { 0x40 } else { 0x80 }
                | match mate {
                    None => 0x8,
                    Some(m) if m.rev => 0x20,
                    Some(_) => 0,
                }
        };
        let mut write = |read: &ReadView<'_>,
                         alns: &[Aligned],
                         own: Option<usize>,
                         q: u8,
                         mate: Option<&Aligned>,
                         first: bool|
         -> usize {
            let flag = flags(first, mate);
            let Some(c_own) = own else {
                out.push(&Record::unmapped(
                    read,
                    Some(Mate {
                        flag,
                        next: mate.map(|m| (m.contig, m.pos)),
                        tlen: 0,
                        mc: mate.map_or(Cigar::None, |m| Cigar::Ops(&m.cigar)),
                    }),
                ));
                return 0;
            };
            let own_primary = &alns[c_own];
            // 0x2 on the primary (and its supplementary part) of a proper
            // pair, and on a secondary only when it and the mate's primary
            // would be a proper pair themselves.
            let proper_at = |a: &Aligned, m: &Aligned, secondary: bool| {
                c.proper && (!secondary || w.fits(super::mates::fragment_of(first, a, m, o)))
            };
            let mate_fields = |a: &Aligned, secondary: bool| match mate {
                Some(m) => Mate {
                    flag: flag | if proper_at(a, m, secondary) { 0x2 } else { 0 },
                    next: Some((m.contig, m.pos)),
                    tlen: if m.contig == a.contig {
                        crate::pair::tlen(a.pos, a.span(), m.pos, m.span(), first)
                    } else {
                        0
                    },
                    mc: Cigar::Ops(&m.cigar),
                },
                // Mate unmapped: placed at this read's primary.
                None => Mate {
                    flag,
                    next: Some((own_primary.contig, own_primary.pos)),
                    tlen: 0,
                    mc: Cigar::None,
                },
            };
            write_read(
                out,
                read,
                alns,
                c_own,
                q,
                self.mode,
                self.cfg,
                layout,
                Some(&mate_fields),
            )
        };
        let mate1 = write(r1, a1, c.primary[0], c.mapq[0], p2, true);
        let mate2 = write(r2, a2, c.primary[1], c.mapq[1], p1, false);
        (mate1, mate2)
    }
}

/// A mate's pair fields at one of its alignments, a secondary one (`true`)
/// or not.
type MateAt<'f, 'm> = dyn Fn(&Aligned, bool) -> Mate<'m> + 'f;

/// The record of alignment `a` of `read`.
fn aligned<'r>(
    read: &ReadView<'r>,
    a: &'r Aligned,
    flag: u16,
    mapq: u8,
    mate: Option<&Mate<'r>>,
    tags: Tags<'r>,
) -> Record<'r> {
    Record {
        name: read.name,
        flag: (if a.rev { 16 } else { 0 }) | flag | mate.map_or(0, |m| m.flag),
        place: Some((a.contig, a.pos)),
        mapq,
        cigar: Cigar::Ops(&a.cigar),
        next: mate.and_then(|m| m.next),
        tlen: mate.map_or(0, |m| m.tlen),
        seq: read.seq,
        qual: read.qual,
        tags: Tags {
            nm: Some(a.nm),
            md: Some(&a.md),
            score: Some(a.score),
            mc: mate.map_or(Cigar::None, |m| m.mc),
            ..tags
        },
    }
}

/// The records of one read given its alignments, the one chosen as primary
/// and its MAPQ, and (for a mate) its pair fields at an alignment, a
/// secondary one (`true`) or not; returns how many are mapped.
#[allow(clippy::too_many_arguments)]
fn write_read<'m>(
    out: &mut Records<'_>,
    read: &ReadView<'m>,
    alns: &'m [Aligned],
    chosen: usize,
    mapq: u8,
    mode: Mode,
    cfg: &MapConfig,
    layout: &crate::reference::Layout,
    mate: Option<&MateAt<'_, 'm>>,
) -> usize {
    let len = read.seq.len() as u32;
    let p = &alns[chosen];
    let (xs, _) = second_of(alns, chosen, len);
    let supp = (mode == Mode::Local && cfg.report == Report::Best)
        .then(|| supplementary(alns, chosen, len))
        .flatten();
    let supp_q = supp.map(|k| single_mapq(mode, len as usize, alns, k, None).min(mapq));
    let mut sa = Vec::new();
    if let (Some(k), Some(q)) = (supp, supp_q) {
        sam::push_sa_entry(&mut sa, &alns[k], q, layout);
    }
    // XA: the other alignments within a fifth of the score range of the
    // primary, when there are at most --max-xa of them (default mode only).
    let sc = Scoring::of(mode);
    let range = sc.perfect(len as usize) - Scoring::min_score(mode, len as usize);
    let near: Vec<&Aligned> = alns
        .iter()
        .enumerate()
        .filter(|&(k, a)| {
            k != chosen
                && Some(k) != supp
                && same_part(a, p, len)
                && 5 * (p.score - a.score) <= range
        })
        .map(|(_, a)| a)
        .collect();
    let mut xa = Vec::new();
    if cfg.report == Report::Best && near.len() <= cfg.max_xa {
        for a in near {
            sam::push_xa_entry(&mut xa, a, layout);
        }
    }
    let m = mate.map(|f| f(p, false));
    let tags = Tags {
        xs,
        sa: &sa,
        xa: &xa,
        ..Tags::default()
    };
    out.push(&aligned(read, p, 0, mapq, m.as_ref(), tags));
    let mut written = 1;
    if let (Some(k), Some(q)) = (supp, supp_q) {
        let mut sa = Vec::new();
        sam::push_sa_entry(&mut sa, p, mapq, layout);
        let a = &alns[k];
        // A part of the primary: the pair's flags, as bwa mem.
        let m = mate.map(|f| f(a, false));
        // -M (bwa's): the shorter part as secondary, for tools that predate
        // supplementary records (old Picard).
        let flag = if cfg.split_secondary { 0x100 } else { 0x800 };
        let tags = Tags {
            sa: &sa,
            ..Tags::default()
        };
        out.push(&aligned(read, a, flag, q, m.as_ref(), tags));
        written += 1;
    }
    let extra = match cfg.report {
        Report::Best => 0,
        Report::UpTo(n) => n.saturating_sub(1),
        Report::All => usize::MAX,
    };
    for (_, a) in alns
        .iter()
        .enumerate()
        .filter(|&(k, _)| k != chosen)
        .take(extra)
    {
        let m = mate.map(|f| f(a, true));
        out.push(&aligned(read, a, 0x100, 0, m.as_ref(), Tags::default()));
        written += 1;
    }
    written
}
