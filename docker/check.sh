#!/usr/bin/env bash
# make docker-check: build docker/Dockerfile with podman and smoke-test the image before deploying it.
#
# Needs root and Debian (apt). It installs podman, runc, catatonit (podman's --init) and debootstrap from Debian,
# makes its own base image from the Debian mirror apt uses (no other registry is asked), builds the image with the
# Swift toolchain on this machine (copied into a builder image), runs it with its ports published on 127.0.0.1 only
# and checks: /healthz and the image's HEALTHCHECK, POST /auth, POST and GET /rooms, a WebSocket join, uid 10001,
# the data and the JWT secret kept across a restart (a token issued before still works), and the time a SIGTERM
# stop takes with a WebSocket open (which must get close code 1001). Everything it made (containers, volume,
# images, temp dir) is removed on exit, by name or ID; a run killed outright is cleaned up by the next one.
# Settings, all optional:
#
#   PARLOR_CHECK_SWIFT_ROOT  toolchain directory holding usr/bin/swift (default: from `readlink -f $(which swift)`)
#   PARLOR_CHECK_MIRROR      Debian mirror (default: the first one in apt's sources)
#   PARLOR_CHECK_SUITE       Debian release of the base images (default: this machine's, from /etc/os-release)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly repo
readonly prefix=parlor-check
readonly container=$prefix
readonly volume=$prefix-data
readonly base_image=localhost/$prefix-debian:slim
readonly swift_image=localhost/$prefix-swift:latest
readonly image=localhost/$prefix:latest
readonly work_dir=/var/tmp/$prefix
readonly stop_limit_seconds=10

say() { printf '== %s\n' "$*"; }
fail() { printf 'docker-check: FAILED: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "run as root (podman, debootstrap and apt need it): sudo make docker-check"
command -v apt-get >/dev/null || fail "needs a Debian system (apt-get)"

# ---- what to build with
suite=${PARLOR_CHECK_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-}")}
[ -n "$suite" ] || fail "cannot tell the Debian release from /etc/os-release: set PARLOR_CHECK_SUITE"
first_mirror() {
    # The first URI apt uses for Debian itself (not -security), from deb822 .sources or one-line .list files.
    { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}'
      grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; break}}'
    } | grep -v -- '-security' | grep '/debian/\?$' | head -n 1
}
mirror=${PARLOR_CHECK_MIRROR:-$(first_mirror || true)}
mirror=${mirror:-http://deb.debian.org/debian}
security_mirror=${mirror%/debian*}/debian-security
if [ -n "${PARLOR_CHECK_SWIFT_ROOT:-}" ]; then
    swift_root=$PARLOR_CHECK_SWIFT_ROOT
else
    swift_binary=$(command -v swift) || fail "no swift on PATH: set PARLOR_CHECK_SWIFT_ROOT"
    swift_root=$(dirname "$(dirname "$(dirname "$(readlink -f "$swift_binary")")")")
fi
# The toolchain directory is the context of a build, at its own path: it cannot be / (a toolchain under /usr).
[ -x "$swift_root/usr/bin/swift" ] && [ "$swift_root" != / ] \
    || fail "no Swift toolchain at '$swift_root' (want <root>/usr/bin/swift, root not /): set PARLOR_CHECK_SWIFT_ROOT"

# ---- tools, from Debian
missing=""
for package in podman runc catatonit debootstrap python3; do
    # Not `dpkg -s | grep -q`: grep exiting at the first match can fail dpkg with SIGPIPE under pipefail.
    [ "$(dpkg-query -W -f '${Status}' "$package" 2>/dev/null)" = "install ok installed" ] || missing="$missing $package"
done
if [ -n "$missing" ]; then
    say "installing$missing"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi

# ---- cleanup: only what this script makes, by name (and the build's own intermediate images, by ID)
remove_work_dir() {
    # debootstrap bind-mounts /dev entries into its target when it finds itself in a container (/.dockerenv), and a
    # debootstrap killed outright leaves them mounted: unmount what is under the work dir first, and never let rm
    # cross into another file system.
    awk -v dir="$work_dir/" 'index($2, dir) == 1 { print $2 }' /proc/self/mounts | sort -r | xargs -r -n 1 umount -l || true
    rm -rf --one-file-system "$work_dir"
}
remove_what_was_made() {
    podman rm --force --time 0 --ignore "$container" >/dev/null 2>&1 || true
    podman volume rm --force "$volume" >/dev/null 2>&1 || true
    if [ -f "$work_dir/new-image-ids" ]; then
        xargs -r podman rmi --force <"$work_dir/new-image-ids" >/dev/null 2>&1 || true
    fi
    for name in "$image" "$swift_image" "$base_image"; do
        podman rmi --force "$name" >/dev/null 2>&1 || true
    done
    remove_work_dir
}
on_exit() {
    local status=$?
    trap - EXIT
    say "removing the container, volume, images and $work_dir"
    remove_what_was_made
    exit "$status"
}
# A run killed outright (SIGKILL) left its names behind: clear them first.
[ -f "$work_dir/containers.conf" ] && export CONTAINERS_CONF=$work_dir/containers.conf
remove_what_was_made
unset CONTAINERS_CONF
# bash runs these after the foreground command (debootstrap, podman build) has ended, so cleanup never races it.
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$work_dir"

# podman's defaults do not fit these machines: crun refuses the hybrid cgroup setup (runc does not), and the
# default ulimits exceed what the machine allows. Within its hard limits: 20000 open files, 32768 processes.
nofile=20000; hard=$(ulimit -Hn); [ "$hard" != unlimited ] && [ "$hard" -lt "$nofile" ] && nofile=$hard
nproc=32768; hard=$(ulimit -Hu); [ "$hard" != unlimited ] && [ "$hard" -lt "$nproc" ] && nproc=$hard
cat >"$work_dir/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "runc"
EOF
export CONTAINERS_CONF=$work_dir/containers.conf
podman images --all --quiet --no-trunc | sort -u >"$work_dir/image-ids-before"

# ---- base images: Debian $suite from the mirror, slimmed as the official -slim images are
say "debootstrap $suite from $mirror"
rootfs=$work_dir/rootfs
debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$work_dir/debootstrap.log" 2>&1 \
    || { tail -n 20 "$work_dir/debootstrap.log" >&2; fail "debootstrap (log above)"; }
rm -f "$rootfs/etc/apt/sources.list"
cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security_mirror
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
# As Debian's container images: no documentation or translations, and apt keeps no packages or caches.
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
EOF
cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
EOF
find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
rm -rf --one-file-system "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* \
    "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log "$rootfs"/dev/*
tar -C "$rootfs" --numeric-owner -c . \
    | podman import --change 'CMD ["bash"]' - "$base_image" >"$work_dir/import.log" 2>&1 \
    || { tail -n 20 "$work_dir/import.log" >&2; fail "podman import of the base image (log above)"; }
rm -rf --one-file-system "$rootfs"

# The build stage's base, as the official swift image: the Debian packages the toolchain needs, and the toolchain
# itself copied in (the toolchain directory is the build context). Mounting it into the build instead leaves its
# mount point in the runtime image.
say "builder image: Debian packages the toolchain needs, and the toolchain from $swift_root"
cat >"$work_dir/Containerfile.swift" <<EOF
FROM $base_image
RUN export DEBIAN_FRONTEND=noninteractive && apt-get update && apt-get install -y --no-install-recommends \\
        binutils libc6-dev libgcc-12-dev libstdc++-12-dev zlib1g-dev libcurl4 libxml2 libedit2 libncurses6 \\
        libsqlite3-0 libz3-4 pkg-config tzdata ca-certificates \\
    && rm -rf /var/lib/apt/lists/*
COPY . $swift_root/
ENV PATH=$swift_root/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
EOF
podman build --quiet --pull=never --layers=false --format docker -f "$work_dir/Containerfile.swift" \
    -t "$swift_image" "$swift_root" >"$work_dir/swift-image.log" 2>&1 \
    || { tail -n 20 "$work_dir/swift-image.log" >&2; fail "the builder image (log above)"; }

# ---- the image, from docker/Dockerfile unchanged; --format docker keeps its HEALTHCHECK (OCI has none)
say "podman build -f docker/Dockerfile (a release build: minutes)"
build_start=$(date +%s%N)
podman build --pull=never --layers=false --format docker \
    --build-arg SWIFT_IMAGE="$swift_image" --build-arg RUNTIME_IMAGE="$base_image" \
    -f "$repo/docker/Dockerfile" -t "$image" "$repo" >"$work_dir/build.log" 2>&1 \
    || { tail -n 30 "$work_dir/build.log" >&2; fail "podman build (log above)"; }
build_seconds=$((($(date +%s%N) - build_start) / 1000000000))
podman images --all --quiet --no-trunc | sort -u | comm -13 "$work_dir/image-ids-before" - >"$work_dir/new-image-ids"
image_bytes=$(podman image inspect --format '{{.Size}}' "$image")
printf '   built in %d s; image %d MB (%d bytes)\n' "$build_seconds" $((image_bytes / 1000000)) "$image_bytes"

healthcheck=$(podman image inspect --format '{{json .Config.Healthcheck}}' "$image")
case $healthcheck in *healthz*) ;; *) fail "the image has no HEALTHCHECK (got $healthcheck)" ;; esac
if podman run --rm --entrypoint /bin/sh "$image" -c "test -e '$swift_root'" >/dev/null 2>&1; then
    fail "the runtime image holds $swift_root (the build's toolchain leaked into it)"
fi

# ---- run it: ports on 127.0.0.1 only, data in a named volume
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
podman volume create "$volume" >/dev/null
# podman runs HEALTHCHECK on a systemd timer, and without systemd it logs an error at every start and stop: its
# stderr is shown only when the step fails. The health check itself is run below (podman healthcheck run).
quiet_podman() { podman "$@" >/dev/null 2>"$work_dir/podman.err" || { cat "$work_dir/podman.err" >&2; return 1; }; }
quiet_podman run --detach --init --name "$container" -p "127.0.0.1:$port:8080" -p "127.0.0.1:$port:8080/udp" \
    -v "$volume:/data" "$image" || fail "podman run"
published=$(podman port "$container")
echo "   published: $(echo "$published" | tr '\n' ' ')"
echo "$published" | grep -v -q '127\.0\.0\.1:' && fail "a port is published beyond 127.0.0.1: $published"

wait_healthy() {
    local deadline=$((SECONDS + 60))
    until python3 "$repo/docker/smoke.py" healthz "$url" >/dev/null 2>&1; do
        [ "$(podman inspect --format '{{.State.Running}}' "$container")" = true ] \
            || { podman logs "$container" >&2; fail "the container stopped"; }
        [ $SECONDS -lt $deadline ] || { podman logs "$container" >&2; fail "no /healthz within 60 s"; }
        sleep 0.2
    done
}
stop_timed() {
    local start; start=$(date +%s%N)
    quiet_podman stop --time "$stop_limit_seconds" "$container" || fail "podman stop"
    stop_ms=$((($(date +%s%N) - start) / 1000000))
    stop_seconds=$((stop_ms / 1000)).$(printf '%03d' $((stop_ms % 1000)))
    local code; code=$(podman inspect --format '{{.State.ExitCode}}' "$container")
    [ "$code" = 0 ] || { podman logs "$container" >&2; fail "parlor exited with $code on SIGTERM (not a clean shutdown)"; }
    [ "$stop_ms" -lt $((stop_limit_seconds * 1000)) ] || fail "stop took ${stop_seconds} s (limit $stop_limit_seconds s)"
    echo "   stopped on SIGTERM in $stop_seconds s, exit code 0"
}

say "smoke checks on $url"
wait_healthy
podman healthcheck run "$container" >/dev/null || fail "the image's HEALTHCHECK reports unhealthy"
echo "   HEALTHCHECK: healthy"
uid=$(podman exec "$container" id -u)
[ "$uid" = 10001 ] || fail "parlor runs as uid $uid, not 10001"
echo "   uid inside: $uid"
python3 "$repo/docker/smoke.py" before "$url" "$work_dir/smoke-state.json"
secret_before=$(podman exec "$container" sha256sum /data/jwt-secret)
podman exec "$container" ls -ln /data

say "restart: the data and the JWT secret stay in the volume"
# The first stop has a member's WebSocket open: the graceful shutdown must close it with 1001 within the limit.
python3 "$repo/docker/smoke.py" hold "$url" "$work_dir/smoke-state.json" "$work_dir/holding" & hold_pid=$!
until [ -e "$work_dir/holding" ]; do
    kill -0 "$hold_pid" 2>/dev/null || { wait "$hold_pid" || true; fail "the WebSocket to hold open did not join"; }
    sleep 0.1
done
stop_timed
first_stop_seconds=$stop_seconds
wait "$hold_pid" || fail "the open WebSocket was not closed with 1001 on SIGTERM"
quiet_podman start "$container" || fail "podman start"
wait_healthy
secret_after=$(podman exec "$container" sha256sum /data/jwt-secret)
[ "$secret_before" = "$secret_after" ] || fail "the JWT secret changed across the restart"
echo "   /data/jwt-secret unchanged"
python3 "$repo/docker/smoke.py" after "$url" "$work_dir/smoke-state.json"
stop_timed

printf 'docker-check: OK (build %d s, image %d MB, stop %s s and %s s)\n' \
    "$build_seconds" $((image_bytes / 1000000)) "$first_stop_seconds" "$stop_seconds"
