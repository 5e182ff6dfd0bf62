//! The per-read API: a [`Mapper`] maps reads held in memory, single or
//! paired, through the same batch driver as `fmalign map` and returns each
//! read's records as owned values ([`OwnedRecord`]), or all of them
//! compactly with the reads ([`RecordSet`]): the records the CLI writes for
//! the same reads with the same options, in input order.

use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::index::Index;
use crate::io::fastq::Batch;
use crate::kmer::KmerTable;
use crate::pair::Window;

use super::batch::{Writing, map_batch};
use super::config::{MapConfig, MapStats, PairConfig};
use super::gapped::Gapped;
use super::record::{Chunk, OwnedRecord, RecordSet};
use super::ungapped::Ungapped;

/// Maps reads in memory against one index with one set of options, on its
/// own threads (`cfg.threads`). It maps on the CPU (`cfg.device` is not
/// used) and ignores the options about files (`cfg.format`, `cfg.copies`).
/// Shared between threads, it maps concurrently.
///
/// ```
/// use std::sync::Arc;
/// use fmalign::io::fastq::Batch;
/// use fmalign::map::{MapConfig, Mapper, PairConfig};
/// use fmalign::read::ReadView;
///
/// # fn main() -> fmalign::Result<()> {
/// // An index built in memory (`fmalign index` writes the same to a file;
/// // `Index::open` maps it).
/// let text = b">chr1\nGATTACAGGCTTACCGATCGGATCCATGGCAACGTTAGCCTAGGCATCGATCGGACTTAGCAT\n";
/// let reference = fmalign::scan::read_fasta_from(&text[..], "ref.fa".as_ref())?;
/// let index = fmalign::index::build_in_memory(reference, &fmalign::IndexConfig::default())?;
/// let cfg = MapConfig { threads: 1, ..MapConfig::default() }; // --local, bwa mem's scores
/// let mapper = Mapper::new(Arc::new(index), cfg, PairConfig::default())?;
/// let reads = Batch::from_reads([ReadView {
///     name: b"r1",
///     seq: b"GGCTTACCGATCGGATCCATGGCAACGTTAGC",
///     qual: None,
/// }])
/// .map_err(fmalign::Error::Usage)?;
/// let (records, _stats) = mapper.map(&reads)?;
/// let r = &records[0][0];
/// assert!(r.is_primary() && !r.is_reverse());
/// assert_eq!(r.ref_range(), Some((7, 39)));
/// assert_eq!(r.query_range(), Some((0, 32)));
/// let line = r.to_sam(&mapper.index().layout, None); // the line `fmalign map` writes
/// assert!(line.starts_with(b"r1\t0\tchr1\t8\t"));
/// # Ok(())
/// # }
/// ```
pub struct Mapper {
    index: Arc<Index>,
    cfg: MapConfig,
    table: KmerTable,
    pool: rayon::ThreadPool,
    pairing: PairConfig,
    /// The pairs' insert-size window: given, or estimated from the first
    /// call of [`Mapper::map_pairs`] (as the CLI does from its first batch).
    window: Mutex<Option<Window>>,
}

/// Each read's (or pair's) records, in input order, and the counters of
/// the call (notices included).
pub type Mapped = (Vec<Vec<OwnedRecord>>, MapStats);

impl Mapper {
    /// A mapper over `index` with the options of `cfg` and, for
    /// [`Mapper::map_pairs`], `pairing`.
    pub fn new(index: Arc<Index>, cfg: MapConfig, pairing: PairConfig) -> Result<Mapper> {
        pairing.check()?;
        if cfg.gapped.is_some() && !crate::align::cpu_supported() {
            return Err(Error::Usage(
                "gapped alignment needs a CPU with AVX2 (the SIMD this build's aligner uses); the ungapped mode maps on any CPU"
                    .into(),
            ));
        }
        let pool = crate::thread_pool(cfg.threads)?;
        let table = pool.install(|| KmerTable::new(&index.fm(), cfg.kmer));
        let window = Mutex::new(pairing.given_window());
        Ok(Mapper {
            index,
            cfg,
            table,
            pool,
            pairing,
            window,
        })
    }

    /// The index mapped against.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The options.
    pub fn config(&self) -> &MapConfig {
        &self.cfg
    }

    /// Each read's records.
    pub fn map(&self, reads: &Batch) -> Result<Mapped> {
        let mut none = None;
        let (chunks, stats) = self.run(reads, None, &mut none)?;
        Ok((owned(&chunks, reads, None), stats))
    }

    /// Each pair's records (mate 1's, then mate 2's). The first call
    /// estimates the insert-size window from its pairs, unless the pairing
    /// gives one; later calls use it.
    pub fn map_pairs(&self, one: &Batch, two: &Batch) -> Result<Mapped> {
        let (chunks, stats) = self.run_pairs(one, two)?;
        Ok((owned(&chunks, one, Some(two)), stats))
    }

    /// The records of [`Mapper::map`], kept compactly with the reads: no
    /// allocation per record, the reads' bases not copied into each.
    pub fn map_set(&self, reads: Batch) -> Result<(RecordSet, MapStats)> {
        let mut none = None;
        let (chunks, stats) = self.run(&reads, None, &mut none)?;
        Ok((RecordSet::new(chunks, reads, None), stats))
    }

    /// The records of [`Mapper::map_pairs`], kept compactly with the pairs
    /// (see [`Mapper::map_set`]).
    pub fn map_pairs_set(&self, one: Batch, two: Batch) -> Result<(RecordSet, MapStats)> {
        let (chunks, stats) = self.run_pairs(&one, &two)?;
        Ok((RecordSet::new(chunks, one, Some(two)), stats))
    }

    fn run_pairs(&self, one: &Batch, two: &Batch) -> Result<(Vec<Chunk>, MapStats)> {
        if one.len() != two.len() {
            return Err(Error::Usage(format!(
                "{} reads as mates 1 and {} as mates 2: pairs need as many of each",
                one.len(),
                two.len()
            )));
        }
        let known = *self.window.lock().unwrap_or_else(|e| e.into_inner());
        if known.is_some() {
            let mut w = known;
            return self.run(one, Some(two), &mut w);
        }
        // The first call: held while it estimates, so that concurrent
        // first calls agree on one window.
        let mut window = self.window.lock().unwrap_or_else(|e| e.into_inner());
        self.run(one, Some(two), &mut window)
    }

    fn run(
        &self,
        batch: &Batch,
        mates: Option<&Batch>,
        window: &mut Option<Window>,
    ) -> Result<(Vec<Chunk>, MapStats)> {
        let (index, cfg) = (&*self.index, &self.cfg);
        let writing = Writing {
            layout: &index.layout,
            cfg,
            status: false,
            collect: true,
        };
        let mates = mates.map(|m| (m, &self.pairing));
        let mapped = self.pool.install(|| match cfg.gapped {
            Some(mode) => map_batch(&Gapped { index, cfg, mode }, batch, mates, &writing, window),
            None => map_batch(
                &Ungapped {
                    index,
                    table: &self.table,
                    cfg,
                    pre: None,
                },
                batch,
                mates,
                &writing,
                window,
            ),
        });
        let (chunks, stats) = mapped.map_err(|e| Error::Usage(e.to_string()))?;
        Ok((chunks.into_iter().map(|w| w.chunk).collect(), stats))
    }
}

/// Each read's (pair's) records of `chunks` as owned values.
fn owned(chunks: &[Chunk], reads: &Batch, mates: Option<&Batch>) -> Vec<Vec<OwnedRecord>> {
    chunks
        .iter()
        .flat_map(|c| {
            (0..c.reads()).map(move |k| {
                c.of_read(k)
                    .map(|i| OwnedRecord::of(&c.record(i, reads, mates)))
                    .collect()
            })
        })
        .collect()
}
