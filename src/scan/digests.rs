//! The MD5 of each contig's upper-cased sequence (SPEC §5.1), for the
//! [`super::scanner::Scanner`]: here, or on a second thread fed in jobs of
//! about 1 MiB, beside the parse.

use md5::{Digest, Md5};

/// The MD5 of each record's upper-cased sequence (SPEC §5.1): the running
/// digest and those of the kept records so far.
#[derive(Default)]
pub(super) struct Digester {
    md5: Md5,
    done: Vec<[u8; 16]>,
}

impl Digester {
    /// The record ended: its digest is kept when `keep`.
    fn end(&mut self, keep: bool) {
        let d = std::mem::take(&mut self.md5).finalize().into();
        if keep {
            self.done.push(d);
        }
    }
}

/// A [`Digester`] here or, when a second thread is allowed, on a thread of
/// its own: on one thread the digest is half of the scan's time, and it
/// cannot be split within a record.
pub(super) enum Digests {
    Here(Digester),
    Beside {
        jobs: std::sync::mpsc::SyncSender<Job>,
        /// Jobs the worker has digested, for reuse.
        spare: std::sync::mpsc::Receiver<Job>,
        worker: std::thread::JoinHandle<Vec<[u8; 16]>>,
        /// The job being filled.
        cur: Job,
    },
}

/// Work for the digest thread: the sequence bytes of one or more records,
/// and where each record that ends in them ends. Many short records
/// (a transcriptome) go in one job, not one job each.
pub(super) struct Job {
    bytes: Vec<u8>,
    /// Offsets in `bytes` where a record ends, and whether its digest is
    /// kept.
    ends: Vec<(usize, bool)>,
}

impl Job {
    fn new() -> Job {
        Job {
            bytes: Vec::with_capacity(JOB_BYTES),
            ends: Vec::new(),
        }
    }
}

/// Bytes of sequence a job holds before it is sent.
pub(super) const JOB_BYTES: usize = 1 << 20;

/// Record ends a job holds before it is sent.
pub(super) const JOB_ENDS: usize = 1 << 14;

/// Jobs queued for the digest thread.
const DIGEST_QUEUE: usize = 4;

impl Digests {
    /// On a thread of its own when `threads > 1`.
    pub(super) fn new(threads: usize) -> Self {
        if threads <= 1 {
            return Digests::Here(Digester::default());
        }
        let (jobs, queue) = std::sync::mpsc::sync_channel::<Job>(DIGEST_QUEUE);
        let (give_back, spare) = std::sync::mpsc::channel();
        let worker = std::thread::spawn(move || {
            let mut d = Digester::default();
            // Ends when the scanner drops its sender (done, or an error).
            while let Ok(mut job) = queue.recv() {
                let mut at = 0;
                for &(end, keep) in &job.ends {
                    d.md5.update(&job.bytes[at..end]);
                    d.end(keep);
                    at = end;
                }
                d.md5.update(&job.bytes[at..]);
                job.bytes.clear();
                job.ends.clear();
                // The scanner may be gone (an error): nothing to do.
                let _ = give_back.send(job);
            }
            d.done
        });
        Digests::Beside {
            jobs,
            spare,
            worker,
            cur: Job::new(),
        }
    }

    /// Adds `bytes` to the record's digest, leaving `bytes` empty.
    pub(super) fn update(&mut self, bytes: &mut Vec<u8>) {
        match self {
            Digests::Here(d) => d.md5.update(&*bytes),
            Digests::Beside { cur, .. } => cur.bytes.extend_from_slice(bytes),
        }
        bytes.clear();
        self.send_if_full();
    }

    /// The record ended: its digest is kept when `keep`.
    pub(super) fn end(&mut self, keep: bool) {
        match self {
            Digests::Here(d) => d.end(keep),
            Digests::Beside { cur, .. } => cur.ends.push((cur.bytes.len(), keep)),
        }
        self.send_if_full();
    }

    /// Sends the job being filled once it holds enough.
    fn send_if_full(&mut self) {
        if let Digests::Beside { cur, .. } = self
            && (cur.bytes.len() >= JOB_BYTES || cur.ends.len() >= JOB_ENDS)
        {
            self.send();
        }
    }

    /// Sends the job being filled, taking a digested one (or a new one) to
    /// fill next.
    fn send(&mut self) {
        if let Digests::Beside {
            jobs, spare, cur, ..
        } = self
        {
            let next = spare.try_recv().unwrap_or_else(|_| Job::new());
            jobs.send(std::mem::replace(cur, next))
                .expect("the digest thread runs until the scan ends");
        }
    }

    /// The kept records' digests, in order.
    pub(super) fn finish(mut self) -> Vec<[u8; 16]> {
        self.send();
        match self {
            Digests::Here(d) => d.done,
            Digests::Beside { jobs, worker, .. } => {
                drop(jobs);
                worker.join().expect("the digest thread does not panic")
            }
        }
    }
}
