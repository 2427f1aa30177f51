//! Reading back the tables `ratesim run` prints: the pivot of a sweep
//! under its heading, its blocks (a pivot too wide for the terminal is cut
//! into blocks of columns, each with the rows' labels) joined again.

/// A table as printed: its headers and its rows of cells, trimmed.
#[derive(Debug)]
pub struct Printed {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Printed {
    /// The cell of `column` in the row whose first `key.len()` cells are `key`.
    pub fn cell(&self, key: &[&str], column: &str) -> &str {
        let c = self.headers.iter().position(|h| h == column).unwrap_or_else(|| panic!("no column {column}"));
        let row = self.rows.iter().find(|r| r.iter().zip(key).all(|(a, b)| a == b));
        &row.unwrap_or_else(|| panic!("no row {key:?} in {self:?}"))[c]
    }
}

/// The char ranges of a rule line's runs of dashes: the columns.
fn spans(rule: &str) -> Vec<std::ops::Range<usize>> {
    let chars: Vec<char> = rule.chars().collect();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '-' {
            let start = i;
            while i < chars.len() && chars[i] == '-' {
                i += 1;
            }
            spans.push(start..i);
        } else {
            i += 1;
        }
    }
    spans
}

fn is_rule(line: &str) -> bool {
    line.contains('-') && line.chars().all(|c| c == '-' || c == ' ')
}

/// `line` cut at `spans`, each cell trimmed.
fn cells(line: &str, spans: &[std::ops::Range<usize>]) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    spans
        .iter()
        .map(|s| {
            let (a, b) = (s.start.min(chars.len()), s.end.min(chars.len()));
            chars[a..b].iter().collect::<String>().trim().to_string()
        })
        .collect()
}

/// The table printed under the heading that starts with `heading` (its
/// paragraph ends at a blank line), whose first `labels` columns label the
/// rows: its blocks, each a header, a rule and rows up to a blank line,
/// joined column-wise (each block's labels must be the first's). `None`
/// when no line starts with `heading`.
pub fn printed_table(stdout: &str, heading: &str, labels: usize) -> Option<Printed> {
    let lines: Vec<&str> = stdout.lines().collect();
    let mut i = lines.iter().position(|l| l.starts_with(heading))?;
    while !lines[i].is_empty() {
        i += 1;
    }
    let mut table: Option<Printed> = None;
    // A block: a blank line, its header, its rule.
    while i + 2 < lines.len() && lines[i].is_empty() && is_rule(lines[i + 2]) {
        let spans = spans(lines[i + 2]);
        let headers = cells(lines[i + 1], &spans);
        i += 3;
        let mut rows = Vec::new();
        while i < lines.len() && !lines[i].is_empty() {
            rows.push(cells(lines[i], &spans));
            i += 1;
        }
        match &mut table {
            None => table = Some(Printed { headers, rows }),
            Some(t) => {
                assert_eq!(headers[..labels], t.headers[..labels], "a block's labels");
                assert_eq!(rows.len(), t.rows.len(), "a block's rows");
                t.headers.extend(headers[labels..].iter().cloned());
                for (row, more) in t.rows.iter_mut().zip(rows) {
                    assert_eq!(more[..labels], row[..labels], "a block's row labels");
                    row.extend(more[labels..].iter().cloned());
                }
            }
        }
    }
    table
}

/// A figure as a pivot prints it (`1.26`, `+30.1 %`, `-0.9 %`) as a
/// fraction (`0.301` for `+30.1 %`), with half a unit of its last digit
/// (the most rounding can have moved it), or `None` for `n/a` and `–`.
pub fn printed_value(cell: &str) -> Option<(f64, f64)> {
    if cell == "n/a" || cell == "–" {
        return None;
    }
    let (number, scale) = match cell.strip_suffix(" %") {
        Some(n) => (n, 0.01),
        None => (cell, 1.0),
    };
    let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
    let value: f64 = number.parse().unwrap_or_else(|e| panic!("{cell}: {e}"));
    Some((value * scale, 0.5 * 10f64.powi(-(decimals as i32)) * scale))
}

/// A duration as the terminal writes it (`0s`, `2ms`, `1s`, `250us`, `2m`),
/// in seconds.
pub fn printed_seconds(d: &str) -> f64 {
    let units = [("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0), ("m", 60.0), ("h", 3600.0)];
    let (number, scale) = units
        .iter()
        .find_map(|(u, s)| d.strip_suffix(u).map(|n| (n, *s)))
        .unwrap_or_else(|| panic!("not a duration: {d}"));
    number.parse::<f64>().unwrap() * scale
}

/// The first Markdown table of `text` (a sweep's `.md` file), its cells
/// trimmed.
pub fn markdown_table(text: &str) -> Printed {
    let mut lines = text.lines().skip_while(|l| !l.starts_with('|'));
    let split = |l: &str| -> Vec<String> {
        l.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect()
    };
    let headers = split(lines.next().expect("a table"));
    let rows = lines.skip(1).take_while(|l| l.starts_with('|')).map(split).collect();
    Printed { headers, rows }
}
