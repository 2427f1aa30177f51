//! Every row of docs/errors.md: a bad input, the exit code it gets and the
//! words its message must contain. Scenario and trace errors are checked
//! through both `ratesim check` and `ratesim run`, which must agree and must
//! not create the output directory.

use std::fs;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command as StdCommand, Stdio};

use assert_cmd::Command;
use tempfile::TempDir;

mod common;

/// The scenario every error row changes (docs/errors.md shows it).
const BASE: &str = common::ERROR_BASE;

const CSV_BASE: &str = r#"name = "t"

[limit]
requests = 10
window = "1s"

[[traffic]]
kind = "csv"
path = "trace.csv"
"#;

/// A temporary folder holding `s.toml` and any other files.
struct Case {
    dir: TempDir,
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Case {
    fn new(scenario: &str) -> Case {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("s.toml"), scenario).unwrap();
        Case { dir }
    }

    fn file(self, name: &str, bytes: impl AsRef<[u8]>) -> Case {
        fs::write(self.dir.path().join(name), bytes).unwrap();
        self
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Every file under `name`, with its bytes.
    fn snapshot(&self, name: &str) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
        common::snapshot(&self.path(name))
    }

    /// The text of `s.toml`.
    fn scenario_text(&self) -> String {
        fs::read_to_string(self.path("s.toml")).unwrap()
    }

    fn run(&self, args: &[&str]) -> Out {
        let out = Command::new(assert_cmd::cargo::cargo_bin!("ratesim"))
            .current_dir(self.dir.path())
            .args(args)
            .env_remove("RUST_BACKTRACE")
            .output()
            .unwrap();
        Out {
            code: out.status.code().expect("exited, not killed"),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Runs and asserts a readable failure: exit code, `error:` first, the
    /// words, no panic, no backtrace, nothing on stdout.
    fn fails(&self, args: &[&str], code: i32, words: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(out.code, code, "exit code of {args:?}; stderr:\n{}", out.stderr);
        assert!(out.stdout.is_empty(), "stdout of {args:?}: {}", out.stdout);
        assert!(out.stderr.starts_with("error: ") || out.stderr.starts_with("error:"), "{}", out.stderr);
        assert!(!out.stderr.contains("panicked") && !out.stderr.contains("backtrace"), "{}", out.stderr);
        for w in words {
            assert!(out.stderr.contains(w), "{args:?}: missing {w:?} in:\n{}", out.stderr);
        }
        dump(args, code, &out.stderr);
        out.stderr
    }

    /// `refused`, returning the message.
    fn refused_with(&self, words: &[&str]) -> String {
        self.refused(words);
        self.fails(&["check", "s.toml"], 1, words)
    }

    /// `check` and `run` both refuse with exit 1, and no output appears.
    fn refused(&self, words: &[&str]) {
        let a = self.fails(&["check", "s.toml"], 1, words);
        let b = self.fails(&["run", "s.toml", "--out", "out"], 1, words);
        assert!(!self.path("out").exists(), "a refused run wrote output");
        // run adds context around a failed trace; the scenario message is the same.
        assert!(
            b.contains(
                a.lines()
                    .last()
                    .unwrap()
                    .trim_start_matches("error: ")
                    .trim_start_matches("caused by: ")
                    .trim()
            ),
            "{a}\n---\n{b}"
        );
    }
}

/// With `RATESIM_ERRORS_DUMP=FILE`, appends `test \t args \t code \t stderr`
/// lines: the raw material of docs/errors.md, so the table shows real output.
fn dump(args: &[&str], code: i32, stderr: &str) {
    use std::io::Write;
    let Ok(path) = std::env::var("RATESIM_ERRORS_DUMP") else { return };
    let test = std::thread::current().name().unwrap_or("?").to_string();
    let line = format!("{test}\t{}\t{code}\t{}\n", args.join(" "), stderr.trim_end().replace('\n', "\\n"));
    let mut f = fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
    f.write_all(line.as_bytes()).unwrap();
}

/// The ids of `text`: a letter prefix and digits (`s01`, `lb09`) at the
/// start of each match of `before`, up to `after`.
fn ids(text: &str, before: &str, after: char) -> std::collections::BTreeSet<String> {
    text.match_indices(before)
        .filter_map(|(at, _)| {
            let rest = &text[at + before.len()..];
            let id = &rest[..rest.find(after)?];
            let letters = id.trim_end_matches(|c: char| c.is_ascii_digit());
            let ok = !letters.is_empty()
                && letters.len() < id.len()
                && letters.bytes().all(|b| b.is_ascii_lowercase());
            ok.then(|| id.to_string())
        })
        .collect()
}

/// docs/errors.md and this file list the same cases: every row of its
/// tables has a test here named by its id, and every test here named by an
/// id is a row there or named in its text (the "also tested" lists).
#[test]
fn every_row_of_errors_md_is_a_test_and_back() {
    let doc = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/errors.md")).unwrap();
    let rows = ids(&doc, "\n| `", '`');
    let named = ids(&doc, "`", '`');
    // Output, trace and run errors of the output module's own tests too.
    let tests =
        ids(concat!(include_str!("cli_errors.rs"), include_str!("cli_output_errors.rs")), "\nfn ", '_');
    assert!(rows.len() > 200 && tests.len() > 200, "{} rows, {} tests", rows.len(), tests.len());
    let untested: Vec<_> = rows.difference(&tests).collect();
    assert!(untested.is_empty(), "rows of docs/errors.md with no test here: {untested:?}");
    let undocumented: Vec<_> = tests.difference(&named).collect();
    assert!(undocumented.is_empty(), "tests here that docs/errors.md does not name: {undocumented:?}");
    // The rows are changes to `BASE`, which the page shows: the same text,
    // so its line and column numbers are the messages'.
    let shown = doc.split("```toml\n").nth(1).and_then(|b| b.split("```").next());
    assert_eq!(shown, Some(BASE), "docs/errors.md's first TOML block must be BASE");
}

fn with(old: &str, new: &str) -> String {
    assert!(BASE.contains(old), "{old}");
    BASE.replacen(old, new, 1)
}

const BURST: &str = "kind = \"burst\"\nstart = \"100ms\"\nspan = \"10ms\"\ncount = 20";

fn with_traffic(new: &str) -> String {
    with(BURST, new)
}

// ---- scenario errors --------------------------------------------------------

#[test]
fn s01_toml_syntax_error() {
    // An unclosed string is reported where it was opened.
    Case::new(&with("window = \"1s\"", "window = \"1s")).refused(&[
        "error: s.toml:6:10: `limit.window`: the string opened here is not closed: end it with `\"` before the line ends (a string over several lines goes between `\"\"\"`)\n",
    ]);
    Case::new(&with("window = \"1s\"", "window = '1s")).refused(&[
        "error: s.toml:6:10: `limit.window`: the string opened here is not closed: end it with `'` before the line ends (a string over several lines goes between `'''`)\n",
    ]);
    Case::new(&with("window = \"1s\"", "window = \"\"\"1s")).refused(&[
        "error: s.toml:6:10: `limit.window`: the multi-line string opened here is not closed: end it with `\"\"\"`\n",
    ]);
    Case::new(&with("count = 20", "\"count = 20"))
        .refused(&["error: s.toml:12:1: the quoted key opened here is not closed: end it with `\"`\n"]);
}

#[test]
fn s96_list_or_inline_table_left_open() {
    Case::new(&with("slots = [2, 10]", "slots = [2, 10")).refused(&[
        "error: s.toml:16:9: `limiter[0].slots`: the list opened here is not closed: end it with `]` (the file ends inside it)\n",
    ]);
    Case::new(&with("count = 20", "count = [20")).refused(&[
        "error: s.toml:12:9: `traffic[0].count`: the list opened here is not closed: end it with `]` (everything up to line 14 was read as part of it)\n",
    ]);
    Case::new(&with("count = 20", "count = 20\nretry = { policy = \"fixed\"")).refused(&[
        "error: s.toml:13:9: `traffic[0].retry`: the inline table opened here is not closed: end it with `}` (everything up to line 15 was read as part of it)\n",
    ]);
}

#[test]
fn s97_comma_missing_in_a_list_or_inline_table() {
    Case::new(&with("slots = [2, 10]", "slots = [\n  2\n  10\n]")).refused(&[
        "error: s.toml:18:3: `limiter[0].slots`: a `,` is missing between two items of the list: separate them with commas, [a, b]\n",
    ]);
    Case::new(&with("count = 20", "count = 20\nretry = { policy = \"fixed\" base = \"1s\" }")).refused(&[
        "error: s.toml:13:28: `traffic[0].retry`: a `,` is missing between two keys of the inline table: separate them with commas, { a = 1, b = 2 }\n",
    ]);
}

#[test]
fn s99_a_number_the_parser_cannot_read() {
    // At the number's start, whole, wherever reading it stopped.
    Case::new(&with("count = 20", "count = 2.0.1")).refused(&[
        "error: s.toml:12:9: `traffic[0].count`: `2.0.1` is not a number: write it like 20, 2.5 or 1e6\n",
    ]);
    for bad in ["1e", ".5", "5.", "0x1G"] {
        Case::new(&with("count = 20", &format!("count = {bad}"))).refused(&[&format!(
            "error: s.toml:12:9: `traffic[0].count`: `{bad}` is not a number: write it like 20, 2.5 or 1e6\n"
        )]);
    }
    Case::new(&with("slots = [2, 10]", "slots = [2, 1.0.1]")).refused(&[
        "error: s.toml:16:13: `limiter[0].slots`: `1.0.1` is not a number: write it like 20, 2.5 or 1e6\n",
    ]);
    Case::new(&with("count = 20", "count = 20\nretry = { policy = \"fixed\", base = \"1s\", budget = 0.1.2 }")).refused(&[
        "error: s.toml:13:51: `traffic[0].retry.budget`: `0.1.2` is not a number: write it like 20, 2.5 or 1e6\n",
    ]);
}

#[test]
fn s100_a_backslash_that_starts_no_escape() {
    Case::new(&with_traffic("kind = \"csv\"\npath = \"C:\\data\\t.csv\"")).refused(&[
        "error: s.toml:10:12: `traffic[0].path`: `\\d` is not an escape: in a string in double quotes a backslash starts one (\\n, \\t, \\\\, \\\", \\u00e9); write \\\\ for a backslash, or put the string in single quotes, where backslashes stay as written ('C:\\traces\\a.csv')\n",
    ]);
}

#[test]
fn s101_a_string_with_no_opening_quote() {
    Case::new(&with("kind = \"burst\"", "kind = burst\"")).refused(&[
        "error: s.toml:9:8: `traffic[0].kind`: `burst\"` has no opening quote: write \"burst\"\n",
    ]);
    Case::new(&with("kind = \"burst\"", "kind = burst'"))
        .refused(&["error: s.toml:9:8: `traffic[0].kind`: `burst'` has no opening quote: write 'burst'\n"]);
}

#[test]
fn s102_a_number_in_a_form_toml_refuses() {
    for (bad, how) in [
        ("020", "a number other than 0 does not start with 0: write 20 (an octal number is written 0o20)"),
        ("01.5", "a number other than 0 does not start with 0: write 1.5"),
        ("--5", "a number takes one sign at most, like -5 or +5"),
        (
            "-0x1f",
            "a hexadecimal, octal or binary number (0x, 0o, 0b) takes no sign: write 0x1f, or -31 in decimal",
        ),
        ("0X10", "its prefix is written in lowercase (0x, 0o, 0b): write 0x10"),
        ("0d10", "a decimal number takes no prefix: write 10"),
    ] {
        Case::new(&with("count = 20", &format!("count = {bad}")))
            .refused(&[&format!("error: s.toml:12:9: `traffic[0].count`: `{bad}` is not a number: {how}\n")]);
    }
}

#[test]
fn s103_a_value_that_starts_like_a_date() {
    Case::new(&with("count = 20", "count = 1-2")).refused(&[
        "error: s.toml:12:9: `traffic[0].count`: `1-2` is not a value: it starts like a date (1979-05-27) or a time of day (07:32:00), which no key takes; write a number like 20, a duration in quotes like \"1s\", or quote a string, like \"1-2\"\n",
    ]);
}

#[test]
fn s104_a_comma_too_many() {
    Case::new(&with("slots = [2, 10]", "slots = [2,, 10]")).refused(&[
        "error: s.toml:16:12: `limiter[0].slots`: two `,` with nothing between them in the list: remove one (it is written [a, b])\n",
    ]);
    Case::new(&with("slots = [2, 10]", "slots = [,2]")).refused(&[
        "error: s.toml:16:10: `limiter[0].slots`: a `,` before the first item of the list: remove it (it is written [a, b])\n",
    ]);
    Case::new(&with("count = 20", "count = 20\nretry = { policy = \"fixed\", base = \"1s\",, cap = \"2s\" }")).refused(&[
        "error: s.toml:13:41: `traffic[0].retry`: two `,` with nothing between them in the inline table: remove one (it is written { a = 1, b = 2 })\n",
    ]);
}

#[test]
fn s105_an_equals_sign_out_of_place_or_missing() {
    let retry = |inline: &str| with("count = 20", &format!("count = 20\nretry = {inline}"));
    Case::new(&retry("{ base = = \"1s\" }")).refused(&[
        "error: s.toml:13:18: `traffic[0].retry`: a second `=`: write key = value, like count = 20\n",
    ]);
    Case::new(&retry("{ base \"1s\" }")).refused(&[
        "error: s.toml:13:16: `traffic[0].retry`: expected `=` after the key `base`: write key = value, like { a = 1, b = 2 }\n",
    ]);
    Case::new(&retry("{ = \"1s\" }")).refused(&[
        "error: s.toml:13:11: `traffic[0].retry`: a `=` with no key before it: write key = value, like count = 20\n",
    ]);
    Case::new(&retry("{ base = }")).refused(&[
        "error: s.toml:13:18: `traffic[0].retry`: no value after `=`: give one, like 20, \"1s\" or [2, 10]\n",
    ]);
    Case::new(&retry("{ policy = \"fixed\" base = \"1s\" }")).refused(&[
        "error: s.toml:13:28: `traffic[0].retry`: a `,` is missing between two keys of the inline table: separate them with commas, { a = 1, b = 2 }\n",
    ]);
    // A `key = value` line in a list closed below it: not an unclosed
    // list, and named by the list's key.
    Case::new(&with("slots = [2, 10]", "slots = [\n  2,\n  x = 10,\n]")).refused(&[
        "error: s.toml:18:5: `limiter[0].slots`: a `=` inside a list: a list holds values, like [2, 10]; key = value pairs go in an inline table, { a = 1 }\n",
    ]);
    Case::new(&with("slots = [2, 10]", "slots = [2 = 10]")).refused(&[
        "error: s.toml:16:12: `limiter[0].slots`: a `=` inside a list: a list holds values, like [2, 10]; key = value pairs go in an inline table, { a = 1 }\n",
    ]);
}

#[test]
fn s106_a_key_that_is_not_one() {
    Case::new(&with("count = 20", "co$nt = 20")).refused(&[
        "error: s.toml:12:3: `co$nt` is not a key: a bare key holds ASCII letters, digits, `-` and `_`, not `$`; put any other key in quotes, like \"co$nt\"\n",
    ]);
    Case::new(&with("count = 20", "count. = 20")).refused(&[
        "error: s.toml:12:8: a dotted key with an empty part: put a name on each side of every `.`, like retry.base, or none at all\n",
    ]);
    Case::new(&with("[[limiter]]", "[[ ]]")).refused(&[
        "error: s.toml:14:4: a table header with no name: write one, like [limit] or [[traffic]]\n",
    ]);
}

/// A bad FIRST character of a bare key got the parser's words: the word
/// it starts was looked for from before the whitespace at the line's start.
#[test]
fn s112_a_key_whose_first_character_no_bare_key_holds() {
    Case::new(&with("count = 20", "$count = 20")).refused(&[
        "error: s.toml:12:1: `$count` is not a key: a bare key holds ASCII letters, digits, `-` and `_`, not `$`; put any other key in quotes, like \"$count\"\n",
    ]);
    Case::new(&with("count = 20", "\u{e9}count = 20")).refused(&[
        "error: s.toml:12:1: `\u{e9}count` is not a key: a bare key holds ASCII letters, digits, `-` and `_`, not `\u{e9}`; put any other key in quotes, like \"\u{e9}count\"\n",
    ]);
    Case::new(&with("count = 20", "count = 20\nretry = { $x = 1 }")).refused(&[
        "error: s.toml:13:11: `traffic[0].retry`: `$x` is not a key: a bare key holds ASCII letters, digits, `-` and `_`, not `$`; put any other key in quotes, like \"$x\"\n",
    ]);
}

/// A carriage return with no line feed after it (old Mac line ends, or a
/// stray one): said at the `\r`, where the parser pointed past it in its
/// own words.
#[test]
fn s113_a_lone_carriage_return() {
    let cr = "a carriage return (\\r, U+000D) with no line feed after it: TOML ends a line with \\n or \\r\\n, and a lone \\r (the line ends of old Macs, or a stray one) is neither: save the file with LF or CRLF line ends, or remove it\n";
    Case::new(&with("count = 20", "count = 20\rspan2 = 1"))
        .refused(&[&format!("error: s.toml:12:11: `traffic[0].count`: {cr}")]);
    // In a comment and in a multi-line string (old Mac line ends
    // throughout are s120's).
    Case::new(&with("count = 20", "count = 20 # x\ry"))
        .refused(&[&format!("error: s.toml:12:15: `traffic[0].count`: {cr}")]);
    Case::new(&with("name = \"t\"", "name = \"\"\"t\rx\"\"\""))
        .refused(&[&format!("error: s.toml:1:12: `name`: {cr}")]);
    // In a key and in a table header, where the parser stopped with the
    // words for those: `` expected `=` after the key `count` ``, `` the table
    // header `[limit\r]` is not closed ``.
    Case::new(&with("count = 20", "count\r= 20"))
        .refused(&[&format!("error: s.toml:12:6: `traffic[0].count`: {cr}")]);
    Case::new(&with("[limit]", "[limit\r]")).refused(&[&format!("error: s.toml:4:7: {cr}")]);
    Case::new(&with("[[limiter]]", "[[limiter\r]]")).refused(&[&format!("error: s.toml:14:10: {cr}")]);
}

/// A file with old Mac line ends (`\r` alone, no `\n` anywhere) was
/// reported at its first `\r`, 1:11, as if that one were stray: the whole
/// file is to convert.
#[test]
fn s120_old_mac_line_ends() {
    let mac = "error: s.toml: the file ends its lines with a carriage return alone (\\r, the line ends of old Macs), which TOML does not take: it ends a line with \\n or \\r\\n; convert the file to LF or CRLF line ends\n";
    Case::new(&BASE.replace('\n', "\r")).refused(&[mac]);
    // Starting with a comment or a table header, and after a byte order
    // mark.
    Case::new(&format!("# a scenario\r{}", BASE.replace('\n', "\r"))).refused(&[mac]);
    Case::new(&format!("\u{feff}[limit]\rrequests = 10\r{}", BASE.replace('\n', "\r"))).refused(&[mac]);
    // One line end of a line, or a stray `\r` among LF line ends, is s113's.
    Case::new("name = \"t\"\r")
        .refused(&["error: s.toml:1:11: `name`: a carriage return (\\r, U+000D) with no line feed after it"]);
}

/// Lists and inline tables nested past the parser's 80 levels (in toml
/// 1.2; `max_nesting` asks the parser): said in
/// plain words at the bracket one level too deep (it once passed on
/// "cannot recurse further; max recursion depth met"); 80 levels parse.
#[test]
fn s114_nesting_too_deep() {
    // The parser's limit (80 in toml 1.2), asked of it as the message
    // asks it: the test follows a toml release that changes it.
    let most = ratesim::scenario::max_nesting();
    assert!((8..4096).contains(&most), "{most}");
    let deep = format!(
        "lists and inline tables nested more than {most} deep: the parser reads at most {most} levels, and a scenario needs two or three at most (like [{{ a = [1, 2] }}]); close them sooner\n"
    );
    let nested = |n: usize| format!("slots = {}{}", "[".repeat(n), "]".repeat(n));
    Case::new(&with("slots = [2, 10]", &nested(most + 1)))
        .refused(&[&format!("error: s.toml:16:{}: `limiter[0].slots`: {deep}", most + 9)]);
    let tables = |n: usize| format!("slots = {}1{}", "{ a = ".repeat(n), " }".repeat(n));
    Case::new(&with("slots = [2, 10]", &tables(most + 1)))
        .refused(&[&format!("error: s.toml:16:{}: `limiter[0].slots`: {deep}", 6 * most + 9)]);
    let pairs = most / 2 + 1;
    Case::new(&with(
        "count = 20",
        &format!("count = 20\nretry = {}{}", "[{ a = ".repeat(pairs), " }]".repeat(pairs)),
    ))
    .refused(&[&format!("`traffic[0].retry`: {deep}")]);
    // The most levels are read, and met as a type error.
    Case::new(&with("slots = [2, 10]", &nested(most)))
        .refused(&["error: s.toml:16:10: `limiter[0].slots[0]`: expected a whole number, found a list\n"]);
}

#[test]
fn s107_an_escape_cut_short_or_a_control_character() {
    Case::new(&with_traffic("kind = \"csv\"\npath = \"\\u12.csv\"")).refused(&[
        "error: s.toml:10:13: `traffic[0].path`: `\\u12` is not a whole escape: \\u takes 4 hexadecimal digits and \\U 8, like \\u00e9 or \\U0001F600\n",
    ]);
    Case::new(&with_traffic("kind = \"csv\"\npath = \"t\u{1}.csv\"")).refused(&[
        "error: s.toml:10:10: `traffic[0].path`: a control character (U+0001) in a string: remove it, or write it as an escape in a string in double quotes (\\u0001)\n",
    ]);
    Case::new(&with("count = 20", "count = 20 # \u{7f}")).refused(&[
        "error: s.toml:12:14: `traffic[0].count`: a control character (U+007F) in a comment: remove it\n",
    ]);
}

#[test]
fn s98_a_closing_bracket_or_an_equals_sign_out_of_place() {
    Case::new(&with("count = 20", "count = 20]")).refused(&[
        "error: s.toml:12:11: `traffic[0].count`: a `]` after the value closes no list: remove it (a list is written [a, b])\n",
    ]);
    Case::new(&with("count = 20", "count = 20}")).refused(&[
        "error: s.toml:12:11: `traffic[0].count`: a `}` after the value closes no inline table: remove it (an inline table is written { a = 1, b = 2 })\n",
    ]);
    Case::new(&with("count = 20", "= 20"))
        .refused(&["error: s.toml:12:1: a `=` with no key before it: write key = value, like count = 20\n"]);
}

#[test]
fn s02_unknown_key_near_miss() {
    Case::new(&with("requests = 10", "requsts = 10")).refused(&[
        "s.toml:5:1:",
        "unknown field `requsts` in `limit`,",
        "did you mean `requests`?",
    ]);
}

#[test]
fn s03_unknown_table() {
    Case::new(&with("[limit]", "[limt]")).refused(&[
        "s.toml:4:2:",
        "unknown field `limt`",
        "did you mean `limit`?",
    ]);
}

#[test]
fn s04_key_of_another_kind() {
    Case::new(&with("count = 20", "count = 20\nrate = 5.0")).refused(&[
        "s.toml:13:1:",
        "`traffic[0].rate` is not a key of kind \"burst\"",
        "start, span, count",
    ]);
}

#[test]
fn s05_wrong_type_string_for_number() {
    Case::new(&with("requests = 10", "requests = \"ten\"")).refused(&[
        "s.toml:5:12:",
        "`limit.requests`",
        "expected a whole number, found the string \"ten\"",
    ]);
}

#[test]
fn s06_wrong_type_number_for_duration() {
    Case::new(&with("window = \"1s\"", "window = 5")).refused(&[
        "s.toml:6:10:",
        "`limit.window`",
        "expected a string, found the number 5 (a duration is a string with a unit, like \"1s\" or \"100ms\")",
    ]);
}

#[test]
fn s07_wrong_type_fraction_for_count() {
    Case::new(&with("count = 20", "count = 2.5")).refused(&[
        "s.toml:12:9:",
        "`traffic[0].count`",
        "expected a whole number, found the number 2.5",
    ]);
    Case::new(&with("count = 20", "count = 1e3")).refused(&[
        "error: s.toml:12:9: `traffic[0].count`: expected a whole number, found the number 1000.0 (`1e3` is a float in TOML: write the whole number 1000)\n",
    ]);
}

#[test]
fn s08_wrong_type_for_slots() {
    Case::new(&with("slots = [2, 10]", "slots = \"3\"")).refused(&[
        "s.toml:16:9:",
        "`limiter[0].slots`",
        "expected a whole number or a list of them (like 10 or [2, 10]), found the string \"3\"",
    ]);
    // A key that takes only a list says so.
    Case::new(&with("slots = [2, 10]", "slots = [2, 10]\n[sweep]\nmap_slots = 3"))
        .refused(&["`sweep.map_slots`", "expected a list (like [2, 10]), found the number 3"]);
}

/// The parser names only the second setting; the message finds the
/// first among the lines of the same table (CRLF line ends too).
#[test]
fn s09_duplicate_key() {
    Case::new(&with("name = \"t\"", "name = \"t\"\nname = \"u\""))
        .refused(&["s.toml:2:1: `name`: duplicate key: it is set already on line 1; give each key once"]);
    // `count` on line 12 of the [[traffic]] entry, again on line 14.
    Case::new(&with("count = 20", "count = 20\n# again\ncount = 30")).refused(&[
        "s.toml:14:1: `traffic[0].count`: duplicate key: it is set already on line 12; give each key once",
    ]);
    Case::new(&with("requests = 10", "requests = 10\nwindow = \"1s\"").replace('\n', "\r\n")).refused(&[
        "s.toml:7:1: `limit.window`: duplicate key: it is set already on line 6; give each key once",
    ]);
}

/// A key set twice inside an inline table: the message named the table
/// the key is in (`traffic[0].retry`), or nothing when the table was on a
/// line of a list of its own; it names the key, at the second one.
#[test]
fn s91_duplicate_key_in_an_inline_table() {
    Case::new(&with(
        "count = 20",
        "count = 20\nretry = { policy = \"fixed\", base = \"1s\", max_attempts = 2, base = \"2s\" }",
    ))
    .refused(&[
        "error: s.toml:13:60: `traffic[0].retry.base`: duplicate key: this inline table already sets `base`; give each key once\n",
    ]);
    Case::new(&format!(
        "{BASE}\n[sweep]\nretry_policies = [\n  {{ policy = \"none\" }},\n  {{ policy = \"fixed\", base = \"1s\", base = \"2s\", max_attempts = 2 }},\n]\n"
    ))
    .refused(&[
        "error: s.toml:21:36: `sweep.retry_policies[1].base`: duplicate key: this inline table already sets `base`; give each key once\n",
    ]);
    Case::new(&format!("{BASE}\n[nodes]\ncount = 2\nbalance = {{ weights = [1, 2], weights = [1, 1] }}\n")).refused(&[
        "error: s.toml:20:31: `nodes.balance.weights`: duplicate key: this inline table already sets `weights`; give each key once\n",
    ]);
    // A table broken over lines (TOML 1.1) once named `traffic[0].base`.
    Case::new(&with(
        "count = 20",
        "count = 20\nretry = {\n  policy = \"fixed\",\n  base = \"1s\",\n  max_attempts = 2,\n  base = \"2s\",\n}",
    ))
    .refused(&[
        "error: s.toml:17:3: `traffic[0].retry.base`: duplicate key: this inline table already sets `base`; give each key once\n",
    ]);
}

/// A value of the wrong type inside an inline table: the message named the
/// table (`traffic[0].retry`), which left out the duration hint its key
/// gets under a `[table]` header, or, broken over lines, `traffic[0].base`.
#[test]
fn s92_wrong_type_in_an_inline_table_names_its_key() {
    let hint = "(a duration is a string with a unit, like \"1s\" or \"100ms\")";
    Case::new(&with("count = 20", "count = 20\nretry = { policy = \"fixed\", base = 5, max_attempts = 2 }"))
        .refused(&[&format!(
            "error: s.toml:13:36: `traffic[0].retry.base`: expected a string, found the number 5 {hint}\n"
        )]);
    Case::new(&with(
        "count = 20",
        "count = 20\nretry = {\n  policy = \"fixed\",\n  base = 5,\n  max_attempts = 2,\n}",
    ))
    .refused(&[&format!(
        "error: s.toml:15:10: `traffic[0].retry.base`: expected a string, found the number 5 {hint}\n"
    )]);
    Case::new(&format!(
        "{BASE}\n[sweep]\nretry_policies = [\n  {{ policy = \"none\" }},\n  {{ policy = \"fixed\", base = 1, max_attempts = 2 }},\n]\n"
    ))
    .refused(&[&format!(
        "error: s.toml:21:30: `sweep.retry_policies[1].base`: expected a string, found the number 1 {hint}\n"
    )]);
    Case::new(&format!(
        "{BASE}\n[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1ms\"\noutage = [{{ start = 1, end = \"2s\" }}]\n"
    ))
    .refused(&[&format!(
        "error: s.toml:22:21: `nodes.outage[0].start`: expected a string, found the number 1 {hint}\n"
    )]);
}

/// A table written twice: the parser's "duplicate key" named no key.
#[test]
fn s64_table_written_twice() {
    Case::new(&format!("{BASE}\n[output]\nbin = \"10ms\"\n\n[output]\ndecisions = true\n")).refused(&[
        "s.toml:21:2: `output`: duplicate key: the table [output] is written a second time here (first on line 18); give all its keys under one [output] header",
    ]);
}

/// A table set above by a dotted key or a `key = value` line, then written
/// with a header: the parser's "duplicate key" is at the header, and the
/// message says what set the table first (it once said the header was
/// "written a second time").
#[test]
fn s93_table_set_by_a_key_then_by_a_header() {
    let dotted = with("duration = \"2s\"\n", "duration = \"2s\"\noutput.bin = \"10ms\"\n");
    Case::new(&format!("{dotted}\n[output]\ndecisions = true\n")).refused(&[
        "s.toml:19:2: `output`: duplicate key: the table [output] is set already on line 3, by the dotted key `output.bin`; give all its keys under one [output] header",
    ]);
    let inline = with("duration = \"2s\"\n", "duration = \"2s\"\noutput = { bin = \"10ms\" }\n");
    Case::new(&format!("{inline}\n[output]\ndecisions = true\n")).refused(&[
        "s.toml:19:2: `output`: duplicate key: the table [output] is set already on line 3, by `output = ...`; give all its keys under one [output] header",
    ]);
    // A source's own retry table, started by a dotted key in the source.
    Case::new(&format!("{}\n[traffic.retry]\nmax_attempts = 2\n", with("count = 20", "count = 20\nretry.policy = \"immediate\"")))
        .refused(&[
            "s.toml:19:10: `traffic.retry`: duplicate key: the table [traffic.retry] is set already on line 13, by the dotted key `retry.policy`; give all its keys under one [traffic.retry] header",
        ]);
    // A header written twice says where the first one is.
    Case::new(&format!("{BASE}\n[output]\nbin = \"10ms\"\n\n[output]\ndecisions = true\n")).refused(&[
        "s.toml:21:2: `output`: duplicate key: the table [output] is written a second time here (first on line 18); give all its keys under one [output] header",
    ]);
}

/// A dotted key that adds to what was set above as something it cannot
/// add to: a table with a header of its own (the parser said only
/// "duplicate key"), an inline table or a value (the parser's "cannot
/// extend value of type inline table with a dotted key").
#[test]
fn s94_dotted_key_into_what_is_set_above() {
    Case::new(&with_nodes("[nodes.balance]\nweights = [1, 1]\n\n[nodes]\ncount = 2\nbalance.x = 1\n")).refused(&[
        "s.toml:23:1: `nodes.balance.x`: duplicate key: the table [nodes.balance] has a header of its own on line 18, so a dotted key cannot add to it from another table; set `x` under [nodes.balance]",
    ]);
    Case::new(&with("count = 20", "count = 20\nretry = { policy = \"immediate\" }\nretry.max_attempts = 2")).refused(&[
        "s.toml:14:1: `traffic[0].retry.max_attempts`: `retry` is an inline table, set on line 13, and an inline table is complete as written: a dotted key cannot add to it; put `max_attempts` inside its braces",
    ]);
    Case::new(&with("count = 20", "count = 20\ncount.x = 1")).refused(&[
        "s.toml:13:1: `traffic[0].count.x`: `count` is set on line 12 to a value (a whole number), not a table: a dotted key cannot add `x` to it",
    ]);
    Case::new(&with("slots = [2, 10]", "slots = [2, 10]\nslots.x = 1")).refused(&[
        "s.toml:17:1: `limiter[0].slots.x`: `slots` is set on line 16 to a list, not a table: a dotted key cannot add `x` to it",
    ]);
}

/// More after a value or a table header on its line: the parser's
/// "unexpected key or value, expected newline, `#`" named neither what it
/// found nor what to write.
#[test]
fn s95_more_after_a_value_on_its_line() {
    Case::new(&with("kind = \"slot_counter\"", "kind = \"slot_counter\" slots = [2, 10]")).refused(&[
        "s.toml:15:23: `limiter[0].kind`: `slots` after the value: give each key = value a line of its own (a comment starts with #)",
    ]);
    Case::new(&with("start = \"100ms\"", "start = \"100ms\",")).refused(&[
        "s.toml:10:16: `traffic[0].start`: a `,` after the value: in a table each key = value goes on a line of its own (commas separate the items of a list, [a, b], or of an inline table, { a = 1, b = 2 })",
    ]);
    Case::new(&with("[limit]", "[limit] requests = 10")).refused(&[
        "s.toml:4:9: `requests` after the table header: a header stands on a line of its own (a comment starts with #)",
    ]);
}

#[test]
fn s10_missing_required_key() {
    // The top-level table's error is not about `duration`, the key on line 1.
    let text = Case::new(&with("name = \"t\"\n", "")).refused_with(&[
        "error: s.toml:1:1: missing field `name`: give the scenario a name, like name = \"burst_test\" (it names the output folder)\n",
    ]);
    assert!(!text.contains("`duration`"), "{text}");
}

/// A scenario with no [limit], or a [limit] without one of its keys, says
/// what to write (it said only "missing field `limit`").
#[test]
fn s121_missing_limit_table() {
    Case::new(&with("[limit]\nrequests = 10\nwindow = \"1s\"\n\n", "")).refused(&[
        "error: s.toml:1:1: missing field `limit`: add a [limit] table, the limit every limiter enforces: a line [limit], then requests = 100 and window = \"1s\" on lines of their own below it (100 requests per 1s)\n",
    ]);
    Case::new(&with("requests = 10\n", "")).refused(&[
        "error: s.toml:4:1: `limit`: missing field `requests`: give the most requests a window admits, like requests = 100\n",
    ]);
    Case::new(&with("window = \"1s\"\n", "")).refused(&[
        "error: s.toml:4:1: `limit`: missing field `window`: give the window's length, like window = \"1s\"\n",
    ]);
}

/// An empty file, or one of comments only, once said "missing field
/// `name`" at 1:1, as if the rest were there: now what a scenario needs.
#[test]
fn s115_an_empty_scenario() {
    let needs = "a scenario needs at least a `name`, a [limit] table with `requests` and `window`, and a [[traffic]] source (or a [sweep] table), like: name = \"t\", then [limit] with requests = 10 and window = \"1s\", then [[traffic]] with kind = \"burst\" and count = 20 (scenarios/ has complete examples)\n";
    Case::new("").refused(&[&format!("error: s.toml: the file is empty: {needs}")]);
    Case::new("\u{feff}\n  \n").refused(&[&format!("error: s.toml: the file is empty: {needs}")]);
    Case::new("# a scenario\n\n# to come\n")
        .refused(&[&format!("error: s.toml: the file has no keys, only comments and blank lines: {needs}")]);
    // What it names is enough.
    let least =
        "name = \"t\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[[traffic]]\nkind = \"burst\"\ncount = 20\n";
    let out = Case::new(least).run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// Two byte order marks were said to hold "only comments and blank
/// lines": the parser skips a mark at the start too, and showed nothing of
/// the second. It is named, where it is (an editor shows neither).
#[test]
fn s119_a_second_byte_order_mark() {
    let needs = "a scenario needs at least a `name`, a [limit] table with `requests` and `window`, and a [[traffic]] source (or a [sweep] table), like: name = \"t\", then [limit] with requests = 10 and window = \"1s\", then [[traffic]] with kind = \"burst\" and count = 20 (scenarios/ has complete examples)\n";
    let bom = "U+FEFF, an invisible character some editors write at the start of a file";
    Case::new("\u{feff}\u{feff}").refused(&[&format!(
        "error: s.toml:1:1: the file is empty but for a second byte order mark ({bom}): {needs}"
    )]);
    Case::new("\u{feff}\u{feff}\n# a scenario\n").refused(&[&format!(
        "error: s.toml:1:1: the file has no keys, only comments and blank lines, after a second byte order mark ({bom}): {needs}"
    )]);
    // A third (the parser skips the second), and one past the start,
    // which the parser took for a key: "expected `=` after the key
    // `\u{feff}`", at the column after it.
    Case::new(&format!("\u{feff}\u{feff}\u{feff}{BASE}")).refused(&[&format!(
        "error: s.toml:1:1: a second byte order mark ({bom}): a file starts with one at most; remove it\n"
    )]);
    Case::new(&format!("{BASE}\u{feff}\n")).refused(&[&format!(
        "error: s.toml:17:1: a byte order mark ({bom}) past the start of the file, where none belongs: remove it\n"
    )]);
}

#[test]
fn s11_requests_zero() {
    Case::new(&with("requests = 10", "requests = 0"))
        .refused(&["s.toml:5:12:", "`limit.requests` must be a whole number of at least 1, got 0"]);
}

#[test]
fn s12_integer_too_large() {
    Case::new(&with("requests = 10", "requests = 99999999999999999999")).refused(&[
        "s.toml:5:12:",
        "`limit.requests`: 99999999999999999999 is too large: expected a whole number up to 9223372036854775807",
    ]);
    // Too long for any integer the parser holds.
    Case::new(&with("requests = 10", &format!("requests = {}", "9".repeat(46)))).refused(&[
        "s.toml:5:12:",
        "`limit.requests`: too many digits: a whole number here is at most 9223372036854775807",
    ]);
}

/// From 2^63 to 2^64 - 1 the TOML reader hands over an unsigned number,
/// which once gave "invalid value: integer `N`, expected a whole number".
#[test]
fn s12_integer_past_i64_within_u64() {
    for n in ["9223372036854775808", "18446744073709551615"] {
        let too_large = format!("{n} is too large: expected a whole number up to 9223372036854775807");
        Case::new(&with("requests = 10", &format!("requests = {n}")))
            .refused(&["s.toml:5:12:", &format!("`limit.requests`: {too_large}")]);
        Case::new(&with("count = 20", &format!("count = {n}")))
            .refused(&["s.toml:12:9:", &format!("`traffic[0].count`: {too_large}")]);
        Case::new(&with("name = \"t\"", &format!("name = \"t\"\nseed = {n}")))
            .refused(&["s.toml:2:8:", &format!("`seed`: {too_large}")]);
        Case::new(&with_traffic(&format!("kind = \"poisson\"\nrate = 100.0\nclients = {n}")))
            .refused(&["s.toml:11:11:", &format!("`traffic[0].clients`: {too_large}")]);
    }
}

#[test]
fn s13_window_zero() {
    Case::new(&with("window = \"1s\"", "window = \"0s\""))
        .refused(&["s.toml:6:10:", "`limit.window` must be longer than 0, got \"0s\""]);
}

#[test]
fn s14_window_negative() {
    Case::new(&with("window = \"1s\"", "window = \"-1s\"")).refused(&[
        "s.toml:6:10:",
        "`limit.window`",
        "`-1s` is negative",
    ]);
}

/// The list names every unit taken (it left out `min` and `µs`), and a
/// unit in another case or spelt another common way gets the unit it
/// means.
#[test]
fn s15_duration_unknown_unit() {
    Case::new(&with("window = \"1s\"", "window = \"1 fortnight\"")).refused(&[
        "error: s.toml:6:10: `limit.window`: `1 fortnight` has an unknown unit `fortnight` (units: ns, us or µs, ms, s, m or min, h, d)\n",
    ]);
    for (window, unit, meant) in [
        ("1sec", "sec", "s` (seconds"),
        ("1S", "S", "s` (seconds"),
        ("1MS", "MS", "ms` (milliseconds"),
        ("2 seconds", "seconds", "s` (seconds"),
        ("1msec", "msec", "ms` (milliseconds"),
        ("1hr", "hr", "h` (hours"),
    ] {
        Case::new(&with("window = \"1s\"", &format!("window = \"{window}\""))).refused(&[&format!(
            "error: s.toml:6:10: `limit.window`: `{window}` has an unknown unit `{unit}` (units: ns, us or µs, ms, s, m or min, h, d); did you mean `{meant})?\n"
        )]);
    }
    // Any duration key.
    Case::new(&with("start = \"100ms\"", "start = \"100MS\"")).refused(&[
        "error: s.toml:10:9: `traffic[0].start`: `100MS` has an unknown unit `MS` (units: ns, us or µs, ms, s, m or min, h, d); did you mean `ms` (milliseconds)?\n",
    ]);
}

/// A number in exponent notation is named as one, not as a unit `e`.
#[test]
fn s46_duration_with_exponent() {
    Case::new(&with("window = \"1s\"", "window = \"1e30s\"")).refused(&[
        "s.toml:6:10:",
        "`limit.window`: `1e30s` is written with an exponent: write the number out in digits",
    ]);
}

#[test]
fn s16_duration_without_unit() {
    Case::new(&with("window = \"1s\"", "window = \"1000\"")).refused(&[
        "s.toml:6:10:",
        "`limit.window`",
        "`1000` is not a duration",
        "a number and a unit",
    ]);
    // A zero lacks its unit too, with a minus sign or without: `-0` was
    // called negative, where `0` was said to lack a unit (`-0s` is 0, s116).
    for zero in ["0", "-0", "-0.0"] {
        Case::new(&with("window = \"1s\"", &format!("window = \"{zero}\""))).refused(&[&format!(
            "error: s.toml:6:10: `limit.window`: `{zero}` is not a duration: expected a number and a unit, like \"10ms\", \"1s\", \"250us\", \"1m\" or \"1m30s\" (units: ns, us or µs, ms, s, m or min, h, d)\n"
        )]);
    }
    Case::new(&with("start = \"100ms\"", "start = \"-0\"")).refused(&[
        "error: s.toml:10:9: `traffic[0].start`: `-0` is not a duration: expected a number and a unit",
    ]);
}

#[test]
fn s17_duration_overflows() {
    Case::new(&with("duration = \"2s\"", "duration = \"99999999999h\"")).refused(&[
        "s.toml:2:12:",
        "`duration`",
        "too large",
        "584 years",
    ]);
}

#[test]
fn s18_start_plus_span_overflows() {
    Case::new(&with("start = \"100ms\"\nspan = \"10ms\"", "start = \"18446744073s\"\nspan = \"1s\""))
        .refused(&["s.toml:8:1:", "`traffic[0].start` + `span` is past the end of time"]);
}

#[test]
fn s19_slots_zero() {
    Case::new(&with("slots = [2, 10]", "slots = [2, 0]"))
        .refused(&["s.toml:16:13:", "`limiter[0].slots[1]` must be a whole number of at least 1, got 0"]);
}

#[test]
fn s20_slots_empty() {
    Case::new(&with("slots = [2, 10]", "slots = []"))
        .refused(&["s.toml:16:9:", "`limiter[0].slots` is empty"]);
}

#[test]
fn s21_more_slots_than_nanoseconds() {
    let text = with("window = \"1s\"", "window = \"10ns\"").replace("slots = [2, 10]", "slots = [2, 11]");
    Case::new(&text).refused(&[
        "s.toml:16:13:",
        "`limiter[0].slots[1]`: 11 slots is more than the window has nanoseconds (10)",
    ]);
}

#[test]
fn s22_rate_zero() {
    Case::new(&with_traffic("kind = \"constant\"\nrate = 0.0"))
        .refused(&["s.toml:10:8:", "`traffic[0].rate` must be a finite number above 0, got 0"]);
}

#[test]
fn s23_rate_negative() {
    Case::new(&with_traffic("kind = \"poisson\"\nrate = -3.0"))
        .refused(&["s.toml:10:8:", "`traffic[0].rate` must be a finite number above 0, got -3"]);
}

#[test]
fn s24_rate_nan() {
    Case::new(&with_traffic("kind = \"constant\"\nrate = nan"))
        .refused(&["s.toml:10:8:", "`traffic[0].rate` must be a finite number above 0, got NaN"]);
}

#[test]
fn s25_rate_infinite() {
    Case::new(&with_traffic("kind = \"poisson\"\nrate = inf"))
        .refused(&["s.toml:10:8:", "`traffic[0].rate` must be a finite number above 0, got inf"]);
}

#[test]
fn s26_load_too_high() {
    Case::new(&with_traffic("kind = \"poisson\"\nload = 1e300")).refused(&[
        "s.toml:10:8:",
        "`traffic[0].load` gives 1e301 requests/s, about 2e301 requests over [0 s, 2 s): a generated source may produce at most 1e9 requests",
    ]);
}

#[test]
fn s27_rate_would_run_forever() {
    Case::new(&with_traffic("kind = \"constant\"\nrate = 1e12")).refused(&[
        "s.toml:10:8:",
        "`traffic[0].rate` gives 1e12 requests/s, about 2e12 requests",
        "at most",
    ]);
}

#[test]
fn s28_count_too_large() {
    Case::new(&with("count = 20", "count = 1000000000000")).refused(&[
        "s.toml:12:9:",
        "`traffic[0].count` = 1000000000000 is too many",
        "at most 1000000000",
    ]);
}

#[test]
fn s29_end_before_start() {
    Case::new(&with_traffic("kind = \"constant\"\nstart = \"1s\"\nend = \"500ms\"\nrate = 5.0"))
        .refused(&["s.toml:11:7:", "`traffic[0].end` (0.5 s) must be after `start` (1 s)"]);
}

#[test]
fn s30_start_after_duration() {
    Case::new(&with_traffic("kind = \"constant\"\nstart = \"3s\"\nrate = 5.0")).refused(&[
        "s.toml:10:9:",
        "`traffic[0].start` (3 s) must be before the scenario's `duration` (2 s)",
    ]);
}

/// A burst at or after `duration` would lose every request, silently: it is
/// refused like the other sources (`s30`).
#[test]
fn s49_burst_start_at_or_after_duration() {
    for seconds in [3, 2] {
        Case::new(&with("start = \"100ms\"", &format!("start = \"{seconds}s\""))).refused(&[
            "s.toml:10:9:",
            &format!("`traffic[0].start` ({seconds} s) must be before the scenario's `duration` (2 s): the run drops every request at or after it, so this burst would send none"),
        ]);
    }
}

#[test]
fn s31_rate_without_end_or_duration() {
    let text = with_traffic("kind = \"constant\"\nrate = 5.0").replace("duration = \"2s\"\n", "");
    Case::new(&text)
        .refused(&["s.toml:7:1:", "`traffic[0].end` is required when the scenario has no `duration`"]);
}

#[test]
fn s32_unknown_traffic_kind() {
    Case::new(&with("kind = \"burst\"", "kind = \"brust\"")).refused(&[
        "s.toml:9:8:",
        "`traffic[0].kind` = \"brust\" is not known",
        "did you mean \"burst\"?",
    ]);
}

#[test]
fn s33_unknown_limiter_kind() {
    Case::new(&with("kind = \"slot_counter\"", "kind = \"token_buckit\"")).refused(&[
        "s.toml:15:8:",
        "`limiter[0].kind` = \"token_buckit\" is not known",
        "\"fixed_window\", \"slot_counter\", \"sliding_log\", \"gcra\", \"token_bucket\", \"leaky_bucket\", \"weighted_window\", \"guava\", \"leaky_queue\", \"go_rate\"",
        "did you mean \"token_bucket\"?",
    ]);
}

#[test]
fn s34_missing_trace_file() {
    Case::new(&with_traffic("kind = \"csv\"\npath = \"nope.csv\"")).refused(&[
        "s.toml:10:8:",
        "`traffic[0].path`",
        "nope.csv does not exist",
        "relative to the scenario file",
    ]);
}

#[test]
fn s35_trace_path_is_a_directory() {
    Case::new(&with_traffic("kind = \"csv\"\npath = \".\""))
        .refused(&["s.toml:10:8:", "is a directory, not a file"]);
}

/// The font a scenario names gets the trace path's check: a folder is said
/// to be one, not said not to exist. `--font` is checked by the same
/// function and says the same (it once said "cannot read font .", with
/// "Is a directory" as its cause).
#[test]
fn o08_font_path_is_a_directory() {
    Case::new(&format!("{BASE}\n[output]\nfont = \".\"\n")).refused(&[
        "s.toml:19:8:",
        "`output.font`: font file . is a directory, not a file (paths are relative to the scenario file)",
    ]);
    let c = Case::new(BASE);
    c.fails(
        &["run", "s.toml", "--out", "out", "--font", "."],
        1,
        &["error: cannot load the chart font\n  caused by: font file . is a directory, not a file\n"],
    );
    c.fails(
        &["run", "s.toml", "--out", "out", "--font", "nope.ttf"],
        1,
        &["error: cannot load the chart font\n  caused by: font file nope.ttf does not exist\n"],
    );
    assert!(!c.path("out").exists());
    if cfg!(unix) {
        Case::new(&format!("{BASE}\n[output]\nfont = \"/dev/null\"\n")).refused(&[
            "`output.font`: font file /dev/null is not a regular file (a device, pipe or socket): give a TrueType or OpenType font file (paths are relative to the scenario file)",
        ]);
    }
}

/// `[output] font` names a file that is no font: refused where the key is,
/// by `check` as by `run` (it once failed only when charts were drawn, with
/// no place in the scenario), whatever the chart formats: SVG charts are
/// laid out with the font's metrics too.
#[test]
fn o11_output_font_not_a_font() {
    let c = Case::new(&format!("{BASE}\n[output]\nfont = \"bad.ttf\"\n")).file("bad.ttf", b"junk");
    let message = "s.toml:19:8: `output.font`: bad.ttf is not a usable TrueType/OpenType font (paths are relative to the scenario file)";
    c.refused(&[message]);
    c.fails(&["run", "s.toml", "--out", "out", "--format", "svg"], 1, &[message]);
    assert!(!c.path("out").exists());
    // A real font is taken, and a run draws its PNGs with it.
    let c = Case::new(&format!("{BASE}\n[output]\nfont = \"good.ttf\"\n"))
        .file("good.ttf", dejavu::sans::regular());
    let out = c.run(&["run", "s.toml", "--out", "out", "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(c.path("out/timeline.png").is_file());
}

/// An empty `[output] font` once said "font file  does not exist" (no
/// name, two spaces); an empty trace `path` said the same of the trace.
#[test]
fn o12_output_font_empty() {
    Case::new(&format!("{BASE}\n[output]\nfont = \"\"\n")).refused(&[
        "s.toml:19:8: `output.font` is empty: give a TrueType or OpenType font file, like \"NotoSansSC-Regular.otf\", or leave the key out for the embedded DejaVu Sans",
    ]);
    Case::new(&with_traffic("kind = \"csv\"\npath = \"\""))
        .refused(&["s.toml:10:8: `traffic[0].path` is empty: give the trace file, like \"trace.csv\""]);
}

/// An `output.bin` too fine for a trace with no `duration` is found while
/// the trace is read; the error still names the key's place, the time the
/// trace reached, and a bin wide enough for it.
#[test]
fn s48_bin_too_fine_for_the_trace() {
    let c = Case::new(
        "name = \"x\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[output]\nbin = \"1ms\"\n\
         [[traffic]]\nkind = \"csv\"\npath = \"trace.csv\"\n[[limiter]]\nkind = \"fixed_window\"\n",
    )
    .file("trace.csv", "time\n0\n2000\n");
    let message = "s.toml:6:7: `output.bin` = \"1ms\" needs more than 1000000 bins to reach 2000 s, a time in the trace; choose a wider `bin` (at least \"10ms\" to reach it)";
    c.fails(
        &["run", "s.toml", "--out", "out"],
        1,
        &["error: scenario s.toml failed; nothing was written", &format!("caused by: {message}")],
    );
    assert!(!c.path("out").exists());
    // `check` reads the trace in full: it says the same (it once said ok).
    let e = c.fails(&["check", "s.toml"], 1, &[message]);
    assert_eq!(e.trim_end(), format!("error: {message}"));
    // Sorted in memory, the last row is the latest time.
    let sorted = c.scenario_text().replace("path = \"trace.csv\"", "path = \"trace.csv\"\nsort = true");
    Case::new(&sorted).file("trace.csv", "time\n2000\n0\n").fails(&["check", "s.toml"], 1, &[message]);
}

/// With no `duration` and clients that retry, the run goes on past its
/// last arrival: a bin too fine for the last retry (4 x 100 h after it) is
/// found while the run goes, and the error says the run reached that time,
/// not that the trace did. `check` cannot know when the last retry comes
/// (the retry_after policy's waits are the limiter's), so it passes.
#[test]
fn s88_bin_too_fine_for_retries_past_the_last_request() {
    let c = Case::new(
        "name = \"x\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[[traffic]]\nkind = \"burst\"\nstart = \"0s\"\ncount = 20\n\
         [[limiter]]\nkind = \"fixed_window\"\n[retry]\npolicy = \"fixed\"\nbase = \"100h\"\nmax_attempts = 5\n[output]\nbin = \"1ms\"\n",
    );
    c.fails(
        &["run", "s.toml", "--out", "out"],
        1,
        &["caused by: s.toml:16:7: `output.bin` = \"1ms\" needs more than 1000000 bins to reach 360000 s, a time the run reached (with no `duration` it lasts until its last retry or closed client's request); choose a wider `bin` (at least \"1s\" to reach it)"],
    );
    assert!(!c.path("out").exists());
}

/// With no `duration`, a generated source's last request is known from the
/// scenario: a bin too fine for it is refused by `check` and `run` alike,
/// naming the source (not "a time in the trace").
#[test]
fn s61_bin_too_fine_for_a_generated_source() {
    let head =
        "name = \"x\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[output]\nbin = \"1ms\"\n[[traffic]]\n";
    Case::new(&format!("{head}kind = \"burst\"\nstart = \"2000s\"\nspan = \"10ms\"\ncount = 20\n")).refused(&[
        "s.toml:6:7: `output.bin` = \"1ms\" needs more than 1000000 bins to cover `traffic[0]` (burst), which sends its last request at 2000.0095 s (with no `duration` the run lasts until its last request); choose a wider `bin` (at least \"10ms\" to reach it)",
    ]);
    let text = format!(
        "{head}kind = \"burst\"\ncount = 1\n[[traffic]]\nkind = \"poisson\"\nrate = 1.0\nstart = \"1s\"\nend = \"1500s\"\n"
    );
    Case::new(&text).refused(&[
        "s.toml:6:7: `output.bin` = \"1ms\" needs more than 1000000 bins to cover `traffic[1]` (poisson), which may send requests until 1500 s",
        "(at least \"2ms\" to reach it)",
    ]);
    // Up to the last bin is fine: 1000000 bins of 1 ms reach 999.999 s.
    let fits = Case::new(&format!("{head}kind = \"burst\"\nstart = \"999999ms\"\ncount = 1\n"));
    let out = fits.run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// A device or pipe is refused by name, not said not to exist.
#[cfg(unix)]
#[test]
fn s47_trace_path_is_a_device() {
    Case::new(&with_traffic("kind = \"csv\"\npath = \"/dev/null\"")).refused(&[
        "s.toml:10:8:",
        "`traffic[0].path`: trace file /dev/null is not a regular file (a device, pipe or socket): save the trace to a file",
    ]);
}

#[test]
fn s36_no_traffic() {
    let text = BASE.replace(&format!("[[traffic]]\n{BURST}\n"), "");
    Case::new(&text).refused(&["s.toml: no [[traffic]] source"]);
}

#[test]
fn s37_bin_too_fine() {
    Case::new(&with("[[traffic]]", "[output]\nbin = \"1ns\"\n\n[[traffic]]")).refused(&[
        "s.toml:9:7:",
        "`output.bin` = \"1ns\" cuts the 2s run into 2000000000 bins; the most is 1000000",
    ]);
}

/// The bin cap counts the timelines' columns: a fixed window on 50 nodes
/// keeps 52 (its lane, the reference's and one per node), so at most
/// 10^7 / 52 = 192 307 bins; 1 ms over 1000 s is 10^6 (it took 3 GB).
#[test]
fn s86_bin_too_fine_for_the_timelines_columns() {
    let text = with("duration = \"2s\"", "duration = \"1000s\"")
        .replace("kind = \"slot_counter\"\nslots = [2, 10]", "kind = \"fixed_window\"")
        + "\n[nodes]\ncount = 50\n\n[output]\nbin = \"1ms\"\n";
    Case::new(&text).refused(&[
        "s.toml:21:7: `output.bin` = \"1ms\" cuts the 1000s run into 1000000 bins; the most is 192307 (the timelines hold 52 columns, a limiter each and a node each of every limiter on nodes, and at most 10000000 cells): choose a wider `bin`",
    ]);
    let out = Case::new(&text.replace("bin = \"1ms\"", "bin = \"10ms\"")).run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// A table the scenario has one of, written as a list of tables: serde
/// read the list's first table as the table's first key ("`retry[0]`:
/// expected a string, found a table").
#[test]
fn s87_one_table_written_as_a_list() {
    Case::new(&format!("{BASE}\n[[retry]]\npolicy = \"none\"\n")).refused(&[
        "s.toml:18:1: `retry` is one table, not a list: write its header [retry] with single brackets (double brackets, or a list `[...]`, make a list of tables)",
    ]);
    Case::new(&format!("{BASE}\n[[nodes]]\ncount = 2\n"))
        .refused(&["s.toml:18:1: `nodes` is one table, not a list: write its header [nodes]"]);
    Case::new(&with("count = 20", "count = 20\nretry = [{ policy = \"none\" }]")).refused(&[
        "s.toml:13:10: `traffic[0].retry` is one table, not a list: write its header [traffic.retry]",
    ]);
}

/// A list set twice: `traffic = []` above, then a [[traffic]] header
/// (the parser said only "duplicate key").
#[test]
fn s89_list_set_twice() {
    let text = BASE.replace("name = \"t\"", "name = \"t\"\ntraffic = []");
    Case::new(&text).refused(&[
        "s.toml:9:3: `traffic`: duplicate key: [[traffic]] adds a table to the list `traffic`, but `traffic` is already set above (by `traffic = ...`, a dotted `traffic.key = ...` or a [traffic] table); give it one way only, as [[traffic]] tables",
    ]);
}

/// A dotted key of 200 parts: the parser gives up with "recursion limit"
/// and no place; the message says what it means, at the deepest key's
/// line (under `[[traffic]]`: 202 deep). A table header of 100 parts is
/// named itself, not the key under it.
#[test]
fn s90_keys_nested_too_deeply() {
    // The parser's limit (80 in toml 1.2), as the message says it.
    let most = ratesim::scenario::max_nesting();
    let parts = 2 * most + 40;
    let text = with("count = 20", &format!("count = 20\n{}y = 1", "x.".repeat(parts)));
    Case::new(&text).refused(&[&format!(
        "error: s.toml:13:1: keys nested too deeply to read: the parser reads at most about {most} levels of tables and dotted keys, and a scenario needs two or three (like traffic.retry.base); this line's key is {} deep: write it with fewer parts",
        parts + 2
    )]);
    let header = format!("{BASE}\n[{}a]\nb = 1\n", "a.".repeat(most + 19));
    Case::new(&header).refused(&[
        "error: s.toml:18:1: keys nested too deeply to read",
        &format!("this line's key is {} deep", most + 20),
    ]);
}

#[test]
fn s38_name_not_a_folder() {
    for name in ["a/b", "a b", "v1.2"] {
        Case::new(&with("name = \"t\"", &format!("name = \"{name}\""))).refused(&[
            "s.toml:1:8:",
            &format!("`name` = \"{name}\" cannot name an output folder: use letters, digits, `-` or `_`"),
        ]);
    }
}

#[test]
fn s39_negative_seed() {
    Case::new(&with("name = \"t\"", "name = \"t\"\nseed = -1"))
        .refused(&["s.toml:2:8:", "`seed` must be 0 or more"]);
}

#[test]
fn s40_scenario_not_utf8() {
    // Located at the first bad byte (it once said only "cannot read
    // scenario s.toml", caused by "stream did not contain valid UTF-8").
    let latin1 = "not UTF-8 text: a scenario is read as UTF-8 (this one may be saved as Latin-1 or Windows-1252); save it as UTF-8, or write the character as an escape in a string in double quotes, like \\u00e9 for \u{e9}\n";
    Case::new("")
        .file("s.toml", b"name = \"\xff\"\n")
        .refused(&[&format!("error: s.toml:1:9: `name`: the byte 0xFF is {latin1}")]);
    // After a byte order mark, columns count from after it (a comment's
    // byte is s118's).
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend(with("kind = \"burst\"", "kind = \"caf\u{e9}\"").as_bytes());
    let at = bom.windows(2).position(|w| w == "\u{e9}".as_bytes()).unwrap();
    bom.splice(at..at + 2, [0xe9]);
    Case::new("")
        .file("s.toml", &bom)
        .refused(&[&format!("error: s.toml:9:12: `traffic[0].kind`: the byte 0xE9 is {latin1}")]);
    Case::new("").file("s.toml", b"\xff\xfen\x00a\x00").refused(&[
        "error: s.toml:1:1: the file looks like UTF-16 text (it starts with a UTF-16 byte order mark): a scenario is UTF-8 text; save it as UTF-8\n",
    ]);
}

/// A byte that is not UTF-8 in a comment was given the advice for a
/// string (write the character as an escape) and named by the key of its
/// line, which it is no part of.
#[test]
fn s118_a_comment_not_utf8() {
    let comment = "a comment holds the byte 0xE9, which is not UTF-8 text: a scenario is read as UTF-8, its comments too (this one may be saved as Latin-1 or Windows-1252); save it as UTF-8, or remove the character from the comment\n";
    let latin1 = |text: String| {
        let mut bytes = text.into_bytes();
        let at = bytes.windows(2).position(|w| w == "\u{e9}".as_bytes()).unwrap();
        bytes.splice(at..at + 2, [0xe9]);
        bytes
    };
    Case::new("")
        .file("s.toml", latin1(with("count = 20", "count = 20 # caf\u{e9}")))
        .refused(&[&format!("error: s.toml:12:17: {comment}")]);
    // On a line of its own (after a byte order mark: columns count from
    // after it), after a table header, and in a list over several lines.
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend(latin1(with("count = 20", "count = 20\n# caf\u{e9}")));
    Case::new("").file("s.toml", &bom).refused(&[&format!("error: s.toml:13:6: {comment}")]);
    Case::new("")
        .file("s.toml", latin1(with("[limit]", "[limit] # caf\u{e9}")))
        .refused(&[&format!("error: s.toml:4:14: {comment}")]);
    Case::new("")
        .file("s.toml", latin1(with("slots = [2, 10]", "slots = [\n  2, # caf\u{e9}\n  10,\n]")))
        .refused(&[&format!("error: s.toml:17:11: {comment}")]);
}

#[test]
fn s41_scenario_missing() {
    let c = Case::new(BASE);
    c.fails(
        &["check", "none.toml"],
        1,
        &["cannot read scenario none.toml", "caused by: No such file or directory"],
    );
    c.fails(
        &["run", "none.toml"],
        1,
        &["cannot read scenario none.toml", "caused by: No such file or directory"],
    );
}

/// A scenario is read up to 16 MiB: `check /dev/zero` stops there instead
/// of reading until memory runs out.
#[test]
fn s43_scenario_too_large() {
    let c = Case::new(BASE);
    c.fails(
        &["check", "/dev/zero"],
        1,
        &["error: scenario /dev/zero is larger than 16 MiB: a scenario is a few kilobytes (give a large trace as a CSV file)"],
    );
}

/// A chart font that is no font is named, and nothing is written.
#[test]
fn o07_font_not_a_font() {
    let c = Case::new(BASE).file("bad.ttf", b"junk");
    c.fails(
        &["run", "s.toml", "--out", "out", "--font", "bad.ttf"],
        1,
        &["error: cannot load the chart font", "caused by: bad.ttf is not a usable TrueType/OpenType font"],
    );
    assert!(!c.path("out").exists());
}

/// The burst-pair grid: at most W / 2 points per axis, and at most 100 000
/// (10^10 pairs per limiter); past it the sweep would run for days or
/// abort on allocation.
#[test]
fn s44_sweep_grid_too_large() {
    let text = BASE.replace("window = \"1s\"", "window = \"1000s\"") + "\n[sweep]\ngrid = 4294967295\n";
    Case::new(&text).refused(&[
        "s.toml:19:8:",
        "`sweep.grid` must be between 2 and 100000 (grid x grid burst pairs per limiter), got 4294967295",
    ]);
    Case::new(&(BASE.replace("window = \"1s\"", "window = \"20ns\"") + "\n[sweep]\ngrid = 11\n"))
        .refused(&["s.toml:19:8:", "`sweep.grid` must be between 2 and 10 (W / 2 ns), got 11"]);
}

/// `BASE` without its `[[limiter]]`: the scenario runs the default limiters.
fn without_limiters(text: &str) -> String {
    let limiter = "\n[[limiter]]\nkind = \"slot_counter\"\nslots = [2, 10]\n";
    assert!(text.contains(limiter));
    text.replacen(limiter, "\n", 1)
}

/// The default slot counters need a window of at least N ns, as explicit
/// ones do (`s21`): with none named, a short window is refused at
/// `limit.window`, never a panic in the run.
#[test]
fn s50_window_too_short_for_the_default_slot_counters() {
    let text = without_limiters(&with("window = \"1s\"", "window = \"50ns\""));
    Case::new(&text).refused(&[
        "s.toml:6:10:",
        "`limit.window` = 50ns is too short for the default `slot_counter(N=100)`: its 100 slots need a window of at least 100 ns (a slot is at least 1 ns)",
        "With no [[limiter]] table a scenario runs fixed_window, slot_counter(N=2), slot_counter(N=10), slot_counter(N=100), sliding_log",
        "name the [[limiter]]s to run (slot counters of at most 50 slots), or make the window at least 100ns",
    ]);
    // The sweeps' defaults go up to N = 1000.
    let text = without_limiters(&with("window = \"1s\"", "window = \"600ns\"")) + "\n[sweep]\ngrid = 100\n";
    Case::new(&text).refused(&[
        "s.toml:6:10:",
        "`limit.window` = 600ns is too short for the default `slot_counter(N=1000)`",
        "With no [[limiter]] table its [sweep] compares fixed_window, slot_counter(N=1), ",
        "or make the window at least 1us",
    ]);
    // Named limiters that fit run.
    let c = Case::new(&with("window = \"1s\"", "window = \"50ns\""));
    let out = c.run(&["run", "s.toml", "--out", "out", "-q", "--no-charts"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// The default burst-pair grid (2000) needs W >= 4000 ns, as an explicit
/// grid is bounded by W / 2 (`s44`): refused when the scenario is read,
/// at the `[sweep]` table that would take a `grid`, not during the run.
#[test]
fn s51_window_too_short_for_the_default_grid() {
    let text = with("window = \"1s\"", "window = \"500ns\"") + "\n[sweep]\n";
    Case::new(&text).refused(&[
        "s.toml:18:1:",
        "the default burst-pair `sweep.grid` of 2000 points per axis needs a window of at least 4000ns (the grid is at most W / 2 ns), but `limit.window` is 500ns: give [sweep] a `grid` from 2 to 250",
    ]);
    // Below 4 ns no grid fits: the window is named.
    let text = with("window = \"1s\"", "window = \"3ns\"").replace("[2, 10]", "[2]") + "\n[sweep]\n";
    Case::new(&text).refused(&["s.toml:6:10:", "so a window of at least 4ns; `limit.window` is 3ns"]);
    // A [sweep] of only other sweeps runs no burst pairs: no grid to check.
    let text = with("window = \"1s\"", "window = \"500ns\"") + "\n[sweep]\nnodes = [1, 2]\n";
    assert_eq!(Case::new(&text).run(&["check", "s.toml"]).code, 0);
    // `ratesim sweep` gives a scenario with no [sweep] the default sweeps.
    let c = Case::new(&with("window = \"1s\"", "window = \"500ns\""));
    c.fails(
        &["sweep", "s.toml", "--out", "out"],
        1,
        &["error: s.toml:6:10: the default burst-pair `sweep.grid` of 2000 points per axis needs a window of at least 4000ns"],
    );
    assert!(!c.path("out").exists());
}

/// An empty list is refused for `map_slots` as for every other list of
/// the sweeps (`loads`, `nodes`, `retry_policies`).
#[test]
fn s52_map_slots_empty() {
    Case::new(&format!("{BASE}\n[sweep]\nmap_slots = []\n")).refused(&[
        "s.toml:19:13:",
        "`sweep.map_slots` is empty: give at least one slot count to map, like [1, 2, 5, 10] (1 = fixed window)",
    ]);
}

/// Duration parts go from the largest unit down, each unit once: "1s1s"
/// and "1ms1s" are refused rather than read as sums.
/// `"-0s"` is zero: it was called negative ("times and durations start at
/// 0"), which it is not. A key that takes 0 takes it; one that does not
/// says it must be longer than 0.
#[test]
fn s116_minus_zero_duration() {
    Case::new(&with("window = \"1s\"", "window = \"-0s\"")).refused(&[
        "error: s.toml:6:10: `limit.window` must be longer than 0, got \"-0s\", which is 0 (a minus sign does not make it less)\n",
    ]);
    Case::new(&format!("{BASE}\n[output]\nbin = \"-0ms\"\n")).refused(&[
        "error: s.toml:19:7: `output.bin` must be longer than 0, got \"-0ms\", which is 0 (a minus sign does not make it less)\n",
    ]);
    // Below zero is still negative, and a key that takes 0 takes -0.
    Case::new(&with("window = \"1s\"", "window = \"-1ns\"")).refused(&["`-1ns` is negative"]);
    let out = Case::new(&with("start = \"100ms\"", "start = \"-0s\"")).run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // A clock skew strips its own sign: a second one is not a duration
    // (`--0s` once passed as minus `-0s`).
    let skew = format!("{BASE}\n[nodes]\ncount = 2\nmode = \"local\"\nskew = [\"--0s\", \"0s\"]\n");
    Case::new(&skew).refused(&["error: s.toml:21:9: `nodes.skew[0]`: `--0s` is not a duration"]);
}

#[test]
fn s53_duration_unit_repeated_or_out_of_order() {
    for (window, unit, before) in [("1s1s", "s", "s"), ("1ms1s", "s", "ms")] {
        Case::new(&with("window = \"1s\"", &format!("window = \"{window}\""))).refused(&[
            "s.toml:6:10:",
            &format!("`limit.window`: `{window}` has `{unit}` after `{before}`: write each unit once, from the largest down, like \"1m30s\" or \"1s500ms\""),
        ]);
    }
}

/// `[limiter]` for `[[limiter]]`: the hint is the two brackets, not "a
/// list, like [2, 10]".
#[test]
fn s54_single_brackets_for_an_array_of_tables() {
    for table in ["limiter", "traffic"] {
        Case::new(&with(&format!("[[{table}]]"), &format!("[{table}]"))).refused(&[
            &format!("`{table}`: expected an array of tables, found a table: write `[[{table}]]`, with two brackets, above the keys of each entry"),
        ]);
    }
}

/// TOML syntax errors are located where they are and named by no key but
/// the one on their own line: `count 20` is not about `span` above it.
#[test]
fn s55_toml_key_without_equals() {
    let e = Case::new(&with("count = 20", "count 20")).refused_with(&[
        "error: s.toml:12:7: expected `=` after the key `count`: write key = value, like count = 20",
    ]);
    assert!(!e.contains("span"), "{e}");
}

#[test]
fn s56_toml_table_header_not_closed() {
    Case::new(&with("[[limiter]]", "[[limiter]"))
        .refused(&["error: s.toml:14:11: the table header `[[limiter]` is not closed: write `[[limiter]]`"]);
}

#[test]
fn s57_toml_bare_word_value() {
    Case::new(&with("name = \"t\"", "name = t")).refused(&[
        "error: s.toml:1:8: `name`: `t` is not a value: a string must be quoted, like \"t\" (true and false are written in full, in lowercase)",
    ]);
    Case::new(&with("window = \"1s\"", "window = 1s")).refused(&[
        "error: s.toml:6:10: `limit.window`: `1s` is not a value: a string must be quoted, like \"1s\"",
    ]);
}

#[test]
fn s58_toml_two_values() {
    Case::new(&with("count = 20", "count = 20 20")).refused(&[
        "error: s.toml:12:9: `traffic[0].count`: `20 20` is not one value: quote a string (\"20 20\"), separate the items of a list with commas in brackets ([a, b]), or give each key = value a line of its own",
    ]);
}

#[test]
fn s59_toml_no_value() {
    Case::new(&with("count = 20", "count = ")).refused(&[
        "error: s.toml:12:9: `traffic[0].count`: no value after `=`: give one, like 20, \"1s\" or [2, 10]",
    ]);
}

/// Each request carries its source's number in 16 bits: source 65 536
/// once wrapped to 0 and took source 0's retry policy. More sources than
/// fit are refused, at the first one too many; 65 536 are accepted.
#[test]
fn s60_too_many_traffic_entries() {
    let extra = |n: usize| "\n[[traffic]]\nkind = \"burst\"\ncount = 1\n".repeat(n);
    // BASE's entry and 65 536 more; each added one is 4 lines from line 18.
    Case::new(&format!("{BASE}{}", extra(65_536))).refused(&[
        "error: s.toml:262158:1: `traffic[65536]`: a scenario may have at most 65536 [[traffic]] entries (each request carries its source's number in 16 bits): merge sources into fewer, such as one CSV trace",
    ]);
    let out = Case::new(&format!("{BASE}{}", extra(65_535))).run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("[65535] burst: 1 request"), "{}", &out.stdout[out.stdout.len() - 300..]);
}

/// Each limiter is a lane with fixed state that `--memory` does not count:
/// 50 000 slot counters once took 5.4 GB under `--memory 64MiB`. A list's
/// every slot count is one; 256 are accepted; `--slots` is held to the same.
#[test]
fn s108_too_many_limiters() {
    let counts = |n: u64| (1..=n).map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
    Case::new(&with("slots = [2, 10]", &format!("slots = [{}]", counts(257)))).refused(&[
        "error: s.toml:14:1: `limiter[0]` (slot_counter) brings the limiters to 257 (each slot count or burst of a list is one): a scenario may compare at most 256; split it into several scenarios",
    ]);
    let two = format!("{BASE}\n[[limiter]]\nkind = \"gcra\"\nburst = [{}]\n", counts(255));
    Case::new(&two).refused(&["s.toml:18:1: `limiter[1]` (gcra) brings the limiters to 257"]);
    let out =
        Case::new(&with("slots = [2, 10]", &format!("slots = [{}]", counts(256)))).run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out =
        Case::new(BASE).run(&["run", "s.toml", "--out", "out", "--slots", &counts(257).replace(", ", ",")]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("error: --slots\n  caused by: the limiters would come to 257 with these slot counts: a run may compare at most 256"),
        "{}",
        out.stderr
    );
}

/// A UTF-8 byte order mark (some Windows editors write one) is no part of
/// the TOML: the first line's columns count from after it, and its key is
/// named (it once said 1:9, with no key).
#[test]
fn s109_a_byte_order_mark() {
    Case::new(&format!("\u{feff}{}", BASE.replace("name = \"t\"", "name = 5")))
        .refused(&["error: s.toml:1:8: `name`: expected a string, found the number 5"]);
    let out = Case::new(&format!("\u{feff}{BASE}")).run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// An entry without its `kind` names the choices, as an unknown `kind`
/// does (it once said only "missing field `kind`").
#[test]
fn s110_kind_missing() {
    Case::new(&with("kind = \"burst\"\n", "")).refused(&[
        "error: s.toml:8:1: `traffic[0]`: missing field `kind`: give one of \"burst\", \"constant\", \"poisson\", \"csv\", \"closed\"",
    ]);
    Case::new(&with("kind = \"slot_counter\"\n", "")).refused(&[
        "error: s.toml:14:1: `limiter[0]`: missing field `kind`: give one of \"fixed_window\", \"slot_counter\", \"sliding_log\", \"gcra\", \"token_bucket\", \"leaky_bucket\", \"weighted_window\", \"guava\", \"leaky_queue\", \"go_rate\"",
    ]);
}

/// A list where a `[[traffic]]` or `[[limiter]]` entry belongs is named as
/// that entry: read as a table, a list gave its first item to `kind`
/// (`` `traffic`: expected a string, found the number 1 ``).
#[test]
fn s123_entry_is_a_list() {
    let limit = "[limit]\nrequests = 10\nwindow = \"1s\"\n";
    Case::new(&format!("name = \"x\"\ntraffic = [[1]]\n{limit}"))
        .refused(&["error: s.toml:2:12: `traffic[0]`: expected a table, found a list\n"]);
    Case::new(&format!(
        "name = \"x\"\nlimiter = [{{ kind = \"fixed_window\" }}, [\"gcra\"]]\n{limit}[[traffic]]\nkind = \"burst\"\ncount = 5\n"
    ))
    .refused(&["error: s.toml:2:39: `limiter[1]`: expected a table, found a list\n"]);
}

/// `slots` is read as written for its own bound, the window's
/// nanoseconds; a window past 292 years has more than an i64 holds, so
/// `slots` took up to 2^64 - 1 where `map_slots`, `requests` and every
/// other count stop at 2^63 - 1 (so does a `gcra` burst, and `--slots`).
#[test]
fn s117_slots_past_i64() {
    let long = with("window = \"1s\"", "window = \"5124095h\"");
    let too_large_n = |key: &str, col: usize, n: &str| {
        format!(
            "error: s.toml:16:{col}: `limiter[0].{key}`: {n} is too large: expected a whole number up to 9223372036854775807\n"
        )
    };
    let too_large = |key: &str, col: usize| too_large_n(key, col, "9223372036854775808");
    Case::new(&long.replace("slots = [2, 10]", "slots = [9223372036854775808]"))
        .refused(&[&too_large("slots[0]", 10)]);
    // Past 2^64 too, where the window's words were once given (it is
    // shorter than 2^64 ns).
    Case::new(&long.replace("slots = [2, 10]", "slots = [18446744073709551616]")).refused(&[&too_large_n(
        "slots[0]",
        10,
        "18446744073709551616",
    )]);
    let out = Case::new(&long.replace("slots = [2, 10]", "slots = [9223372036854775807]"))
        .run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // A gcra burst, where T = 1 ns lets the tolerance hold it.
    let gcra = with("requests = 10", "requests = 1000000000").replace(
        "kind = \"slot_counter\"\nslots = [2, 10]",
        "kind = \"gcra\"\nburst = [9223372036854775808]",
    );
    Case::new(&gcra).refused(&[&too_large("burst[0]", 10)]);
    // Past 2^64 alike: it once got the tolerance's words ("is too large for
    // this limit: the tolerance T * (burst - 1), with T = 1 ns, ...").
    for n in ["18446744073709551615", "18446744073709551616", "99999999999999999999"] {
        Case::new(&gcra.replace("9223372036854775808", n)).refused(&[&too_large_n("burst[0]", 10, n)]);
    }
    // Where 2^63 is past the tolerance (T = 100 ms), every burst past it
    // gets the tolerance's words, up to 2^64 and past it.
    let tolerance = |n: &str| {
        format!(
            "error: s.toml:16:9: `limiter[0].burst` = {n} is too large for this limit: the tolerance T * (burst - 1), with T = 100000000 ns, is past the end of time (about 584 years of nanoseconds)\n"
        )
    };
    for n in ["9223372036854775808", "18446744073709551616"] {
        Case::new(&with(
            "kind = \"slot_counter\"\nslots = [2, 10]",
            &format!("kind = \"gcra\"\nburst = {n}"),
        ))
        .refused(&[&tolerance(n)]);
    }
    let out = Case::new(&long).run(&["run", "s.toml", "--out", "out", "--slots", "9223372036854775808"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("error: --slots\n  caused by: slot count 9223372036854775808 is too large: expected a whole number up to 9223372036854775807"),
        "{}",
        out.stderr
    );
}

#[test]
fn s62_map_slots_more_than_the_window() {
    Case::new(&format!("{BASE}\n[sweep]\nmap_slots = [2000000000]\n")).refused(&[
        "s.toml:19:14: `sweep.map_slots[0]`: 2000000000 slots is more than the window (1s) has nanoseconds (1000000000); a slot must be at least 1 ns",
    ]);
}

/// An empty column name matched no column, and the trace was blamed:
/// "no `` column in the header", with no place in the scenario.
#[test]
fn s63_empty_column_name() {
    for key in ["time_column", "key_column"] {
        let like = if key == "time_column" { "time" } else { "client" };
        Case::new(&format!("{CSV_BASE}{key} = \"\"\n")).file("trace.csv", "time\n0.1\n").refused(&[&format!(
            "s.toml:10:{}: `traffic[0].{key}` is empty: give the name of a column in the trace's header row, like \"{like}\"",
            key.len() + 4
        )]);
    }
    Case::new(&format!("{CSV_BASE}time_column = \"  \"\n"))
        .file("trace.csv", "time\n0.1\n")
        .refused(&["`traffic[0].time_column` is empty"]);
}

/// `slots` has no default: a slot counter without it is refused at its
/// table, with the forms the key takes.
#[test]
fn s65_slots_missing() {
    Case::new(&with("slots = [2, 10]\n", "")).refused(&[
        "s.toml:14:1:",
        "`limiter[0].slots` is required: a slot count or a list of them, like 10 or [2, 10, 100]",
    ]);
}

#[test]
fn s66_rate_and_load_together() {
    Case::new(&with_traffic("kind = \"constant\"\nrate = 5.0\nload = 0.5"))
        .refused(&["s.toml:11:8:", "give `traffic[0].rate` or `load`, not both"]);
}

/// `load` is checked finite, but `load * L / W` may still overflow to an
/// infinite rate (also tests/fuzz_regressions.rs).
#[test]
fn s67_load_whose_rate_is_not_finite() {
    Case::new(&with_traffic("kind = \"poisson\"\nload = 1e308")).refused(&[
        "s.toml:10:8:",
        "`traffic[0].load` gives a rate of inf requests/s: it must be finite and above 0",
    ]);
    // Or one that underflows to 0: 5e-324 x 10 per 100 h.
    let text =
        with_traffic("kind = \"poisson\"\nload = 5e-324").replace("window = \"1s\"", "window = \"100h\"");
    Case::new(&text).refused(&[
        "s.toml:10:8:",
        "`traffic[0].load` gives a rate of 0 requests/s: it must be finite and above 0",
    ]);
}

#[test]
fn s68_rate_or_load_missing() {
    Case::new(&with_traffic("kind = \"constant\"")).refused(&[
        "s.toml:8:1:",
        "`traffic[0].rate` or `load` is required for kind \"constant\": requests per second, like rate = 50.0, or a multiple of the limit's L / W, like load = 0.8",
    ]);
}

#[test]
fn s72_burst_count_missing() {
    Case::new(&with("count = 20\n", "")).refused(&[
        "s.toml:8:1:",
        "`traffic[0].count` is required for kind \"burst\": how many requests the burst sends, like 20",
    ]);
}

#[test]
fn s73_trace_path_missing() {
    Case::new(&with_traffic("kind = \"csv\"")).refused(&[
        "s.toml:8:1:",
        "`traffic[0].path` is required for kind \"csv\": the trace file, like \"trace.csv\"",
    ]);
}

#[test]
fn s69_sweep_loads_empty() {
    Case::new(&format!("{BASE}\n[sweep]\nloads = []\n")).refused(&[
        "s.toml:19:9:",
        "`sweep.loads` is empty: give at least one load factor (a multiple of L / W), like [0.5, 1, 2]",
    ]);
}

#[test]
fn s70_align_not_known() {
    Case::new(&with(
        "kind = \"slot_counter\"\nslots = [2, 10]",
        "kind = \"fixed_window\"\nalign = \"first\"",
    ))
    .refused(&[
        "s.toml:16:9:",
        "`limiter[0].align` = \"first\" is not known: expected one of \"epoch\", \"first-request\"",
    ]);
}

#[test]
fn s71_offset_with_first_request_windows() {
    let text = with(
        "kind = \"slot_counter\"\nslots = [2, 10]",
        "kind = \"fixed_window\"\nalign = \"first-request\"\noffset = \"1ms\"",
    );
    Case::new(&text).refused(&["s.toml:17:10:", "`limiter[0].offset` only applies to align = \"epoch\""]);
}

/// Each load of the load sweep generates Poisson traffic for
/// `load_duration`: the generated sources' 1e9 cap applies to each run.
#[test]
fn s45_load_sweep_too_many_requests() {
    Case::new(&format!("{BASE}\n[sweep]\nloads = [0.5, 1e9]\nload_duration = \"100s\"\n")).refused(&[
        "s.toml:19:15:",
        "`sweep.loads[1]` = 1000000000 over `sweep.load_duration` (100 s) is about 1e12 requests: a load-sweep run may generate at most 1e9",
    ]);
    // `ratesim sweep` with no [sweep] table runs the default loads, 0.5 to
    // 3 x L / W for 100 windows: the same guard.
    let c = Case::new(&with("requests = 10", "requests = 1000000000"));
    c.fails(
        &["sweep", "s.toml", "--out", "out"],
        1,
        &[
            "error: s.toml:6:10: the default load sweep runs load 0.5 for 100s (100 windows) with L = 1000000000, about 5e10 requests, but a load-sweep run may generate at most 1e9: give [sweep] a shorter `load_duration` or smaller `loads`",
        ],
    );
    assert!(!c.path("out").exists());
}

/// The burst-pair sweep decides every request of both bursts for a limiter
/// whose bursts do not scale with L (GCRA): grid x (grid + 1) x L, here
/// 200 x 201 x 10^6 = 4.02e10, past the 1e10 (the largest grid's count for
/// one request per burst) it may; `ratesim sweep` with the default grid of
/// 2000 refuses the same. Before this guard such a sweep ran for days, and
/// one of a shaping limiter at L = i64::MAX panicked on its allocation.
#[test]
fn s84_burst_pair_sweep_too_much_work() {
    let gcra = |requests: &str| {
        with("requests = 10", requests).replace("kind = \"slot_counter\"\nslots = [2, 10]", "kind = \"gcra\"")
    };
    Case::new(&format!("{}\n[sweep]\ngrid = 200\n", gcra("requests = 1000000"))).refused(&[
        "s.toml:14:1: the burst-pair sweep would decide about 4.02e10 requests for `limiter[0]` (gcra): grid x grid pairs of bursts of L = 1000000 each on a grid of 200, more than the 1e10 it may; give [sweep] a `grid` of at most 99, or a smaller L",
    ]);
    let out =
        Case::new(&format!("{}\n[sweep]\ngrid = 99\n", gcra("requests = 1000000"))).run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let c = Case::new(&gcra("requests = 1000000"));
    c.fails(
        &["sweep", "s.toml", "--out", "out"],
        1,
        &["error: s.toml:6:10: the burst-pair sweep would decide about 4e12 requests for `gcra`: grid x grid pairs of bursts of L = 1000000 each on a grid of 2000"],
    );
    assert!(!c.path("out").exists());
    let huge = with("requests = 10", "requests = 9223372036854775807")
        .replace("kind = \"slot_counter\"\nslots = [2, 10]", "kind = \"leaky_queue\"\nqueue = 5");
    Case::new(&format!("{huge}\n[sweep]\ngrid = 2\nloads = [1e-18]\nload_duration = \"1s\"\n")).refused(&[
        "s.toml:14:1: the burst-pair sweep would decide about 5.53e19 requests for `limiter[0]` (leaky_queue)",
        "give the scenario a smaller L (`limit.requests`)",
    ]);
}

/// The burst-pair sweep's work over all its rows: each limiter was held to
/// 1e10 requests, but 256 of them on the largest grid ran for days with no
/// word. The whole sweep is held to what the default set of ten rows
/// decides there, 1.00001e11: its rows are the limiters, the sliding-log
/// reference and the heat map's own slot counters (here N = 2 to 12, the
/// log and the fixed window: 13 rows of g (g + 1) one-request bursts).
#[test]
fn s111_burst_pair_sweep_too_much_work_in_all() {
    let twelve = with("slots = [2, 10]", "slots = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]");
    Case::new(&format!("{twelve}\n[sweep]\ngrid = 100000\n")).refused(&[
        "error: s.toml:19:8: the burst-pair sweep would decide about 1.3e11 requests in all on a grid of 100000: grid x grid pairs of bursts for each of its 13 rows (the limiters, the sliding-log reference and the heat map's own slot counters), more than the 1e11 a sweep may; give [sweep] a `grid` of at most 87705, or compare fewer limiters, or fewer `map_slots`",
    ]);
    // 87705 x 87706 x 13 = 9.99996e10.
    let out = Case::new(&format!("{twelve}\n[sweep]\ngrid = 87705\n")).run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // --slots adds rows after the scenario is read: the same 13.
    let c = Case::new(&format!("{BASE}\n[sweep]\ngrid = 90000\n"));
    c.fails(
        &["run", "s.toml", "--out", "out", "--slots", "2,3,4,5,6,7,8,9,10,11,12"],
        1,
        &[
            "error: --slots",
            "caused by: the burst-pair sweep would decide about 1.05e11 requests in all on a grid of 90000: grid x grid pairs of bursts for each of its 13 rows",
            "give [sweep] a `grid` of at most 87705, or give --slots fewer slot counts, or fewer `map_slots`",
        ],
    );
    assert!(!c.path("out").exists());
    // `ratesim sweep` with no [sweep] table: the default grid of 2000,
    // twelve GCRA bursts of L = 2400 each (9.6e9, under the 1e10 of one
    // limiter), the log and the map's four: 1.15e11.
    let gcra = with("requests = 10", "requests = 2400").replace(
        "kind = \"slot_counter\"\nslots = [2, 10]",
        "kind = \"gcra\"\nburst = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]",
    );
    let c = Case::new(&gcra);
    c.fails(
        &["sweep", "s.toml", "--out", "out"],
        1,
        &[
            "error: s.toml:6:10: the burst-pair sweep would decide about 1.15e11 requests in all on a grid of 2000: grid x grid pairs of bursts for each of its 17 rows",
            "give [sweep] a `grid` of at most 1862, or compare fewer limiters, or fewer `map_slots` (a scenario with no [sweep] table gets the default burst-pair and load sweeps from `ratesim sweep`)",
        ],
    );
    assert!(!c.path("out").exists());
}

/// Each load-sweep run was held to 1e9 requests, but not their sum, and
/// every limiter decides every request: loads 1 to 20 of L = 10 per 1 s
/// for 5e6 s each are 10 x 5e6 x 210 = 1.05e10 requests, decided by 11
/// slot counters and the log, 1.26e11 decisions. 3e6 s each (7.56e10) is
/// taken; so is 5e6 s with the two slot counters of BASE (3.15e10).
#[test]
fn s126_load_sweep_too_much_work_in_all() {
    let loads: Vec<String> = (1..=20).map(|i| i.to_string()).collect();
    let twelve = with("slots = [2, 10]", "slots = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]");
    let sweep = |base: &str, d: &str| {
        format!("{base}\n[sweep]\nloads = [{}]\nload_duration = \"{d}\"\n", loads.join(", "))
    };
    Case::new(&sweep(&twelve, "5000000s")).refused(&[
        "error: s.toml:19:9: the load sweep would generate about 1.05e10 requests over its 20 loads (`loads` over `load_duration`, 5000000 s each), each decided by its 12 limiters (the sliding-log reference included): about 1.26e11 decisions, more than the 1e11 it may make; give fewer or smaller `loads`, a shorter `load_duration`, or compare fewer limiters",
    ]);
    for ok in [sweep(&twelve, "3000000s"), sweep(BASE, "5000000s")] {
        let out = Case::new(&ok).run(&["check", "s.toml"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    // --slots adds deciders after the scenario is read.
    let c = Case::new(&sweep(BASE, "5000000s"));
    c.fails(
        &["run", "s.toml", "--out", "out", "--slots", "2,3,4,5,6,7,8,9,10,11,12"],
        1,
        &["error: --slots", "about 1.26e11 decisions", "or give --slots fewer slot counts"],
    );
    assert!(!c.path("out").exists());
}

/// A load sweep of 1001 different loads (0.01 to 10.01); the same value
/// twice is one run, so 1001 entries with one repeated are taken.
#[test]
fn s127_load_sweep_too_many_loads() {
    let loads = |n: u32| (1..=n).map(|i| format!("{}", f64::from(i) / 100.0)).collect::<Vec<_>>().join(", ");
    Case::new(&format!("{BASE}\n[sweep]\nloads = [{}]\nload_duration = \"1s\"\n", loads(1001))).refused(&[
        "error: s.toml:19:9: `sweep.loads` lists 1001 different load factors: the load sweep runs at most 1000, one run each; give fewer",
    ]);
    let text = format!("{BASE}\n[sweep]\nloads = [{}, 0.5]\nload_duration = \"1s\"\n", loads(1000));
    let out = Case::new(&text).run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// A day is a unit (`"1d"`, 24 h), for daily quotas: it runs and is shown
/// back in hours. A week is not, and the message says how to write one;
/// one day past the end of u64 nanoseconds is too large, not wrapped.
#[test]
fn s124_day_unit_and_no_week() {
    let c = Case::new(
        &with("window = \"1s\"", "window = \"1d\"")
            .replace("duration = \"2s\"", "duration = \"3d\"")
            .replace("requests = 10", "requests = 1000"),
    );
    let out = c.run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("limit     1000 requests per 24h"), "{}", out.stdout);
    let out = c.run(&["run", "s.toml", "--out", "out", "-q", "--no-charts"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for (window, unit) in [("1w", "w"), ("2 weeks", "weeks")] {
        Case::new(&with("window = \"1s\"", &format!("window = \"{window}\""))).refused(&[&format!(
            "error: s.toml:6:10: `limit.window`: `{window}` has an unknown unit `{unit}` (units: ns, us or µs, ms, s, m or min, h, d); there is no week unit: write 7d for a week\n"
        )]);
    }
    Case::new(&with("window = \"1s\"", "window = \"1day\"")).refused(&[
        "error: s.toml:6:10: `limit.window`: `1day` has an unknown unit `day` (units: ns, us or µs, ms, s, m or min, h, d); did you mean `d` (days)?\n",
    ]);
    Case::new(&with("duration = \"2s\"", "duration = \"213504d\"")).refused(&[
        "error: s.toml:2:12: `duration`: `213504d` is too large (the limit is about 584 years of nanoseconds)\n",
    ]);
    let out = Case::new(&with("duration = \"2s\"", "duration = \"213503d\"")).run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// A value of the wrong type in a list of numbers or durations is named
/// with its place in the list, as a list of tables' entries are: the list
/// itself was named, `sweep.loads`, and for a date-time at the date.
#[test]
fn s125_list_item_of_the_wrong_type_is_named_by_its_place() {
    let cases = [
        (
            "\n[sweep]\nloads = [1979-05-27]\n",
            "s.toml:19:10: `sweep.loads[0]`: expected a number, found the date-time 1979-05-27",
        ),
        (
            "\n[sweep]\nloads = [1, \"2\"]\n",
            "s.toml:19:13: `sweep.loads[1]`: expected a number, found the string \"2\"",
        ),
        (
            "\n[sweep]\nloads = [1, -1]\n",
            "s.toml:19:13: `sweep.loads[1]` must be a finite number above 0, got -1",
        ),
        (
            "\n[sweep]\nmap_slots = [1, 2.5]\n",
            "s.toml:19:17: `sweep.map_slots[1]`: expected a whole number, found the number 2.5",
        ),
        (
            "\n[sweep]\nmap_slots = [1, 0]\n",
            "s.toml:19:17: `sweep.map_slots[1]` must be a whole number of at least 1, got 0",
        ),
        (
            "\n[sweep]\nrtts = [\"0ms\", 1979-05-27]\n",
            "s.toml:19:16: `sweep.rtts[1]`: expected a string, found the date-time 1979-05-27 (a duration is a string with a unit, like \"1s\" or \"100ms\")",
        ),
        (
            "\n[sweep]\nrtts = [\"0ms\", \"-1ms\"]\n",
            "s.toml:19:16: `sweep.rtts[1]`: `-1ms` is negative: times and durations start at 0",
        ),
        (
            "\n[nodes]\ncount = 2\nskew = [\"0ms\", 5]\n",
            "s.toml:20:16: `nodes.skew[1]`: expected a string, found the number 5 (a duration is a string with a unit, like \"1s\" or \"100ms\")",
        ),
    ];
    for (added, message) in cases {
        Case::new(&format!("{BASE}{added}")).refused(&[&format!("error: {message}\n")]);
    }
    Case::new(&with("slots = [2, 10]", "slots = [2, 1979-05-27]")).refused(&[
        "error: s.toml:16:13: `limiter[0].slots[1]`: expected a whole number, found the date-time 1979-05-27\n",
    ]);
    Case::new(&with("slots = [2, 10]", "slots = [2, true]"))
        .refused(&["error: s.toml:16:13: `limiter[0].slots[1]`: expected a whole number, found true\n"]);
    // A lone number is the key's own.
    Case::new(&with("slots = [2, 10]", "slots = 0"))
        .refused(&["error: s.toml:16:9: `limiter[0].slots` must be a whole number of at least 1, got 0\n"]);
    // A burst of a list, in the words about `delay`.
    Case::new(&with("kind = \"slot_counter\"\nslots = [2, 10]", "kind = \"leaky_bucket\"\nburst = [10, 3]\ndelay = 5"))
        .refused(&["error: s.toml:17:9: `limiter[0].delay` = 5 is more than `burst[1]` = 3: no admitted request would ever wait"]);
}

/// `[sweep] nodes`, a list of node counts, shares its last part with the
/// [nodes] table: an item of the wrong type in it was said as a list
/// where a table belongs, `` `sweep.nodes`: expected a table, found a list ``.
#[test]
fn s128_sweep_nodes_item_of_the_wrong_type() {
    Case::new(&format!("{BASE}\n[sweep]\nnodes = [1, \"2\"]\n")).refused(&[
        "error: s.toml:19:13: `sweep.nodes[1]`: expected a whole number, found the string \"2\"\n",
    ]);
    Case::new(&format!("{BASE}\n[sweep]\nnodes = [1, 2.5]\n"))
        .refused(&["error: s.toml:19:13: `sweep.nodes[1]`: expected a whole number, found the number 2.5\n"]);
    // The [nodes] table given as a list still is.
    Case::new(&with("duration = \"2s\"", "duration = \"2s\"\nnodes = [1, 2]"))
        .refused(&["error: s.toml:3:9: `nodes`: expected a table, found a list\n"]);
}

/// A seed sweep runs 2 to 1000 seeds: one seed has no spread, and a
/// thousand pin the mean to about 3 % of the deviation.
#[test]
fn s130_seed_sweep_seeds_out_of_range() {
    let sweep = |n: &str| format!("{BASE}\n[sweep]\nseeds = {n}\n");
    for (n, got) in [("1", "1"), ("0", "0"), ("-3", "-3"), ("1001", "1001")] {
        Case::new(&sweep(n)).refused(&[&format!(
            "error: s.toml:19:9: `sweep.seeds` must be a whole number from 2 to 1000 (one run of the scenario per seed, from its own `seed` on; one seed has no spread to measure), got {got}"
        )]);
    }
    Case::new(&sweep("2.5")).refused(&["error: s.toml:19:9: `sweep.seeds`", "2.5"]);
    for ok in ["2", "1000"] {
        let out = Case::new(&sweep(ok)).run(&["check", "s.toml"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
}

/// Every seed of the sweep can be written back as the scenario's `seed`,
/// a TOML integer: the last, `seed + seeds - 1`, is at most 2^63 - 1, from
/// the scenario's `seed` or from `--seed`.
#[test]
fn s131_seed_sweep_past_the_largest_seed() {
    let text = |seed: &str| {
        format!("{}\n[sweep]\nseeds = 5\n", with("name = \"t\"", &format!("name = \"t\"\nseed = {seed}")))
    };
    Case::new(&text("9223372036854775805")).refused(&[
        "error: s.toml:20:9: `sweep.seeds` = 5 with `seed` = 9223372036854775805 would run seeds 9223372036854775805 to 9223372036854775809, past 9223372036854775807, the largest seed a scenario can hold (each seed of the sweep can be written back as the scenario's `seed` to rerun it): give a `seed` of at most 9223372036854775803, or fewer `seeds`",
    ]);
    let out = Case::new(&text("9223372036854775803")).run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // --seed replaces the scenario's after it is read.
    let c = Case::new(&format!("{BASE}\n[sweep]\nseeds = 5\n"));
    for command in ["run", "sweep"] {
        c.fails(
            &[command, "s.toml", "--out", "out", "--seed", "9223372036854775805"],
            1,
            &[
                "error: --seed\n",
                "caused by: `sweep.seeds` = 5 (s.toml:19:9) with --seed 9223372036854775805 would run seeds 9223372036854775805 to 9223372036854775809, past 9223372036854775807",
                "give a --seed of at most 9223372036854775803, or fewer `seeds`",
            ],
        );
    }
    assert!(!c.path("out").exists());
}

/// The seed sweep reruns the scenario once per seed: 1e11 decisions in
/// all, as the load sweep. A Poisson source of 4e8 a second for 2 s and
/// the burst's 20, about 8e8 requests, decided by 3 limiters (2.4e9 a
/// run): 41 seeds fit, 42 do not.
#[test]
fn s132_seed_sweep_too_much_work() {
    let poisson = "[[traffic]]\nkind = \"poisson\"\nrate = 4e8\n";
    let text = |n: u32| format!("{BASE}\n{poisson}\n[sweep]\nseeds = {n}\n");
    Case::new(&text(42)).refused(&[
        "error: s.toml:23:9: `sweep.seeds` = 42 reruns the scenario 42 times, each run about 8e8 requests (its sources' expected requests; a CSV trace's rows and retries not counted) decided by its 3 limiters (the sliding-log reference included): about 1.01e11 decisions, more than the 1e11 a sweep may make; give `seeds` of at most 41, a shorter `duration` or fewer requests, or compare fewer limiters",
    ]);
    let out = Case::new(&text(41)).run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // --slots adds deciders after the scenario is read: 12 of them, 9.6e9
    // decisions a run.
    let c = Case::new(&text(11));
    c.fails(
        &["run", "s.toml", "--out", "out", "--slots", "2,3,4,5,6,7,8,9,10,11,12"],
        1,
        &[
            "error: --slots",
            "caused by: s.toml:23:9: `sweep.seeds` = 11 reruns the scenario 11 times",
            "decided by its 12 limiters",
            "give `seeds` of at most 10, a shorter `duration` or fewer requests, or give --slots fewer slot counts",
        ],
    );
    assert!(!c.path("out").exists());
}

/// The seed sweep reruns the scenario's own traffic: without any, there is
/// nothing to rerun.
#[test]
fn s133_seed_sweep_without_traffic() {
    Case::new("name = \"t\"\n\n[limit]\nrequests = 10\nwindow = \"1s\"\n\n[sweep]\nseeds = 5\n").refused(&[
        "error: s.toml:8:9: `sweep.seeds` reruns the scenario's own traffic with each seed, but it has no [[traffic]] source: add one",
    ]);
}

/// A shaping limiter's burst-pair rows hold both bursts' backend times,
/// 32 bytes per request of L for each row running: past `--memory` the sweep
/// stops before it allocates (it took 6 GB under `--memory 64MiB`).
#[test]
fn s85_burst_pair_sweep_of_a_shaping_limiter_past_memory() {
    let text = with("requests = 10", "requests = 10000000")
        .replace("kind = \"slot_counter\"\nslots = [2, 10]", "kind = \"gcra\"\nmax_wait = \"10s\"")
        + "\n[sweep]\ngrid = 2\nloads = [0.001]\nload_duration = \"1s\"\n";
    let c = Case::new(&text);
    c.fails(
        &["sweep", "s.toml", "--out", "out", "--memory", "64MiB"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: burst-pair sweep",
            "the burst-pair sweep of gcra(max_wait=10s) holds the backend times of both bursts of L = 10000000, 305.2 MiB for one row of the grid, past",
            "past the memory budget of 64.0 MiB (--memory): give the scenario a smaller L, or a larger --memory",
        ],
    );
    assert!(!c.path("out").exists());
    // An empty folder holds no results either (the binary once judged by
    // the folder's existence and said they were kept).
    std::fs::create_dir(c.path("empty")).unwrap();
    c.fails(
        &["sweep", "s.toml", "--out", "empty", "--memory", "64MiB"],
        1,
        &["error: scenario s.toml failed; nothing was written", "caused by: burst-pair sweep"],
    );
    // Over an earlier sweep's folder: it stays, and the error says so.
    let fits = text.replace("requests = 10000000", "requests = 10");
    std::fs::write(c.path("s.toml"), &fits).unwrap();
    let done = c.run(&["sweep", "s.toml", "--out", "out", "--no-charts", "-q"]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let before = std::fs::read(c.path("out/error_vs_slots.csv")).unwrap();
    std::fs::write(c.path("s.toml"), &text).unwrap();
    c.fails(
        &["sweep", "s.toml", "--out", "out", "--memory", "64MiB"],
        1,
        &["error: scenario s.toml failed; previous results were kept", "caused by: burst-pair sweep"],
    );
    assert_eq!(std::fs::read(c.path("out/error_vs_slots.csv")).unwrap(), before);
}

/// A load of the load sweep gets the guards of a `[[traffic]]` source's
/// `load` (`s67`): its rate, load x L / W, once underflowed to 0 here
/// (5e-324 x 10 per 100 h) and tripped an assertion in `run` and `sweep`
/// after `check` had passed it. Loads are shown compactly, in `check`'s
/// summary too (a 5e-324 was 320 digits).
#[test]
fn s74_sweep_load_whose_rate_is_not_finite() {
    let text = with("window = \"1s\"", "window = \"100h\"") + "\n[sweep]\nloads = [5e-324]\n";
    let c = Case::new(&text);
    let err = c.refused_with(&[
        "s.toml:19:10: `sweep.loads[0]` = 5e-324 gives a rate of 0 requests/s (load x L / W, with L = 10 per 100h): it must be finite and above 0",
    ]);
    assert!(err.len() < 300, "{err}");
    c.fails(
        &["sweep", "s.toml", "--out", "out"],
        1,
        &["s.toml:19:10: `sweep.loads[0]` = 5e-324 gives a rate of 0"],
    );
    assert!(!c.path("out").exists());
    // Or overflows to infinity.
    Case::new(&format!("{BASE}\n[sweep]\nloads = [0.5, 1e308]\n")).refused(&[
        "s.toml:19:15: `sweep.loads[1]` = 1e308 gives a rate of inf requests/s (load x L / W, with L = 10 per 1s): it must be finite and above 0",
    ]);
    let out =
        Case::new(&format!("{BASE}\n[sweep]\ngrid = 10\nloads = [1e-300, 0.5]\n")).run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("loads [1e-300, 0.5] x L/W, 100s each"), "{}", out.stdout);
}

/// Each generated source is within the 1e9 cap (`s26`-`s28`, `r30`); all
/// of them together must be too: 1000 sources of 999 999 requests/s for
/// 1000 s once passed `check` and ran for hours.
#[test]
fn s75_generated_sources_too_many_requests_together() {
    let source = "\n[[traffic]]\nkind = \"constant\"\nrate = 3e8\n";
    assert_eq!(Case::new(&format!("{BASE}{source}")).run(&["check", "s.toml"]).code, 0);
    Case::new(&format!("{BASE}{source}{source}")).refused(&[
        "s.toml:22:1: the generated sources send about 1.2e9 requests in all up to `traffic[2]`: a scenario's generated sources may produce at most 1e9 requests together (use a CSV trace, or several runs, for more)",
    ]);
}

/// A dotted key whose first part takes no table (`burst.x = 1`) is named
/// by that part; it once named the key on the line before (`kind`).
#[test]
fn s76_dotted_key_names_its_own_key() {
    Case::new(&with_limiter("kind = \"gcra\"\nburst.x = 1")).refused(&[
        "s.toml:16:1: `limiter[0].burst`: expected a whole number or a list of them (like 10 or [2, 10]), found a table",
    ]);
    Case::new(&with_limiter("kind = \"token_bucket\"\ncapacity = 5\nmax_wait.x = \"1s\""))
        .refused(&["s.toml:17:1: `limiter[0].max_wait`: expected a string, found a table"]);
    Case::new(&with("kind = \"slot_counter\"", "kind.x = \"gcra\""))
        .refused(&["s.toml:15:1: `limiter[0].kind`: expected a string, found a table"]);
    Case::new(&with("start = \"100ms\"", "start.x = \"1s\""))
        .refused(&["s.toml:10:1: `traffic[0].start`: expected a string, found a table"]);
    Case::new(&with_retry("policy = \"fixed\"\nbase.x = \"1s\""))
        .refused(&["s.toml:20:1: `retry.base`: expected a string, found a table"]);
    Case::new(&with_nodes("[nodes]\ncount.x = 3\n"))
        .refused(&["s.toml:19:1: `nodes.count`: expected a whole number, found a table"]);
    Case::new(&format!("{BASE}\n[output]\nbin.x = \"1s\"\n"))
        .refused(&["s.toml:19:1: `output.bin`: expected a string, found a table"]);
    Case::new(&format!("{BASE}\n[sweep]\ngrid.x = 3\n"))
        .refused(&["s.toml:19:1: `sweep.grid`: expected a whole number, found a table"]);
}

/// Control characters and invisible ones from the scenario are escaped in
/// messages, as the `name` and trace text were (`t28`): an escape sequence
/// once cleared the screen, a NUL was printed as is, a zero-width space
/// made `1\u{200b}s` read as `1s`.
#[test]
fn s77_control_characters_in_scenario_text_are_escaped() {
    let clean = |err: &str| {
        assert!(!err.contains(['\u{1b}', '\0', '\u{200b}']), "{err:?}");
    };
    let window = |w: &str| with("window = \"1s\"", &format!("window = \"{w}\""));
    clean(&Case::new(&window("1\\u001b[2Js")).refused_with(&[
        "s.toml:6:10: `limit.window`: `1\\u{1b}[2Js` has `\\u{1b}` after `1`: a duration is one or more parts, each a number and a unit, written together, like \"10ms\", \"1s\" or \"1m30s\" (units: ns, us or µs, ms, s, m or min, h, d)",
    ]));
    clean(
        &Case::new(&window("1\\u0000s")).refused_with(&["`limit.window`: `1\\u{0}s` has `\\u{0}` after `1`"]),
    );
    clean(
        &Case::new(&window("1\\u200bs"))
            .refused_with(&["`limit.window`: `1\\u{200b}s` has `\\u{200b}` after `1`"]),
    );
    clean(&Case::new(&with("kind = \"burst\"", "kind = \"b\\u001b[31murst\"")).refused_with(&[
        "s.toml:9:8: `traffic[0].kind` = \"b\\u{1b}[31murst\" is not known: expected one of \"burst\", \"constant\", \"poisson\", \"csv\", \"closed\"",
    ]));
    clean(
        &Case::new(&with("name = \"t\"", "name = \"t\"\n\"x\\u001b[2J\" = 1"))
            .refused_with(&["s.toml:2:1: unknown field `x\\u{1b}[2J`, expected one of `name`"]),
    );
    clean(
        &Case::new(&with_traffic("kind = \"csv\"\npath = \"\\u001b[2Jnope.csv\""))
            .refused_with(&["s.toml:10:8: `traffic[0].path`: trace file \\u{1b}[2Jnope.csv does not exist"]),
    );
    clean(
        &Case::new(&with("name = \"t\"", "name = \"a\\u001bb\""))
            .refused_with(&["s.toml:1:8: `name` = \"a\\u{1b}b\" cannot name an output folder"]),
    );
    // The scenario file's own name, in every message that names it (it
    // once reached the terminal raw in errors and in a run's header).
    let named = Case::new(BASE).file("e\u{1b}[31mX.toml", with("count = 20", "count = 2.5"));
    let out = named.run(&["check", "e\u{1b}[31mX.toml"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.starts_with("error: e\\u{1b}[31mX.toml:12:9: `traffic[0].count`"), "{:?}", out.stderr);
    clean(&out.stderr);
    let out = named.file("e\u{1b}[31mX.toml", BASE).run(&[
        "run",
        "e\u{1b}[31mX.toml",
        "--out",
        "out",
        "--no-charts",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("scenario  t (e\\u{1b}[31mX.toml)"), "{:?}", out.stdout);
    clean(&out.stdout);
    // A description with an escape sequence, a bell, a carriage return and
    // a right-to-left override: escaped on the terminal and in the reports.
    let described = Case::new(&with(
        "name = \"t\"",
        "name = \"t\"\ndescription = \"a\\u001b[31mRED\\u0007\\r\\u202e b\"",
    ));
    let out = described.run(&["run", "s.toml", "--out", "out", "--no-charts"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let said = "a\\u{1b}[31mRED\\u{7}\\r\\u{202e} b";
    assert!(out.stdout.contains(said), "{:?}", out.stdout);
    let report = fs::read_to_string(described.path("out/report.md")).unwrap();
    assert!(report.contains(said), "{report}");
    for text in [out.stdout, report] {
        assert!(!text.contains(['\u{1b}', '\u{7}', '\r', '\u{202e}']), "{text:?}");
    }
}

/// Scenario text quoted in a message is cut to its first 40 bytes when
/// longer than 64, with its length, as trace text is (`t19`, `t27`): a
/// 100 000-character key or value once gave a 100-200 KB message.
#[test]
fn s78_long_scenario_text_is_quoted_short() {
    let long = "x".repeat(100_000);
    let x40 = "x".repeat(40);
    let short = |words: &[&str], text: &str| {
        let err = Case::new(text).refused_with(words);
        assert!(err.len() < 500, "{} bytes: {err}", err.len());
    };
    short(
        &[&format!("s.toml:2:1: unknown field `{x40}...` (100000 bytes), expected one of `name`")],
        &with("name = \"t\"", &format!("name = \"t\"\n{long} = 1")),
    );
    short(
        &[&format!(
            "s.toml:9:8: `traffic[0].kind` = \"{x40}...\" (100000 bytes) is not known: expected one of"
        )],
        &with("kind = \"burst\"", &format!("kind = \"{long}\"")),
    );
    short(
        &[&format!(
            "s.toml:6:10: `limit.window`: `1{}...` (100001 bytes) has an unknown unit `{x40}...` (100000 bytes)",
            "x".repeat(39)
        )],
        &with("window = \"1s\"", &format!("window = \"1{long}\"")),
    );
    short(
        &[&format!(
            "s.toml:5:12: `limit.requests`: expected a whole number, found the string \"{x40}...\" (100000 bytes)"
        )],
        &with("requests = 10", &format!("requests = \"{long}\"")),
    );
    short(
        &[&format!("s.toml:5:12: `limit.requests`: `{x40}...` (100000 bytes) is not a value")],
        &with("requests = 10", &format!("requests = {long}")),
    );
}

/// The name names the output folder and its staging folder beside it; a
/// name too long for a file name once passed `check`, then failed `run`
/// with "File name too long (os error 36)", unlocated, leaving an empty
/// `output/`.
#[test]
fn s79_name_too_long_for_a_folder() {
    let name = "a".repeat(250);
    let c = Case::new(&with("name = \"t\"", &format!("name = \"{name}\"")));
    c.refused(&[&format!(
        "s.toml:1:8: `name` = \"{}...\" (250 bytes) is too long: it names the output folder (output/<name>, and a staging folder .<name>.tmp-<pid>-<random> beside it), which must fit in the 255 bytes a file name may have, so a name may have at most 200 bytes: give a shorter `name`",
        "a".repeat(40)
    )]);
    let out = c.run(&["run", "s.toml"]);
    assert_eq!(out.code, 1);
    assert!(!c.path("output").exists(), "a refused run left output/");
    // Bytes, not characters: 67 three-byte characters are 201 bytes.
    Case::new(&with("name = \"t\"", &format!("name = \"{}\"", "边".repeat(67))))
        .refused(&["s.toml:1:8: `name` = \"", "(201 bytes) is too long"]);
    // 200 bytes fit, with the `-sweeps` of `ratesim sweep`.
    let c = Case::new(&with("name = \"t\"", &format!("name = \"{}\"", "a".repeat(200))));
    let out = c.run(&["run", "s.toml", "--no-charts", "--quiet"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(c.path("output").join("a".repeat(200)).join("summary.csv").is_file());
}

/// A TOML date or time is named as one, not as a "map".
#[test]
fn s80_date_time_for_another_type() {
    Case::new(&with("requests = 10", "requests = 1979-05-27"))
        .refused(&["s.toml:5:12: `limit.requests`: expected a whole number, found the date-time 1979-05-27"]);
    // A duration key says what a duration is, as for a number (s06).
    Case::new(&with("window = \"1s\"", "window = 07:32:00")).refused(&[
        "s.toml:6:10: `limit.window`: expected a string, found the date-time 07:32:00 (a duration is a string with a unit, like \"1s\" or \"100ms\")\n",
    ]);
    Case::new(&with("slots = [2, 10]", "slots = 1979-05-27T07:32:00Z")).refused(&[
        "s.toml:16:9: `limiter[0].slots`: expected a whole number or a list of them (like 10 or [2, 10]), found the date-time 1979-05-27T07:32:00Z",
    ]);
}

/// A character in a duration that is part of no number and no unit is
/// named, with what to write: it was called part of an unknown unit
/// (`h-`, `_`).
#[test]
fn s81_duration_with_a_stray_character() {
    Case::new(&with("window = \"1s\"", "window = \"1h-1s\"")).refused(&[
        "s.toml:6:10: `limit.window`: `1h-1s` has `-` after `1h`: a duration cannot subtract: write the total, in parts that add up, like \"59m59s\" for an hour less a second",
    ]);
    Case::new(&with("window = \"1s\"", "window = \"1_000ms\"")).refused(&[
        "s.toml:6:10: `limit.window`: `1_000ms` has `_` after `1`: write numbers without separators, like \"1000ms\"",
    ]);
    Case::new(&with("window = \"1s\"", "window = \"1s+500ms\"")).refused(&[
        "s.toml:6:10: `limit.window`: `1s+500ms` has `+` after `1s`: the parts of a duration add up with nothing between them: write them together, like \"1m30s\"",
    ]);
}

/// An empty duration says what to give (it said "empty value").
#[test]
fn s82_duration_empty() {
    Case::new(&with("window = \"1s\"", "window = \"\"")).refused(&[
        "s.toml:6:10: `limit.window` is empty: expected a duration, a number and a unit, like \"10ms\", \"1s\" or \"1m30s\" (units: ns, us or µs, ms, s, m or min, h, d)",
    ]);
    Case::new(&with("duration = \"2s\"", "duration = \"  \"")).refused(&["s.toml:2:12: `duration` is empty"]);
}

/// A key of `[limit]` written above the first table header is a top-level
/// key: the missing key's message points at it, and a top-level key that
/// belongs to a table says which.
#[test]
fn s83_key_above_its_table_header() {
    let text = with(
        "duration = \"2s\"\n\n[limit]\nrequests = 10\nwindow = \"1s\"",
        "duration = \"2s\"\nwindow = \"1s\"\n\n[limit]\nrequests = 10",
    );
    Case::new(&text).refused(&[
        "s.toml:5:1: `limit`: missing field `window` (line 3 sets `window` above the first table header, which makes it a top-level key: move it below the [limit] header)",
    ]);
    Case::new(&with("duration = \"2s\"", "duration = \"2s\"\nrequests = 10")).refused(&[
        "s.toml:3:1: unknown field `requests`, expected one of `name`, `description`, `seed`, `duration`, `limit`, `traffic`, `limiter`, `output`, `sweep`, `retry`, `nodes`; `requests` is a key of [limit]: a key belongs to the table whose header is above it, so write it below the [limit] header",
    ]);
}

#[test]
fn s42_check_ok_summary() {
    let c = Case::new(BASE);
    let out = c.run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("ok: s.toml is valid (nothing was run)"), "{}", out.stdout);
    assert!(out.stdout.contains("[0] burst: 20 requests from 0.1 s over 10ms"), "{}", out.stdout);
    assert!(out.stdout.contains("limiters  slot_counter(N=2), slot_counter(N=10)"), "{}", out.stdout);
    assert!(!c.path("output").exists(), "check wrote output");
}

// ---- trace errors -----------------------------------------------------------

fn trace(csv: impl AsRef<[u8]>) -> Case {
    Case::new(CSV_BASE).file("trace.csv", csv)
}

#[test]
fn t01_no_time_column() {
    // On the header's line, and where the scenario names the trace: no
    // `time_column` is set, so it is the default.
    trace("when,id\n0.5,1\n").refused(&[
        "`traffic[0]`, trace.csv, line 1: no `time` column in the header (found: `when`, `id`), the default of `traffic[0].time_column`, which is not set (the source's `path` is set at s.toml:9:8): set time_column on the source to the header's column that holds the times, or name that column `time` in the header\n",
    ]);
}

#[test]
fn t02_field_not_a_number() {
    trace("time\n0.1\nabc\n")
        .refused(&["trace.csv, line 3: field `time`", "`abc` is not a decimal number of seconds"]);
}

/// Seconds in exponent notation, as a spreadsheet or a float printer may
/// write them, are named as such.
#[test]
fn t20_time_with_exponent() {
    trace("time\n0.1\n1.7e+09\n").refused(&[
        "trace.csv, line 3: field `time`: `1.7e+09` is written with an exponent: write the number out in digits (times are read exactly, to the nanosecond)",
    ]);
}

/// A field of a million digits is quoted by its first 40 bytes, not whole.
#[test]
fn t19_huge_field_quoted_short() {
    let field = "1".repeat(1_000_000) + "x";
    let c = trace(format!("time\n0.1\n{field}\n"));
    let err = c.fails(
        &["check", "s.toml"],
        1,
        &[&format!("trace.csv, line 3: field `time`: `{}...` (1000001 bytes) is not a time", "1".repeat(40))],
    );
    assert!(err.len() < 500, "{} bytes", err.len());
}

#[test]
fn t03_negative_time() {
    trace("time\n-1\n").refused(&["trace.csv, line 2: field `time`", "`-1` is negative"]);
}

#[test]
fn t04_backwards_timestamps() {
    trace("time\n0.5\n0.7\n0.4\n").refused(&[
        "trace.csv, line 4: field `time`: 0.4 s is earlier than the row before (0.7 s)",
        "set `sort = true`",
    ]);
}

#[test]
fn t05_backwards_with_sort_is_sorted_in_memory() {
    let c = Case::new(&format!("{CSV_BASE}sort = true\n")).file("trace.csv", "time\n0.5\n0.7\n0.4\n");
    let out = c.run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("3 rows, 0.4 s to 0.7 s; read in full, sorted in memory: 48 B (16 bytes per row), 1 row was out of order"),
        "{}",
        out.stdout
    );
    let out = c.run(&["run", "s.toml", "--out", "out", "--quiet"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let summary = fs::read_to_string(c.path("out/summary.csv")).unwrap();
    assert!(summary.lines().nth(1).unwrap().contains(",3,3,0,"), "{summary}");
}

#[test]
fn t06_empty_file() {
    trace("").refused(&["trace.csv: the file is empty: expected a header row with a `time` column"]);
}

#[test]
fn t07_header_only() {
    trace("time\n").refused(&["trace.csv: the trace has a header but no rows"]);
}

#[test]
fn t08_row_without_the_time_field() {
    trace("id,time\n1,0.5\n2\n")
        .refused(&["trace.csv, line 3: field `time` (column 2) is missing: the row has 1 field"]);
}

#[test]
fn t09_invalid_utf8() {
    trace(b"time\n0.5\n\xff\xfe\n").refused(&["trace.csv, line 3: field `time` is not UTF-8 text"]);
}

#[test]
fn t10_finer_than_a_nanosecond() {
    trace("time\n0.0000000001\n").refused(&["trace.csv, line 2", "finer than one nanosecond"]);
}

#[test]
fn t11_timestamp_too_large() {
    trace("time\n99999999999999999999\n").refused(&["trace.csv, line 2", "too large"]);
}

/// A whole number too large in an integer unit is too large, as in
/// seconds (`t11`), not "not a whole number".
#[test]
fn t21_integer_timestamp_too_large() {
    for (unit, value) in
        [("ms", "99999999999999999999"), ("ms", "18446744073709551616"), ("ns", "18446744073709551616")]
    {
        Case::new(&format!("{CSV_BASE}time_unit = \"{unit}\"\n"))
            .file("trace.csv", format!("time\n{value}\n"))
            .refused(&[&format!(
                "trace.csv, line 2: field `time`: `{value}` is too large (the limit is about 584 years of nanoseconds)"
            )]);
    }
}

/// A decimal time under a whole `time_unit` says what the unit reads,
/// where it is set, and what to do (it said only "is not a whole number").
#[test]
fn t12_fraction_in_integer_unit() {
    Case::new(&format!("{CSV_BASE}time_unit = \"ms\"\n")).file("trace.csv", "time\n1.5\n").refused(&[
        "`traffic[0]`, trace.csv, line 2: field `time`: `1.5` is not a whole number: `traffic[0].time_unit` = \"ms\" (set at s.toml:10:13) reads whole milliseconds; remove `time_unit` to read the times as decimal seconds, or write them in whole milliseconds\n",
    ]);
    Case::new(&format!("{CSV_BASE}time_unit = \"ns\"\n")).file("trace.csv", "time\n5\n0.25\n").refused(&[
        "trace.csv, line 3: field `time`: `0.25` is not a whole number: `traffic[0].time_unit` = \"ns\" (set at s.toml:10:13) reads whole nanoseconds;",
    ]);
    // No number at all: no advice about decimals.
    let err = Case::new(&format!("{CSV_BASE}time_unit = \"ms\"\n"))
        .file("trace.csv", "time\n1x\n")
        .refused_with(&["trace.csv, line 2: field `time`: `1x` is not a whole number\n"]);
    assert!(!err.contains("time_unit"), "{err}");
}

/// A column name near the one sought (by the edit distance of the
/// scenario keys' "did you mean") is suggested: a typo in the header
/// (`tme` for the default `time`) or in the scenario (`key_column =
/// "paht"`), which once listed the columns only.
#[test]
fn t41_column_name_near_the_one_sought() {
    trace("tme,path\n0.5,a\n").refused(&[
        "`traffic[0]`, trace.csv, line 1: no `time` column in the header (found: `tme`, `path`), the default of `traffic[0].time_column`, which is not set (the source's `path` is set at s.toml:9:8); did you mean `time`? Rename the column `tme` to `time` in the header, or set time_column = \"tme\" on the source\n",
    ]);
    Case::new(&format!("{CSV_BASE}key_column = \"paht\"\n")).file("trace.csv", "time,path\n0.5,a\n").refused(&[
        "`traffic[0]`, trace.csv, line 1: no `paht` column in the header (found: `time`, `path`), which `traffic[0].key_column` names (set at s.toml:10:14); did you mean `path`? Set key_column = \"path\" on the source\n",
    ]);
    Case::new(&format!("{CSV_BASE}time_column = \"tme\"\n")).file("trace.csv", "time,path\n0.5,a\n").refused(&[
        "`traffic[0]`, trace.csv, line 1: no `tme` column in the header (found: `time`, `path`), which `traffic[0].time_column` names (set at s.toml:10:15); did you mean `time`? Set time_column = \"time\" on the source\n",
    ]);
    // The header's own line, after blank lines.
    trace("\n\ntme\n0.5\n")
        .refused(&["`traffic[0]`, trace.csv, line 3: no `time` column in the header (found: `tme`)"]);
}

#[test]
fn t13_unknown_time_unit() {
    Case::new(&format!("{CSV_BASE}time_unit = \"sec\"\n")).file("trace.csv", "time\n1\n").refused(&[
        "s.toml:10:13:",
        "`traffic[0].time_unit` = \"sec\" is not known",
        "did you mean \"s\"?",
    ]);
}

/// `time_unit` takes micro as durations do: `us`, or `µs` written with the
/// micro sign (U+00B5) or the Greek mu (U+03BC), which look the same.
#[test]
fn t36_time_unit_micro_with_either_mu_is_accepted() {
    for unit in ["us", "\u{b5}s", "\u{3bc}s"] {
        let c =
            Case::new(&format!("{CSV_BASE}time_unit = \"{unit}\"\n")).file("trace.csv", "time\n250\n1500\n");
        let out = c.run(&["check", "s.toml"]);
        assert_eq!(out.code, 0, "{unit}: {}", out.stderr);
        assert!(out.stdout.contains("trace.csv: 2 rows, 0.00025 s to 0.0015 s"), "{unit}: {}", out.stdout);
    }
}

/// A time of `-0` or `-0.000` is 0: it was called negative ("times and
/// durations start at 0"), which it is not; as a duration's `"-0s"` is 0
/// (s116). Below zero is still negative (t03).
#[test]
fn t40_minus_zero_time_is_zero() {
    let c = trace("time\n-0\n-0.000\n\"-0\"\n0.5\n");
    let out = c.run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("trace.csv: 4 rows, 0 s to 0.5 s"), "{}", out.stdout);
    let c = Case::new(&format!("{CSV_BASE}time_unit = \"ms\"\n")).file("trace.csv", "time\n-0\n500\n");
    let out = c.run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("trace.csv: 2 rows, 0 s to 0.5 s"), "{}", out.stdout);
    trace("time\n-0.001\n").refused(&["trace.csv, line 2: field `time`: `-0.001` is negative"]);
}

/// BOM, CRLF line ends, blank lines and extra columns are all fine.
#[test]
fn t14_bom_crlf_blank_lines_extra_columns_are_accepted() {
    let c = trace("\u{feff}id,time,path,extra\r\n1,0.25,/a\r\n\r\n2,0.5,/b,x\r\n\r\n");
    let out = c.run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("trace.csv: 2 rows, 0.25 s to 0.5 s; read in full, streamed"),
        "{}",
        out.stdout
    );
}

#[test]
fn t15_last_line_without_newline_is_read() {
    let c = trace("time\n0.25\n0.5");
    let out = c.run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("2 rows, 0.25 s to 0.5 s"), "{}", out.stdout);
}

#[test]
fn t16_unterminated_quote() {
    trace("time\n0.1\n\"0.5\n0.6\n").refused(&[
        "trace.csv, line 3: a quote `\"` opened in field `time` (column 1) is never closed: the file ends inside it",
    ]);
}

/// A quote never closed in a column ratesim does not read once made every
/// row after it part of that one field: `check` said ok with 2 rows and
/// `run` replayed 2. The end of the file inside the quote is an error that
/// names the line and column where it opened, on either reading path.
#[test]
fn t22_unterminated_quote_in_a_column_not_read() {
    trace("time,user_agent\n0.001,curl/8.0\n0.002,\"Mozilla/5.0 (truncated\n0.003,curl/8.0\n0.004,curl/8.0\n")
        .refused(&[
            "trace.csv, line 3: a quote `\"` opened in field `user_agent` (column 2) is never closed: the file ends inside it (every line after it would be read as part of that field)",
        ]);
    trace("time,path\n0.1,\"/a\n0.2,/b\n0.3,/c\n0.4,/d\n")
        .refused(&["trace.csv, line 2: a quote `\"` opened in field `path` (column 2) is never closed"]);
    // In the key column.
    Case::new(&format!("{CSV_BASE}key_column = \"client\"\n"))
        .file("trace.csv", "time,client\n0.1,a\n0.2,\"b\n0.3,c\n")
        .refused(&["trace.csv, line 3: a quote `\"` opened in field `client` (column 2) is never closed"]);
}

/// A quote closed a few lines later inside a time or key field makes that
/// field run over those lines: refused, naming them.
#[test]
fn t23_time_or_key_over_several_lines() {
    trace("time\n0.1\n\"0.2\n0.3\"\n0.4\n").refused(&[
        "trace.csv, line 3: field `time` runs over lines 3 to 4: a quote `\"` opens it on line 3 and closes it only on line 4; a time must be on one line (a stray quote reads every line up to the next quote as one field)",
    ]);
    Case::new(&format!("{CSV_BASE}key_column = \"client\"\n"))
        .file("trace.csv", "time,client\n0.1,a\n0.2,\"b\n0.3,c\"\n0.4,d\n")
        .refused(&["trace.csv, line 3: the key field `client` runs over lines 3 to 4"]);
}

/// A quoted line break in a column not read is legal CSV (RFC 4180): the
/// record is read. But a stray quote closed much later reads the same way
/// and swallows the rows in between, so `check` says where such records are.
#[test]
fn t24_a_quoted_line_break_in_a_column_not_read_is_read_and_reported() {
    let c = trace("time,note\n0.1,\"two\nlines\"\n0.2,x\n0.3,\"stray\n0.4,y\n0.5,z\"\n0.6,w\n");
    let out = c.run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("trace.csv: 4 rows, 0.1 s to 0.6 s; read in full, streamed"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "\n              2 records run over more than one line (the first on line 2): a quoted field holds a line break; \
             if a stray quote opened it, every line up to the next quote was read as that one field\n"
        ),
        "{}",
        out.stdout
    );
    let out = c.run(&["run", "s.toml", "--out", "out", "--quiet"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let summary = fs::read_to_string(c.path("out/summary.csv")).unwrap();
    assert!(summary.lines().nth(1).unwrap().contains(",4,4,0,"), "{summary}");
    // Nothing is said of a trace without such records.
    let out = trace("time\n0.1\n").run(&["check", "s.toml"]);
    assert!(!out.stdout.contains("more than one line"), "{}", out.stdout);
}

/// `CSV_BASE` with `duration = "1s"` on line 2 (at column 12, as in `BASE`).
fn csv_with_duration(extra: &str) -> String {
    CSV_BASE.replacen("name = \"t\"\n", "name = \"t\"\nduration = \"1s\"\n", 1) + extra
}

/// A trace that starts at or after `duration` once ran with 0 requests and
/// every ratio n/a. A burst there is refused (`s49`); so is the trace, when
/// its first row is read. `check` reads on and says how many rows are late.
#[test]
fn t25_trace_starting_at_or_after_the_duration() {
    let c = Case::new(&csv_with_duration("")).file("trace.csv", "time\n5\n6\n");
    let first = "trace.csv, line 2: the first row is at 5 s, not before the scenario's `duration` (1 s, set at s.toml:2:12): the run drops every request at or after it, so this trace would send none";
    c.fails(&["check", "s.toml"], 1, &[&format!("{first}; 2 rows from line 2 on are at or after it\n")]);
    c.fails(&["run", "s.toml", "--out", "out"], 1, &[first]);
    assert!(!c.path("out").exists());
    // At the duration itself; and sorted, where no row has a line.
    let c = Case::new(&csv_with_duration("sort = true\n")).file("trace.csv", "time\n1\n");
    c.fails(
        &["check", "s.toml"],
        1,
        &["trace.csv: every row is at or after the scenario's `duration` (1 s, set at s.toml:2:12), the earliest at 1 s", "; 1 row is at or after it"],
    );
    // A bad row after the late ones stops the count; it is no error of its own.
    let c = Case::new(&csv_with_duration("")).file("trace.csv", "time\n5\n6\nabc\n");
    c.fails(
        &["check", "s.toml"],
        1,
        &["; 2 rows from line 2 on are at or after it (counted up to a bad row, which a run never reads: trace.csv, line 4: field `time`: `abc`"],
    );
}

/// A run reads no row at or after `duration`, so a bad or out-of-order row
/// after the first such row is no error: once it failed the run only when
/// another source was merged with the trace. `check` reads as a run does
/// and counts the rows it leaves.
#[test]
fn t26_rows_after_the_duration_are_not_read() {
    let burst = "\n[[traffic]]\nkind = \"burst\"\nstart = \"100ms\"\ncount = 1\n";
    for late in ["abc", "0.7"] {
        for (extra, requests) in [("", 1), (burst, 2)] {
            let c = Case::new(&csv_with_duration(extra)).file("trace.csv", format!("time\n0.5\n5\n{late}\n"));
            let out = c.run(&["check", "s.toml"]);
            assert_eq!(out.code, 0, "{}", out.stderr);
            assert!(
                out.stdout.contains(
                    "trace.csv: 1 row, 0.5 s to 0.5 s; read in full, streamed, in time order; 1 row from line 3 on is at or after `duration` (1 s): a run does not read it (counted up to a bad row, which a run never reads: trace.csv, line 4: field `time`"
                ),
                "{}",
                out.stdout
            );
            let out = c.run(&["run", "s.toml", "--out", "out"]);
            assert_eq!(out.code, 0, "{late} {extra:?}: {}", out.stderr);
            assert!(out.stdout.contains(&format!("trace     {requests} request")), "{}", out.stdout);
        }
    }
    let c = Case::new(&csv_with_duration("")).file("trace.csv", "time\n0.5\n5\n6\n");
    let out = c.run(&["check", "s.toml"]);
    assert!(
        out.stdout
            .contains("; 2 rows from line 3 on are at or after `duration` (1 s): a run does not read them\n"),
        "{}",
        out.stdout
    );
}

/// A header without `time` lists only its first columns, each quoted
/// short: a 20 MB single-line file once gave a 20 MB error, a header of
/// 200 000 columns 2 MB.
#[test]
fn t27_header_error_is_short() {
    let wide: Vec<String> = (0..200_000).map(|i| format!("c{i}")).collect();
    let c = trace(wide.join(",") + "\n1\n");
    let err = c.refused_with(&[
        "trace.csv, line 1: no `time` column in the header (found: `c0`, `c1`, `c2`, `c3`, `c4`, `c5`, `c6`, `c7`, and 199992 more)",
    ]);
    assert!(err.len() < 500, "{} bytes", err.len());
    let c = trace("x".repeat(20_000_000));
    let err = c.refused_with(&[&format!(
        "trace.csv, line 1: no `time` column in the header (found: `{}...` (20000000 bytes))",
        "x".repeat(40)
    )]);
    assert!(err.len() < 500, "{} bytes", err.len());
}

/// Control characters from a trace are escaped in messages: an escape
/// sequence once cleared the screen, a NUL was printed as is.
#[test]
fn t28_control_characters_are_escaped() {
    let err = trace("time\n\x1b[2Jabc\n").refused_with(&[
        "trace.csv, line 2: field `time`: `\\u{1b}[2Jabc` is not a decimal number of seconds",
    ]);
    assert!(!err.contains('\x1b'), "{err:?}");
    let err = trace("time\x00,id\n1,2\n")
        .refused_with(&["trace.csv, line 1: no `time` column in the header (found: `time\\u{0}`, `id`)"]);
    assert!(!err.contains('\0'), "{err:?}");
    // A zero-width space reads as nothing: escaped, the name is not `time`.
    trace("ti\u{200b}me,id\n1,2\n")
        .refused(&["trace.csv, line 1: no `time` column in the header (found: `ti\\u{200b}me`, `id`)"]);
}

/// A trace's path, and the scenario's where a run's failure or a trace
/// error names it, pass through the same escaping as the rest of a
/// message: they once reached the terminal raw (an escape sequence in a
/// file name cleared the screen), where the scenario errors' did not.
#[test]
fn t39_control_characters_in_a_trace_path_are_escaped() {
    let trace = "t\u{1b}[2J.csv";
    let c = Case::new(&CSV_BASE.replace("trace.csv", "t\\u001b[2J.csv")).file(trace, "time\n0.1\nabc\n");
    let err = c.refused_with(&[
        "`traffic[0]`, t\\u{1b}[2J.csv, line 3: field `time`: `abc` is not a decimal number of seconds",
    ]);
    assert!(!err.contains('\x1b'), "{err:?}");
    let scenario = "s\u{1b}[1m.toml";
    let c = c
        .file(scenario, csv_with_duration("").replace("trace.csv", "t\\u001b[2J.csv"))
        .file(trace, "time\n5\n");
    let out = c.run(&["run", scenario, "--out", "out"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.starts_with(
            "error: scenario s\\u{1b}[1m.toml failed; nothing was written\n  caused by: `traffic[0]`, t\\u{1b}[2J.csv, line 2: the first row is at 5 s, not before the scenario's `duration` (1 s, set at s\\u{1b}[1m.toml:2:12)"
        ),
        "{:?}",
        out.stderr
    );
    assert!(!out.stderr.contains('\x1b'), "{:?}", out.stderr);
    dump(&["run", scenario, "--out", "out"], 1, &out.stderr);
}

/// An empty time field says what it should hold (once: "empty value").
#[test]
fn t29_empty_time_field() {
    trace("time,id\n\n0.5\n,\n").refused(&[
        "`traffic[0]`, trace.csv, line 4: field `time` is empty: expected a time in decimal seconds, like 0.995 or 12",
    ]);
    Case::new(&format!("{CSV_BASE}time_unit = \"ms\"\n")).file("trace.csv", "time\n5\n  \n").refused(&[
        "trace.csv, line 3: field `time` is empty: expected a time in whole milliseconds, like 995",
    ]);
}

/// A file without a header: its first row is read as one, and the error
/// says so.
#[test]
fn t30_no_header_row() {
    trace("0.5\n0.6\n").refused(&[
        "trace.csv, line 1: no `time` column in the header (found: `0.5`), the default of `traffic[0].time_column`, which is not set (the source's `path` is set at s.toml:9:8): line 1 is read as the header, and `0.5` looks like data: a trace starts with a header row that names its columns, like `time`",
    ]);
}

/// The column's name in another case: no hint said that names are
/// matched with their case, and how to match it.
#[test]
fn t38_column_name_in_another_case() {
    trace("Time,id\n0.5,1\n").refused(&[
        "`traffic[0]`, trace.csv, line 1: no `time` column in the header (found: `Time`, `id`), the default of `traffic[0].time_column`, which is not set (the source's `path` is set at s.toml:9:8): column names are matched with their case, and `Time` is not `time`: write it `time` in the header, or set time_column = \"Time\" on the source\n",
    ]);
    Case::new(&format!("{CSV_BASE}key_column = \"client\"\n")).file("trace.csv", "time,CLIENT\n0.5,a\n").refused(&[
        "`traffic[0]`, trace.csv, line 1: no `client` column in the header (found: `time`, `CLIENT`), which `traffic[0].key_column` names (set at s.toml:10:14): column names are matched with their case, and `CLIENT` is not `client`: write it `client` in the header, or set key_column = \"CLIENT\" on the source\n",
    ]);
}

/// Fields separated by `;` or tabs are one field to a comma-separated
/// reader: the error says that is what happened.
#[test]
fn t31_semicolon_or_tab_separated() {
    for (text, found) in [("time;id\n0.5;1\n", "`time;id`"), ("time\tid\n0.5\t1\n", "`time\\tid`")] {
        trace(text).refused(&[&format!(
            "trace.csv, line 1: no `time` column in the header (found: {found}), the default of `traffic[0].time_column`, which is not set (the source's `path` is set at s.toml:9:8): fields are separated by commas here, so `;` or tabs are part of the names: a file separated by `;` or tabs is not supported, save it with commas"
        )]);
    }
}

/// A UTF-16 file (as some Windows tools save CSV) is named as such.
#[test]
fn t32_utf16_file() {
    let utf16: Vec<u8> = "\u{feff}time\n0.5\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
    trace(utf16).refused(&[
        "trace.csv, line 1: no `time` column in the header",
        ": the file looks like UTF-16 text: save it as UTF-8",
    ]);
}

/// Trace errors name their `[[traffic]]` entry: one file may be read by
/// several, each with its own columns.
#[test]
fn t33_errors_name_the_traffic_entry() {
    let text =
        format!("{CSV_BASE}\n[[traffic]]\nkind = \"csv\"\npath = \"trace.csv\"\nkey_column = \"client\"\n");
    Case::new(&text)
        .file("trace.csv", "time,user\n0.1,a\n")
        .refused(&["`traffic[1]`, trace.csv, line 1: no `client` column in the header (found: `time`, `user`), which `traffic[1].key_column` names (set at s.toml:14:14): set key_column on the source to the header's column that holds the client keys, or name that column `client` in the header\n"]);
    let text = format!("{CSV_BASE}\n[[traffic]]\nkind = \"csv\"\npath = \"other.csv\"\n");
    Case::new(&text)
        .file("trace.csv", "time\n0.1\n")
        .file("other.csv", "time\n0.1\nx\n")
        .refused(&["`traffic[1]`, other.csv, line 3: field `time`: `x`"]);
}

/// A row with more fields than the header has columns: a decimal comma
/// (`0,1`) once read as 0 s, the rest of the number dropped, and `check`
/// said ok.
#[test]
fn t34_row_with_more_fields_than_the_header() {
    trace("time\n0,1\n0,5\n").refused(&[
        "`traffic[0]`, trace.csv, line 2: the row has 2 fields, but the header has 1 column (`time`): a comma inside a field splits it (a decimal comma, like `0,5`, makes two fields): write decimals with a point, like 0.5, and quote a field that holds a comma",
    ]);
    trace("time,user\n0.1,a\n0.2,\"b\",c\n")
        .refused(&["trace.csv, line 3: the row has 3 fields, but the header has 2 columns (`time`, `user`)"]);
}

/// A header that names the time (or key) column twice: which one is read
/// was a matter of order.
#[test]
fn t35_column_named_twice() {
    trace("time,time\n0.1,0.2\n").refused(&[
        "`traffic[0]`, trace.csv, line 1: the header names the column `time` twice (columns 1 and 2): which one holds the times is unclear; rename or remove one",
    ]);
    Case::new(&format!("{CSV_BASE}key_column = \"user\"\n"))
        .file("trace.csv", "user,time,user\n1,0.1,1\n")
        .refused(&["trace.csv, line 1: the header names the column `user` twice (columns 1 and 3): which one holds the client keys"]);
}

/// Line numbers are file lines: blank lines and CRLF ends count as written.
#[test]
fn t17_line_numbers_count_blank_lines() {
    trace("time\r\n0.1\r\n\r\n\r\n0.2\r\nabc\r\n").refused(&["trace.csv, line 6: field `time`: `abc`"]);
    // Old Mac line ends (CR only) are lines too.
    trace("time\r0.1\r\r0.2\rabc\r").refused(&["trace.csv, line 5: field `time`: `abc`"]);
}

/// A bad row right after a blank line is named by its own line, not the
/// blank one before it.
#[test]
fn t18_bad_row_right_after_blank_lines() {
    trace("time\n0.5\n\nabc\n").refused(&["trace.csv, line 4: field `time`: `abc`"]);
    trace("time\r\n0.5\r\n\r\n\r\nabc\r\n").refused(&["trace.csv, line 5: field `time`: `abc`"]);
}

// ---- outputs ----------------------------------------------------------------

#[test]
fn o01_out_is_a_file() {
    let c = Case::new(BASE).file("taken", "precious");
    c.fails(&["run", "s.toml", "--out", "taken"], 1, &["output path taken is a file, not a directory"]);
    assert_eq!(fs::read_to_string(c.path("taken")).unwrap(), "precious");
    // A device is no file (it was called one).
    #[cfg(unix)]
    c.fails(
        &["run", "s.toml", "--out", "/dev/null"],
        1,
        &["output path /dev/null is a device, not a directory"],
    );
}

/// A loop of symbolic links as `--out` was replaced by a folder, the
/// links gone; it is refused, and so is a folder under one.
#[cfg(unix)]
#[test]
fn o20_out_is_a_loop_of_links() {
    let c = Case::new(BASE);
    std::os::unix::fs::symlink("b", c.path("a")).unwrap();
    std::os::unix::fs::symlink("a", c.path("b")).unwrap();
    c.fails(
        &["run", "s.toml", "--out", "a"],
        1,
        &["error: output path a is a symbolic link that never reaches a folder (a loop of links): give a folder, or fix the link"],
    );
    c.fails(
        &["run", "s.toml", "--out", "a/x"],
        1,
        &["error: cannot write output to a/x: a is a symbolic link that leads to no folder, not a directory"],
    );
    assert!(
        fs::symlink_metadata(c.path("a")).unwrap().file_type().is_symlink(),
        "the link is left as it was"
    );
}

#[test]
fn o02_out_under_a_file() {
    let c = Case::new(BASE).file("taken", "precious");
    c.fails(&["run", "s.toml", "--out", "taken/x"], 1, &["cannot write output to taken/x: taken is a file"]);
    // The same as /etc/passwd/x: fails even as root.
    c.fails(&["run", "s.toml", "--out", "/etc/passwd/x"], 1, &["/etc/passwd is a file, not a directory"]);
    #[cfg(unix)]
    c.fails(
        &["run", "s.toml", "--out", "/dev/null/x"],
        1,
        &["/dev/null/x: /dev/null is a device, not a directory"],
    );
}

/// /proc refuses new directories even to root, so this fails in CI containers too.
#[cfg(target_os = "linux")]
#[test]
fn o03_out_in_an_unwritable_place() {
    let c = Case::new(BASE);
    c.fails(
        &["run", "s.toml", "--out", "/proc/ratesim-out"],
        1,
        &["cannot write output to /proc/ratesim-out: creating /proc/.ratesim-out.tmp-", "caused by:"],
    );
}

#[test]
fn o05_out_names_no_folder() {
    let c = Case::new(BASE);
    fs::create_dir(c.path("pz")).unwrap();
    // `pz/.` once ran the whole scenario, then failed to move the results
    // into place with an OS error.
    for out in [".", "..", "/", "sub/..", "pz/.", "pz/./", "pz/.."] {
        c.fails(
            &["run", "s.toml", "--out", out],
            1,
            &[&format!("output path `{out}` names no folder"), "like out/run1"],
        );
    }
    assert!(!c.path("summary.csv").exists());
    assert_eq!(fs::read_dir(c.path("pz")).unwrap().count(), 0, "nothing staged in pz");
    assert_eq!(fs::read_dir(c.dir.path()).unwrap().count(), 2, "s.toml and pz only");
}

/// A run replaces its output folder whole, so it refuses one that holds
/// anything a run did not write (here a text file, then a subfolder beside
/// an earlier run's files), and leaves it as it was; an
/// earlier run's folder and an empty one are replaced.
#[test]
fn o06_out_holds_files_ratesim_did_not_write() {
    let c = Case::new(BASE);
    fs::create_dir_all(c.path("mine")).unwrap();
    fs::write(c.path("mine/important.txt"), "precious").unwrap();
    c.fails(
        &["run", "s.toml", "--out", "mine"],
        1,
        &["error: output folder mine holds mine/important.txt, which ratesim did not write: a run replaces its output folder whole"],
    );
    assert_eq!(fs::read_to_string(c.path("mine/important.txt")).unwrap(), "precious");
    assert_eq!(fs::read_dir(c.path("mine")).unwrap().count(), 1);
    let out = c.run(&["run", "s.toml", "--out", "ours", "-q", "--no-charts"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    fs::create_dir(c.path("ours/sub")).unwrap();
    c.fails(&["run", "s.toml", "--out", "ours"], 1, &["holds ours/sub, which ratesim did not write"]);
    fs::remove_dir(c.path("ours/sub")).unwrap();
    // Notes of the user's own kept beside an earlier run's report.
    fs::write(c.path("ours/notes.md"), "mine").unwrap();
    c.fails(&["run", "s.toml", "--out", "ours"], 1, &["holds ours/notes.md, which ratesim did not write"]);
    assert_eq!(fs::read_to_string(c.path("ours/notes.md")).unwrap(), "mine");
    fs::remove_file(c.path("ours/notes.md")).unwrap();
    fs::create_dir(c.path("empty")).unwrap();
    for out in ["ours", "empty"] {
        let run = c.run(&["run", "s.toml", "--out", out, "-q", "--no-charts"]);
        assert_eq!(run.code, 0, "{out}: {}", run.stderr);
        assert!(c.path(out).join("report.md").exists());
    }
}

/// A run replaces its output folder whole: one that holds what the run
/// reads is refused before any work. A trace kept in an earlier run's folder
/// under a run's file name (`decisions.csv`) was deleted by the run that
/// read it.
#[test]
fn o10_out_holds_an_input() {
    let c = Case::new(BASE);
    let out = c.run(&["run", "s.toml", "--out", "out", "-q", "--no-charts", "--decisions"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    fs::write(
        c.path("r.toml"),
        "name = \"r\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[[traffic]]\nkind = \"csv\"\npath = \"out/decisions.csv\"\nsort = true\n",
    )
    .unwrap();
    let before = c.snapshot("out");
    c.fails(
        &["run", "r.toml", "--out", "out"],
        1,
        &["error: output folder out holds out/decisions.csv, the trace of `traffic[0]`: a run replaces its output folder whole, which would delete it; give another --out, or move the file out of out"],
    );
    c.fails(
        &["sweep", "r.toml", "--out", "./out/../out"],
        1,
        &["holds out/decisions.csv, the trace of `traffic[0]`"],
    );
    assert_eq!(c.snapshot("out"), before, "the trace and the results stay");
    // The scenario file itself, and the chart fonts.
    fs::create_dir(c.path("sub")).unwrap();
    fs::copy(c.path("s.toml"), c.path("sub/s.toml")).unwrap();
    c.fails(
        &["run", "sub/s.toml", "--out", "sub"],
        1,
        &["output folder sub holds sub/s.toml, the scenario file"],
    );
    fs::write(c.path("sub/f.ttf"), dejavu::sans::regular()).unwrap();
    c.fails(
        &["run", "s.toml", "--out", "sub", "--font", "sub/f.ttf"],
        1,
        &["holds sub/f.ttf, the chart font of --font"],
    );
    fs::write(c.path("f.toml"), format!("{BASE}\n[output]\nfont = \"sub/f.ttf\"\n")).unwrap();
    c.fails(&["run", "f.toml", "--out", "sub"], 1, &["holds sub/f.ttf, the chart font of `output.font`"]);
    assert!(c.path("sub/s.toml").is_file() && c.path("sub/f.ttf").is_file());
}

/// A run that fails into a new folder says nothing was written: there were
/// no previous results to keep (it once said they were kept).
#[test]
fn o09_failed_run_into_a_new_folder() {
    let c = trace("time\n0.1\nx\n");
    c.fails(
        &["run", "s.toml", "--out", "out"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written\n",
            "caused by: `traffic[0]`, trace.csv, line 3",
        ],
    );
    assert!(!c.path("out").exists());
    // An empty folder holds no results either.
    fs::create_dir(c.path("empty")).unwrap();
    c.fails(
        &["run", "s.toml", "--out", "empty"],
        1,
        &["error: scenario s.toml failed; nothing was written\n"],
    );
    // Nor are folders above the target that the run created (they were
    // left behind, empty); one that was there stays.
    c.fails(&["run", "s.toml", "--out", "new/deeper/out"], 1, &["nothing was written\n"]);
    c.fails(&["run", "s.toml", "--out", "empty/deeper/out"], 1, &["nothing was written\n"]);
    assert!(!c.path("new").exists());
    assert!(c.path("empty").is_dir() && !c.path("empty/deeper").exists());
}

/// A bad row after good ones fails the run; the previous results stay.
#[test]
fn o04_failed_run_keeps_previous_results() {
    let c = trace("time\n0.1\n0.2\n");
    let out = c.run(&["run", "s.toml", "--out", "out", "--quiet"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let before = fs::read(c.path("out/summary.csv")).unwrap();
    fs::write(c.path("trace.csv"), "time\n0.1\n0.2\n0.3\nx\n").unwrap();
    c.fails(
        &["run", "s.toml", "--out", "out"],
        1,
        &[
            "scenario s.toml failed; previous results were kept",
            "caused by: `traffic[0]`, trace.csv, line 5: field `time`",
        ],
    );
    assert_eq!(fs::read(c.path("out/summary.csv")).unwrap(), before);
    let names: Vec<String> = fs::read_dir(c.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains(".tmp-")), "staging left behind: {names:?}");
}

// ---- usage and exit codes ---------------------------------------------------

#[test]
fn x01_no_arguments_is_usage_error() {
    // clap prints the help (not an `error:` line) to stderr, and exits 2.
    let out = Case::new(BASE).run(&[]);
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains("Usage: ratesim <COMMAND>") && out.stderr.contains("check"),
        "{}",
        out.stderr
    );
}

#[test]
fn x02_unknown_subcommand() {
    Case::new(BASE).fails(
        &["runn", "s.toml"],
        2,
        &["unrecognized subcommand 'runn'", "tip: a similar subcommand exists: 'run'"],
    );
}

#[test]
fn x03_unknown_flag() {
    Case::new(BASE).fails(
        &["run", "s.toml", "--sloots", "2"],
        2,
        &["unexpected argument '--sloots'", "tip: a similar argument exists: '--slots'"],
    );
}

#[test]
fn x04_missing_scenario_argument() {
    Case::new(BASE).fails(
        &["check"],
        2,
        &["the following required arguments were not provided", "<SCENARIO>"],
    );
}

/// The message of a bad `--slots` value, as clap wraps it.
fn slots_usage_error(value: &str, message: &str) -> String {
    format!(
        "error: invalid value '{value}' for '--slots <LIST>': {message}\n\nFor more information, try '--help'.\n"
    )
}

#[test]
fn x05_slots_zero_on_the_command_line() {
    // It once said "0 is not in 1..18446744073709551615", a range that
    // read as excluding its end and said nothing of the window.
    let stderr = Case::new(BASE).fails(&["run", "s.toml", "--slots", "2,0"], 2, &[]);
    assert_eq!(
        stderr,
        slots_usage_error(
            "0",
            "slot count 0 is out of range: it must be between 1 and the window length in nanoseconds"
        )
    );
}

/// A slot count past u64 once got Rust's "number too large to fit in
/// target type", which named neither the key nor the range.
#[test]
fn x13_slots_past_u64_on_the_command_line() {
    let c = Case::new(BASE);
    for list in ["99999999999999999999999", "2,18446744073709551616"] {
        let value = list.rsplit(',').next().unwrap();
        let stderr = c.fails(&["run", "s.toml", "--slots", list], 2, &[]);
        assert_eq!(
            stderr,
            slots_usage_error(
                value,
                &format!(
                    "slot count {value} is out of range: it must be between 1 and the window length in nanoseconds, and no window is longer than 18446744073709551615 ns"
                )
            )
        );
    }
    // u64::MAX itself is a number: the window refuses it (x06's message).
    c.fails(
        &["run", "s.toml", "--slots", "18446744073709551615"],
        1,
        &["slot count 18446744073709551615 is out of range: it must be between 1 and the window length in nanoseconds (1000000000)"],
    );
    assert!(!c.path("output").exists());
}

/// An empty slot count (`--slots ""`, `2,,3`, `2,`) once got Rust's
/// "cannot parse integer from empty string"; text that is no number, its
/// "invalid digit found in string".
#[test]
fn x14_slots_empty_or_not_a_number_on_the_command_line() {
    let c = Case::new(BASE);
    let empty = "a slot count is empty (an empty list, two commas in a row, or a comma at an end): expected whole numbers, each between 1 and the window length in nanoseconds, with one comma between two, like 2,10,100";
    for list in ["", "2,,3", "2,", ",2"] {
        let stderr = c.fails(&["run", "s.toml", "--slots", list], 2, &[]);
        assert_eq!(stderr, slots_usage_error("", empty), "--slots {list:?}");
    }
    for (list, value) in [("abc", "abc"), ("2,1.5", "1.5"), ("1e3", "1e3")] {
        let stderr = c.fails(&["run", "s.toml", "--slots", list], 2, &[]);
        assert_eq!(
            stderr,
            slots_usage_error(
                value,
                &format!(
                    "`{value}` is not a slot count: expected a whole number in digits, between 1 and the window length in nanoseconds, like 2 or 2,10,100"
                )
            )
        );
    }
    assert!(!c.path("output").exists());
}

#[test]
fn x06_slots_more_than_nanoseconds_on_the_command_line() {
    let c = Case::new(&with("window = \"1s\"", "window = \"10ns\""));
    c.fails(&["run", "s.toml", "--slots", "11"], 1, &["--slots", "slot count 11 is out of range", "(10)"]);
}

#[test]
fn x07_seed_not_a_number() {
    // Rust's own words once: "invalid digit found in string", "cannot
    // parse integer from empty string".
    let range = "it must be between 0 and 9223372036854775807, what a scenario's `seed` can hold";
    for (value, message) in [
        ("abc", format!("`abc` is not a seed: expected a whole number in digits; {range}")),
        ("", format!("the seed is empty: expected a whole number; {range}")),
    ] {
        let stderr = Case::new(BASE).fails(&["run", "s.toml", "--seed", value], 2, &[]);
        assert_eq!(stderr, seed_usage_error(value, &message));
    }
    // A negative number is a bad value, not clap's "unexpected argument
    // '-1'" with a tip to write `-- -1`; in `--slots` too.
    let stderr = Case::new(BASE).fails(&["run", "s.toml", "--seed", "-1"], 2, &[]);
    assert_eq!(stderr, seed_usage_error("-1", &format!("seed -1 is out of range: {range}")));
    let stderr = Case::new(BASE).fails(&["run", "s.toml", "--slots", "2,-5"], 2, &[]);
    assert_eq!(
        stderr,
        slots_usage_error(
            "-5",
            "slot count -5 is out of range: it must be between 1 and the window length in nanoseconds"
        )
    );
}

/// `--seed` takes what a scenario's `seed` can hold (TOML integers stop at
/// 2^63 - 1), so the seed a report names can be written back.
#[test]
fn x11_seed_past_what_a_scenario_holds() {
    // Past u64 too, which once said "number too large to fit in target type".
    for value in ["9223372036854775808", "99999999999999999999999"] {
        let stderr = Case::new(BASE).fails(&["run", "s.toml", "--seed", value], 2, &[]);
        assert_eq!(
            stderr,
            seed_usage_error(
                value,
                &format!(
                    "seed {value} is out of range: it must be between 0 and 9223372036854775807, what a scenario's `seed` can hold"
                )
            )
        );
    }
}

/// The message of a bad `--seed` value, as clap wraps it.
fn seed_usage_error(value: &str, message: &str) -> String {
    format!(
        "error: invalid value '{value}' for '--seed <SEED>': {message}\n\nFor more information, try '--help'.\n"
    )
}

/// `--no-charts` with `--format` or `--font`: the chart options would be
/// ignored, so clap refuses the pair.
#[test]
fn x12_no_charts_with_chart_options() {
    let c = Case::new(BASE);
    c.fails(
        &["run", "s.toml", "--no-charts", "--format", "png"],
        2,
        &["error: the argument '--no-charts' cannot be used with '--format <LIST>'"],
    );
    c.fails(
        &["sweep", "s.toml", "--font", "f.ttf", "--no-charts"],
        2,
        &["error: the argument '--font <FILE>' cannot be used with '--no-charts'"],
    );
    assert!(!c.path("output").exists());
}

#[test]
fn x08_help_and_version_exit_0() {
    let c = Case::new(BASE);
    let out = c.run(&["--help"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("check") && out.stdout.contains("run"), "{}", out.stdout);
    let out = c.run(&["--version"]);
    assert_eq!((out.code, out.stdout.trim()), (0, "ratesim 0.1.0"));
}

#[test]
fn x09_success_exits_0() {
    let c = Case::new(BASE);
    let out = c.run(&["run", "s.toml", "--out", "out"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("wrote out/ (summary.csv, summary.md, timeline.csv, report.md and 3 charts)"),
        "{}",
        out.stdout
    );
    assert!(c.path("out/summary.csv").is_file());
}

/// `ratesim run ... | head -c 0`: the reader is gone before the table is
/// printed. The run exits 0 and prints nothing on stderr.
#[test]
fn x10_closed_pipe_exits_quietly() {
    let c = Case::new(BASE);
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin!("ratesim"))
        .current_dir(c.dir.path())
        .args(["run", "s.toml", "--out", "out"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // close the read end at once
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stderr, "");
    assert!(c.path("out/summary.csv").is_file(), "results are committed before printing");
}

// ---- client keys (Poisson `clients`, CSV `key_column`) ----------------------

const POISSON: &str = "kind = \"poisson\"\nrate = 100.0";

#[test]
fn k01_zero_clients() {
    Case::new(&with_traffic(&format!("{POISSON}\nclients = 0")))
        .refused(&["s.toml:", "`traffic[0].clients` must be a whole number of at least 1, got 0"]);
}

#[test]
fn k02_negative_skew() {
    Case::new(&with_traffic(&format!("{POISSON}\nclients = 10\nskew = -1.0")))
        .refused(&["s.toml:", "`traffic[0].skew` must be a finite number of at least 0, got -1"]);
}

#[test]
fn k03_skew_without_clients() {
    Case::new(&with_traffic(&format!("{POISSON}\nskew = 1.1")))
        .refused(&["s.toml:11:8: `traffic[0].skew` needs `clients`: it is the Zipf exponent that spreads the source's requests over its client keys, and the source has none; give it clients = 100 (or any number of clients), or remove `skew`\n"]);
}

#[test]
fn k04_missing_key_column() {
    Case::new(&format!("{CSV_BASE}key_column = \"client\"\n"))
        .file("trace.csv", "time,user\n0.1,a\n")
        .refused(&[
            "`traffic[0]`, trace.csv, line 1: no `client` column in the header (found: `time`, `user`), which `traffic[0].key_column` names (set at s.toml:10:14): set key_column on the source to the header's column that holds the client keys, or name that column `client` in the header\n",
        ]);
}

#[test]
fn k05_row_without_its_key_field() {
    Case::new(&format!("{CSV_BASE}key_column = \"client\"\n"))
        .file("trace.csv", "time,client\n0.1,a\n0.2\n")
        .refused(&["trace.csv, line 3: the key field `client` (column 2) is missing: the row has 1 field"]);
}

#[test]
fn k06_clients_on_a_burst() {
    Case::new(&with(BURST, &format!("{BURST}\nclients = 5")))
        .refused(&["`traffic[0].clients` is not a key of kind \"burst\""]);
}

/// Every client key has its own limiters: a million keys once ran out of
/// memory (and left the staging folder behind) past any `--memory`. Their
/// state is counted against the budget, and the error names the keys.
#[test]
fn k07_many_client_keys_past_the_memory_budget() {
    let c = Case::new(
        &with_traffic("kind = \"poisson\"\nrate = 10000.0\nclients = 9223372036854775807")
            .replace("duration = \"2s\"", "duration = \"100s\""),
    );
    let out = c.run(&["run", "s.toml", "--out", "out", "-q", "--no-charts"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let before = c.snapshot("out");
    c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "16MiB"],
        1,
        &[
            "error: scenario s.toml failed; previous results were kept",
            "caused by: the run keeps limiters for ",
            " client keys (from `traffic[0].clients` = 9223372036854775807): their state and window timestamps hold ",
            "more than the 16.0 MiB the run may use (--memory)",
            "use fewer clients, or a `key_column` with fewer distinct values",
        ],
    );
    assert_eq!(c.snapshot("out"), before, "previous results kept");
    assert_eq!(fs::read_dir(c.dir.path()).unwrap().count(), 2, "s.toml and out only: no staging left");
    // A trace with 300 000 distinct keys.
    let mut csv = String::from("time,client\n");
    for i in 0..300_000u32 {
        csv.push_str(&format!("{}.{:06},c{i}\n", i / 1_000_000, i % 1_000_000));
    }
    Case::new(&format!("{CSV_BASE}key_column = \"client\"\n")).file("trace.csv", csv).fails(
        &["run", "s.toml", "--out", "out", "--memory", "8MiB"],
        1,
        &["client keys (from `traffic[0].key_column` = \"client\" (trace.csv))", "more than the 8.0 MiB"],
    );
}

/// A limiter on many nodes keeps a copy per node for every client key:
/// with 1000 nodes, 86 KB a key, so one chunk of 262 144 new keys once
/// took 3.9 GB under --memory 64MiB, uncounted, and aborted out of memory.
/// Each key's copies count, and chunks are cut so that their new keys stay
/// within a quarter of the budget; the message names the nodes.
/// `key_column` naming the time column: every distinct time a client of
/// its own, each with a limit of its own, so nothing is limited. It ran.
#[test]
fn k09_key_column_is_the_time_column() {
    Case::new(&format!("{CSV_BASE}key_column = \"time\"\n")).file("trace.csv", "time\n0.1\n").refused(&[
        "error: s.toml:10:14: `traffic[0].key_column` = \"time\" is also the time column (`time_column` is not set, and its default is \"time\"): the keys would be the times, each request a client of its own with a limit of its own; name the column that holds the client, like key_column = \"client\", or leave `key_column` out for one client\n",
    ]);
    Case::new(&format!("{CSV_BASE}time_column = \"ts\"\nkey_column = \" ts\"\n"))
        .file("trace.csv", "ts\n0.1\n")
        .refused(&["error: s.toml:11:14: `traffic[0].key_column` = \" ts\" is also `traffic[0].time_column`: the keys would be the times"]);
}

#[test]
fn k08_client_keys_on_many_nodes_past_the_memory_budget() {
    let c = Case::new(
        "name = \"x\"\nduration = \"10s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[[traffic]]\nkind = \"poisson\"\n\
         rate = 100000.0\nclients = 1000000\n[[limiter]]\nkind = \"fixed_window\"\n[nodes]\ncount = 20\n",
    );
    c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "4MiB"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: the run keeps limiters for 1778 client keys (from `traffic[0].clients` = 1000000): their state and window timestamps hold 4.1 MiB, more than the 4.0 MiB the run may use (--memory)",
            "in each of the 2 limiters run, and each limiter on [nodes] a copy on every one of its 20 nodes",
            "or fewer nodes",
        ],
    );
    assert!(!c.path("out").exists());
}

// ---- production limiters: leaky_bucket (nginx) and weighted_window ------------

const SLOTS: &str = "kind = \"slot_counter\"\nslots = [2, 10]";

/// BASE with its slot counter replaced by `kind` and `keys`.
fn limiter(kind: &str, keys: &str) -> String {
    with(SLOTS, &format!("kind = \"{kind}\"\n{keys}"))
}

#[test]
fn lb01_negative_burst() {
    Case::new(&limiter("leaky_bucket", "burst = -1"))
        .refused(&["s.toml:16:9:", "`limiter[0].burst` must be a whole number of at least 0, got -1"]);
}

#[test]
fn lb02_burst_times_1000_overflows() {
    Case::new(&limiter("leaky_bucket", "burst = [5, 9223372036854776]")).refused(&[
        "s.toml:16:13:",
        "`limiter[0].burst[1]` = 9223372036854776 is too large",
        "the most is 9223372036854775",
    ]);
    // Past i64 as well, alone or in a list.
    for (burst, at, key) in [
        ("99999999999999999999", "s.toml:16:9:", "burst"),
        ("[5, 99999999999999999999]", "s.toml:16:13:", "burst[1]"),
    ] {
        Case::new(&limiter("leaky_bucket", &format!("burst = {burst}"))).refused(&[
            at,
            &format!("`limiter[0].{key}` = 99999999999999999999 is too large"),
            "the most is 9223372036854775",
        ]);
    }
}

#[test]
fn lb03_rate_rounds_to_zero() {
    let text = limiter("leaky_bucket", "").replace("window = \"1s\"", "window = \"10001s\"");
    Case::new(&text).refused(&[
        "s.toml:15:8:",
        "whole thousandths of a request per second",
        "[limit] 10 per 10001s rounds to 0",
        "with 10 requests the window may be at most 10000s",
    ]);
}

#[test]
fn lb04_rate_too_large_for_nginx() {
    let text = limiter("leaky_bucket", "")
        .replace("requests = 10", "requests = 9223372036854775807")
        .replace("window = \"1s\"", "window = \"1ms\"");
    Case::new(&text).refused(&["s.toml:15:8:", "more than nginx's integer rate holds"]);
}

#[test]
fn lb05_burst_wrong_type() {
    Case::new(&limiter("leaky_bucket", "burst = \"five\"")).refused(&[
        "s.toml:16:9:",
        "`limiter[0].burst`",
        "expected a whole number or a list of them (like 10 or [2, 10]), found the string \"five\"",
    ]);
}

#[test]
fn lb06_burst_fraction_in_list() {
    Case::new(&limiter("leaky_bucket", "burst = [0, 2.5]")).refused(&[
        "s.toml:16:13:",
        "`limiter[0].burst[1]`",
        "expected a whole number, found the number 2.5",
    ]);
}

#[test]
fn lb07_burst_empty_list() {
    Case::new(&limiter("leaky_bucket", "burst = []"))
        .refused(&["s.toml:16:9:", "`limiter[0].burst` is empty"]);
}

#[test]
fn lb08_unknown_key_near_miss() {
    Case::new(&limiter("leaky_bucket", "brust = 5")).refused(&[
        "s.toml:16:1:",
        "`limiter[0].brust` is not a key of kind \"leaky_bucket\" (it takes: burst, nodelay, delay, retry_after)",
        "did you mean `burst`?",
    ]);
}

#[test]
fn lb09_nodelay_and_delay_together() {
    Case::new(&limiter("leaky_bucket", "burst = 5\nnodelay = true\ndelay = 2")).refused(&[
        "s.toml:17:11:",
        "`limiter[0].nodelay` = true and `delay` exclude each other (nginx's directive lists them as alternatives, `nodelay | delay=number`): give one",
    ]);
}

#[test]
fn lb10_negative_delay() {
    for n in ["-1", "99999999999999999999"] {
        Case::new(&limiter("leaky_bucket", &format!("delay = {n}"))).refused(&[
            "s.toml:16:9:",
            &format!("`limiter[0].delay` must be a whole number from 0 to 9223372036854775, got {n}"),
        ]);
    }
}

#[test]
fn lb11_nodelay_wrong_type() {
    Case::new(&limiter("leaky_bucket", "nodelay = \"no\""))
        .refused(&["s.toml:16:11:", "`limiter[0].nodelay`: expected true or false, found the string \"no\""]);
}

#[test]
fn lb12_delay_above_burst() {
    Case::new(&limiter("leaky_bucket", "burst = 2\ndelay = 5")).refused(&[
        "s.toml:17:9:",
        "`limiter[0].delay` = 5 is more than `burst` = 2: no admitted request would ever wait",
        "write `nodelay = true`",
    ]);
}

// ---- guava (SmoothBursty) ------------------------------------------------------

#[test]
fn gv01_zero_permits_per_second() {
    Case::new(&limiter("guava", "permits_per_second = 0")).refused(&[
        "s.toml:16:22:",
        "`limiter[0].permits_per_second` must be a finite number above 0, got 0",
    ]);
}

/// A rate so slow its interval passes the end of time: Guava's waits would
/// all be clamped to u64::MAX ns (the slowest a limit itself can give is 1
/// per u64::MAX ns, 5.421e-11 per second).
#[test]
fn gv08_permits_per_second_past_the_end_of_time() {
    Case::new(&limiter("guava", "permits_per_second = 1e-300")).refused(&[
        "s.toml:16:22:",
        "`limiter[0].permits_per_second` = 1e-300 is too small: one permit every 1.000e300 s is past the end of time (about 584 years of nanoseconds); use at least 5.421e-11",
    ]);
    let ok = Case::new(&limiter("guava", "permits_per_second = 5.43e-11")).run(&["check", "s.toml"]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
}

#[test]
fn gv02_permits_per_second_wrong_type() {
    Case::new(&limiter("guava", "permits_per_second = \"fast\"")).refused(&[
        "s.toml:16:22:",
        "`limiter[0].permits_per_second`: expected a number, found the string \"fast\"",
    ]);
}

#[test]
fn gv03_negative_max_burst_seconds() {
    Case::new(&limiter("guava", "max_burst_seconds = -1")).refused(&[
        "s.toml:16:21:",
        "`limiter[0].max_burst_seconds` must be a finite number of at least 0, got -1",
    ]);
}

#[test]
fn gv04_timeout_not_a_duration() {
    Case::new(&limiter("guava", "timeout = \"soon\""))
        .refused(&["s.toml:16:11:", "`limiter[0].timeout`: `soon` is not a duration"]);
}

#[test]
fn gv05_negative_timeout() {
    Case::new(&limiter("guava", "timeout = \"-1s\""))
        .refused(&["s.toml:16:11:", "`limiter[0].timeout`: `-1s` is negative"]);
}

#[test]
fn gv06_unknown_key_near_miss() {
    Case::new(&limiter("guava", "timout = \"1s\"")).refused(&[
        "s.toml:16:1:",
        "`limiter[0].timout` is not a key of kind \"guava\" (it takes: permits_per_second, max_burst_seconds, timeout, retry_after)",
        "did you mean `timeout`?",
    ]);
}

#[test]
fn gv07_retry_after_on_a_limiter_that_never_refuses() {
    Case::new(&limiter("guava", "retry_after = \"ceil_seconds\"")).refused(&[
        "s.toml:16:15:",
        "`limiter[0].retry_after`: `guava` never names a time to retry",
        "leave the key out",
    ]);
}

// ---- go_rate (golang.org/x/time/rate) ---------------------------------------------

#[test]
fn gr01_events_per_second_not_above_zero() {
    for v in ["0", "-2.5", "inf", "nan"] {
        Case::new(&limiter("go_rate", &format!("events_per_second = {v}"))).refused(&[
            "s.toml:16:21:",
            "`limiter[0].events_per_second` must be a finite number above 0, got ",
        ]);
    }
}

#[test]
fn gr02_events_per_second_and_every() {
    Case::new(&limiter("go_rate", "events_per_second = 3.0\nevery = \"1s\"")).refused(&[
        "s.toml:17:9:",
        "give `limiter[0].events_per_second` or `every`, not both: rate.Every(interval) is rate.Limit(1 / interval)",
    ]);
}

#[test]
fn gr03_every_zero_or_bare() {
    Case::new(&limiter("go_rate", "every = \"0s\""))
        .refused(&["s.toml:16:9:", "`limiter[0].every` must be longer than 0, got \"0s\""]);
    Case::new(&limiter("go_rate", "every = 5")).refused(&[
        "s.toml:16:9:",
        "`limiter[0].every`: expected a string, found the number 5 (a duration is a string with a unit, like \"1s\" or \"100ms\")",
    ]);
}

#[test]
fn gr04_burst_zero_empty_or_fraction() {
    Case::new(&limiter("go_rate", "burst = 0"))
        .refused(&["s.toml:16:9:", "`limiter[0].burst` must be a whole number of at least 1, got 0"]);
    Case::new(&limiter("go_rate", "burst = []"))
        .refused(&["s.toml:16:9:", "`limiter[0].burst` is empty: give at least one burst"]);
    Case::new(&limiter("go_rate", "burst = [1, 3, 1.5]"))
        .refused(&["s.toml:16:16:", "`limiter[0].burst[2]`: expected a whole number, found the number 1.5"]);
}

#[test]
fn gr05_max_wait_negative() {
    Case::new(&limiter("go_rate", "max_wait = \"-1s\"")).refused(&[
        "s.toml:16:12:",
        "`limiter[0].max_wait`: `-1s` is negative: times and durations start at 0",
    ]);
}

#[test]
fn gr06_unknown_key_near_miss() {
    Case::new(&limiter("go_rate", "brust = 5")).refused(&[
        "s.toml:16:1:",
        "`limiter[0].brust` is not a key of kind \"go_rate\" (it takes: events_per_second, every, burst, max_wait, retry_after)",
        "did you mean `burst`?",
    ]);
}

/// Guava's `timeout` is a duration too: a bare number gets the hint.
#[test]
fn gv09_bare_timeout() {
    Case::new(&limiter("guava", "timeout = 2")).refused(&[
        "s.toml:16:11:",
        "`limiter[0].timeout`: expected a string, found the number 2 (a duration is a string with a unit, like \"1s\" or \"100ms\")",
    ]);
}

// ---- leaky_queue -----------------------------------------------------------------

#[test]
fn lq01_queue_missing() {
    Case::new(&limiter("leaky_queue", "")).refused(&[
        "s.toml:14:1:",
        "`limiter[0].queue` is required for kind \"leaky_queue\": how many requests may wait, like 10",
    ]);
}

#[test]
fn lq02_queue_zero() {
    Case::new(&limiter("leaky_queue", "queue = 0"))
        .refused(&["s.toml:16:9:", "`limiter[0].queue` must be a whole number of at least 1, got 0"]);
}

#[test]
fn lq03_queue_too_large() {
    for n in ["100000000000", "99999999999999999999"] {
        Case::new(&limiter("leaky_queue", &format!("queue = {n}"))).refused(&[
            "s.toml:16:9:",
            &format!("`limiter[0].queue` = {n} is too large: at most 100000000 places"),
        ]);
    }
}

#[test]
fn lq04_queue_list() {
    Case::new(&limiter("leaky_queue", "queue = [1, 2]"))
        .refused(&["s.toml:16:9:", "`limiter[0].queue`: expected a whole number, found a list"]);
}

#[test]
fn ww01_unknown_rounding() {
    Case::new(&limiter("weighted_window", "rounding = \"round\"")).refused(&[
        "s.toml:16:12:",
        "`limiter[0].rounding` = \"round\" is not known: expected one of \"exact\", \"floor\"",
    ]);
}

#[test]
fn ww02_rounding_wrong_type() {
    Case::new(&limiter("weighted_window", "rounding = true")).refused(&[
        "s.toml:16:12:",
        "`limiter[0].rounding`",
        "expected a string, found true",
    ]);
}

#[test]
fn ww03_count_rejected_wrong_type() {
    Case::new(&limiter("weighted_window", "count_rejected = \"yes\"")).refused(&[
        "s.toml:16:18:",
        "`limiter[0].count_rejected`",
        "expected true or false, found the string \"yes\"",
    ]);
}

#[test]
fn ww04_negative_offset() {
    Case::new(&limiter("weighted_window", "offset = \"-300ms\""))
        .refused(&["s.toml:16:10:", "`limiter[0].offset`: `-300ms` is negative"]);
}

#[test]
fn ww05_offset_wrong_type() {
    Case::new(&limiter("weighted_window", "offset = 300")).refused(&[
        "s.toml:16:10:",
        "`limiter[0].offset`",
        "expected a string, found the number 300",
    ]);
}

#[test]
fn ww06_key_of_another_kind() {
    Case::new(&limiter("weighted_window", "burst = 5")).refused(&[
        "s.toml:16:1:",
        "`limiter[0].burst` is not a key of kind \"weighted_window\" (it takes: rounding, offset, count_rejected, retry_after)",
    ]);
}

#[test]
fn r01_retry_after_not_known() {
    Case::new(&with("slots = [2, 10]", "slots = [2, 10]\nretry_after = \"ceil\"")).refused(&[
        "s.toml:17:15:",
        "`limiter[0].retry_after` = \"ceil\" is not known",
        "\"exact\", \"ceil_seconds\", \"floor_seconds\", \"redis_cell\"",
    ]);
}

#[test]
fn r02_retry_after_listed_among_a_kinds_keys() {
    Case::new(&with("slots = [2, 10]", "slots = [2, 10]\nretry_aftr = \"exact\"")).refused(&[
        "`limiter[0].retry_aftr` is not a key of kind \"slot_counter\" (it takes: slots, retry_after)",
        "did you mean `retry_after`?",
    ]);
}

// ---- reacting clients: [retry], [traffic.retry], kind = "closed", [sweep] retry_policies

/// `BASE` with a `[retry]` table on line 18 (keys from line 19).
fn with_retry(table: &str) -> String {
    format!("{BASE}\n[retry]\n{table}\n")
}

/// `BASE` whose source is a closed population (keys from line 9).
fn closed(keys: &str) -> String {
    with_traffic(&format!("kind = \"closed\"\n{keys}"))
}

#[test]
fn r03_policy_not_known() {
    Case::new(&with_retry("policy = \"exponentail\"\nbase = \"100ms\"\ncap = \"1s\"\nmax_attempts = 3")).refused(&[
        "s.toml:19:10:",
        "`retry.policy` = \"exponentail\" is not known",
        "\"none\", \"immediate\", \"fixed\", \"exponential\", \"full_jitter\", \"equal_jitter\", \"decorrelated\", \"retry_after\"",
        "did you mean \"exponential\"?",
    ]);
}

#[test]
fn r04_base_zero() {
    Case::new(&with_retry("policy = \"fixed\"\nbase = \"0s\"\nmax_attempts = 3"))
        .refused(&["s.toml:20:8:", "`retry.base` must be longer than 0, got \"0s\""]);
}

#[test]
fn r05_base_negative() {
    Case::new(&with_retry("policy = \"fixed\"\nbase = \"-100ms\"\nmax_attempts = 3"))
        .refused(&["s.toml:20:8:", "`retry.base`: `-100ms` is negative"]);
}

#[test]
fn r06_cap_below_base() {
    Case::new(&with_retry("policy = \"exponential\"\nbase = \"1s\"\ncap = \"100ms\"\nmax_attempts = 3"))
        .refused(&["s.toml:21:7:", "`retry.cap` (0.1 s) must be at least `base` (1 s)"]);
}

#[test]
fn r07_base_missing() {
    Case::new(&with_retry("policy = \"full_jitter\"\ncap = \"10s\"\nmax_attempts = 3")).refused(&[
        "s.toml:18:1:",
        "`retry.base` is required for policy = \"full_jitter\": the first wait, like \"100ms\"",
    ]);
}

#[test]
fn r08_cap_missing() {
    Case::new(&with_retry("policy = \"decorrelated\"\nbase = \"100ms\"\nmax_attempts = 3")).refused(&[
        "s.toml:18:1:",
        "`retry.cap` is required for policy = \"decorrelated\": the longest wait, like \"10s\"",
    ]);
}

#[test]
fn r09_max_attempts_missing() {
    Case::new(&with_retry("policy = \"immediate\"")).refused(&[
        "s.toml:18:1:",
        "`retry.max_attempts` is required when clients retry: attempts per request, the first included, like 5",
    ]);
}

#[test]
fn r10_max_attempts_zero() {
    Case::new(&with_retry("policy = \"immediate\"\nmax_attempts = 0")).refused(&[
        "s.toml:20:16:",
        "`retry.max_attempts` must be a whole number from 1 to 1000 (the first attempt included), got 0",
    ]);
}

#[test]
fn r11_max_attempts_too_many() {
    // Past i64 too, the key's own range, not the integer type's.
    for n in ["1001", "99999999999999999999"] {
        Case::new(&with_retry(&format!("policy = \"immediate\"\nmax_attempts = {n}")))
            .refused(&["s.toml:20:16:", &format!("from 1 to 1000 (the first attempt included), got {n}")]);
    }
}

#[test]
fn r12_budget_out_of_range() {
    for (budget, shown) in [("0.0", "0"), ("1.5", "1.5"), ("-0.1", "-0.1")] {
        Case::new(&with_retry(&format!("policy = \"immediate\"\nmax_attempts = 3\nbudget = {budget}"))).refused(&[
            "s.toml:21:10:",
            &format!("`retry.budget` must be above 0 and at most 1 (retry tokens each first attempt earns), got {shown}"),
        ]);
    }
}

#[test]
fn r13_key_without_effect() {
    for (table, words) in [
        (
            "policy = \"fixed\"\nbase = \"1s\"\ncap = \"2s\"\nmax_attempts = 3",
            "s.toml:21:7: `retry.cap` has no effect with policy = \"fixed\": remove it, or use a policy that takes it: \"exponential\", \"full_jitter\", \"equal_jitter\" or \"decorrelated\"\n",
        ),
        (
            "policy = \"retry_after\"\nbase = \"1s\"\nmax_attempts = 3",
            "s.toml:20:8: `retry.base` has no effect with policy = \"retry_after\": remove it, or use a policy that takes it: \"fixed\", \"exponential\", \"full_jitter\", \"equal_jitter\" or \"decorrelated\"\n",
        ),
        (
            "policy = \"exponential\"\nbase = \"1s\"\ncap = \"2s\"\njitter = \"1s\"\nmax_attempts = 3",
            "s.toml:22:10: `retry.jitter` has no effect with policy = \"exponential\": remove it, or use policy = \"retry_after\", which takes it\n",
        ),
        (
            "policy = \"none\"\nmax_attempts = 3",
            "s.toml:20:16: `retry.max_attempts` has no effect with policy = \"none\", which never retries: remove it, or choose a policy that retries\n",
        ),
        (
            "policy = \"none\"\nmax_tokens = 10\ntoken_ratio = 0.1",
            "s.toml:20:14: `retry.max_tokens` has no effect with policy = \"none\", which never retries: remove it, or choose a policy that retries\n",
        ),
    ] {
        Case::new(&with_retry(table)).refused(&[words]);
    }
}

#[test]
fn r14_retry_key_not_known() {
    Case::new(&with_retry("policy = \"immediate\"\nmax_attempt = 3")).refused(&[
        "s.toml:20:1:",
        "unknown field `max_attempt` in `retry`,",
        "did you mean `max_attempts`?",
    ]);
}

#[test]
fn r15_source_retry_table_checked_under_its_own_name() {
    Case::new(&with(
        "count = 20",
        "count = 20\n[traffic.retry]\npolicy = \"fixed\"\nbase = \"0s\"\nmax_attempts = 2",
    ))
    .refused(&["s.toml:15:8:", "`traffic[0].retry.base` must be longer than 0, got \"0s\""]);
    // An unknown key there names the source's table too.
    Case::new(&with(
        "count = 20",
        "count = 20\n[traffic.retry]\npolicy = \"fixed\"\nbse = \"1s\"\nmax_attempts = 2",
    ))
    .refused(&[
        "s.toml:15:1:",
        "unknown field `bse` in `traffic[0].retry`, expected one of",
        "did you mean `base`?",
    ]);
}

/// An unknown key inside an inline table is named with that table's path,
/// as one under a `[table]` header is (r15): it once said only "unknown
/// field `bse`, expected one of ...", with no table, where a source's
/// `retry = { ... }`, an entry of a list of retry tables over several
/// lines, or an outage in `outage = [{ ... }]` could have been meant.
#[test]
fn r41_unknown_key_in_an_inline_table_names_its_table() {
    Case::new(&with(
        "count = 20",
        "count = 20\nretry = { policy = \"fixed\", base = \"1s\", max_attempts = 2, bse = 1 }",
    ))
    .refused(&[
        "s.toml:13:60: unknown field `bse` in `traffic[0].retry`, expected one of `policy`, `base`, `cap`, `max_attempts`, `jitter`, `budget`, `max_tokens`, `token_ratio`, `retry_quota`; did you mean `base`?",
    ]);
    Case::new(&format!(
        "{BASE}\n[sweep]\nretry_policies = [\n  {{ policy = \"none\" }}, # {{ a, b\n  {{ policy = \"fixed\", base = \"1s,{{\", bse = \"1s\" }},\n]\n"
    ))
    .refused(&["s.toml:21:38: unknown field `bse` in `sweep.retry_policies[1]`, expected one of", "did you mean `base`?"]);
    Case::new(&format!(
        "{BASE}\n[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1ms\"\noutage = [{{ start = \"0s\", end = \"1s\", fial = \"open\" }}]\n"
    ))
    .refused(&["s.toml:22:39: unknown field `fial` in `nodes.outage[0]`, expected one of `start`, `end`, `fail`; did you mean `fail`?"]);
    // An inline table over several lines (TOML 1.1): the key on a line of
    // its own was once taken for a key of the [[traffic]] entry, "unknown
    // field `bse` in `traffic[0]`".
    Case::new(&with(
        "count = 20",
        "count = 20\nretry = {\n  policy = \"fixed\", # a } {\n  base = \"1s\",\n  max_attempts = 2,\n  bse = 1,\n}",
    ))
    .refused(&[
        "s.toml:17:3: unknown field `bse` in `traffic[0].retry`, expected one of `policy`, `base`, `cap`, `max_attempts`, `jitter`, `budget`, `max_tokens`, `token_ratio`, `retry_quota`; did you mean `base`?",
    ]);
}

/// A limiter's header rounding where no client retries: the header is
/// read only to time a retry (and to count those sent at or after it), so
/// the key changed nothing but the limiter's label, and was accepted.
#[test]
fn r43_header_rounding_read_by_no_client() {
    let rounded = |value: &str, rest: &str| {
        format!("{}{rest}", with("slots = [2, 10]", &format!("slots = [2, 10]\nretry_after = \"{value}\"")))
    };
    let message = |value: &str, line: u32| {
        format!(
            "error: s.toml:{line}:15: `limiter[0].retry_after` = \"{value}\" has no effect: no client retries, so none reads the Retry-After header (a client reads it only to time a retry); leave the key out, or give the clients a policy that retries: a [retry] or [traffic.retry] table, or a [sweep] retry_policies entry, with a policy other than \"none\" and `max_attempts` of 2 or more\n"
        )
    };
    // No retry table at all; `[retry]` that never retries (`none`, or one
    // attempt); a `[retry]` that retries, overridden by the source's own.
    for (value, rest) in [
        ("ceil_seconds", ""),
        ("floor_seconds", "\n[retry]\npolicy = \"none\"\n"),
        ("redis_cell", "\n[retry]\npolicy = \"fixed\"\nbase = \"1s\"\nmax_attempts = 1\n"),
        ("ceil_seconds", "\n[retry]\npolicy = \"immediate\"\nmax_attempts = 3\n"),
    ] {
        let text = rounded(value, rest);
        // The source's own table adds a line above the limiter.
        let (text, line) = if rest.contains("immediate") {
            (text.replace("count = 20", "count = 20\nretry = { policy = \"none\" }"), 18)
        } else {
            (text, 17)
        };
        assert_eq!(Case::new(&text).refused_with(&[]), message(value, line), "{text}");
    }
    // A closed population with no retries thinks after each answer, and
    // reads no header either; nor does a retry-policy sweep of `none` alone.
    let text = rounded("ceil_seconds", "").replace(
        "kind = \"burst\"\nstart = \"100ms\"\nspan = \"10ms\"\ncount = 20",
        "kind = \"closed\"\nclients = 5\nthink = \"100ms\"",
    );
    // (The closed source has one key fewer than the burst.)
    assert_eq!(Case::new(&text).refused_with(&[]), message("ceil_seconds", 16));
    let c = Case::new(&rounded("ceil_seconds", "\n[sweep]\nretry_policies = [{ policy = \"none\" }]\n"));
    assert_eq!(c.refused_with(&[]), message("ceil_seconds", 17));
    // Accepted: `exact` (the default), any policy that retries, in `[retry]`,
    // a source's own table, a closed population's, or one entry of a sweep.
    for text in [
        rounded("exact", ""),
        rounded("ceil_seconds", "\n[retry]\npolicy = \"fixed\"\nbase = \"1s\"\nmax_attempts = 2\n"),
        rounded("floor_seconds", "")
            .replace("count = 20", "count = 20\nretry = { policy = \"retry_after\", max_attempts = 2 }"),
        rounded(
            "redis_cell",
            "\n[sweep]\nretry_policies = [{ policy = \"none\" }, { policy = \"immediate\", max_attempts = 2 }]\n",
        ),
    ] {
        let out = Case::new(&text).run(&["check", "s.toml"]);
        assert_eq!(out.code, 0, "{text}\n{}", out.stderr);
    }
}

/// `[traffic.retry]` with no `[[traffic]]` above it makes `traffic` a table:
/// it was once told to use single brackets, which it did.
#[test]
fn r42_source_retry_table_before_any_source() {
    Case::new(&with(&format!("[[traffic]]\n{BURST}"), "[traffic.retry]\npolicy = \"none\"")).refused(&[
        "s.toml:8:2: `traffic.retry`: [traffic.retry] comes before any [[traffic]] entry, which makes `traffic` one table, not the list of sources: a source's retry table goes below its own [[traffic]] header and keys (for every source, write [retry] instead)",
    ]);
}

#[test]
fn r16_retry_jitter_negative() {
    Case::new(&with_retry("policy = \"retry_after\"\njitter = \"-1s\"\nmax_attempts = 3"))
        .refused(&["s.toml:20:10:", "`retry.jitter`: `-1s` is negative"]);
}

#[test]
fn r17_closed_clients_zero() {
    Case::new(&closed("clients = 0\nthink = \"1s\""))
        .refused(&["s.toml:10:11:", "`traffic[0].clients` must be a whole number of at least 1, got 0"]);
}

#[test]
fn r18_closed_clients_too_many() {
    for n in ["10000001", "99999999999999999999"] {
        Case::new(&closed(&format!("clients = {n}\nthink = \"1s\""))).refused(&[
            "s.toml:10:11:",
            &format!("`traffic[0].clients` = {n} is too many: a closed population may have at most 10000000 clients"),
        ]);
    }
}

#[test]
fn r19_closed_think_missing() {
    Case::new(&closed("clients = 10"))
        .refused(&["s.toml:8:1:", "`traffic[0].think` is required for kind \"closed\": the mean time a client thinks between an answer and its next request, like \"1s\""]);
}

#[test]
fn r37_closed_clients_missing() {
    Case::new(&closed("think = \"1s\"")).refused(&[
        "s.toml:8:1:",
        "`traffic[0].clients` is required for kind \"closed\": how many clients, like 100",
    ]);
}

#[test]
fn r20_closed_think_zero() {
    Case::new(&closed("clients = 10\nthink = \"0s\""))
        .refused(&["s.toml:11:9:", "`traffic[0].think` must be longer than 0, got \"0s\""]);
}

#[test]
fn r21_closed_without_end_or_duration() {
    let text = closed("clients = 10\nthink = \"1s\"").replacen("duration = \"2s\"\n", "", 1);
    Case::new(&text).refused(&[
        "s.toml:7:1:",
        "`traffic[0].end` is required when the scenario has no `duration`: a closed population never stops",
    ]);
}

#[test]
fn r22_closed_key_of_another_kind() {
    Case::new(&closed("clients = 10\nthink = \"1s\"\nrate = 5.0"))
        .refused(&["s.toml:12:1:", "`traffic[0].rate` is not a key of kind \"closed\""]);
}

/// A source's retry table given as a list or a word is named as a retry
/// table, not as serde's Rust struct.
#[test]
fn r34_source_retry_not_a_table() {
    // A list of items (not tables) is named as a list too, at its `[`,
    // not by its first item.
    for (v, got) in [
        ("[]", "a list"),
        ("\"immediate\"", "the string \"immediate\""),
        ("[1]", "a list"),
        ("[\"fixed\", \"1s\"]", "a list"),
    ] {
        Case::new(&with_traffic(&format!("kind = \"burst\"\ncount = 3\nretry = {v}"))).refused(&[
            &format!("s.toml:11:9: `traffic[0].retry`: expected a retry table (like {{ policy = \"full_jitter\", base = \"100ms\", cap = \"10s\", max_attempts = 5 }}), found {got}"),
        ]);
    }
}

/// A retry table without its `policy` names the policies, wherever the
/// table is (it once said only "missing field `policy`").
#[test]
fn r55_policy_missing() {
    let policies = "give one of \"none\", \"immediate\", \"fixed\", \"exponential\", \"full_jitter\", \"equal_jitter\", \"decorrelated\", \"retry_after\"";
    Case::new(&with_retry("base = \"1s\"\nmax_attempts = 3"))
        .refused(&[&format!("error: s.toml:18:1: `retry`: missing field `policy`: {policies}")]);
    Case::new(&with("count = 20", "count = 20\nretry = { base = \"1s\", max_attempts = 3 }"))
        .refused(&["`traffic[0].retry`: missing field `policy`: ", policies]);
    let swept = format!(
        "{BASE}\n[sweep]\nretry_policies = [{{ policy = \"none\" }}, {{ base = \"1s\", max_attempts = 2 }}]\n"
    );
    // The entry is named with its place in the list, on one line or over
    // several (it once said `sweep.retry_policies`, without the `[1]`).
    Case::new(&swept)
        .refused(&[&format!("s.toml:19:40: `sweep.retry_policies[1]`: missing field `policy`: {policies}")]);
    let lines = format!(
        "{BASE}\n[sweep]\nretry_policies = [\n  {{ policy = \"none\" }},\n  {{ base = \"1s\", max_attempts = 2 }},\n]\n"
    );
    Case::new(&lines)
        .refused(&[&format!("s.toml:21:3: `sweep.retry_policies[1]`: missing field `policy`: {policies}")]);
    // The same for the entries of another list of inline tables.
    Case::new(&format!("{BASE}\n[nodes]\ncount = 2\noutage = [{{ start = \"1s\" }}]\n"))
        .refused(&["s.toml:20:11: `nodes.outage[0]`: missing field `end`"]);
}

/// Guava's `acquire()` (no `timeout`) never refuses, so it has no
/// Retry-After header to follow.
#[test]
fn r33_retry_after_with_a_limiter_that_sends_none() {
    let text = with_retry("policy = \"retry_after\"\nmax_attempts = 3")
        .replace("kind = \"slot_counter\"\nslots = [2, 10]", "kind = \"guava\"");
    Case::new(&text).refused(&[
        "s.toml:17:1:",
        "policy = \"retry_after\" follows each limiter's Retry-After header, but `guava` sends none: use another policy, or other limiters",
    ]);
}

/// 10 clients thinking 1 ns for 2 s would send about 2e10 requests.
#[test]
fn r30_closed_population_too_busy() {
    Case::new(&closed("clients = 10\nthink = \"1ns\"")).refused(&[
        "s.toml:11:9:",
        "`traffic[0].think` = \"1ns\" with 10 clients over [0 s, 2 s) is about 2e10 requests: a closed population may send at most 1e9",
    ]);
    // An estimate is given to 3 digits (it was 1.8446744073709553e14).
    Case::new(&closed("clients = 1\nthink = \"100us\"\nend = \"18446744073.709551615s\"")).refused(&[
        "s.toml:11:9:",
        "with 1 client over [0 s, 18446744073.709551615 s) is about 1.84e14 requests",
    ]);
}

/// Each population is within 10 000 000 clients; together they are not.
#[test]
fn r31_closed_clients_in_all() {
    let second = "\n[[traffic]]\nkind = \"closed\"\nclients = 6000000\nthink = \"10000h\"\n";
    Case::new(&(closed("clients = 6000000\nthink = \"10000h\"") + second)).refused(&[
        "s.toml:17:1:",
        "the closed populations have 12000000 clients in all up to `traffic[1]`: a scenario may have at most 10000000 closed clients",
    ]);
}

/// A closed population that would start when the scenario ends, like any
/// other source (`s30`).
#[test]
fn r32_closed_start_at_duration() {
    Case::new(&closed("clients = 10\nthink = \"1s\"\nstart = \"2s\"")).refused(&[
        "s.toml:12:9:",
        "`traffic[0].start` (2 s) must be before the scenario's `duration` (2 s), where this source ends",
    ]);
}

#[test]
fn r23_retry_policies_empty() {
    Case::new(&format!("{BASE}\n[sweep]\nretry_policies = []\n"))
        .refused(&["s.toml:19:18:", "`sweep.retry_policies` must list 1 to 20 retry tables"]);
}

/// A list where an entry of `retry_policies` belongs was read as a table,
/// item by item, and refused at its first item as if that were the key
/// `policy`: "`sweep.retry_policies[0][0]`: expected a string, found a
/// table". The entry itself is named, and what it is.
#[test]
fn r56_retry_policies_entry_is_a_list() {
    let table = "expected a retry table (like { policy = \"full_jitter\", base = \"100ms\", cap = \"10s\", max_attempts = 5 })";
    Case::new(&format!(
        "{BASE}\n[sweep]\nretry_policies = [[{{ policy = \"none\" }}], {{ policy = \"fixed\", base = \"1s\" }}]\n"
    ))
    .refused(&[&format!("error: s.toml:19:19: `sweep.retry_policies[0]`: {table}, found a list\n")]);
    // Any other value in its place is named with its place too.
    Case::new(&format!("{BASE}\n[sweep]\nretry_policies = [{{ policy = \"none\" }}, 5]\n")).refused(&[
        &format!("error: s.toml:19:40: `sweep.retry_policies[1]`: {table}, found the number 5\n"),
    ]);
    // And an entry of `[nodes] outage`.
    Case::new(&format!(
        "{BASE}\n[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1ms\"\noutage = [[{{ start = \"1s\", end = \"2s\" }}]]\n"
    ))
    .refused(&["error: s.toml:22:11: `nodes.outage[0]`: expected a table, found a list\n"]);
}

/// A TOML date-time where a table belongs is said to be one, with what
/// the key takes: the reader hands it over as a table of one internal
/// key, which the table's keys once named, `` unknown field
/// `$__toml_private_datetime` `` (or missed their own: `` `traffic`:
/// missing field `kind` ``).
#[test]
fn s122_date_time_where_a_table_belongs() {
    let retry = "expected a retry table (like { policy = \"full_jitter\", base = \"100ms\", cap = \"10s\", max_attempts = 5 })";
    Case::new(&format!("{BASE}\n[sweep]\nretry_policies = [1979-05-27]\n")).refused(&[&format!(
        "error: s.toml:19:19: `sweep.retry_policies[0]`: {retry}, found the date-time 1979-05-27\n"
    )]);
    Case::new(&format!(
        "{BASE}\n[sweep]\nretry_policies = [{{ policy = \"none\" }}, 1979-05-27T07:32:00Z]\n"
    ))
    .refused(&[&format!(
        "error: s.toml:19:40: `sweep.retry_policies[1]`: {retry}, found the date-time 1979-05-27T07:32:00Z\n"
    )]);
    Case::new(&with("duration = \"2s\"\n", "duration = \"2s\"\nretry = 1979-05-27\n"))
        .refused(&[&format!("error: s.toml:3:9: `retry`: {retry}, found the date-time 1979-05-27\n")]);
    Case::new(&with("count = 20", "count = 20\nretry = 07:32:00")).refused(&[&format!(
        "error: s.toml:13:9: `traffic[0].retry`: {retry}, found the date-time 07:32:00\n"
    )]);
    Case::new(&format!(
        "{BASE}\n[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1ms\"\noutage = [1979-05-27]\n"
    ))
    .refused(&["error: s.toml:22:11: `nodes.outage[0]`: expected a table, found the date-time 1979-05-27\n"]);
    Case::new(&with("[limit]\nrequests = 10\nwindow = \"1s\"\n", "limit = 1979-05-27\n"))
        .refused(&["error: s.toml:4:9: `limit`: expected a table, found the date-time 1979-05-27\n"]);
    for table in ["output", "sweep", "nodes"] {
        Case::new(&with("duration = \"2s\"\n", &format!("duration = \"2s\"\n{table} = 1979-05-27\n")))
            .refused(&[&format!(
                "error: s.toml:3:{}: `{table}`: expected a table, found the date-time 1979-05-27\n",
                table.len() + 4
            )]);
    }
    let limit = "[limit]\nrequests = 10\nwindow = \"1s\"\n";
    Case::new(&format!("name = \"t\"\ntraffic = [{{ kind = \"burst\", count = 1 }}, 1979-05-27]\n{limit}"))
        .refused(&["error: s.toml:2:43: `traffic[1]`: expected a table, found the date-time 1979-05-27\n"]);
    Case::new(&format!(
        "name = \"t\"\ntraffic = [{{ kind = \"burst\", count = 1 }}]\nlimiter = [1979-05-27]\n{limit}"
    ))
    .refused(&["error: s.toml:3:12: `limiter[0]`: expected a table, found the date-time 1979-05-27\n"]);
    // The list itself, which a date-time once met with a list of numbers
    // for an example.
    Case::new(&format!("{BASE}\n[sweep]\nretry_policies = 1979-05-27\n")).refused(&[
        "error: s.toml:19:18: `sweep.retry_policies`: expected a list of retry tables (like [{ policy = \"none\" }, { policy = \"full_jitter\", base = \"100ms\", cap = \"10s\", max_attempts = 10 }]), found the date-time 1979-05-27\n",
    ]);
}

#[test]
fn r24_retry_policies_entry_checked_under_its_own_name() {
    Case::new(&format!(
        "{BASE}\n[sweep]\nretry_policies = [{{ policy = \"none\" }}, {{ policy = \"fixed\", max_attempts = 2 }}]\n"
    ))
    .refused(&[
        "s.toml:19:40:",
        "`sweep.retry_policies[1].base` is required for policy = \"fixed\": the first wait, like \"100ms\"",
    ]);
}

#[test]
fn r25_retry_policies_with_a_source_retry_table() {
    Case::new(&format!(
        "{}\n[sweep]\nretry_policies = [{{ policy = \"none\" }}]\n",
        with("count = 20", "count = 20\n[traffic.retry]\npolicy = \"immediate\"\nmax_attempts = 2")
    ))
    .refused(&[
        "s.toml:13:1:",
        "`traffic[0].retry` would override every entry of `sweep.retry_policies` for this source",
    ]);
}

#[test]
fn r26_retry_policies_without_traffic() {
    Case::new("name = \"t\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[sweep]\nretry_policies = [{ policy = \"none\" }]\n")
        .refused(&[
            "s.toml:6:19:",
            "`sweep.retry_policies` runs the scenario's traffic once per retry table, but there is no [[traffic]] source",
        ]);
}

#[test]
fn r27_retry_wrong_type() {
    Case::new(&with_retry("policy = \"immediate\"\nmax_attempts = \"3\""))
        .refused(&["s.toml:20:16:", "`retry.max_attempts`: expected a whole number, found the string \"3\""]);
}

#[test]
fn r28_budget_finer_than_thousandths() {
    Case::new(&with_retry("policy = \"immediate\"\nmax_attempts = 3\nbudget = 0.0005")).refused(&[
        "s.toml:21:10:",
        "`retry.budget` = 0.0005 has more than 3 decimal places: retry tokens are counted in thousandths (0.001 to 1)",
    ]);
}

/// gRPC's retry throttling takes both of its numbers.
#[test]
fn r49_throttle_half_given() {
    Case::new(&with_retry("policy = \"immediate\"\nmax_attempts = 3\nmax_tokens = 10")).refused(&[
        "s.toml:18:1:",
        "`retry.token_ratio` is required with `retry.max_tokens`: gRPC's retry throttling takes both (like max_tokens = 10, token_ratio = 0.1)",
    ]);
    Case::new(&with_traffic("kind = \"burst\"\ncount = 20\nretry = { policy = \"immediate\", max_attempts = 3, token_ratio = 0.1 }"))
        .refused(&[
            "s.toml:11:9:",
            "`traffic[0].retry.max_tokens` is required with `traffic[0].retry.token_ratio`",
        ]);
}

/// A budget and gRPC's throttling are two rules for one thing: one of them.
#[test]
fn r50_budget_and_throttle() {
    Case::new(&with_retry("policy = \"immediate\"\nmax_attempts = 3\nbudget = 0.1\nmax_tokens = 10\ntoken_ratio = 0.1"))
        .refused(&[
            "s.toml:21:10:",
            "`retry.budget` and gRPC's retry throttling (`retry.max_tokens`, `retry.token_ratio`) both limit retries: give one of them",
        ]);
}

#[test]
fn r51_throttle_out_of_range() {
    for (key, value, shown, what) in [
        ("max_tokens", "0", "0", "where a client's token count starts, and its most"),
        ("max_tokens", "1001", "1001", "where a client's token count starts, and its most"),
        ("max_tokens", "-1", "-1", "where a client's token count starts, and its most"),
        ("token_ratio", "0", "0", "tokens an admitted attempt adds"),
        ("token_ratio", "inf", "inf", "tokens an admitted attempt adds"),
    ] {
        let other = if key == "max_tokens" { "token_ratio = 0.1" } else { "max_tokens = 10" };
        let (line, col) = if key == "max_tokens" { (21, 14) } else { (21, 15) };
        let table = format!("policy = \"immediate\"\nmax_attempts = 3\n{key} = {value}\n{other}");
        Case::new(&with_retry(&table)).refused(&[
            &format!("s.toml:{line}:{col}:"),
            &format!("`retry.{key}` must be from 0.001 to 1000 ({what}), got {shown}"),
        ]);
    }
}

/// grpc-java reads the numbers through `float` and truncates to whole
/// thousandths: 0.0005 is 0, which it would accept and run with (a success
/// adding nothing); ratesim refuses it.
#[test]
fn r52_throttle_below_a_thousandth() {
    Case::new(&with_retry("policy = \"immediate\"\nmax_attempts = 3\nmax_tokens = 10\ntoken_ratio = 0.0005"))
        .refused(&[
            "s.toml:22:15:",
            "`retry.token_ratio` must be from 0.001 to 1000 (tokens an admitted attempt adds), got 0.0005",
        ]);
}

/// The AWS SDKs' retry quota is a third rule for the same thing.
#[test]
fn r53_retry_quota_with_another_limit() {
    for (other, shown) in [("budget = 0.1", "budget"), ("max_tokens = 10\ntoken_ratio = 0.1", "max_tokens")] {
        let table = format!("policy = \"immediate\"\nmax_attempts = 3\nretry_quota = 500\n{other}");
        Case::new(&with_retry(&table)).refused(&[
            "s.toml:21:15:",
            &format!("`retry.retry_quota` (the AWS SDKs' retry quota) and `retry.{shown}` both limit retries: give one of them"),
        ]);
    }
}

#[test]
fn r54_retry_quota_out_of_range() {
    for value in ["0", "1000001", "-5"] {
        Case::new(&with_retry(&format!("policy = \"immediate\"\nmax_attempts = 3\nretry_quota = {value}"))).refused(&[
            "s.toml:21:15:",
            &format!("`retry.retry_quota` must be a whole number from 1 to 1000000 (a client's retry capacity; the AWS SDKs start with 500), got {value}"),
        ]);
    }
    Case::new(&with_retry("policy = \"immediate\"\nmax_attempts = 3\nretry_quota = 2.5"))
        .refused(&["s.toml:21:15:", "`retry.retry_quota`"]);
}

/// Requests waiting to retry count against the run's memory budget: a
/// million rejected at 0 and each told to come back in an hour wait in
/// memory, so the run stops at the first chunk's check (262 144 arrivals,
/// all but the 10 admitted waiting, about 70 bytes each per lane) with an
/// error that says what to change, and nothing is written.
#[test]
fn r29_retries_past_the_memory_budget() {
    let c = Case::new(
        "name = \"x\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[retry]\npolicy = \"fixed\"\nbase = \"1h\"\n\
         max_attempts = 2\n[[traffic]]\nkind = \"burst\"\ncount = 1000000\n[[limiter]]\nkind = \"fixed_window\"\n",
    );
    c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "8MiB"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: the clients of `fixed_window` keep 262134 requests waiting to retry: they hold 17.2 MiB",
            "passes the 8.0 MiB the run may use (--memory)",
            "shorten the waits (`base`, `cap`), lower `max_attempts`, add a retry `budget`",
        ],
    );
    assert!(!c.path("out").exists());
}

/// A sweep's runs may run side by side, so each gets its share of the
/// budget: four retry tables over 200 000 requests waiting an hour each
/// hold 35 MiB per run (two lanes), which one run may under 40 MiB, but
/// not a quarter of it.
#[test]
fn r35_sweep_runs_share_the_memory_budget() {
    let head = "name = \"x\"\n[limit]\nrequests = 100\nwindow = \"1s\"\n[[traffic]]\nkind = \"burst\"\n\
                count = 200000\n[[limiter]]\nkind = \"fixed_window\"\n";
    let one = Case::new(&format!("{head}[retry]\npolicy = \"fixed\"\nbase = \"1h\"\nmax_attempts = 2\n"));
    let out = one.run(&["run", "s.toml", "--out", "one", "-q", "--no-charts", "--memory", "40MiB"]);
    assert_eq!(out.code, 0, "one run fits in 40 MiB: {}", out.stderr);
    let sweep = head.to_string()
        + "[sweep]\nretry_policies = [\n  { policy = \"fixed\", base = \"1h\", max_attempts = 2 },\n  \
{ policy = \"fixed\", base = \"2h\", max_attempts = 2 },\n  { policy = \"fixed\", base = \"3h\", max_attempts = 2 },\n  \
{ policy = \"fixed\", base = \"4h\", max_attempts = 2 },\n]\n";
    let c = Case::new(&sweep);
    c.fails(
        &["sweep", "s.toml", "--out", "out", "--no-charts", "--memory", "40MiB"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: retry-policy comparison (4 runs that may run side by side, so each may use 1/4 of --memory)",
            "caused by: the clients of `fixed_window` keep 199900 requests waiting to retry: they hold 17.2 MiB",
            "passes the 10.0 MiB the run may use (--memory)",
        ],
    );
    assert!(!c.path("out").exists());
}

/// A closed population makes all its attempts after the last open-loop
/// arrival (it has none), and the budget still holds there: the run stops
/// within a slice of attempts of passing it, naming the largest part.
#[test]
fn r36_a_closed_population_past_the_memory_budget() {
    let c = Case::new(
        "name = \"x\"\nduration = \"1s\"\n[limit]\nrequests = 100000000\nwindow = \"1h\"\n[[traffic]]\n\
         kind = \"closed\"\nclients = 1000\nthink = \"100us\"\n[[limiter]]\nkind = \"sliding_log\"\n",
    );
    c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "16MiB"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: the run holds 16.0 MiB of admitted timestamps inside exact windows and 71.9 KiB of waiting requests (16.1 MiB in all), more than the 16.0 MiB it may use (--memory)",
        ],
    );
    assert!(!c.path("out").exists());
}

/// Every limiter run holds each closed client's next request from the
/// start: a population past the budget is refused before any lane holds it
/// (10^7 clients in 14 limiters had taken 8 GB and 14 s to be refused), and
/// `check` warns of it. 10 000 clients hold 16384 x 68 B = 1.1 MiB a limiter.
#[test]
fn r38_closed_clients_past_the_memory_budget_before_the_run() {
    let c = Case::new(
        "name = \"x\"\nduration = \"1s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[[traffic]]\n\
         kind = \"closed\"\nclients = 10000\nthink = \"1s\"\n[[limiter]]\nkind = \"fixed_window\"\n",
    );
    c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "2MiB"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: 10000 closed clients keep their next request in each of the 2 limiters run (the exact reference included): 1.1 MiB a limiter, 2.1 MiB in all, more than the 2.0 MiB the run may use (--memory). Run fewer closed clients or fewer limiters, or, if the machine has the memory, raise --memory",
        ],
    );
    assert!(!c.path("out").exists());
    // Within the budget it runs.
    let ok = c.run(&["run", "s.toml", "--out", "out", "-q", "--no-charts", "--memory", "3MiB"]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    // check names what they hold, and warns only past the default 8 GiB.
    let out = c.run(&["check", "s.toml"]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert!(
        out.stdout.contains(
            "memory    the closed clients' next requests hold 1.1 MiB in each of the 2 limiters run, 2.1 MiB in all\n"
        ),
        "{}",
        out.stdout
    );
    let base = fs::read_to_string(c.path("s.toml")).unwrap();
    // `check` on `text` passes, with `warning` (or nothing) on stderr.
    let check_warns = |text: String, warning: &str| {
        fs::write(c.path("s.toml"), text).unwrap();
        let out = c.run(&["check", "s.toml"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        if warning.is_empty() {
            assert_eq!(out.stderr, "");
        } else {
            assert!(out.stderr.starts_with(warning), "{}", out.stderr);
        }
    };
    let five_million = base.replace("clients = 10000", "clients = 5000000");
    // A retry-policy comparison of 10 runs gives each a tenth of the
    // default 8 GiB: 5 million clients hold 2^23 x 68 B = 544 MiB in each
    // of 2 limiters, 1.1 GiB, past 819.2 MiB. (Without it they pass.)
    let policies = format!("[sweep]\nretry_policies = [{}]\n", ["{ policy = \"none\" }"; 10].join(", "));
    check_warns(
        five_million.clone() + &policies,
        "warning: each run of this scenario's retry-policy comparison would stop at its start (10 runs that may run side by side, so each may use 1/10 of --memory): 5000000 closed clients keep their next request in each of the 2 limiters run (the exact reference included): 544.0 MiB a limiter, 1.1 GiB in all, more than the 819.2 MiB the run may use (--memory)",
    );
    // So do ten topology-sweep runs (nodes = [1, ..., 10]).
    check_warns(
        five_million.replace("[[traffic]]", "[nodes]\ncount = 2\n[[traffic]]")
            + "[sweep]\nnodes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n",
        "warning: each run of this scenario's topology sweeps would stop at its start (10 runs that may run side by side, so each may use 1/10 of --memory)",
    );
    check_warns(five_million, "");
    check_warns(
        base.replace("clients = 10000", "clients = 10000000") + &"[[limiter]]\nkind = \"gcra\"\n".repeat(12),
        "warning: a run of this scenario would stop at its start: 10000000 closed clients keep their next request in each of the 14 limiters run (the exact reference included): 1.1 GiB a limiter, 14.9 GiB in all, more than the 8.0 GiB the run may use (--memory)",
    );
}

/// A closed population runs between two open-loop arrivals, 200 ms apart:
/// 20 million attempts, all admitted under L = 10^9 per 1 s, before the
/// second is decided. The budget is checked as they run, not only after
/// the chunk of (two) arrivals, which once held all their timestamps first
/// (3.2 GB with 1000 clients over 2 s, then aborted, out of memory). Each
/// lane checks itself against its share, half the budget: its window ring
/// (8 B a timestamp) doubles to 8.0 MiB at the 1048577th, past 8.0 MiB
/// with the waiting requests, so the two lanes stop at 8.0 MiB each and
/// the run's check finds 16.0 MiB (each once went on to 16.0 MiB alone).
#[test]
fn r39_closed_clients_between_two_arrivals_past_the_memory_budget() {
    let c = Case::new(
        "name = \"x\"\nduration = \"300ms\"\n[limit]\nrequests = 1000000000\nwindow = \"1s\"\n[[traffic]]\n\
         kind = \"burst\"\ncount = 1\n[[traffic]]\nkind = \"burst\"\nstart = \"200ms\"\ncount = 1\n[[traffic]]\n\
         kind = \"closed\"\nclients = 1000\nthink = \"10us\"\n[[limiter]]\nkind = \"fixed_window\"\n",
    );
    c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "16MiB"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: the run holds 16.0 MiB of admitted timestamps inside exact windows and 143.8 KiB of waiting requests (16.1 MiB in all), more than the 16.0 MiB it may use (--memory)",
        ],
    );
    assert!(!c.path("out").exists());
    // With decisions.csv, each attempt is kept until its chunk is written,
    // and counted against the lane's share: half the budget, with the exact
    // reference. 65536 attempts and the first arrival kept, room for 4096
    // more and the second arrival: 69634 > 65536 places, doubled to
    // 131072 x 56 B = 7.0 MiB, with 1.0 MiB of timestamps past 8.0 MiB.
    c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "16MiB", "--decisions"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: `fixed_window` ran 65536 attempts of its clients (retries and closed clients' requests) among the arrivals of one chunk, up to 0.000658245 s, and came to need 8.1 MiB (1.0 MiB of admitted timestamps inside exact windows, 71.9 KiB of waiting requests and 7.0 MiB for attempts kept for decisions.csv until their chunk is written: the 65537 it kept in this chunk so far, with room for 4097 more before it looks again), more than 8.0 MiB, its share of the 16.0 MiB the run may use (--memory) as one of 2 limiters run side by side (the exact reference included). Use fewer closed clients or a longer `think`, a lower `max_attempts` or a retry `budget`, or run without --decisions, or, if the machine has the memory, raise --memory\n",
        ],
    );
    assert!(!c.path("out").exists());
}

/// 1000 requests over 1 s under L = 1 per 1 s, each refused one retried at
/// once up to 1000 times.
const IMMEDIATE_RETRIES: &str = "name = \"x\"\n[limit]\nrequests = 1\nwindow = \"1s\"\n[retry]\n\
policy = \"immediate\"\nmax_attempts = 1000\n[[traffic]]\nkind = \"burst\"\ncount = 1000\nspan = \"1s\"\n";

/// The stderr of `args` run on `threads` threads, which must fail.
fn stderr_on_threads(c: &Case, args: &[&str], threads: &str) -> String {
    let out = std::process::Command::new(common::ratesim_path())
        .current_dir(c.path(""))
        .args(args)
        .env("RAYON_NUM_THREADS", threads)
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{threads} threads");
    String::from_utf8(out.stderr).unwrap()
}

/// With decisions.csv, every attempt of a chunk of arrivals is kept until
/// the chunk is written: 1000 requests retried at once up to 1000 times
/// each make a million in one chunk of 4096 arrivals (over 56 MB a
/// limiter, and 16 limiters once took 3.6 GB and aborted, out of memory,
/// under --memory 64MiB). They count against the lane's share as they run.
///
/// By hand: arrival 0 is admitted, every later one refused and retried 999
/// times before the next. At the lane's look after E scheduled attempts
/// it kept E and the arrivals decided, and makes room for 4096 more and
/// the arrivals left: E + 5096 in all. 4096 x 31 + 5096 = 132072 passes
/// the 131072 places made at the look before, so the vector would double
/// to 262144 x 56 B = 14.0 MiB, past 8.0 MiB, half of 16 MiB (the exact
/// reference is the other half). E = 126976 falls in the retries of arrival
/// 128: 129 arrivals decided, 871 left.
#[test]
fn r40_decisions_of_immediate_retries_past_the_memory_budget() {
    let c = Case::new(&format!("{IMMEDIATE_RETRIES}[[limiter]]\nkind = \"fixed_window\"\n"));
    c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "16MiB", "--decisions"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: `fixed_window` ran 126976 attempts of its clients (retries and closed clients' requests) among the arrivals of one chunk, up to 0.128000103 s, and came to need 14.0 MiB (32 B of admitted timestamps inside exact windows, 528 B of waiting requests and 14.0 MiB for attempts kept for decisions.csv until their chunk is written: the 127105 it kept in this chunk so far, with room for 4967 more before it looks again), more than 8.0 MiB, its share of the 16.0 MiB the run may use (--memory) as one of 2 limiters run side by side (the exact reference included). Use fewer closed clients or a longer `think`, a lower `max_attempts` or a retry `budget`, or run without --decisions, or, if the machine has the memory, raise --memory\n",
        ],
    );
    assert!(!c.path("out").exists());
    // Without decisions.csv nothing is kept: the same run fits.
    let out = c.run(&["run", "s.toml", "--out", "out", "-q", "--no-charts", "--memory", "16MiB"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// Each lane's kept attempts stayed within the budget, but not all of
/// them together: r40 with 16 limiters under --memory 64MiB once ran to
/// the end holding 17 lanes' million attempts each (59 MB a lane, 940 MB
/// resident). Each lane now has a seventeenth of the budget, 3947580 B
/// (3.8 MiB): by r40's count its room of E + 5096 places passes the 65536
/// made at E = 4096 x 7 when E = 4096 x 15 = 61440 (66536 places), and
/// doubling to 131072 x 56 B = 7.0 MiB is past the share. E falls in the
/// retries of arrival 62: 63 decided, 937 left. The same on any thread
/// count.
#[test]
fn r44_decisions_of_many_limiters_share_the_memory_budget() {
    let limiters = "[[limiter]]\nkind = \"fixed_window\"\n".repeat(16);
    let c = Case::new(&format!("{IMMEDIATE_RETRIES}{limiters}"));
    let args = ["run", "s.toml", "--out", "out", "--memory", "64MiB", "--decisions", "-q", "--no-charts"];
    c.fails(
        &args,
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: `fixed_window` ran 61440 attempts of its clients (retries and closed clients' requests) among the arrivals of one chunk, up to 0.062000501 s, and came to need 7.0 MiB (32 B of admitted timestamps inside exact windows, 336 B of waiting requests and 7.0 MiB for attempts kept for decisions.csv until their chunk is written: the 61503 it kept in this chunk so far, with room for 5033 more before it looks again), more than 3.8 MiB, its share of the 64.0 MiB the run may use (--memory) as one of 17 limiters run side by side (the exact reference included). Use fewer closed clients or a longer `think`, a lower `max_attempts` or a retry `budget`, or run without --decisions, or, if the machine has the memory, raise --memory\n",
        ],
    );
    assert!(!c.path("out").exists());
    let one = stderr_on_threads(&c, &args, "1");
    assert_eq!(stderr_on_threads(&c, &args, "2"), one);
    assert_eq!(stderr_on_threads(&c, &args, "4"), one);
}

/// A lane counts the attempts of its 4 chunks before the one it decides as
/// still held: they may wait to be written, however the threads ran.
/// 8192 requests over 1 s under L = 1 per 1 s, each refused one retried at
/// once up to 19 times, in chunks of 4096 arrivals. By hand: at each look
/// a lane makes room for E + 8192 places (its E attempts and 4096
/// arrivals); the first chunk's grows to 131072 places (E = 61440), 7.0
/// MiB, within the 8.0 MiB share. In the second, 16384 places (896 KiB)
/// and the first chunk's 7.0 MiB fit with 131072 B to spare, but at E =
/// 12288 its room for 20480 doubles to 32768 places: 1.8 MiB, 8.8 MiB with
/// the first chunk's. The second chunk began with the 19 retries of the
/// first's last arrival, so E falls in those of its arrival 645: 646
/// decided, 3450 left.
#[test]
fn r45_decisions_of_earlier_chunks_count_until_written() {
    let c = Case::new(
        "name = \"x\"\n[limit]\nrequests = 1\nwindow = \"1s\"\n[retry]\npolicy = \"immediate\"\nmax_attempts = 20\n\
         [[traffic]]\nkind = \"burst\"\ncount = 8192\nspan = \"1s\"\n[[limiter]]\nkind = \"fixed_window\"\n",
    );
    let args = ["run", "s.toml", "--out", "out", "--memory", "16MiB", "--decisions", "-q", "--no-charts"];
    c.fails(
        &args,
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: `fixed_window` ran 12288 attempts of its clients (retries and closed clients' requests) among the arrivals of one chunk, up to 0.578735365 s, and came to need 8.8 MiB (32 B of admitted timestamps inside exact windows, 4.3 KiB of waiting requests and 8.8 MiB for attempts kept for decisions.csv until their chunk is written: the 12934 it kept in this chunk so far, with room for 7546 more before it looks again, and 7.0 MiB for those of the 4 chunks before it, which may not be written yet), more than 8.0 MiB, its share of the 16.0 MiB the run may use (--memory) as one of 2 limiters run side by side (the exact reference included).",
        ],
    );
    assert!(!c.path("out").exists());
    let one = stderr_on_threads(&c, &args, "1");
    assert_eq!(stderr_on_threads(&c, &args, "2"), one);
}

/// `BURSTS_AND_CLOSED` with `requests` per 1 s and the given limiters: a
/// closed population of 1000 clients thinking 10 us between two
/// open-loop requests at 0 and 200 ms.
fn bursts_and_closed(requests: &str, first: &str, limiters: &str) -> String {
    format!(
        "name = \"x\"\nduration = \"300ms\"\n[limit]\nrequests = {requests}\nwindow = \"1s\"\n[[traffic]]\n\
         kind = \"burst\"\ncount = {first}\n[[traffic]]\nkind = \"burst\"\nstart = \"200ms\"\ncount = 1\n[[traffic]]\n\
         kind = \"closed\"\nclients = 1000\nthink = \"10us\"\n{limiters}"
    )
}

/// r39 with 16 limiters: each lane's share is a seventeenth of 16 MiB,
/// 986895 B, so each stops when its ring doubles to 1.0 MiB (at the
/// 65537th timestamp) and the run's check finds 17.0 MiB with 17 x 71.9
/// KiB of waiting requests. With each lane held only to the whole budget
/// the same run once reached 185 MB resident before it stopped. The same on
/// any thread count.
#[test]
fn r39_many_limiters_share_the_memory_budget_without_decisions() {
    let limiters = "[[limiter]]\nkind = \"fixed_window\"\n".repeat(16);
    let c = Case::new(&bursts_and_closed("1000000000", "1", &limiters));
    let args = ["run", "s.toml", "--out", "out", "--memory", "16MiB", "-q", "--no-charts"];
    c.fails(
        &args,
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: the run holds 17.0 MiB of admitted timestamps inside exact windows and 1.2 MiB of waiting requests (18.2 MiB in all), more than the 16.0 MiB it may use (--memory)",
        ],
    );
    assert!(!c.path("out").exists());
    let one = stderr_on_threads(&c, &args, "1");
    assert_eq!(stderr_on_threads(&c, &args, "4"), one);
}

const LOG_REJECTED: &str = "[[limiter]]\nkind = \"sliding_log\"\ncount_rejected = true\n";

/// A sliding log that logs rejected requests too holds every attempt of
/// the window (16 B each), whatever the limit, while the exact reference
/// holds one: at the look after 262144 attempts its log of 262145 doubles
/// to 524288 x 16 B = 8.0 MiB, past its share (half of 16 MiB) with the
/// 71.9 KiB of waiting requests, though the run is well within the budget.
#[test]
fn r46_a_lane_past_its_share_of_the_budget_without_decisions() {
    let c = Case::new(&bursts_and_closed("1", "1", LOG_REJECTED));
    let args = ["run", "s.toml", "--out", "out", "--memory", "16MiB", "-q", "--no-charts"];
    c.fails(
        &args,
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: `sliding_log(count_rejected)` ran 262144 attempts of its clients (retries and closed clients' requests) among the arrivals of one chunk, up to 0.00261755 s, and came to hold 8.1 MiB (8.0 MiB of timestamps of admitted and rejected requests inside exact windows, 71.9 KiB of waiting requests), more than 8.0 MiB, its share of the 16.0 MiB the run may use (--memory) as one of 2 limiters run side by side (the exact reference included). Use fewer closed clients or a longer `think`, a lower `max_attempts` or a retry `budget`, or, if the machine has the memory, raise --memory\n",
        ],
    );
    assert!(!c.path("out").exists());
    let one = stderr_on_threads(&c, &args, "1");
    assert_eq!(stderr_on_threads(&c, &args, "4"), one);
}

/// 262144 requests at 0 fill the first chunk: the log of rejected
/// requests holds them all, 262144 x 16 B = 4.0 MiB, past its share (a
/// third of 10 MiB) but within the budget with the others. It may keep
/// what it held, not add to it: at its first look in the next chunk (4096
/// attempts) its log has doubled to 8.0 MiB.
#[test]
fn r47_a_lane_past_its_share_when_the_chunk_began_may_not_grow() {
    let limiters = format!("{LOG_REJECTED}[[limiter]]\nkind = \"fixed_window\"\n");
    let c = Case::new(&bursts_and_closed("1", "262144", &limiters));
    let args = ["run", "s.toml", "--out", "out", "--memory", "10MiB", "-q", "--no-charts"];
    c.fails(
        &args,
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: `sliding_log(count_rejected)` ran 4096 attempts of its clients (retries and closed clients' requests) among the arrivals of one chunk, up to 0.000040877 s, and came to hold 8.3 MiB (8.0 MiB of timestamps of admitted and rejected requests inside exact windows, 327.9 KiB of waiting requests), more than the 4.3 MiB it held when the chunk began, already past 3.3 MiB, its share of the 10.0 MiB the run may use (--memory) as one of 3 limiters run side by side (the exact reference included). Use fewer closed clients or a longer `think`, a lower `max_attempts` or a retry `budget`, or, if the machine has the memory, raise --memory\n",
        ],
    );
    assert!(!c.path("out").exists());
}

/// Open-loop only: a log of rejected requests over a 10 s window holds
/// every arrival of a Poisson 10^6/s stream. After the third chunk of
/// 262144 its ring has doubled to 2^20 x 16 B = 16777216 B, and with the
/// 128 B of the other two lanes' rings the run passes 16 MiB. The limit
/// (one request) does not bound it, and the message says so.
#[test]
fn r48_a_log_of_rejected_requests_past_the_memory_budget() {
    let c = Case::new(&format!(
        "name = \"x\"\nduration = \"10s\"\n[limit]\nrequests = 1\nwindow = \"10s\"\n[[traffic]]\nkind = \"poisson\"\n\
         rate = 1000000\n[[limiter]]\nkind = \"fixed_window\"\n{LOG_REJECTED}"
    ));
    c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "16MiB", "-q", "--no-charts"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: the run holds 16777344 B of timestamps of admitted and rejected requests inside exact windows, more than the 16777216 B it may use (--memory): `sliding_log(count_rejected)` logs every request inside its window, rejected ones too, so its log grows with the traffic, not with limit.requests; ratesim keeps every entry to decide exactly. Use a shorter window or a shorter or sparser trace, or, if the machine has the memory, raise --memory\n",
        ],
    );
    assert!(!c.path("out").exists());
}

// ---- many nodes: [nodes] and the topology sweeps ------------------------------

/// `BASE` with `table` after a blank line: `[nodes]` (or `[sweep]`) starts on
/// line 18.
fn with_nodes(table: &str) -> String {
    format!("{BASE}\n{table}")
}

#[test]
fn n01_count_zero() {
    for n in ["0", "99999999999999999999"] {
        Case::new(&with_nodes(&format!("[nodes]\ncount = {n}\n"))).refused(&[
            "s.toml:19:9:",
            &format!("`nodes.count` must be a whole number from 1 to 1000, got {n}"),
        ]);
    }
}

#[test]
fn n02_skew_length_differs_from_count() {
    Case::new(&with_nodes("[nodes]\ncount = 3\nskew = [\"0ms\", \"10ms\"]\n"))
        .refused(&["s.toml:20:8:", "`nodes.skew` has 2 offsets for 3 nodes: give one per node"]);
}

#[test]
fn n03_weights_of_the_wrong_length() {
    Case::new(&with_nodes("[nodes]\ncount = 3\nbalance = { weights = [1, 2] }\n"))
        .refused(&["s.toml:20:11:", "`nodes.balance.weights` has 2 weights for 3 nodes: give one per node"]);
}

#[test]
fn n04_weights_all_zero() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nbalance = { weights = [0, 0] }\n"))
        .refused(&["s.toml:20:11:", "`nodes.balance.weights` are all 0: no node would get a request; give at least one node a weight above 0, like [1, 0]\n"]);
}

#[test]
fn n05_central_without_rtt() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nmode = \"central\"\n")).refused(&[
        "s.toml:20:8:",
        "`nodes.rtt` is required for mode = \"central\": the node-to-store round trip, like \"2ms\"",
    ]);
}

#[test]
fn n06_sync_interval_zero() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nmode = \"sync\"\nsync_interval = \"0ms\"\n"))
        .refused(&["s.toml:21:17:", "`nodes.sync_interval` must be longer than 0, got \"0ms\""]);
}

#[test]
fn n07_overlapping_outages() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1ms\"\n\n[[nodes.outage]]\nstart = \"100ms\"\nend = \"300ms\"\n\n[[nodes.outage]]\nstart = \"200ms\"\nend = \"400ms\"\nfail = \"closed\"\n")).refused(&["s.toml:28:9:", "`nodes.outage[1].start` [0.2 s, 0.4 s) overlaps an earlier outage [0.1 s, 0.3 s): give each moment one outage"]);
}

#[test]
fn n08_skew_makes_a_node_time_negative() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nskew = [\"0ms\", \"-150ms\"]\n")).refused(&["s.toml:20:16:", "`nodes.skew[1]` = \"-150ms\" puts a node's clock 150ms behind, but requests may come from 0.1 s: its time would be negative; start the traffic at least that late"]);
}

/// A clock offset past signed 64-bit nanoseconds, ahead or behind: the
/// message says the limit. A large one within it runs.
#[test]
fn n34_skew_too_large() {
    for skew in ["4000000h", "-4000000h"] {
        Case::new(&with_nodes(&format!("[nodes]\ncount = 2\nskew = [\"{skew}\", \"0s\"]\n"))).refused(&[
            "s.toml:20:9:",
            &format!("`nodes.skew[0]` = \"{skew}\" is too large: a clock offset is kept in signed 64-bit nanoseconds, so it may be at most 9223372036854775807 ns (about 292 years) either way"),
        ]);
    }
    let c = Case::new(&with_nodes("[nodes]\ncount = 2\nskew = [\"2000000h\", \"0s\"]\n"));
    let out = c.run(&["run", "s.toml", "--out", "out", "-q", "--no-charts"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn n09_sync_with_a_limiter_that_keeps_no_counts() {
    let text = with("kind = \"slot_counter\"\nslots = [2, 10]", "kind = \"leaky_bucket\"")
        + "\n[nodes]\ncount = 2\nmode = \"sync\"\nsync_interval = \"100ms\"\n";
    Case::new(&text).refused(&["s.toml:19:8:", "mode = \"sync\" adds up the nodes' counts, but `leaky_bucket` keeps no counts to add: use mode = \"local\" or \"central\" for it"]);
}

#[test]
fn n10_per_node_floor_gives_zero() {
    Case::new(&with_nodes("[nodes]\ncount = 20\nper_node = \"floor\"\n")).refused(&[
        "s.toml:20:12:",
        "`nodes.per_node` = \"floor\" gives floor(10 / 20) = 0: every node would refuse everything",
    ]);
}

#[test]
fn n11_rtt_in_local_mode() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nrtt = \"1ms\"\n"))
        .refused(&["s.toml:20:7:", "`nodes.rtt` has no effect with mode = \"local\": remove it, or use mode = \"central\", which takes it\n"]);
}

#[test]
fn n12_per_node_in_central_mode() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1ms\"\nper_node = 5\n"))
        .refused(&["s.toml:22:12:", "`nodes.per_node` has no effect unless mode = \"local\": the other modes decide against one limit of L (one store, or counts added up); remove it\n"]);
}

#[test]
fn n13_sync_interval_in_central_mode() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1ms\"\nsync_interval = \"1s\"\n"))
        .refused(&["s.toml:22:17:", "`nodes.sync_interval` has no effect with mode = \"central\": remove it, or use mode = \"sync\", which takes it\n"]);
}

#[test]
fn n14_outage_in_local_mode() {
    Case::new(&with_nodes("[nodes]\ncount = 2\n\n[[nodes.outage]]\nstart = \"100ms\"\nend = \"300ms\"\n"))
        .refused(&["s.toml:21:1:", "`nodes.outage`: in mode = \"local\" there is no store to lose"]);
}

#[test]
fn n15_skew_in_central_mode() {
    Case::new(&with_nodes(
        "[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1ms\"\nskew = [\"0ms\", \"10ms\"]\n",
    ))
    .refused(&[
        "s.toml:22:8:",
        "`nodes.skew` has no effect with mode = \"central\": the store's clock decides every request",
    ]);
}

#[test]
fn n16_skew_in_sync_mode() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nmode = \"sync\"\nsync_interval = \"100ms\"\nskew = [\"0ms\", \"10ms\"]\n")).refused(&["s.toml:22:8:", "`nodes.skew` is not modelled with mode = \"sync\": a node would decide at its own time on counts stamped by clocks ahead of it; use mode = \"local\""]);
}

#[test]
fn n17_unknown_mode() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nmode = \"cluster\"\n")).refused(&[
        "s.toml:20:8:",
        "`nodes.mode` = \"cluster\" is not known: expected one of \"local\", \"central\", \"sync\"",
    ]);
}

#[test]
fn n18_unknown_balance() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nbalance = \"least_conn\"\n")).refused(&["s.toml:20:11:", "`nodes.balance` must be \"round_robin\", \"random\", \"key_hash\" or { weights = [3, 1, ...] }, got \"least_conn\""]);
}

#[test]
fn n19_unknown_key_near_miss() {
    Case::new(&with_nodes("[nodes]\ncuont = 2\n")).refused(&["s.toml:19:1:", "unknown field `cuont` in `nodes`, expected one of `count`, `balance`, `mode`, `per_node`, `skew`, `rtt`, `atomic`, `sync_interval`, `outage`; did you mean `count`?"]);
}

#[test]
fn n20_outage_end_before_start() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1ms\"\n\n[[nodes.outage]]\nstart = \"300ms\"\nend = \"100ms\"\n")).refused(&["s.toml:25:7:", "`nodes.outage[0].end` (0.1 s) must be after `start` (0.3 s)"]);
}

#[test]
fn n21_outage_fail_not_known() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1ms\"\n\n[[nodes.outage]]\nstart = \"100ms\"\nend = \"300ms\"\nfail = \"half\"\n")).refused(&["s.toml:26:8:", "`nodes.outage[0].fail` = \"half\" is not known: expected one of \"open\", \"closed\""]);
}

#[test]
fn n22_per_node_zero() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nper_node = 0\n")).refused(&[
        "s.toml:20:12:",
        "`nodes.per_node` must be \"ceil\", \"floor\" or a whole number of at least 1, got 0",
    ]);
}

/// A weight out of range, or not a whole number: the element is named,
/// shown and pointed at (past 2^63 the parser once said "`nodes.balance`:
/// u64 value was too large").
#[test]
fn n35_balance_weight_out_of_range() {
    Case::new(&with_nodes("[nodes]\ncount = 3\nbalance = { weights = [18446744073709551615, 1, 1] }\n")).refused(&[
        "s.toml:20:24: `nodes.balance.weights[0]` must be a whole number from 0 to 1000000, got 18446744073709551615",
    ]);
    Case::new(&with_nodes("[nodes]\ncount = 3\nbalance = { weights = [1, 1.5, 1] }\n")).refused(&[
        "s.toml:20:27: `nodes.balance.weights[1]` must be a whole number from 0 to 1000000, got 1.5",
    ]);
    Case::new(&with_nodes("[nodes]\ncount = 2\nbalance = { weights = [1, -1] }\n")).refused(&[
        "s.toml:20:27: `nodes.balance.weights[1]` must be a whole number from 0 to 1000000, got -1",
    ]);
    Case::new(&with_nodes("[nodes]\ncount = 2\nper_node = 18446744073709551615\n")).refused(&[
        "s.toml:20:12: `nodes.per_node`: 18446744073709551615 is too large: expected a whole number up to 9223372036854775807",
    ]);
}

#[test]
fn n36_count_missing() {
    Case::new(&with_nodes("[nodes]\nbalance = \"random\"\n"))
        .refused(&["s.toml:18:1:", "`nodes.count` is required: how many nodes, like 5"]);
}

#[test]
fn n37_sync_without_sync_interval() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nmode = \"sync\"\n")).refused(&[
        "s.toml:20:8:",
        "`nodes.sync_interval` is required for mode = \"sync\": how often nodes exchange counts, like \"1s\"",
    ]);
}

/// A balance table takes only `weights`: another key is named (a near miss
/// with a suggestion), and an empty table says what it lacks.
#[test]
fn n38_balance_table_with_another_key() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nbalance = { weights = [1, 2], x = 1 }\n")).refused(&[
        "s.toml:20:35:",
        "`nodes.balance.x` is not known: a balance table takes only `weights`, one weight per node, like { weights = [3, 1] }",
    ]);
    Case::new(&with_nodes("[nodes]\ncount = 2\nbalance = { weight = [1, 2] }\n")).refused(&[
        "s.toml:20:22:",
        "`nodes.balance.weight` is not known: a balance table takes only `weights`, one weight per node, like { weights = [3, 1] }; did you mean `weights`?",
    ]);
    Case::new(&with_nodes("[nodes]\ncount = 2\nbalance = {}\n")).refused(&[
        "s.toml:20:11:",
        "`nodes.balance` = { } has no `weights`: give one weight per node, like { weights = [3, 1] }, or name a balance: \"round_robin\", \"random\" or \"key_hash\"",
    ]);
}

#[test]
fn n39_weights_not_a_list() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nbalance = { weights = 3 }\n")).refused(&[
        "s.toml:20:23:",
        "`nodes.balance.weights` must be a list of whole numbers from 0 to 1000000, one per node, like [3, 1], got 3",
    ]);
}

/// `key_hash` sends every request of a key to one node: with no client keys
/// every request has key 0, and one node would take them all. A Poisson
/// source with `clients` (or a csv `key_column`) gives keys; a closed
/// population does not.
#[test]
fn n42_key_hash_without_client_keys() {
    let message = "`nodes.balance` = \"key_hash\" sends all the requests of a client key to one node, but no source gives client keys (a poisson source with `clients`, or a csv source with `key_column`): every request would go to node 0. Use \"round_robin\" or \"random\" to spread them, or give the traffic client keys";
    Case::new(&with_nodes("[nodes]\ncount = 2\nbalance = \"key_hash\"\n"))
        .refused(&["s.toml:20:11:", message]);
    let closed = with_traffic("kind = \"closed\"\nclients = 10\nthink = \"100ms\"");
    // (the closed source is one line shorter than the burst)
    Case::new(&format!("{closed}\n[nodes]\ncount = 2\nbalance = \"key_hash\"\n"))
        .refused(&["s.toml:19:11:", message]);
    let keyed = with_traffic("kind = \"poisson\"\nrate = 100.0\nclients = 50");
    let out = Case::new(&format!("{keyed}\n[nodes]\ncount = 2\nbalance = \"key_hash\"\n"))
        .run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// An outage at or after the scenario's `duration` never comes: the run
/// ended first, and the outage was silently no part of it.
#[test]
fn n44_outage_after_the_duration() {
    let central = "[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1ms\"\n";
    for start in ["2s", "30s"] {
        Case::new(&with_nodes(&format!("{central}outage = [{{ start = \"{start}\", end = \"40s\" }}]\n"))).refused(&[
            &format!("error: s.toml:22:21: `nodes.outage[0].start` ({} s) must be before the scenario's `duration` (2 s): the run ends first, so the store would never be lost; start the outage earlier, or remove it\n", start.trim_end_matches('s')),
        ]);
    }
    // One that starts within the run may end past it.
    let out = Case::new(&with_nodes(&format!("{central}outage = [{{ start = \"1s\", end = \"40s\" }}]\n")))
        .run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// The store's writes in flight (get-then-set) and each node's requests
/// since its last sync grow with the traffic; they once went unseen by
/// `--memory` (an hour between syncs: 3 GB under `--memory 64MiB`, and a
/// fuzz case killed at 24 GB). Counted, they stop the run with advice for
/// the mode, the previous results kept.
#[test]
fn n43_node_state_past_the_memory_budget() {
    let traffic = with("duration = \"2s\"", "duration = \"200ms\"")
        .replace("requests = 10", "requests = 10000")
        .replace("window = \"1s\"", "window = \"1ms\"")
        .replace(
            "kind = \"burst\"\nstart = \"100ms\"\nspan = \"10ms\"\ncount = 20",
            "kind = \"constant\"\nload = 1.0",
        )
        .replace("kind = \"slot_counter\"\nslots = [2, 10]", "kind = \"fixed_window\"");
    let sync =
        Case::new(&format!("{traffic}\n[nodes]\ncount = 2\nmode = \"sync\"\nsync_interval = \"1h\"\n"));
    let out = sync.run(&["run", "s.toml", "--out", "out", "-q", "--no-charts"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let before = sync.snapshot("out");
    sync.fails(
        &["run", "s.toml", "--out", "out", "--memory", "16MiB"],
        1,
        &[
            "error: scenario s.toml failed; previous results were kept",
            "caused by: the limiters on nodes hold ",
            " of their own state and the rest of the run ",
            " in all, more than the 16.0 MiB the run may use (--memory): each node keeps every request it counted since the last sync until the next (sync_interval = 1h), so they grow with the traffic in one interval. Use a shorter `sync_interval` or a sparser trace, or, if the machine has the memory, raise --memory",
        ],
    );
    assert_eq!(sync.snapshot("out"), before, "previous results kept");
    let central =
        format!("{traffic}\n[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1h\"\natomic = false\n");
    Case::new(&central).fails(
        &["run", "s.toml", "--out", "out", "--memory", "16MiB"],
        1,
        &["with get-then-set writes (atomic = false), the store keeps every write for a round trip until it lands (rtt = 1h), one state per admitted request, so they grow with the traffic in one round trip. Use a shorter `rtt`, atomic = true, or a sparser trace"],
    );
    // Atomic writes hold nothing in flight: the same run fits.
    let atomic = central.replace("atomic = false", "atomic = true");
    let out =
        Case::new(&atomic).run(&["run", "s.toml", "--out", "out", "-q", "--no-charts", "--memory", "16MiB"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn n23_sweep_nodes_in_central_mode() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1ms\"\n\n[sweep]\nnodes = [1, 2, 3]\n")).refused(&["s.toml:24:9:", "`sweep.nodes` has no effect with mode = \"central\": the one store decides every request, however many nodes ask it; sweep `rtts` instead"]);
}

#[test]
fn n24_sweep_nodes_with_weights() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nbalance = { weights = [1, 2] }\n\n[sweep]\nnodes = [1, 2, 3]\n")).refused(&["s.toml:23:9:", "`sweep.nodes` changes the number of nodes, but `nodes.balance.weights` gives one weight per node: use another balance to sweep it"]);
}

#[test]
fn n25_sweep_nodes_zero() {
    Case::new(&with_nodes("[sweep]\nnodes = [1, 0, 3]\n"))
        .refused(&["s.toml:19:13:", "`sweep.nodes[1]` must be a whole number from 1 to 1000, got 0"]);
}

#[test]
fn n26_sweep_nodes_floor_gives_zero() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nper_node = \"floor\"\n\n[sweep]\nnodes = [2, 5, 20]\n")).refused(&["s.toml:23:16:", "`sweep.nodes[2]` = 20 with `nodes.per_node` = \"floor\" gives floor(10 / 20) = 0: every node would refuse everything"]);
}

#[test]
fn n27_sweep_rtts_outside_central_mode() {
    Case::new(&with_nodes("[nodes]\ncount = 2\n\n[sweep]\nrtts = [\"0ms\", \"1ms\"]\n")).refused(&["s.toml:22:8:", "`sweep.rtts` sweeps the store's round trip: it needs mode = \"central\" in [nodes] (or no [nodes] table), not \"local\""]);
}

#[test]
fn n28_sweep_sync_intervals_without_nodes() {
    Case::new(&with_nodes("[sweep]\nsync_intervals = [\"100ms\"]\n")).refused(&["s.toml:19:18:", "`sweep.sync_intervals` sweeps how often nodes sync: it needs mode = \"sync\" in [nodes] with its `count`, and there is no [nodes] table"]);
}

#[test]
fn n29_sweep_sync_interval_zero() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nmode = \"sync\"\nsync_interval = \"100ms\"\n\n[sweep]\nsync_intervals = [\"100ms\", \"0s\"]\n")).refused(&["s.toml:24:28:", "`sweep.sync_intervals[1]` must be longer than 0, got \"0s\""]);
}

#[test]
fn n30_sweep_nodes_without_traffic() {
    Case::new("name = \"t\"\n\n[limit]\nrequests = 10\nwindow = \"1s\"\n\n[sweep]\nnodes = [1, 2]\n")
        .refused(&[
            "s.toml:8:9:",
            "`sweep.nodes` reruns the scenario's own traffic, but it has no [[traffic]] source: add one",
        ]);
}

#[test]
fn n31_sweep_nodes_empty() {
    Case::new(&with_nodes("[sweep]\nnodes = []\n")).refused(&[
        "s.toml:19:9:",
        "`sweep.nodes` is empty: give at least one number of nodes, like [1, 2, 3, 5, 10]",
    ]);
}

#[test]
fn n32_sweep_nodes_with_skew() {
    Case::new(&with_nodes("[nodes]\ncount = 2\nskew = [\"0ms\", \"-40ms\"]\n\n[sweep]\nnodes = [1, 2]\n")).refused(&["s.toml:23:9:", "`sweep.nodes` changes the number of nodes, but `nodes.skew` gives one clock offset per node: remove it to sweep the number of nodes"]);
}

#[test]
fn n33_sweep_nodes_and_rtts_without_nodes() {
    Case::new(&with_nodes("[sweep]\nnodes = [1, 2]\nrtts = [\"1ms\"]\n")).refused(&["s.toml:20:8:", "`sweep.nodes` and `sweep.rtts` change different modes (local and central): give [nodes] a mode, or sweep them in two scenarios"]);
}

// ---- production limiters: gcra and token_bucket -------------------------------

#[test]
fn n40_sweep_rtts_empty() {
    Case::new(&format!("{BASE}\n[sweep]\nrtts = []\n")).refused(&[
        "s.toml:19:8:",
        "`sweep.rtts` is empty: give at least one round trip, like [\"0ms\", \"1ms\", \"10ms\"]",
    ]);
}

#[test]
fn n41_sweep_sync_intervals_empty() {
    Case::new(&with_nodes(
        "[nodes]\ncount = 2\nmode = \"sync\"\nsync_interval = \"100ms\"\n\n[sweep]\nsync_intervals = []\n",
    ))
    .refused(&[
        "s.toml:24:18:",
        "`sweep.sync_intervals` is empty: give at least one interval, like [\"100ms\", \"1s\"]",
    ]);
}

/// `BASE` with its slot counter replaced by these lines (from line 15).
fn with_limiter(lines: &str) -> String {
    with("kind = \"slot_counter\"\nslots = [2, 10]", lines)
}

#[test]
fn g01_burst_zero() {
    Case::new(&with_limiter("kind = \"gcra\"\nburst = 0"))
        .refused(&["s.toml:16:9:", "`limiter[0].burst` must be a whole number of at least 1, got 0"]);
}

#[test]
fn g02_burst_negative_in_a_list() {
    Case::new(&with_limiter("kind = \"gcra\"\nburst = [10, -1]"))
        .refused(&["s.toml:16:14:", "`limiter[0].burst[1]` must be a whole number of at least 1, got -1"]);
}

#[test]
fn g03_burst_empty_list() {
    Case::new(&with_limiter("kind = \"gcra\"\nburst = []"))
        .refused(&["s.toml:16:9:", "`limiter[0].burst` is empty: give at least one burst"]);
}

#[test]
fn g04_burst_wrong_type() {
    Case::new(&with_limiter("kind = \"gcra\"\nburst = 2.5")).refused(&[
        "s.toml:16:9:",
        "`limiter[0].burst`",
        "expected a whole number or a list of them (like 10 or [2, 10]), found the number 2.5",
    ]);
}

#[test]
fn g05_burst_overflows() {
    Case::new(&with_limiter("kind = \"gcra\"\nburst = 9223372036854775807")).refused(&[
        "s.toml:16:9:",
        "`limiter[0].burst` = 9223372036854775807 is too large for this limit",
        "T = 100000000 ns",
        "past the end of time",
    ]);
}

#[test]
fn g06_burst_misspelt() {
    Case::new(&with_limiter("kind = \"gcra\"\nbrust = 3")).refused(&[
        "s.toml:16:1:",
        "`limiter[0].brust` is not a key of kind \"gcra\" (it takes: burst, max_wait, retry_after)",
        "did you mean `burst`?",
    ]);
}

#[test]
fn g07_capacity_zero() {
    Case::new(&with_limiter("kind = \"token_bucket\"\ncapacity = [0]"))
        .refused(&["s.toml:16:13:", "`limiter[0].capacity[0]` must be a whole number of at least 1, got 0"]);
}

#[test]
fn g08_unknown_initial() {
    Case::new(&with_limiter("kind = \"token_bucket\"\ninitial = \"half\"")).refused(&[
        "s.toml:16:11:",
        "`limiter[0].initial` = \"half\" is not known: expected one of \"full\", \"empty\"",
    ]);
}

#[test]
fn g09_unknown_refill() {
    Case::new(&with_limiter("kind = \"token_bucket\"\nrefill = \"timed\"")).refused(&[
        "s.toml:16:10:",
        "`limiter[0].refill` = \"timed\" is not known: expected one of \"continuous\", \"timer\"",
        "did you mean \"timer\"?",
    ]);
}

#[test]
fn g10_continuous_key_in_timer_mode() {
    Case::new(&with_limiter("kind = \"token_bucket\"\nrefill = \"timer\"\ncapacity = 5")).refused(&[
        "s.toml:17:12:",
        "`limiter[0].capacity` only applies to refill = \"continuous\"",
        "refill = \"timer\" takes max_tokens, tokens_per_fill, fill_interval",
    ]);
}

#[test]
fn g11_timer_key_in_continuous_mode() {
    Case::new(&with_limiter("kind = \"token_bucket\"\nmax_tokens = 5")).refused(&[
        "s.toml:16:14:",
        "`limiter[0].max_tokens` only applies to refill = \"timer\"",
        "refill = \"continuous\" (the default) takes capacity, initial",
    ]);
}

#[test]
fn g12_max_tokens_zero() {
    Case::new(&with_limiter("kind = \"token_bucket\"\nrefill = \"timer\"\nmax_tokens = 0"))
        .refused(&["s.toml:17:14:", "`limiter[0].max_tokens` must be a whole number of at least 1, got 0"]);
}

#[test]
fn g13_tokens_per_fill_zero() {
    Case::new(&with_limiter("kind = \"token_bucket\"\nrefill = \"timer\"\ntokens_per_fill = 0")).refused(&[
        "s.toml:17:19:",
        "`limiter[0].tokens_per_fill` must be a whole number of at least 1, got 0",
    ]);
}

#[test]
fn g14_tokens_per_fill_above_max_tokens() {
    Case::new(&with_limiter(
        "kind = \"token_bucket\"\nrefill = \"timer\"\nmax_tokens = 4\ntokens_per_fill = 5",
    ))
    .refused(&[
        "s.toml:18:19:",
        "`limiter[0].tokens_per_fill` = 5 is more than `max_tokens` (4)",
        "a fill cannot add more than the bucket holds",
    ]);
}

#[test]
fn g15_fill_interval_zero() {
    Case::new(&with_limiter("kind = \"token_bucket\"\nrefill = \"timer\"\nfill_interval = \"0s\""))
        .refused(&["s.toml:17:17:", "`limiter[0].fill_interval` must be longer than 0, got \"0s\""]);
}

#[test]
fn g16_fill_interval_without_unit() {
    Case::new(&with_limiter("kind = \"token_bucket\"\nrefill = \"timer\"\nfill_interval = \"100\""))
        .refused(&["s.toml:17:17:", "`limiter[0].fill_interval`", "`100` is not a duration"]);
}

#[test]
fn g17_unknown_token_bucket_key() {
    Case::new(&with_limiter("kind = \"token_bucket\"\nrate = 5")).refused(&[
        "s.toml:16:1:",
        "`limiter[0].rate` is not a key of kind \"token_bucket\"",
        "(it takes: refill, capacity, initial, max_tokens, tokens_per_fill, fill_interval, max_wait, retry_after)",
    ]);
}

#[test]
fn g19_max_wait_not_a_duration() {
    Case::new(&with_limiter("kind = \"gcra\"\nmax_wait = \"soon\""))
        .refused(&["s.toml:16:12:", "`limiter[0].max_wait`: `soon` is not a duration"]);
}

#[test]
fn g20_max_wait_a_number() {
    Case::new(&with_limiter("kind = \"gcra\"\nmax_wait = -1"))
        .refused(&["s.toml:16:12:", "`limiter[0].max_wait`: expected a string, found the number -1 (a duration is a string with a unit, like \"1s\""]);
}

#[test]
fn g21_max_wait_on_the_timer_bucket() {
    Case::new(&with_limiter("kind = \"token_bucket\"\nrefill = \"timer\"\nmax_wait = \"1s\"")).refused(&[
        "s.toml:17:12:",
        "`limiter[0].max_wait` only applies to refill = \"continuous\": Envoy's timer bucket never delays a request",
    ]);
}

#[test]
fn g22_max_wait_misspelt() {
    Case::new(&with_limiter("kind = \"gcra\"\nmax_wiat = \"1s\"")).refused(&[
        "s.toml:16:1:",
        "`limiter[0].max_wiat` is not a key of kind \"gcra\" (it takes: burst, max_wait, retry_after)",
        "did you mean `max_wait`?",
    ]);
}

#[test]
fn g23_capacity_empty_list() {
    Case::new(&with_limiter("kind = \"token_bucket\"\ncapacity = []"))
        .refused(&["s.toml:16:12:", "`limiter[0].capacity` is empty: give at least one capacity"]);
}

/// Every new key accepted: `check` lists one limiter per list value, and a
/// run decides with all of them.
#[test]
fn g18_check_and_run_the_production_limiters() {
    let text = with_limiter(
        "kind = \"gcra\"\nburst = [1, 10, 100]\n\n[[limiter]]\nkind = \"token_bucket\"\ncapacity = 20\ninitial = \"empty\"\n\n\
         [[limiter]]\nkind = \"token_bucket\"\nrefill = \"timer\"\nmax_tokens = 5\ntokens_per_fill = 2\nfill_interval = \"100ms\"",
    );
    let case = Case::new(&text);
    let out = case.run(&["check", "s.toml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let labels = "gcra(burst=1), gcra, gcra(burst=100), token_bucket(capacity=20;initial=empty), \
                  token_bucket(timer;max_tokens=5;tokens_per_fill=2;fill_interval=100ms)";
    let reference = "sliding_log (added: the exact reference every run has)";
    assert!(out.stdout.contains(&format!("limiters  {labels}, {reference}\n")), "{}", out.stdout);
    let out = case.run(&["run", "s.toml", "--out", "out"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let summary = fs::read_to_string(case.path("out").join("summary.csv")).unwrap();
    // 20 requests in [100 ms, 110 ms): burst 1 admits the first; 10 (= L)
    // and 100 admit 10 and 20; the empty bucket has 1 token by 100 ms (10
    // per second from 0); the timer bucket holds 5, with a fill at 100 ms.
    for (label, admitted) in [
        ("gcra(burst=1)", 1),
        ("gcra", 10),
        ("gcra(burst=100)", 20),
        ("token_bucket(capacity=20;initial=empty)", 1),
        ("token_bucket(timer;max_tokens=5;tokens_per_fill=2;fill_interval=100ms)", 5),
    ] {
        let row = summary.lines().find(|l| l.starts_with(&format!("{label},")));
        let row = row.unwrap_or_else(|| panic!("{label} not in\n{summary}"));
        assert!(row.contains(&format!(",20,{admitted},")), "{label}: {row}\n{summary}");
    }
}

// ---- shaping: delayed requests and the memory budget ---------------------------

/// Guava's acquire() never refuses: Poisson at 3 x L for 1000 s keeps about
/// two thirds of all requests waiting by the end. L = 100 per 1 s.
const ACQUIRE_OVERLOAD: &str = r#"name = "t"
duration = "1000s"

[limit]
requests = 100
window = "1s"

[[traffic]]
kind = "poisson"
load = 3.0

[[limiter]]
kind = "guava"
"#;

/// The queue of delayed requests counts against the run's memory budget:
/// past it the run stops at the next check, every 13 107 arrivals under
/// 1 MiB (a chunk adds at most a quarter of the budget), with its queue
/// within twice the budget (it once ran a whole chunk of 262 144 arrivals
/// and stopped at 4.7 MiB) and an error that names the limiter and what to
/// change. With a `timeout`, as the error advises, the same traffic runs
/// within the same budget (at most 101 wait).
#[test]
fn sh01_delayed_requests_past_the_memory_budget() {
    let c = Case::new(ACQUIRE_OVERLOAD);
    let err = c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "1MiB"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: `guava` had up to ",
            " delayed requests waiting for the backend at once: its queue holds 1.2 MiB for them",
            "passes the 1.0 MiB the run may use (--memory)",
            "`guava` without `timeout` is Guava's acquire(), which never refuses",
            "Give it a `timeout`",
            "shorten the scenario's `duration`",
        ],
    );
    // Two thirds of four checks' arrivals are waiting.
    let peak: u64 =
        err.split("`guava` had up to ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!((34_000..36_000).contains(&peak), "{peak}");
    assert!(!c.path("out").exists());
    fs::write(c.path("s.toml"), format!("{ACQUIRE_OVERLOAD}timeout = \"1s\"\n")).unwrap();
    let out = c.run(&["run", "s.toml", "--out", "out", "--memory", "1MiB", "-q", "--no-charts"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let summary = fs::read_to_string(c.path("out/summary.csv")).unwrap();
    let queue_peak: u64 = summary.lines().nth(1).unwrap().rsplit(',').next().unwrap().parse().unwrap();
    assert!(queue_peak <= 101, "{summary}");
}

/// Many nodes syncing their counts cannot share a shaping limiter: it keeps
/// no counts, and each node's queue of waiting requests is its own.
#[test]
fn sh02_sync_with_a_shaping_limiter() {
    let text = with_limiter("kind = \"gcra\"\nmax_wait = \"1s\"")
        + "\n[nodes]\ncount = 2\nmode = \"sync\"\nsync_interval = \"100ms\"\n";
    Case::new(&text).refused(&[
        "s.toml:20:8:",
        "mode = \"sync\" adds up the nodes' counts, but `gcra(max_wait=1s)` keeps no counts to add (it delays \
requests, and each node's queue of waiting requests is its own): use mode = \"local\" or \"central\" for it",
    ]);
}

#[test]
fn sh03_memory_not_a_size() {
    Case::new(BASE).fails(
        &["run", "s.toml", "--memory", "1GB"],
        2,
        &["invalid value '1GB' for '--memory <SIZE>': `1GB` is not a size", "(units: B, KiB, MiB, GiB, TiB)"],
    );
    // A negative number is a value to judge, not an unknown option (it got
    // clap's "to pass '-5' as a value, use '-- -5'").
    let err = Case::new(BASE).fails(&["run", "s.toml", "--memory", "-5"], 2, &["`-5` is not a size"]);
    assert!(!err.contains("tip:"), "{err}");
}

/// The exact metrics keep every admitted timestamp of a window: with a huge
/// limit they pass the budget, and the error names `--memory` as the other
/// memory errors do (`r29`, `sh01`).
#[test]
fn sh04_window_timestamps_past_the_memory_budget() {
    let text = with("requests = 10", "requests = 1000000000").replace("count = 20", "count = 300000");
    let c = Case::new(&text);
    c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "1MiB"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: the run holds ",
            " of admitted timestamps inside exact windows, more than the 1.0 MiB it may use (--memory): with limit.requests = 1000000000",
            "Lower limit.requests, use a shorter or sparser trace, or, if the machine has the memory, raise --memory",
        ],
    );
    assert!(!c.path("out").exists());
}

/// The parts a memory message names add up past the budget: 4096
/// admitted timestamps (130.2 KiB) on a fixed window on 1000 nodes, whose
/// copies (87 KiB with the waiting requests) pass 140 KiB. The message once
/// said "130.2 KiB ... more than the 140.0 KiB it may use".
#[test]
fn sh06_the_limiters_state_is_named_when_it_passes_the_budget() {
    let c = Case::new(
        "name = \"x\"\n[limit]\nrequests = 1000000\nwindow = \"1h\"\n[[traffic]]\nkind = \"burst\"\ncount = 4096\n\
         [[limiter]]\nkind = \"fixed_window\"\n[nodes]\ncount = 1000\n",
    );
    c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "140KiB"],
        1,
        &[
            "error: scenario s.toml failed; nothing was written",
            "caused by: the run holds 130.2 KiB of admitted timestamps inside exact windows and 87.6 KiB of waiting requests and limiter state (217.8 KiB in all), more than the 140.0 KiB it may use (--memory)",
        ],
    );
    assert!(!c.path("out").exists());
}

/// A size past u64 bytes is a usage error that says the largest in the
/// unit written.
#[test]
fn sh05_memory_too_large() {
    Case::new(BASE).fails(
        &["run", "s.toml", "--memory", "99999999TiB"],
        2,
        &["invalid value '99999999TiB' for '--memory <SIZE>': `99999999TiB` is too large: a size is less than 16 EiB, at most 16777215TiB"],
    );
    Case::new(BASE).fails(
        &["run", "s.toml", "--memory", "99999999999999999999B"],
        2,
        &["`99999999999999999999B` is too large: a size is less than 16 EiB, at most 18446744073709551615B"],
    );
}
