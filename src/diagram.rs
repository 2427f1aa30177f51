//! The windows diagram's content: which instant `t*` and which arrivals it
//! shows, and how each window limiter decided them, with what each counts at
//! `t*`. The binary draws it; everything about what it says is decided here.
//!
//! A run's diagram shows the run's own window limiters (aligned fixed
//! windows, slot counters with their N, the exact sliding log) and replays
//! the run's arrivals through them as the run did. That replay is the run
//! only when the arrivals reach the limiters as they are: a run whose
//! clients react (retries, closed populations) or whose limiters run on
//! nodes gets no diagram ([`WindowsDiagram::of_run`]), so the diagram never
//! tells another story than the run's tables.

use std::collections::HashMap;

use crate::engine::{self, RunReport};
pub use crate::limiter::Cutting;
use crate::limiter::{DiagramStyle, FixedWindowSpec, Limit, Limiter, LimiterSpec, SlotCounterSpec, Style};
use crate::metrics::WindowTracker;
use crate::scenario::Scenario;
use crate::time::Nanos;

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
    /// The limiters drawn, top to bottom, each with how the diagram shows
    /// it (its own [`LimiterSpec::diagram_style`]).
    pub limiters: Vec<(LimiterSpec, DiagramStyle)>,
    /// Every arrival from time 0 to the end of the view, sorted (of
    /// [`WindowsDiagram::client`] only, when there is one).
    pub arrivals: Vec<Nanos>,
    /// The instant whose windows are shown.
    pub instant: Nanos,
    pub view: (Nanos, Nanos),
    /// The span whose time unit the x axis is written in: the run's, so that
    /// the diagram reads in the unit of the run's other charts (the view's
    /// for a diagram of its own).
    pub unit_span: Nanos,
    /// With many client keys, the client shown (the one where the first
    /// lane's count is highest): each key has limiters of its own, which
    /// decided these arrivals.
    pub client: Option<u64>,
}

/// The most arrivals a run's diagram reads from the trace.
const MAX_ARRIVALS: usize = 1_000_000;

/// The most lanes a diagram has room for: the first window limiters of the
/// run, and the exact window last.
pub const MAX_LANES: usize = 6;

/// The lanes of a run's diagram: its window limiters in the run's order
/// (each once), at most [`MAX_LANES`] with the exact window last; none when
/// the run has no fixed window or slot counter to show against it.
pub fn run_lanes(specs: &[LimiterSpec]) -> Vec<(LimiterSpec, DiagramStyle)> {
    let mut cut: Vec<(LimiterSpec, DiagramStyle)> = Vec::new();
    let mut exact = None;
    for s in specs {
        match s.diagram_style() {
            Some(d) if d.cutting == Cutting::Exact => exact = exact.or(Some((s.clone(), d))),
            Some(d) if !cut.iter().any(|(t, _)| t == s) => cut.push((s.clone(), d)),
            _ => {}
        }
    }
    if cut.is_empty() {
        return Vec::new();
    }
    cut.truncate(MAX_LANES - usize::from(exact.is_some()));
    cut.extend(exact);
    cut
}

/// A limiter the diagram draws, with how it draws it.
fn lane(spec: LimiterSpec) -> (LimiterSpec, DiagramStyle) {
    let style = spec.diagram_style().expect("a window limiter the diagram draws");
    (spec, style)
}

/// Where `spec` admits most in one exact window: the key and the instant,
/// the first such (one limiter per key, as the run keeps them).
fn worst(limit: Limit, spec: &LimiterSpec, arrivals: &[(Nanos, u64)]) -> (u64, Nanos) {
    let mut keys: HashMap<u64, (crate::limiter::AnyLimiter, WindowTracker)> = HashMap::new();
    let mut best = (0, arrivals.first().map_or((0, Nanos::ZERO), |(t, k)| (*k, *t)));
    for &(t, k) in arrivals {
        let (l, tracker) =
            keys.entry(k).or_insert_with(|| (spec.build(limit), WindowTracker::new(limit.window)));
        if l.decide(t, 1).admitted() {
            tracker.admit(t);
        }
        let c = tracker.count_at(t);
        if c > best.0 {
            best = (c, (k, t));
        }
    }
    best.1
}

impl WindowsDiagram {
    /// The view and instant for a trace of one key: the instant where the
    /// first lane (the coarsest cut, a fixed window when there is one)
    /// holds most admitted requests in one exact window, with 1.5 W before
    /// it and 0.5 W after.
    pub fn around_worst(
        title: String,
        limit: Limit,
        limiters: Vec<(LimiterSpec, DiagramStyle)>,
        arrivals: Vec<Nanos>,
    ) -> WindowsDiagram {
        let keyed: Vec<(Nanos, u64)> = arrivals.into_iter().map(|t| (t, 0)).collect();
        WindowsDiagram::around_worst_key(title, limit, limiters, keyed)
    }

    /// [`Self::around_worst`] over arrivals of many keys: the key and
    /// instant where the first lane holds most, and that key's arrivals
    /// ([`WindowsDiagram::client`] when there are several keys).
    fn around_worst_key(
        title: String,
        limit: Limit,
        limiters: Vec<(LimiterSpec, DiagramStyle)>,
        arrivals: Vec<(Nanos, u64)>,
    ) -> WindowsDiagram {
        let first = limiters.first().map_or_else(|| FixedWindowSpec::ALIGNED.into(), |(s, _)| s.clone());
        let (key, at) = worst(limit, &first, &arrivals);
        let many = arrivals.iter().any(|(_, k)| *k != key);
        let w = limit.window.get();
        let start = at.get().saturating_sub(w.saturating_add(w / 2));
        let view = (Nanos::new(start), Nanos::new(start.saturating_add(w.saturating_mul(2))));
        let arrivals =
            arrivals.into_iter().filter(|(t, k)| *k == key && *t < view.1).map(|(t, _)| t).collect();
        WindowsDiagram {
            title,
            limit,
            limiters,
            arrivals,
            instant: at,
            view,
            unit_span: Nanos::new(w.saturating_mul(2)),
            client: many.then_some(key),
        }
    }

    /// Whether a run of `scenario` decides its arrivals as a plain replay
    /// through each limiter would: no client reacts to a decision (retries,
    /// closed populations) and no limiter runs on nodes. Only then does a
    /// diagram replaying them tell what the run did.
    pub fn replays_run(scenario: &Scenario) -> bool {
        crate::simulate::clients(scenario).is_none() && scenario.nodes.is_none()
    }

    /// The diagram of a run, if it has one: the run's window limiters
    /// ([`run_lanes`]; none without a fixed window or slot counter), when
    /// the run is a plain replay of its arrivals ([`Self::replays_run`]).
    /// It shows the scenario's arrivals (up to a million, before the run's
    /// end) around the instant where its first lane admits most in one exact
    /// window, decided as the run decided them: with many client keys, the
    /// arrivals of the client where that happens (each key has limiters of
    /// its own), so that the first lane's count is the run's peak.
    pub fn of_run(
        scenario: &Scenario,
        report: &RunReport,
    ) -> Result<Option<WindowsDiagram>, crate::trace::TraceError> {
        let lanes = run_lanes(&engine::with_reference(&scenario.limiters).0);
        if lanes.is_empty() || !Self::replays_run(scenario) {
            return Ok(None);
        }
        let mut arrivals = Vec::new();
        for a in crate::trace::Merge::new(crate::simulate::sources(scenario)?).until(scenario.duration) {
            let a = a?;
            if a.time >= report.end || arrivals.len() >= MAX_ARRIVALS {
                break;
            }
            arrivals.push((a.time, a.key));
        }
        let mut d = WindowsDiagram::around_worst_key(String::new(), scenario.limit, lanes, arrivals);
        d.title = match d.client {
            Some(c) => format!("{}: how the algorithms cut time (client {c})", scenario.name),
            None => format!("{}: how the algorithms cut time", scenario.name),
        };
        d.unit_span = report.end;
        Ok(Some(d))
    }

    /// The diagram of a sweep: one burst pair that breaks both the fixed
    /// window and N slots (gap W - s/2 and first burst 0.3 s before a window
    /// edge, s = W/N), which the sliding log holds to L. None when it
    /// cannot be drawn: more than `MAX_ARRIVALS` requests in the two
    /// bursts, or a window so long that its view (3.25 W) passes u64::MAX ns.
    pub fn of_burst_pair(scenario: &Scenario) -> Option<WindowsDiagram> {
        let limit = scenario.limit;
        let n = diagram_slots(scenario);
        let w = limit.window.get();
        if limit.requests > (MAX_ARRIVALS / 2) as u64 || w > u64::MAX / 4 {
            return None;
        }
        let s = w / n;
        let t1 = 2 * w - 3 * s / 10;
        let t2 = t1 + w - s / 2;
        let mut arrivals = vec![Nanos::new(t1); limit.requests as usize];
        arrivals.extend(vec![Nanos::new(t2); limit.requests as usize]);
        let view = (Nanos::new(w), Nanos::new(3 * w + w / 4));
        let mut d = WindowsDiagram {
            title: String::new(),
            limit,
            limiters: vec![
                lane(FixedWindowSpec::ALIGNED.into()),
                lane(SlotCounterSpec { slots: n }.into()),
                lane(LimiterSpec::reference()),
            ],
            arrivals,
            instant: Nanos::new(t2),
            view,
            // In the unit of the run's charts where the scenario says how
            // long its run is (the view's own otherwise).
            unit_span: scenario.duration.unwrap_or(Nanos::new(view.1.get() - view.0.get())),
            client: None,
        };
        let reference = d.reference_lanes(scenario);
        let cut = match reference.len() {
            0 => "how the algorithms cut time".to_string(),
            n if n + 1 == d.limiters.len() => {
                "how reference window limiters cut time (not this scenario's)".to_string()
            }
            _ => format!(
                "how the algorithms cut time ({}: reference, not this scenario's)",
                reference.join(", ")
            ),
        };
        d.title = format!("Two bursts of {} that break the limit: {cut}", limit.requests);
        Some(d)
    }

    /// The names of the window lanes (not the exact window) whose limiter is
    /// not among `scenario`'s: the reference limiters a sweep's diagram
    /// draws in their place.
    pub fn reference_lanes(&self, scenario: &Scenario) -> Vec<String> {
        self.limiters
            .iter()
            .filter(|(s, d)| d.cutting != Cutting::Exact && !scenario.limiters.contains(s))
            .map(|(_, d)| d.name.clone())
            .collect()
    }

    /// The lanes, top to bottom, each limiter run over the arrivals.
    pub fn lanes(&self) -> Vec<DiagramLane> {
        self.limiters
            .iter()
            .map(|(spec, diagram)| {
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
                DiagramLane {
                    style: spec.style(),
                    spec: spec.clone(),
                    cutting: diagram.cutting,
                    name: diagram.name.clone(),
                    admitted,
                    in_window,
                }
            })
            .collect()
    }

    /// The lanes' names for a caption: `fixed windows, 2 slots, 10 slots`
    /// (the exact window left out: captions name it themselves).
    pub fn cut_names(&self) -> Vec<String> {
        self.limiters
            .iter()
            .filter(|(_, d)| d.cutting != Cutting::Exact)
            .map(|(_, d)| d.cut_name.clone())
            .collect()
    }
}

/// The slot count a sweep's windows diagram shows: the scenario's first slot
/// counter with few enough slots to see and more than 3, else 10.
fn diagram_slots(scenario: &Scenario) -> u64 {
    let n = scenario.limiters.iter().filter_map(|l| l.slots()).find(|n| (4..=20).contains(n)).unwrap_or(10);
    // A slot is at least 1 ns: a window of 1 to 9 ns has fewer slots.
    n.min(scenario.limit.window.get())
}
