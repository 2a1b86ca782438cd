#!/usr/bin/env bash
# A throwaway PostgreSQL server for the PostgresStore tests, from the system's
# packages (Debian's postgresql): `start [--watch PID]` prints "URL FOLDER" of a new
# server on a random loopback port, with trust authentication; with --watch, the
# server is stopped and its folder deleted once process PID ends (however it ends).
# `stop FOLDER` stops it and deletes its folder. Exits 3 when no server binaries are
# installed, 1 when one could not start (and leaves nothing behind). As root, the
# server runs as the `postgres` user (initdb refuses root).
# With `openssl` installed the server also accepts TLS (plain connections too), with a
# certificate for 127.0.0.1 and localhost that a CA made for this server signed: the
# CA's certificate is FOLDER/tls/ca.crt (absent without openssl, and the server has
# no TLS; a warning on standard error says so).
# The server runs with fsync = off (throwaway data); OSD_POSTGRES_FSYNC=on makes it
# durable, for measurements that should pay for fsync.
# `replica URL [--watch PID]` starts a hot standby of the server that `start` printed
# as URL: a base backup (pg_basebackup) streaming the primary's WAL
# on loopback, read-only, on a port of its own; it prints the standby's "URL FOLDER"
# (stop it with `stop FOLDER`, before or after its primary). No TLS.
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

# A CA and a server certificate it signs (P-256 keys, valid 30 days) in folder $1: ca.crt,
# server.crt and server.key, the key readable only by the server's user, as PostgreSQL
# demands. The CA's key is deleted once it has signed: nothing else is ever signed by it.
make_certificates() {
    command -v openssl >/dev/null || { echo "openssl is not installed (apt-get install openssl)"; return 1; }
    local tls=$1
    mkdir -p "$tls" && chmod 755 "$tls"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
        -subj "/CN=OpenSwiftData test CA" -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" -keyout "$tls/ca.key" -out "$tls/ca.crt" || return 1
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
        -keyout "$tls/server.key" -out "$tls/server.csr" || return 1
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$tls/server.ext"
    openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 30 \
        -extfile "$tls/server.ext" -out "$tls/server.crt" || return 1
    rm -f "$tls/ca.key" "$tls/ca.srl" "$tls/server.csr" "$tls/server.ext"
    chmod 600 "$tls/server.key"
    chmod 644 "$tls/ca.crt" "$tls/server.crt"
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$tls/server.key"; fi
}
# A new folder for a server ($1: the mktemp template), which the server's user owns.
new_folder() {
    DIR=$(mktemp -d "$1")
    chmod 755 "$DIR"
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$DIR"; fi
}
# Says why, stops whatever started in $DIR, deletes it and exits 1.
fail() {
    echo "$1" >&2
    "${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$DIR"
    exit 1
}
# Starts the server in $DIR/data on a free random loopback port with the options $1,
# watches $WATCH if set, prints "URL FOLDER" and exits 0; or fails, naming it $2.
serve() {
    for attempt in 1 2 3 4 5; do
        PORT=$((20000 + RANDOM % 30000))
        if "${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 30 \
            -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=${OSD_POSTGRES_FSYNC:-off} $1" start >/dev/null 2>&1; then
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
    fail "the $2 did not start; last log lines: $(tail -3 "$DIR/server.log" 2>/dev/null)"
}
case "${1:-}" in
start)
    WATCH=""
    if [ "${2:-}" = "--watch" ]; then WATCH="${3:?--watch needs a process id}"; fi
    new_folder /tmp/osd-pg-XXXXXX
    "${RUN[@]}" "$BIN/initdb" -D "$DIR/data" -A trust -U osd --no-sync >"$DIR/initdb.log" 2>&1 \
        || fail "initdb failed: $(tail -3 "$DIR/initdb.log")"
    TLS_OPTIONS=""
    if make_certificates "$DIR/tls" 2>"$DIR/tls.log"; then
        TLS_OPTIONS="-c ssl=on -c ssl_cert_file=$DIR/tls/server.crt -c ssl_key_file=$DIR/tls/server.key"
    else
        echo "warning: the server has no TLS: $(tail -3 "$DIR/tls.log")" >&2
        rm -rf "$DIR/tls"
    fi
    serve "$TLS_OPTIONS" server
    ;;
replica)
    PRIMARY="${2:?replica needs the URL that start printed}"
    PRIMARY_PORT=$(echo "$PRIMARY" | sed -E 's|.*:([0-9]+)/.*|\1|')
    WATCH=""
    if [ "${3:-}" = "--watch" ]; then WATCH="${4:?--watch needs a process id}"; fi
    new_folder /tmp/osd-pg-replica-XXXXXX
    # -R writes standby.signal and the primary's address (primary_conninfo); -X stream
    # copies the WAL written during the backup too, so the standby starts consistent;
    # a fast checkpoint starts the backup at once (a spread one took minutes on a busy
    # primary).
    "${RUN[@]}" "$BIN/pg_basebackup" -h 127.0.0.1 -p "$PRIMARY_PORT" -U osd -D "$DIR/data" -R -X stream --checkpoint=fast --no-sync \
        >"$DIR/basebackup.log" 2>&1 || fail "pg_basebackup failed: $(tail -3 "$DIR/basebackup.log")"
    serve "-c hot_standby=on -c ssl=off" standby
    ;;
stop)
    DIR="${2:?stop needs the folder start printed}"
    "${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$DIR"
    ;;
*)
    echo "usage: $0 start [--watch PID] | replica URL [--watch PID] | stop FOLDER" >&2
    exit 2
    ;;
esac
