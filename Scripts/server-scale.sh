#!/usr/bin/env bash
# Several TripsServer processes over one PostgreSQL: for each fsync setting and each
# process count, starts a throwaway PostgreSQL (Scripts/postgres-test-server.sh; a new
# one per run, so every run starts from an empty table), that many servers over it, and
# drives them together with one wrk per server: the 64 connections split evenly (1
# process: wrk -t2 -c64, as Scripts/server-load.sh; N processes: N × wrk -t1 -c64/N).
# Phases: writes (Examples/TripsServer/load/post-trips.lua), the lost-write check of
# every process's acknowledged writes (loadtest.py --check-only, through one server:
# they share the database), reads (load/read-trips.lua), then the lost-update check
# (loadtest.py --lost-updates: 4 clients spread over the servers each append their own
# tokens to one trip's notes by GET and PATCH with If-Match, retrying on 412/409; every
# token must be stored once). Requests/s is the sum over the wrk processes; p50 and p99
# are the worst process's (an upper bound of the pooled percentile: no more than 1 % of
# any process's requests, so of all, took longer than the largest p99). CPU shares are
# CPU seconds / (wall seconds × cores) of the wrk processes, the servers, and PostgreSQL
# (the postmaster and its children). Prints a table a run and a summary table; fails on
# any error, lost write or lost update.
# Options: --seconds N (per phase, default 10), --processes "1 2 4" (the counts),
# --fsync "off on" (the settings), --debug (a debug build, quicker to build; a smoke run),
# --servers "trips replica fluent" (which servers, default trips):
#   trips    TripsServer over PostgreSQL (PostgresStore);
#   replica  the same with a hot standby as read replica (postgres-test-server.sh
#            replica; `?replica=` in the store's URL), on the same machine;
#   fluent   the peer, Benchmarks/FluentPeer: the same routes with Vapor and Fluent
#            (built here, in release, not by CI). It has no If-Match, so the
#            lost-update check is not run against it.
# Servers start one after another (each answers /health before the next starts).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_PHASE=10
CONFIG=release
CONNECTIONS=64
PROCESS_COUNTS="1 2 4"
FSYNC_SETTINGS="off on"
SERVER_KINDS="trips"
while [ $# -gt 0 ]; do
    case "$1" in
    --servers) SERVER_KINDS="$2"; shift 2 ;;
    --seconds) SECONDS_PER_PHASE="$2"; shift 2 ;;
    --processes) PROCESS_COUNTS="$2"; shift 2 ;;
    --fsync) FSYNC_SETTINGS="$2"; shift 2 ;;
    --debug) CONFIG=debug; shift ;;
    *) echo "usage: $0 [--seconds N] [--processes \"1 2 4\"] [--fsync \"off on\"] [--servers \"trips replica fluent\"] [--debug]" >&2; exit 2 ;;
    esac
done
for count in $PROCESS_COUNTS; do
    case "$count" in ''|*[!0-9]*|0) echo "--processes: counts of 1 or more, not $count" >&2; exit 2 ;; esac
    [ $((CONNECTIONS % count)) -eq 0 ] || { echo "--processes: $count does not divide $CONNECTIONS connections" >&2; exit 2; }
done
for setting in $FSYNC_SETTINGS; do
    case "$setting" in off|on) ;; *) echo "--fsync: off or on, not $setting" >&2; exit 2 ;; esac
done
for kind in $SERVER_KINDS; do
    case "$kind" in trips|replica|fluent) ;; *) echo "--servers: trips, replica or fluent, not $kind" >&2; exit 2 ;; esac
done
for tool in wrk curl python3; do
    command -v "$tool" >/dev/null || { echo "$0 needs $tool (Scripts/setup.sh installs them)" >&2; exit 1; }
done
bash Scripts/swift-shared.sh Examples/TripsServer build -c "$CONFIG" --product TripsServer
BIN=".build/$CONFIG/TripsServer"
FLUENT_BIN=""
if [[ " $SERVER_KINDS " == *" fluent "* ]]; then
    swift build -c "$CONFIG" --package-path Benchmarks/FluentPeer --product FluentTrips
    FLUENT_BIN="Benchmarks/FluentPeer/.build/$CONFIG/FluentTrips"
fi
LOAD=Examples/TripsServer/load
CORES=$(nproc)
TICKS=$(getconf CLK_TCK)
WORK=$(mktemp -d /tmp/trips-scale-XXXXXX)
PG_DIR=""
REPLICA_DIR=""
SERVERS=()
failed=0

# Stops every server gracefully (SIGINT), killing one that has not stopped after 30 s;
# fails when one did not stop cleanly.
stop_servers() {
    local pid status=0
    for pid in "${SERVERS[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
    for pid in "${SERVERS[@]}"; do
        for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        if kill -0 "$pid" 2>/dev/null; then
            kill -KILL "$pid" 2>/dev/null || true
            echo "server $pid did not stop within 30 s" >&2
            status=1
        fi
        wait "$pid" || status=1
    done
    SERVERS=()
    return "$status"
}
stop_postgres() {
    if [ -n "$REPLICA_DIR" ]; then bash Scripts/postgres-test-server.sh stop "$REPLICA_DIR"; fi
    if [ -n "$PG_DIR" ]; then bash Scripts/postgres-test-server.sh stop "$PG_DIR"; fi
    PG_DIR=""
    REPLICA_DIR=""
}
cleanup() {
    if [ "${#SERVERS[@]}" -gt 0 ]; then stop_servers || true; fi
    stop_postgres
    rm -rf "$WORK"
}
trap cleanup EXIT

# CPU clock ticks (utime + stime) of the processes PIDs, summed; a process gone counts 0.
ticks_of() {
    local pid total=0 t
    for pid in "$@"; do
        t=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{ print $12 + $13 }') || t=0
        total=$((total + ${t:-0}))
    done
    echo "$total"
}
# The PostgreSQL servers' processes (the primary's and a standby's): each postmaster
# (first line of postmaster.pid) and its children.
postgres_pids() {
    local main dir
    for dir in "$PG_DIR" "$REPLICA_DIR"; do
        [ -n "$dir" ] || continue
        main=$(head -1 "$dir/data/postmaster.pid" 2>/dev/null) || continue
        echo "$main"
        ps -o pid= --ppid "$main" 2>/dev/null || true
    done
}
# Ticks per PostgreSQL process, "pid ticks" a line, for a difference over a phase that
# counts a backend started during it from zero.
postgres_ticks() {
    local pid
    for pid in $(postgres_pids); do echo "$pid $(ticks_of "$pid")"; done
}

# One phase: a wrk per server, at once. Arguments: label, Lua script. Appends the row to
# $WORK/rows and sets PHASE_RPS and PHASE_P99 for the summary.
phase() {
    local label="$1" script="$2" count=${#SERVERS[@]} i start end server_before pg_before
    local threads=1 per=$((CONNECTIONS / count))
    [ "$count" -eq 1 ] && threads=2
    server_before=$(ticks_of "${SERVERS[@]}")
    pg_before=$(postgres_ticks)
    start=$(date +%s.%N)
    local waits=()
    for i in $(seq 0 $((count - 1))); do
        (status=0
            WRK_RUN="$RUN-$i" WRK_ACKED="$WORK/acked-$i" WRK_NAMES="$WORK/names" \
                wrk -t"$threads" -c"$per" -d"${SECONDS_PER_PHASE}s" --timeout 10s -s "$script" \
                "http://127.0.0.1:$((PORT + i))" >"$WORK/wrk-$i.out" 2>&1 || status=$?
            times >"$WORK/times-$i"
            exit "$status") &
        waits+=($!)
    done
    local status=0
    for i in "${!waits[@]}"; do
        if ! wait "${waits[$i]}"; then cat "$WORK/wrk-$i.out" >&2; echo "wrk $i failed ($label)" >&2; status=1; fi
    done
    end=$(date +%s.%N)
    [ "$status" -eq 0 ] || return 1
    local pg_after server_after
    server_after=$(ticks_of "${SERVERS[@]}")
    pg_after=$(postgres_ticks)
    local pg_ticks
    pg_ticks=$(awk 'NR == FNR { before[$1] = $2; next } { total += $2 - before[$1] } END { print total + 0 }' \
        <(echo "$pg_before") <(echo "$pg_after"))
    # Each wrk's `result` line and its CPU (the subshell's children, `times`' second line).
    local results="" client=0 t
    for i in $(seq 0 $((count - 1))); do
        results+="$(grep '^result ' "$WORK/wrk-$i.out" || { cat "$WORK/wrk-$i.out" >&2; echo "wrk $i printed no result ($label)" >&2; return 1; })"$'\n'
        t=$(sed -n 2p "$WORK/times-$i" | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
        client=$(awk -v a="$client" -v b="$t" 'BEGIN { print a + b }')
    done
    local row
    row=$(printf '%s' "$results" | awk -v label="$label" -v count="$count" -v client="$client" \
        -v server="$((server_after - server_before))" -v pg="$pg_ticks" -v ticks="$TICKS" \
        -v start="$start" -v end="$end" -v cores="$CORES" '
        function grouped(x,  t) { t = sprintf("%d", x); while (t ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", t); return t }
        /^result / {
            for (f = 2; f <= NF; f++) { split($f, kv, "="); v[kv[1]] = kv[2] }
            n += v["requests"]; e += v["errors"]; rps += v["requests"] / v["seconds"]
            if (v["p50_ms"] > p50) p50 = v["p50_ms"]; if (v["p99_ms"] > p99) p99 = v["p99_ms"]
        }
        END {
            wall = end - start
            printf "| %s | %d | %d | %d | %s | %.2f ms | %.2f ms | %.1f %% | %.1f %% | %.1f %% |\t%s\t%.2f\n", label, count, n, e,
                grouped(rps), p50, p99, 100 * client / (wall * cores), 100 * server / ticks / (wall * cores),
                100 * pg / ticks / (wall * cores), grouped(rps), p99 }')
    echo "${row%%$'\t'*}"
    PHASE_RPS=$(echo "$row" | cut -f2)
    PHASE_P99=$(echo "$row" | cut -f3)
    local errors
    errors=$(printf '%s' "$results" | awk '{ for (f = 2; f <= NF; f++) { split($f, kv, "="); if (kv[1] == "errors") e += kv[2] } } END { print e + 0 }')
    if [ "$errors" -ne 0 ]; then
        echo "$errors errors ($label):" >&2
        cat "$WORK"/wrk-*.out | sed -n '/Non-2xx\|Socket errors/p' >&2
        failed=1
    fi
}

# One run: PostgreSQL with fsync $1, $2 servers of kind $3 over it.
run() {
    local fsync="$1" count="$2" kind="$3" out i url urls="" before check race store
    out=$(OSD_POSTGRES_FSYNC="$fsync" bash Scripts/postgres-test-server.sh start) || {
        echo "the PostgreSQL server did not start (or no server binaries: apt-get install postgresql)" >&2
        return 1
    }
    PG_DIR=${out#* }
    local database=${out% *}
    store=$database
    if [ "$kind" = replica ]; then
        out=$(OSD_POSTGRES_FSYNC="$fsync" bash Scripts/postgres-test-server.sh replica "$database") || {
            echo "the standby did not start" >&2
            return 1
        }
        REPLICA_DIR=${out#* }
        store="$database?replica=127.0.0.1:$(echo "${out% *}" | sed -E 's|.*:([0-9]+)/.*|\1|')"
    fi
    PORT=$((18300 + RANDOM % 1000))
    for i in $(seq 0 $((count - 1))); do
        if [ "$kind" = fluent ]; then
            DATABASE_URL="$database?sslmode=disable" LOG_LEVEL=warning \
                "$FLUENT_BIN" serve --hostname 127.0.0.1 --port "$((PORT + i))" >"$WORK/server-$i.log" 2>&1 &
        else
            "$BIN" --port "$((PORT + i))" --store "$store" >"$WORK/server-$i.log" 2>&1 &
        fi
        SERVERS+=($!)
        url="http://127.0.0.1:$((PORT + i))"
        for _ in $(seq 1 100); do curl -sf "$url/health" >/dev/null 2>&1 && break; sleep 0.2; done
        curl -sf "$url/health" >/dev/null || { cat "$WORK/server-$i.log" >&2; echo "server $i did not answer" >&2; return 1; }
        urls+="${urls:+,}$url"
    done
    url="http://127.0.0.1:$PORT"
    before=$(curl -sf "$url/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin)["trips"])')
    RUN=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
    rm -f "$WORK"/acked-*
    echo "| $kind, PostgreSQL fsync = $fsync | processes | requests | errors | requests/s | p50 (worst) | p99 (worst) | client CPU | servers CPU | PostgreSQL CPU |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    phase "writes: POST /trips" "$LOAD/post-trips.lua"
    local write_rps=$PHASE_RPS write_p99=$PHASE_P99
    cat "$WORK"/acked-* >"$WORK/names"
    check=$(python3 Examples/TripsServer/loadtest.py --check-only --url "$url" --acked "$WORK/names" \
        --before "$before" --in-flight "$CONNECTIONS") || failed=1
    phase "reads: GET /trips/:name, 1 in 4 a search" "$LOAD/read-trips.lua"
    local read_rps=$PHASE_RPS read_p99=$PHASE_P99
    if [ "$kind" = fluent ]; then
        race="lost-update check: not run (the peer has no If-Match); retries: n/a"
    else
        race=$(python3 Examples/TripsServer/loadtest.py --lost-updates --url "$urls" --writers 4 --appends 50) || failed=1
    fi
    echo
    echo "$check"
    echo "$race"
    echo
    printf '| %s | %s | %d | %s | %s ms | %s | %s ms | %s |\n' "$kind" "$fsync" "$count" "$write_rps" "$write_p99" \
        "$read_rps" "$read_p99" "$(echo "$race" | sed 's/.*retries: //')" >>"$WORK/summary"
    stop_servers || failed=1
    stop_postgres
}

echo "machine: $CORES cores; $(uname -sr); build: $CONFIG; commit $(git rev-parse --short HEAD); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "client: $CONNECTIONS connections split over one wrk per server (1 server: -t2), ${SECONDS_PER_PHASE} s per phase; CPU share: CPU seconds / (wall seconds × $CORES cores)"
echo
for fsync in $FSYNC_SETTINGS; do
    for count in $PROCESS_COUNTS; do
        for kind in $SERVER_KINDS; do
            run "$fsync" "$count" "$kind"
        done
    done
done
echo "| server | fsync | processes | writes/s | writes p99 | reads/s | reads p99 | lost-update check: retries |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
cat "$WORK/summary"
if [ "$failed" -ne 0 ]; then
    echo "errors, lost writes or lost updates: see above" >&2
    exit 1
fi
