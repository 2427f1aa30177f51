//! A recorded trace: a CSV file with a header row and a `time` column, read as
//! a stream (one reused record, never the whole file) from any reader.
//!
//! Rows must be in time order. With `sort = true` the whole trace is read into
//! memory first (16 bytes per row: time and key, up to 32 while the buffer
//! grows) and sorted stably, so rows with equal times keep their file order.
//!
//! This module owns the options and [`CsvTrace`], the iterator that ties the
//! parts together: [`lf_lines`] makes every line end an LF, [`splitter`] cuts
//! the input into records and fields, [`rules`] turns a record into an
//! arrival (or a located error) and [`digits`] parses plain digits fast.

mod digits;
mod lf_lines;
mod rules;
mod splitter;

pub use digits::parse_plain;
pub use lf_lines::LfLines;
pub use rules::{bad_time, missing_column, quoted};

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{Arrival, ArrivalResult, TraceError};
use crate::time::TimeUnit;
use rules::{NO_KEY, RowRules};
use splitter::{Input, Line, ReadError};

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
    /// Where a scenario sets these options, for the errors about them
    /// (a column the header lacks, a time not in `time_unit`); `None`
    /// outside a scenario.
    pub keys_at: Option<KeysAt>,
}

/// Where a scenario sets a csv source's keys: each `file:line:column`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeysAt {
    /// The source's name in the scenario, like `traffic[0]`.
    pub source: String,
    pub path: String,
    pub time_unit: Option<String>,
    pub time_column: Option<String>,
    pub key_column: Option<String>,
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
            keys_at: None,
        }
    }
}

/// Bytes of memory a sorted trace holds per row (a `u64` timestamp and key).
pub const SORT_BYTES_PER_ROW: u64 = 16;

/// Bytes of memory a streamed trace holds: the reader's buffer, which only
/// grows past this for a line (or quoted record) longer than it.
pub(crate) const STREAM_BYTES: u64 = splitter::BLOCK as u64;

pub struct CsvTrace<R: Read = File> {
    input: Input<R>,
    rules: RowRules,
    /// With `sort`, the sorted times still to hand out.
    sorted: Option<std::vec::IntoIter<Arrival>>,
    done: bool,
    /// Records read that cover more than one line (a quoted field in a
    /// column not read holds a line break), and the line of the first.
    multiline: u64,
    first_multiline: Option<u64>,
    /// The `[[traffic]]` entry its errors name, if any.
    entry: Option<usize>,
}

impl CsvTrace<File> {
    /// Opens the file and reads its header (and, with `sort`, every row).
    pub fn open(options: &CsvOptions) -> Result<CsvTrace<File>, TraceError> {
        let file = File::open(&options.path).map_err(|source| TraceError::Open {
            path: options.path.clone(),
            source,
            entry: None,
        })?;
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
        CsvTrace::with_input(Input::general_only(input), options)
    }

    fn with_input(mut input: Input<R>, options: &CsvOptions) -> Result<CsvTrace<R>, TraceError> {
        let (line, headers) = input.header().map_err(|e| match e {
            ReadError::Io(e) => read_failed(&options.path, &e),
            ReadError::OpenQuote { line, field } => {
                open_quote(&options.path, line, format!("column {} of the header", field + 1))
            }
            ReadError::TooLong(e) => {
                too_long(&options.path, &e, format!("column {} of the header", e.field + 1))
            }
        })?;
        let rules = RowRules::from_header(line, &headers, options)?;
        let mut trace = CsvTrace {
            input,
            rules,
            sorted: None,
            done: false,
            multiline: 0,
            first_multiline: None,
            entry: None,
        };
        if options.sort {
            let mut rows = Vec::new();
            while let Some(r) = trace.read_one::<false>(false, &mut 0) {
                rows.push(r?);
            }
            trace.done = false;
            trace.sorted = Some(RowRules::sort(rows));
        }
        Ok(trace)
    }

    pub fn path(&self) -> &Path {
        &self.rules.path
    }

    /// Errors from here on name `[[traffic]]` entry `entry` (see
    /// [`TraceError::in_entry`]; those of opening it are the caller's).
    pub fn in_entry(mut self, entry: usize) -> CsvTrace<R> {
        self.entry = Some(entry);
        self
    }

    /// The error `e`, in this trace's entry if it has one.
    #[cold]
    fn located(&self, e: TraceError) -> TraceError {
        match self.entry {
            Some(i) => e.in_entry(i),
            None => e,
        }
    }

    /// Data rows read so far (all of them once a sorted trace is open).
    pub fn rows(&self) -> u64 {
        self.rules.rows
    }

    /// Rows that came earlier than the row before them (sorted traces only).
    pub fn out_of_order(&self) -> u64 {
        self.rules.out_of_order
    }

    /// Records read so far that cover more than one line, and the line the
    /// first of them starts on: a quoted field holds a line break. Legal
    /// CSV in a column ratesim does not read, but a stray quote also makes
    /// one, reading every line up to the next quote as one field (their
    /// rows then never arrive), so `check` reports them.
    pub fn multiline_records(&self) -> (u64, Option<u64>) {
        (self.multiline, self.first_multiline)
    }

    /// Whether the trace was read into memory and sorted.
    pub fn is_sorted_in_memory(&self) -> bool {
        self.sorted.is_some()
    }

    /// The next arrival (or error) and the line its row starts on (`None`
    /// in a trace sorted in memory, or for an error of no row): what
    /// `next` gives, for callers that name rows by line.
    pub fn next_located(&mut self) -> Option<(Option<u64>, ArrivalResult)> {
        if self.done {
            return None;
        }
        if let Some(sorted) = &mut self.sorted {
            return sorted.next().map(|a| (None, Ok(a)));
        }
        let mut line = 0;
        let r = self.read_one::<true>(true, &mut line)?;
        let r = r.map_err(|e| {
            self.done = true;
            self.located(e)
        });
        Some(((line > 0).then_some(line), r))
    }

    /// The earliest row of a trace sorted in memory, without taking it.
    pub fn peek_sorted(&self) -> Option<Arrival> {
        self.sorted.as_ref().and_then(|s| s.as_slice().first().copied())
    }

    /// Reads one row; `in_order` refuses a row earlier than the one before.
    /// With `LOCATE`, sets `line_of_row` to the line the row starts on
    /// (left as it is for an error of no row); without, the hot path, it
    /// stores nothing. Always inlined: LLVM once stopped inlining it into
    /// `Source::next` after changes elsewhere (1M rows through five
    /// limiters, 1185.5M -> 1219.8M instructions).
    #[inline(always)]
    fn read_one<const LOCATE: bool>(
        &mut self,
        in_order: bool,
        line_of_row: &mut u64,
    ) -> Option<ArrivalResult> {
        let rules = &mut self.rules;
        let read = if self.input.is_fast() {
            match self.input.next_line(rules.time_index, rules.key_index) {
                Line::Row(row) => {
                    let (time, key) = (self.input.field(row.time), self.input.field(row.key));
                    if LOCATE {
                        *line_of_row = row.line;
                    }
                    return Some(rules.row(row.line, time, key, row.fields, in_order));
                }
                Line::End => Ok(None),
                Line::Failed(e) => Err(e.into()),
                Line::TooLong => Err(ReadError::TooLong(self.input.take_too_long())),
                Line::Quote => {
                    self.input.start_general();
                    self.input.next_general()
                }
            }
        } else {
            self.input.next_record()
        };
        match read {
            Ok(Some((line, record, multiline))) => {
                if LOCATE {
                    *line_of_row = line;
                }
                if multiline {
                    if let Some(e) = rules.spanning_field(line, &record) {
                        return Some(Err(e));
                    }
                    self.multiline += 1;
                    self.first_multiline.get_or_insert(line);
                }
                let key = if rules.key_index == NO_KEY { None } else { record.get(rules.key_index) };
                Some(rules.row(line, record.get(rules.time_index), key, record.len(), in_order))
            }
            Ok(None) => {
                self.done = true;
                if rules.rows == 0 {
                    return Some(Err(TraceError::File {
                        path: rules.path.clone(),
                        message: "the trace has a header but no rows".into(),
                        entry: None,
                    }));
                }
                None
            }
            Err(ReadError::Io(e)) => Some(Err(read_failed(&rules.path, &e))),
            Err(ReadError::OpenQuote { line, field }) => {
                if LOCATE {
                    *line_of_row = line;
                }
                Some(Err(open_quote(&rules.path, line, rules.describe_field(field))))
            }
            Err(ReadError::TooLong(e)) => {
                if LOCATE {
                    *line_of_row = e.line;
                }
                Some(Err(too_long(&rules.path, &e, rules.describe_field(e.field))))
            }
        }
    }
}

fn read_failed(path: &Path, err: &std::io::Error) -> TraceError {
    TraceError::File { path: path.to_path_buf(), message: format!("read failed: {err}"), entry: None }
}

/// The file ends inside the quoted field `field` that opened on `line`.
#[cold]
fn open_quote(path: &Path, line: u64, field: String) -> TraceError {
    TraceError::Row {
        path: path.to_path_buf(),
        line,
        message: format!(
            "a quote `\"` opened in {field} is never closed: the file ends inside it (every line after it would be read as part of that field)"
        ),
        entry: None,
    }
}

/// A record longer than a record may be ([`splitter::MAX_RECORD`]);
/// `field` names the field `e.field`.
#[cold]
fn too_long(path: &Path, e: &splitter::TooLong, field: String) -> TraceError {
    let size = crate::export::fmt_bytes(e.limit as u64);
    let message = match e.quoted {
        Some((opened, reached, closed)) => format!(
            "a quoted field ran on for more than {size}: a stray quote? A quote `\"` opened in {field} on line \
{opened} {}, so every line {} is read as part of that field; ratesim reads at most {size} into one row. Remove the \
stray quote, or quote the field whole (a quote inside a quoted field is written `\"\"`)",
            if closed {
                format!("closes only on line {reached}")
            } else {
                format!("is not closed by line {reached}")
            },
            if closed { "between" } else { "after it" },
        ),
        None => format!(
            "the row is longer than {size}, in {field}: a trace row holds a time and a few short fields; is this a \
CSV trace?"
        ),
    };
    TraceError::Row { path: path.to_path_buf(), line: e.line, message, entry: None }
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
        let r = self.read_one::<false>(true, &mut 0);
        if matches!(r, Some(Err(_))) {
            self.done = true;
            return r.map(|r| r.map_err(|e| self.located(e)));
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Nanos;
    use std::io::Write;

    #[test]
    fn key_column_hashes_client_names_and_sorting_keeps_keys() {
        let text = "time,client\n0.3,alice\n0.1,bob\n0.2, alice\n";
        let opts = CsvOptions { key_column: Some("client".into()), sort: true, ..CsvOptions::new("t.csv") };
        let rows: Vec<(u64, u64)> = CsvTrace::from_reader(text.as_bytes(), &opts)
            .unwrap()
            .map(|a| a.map(|a| (a.time.get(), a.key)).unwrap())
            .collect();
        let (alice, bob) = (crate::trace::key_hash(b"alice"), crate::trace::key_hash(b"bob"));
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

    /// A header without the column named is located on its line, names
    /// where a scenario names the column, and the column near the name.
    #[test]
    fn a_missing_column_is_located_and_near_names_are_suggested() {
        let error = |text: &str, opts: &CsvOptions| match CsvTrace::from_reader(text.as_bytes(), opts) {
            Ok(_) => panic!("{text:?} was read"),
            Err(e) => e.to_string(),
        };
        let plain = CsvOptions::new("t.csv");
        assert_eq!(
            error("tme,path\n0.1,a\n", &plain),
            "t.csv, line 1: no `time` column in the header (found: `tme`, `path`); did you mean `time`? Rename the column `tme` to `time` in the header, or set time_column = \"tme\" on the source"
        );
        // The header's own line, after blank lines.
        assert!(error("\n\ntme\n0.1\n", &plain).starts_with("t.csv, line 3: no `time` column"));
        assert!(error("\n0.5\n", &plain).contains("line 2 is read as the header, and `0.5` looks like data"));
        // Nothing near: no guess, but what to do.
        assert_eq!(
            error("when,id\n0.1,a\n", &plain),
            "t.csv, line 1: no `time` column in the header (found: `when`, `id`): set time_column on the source to the header's column that holds the times, or name that column `time` in the header"
        );
        let at = KeysAt {
            source: "traffic[0]".into(),
            path: "s.toml:9:8".into(),
            time_unit: None,
            time_column: None,
            key_column: Some("s.toml:10:14".into()),
        };
        let keyed =
            CsvOptions { key_column: Some("paht".into()), keys_at: Some(at.clone()), ..plain.clone() };
        assert_eq!(
            error("time,path\n0.1,a\n", &keyed),
            "t.csv, line 1: no `paht` column in the header (found: `time`, `path`), which `traffic[0].key_column` names (set at s.toml:10:14); did you mean `path`? Set key_column = \"path\" on the source"
        );
        // The time column is not a key column's guess.
        let keyed = CsvOptions { key_column: Some("tim".into()), ..keyed };
        assert!(!error("time,x\n0.1,a\n", &keyed).contains("did you mean"));
        let timed = CsvOptions { keys_at: Some(at), ..plain };
        assert_eq!(
            error("tme,path\n0.1,a\n", &timed),
            "t.csv, line 1: no `time` column in the header (found: `tme`, `path`), the default of `traffic[0].time_column`, which is not set (the source's `path` is set at s.toml:9:8); did you mean `time`? Rename the column `tme` to `time` in the header, or set time_column = \"tme\" on the source"
        );
        // The other case keeps its own hint.
        assert!(error("Time\n0.1\n", &timed).ends_with(
            "(the source's `path` is set at s.toml:9:8): column names are matched with their case, and `Time` is not `time`: write it `time` in the header, or set time_column = \"Time\" on the source"
        ));
    }

    /// A decimal time under a whole unit says what the unit reads and what
    /// to do; other bad times do not.
    #[test]
    fn a_decimal_time_in_a_whole_unit_says_what_the_unit_reads() {
        let first = |text: &str, opts: &CsvOptions| {
            let t = CsvTrace::from_reader(text.as_bytes(), opts).unwrap();
            t.filter_map(Result::err).next().map(|e| e.to_string()).unwrap()
        };
        let ms = CsvOptions { time_unit: TimeUnit::Ms, ..CsvOptions::new("t.csv") };
        assert_eq!(
            first("time\n1\n1.5\n", &ms),
            "t.csv, line 3: field `time`: `1.5` is not a whole number: time_unit = \"ms\" reads whole milliseconds; remove `time_unit` to read the times as decimal seconds, or write them in whole milliseconds"
        );
        let at = KeysAt {
            source: "traffic[2]".into(),
            time_unit: Some("s.toml:11:13".into()),
            ..KeysAt::default()
        };
        let ns = CsvOptions { time_unit: TimeUnit::Ns, keys_at: Some(at), ..CsvOptions::new("t.csv") };
        assert!(first("time\n.5\n", &ns).ends_with(
            "`.5` is not a whole number: `traffic[2].time_unit` = \"ns\" (set at s.toml:11:13) reads whole nanoseconds; remove `time_unit` to read the times as decimal seconds, or write them in whole nanoseconds"
        ));
        assert_eq!(first("time\n1x\n", &ms), "t.csv, line 2: field `time`: `1x` is not a whole number");
        assert_eq!(first("time\n1.2.3\n", &ms), "t.csv, line 2: field `time`: `1.2.3` is not a whole number");
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

    /// A row with more fields than the header has columns is refused, on
    /// both paths: a decimal comma (`0,5`) once read as 0 s with the `5`
    /// dropped. So is a header that names a column read twice.
    #[test]
    fn more_fields_than_columns_and_a_column_named_twice_are_refused() {
        let e = first_error("time\n0,1\n0,5\n", false);
        assert!(
            e.starts_with("t.csv, line 2: the row has 2 fields, but the header has 1 column (`time`): a comma inside a field splits it"),
            "{e}"
        );
        assert!(
            first_error("time,a\n0.1,\"x\",y\n", true).starts_with(
                "t.csv, line 2: the row has 3 fields, but the header has 2 columns (`time`, `a`)"
            )
        );
        // Fewer fields than columns are fine while the time is there.
        assert_eq!(times("time,a,b\n0.5\n1,x\n"), Ok(vec![500_000_000, 1_000_000_000]));
        let e = first_error("time,time\n0.1,0.2\n", false);
        assert_eq!(
            e,
            "t.csv, line 1: the header names the column `time` twice (columns 1 and 2): which one holds the times is unclear; rename or remove one"
        );
        let opts = CsvOptions { key_column: Some("user".into()), ..CsvOptions::new("t.csv") };
        let e = CsvTrace::from_reader(&b"user,time, user \n"[..], &opts).err().unwrap().to_string();
        assert!(
            e.contains("names the column `user` twice (columns 1 and 3): which one holds the client keys"),
            "{e}"
        );
        // A column not read may repeat.
        assert_eq!(times("time,x,x\n0.5,a,b\n"), Ok(vec![500_000_000]));
    }

    #[test]
    fn bom_crlf_and_blank_lines_are_fine() {
        assert_eq!(times("\u{feff}time\r\n0.5\r\n\r\n1.5\r\n"), Ok(vec![500_000_000, 1_500_000_000]));
    }

    /// The first error's text, which the fast path and the general one
    /// must agree on.
    fn first_error(text: &str, sort: bool) -> String {
        let opts = CsvOptions { sort, ..CsvOptions::new("t.csv") };
        let first = |t: Result<CsvTrace<&[u8]>, TraceError>| match t {
            Err(e) => e.to_string(),
            Ok(mut t) => t.find_map(Result::err).map(|e| e.to_string()).unwrap_or_default(),
        };
        let fast = first(CsvTrace::from_reader(text.as_bytes(), &opts));
        let general = first(CsvTrace::from_reader_general_only(text.as_bytes(), &opts));
        assert_eq!(fast, general, "{text:?}");
        fast
    }

    /// A row after blank lines is named by the line it is on (the csv
    /// crate, which this reader once copied, names the line after the row
    /// before it), whatever the line ends, on every path.
    #[test]
    fn a_row_after_blank_lines_is_named_by_its_own_line() {
        let abc = "field `time`: `abc` is not a decimal number";
        for (text, want) in [
            ("time\n0.5\n\nabc\n", format!("t.csv, line 4: {abc}")),
            ("time\r\n0.5\r\n\r\nabc\r\n", format!("t.csv, line 4: {abc}")),
            ("time\r0.5\r\rabc\r", format!("t.csv, line 4: {abc}")),
            ("time\n0.5\n\n\nabc", format!("t.csv, line 5: {abc}")),
            ("\n\ntime\n0.5\nabc\n", format!("t.csv, line 5: {abc}")),
            ("\r\n\ntime\n0.5\n\nabc\n", format!("t.csv, line 6: {abc}")),
            ("\u{feff}\ntime\n0.5\n\nabc\n", format!("t.csv, line 5: {abc}")),
            // A quote: the general parser reads from that line on.
            ("time\n0.5\n\n\"abc\"\n", format!("t.csv, line 4: {abc}")),
            ("time,a\n0.5\n\n\"0.6\",\"x\"\n\nabc\n", format!("t.csv, line 6: {abc}")),
            (
                "time\n0.1\n\n\"0.5\n0.6\n",
                "t.csv, line 4: a quote `\"` opened in field `time` (column 1) is never closed".into(),
            ),
            ("time\n0.1\n\n\"0.5\n0.6\"\n", "t.csv, line 4: field `time` runs over lines 4 to 5".into()),
            ("id,time\n1,0.5\n\n2\n", "t.csv, line 4: field `time` (column 2) is missing".into()),
        ] {
            let e = first_error(text, false);
            assert!(e.starts_with(&want), "{text:?}: {e}");
            assert!(first_error(text, true).starts_with(&want), "{text:?} sorted");
        }
        let e = first_error("time\n0.5\n\n0.4\n", false);
        assert!(e.starts_with("t.csv, line 4: field `time`: 0.4 s is earlier"), "{e}");
        // Sorting reads every row first: the bad one is still named by its line.
        let e = first_error("time\n3\n\n1\n\n\nx\n", true);
        assert!(e.starts_with("t.csv, line 7: field `time`: `x`"), "{e}");
    }

    /// The rows of a trace, or its first error, on both paths.
    fn rows_or_error(text: &str, key: bool) -> Result<Vec<(u64, u64)>, String> {
        let opts = CsvOptions { key_column: key.then(|| "key".into()), ..CsvOptions::new("t.csv") };
        let read = |t: Result<CsvTrace<&[u8]>, TraceError>| -> Result<Vec<(u64, u64)>, String> {
            t.map_err(|e| e.to_string())?
                .map(|r| r.map(|a| (a.time.get(), a.key)).map_err(|e| e.to_string()))
                .collect()
        };
        let fast = read(CsvTrace::from_reader(text.as_bytes(), &opts));
        assert_eq!(fast, read(CsvTrace::from_reader_general_only(text.as_bytes(), &opts)), "{text:?}");
        fast
    }

    /// A quote that is never closed swallowed every row after it into one
    /// field of a column the reader ignores: the rows silently vanished.
    /// The end of the file inside a quote is an error naming where it
    /// opened, whichever column it is in.
    #[test]
    fn a_quote_never_closed_is_an_error_naming_where_it_opened() {
        let ua = "time,user_agent\n0.001,curl/8.0\n0.002,\"Mozilla/5.0 (truncated\n0.003,curl/8.0\n0.004,x\n";
        assert_eq!(
            rows_or_error(ua, false).unwrap_err(),
            "t.csv, line 3: a quote `\"` opened in field `user_agent` (column 2) is never closed: the file ends \
             inside it (every line after it would be read as part of that field)"
        );
        let e = rows_or_error("time,path\n0.1,\"/a\n0.2,/b\n0.3,/c\n0.4,/d\n", false).unwrap_err();
        assert!(e.starts_with("t.csv, line 2: a quote `\"` opened in field `path` (column 2)"), "{e}");
        // In the key column, past the header's columns, after a closed
        // multi-line field in the same record, without a last LF.
        let e = rows_or_error("time,key\n0.1,a\n0.2,\"b\n0.3,c\n", true).unwrap_err();
        assert!(e.starts_with("t.csv, line 3: a quote `\"` opened in field `key` (column 2)"), "{e}");
        let e = rows_or_error("time\n0.1,x,\"y\n0.2\n", false).unwrap_err();
        assert!(e.starts_with("t.csv, line 2: a quote `\"` opened in column 3 is never closed"), "{e}");
        let e = rows_or_error("time,a,b\n0.1,\"x\n\ny\",\"z\n0.2", false).unwrap_err();
        assert!(e.starts_with("t.csv, line 4: a quote `\"` opened in field `b` (column 3)"), "{e}");
        // In the header itself.
        let e = rows_or_error("time,\"a\n0.1\n", false).unwrap_err();
        assert!(e.starts_with("t.csv, line 1: a quote `\"` opened in column 2 of the header"), "{e}");
        // A quote closed later is legal CSV in a column not read: its
        // record covers several lines, and the rows inside are one field.
        let text = "time,path\n0.1,\"/a\n0.2,/b\"\n0.3,/c\n";
        assert_eq!(rows_or_error(text, false), Ok(vec![(100_000_000, 0), (300_000_000, 0)]));
        let t = CsvTrace::from_reader(text.as_bytes(), &CsvOptions::new("t.csv")).unwrap();
        let mut t = t;
        assert_eq!(t.by_ref().count(), 2);
        assert_eq!(t.multiline_records(), (1, Some(2)));
        // Closed quotes, doubled quotes, a quote inside an unquoted field
        // and a quoted empty field at the end are no open quote.
        for ok in [
            "time,a\n0.1,\"x\"\"\"\n",
            "time,a\n0.1,x\"y\n",
            "time,a\n0.1,\"\"",
            "time,a\n\"0.1\",\"x\"\"\n\"\n",
        ] {
            assert!(rows_or_error(ok, false).is_ok(), "{ok:?}: {:?}", rows_or_error(ok, false));
        }
    }

    /// The first error of `text` read with records of at most `max` bytes,
    /// on both paths (the header may be as long: a test sets the cap before
    /// the header is read).
    fn capped_error(text: &str, max: usize) -> String {
        let read = |mut input: Input<&[u8]>| {
            input.set_max_record(max);
            match CsvTrace::with_input(input, &CsvOptions::new("t.csv")) {
                Err(e) => e.to_string(),
                Ok(mut t) => t.find_map(Result::err).map(|e| e.to_string()).unwrap_or_default(),
            }
        };
        let fast = read(Input::new(text.as_bytes()));
        assert_eq!(fast, read(Input::general_only(text.as_bytes())), "{text:?}");
        fast
    }

    /// A stray quote once read the whole rest of a 1.5 GB file into one
    /// field, in memory (2.1 GB, whatever --memory said). A record is now
    /// bounded: past the bound the reader stops, naming the line the record
    /// began on and, for a field that runs over lines, where its quote
    /// opened.
    #[test]
    fn a_record_past_the_bound_is_an_error_naming_where_it_began() {
        let rows: String = (0..200).map(|i| format!("0.{i:03},{}\n", "x".repeat(40))).collect();
        let stray = format!("time,ua\n0.001,ok\n0.002,\"abc\n{rows}");
        let e = capped_error(&stray, 1000);
        assert!(
            e.starts_with(
                "t.csv, line 3: a quoted field ran on for more than 1000 B: a stray quote? A quote `\"` opened in \
field `ua` (column 2) on line 3 is not closed by line "
            ),
            "{e}"
        );
        assert!(e.contains("ratesim reads at most 1000 B into one row"), "{e}");
        // Within the bound, the same file is the error it always was.
        assert!(capped_error(&stray, 1 << 20).contains("is never closed: the file ends inside it"));
        // A line that never ends, unquoted, on either path.
        let long = format!("time,ua\n0.1,{}", "y".repeat(5000));
        assert_eq!(
            capped_error(&long, 1000),
            "t.csv, line 2: the row is longer than 1000 B, in field `ua` (column 2): a trace row holds a time and a \
few short fields; is this a CSV trace?"
        );
        // Wherever reads cut it, and on either path: one byte over is too long, at the bound is fine.
        let row = |len: usize| format!("time,ua\n0.1,{}\n0.2,x\n", "y".repeat(len - 4));
        assert!(capped_error(&row(1000), 1000).is_empty());
        assert!(capped_error(&row(1001), 1000).starts_with("t.csv, line 2: the row is longer than 1000 B"));
        let quoted = |len: usize| format!("time,ua\n0.1,\"{}\"\n0.2,x\n", "y\n".repeat((len - 4) / 2));
        assert!(capped_error(&quoted(1000), 1000).is_empty());
        let e = capped_error(&quoted(1002), 1000);
        assert!(
            e.contains(
                "opened in field `ua` (column 2) on line 2 closes only on line 501, so every line between"
            ),
            "{e}"
        );
        // The header has its own, larger bound.
        let e = capped_error(&format!("time,{}\n0.1\n", "h".repeat(5000)), 1000);
        assert!(e.starts_with("t.csv, line 1: the row is longer than 1000 B"), "{e}");
        assert!(e.contains("in column 2 of the header"), "{e}");
        // The bounds fit what real files hold, and what other errors need
        // to see whole: a time field of a million digits (`t19`), a header
        // of a 20 MB line (`t27`).
        const { assert!(splitter::MAX_RECORD > 1_000_001 + 64 && splitter::MAX_HEADER > 20_000_000 + 64) };
    }

    /// A time or key field that runs over several lines is refused, naming
    /// the lines: it is a stray quote closed by a later one.
    #[test]
    fn a_time_or_key_over_several_lines_is_refused() {
        let e = rows_or_error("time,key\n0.1,a\n0.2,\"b\n0.3,c\"\n0.4,d\n", true).unwrap_err();
        assert!(e.starts_with("t.csv, line 3: the key field `key` runs over lines 3 to 4: a quote"), "{e}");
        let e = rows_or_error("time,key\n0.1,a\n\"0.2\n\n0.3\",c\n", true).unwrap_err();
        assert!(e.starts_with("t.csv, line 3: field `time` runs over lines 3 to 5"), "{e}");
        // The field starts on a later line than its record.
        let e = rows_or_error("x,key,time\n\"a\nb\",k,\"1\n\"\n", true).unwrap_err();
        assert!(e.starts_with("t.csv, line 3: field `time` runs over lines 3 to 4"), "{e}");
        // Without a key column, a multi-line key-like column is not read:
        // two rows (the quoted field holds the third line), both of key 0.
        assert_eq!(
            rows_or_error("time,key\n0.1,a\n0.2,\"b\n0.3,c\"\n", false),
            Ok(vec![(100_000_000, 0), (200_000_000, 0)])
        );
    }

    /// `next_located` names each row's line, on both paths, and none when
    /// sorted; `peek_sorted` shows the earliest row without taking it.
    #[test]
    fn next_located_names_lines() {
        let text = "time,a\n\n0.1,x\n\"0.2\",\"y\nz\"\n0.3,w\nabc\n";
        let opts = CsvOptions::new("t.csv");
        for mut t in [
            CsvTrace::from_reader(text.as_bytes(), &opts).unwrap(),
            CsvTrace::from_reader_general_only(text.as_bytes(), &opts).unwrap(),
        ] {
            let got: Vec<(Option<u64>, bool)> =
                std::iter::from_fn(|| t.next_located()).map(|(l, r)| (l, r.is_ok())).collect();
            assert_eq!(got, [(Some(3), true), (Some(4), true), (Some(6), true), (Some(7), false)]);
        }
        let opts = CsvOptions { sort: true, ..opts };
        let mut t = CsvTrace::from_reader(&b"time\n3\n1\n2\n"[..], &opts).unwrap();
        assert_eq!(t.peek_sorted(), Some(Arrival::at(Nanos::from_secs(1))));
        assert_eq!(t.next_located().map(|(l, r)| (l, r.unwrap().time)), Some((None, Nanos::from_secs(1))));
        assert_eq!(t.peek_sorted(), Some(Arrival::at(Nanos::from_secs(2))));
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
