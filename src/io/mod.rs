//! Files in and out, as a newcomer would look for them: [`input`] (opening
//! and decompressing what is read: plain, gzip, BGZF, stdin), [`fastq`]
//! (reads in batches, parsed in pieces, paired) and [`output`] (outputs
//! written beside their name and renamed into place, removed on a signal;
//! outputs checked against inputs before any work).
//!
//! The FASTA reference is read by [`crate::scan`] (one parser; the
//! reference room), SAM and BAM records are written by `map::record` from
//! the typed records (the mapping room): each beside what it formats. See
//! docs/ARCHITECTURE.md for why this cut.

pub mod fastq;
pub mod input;
pub mod output;
