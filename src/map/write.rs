//! Writing records: a read's or a pair's SAM lines; BAM (each chunk's
//! SAM text encoded by noodles, cut into BGZF blocks compressed in parallel).

use crate::index::Index;
use crate::pair::Window;
use crate::read::{Hit, ReadView, base_name};
use crate::sam::{self, MappedFields};
use rayon::prelude::*;
use std::io::Write;

use super::*;

/// Appends the SAM records of one read (of a pair, with `pair`); returns how
/// many are mapped.
pub(super) fn format_read(
    out: &mut Vec<u8>,
    read: &ReadView<'_>,
    shown: Option<&Shown<'_>>,
    cfg: &MapConfig,
    index: &Index,
    pair: Option<&PairCtx<'_>>,
) -> usize {
    let layout = &index.layout;
    let Some(sh) = shown else {
        match pair {
            None => sam::push_unmapped(out, read),
            Some(p) => {
                let place = p.mate.map(|(h, _)| (h.contig, h.pos));
                let mate = sam::MateFields {
                    // An unmapped read is in no proper pair: no 0x2.
                    flag: p.flag,
                    contig: place.map(|x| x.0),
                    pos: place.map_or(0, |x| x.1),
                    tlen: 0,
                    cigar: p.mate.map_or(sam::MateCigar::None, |(_, mlen)| {
                        sam::MateCigar::Matched(mlen)
                    }),
                };
                sam::push_unmapped_mate(out, read, &mate, place, layout);
            }
        }
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
            Some((m, mlen)) => sam::MateFields {
                flag: p.flag_at(h, len, secondary),
                contig: Some(m.contig),
                pos: m.pos,
                tlen: if m.contig == h.contig {
                    crate::pair::tlen(h.pos, len, m.pos, mlen, p.first)
                } else {
                    0
                },
                cigar: sam::MateCigar::Matched(mlen),
            },
            // Mate unmapped: placed at this read's primary (no 0x2).
            None => sam::MateFields {
                flag: p.flag,
                contig: Some(hits[primary].contig),
                pos: hits[primary].pos,
                tlen: 0,
                cigar: sam::MateCigar::None,
            },
        })
    };
    let suboptimal = (cfg.mismatches > 0).then_some(sh.c2 as usize);
    let others = || {
        hits.iter()
            .enumerate()
            .filter(move |&(k, _)| k != primary)
            .map(|(_, h)| h)
    };
    let xa: Vec<Hit> = if cfg.report == Report::Best && sh.xa_ok {
        others().copied().collect()
    } else {
        Vec::new()
    };
    let pac = index.pac();
    let fields = MappedFields {
        secondary: false,
        mapq,
        hits: sh.c1 as usize,
        suboptimal,
        xa: &xa,
    };
    let m = mate_of(&hits[primary], false);
    sam::push_mapped(out, read, &hits[primary], fields, m.as_ref(), layout, pac);
    let extra = match cfg.report {
        Report::Best => 0,
        Report::UpTo(n) => n.saturating_sub(1),
        Report::All => usize::MAX,
    };
    let mut written = 1;
    for h in others().take(extra) {
        let fields = MappedFields {
            secondary: true,
            // As bwa: a secondary is not where the read is thought to be
            // (an equal hit's primary has MAPQ 0 already; a worse hit must
            // not carry a unique best hit's MAPQ into `samtools view -q`).
            mapq: 0,
            hits: sh.c1 as usize,
            suboptimal,
            xa: &[],
        };
        let m = mate_of(h, true);
        sam::push_mapped(out, read, h, fields, m.as_ref(), layout, pac);
        written += 1;
    }
    written
}

/// What [`format_pair`] wrote.
pub(super) struct PairWritten {
    /// Mapped records of mate 1.
    pub(super) mate1: usize,
    /// Mapped records of mate 2.
    pub(super) mate2: usize,
    /// The pair is proper (flag 0x2).
    pub(super) proper: bool,
    /// Proper pairs found: 0, 1, or 2 for more than one.
    pub(super) pairs_found: u64,
}

/// Appends the records of a pair (mate 1 then mate 2).
#[allow(clippy::too_many_arguments)]
pub(super) fn format_pair(
    out: &mut Vec<u8>,
    r1: &ReadView<'_>,
    r2: &ReadView<'_>,
    f1: &ReadHits,
    f2: &ReadHits,
    cfg: &MapConfig,
    pairing: &PairConfig,
    window: Window,
    index: &Index,
) -> PairWritten {
    // Both mates under the shared name, so they have one QNAME.
    let name = base_name(r1.name);
    let v1 = ReadView { name, ..*r1 };
    let v2 = ReadView { name, ..*r2 };
    let (s1, s2) = (shown(&v1, f1, cfg), shown(&v2, f2, cfg));
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
    let rule = (pairing.orientation, window);
    let c1 = PairCtx::new(true, proper, p1, q1, hit2.map(|h| (h, l2)), rule);
    let c2 = PairCtx::new(false, proper, p2, q2, hit1.map(|h| (h, l1)), rule);
    PairWritten {
        mate1: format_read(out, &v1, s1.as_ref(), cfg, index, Some(&c1)),
        mate2: format_read(out, &v2, s2.as_ref(), cfg, index, Some(&c2)),
        proper,
        pairs_found: choice.map_or(0, |c| if c.unique { 1 } else { 2 }),
    }
}

/// FLAG of one of our SAM records (0 if it cannot be read).
fn record_flag(line: &[u8]) -> u16 {
    line.split(|&b| b == b'\t')
        .nth(1)
        .and_then(|f| std::str::from_utf8(f).ok())
        .and_then(|f| f.parse().ok())
        .unwrap_or(0)
}

/// A chunk's records made final: each read's outcome collected into `st`
/// (when `status`; `paired` input), the options applied
/// ([`post_process`]), encoded as BAM when `bam` is given.
pub(super) fn finish_chunk(
    out: &mut Vec<u8>,
    st: &mut MapStats,
    cfg: &MapConfig,
    bam: Option<&noodles_sam::Header>,
    status: bool,
    paired: bool,
) -> std::io::Result<()> {
    if status {
        st.status = read_status(out, paired);
    }
    post_process(out, cfg);
    if let Some(header) = bam {
        *out = sam_to_bam(header, out)?;
    }
    Ok(())
}

/// The chunks' texts in order, their counters added to `stats`.
pub(super) fn gather(chunks: Vec<(Vec<u8>, MapStats)>, stats: &mut MapStats) -> Vec<Vec<u8>> {
    chunks
        .into_iter()
        .map(|(text, st)| {
            stats.add(&st);
            text
        })
        .collect()
}

/// What the options change in a chunk's finished SAM records: records of
/// unaligned reads dropped (`--no-unal`: flag 4, and for a paired read
/// flag 8 too) and `RG:Z:<ID>` appended (`-R`).
pub(super) fn post_process(text: &mut Vec<u8>, cfg: &MapConfig) {
    if cfg.read_group.is_none() && !cfg.no_unal {
        return;
    }
    let tag = cfg
        .read_group
        .as_ref()
        .map(|rg| format!("\tRG:Z:{}", rg.id).into_bytes());
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    for line in text.split_inclusive(|&b| b == b'\n') {
        if cfg.no_unal {
            let flag = record_flag(line);
            if flag & 4 != 0 && (flag & 1 == 0 || flag & 8 != 0) {
                continue;
            }
        }
        match &tag {
            Some(t) => {
                out.extend_from_slice(&line[..line.len() - 1]);
                out.extend_from_slice(t);
                out.push(b'\n');
            }
            None => out.extend_from_slice(line),
        }
    }
    *text = out;
}

/// Whether each read (single) or pair (`paired`: by mate 1's record)
/// of a chunk's SAM records aligned, in order: a mapped primary record,
/// or for a pair, a proper one (flag 0x2).
pub(super) fn read_status(text: &[u8], paired: bool) -> Vec<bool> {
    let mut out = Vec::new();
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let flag = record_flag(line);
        if flag & 0x900 != 0 || (paired && flag & 0x80 != 0) {
            continue;
        }
        out.push(if paired { flag & 2 != 0 } else { flag & 4 == 0 });
    }
    out
}

/// Appends `read` to `out` as FASTQ (FASTA when it has no qualities).
pub(super) fn push_fastq(out: &mut Vec<u8>, read: &ReadView<'_>) {
    out.push(if read.qual.is_some() { b'@' } else { b'>' });
    out.extend_from_slice(read.name);
    out.push(b'\n');
    out.extend_from_slice(read.seq);
    out.push(b'\n');
    if let Some(q) = read.qual {
        out.extend_from_slice(b"+\n");
        out.extend_from_slice(q);
        out.push(b'\n');
    }
}

/// Uncompressed bytes per BGZF block (the limit htslib and noodles use, so
/// that a block of incompressible data still fits its 16-bit size field).
pub(super) const BGZF_BLOCK: usize = 65280;

/// The empty BGZF block that ends a BAM file (SAM spec §4.1.2).
pub(super) const BGZF_EOF: [u8; 28] = [
    0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0, 0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0,
    0, 0,
];

/// Appends `data` to `out` as BGZF blocks (gzip members with the BC extra
/// field, SAM spec §4.1) of up to [`BGZF_BLOCK`] bytes each.
pub(super) fn bgzf_blocks(data: &[u8], out: &mut Vec<u8>) {
    for piece in data.chunks(BGZF_BLOCK) {
        let mut z = flate2::write::DeflateEncoder::new(
            Vec::with_capacity(piece.len() / 2),
            flate2::Compression::default(),
        );
        z.write_all(piece).expect("writing to memory");
        let cdata = z.finish().expect("writing to memory");
        let bsize = (18 + cdata.len() + 8 - 1) as u16;
        out.extend_from_slice(&[
            0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0,
        ]);
        out.extend_from_slice(&bsize.to_le_bytes());
        out.extend_from_slice(&cdata);
        out.extend_from_slice(&crc32fast::hash(piece).to_le_bytes());
        out.extend_from_slice(&(piece.len() as u32).to_le_bytes());
    }
}

/// `data` as BGZF blocks of [`BGZF_BLOCK`] bytes (the last one shorter),
/// compressed in parallel on `pool`.
pub(super) fn compress_blocks(pool: &rayon::ThreadPool, data: &[u8]) -> Vec<u8> {
    let blocks: Vec<Vec<u8>> = pool.install(|| {
        data.par_chunks(BGZF_BLOCK)
            .map(|piece| {
                let mut b = Vec::new();
                bgzf_blocks(piece, &mut b);
                b
            })
            .collect()
    });
    blocks.concat()
}

/// Whole SAM records (our own formatter's text) → the same records as
/// uncompressed BAM, through noodles (the SAM parser and the BAM encoder),
/// so that the BAM holds exactly what the SAM would.
pub(super) fn sam_to_bam(header: &noodles_sam::Header, text: &[u8]) -> std::io::Result<Vec<u8>> {
    use noodles_sam::alignment::io::Write as _;
    let mut bam = noodles_bam::io::Writer::from(Vec::with_capacity(text.len()));
    let mut reader = noodles_sam::io::Reader::new(text);
    let mut record = noodles_sam::Record::default();
    while reader.read_record(&mut record)? != 0 {
        bam.write_alignment_record(header, &record)?;
    }
    Ok(bam.into_inner())
}

/// The first bytes of the output: the SAM header text, or the BAM header
/// (magic, text, references) in BGZF blocks and, for BAM, the parsed header
/// the workers encode records against.
pub(super) fn output_header(
    text: Vec<u8>,
    format: OutputFormat,
) -> std::io::Result<(Vec<u8>, Option<noodles_sam::Header>)> {
    match format {
        OutputFormat::Sam => Ok((text, None)),
        OutputFormat::Bam => {
            let header = noodles_sam::io::Reader::new(&text[..]).read_header()?;
            let mut bam = noodles_bam::io::Writer::from(Vec::new());
            bam.write_header(&header)?;
            let mut out = Vec::new();
            bgzf_blocks(&bam.into_inner(), &mut out);
            Ok((out, Some(header)))
        }
    }
}
