#!/usr/bin/env python3
"""Prints the criterion results of benches/limiters.rs, benches/csv_read.rs and
benches/engine.rs as Markdown tables: ns per decision or arrival (median) and
ratios to the baselines.

Usage: scripts/criterion_table.py [CRITERION_DIR]
(default: $CARGO_TARGET_DIR/criterion or target/criterion)
"""
import json
import os
import sys
from pathlib import Path


def load(root):
    """{(group, function_id, value_str): ns per element (median)}"""
    out = {}
    for bj in root.glob("*/**/new/benchmark.json"):
        b = json.loads(bj.read_text())
        est = json.loads((bj.parent / "estimates.json").read_text())
        elems = (b.get("throughput") or {}).get("Elements") or 1
        key = (b["group_id"], b["function_id"], b.get("value_str") or "")
        out[key] = est["median"]["point_estimate"] / elems
    return out


def fmt(v):
    return "—" if v is None else (f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 100 else f"{v:.0f}")


def ratio(a, b):
    return "—" if a is None or b is None else f"{a / b:.2f}x"


def limiters_table(r):
    rows = [("fixed_window", "fixed_window", "")]
    rows += [(f"slot_counter N={n:,}", "slot_counter", str(n)) for n in (10, 100, 1000, 10000, 100000)]
    rows += [("sliding_log", "sliding_log", "")]
    groups = ("dense", "sparse")
    print("ns per decision (criterion median; lower is better)\n")
    head = "| limiter |"
    for g in groups:
        head += f" {g}: lib | {g}: bare | {g}: lib/bare | {g}: naive (sums N) |"
    print(head)
    print("|---|" + "---:|" * 4 * len(groups))
    for label, algo, n in rows:
        line = f"| {label} |"
        for g in groups:
            lib = r.get((g, f"lib/{algo}", n))
            bare = r.get((g, f"bare/{algo}", n))
            naive = r.get((g, f"naive/{algo}", n)) if algo == "slot_counter" else None
            line += f" {fmt(lib)} | {fmt(bare)} | {ratio(lib, bare)} | {fmt(naive)} |"
        print(line)
    print()
    for g in groups:
        lo = r.get((g, "lib/slot_counter", "10"))
        hi = r.get((g, "lib/slot_counter", "100000"))
        print(f"- {g}: slot_counter N=100,000 / N=10 = {ratio(hi, lo)} (target <= 1.3x)")
    print()


def csv_table(r):
    bare = r.get(("csv_read", "bare_csv_byte_record", ""))
    trace = r.get(("csv_read", "ratesim_csv_trace", ""))
    parse = r.get(("csv_read", "bare_csv_plus_minimal_parse", ""))
    if bare is None and trace is None:
        return
    print("CSV read, ns per row (criterion median, 200 000-row file in page cache)\n")
    print("| reader | ns/row | rows/s | vs bare |")
    print("|---|---:|---:|---:|")
    for name, v in (
        ("bare csv crate (ByteRecord)", bare),
        ("bare + minimal decimal-seconds parse", parse),
        ("ratesim CsvTrace", trace),
    ):
        rate = "—" if v is None else f"{1e9 / v / 1e6:.1f} M"
        print(f"| {name} | {fmt(v)} | {rate} | {ratio(v, bare)} |")
    print()


def engine_table(r):
    cases = ("log_only", "fixed+log", "n2+log", "n100+log", "five")
    got = {c: r.get(("engine_1_thread", c, "")) for c in cases}
    if all(v is None for v in got.values()):
        return
    base = got["log_only"]
    print("Engine lanes on one thread, ns per arrival (criterion median, 1M in-memory Poisson")
    print("arrivals at 1.5x the limit; every case carries the sliding-log reference)\n")
    print("| case | ns/arrival | minus log_only (the added lanes) |")
    print("|---|---:|---:|")
    for c in cases:
        v = got[c]
        extra = "—" if v is None or base is None or c == "log_only" else fmt(v - base)
        print(f"| {c} | {fmt(v)} | {extra} |")
    print()


def main():
    if len(sys.argv) > 1:
        root = Path(sys.argv[1])
    else:
        root = Path(os.environ.get("CARGO_TARGET_DIR", "target")) / "criterion"
    r = load(root)
    if not r:
        sys.exit(f"no criterion results under {root}: run `cargo bench` first")
    limiters_table(r)
    csv_table(r)
    engine_table(r)


if __name__ == "__main__":
    main()
