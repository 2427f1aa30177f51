//! End-to-end values predicted by hand from the contract, `docs/semantics.md`.

use std::path::Path;

use ratesim::engine::{self, RunConfig};
use ratesim::limiter::{FixedWindowSpec, Limit, LimiterSpec, SlotCounterSpec, WindowAlign};
use ratesim::metrics::LimiterReport;
use ratesim::scenario::Scenario;
use ratesim::simulate;
use ratesim::time::Nanos;
use ratesim::trace::{Arrival, ArrivalResult};

fn scenario(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(name);
    Scenario::load(&path).unwrap()
}

fn row<'a>(rows: &'a [LimiterReport], label: &str) -> &'a LimiterReport {
    rows.iter().find(|r| r.label == label).unwrap_or_else(|| panic!("no row {label}"))
}

/// The boundary burst: L = 100 per 1 s, 100 requests in [0.99 s, 1 s) and 100 in [1 s, 1.01 s).
/// The aligned fixed window resets at 1 s and admits both bursts: 200 admitted,
/// and at t = 1.0099 s the exact window (0.0099, 1.0099] holds all 200. The
/// second burst's 100 requests each found >= 100 admitted already: excess 100.
/// Any N >= 2 slot counter still counts the slot holding 0.99..1 s when the
/// second burst arrives, so it admits exactly the first 100, like the log.
#[test]
fn boundary_burst_matches_the_hand_calculation() {
    let s = scenario("boundary_burst.toml");
    let report = simulate::run_scenario(&s, None, &mut |_| {}).unwrap();
    assert_eq!(report.arrivals, 200);

    let fw = row(&report.limiters, "fixed_window");
    assert_eq!((fw.counts.admitted, fw.counts.rejected), (200, 0));
    assert_eq!(fw.counts.peak, 200);
    assert_eq!(fw.peak_ratio(), 2.0);
    assert_eq!(fw.counts.excess, 100);
    assert_eq!(fw.counts.false_rejects, 0);
    assert_eq!(fw.over_admission(), Some(1.0));
    assert_eq!(fw.disagreement(), Some(0.5));

    for label in ["slot_counter(N=2)", "slot_counter(N=10)", "slot_counter(N=100)", "sliding_log"] {
        let r = row(&report.limiters, label);
        assert_eq!(r.counts.admitted, 100, "{label}");
        assert_eq!(r.counts.rejected, 100, "{label}");
        assert_eq!(r.counts.peak, 100, "{label}");
        assert_eq!(r.counts.excess, 0, "{label}");
        assert_eq!(r.counts.false_rejects, 0, "{label}");
        assert_eq!(r.over_admission(), Some(0.0), "{label}");
        assert_eq!(r.disagreement(), Some(0.0), "{label}");
    }
    // The log stores every admitted timestamp: 100 of them at the peak.
    assert_eq!(row(&report.limiters, "sliding_log").state.entries, 100);
}

fn run(limit: Limit, specs: Vec<LimiterSpec>, times: &[u64]) -> Vec<LimiterReport> {
    let arrivals: Vec<ArrivalResult> = times.iter().map(|&t| Ok(Arrival::at(Nanos::new(t)))).collect();
    let config = RunConfig::new(limit, specs);
    engine::run(&config, arrivals.into_iter(), None, &mut |_| {}).unwrap().limiters
}

/// The first-request fixed window opens at the first request; a
/// burst placed across the *aligned* boundary is stopped, but one placed across
/// its own window end still gets 2L through.
#[test]
fn first_request_window_has_its_own_boundary() {
    let limit = Limit { requests: 3, window: Nanos::new(1000) };
    let specs = vec![
        LimiterSpec::from(FixedWindowSpec { align: WindowAlign::FirstRequest }),
        LimiterSpec::from(FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::new(0) } }),
    ];
    // Window opens at 200 -> [200, 1200). 3 at 1190..1199, then 3 at 1200..
    let times = [200, 1197, 1198, 1200, 1201, 1202];
    let r = run(limit, specs, &times);
    // first-request: 200, 1197, 1198 admitted; 1200 opens [1200, 2200): 3 more.
    assert_eq!(r[0].counts.admitted, 6);
    assert_eq!(r[0].counts.peak, 5); // (202, 1202] holds 1197..1202 = 5
    assert_eq!(r[0].counts.excess, 2); // 1201 and 1202 found 3 already
    // aligned: window [0, 1000) has 200; [1000, 2000) takes 1197, 1198, 1200.
    assert_eq!(r[1].counts.admitted, 4);
    assert_eq!(r[1].counts.peak, 3);
}

/// Same-instant arrivals: the exact rule counts earlier requests at the same t.
#[test]
fn same_instant_arrivals_are_counted_in_order() {
    let limit = Limit { requests: 2, window: Nanos::new(10) };
    let r = run(limit, vec![LimiterSpec::from(SlotCounterSpec { slots: 5 })], &[4, 4, 4, 14, 14]);
    let (slots, log) = (&r[0], &r[1]);
    assert_eq!(log.counts.admitted, 4); // 4, 4 | 14, 14 (4 is exactly W before 14)
    assert_eq!(slots.counts.admitted, 4);
    assert_eq!(log.counts.peak, 2);
}

/// An empty trace gives zeros, not NaN rows.
#[test]
fn empty_trace() {
    let r = run(Limit { requests: 1, window: Nanos::new(10) }, vec![], &[]);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].counts.offered, 0);
    assert_eq!(r[0].over_admission(), None);
    assert_eq!(r[0].disagreement(), None);
}
