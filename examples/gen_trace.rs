//! Writes a synthetic CSV trace for the benchmarks: a `time` column of decimal
//! seconds (9 fraction digits), Poisson arrivals, seeded and deterministic.
//!
//! `cargo run --release --example gen_trace -- OUT.csv ROWS [RATE_PER_S] [SEED]`
//!
//! Rows are ~16 bytes each, so 100 million rows is about 1.6 GB. Written
//! through `csv::Writer` (as every CSV ratesim writes) with a large buffer;
//! memory stays constant whatever ROWS is.

use std::fmt::Write;

fn main() -> csv::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: gen_trace OUT.csv ROWS [RATE_PER_S=1500] [SEED=1]");
        std::process::exit(2);
    }
    let rows: u64 = args[2].replace('_', "").parse().expect("ROWS is a whole number");
    let rate: f64 = args.get(3).map_or(1500.0, |r| r.parse().expect("RATE_PER_S is a number"));
    let mut state: u64 = args.get(4).map_or(1, |s| s.parse().expect("SEED is a whole number"));
    let mean_gap_ns = 1e9 / rate;

    let mut out = csv::WriterBuilder::new().buffer_capacity(1 << 20).from_path(&args[1])?;
    out.write_record(["time"])?;
    let mut t: u64 = 0;
    let mut field = String::with_capacity(32);
    for _ in 0..rows {
        // splitmix64, then an exponential gap by inverse CDF.
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let u = ((z >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        t += (-u.ln() * mean_gap_ns).round() as u64;
        field.clear();
        write!(field, "{}.{:09}", t / 1_000_000_000, t % 1_000_000_000).expect("writing to a String");
        out.write_record([&field])?;
    }
    out.flush()?;
    Ok(())
}
