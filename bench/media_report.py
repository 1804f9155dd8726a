#!/usr/bin/env python3
"""bench/media's table: one row per ramp step of each scenario, then issue 36's targets, met or missed."""
import json
import os
import sys


def fmt(value, pattern="{:.2f}"):
    return "–" if value is None else pattern.format(value)


def flat_step(step):
    """A step's figures in one dict: the generator groups them as delivery, latency and cpu."""
    return {**step, **step.get("delivery", {}), **step.get("latency", {}), **step.get("cpu", {})}


def floor_of(run):
    floor = run.get("floor")
    return None if not floor else floor["udp_microseconds"] + floor["srtp_microseconds"]


def table(run):
    floor = floor_of(run)
    print(f"\n{run['label']}: {run['speakers']} speaker(s), {run['payload_bytes']}-byte payloads, SRTP {run['srtp_profile']}")
    print("| listeners | forwarded pkt/s | loss | worst listener | latency p50 / p99 / max | media thread | µs/pkt (media thread) "
          "| × (floor + SRTP) | server µs/pkt | generator | others |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for s in run["steps"]:
        multiple = None if floor is None or s.get("media_microseconds_per_packet") is None else s["media_microseconds_per_packet"] / floor
        print(f"| {s['listeners']:,} | {s['forwarded_per_second']:,.0f} | {s['loss_percent']:.3f} % | {s['worst_listener_loss_percent']:.2f} % "
              f"| {fmt(s.get('p50_milliseconds'))} / {fmt(s.get('p99_milliseconds'))} / {fmt(s.get('max_milliseconds'))} ms "
              f"| {fmt(s.get('media_thread_cores'))} core | {fmt(s.get('media_microseconds_per_packet'))} | {fmt(multiple, '{:.2f}×')} "
              f"| {s['server_microseconds_per_packet']:.2f} | {s['generator_cores']:.2f} | {s['other_cores']:.2f} |")
    f = run.get("floor")
    if f:
        print(f"floor: {f['udp_microseconds']:.2f} µs per {f['datagram_bytes']}-byte datagram (sendmmsg, {f['udp_datagrams']:,} sent) "
              f"+ {f['srtp_microseconds']:.2f} µs per SRTP protect ({f['srtp_profile']}, round-robin over one session per socket, {f['srtp_packets']:,}; "
              f"{f['srtp_one_session_microseconds']:.2f} µs with one session) = {floor:.2f} µs "
              f"(least of 3 rounds each: {', '.join(f'{r:.2f}' for r in f['udp_rounds'])} and {', '.join(f'{r:.2f}' for r in f['srtp_rounds'])})")
    if run.get("stopped_early"):
        print(f"stopped: {run['stopped_early']}")


def lossless(step):
    """0 % loss: every listener got every packet of the window."""
    return step["loss_percent"] <= 0.0005


def targets(one, eight):
    """Issue 36's targets, graded for one media worker (bench/media's default)."""
    floor = floor_of(one)
    clean = [s for s in one["steps"] if lossless(s)]
    best = max(clean, key=lambda s: s["listeners"]) if clean else None
    at2000 = next((s for s in one["steps"] if s["listeners"] == 2000), None)
    print("\n| target (issue 36, one media worker) | measured | result |")
    print("|---|---|---|")
    if best:
        print(f"| one speaker: ≥ 2,000 listeners at 0 % loss | {best['listeners']:,} (media thread {fmt(best.get('media_thread_cores'))} core, "
              f"generator {best['generator_cores']:.2f}, others {best['other_cores']:.2f}) | {'met' if best['listeners'] >= 2000 else 'missed'} |")
    else:
        print("| one speaker: ≥ 2,000 listeners at 0 % loss | no step without loss | missed |")
    if floor:
        for s in one["steps"]:
            cost = s.get("media_microseconds_per_packet")
            if cost is None:
                continue
            print(f"| CPU per forwarded packet ≤ 1.3 × (floor + protect), {s['listeners']:,} listeners | {cost:.2f} µs = {cost / floor:.2f} × "
                  f"{floor:.2f} µs (loss {s['loss_percent']:.2f} %) | {'met' if cost / floor <= 1.3 else 'missed'} |")
    if at2000:
        p99 = at2000.get("p99_milliseconds")
        print(f"| fan-out p99 ≤ 25 ms at 2,000 listeners | {fmt(p99)} ms (loss {at2000['loss_percent']:.2f} %) "
              f"| {'met' if p99 is not None and p99 <= 25 and lossless(at2000) else 'missed'} |")
    else:
        print("| fan-out p99 ≤ 25 ms at 2,000 listeners | no 2,000 step | missed |")
    if eight:
        at250 = next((s for s in eight["steps"] if s["listeners"] == 250), None)
        if at250:
            print(f"| eight speakers, 250 listeners: 0 % loss | {at250['loss_percent']:.3f} % | {'met' if lossless(at250) else 'missed'} |")
        else:
            reached = max((s["listeners"] for s in eight["steps"]), default=0)
            print(f"| eight speakers, 250 listeners: 0 % loss | the ramp stopped at {reached:,} | missed |")


runs = [json.load(open(path)) for path in sys.argv[1:] if os.path.exists(path) and os.path.getsize(path) > 0]
for run in runs:
    run["steps"] = [flat_step(s) for s in run["steps"]]
for run in runs:
    table(run)
one = next((run for run in runs if run["speakers"] == 1), None)
eight = next((run for run in runs if run["speakers"] == 8), None)
if one and "-w" not in one["label"]:
    targets(one, eight)
