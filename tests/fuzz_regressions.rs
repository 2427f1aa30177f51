//! Inputs that once panicked or could have (found by fuzzing or by the audit
//! for panics on user input), kept as regression tests. Each must give a
//! result or a located error, never a panic.

use std::collections::BTreeSet;
use std::path::Path;

use ratesim::engine::RunReport;
use ratesim::scenario::Scenario;
use ratesim::time::Nanos;

// The `run_trace` fuzz target's setup and checks, the one copy the target
// includes too: an input it saves replays here as it ran.
#[path = "common/run_trace.rs"]
mod run_trace;

// The `run_scenario` fuzz target's bounds and checks, likewise.
#[path = "common/run_scenario.rs"]
mod run_scenario;

/// The 4 bytes of a `run_trace` input that pick L, W (ns), the slots and
/// the trace's unit (`run_trace.rs` says which bits do what).
fn head(requests: u64, window: u64, slots: u64, seconds: bool) -> [u8; 4] {
    assert!((1..=8).contains(&requests) && (1..=65_536).contains(&window) && (1..=16).contains(&slots));
    let [w0, w1] = u16::try_from(window - 1).unwrap().to_le_bytes();
    [requests as u8 - 1, w0, w1, (slots as u8 - 1) | if seconds { 0x80 } else { 0 }]
}

/// Runs `csv` through the `run_trace` target with the head given: every
/// limiter, and the target's checks.
fn run_trace(csv: &str, head: [u8; 4]) -> RunReport {
    let data = [&head[..], csv.as_bytes()].concat();
    run_trace::run(&data).expect("a good trace runs")
}

/// Audit: the run's end was `last + 1`, the first-request window `start + W`
/// and the slot counter's `slot + N` and `k + 1`: all overflowed (a panic in
/// debug builds) for a timestamp at the end of time.
#[test]
fn timestamps_at_the_end_of_time() {
    let max = u64::MAX;
    let csv = format!("time\n{}\n{}\n{max}\n{max}\n", max - 20, max - 3);
    let r = run_trace(&csv, head(1, 10, 10, false));
    assert_eq!(r.arrivals, 4);
    assert_eq!(r.end, Nanos::MAX);
    assert_eq!(r.last_arrival, Some(Nanos::MAX));
    let log = &r.limiters[r.reference].counts;
    // (max-20) admitted, (max-3) admitted, both at max see max-3 in their window.
    assert_eq!((log.admitted, log.rejected, log.peak, log.excess), (2, 2, 1, 0));
    // The same in decimal seconds: 18446744073.709551615 s is u64::MAX ns.
    let r = run_trace("time\n18446744073.709551615\n", head(1, 7, 7, true));
    assert_eq!(r.last_arrival, Some(Nanos::MAX));
}

/// Audit: `load` is checked finite, but `load * L / W` overflowed to an
/// infinite rate and `Constant::new` asserted.
#[test]
fn load_whose_rate_overflows_is_an_error_not_a_panic() {
    let text = "name = \"x\"\nduration = \"1s\"\n[limit]\nrequests = 9223372036854775807\nwindow = \"1ns\"\n\
                [[traffic]]\nkind = \"constant\"\nload = 1e300\n";
    let e = Scenario::parse(text, Path::new("s.toml")).unwrap_err().to_string();
    assert!(e.starts_with("s.toml:8:8: `traffic[0].load` gives a rate of inf requests/s"), "{e}");
}

/// Audit: error positions were computed by slicing the text at a byte offset,
/// which panics inside a multi-byte character.
#[test]
fn errors_next_to_multibyte_text() {
    let text = "name = \"é\"\n[limit]\nrequests = \"ü\"\nwindow = \"1s\"\n";
    let e = Scenario::parse(text, Path::new("s.toml")).unwrap_err().to_string();
    assert!(
        e.starts_with("s.toml:3:12: `limit.requests`: expected a whole number, found the string \"ü\""),
        "{e}"
    );
    let text = "name = \"x\"\n[limit]\nrequests = 1\nwindow = \"1 ßß\"\n";
    let e = Scenario::parse(text, Path::new("s.toml")).unwrap_err().to_string();
    assert!(e.contains("s.toml:4:10:") && e.contains("unknown unit `ßß`"), "{e}");
}

/// Found by `run_trace` (with the dictionary) in 40 s when the dropped-arrival
/// bug was put back on purpose: one row at 18446744073.7095516150 s, which is
/// u64::MAX ns, with NUL bytes and extra columns around it.
#[test]
fn fuzz_input_with_a_row_at_the_end_of_time() {
    let data = b"\x03\xe8\x03\x84id,time,pat\x00\x00\x00\x00\x00\x00\x00\x00\x00;\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00h\x0a0,18446744073.7095516150,5\x00\x00\xfc\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00\x000";
    let r = run_trace::run(data).expect("a good trace runs");
    assert_eq!(r.arrivals, 1);
}

/// The `run_trace` checks on traces made to reach them: bursts at one
/// instant, gaps around the window, client keys, and rows near the end of
/// time, under heads drawn over every bit (a fixed seed, so a failure
/// replays; the input is printed).
#[test]
fn run_trace_checks_hold_on_generated_traces() {
    let mut seed = 0x5eed_u64;
    let mut next = move || {
        // splitmix64
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut keyed = 0;
    for _ in 0..300 {
        let mut head: [u8; 4] = next().to_le_bytes()[..4].try_into().unwrap();
        // Whole nanoseconds, windows up to 64 ns: many windows per trace.
        head[3] &= !0x80;
        head[2] = 0;
        head[1] &= 0x3f;
        let window = u64::from(head[1]) + 1;
        let mut t = if next() % 4 == 0 { u64::MAX - 3 * window } else { 0 };
        let mut csv = String::from("time,key\n");
        for _ in 0..next() % 60 {
            t = t.saturating_add(match next() % 4 {
                0 => 0,
                1 => window,
                _ => next() % (2 * window),
            });
            csv.push_str(&format!("{t},{}\n", next() % 3));
        }
        keyed += usize::from(head[3] & 0x20 != 0);
        let data = [&head[..], csv.as_bytes()].concat();
        let run = std::panic::catch_unwind(|| run_trace::run(&data));
        assert!(run.is_ok(), "input: {data:?}");
    }
    assert!(keyed > 100, "{keyed} keyed runs");
}

/// fuzz/dict/scenario.dict names every key the scenario parser takes and
/// every value of a key that takes names. The lists are the parser's own:
/// the messages for a key or a value it does not know, so a key added to
/// the parser and not to the dictionary fails here.
/// The `run_scenario` target's seeds (the shipped scenarios made small by
/// fuzz/seeds/README.md's recipe) and the inputs it saved that once
/// failed: each passes, asks for little enough work to run, and keeps the
/// target's checks. A seed that stopped running would leave the fuzzer
/// starting from nothing.
#[test]
fn run_scenario_seeds_and_saved_inputs_run_and_keep_the_checks() {
    let mut ran = 0;
    for dir in ["fuzz/seeds/run_scenario", "tests/fuzz_inputs/run_scenario"] {
        let Ok(entries) = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(run_scenario::run(&text).is_some(), "{} does not run", path.display());
            ran += 1;
        }
    }
    assert!(ran >= 17, "{ran} inputs");
}

#[test]
fn scenario_dictionary_has_every_key_and_value() {
    let dict: BTreeSet<String> = include_str!("../fuzz/dict/scenario.dict")
        .lines()
        .filter(|l| l.starts_with('"'))
        .map(|l| unescape(l.trim().trim_matches('"')))
        .collect();
    const BASE: &str = "name = \"t\"\nduration = \"2s\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n\
                        [[traffic]]\nkind = \"burst\"\ncount = 1\n[[limiter]]\nkind = \"slot_counter\"\nslots = 2\n";
    let burst = "kind = \"burst\"\ncount = 1";
    let slots = "kind = \"slot_counter\"\nslots = 2";
    let message =
        |text: String| Scenario::parse(&text, Path::new("s.toml")).map(|_| ()).unwrap_err().to_string();
    let after = |text: String| BASE.to_string() + &text;
    let nodes = "[nodes]\ncount = 2\nmode = \"central\"\nrtt = \"1ms\"\n";
    // Keys: each table with a key it does not take.
    let mut keys = vec!["kind".to_string()];
    let mut unknown_key = vec![
        format!("zzz = 1\n{BASE}"),
        BASE.replace("requests = 10", "requests = 10\nzzz = 1"),
        after("[output]\nzzz = 1\n".into()),
        after("[sweep]\nzzz = 1\n".into()),
        after("[retry]\nzzz = 1\n".into()),
        after("[nodes]\nzzz = 1\n".into()),
        after(format!("{nodes}[[nodes.outage]]\nzzz = 1\n")),
        after("[nodes]\ncount = 2\nbalance = { zzz = 1 }\n".into()),
    ];
    let traffic_kinds = quoted_after(&message(BASE.replace(burst, "kind = \"zzz\"")), "expected one of");
    let limiter_kinds = quoted_after(&message(BASE.replace(slots, "kind = \"zzz\"")), "expected one of");
    for k in &traffic_kinds {
        unknown_key.push(BASE.replace(burst, &format!("kind = \"{k}\"\nzzz = 1")));
    }
    for k in &limiter_kinds {
        unknown_key.push(BASE.replace(slots, &format!("kind = \"{k}\"\nzzz = 1")));
    }
    for text in unknown_key {
        let m = message(text);
        let listed = match m.split_once("(it takes: ") {
            Some((_, list)) => list.trim_end_matches(')').split(", ").map(str::to_string).collect(),
            None => quoted_after(&m, if m.contains("takes only") { "takes only" } else { "expected" }),
        };
        assert!(!listed.is_empty(), "no keys listed in {m}");
        keys.extend(listed);
    }
    // Values: each key that takes names with one it does not know.
    let mut values = [traffic_kinds, limiter_kinds].concat();
    let unknown_value = [
        BASE.replace(slots, "kind = \"fixed_window\"\nalign = \"zzz\""),
        BASE.replace(slots, "kind = \"token_bucket\"\nrefill = \"zzz\""),
        BASE.replace(slots, "kind = \"token_bucket\"\ninitial = \"zzz\""),
        BASE.replace(slots, "kind = \"weighted_window\"\nrounding = \"zzz\""),
        BASE.replace(slots, &format!("{slots}\nretry_after = \"zzz\"")),
        BASE.replace(burst, "kind = \"csv\"\npath = \"fuzz_regressions.rs\"\ntime_unit = \"zzz\""),
        after("[retry]\npolicy = \"zzz\"\n".into()),
        after("[nodes]\ncount = 2\nmode = \"zzz\"\n".into()),
        after("[nodes]\ncount = 2\nbalance = \"zzz\"\n".into()),
        after("[nodes]\ncount = 2\nper_node = \"zzz\"\n".into()),
        after(format!("{nodes}[[nodes.outage]]\nstart = \"0s\"\nend = \"1s\"\nfail = \"zzz\"\n")),
    ];
    for text in unknown_value {
        let m = message(text.replace("fuzz_regressions.rs", file!()));
        let listed = quoted_after(&m, if m.contains("expected") { "expected" } else { "must be" });
        assert!(!listed.is_empty(), "no values listed in {m}");
        values.extend(listed.into_iter().filter(|v| v != "zzz"));
    }
    // Micro is written three ways in `time_unit`, as in durations.
    values.extend(["\u{b5}s".to_string(), "\u{3bc}s".to_string()]);
    let missing: Vec<String> = keys
        .iter()
        .filter(|k| !dict.contains(*k))
        .cloned()
        .chain(values.iter().map(|v| format!("\"{v}\"")).filter(|v| !dict.contains(v)))
        .collect();
    assert!(missing.is_empty(), "not in fuzz/dict/scenario.dict: {missing:?}");
    assert!(keys.len() > 60 && values.len() > 35, "{} keys, {} values", keys.len(), values.len());
}

/// The words in `` ` `` or `"` after `marker` in `message`.
fn quoted_after(message: &str, marker: &str) -> Vec<String> {
    let (_, rest) = message.split_once(marker).unwrap_or_else(|| panic!("no {marker:?} in {message}"));
    let mut out = Vec::new();
    let mut parts = rest.split(['`', '"']);
    parts.next();
    while let Some(word) = parts.next() {
        if !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-') {
            out.push(word.to_string());
        }
        parts.next();
    }
    out
}

/// A dictionary entry's text: `\xNN` escapes are bytes.
fn unescape(entry: &str) -> String {
    let mut bytes = Vec::new();
    let mut rest = entry.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'\\' && tail.first() == Some(&b'x') && tail.len() >= 3 {
            let hex = std::str::from_utf8(&tail[1..3]).unwrap();
            bytes.push(u8::from_str_radix(hex, 16).unwrap());
            rest = &tail[3..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).unwrap()
}
