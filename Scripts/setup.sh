#!/usr/bin/env bash
# Installs the system packages OpenSwiftData needs (libzstd-dev for documents),
# when they are missing. Needs root (or sudo) only the first time.
set -euo pipefail
if ! dpkg -s libzstd-dev >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update
    $SUDO apt-get install -y libzstd-dev
fi
