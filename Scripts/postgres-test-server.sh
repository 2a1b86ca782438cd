#!/usr/bin/env bash
# A throwaway PostgreSQL server for the PostgresStore tests, from the system's
# packages (Debian's postgresql): `start [--watch PID]` prints "URL FOLDER" of a new
# server on a random loopback port, with trust authentication; with --watch, the
# server is stopped and its folder deleted once process PID ends (however it ends).
# `stop FOLDER` stops it and deletes its folder. Exits 3 when no server binaries are
# installed, 1 when one could not start (and leaves nothing behind). As root, the
# server runs as the `postgres` user (initdb refuses root).
set -euo pipefail
# Close every descriptor but the standard three: the server outlives this script, and
# a descriptor it inherited from the caller (Foundation's Process watches one) would
# make the caller wait for the server to end.
for fd in /proc/$$/fd/*; do
    n=${fd##*/}
    if [ "$n" -gt 2 ] 2>/dev/null; then eval "exec $n>&-" 2>/dev/null || true; fi
done
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ] || [ ! -x "$BIN/pg_ctl" ]; then
    echo "no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)" >&2
    exit 3
fi
RUN=()
if [ "$(id -u)" -eq 0 ]; then RUN=(runuser -u postgres --); fi
case "${1:-}" in
start)
    WATCH=""
    if [ "${2:-}" = "--watch" ]; then WATCH="${3:?--watch needs a process id}"; fi
    DIR=$(mktemp -d /tmp/osd-pg-XXXXXX)
    chmod 755 "$DIR"
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$DIR"; fi
    fail() {
        echo "$1" >&2
        "${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
        rm -rf "$DIR"
        exit 1
    }
    "${RUN[@]}" "$BIN/initdb" -D "$DIR/data" -A trust -U osd --no-sync >"$DIR/initdb.log" 2>&1 \
        || fail "initdb failed: $(tail -3 "$DIR/initdb.log")"
    for attempt in 1 2 3 4 5; do
        PORT=$((20000 + RANDOM % 30000))
        if "${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 30 \
            -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null 2>&1; then
            if [ -n "$WATCH" ]; then
                # Detached, holding none of the caller's descriptors.
                (
                    while kill -0 "$WATCH" 2>/dev/null; do sleep 1; done
                    bash "$0" stop "$DIR"
                ) </dev/null >/dev/null 2>&1 &
            fi
            echo "postgres://osd@127.0.0.1:$PORT/postgres $DIR"
            exit 0
        fi
        # A start that timed out may have left a server behind: stop it before the next port.
        "${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
    done
    fail "the server did not start; last log lines: $(tail -3 "$DIR/server.log" 2>/dev/null)"
    ;;
stop)
    DIR="${2:?stop needs the folder start printed}"
    "${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$DIR"
    ;;
*)
    echo "usage: $0 start | stop FOLDER" >&2
    exit 2
    ;;
esac
