//! Scenario files: TOML, read into typed key structs (unknown keys refused)
//! and checked value by value, so every error names file, line, column and
//! key. The top level is validated here; each `[[traffic]]` entry by its
//! source's validator (`traffic.rs`), each `[[limiter]]` entry by its
//! algorithm's own file (`crate::limiter`), the `[sweep]` table in
//! `sweep.rs`; the wording of errors lives in `diagnostics.rs`.

mod diagnostics;
mod entry;
mod nodes;
mod retry;
mod sweep;
mod traffic;

pub use diagnostics::{Counts, FileProblem, Loose, ScenarioError, Whole, max_nesting};
pub use entry::Entry;
pub use nodes::MAX_NODES;
pub use sweep::{MAX_GRID, SweepOptions, default_sweep_problem};
pub use traffic::Traffic;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::IgnoredAny;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::clients::{Backoff, RetryPolicy};
use crate::limiter::{AlgorithmSpec, FixedWindowSpec, Limit, LimiterSpec, RetryAfter, SlotCounterSpec};
use crate::nodes::Topology;
use crate::shown::{about, string};
use crate::time::{Nanos, format_duration};
use diagnostics::Ctx;

/// A scenario that passed every check.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub path: PathBuf,
    pub name: String,
    pub description: Option<String>,
    pub seed: u64,
    /// Arrivals at or after this instant are dropped; the run covers `[0, duration)`.
    pub duration: Option<Nanos>,
    /// Where the scenario sets `duration` (`file:line:column`), for errors
    /// found while a trace is read.
    pub duration_at: Option<String>,
    pub limit: Limit,
    /// Where the scenario sets `limit.window` (`file:line:column`), for
    /// errors found later about what the window is too short for.
    pub window_at: String,
    pub traffic: Vec<Traffic>,
    pub limiters: Vec<LimiterSpec>,
    pub output: OutputOptions,
    /// The `[sweep]` table: run the burst-pair and load sweeps.
    pub sweep: Option<SweepOptions>,
    /// The `[retry]` table: how every source's clients retry a rejection.
    pub retry: Option<RetryPolicy>,
    /// A source's own retry table, if it has one (`traffic[i].retry`).
    pub source_retry: Vec<Option<RetryPolicy>>,
    /// The `[nodes]` table: the nodes every limiter runs on.
    pub nodes: Option<Topology>,
    /// `nodes`, `rtts` or `sync_intervals` in `[sweep]`: reruns of the
    /// scenario with one value of its topology changed.
    pub topology_sweep: Option<crate::sweep::TopologySweep>,
}

/// The `[output]` table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OutputOptions {
    pub bin: Option<Nanos>,
    /// Where the scenario sets `bin` (`file:line:column`): a bin too fine
    /// for a trace with no `duration` is found only while it runs.
    pub bin_at: Option<String>,
    pub decisions: bool,
    /// A TrueType font for chart text in PNGs (for scripts DejaVu lacks).
    pub font: Option<PathBuf>,
    /// Measure and write each limiter's admission curve.
    pub admission_curve: bool,
}

/// The most requests one generated source (burst, constant, poisson,
/// closed) may produce, and all of a scenario's generated sources
/// together: a guard against typos such as `count = 1000000000000`, or a
/// thousand sources, that would run for hours. Recorded traces have no
/// such limit.
pub const MAX_GENERATED: u64 = 1_000_000_000;

/// What [`Scenario::attempts_estimate`] finds: a run's requests and about
/// the most attempts they can make between them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttemptsEstimate {
    pub requests: f64,
    pub attempts: f64,
    /// The largest `max_attempts` of the run's retry policies.
    pub most_per_request: u32,
    /// Retry budgets allow fewer retries than `max_attempts` would.
    pub budget_limited: bool,
    /// A policy has gRPC's retry throttling or the AWS retry quota, which
    /// stop retries as failures mount: the estimate does not count them
    /// (how many they stop depends on the decisions), so it is an upper
    /// bound there.
    pub throttled: Throttled,
}

/// Which of the stops on retries that the estimate does not count a
/// run's policies have: gRPC's retry throttling, the AWS retry quota.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Throttled {
    pub grpc: bool,
    pub quota: bool,
}

impl Throttled {
    /// ", and fewer where gRPC's retry throttling stops retries, which
    /// this does not count" (empty when neither).
    fn clause(self) -> String {
        let which = match (self.grpc, self.quota) {
            (false, false) => return String::new(),
            (true, false) => "gRPC's retry throttling stops",
            (false, true) => "the retry quota stops",
            (true, true) => "gRPC's retry throttling or the retry quota stop",
        };
        format!(", and fewer where {which} retries, which this does not count")
    }
}

impl AttemptsEstimate {
    /// More attempts than [`MAX_GENERATED`], the most requests generated
    /// sources may send: at tens to hundreds of nanoseconds an attempt
    /// for each limiter, such a run takes minutes or hours (its memory
    /// stays bounded).
    pub fn is_large(&self) -> bool {
        self.attempts > MAX_GENERATED as f64
    }

    /// "about 3.6e7 requests, at most 1000 attempts each" (", and fewer
    /// retries where a retry budget runs out" when one does, and where a
    /// throttle or quota stops them when a policy has one).
    fn requests(&self) -> String {
        format!(
            "about {} requests, at most {} attempts each{}{}",
            approx(self.requests),
            self.most_per_request,
            if self.budget_limited { ", and fewer retries where a retry budget runs out" } else { "" },
            self.throttled.clause()
        )
    }

    /// The line `ratesim check` prints: "up to about 3.6e10 in one run
    /// (about 3.6e7 requests, at most 1000 attempts each)".
    pub fn describe(&self) -> String {
        format!("up to about {} in one run ({})", approx(self.attempts), self.requests())
    }

    /// The warning `check` and a run print when [`AttemptsEstimate::is_large`].
    pub fn warning(&self) -> String {
        format!(
            "warning: a run of this scenario may make up to about {} attempts ({}), more than {}, the most requests a scenario's generated sources may send: at tens to hundreds of nanoseconds an attempt for each limiter, it may run for minutes or hours, though its memory stays bounded. A smaller `max_attempts`, a retry `budget` or fewer requests lowers it.",
            approx(self.attempts),
            self.requests(),
            // In the estimate's notation: "about 3.6e10 ... more than 1e9".
            about(MAX_GENERATED as f64)
        )
    }
}

/// A count for `check`: whole from 1 to a million (`13.5` -> "14"), then to
/// 3 digits (`3.6e10`); under 1 to 2 decimals (`0.25`).
pub(crate) fn approx(x: f64) -> String {
    if x < 1.0 {
        format!("{x:.2}")
    } else if x < 1e6 {
        format!("{}", x.round())
    } else {
        about(x)
    }
}

/// The longest scenario `name`, in bytes (UTF-8). The name names the
/// output folder, `<name>` or `<name>-sweeps`, and its staging folder
/// beside it, `.<name>-sweeps.tmp-<pid>-<random>.old` at the longest (a
/// pid of up to 10 digits, 6 random characters): 200 bytes leave that
/// within the 255 bytes a file name may have on common file systems.
pub const MAX_NAME_BYTES: usize = 200;

/// The most `[[traffic]]` entries a scenario may have: each request
/// carries its source's index in 16 bits (`trace::Arrival::source`), which
/// picks the source's retry policy.
pub const MAX_SOURCES: usize = 1 << 16;

/// The most limiters (lanes) a scenario may compare, counting each slot
/// count of a `slots` list and each burst of a `burst` list as one: each
/// lane keeps its own fixed state (its timeline, counters and metrics,
/// some 100 KB) that `--memory` does not count, and 50 000 slot counters
/// once took 5.4 GB under `--memory 64MiB`. 256 is far more than a chart
/// or a table can show apart.
pub const MAX_LIMITERS: usize = 256;

// ---- the top level ---------------------------------------------------------

/// The top-level keys. `[[traffic]]` and `[[limiter]]` entries are only
/// checked to be arrays of tables here; their keys belong to their kinds.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Spanned<String>,
    description: Option<String>,
    seed: Option<Spanned<i64>>,
    duration: Option<Spanned<String>>,
    limit: Spanned<RawLimit>,
    #[serde(default)]
    traffic: Vec<Spanned<IgnoredAny>>,
    /// Read from the document by [`entries`]; here only its shape is checked.
    #[serde(default)]
    #[allow(dead_code)]
    limiter: Vec<Spanned<IgnoredAny>>,
    #[serde(default)]
    output: RawOutput,
    sweep: Option<Spanned<sweep::RawSweep>>,
    retry: Option<Spanned<retry::RawRetry>>,
    nodes: Option<Spanned<nodes::RawNodes>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimit {
    requests: Spanned<i64>,
    window: Spanned<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawOutput {
    bin: Option<Spanned<String>>,
    #[serde(default)]
    decisions: bool,
    font: Option<Spanned<String>>,
    #[serde(default)]
    admission_curve: bool,
}

/// The `kind` every entry of an array of tables must have.
#[derive(Deserialize)]
struct Kind {
    kind: Spanned<String>,
}

impl diagnostics::TableName for Kind {
    const STRUCT: &'static str = "Kind";
}

impl Scenario {
    /// Reads and validates a scenario file. Trace paths are relative to it.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        use std::io::Read;
        // Opening a FIFO waits for a writer, forever if none comes: a pipe
        // or a socket is refused unopened. (A device is read like a file,
        // up to the size limit: `/dev/zero` stops there.)
        if let Some(kind) = pipe_or_socket(path) {
            return Err(ScenarioError::NotAFile { path: path.to_path_buf(), kind });
        }
        let read = |source| ScenarioError::Read { path: path.to_path_buf(), source };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(diagnostics::MAX_SCENARIO_BYTES + 1).read_to_end(&mut bytes))
            .map_err(read)?;
        if bytes.len() as u64 > diagnostics::MAX_SCENARIO_BYTES {
            return Err(ScenarioError::TooLarge { path: path.to_path_buf() });
        }
        let text = String::from_utf8(bytes)
            .map_err(|e| diagnostics::not_utf8(path, e.as_bytes(), e.utf8_error()))?;
        Scenario::parse(&text, path)
    }

    /// Validates scenario text; `path` names it in errors and anchors trace paths.
    pub fn parse(text: &str, path: &Path) -> Result<Scenario, ScenarioError> {
        // A byte order mark is no part of the TOML: lines and columns are
        // counted from the first character after it, as an editor shows them.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let ctx = Ctx { path, text };
        let doc = DeTable::parse(text).map_err(|e| ctx.syntax(&e))?;
        if doc.get_ref().is_empty() {
            // Not "missing field `name`": nothing at all is there.
            let needs = "a scenario needs at least a `name`, a [limit] table with `requests` and `window`, \
                 and a [[traffic]] source (or a [sweep] table), like: name = \"t\", then [limit] with \
                 requests = 10 and window = \"1s\", then [[traffic]] with kind = \"burst\" and count = 20 \
                 (scenarios/ has complete examples)";
            // The parser skips a byte order mark at the start too: a
            // second one, after ours, is there and invisible, so it is named.
            if let Some(rest) = text.strip_prefix('\u{feff}') {
                let what = if rest.trim().is_empty() {
                    "the file is empty but for a second byte order mark"
                } else {
                    "the file has no keys, only comments and blank lines, after a second byte order mark"
                };
                return Err(ctx.at(0..0, format!("{what} ({}): {needs}", diagnostics::BOM)));
            }
            let what = if text.trim().is_empty() {
                "the file is empty"
            } else {
                "the file has no keys, only comments and blank lines"
            };
            return Err(ctx.file(format!("{what}: {needs}")));
        }
        let raw =
            RawScenario::deserialize(toml::de::Deserializer::from(doc.clone())).map_err(|e| ctx.toml(&e))?;
        let (name, seed, duration, limit) = header(&ctx, &raw)?;
        if raw.traffic.is_empty() && raw.sweep.is_none() {
            return Err(ctx.file(
                "no [[traffic]] source and no [sweep]: add a source (kind = \"burst\", \"constant\", \"poisson\", \"csv\" or \"closed\") or a [sweep] table",
            ));
        }
        if let Some(extra) = raw.traffic.get(MAX_SOURCES) {
            return Err(ctx.at(
                extra.span(),
                format!(
                    "`traffic[{MAX_SOURCES}]`: a scenario may have at most {MAX_SOURCES} [[traffic]] entries \
                     (each request carries its source's number in 16 bits): merge sources into fewer, such as \
                     one CSV trace"
                ),
            ));
        }
        let retry =
            raw.retry.as_ref().map(|r| retry::validate(&ctx, "retry", r.span(), r.get_ref())).transpose()?;
        let mut traffic = Vec::new();
        let mut source_retry = Vec::new();
        let mut closed_clients = 0u64;
        // About how many requests the generated sources send, all together.
        let mut generated = 0f64;
        // Every retry table's place, for errors about the policies they hold.
        let mut retry_spans = vec![raw.retry.as_ref().map_or(0..0, |r| r.span())];
        for (i, (mut entry, kind)) in
            entries(&ctx, doc.get_ref(), "traffic", limit, duration, &["retry"], false)?
                .into_iter()
                .enumerate()
        {
            let own = entry.take::<retry::RawRetry>("retry")?;
            retry_spans.push(own.as_ref().map_or(0..0, |r| r.span()));
            source_retry.push(
                own.map(|r| {
                    retry::validate(entry.ctx, &format!("traffic[{i}].retry"), r.span(), r.get_ref())
                })
                .transpose()?,
            );
            let source = traffic::parse(&entry, &kind)?;
            if let Traffic::Closed { clients, .. } = source {
                closed_clients += clients;
                if closed_clients > traffic::MAX_CLOSED_CLIENTS {
                    return Err(entry.at(
                        entry.span(),
                        format!(
                            "the closed populations have {closed_clients} clients in all up to `traffic[{i}]`: a scenario may have at most {} closed clients",
                            traffic::MAX_CLOSED_CLIENTS
                        ),
                    ));
                }
            }
            // Each source is within the guard; so must all of them be.
            generated += source.expected_requests().unwrap_or(0.0);
            if generated > MAX_GENERATED as f64 {
                return Err(entry.at(
                    entry.span(),
                    format!(
                        "the generated sources send about {} requests in all up to `traffic[{i}]`: a scenario's generated sources may produce at most {} requests together (use a CSV trace, or several runs, for more)",
                        about(generated),
                        about(MAX_GENERATED as f64)
                    ),
                ));
            }
            traffic.push(source);
        }
        let mut limiters = Vec::new();
        // Each spec's entry, named, and where it is: for the sweep's guard.
        let mut limiter_at: Vec<(String, std::ops::Range<usize>)> = Vec::new();
        let node_defaults = raw.nodes.as_ref().is_some_and(|n| n.get_ref().is_local())
            || raw.sweep.as_ref().is_some_and(|s| s.get_ref().nodes.is_some());
        let limiter_entries =
            entries(&ctx, doc.get_ref(), "limiter", limit, duration, &["retry_after"], node_defaults)?;
        // The first header rounding written (not "exact"): its key, value
        // and place, for the check that some client reads it.
        let mut rounded: Option<(String, Spanned<String>)> = None;
        for (mut entry, kind) in limiter_entries {
            let header = entry.take::<String>("retry_after")?;
            let retry_after = match &header {
                None => RetryAfter::Exact,
                Some(v) => RetryAfter::parse(v.get_ref())
                    .ok_or_else(|| entry.one_of("retry_after", v, &RetryAfter::NAMES))?,
            };
            let specs = match AlgorithmSpec::parse(kind.get_ref(), &entry) {
                Some(specs) => specs?,
                None => return Err(entry.one_of("kind", &kind, &LimiterSpec::kinds())),
            };
            if let Some(v) = &header
                && let Some(silent) = specs.iter().find(|s| !s.describe().advertises_retry())
            {
                return Err(entry.at(
                    v.span(),
                    format!(
                        "`{}`: `{}` never names a time to retry (it sends no Retry-After header), so there is nothing to round: leave the key out",
                        entry.key("retry_after"),
                        silent.describe().label()
                    ),
                ));
            }
            if retry_after != RetryAfter::Exact && rounded.is_none() {
                rounded = header.map(|v| (entry.key("retry_after"), v));
            }
            let named = (format!("`{}` ({})", entry.table(), kind.get_ref()), entry.span());
            if limiters.len() + specs.len() > MAX_LIMITERS {
                return Err(entry.at(
                    entry.span(),
                    format!(
                        "{} brings the limiters to {} (each slot count or burst of a list is one): a scenario may compare at most {MAX_LIMITERS}; split it into several scenarios",
                        named.0,
                        limiters.len() + specs.len()
                    ),
                ));
            }
            limiter_at.extend(std::iter::repeat_n(named, specs.len()));
            limiters.extend(specs.into_iter().map(|algorithm| LimiterSpec { algorithm, retry_after }));
        }
        let window_span = raw.limit.get_ref().window.span();
        let sweep = raw
            .sweep
            .as_ref()
            .map(|s| sweep::validate(&ctx, s.span(), s.get_ref(), limit, window_span.clone()))
            .transpose()?;
        if let Some(swept) = sweep.as_ref().filter(|s| s.window_sweeps) {
            // The burst-pair sweep decides every request of both bursts for
            // a limiter whose bursts do not scale with L: a large L there
            // would run for days.
            let named: Vec<(String, LimiterSpec)> =
                limiter_at.iter().map(|(n, _)| n.clone()).zip(limiters.iter().cloned()).collect();
            if let Some((i, problem)) = crate::sweep::burst_pair::work_problem(limit, swept.grid, &named) {
                return Err(ctx.at(limiter_at[i].1.clone(), problem));
            }
        }
        if limiters.is_empty() {
            // The burst-pair and load sweeps compare many slot counts.
            let for_sweep = sweep.as_ref().is_some_and(|s| s.window_sweeps);
            limiters = if for_sweep { crate::sweep::default_limiters() } else { default_limiters() };
            too_short_for_default_slots(&ctx, window_span.clone(), limit, &limiters, for_sweep)?;
        }
        if let Some(swept) = sweep.as_ref().filter(|s| s.window_sweeps) {
            let raw = raw.sweep.as_ref().expect("a validated [sweep]");
            match crate::sweep::work_problem(limit, swept, &limiters, "compare fewer limiters") {
                None => {}
                Some(crate::sweep::TooMuchWork::BurstPairs(m)) => {
                    return Err(ctx.at(raw.get_ref().grid_span().unwrap_or(raw.span()), m));
                }
                Some(crate::sweep::TooMuchWork::Loads(m)) => {
                    return Err(ctx.at(raw.get_ref().loads_span().unwrap_or(raw.span()), m));
                }
            }
        }
        if let (Some(n), Some(raw)) = (sweep.as_ref().and_then(|s| s.seeds), raw.sweep.as_ref()) {
            let at = raw.get_ref().seeds_span().expect("a validated `seeds`");
            seed_sweep_problem(&traffic, &limiters, seed, n, "`seed`", &format!("`seed` = {seed}"))
                .map_or(Ok(()), |problem| Err(ctx.at(at, problem)))?;
        }
        let mut policies: Vec<(std::ops::Range<usize>, Option<RetryPolicy>)> =
            retry_spans.into_iter().zip(std::iter::once(retry).chain(source_retry.iter().copied())).collect();
        if let Some(swept) = &sweep {
            let spans = raw.sweep.as_ref().and_then(|s| s.get_ref().retry_policies.as_ref());
            let spans = spans.map(|l| l.get_ref().iter().map(|t| t.span()).collect()).unwrap_or(Vec::new());
            retry::swept(&ctx, spans.first().cloned(), &traffic, &policies)?;
            policies.extend(spans.into_iter().zip(swept.retry_policies.iter().map(|p| Some(*p))));
        }
        follows_headers(&ctx, &policies, &limiters)?;
        if let Some((key, v)) = rounded {
            let runs = (0..traffic.len()).map(|i| source_retry[i].or(retry));
            let swept = sweep.iter().flat_map(|s| &s.retry_policies).map(|p| Some(*p));
            if !runs.chain(swept).any(|p| p.is_some_and(|p| p.retries())) {
                return Err(ctx.at(v.span(), header_read_by_no_client(&key, v.get_ref())));
            }
        }
        let nodes = match &raw.nodes {
            None => None,
            Some(n) => {
                let c = nodes::Context { limit, traffic: &traffic, limiters: &limiters, duration };
                Some((nodes::validate(&ctx, n.span(), n.get_ref(), &c)?, n.span()))
            }
        };
        let topology_sweep = match &raw.sweep {
            None => None,
            Some(s) => {
                let c = sweep::TopologyContext {
                    limit,
                    nodes: nodes.as_ref().map(|((t, rule), span)| (t, *rule, span.clone())),
                    has_traffic: !traffic.is_empty(),
                };
                sweep::validate_topology(&ctx, s.get_ref(), &c)?
            }
        };
        let nodes = nodes.map(|((t, _), _)| t);
        // An explicit bin is held to fewer bins when the timelines hold
        // many columns (limiters, and nodes of limiters on nodes).
        let columns = crate::engine::timeline_columns(&limiters, nodes.as_ref().map(|t| t.count));
        let output = output(&ctx, &raw.output, duration, &traffic, columns)?;
        Ok(Scenario {
            path: path.to_path_buf(),
            name,
            // Shown on the terminal, in report.md and in chart titles:
            // what would not print as itself (an escape sequence, a
            // right-to-left override) is escaped once, here.
            description: raw.description.as_deref().map(|d| crate::shown::escape(d).into_owned()),
            seed,
            duration,
            duration_at: raw.duration.as_ref().map(|d| ctx.location(d.span())),
            limit,
            window_at: ctx.location(window_span),
            traffic,
            limiters,
            output,
            sweep,
            retry,
            source_retry,
            nodes,
            topology_sweep,
        })
    }

    /// The files a run of this scenario reads, each with what it is: the
    /// scenario file, its CSV traces and its chart font.
    pub fn inputs(&self) -> Vec<(PathBuf, String)> {
        let mut inputs = vec![(self.path.clone(), "the scenario file".to_string())];
        for (i, t) in self.traffic.iter().enumerate() {
            if let Traffic::Csv(opts) = t {
                inputs.push((opts.path.clone(), format!("the trace of `traffic[{i}]`")));
            }
        }
        if let Some(font) = &self.output.font {
            inputs.push((font.clone(), "the chart font of `output.font`".to_string()));
        }
        inputs
    }

    /// About how many attempts one run can make at most, from the settings
    /// alone: every request's first attempt, plus up to `max_attempts - 1`
    /// retries each, where retries under a retry budget number at most the
    /// tokens their sources' first attempts earn together (a retry spends a
    /// token, and only first attempts of a source with a budget earn them;
    /// sources that share a key share their tokens, so the budgets are
    /// summed over sources, not applied to each). Requests are counted
    /// exactly for a burst and for the CSV sources (`trace_rows`, in order:
    /// a run does not know them before reading), and as the guard's
    /// expectation for a Poisson or closed source, so for those this is an
    /// estimate, not a bound. With `[sweep] retry_policies`, the largest
    /// over its runs. `None` when no source retries: then a run's attempts
    /// are its requests, which [`MAX_GENERATED`] already bounds.
    pub fn attempts_estimate(&self, trace_rows: &[u64]) -> Option<AttemptsEstimate> {
        let mut rows = trace_rows.iter();
        let requests: Vec<f64> = self
            .traffic
            .iter()
            .map(|t| t.expected_requests().unwrap_or_else(|| rows.next().map_or(0.0, |&r| r as f64)))
            .collect();
        let token = f64::from(crate::clients::policy::TOKEN);
        let run = |policy: &dyn Fn(usize) -> Option<RetryPolicy>| {
            let (mut free, mut budgeted, mut tokens) = (0.0, 0.0, 0.0);
            let mut most_per_request = 1;
            let mut throttled = Throttled::default();
            for (i, &r) in requests.iter().enumerate() {
                let Some(p) = policy(i).filter(|p| p.backoff != Backoff::None) else { continue };
                most_per_request = most_per_request.max(p.max_attempts);
                throttled.grpc |= p.throttle.is_some();
                throttled.quota |= p.retry_quota.is_some();
                let retries = r * f64::from(p.max_attempts - 1);
                match p.budget {
                    None => free += retries,
                    Some(b) => {
                        budgeted += retries;
                        tokens += r * f64::from(b) / token;
                    }
                }
            }
            let first: f64 = requests.iter().sum();
            AttemptsEstimate {
                requests: first,
                // A retry spends a whole token: at most the tokens' floor
                // (over all keys together, at least the sum of each key's).
                attempts: first + free + budgeted.min(tokens.floor()),
                most_per_request,
                budget_limited: tokens < budgeted,
                throttled,
            }
        };
        let mut runs = vec![run(&|i| self.source_retry.get(i).copied().flatten().or(self.retry))];
        for p in self.sweep.iter().flat_map(|s| &s.retry_policies) {
            runs.push(run(&|_| Some(*p)));
        }
        // The largest; on a tie the first (the scenario's own run before
        // the sweep's), so that the line matches the `retry` one above it.
        runs.into_iter()
            .filter(|e| e.most_per_request > 1)
            .reduce(|a, b| if b.attempts > a.attempts { b } else { a })
    }

    /// How the clients retry: the `[retry]` table, then each source's own
    /// (`[i] ...`); empty when nothing retries.
    pub fn retry_descriptions(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(p) = &self.retry {
            out.push(p.describe());
        }
        for (i, own) in self.source_retry.iter().enumerate() {
            if let Some(p) = own {
                out.push(format!("[{i}] {}", p.describe()));
            }
        }
        out
    }

    /// `retry_descriptions` as `ratesim check` and a run's header print
    /// them, the first line headed `retry`.
    pub fn retry_lines(&self) -> Vec<String> {
        self.retry_descriptions()
            .into_iter()
            .enumerate()
            .map(|(n, l)| format!("{} {l}", if n == 0 { "retry    " } else { "         " }))
            .collect()
    }

    /// The closed populations, like "100 closed clients thinking 1s on
    /// average"; empty when there are none.
    pub fn closed_populations(&self) -> Vec<String> {
        self.traffic
            .iter()
            .filter_map(|t| match t {
                Traffic::Closed { clients, think, .. } => {
                    Some(format!("{clients} closed clients thinking {} on average", format_duration(*think)))
                }
                _ => None,
            })
            .collect()
    }

    /// For `report.md`: who the clients are and how they retry, or `None`
    /// when nobody retries and no population is closed.
    pub fn clients_sentence(&self) -> Option<String> {
        let mut parts = Vec::new();
        let closed = self.closed_populations();
        if !closed.is_empty() {
            parts.push(format!("Clients: {}.", closed.join("; ")));
        }
        let retry = self.retry_descriptions();
        if !retry.is_empty() {
            parts.push(format!("Retry: {}.", retry.join("; ")));
        }
        (!parts.is_empty()).then(|| parts.join(" "))
    }

    /// `--slots`: one `slot_counter` per count in place of the scenario's
    /// slot counters (where the first was), or added before the sliding log
    /// when the scenario has none.
    pub fn set_slots(&mut self, slots: &[u64]) -> Result<(), SlotsOutOfRange> {
        let window = self.limit.window.get();
        if let Some(&slots) = slots.iter().find(|&&n| n == 0 || n > window) {
            return Err(SlotsOutOfRange::Count { slots, window });
        }
        // A window past 292 years holds more: a count is still an i64, as
        // in the scenario's `slots`.
        if let Some(&slots) = slots.iter().find(|&&n| n > i64::MAX as u64) {
            return Err(SlotsOutOfRange::TooLarge { slots });
        }
        let others = self.limiters.iter().filter(|l| l.slots().is_none()).count();
        if others + slots.len() > MAX_LIMITERS {
            return Err(SlotsOutOfRange::TooMany { limiters: others + slots.len() });
        }
        let is_slots = |l: &LimiterSpec| l.slots().is_some();
        let mut limiters = self.limiters.clone();
        let insert_at = limiters.iter().position(is_slots).unwrap_or_else(|| {
            let reference = LimiterSpec::reference();
            limiters.iter().position(|l| l.algorithm() == reference.algorithm()).unwrap_or(limiters.len())
        });
        limiters.retain(|l| !is_slots(l));
        let insert_at = insert_at.min(limiters.len());
        for (k, &n) in slots.iter().enumerate() {
            limiters.insert(insert_at + k, SlotCounterSpec { slots: n }.into());
        }
        if let Some(swept) = self.sweep.as_ref().filter(|s| s.window_sweeps)
            && let Some(problem) =
                crate::sweep::work_problem(self.limit, swept, &limiters, "give --slots fewer slot counts")
        {
            return Err(SlotsOutOfRange::SweepWork(problem.message()));
        }
        if let Some(n) = self.sweep.as_ref().and_then(|s| s.seeds) {
            let lanes = crate::engine::with_reference(&limiters).0.len();
            let requests = crate::sweep::work::rerun_requests(&self.traffic, None);
            if let Some(problem) = crate::sweep::seeds::work_problem(
                requests,
                lanes,
                n,
                SEED_SWEEP_COUNTED,
                "give --slots fewer slot counts",
            ) {
                return Err(SlotsOutOfRange::SweepWork(format!("{}: {problem}", self.seeds_at())));
            }
        }
        self.limiters = limiters;
        Ok(())
    }

    /// `--seed`: the scenario's `seed` replaced, the seed sweep's seeds
    /// from it on (`[sweep] seeds`) still within what a `seed` can be.
    pub fn set_seed(&mut self, seed: u64) -> Result<(), String> {
        if let Some(n) = self.sweep.as_ref().and_then(|s| s.seeds) {
            let count = format!("`sweep.seeds` = {n} ({})", self.seeds_at());
            if let Some(problem) =
                crate::sweep::seeds::overflow_problem(seed, n, &format!("--seed {seed}"), &count, "--seed")
            {
                return Err(problem);
            }
        }
        self.seed = seed;
        Ok(())
    }

    /// Where `[sweep] seeds` is set, for messages about it.
    fn seeds_at(&self) -> &str {
        self.sweep.as_ref().and_then(|s| s.seeds_at.as_deref()).unwrap_or("[sweep]")
    }

    /// What a run of the scenario draws at random, so that another seed
    /// may change its figures, in words: a Poisson source's arrivals (and
    /// its client keys), closed clients' think times, retry waits with
    /// jitter (`full_jitter`, `equal_jitter`, `decorrelated`, `retry_after`
    /// with a `jitter`), random balancing across nodes. Empty when nothing
    /// is: bursts, constant rates, CSV traces and every limiter are the
    /// same at every seed.
    pub fn random_draws(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        let poisson = |keys: bool| {
            self.traffic
                .iter()
                .any(|t| matches!(t, Traffic::Poisson { clients, .. } if clients.is_some() == keys))
        };
        if poisson(false) || poisson(true) {
            out.push("Poisson arrivals");
        }
        if poisson(true) {
            out.push("their client keys");
        }
        if self.traffic.iter().any(|t| matches!(t, Traffic::Closed { .. })) {
            out.push("closed clients' think times");
        }
        if self.retry.iter().chain(self.source_retry.iter().flatten()).any(|p| p.draws()) {
            out.push("retry jitter");
        }
        if self.nodes.as_ref().is_some_and(|t| t.balance == crate::nodes::Balance::Random) {
            out.push("the node each request goes to");
        }
        out
    }

    /// What `check` (and a run not `--quiet`) warns of when the scenario
    /// asks for a seed sweep but draws nothing at random
    /// ([`Scenario::random_draws`]): every seed would give the same
    /// figures.
    pub fn seeds_warning(&self) -> Option<String> {
        let n = self.sweep.as_ref().and_then(|s| s.seeds)?;
        self.random_draws().is_empty().then(|| {
            format!(
                "warning: {}: `sweep.seeds` = {n} reruns the scenario with {n} seeds, but it draws nothing at random \
(no Poisson source, no closed clients, no retries with jitter, no random balancing across nodes): every seed \
will give the same figures, and seed_sweep.md will say so; leave `seeds` out, or make the traffic random",
                self.seeds_at()
            )
        })
    }
}

/// How the seed sweep's bound counts a run's requests before it runs
/// ([`crate::sweep::work::rerun_requests`]).
pub const SEED_SWEEP_COUNTED: &str =
    "its sources' expected requests; a CSV trace's rows and retries not counted";

/// Why the seed sweep of `count` seeds from `seed` cannot run, if it
/// cannot: no traffic to rerun, a last seed past what a `seed` can hold
/// (`which` and `given` name the first seed as set), or too much work.
fn seed_sweep_problem(
    traffic: &[Traffic],
    limiters: &[LimiterSpec],
    seed: u64,
    count: u32,
    which: &str,
    given: &str,
) -> Option<String> {
    if traffic.is_empty() {
        return Some(
            "`sweep.seeds` reruns the scenario's own traffic with each seed, but it has no [[traffic]] source: add one"
                .to_string(),
        );
    }
    let count_given = format!("`sweep.seeds` = {count}");
    crate::sweep::seeds::overflow_problem(seed, count, given, &count_given, which).or_else(|| {
        let lanes = crate::engine::with_reference(limiters).0.len();
        let requests = crate::sweep::work::rerun_requests(traffic, None);
        crate::sweep::seeds::work_problem(
            requests,
            lanes,
            count,
            SEED_SWEEP_COUNTED,
            "compare fewer limiters",
        )
    })
}

/// What `--slots` asks for that the scenario cannot have: a slot count its
/// window cannot hold (a slot is at least 1 ns, and there is at least
/// one), or more limiters than a run may compare.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SlotsOutOfRange {
    #[error(
        "slot count {slots} is out of range: it must be between 1 and the window length in nanoseconds ({window})"
    )]
    Count {
        slots: u64,
        /// The window length in ns.
        window: u64,
    },
    /// Within the window but past what a count may be (`i64::MAX`).
    #[error("slot count {slots} is too large: expected a whole number up to {}", i64::MAX)]
    TooLarge { slots: u64 },
    /// More limiters than a scenario may compare ([`MAX_LIMITERS`]).
    #[error(
        "the limiters would come to {limiters} with these slot counts: a run may compare at most {MAX_LIMITERS}"
    )]
    TooMany { limiters: usize },
    /// The scenario's burst-pair sweep would decide too many requests over
    /// all its rows with these slot counters
    /// ([`crate::sweep::burst_pair::total_work_problem`]).
    #[error("{0}")]
    SweepWork(String),
}

/// A slot is at least 1 ns: the default limiters' slot counters (N up to
/// 100, or up to 1000 for the sweeps) need a window of at least N ns. A
/// short window is refused at `limit.window`, saying which default needs
/// more and how to choose limiters that fit.
fn too_short_for_default_slots(
    ctx: &Ctx,
    window_span: std::ops::Range<usize>,
    limit: Limit,
    defaults: &[LimiterSpec],
    for_sweep: bool,
) -> Result<(), ScenarioError> {
    let w = limit.window.get();
    let Some(n) = defaults.iter().filter_map(|l| l.slots()).max().filter(|&n| n > w) else { return Ok(()) };
    let labels: Vec<String> = defaults.iter().map(|l| l.label()).collect();
    let runs = if for_sweep { "its [sweep] compares" } else { "a scenario runs" };
    Err(ctx.at(
        window_span,
        format!(
            "`limit.window` = {} is too short for the default `slot_counter(N={n})`: its {n} slots need a window of at least {n} ns (a slot is at least 1 ns). With no [[limiter]] table {runs} {}: name the [[limiter]]s to run (slot counters of at most {w} slots), or make the window at least {}",
            format_duration(limit.window),
            labels.join(", "),
            format_duration(Nanos::new(n)),
        ),
    ))
}

/// Clients that follow the `Retry-After` header need limiters that send
/// one. `policies`: every retry table with its place in the file.
fn follows_headers(
    ctx: &Ctx,
    policies: &[(std::ops::Range<usize>, Option<RetryPolicy>)],
    limiters: &[LimiterSpec],
) -> Result<(), ScenarioError> {
    let follows = policies.iter().find(|(_, p)| p.is_some_and(|p| p.backoff == Backoff::RetryAfter));
    let (Some((span, _)), Some(l)) = (follows, limiters.iter().find(|l| !l.advertises_retry())) else {
        return Ok(());
    };
    Err(ctx.at(
        span.clone(),
        format!(
            "policy = \"retry_after\" follows each limiter's Retry-After header, but `{}` sends none: use another policy, or other limiters",
            l.label()
        ),
    ))
}

/// A limiter's `retry_after` (`key`) rounds its Retry-After header to
/// `value`, but no client of the scenario retries: the header is read
/// only to time a retry (and to count the retries sent at or after it),
/// so the rounding would change nothing but the limiter's label.
fn header_read_by_no_client(key: &str, value: &str) -> String {
    format!(
        "`{key}` = {} has no effect: no client retries, so none reads the Retry-After header (a client reads it only to time a retry); leave the key out, or give the clients a policy that retries: a [retry] or [traffic.retry] table, or a [sweep] retry_policies entry, with a policy other than \"none\" and `max_attempts` of 2 or more",
        string(value)
    )
}

/// Whether a scenario `name` may name its output folder (`output/<name>`):
/// letters (of any script), digits, `-` and `_`, as the error says; so no
/// spaces, dots or separators, and nothing a shell or file system treats
/// specially.
pub fn is_folder_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_')
}

/// `name`, `seed`, `duration` and `[limit]`, validated.
fn header(ctx: &Ctx, raw: &RawScenario) -> Result<(String, u64, Option<Nanos>, Limit), ScenarioError> {
    let name = raw.name.get_ref().trim().to_string();
    if !is_folder_name(&name) {
        return Err(ctx.at(
            raw.name.span(),
            format!(
                "`name` = {} cannot name an output folder: use letters, digits, `-` or `_`",
                string(raw.name.get_ref())
            ),
        ));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(ctx.at(
            raw.name.span(),
            format!(
                "`name` = {} is too long: it names the output folder (output/<name>, and a staging folder .<name>.tmp-<pid>-<random> beside it), which must fit in the 255 bytes a file name may have, so a name may have at most {MAX_NAME_BYTES} bytes: give a shorter `name`",
                string(&name)
            ),
        ));
    }
    let seed = match &raw.seed {
        None => 0,
        Some(s) if *s.get_ref() < 0 => {
            return Err(ctx.at(s.span(), format!("`seed` must be 0 or more, got {}", s.get_ref())));
        }
        Some(s) => *s.get_ref() as u64,
    };
    let duration = raw.duration.as_ref().map(|d| ctx.positive_duration("duration", d)).transpose()?;
    let limit_raw = raw.limit.get_ref();
    let requests = ctx.at_least_one("limit.requests", &limit_raw.requests)?;
    let window = ctx.positive_duration("limit.window", &limit_raw.window)?;
    Ok((name, seed, duration, Limit { requests, window }))
}

/// The entries of the array of tables `table` (`traffic`, `limiter`), each
/// with its `kind`; `common` keys are taken by every kind of the table;
/// `node_defaults`: see [`Entry::node_defaults`].
fn entries<'a>(
    ctx: &'a Ctx<'a>,
    doc: &DeTable<'a>,
    table: &str,
    limit: Limit,
    duration: Option<Nanos>,
    common: &'static [&'static str],
    node_defaults: bool,
) -> Result<Vec<(Entry<'a>, Spanned<String>)>, ScenarioError> {
    let Some(DeValue::Array(items)) = doc.get(table).map(|v| v.get_ref()) else { return Ok(Vec::new()) };
    items
        .iter()
        .enumerate()
        .map(|(i, value)| {
            // A table only: a list read as one would take its first item
            // for the kind ("`traffic`: expected a string, found ...").
            let kind =
                diagnostics::OnlyTable::<Kind>::deserialize(toml::de::ValueDeserializer::from(value.clone()))
                    .map_err(|e| ctx.toml(&e))?
                    .0
                    .kind;
            let entry = Entry {
                ctx,
                value: value.clone(),
                table: format!("{table}[{i}]"),
                kind: kind.get_ref().clone(),
                limit,
                duration,
                common,
                node_defaults,
            };
            Ok((entry, kind))
        })
        .collect()
}

/// The latest instant a generated source may send a request, and whether
/// it surely sends one then (a burst's last request) rather than perhaps
/// (up to the end of a rate or a closed population). `None` for a trace,
/// which is known only once read.
fn last_request(t: &Traffic) -> Option<(Nanos, bool)> {
    match *t {
        Traffic::Burst { start, span, count } => {
            let offset =
                u128::from(count.saturating_sub(1)) * u128::from(span.get()) / u128::from(count.max(1));
            Some((Nanos::new(start.get().saturating_add(offset as u64)), true))
        }
        Traffic::Constant { end, .. } | Traffic::Poisson { end, .. } | Traffic::Closed { end, .. } => {
            Some((Nanos::new(end.get().saturating_sub(1)), false))
        }
        Traffic::Csv(_) => None,
    }
}

/// The `[output]` table, validated.
fn output(
    ctx: &Ctx,
    raw: &RawOutput,
    duration: Option<Nanos>,
    traffic: &[Traffic],
    columns: u64,
) -> Result<OutputOptions, ScenarioError> {
    let max = crate::timeline::max_bins(columns);
    let why = crate::timeline::cells_note(max, columns);
    let base = ctx.path.parent().unwrap_or(Path::new("."));
    let font = match &raw.font {
        None => None,
        Some(f) if f.get_ref().trim().is_empty() => {
            return Err(ctx.at(
                f.span(),
                "`output.font` is empty: give a TrueType or OpenType font file, like \"NotoSansSC-Regular.otf\", or leave the key out for the embedded DejaVu Sans",
            ));
        }
        Some(f) => {
            let p = base.join(f.get_ref());
            if let Err(problem) = crate::font::read_font(&p) {
                return Err(ctx.at(
                    f.span(),
                    format!("`output.font`: {problem} (paths are relative to the scenario file)"),
                ));
            }
            Some(p)
        }
    };
    let bin = raw.bin.as_ref().map(|b| ctx.positive_duration("output.bin", b)).transpose()?;
    if let (Some(b), Some(bin), Some(d)) = (&raw.bin, bin, duration) {
        // The engine would refuse this at the first arrival; say so now.
        let bins = (d.get() - 1) / bin.get() + 1;
        if bins > max {
            return Err(ctx.at(
                b.span(),
                format!(
                    "`output.bin` = {} cuts the {} run into {bins} bins; the most is {max}{why}: choose a wider `bin`",
                    string(b.get_ref()),
                    format_duration(d),
                ),
            ));
        }
    }
    if let (Some(b), Some(bin), None) = (&raw.bin, bin, duration) {
        // With no `duration` the run lasts to its last request: a generated
        // source's is known now (a trace's, once `check` or the run reads it).
        let reach = traffic
            .iter()
            .enumerate()
            .filter_map(|(i, t)| last_request(t).map(|r| (r, i, t)))
            .max_by_key(|(r, i, _)| (*r, std::cmp::Reverse(*i)));
        if let Some(((last, exact), i, t)) = reach
            && last.get() / bin.get() >= max
        {
            let fits = crate::timeline::TooManyBins {
                width: bin.get(),
                max,
                columns,
                until: last,
                key_at: None,
                reacting: false,
            };
            let kind = t.kind();
            let reaches = if exact {
                format!("`traffic[{i}]` ({kind}), which sends its last request at {last} s")
            } else {
                format!(
                    "`traffic[{i}]` ({kind}), which may send requests until {} s",
                    Nanos::new(last.get().saturating_add(1))
                )
            };
            return Err(ctx.at(
                    b.span(),
                    format!(
                        "`output.bin` = {} needs more than {max} bins{why} to cover {reaches} (with no `duration` the run lasts until its last request); choose a wider `bin` (at least \"{}\" to reach it)",
                        string(b.get_ref()),
                        format_duration(fits.fitting_bin())
                    ),
                ));
        }
    }
    let bin_at = raw.bin.as_ref().map(|b| ctx.location(b.span()));
    Ok(OutputOptions { bin, bin_at, decisions: raw.decisions, font, admission_curve: raw.admission_curve })
}

/// Fixed window, slot counters with N = 2, 10, 100, and the sliding log.
pub fn default_limiters() -> Vec<LimiterSpec> {
    let mut v: Vec<LimiterSpec> = vec![FixedWindowSpec::ALIGNED.into()];
    v.extend([2, 10, 100].map(|n| LimiterSpec::from(SlotCounterSpec { slots: n })));
    v.push(LimiterSpec::reference());
    v
}

/// "a pipe" or "a socket" when `path` is one (links followed).
pub fn pipe_or_socket(path: &Path) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = std::fs::metadata(path).ok()?.file_type();
        if kind.is_fifo() {
            return Some("a pipe");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: 3 burst requests with up to 2 retries each (6); 2 x 50
    /// Poisson requests with up to 8 retries each (800) but a budget of 0.5
    /// (50 tokens: 50 retries); a CSV source's 7 rows with up to 2 retries
    /// each (14). 110 first attempts: 110 + 6 + 50 + 14 = 180.
    #[test]
    fn attempts_estimate_by_hand() {
        let head = "name = \"x\"\nduration = \"2s\"\n[limit]\nrequests = 2\nwindow = \"1s\"\n";
        // Beside the shipped traces, so that a CSV source's path exists.
        let at = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/s.toml");
        let parse = |body: &str| Scenario::parse(&format!("{head}{body}"), &at).unwrap();
        let plain = "[[traffic]]\nkind = \"burst\"\ncount = 3\n";
        assert_eq!(parse(plain).attempts_estimate(&[]), None, "nobody retries");
        let s = parse(&format!(
            "[retry]\npolicy = \"fixed\"\nbase = \"1s\"\nmax_attempts = 3\n{plain}\
             [[traffic]]\nkind = \"poisson\"\nrate = 50\nretry = {{ policy = \"immediate\", max_attempts = 9, budget = 0.5 }}\n\
             [[traffic]]\nkind = \"csv\"\npath = \"traces/api_gateway.csv\"\n"
        ));
        let e = s.attempts_estimate(&[7]).unwrap();
        assert_eq!((e.requests, e.attempts, e.most_per_request, e.budget_limited), (110.0, 180.0, 9, true));
        assert_eq!(
            s.attempts_estimate(&[]).unwrap().attempts,
            159.0,
            "a run does not know a trace's rows before it reads them"
        );
        assert!(!e.is_large());
        // 47 first attempts at 0.5 earn 23.5 tokens: 23 retries at most.
        let odd = parse(
            "[[traffic]]\nkind = \"burst\"\ncount = 47\nretry = { policy = \"fixed\", base = \"1s\", max_attempts = 3, budget = 0.5 }\n",
        );
        assert_eq!(odd.attempts_estimate(&[]).unwrap().attempts, 70.0);
        assert_eq!(
            e.describe(),
            "up to about 180 in one run (about 110 requests, at most 9 attempts each, and fewer retries where a retry budget runs out)"
        );
        // Sources that share a key share their tokens: 1000 requests that
        // may not retry (max_attempts = 1) earn 1000 tokens at budget 1, and
        // the other source's 1000 requests spend them (and their own 1).
        let s = parse(
            "[[traffic]]\nkind = \"burst\"\ncount = 1000\nretry = { policy = \"immediate\", max_attempts = 1, budget = 1 }\n\
             [[traffic]]\nkind = \"burst\"\ncount = 1000\nretry = { policy = \"immediate\", max_attempts = 1000, budget = 0.001 }\n",
        );
        assert_eq!(s.attempts_estimate(&[]).unwrap().attempts, 2000.0 + 1001.0);
        // A closed population: clients x span / think requests expected,
        // here 1000 x 3600 s / 100 ms = 3.6e7, each up to 1000 attempts.
        let s = Scenario::parse(
            &format!(
                "{}[retry]\npolicy = \"immediate\"\nmax_attempts = 1000\n\
                 [[traffic]]\nkind = \"closed\"\nclients = 1000\nthink = \"100ms\"\n",
                head.replace("2s", "1h")
            ),
            Path::new("s.toml"),
        )
        .unwrap();
        let e = s.attempts_estimate(&[]).unwrap();
        assert_eq!((e.attempts, e.budget_limited), (3.6e10, false));
        assert!(e.is_large());
        // The cap in the estimate's notation: it once said "about 3.6e10
        // ... more than 1000000000".
        assert_eq!(
            e.warning(),
            "warning: a run of this scenario may make up to about 3.6e10 attempts (about 3.6e7 requests, at most 1000 attempts each), more than 1e9, the most requests a scenario's generated sources may send: at tens to hundreds of nanoseconds an attempt for each limiter, it may run for minutes or hours, though its memory stays bounded. A smaller `max_attempts`, a retry `budget` or fewer requests lowers it."
        );
        // `[sweep] retry_policies`: the largest over its runs (`none` runs
        // with one attempt).
        let s = parse(&format!(
            "{plain}[sweep]\nretry_policies = [{{ policy = \"none\" }}, {{ policy = \"immediate\", max_attempts = 4 }}, {{ policy = \"immediate\", max_attempts = 2 }}]\n"
        ));
        assert_eq!(s.attempts_estimate(&[]).map(|e| e.attempts), Some(12.0));
        // gRPC's throttling and the retry quota are not counted, only
        // named: 3 requests x 5 attempts whatever they stop. On a tie the
        // scenario's own run is shown (gRPC's), not the sweep's (the quota).
        let s = parse(&format!(
            "[retry]\npolicy = \"immediate\"\nmax_attempts = 5\nmax_tokens = 10\ntoken_ratio = 0.1\n{plain}\
             [sweep]\nretry_policies = [{{ policy = \"immediate\", max_attempts = 5, retry_quota = 500 }}]\n"
        ));
        let e = s.attempts_estimate(&[]).unwrap();
        assert_eq!((e.attempts, e.throttled), (15.0, Throttled { grpc: true, quota: false }));
        assert_eq!(
            e.describe(),
            "up to about 15 in one run (about 3 requests, at most 5 attempts each, and fewer where gRPC's retry throttling stops retries, which this does not count)"
        );
        let quota = Throttled { grpc: false, quota: true };
        assert_eq!(
            quota.clause(),
            ", and fewer where the retry quota stops retries, which this does not count"
        );
        assert_eq!(approx(0.25), "0.25");
        assert_eq!(approx(13.5), "14");
    }

    const BOUNDARY: &str = r#"
name = "boundary_burst"
seed = 1
duration = "3s"

[limit]
requests = 100
window = "1s"

[[traffic]]
kind = "burst"
start = "990ms"
span = "10ms"
count = 100

[[limiter]]
kind = "fixed_window"

[[limiter]]
kind = "slot_counter"
slots = [2, 10, 100]

[[limiter]]
kind = "sliding_log"

[output]
bin = "10ms"
"#;

    fn parse(text: &str) -> Result<Scenario, String> {
        Scenario::parse(text, Path::new("s.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn parses_the_issue_shape() {
        let s = parse(BOUNDARY).unwrap();
        assert_eq!(s.limit, Limit { requests: 100, window: Nanos::from_secs(1) });
        assert_eq!(s.duration, Some(Nanos::from_secs(3)));
        assert_eq!(
            s.traffic,
            [Traffic::Burst { start: Nanos::from_millis(990), span: Nanos::from_millis(10), count: 100 }]
        );
        assert_eq!(s.limiters.len(), 5);
        assert_eq!(s.limiters[2], SlotCounterSpec { slots: 10 }.into());
        assert_eq!(s.output.bin, Some(Nanos::from_millis(10)));
    }

    #[test]
    fn load_is_a_multiple_of_l_over_w() {
        let text = BOUNDARY.replace(
            "kind = \"burst\"\nstart = \"990ms\"\nspan = \"10ms\"\ncount = 100",
            "kind = \"poisson\"\nload = 1.5",
        );
        let s = parse(&text).unwrap();
        assert_eq!(
            s.traffic,
            [Traffic::Poisson { start: Nanos::ZERO, end: Nanos::from_secs(3), rate: 150.0, clients: None }]
        );
    }

    #[test]
    fn errors_name_line_column_and_key() {
        let e = parse(&BOUNDARY.replace("requests = 100", "requests = 0")).unwrap_err();
        assert!(e.starts_with("s.toml:7:12:") && e.contains("limit.requests"), "{e}");
        let e = parse(&BOUNDARY.replace("requests = 100", "requsts = 100")).unwrap_err();
        assert!(e.contains("did you mean `requests`"), "{e}");
        let e = parse(&BOUNDARY.replace("slots = [2, 10, 100]", "slots = [2, 0]")).unwrap_err();
        assert!(e.contains("limiter[1].slots") && e.contains("at least 1"), "{e}");
        let e = parse(&BOUNDARY.replace("kind = \"sliding_log\"", "kind = \"sliding_lg\"")).unwrap_err();
        assert!(e.contains("did you mean \"sliding_log\""), "{e}");
        let e = parse(&BOUNDARY.replace("window = \"1s\"", "window = \"1 fortnight\"")).unwrap_err();
        assert!(e.contains("limit.window") && e.contains("unknown unit"), "{e}");
        let e = parse(&BOUNDARY.replace("count = 100", "count = 100\nrate = 5.0")).unwrap_err();
        assert!(e.contains("traffic[0].rate") && e.contains("not a key of kind \"burst\""), "{e}");
    }

    #[test]
    fn names_are_letters_digits_dashes_and_underscores() {
        for ok in ["t", "boundary_burst", "run-2", "边界突发", "é", " padded "] {
            let s = parse(&BOUNDARY.replace("name = \"boundary_burst\"", &format!("name = \"{ok}\"")));
            assert_eq!(s.unwrap().name, ok.trim());
        }
        for bad in ["a b", "a/b", "a\\\\b", ".", "..", "", "  ", "v1.2", "a\\tb", "a*"] {
            let e = parse(&BOUNDARY.replace("name = \"boundary_burst\"", &format!("name = \"{bad}\"")))
                .unwrap_err();
            assert!(
                e.contains("cannot name an output folder: use letters, digits, `-` or `_`"),
                "{bad:?}: {e}"
            );
        }
    }

    #[test]
    fn set_slots_replaces_the_slot_counters_in_place() {
        let mut s = parse(BOUNDARY).unwrap();
        s.set_slots(&[5, 50]).unwrap();
        let labels: Vec<String> = s.limiters.iter().map(|l| l.label()).collect();
        assert_eq!(labels, ["fixed_window", "slot_counter(N=5)", "slot_counter(N=50)", "sliding_log"]);
        assert_eq!(
            s.set_slots(&[5, 0]).unwrap_err().to_string(),
            "slot count 0 is out of range: it must be between 1 and the window length in nanoseconds (1000000000)"
        );
    }

    #[test]
    fn type_errors_name_the_key() {
        let e = parse(&BOUNDARY.replace("requests = 100", "requests = \"ten\"")).unwrap_err();
        assert_eq!(e, "s.toml:7:12: `limit.requests`: expected a whole number, found the string \"ten\"");
        let e = parse(&BOUNDARY.replace("count = 100", "count = 2.5")).unwrap_err();
        assert!(
            e.starts_with("s.toml:14:9: `traffic[0].count`: expected a whole number, found the number 2.5"),
            "{e}"
        );
        let e = parse(&BOUNDARY.replace("slots = [2, 10, 100]", "slots = [\n  2,\n  \"x\",\n]")).unwrap_err();
        assert!(
            e.starts_with(
                "s.toml:23:3: `limiter[1].slots[1]`: expected a whole number, found the string \"x\""
            ),
            "{e}"
        );
        let e = parse(&BOUNDARY.replace("window = \"1s\"", "window = \"1s")).unwrap_err();
        assert!(e.starts_with("s.toml:8:") && e.contains("`limit.window`"), "{e}");
    }

    #[test]
    fn sweep_table_takes_defaults_and_needs_no_traffic() {
        let text = "name = \"s\"\n[limit]\nrequests = 100\nwindow = \"1s\"\n[sweep]\n";
        let s = parse(text).unwrap();
        let opts = s.sweep.unwrap();
        assert_eq!(opts, SweepOptions::defaults(s.limit));
        assert_eq!(opts.grid, 2000);
        assert_eq!(opts.load_duration, Nanos::from_secs(100));
        assert!(s.traffic.is_empty());
        // The sweep's default limiters: fixed, N = 1 .. 1000, sliding log.
        assert_eq!(s.limiters, crate::sweep::default_limiters());
        let s = parse(&format!(
            "{text}grid = 500\nloads = [1.0, 2.0]\nmap_slots = [2]\nload_duration = \"5s\"\n"
        ))
        .unwrap()
        .sweep
        .unwrap();
        assert_eq!(
            (s.grid, s.loads, s.map_slots, s.load_duration),
            (500, vec![1.0, 2.0], vec![2], Nanos::from_secs(5))
        );
        // Loads are swept in increasing order, each once; map panels keep
        // the order given, each once.
        let s = parse(&format!("{text}loads = [3.0, 0.5, 1.0, 1.0]\nmap_slots = [10, 2, 10]\n"))
            .unwrap()
            .sweep
            .unwrap();
        assert_eq!((s.loads, s.map_slots), (vec![0.5, 1.0, 3.0], vec![10, 2]));
    }

    /// Topology sweeps run each value once, in increasing order.
    #[test]
    fn topology_sweep_values_are_sorted_once_each() {
        let text = "name = \"s\"\nduration = \"2s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n\
[[traffic]]\nkind = \"poisson\"\nrate = 5\n[sweep]\nnodes = [3, 1, 3]\n";
        let t = parse(text).unwrap().topology_sweep.unwrap();
        assert_eq!(t.nodes, [1, 3]);
        let text = text.replace("nodes = [3, 1, 3]", "rtts = [\"5ms\", \"1ms\", \"5ms\"]");
        let t = parse(&text).unwrap().topology_sweep.unwrap();
        assert_eq!(t.rtts, [Nanos::from_millis(1), Nanos::from_millis(5)]);
    }

    #[test]
    fn sweep_errors_are_located() {
        let text = "name = \"s\"\n[limit]\nrequests = 100\nwindow = \"1s\"\n[sweep]\n";
        let e = parse(&format!("{text}grid = 1\n")).unwrap_err();
        assert!(e.starts_with("s.toml:6:8:") && e.contains("sweep.grid"), "{e}");
        let e = parse(&format!("{text}loads = [1.0, -2.0]\n")).unwrap_err();
        assert!(e.contains("sweep.loads") && e.contains("above 0"), "{e}");
        let e = parse(&format!("{text}gird = 10\n")).unwrap_err();
        assert!(e.contains("did you mean `grid`"), "{e}");
        let e = parse("name = \"s\"\n[limit]\nrequests = 1\nwindow = \"1s\"\n").unwrap_err();
        assert!(e.contains("no [[traffic]] source and no [sweep]"), "{e}");
        let e = parse(&format!("{text}[output]\nfont = \"nope.ttf\"\n")).unwrap_err();
        assert!(e.contains("output.font") && e.contains("does not exist"), "{e}");
        if cfg!(unix) {
            // The same check as a trace's path: a device is no font file.
            let e = parse(&format!("{text}[output]\nfont = \"/dev/null\"\n")).unwrap_err();
            assert!(
                e.contains("font file /dev/null is not a regular file (a device, pipe or socket)"),
                "{e}"
            );
        }
    }

    /// A library caller of `Scenario::load` is refused a FIFO unopened, as
    /// the command line is, instead of waiting for a writer forever.
    #[cfg(unix)]
    #[test]
    fn load_refuses_a_fifo_without_opening_it() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let e = Scenario::load(&fifo).unwrap_err();
        assert!(matches!(e, ScenarioError::NotAFile { kind: "a pipe", .. }), "{e}");
        assert!(e.to_string().ends_with("is not a regular file (a pipe): reading it would wait for whatever writes into it; save the scenario to a file"), "{e}");
    }
}
