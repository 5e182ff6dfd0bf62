//! FASTQ (or FASTA) reads in batches sized by bases. A batch keeps all its
//! reads in one flat buffer, so parsing allocates per batch, not per read.
//!
//! One file a part: [`batch`] (the batch and the read checks), [`source`]
//! (a file or stdin, decompressed, parsed), [`chunked`] (the parse in pieces
//! on a pool), [`pairs`] (two files in step, or one interleaved).

mod batch;
mod chunked;
mod pairs;
mod source;
#[cfg(test)]
mod tests;

pub use batch::Batch;
pub use pairs::PairSource;
pub use source::ReadSource;
