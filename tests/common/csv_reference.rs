//! The trace reader as it was before the unquoted fast path: the csv crate
//! (one reused `ByteRecord`) over [`LfLines`]. Kept as the reference that
//! `CsvTrace` must agree with exactly (results, errors, line numbers): the
//! differential tests and the `csv_trace` fuzz target compare the two.
//! Unchanged in behaviour but for one thing: a row after blank lines is
//! numbered by the line it is on, which the csv crate alone does not do
//! (see `Tap`).
//!
//! Compiled only with the tests, never into the program; it uses only the
//! library's public API (and `LfLines` and `parse_plain`, public but hidden
//! for this).
// Each test crate that includes this file uses a different part of it.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};

use ratesim::time::{Nanos, TimeUnit};
use ratesim::trace::{Arrival, ArrivalResult, CsvOptions, LfLines, TraceError, key_hash, parse_plain};

/// The bytes the csv crate has read, all kept: a record's line is the csv
/// crate's (the line after the record before it) plus the blank lines
/// between, which are the LFs at the byte where the csv crate began it.
struct Tap<R> {
    inner: LfLines<R>,
    seen: Vec<u8>,
}

impl<R: Read> Read for Tap<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        self.seen.extend_from_slice(&out[..n]);
        Ok(n)
    }
}

pub struct ReferenceCsvTrace<R: Read> {
    path: PathBuf,
    reader: csv::Reader<Tap<R>>,
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
impl<R: Read> ReferenceCsvTrace<R> {
    /// Reads a trace from any reader; `options.path` only names it in errors.
    pub fn from_reader(input: R, options: &CsvOptions) -> Result<ReferenceCsvTrace<R>, TraceError> {
        let path = options.path.clone();
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .has_headers(true)
            .buffer_capacity(1 << 16)
            .from_reader(Tap { inner: LfLines::new(input), seen: Vec::new() });
        let headers = reader.byte_headers().map_err(|e| csv_error(&path, e))?.clone();
        if headers.is_empty() || (headers.len() == 1 && headers[0].is_empty()) {
            return Err(TraceError::File {
                path,
                message: "the file is empty: expected a header row with a `time` column".into(),
            });
        }
        let column = |name: &str| {
            headers.iter().position(|h| h.trim_ascii() == name.as_bytes()).ok_or_else(|| TraceError::File {
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
        let mut trace = ReferenceCsvTrace {
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

    /// The file line the record read last starts on.
    fn line(&self) -> u64 {
        let Some(p) = self.record.position() else { return 0 };
        let seen = &self.reader.get_ref().seen;
        let blank = seen[p.byte() as usize..].iter().take_while(|&&b| b == b'\n').count();
        p.line() + blank as u64
    }

    fn row_error(&self, message: String) -> TraceError {
        TraceError::Row { path: self.path.clone(), line: self.line(), message }
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
                let t = match parse_plain(self.unit, field) {
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
                        Some(text) => key_hash(text.trim_ascii()),
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
        Some(line) => TraceError::Row { path: path.to_path_buf(), line, message },
        None => TraceError::File { path: path.to_path_buf(), message },
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
