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

/// Bytes asked of the input per read. The buffer only grows past this for a
/// line (or quoted record) longer than it.
const BLOCK: usize = 1 << 18;

/// The UTF-8 byte order mark, skipped at the start of the input.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// `Buffer::quote` when no `"` has been seen.
const NO_QUOTE: usize = usize::MAX;

/// `RowRules::key_index` without a key column: no field has this index.
const NO_KEY: usize = usize::MAX;

pub struct CsvTrace<R: Read = File> {
    input: Input<R>,
    rules: RowRules,
    /// With `sort`, the sorted times still to hand out.
    sorted: Option<std::vec::IntoIter<Arrival>>,
    done: bool,
}

/// What a row must hold, and what the rows so far held.
struct RowRules {
    path: PathBuf,
    time_index: usize,
    /// The key column's index, or [`NO_KEY`].
    key_index: usize,
    time_column: String,
    unit: TimeUnit,
    last: Nanos,
    rows: u64,
    /// Rows earlier than the row before them (only counted when sorting).
    out_of_order: u64,
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
        CsvTrace::with_input(Input::new(input), options)
    }

    /// [`CsvTrace::from_reader`] with every record read by the general
    /// (csv_core) parser, as if the input began with a quote. For tests that
    /// compare the two paths.
    #[doc(hidden)]
    pub fn from_reader_general_only(input: R, options: &CsvOptions) -> Result<CsvTrace<R>, TraceError> {
        let mut input = Input::new(input);
        input.buf.quote = 0;
        CsvTrace::with_input(input, options)
    }

    fn with_input(mut input: Input<R>, options: &CsvOptions) -> Result<CsvTrace<R>, TraceError> {
        let path = options.path.clone();
        let headers: Vec<Vec<u8>> = match input.next_record() {
            Ok(Some((_, fields))) => {
                (0..fields.len()).map(|i| fields.get(i).unwrap_or_default().to_vec()).collect()
            }
            Ok(None) => Vec::new(),
            Err(e) => return Err(read_failed(&path, &e)),
        };
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
        let key_index = options.key_column.as_deref().map(column).transpose()?.unwrap_or(NO_KEY);
        let mut trace = CsvTrace {
            input,
            rules: RowRules {
                path,
                time_index,
                key_index,
                time_column: options.time_column.clone(),
                unit: options.time_unit,
                last: Nanos::ZERO,
                rows: 0,
                out_of_order: 0,
            },
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
        &self.rules.path
    }

    /// Data rows read so far (all of them once a sorted trace is open).
    pub fn rows(&self) -> u64 {
        self.rules.rows
    }

    /// Rows that came earlier than the row before them (sorted traces only).
    pub fn out_of_order(&self) -> u64 {
        self.rules.out_of_order
    }

    /// Whether the trace was read into memory and sorted.
    pub fn is_sorted_in_memory(&self) -> bool {
        self.sorted.is_some()
    }

    /// Reads one row; `in_order` refuses a row earlier than the one before.
    #[inline]
    fn read_one(&mut self, in_order: bool) -> Option<ArrivalResult> {
        let rules = &mut self.rules;
        let read = if self.input.general.is_none() {
            match self.input.next_line(rules.time_index, rules.key_index) {
                Line::Row(row) => {
                    let field = |range: Option<(usize, usize)>| range.map(|(a, b)| &self.input.buf.buf[a..b]);
                    return Some(rules.row(row.line, field(row.time), field(row.key), row.fields, in_order));
                }
                Line::End => Ok(None),
                Line::Failed(e) => Err(e),
                Line::Quote => {
                    self.input.start_general();
                    self.input.next_general()
                }
            }
        } else {
            self.input.next_record()
        };
        match read {
            Ok(Some((line, record))) => {
                let key = if rules.key_index == NO_KEY { None } else { record.get(rules.key_index) };
                Some(rules.row(line, record.get(rules.time_index), key, record.len(), in_order))
            }
            Ok(None) => {
                self.done = true;
                if rules.rows == 0 {
                    return Some(Err(TraceError::File {
                        path: rules.path.clone(),
                        message: "the trace has a header but no rows".into(),
                    }));
                }
                None
            }
            Err(e) => Some(Err(read_failed(&rules.path, &e))),
        }
    }
}

impl RowRules {
    /// The arrival in a record of `fields` fields read at `line`, given its
    /// time and key fields (`None` if the record is too short for them).
    #[inline]
    fn row(
        &mut self,
        line: u64,
        time: Option<&[u8]>,
        key: Option<&[u8]>,
        fields: usize,
        in_order: bool,
    ) -> ArrivalResult {
        let row_error = |message: String| Err(TraceError::Row { path: self.path.clone(), line, message });
        let col = &self.time_column;
        let Some(field) = time else {
            return row_error(format!(
                "field `{col}` (column {}) is missing: the row has {fields} field{}",
                self.time_index + 1,
                if fields == 1 { "" } else { "s" }
            ));
        };
        // Plain digits take the fast path; anything else (spaces, signs,
        // bad text) goes through the full parser and its messages.
        let t = match self.unit.parse_plain(field) {
            Some(t) => t,
            None => {
                if field.contains(&b'\n') {
                    return row_error(format!(
                        "field `{col}` runs over several lines: a quote `\"` opened here is never closed"
                    ));
                }
                let text = match std::str::from_utf8(field) {
                    Ok(t) => t,
                    Err(_) => return row_error(format!("field `{col}` is not UTF-8 text")),
                };
                match self.unit.parse_timestamp(text) {
                    Ok(t) => t,
                    Err(e) => return row_error(format!("field `{col}`: {e}")),
                }
            }
        };
        if t < self.last {
            if in_order {
                return row_error(format!(
                    "field `{col}`: {t} s is earlier than the row before ({} s); a trace must be in time order (or set `sort = true` on the source to sort it in memory)",
                    self.last
                ));
            }
            self.out_of_order += 1;
        }
        let key = if self.key_index == NO_KEY {
            0
        } else {
            match key {
                Some(text) => super::key_hash(trim_ascii(text)),
                None => {
                    return row_error(format!(
                        "the key field (column {}) is missing: the row has {fields} field{}",
                        self.key_index + 1,
                        if fields == 1 { "" } else { "s" }
                    ));
                }
            }
        };
        self.last = t;
        self.rows += 1;
        Ok(Arrival { time: t, key })
    }
}

fn read_failed(path: &Path, err: &std::io::Error) -> TraceError {
    TraceError::File { path: path.to_path_buf(), message: format!("read failed: {err}") }
}

/// The input cut into records exactly as the csv crate (default dialect,
/// `flexible`) cuts the output of [`LfLines`], with the line numbers it
/// gives them.
///
/// Until the first `"`, every line is one record (an empty line is none) and
/// commas split it into fields: lines and fields are found eight bytes at a
/// time in a large buffer and handed out as ranges of it. From the line
/// holding the first `"` on (a record boundary, since no quote came before),
/// a `csv_core` parser reads the rest: quoting only changes anything after a
/// quote.
struct Input<R> {
    buf: Buffer<R>,
    /// `csv_core::Reader::line` for the bytes consumed so far: one plus
    /// their LFs.
    lines: u64,
    /// The line the csv crate gives the next record: `lines` when the
    /// record before it ended (blank lines before a record do not count).
    record_line: u64,
    /// The parser, once a quote has been seen.
    general: Option<Box<General>>,
}

struct Buffer<R> {
    src: LfLines<R>,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[pos..end]`.
    pos: usize,
    end: usize,
    /// The source said end of input.
    eof: bool,
    /// Anything asked of the source yet (the BOM is only looked for in the
    /// first read, as csv_core looks for it only in its first input).
    started: bool,
    /// Index in `buf` of the first `"` (at or after `pos` while the fast path
    /// runs), or [`NO_QUOTE`].
    quote: usize,
    /// The separator scan: `mask` marks (in the high bit of each byte) the
    /// LFs and commas not yet handed out in the eight bytes from `word`.
    word: usize,
    mask: u64,
}

struct General {
    core: csv_core::Reader,
    /// Whether `core` has had its first input (in which it would strip a
    /// BOM: the input's BOM, if any, is already skipped).
    started: bool,
    data: Vec<u8>,
    ends: Vec<usize>,
}

/// One line from the fast path.
enum Line {
    Row(FastRow),
    End,
    /// The line at `pos` holds a quote: the general parser reads from here.
    Quote,
    Failed(std::io::Error),
}

/// A record from the fast path: where its time and key fields are in the
/// buffer (`None`: the record has no such field) and how many fields it has.
struct FastRow {
    line: u64,
    /// The line, without its LF.
    start: usize,
    end: usize,
    time: Option<(usize, usize)>,
    key: Option<(usize, usize)>,
    fields: usize,
}

/// The fields of one record.
enum Fields<'a> {
    /// A line without quotes or its LF: fields are split at commas.
    Line(&'a [u8]),
    /// Parsed by csv_core: field `i` ends at `ends[i]` in `data`.
    Parsed { data: &'a [u8], ends: &'a [usize] },
}

impl<'a> Fields<'a> {
    fn get(&self, i: usize) -> Option<&'a [u8]> {
        match *self {
            Fields::Line(line) => line.split(|&b| b == b',').nth(i),
            Fields::Parsed { data, ends } => {
                let end = *ends.get(i)?;
                let start = if i == 0 { 0 } else { ends[i - 1] };
                Some(&data[start..end])
            }
        }
    }

    fn len(&self) -> usize {
        match *self {
            Fields::Line(line) => line.split(|&b| b == b',').count(),
            Fields::Parsed { ends, .. } => ends.len(),
        }
    }
}

/// The high bit of each byte of `word` that equals `byte`.
#[inline(always)]
fn bytes_equal(word: u64, byte: u8) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = word ^ (u64::from(byte) * 0x0101_0101_0101_0101);
    // The high bit is set in every byte of `x` that is not zero; no carries
    // cross bytes.
    !(((x & LOW7) + LOW7) | x) & !LOW7
}

impl<R: Read> Buffer<R> {
    /// Moves the unconsumed bytes to the front (growing the buffer if they
    /// fill it) and reads more after them; sets `eof` at the end of input.
    /// Restarts the separator scan at `pos`.
    fn fill(&mut self) -> std::io::Result<()> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            if self.quote != NO_QUOTE {
                self.quote = self.quote.saturating_sub(self.pos);
            }
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.buf.len() {
            let len = (2 * self.buf.len()).max(BLOCK);
            self.buf.resize(len, 0);
        }
        let first = !std::mem::replace(&mut self.started, true);
        let read = self.src.read(&mut self.buf[self.end..]);
        let n = *read.as_ref().unwrap_or(&0);
        let new = self.end..self.end + n;
        if self.quote == NO_QUOTE
            && let Some(i) = memchr::memchr(b'"', &self.buf[new.clone()])
        {
            self.quote = new.start + i;
        }
        self.end = new.end;
        self.eof = n == 0 && read.is_ok();
        if first && self.buf[..n].starts_with(BOM) {
            self.pos = BOM.len();
            // csv_core strips the BOM from its first input and, when
            // nothing is left, takes the empty rest for the end of the input.
            self.eof = n == BOM.len();
        }
        self.rescan();
        read.map(|_| ())
    }

    /// Restarts the separator scan at `pos`.
    fn rescan(&mut self) {
        self.word = self.pos;
        self.mask = self.separators(self.pos);
    }

    /// The LFs and commas in the eight bytes from `at` (those up to `end`).
    #[inline(always)]
    fn separators(&self, at: usize) -> u64 {
        let word = match self.buf.get(at..at + 8) {
            Some(w) if at + 8 <= self.end => u64::from_le_bytes(w.try_into().unwrap()),
            _ => {
                let mut w = [0u8; 8];
                let have = self.end.saturating_sub(at);
                w[..have].copy_from_slice(&self.buf[at..self.end]);
                u64::from_le_bytes(w)
            }
        };
        bytes_equal(word, b'\n') | bytes_equal(word, b',')
    }

    /// The next LF or comma at or after the scan's position, or `None` when
    /// there is none before `end`.
    #[inline(always)]
    fn next_separator(&mut self) -> Option<usize> {
        while self.mask == 0 {
            if self.word + 8 >= self.end {
                return None;
            }
            self.word += 8;
            self.mask = self.separators(self.word);
        }
        let at = self.word + (self.mask.trailing_zeros() / 8) as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

impl<R: Read> Input<R> {
    fn new(src: R) -> Input<R> {
        Input {
            buf: Buffer {
                src: LfLines::new(src),
                buf: Vec::new(),
                pos: 0,
                end: 0,
                eof: false,
                started: false,
                quote: NO_QUOTE,
                word: 0,
                mask: 0,
            },
            lines: 1,
            record_line: 1,
            general: None,
        }
    }

    /// The next record of the fast path, with the ranges of fields
    /// `time_index` and `key_index` in it. Blank lines are skipped.
    #[inline]
    fn next_line(&mut self, time_index: usize, key_index: usize) -> Line {
        let b = &mut self.buf;
        'line: loop {
            let start = b.pos;
            let (mut field, mut index) = (start, 0);
            let (mut time, mut key) = (None, None);
            let end = loop {
                let Some(at) = b.next_separator() else {
                    if !b.eof {
                        if let Err(e) = b.fill() {
                            return Line::Failed(e);
                        }
                        continue 'line;
                    }
                    if start == b.end {
                        return Line::End;
                    }
                    break b.end;
                };
                if index == time_index {
                    time = Some((field, at));
                }
                if index == key_index {
                    key = Some((field, at));
                }
                index += 1;
                field = at + 1;
                if b.buf[at] == b'\n' {
                    break at;
                }
            };
            if b.quote < end {
                b.pos = start;
                b.rescan();
                return Line::Quote;
            }
            if end == b.end {
                // The last line, without an LF: the field it ends.
                if index == time_index {
                    time = Some((field, end));
                }
                if index == key_index {
                    key = Some((field, end));
                }
                index += 1;
                b.pos = end;
                return Line::Row(FastRow { line: self.record_line, start, end, time, key, fields: index });
            }
            b.pos = end + 1;
            self.lines += 1;
            if end == start {
                continue; // a blank line is no record
            }
            let line = std::mem::replace(&mut self.record_line, self.lines);
            return Line::Row(FastRow { line, start, end, time, key, fields: index });
        }
    }

    /// The next record and its line, or `None` at the end of the input.
    fn next_record(&mut self) -> std::io::Result<Option<(u64, Fields<'_>)>> {
        if self.general.is_none() {
            match self.next_line(NO_KEY, NO_KEY) {
                Line::Row(row) => {
                    return Ok(Some((row.line, Fields::Line(&self.buf.buf[row.start..row.end]))));
                }
                Line::End => return Ok(None),
                Line::Failed(e) => return Err(e),
                Line::Quote => self.start_general(),
            }
        }
        self.next_general()
    }

    /// Hands the input, from `pos` on, to csv_core.
    #[cold]
    fn start_general(&mut self) {
        let mut core = csv_core::Reader::new();
        core.set_line(self.lines);
        self.general =
            Some(Box::new(General { core, started: false, data: vec![0; 1024], ends: vec![0; 32] }));
    }

    /// The next record from csv_core, read as `csv::Reader` reads one.
    #[cold]
    fn next_general(&mut self) -> std::io::Result<Option<(u64, Fields<'_>)>> {
        use csv_core::ReadRecordResult::*;
        let g = self.general.as_deref_mut().expect("the general parser is set up");
        let b = &mut self.buf;
        let line = self.record_line;
        let (mut nout, mut nend) = (0, 0);
        loop {
            if b.pos == b.end && !b.eof {
                b.fill()?;
                continue;
            }
            let mut input = &b.buf[b.pos..b.end];
            if !std::mem::replace(&mut g.started, true) {
                // Too short for csv_core to take it for a BOM.
                input = &input[..input.len().min(1)];
            }
            let (res, nin, o, e) = g.core.read_record(input, &mut g.data[nout..], &mut g.ends[nend..]);
            b.pos += nin;
            nout += o;
            nend += e;
            match res {
                InputEmpty => {}
                OutputFull => {
                    let len = 2 * g.data.len();
                    g.data.resize(len, 0);
                }
                OutputEndsFull => {
                    let len = 2 * g.ends.len();
                    g.ends.resize(len, 0);
                }
                Record => {
                    self.lines = g.core.line();
                    self.record_line = self.lines;
                    return Ok(Some((line, Fields::Parsed { data: &g.data[..nout], ends: &g.ends[..nend] })));
                }
                End => return Ok(None),
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

pub(super) fn trim_ascii(b: &[u8]) -> &[u8] {
    b.trim_ascii()
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
            .map(|a| a.map(|a| (a.time.get(), a.key)).unwrap())
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
        t.map(|r| r.map(|a| a.time.get()).map_err(|e| e.to_string())).collect()
    }

    #[test]
    fn sort_orders_rows_in_memory_and_counts_the_moves() {
        let opts = CsvOptions { sort: true, ..CsvOptions::new("t.csv") };
        let t = CsvTrace::from_reader(&b"time\n3\n1\n2\n1\n"[..], &opts).unwrap();
        assert!(t.is_sorted_in_memory());
        assert_eq!((t.rows(), t.out_of_order()), (4, 2));
        let v: Vec<u64> = t.map(|r| r.unwrap().time.get() / 1_000_000_000).collect();
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
        assert_eq!(t.map(|r| r.unwrap().time.get()).collect::<Vec<_>>(), [250_000_000]);
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
