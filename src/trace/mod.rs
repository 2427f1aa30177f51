//! Traffic sources: iterators of arrivals in time order, and their merge
//! ([`Merge`], in (time, source order)) into the one stream the engine reads.

mod burst;
mod constant;
mod csv;
mod merge;
mod poisson;

/// The CR/LF-to-LF reader under `CsvTrace`, public only for the test
/// oracle (`tests/common/csv_reference.rs`), which must read the same bytes
/// through the csv crate; not part of the API.
#[doc(hidden)]
pub use self::csv::LfLines;
pub(crate) use self::csv::STREAM_BYTES;
/// The CSV reader's digits fast path, public only for the `time_parse` fuzz
/// target (which checks it against `TimeUnit::parse_timestamp`) and the
/// test oracle; not part of the API.
#[doc(hidden)]
pub use self::csv::parse_plain;
pub use self::csv::{CsvOptions, CsvTrace, KeysAt, SORT_BYTES_PER_ROW};
/// How trace errors quote a header's columns and word a bad time, public
/// only for the test oracle (`tests/common/csv_reference.rs`); not part
/// of the API.
#[doc(hidden)]
pub use self::csv::{bad_time, missing_column, quoted};
pub use burst::Burst;
pub use constant::Constant;
pub use merge::Merge;
pub use poisson::Poisson;

use std::path::PathBuf;

use crate::time::Nanos;

/// One request arriving at the limiters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub time: Nanos,
    /// The client the request belongs to; each key gets its own limiters.
    /// Traces without keys use key 0 throughout.
    pub key: u64,
    /// The index of the source it came from among the merged ones (set by
    /// [`Merge`]; 0 for a single source). A scenario has at most
    /// `scenario::MAX_SOURCES` sources, so it fits.
    pub source: u16,
}

impl Arrival {
    /// An unkeyed arrival.
    pub const fn at(time: Nanos) -> Arrival {
        Arrival { time, key: 0, source: 0 }
    }

    /// An arrival of client `key`.
    pub const fn keyed(time: Nanos, key: u64) -> Arrival {
        Arrival { time, key, source: 0 }
    }
}

/// A fixed 64-bit FNV-1a hash (the `fnv` crate's, with its standard offset
/// basis): turns key text from traces into key numbers the same way on every
/// machine and in every run.
pub fn key_hash(bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    h.write(bytes);
    h.finish()
}

/// A problem reading a trace, located in its file, and in the scenario
/// when it names the `[[traffic]]` entry it is of (a scenario may read one
/// file in several entries; [`TraceError::in_entry`]). Its message is
/// shown with control characters escaped (see [`escape_controls`]): it may
/// quote the trace's own bytes.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{}cannot open trace {}", of_entry(*entry), crate::shown::path(path))]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
        entry: Option<usize>,
    },
    #[error("{}{}, line {line}: {}", of_entry(*entry), crate::shown::path(path), escape_controls(message))]
    Row { path: PathBuf, line: u64, message: String, entry: Option<usize> },
    #[error("{}{}: {}", of_entry(*entry), crate::shown::path(path), escape_controls(message))]
    File { path: PathBuf, message: String, entry: Option<usize> },
}

/// "`traffic[2]`, ", the start of the message of an error of entry 2.
fn of_entry(entry: Option<usize>) -> String {
    entry.map_or_else(String::new, |i| format!("`traffic[{i}]`, "))
}

impl TraceError {
    /// This error, said to be of `[[traffic]]` entry `entry` (unless it
    /// names its entry already).
    pub fn in_entry(mut self, entry: usize) -> TraceError {
        self.entry().get_or_insert(entry);
        self
    }

    /// This error, not naming its entry (inside a message that does).
    pub fn without_entry(mut self) -> TraceError {
        *self.entry() = None;
        self
    }

    fn entry(&mut self) -> &mut Option<usize> {
        match self {
            TraceError::Open { entry, .. }
            | TraceError::Row { entry, .. }
            | TraceError::File { entry, .. } => entry,
        }
    }
}

/// `text` with every character that would not show as itself (control
/// characters such as an escape sequence that clears the screen, a NUL or
/// a line break; zero-width and bidirectional formatting characters; a
/// stray byte-order mark) written as a Rust escape (`\u{1b}`, `\u{200b}`),
/// for messages that quote a trace's bytes: the same rule as a scenario's
/// text ([`crate::shown::escape`]).
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    crate::shown::escape(text)
}

/// A source of arrivals in non-decreasing time order.
pub type ArrivalResult = Result<Arrival, TraceError>;

/// Any shipped source, statically dispatched.
#[allow(clippy::large_enum_variant)] // few sources per run; no boxing on the hot path
pub enum Source {
    Burst(Burst),
    Constant(Constant),
    Poisson(Poisson),
    Csv(Box<CsvTrace>),
}

impl Iterator for Source {
    type Item = ArrivalResult;
    #[inline]
    fn next(&mut self) -> Option<ArrivalResult> {
        match self {
            Source::Burst(s) => s.next().map(Ok),
            Source::Constant(s) => s.next().map(Ok),
            Source::Poisson(s) => s.next().map(Ok),
            Source::Csv(s) => s.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::key_hash;

    /// Published FNV-1a 64-bit values: key numbers must never change, or
    /// the same trace would give clients other limiters.
    /// Trace bytes in a message cannot clear the screen or hide text.
    #[test]
    fn messages_escape_control_characters() {
        let e = super::TraceError::Row {
            path: "t.csv".into(),
            line: 2,
            message: "`\u{1b}[2J\0\t\u{202e}x`".into(),
            entry: None,
        };
        assert_eq!(e.to_string(), "t.csv, line 2: `\\u{1b}[2J\\u{0}\\t\\u{202e}x`");
        // Zero-width characters and a stray byte-order mark too: `ti\u{200b}me`
        // read as `time` and hid why the column was not found.
        let e = super::TraceError::File {
            path: "t.csv".into(),
            message: "`ti\u{200b}me`, `\u{feff}id`".into(),
            entry: None,
        };
        assert_eq!(e.to_string(), "t.csv: `ti\\u{200b}me`, `\\u{feff}id`");
        let e = super::TraceError::File { path: "t.csv".into(), message: "plain `é`".into(), entry: None };
        assert_eq!(e.to_string(), "t.csv: plain `é`");
    }

    /// An error names the `[[traffic]]` entry it is of, once, and keeps
    /// its cause.
    #[test]
    fn errors_name_their_entry() {
        use std::error::Error;
        let row =
            super::TraceError::Row { path: "t.csv".into(), line: 3, message: "bad".into(), entry: None };
        let row = row.in_entry(2).in_entry(5);
        assert_eq!(row.to_string(), "`traffic[2]`, t.csv, line 3: bad");
        assert_eq!(row.without_entry().to_string(), "t.csv, line 3: bad");
        let io = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let open = super::TraceError::Open { path: "t.csv".into(), source: io, entry: None }.in_entry(1);
        assert_eq!(open.to_string(), "`traffic[1]`, cannot open trace t.csv");
        // The cause comes next in the chain, once.
        let source = open.source().expect("the I/O error");
        assert_eq!(
            source.to_string(),
            std::io::Error::from(std::io::ErrorKind::PermissionDenied).to_string()
        );
        assert!(source.source().is_none());
    }

    #[test]
    fn key_hash_is_standard_fnv1a_64() {
        assert_eq!(key_hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(key_hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(key_hash(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
