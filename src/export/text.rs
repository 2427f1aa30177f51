//! The terminal table.

use super::table::{Table, pad};

/// Renders a table in aligned plain-text columns with a rule under the header.
pub fn render_table(table: &Table) -> String {
    let widths = table.widths();
    let render = |cells: &[String]| -> String {
        let parts: Vec<String> =
            cells.iter().enumerate().map(|(i, c)| pad(c, widths[i], table.align[i])).collect();
        format!("{}\n", parts.join("  ").trim_end())
    };
    let mut out = render(&table.headers);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&format!("{}\n", rule.join("  ")));
    for row in &table.rows {
        out.push_str(&render(row));
    }
    out
}
