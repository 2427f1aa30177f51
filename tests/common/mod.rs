//! Helpers shared by the integration tests: where the project and its
//! scenarios are, the `ratesim` binary, and reading what a run wrote.
#![allow(dead_code)] // each test binary uses its own subset

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The csv-crate trace reader the fast reader is compared with.
pub mod csv_reference;

/// Reading back the tables `ratesim run` prints.
pub mod terminal;

/// The valid scenario that the rows of docs/errors.md change, one key at a
/// time (the page shows it as its first TOML block).
pub const ERROR_BASE: &str = r#"name = "t"
duration = "2s"

[limit]
requests = 10
window = "1s"

[[traffic]]
kind = "burst"
start = "100ms"
span = "10ms"
count = 20

[[limiter]]
kind = "slot_counter"
slots = [2, 10]
"#;

/// The project's root folder.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A shipped scenario file.
pub fn scenario(name: &str) -> PathBuf {
    root().join("scenarios").join(name)
}

/// The `ratesim` binary, run from the project's root.
pub fn ratesim() -> Command {
    let mut c = Command::cargo_bin("ratesim").unwrap();
    c.current_dir(root());
    c
}

/// The path of the `ratesim` binary, for `std::process::Command`.
pub fn ratesim_path() -> PathBuf {
    assert_cmd::cargo::cargo_bin!("ratesim").to_path_buf()
}

/// A file of an output folder as text.
pub fn read(dir: &Path, file: &str) -> String {
    fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// A CSV file as its header and rows of fields (no quoting in our tables
/// except in labels a user makes, which these tests do not).
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines.map(|l| l.split(',').map(String::from).collect()).collect();
    (header, rows)
}

/// Every file under `dir`, by path relative to it, with its bytes.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// A CSV file of ours as records, each a map from column name to field,
/// for tests that check columns by name.
pub fn read_records(path: &Path) -> Vec<BTreeMap<String, String>> {
    let (header, rows) = read_csv(path);
    rows.into_iter().map(|row| header.iter().cloned().zip(row).collect()).collect()
}

/// The records of one limiter (its `limiter` column) in a CSV file of ours.
pub fn records_of(path: &Path, limiter: &str) -> Vec<BTreeMap<String, String>> {
    read_records(path).into_iter().filter(|r| r["limiter"] == limiter).collect()
}

/// Writes `text` as `name` into `dir` and runs `ratesim run` on it with
/// `args` into `dir/out-<stem>`; returns that folder.
pub fn run_scenario_text(dir: &Path, name: &str, text: &str, args: &[&str]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    let stem = Path::new(name).file_stem().unwrap().to_string_lossy().into_owned();
    let out = dir.join(format!("out-{stem}"));
    ratesim()
        .args(["run", path.to_str().unwrap(), "-q", "--out", out.to_str().unwrap()])
        .args(args)
        .assert()
        .success();
    out
}

/// Collects a run's decisions in memory (`engine::run`'s decision sink).
#[derive(Default)]
pub struct Collect(pub Vec<ratesim::engine::DecisionRecord>);

impl ratesim::engine::DecisionSink for Collect {
    fn record(&mut self, record: &ratesim::engine::DecisionRecord) -> std::io::Result<()> {
        self.0.push(*record);
        Ok(())
    }
}

/// Parses scenario text as the file `t.toml`; panics with the error.
pub fn parse(text: &str) -> ratesim::scenario::Scenario {
    ratesim::scenario::Scenario::parse(text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}"))
}
