#!/usr/bin/env bash
# Builds Examples/TripsServer, runs it over the embedded document store and over
# PostgreSQL (a throwaway server from Scripts/postgres-test-server.sh), and drives each
# with wrk (a native client, so the figures measure the server more than the client):
# 64 connections on 2 threads, writes (Examples/TripsServer/load/post-trips.lua, each a
# new trip), then the lost-write check (Examples/TripsServer/loadtest.py --check-only:
# every acknowledged write is stored and a sample reads back), then reads
# (load/read-trips.lua), then the lost-update check (loadtest.py --lost-updates: 4
# clients append to one trip's notes by GET and PATCH with If-Match, retrying on 412 or
# 409; nothing may be lost). Prints one table a store, with the CPU share of the client
# (wrk) and of the server: CPU seconds / (wall seconds × cores).
# Fails on any error, lost write or lost update. Options: --seconds N (per phase, default 10),
# --debug (a debug build, quicker to build; CI's smoke run).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_PHASE=10
CONFIG=release
CONNECTIONS=64
while [ $# -gt 0 ]; do
    case "$1" in
    --seconds) SECONDS_PER_PHASE="$2"; shift 2 ;;
    --debug) CONFIG=debug; shift ;;
    *) echo "usage: $0 [--seconds N] [--debug]" >&2; exit 2 ;;
    esac
done
for tool in wrk curl python3; do
    command -v "$tool" >/dev/null || { echo "$0 needs $tool (Scripts/setup.sh installs them)" >&2; exit 1; }
done
# In the core's build folder, as CI's other steps, so the shared modules compile once.
bash Scripts/swift-shared.sh Examples/TripsServer build -c "$CONFIG" --product TripsServer
BIN=".build/$CONFIG/TripsServer"
LOAD=Examples/TripsServer/load
CORES=$(nproc)
TICKS=$(getconf CLK_TCK)
WORK=$(mktemp -d /tmp/trips-load-XXXXXX)
PG_DIR=""
SERVER=""
failed=0
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

# The server's CPU time so far, in clock ticks (utime + stime of /proc/PID/stat; the
# fields after the command name, which is in parentheses).
server_ticks() { sed 's/.*) //' "/proc/$SERVER/stat" | awk '{ print $12 + $13 }'; }

# Runs one wrk phase and prints its table row. Arguments: row label, Lua script, URL.
phase() {
    local label="$1" script="$2" url="$3" start end ticks result
    ticks=$(server_ticks)
    start=$(date +%s.%N)
    # wrk's own CPU (user + system, Lua included): the subshell's `times` prints its
    # children's on its second line, as "0m1.234s 0m0.567s".
    if ! (status=0
        wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_PER_PHASE}s" --timeout 10s -s "$script" "$url" >"$WORK/wrk.out" 2>&1 || status=$?
        times >"$WORK/times" # not in a pipeline: a forked `times` would see no children
        sed -n 2p "$WORK/times" >"$WORK/time"
        exit "$status"); then
        cat "$WORK/wrk.out" >&2
        echo "wrk failed ($label)" >&2
        return 1
    fi
    end=$(date +%s.%N)
    result=$(grep '^result ' "$WORK/wrk.out") || { cat "$WORK/wrk.out" >&2; echo "wrk printed no result ($label)" >&2; return 1; }
    # key=value pairs of the Lua script's done(), as shell variables.
    local requests errors seconds p50_ms p99_ms acknowledged=0
    eval "${result#result }"
    ACKNOWLEDGED=$acknowledged
    awk -v label="$label" -v n="$requests" -v e="$errors" -v s="$seconds" -v p50="$p50_ms" -v p99="$p99_ms" \
        -v times="$(cat "$WORK/time")" -v server="$(( $(server_ticks) - ticks ))" -v ticks="$TICKS" \
        -v start="$start" -v end="$end" -v cores="$CORES" '
        function seconds(t,  m) { split(t, m, /[ms]/); return m[1] * 60 + m[2] }
        function grouped(x,  t) { t = sprintf("%d", x); while (t ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", t); return t }
        BEGIN {
            split(times, t, " "); client = seconds(t[1]) + seconds(t[2]); wall = end - start
            printf "| %s | %d | %d | %s | %.2f ms | %.2f ms | %.1f %% | %.1f %% |\n", label, n, e, grouped(n / s),
                p50, p99, 100 * client / (wall * cores), 100 * server / ticks / (wall * cores) }'
    if [ "$errors" -ne 0 ]; then
        echo "$errors errors ($label):" >&2
        sed -n '/Non-2xx\|Socket errors/p' "$WORK/wrk.out" >&2
        failed=1
    fi
}

run() { # label store port
    local url="http://127.0.0.1:$3" before
    "$BIN" --port "$3" --store "$2" >"$WORK/server-$3.log" 2>&1 &
    SERVER=$!
    for _ in $(seq 1 50); do
        curl -sf "$url/health" >/dev/null 2>&1 && break
        sleep 0.2
    done
    before=$(curl -sf "$url/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin)["trips"])') \
        || { cat "$WORK/server-$3.log" >&2; echo "the server ($1) did not answer" >&2; return 1; }
    export WRK_RUN WRK_ACKED="$WORK/acked-$3" WRK_NAMES="$WORK/acked-$3"
    WRK_RUN=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
    echo "| phase ($1) | requests | errors | requests/s | p50 | p99 | client CPU | server CPU |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    phase "writes: POST /trips" "$LOAD/post-trips.lua" "$url"
    # Before the reads, which read the acknowledged names: the server holds every
    # acknowledged write; up to one a connection that wrk stopped waiting for may be stored too.
    local check
    check=$(python3 Examples/TripsServer/loadtest.py --check-only --url "$url" --acked "$WRK_ACKED" \
        --before "$before" --in-flight "$CONNECTIONS") || failed=1
    phase "reads: GET /trips/:name, 1 in 4 a search" "$LOAD/read-trips.lua" "$url"
    # Read-modify-writes of one trip (GET, PATCH with If-Match) by 4 clients at once:
    # none may be lost (Scripts/server-scale.sh runs the same over several servers).
    local race
    race=$(python3 Examples/TripsServer/loadtest.py --lost-updates --url "$url" --writers 4 --appends 50) || failed=1
    echo
    echo "$check"
    echo "$race"
    stop_server
    echo
}

echo "machine: $CORES cores; $(uname -sr); build: $CONFIG; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "client: wrk -t2 -c$CONNECTIONS, ${SECONDS_PER_PHASE} s per phase; CPU share: CPU seconds / (wall seconds × $CORES cores)"
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
if [ "$failed" -ne 0 ]; then
    echo "errors or lost writes: see above" >&2
    exit 1
fi
