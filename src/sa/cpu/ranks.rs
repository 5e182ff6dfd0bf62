//! The CPU's fused `rank_groups` step
//! ([`crate::sa::steps::Backend::rank_groups`]): the groups' ranks
//! scattered into the inverse array and the still-tied suffixes kept, in
//! two passes over the heads instead of the steps of its default.

use rayon::prelude::*;

use super::shared::{SharedSlice, split_at_ends};
use super::{AHEAD, pieces, prefetch, zeroed};
use crate::sa::steps::{RankLayout, Word};

/// The CPU's `rank_groups`: one pass over the heads for each
/// piece's last head and kept count, one pass that carries the group head,
/// scatters every rank and writes the kept elements.
pub(super) fn rank_groups_cpu<W: Word>(
    pos: &[W],
    heads: &[u8],
    layout: RankLayout,
    isa: &mut [W],
) -> (Vec<W>, Vec<W>, Vec<W>) {
    assert_eq!(pos.len(), heads.len(), "rank_groups: lengths differ");
    let n = heads.len();
    let kept = |i: usize| !(heads[i] != 0 && (i + 1 == n || heads[i + 1] != 0));
    let parts = pieces(n);
    let info: Vec<(Option<usize>, usize)> = parts
        .par_iter()
        .map(|&(s, e)| {
            let last = (s..e).rev().find(|&i| heads[i] != 0);
            (last, (s..e).filter(|&i| kept(i)).count())
        })
        .collect();
    // Per piece: the group head in force at its start, and where its kept
    // elements end in the outputs.
    let (mut heads_in, mut ends, mut total, mut head) = (Vec::new(), Vec::new(), 0, None);
    for &(last, k) in &info {
        heads_in.push(head);
        total += k;
        ends.push(total);
        head = last.or(head);
    }
    let (mut kp, mut ks, mut kr): (Vec<W>, Vec<W>, Vec<W>) =
        (zeroed(total), zeroed(total), zeroed(total));
    let outs = split_at_ends(&mut kp, &ends)
        .into_iter()
        .zip(split_at_ends(&mut ks, &ends))
        .zip(split_at_ends(&mut kr, &ends));
    let d = SharedSlice::new(isa);
    parts
        .into_par_iter()
        .zip(heads_in)
        .zip(outs.collect::<Vec<_>>())
        .for_each(|(((s, e), mut head), ((op, os), or))| {
            let mut o = 0;
            for i in s..e {
                if let Some(&a) = pos.get(i + AHEAD) {
                    prefetch(d.addr(layout.slot(a.to_u64()) as usize));
                }
                if heads[i] != 0 {
                    head = Some(i);
                }
                let r = W::from_u64(head.map_or(0, |h| h as u64 + 1));
                // Bounds-checked; a repeated position is a race that one of
                // the ranks wins.
                d.store(layout.slot(pos[i].to_u64()) as usize, r);
                if kept(i) {
                    op[o] = pos[i];
                    os[o] = W::from_u64(i as u64);
                    or[o] = r;
                    o += 1;
                }
            }
        });
    (kp, ks, kr)
}
