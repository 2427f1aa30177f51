//! Arrival traces built for a limit drawn first, so that their gaps hit the
//! limiter's own edges: exactly `W` (the exact window's edge: a request `W`
//! after another no longer sees it), `W - 1` and `W + 1`, and whatever
//! lengths the limiter under test turns on (slot widths, emission and fill
//! intervals), each with its neighbours.
//!
//! Included with `#[path = "common/edges.rs"] mod edges;` by the property
//! tests that need it. A strategy that drew `W` separately from a constant
//! `Just(1000)` gap met a pair exactly `W` apart in only about a fifth of
//! its cases; [`trace`] does in most (`properties.rs` measures it).
#![allow(dead_code)] // each test binary uses its own subset

use proptest::prelude::*;

/// `x - 1`, `x` and `x + 1` (without going below 0).
pub fn around(x: u64) -> [u64; 3] {
    [x.saturating_sub(1), x, x.saturating_add(1)]
}

/// The lengths around `W / n` when a window of `window` ns is cut into `n`
/// parts (slots, fill intervals): both roundings of `W / n` with their
/// neighbours.
pub fn parts(window: u64, n: u64) -> Vec<u64> {
    let n = n.max(1);
    let mut v = around(window / n).to_vec();
    v.extend(around(window.div_ceil(n)));
    v
}

/// Sorted arrival times from 0 for a limiter with window `window`: each gap
/// is short (up to `W / 4`, a dense stretch), 0 (several requests at one
/// instant), exactly `W`, `W - 1` or `W + 1`, one of `edges`, or long (up
/// to `3 W`). Up to `len - 1` arrivals.
pub fn trace(window: u64, edges: Vec<u64>, len: usize) -> impl Strategy<Value = Vec<u64>> {
    let mut edges = edges;
    edges.extend(around(window));
    edges.sort_unstable();
    edges.dedup();
    prop::collection::vec(
        prop_oneof![
            3 => 0..=window / 4,                  // dense
            1 => Just(0u64),                      // same instant
            1 => Just(window),                    // exactly W later
            1 => prop::sample::select(edges),     // W +- 1, slots, intervals
            1 => 0..=3 * window,                  // sparse
        ],
        0..len,
    )
    .prop_map(|gaps| {
        let mut t = 0u64;
        gaps.into_iter()
            .map(|g| {
                t += g;
                t
            })
            .collect()
    })
}

/// [`trace`] with a cost per arrival: mostly 1, sometimes up to `max_cost`.
pub fn costed(
    window: u64,
    edges: Vec<u64>,
    len: usize,
    max_cost: u32,
) -> impl Strategy<Value = Vec<(u64, u32)>> {
    trace(window, edges, len).prop_flat_map(move |ts| {
        let n = ts.len();
        let costs = prop::collection::vec(prop_oneof![3 => Just(1u32), 1 => 1..=max_cost], n);
        (Just(ts), costs).prop_map(|(ts, cs)| ts.into_iter().zip(cs).collect::<Vec<_>>())
    })
}

/// Whether some two of the (sorted) times lie exactly `window` apart.
pub fn has_pair_exactly(times: &[u64], window: u64) -> bool {
    times.iter().any(|&t| t.checked_add(window).is_some_and(|u| times.binary_search(&u).is_ok()))
}
