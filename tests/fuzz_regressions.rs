//! Inputs that once panicked or could have (found by fuzzing or by the audit
//! for panics on user input), kept as regression tests. Each must give a
//! result or a located error, never a panic.

use std::path::Path;

use ratesim::engine::{self, RunConfig};
use ratesim::limiter::{FixedWindowSpec, Limit, LimiterSpec, SlidingLogSpec, SlotCounterSpec, WindowAlign};
use ratesim::scenario::Scenario;
use ratesim::time::{Nanos, TimeUnit};
use ratesim::trace::{CsvOptions, CsvTrace};

/// The limiters the run_trace fuzz target uses: both fixed windows, N slots,
/// optionally a sliding log variant, and the reference.
fn fuzz_limiters(window: u64, slots: u64, log: Option<bool>) -> Vec<LimiterSpec> {
    let mut v = vec![
        LimiterSpec::from(FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::new(window / 3) } }),
        LimiterSpec::from(FixedWindowSpec { align: WindowAlign::FirstRequest }),
        LimiterSpec::from(SlotCounterSpec { slots }),
    ];
    v.extend(log.map(|count_rejected| LimiterSpec::from(SlidingLogSpec { count_rejected })));
    v.push(LimiterSpec::reference());
    v
}

fn run_trace(csv: &str, unit: TimeUnit, requests: u64, window: u64, slots: u64) -> engine::RunReport {
    let options = CsvOptions { time_unit: unit, ..CsvOptions::new("r.csv") };
    let trace = CsvTrace::from_reader(csv.as_bytes(), &options).unwrap();
    let config =
        RunConfig::new(Limit { requests, window: Nanos::new(window) }, fuzz_limiters(window, slots, None));
    engine::run(&config, trace, None, &mut |_| {}).unwrap()
}

/// Audit: the run's end was `last + 1`, the first-request window `start + W`
/// and the slot counter's `slot + N` and `k + 1`: all overflowed (a panic in
/// debug builds) for a timestamp at the end of time.
#[test]
fn timestamps_at_the_end_of_time() {
    let max = u64::MAX;
    let csv = format!("time\n{}\n{}\n{max}\n{max}\n", max - 20, max - 3);
    let r = run_trace(&csv, TimeUnit::Ns, 1, 10, 10);
    assert_eq!(r.arrivals, 4);
    assert_eq!(r.end, Nanos::MAX);
    assert_eq!(r.last_arrival, Some(Nanos::MAX));
    let log = &r.limiters[r.reference].counts;
    // (max-20) admitted, (max-3) admitted, both at max see max-3 in their window.
    assert_eq!((log.admitted, log.rejected, log.peak, log.excess), (2, 2, 1, 0));
    // The same in decimal seconds: 18446744073.709551615 s is u64::MAX ns.
    let r = run_trace("time\n18446744073.709551615\n", TimeUnit::S, 1, 7, 7);
    assert_eq!(r.last_arrival, Some(Nanos::MAX));
}

/// Audit: `load` is checked finite, but `load * L / W` overflowed to an
/// infinite rate and `Constant::new` asserted.
#[test]
fn load_whose_rate_overflows_is_an_error_not_a_panic() {
    let text = "name = \"x\"\nduration = \"1s\"\n[limit]\nrequests = 9223372036854775807\nwindow = \"1ns\"\n\
                [[traffic]]\nkind = \"constant\"\nload = 1e300\n";
    let e = Scenario::parse(text, Path::new("s.toml")).unwrap_err().to_string();
    assert!(e.starts_with("s.toml:8:8: `traffic[0].load` gives a rate of inf requests/s"), "{e}");
}

/// Audit: error positions were computed by slicing the text at a byte offset,
/// which panics inside a multi-byte character.
#[test]
fn errors_next_to_multibyte_text() {
    let text = "name = \"é\"\n[limit]\nrequests = \"ü\"\nwindow = \"1s\"\n";
    let e = Scenario::parse(text, Path::new("s.toml")).unwrap_err().to_string();
    assert!(e.starts_with("s.toml:3:12: `limit.requests`: invalid type: string \"ü\""), "{e}");
    let text = "name = \"x\"\n[limit]\nrequests = 1\nwindow = \"1 ßß\"\n";
    let e = Scenario::parse(text, Path::new("s.toml")).unwrap_err().to_string();
    assert!(e.contains("s.toml:4:10:") && e.contains("unknown unit `ßß`"), "{e}");
}

/// The `run_trace` fuzz target's setup (fuzz/fuzz_targets/run_trace.rs), for
/// replaying its inputs here.
fn run_trace_target(data: &[u8]) -> Option<(u64, u64)> {
    let (head, bytes) = data.split_at(4);
    let requests = u64::from(head[0] % 8) + 1;
    let window = u64::from(u16::from_le_bytes([head[1], head[2]])) + 1;
    let slots = (u64::from(head[3] % 16) + 1).min(window);
    let options = CsvOptions {
        time_unit: if head[3] & 0x80 == 0 { TimeUnit::Ns } else { TimeUnit::S },
        sort: head[3] & 0x40 != 0,
        ..CsvOptions::new("fuzz.csv")
    };
    let trace = CsvTrace::from_reader(bytes, &options).ok()?;
    let config = RunConfig::new(
        Limit { requests, window: Nanos::new(window) },
        fuzz_limiters(window, slots, Some(head[0] & 0x80 != 0)),
    );
    let report = engine::run(&config, trace, None, &mut |_| {}).ok()?;
    let rows = CsvTrace::from_reader(bytes, &options).unwrap().count() as u64;
    Some((report.arrivals, rows))
}

/// Found by `run_trace` (with the dictionary) in 40 s when the dropped-arrival
/// bug was put back on purpose: one row at 18446744073.7095516150 s, which is
/// u64::MAX ns, with NUL bytes and extra columns around it.
#[test]
fn fuzz_input_with_a_row_at_the_end_of_time() {
    let data = b"\x03\xe8\x03\x84id,time,pat\x00\x00\x00\x00\x00\x00\x00\x00\x00;\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00h\x0a0,18446744073.7095516150,5\x00\x00\xfc\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00\x000";
    assert_eq!(run_trace_target(data), Some((1, 1)));
}
