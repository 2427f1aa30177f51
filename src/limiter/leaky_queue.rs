//! The leaky bucket as a queue (`leaky_queue`): requests wait in a FIFO of
//! at most `queue` places and leave it at the rate `L / W`, one every
//! `W / L` (a traffic shaper). A request finding the server idle goes at
//! once; one finding `queue` requests waiting is rejected.
//!
//! Departures are exact: in units of `1 / L` ns, a request that may start at
//! `s` occupies the server until `s + W`, and leaves at `ceil(s / L)` ns.

use std::collections::VecDeque;

use serde::Deserialize;
use toml::Spanned;

use super::{Algorithm, Decision, Limit, Limiter, StateSize, Style};
use crate::scenario::{Entry, ScenarioError, Whole};
use crate::time::Nanos;

/// The most places a queue may have.
pub const MAX_QUEUE: u64 = 100_000_000;

/// `kind = "leaky_queue"`: `queue = N` places (required).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeakyQueueSpec {
    pub queue: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    #[allow(dead_code)]
    kind: serde::de::IgnoredAny,
    queue: Option<Spanned<Whole>>,
}

impl Algorithm for LeakyQueueSpec {
    type Limiter = LeakyQueue;
    const KIND: &'static str = "leaky_queue";

    fn parse(entry: &Entry<'_>) -> Result<Vec<Self>, ScenarioError> {
        let keys: Keys = entry.keys()?;
        let q = keys.queue.as_ref().ok_or_else(|| {
            entry.at(
                entry.span(),
                format!(
                    "`{}` is required for kind \"leaky_queue\": how many requests may wait, like 10",
                    entry.key("queue")
                ),
            )
        })?;
        let queue = entry.at_least_one_whole("queue", q)?;
        if queue > i128::from(MAX_QUEUE) {
            return Err(entry.at(
                q.span(),
                format!("`{}` = {queue} is too large: at most {MAX_QUEUE} places", entry.key("queue")),
            ));
        }
        Ok(vec![LeakyQueueSpec { queue: queue as u64 }])
    }

    fn delays(&self) -> bool {
        true
    }

    fn queue_advice(&self, _limit: Limit) -> String {
        format!(
            "A leaky queue keeps at most `queue` = {} requests waiting per client key: lower `queue`, or run fewer \
client keys",
            self.queue
        )
    }

    fn label(&self) -> String {
        format!("leaky_queue(queue={})", self.queue)
    }

    fn build(&self, limit: Limit) -> LeakyQueue {
        LeakyQueue {
            rate: u128::from(limit.requests),
            window: u128::from(limit.window.get()),
            places: self.queue as usize,
            free: 0,
            waiting: VecDeque::new(),
            peak: 0,
        }
    }

    /// A full queue refuses until its first waiting request leaves.
    fn advertises_retry(&self) -> bool {
        true
    }

    fn style(&self) -> Style {
        // Blue: the brown it had was 45 apart from the GCRA that waits
        // (`max_wait`), which shapes beside it (`scenarios/shaping.toml`).
        Style { rgb: (31, 31, 204), line_width: 3, short: format!("leaky queue, {} places", self.queue) }
    }
}

#[derive(Clone, Debug)]
pub struct LeakyQueue {
    /// `L`: requests per window.
    rate: u128,
    window: u128,
    places: usize,
    /// When the server is free, in units of `1 / L` ns.
    free: u128,
    /// Departure times of the requests waiting, in order.
    waiting: VecDeque<u64>,
    peak: usize,
}

impl Limiter for LeakyQueue {
    fn decide(&mut self, now: Nanos, cost: u32) -> Decision {
        let t = now.get();
        while self.waiting.front().is_some_and(|&d| d <= t) {
            self.waiting.pop_front();
        }
        if self.waiting.len() >= self.places {
            return Decision::Reject;
        }
        // A request of cost c takes the server for c slots.
        let start = (u128::from(t) * self.rate).max(self.free);
        self.free = start + self.window * u128::from(cost.max(1));
        let leaves = start.div_ceil(self.rate);
        if leaves <= u128::from(t) {
            return Decision::Admit;
        }
        // A departure past the end of time (u64::MAX ns) is kept there: no
        // later arrival can see its place free. The delay is the true one
        // (the engine never releases a request due past u64::MAX).
        self.waiting.push_back(leaves.min(u128::from(u64::MAX)) as u64);
        self.peak = self.peak.max(self.waiting.len());
        Decision::Delay(Nanos::new((leaves - u128::from(t)).min(u128::from(u64::MAX)) as u64))
    }

    /// Called right after a refusal at `now`: the queue is full, and a
    /// place frees when its first request leaves (after `now`, since
    /// `decide` let every earlier one go).
    fn retry_at(&self, _now: Nanos, _cost: u32) -> Option<Nanos> {
        self.waiting.front().map(|&d| Nanos::new(d))
    }

    fn peak_state(&self) -> StateSize {
        // The next free time, and one departure time per place in use.
        let entries = 1 + self.peak as u64;
        StateSize { entries, bytes: 16 + 8 * self.peak as u64 }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn queue(requests: u64, window_ms: u64, places: u64) -> LeakyQueue {
        LeakyQueueSpec { queue: places }.build(Limit { requests, window: Nanos::from_millis(window_ms) })
    }

    fn ms(v: u64) -> Nanos {
        Nanos::from_millis(v)
    }

    /// 2 per second, 3 places: six at once: the first goes, three wait
    /// 500, 1000 and 1500 ms, the fifth and sixth find the queue full.
    #[test]
    fn a_burst_fills_the_queue() {
        let mut q = queue(2, 1000, 3);
        let got: Vec<Decision> = (0..6).map(|_| q.decide(ms(0), 1)).collect();
        assert_eq!(
            got,
            [
                Decision::Admit,
                Decision::Delay(ms(500)),
                Decision::Delay(ms(1000)),
                Decision::Delay(ms(1500)),
                Decision::Reject,
                Decision::Reject
            ]
        );
        assert_eq!(q.retry_at(ms(0), 1), Some(ms(500)));
        assert_eq!(q.decide(ms(500) - Nanos::new(1), 1), Decision::Reject);
        // At 500 ms one has left: a place is free; it leaves after the
        // others, at 2000 ms.
        assert_eq!(q.decide(ms(500), 1), Decision::Delay(ms(1500)));
        // Long after, the server is idle again.
        assert_eq!(q.decide(ms(10_000), 1), Decision::Admit);
    }

    /// W / L not a whole number of ns: 3 per 1000 ns leave at 0, 334, 667,
    /// 1000 (ceil of k * 1000 / 3).
    #[test]
    fn exact_departures() {
        let mut q = LeakyQueueSpec { queue: 10 }.build(Limit { requests: 3, window: Nanos::new(1000) });
        let delays: Vec<Nanos> = (0..4).map(|_| q.decide(Nanos::ZERO, 1).delay()).collect();
        assert_eq!(delays, [0, 334, 667, 1000].map(Nanos::new));
    }

    // ---- a brute-force oracle from the documented rule ------------------------

    /// The leaky queue from `docs/semantics.md` alone ("Shaping", leaky
    /// queue; the contract: a FIFO of `queue` places drained at `L / W`):
    /// a request is refused iff `queue` admitted requests are still waiting
    /// (their departure is after its arrival; one leaving at that instant has
    /// left); an admitted one starts at its arrival or when the request
    /// before it has had its slots, whichever is later, exactly; it reaches
    /// the backend at that start rounded up to a whole ns. A request of
    /// cost `c` takes `c` slots of `W / L` (the module's rule: the contract
    /// has no cost here, and every source ratesim ships sends 1). Lindley's recursion `s_k = max(t_k,
    /// s_(k-1) + c_(k-1) W / L)` is written out as its closed form, `s_k =
    /// max over admitted j <= k of t_j + (c_j + ... + c_(k-1)) W / L`, in
    /// exact integers of `1 / L` ns. Each request's departure, or `None`
    /// when refused.
    fn oracle(requests: u64, window: u64, places: usize, reqs: &[(u64, u32)]) -> Vec<Option<u64>> {
        let (l, w) = (u128::from(requests), u128::from(window));
        // (arrival, cost, departure) of every admitted request.
        let mut admitted: Vec<(u64, u32, u64)> = Vec::new();
        let mut out = Vec::new();
        for &(t, cost) in reqs {
            let waiting = admitted.iter().filter(|&&(_, _, d)| d > t).count();
            if waiting >= places {
                out.push(None);
                continue;
            }
            let mut start = u128::from(t) * l;
            let mut slots = 0u128;
            for &(tj, cj, _) in admitted.iter().rev() {
                slots += u128::from(cj);
                start = start.max(u128::from(tj) * l + slots * w);
            }
            let departure = u64::try_from(start.div_ceil(l)).unwrap();
            admitted.push((t, cost, departure));
            out.push(Some(departure));
        }
        out
    }

    /// Arrival times with gaps of none, up to `W / 2`, up to `2 W`, up to
    /// `10 W` and a few ns, and costs up to `max_cost`.
    fn trace(window: u64, max_cost: u32) -> impl Strategy<Value = Vec<(u64, u32)>> {
        prop::collection::vec(
            (
                prop_oneof![
                    3 => Just(0u64),
                    3 => 0..window / 2 + 1,
                    2 => 0..2 * window + 1,
                    1 => 0..10 * window,
                    1 => 0u64..5,
                ],
                prop_oneof![6 => Just(1u32), 1 => 1..=max_cost],
            ),
            0..150,
        )
        .prop_map(|steps| {
            let mut t = 0;
            steps
                .into_iter()
                .map(|(gap, cost)| {
                    t += gap;
                    (t, cost)
                })
                .collect()
        })
    }

    /// `(L, W ns, queue)`, and a trace for that window.
    fn case(max_cost: u32) -> impl Strategy<Value = ((u64, u64, u64), Vec<(u64, u32)>)> {
        (
            1u64..7,
            prop::sample::select(vec![1u64, 7, 999, 1000, 1001, 1_000_000_000]),
            prop_oneof![2 => 1u64..4, 1 => 4u64..20],
        )
            .prop_flat_map(move |shape| (Just(shape), trace(shape.1, max_cost)))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// The limiter agrees with the oracle on random traces (costs up to
        /// 3): refused or not, and the instant an admitted request reaches
        /// the backend (`Admit` exactly when that is its arrival). After a
        /// refusal the advertised retry time is the first departure still
        /// ahead.
        #[test]
        fn agrees_with_its_documented_rule(
            ((requests, window, places), reqs) in case(3),
        ) {
            let mut q = LeakyQueueSpec { queue: places }.build(Limit { requests, window: Nanos::new(window) });
            let want = oracle(requests, window, places as usize, &reqs);
            let mut departures: Vec<u64> = Vec::new();
            for (&(t, cost), want) in reqs.iter().zip(want) {
                let got = q.decide(Nanos::new(t), cost);
                match want {
                    None => {
                        prop_assert_eq!(got, Decision::Reject, "t = {}, cost {}", t, cost);
                        let next = departures.iter().copied().filter(|&d| d > t).min();
                        prop_assert_eq!(q.retry_at(Nanos::new(t), cost).map(Nanos::get), next, "t = {}", t);
                    }
                    Some(d) if d == t => prop_assert_eq!(got, Decision::Admit, "t = {}, cost {}", t, cost),
                    Some(d) => prop_assert_eq!(got, Decision::Delay(Nanos::new(d - t)), "t = {}, cost {}", t, cost),
                }
                departures.extend(want);
            }
        }

        /// What the queue sends on (cost 1) never has more than `L` requests
        /// in any exact window `(t - W, t]` of backend times: departures are
        /// at least `W / L` apart before rounding up, so `L + 1` of them
        /// span at least `W`.
        #[test]
        fn the_backend_sees_at_most_l_per_window(
            ((requests, window, places), reqs) in case(1),
        ) {
            let mut q = LeakyQueueSpec { queue: places }.build(Limit { requests, window: Nanos::new(window) });
            let mut backend: Vec<u64> = Vec::new();
            for &(t, _) in &reqs {
                let got = q.decide(Nanos::new(t), 1);
                if got.admitted() {
                    backend.push(t + got.delay().get());
                }
            }
            backend.sort_unstable();
            // A window ending at a backend time holds the most.
            for &end in &backend {
                let inside = backend.iter().filter(|&&b| b <= end && b + window > end).count();
                prop_assert!(inside as u64 <= requests, "{} in ({}, {}] with L = {}", inside, i128::from(end) - i128::from(window), end, requests);
            }
        }
    }
}
