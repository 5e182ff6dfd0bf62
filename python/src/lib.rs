//! `fmalign` for Python: build an index, open it, map reads held in memory.
//!
//! A thin layer over the library's public API (`fmalign::build_index`,
//! `fmalign::Index`, `fmalign::Mapper`): every alignment comes from the
//! same batch driver as `fmalign map`, and `Alignment.to_sam()` is the line
//! the CLI writes. What is here is only translation: Python arguments to
//! the library's options, its records to mappy-style hits, its errors to
//! exceptions. The GIL is released while the library works.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use fm::{
    Batch, Choice, Index, MapConfig, Mapper, Mode, Op, PairConfig, ReadView, Record, RecordId,
    RecordSet,
};
use fmalign_core as fm;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyOSError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

pyo3::create_exception!(
    fmalign,
    FmalignError,
    PyException,
    "An error of the fmalign library (a damaged index, an input it cannot use); the message names the file and the record."
);

/// The library's error as the Python exception a caller expects: a missing
/// file is `FileNotFoundError`, another I/O error `OSError`, a bad option or
/// read `ValueError`, anything else (a damaged index, a FASTA it cannot
/// use) `fmalign.FmalignError`; the message is the library's.
fn py_err(e: fm::Error) -> PyErr {
    let msg = e.to_string();
    match &e {
        fm::Error::Io { source, .. } => {
            let detail = format!("{msg}: {source}");
            if source.kind() == std::io::ErrorKind::NotFound {
                PyFileNotFoundError::new_err(detail)
            } else {
                PyOSError::new_err(detail)
            }
        }
        // A path that names nothing: the library says so in its words.
        fm::Error::Input { path, .. } if !path.as_os_str().is_empty() && !path.exists() => {
            PyFileNotFoundError::new_err(msg)
        }
        fm::Error::Usage(_) => PyValueError::new_err(msg),
        fm::Error::Format { source, .. } => FmalignError::new_err(format!("{msg}: {source}")),
        _ => FmalignError::new_err(msg),
    }
}

/// A size given as bytes (int) or as `fmalign index --max-memory` takes it
/// ("4G", "512M").
#[derive(FromPyObject)]
enum Size {
    Bytes(u64),
    Text(String),
}

impl Size {
    fn bytes(self) -> PyResult<u64> {
        match self {
            Size::Bytes(n) => Ok(n),
            Size::Text(s) => fm::parse_size(&s).map_err(PyValueError::new_err),
        }
    }
}

/// Threads as the CLI's `-t`: 0 is every CPU this process may run on.
fn threads(asked: usize) -> usize {
    if asked == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        fm::usable_threads(asked).0
    }
}

/// Builds the index of the FASTA at `fasta` (plain, gzip or BGZF) as
/// `fmalign index` does, to the same bytes, and returns its path: `index`,
/// or `fasta` + ".fmi". `threads` 0 uses every CPU; `max_memory` (bytes, or
/// a size such as "4G"; default 90% of the available memory) bounds the
/// build, which then runs in parts. No progress is shown. The FASTA itself
/// is never overwritten. Raises FileNotFoundError, OSError, ValueError or
/// fmalign.FmalignError with the library's message.
#[pyfunction]
#[pyo3(signature = (fasta, index=None, threads=0, max_memory=None))]
fn build_index(
    py: Python<'_>,
    fasta: PathBuf,
    index: Option<PathBuf>,
    threads: usize,
    max_memory: Option<Size>,
) -> PyResult<PathBuf> {
    let max_memory = match max_memory {
        Some(s) => Some(s.bytes()?),
        None => fm::default_max_memory(),
    };
    let cfg = fm::IndexConfig {
        threads: self::threads(threads),
        max_memory,
        // The module is built without the CUDA backend.
        device: fm::Device::Cpu,
        ..fm::IndexConfig::default()
    };
    let out = index.unwrap_or_else(|| fm::default_index_path(&fasta));
    py.detach(|| fm::build_index(&fasta, &out, &cfg))
        .map_err(py_err)?;
    Ok(out)
}

/// Open indexes by canonical path and how they were opened (read, or
/// mapped): aligners of one index share one copy.
type Opened = HashMap<(PathBuf, bool), Weak<Index>>;
static OPEN: Mutex<Option<Opened>> = Mutex::new(None);

/// The index at `path` (an index file, or the FASTA it was built from, as
/// the CLI takes it), opened once per process while any aligner holds it:
/// read as the CLI reads it ([`Index::open`]), or memory-mapped
/// ([`Index::open_mapped`]) when `mapped`.
fn shared_index(path: &Path, mapped: bool) -> fm::Result<(Arc<Index>, Option<String>)> {
    let resolved = fm::resolve_index(path)?;
    let key = (
        std::fs::canonicalize(&resolved.path).map_err(|e| fm::Error::io(&resolved.path, e))?,
        mapped,
    );
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    let open = open.get_or_insert_with(HashMap::new);
    if let Some(index) = open.get(&key).and_then(Weak::upgrade) {
        return Ok((index, resolved.warning));
    }
    let index = Arc::new(if mapped {
        Index::open_mapped(&resolved.path)?
    } else {
        Index::open(&resolved.path)?
    });
    open.retain(|_, w| w.strong_count() > 0);
    open.insert(key, Arc::downgrade(&index));
    Ok((index, resolved.warning))
}

/// What the alignments of one call share: the batch's records and reads
/// (the library's [`RecordSet`]), the index they name contigs from, and
/// the read group of `to_sam()`.
struct Shared {
    set: RecordSet,
    index: Arc<Index>,
    rg: Option<Arc<str>>,
}

/// One alignment of a read, with mappy's attribute names: a record of its
/// call's [`Shared`] set, read by the getters. A batch makes one of these
/// per hit, so it is small (a pointer and an id) and holds no Python
/// object: [`new_hit`] takes it off the cyclic collector's lists. The
/// alignments of one call keep its records and reads in memory while any
/// of them lives (about the size of the reads themselves).
#[pyclass(frozen, module = "fmalign")]
struct Alignment {
    shared: Arc<Shared>,
    id: RecordId,
}

/// mappy's CIGAR operation codes (BAM's): M 0, I 1, D 2, S 4.
fn op_code(op: Op) -> u32 {
    match op {
        Op::Match => 0,
        Op::Ins => 1,
        Op::Del => 2,
        Op::Soft => 4,
    }
}

impl Alignment {
    /// The record (a mapped one: only those become alignments).
    fn rec(&self) -> Record<'_> {
        self.shared.set.record(self.id)
    }

    fn contig(&self) -> &fm::Contig {
        let (c, _) = self.rec().place.unwrap_or_default();
        &self.shared.index.layout.contigs[c as usize]
    }
}

/// The alignment `id` of `shared` as a Python object. It refers to no
/// Python object, so it can be in no reference cycle: it is untracked by
/// the cyclic collector (as CPython untracks tuples of atoms), which then
/// never walks it (PyO3 makes every class a collected one).
fn new_hit<'py>(
    py: Python<'py>,
    shared: &Arc<Shared>,
    id: RecordId,
) -> PyResult<Bound<'py, Alignment>> {
    let hit = Bound::new(
        py,
        Alignment {
            shared: Arc::clone(shared),
            id,
        },
    )?;
    // SAFETY: a live object of a collected type (PyO3's classes are), ours;
    // untracking an object that refers to no Python object is what the
    // collector itself does to such tuples and dicts, and PyO3's dealloc
    // untracks again, which CPython allows.
    unsafe { ffi::PyObject_GC_UnTrack(hit.as_ptr().cast()) };
    Ok(hit)
}

/// The cyclic collector paused while a batch's lists are built (it would
/// otherwise run every 700 new lists, walking the young ones and, now and
/// then, every object of the process); it runs again, where it ran before,
/// when this is dropped.
struct GcPaused(bool);

impl GcPaused {
    fn new(_py: Python<'_>) -> GcPaused {
        // SAFETY: attached to the interpreter (`_py`).
        GcPaused(unsafe { ffi::PyGC_Disable() } != 0)
    }
}

impl Drop for GcPaused {
    fn drop(&mut self) {
        if self.0 {
            // SAFETY: still attached: made and dropped under the GIL.
            unsafe { ffi::PyGC_Enable() };
        }
    }
}

/// The mapped records of `ids` as a list of hits.
fn hits<'py>(
    py: Python<'py>,
    shared: &Arc<Shared>,
    ids: impl Iterator<Item = RecordId>,
    buf: &mut Vec<RecordId>,
) -> PyResult<Bound<'py, PyList>> {
    buf.clear();
    buf.extend(ids.filter(|&id| shared.set.flag(id) & 4 == 0));
    let items = buf
        .iter()
        .map(|&id| new_hit(py, shared, id))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

#[pymethods]
impl Alignment {
    /// Contig name.
    #[getter]
    fn ctg(&self) -> &str {
        &self.contig().name
    }

    /// Contig length.
    #[getter]
    fn ctg_len(&self) -> u64 {
        self.contig().len
    }

    /// 0-based start on the contig.
    #[getter]
    fn r_st(&self) -> u64 {
        self.rec().ref_range().unwrap_or_default().0
    }

    /// 0-based end on the contig (exclusive).
    #[getter]
    fn r_en(&self) -> u64 {
        self.rec().ref_range().unwrap_or_default().1
    }

    /// 0-based start on the read, in its own (forward) coordinates.
    #[getter]
    fn q_st(&self) -> u32 {
        self.rec().query_range().unwrap_or_default().0
    }

    /// 0-based end on the read (exclusive).
    #[getter]
    fn q_en(&self) -> u32 {
        self.rec().query_range().unwrap_or_default().1
    }

    /// +1 forward, -1 reverse.
    #[getter]
    fn strand(&self) -> i32 {
        if self.rec().is_reverse() { -1 } else { 1 }
    }

    /// MAPQ.
    #[getter]
    fn mapq(&self) -> u8 {
        self.rec().mapq
    }

    /// Edit distance (`NM:i`).
    #[getter(NM)]
    fn nm(&self) -> u32 {
        self.rec().tags.nm.unwrap_or(0)
    }

    /// `MD:Z`.
    #[getter(MD)]
    fn md(&self) -> String {
        String::from_utf8_lossy(self.rec().tags.md.unwrap_or_default()).into_owned()
    }

    /// Alignment score (`AS:i`).
    #[getter]
    fn score(&self) -> Option<i32> {
        self.rec().tags.score
    }

    /// 1 or 2: the mate of a pair (1 for a single read).
    #[getter]
    fn read_num(&self) -> u8 {
        if self.rec().flag & 0x80 != 0 { 2 } else { 1 }
    }

    /// SAM FLAG.
    #[getter]
    fn flag(&self) -> u16 {
        self.rec().flag
    }

    /// The read's name (QNAME).
    #[getter]
    fn name(&self) -> String {
        String::from_utf8_lossy(self.rec().name).into_owned()
    }

    /// The CIGAR as a string (`100M`, `5S95M`).
    #[getter]
    fn cigar_str(&self) -> String {
        let mut s = Vec::new();
        self.rec().cigar.push_text(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    }

    /// The CIGAR as [length, operation] pairs, operations coded as in BAM
    /// (M 0, I 1, D 2, S 4), as mappy gives it.
    #[getter]
    fn cigar(&self) -> Vec<[u32; 2]> {
        let c = self.rec().cigar;
        let mut v = Vec::with_capacity(c.len());
        c.for_each(|op, n| v.push([n, op_code(op)]));
        v
    }

    /// Neither secondary nor supplementary.
    #[getter]
    fn is_primary(&self) -> bool {
        self.rec().is_primary()
    }

    /// Flag 0x100.
    #[getter]
    fn is_secondary(&self) -> bool {
        self.rec().is_secondary()
    }

    /// Flag 0x800: another part of a chimeric read.
    #[getter]
    fn is_supplementary(&self) -> bool {
        self.rec().is_supplementary()
    }

    /// The SAM record `fmalign map` writes for this alignment, without the
    /// newline.
    fn to_sam(&self) -> String {
        let s = &self.shared;
        let mut line = self.rec().to_sam(&s.index.layout, s.rg.as_deref());
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        String::from_utf8_lossy(&line).into_owned()
    }

    fn __repr__(&self) -> String {
        let r = self.rec();
        let (rs, re) = r.ref_range().unwrap_or_default();
        let (qs, qe) = r.query_range().unwrap_or_default();
        format!(
            "<Alignment {}:{}-{} {} q {}-{} {} mapq {} NM {}>",
            self.ctg(),
            rs,
            re,
            if r.is_reverse() { '-' } else { '+' },
            qs,
            qe,
            self.cigar_str(),
            r.mapq,
            self.nm()
        )
    }
}

/// The bytes of a str (its UTF-8, borrowed from the object) or a bytes
/// object; `what` names the argument in the error.
fn bytes_of<'a>(o: &'a Bound<'_, PyAny>, what: impl Fn() -> String) -> PyResult<&'a [u8]> {
    if let Ok(s) = o.cast::<PyString>() {
        return Ok(s.to_str()?.as_bytes());
    }
    if let Ok(b) = o.cast::<PyBytes>() {
        return Ok(b.as_bytes());
    }
    Err(PyTypeError::new_err(format!(
        "{}: expected str or bytes, not {}",
        what(),
        o.get_type().name()?
    )))
}

/// [`bytes_of`] of an optional argument (None: none).
fn opt_bytes_of<'a>(
    o: Option<&'a Bound<'_, PyAny>>,
    what: impl Fn() -> String,
) -> PyResult<Option<&'a [u8]>> {
    match o {
        Some(o) if !o.is_none() => bytes_of(o, what).map(Some),
        _ => Ok(None),
    }
}

/// The fields of the items of `items`, an iterable of tuples (or lists)
/// of `n` objects, one after another (item `i`'s are `n * i..n * (i + 1)`):
/// the objects the reads' bytes are borrowed from while the batch is built.
fn fields<'py>(
    items: &Bound<'py, PyAny>,
    n: usize,
    what: &str,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let mut out = Vec::with_capacity(items.len().unwrap_or(0) * n);
    for (i, item) in items.try_iter()?.enumerate() {
        let item = item?;
        let bad = || {
            PyValueError::new_err(format!(
                "{} {} of the batch: expected a {what} tuple",
                if n == 5 { "pair" } else { "read" },
                i + 1
            ))
        };
        if let Ok(t) = item.cast::<PyTuple>() {
            if t.len() != n {
                return Err(bad());
            }
            out.extend(t.iter());
        } else if let Ok(l) = item.cast::<PyList>() {
            if l.len() != n {
                return Err(bad());
            }
            out.extend(l.iter());
        } else {
            return Err(bad());
        }
    }
    Ok(out)
}

/// A read of a batch from its fields: name (None: none), seq, qual (None:
/// none); `k` the read's number in messages.
fn view<'a>(
    name: &'a Bound<'_, PyAny>,
    seq: &'a Bound<'_, PyAny>,
    qual: &'a Bound<'_, PyAny>,
    k: usize,
) -> PyResult<ReadView<'a>> {
    Ok(ReadView {
        name: opt_bytes_of(Some(name), || format!("read {k}: the name"))?.unwrap_or_default(),
        seq: bytes_of(seq, || format!("read {k}: the sequence"))?,
        qual: opt_bytes_of(Some(qual), || format!("read {k}: the qualities"))?,
    })
}

/// A batch of reads as the library takes them (checked as the FASTQ
/// reader checks a record; copied once, from the Python objects).
fn batch<'a>(reads: impl IntoIterator<Item = ReadView<'a>>) -> PyResult<Batch> {
    Batch::from_reads(reads).map_err(PyValueError::new_err)
}

/// The batch of `fields` taken `width` at a time (as [`fields`] gives
/// them), each read named by the first and its bases and qualities the
/// two from `seq` on.
fn batch_of(fields: &[Bound<'_, PyAny>], width: usize, seq: usize) -> PyResult<Batch> {
    let views = fields
        .chunks_exact(width)
        .enumerate()
        .map(|(i, r)| view(&r[0], &r[seq], &r[seq + 1], i + 1))
        .collect::<PyResult<Vec<_>>>()?;
    batch(views)
}

/// Maps reads against one index with one set of options, as `fmalign map`
/// does. `index` is an index file or the FASTA it was built from (with
/// `fmalign index` or `build_index`); aligners of one index in one process
/// share one copy of it. `mode`: "local" (bwa mem's scores, the default),
/// "end-to-end" (bowtie2's) or "ungapped" (bowtie's `-v K`, K =
/// `mismatches`, 0 for exact matches). `threads` 0 uses every CPU. `k`:
/// report up to k alignments per read (`-k`); `all`: every one (`-a`);
/// `strata`: only the best stratum (`--strata`, ungapped);
/// `split_secondary`: `-M`. Pairs: `orientation` "fr", "rf" or "ff";
/// `min_insert`/`max_insert` (`-I`/`-X`) give the window of a proper pair,
/// otherwise it is estimated from the pairs of the first call of
/// `map_pair_batch` or `map_pair` (from fewer than 20 uniquely mapped pairs
/// it is 0..500, as the CLI's). `read_group`: the ID written as `RG:Z` by
/// `Alignment.to_sam()`. `mmap`: map the index file instead of reading it
/// into memory (as the CLI does, into huge pages where it can): its pages
/// are then the page cache's, one copy for every process on the machine
/// (worker processes that each open the index), at some speed; the file
/// must then not be changed while it is open.
#[pyclass(frozen, module = "fmalign")]
struct Aligner {
    mapper: Arc<Mapper>,
    index: Arc<Index>,
    mode: String,
    rg: Option<Arc<str>>,
}

impl Aligner {
    /// Maps `reads` (and `mates`: pairs) with the GIL released: the
    /// records, shared by the hits made of them.
    fn run(&self, py: Python<'_>, reads: Batch, mates: Option<Batch>) -> PyResult<Arc<Shared>> {
        let mapper = Arc::clone(&self.mapper);
        let (set, _) = py
            .detach(move || match mates {
                Some(m) => mapper.map_pairs_set(reads, m),
                None => mapper.map_set(reads),
            })
            .map_err(py_err)?;
        Ok(Arc::new(Shared {
            set,
            index: Arc::clone(&self.index),
            rg: self.rg.clone(),
        }))
    }

    /// Each read's (pair's) mapped records as a list of hits, in a list.
    fn run_batch<'py>(
        &self,
        py: Python<'py>,
        reads: Batch,
        mates: Option<Batch>,
    ) -> PyResult<Bound<'py, PyList>> {
        let shared = self.run(py, reads, mates)?;
        let _gc = GcPaused::new(py);
        let mut buf = Vec::new();
        let lists = shared
            .set
            .each_read()
            .map(|ids| hits(py, &shared, ids, &mut buf))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, lists)
    }

    /// The mapped records of the one read (pair) of `reads` as hits.
    fn run_one<'py>(
        &self,
        py: Python<'py>,
        reads: Batch,
        mates: Option<Batch>,
    ) -> PyResult<Bound<'py, PyList>> {
        let shared = self.run(py, reads, mates)?;
        let mut buf = Vec::new();
        match shared.set.each_read().next() {
            Some(ids) => hits(py, &shared, ids, &mut buf),
            None => Ok(PyList::empty(py)),
        }
    }
}

#[pymethods]
impl Aligner {
    #[new]
    #[pyo3(signature = (
        index, mode = "local", mismatches = 0, threads = 0, k = None, all = false,
        strata = false, split_secondary = false, orientation = "fr",
        min_insert = None, max_insert = None, read_group = None, mmap = false
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        index: PathBuf,
        mode: &str,
        mismatches: u8,
        threads: usize,
        k: Option<usize>,
        all: bool,
        strata: bool,
        split_secondary: bool,
        orientation: &str,
        min_insert: Option<u64>,
        max_insert: Option<u64>,
        read_group: Option<String>,
        mmap: bool,
    ) -> PyResult<Aligner> {
        let gapped = match mode {
            "local" => Some(Mode::Local),
            "end-to-end" => Some(Mode::EndToEnd),
            "ungapped" => None,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "mode {mode:?}: expected \"local\", \"end-to-end\" or \"ungapped\""
                )));
            }
        };
        if mismatches > 3 {
            return Err(PyValueError::new_err(format!(
                "mismatches={mismatches}: the ungapped mode allows 0 to 3 (bowtie's -v)"
            )));
        }
        if mismatches > 0 && gapped.is_some() {
            return Err(PyValueError::new_err(format!(
                "mismatches={mismatches} is for mode=\"ungapped\" (the gapped modes score their alignments)"
            )));
        }
        if k == Some(0) {
            return Err(PyValueError::new_err("k must be at least 1"));
        }
        let orientation = fm::Orientation::from_name(orientation).ok_or_else(|| {
            PyValueError::new_err(format!(
                "orientation {orientation:?}: expected \"fr\", \"rf\" or \"ff\""
            ))
        })?;
        let cfg = MapConfig {
            threads: self::threads(threads),
            report: match (all, k) {
                (true, _) => fm::Report::All,
                (false, Some(k)) => fm::Report::UpTo(k),
                (false, None) => fm::Report::Best,
            },
            mismatches,
            strata,
            split_secondary,
            gapped,
            device: fm::Device::Cpu,
            ..MapConfig::default()
        };
        let pairing = PairConfig {
            orientation,
            min_insert,
            max_insert,
        };
        let (index, warning) = py.detach(|| shared_index(&index, mmap)).map_err(py_err)?;
        if let Some(w) = warning {
            PyErr::warn(
                py,
                &py.get_type::<pyo3::exceptions::PyUserWarning>(),
                &std::ffi::CString::new(w).unwrap_or_default(),
                1,
            )?;
        }
        let shared = Arc::clone(&index);
        let mapper = py
            .detach(move || Mapper::new(shared, cfg, pairing))
            .map_err(py_err)?;
        Ok(Aligner {
            mapper: Arc::new(mapper),
            index,
            mode: mode.to_owned(),
            rg: read_group.map(Arc::from),
        })
    }

    /// The contigs' names, in the reference's order.
    #[getter]
    fn seq_names(&self) -> Vec<String> {
        self.index
            .layout
            .contigs
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    /// The reference bases of contig `name` over [start, end) (0-based;
    /// end None: to the contig's end), upper case, N in ambiguous runs;
    /// None when no contig has that name.
    #[pyo3(signature = (name, start = 0, end = None))]
    fn seq(&self, name: &str, start: u64, end: Option<u64>) -> Option<String> {
        self.index
            .sequence(name, start, end)
            .map(|v| String::from_utf8_lossy(&v).into_owned())
    }

    /// The mode: "local", "end-to-end" or "ungapped".
    #[getter]
    fn mode(&self) -> &str {
        &self.mode
    }

    /// Substitutions allowed in the ungapped mode.
    #[getter]
    fn mismatches(&self) -> u8 {
        self.mapper.config().mismatches
    }

    /// Worker threads.
    #[getter]
    fn threads(&self) -> usize {
        self.mapper.config().threads
    }

    /// The index file mapped against.
    #[getter]
    fn index(&self) -> PathBuf {
        self.index.path().to_path_buf()
    }

    /// The alignments of one read (an empty list when it does not map):
    /// the primary first, then any secondary or supplementary ones, as the
    /// CLI writes them. `seq` and `qual` (Phred+33, as in FASTQ) are str or
    /// bytes. Raises ValueError for a read the FASTQ reader would refuse.
    #[pyo3(signature = (seq, qual = None, name = None))]
    fn map<'py>(
        &self,
        py: Python<'py>,
        seq: &Bound<'_, PyAny>,
        qual: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let read = ReadView {
            name: opt_bytes_of(name, || "name".into())?.unwrap_or_default(),
            seq: bytes_of(seq, || "seq".into())?,
            qual: opt_bytes_of(qual, || "qual".into())?,
        };
        self.run_one(py, batch([read])?, None)
    }

    /// The alignments of a pair: mate 1's, then mate 2's (`read_num` says
    /// which). See the class for the insert-size window.
    #[pyo3(signature = (seq1, seq2, qual1 = None, qual2 = None, name = None))]
    fn map_pair<'py>(
        &self,
        py: Python<'py>,
        seq1: &Bound<'_, PyAny>,
        seq2: &Bound<'_, PyAny>,
        qual1: Option<&Bound<'_, PyAny>>,
        qual2: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let name = opt_bytes_of(name, || "name".into())?.unwrap_or_default();
        let one = ReadView {
            name,
            seq: bytes_of(seq1, || "seq1".into())?,
            qual: opt_bytes_of(qual1, || "qual1".into())?,
        };
        let two = ReadView {
            name,
            seq: bytes_of(seq2, || "seq2".into())?,
            qual: opt_bytes_of(qual2, || "qual2".into())?,
        };
        self.run_one(py, batch([one])?, Some(batch([two])?))
    }

    /// Maps many reads on the aligner's threads with the GIL released:
    /// `reads` is an iterable of (name, seq, qual) tuples (qual may be
    /// None); returns one list of alignments per read, in read order, the
    /// same as `fmalign map` gives the same reads.
    fn map_batch<'py>(
        &self,
        py: Python<'py>,
        reads: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let f = fields(reads, 3, "(name, seq, qual)")?;
        self.run_batch(py, batch_of(&f, 3, 1)?, None)
    }

    /// Maps many pairs as `fmalign map R1 R2` does: `pairs` is an iterable
    /// of (name, seq1, qual1, seq2, qual2) tuples (quals may be None);
    /// returns one list per pair (mate 1's alignments, then mate 2's). The
    /// first call estimates the insert-size window from its pairs, as the
    /// CLI does from its first batch, unless min_insert and max_insert
    /// were given.
    fn map_pair_batch<'py>(
        &self,
        py: Python<'py>,
        pairs: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let f = fields(pairs, 5, "(name, seq1, qual1, seq2, qual2)")?;
        self.run_batch(py, batch_of(&f, 5, 1)?, Some(batch_of(&f, 5, 3)?))
    }

    fn __repr__(&self) -> String {
        format!(
            "<Aligner {} mode={:?} threads={}>",
            self.index.path().display(),
            self.mode,
            self.mapper.config().threads
        )
    }
}

/// fmalign: an FM-index read aligner (build an index, map reads), the same
/// alignments as the `fmalign` command line.
#[pymodule]
fn fmalign(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(build_index, m)?)?;
    m.add_class::<Aligner>()?;
    m.add_class::<Alignment>()?;
    m.add("FmalignError", m.py().get_type::<FmalignError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
