//! The windows diagram's content: which instant `t*` and which arrivals it
//! shows, and how the fixed window, N slots and the sliding log decided
//! them, with what each counts at `t*`. The binary draws it; everything
//! about what it says is decided here.

use crate::limiter::{FixedWindowSpec, Limit, Limiter, LimiterSpec, SlotCounterSpec, Style};
use crate::metrics::WindowTracker;
use crate::scenario::Scenario;
use crate::time::Nanos;

/// How a lane of the diagram cuts time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cutting {
    /// Aligned windows of length W: the one holding `t*` is counted.
    Windows,
    /// N slots per window: the slot holding `t*` and the N - 1 before it.
    Slots(u64),
    /// The exact window `(t* - W, t*]`.
    Exact,
}

/// One algorithm's row.
#[derive(Clone, Debug)]
pub struct DiagramLane {
    /// The limiter this lane runs (charts colour it as the run's own).
    pub spec: LimiterSpec,
    pub cutting: Cutting,
    pub name: String,
    pub style: Style,
    /// Its decision for each of the diagram's arrivals.
    pub admitted: Vec<bool>,
    /// Admitted requests in the exact window `(t* - W, t*]`.
    pub in_window: u64,
}

#[derive(Clone, Debug)]
pub struct WindowsDiagram {
    pub title: String,
    pub limit: Limit,
    /// Slot count of the middle lane.
    pub slots: u64,
    /// Every arrival from time 0 to the end of the view, sorted.
    pub arrivals: Vec<Nanos>,
    /// The instant whose windows are shown.
    pub instant: Nanos,
    pub view: (Nanos, Nanos),
}

/// The most arrivals a run's diagram reads from the trace.
const MAX_ARRIVALS: usize = 1_000_000;

impl Cutting {
    /// The length of the cells this cutting draws (windows or slots), for a
    /// window of `w` ns; the exact window is one cell ending at `t*`.
    pub fn cell(self, w: u64) -> u64 {
        match self {
            Cutting::Slots(n) => w / n,
            Cutting::Windows | Cutting::Exact => w,
        }
    }

    /// Whether the cell `[a, b)` is counted by a decision at `t_star`.
    pub fn counts(self, a: u64, b: u64, t_star: u64, w: u64) -> bool {
        match self {
            Cutting::Windows => a <= t_star && t_star < b,
            Cutting::Slots(n) => {
                b > t_star.saturating_sub(w) && a <= t_star && {
                    let n = u128::from(n);
                    let k_star = (u128::from(t_star) * n) / u128::from(w);
                    let k_a = (u128::from(a) * n) / u128::from(w);
                    k_a + n > k_star
                }
            }
            Cutting::Exact => false,
        }
    }
}

impl WindowsDiagram {
    /// The view and instant for a trace: the instant where the fixed window's
    /// exact-window count is highest, with 1.5 W before it and 0.5 W after.
    pub fn around_worst(title: String, limit: Limit, slots: u64, arrivals: Vec<Nanos>) -> WindowsDiagram {
        let mut fixed = LimiterSpec::from(FixedWindowSpec::ALIGNED).build(limit);
        let mut tracker = WindowTracker::new(limit.window);
        let (mut best, mut at) = (0, arrivals.first().copied().unwrap_or(Nanos::ZERO));
        for &t in &arrivals {
            if fixed.decide(t, 1).admitted() {
                tracker.admit(t);
            }
            let c = tracker.count_at(t);
            if c > best {
                best = c;
                at = t;
            }
        }
        let w = limit.window.get();
        let start = at.get().saturating_sub(w + w / 2);
        let view = (Nanos::new(start), Nanos::new(start + 2 * w));
        let arrivals = arrivals.into_iter().filter(|t| *t < view.1).collect();
        WindowsDiagram { title, limit, slots, arrivals, instant: at, view }
    }

    /// The diagram of a run: the scenario's arrivals (up to a million, before
    /// `end`) around the instant where the fixed window admits most in one
    /// exact window.
    pub fn of_run(scenario: &Scenario, end: Nanos) -> Result<WindowsDiagram, crate::trace::TraceError> {
        let mut arrivals = Vec::new();
        for a in crate::trace::Merge::new(crate::simulate::sources(scenario)?).until(scenario.duration) {
            let t = a?.time;
            if t >= end || arrivals.len() >= MAX_ARRIVALS {
                break;
            }
            arrivals.push(t);
        }
        let title = format!("{}: how the algorithms cut time", scenario.name);
        Ok(WindowsDiagram::around_worst(title, scenario.limit, diagram_slots(scenario), arrivals))
    }

    /// The diagram of a sweep: one burst pair that breaks both the fixed
    /// window and N slots (gap W - s/2 and first burst 0.3 s before a window
    /// edge, s = W/N), which the sliding log holds to L.
    pub fn of_burst_pair(scenario: &Scenario) -> WindowsDiagram {
        let limit = scenario.limit;
        let n = diagram_slots(scenario);
        let w = limit.window.get();
        let s = w / n;
        let t1 = 2 * w - 3 * s / 10;
        let t2 = t1 + w - s / 2;
        let mut arrivals = vec![Nanos::new(t1); limit.requests as usize];
        arrivals.extend(vec![Nanos::new(t2); limit.requests as usize]);
        let view = (Nanos::new(w), Nanos::new(3 * w + w / 4));
        WindowsDiagram {
            title: format!(
                "Two bursts of {} that break the limit: how the algorithms cut time",
                limit.requests
            ),
            limit,
            slots: n,
            arrivals,
            instant: Nanos::new(t2),
            view,
        }
    }

    /// The three rows, top to bottom: fixed window, N slots, sliding log.
    pub fn lanes(&self) -> Vec<DiagramLane> {
        let rows: [(LimiterSpec, Cutting, String); 3] = [
            (FixedWindowSpec::ALIGNED.into(), Cutting::Windows, "fixed window".to_string()),
            (
                SlotCounterSpec { slots: self.slots }.into(),
                Cutting::Slots(self.slots),
                format!("{} slots", self.slots),
            ),
            (LimiterSpec::reference(), Cutting::Exact, "sliding log (exact)".to_string()),
        ];
        rows.into_iter()
            .map(|(spec, cutting, name)| {
                let mut l = spec.build(self.limit);
                let admitted: Vec<bool> = self.arrivals.iter().map(|&t| l.decide(t, 1).admitted()).collect();
                let lo = self.instant.get().saturating_sub(self.limit.window.get());
                let in_window = self
                    .arrivals
                    .iter()
                    .zip(&admitted)
                    .filter(|(t, a)| {
                        **a && t.get() > lo && t.get() <= self.instant.get() && (t.get() > 0 || lo == 0)
                    })
                    .count() as u64;
                DiagramLane { style: spec.style(), spec, cutting, name, admitted, in_window }
            })
            .collect()
    }
}

/// The slot count a windows diagram shows: the scenario's first slot counter
/// with few enough slots to see and more than 3, else 10.
fn diagram_slots(scenario: &Scenario) -> u64 {
    let n = scenario.limiters.iter().filter_map(|l| l.slots()).find(|n| (4..=20).contains(n)).unwrap_or(10);
    // A slot is at least 1 ns: a window of 1 to 9 ns has fewer slots.
    n.min(scenario.limit.window.get())
}
