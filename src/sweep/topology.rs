//! Sweeps over the topology (`docs/semantics.md`, "Many nodes sharing one
//! limit"): the scenario's own traffic and limiters rerun with one value of
//! its `[nodes]` table changed: the number of nodes (`[sweep] nodes`), the
//! store's round trip (`rtts`, each both atomic and get-then-set) or the
//! sync interval (`sync_intervals`). The points run in parallel (rayon) and
//! are collected in input order, so the results do not depend on the thread
//! count.

use rayon::prelude::*;

use crate::engine::{RunError, RunReport};
use crate::limiter::Limit;
use crate::metrics::LimiterReport;
use crate::nodes::{Mode, Topology};
use crate::scenario::Scenario;
use crate::time::Nanos;

use super::work::{RunShare, rerun_work};

/// How the local limit of each node follows the number of nodes `K`
/// (`nodes.per_node`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerNode {
    /// `ceil(L / K)` (the default, as Envoy does).
    Ceil,
    /// `floor(L / K)`.
    Floor,
    /// The same number whatever `K`.
    Fixed(u64),
}

impl PerNode {
    /// The per-node limit for `k` nodes (0 when `floor` leaves nothing).
    pub fn for_nodes(self, limit: Limit, k: u16) -> u64 {
        let k = u64::from(k.max(1));
        match self {
            PerNode::Ceil => limit.requests.div_ceil(k),
            PerNode::Floor => limit.requests / k,
            PerNode::Fixed(n) => n,
        }
    }

    /// How the rule reads in tables: `ceil(L/K)`, `floor(L/K)`, `100`.
    pub fn describe(self) -> String {
        match self {
            PerNode::Ceil => "ceil(L/K)".into(),
            PerNode::Floor => "floor(L/K)".into(),
            PerNode::Fixed(n) => n.to_string(),
        }
    }
}

/// What a topology sweep varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parameter {
    /// The number of nodes `K` (`per_node` follows its rule).
    Nodes,
    /// The node-to-store round trip, atomic and get-then-set.
    Rtt,
    /// The interval between syncs.
    SyncInterval,
}

impl Parameter {
    /// The `[sweep]` key.
    pub fn key(self) -> &'static str {
        match self {
            Parameter::Nodes => "nodes",
            Parameter::Rtt => "rtts",
            Parameter::SyncInterval => "sync_intervals",
        }
    }

    /// The file name of its table and chart (without extension).
    pub fn file(self) -> &'static str {
        match self {
            Parameter::Nodes => "nodes_sweep",
            Parameter::Rtt => "rtt_sweep",
            Parameter::SyncInterval => "sync_sweep",
        }
    }
}

/// The topology sweeps of a scenario's `[sweep]` table, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct TopologySweep {
    /// The topology each point changes one value of: the scenario's
    /// `[nodes]`, or without one, one node (local for `nodes`, central for
    /// `rtts`).
    pub base: Topology,
    /// How `per_node` follows `K` in local mode.
    pub per_node: PerNode,
    pub nodes: Vec<u16>,
    pub rtts: Vec<Nanos>,
    pub sync_intervals: Vec<Nanos>,
}

impl TopologySweep {
    /// The sweeps to run, each with its topologies in input order: for
    /// `rtts`, each round trip atomic first, then get-then-set.
    pub fn plans(&self, limit: Limit) -> Vec<(Parameter, Vec<Topology>)> {
        let mut plans = Vec::new();
        if !self.nodes.is_empty() {
            let points = self
                .nodes
                .iter()
                .map(|&k| Topology {
                    count: k,
                    per_node: if self.base.mode == Mode::Local {
                        self.per_node.for_nodes(limit, k)
                    } else {
                        self.base.per_node
                    },
                    skew: vec![0; usize::from(k)],
                    ..self.base.clone()
                })
                .collect();
            plans.push((Parameter::Nodes, points));
        }
        if !self.rtts.is_empty() {
            let points = self
                .rtts
                .iter()
                .flat_map(|&rtt| {
                    [true, false]
                        .map(|atomic| Topology { mode: Mode::Central { rtt, atomic }, ..self.base.clone() })
                })
                .collect();
            plans.push((Parameter::Rtt, points));
        }
        if !self.sync_intervals.is_empty() {
            let points = self
                .sync_intervals
                .iter()
                .map(|&interval| Topology { mode: Mode::Sync { interval }, ..self.base.clone() })
                .collect();
            plans.push((Parameter::SyncInterval, points));
        }
        plans
    }

    /// How many runs the sweeps make.
    pub fn runs(&self) -> usize {
        self.nodes.len() + 2 * self.rtts.len() + self.sync_intervals.len()
    }
}

/// One run of a topology sweep.
#[derive(Clone, Debug)]
pub struct TopologyPoint {
    pub topology: Topology,
    pub report: RunReport,
}

impl TopologyPoint {
    /// Arrivals per second over the trace's span (first to last arrival),
    /// times the round trip: how many requests arrive while one check is
    /// in flight. `None` outside central mode or for fewer than 2 arrivals.
    pub fn arrivals_per_rtt(&self) -> Option<f64> {
        let Mode::Central { rtt, .. } = self.topology.mode else { return None };
        let (first, last) = (self.report.first_arrival?, self.report.last_arrival?);
        let span = last.get().checked_sub(first.get()).filter(|&s| s > 0)?;
        let rate = (self.report.arrivals - 1) as f64 / span as f64;
        Some(rate * rtt.get() as f64)
    }

    /// The estimated over-admission of get-then-set (central mode, not
    /// atomic) under Poisson arrivals at rate `r`, for a limiter that counts
    /// (fixed window and its kin): each write carries the count its read saw
    /// plus one, and a read sees the write of the latest request that
    /// arrived at least one rtt before it. Stepping back from request to
    /// request that way takes rtt plus an exponential gap (mean `1 / r`), so
    /// the count grows by one per `rtt + 1/r`: reaching `L` in a window takes
    /// `L (rtt + 1/r)`, during which `L (1 + r rtt)` requests are admitted.
    /// Over-admission `r × rtt`, at most what the traffic offers beyond the
    /// reference (`offered / admitted by the reference - 1`), while
    /// `L (rtt + 1/r)` is shorter than the window. `None` for atomic checks
    /// (0: the single limiter, shifted by rtt/2), outside central mode and
    /// for the reference.
    pub fn estimated_over_admission(&self, limiter: &LimiterReport) -> Option<f64> {
        let Mode::Central { atomic: false, .. } = self.topology.mode else { return None };
        if limiter.nodes.is_empty() || limiter.reference_admitted == 0 {
            return None;
        }
        let cap = limiter.counts.offered as f64 / limiter.reference_admitted as f64 - 1.0;
        Some(self.arrivals_per_rtt()?.min(cap.max(0.0)))
    }

    /// The analytic peak/L where one exists: local mode, uncoordinated,
    /// even balance, enough traffic: the nodes' limits add up to
    /// `K * per_node` per window, so peak/L is up to `K * per_node / L`
    /// for a per-node limiter that holds its own limit exactly (a fixed
    /// window can exceed its own limit, and so the sum). In sync mode the
    /// bound when nodes never sync within a window: `K` (each node at `L`).
    /// `None` in central mode and for the exact reference, which is not on
    /// nodes.
    pub fn analytic_peak_ratio(&self, limiter: &LimiterReport) -> Option<f64> {
        if limiter.nodes.is_empty() {
            return None;
        }
        let l = self.report.limit.requests as f64;
        match self.topology.mode {
            Mode::Local => self.topology.uncoordinated_bound().map(|b| b as f64 / l),
            Mode::Sync { .. } => Some(f64::from(self.topology.count)),
            Mode::Central { .. } => None,
        }
    }
}

/// The results of one swept parameter, its points in input order.
#[derive(Clone, Debug)]
pub struct TopologySweepResult {
    pub parameter: Parameter,
    pub per_node: PerNode,
    pub points: Vec<TopologyPoint>,
}

/// Runs every point of every topology sweep of `scenario` (in parallel;
/// results in input order). `progress` is called, from any thread, with
/// the work each run adds as it goes ([`rerun_work`], shared out over the
/// run's time): the calls add up to that times [`TopologySweep::runs`].
/// `open_arrivals`: the open-loop arrivals of the scenario's own run, if
/// it ran ([`rerun_work`]).
pub fn run(
    scenario: &Scenario,
    sweep: &TopologySweep,
    open_arrivals: Option<u64>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<TopologySweepResult>, RunError> {
    let plans = sweep.plans(scenario.limit);
    let jobs: Vec<(usize, Topology)> = plans
        .iter()
        .enumerate()
        .flat_map(|(i, (_, points))| points.iter().map(move |t| (i, t.clone())))
        .collect();
    let runs = jobs.len();
    let (weight, end) = (rerun_work(scenario, open_arrivals), crate::simulate::known_end(scenario));
    let reports: Vec<(usize, TopologyPoint)> = jobs
        .into_par_iter()
        .map(|(i, topology)| {
            let mut s = scenario.clone();
            s.nodes = Some(topology.clone());
            let mut share = RunShare::new(weight, end, progress).or_arrivals(open_arrivals);
            let mut report = crate::simulate::run_in_sweep(&s, runs, &mut |p| share.at(p))?;
            share.finish();
            // The sweep tables and charts use the totals; the per-bin
            // figures of every point would only hold memory.
            for l in &mut report.limiters {
                l.node_timeline = None;
            }
            Ok((i, TopologyPoint { topology, report }))
        })
        .collect::<Result<_, RunError>>()?;
    let mut results: Vec<TopologySweepResult> = plans
        .iter()
        .map(|(parameter, _)| TopologySweepResult {
            parameter: *parameter,
            per_node: sweep.per_node,
            points: Vec::new(),
        })
        .collect();
    for (i, point) in reports {
        results[i].points.push(point);
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_node_rules() {
        let limit = Limit { requests: 100, window: Nanos::from_secs(60) };
        assert_eq!(PerNode::Ceil.for_nodes(limit, 3), 34);
        assert_eq!(PerNode::Floor.for_nodes(limit, 3), 33);
        assert_eq!(PerNode::Fixed(100).for_nodes(limit, 3), 100);
        assert_eq!(PerNode::Floor.for_nodes(limit, 101), 0);
        assert_eq!(PerNode::Ceil.for_nodes(limit, 7), 15);
    }
}
