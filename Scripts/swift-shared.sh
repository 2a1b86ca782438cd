#!/usr/bin/env bash
# Runs `swift COMMAND ARGS…` for the package at PACKAGE (., Packages/Postgres or
# Examples/TripsServer) in the core's build folder, .build, so the modules the
# packages share (swift-syntax, the core, NIO…) are compiled once for all of them:
#
#   Scripts/swift-shared.sh Packages/Postgres test
#   Scripts/swift-shared.sh Examples/TripsServer run TripsServer --store trips.store
#
# SwiftPM keeps one build plan per build folder and reuses it while the packages
# that plan lists are unchanged: it does not notice that another root package asks
# (measured: after the core's build, a build of the server example compiled nothing,
# not even its changed tests). So the plan is removed first, and SwiftPM plans for
# PACKAGE; the compiled modules stay, and those whose commands are the same are not
# compiled again.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
    echo "usage: $0 PACKAGE COMMAND [ARGUMENTS…]   (PACKAGE: ., Packages/Postgres, Examples/TripsServer)" >&2
    exit 2
fi
package="$1"
command="$2"
shift 2
rm -f .build/debug.yaml .build/release.yaml .build/*/debug/description.json .build/*/release/description.json
exec swift "$command" --package-path "$package" --scratch-path .build "$@"
