#!/usr/bin/env python3
"""Turns package-benchmark's `histogramPercentiles` export into the results table.

Usage: bench_results.py EXPORT_DIR OUTPUT.md --n N --n-w6 N6 --per-writer P [--quick]
                        [--elapsed SECONDS] [--readme README.md]

EXPORT_DIR holds one TSV per benchmark and metric, named
`<baseline>.<target>.<benchmark name, spaces as _>.<metric>.histogram.percentiles.tsv`,
with a `Percentile<TAB><metric> <unit>` header and rows `0..100<TAB>value`; the run used
`--time-units nanoseconds`, so times are in ns and memory in bytes. We take p50.

Benchmarks are named "<workload> <role>", role in {ours, sqlite, limit}.
Goals are never asserted here: a missed goal is reported, not failed.
"""
import argparse
import datetime
import glob
import os
import platform
import re
import subprocess
import sys

# (workload id, description, goal text, ratio goal vs peer, ratio goal vs limit, metric)
WORKLOADS = [
    ("W1", "insert N trips, one `save()` (in memory)", "≤ 0.33", 0.33, None, "wallClock"),
    ("W2", "10,000 unique-key lookups, `fetchLimit = 1`", "≤ 0.2", 0.2, None, "wallClock"),
    ("W3", "1,000 range queries on `startDate`, sorted, `fetchLimit = 50`", "≤ 0.3", 0.3, None, "wallClock"),
    ("W4 count", "unindexed scan `price > p && isFavorite`, `fetchCount`", "≤ 0.33 of SQLite; ≤ 2× limit", 0.33, 2.0, "wallClock"),
    ("W4 fetch", "unindexed scan `price > p && isFavorite`, `fetch`", "≤ 0.33 of SQLite; ≤ 2× limit", 0.33, 2.0, "wallClock"),
    ("W5", "1,000 bounding-box queries on N points", "≤ 0.33", None, None, None),
    ("W6 walk", "fetch 1,000 trips and walk `bucketList`", "≤ 0.5", 0.5, None, "wallClock"),
    ("W6 delete", "cascade-delete 10,000 trips", "≤ 0.5", 0.5, None, "wallClock"),
    ("W7", "document: change 1 trip, `save()`; p50 of 1,000 saves", "≤ 1.0; p50 at 1M ≤ 1.5× p50 at 10k", None, None, None),
    ("W8", "open a document of N trips, then `fetchCount`", "≤ 0.5; file ≤ 0.5× SQLite's", None, None, None),
    ("W9", "full save / compaction of N trips", "≥ 50 % of zstd's throughput", None, None, None),
    ("W10", "8 `@ModelActor`s insert in saves of 1,000", "≤ 0.5", 0.5, None, "wallClock"),
    ("M1", "RSS growth holding N trips with the indexes", "≤ 1.0", 1.0, None, "rssPeakGrowth"),
]

PENDING = {
    "W5": "pending: the R-tree index has not landed (`.rtree` is declared but unused)",
    "W7": "pending: document persistence has not landed",
    "W8": "pending: document persistence has not landed",
    "W9": "pending: document save / compaction (zstd) has not landed",
}


def load(export_dir):
    """{(benchmark name, metric): p50 value}"""
    values = {}
    for path in glob.glob(os.path.join(export_dir, "*.histogram.percentiles.tsv")):
        parts = os.path.basename(path).split(".")
        if len(parts) < 6:
            continue
        name, metric = parts[2].replace("_", " "), parts[3]
        with open(path) as f:
            header = f.readline()
            scale = unit_scale(header)
            for line in f:
                cols = line.rstrip("\n").split("\t")
                if len(cols) == 2 and cols[0] == "50":
                    values[(name, metric)] = float(cols[1]) * scale
    return values


# The unit in a header such as "Time (wall clock) (ns) *" or "Memory (resident peak) (M) *":
# times are normalised to ns, counts and bytes to ones.
UNITS = {"ns": 1, "μs": 1e3, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9, "ks": 1e12,
         "K": 1e3, "M": 1e6, "G": 1e9, "#": 1}


def unit_scale(header):
    found = re.findall(r"\(([^()]+)\)", header)
    if found and found[-1] in UNITS:
        return UNITS[found[-1]]
    return 1


def fmt_time(ns):
    if ns is None:
        return "—"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}" if ns / scale < 100 else f"{ns / scale:.0f} {unit}"
    return f"{ns:.0f} ns"


def fmt_bytes(b):
    if b is None:
        return "—"
    return f"{b / 2**20:.0f} MiB" if b >= 10 * 2**20 else f"{b / 2**20:.1f} MiB"


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:
        return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("export_dir")
    ap.add_argument("output")
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--n-w6", type=int, required=True)
    ap.add_argument("--per-writer", type=int, required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--elapsed", type=float)
    ap.add_argument("--readme")
    ap.add_argument("--require-all", action="store_true",
                    help="exit 3 when a workload that is not pending has no result")
    args = ap.parse_args()

    values = load(args.export_dir)
    if not values:
        sys.exit(f"bench_results.py: no histogramPercentiles export found in {args.export_dir}")

    rows = []
    missing = []
    for wid, desc, goal, peer_goal, limit_goal, metric in WORKLOADS:
        if wid in PENDING:
            rows.append(f"| {wid} | {desc} | — | — | — | — | {goal} | {PENDING[wid]} | — |")
            continue
        ours = values.get((f"{wid} ours", metric))
        peer = values.get((f"{wid} sqlite", metric))
        limit = values.get((f"{wid} limit", metric))
        if ours is None and peer is None:
            missing.append(wid)
            rows.append(f"| {wid} | {desc} | — | — | — | — | {goal} | not run | — |")
            continue
        fmt = fmt_bytes if metric.startswith("rss") else fmt_time
        ratio = ours / peer if ours is not None and peer else None
        limit_ratio = ours / limit if ours is not None and limit else None
        met = None
        if ratio is not None and peer_goal is not None:
            met = ratio <= peer_goal
            if limit_goal is not None and limit_ratio is not None:
                met = met and limit_ratio <= limit_goal
        ratio_text = "—" if ratio is None else f"{ratio:.2f}"
        if limit_ratio is not None:
            ratio_text += f" ({limit_ratio:.1f}× limit)"
        met_text = "—" if met is None else ("yes" if met else "no")
        rss_ours = values.get((f"{wid} ours", "peakMemoryResident"))
        rss_peer = values.get((f"{wid} sqlite", "peakMemoryResident"))
        rss = f"{fmt_bytes(rss_ours)} / {fmt_bytes(rss_peer)}"
        if metric.startswith("rss"):
            held_ours = values.get((f"{wid} ours", "rssHeldGrowth"))
            held_peer = values.get((f"{wid} sqlite", "rssHeldGrowth"))
            desc += f" (peak growth; held after build: {fmt_bytes(held_ours)} ours, {fmt_bytes(held_peer)} SQLite)"
        rows.append(
            f"| {wid} | {desc} | {fmt(ours)} | {fmt(peer)} | {fmt(limit)} | {ratio_text} | {goal} | {met_text} | {rss} |")

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    mem = sh("awk '/MemTotal/ {printf \"%.1f GiB\", $2/1048576}' /proc/meminfo")
    commit = sh("git rev-parse --short HEAD")
    # Untracked files under Sources/ are compiled too, so they count.
    dirty = " (with uncommitted changes)" if sh("git status --porcelain -- Sources Package.swift") else ""
    swift = sh("swift --version 2>&1 | head -1")
    mode = "quick (CI smoke run; ratios at this N are indicative only, goals apply to the full run)" if args.quick else "full"
    elapsed = f", suite wall time {args.elapsed / 60:.1f} min" if args.elapsed else ""

    table = "\n".join([
        "| workload | what | ours | SQLite | limit | ratio ours/SQLite | goal | met? | peak RSS ours / SQLite |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *rows,
    ])
    header = "\n".join([
        f"- date: {now}; mode: {mode}{elapsed}",
        f"- N = {args.n:,} trips (W6: {args.n_w6:,} trips with 0–5 bucket-list items each; "
        f"W10: 8 writers × {args.per_writer:,})",
        f"- machine: `{platform.uname().system} {platform.uname().release} {platform.uname().machine}`, "
        f"{os.cpu_count()} cores (`nproc` {sh('nproc')}), {mem} RAM; `uname -a`: `{sh('uname -a')}`",
        f"- toolchain: {swift}; commit {commit}{dirty}",
    ])
    notes = "\n".join([
        "Times are package-benchmark p50 wall clock of one operation as named (W2: all 10,000 lookups; "
        "W3: all 1,000 queries; W4: one scan; W6: one walk of 1,000 trips / one delete of 10,000; "
        "W1, W10: the whole insert). The ratio is ours / SQLite (lower is better); the limit is a "
        "hand-written Swift loop over an array of structs. Peak RSS is the process's (data generator "
        "included). M1 compares RSS growth while building the store from the same rows. "
        "The SQLite peer (GRDB 7.10.0, system SQLite) uses prepared statements, explicit "
        "transactions, hand-written row mapping, REAL dates and the indexes the model declares "
        "(unique `name`, `destination`, `startDate`; foreign key + index for W6; W10 uses a WAL "
        "`DatabasePool` file with `synchronous = OFF`, matching our in-memory store's no-fsync). "
        "Neither side maintains an R-tree outside W5: the model declares `.rtree([\\.latitude, "
        "\\.longitude])`, which ours does not build yet, and the peer's R*Tree table belongs to W5 "
        "(pending).",
    ])
    body = f"{header}\n\n{table}\n\n{notes}\n"

    with open(args.output, "w") as f:
        f.write("# Benchmark results\n\n")
        f.write("Written by `Scripts/bench.sh`" + (" --quick" if args.quick else "") +
                "; see [Benchmarking.md](Benchmarking.md) for how to run, profile and compare.\n\n")
        f.write(body)

    if args.readme and os.path.exists(args.readme):
        text = open(args.readme).read()
        begin, end = "<!-- benchmark-results:begin -->", "<!-- benchmark-results:end -->"
        if begin in text and end in text:
            pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
            text = pattern.sub(lambda _: f"{begin}\n{body}{end}", text)
            open(args.readme, "w").write(text)
            print(f"bench_results.py: updated the table in {args.readme}")

    print(body)
    if missing:
        print(f"bench_results.py: no results for {', '.join(missing)}", file=sys.stderr)
        if args.require_all:
            sys.exit(3)


if __name__ == "__main__":
    main()
