//! A record as SAM text (`push_sam`).

use super::Record;
use crate::dna;
use crate::reference::Layout;

/// Appends `x` in decimal.
pub(in crate::map) fn push_int(out: &mut Vec<u8>, x: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(x).as_bytes());
}

fn push_signed(out: &mut Vec<u8>, x: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(x).as_bytes());
}

/// SEQ as written: upper case, bytes SAM and BAM cannot both store as `N`
/// ([`dna::SAM_SEQ`]), reverse-complemented for a reverse-strand record.
fn seq_bytes<'s>(r: &'s Record<'_>) -> impl Iterator<Item = u8> + 's {
    let n = r.seq.len();
    let rev = r.rev();
    (0..n).map(move |i| {
        let b = if rev {
            dna::COMPLEMENT[r.seq[n - 1 - i] as usize]
        } else {
            r.seq[i]
        };
        dna::SAM_SEQ[b as usize]
    })
}

/// QUAL as written (reversed for a reverse-strand record).
fn qual_bytes<'s>(r: &'s Record<'_>, q: &'s [u8]) -> impl Iterator<Item = u8> + 's {
    let n = q.len();
    let rev = r.rev();
    (0..n).map(move |i| if rev { q[n - 1 - i] } else { q[i] })
}

/// `r` as one line of SAM text.
pub fn push_sam(out: &mut Vec<u8>, r: &Record<'_>, layout: &Layout, rg: Option<&[u8]>) {
    let name = |c: u32| layout.contigs[c as usize].name.as_bytes();
    if r.name.is_empty() {
        out.push(b'*');
    } else {
        out.extend_from_slice(r.name);
    }
    out.push(b'\t');
    push_int(out, u64::from(r.flag));
    out.push(b'\t');
    match r.place {
        Some((c, p)) => {
            out.extend_from_slice(name(c));
            out.push(b'\t');
            push_int(out, p + 1);
        }
        None => out.extend_from_slice(b"*\t0"),
    }
    out.push(b'\t');
    push_int(out, u64::from(r.mapq));
    out.push(b'\t');
    r.cigar.push_text(out);
    out.push(b'\t');
    match r.next {
        Some((c, p)) => {
            if Some(c) == r.place.map(|x| x.0) {
                out.push(b'=');
            } else {
                out.extend_from_slice(name(c));
            }
            out.push(b'\t');
            push_int(out, p + 1);
        }
        None => out.extend_from_slice(b"*\t0"),
    }
    out.push(b'\t');
    push_signed(out, r.tlen);
    out.push(b'\t');
    if r.seq.is_empty() {
        out.extend_from_slice(b"*\t*");
    } else {
        out.extend(seq_bytes(r));
        out.push(b'\t');
        match r.qual {
            Some(q) => out.extend(qual_bytes(r, q)),
            None => out.push(b'*'),
        }
    }
    let t = &r.tags;
    if let Some(nm) = t.nm {
        out.extend_from_slice(b"\tNM:i:");
        push_int(out, u64::from(nm));
    }
    if let Some(md) = t.md {
        out.extend_from_slice(b"\tMD:Z:");
        out.extend_from_slice(md);
    }
    if let Some(s) = t.score {
        out.extend_from_slice(b"\tAS:i:");
        push_signed(out, i64::from(s));
    }
    if let Some(s) = t.xs {
        out.extend_from_slice(b"\tXS:i:");
        push_signed(out, i64::from(s));
    }
    if let Some(x) = t.x0 {
        out.extend_from_slice(b"\tX0:i:");
        push_int(out, x);
    }
    if let Some(x) = t.x1 {
        out.extend_from_slice(b"\tX1:i:");
        push_int(out, x);
    }
    if !t.mc.is_none() {
        out.extend_from_slice(b"\tMC:Z:");
        t.mc.push_text(out);
    }
    if !t.sa.is_empty() {
        out.extend_from_slice(b"\tSA:Z:");
        out.extend_from_slice(t.sa);
    }
    if !t.xa.is_empty() {
        out.extend_from_slice(b"\tXA:Z:");
        out.extend_from_slice(t.xa);
    }
    if let Some(id) = rg {
        out.extend_from_slice(b"\tRG:Z:");
        out.extend_from_slice(id);
    }
    out.push(b'\n');
}
