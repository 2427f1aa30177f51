//! CR/LF to LF: the reader between the input and the record splitter.
//!
//! Owns [`LfLines`] and `cr_to_lf`, so that the splitter (and the csv crate
//! in the test oracle) only ever see LF line ends.

use std::io::Read;

/// Turns CRLF and lone CR line ends into LF on the way to the record
/// splitter.
///
/// The splitter's fast path only knows LF. `csv_core` (its general path, and
/// the csv crate in the test oracle) accepts all three, but counts lines by
/// LF only and miscounts blank CRLF lines, so errors in Windows exports named
/// the wrong line. Only the time and key fields are read, and a time field
/// spanning lines is an error anyway, so rewriting CRs inside quoted fields
/// changes nothing that matters (a key with a CR in quotes hashes as if it
/// were an LF).
///
/// Reads straight into the caller's buffer and looks for CRs with `memchr`:
/// a file without them (the common case) passes through untouched, with no
/// copy. A CR is written out as LF at once; when it is the last byte of a
/// read, an LF at the start of the next read is its pair and is dropped.
pub struct LfLines<R> {
    inner: R,
    /// The last byte handed out was a CR (now LF): drop a leading LF.
    after_cr: bool,
    /// The inner reader has said end of input; it is not asked again.
    eof: bool,
}

impl<R: Read> LfLines<R> {
    pub fn new(inner: R) -> LfLines<R> {
        LfLines { inner, after_cr: false, eof: false }
    }
}

impl<R: Read> Read for LfLines<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        // Loops only when a read brought nothing but the LF of a split CRLF:
        // `Ok(0)` means the end of the input, never "nothing this time".
        while !self.eof {
            let n = match self.inner.read(out) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let skip = usize::from(std::mem::take(&mut self.after_cr) && out[0] == b'\n');
            let (len, ends_in_cr) = cr_to_lf(&mut out[..n], skip);
            self.after_cr = ends_in_cr;
            if len > 0 {
                return Ok(len);
            }
        }
        Ok(0)
    }
}

/// Rewrites `buf[skip..]` into the front of `buf` with CRLF and lone CR made
/// LF. Returns the new length and whether the last byte was a CR (its LF, if
/// any, is in the next read).
fn cr_to_lf(buf: &mut [u8], skip: usize) -> (usize, bool) {
    let n = buf.len();
    let Some(first) = memchr::memchr(b'\r', &buf[skip..]) else {
        if skip > 0 {
            buf.copy_within(skip.., 0);
        }
        return (n - skip, false);
    };
    let (mut read, mut write, mut cr) = (skip, 0, skip + first);
    loop {
        if read != write {
            buf.copy_within(read..cr, write);
        }
        write += cr - read;
        buf[write] = b'\n';
        write += 1;
        read = cr + 1;
        if read == n {
            return (write, true);
        }
        if buf[read] == b'\n' {
            read += 1;
        }
        match memchr::memchr(b'\r', &buf[read..]) {
            Some(i) => cr = read + i,
            None => {
                buf.copy_within(read..n, write);
                return (write + n - read, false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads through `LfLines` with reads of `chunk` bytes from a source
    /// that itself returns at most `feed` bytes per read.
    fn convert(input: &[u8], feed: usize, chunk: usize) -> Vec<u8> {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let k = self.0.len().min(self.1).min(out.len());
                out[..k].copy_from_slice(&self.0[..k]);
                self.0 = &self.0[k..];
                Ok(k)
            }
        }
        let mut r = LfLines::new(Trickle(input, feed));
        let mut got = Vec::new();
        let mut buf = vec![0; chunk];
        loop {
            let k = r.read(&mut buf).unwrap();
            if k == 0 {
                return got;
            }
            got.extend_from_slice(&buf[..k]);
        }
    }

    #[test]
    fn crlf_and_lone_cr_become_lf_at_any_read_size() {
        let input = b"a\r\nb\rc\r\r\nd\n\r";
        for feed in 1..6 {
            for chunk in 1..6 {
                assert_eq!(convert(input, feed, chunk), b"a\nb\nc\n\nd\n\n", "feed {feed} chunk {chunk}");
            }
        }
        assert_eq!(convert(b"", 3, 3), b"");
        assert_eq!(convert(b"\r", 1, 1), b"\n");
    }

    /// The obvious whole-input rewrite, to compare against.
    fn reference(input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < input.len() {
            if input[i] == b'\r' {
                out.push(b'\n');
                if input.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            } else {
                out.push(input[i]);
            }
            i += 1;
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn matches_the_whole_input_rewrite(
            input in proptest::collection::vec(proptest::sample::select(vec![b'\r', b'\n', b'a']), 0..64),
            feed in 1usize..8,
            chunk in 1usize..8,
        ) {
            proptest::prop_assert_eq!(convert(&input, feed, chunk), reference(&input));
        }

        /// Feed and read sizes that change from one read to the next, and
        /// longer inputs with long runs free of CRs.
        #[test]
        fn matches_the_whole_input_rewrite_at_changing_sizes(
            input in proptest::collection::vec(
                proptest::sample::select(vec![b'\r', b'\n', b'a', b'b', b'c', b'd', b'e', b'f']), 0..300),
            feeds in proptest::collection::vec(1usize..40, 1..16),
            chunks in proptest::collection::vec(1usize..40, 1..16),
        ) {
            proptest::prop_assert_eq!(convert_varying(&input, &feeds, &chunks), reference(&input));
        }
    }

    /// Like [`convert`], with the feed and read sizes taken in turn from
    /// `feeds` and `chunks`.
    fn convert_varying(input: &[u8], feeds: &[usize], chunks: &[usize]) -> Vec<u8> {
        struct Trickle<'a>(&'a [u8], std::iter::Cycle<std::slice::Iter<'a, usize>>);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let k = self.0.len().min(*self.1.next().unwrap()).min(out.len());
                out[..k].copy_from_slice(&self.0[..k]);
                self.0 = &self.0[k..];
                Ok(k)
            }
        }
        let mut r = LfLines::new(Trickle(input, feeds.iter().cycle()));
        let mut got = Vec::new();
        let mut buf = [0; 64];
        for &chunk in chunks.iter().cycle() {
            let k = r.read(&mut buf[..chunk]).unwrap();
            if k == 0 {
                break;
            }
            got.extend_from_slice(&buf[..k]);
        }
        got
    }

    #[test]
    fn cr_at_the_end_and_cr_cr_lf() {
        for feed in 1..5 {
            for chunk in 1..5 {
                let at = format!("feed {feed} chunk {chunk}");
                assert_eq!(convert(b"a\r", feed, chunk), b"a\n", "{at}");
                assert_eq!(convert(b"\r\r", feed, chunk), b"\n\n", "{at}");
                assert_eq!(convert(b"\r\r\n", feed, chunk), b"\n\n", "{at}");
                assert_eq!(convert(b"a\r\r\nb\r\r\n", feed, chunk), b"a\n\nb\n\n", "{at}");
                assert_eq!(convert(b"\r\n\r\n", feed, chunk), b"\n\n", "{at}");
                assert_eq!(convert(b"\n\r\n\r", feed, chunk), b"\n\n\n", "{at}");
            }
        }
    }

    /// A read whose only byte is the LF of a CRLF split across reads reads
    /// on instead of returning 0, which would end the input early.
    #[test]
    fn a_read_of_only_the_dropped_lf_is_not_the_end() {
        assert_eq!(convert(b"a\r\nb", 1, 4), b"a\nb");
        assert_eq!(convert(b"a\r\nb", 2, 2), b"a\nb");
        assert_eq!(convert(b"\r\n\r\n\r\nx", 1, 1), b"\n\n\nx");
    }

    /// `Interrupted` from the inner reader is retried; other errors pass
    /// through and reading can go on; after the inner reader's end of input
    /// it is not asked again.
    #[test]
    fn interrupted_is_retried_and_the_end_is_final() {
        struct Moody(Vec<std::io::Result<Vec<u8>>>);
        impl Read for Moody {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                if self.0.is_empty() {
                    return Ok(0);
                }
                let bytes = self.0.remove(0)?;
                out[..bytes.len()].copy_from_slice(&bytes);
                Ok(bytes.len())
            }
        }
        let interrupted = || Err(std::io::Error::from(std::io::ErrorKind::Interrupted));
        let mut r = LfLines::new(Moody(vec![
            Ok(b"a\r".to_vec()),
            interrupted(),
            Ok(b"\n".to_vec()),
            interrupted(),
            Ok(b"b".to_vec()),
            Err(std::io::Error::other("disk on fire")),
            Ok(b"\rc".to_vec()),
            Ok(vec![]),
            Ok(b"after the end".to_vec()),
        ]));
        let mut buf = [0; 8];
        assert_eq!(r.read(&mut buf).unwrap(), 2);
        assert_eq!(&buf[..2], b"a\n");
        assert_eq!(r.read(&mut buf).unwrap(), 1);
        assert_eq!(&buf[..1], b"b");
        assert_eq!(r.read(&mut buf).unwrap_err().to_string(), "disk on fire");
        assert_eq!(r.read(&mut buf).unwrap(), 2);
        assert_eq!(&buf[..2], b"\nc");
        assert_eq!(r.read(&mut buf).unwrap(), 0);
        assert_eq!(r.read(&mut buf).unwrap(), 0);
        assert_eq!(r.read(&mut []).unwrap(), 0);
    }
}
