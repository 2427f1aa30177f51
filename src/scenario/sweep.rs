//! The `[sweep]` table: which burst-pair grid and which load factors the
//! sweeps of `docs/semantics.md` ("Error versus slot count") run, and which
//! retry tables the retry-policy comparison runs the scenario with
//! ("Reacting clients").

use serde::Deserialize;
use toml::Spanned;

use super::diagnostics::{Ctx, ScenarioError};
use super::retry::{self, RawRetry};
use crate::clients::RetryPolicy;
use crate::limiter::Limit;
use crate::time::Nanos;

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
    /// `retry_policies` and none of their keys.
    pub window_sweeps: bool,
    /// Retry tables to run the scenario's traffic with, one run each, in
    /// place of `[retry]` (empty: no comparison).
    pub retry_policies: Vec<RetryPolicy>,
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
    pub(super) retry_policies: Option<Spanned<Vec<Spanned<RawRetry>>>>,
}

/// The most entries `retry_policies` may have.
pub const MAX_RETRY_POLICIES: usize = 20;

pub(super) fn validate(ctx: &Ctx, r: &RawSweep, limit: Limit) -> Result<SweepOptions, ScenarioError> {
    let mut out = SweepOptions::defaults(limit);
    if let Some(g) = &r.grid {
        let max = (limit.window.get() / 2).min(u64::from(u32::MAX));
        let v = *g.get_ref();
        if v < 2 || v as u64 > max {
            return Err(
                ctx.at(g.span(), format!("`sweep.grid` must be between 2 and {max} (W / 2 ns), got {v}"))
            );
        }
        out.grid = v as u32;
    }
    if let Some(loads) = &r.loads {
        if loads.get_ref().is_empty() {
            return Err(ctx.at(loads.span(), "`sweep.loads` is empty: give at least one load factor"));
        }
        out.loads = loads.get_ref().iter().map(|l| ctx.rate("sweep.loads", l)).collect::<Result<_, _>>()?;
    }
    if let Some(d) = &r.load_duration {
        out.load_duration = ctx.positive_duration("sweep.load_duration", d)?;
    }
    if let Some(m) = &r.map_slots {
        out.map_slots = m
            .get_ref()
            .iter()
            .map(|n| {
                let v = ctx.at_least_one("sweep.map_slots", n)?;
                if v > limit.window.get() {
                    return Err(
                        ctx.at(n.span(), "`sweep.map_slots`: more slots than the window has nanoseconds")
                    );
                }
                Ok(v)
            })
            .collect::<Result<_, _>>()?;
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
            .map(|(i, t)| retry::validate(ctx, &format!("sweep.retry_policies[{i}]"), t.span(), t.get_ref()))
            .collect::<Result<_, _>>()?;
        out.window_sweeps =
            r.grid.is_some() || r.loads.is_some() || r.load_duration.is_some() || r.map_slots.is_some();
    }
    Ok(out)
}
