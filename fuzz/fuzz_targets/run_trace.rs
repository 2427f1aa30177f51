//! A whole run over any CSV trace (timestamps up to the end of time) with a
//! small limit and every limiter: no panic, no overflow, requests conserved,
//! and each limiter keeps what docs/semantics.md promises of it (the sliding
//! log exact; fixed windows and slot counters no false rejects; no more
//! than 2L in a window for them and the weighted window; a refusing GCRA or
//! token bucket within its burst plus what refills in a window).
#![no_main]

// The setup and the checks are shared with tests/fuzz_regressions.rs, which
// replays saved inputs: one copy, in the tests.
#[path = "../../tests/common/run_trace.rs"]
mod run_trace;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    run_trace::run(data);
});
