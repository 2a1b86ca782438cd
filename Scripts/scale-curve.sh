#!/usr/bin/env bash
# The scale curve (#42): runs W1, W2, W3, W4, W8 and M1 at N = 100,000 and 1,000,000 (and
# 10,000,000 with --long: about 50 minutes on these machines, up to 2.3 GB a benchmark
# process, not for CI),
# keeps each run's export in Benchmarks/.build/scale/<N>/, and writes the per-operation
# costs against N to Benchmarks/.build/ScaleCurve.md (Benchmarks/Tools/scale_curve.py).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
sizes=(100000 1000000)
case "${1:-}" in
    --long) sizes+=(10000000) ;;
    "") ;;
    *) echo "usage: $0 [--long]" >&2; exit 2 ;;
esac
scale="$root/Benchmarks/.build/scale"
mkdir -p "$scale"
for n in "${sizes[@]}"; do
    echo "scale-curve.sh: N = $n"
    BENCH_N=$n bash Scripts/bench.sh --filter '(W1|W2|W3|W4 count|W4 fetch|W8|M1) (ours|sqlite)'
    rm -rf "${scale:?}/$n"
    cp -r "$root/Benchmarks/.build/bench-export" "$scale/$n"
done
python3 "$root/Benchmarks/Tools/scale_curve.py" "$scale" "$root/Benchmarks/.build/ScaleCurve.md" "${sizes[@]}"
echo "scale-curve.sh: wrote Benchmarks/.build/ScaleCurve.md"
