//! [`StreamWriter`]: an index file written while its sections are produced,
//! the same bytes as [`crate::write`] without holding any section in memory.
//!
//! The section lengths are known before the first byte (they follow from
//! the text length, the number of contigs and the sampling), so every
//! offset is fixed up front. Sections are then appended to in any
//! interleaving, each one sequentially, through a small buffer per section;
//! the CRCs are computed on the way. `finish` writes the padding, then the
//! header and section table at offset 0, last, so that a file cut short by
//! a crash has no valid header.

use std::io;

use crate::{ALIGN, SectionId, layout, plan};

/// Bytes buffered per section before a positioned write (1 MiB): one
/// 64-byte Occ line at a time costs a copy, not a system call.
pub const STREAM_BUFFER: usize = 1 << 20;

/// Where a [`StreamWriter`] writes: writes at an offset (not moving any
/// cursor) and the file's length. Implemented for [`std::fs::File`] on Unix
/// (`FileExt::write_all_at`, `File::set_len`) and for references to any
/// implementation, so a writer can borrow the file that the caller syncs
/// and renames afterwards.
pub trait WriteAt {
    /// Writes all of `buf` at `offset`, extending the file if need be.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Truncates or extends the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
}

#[cfg(unix)]
impl WriteAt for std::fs::File {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(self, buf, offset)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        std::fs::File::set_len(self, len)
    }
}

impl<W: WriteAt + ?Sized> WriteAt for &W {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        (**self).write_all_at(buf, offset)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        (**self).set_len(len)
    }
}

/// One section being written.
struct Stream {
    id: SectionId,
    /// Where the section starts in the file.
    offset: u64,
    /// Declared length.
    len: u64,
    /// Bytes appended so far (written or buffered).
    appended: u64,
    /// Bytes written to the file so far (the buffer follows them).
    written: u64,
    /// Appended bytes not yet written; at most `cap` long between appends.
    buf: Vec<u8>,
    cap: usize,
    crc: crc32fast::Hasher,
}

impl Stream {
    /// Writes the buffer out at the section's position.
    fn flush<W: WriteAt>(&mut self, out: &W) -> io::Result<()> {
        if !self.buf.is_empty() {
            out.write_all_at(&self.buf, self.offset + self.written)?;
            self.written += self.buf.len() as u64;
            self.buf.clear();
        }
        Ok(())
    }
}

/// Writes an index file whose ten section lengths are known in advance,
/// section bytes appended in any interleaving as they are produced; the
/// file is byte for byte what [`crate::write`] writes for the same flags
/// and section contents.
///
/// ```
/// # #[cfg(unix)] {
/// use fmalign_index_format::{SectionId, StreamWriter, write};
///
/// let path = std::env::temp_dir().join(format!("fmi-doc-{}", std::process::id()));
/// let f = std::fs::File::create(&path).unwrap();
/// let (meta, occ) = (vec![1u8; 128], vec![2u8; 64 * 3]);
/// let mut lens = [0u64; 10];
/// lens[0] = meta.len() as u64;
/// lens[5] = occ.len() as u64;
/// let mut w = StreamWriter::new(&f, 0, lens);
/// for line in occ.chunks(64) {
///     w.append(SectionId::Occ, line).unwrap();
/// }
/// w.append(SectionId::Meta, &meta).unwrap();
/// let file_len = w.finish().unwrap();
///
/// let mut want = Vec::new();
/// let mut sections: Vec<&[u8]> = vec![&[]; 10];
/// sections[0] = &meta;
/// sections[5] = &occ;
/// assert_eq!(write(&mut want, 0, &sections).unwrap(), file_len);
/// assert_eq!(std::fs::read(&path).unwrap(), want);
/// # std::fs::remove_file(&path).unwrap();
/// # }
/// ```
pub struct StreamWriter<W: WriteAt> {
    out: W,
    flags: u32,
    file_len: u64,
    sections: Vec<Stream>,
}

impl<W: WriteAt> StreamWriter<W> {
    /// A writer of a file with these `flags` and section lengths (in
    /// [`SectionId::ALL`] order), buffering up to [`STREAM_BUFFER`] bytes
    /// per section. Nothing is written yet. `out` should be empty: whatever
    /// it holds is overwritten or cut off by [`StreamWriter::finish`].
    pub fn new(out: W, flags: u32, lens: [u64; 10]) -> Self {
        Self::with_buffer(out, flags, lens, STREAM_BUFFER)
    }

    /// [`StreamWriter::new`] with `buffer` bytes buffered per section (at
    /// least 1; a section never gets more than its length).
    pub fn with_buffer(out: W, flags: u32, lens: [u64; 10], buffer: usize) -> Self {
        let parts: Vec<(u64, u32)> = lens.iter().map(|&len| (len, 0)).collect();
        let (table, file_len) = layout(&parts);
        let sections = table
            .iter()
            .map(|s| Stream {
                id: s.id,
                offset: s.offset,
                len: s.len,
                appended: 0,
                written: 0,
                buf: Vec::new(),
                cap: usize::try_from(s.len)
                    .unwrap_or(usize::MAX)
                    .min(buffer.max(1)),
                crc: crc32fast::Hasher::new(),
            })
            .collect();
        StreamWriter {
            out,
            flags,
            file_len,
            sections,
        }
    }

    /// The length the file will have.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Bytes still to be appended to section `id`.
    pub fn remaining(&self, id: SectionId) -> u64 {
        let s = &self.sections[index(id)];
        s.len - s.appended
    }

    /// Appends `bytes` to section `id`, after the bytes appended to it
    /// before. More bytes than the section's declared length are an
    /// `InvalidInput` error that appends nothing. After an I/O error the
    /// file is incomplete: drop the writer and remove the file.
    pub fn append(&mut self, id: SectionId, bytes: &[u8]) -> io::Result<()> {
        let s = &mut self.sections[index(id)];
        let n = bytes.len() as u64;
        if n > s.len - s.appended {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "index section {id}: {} bytes, more than the {} declared",
                    s.appended.saturating_add(n),
                    s.len
                ),
            ));
        }
        s.crc.update(bytes);
        s.appended += n;
        if s.buf.len() + bytes.len() > s.cap {
            s.flush(&self.out)?;
            if bytes.len() >= s.cap {
                // A large append goes straight to the file, not through
                // the buffer.
                self.out.write_all_at(bytes, s.offset + s.written)?;
                s.written += n;
                return Ok(());
            }
        }
        if s.buf.capacity() == 0 {
            s.buf.reserve_exact(s.cap);
        }
        s.buf.extend_from_slice(bytes);
        Ok(())
    }

    /// Completes the file: checks that every section got exactly its
    /// declared length (an `InvalidInput` error naming the first that did
    /// not, with nothing more written), writes the buffered bytes, the zero
    /// padding after each section, then the header and section table with
    /// the sections' CRCs at offset 0, and sets the file's length. Returns
    /// the file length. The caller syncs the file (pass `&File` to keep it).
    pub fn finish(mut self) -> io::Result<u64> {
        if let Some(s) = self.sections.iter().find(|s| s.appended != s.len) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "index section {}: {} bytes, fewer than the {} declared",
                    s.id, s.appended, s.len
                ),
            ));
        }
        let zeros = [0u8; ALIGN as usize];
        let ends: Vec<u64> = self.sections[1..]
            .iter()
            .map(|s| s.offset)
            .chain([self.file_len])
            .collect();
        let mut parts = Vec::with_capacity(self.sections.len());
        for (s, next) in self.sections.iter_mut().zip(ends) {
            // The padding is written, not left to a hole, so the bytes are
            // right whatever the file held before.
            s.buf
                .extend_from_slice(&zeros[..(next - s.offset - s.len) as usize]);
            s.flush(&self.out)?;
            let crc = std::mem::take(&mut s.crc).finalize();
            parts.push((s.len, crc));
        }
        let (head, _, file_len) = plan(self.flags, &parts);
        debug_assert_eq!(file_len, self.file_len);
        self.out.write_all_at(&head, 0)?;
        self.out.set_len(file_len)?;
        Ok(file_len)
    }
}

/// Position of `id` in [`SectionId::ALL`] (ids are 1..=10 in that order).
fn index(id: SectionId) -> usize {
    id as usize - 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{read, write};
    use std::cell::RefCell;

    /// An in-memory file whose unwritten bytes are 0xA5, not zero, so that
    /// a byte the writer leaves to a hole shows.
    #[derive(Default)]
    struct Mem(RefCell<Vec<u8>>);

    impl WriteAt for Mem {
        fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
            let mut v = self.0.borrow_mut();
            let end = offset as usize + buf.len();
            if v.len() < end {
                v.resize(end, 0xA5);
            }
            v[offset as usize..end].copy_from_slice(buf);
            Ok(())
        }

        fn set_len(&self, len: u64) -> io::Result<()> {
            self.0.borrow_mut().resize(len as usize, 0xA5);
            Ok(())
        }
    }

    /// splitmix64: the tests' random numbers, reproducible.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
    }

    fn lens_of(sections: &[Vec<u8>]) -> [u64; 10] {
        std::array::from_fn(|k| sections[k].len() as u64)
    }

    fn expected(flags: u32, sections: &[Vec<u8>]) -> Vec<u8> {
        let refs: Vec<&[u8]> = sections.iter().map(|s| s.as_slice()).collect();
        let mut want = Vec::new();
        write(&mut want, flags, &refs).unwrap();
        want
    }

    /// Streams `sections` in random chunks, in a random interleaving.
    fn stream(rng: &mut Rng, flags: u32, sections: &[Vec<u8>], buffer: usize, out: &Mem) -> u64 {
        let mut w = StreamWriter::with_buffer(out, flags, lens_of(sections), buffer);
        let mut done = [0usize; 10];
        loop {
            let open: Vec<usize> = (0..10).filter(|&k| done[k] < sections[k].len()).collect();
            // Empty appends, to sections finished or not, change nothing.
            if rng.below(8) == 0 {
                w.append(SectionId::ALL[rng.below(10) as usize], &[])
                    .unwrap();
            }
            let Some(&k) = open.get(rng.below(open.len() as u64) as usize) else {
                break;
            };
            let left = sections[k].len() - done[k];
            let chunk = match rng.below(4) {
                0 => 1,
                1 => 64.min(left),
                2 => left,
                _ => 1 + rng.below(left as u64) as usize,
            };
            let id = SectionId::ALL[k];
            w.append(id, &sections[k][done[k]..done[k] + chunk])
                .unwrap();
            done[k] += chunk;
            assert_eq!(w.remaining(id), (sections[k].len() - done[k]) as u64);
        }
        w.finish().unwrap()
    }

    fn random_sections(rng: &mut Rng) -> Vec<Vec<u8>> {
        (0..10)
            .map(|_| {
                let len = match rng.below(5) {
                    0 => 0,
                    1 => rng.below(4),
                    2 => 64 * rng.below(5),
                    _ => rng.below(3000),
                };
                (0..len).map(|_| rng.next() as u8).collect()
            })
            .collect()
    }

    #[test]
    fn random_interleavings_give_the_bytes_of_write() {
        let mut rng = Rng(20);
        for case in 0..300 {
            let sections = random_sections(&mut rng);
            let flags = (case % 2) as u32;
            let want = expected(flags, &sections);
            let buffer = [1, 2, 63, 64, 100, 4096, STREAM_BUFFER][case % 7];
            let out = Mem::default();
            if case % 3 == 0 {
                // Old contents longer than the index: overwritten, cut off.
                out.0.replace(vec![0x5A; want.len() + 1000]);
            }
            let n = stream(&mut rng, flags, &sections, buffer, &out);
            assert_eq!(n, want.len() as u64, "case {case}");
            assert!(out.0.borrow().as_slice() == want.as_slice(), "case {case}");
            read(&out.0.borrow(), true).unwrap();
        }
    }

    #[test]
    fn zero_length_sections() {
        let mut rng = Rng(7);
        let empty = vec![Vec::new(); 10];
        let out = Mem::default();
        assert_eq!(stream(&mut rng, 0, &empty, 64, &out), 384);
        assert!(out.0.borrow().as_slice() == expected(0, &empty).as_slice());
        // Only the last section, and only the first, with bytes.
        for k in [0, 4, 9] {
            let mut s = vec![Vec::new(); 10];
            s[k] = vec![3u8; 65];
            let out = Mem::default();
            stream(&mut rng, 1, &s, 16, &out);
            assert!(
                out.0.borrow().as_slice() == expected(1, &s).as_slice(),
                "{k}"
            );
        }
    }

    #[test]
    fn too_many_bytes_are_refused() {
        let mut lens = [0u64; 10];
        lens[5] = 128;
        let out = Mem::default();
        let mut w = StreamWriter::with_buffer(&out, 0, lens, 64);
        w.append(SectionId::Occ, &[1; 100]).unwrap();
        let e = w.append(SectionId::Occ, &[1; 29]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            e.to_string(),
            "index section occ: 129 bytes, more than the 128 declared"
        );
        let e = w.append(SectionId::Meta, &[1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "index section meta: 1 bytes, more than the 0 declared"
        );
        // The refused appends left nothing behind: the rest fits exactly.
        w.append(SectionId::Occ, &[1; 28]).unwrap();
        assert_eq!(w.remaining(SectionId::Occ), 0);
        w.finish().unwrap();
        let mut sections = vec![Vec::new(); 10];
        sections[5] = vec![1u8; 128];
        assert!(out.0.borrow().as_slice() == expected(0, &sections).as_slice());
    }

    #[test]
    fn too_few_bytes_are_refused() {
        let mut lens = [0u64; 10];
        lens[0] = 128;
        lens[7] = 8;
        let out = Mem::default();
        let mut w = StreamWriter::new(&out, 0, lens);
        w.append(SectionId::Meta, &[0; 128]).unwrap();
        w.append(SectionId::Ssa, &[0; 7]).unwrap();
        let e = w.finish().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            e.to_string(),
            "index section ssa: 7 bytes, fewer than the 8 declared"
        );
        // Nothing was written: no header for a reader to trust.
        assert!(out.0.borrow().is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn writes_a_file() {
        let mut rng = Rng(99);
        let mut sections = random_sections(&mut rng);
        sections[5] = (0..5 * STREAM_BUFFER / 2).map(|i| (i / 64) as u8).collect();
        let want = expected(1, &sections);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.fmi");
        let f = std::fs::File::create(&path).unwrap();
        let mut w = StreamWriter::new(&f, 1, lens_of(&sections));
        for line in sections[5].chunks(64) {
            w.append(SectionId::Occ, line).unwrap();
        }
        for (k, s) in sections.iter().enumerate().filter(|&(k, _)| k != 5) {
            w.append(SectionId::ALL[k], s).unwrap();
        }
        assert_eq!(w.file_len(), want.len() as u64);
        assert_eq!(w.finish().unwrap(), want.len() as u64);
        f.sync_all().unwrap();
        assert!(std::fs::read(&path).unwrap() == want);
    }
}
