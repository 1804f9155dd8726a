#!/usr/bin/env bash
# Real-browser tests of the web client, through the server's selective forwarding unit (the default) unless said:
# two headless Chromium users talk through Parlor, then again with `--media mesh`, and over --tls-self-signed
# (two_users_talk.py); through a real TURN server with Parlor's time-limited credentials (turn_relay.py); a moderator
# brings a listener on stage and the audience hears them (stage_room.py); one speaker and six listeners
# (sfu_audience.py); a big stage room's audience as a count and pages of faces (stage_audience.py); the recording
# mark on every page (recording_mark.py); an end-to-end encrypted room (e2ee_room.py). Arguments name the scripts to
# run (default: all seven), e.g.
# `run.sh turn_relay.py`.
# PARLOR_SRTP_PROFILES (e.g. AES_CM_128_HMAC_SHA1_80) forces the servers' SRTP profile, as `make browser-srtp` does.
# PARLOR_BROWSER_CLUSTER=1 runs stage_room.py's pages through nginx over two nodes sharing a PostgreSQL the script
# starts, its audio crossing their media link (issue 41; needs nginx-light and postgresql), as `make test` does.
#
# Everything (server, coturn, chromedriver, browsers) runs in a private network namespace whose only interface is
# `lo`, so WebRTC can only use loopback and nothing leaves the machine.
#
# Needs root (for the namespace), Debian's chromium, chromium-driver and coturn (installed here if missing), a Python with
# selenium and websockets (BROWSER_PYTHON, else ./.venv, else /tmp/browser-venv), and a built server (PARLOR_BIN, else
# .build/debug/parlor). Never passes quietly: anything missing is a failure with a message saying what.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

fail() {
    echo "browser: $*" >&2
    echo "browser: 0 passed, 1 failed"
    exit 1
}

[ "$(id -u)" = 0 ] || fail "must run as root: it creates a network namespace"
command -v ip >/dev/null || fail "the ip command (iproute2) is missing"

scripts=("$@")
[ ${#scripts[@]} -gt 0 ] || scripts=(two_users_talk.py turn_relay.py stage_room.py stage_audience.py recording_mark.py e2ee_room.py sfu_audience.py)

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null || ! command -v turnserver >/dev/null; then
    if [ "${PARLOR_BROWSER_INSTALL:-1}" = 1 ] && command -v apt-get >/dev/null; then
        echo "browser: installing chromium, chromium-driver and coturn" >&2
        apt-get update -qq >&2 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver coturn >&2 || true
    fi
fi
chromium=$(command -v chromium || true)
chromedriver=$(command -v chromedriver || true)
turnserver=$(command -v turnserver || true)
[ -n "$chromium" ] || fail "chromium is missing: apt-get install chromium chromium-driver"
[ -n "$chromedriver" ] || fail "chromedriver is missing: apt-get install chromium-driver"
[ -n "$turnserver" ] || fail "turnserver is missing: apt-get install coturn"

python=${BROWSER_PYTHON:-}
if [ -z "$python" ]; then
    for candidate in "$repo/.venv/bin/python" /tmp/browser-venv/bin/python; do
        if [ -x "$candidate" ]; then python=$candidate; break; fi
    done
fi
[ -n "$python" ] || fail "no Python environment with selenium: set BROWSER_PYTHON or create .venv (pip install selenium)"
"$python" -c 'import selenium' 2>/dev/null || fail "$python cannot import selenium: $python -m pip install selenium"
"$python" -c 'import websockets.sync.client' 2>/dev/null \
    || fail "$python cannot import websockets (stage_audience.py's plain listeners): $python -m pip install websockets"

has_nginx() { [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null; }
has_postgres() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
if [ "${PARLOR_BROWSER_CLUSTER:-0}" = 1 ]; then
    if ! has_nginx || ! has_postgres; then
        if [ "${PARLOR_BROWSER_INSTALL:-1}" = 1 ] && command -v apt-get >/dev/null; then
            echo "browser: installing nginx-light and postgresql" >&2
            apt-get update -qq >&2 || true
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light postgresql >&2 || true
        fi
    fi
    has_nginx || fail "nginx is missing: apt-get install nginx-light"
    has_postgres || fail "PostgreSQL is missing: apt-get install postgresql"
fi

parlor_bin=${PARLOR_BIN:-$repo/.build/debug/parlor}
[ -x "$parlor_bin" ] || fail "no server binary at $parlor_bin: run swift build first (or set PARLOR_BIN)"

namespace=parlor-test-$$
ip netns add "$namespace" || fail "cannot create network namespace $namespace"
# The scripts' temporary files (Chromium's profile and shared-memory directories, coturn's database, the TLS data
# directory) go here and leave with the run: each run used to leave some 50 directories in /tmp.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/parlor-browser.XXXXXX")
# PostgreSQL (PARLOR_BROWSER_CLUSTER) runs as postgres, which must pass through to its directory in here.
chmod 711 "$scratch"
cleanup() {
    # Whatever still runs in our namespace was started by this run (a browser left by a crash): end it by PID.
    for pid in $(ip netns pids "$namespace" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
    ip netns delete "$namespace" 2>/dev/null || true
    rm -rf "$scratch" || true
}
trap cleanup EXIT
ip netns exec "$namespace" ip link set lo up

set +e
status=0
for script in "${scripts[@]}"; do
    [ -f "$here/$script" ] || fail "no test script $here/$script"
    # SE_OFFLINE: Selenium must use the drivers it is given and never try to download one.
    timeout --kill-after=10 600 ip netns exec "$namespace" env SE_OFFLINE=true TMPDIR="$scratch" PARLOR_BIN="$parlor_bin" \
        CHROMIUM="$chromium" CHROMEDRIVER="$chromedriver" TURNSERVER="$turnserver" "$python" "$here/$script"
    script_status=$?
    [ "$script_status" = 124 ] && echo "browser: $script timed out after 600 s" >&2 && echo "browser: 0 passed, 1 failed"
    [ "$script_status" = 0 ] || status=$script_status
done
set -e
exit "$status"
