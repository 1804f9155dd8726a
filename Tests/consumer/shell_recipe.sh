#!/usr/bin/env bash
# Runs a docs/testing.md shell recipe (every block after a `<!-- recipe: KIND -->` line, in order, as one script)
# exactly as written: KIND is the first argument, `shell` (join/leave/drop/resume, a stage room) by default, or
# `audio` ("bob heard alice" with join --play/--record). Against the built parlor (PARLOR_BIN's folder first on
# PATH), in a temporary directory, within 180 s. Exit 0 when every step of it held.
set -euo pipefail
kind=${1:-shell}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="$(cd "$(dirname "${PARLOR_BIN:-$root/.build/debug/parlor}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
awk -v marker="<!-- recipe: $kind -->" '$0 == marker { found = 1; blocks++; next }
     found && /^```/ && !inside { inside = 1; next }
     inside && /^```$/ { inside = 0; found = 0; next }
     inside { print }
     END { if (blocks == 0) exit 1 }' "$root/docs/testing.md" > "$work/recipe.sh" \
    && [ -s "$work/recipe.sh" ] || { echo "$kind recipe: docs/testing.md has no <!-- recipe: $kind --> block" >&2; exit 1; }
cd "$work"
start=$SECONDS
# The recipe's own waits have deadlines; this one bounds the whole run should a step hang anyway.
if PATH="$bin:$PATH" timeout 180 bash -euo pipefail recipe.sh; then
    echo "$kind recipe: 1 passed, 0 failed ($((SECONDS - start)) s)"
else
    status=$?
    echo "$kind recipe: 0 passed, 1 failed (exit $status$([ $status = 124 ] && echo ': timed out after 180 s')); server stderr:" >&2
    cat server.err >&2 || true
    exit 1
fi
