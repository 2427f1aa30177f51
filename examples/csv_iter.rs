//! The trace reader alone: iterate `ratesim::trace::CsvTrace` over a file
//! (read, parse decimal seconds exactly, check order) with no limiters and no
//! metrics. Separates parsing cost from engine cost in `scripts/bench.sh`.
//!
//! `cargo run --release --example csv_iter -- FILE.csv`

use ratesim::trace::{CsvOptions, CsvTrace};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: csv_iter FILE.csv")?;
    let options = CsvOptions::new(path);
    let mut rows: u64 = 0;
    let mut last: u64 = 0;
    for arrival in CsvTrace::open(&options)? {
        last = arrival?.time.get();
        rows += 1;
    }
    println!("{rows} rows, last at {last} ns");
    Ok(())
}
