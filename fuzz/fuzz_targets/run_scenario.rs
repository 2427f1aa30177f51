//! Any text that passes as a scenario and asks for little work runs end to
//! end (open and closed sources, retries, many nodes, shaping), twice, with
//! the same figures both times, and keeps what docs/semantics.md promises of
//! every run: decisions and requests add up, the sliding log is exact.
#![no_main]

// The bounds and the checks are shared with tests/fuzz_regressions.rs,
// which replays saved inputs: one copy, in the tests.
#[path = "../../tests/common/run_scenario.rs"]
mod run_scenario;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Scenario::load refuses non-UTF-8 files before parsing.
    if let Ok(text) = std::str::from_utf8(data) {
        run_scenario::run(text);
    }
});
