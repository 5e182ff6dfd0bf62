//! A record as one BAM record (`push_bam`, SAM spec §4.2).

use std::io;

use super::Record;
use crate::align::Op;
use crate::dna;

/// 4-bit BAM code (SAM spec §4.2.3, `=ACMGRSVTWYHKDBN`) of a read byte as
/// SEQ writes it ([`dna::SAM_SEQ`]): `[forward, complemented]`.
static BAM_BASE: [[u8; 256]; 2] = {
    const fn code(b: u8) -> u8 {
        let letters = b"=ACMGRSVTWYHKDBN";
        let mut k = 0;
        while k < 16 {
            if letters[k] == b {
                return k as u8;
            }
            k += 1;
        }
        15
    }
    let mut t = [[15u8; 256]; 2];
    let mut b = 0;
    while b < 256 {
        t[0][b] = code(dna::SAM_SEQ[b]);
        t[1][b] = code(dna::SAM_SEQ[dna::COMPLEMENT[b] as usize]);
        b += 1;
    }
    t
};

/// BAM's code of a CIGAR operation.
fn op_code(o: Op) -> u32 {
    match o {
        Op::Match => 0,
        Op::Ins => 1,
        Op::Del => 2,
        Op::Soft => 4,
    }
}

/// BIN of a record over 0-based `[beg, end]` (inclusive; SAM spec §5.3).
fn reg2bin(beg: u64, end: u64) -> u16 {
    let bin = if beg >> 14 == end >> 14 {
        ((1 << 15) - 1) / 7 + (beg >> 14)
    } else if beg >> 17 == end >> 17 {
        ((1 << 12) - 1) / 7 + (beg >> 17)
    } else if beg >> 20 == end >> 20 {
        ((1 << 9) - 1) / 7 + (beg >> 20)
    } else if beg >> 23 == end >> 23 {
        ((1 << 6) - 1) / 7 + (beg >> 23)
    } else if beg >> 26 == end >> 26 {
        1 + (beg >> 26)
    } else {
        0
    };
    bin as u16
}

fn invalid(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what)
}

fn i32_of(x: u64, what: &str) -> io::Result<i32> {
    i32::try_from(x).map_err(|_| invalid(format!("{what} {x} does not fit BAM")))
}

/// A `Z` field: tag, type, the bytes, NUL.
fn push_z(out: &mut Vec<u8>, tag: &[u8; 2], value: &[u8]) {
    out.extend_from_slice(tag);
    out.push(b'Z');
    out.extend_from_slice(value);
    out.push(0);
}

/// An `i` field, as a 32-bit integer.
fn push_i(out: &mut Vec<u8>, tag: &[u8; 2], value: i64) -> io::Result<()> {
    let v = i32::try_from(value)
        .map_err(|_| invalid(format!("{} {value} does not fit BAM", tag.escape_ascii())))?;
    out.extend_from_slice(tag);
    out.push(b'i');
    out.extend_from_slice(&v.to_le_bytes());
    Ok(())
}

/// `r` as one BAM record (block size first). Integer fields are written as
/// type `i` (32 bits), as a SAM parser that does not narrow them reads
/// them. A CIGAR of more than 65,535 operations goes to the `CG` field
/// (SAM spec §4.2.2).
pub fn push_bam(out: &mut Vec<u8>, r: &Record<'_>, rg: Option<&[u8]>) -> io::Result<()> {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    let name: &[u8] = if r.name.is_empty() { b"*" } else { r.name };
    if name.len() > 254
        || name
            .iter()
            .any(|&b| !(b'!'..=b'~').contains(&b) || b == b'@')
    {
        return Err(invalid(format!(
            "read name {} cannot be written to BAM",
            name.escape_ascii()
        )));
    }
    let refid = |p: Option<(u32, u64)>| -> io::Result<(i32, i32)> {
        match p {
            Some((c, pos)) => Ok((i32_of(u64::from(c), "contig")?, i32_of(pos, "position")?)),
            None => Ok((-1, -1)),
        }
    };
    let (ref_id, pos) = refid(r.place)?;
    out.extend_from_slice(&ref_id.to_le_bytes());
    out.extend_from_slice(&pos.to_le_bytes());
    out.push((name.len() + 1) as u8);
    out.push(r.mapq);
    let bin = match r.place {
        Some((_, p)) => {
            let span = r.cigar.span();
            reg2bin(p, p + span.max(1) - 1)
        }
        None => 4680,
    };
    out.extend_from_slice(&bin.to_le_bytes());
    let n_ops = r.cigar.len();
    let long_cigar = n_ops > usize::from(u16::MAX);
    out.extend_from_slice(&(if long_cigar { 2 } else { n_ops as u16 }).to_le_bytes());
    out.extend_from_slice(&r.flag.to_le_bytes());
    let l_seq = u32::try_from(r.seq.len()).map_err(|_| invalid("read too long".into()))?;
    out.extend_from_slice(&l_seq.to_le_bytes());
    let (next_id, next_pos) = refid(r.next)?;
    out.extend_from_slice(&next_id.to_le_bytes());
    out.extend_from_slice(&next_pos.to_le_bytes());
    let tlen = i32::try_from(r.tlen).map_err(|_| invalid(format!("TLEN {}", r.tlen)))?;
    out.extend_from_slice(&tlen.to_le_bytes());
    out.extend_from_slice(name);
    out.push(0);
    let push_ops = |out: &mut Vec<u8>| {
        r.cigar
            .for_each(|o, n| out.extend_from_slice(&((n << 4) | op_code(o)).to_le_bytes()))
    };
    if long_cigar {
        // kSmN: the read's length soft-clipped, the reference span skipped.
        let span = u32::try_from(r.cigar.span()).map_err(|_| invalid("CIGAR span".into()))?;
        out.extend_from_slice(&((l_seq << 4) | 4).to_le_bytes());
        out.extend_from_slice(&((span << 4) | 3).to_le_bytes());
    } else {
        push_ops(out);
    }
    // SEQ two bases a byte (the reverse complement for a reverse record).
    let table = &BAM_BASE[usize::from(r.rev())];
    let code = |b: &u8| table[*b as usize];
    if r.rev() {
        let mut it = r.seq.iter().rev().map(code);
        while let Some(a) = it.next() {
            out.push((a << 4) | it.next().unwrap_or(0));
        }
    } else {
        let pairs = r.seq.chunks_exact(2);
        let last = pairs.remainder().first().map(|b| code(b) << 4);
        out.extend(pairs.map(|p| (code(&p[0]) << 4) | code(&p[1])));
        out.extend(last);
    }
    match r.qual {
        Some(q) if !r.seq.is_empty() => {
            if q.len() != r.seq.len() || q.iter().any(|&b| !(b'!'..=b'~').contains(&b)) {
                return Err(invalid(format!(
                    "qualities of {} cannot be written to BAM",
                    name.escape_ascii()
                )));
            }
            if r.rev() {
                out.extend(q.iter().rev().map(|b| b - 33));
            } else {
                out.extend(q.iter().map(|b| b - 33));
            }
        }
        _ => out.extend(std::iter::repeat_n(0xff, r.seq.len())),
    }
    let t = &r.tags;
    if let Some(nm) = t.nm {
        push_i(out, b"NM", i64::from(nm))?;
    }
    if let Some(md) = t.md {
        push_z(out, b"MD", md);
    }
    if let Some(s) = t.score {
        push_i(out, b"AS", i64::from(s))?;
    }
    if let Some(s) = t.xs {
        push_i(out, b"XS", i64::from(s))?;
    }
    if let Some(x) = t.x0 {
        push_i(out, b"X0", x as i64)?;
    }
    if let Some(x) = t.x1 {
        push_i(out, b"X1", x as i64)?;
    }
    if !t.mc.is_none() {
        out.extend_from_slice(b"MCZ");
        t.mc.push_text(out);
        out.push(0);
    }
    if !t.sa.is_empty() {
        push_z(out, b"SA", t.sa);
    }
    if !t.xa.is_empty() {
        push_z(out, b"XA", t.xa);
    }
    if let Some(id) = rg {
        push_z(out, b"RG", id);
    }
    if long_cigar {
        out.extend_from_slice(b"CGBI");
        out.extend_from_slice(&(n_ops as u32).to_le_bytes());
        push_ops(out);
    }
    let size = u32::try_from(out.len() - start - 4).map_err(|_| invalid("record size".into()))?;
    out[start..start + 4].copy_from_slice(&size.to_le_bytes());
    Ok(())
}
