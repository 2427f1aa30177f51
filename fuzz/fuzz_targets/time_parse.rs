//! Duration and timestamp parsers never panic, and what they accept formats
//! back to the same number of nanoseconds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ratesim::time::{TimeUnit, format_duration, parse_decimal_seconds, parse_duration};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(d) = parse_duration(text) {
        assert_eq!(parse_duration(&format_duration(d)), Ok(d), "{text:?}");
    }
    if let Ok(t) = parse_decimal_seconds(text) {
        assert_eq!(parse_decimal_seconds(&t.to_string()), Ok(t), "{text:?}");
    }
    for unit in [TimeUnit::Ns, TimeUnit::Us, TimeUnit::Ms] {
        let _ = unit.parse_timestamp(text);
    }
});
