//! The Poisson source alone: draw arrivals from `ratesim::trace::Poisson`
//! (ChaCha8 + exponential gaps) with no engine, no limiters and no metrics.
//! The floor under every synthetic end-to-end case in `scripts/bench.sh`.
//!
//! `cargo run --release --example poisson_iter -- RATE_PER_S DURATION_S [SEED]`

use ratesim::time::Nanos;
use ratesim::trace::Poisson;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: poisson_iter RATE_PER_S DURATION_S [SEED]");
        std::process::exit(2);
    }
    let rate: f64 = args[1].parse().expect("RATE_PER_S is a number");
    let secs: u64 = args[2].parse().expect("DURATION_S is a whole number");
    let seed: u64 = args.get(3).map_or(1, |s| s.parse().expect("SEED is a whole number"));
    let mut n: u64 = 0;
    let mut last = 0;
    for a in Poisson::new(seed, 0, Nanos::ZERO, Nanos::from_secs(secs), rate) {
        n += 1;
        last = a.time.get();
    }
    println!("{n} arrivals, last at {last} ns");
}
