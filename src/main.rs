mod charts;
mod cli;

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use charts::windows_diagram::WindowsDiagram;
use charts::{Chart, ChartSet, Format};
use cli::{ChartFormat, Cli, Command, RunArgs};
use ratesim::engine::{self, Progress};
use ratesim::export::report::{ChartRef, ReportInput};
use ratesim::export::{self, OutputDir};
use ratesim::scenario::Scenario;
use ratesim::scenario::SweepOptions;
use ratesim::simulate;
use ratesim::sweep::{self, BurstPairConfig, BurstPairResult, LoadSweepConfig};
use ratesim::time::Nanos;
use ratesim::time::format_duration;
use ratesim::trace::Merge;

fn main() -> ExitCode {
    // Ctrl-C: remove the staging folder, keep the previous results, exit 130.
    let _ = ctrlc::set_handler(|| {
        let held = ratesim::export::abandon_all_staging(); // held until exit
        eprintln!("interrupted{}", if held.removed() > 0 { "; previous results kept" } else { "" });
        std::process::exit(130);
    });
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let mut msg = format!("error: {e}");
            for cause in e.chain().skip(1) {
                msg.push_str(&format!("\n  caused by: {cause}"));
            }
            let _ = writeln!(io::stderr(), "{msg}");
            ExitCode::from(1)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe))
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(args) => run(args, false),
        Command::Sweep(args) => run(args, true),
        Command::Check(args) => check(&args.scenario),
        Command::Completions { shell } => {
            let (mut cmd, mut script) = (<Cli as clap::CommandFactory>::command(), Vec::new());
            clap_complete::generate(shell, &mut cmd, "ratesim", &mut script);
            Ok(io::stdout().write_all(&script)?)
        }
    }
}

/// `ratesim check`: see [`ratesim::check`].
fn check(path: &Path) -> Result<()> {
    let scenario = Scenario::load(path)?;
    let traces = ratesim::check::check_traces(&scenario)?;
    let mut out = io::stdout().lock();
    out.write_all(ratesim::check::summary(&scenario, &traces).as_bytes())?;
    out.flush()?;
    Ok(())
}

/// A progress bar that appears only when a run takes a while and stderr is a
/// terminal.
struct RunProgress {
    bar: ProgressBar,
    started: Instant,
    shown: bool,
    enabled: bool,
    end_ns: Option<u64>,
}

impl RunProgress {
    fn new(quiet: bool, end_ns: Option<u64>) -> RunProgress {
        let bar = ProgressBar::with_draw_target(end_ns, ProgressDrawTarget::hidden());
        RunProgress {
            bar,
            started: Instant::now(),
            shown: false,
            enabled: !quiet && io::stderr().is_terminal(),
            end_ns,
        }
    }

    fn update(&mut self, p: Progress) {
        if !self.enabled {
            return;
        }
        if !self.shown && self.started.elapsed() > Duration::from_millis(300) {
            self.shown = true;
            let style = if self.end_ns.is_some() {
                ProgressStyle::with_template("{spinner} [{bar:25}] {percent:>3}% {msg} {elapsed}")
            } else {
                ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            };
            self.bar.set_style(style.expect("valid template").progress_chars("=> "));
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        if let Some(end) = self.end_ns {
            self.bar.set_position(p.now.get().min(end));
        }
        self.bar.set_message(format!("{} arrivals, t = {:.1} s", p.arrivals, p.now.as_secs_f64()));
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

fn run(args: RunArgs, sweep_only: bool) -> Result<()> {
    let mut scenario = Scenario::load(&args.scenario)?;
    if let Some(slots) = &args.slots {
        scenario.set_slots(slots).map_err(anyhow::Error::msg).context("--slots")?;
    }
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    if sweep_only && scenario.sweep.is_none() {
        scenario.sweep = Some(SweepOptions::defaults(scenario.limit));
    }
    let do_run = !sweep_only && !scenario.traffic.is_empty();
    let write_decisions = do_run && (args.decisions || scenario.output.decisions);
    let out_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("output").join(&scenario.name));
    let chart_set = ChartSet {
        formats: if args.no_charts {
            Vec::new()
        } else {
            let mut f: Vec<Format> = args
                .format
                .iter()
                .map(|f| match f {
                    ChartFormat::Svg => Format::Svg,
                    ChartFormat::Png => Format::Png,
                })
                .collect();
            f.dedup();
            f
        },
    };
    if !chart_set.formats.is_empty() {
        let font = args.font.as_deref().or(scenario.output.font.as_deref());
        charts::init_fonts(font).context("cannot load the chart font")?;
        // Chart titles carry the scenario name; warn when the embedded font
        // cannot draw it (the seeds' scenarios may be named in Chinese).
        if font.is_none() && !args.quiet && chart_set.formats.contains(&Format::Png) {
            let missing = charts::missing_glyphs(&scenario.name);
            if !missing.is_empty() {
                let sample: String = missing.iter().take(8).collect();
                eprintln!(
                    "warning: the embedded chart font (DejaVu Sans) has no glyphs for \"{sample}\" in the \
scenario name; PNG titles will show boxes. Pass --font FILE.ttf (or [output] font) with a font that has them."
                );
            }
        }
    }

    // Check the destination before any work is done.
    let staged = OutputDir::stage(&out_dir)?;
    let mut files: Vec<String> = Vec::new();
    let mut chart_refs: Vec<ChartRef> = Vec::new();

    let report = if do_run {
        let (specs, _) = engine::with_reference(&scenario.limiters);
        let labels = engine::labels(&specs);
        let mut decisions = if write_decisions {
            let path = staged.path("decisions.csv");
            let file = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
            Some(export::csv::DecisionsWriter::new(BufWriter::with_capacity(1 << 20, file), &labels)?)
        } else {
            None
        };

        let mut progress = RunProgress::new(args.quiet, simulate::known_end(&scenario).map(|n| n.get()));
        let report = simulate::run_scenario(
            &scenario,
            decisions.as_mut().map(|d| d as &mut dyn engine::DecisionSink),
            &mut |p| progress.update(p),
        );
        progress.finish();
        let report = report.with_context(|| {
            format!("scenario {} failed; previous results were kept", args.scenario.display())
        })?;
        if let Some(d) = decisions {
            d.finish().context("cannot write decisions.csv")?;
        }
        let title = format!("{}: {}", scenario.name, scenario.description.as_deref().unwrap_or(""));
        let title = title.trim_end_matches([':', ' ']).to_string();
        staged.write("summary.csv", export::csv::summary(&report))?;
        staged.write("summary.md", export::markdown::summary(&title, &report))?;
        staged.write("timeline.csv", export::csv::timeline(&report))?;
        files.extend(["summary.csv", "summary.md", "timeline.csv"].map(String::from));
        if write_decisions {
            files.push("decisions.csv".into());
        }
        Some(report)
    } else {
        None
    };

    let (burst_pair, load) = match &scenario.sweep {
        Some(opts) => {
            let (bp, load) = run_sweeps(&scenario, opts, args.quiet)?;
            staged.write("error_vs_slots.csv", export::csv::error_vs_slots(&bp))?;
            staged.write("error_vs_slots.md", export::markdown::error_vs_slots(&bp))?;
            staged.write("load_sweep.csv", export::csv::load_sweep(&load))?;
            staged.write("load_sweep.md", export::markdown::load_sweep(&load, scenario.seed))?;
            files.extend(
                ["error_vs_slots.csv", "error_vs_slots.md", "load_sweep.csv", "load_sweep.md"]
                    .map(String::from),
            );
            (Some(bp), Some(load))
        }
        None => (None, None),
    };

    if !chart_set.formats.is_empty() {
        let mut add = |files: Vec<String>, name: &str, caption: String| {
            // The report links the first format (SVG by default).
            if let Some(first) = files.first() {
                chart_refs.push(ChartRef { name: name.to_string(), file: first.clone(), caption });
            }
        };
        let name = scenario.name.as_str();
        if let Some(report) = &report {
            let c = charts::window_count::WindowCount { scenario: name, report };
            add(charts::write(&staged, &chart_set, &c)?, c.name(), c.caption());
            let c = charts::timeline::Timeline { scenario: name, report };
            add(charts::write(&staged, &chart_set, &c)?, c.name(), c.caption());
            let c = run_diagram(&scenario, report)?;
            add(charts::write(&staged, &chart_set, &c)?, c.name(), c.caption());
        }
        if let (Some(bp), Some(load), Some(opts)) = (&burst_pair, &load, &scenario.sweep) {
            let c = charts::error_vs_slots::ErrorVsSlots { result: bp };
            add(charts::write(&staged, &chart_set, &c)?, c.name(), c.caption());
            let c = charts::burst_pair_map::BurstPairMap { result: bp, slots: &opts.map_slots };
            add(charts::write(&staged, &chart_set, &c)?, c.name(), c.caption());
            let c = charts::load_sweep::LoadSweep { points: load };
            add(charts::write(&staged, &chart_set, &c)?, c.name(), c.caption());
            if report.is_none() {
                let c = pair_diagram(&scenario);
                add(charts::write(&staged, &chart_set, &c)?, c.name(), c.caption());
            }
        }
    }

    let scenario_file = args.scenario.display().to_string();
    let report_md = export::report::report(&ReportInput {
        name: &scenario.name,
        description: scenario.description.as_deref(),
        scenario_file: &scenario_file,
        seed: scenario.seed,
        limit: scenario.limit,
        run: report.as_ref(),
        burst_pair: burst_pair.as_ref(),
        load: load.as_deref(),
        charts: &chart_refs,
        files: &files,
    });
    staged.write("report.md", report_md)?;
    files.push("report.md".into());
    let n_charts = chart_refs.len();
    let target = staged.commit()?;

    if !args.quiet {
        print_summary(&scenario, report.as_ref(), burst_pair.as_ref(), &target, &files, n_charts)?;
    }
    Ok(())
}

/// Runs the burst-pair and load sweeps with one progress bar.
fn run_sweeps(
    scenario: &Scenario,
    opts: &SweepOptions,
    quiet: bool,
) -> Result<(BurstPairResult, Vec<sweep::LoadPoint>)> {
    let (limiters, _) = engine::with_reference(&scenario.limiters);
    let bp_config = BurstPairConfig { limit: scenario.limit, limiters: limiters.clone(), grid: opts.grid };
    let rows = (limiters.len() as u64) * u64::from(opts.grid);
    let bar = if !quiet && io::stderr().is_terminal() {
        let bar = ProgressBar::new(rows + opts.loads.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {percent}% ({elapsed})")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    bar.set_message("burst-pair sweep");
    let bp = sweep::burst_pair::run(&bp_config, &|_| bar.inc(1)).context("burst-pair sweep")?;
    bar.set_message("load sweep");
    let load_config = LoadSweepConfig {
        limit: scenario.limit,
        limiters,
        loads: opts.loads.clone(),
        duration: opts.load_duration,
        seed: scenario.seed,
    };
    let load = sweep::load::run(&load_config, &|_| bar.inc(1)).context("load sweep")?;
    bar.finish_and_clear();
    Ok((bp, load))
}

/// The slot count a windows diagram shows: the scenario's first slot counter
/// with few enough slots to see and more than 3, else 10.
fn diagram_slots(scenario: &Scenario) -> u64 {
    scenario.limiters.iter().filter_map(|l| l.slots()).find(|n| (4..=20).contains(n)).unwrap_or(10)
}

/// The windows diagram of a run: the scenario's arrivals around the instant
/// where the fixed window admits most in one exact window.
fn run_diagram(scenario: &Scenario, report: &ratesim::RunReport) -> Result<WindowsDiagram> {
    const MAX_ARRIVALS: usize = 1_000_000;
    let mut arrivals = Vec::new();
    for a in Merge::new(simulate::sources(scenario)?) {
        let t = a?.time;
        if t >= report.end || arrivals.len() >= MAX_ARRIVALS {
            break;
        }
        arrivals.push(t);
    }
    let title = format!("{}: how the algorithms cut time", scenario.name);
    Ok(WindowsDiagram::around_worst(title, scenario.limit, diagram_slots(scenario), arrivals))
}

/// The windows diagram of a sweep: one burst pair that breaks both the fixed
/// window and N slots (gap W - s/2 and first burst 0.3 s before a window
/// edge, s = W/N), which the sliding log holds to L.
fn pair_diagram(scenario: &Scenario) -> WindowsDiagram {
    let limit = scenario.limit;
    let n = diagram_slots(scenario);
    let w = limit.window.get();
    let s = w / n;
    let t1 = 2 * w - 3 * s / 10;
    let t2 = t1 + w - s / 2;
    let mut arrivals = vec![Nanos::new(t1); limit.requests as usize];
    arrivals.extend(vec![Nanos::new(t2); limit.requests as usize]);
    let view = (Nanos::new(w), Nanos::new(3 * w + w / 4));
    WindowsDiagram {
        title: format!("Two bursts of {} that break the limit: how the algorithms cut time", limit.requests),
        limit,
        slots: n,
        arrivals,
        instant: Nanos::new(t2),
        view,
    }
}

fn print_summary(
    scenario: &Scenario,
    report: Option<&ratesim::RunReport>,
    burst_pair: Option<&BurstPairResult>,
    target: &Path,
    files: &[String],
    charts: usize,
) -> Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "scenario  {} ({})", scenario.name, scenario.path.display())?;
    if let Some(d) = &scenario.description {
        writeln!(out, "          {d}")?;
    }
    let per_key = if report.is_some_and(|r| r.keys > 1) { " per client key" } else { "" };
    writeln!(
        out,
        "limit     {} requests per {}{per_key} (exact window (t - W, t])",
        scenario.limit.requests,
        format_duration(scenario.limit.window)
    )?;
    if let Some(report) = report {
        let span = match (report.first_arrival, report.last_arrival) {
            (Some(a), Some(b)) => format!(", first at {a} s, last at {b} s"),
            _ => String::new(),
        };
        let keys = if report.keys > 1 { format!(" from {} client keys", report.keys) } else { String::new() };
        let covers = match scenario.duration {
            Some(d) => format!("run covers [0, {d} s)"),
            None => "run ends at the last arrival".to_string(),
        };
        writeln!(
            out,
            "trace     {} requests{keys}{span}; {covers}; seed {}",
            report.arrivals, scenario.seed
        )?;
        writeln!(out)?;
        out.write_all(export::text::render_table(&export::markdown::summary_table(report)).as_bytes())?;
    }
    if let Some(bp) = burst_pair {
        writeln!(out)?;
        writeln!(
            out,
            "burst pairs: {} x {} (gap, offset) grid, two bursts of {} at single instants",
            bp.grid, bp.grid, bp.limit.requests
        )?;
        writeln!(out)?;
        out.write_all(export::text::render_table(&export::markdown::error_vs_slots_table(bp)).as_bytes())?;
    }
    writeln!(out)?;
    let charts = if charts > 0 { format!(" and {charts} charts") } else { String::new() };
    writeln!(out, "wrote {}/ ({}{charts})", target.display(), files.join(", "))?;
    out.flush()?;
    Ok(())
}
