//! The trace reader as it was before the unquoted fast path: the csv crate
//! (one reused `ByteRecord`) over [`LfLines`]. Kept as the reference that
//! `CsvTrace` must agree with exactly (results, errors, line numbers): the
//! differential tests and the `csv_trace` fuzz target compare the two.
//! Unchanged in behaviour but for a few things: a row after blank lines is
//! numbered by the line it is on, which the csv crate alone does not do
//! (see `Tap`); the end of the file inside a quoted field is an error (the
//! csv crate ends the record there, swallowing every line after the quote),
//! found by a quote scanner of its own ([`open_quote_at`]); and a time or
//! key field that holds a line break is refused.
//!
//! Compiled only with the tests, never into the program; it uses only the
//! library's public API (and `LfLines`, `parse_plain`, and `quoted`,
//! `missing_column` and `bad_time` for the wording of header and time
//! errors, public but hidden for this).
// Each test crate that includes this file uses a different part of it.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};

use ratesim::time::{Nanos, TimeUnit};
use ratesim::trace::{
    Arrival, ArrivalResult, CsvOptions, KeysAt, LfLines, TraceError, bad_time, key_hash, missing_column,
    parse_plain, quoted,
};

/// The bytes the csv crate has read, all kept: a record's line is the csv
/// crate's (the line after the record before it) plus the blank lines
/// between, which are the LFs at the byte where the csv crate began it.
struct Tap<R> {
    inner: LfLines<R>,
    seen: Vec<u8>,
    /// The size of the first read that brought bytes: the csv crate's first
    /// buffer, from which csv_core strips a BOM (only if it holds all of it).
    first: Option<usize>,
    /// The input has ended (a read returned 0).
    eof: bool,
}

impl<R: Read> Read for Tap<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        self.seen.extend_from_slice(&out[..n]);
        if n > 0 {
            self.first.get_or_insert(n);
        }
        self.eof |= n == 0 && !out.is_empty();
        Ok(n)
    }
}

impl<R> Tap<R> {
    /// At the end of the input, where the quoted field it ends inside
    /// opened (line, field from 0), if it does.
    fn open_quote(&self) -> Option<(u64, usize)> {
        if !self.eof {
            return None;
        }
        let bom = self.first.is_some_and(|n| n >= 3) && self.seen.starts_with(b"\xef\xbb\xbf");
        open_quote_at(&self.seen[if bom { 3 } else { 0 }..])
    }
}

/// Reads `bytes` as RFC 4180 CSV (LF line ends; a quote is special only at
/// the start of a field, `""` inside quotes is a quote, anything after a
/// closing quote continues the field unquoted) and says where the quoted
/// field the bytes end inside opened: its line and field (from 0).
fn open_quote_at(bytes: &[u8]) -> Option<(u64, usize)> {
    #[derive(Clone, Copy, PartialEq)]
    enum S {
        FieldStart,
        Unquoted,
        Quoted,
        QuoteInQuoted,
    }
    let (mut s, mut line, mut field, mut opened) = (S::FieldStart, 1u64, 0usize, (0, 0));
    for &b in bytes {
        s = match (s, b) {
            (S::Quoted, b'"') => S::QuoteInQuoted,
            (S::Quoted, _) => S::Quoted,
            (S::QuoteInQuoted, b'"') => S::Quoted,
            (S::FieldStart, b'"') => {
                opened = (line, field);
                S::Quoted
            }
            (_, b',') => {
                field += 1;
                S::FieldStart
            }
            (_, b'\n') => {
                field = 0;
                S::FieldStart
            }
            _ => S::Unquoted,
        };
        if b == b'\n' {
            line += 1;
        }
    }
    (s == S::Quoted).then_some(opened)
}

fn open_quote_error(path: &Path, line: u64, field: String) -> TraceError {
    TraceError::Row {
        path: path.to_path_buf(),
        line,
        message: format!(
            "a quote `\"` opened in {field} is never closed: the file ends inside it (every line after it would be read as part of that field)"
        ),
        entry: None,
    }
}

pub struct ReferenceCsvTrace<R: Read> {
    path: PathBuf,
    reader: csv::Reader<Tap<R>>,
    record: csv::ByteRecord,
    time_index: usize,
    key_index: Option<usize>,
    time_column: String,
    key_column: Option<String>,
    headers: csv::ByteRecord,
    unit: TimeUnit,
    keys_at: Option<KeysAt>,
    last: Nanos,
    rows: u64,
    multiline: u64,
    first_multiline: Option<u64>,
    /// Rows earlier than the row before them (only counted when sorting).
    out_of_order: u64,
    /// With `sort`, the sorted times still to hand out.
    sorted: Option<std::vec::IntoIter<Arrival>>,
    done: bool,
}
impl<R: Read> ReferenceCsvTrace<R> {
    /// Reads a trace from any reader; `options.path` only names it in errors.
    pub fn from_reader(input: R, options: &CsvOptions) -> Result<ReferenceCsvTrace<R>, TraceError> {
        let path = options.path.clone();
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .has_headers(true)
            .buffer_capacity(1 << 16)
            .from_reader(Tap { inner: LfLines::new(input), seen: Vec::new(), first: None, eof: false });
        let headers = reader.byte_headers().map_err(|e| csv_error(&path, e))?.clone();
        if let Some((line, field)) = reader.get_ref().open_quote() {
            return Err(open_quote_error(&path, line, format!("column {} of the header", field + 1)));
        }
        if headers.is_empty() || (headers.len() == 1 && headers[0].is_empty()) {
            return Err(TraceError::File {
                path,
                message: "the file is empty: expected a header row with a `time` column".into(),
                entry: None,
            });
        }
        // The header's line: the csv crate's, plus the blank lines before it.
        // (Its bytes are counted from after a byte order mark the csv crate
        // strips.)
        let line = headers.position().map_or(1, |p| {
            let tap = reader.get_ref();
            let bom = tap.first.is_some_and(|n| n >= 3) && tap.seen.starts_with(b"\xef\xbb\xbf");
            let from = p.byte() as usize + if bom { 3 } else { 0 };
            let blank = tap.seen.get(from..).unwrap_or(&[]).iter().take_while(|&&b| b == b'\n').count();
            p.line() + blank as u64
        });
        let column = |name: &str, time: bool| {
            headers.iter().position(|h| h.trim_ascii() == name.as_bytes()).ok_or_else(|| TraceError::Row {
                path: path.clone(),
                line,
                message: missing_column(options, line, &headers.iter().collect::<Vec<_>>(), time),
                entry: None,
            })
        };
        let time_index = column(&options.time_column, true)?;
        let key_index = options.key_column.as_deref().map(|k| column(k, false)).transpose()?;
        let read = [
            (Some(time_index), options.time_column.as_str(), "times"),
            (key_index, options.key_column.as_deref().unwrap_or_default(), "client keys"),
        ];
        for (index, name, holds) in read {
            let Some(index) = index else { continue };
            let first = headers[index].trim_ascii();
            if let Some(later) = (index + 1..headers.len()).find(|&j| headers[j].trim_ascii() == first) {
                return Err(TraceError::Row {
                    path,
                    line,
                    message: format!(
                        "the header names the column {} twice (columns {} and {}): which one holds the {holds} \
                         is unclear; rename or remove one",
                        quoted(name.as_bytes()),
                        index + 1,
                        later + 1
                    ),
                    entry: None,
                });
            }
        }
        let mut trace = ReferenceCsvTrace {
            path,
            reader,
            record: csv::ByteRecord::new(),
            time_index,
            key_index,
            time_column: options.time_column.clone(),
            key_column: options.key_column.clone(),
            headers,
            unit: options.time_unit,
            keys_at: options.keys_at.clone(),
            last: Nanos::ZERO,
            rows: 0,
            multiline: 0,
            first_multiline: None,
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

    /// Records that hold a line break in a quoted field, and the line of the first.
    pub fn multiline_records(&self) -> (u64, Option<u64>) {
        (self.multiline, self.first_multiline)
    }

    /// Whether the trace was read into memory and sorted.
    pub fn is_sorted_in_memory(&self) -> bool {
        self.sorted.is_some()
    }

    /// The file line the record read last starts on.
    fn line(&self) -> u64 {
        let Some(p) = self.record.position() else { return 0 };
        let seen = &self.reader.get_ref().seen;
        let blank = seen[p.byte() as usize..].iter().take_while(|&&b| b == b'\n').count();
        p.line() + blank as u64
    }

    fn row_error(&self, message: String) -> TraceError {
        TraceError::Row { path: self.path.clone(), line: self.line(), message, entry: None }
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
                        entry: None,
                    }));
                }
                None
            }
            Err(e) => Some(Err(csv_error(&self.path, e))),
            Ok(true) => {
                if let Some((line, field)) = self.reader.get_ref().open_quote() {
                    let name = match self.headers.get(field) {
                        Some(h) => format!("field {} (column {})", quoted(h.trim_ascii()), field + 1),
                        None => format!("column {}", field + 1),
                    };
                    return Some(Err(open_quote_error(&self.path, line, name)));
                }
                if self.record.iter().any(|f| f.contains(&b'\n')) {
                    let roles = [
                        (Some(self.time_index), format!("field `{}`", self.time_column), "time"),
                        (
                            self.key_index,
                            format!("the key field `{}`", self.key_column.clone().unwrap_or_default()),
                            "key",
                        ),
                    ];
                    for (index, name, role) in roles {
                        let Some(field) = index.and_then(|i| self.record.get(i)) else { continue };
                        let breaks = field.iter().filter(|&&b| b == b'\n').count() as u64;
                        if breaks > 0 {
                            let before: u64 = (0..index.unwrap())
                                .map(|i| self.record[i].iter().filter(|&&b| b == b'\n').count() as u64)
                                .sum();
                            let (first, last) = (self.line() + before, self.line() + before + breaks);
                            return Some(Err(TraceError::Row {
                                path: self.path.clone(),
                                line: first,
                                message: format!(
                                    "{name} runs over lines {first} to {last}: a quote `\"` opens it on line {first} and closes it only on line {last}; a {role} must be on one line (a stray quote reads every line up to the next quote as one field)"
                                ),
                                entry: None,
                            }));
                        }
                    }
                    self.multiline += 1;
                    self.first_multiline.get_or_insert(self.line());
                }
                if self.record.len() > self.headers.len() {
                    let columns = self.headers.len();
                    let listed: Vec<String> =
                        self.headers.iter().take(8).map(|h| quoted(h.trim_ascii())).collect();
                    let more = columns.saturating_sub(8);
                    return Some(Err(self.row_error(format!(
                        "the row has {} fields, but the header has {columns} column{} ({}{}): a comma inside a field \
                         splits it (a decimal comma, like `0,5`, makes two fields): write decimals with a point, like \
                         0.5, and quote a field that holds a comma",
                        self.record.len(),
                        if columns == 1 { "" } else { "s" },
                        listed.join(", "),
                        if more > 0 { format!(", and {more} more") } else { String::new() }
                    ))));
                }
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
                let t = match parse_plain(self.unit, field) {
                    Some(t) => t,
                    None => {
                        let text = match std::str::from_utf8(field) {
                            Ok(t) => t,
                            Err(_) => {
                                return Some(Err(self.row_error(format!("field `{col}` is not UTF-8 text"))));
                            }
                        };
                        if text.trim().is_empty() {
                            let expected = self.unit.expected();
                            return Some(Err(
                                self.row_error(format!("field `{col}` is empty: expected {expected}"))
                            ));
                        }
                        match self.unit.parse_timestamp(text) {
                            Ok(t) => t,
                            // The contract for long fields: the first 40 characters
                            // (at most 40 bytes), then the length.
                            Err(_) if text.len() > 64 => {
                                let mut short = String::new();
                                for c in text.chars() {
                                    if short.len() + c.len_utf8() > 40 {
                                        break;
                                    }
                                    short.push(c);
                                }
                                let msg = format!(
                                    "field `{col}`: `{short}...` ({} bytes) is not a time",
                                    text.len()
                                );
                                return Some(Err(self.row_error(msg)));
                            }
                            Err(e) => {
                                let message = bad_time(col, self.unit, self.keys_at.as_ref(), text, &e);
                                return Some(Err(self.row_error(message)));
                            }
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
                        Some(text) => key_hash(text.trim_ascii()),
                        None => {
                            return Some(Err(self.row_error(format!(
                                "the key field `{}` (column {}) is missing: the row has {} field{}",
                                self.key_column.clone().unwrap_or_default(),
                                k + 1,
                                self.record.len(),
                                if self.record.len() == 1 { "" } else { "s" }
                            ))));
                        }
                    },
                };
                self.last = t;
                self.rows += 1;
                Some(Ok(Arrival::keyed(t, key)))
            }
        }
    }
}
fn csv_error(path: &Path, e: csv::Error) -> TraceError {
    let line = e.position().map(|p| p.line());
    let message = match e.kind() {
        csv::ErrorKind::Io(err) => format!("read failed: {err}"),
        csv::ErrorKind::Utf8 { err, .. } => format!("invalid UTF-8: {err}"),
        _ => e.to_string(),
    };
    match line {
        Some(line) => TraceError::Row { path: path.to_path_buf(), line, message, entry: None },
        None => TraceError::File { path: path.to_path_buf(), message, entry: None },
    }
}

impl<R: Read> Iterator for ReferenceCsvTrace<R> {
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
