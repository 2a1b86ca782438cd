#!/usr/bin/env bash
# Runs OpenSwiftData's benchmark suite (the Benchmarks/ package: package-benchmark, GRDB as
# the SQLite peer) and writes the results table. See Docs/Benchmarking.md.
#
#   Scripts/bench.sh              full run, N = 1,000,000 trips (override with BENCH_N);
#                                 writes Docs/BenchmarkResults.md, and the README's table
#                                 between <!-- benchmark-results:begin/end --> when present
#   Scripts/bench.sh --quick      smoke run, N = 10,000, W7 and W12 with 250 saves, W11 64 x 20 (CI): builds and
#                                 runs every workload, checks results, asserts no times; writes
#                                 Benchmarks/.build/BenchmarkResults-quick.md (never the README
#                                 or Docs/BenchmarkResults.md)
#   --filter REGEX                only the benchmarks matching REGEX (the whole name, e.g. 'W2 .*'); the table
#                                 then goes to Benchmarks/.build/BenchmarkResults-partial.md
#
# Fails only if the build fails or a workload throws (each checks its own result).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

quick=0
filter=()
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --filter) filter=(--filter "$2"); shift ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

if [ "$quick" = 1 ]; then
    export BENCH_N=10000
    export BENCH_W7_SAVES=250
    export BENCH_W11_SAVES=20
    out="$root/Benchmarks/.build/BenchmarkResults-quick.md"
    readme=()
else
    export BENCH_N="${BENCH_N:-1000000}"
    out="$root/Docs/BenchmarkResults.md"
    readme=(--readme "$root/README.md")
fi
if [ ${#filter[@]} -gt 0 ]; then
    out="$root/Benchmarks/.build/BenchmarkResults-partial.md"
    readme=()
fi
n=$((BENCH_N))
n_w6=${BENCH_N_W6:-$(( n < 100000 ? n : 100000 ))}
per_writer=$(( n / 10 )); (( per_writer < 1000 )) && per_writer=1000; (( per_writer > 50000 )) && per_writer=50000
# W7's saves per benchmark; when N != 10,000 the run also measures "W7 10k ours" (W7's
# second goal compares our save at N with ours at 10,000).
export BENCH_W7_SAVES="${BENCH_W7_SAVES:-1000}"
w7_saves=$((BENCH_W7_SAVES))

export_dir="$root/Benchmarks/.build/bench-export"
rm -rf "$export_dir"
mkdir -p "$export_dir"

echo "bench.sh: N = $n, W6 N = $n_w6, W7 $w7_saves saves, W10 8 x $per_writer; results -> ${out#$root/}"
start=$SECONDS
# --time-units nanoseconds: the export then holds ns and bytes, unrounded.
log="$root/Benchmarks/.build/bench-run.log"
swift package --package-path Benchmarks --allow-writing-to-package-directory benchmark run \
    --no-progress --format histogramPercentiles --time-units nanoseconds --path "$export_dir" \
    ${filter[@]+"${filter[@]}"} 2>&1 | tee "$log"
elapsed=$((SECONDS - start))
# package-benchmark exits 0 when a benchmark throws; each workload checks its own result
# and throws on a wrong one, so look for its report.
failed=0
if grep -E "^Benchmark .* failed with" "$log"; then failed=1; fi

quick_flag=()
[ "$quick" = 1 ] && quick_flag=(--quick)
results_rc=0
python3 "$root/Benchmarks/Tools/bench_results.py" "$export_dir" "$out" \
    --n "$n" --n-w6 "$n_w6" --per-writer "$per_writer" --w7-saves "$w7_saves" --elapsed "$elapsed" \
    ${quick_flag[@]+"${quick_flag[@]}"} ${readme[@]+"${readme[@]}"} \
    $([ ${#filter[@]} -eq 0 ] && echo --require-all) || results_rc=$?
echo "bench.sh: wrote ${out#$root/} (${elapsed}s)"
if [ "$failed" = 1 ] || [ "$results_rc" != 0 ]; then
    echo "bench.sh: a workload failed or produced no result (see above)" >&2
    exit 1
fi
