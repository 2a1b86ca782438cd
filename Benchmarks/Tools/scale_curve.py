#!/usr/bin/env python3
"""The scale curve of #42: per-operation costs of W1, W2, W3, W4, W8 and M1 against N.

usage: scale_curve.py SCALE_DIR OUT.md N [N ...]

SCALE_DIR/<N>/ holds the package-benchmark export of one `Scripts/bench.sh` run at BENCH_N = N
(`Scripts/scale-curve.sh` makes them). Prints and writes a Markdown table: for each workload
and N, ours and SQLite per operation (a lookup, a query, a trip inserted, scanned or opened,
a trip held), their ratio, and ours at each N against ours at the N before (the growth that
#42's goals bound: lookups and range queries at 10M ≤ 1.3× at 1M; insert and open linear,
so their per-trip cost flat; M1's ratio holding).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_results import fmt_bytes, fmt_time, load  # noqa: E402

# (id, what one operation is, divisor of the measured value: "n" for N, else a count, metric, unit)
WORKLOADS = [
    ("W1", "a trip inserted (`save()` of N)", "n", "wallClock", "time"),
    ("W2", "a unique-key lookup", 10_000, "wallClock", "time"),
    ("W3", "a range query (sorted, limit 50)", 1_000, "wallClock", "time"),
    ("W4 count", "a trip scanned (`fetchCount`)", "n", "wallClock", "time"),
    ("W4 fetch", "a trip scanned (`fetch`)", "n", "wallClock", "time"),
    ("W8", "a trip opened (open + `fetchCount`)", "n", "wallClock", "time"),
    ("M1", "a trip held (RSS growth)", "n", "rssPeakGrowth", "bytes"),
]


def per_op(values, name, metric, divisor, n):
    value = values.get((name, metric))
    if value is None:
        return None
    return value / (n if divisor == "n" else divisor)


def fmt(value, unit):
    if value is None:
        return "—"
    if unit == "bytes":
        return f"{value:.0f} B" if value < 10_000 else fmt_bytes(value)
    # (A scan's cost per trip is a few nanoseconds: fmt_time would round it to whole ones.)
    return f"{value:.2g} ns" if value < 100 else fmt_time(value)


def main():
    scale_dir, out = sys.argv[1], sys.argv[2]
    sizes = [int(n) for n in sys.argv[3:]]
    runs = {n: load(os.path.join(scale_dir, str(n))) for n in sizes}
    lines = [
        "| workload | one operation | N | ours | SQLite | ours / SQLite | ours / ours at the N before |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for wid, what, divisor, metric, unit in WORKLOADS:
        before = None
        for n in sizes:
            ours = per_op(runs[n], f"{wid} ours", metric, divisor, n)
            peer = per_op(runs[n], f"{wid} sqlite", metric, divisor, n)
            ratio = f"{ours / peer:.2f}" if ours is not None and peer else "—"
            growth = f"{ours / before:.2f}×" if ours is not None and before else "—"
            lines.append(f"| {wid} | {what} | {n:,} | {fmt(ours, unit)} | {fmt(peer, unit)} | {ratio} | {growth} |")
            before = ours
    table = "\n".join(lines)
    print(table)
    with open(out, "w") as f:
        f.write(table + "\n")


if __name__ == "__main__":
    main()
