//! The clients inside one lane: after each decision they schedule what
//! follows (a retry, a closed client's next request) in the lane's own
//! event queue, with draws from the lane's own seeded stream, and they
//! count what happened to every logical request.

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::policy::{BUDGET_CAP, QUOTA_NO_RETRY_INCREMENT, QUOTA_RETRY_COST, RetryPolicy, TOKEN};
use super::report::{ClientReport, Logical};
use super::{Clients, ClosedSource};
use crate::engine::{Calendar, Decided, Reactor, Scheduled};
use crate::limiter::RetryAfter;
use crate::time::Nanos;

/// Bytes a lane's event queue holds per closed client or waiting retry:
/// a slot (its time and `ClientEvent`) and a link. The queue's buffers
/// double, so it holds up to twice this per event at its peak.
pub const CLIENT_EVENT_BYTES: u64 =
    (std::mem::size_of::<(u64, Scheduled<ClientEvent>)>() + std::mem::size_of::<u32>()) as u64;

/// Bytes a lane's event queue holds for `clients` closed clients' next
/// requests, before any retry: its buffers double as the clients join, to
/// the next power of two.
pub fn closed_queue_bytes(clients: u64) -> u64 {
    clients.max(4).next_power_of_two().saturating_mul(CLIENT_EVENT_BYTES)
}

/// What a lane schedules for its clients: a retry of a logical request, or
/// a closed client's next request. A retry carries everything the reactor
/// needs to decide what follows it, so taking it out of the lane's queue
/// reads no other table: with hundreds of thousands of retries waiting (a
/// long retry storm), a table indexed from the event missed the cache on
/// almost every attempt (`docs/performance.md`). Packed to 48 bytes: every
/// waiting retry and closed client holds one in the lane's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientEvent {
    /// The first attempt's time.
    first: Nanos,
    /// The wait before this attempt (decorrelated jitter grows from it).
    previous: Nanos,
    /// The time the limiter's Retry-After header gave at the reject, when
    /// `has_header`.
    header: Nanos,
    /// The logical request: `CLOSED | n` for a closed client's n-th, else
    /// the open-loop arrival's position.
    logical: u64,
    /// The attempt this is (2 or more), or `SEND` for a closed client's
    /// next logical request (numbered when it is decided).
    attempt: u32,
    /// The closed client (flat index), or `NO_CLIENT` for open sources.
    client: u32,
    /// Whose policy: open sources first, then closed ones.
    policy: u16,
    has_header: bool,
    /// Sent before the time the limiter advertised at the reject (before
    /// its header was rounded): it cannot be admitted unless other traffic
    /// has freed room, which in a window or a bucket it never does.
    too_early: bool,
}

const CLOSED: u64 = 1 << 63;
/// The ChaCha8 stream every lane's clients draw from (sources draw from
/// streams 0 to 2^32 - 1, the node balancer from 2^33).
pub const STREAM: u64 = 1 << 32;
/// `attempt` of a closed client's next request.
const SEND: u32 = 0;

/// A logical request as `ClientEvent::logical` holds it (numbers stay far
/// below 2^63: a run has at most 1e9 closed requests, and open arrivals are
/// counted in a u64 that would take centuries to reach it).
fn packed(logical: Logical) -> u64 {
    match logical {
        Logical::Open(n) => {
            debug_assert!(n & CLOSED == 0);
            n
        }
        Logical::Closed(n) => {
            debug_assert!(n & CLOSED == 0);
            CLOSED | n
        }
    }
}

impl ClientEvent {
    fn send(client: u32) -> ClientEvent {
        ClientEvent {
            first: Nanos::new(0),
            previous: Nanos::new(0),
            header: Nanos::new(0),
            logical: 0,
            attempt: SEND,
            client,
            policy: 0,
            has_header: false,
            too_early: false,
        }
    }

    fn logical(&self) -> Logical {
        match self.logical {
            n if n & CLOSED != 0 => Logical::Closed(n & !CLOSED),
            n => Logical::Open(n),
        }
    }
}

const NO_CLIENT: u32 = u32::MAX;
/// A gRPC throttle count not yet started (no count reaches it: at most
/// 1000 tokens, 10^6 thousandths).
const UNTOUCHED: u32 = u32::MAX;

/// A client's count in `open` (by key, for open-loop clients) or `closed`
/// (by closed client), set to `start` when first used.
fn started<'a>(
    open: &'a mut Vec<u32>,
    closed: &'a mut [u32],
    key: u32,
    client: u32,
    start: u32,
) -> &'a mut u32 {
    let count = if client == NO_CLIENT {
        let k = key as usize;
        if open.len() <= k {
            open.resize(k + 1, UNTOUCHED);
        }
        &mut open[k]
    } else {
        &mut closed[client as usize]
    };
    if *count == UNTOUCHED {
        *count = start;
    }
    count
}

/// Outcomes of open-loop logical requests, handed out in arrival order as
/// soon as every earlier one is final.
#[derive(Default)]
struct Outcomes {
    /// The arrival position of `states[0]`.
    next: u64,
    /// 0: pending, 1: succeeded, 2: did not.
    states: VecDeque<u8>,
}

impl Outcomes {
    fn start(&mut self, seq: u64) {
        debug_assert_eq!(seq, self.next + self.states.len() as u64, "arrivals come in order");
        self.states.push_back(0);
    }

    fn finish(&mut self, seq: u64, succeeded: bool) {
        self.states[(seq - self.next) as usize] = if succeeded { 1 } else { 2 };
    }

    fn drain(&mut self, into: &mut Vec<bool>) {
        while let Some(&s) = self.states.front()
            && s != 0
        {
            into.push(s == 1);
            self.states.pop_front();
            self.next += 1;
        }
    }
}

/// A lane's clients.
pub struct ClientReactor {
    rng: ChaCha8Rng,
    /// Open sources' policies, then closed sources'.
    policies: Vec<RetryPolicy>,
    open: usize,
    closed: Vec<ClosedSource>,
    /// The first flat client index of each closed source.
    first_client: Vec<u32>,
    /// How this lane's limiter rounds its Retry-After header.
    header: RetryAfter,
    /// Retry tokens in thousandths: open-loop clients by key id, closed
    /// clients by index.
    open_budget: Vec<u32>,
    closed_budget: Vec<u32>,
    /// gRPC retry-throttling token counts in thousandths, as the budgets;
    /// [`UNTOUCHED`] until a client's first attempt is decided (then its
    /// policy's `max_tokens`, where gRPC starts the count).
    open_throttle: Vec<u32>,
    closed_throttle: Vec<u32>,
    /// AWS retry quotas' available capacity, as the throttle counts
    /// ([`UNTOUCHED`] until first used, then the policy's `retry_quota`).
    open_quota: Vec<u32>,
    closed_quota: Vec<u32>,
    next_closed: u64,
    /// Events this reactor has scheduled and the lane has not decided yet:
    /// the lane's queue length, less the delayed requests a shaping limiter
    /// holds there.
    pending: u64,
    /// Retries in the lane's queue.
    waiting_retries: u64,
    outcomes: Outcomes,
    report: ClientReport,
}

impl ClientReactor {
    /// The clients of a lane whose limiter rounds its header so. Every
    /// lane's clients draw from a generator of their own, all started at
    /// the same point (ChaCha8 stream `2^32` of the scenario seed): common
    /// random numbers, so that two lanes whose limiters decide alike make
    /// the same draws and end with the same figures, and a lane's figures
    /// do not depend on where its limiter is listed.
    pub fn new(clients: &Clients, header: RetryAfter) -> ClientReactor {
        let mut rng = ChaCha8Rng::seed_from_u64(clients.seed);
        rng.set_stream(STREAM);
        let mut policies = clients.open.clone();
        policies.extend(clients.closed.iter().map(|c| c.retry));
        let policies_throttle = clients.closed.iter().any(|c| c.retry.throttle.is_some());
        let policies_quota = clients.closed.iter().any(|c| c.retry.retry_quota.is_some());
        let mut first_client = Vec::new();
        let mut n = 0u32;
        for c in &clients.closed {
            first_client.push(n);
            n += c.clients as u32;
        }
        ClientReactor {
            rng,
            policies,
            open: clients.open.len(),
            closed: clients.closed.clone(),
            first_client,
            header,
            open_budget: Vec::new(),
            closed_budget: vec![0; n as usize],
            open_throttle: Vec::new(),
            closed_throttle: if policies_throttle { vec![UNTOUCHED; n as usize] } else { Vec::new() },
            open_quota: Vec::new(),
            closed_quota: if policies_quota { vec![UNTOUCHED; n as usize] } else { Vec::new() },
            next_closed: 0,
            pending: 0,
            waiting_retries: 0,
            outcomes: Outcomes::default(),
            report: ClientReport::new(),
        }
    }

    /// An exponential think time of mean `mean`, in whole ns.
    fn think(&mut self, mean: Nanos) -> u64 {
        let e = crate::random::exp1(&mut self.rng);
        (e * mean.get() as f64 + 0.5) as u64
    }

    /// The closed source a flat client index belongs to.
    fn source_of(&self, client: u32) -> usize {
        self.first_client.partition_point(|&f| f <= client) - 1
    }

    /// Puts an event in the lane's queue and counts it.
    fn schedule(&mut self, at: Nanos, event: Scheduled<ClientEvent>, queue: &mut Calendar<'_, ClientEvent>) {
        queue.schedule(at, event);
        self.pending += 1;
        self.report.peak_pending = self.report.peak_pending.max(self.pending);
    }

    /// Schedules closed client `client`'s next request after a think time,
    /// if it falls before its source's end.
    fn next_request(&mut self, client: u32, now: Nanos, queue: &mut Calendar<'_, ClientEvent>) {
        let s = self.source_of(client);
        let (think, end) = (self.closed[s].think, self.closed[s].end);
        let at = now.get().saturating_add(self.think(think));
        if at < end.get() {
            self.schedule(Nanos::new(at), Scheduled { key: 0, event: ClientEvent::send(client) }, queue);
        }
    }

    /// The retry budget of a client, if its policy has one.
    fn budget(&mut self, key: u32, client: u32) -> &mut u32 {
        started(&mut self.open_budget, &mut self.closed_budget, key, client, 0)
    }

    /// The gRPC throttle's token count of a client whose policy has one,
    /// started at its `max_tokens` when first used.
    fn throttle_count(&mut self, key: u32, client: u32, max_tokens: u32) -> &mut u32 {
        started(&mut self.open_throttle, &mut self.closed_throttle, key, client, max_tokens)
    }

    /// The AWS retry quota's available capacity of a client whose policy
    /// has one, started at its `retry_quota` when first used.
    fn quota(&mut self, key: u32, client: u32, capacity: u32) -> &mut u32 {
        started(&mut self.open_quota, &mut self.closed_quota, key, client, capacity)
    }

    /// A logical request has ended.
    fn end(
        &mut self,
        logical: Logical,
        client: u32,
        succeeded: bool,
        now: Nanos,
        queue: &mut Calendar<'_, ClientEvent>,
    ) {
        if let Logical::Open(seq) = logical {
            self.outcomes.finish(seq, succeeded);
        }
        if client != NO_CLIENT {
            self.next_request(client, now, queue);
        }
    }
}

impl Reactor for ClientReactor {
    type Event = ClientEvent;
    const WANTS_RETRY_AT: bool = true;

    fn start(&mut self, queue: &mut Calendar<'_, ClientEvent>) {
        for s in 0..self.closed.len() {
            let (start, clients) = (self.closed[s].start, self.closed[s].clients as u32);
            for c in 0..clients {
                self.next_request(self.first_client[s] + c, start, queue);
            }
        }
    }

    fn react(&mut self, d: &Decided<'_, ClientEvent>, queue: &mut Calendar<'_, ClientEvent>) {
        let now = d.time;
        if d.event.is_some() {
            self.pending -= 1;
        }
        let (logical, attempt, first, previous, policy, client) = match (d.event, d.arrival) {
            (Some(e), _) if e.attempt != SEND => {
                self.waiting_retries -= 1;
                self.report.retries += 1;
                // Arithmetic, not branches: refused or not is a coin toss.
                let refused = u64::from(!d.admitted);
                self.report.early_retries += refused & u64::from(e.has_header & (now >= e.header));
                self.report.too_early += refused & u64::from(e.too_early);
                (e.logical(), e.attempt, e.first, e.previous, e.policy as usize, e.client)
            }
            (Some(e), _) => {
                let logical = Logical::Closed(self.next_closed);
                self.next_closed += 1;
                self.report.logical += 1;
                let policy = self.open + self.source_of(e.client);
                (logical, 1, now, self.policies[policy].base, policy, e.client)
            }
            (None, arrival) => {
                let (seq, source) = arrival.expect("a decision is an arrival or an event");
                self.outcomes.start(seq);
                self.report.logical += 1;
                self.report.open_logical += 1;
                let policy = usize::from(source).min(self.open.saturating_sub(1));
                (Logical::Open(seq), 1, now, self.policies[policy].base, policy, NO_CLIENT)
            }
        };
        let p = self.policies[policy];
        if attempt == 1
            && let Some(ratio) = p.budget
        {
            let b = self.budget(d.key, client);
            *b = (*b + ratio).min(BUDGET_CAP);
        }
        // gRPC's throttle counts every attempt's outcome, a retry's as a
        // first attempt's, whether or not a retry could follow.
        let mut throttled = false;
        if let Some(t) = p.throttle {
            let count = self.throttle_count(d.key, client, t.max_tokens);
            if d.admitted {
                *count = t.on_admitted(*count);
            } else {
                let (left, may_retry) = t.on_rejected(*count);
                *count = left;
                throttled = !may_retry;
            }
        }
        if d.admitted
            && let Some(capacity) = p.retry_quota
        {
            // A success gives back what its last retry took, or 1 when it
            // did not retry (botocore's release_retry_quota).
            let back = if attempt > 1 { QUOTA_RETRY_COST } else { QUOTA_NO_RETRY_INCREMENT };
            let q = self.quota(d.key, client, capacity);
            *q = (*q + back).min(capacity);
        }
        if d.admitted {
            // A delayed request succeeds when it reaches the backend; one
            // that would reach it past the end of time never does, and
            // stays unfinished (its client with it).
            let Some(done) = now.checked_add(d.delay) else { return };
            self.report.record_success(done - first);
            return self.end(logical, client, true, done, queue);
        }
        let header = d.retry_at.and_then(|at| self.header.header(now, at));
        if d.retry_at.is_some()
            && header.is_none()
            && p.backoff == super::policy::Backoff::RetryAfter
            && attempt < p.max_attempts
            && !throttled
        {
            // The header, rounded up, points past the end of time: the retry
            // it asks for is never sent, and the request stays unfinished
            // (as below for a wait that would pass the end of time).
            return;
        }
        // A throttled client does not retry, and draws no wait.
        let mut wait = if throttled { None } else { p.wait(&mut self.rng, now, attempt, previous, header) };
        if wait.is_some() && p.budget.is_some() {
            // A retry spends a token; without one the client gives up.
            let b = self.budget(d.key, client);
            if *b >= TOKEN {
                *b -= TOKEN;
            } else {
                wait = None;
            }
        }
        if wait.is_some()
            && let Some(capacity) = p.retry_quota
        {
            // A retry takes 5 from the quota; with less the request gives up.
            let q = self.quota(d.key, client, capacity);
            if *q >= QUOTA_RETRY_COST {
                *q -= QUOTA_RETRY_COST;
            } else {
                wait = None;
            }
        }
        match wait {
            Some(wait) => {
                // A retry due past the end of time (u64::MAX ns, about 584
                // years) never happens: its request stays unfinished, as one
                // due at or after a run's `duration` does.
                let Some(at) = now.get().checked_add(wait.get()) else { return };
                let next = ClientEvent {
                    first,
                    previous: wait,
                    header: header.unwrap_or(Nanos::new(0)),
                    logical: packed(logical),
                    attempt: attempt + 1,
                    client,
                    policy: policy as u16,
                    has_header: header.is_some(),
                    // No advertised time reads as 0: never too early.
                    too_early: at < d.retry_at.map_or(0, Nanos::get),
                };
                self.waiting_retries += 1;
                self.schedule(Nanos::new(at), Scheduled { key: d.key, event: next }, queue);
            }
            None => {
                self.report.gave_up += 1;
                self.end(logical, client, false, now, queue);
            }
        }
    }

    fn attempt_of(&self, event: &ClientEvent) -> (u32, Option<Logical>) {
        match event.attempt {
            SEND => (1, Some(Logical::Closed(self.next_closed))),
            attempt => (attempt, Some(event.logical())),
        }
    }

    fn held(&self) -> (u64, u64) {
        // A waiting retry's state is its event in the lane's queue, which
        // the lane counts.
        let bytes = self.outcomes.states.capacity()
            + (self.open_budget.capacity()
                + self.closed_budget.capacity()
                + self.open_throttle.capacity()
                + self.closed_throttle.capacity()
                + self.open_quota.capacity()
                + self.closed_quota.capacity())
                * 4;
        (self.waiting_retries, bytes as u64)
    }

    fn take_outcomes(&mut self, into: &mut Vec<bool>) {
        self.outcomes.drain(into);
    }

    fn close(&mut self) {
        // Logical requests still waiting for a retry did not succeed.
        let r = &mut self.report;
        r.unfinished = r.logical - r.succeeded - r.gave_up;
        for s in self.outcomes.states.iter_mut() {
            if *s == 0 {
                *s = 2;
            }
        }
    }

    fn report(self) -> Option<ClientReport> {
        Some(self.report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every waiting retry holds one in the lane's queue: its state stays
    /// packed (see `ClientEvent`).
    #[test]
    fn a_client_event_is_48_bytes() {
        assert_eq!(std::mem::size_of::<ClientEvent>(), 48);
        // With its key, padded, its time and its link.
        assert_eq!(CLIENT_EVENT_BYTES, 68);
    }

    #[test]
    fn the_logical_request_survives_packing() {
        for logical in
            [Logical::Open(0), Logical::Open(123_456_789), Logical::Closed(0), Logical::Closed(999_999_999)]
        {
            let e = ClientEvent { logical: packed(logical), attempt: 2, ..ClientEvent::send(0) };
            assert_eq!(e.logical(), logical);
        }
    }
}
