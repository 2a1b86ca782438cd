#!/usr/bin/env bash
# The project's tests, as the README gives them: installs what is missing
# (Scripts/setup.sh), then runs the core package's tests and then PostgresStore's
# (Packages/Postgres: the conformance suite over the embedded store and PostgreSQL,
# the model-based graph test over PostgreSQL). Both run in the core's build folder
# (Scripts/swift-shared.sh), so the modules both packages share, swift-syntax among
# them, are compiled once.
#
#   Scripts/test.sh                    everything
#   Scripts/test.sh --filter REGEX     only the matching tests, in both packages
#
# Any other arguments go to both `swift test` runs as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh
echo "=== test.sh: the core package"
bash Scripts/swift-shared.sh . test "$@"
echo "=== test.sh: PostgresStore (Packages/Postgres)"
# One test at a time: a store's calls are synchronous and block a thread of Swift's
# cooperative pool while they wait for the server, and on 2 cores that pool has 2
# threads. Run beside the conformance suite's blocking tests, the change feed's timed
# tests (async) found no thread for 25 s and failed (a dry run of CI); alone, the
# package's 59 tests take about 40 s either way.
bash Scripts/swift-shared.sh Packages/Postgres test --no-parallel "$@"
# Leave the folder planned for the core again (nothing is compiled), so a plain
# `swift test --filter …` in the core afterwards builds and runs the core's tests.
bash Scripts/swift-shared.sh . build --build-tests >/dev/null
