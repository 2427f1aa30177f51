//! A recorded trace: a CSV file with a header row and a `time` column, read as
//! a stream (one reused record, never the whole file) from any reader.
//!
//! Rows must be in time order. With `sort = true` the whole trace is read into
//! memory first (16 bytes per row: time and key, up to 32 while the buffer
//! grows) and sorted stably, so rows with equal times keep their file order.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{Arrival, ArrivalResult, TraceError};
use crate::time::{Nanos, TimeUnit};

/// How to read a CSV trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvOptions {
    pub path: PathBuf,
    /// Unit of the `time` column; `S` means decimal seconds.
    pub time_unit: TimeUnit,
    /// Name of the time column.
    pub time_column: String,
    /// Name of the client key column, if requests belong to clients. Key text
    /// is hashed to a number ([`super::key_hash`]).
    pub key_column: Option<String>,
    /// Read every row into memory and sort by time (stable) instead of
    /// refusing rows that go back in time.
    pub sort: bool,
}

impl CsvOptions {
    /// Options for a file with the defaults: decimal seconds in `time`, no sort.
    pub fn new(path: impl Into<PathBuf>) -> CsvOptions {
        CsvOptions {
            path: path.into(),
            time_unit: TimeUnit::S,
            time_column: "time".into(),
            key_column: None,
            sort: false,
        }
    }
}

/// Bytes of memory a sorted trace holds per row (a `u64` timestamp and key).
pub const SORT_BYTES_PER_ROW: u64 = 16;

pub struct CsvTrace<R: Read = File> {
    path: PathBuf,
    reader: csv::Reader<LfLines<R>>,
    record: csv::ByteRecord,
    time_index: usize,
    key_index: Option<usize>,
    time_column: String,
    unit: TimeUnit,
    last: Nanos,
    rows: u64,
    /// Rows earlier than the row before them (only counted when sorting).
    out_of_order: u64,
    /// With `sort`, the sorted times still to hand out.
    sorted: Option<std::vec::IntoIter<Arrival>>,
    done: bool,
}

impl CsvTrace<File> {
    /// Opens the file and reads its header (and, with `sort`, every row).
    pub fn open(options: &CsvOptions) -> Result<CsvTrace<File>, TraceError> {
        let file = File::open(&options.path)
            .map_err(|source| TraceError::Open { path: options.path.clone(), source })?;
        CsvTrace::from_reader(file, options)
    }
}

impl<R: Read> CsvTrace<R> {
    /// Reads a trace from any reader; `options.path` only names it in errors.
    pub fn from_reader(input: R, options: &CsvOptions) -> Result<CsvTrace<R>, TraceError> {
        let path = options.path.clone();
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .has_headers(true)
            .buffer_capacity(1 << 16)
            .from_reader(LfLines::new(input));
        let headers = reader.byte_headers().map_err(|e| csv_error(&path, e))?.clone();
        if headers.is_empty() || (headers.len() == 1 && headers[0].is_empty()) {
            return Err(TraceError::File {
                path,
                message: "the file is empty: expected a header row with a `time` column".into(),
            });
        }
        let column = |name: &str| {
            headers.iter().position(|h| trim_ascii(h) == name.as_bytes()).ok_or_else(|| TraceError::File {
                path: path.clone(),
                message: format!(
                    "no `{name}` column in the header (found: {})",
                    headers
                        .iter()
                        .map(|h| format!("`{}`", String::from_utf8_lossy(h)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
        };
        let time_index = column(&options.time_column)?;
        let key_index = options.key_column.as_deref().map(column).transpose()?;
        let mut trace = CsvTrace {
            path,
            reader,
            record: csv::ByteRecord::new(),
            time_index,
            key_index,
            time_column: options.time_column.clone(),
            unit: options.time_unit,
            last: Nanos::ZERO,
            rows: 0,
            out_of_order: 0,
            sorted: None,
            done: false,
        };
        if options.sort {
            let mut rows = Vec::new();
            while let Some(r) = trace.read_one(false) {
                rows.push(r?);
            }
            // Stable: rows with equal times keep their file order.
            rows.sort_by_key(|a| a.time);
            trace.done = false;
            trace.sorted = Some(rows.into_iter());
        }
        Ok(trace)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Data rows read so far (all of them once a sorted trace is open).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Rows that came earlier than the row before them (sorted traces only).
    pub fn out_of_order(&self) -> u64 {
        self.out_of_order
    }

    /// Whether the trace was read into memory and sorted.
    pub fn is_sorted_in_memory(&self) -> bool {
        self.sorted.is_some()
    }

    fn row_error(&self, message: String) -> TraceError {
        let line = self.record.position().map_or(0, |p| p.line());
        TraceError::Row { path: self.path.clone(), line, message }
    }

    /// Reads one row; `in_order` refuses a row earlier than the one before.
    fn read_one(&mut self, in_order: bool) -> Option<ArrivalResult> {
        match self.reader.read_byte_record(&mut self.record) {
            Ok(false) => {
                self.done = true;
                if self.rows == 0 {
                    return Some(Err(TraceError::File {
                        path: self.path.clone(),
                        message: "the trace has a header but no rows".into(),
                    }));
                }
                None
            }
            Err(e) => Some(Err(csv_error(&self.path, e))),
            Ok(true) => {
                let col = &self.time_column;
                let Some(field) = self.record.get(self.time_index) else {
                    return Some(Err(self.row_error(format!(
                        "field `{col}` (column {}) is missing: the row has {} field{}",
                        self.time_index + 1,
                        self.record.len(),
                        if self.record.len() == 1 { "" } else { "s" }
                    ))));
                };
                // Plain digits take the fast path; anything else (spaces, signs,
                // bad text) goes through the full parser and its messages.
                let t = match self.unit.parse_plain(field) {
                    Some(t) => t,
                    None => {
                        if field.contains(&b'\n') {
                            return Some(Err(self.row_error(format!(
                                "field `{col}` runs over several lines: a quote `\"` opened here is never closed"
                            ))));
                        }
                        let text = match std::str::from_utf8(field) {
                            Ok(t) => t,
                            Err(_) => {
                                return Some(Err(self.row_error(format!("field `{col}` is not UTF-8 text"))));
                            }
                        };
                        match self.unit.parse_timestamp(text) {
                            Ok(t) => t,
                            Err(e) => return Some(Err(self.row_error(format!("field `{col}`: {e}")))),
                        }
                    }
                };
                if t < self.last {
                    if in_order {
                        return Some(Err(self.row_error(format!(
                            "field `{col}`: {t} s is earlier than the row before ({} s); a trace must be in time order (or set `sort = true` on the source to sort it in memory)",
                            self.last
                        ))));
                    }
                    self.out_of_order += 1;
                }
                let key = match self.key_index {
                    None => 0,
                    Some(k) => match self.record.get(k) {
                        Some(text) => super::key_hash(trim_ascii(text)),
                        None => {
                            return Some(Err(self.row_error(format!(
                                "the key field (column {}) is missing: the row has {} field{}",
                                k + 1,
                                self.record.len(),
                                if self.record.len() == 1 { "" } else { "s" }
                            ))));
                        }
                    },
                };
                self.last = t;
                self.rows += 1;
                Some(Ok(Arrival { time: t, key }))
            }
        }
    }
}

/// Turns CRLF and lone CR line ends into LF on the way to the CSV parser.
///
/// The parser accepts all three, but counts lines by LF only and miscounts
/// blank CRLF lines, so errors in Windows exports named the wrong line. Only
/// the `time` field is read and a field spanning lines is an error anyway, so
/// rewriting CRs inside quoted fields changes nothing that matters.
pub struct LfLines<R> {
    inner: R,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    eof: bool,
}

impl<R: Read> LfLines<R> {
    pub fn new(inner: R) -> LfLines<R> {
        LfLines { inner, buf: vec![0; 1 << 16].into_boxed_slice(), pos: 0, len: 0, eof: false }
    }

    /// Keeps unread bytes, reads more after them; sets `eof` at the end.
    fn refill(&mut self) -> std::io::Result<()> {
        self.buf.copy_within(self.pos..self.len, 0);
        self.len -= self.pos;
        self.pos = 0;
        loop {
            match self.inner.read(&mut self.buf[self.len..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            return Ok(());
        }
    }
}

impl<R: Read> Read for LfLines<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        // Two bytes buffered (or the end), so a CR's next byte is known.
        while self.len - self.pos < 2 && !self.eof {
            self.refill()?;
        }
        let mut n = 0;
        while n < out.len() && self.pos < self.len {
            if self.buf[self.pos] == b'\r' {
                if self.pos + 1 == self.len && !self.eof {
                    break; // decided on the next call, after a refill
                }
                self.pos += 1;
                if self.pos < self.len && self.buf[self.pos] == b'\n' {
                    continue; // CRLF: drop the CR, copy the LF
                }
                out[n] = b'\n'; // a lone CR
                n += 1;
            } else {
                let avail = &self.buf[self.pos..self.len];
                let run = avail.iter().position(|&b| b == b'\r').unwrap_or(avail.len()).min(out.len() - n);
                out[n..n + run].copy_from_slice(&avail[..run]);
                n += run;
                self.pos += run;
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod lf_tests {
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
    }
}

fn trim_ascii(b: &[u8]) -> &[u8] {
    b.trim_ascii()
}

fn csv_error(path: &Path, e: csv::Error) -> TraceError {
    let line = e.position().map(|p| p.line());
    let message = match e.kind() {
        csv::ErrorKind::Io(err) => format!("read failed: {err}"),
        csv::ErrorKind::Utf8 { err, .. } => format!("invalid UTF-8: {err}"),
        _ => e.to_string(),
    };
    match line {
        Some(line) => TraceError::Row { path: path.to_path_buf(), line, message },
        None => TraceError::File { path: path.to_path_buf(), message },
    }
}

impl<R: Read> Iterator for CsvTrace<R> {
    type Item = ArrivalResult;
    #[inline]
    fn next(&mut self) -> Option<ArrivalResult> {
        if self.done {
            return None;
        }
        if let Some(sorted) = &mut self.sorted {
            return sorted.next().map(Ok);
        }
        let r = self.read_one(true);
        if matches!(r, Some(Err(_))) {
            self.done = true;
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn key_column_hashes_client_names_and_sorting_keeps_keys() {
        let text = "time,client\n0.3,alice\n0.1,bob\n0.2, alice\n";
        let opts = CsvOptions { key_column: Some("client".into()), sort: true, ..CsvOptions::new("t.csv") };
        let rows: Vec<(u64, u64)> = CsvTrace::from_reader(text.as_bytes(), &opts)
            .unwrap()
            .map(|a| a.map(|a| (a.time.0, a.key)).unwrap())
            .collect();
        let (alice, bob) = (super::super::key_hash(b"alice"), super::super::key_hash(b"bob"));
        assert_eq!(rows, [(100_000_000, bob), (200_000_000, alice), (300_000_000, alice)]);
        let opts = CsvOptions { key_column: Some("user".into()), ..CsvOptions::new("t.csv") };
        let e = CsvTrace::from_reader(text.as_bytes(), &opts).err().unwrap().to_string();
        assert!(e.contains("no `user` column"), "{e}");
    }

    fn read(text: &str, sort: bool) -> Result<Vec<u64>, String> {
        let opts = CsvOptions { sort, ..CsvOptions::new("t.csv") };
        let t = CsvTrace::from_reader(text.as_bytes(), &opts).map_err(|e| e.to_string())?;
        t.map(|r| r.map(|a| a.time.0).map_err(|e| e.to_string())).collect()
    }

    #[test]
    fn sort_orders_rows_in_memory_and_counts_the_moves() {
        let opts = CsvOptions { sort: true, ..CsvOptions::new("t.csv") };
        let t = CsvTrace::from_reader(&b"time\n3\n1\n2\n1\n"[..], &opts).unwrap();
        assert!(t.is_sorted_in_memory());
        assert_eq!((t.rows(), t.out_of_order()), (4, 2));
        let v: Vec<u64> = t.map(|r| r.unwrap().time.0 / 1_000_000_000).collect();
        assert_eq!(v, [1, 1, 2, 3]);
    }

    #[test]
    fn sort_still_reports_bad_rows_by_line() {
        let e = read("time\n3\n1\nx\n", true).unwrap_err();
        assert!(e.contains("t.csv, line 4") && e.contains("`x`"), "{e}");
        let e = read("time\n", true).unwrap_err();
        assert!(e.contains("no rows"), "{e}");
    }

    #[test]
    fn backwards_without_sort_suggests_it() {
        let e = read("time\n3\n1\n", false).unwrap_err();
        assert!(e.contains("line 3") && e.contains("sort = true"), "{e}");
    }

    #[test]
    fn custom_time_column_is_named_in_errors() {
        let opts = CsvOptions { time_column: "ts".into(), ..CsvOptions::new("t.csv") };
        let t = CsvTrace::from_reader(&b"id,ts\n1,0.5\n2\n"[..], &opts).unwrap();
        let r: Vec<_> = t.collect();
        let e = r[1].as_ref().unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("field `ts` (column 2) is missing"), "{e}");
    }

    #[test]
    fn open_reads_a_real_file() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(b"time\n0.25\n").unwrap();
        let t = CsvTrace::open(&CsvOptions::new(f.path())).unwrap();
        assert_eq!(t.map(|r| r.unwrap().time.0).collect::<Vec<_>>(), [250_000_000]);
        let e = CsvTrace::open(&CsvOptions::new("/nonexistent/t.csv")).err().unwrap();
        assert!(e.to_string().contains("cannot open trace /nonexistent/t.csv"), "{e}");
    }

    fn times(text: &str) -> Result<Vec<u64>, String> {
        read(text, false)
    }

    #[test]
    fn reads_decimal_seconds_and_ignores_extra_columns() {
        assert_eq!(times("id,time,path\n1,0.995,/a\n2,12,/b\n"), Ok(vec![995_000_000, 12_000_000_000]));
    }

    #[test]
    fn bom_crlf_and_blank_lines_are_fine() {
        assert_eq!(times("\u{feff}time\r\n0.5\r\n\r\n1.5\r\n"), Ok(vec![500_000_000, 1_500_000_000]));
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let e = times("time\n0.1\nabc\n").unwrap_err();
        assert!(e.contains("line 3") && e.contains("`time`") && e.contains("abc"), "{e}");
        let e = times("time\n0.5\n0.4\n").unwrap_err();
        assert!(e.contains("line 3") && e.contains("earlier"), "{e}");
        let e = times("when\n0.5\n").unwrap_err();
        assert!(e.contains("no `time` column"), "{e}");
        let e = times("time\n").unwrap_err();
        assert!(e.contains("no rows"), "{e}");
        let e = times("").unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = times("time\n-1\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("negative"), "{e}");
    }
}
