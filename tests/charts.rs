//! The charts and sweep outputs of `ratesim run`, checked for content: valid
//! SVG with the legend labels and axis titles, PNGs of the expected size that
//! are not blank, and the tables and report that go with them.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{ratesim, read, root, run_scenario_text};
use predicates::prelude::*;

/// A small sweep scenario: the issue's defaults but a coarse grid and short
/// load runs, so the test stays fast.
const SMALL_SWEEP: &str = r#"
name = "small_sweep"
description = "每秒 100 个请求：突发对扫描"
seed = 3

[limit]
requests = 100
window = "1s"

[sweep]
grid = 200
loads = [0.8, 1.5, 3.0]
load_duration = "10s"
map_slots = [1, 10]
"#;

/// The height of a chart of `strips` strips stacked: 600, or 60 px a strip
/// and 120 around them where that is taller.
fn chart_height(strips: u32) -> u32 {
    600.max(120 + 60 * strips)
}

/// A well-formed SVG document of the chart size (1200 x 600, taller for a
/// chart of 9 strips or more) that holds every text.
fn assert_svg(dir: &Path, file: &str, texts: &[&str]) {
    let svg = read(dir, file);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{file} is not an SVG document");
    let height = svg_height(&svg);
    assert!(svg.contains(r#"width="1200""#) && (height == 600 || height >= chart_height(9)), "{file}: size");
    assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count(), "{file}: unbalanced text");
    for t in texts {
        assert!(svg.contains(t), "{file} lacks {t:?}");
    }
}

/// The height an SVG chart declares.
fn svg_height(svg: &str) -> u32 {
    let at = svg.find(r#"height=""#).expect("a height") + 8;
    svg[at..].split('"').next().unwrap().parse().unwrap()
}

/// A PNG of the chart size (1200 x 600, taller for a chart of 9 strips or
/// more) with a real picture: many non-white pixels, several colours.
fn assert_png(dir: &Path, file: &str) {
    let decoder = png::Decoder::new(fs::File::open(dir.join(file)).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let size = (info.width, info.height);
    assert!(size.0 == 1200 && (size.1 == 600 || size.1 >= chart_height(9)), "{file}: {size:?}");
    let channels = info.line_size / info.width as usize;
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(channels).collect();
    let ink = pixels.iter().filter(|p| p[..3].iter().any(|&c| c < 200)).count();
    assert!(ink > pixels.len() / 100, "{file} is nearly blank: {ink} dark pixels");
    let mut colours: Vec<[u8; 3]> = pixels.iter().map(|p| [p[0], p[1], p[2]]).collect();
    colours.sort();
    colours.dedup();
    assert!(colours.len() > 8, "{file} has only {} colours", colours.len());
}

#[test]
fn sweep_scenario_writes_tables_charts_and_report() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("small_sweep.toml");
    fs::write(&scenario, SMALL_SWEEP).unwrap();
    let out = tmp.path().join("out");
    ratesim()
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("slot_counter(N=100)").and(predicate::str::contains("≈ 10 %")));

    let csv = read(&out, "error_vs_slots.csv");
    assert!(csv.starts_with("limiter,algorithm,slots,grid,band_width,"));
    assert_eq!(csv.lines().count(), 11, "header + 10 default limiters");
    // Every violating pair of a window limiter lets a whole burst through
    // against a full window: mean excess L = 100.
    assert!(
        csv.contains("slot_counter(N=10),slot_counter,10,200,0.1,0.1,0.1,0.0525,0.05,200,2,100,true,\n"),
        "{csv}"
    );
    let md = read(&out, "error_vs_slots.md");
    assert!(md.contains("| slot_counter(N=100)") && md.contains("≈ 1 %") && md.contains("single instant"));
    let load = read(&out, "load_sweep.csv");
    assert_eq!(load.lines().count(), 1 + 3 * 10);
    assert!(read(&out, "load_sweep.md").contains("over-admission"));

    assert_svg(
        &out,
        "error_vs_slots.svg",
        &[
            "slots N (log scale)",
            "vulnerable band",
            "violation probability",
            "fixed window",
            "10 slots",
            "1000 slots",
            "analytic 1/N",
            "rule of thumb",
            "sliding log",
        ],
    );
    assert_svg(
        &out,
        "burst_pair_map.svg",
        &[
            "gap g (share of W = 1s)",
            "offset p (share of W)",
            "fixed window: band 100.00 %",
            "10 slots: band 10.00 %, 5.25 % of pairs",
        ],
    );
    assert_svg(
        &out,
        "load_sweep.svg",
        &[
            "load factor (× L / W)",
            "over-admission (%)",
            "peak / L",
            "fixed window",
            "100 slots",
            "sliding log",
        ],
    );
    assert_svg(
        &out,
        "windows_diagram.svg",
        &["time (s)", "t*", "fixed window: 200 admitted", "sliding log (exact): 100 admitted", "5 slots"],
    );
    // Load 1.5 of the sweep: the fixed window holds 16 B per key, the log
    // 8 B per timestamp.
    assert_svg(
        &out,
        "which_limiter.svg",
        &[
            "state per client key (bytes, log)",
            "peak / L",
            "over-admission (%)",
            "fixed window: 16 B",
            "sliding log",
        ],
    );
    for png in [
        "error_vs_slots.png",
        "burst_pair_map.png",
        "load_sweep.png",
        "windows_diagram.png",
        "which_limiter.png",
    ] {
        assert_png(&out, png);
    }

    let report = read(&out, "report.md");
    assert!(report.starts_with("# small_sweep\n"));
    assert!(report.contains("每秒 100 个请求"), "non-ASCII description kept");
    for link in [
        "](error_vs_slots.svg)",
        "](burst_pair_map.svg)",
        "](load_sweep.svg)",
        "](which_limiter.svg)",
        "](windows_diagram.svg)",
        "](error_vs_slots.csv)",
    ] {
        assert!(report.contains(link), "report lacks {link}");
    }
}

#[test]
fn run_draws_the_trace_charts() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bb");
    ratesim()
        .args(["run", "scenarios/boundary_burst.toml", "-q", "--out", out.to_str().unwrap()])
        .assert()
        .success();
    for f in ["summary.csv", "summary.md", "timeline.csv", "report.md"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    assert_svg(
        &out,
        "window_count.svg",
        &[
            "time t (s)",
            "admitted in (t - 1s, t]",
            "limit L = 100",
            "highest count (peak / L):",
            "fixed window (2×L)",
            "10 slots (1×L)",
            "sliding log (1×L)",
        ],
    );
    assert_svg(
        &out,
        "timeline.svg",
        &[
            // All the traffic in 20 ms of a 3 s run: zoomed to 950 to
            // 1050 ms, its 10 ms bins as they are.
            "time (ms), zoomed to the traffic: none in the rest of the 3s run",
            "requests per 10ms bin",
            "offered",
            "fixed window: admitted 200 of 200",
            "admitted: 100 slots",
        ],
    );
    assert_svg(
        &out,
        "windows_diagram.svg",
        &["fixed window: 200 admitted", "2 slots: 100 admitted", "10 slots: 100 admitted", "100 slots", "t*"],
    );
    for png in ["window_count.png", "timeline.png", "windows_diagram.png"] {
        assert_png(&out, png);
    }
    // The sliding log is at L in a third of the bins here: the limit's
    // dashes show. On nodes_uneven it is at L from the first bin to the
    // last and hides them, and the legend says so (the committed output,
    // which `committed_outputs_are_up_to_date` holds to what a run writes).
    assert!(!read(&out, "window_count.svg").contains("(hidden"));
    assert_svg(
        &root().join("output/nodes_uneven"),
        "window_count.svg",
        &["limit L = 100 (hidden by lines at 100)"],
    );
    // retry_after_rounding's ceil_seconds and redis_cell lanes decide
    // alike here (their one different request gave up under both): one
    // curve, nested, not one hidden under the other.
    assert_svg(
        &root().join("output/retry_after_rounding"),
        "time_to_success.svg",
        &["equal curves: lines nested", "fixed window, header ceil", "fixed window, header redis-cell"],
    );
    let report = read(&out, "report.md");
    assert!(
        report.contains("![") && report.contains("](window_count.svg)") && report.contains("| fixed_window")
    );
    assert!(report.contains("zoomed to 950ms to 1050ms, where all the traffic is"), "{report}");
}

#[test]
fn format_and_no_charts_choose_what_is_drawn() {
    let tmp = tempfile::tempdir().unwrap();
    let svg_only = tmp.path().join("svg");
    ratesim()
        .args([
            "run",
            "scenarios/boundary_burst.toml",
            "-q",
            "--format",
            "svg",
            "--out",
            svg_only.to_str().unwrap(),
        ])
        .assert()
        .success();
    assert!(svg_only.join("timeline.svg").is_file() && !svg_only.join("timeline.png").exists());
    let none = tmp.path().join("none");
    ratesim()
        .args(["run", "scenarios/boundary_burst.toml", "-q", "--no-charts", "--out", none.to_str().unwrap()])
        .assert()
        .success();
    let names: Vec<String> =
        fs::read_dir(&none).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.ends_with(".svg") && !n.ends_with(".png")), "{names:?}");
    assert!(!read(&none, "report.md").contains("!["));
}

#[test]
fn a_bad_font_is_refused_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    ratesim()
        .args([
            "run",
            "scenarios/boundary_burst.toml",
            "--font",
            "Cargo.toml",
            "--out",
            out.to_str().unwrap(),
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("cannot load the chart font"));
    assert!(!out.exists());
}

/// The committed `output/` of every shipped scenario is what the code makes
/// now: text outputs (CSV, Markdown, SVG) byte for byte, and no stale files.
/// Regenerate with `for s in scenarios/*.toml; do ratesim run $s -q; done`.
#[test]
fn committed_outputs_are_up_to_date() {
    let tmp = tempfile::tempdir().unwrap();
    let mut scenarios: Vec<PathBuf> = fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    scenarios.sort();
    assert!(scenarios.len() >= 5);
    let text = |p: &Path| p.extension().is_some_and(|e| e == "csv" || e == "md" || e == "svg");
    let listing = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| text(p))
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    // The scenarios run side by side (the sweep dominates; the rest overlap it).
    std::thread::scope(|scope| {
        for s in &scenarios {
            let stem = s.file_stem().unwrap().to_string_lossy().into_owned();
            let fresh = tmp.path().join(&stem);
            scope.spawn(move || {
                let rel = format!("scenarios/{stem}.toml");
                ratesim()
                    .args(["run", &rel, "-q", "--format", "svg", "--out", fresh.to_str().unwrap()])
                    .assert()
                    .success();
            });
        }
    });
    for s in &scenarios {
        let stem = s.file_stem().unwrap().to_string_lossy().into_owned();
        let rel = format!("scenarios/{stem}.toml");
        let fresh = tmp.path().join(&stem);
        let committed = root().join("output").join(&stem);
        let files = listing(&fresh);
        assert_eq!(listing(&committed), files, "{stem}: committed file list differs; regenerate output/");
        // A later run replaces this folder only if it knows every name in it.
        for e in fs::read_dir(&fresh).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            assert!(ratesim::export::output_dir::is_run_file(&name), "{stem}: add {name} to RUN_FILES");
        }
        for f in files {
            assert!(
                fs::read(committed.join(&f)).unwrap() == fs::read(fresh.join(&f)).unwrap(),
                "output/{stem}/{f} is stale: run `ratesim run {rel}` and commit the result"
            );
        }
    }
}

/// Every committed chart with a legend has its legend column 360 px wide,
/// starting 840 px in (a mark or a heading at 848, a label after its mark
/// at 894), whatever its labels' length: plots one above the other in a
/// `report.md` span the same pixels. (Columns grew to fit their longest
/// label, from 300 to 420 px, and the plots beside them shrank.)
#[test]
fn every_legend_column_is_as_wide() {
    let mut checked = 0;
    for run in fs::read_dir(root().join("output")).unwrap() {
        let run = run.unwrap().path();
        if !run.is_dir() {
            continue;
        }
        for f in fs::read_dir(&run).unwrap() {
            let f = f.unwrap().path();
            // The burst-pair map is two heat maps and their captions; the
            // seed sweep's legend is one line under its title, and its right
            // column holds each row's mean and sd.
            if f.extension().is_none_or(|e| e != "svg")
                || f.ends_with("burst_pair_map.svg")
                || f.ends_with("seed_sweep.svg")
            {
                continue;
            }
            let svg = fs::read_to_string(&f).unwrap();
            assert!(
                [r#"<text x="894""#, r#" x="848""#, r#"points="848,"#].iter().any(|s| svg.contains(s)),
                "{}: no legend at 840 px",
                f.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 80, "{checked}");
}

#[test]
fn sweep_command_runs_only_the_sweeps() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("small_sweep.toml");
    // A trace scenario: `sweep` ignores its traffic and uses its limit and limiters.
    fs::write(&scenario, fs::read_to_string(root().join("scenarios/boundary_burst.toml")).unwrap()).unwrap();
    let out = tmp.path().join("s");
    // Default grid (2000) over 5 limiters; SVG only to keep it quick.
    ratesim()
        .args(["sweep", scenario.to_str().unwrap(), "-q", "--format", "svg", "--out", out.to_str().unwrap()])
        .assert()
        .success();
    assert!(!out.join("summary.csv").exists());
    let csv = read(&out, "error_vs_slots.csv");
    assert_eq!(csv.lines().count(), 1 + 5);
    assert!(
        csv.contains(
            "slot_counter(N=100),slot_counter,100,2000,0.01,0.01,0.01,0.00525,0.005,200,2,100,true,\n"
        ),
        "{csv}"
    );
    assert!(csv.contains("sliding_log,sliding_log,,2000,0,0,,0,0,100,1,,true,\n"), "{csv}");
    assert!(out.join("error_vs_slots.svg").is_file() && out.join("windows_diagram.svg").is_file());
}

/// `ratesim sweep` of limiters that delay: the burst pairs are judged on
/// backend times (the FIFO of 20 drained at L / W never passes L; the GCRA
/// of burst L reaches 19 = L + 9), no error-versus-N chart is drawn with no
/// limiter on its N axis (the report says why), and the heat map and
/// diagram say their window limiters are references, not the scenario's.
#[test]
fn a_sweep_of_shaping_limiters_judges_backend_times() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("shapers.toml");
    fs::write(
        &scenario,
        r#"
name = "shapers"
[limit]
requests = 10
window = "1s"
[[limiter]]
kind = "leaky_queue"
queue = 20
[[limiter]]
kind = "gcra"
max_wait = "2s"
[sweep]
grid = 40
loads = [1.0]
load_duration = "10s"
"#,
    )
    .unwrap();
    let out = tmp.path().join("s");
    ratesim()
        .args(["sweep", scenario.to_str().unwrap(), "--format", "svg", "--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Judged on backend times: leaky_queue(queue=20), gcra(max_wait=2s).",
        ));
    let csv = read(&out, "error_vs_slots.csv");
    assert!(csv.contains("\nleaky_queue(queue=20),leaky_queue,,40,0,,,0,,10,1,,true,\n"), "{csv}");
    assert!(csv.contains("\ngcra(max_wait=2s),gcra,,40,1,,,1,,19,1.9,9,true,\n"), "{csv}");
    assert!(!out.join("error_vs_slots.svg").exists(), "no limiter on the N axis: no error-versus-N chart");
    let report = read(&out, "report.md");
    assert!(report.contains("No error-versus-N chart: none of these limiters is a fixed window"), "{report}");
    assert_svg(&out, "burst_pair_map.svg", &["shapers: reference window limiters, not this scenario"]);
    assert_svg(&out, "windows_diagram.svg", &["how reference window limiters cut time"]);
    assert!(report.contains("none of them among this scenario"), "{report}");
}

/// A bound far over every measured peak is given in the legend, not
/// drawn: 8 nodes never synced could admit 8 x L, against peaks of about
/// 1.0 to 1.3 L, which it squeezed into the foot of the axis.
#[test]
fn a_sync_sweep_keeps_an_off_scale_bound_in_its_legend() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_scenario_text(
        tmp.path(),
        "eight.toml",
        r#"
name = "eight"
duration = "3s"
[limit]
requests = 1000
window = "1s"
[nodes]
count = 8
mode = "sync"
sync_interval = "100ms"
[[traffic]]
kind = "poisson"
load = 1.3
[[limiter]]
kind = "fixed_window"
[sweep]
sync_intervals = ["10ms", "100ms", "1s"]
"#,
        &["--format", "svg"],
    );
    assert_svg(&out, "sync_sweep.svg", &["K: each node at L, never synced", "8 × L: off the scale"]);
    let svg = read(&out, "sync_sweep.svg");
    // The peak axis ends near the peaks (0.9 to 1.4), far under the
    // bound: its ticks had run to 8.
    for tick in ["\n4\n", "\n8\n"] {
        assert!(!svg.contains(tick), "a peak axis up to the bound: {tick:?}");
    }
    assert!(svg.contains("\n1.1\n"), "{svg}");
}

/// The first-request fixed window is not measured by burst pairs (a lone
/// pair opens its window), and says so, instead of band 0 and worst 1; a
/// scenario on nodes says the burst-pair and load sweeps leave them out,
/// on the terminal and at the top of the report.
#[test]
fn sweeps_say_what_they_do_not_measure() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("nodes.toml");
    fs::write(
        &scenario,
        r#"
name = "nodes"
duration = "10s"
[limit]
requests = 100
window = "1s"
[nodes]
count = 3
mode = "local"
per_node = 100
[[traffic]]
kind = "constant"
load = 5
[[limiter]]
kind = "fixed_window"
[[limiter]]
kind = "fixed_window"
align = "first-request"
[sweep]
grid = 20
loads = [1.0, 3.0]
load_duration = "10s"
map_slots = [1]
"#,
    )
    .unwrap();
    let out = tmp.path().join("s");
    let left_out = "The burst-pair and load sweeps run each limiter alone on one node over open-loop arrivals \
of their own, leaving out this scenario's [nodes] (3 nodes, local, 100 per node, round robin).";
    ratesim()
        .args(["sweep", scenario.to_str().unwrap(), "--format", "svg", "--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains(left_out).and(predicate::str::contains(
            "Not measured: fixed_window(first-request). A lone pair opens its window",
        )));
    let report = read(&out, "report.md");
    assert!(
        report.contains(&format!(
            "Regenerate with `ratesim sweep {}`.\n\n**Sweeps.** {left_out}",
            scenario.display()
        )),
        "{report}"
    );
    let csv = read(&out, "error_vs_slots.csv");
    assert!(
        csv.contains("\nfixed_window(first-request),fixed_window,,20,,,,,,,,,true,pair_opens_window\n"),
        "{csv}"
    );
    assert!(read(&out, "error_vs_slots.md").contains("| fixed_window(first-request) |    not measured |"));
    // Wrapped onto two lines in the legend's column, nothing of it lost.
    assert_svg(
        &out,
        "error_vs_slots.svg",
        &["first-request window not measured (a lone", "pair opens its window)"],
    );
    let svg = read(&out, "error_vs_slots.svg");
    assert!(!svg.contains("first-request window: 0 pairs broken"), "shown as unbreakable");
    assert!(!svg.contains("rule of thumb"), "no N = 10 or 100: no crosses, none in the legend");
}

#[test]
fn a_chinese_title_without_a_font_is_warned_about() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("zh.toml");
    let text = fs::read_to_string(root().join("scenarios/boundary_burst.toml"))
        .unwrap()
        .replace("name = \"boundary_burst\"", "name = \"边界突发\"");
    fs::write(&scenario, text).unwrap();
    let out = tmp.path().join("o");
    ratesim()
        .args(["run", scenario.to_str().unwrap(), "--no-charts", "--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
    ratesim()
        .args(["run", scenario.to_str().unwrap(), "--format", "png", "--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stderr(predicate::str::contains("边界突发").and(predicate::str::contains("--font")));
    assert_png(&out, "window_count.png");
}

/// A run whose clients react draws the retry timeline and the
/// time-to-success chart; a retry-policy comparison draws its bars. Limiters
/// that differ only by header rounding are named apart in the legends.
#[test]
fn retry_charts_show_what_the_clients_did() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rounding");
    ratesim()
        .args(["run", "scenarios/retry_after_rounding.toml", "-q", "--out", out.to_str().unwrap()])
        .assert()
        .success();
    assert_svg(
        &out,
        "retry_timeline.svg",
        &[
            // 1600 bins of 10 ms drawn as bars of 100 ms (a tenth of the window).
            "first attempts and retries per 100ms bin",
            "attempts per 100ms bin",
            "first attempts",
            "fixed window, header ceil",
            "fixed window, header floor",
            "time (s)",
        ],
    );
    assert_svg(
        &out,
        "time_to_success.svg",
        &[
            "time to success x (log scale from the first tick after 0)",
            // Over all 1434 requests: the rounded-down header's 1000
            // successes, all first attempts, are 70 %, not 100 %.
            "succeeded with time ≤ x (% of all)",
            "70 % succeeded, 30 % gave up",
            // Of all requests, not the table's p50 of the successes.
            "median of all requests: 0 s",
        ],
    );
    for png in ["retry_timeline.png", "time_to_success.png"] {
        assert_png(&out, png);
    }
    let report = read(&out, "report.md");
    for link in [
        "](retry_timeline.svg)",
        "](time_to_success.svg)",
        "| early retries |",
        "The legend's median is of all requests",
    ] {
        assert!(report.contains(link), "report lacks {link}");
    }

    let out = tmp.path().join("backoff");
    ratesim()
        .args(["run", "scenarios/backoff.toml", "-q", "--out", out.to_str().unwrap()])
        .assert()
        .success();
    assert_svg(
        &out,
        "retry_policies.svg",
        &[
            "backoff: retry policies, 10 per 1s, 100 logical requests",
            "attempts per success",
            "exponential",
            "full_jitter",
            // One precision for every bar: 50.50 and 7.02 beside 6.98, not
            // 50.5 and 7.
            "\n50.50\n",
            "\n6.98\n",
            "\n7.02\n",
            // No retry: 10 admitted of 100, 1 of 100 by the leaky bucket,
            // so 10 and 100 attempts per success, and the give-ups shown.
            "\n10.00\n",
            "\n100.00\n",
            // 100 and 50.5 against bars of 6.65 to 10: cut and torn.
            "(torn bars cut)",
            "gave up (%)",
            // The axis says %: the labels over the bars are the numbers.
            "\n90\n",
            "\n99\n",
            "never",
        ],
    );
    assert_png(&out, "retry_policies.png");
    // Every tick of the retry timeline's value axis is labelled: on its
    // square-root scale too the one above the tallest bar (400; a bare
    // tick and grid line there read as a label left out), and every strip
    // labels its 0 (once left out, its tick sat bare at the top of the
    // strip under it).
    let retries = read(&out, "retry_timeline.svg");
    assert!(retries.contains("(square-root scale)") && retries.contains("\n400\n"));
    assert!(!retries.contains("\">\n\n</text>"), "a tick without its label");
    // The first herd (268 offered in 200 ms, 10 admitted): a linear scale,
    // so that the admitted bars are their true share, with the herd's bar
    // cut and its count written; no log scale, on which 10 of 60 filled two
    // thirds of a bar.
    let timeline = read(&out, "timeline.svg");
    for text in [
        "offered bars cut at 58",
        "\n268\n",
        "fixed window: admitted 100 of 698 attempts (14.3 %)",
        "offered: attempts",
    ] {
        assert!(timeline.contains(text), "timeline.svg lacks {text}");
    }
    assert!(!timeline.contains("log scale"));
    assert_png(&out, "timeline.png");
    // The comparison alone: no burst-pair or load sweep.
    assert!(!out.join("error_vs_slots.csv").exists() && !out.join("load_sweep.csv").exists());
    let report = read(&out, "report.md");
    assert!(report.contains("## Retry policies") && report.contains("](retry_policies.svg)"));
    assert!(report.contains("offered bars taller than 58 (the tallest 1 in 20 or fewer) cut there"));
}

/// A run with shaping limiters draws what reached the backend per bin and
/// the delays' distribution, and report.md shows them with the delays
/// table; the numbers in the legends are the run's (nginx without nodelay:
/// 257 of 320 admitted, 188 waited, 27 % at once).
#[test]
fn shaping_charts_show_the_backend_and_the_waits() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("shaping");
    ratesim()
        .args(["run", "scenarios/shaping.toml", "-q", "--out", out.to_str().unwrap()])
        .assert()
        .success();
    assert_svg(
        &out,
        "shaping_timeline.svg",
        &[
            "shaping: reaching the backend per 500ms bin, against the rate L / W",
            "requests per 500ms bin",
            "time (s)",
            "offered",
            "rate 5 per bin",
            "leaky bucket 20, delay 0",
            "admitted 257 of 320, 188 waited (up to 2.00 s)",
            "sliding log",
            "admitted 206 of 320, at once",
        ],
    );
    // Nine strips: taller than 600 px, each strip keeping 60 px, so that
    // its text keeps its size.
    assert_eq!(svg_height(&read(&out, "shaping_timeline.svg")), chart_height(9));
    assert_eq!(svg_height(&read(&out, "timeline.svg")), 660);
    assert_svg(
        &out,
        "delay_cdf.svg",
        &[
            "added latency x (s): wait before the backend",
            "admitted with latency ≤ x (%)",
            "27 % at once, p99 1.98 s",
            "Guava acquire()",
            "≈ GCRA, waits ≤ 2s",
        ],
    );
    // The timeline draws a limiter that delays where its requests reached
    // the backend, and says so; one that refuses, what it admitted.
    assert_svg(
        &out,
        "timeline.svg",
        &[
            "shaping: offered and reaching the backend per 500ms bin",
            "at the backend: leaky bucket 20, delay 0",
            "leaky bucket 20, delay 0: admitted 257 of 320 (80.3 %), 188 delayed",
            "admitted: sliding log",
        ],
    );
    // The policing limiters have no curve of their own.
    assert!(!read(&out, "delay_cdf.svg").contains(">sliding log<"));
    for png in ["shaping_timeline.png", "delay_cdf.png"] {
        assert_png(&out, png);
    }
    let report = read(&out, "report.md");
    for part in
        ["](shaping_timeline.svg)", "](delay_cdf.svg)", "| queue peak |", "Shaping limiters delay requests"]
    {
        assert!(report.contains(part), "report lacks {part}");
    }
    // Runs without a shaping limiter draw neither.
    let plain = tmp.path().join("plain");
    ratesim()
        .args([
            "run",
            "scenarios/boundary_burst.toml",
            "-q",
            "--format",
            "svg",
            "--out",
            plain.to_str().unwrap(),
        ])
        .assert()
        .success();
    assert!(!plain.join("shaping_timeline.svg").exists() && !plain.join("delay_cdf.svg").exists());
}

/// A window of 1 to 9 ns, cut into as many slots as it has nanoseconds: the
/// windows diagram draws the run's slot counter (it once asked for 10 slots
/// of its own, more than the window, and panicked).
#[test]
fn windows_diagram_of_a_window_of_a_few_nanoseconds() {
    let dir = tempfile::tempdir().unwrap();
    for (window, slots, name) in [("1ns", 1, "1 slot"), ("9ns", 9, "9 slots")] {
        let text = format!(
            "name = \"w\"\n[limit]\nrequests = 1\nwindow = \"{window}\"\n[[traffic]]\nkind = \"burst\"\ncount = 2\n\
             [[limiter]]\nkind = \"fixed_window\"\n[[limiter]]\nkind = \"slot_counter\"\nslots = [{slots}]\n"
        );
        let out = common::run_scenario_text(dir.path(), "w.toml", &text, &["--format", "svg"]);
        let svg = fs::read_to_string(out.join("windows_diagram.svg")).unwrap();
        assert!(svg.contains(&format!("{name}: ")), "{window}: the diagram names its slot row");
        assert!(!svg.contains("10 slots"), "{window}: no limiter the run does not run");
    }
}

/// A window near 2^63 or 2^64 ns: the diagram's cells once ran past
/// u64::MAX, wrapped around and were drawn forever. They now stop there,
/// and the run finishes with its diagram.
#[test]
fn windows_diagram_of_a_window_near_the_end_of_time() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("t.csv"), "time\n0\n0.5\n1\n").unwrap();
    for window in ["2562047h47m16s854775807ns", "5124095h34m33s709551615ns"] {
        let text = format!(
            "name = \"w\"\n[limit]\nrequests = 10\nwindow = \"{window}\"\n[[traffic]]\nkind = \"csv\"\npath = \"t.csv\"\n\
             [[limiter]]\nkind = \"fixed_window\"\n[[limiter]]\nkind = \"slot_counter\"\nslots = [10]\n"
        );
        fs::write(dir.path().join("w.toml"), text).unwrap();
        ratesim()
            .current_dir(dir.path())
            .args(["run", "w.toml", "-q", "--format", "svg", "--out", "o"])
            .timeout(std::time::Duration::from_secs(120))
            .assert()
            .success();
        assert!(dir.path().join("o/windows_diagram.svg").is_file(), "{window}");
    }
}

/// Bins near the end of time: with the default 10^7 s bins the last one
/// ends past u64::MAX ns, and the charts' bin ends once wrapped around (a
/// reversed time axis, the zoom caption "to 3255926290448384ns", one bin
/// drawn across the whole chart). They now stop at u64::MAX.
#[test]
fn bins_near_the_end_of_time_stop_there() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"r1\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n\
                [nodes]\ncount = 2\nmode = \"local\"\nbalance = \"round_robin\"\n\
                [retry]\npolicy = \"fixed\"\nbase = \"300ms\"\nmax_attempts = 3\n\
                [[traffic]]\nkind = \"burst\"\nstart = \"18446744072s\"\ncount = 40\n\
                [[limiter]]\nkind = \"fixed_window\"\n";
    let out = common::run_scenario_text(dir.path(), "r1.toml", text, &["--format", "svg"]);
    let report = read(&out, "report.md");
    assert!(report.contains("zoomed to 307000000m to 18446744073709551615ns"), "{report}");
    // The retry timeline's bars run left to right: no top edge (two
    // points at one height above the baseline) goes back. The wrapped last
    // bar ran from x = 886 back to x = 92.
    let svg = read(&out, "retry_timeline.svg");
    let mut polygons = 0;
    for line in svg.lines().filter(|l| l.starts_with("<polygon")) {
        let points: Vec<(f64, f64)> = line
            .split(r#"points=""#)
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .split_whitespace()
            .filter_map(|p| {
                let (x, y) = p.split_once(',')?;
                Some((x.parse().ok()?, y.parse().ok()?))
            })
            .collect();
        let baseline = points[0].1;
        for w in points.windows(2) {
            if w[0].1 == w[1].1 && w[0].1 != baseline {
                assert!(w[1].0 >= w[0].0, "a bar runs backwards: {:?} to {:?}", w[0], w[1]);
            }
        }
        polygons += 1;
    }
    assert!(polygons >= 4, "{polygons} polygons");
}

/// The sweep's burst-pair diagram draws two bursts of L requests: with L
/// in the billions it is left out (it once asked for 2L arrivals and
/// panicked on the allocation); the sweep itself still runs.
#[test]
fn a_burst_pair_of_billions_has_no_diagram() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"p\"\n[limit]\nrequests = 2000000000000000000\nwindow = \"1s\"\n[[limiter]]\nkind = \"fixed_window\"\n\
                [sweep]\ngrid = 10\nloads = [1e-9]\nload_duration = \"1ns\"\n";
    fs::write(dir.path().join("p.toml"), text).unwrap();
    ratesim()
        .current_dir(dir.path())
        .args(["sweep", "p.toml", "-q", "--format", "svg", "--out", "o"])
        .assert()
        .success();
    assert!(dir.path().join("o/error_vs_slots.svg").is_file());
    assert!(!dir.path().join("o/windows_diagram.svg").exists());
}

/// Requests drawn at one pixel column share one mark, coloured from the
/// bottom by the share admitted: four requests 0.1 ms apart at 0.5 s, three
/// admitted by every lane (L = 3 per 1 s), are three quarters colour and a
/// quarter grey. Drawn one by one in time order, the fourth's grey had
/// covered the three (a reviewer's trace).
#[test]
fn windows_diagram_marks_share_a_pixel_column() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("w.csv"), "time\n0.5\n0.5001\n0.5002\n0.5003\n0.7\n1.2\n1.2001\n").unwrap();
    let text = "name = \"wd\"\nduration = \"2s\"\n[limit]\nrequests = 3\nwindow = \"1s\"\n[[traffic]]\nkind = \"csv\"\n\
         path = \"w.csv\"\n[[limiter]]\nkind = \"fixed_window\"\n[[limiter]]\nkind = \"sliding_log\"\n";
    let out = run_scenario_text(tmp.path(), "wd.toml", text, &["--format", "svg"]);
    let svg = read(&out, "windows_diagram.svg");
    // Marks are 3 px vertical lines: (colour, x, top, bottom) of each.
    let marks: Vec<(String, i64, i64, i64)> = svg
        .lines()
        .filter(|l| l.starts_with("<polyline") && l.contains(r#"stroke-width="3""#))
        .filter_map(|l| {
            let stroke = l.split(r#"stroke=""#).nth(1)?.split('"').next()?.to_string();
            let pts: Vec<(i64, i64)> = l
                .split(r#"points=""#)
                .nth(1)?
                .split('"')
                .next()?
                .split_whitespace()
                .filter_map(|p| {
                    let (x, y) = p.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect();
            let [(x0, y0), (x1, y1)] = pts[..] else { return None };
            (x0 == x1).then_some((stroke, x0, y0.min(y1), y0.max(y1)))
        })
        .collect();
    let first = marks.iter().map(|m| m.1).min().unwrap();
    let at_first: Vec<_> = marks.iter().filter(|m| m.1 == first).collect();
    // Per lane (2), one coloured part under one grey part, 3 : 1.
    assert_eq!(at_first.len(), 4, "{at_first:?}");
    for pair in at_first.chunks(2) {
        let (colour, grey) = (pair[0], pair[1]);
        assert_ne!(colour.0, "#BEBEBE", "{pair:?}");
        assert_eq!(grey.0, "#BEBEBE", "{pair:?}");
        assert_eq!(colour.2, grey.3, "the parts meet: {pair:?}");
        let (c, g) = ((colour.3 - colour.2) as f64, (grey.3 - grey.2) as f64);
        assert!((c / (c + g) - 0.75).abs() < 0.06, "{pair:?}");
    }
}

/// The `stroke` colours of the SVG's polylines (of `width` px, or any) with
/// `points` points or more, and each such polyline's x coordinates.
fn polylines(svg: &str, width: Option<u32>, points: usize) -> Vec<(String, Vec<f64>)> {
    svg.lines()
        .filter(|l| {
            l.starts_with("<polyline") && width.is_none_or(|w| l.contains(&format!(r#"stroke-width="{w}""#)))
        })
        .filter_map(|l| {
            let stroke = l.split(r#"stroke=""#).nth(1)?.split('"').next()?.to_string();
            let xs: Vec<f64> = l
                .split(r#"points=""#)
                .nth(1)?
                .split('"')
                .next()?
                .split_whitespace()
                .filter_map(|p| p.split(',').next()?.parse().ok())
                .collect();
            (xs.len() >= points).then_some((stroke, xs))
        })
        .collect()
}

/// Eleven slot counters, five GCRAs and two leaky buckets: their own
/// colours clash (3, 8 and 13 slots one magenta, GCRA bursts 4 to 7 one
/// light gold, the leaky buckets one teal), the run's charts draw each in
/// its own colour, or, past a dozen or so colours, its own dashes.
#[test]
fn many_limiters_are_drawn_in_as_many_colours() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("many.toml");
    fs::write(
        &scenario,
        r#"
name = "many"
seed = 1
duration = "5s"
[limit]
requests = 100
window = "1s"
[[traffic]]
kind = "poisson"
load = 1.5
[[limiter]]
kind = "slot_counter"
slots = [3, 4, 6, 7, 8, 9, 12, 13, 15, 30, 40]
[[limiter]]
kind = "gcra"
burst = [2, 4, 5, 6, 7]
[[limiter]]
kind = "leaky_bucket"
burst = [5, 50]
"#,
    )
    .unwrap();
    let out = tmp.path().join("out");
    ratesim()
        .args(["run", scenario.to_str().unwrap(), "-q", "--format", "svg", "--out", out.to_str().unwrap()])
        .assert()
        .success();
    // window_count's legend: a 3 px line per limiter (19 with the sliding
    // log), solid or dashed, and the limit's dashes; each row's colour and
    // number of dashes (1 for a solid line) unlike every other row's.
    let svg = read(&out, "window_count.svg");
    let mut rows: std::collections::BTreeMap<String, (String, usize)> = Default::default();
    for line in svg.lines().filter(|l| l.starts_with("<polyline") && l.contains(r#"stroke-width="3""#)) {
        let attr = |name: &str| line.split(&format!(r#"{name}=""#)).nth(1).and_then(|s| s.split('"').next());
        let (Some(stroke), Some(points)) = (attr("stroke"), attr("points")) else { continue };
        let ys: Vec<&str> = points.split_whitespace().filter_map(|p| p.split(',').nth(1)).collect();
        if ys.len() == 2 && ys[0] == ys[1] {
            let row = rows.entry(ys[0].to_string()).or_insert((stroke.to_string(), 0));
            assert_eq!(row.0, stroke, "one colour a row");
            row.1 += 1;
        }
    }
    let mut looks: Vec<&(String, usize)> = rows.values().collect();
    assert_eq!(looks.len(), 19 + 1, "{rows:?}");
    looks.sort();
    looks.dedup();
    assert_eq!(looks.len(), 19 + 1, "{rows:?}");
    assert!(rows.values().any(|(_, dashes)| *dashes > 1 && *dashes < 5), "some limiters dashed: {rows:?}");
}

/// `loads` in any order: every line of the load sweep runs left to right.
#[test]
fn load_sweep_lines_run_in_load_order() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("unsorted.toml");
    fs::write(
        &scenario,
        r#"
name = "unsorted"
[limit]
requests = 10
window = "1s"
[[limiter]]
kind = "slot_counter"
slots = [2, 10]
[sweep]
grid = 20
loads = [3.0, 0.5, 2.0, 1.0]
load_duration = "5s"
map_slots = [2]
"#,
    )
    .unwrap();
    let out = tmp.path().join("out");
    ratesim()
        .args(["run", scenario.to_str().unwrap(), "-q", "--format", "svg", "--out", out.to_str().unwrap()])
        .assert()
        .success();
    let svg = read(&out, "load_sweep.svg");
    // Two panels, a line for each of the three limiters.
    let lines = polylines(&svg, None, 4);
    assert_eq!(lines.len(), 6, "{lines:?}");
    for (colour, xs) in lines {
        assert!(xs.windows(2).all(|w| w[0] <= w[1]), "{colour}: {xs:?}");
    }
}
