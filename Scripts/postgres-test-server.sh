#!/usr/bin/env bash
# A throwaway PostgreSQL server for the PostgresStore tests, from the system's
# packages (Debian's postgresql): `start` prints "URL FOLDER" of a new server on a
# random loopback port, with trust authentication; `stop FOLDER` stops it and deletes
# its folder. Exits 3 when no server binaries are installed. As root, the server
# runs as the `postgres` user (initdb refuses root).
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
    DIR=$(mktemp -d /tmp/osd-pg-XXXXXX)
    chmod 755 "$DIR"
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$DIR"; fi
    "${RUN[@]}" "$BIN/initdb" -D "$DIR/data" -A trust -U osd --no-sync >"$DIR/initdb.log" 2>&1
    for attempt in 1 2 3 4 5; do
        PORT=$((20000 + RANDOM % 30000))
        if "${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 30 \
            -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null 2>&1; then
            echo "postgres://osd@127.0.0.1:$PORT/postgres $DIR"
            exit 0
        fi
    done
    echo "the server did not start; see $DIR/server.log" >&2
    exit 1
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
