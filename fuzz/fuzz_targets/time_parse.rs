//! Duration and timestamp parsers never panic, what they accept formats
//! back to the same number of nanoseconds, and the plain-digits fast path
//! agrees with the full parser.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ratesim::time::{TimeUnit, format_duration, parse_decimal_seconds, parse_duration};
use ratesim::trace::parse_plain;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(d) = parse_duration(text) {
        assert_eq!(parse_duration(&format_duration(d)), Ok(d), "{text:?}");
    }
    if let Ok(t) = parse_decimal_seconds(text) {
        assert_eq!(parse_decimal_seconds(&t.to_string()), Ok(t), "{text:?}");
    }
    for unit in [TimeUnit::Ns, TimeUnit::Us, TimeUnit::Ms, TimeUnit::S] {
        let full = unit.parse_timestamp(text);
        // The trace reader's fast path must agree wherever it answers.
        if let Some(fast) = parse_plain(unit, data) {
            assert_eq!(full, Ok(fast), "{unit:?} {text:?}");
        }
    }
});
