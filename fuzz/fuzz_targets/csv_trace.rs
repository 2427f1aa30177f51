//! Any bytes read as a CSV trace give arrivals in time order or one located
//! error, never a panic. The first byte picks the options.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ratesim::time::TimeUnit;
use ratesim::trace::{CsvOptions, CsvTrace, TraceError};

fuzz_target!(|data: &[u8]| {
    let Some((&opt, bytes)) = data.split_first() else { return };
    let time_unit = [TimeUnit::S, TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns][usize::from(opt & 3)];
    let options = CsvOptions {
        path: "fuzz.csv".into(),
        time_unit,
        time_column: if opt & 4 == 0 { "time".into() } else { "t".into() },
        key_column: if opt & 16 == 0 { None } else { Some("key".into()) },
        sort: opt & 8 != 0,
    };
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
                assert!(a.time.0 >= last, "arrivals in time order");
                last = a.time.0;
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
