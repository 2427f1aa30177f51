//! What a run writes, decided in one place: [`run`] simulates the scenario
//! and runs its sweeps, writes every table into a staged output folder and
//! says which charts belong beside them ([`Chart`]). The caller draws those
//! (the binary, with plotters) and hands back the files it drew to
//! [`RunOutputs::commit`], which writes `report.md` and moves the folder
//! into place. Tests call [`run`] directly, with no chart backend.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use crate::diagram::WindowsDiagram;
use crate::engine::{self, DecisionSink, Progress, RunError, RunReport};
use crate::export::report::{ChartRef, ReportInput};
use crate::export::{self, OutputDir, OutputError};
use crate::limiter::LimiterSpec;
use crate::scenario::{AttemptsEstimate, Scenario, SweepOptions};
use crate::simulate;
use crate::sweep::burst_pair::BurstPairError;
use crate::sweep::{
    self, BurstPairConfig, BurstPairResult, LoadPoint, LoadSweepConfig, RetryPolicyPoint, SeedSweepResult,
    TopologySweep, TopologySweepResult,
};
use crate::time::format_duration;

/// How to run a scenario, beyond the scenario itself.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Where the outputs go (replaced only when everything was written).
    pub out_dir: PathBuf,
    /// Run only the sweeps (`ratesim sweep`): the scenario's `[sweep]`
    /// table, or the defaults when it has none.
    pub sweep_only: bool,
    /// Write `decisions.csv` (also when the scenario asks for it).
    pub decisions: bool,
    /// Charts will be drawn: say which.
    pub charts: bool,
    /// The command-line options that shaped the outputs (`--seed 7`,
    /// `--slots 3,4`, ...), for the report's "Regenerate with" line.
    pub overrides: Vec<String>,
    /// Files the run reads that the scenario does not name, each with what
    /// it is (the `--font`): like the scenario's own inputs, the output
    /// folder must not hold them.
    pub inputs: Vec<(PathBuf, String)>,
}

/// Where a run writes when it is given no folder (`--out`):
/// `output/<name>`, and for the sweeps alone (`ratesim sweep`)
/// `output/<name>-sweeps`, beside the run's folder, never over it.
pub fn default_out_dir(scenario: &Scenario, sweep_only: bool) -> PathBuf {
    let folder = if sweep_only { format!("{}-sweeps", scenario.name) } else { scenario.name.clone() };
    PathBuf::from("output").join(folder)
}

/// Whether a run sends the scenario's traffic with its clients' retries:
/// the simulation does; the sweeps alone (`sweep_only`) do only in a
/// retry-policy, seed or topology sweep.
pub fn runs_retries(scenario: &Scenario, sweep_only: bool) -> bool {
    !sweep_only
        || scenario.topology_sweep.is_some()
        || scenario.sweep.as_ref().is_some_and(|s| !s.retry_policies.is_empty() || s.seeds.is_some())
}

/// What to warn of before a run that may take long: the run sends retries
/// ([`runs_retries`]) that can multiply its requests past what their guard
/// allows ([`AttemptsEstimate::is_large`]). CSV sources are not counted
/// (a run does not read them before it starts; `check` does).
pub fn large_attempts(scenario: &Scenario, sweep_only: bool) -> Option<AttemptsEstimate> {
    if !runs_retries(scenario, sweep_only) {
        return None;
    }
    scenario.attempts_estimate(&[]).filter(|e| e.is_large())
}

/// What a run is doing, for progress display.
#[derive(Clone, Copy, Debug)]
pub enum Step {
    Simulate(Progress),
    /// The sweeps' work done out of their total, in decisions (a request
    /// decided by one limiter: [`crate::sweep::SweepWork`]), so that the
    /// time left can be told from it; reported in increasing order, the
    /// last at `total`.
    Sweep {
        done: u64,
        total: u64,
    },
}

/// Why a run failed. Outputs are staged, so the previous results stay.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(
        "scenario {} failed; {}",
        crate::shown::path(path),
        if *kept { "previous results were kept" } else { "nothing was written" }
    )]
    Simulation {
        path: PathBuf,
        /// The output folder holds an earlier run's results, untouched.
        kept: bool,
        #[source]
        source: RunError,
    },
    #[error("cannot read the trace for the windows diagram")]
    Diagram(#[source] crate::trace::TraceError),
    /// `ratesim sweep` on a scenario with no `[sweep]` table runs the
    /// default sweeps, which its window may be too short for.
    #[error(
        "{at}: {problem} (a scenario with no [sweep] table gets the default burst-pair and load sweeps from `ratesim sweep`)"
    )]
    SweepDefaults { at: String, problem: String },
    /// A sweep failed: like a failed simulation, it says what became of
    /// the output folder (staged, it is untouched).
    #[error(
        "scenario {} failed; {}",
        crate::shown::path(path),
        if *kept { "previous results were kept" } else { "nothing was written" }
    )]
    Sweep {
        path: PathBuf,
        /// The output folder holds an earlier run's results, untouched.
        kept: bool,
        #[source]
        source: Box<SweepError>,
    },
}

/// Which sweep failed, and why.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("burst-pair sweep")]
    BurstPair(#[source] BurstPairError),
    #[error("load sweep ({})", side_by_side(*.1))]
    LoadSweep(#[source] RunError, usize),
    #[error("retry-policy comparison ({})", side_by_side(*.1))]
    RetryPolicies(#[source] RunError, usize),
    #[error("seed sweep ({})", side_by_side(*.1))]
    Seeds(#[source] RunError, usize),
    /// The seed sweep would make too many decisions, found once the
    /// scenario's own run counted a trace's rows: where `seeds` is set,
    /// and why.
    #[error("seed sweep: {0}")]
    SeedWork(String),
    #[error("topology sweep ({})", side_by_side(*.1))]
    TopologySweep(#[source] RunError, usize),
}

/// A chart the outputs call for; the caller draws it.
#[derive(Clone, Debug)]
pub struct Chart {
    /// File name without extension.
    pub name: &'static str,
    pub caption: String,
    pub kind: ChartKind,
}

/// What a chart shows (the data is in [`RunOutputs`]).
#[derive(Clone, Debug)]
pub enum ChartKind {
    /// The exact window count over time per limiter, against the limit.
    WindowCount,
    /// Offered and admitted per bin, a strip per limiter.
    Timeline,
    /// Attempts per bin, first attempts and retries stacked, a strip per
    /// limiter (when clients react).
    RetryTimeline,
    /// The share of all logical requests that succeeded with a time to
    /// success of at most x, per limiter (when clients react).
    TimeToSuccess,
    /// How the algorithms cut time at one instant.
    WindowsDiagram(WindowsDiagram),
    /// Band and violation probability against N.
    ErrorVsSlots,
    /// The most admitted in any interval of each length, against the exact
    /// rule's bound.
    AdmissionCurve,
    /// Where in (gap, offset) the limit breaks, for these slot counts.
    BurstPairMap(Vec<u64>),
    /// Peak/L and over-admission against the load factor.
    LoadSweep,
    /// Accuracy against state per key, at load point `i` of the load sweep.
    WhichLimiter(usize),
    /// Attempts per success, give-ups and time to success per retry table.
    RetryPolicies,
    /// Admitted per bin on each node, a strip per limiter on nodes.
    NodesTimeline,
    /// Offered per bin against what reached the backend per bin (admitted
    /// at once plus delayed ones released), a strip per limiter (when a
    /// limiter shapes).
    ShapingTimeline,
    /// The share of admitted requests whose added latency is at most x,
    /// per shaping limiter.
    DelayCdf,
    /// Peak/L and over-admission against the swept value, for topology
    /// sweep `i` of [`RunOutputs::topology`].
    TopologySweep(usize),
    /// Each seed's over-admission per limiter, its mean and the scenario's
    /// own seed marked.
    SeedSweep,
}

/// Everything a run produced, staged and not yet in place.
pub struct RunOutputs {
    staged: OutputDir,
    pub scenario: Scenario,
    pub report: Option<RunReport>,
    pub burst_pair: Option<BurstPairResult>,
    /// The burst-pair rows of the heat map: one per `[sweep] map_slots`
    /// entry, in its order.
    pub burst_pair_map: Option<BurstPairResult>,
    pub load: Option<Vec<LoadPoint>>,
    pub retry_policies: Option<Vec<RetryPolicyPoint>>,
    /// The seed sweep (`[sweep] seeds`).
    pub seeds: Option<SeedSweepResult>,
    /// The topology sweeps (`[sweep] nodes`, `rtts`, `sync_intervals`).
    pub topology: Vec<TopologySweepResult>,
    /// The charts to draw, in the order the report shows them.
    pub charts: Vec<Chart>,
    /// Data files written so far.
    files: Vec<String>,
    /// The command that makes these outputs again.
    command: String,
}

/// Runs `scenario` (its simulation and its sweeps) and writes its tables
/// into a staged output folder. Nothing is in place until
/// [`RunOutputs::commit`].
pub fn run(
    scenario: &Scenario,
    options: &RunOptions,
    step: &(dyn Fn(Step) + Sync),
) -> Result<RunOutputs, JobError> {
    let mut scenario = scenario.clone();
    if options.sweep_only && scenario.sweep.is_none() && scenario.topology_sweep.is_none() {
        if let Some(problem) = crate::scenario::default_sweep_problem(scenario.limit) {
            return Err(JobError::SweepDefaults { at: scenario.window_at.clone(), problem });
        }
        let grid = crate::sweep::burst_pair::DEFAULT_GRID;
        if let Some(problem) =
            crate::sweep::burst_pair::labelled_work_problem(scenario.limit, grid, &scenario.limiters)
        {
            return Err(JobError::SweepDefaults { at: scenario.window_at.clone(), problem });
        }
        let defaults = SweepOptions::defaults(scenario.limit);
        let problem = crate::sweep::work_problem(
            scenario.limit,
            &defaults,
            &scenario.limiters,
            "compare fewer limiters",
        )
        .map(crate::sweep::TooMuchWork::message);
        if let Some(problem) = problem {
            return Err(JobError::SweepDefaults { at: scenario.window_at.clone(), problem });
        }
        scenario.sweep = Some(defaults);
    }
    // Check the destination before any work is done: it is replaced whole,
    // so it must not hold what the run reads.
    let mut inputs = scenario.inputs();
    inputs.extend(options.inputs.iter().cloned());
    let staged = OutputDir::stage_apart_from(&options.out_dir, &inputs)?;
    let command = regenerate_command(&scenario_shown(&scenario.path), options.sweep_only, &options.overrides);
    let mut out = RunOutputs {
        staged,
        scenario,
        report: None,
        burst_pair: None,
        burst_pair_map: None,
        load: None,
        retry_policies: None,
        seeds: None,
        topology: Vec::new(),
        charts: Vec::new(),
        files: Vec::new(),
        command,
    };
    if !options.sweep_only && !out.scenario.traffic.is_empty() {
        out.simulate(options.decisions || out.scenario.output.decisions, step)?;
    }
    // One bar for all the sweeps, its length their work: a rerun sends
    // the open-loop arrivals the scenario's own run counted.
    let arrivals = out.report.as_ref().map(|r| r.arrivals);
    let report = |done, total| step(Step::Sweep { done, total });
    let tally = sweep::Tally::new(sweep::SweepWork::of(&out.scenario, arrivals).total(), &report);
    if let Some(opts) = out.scenario.sweep.clone() {
        out.sweep(&opts, arrivals, &tally)?;
    }
    if let Some(t) = out.scenario.topology_sweep.clone() {
        out.topology_sweep(&t, arrivals, &tally)?;
    }
    if options.charts {
        out.charts = out.plan_charts()?;
    }
    Ok(out)
}

impl RunOutputs {
    /// The staged folder, for the caller's chart files.
    pub fn staged(&self) -> &OutputDir {
        &self.staged
    }

    /// "name: description", for titles.
    fn title(&self) -> String {
        let s = &self.scenario;
        let title = format!("{}: {}", s.name, s.description.as_deref().unwrap_or(""));
        title.trim_end_matches([':', ' ']).to_string()
    }

    fn write(&mut self, file: &str, bytes: impl AsRef<[u8]>) -> Result<(), JobError> {
        self.staged.write(file, bytes)?;
        self.files.push(file.to_string());
        Ok(())
    }

    /// The simulation and its tables (and decisions.csv, streamed).
    fn simulate(&mut self, record: bool, step: &(dyn Fn(Step) + Sync)) -> Result<(), JobError> {
        let scenario = &self.scenario;
        let mut decisions = if record {
            let (specs, _) = engine::with_reference(&scenario.limiters);
            // Errors name the file where it would be once committed.
            let failed = |source| JobError::Output(self.staged.write_error("decisions.csv", source));
            let file = File::create(self.staged.path("decisions.csv")).map_err(failed)?;
            let columns = export::csv::DecisionColumns {
                attempts: simulate::clients(scenario).is_some(),
                delays: specs.iter().any(|s| s.delays()),
                nodes: scenario.nodes.is_some(),
            };
            let writer = export::csv::DecisionsWriter::new(
                BufWriter::with_capacity(1 << 20, file),
                &engine::labels(&specs),
                columns,
            )
            .map_err(failed)?;
            Some(writer)
        } else {
            None
        };
        let report = simulate::run_scenario(
            scenario,
            decisions.as_mut().map(|d| d as &mut dyn DecisionSink),
            &mut |p| step(Step::Simulate(p)),
        )
        .map_err(|source| match source {
            // A full disk, say: an output error, naming the file.
            RunError::Decisions(e) => JobError::Output(self.staged.write_error("decisions.csv", e)),
            source => JobError::Simulation {
                path: scenario.path.clone(),
                kept: self.staged.has_previous(),
                source: located(source, scenario),
            },
        })?;
        if let Some(d) = decisions {
            d.finish().map_err(|e| JobError::Output(self.staged.write_error("decisions.csv", e)))?;
        }
        let title = self.title();
        self.write("summary.csv", export::csv::summary(&report))?;
        let mut summary_md = export::markdown::summary(&title, &report);
        if let Some(t) = &self.scenario.nodes {
            summary_md.push_str(&export::markdown::nodes_summary(&report, t));
        }
        self.write("summary.md", summary_md)?;
        self.write("timeline.csv", export::csv::timeline(&report))?;
        if self.scenario.output.admission_curve {
            self.write("admission_curve.csv", export::csv::admission_curve(&report))?;
        }
        if self.scenario.nodes.is_some() {
            self.write("nodes.csv", export::csv::nodes(&report))?;
        }
        if record {
            self.files.push("decisions.csv".into());
        }
        self.report = Some(report);
        Ok(())
    }

    /// A failed sweep, with what became of the output folder.
    fn sweep_failed(&self, source: SweepError) -> JobError {
        JobError::Sweep {
            path: self.scenario.path.clone(),
            kept: self.staged.has_previous(),
            source: Box::new(source),
        }
    }

    /// The sweeps the `[sweep]` table asks for and their tables: the
    /// burst-pair and load sweeps, the retry-policy comparison.
    /// `arrivals`: the open-loop arrivals of the scenario's own run, if it
    /// ran (for the reruns' progress).
    fn sweep(
        &mut self,
        opts: &SweepOptions,
        arrivals: Option<u64>,
        tally: &sweep::Tally,
    ) -> Result<(), JobError> {
        let scenario = &self.scenario;
        let (limiters, _) = engine::with_reference(&scenario.limiters);
        let tick = |work| tally.add(work);
        let seed = scenario.seed;
        if opts.window_sweeps {
            let bp_config =
                BurstPairConfig { limit: scenario.limit, limiters: limiters.clone(), grid: opts.grid };
            let bp = sweep::burst_pair::run(&bp_config, &tick)
                .map_err(|e| self.sweep_failed(SweepError::BurstPair(e)))?;
            let map = burst_pair_map(&bp, &opts.map_slots, &tick)
                .map_err(|e| self.sweep_failed(SweepError::BurstPair(e)))?;
            let load_config = LoadSweepConfig {
                limit: scenario.limit,
                limiters,
                loads: opts.loads.clone(),
                duration: opts.load_duration,
                seed,
            };
            let load = sweep::load::run(&load_config, &tick)
                .map_err(|e| self.sweep_failed(SweepError::LoadSweep(e, opts.loads.len())))?;
            self.write("error_vs_slots.csv", export::csv::error_vs_slots(&bp))?;
            self.write("error_vs_slots.md", export::markdown::error_vs_slots(&bp))?;
            self.write("load_sweep.csv", export::csv::load_sweep(&load))?;
            self.write("load_sweep.md", export::markdown::load_sweep(&load, seed))?;
            self.burst_pair = Some(bp);
            self.burst_pair_map = Some(map);
            self.load = Some(load);
        }
        if !opts.retry_policies.is_empty() {
            let points = sweep::retry_policies::run(&self.scenario, &opts.retry_policies, arrivals, &tick)
                .map_err(|e| self.sweep_failed(SweepError::RetryPolicies(e, opts.retry_policies.len())))?;
            self.write("retry_policies.csv", export::csv::retry_policies(&points))?;
            self.write("retry_policies.md", export::markdown::retry_policies(&points, seed))?;
            self.retry_policies = Some(points);
        }
        if let Some(n) = opts.seeds {
            // A trace's rows are not known before a run reads them: the
            // bound the scenario was checked against left them out.
            let csv = self.scenario.traffic.iter().any(|t| matches!(t, crate::scenario::Traffic::Csv(_)));
            if let Some(read) = arrivals.filter(|_| csv) {
                let lanes = limiters_len(&self.scenario);
                let requests = sweep::work::rerun_requests(&self.scenario.traffic, Some(read));
                let counted = "the arrivals the scenario's own run read; retries not counted";
                if let Some(problem) =
                    sweep::seeds::work_problem(requests, lanes, n, counted, "compare fewer limiters")
                {
                    let at = opts.seeds_at.clone().unwrap_or_default();
                    return Err(self.sweep_failed(SweepError::SeedWork(format!("{at}: {problem}"))));
                }
            }
            let result = sweep::seeds::run(&self.scenario, n, arrivals, &tick)
                .map_err(|e| self.sweep_failed(SweepError::Seeds(e, n as usize)))?;
            self.write("seed_sweep.csv", export::csv::seed_sweep(&result))?;
            self.write("seed_sweep.md", export::markdown::seed_sweep(&result, &self.scenario))?;
            self.seeds = Some(result);
        }
        Ok(())
    }

    /// The topology sweeps and their tables: one CSV and one Markdown file
    /// per swept parameter.
    fn topology_sweep(
        &mut self,
        sweep: &TopologySweep,
        arrivals: Option<u64>,
        tally: &sweep::Tally,
    ) -> Result<(), JobError> {
        let results = sweep::topology::run(&self.scenario, sweep, arrivals, &|work| tally.add(work))
            .map_err(|e| self.sweep_failed(SweepError::TopologySweep(e, sweep.runs())))?;
        for r in &results {
            let file = r.parameter.file();
            self.write(&format!("{file}.csv"), export::csv::topology_sweep(r))?;
            self.write(&format!("{file}.md"), export::markdown::topology_sweep(r))?;
        }
        self.topology = results;
        Ok(())
    }

    /// The charts of a run on nodes and of the topology sweeps.
    fn plan_node_charts(&self, charts: &mut Vec<Chart>) {
        let name = self.scenario.name.as_str();
        if let (Some(r), Some(t)) = (&self.report, &self.scenario.nodes)
            && r.limiters.iter().any(|l| l.node_timeline.is_some())
        {
            let (bin, merged) = drawn_bins(r, None);
            let limit = match t.mode {
                crate::nodes::Mode::Local => format!(
                    "; each node's own limit is {} per {}",
                    t.per_node,
                    format_duration(r.limit.window)
                ),
                _ => String::new(),
            };
            charts.push(Chart {
                name: "nodes_timeline",
                caption: format!(
                    "Requests each node admitted per {bin} bin{merged}, a strip per limiter on nodes ({}){limit}, {name}",
                    t.describe()
                ),
                kind: ChartKind::NodesTimeline,
            });
        }
        for (i, result) in self.topology.iter().enumerate() {
            use crate::sweep::topology::Parameter;
            let caption = match result.parameter {
                Parameter::Nodes => format!(
                    "The same traffic on K nodes (per node: {}): peak/L and over-admission against K, with the analytic K × per node / L (dashed), {name}",
                    result.per_node.describe()
                ),
                Parameter::Rtt => format!(
                    "One central store: peak/L and over-admission against the requests arriving during one round trip (arrival rate × rtt), atomic (dashed) and get-then-set (solid), {name}"
                ),
                Parameter::SyncInterval => format!(
                    "Nodes syncing their counts: peak/L and over-admission against the sync interval, with K, each node at L and never synced (dashed): a bound only for exact limiters; a fixed window or slot counter lets up to 2 L into one exact window on each node, so theirs can pass K, {name}"
                ),
            };
            charts.push(Chart { name: result.parameter.file(), caption, kind: ChartKind::TopologySweep(i) });
        }
    }

    /// Which charts the outputs call for, with their captions.
    fn plan_charts(&self) -> Result<Vec<Chart>, JobError> {
        let mut charts = Vec::new();
        let name = self.scenario.name.as_str();
        if let Some(r) = &self.report {
            let window = format_duration(r.limit.window);
            // The chart merges bins for drawing as the timeline does; each
            // step is then the highest of the bins it merges.
            let (step, _) = drawn_bins(r, None);
            let f = r.timeline.chart_factor(None);
            let merged = if f > 1 {
                format!(", the highest of {f} {} bins of timeline.csv", format_duration(r.timeline.width()))
            } else {
                String::new()
            };
            charts.push(Chart {
                name: "window_count",
                caption: format!(
                    "Admitted requests in the exact window (t - {window}, t] (highest in each {step} step{merged}{k}) against the limit L = {l}, {name}",
                    l = r.limit.requests,
                    k = if r.keys > 1 { " over all clients: the worst client of each bin" } else { "" }
                ),
                kind: ChartKind::WindowCount,
            });
            charts.push(Chart {
                name: "timeline",
                caption: timeline_caption(r, name),
                kind: ChartKind::Timeline,
            });
            if r.limiters.iter().any(|l| l.clients.is_some()) {
                charts.extend(client_charts(r, name));
            }
            if r.limiters.iter().any(|l| l.delays.is_some()) {
                charts.extend(shaping_charts(r, name));
            }
            if self.scenario.output.admission_curve {
                charts.push(Chart {
                    name: "admission_curve",
                    caption: format!(
                        "Admission curve: the most requests each limiter admitted in any interval (t - tau, t], \
against the exact rule's bound L * ceil(tau / W) (dashed), L = {} per {window}, {name}",
                        r.limit.requests
                    ),
                    kind: ChartKind::AdmissionCurve,
                });
            }
            // Only where it replays what the run decided (see `WindowsDiagram::of_run`).
            if let Some(diagram) = WindowsDiagram::of_run(&self.scenario, r).map_err(JobError::Diagram)? {
                charts.push(windows_diagram(diagram, true));
            }
        }
        if let (Some(bp), Some(opts)) = (&self.burst_pair, &self.scenario.sweep) {
            // Only where some limiter sits on the N axis (`report.md` says
            // why there is none otherwise).
            if bp.on_n_axis() {
                charts.push(Chart {
                    name: "error_vs_slots",
                caption: format!(
                    "Burst pairs (2 × {} requests at single instants, {}×{} grid of gap and offset): measured vulnerable band \
and violation probability against N, with the analytic 1/N and 1/(2N); the sliding log is 0 on both",
                    bp.limit.requests, bp.grid, bp.grid
                ),
                    kind: ChartKind::ErrorVsSlots,
                });
            }
            let mut caption = "Where a burst pair breaks the limit: coloured (gap, offset) pairs admit 2L in one exact window, grey ones hold to L".to_string();
            if let Some(map) = &self.burst_pair_map {
                let reference: Vec<String> = map
                    .rows
                    .iter()
                    .filter(|r| !bp.rows.iter().any(|o| o.spec == r.spec))
                    .map(|r| r.label.clone())
                    .collect();
                if reference.len() == map.rows.len() {
                    caption.push_str(&format!(
                        ", for reference window limiters ({}), none of them among this scenario's limiters",
                        reference.join(", ")
                    ));
                } else if !reference.is_empty() {
                    caption.push_str(&format!(
                        "; panels marked (reference) ({}) are not among this scenario's limiters",
                        reference.join(", ")
                    ));
                }
            }
            charts.push(Chart {
                name: "burst_pair_map",
                caption,
                kind: ChartKind::BurstPairMap(opts.map_slots.clone()),
            });
            charts.push(Chart {
                name: "load_sweep",
                caption: "Poisson load sweep: over-admission (admitted / admitted by the sliding log - 1) and peak/L against the load factor".into(),
                kind: ChartKind::LoadSweep,
            });
            if let Some(i) = self.load.as_deref().and_then(which_limiter_load) {
                let load = self.load.as_deref().map_or(1.5, |l| l[i].load);
                charts.push(Chart {
                    name: "which_limiter",
                    caption: format!(
                        "Which limiter? Peak/L and over-admission in the load sweep's Poisson run at {} × L/W \
against the state each limiter holds per client key",
                        export::fmt_ratio(load)
                    ),
                    kind: ChartKind::WhichLimiter(i),
                });
            }
            if self.report.is_none()
                && let Some(diagram) = WindowsDiagram::of_burst_pair(&self.scenario)
            {
                let reference = diagram.reference_lanes(&self.scenario);
                let mut chart = windows_diagram(diagram, false);
                if !reference.is_empty() {
                    chart.caption.push_str(&match reference.len() {
                        1 => format!(
                            "; {} is a reference window limiter, not among this scenario's",
                            reference[0]
                        ),
                        _ => format!(
                            "; {} are reference window limiters, not among this scenario's",
                            reference.join(" and ")
                        ),
                    });
                }
                charts.push(chart);
            }
        }
        if let Some(points) = &self.retry_policies
            && let Some(first) = points.first()
        {
            charts.push(Chart {
                name: "retry_policies",
                caption: format!(
                    "Retry policies compared on the same traffic, limit {} per {}, for each retry table and \
limiter, taller always worse: attempts per success (top: every attempt, those of requests that gave up included, \
over the requests that succeeded), the share of requests that gave up (middle) and time to success of the \
successes (bottom: the bar is the longest, the ring the median; a pale bar goes on up to \"never\" where requests \
gave up)",
                    first.report.limit.requests,
                    format_duration(first.report.limit.window)
                ),
                kind: ChartKind::RetryPolicies,
            });
        }
        if let Some(result) = &self.seeds
            && result.rows().iter().any(|r| r.metric == sweep::seeds::Metric::OverAdmission)
        {
            charts.push(Chart {
                name: "seed_sweep",
                caption: format!(
                    "Over-admission (admitted / admitted by the sliding log - 1) of each limiter at each of {} \
seeds ({} to {}), one dot per seed: the bar is the mean, the ringed dot the scenario's own seed; two limiters \
whose dots do not overlap differ whatever the seed, {name}",
                    result.points.len(),
                    result.first_seed(),
                    result.last_seed()
                ),
                kind: ChartKind::SeedSweep,
            });
        }
        self.plan_node_charts(&mut charts);
        Ok(charts)
    }

    /// Writes `report.md`, linking for each chart of [`RunOutputs::charts`]
    /// the first file drawn (`drawn[i]`, empty when none was), and moves the
    /// staged folder into place. Returns where it went and the files written.
    pub fn commit(mut self, drawn: &[Vec<String>]) -> Result<Committed, JobError> {
        let chart_refs: Vec<ChartRef> = self
            .charts
            .iter()
            .zip(drawn)
            .filter_map(|(c, files)| {
                files.first().map(|f| ChartRef {
                    name: c.name.to_string(),
                    file: f.clone(),
                    caption: c.caption.clone(),
                })
            })
            .collect();
        let scenario_file = scenario_shown(&self.scenario.path);
        let report_md = export::report::report(&ReportInput {
            name: &self.scenario.name,
            description: self.scenario.description.as_deref(),
            scenario_file: &scenario_file,
            command: &self.command,
            seed: self.scenario.seed,
            limit: self.scenario.limit,
            run: self.report.as_ref(),
            clients: self.scenario.clients_sentence(),
            burst_pair: self.burst_pair.as_ref(),
            sweep_scope: sweep::window_sweeps_scope(&self.scenario),
            load: self.load.as_deref(),
            retry_policies: self.retry_policies.as_deref(),
            seeds: self.seeds.as_ref(),
            scenario: &self.scenario,
            nodes: self.scenario.nodes.as_ref(),
            topology: &self.topology,
            charts: &chart_refs,
            files: &self.files,
        });
        let replaced = self.replaced_results(&report_md);
        self.write("report.md", report_md)?;
        let target = self.staged.commit()?;
        let summary = export::text::run_summary(&export::text::SummaryInput {
            scenario: &self.scenario,
            report: self.report.as_ref(),
            burst_pair: self.burst_pair.as_ref(),
            load: self.load.as_deref(),
            retry_policies: self.retry_policies.as_deref(),
            seeds: self.seeds.as_ref(),
            topology: &self.topology,
            target: &target,
            files: &self.files,
            charts: chart_refs.len(),
        });
        Ok(Committed { target, summary, replaced })
    }

    /// The heading of the results the output folder held before, when they
    /// were another scenario's (or another name's): an earlier run wrote the
    /// folder, so it may be replaced, but `--out` may have named the wrong
    /// one, and the user is told whose results are gone.
    fn replaced_results(&self, report_md: &str) -> Option<String> {
        if !self.staged.has_previous() {
            return None;
        }
        let heading = |text: &str| text.lines().next().map(|l| l.trim_start_matches('#').trim().to_string());
        let old = std::fs::read_to_string(self.staged.target().join("report.md")).ok()?;
        let (old, new) = (heading(&old)?, heading(report_md)?);
        (!old.is_empty() && old != new).then_some(old)
    }
}

/// The lanes a run of `scenario` decides in: its limiters and the
/// sliding-log reference.
fn limiters_len(scenario: &Scenario) -> usize {
    engine::with_reference(&scenario.limiters).0.len()
}

/// How a sweep's runs share `--memory` ([`crate::simulate::share_memory`]).
fn side_by_side(runs: usize) -> String {
    if runs <= 1 {
        "one run, with all of --memory".to_string()
    } else {
        format!("{runs} runs that may run side by side, so each may use 1/{runs} of --memory")
    }
}

/// The scenario's path as the report shows it: the same bytes however it
/// was typed from the same folder (`./s.toml`, `s.toml`, or its absolute
/// path under the current folder are all `s.toml`), so a report does not
/// change with how the command was written.
fn scenario_shown(path: &std::path::Path) -> String {
    use std::path::Component;
    let cwd = std::env::current_dir().ok();
    let relative = cwd.as_deref().and_then(|d| path.strip_prefix(d).ok()).unwrap_or(path);
    let kept: std::path::PathBuf =
        relative.components().filter(|c| !matches!(c, Component::CurDir)).collect();
    if kept.as_os_str().is_empty() { path.display().to_string() } else { kept.display().to_string() }
}

/// The command that makes the same outputs: `ratesim run` or `ratesim
/// sweep`, the scenario file and the options that shaped them (not `--out`,
/// `--quiet` or `--memory`, which change where and how, not what).
fn regenerate_command(scenario_file: &str, sweep_only: bool, overrides: &[String]) -> String {
    let mut words = vec!["ratesim".to_string(), if sweep_only { "sweep" } else { "run" }.to_string()];
    words.push(shell_word(scenario_file));
    words.extend(overrides.iter().map(|w| shell_word(w)));
    words.join(" ")
}

/// `word` as a POSIX shell reads it back: as is when it holds nothing the
/// shell treats specially, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./,=:@%+".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The heat map's rows, one per `map_slots` entry: the sweep's own row where
/// the run has that N, a sweep of the N alone where it does not (so every
/// panel asked for is drawn).
fn burst_pair_map(
    bp: &BurstPairResult,
    map_slots: &[u64],
    tick: &(dyn Fn(u64) + Sync),
) -> Result<BurstPairResult, BurstPairError> {
    let specs =
        sweep::burst_pair::map_specs(&bp.rows.iter().map(|r| r.spec.clone()).collect::<Vec<_>>(), map_slots);
    let missing: Vec<LimiterSpec> =
        specs.iter().filter(|(_, found)| !found).map(|(s, _)| s.clone()).collect();
    let extra = if missing.is_empty() {
        Vec::new()
    } else {
        let config = BurstPairConfig { limit: bp.limit, limiters: missing, grid: bp.grid };
        sweep::burst_pair::run(&config, tick)?.rows
    };
    let mut extra = extra.into_iter();
    let rows = specs
        .iter()
        .map(|(spec, found)| match found {
            true => bp.rows.iter().find(|r| &r.spec == spec).cloned(),
            false => extra.next(),
        })
        .collect::<Option<Vec<_>>>()
        .expect("one row per map entry");
    Ok(BurstPairResult { limit: bp.limit, grid: bp.grid, rows })
}

/// The load point the "which limiter?" chart shows: load 1.5 (the
/// overload most comparisons quote), else the load nearest to it.
fn which_limiter_load(points: &[LoadPoint]) -> Option<usize> {
    (0..points.len()).min_by(|&a, &b| {
        let d = |i: usize| (points[i].load - 1.5).abs();
        d(a).total_cmp(&d(b))
    })
}

/// The bars a chart draws of the run's bins (merged so that they stay wide
/// enough to see: [`crate::timeline::Timeline::chart_factor`], none wider
/// than `widest`): their width, and for a caption, when merged, what they
/// are made of.
fn drawn_bins(r: &RunReport, widest: Option<crate::time::Nanos>) -> (String, String) {
    let f = r.timeline.chart_factor(widest);
    let drawn = format_duration(crate::time::Nanos::new(r.timeline.width().get() * f as u64));
    let note = if f > 1 {
        format!(" (the {} bins of timeline.csv, {f} to a bar)", format_duration(r.timeline.width()))
    } else {
        String::new()
    };
    (drawn, note)
}

/// The bins the `timeline` chart zooms to, when the traffic occupies a
/// small part of the run: every offered request in at most a tenth of it
/// (the boundary burst: 20 ms of 3 s, its rejected requests a sliver 4 px
/// wide), and that span with twice its length on either side in at most
/// [`crate::timeline::CHART_MAX_BINS`] bins, each drawn as it is. `None`:
/// the whole run.
pub fn timeline_zoom(
    timeline: &crate::timeline::Timeline,
    end: crate::time::Nanos,
) -> Option<std::ops::Range<usize>> {
    let bins = timeline.bins();
    let busy = |row: &[crate::timeline::Bin]| row.iter().any(|b| b.offered > 0);
    let first = bins.iter().position(busy)?;
    let last = bins.len() - 1 - bins.iter().rev().position(busy)?;
    let span = last + 1 - first;
    let width = timeline.width().get();
    if (span as u64).saturating_mul(width).saturating_mul(10) > end.get() {
        return None;
    }
    let zoom = first.saturating_sub(2 * span)..(last + 1 + 2 * span).min(bins.len());
    (zoom.len() <= crate::timeline::CHART_MAX_BINS).then_some(zoom)
}

/// The bars the `timeline` chart draws: the run's bins as they are around
/// the traffic when it zooms ([`timeline_zoom`]), else all of them merged
/// for drawing; the range of them it shows; and the count at which it cuts
/// its offered bars, if it does ([`cut_level`]).
pub struct TimelineBars<'a> {
    pub bars: std::borrow::Cow<'a, crate::timeline::Timeline>,
    pub shown: std::ops::Range<usize>,
    pub cut: Option<u64>,
}

/// The `timeline` chart's bars ([`TimelineBars`]) of a run.
pub fn timeline_bars(r: &RunReport) -> TimelineBars<'_> {
    let (bars, shown) = match timeline_zoom(&r.timeline, r.end) {
        Some(z) => (std::borrow::Cow::Borrowed(&r.timeline), z),
        None => {
            let merged = r.timeline.merged(r.timeline.chart_factor(None));
            let all = 0..merged.bins().len();
            (std::borrow::Cow::Owned(merged), all)
        }
    };
    let rows = bars.bins();
    let bins = || shown.clone().flat_map(|b| rows[b].iter().zip(&r.limiters));
    let offered: Vec<u64> = bins().map(|(bin, _)| bin.offered).collect();
    let drawn = bins().map(|(bin, l)| timeline_drawn(l, bin)).max().unwrap_or(0);
    let cut = cut_level(&offered, drawn);
    TimelineBars { bars, shown, cut }
}

/// What the `timeline` chart draws of a limiter's bin: for one that may
/// delay, the requests that reached the backend in it (a shaping
/// limiter's bars are its shaping, not the burst it admitted to wait);
/// else those it admitted.
pub fn timeline_drawn(l: &crate::metrics::LimiterReport, b: &crate::timeline::Bin) -> u64 {
    if l.delays.is_some() { b.backend() } else { b.admitted }
}

/// The share of the non-empty offered bars that the `timeline` chart may
/// cut, at most.
pub const TIMELINE_CUT_SHARE: f64 = 0.05;

/// How far above the [`TIMELINE_CUT_SHARE`] bar the cut may rise to spare
/// bars only a little taller: 15 %.
pub const TIMELINE_CUT_SLACK: f64 = 0.15;

/// Where the `timeline` chart cuts its offered bars (`offered`, every
/// strip's), if anywhere. Its scale is linear, so that each admitted bar
/// is its true share of the offered one (on a log scale 10 admitted of 60
/// offered filled two thirds of the bar). Set by the tallest offered bar,
/// it would leave the tallest drawn (admitted) bar, `drawn`, under a fifth
/// of the height when a few tall bars stand out (100 closed clients
/// starting together, 224 a bar against some 60 later and 10 admitted;
/// the first herd of AWS's backoff experiment, 268; the 837 attempts of an
/// outage's herd against GCRA, where 119 admitted in a bar is the most and
/// a linear scale to 837 flattened the steady traffic of some 16 a bar
/// into the axis): then the scale is set
/// by the bar that at most [`TIMELINE_CUT_SHARE`] of the non-empty offered
/// bars pass, or by the tallest drawn bar if that is taller, raised to the
/// tallest bar within [`TIMELINE_CUT_SLACK`] of it (the axis has room above
/// the cut: a bar of 88 was cut at 87 under a top of 120), and the bars
/// above it are cut. `None`: no bar is cut.
pub fn cut_level(offered: &[u64], drawn: u64) -> Option<u64> {
    let &top = offered.iter().max()?;
    if drawn.saturating_mul(5) >= top {
        return None;
    }
    let mut busy: Vec<u64> = offered.iter().copied().filter(|&o| o > 0).collect();
    busy.sort_unstable();
    // Nearest rank: at most the share of the bars lie above it.
    let rank = ((busy.len() as f64 * (1.0 - TIMELINE_CUT_SHARE)).ceil() as usize).clamp(1, busy.len());
    let level = busy[rank - 1].max(drawn);
    let slack = level.saturating_add((level as f64 * TIMELINE_CUT_SLACK) as u64);
    let level = busy.iter().copied().filter(|&b| b <= slack).max().unwrap_or(level).max(level);
    (level < top).then_some(level)
}

/// The `timeline` chart's caption: its bars, the part of the run it shows
/// ([`timeline_zoom`]), and what it draws for a limiter that may delay.
fn timeline_caption(r: &RunReport, name: &str) -> String {
    let (drawn, merged, zoom) = match timeline_zoom(&r.timeline, r.end) {
        Some(z) => {
            let at = |b: usize| {
                format_duration(crate::time::Nanos::new((b as u64).saturating_mul(r.timeline.width().get())))
            };
            let zoom = format!(
                ", zoomed to {} to {}, where all the traffic is (the run is {} long)",
                at(z.start),
                at(z.end),
                format_duration(r.end)
            );
            (format_duration(r.timeline.width()), String::new(), zoom)
        }
        None => {
            let (drawn, merged) = drawn_bins(r, None);
            (drawn, merged, String::new())
        }
    };
    let delays = if r.limiters.iter().any(|l| l.delays.is_some()) {
        "; a limiter that may delay is drawn where its requests reached the backend: admitted at once, plus \
delayed ones whose wait ended in the bin"
    } else {
        ""
    };
    let cut = match timeline_bars(r).cut {
        Some(level) => format!(
            "; on a linear scale, so that each admitted bar is its true share of the offered one, offered bars \
taller than {level} (the tallest 1 in {} or fewer) cut there, the count of the tallest of each run written beside it",
            (1.0 / TIMELINE_CUT_SHARE).round()
        ),
        None => String::new(),
    };
    format!("Offered and admitted requests per {drawn} bin{merged}{zoom}{delays}{cut}, {name}")
}

/// How much taller than the median non-empty bar the tallest bar of the
/// `retry_timeline` chart may be on a linear scale: past it, the chart is
/// on a square-root scale ([`retry_timeline_sqrt`]).
pub const RETRY_TIMELINE_LINEAR_UP_TO: u64 = 50;

/// Whether the `retry_timeline` chart draws its bars on a square-root
/// scale: when the tallest bar is more than [`RETRY_TIMELINE_LINEAR_UP_TO`]
/// times the median non-empty bar, on a linear scale half the bars would
/// be a pixel or two tall (AWS's backoff experiment: a first herd of 224
/// attempts, then a tail of 1 or 2 a bin for 25 s; after an outage, herds
/// of hundreds over 8 first attempts a bin). The retry storms whose herds
/// are the point (602 over a median of 29, 434 over 17) stay linear. The
/// bars are those the chart draws: never merged past a tenth of the
/// window.
pub fn retry_timeline_sqrt(r: &RunReport) -> bool {
    let bars = r.timeline.merged(r.timeline.chart_factor(r.timeline.boundary_bars(r.limit.window)));
    squeezed_on_a_linear_scale(bars.bins().iter().flatten().map(|b| b.offered))
}

/// Whether the tallest of `bars` is more than
/// [`RETRY_TIMELINE_LINEAR_UP_TO`] times the median of the non-empty ones
/// (the lower median of an even count).
fn squeezed_on_a_linear_scale(bars: impl Iterator<Item = u64>) -> bool {
    let mut busy: Vec<u64> = bars.filter(|&b| b > 0).collect();
    busy.sort_unstable();
    match (busy.get(busy.len().saturating_sub(1) / 2), busy.last()) {
        (Some(&median), Some(&top)) => median.saturating_mul(RETRY_TIMELINE_LINEAR_UP_TO) < top,
        _ => false,
    }
}

/// The charts of a run whose clients react: the retry timeline and the
/// time-to-success distribution.
fn client_charts(r: &RunReport, name: &str) -> [Chart; 2] {
    let bin = format_duration(r.timeline.width());
    // Never merged past a tenth of the window where the bins are finer.
    let (drawn, merged) = drawn_bins(r, r.timeline.boundary_bars(r.limit.window));
    let window = format_duration(r.limit.window);
    // Retries that a header sends back together land at one instant; bins
    // wider than a tenth of the window smear them over the window.
    let coarse = if r.timeline.width().get().saturating_mul(10) > r.limit.window.get() {
        format!(
            ". Bins of {bin} are wider than a tenth of the {window} window: too coarse to show retries \
bunching at window boundaries (set [output] bin)"
        )
    } else if r.timeline.boundary_bars(r.limit.window).is_none() {
        format!(
            ". Bars a tenth of the {window} window wide would be more than {} across the chart, too thin to \
see: merged wider, they do not show retries bunching at window boundaries (timeline.csv keeps the {bin} \
bins; a shorter run draws them)",
            crate::timeline::CHART_MAX_NARROW_BINS
        )
    } else {
        String::new()
    };
    let sqrt = if retry_timeline_sqrt(r) {
        format!(
            "; on a square-root scale (the axis labels are counts), so that bins of a few attempts show beside \
the tallest, which holds more than {RETRY_TIMELINE_LINEAR_UP_TO} times the median non-empty bin; within a bar, \
grey and colour split its height in proportion to first attempts and retries"
        )
    } else {
        String::new()
    };
    [
        Chart {
            name: "retry_timeline",
            caption: format!(
                "Attempts per {drawn} bin{merged}, one strip per limiter: first attempts (grey) and retries (the limiter's \
colour) stacked; retries sent back together stand out as spikes{sqrt}, {name}{coarse}"
            ),
            kind: ChartKind::RetryTimeline,
        },
        Chart {
            name: "time_to_success",
            caption: format!(
                "Time to success (first attempt to admitted attempt): the share of all logical requests that \
succeeded within x, per limiter, each curve level at its succeeded share (requests that gave up or were \
unfinished never succeed); the requests admitted on their first attempt (time 0) are where each curve starts \
at the left edge. The legend's median is of all requests, those that never succeeded counted as never, not \
the table's time to success p50, which is of the successes only, {name}"
            ),
            kind: ChartKind::TimeToSuccess,
        },
    ]
}

/// The charts of a run with a shaping limiter: what reached the backend
/// per bin, and the distribution of the added latency.
fn shaping_charts(r: &RunReport, name: &str) -> [Chart; 2] {
    let (bin, merged) = drawn_bins(r, None);
    let width = r.timeline.width().get() * r.timeline.chart_factor(None) as u64;
    let window = format_duration(r.limit.window);
    let rate = crate::export::fmt_ratio(r.limit.requests as f64 * width as f64 / r.limit.window.get() as f64);
    [
        Chart {
            name: "shaping_timeline",
            caption: format!(
                "Requests offered (grey) and requests that reached the backend (colour) per {bin} bin{merged}, one strip per \
limiter: a delayed request counts in the bin where its wait ends, so a limiter that shapes turns a burst into a run \
of bins near the rate, {} per {window} = {rate} per bin (dashed); every strip has the same scale, and offered bins \
taller than it are cut, with their count written on top, {name}",
                r.limit.requests
            ),
            kind: ChartKind::ShapingTimeline,
        },
        Chart {
            name: "delay_cdf",
            caption: format!(
                "Added latency of the admitted requests, per limiter that may delay: the share of admitted requests \
that waited at most x before reaching the backend; requests passed at once wait 0, where each curve starts; a \
dashed curve lies on the curve of the limiter its legend names (within a point, or a few pixels sideways), {name}"
            ),
            kind: ChartKind::DelayCdf,
        },
    ]
}

/// The windows diagram's chart: of a run (`of_run`), whose lanes are the
/// run's own limiters and decisions, or of the sweeps' burst pair.
fn windows_diagram(diagram: WindowsDiagram, of_run: bool) -> Chart {
    let cuts = diagram.cut_names().join(", ");
    let caption = match (of_run, diagram.client) {
        (false, _) => {
            format!(
                "How each algorithm cuts time: {cuts}, and the exact window (t* - W, t*] at one instant t*"
            )
        }
        (true, client) => format!(
            "How the run's window limiters cut time ({cuts}; the exact window (t* - W, t*] last) at the instant t* \
where the top row admits most in one exact window{}; every request is decided as in the run",
            client.map_or(String::new(), |c| format!(
                ", with the requests of client {c}, where that happens (each client has limiters of its own)"
            ))
        ),
    };
    Chart { name: "windows_diagram", caption, kind: ChartKind::WindowsDiagram(diagram) }
}

/// A run's results, in place.
pub struct Committed {
    pub target: PathBuf,
    /// What the terminal shows after a run: the tables, a pivot of each
    /// load or topology sweep, and where they went
    /// ([`export::text::run_summary`]).
    pub summary: String,
    /// The heading of the results the folder held before, when they were
    /// another scenario's: they are gone, and the user should hear so.
    pub replaced: Option<String>,
}

/// A run error that a scenario key caused, told where the key is.
fn located(error: RunError, scenario: &Scenario) -> RunError {
    match error {
        RunError::Timeline(mut t) => {
            t.key_at.clone_from(&scenario.output.bin_at);
            t.reacting =
                !scenario.retry_descriptions().is_empty() || !scenario.closed_populations().is_empty();
            RunError::Timeline(t)
        }
        RunError::Keys { keys, from: None, bytes, held, budget, lanes, nodes } => {
            RunError::Keys { keys, from: keyed_sources(scenario), bytes, held, budget, lanes, nodes }
        }
        other => other,
    }
}

/// The sources whose requests belong to client keys, as the scenario sets
/// them: "`traffic[0].clients` = 1000000", "`traffic[1].key_column` =
/// \"user\" (trace.csv)".
fn keyed_sources(scenario: &Scenario) -> Option<String> {
    use crate::scenario::Traffic;
    let named: Vec<String> = scenario
        .traffic
        .iter()
        .enumerate()
        .filter_map(|(i, t)| match t {
            Traffic::Poisson { clients: Some((n, _)), .. } => Some(format!("`traffic[{i}].clients` = {n}")),
            Traffic::Csv(opts) => opts.key_column.as_ref().map(|k| {
                format!(
                    "`traffic[{i}].key_column` = {} ({})",
                    crate::shown::string(k),
                    crate::shown::path(&opts.path)
                )
            }),
            _ => None,
        })
        .collect();
    (!named.is_empty()).then(|| named.join(" and "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Nanos;
    use crate::timeline::{Bin, Timeline};

    /// The retry timeline goes to a square-root scale when its tallest bar
    /// is more than 50 times the median non-empty one: empty bars do not
    /// count, an even count takes the lower median, and 50 times is still
    /// linear.
    #[test]
    fn a_few_tall_bars_over_a_low_median_put_the_retry_timeline_on_a_square_root_scale() {
        let sqrt = |bars: &[u64]| squeezed_on_a_linear_scale(bars.iter().copied());
        // backoff's shape: a herd of 224, then bars of 1 or 2.
        assert!(sqrt(&[224, 60, 2, 0, 0, 1, 2, 1, 0, 1]));
        // Exactly 50 times the median: linear; one more: square root.
        assert!(!sqrt(&[100, 2, 2, 0, 0, 0]));
        assert!(sqrt(&[101, 2, 2, 0, 0, 0]));
        // Four non-empty bars: the median is the second, 2 (not 3).
        assert!(sqrt(&[1, 2, 4, 101]));
        assert!(!sqrt(&[1, 3, 4, 101]));
        // A retry storm whose herds are the point: 602 over a median of 29.
        assert!(!sqrt(&[29, 602, 29, 30, 28, 400, 31]));
        assert!(!sqrt(&[]) && !sqrt(&[0, 0]) && !sqrt(&[7]));
    }

    /// A timeline of 10 ms bins to `end`, offered requests in `busy`.
    fn timeline(end_ms: u64, busy: &[usize]) -> Timeline {
        let mut tl = Timeline::new(Some(Nanos::from_millis(10)), 1);
        tl.extend_to(Nanos::from_millis(end_ms), |_, _| 0).unwrap();
        for &b in busy {
            tl.add(b, 0, &Bin { offered: 100, ..Bin::default() });
        }
        tl
    }

    /// backoff_closed: a warm-up of 224, 221, 145, 122 and 96 offered, then
    /// some 60 a bar (up to 94), 10 admitted: the 95th percentile is 94,
    /// raised to 96, the tallest bar within 15 % of it; the four taller
    /// warm-up bars are cut, the admitted bars keep a tenth of the height.
    /// backoff: a first herd of 268, 80, 52 ... and a tail of a few, 10
    /// admitted at most: the first bar is cut. outage_recovery: one bar of
    /// 837 attempts against 119 admitted at most is cut (under a fifth of
    /// its height); retry_storm's herds of 200 to 600 against 100 admitted
    /// are cut too, at 194 (1 in 20 busy bars is taller). Where admitted bars
    /// are a fifth of the tallest offered one or more (the boundary burst,
    /// 200 against 100), or cutting would cut nothing: none.
    #[test]
    fn the_timeline_cuts_a_few_tall_offered_bars_only_where_they_squeeze_the_rest() {
        let mut closed: Vec<u64> = vec![224, 221, 145, 122, 96];
        closed.extend((0..115).map(|k| 45 + (k * 37) % 50));
        assert_eq!(cut_level(&closed, 10), Some(96));
        // A bar past the slack (109 > 94 + 15 %) is cut, the level kept.
        closed[4] = 109;
        assert_eq!(cut_level(&closed, 10), Some(94));
        let mut herd: Vec<u64> = vec![268, 80, 52, 35, 29, 23, 15, 13, 17, 16, 15, 12, 7, 8, 8, 6, 7, 9];
        herd.extend([0; 20]);
        herd.extend([2, 5, 3, 1, 2, 4, 3, 2, 1, 3, 2, 1, 1, 2, 3, 1, 2, 1, 1, 2]);
        // 38 bars not empty: the tallest one (1 in 20 of them) is cut.
        assert_eq!(cut_level(&herd, 10), Some(80));
        assert_eq!(cut_level(&[200, 200, 0, 0], 100), None);
        assert_eq!(cut_level(&[600, 30, 30, 30], 100), None);
        // Under a fifth: cut, at the tallest drawn bar (the rest are under it).
        let mut outage = vec![837, 119, 40];
        outage.extend([16; 60]);
        assert_eq!(cut_level(&outage, 119), Some(119));
        // A fifth exactly: not cut.
        outage[0] = 595;
        assert_eq!(cut_level(&outage, 119), None);
        // Every bar alike, 25 times what gets through: nothing to cut.
        assert_eq!(cut_level(&[250; 40], 10), None);
        // Never under the tallest drawn bar.
        assert_eq!(
            cut_level(
                &[1000, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20],
                50
            ),
            Some(50)
        );
        assert_eq!(cut_level(&[], 0), None);
        assert_eq!(cut_level(&[0, 0], 0), None);
    }

    /// The boundary burst: all of it in bins 99 and 100 (990 to 1010 ms) of
    /// a 3 s run: the chart shows 950 to 1050 ms. Traffic over the whole
    /// run, over more than a tenth of it, or none: the whole run.
    #[test]
    fn the_timeline_zooms_to_traffic_in_a_small_part_of_the_run() {
        let end = Nanos::from_secs(3);
        assert_eq!(timeline_zoom(&timeline(3000, &[99, 100]), end), Some(95..105));
        // At the very start: the zoom stops at 0.
        assert_eq!(timeline_zoom(&timeline(3000, &[0, 1]), end), Some(0..6));
        assert_eq!(timeline_zoom(&timeline(3000, &[0, 299]), end), None);
        assert_eq!(timeline_zoom(&timeline(3000, &(100..131).collect::<Vec<_>>()), end), None);
        assert_eq!(timeline_zoom(&timeline(3000, &[]), end), None);
        // A tenth of a long run, but more bins than a chart draws: whole.
        let long = Nanos::from_secs(100);
        assert_eq!(timeline_zoom(&timeline(100_000, &[1000, 1099]), long), None);
    }
}
