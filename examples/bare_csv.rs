//! The floor for CSV replay: read a CSV file with the csv crate into one
//! reused `ByteRecord` and do nothing else (count rows, add up the first
//! field's length so the loop is not optimized away). `ratesim run` on the
//! same file is measured against this by `scripts/bench.sh`.
//!
//! `cargo run --release --example bare_csv -- FILE.csv`

use std::fs::File;
use std::io::BufReader;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: bare_csv FILE.csv")?;
    // Same reader settings and buffer as ratesim's CsvTrace.
    let file = File::open(&path)?;
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(true)
        .from_reader(BufReader::with_capacity(1 << 16, file));
    let mut record = csv::ByteRecord::new();
    let mut rows: u64 = 0;
    let mut bytes: u64 = 0;
    while reader.read_byte_record(&mut record)? {
        rows += 1;
        bytes += record.get(0).map_or(0, |f| f.len() as u64);
    }
    println!("{rows} rows, {bytes} bytes in field 0");
    Ok(())
}
