//! Prefix-doubling bookkeeping shared by [`super::hybrid`] and [`super::ls`]:
//! the suffixes still unsorted, their ranks in the inverse array, and the
//! per-round `--stats` line. Each algorithm sorts the groups its own way;
//! ranking, placing and compacting are the same steps in both.

use std::time::Instant;

use super::steps::{Backend, RankLayout, Word};
use super::{DataParallel, Round, Stage};
use crate::error::Result;

/// The suffixes not yet alone in their group, in sorted-group order.
pub(super) struct Unsorted<B: Backend, W: Word> {
    /// Text positions.
    pub pos: B::Buf<W>,
    /// Their slots in the suffix array (contiguous within a group).
    pub slot: B::Buf<W>,
    /// Their group's rank (1 + the group's first slot).
    pub rank: B::Buf<W>,
}

impl<B: Backend, W: Word> Unsorted<B, W> {
    /// After the first sort of `pos` (groups marked by `heads`): every
    /// suffix's rank goes to `isa` (through `layout`), the tied ones are kept.
    pub fn first(
        b: &B,
        pos: &B::Buf<W>,
        heads: B::Buf<u8>,
        layout: RankLayout,
        isa: &mut B::Buf<W>,
    ) -> Result<Self> {
        let (pos, slot, rank) = b.rank_groups(pos, &heads, layout, isa)?;
        Ok(Unsorted { pos, slot, rank })
    }

    /// After the groups (marked by `gheads`) were sorted by `key`: new ranks
    /// go to `isa`, positions to their slots of `sa`, the still tied are kept.
    pub fn refine(
        self,
        b: &B,
        key: B::Buf<W>,
        gheads: B::Buf<u8>,
        layout: RankLayout,
        isa: &mut B::Buf<W>,
        sa: &mut B::Buf<W>,
    ) -> Result<Self> {
        let nheads = b.head_flags(&key, Some(&gheads))?;
        drop((key, gheads));
        let mut nrank = b.head_values(&nheads, &self.slot, 1)?;
        b.segmented_scan(&mut nrank, &nheads)?;
        b.scatter_slots(&nrank, &self.pos, layout, isa)?;
        b.scatter(&self.pos, &self.slot, sa)?;
        let keep = b.unsorted(&nheads)?;
        Ok(Unsorted {
            pos: b.compact(&self.pos, &keep)?,
            slot: b.compact(&self.slot, &keep)?,
            rank: b.compact(&nrank, &keep)?,
        })
    }

    /// The `--stats` line of a round that started at `t` and left `self`.
    pub fn stats(
        &self,
        b: &B,
        algorithm: DataParallel,
        round: u32,
        h: u64,
        t: Instant,
    ) -> Result<Round> {
        let unsorted = b.len(&self.rank) as u64;
        let groups = if unsorted == 0 {
            0
        } else {
            b.count(&b.head_flags(&self.rank, None)?)?
        };
        Ok(Round {
            algorithm,
            round,
            stage: if round == 0 {
                Stage::Sort
            } else {
                Stage::Double
            },
            h,
            unsorted,
            groups,
            seconds: t.elapsed().as_secs_f64(),
        })
    }
}
