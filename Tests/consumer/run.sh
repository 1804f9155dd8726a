#!/usr/bin/env bash
# The "Done when" of issue 16: a package outside this repository, written only from docs/testing.md, depends on
# this checkout by path and passes its join/leave/drop/resume tests. The files are the code blocks docs/testing.md
# marks with <!-- file: PATH -->, taken verbatim, so the documentation is what gets tested.
#
# Layout in a temp dir: parlor -> this checkout (a symlink, so the package identity is "parlor" as the doc says,
# whatever this folder is called) and my-tests/ (the consumer, `path: "../parlor"`).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
doc="$root/docs/testing.md"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ln -s "$root" "$work/parlor"
mkdir "$work/my-tests"

# Each block: an HTML comment line `<!-- file: PATH -->`, then a fenced block; its lines become PATH.
awk -v dir="$work/my-tests" '
    /^<!-- file: .* -->$/ { path = $3; next }
    path != "" && /^```/ && !inside { inside = 1; file = dir "/" path; system("mkdir -p \"$(dirname \"" file "\")\""); printf "" > file; next }
    inside && /^```$/ { inside = 0; close(file); print "consumer: wrote " path; path = ""; next }
    inside { print > file }
' "$doc"
test -f "$work/my-tests/Package.swift" || { echo "consumer: docs/testing.md has no Package.swift block" >&2; exit 1; }

cd "$work/my-tests"
# SwiftPM leaves its lock files (and the driver its TemporaryDirectory.*) in TMPDIR, named after this temporary
# package: under $work they go with it instead of piling up in /tmp, two per run.
export TMPDIR="$work/tmp"
mkdir "$TMPDIR"
start=$SECONDS
${SWIFT:-swift} test
echo "consumer: passed in $((SECONDS - start)) s (build included)"
