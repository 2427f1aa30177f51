//! A recorded trace: a CSV file with a header row and a `time` column, read as
//! a stream (one reused record, never the whole file).

use std::fs::File;
use std::io::BufReader;
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
}

pub struct CsvTrace {
    path: PathBuf,
    reader: csv::Reader<BufReader<File>>,
    record: csv::ByteRecord,
    time_index: usize,
    key_index: Option<usize>,
    unit: TimeUnit,
    last: Nanos,
    rows: u64,
    done: bool,
}

impl CsvTrace {
    /// Opens the file and reads its header.
    pub fn open(options: &CsvOptions) -> Result<CsvTrace, TraceError> {
        let path = options.path.clone();
        let file = File::open(&path).map_err(|source| TraceError::Open { path: path.clone(), source })?;
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .has_headers(true)
            .from_reader(BufReader::with_capacity(1 << 16, file));
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
        Ok(CsvTrace {
            path,
            reader,
            record: csv::ByteRecord::new(),
            time_index,
            key_index,
            unit: options.time_unit,
            last: Nanos::ZERO,
            rows: 0,
            done: false,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn row_error(&self, message: String) -> TraceError {
        let line = self.record.position().map_or(0, |p| p.line());
        TraceError::Row { path: self.path.clone(), line, message }
    }

    fn read_one(&mut self) -> Option<ArrivalResult> {
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
                let Some(field) = self.record.get(self.time_index) else {
                    return Some(Err(self.row_error(format!(
                        "field `time` (column {}) is missing: the row has {} fields",
                        self.time_index + 1,
                        self.record.len()
                    ))));
                };
                let text = match std::str::from_utf8(field) {
                    Ok(t) => t,
                    Err(_) => return Some(Err(self.row_error("field `time` is not UTF-8 text".into()))),
                };
                let t = match self.unit.parse_timestamp(text) {
                    Ok(t) => t,
                    Err(e) => return Some(Err(self.row_error(format!("field `time`: {e}")))),
                };
                if t < self.last {
                    return Some(Err(self.row_error(format!(
                        "field `time`: {t} s is earlier than the row before ({} s); a trace must be in time order",
                        self.last
                    ))));
                }
                let key = match self.key_index {
                    None => 0,
                    Some(k) => match self.record.get(k) {
                        Some(text) => super::key_hash(trim_ascii(text)),
                        None => {
                            return Some(Err(self.row_error(format!(
                                "the key field (column {}) is missing: the row has {} fields",
                                k + 1,
                                self.record.len()
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

impl Iterator for CsvTrace {
    type Item = ArrivalResult;
    #[inline]
    fn next(&mut self) -> Option<ArrivalResult> {
        if self.done {
            return None;
        }
        let r = self.read_one();
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

    fn trace(text: &str) -> (tempfile::NamedTempFile, CsvOptions) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        let opts = CsvOptions {
            path: f.path().to_path_buf(),
            time_unit: TimeUnit::S,
            time_column: "time".into(),
            key_column: None,
        };
        (f, opts)
    }

    fn times(text: &str) -> Result<Vec<u64>, String> {
        let (_f, opts) = trace(text);
        let t = CsvTrace::open(&opts).map_err(|e| e.to_string())?;
        t.map(|r| r.map(|a| a.time.0).map_err(|e| e.to_string())).collect()
    }

    #[test]
    fn reads_decimal_seconds_and_ignores_extra_columns() {
        assert_eq!(times("id,time,path\n1,0.995,/a\n2,12,/b\n"), Ok(vec![995_000_000, 12_000_000_000]));
    }

    #[test]
    fn key_column_hashes_client_names() {
        let (_f, mut opts) = trace("time,client\n0.1,alice\n0.2,bob\n0.3, alice\n");
        opts.key_column = Some("client".into());
        let keys: Vec<u64> = CsvTrace::open(&opts).unwrap().map(|a| a.unwrap().key).collect();
        assert_eq!(
            keys,
            [
                super::super::key_hash(b"alice"),
                super::super::key_hash(b"bob"),
                super::super::key_hash(b"alice")
            ]
        );
        opts.key_column = Some("user".into());
        assert!(CsvTrace::open(&opts).err().unwrap().to_string().contains("no `user` column"));
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
