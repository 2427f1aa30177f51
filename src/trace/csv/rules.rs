//! What a row must hold, and what the rows so far held.
//!
//! Owns [`RowRules`]: finding the time and key columns in the header,
//! parsing a row's time (the digits fast path, else the explaining parser)
//! and hashing its key, the time-order check, and the stable sort of a
//! trace read into memory. Knows nothing of how records are split.

use std::path::PathBuf;

use super::digits::parse_plain;
use super::splitter::{Fields, NO_FIELD};
use super::{CsvOptions, KeysAt};
use crate::time::{Nanos, TimeParseError, TimeUnit};
use crate::trace::{Arrival, ArrivalResult, TraceError};

/// `RowRules::key_index` without a key column: no field has this index.
pub(super) const NO_KEY: usize = NO_FIELD;

/// Text longer than this many bytes is shown by its start in errors.
const SHOWN_BYTES: usize = 64;

/// Header names listed in an error about a missing column.
const LISTED_COLUMNS: usize = 8;

/// How errors quote text from a trace (a field, a column name): whole in
/// backticks up to 64 bytes; longer, its first 40 bytes (whole characters)
/// and its length, so that a field of megabytes gives a short message.
/// Invalid UTF-8 shows as U+FFFD; control characters are escaped where the
/// message is displayed ([`crate::trace::TraceError`]).
#[doc(hidden)]
pub fn quoted(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if bytes.len() <= SHOWN_BYTES {
        return format!("`{text}`");
    }
    let cut = (0..=40).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    format!("`{}...` ({} bytes)", &text[..cut], bytes.len())
}

/// The message for a header without the time column (`time`) or the key
/// column of `options`, on `line`: the columns it has (the first few, each quoted
/// short), where the scenario names the column (`options.keys_at`), and
/// what the header suggests went wrong: the name in another case, for the
/// time column a file in UTF-16, separated by `;` or tabs, or with no
/// header at all (line 1 is data), else a column near the name by edit
/// distance, as a scenario's keys get one ([`crate::shown::nearest_key`]).
#[doc(hidden)]
pub fn missing_column(options: &CsvOptions, line: u64, headers: &[impl AsRef<[u8]>], time: bool) -> String {
    let (name, key) = match (time, options.key_column.as_deref()) {
        (true, _) | (false, None) => (options.time_column.as_str(), "time_column"),
        (false, Some(k)) => (k, "key_column"),
    };
    let mut found: Vec<String> = headers.iter().take(LISTED_COLUMNS).map(|h| quoted(h.as_ref())).collect();
    if headers.len() > LISTED_COLUMNS {
        found.push(format!("and {} more", headers.len() - LISTED_COLUMNS));
    }
    let shown = quoted(name.as_bytes());
    let mut message = format!("no {shown} column in the header (found: {})", found.join(", "));
    if let Some(at) = &options.keys_at {
        let source = &at.source;
        match if time { &at.time_column } else { &at.key_column } {
            Some(set) => message.push_str(&format!(", which `{source}.{key}` names (set at {set})")),
            None => message.push_str(&format!(
                ", the default of `{source}.{key}`, which is not set (the source's `path` is set at {})",
                at.path
            )),
        }
    }
    let first = headers.first().map_or(&[][..], |h| h.as_ref());
    let any = |f: &dyn Fn(&[u8]) -> bool| headers.iter().any(|h| f(h.as_ref()));
    // The name in another case (`Time`): column names are matched with
    // their case, so it is another column.
    let near =
        headers.iter().map(|h| h.as_ref().trim_ascii()).find(|h| h.eq_ignore_ascii_case(name.as_bytes()));
    let hint = if let Some(near) = near {
        Some(format!(
            "column names are matched with their case, and {} is not {shown}: write it {shown} in the \
             header, or set {key} = {} on the source",
            quoted(near),
            crate::shown::string(&String::from_utf8_lossy(near))
        ))
    } else if !time {
        None
    } else if first.starts_with(b"\xff\xfe") || first.starts_with(b"\xfe\xff") || any(&|h| h.contains(&0)) {
        Some("the file looks like UTF-16 text: save it as UTF-8".to_string())
    } else if any(&|h| h.contains(&b';') || h.contains(&b'\t')) {
        Some(
            "fields are separated by commas here, so `;` or tabs are part of the names: a file separated by \
             `;` or tabs is not supported, save it with commas"
                .to_string(),
        )
    } else if looks_like_a_number(first) {
        Some(format!(
            "line {line} is read as the header, and {} looks like data: a trace starts with a header row that \
             names its columns, like {shown}",
            quoted(first.trim_ascii())
        ))
    } else {
        None
    };
    if let Some(hint) = hint {
        message.push_str(": ");
        message.push_str(&hint);
    } else if let Some(near) = nearest_column(options, headers, name, time) {
        // A name of the scenario's is the likelier typo (set it to the
        // column's); the default `time`, the header's (rename the column,
        // or name it).
        let near_shown = quoted(near.as_bytes());
        let value = crate::shown::string(&near);
        message.push_str(&if time && options.time_column == "time" {
            format!(
                "; did you mean {shown}? Rename the column {near_shown} to {shown} in the header, or set {key} = \
                 {value} on the source"
            )
        } else {
            format!("; did you mean {near_shown}? Set {key} = {value} on the source")
        });
    } else {
        // Nothing near: what to do all the same.
        let what = if time { "the times" } else { "the client keys" };
        message.push_str(&format!(
            ": set {key} on the source to the header's column that holds {what}, or name that column {shown} in the header"
        ));
    }
    message
}

/// The header's column nearest to `name` by edit distance, if near
/// enough, leaving out the column the other of time and key is read from.
fn nearest_column(
    options: &CsvOptions,
    headers: &[impl AsRef<[u8]>],
    name: &str,
    time: bool,
) -> Option<String> {
    let other = if time { options.key_column.as_deref() } else { Some(options.time_column.as_str()) };
    let columns: Vec<String> =
        headers.iter().map(|h| String::from_utf8_lossy(h.as_ref().trim_ascii()).into_owned()).collect();
    let columns: Vec<&str> =
        columns.iter().map(String::as_str).filter(|c| !c.is_empty() && Some(*c) != other).collect();
    crate::shown::nearest_key(name, &columns).map(str::to_string)
}

/// The message for a time field, `text`, that `e` refuses: "field `time`:
/// `abc` is not ...". A decimal number under a whole `time_unit` (`1.5`
/// with "ms") says what the unit reads, where it is set, and what to do.
#[doc(hidden)]
#[cold]
pub fn bad_time(
    column: &str,
    unit: TimeUnit,
    keys_at: Option<&KeysAt>,
    text: &str,
    e: &TimeParseError,
) -> String {
    let plain = format!("field `{column}`: {e}");
    let (name, words) = match unit {
        TimeUnit::Ms => ("ms", "milliseconds"),
        TimeUnit::Us => ("us", "microseconds"),
        TimeUnit::Ns => ("ns", "nanoseconds"),
        TimeUnit::S => return plain,
    };
    if !matches!(e, TimeParseError::BadInteger(_))
        || !looks_like_a_number(text.as_bytes())
        || !text.contains('.')
    {
        return plain;
    }
    let setting = match keys_at.and_then(|k| Some((&k.source, k.time_unit.as_ref()?))) {
        Some((source, at)) => format!("`{source}.time_unit` = \"{name}\" (set at {at})"),
        None => format!("time_unit = \"{name}\""),
    };
    format!(
        "{plain}: {setting} reads whole {words}; remove `time_unit` to read the times as decimal seconds, or \
         write them in whole {words}"
    )
}

/// Digits with at most one `.`, perhaps signed: a time where a column name
/// should be.
fn looks_like_a_number(field: &[u8]) -> bool {
    let t = field.trim_ascii();
    let t = t.strip_prefix(b"+").or_else(|| t.strip_prefix(b"-")).unwrap_or(t);
    t.iter().any(u8::is_ascii_digit)
        && t.iter().all(|&b| b.is_ascii_digit() || b == b'.')
        && t.iter().filter(|&&b| b == b'.').count() <= 1
}

pub(super) struct RowRules {
    pub(super) path: PathBuf,
    pub(super) time_index: usize,
    /// The key column's index, or [`NO_KEY`].
    pub(super) key_index: usize,
    time_column: String,
    /// The key column's name, if there is one.
    key_column: Option<String>,
    /// The header's column names as errors show them ([`quoted`]).
    header: Vec<String>,
    /// How many columns the header has: no row may have more fields.
    columns: usize,
    unit: TimeUnit,
    /// Where a scenario sets the options, for a time the unit refuses.
    keys_at: Option<Box<KeysAt>>,
    last: Nanos,
    pub(super) rows: u64,
    /// Rows earlier than the row before them (only counted when sorting).
    pub(super) out_of_order: u64,
}

impl RowRules {
    /// The rules for the rows under `headers` (the header row's fields,
    /// on `line`): an error if the header is empty or lacks the time or
    /// key column.
    pub(super) fn from_header(
        line: u64,
        headers: &[Vec<u8>],
        options: &CsvOptions,
    ) -> Result<RowRules, TraceError> {
        let path = options.path.clone();
        if headers.is_empty() || (headers.len() == 1 && headers[0].is_empty()) {
            return Err(TraceError::File {
                path,
                message: "the file is empty: expected a header row with a `time` column".into(),
                entry: None,
            });
        }
        let column = |name: &str, time: bool| {
            headers.iter().position(|h| h.trim_ascii() == name.as_bytes()).ok_or_else(|| TraceError::Row {
                path: path.clone(),
                line,
                message: missing_column(options, line, headers, time),
                entry: None,
            })
        };
        let time_index = column(&options.time_column, true)?;
        let key_index =
            options.key_column.as_deref().map(|k| column(k, false)).transpose()?.unwrap_or(NO_KEY);
        // A column named twice would be read from its first place only,
        // perhaps the wrong one.
        let read = [
            (time_index, options.time_column.as_str(), "times"),
            (key_index, options.key_column.as_deref().unwrap_or_default(), "client keys"),
        ];
        for (index, name, holds) in read {
            let Some(first) = headers.get(index) else { continue };
            if let Some(later) =
                headers[index + 1..].iter().position(|h| h.trim_ascii() == first.trim_ascii())
            {
                return Err(TraceError::Row {
                    path,
                    line,
                    message: format!(
                        "the header names the column {} twice (columns {} and {}): which one holds the {holds} \
                         is unclear; rename or remove one",
                        quoted(name.as_bytes()),
                        index + 1,
                        index + 2 + later
                    ),
                    entry: None,
                });
            }
        }
        Ok(RowRules {
            path,
            time_index,
            key_index,
            time_column: options.time_column.clone(),
            key_column: options.key_column.clone(),
            header: headers.iter().map(|h| quoted(h.trim_ascii())).collect(),
            columns: headers.len(),
            unit: options.time_unit,
            keys_at: options.keys_at.clone().map(Box::new),
            last: Nanos::ZERO,
            rows: 0,
            out_of_order: 0,
        })
    }

    /// The rows of a whole trace in time order. Stable: rows with equal
    /// times keep their file order.
    pub(super) fn sort(mut rows: Vec<Arrival>) -> std::vec::IntoIter<Arrival> {
        rows.sort_by_key(|a| a.time);
        rows.into_iter()
    }

    /// Field `field` (from 0) of a row, named for errors: "field `user_agent`
    /// (column 2)", or "column 7" past the header's columns.
    pub(super) fn describe_field(&self, field: usize) -> String {
        match self.header.get(field) {
            Some(name) => format!("field {name} (column {})", field + 1),
            None => format!("column {}", field + 1),
        }
    }

    /// The error for a record (starting on `line`) whose time or key field
    /// holds a line break: a quoted field that runs over several lines. A
    /// time or key never does; a stray quote does, swallowing every line up
    /// to the next quote. Only the general parser's records can.
    #[cold]
    pub(super) fn spanning_field(&self, line: u64, record: &Fields<'_>) -> Option<TraceError> {
        for (index, role) in [(self.time_index, "time"), (self.key_index, "key")] {
            let Some(field) = record.get(index) else { continue };
            let breaks = memchr::memchr_iter(b'\n', field).count() as u64;
            if breaks == 0 {
                continue;
            }
            let first = line + record.lines_before(index);
            let name = match role {
                "time" => format!("field `{}`", self.time_column),
                _ => format!("the key field `{}`", self.key_column.as_deref().unwrap_or_default()),
            };
            let last = first + breaks;
            let message = format!(
                "{name} runs over lines {first} to {last}: a quote `\"` opens it on line {first} and closes it only on line {last}; a {role} must be on one line (a stray quote reads every line up to the next quote as one field)"
            );
            return Some(TraceError::Row { path: self.path.clone(), line: first, message, entry: None });
        }
        None
    }

    /// The message for a row of `fields` fields, more than the header's
    /// columns: a comma inside a field (a decimal comma, `0,5`) splits it,
    /// and the fields after it would be read as the wrong columns.
    #[cold]
    fn too_many_fields(&self, fields: usize) -> String {
        let listed: Vec<&str> = self.header.iter().take(LISTED_COLUMNS).map(String::as_str).collect();
        let more = self.columns.saturating_sub(LISTED_COLUMNS);
        format!(
            "the row has {fields} fields, but the header has {} column{} ({}{}): a comma inside a field splits it \
             (a decimal comma, like `0,5`, makes two fields): write decimals with a point, like 0.5, and quote a \
             field that holds a comma",
            self.columns,
            if self.columns == 1 { "" } else { "s" },
            listed.join(", "),
            if more > 0 { format!(", and {more} more") } else { String::new() }
        )
    }

    /// The arrival in a record of `fields` fields read at `line`, given its
    /// time and key fields (`None` if the record is too short for them).
    #[inline]
    pub(super) fn row(
        &mut self,
        line: u64,
        time: Option<&[u8]>,
        key: Option<&[u8]>,
        fields: usize,
        in_order: bool,
    ) -> ArrivalResult {
        let row_error =
            |message: String| Err(TraceError::Row { path: self.path.clone(), line, message, entry: None });
        if fields > self.columns {
            return row_error(self.too_many_fields(fields));
        }
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
        let t = match parse_plain(self.unit, field) {
            Some(t) => t,
            None => {
                let text = match std::str::from_utf8(field) {
                    Ok(t) => t,
                    Err(_) => return row_error(format!("field `{col}` is not UTF-8 text")),
                };
                if text.trim().is_empty() {
                    return row_error(format!("field `{col}` is empty: expected {}", self.unit.expected()));
                }
                match self.unit.parse_timestamp(text) {
                    Ok(t) => t,
                    // A field of megabytes is quoted by its start only.
                    Err(_) if text.len() > SHOWN_BYTES => {
                        return row_error(format!("field `{col}`: {} is not a time", quoted(field)));
                    }
                    Err(e) => return row_error(bad_time(col, self.unit, self.keys_at.as_deref(), text, &e)),
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
                Some(text) => crate::trace::key_hash(text.trim_ascii()),
                None => {
                    return row_error(format!(
                        "the key field `{}` (column {}) is missing: the row has {fields} field{}",
                        self.key_column.as_deref().unwrap_or_default(),
                        self.key_index + 1,
                        if fields == 1 { "" } else { "s" }
                    ));
                }
            }
        };
        self.last = t;
        self.rows += 1;
        Ok(Arrival::keyed(t, key))
    }
}
