//! The ungapped modes (`-v K`, exact with 0) for the batch driver: a
//! chunk's hits ([`super::find`]), then each read's or pair's records
//! (primary, MAPQ, `-k`/`-a`/`--strata`, XA, mate fields) as [`Record`]s.

use std::ops::Range;

use crate::dna::{self, COMPLEMENT, packed_base};
use crate::index::Index;
use crate::kmer::KmerTable;
use crate::pair::{Orientation, Window};
use crate::read::{Hit, ReadView};
use crate::search::BiIndex;

use super::batch::{Found, MapMode, PairWritten};
use super::config::{MapConfig, PairConfig, Report};
use super::find::{BatchHits, ReadHits, chunk_hits, name_hash};
use super::record::{Cigar, Mate, Record, Records, Tags, push_int};
use super::select::{PairCtx, Shown, mapq, shown};

/// The ungapped modes over one index.
pub(super) struct Ungapped<'a> {
    pub(super) index: &'a Index,
    pub(super) table: &'a KmerTable,
    pub(super) cfg: &'a MapConfig,
    /// The batch's hits from the device, if it searched them.
    pub(super) pre: Option<&'a BatchHits>,
}

impl Found for ReadHits {
    fn count(&self) -> u64 {
        ReadHits::count(self)
    }
}

impl MapMode for Ungapped<'_> {
    type Found = ReadHits;

    fn find(&self, reads: &[ReadView<'_>], at: &[Range<usize>]) -> (Vec<ReadHits>, u64) {
        let bi = BiIndex {
            fwd: self.index.fm(),
            rev: self.index.rev_fm(),
        };
        let seqs: Vec<&[u8]> = reads.iter().map(|r| r.seq).collect();
        let names: Vec<&[u8]> = reads.iter().map(|r| r.name).collect();
        let pre = self.pre.map(|p| p.chunk(at));
        let found = chunk_hits(&seqs, &names, &bi, self.index, self.table, self.cfg, pre);
        (found.hits, found.located)
    }

    fn unique_fragment(
        &self,
        (r1, f1): (&ReadView<'_>, &ReadHits),
        (r2, f2): (&ReadView<'_>, &ReadHits),
        o: Orientation,
    ) -> Option<u64> {
        // The one best hit of a mate, if it has exactly one.
        let unique = |h: &ReadHits| match h {
            ReadHits::All(v) if !v.is_empty() && v.get(1).is_none_or(|x| x.nm > v[0].nm) => {
                Some(v[0])
            }
            _ => None,
        };
        let (a, b) = (unique(f1)?, unique(f2)?);
        crate::pair::fragment(&a, r1.seq.len() as u64, &b, r2.seq.len() as u64, o)
    }

    fn write_single(&self, out: &mut Records<'_>, read: &ReadView<'_>, found: ReadHits) -> usize {
        let sh = shown(read, &found, self.cfg);
        write_read(out, read, sh.as_ref(), self.cfg, self.index, None)
    }

    fn write_pair(
        &self,
        out: &mut Records<'_>,
        (r1, f1): (&ReadView<'_>, ReadHits),
        (r2, f2): (&ReadView<'_>, ReadHits),
        pairing: &PairConfig,
        window: Window,
    ) -> PairWritten {
        write_pair(out, r1, r2, &f1, &f2, self.cfg, pairing, window, self.index)
    }
}

/// MD:Z of `hit` of `read` (no indels): matching-run lengths between the
/// reference bases of the mismatches, `pac` the 2-bit text.
fn md_of(out: &mut Vec<u8>, read: &ReadView<'_>, hit: &Hit, pac: &[u8]) {
    let len = read.seq.len();
    let mut run = 0u64;
    for i in 0..len {
        // SEQ as written: the read, or its reverse complement.
        let b = if hit.rev {
            COMPLEMENT[read.seq[len - 1 - i] as usize]
        } else {
            read.seq[i]
        };
        let r = packed_base(pac, hit.text_pos + i as u64);
        if dna::code(b) == r {
            run += 1;
        } else {
            push_int(out, run);
            out.push(b"ACGT"[r as usize]);
            run = 0;
        }
    }
    push_int(out, run);
}

/// XA:Z of `hits` (bwa's `rname,±pos,{len}M,NM;`).
fn xa_of<'h>(out: &mut Vec<u8>, hits: impl Iterator<Item = &'h Hit>, len: u64, index: &Index) {
    for h in hits {
        out.extend_from_slice(index.layout.contigs[h.contig as usize].name.as_bytes());
        out.extend_from_slice(if h.rev { b",-" } else { b",+" });
        push_int(out, h.pos + 1);
        out.push(b',');
        push_int(out, len);
        out.extend_from_slice(b"M,");
        push_int(out, u64::from(h.nm));
        out.push(b';');
    }
}

/// Appends the records of one read (of a pair, with `pair`); returns how
/// many are mapped.
pub(super) fn write_read(
    out: &mut Records<'_>,
    read: &ReadView<'_>,
    shown: Option<&Shown<'_>>,
    cfg: &MapConfig,
    index: &Index,
    pair: Option<&PairCtx<'_>>,
) -> usize {
    let Some(sh) = shown else {
        // An unmapped read is in no proper pair: no 0x2.
        let mate = pair.map(|p| Mate {
            flag: p.flag,
            next: p.mate.map(|(h, _)| (h.contig, h.pos)),
            tlen: 0,
            mc: p
                .mate
                .map_or(Cigar::None, |(_, mlen)| Cigar::Matched(mlen as u32)),
        });
        out.push(&Record::unmapped(read, mate));
        return 0;
    };
    let hits = sh.hits;
    let (primary, mapq) = match pair {
        Some(p) => (p.primary, p.mapq),
        None => (
            sh.primary,
            mapq(sh.c1, sh.c2, hits[sh.primary].nm, cfg.mismatches),
        ),
    };
    let len = read.seq.len() as u64;
    // The mate fields of a record at `h`, a secondary one or not.
    let mate_of = |h: &Hit, secondary: bool| {
        pair.map(|p| match p.mate {
            Some((m, mlen)) => Mate {
                flag: p.flag_at(h, len, secondary),
                next: Some((m.contig, m.pos)),
                tlen: if m.contig == h.contig {
                    crate::pair::tlen(h.pos, len, m.pos, mlen, p.first)
                } else {
                    0
                },
                mc: Cigar::Matched(mlen as u32),
            },
            // Mate unmapped: placed at this read's primary (no 0x2).
            None => Mate {
                flag: p.flag,
                next: Some((hits[primary].contig, hits[primary].pos)),
                tlen: 0,
                mc: Cigar::None,
            },
        })
    };
    let suboptimal = (cfg.mismatches > 0).then_some(sh.c2);
    let others = || {
        hits.iter()
            .enumerate()
            .filter(move |&(k, _)| k != primary)
            .map(|(_, h)| h)
    };
    let mut md = Vec::with_capacity(16);
    let mut xa = Vec::new();
    if cfg.report == Report::Best && sh.xa_ok {
        xa_of(&mut xa, others(), len, index);
    }
    let pac = index.pac();
    let mut record = |h: &Hit, secondary: bool, mapq: u8, xa: &[u8]| {
        md.clear();
        md_of(&mut md, read, h, pac);
        let m = mate_of(h, secondary);
        out.push(&Record {
            name: read.name,
            flag: (if h.rev { 16 } else { 0 })
                | (if secondary { 256 } else { 0 })
                | m.as_ref().map_or(0, |m| m.flag),
            place: Some((h.contig, h.pos)),
            mapq,
            cigar: Cigar::Matched(len as u32),
            next: m.as_ref().and_then(|m| m.next),
            tlen: m.as_ref().map_or(0, |m| m.tlen),
            seq: read.seq,
            qual: read.qual,
            tags: Tags {
                nm: Some(u32::from(h.nm)),
                md: Some(&md),
                x0: Some(sh.c1),
                x1: suboptimal,
                mc: m.map_or(Cigar::None, |m| m.mc),
                xa,
                ..Tags::default()
            },
        });
    };
    record(&hits[primary], false, mapq, &xa);
    let extra = match cfg.report {
        Report::Best => 0,
        Report::UpTo(n) => n.saturating_sub(1),
        Report::All => usize::MAX,
    };
    let mut written = 1;
    for h in others().take(extra) {
        // As bwa: a secondary is not where the read is thought to be (an
        // equal hit's primary has MAPQ 0 already; a worse hit must not
        // carry a unique best hit's MAPQ into `samtools view -q`).
        record(h, true, 0, &[]);
        written += 1;
    }
    written
}

/// Appends the records of a pair (mate 1 then mate 2), both under the name
/// they share.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_pair(
    out: &mut Records<'_>,
    v1: &ReadView<'_>,
    v2: &ReadView<'_>,
    f1: &ReadHits,
    f2: &ReadHits,
    cfg: &MapConfig,
    pairing: &PairConfig,
    window: Window,
    index: &Index,
) -> PairWritten {
    let name = v1.name;
    let (s1, s2) = (shown(v1, f1, cfg), shown(v2, f2, cfg));
    let (l1, l2) = (v1.seq.len() as u64, v2.seq.len() as u64);
    let choice = match (&s1, &s2) {
        (Some(a), Some(b)) => crate::pair::best_pair(
            a.hits,
            l1,
            b.hits,
            l2,
            pairing.orientation,
            window,
            name_hash(name),
        ),
        _ => None,
    };
    // Primary and MAPQ of each mate: from the pair when there is one.
    let se = |s: &Shown<'_>, p: usize| {
        if s.hits[p].nm == s.hits[0].nm {
            mapq(s.c1, s.c2, s.hits[p].nm, cfg.mismatches)
        } else {
            0
        }
    };
    let p1 = s1.as_ref().map(|s| choice.map_or(s.primary, |c| c.a));
    let p2 = s2.as_ref().map(|s| choice.map_or(s.primary, |c| c.b));
    let mut q1 = s1.as_ref().zip(p1).map_or(0, |(s, p)| se(s, p));
    let mut q2 = s2.as_ref().zip(p2).map_or(0, |(s, p)| se(s, p));
    if choice.is_some_and(|c| c.unique) {
        // The only proper pair: a mate in a repeat is placed by its mate.
        let q = q1.max(q2);
        (q1, q2) = (q, q);
    }
    let hit1 = s1.as_ref().zip(p1).map(|(s, p)| &s.hits[p]);
    let hit2 = s2.as_ref().zip(p2).map(|(s, p)| &s.hits[p]);
    let proper = choice.is_some();
    let rule: (Orientation, Window) = (pairing.orientation, window);
    let c1 = PairCtx::new(true, proper, p1, q1, hit2.map(|h| (h, l2)), rule);
    let c2 = PairCtx::new(false, proper, p2, q2, hit1.map(|h| (h, l1)), rule);
    PairWritten {
        mate1: write_read(out, v1, s1.as_ref(), cfg, index, Some(&c1)),
        mate2: write_read(out, v2, s2.as_ref(), cfg, index, Some(&c2)),
        proper,
        pairs_found: choice.map_or(0, |c| if c.unique { 1 } else { 2 }),
        found: (f1.count(), f2.count()),
    }
}
