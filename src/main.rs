mod cli;

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use cli::{Cli, Command, RunArgs};
use ratesim::engine::{self, Progress};
use ratesim::export::{self, OutputDir};
use ratesim::scenario::Scenario;
use ratesim::simulate;
use ratesim::time::format_duration;

fn main() -> ExitCode {
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
        Command::Run(args) => run(args),
        Command::Check(args) => check(&args.scenario),
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
            self.bar.set_position(p.now.0.min(end));
        }
        self.bar.set_message(format!("{} arrivals, t = {:.1} s", p.arrivals, p.now.as_secs_f64()));
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

fn run(args: RunArgs) -> Result<()> {
    let mut scenario = Scenario::load(&args.scenario)?;
    if let Some(slots) = &args.slots {
        scenario.set_slots(slots).map_err(anyhow::Error::msg).context("--slots")?;
    }
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    let write_decisions = args.decisions || scenario.output.decisions;
    let out_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("output").join(&scenario.name));

    // Check the destination before any work is done.
    let staged = OutputDir::stage(&out_dir)?;

    let (specs, _) = engine::with_reference(&scenario.limiters);
    let labels = engine::labels(&specs);
    let mut decisions = if write_decisions {
        let path = staged.path("decisions.csv");
        let file = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Some(export::csv::DecisionsWriter::new(BufWriter::with_capacity(1 << 20, file), &labels)?)
    } else {
        None
    };

    let mut progress = RunProgress::new(args.quiet, simulate::known_end(&scenario).map(|n| n.0));
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
    let mut files = vec!["summary.csv", "summary.md", "timeline.csv"];
    if write_decisions {
        files.push("decisions.csv");
    }
    let target = staged.commit()?;

    if !args.quiet {
        print_summary(&scenario, &report, &target, &files)?;
    }
    Ok(())
}

fn print_summary(
    scenario: &Scenario,
    report: &ratesim::RunReport,
    target: &Path,
    files: &[&str],
) -> Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "scenario  {} ({})", scenario.name, scenario.path.display())?;
    if let Some(d) = &scenario.description {
        writeln!(out, "          {d}")?;
    }
    let per_key = if report.keys > 1 { " per client key" } else { "" };
    writeln!(
        out,
        "limit     {} requests per {}{per_key} (exact window (t - W, t])",
        report.limit.requests,
        format_duration(report.limit.window)
    )?;
    let span = match (report.first_arrival, report.last_arrival) {
        (Some(a), Some(b)) => format!(", first at {a} s, last at {b} s"),
        _ => String::new(),
    };
    let keys = if report.keys > 1 { format!(" from {} client keys", report.keys) } else { String::new() };
    let covers = match scenario.duration {
        Some(d) => format!("run covers [0, {d} s)"),
        None => "run ends at the last arrival".to_string(),
    };
    writeln!(out, "trace     {} requests{keys}{span}; {covers}; seed {}", report.arrivals, scenario.seed)?;
    writeln!(out)?;
    out.write_all(export::text::render_table(&export::markdown::summary_table(report)).as_bytes())?;
    writeln!(out)?;
    writeln!(out, "wrote {}/ ({})", target.display(), files.join(", "))?;
    out.flush()?;
    Ok(())
}
