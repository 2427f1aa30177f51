//! The `ratesim` binary: parses arguments, shows progress and draws the
//! charts the library asks for. Everything else (what a run writes, and
//! all the numbers) is the library's (`ratesim::run`).

mod charts;
mod cli;

use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use charts::{ChartSet, Format};
use cli::{ChartFormat, Cli, Command, CommonArgs};
use ratesim::run::{RunOptions, Step};
use ratesim::scenario::Scenario;
use ratesim::simulate;

fn main() -> ExitCode {
    // Ctrl-C: remove the staging folder, keep the previous results, exit 130.
    let _ = ctrlc::set_handler(|| {
        let held = ratesim::export::abandon_all_staging(); // held until exit
        // On a terminal the progress bar holds the line: clear it, so the
        // message starts a line of its own.
        let clear = if io::stderr().is_terminal() { "\r\x1b[2K" } else { "" };
        eprintln!("{clear}{}", interrupted(held.removed(), held.kept(), held.committed()));
        std::process::exit(130);
    });
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
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

/// Help, the version or a usage error, as clap writes them, but a help
/// that cannot be written (`--help > /dev/full`) is an error (exit 1), not
/// a success; a closed pipe (`--help | head -1`) still exits quietly.
fn clap_exit(e: &clap::Error) -> ExitCode {
    let code = if e.use_stderr() { 2 } else { 0 };
    match e.print().and_then(|()| io::stdout().flush()) {
        Ok(()) => ExitCode::from(code),
        Err(io) if io.kind() == io::ErrorKind::BrokenPipe => ExitCode::from(code),
        Err(io) => {
            let what = if e.kind() == clap::error::ErrorKind::DisplayVersion { "version" } else { "help" };
            let _ = writeln!(io::stderr(), "error: cannot write the {what}\n  caused by: {io}");
            ExitCode::from(1)
        }
    }
}

/// What Ctrl-C says: one of the three lines docs/errors.md lists, whatever
/// was going on. Nothing staged yet (reading the scenario, `check`) wrote
/// nothing; a staging folder removed kept what its target held; after the
/// commit (printing the summary) the results are in place.
fn interrupted(removed: usize, kept: usize, committed: bool) -> &'static str {
    match (removed, kept, committed) {
        (0, _, true) => "interrupted; the results were written",
        (0, _, false) | (_, 0, _) => "interrupted; nothing was written",
        _ => "interrupted; previous results kept",
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe))
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(args) => run(&args.common, args.decisions, false),
        Command::Sweep(args) => run(&args.common, false, true),
        Command::Check(args) => check(&args.scenario),
        Command::Completions { shell } => {
            let (mut cmd, mut script) = (<Cli as clap::CommandFactory>::command(), Vec::new());
            clap_complete::generate(shell, &mut cmd, "ratesim", &mut script);
            io::stdout()
                .write_all(&script)
                .and_then(|()| io::stdout().flush())
                .context("cannot write to standard output")
        }
    }
}

/// `ratesim check`: see [`ratesim::check`].
fn check(path: &Path) -> Result<()> {
    let scenario = Scenario::load(path)?;
    let traces = ratesim::check::check_traces(&scenario)?;
    let mut out = io::stdout().lock();
    out.write_all(ratesim::check::summary(&scenario, &traces).as_bytes())
        .and_then(|()| out.flush())
        .context("the scenario is valid, but its summary could not be written to standard output")?;
    if let Some(estimate) = ratesim::check::attempts_estimate(&scenario, &traces).filter(|e| e.is_large()) {
        eprintln!("{}", estimate.warning());
    }
    if let Some(memory) = ratesim::check::closed_memory(&scenario).filter(|m| m.is_over_budget()) {
        eprintln!("{}", memory.warning());
    }
    if let Some(warning) = scenario.seeds_warning() {
        eprintln!("{warning}");
    }
    Ok(())
}

/// A progress bar on stderr, only when it is a terminal: for a simulation
/// once it has taken a moment, for the sweeps at once, a bar of their own
/// (its time and estimate start afresh, not from the simulation's rate).
struct RunProgress {
    bar: ProgressBar,
    sweeps: OnceLock<ProgressBar>,
    started: Instant,
    shown: AtomicBool,
    enabled: bool,
    end_ns: Option<u64>,
}

impl RunProgress {
    fn new(quiet: bool, end_ns: Option<u64>) -> RunProgress {
        RunProgress {
            bar: ProgressBar::with_draw_target(end_ns, ProgressDrawTarget::hidden()),
            started: Instant::now(),
            sweeps: OnceLock::new(),
            shown: AtomicBool::new(false),
            enabled: !quiet && io::stderr().is_terminal(),
            end_ns,
        }
    }

    fn show(bar: &ProgressBar, template: &str) {
        let style = ProgressStyle::with_template(template).expect("valid template").progress_chars("=> ");
        bar.set_style(style);
        bar.set_draw_target(ProgressDrawTarget::stderr());
    }

    fn update(&self, step: Step) {
        if !self.enabled {
            return;
        }
        match step {
            Step::Simulate(p) => {
                if self.started.elapsed() > Duration::from_millis(300)
                    && !self.shown.swap(true, Ordering::Relaxed)
                {
                    Self::show(
                        &self.bar,
                        if self.end_ns.is_some() {
                            "{spinner} [{bar:25}] {percent:>3}% {msg} {elapsed}, about {eta} left"
                        } else {
                            "{spinner} {msg} {elapsed}"
                        },
                    );
                }
                if let Some(end) = self.end_ns {
                    self.bar.set_position(p.now.get().min(end));
                }
                // A closed population's run has no arrivals, only attempts.
                self.bar.set_message(if p.arrivals > 0 {
                    format!("{} arrivals, t = {:.1} s", p.arrivals, p.now.as_secs_f64())
                } else {
                    format!("t = {:.1} s", p.now.as_secs_f64())
                });
            }
            Step::Sweep { done, total } => {
                // Its length is the sweeps' work and each step is weighed
                // by its own (the library's), so its rate tells the time left.
                let bar = self.sweeps.get_or_init(|| {
                    self.bar.finish_and_clear();
                    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
                    bar.set_message("sweeps");
                    Self::show(&bar, "{spinner} {msg} [{bar:30}] {percent}% ({elapsed}, about {eta} left)");
                    bar
                });
                bar.set_position(done);
            }
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
        if let Some(sweeps) = self.sweeps.get() {
            sweeps.finish_and_clear();
        }
    }
}

/// The options of `args` that change what a run's tables say, as they
/// would be typed again (for the report's "Regenerate with" line; chart
/// formats and fonts change only how the charts are drawn).
fn overrides(args: &CommonArgs, decisions: bool) -> Vec<String> {
    let mut words = Vec::new();
    if let Some(slots) = &args.slots {
        let list: Vec<String> = slots.iter().map(u64::to_string).collect();
        words.extend(["--slots".to_string(), list.join(",")]);
    }
    if let Some(seed) = args.seed {
        words.extend(["--seed".to_string(), seed.to_string()]);
    }
    if decisions {
        words.push("--decisions".to_string());
    }
    words
}

fn run(args: &CommonArgs, decisions: bool, sweep_only: bool) -> Result<()> {
    let mut scenario = Scenario::load(&args.scenario)?;
    if let Some(slots) = &args.slots {
        scenario.set_slots(slots).context("--slots")?;
    }
    if let Some(seed) = args.seed {
        scenario.set_seed(seed).map_err(anyhow::Error::msg).context("--seed")?;
    }
    if let Some(bytes) = args.memory {
        ratesim::engine::set_memory_budget(bytes);
    }
    let chart_set = chart_set(args, &scenario)?;
    if !args.quiet
        && let Some(estimate) = ratesim::run::large_attempts(&scenario, sweep_only)
    {
        eprintln!("{}", estimate.warning());
    }
    if !args.quiet
        && let Some(warning) = scenario.seeds_warning()
    {
        eprintln!("{warning}");
    }
    let options = RunOptions {
        out_dir: args.out.clone().unwrap_or_else(|| ratesim::run::default_out_dir(&scenario, sweep_only)),
        sweep_only,
        decisions,
        charts: !chart_set.formats.is_empty(),
        overrides: overrides(args, decisions),
        inputs: args.font.iter().map(|f| (f.clone(), "the chart font of --font".to_string())).collect(),
    };
    let progress = RunProgress::new(args.quiet, simulate::known_end(&scenario).map(|n| n.get()));
    let outputs = ratesim::run::run(&scenario, &options, &|step| progress.update(step));
    progress.finish();
    let outputs = outputs?;
    let drawn = outputs
        .charts
        .iter()
        .map(|chart| charts::draw(&chart_set, chart, &outputs))
        .collect::<Result<Vec<_>>>()?;
    let committed = outputs.commit(&drawn)?;
    if let Some(old) = &committed.replaced {
        // Even with --quiet: results the user may have wanted are gone.
        eprintln!(
            "note: {} held the results of `{old}`; this run replaced them",
            ratesim::shown::path(&committed.target)
        );
    }
    if !args.quiet {
        // The results are in place by now: say so if the table cannot be shown.
        let mut out = io::stdout().lock();
        out.write_all(committed.summary.as_bytes()).and_then(|()| out.flush()).with_context(|| {
            format!(
                "the results were written to {}, but the summary could not be printed",
                committed.target.display()
            )
        })?;
    }
    Ok(())
}

/// The chart formats asked for, with the font ready (and a warning when
/// the embedded font cannot draw the scenario's name).
fn chart_set(args: &CommonArgs, scenario: &Scenario) -> Result<ChartSet> {
    if args.no_charts {
        return Ok(ChartSet { formats: Vec::new() });
    }
    let mut formats: Vec<Format> = args
        .format
        .iter()
        .map(|f| match f {
            ChartFormat::Svg => Format::Svg,
            ChartFormat::Png => Format::Png,
        })
        .collect();
    formats.dedup();
    // `--font` is read as `[output] font` is (`ratesim::font::read_font`).
    let font = args.font.as_deref().or(scenario.output.font.as_deref());
    charts::init_fonts(font).context("cannot load the chart font")?;
    // Chart titles carry the scenario name; warn when the embedded font
    // cannot draw it (a scenario may be named in Chinese).
    if font.is_none() && !args.quiet && formats.contains(&Format::Png) {
        let missing = charts::missing_glyphs(&scenario.name);
        if !missing.is_empty() {
            let sample: String = missing.iter().take(8).collect();
            eprintln!(
                "warning: the embedded chart font (DejaVu Sans) has no glyphs for \"{sample}\" in the \
scenario name; PNG titles will show boxes. Pass --font FILE.ttf (or [output] font) with a font that has them."
            );
        }
    }
    Ok(ChartSet { formats })
}

#[cfg(test)]
mod tests {
    /// Every way a Ctrl-C can end says one of the lines docs/errors.md
    /// lists (a bare `interrupted` once came out when nothing was staged).
    #[test]
    fn every_interrupt_message_is_documented() {
        let doc = include_str!("../docs/errors.md");
        for removed in 0..3 {
            for kept in 0..=removed {
                for committed in [false, true] {
                    let said = super::interrupted(removed, kept, committed);
                    assert!(doc.contains(&format!("`{said}`")), "{said} is not in docs/errors.md");
                }
            }
        }
        assert_eq!(super::interrupted(0, 0, false), "interrupted; nothing was written");
        assert_eq!(super::interrupted(1, 1, false), "interrupted; previous results kept");
        assert_eq!(super::interrupted(1, 0, true), "interrupted; nothing was written");
        assert_eq!(super::interrupted(0, 0, true), "interrupted; the results were written");
    }
}
