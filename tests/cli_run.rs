//! `ratesim run` as a user runs it.

mod common;

use std::fs;

use common::{ratesim, read, read_csv, scenario, snapshot};
use predicates::prelude::*;

#[test]
fn boundary_burst_writes_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bb");
    ratesim()
        .args(["run", scenario("boundary_burst.toml").to_str().unwrap(), "--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("limit     100 requests per 1s"))
        .stdout(predicate::str::contains("trace     200 requests"))
        .stdout(predicate::str::is_match(r"fixed_window\s+200\s+0\s+200\s+2.00\s+100").unwrap());

    let (header, rows) = read_csv(&out.join("summary.csv"));
    assert_eq!(
        header.join(","),
        "limiter,algorithm,slots,offered,admitted,rejected,peak,peak_ratio,excess,false_rejects,over_admission,disagreement,state_peak,state_bytes"
    );
    let labels: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        labels,
        ["fixed_window", "slot_counter(N=2)", "slot_counter(N=10)", "slot_counter(N=100)", "sliding_log"]
    );
    // fixed_window: 200 admitted, peak 200, ratio 2, excess 100, +100 %.
    assert_eq!(rows[0][1..12].join(","), "fixed_window,,200,200,0,200,2,100,0,1,0.5");
    for r in &rows[1..4] {
        assert_eq!(r[1], "slot_counter");
        assert_eq!(r[3..12].join(","), "200,100,100,100,1,0,0,0,0");
    }
    assert_eq!(rows[2][2], "10");
    assert_eq!(rows[4][1..14].join(","), "sliding_log,,200,100,100,100,1,0,0,0,0,100,800");

    let md = fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("| fixed_window "), "{md}");
    assert!(md.contains("+100.0 %"), "{md}");

    // Timeline: 10 ms bins over [0, 3 s): 300 bins x 5 limiters.
    let (header, rows) = read_csv(&out.join("timeline.csv"));
    assert_eq!(header.join(","), "bin_start,limiter,offered,admitted,rejected,window_peak");
    assert_eq!(rows.len(), 300 * 5);
    // Bin [0.99, 1.0): the first burst; [1.0, 1.01): the second.
    let bin = |start: &str, label: &str| -> Vec<String> {
        rows.iter().find(|r| r[0] == start && r[1] == label).unwrap()[2..].to_vec()
    };
    assert_eq!(bin("0.99", "fixed_window"), ["100", "100", "0", "100"]);
    assert_eq!(bin("1", "fixed_window"), ["100", "100", "0", "200"]);
    assert_eq!(bin("1", "slot_counter(N=10)"), ["100", "0", "100", "100"]);
    // The window count carries into empty bins until the window has passed.
    assert_eq!(bin("1.5", "fixed_window"), ["0", "0", "0", "200"]);
    // At t = 2 s the window (1, 2] no longer holds the request at exactly 1 s.
    assert_eq!(bin("2", "fixed_window"), ["0", "0", "0", "99"]);
    assert_eq!(bin("2.01", "fixed_window"), ["0", "0", "0", "0"]);
    assert!(!out.join("decisions.csv").exists());
}

/// One request is "1 request" (it once read "1 requests"), at one time.
#[test]
fn one_request_is_counted_in_the_singular() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"one\"\n[limit]\nrequests = 1\nwindow = \"1s\"\n[[traffic]]\nkind = \"burst\"\nstart = \"500ms\"\ncount = 1\n";
    let path = dir.path().join("one.toml");
    fs::write(&path, text).unwrap();
    let out = dir.path().join("out");
    ratesim()
        .args(["run", path.to_str().unwrap(), "--no-charts", "--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "trace     1 request, at 0.5 s; run ends 1 ns after the last arrival",
        ));
    assert!(fs::read_to_string(out.join("report.md")).unwrap().contains("Trace: 1 request, at 0.5 s."));
    ratesim()
        .args(["check", path.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("[0] burst: 1 request from 0.5 s over 0s\n"));
}

#[test]
fn decisions_file_has_one_row_per_request_per_limiter() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bb");
    ratesim()
        .args(["run", scenario("boundary_burst.toml").to_str().unwrap(), "--quiet", "--decisions"])
        .args(["--slots", "10", "--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stdout("");
    let (header, rows) = read_csv(&out.join("decisions.csv"));
    assert_eq!(header.join(","), "seq,time,limiter,admitted,window_count");
    assert_eq!(rows.len(), 200 * 3);
    // Request 100 is the first of the second burst, at exactly 1 s: the fixed
    // window admits it with 100 already in the exact window.
    let r: Vec<_> = rows.iter().filter(|r| r[0] == "100").collect();
    assert_eq!(r[0].join(","), "100,1,fixed_window,1,100");
    assert_eq!(r[1].join(","), "100,1,slot_counter(N=10),0,100");
    assert_eq!(r[2].join(","), "100,1,sliding_log,0,100");
}

#[test]
fn same_scenario_and_seed_give_byte_identical_outputs() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["poisson.toml", "replay_csv.toml", "sliding_minute.toml"] {
        let mut outputs = Vec::new();
        for run in ["a", "b"] {
            let out = dir.path().join(format!("{name}-{run}"));
            ratesim()
                .args(["run", scenario(name).to_str().unwrap(), "--quiet", "--decisions"])
                .args(["--out", out.to_str().unwrap()])
                .assert()
                .success();
            outputs.push(snapshot(&out));
        }
        assert!(outputs[0].len() >= 4, "{name}: {:?}", outputs[0].keys().collect::<Vec<_>>());
        assert!(outputs[0] == outputs[1], "{name}: outputs differ between two runs");
    }
}

/// The same scenario typed three ways from the project's folder: the
/// same report, naming `scenarios/poisson.toml` (it once quoted the path as
/// typed, so `./scenarios/...` or an absolute path changed report.md).
#[test]
fn the_report_does_not_depend_on_how_the_scenario_path_was_typed() {
    let dir = tempfile::tempdir().unwrap();
    let absolute = scenario("poisson.toml");
    let mut reports = Vec::new();
    for (i, typed) in
        ["scenarios/poisson.toml", "./scenarios/poisson.toml", absolute.to_str().unwrap()].iter().enumerate()
    {
        let out = dir.path().join(format!("r{i}"));
        ratesim()
            .args(["run", typed, "-q", "--no-charts", "--out", out.to_str().unwrap()])
            .assert()
            .success();
        reports.push(read(&out, "report.md"));
    }
    assert!(reports[0].contains("Scenario `scenarios/poisson.toml`"), "{}", reports[0]);
    assert!(reports[0].contains("Regenerate with `ratesim run scenarios/poisson.toml`."), "{}", reports[0]);
    assert_eq!(reports[0], reports[1]);
    assert_eq!(reports[0], reports[2]);
}

#[test]
fn a_different_seed_changes_a_poisson_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut summaries = Vec::new();
    for seed in ["1", "2"] {
        let out = dir.path().join(seed);
        ratesim()
            .args(["run", scenario("poisson.toml").to_str().unwrap(), "--quiet", "--seed", seed])
            .args(["--out", out.to_str().unwrap()])
            .assert()
            .success();
        summaries.push(fs::read_to_string(out.join("summary.csv")).unwrap());
    }
    assert_ne!(summaries[0], summaries[1]);
}

#[test]
fn default_out_dir_is_output_slash_name() {
    let dir = tempfile::tempdir().unwrap();
    ratesim()
        .current_dir(dir.path())
        .args(["run", scenario("boundary_burst.toml").to_str().unwrap(), "--quiet"])
        .assert()
        .success();
    assert!(dir.path().join("output/boundary_burst/summary.csv").is_file());
    // Nothing else is left beside it (no staging directories).
    let entries: Vec<_> = fs::read_dir(dir.path().join("output")).unwrap().collect();
    assert_eq!(entries.len(), 1);
}

/// `--out` may name a folder an earlier run of another scenario wrote: the
/// run replaces it, as any earlier run's, but says whose results are gone;
/// rerunning the same scenario there says nothing.
#[test]
fn replacing_another_scenarios_results_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    let run = |name: &str| {
        ratesim()
            .args([
                "run",
                scenario(name).to_str().unwrap(),
                "-q",
                "--no-charts",
                "--out",
                out.to_str().unwrap(),
            ])
            .assert()
            .success()
    };
    run("poisson.toml").stderr("");
    run("poisson.toml").stderr("");
    run("boundary_burst.toml")
        .stderr(format!("note: {} held the results of `poisson`; this run replaced them\n", out.display()));
    assert!(read(&out, "report.md").starts_with("# boundary_burst\n"));
    run("boundary_burst.toml").stderr("");
}

/// `sweep` defaults to its own folder beside the run's: sweeping a scenario
/// never replaces the results its run wrote. A sweep is many runs, so it
/// takes no `--decisions`.
#[test]
fn sweep_writes_beside_the_runs_folder() {
    let dir = tempfile::tempdir().unwrap();
    let bb = scenario("boundary_burst.toml");
    ratesim()
        .current_dir(dir.path())
        .args(["run", bb.to_str().unwrap(), "-q", "--no-charts"])
        .assert()
        .success();
    let before = snapshot(&dir.path().join("output/boundary_burst"));
    ratesim()
        .current_dir(dir.path())
        .args(["sweep", bb.to_str().unwrap(), "-q", "--no-charts"])
        .assert()
        .success();
    assert_eq!(snapshot(&dir.path().join("output/boundary_burst")), before);
    assert!(dir.path().join("output/boundary_burst-sweeps/error_vs_slots.csv").is_file());
    ratesim()
        .current_dir(dir.path())
        .args(["sweep", bb.to_str().unwrap(), "--decisions"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unexpected argument '--decisions'"));
}

#[test]
fn help_and_version() {
    ratesim().arg("--help").assert().success().stdout(predicate::str::contains("Examples:"));
    ratesim().arg("--version").assert().success().stdout(predicate::str::contains(env!("CARGO_PKG_VERSION")));
    ratesim().args(["run", "--slots", "0", "x.toml"]).assert().code(2);
}

#[test]
fn csv_key_column_limits_each_client_separately() {
    let dir = tempfile::tempdir().unwrap();
    // L = 2 per 1 s. alice sends 3 at 0.1..0.3 s, bob 3 at 0.15..0.35 s: each
    // client gets 2 through; unkeyed, only 2 of the 6 would pass.
    fs::write(
        dir.path().join("t.csv"),
        "time,client\n0.1,alice\n0.15,bob\n0.2,alice\n0.25,bob\n0.3,alice\n0.35,bob\n",
    )
    .unwrap();
    let scenario = |key: &str| {
        format!(
            "name = \"k\"\n[limit]\nrequests = 2\nwindow = \"1s\"\n[[traffic]]\nkind = \"csv\"\npath = \"t.csv\"\n{key}\n[[limiter]]\nkind = \"fixed_window\"\n"
        )
    };
    fs::write(dir.path().join("keyed.toml"), scenario("key_column = \"client\"")).unwrap();
    fs::write(dir.path().join("plain.toml"), scenario("")).unwrap();
    for (name, admitted) in [("keyed", "4"), ("plain", "2")] {
        let out = dir.path().join(format!("out-{name}"));
        let assert = ratesim()
            .args(["run", dir.path().join(format!("{name}.toml")).to_str().unwrap()])
            .args(["--out", out.to_str().unwrap()])
            .assert()
            .success();
        if name == "keyed" {
            assert.stdout(predicate::str::contains("6 requests from 2 client keys"));
        }
        let (_, rows) = read_csv(&out.join("summary.csv"));
        for r in &rows {
            assert_eq!(r[4], admitted, "{name} {}", r[0]);
        }
    }
}

#[test]
fn thread_count_does_not_change_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(threads);
        ratesim()
            .env("RAYON_NUM_THREADS", threads)
            .args(["run", scenario("clients.toml").to_str().unwrap(), "--quiet", "--decisions"])
            .args(["--out", out.to_str().unwrap()])
            .assert()
            .success();
        outputs.push(snapshot(&out));
    }
    assert!(outputs[0] == outputs[1]);
}

/// Whether a sweep fits `--memory` does not depend on the thread count.
/// Each load run holds a sliding log of 50 000 timestamps (a ring of 2^16
/// pairs of 16 bytes: 1 MiB) and may use half the budget: 1.25 MiB of
/// 2.5 MiB fits at any thread count, 768 KiB of 1.5 MiB never does. (The
/// runs' rings were once counted across the process: two runs side by
/// side each saw 2 MiB, so the first budget failed on 2 threads and
/// passed on 1.)
#[test]
fn the_memory_budget_of_a_sweep_does_not_depend_on_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"m\"\n[limit]\nrequests = 50000\nwindow = \"1s\"\n[[limiter]]\nkind = \"sliding_log\"\n\
[sweep]\ngrid = 2\nloads = [1.0, 1.2]\nload_duration = \"5s\"\n";
    let path = dir.path().join("m.toml");
    fs::write(&path, text).unwrap();
    let mut outputs = Vec::new();
    let mut refusals = Vec::new();
    for threads in ["1", "2", "4"] {
        let out = dir.path().join(format!("fits{threads}"));
        ratesim()
            .env("RAYON_NUM_THREADS", threads)
            .args(["sweep", path.to_str().unwrap(), "-q", "--no-charts", "--memory", "2560KiB"])
            .args(["--out", out.to_str().unwrap()])
            .assert()
            .success();
        outputs.push(snapshot(&out));
        let refused = ratesim()
            .env("RAYON_NUM_THREADS", threads)
            .args(["sweep", path.to_str().unwrap(), "-q", "--no-charts", "--memory", "1536KiB"])
            .args(["--out", dir.path().join("refused").to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(refused.status.code(), Some(1), "{threads} threads");
        refusals.push(String::from_utf8(refused.stderr).unwrap());
    }
    assert!(outputs[0] == outputs[1] && outputs[0] == outputs[2]);
    assert!(refusals[0] == refusals[1] && refusals[0] == refusals[2], "{refusals:?}");
    assert!(
        refusals[0].contains("the run holds 1.0 MiB of admitted timestamps inside exact windows, more than the 768.0 KiB it may use"),
        "{}",
        refusals[0]
    );
}

/// A shaping limiter's burst-pair rows hold 32 bytes per request of L
/// each (L = 1000: 31.25 KiB): under a budget of 40 KiB they run one at a
/// time, on 4 threads, with the same results as under the default budget.
#[test]
fn burst_pair_rows_run_as_many_at_once_as_the_budget_holds() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"bp\"\n[limit]\nrequests = 1000\nwindow = \"10s\"\n[[limiter]]\nkind = \"gcra\"\n\
max_wait = \"10s\"\n[sweep]\ngrid = 4\nloads = [0.1]\nload_duration = \"10s\"\n";
    let path = dir.path().join("bp.toml");
    fs::write(&path, text).unwrap();
    let mut outputs = Vec::new();
    for memory in ["40KiB", "8GiB"] {
        let out = dir.path().join(memory);
        ratesim()
            .env("RAYON_NUM_THREADS", "4")
            .args(["sweep", path.to_str().unwrap(), "-q", "--no-charts", "--memory", memory])
            .args(["--out", out.to_str().unwrap()])
            .assert()
            .success();
        outputs.push(snapshot(&out));
    }
    assert!(outputs[0] == outputs[1]);
}

/// `ratesim completions SHELL` prints a script for that shell that knows the
/// subcommands; an unknown or missing shell is a usage error.
#[test]
fn completions_for_each_shell() {
    for (shell, marker) in [
        ("bash", "_ratesim()"),
        ("zsh", "#compdef ratesim"),
        ("fish", "complete -c ratesim"),
        ("powershell", "Register-ArgumentCompleter -Native -CommandName 'ratesim'"),
    ] {
        let out = ratesim().args(["completions", shell]).output().unwrap();
        assert!(out.status.success() && out.stderr.is_empty(), "{shell}: {out:?}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains(marker), "{shell}: no {marker:?}");
        for sub in ["run", "sweep", "check", "completions", "decisions", "no-charts"] {
            assert!(script.contains(sub), "{shell}: no {sub:?}");
        }
        if shell == "bash" {
            for sub in ["run", "sweep", "check"] {
                assert!(script.contains(&format!("ratesim,{sub})")), "bash: {sub} is not a subcommand case");
            }
        }
    }
    ratesim()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("invalid value 'tcsh'").and(predicate::str::contains("bash")));
    ratesim().arg("completions").assert().code(2).stdout("");
}

/// The bash script, sourced into bash, completes subcommands, flags and shells.
#[cfg(unix)]
#[test]
fn bash_completion_completes_in_bash() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("ratesim.bash");
    fs::write(&script, ratesim().args(["completions", "bash"]).output().unwrap().stdout).unwrap();
    // _ratesim CMD CUR PREV, as bash calls it; prints the candidates.
    let complete = r#"source "$1"
c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
      _ratesim ratesim "${@: -1}" "${@: -2:1}"; echo "${COMPREPLY[*]}"; }
c ratesim sw
c ratesim run --no
c ratesim completions f"#;
    let out =
        std::process::Command::new("bash").args(["-c", complete, "bash"]).arg(&script).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sweep\n--no-charts\nfish\n", "{out:?}");
}

/// One local node is the limiter itself: the same decisions and every
/// common output byte for byte.
#[test]
fn one_local_node_is_the_single_limiter() {
    let dir = tempfile::tempdir().unwrap();
    let plain = fs::read_to_string(scenario("poisson.toml")).unwrap();
    let one = format!("{plain}\n[nodes]\ncount = 1\nmode = \"local\"\n");
    let mut outputs = Vec::new();
    for (name, text) in [("plain", plain), ("one", one)] {
        let path = dir.path().join(format!("{name}.toml"));
        fs::write(&path, text).unwrap();
        let out = dir.path().join(format!("out-{name}"));
        ratesim()
            .args(["run", path.to_str().unwrap(), "--quiet", "--decisions", "--no-charts"])
            .args(["--out", out.to_str().unwrap()])
            .assert()
            .success();
        outputs.push(out);
    }
    for f in ["summary.csv", "timeline.csv"] {
        assert!(
            fs::read(outputs[0].join(f)).unwrap() == fs::read(outputs[1].join(f)).unwrap(),
            "{f} differs with one local node"
        );
    }
    // decisions.csv: the same rows, then the node (0; none for the reference).
    let plain = fs::read_to_string(outputs[0].join("decisions.csv")).unwrap();
    let one = fs::read_to_string(outputs[1].join("decisions.csv")).unwrap();
    assert_eq!(plain.lines().count(), one.lines().count());
    for (p, o) in plain.lines().zip(one.lines()) {
        let node = if p.starts_with("seq,") {
            ",node"
        } else if p.contains(",sliding_log,") {
            ","
        } else {
            ",0"
        };
        assert_eq!(o, format!("{p}{node}"), "decisions.csv differs with one local node");
    }
    // summary.md: the same, then the topology and the one node's figures.
    let plain = fs::read_to_string(outputs[0].join("summary.md")).unwrap();
    let one = fs::read_to_string(outputs[1].join("summary.md")).unwrap();
    let nodes = one.strip_prefix(plain.as_str()).expect("summary.md differs with one local node");
    assert!(nodes.starts_with("\nNodes: 1 node, local, 100 per node, round robin."), "{nodes}");
}

/// A closed population's header: no open-loop trace, who the clients are
/// and how they retry.
#[test]
fn a_closed_run_says_who_sends_and_how_they_retry() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bc");
    ratesim()
        .args([
            "run",
            scenario("backoff_closed.toml").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--no-charts",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "trace     no open-loop requests (closed clients only); run covers [0, 120 s); seed 3\n\
             clients   100 closed clients thinking 1s on average\n\
             retry     full_jitter (base 100ms, cap 10s, at most 1000 attempts)\n",
        ));
    // report.md, the page to paste, says it too.
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains(
            "Trace: no open-loop requests (closed clients only).\n\nClients: 100 closed clients thinking 1s on \
             average. Retry: full_jitter (base 100ms, cap 10s, at most 1000 attempts).\n"
        ),
        "{report}"
    );
}

/// `--out` naming a symbolic link to a folder: the run writes into the
/// folder it points to (which then holds the new results, not stale ones)
/// and leaves the link a link.
#[cfg(unix)]
#[test]
fn out_through_a_symlink_writes_into_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("results");
    let link = dir.path().join("latest");
    let run = |seed: &str| {
        ratesim()
            .args(["run", scenario("boundary_burst.toml").to_str().unwrap(), "-q", "--no-charts"])
            .args(["--seed", seed, "--out", link.to_str().unwrap()])
            .assert()
            .success();
    };
    fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink("results", &link).unwrap();
    run("1");
    run("2");
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    let report = fs::read_to_string(real.join("report.md")).unwrap();
    assert!(report.contains("seed 2"), "{report}");
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "nothing left beside them: {names:?}");
}

/// `check` says where a run stops a source that would go on past
/// `duration`, and says nothing for one that ends before it.
#[test]
fn check_says_a_source_is_cut_at_the_duration() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.toml");
    fs::write(
        &path,
        "name = \"cut\"\nduration = \"5s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n\
         [[traffic]]\nkind = \"poisson\"\nload = 1.5\nend = \"60s\"\n\
         [[traffic]]\nkind = \"constant\"\nload = 1\nend = \"4s\"\n\
         [[limiter]]\nkind = \"fixed_window\"\n",
    )
    .unwrap();
    let out = ratesim().args(["check", path.to_str().unwrap()]).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("from 0 s to 60 s (a run stops it at `duration`, 5 s)"),
        "the poisson source: {stdout}"
    );
    assert!(stdout.contains("from 0 s to 4 s\n"), "the constant source ends first: {stdout}");
}

/// Retries multiply requests past their guard: `check` prints the bound on
/// a run's attempts and warns on stderr when it passes 10^9, and `run` warns
/// before it starts (here it then stops at once, on an output folder it
/// cannot make, so the test does not run the hours the warning is about).
/// A scenario well under the bound gets the line and no warning.
#[test]
fn check_and_run_warn_when_retries_may_make_over_a_billion_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("storm.toml");
    fs::write(
        &path,
        "name = \"storm\"\nduration = \"1h\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n\
         [retry]\npolicy = \"immediate\"\nmax_attempts = 1000\n\
         [[traffic]]\nkind = \"closed\"\nclients = 1000\nthink = \"100ms\"\n\
         [[limiter]]\nkind = \"fixed_window\"\n",
    )
    .unwrap();
    let warning = "warning: a run of this scenario may make up to about 3.6e10 attempts (about 3.6e7 requests, \
                   at most 1000 attempts each), more than 1e9, the most requests a scenario's generated sources \
                   may send: at tens to hundreds of nanoseconds an attempt for each limiter, it may run for minutes \
                   or hours, though its memory stays bounded. A smaller `max_attempts`, a retry `budget` or fewer \
                   requests lowers it.\n";
    let out = ratesim().args(["check", path.to_str().unwrap()]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap());
    assert!(out.status.success(), "a warning, not an error: {stderr}");
    assert!(
        stdout.contains(
            "attempts  up to about 3.6e10 in one run (about 3.6e7 requests, at most 1000 attempts each)\n"
        ),
        "{stdout}"
    );
    assert!(stderr.starts_with(warning), "{stderr}");
    let out = ratesim().args(["run", path.to_str().unwrap(), "--out", "/dev/null/x"]).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success());
    assert!(stderr.starts_with(warning), "{stderr}");
    assert!(stderr.contains("error: cannot write output to /dev/null/x"), "{stderr}");
    // `--quiet` is quiet; `sweep` runs no sweep here that keeps the retries.
    for args in [["run", "-q"], ["sweep", "--no-charts"]] {
        let out =
            ratesim().args(args).args([path.to_str().unwrap(), "--out", "/dev/null/x"]).output().unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(!stderr.contains("warning") && stderr.contains("/dev/null/x"), "{args:?}: {stderr}");
    }
    // The shipped closed scenario: 100 clients x 120 s / 1 s, up to 1000 attempts each.
    let out = ratesim().args(["check", scenario("backoff_closed.toml").to_str().unwrap()]).output().unwrap();
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains(
            "attempts  up to about 1.2e7 in one run (about 12000 requests, at most 1000 attempts each)\n"
        ),
        "{stdout}"
    );
}

/// `check`'s summary shows a trace path escaped, as error messages do: an
/// escape sequence in a file name never reaches the terminal.
#[test]
fn check_escapes_what_the_scenario_wrote() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("t\u{1b}[2J.csv"), "time\n0.5\n").unwrap();
    let path = dir.path().join("esc.toml");
    fs::write(
        &path,
        "name = \"esc\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n\
         [[traffic]]\nkind = \"csv\"\npath = \"t\\u001b[2J.csv\"\n[[limiter]]\nkind = \"fixed_window\"\n",
    )
    .unwrap();
    let out = ratesim().args(["check", path.to_str().unwrap()]).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    assert!(stdout.contains("/t\\u{1b}[2J.csv: 1 row"), "{stdout}");
}

/// The scenario-format example of the README is valid as written: `check`
/// reads it (and its trace, beside it as in `scenarios/`) without error.
#[test]
fn the_readme_scenario_example_checks() {
    let readme = fs::read_to_string(common::root().join("README.md")).unwrap();
    let section = readme.split("## Scenario format").nth(1).unwrap();
    let example = section.split("```toml\n").nth(1).and_then(|b| b.split("```").next()).unwrap();
    assert!(example.contains("[[limiter]]") && example.contains("kind = \"csv\""), "{example}");
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("traces")).unwrap();
    fs::copy(scenario("traces/api_gateway.csv"), dir.path().join("traces/api_gateway.csv")).unwrap();
    let path = dir.path().join("example.toml");
    fs::write(&path, example).unwrap();
    ratesim()
        .args(["check", path.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("is valid (nothing was run)"));
}

/// report.md's "Regenerate with" line is the command that made the folder:
/// the subcommand, and the options that change what is written.
#[test]
fn report_says_how_to_regenerate_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"r\"\nseed = 1\nduration = \"2s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n\
[[traffic]]\nkind = \"poisson\"\nrate = 15\n";
    let path = dir.path().join("my scenario.toml");
    std::fs::write(&path, text).unwrap();
    let out = dir.path().join("o");
    ratesim()
        .args(["run", path.to_str().unwrap(), "-q", "--out", out.to_str().unwrap()])
        .args(["--seed", "7", "--slots", "3,4", "--format", "svg", "--decisions"])
        .assert()
        .success();
    let quoted = format!("'{}'", path.display());
    assert!(
        read(&out, "report.md")
            .contains(&format!("Regenerate with `ratesim run {quoted} --slots 3,4 --seed 7 --decisions`.")),
        "{}",
        read(&out, "report.md")
    );
    let out = dir.path().join("s");
    ratesim()
        .args(["sweep", path.to_str().unwrap(), "-q", "--no-charts", "--out", out.to_str().unwrap()])
        .assert()
        .success();
    assert!(read(&out, "report.md").contains(&format!("Regenerate with `ratesim sweep {quoted}`.")));
}

/// With reacting clients the terminal says, between its two tables, what
/// the counts and the last two columns compare (as summary.md does), and
/// the clients table carries both retry counts: on the rounding scenario,
/// the rounded-down header's 1736 retries are all too early, the exact
/// header's none.
#[test]
fn a_retry_run_explains_its_tables_in_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    ratesim()
        .args(["run", scenario("retry_after_rounding.toml").to_str().unwrap(), "--no-charts", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "\nClients react to rejections, so each limiter has its own attempt stream: the counts above are\n",
        ))
        .stdout(predicate::str::contains("with the sliding log's, disagreement over the open-loop ones only.\n"))
        .stdout(predicate::str::contains("early retries  too early"))
        .stdout(predicate::str::is_match(r"fixed_window\s+1434\s+4504\s+3.14\s+1400\s+34\s+0\s+1848\s+0\s").unwrap())
        .stdout(
            predicate::str::is_match(r"fixed_window\(retry_after=floor_seconds\)\s+1434\s+3170\s+2.21\s+1000\s+434\s+0\s+1736\s+1736\s")
                .unwrap(),
        );
}

// ---- the seed sweep --------------------------------------------------------------

/// Poisson arrivals from 3 Zipf clients at 3 L, L = 10 per 1 s, for 5 s,
/// full-jitter retries, two local nodes picked at random, an admission
/// curve, seed 7 and a seed sweep of `seeds`: every random draw a run
/// makes, and every column `summary.csv` adds for reacting clients.
fn seeded(seeds: u32) -> String {
    format!(
        "name = \"seeded\"\nseed = 7\nduration = \"5s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n\
[[traffic]]\nkind = \"poisson\"\nload = 3.0\nclients = 3\n\
[retry]\npolicy = \"full_jitter\"\nbase = \"100ms\"\ncap = \"1s\"\nmax_attempts = 4\n\
[[limiter]]\nkind = \"fixed_window\"\n[[limiter]]\nkind = \"gcra\"\n\
[nodes]\ncount = 2\nbalance = \"random\"\n\
[output]\nadmission_curve = true\n[sweep]\nseeds = {seeds}\n"
    )
}

/// The rows of `seed_sweep.csv` for `seed`, without the seed: as
/// `summary.csv` writes its rows.
fn seed_rows(csv: &str, seed: u64) -> Vec<String> {
    let prefix = format!("{seed},");
    csv.lines().filter_map(|l| l.strip_prefix(&prefix)).map(String::from).collect()
}

/// The seed sweep's rows for the scenario's own seed are `summary.csv`'s,
/// byte for byte (the reruns measure no admission curve, and keep only
/// their totals); another seed's rows are what a run at that seed
/// (`--seed`) writes in its own `summary.csv`. Seeds 7, 8 and 9 draw
/// differently.
#[test]
fn the_seed_sweep_reruns_the_scenario_as_its_own_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seeded.toml");
    fs::write(&path, seeded(3)).unwrap();
    let out = dir.path().join("o");
    ratesim()
        .args(["run", path.to_str().unwrap(), "-q", "--format", "svg", "--out", out.to_str().unwrap()])
        .assert()
        .success();
    let sweep = read(&out, "seed_sweep.csv");
    let summary = read(&out, "summary.csv");
    let (header, rows) = summary.split_once('\n').unwrap();
    assert_eq!(sweep.lines().next().unwrap(), format!("seed,{header}"));
    assert!(header.contains("time_to_success_p99"), "{header}");
    assert_eq!(seed_rows(&sweep, 7), rows.lines().collect::<Vec<_>>());
    assert_eq!(sweep.lines().count(), 1 + 3 * 3);
    let other = dir.path().join("o8");
    ratesim()
        .args(["run", path.to_str().unwrap(), "-q", "--no-charts", "--seed", "8"])
        .args(["--out", other.to_str().unwrap()])
        .assert()
        .success();
    let eight = read(&other, "summary.csv");
    assert_eq!(seed_rows(&sweep, 8), eight.lines().skip(1).collect::<Vec<_>>());
    assert!(seed_rows(&sweep, 7) != seed_rows(&sweep, 8) && seed_rows(&sweep, 8) != seed_rows(&sweep, 9));
    // The sweep run alone writes the same table.
    let alone = dir.path().join("s");
    ratesim()
        .args(["sweep", path.to_str().unwrap(), "-q", "--no-charts", "--out", alone.to_str().unwrap()])
        .assert()
        .success();
    assert_eq!(read(&alone, "seed_sweep.csv"), sweep);
    // The tables, the chart and the report.
    let md = read(&out, "seed_sweep.md");
    for part in [
        "### Seed sweep: 3 seeds, 7 to 9",
        "The scenario's own traffic, limit, limiters, clients and nodes, rerun once per seed from its own seed, 7, to 9",
        "(Poisson arrivals, their client keys, retry jitter, the node each request goes to)",
        "| metric ",
        " seed 7 |",
        "| attempts/logical ",
        "| time to success p99 ",
        "| busiest node peak/L ",
    ] {
        assert!(md.contains(part), "{part}\n{md}");
    }
    let report = read(&out, "report.md");
    assert!(report.contains("## Seed sweep\n") && report.contains("![Over-admission (admitted"), "{report}");
    assert!(read(&out, "seed_sweep.svg").contains("over-admission at 3 seeds, 7 to 9"));
}

/// The seed sweep's tables are the same on one thread and on two.
#[test]
fn the_seed_sweep_does_not_depend_on_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seeded.toml");
    fs::write(&path, seeded(4)).unwrap();
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(threads);
        ratesim()
            .env("RAYON_NUM_THREADS", threads)
            .args(["sweep", path.to_str().unwrap(), "-q", "--format", "svg", "--out", out.to_str().unwrap()])
            .assert()
            .success();
        outputs.push(snapshot(&out));
    }
    assert!(outputs[0].keys().any(|f| f.ends_with("seed_sweep.csv")));
    assert!(outputs[0] == outputs[1]);
}

/// A scenario that draws nothing at random gives every seed the same
/// figures: `check` and a run warn, the Markdown says so plainly and gives
/// each figure once, the figures that are 0 throughout in a sentence.
#[test]
fn a_seed_sweep_of_a_scenario_without_chance_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let text = fs::read_to_string(scenario("boundary_burst.toml")).unwrap() + "\n[sweep]\nseeds = 3\n";
    let path = dir.path().join("bb.toml");
    fs::write(&path, &text).unwrap();
    let warning = "`sweep.seeds` = 3 reruns the scenario with 3 seeds, but it draws nothing at random (no Poisson \
source, no closed clients, no retries with jitter, no random balancing across nodes): every seed will give the same \
figures, and seed_sweep.md will say so; leave `seeds` out, or make the traffic random";
    ratesim()
        .args(["check", path.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("sweeps    seeds 1 to 3 (3 runs of the traffic, one per seed)"))
        .stderr(predicate::str::contains(warning));
    let out = dir.path().join("o");
    ratesim()
        .args(["run", path.to_str().unwrap(), "--no-charts", "--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stderr(predicate::str::contains(warning))
        .stdout(predicate::str::contains("seed sweep: 3 seeds, 1 to 3"));
    let md = read(&out, "seed_sweep.md");
    for part in [
        "**Every seed gave the same figures for every limiter**: this scenario draws nothing at random",
        "**false rejects** were 0 for every limiter at every seed, and have no rows.",
        "| metric         | limiter             | every seed |",
    ] {
        assert!(md.contains(part), "{part}\n{md}");
    }
    assert!(!md.contains("| false rejects") && !md.contains("| mean"), "{md}");
    // Quiet: no warning.
    ratesim()
        .args(["run", path.to_str().unwrap(), "-q", "--no-charts", "--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
}
