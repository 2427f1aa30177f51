//! How messages show what a user wrote: text from a scenario (a value, a
//! key, a path) and numbers. Text is quoted the way trace errors quote a
//! field ([`crate::trace::quoted`]: whole up to 64 bytes, else its first 40
//! and its length), so that no input makes a long message; what would not
//! print as itself (control characters, zero-width and bidirectional
//! formatting characters) is written as a Rust escape (`\u{1b}`), as trace
//! errors do ([`crate::trace::escape_controls`]), so that no input reaches
//! the terminal as a control sequence or reads as other text.

use std::borrow::Cow;

/// Text longer than this many bytes is shown by its start.
const SHOWN_BYTES: usize = 64;

/// How many bytes of a long text are shown.
const CUT_BYTES: usize = 40;

/// Whether `c` would not show as itself: a control character (an escape
/// sequence, a NUL, a line break), or what Rust's `Debug` escapes as not
/// printable: formatting characters such as U+200B ZERO WIDTH SPACE and
/// the bidirectional overrides, separators, unassigned code points. A
/// combining mark after a letter prints with it and is kept.
fn hidden(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    if c.is_control() {
        return true;
    }
    let mut probe = String::from("a");
    probe.push(c);
    probe.escape_debug().nth(1) == Some('\\')
}

/// `text` with every character that would not show as itself written as
/// a Rust escape (`\u{1b}`, `\u{0}`, `\t`, `\u{200b}`).
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// `text`, or its first 40 bytes (whole characters) and `...` when it is
/// longer than 64, with the length in bytes for the caller to give.
fn cut(text: &str) -> (&str, Option<usize>) {
    if text.len() <= SHOWN_BYTES {
        return (text, None);
    }
    let end = (0..=CUT_BYTES).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    (&text[..end], Some(text.len()))
}

/// `text` in backticks, escaped, cut when long: `` `1\u{1b}[2Js` ``,
/// `` `xxxx...` (100000 bytes) ``. For keys and for values quoted in
/// backticks.
pub fn code(text: &str) -> String {
    match cut(text) {
        (t, None) => format!("`{}`", escape(t)),
        (t, Some(len)) => format!("`{}...` ({len} bytes)", escape(t)),
    }
}

/// `text` in double quotes as TOML writes a string (`"` and `\` escaped),
/// escaped and cut when long: `"b\u{1b}[31murst"`, `"xxxx..." (100000
/// bytes)`. For values shown as they would be written.
pub fn string(text: &str) -> String {
    let (t, len) = cut(text);
    let mut out = String::with_capacity(t.len() + 2);
    out.push('"');
    for c in t.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if hidden(c) => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    match len {
        None => out.push('"'),
        Some(len) => out.push_str(&format!("...\" ({len} bytes)")),
    }
    out
}

/// Two counts in [`about`]'s notation, `more` past `most`, each written
/// whole when that notation would show them equal (1.0007e11 and
/// 1.00001e11 both read "1e11").
pub fn about_apart(more: u128, most: u128) -> (String, String) {
    let (a, b) = (about(more as f64), about(most as f64));
    if a == b { (more.to_string(), most.to_string()) } else { (a, b) }
}

/// A file's path as it is, escaped but whole (a message names the file to
/// open): for the scenario's and a trace's path in errors.
pub fn path(path: &std::path::Path) -> String {
    escape(&path.to_string_lossy()).into_owned()
}

/// `text` as it is (no quotes), escaped and cut when long: for paths.
pub fn plain(text: &str) -> String {
    match cut(text) {
        (t, None) => escape(t).into_owned(),
        (t, Some(len)) => format!("{}... ({len} bytes)", escape(t)),
    }
}

/// A number as written: digits for everyday magnitudes (`0.5`, `3`,
/// `1000000000`), shortest exponent form far from them (`5e-324`,
/// `1e300`), where plain digits would run to hundreds; `inf`, `NaN`.
pub fn number(x: f64) -> String {
    let magnitude = x.abs();
    if !x.is_finite() || x == 0.0 || (1e-4..1e16).contains(&magnitude) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// An estimate, like a count of requests: three significant digits in
/// exponent form (`1.84e14`, `2e12`), `inf` when it overflowed.
pub fn about(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let rounded: f64 = format!("{x:.2e}").parse().unwrap_or(x);
    format!("{rounded:e}")
}

/// The key nearest to a misspelt `unknown` one, if it is near enough:
/// within 2 edits, or a third of the key's length for long keys. The
/// "did you mean" of a scenario's keys, and of a trace header's columns.
/// A key longer than a message shows whole ([`code`]) is none's nearest,
/// and one whose length differs by more than the edits allowed is not
/// measured: a header column of megabytes, or a key of 100 000 letters,
/// costs no more than a short one.
pub fn nearest_key<'c>(unknown: &str, keys: &[&'c str]) -> Option<&'c str> {
    let length = unknown.chars().count();
    keys.iter()
        .filter(|c| c.len() <= SHOWN_BYTES)
        // The difference in length is the fewest edits there can be.
        .filter(|c| c.chars().count().abs_diff(length) <= 2.max(c.len() / 3))
        .map(|c| (strsim::levenshtein(unknown, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min()
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_escaped_and_letters_kept() {
        assert_eq!(escape("1\u{1b}[2Js"), "1\\u{1b}[2Js");
        assert_eq!(escape("1\0s\t"), "1\\u{0}s\\t");
        assert_eq!(escape("1\u{200b}s"), "1\\u{200b}s");
        assert_eq!(escape("a\u{202e}b\u{feff}"), "a\\u{202e}b\\u{feff}");
        for kept in ["边界突发", "é", "e\u{301}", "µs", "a`b\"c\\d'", "кинд"] {
            assert_eq!(escape(kept), kept);
        }
    }

    /// Within 2 edits, or a third of a long key; long text is not
    /// measured, whatever its length.
    #[test]
    fn nearest_key_is_near_and_cheap() {
        assert_eq!(nearest_key("requsts", &["requests", "window"]), Some("requests"));
        assert_eq!(nearest_key("tme", &["tme2", "time"]), Some("time"));
        assert_eq!(nearest_key("sycn_intervals", &["sync_intervals"]), Some("sync_intervals"));
        assert_eq!(nearest_key("xyz", &["requests"]), None);
        let huge = "x".repeat(20_000_000);
        assert_eq!(nearest_key("time", &[&huge, "tim"]), Some("tim"));
        assert_eq!(nearest_key(&huge, &["time", &huge]), None);
    }

    #[test]
    fn long_text_is_cut() {
        let long = "x".repeat(100_000);
        assert_eq!(code(&long), format!("`{}...` (100000 bytes)", "x".repeat(40)));
        assert_eq!(string(&long), format!("\"{}...\" (100000 bytes)", "x".repeat(40)));
        assert_eq!(plain(&long), format!("{}... (100000 bytes)", "x".repeat(40)));
        let short = "y".repeat(64);
        assert_eq!(code(&short), format!("`{short}`"));
        // Whole characters only.
        let wide = "é".repeat(40);
        assert_eq!(code(&wide), format!("`{}...` (80 bytes)", "é".repeat(20)));
        assert_eq!(string("a\"b\\c\u{1b}"), "\"a\\\"b\\\\c\\u{1b}\"");
    }

    #[test]
    fn numbers_are_compact() {
        assert_eq!(number(5e-324), "5e-324");
        assert_eq!(number(1e300), "1e300");
        assert_eq!(number(1e9), "1000000000");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(f64::INFINITY), "inf");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(-2.5e-7), "-2.5e-7");
        assert_eq!(about(1.8446744073709553e14), "1.84e14");
        assert_eq!(about(2e12), "2e12");
        assert_eq!(about(f64::INFINITY), "inf");
    }
}
