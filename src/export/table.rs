//! A table of text cells, rendered by the Markdown and terminal writers.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

#[derive(Clone, Debug, Default)]
pub struct Table {
    pub headers: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(columns: &[(&str, Align)]) -> Table {
        Table {
            headers: columns.iter().map(|(h, _)| h.to_string()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.headers.len());
        self.rows.push(row);
    }

    /// The table of `columns` alone, in that order.
    pub fn select(&self, columns: &[usize]) -> Table {
        Table {
            headers: columns.iter().map(|&i| self.headers[i].clone()).collect(),
            align: columns.iter().map(|&i| self.align[i]).collect(),
            rows: self.rows.iter().map(|row| columns.iter().map(|&i| row[i].clone()).collect()).collect(),
        }
    }

    /// Display width of each column.
    pub fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                w[i] = w[i].max(cell.chars().count());
            }
        }
        w
    }
}

pub fn pad(cell: &str, width: usize, align: Align) -> String {
    let n = cell.chars().count();
    let fill = " ".repeat(width.saturating_sub(n));
    match align {
        Align::Left => format!("{cell}{fill}"),
        Align::Right => format!("{fill}{cell}"),
    }
}
