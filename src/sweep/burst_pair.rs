//! The burst-pair sweep of `docs/semantics.md`: two bursts of `L` requests, the
//! second `g` after the first, the first at offset `p` against the window
//! grid, over a `G x G` grid of `(g, p)`.
//!
//! Definitions used here:
//!
//! - A burst is `L` requests at one instant (span 0). This is the burst for
//!   which the analytic band is exactly `1/N`: a burst spread over a span `s`
//!   needs the pair to straddle a slot edge with all of it, which narrows the
//!   band by `s`.
//! - Grid points are cell midpoints: gap `g_i = (i + 1/2) W / G` for
//!   `i = 0 .. G-1` (all inside `(0, W)`), offset `p_j = (j + 1/2) W / G` for
//!   `j = 0 .. G-1` (all inside `[0, W)`). The first burst is at `W + p`
//!   (one whole window after time zero, so the run starts with an empty
//!   window), the second at `W + p + g`; both instants are computed exactly
//!   and rounded up to whole nanoseconds (see [`burst_times`]).
//! - The vulnerable band is the share of gaps `g_i` for which some offset
//!   breaks the limit; the violation probability is the share of `(g, p)`
//!   pairs that do. A pair breaks the limit when more than `L` admitted
//!   requests lie in one exact window `(t - W, t]`, judged, as in a run, on
//!   the times the requests reach the backend (`t + d` for a request a
//!   shaping limiter delays by `d`). For a limiter that never delays, and
//!   since `g < W`, that is when any request of the second burst is
//!   admitted.
//!
//! How a point is computed: a fresh limiter decides the `L` requests of the
//! first burst at `t1`; for each gap, a copy of that state decides the `L`
//! requests of the second burst at `t2`. For a limiter that never delays,
//! with `a1` and `a2` admitted, the exact window ending at `t2` holds
//! `a1 + a2` (since `g < W`), and the excess follows from the order of
//! admission. A limiter that may delay ([`LimiterSpec::delays`]) sends its
//! requests to the backend at times spread over up to its longest wait, so
//! the peak and excess are counted over those backend times, every exact
//! window of both bursts ([`backend_windows`]), as the engine counts them
//! for a run of the same pair. A limiter whose
//! [`SweepTraits::bursts_scale_with_limit`] holds (every window limiter:
//! a burst at one instant is admitted whole or not at all) is run instead
//! on one request per burst at `L = 1`, its outcome scaled by `L`: the
//! same answer at `1/L` of the cost. Tests check all three ways against
//! the full engine on every point of a coarse grid.
//!
//! A limiter whose [`SweepTraits::pair_opens_window`] holds (the
//! first-request fixed window) is not measured: a lone pair opens its
//! window at the first burst and can never break it, whatever earlier
//! traffic could do ([`Unmeasured`]).
//!
//! Cost: `G^2` points times the limiters, two decisions each (`2L` for a
//! limiter that may admit part of a burst). The default
//! `G = 2000` (a step of `W/2000`) puts 20 steps in the band of N = 100 and 2
//! in the band of N = 1000, which is still within one step but leaves the
//! violation probability of N = 1000 coarse (see [`BurstPairRow`]).

use rayon::prelude::*;

use crate::engine::labels;
use crate::limiter::{AnyLimiter, Limit, Limiter, LimiterSpec, SweepTraits};
use crate::time::Nanos;

/// The default grid: `W/2000` steps.
pub const DEFAULT_GRID: u32 = 2000;

#[derive(Clone, Debug, PartialEq)]
pub struct BurstPairConfig {
    pub limit: Limit,
    pub limiters: Vec<LimiterSpec>,
    /// `G`: grid points per axis.
    pub grid: u32,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BurstPairError {
    #[error("burst-pair grid {grid} is out of range: it must be between 2 and W / 2 ns ({max})")]
    Grid { grid: u32, max: u64 },
    #[error("{0}")]
    Work(String),
    #[error(
        "the burst-pair sweep of {label} holds the backend times of both bursts of L = {requests}, {} for one row of the grid, past the memory budget of {} (--memory): give the scenario a smaller L, or a larger --memory",
        crate::export::fmt_bytes_apart(*bytes, *budget).0,
        crate::export::fmt_bytes_apart(*bytes, *budget).1
    )]
    Memory { label: String, requests: u64, bytes: u64, budget: u64 },
}

/// The most requests the burst-pair sweep may decide for one limiter: as
/// many as the largest grid decides for a limiter whose bursts scale with
/// `L` (one request per burst), about 10^10, hours on one core.
pub const MAX_DECISIONS: u128 = MAX_DECISIONS_GRID * (MAX_DECISIONS_GRID + 1);
const MAX_DECISIONS_GRID: u128 = crate::scenario::MAX_GRID as u128;

/// Requests the sweep decides for `spec` on a grid of `grid`: each row
/// decides its first burst once and a second burst per gap, each of
/// `L` requests unless bursts scale with `L` (then one).
pub fn decisions(spec: &LimiterSpec, limit: Limit, grid: u32) -> u128 {
    // (A shaping limiter's bursts never scale: it decides all L, as
    // `sweep_row_backend` does.)
    let (_, size, _) = burst_size(spec.sweep_traits(), limit);
    u128::from(grid) * (u128::from(grid) + 1) * u128::from(size)
}

/// The most requests the burst-pair sweep may decide over all its rows
/// (the listed limiters, the sliding-log reference and the heat map's
/// own slot counters): as many as the sweep's default set of ten rows on
/// the largest grid, about 10^11. That takes about 55 ns of one core per
/// pair and row (a fixed window on a grid of 20 000), an hour and a half;
/// the many limiters a scenario may compare
/// ([`crate::scenario::MAX_LIMITERS`]) would otherwise take days.
pub const MAX_TOTAL_DECISIONS: u128 = 10 * MAX_DECISIONS;

/// For each slot count of `map_slots`, the limiter the heat map shows: a
/// limiter of `limiters` that is that N on the error-versus-N axis
/// (`true`), else a slot counter of N slots, or the aligned fixed window
/// for N = 1, which the map sweeps itself (`false`).
pub fn map_specs(limiters: &[LimiterSpec], map_slots: &[u64]) -> Vec<(LimiterSpec, bool)> {
    map_slots
        .iter()
        .map(|&n| match limiters.iter().find(|l| l.sweep_traits().equivalent_slots == Some(n)) {
            Some(l) => (l.clone(), true),
            None if n == 1 => (crate::limiter::FixedWindowSpec::ALIGNED.into(), false),
            None => (crate::limiter::SlotCounterSpec { slots: n }.into(), false),
        })
        .collect()
}

/// Every row the burst-pair sweep and its heat map decide for `limiters`:
/// them, the sliding-log reference unless among them, and a row for each
/// `map_slots` entry none of them is.
pub fn swept_rows(limiters: &[LimiterSpec], map_slots: &[u64]) -> Vec<LimiterSpec> {
    let (mut rows, _) = crate::engine::with_reference(limiters);
    let extra: Vec<LimiterSpec> =
        map_specs(&rows, map_slots).into_iter().filter(|(_, found)| !found).map(|(s, _)| s).collect();
    rows.extend(extra);
    rows
}

/// The work of one (limiter, offset) row of the grid, for the sweeps'
/// progress: the requests it decides, its first burst once and a second
/// per gap (grid + 1 bursts), a grid's share of [`decisions`].
pub fn row_work(spec: &LimiterSpec, limit: Limit, grid: u32) -> u64 {
    u64::try_from(decisions(spec, limit, grid) / u128::from(grid.max(1))).unwrap_or(u64::MAX)
}

/// The work of the whole burst-pair sweep on `grid`, heat map included,
/// for the sweeps' progress: [`row_work`] for each of its grid rows, which
/// is [`total_decisions`], the requests its work guard counts.
pub fn work(limit: Limit, grid: u32, limiters: &[LimiterSpec], map_slots: &[u64]) -> u64 {
    swept_rows(limiters, map_slots)
        .iter()
        .map(|spec| row_work(spec, limit, grid).saturating_mul(u64::from(grid)))
        .fold(0, u64::saturating_add)
}

/// The rows the whole burst-pair sweep on `grid` decides ([`swept_rows`]:
/// with the reference and the heat map's own) and the requests it decides
/// over all of them ([`decisions`] summed).
pub fn total_decisions(
    limit: Limit,
    grid: u32,
    limiters: &[LimiterSpec],
    map_slots: &[u64],
) -> (usize, u128) {
    let rows = swept_rows(limiters, map_slots);
    let total = rows.iter().map(|s| decisions(s, limit, grid)).sum();
    (rows.len(), total)
}

/// Why the whole burst-pair sweep on `grid` would take too long, if it
/// would: the requests decided over every row of [`swept_rows`] are past
/// [`MAX_TOTAL_DECISIONS`]. The message gives the largest grid that fits,
/// and `fewer` (what to have fewer of).
pub fn total_work_problem(
    limit: Limit,
    grid: u32,
    limiters: &[LimiterSpec],
    map_slots: &[u64],
    fewer: &str,
) -> Option<String> {
    let (rows, total) = total_decisions(limit, grid, limiters, map_slots);
    if total <= MAX_TOTAL_DECISIONS {
        return None;
    }
    // The heat map's own rows are the user's to drop too.
    let own = swept_rows(limiters, &[]).len();
    let fewer = if rows > own { format!("{fewer}, or fewer `map_slots`") } else { fewer.to_string() };
    let g = largest_grid(total / (u128::from(grid) * (u128::from(grid) + 1)), MAX_TOTAL_DECISIONS);
    let fix = if g >= 2 {
        format!("give [sweep] a `grid` of at most {g}, or {fewer}")
    } else {
        format!("{fewer}, or a smaller L (`limit.requests`)")
    };
    let (total, most) = crate::shown::about_apart(total, MAX_TOTAL_DECISIONS);
    Some(format!(
        "the burst-pair sweep would decide about {total} requests in all on a grid of {grid}: grid x grid pairs of bursts for each of its {rows} rows (the limiters, the sliding-log reference and the heat map's own slot counters), more than the {most} a sweep may; {fix}"
    ))
}

/// The largest grid `g` with g (g + 1) x `per_pair` <= `bound`: the grid
/// a sweep deciding `per_pair` requests for each pair of bursts may take.
fn largest_grid(per_pair: u128, bound: u128) -> u128 {
    let mut g = ((bound / per_pair) as f64).sqrt() as u128;
    while g > 0 && g * (g + 1) * per_pair > bound {
        g -= 1;
    }
    g
}

/// [`work_problem`] for a sweep's own limiters, each named by its label.
pub fn labelled_work_problem(limit: Limit, grid: u32, limiters: &[LimiterSpec]) -> Option<String> {
    let named: Vec<(String, LimiterSpec)> =
        labels(limiters).into_iter().map(|l| format!("`{l}`")).zip(limiters.iter().cloned()).collect();
    work_problem(limit, grid, &named).map(|(_, problem)| problem)
}

/// Why the sweep on `grid` would take too long for one of `limiters`, if it
/// would: its index and the message (the largest grid it could take).
pub fn work_problem(limit: Limit, grid: u32, limiters: &[(String, LimiterSpec)]) -> Option<(usize, String)> {
    limiters.iter().enumerate().find_map(|(i, (name, spec))| {
        let n = decisions(spec, limit, grid);
        if n <= MAX_DECISIONS {
            return None;
        }
        let g = largest_grid(n / (u128::from(grid) * (u128::from(grid) + 1)), MAX_DECISIONS);
        let fix = if g >= 2 {
            format!("give [sweep] a `grid` of at most {g}, or a smaller L")
        } else {
            "give the scenario a smaller L (`limit.requests`)".to_string()
        };
        Some((
            i,
            format!(
                "the burst-pair sweep would decide about {} requests for {name}: grid x grid pairs of bursts of L = {} each on a grid of {grid}, more than the {} it may; {fix}",
                crate::shown::about(n as f64),
                limit.requests,
                crate::shown::about(MAX_DECISIONS as f64)
            ),
        ))
    })
}

/// The sweep's result for one limiter.
#[derive(Clone, Debug, PartialEq)]
pub struct BurstPairRow {
    pub spec: LimiterSpec,
    pub label: String,
    /// Gap indices `i` for which some offset breaks the limit.
    pub vulnerable_gaps: u64,
    /// `(g, p)` pairs that break the limit.
    pub violations: u64,
    /// The largest exact-window count over all pairs, in requests (on
    /// backend times for a limiter that delays).
    pub worst_peak: u64,
    /// Excess (requests admitted although `L` or more were already in their
    /// exact window) summed over the violating pairs (u128: a grid of
    /// pairs of L near 2^63 passes u64).
    pub violation_excess: u128,
    /// For each offset index `j`, the violating gap indices as half-open runs
    /// `[from, to)`, in increasing order: the heat map.
    pub runs: Vec<Vec<(u32, u32)>>,
    /// Why the sweep's figures do not measure this limiter, if they do
    /// not: they are then not reported (tables say so, charts leave them
    /// out).
    pub unmeasured: Option<Unmeasured>,
}

/// Why a burst-pair row is not measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unmeasured {
    /// A limiter of `N` slots with `N > G`: its band (`W/N`) is narrower
    /// than one grid step, so that the grid may miss it entirely and
    /// measure a breakable limiter as unbreakable.
    FinerThanGrid,
    /// A lone pair opens this limiter's window at its first burst (the
    /// first-request fixed window), so no pair can break it; only earlier
    /// traffic that placed its window edge can (the run of
    /// `scenarios/sliding_minute.toml` reaches 1.54 L).
    PairOpensWindow,
}

impl BurstPairRow {
    /// Whether the sweep's figures measure this limiter.
    pub fn measured(&self) -> bool {
        self.unmeasured.is_none()
    }
    /// Whether the grid resolves this limiter's band (false for `N > G`).
    pub fn resolved(&self) -> bool {
        self.unmeasured != Some(Unmeasured::FinerThanGrid)
    }
    /// Vulnerable band width, as a fraction of `W` (grid steps times `1/G`).
    pub fn band_width(&self, grid: u32) -> f64 {
        self.vulnerable_gaps as f64 / f64::from(grid)
    }
    /// Share of `(g, p)` pairs that break the limit.
    pub fn violation_probability(&self, grid: u32) -> f64 {
        self.violations as f64 / (f64::from(grid) * f64::from(grid))
    }
    pub fn worst_peak_ratio(&self, limit: u64) -> f64 {
        self.worst_peak as f64 / limit as f64
    }
    /// Mean excess per violating pair, in requests (`None` without violations).
    pub fn mean_violation_excess(&self) -> Option<f64> {
        (self.violations > 0).then(|| self.violation_excess as f64 / self.violations as f64)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BurstPairResult {
    pub limit: Limit,
    pub grid: u32,
    pub rows: Vec<BurstPairRow>,
}

impl BurstPairResult {
    /// The rows whose band the grid does not resolve ([`BurstPairRow::resolved`]).
    pub fn unresolved(&self) -> impl Iterator<Item = &BurstPairRow> {
        self.rows.iter().filter(|r| !r.resolved())
    }
    /// Whether some measured row sits on the N axis (a fixed window or a
    /// slot counter): else an error-versus-N chart would show the analytic
    /// curves alone, and none is drawn.
    pub fn on_n_axis(&self) -> bool {
        self.rows.iter().any(|r| r.measured() && r.spec.sweep_traits().equivalent_slots.is_some())
    }
    /// The rows a lone pair cannot break because it opens their window
    /// ([`Unmeasured::PairOpensWindow`]).
    pub fn opening_own_window(&self) -> impl Iterator<Item = &BurstPairRow> {
        self.rows.iter().filter(|r| r.unmeasured == Some(Unmeasured::PairOpensWindow))
    }
}

/// `g_i`: the gap at grid index `i`, rounded down to whole nanoseconds (the
/// value the tables and charts label; the instants are [`burst_times`]).
pub fn gap(limit: Limit, grid: u32, i: u32) -> Nanos {
    Nanos::new(half_steps(limit.window, grid, 2 * u64::from(i) + 1, Round::Down))
}

/// `p_j`: the offset at grid index `j`, rounded down to whole nanoseconds.
pub fn offset(limit: Limit, grid: u32, j: u32) -> Nanos {
    Nanos::new(half_steps(limit.window, grid, 2 * u64::from(j) + 1, Round::Down))
}

#[derive(Clone, Copy)]
enum Round {
    Down,
    Up,
}

/// `k` half grid steps, `k * W / (2G)`, in whole nanoseconds.
fn half_steps(window: Nanos, grid: u32, k: u64, round: Round) -> u64 {
    let num = u128::from(k) * u128::from(window.get());
    let den = 2 * u128::from(grid);
    let q = match round {
        Round::Down => num / den,
        Round::Up => num.div_ceil(den),
    };
    q as u64
}

/// The instants of the two bursts for grid point `(i, j)`: `W + p_j` and
/// `W + p_j + g_i`, each computed exactly and rounded **up** to whole
/// nanoseconds. Rounding the sum, not adding two rounded terms, matters:
/// `p_j + g_i = (i + j + 1) W / G` is a whole number of grid steps, and
/// when `N` divides `G` it falls exactly on a slot edge (which belongs to
/// the new slot, `floor(t N / W)`) for the pairs the analysis counts.
/// Rounding up keeps such an instant on the new slot's side even when
/// `W / G` is not a whole number of nanoseconds; the first burst, half a
/// step from any edge, never crosses one by it (a step is at least 2 ns).
pub fn burst_times(limit: Limit, grid: u32, i: u32, j: u32) -> (Nanos, Nanos) {
    let w = limit.window;
    let (i, j) = (u64::from(i), u64::from(j));
    let t1 = w.get() + half_steps(w, grid, 2 * j + 1, Round::Up);
    let t2 = w.get() + half_steps(w, grid, 2 * (i + j + 1), Round::Up);
    // g < W still: g_i <= W - W/(2G) and the rounding adds less than 1 ns.
    debug_assert!(t2 > t1 && t2 - t1 < w.get());
    (Nanos::new(t1), Nanos::new(t2))
}

/// A burst of `count` requests at one instant: how many `limiter` admits.
fn burst(limiter: &mut AnyLimiter, t: Nanos, count: u64) -> u64 {
    (0..count).map(|_| u64::from(limiter.decide(t, 1).admitted())).sum()
}

/// A burst of `count` requests at one instant through a limiter that may
/// delay: the backend time (`t + d`) of each admitted request, appended
/// to `out` and sorted there.
fn burst_released(limiter: &mut AnyLimiter, t: Nanos, count: u64, out: &mut Vec<u64>) {
    for _ in 0..count {
        let d = limiter.decide(t, 1);
        // As the engine schedules a release (`src/engine/lane.rs`): one due
        // past the end of time never reaches the backend.
        if d.admitted()
            && let Some(at) = t.checked_add(d.delay())
        {
            out.push(at.get());
        }
    }
    out.sort_unstable();
}

/// `(peak, excess)` of admitted requests that reach the backend at `times`
/// (sorted): the most of them in one exact window `(t - W, t]`, and how
/// many found `limit` or more already in theirs (requests at one instant
/// count those before them, as the engine counts them one by one).
pub fn backend_windows(times: &[u64], window: Nanos, limit: u64) -> (u64, u64) {
    let (mut peak, mut excess, mut lo) = (0, 0, 0);
    for (k, &t) in times.iter().enumerate() {
        // The first request still in (t - W, t].
        while t - times[lo] >= window.get() {
            lo += 1;
        }
        let before = (k - lo) as u64;
        excess += u64::from(before >= limit);
        // With the others at t (after k), the window ending at t holds
        // more; the last of them sees them all.
        peak = peak.max(before + 1);
    }
    (peak, excess)
}

/// How a limiter is run on the pairs of one offset: the bursts' size and the
/// factor that scales what it admits to bursts of `L`.
fn burst_size(traits: SweepTraits, limit: Limit) -> (Limit, u64, u64) {
    if traits.bursts_scale_with_limit {
        (Limit { requests: 1, window: limit.window }, 1, limit.requests)
    } else {
        (limit, limit.requests, 1)
    }
}

/// Runs one limiter on the pair at `(t1, t2)`: how many requests of each burst
/// of `L` it admits. (The sweep does the same, sharing the first burst
/// across a row; the tests check the two agree.)
#[cfg(test)]
fn pair_outcome(spec: &LimiterSpec, limit: Limit, t1: Nanos, t2: Nanos) -> (u64, u64) {
    let (run_limit, size, scale) = burst_size(spec.sweep_traits(), limit);
    let mut l = spec.build(run_limit);
    let a1 = burst(&mut l, t1, size) * scale;
    let a2 = burst(&mut l, t2, size) * scale;
    (a1, a2)
}

/// The excess of a pair: admitted requests that found `L` or more already
/// in their exact window, when `a1` then `a2` are admitted and both bursts
/// lie in one window.
pub fn pair_excess(limit: u64, a1: u64, a2: u64) -> u64 {
    a1.saturating_sub(limit) + a2.saturating_sub(limit.saturating_sub(a1))
}

/// One (limiter, offset) row of the grid.
struct Row {
    runs: Vec<(u32, u32)>,
    worst: u64,
    excess: u128,
}

fn sweep_row(spec: &LimiterSpec, limit: Limit, grid: u32, j: u32) -> Row {
    if spec.delays() {
        return sweep_row_backend(spec, limit, grid, j);
    }
    let (run_limit, size, scale) = burst_size(spec.sweep_traits(), limit);
    let mut row = Row { runs: Vec::new(), worst: 0, excess: 0 };
    // The state after the first burst is the same for every gap of this
    // row: decide it once, then try each second burst on a copy.
    let (t1, _) = burst_times(limit, grid, 0, j);
    let mut after_first = spec.build(run_limit);
    let a1 = burst(&mut after_first, t1, size) * scale;
    for i in 0..grid {
        let (_, t2) = burst_times(limit, grid, i, j);
        let a2 = burst(&mut after_first.clone(), t2, size) * scale;
        // g < W: both bursts lie in the exact window ending at t2.
        let peak = a1 + a2;
        row.worst = row.worst.max(peak);
        if peak > limit.requests {
            row.excess += u128::from(pair_excess(limit.requests, a1, a2));
            match row.runs.last_mut() {
                Some((_, to)) if *to == i => *to = i + 1,
                _ => row.runs.push((i, i + 1)),
            }
        }
    }
    row
}

/// [`sweep_row`] for a limiter that may delay: each pair judged on the
/// backend times of both bursts.
fn sweep_row_backend(spec: &LimiterSpec, limit: Limit, grid: u32, j: u32) -> Row {
    let mut row = Row { runs: Vec::new(), worst: 0, excess: 0 };
    let (t1, _) = burst_times(limit, grid, 0, j);
    let mut after_first = spec.build(limit);
    let mut first = Vec::new();
    burst_released(&mut after_first, t1, limit.requests, &mut first);
    let (mut second, mut both) = (Vec::new(), Vec::new());
    for i in 0..grid {
        let (_, t2) = burst_times(limit, grid, i, j);
        second.clear();
        burst_released(&mut after_first.clone(), t2, limit.requests, &mut second);
        both.clear();
        both.extend_from_slice(&first);
        both.extend_from_slice(&second);
        both.sort_unstable();
        let (peak, excess) = backend_windows(&both, limit.window, limit.requests);
        row.worst = row.worst.max(peak);
        if peak > limit.requests {
            row.excess += u128::from(excess);
            match row.runs.last_mut() {
                Some((_, to)) if *to == i => *to = i + 1,
                _ => row.runs.push((i, i + 1)),
            }
        }
    }
    row
}

/// Runs the sweep. `progress` is called, from any thread, with the work of
/// each (limiter, offset) row as it finishes ([`row_work`]): the calls add
/// up to the rows' work.
pub fn run(
    config: &BurstPairConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<BurstPairResult, BurstPairError> {
    let grid = config.grid;
    let max = config.limit.window.get() / 2;
    if grid < 2 || u64::from(grid) > max {
        return Err(BurstPairError::Grid { grid, max });
    }
    let limit = config.limit;
    let n = config.limiters.len();
    let names = labels(&config.limiters);
    if let Some(problem) = labelled_work_problem(limit, grid, &config.limiters) {
        return Err(BurstPairError::Work(problem));
    }
    // A shaping limiter's row holds both bursts' backend times (first,
    // second and the two merged: 4 L times of 8 bytes) while it runs. One
    // row must fit the budget; rows run side by side only as many at once
    // as fit it together, a number set by the budget and not by the
    // machine's threads, so that whether the sweep runs does not depend on
    // where it runs.
    let budget = crate::engine::memory_budget();
    let row_bytes = limit.requests.saturating_mul(32);
    let mut at_once = usize::MAX;
    if let Some(k) = config.limiters.iter().position(|s| s.delays()) {
        if row_bytes > budget {
            return Err(BurstPairError::Memory {
                label: names[k].clone(),
                requests: limit.requests,
                bytes: row_bytes,
                budget,
            });
        }
        at_once = usize::try_from(budget / row_bytes.max(1)).unwrap_or(usize::MAX).max(1);
    }
    // One task per (limiter, offset) row; collected in index order, in
    // batches of at most `at_once` rows.
    let tasks: Vec<usize> = (0..n * grid as usize).collect();
    let mut cells: Vec<Row> = Vec::with_capacity(tasks.len());
    for batch in tasks.chunks(at_once) {
        let rows: Vec<Row> = batch
            .par_iter()
            .map(|&task| {
                let spec = &config.limiters[task / grid as usize];
                let row = sweep_row(spec, limit, grid, (task % grid as usize) as u32);
                progress(row_work(spec, limit, grid));
                row
            })
            .collect();
        cells.extend(rows);
    }

    let mut rows = Vec::with_capacity(n);
    for (k, (spec, label)) in config.limiters.iter().zip(names).enumerate() {
        let mine = &cells[k * grid as usize..(k + 1) * grid as usize];
        let mut vulnerable = vec![false; grid as usize];
        let mut violations = 0;
        for row in mine {
            for &(a, b) in &row.runs {
                violations += u64::from(b - a);
                vulnerable[a as usize..b as usize].iter_mut().for_each(|v| *v = true);
            }
        }
        rows.push(BurstPairRow {
            spec: spec.clone(),
            label,
            vulnerable_gaps: vulnerable.iter().filter(|v| **v).count() as u64,
            violations,
            worst_peak: mine.iter().map(|r| r.worst).max().unwrap_or(0),
            violation_excess: mine.iter().map(|r| r.excess).sum(),
            runs: mine.iter().map(|r| r.runs.clone()).collect(),
            unmeasured: unmeasured(spec, grid),
        });
    }
    Ok(BurstPairResult { limit, grid, rows })
}

/// Why the sweep on a grid of `grid` points does not measure `spec`, if
/// it does not.
fn unmeasured(spec: &LimiterSpec, grid: u32) -> Option<Unmeasured> {
    let traits = spec.sweep_traits();
    if traits.pair_opens_window {
        Some(Unmeasured::PairOpensWindow)
    } else if traits.equivalent_slots.is_some_and(|n| n > u64::from(grid)) {
        Some(Unmeasured::FinerThanGrid)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{self, RunConfig};
    use crate::limiter::{FixedWindowSpec, SlotCounterSpec};
    use crate::trace::{Burst, Merge, Source};

    const SEC: Limit = Limit { requests: 100, window: Nanos::new(1_000_000_000) };

    /// By hand: a row decides its first burst once and a second per gap,
    /// grid (grid + 1) bursts; a fixed window's burst is one request (it
    /// scales with L), a GCRA's is L. Past 1e10 the sweep is refused, with
    /// the largest grid that fits: g (g + 1) L <= 100000 x 100001.
    #[test]
    fn decisions_and_the_largest_grid_that_fits() {
        let fixed: LimiterSpec = FixedWindowSpec::ALIGNED.into();
        let gcra: LimiterSpec = crate::limiter::GcraSpec { burst: None, max_wait: None }.into();
        assert_eq!(decisions(&fixed, SEC, 2000), 2000 * 2001);
        assert_eq!(decisions(&gcra, SEC, 2000), 2000 * 2001 * 100);
        let named = |s: &LimiterSpec| vec![("x".to_string(), s.clone())];
        assert_eq!(work_problem(SEC, 2000, &named(&gcra)), None);
        let big = Limit { requests: 1_000_000, ..SEC };
        let (i, m) = work_problem(big, 200, &named(&gcra)).unwrap();
        assert_eq!(i, 0);
        // 99 x 100 x 10^6 = 9.9e9 fits; 100 x 101 x 10^6 does not.
        assert!(m.contains("about 4.02e10 requests for x") && m.contains("a `grid` of at most 99,"), "{m}");
        assert_eq!(work_problem(big, 99, &named(&gcra)), None);
        // The fixed window at the largest grid: exactly the bound.
        assert_eq!(decisions(&fixed, big, 100_000), MAX_DECISIONS);
        assert_eq!(work_problem(big, 100_000, &named(&fixed)), None);
    }

    /// By hand: the sweep's default set is 10 rows of one-request bursts
    /// (every N of the heat map among them), g (g + 1) x 10 requests: the
    /// bound itself on the largest grid. One more slot counter makes 11
    /// rows, and the largest grid that fits 95346 (95346 x 95347 x 11 =
    /// 1.000005e11; 95347 x 95348 x 11 = 1.000026e11, past 10 x 100000 x
    /// 100001). A fixed window alone brings the log and the map's N = 2,
    /// 5, 10. GCRA bursts count L requests each.
    #[test]
    fn total_work_counts_every_row_the_sweep_decides() {
        let defaults = crate::sweep::default_limiters();
        let map = [1, 2, 5, 10];
        assert_eq!(swept_rows(&defaults, &map), defaults);
        assert!(total_work_problem(SEC, 100_000, &defaults, &map, "fewer").is_none());
        let mut more = defaults.clone();
        more.insert(1, SlotCounterSpec { slots: 3 }.into());
        assert!(total_work_problem(SEC, 95346, &more, &map, "fewer").is_none());
        let m = total_work_problem(SEC, 95347, &more, &map, "fewer").unwrap();
        // Just past the bound both counts would read "1e11": they are
        // written whole, 11 x 95347 x 95348 against 10 x 100000 x 100001.
        assert!(m.contains("about 100002603316 requests in all on a grid of 95347"), "{m}");
        assert!(m.contains("its 11 rows") && m.contains("the 100001000000 a sweep may"), "{m}");
        assert!(m.ends_with("a `grid` of at most 95346, or fewer"), "{m}");
        let fixed: Vec<LimiterSpec> = vec![FixedWindowSpec::ALIGNED.into()];
        let rows = swept_rows(&fixed, &map);
        assert_eq!(rows.len(), 5);
        assert_eq!(rows[1], LimiterSpec::reference());
        assert_eq!(rows[3], SlotCounterSpec { slots: 5 }.into());
        // 40 GCRAs of L = 100 on a grid of 100: 40 x 100 x 100 x 101 + 4 x
        // 100 x 101 requests, far under; at L = 10^8 not even a grid of 2
        // fits (40 x 6 x 10^8 = 2.4e10 requests is under, so L = 10^9):
        // only a smaller L helps.
        let gcra: LimiterSpec = crate::limiter::GcraSpec { burst: None, max_wait: None }.into();
        let many = vec![gcra; 40];
        assert!(total_work_problem(SEC, 100, &many, &map, "fewer").is_none());
        let big = Limit { requests: 1_000_000_000, ..SEC };
        let m = total_work_problem(big, 2, &many, &map, "fewer").unwrap();
        // The map's four rows are the user's to drop too.
        assert!(m.ends_with("; fewer, or fewer `map_slots`, or a smaller L (`limit.requests`)"), "{m}");
    }

    /// The progress bar's weights, by hand: a row of the grid decides
    /// grid + 1 bursts (its first once, a second per gap), one request
    /// each for a fixed window (bursts scale with L), L = 100 for a GCRA:
    /// 2001 and 200100 on a grid of 2000, a hundred times more for the
    /// same pairs. The sweep's weight is its grid rows' (grid rows per
    /// limiter times the limiters), the total the work guard counts: the
    /// default ten rows, 10 x 2000 x 2001; a fixed window and a GCRA bring
    /// the reference and the map's N = 2, 5, 10: 5 rows of 2000 x 2001
    /// and one of 2000 x 200100. A run reports exactly those weights.
    #[test]
    fn the_progress_weighs_each_row_by_the_requests_it_decides() {
        let fixed: LimiterSpec = FixedWindowSpec::ALIGNED.into();
        let gcra: LimiterSpec = crate::limiter::GcraSpec { burst: None, max_wait: None }.into();
        assert_eq!(row_work(&fixed, SEC, 2000), 2001);
        assert_eq!(row_work(&gcra, SEC, 2000), 200_100);
        assert_eq!(row_work(&gcra, SEC, 2000), 100 * row_work(&fixed, SEC, 2000));
        let defaults = crate::sweep::default_limiters();
        let map = [1, 2, 5, 10];
        assert_eq!(work(SEC, 2000, &defaults, &map), 10 * 2000 * 2001);
        let two = vec![fixed.clone(), gcra.clone()];
        assert_eq!(work(SEC, 2000, &two, &map), 5 * 2000 * 2001 + 2000 * 200_100);
        for (limiters, grid) in [(&defaults, 2000), (&two, 2000), (&two, 7)] {
            let (_, decided) = total_decisions(SEC, grid, limiters, &map);
            assert_eq!(u128::from(work(SEC, grid, limiters, &map)), decided);
        }
        // What a run reports: each row's weight once, adding up to the
        // rows' work (here the fixed window, the GCRA and the reference).
        let (rows, _) = crate::engine::with_reference(&two);
        let reported = std::sync::Mutex::new(Vec::new());
        run(&BurstPairConfig { limit: SEC, limiters: rows, grid: 7 }, &|w| reported.lock().unwrap().push(w))
            .unwrap();
        let mut reported = reported.into_inner().unwrap();
        reported.sort_unstable();
        let mut want = vec![8; 14];
        want.extend([800; 7]);
        assert_eq!(reported, want);
    }

    fn sweep(slots: &[u64], grid: u32) -> BurstPairResult {
        let mut limiters: Vec<LimiterSpec> = vec![FixedWindowSpec::ALIGNED.into()];
        limiters.extend(slots.iter().map(|&n| LimiterSpec::from(SlotCounterSpec { slots: n })));
        limiters.push(LimiterSpec::reference());
        run(&BurstPairConfig { limit: SEC, limiters, grid }, &|_| {}).unwrap()
    }

    /// With N dividing G, the band is exactly 1/N (m = G/N gaps) and the
    /// violation probability exactly 1/(2N) + 1/(2G): the midpoint grid
    /// puts m(m + 1)/2 violating points in each of the N slots
    /// (docs/semantics.md, "Why the measured violation is ..."). Compared
    /// to 1e-12, the rounding of the divisions only.
    fn check_slots(r: &BurstPairResult, n: u64) {
        let g = u64::from(r.grid);
        assert_eq!(g % n, 0, "N={n} must divide G={g} for the exact figures");
        let row = r.rows.iter().find(|row| row.spec.slots() == Some(n)).unwrap();
        let band = row.band_width(r.grid);
        let prob = row.violation_probability(r.grid);
        let (n, g) = (n as f64, g as f64);
        assert!((band - 1.0 / n).abs() <= 1e-12, "N={n}: band {band}, 1/N = {}", 1.0 / n);
        let want = 1.0 / (2.0 * n) + 1.0 / (2.0 * g);
        assert!((prob - want).abs() <= 1e-12, "N={n}: violation {prob}, 1/(2N) + 1/(2G) = {want}");
        assert_eq!(row.worst_peak_ratio(SEC.requests), 2.0, "N={n}");
    }

    #[test]
    fn band_and_violation_match_the_analysis_for_n_2_and_10() {
        let r = sweep(&[2, 10], 200);
        check_slots(&r, 2);
        check_slots(&r, 10);
        let fixed = &r.rows[0];
        assert_eq!(fixed.band_width(r.grid), 1.0);
        // The fixed window is N = 1, m = G: G (G + 1) / 2 breaking pairs,
        // a share of 1/2 + 1/(2G).
        assert_eq!(fixed.violations, 200 * 201 / 2);
        assert!((fixed.violation_probability(r.grid) - (0.5 + 1.0 / 400.0)).abs() <= 1e-12);
        assert_eq!(fixed.worst_peak_ratio(100), 2.0);
        let log = r.rows.last().unwrap();
        assert_eq!((log.vulnerable_gaps, log.violations, log.worst_peak), (0, 0, 100));
    }

    #[test]
    fn band_and_violation_match_the_analysis_for_n_100() {
        // 1000 steps: 10 in the band of N = 100.
        let r = run(
            &BurstPairConfig {
                limit: SEC,
                limiters: vec![SlotCounterSpec { slots: 100 }.into()],
                grid: 1000,
            },
            &|_| {},
        )
        .unwrap();
        check_slots(&r, 100);
        // The band is the last 1/N of the gaps: g in ((N-1)W/N, W).
        let first = r.rows[0].runs.iter().filter_map(|runs| runs.first()).map(|r| r.0).min().unwrap();
        assert_eq!(first, 990);
    }

    /// The default grid (2000 steps) still resolves N = 1000: its band is 2
    /// steps, within one step of 1/N, and it reaches 2L too.
    #[test]
    fn default_grid_resolves_n_1000_band() {
        let limiters = vec![SlotCounterSpec { slots: 1000 }.into()];
        let r = run(&BurstPairConfig { limit: SEC, limiters, grid: DEFAULT_GRID }, &|_| {}).unwrap();
        check_slots(&r, 1000);
    }

    /// Every finite N can be driven to 2L; the sliding log never passes L.
    /// Over the default set, with 100 steps (N = 1000 is finer than the grid,
    /// so only N <= 100 are asked to show a band here).
    #[test]
    fn worst_peak_is_two_l_for_every_finite_n() {
        let limiters = crate::sweep::default_limiters();
        let r = run(&BurstPairConfig { limit: SEC, limiters, grid: 100 }, &|_| {}).unwrap();
        for row in &r.rows {
            if row.spec == LimiterSpec::reference() {
                assert_eq!((row.worst_peak_ratio(100), row.violations, row.vulnerable_gaps), (1.0, 0, 0));
            } else if row.spec.slots() != Some(1000) {
                assert_eq!(row.worst_peak_ratio(100), 2.0, "{}", row.label);
                // Every violating pair of a window limiter lets the whole
                // second burst through against a full window: excess L.
                assert_eq!(row.mean_violation_excess(), Some(100.0), "{}", row.label);
            }
        }
    }

    /// When `N` divides `G` the band is exactly `1/N` and the violation
    /// exactly `1/(2N) + 1/(2G)`, also where a grid step is not a whole
    /// number of nanoseconds (W / 3000 = 333 333.3 ns, W / 3): the pairs on
    /// a slot edge count, as they do where the step is whole.
    #[test]
    fn n_dividing_g_is_exact_on_a_fractional_step() {
        for (grid, slots) in [(3000, &[1u64, 3, 30][..]), (3, &[1, 3][..]), (2000, &[2, 10, 100][..])] {
            let r = sweep(slots, grid);
            let g = u64::from(grid);
            for &n in slots {
                let row =
                    r.rows.iter().find(|row| row.spec.sweep_traits().equivalent_slots == Some(n)).unwrap();
                let m = g / n;
                assert_eq!(row.vulnerable_gaps, m, "G={grid} N={n}: band is m = G/N gaps");
                assert_eq!(row.violations, n * m * (m + 1) / 2, "G={grid} N={n}: N m(m+1)/2 pairs");
            }
        }
    }

    /// N above G: the band of W/N falls between grid points (N = 10 000
    /// measures as unbreakable on 2000 steps), so the row says it is not
    /// resolved; N = G still is.
    #[test]
    fn n_above_the_grid_is_not_resolved() {
        let r = sweep(&[2000, 10_000], 2000);
        let resolved: Vec<bool> = r.rows.iter().map(BurstPairRow::resolved).collect();
        assert_eq!(resolved, [true, true, false, true]);
        let missed = &r.rows[2];
        assert_eq!((missed.vulnerable_gaps, missed.worst_peak), (0, 100), "the grid misses N = 10 000");
        assert_eq!(r.rows[1].worst_peak, 200);
        assert_eq!(r.unresolved().count(), 1);
    }

    #[test]
    fn fixed_window_is_slot_counter_with_one_slot() {
        let r = sweep(&[1], 100);
        assert_eq!(r.rows[0].runs, r.rows[1].runs);
    }

    /// The shortcut (two requests at limit 1, scaled by L) agrees with the
    /// full engine run on two bursts of L = 100 at every point of a grid.
    #[test]
    fn shortcut_agrees_with_the_engine() {
        let grid = 20;
        let r = sweep(&[2, 3, 10], grid);
        let limiters: Vec<LimiterSpec> = r.rows.iter().map(|row| row.spec.clone()).collect();
        let config = RunConfig::new(SEC, limiters);
        for j in 0..grid {
            for i in 0..grid {
                let (t1, t2) = burst_times(SEC, grid, i, j);
                let sources = vec![
                    Source::Burst(Burst::new(t1, Nanos::ZERO, 100)),
                    Source::Burst(Burst::new(t2, Nanos::ZERO, 100)),
                ];
                let report = engine::run(&config, Merge::new(sources), None, &mut |_| {}).unwrap();
                for (row, lr) in r.rows.iter().zip(&report.limiters) {
                    let broken = row.runs[j as usize].iter().any(|&(a, b)| (a..b).contains(&i));
                    assert_eq!(lr.counts.peak > 100, broken, "{} at g={i}, p={j}", row.label);
                    assert_eq!(lr.counts.peak, if broken { 200 } else { 100 });
                }
            }
        }
    }

    #[test]
    fn rows_agree_with_pair_outcome() {
        let grid = 40;
        let r = sweep(&[3, 7], grid);
        for row in &r.rows {
            for j in 0..grid {
                for i in 0..grid {
                    let (t1, t2) = burst_times(SEC, grid, i, j);
                    let (_, a2) = pair_outcome(&row.spec, SEC, t1, t2);
                    let broken = row.runs[j as usize].iter().any(|&(a, b)| (a..b).contains(&i));
                    assert_eq!(a2 > 0, broken, "{} at ({i}, {j})", row.label);
                }
            }
        }
    }

    #[test]
    fn parallel_result_is_the_same_every_time() {
        let a = sweep(&[2, 5], 64);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let b = pool.install(|| sweep(&[2, 5], 64));
        assert_eq!(a, b);
    }

    #[test]
    fn grid_points_are_inside_the_ranges() {
        assert_eq!(gap(SEC, 2000, 0), Nanos::new(250_000));
        assert_eq!(gap(SEC, 2000, 1999), Nanos::new(999_750_000));
        assert!(run(&BurstPairConfig { limit: SEC, limiters: vec![], grid: 1 }, &|_| {}).is_err());
    }

    /// The full engine on the two bursts of grid point (i, j): (peak, excess)
    /// of each limiter.
    fn engine_pair(limiters: &[LimiterSpec], limit: Limit, grid: u32, i: u32, j: u32) -> Vec<(u64, u64)> {
        let (t1, t2) = burst_times(limit, grid, i, j);
        let sources = vec![
            Source::Burst(Burst::new(t1, Nanos::ZERO, limit.requests)),
            Source::Burst(Burst::new(t2, Nanos::ZERO, limit.requests)),
        ];
        let config = RunConfig::new(limit, limiters.to_vec());
        let report = engine::run(&config, Merge::new(sources), None, &mut |_| {}).unwrap();
        report.limiters.iter().map(|l| (l.counts.peak, l.counts.excess)).collect()
    }

    /// A limiter that admits part of a burst (the test-only example admits
    /// every other request) is run on full bursts, and the sweep's numbers
    /// equal a direct simulation of the same pairs; scaling one request by
    /// L, as the window limiters may, would have been wrong for it.
    #[test]
    fn partial_admission_is_simulated_in_full() {
        let limit = Limit { requests: 10, window: Nanos::new(1_000_000_000) };
        let example: LimiterSpec = crate::limiter::ExampleSpec.into();
        assert!(!example.sweep_traits().bursts_scale_with_limit);
        let grid = 16;
        let limiters = vec![example.clone()];
        let r = run(&BurstPairConfig { limit, limiters: limiters.clone(), grid }, &|_| {}).unwrap();
        let row = &r.rows[0];
        let (mut violations, mut excess, mut worst) = (0, 0, 0);
        for j in 0..grid {
            for i in 0..grid {
                let (peak, ex) = engine_pair(&limiters, limit, grid, i, j)[0];
                let broken = row.runs[j as usize].iter().any(|&(a, b)| (a..b).contains(&i));
                assert_eq!(peak > limit.requests, broken, "g={i}, p={j}");
                worst = worst.max(peak);
                if broken {
                    violations += 1;
                    excess += u128::from(ex);
                }
            }
        }
        assert_eq!((row.violations, row.violation_excess, row.worst_peak), (violations, excess, worst));
        // Every other request of a burst of 10: 5 from each; a pair in two
        // windows puts 10 in one exact window, never more than L.
        assert_eq!((row.worst_peak, row.violations), (10, 0));
        // One request at L = 1, scaled by 10, would claim 20 got through.
        let (t1, t2) = burst_times(limit, grid, grid - 1, grid - 1);
        let mut scaled = example.build(Limit { requests: 1, window: limit.window });
        let claimed = (burst(&mut scaled, t1, 1) + burst(&mut scaled, t2, 1)) * limit.requests;
        assert_eq!(claimed, 20);
    }

    /// The shaping limiters of `scenarios/shaping.toml` (L = 10 per 1 s),
    /// with the sliding log.
    fn shaping_limiters() -> (Limit, Vec<LimiterSpec>) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/shaping.toml");
        let scenario = crate::scenario::Scenario::load(&path).unwrap();
        (scenario.limit, crate::engine::with_reference(&scenario.limiters).0)
    }

    /// A limiter that delays is judged where the backend sees its requests,
    /// at `t + d`, as a run judges it: every cell of a 16 x 16 grid gives
    /// the peak and excess of the full engine on that one pair, and the
    /// worst peaks are the hand-calculated ones. Before, a delayed request
    /// counted at its arrival, and every shaping limiter showed band 100 %,
    /// violation 100 % and worst peak 2 × L.
    #[test]
    fn delaying_limiters_are_judged_on_backend_times() {
        let (limit, limiters) = shaping_limiters();
        assert_eq!(limit, Limit { requests: 10, window: Nanos::from_secs(1) });
        let grid = 16;
        let r = run(&BurstPairConfig { limit, limiters: limiters.clone(), grid }, &|_| {}).unwrap();
        let mut worst = vec![0; limiters.len()];
        let mut violations = vec![0; limiters.len()];
        let mut excess = vec![0u128; limiters.len()];
        for j in 0..grid {
            for i in 0..grid {
                for (k, (peak, ex)) in engine_pair(&limiters, limit, grid, i, j).into_iter().enumerate() {
                    let row = &r.rows[k];
                    let broken = row.runs[j as usize].iter().any(|&(a, b)| (a..b).contains(&i));
                    assert_eq!(peak > limit.requests, broken, "{} at g={i}, p={j}: peak {peak}", row.label);
                    worst[k] = worst[k].max(peak);
                    if broken {
                        violations[k] += 1;
                        excess[k] += u128::from(ex);
                    }
                }
            }
        }
        for (k, row) in r.rows.iter().enumerate() {
            assert_eq!(
                (row.worst_peak, row.violations, row.violation_excess),
                (worst[k], violations[k], excess[k]),
                "{}",
                row.label
            );
        }
        let get = |label: &str| r.rows.iter().find(|row| row.label == label).unwrap();
        // The FIFO of 20 drained at L / W sends one request every 100 ms:
        // never more than 10 in a second.
        let queue = get("leaky_queue(queue=20)");
        assert_eq!((queue.worst_peak, queue.violations, queue.vulnerable_gaps), (10, 0, 0));
        // The GCRA of burst 10 passes the first burst at once and the
        // second one every 100 ms from 100 ms after the first: 10 + 9 in
        // the second ending at 900 ms after it, in every pair.
        let gcra = get("gcra(max_wait=2s)");
        assert_eq!((gcra.worst_peak, gcra.violations), (19, 256));
        // nginx without nodelay: the first request passes at its own
        // nanosecond, the leak counts from the start of its millisecond, so
        // the 10th one queued behind it (from the second burst) reaches the
        // backend less than 1 s after it: 11 in one exact second. (At
        // whole-millisecond instants, 1.25 s and 1.75 s, it is 10.)
        let nginx = get("leaky_bucket(burst=20;delay=0)");
        assert_eq!((nginx.worst_peak, nginx.violations, nginx.mean_violation_excess()), (11, 256, Some(1.0)));
        // Without delays the bucket of 20 passes both bursts at once.
        assert_eq!(get("leaky_bucket(burst=20)").worst_peak, 20);
    }

    /// The exact-window peak and excess of backend times, by hand: W = 1 s,
    /// L = 2, requests at 0, 0, 0.5 s, 0.999 s and 1 s. The window ending
    /// at 0.999 s holds 4; the second request at 0 finds 1, the one at
    /// 0.5 s finds 2 (excess), at 0.999 s 3 (excess), at 1 s the two at 0
    /// have left and it finds 2 (excess).
    #[test]
    fn backend_windows_by_hand() {
        let ms = |m: u64| m * 1_000_000;
        let times = [0, 0, ms(500), ms(999), ms(1000)];
        assert_eq!(backend_windows(&times, Nanos::from_secs(1), 2), (4, 3));
        assert_eq!(backend_windows(&[], Nanos::from_secs(1), 2), (0, 0));
        // Many at one instant: the last sees them all.
        assert_eq!(backend_windows(&[7; 5], Nanos::new(1), 5), (5, 0));
        assert_eq!(backend_windows(&[7; 5], Nanos::new(1), 4), (5, 1));
    }

    /// The first-request fixed window opens its window at the first burst
    /// of a lone pair, so no pair breaks it: the sweep says it does not
    /// measure it instead of reporting band 0 and worst peak 1.
    #[test]
    fn the_first_request_window_is_not_measured() {
        let first: LimiterSpec = FixedWindowSpec { align: crate::limiter::WindowAlign::FirstRequest }.into();
        let limiters = vec![first, FixedWindowSpec::ALIGNED.into(), LimiterSpec::reference()];
        let r = run(&BurstPairConfig { limit: SEC, limiters, grid: 20 }, &|_| {}).unwrap();
        let unmeasured: Vec<_> = r.rows.iter().map(|row| row.unmeasured).collect();
        assert_eq!(unmeasured, [Some(Unmeasured::PairOpensWindow), None, None]);
        assert!(!r.rows[0].measured() && r.rows[0].resolved());
        assert_eq!(r.opening_own_window().count(), 1);
        assert_eq!(r.unresolved().count(), 0);
    }

    #[test]
    fn excess_of_a_pair_follows_the_order_of_admission() {
        // L = 10. Both bursts whole: the second finds 10, 11, ... : all 10 excess.
        assert_eq!(pair_excess(10, 10, 10), 10);
        // 4 then 9: the second burst's 7th admitted request finds 10.
        assert_eq!(pair_excess(10, 4, 9), 3);
        // A first burst of 12 (a bucket larger than L) has 2 excess itself.
        assert_eq!(pair_excess(10, 12, 1), 3);
        assert_eq!(pair_excess(10, 5, 5), 0);
    }
}
