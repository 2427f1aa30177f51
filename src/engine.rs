//! The simulation: one streaming pass that feeds every arrival, in
//! (time, source order) order, to every limiter and updates every metric.

use crate::limiter::{AnyLimiter, Limit, Limiter, LimiterSpec};
use crate::metrics::{Counts, LimiterReport, WindowTracker};
use crate::time::Nanos;
use crate::timeline::{Timeline, TooManyBins};
use crate::trace::{ArrivalResult, TraceError};

/// What to simulate, apart from the arrivals.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub limit: Limit,
    /// The limiters to compare, in output order. The sliding log reference is
    /// added at the end when none is listed.
    pub limiters: Vec<LimiterSpec>,
    /// Arrivals at or after this instant are not read; the timeline runs to it.
    pub end: Option<Nanos>,
    /// Timeline bin width; automatic when `None`.
    pub bin: Option<Nanos>,
}

/// One per-request decision, for `decisions.csv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecisionRecord {
    pub seq: u64,
    pub time: Nanos,
    pub limiter: usize,
    pub admitted: bool,
    /// Admitted requests of this limiter in the exact window just before it.
    pub window_count: u64,
}

/// Receives per-request decisions (the engine never formats them).
pub trait DecisionSink {
    fn record(&mut self, record: &DecisionRecord) -> std::io::Result<()>;
}

/// Where a run is, for progress display.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub arrivals: u64,
    pub now: Nanos,
}

/// Called every this many arrivals.
pub const PROGRESS_EVERY: u64 = 1 << 16;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Timeline(#[from] TooManyBins),
    #[error("cannot write decisions")]
    Decisions(#[source] std::io::Error),
}

/// Everything a run measured.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub limit: Limit,
    pub arrivals: u64,
    /// End of the simulated span: the configured end, else the last arrival.
    pub end: Nanos,
    pub first_arrival: Option<Nanos>,
    pub last_arrival: Option<Nanos>,
    pub limiters: Vec<LimiterReport>,
    /// Index of the sliding log reference in `limiters`.
    pub reference: usize,
    pub timeline: Timeline,
}

/// The limiters to run: the listed ones, plus the reference if not listed.
/// Returns the specs and the reference's index.
pub fn with_reference(listed: &[LimiterSpec]) -> (Vec<LimiterSpec>, usize) {
    let mut specs = listed.to_vec();
    let reference = LimiterSpec::reference();
    let idx = match specs.iter().position(|s| *s == reference) {
        Some(i) => i,
        None => {
            specs.push(reference);
            specs.len() - 1
        }
    };
    (specs, idx)
}

/// Unique labels: a repeated limiter gets `#2`, `#3`, ...
pub fn labels(specs: &[LimiterSpec]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(specs.len());
    for spec in specs {
        let base = spec.label();
        let n = out.iter().filter(|l| **l == base || l.starts_with(&format!("{base}#"))).count();
        out.push(if n == 0 { base } else { format!("{base}#{}", n + 1) });
    }
    out
}

struct Lane {
    limiter: AnyLimiter,
    tracker: WindowTracker,
    counts: Counts,
}

/// Runs the arrivals through every limiter.
pub fn run(
    config: &RunConfig,
    arrivals: impl Iterator<Item = ArrivalResult>,
    mut decisions: Option<&mut dyn DecisionSink>,
    progress: &mut dyn FnMut(Progress),
) -> Result<RunReport, RunError> {
    let (specs, reference) = with_reference(&config.limiters);
    let limit = config.limit;
    let mut lanes: Vec<Lane> = specs
        .iter()
        .map(|s| Lane {
            limiter: s.build(limit),
            tracker: WindowTracker::new(limit.window),
            counts: Counts::default(),
        })
        .collect();
    let mut timeline = Timeline::new(config.bin, lanes.len());
    if let Some(end) = config.end {
        timeline.reserve_until(Nanos(end.0.saturating_sub(1)))?;
    }
    let mut seq: u64 = 0;
    let mut first = None;
    let mut last = None;
    let mut admitted_now = vec![false; lanes.len()];
    let mut counts_before = vec![0u64; lanes.len()];

    for arrival in arrivals {
        let arrival = arrival?;
        let t = arrival.time;
        // Not `unwrap_or(Nanos::MAX)`: with no end, an arrival at u64::MAX counts.
        if config.end.is_some_and(|end| t >= end) {
            break;
        }
        first.get_or_insert(t);
        last = Some(t);
        let bin = timeline.bin_for(t, |i, start| lanes[i].tracker.count_at(start))?;
        for (i, lane) in lanes.iter_mut().enumerate() {
            counts_before[i] = lane.tracker.count_at(t);
            let admitted = lane.limiter.decide(t, 1).admitted();
            if admitted {
                lane.tracker.admit(t);
            }
            admitted_now[i] = admitted;
        }
        let reference_admitted = admitted_now[reference];
        for (i, lane) in lanes.iter_mut().enumerate() {
            let admitted = admitted_now[i];
            let before = counts_before[i];
            lane.counts.record(limit.requests, before, admitted, reference_admitted);
            timeline.record(bin, i, admitted, before + u64::from(admitted));
            if let Some(sink) = decisions.as_deref_mut() {
                sink.record(&DecisionRecord { seq, time: t, limiter: i, admitted, window_count: before })
                    .map_err(RunError::Decisions)?;
            }
        }
        seq += 1;
        if seq.is_multiple_of(PROGRESS_EVERY) {
            progress(Progress { arrivals: seq, now: t });
        }
    }

    let run_end = match config.end {
        Some(e) => e,
        None => last.map_or(Nanos::ZERO, |t| Nanos(t.0.saturating_add(1))),
    };
    timeline.extend_to(run_end, |i, start| lanes[i].tracker.count_at(start))?;
    progress(Progress { arrivals: seq, now: run_end });

    let reference_admitted = lanes[reference].counts.admitted;
    let names = labels(&specs);
    let limiters = specs
        .into_iter()
        .zip(names)
        .zip(lanes)
        .map(|((spec, label), lane)| LimiterReport {
            spec,
            label,
            counts: lane.counts,
            state: lane.limiter.peak_state(),
            reference_admitted,
            limit: limit.requests,
        })
        .collect();
    Ok(RunReport {
        limit,
        arrivals: seq,
        end: run_end,
        first_arrival: first,
        last_arrival: last,
        limiters,
        reference,
        timeline,
    })
}
