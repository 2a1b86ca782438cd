#!/usr/bin/env bash
# Builds the OpenSwiftData module's documentation (Sources/OpenSwiftData/OpenSwiftData.docc
# and the doc comments of every public symbol) with the toolchain's `docc`, warnings as
# errors: a broken symbol link or a topic that names nothing fails. No package dependency:
# SwiftPM's `dump-symbol-graph` extracts the symbol graphs from the debug build.
#
#   Scripts/docs.sh            writes .build/docs (a static site: open .build/docs/index.html
#                              through a web server, or `docc preview` the catalog)
#
# Run after `swift build` (or `swift test`): the symbol graphs come from that build.
set -euo pipefail
cd "$(dirname "$0")/.."

# (In the build folder the tests used, planned for the core: Scripts/swift-shared.sh.)
bash Scripts/swift-shared.sh . package dump-symbol-graph --skip-synthesized-members >/dev/null
graphs=$(swift build --show-bin-path)/../symbolgraph
[ -d "$graphs" ] || graphs=".build/$(uname -m)-unknown-linux-gnu/symbolgraph"
only=".build/docs-symbolgraph"
rm -rf "$only"
mkdir -p "$only"
cp "$graphs"/OpenSwiftData.symbols.json "$graphs"/OpenSwiftData@*.symbols.json "$only"/
docc convert Sources/OpenSwiftData/OpenSwiftData.docc \
    --additional-symbol-graph-dir "$only" \
    --fallback-display-name OpenSwiftData --fallback-bundle-identifier org.openswiftdata.OpenSwiftData \
    --output-path .build/docs --warnings-as-errors
echo "docs.sh: wrote .build/docs"
