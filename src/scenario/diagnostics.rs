//! Located scenario errors: turning byte offsets into `file:line:column`,
//! naming the key a parser error is about, and the words of the messages
//! ("did you mean", plain type names). Everything a user sees when a
//! scenario is refused is worded here or by the validator that refused it.

use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::Spanned;

pub use crate::shown::nearest_key;
use crate::shown::{code, number, string};
use crate::time::{Nanos, TimeParseError, parse_duration};

/// What is wrong with a file a scenario names (a trace, a font), if
/// anything: its errors say `"<kind> file <path> <problem>"`.
#[derive(Debug, thiserror::Error)]
pub enum FileProblem {
    #[error("does not exist")]
    Missing,
    #[error("is a directory, not a file")]
    Directory,
    /// A device, pipe or socket: it may never end (`/dev/zero`) and cannot
    /// be opened again for each run of a sweep.
    #[error("is not a regular file (a device, pipe or socket)")]
    NotRegular,
    /// The message says why (a cause of its own would say it twice).
    #[error("cannot be read ({0})")]
    Unreadable(std::io::Error),
}

impl FileProblem {
    pub fn of(path: &std::path::Path) -> Option<FileProblem> {
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => None,
            Ok(m) if m.is_dir() => Some(FileProblem::Directory),
            Ok(_) => Some(FileProblem::NotRegular),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(FileProblem::Missing),
            Err(e) => Some(FileProblem::Unreadable(e)),
        }
    }
}

/// A byte order mark, as messages name it: U+FEFF shows as nothing.
pub const BOM: &str = "U+FEFF, an invisible character some editors write at the start of a file";

/// The largest scenario file read: far above any real one, and a guard
/// against `ratesim check /dev/zero` reading until memory runs out.
pub const MAX_SCENARIO_BYTES: u64 = 16 << 20;

/// A scenario problem, located.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("cannot read scenario {}", crate::shown::escape(&.path.to_string_lossy()))]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "scenario {} is not a regular file ({kind}): reading it would wait for whatever writes into it; save the scenario to a file",
        crate::shown::escape(&.path.to_string_lossy())
    )]
    NotAFile { path: PathBuf, kind: &'static str },
    #[error("scenario {} is larger than {} MiB: a scenario is a few kilobytes (give a large trace as a CSV file)", crate::shown::escape(&.path.to_string_lossy()), MAX_SCENARIO_BYTES >> 20)]
    TooLarge { path: PathBuf },
    /// The message may quote the scenario's text: what would not print as
    /// itself is escaped where it is shown (`crate::shown::escape`).
    #[error("{}:{line}:{column}: {}", crate::shown::escape(&.path.to_string_lossy()), crate::shown::escape(.message))]
    At { path: PathBuf, line: usize, column: usize, message: String },
    #[error("{}: {}", crate::shown::escape(&.path.to_string_lossy()), crate::shown::escape(.message))]
    File { path: PathBuf, message: String },
}

/// A scenario file that is not UTF-8: where its first bad byte is (the
/// line and column of the text before it, as an editor counts them after
/// a byte order mark), the key it is in, and what to do.
pub fn not_utf8(path: &Path, bytes: &[u8], e: std::str::Utf8Error) -> ScenarioError {
    let at = e.valid_up_to();
    let bad = &bytes[at..at + e.error_len().unwrap_or(bytes.len() - at).min(4)];
    let shown = bad.iter().map(|b| format!("0x{b:02X}")).collect::<Vec<_>>().join(" ");
    let what = if bad.len() == 1 { format!("the byte {shown} is") } else { format!("the bytes {shown} are") };
    let utf16 = bytes.starts_with(b"\xff\xfe") || bytes.starts_with(b"\xfe\xff");
    // The text before it is UTF-8.
    let before = std::str::from_utf8(&bytes[..at]).unwrap_or("");
    let (before, at) = match before.strip_prefix('\u{feff}') {
        Some(rest) => (rest, at - 3),
        None => (before, at),
    };
    let ctx = Ctx { path, text: before };
    // In a comment no escape helps, and the key of its line is not what
    // the byte is in.
    let in_comment = !utf16 && scan(before, at).comment;
    let message = if utf16 {
        "the file looks like UTF-16 text (it starts with a UTF-16 byte order mark): a scenario is UTF-8 text; save it as UTF-8".to_string()
    } else if in_comment {
        let (what, which) = match what.strip_suffix(" is") {
            Some(one) => (one, "which is"),
            None => (what.trim_end_matches(" are"), "which are"),
        };
        format!(
            "a comment holds {what}, {which} not UTF-8 text: a scenario is read as UTF-8, its comments too (this one may be saved as Latin-1 or Windows-1252); save it as UTF-8, or remove the character from the comment"
        )
    } else {
        format!(
            "{what} not UTF-8 text: a scenario is read as UTF-8 (this one may be saved as Latin-1 or Windows-1252); save it as UTF-8, or write the character as an escape in a string in double quotes, like \\u00e9 for é"
        )
    };
    let key = if utf16 || in_comment {
        None
    } else {
        inline_value_at(before, at).or_else(|| key_of_line(before, at))
    };
    match key {
        Some(key) => ctx.at(at..at, format!("{}: {message}", code(&key))),
        None => ctx.at(at..at, message),
    }
}

/// The scenario text being validated, for locating errors in it.
pub struct Ctx<'a> {
    pub path: &'a Path,
    pub text: &'a str,
}

impl Ctx<'_> {
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let col = before.rfind('\n').map_or(before.chars().count(), |i| before[i + 1..].chars().count()) + 1;
        (line, col)
    }

    /// An error at the start of `span`.
    pub fn at(&self, span: Range<usize>, message: impl Into<String>) -> ScenarioError {
        let (line, column) = self.line_col(span.start);
        ScenarioError::At { path: self.path.to_path_buf(), line, column, message: message.into() }
    }

    /// `file:line:column` of the start of `span`, for an error found later.
    pub fn location(&self, span: Range<usize>) -> String {
        let (line, column) = self.line_col(span.start);
        format!("{}:{line}:{column}", crate::shown::path(self.path))
    }

    /// An error about the file as a whole.
    pub fn file(&self, message: impl Into<String>) -> ScenarioError {
        ScenarioError::File { path: self.path.to_path_buf(), message: message.into() }
    }

    /// A TOML parser or type error: located at its span, with the key it is
    /// about and in plain words.
    pub fn toml(&self, e: &toml::de::Error) -> ScenarioError {
        // A date-time where a table belongs is said as one.
        let dated = e.span().and_then(|span| date_for_a_table(e.message(), self.text.get(span)?));
        let raw = dated.as_deref().unwrap_or(e.message());
        let message = serde_message(raw);
        match e.span() {
            Some(span) => {
                if let Some((at, message)) = list_for_a_table(self.text, span.start, raw) {
                    return self.at(at..at, message);
                }
                let message = date_time(&message, self.text.get(span.clone()).unwrap_or(""));
                // A number the parser cannot read: at its start.
                let (span, message) = match plain_number(raw, self.text, span.start) {
                    Some((at, plain)) => (at..at, plain),
                    None => (span, message),
                };
                // serde names unknown keys itself; for the rest, say which key.
                // The top-level table's span is empty at the start of the
                // file: its errors (a missing `name`) are no first key's.
                // A value in an inline table is named with its own key
                // (`traffic[0].retry.base`), not only the table's.
                // An error about a whole inline table in a list (a missing
                // key of the second `retry_policies` entry) is at its `{`:
                // named with its place in the list, `sweep.retry_policies[1]`.
                // A value of the wrong type where a list holds tables
                // (`retry_policies = [[{ ... }]]`, `outage = [{ ... }, 5]`)
                // is named with its place in the list too.
                let expects_table = raw.contains("expected struct ") || dated.is_some();
                let key = if span == (0..0) {
                    None
                } else {
                    inline_value_at(self.text, span.start)
                        .or_else(|| {
                            let at_brace = self.text.get(span.start..).is_some_and(|t| t.starts_with('{'));
                            at_brace.then(|| inline_table_at(self.text, span.start + 1)).flatten()
                        })
                        .or_else(|| {
                            // An item of a list of numbers or durations of
                            // the wrong type (`loads = [1, 1979-05-27]`) is
                            // named with its place too: the error is about
                            // that item, not the list.
                            (expects_table || raw.starts_with("invalid type:"))
                                .then(|| list_item_at(self.text, span.start))
                                .flatten()
                        })
                        .or_else(|| key_path_at(self.text, span.start))
                };
                let message = match key {
                    Some(key) if let Some(one) = one_table_as_a_list(&key, raw) => one,
                    Some(key) if !message.starts_with("unknown field") => {
                        let hint = misplaced_key(self.text, &key, &message)
                            .or_else(|| missing_choice(&key, raw))
                            .or_else(|| missing_example(Some(&key), raw))
                            .or_else(|| bare_duration(&key, raw))
                            .or_else(|| bare_duration(&key, &message))
                            .or_else(|| whole_float(raw, self.text.get(span.clone()).unwrap_or("")))
                            .unwrap_or_default();
                        format!("{}: {}{hint}", code(&key), found_last(&array_of_tables(&key, &message)))
                    }
                    key => {
                        // A key inside an inline table (`retry = { bse = 1 }`)
                        // is named with that table's path.
                        let inline = unknown_field(raw).and_then(|(unknown, _)| {
                            inline_table_at(self.text, span.start).map(|t| format!("{t}.{unknown}"))
                        });
                        let message =
                            found_last(&in_table(&message, raw, inline.as_deref().or(key.as_deref())));
                        let hint = top_level_key_of_a_table(self.text, span.start, raw)
                            .or_else(|| missing_example(key.as_deref(), raw));
                        format!("{message}{}", hint.unwrap_or_default())
                    }
                };
                self.at(span, message)
            }
            None => self.unplaced(&message),
        }
    }

    /// A byte order mark (U+FEFF) past the start of the file, on the
    /// line of a syntax error at `at` and before it, outside strings and
    /// comments: TOML takes one at the start only, and the parser's words
    /// name it as a key (`` expected `=` after the key `\u{feff}` ``) past
    /// where it stands. Said at the mark.
    fn stray_bom(&self, at: usize) -> Option<ScenarioError> {
        let (line, start) = line_at(self.text, at);
        let (i, _) = line.char_indices().take_while(|&(i, _)| start + i <= at).find(|&(i, c)| {
            c == '\u{feff}' && {
                let scanned = scan(self.text, start + i);
                scanned.inside.is_none() && !scanned.comment
            }
        })?;
        let at = start + i;
        // The parser skips one mark at the start of the file, and so did
        // we: one at the start of what is left is a second.
        let message = if at == 0 {
            format!("a second byte order mark ({BOM}): a file starts with one at most; remove it")
        } else {
            format!("a byte order mark ({BOM}) past the start of the file, where none belongs: remove it")
        };
        Some(self.at(at..at, message))
    }

    /// A TOML syntax error, found before any key is read: located at its
    /// span, in plain words, and named by the key whose `key = value` it
    /// is in (the statement's own, for a list running over several lines;
    /// never another key on a line before). Something left open above (a
    /// string, list or inline table) is reported where it was opened.
    pub fn syntax(&self, e: &toml::de::Error) -> ScenarioError {
        let Some(span) = e.span() else { return self.unplaced(e.message()) };
        if let Some(bom) = self.stray_bom(span.start) {
            return bom;
        }
        // The parser stops at a lone carriage return in a key or a table
        // header (`name\r= 1`, `[limit\r]`) with the words for what it was
        // reading there: said as the carriage return it is.
        let bytes = self.text.as_bytes();
        let lone_cr = bytes.get(span.start) == Some(&b'\r')
            && bytes.get(span.start + 1) != Some(&b'\n')
            && scan(self.text, span.start).inside.is_none();
        let raw = if lone_cr { BARE_CR } else { e.message() };
        // Old Mac line ends throughout: not one stray `\r` at the first.
        if raw.starts_with(BARE_CR) && !self.text.contains('\n') && self.text.matches('\r').count() > 1 {
            return self.file(
                "the file ends its lines with a carriage return alone (\\r, the line ends of old Macs), which TOML does \
                 not take: it ends a line with \\n or \\r\\n; convert the file to LF or CRLF line ends",
            );
        }
        // A carriage return with no line feed after it: at the `\r`
        // itself, where the parser points past it.
        let span = match bare_cr(raw, self.text, span.start) {
            Some(at) => at..at + 1,
            None => span,
        };
        if let Some(open) = still_open(self.text, span.start) {
            let (line, _) = self.line_col(span.start);
            let (at, message) = still_open_message(self.text, &open, span.start, line);
            let key = match open {
                Open::Key(..) => None,
                _ => inline_value_at(self.text, at).or_else(|| key_path_at(self.text, at)),
            };
            let message = match key {
                Some(key) => format!("{}: {message}", code(&key)),
                None => message,
            };
            return self.at(at..at, message);
        }
        if let Some((at, message)) = plain_number(raw, self.text, span.start) {
            // Named with its key in an inline table, or with its line's.
            let key = inline_value_at(self.text, at).or_else(|| key_of_line(self.text, at));
            return self.at(at..at, key.map_or(message.clone(), |key| format!("{}: {message}", code(&key))));
        }
        let message = plain_syntax(raw, self.text, span.clone());
        if let Some(list) = duplicate_list(raw, self.text, span.start) {
            return self.at(
                span,
                format!(
                    "{}: duplicate key: [[{list}]] adds a table to the list `{list}`, but `{list}` is already set above (by `{list} = ...`, a dotted `{list}.key = ...` or a [{list}] table); give it one way only, as [[{list}]] tables",
                    code(&list)
                ),
            );
        }
        if let Some(table) = duplicate_table(raw, self.text, span.start) {
            let first = first_definition(self.text, span.start, &table);
            let message = if code(&table) == format!("`{table}`") {
                match first {
                    Some(Definition { line, by: None }) => format!(
                        "`{table}`: duplicate key: the table [{table}] is written a second time here (first on line {line}); give all its keys under one [{table}] header"
                    ),
                    Some(Definition { line, by: Some(key) }) => format!(
                        "`{table}`: duplicate key: the table [{table}] is set already on line {line}, by {key}; give all its keys under one [{table}] header"
                    ),
                    None => format!(
                        "`{table}`: duplicate key: the table [{table}] is written a second time here; give all its keys under one [{table}] header"
                    ),
                }
            } else {
                // Named once, escaped and cut.
                format!(
                    "{}: duplicate key: the table is written a second time here; give all its keys under one header",
                    code(&table)
                )
            };
            return self.at(span, message);
        }
        if let Some((path, key)) = duplicate_inline_key(raw, self.text, span.clone()) {
            return self.at(
                span,
                format!(
                    "{}: duplicate key: this inline table already sets {}; give each key once",
                    code(&path),
                    code(&key)
                ),
            );
        }
        // A line of a list that runs over several lines is the list's,
        // even where it reads `key = value`: named by the list's key.
        let scanned = scan(self.text, span.start);
        if let (Some(value), Some(&(b'[', _))) = (scanned.value, scanned.open.last())
            && value < line_at(self.text, span.start).1
            && let Some(key) = key_path_at(self.text, value)
        {
            return self.at(span, format!("{}: {message}", code(&key)));
        }
        match key_of_line(self.text, span.start) {
            Some(key) => {
                let first = if raw.starts_with("duplicate key") {
                    first_setting(self.text, span.start, &key)
                } else {
                    None
                };
                let into = || dotted_into(self.text, span.start);
                let message = match first {
                    Some(line) => format!(
                        "{}: {message}: it is set already on line {line}; give each key once",
                        code(&key)
                    ),
                    None if let Some(why) = into().and_then(|d| d.why(raw)) => {
                        format!("{}: {why}", code(&key))
                    }
                    None => format!("{}: {message}", code(&key)),
                };
                self.at(span, message)
            }
            // A line inside a value that runs over several lines (a
            // list's items): the statement's key.
            None => match scanned.value.and_then(|v| key_path_at(self.text, v)) {
                Some(key) => self.at(span, format!("{}: {message}", code(&key))),
                None => self.at(span, message),
            },
        }
    }

    pub fn duration(&self, key: &str, v: &Spanned<String>) -> Result<Nanos, ScenarioError> {
        parse_duration(v.get_ref()).map_err(|e| self.at(v.span(), duration_message(key, &e)))
    }

    pub fn positive_duration(&self, key: &str, v: &Spanned<String>) -> Result<Nanos, ScenarioError> {
        let d = self.duration(key, v)?;
        if d == Nanos::ZERO {
            return Err(self.at(
                v.span(),
                format!(
                    "`{key}` must be longer than 0, got {}{}",
                    string(v.get_ref()),
                    minus_zero(v.get_ref())
                ),
            ));
        }
        Ok(d)
    }

    pub fn at_least_one(&self, key: &str, v: &Spanned<i64>) -> Result<u64, ScenarioError> {
        let whole = Spanned::new(v.span(), Whole(i128::from(*v.get_ref())));
        Ok(self.at_least_one_whole(key, &whole)? as u64)
    }

    /// `at_least_one` for a key with a bound of its own, which the caller
    /// checks on the number as written.
    pub fn at_least_one_whole(&self, key: &str, v: &Spanned<Whole>) -> Result<i128, ScenarioError> {
        let n = v.get_ref().0;
        if n < 1 {
            return Err(self.at(v.span(), format!("`{key}` must be a whole number of at least 1, got {n}")));
        }
        Ok(n)
    }

    pub fn rate(&self, key: &str, v: &Spanned<f64>) -> Result<f64, ScenarioError> {
        let r = *v.get_ref();
        if !r.is_finite() || r <= 0.0 {
            return Err(
                self.at(v.span(), format!("`{key}` must be a finite number above 0, got {}", number(r)))
            );
        }
        Ok(r)
    }

    /// `key` = `v` is none of `allowed`: the list, and the nearest.
    pub fn one_of(&self, key: &str, v: &Spanned<String>, allowed: &[&str]) -> ScenarioError {
        let got = v.get_ref();
        let near = nearest(got, allowed, 3).map(|a| format!("; did you mean \"{a}\"?")).unwrap_or_default();
        let list = allowed.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(", ");
        self.at(v.span(), format!("`{key}` = {} is not known: expected one of {list}{near}", string(got)))
    }
}

/// ", which is 0" after a zero written with a minus sign (`"-0s"`), which
/// is no shorter than "0s".
fn minus_zero(text: &str) -> &'static str {
    if text.trim_start().starts_with('-') { ", which is 0 (a minus sign does not make it less)" } else { "" }
}

/// What is wrong with the duration of `key`: the parser's words, or for
/// an empty one what to give.
pub fn duration_message(key: &str, e: &TimeParseError) -> String {
    match e {
        TimeParseError::Empty => format!(
            "`{key}` is empty: expected a duration, a number and a unit, like \"10ms\", \"1s\" or \"1m30s\" ({})",
            crate::time::UNITS
        ),
        e => format!("`{key}`: {e}"),
    }
}

/// A whole number as written, kept past the range of `i64`, for the keys
/// with a bound of their own: `max_attempts = 99999999999999999999` is then
/// refused with the key's own range ("from 1 to 1000"), where an `i64`
/// could only say how large a number the type holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Whole(pub i128);

/// Reads a `Whole` from any integer the TOML reader hands over (it passes
/// those past `i64` as `i128`).
struct WholeVisitor;

impl serde::de::Visitor<'_> for WholeVisitor {
    type Value = Whole;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a whole number")
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Whole, E> {
        Ok(Whole(v.into()))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Whole, E> {
        Ok(Whole(v.into()))
    }
    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Whole, E> {
        Ok(Whole(v))
    }
    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Whole, E> {
        Ok(Whole(i128::try_from(v).unwrap_or(i128::MAX)))
    }
}

impl<'de> serde::Deserialize<'de> for Whole {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Whole, D::Error> {
        d.deserialize_any(WholeVisitor)
    }
}

impl std::fmt::Display for Whole {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Any TOML value as written, for keys that take values of several types
/// (`nodes.balance`, `nodes.per_node`): integers past `i64` kept (as
/// [`Whole`] keeps them), and the place of each list item and table value,
/// so that an error can name and point at the one that is wrong.
#[derive(Clone, Debug, PartialEq)]
pub enum Loose {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
    /// A date or time, as written.
    Date(String),
    List(Vec<Spanned<Loose>>),
    Table(Vec<(String, Spanned<Loose>)>),
}

impl<'de> serde::Deserialize<'de> for Loose {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Loose, D::Error> {
        struct V;
        use serde::de::Visitor;
        impl<'de> Visitor<'de> for V {
            type Value = Loose;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Loose, E> {
                Ok(Loose::Int(v.into()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Loose, E> {
                Ok(Loose::Int(v.into()))
            }
            fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Loose, E> {
                Ok(Loose::Int(v))
            }
            fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Loose, E> {
                Ok(Loose::Int(i128::try_from(v).unwrap_or(i128::MAX)))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Loose, E> {
                Ok(Loose::Float(v))
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Loose, E> {
                Ok(Loose::Bool(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Loose, E> {
                Ok(Loose::Str(v.to_string()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Loose, E> {
                Ok(Loose::Str(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Loose, A::Error> {
                let mut list = Vec::new();
                while let Some(v) = seq.next_element::<Spanned<Loose>>()? {
                    list.push(v);
                }
                Ok(Loose::List(list))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Loose, A::Error> {
                let mut table = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    // The TOML reader hands a date over as a one-key table.
                    if key.starts_with("$__toml_private") {
                        return Ok(Loose::Date(map.next_value::<String>()?));
                    }
                    table.push((key, map.next_value::<Spanned<Loose>>()?));
                }
                Ok(Loose::Table(table))
            }
        }
        d.deserialize_any(V)
    }
}

/// As TOML writes it: `1.0` for a float, strings quoted.
impl std::fmt::Display for Loose {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Loose::Int(n) => write!(f, "{n}"),
            Loose::Float(x) if x.is_nan() => write!(f, "nan"),
            Loose::Float(x) => write!(f, "{x:?}"),
            Loose::Str(s) => write!(f, "{}", string(s)),
            Loose::Bool(b) => write!(f, "{b}"),
            Loose::Date(d) => write!(f, "{}", crate::shown::plain(d)),
            Loose::List(items) => {
                let items: Vec<String> = items.iter().map(|i| i.get_ref().to_string()).collect();
                write!(f, "[{}]", items.join(", "))
            }
            Loose::Table(entries) => {
                let entries: Vec<String> =
                    entries.iter().map(|(k, v)| format!("{k} = {}", v.get_ref())).collect();
                write!(f, "{{ {} }}", entries.join(", "))
            }
        }
    }
}

/// A key that takes a whole number or a list of them (`slots = 10`,
/// `burst = [0, 5, 10]`: one limiter per value), as it is written.
pub enum Counts {
    One(Whole),
    List(Vec<Spanned<Whole>>),
}

impl<'de> serde::Deserialize<'de> for Counts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Counts, D::Error> {
        struct V;
        use serde::de::Visitor;
        impl<'de> Visitor<'de> for V {
            type Value = Counts;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number or a list of them, like 10 or [2, 10]")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Counts, E> {
                WholeVisitor.visit_i64(v).map(Counts::One)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Counts, E> {
                WholeVisitor.visit_u64(v).map(Counts::One)
            }
            fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Counts, E> {
                WholeVisitor.visit_i128(v).map(Counts::One)
            }
            fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Counts, E> {
                WholeVisitor.visit_u128(v).map(Counts::One)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Counts, A::Error> {
                let mut list = Vec::new();
                while let Some(v) = seq.next_element::<Spanned<Whole>>()? {
                    list.push(v);
                }
                Ok(Counts::List(list))
            }
        }
        d.deserialize_any(V)
    }
}

/// A table that is read from a TOML table only, for the entries of a list
/// of tables (`[sweep] retry_policies`, `[nodes] outage`). serde's derived
/// structs read a list too, item by item as their fields in order, so a
/// list where an entry belongs (`retry_policies = [[{ ... }], { ... }]`)
/// was refused at its first item, as if that were the entry's first key:
/// "`sweep.retry_policies[0][0]`: expected a string, found a table". Here
/// the entry itself is refused, as a list, named with its place in the
/// list ([`list_item_at`]).
pub struct OnlyTable<T>(pub T);

/// The name serde gives a table's struct in its messages ("expected struct
/// RawRetry"), which [`plain_types`] puts in words ("a retry table").
pub trait TableName {
    const STRUCT: &'static str;
}

impl<'de, T: serde::Deserialize<'de> + TableName> serde::Deserialize<'de> for OnlyTable<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<OnlyTable<T>, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de> + TableName> serde::de::Visitor<'de> for V<T> {
            type Value = OnlyTable<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "struct {}", T::STRUCT)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<OnlyTable<T>, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(OnlyTable)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// The candidate nearest to `word` by edit distance, if within `max`.
pub fn nearest<'c>(word: &str, candidates: &[&'c str], max: usize) -> Option<&'c str> {
    candidates
        .iter()
        .map(|c| (strsim::levenshtein(word, c), *c))
        .filter(|(d, _)| *d <= max)
        .min()
        .map(|(_, c)| c)
}

/// serde's Rust type names in words people use.
pub fn plain_types(message: &str) -> String {
    if let Some(n) = message
        .strip_prefix("invalid type: integer `")
        .and_then(|r| r.strip_suffix("` as i128, expected i64"))
    {
        return format!("{n} is too large: expected a whole number up to 9223372036854775807");
    }
    // From 2^63 to 2^64 - 1 the reader hands over a u64, which an i64
    // refuses as an "invalid value".
    if let Some(n) = message
        .strip_prefix("invalid value: integer `")
        .and_then(|r| r.strip_suffix("`, expected i64"))
        .filter(|n| !n.starts_with('-'))
    {
        return format!("{n} is too large: expected a whole number up to 9223372036854775807");
    }
    // The TOML parser's own words for a number too long for any integer.
    if message.trim_end() == "integer number overflowed" {
        return "too many digits: a whole number here is at most 9223372036854775807".to_string();
    }
    // A table given as something else: serde names the Rust struct.
    if let Some((got, wanted)) = message.split_once("expected struct ") {
        let table = if wanted.starts_with("RawRetry") { RETRY_TABLE } else { "a table" };
        let got = if got.starts_with("invalid length") {
            "invalid type: a list, ".to_string()
        } else {
            got.to_string()
        };
        return format!("{got}expected {table}");
    }
    message
        .replace("expected i64", "expected a whole number")
        .replace("expected f64", "expected a number")
        .replace("expected a sequence", "expected a list, like [2, 10]")
        .replace("expected a boolean", "expected true or false")
}

/// serde's `invalid type: X, expected Y` said the way round people read
/// it, with the value in words and not Rust's: `expected a whole number,
/// found the string "ten"`, `expected a string, found the number 5`,
/// `expected a list (like [2, 10]), found a table`. An explanation after
/// the expected type (`expected an array of tables: write ...`) follows
/// what was found. Any other message is returned as it is.
pub fn found_last(message: &str) -> String {
    let Some(rest) = message.strip_prefix("invalid type: ") else { return message.to_string() };
    let Some((found, expected)) = found_and_expected(rest) else { return message.to_string() };
    if let Some((what, why)) = expected.split_once(": ") {
        return format!("expected {what}, found {found}: {why}");
    }
    match expected.split_once(", like ") {
        Some((what, like)) => format!("expected {what} (like {like}), found {found}"),
        None => format!("expected {expected}, found {found}"),
    }
}

/// The value serde found, in words, and what it expected, from the rest of
/// "invalid type: X, expected Y".
fn found_and_expected(rest: &str) -> Option<(String, &str)> {
    // A string is quoted as Rust's Debug does: it ends at the first quote
    // not escaped, and may have been cut ("abc..." (100 bytes)).
    if let Some(quoted) = rest.strip_prefix("string \"") {
        let mut escaped = false;
        let end = quoted.char_indices().find_map(|(i, c)| {
            let closes = c == '"' && !escaped;
            escaped = c == '\\' && !escaped;
            closes.then_some(i)
        })?;
        let after = &quoted[end + 1..];
        let cut = after.strip_prefix(" (").and_then(|r| r.split_once(" bytes)")).map(|(n, _)| n.len() + 9);
        let (shown, after) = after.split_at(cut.unwrap_or(0));
        let expected = after.strip_prefix(", expected ")?;
        return Some((format!("the string \"{}\"{shown}", &quoted[..end]), expected));
    }
    const VALUES: [(&str, &str); 4] = [
        ("integer", "the number "),
        ("floating point", "the number "),
        ("boolean", ""),
        ("date-time", "the date-time "),
    ];
    for (noun, said) in VALUES {
        if let Some(value) = rest.strip_prefix(noun).and_then(|r| r.strip_prefix(" `")) {
            let (value, after) = value.split_once('`')?;
            return Some((format!("{said}{value}"), after.strip_prefix(", expected ")?));
        }
    }
    const SHAPES: [(&str, &str); 3] = [("map", "a table"), ("sequence", "a list"), ("a list", "a list")];
    SHAPES.iter().find_map(|&(noun, said)| {
        Some((said.to_string(), rest.strip_prefix(noun)?.strip_prefix(", expected ")?))
    })
}

/// The choices for a missing `kind` of a `[[traffic]]` or `[[limiter]]`
/// entry, or a missing `policy` of a retry table (`key` is the entry's
/// path): serde says only that the field is missing.
fn missing_choice(key: &str, raw: &str) -> Option<String> {
    let choices: Vec<&str> = match raw {
        "missing field `kind`" if key.starts_with("traffic[") && !key.contains('.') => {
            super::traffic::KINDS.to_vec()
        }
        "missing field `kind`" if key.starts_with("limiter[") && !key.contains('.') => {
            crate::limiter::LimiterSpec::kinds()
        }
        "missing field `policy`" if key.ends_with("retry") || key.starts_with("sweep.retry_policies") => {
            crate::clients::Backoff::NAMES.to_vec()
        }
        _ => return None,
    };
    let list = choices.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ");
    Some(format!(": give one of {list}"))
}

/// What to write for a required key left out that has no choices to
/// name (those are [`missing_choice`]'s): the scenario's `name`, its
/// `[limit]` table (`key` is `None` at the top level) and the table's keys.
fn missing_example(key: Option<&str>, raw: &str) -> Option<String> {
    let missing = raw.strip_prefix("missing field `")?.strip_suffix('`')?;
    let example = match (key, missing) {
        (None, "name") => {
            ": give the scenario a name, like name = \"burst_test\" (it names the output folder)"
        }
        (None, "limit") => {
            ": add a [limit] table, the limit every limiter enforces: a line [limit], then requests = 100 and \
             window = \"1s\" on lines of their own below it (100 requests per 1s)"
        }
        (Some("limit"), "requests") => ": give the most requests a window admits, like requests = 100",
        (Some("limit"), "window") => ": give the window's length, like window = \"1s\"",
        _ => return None,
    };
    Some(example.to_string())
}

/// What a retry table looks like, for a type error about one.
const RETRY_TABLE: &str =
    "a retry table, like { policy = \"full_jitter\", base = \"100ms\", cap = \"10s\", max_attempts = 5 }";

/// The keys whose value is one table (as `[name]` or `name = { ... }`).
const TABLE_VALUED: [&str; 5] = ["retry", "output", "limit", "nodes", "sweep"];

/// A list written where one table belongs (`retry = [1]`): serde reads a
/// table from a list item by item, so its error is about an item (`` invalid
/// type: integer `1`, expected a string ``). Says the list, at its `[`,
/// named by the table's key. A list of tables (`retry = [{ ... }]`) is
/// [`one_table_as_a_list`]'s.
fn list_for_a_table(text: &str, offset: usize, raw: &str) -> Option<(usize, String)> {
    let typed = raw.starts_with("invalid type:") || raw.starts_with("invalid length");
    if !typed || raw.starts_with("invalid type: map") {
        return None;
    }
    let scanned = scan(text, offset);
    let value = scanned.value?;
    let &(b'[', at) = scanned.open.first()? else { return None };
    // The list is the value itself, not inside it.
    if !text.get(value..at)?.trim().is_empty() {
        return None;
    }
    let key = key_path_at(text, value)?;
    let last = key.rsplit('.').next().unwrap_or(&key);
    // A top-level table, or a source's `retry`: not `sweep.nodes`, a list
    // of numbers that shares its last part with [nodes].
    let table_valued = TABLE_VALUED.contains(&key.as_str())
        || (last == "retry" && key.starts_with("traffic") && !key.contains("retry_policies"));
    table_valued.then(|| {
        let table = if last == "retry" { RETRY_TABLE } else { "a table" };
        (at, format!("{}: {}", code(&key), found_last(&format!("invalid type: a list, expected {table}"))))
    })
}

/// The keys that are arrays of tables, each entry written `[[key]]`.
const ARRAYS_OF_TABLES: [&str; 3] = ["traffic", "limiter", "nodes.outage"];

/// A type error about an array of tables (`[limiter]` written for
/// `[[limiter]]`, or `traffic = 5`): says to write `[[key]]`, not "a list,
/// like [2, 10]".
fn array_of_tables(key: &str, message: &str) -> String {
    match message.strip_suffix("expected a list, like [2, 10]") {
        Some(got) if ARRAYS_OF_TABLES.contains(&key) => format!(
            "{got}expected an array of tables: write `[[{key}]]`, with two brackets, above the keys of each entry"
        ),
        // A list of retry tables, not of numbers.
        Some(got) if key == "sweep.retry_policies" => format!(
            "{got}expected a list of retry tables, like [{{ policy = \"none\" }}, {{ policy = \"full_jitter\", base = \"100ms\", cap = \"10s\", max_attempts = 10 }}]"
        ),
        _ => message.to_string(),
    }
}

/// The keys whose values are durations (or lists of them).
const DURATION_KEYS: [&str; 21] = [
    "duration",
    "window",
    "bin",
    "start",
    "end",
    "span",
    "offset",
    "base",
    "cap",
    "jitter",
    "think",
    "rtt",
    "rtts",
    "skew",
    "sync_interval",
    "sync_intervals",
    "load_duration",
    "max_wait",
    "fill_interval",
    "timeout",
    "every",
];

/// A number where a duration belongs (`window = 1`), or a time of day
/// (`window = 00:01:00`, a TOML date-time): durations are strings with a
/// unit, and the hint says so.
fn bare_duration(key: &str, raw: &str) -> Option<String> {
    let number = raw.starts_with("invalid type: integer")
        || raw.starts_with("invalid type: floating point")
        || raw.starts_with("invalid type: date-time");
    let last = key.rsplit('.').next().unwrap_or(key);
    let last = last.split('[').next().unwrap_or(last);
    (number && raw.contains("expected a string") && DURATION_KEYS.contains(&last))
        .then(|| " (a duration is a string with a unit, like \"1s\" or \"100ms\")".to_string())
}

/// A float where a whole number belongs, when the float is whole (`1e3`,
/// `20.0`): TOML reads an exponent or a fraction as a float, and the hint
/// gives the whole number to write. `written` is the value as written.
fn whole_float(raw: &str, written: &str) -> Option<String> {
    let (value, expected) = raw.strip_prefix("invalid type: floating point `")?.split_once("`, expected ")?;
    if !(expected.starts_with("i64") || expected.starts_with("u64") || expected.starts_with("a whole number"))
    {
        return None;
    }
    let v: f64 = value.parse().ok()?;
    let whole = v.is_finite() && v.fract() == 0.0 && v.abs() < 9.2e18;
    (whole && !written.is_empty()).then(|| {
        format!(" ({} is a float in TOML: write the whole number {})", code(written.trim()), v as i64)
    })
}

/// The tables a scenario has one of, which `[[name]]` (a list of tables)
/// or `name = [...]` turns into a list: serde then reads the list's first
/// table as the table's first key ("`retry[0]`: invalid type: map, expected
/// a string"). Says what to write instead.
fn one_table_as_a_list(key: &str, raw: &str) -> Option<String> {
    const ONE: [&str; 6] = ["limit", "retry", "nodes", "sweep", "output", "traffic.retry"];
    if !raw.starts_with("invalid type: map") {
        return None;
    }
    // A [traffic.retry] above every [[traffic]] header makes `traffic` a
    // table: no list was written, the entry is missing.
    if key == "traffic.retry" {
        return Some(
            "`traffic.retry`: [traffic.retry] comes before any [[traffic]] entry, which makes `traffic` one table, not the list of sources: a source's retry table goes below its own [[traffic]] header and keys (for every source, write [retry] instead)".to_string(),
        );
    }
    // `retry[0]` from [[retry]]; `traffic[0].retry` from `retry = [{...}]`
    // in a source (or `traffic.retry[0]` from [[traffic.retry]]).
    let base = key.strip_suffix(']').and_then(|k| k.rsplit_once('[')).map_or(key, |(b, _)| b);
    let name = match base.split_once('[') {
        Some((array, rest)) => format!("{array}{}", rest.split_once(']').map_or("", |(_, r)| r)),
        None => base.to_string(),
    };
    ONE.contains(&name.as_str()).then(|| {
        format!(
            "{} is one table, not a list: write its header [{name}] with single brackets (double brackets, or a list `[...]`, make a list of tables)",
            code(base)
        )
    })
}

/// serde's "unknown field `x`, expected ..." names the key but not its
/// table: with the key's path (`traffic[0].retry.x`), "unknown field `x` in
/// `traffic[0].retry`, expected ...". A top-level key, or a path that does
/// not end in the unknown key (a key inside an inline table), is left as
/// serde says it.
fn in_table(message: &str, raw: &str, path: Option<&str>) -> String {
    let (Some((unknown, _)), Some(path)) = (unknown_field(raw), path) else { return message.to_string() };
    let Some(table) = path.strip_suffix(unknown).and_then(|t| t.strip_suffix('.')) else {
        return message.to_string();
    };
    let named = format!("unknown field {}", code(unknown));
    match message.strip_prefix(&named) {
        Some(rest) if !table.is_empty() => format!("{named} in {}{rest}", code(table)),
        _ => message.to_string(),
    }
}

/// Where the value of the `key = value` statement that holds `offset`
/// starts (just after its `=`), when `offset` is in that value, not in
/// its key. The text is read from its start ([`scan`]), past strings
/// (multi-line ones too), comments and table headers, so that a value
/// running over several lines (a list, or an inline table, which TOML 1.1
/// allows to break) is followed to its end, not taken for statements of
/// its own.
fn value_start_at(text: &str, offset: usize) -> Option<usize> {
    scan(text, offset).value
}

/// What [`scan`] found reading a scenario's text up to an offset.
#[derive(Debug, Default)]
struct Scanned {
    /// Where the value of the statement being read starts (just after its
    /// `=`); `None` at a key or between statements.
    value: Option<usize>,
    /// The lists and inline tables open in that value, outermost first:
    /// `[` or `{` and its offset.
    open: Vec<(u8, usize)>,
    /// The first string (or quoted key) whose line ends before its closing
    /// quote, ending before the offset. The text after it is read as if
    /// the string ended at its line's end.
    unclosed: Option<Open>,
    /// The string the offset is in (its opening quote was read before the
    /// offset, its closing one is not): its start, its quote (`"`, `'`, or
    /// three of either for a multi-line one), and whether it is a
    /// multi-line one never closed.
    inside: Option<(usize, &'static str, bool)>,
    /// Whether the offset is in a comment (after its `#`, before its
    /// line's end).
    comment: bool,
}

/// Reads a scenario's text from its start up to `offset` the way TOML
/// does, to say where the statement being read began and what is open at
/// `offset`: strings (multi-line ones, escapes in basic strings, but a
/// backslash never escapes a line's end outside a multi-line string),
/// comments and table headers are passed over, so that what only looks
/// like a bracket, a quote or an `=` is not taken for one. The one reader
/// of these for [`value_start_at`] and [`still_open`].
fn scan(text: &str, offset: usize) -> Scanned {
    let offset = offset.min(text.len());
    let bytes = text.as_bytes();
    let mut found = Scanned::default();
    // Only whitespace since the line began, outside any value.
    let mut line_start = true;
    let mut i = 0;
    while i < offset {
        let c = bytes[i];
        match c {
            b'"' | b'\'' => {
                let (one, triple) = if c == b'"' { ("\"", "\"\"\"") } else { ("'", "'''") };
                let start = i;
                line_start = false;
                if bytes[i..].starts_with(triple.as_bytes()) {
                    // The first closing triple quote not escaped.
                    let mut j = i + 3;
                    let closed = loop {
                        if j >= bytes.len() {
                            break false;
                        }
                        if c == b'"' && bytes[j] == b'\\' {
                            j += 2;
                        } else if bytes[j..].starts_with(triple.as_bytes()) {
                            break true;
                        } else {
                            j += 1;
                        }
                    };
                    if !closed || j + 3 > offset {
                        found.inside = Some((start, triple, !closed));
                        return found;
                    }
                    i = j + 3;
                    continue;
                }
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != c && bytes[j] != b'\n' {
                    // An escape, but never of the line's end.
                    let escape =
                        c == b'"' && bytes[j] == b'\\' && !matches!(bytes.get(j + 1), Some(b'\n' | b'\r'));
                    j += if escape { 2 } else { 1 };
                }
                if j < bytes.len() && bytes[j] == c {
                    if j >= offset {
                        found.inside = Some((start, one, false));
                        return found;
                    }
                    i = j + 1;
                    continue;
                }
                // Unclosed on its line: it ends at the line's end (a
                // carriage return before it not counted). Before that end,
                // the offset is in the string.
                let j = j.min(bytes.len());
                let end = if j > start + 1 && bytes[j - 1] == b'\r' { j - 1 } else { j };
                if offset < end {
                    found.inside = Some((start, one, false));
                    return found;
                }
                if found.unclosed.is_none() {
                    found.unclosed = Some(if found.value.is_some() {
                        Open::Str(start, one)
                    } else {
                        Open::Key(start, one)
                    });
                }
                i = j;
                continue;
            }
            b'#' => {
                while i < offset && bytes[i] != b'\n' {
                    i += 1;
                }
                if i >= offset {
                    found.comment = true;
                    return found;
                }
                continue;
            }
            b'\n' => {
                if found.open.is_empty() {
                    found.value = None;
                    line_start = true;
                }
            }
            b'[' if found.value.is_none() && line_start => {
                // A table header: nothing else on its line but a comment
                // (a `#` outside its quoted keys).
                let (mut quote, mut comment) = (None, false);
                while i < offset && bytes[i] != b'\n' {
                    match (quote, bytes[i]) {
                        (Some(q), b) if b == q => quote = None,
                        (None, b'"' | b'\'') if !comment => quote = Some(bytes[i]),
                        (None, b'#') => comment = true,
                        _ => {}
                    }
                    i += 1;
                }
                if comment && i >= offset {
                    found.comment = true;
                    return found;
                }
                continue;
            }
            b'=' if found.value.is_none() => found.value = Some(i + 1),
            b'[' | b'{' if found.value.is_some() => found.open.push((c, i)),
            b']' | b'}' if found.value.is_some() => {
                found.open.pop();
            }
            c if c.is_ascii_whitespace() => {}
            _ => line_start = false,
        }
        i += 1;
    }
    found
}

/// The path of the inline table that `offset` is in: `traffic[0].retry`
/// for a key inside `retry = { ... }`, `sweep.retry_policies[1]` inside
/// the second table of `retry_policies = [{ ... }, { ... }]`,
/// `nodes.outage[0]`; `None` when `offset` is in no inline table. The
/// value is that of the statement holding `offset` ([`value_start_at`]:
/// a list or an inline table may run over several lines), named by
/// [`key_path_at`]; strings and comments in it are skipped.
fn inline_table_at(text: &str, offset: usize) -> Option<String> {
    inline_at(text, offset).map(|(table, _)| table)
}

/// The path of the value that `offset` is in when that value is a key's
/// in an inline table: `traffic[0].retry.base` for the `5` of `retry = {
/// base = 5 }`. `None` at a key, or outside inline tables.
fn inline_value_at(text: &str, offset: usize) -> Option<String> {
    let (table, key) = inline_at(text, offset)?;
    (!key.is_empty()).then(|| format!("{table}.{key}"))
}

/// [`inline_table_at`], and the key of that table whose value `offset` is
/// in (empty at a key: before its `=`).
fn inline_at(text: &str, offset: usize) -> Option<(String, String)> {
    let (key, frames) = open_at(text, offset)?;
    let (Frame::Table(inner), outer) = frames.split_last()? else { return None };
    Some((path_of(key, outer), inner.clone()))
}

/// The path of the list item that `offset` is in, when that item is a
/// list's own (not in an inline table inside it): `sweep.retry_policies[0]`
/// for the inner `[` of `retry_policies = [[{ ... }]]`, `nodes.outage[1]`
/// for the `5` of `outage = [{ ... }, 5]`. `None` outside lists.
fn list_item_at(text: &str, offset: usize) -> Option<String> {
    let (key, frames) = open_at(text, offset)?;
    matches!(frames.last(), Some(Frame::List(_))).then(|| path_of(key, &frames))
}

/// A list or inline table open at a place in a value, as [`open_at`]
/// reads them: a list with the index of the item being read, an inline
/// table with the key whose value is being read (empty at a key).
enum Frame {
    List(usize),
    Table(String),
}

/// `key` followed by the items and keys of `frames`: `key[1].base`.
fn path_of(key: String, frames: &[Frame]) -> String {
    let mut path = key;
    for frame in frames {
        match frame {
            Frame::List(i) => path.push_str(&format!("[{i}]")),
            Frame::Table(k) => {
                path.push('.');
                path.push_str(k);
            }
        }
    }
    path
}

/// The key of the statement whose value holds `offset`, and the lists and
/// inline tables open in that value there, outermost first. `None` when
/// `offset` is in no value.
fn open_at(text: &str, offset: usize) -> Option<(String, Vec<Frame>)> {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let start = value_start_at(text, offset)?;
    let key = key_path_at(text, start)?;
    let mut frames: Vec<Frame> = Vec::new();
    // The bare word last read, for the key before an `=` (`gap`: a space
    // ended it).
    let (mut word, mut gap) = (String::new(), false);
    let mut chars = text[start..offset].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                let mut escaped = false;
                for d in chars.by_ref() {
                    if c == '"' && d == '\\' && !escaped {
                        escaped = true;
                        continue;
                    }
                    if d == c && !escaped {
                        break;
                    }
                    escaped = false;
                }
                word.clear();
            }
            '#' => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
            }
            '[' => frames.push(Frame::List(0)),
            '{' => frames.push(Frame::Table(String::new())),
            ']' | '}' => {
                frames.pop();
            }
            ',' => match frames.last_mut() {
                Some(Frame::List(i)) => *i += 1,
                Some(Frame::Table(k)) => k.clear(),
                None => {}
            },
            '=' => {
                if let Some(Frame::Table(k)) = frames.last_mut() {
                    *k = word.trim().to_string();
                }
                word.clear();
            }
            c if c.is_ascii_alphanumeric() || "_-.".contains(c) => {
                if std::mem::take(&mut gap) {
                    word.clear();
                }
                word.push(c);
            }
            c if c.is_whitespace() => gap = true,
            _ => word.clear(),
        }
    }
    Some((key, frames))
}

/// The unknown key and the keys serde expected, from its message
/// "unknown field `x`, expected one of `a`, `b`" (or "expected `a` or `b`",
/// or "there are no fields"). The key ends at the "`, " before the list,
/// so a key with a backtick in it is read whole.
pub fn unknown_field(message: &str) -> Option<(&str, Vec<&str>)> {
    let rest = message.strip_prefix("unknown field `")?;
    let (unknown, expected) = rest.split_once("`, ")?;
    Some((unknown, expected.split('`').skip(1).step_by(2).collect()))
}

/// A message of serde or the TOML reader in plain words ([`plain_types`]),
/// with a "did you mean" for an unknown key ([`suggest`]), and the
/// scenario text it quotes (an unknown key, a string of the wrong type)
/// cut when long ([`crate::shown`]).
pub fn serde_message(raw: &str) -> String {
    let message = suggest(&plain_types(raw));
    if let Some((unknown, _)) = unknown_field(&message) {
        let rest = &message["unknown field `".len() + unknown.len() + 1..];
        return format!("unknown field {}{rest}", code(unknown));
    }
    // serde quotes a string as Rust's Debug does: `string "..."`.
    if let Some(start) = message.find("invalid type: string \"").map(|i| i + "invalid type: string ".len())
        && let Some(end) = message.rfind("\", expected").map(|i| i + 1)
        && end > start + 1
        && end - start > 66
    {
        let quoted = &message[start + 1..end - 1];
        let cut = (0..=40).rev().find(|&i| quoted.is_char_boundary(i)).unwrap_or(0);
        // Not in the middle of an escape such as `\u{1b}`.
        let cut = quoted[..cut].rfind('\\').filter(|&b| !quoted[b..cut].contains('}')).unwrap_or(cut);
        return format!(
            "{}\"{}...\" ({} bytes){}",
            &message[..start],
            &quoted[..cut],
            quoted.len(),
            &message[end..]
        );
    }
    message
}

/// A TOML date or time where another type was expected: the reader hands
/// it over as a table, which serde calls a "map"; said as a date-time.
fn date_time(message: &str, value: &str) -> String {
    match message.strip_prefix("invalid type: map") {
        Some(rest) if value.trim().parse::<toml::value::Datetime>().is_ok() => {
            format!("invalid type: date-time {}{rest}", code(value.trim()))
        }
        _ => message.to_string(),
    }
}

/// A TOML date or time where a table belongs (`retry = 1979-05-27`, an
/// entry of `[sweep] retry_policies` or of `[[traffic]]`): the reader
/// hands it over as a table of one internal key, so the table's keys
/// refuse that key (`` unknown field `$__toml_private_datetime` ``), or
/// miss their own (`` missing field `kind` ``). Said as a date-time where
/// another type is expected is: "invalid type: date-time `...`, expected
/// a table" (a retry table, like { ... }, for one). `value` is the text
/// the error is at.
fn date_for_a_table(raw: &str, value: &str) -> Option<String> {
    if !raw.starts_with("unknown field `$__toml_private") && !raw.starts_with("missing field `") {
        return None;
    }
    let value = value.trim();
    value.parse::<toml::value::Datetime>().ok()?;
    let retry = unknown_field(raw).is_some_and(|(_, keys)| keys.contains(&"policy"));
    Some(format!(
        "invalid type: date-time {}, expected {}",
        code(value),
        if retry { RETRY_TABLE } else { "a table" }
    ))
}

/// The keys of the single tables, for a key written above every table
/// header, where it is a top-level key: each is a key of one table only
/// (`count`, `skew`, `start` are keys of several, and left out).
const TABLE_KEYS: [(&str, &[&str]); 5] = [
    ("limit", &["requests", "window"]),
    ("output", &["bin", "decisions", "font", "admission_curve"]),
    ("sweep", &["grid", "loads", "load_duration", "map_slots", "retry_policies", "rtts", "sync_intervals"]),
    (
        "retry",
        &[
            "policy",
            "base",
            "cap",
            "max_attempts",
            "jitter",
            "budget",
            "max_tokens",
            "token_ratio",
            "retry_quota",
        ],
    ),
    ("nodes", &["balance", "mode", "per_node", "rtt", "atomic", "sync_interval"]),
];

/// The line (from 1) where `key = ...` is written above the first table
/// header, as a top-level key, if it is.
fn top_level_line(text: &str, key: &str) -> Option<usize> {
    for (n, line) in text.lines().enumerate() {
        let l = line.trim_start();
        if l.starts_with('[') {
            return None;
        }
        if let Some((k, _)) = l.split_once('=')
            && !l.starts_with('#')
            && k.trim() == key
        {
            return Some(n + 1);
        }
    }
    None
}

/// For "missing field `window`" in [limit] when `window` is written above
/// the first table header: says where it is and where it belongs.
fn misplaced_key(text: &str, table: &str, message: &str) -> Option<String> {
    let missing = message.strip_prefix("missing field `")?.strip_suffix('`')?;
    if table.contains(['[', '.']) {
        return None;
    }
    let line = top_level_line(text, missing)?;
    Some(format!(
        " (line {line} sets `{missing}` above the first table header, which makes it a top-level key: move it below the [{table}] header)"
    ))
}

/// For an unknown top-level key that is a key of a table (`requests`
/// written above `[limit]`): which table it belongs under.
fn top_level_key_of_a_table(text: &str, offset: usize, raw: &str) -> Option<String> {
    let (unknown, _) = unknown_field(raw)?;
    let (table, _) = TABLE_KEYS.iter().find(|(_, keys)| keys.contains(&unknown))?;
    let header = text
        .lines()
        .position(|l| l.trim_start().starts_with('['))
        .map_or(usize::MAX, |n| text.lines().take(n).map(|l| l.len() + 1).sum::<usize>());
    (offset < header).then(|| {
        format!(
            "; `{unknown}` is a key of [{table}]: a key belongs to the table whose header is above it, so write it below the [{table}] header"
        )
    })
}

/// Adds "did you mean" to serde's "unknown field `x`, expected ..." messages.
pub fn suggest(message: &str) -> String {
    match unknown_field(message).and_then(|(unknown, keys)| nearest_key(unknown, &keys)) {
        Some(c) => format!("{}; did you mean `{c}`?", message.trim_end()),
        None => message.to_string(),
    }
}

/// The line of `text` that holds byte `offset`, and where it starts.
fn line_at(text: &str, offset: usize) -> (&str, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    (&text[start..end], start)
}

/// Whether `k` is a key as written before `=`: bare (letters, digits, `-`,
/// `_`), quoted or dotted, with no space inside a bare part.
fn is_key(k: &str) -> bool {
    !k.is_empty()
        && k.split('.').all(|part| {
            let part = part.trim();
            !part.is_empty()
                && (part.starts_with(['"', '\''])
                    || part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        })
}

/// The dotted key of the `key = value` line holding `offset`, if that line
/// is one (not a table header, and with a key before its `=`).
pub fn key_of_line(text: &str, offset: usize) -> Option<String> {
    let (line, start) = line_at(text, offset);
    let (k, _) = line.split_once('=')?;
    if line.trim_start().starts_with(['[', '#']) || !is_key(k.trim()) {
        return None;
    }
    key_path_at(text, start + line.len())
}

/// Lines looked back from a duplicate key for where it was first set.
const DUPLICATE_LOOK_BACK: usize = 200;

/// The line (1-based) that first set `key`, which the `key = value` line
/// holding `offset` sets again: the parser's duplicate-key error names
/// only the second. Looked for in the lines of the same table, from its
/// header (or the top of the file) to that line, at most
/// [`DUPLICATE_LOOK_BACK`] of them; `None` when it is not among them (a
/// key that a dotted key from another table sets: [`dotted_into`] says
/// what that key reached into).
fn first_setting(text: &str, offset: usize, key: &str) -> Option<usize> {
    let (_, start) = line_at(text, offset);
    let mut first = None;
    // The start of the line after the one looked at; `end - 1` is its '\n'.
    let mut end = start;
    for _ in 0..DUPLICATE_LOOK_BACK {
        if end == 0 {
            break;
        }
        let line_start = text[..end - 1].rfind('\n').map_or(0, |i| i + 1);
        if text[line_start..end - 1].trim_start().starts_with('[') {
            break;
        }
        if key_of_line(text, line_start).as_deref() == Some(key) {
            first = Some(line_start);
        }
        end = line_start;
    }
    first.map(|o| text[..o].matches('\n').count() + 1)
}

/// Where a table that a `[name]` header writes a second time was first
/// set: its line, and, when that was no header of its own, what set it,
/// as the message says it (``the dotted key `limit.requests` `` for
/// `limit.requests = 5` above `[limit]`; `` `retry = ...` `` for
/// `retry = { ... }`).
#[derive(Debug, PartialEq)]
struct Definition {
    line: usize,
    by: Option<String>,
}

/// The parts of a dotted name as written (`a . "b"` -> `a`, `b`), or
/// `None` for one this does not read (a quoted part holding a dot).
fn name_parts(name: &str) -> Option<Vec<String>> {
    let parts: Vec<String> = name
        .split('.')
        .map(|p| {
            let p = p.trim();
            p.strip_prefix('"')
                .and_then(|q| q.strip_suffix('"'))
                .or_else(|| p.strip_prefix('\'').and_then(|q| q.strip_suffix('\'')))
                .unwrap_or(p)
                .to_string()
        })
        .collect();
    parts.iter().all(|p| !p.is_empty() && !p.contains(['"', '\''])).then_some(parts)
}

/// The table a header line opens, as [`name_parts`] (none for a name it
/// does not read), and whether it is a `[[list]]` element; `None` for a
/// line that is no header.
fn header_parts(line: &str) -> Option<(Vec<String>, bool)> {
    let l = line.trim_start();
    let (rest, list) = match l.strip_prefix("[[") {
        Some(rest) => (rest, true),
        None => (l.strip_prefix('[')?, false),
    };
    let name = rest.split(']').next().and_then(name_parts).unwrap_or_default();
    Some((name, list))
}

/// Where `table`, whose header at `offset` the parser calls a duplicate,
/// was first set (see [`Definition`]): the lines above the header are read
/// with the table each is in, past multi-line strings; a `[[list]]` header
/// that `table` is under starts a new element, which nothing above it set.
fn first_definition(text: &str, offset: usize, table: &str) -> Option<Definition> {
    let target = name_parts(table)?;
    let (_, header_start) = line_at(text, offset);
    let mut current: Vec<String> = Vec::new();
    let mut found = None;
    let mut in_string = false;
    for (n, line) in text[..header_start].lines().enumerate() {
        let quotes = line.matches("\"\"\"").count() + line.matches("'''").count();
        let was_in_string = in_string;
        in_string ^= quotes % 2 == 1;
        if was_in_string {
            continue;
        }
        if let Some((name, list)) = header_parts(line) {
            current = name;
            if list && target.starts_with(&current) {
                found = None;
            } else if !list && found.is_none() && current == target {
                found = Some(Definition { line: n + 1, by: None });
            }
            continue;
        }
        let l = line.trim_start();
        let Some((key, _)) = l.split_once('=') else { continue };
        if l.starts_with('#') || !is_key(key.trim()) {
            continue;
        }
        let Some(parts) = name_parts(key) else { continue };
        let full: Vec<String> = current.iter().chain(&parts).cloned().collect();
        if found.is_none() && full.starts_with(&target) {
            let written = parts.join(".");
            let by = if full.len() == target.len() {
                code(&format!("{written} = ..."))
            } else {
                format!("the dotted key {}", code(&written))
            };
            found = Some(Definition { line: n + 1, by: Some(by) });
        }
    }
    found
}

/// A dotted key (`balance.seed = 1`) that the parser refuses because a
/// part of it was set above as something a dotted key cannot add to: a
/// table with a header of its own, an inline table, or a value.
struct DottedInto {
    /// The part set above, as written in the key (`balance`).
    part: String,
    /// The rest of the key after it (`seed`).
    rest: String,
    /// That part's name as a table header would write it (`nodes.balance`).
    table: String,
    first: Definition,
}

impl DottedInto {
    /// What is wrong, in plain words, for the parser's `message`; `None`
    /// for a message this does not explain.
    fn why(&self, message: &str) -> Option<String> {
        let (part, rest, table, line) = (code(&self.part), code(&self.rest), &self.table, self.first.line);
        if message.starts_with("duplicate key") && self.first.by.is_none() {
            return Some(format!(
                "duplicate key: the table [{table}] has a header of its own on line {line}, so a dotted key cannot add to it from another table; set {rest} under [{table}]"
            ));
        }
        let what =
            message.strip_prefix("cannot extend value of type ")?.strip_suffix(" with a dotted key")?;
        Some(match what {
            "inline table" => format!(
                "{part} is an inline table, set on line {line}, and an inline table is complete as written: a dotted key cannot add to it; put {rest} inside its braces"
            ),
            "array" => format!(
                "{part} is set on line {line} to a list, not a table: a dotted key cannot add {rest} to it"
            ),
            other => format!(
                "{part} is set on line {line} to a value ({}), not a table: a dotted key cannot add {rest} to it",
                other
                    .replace("integer", "a whole number")
                    .replace("float", "a number")
                    .replace("boolean", "true or false")
            ),
        })
    }
}

/// For the `key = value` line holding `offset`, whose key is dotted: the
/// longest part of the key that was set above it ([`first_definition`]).
fn dotted_into(text: &str, offset: usize) -> Option<DottedInto> {
    let (line, line_start) = line_at(text, offset);
    let (key, _) = line.split_once('=')?;
    let parts = name_parts(key.trim())?;
    // The table the line is in: the last header above it.
    let current =
        text[..line_start].lines().rev().find_map(header_parts).map(|(name, _)| name).unwrap_or_default();
    (1..parts.len()).rev().find_map(|k| {
        let table = current.iter().chain(&parts[..k]).cloned().collect::<Vec<_>>().join(".");
        let first = first_definition(text, offset, &table)?;
        Some(DottedInto { part: parts[..k].join("."), rest: parts[k..].join("."), table, first })
    })
}

/// The name of the table whose header (`[output]`, on the line holding
/// `offset`) the TOML parser calls a duplicate key: the parser names no
/// key, and a header line is no `key = value` line.
fn duplicate_table(message: &str, text: &str, offset: usize) -> Option<String> {
    if !message.starts_with("duplicate key") {
        return None;
    }
    let (line, _) = line_at(text, offset);
    let header = line.trim().strip_prefix('[')?;
    let name = header.split(']').next()?.trim();
    (!name.is_empty() && !name.starts_with('[')).then(|| name.to_string())
}

/// The key that the parser calls a duplicate at `span` (the key written
/// a second time) when it is inside an inline table: its path
/// (`traffic[0].retry.base` for the second `base` of `retry = { base =
/// "1s", base = "2s" }`) and the key as written in the table (`base`).
/// The span is the key's last part: the parts of a dotted key before it
/// are read back to the `{`, `,` or line break before the key.
fn duplicate_inline_key(message: &str, text: &str, span: Range<usize>) -> Option<(String, String)> {
    if !message.starts_with("duplicate key") {
        return None;
    }
    let written = text.get(span.clone())?.trim();
    if written.is_empty() {
        return None;
    }
    let table = inline_table_at(text, span.start)?;
    let before = &text[..span.start];
    let dotted = format!("{}{written}", &before[before.rfind(['{', ',', '\n']).map_or(0, |i| i + 1)..]);
    let key = if is_key(dotted.trim()) {
        dotted.split('.').map(str::trim).collect::<Vec<_>>().join(".")
    } else {
        written.to_string()
    };
    Some((format!("{table}.{key}"), key))
}

/// The start of the line whose key is the deepest in `text` (a table
/// header's parts, and on a key line the header's and the key's dotted
/// parts), with that depth; `None` with no key at all. Dots in quoted keys
/// count too: this only picks the line to point at.
fn deepest_key_line(text: &str) -> Option<(usize, usize)> {
    let (mut header, mut best, mut at) = (0, None::<(usize, usize)>, 0);
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        let offset = at + (line.len() - t.len());
        at += line.len();
        let parts = |k: &str| k.matches('.').count() + 1;
        let depth = if let Some(h) = t.strip_prefix('[') {
            header = parts(h.split(']').next().unwrap_or(""));
            header
        } else if let Some((key, _)) = t.split_once('=').filter(|_| !t.starts_with('#')) {
            // Deep under a deep header: the header is the line to fix.
            if parts(key) <= header {
                continue;
            }
            header + parts(key)
        } else {
            continue;
        };
        if best.is_none_or(|(_, d)| depth > d) {
            best = Some((offset, depth));
        }
    }
    best
}

impl Ctx<'_> {
    /// A parser message with no place in the file, in plain words:
    /// "recursion limit" is the parser giving up on keys nested too deep
    /// (a dotted key or table header of about [`max_nesting`] parts), which it reports
    /// with no line: the deepest key's line is named.
    fn unplaced(&self, message: &str) -> ScenarioError {
        if message.trim() != "recursion limit" {
            return self.file(message.to_string());
        }
        let words = format!(
            "keys nested too deeply to read: the parser reads at most about {} levels of tables and dotted \
             keys, and a scenario needs two or three (like traffic.retry.base)",
            max_nesting()
        );
        match deepest_key_line(self.text) {
            Some((at, depth)) => self
                .at(at..at, format!("{words}; this line's key is {depth} deep: write it with fewer parts")),
            None => self.file(words),
        }
    }
}

/// The list a `[[name]]` header at `offset` adds to, when the parser says
/// "duplicate key" there: `name = ...` set it above (`traffic = []` on
/// line 2, then `[[traffic]]`).
fn duplicate_list(message: &str, text: &str, offset: usize) -> Option<String> {
    if !message.starts_with("duplicate key") {
        return None;
    }
    let (line, _) = line_at(text, offset);
    let name = line.trim().strip_prefix("[[")?.split("]]").next()?.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// What a scenario's text leaves open where the parser gave up: a list or
/// an inline table, or a string, that should have been closed before.
#[derive(Debug, PartialEq)]
enum Open {
    /// A list's `[` at this offset.
    List(usize),
    /// An inline table's `{` at this offset.
    Table(usize),
    /// A string's opening quote at this offset: `"` or `'`, or `"""` or
    /// `'''` for a multi-line one.
    Str(usize, &'static str),
    /// A quoted key's opening quote at this offset.
    Key(usize, &'static str),
}

/// Whether the parser's error at `offset` comes from something opened
/// before it and never closed, and what: a string whose line ends before
/// its closing quote (`name = "x`), a multi-line string with no closing
/// `"""`, or a list or inline table still open where a new statement
/// begins (`rate = [1, 2` above `[[limiter]]`) or where the file ends.
/// The text is read from its start, past comments, table headers and
/// closed strings. An error inside a list that does not look like the
/// next statement (a missing comma between items on lines of their own)
/// is not taken for an unclosed list.
fn still_open(text: &str, offset: usize) -> Option<Open> {
    let offset = offset.min(text.len());
    let scanned = scan(text, offset);
    if scanned.unclosed.is_some() {
        return scanned.unclosed;
    }
    match scanned.inside {
        // A multi-line string never closed; any other string the parser
        // stopped in is about something inside it (an escape).
        Some((start, quote, true)) => return Some(Open::Str(start, quote)),
        Some(_) => return None,
        None => {}
    }
    // The innermost: what was opened last is what the parser read on in.
    let &(kind, at) = scanned.open.last()?;
    // Where the parser stopped: the end of the file, or a line that reads
    // as the next statement (a table header, or a key and its `=`).
    let (line, line_start) = line_at(text, offset);
    let l = line.trim();
    let at_end = only_space_after(text, offset);
    if !at_end && line_start <= at {
        // On the line it was opened on: the parser's own words say more.
        return None;
    }
    let header = is_header_line(l);
    // A key and its `=` (TOML 1.1 lets an inline table run over lines
    // of them; a list never holds one).
    let statement = kind == b'[' && l.split_once('=').is_some_and(|(k, _)| is_key(k.trim()));
    // A `key = value` line that a `]` below still closes the list after
    // (before the next table header) is a bad item inside it, not the
    // next statement.
    let statement = statement && !closed_below(text, offset, at);
    (at_end || header || statement).then_some(if kind == b'[' { Open::List(at) } else { Open::Table(at) })
}

/// Whether the list or inline table opened at `at` is closed after
/// `offset` and before the next table header (or the file's end), read
/// as [`scan`] reads. Unknown (a string still open there): `false`.
fn closed_below(text: &str, offset: usize, at: usize) -> bool {
    // The next line that reads as a table header.
    let mut stop = text.len();
    let mut line_start = text.get(offset..).and_then(|r| r.find('\n')).map_or(text.len(), |i| offset + i + 1);
    while line_start < text.len() {
        let end = text[line_start..].find('\n').map_or(text.len(), |i| line_start + i);
        if is_header_line(&text[line_start..end]) {
            stop = line_start;
            break;
        }
        line_start = end + 1;
    }
    let below = scan(text, stop);
    below.inside.is_none() && below.unclosed.is_none() && !below.open.iter().any(|&(_, o)| o == at)
}

/// Whether a line reads as a table header: `[name]` or `[[name]]`, the
/// name starting with a letter (not a list of numbers on a line of its
/// own).
fn is_header_line(line: &str) -> bool {
    let l = line.trim();
    l.strip_prefix('[').is_some_and(|r| {
        r.trim_start_matches('[').trim_start().starts_with(|c: char| c.is_ascii_alphabetic())
            && l.ends_with(']')
    })
}

/// Whether nothing but whitespace follows `offset`: the parser stopped at
/// the file's end.
fn only_space_after(text: &str, offset: usize) -> bool {
    text.as_bytes().get(offset..).unwrap_or_default().iter().all(u8::is_ascii_whitespace)
}

/// The words for what [`still_open`] found, with what to write, and the
/// offset the error then stands at: where the thing was opened. `line` is
/// the line the parser stopped on.
fn still_open_message(text: &str, open: &Open, offset: usize, line: usize) -> (usize, String) {
    let reached = if only_space_after(text, offset) {
        "the file ends inside it".to_string()
    } else {
        format!("everything up to line {line} was read as part of it")
    };
    match *open {
        Open::List(at) => (at, format!("the list opened here is not closed: end it with `]` ({reached})")),
        Open::Table(at) => {
            (at, format!("the inline table opened here is not closed: end it with `}}` ({reached})"))
        }
        Open::Str(at, quote) if quote.len() == 3 => {
            (at, format!("the multi-line string opened here is not closed: end it with `{quote}`"))
        }
        Open::Key(at, quote) => {
            (at, format!("the quoted key opened here is not closed: end it with `{quote}`"))
        }
        Open::Str(at, quote) => (
            at,
            format!(
                "the string opened here is not closed: end it with `{quote}` before the line ends (a string over several lines goes between `{quote}{quote}{quote}`)"
            ),
        ),
    }
}

/// The parser's words for a number it cannot read (`5.5.5`, `1e`, `.5`,
/// `0x1G`, `020`, `--5`, `-0x10`), given as the number written and how
/// numbers are written (what to write instead, where there is one fix).
/// Also the offset where the number starts, for the error to stand at.
fn plain_number(message: &str, text: &str, offset: usize) -> Option<(usize, String)> {
    const WORDS: [&str; 17] = [
        "invalid float",
        "invalid fraction",
        "invalid mantissa",
        "invalid exponent",
        "invalid integer",
        "invalid hexadecimal",
        "invalid octal",
        "invalid binary",
        "unexpected leading zero",
        "redundant numeric sign",
        "unexpected sign",
        "integers with a radix cannot be signed",
        "radix must be lowercase",
        "redundant integer number prefix",
        "invalid date",
        "invalid time",
        "invalid offset",
    ];
    let &words = WORDS.iter().find(|w| message.starts_with(**w))?;
    // The number as written: from the value's start to its end (ASCII
    // delimiters, one byte each).
    let delimiter = |c: char| c.is_ascii_whitespace() || "=,[]{}#".contains(c);
    let before = text.get(..offset)?;
    let from = before.rfind(delimiter).map_or(0, |i| i + 1);
    let to = text[from..].find(delimiter).map_or(text.len(), |i| from + i);
    let number = &text[from..to];
    if number.is_empty() {
        return None;
    }
    let how = match words {
        "unexpected leading zero" => {
            // `020` -> `20`, `-00` -> `-0`, `01.5` -> `1.5`.
            let (sign, digits) = number.split_at(number.starts_with(['+', '-']) as usize);
            let trimmed = digits.trim_start_matches(['0', '_']);
            let fixed = if trimmed.is_empty() || !trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                format!("{sign}0{trimmed}")
            } else {
                format!("{sign}{trimmed}")
            };
            // An integer like `020` may have been meant as octal.
            let octal = if fixed.contains(['.', 'e', 'E']) || trimmed.is_empty() {
                String::new()
            } else {
                format!(" (an octal number is written 0o{trimmed})")
            };
            format!("a number other than 0 does not start with 0: write {fixed}{octal}")
        }
        "redundant numeric sign" => "a number takes one sign at most, like -5 or +5".to_string(),
        "unexpected sign" | "integers with a radix cannot be signed" => {
            let unsigned: String = number.chars().filter(|&c| c != '+' && c != '-').collect();
            let radix = match unsigned.get(..2) {
                Some("0x") => 16,
                Some("0o") => 8,
                _ => 2,
            };
            let decimal = unsigned
                .get(2..)
                .and_then(|d| u128::from_str_radix(&d.replace('_', ""), radix).ok())
                .filter(|_| number.starts_with('-'));
            let negative = decimal.map_or(String::new(), |d| format!(", or -{d} in decimal"));
            format!(
                "a hexadecimal, octal or binary number (0x, 0o, 0b) takes no sign: write {unsigned}{negative}"
            )
        }
        "radix must be lowercase" => {
            let fixed =
                format!("{}{}", number.get(..2).unwrap_or("").to_lowercase(), number.get(2..).unwrap_or(""));
            format!("its prefix is written in lowercase (0x, 0o, 0b): write {fixed}")
        }
        "redundant integer number prefix" => {
            format!("a decimal number takes no prefix: write {}", number.get(2..).unwrap_or(""))
        }
        "invalid date" | "invalid time" | "invalid offset" => {
            return Some((
                from,
                format!(
                    "{} is not a value: it starts like a date (1979-05-27) or a time of day (07:32:00), which no key \
takes; write a number like 20, a duration in quotes like \"1s\", or quote a string, like {}",
                    code(number),
                    string(number)
                ),
            ));
        }
        _ => "write it like 20, 2.5 or 1e6".to_string(),
    };
    Some((from, format!("{} is not a number: {how}", code(number))))
}

/// How deep the TOML parser nests lists and inline tables: one more `[`
/// or `{` is refused ("cannot recurse further"), and a dotted key of as
/// many parts ("recursion limit"). The toml crate keeps the number in a
/// private constant (`LIMIT`, 80 in toml 1.2), so it is asked of the
/// parser itself, once, when a message needs it: the deepest list it
/// reads. A toml release that changes it changes the messages with it.
pub fn max_nesting() -> usize {
    static DEPTH: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *DEPTH.get_or_init(|| {
        let reads =
            |n: usize| toml::de::DeTable::parse(&format!("x = {}{}", "[".repeat(n), "]".repeat(n))).is_ok();
        // Past this it has no limit worth the name, and says nothing.
        const MOST: usize = 1 << 12;
        if reads(MOST) {
            return MOST;
        }
        // `reads(lo)` and not `reads(hi)`.
        let (mut lo, mut hi) = (0, MOST);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if reads(mid) { lo = mid } else { hi = mid }
        }
        lo
    })
}

/// The parser's words for a carriage return with no line feed after it.
const BARE_CR: &str = "carriage return must be followed by newline";

/// Where the lone carriage return of a [`BARE_CR`] error is: the parser
/// points just past it (or at it).
fn bare_cr(message: &str, text: &str, at: usize) -> Option<usize> {
    if !message.starts_with(BARE_CR) {
        return None;
    }
    let bytes = text.as_bytes();
    [at.checked_sub(1), Some(at)]
        .into_iter()
        .flatten()
        .find(|&i| bytes.get(i) == Some(&b'\r') && bytes.get(i + 1) != Some(&b'\n'))
}

/// The TOML parser's syntax messages in plain words, with what to write:
/// a bare word is a string that needs quotes; `count 20` lacks its `=`; a
/// table header lacks its closing bracket.
pub fn plain_syntax(message: &str, text: &str, span: Range<usize>) -> String {
    let value = text.get(span.clone()).unwrap_or("").trim();
    let (line, start) = line_at(text, span.start);
    let bare = |v: &str| !v.is_empty() && v.chars().all(|c| c.is_alphanumeric() || "_-.:+".contains(c));
    if message.starts_with("string values must be quoted") {
        return if value.is_empty() {
            "no value after `=`: give one, like 20, \"1s\" or [2, 10]".to_string()
        } else if value.contains(char::is_whitespace) {
            format!(
                "{} is not one value: quote a string ({}), separate the items of a list with commas in brackets ([a, b]), or give each key = value a line of its own",
                code(value),
                string(value)
            )
        } else {
            format!("{} is not a value: a string must be quoted, like {}", code(value), string(value))
        };
    }
    if message.starts_with("invalid boolean") && bare(value) {
        return format!(
            "{} is not a value: a string must be quoted, like {} (true and false are written in full, in lowercase)",
            code(value),
            string(value)
        );
    }
    if message.starts_with("key with no value") {
        let key = line[..span.start.saturating_sub(start).min(line.len())].trim();
        return if key.is_empty() {
            "expected a key and `=`, like count = 20".to_string()
        } else {
            format!("expected `=` after the key {}: write key = value, like count = 20", code(key))
        };
    }
    if message.starts_with("missing escaped value") {
        // The parser points at what follows the backslash.
        let after: String = text.get(span.start..).unwrap_or("").chars().take(1).collect();
        let escape = if after.trim().is_empty() { "\\".to_string() } else { format!("\\{after}") };
        return format!(
            "{} is not an escape: in a string in double quotes a backslash starts one (\\n, \\t, \\\\, \\\", \\u00e9); write \\\\ for a backslash, or put the string in single quotes, where backslashes stay as written ('C:\\traces\\a.csv')",
            code(&escape)
        );
    }
    if message.starts_with("missing opening quote") {
        // `kind = burst"`: the word up to the closing quote.
        let rest = text.get(span.start..).unwrap_or("").split(['\n', '\r']).next().unwrap_or("");
        if let Some(close) = rest.find(['"', '\'']) {
            let (word, quote) = (rest[..close].trim(), &rest[close..=close]);
            if !word.is_empty() {
                return format!(
                    "{} has no opening quote: write {quote}{word}{quote}",
                    code(&format!("{word}{quote}"))
                );
            }
        }
    }
    if message.starts_with("missing comma between array elements") {
        return "a `,` is missing between two items of the list: separate them with commas, [a, b]"
            .to_string();
    }
    if message.starts_with("missing comma between key-value pairs") {
        return "a `,` is missing between two keys of the inline table: separate them with commas, { a = 1, b = 2 }"
            .to_string();
    }
    // A `=` or a comma where the parser wanted a value.
    let before = text.get(..span.start).unwrap_or("").trim_end();
    let here = text.get(span.start..).unwrap_or("");
    let no_value = "no value after `=`: give one, like 20, \"1s\" or [2, 10]";
    for (words, what, example) in [
        ("extra comma in array", "list", "[a, b]"),
        ("extra comma in inline table", "inline table", "{ a = 1, b = 2 }"),
    ] {
        if message.starts_with(words) {
            // The parser points at the comma: after the opening bracket,
            // after another comma, or after a key's `=`.
            if before.ends_with(['[', '{']) {
                return format!(
                    "a `,` before the first item of the {what}: remove it (it is written {example})"
                );
            }
            if before.ends_with(',') {
                return format!(
                    "two `,` with nothing between them in the {what}: remove one (it is written {example})"
                );
            }
            if before.ends_with('=') {
                return no_value.to_string();
            }
        }
    }
    // `{ a = }`: the parser reads on for a value and names a string.
    if message.starts_with("invalid literal string") && before.ends_with('=') && here.starts_with(['}', ','])
    {
        return no_value.to_string();
    }
    if message.starts_with("extra `=`") || message.starts_with("extra assignment between key-value pairs") {
        // `{ a = 1 b = 2 }` reads as `b` after the value 1, then a `=`.
        return if before.ends_with('=') || message.starts_with("extra `=`") {
            "a second `=`: write key = value, like count = 20".to_string()
        } else {
            "a `,` is missing between two keys of the inline table: separate them with commas, { a = 1, b = 2 }"
                .to_string()
        };
    }
    if message.starts_with("missing assignment between key-value pairs") {
        // `{ a 1 }`: the key is the word before the gap.
        let key = before.rsplit(['{', ',', ' ', '\t']).next().unwrap_or("");
        return if is_key(key) {
            format!("expected `=` after the key {}: write key = value, like {{ a = 1, b = 2 }}", code(key))
        } else {
            "expected `=`: an inline table holds key = value pairs, like { a = 1, b = 2 }".to_string()
        };
    }
    if message.starts_with("unexpected `=` in array") {
        return "a `=` inside a list: a list holds values, like [2, 10]; key = value pairs go in an inline table, { a = 1 }"
            .to_string();
    }
    if message.starts_with("unquoted keys cannot be empty") {
        if line.trim_start().starts_with('=') || (before.ends_with(['{', ',']) && here.starts_with('=')) {
            return "a `=` with no key before it: write key = value, like count = 20".to_string();
        }
        let l = line.trim();
        if l.starts_with('[') && l.trim_matches(['[', ']', ' ', '\t']).is_empty() {
            return "a table header with no name: write one, like [limit] or [[traffic]]".to_string();
        }
        if before.ends_with('.') || here.starts_with('.') {
            return "a dotted key with an empty part: put a name on each side of every `.`, like retry.base, or none at all"
                .to_string();
        }
    }
    if message.starts_with("invalid unquoted key") {
        // The bare word the bad character is in.
        // Read back from the parser's place, not from `before`, which is
        // trimmed: a bad first character (`$count`) would give no word.
        let stop = |c: char| c.is_whitespace() || "=.[]{},#\"'".contains(c);
        let upto = text.get(..span.start).unwrap_or("");
        let from = upto.char_indices().rev().find(|&(_, c)| stop(c)).map_or(0, |(i, c)| i + c.len_utf8());
        let word: String =
            text.get(from..).unwrap_or("").chars().take_while(|&c| !stop(c)).take(40).collect();
        if let Some(bad) = word.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
            return format!(
                "{} is not a key: a bare key holds ASCII letters, digits, `-` and `_`, not {}; put any other key in quotes, like {}",
                code(&word),
                code(&bad.to_string()),
                string(&word)
            );
        }
    }
    if message.starts_with("cannot recurse further") {
        // The parser stops at the opening bracket one level too deep.
        let most = max_nesting();
        return format!(
            "lists and inline tables nested more than {most} deep: the parser reads at most {most} \
             levels, and a scenario needs two or three at most (like [{{ a = [1, 2] }}]); close them sooner"
        );
    }
    if message.starts_with(BARE_CR) {
        return "a carriage return (\\r, U+000D) with no line feed after it: TOML ends a line with \\n or \\r\\n, \
                and a lone \\r (the line ends of old Macs, or a stray one) is neither: save the file with LF or CRLF \
                line ends, or remove it"
            .to_string();
    }
    if message.starts_with("too few unicode value digits") {
        // The parser points past the digits it read.
        let escape = before.rfind('\\').and_then(|i| text.get(i..span.start)).filter(|e| !e.is_empty());
        return format!(
            "{} is not a whole escape: \\u takes 4 hexadecimal digits and \\U 8, like \\u00e9 or \\U0001F600",
            code(escape.unwrap_or("\\u"))
        );
    }
    // A control character where TOML allows none: say which.
    let control = here.chars().next().filter(|c| c.is_control() && *c != '\n');
    if let Some(c) = control {
        let (at, escape) = if message.starts_with("invalid comment character") {
            (Some("a comment"), String::new())
        } else if message.starts_with("invalid basic string") || message.starts_with("invalid literal string")
        {
            (
                Some("a string"),
                format!(", or write it as an escape in a string in double quotes (\\u{:04X})", c as u32),
            )
        } else {
            (None, String::new())
        };
        if let Some(at) = at {
            return format!("a control character (U+{:04X}) in {at}: remove it{escape}", c as u32);
        }
    }
    if message.starts_with("unclosed array table") || message.starts_with("unclosed table") {
        let header = line.trim();
        let name = header.trim_start_matches('[').trim_end_matches(']').trim();
        let fixed = if header.starts_with("[[") { format!("[[{name}]]") } else { format!("[{name}]") };
        return format!("the table header {} is not closed: write {}", code(header), code(&fixed));
    }
    if message.starts_with("unexpected key or value") {
        // More after a value on its line: a second key = value (`kind =
        // "gcra" burst = 2`), or a comma as in an inline table.
        let after = text.get(span.start..).unwrap_or("");
        let after = after.split(['\n', '\r']).next().unwrap_or("");
        // The key written after the value (`burst`, not `burst=2`), else
        // whatever stands there (`=`).
        let token: String = after.split(char::is_whitespace).next().unwrap_or("").chars().take(40).collect();
        let word = match token.split_once('=') {
            Some((key, _)) if !key.is_empty() => key.to_string(),
            _ => token,
        };
        return if after.starts_with(']') {
            "a `]` after the value closes no list: remove it (a list is written [a, b])".to_string()
        } else if after.starts_with('}') {
            "a `}` after the value closes no inline table: remove it (an inline table is written { a = 1, b = 2 })"
                .to_string()
        } else if line.trim_start().starts_with('[') {
            format!(
                "{} after the table header: a header stands on a line of its own (a comment starts with #)",
                code(&word)
            )
        } else if after.starts_with(',') {
            "a `,` after the value: in a table each key = value goes on a line of its own (commas separate the items of a list, [a, b], or of an inline table, { a = 1, b = 2 })".to_string()
        } else if word.is_empty() {
            "more after the value: give each key = value a line of its own (a comment starts with #)"
                .to_string()
        } else {
            format!(
                "{} after the value: give each key = value a line of its own (a comment starts with #)",
                code(&word)
            )
        };
    }
    // The parser ends some messages with what it expected, even when
    // that is nothing.
    message.trim_end_matches(", expected nothing").to_string()
}

/// When `column` (a byte offset into `line`) is in the key of a
/// `key = value` line: the key up to the part it is in (`burst` for
/// `burst.x = 1` at `burst`), each part trimmed.
fn key_part_at(line: &str, column: usize) -> Option<String> {
    let l = line.trim_start();
    if l.starts_with(['[', '#']) {
        return None;
    }
    // The `=` after the key: outside quotes.
    let mut parts = Vec::new();
    let (mut start, mut quote) = (0, None);
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '.') => {
                parts.push(start..i);
                start = i + 1;
            }
            (None, '=') => {
                parts.push(start..i);
                if column >= i {
                    return None;
                }
                let at = parts.iter().position(|p| column < p.end).unwrap_or(parts.len() - 1);
                let key: Vec<&str> = parts[..=at].iter().map(|p| line[p.clone()].trim()).collect();
                let bare = |k: &str| k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                let ok = key.iter().all(|k| !k.is_empty() && (k.starts_with(['"', '\'']) || bare(k)));
                return ok.then(|| key.join("."));
            }
            _ => {}
        }
    }
    None
}

/// The dotted key (`limit.window`, `traffic[1].rate`) whose value sits at
/// `offset`, found from the table headers and `key =` lines before it. A
/// heuristic for messages from the TOML parser, which name no key.
pub fn key_path_at(text: &str, offset: usize) -> Option<String> {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let mut table: Option<String> = None;
    let mut key: Option<String> = None;
    let mut arrays: Vec<(String, usize)> = Vec::new();
    let lines = text[..line_start].lines().map(|l| (l, false)).chain([(&text[line_start..line_end], true)]);
    for (line, last) in lines {
        let l = line.trim();
        if let Some(name) = l.strip_prefix("[[").and_then(|r| r.split("]]").next()) {
            let name = name.trim().to_string();
            let n = match arrays.iter_mut().find(|(a, _)| *a == name) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    arrays.push((name.clone(), 0));
                    0
                }
            };
            table = Some(format!("{name}[{n}]"));
            key = None;
        } else if let Some(name) = l.strip_prefix('[').and_then(|r| r.split(']').next()) {
            // A sub-table of the last entry of an array (`[traffic.retry]`
            // after the second `[[traffic]]`) is that entry's:
            // `traffic[1].retry`.
            let name = name.trim();
            let entry = arrays.iter().find_map(|(a, n)| {
                name.strip_prefix(a.as_str())
                    .and_then(|r| r.strip_prefix('.'))
                    .map(|rest| format!("{a}[{n}].{rest}"))
            });
            table = Some(entry.unwrap_or_else(|| name.to_string()));
            key = None;
        } else if let Some(k) = last.then(|| key_part_at(line, offset - line_start)).flatten() {
            // At a key itself: a dotted key (`burst.x = 1`) is about the
            // part the offset is at, not about the key before it.
            key = Some(k);
        } else {
            let upto = if last { &line[..offset - line_start] } else { line };
            if let Some((k, _)) = upto.split_once('=') {
                let k = k.trim();
                if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || "_-.\"'".contains(c)) {
                    key = Some(k.to_string());
                }
            }
        }
    }
    match (table, key) {
        (Some(t), Some(k)) => Some(format!("{t}.{k}")),
        (None, Some(k)) => Some(k),
        (Some(t), None) => Some(t),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    /// The first setting of a key set twice: found in the same table only,
    /// with LF or CRLF line ends, and never looked for past a header.
    #[test]
    fn first_setting_finds_the_line_above_in_the_same_table() {
        let text = "name = \"é\"\n\n[limit]\nrequests = 1\n# x\nrequests = 2\n";
        let second = text.rfind("requests").unwrap();
        assert_eq!(first_setting(text, second, "limit.requests"), Some(4));
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(first_setting(&crlf, crlf.rfind("requests").unwrap(), "limit.requests"), Some(4));
        // `name` is above the [limit] header: not looked for there.
        assert_eq!(first_setting(text, second, "name"), None);
        // The first line of the file, and nothing above it.
        let top = "name = 1\nname = 2";
        assert_eq!(first_setting(top, top.rfind("name").unwrap(), "name"), Some(1));
        assert_eq!(first_setting(top, 0, "name"), None);
    }

    #[test]
    fn key_path_heuristic() {
        let t = "a = 1\n[[x]]\nk = 2\n[[x]]\n\nk = [\n 3]\n[y]\nz = 4\n";
        assert_eq!(key_path_at(t, 4).as_deref(), Some("a"));
        assert_eq!(key_path_at(t, t.find("3]").unwrap()).as_deref(), Some("x[1].k"));
        assert_eq!(key_path_at(t, t.find("4").unwrap()).as_deref(), Some("y.z"));
        // At a key itself: that key.
        assert_eq!(key_path_at(t, 0).as_deref(), Some("a"));
        assert_eq!(key_path_at("", 0), None);
        assert_eq!(key_path_at("é = 1", 1).as_deref(), None);
        // At a part of a dotted key: the key up to that part, not the key
        // before it (`burst.x = 1` where `burst` takes a number).
        let t = "[[limiter]]\nkind = \"gcra\"\nburst.x = 1\n[limit]\n  window . \"x.y\".z = 2\n";
        assert_eq!(key_path_at(t, t.find("burst").unwrap()).as_deref(), Some("limiter[0].burst"));
        assert_eq!(key_path_at(t, t.find("x = 1").unwrap()).as_deref(), Some("limiter[0].burst.x"));
        assert_eq!(key_path_at(t, t.find("1\n").unwrap()).as_deref(), Some("limiter[0].burst.x"));
        assert_eq!(key_path_at(t, t.find("window").unwrap()).as_deref(), Some("limit.window"));
        assert_eq!(key_path_at(t, t.find("\"x.y\"").unwrap()).as_deref(), Some("limit.window.\"x.y\""));
        // A sub-table of an array's entry is that entry's: the second
        // source's [traffic.retry]; a table merely named alike is not.
        let t = "[[traffic]]\n[[traffic]]\n[traffic.retry]\nbse = 1\n[traffic_x.y]\nk = 2\n";
        assert_eq!(key_path_at(t, t.find("bse").unwrap()).as_deref(), Some("traffic[1].retry.bse"));
        assert_eq!(key_path_at(t, t.find("k = 2").unwrap()).as_deref(), Some("traffic_x.y.k"));
    }

    /// `traffic = []`, a dotted `traffic.kind` or a [traffic] table, and
    /// then a [[traffic]] header: the parser's bare "duplicate key" gets
    /// the list's name and what clashed.
    #[test]
    fn a_list_set_twice_is_named() {
        let t = "name = \"t\"\ntraffic = []\n[[traffic]]\nkind = \"burst\"\n";
        let at = t.find("traffic]]").unwrap();
        assert_eq!(duplicate_list("duplicate key", t, at).as_deref(), Some("traffic"));
        assert_eq!(duplicate_list("invalid table header", t, at), None);
        assert_eq!(duplicate_list("duplicate key", t, t.find("kind").unwrap()), None);
    }

    /// `window = 1`: a number where a duration belongs.
    #[test]
    fn a_bare_number_for_a_duration_gets_a_hint() {
        let raw = "invalid type: integer `1`, expected a string";
        assert!(bare_duration("limit.window", raw).unwrap().contains("like \"1s\""));
        assert!(
            bare_duration("nodes.rtts[1]", "invalid type: floating point `0.5`, expected a string").is_some()
        );
        assert_eq!(bare_duration("limit.requests", raw), None);
        assert_eq!(bare_duration("limit.window", "invalid type: boolean `true`, expected a string"), None);
        let raw = "invalid type: date-time `07:32:00`, expected a string";
        assert!(bare_duration("limit.window", raw).is_some());
        assert_eq!(bare_duration("name", raw), None);
    }

    /// `[[retry]]`, `[[traffic.retry]]` or `retry = [{...}]` in a source:
    /// a table the scenario has one of, written as a list.
    #[test]
    fn one_table_written_as_a_list() {
        let raw = "invalid type: map, expected a string";
        let m = one_table_as_a_list("retry[0]", raw).unwrap();
        assert_eq!(
            m,
            "`retry` is one table, not a list: write its header [retry] with single brackets (double brackets, or a list `[...]`, make a list of tables)"
        );
        assert!(
            one_table_as_a_list("traffic.retry[0]", raw).unwrap().starts_with("`traffic.retry` is one table")
        );
        assert!(one_table_as_a_list("traffic[2].retry", raw).unwrap().contains("[traffic.retry]"));
        assert!(one_table_as_a_list("nodes[1]", "invalid type: map, expected a whole number").is_some());
        // A list of tables where one belongs, or another error: not this.
        assert_eq!(one_table_as_a_list("traffic[0]", raw), None);
        assert_eq!(one_table_as_a_list("retry[0]", "invalid type: string"), None);
        assert_eq!(one_table_as_a_list("limit.window", raw), None);
    }

    /// An unknown key says which table it is in, where its path is known
    /// and ends in it; top-level keys stay as serde says (keys of inline
    /// tables get their path from [`inline_table_at`]).
    #[test]
    fn unknown_keys_name_their_table() {
        let raw = "unknown field `bse`, expected `base` or `cap`";
        let m = serde_message(raw);
        assert_eq!(
            in_table(&m, raw, Some("traffic[1].retry.bse")),
            "unknown field `bse` in `traffic[1].retry`, expected `base` or `cap`; did you mean `base`?"
        );
        assert_eq!(in_table(&m, raw, Some("bse")), m);
        assert_eq!(in_table(&m, raw, Some("limit")), m);
        assert_eq!(in_table(&m, raw, None), m);
        assert_eq!(in_table("other", "other", Some("a.b")), "other");
    }

    /// The inline table an offset is in: nested in lists (counted past
    /// strings and comments with commas and brackets) and tables.
    #[test]
    fn inline_tables_are_named_by_their_path() {
        let at = |text: &str, needle: &str| inline_table_at(text, text.find(needle).unwrap());
        let t = "[[traffic]]\nretry = { policy = \"fixed\", bse = 1 }\n";
        assert_eq!(at(t, "bse").as_deref(), Some("traffic[0].retry"));
        let t = "[sweep]\nretry_policies = [\n  { policy = \"a,[\" }, # x, {\n  { p = 1, q = { r = 1, bse = 2 } },\n]\n";
        assert_eq!(at(t, "bse").as_deref(), Some("sweep.retry_policies[1].q"));
        // An inline table over several lines (TOML 1.1), after strings
        // that hold brackets, `=` and quotes, multi-line ones too.
        let t = "[[traffic]]\nkind = \"x = [\"\nd = \"\"\"a = {\n\"\" ]\"\"\"\ne = '''{'''\nretry = {\n  policy = \"fixed\", # {\n  bse = 1\n}\n";
        assert_eq!(at(t, "bse").as_deref(), Some("traffic[0].retry"));
        // Not inside an inline table: a list's item, a plain value, a key,
        // a statement after an inline table, a table header.
        assert_eq!(at("[[limiter]]\nslots = [2, 10]", "10"), None);
        assert_eq!(at("[[traffic]]\ncount = 20", "20"), None);
        assert_eq!(at("[[traffic]]\nretry = { a = 1 }\ncount = 20", "count"), None);
        assert_eq!(at("[[traffic]]\nretry = { a = 1 }\ncount = 20", "20"), None);
        assert_eq!(at("x = {\n a = 1 }\n[t]\ny = 1", "t]"), None);
        assert_eq!(value_start_at("a = 1\nb = [\n 2,\n", 15), Some(9));
        // A string left open ends at its line's end, even after a
        // backslash (only a multi-line string's backslash escapes a
        // line's end): the list below is the next statement's value.
        let t = "a = \"x\\\nb = [\n 2,\n";
        assert_eq!(value_start_at(t, t.find('2').unwrap()), Some(t.find(" [").unwrap()));
        let t = "a = 'x\nb = [\n 2,\n";
        assert_eq!(value_start_at(t, t.find('2').unwrap()), Some(t.find(" [").unwrap()));
        // Inside a string, the statement's value is still the one read.
        let t = "a = [\"x\nb";
        assert_eq!(value_start_at(t, t.find('x').unwrap()), Some(3));
        // A value in an inline table is named by its own key; a key, or a
        // list's item, is not a key's value.
        let value = |text: &str, needle: &str| inline_value_at(text, text.find(needle).unwrap());
        let t = "[[traffic]]\nretry = { policy = \"fixed\", base = 5, cap = { x = 1 } }\n";
        assert_eq!(value(t, "5").as_deref(), Some("traffic[0].retry.base"));
        assert_eq!(value(t, "{ x").as_deref(), Some("traffic[0].retry.cap"));
        assert_eq!(value(t, "1 }").as_deref(), Some("traffic[0].retry.cap.x"));
        assert_eq!(value(t, "base"), None);
        assert_eq!(value("[nodes]\nbalance = { weights = [1, 2] }", "2]"), None);
    }

    /// A place in a comment, after a value or a table header, is said to
    /// be; a `#` in a string or a quoted key is no comment.
    #[test]
    fn comments_are_found() {
        let in_comment = |text: &str, needle: &str| scan(text, text.find(needle).unwrap()).comment;
        assert!(in_comment("a = 1 # x\n", "x"));
        assert!(in_comment("# x\n", "x"));
        assert!(in_comment("a = [\n 1, # x\n", "x"));
        assert!(in_comment("[t] # x\n", "x"));
        assert!(in_comment("[\"a#b\"] # x\n", "x"));
        assert!(!in_comment("a = \"#x\"\n", "x"));
        assert!(!in_comment("[\"a#x\"]\n", "x"));
        assert!(!in_comment("a = 1 # c\nx = 2\n", "x"));
    }

    /// A list's own item is named with its place; a value inside an
    /// inline table in it, or no list at all, is not a list's item.
    #[test]
    fn list_items_are_named_by_their_place() {
        let item = |text: &str, needle: &str| list_item_at(text, text.find(needle).unwrap());
        let t = "[sweep]\nretry_policies = [[{ policy = \"none\" }], { policy = \"fixed\" }, 5]\n";
        assert_eq!(item(t, "[{").as_deref(), Some("sweep.retry_policies[0]"));
        assert_eq!(item(t, "{ policy").as_deref(), Some("sweep.retry_policies[0][0]"));
        assert_eq!(item(t, "5").as_deref(), Some("sweep.retry_policies[2]"));
        assert_eq!(item(t, "\"fixed"), None);
        let t = "[nodes]\noutage = [\n  { start = \"1s\" }, # [,\n  1,\n]\n";
        assert_eq!(item(t, "1,").as_deref(), Some("nodes.outage[1]"));
        assert_eq!(item("[[traffic]]\ncount = 20", "20"), None);
    }

    /// A key set twice in an inline table is named with its path, a
    /// dotted one whole; a duplicate outside inline tables is not this.
    #[test]
    fn duplicate_keys_of_inline_tables_are_named() {
        let dup = |text: &str, needle: &str| {
            let at = text.rfind(needle).unwrap();
            duplicate_inline_key("duplicate key", text, at..at + needle.len())
        };
        let t = "[[traffic]]\nretry = { base = \"1s\", base = \"2s\" }\n";
        assert_eq!(dup(t, "base"), Some(("traffic[0].retry.base".into(), "base".into())));
        let t = "[sweep]\nretry_policies = [\n  { policy = \"none\" },\n  { a . b = 1, a. b = 2 },\n]\n";
        assert_eq!(dup(t, "b"), Some(("sweep.retry_policies[1].a.b".into(), "a.b".into())));
        assert_eq!(dup("name = \"t\"\nname = \"u\"\n", "name"), None);
        let t = "[[traffic]]\nretry = { base = \"1s\", base = \"2s\" }\n";
        assert_eq!(duplicate_inline_key("invalid key", t, t.rfind("base").unwrap()..t.len()), None);
    }

    /// A date-time where another type is expected is called one, not a
    /// "map"; a long string or unknown key is quoted by its start.
    #[test]
    fn type_errors_in_plain_words() {
        let m = "invalid type: map, expected a whole number";
        assert_eq!(
            date_time(m, "1979-05-27"),
            "invalid type: date-time `1979-05-27`, expected a whole number"
        );
        assert_eq!(date_time(m, "{ x = 1 }"), m);
        // Where a table belongs, the reader's internal key is not named.
        let m = "unknown field `$__toml_private_datetime`, expected one of `start`, `end`, `fail`";
        assert_eq!(
            date_for_a_table(m, " 1979-05-27 ").as_deref(),
            Some("invalid type: date-time `1979-05-27`, expected a table")
        );
        let m = "unknown field `$__toml_private_datetime`, expected one of `policy`, `base`";
        assert!(date_for_a_table(m, "07:32:00").unwrap().ends_with(&format!("expected {RETRY_TABLE}")));
        assert!(date_for_a_table("missing field `kind`", "1979-05-27").is_some());
        assert_eq!(date_for_a_table("missing field `kind`", "{ count = 1 }"), None);
        assert_eq!(date_for_a_table("invalid type: map, expected a string", "1979-05-27"), None);
        let long = "x".repeat(1000);
        assert_eq!(
            serde_message(&format!("invalid type: string \"{long}\", expected a whole number")),
            format!("invalid type: string \"{}...\" (1000 bytes), expected a whole number", "x".repeat(40))
        );
        // Not in the middle of an escape.
        let escaped = format!("{}\\u{{1b}}{long}", "x".repeat(36));
        assert_eq!(
            serde_message(&format!("invalid type: string \"{escaped}\", expected a whole number")),
            format!("invalid type: string \"{}...\" (1042 bytes), expected a whole number", "x".repeat(36))
        );
        assert_eq!(
            serde_message(&format!("unknown field `{long}`, expected `requests` or `window`")),
            format!("unknown field `{}...` (1000 bytes), expected `requests` or `window`", "x".repeat(40))
        );
        assert_eq!(
            serde_message("unknown field `a`b`, expected `requests` or `window`"),
            "unknown field `a`b`, expected `requests` or `window`"
        );
    }

    /// A syntax error is said in plain words, named by a key only when it
    /// is on that key's own line.
    #[test]
    fn syntax_errors_name_only_their_own_key() {
        let err = |text: &str| {
            let e = toml::de::DeTable::parse(text).unwrap_err();
            Ctx { path: Path::new("s.toml"), text }.syntax(&e).to_string()
        };
        let head = "name = \"t\"\n[[traffic]]\nspan = \"10ms\"\n";
        assert_eq!(
            err(&format!("{head}count 20\n")),
            "s.toml:4:7: expected `=` after the key `count`: write key = value, like count = 20"
        );
        assert_eq!(
            err("name = \"t\"\n[[limiter]\nkind = \"x\"\n"),
            "s.toml:2:11: the table header `[[limiter]` is not closed: write `[[limiter]]`"
        );
        assert_eq!(
            err("[limit\nrequests = 1\n"),
            "s.toml:1:7: the table header `[limit` is not closed: write `[limit]`"
        );
        assert_eq!(
            err("name = t\n"),
            "s.toml:1:8: `name`: `t` is not a value: a string must be quoted, like \"t\" (true and false are written in full, in lowercase)"
        );
        assert_eq!(
            err(&format!("{head}count = 20 20\n")),
            "s.toml:4:9: `traffic[0].count`: `20 20` is not one value: quote a string (\"20 20\"), separate the items of a list with commas in brackets ([a, b]), or give each key = value a line of its own"
        );
        assert_eq!(
            err(&format!("{head}count = \n")),
            "s.toml:4:9: `traffic[0].count`: no value after `=`: give one, like 20, \"1s\" or [2, 10]"
        );
        assert_eq!(
            err("[limit]\nwindow = 1s\n"),
            "s.toml:2:10: `limit.window`: `1s` is not a value: a string must be quoted, like \"1s\""
        );
        // Inside a list that started on an earlier line: the list's key,
        // not a key above it.
        assert_eq!(
            err("slots = [1,\n 2,\n y]\n"),
            "s.toml:3:2: `slots`: `y` is not a value: a string must be quoted, like \"y\""
        );
        assert_eq!(
            err("count = 3\nslots = [1,\n 2\n 3]\n"),
            "s.toml:4:2: `slots`: a `,` is missing between two items of the list: separate them with commas, [a, b]"
        );
        // A `=` out of place, or missing, in an inline table or a list.
        assert_eq!(
            err("r = { a = = 1 }\n"),
            "s.toml:1:11: `r`: a second `=`: write key = value, like count = 20"
        );
        assert_eq!(
            err("r = { a = 1 b = 2 }\n"),
            "s.toml:1:15: `r`: a `,` is missing between two keys of the inline table: separate them with commas, { a = 1, b = 2 }"
        );
        assert_eq!(
            err("r = { a 1 }\n"),
            "s.toml:1:9: `r`: expected `=` after the key `a`: write key = value, like { a = 1, b = 2 }"
        );
        assert_eq!(
            err("r = { a = 1, = 1 }\n"),
            "s.toml:1:14: `r`: a `=` with no key before it: write key = value, like count = 20"
        );
        assert_eq!(
            err("r = { a = }\n"),
            "s.toml:1:11: `r`: no value after `=`: give one, like 20, \"1s\" or [2, 10]"
        );
        assert_eq!(
            err("r = { a = , b = 1 }\n"),
            "s.toml:1:11: `r`: no value after `=`: give one, like 20, \"1s\" or [2, 10]"
        );
        assert_eq!(
            err("s = [1 = 2]\n"),
            "s.toml:1:8: `s`: a `=` inside a list: a list holds values, like [2, 10]; key = value pairs go in an inline table, { a = 1 }"
        );
        // Keys that are not keys.
        assert_eq!(
            err("co$nt = 1\n"),
            "s.toml:1:3: `co$nt` is not a key: a bare key holds ASCII letters, digits, `-` and `_`, not `$`; put any other key in quotes, like \"co$nt\""
        );
        let dotted = "a dotted key with an empty part: put a name on each side of every `.`, like retry.base, or none at all";
        assert_eq!(err("count. = 1\n"), format!("s.toml:1:8: {dotted}"));
        assert_eq!(err(".count = 1\n"), format!("s.toml:1:1: {dotted}"));
        assert_eq!(err("[a..b]\n"), format!("s.toml:1:4: {dotted}"));
        assert_eq!(
            err("[[ ]]\n"),
            "s.toml:1:4: a table header with no name: write one, like [limit] or [[traffic]]"
        );
        // Escapes cut short, and control characters.
        assert_eq!(
            err("a = \"\\u12\"\n"),
            "s.toml:1:10: `a`: `\\u12` is not a whole escape: \\u takes 4 hexadecimal digits and \\U 8, like \\u00e9 or \\U0001F600"
        );
        assert_eq!(
            err("a = 'x\u{1}'\n"),
            "s.toml:1:7: `a`: a control character (U+0001) in a string: remove it, or write it as an escape in a string in double quotes (\\u0001)"
        );
        assert_eq!(
            err("a = 1 # x\u{7f}\n"),
            "s.toml:1:10: `a`: a control character (U+007F) in a comment: remove it"
        );
        // A `key = value` line inside a list closed below it: the list's
        // key names it, not the line's.
        assert_eq!(
            err("s = [\n 2,\n x = 3,\n]\n"),
            "s.toml:3:4: `s`: a `=` inside a list: a list holds values, like [2, 10]; key = value pairs go in an inline table, { a = 1 }"
        );
        // A comma too many: before the first item, or beside another.
        assert_eq!(
            err("slots = [ ,1]
"),
            "s.toml:1:11: `slots`: a `,` before the first item of the list: remove it (it is written [a, b])"
        );
        assert_eq!(
            err("slots = [1,
 ,2]
"),
            "s.toml:2:2: `slots`: two `,` with nothing between them in the list: remove one (it is written [a, b])"
        );
        assert_eq!(
            err("r = { a = 1,, b = 2 }
"),
            "s.toml:1:13: `r`: two `,` with nothing between them in the inline table: remove one (it is written { a = 1, b = 2 })"
        );
        assert_eq!(
            err("r = {, a = 1 }
"),
            "s.toml:1:6: `r`: a `,` before the first item of the inline table: remove it (it is written { a = 1, b = 2 })"
        );
        // An error at a key itself names it.
        assert_eq!(
            err("name = \"a\"\nname = \"b\"\n"),
            "s.toml:2:1: `name`: duplicate key: it is set already on line 1; give each key once"
        );
        // A table written twice is named by its header.
        assert_eq!(
            err("[output]\nbin = \"1s\"\n\n[output]\nbin = \"2s\"\n"),
            "s.toml:4:2: `output`: duplicate key: the table [output] is written a second time here (first on line 1); give all its keys under one [output] header"
        );
        assert_eq!(
            err("[nodes]\ncount = 2\n[nodes.balance]\nx = 1\n[nodes.balance]\n"),
            "s.toml:5:8: `nodes.balance`: duplicate key: the table [nodes.balance] is written a second time here (first on line 3); give all its keys under one [nodes.balance] header"
        );
        // Left open: reported where it was opened.
        assert_eq!(
            err("[limit]\nwindow = \"1s\n"),
            "s.toml:2:10: `limit.window`: the string opened here is not closed: end it with `\"` before the line ends (a string over several lines goes between `\"\"\"`)"
        );
        assert_eq!(
            err("[limit]\nrequests = [1, 2\n[[limiter]]\nkind = \"fixed_window\"\n"),
            "s.toml:2:12: `limit.requests`: the list opened here is not closed: end it with `]` (everything up to line 3 was read as part of it)"
        );
        assert_eq!(
            err("[[traffic]]\nretry = { policy = \"fixed\"\n"),
            "s.toml:2:9: `traffic[0].retry`: the inline table opened here is not closed: end it with `}` (the file ends inside it)"
        );
        assert_eq!(
            err("description = '''one\ntwo\n"),
            "s.toml:1:15: `description`: the multi-line string opened here is not closed: end it with `'''`"
        );
        assert_eq!(
            err("\"name = 1\n"),
            "s.toml:1:1: the quoted key opened here is not closed: end it with `\"`"
        );
        assert_eq!(
            err("[limit]\nrequests = 10]\n"),
            "s.toml:2:14: `limit.requests`: a `]` after the value closes no list: remove it (a list is written [a, b])"
        );
        assert_eq!(
            err("= 3\n"),
            "s.toml:1:1: a `=` with no key before it: write key = value, like count = 20"
        );
    }

    /// A number the parser cannot read is given whole, from its start,
    /// wherever the parser stopped in it; other messages are not numbers'.
    #[test]
    fn a_number_is_named_whole_from_its_start() {
        let words = " is not a number: write it like 20, 2.5 or 1e6";
        let t = "a = 5.5.5\n";
        assert_eq!(plain_number("invalid float", t, 7), Some((4, format!("`5.5.5`{words}"))));
        let t = "a = [1, 1e]";
        assert_eq!(
            plain_number("invalid exponent, expected digits", t, 10),
            Some((8, format!("`1e`{words}")))
        );
        assert_eq!(plain_number("invalid float", "5.5.5", 3), Some((0, format!("`5.5.5`{words}"))));
        // Non-ASCII beside it, an offset past the end or inside a
        // character: no panic.
        let t = "a =\u{3000}5.5.5";
        assert!(plain_number("invalid float", t, t.len()).is_some());
        assert_eq!(plain_number("invalid float", t, 4), None);
        assert_eq!(plain_number("invalid float", "a = 1", 99), None);
        assert_eq!(plain_number("string values must be quoted", "a = x", 4), None);
        // What to write instead, where there is one fix.
        let how = |message: &str, number: &str| {
            let t = format!("a = {number}\n");
            let (at, words) = plain_number(message, &t, 5).expect("a number's words");
            assert_eq!(at, 4);
            words.strip_prefix(&format!("`{number}` is not a number: ")).map(str::to_string).unwrap_or(words)
        };
        let zero = "a number other than 0 does not start with 0: write";
        assert_eq!(
            how("unexpected leading zero", "020"),
            format!("{zero} 20 (an octal number is written 0o20)")
        );
        assert_eq!(how("unexpected leading zero", "00"), format!("{zero} 0"));
        assert_eq!(how("unexpected leading zero", "-01.5"), format!("{zero} -1.5"));
        assert_eq!(how("unexpected leading zero", "00.5"), format!("{zero} 0.5"));
        assert_eq!(how("unexpected leading zero", "0_20e3"), format!("{zero} 20e3"));
        assert_eq!(how("redundant numeric sign", "+-5"), "a number takes one sign at most, like -5 or +5");
        let radix = "a hexadecimal, octal or binary number (0x, 0o, 0b) takes no sign: write";
        assert_eq!(
            how("integers with a radix cannot be signed", "-0x1f"),
            format!("{radix} 0x1f, or -31 in decimal")
        );
        assert_eq!(
            how("integers with a radix cannot be signed", "-0b1_1"),
            format!("{radix} 0b1_1, or -3 in decimal")
        );
        assert_eq!(how("integers with a radix cannot be signed", "+0o17"), format!("{radix} 0o17"));
        assert_eq!(how("unexpected sign", "0x+10"), format!("{radix} 0x10"));
        // Past u128: no decimal offered, no panic.
        assert_eq!(
            how("integers with a radix cannot be signed", "-0x1ffffffffffffffffffffffffffffffff"),
            format!("{radix} 0x1ffffffffffffffffffffffffffffffff")
        );
        assert_eq!(
            how("radix must be lowercase", "0X1f"),
            "its prefix is written in lowercase (0x, 0o, 0b): write 0x1f"
        );
        assert_eq!(
            how("redundant integer number prefix", "0d10"),
            "a decimal number takes no prefix: write 10"
        );
        assert!(
            how("invalid date, expected `-` (MM-DD)", "1-2")
                .starts_with("`1-2` is not a value: it starts like a date")
        );
        assert!(how("invalid time, expected `:` (MM)", "07:3x").ends_with("like \"07:3x\""));
    }

    /// serde's type errors, said with what was expected first and the
    /// value found in words; other messages pass through.
    #[test]
    fn type_errors_say_what_was_found_last() {
        for (raw, said) in [
            (
                "invalid type: string \"ten\", expected a whole number",
                "expected a whole number, found the string \"ten\"",
            ),
            // A quote escaped inside the string, and serde's own words in it.
            (
                r#"invalid type: string "a\", expected b\\", expected a number"#,
                r#"expected a number, found the string "a\", expected b\\""#,
            ),
            (
                "invalid type: string \"xx...\" (300 bytes), expected a whole number",
                "expected a whole number, found the string \"xx...\" (300 bytes)",
            ),
            ("invalid type: integer `-5`, expected a string", "expected a string, found the number -5"),
            (
                "invalid type: floating point `2.5`, expected a whole number",
                "expected a whole number, found the number 2.5",
            ),
            ("invalid type: boolean `true`, expected a string", "expected a string, found true"),
            (
                "invalid type: date-time `07:32:00`, expected a string",
                "expected a string, found the date-time 07:32:00",
            ),
            ("invalid type: sequence, expected a whole number", "expected a whole number, found a list"),
            (
                "invalid type: map, expected a list, like [2, 10]",
                "expected a list (like [2, 10]), found a table",
            ),
            (
                "invalid type: map, expected an array of tables: write `[[limiter]]`",
                "expected an array of tables, found a table: write `[[limiter]]`",
            ),
            ("invalid length 0, expected a list", "invalid length 0, expected a list"),
            ("invalid type: unit value, expected a string", "invalid type: unit value, expected a string"),
        ] {
            assert_eq!(found_last(raw), said, "{raw}");
        }
    }

    /// A list where one table belongs is named at its `[`, whatever its
    /// first item; a list of tables, a list inside a table's value, and
    /// a list under another key are not.
    #[test]
    fn a_list_for_a_table_is_named_as_a_list() {
        let raw = "invalid type: integer `1`, expected a string";
        let t = "[[traffic]]\nretry = [1, 2]\n";
        let (at, message) = list_for_a_table(t, t.find('1').unwrap(), raw).expect("a list for a table");
        assert_eq!(at, t.find("[1").unwrap());
        assert_eq!(
            message,
            "`traffic[0].retry`: expected a retry table (like { policy = \"full_jitter\", base = \"100ms\", cap = \"10s\", max_attempts = 5 }), found a list"
        );
        let t = "output = [\"1s\"]\n";
        assert_eq!(
            list_for_a_table(t, t.find('"').unwrap(), raw),
            Some((9, "`output`: expected a table, found a list".to_string()))
        );
        let t = "retry = [{ base = 1 }]\n";
        assert_eq!(list_for_a_table(t, t.find('{').unwrap(), "invalid type: map, expected a string"), None);
        let t = "retry = { base = [1] }\n";
        assert_eq!(list_for_a_table(t, t.find('1').unwrap(), raw), None);
        let t = "[limiter]\nslots = [1]\n";
        assert_eq!(list_for_a_table(t, t.find("1]").unwrap(), raw), None);
        let t = "retry = [1]\n";
        assert_eq!(list_for_a_table(t, t.find('1').unwrap(), "missing field `policy`"), None);
    }

    /// A whole float where a whole number belongs gets the number to
    /// write; a fraction, an infinity or another type does not.
    #[test]
    fn a_whole_float_gets_the_whole_number_to_write() {
        let raw = |v: &str| format!("invalid type: floating point `{v}`, expected i64");
        assert_eq!(
            whole_float(&raw("1000.0"), "1e3").as_deref(),
            Some(" (`1e3` is a float in TOML: write the whole number 1000)")
        );
        assert_eq!(
            whole_float(
                "invalid type: floating point `-20.0`, expected a whole number or a list of them",
                "-20.0"
            )
            .as_deref(),
            Some(" (`-20.0` is a float in TOML: write the whole number -20)")
        );
        assert_eq!(whole_float(&raw("2.5"), "2.5"), None);
        assert_eq!(whole_float(&raw("inf"), "inf"), None);
        assert_eq!(whole_float(&raw("1e30"), "1e30"), None);
        assert_eq!(whole_float("invalid type: floating point `10.0`, expected a string", "10.0"), None);
        assert_eq!(whole_float("invalid type: integer `10`, expected i64", "10"), None);
    }

    /// What is left open where the parser stopped, read past what only
    /// looks like it: quotes and brackets in comments, in closed strings
    /// (multi-line ones too) and in table headers; a list closed on its
    /// own line; an inline table over several lines (TOML 1.1).
    #[test]
    fn what_is_left_open_is_found_where_it_was_opened() {
        // The offset of the first `needle`; the text's end.
        let at = |text: &str, needle: &str| text.find(needle).unwrap();
        let end = |text: &str| text.len();
        // A string whose line ends first, with the parser at the line's
        // end, on the next line, or at the file's end (no newline, CRLF).
        let t = "a = \"x\nb = 1\n";
        assert_eq!(still_open(t, at(t, "\nb")), Some(Open::Str(4, "\"")));
        assert_eq!(still_open(t, at(t, "b =")), Some(Open::Str(4, "\"")));
        assert_eq!(still_open("a = 'x", 6), Some(Open::Str(4, "'")));
        assert_eq!(still_open("a = \"x\r\n", 6), Some(Open::Str(4, "\"")));
        // An error inside a string (a bad escape) is the string's own.
        let t = "a = \"x\\q\"\n";
        assert_eq!(still_open(t, at(t, "q")), None);
        let t = "a = \"x\\q\n";
        assert_eq!(still_open(t, at(t, "q")), None);
        // An escaped quote does not close; a closed string is passed.
        let t = "a = \"x\\\"\nb = [1\n[x]\n";
        assert_eq!(still_open(t, at(t, "[x]")), Some(Open::Str(4, "\"")));
        // Quotes and brackets in comments, headers and multi-line strings.
        let t = "# \" [ {\n[t] # \"\nd = \"\"\"[\"\n{\"\"\"\nb = [1, # ]\n2\nc = 1\n";
        assert_eq!(still_open(t, at(t, "c =")), Some(Open::List(at(t, "[1"))));
        let t = "d = '''[\n'''\nb = 1 2\n";
        assert_eq!(still_open(t, at(t, "2\n")), None);
        // A multi-line string never closed, and one closed after the
        // error (which is then about something inside it).
        let t = "d = \"\"\"x\ny\n";
        assert_eq!(still_open(t, end(t)), Some(Open::Str(4, "\"\"\"")));
        let t = "d = \"\"\"x\\q\n\"\"\"\n";
        assert_eq!(still_open(t, at(t, "q")), None);
        // A list is taken as left open only where the next statement or
        // the file's end is read as part of it, not at a missing comma
        // between items on their own lines, nor on its own line.
        let t = "b = [\n 1\n 2\n]\n";
        assert_eq!(still_open(t, at(t, " 2")), None);
        let t = "b = [1, 2 3]\n";
        assert_eq!(still_open(t, at(t, "3")), None);
        let t = "b = [[1, 2]\n[[limiter]]\n";
        assert_eq!(still_open(t, at(t, "[[limiter")), Some(Open::List(4)));
        let t = "b = [\n";
        assert_eq!(still_open(t, end(t)), Some(Open::List(4)));
        let t = "b = [1,\nkind = 2\n";
        assert_eq!(still_open(t, at(t, "kind")), Some(Open::List(4)));
        // A `key = value` line that a `]` below closes the list after is a
        // bad item, not the next statement; a `]` only past the next
        // header closes nothing of it.
        let t = "b = [\n 2,\n x = 3,\n]\n";
        assert_eq!(still_open(t, at(t, "x =")), None);
        assert_eq!(still_open(t, at(t, "= 3")), None);
        let t = "b = [\n 2,\n x = 3,\n[t]\nc = [1]\n";
        assert_eq!(still_open(t, at(t, "x =")), Some(Open::List(4)));
        let t = "b = [\n 2,\n x = \"]\"\n";
        assert_eq!(still_open(t, at(t, "x =")), Some(Open::List(4)));
        // An offset inside a character: no panic.
        let t = "b = [\n 2,\n x = 3 é,\n]\n";
        let _ = still_open(t, at(t, "é") + 1);
        // An inline table may hold key = value lines (TOML 1.1): only a
        // header or the file's end says it was left open; the innermost
        // of what is open is the one named.
        let t = "r = {\n a = 1,\n a = 2\n}\n";
        assert_eq!(still_open(t, at(t, "a = 2")), None);
        let t = "r = { a = 1,\n[x]\n";
        assert_eq!(still_open(t, at(t, "[x]")), Some(Open::Table(4)));
        let t = "r = [{ a = 1 }, { b = 2\n[x]\n";
        assert_eq!(still_open(t, at(t, "[x]")), Some(Open::Table(at(t, "{ b"))));
        // A quoted key, and nothing open at all.
        assert_eq!(still_open("\"a = 1\n", 7), Some(Open::Key(0, "\"")));
        let t = "a = [1]\nb = {c = 1}\nd = 'x'\n";
        assert_eq!(still_open(t, end(t)), None);
    }

    /// What set a table first, read past what only looks like it: a
    /// header inside a multi-line string, a dotted key in an earlier
    /// element of a `[[list]]`, and a dotted key under another table.
    #[test]
    fn a_table_is_first_set_where_the_parser_set_it() {
        let at = |text: &str, table: &str| {
            let header = text.rfind(&format!("[{table}]")).unwrap();
            first_definition(text, header, table)
        };
        let header = |line| Some(Definition { line, by: None });
        let by = |line, by: &str| Some(Definition { line, by: Some(by.to_string()) });
        assert_eq!(at("[retry]\nbase = \"1s\"\n[retry]\n", "retry"), header(1));
        assert_eq!(at("d = \"\"\"\n[retry]\n\"\"\"\n[retry]\n", "retry"), None);
        assert_eq!(at("d = '''\n[retry]\n'''\n[retry]\n[retry]\n", "retry"), header(4));
        assert_eq!(at("retry.base = \"1s\"\n[retry]\n", "retry"), by(1, "the dotted key `retry.base`"));
        assert_eq!(at("retry = { base = \"1s\" }\n[retry]\n", "retry"), by(1, "`retry = ...`"));
        assert_eq!(at("[a]\nretry.base = 1\n[retry]\n", "retry"), None);
        // Each `[[traffic]]` starts a new element: only the last one's
        // dotted key set its retry table.
        let list = "[[traffic]]\nretry.base = 1\n[[traffic]]\nx = 1\nretry . \"max\" = 2\n[traffic.retry]\n";
        assert_eq!(at(list, "traffic.retry"), by(5, "the dotted key `retry.max`"));
        assert_eq!(at("[[traffic]]\nretry.base = 1\n[[traffic]]\n[traffic.retry]\n", "traffic.retry"), None);
        // A key inside a table below the one named reaches it only through
        // that table: `[nodes]` then `balance.x`.
        assert_eq!(
            at("[nodes]\nbalance.x = 1\n[nodes.balance]\n", "nodes.balance"),
            by(2, "the dotted key `balance.x`")
        );
    }

    #[derive(serde::Deserialize)]
    struct Bounded {
        n: Whole,
    }

    /// A bounded key keeps the number as written past i64, so its own
    /// range can be given; a string is still a type error in plain words.
    #[test]
    fn whole_numbers_past_i64() {
        let n =
            |text: &str| toml::from_str::<Bounded>(text).map(|b| b.n.0).map_err(|e| e.message().to_string());
        assert_eq!(n("n = 5"), Ok(5));
        assert_eq!(n("n = -3"), Ok(-3));
        assert_eq!(n("n = 9223372036854775807"), Ok(i128::from(i64::MAX)));
        assert_eq!(n("n = 99999999999999999999"), Ok(99_999_999_999_999_999_999));
        assert_eq!(n("n = -99999999999999999999"), Ok(-99_999_999_999_999_999_999));
        assert_eq!(n("n = \"3\"").unwrap_err(), "invalid type: string \"3\", expected a whole number");
        // Past i64 but within u64: the same words as past u64.
        #[derive(Debug, serde::Deserialize)]
        struct Signed {
            #[allow(dead_code)]
            n: i64,
        }
        for big in ["9223372036854775808", "18446744073709551615", "99999999999999999999"] {
            let e = toml::from_str::<Signed>(&format!("n = {big}")).unwrap_err();
            assert_eq!(
                plain_types(e.message()),
                format!("{big} is too large: expected a whole number up to 9223372036854775807")
            );
        }
        let long = format!("n = {}", "9".repeat(46));
        assert_eq!(
            plain_types(&n(&long).unwrap_err()),
            "too many digits: a whole number here is at most 9223372036854775807"
        );
    }

    #[derive(serde::Deserialize)]
    struct AnyValue {
        v: Spanned<Loose>,
    }

    /// A loose value keeps integers past i64 and the place of each item.
    #[test]
    fn loose_values_keep_big_integers_and_item_places() {
        let read = |text: &str| toml::from_str::<AnyValue>(text).map(|a| a.v).map_err(|e| e.to_string());
        let v = read("v = { weights = [18446744073709551615, 1.5, \"x\"] }").unwrap();
        let Loose::Table(t) = v.get_ref() else { panic!("{v:?}") };
        assert_eq!(t[0].0, "weights");
        let Loose::List(items) = t[0].1.get_ref() else { panic!("{t:?}") };
        assert_eq!(items[0].get_ref(), &Loose::Int(18_446_744_073_709_551_615));
        assert_eq!(items[1].get_ref(), &Loose::Float(1.5));
        assert_eq!(items[1].span(), 39..42);
        assert_eq!(v.get_ref().to_string(), "{ weights = [18446744073709551615, 1.5, \"x\"] }");
        for (text, shown) in
            [("v = 1.0", "1.0"), ("v = nan", "nan"), ("v = -inf", "-inf"), ("v = true", "true")]
        {
            assert_eq!(read(text).unwrap().get_ref().to_string(), shown);
        }
        assert_eq!(read("v = 1979-05-27").unwrap().get_ref().to_string(), "1979-05-27");
    }

    #[test]
    fn did_you_mean() {
        let m = "unknown field `requsts`, expected `requests` or `window`";
        assert_eq!(suggest(m), format!("{m}; did you mean `requests`?"));
        assert_eq!(unknown_field(m), Some(("requsts", vec!["requests", "window"])));
        assert!(!suggest("unknown field `zzz`, expected `requests` or `window`").contains("did you"));
        assert_eq!(nearest("brust", &["burst", "csv"], 3), Some("burst"));
        assert_eq!(nearest("xxxxxxx", &["burst", "csv"], 3), None);
    }
}
