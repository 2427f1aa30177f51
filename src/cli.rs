//! Command-line arguments, turned into library types at once.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// `ratesim --help`'s examples: `run`'s, then one of `sweep`.
const EXAMPLES: &str = concat!(
    run_examples!(),
    "
  ratesim sweep scenarios/boundary_burst.toml --format svg
      The default burst-pair and load sweeps over another scenario's limit
      and limiters (it has no [sweep] table), SVG charts only; writes
      output/boundary_burst-sweeps/, beside the run's results."
);

/// `ratesim run --help`'s examples.
const RUN_EXAMPLES: &str = run_examples!();

macro_rules! run_examples {
    () => {
        "\
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
      Burst-pair and load sweeps: error versus slot count, with charts."
    };
}
use run_examples;

const SWEEP_EXAMPLES: &str = "\
Examples:
  ratesim sweep scenarios/error_vs_slots.toml
      Only the sweeps of its [sweep] table (burst-pair grid and load sweep
      over slot counts), not its own run; writes output/error_vs_slots-sweeps/.
  ratesim sweep scenarios/boundary_burst.toml --format svg
      The default burst-pair and load sweeps over another scenario's limit
      and limiters (it has no [sweep] table), SVG charts only; writes
      output/boundary_burst-sweeps/, beside the run's results.
  ratesim sweep scenarios/nodes_central.toml
      Its topology sweep: the same traffic through one central store at each
      round trip of [sweep] rtts.
  ratesim sweep scenarios/poisson.toml
      Its seed sweep: the same scenario at 20 seeds from its own, each
      figure's mean, deviation and range over them.";

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
    #[command(after_help = RUN_EXAMPLES, mut_arg("out", |a| a.help("Output folder [default: output/<scenario name>]")))]
    Run(RunArgs),
    /// Validate a scenario and read its CSV traces in full, without running.
    Check(CheckArgs),
    /// Run only the scenario's sweeps, not its own simulation: what its
    /// [sweep] table asks for (burst-pair and load sweeps, retry-policy
    /// comparison, seed sweep, topology sweeps over nodes, rtts or sync
    /// intervals); with no [sweep] table, the burst-pair and load sweeps at
    /// their defaults.
    ///
    /// The burst-pair and load sweeps make their own open-loop arrivals and
    /// run each limiter alone on one node: a scenario's [nodes], retries and
    /// closed clients play no part in them, and the output says so. The
    /// topology sweeps, the retry-policy comparison and the seed sweep rerun
    /// the scenario's own traffic and keep them.
    #[command(
        after_help = SWEEP_EXAMPLES,
        mut_arg("out", |a| a.help("Output folder [default: output/<scenario name>-sweeps, beside the run's]"))
    )]
    Sweep(SweepArgs),
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

/// `ratesim run`: the options every run takes, and `--decisions`.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Also write decisions.csv (one row per request per limiter).
    #[arg(long)]
    pub decisions: bool,
}

/// `ratesim sweep`: a sweep is many runs, so it writes no decisions.csv.
#[derive(Debug, Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Options shared by `run` and `sweep`. `--out` defaults to
/// `output/<scenario name>` for `run` and `output/<scenario name>-sweeps`
/// for `sweep`, so that sweeping a scenario never replaces its run's results.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// Output folder [default: output/<scenario name> for run,
    /// output/<scenario name>-sweeps for sweep].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Slot counts (e.g. 2,10,100): one slot counter per count in place of
    /// the scenario's slot counters; a scenario without any gets them added
    /// before the sliding log.
    #[arg(long, value_name = "LIST", value_delimiter = ',', allow_negative_numbers = true, value_parser = parse_slot_count)]
    pub slots: Option<Vec<u64>>,
    /// Random seed, replacing the scenario's: 0 to 2^63 - 1, as a scenario's
    /// `seed` can hold, so a run's seed can be written back into it.
    #[arg(long, allow_negative_numbers = true, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Write no charts (so no --format or --font: they would be ignored).
    #[arg(long, conflicts_with_all = ["format", "font"])]
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
    /// The most memory the run may hold in exact-window timestamps, requests
    /// waiting to retry, closed clients' next requests, delayed requests
    /// waiting for the backend and the limiters of every client key, and
    /// with --decisions the clients' attempts kept until written (e.g.
    /// 512MiB, 8GiB); a limiter whose clients react keeps within an equal
    /// share as they run. Past it the run stops with an error, the previous
    /// results kept [default: 8GiB].
    #[arg(long, value_name = "SIZE", allow_negative_numbers = true, value_parser = parse_size)]
    pub memory: Option<u64>,
}

/// One slot count of `--slots` (clap splits the list at its commas): a
/// whole number of at least 1. Its upper bound, the window's length in
/// nanoseconds, is checked once the scenario is read
/// ([`ratesim::scenario::Scenario::set_slots`]), in the same words.
pub fn parse_slot_count(text: &str) -> Result<u64, String> {
    const RANGE: &str = "it must be between 1 and the window length in nanoseconds";
    if text.trim().is_empty() {
        return Err("a slot count is empty (an empty list, two commas in a row, or a comma at an end): \
             expected whole numbers, each between 1 and the window length in nanoseconds, \
             with one comma between two, like 2,10,100"
            .into());
    }
    if is_signed_digits(text) {
        return match text.parse::<u64>() {
            Ok(n) if n >= 1 => Ok(n),
            Ok(_) => Err(format!("slot count {text} is out of range: {RANGE}")),
            Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => Err(format!(
                "slot count {text} is out of range: {RANGE}, and no window is longer than {} ns",
                u64::MAX
            )),
            // A minus sign and digits.
            Err(_) => Err(format!("slot count {text} is out of range: {RANGE}")),
        };
    }
    Err(format!(
        "{} is not a slot count: expected a whole number in digits, between 1 and the window length in nanoseconds, like 2 or 2,10,100",
        ratesim::shown::code(text)
    ))
}

/// A `--seed`: a whole number from 0 to 2^63 - 1, what a scenario's
/// `seed` can hold (TOML integers stop there).
pub fn parse_seed(text: &str) -> Result<u64, String> {
    let range = format!("it must be between 0 and {}, what a scenario's `seed` can hold", i64::MAX);
    if text.trim().is_empty() {
        return Err(format!("the seed is empty: expected a whole number; {range}"));
    }
    if is_signed_digits(text) {
        return match text.parse::<i64>() {
            Ok(n) if n >= 0 => Ok(n as u64),
            // Negative, or past i64 (any number of digits).
            _ => Err(format!("seed {text} is out of range: {range}")),
        };
    }
    Err(format!("{} is not a seed: expected a whole number in digits; {range}", ratesim::shown::code(text)))
}

/// Digits with an optional sign: a number, whether or not it fits, as
/// opposed to text that is none (`1.5`, `abc`, `-`).
fn is_signed_digits(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A size in bytes: a whole number with a unit, `512MiB`, `8GiB`, `100B`
/// (units B, KiB, MiB, GiB, TiB; 1 KiB = 1024 B).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "`{text}` is not a size: expected a whole number and a unit, like 512MiB or 8GiB (units: B, KiB, MiB, GiB, TiB)"
        )
    };
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let unit = unit.trim_start();
    let shift = match unit {
        "B" => 0,
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        "TiB" => 40,
        _ => return Err(bad()),
    };
    // Digits past u64 are too large, as is a product past it.
    let too_large =
        || format!("`{text}` is too large: a size is less than 16 EiB, at most {}{unit}", u64::MAX >> shift);
    let number: u64 = match number.parse() {
        Ok(n) => n,
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => return Err(too_large()),
        Err(_) => return Err(bad()),
    };
    number.checked_mul(1 << shift).ok_or_else(too_large)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_size("100B"), Ok(100));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("8 GiB"), Ok(8 << 30));
        assert_eq!(parse_size("1TiB"), Ok(1 << 40));
        assert!(parse_size("8GB").unwrap_err().contains("units: B, KiB, MiB, GiB, TiB"));
        assert!(parse_size("MiB").is_err() && parse_size("1.5GiB").is_err() && parse_size("").is_err());
        assert!(parse_size("99999999999TiB").unwrap_err().contains("too large"));
        // The largest of each unit, and one past it; digits past u64.
        assert_eq!(parse_size("16777215TiB"), Ok(16_777_215 << 40));
        assert_eq!(
            parse_size("16777216TiB"),
            Err("`16777216TiB` is too large: a size is less than 16 EiB, at most 16777215TiB".into())
        );
        assert_eq!(parse_size("18446744073709551615B"), Ok(u64::MAX));
        assert!(parse_size("18446744073709551616B").unwrap_err().contains("at most 18446744073709551615B"));
        assert!(parse_size("99999999999999999999999MiB").unwrap_err().contains("too large"));
    }

    #[test]
    fn seeds_say_what_was_given_and_the_range() {
        assert_eq!(parse_seed("0"), Ok(0));
        assert_eq!(parse_seed("9223372036854775807"), Ok(i64::MAX as u64));
        let range = "it must be between 0 and 9223372036854775807, what a scenario's `seed` can hold";
        for n in ["-1", "9223372036854775808", "99999999999999999999999"] {
            assert_eq!(parse_seed(n), Err(format!("seed {n} is out of range: {range}")));
        }
        assert_eq!(parse_seed(""), Err(format!("the seed is empty: expected a whole number; {range}")));
        assert_eq!(
            parse_seed("abc"),
            Err(format!("`abc` is not a seed: expected a whole number in digits; {range}"))
        );
    }

    #[test]
    fn slot_counts_say_what_was_given_and_the_range() {
        assert_eq!(parse_slot_count("2"), Ok(2));
        assert_eq!(parse_slot_count("18446744073709551615"), Ok(u64::MAX));
        let range = "is out of range: it must be between 1 and the window length in nanoseconds";
        assert_eq!(parse_slot_count("0"), Err(format!("slot count 0 {range}")));
        assert_eq!(parse_slot_count("-5"), Err(format!("slot count -5 {range}")));
        assert_eq!(
            parse_slot_count("18446744073709551616"),
            Err(format!(
                "slot count 18446744073709551616 {range}, and no window is longer than 18446744073709551615 ns"
            ))
        );
        for empty in ["", " "] {
            assert!(parse_slot_count(empty).unwrap_err().starts_with("a slot count is empty"), "{empty:?}");
        }
        assert_eq!(
            parse_slot_count("1.5"),
            Err("`1.5` is not a slot count: expected a whole number in digits, between 1 and the window length in nanoseconds, like 2 or 2,10,100".into())
        );
        assert!(parse_slot_count("-").unwrap_err().starts_with("`-` is not a slot count"));
        assert!(parse_slot_count("\u{1b}[2J").unwrap_err().starts_with("`\\u{1b}[2J` is not"));
    }
}
