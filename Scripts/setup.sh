#!/usr/bin/env bash
# Installs the system packages OpenSwiftData needs, when they are missing: libzstd-dev
# for documents, and postgresql, whose server the PostgresStore tests start on a
# random loopback port (Scripts/postgres-test-server.sh), and openssl, which makes that
# server's TLS certificates, and wrk, the HTTP load generator of Scripts/server-load.sh.
# Needs root (or sudo) only the first time.
set -euo pipefail
missing=()
dpkg -s libzstd-dev >/dev/null 2>&1 || missing+=(libzstd-dev)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v openssl >/dev/null || missing+=(openssl)
command -v wrk >/dev/null || missing+=(wrk)
if [ "${#missing[@]}" -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update
    $SUDO apt-get install -y "${missing[@]}"
fi
