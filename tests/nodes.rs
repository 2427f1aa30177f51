//! Many nodes sharing one limit (`docs/semantics.md`, "Many nodes sharing
//! one limit"): values worked out by hand for each mode, balancer and
//! failure, properties over random traces, and what a run on nodes writes.

mod common;

use std::fs;

use proptest::prelude::*;

use common::{Collect, ratesim, read, read_csv, scenario, snapshot};
use ratesim::engine::{self, RunConfig};
use ratesim::limiter::{
    Algorithm, FixedWindowSpec, GcraSpec, LeakyBucketSpec, Limit, Limiter, LimiterSpec, Rounding,
    SlidingLogSpec, SlotCounterSpec, StateSize, TokenBucketSpec, WeightedWindowSpec, WindowAlign,
};
use ratesim::metrics::LimiterReport;
use ratesim::nodes::{Balance, Balancer, Fleet, Mode, Outage, Topology};
use ratesim::time::Nanos;
use ratesim::trace::{Arrival, ArrivalResult};

const MS: u64 = 1_000_000;

fn fixed() -> LimiterSpec {
    FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::ZERO } }.into()
}

fn topology(count: u16, mode: Mode, per_node: u64) -> Topology {
    Topology {
        count,
        balance: Balance::RoundRobin,
        mode,
        per_node,
        skew: vec![0; usize::from(count)],
        outages: Vec::new(),
    }
}

/// Runs unkeyed arrivals at `times` through `limiters` (the sliding log
/// reference added last) on `topology`; returns the reports and, per
/// limiter, its decisions in arrival order.
fn run(
    limit: Limit,
    limiters: Vec<LimiterSpec>,
    topology: Option<Topology>,
    times: &[u64],
) -> (Vec<LimiterReport>, Vec<Vec<bool>>) {
    let arrivals: Vec<ArrivalResult> = times.iter().map(|&t| Ok(Arrival::at(Nanos::new(t)))).collect();
    let config = RunConfig { topology, ..RunConfig::new(limit, limiters) };
    let mut sink = Collect(Vec::new());
    let report = engine::run(&config, arrivals.into_iter(), Some(&mut sink), &mut |_| {}).unwrap();
    let mut bits = vec![Vec::new(); report.limiters.len()];
    for r in &sink.0 {
        bits[r.limiter].push(r.admitted);
    }
    (report.limiters, bits)
}

// ---- local mode ---------------------------------------------------------------

/// 3 nodes of 100 per minute (L = 100 per 1 min), 300 requests in one
/// minute, round robin: each node gets 100 and admits all of them; all 300
/// lie in one exact window (the last at 59.8 s, the first at 0): peak 300,
/// 3.0 L. The exact rule admits 100.
#[test]
fn three_uncoordinated_nodes_admit_three_times_the_limit() {
    let limit = Limit { requests: 100, window: Nanos::from_secs(60) };
    let times: Vec<u64> = (0..300).map(|i| i * 200 * MS).collect();
    let (reports, _) = run(limit, vec![fixed()], Some(topology(3, Mode::Local, 100)), &times);
    let (fw, log) = (&reports[0], &reports[1]);
    assert_eq!((fw.counts.admitted, fw.counts.peak), (300, 300));
    assert_eq!(fw.peak_ratio(), 3.0);
    assert_eq!(fw.over_admission(), Some(2.0));
    for n in &fw.nodes {
        assert_eq!((n.admitted, n.rejected, n.peak), (100, 0, 100));
    }
    // The reference is never on nodes.
    assert!(log.nodes.is_empty() && log.node_timeline.is_none());
    assert_eq!((log.counts.admitted, log.counts.peak), (100, 100));
}

/// The same traffic with ceil(100 / 3) = 34 per node: 3 x 34 = 102 admitted,
/// all in one window; floor gives 3 x 33 = 99.
#[test]
fn a_kth_of_the_limit_per_node_rounds() {
    let limit = Limit { requests: 100, window: Nanos::from_secs(60) };
    let times: Vec<u64> = (0..300).map(|i| i * 200 * MS).collect();
    for (per_node, admitted) in [(34, 102), (33, 99)] {
        let (reports, _) = run(limit, vec![fixed()], Some(topology(3, Mode::Local, per_node)), &times);
        assert_eq!((reports[0].counts.admitted, reports[0].counts.peak), (admitted, admitted));
        assert!(reports[0].nodes.iter().all(|n| n.admitted == per_node && n.rejected == 100 - per_node));
    }
}

/// Node 1's clock runs 100 ms ahead, so its aligned 1 s window resets at
/// true 0.9 s; node 0's at 1 s. One request per node per node-window:
/// round robin sends 0.5 s to node 0 (admitted), 0.5 s to node 1 (admitted,
/// node time 0.6 s), 0.9 s to node 0 (refused: still its window [0, 1 s))
/// and 0.9 s to node 1 (node time exactly 1 s: a new window, admitted).
/// 1 ns earlier node 1 is still in its first window and refuses.
#[test]
fn skew_moves_each_nodes_window_edge() {
    let limit = Limit { requests: 2, window: Nanos::from_secs(1) };
    let mut t = topology(2, Mode::Local, 1);
    t.skew = vec![0, 100 * MS as i64];
    let (_, bits) = run(limit, vec![fixed()], Some(t.clone()), &[500 * MS, 500 * MS, 900 * MS, 900 * MS]);
    assert_eq!(bits[0], [true, true, false, true]);
    let (_, bits) =
        run(limit, vec![fixed()], Some(t.clone()), &[500 * MS, 500 * MS, 900 * MS - 1, 900 * MS - 1]);
    assert_eq!(bits[0], [true, true, false, false]);
    // A clock behind: node 1 at -100 ms resets at true 1.1 s.
    t.skew = vec![0, -(100 * MS as i64)];
    let (_, bits) =
        run(limit, vec![fixed()], Some(t), &[500 * MS, 500 * MS, 1050 * MS, 1050 * MS, 1100 * MS, 1100 * MS]);
    assert_eq!(bits[0], [true, true, true, false, false, true]);
}

// ---- central mode ---------------------------------------------------------------

/// An atomic store with no round trip decides exactly as the limiter alone,
/// for every algorithm, whatever the balance.
#[test]
fn atomic_store_with_rtt_zero_is_the_single_limiter() {
    let limit = Limit { requests: 5, window: Nanos::new(1000) };
    let times: Vec<u64> = (0..5000u64).map(|i| i * 37 % 1013 + i * 41).collect::<Vec<_>>();
    let mut times = times;
    times.sort_unstable();
    let specs: Vec<LimiterSpec> = vec![
        fixed(),
        SlotCounterSpec { slots: 4 }.into(),
        WeightedWindowSpec::DEFAULT.into(),
        LeakyBucketSpec { burst: 2, delay: None }.into(),
        SlidingLogSpec { count_rejected: true }.into(),
    ];
    let mut t = topology(4, Mode::Central { rtt: Nanos::ZERO, atomic: true }, 0);
    t.balance = Balance::Random;
    let (single, single_bits) = run(limit, specs.clone(), None, &times);
    let (store, store_bits) = run(limit, specs, Some(t), &times);
    for (i, (a, b)) in single.iter().zip(&store).enumerate() {
        assert_eq!(a.counts, b.counts, "{}", a.label);
        assert_eq!(single_bits[i], store_bits[i], "{}", a.label);
    }
}

/// Get-then-set, worked by hand: L = 2 per 1 s (fixed window), rtt = 10 ms.
/// Request 1 at 0 reads the count at 5 ms (0: admitted) and writes 1 at
/// 15 ms. Request 2 at 4 ms reads at 9 ms, before that write lands: it sees
/// 0 too (admitted) and writes 1 at 19 ms. Request 3 at 10 ms reads at
/// 15 ms, the instant request 1's write lands: writes apply first, it sees 1
/// (admitted: 3 admitted where the limit is 2) and writes 2 at 25 ms.
/// Request 4 at 16 ms reads at 21 ms: request 2's stale write (1) has
/// replaced request 1's (last writer wins), so it sees 1 and is admitted
/// too. Request 5 at 21 ms reads at 26 ms, after request 3's write of 2:
/// refused. An atomic store admits requests 1 and 2 only.
#[test]
fn get_then_set_reads_the_old_count_while_a_write_is_in_flight() {
    let limit = Limit { requests: 2, window: Nanos::from_secs(1) };
    let times = [0, 4 * MS, 10 * MS, 16 * MS, 21 * MS];
    let rtt = Nanos::new(10 * MS);
    let (_, gts) =
        run(limit, vec![fixed()], Some(topology(2, Mode::Central { rtt, atomic: false }, 0)), &times);
    assert_eq!(gts[0], [true, true, true, true, false]);
    let (_, atomic) =
        run(limit, vec![fixed()], Some(topology(2, Mode::Central { rtt, atomic: true }, 0)), &times);
    assert_eq!(atomic[0], [true, true, false, false, false]);
    // The first three alone: two requests closer than rtt both read 0.
    let (reports, gts) =
        run(limit, vec![fixed()], Some(topology(2, Mode::Central { rtt, atomic: false }, 0)), &times[..3]);
    assert_eq!(gts[0], [true, true, true]);
    assert_eq!((reports[0].counts.peak, reports[0].counts.excess), (3, 1));
}

/// An odd rtt in ns: the write lands at `t + 3 rtt / 2` rounded down, a
/// whole rtt after the read. L = 1 per 1 s (fixed window), rtt = 3 ns:
/// request A at 0 reads at 1 ns and its write lands at 4 ns; request B at
/// 2 ns reads at 3 ns, before it, sees 0 and is admitted too (peak 2). A
/// write landing at `read + 2 floor(rtt / 2)` = 3 ns would have refused B;
/// with rtt = 4 ns (read at 4, write at 6) B is admitted either way.
#[test]
fn get_then_set_with_an_odd_rtt_lands_a_whole_rtt_after_the_read() {
    let limit = Limit { requests: 1, window: Nanos::from_secs(1) };
    for rtt in [3, 4] {
        let (reports, gts) = run(
            limit,
            vec![fixed()],
            Some(topology(2, Mode::Central { rtt: Nanos::new(rtt), atomic: false }, 0)),
            &[0, 2],
        );
        assert_eq!(gts[0], [true, true], "rtt {rtt} ns");
        assert_eq!((reports[0].counts.peak, reports[0].counts.excess), (2, 1), "rtt {rtt} ns");
    }
}

/// Requests further apart than the round trip never read a stale state, so
/// get-then-set decides as an atomic store, for every limiter that shares
/// counts. Worked example (a weighted window counting rejections, L = 2 per
/// 1 s, rtt = 10 ms): requests at 0, 100, 200, 300 and 400 ms leave 5 in
/// the first window (2 admitted, 3 refused and counted); at 1.5 s the store
/// reads at 1.505 s and weighs them 5 x 0.495 = 2.475, and 2.475 + 1 > 2
/// refuses it. A get-then-set store that wrote back admissions only would
/// have kept 2 (2 x 0.495 + 1 <= 2: admitted).
#[test]
fn get_then_set_with_requests_an_rtt_apart_is_the_atomic_store() {
    let limit = Limit { requests: 2, window: Nanos::from_secs(1) };
    let times = [0, 100 * MS, 200 * MS, 300 * MS, 400 * MS, 1500 * MS];
    let rtt = Nanos::new(10 * MS);
    let spec: LimiterSpec = WeightedWindowSpec { count_rejected: true, ..WeightedWindowSpec::DEFAULT }.into();
    let (_, gts) =
        run(limit, vec![spec.clone()], Some(topology(1, Mode::Central { rtt, atomic: false }, 0)), &times);
    assert_eq!(gts[0], [true, true, false, false, false, false]);
    for which in 0..5 {
        let spec = sharing_counts(which);
        let (_, atomic) =
            run(limit, vec![spec.clone()], Some(topology(2, Mode::Central { rtt, atomic: true }, 0)), &times);
        let (_, gts) = run(
            limit,
            vec![spec.clone()],
            Some(topology(2, Mode::Central { rtt, atomic: false }, 0)),
            &times,
        );
        assert_eq!(gts[0], atomic[0], "{}", spec.label());
    }
}

/// Outages by true time, `[start, end)`. L = 1 per 1 s, an atomic store
/// with no round trip. Failing open, everything inside the outage is
/// admitted and nothing reaches the store: after it the store still holds
/// only the request at 0. Failing closed, nothing inside it is admitted,
/// and the store is fresh after it.
#[test]
fn outages_fail_open_or_closed() {
    let limit = Limit { requests: 1, window: Nanos::from_secs(1) };
    let central = Mode::Central { rtt: Nanos::ZERO, atomic: true };
    let times = [0, 10 * MS, 100 * MS, 150 * MS, 200 * MS - 1, 200 * MS];
    let mut t = topology(2, central, 0);
    t.outages = vec![Outage { start: Nanos::new(100 * MS), end: Nanos::new(200 * MS), fail_open: true }];
    let (_, bits) = run(limit, vec![fixed()], Some(t.clone()), &times);
    assert_eq!(bits[0], [true, false, true, true, true, false]);
    t.outages = vec![Outage { start: Nanos::ZERO, end: Nanos::new(100 * MS), fail_open: false }];
    let (_, bits) = run(limit, vec![fixed()], Some(t), &times);
    assert_eq!(bits[0], [false, false, true, false, false, false]);
}

// ---- sync mode ---------------------------------------------------------------

/// Sync, worked by hand: L = 2 per 1 s (fixed window), 2 nodes, round
/// robin, a sync every 100 ms. Node 0 admits at 0 and 20 ms, node 1 at 10 and
/// 30 ms: each sees only its own count (1 before its second request), so 4
/// get through. The sync at 100 ms merges all four; the request at exactly
/// 100 ms (node 0) already sees them and is refused, as is node 1's at
/// 160 ms. In the next window (1.05 s) the count starts over.
#[test]
fn sync_merges_the_counts_at_each_interval() {
    let limit = Limit { requests: 2, window: Nanos::from_secs(1) };
    let sync = Mode::Sync { interval: Nanos::new(100 * MS) };
    let times = [0, 10 * MS, 20 * MS, 30 * MS, 100 * MS, 160 * MS, 1050 * MS];
    let (reports, bits) = run(limit, vec![fixed()], Some(topology(2, sync, 0)), &times);
    assert_eq!(bits[0], [true, true, true, true, false, false, true]);
    assert_eq!(reports[0].counts.peak, 4);
    // A request 1 ns before the sync still decides on the node's own count.
    let times = [0, 10 * MS, 20 * MS, 30 * MS, 100 * MS - 1];
    let limit3 = Limit { requests: 3, window: Nanos::from_secs(1) };
    let (_, bits) = run(limit3, vec![fixed()], Some(topology(2, sync, 0)), &times);
    assert_eq!(bits[0], [true, true, true, true, true]);
}

/// No sync while the store is down: L = 3, the same four requests (each
/// node at 2); the outage [95 ms, 105 ms) swallows the sync at 100 ms, so at
/// 110 ms node 0 still knows only its own 2 and admits. The sync at 200 ms
/// merges all five, and node 1 refuses at 210 ms. Without the outage the
/// sync at 100 ms shows 4 and node 0 refuses at 110 ms.
#[test]
fn no_sync_during_an_outage() {
    let limit = Limit { requests: 3, window: Nanos::from_secs(1) };
    let mut t = topology(2, Mode::Sync { interval: Nanos::new(100 * MS) }, 0);
    let times = [0, 10 * MS, 20 * MS, 30 * MS, 110 * MS, 210 * MS];
    let (_, bits) = run(limit, vec![fixed()], Some(t.clone()), &times);
    assert_eq!(bits[0], [true, true, true, true, false, false]);
    t.outages = vec![Outage { start: Nanos::new(95 * MS), end: Nanos::new(105 * MS), fail_open: true }];
    let (_, bits) = run(limit, vec![fixed()], Some(t), &times);
    assert_eq!(bits[0], [true, true, true, true, true, false]);
}

/// A sync-mode run at Unix-epoch times (1.7e9 s) decides exactly as the
/// same trace near 0: the shift, 1 700 000 000 s, is a whole number of
/// windows (1 s) and of sync intervals (100 ms), so every window edge, slot
/// and sync falls in the same place against the requests, and a sync due
/// with nothing decided since the last one changes nothing. Catching up
/// 1.7e10 empty intervals before the first request costs one step, not
/// one per interval (this test once took hours).
#[test]
fn sync_at_epoch_times_decides_as_near_zero() {
    const SHIFT: u64 = 1_700_000_000 * 1_000 * MS;
    let limit = Limit { requests: 3, window: Nanos::from_secs(1) };
    let rules = [
        Rule::Fixed { offset: 0 },
        Rule::Slots { n: 10 },
        Rule::Weighted { floor: false, offset: 0, count_rejected: false },
        Rule::Weighted { floor: false, offset: 0, count_rejected: true },
        Rule::Log,
    ];
    let specs: Vec<LimiterSpec> = rules.iter().map(|r| r.spec()).collect();
    // Bursts inside one sync interval, across syncs and window edges, and
    // after long idle stretches; one request exactly at a sync instant.
    let near_zero: Vec<u64> =
        [5, 10, 20, 30, 40, 100, 130, 990, 1000, 1010, 1100, 1150, 7_300, 7_310, 7_320, 7_330]
            .iter()
            .map(|&ms| ms * MS)
            .chain([86_400_000 * MS + 1, 86_400_000 * MS + 2, 86_400_050 * MS, 86_400_100 * MS])
            .collect();
    let outage = |start_ms: u64, end_ms: u64, at: u64| Outage {
        start: Nanos::new(at + start_ms * MS),
        end: Nanos::new(at + end_ms * MS),
        fail_open: false,
    };
    let sync = Mode::Sync { interval: Nanos::new(100 * MS) };
    let decide = |at: u64| {
        let mut t = topology(3, sync, 0);
        // The sync at 1.1 s does not happen: the one at 1.2 s merges.
        t.outages = vec![outage(1_050, 1_120, at)];
        let times: Vec<u64> = near_zero.iter().map(|&x| x + at).collect();
        run(limit, specs.clone(), Some(t), &times)
    };
    let (zero, zero_bits) = decide(0);
    let (epoch, epoch_bits) = decide(SHIFT);
    assert_eq!(zero_bits, epoch_bits);
    for (a, b) in zero.iter().zip(&epoch) {
        assert_eq!((&a.label, &a.counts, &a.state, &a.nodes), (&b.label, &b.counts, &b.state, &b.nodes));
    }
    // The nodes do not see each other before the first sync (100 ms): 3 per
    // node; the sync at 100 ms shows all 5 admitted, so the fixed window
    // refuses at 100 and 130 ms.
    assert_eq!(zero_bits[0][..7], [true, true, true, true, true, false, false]);
    // Near zero (and so at the epoch), every decision is the brute-force
    // views' (round robin: request i on node i % 3).
    for (rule, bits) in rules.into_iter().zip(&zero_bits) {
        let mut oracle = SyncOracle::new(rule, limit, 100 * MS, vec![outage(1_050, 1_120, 0)]);
        let expected: Vec<bool> =
            near_zero.iter().enumerate().map(|(i, &t)| oracle.decide((i % 3) as u16, t, 1)).collect();
        assert_eq!(bits, &expected, "{rule:?}");
    }
}

// ---- balancers ---------------------------------------------------------------

/// Smooth weighted round robin gives each node exactly its share over every
/// cycle of sum(weights) requests; a node of weight 0 gets nothing.
#[test]
fn weights_give_exact_shares() {
    let limit = Limit { requests: 1_000_000, window: Nanos::from_secs(1) };
    let times: Vec<u64> = (0..6000).collect();
    for (weights, shares) in [(vec![3, 1, 2], vec![3000, 1000, 2000]), (vec![2, 0, 1], vec![4000, 0, 2000])] {
        let mut t = topology(3, Mode::Local, 1_000_000);
        t.balance = Balance::Weights(weights);
        let (reports, _) = run(limit, vec![fixed()], Some(t), &times);
        let got: Vec<u64> = reports[0].nodes.iter().map(|n| n.admitted).collect();
        assert_eq!(got, shares);
    }
    // Interleaved, not in blocks: the first cycle of 3, 1, 2 is 0 2 0 1 2 0
    // (the node with the most current weight, the first on ties).
    let mut t = topology(3, Mode::Local, 1);
    t.balance = Balance::Weights(vec![3, 1, 2]);
    let mut b = Balancer::new(&t, 0);
    let picks: Vec<u16> = (0..6).map(|_| b.pick(0)).collect();
    assert_eq!(picks, [0, 2, 0, 1, 2, 0]);
}

/// `key_hash` puts each client key on the node the documented formula
/// gives. Keys a, b, c and d send 1, 10, 100 and 1000 requests, request `i`
/// of a key at `i * 997 mod 1111` ten-thousandths of a second, so each
/// key's first is at 0; rows sort by (time, key), so at time 0 a, b, c, d
/// come in that order and get dense ids 0, 1, 2, 3. The formula
/// `((id + 0x9E3779B97F4A7C15) * 0xBF58476D1CE4E5B9 mod 2^64) >> 32`
/// gives 3 597 930 948, 2 513 197 361, 1 428 463 774 and 343 730 187
/// (0xd67411c4, 0x95cc5931, 0x5524a09e, 0x147ce80b), whose digit sums 57,
/// 38, 46 and 36 leave 0, 2, 1, 0 modulo 3: nodes 0, 2, 1, 0. With
/// L = 100 000 nothing is refused, so node 0 admits a and d (1 + 1000 =
/// 1001), node 1 c (100) and node 2 b (10). A hash that sent every key to
/// one node, or any other assignment (the counts name it), fails. Round
/// robin splits the 1111 requests 371, 370, 370 whatever their keys.
#[test]
fn key_hash_puts_each_key_on_its_documented_node() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("time,client\n");
    let mut rows: Vec<(u64, &str)> = Vec::new();
    for (key, n) in [("a", 1u64), ("b", 10), ("c", 100), ("d", 1000)] {
        rows.extend((0..n).map(|i| (i * 997 % 1111, key)));
    }
    rows.sort();
    for (t, k) in &rows {
        csv.push_str(&format!("0.{t:04},{k}\n"));
    }
    fs::write(dir.path().join("keys.csv"), csv).unwrap();
    for balance in ["key_hash", "round_robin"] {
        let text = format!(
            "name = \"keys\"\n[limit]\nrequests = 100000\nwindow = \"1s\"\n[nodes]\ncount = 3\nbalance = \"{balance}\"\n\
             [[traffic]]\nkind = \"csv\"\npath = \"keys.csv\"\nkey_column = \"client\"\n[[limiter]]\nkind = \"fixed_window\"\n"
        );
        fs::write(dir.path().join("s.toml"), text).unwrap();
        let out = dir.path().join(balance);
        ratesim()
            .args(["run", dir.path().join("s.toml").to_str().unwrap(), "-q", "--no-charts"])
            .args(["--out", out.to_str().unwrap()])
            .assert()
            .success();
        let (header, rows) = read_csv(&out.join("nodes.csv"));
        assert_eq!(header, ["limiter", "node", "admitted", "rejected", "peak", "peak_ratio"]);
        let admitted: Vec<u64> = rows.iter().map(|r| r[2].parse().unwrap()).collect();
        let expected: [u64; 3] = if balance == "key_hash" { [1001, 100, 10] } else { [371, 370, 370] };
        assert_eq!(admitted, expected, "{balance}");
    }
}

// ---- properties ---------------------------------------------------------------

fn gaps(max_gap: u64) -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(prop_oneof![3 => 0..max_gap, 1 => Just(0u64)], 1..200).prop_map(|g| {
        let mut t = 1000;
        g.into_iter()
            .map(|d| {
                t += d;
                t
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Local mode with K nodes that each hold their limit exactly (a sliding
    /// log per node): whatever the balance and the clock offsets, no node
    /// admits more than per_node in any exact window of its own (its clock is
    /// a constant shift, so its windows are true-time windows too), and the
    /// fleet never more than K x per_node: the uncoordinated bound.
    #[test]
    fn local_nodes_never_pass_k_times_per_node(
        times in gaps(300),
        k in 1u16..6,
        per_node in 1u64..5,
        balance in 0usize..4,
        skews in prop::collection::vec(0i64..500, 6),
        seed in 0u64..1000,
    ) {
        let window = 1000u64;
        let limit = Limit { requests: per_node, window: Nanos::new(window) };
        let balance = match balance {
            0 => Balance::RoundRobin,
            1 => Balance::Random,
            2 => Balance::KeyHash,
            _ => Balance::Weights((1..=u64::from(k)).collect()),
        };
        let t = Topology {
            count: k,
            balance,
            mode: Mode::Local,
            per_node,
            skew: skews[..usize::from(k)].to_vec(),
            outages: Vec::new(),
        };
        let mut fleet = Fleet::new(SlidingLogSpec { count_rejected: false }.build(limit), &t);
        let mut balancer = Balancer::new(&t, seed);
        let mut admitted: Vec<(u64, u16)> = Vec::new();
        for (i, &time) in times.iter().enumerate() {
            let node = balancer.pick(i as u32 % 7);
            fleet.route(node);
            if fleet.decide(Nanos::new(time), 1).admitted() {
                admitted.push((time, node));
            }
        }
        for &(end, _) in &admitted {
            let inside: Vec<u16> =
                admitted.iter().filter(|&&(a, _)| a <= end && a + window > end).map(|&(_, n)| n).collect();
            prop_assert!(inside.len() as u64 <= u64::from(k) * per_node);
            for node in 0..k {
                prop_assert!(inside.iter().filter(|&&n| n == node).count() as u64 <= per_node);
            }
        }
    }

    /// An atomic store with no round trip is the single limiter, decision
    /// for decision, on any trace; get-then-set with a fixed window never
    /// admits less than atomic at the same round trip (its count at a read
    /// is at most what it admitted before in the window, so the first L of
    /// every window always pass).
    #[test]
    fn central_store_against_the_single_limiter(times in gaps(120), rtt in 0u64..300) {
        let limit = Limit { requests: 3, window: Nanos::new(1000) };
        let specs = vec![fixed(), SlotCounterSpec { slots: 3 }.into(), WeightedWindowSpec::DEFAULT.into()];
        let (single, single_bits) = run(limit, specs.clone(), None, &times);
        let zero = topology(3, Mode::Central { rtt: Nanos::ZERO, atomic: true }, 0);
        let (store, store_bits) = run(limit, specs.clone(), Some(zero), &times);
        for i in 0..specs.len() {
            prop_assert_eq!(&single[i].counts, &store[i].counts);
            prop_assert_eq!(&single_bits[i], &store_bits[i]);
        }
        let rtt = Nanos::new(rtt);
        let (atomic, _) = run(limit, vec![fixed()], Some(topology(2, Mode::Central { rtt, atomic: true }, 0)), &times);
        let (gts, _) = run(limit, vec![fixed()], Some(topology(2, Mode::Central { rtt, atomic: false }, 0)), &times);
        prop_assert!(gts[0].counts.admitted >= atomic[0].counts.admitted);
    }
}

// ---- brute-force oracles ------------------------------------------------------

/// A window limiter's rule as `docs/semantics.md` ("The window limiters",
/// "Weighted window") states it, decided from scratch on the set of counted
/// requests a copy of the limiter has seen: no limiter code, no `absorb`, no
/// state carried from one decision to the next. A copy's state is a
/// function of what it counted (its window, slots or log roll forward with
/// time alone), so whatever holds that state (a synced view, a store, a
/// get-then-set write) can be checked as "this rule on these requests".
#[derive(Clone, Copy, Debug)]
enum Rule {
    /// Aligned fixed window, windows `[offset + kW, offset + (k+1)W)`:
    /// admit iff the permits counted in the request's window plus its cost
    /// are at most `L`.
    Fixed { offset: u64 },
    /// Slot `floor(t N / W)`: the permits in slots `k - N + 1 ..= k`.
    Slots { n: u64 },
    /// `prev` and `curr` from windows `k - 1` and `k` of the fixed window's
    /// grid, `e` into window `k`: `exact` admits iff
    /// `prev (W - e) / W + curr + c <= L`, `floor` iff
    /// `floor(prev (W - e) / W) + curr + c <= L`.
    Weighted { floor: bool, offset: u64, count_rejected: bool },
    /// The sliding log with `count_rejected` (the only log on nodes): the
    /// permits in `(t - W, t]`.
    Log,
}

impl Rule {
    fn spec(self) -> LimiterSpec {
        match self {
            Rule::Fixed { offset } => {
                FixedWindowSpec { align: WindowAlign::Epoch { offset: Nanos::new(offset) } }.into()
            }
            Rule::Slots { n } => SlotCounterSpec { slots: n }.into(),
            Rule::Weighted { floor, offset, count_rejected } => WeightedWindowSpec {
                rounding: if floor { Rounding::Floor } else { Rounding::Exact },
                offset: Nanos::new(offset),
                count_rejected,
            }
            .into(),
            Rule::Log => SlidingLogSpec { count_rejected: true }.into(),
        }
    }

    /// Whether a refused request is counted too.
    fn counts_rejected(self) -> bool {
        matches!(self, Rule::Log | Rule::Weighted { count_rejected: true, .. })
    }

    /// Whether a request of `cost` at `t` is admitted by a copy that has
    /// counted `seen` (times at or before `t`, with their costs). `offset`
    /// is below `W`.
    fn admits(self, limit: Limit, seen: &[(u64, u32)], t: u64, cost: u32) -> bool {
        let (l, w, c, t) =
            (u128::from(limit.requests), u128::from(limit.window.get()), u128::from(cost), u128::from(t));
        let sum = |keep: &dyn Fn(u128) -> bool| -> u128 {
            seen.iter().filter(|&&(r, _)| keep(u128::from(r))).map(|&(_, c)| u128::from(c)).sum()
        };
        match self {
            Rule::Fixed { offset } => {
                // Shifted by one window so the window straddling 0 has index 0.
                let window = |x: u128| (x + w - u128::from(offset)) / w;
                sum(&|r| window(r) == window(t)) + c <= l
            }
            Rule::Slots { n } => {
                let n = u128::from(n);
                let slot = |x: u128| x * n / w;
                sum(&|r| slot(r) + n > slot(t)) + c <= l
            }
            Rule::Weighted { floor, offset, .. } => {
                let shifted = |x: u128| x + w - u128::from(offset);
                let (k, e) = (shifted(t) / w, shifted(t) % w);
                let prev = sum(&|r| shifted(r) / w + 1 == k);
                let curr = sum(&|r| shifted(r) / w == k);
                if floor {
                    prev * (w - e) / w + curr + c <= l
                } else {
                    prev * (w - e) + (curr + c) * w <= l * w
                }
            }
            Rule::Log => sum(&|r| r + w > t) + c <= l,
        }
    }
}

/// Any rule, with offsets (fixed and weighted windows), slot counts that
/// do not divide the window (W = 1000 ns) and both roundings.
fn any_rule() -> impl Strategy<Value = Rule> {
    let offset = prop_oneof![Just(0u64), 1u64..1000];
    prop_oneof![
        offset.clone().prop_map(|offset| Rule::Fixed { offset }),
        prop_oneof![1u64..8, Just(10u64), Just(1000u64)].prop_map(|n| Rule::Slots { n }),
        (any::<bool>(), offset, any::<bool>()).prop_map(|(floor, offset, count_rejected)| Rule::Weighted {
            floor,
            offset,
            count_rejected
        }),
        Just(Rule::Log),
    ]
}

/// Sync mode from `docs/semantics.md` ("Sync mode", "Store outages"),
/// without `Fleet`'s bookkeeping: it keeps only the list of counted
/// requests `(t, node, cost)` (admitted ones, and refused ones for a rule
/// that counts them; nothing inside an outage). A request inside an outage
/// gets the outage's answer. Otherwise let `s` be the last sync instant at
/// or before `t` (`k * interval`, `k >= 1`, then `u64::MAX` where the
/// schedule saturates) that is not inside an outage: a sync at `s` is done
/// before a request at `s` is decided and merges what was counted before
/// `s`, so node `i` sees every counted request before `s` and its own from
/// `s` on (all its own, and nothing else, before the first sync). The rule
/// decides on exactly that.
struct SyncOracle {
    rule: Rule,
    limit: Limit,
    interval: u64,
    outages: Vec<Outage>,
    counted: Vec<(u64, u16, u32)>,
}

impl SyncOracle {
    fn new(rule: Rule, limit: Limit, interval: u64, outages: Vec<Outage>) -> Self {
        SyncOracle { rule, limit, interval, outages, counted: Vec::new() }
    }

    fn down(&self, t: u64) -> Option<&Outage> {
        self.outages.iter().find(|o| o.start.get() <= t && t < o.end.get())
    }

    /// The last sync at or before `t` that happened.
    fn last_sync(&self, t: u64) -> Option<u64> {
        let i = self.interval;
        let mut s = if t == u64::MAX { u64::MAX } else { t / i * i };
        loop {
            if s == 0 {
                return None;
            }
            match self.down(s) {
                None => return Some(s),
                // The last sync instant before the outage.
                Some(o) => s = o.start.get().checked_sub(1)? / i * i,
            }
        }
    }

    fn decide(&mut self, node: u16, t: u64, cost: u32) -> bool {
        if let Some(o) = self.down(t) {
            return o.fail_open;
        }
        let s = self.last_sync(t);
        let seen: Vec<(u64, u32)> = self
            .counted
            .iter()
            .filter(|&&(r, n, _)| n == node || s.is_some_and(|s| r < s))
            .map(|&(r, _, c)| (r, c))
            .collect();
        let admitted = self.rule.admits(self.limit, &seen, t, cost);
        if admitted || self.rule.counts_rejected() {
            self.counted.push((t, node, cost));
        }
        admitted
    }
}

/// A central store from `docs/semantics.md` ("Central mode", "Store
/// outages"): a request at `t` outside an outage reaches the store at
/// `r = t + floor(rtt / 2)`. Atomic: the rule decides at `r` on every
/// request counted before it. Get-then-set: the read at `r` sees the state
/// of the write that landed last at or before `r` (writes land at their
/// read plus `rtt`; of writes landing at one instant the later one wins),
/// or a fresh state if none has; if the request is counted, it writes that
/// state plus itself. So each write's state is a chain of requests back to
/// a fresh store (for a fixed window, the pair (window, count)). Returns
/// the decisions in order.
fn central_oracle(
    rule: Rule,
    limit: Limit,
    rtt: u64,
    atomic: bool,
    outages: &[Outage],
    requests: &[(u64, u32)],
) -> Vec<bool> {
    let half = rtt / 2;
    let mut counted: Vec<(u64, u32)> = Vec::new();
    // Get-then-set: (landing time, the requests the written state counts).
    let mut writes: Vec<(u128, Vec<(u64, u32)>)> = Vec::new();
    let mut decisions = Vec::new();
    for &(t, cost) in requests {
        if let Some(o) = outages.iter().find(|o| o.start.get() <= t && t < o.end.get()) {
            decisions.push(o.fail_open);
            continue;
        }
        let r = t.saturating_add(half);
        let seen: Vec<(u64, u32)> = if atomic {
            counted.clone()
        } else {
            writes
                .iter()
                .enumerate()
                .filter(|(_, (land, _))| *land <= u128::from(r))
                .max_by_key(|&(i, (land, _))| (*land, i))
                .map_or_else(Vec::new, |(_, (_, state))| state.clone())
        };
        let admitted = rule.admits(limit, &seen, r, cost);
        if admitted || rule.counts_rejected() {
            counted.push((r, cost));
            let mut state = seen;
            state.push((r, cost));
            writes.push((u128::from(r) + u128::from(rtt), state));
        }
        decisions.push(admitted);
    }
    decisions
}

/// The peak state, in slots, of a sync fleet of `k` slot counters with `n`
/// slots (W = 1000 ns) after the requests `decided` (time, node, counted;
/// none inside an outage), by brute force over what each copy holds
/// (docs/semantics.md: "sync mode adds up the shared state's peak and
/// every view's own (a sync copies the shared state into a view, not the
/// shared state's past peak)"; "Slot counter": a request drops the slots
/// that left its counted span before adding to its own).
///
/// A copy holds the requests it counted (a view: those it decided since it
/// was last a copy of the shared state, on top of that copy; the shared
/// state: all it merged) and has a last request; it stores the distinct
/// slots of what it holds in the counted span `(j - n, j]` of that last
/// request's slot `j`. Its peak is the most it stores at any moment: after
/// each of its decisions (a view), after each request merged (the shared
/// state), after each copy (a view). The sync before a request at `t` is
/// made when the oracle's last sync at or before `t` comes after the
/// previous decision: the shared state merges, in time order, what was
/// counted since the sync before, and every view becomes a copy of it. The
/// run ends at `end`: the last sync before it is made the same way.
fn sync_slot_entries(n: u64, k: u16, oracle: &SyncOracle, decided: &[(u64, u16, bool)], end: u64) -> u64 {
    #[derive(Clone, Default)]
    struct Copy {
        held: Vec<u64>,
        last: Option<u64>,
        peak: u64,
    }
    impl Copy {
        fn stored(&self, n: u64) -> u64 {
            let slot = |t: u64| t * n / 1000;
            let Some(j) = self.last.map(slot) else { return 0 };
            let mut live: Vec<u64> = self.held.iter().map(|&r| slot(r)).filter(|&s| s + n > j).collect();
            live.sort_unstable();
            live.dedup();
            live.len() as u64
        }
        fn moment(&mut self, n: u64) {
            self.peak = self.peak.max(self.stored(n));
        }
    }
    let mut shared = Copy::default();
    let mut views = vec![Copy::default(); usize::from(k)];
    let mut since: Vec<u64> = Vec::new();
    let mut previous: Option<u64> = None;
    let sync = |shared: &mut Copy, views: &mut Vec<Copy>, since: &mut Vec<u64>| {
        since.sort_unstable();
        for r in since.drain(..) {
            shared.held.push(r);
            shared.last = Some(r);
            shared.moment(n);
        }
        for v in views.iter_mut() {
            (v.held, v.last) = (shared.held.clone(), shared.last);
            v.moment(n);
        }
    };
    for &(t, node, counted) in decided {
        if oracle.last_sync(t).is_some_and(|s| previous.is_none_or(|p| s > p)) {
            sync(&mut shared, &mut views, &mut since);
        }
        previous = Some(t);
        let v = &mut views[usize::from(node)];
        v.last = Some(t);
        if counted {
            v.held.push(t);
            since.push(t);
        }
        v.moment(n);
    }
    // After the last decision, a sync only if something was decided.
    if let Some(p) = previous
        && end > 0
        && oracle.last_sync(end - 1).is_some_and(|s| s > p)
    {
        sync(&mut shared, &mut views, &mut since);
    }
    shared.peak + views.iter().map(|v| v.peak).sum::<u64>()
}

/// The limiters that share counts in sync mode, `which` in 0..5 (the two
/// with `count_rejected` among them, whose rejections move a view too).
fn sharing_counts(which: usize) -> LimiterSpec {
    match which {
        0 => fixed(),
        1 => SlotCounterSpec { slots: 4 }.into(),
        2 => WeightedWindowSpec::DEFAULT.into(),
        3 => WeightedWindowSpec { count_rejected: true, ..WeightedWindowSpec::DEFAULT }.into(),
        _ => SlidingLogSpec { count_rejected: true }.into(),
    }
}

/// Outages one after another, none overlapping, from (gap, length,
/// fail open).
fn outages_from(spec: Vec<(u64, u64, bool)>) -> Vec<Outage> {
    let mut end = 0;
    spec.into_iter()
        .map(|(gap, len, fail_open)| {
            let start = end + gap;
            end = start + len;
            Outage { start: Nanos::new(start), end: Nanos::new(end), fail_open }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Sync mode decides each request as the brute-force [`SyncOracle`]
    /// does, on traces with long idle stretches (many empty intervals to
    /// catch up, which `Fleet` skips), requests at sync instants, costs
    /// above 1, outages open and closed, and every window rule that shares
    /// counts (with offsets, both roundings, rejections that count).
    ///
    /// State (`docs/semantics.md`, "Per-node figures and state": the shared
    /// state's peak plus every view's own): a fixed window is one counter
    /// and its window (1 item, 16 B) and a weighted window three counters
    /// (3, 24 B) whatever they count, so K nodes hold exactly K + 1 of
    /// them. A slot counter copy stores the non-empty slots of its counted
    /// span, 16 B each plus 8 B for its sum: exactly
    /// [`sync_slot_entries`]; a log copy holds at most the counted requests
    /// in one exact window, 8 B each. Each node that counted a request held
    /// it in its view.
    #[test]
    fn sync_decides_as_the_documented_views(
        requests in prop::collection::vec(
            (prop_oneof![6 => 0u64..40, 1 => 0u64..5_000, 1 => Just(0u64)], prop_oneof![6 => Just(1u32), 1 => 1u32..4]),
            1..150,
        ),
        interval in prop_oneof![1u64..60, 1u64..400],
        requests_per_window in 1u64..12,
        k in 1u16..5,
        outages in prop::collection::vec((0u64..4_000, prop_oneof![1u64..150, 1u64..3_000], any::<bool>()), 0..6),
        rule in any_rule(),
        after_last in prop_oneof![Just(1u64), 1u64..3_000],
    ) {
        let limit = Limit { requests: requests_per_window, window: Nanos::new(1000) };
        let outages = outages_from(outages);
        let mut t = topology(k, Mode::Sync { interval: Nanos::new(interval) }, 0);
        t.outages = outages.clone();
        let mut fleet = Fleet::new(rule.spec().build(limit), &t);
        let mut oracle = SyncOracle::new(rule, limit, interval, outages);
        let mut balancer = Balancer::new(&t, 0);
        let mut now = 0;
        // The requests the views decided (none inside an outage): time,
        // node, whether counted.
        let mut decided: Vec<(u64, u16, bool)> = Vec::new();
        for (i, (gap, cost)) in requests.into_iter().enumerate() {
            now += gap;
            let node = balancer.pick(i as u32);
            fleet.route(node);
            let admitted = fleet.decide(Nanos::new(now), cost).admitted();
            if oracle.down(now).is_none() {
                decided.push((now, node, admitted || rule.counts_rejected()));
            }
            prop_assert_eq!(admitted, oracle.decide(node, now, cost), "request {} at {} on node {}", i, now, node);
        }
        // The run ends `after_last` after the last request: the syncs
        // between are made too.
        let end = now + after_last;
        fleet.settle(Nanos::new(end));
        let copies = u64::from(k) + 1;
        let state = fleet.peak_state();
        let counted = &oracle.counted;
        let nodes_counting = {
            let mut n: Vec<u16> = counted.iter().map(|&(_, n, _)| n).collect();
            n.sort_unstable();
            n.dedup();
            n.len() as u64
        };
        match rule {
            Rule::Fixed { .. } => prop_assert_eq!(state, StateSize { entries: copies, bytes: 16 * copies }),
            Rule::Weighted { .. } => prop_assert_eq!(state, StateSize { entries: 3 * copies, bytes: 24 * copies }),
            Rule::Slots { n } => {
                let entries = sync_slot_entries(n, k, &oracle, &decided, end);
                prop_assert_eq!(state, StateSize { entries, bytes: 16 * entries + 8 * copies });
            }
            Rule::Log => {
                let most_in_a_window = counted
                    .iter()
                    .map(|&(end, _, _)| counted.iter().filter(|&&(r, _, _)| r <= end && r + 1000 > end).count())
                    .max()
                    .unwrap_or(0) as u64;
                prop_assert!(state.entries <= copies * most_in_a_window, "{:?}", state);
                prop_assert!(state.entries >= nodes_counting, "{:?}", state);
                prop_assert_eq!(state.bytes, 8 * state.entries);
            }
        }
    }

    /// A central store decides each request as [`central_oracle`] does,
    /// atomic and get-then-set, for every window rule, with round trips
    /// from none to several windows (odd ones in ns included), costs above
    /// 1 and outages. An atomic store also decides as the single limiter
    /// on the shifted times for the GCRA and the token bucket, whose clock
    /// is all that moves.
    #[test]
    fn central_store_decides_as_the_documented_store(
        requests in prop::collection::vec(
            (prop_oneof![3 => 0u64..120, 1 => Just(0u64), 1 => 0u64..3_000], prop_oneof![6 => Just(1u32), 1 => 1u32..4]),
            1..150,
        ),
        rtt in prop_oneof![0u64..6, 0u64..400, 0u64..3_000],
        requests_per_window in 1u64..8,
        k in 1u16..4,
        outages in prop::collection::vec((0u64..4_000, 1u64..1_000, any::<bool>()), 0..3),
        rule in any_rule(),
    ) {
        let limit = Limit { requests: requests_per_window, window: Nanos::new(1000) };
        let outages = outages_from(outages);
        let mut now = 0;
        let requests: Vec<(u64, u32)> = requests
            .into_iter()
            .map(|(gap, cost)| {
                now += gap;
                (now, cost)
            })
            .collect();
        for atomic in [true, false] {
            let mut t = topology(k, Mode::Central { rtt: Nanos::new(rtt), atomic }, 0);
            t.outages = outages.clone();
            t.balance = Balance::Random;
            let mut fleet = Fleet::new(rule.spec().build(limit), &t);
            let mut balancer = Balancer::new(&t, rtt);
            let expected = central_oracle(rule, limit, rtt, atomic, &outages, &requests);
            for (i, (&(now, cost), want)) in requests.iter().zip(expected).enumerate() {
                fleet.route(balancer.pick(0));
                let admitted = fleet.decide(Nanos::new(now), cost).admitted();
                prop_assert_eq!(admitted, want, "atomic {}, request {} at {}", atomic, i, now);
            }
        }
        let t = topology(k, Mode::Central { rtt: Nanos::new(rtt), atomic: true }, 0);
        let others: [LimiterSpec; 3] = [
            GcraSpec { burst: None, max_wait: None }.into(),
            TokenBucketSpec::CONTINUOUS.into(),
            TokenBucketSpec::TIMER.into(),
        ];
        for spec in others {
            let mut fleet = Fleet::new(spec.build(limit), &t);
            let mut single = spec.build(limit);
            for &(now, cost) in &requests {
                prop_assert_eq!(
                    fleet.decide(Nanos::new(now), cost).admitted(),
                    single.decide(Nanos::new(now + rtt / 2), cost).admitted(),
                    "{} at {}", spec.label(), now
                );
            }
        }
    }
}

/// The state a synced view holds is its own: a sync copies the shared
/// state into it, not the shared state's past peak. L = 100 per 1 s, a
/// 10-slot counter on 2 nodes syncing every 2 s, all requests on node 0
/// (weights 1 and 0): ten at 0.05 s, 0.15 s, ..., 0.95 s (one a slot), then
/// 1.95 s and 2.05 s. At the 2 s sync the shared state absorbs the eleven
/// in order and peaks at 10 slots (the ten, before 1.95 s pushes them out
/// of the window); node 0's view peaked at 10 before it; node 1 only ever
/// holds the copy made at 2 s, 1 slot (1.95 s). Shared 10 + node 0 10 +
/// node 1 1 = 21 slots, 21 x 16 + 3 x 8 = 360 B. Node 1's copy had been
/// counted with the shared state's 10 (30 slots).
#[test]
fn a_synced_view_holds_its_own_state_not_the_shared_peak() {
    let limit = Limit { requests: 100, window: Nanos::from_secs(1) };
    let mut times: Vec<u64> = (0..10).map(|i| (50 + 100 * i) * MS).collect();
    times.extend([1950 * MS, 2050 * MS]);
    let mut t = topology(2, Mode::Sync { interval: Nanos::from_secs(2) }, 0);
    t.balance = Balance::Weights(vec![1, 0]);
    let (reports, bits) = run(limit, vec![SlotCounterSpec { slots: 10 }.into()], Some(t), &times);
    assert!(bits[0].iter().all(|&a| a));
    assert_eq!(reports[0].state, StateSize { entries: 21, bytes: 360 });
}

/// The syncs after a key's last request are made before the run ends, and
/// their state counts. L = 100 per 1 s, a 10-slot counter on 2 nodes
/// syncing every 2 s, all requests on node 0: ten at 0.05 s, 0.15 s, ...,
/// 0.95 s (one a slot). A run of 3 s makes the 2 s sync after the last:
/// the shared state absorbs the ten (10 slots), and each view becomes a
/// copy of it (node 0 had peaked at 10 before; node 1 holds 10 from then):
/// 30 slots, 30 x 16 + 3 x 8 = 504 B. A run of 1.5 s ends before that
/// sync: node 0's 10 slots, the others empty, 10 x 16 + 3 x 8 = 184 B.
#[test]
fn the_syncs_after_a_keys_last_request_count_in_its_state() {
    let limit = Limit { requests: 100, window: Nanos::from_secs(1) };
    let times: Vec<u64> = (0..10).map(|i| (50 + 100 * i) * MS).collect();
    let arrivals = || times.iter().map(|&t| Ok(Arrival::at(Nanos::new(t)))).collect::<Vec<ArrivalResult>>();
    for (end_ms, entries, bytes) in [(3000, 30, 504), (1500, 10, 184)] {
        let mut t = topology(2, Mode::Sync { interval: Nanos::from_secs(2) }, 0);
        t.balance = Balance::Weights(vec![1, 0]);
        let config = RunConfig {
            topology: Some(t),
            end: Some(Nanos::new(end_ms * MS)),
            ..RunConfig::new(limit, vec![SlotCounterSpec { slots: 10 }.into()])
        };
        let report = engine::run(&config, arrivals().into_iter(), None, &mut |_| {}).unwrap();
        assert_eq!(report.limiters[0].state, StateSize { entries, bytes }, "run of {end_ms} ms");
    }
}

/// A get-then-set store's peak survives the write that replaces it. L =
/// 100 per 1 s, a 10-slot counter, 1 node, rtt 100 ms (reads 50 ms after
/// arrival, writes landing 100 ms after the read); requests at 0.02, 0.5,
/// 0.93, 0.96 and 1.55 s. The one at 0.93 s reads {0, 5} at 0.98 s and
/// writes {0, 5, 9}, landing at 1.08 s; the one at 0.96 s reads {0, 5} at
/// 1.01 s, drops slot 0 and writes {5, 10}, landing at 1.11 s. So the
/// store holds 3 slots from 1.08 s to 1.11 s, with 2 writes in flight at
/// once at most: 3 x (1 + 2) = 9 slots, (3 x 16 + 8) x 3 = 168 B. The
/// store's own copy, replaced at 1.11 s, had lost its peak of 3 (6 slots).
#[test]
fn a_get_then_set_store_keeps_its_peak_across_writes() {
    let limit = Limit { requests: 100, window: Nanos::from_secs(1) };
    let times = [20 * MS, 500 * MS, 930 * MS, 960 * MS, 1550 * MS];
    let rtt = Nanos::new(100 * MS);
    let (reports, bits) = run(
        limit,
        vec![SlotCounterSpec { slots: 10 }.into()],
        Some(topology(1, Mode::Central { rtt, atomic: false }, 0)),
        &times,
    );
    assert!(bits[0].iter().all(|&a| a));
    assert_eq!(reports[0].state, StateSize { entries: 9, bytes: 168 });
    // Without the last two requests the write of {0, 5, 9} is still in
    // flight at the end (no later read applies it): it lands on the store
    // all the same, 3 slots x (1 + 1 write in flight) = 6, 3 x 16 + 8 = 56 B
    // each. Counted from applied writes only, it had read 4.
    let (reports, _) = run(
        limit,
        vec![SlotCounterSpec { slots: 10 }.into()],
        Some(topology(1, Mode::Central { rtt, atomic: false }, 0)),
        &times[..3],
    );
    assert_eq!(reports[0].state, StateSize { entries: 6, bytes: 112 });
}

/// One node that syncs is the single limiter, decision for decision: its
/// view after each sync is everything it counted, rejected requests
/// included for the limiters that count them. Worked example: L = 2 per
/// 1 s, a weighted window that counts rejections, requests at 0, 10 ms,
/// 20 ms (rejected, counted) and 1.5 s: at 1.5 s the previous window's 3
/// weigh 3 x 0.5 = 1.5, and 1.5 + 1 > 2 refuses it, synced or not.
#[test]
fn one_sync_node_counts_what_the_single_limiter_counts() {
    let limit = Limit { requests: 2, window: Nanos::new(1000 * MS) };
    let spec: LimiterSpec = WeightedWindowSpec { count_rejected: true, ..WeightedWindowSpec::DEFAULT }.into();
    let times = [0, 10 * MS, 20 * MS, 1500 * MS];
    let sync = Mode::Sync { interval: Nanos::new(100 * MS) };
    let (_, single) = run(limit, vec![spec.clone()], None, &times);
    let (_, synced) = run(limit, vec![spec], Some(topology(1, sync, 0)), &times);
    assert_eq!(single[0], [true, true, false, false]);
    assert_eq!(synced[0], single[0]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The same on random traces, for every limiter that shares counts.
    #[test]
    fn one_sync_node_is_the_single_limiter(
        times in gaps(400),
        interval in prop_oneof![1u64..60, 1u64..3_000],
        requests in 1u64..6,
        which in 0usize..5,
    ) {
        let limit = Limit { requests, window: Nanos::new(1000) };
        let spec = sharing_counts(which);
        let sync = Mode::Sync { interval: Nanos::new(interval) };
        let (_, single) = run(limit, vec![spec.clone()], None, &times);
        let (_, synced) = run(limit, vec![spec], Some(topology(1, sync, 0)), &times);
        prop_assert_eq!(&synced[0], &single[0]);
    }
}

/// Where the sync schedule runs out of `u64`: the syncs go on at
/// `k * interval` while that fits, then at `u64::MAX` before every request
/// there. Requests just past the last whole interval and at `u64::MAX`
/// itself decide as the brute-force [`SyncOracle`] does, with an interval
/// that divides `u64::MAX` (the last sync is `u64::MAX` itself) and ones
/// that do not.
#[test]
fn sync_near_the_end_of_time_decides_as_the_documented_views() {
    let limit = Limit { requests: 2, window: Nanos::new(1000) };
    for interval in [u64::MAX / 3, u64::MAX / 3 + 1, u64::MAX / 2 + 7, u64::MAX - 1, u64::MAX] {
        for rule in [
            Rule::Fixed { offset: 0 },
            Rule::Slots { n: 4 },
            Rule::Weighted { floor: false, offset: 0, count_rejected: false },
            Rule::Log,
        ] {
            let t = topology(3, Mode::Sync { interval: Nanos::new(interval) }, 0);
            let mut fleet = Fleet::new(rule.spec().build(limit), &t);
            let mut oracle = SyncOracle::new(rule, limit, interval, Vec::new());
            let last = interval * (u64::MAX / interval);
            let mut times: Vec<u64> = (0..4).map(|d| (last - 2).saturating_add(d)).collect();
            times.extend((0..4).map(|d| u64::MAX - 3 + d));
            times.extend([u64::MAX; 4]);
            times.sort_unstable();
            for (i, &now) in times.iter().enumerate() {
                let node = (i % 3) as u16;
                fleet.route(node);
                let admitted = fleet.decide(Nanos::new(now), 1).admitted();
                assert_eq!(
                    admitted,
                    oracle.decide(node, now, 1),
                    "interval {interval}, {rule:?}, request {i} at {now}"
                );
            }
        }
    }
}

// ---- what a run on nodes writes ---------------------------------------------------

/// nodes_local: the topology in the terminal, summary.md and report.md,
/// nodes.csv per node, the per-node chart and the nodes sweep.
#[test]
fn a_run_on_nodes_writes_the_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    ratesim()
        .args(["run", scenario("nodes_local.toml").to_str().unwrap(), "--format", "svg"])
        .args(["--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "nodes     3 nodes, local, 100 per node, round robin (every limiter but the sliding-log reference)",
        ));
    let nodes = read(&out, "nodes.csv");
    assert!(
        nodes
            .starts_with("limiter,node,admitted,rejected,peak,peak_ratio\nfixed_window,0,300,700,101,1.01\n")
    );
    assert_eq!(nodes.lines().count(), 1 + 2 * 3, "two limiters on 3 nodes; the reference is not on nodes");
    let summary = read(&out, "summary.md");
    assert!(summary.contains("Nodes: 3 nodes, local, 100 per node, round robin."));
    // Locally the node's own limit is 100 per node too: 101 is 1.01 of both.
    assert!(summary.contains("| peak | peak/L | peak/per node |\n"), "{summary}");
    assert!(summary.contains("|      700 |  101 |   1.01 |          1.01 |\n"), "{summary}");
    // Three nodes of 30 under L = 90, clocks 40 ms apart, each admitting 60
    // in one window of true time: 0.67 of L, twice its own limit.
    let skew = dir.path().join("skew");
    ratesim()
        .args(["run", scenario("nodes_skew.toml").to_str().unwrap(), "--no-charts", "-q"])
        .args(["--out", skew.to_str().unwrap()])
        .assert()
        .success();
    assert!(
        read(&skew, "summary.md")
            .contains("| -40ms |       60 | 33.3 % |       40 |   60 |   0.67 |          2.00 |\n")
    );
    let report = read(&out, "report.md");
    for part in ["## Nodes\n", "| fixed_window       |    0 |", "](nodes_timeline.svg)", "## Nodes sweep\n"] {
        assert!(report.contains(part), "report.md lacks {part:?}");
    }
    let svg = read(&out, "nodes_timeline.svg");
    assert!(svg.contains("node 2") && svg.contains("all nodes together"));
    let sweep = read(&out, "nodes_sweep.csv");
    assert!(
        sweep.contains("\n10,100,fixed_window,fixed_window,,3000,3000,0,1000,10,2900,0,9,10\n"),
        "{sweep}"
    );
    assert!(read(&out, "nodes_sweep.svg").contains("analytic K × per node / L"));
}

/// A nodes scenario with random balancing and a sweep gives the same files
/// on one thread and on two.
#[test]
fn nodes_runs_do_not_depend_on_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(threads);
        ratesim()
            .env("RAYON_NUM_THREADS", threads)
            .args(["run", scenario("nodes_central.toml").to_str().unwrap(), "-q", "--decisions"])
            .args(["--format", "svg", "--out", out.to_str().unwrap()])
            .assert()
            .success();
        outputs.push(snapshot(&out));
    }
    assert!(outputs[0] == outputs[1]);
}

/// The topology sweeps rerun exactly the scenario: the point equal to the
/// scenario's own [nodes] gives the main run's figures.
#[test]
fn a_sweep_point_equal_to_the_scenario_is_the_main_run() {
    let dir = tempfile::tempdir().unwrap();
    for (name, file, key) in [
        ("nodes_local", "nodes_sweep.csv", "3,100,"),
        ("nodes_central", "rtt_sweep.csv", "0.002,get-then-set,"),
    ] {
        let out = dir.path().join(name);
        ratesim()
            .args(["run", scenario(&format!("{name}.toml")).to_str().unwrap(), "-q", "--no-charts"])
            .args(["--out", out.to_str().unwrap()])
            .assert()
            .success();
        let (_, summary) = read_csv(&out.join("summary.csv"));
        let (_, sweep) = read_csv(&out.join(file));
        let sweep: Vec<&Vec<String>> = sweep.iter().filter(|r| r.join(",").starts_with(key)).collect();
        assert_eq!(sweep.len(), summary.len(), "{name}");
        let skip = key.matches(',').count() + usize::from(file == "rtt_sweep.csv");
        for (s, p) in summary.iter().zip(sweep) {
            // limiter, algorithm, slots, offered, admitted, rejected, peak, peak_ratio, excess, false_rejects
            assert_eq!(s[..10], p[skip..skip + 10], "{name}");
        }
    }
}

/// decisions.csv names the node that decided each request (round robin on
/// three nodes: request `seq` goes to node `seq % 3`), and leaves the field
/// empty for the sliding-log reference, which is never on nodes. Counted
/// per node, its rows give nodes.csv's admitted and rejected; with retries,
/// every attempt has its node.
#[test]
fn decisions_name_the_node_that_decided() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    ratesim()
        .args(["run", scenario("nodes_local.toml").to_str().unwrap(), "-q", "--no-charts", "--decisions"])
        .args(["--out", out.to_str().unwrap()])
        .assert()
        .success();
    assert!(read(&out, "decisions.csv").starts_with("seq,time,limiter,admitted,window_count,node\n"));
    let decisions = common::read_records(&out.join("decisions.csv"));
    assert_eq!(decisions.len(), 3000 * 3);
    for r in &decisions {
        let expected = if r["limiter"] == "sliding_log" {
            String::new()
        } else {
            (r["seq"].parse::<u64>().unwrap() % 3).to_string()
        };
        assert_eq!(r["node"], expected, "{r:?}");
    }
    assert_decisions_per_node_match_nodes_csv(&out, &decisions);

    let text = r#"name = "retry_on_nodes"
seed = 3
duration = "3s"
[limit]
requests = 4
window = "1s"
[nodes]
count = 2
mode = "local"
balance = "random"
[retry]
policy = "fixed"
base = "300ms"
max_attempts = 3
[[traffic]]
kind = "constant"
load = 2
[[limiter]]
kind = "fixed_window"
"#;
    let out =
        common::run_scenario_text(dir.path(), "retry_on_nodes.toml", text, &["--no-charts", "--decisions"]);
    assert!(
        read(&out, "decisions.csv")
            .starts_with("seq,time,limiter,admitted,window_count,attempt,logical,node\n")
    );
    let decisions = common::read_records(&out.join("decisions.csv"));
    assert!(decisions.iter().any(|r| r["attempt"] != "1"), "some requests retry");
    assert_decisions_per_node_match_nodes_csv(&out, &decisions);
}

/// Admitted and rejected per (limiter, node) in decisions.csv, against
/// nodes.csv's rows.
fn assert_decisions_per_node_match_nodes_csv(
    out: &std::path::Path,
    decisions: &[std::collections::BTreeMap<String, String>],
) {
    let mut counted = std::collections::BTreeMap::<(String, String), (u64, u64)>::new();
    for r in decisions.iter().filter(|r| !r["node"].is_empty()) {
        let c = counted.entry((r["limiter"].clone(), r["node"].clone())).or_default();
        if r["admitted"] == "1" {
            c.0 += 1;
        } else {
            c.1 += 1;
        }
    }
    let nodes = common::read_records(&out.join("nodes.csv"));
    assert_eq!(counted.len(), nodes.len());
    for n in &nodes {
        let expected = (n["admitted"].parse().unwrap(), n["rejected"].parse().unwrap());
        assert_eq!(counted[&(n["limiter"].clone(), n["node"].clone())], expected, "{n:?}");
    }
}

/// On local nodes a limiter's defaults follow the node's own limit
/// (`per_node`, here ceil(10 / 2) = 5), but a value the scenario writes is
/// used as written, even when it equals `[limit]`'s default: 30 requests at
/// one instant on 2 nodes (15 each) pass 5 per node for a default GCRA and
/// 10 per node for `burst = 10`; the same for the buckets. Guava's default
/// rate is the node's too: one request every 50 ms for 10 s (10 a second
/// per node) against 5 permits a second per node passes 50 per node.
#[test]
fn written_values_and_node_defaults_on_local_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let head = "[limit]\nrequests = 10\nwindow = \"1s\"\n[nodes]\ncount = 2\n";
    fs::write(dir.path().join("burst.csv"), format!("time\n{}", "0\n".repeat(30))).unwrap();
    let text = format!(
        "name = \"written\"\n{head}[[traffic]]\nkind = \"csv\"\npath = \"burst.csv\"\n\
         [[limiter]]\nkind = \"gcra\"\n[[limiter]]\nkind = \"gcra\"\nburst = [10, 11]\n\
         [[limiter]]\nkind = \"token_bucket\"\ncapacity = 10\n\
         [[limiter]]\nkind = \"token_bucket\"\nrefill = \"timer\"\nmax_tokens = 10\ntokens_per_fill = 10\n"
    );
    let out = common::run_scenario_text(dir.path(), "written.toml", &text, &["--no-charts"]);
    let admitted: Vec<(String, String)> = common::read_records(&out.join("summary.csv"))
        .into_iter()
        .map(|r| (r["limiter"].clone(), r["admitted"].clone()))
        .collect();
    let expected = [
        ("gcra", "10"),
        ("gcra(burst=10)", "20"),
        ("gcra(burst=11)", "22"),
        ("token_bucket(capacity=10)", "20"),
        ("token_bucket(timer;max_tokens=10;tokens_per_fill=10)", "20"),
        ("sliding_log", "10"),
    ];
    assert_eq!(admitted, expected.map(|(l, a)| (l.to_string(), a.to_string())));

    let times: String = (0..200).map(|i| format!("{}\n", i * 50)).collect();
    fs::write(dir.path().join("steady.csv"), format!("time\n{times}")).unwrap();
    let text = format!(
        "name = \"guava_nodes\"\n{head}[[traffic]]\nkind = \"csv\"\npath = \"steady.csv\"\ntime_unit = \"ms\"\n\
         [[limiter]]\nkind = \"guava\"\ntimeout = \"0s\"\n"
    );
    let out = common::run_scenario_text(dir.path(), "guava_nodes.toml", &text, &["--no-charts"]);
    let nodes = read(&out, "nodes.csv");
    assert!(
        nodes.contains("\nguava(timeout=0s),0,50,50,") && nodes.contains("\nguava(timeout=0s),1,50,50,"),
        "{nodes}"
    );
}

/// A delayed request reaches the backend later, and the node's figures,
/// like the lane's, judge it there: on one local node, a shaping limiter's
/// node peak is its lane's peak. 30 requests at one instant, L = 10 per
/// 1 s: the leaky queue releases one every 100 ms (peak 10, not the 30 it
/// admitted at 0); the GCRA waiting up to 5 s passes 10 at once and one
/// every 100 ms after (19 within 1 s).
#[test]
fn a_node_judges_delayed_requests_when_they_reach_the_backend() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("burst.csv"), format!("time\n{}", "0\n".repeat(30))).unwrap();
    let text = "name = \"shaping_node\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[nodes]\ncount = 1\n\
                [[traffic]]\nkind = \"csv\"\npath = \"burst.csv\"\n\
                [[limiter]]\nkind = \"leaky_queue\"\nqueue = 30\n\
                [[limiter]]\nkind = \"gcra\"\nmax_wait = \"5s\"\n";
    let out = common::run_scenario_text(dir.path(), "shaping_node.toml", text, &["--no-charts"]);
    let summary = common::read_records(&out.join("summary.csv"));
    let nodes = common::read_records(&out.join("nodes.csv"));
    assert_eq!(nodes.len(), 2);
    for (n, (limiter, peak)) in
        nodes.iter().zip([("leaky_queue(queue=30)", "10"), ("gcra(max_wait=5s)", "19")])
    {
        let lane = summary.iter().find(|r| r["limiter"] == limiter).unwrap();
        assert_eq!(
            (n["limiter"].as_str(), n["admitted"].as_str(), n["peak"].as_str()),
            (limiter, "30", peak)
        );
        assert_eq!((&lane["admitted"], &lane["peak"]), (&n["admitted"], &n["peak"]));
    }
}

/// While the store is down and fails closed nothing is admitted, so the
/// advertised retry time is the outage's end, or the end of the outage
/// that follows it at once: one request at 1.5 s, outages [1 s, 3 s) and
/// [3 s, 4 s), both closed; a client that follows the header retries once,
/// at 4 s, and is admitted. In central mode (the fixed window and the
/// GCRA) and in sync mode (the fixed window and a slot counter, whose
/// counts would admit at 1.5 s and so advertise nothing of their own).
#[test]
fn a_store_down_advertises_the_end_of_its_outage() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("one.csv"), "time\n1.5\n").unwrap();
    for (mode, second) in [
        ("mode = \"central\"\nrtt = \"2ms\"", "kind = \"gcra\""),
        ("mode = \"sync\"\nsync_interval = \"100ms\"", "kind = \"slot_counter\"\nslots = [10]"),
    ] {
        let text = format!(
            "name = \"outage\"\n[limit]\nrequests = 5\nwindow = \"1s\"\n[nodes]\ncount = 2\n{mode}\n\
             [[nodes.outage]]\nstart = \"1s\"\nend = \"3s\"\nfail = \"closed\"\n\
             [[nodes.outage]]\nstart = \"3s\"\nend = \"4s\"\nfail = \"closed\"\n\
             [retry]\npolicy = \"retry_after\"\nmax_attempts = 5\n\
             [[traffic]]\nkind = \"csv\"\npath = \"one.csv\"\n\
             [[limiter]]\nkind = \"fixed_window\"\n[[limiter]]\n{second}\n"
        );
        let out =
            common::run_scenario_text(dir.path(), "outage.toml", &text, &["--no-charts", "--decisions"]);
        let decisions = common::read_records(&out.join("decisions.csv"));
        let on_nodes: Vec<_> = decisions.iter().filter(|r| r["limiter"] != "sliding_log").collect();
        assert_eq!(on_nodes.len(), 4, "{mode}: {decisions:?}");
        for r in on_nodes {
            let expected = if r["attempt"] == "1" { ("1.5", "0") } else { ("4", "1") };
            assert_eq!((r["time"].as_str(), r["admitted"].as_str()), expected, "{mode}: {r:?}");
        }
        for r in
            common::read_records(&out.join("summary.csv")).iter().filter(|r| r["limiter"] != "sliding_log")
        {
            assert_eq!((r["succeeded"].as_str(), r["early_retries"].as_str()), ("1", "0"), "{mode}: {r:?}");
        }
    }
}
