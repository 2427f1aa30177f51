//! A test-only example algorithm (`kind = "example"`), registered by its one
//! line in the registry like any other. It admits every other request of an
//! aligned fixed window, up to L: a burst at one instant is admitted only in
//! part, so the burst-pair sweep may not scale a single request by L for it.

use serde::Deserialize;

use super::{Algorithm, Decision, Limit, Limiter, StateSize, Style};
use crate::scenario::{Entry, ScenarioError};
use crate::time::Nanos;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExampleSpec;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    #[allow(dead_code)]
    kind: serde::de::IgnoredAny,
}

impl Algorithm for ExampleSpec {
    type Limiter = EveryOther;
    const KIND: &'static str = "example";

    fn parse(entry: &Entry<'_>) -> Result<Vec<Self>, ScenarioError> {
        let _: Keys = entry.keys()?;
        Ok(vec![ExampleSpec])
    }

    fn label(&self) -> String {
        "example".into()
    }

    fn build(&self, limit: Limit) -> EveryOther {
        EveryOther {
            limit: limit.requests,
            window: limit.window.get(),
            index: u64::MAX,
            seen: 0,
            admitted: 0,
        }
    }

    fn style(&self) -> Style {
        Style { rgb: (0, 0, 255), line_width: 2, short: "example".into() }
    }
}

/// Within each aligned window: the 1st, 3rd, 5th ... request, while fewer
/// than L were admitted.
#[derive(Clone, Debug)]
pub struct EveryOther {
    limit: u64,
    window: u64,
    index: u64,
    seen: u64,
    admitted: u64,
}

impl Limiter for EveryOther {
    fn decide(&mut self, now: Nanos, _cost: u32) -> Decision {
        let k = now.get() / self.window;
        if k != self.index {
            (self.index, self.seen, self.admitted) = (k, 0, 0);
        }
        self.seen += 1;
        if self.seen % 2 == 1 && self.admitted < self.limit {
            self.admitted += 1;
            Decision::Admit
        } else {
            Decision::Reject
        }
    }

    fn peak_state(&self) -> StateSize {
        StateSize { entries: 3, bytes: 24 }
    }
}
