//! Mapping, one pipeline for every mode: batches of reads (single or
//! paired) → find ([`find`]: exact and `-v K` backward search, on the GPU
//! with `--device gpu`; [`extend`]: gapped seeds and extension) → choose
//! ([`select`]: primary, MAPQ; [`mates`]: pairs, rescue) → records
//! ([`record`]: typed, written as SAM text or BAM), strictly in input order.
//! [`batch`] drives a batch through a mode ([`ungapped`], [`gapped`]).
//!
//! Three stages overlap: a reader thread parses batch k+1 while rayon maps
//! batch k and a writer thread writes batch k-1 (with a device, a search
//! stage between reader and mapper). A read's records depend only on the
//! read and the index, so the output is byte-identical for any thread
//! count and batch size.

mod batch;
mod config;
#[cfg_attr(not(feature = "gpu"), path = "cuda/disabled.rs")]
pub mod cuda;
mod extend;
mod find;
mod gapped;
mod mapper;
mod mates;
mod output;
mod record;
mod select;
mod summary;
mod ungapped;

use std::io::Write;
use std::time::Instant;

use crossbeam_channel::bounded;

use crate::device::{Device, Ran};
use crate::error::{Error, Result};
use crate::index::Index;
use crate::io::fastq::Batch;
use crate::kmer::KmerTable;
use crate::sam;
use crate::search::BiIndex;

use batch::{Writing, map_batch};
use config::Dev;
pub use config::{
    CPU_BATCH_BASES, CopyPaths, GPU_BATCH_BASES, MapConfig, MapFiles, MapStats, OutputFormat,
    PairConfig, Reads, Report, SearchMode, mate_path,
};
use find::BatchHits;
pub use find::{
    Strands, VERIFY_MAX, count_steps, exact_hits, exact_hits_many, find_many, hits_many,
    search_intervals,
};
pub use mapper::{Mapped, Mapper};
use output::{BGZF_BLOCK, BGZF_EOF, ReadCopies, compress_blocks, output_header};
pub use record::{Cigar, Mate, OwnedRecord, Record, RecordId, RecordSet, Tags, push_bam, push_sam};
pub use select::{MAPQ_MAX, e2e_cap, gapped_mapq, mapq};
pub use summary::Summary;

/// A batch (and its mates) with what the device found for it, or why it
/// found nothing.
type Staged = ((Batch, Option<Batch>), Option<BatchHits>, Option<String>);

/// Maps every read of `source` against `index` and writes SAM or BAM
/// (header included) to `out`; the reads are also copied by outcome to the
/// files of `cfg.copies` (`--un`, `--al`, `--un-conc`, `--al-conc`: a
/// single read aligned, a pair concordantly). `progress` is called after
/// each batch with the counters so far.
pub fn map_reads<W: Write + Send>(
    index: &Index,
    source: Reads,
    out: W,
    out_name: &str,
    cfg: &MapConfig,
    command_line: &str,
    progress: &(dyn Fn(&MapStats) + Sync),
) -> Result<MapStats> {
    if let Reads::Paired(_, pairing) = &source {
        pairing.check()?;
    }
    if cfg.gapped.is_some() && !crate::align::cpu_supported() {
        return Err(Error::Usage(
            "gapped alignment (the default mode, --local, --end-to-end) needs a CPU with AVX2 (the SIMD this build's aligner uses); -v K maps ungapped on any CPU"
                .into(),
        ));
    }
    let paired = source.pairing().is_some();
    let mut copies = ReadCopies::open(&cfg.copies, paired)?;
    let pool = crate::thread_pool(cfg.threads)?;
    let mut text = sam::header(&index.layout, command_line)?;
    if let Some(rg) = &cfg.read_group {
        sam::insert_header_line(&mut text, &rg.line);
    }
    let header = output_header(text, cfg.format).map_err(|e| Error::io(out_name, e))?;
    let table = pool.install(|| KmerTable::new(&index.fm(), cfg.kmer));
    let mut notices = Vec::new();
    let dev = open_device(index, &table, cfg, &mut notices);
    let io_err = |e| Error::io(out_name, e);
    let (batch_tx, batch_rx) = bounded::<Result<Staged>>(1);
    // Pairs: the window from the options, or estimated from the first batch
    // (which then holds at least ESTIMATE_PAIRS pairs, whatever -K is).
    let pairing = source.pairing().cloned();
    let mut window = pairing.as_ref().and_then(PairConfig::given_window);
    let first_min = if window.is_none() {
        crate::pair::ESTIMATE_PAIRS
    } else {
        0
    };
    let (text_tx, text_rx) = bounded::<Vec<Vec<u8>>>(1);
    let batch_bases = cfg
        .batch_bases
        .unwrap_or(if dev.is_some() {
            GPU_BATCH_BASES
        } else {
            CPU_BATCH_BASES
        })
        .max(1);
    let stats = std::thread::scope(|s| {
        let reader = s.spawn(move || {
            let mut source = source;
            let mut min_pairs = first_min;
            loop {
                let next = match &mut source {
                    Reads::Single(src) => src.next_batch(batch_bases).map(|b| b.map(|b| (b, None))),
                    Reads::Paired(src, _) => src
                        .next_batch(batch_bases, std::mem::take(&mut min_pairs))
                        .map(|b| b.map(|(a, b)| (a, Some(b)))),
                };
                let stop = !matches!(next, Ok(Some(_)));
                match next {
                    Ok(Some(b)) => {
                        if batch_tx.send(Ok((b, None, None))).is_err() {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        let _ = batch_tx.send(Err(e));
                    }
                }
                if stop {
                    break;
                }
            }
        });
        let pool = &pool;
        let dev = dev.as_ref();
        // The device's search and locate of one batch (and its mates).
        let search_on = move |d: &Dev, b: (Batch, Option<Batch>)| -> Staged {
            let found = {
                let mut seqs: Vec<&[u8]> = (0..b.0.len()).map(|i| b.0.get(i).seq).collect();
                if let Some(m) = &b.1 {
                    seqs.extend((0..m.len()).map(|i| m.get(i).seq));
                }
                let bi = BiIndex {
                    fwd: index.fm(),
                    rev: index.rev_fm(),
                };
                pool.install(|| BatchHits::search(d, &bi, &seqs, cfg))
            };
            match found {
                Ok(h) => (b, Some(h), None),
                Err(e) => (b, None, Some(e.to_string())),
            }
        };
        // With a device, a stage between reader and formatter: the device
        // searches batch k + 1 while the CPU formats batch k. Without one,
        // the formatter takes the reader's batches (no more in flight).
        let (staged_rx, searcher) = match dev {
            None => (batch_rx, None),
            Some(d) => {
                let (staged_tx, staged_rx) = bounded::<Result<Staged>>(1);
                let searcher = s.spawn(move || {
                    for batch in batch_rx {
                        let staged = batch.map(|(b, _, _)| search_on(d, b));
                        if staged_tx.send(staged).is_err() {
                            break;
                        }
                    }
                });
                (staged_rx, Some(searcher))
            }
        };
        let format = cfg.format;
        let writer = s.spawn(move || -> std::io::Result<()> {
            let mut out = out;
            out.write_all(&header)?;
            // BAM: the record stream cut into blocks at fixed offsets (so the
            // bytes do not depend on -t or -K), compressed in parallel.
            let mut pending: Vec<u8> = Vec::new();
            for chunks in text_rx {
                if format == OutputFormat::Sam {
                    for text in chunks {
                        out.write_all(&text)?;
                    }
                    continue;
                }
                for text in chunks {
                    pending.extend_from_slice(&text);
                }
                let full = pending.len() / BGZF_BLOCK * BGZF_BLOCK;
                out.write_all(&compress_blocks(pool, &pending[..full]))?;
                pending.drain(..full);
            }
            if format == OutputFormat::Bam {
                out.write_all(&compress_blocks(pool, &pending))?;
                out.write_all(&BGZF_EOF)?;
            }
            out.flush()
        });
        let mut stats = MapStats {
            device: if dev.is_some() { Ran::Gpu } else { Ran::Cpu },
            notices,
            ..MapStats::default()
        };
        let mut failure = None;
        for staged in staged_rx.iter() {
            let (batch, hits, device_error) = match staged {
                Ok(b) => b,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            };
            if let Some(e) = device_error {
                if stats.gpu_fallbacks == 0 {
                    stats
                        .notices
                        .push(format!("{e}; that batch was mapped on the CPU"));
                }
                stats.gpu_fallbacks += 1;
            }
            let writing = Writing {
                layout: &index.layout,
                cfg,
                status: copies.wanted(),
                collect: false,
            };
            let mates = batch.1.as_ref().zip(pairing.as_ref());
            let mapped = pool.install(|| match cfg.gapped {
                Some(mode) => map_batch(
                    &gapped::Gapped { index, cfg, mode },
                    &batch.0,
                    mates,
                    &writing,
                    &mut window,
                ),
                None => map_batch(
                    &ungapped::Ungapped {
                        index,
                        table: &table,
                        cfg,
                        pre: hits.as_ref(),
                    },
                    &batch.0,
                    mates,
                    &writing,
                    &mut window,
                ),
            });
            let (text, mut st) = match mapped {
                Ok((w, st)) => (w.into_iter().map(|w| w.bytes).collect::<Vec<_>>(), st),
                Err(e) => {
                    failure = Some(Error::io(out_name, e));
                    break;
                }
            };
            if writing.status {
                let status = std::mem::take(&mut st.status);
                debug_assert_eq!(status.len(), batch.0.len());
                if let Err(e) = copies.copy(&status, &batch.0, batch.1.as_ref()) {
                    failure = Some(e);
                    break;
                }
            }
            stats.add(&st);
            progress(&stats);
            if text_tx.send(text).is_err() {
                break; // the writer failed; its error is reported below
            }
        }
        drop(staged_rx);
        drop(text_tx);
        if let Some(d) = dev {
            let (seconds, bases) = d.kernel_time();
            stats.gpu_kernel_nanos = (seconds * 1e9) as u64;
            stats.gpu_kernel_bases = bases;
        }
        let written = writer.join().expect("writer thread panicked");
        if let Some(searcher) = searcher {
            searcher.join().expect("search thread panicked");
        }
        reader.join().expect("reader thread panicked");
        match (failure, written) {
            (Some(e), _) => Err(e),
            (None, Err(e)) => Err(io_err(e)),
            (None, Ok(())) => Ok(stats),
        }
    })?;
    copies.finish()?;
    Ok(stats)
}

/// The device for `cfg.device`, or `None` (the CPU) with the reason in
/// `notices`: no GPU, `-v K` (mismatch search runs on the CPU), or a failure
/// to copy the index over. Built without the `gpu` feature, the CPU, with
/// a notice only if the GPU was asked for.
fn open_device(
    index: &Index,
    table: &KmerTable,
    cfg: &MapConfig,
    notices: &mut Vec<String>,
) -> Option<Dev> {
    if cfg.device == Device::Cpu {
        return None;
    }
    if !crate::gpu::BUILT {
        if cfg.device == Device::Gpu {
            notices.push("built without the gpu feature; mapping on the CPU".into());
        }
        return None;
    }
    if cfg.gapped.is_some() {
        if cfg.device == Device::Gpu {
            notices.push(
                "gapped alignment (the default mode) runs on the CPU, not yet on the GPU; -v K searches on the GPU"
                    .into(),
            );
        }
        return None;
    }
    if cfg.mismatches > 0 && cfg.search != SearchMode::Verify {
        if cfg.device == Device::Gpu {
            notices.push(
                "--search schemes/backtrack run on the CPU (the GPU seeds and verifies)".into(),
            );
        }
        return None;
    }
    if let Some(why) = crate::gpu::probe().why_not() {
        notices.push(format!("no GPU: {why}; mapping on the CPU"));
        return None;
    }
    let dev = Dev::upload(index)
        .and_then(|d| d.with_kmer(table))
        .and_then(|d| {
            if cfg.mismatches > 0 {
                d.with_pac(index).and_then(|d| d.with_rev(index))
            } else {
                Ok(d)
            }
        });
    match dev {
        Ok(d) => Some(d),
        Err(e) => {
            notices.push(format!("{e}; mapping on the CPU"));
            None
        }
    }
}

/// Wall-clock helper for logs.
pub fn rate(count: u64, since: Instant) -> f64 {
    count as f64 / since.elapsed().as_secs_f64().max(1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fm::Interval;
    use crate::index::{IndexConfig, build_in_memory};
    use crate::io::fastq::ReadSource;
    use crate::scan::read_fasta_from;
    use find::BatchSearch;
    use std::path::Path;

    /// xorshift bases.
    fn bases(seed: &mut u64, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                b"ACGT"[(*seed % 4) as usize]
            })
            .collect()
    }

    /// The index of FASTA text `fa`, built on one thread.
    fn index_of(fa: &[u8]) -> Index {
        let reference = read_fasta_from(fa, Path::new("r.fa")).unwrap();
        let cfg = IndexConfig {
            threads: 1,
            ..IndexConfig::default()
        };
        build_in_memory(reference, &cfg).unwrap()
    }

    /// FASTQ of `n` reads `q0`, `q1`, … of the bases `seq`, at Q40.
    fn copies(seq: &[u8], n: usize) -> Vec<u8> {
        let mut fq = Vec::new();
        for i in 0..n {
            fq.extend(format!("@q{i}\n").bytes());
            fq.extend(seq);
            fq.extend(b"\n+\n");
            fq.extend(std::iter::repeat_n(b'I', seq.len()));
            fq.push(b'\n');
        }
        fq
    }

    /// Maps the single reads `fq` against `index` with `cfg`: the counters
    /// and the SAM text.
    fn map_single(index: &Index, fq: &[u8], cfg: &MapConfig) -> (MapStats, String) {
        let source =
            ReadSource::from_reader(std::io::Cursor::new(fq.to_vec()), Path::new("q.fq")).unwrap();
        let mut sam = Vec::new();
        let stats = map_reads(
            index,
            Reads::Single(source),
            &mut sam,
            "<memory>",
            cfg,
            "test",
            &|_| {},
        )
        .unwrap();
        (stats, String::from_utf8(sam).unwrap())
    }

    /// The device's search for a test: the CPU's search and locate, one
    /// pass per batch, as the device answers.
    struct CpuBatch<'a>(&'a Index);

    impl crate::search::SeedEngine for CpuBatch<'_> {
        fn exact(&self, pieces: &[&[u8]]) -> Result<Vec<Interval>> {
            let fm = self.0.fm();
            Ok(pieces.iter().map(|p| fm.backward_search(p)).collect())
        }
        fn locate(&self, rows: &[u64]) -> Result<Vec<u64>> {
            Ok(rows.iter().map(|&r| self.0.fm().locate(r)).collect())
        }
        fn verify(
            &self,
            patterns: &[&[u8]],
            cands: &[(u32, u64)],
            k: u8,
        ) -> Result<Vec<Option<u8>>> {
            let pac = self.0.pac();
            Ok(cands
                .iter()
                .map(|&(q, s)| crate::search::hamming(pac, s, patterns[q as usize], k))
                .collect())
        }
        /// Each job's alignments in the reverse of the CPU's order (the
        /// device's order is its own).
        fn schemes(
            &self,
            bi: &BiIndex<'_>,
            patterns: &[&[u8]],
            jobs: &[(u32, u8)],
            k: u8,
        ) -> Result<Vec<Vec<crate::search::Found>>> {
            Ok(jobs
                .iter()
                .map(|&(q, i)| {
                    let mut v =
                        crate::search::scheme_found(bi, patterns[q as usize], k, usize::from(i));
                    v.reverse();
                    v
                })
                .collect())
        }
    }

    impl BatchSearch for CpuBatch<'_> {
        fn exact_reads(&self, reads: &[&[u8]]) -> Result<Vec<[Interval; 2]>> {
            let fm = self.0.fm();
            Ok(search_intervals(&fm, &KmerTable::new(&fm, 0), reads).0)
        }
    }

    /// The device path's plumbing, with the CPU's search behind it: hits of
    /// a whole batch (reads, then mates), cut back into chunks of 256 reads,
    /// give the SAM of the per-chunk CPU search, for single reads and pairs,
    /// exact and with up to 1 or 2 mismatches (seeds searched, located and
    /// verified by the engine), with N reads, mutated reads, unmapped reads
    /// and reads over `--max-locate` (sampled on the CPU) among them.
    #[test]
    fn batch_hits_give_the_per_chunk_sam() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        let mut text = bases(&mut seed, 20_000);
        let unit = text[1000..1040].to_vec();
        for k in 0..40 {
            // A repeat of 41 copies: more rows than --max-locate 30.
            text[3000 + 200 * k..3040 + 200 * k].copy_from_slice(&unit);
        }
        // And one of exactly 30: located, the last read that is.
        let unit30 = text[12_500..12_540].to_vec();
        for k in 0..29 {
            text[13_000 + 200 * k..13_040 + 200 * k].copy_from_slice(&unit30);
        }
        let mut fa = b">a\n".to_vec();
        fa.extend(&text[..12_000]);
        fa.extend(b"\nNNNN\n>b\n");
        fa.extend(&text[12_000..]);
        fa.push(b'\n');
        let reference = read_fasta_from(&fa[..], Path::new("r.fa")).unwrap();
        let index = build_in_memory(reference, &IndexConfig::default()).unwrap();
        let (mut fq1, mut fq2) = (Vec::new(), Vec::new());
        for q in 0..700u64 {
            let at = (q * 7919 % 19_700) as usize;
            let mut r1 = text[at..at + 40].to_vec();
            let mut r2: Vec<u8> =
                crate::dna::reverse_complement_ascii(&text[at + 150..at + 190]).collect();
            match q % 11 {
                0 => r1[20] = b'N',
                1 => r2 = bases(&mut seed, 40),
                4 => r1[7] = b"CGTA"[(r1[7] % 4) as usize],
                5 => {
                    r1[3] = b'A';
                    r2[30] = b'T';
                }
                2 => r1 = unit.clone(),
                3 => r1 = unit30.clone(),
                _ => {}
            }
            for (fq, r) in [(&mut fq1, &r1), (&mut fq2, &r2)] {
                fq.extend(format!("@q{q}\n").bytes());
                fq.extend(r);
                fq.extend(b"\n+\n");
                fq.extend(std::iter::repeat_n(b'I', r.len()));
                fq.push(b'\n');
            }
        }
        let table = KmerTable::new(&index.fm(), MapConfig::default().kmer);
        let bi = BiIndex {
            fwd: index.fm(),
            rev: index.rev_fm(),
        };
        let batch = |fq: &Vec<u8>| {
            ReadSource::from_reader(std::io::Cursor::new(fq.clone()), Path::new("q.fq"))
                .unwrap()
                .next_batch(usize::MAX)
                .unwrap()
                .unwrap()
        };
        let (b1, b2) = (batch(&fq1), batch(&fq2));
        let pairing = PairConfig::default();
        let window = Some(crate::pair::DEFAULT_WINDOW);
        for (mates, mismatches) in [None, Some((&b2, &pairing))]
            .into_iter()
            .flat_map(|m| [0, 1, 2].map(|k| (m, k)))
        {
            let cfg = MapConfig {
                threads: 2,
                max_locate: 30,
                report: Report::UpTo(3),
                mismatches,
                gapped: None,
                ..MapConfig::default()
            };
            let mut seqs: Vec<&[u8]> = (0..b1.len()).map(|i| b1.get(i).seq).collect();
            if let Some((m, _)) = mates {
                seqs.extend((0..m.len()).map(|i| m.get(i).seq));
            }
            let hits = BatchHits::search(&CpuBatch(&index), &bi, &seqs, &cfg).unwrap();
            let run = |pre| {
                let mut w = window;
                let mode = ungapped::Ungapped {
                    index: &index,
                    table: &table,
                    cfg: &cfg,
                    pre,
                };
                let writing = Writing {
                    layout: &index.layout,
                    cfg: &cfg,
                    status: false,
                    collect: false,
                };
                let (text, st) = map_batch(&mode, &b1, mates, &writing, &mut w).unwrap();
                (
                    text.into_iter().flat_map(|w| w.bytes).collect::<Vec<u8>>(),
                    st,
                )
            };
            let (cpu, cpu_st) = run(None);
            let (dev, dev_st) = run(Some(&hits));
            assert!(cpu == dev, "pairs: {}, -v {mismatches}", mates.is_some());
            assert_eq!(cpu_st.located, dev_st.located);
            let sam = String::from_utf8(cpu).unwrap();
            // The cases above are all there: mapped, unmapped, sampled repeats.
            let flag = |l: &str| l.split('\t').nth(1).unwrap().parse::<u16>().unwrap();
            assert!(sam.lines().any(|l| flag(l) & 4 != 0));
            assert!(cpu_st.mapped > cpu_st.reads / 2);
            assert!(hits.at.windows(2).any(|w| w[0] == w[1]) && !hits.pos.is_empty());
        }
    }

    /// `--max-locate N` bounds the rows located per read, also when most
    /// of a read's rows are matches across an N run (they are in the text,
    /// which leaves the N out, but never resolve): a repeat with one clean
    /// copy and 300 copies cut by an N.
    #[test]
    fn max_locate_bounds_the_rows_located() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        let unit = bases(&mut seed, 30);
        let mut fa = b">r\n".to_vec();
        fa.extend(bases(&mut seed, 50));
        fa.extend(&unit);
        for _ in 0..300 {
            fa.extend(bases(&mut seed, 20));
            fa.extend(&unit[..15]);
            fa.push(b'N');
            fa.extend(&unit[15..]);
        }
        fa.extend(bases(&mut seed, 20));
        fa.push(b'\n');
        let index = index_of(&fa);
        let reads = 20;
        let fq = copies(&unit, reads as usize);
        let run = |max_locate: u64| {
            let cfg = MapConfig {
                threads: 1,
                max_locate,
                gapped: None,
                ..MapConfig::default()
            };
            map_single(&index, &fq, &cfg)
        };
        // Located in full: every one of the 301 rows, one hit (the clean copy).
        let (stats, sam) = run(1000);
        assert_eq!(stats.located, 301 * reads);
        assert_eq!(stats.mapped, reads);
        assert!(sam.contains("\tr\t51\t37\t30M\t"), "{sam}");
        // Over the cap: at most 10 rows each; a read maps (to the clean
        // copy) only if one of its 10 rows is that copy.
        let (stats, sam) = run(10);
        assert!(
            stats.located <= 10 * reads,
            "{} rows located for {reads} reads with --max-locate 10",
            stats.located
        );
        for line in sam.lines().filter(|l| !l.starts_with('@')) {
            let f: Vec<&str> = line.split('\t').collect();
            assert!(f[1] == "4" || f[3] == "51", "{line}");
        }
    }

    /// `-k N` with `--max-locate` near N still reports N hits when N exist
    /// and a few of the read's rows are matches across an N run (in the
    /// text, never resolving): 40 clean copies of a unit and 6 cut by an N.
    /// With the cap counting every row tried, a read whose N rows took in a
    /// cut copy got fewer than N.
    #[test]
    fn up_to_n_hits_despite_rows_across_holes() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        let unit = bases(&mut seed, 30);
        let mut fa = b">r\n".to_vec();
        let mut clean = Vec::new();
        for k in 0..46 {
            fa.extend(bases(&mut seed, 25));
            if k % 8 == 3 {
                fa.extend(&unit[..12]);
                fa.push(b'N');
                fa.extend(&unit[12..]);
            } else {
                clean.push(fa.len() as u64 - 3);
                fa.extend(&unit);
            }
        }
        fa.extend(bases(&mut seed, 20));
        fa.push(b'\n');
        assert_eq!(clean.len(), 40);
        let index = index_of(&fa);
        let reads = 30;
        let want = 20;
        let cfg = MapConfig {
            threads: 1,
            max_locate: want as u64,
            report: Report::UpTo(want),
            gapped: None,
            ..MapConfig::default()
        };
        let (_, sam) = map_single(&index, &copies(&unit, reads), &cfg);
        for i in 0..reads {
            let name = format!("q{i}");
            let recs: Vec<Vec<&str>> = sam
                .lines()
                .filter(|l| !l.starts_with('@'))
                .map(|l| l.split('\t').collect::<Vec<_>>())
                .filter(|f| f[0] == name)
                .collect();
            assert_eq!(recs.len(), want, "{name}: {sam}");
            let mut pos: Vec<u64> = recs.iter().map(|f| f[3].parse().unwrap()).collect();
            pos.sort_unstable();
            pos.dedup();
            assert_eq!(pos.len(), want, "{name}: distinct places");
            // Every one a clean copy (1-based POS: its offset + 1).
            assert!(
                pos.iter().all(|p| clean.contains(&(p - 1))),
                "{name}: {pos:?}"
            );
        }
    }
}
