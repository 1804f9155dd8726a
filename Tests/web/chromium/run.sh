#!/usr/bin/env bash
# The e2ee library in a real Chromium (not part of make test): loopback.html sends a 440 Hz tone between two peer
# connections in one page through e2ee-worker.js, once per transform API, and this checks what it measured.
# Needs chromium and python3; no Parlor server, no network beyond 127.0.0.1. Usage: bash Tests/web/chromium/run.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
work="$(mktemp -d)"
server_pid=""
browser_pid=""
cleanup() {
    [ -n "$browser_pid" ] && kill "$browser_pid" 2>/dev/null || true
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
status=0
for api in script encoded-streams; do
    python3 "$root/Tests/web/chromium/serve.py" "$root" 90 >"$work/server.out" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 50); do [ -s "$work/server.out" ] && break; sleep 0.1; done
    port="$(head -1 "$work/server.out")"
    chromium --headless=new --no-sandbox --user-data-dir="$work/profile-$api" --autoplay-policy=no-user-gesture-required \
        --disable-gpu "http://127.0.0.1:$port/Tests/web/chromium/loopback.html?api=$api" >"$work/chromium-$api.log" 2>&1 &
    browser_pid=$!
    wait "$server_pid" || true  # it exits once the page has posted its result, or after 90 s
    server_pid=""
    kill "$browser_pid" 2>/dev/null || true
    wait "$browser_pid" 2>/dev/null || true
    browser_pid=""
    tail -n +2 "$work/server.out" >"$work/result-$api.json"
    echo "== $api"
    python3 "$root/Tests/web/chromium/check.py" "$work/result-$api.json" "$api" || status=1
done
exit $status
