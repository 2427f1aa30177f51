//! Command-line arguments, turned into library types at once.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

const EXAMPLES: &str = "\
Examples:
  ratesim run scenarios/boundary_burst.toml
      Compare fixed window, slot counters (N = 2, 10, 100) and the sliding log
      on a boundary burst (100 requests just before and 100 just after a
      1 s window boundary, L = 100 per 1 s); writes output/boundary_burst/.
  ratesim run scenarios/poisson.toml --slots 1,10,1000 --seed 7 --out /tmp/p
      Same scenario with other slot counts, another seed and output folder.
  ratesim run scenarios/replay_csv.toml --decisions
      Replay a recorded trace and also write one row per request per limiter.
  ratesim run scenarios/error_vs_slots.toml
      Burst-pair and load sweeps: error versus slot count, with charts.
  ratesim sweep scenarios/boundary_burst.toml --format svg
      The sweeps over another scenario's limit and limiters, SVG charts only.";

/// Traffic simulator and rate-limiter comparator: replays arrival traces
/// through limiters on a virtual clock and measures, exactly, what each lets
/// through.
#[derive(Debug, Parser)]
#[command(name = "ratesim", version, about, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scenario and write its tables, charts and report.md to the output folder.
    #[command(after_help = EXAMPLES)]
    Run(RunArgs),
    /// Validate a scenario and read its CSV traces in full, without running.
    Check(CheckArgs),
    /// Run only the burst-pair and load sweeps over the scenario's limit and
    /// limiters (its [sweep] table, or the defaults).
    #[command(after_help = EXAMPLES)]
    Sweep(RunArgs),
    /// Print a shell completion script to stdout (bash, zsh, fish, powershell, elvish).
    ///
    /// For example: ratesim completions bash > ~/.local/share/bash-completion/completions/ratesim
    Completions { shell: clap_complete::Shell },
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
}

/// A chart file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ChartFormat {
    Svg,
    Png,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// Output folder [default: output/<scenario name>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Slot counts for the slot counters, replacing the scenario's (e.g. 2,10,100).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..))]
    pub slots: Option<Vec<u64>>,
    /// Random seed, replacing the scenario's.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Also write decisions.csv (one row per request per limiter).
    #[arg(long)]
    pub decisions: bool,
    /// Write no charts.
    #[arg(long)]
    pub no_charts: bool,
    /// Chart formats.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "svg,png")]
    pub format: Vec<ChartFormat>,
    /// TrueType font for chart text in PNGs (replaces the embedded DejaVu Sans,
    /// e.g. for Chinese titles); overrides [output] font.
    #[arg(long, value_name = "FILE")]
    pub font: Option<PathBuf>,
    /// No progress bar and no table on the terminal.
    #[arg(long, short)]
    pub quiet: bool,
}
