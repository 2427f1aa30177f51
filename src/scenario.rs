//! Scenario files: TOML, parsed with serde (unknown keys refused), then
//! checked value by value so every error names file, line, column and key.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::limiter::{Limit, LimiterSpec, WindowAlign};
use crate::time::{Nanos, TimeUnit, format_duration, parse_duration};
use crate::trace::CsvOptions;

/// A scenario that passed every check.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub path: PathBuf,
    pub name: String,
    pub description: Option<String>,
    pub seed: u64,
    /// Arrivals at or after this instant are dropped; the run covers `[0, duration)`.
    pub duration: Option<Nanos>,
    pub limit: Limit,
    pub traffic: Vec<Traffic>,
    pub limiters: Vec<LimiterSpec>,
    pub output: OutputOptions,
    /// The `[sweep]` table: run the burst-pair and load sweeps.
    pub sweep: Option<SweepOptions>,
}

/// The `[sweep]` table, validated (SEMANTICS.md, "Error versus slot count").
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
        }
    }
}

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
}

/// The `[output]` table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OutputOptions {
    pub bin: Option<Nanos>,
    pub decisions: bool,
    /// A TrueType font for chart text in PNGs (for scripts DejaVu lacks).
    pub font: Option<PathBuf>,
}

/// A scenario problem, located.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("cannot read scenario {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    At { path: PathBuf, line: usize, column: usize, message: String },
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
}

// ---- raw TOML shapes -------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Spanned<String>,
    description: Option<String>,
    seed: Option<Spanned<i64>>,
    duration: Option<Spanned<String>>,
    limit: Spanned<RawLimit>,
    #[serde(default)]
    traffic: Vec<Spanned<RawTraffic>>,
    #[serde(default)]
    limiter: Vec<Spanned<RawLimiter>>,
    #[serde(default)]
    output: RawOutput,
    sweep: Option<Spanned<RawSweep>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    grid: Option<Spanned<i64>>,
    loads: Option<Spanned<Vec<Spanned<f64>>>>,
    load_duration: Option<Spanned<String>>,
    map_slots: Option<Spanned<Vec<Spanned<i64>>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimit {
    requests: Spanned<i64>,
    window: Spanned<String>,
}

/// Every key any traffic kind takes; which ones a kind accepts is checked after.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTraffic {
    kind: Spanned<String>,
    start: Option<Spanned<String>>,
    span: Option<Spanned<String>>,
    end: Option<Spanned<String>>,
    count: Option<Spanned<i64>>,
    rate: Option<Spanned<f64>>,
    load: Option<Spanned<f64>>,
    path: Option<Spanned<String>>,
    time_unit: Option<Spanned<String>>,
    time_column: Option<Spanned<String>>,
    key_column: Option<Spanned<String>>,
    clients: Option<Spanned<i64>>,
    skew: Option<Spanned<f64>>,
    sort: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimiter {
    kind: Spanned<String>,
    align: Option<Spanned<String>>,
    offset: Option<Spanned<String>>,
    slots: Option<Spanned<Vec<Spanned<i64>>>>,
    count_rejected: Option<Spanned<bool>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawOutput {
    bin: Option<Spanned<String>>,
    #[serde(default)]
    decisions: bool,
    font: Option<Spanned<String>>,
}

// ---- locating errors -------------------------------------------------------

struct Ctx<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let col = before.rfind('\n').map_or(before.chars().count(), |i| before[i + 1..].chars().count()) + 1;
        (line, col)
    }

    fn at(&self, span: Range<usize>, message: impl Into<String>) -> ScenarioError {
        let (line, column) = self.line_col(span.start);
        ScenarioError::At { path: self.path.to_path_buf(), line, column, message: message.into() }
    }

    fn duration(&self, key: &str, v: &Spanned<String>) -> Result<Nanos, ScenarioError> {
        parse_duration(v.get_ref()).map_err(|e| self.at(v.span(), format!("`{key}`: {e}")))
    }

    fn positive_duration(&self, key: &str, v: &Spanned<String>) -> Result<Nanos, ScenarioError> {
        let d = self.duration(key, v)?;
        if d.get() == 0 {
            return Err(self.at(v.span(), format!("`{key}` must be longer than 0, got \"{}\"", v.get_ref())));
        }
        Ok(d)
    }

    fn at_least_one(&self, key: &str, v: &Spanned<i64>) -> Result<u64, ScenarioError> {
        let n = *v.get_ref();
        if n < 1 {
            return Err(self.at(v.span(), format!("`{key}` must be a whole number of at least 1, got {n}")));
        }
        Ok(n as u64)
    }

    fn rate(&self, key: &str, v: &Spanned<f64>) -> Result<f64, ScenarioError> {
        let r = *v.get_ref();
        if !r.is_finite() || r <= 0.0 {
            return Err(self.at(v.span(), format!("`{key}` must be a finite number above 0, got {r}")));
        }
        Ok(r)
    }
}

/// serde's Rust type names in words people use.
fn plain_types(message: &str) -> String {
    if let Some(n) = message
        .strip_prefix("invalid type: integer `")
        .and_then(|r| r.strip_suffix("` as i128, expected i64"))
    {
        return format!("{n} is too large: expected a whole number up to 9223372036854775807");
    }
    message
        .replace("expected i64", "expected a whole number")
        .replace("expected f64", "expected a number")
        .replace("expected a sequence", "expected a list, like [2, 10]")
        .replace("expected a boolean", "expected true or false")
}

/// The dotted key (`limit.window`, `traffic[1].rate`) whose value sits at
/// `offset`, found from the table headers and `key =` lines before it. A
/// heuristic for messages from the TOML parser, which name no key.
fn key_path_at(text: &str, offset: usize) -> Option<String> {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let mut table: Option<String> = None;
    let mut key: Option<String> = None;
    let mut arrays: Vec<(String, usize)> = Vec::new();
    let lines = text[..line_start].lines().map(|l| (l, false)).chain([(&text[line_start..line_end], true)]);
    for (line, last) in lines {
        let l = line.trim();
        if let Some(name) = l.strip_prefix("[[").and_then(|r| r.split("]]").next()) {
            let name = name.trim().to_string();
            let n = match arrays.iter_mut().find(|(a, _)| *a == name) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    arrays.push((name.clone(), 0));
                    0
                }
            };
            table = Some(format!("{name}[{n}]"));
            key = None;
        } else if let Some(name) = l.strip_prefix('[').and_then(|r| r.split(']').next()) {
            table = Some(name.trim().to_string());
            key = None;
        } else {
            let upto = if last { &line[..offset - line_start] } else { line };
            if let Some((k, _)) = upto.split_once('=') {
                let k = k.trim();
                if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || "_-.\"'".contains(c)) {
                    key = Some(k.to_string());
                }
            }
        }
    }
    match (table, key) {
        (Some(t), Some(k)) => Some(format!("{t}.{k}")),
        (None, Some(k)) => Some(k),
        (Some(t), None) => Some(t),
        (None, None) => None,
    }
}

/// Adds "did you mean" to serde's "unknown field `x`, expected one of ..." messages.
fn suggest(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return message.to_string();
    };
    let Some((unknown, expected)) = rest.split_once('`') else {
        return message.to_string();
    };
    let candidates: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let best = candidates
        .iter()
        .map(|c| (edit_distance(unknown, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min();
    match best {
        Some((_, c)) => format!("{}; did you mean `{c}`?", message.trim_end()),
        None => message.to_string(),
    }
}

/// Levenshtein distance, for near-miss key names.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

fn one_of(ctx: &Ctx, key: &str, v: &Spanned<String>, allowed: &[&str]) -> ScenarioError {
    let got = v.get_ref();
    let near = allowed
        .iter()
        .map(|a| (edit_distance(got, a), *a))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, a)| format!("; did you mean \"{a}\"?"))
        .unwrap_or_default();
    let list = allowed.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(", ");
    ctx.at(v.span(), format!("`{key}` = \"{got}\" is not known: expected one of {list}{near}"))
}

// ---- validation ------------------------------------------------------------

impl Scenario {
    /// Reads and validates a scenario file. Trace paths are relative to it.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ScenarioError::Read { path: path.to_path_buf(), source })?;
        Scenario::parse(&text, path)
    }

    /// Validates scenario text; `path` names it in errors and anchors trace paths.
    pub fn parse(text: &str, path: &Path) -> Result<Scenario, ScenarioError> {
        let ctx = Ctx { path, text };
        let raw: RawScenario = toml::from_str(text).map_err(|e| {
            let message = suggest(&plain_types(e.message()));
            match e.span() {
                Some(span) => {
                    // serde names unknown keys itself; for the rest, say which key.
                    let message = match key_path_at(text, span.start) {
                        Some(key) if !message.starts_with("unknown field") => format!("`{key}`: {message}"),
                        _ => message,
                    };
                    ctx.at(span, message)
                }
                None => ScenarioError::File { path: path.to_path_buf(), message },
            }
        })?;
        let base = path.parent().unwrap_or(Path::new("."));

        let name = raw.name.get_ref().trim().to_string();
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
            return Err(ctx.at(
                raw.name.span(),
                format!("`name` = \"{name}\" cannot name an output folder: use letters, digits, `-` or `_`"),
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
        let limit = Limit { requests, window };

        if raw.traffic.is_empty() && raw.sweep.is_none() {
            return Err(ScenarioError::File {
                path: path.to_path_buf(),
                message: "no [[traffic]] source and no [sweep]: add a source (kind = \"burst\", \"constant\", \"poisson\" or \"csv\") or a [sweep] table".into(),
            });
        }
        let traffic = raw
            .traffic
            .iter()
            .enumerate()
            .map(|(i, t)| validate_traffic(&ctx, i, t, limit, duration, base))
            .collect::<Result<Vec<_>, _>>()?;

        let mut limiters = Vec::new();
        for (i, l) in raw.limiter.iter().enumerate() {
            validate_limiter(&ctx, i, l, window, &mut limiters)?;
        }
        if limiters.is_empty() {
            limiters =
                if raw.sweep.is_some() { crate::sweep::default_limiters() } else { default_limiters() };
        }
        let sweep = raw.sweep.as_ref().map(|s| validate_sweep(&ctx, s, limit)).transpose()?;
        let font = match &raw.output.font {
            None => None,
            Some(f) => {
                let p = base.join(f.get_ref());
                if !p.is_file() {
                    return Err(ctx.at(
                        f.span(),
                        format!(
                            "`output.font`: font file {} does not exist (paths are relative to the scenario file)",
                            p.display()
                        ),
                    ));
                }
                Some(p)
            }
        };

        let bin = raw.output.bin.as_ref().map(|b| ctx.positive_duration("output.bin", b)).transpose()?;
        if let (Some(b), Some(bin), Some(d)) = (&raw.output.bin, bin, duration) {
            // The engine would refuse this at the first arrival; say so now.
            let bins = (d.get() - 1) / bin.get() + 1;
            if bins > crate::timeline::MAX_BINS {
                return Err(ctx.at(
                    b.span(),
                    format!(
                        "`output.bin` = \"{}\" cuts the {} run into {bins} bins; the most is {}: choose a wider `bin`",
                        b.get_ref(),
                        format_duration(d),
                        crate::timeline::MAX_BINS
                    ),
                ));
            }
        }

        Ok(Scenario {
            path: path.to_path_buf(),
            name,
            description: raw.description.clone(),
            seed,
            duration,
            limit,
            traffic,
            limiters,
            output: OutputOptions { bin, decisions: raw.output.decisions, font },
            sweep,
        })
    }

    /// Replaces the slot counts of every `slot_counter` (or adds slot counters
    /// before the sliding log when the scenario has none).
    pub fn set_slots(&mut self, slots: &[u64]) -> Result<(), String> {
        for &n in slots {
            if n == 0 || n > self.limit.window.get() {
                return Err(format!(
                    "slot count {n} is out of range: it must be between 1 and the window length in nanoseconds ({})",
                    self.limit.window.get()
                ));
            }
        }
        let first = self.limiters.iter().position(|l| matches!(l, LimiterSpec::SlotCounter { .. }));
        let insert_at = first.unwrap_or_else(|| {
            self.limiters
                .iter()
                .position(|l| matches!(l, LimiterSpec::SlidingLog { .. }))
                .unwrap_or(self.limiters.len())
        });
        self.limiters.retain(|l| !matches!(l, LimiterSpec::SlotCounter { .. }));
        let insert_at = insert_at.min(self.limiters.len());
        for (k, &n) in slots.iter().enumerate() {
            self.limiters.insert(insert_at + k, LimiterSpec::SlotCounter { slots: n });
        }
        Ok(())
    }
}

/// Fixed window, slot counters with N = 2, 10, 100, and the sliding log.
pub fn default_limiters() -> Vec<LimiterSpec> {
    let mut v = vec![LimiterSpec::FixedWindow { align: WindowAlign::Epoch { offset: Nanos::ZERO } }];
    v.extend([2, 10, 100].map(|n| LimiterSpec::SlotCounter { slots: n }));
    v.push(LimiterSpec::reference());
    v
}

/// The most requests one generated source (burst, constant, poisson) may
/// produce: a guard against typos such as `count = 1000000000000` that would
/// run for hours. Recorded traces have no such limit.
pub const MAX_GENERATED: u64 = 1_000_000_000;

fn validate_sweep(ctx: &Ctx, s: &Spanned<RawSweep>, limit: Limit) -> Result<SweepOptions, ScenarioError> {
    let r = s.get_ref();
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
    Ok(out)
}

const TRAFFIC_KINDS: [&str; 4] = ["burst", "constant", "poisson", "csv"];
const LIMITER_KINDS: [&str; 3] = ["fixed_window", "slot_counter", "sliding_log"];

fn validate_traffic(
    ctx: &Ctx,
    i: usize,
    t: &Spanned<RawTraffic>,
    limit: Limit,
    duration: Option<Nanos>,
    base: &Path,
) -> Result<Traffic, ScenarioError> {
    let r = t.get_ref();
    let kind = r.kind.get_ref().as_str();
    let key = |k: &str| format!("traffic[{i}].{k}");
    // Which keys each kind takes; anything else set is an error, not ignored.
    let allowed: &[&str] = match kind {
        "burst" => &["start", "span", "count"],
        "constant" => &["start", "end", "rate", "load"],
        "poisson" => &["start", "end", "rate", "load", "clients", "skew"],
        "csv" => &["path", "time_unit", "time_column", "key_column", "sort"],
        _ => return Err(one_of(ctx, &key("kind"), &r.kind, &TRAFFIC_KINDS)),
    };
    let present: [(&str, Option<Range<usize>>); 13] = [
        ("start", r.start.as_ref().map(|v| v.span())),
        ("span", r.span.as_ref().map(|v| v.span())),
        ("end", r.end.as_ref().map(|v| v.span())),
        ("count", r.count.as_ref().map(|v| v.span())),
        ("rate", r.rate.as_ref().map(|v| v.span())),
        ("load", r.load.as_ref().map(|v| v.span())),
        ("path", r.path.as_ref().map(|v| v.span())),
        ("time_unit", r.time_unit.as_ref().map(|v| v.span())),
        ("time_column", r.time_column.as_ref().map(|v| v.span())),
        ("key_column", r.key_column.as_ref().map(|v| v.span())),
        ("clients", r.clients.as_ref().map(|v| v.span())),
        ("skew", r.skew.as_ref().map(|v| v.span())),
        ("sort", r.sort.as_ref().map(|v| v.span())),
    ];
    for (name, span) in present {
        if let Some(span) = span
            && !allowed.contains(&name)
        {
            return Err(ctx.at(
                span,
                format!("`{}` is not a key of kind \"{kind}\" (it takes: {})", key(name), allowed.join(", ")),
            ));
        }
    }
    let missing = |k: &str| ctx.at(t.span(), format!("`{}` is required for kind \"{kind}\"", key(k)));
    let start = r.start.as_ref().map(|v| ctx.duration(&key("start"), v)).transpose()?.unwrap_or(Nanos::ZERO);
    match kind {
        "burst" => {
            let count_raw = r.count.as_ref().ok_or_else(|| missing("count"))?;
            let count = ctx.at_least_one(&key("count"), count_raw)?;
            if count > MAX_GENERATED {
                return Err(ctx.at(
                    count_raw.span(),
                    format!(
                        "`{}` = {count} is too many: a generated source may produce at most {MAX_GENERATED} requests (use a CSV trace or several runs for more)",
                        key("count")
                    ),
                ));
            }
            let span =
                r.span.as_ref().map(|v| ctx.duration(&key("span"), v)).transpose()?.unwrap_or(Nanos::ZERO);
            if start.checked_add(span).is_none() {
                return Err(ctx.at(t.span(), format!("`{}` + `span` is past the end of time", key("start"))));
            }
            Ok(Traffic::Burst { start, span, count })
        }
        "constant" | "poisson" => {
            let end = match (&r.end, duration) {
                (Some(e), _) => ctx.duration(&key("end"), e)?,
                (None, Some(d)) => d,
                (None, None) => {
                    return Err(ctx.at(
                        t.span(),
                        format!("`{}` is required when the scenario has no `duration`", key("end")),
                    ));
                }
            };
            if end <= start {
                return Err(match &r.end {
                    Some(e) => {
                        ctx.at(e.span(), format!("`{}` ({end} s) must be after `start` ({start} s)", key("end")))
                    }
                    None => ctx.at(
                        r.start.as_ref().map_or(t.span(), |s| s.span()),
                        format!(
                            "`{}` ({start} s) must be before the scenario's `duration` ({end} s), where this source ends",
                            key("start")
                        ),
                    ),
                });
            }
            let (rate, rate_span, rate_key) = match (&r.rate, &r.load) {
                (Some(_), Some(l)) => {
                    return Err(ctx.at(l.span(), format!("give `{}` or `load`, not both", key("rate"))));
                }
                (Some(v), None) => (ctx.rate(&key("rate"), v)?, v.span(), key("rate")),
                (None, Some(l)) => {
                    let load = ctx.rate(&key("load"), l)?;
                    (load * limit.requests as f64 / limit.window.as_secs_f64(), l.span(), key("load"))
                }
                (None, None) => return Err(missing("rate` or `load")),
            };
            // Expected requests over [start, end); also catches a load whose
            // rate overflows to infinity or underflows to 0.
            let expected = rate * (end.get() - start.get()) as f64 / 1e9;
            if !(rate.is_finite() && rate > 0.0) {
                return Err(ctx.at(
                    rate_span,
                    format!("`{rate_key}` gives a rate of {rate} requests/s: it must be finite and above 0"),
                ));
            }
            if expected > MAX_GENERATED as f64 {
                return Err(ctx.at(
                    rate_span,
                    format!(
                        "`{rate_key}` gives {rate:e} requests/s, about {expected:e} requests over [{start} s, {end} s): a generated source may produce at most {MAX_GENERATED} requests"
                    ),
                ));
            }
            if kind == "constant" {
                return Ok(Traffic::Constant { start, end, rate });
            }
            let clients = r.clients.as_ref().map(|c| ctx.at_least_one(&key("clients"), c)).transpose()?;
            let skew = match &r.skew {
                None => 1.0,
                Some(v) if v.get_ref().is_finite() && *v.get_ref() >= 0.0 => *v.get_ref(),
                Some(v) => {
                    return Err(ctx.at(
                        v.span(),
                        format!(
                            "`{}` must be a finite number of at least 0, got {}",
                            key("skew"),
                            v.get_ref()
                        ),
                    ));
                }
            };
            if let (Some(v), None) = (&r.skew, clients) {
                return Err(ctx.at(v.span(), format!("`{}` needs `clients`", key("skew"))));
            }
            Ok(Traffic::Poisson { start, end, rate, clients: clients.map(|n| (n, skew)) })
        }
        "csv" => {
            let p = r.path.as_ref().ok_or_else(|| missing("path"))?;
            let path = base.join(p.get_ref());
            if !path.is_file() {
                let what = if path.is_dir() { "is a directory, not a file" } else { "does not exist" };
                return Err(ctx.at(
                    p.span(),
                    format!(
                        "`{}`: trace file {} {what} (paths are relative to the scenario file)",
                        key("path"),
                        path.display()
                    ),
                ));
            }
            let time_unit = match &r.time_unit {
                None => TimeUnit::S,
                Some(u) => TimeUnit::parse(u.get_ref())
                    .ok_or_else(|| one_of(ctx, &key("time_unit"), u, &["s", "ms", "us", "ns"]))?,
            };
            let time_column = r.time_column.as_ref().map_or("time".to_string(), |c| c.get_ref().clone());
            let key_column = r.key_column.as_ref().map(|c| c.get_ref().clone());
            let sort = r.sort.as_ref().is_some_and(|s| *s.get_ref());
            Ok(Traffic::Csv(CsvOptions { path, time_unit, time_column, key_column, sort }))
        }
        _ => unreachable!("kind checked above"),
    }
}

fn validate_limiter(
    ctx: &Ctx,
    i: usize,
    l: &Spanned<RawLimiter>,
    window: Nanos,
    out: &mut Vec<LimiterSpec>,
) -> Result<(), ScenarioError> {
    let r = l.get_ref();
    let kind = r.kind.get_ref().as_str();
    let key = |k: &str| format!("limiter[{i}].{k}");
    let allowed: &[&str] = match kind {
        "fixed_window" => &["align", "offset"],
        "slot_counter" => &["slots"],
        "sliding_log" => &["count_rejected"],
        _ => return Err(one_of(ctx, &key("kind"), &r.kind, &LIMITER_KINDS)),
    };
    let present: [(&str, Option<Range<usize>>); 4] = [
        ("align", r.align.as_ref().map(|v| v.span())),
        ("offset", r.offset.as_ref().map(|v| v.span())),
        ("slots", r.slots.as_ref().map(|v| v.span())),
        ("count_rejected", r.count_rejected.as_ref().map(|v| v.span())),
    ];
    for (name, span) in present {
        if let Some(span) = span
            && !allowed.contains(&name)
        {
            return Err(ctx.at(
                span,
                format!("`{}` is not a key of kind \"{kind}\" (it takes: {})", key(name), allowed.join(", ")),
            ));
        }
    }
    match kind {
        "fixed_window" => {
            let first = match &r.align {
                None => false,
                Some(a) if a.get_ref() == "epoch" => false,
                Some(a) if a.get_ref() == "first-request" => true,
                Some(a) => return Err(one_of(ctx, &key("align"), a, &["epoch", "first-request"])),
            };
            let offset = r.offset.as_ref().map(|o| ctx.duration(&key("offset"), o)).transpose()?;
            let align = match (first, offset) {
                (true, Some(_)) => {
                    return Err(ctx.at(
                        r.offset.as_ref().expect("offset set").span(),
                        format!("`{}` only applies to align = \"epoch\"", key("offset")),
                    ));
                }
                (true, None) => WindowAlign::FirstRequest,
                (false, offset) => {
                    WindowAlign::Epoch { offset: Nanos::new(offset.map_or(0, |o| o.get() % window.get())) }
                }
            };
            out.push(LimiterSpec::FixedWindow { align });
        }
        "slot_counter" => {
            let slots = r.slots.as_ref().ok_or_else(|| {
                ctx.at(
                    l.span(),
                    format!("`{}` is required: a list of slot counts, like [2, 10, 100]", key("slots")),
                )
            })?;
            if slots.get_ref().is_empty() {
                return Err(ctx
                    .at(slots.span(), format!("`{}` is empty: give at least one slot count", key("slots"))));
            }
            for n in slots.get_ref() {
                let v = ctx.at_least_one(&key("slots"), n)?;
                if v > window.get() {
                    return Err(ctx.at(
                        n.span(),
                        format!(
                            "`{}`: {v} slots is more than the window has nanoseconds ({}); a slot must be at least 1 ns",
                            key("slots"),
                            window.get()
                        ),
                    ));
                }
                out.push(LimiterSpec::SlotCounter { slots: v });
            }
        }
        "sliding_log" => {
            let count_rejected = r.count_rejected.as_ref().is_some_and(|c| *c.get_ref());
            out.push(LimiterSpec::SlidingLog { count_rejected });
        }
        _ => unreachable!("kind checked above"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(s.limiters[2], LimiterSpec::SlotCounter { slots: 10 });
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
    fn set_slots_replaces_the_slot_counters_in_place() {
        let mut s = parse(BOUNDARY).unwrap();
        s.set_slots(&[5, 50]).unwrap();
        let labels: Vec<String> = s.limiters.iter().map(|l| l.label()).collect();
        assert_eq!(labels, ["fixed_window", "slot_counter(N=5)", "slot_counter(N=50)", "sliding_log"]);
        assert!(s.set_slots(&[0]).is_err());
    }

    #[test]
    fn type_errors_name_the_key() {
        let e = parse(&BOUNDARY.replace("requests = 100", "requests = \"ten\"")).unwrap_err();
        assert_eq!(e, "s.toml:7:12: `limit.requests`: invalid type: string \"ten\", expected a whole number");
        let e = parse(&BOUNDARY.replace("count = 100", "count = 2.5")).unwrap_err();
        assert!(e.starts_with("s.toml:14:9: `traffic[0].count`: invalid type: floating point `2.5`"), "{e}");
        let e = parse(&BOUNDARY.replace("slots = [2, 10, 100]", "slots = [\n  2,\n  \"x\",\n]")).unwrap_err();
        assert!(e.starts_with("s.toml:23:3: `limiter[1].slots`: invalid type: string \"x\""), "{e}");
        let e = parse(&BOUNDARY.replace("window = \"1s\"", "window = \"1s")).unwrap_err();
        assert!(e.starts_with("s.toml:8:") && e.contains("`limit.window`"), "{e}");
    }

    #[test]
    fn key_path_heuristic() {
        let t = "a = 1\n[[x]]\nk = 2\n[[x]]\n\nk = [\n 3]\n[y]\nz = 4\n";
        assert_eq!(key_path_at(t, 4).as_deref(), Some("a"));
        assert_eq!(key_path_at(t, t.find("3]").unwrap()).as_deref(), Some("x[1].k"));
        assert_eq!(key_path_at(t, t.find("4").unwrap()).as_deref(), Some("y.z"));
        assert_eq!(key_path_at(t, 0), None);
        assert_eq!(key_path_at("é = 1", 1).as_deref(), None);
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
    }

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance("requsts", "requests"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
