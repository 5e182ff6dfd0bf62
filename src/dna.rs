//! The DNA alphabet, the bottom layer every other module builds on: ASCII
//! bases → codes 0..=3 ([`CODE`]), complements and reverse complements of
//! codes and of ASCII (IUPAC included), the 2-bit packed text (the index's
//! PAC section: [`pack`], [`packed_base`]) and the hex form of a contig's
//! MD5 (SAM `@SQ M5`).

use rayon::prelude::*;

/// Code of a base that matches none (N, IUPAC, anything but A/C/G/T).
pub const NO_BASE: u8 = 4;

/// Base → code 0..=3 (A, C, G, T, either case); anything else (N, IUPAC)
/// [`NO_BASE`], which matches nothing.
pub static CODE: [u8; 256] = {
    let mut t = [NO_BASE; 256];
    t[b'A' as usize] = 0;
    t[b'C' as usize] = 1;
    t[b'G' as usize] = 2;
    t[b'T' as usize] = 3;
    t[b'a' as usize] = 0;
    t[b'c' as usize] = 1;
    t[b'g' as usize] = 2;
    t[b't' as usize] = 3;
    t
};

/// The code of an ASCII base.
#[inline(always)]
pub fn code(b: u8) -> u8 {
    CODE[b as usize]
}

/// Whether every byte is A/C/G/T (either case): a sequence that can match
/// the text exactly. The empty sequence is not.
pub fn is_acgt(seq: &[u8]) -> bool {
    !seq.is_empty() && seq.iter().all(|&b| code(b) < NO_BASE)
}

/// The complement of a code: A↔T, C↔G; [`NO_BASE`] stays itself.
#[inline(always)]
pub fn complement(c: u8) -> u8 {
    if c < NO_BASE { 3 - c } else { NO_BASE }
}

/// The codes of `seq` (ASCII): [`CODE`] of each base.
pub fn codes(seq: &[u8]) -> Vec<u8> {
    seq.iter().map(|&b| code(b)).collect()
}

/// The reverse complement of a sequence of codes.
pub fn reverse_complement(codes: &[u8]) -> Vec<u8> {
    codes.iter().rev().map(|&c| complement(c)).collect()
}

/// The code `k` steps into a backward search of `seq` (ASCII, only A/C/G/T)
/// on one strand: the forward read is matched from its end; its reverse
/// complement, also from its end, is the complement of the read from its
/// start.
#[inline(always)]
pub fn code_from_end(seq: &[u8], reverse: bool, k: usize) -> u8 {
    if reverse {
        3 - code(seq[k])
    } else {
        code(seq[seq.len() - 1 - k])
    }
}

/// ASCII complement, keeping case; IUPAC codes map to their complements,
/// anything else to itself.
pub static COMPLEMENT: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i as u8;
        i += 1;
    }
    let pairs = b"ATCGRYKMBVDHNNSSWWUA";
    let mut k = 0;
    while k < pairs.len() {
        let (a, b) = (pairs[k], pairs[k + 1]);
        t[a as usize] = b;
        t[a.to_ascii_lowercase() as usize] = b.to_ascii_lowercase();
        if a != b'U' {
            t[b as usize] = a;
            t[b.to_ascii_lowercase() as usize] = a.to_ascii_lowercase();
        }
        k += 2;
    }
    t
};

/// A read's byte as SAM's SEQ has it: the letters BAM can store
/// (`=ACMGRSVTWYHKDBN`) upper-cased, anything else (`.`, `X`, `U`, …) `N`,
/// which is what htslib and noodles make of them in BAM. So fmalign's SAM
/// and the same records as BAM say the same.
pub static SAM_SEQ: [u8; 256] = {
    let mut t = [b'N'; 256];
    let keep = b"=ACMGRSVTWYHKDBN";
    let mut k = 0;
    while k < keep.len() {
        t[keep[k] as usize] = keep[k];
        t[keep[k].to_ascii_lowercase() as usize] = keep[k];
        k += 1;
    }
    t
};

/// The reverse complement of an ASCII sequence ([`COMPLEMENT`] of each
/// byte, last first).
pub fn reverse_complement_ascii(seq: &[u8]) -> impl Iterator<Item = u8> + '_ {
    seq.iter().rev().map(|&b| COMPLEMENT[b as usize])
}

/// Packs codes 0..=3 four to a byte, base `i` in bits `2*(i%4)` of byte
/// `i/4` (the PAC section; in parallel, the bytes independent of threads).
pub fn pack(text: &[u8]) -> Vec<u8> {
    text.par_chunks(4 * 4096)
        .flat_map_iter(|chunk| chunk.chunks(4).map(pack4))
        .collect()
}

/// One byte of [`pack`]: up to four codes, the first in the low bits.
#[inline]
pub fn pack4(q: &[u8]) -> u8 {
    q.iter()
        .enumerate()
        .fold(0u8, |acc, (k, &c)| acc | (c << (2 * k)))
}

/// Base `i` of a packed text.
#[inline]
pub fn packed_base(pac: &[u8], i: u64) -> u8 {
    (pac[(i / 4) as usize] >> (2 * (i % 4))) & 3
}

/// The four codes of each packed byte, in text order.
const UNPACKED: [[u8; 4]; 256] = {
    let mut t = [[0u8; 4]; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 4 {
            t[b][k] = ((b >> (2 * k)) & 3) as u8;
            k += 1;
        }
        b += 1;
    }
    t
};

/// Bases `from..from + out.len()` of a packed text into `out`: what
/// [`packed_base`] gives for each, a byte (four bases) at a time.
pub fn unpack_into(pac: &[u8], from: u64, out: &mut [u8]) {
    let n = out.len() as u64;
    // Up to the first whole byte, then whole bytes, then the rest.
    let head = ((4 - from % 4) % 4).min(n) as usize;
    for (k, x) in out[..head].iter_mut().enumerate() {
        *x = packed_base(pac, from + k as u64);
    }
    let first = ((from + head as u64) / 4) as usize;
    let mut chunks = out[head..].chunks_exact_mut(4);
    for (x, &b) in (&mut chunks).zip(&pac[first..]) {
        x.copy_from_slice(&UNPACKED[b as usize]);
    }
    let rest = chunks.into_remainder();
    let at = from + n - rest.len() as u64;
    for (k, x) in rest.iter_mut().enumerate() {
        *x = packed_base(pac, at + k as u64);
    }
}

/// An MD5 digest in lower-case hex (SAM `@SQ M5`, `fmalign info`).
pub fn md5_hex(md5: &[u8; 16]) -> String {
    md5.iter().map(|b| format!("{b:02x}")).collect()
}

/// The code (0..=3) of a letter `ACGTacgt`: bits 1–2 of the letter
/// XOR bits 2–3 (A 0x41 → 0, C 0x43 → 1, G 0x47 → 2, T 0x54 → 3; lower case
/// differs in bit 5 only).
#[inline]
fn ascii_code(b: u8) -> u8 {
    ((b >> 1) ^ (b >> 2)) & 3
}

/// [`ascii_code`] of eight letters (the first in the low byte), packed
/// two bits each into the low 16 bits, the first lowest.
#[inline]
fn pack8(x: u64) -> u64 {
    let y = ((x >> 1) ^ (x >> 2)) & 0x0303_0303_0303_0303;
    let y = (y | (y >> 6)) & 0x000F_000F_000F_000F;
    let y = (y | (y >> 12)) & 0x0000_00FF_0000_00FF;
    (y | (y >> 24)) & 0xFFFF
}

/// Up to 32 codes packed into a word, code `k` in bits `2k` (bits past the
/// codes zero).
fn pack_word(codes: &[u8]) -> u64 {
    codes
        .iter()
        .enumerate()
        .fold(0u64, |w, (k, &b)| w | (u64::from(b & 3) << (2 * k)))
}

/// A text of codes 0..=3 packed 32 bases to a `u64` word, base `i` in bits
/// `2*(i%32)` of word `i/32`: on a little-endian machine its bytes are the
/// PAC section ([`PackedText::pac`], the same bytes as [`pack`]). A quarter
/// of a byte per base, for the builds that must fit a memory limit. Bases
/// past the end read as 0 (one zero word is kept after the last), so that
/// [`PackedText::word_at`] can read 32 bases anywhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedText {
    words: Vec<u64>,
    len: usize,
}

impl Default for PackedText {
    fn default() -> Self {
        PackedText::with_capacity(0)
    }
}

impl PackedText {
    /// An empty text with room for `bases` bases.
    pub fn with_capacity(bases: usize) -> Self {
        let mut words = Vec::with_capacity(bases / 32 + 2);
        words.push(0);
        PackedText { words, len: 0 }
    }

    /// Packs codes 0..=3 (in parallel).
    pub fn from_codes(codes: &[u8]) -> Self {
        let mut words: Vec<u64> = codes.par_chunks(32).map(pack_word).collect();
        words.push(0);
        PackedText {
            words,
            len: codes.len(),
        }
    }

    /// Appends a code 0..=3.
    #[inline]
    pub fn push(&mut self, c: u8) {
        debug_assert!(c < 4);
        let w = self.len / 32;
        if w + 1 == self.words.len() {
            self.words.push(0);
        }
        self.words[w] |= u64::from(c & 3) << (2 * (self.len % 32));
        self.len += 1;
    }

    /// Appends bases given as the letters `ACGTacgt` (the caller has
    /// checked them; any other byte gives an unspecified code): what
    /// [`PackedText::push`] of each code does, a word of 32 bases at a
    /// time (the FASTA scan's inner loop).
    pub fn extend_ascii(&mut self, bases: &[u8]) {
        let mut rest = bases;
        while !rest.is_empty() && !self.len.is_multiple_of(32) {
            self.push(ascii_code(rest[0]));
            rest = &rest[1..];
        }
        let mut words = rest.chunks_exact(32);
        self.words.reserve(words.len());
        for w in words.by_ref() {
            let eight = |k: usize| {
                pack8(u64::from_le_bytes(
                    w[8 * k..8 * k + 8].try_into().expect("8 bytes"),
                ))
            };
            let word = eight(0) | eight(1) << 16 | eight(2) << 32 | eight(3) << 48;
            // The zero word past the end becomes this word; a new one follows.
            let last = self.words.len() - 1;
            self.words[last] = word;
            self.words.push(0);
            self.len += 32;
        }
        for &b in words.remainder() {
            self.push(ascii_code(b));
        }
    }

    /// Appends codes 0..=3: what [`PackedText::push`] of each does, the
    /// whole words packed in parallel.
    pub fn extend_codes(&mut self, codes: &[u8]) {
        let mut rest = codes;
        while !rest.is_empty() && !self.len.is_multiple_of(32) {
            self.push(rest[0]);
            rest = &rest[1..];
        }
        let whole = rest.len() / 32 * 32;
        let words: Vec<u64> = rest[..whole].par_chunks(32).map(pack_word).collect();
        // The zero word past the end becomes the first new word.
        self.words.pop();
        self.words.extend_from_slice(&words);
        self.words.push(0);
        self.len += whole;
        for &c in &rest[whole..] {
            self.push(c);
        }
    }

    /// Number of bases.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bases.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Base `i` (0 past the end).
    #[inline]
    pub fn get(&self, i: usize) -> u8 {
        ((self.words.get(i / 32).copied().unwrap_or(0) >> (2 * (i % 32))) & 3) as u8
    }

    /// The 32 bases from `i`, base `i` in the low bits; bases past the end
    /// are 0. `i` may be at most `len`.
    #[inline]
    pub fn word_at(&self, i: usize) -> u64 {
        debug_assert!(i <= self.len);
        let (q, r) = (i / 32, 2 * (i % 32));
        let lo = self.words[q] >> r;
        if r == 0 {
            lo
        } else {
            lo | (self.words[q + 1] << (64 - r))
        }
    }

    /// Asks the CPU to bring the bases from `i` (up to 32 of them) into
    /// cache: a hint, no effect on results. Random reads of the text (a
    /// sort gathering the next 32 bases of each suffix) issue it a few
    /// items ahead, so that their cache misses overlap.
    #[inline]
    pub fn prefetch(&self, i: usize) {
        if let Some(w) = self.words.get(i / 32) {
            prefetch(w);
        }
    }

    /// The words as [`crate::sa::steps::Backend::pack_text`] packs the text
    /// (first base in the top bits, `len / 32 + 2` words, zero-padded): what
    /// the steps of a backend read.
    pub fn msb_words(&self) -> Vec<u64> {
        let mut out = vec![0u64; self.len / 32 + 2];
        let used = self.len.div_ceil(32);
        out[..used]
            .par_iter_mut()
            .zip(&self.words[..used])
            .for_each(|(o, &w)| *o = reverse_fields(w));
        out
    }

    /// The PAC section: `ceil(len / 4)` bytes, base `i` in bits `2*(i%4)`
    /// of byte `i/4`.
    pub fn pac(&self) -> &[u8] {
        #[cfg(target_endian = "big")]
        compile_error!("PackedText::pac assumes a little-endian machine");
        &bytemuck::cast_slice(&self.words)[..self.len.div_ceil(4)]
    }

    /// The codes, one byte per base (in parallel).
    pub fn to_codes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.len];
        out.par_chunks_mut(32).enumerate().for_each(|(w, c)| {
            let word = self.words[w];
            for (k, b) in c.iter_mut().enumerate() {
                *b = ((word >> (2 * k)) & 3) as u8;
            }
        });
        out
    }

    /// Reverses the text in place (the mirror index is built over the
    /// reversed text): no second copy.
    pub fn reverse(&mut self) {
        let used = self.len.div_ceil(32);
        if used == 0 {
            return;
        }
        let words = &mut self.words[..used];
        words.reverse();
        for w in words.iter_mut() {
            *w = reverse_fields(*w);
        }
        // The text now ends at the top of the last word: shift it down by
        // the unused fields.
        let s = 2 * (used * 32 - self.len);
        if s > 0 {
            for k in 0..used {
                let next = if k + 1 < used { words[k + 1] } else { 0 };
                words[k] = (words[k] >> s) | (next << (64 - s));
            }
        }
    }

    /// Gives back unused capacity (keeping the zero word past the end).
    pub fn shrink_to_fit(&mut self) {
        self.words.shrink_to_fit();
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.words.capacity() * 8
    }
}

/// Asks the CPU to bring `*r`'s cache line into cache (a hint: it reads
/// nothing, cannot fault, and changes no result).
#[inline]
pub fn prefetch<T>(r: &T) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    // SAFETY: `_mm_prefetch` needs SSE, which this cfg guarantees; a
    // prefetch of any address is defined (it is a hint), and `r` is a live
    // reference besides.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((r as *const T).cast());
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = r;
}

/// Calls `body(i)` for `i` in `0..len` in order, having called `pre(i)`
/// `ahead` indices earlier (`pre` is a prefetch of what `body(i)` will
/// read at random, so that the cache misses of a gather overlap).
#[inline]
pub fn for_each_ahead(
    len: usize,
    ahead: usize,
    mut pre: impl FnMut(usize),
    mut body: impl FnMut(usize),
) {
    (0..ahead.min(len)).for_each(&mut pre);
    for i in 0..len {
        if i + ahead < len {
            pre(i + ahead);
        }
        body(i);
    }
}

/// The 32 two-bit fields of `w` in reverse order (field 0 ↔ field 31).
#[inline]
pub fn reverse_fields(w: u64) -> u64 {
    let x = w.reverse_bits();
    ((x >> 1) & 0x5555_5555_5555_5555) | ((x & 0x5555_5555_5555_5555) << 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `unpack_into` gives `packed_base` of every base, over ranges of
    /// every start and length modulo 4.
    #[test]
    fn unpack_into_is_packed_base() {
        let pac: Vec<u8> = (0..64u32).map(|i| (i * 97 + 13) as u8).collect();
        for from in 0..40u64 {
            for len in 0..60usize {
                if from + len as u64 > 4 * pac.len() as u64 {
                    continue;
                }
                let mut out = vec![9u8; len];
                unpack_into(&pac, from, &mut out);
                let want: Vec<u8> = (0..len as u64)
                    .map(|k| packed_base(&pac, from + k))
                    .collect();
                assert_eq!(out, want, "from {from}, {len} bases");
            }
        }
    }

    #[test]
    fn complement_table() {
        let s: Vec<u8> = b"ACGTNacgtnRYKMBVDH."
            .iter()
            .map(|&b| COMPLEMENT[b as usize])
            .collect();
        assert_eq!(&s, b"TGCANtgcanYRMKVBHD.");
        let rc: Vec<u8> = reverse_complement_ascii(b"AACgN").collect();
        assert_eq!(&rc, b"NcGTT");
    }

    /// Codes and ASCII agree: the reverse complement of the codes is the
    /// codes of the ASCII reverse complement.
    #[test]
    fn code_and_ascii_complements_agree() {
        let seq = b"ACGTNacgtnRYKM";
        let rc: Vec<u8> = reverse_complement_ascii(seq).collect();
        assert_eq!(reverse_complement(&codes(seq)), codes(&rc));
        for k in 0..4 {
            assert_eq!(code_from_end(b"ACGT", false, k), 3 - k as u8);
            assert_eq!(code_from_end(b"AACG", true, k), code(rc_of(b"AACG")[3 - k]));
        }
        assert!(is_acgt(b"acgT") && !is_acgt(b"") && !is_acgt(b"ACN"));
    }

    fn rc_of(s: &[u8]) -> Vec<u8> {
        reverse_complement_ascii(s).collect()
    }

    #[test]
    fn pack_round_trip() {
        let text: Vec<u8> = (0..100_003).map(|i| (i % 7 % 4) as u8).collect();
        let pac = pack(&text);
        assert_eq!(pac.len(), text.len().div_ceil(4));
        for (i, &c) in text.iter().enumerate() {
            assert_eq!(packed_base(&pac, i as u64), c);
        }
    }

    #[test]
    fn md5_in_hex() {
        let mut d = [0u8; 16];
        d[0] = 0xab;
        d[15] = 0x01;
        assert_eq!(md5_hex(&d), "ab000000000000000000000000000001");
    }

    #[test]
    fn packed_text_agrees_with_codes() {
        for n in [0usize, 1, 31, 32, 33, 63, 64, 65, 100, 1000] {
            let codes: Vec<u8> = (0..n).map(|i| ((i * 7 + i / 3) % 4) as u8).collect();
            let mut pushed = PackedText::with_capacity(0);
            codes.iter().for_each(|&c| pushed.push(c));
            let t = PackedText::from_codes(&codes);
            assert_eq!(t, pushed, "n = {n}");
            assert_eq!(t.len(), n);
            assert_eq!(t.to_codes(), codes);
            assert_eq!(t.pac(), pack(&codes).as_slice());
            for i in 0..=n {
                let w = t.word_at(i);
                for k in 0..32 {
                    let want = codes.get(i + k).copied().unwrap_or(0);
                    assert_eq!((w >> (2 * k)) & 3, want as u64, "n = {n}, i = {i}, k = {k}");
                }
            }
            let mut r = t.clone();
            r.reverse();
            let mut rev = codes.clone();
            rev.reverse();
            assert_eq!(r, PackedText::from_codes(&rev), "reversed, n = {n}");
        }
    }

    #[test]
    fn letters_appended_like_their_codes() {
        // The oracle: each letter's code, pushed one by one.
        let letters = b"ACGTacgt";
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for first in [0usize, 1, 5, 31, 32, 33] {
            for len in [0usize, 1, 7, 8, 31, 32, 33, 63, 64, 65, 200] {
                let text: Vec<u8> = (0..first + len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        letters[(seed % 8) as usize]
                    })
                    .collect();
                let mut pushed = PackedText::with_capacity(0);
                for &b in &text {
                    let code = b"ACGT".iter().position(|&l| l == b.to_ascii_uppercase());
                    pushed.push(code.expect("a base") as u8);
                }
                let mut extended = PackedText::with_capacity(0);
                extended.extend_ascii(&text[..first]);
                extended.extend_ascii(&text[first..]);
                assert_eq!(extended, pushed, "first {first}, len {len}");
                // The same from codes (the BWT share of a distributed build).
                let codes: Vec<u8> = (0..text.len()).map(|i| pushed.get(i)).collect();
                let mut from_codes = PackedText::with_capacity(0);
                from_codes.extend_codes(&codes[..first]);
                from_codes.extend_codes(&codes[first..]);
                assert_eq!(from_codes, pushed, "codes: first {first}, len {len}");
            }
        }
    }

    #[test]
    fn fields_reverse() {
        let w = 0x1234_5678_9abc_def0u64;
        let r = reverse_fields(w);
        for k in 0..32 {
            assert_eq!((r >> (2 * k)) & 3, (w >> (2 * (31 - k))) & 3);
        }
    }
}
