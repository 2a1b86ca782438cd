#!/usr/bin/env bash
# Builds Examples/TripsServer, runs it over the embedded document store and over
# PostgreSQL (a throwaway server from Scripts/postgres-test-server.sh), and drives each
# with Examples/TripsServer/loadtest.py: 64 concurrent clients, writes then reads.
# Fails on any error or lost write. Options: --seconds N (per phase, default 10),
# --debug (a debug build, quicker to build; CI's smoke run).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_PHASE=10
CONFIG=release
while [ $# -gt 0 ]; do
    case "$1" in
    --seconds) SECONDS_PER_PHASE="$2"; shift 2 ;;
    --debug) CONFIG=debug; shift ;;
    *) echo "usage: $0 [--seconds N] [--debug]" >&2; exit 2 ;;
    esac
done
# In the core's build folder, as CI's other steps, so the shared modules compile once.
bash Scripts/swift-shared.sh Examples/TripsServer build -c "$CONFIG" --product TripsServer
BIN=".build/$CONFIG/TripsServer"
WORK=$(mktemp -d /tmp/trips-load-XXXXXX)
PG_DIR=""
SERVER=""
# Stops the server gracefully, or kills it after 30 s; fails when it did not stop cleanly.
stop_server() {
    kill -INT "$SERVER" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$SERVER" 2>/dev/null; then
        kill -KILL "$SERVER" 2>/dev/null || true
        echo "the server did not stop within 30 s" >&2
        SERVER=""
        return 1
    fi
    local status=0
    wait "$SERVER" || status=$?
    SERVER=""
    return "$status"
}
cleanup() {
    if [ -n "$SERVER" ]; then stop_server || true; fi
    [ -n "$PG_DIR" ] && bash Scripts/postgres-test-server.sh stop "$PG_DIR"
    rm -rf "$WORK"
}
trap cleanup EXIT

run() { # label store port
    "$BIN" --port "$3" --store "$2" >"$WORK/server-$3.log" 2>&1 &
    SERVER=$!
    for _ in $(seq 1 50); do
        curl -sf "http://127.0.0.1:$3/health" >/dev/null 2>&1 && break
        sleep 0.2
    done
    python3 Examples/TripsServer/loadtest.py --url "http://127.0.0.1:$3" --seconds "$SECONDS_PER_PHASE" --label "$1"
    stop_server
    echo
}

echo "machine: $(nproc) cores; $(uname -sr); build: $CONFIG"
echo
run "document store" "$WORK/trips.store" 18181
status=0
out=$(bash Scripts/postgres-test-server.sh start) || status=$?
if [ "$status" -eq 0 ]; then
    PG_DIR=${out#* }
    run "PostgreSQL" "${out% *}" 18182
elif [ "$status" -eq 3 ]; then
    echo "no PostgreSQL server binaries: the PostgreSQL run is skipped"
else
    echo "the PostgreSQL server did not start" >&2
    exit 1
fi
