//! CSV replay against its floor: a bare csv-crate read of the same file (one
//! reused `ByteRecord`, nothing parsed) versus `ratesim::trace::CsvTrace`
//! (which also parses decimal seconds exactly and checks the order), and in
//! between the bare read plus the least code that parses decimal seconds.
//! Target: CsvTrace within 2x of the bare read.
//!
//! `cargo bench --bench csv_read`. The file (200 000 rows of decimal seconds,
//! like `examples/gen_trace.rs` writes) is generated in a temporary directory
//! before timing; it stays in the page cache, so this measures parsing, not
//! the disk. `scripts/bench.sh` does the same on 10 M / 100 M rows end to end.

use std::fs::File;
use std::hint::black_box;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ratesim::trace::{CsvOptions, CsvTrace};

const ROWS: u64 = 200_000;

fn write_trace(path: &Path) {
    let mut out = BufWriter::new(File::create(path).unwrap());
    out.write_all(b"time\n").unwrap();
    let mut t: u64 = 0;
    let mut state: u64 = 7;
    for _ in 0..ROWS {
        // Gaps of 0..1.33 ms (mean ~0.67 ms, like 1 500 arrivals/s).
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        t += (state >> 33) % 1_333_333;
        writeln!(out, "{}.{:09}", t / 1_000_000_000, t % 1_000_000_000).unwrap();
    }
    out.flush().unwrap();
}

/// The csv crate on a buffered file, as the bare baselines read it.
fn bare_reader(path: &Path) -> csv::Reader<BufReader<File>> {
    let file = File::open(path).unwrap();
    csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(true)
        .from_reader(BufReader::with_capacity(1 << 16, file))
}

fn bare_read(path: &Path) -> u64 {
    let mut reader = bare_reader(path);
    let mut record = csv::ByteRecord::new();
    let mut bytes = 0;
    while reader.read_byte_record(&mut record).unwrap() {
        bytes += record.get(0).map_or(0, |f| f.len() as u64);
    }
    bytes
}

/// Decimal seconds to nanoseconds in one pass over the bytes: the least
/// parsing a replay needs (no UTF-8 check, no error detail, <= 9 fraction
/// digits). Shows how close CsvTrace could get; not a replacement for it.
#[inline]
fn parse_secs(b: &[u8]) -> u64 {
    let mut whole = 0u64;
    let mut i = 0;
    while i < b.len() && b[i] != b'.' {
        whole = whole * 10 + u64::from(b[i] - b'0');
        i += 1;
    }
    let mut frac = 0u64;
    let mut place = 100_000_000u64;
    for &c in b.get(i + 1..).unwrap_or(&[]) {
        frac += u64::from(c - b'0') * place;
        place /= 10;
    }
    whole * 1_000_000_000 + frac
}

fn bare_read_parse(path: &Path) -> u64 {
    let mut reader = bare_reader(path);
    let mut record = csv::ByteRecord::new();
    let mut sum = 0u64;
    while reader.read_byte_record(&mut record).unwrap() {
        sum = sum.wrapping_add(parse_secs(&record[0]));
    }
    sum
}

fn trace_read(options: &CsvOptions) -> u64 {
    let mut sum = 0u64;
    for a in CsvTrace::open(options).unwrap() {
        sum = sum.wrapping_add(a.unwrap().time.get());
    }
    sum
}

fn csv_read(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.csv");
    write_trace(&path);
    let options = CsvOptions::new(path.clone());
    assert_eq!(bare_read_parse(&path), trace_read(&options), "the minimal parser must agree");

    let mut g = c.benchmark_group("csv_read");
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    g.sample_size(20);
    g.throughput(Throughput::Elements(ROWS));
    g.bench_function("bare_csv_byte_record", |b| b.iter(|| bare_read(black_box(&path))));
    g.bench_function("bare_csv_plus_minimal_parse", |b| b.iter(|| bare_read_parse(black_box(&path))));
    g.bench_function("ratesim_csv_trace", |b| b.iter(|| trace_read(black_box(&options))));
    g.finish();
}

criterion_group!(benches, csv_read);
criterion_main!(benches);
