#!/bin/sh
# Runs every fuzz target for $1 seconds (default 180), one after another.
# Stable toolchain: RUSTC_BOOTSTRAP lets cargo-fuzz pass its nightly flags.
# -O optimises; -a keeps debug assertions and overflow checks on, so an
# arithmetic overflow is a crash, as in debug builds.
set -u
cd "$(dirname "$0")/.."
secs=${1:-180}
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz is not installed: cargo install cargo-fuzz --locked" >&2
  exit 1
fi
for t in scenario_parse csv_trace time_parse run_trace run_scenario; do
  dict=""
  case $t in
    scenario_parse|run_scenario) dict="-dict=fuzz/dict/scenario.dict" ;;
    csv_trace|run_trace) dict="-dict=fuzz/dict/trace.dict" ;;
  esac
  RUSTC_BOOTSTRAP=1 cargo fuzz run -O -a "$t" -- -max_total_time="$secs" -print_final_stats=1 $dict \
    > "${FUZZ_LOGS:-/tmp}/fuzz-$t.log" 2>&1
  echo "$t: exit $?"
done
