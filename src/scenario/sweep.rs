//! The `[sweep]` table: which burst-pair grid and which load factors the
//! sweeps of `docs/semantics.md` ("Error versus slot count") run, which
//! retry tables the retry-policy comparison runs the scenario with
//! ("Reacting clients"), how many seeds the seed sweep reruns it with ("The
//! seed sweep"), and which node counts, round trips and sync intervals the
//! topology sweeps rerun it with ("Many nodes").

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use super::MAX_GENERATED;
use super::diagnostics::{Ctx, OnlyTable, ScenarioError};
use super::nodes::MAX_NODES;
use super::retry::{self, RawRetry};
use crate::clients::RetryPolicy;
use crate::limiter::Limit;
use crate::nodes::{Balance, Mode, Topology};
use crate::shown::{about, number};
use crate::sweep::topology::{PerNode, TopologySweep};
use crate::time::{Nanos, format_duration};

/// The `[sweep]` table, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepOptions {
    /// Burst-pair grid points per axis (gap and offset).
    pub grid: u32,
    /// Load factors of the load sweep (multiples of `L / W`).
    pub loads: Vec<f64>,
    /// Length of each load-sweep run.
    pub load_duration: Nanos,
    /// Slot counts shown in the burst-pair heat map (1 = fixed window).
    pub map_slots: Vec<u64>,
    /// Run the burst-pair and load sweeps: always, unless the table gives
    /// `retry_policies` or a topology sweep and none of their keys.
    pub window_sweeps: bool,
    /// Retry tables to run the scenario's traffic with, one run each, in
    /// place of `[retry]` (empty: no comparison).
    pub retry_policies: Vec<RetryPolicy>,
    /// The seed sweep's runs, one per seed from the scenario's own
    /// (`crate::sweep::seeds`; `None`: no seed sweep).
    pub seeds: Option<u32>,
    /// Where `seeds` is set (`file:line:column`), for what is found about
    /// it after the scenario is read (`--seed`, a trace's rows).
    pub seeds_at: Option<String>,
}

impl SweepOptions {
    /// The defaults for a limit: grid 2000, loads 0.5 .. 3, 100 windows per
    /// load, heat maps for the fixed window and N = 2, 5, 10.
    pub fn defaults(limit: Limit) -> SweepOptions {
        SweepOptions {
            grid: crate::sweep::burst_pair::DEFAULT_GRID,
            loads: crate::sweep::load::DEFAULT_LOADS.to_vec(),
            load_duration: Nanos::new(limit.window.get().saturating_mul(crate::sweep::load::DEFAULT_WINDOWS)),
            map_slots: vec![1, 2, 5, 10],
            window_sweeps: true,
            retry_policies: Vec::new(),
            seeds: None,
            seeds_at: None,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSweep {
    grid: Option<Spanned<i64>>,
    loads: Option<Spanned<Vec<Spanned<f64>>>>,
    load_duration: Option<Spanned<String>>,
    map_slots: Option<Spanned<Vec<Spanned<i64>>>>,
    pub(super) retry_policies: Option<Spanned<Vec<Spanned<OnlyTable<RawRetry>>>>>,
    // The seed sweep (checked against the rest of the scenario in `mod.rs`).
    pub(super) seeds: Option<Spanned<i64>>,
    // The topology sweeps (`validate_topology`).
    pub(super) nodes: Option<Spanned<Vec<Spanned<i64>>>>,
    rtts: Option<Spanned<Vec<Spanned<String>>>>,
    sync_intervals: Option<Spanned<Vec<Spanned<String>>>>,
}

impl RawSweep {
    /// Where `seeds` is given, if it is.
    pub(super) fn seeds_span(&self) -> Option<std::ops::Range<usize>> {
        self.seeds.as_ref().map(|n| n.span())
    }

    /// Where `grid` is given, if it is.
    pub(super) fn grid_span(&self) -> Option<std::ops::Range<usize>> {
        self.grid.as_ref().map(|g| g.span())
    }

    /// Where the loads' work is set: `loads`, else `load_duration`.
    pub(super) fn loads_span(&self) -> Option<std::ops::Range<usize>> {
        self.loads.as_ref().map(|l| l.span()).or_else(|| self.load_duration.as_ref().map(|d| d.span()))
    }

    /// Whether the burst-pair and load sweeps run: when the table sets one
    /// of their keys, or sets neither `retry_policies`, `seeds` nor a
    /// topology sweep (an empty `[sweep]` runs them with their defaults). A
    /// table with only `retry_policies`, `seeds`, `nodes`, `rtts` or
    /// `sync_intervals` runs only those.
    pub(super) fn runs_burst_pair(&self) -> bool {
        let own = self.grid.is_some()
            || self.loads.is_some()
            || self.load_duration.is_some()
            || self.map_slots.is_some();
        let others = self.retry_policies.is_some()
            || self.seeds.is_some()
            || self.nodes.is_some()
            || self.rtts.is_some()
            || self.sync_intervals.is_some();
        own || !others
    }
}

/// The most load factors `loads` may list: one run of the scenario's
/// limiters each.
pub const MAX_LOADS: usize = 1000;

/// The most entries `retry_policies` may have.
pub const MAX_RETRY_POLICIES: usize = 20;

/// The fewest seeds a seed sweep runs: one seed has no spread.
pub const MIN_SEEDS: i64 = 2;

/// The most burst-pair grid points per axis: the sweep decides grid x grid
/// pairs per limiter (10^10 here, hours), and holds a few bytes per point.
pub const MAX_GRID: u64 = 100_000;

/// The largest burst-pair grid over `limit`'s window: W / 2 ns points
/// per axis (each point a whole nanosecond apart), and at most `MAX_GRID`.
fn max_grid(limit: Limit) -> u64 {
    (limit.window.get() / 2).min(MAX_GRID)
}

/// Why the default burst-pair grid cannot run over `limit`'s window (the
/// grid is 2 to W / 2 ns points per axis), if it cannot; `None` when it can.
pub fn default_grid_problem(limit: Limit) -> Option<String> {
    let default = crate::sweep::burst_pair::DEFAULT_GRID;
    let max = max_grid(limit);
    if u64::from(default) <= max {
        return None;
    }
    let window = format_duration(limit.window);
    Some(if max < 2 {
        format!(
            "the burst-pair sweep needs a grid of at least 2 points per axis and at most W / 2 ns, so a window of at least 4ns; `limit.window` is {window}"
        )
    } else {
        format!(
            "the default burst-pair `sweep.grid` of {default} points per axis needs a window of at least {}ns (the grid is at most W / 2 ns), but `limit.window` is {window}: give [sweep] a `grid` from 2 to {max}",
            2 * u64::from(default)
        )
    })
}

/// Why load factor `load` cannot run for `duration` in the load sweep.
enum LoadProblem {
    /// The rate, `load * L / W`, underflows to 0 or overflows to
    /// infinity (the Poisson source needs a finite rate above 0).
    Rate(f64),
    /// About this many requests, more than a generated source may produce.
    Requests(f64),
}

/// The generated sources' guards, for one run of the load sweep: the same
/// as a `[[traffic]]` source's `load` gets (its rate finite and above 0,
/// at most `MAX_GENERATED` requests).
fn load_problem(limit: Limit, load: f64, duration: Nanos) -> Option<LoadProblem> {
    let rate = crate::sweep::load::rate(limit, load);
    if !(rate.is_finite() && rate > 0.0) {
        return Some(LoadProblem::Rate(rate));
    }
    let expected = rate * duration.as_secs_f64();
    (expected > MAX_GENERATED as f64).then_some(LoadProblem::Requests(expected))
}

/// Why the default sweeps (`ratesim sweep` on a scenario with no `[sweep]`
/// table) cannot run over `limit`, if they cannot: the default grid, or a
/// default load that would generate too many requests.
pub fn default_sweep_problem(limit: Limit) -> Option<String> {
    default_grid_problem(limit).or_else(|| {
        let defaults = SweepOptions::defaults(limit);
        defaults.loads.iter().find_map(|&load| {
            Some(match load_problem(limit, load, defaults.load_duration)? {
                LoadProblem::Rate(rate) => format!(
                    "the default load sweep's load {} gives a rate of {} requests/s (load x L / W): it must be finite and above 0; give [sweep] `loads` that are",
                    number(load),
                    number(rate)
                ),
                LoadProblem::Requests(expected) => format!(
                    "the default load sweep runs load {} for {} (100 windows) with L = {}, about {} requests, but a load-sweep run may generate at most {}: give [sweep] a shorter `load_duration` or smaller `loads`",
                    number(load),
                    format_duration(defaults.load_duration),
                    limit.requests,
                    about(expected),
                    about(MAX_GENERATED as f64)
                ),
            })
        })
    })
}

/// The `[sweep]` table at `span`, validated; `window_span` is where
/// `limit.window` is, for errors about what the window is too short for.
pub(super) fn validate(
    ctx: &Ctx,
    span: Range<usize>,
    r: &RawSweep,
    limit: Limit,
    window_span: Range<usize>,
) -> Result<SweepOptions, ScenarioError> {
    let mut out = SweepOptions::defaults(limit);
    if r.grid.is_none()
        && r.runs_burst_pair()
        && let Some(problem) = default_grid_problem(limit)
    {
        // Below 4 ns no grid fits: the window is what to change.
        let at = if limit.window.get() < 4 { window_span } else { span };
        return Err(ctx.at(at, problem));
    }
    if let Some(g) = &r.grid {
        let max = max_grid(limit);
        let v = *g.get_ref();
        if v < 2 || v as u64 > max {
            let why = if max == MAX_GRID { "grid x grid burst pairs per limiter" } else { "W / 2 ns" };
            return Err(
                ctx.at(g.span(), format!("`sweep.grid` must be between 2 and {max} ({why}), got {v}"))
            );
        }
        out.grid = v as u32;
    }
    if let Some(loads) = &r.loads {
        if loads.get_ref().is_empty() {
            return Err(ctx.at(loads.span(), "`sweep.loads` is empty: give at least one load factor (a multiple of L / W), like [0.5, 1, 2]"));
        }
        out.loads = loads
            .get_ref()
            .iter()
            .enumerate()
            .map(|(i, l)| ctx.rate(&format!("sweep.loads[{i}]"), l))
            .collect::<Result<_, _>>()?;
    }
    if let Some(d) = &r.load_duration {
        out.load_duration = ctx.positive_duration("sweep.load_duration", d)?;
    }
    // Each load runs a Poisson source for `load_duration`: the generated
    // sources' guards apply to each run.
    for (i, &load) in out.loads.iter().enumerate() {
        let (at, key) = match (&r.loads, &r.load_duration) {
            (Some(l), _) => (l.get_ref()[i].span(), format!("sweep.loads[{i}]")),
            (None, Some(d)) => (d.span(), "sweep.loads".to_string()),
            (None, None) => (span.clone(), "sweep.loads".to_string()),
        };
        match load_problem(limit, load, out.load_duration) {
            None => {}
            Some(LoadProblem::Rate(rate)) => {
                return Err(ctx.at(
                    at,
                    format!(
                        "`{key}` = {} gives a rate of {} requests/s (load x L / W, with L = {} per {}): it must be finite and above 0",
                        number(load),
                        number(rate),
                        limit.requests,
                        format_duration(limit.window)
                    ),
                ));
            }
            Some(LoadProblem::Requests(expected)) => {
                return Err(ctx.at(
                    at,
                    format!(
                        "`{key}` = {} over `sweep.load_duration` ({} s) is about {} requests: a load-sweep run may generate at most {}",
                        number(load),
                        out.load_duration,
                        about(expected),
                        about(MAX_GENERATED as f64)
                    ),
                ));
            }
        }
    }
    // Swept in increasing order, each value once: the load-sweep chart's
    // lines then run left to right and its table has one row per load.
    out.loads.sort_by(f64::total_cmp);
    out.loads.dedup();
    // Each run is bounded, and so is their number (their sum, decided by
    // every limiter, once the limiters are known: `load::work_problem`).
    if let Some(loads) = &r.loads {
        let n = out.loads.len();
        if n > MAX_LOADS {
            return Err(ctx.at(
                loads.span(),
                format!("`sweep.loads` lists {n} different load factors: the load sweep runs at most {MAX_LOADS}, one run each; give fewer"),
            ));
        }
    }
    if let Some(m) = &r.map_slots {
        if m.get_ref().is_empty() {
            return Err(ctx.at(
                m.span(),
                "`sweep.map_slots` is empty: give at least one slot count to map, like [1, 2, 5, 10] (1 = fixed window)",
            ));
        }
        out.map_slots = m
            .get_ref()
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let key = format!("sweep.map_slots[{i}]");
                let v = ctx.at_least_one(&key, n)?;
                if v > limit.window.get() {
                    return Err(ctx.at(
                        n.span(),
                        format!(
                            "`{key}`: {v} slots is more than the window ({}) has nanoseconds ({}); a slot must be at least 1 ns",
                            format_duration(limit.window),
                            limit.window.get()
                        ),
                    ));
                }
                Ok(v)
            })
            .collect::<Result<_, _>>()?;
        // One panel per slot count, in the order given.
        let mut seen = std::collections::HashSet::new();
        out.map_slots.retain(|n| seen.insert(*n));
    }
    if let Some(list) = &r.retry_policies {
        let n = list.get_ref().len();
        if n == 0 || n > MAX_RETRY_POLICIES {
            return Err(ctx.at(
                list.span(),
                format!(
                    "`sweep.retry_policies` must list 1 to {MAX_RETRY_POLICIES} retry tables, like \
[{{ policy = \"none\" }}, {{ policy = \"full_jitter\", base = \"100ms\", cap = \"10s\", max_attempts = 10 }}], got {n}"
                ),
            ));
        }
        out.retry_policies = list
            .get_ref()
            .iter()
            .enumerate()
            .map(|(i, t)| {
                retry::validate(ctx, &format!("sweep.retry_policies[{i}]"), t.span(), &t.get_ref().0)
            })
            .collect::<Result<_, _>>()?;
    }
    if let Some(n) = &r.seeds {
        let (v, most) = (*n.get_ref(), crate::sweep::seeds::MAX_SEEDS);
        if !(MIN_SEEDS..=i64::from(most)).contains(&v) {
            return Err(ctx.at(
                n.span(),
                format!(
                    "`sweep.seeds` must be a whole number from {MIN_SEEDS} to {most} (one run of the scenario per \
seed, from its own `seed` on; one seed has no spread to measure), got {v}"
                ),
            ));
        }
        out.seeds = Some(v as u32);
        out.seeds_at = Some(ctx.location(n.span()));
    }
    out.window_sweeps = r.runs_burst_pair();
    Ok(out)
}

// ---- topology sweeps ---------------------------------------------------------

/// What the rest of the scenario tells the topology sweep validation.
pub(super) struct TopologyContext<'a> {
    pub limit: Limit,
    /// The `[nodes]` table, validated, with its `per_node` rule and where it is.
    pub nodes: Option<(&'a Topology, PerNode, std::ops::Range<usize>)>,
    pub has_traffic: bool,
}

/// `nodes`, `rtts` and `sync_intervals` of `[sweep]`: each reruns the
/// scenario's traffic and limiters with that one value of `[nodes]` changed
/// (`crate::sweep::topology`). `None` when the table sets none of them.
pub(super) fn validate_topology(
    ctx: &Ctx,
    r: &RawSweep,
    c: &TopologyContext,
) -> Result<Option<TopologySweep>, ScenarioError> {
    let first = [
        r.nodes.as_ref().map(|v| ("nodes", v.span())),
        r.rtts.as_ref().map(|v| ("rtts", v.span())),
        r.sync_intervals.as_ref().map(|v| ("sync_intervals", v.span())),
    ];
    let Some((key, span)) = first.into_iter().flatten().next() else { return Ok(None) };
    if !c.has_traffic {
        return Err(ctx.at(
            span,
            format!(
                "`sweep.{key}` reruns the scenario's own traffic, but it has no [[traffic]] source: add one"
            ),
        ));
    }
    let (base, per_node) = match c.nodes {
        Some((t, rule, _)) => (t.clone(), rule),
        None => (
            Topology {
                count: 1,
                balance: Balance::RoundRobin,
                mode: Mode::Local,
                per_node: c.limit.requests,
                skew: vec![0],
                outages: Vec::new(),
            },
            PerNode::Ceil,
        ),
    };
    let mode_name = match base.mode {
        Mode::Local => "local",
        Mode::Central { .. } => "central",
        Mode::Sync { .. } => "sync",
    };
    let mut out =
        TopologySweep { base, per_node, nodes: Vec::new(), rtts: Vec::new(), sync_intervals: Vec::new() };
    if let Some(list) = &r.nodes {
        if list.get_ref().is_empty() {
            return Err(ctx.at(
                list.span(),
                "`sweep.nodes` is empty: give at least one number of nodes, like [1, 2, 3, 5, 10]",
            ));
        }
        if matches!(out.base.mode, Mode::Central { .. }) {
            return Err(ctx.at(
                list.span(),
                "`sweep.nodes` has no effect with mode = \"central\": the one store decides every request, however many nodes ask it; sweep `rtts` instead",
            ));
        }
        if let Balance::Weights(_) = out.base.balance {
            return Err(ctx.at(
                list.span(),
                "`sweep.nodes` changes the number of nodes, but `nodes.balance.weights` gives one weight per node: use another balance to sweep it",
            ));
        }
        if out.base.skew.iter().any(|&s| s != 0) {
            return Err(ctx.at(
                list.span(),
                "`sweep.nodes` changes the number of nodes, but `nodes.skew` gives one clock offset per node: remove it to sweep the number of nodes",
            ));
        }
        for (i, v) in list.get_ref().iter().enumerate() {
            let k = *v.get_ref();
            if k < 1 || k > i64::from(MAX_NODES) {
                return Err(ctx.at(
                    v.span(),
                    format!("`sweep.nodes[{i}]` must be a whole number from 1 to {MAX_NODES}, got {k}"),
                ));
            }
            let k = k as u16;
            if out.base.mode == Mode::Local && per_node.for_nodes(c.limit, k) == 0 {
                return Err(ctx.at(
                    v.span(),
                    format!(
                        "`sweep.nodes[{i}]` = {k} with `nodes.per_node` = \"floor\" gives floor({} / {k}) = 0: every node would refuse everything",
                        c.limit.requests
                    ),
                ));
            }
            out.nodes.push(k);
        }
    }
    if let Some(list) = &r.rtts {
        if list.get_ref().is_empty() {
            return Err(ctx.at(
                list.span(),
                "`sweep.rtts` is empty: give at least one round trip, like [\"0ms\", \"1ms\", \"10ms\"]",
            ));
        }
        if c.nodes.is_some() && !matches!(out.base.mode, Mode::Central { .. }) {
            return Err(ctx.at(
                list.span(),
                format!(
                    "`sweep.rtts` sweeps the store's round trip: it needs mode = \"central\" in [nodes] (or no [nodes] table), not \"{mode_name}\""
                ),
            ));
        }
        if c.nodes.is_none() {
            out.base.mode = Mode::Central { rtt: Nanos::ZERO, atomic: true };
        }
        out.rtts = list
            .get_ref()
            .iter()
            .enumerate()
            .map(|(i, v)| ctx.duration(&format!("sweep.rtts[{i}]"), v))
            .collect::<Result<_, _>>()?;
    }
    if let Some(list) = &r.sync_intervals {
        if list.get_ref().is_empty() {
            return Err(ctx.at(
                list.span(),
                "`sweep.sync_intervals` is empty: give at least one interval, like [\"100ms\", \"1s\"]",
            ));
        }
        if !matches!(out.base.mode, Mode::Sync { .. }) {
            let have = if c.nodes.is_some() {
                format!("not \"{mode_name}\"")
            } else {
                "and there is no [nodes] table".to_string()
            };
            return Err(ctx.at(
                list.span(),
                format!(
                    "`sweep.sync_intervals` sweeps how often nodes sync: it needs mode = \"sync\" in [nodes] with its `count`, {have}"
                ),
            ));
        }
        out.sync_intervals = list
            .get_ref()
            .iter()
            .enumerate()
            .map(|(i, v)| ctx.positive_duration(&format!("sweep.sync_intervals[{i}]"), v))
            .collect::<Result<_, _>>()?;
    }
    // Each swept in increasing order, each value once.
    out.nodes.sort_unstable();
    out.nodes.dedup();
    out.rtts.sort_unstable();
    out.rtts.dedup();
    out.sync_intervals.sort_unstable();
    out.sync_intervals.dedup();
    if r.nodes.is_some() && r.rtts.is_some() && c.nodes.is_none() {
        // Without [nodes], `nodes` sweeps local mode and `rtts` central: one
        // base cannot be both.
        return Err(ctx.at(
            r.rtts.as_ref().map_or(0..0, |v| v.span()),
            "`sweep.nodes` and `sweep.rtts` change different modes (local and central): give [nodes] a mode, or sweep them in two scenarios",
        ));
    }
    Ok(Some(out))
}
