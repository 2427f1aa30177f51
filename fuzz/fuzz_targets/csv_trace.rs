//! Any bytes read as a CSV trace give arrivals in time order or one located
//! error, never a panic, and exactly what the csv-crate reader it replaced
//! (`ReferenceCsvTrace`) gives, on the fast path and on the general one. The
//! first byte picks the options; bit 5 feeds the input in small pieces,
//! bit 6 names where a scenario would set the options (for the messages).
#![no_main]

// The oracle is test code, not part of the library: included from the tests.
#[path = "../../tests/common/csv_reference.rs"]
mod csv_reference;

use csv_reference::ReferenceCsvTrace;
use libfuzzer_sys::fuzz_target;
use ratesim::time::TimeUnit;
use ratesim::trace::{ArrivalResult, CsvOptions, CsvTrace, KeysAt, TraceError};

/// Hands out its bytes 1 to 7 at a time.
struct Pieces<'a>(&'a [u8], usize);

impl std::io::Read for Pieces<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        self.1 = self.1 % 7 + 1;
        let k = self.0.len().min(self.1).min(out.len());
        out[..k].copy_from_slice(&self.0[..k]);
        self.0 = &self.0[k..];
        Ok(k)
    }
}

/// Everything a reader gives: the opening error, or its counts and items.
fn outcome<I: Iterator<Item = ArrivalResult>>(
    opened: Result<I, TraceError>,
    counts: impl Fn(&I) -> (u64, u64),
) -> Result<((u64, u64), Vec<Result<(u64, u64), String>>), String> {
    let mut t = opened.map_err(|e| e.to_string())?;
    let c = counts(&t);
    Ok((c, t.by_ref().map(|r| r.map(|a| (a.time.get(), a.key)).map_err(|e| e.to_string())).collect()))
}

fuzz_target!(|data: &[u8]| {
    let Some((&opt, bytes)) = data.split_first() else { return };
    let time_unit = [TimeUnit::S, TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns][usize::from(opt & 3)];
    let options = CsvOptions {
        path: "fuzz.csv".into(),
        time_unit,
        time_column: if opt & 4 == 0 { "time".into() } else { "t".into() },
        key_column: if opt & 16 == 0 { None } else { Some("key".into()) },
        sort: opt & 8 != 0,
        keys_at: (opt & 64 != 0).then(|| KeysAt {
            source: "traffic[0]".into(),
            path: "s.toml:9:8".into(),
            time_unit: Some("s.toml:10:13".into()),
            time_column: (opt & 4 != 0).then(|| "s.toml:11:15".into()),
            key_column: Some("s.toml:12:14".into()),
        }),
    };
    let pieces = opt & 32 != 0;
    let reference = if pieces {
        outcome(ReferenceCsvTrace::from_reader(Pieces(bytes, 0), &options), |t| (t.rows(), t.out_of_order()))
    } else {
        outcome(ReferenceCsvTrace::from_reader(bytes, &options), |t| (t.rows(), t.out_of_order()))
    };
    let fast = if pieces {
        outcome(CsvTrace::from_reader(Pieces(bytes, 0), &options), |t| (t.rows(), t.out_of_order()))
    } else {
        outcome(CsvTrace::from_reader(bytes, &options), |t| (t.rows(), t.out_of_order()))
    };
    assert_eq!(fast, reference, "fast path");
    let general = if pieces {
        outcome(CsvTrace::from_reader_general_only(Pieces(bytes, 0), &options), |t| {
            (t.rows(), t.out_of_order())
        })
    } else {
        outcome(CsvTrace::from_reader_general_only(bytes, &options), |t| (t.rows(), t.out_of_order()))
    };
    assert_eq!(general, reference, "general path");

    let trace = match CsvTrace::from_reader(bytes, &options) {
        Ok(t) => t,
        Err(e) => {
            assert!(e.to_string().starts_with("fuzz.csv"));
            return;
        }
    };
    let mut last = 0;
    let mut errors = 0;
    for r in trace {
        match r {
            Ok(a) => {
                assert_eq!(errors, 0, "no arrival after an error");
                assert!(a.time.get() >= last, "arrivals in time order");
                last = a.time.get();
            }
            Err(e) => {
                errors += 1;
                if let TraceError::Row { line, .. } = e {
                    assert!(line >= 1);
                }
                assert!(e.to_string().starts_with("fuzz.csv"));
            }
        }
    }
    assert!(errors <= 1, "a trace stops at its first error");
});
