//! Shaping end to end: values a hand calculation predicts from
//! `docs/semantics.md` ("Shaping: delay instead of reject"). nginx's
//! documented example in every output file, delayed requests judged in the
//! exact window at their backend time,
//! byte-identical outputs on one thread or two, reacting clients whose time
//! to success includes the wait, shaping on many nodes (local and central;
//! sync is refused), and the memory budget the waiting requests count
//! against.

mod common;

use std::path::Path;

use common::{Collect, parse, ratesim, read, records_of, root, run_scenario_text, snapshot};
use ratesim::engine::{DecisionRecord, RunConfig, RunError};
use ratesim::limiter::{GuavaSpec, Limit, LimiterSpec};
use ratesim::metrics::LimiterReport;
use ratesim::scenario::Scenario;
use ratesim::simulate;
use ratesim::time::Nanos;
use ratesim::trace::Arrival;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

/// Runs a scenario; returns the limiters' reports and every decision.
fn run(text: &str) -> (Vec<LimiterReport>, Vec<DecisionRecord>) {
    let mut sink = Collect::default();
    let report = simulate::run_scenario(&parse(text), Some(&mut sink), &mut |_| {}).unwrap();
    (report.limiters, sink.0)
}

fn row<'a>(rows: &'a [LimiterReport], label: &str) -> &'a LimiterReport {
    rows.iter().find(|r| r.label == label).unwrap_or_else(|| panic!("no row {label}"))
}

/// Each decision of one limiter as (time, admitted, delay), in ns.
fn decisions(records: &[DecisionRecord], limiter: usize) -> Vec<(u64, bool, u64)> {
    records
        .iter()
        .filter(|r| r.limiter == limiter)
        .map(|r| (r.time.get(), r.admitted, r.delay.get()))
        .collect()
}

// ---- nginx's documented example, in every file ----------------------------------

/// nginx's `limit_req` documentation: `rate=1r/s burst=5` without
/// `nodelay`, with a client sending 7 requests at once. nginx's excess for
/// the k-th (k = 0..6) is `1000 k` milli-requests, and `burst * 1000 = 5000`:
/// the first six pass the lookup, the seventh (6000 > 5000) is refused.
/// Without nodelay the k-th waits `(excess - 0) * 1000 / rate = k` seconds:
/// 1 at once, then 1, 2, 3, 4, 5 s. With nodelay all six pass at once.
const NGINX_DOC: &str = r#"
name = "nginx_doc"
duration = "8s"

[limit]
requests = 1
window = "1s"

[output]
bin = "1s"

[[traffic]]
kind = "burst"
start = "0s"
count = 7

[[limiter]]
kind = "leaky_bucket"
burst = 5
nodelay = false

[[limiter]]
kind = "leaky_bucket"
burst = 5
"#;

#[test]
fn nginx_documented_example_in_summary_timeline_and_decisions() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_scenario_text(dir.path(), "nginx_doc.toml", NGINX_DOC, &["--decisions", "--no-charts"]);
    let (delayed, nodelay, log) = ("leaky_bucket(burst=5;delay=0)", "leaky_bucket(burst=5)", "sliding_log");

    // summary.csv: 6 of 7 admitted by both nginx forms; without nodelay 5
    // of them waited, 1..5 s, at most 5 at once. Each reaches the backend
    // one second after the one before, so every exact second (t - 1 s, t]
    // holds one: peak 1 = L, no excess; with nodelay the six are in one
    // second: peak 6, 5 excess. The sliding log admits 1.
    let summary = out.join("summary.csv");
    let s = &records_of(&summary, delayed)[0];
    let fields = |r: &std::collections::BTreeMap<String, String>, keys: &[&str]| -> Vec<String> {
        keys.iter().map(|k| r[*k].clone()).collect()
    };
    assert_eq!(
        fields(s, &["offered", "admitted", "rejected", "peak", "peak_ratio", "excess", "false_rejects"]),
        ["7", "6", "1", "1", "1", "0", "0"]
    );
    // Over the log's 1: +500 %; 5 of 7 decisions differ from the log's.
    assert_eq!(fields(s, &["over_admission", "disagreement"]), ["5", "0.714286"]);
    assert_eq!(
        fields(s, &["delayed", "delay_p95", "delay_p99", "delay_max", "queue_peak"]),
        ["5", "5", "5", "5", "5"]
    );
    // The median of {0, 1, 2, 3, 4, 5} s over the six admitted is the
    // third, 2 s, read from the histogram (3 significant digits).
    let p50: f64 = s["delay_p50"].parse().unwrap();
    assert!((2.0..=2.002).contains(&p50), "{p50}");
    let n = &records_of(&summary, nodelay)[0];
    assert_eq!(fields(n, &["offered", "admitted", "rejected", "peak", "excess"]), ["7", "6", "1", "6", "5"]);
    // A limiter that never delays leaves the delay columns empty.
    assert_eq!(fields(n, &["delayed", "delay_p50", "queue_peak"]), ["", "", ""]);
    let l = &records_of(&summary, log)[0];
    assert_eq!(fields(l, &["admitted", "rejected", "peak"]), ["1", "6", "1"]);

    // timeline.csv, 1 s bins: all 7 arrive in bin 0, where one reaches the
    // backend; each of bins 1 to 5 gets one released request (its exact
    // window holds only it: the one before left exactly W earlier).
    let timeline = records_of(&out.join("timeline.csv"), delayed);
    let cols = ["bin_start", "offered", "admitted", "rejected", "window_peak", "delayed", "backend"];
    let got: Vec<Vec<String>> = timeline.iter().map(|r| fields(r, &cols)).collect();
    let mut expect = vec![vec!["0", "7", "6", "1", "1", "5", "1"]];
    for k in ["1", "2", "3", "4", "5"] {
        expect.push(vec![k, "0", "0", "0", "1", "0", "1"]);
    }
    expect.push(vec!["6", "0", "0", "0", "0", "0", "0"]);
    expect.push(vec!["7", "0", "0", "0", "0", "0", "0"]);
    assert_eq!(got, expect);
    let first = fields(&records_of(&out.join("timeline.csv"), nodelay)[0], &cols);
    assert_eq!(first, ["0", "7", "6", "1", "6", "0", "6"]);

    // decisions.csv: request k waits k seconds; the one admitted at once is
    // in every later request's exact window at 0 (window_count 1), the
    // delayed ones are not yet (they count when they reach the backend).
    let rows = records_of(&out.join("decisions.csv"), delayed);
    let got: Vec<Vec<String>> =
        rows.iter().map(|r| fields(r, &["seq", "time", "admitted", "window_count", "delay"])).collect();
    let expect: Vec<Vec<String>> = [
        ["0", "0", "1", "0", "0"],
        ["1", "0", "1", "1", "1"],
        ["2", "0", "1", "1", "2"],
        ["3", "0", "1", "1", "3"],
        ["4", "0", "1", "1", "4"],
        ["5", "0", "1", "1", "5"],
        ["6", "0", "0", "1", "0"],
    ]
    .iter()
    .map(|r| r.iter().map(|s| s.to_string()).collect())
    .collect();
    assert_eq!(got, expect);
    let nd: Vec<String> =
        records_of(&out.join("decisions.csv"), nodelay).iter().map(|r| r["delay"].clone()).collect();
    assert_eq!(nd, ["0"; 7]);

    // summary.md and report.md carry the same figures in their delays table.
    for file in ["summary.md", "report.md"] {
        let md = read(&out, file);
        assert!(
            md.contains("| leaky_bucket(burst=5;delay=0) |        6 |       5 |    2.00 s | 5.00 s | 5.00 s | 5.00 s |          5 |"),
            "{file}:\n{md}"
        );
    }
}

// ---- the exact window judges backend times --------------------------------------

/// GCRA, L = 2 per 1 s (T = 0.5 s), burst 2 (tau = 0.5 s), max_wait 2 s;
/// 7 requests at 0. The first two conform at once (tat 0.5, then 1.0); the
/// next four are admitted to wait until they conform, at tat - tau: 0.5,
/// 1.0, 1.5, 2.0 s; the seventh would conform at 2.5 s, more than 2 s away:
/// refused. Backend times 0, 0, 0.5, 1, 1.5, 2: the exact window (t - 1 s, t]
/// holds 3 at t = 0.5 s (the two at 0 and the first release, which found
/// 2 = L already there: 1 excess) and 2 after. Judged at decision time it
/// would hold 6; the policing GCRA (no max_wait) admits 2.
#[test]
fn delayed_requests_count_in_the_exact_window_at_backend_time() {
    let text = r#"
name = "gcra_backend"
duration = "4s"
[limit]
requests = 2
window = "1s"
[output]
bin = "500ms"
[[traffic]]
kind = "burst"
start = "0s"
count = 7
[[limiter]]
kind = "gcra"
max_wait = "2s"
[[limiter]]
kind = "gcra"
"#;
    let s = parse(text);
    let mut sink = Collect::default();
    let report = simulate::run_scenario(&s, Some(&mut sink), &mut |_| {}).unwrap();
    let rows = &report.limiters;
    let shaping = row(rows, "gcra(max_wait=2s)");
    let delays: Vec<(u64, bool, u64)> = decisions(&sink.0, 0);
    assert_eq!(
        delays,
        [
            (0, true, 0),
            (0, true, 0),
            (0, true, 500 * MS),
            (0, true, S),
            (0, true, 1500 * MS),
            (0, true, 2 * S),
            (0, false, 0)
        ]
    );
    let c = &shaping.counts;
    assert_eq!((c.admitted, c.rejected, c.peak, c.excess, c.false_rejects), (6, 1, 3, 1, 0));
    let d = shaping.delays.as_ref().unwrap();
    assert_eq!((d.delayed, d.max, d.queue_peak(), d.pending), (4, Nanos::new(2 * S), 4, 0));
    let policing = row(rows, "gcra");
    assert_eq!((policing.counts.admitted, policing.counts.peak, policing.counts.excess), (2, 2, 0));
    assert!(policing.delays.is_none());
    // Per 500 ms bin: 2 reach the backend at 0, then one per bin; the
    // window peaks at 3 in the bin of the first release, and carries the
    // last release (2 s) into the bin at 2.5 s.
    let bins: Vec<(u64, u64, u64)> =
        report.timeline.bins().iter().map(|b| (b[0].backend(), b[0].delayed, b[0].window_peak)).collect();
    assert_eq!(
        bins,
        [(2, 4, 2), (1, 0, 3), (1, 0, 2), (1, 0, 2), (1, 0, 2), (0, 0, 1), (0, 0, 0), (0, 0, 0)]
    );
}

// ---- nginx's timer on its millisecond clock ------------------------------------------

/// nginx holds a delayed request on a timer whose key is
/// `ngx_current_msec + delay`: on ratesim's millisecond clock it goes on at
/// `(floor(t / 1 ms) + delay) ms`. `rate=1r/s burst=1` without nodelay,
/// requests at 0.5 ms and 0.7 ms: the second (excess 1000) waits 1000 ms
/// from millisecond 0, so it reaches the backend at exactly 1 s (a wait of
/// 999.3 ms), and the window `(0, 1 s]` holds both: peak 2, excess 1.
#[test]
fn nginx_releases_a_delayed_request_on_its_millisecond_clock() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "time\n0.0005\n0.0007\n").unwrap();
    let text = "name = \"nginx_timer\"\n[limit]\nrequests = 1\nwindow = \"1s\"\n\
                [[traffic]]\nkind = \"csv\"\npath = \"t.csv\"\n\
                [[limiter]]\nkind = \"leaky_bucket\"\nburst = 1\nnodelay = false\n";
    let s = Scenario::parse(text, &dir.path().join("n.toml")).unwrap_or_else(|e| panic!("{e}"));
    let mut sink = Collect::default();
    let report = simulate::run_scenario(&s, Some(&mut sink), &mut |_| {}).unwrap();
    assert_eq!(decisions(&sink.0, 0), [(500_000, true, 0), (700_000, true, S - 700_000)]);
    let c = &row(&report.limiters, "leaky_bucket(burst=1;delay=0)").counts;
    assert_eq!((c.admitted, c.peak, c.excess), (2, 2, 1));
}

// ---- a release and a decision at the same instant ---------------------------------

/// L = 1 per 1 s, requests at 0, 0, 1 s and 1 s. The GCRA with
/// `max_wait = 1s` and the leaky queue of 1 admit the first at once and
/// delay the second by 1 s: it reaches the backend at exactly 1 s, decided
/// at 0, before anything decided at 1 s, so it is in the window `(0, 1 s]`
/// of the requests at 1 s. The third is delayed to 2 s; the fourth, refused,
/// found the window full (1 = L): no false reject. A retry decided at 1 s
/// finds the release too: with `[retry] fixed 1s` the third request at 0
/// (refused, its wait 2 s past `max_wait`) comes back at 1 s and counts 1.
#[test]
fn a_release_counts_in_the_window_of_a_request_decided_at_its_instant() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "time\n0\n0\n1\n1\n").unwrap();
    let text = "name = \"tie\"\n[limit]\nrequests = 1\nwindow = \"1s\"\n\
                [[traffic]]\nkind = \"csv\"\npath = \"t.csv\"\n\
                [[limiter]]\nkind = \"gcra\"\nmax_wait = \"1s\"\n\
                [[limiter]]\nkind = \"leaky_queue\"\nqueue = 1\n";
    let s = Scenario::parse(text, &dir.path().join("n.toml")).unwrap_or_else(|e| panic!("{e}"));
    let mut sink = Collect::default();
    let report = simulate::run_scenario(&s, Some(&mut sink), &mut |_| {}).unwrap();
    for (i, label) in ["gcra(max_wait=1s)", "leaky_queue(queue=1)"].into_iter().enumerate() {
        assert_eq!(
            decisions(&sink.0, i),
            [(0, true, 0), (0, true, S), (S, true, S), (S, false, 0)],
            "{label}"
        );
        let counts: Vec<u64> = sink.0.iter().filter(|r| r.limiter == i).map(|r| r.window_count).collect();
        assert_eq!(counts, [0, 1, 1, 1], "{label}");
        let c = &row(&report.limiters, label).counts;
        assert_eq!((c.admitted, c.peak, c.excess, c.false_rejects), (3, 1, 0, 0), "{label}");
    }

    let text = r#"
name = "tie_retry"
[limit]
requests = 1
window = "1s"
[retry]
policy = "fixed"
base = "1s"
max_attempts = 2
[[traffic]]
kind = "burst"
start = "0s"
count = 3
[[limiter]]
kind = "gcra"
max_wait = "1s"
"#;
    let (rows, records) = run(text);
    let attempts: Vec<(u64, bool, u64, u64)> = records
        .iter()
        .filter(|r| r.limiter == 0)
        .map(|r| (r.time.get(), r.admitted, r.delay.get(), r.window_count))
        .collect();
    assert_eq!(attempts, [(0, true, 0, 0), (0, true, S, 1), (0, false, 0, 1), (S, true, S, 1)]);
    let c = &row(&rows, "gcra(max_wait=1s)").counts;
    assert_eq!((c.admitted, c.peak, c.excess, c.false_rejects), (3, 1, 0, 0));
}

// ---- Guava with client keys --------------------------------------------------------

/// Each client key's Guava limiter is `RateLimiter.create(1)` made at the
/// key's first request. L = 1 per 1 s; key `a` at 0 s, key `b` three times
/// at 10 s. `b`'s limiter, created at 10 s, starts empty: its requests wait
/// 0, 1 s and 2 s (a limiter created at 0 would have stored one permit by
/// 10 s: 0, 0 and 1 s). On two local nodes (round robin: `a` on node 0,
/// `b` on 1, 0, 1) each node creates its copy of `b` at its own first
/// request of `b`: node 1's second request of `b` waits 1 s, node 0's one
/// does not wait.
#[test]
fn guava_creates_a_key_limiter_at_the_key_first_request() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "time,key\n0,a\n10,b\n10,b\n10,b\n").unwrap();
    let text = "name = \"guava_keys\"\n[limit]\nrequests = 1\nwindow = \"1s\"\n\
                [[traffic]]\nkind = \"csv\"\npath = \"t.csv\"\nkey_column = \"key\"\n\
                [[limiter]]\nkind = \"guava\"\n";
    let run_in = |text: &str| {
        let s = Scenario::parse(text, &dir.path().join("g.toml")).unwrap_or_else(|e| panic!("{e}"));
        let mut sink = Collect::default();
        simulate::run_scenario(&s, Some(&mut sink), &mut |_| {}).unwrap();
        decisions(&sink.0, 0)
    };
    assert_eq!(run_in(text), [(0, true, 0), (10 * S, true, 0), (10 * S, true, S), (10 * S, true, 2 * S)]);
    let nodes = format!("{text}[nodes]\ncount = 2\nper_node = 1\n");
    assert_eq!(run_in(&nodes), [(0, true, 0), (10 * S, true, 0), (10 * S, true, 0), (10 * S, true, S)]);
    // Without client keys the one limiter is created at time 0.
    std::fs::write(dir.path().join("t.csv"), "time\n0\n10\n10\n10\n").unwrap();
    let unkeyed = text.replace("key_column = \"key\"\n", "");
    assert_eq!(run_in(&unkeyed), [(0, true, 0), (10 * S, true, 0), (10 * S, true, 0), (10 * S, true, S)]);
}

// ---- determinism -----------------------------------------------------------------

/// The shipped shaping scenario, every file (decisions and charts included),
/// byte for byte the same on one thread and on two.
#[test]
fn shaping_outputs_are_the_same_on_one_thread_or_two() {
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(threads);
        ratesim()
            .env("RAYON_NUM_THREADS", threads)
            .args(["run", "scenarios/shaping.toml", "-q", "--decisions", "--format", "svg"])
            .args(["--out", out.to_str().unwrap()])
            .assert()
            .success();
        outputs.push(snapshot(&out));
    }
    assert!(outputs[0].contains_key(Path::new("delay_cdf.svg")));
    assert!(outputs[0] == outputs[1]);
}

/// Many client keys, more arrivals than one chunk (262 144), every shaping
/// limiter: delayed requests pending at a chunk's end are released in the
/// next, whichever thread runs the lane; the outputs do not depend on it.
#[test]
fn keyed_shaping_across_chunks_is_the_same_on_one_thread_or_two() {
    let text = r#"
name = "keyed_shaping"
seed = 3
duration = "30s"
[limit]
requests = 50
window = "1s"
[[traffic]]
kind = "poisson"
rate = 9000.0
clients = 100
[[limiter]]
kind = "leaky_bucket"
burst = 10
delay = 3
[[limiter]]
kind = "gcra"
max_wait = "200ms"
[[limiter]]
kind = "token_bucket"
max_wait = "200ms"
[[limiter]]
kind = "guava"
timeout = "300ms"
[[limiter]]
kind = "leaky_queue"
queue = 8
"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.toml"), text).unwrap();
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(threads);
        ratesim()
            .env("RAYON_NUM_THREADS", threads)
            .args(["run", dir.path().join("k.toml").to_str().unwrap(), "-q", "--no-charts"])
            .args(["--out", out.to_str().unwrap()])
            .assert()
            .success();
        outputs.push(snapshot(&out));
    }
    let summary = String::from_utf8(outputs[0][Path::new("summary.csv")].clone()).unwrap();
    let offered: u64 = summary.lines().nth(1).unwrap().split(',').nth(3).unwrap().parse().unwrap();
    assert!(offered > ratesim::engine::CHUNK as u64, "{offered}");
    assert!(outputs[0] == outputs[1]);
}

// ---- reacting clients -------------------------------------------------------------

/// L = 1 per 1 s; 3 requests at 0; clients follow Retry-After (3 attempts).
/// nginx `burst=1` without nodelay: request 0 passes (excess 0), request 1
/// waits 1 s (excess 1000), request 2 is refused (2000 > 1000) and told to
/// come back when 1000 has leaked: at 1 s. Then 1000 has leaked, its
/// excess is 1000 again: admitted, to wait 1 s more. Times to success,
/// backend time less first attempt: 0, 1 s and 2 s, from 4 attempts. The
/// sliding log gets the same times (admitted at 0, 1 s and 2 s), but from
/// 6 attempts: requests 1 and 2 are refused at 0, and 2 again at 1 s.
#[test]
fn time_to_success_includes_the_wait() {
    let text = r#"
name = "clients_wait"
[limit]
requests = 1
window = "1s"
[retry]
policy = "retry_after"
max_attempts = 3
[[traffic]]
kind = "burst"
start = "0s"
count = 3
[[limiter]]
kind = "leaky_bucket"
burst = 1
nodelay = false
"#;
    let (rows, records) = run(text);
    let nginx = row(&rows, "leaky_bucket(burst=1;delay=0)");
    let k = nginx.clients.as_ref().expect("clients react");
    assert_eq!((k.logical, nginx.counts.offered, k.succeeded, k.gave_up), (3, 4, 3, 0));
    assert_eq!(k.amplification(), Some(4.0 / 3.0));
    let (at_once, points) = k.tts_cdf().unwrap();
    assert_eq!(at_once, 1.0 / 3.0);
    assert_eq!(points.len(), 2);
    assert!(
        points[0].0.get() >= S && points[0].0.get() <= S + S / 1000 && points[0].1 == 2.0 / 3.0,
        "{points:?}"
    );
    assert_eq!(points[1], (Nanos::new(2 * S), 1.0));
    // Each attempt as decisions.csv has it: the retry at 1 s, admitted to
    // wait 1 s.
    let attempts: Vec<(u64, bool, u64, u32)> = records
        .iter()
        .filter(|r| r.limiter == 0)
        .map(|r| (r.time.get(), r.admitted, r.delay.get(), r.attempt.unwrap().0))
        .collect();
    assert_eq!(attempts, [(0, true, 0, 1), (0, true, S, 1), (0, false, 0, 1), (S, true, S, 2)]);
    // The backend sees one request a second: peak 1, no excess.
    assert_eq!((nginx.counts.peak, nginx.counts.excess), (1, 0));
    let log = row(&rows, "sliding_log");
    let kl = log.clients.as_ref().unwrap();
    assert_eq!((log.counts.offered, kl.succeeded), (6, 3));
    assert_eq!(kl.tts_quantile(1.0), Some(Nanos::new(2 * S)));
}

// ---- many nodes ---------------------------------------------------------------------

const NODES_TRAFFIC: &str = r#"
name = "nodes_shaping"
[limit]
requests = 2
window = "1s"
[[traffic]]
kind = "burst"
start = "0s"
count = 6
[[limiter]]
kind = "leaky_bucket"
burst = 2
nodelay = false
"#;

/// Local mode, 2 nodes round robin, each enforcing ceil(2 / 2) = 1 per 1 s:
/// nginx `rate=1r/s burst=2` on each. Six requests at 0: node 0 gets
/// requests 0, 2, 4 and node 1 gets 1, 3, 5; on each node the first passes,
/// the second waits 1 s and the third 2 s. All six are admitted (each node
/// has its own burst), but the backend sees 2 a second: peak 2 = L, no
/// excess; 4 waited at once. The same limiter alone (rate 2 r/s, burst 2)
/// admits 3: at 0, 0.5 s and 1 s.
#[test]
fn local_nodes_each_shape_their_share() {
    let text = format!("{NODES_TRAFFIC}[nodes]\ncount = 2\n");
    let (rows, records) = run(&text);
    let l = row(&rows, "leaky_bucket(burst=2;delay=0)");
    assert_eq!(
        decisions(&records, 0),
        [(0, true, 0), (0, true, 0), (0, true, S), (0, true, S), (0, true, 2 * S), (0, true, 2 * S)]
    );
    assert_eq!((l.counts.admitted, l.counts.peak, l.counts.excess), (6, 2, 0));
    let d = l.delays.as_ref().unwrap();
    assert_eq!((d.delayed, d.queue_peak(), d.max), (4, 4, Nanos::new(2 * S)));
    let per_node: Vec<u64> = l.nodes.iter().map(|n| n.admitted).collect();
    assert_eq!(per_node, [3, 3]);

    let (alone, records) = run(NODES_TRAFFIC);
    assert_eq!(
        decisions(&records, 0),
        [(0, true, 0), (0, true, 500 * MS), (0, true, S), (0, false, 0), (0, false, 0), (0, false, 0)]
    );
    assert_eq!(row(&alone, "leaky_bucket(burst=2;delay=0)").counts.peak, 2);
}

/// The run covers `[0, D)`: a delayed request reaching the backend at or
/// after `D` was admitted (it counts in `admitted`, `delayed` and the delay
/// quantiles) but reaches the backend after the run, where no window metric
/// or timeline bin sees it. L = 2 per 1 s, two local nodes of 2 each, a
/// GCRA waiting up to 5 s, 8 requests at 0: each node admits 2 at once and
/// delays 2 to 0.5 s and 1 s. Their union reaches the backend 4 at 0, 2 at
/// 0.5 s, 2 at 1 s. Excess: 2 at 0 (the third and fourth), 2 at 0.5 s
/// (4 already in (-0.5 s, 0.5 s]), 2 at 1 s (2 already in (0, 1 s]): 6
/// over 5 s. Over 750 ms the two at 1 s fall after the run: excess 4,
/// 6 reach the backend. Without a duration the run ends 1 ns after the
/// last release.
#[test]
fn a_release_at_or_after_the_end_is_admitted_but_judged_by_no_window() {
    let totals = |duration: &str| {
        let text = format!(
            "name = \"end\"\n{duration}\n[limit]\nrequests = 2\nwindow = \"1s\"\n[output]\nbin = \"250ms\"\n\
             [[traffic]]\nkind = \"burst\"\nstart = \"0s\"\ncount = 8\n[[limiter]]\nkind = \"gcra\"\nmax_wait = \"5s\"\n\
             [nodes]\ncount = 2\nper_node = 2\n"
        );
        let report = simulate::run_scenario(&parse(&text), None, &mut |_| {}).unwrap();
        let g = row(&report.limiters, "gcra(max_wait=5s)");
        let d = g.delays.as_ref().unwrap();
        let backend: u64 = report.timeline.bins().iter().map(|b| b[0].backend()).sum();
        (g.counts.admitted, d.delayed, d.max, g.counts.excess, backend)
    };
    assert_eq!(totals("duration = \"5s\""), (8, 4, Nanos::new(S), 6, 8));
    assert_eq!(totals("duration = \"750ms\""), (8, 4, Nanos::new(S), 4, 6));
    // Without a duration the run lasts until the last release.
    assert_eq!(totals(""), (8, 4, Nanos::new(S), 6, 8));
}

/// Central mode: one store 2 ms away decides every request at arrival +
/// 1 ms, as the limiter alone would (the round trip shifts every request
/// alike): at 0, 0.5 s and 1 s, three refused. The wait is counted from
/// the arrival, as every admitted request is judged at its arrival in this
/// mode.
#[test]
fn a_central_store_shapes_like_one_limiter() {
    let text = format!("{NODES_TRAFFIC}[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"2ms\"\n");
    let (rows, records) = run(&text);
    assert_eq!(
        decisions(&records, 0),
        [(0, true, 0), (0, true, 500 * MS), (0, true, S), (0, false, 0), (0, false, 0), (0, false, 0)]
    );
    let l = row(&rows, "leaky_bucket(burst=2;delay=0)");
    assert_eq!((l.counts.admitted, l.counts.peak, l.delays.as_ref().unwrap().queue_peak()), (3, 2, 2));
}

/// Sync mode adds up counts, which no shaping limiter keeps: every one is
/// refused there, saying why.
#[test]
fn sync_mode_refuses_every_shaping_limiter() {
    for limiter in [
        "kind = \"leaky_bucket\"\nnodelay = false",
        "kind = \"gcra\"\nmax_wait = \"1s\"",
        "kind = \"token_bucket\"\nmax_wait = \"1s\"",
        "kind = \"guava\"",
        "kind = \"leaky_queue\"\nqueue = 3",
    ] {
        let text = format!(
            "name = \"s\"\n[limit]\nrequests = 2\nwindow = \"1s\"\n[[traffic]]\nkind = \"burst\"\ncount = 3\n\
[[limiter]]\n{limiter}\n[nodes]\ncount = 2\nmode = \"sync\"\nsync_interval = \"100ms\"\n"
        );
        let e = Scenario::parse(&text, Path::new("s.toml")).unwrap_err().to_string();
        assert!(
            e.contains("keeps no counts to add (it delays requests")
                && e.contains("use mode = \"local\" or \"central\""),
            "{e}"
        );
    }
}

// ---- memory -------------------------------------------------------------------------

/// Guava's acquire() at 3 x L never refuses: the waiting requests pass a
/// 1 MiB budget, and the run stops with an error naming the limiter and its
/// cure. The budget is checked every 13 107 arrivals here (a chunk adds at
/// most a quarter of it), so the queue holds at most twice the budget: it
/// once was checked every 262 144 arrivals and stopped at 174 000 waiting,
/// 4.7 times the budget. The queue holds its events in a buffer that
/// doubles (the radix queue's slots and links).
#[test]
fn waiting_requests_count_against_the_memory_budget() {
    let limit = Limit { requests: 100, window: Nanos::from_secs(1) };
    // Three arrivals every 10 ms: 300 a second against 100.
    let arrivals: Vec<Arrival> =
        (0..300_000u64).map(|i| Arrival::keyed(Nanos::new(i / 3 * 10 * MS), 0)).collect();
    let spec = LimiterSpec::from(GuavaSpec {
        permits_per_second: Some(100.0),
        max_burst_seconds: 1.0,
        timeout: None,
    });
    let config = RunConfig { memory_budget: 1 << 20, ..RunConfig::new(limit, vec![spec]) };
    let e = ratesim::engine::run(&config, arrivals.into_iter().map(Ok), None, &mut |_| {}).unwrap_err();
    let RunError::DelayQueue { limiter, pending, peak, queue, budget, .. } = &e else { panic!("{e}") };
    assert_eq!((limiter.as_str(), *budget), ("guava", 1 << 20));
    // Of the first four chunks' 52 428 arrivals (up to 174.76 s), those not
    // yet at the backend: Guava releases one per 10 ms, so about 2/3 wait;
    // none had reached the backend in between, so the most that waited is
    // as many.
    assert!((34_900..35_000).contains(pending), "{pending}");
    assert_eq!(pending, peak);
    // Each waiting request holds a 16-byte slot (time, payload) and a 4-byte
    // link; both buffers double, so they hold at most twice what waited.
    let per_event = 16 + 4;
    assert!((peak * per_event..=2 * peak * per_event).contains(queue), "{queue} for {peak}");
    assert!(*queue <= 2 << 20, "{queue}: more than twice the budget");
    assert!(e.to_string().contains("Give it a `timeout`"), "{e}");
}

/// The committed scenario's own figures, which its comment quotes.
#[test]
fn the_shipped_scenario_says_what_its_outputs_show() {
    let text = std::fs::read_to_string(root().join("scenarios/shaping.toml")).unwrap();
    let summary = read(&root().join("output/shaping"), "summary.md");
    for (quote, row) in [
        ("257\n#   admitted, 63 refused", "| leaky_bucket(burst=20;delay=0)  |      257 |       63 |   11 |"),
        ("peak 27", "| leaky_bucket(burst=20)          |      257 |       63 |   27 |"),
        (
            "peak 10, no excess",
            "| leaky_queue(queue=20)           |      257 |       63 |   10 |   1.00 |      0 |",
        ),
        (
            "all 320 admitted, 184 waited",
            "| guava                           |      320 |     184 |    468 ms |",
        ),
    ] {
        assert!(text.contains(quote), "the comment lacks {quote:?}");
        assert!(summary.contains(row), "summary.md lacks {row:?}");
    }
}

/// A request waits during `[t, t + d)`: one that reaches the backend at the
/// instant another is delayed no longer waits then. L = 1 per 1 s,
/// requests at 0, 0, 1 s, 2 s and 3 s: the second waits until 1 s, and
/// leaves as the third arrives and takes its place; then each leaves as
/// the next arrives. One waits at a time: queue_peak 1, for the leaky
/// queue with one place and for nginx with burst = 1.
#[test]
fn a_release_at_the_instant_of_a_delay_frees_its_place() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "time\n0\n0\n1\n2\n3\n").unwrap();
    let text = "name = \"handover\"\n[limit]\nrequests = 1\nwindow = \"1s\"\n\
                [[traffic]]\nkind = \"csv\"\npath = \"t.csv\"\n\
                [[limiter]]\nkind = \"leaky_queue\"\nqueue = 1\n\
                [[limiter]]\nkind = \"leaky_bucket\"\nburst = 1\nnodelay = false\n";
    let out = run_scenario_text(dir.path(), "handover.toml", text, &["--no-charts"]);
    for limiter in ["leaky_queue(queue=1)", "leaky_bucket(burst=1;delay=0)"] {
        let r = &records_of(&out.join("summary.csv"), limiter)[0];
        assert_eq!(
            (r["admitted"].as_str(), r["delayed"].as_str(), r["queue_peak"].as_str()),
            ("5", "4", "1"),
            "{r:?}"
        );
    }
}

/// A backend time past the end of time (`u64::MAX` ns) is never reached.
/// A leaky queue at 1 per 1 s takes a burst of 5 at `t0 = u64::MAX - 3.5 s`
/// and lets them go at `t0`, `t0 + 1 s`, ..., `t0 + 4 s`: the last is
/// `0.5 s` past the end of time. It is admitted and delayed its true 4 s,
/// but the backend sees 4 requests a second apart (peak 1, no excess); a
/// client waiting for it never gets its answer. Clamping it to `u64::MAX`
/// had put it 0.5 s after the fourth: peak 2, excess 1.
#[test]
fn a_release_past_the_end_of_time_never_reaches_the_backend() {
    let text = |retry: &str| {
        format!(
            "name = \"end_of_time\"\n{retry}\n[limit]\nrequests = 1\nwindow = \"1s\"\n[[traffic]]\nkind = \"burst\"\n\
             start = \"18446744070.209551615s\"\ncount = 5\n[[limiter]]\nkind = \"leaky_queue\"\nqueue = 20\n"
        )
    };
    let report = simulate::run_scenario(&parse(&text("")), None, &mut |_| {}).unwrap();
    let q = row(&report.limiters, "leaky_queue(queue=20)");
    let d = q.delays.as_ref().unwrap();
    assert_eq!((q.counts.admitted, d.delayed, d.max), (5, 4, Nanos::new(4 * S)));
    assert_eq!((q.counts.peak, q.counts.excess), (1, 0));
    let backend: u64 = report.timeline.bins().iter().map(|b| b[0].backend()).sum();
    assert_eq!(backend, 4);
    let (rows, _) = run(&text("[retry]\npolicy = \"retry_after\"\nmax_attempts = 2\n"));
    let k = row(&rows, "leaky_queue(queue=20)").clients.clone().expect("clients react");
    assert_eq!((k.logical, k.succeeded, k.gave_up, k.unfinished), (5, 4, 0, 1));
    assert_eq!(k.tts_quantile(1.0), Some(Nanos::new(3 * S)));
}

/// A delayed arrival's window count enters its bin's `window_peak`, as a
/// rejected or admitted one's does. Keys a, b, a at 0, 0.2 s, 0.5 s; GCRA
/// at 1 per 1 s with `max_wait = 1s`: key a's second request finds its
/// window holding 1 (the request at 0) and waits 0.5 s. Its bin
/// (0.5-0.6 s) holds no other arrival and no release, so only that count
/// can make its peak 1 (with one key the bin's carried-in count hides it).
#[test]
fn a_delayed_arrival_counts_in_its_bin_window_peak() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.csv"), "time,key\n0,a\n0.2,b\n0.5,a\n").unwrap();
    let text = "name = \"keyed\"\nduration = \"2s\"\n[limit]\nrequests = 1\nwindow = \"1s\"\n[output]\nbin = \"100ms\"\n\
                [[traffic]]\nkind = \"csv\"\npath = \"k.csv\"\nkey_column = \"key\"\n\
                [[limiter]]\nkind = \"gcra\"\nmax_wait = \"1s\"\n";
    let s = Scenario::parse(text, &dir.path().join("k.toml")).unwrap_or_else(|e| panic!("{e}"));
    let mut sink = Collect::default();
    let report = simulate::run_scenario(&s, Some(&mut sink), &mut |_| {}).unwrap();
    assert_eq!(decisions(&sink.0, 0), [(0, true, 0), (200 * MS, true, 0), (500 * MS, true, 500 * MS)]);
    let peaks: Vec<u64> = report.timeline.bins().iter().map(|b| b[0].window_peak).collect();
    // Arrivals at 0 and 0.2 s (each finds 0 and brings 1), the delayed one
    // at 0.5 s (finds 1), key a's release at 1 s (finds 0: the request at
    // 0 has left; brings 1).
    assert_eq!(peaks[..11], [1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1]);
}
