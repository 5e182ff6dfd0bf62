//! Pairs: two files read in step, or one interleaved file.

use std::path::Path;

use super::batch::Batch;
use super::source::ReadSource;
use crate::error::{Error, Result};
use crate::read::base_name;

/// mate 2, mate 1, …).
pub struct PairSource {
    pub(super) one: ReadSource,
    pub(super) two: Option<ReadSource>,
    /// Pairs read so far (for messages).
    pub(super) pairs: u64,
}

impl PairSource {
    /// Mates from two files.
    pub fn two_files(one: ReadSource, two: ReadSource) -> PairSource {
        PairSource {
            one,
            two: Some(two),
            pairs: 0,
        }
    }

    /// Mates interleaved in one file.
    pub fn interleaved(one: ReadSource) -> PairSource {
        PairSource {
            one,
            two: None,
            pairs: 0,
        }
    }

    /// The file mate 2 comes from.
    fn second_path(&self) -> &Path {
        self.two.as_ref().unwrap_or(&self.one).path()
    }

    /// The next pairs, until their bases (both mates) reach `max_bases` and
    /// there are at least `min_pairs` (always at least one pair); `None` at
    /// the end. An error when one file ends before the other, when an
    /// interleaved file has an odd number of records, or when two mates'
    /// names differ (after dropping `/1` and `/2`).
    pub fn next_batch(
        &mut self,
        max_bases: usize,
        min_pairs: usize,
    ) -> Result<Option<(Batch, Batch)>> {
        let (mut a, mut b) = (
            Batch::recycled(&self.one.recycle, 0),
            Batch::recycled(&self.two.as_ref().unwrap_or(&self.one).recycle, 0),
        );
        while a.bases + b.bases < max_bases || a.len() < min_pairs.max(1) {
            let got1 = self.one.push_next(&mut a)?;
            let got2 = match self.two.as_mut() {
                Some(two) => two.push_next(&mut b)?,
                None => got1 && self.one.push_next(&mut b)?,
            };
            match (got1, got2) {
                (false, false) => break,
                (true, true) => {}
                _ if self.two.is_none() => {
                    return Err(Error::input(
                        self.one.path(),
                        format!(
                            "an odd number of records ({}): --interleaved needs mate 1 and mate 2 of every pair",
                            2 * self.pairs + 1
                        ),
                    ));
                }
                _ => {
                    let (ended, longer) = if got1 {
                        (self.second_path(), self.one.path())
                    } else {
                        (self.one.path(), self.second_path())
                    };
                    return Err(Error::input(
                        ended,
                        format!(
                            "ends after {} reads, but {} has more: the two files must hold the same pairs",
                            self.pairs,
                            longer.display()
                        ),
                    ));
                }
            }
            let k = a.len() - 1;
            let (n1, n2) = (a.get(k).name, b.get(k).name);
            if base_name(n1) != base_name(n2) {
                let shown = |n: &[u8]| String::from_utf8_lossy(n).into_owned();
                let msg = if self.two.is_some() {
                    format!(
                        "pair {}: mate names differ ('{}' in {}, '{}' here); the files must list the same pairs in the same order",
                        self.pairs + 1,
                        shown(n1),
                        self.one.path().display(),
                        shown(n2)
                    )
                } else {
                    format!(
                        "pair {} (records {} and {}): mate names differ ('{}', '{}'); --interleaved needs mate 1 and mate 2 of each pair one after the other",
                        self.pairs + 1,
                        2 * self.pairs + 1,
                        2 * self.pairs + 2,
                        shown(n1),
                        shown(n2)
                    )
                };
                return Err(Error::input(self.second_path(), msg));
            }
            self.pairs += 1;
        }
        Ok((!a.is_empty()).then_some((a, b)))
    }
}
