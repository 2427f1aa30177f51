//! `[[traffic]]` entries: the sources a scenario may name, one validator per
//! source kind, each owning that kind's keys.

use serde::Deserialize;
use serde::de::IgnoredAny;
use toml::Spanned;

use super::diagnostics::{FileProblem, Whole};
use super::entry::Entry;
use super::{MAX_GENERATED, ScenarioError};
use crate::shown::{about, number, plain, string};
use crate::time::{Nanos, TimeUnit};
use crate::trace::{CsvOptions, KeysAt};

/// One traffic source, validated.
#[derive(Clone, Debug, PartialEq)]
pub enum Traffic {
    Burst {
        start: Nanos,
        span: Nanos,
        count: u64,
    },
    Constant {
        start: Nanos,
        end: Nanos,
        rate: f64,
    },
    /// `clients`: (number of client keys, Zipf exponent), if requests belong to clients.
    Poisson {
        start: Nanos,
        end: Nanos,
        rate: f64,
        clients: Option<(u64, f64)>,
    },
    Csv(CsvOptions),
    /// A closed population of `clients` clients, each with one request in
    /// flight, thinking an exponential time of mean `think` between them,
    /// from `start` until `end` (`crate::clients::ClosedSource`).
    Closed {
        clients: u64,
        think: Nanos,
        start: Nanos,
        end: Nanos,
    },
}

impl Traffic {
    /// The source's `kind`, as a scenario writes it.
    pub fn kind(&self) -> &'static str {
        match self {
            Traffic::Burst { .. } => "burst",
            Traffic::Constant { .. } => "constant",
            Traffic::Poisson { .. } => "poisson",
            Traffic::Csv(_) => "csv",
            Traffic::Closed { .. } => "closed",
        }
    }

    /// About how many requests a generated source sends over its span (a
    /// burst exactly; a closed population about one per client per think
    /// time), the measure of the guard on what generated sources produce
    /// ([`MAX_GENERATED`]); `None` for a trace, which streams.
    pub fn expected_requests(&self) -> Option<f64> {
        let secs = |start: Nanos, end: Nanos| end.saturating_sub(start).as_secs_f64();
        match *self {
            Traffic::Burst { count, .. } => Some(count as f64),
            Traffic::Constant { start, end, rate } | Traffic::Poisson { start, end, rate, .. } => {
                Some(rate * secs(start, end))
            }
            Traffic::Closed { clients, think, start, end } => {
                Some(clients as f64 * end.saturating_sub(start).get() as f64 / think.get() as f64)
            }
            Traffic::Csv(_) => None,
        }
    }
}

/// The source kinds, in the order messages list them.
pub const KINDS: [&str; 5] = ["burst", "constant", "poisson", "csv", "closed"];

/// Validates one `[[traffic]]` entry by its kind.
pub(super) fn parse(entry: &Entry<'_>, kind: &Spanned<String>) -> Result<Traffic, ScenarioError> {
    match kind.get_ref().as_str() {
        "burst" => burst(entry),
        "constant" => rate_source(entry, false),
        "poisson" => rate_source(entry, true),
        "csv" => csv(entry),
        "closed" => closed(entry),
        _ => Err(entry.one_of("kind", kind, &KINDS)),
    }
}

/// `start`, a duration, 0 when missing.
fn start(entry: &Entry<'_>, v: &Option<Spanned<String>>) -> Result<Nanos, ScenarioError> {
    Ok(v.as_ref().map(|v| entry.duration_of("start", v)).transpose()?.unwrap_or(Nanos::ZERO))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BurstKeys {
    #[allow(dead_code)]
    kind: IgnoredAny,
    start: Option<Spanned<String>>,
    span: Option<Spanned<String>>,
    count: Option<Spanned<i64>>,
}

/// `kind = "burst"`: `count` requests spread evenly over `[start, start + span)`.
fn burst(entry: &Entry<'_>) -> Result<Traffic, ScenarioError> {
    let keys: BurstKeys = entry.keys()?;
    let start = start(entry, &keys.start)?;
    let count_raw = keys
        .count
        .as_ref()
        .ok_or_else(|| entry.missing("count", "how many requests the burst sends, like 20"))?;
    let count = entry.at_least_one("count", count_raw)?;
    if count > MAX_GENERATED {
        return Err(entry.at(
            count_raw.span(),
            format!(
                "`{}` = {count} is too many: a generated source may produce at most {MAX_GENERATED} requests (use a CSV trace or several runs for more)",
                entry.key("count")
            ),
        ));
    }
    let span = keys.span.as_ref().map(|v| entry.duration_of("span", v)).transpose()?.unwrap_or(Nanos::ZERO);
    if start.checked_add(span).is_none() {
        return Err(
            entry.at(entry.span(), format!("`{}` + `span` is past the end of time", entry.key("start")))
        );
    }
    if let Some(d) = entry.duration()
        && start >= d
    {
        // Arrivals at or after `duration` are dropped: the whole burst would be.
        return Err(entry.at(
            keys.start.as_ref().map_or(entry.span(), |s| s.span()),
            format!(
                "`{}` ({start} s) must be before the scenario's `duration` ({d} s): the run drops every request at or after it, so this burst would send none",
                entry.key("start")
            ),
        ));
    }
    Ok(Traffic::Burst { start, span, count })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConstantKeys {
    #[allow(dead_code)]
    kind: IgnoredAny,
    start: Option<Spanned<String>>,
    end: Option<Spanned<String>>,
    rate: Option<Spanned<f64>>,
    load: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PoissonKeys {
    #[allow(dead_code)]
    kind: IgnoredAny,
    start: Option<Spanned<String>>,
    end: Option<Spanned<String>>,
    rate: Option<Spanned<f64>>,
    load: Option<Spanned<f64>>,
    clients: Option<Spanned<i64>>,
    skew: Option<Spanned<f64>>,
}

/// `kind = "constant"` or `"poisson"`: a rate (or a load, a multiple of
/// `L / W`) over `[start, end)`; Poisson sources may spread their requests
/// over Zipf-distributed `clients`.
fn rate_source(entry: &Entry<'_>, poisson: bool) -> Result<Traffic, ScenarioError> {
    let (keys, clients, skew) = if poisson {
        let k: PoissonKeys = entry.keys()?;
        (
            ConstantKeys { kind: IgnoredAny, start: k.start, end: k.end, rate: k.rate, load: k.load },
            k.clients,
            k.skew,
        )
    } else {
        (entry.keys::<ConstantKeys>()?, None, None)
    };
    let start = start(entry, &keys.start)?;
    let end = match (&keys.end, entry.duration()) {
        (Some(e), _) => entry.duration_of("end", e)?,
        (None, Some(d)) => d,
        (None, None) => {
            return Err(entry.at(
                entry.span(),
                format!("`{}` is required when the scenario has no `duration`", entry.key("end")),
            ));
        }
    };
    ends_after_start(entry, &keys.start, &keys.end, start, end)?;
    let rate = rate(entry, &keys, start, end)?;
    if !poisson {
        return Ok(Traffic::Constant { start, end, rate });
    }
    let clients = clients.as_ref().map(|c| entry.at_least_one("clients", c)).transpose()?;
    let skew_value = match &skew {
        None => 1.0,
        Some(v) if v.get_ref().is_finite() && *v.get_ref() >= 0.0 => *v.get_ref(),
        Some(v) => {
            return Err(entry.at(
                v.span(),
                format!(
                    "`{}` must be a finite number of at least 0, got {}",
                    entry.key("skew"),
                    number(*v.get_ref())
                ),
            ));
        }
    };
    if let (Some(v), None) = (&skew, clients) {
        return Err(entry.at(
            v.span(),
            format!(
                "`{}` needs `clients`: it is the Zipf exponent that spreads the source's requests over its client keys, and the source has none; give it clients = 100 (or any number of clients), or remove `skew`",
                entry.key("skew")
            ),
        ));
    }
    Ok(Traffic::Poisson { start, end, rate, clients: clients.map(|n| (n, skew_value)) })
}

/// Requests per second from `rate` or `load`, checked against the cap on
/// what a generated source may produce over `[start, end)`.
fn rate(entry: &Entry<'_>, keys: &ConstantKeys, start: Nanos, end: Nanos) -> Result<f64, ScenarioError> {
    let limit = entry.limit();
    let (rate, rate_span, rate_key) = match (&keys.rate, &keys.load) {
        (Some(_), Some(l)) => {
            return Err(entry.at(l.span(), format!("give `{}` or `load`, not both", entry.key("rate"))));
        }
        (Some(v), None) => (entry.rate("rate", v)?, v.span(), entry.key("rate")),
        (None, Some(l)) => {
            let load = entry.rate("load", l)?;
            (crate::sweep::load::rate(limit, load), l.span(), entry.key("load"))
        }
        (None, None) => {
            return Err(entry.at(
                entry.span(),
                format!(
                    "`{}` or `load` is required for kind \"{}\": requests per second, like rate = 50.0, or a multiple of the limit's L / W, like load = 0.8",
                    entry.key("rate"),
                    entry.kind()
                ),
            ));
        }
    };
    // Expected requests over [start, end); also catches a load whose rate
    // overflows to infinity or underflows to 0.
    let expected = rate * (end - start).as_secs_f64();
    if !(rate.is_finite() && rate > 0.0) {
        return Err(entry.at(
            rate_span,
            format!(
                "`{rate_key}` gives a rate of {} requests/s: it must be finite and above 0",
                number(rate)
            ),
        ));
    }
    if expected > MAX_GENERATED as f64 {
        return Err(entry.at(
            rate_span,
            format!(
                "`{rate_key}` gives {rate:e} requests/s, about {} requests over [{start} s, {end} s): a generated source may produce at most {} requests",
                about(expected),
                about(MAX_GENERATED as f64)
            ),
        ));
    }
    Ok(rate)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CsvKeys {
    #[allow(dead_code)]
    kind: IgnoredAny,
    path: Option<Spanned<String>>,
    time_unit: Option<Spanned<String>>,
    time_column: Option<Spanned<String>>,
    key_column: Option<Spanned<String>>,
    sort: Option<Spanned<bool>>,
}

/// A source's `end` (its own, or the scenario's `duration`) after its
/// `start`: blamed on the `end` written, else on the `start`.
fn ends_after_start(
    entry: &Entry<'_>,
    start_key: &Option<Spanned<String>>,
    end_key: &Option<Spanned<String>>,
    start: Nanos,
    end: Nanos,
) -> Result<(), ScenarioError> {
    if end > start {
        return Ok(());
    }
    Err(match end_key {
        Some(e) => {
            entry.at(e.span(), format!("`{}` ({end} s) must be after `start` ({start} s)", entry.key("end")))
        }
        None => entry.at(
            start_key.as_ref().map_or(entry.span(), |s| s.span()),
            format!(
                "`{}` ({start} s) must be before the scenario's `duration` ({end} s), where this source ends",
                entry.key("start")
            ),
        ),
    })
}

/// `kind = "csv"`: a recorded trace, its path relative to the scenario.
fn csv(entry: &Entry<'_>) -> Result<Traffic, ScenarioError> {
    let keys: CsvKeys = entry.keys()?;
    let p = keys.path.as_ref().ok_or_else(|| entry.missing("path", "the trace file, like \"trace.csv\""))?;
    if p.get_ref().trim().is_empty() {
        return Err(entry.at(
            p.span(),
            format!("`{}` is empty: give the trace file, like \"trace.csv\"", entry.key("path")),
        ));
    }
    let path = entry.base().join(p.get_ref());
    let what = FileProblem::of(&path).map(|problem| match problem {
        FileProblem::NotRegular => format!("{problem}: save the trace to a file"),
        problem => problem.to_string(),
    });
    if let Some(what) = what {
        return Err(entry.at(
            p.span(),
            format!(
                "`{}`: trace file {} {what} (paths are relative to the scenario file)",
                entry.key("path"),
                plain(&path.display().to_string())
            ),
        ));
    }
    let time_unit = match &keys.time_unit {
        None => TimeUnit::S,
        Some(u) => TimeUnit::parse(u.get_ref())
            .ok_or_else(|| entry.one_of("time_unit", u, &["s", "ms", "us", "ns"]))?,
    };
    // A name that is empty or only spaces matches no column: header names
    // are compared with their spaces trimmed.
    for (key, column) in [("time_column", &keys.time_column), ("key_column", &keys.key_column)] {
        if let Some(c) = column.as_ref().filter(|c| c.get_ref().trim().is_empty()) {
            return Err(entry.at(
                c.span(),
                format!(
                    "`{}` is empty: give the name of a column in the trace's header row, like \"{}\"",
                    entry.key(key),
                    if key == "time_column" { "time" } else { "client" }
                ),
            ));
        }
    }
    let time_column = keys.time_column.as_ref().map_or("time".to_string(), |c| c.get_ref().clone());
    let key_column = keys.key_column.as_ref().map(|c| c.get_ref().clone());
    // One column cannot hold both: every distinct time would be a client
    // of its own, each with a limit of its own, and nothing limited.
    if let Some(k) = keys.key_column.as_ref().filter(|k| k.get_ref().trim() == time_column.trim()) {
        let time = match &keys.time_column {
            Some(_) => format!("`{}`", entry.key("time_column")),
            None => "the time column (`time_column` is not set, and its default is \"time\")".to_string(),
        };
        return Err(entry.at(
            k.span(),
            format!(
                "`{}` = {} is also {time}: the keys would be the times, each request a client of its own with a limit of its own; name the column that holds the client, like key_column = \"client\", or leave `key_column` out for one client",
                entry.key("key_column"),
                string(k.get_ref())
            ),
        ));
    }
    let sort = keys.sort.as_ref().is_some_and(|s| *s.get_ref());
    // Where each key is, for the trace's errors about them.
    let at = |k: &Option<Spanned<String>>| k.as_ref().map(|k| entry.ctx.location(k.span()));
    let keys_at = KeysAt {
        source: entry.table().to_string(),
        path: entry.ctx.location(p.span()),
        time_unit: at(&keys.time_unit),
        time_column: at(&keys.time_column),
        key_column: at(&keys.key_column),
    };
    Ok(Traffic::Csv(CsvOptions { path, time_unit, time_column, key_column, sort, keys_at: Some(keys_at) }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClosedKeys {
    #[allow(dead_code)]
    kind: IgnoredAny,
    clients: Option<Spanned<Whole>>,
    think: Option<Spanned<String>>,
    start: Option<Spanned<String>>,
    end: Option<Spanned<String>>,
}

/// The most clients a closed population may have.
pub const MAX_CLOSED_CLIENTS: u64 = 10_000_000;

/// `kind = "closed"`: a population of clients that wait for each answer.
fn closed(entry: &Entry<'_>) -> Result<Traffic, ScenarioError> {
    let keys: ClosedKeys = entry.keys()?;
    let clients_raw =
        keys.clients.as_ref().ok_or_else(|| entry.missing("clients", "how many clients, like 100"))?;
    let clients = entry.at_least_one_whole("clients", clients_raw)?;
    if clients > i128::from(MAX_CLOSED_CLIENTS) {
        return Err(entry.at(
            clients_raw.span(),
            format!("`{}` = {clients} is too many: a closed population may have at most {MAX_CLOSED_CLIENTS} clients", entry.key("clients")),
        ));
    }
    let clients = clients as u64;
    let think_raw = keys.think.as_ref().ok_or_else(|| {
        entry.missing(
            "think",
            "the mean time a client thinks between an answer and its next request, like \"1s\"",
        )
    })?;
    let think = entry.positive_duration("think", think_raw)?;
    let start = start(entry, &keys.start)?;
    let end = match (&keys.end, entry.duration()) {
        (Some(e), _) => entry.duration_of("end", e)?,
        (None, Some(d)) => d,
        (None, None) => {
            return Err(entry.at(
                entry.span(),
                format!(
                    "`{}` is required when the scenario has no `duration`: a closed population never stops",
                    entry.key("end")
                ),
            ));
        }
    };
    ends_after_start(entry, &keys.start, &keys.end, start, end)?;
    // Each client sends about one request per think time (more if answers
    // come back at once): the same guard as the generated sources'.
    let expected = clients as f64 * (end - start).get() as f64 / think.get() as f64;
    if expected > MAX_GENERATED as f64 {
        return Err(entry.at(
            think_raw.span(),
            format!(
                "`{}` = {} with {clients} client{} over [{start} s, {end} s) is about {} requests: a closed population may send at most {} (think longer, or use fewer clients or a shorter span)",
                entry.key("think"),
                string(think_raw.get_ref()),
                if clients == 1 { "" } else { "s" },
                about(expected),
                about(MAX_GENERATED as f64)
            ),
        ));
    }
    Ok(Traffic::Closed { clients, think, start, end })
}
