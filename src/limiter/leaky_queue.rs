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
        let leaves = start.div_ceil(self.rate).min(u128::from(u64::MAX)) as u64;
        if leaves <= t {
            return Decision::Admit;
        }
        self.waiting.push_back(leaves);
        self.peak = self.peak.max(self.waiting.len());
        Decision::Delay(Nanos::new(leaves - t))
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
}
