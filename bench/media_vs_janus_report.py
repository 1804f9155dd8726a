#!/usr/bin/env python3
"""bench/media-vs-janus's table: per listener count, each server's CPU per forwarded packet (whole process, /proc),
loss, latency p50/p99 and the ratio; then the SRTP share perf saw in each server's last step, and issue 36's two
Janus targets, met or missed."""
import json
import os
import sys


def load(path):
    """A run, each step's figures in one dict (the generator groups them as delivery, latency and cpu)."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    run = json.load(open(path))
    run["steps"] = [{**s, **s.get("delivery", {}), **s.get("latency", {}), **s.get("cpu", {})} for s in run["steps"]]
    return run


def fmt(value, pattern="{:.2f}"):
    return "–" if value is None else pattern.format(value)


def perf_shares(path, groups):
    """Per group of DSO name fragments, the share of the process's samples (perf report --sort dso)."""
    shares = {name: 0.0 for name in groups}
    if not os.path.exists(path):
        return None
    for line in open(path):
        fields = line.split()
        if len(fields) < 2 or not fields[0].endswith("%"):
            continue
        for name, fragments in groups.items():
            if any(fragment in fields[-1] for fragment in fragments):
                shares[name] += float(fields[0].rstrip("%"))
    return shares


parlor_path, janus_path = sys.argv[1], sys.argv[2]
parlor, janus = load(parlor_path), load(janus_path)
if not parlor or not janus:
    sys.exit(f"missing results: {parlor_path if not parlor else janus_path}")
steps = {s["listeners"]: s for s in parlor["steps"]}
jsteps = {s["listeners"]: s for s in janus["steps"]}
print(f"\nParlor and Janus, 1 speaker, {parlor['payload_bytes']}-byte payloads; SRTP: Parlor {parlor['srtp_profile']}, Janus {janus['srtp_profile']}")
print("| listeners | Parlor µs/pkt | Janus µs/pkt | ratio P/J | Parlor loss | Janus loss | Parlor p50 / p99 | Janus p50 / p99 | Parlor / Janus cores |")
print("|---|---|---|---|---|---|---|---|---|")
for listeners in sorted(set(steps) | set(jsteps)):
    p, j = steps.get(listeners), jsteps.get(listeners)
    pc = p["server_microseconds_per_packet"] if p else None
    jc = j["server_microseconds_per_packet"] if j else None
    ratio = pc / jc if pc and jc else None
    print(f"| {listeners:,} | {fmt(pc)} | {fmt(jc)} | {fmt(ratio)} | {fmt(p and p['loss_percent'], '{:.3f} %')} "
          f"| {fmt(j and j['loss_percent'], '{:.3f} %')} | {fmt(p and p.get('p50_milliseconds'))} / {fmt(p and p.get('p99_milliseconds'))} ms "
          f"| {fmt(j and j.get('p50_milliseconds'))} / {fmt(j and j.get('p99_milliseconds'))} ms "
          f"| {fmt(p and p['server_cores'])} / {fmt(j and j['server_cores'])} |")
for run in (parlor, janus):
    if run.get("stopped_early"):
        print(f"{run['label']} stopped: {run['stopped_early']}")

base = os.path.dirname(janus_path)
jshare = perf_shares(os.path.join(base, "vs-janus-janus.perf.txt"),
                     {"libsrtp2": ["libsrtp2"], "NSS": ["libnss3", "libsoftokn3", "libfreebl", "libnspr4"], "kernel": ["[kernel"],
                      "libcrypto": ["libcrypto"], "glib": ["libglib", "libnice"]})
pshare = perf_shares(os.path.join(base, "vs-janus-parlor.perf.txt"), {"libcrypto": ["libcrypto"], "kernel": ["[kernel"], "parlor": ["parlor"]})
if jshare:
    print(f"\nperf, last step: Janus SRTP (libsrtp2 + NSS) {jshare['libsrtp2'] + jshare['NSS']:.1f} % of its samples "
          f"(libsrtp2 {jshare['libsrtp2']:.1f} %, NSS {jshare['NSS']:.1f} %), libcrypto {jshare['libcrypto']:.1f} %, "
          f"glib/libnice {jshare['glib']:.1f} %, kernel {jshare['kernel']:.1f} %")
if pshare:
    print(f"perf, last step: Parlor SRTP (libcrypto) {pshare['libcrypto']:.1f} %, parlor {pshare['parlor']:.1f} %, kernel {pshare['kernel']:.1f} %")

both = [n for n in sorted(steps) if n in jsteps and steps[n]["server_microseconds_per_packet"] and jsteps[n]["server_microseconds_per_packet"]]
ratios = [steps[n]["server_microseconds_per_packet"] / jsteps[n]["server_microseconds_per_packet"] for n in both]
clean = lambda run: max([s["listeners"] for s in run["steps"] if s["loss_percent"] == 0 and s["server_cores"] <= 1.0], default=0)
print("\n| target (issue 36, against Janus) | measured | result |")
print("|---|---|---|")
if ratios:
    print(f"| Parlor's CPU per forwarded packet ≤ 0.5 × Janus's at every listener count both reach | worst ratio {max(ratios):.2f} "
          f"({', '.join(f'{n:,}: {r:.2f}' for n, r in zip(both, ratios))}) | {'met' if max(ratios) <= 0.5 else 'missed'} |")
print(f"| more listeners at 0 % loss on one core than Janus | Parlor {clean(parlor):,}, Janus {clean(janus):,} (of the steps run) "
      f"| {'met' if clean(parlor) > clean(janus) else 'missed'} |")
