//! The `[nodes]` table: how many nodes share the limit, how requests are
//! spread over them and how they coordinate (`docs/semantics.md`, "Many
//! nodes").

use serde::Deserialize;
use toml::Spanned;

use super::diagnostics::{Ctx, Loose, OnlyTable, ScenarioError, TableName, Whole, nearest_key};
use super::traffic::Traffic;
use crate::limiter::{Limit, LimiterSpec};
use crate::nodes::{Balance, Mode, Outage, Topology};
use crate::sweep::topology::PerNode;
use crate::time::{Nanos, parse_duration};

/// The most nodes a topology may have.
pub const MAX_NODES: u16 = 1000;

/// The largest weight a node may have in `balance = { weights = [...] }`.
const MAX_WEIGHT: u64 = 1_000_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNodes {
    count: Option<Spanned<Whole>>,
    balance: Option<Spanned<Loose>>,
    mode: Option<Spanned<String>>,
    per_node: Option<Spanned<Loose>>,
    skew: Option<Spanned<Vec<Spanned<String>>>>,
    rtt: Option<Spanned<String>>,
    atomic: Option<Spanned<bool>>,
    sync_interval: Option<Spanned<String>>,
    #[serde(default)]
    outage: Vec<Spanned<OnlyTable<RawOutage>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutage {
    start: Spanned<String>,
    end: Spanned<String>,
    fail: Option<Spanned<String>>,
}

impl TableName for RawOutage {
    const STRUCT: &'static str = "RawOutage";
}

impl RawNodes {
    /// Local mode (the default): each node enforces its own limit.
    pub(super) fn is_local(&self) -> bool {
        self.mode.as_ref().is_none_or(|m| m.get_ref() == "local")
    }
}

/// What the rest of the scenario tells the `[nodes]` validation.
pub(super) struct Context<'a> {
    pub limit: Limit,
    pub traffic: &'a [Traffic],
    pub limiters: &'a [LimiterSpec],
    /// The scenario's `duration`, if it sets one: an outage from it on
    /// would never come.
    pub duration: Option<Nanos>,
}

pub(super) fn validate(
    ctx: &Ctx,
    span: std::ops::Range<usize>,
    r: &RawNodes,
    c: &Context,
) -> Result<(Topology, PerNode), ScenarioError> {
    let count_raw = r
        .count
        .as_ref()
        .ok_or_else(|| ctx.at(span.clone(), "`nodes.count` is required: how many nodes, like 5"))?;
    let count = count_raw.get_ref().0;
    if count < 1 || count > i128::from(MAX_NODES) {
        return Err(ctx.at(
            count_raw.span(),
            format!("`nodes.count` must be a whole number from 1 to {MAX_NODES}, got {count}"),
        ));
    }
    let count = count as u16;
    let mode = mode(ctx, r, c)?;
    let rule = per_node(ctx, r, c.limit, count, mode)?;
    let per_node = rule.for_nodes(c.limit, count);
    let balance = balance(ctx, r, count, c.traffic)?;
    let skew = skew(ctx, r, c.traffic, count, mode)?;
    let outages = outages(ctx, r, mode, c.duration)?;
    Ok((Topology { count, balance, mode, per_node, skew, outages }, rule))
}

/// `mode` with the keys it takes: `rtt` and `atomic` (central),
/// `sync_interval` (sync).
fn mode(ctx: &Ctx, r: &RawNodes, c: &Context) -> Result<Mode, ScenarioError> {
    let name = r.mode.as_ref().map_or("local", |m| m.get_ref().as_str());
    let needless = |key: &str, span: std::ops::Range<usize>| {
        let takes = if key == "sync_interval" { "sync" } else { "central" };
        ctx.at(
            span,
            format!("`nodes.{key}` has no effect with mode = \"{name}\": remove it, or use mode = \"{takes}\", which takes it"),
        )
    };
    let mode = match name {
        "local" => Mode::Local,
        "central" => {
            let rtt = r.rtt.as_ref().ok_or_else(|| {
                ctx.at(
                    r.mode.as_ref().map_or(0..0, |m| m.span()),
                    "`nodes.rtt` is required for mode = \"central\": the node-to-store round trip, like \"2ms\"",
                )
            })?;
            let rtt = ctx.duration("nodes.rtt", rtt)?;
            Mode::Central { rtt, atomic: r.atomic.as_ref().is_none_or(|a| *a.get_ref()) }
        }
        "sync" => {
            let interval = r.sync_interval.as_ref().ok_or_else(|| {
                ctx.at(
                    r.mode.as_ref().map_or(0..0, |m| m.span()),
                    "`nodes.sync_interval` is required for mode = \"sync\": how often nodes exchange counts, like \"1s\"",
                )
            })?;
            let interval = ctx.positive_duration("nodes.sync_interval", interval)?;
            if let Some(l) = c.limiters.iter().find(|l| !l.shares_counts()) {
                // A shaping limiter also holds each node's own queue of
                // waiting requests: no exchange of counts could merge them.
                let why = if l.delays() {
                    " (it delays requests, and each node's queue of waiting requests is its own)"
                } else {
                    ""
                };
                return Err(ctx.at(
                    r.mode.as_ref().map_or(0..0, |m| m.span()),
                    format!(
                        "mode = \"sync\" adds up the nodes' counts, but `{}` keeps no counts to add{why}: use mode = \"local\" or \"central\" for it",
                        l.label()
                    ),
                ));
            }
            Mode::Sync { interval }
        }
        _ => {
            return Err(ctx.one_of(
                "nodes.mode",
                r.mode.as_ref().expect("named"),
                &["local", "central", "sync"],
            ));
        }
    };
    if !matches!(mode, Mode::Central { .. }) {
        if let Some(v) = &r.rtt {
            return Err(needless("rtt", v.span()));
        }
        if let Some(v) = &r.atomic {
            return Err(needless("atomic", v.span()));
        }
    }
    if !matches!(mode, Mode::Sync { .. })
        && let Some(v) = &r.sync_interval
    {
        return Err(needless("sync_interval", v.span()));
    }
    Ok(mode)
}

/// `per_node` (local mode): `"ceil"` (default) `ceil(L / K)`, `"floor"`,
/// or a whole number; the rule, which the `nodes` sweep follows.
fn per_node(ctx: &Ctx, r: &RawNodes, limit: Limit, count: u16, mode: Mode) -> Result<PerNode, ScenarioError> {
    let k = u64::from(count);
    let Some(v) = &r.per_node else { return Ok(PerNode::Ceil) };
    if mode != Mode::Local {
        return Err(ctx.at(v.span(), "`nodes.per_node` has no effect unless mode = \"local\": the other modes decide against one limit of L (one store, or counts added up); remove it"));
    }
    let rule = match v.get_ref() {
        Loose::Str(s) if s == "ceil" => PerNode::Ceil,
        Loose::Str(s) if s == "floor" => PerNode::Floor,
        Loose::Int(n) if *n > i128::from(i64::MAX) => {
            return Err(ctx.at(
                v.span(),
                format!("`nodes.per_node`: {n} is too large: expected a whole number up to {}", i64::MAX),
            ));
        }
        Loose::Int(n) if *n >= 1 => PerNode::Fixed(*n as u64),
        other => {
            return Err(ctx.at(
                v.span(),
                format!("`nodes.per_node` must be \"ceil\", \"floor\" or a whole number of at least 1, got {other}"),
            ));
        }
    };
    if rule.for_nodes(limit, count) == 0 {
        return Err(ctx.at(
            v.span(),
            format!(
                "`nodes.per_node` = \"floor\" gives floor({} / {k}) = 0: every node would refuse everything",
                limit.requests
            ),
        ));
    }
    Ok(rule)
}

/// Whether some source gives its requests client keys: a Poisson source
/// with `clients`, or a csv source with `key_column`. Every other request
/// has key 0.
fn has_client_keys(traffic: &[Traffic]) -> bool {
    traffic.iter().any(|t| match t {
        Traffic::Poisson { clients, .. } => clients.is_some(),
        Traffic::Csv(opts) => opts.key_column.is_some(),
        Traffic::Burst { .. } | Traffic::Constant { .. } | Traffic::Closed { .. } => false,
    })
}

/// `balance`: a name, or `{ weights = [...] }` with one weight per node.
/// `key_hash` needs client keys: without them every request has key 0 and
/// would go to one node.
fn balance(ctx: &Ctx, r: &RawNodes, count: u16, traffic: &[Traffic]) -> Result<Balance, ScenarioError> {
    let Some(v) = &r.balance else { return Ok(Balance::RoundRobin) };
    let expected =
        "`nodes.balance` must be \"round_robin\", \"random\", \"key_hash\" or { weights = [3, 1, ...] }";
    match v.get_ref() {
        Loose::Str(s) => match s.as_str() {
            "round_robin" => Ok(Balance::RoundRobin),
            "random" => Ok(Balance::Random),
            "key_hash" if !has_client_keys(traffic) => Err(ctx.at(
                v.span(),
                "`nodes.balance` = \"key_hash\" sends all the requests of a client key to one node, but no source gives client keys (a poisson source with `clients`, or a csv source with `key_column`): every request would go to node 0. Use \"round_robin\" or \"random\" to spread them, or give the traffic client keys",
            )),
            "key_hash" => Ok(Balance::KeyHash),
            other => Err(ctx.at(v.span(), format!("{expected}, got {}", crate::shown::string(other)))),
        },
        Loose::Table(t) => {
            // The key that is not `weights` is named and pointed at (its
            // value: the key's own place is not kept).
            if let Some((key, other)) = t.iter().find(|(k, _)| k != "weights") {
                let near = nearest_key(key, &["weights"]).map(|k| format!("; did you mean `{k}`?"));
                return Err(ctx.at(
                    other.span(),
                    format!(
                        "`nodes.balance.{}` is not known: a balance table takes only `weights`, one weight per node, like {{ weights = [3, 1] }}{}",
                        key.escape_debug(),
                        near.unwrap_or_default()
                    ),
                ));
            }
            let Some((_, ws)) = t.first() else {
                return Err(ctx.at(
                    v.span(),
                    "`nodes.balance` = { } has no `weights`: give one weight per node, like { weights = [3, 1] }, or name a balance: \"round_robin\", \"random\" or \"key_hash\"",
                ));
            };
            let Loose::List(ws) = ws.get_ref() else {
                return Err(ctx.at(
                    ws.span(),
                    format!(
                        "`nodes.balance.weights` must be a list of whole numbers from 0 to {MAX_WEIGHT}, one per node, like [3, 1], got {}",
                        ws.get_ref()
                    ),
                ));
            };
            if ws.len() != usize::from(count) {
                return Err(ctx.at(
                    v.span(),
                    format!(
                        "`nodes.balance.weights` has {} weights for {count} nodes: give one per node",
                        ws.len()
                    ),
                ));
            }
            // Each weight is named, shown and pointed at.
            let weights = ws
                .iter()
                .enumerate()
                .map(|(i, w)| match w.get_ref() {
                    Loose::Int(n) if (0..=i128::from(MAX_WEIGHT)).contains(n) => Ok(*n as u64),
                    other => Err(ctx.at(
                        w.span(),
                        format!(
                            "`nodes.balance.weights[{i}]` must be a whole number from 0 to {MAX_WEIGHT}, got {other}"
                        ),
                    )),
                })
                .collect::<Result<Vec<u64>, _>>()?;
            if weights.iter().all(|&w| w == 0) {
                return Err(
                    ctx.at(v.span(), "`nodes.balance.weights` are all 0: no node would get a request; give at least one node a weight above 0, like [1, 0]")
                );
            }
            Ok(Balance::Weights(weights))
        }
        other => Err(ctx.at(v.span(), format!("{expected}, got {other}"))),
    }
}

/// The earliest instant any source can send a request (0 when a trace
/// file could start at 0).
fn earliest_arrival(traffic: &[Traffic]) -> Nanos {
    traffic
        .iter()
        .map(|t| match t {
            Traffic::Burst { start, .. }
            | Traffic::Constant { start, .. }
            | Traffic::Poisson { start, .. }
            | Traffic::Closed { start, .. } => *start,
            Traffic::Csv(_) => Nanos::ZERO,
        })
        .min()
        .unwrap_or(Nanos::ZERO)
}

/// `skew`: one signed clock offset per node, like `"-40ms"`, in local mode
/// only. A node whose clock is behind must not read a time before 0.
///
/// In central mode the store's clock decides, so a node's clock has no
/// effect. In sync mode each node's view starts from the counts merged at
/// the last sync, stamped with the other nodes' clocks: a node whose clock
/// is behind would decide at a time before the state it holds, which the
/// limiters (and the model) do not allow.
fn skew(
    ctx: &Ctx,
    r: &RawNodes,
    traffic: &[Traffic],
    count: u16,
    mode: Mode,
) -> Result<Vec<i64>, ScenarioError> {
    let Some(list) = &r.skew else { return Ok(vec![0; usize::from(count)]) };
    match mode {
        Mode::Local => {}
        Mode::Central { .. } => {
            return Err(ctx.at(
                list.span(),
                "`nodes.skew` has no effect with mode = \"central\": the store's clock decides every request",
            ));
        }
        Mode::Sync { .. } => {
            return Err(ctx.at(
                list.span(),
                "`nodes.skew` is not modelled with mode = \"sync\": a node would decide at its own time on counts stamped by clocks ahead of it; use mode = \"local\"",
            ));
        }
    }
    if list.get_ref().len() != usize::from(count) {
        return Err(ctx.at(
            list.span(),
            format!("`nodes.skew` has {} offsets for {count} nodes: give one per node", list.get_ref().len()),
        ));
    }
    let earliest = earliest_arrival(traffic);
    list.get_ref()
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let key = format!("nodes.skew[{i}]");
            let text = s.get_ref().trim();
            let (negative, magnitude) = match text.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, text),
            };
            // One sign at most: `--0s` is not minus `-0s`.
            let d = if negative && magnitude.trim_start().starts_with('-') {
                Err(crate::time::TimeParseError::BadDuration(text.to_string()))
            } else {
                parse_duration(magnitude)
            }
            .map_err(|e| ctx.at(s.span(), super::diagnostics::duration_message(&key, &e)))?;
            let ns = i64::try_from(d.get())
                .map_err(|_| {
                    ctx.at(
                        s.span(),
                        format!(
                            "`{key}` = {} is too large: a clock offset is kept in signed 64-bit nanoseconds, so it may be at most {} ns (about 292 years) either way",
                            crate::shown::string(text),
                            i64::MAX
                        ),
                    )
                })?;
            if negative && d > earliest {
                return Err(ctx.at(
                    s.span(),
                    format!(
                        "`{key}` = {} puts a node's clock {} behind, but requests may come from {earliest} s: its time would be negative; start the traffic at least that late",
                        crate::shown::string(text),
                        crate::time::format_duration(d)
                    ),
                ));
            }
            Ok(if negative { -ns } else { ns })
        })
        .collect()
}

/// `[[nodes.outage]]`: windows when the store is unreachable (central and
/// sync modes), in time order and not overlapping.
fn outages(
    ctx: &Ctx,
    r: &RawNodes,
    mode: Mode,
    duration: Option<Nanos>,
) -> Result<Vec<Outage>, ScenarioError> {
    let mut out: Vec<Outage> = Vec::new();
    for (i, o) in r.outage.iter().enumerate() {
        if mode == Mode::Local {
            return Err(ctx.at(o.span(), "`nodes.outage`: in mode = \"local\" there is no store to lose"));
        }
        let o_ref = &o.get_ref().0;
        let key = |k: &str| format!("nodes.outage[{i}].{k}");
        let start = ctx.duration(&key("start"), &o_ref.start)?;
        let end = ctx.duration(&key("end"), &o_ref.end)?;
        if end <= start {
            return Err(ctx.at(
                o_ref.end.span(),
                format!("`{}` ({end} s) must be after `start` ({start} s)", key("end")),
            ));
        }
        if let Some(d) = duration.filter(|&d| start >= d) {
            return Err(ctx.at(
                o_ref.start.span(),
                format!(
                    "`{}` ({start} s) must be before the scenario's `duration` ({d} s): the run ends first, so the store would never be lost; start the outage earlier, or remove it",
                    key("start")
                ),
            ));
        }
        let fail_open = match &o_ref.fail {
            None => true,
            Some(f) if f.get_ref() == "open" => true,
            Some(f) if f.get_ref() == "closed" => false,
            Some(f) => return Err(ctx.one_of(&key("fail"), f, &["open", "closed"])),
        };
        if let Some(prev) = out.iter().find(|p| start < p.end && p.start < end) {
            return Err(ctx.at(
                o_ref.start.span(),
                format!(
                    "`{}` [{start} s, {end} s) overlaps an earlier outage [{} s, {} s): give each moment one outage",
                    key("start"),
                    prev.start,
                    prev.end
                ),
            ));
        }
        out.push(Outage { start, end, fail_open });
    }
    out.sort_by_key(|o| o.start);
    Ok(out)
}
