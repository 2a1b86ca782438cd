#!/usr/bin/env bash
# PostgresStore against hand-written postgres-nio (#43, 6(b)): builds
# Benchmarks/PostgresPeer (, release, in the core's build folder), starts a
# throwaway PostgreSQL (Scripts/postgres-test-server.sh) for each fsync setting, and
# runs the same inserts, unique-name lookups and price-range queries through both
# sides (ModelContainer/ModelContext over PostgresStore; PostgresClient with prepared
# statements), printing a table a setting with ours / postgres-nio. Not part of
# Scripts/bench.sh or CI: it needs PostgreSQL and takes a few minutes.
# Options: --fsync "on off" (the settings, in order; default on: durable, as the
# document store's figures are), and any of PostgresPeer's: --rows N (the table the
# reads run on, 100,000), --inserts N (5,000), --lookups N (2,000), --ranges N (500),
# --rounds N (5).
set -euo pipefail
cd "$(dirname "$0")/.."
FSYNC_SETTINGS="on"
PEER_OPTIONS=()
while [ $# -gt 0 ]; do
    case "$1" in
    --fsync) FSYNC_SETTINGS="$2"; shift 2 ;;
    --rows|--inserts|--lookups|--ranges|--rounds) PEER_OPTIONS+=("$1" "$2"); shift 2 ;;
    *) echo "usage: $0 [--fsync \"on off\"] [--rows N] [--inserts N] [--lookups N] [--ranges N] [--rounds N]" >&2; exit 2 ;;
    esac
done
for setting in $FSYNC_SETTINGS; do
    case "$setting" in off|on) ;; *) echo "--fsync: off or on, not $setting" >&2; exit 2 ;; esac
done
bash Scripts/swift-shared.sh Benchmarks/PostgresPeer build -c release --product PostgresPeer
PG_DIR=""
cleanup() { if [ -n "$PG_DIR" ]; then bash Scripts/postgres-test-server.sh stop "$PG_DIR"; fi; }
trap cleanup EXIT
echo "machine: $(nproc) cores; $(uname -sr); commit $(git rev-parse --short HEAD); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for fsync in $FSYNC_SETTINGS; do
    out=$(OSD_POSTGRES_FSYNC="$fsync" bash Scripts/postgres-test-server.sh start)
    PG_DIR=${out#* }
    echo
    .build/release/PostgresPeer "${out% *}" "${PEER_OPTIONS[@]}"
    bash Scripts/postgres-test-server.sh stop "$PG_DIR"
    PG_DIR=""
done
