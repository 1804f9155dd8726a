#!/usr/bin/env python3
"""bench/media's table: one row per ramp step of each scenario, then issue 12's targets, met or missed."""
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


def targets(one):
    floor = floor_of(one)
    good = [s for s in one["steps"] if s["loss_percent"] < 1 and (s.get("media_thread_cores") or 0) < 1]
    best = max(good, key=lambda s: s["listeners"]) if good else None
    print("\n| target (issue 12) | measured | result |")
    print("|---|---|---|")
    if best:
        print(f"| ≥ 2,000 listeners of one speaker within one core (< 1 % loss) | {best['listeners']:,} listeners, loss {best['loss_percent']:.3f} %, "
              f"media thread {fmt(best.get('media_thread_cores'))} core | {'met' if best['listeners'] >= 2000 else 'missed'} |")
        cost = best.get("media_microseconds_per_packet")
        if cost is not None and floor:
            print(f"| ≤ 1.5 × (floor + SRTP protect) per forwarded packet | {cost:.2f} µs = {cost / floor:.2f} × {floor:.2f} µs "
                  f"(at {best['listeners']:,}) | {'met' if cost / floor <= 1.5 else 'missed'} |")
        p99 = best.get("p99_milliseconds")
        print(f"| forwarding p99 ≤ 2 ms | {fmt(p99)} ms (at {best['listeners']:,}) | {'met' if p99 is not None and p99 <= 2 else 'missed'} |")
    else:
        print("| ≥ 2,000 listeners of one speaker within one core | no step under 1 % loss | missed |")


runs = [json.load(open(path)) for path in sys.argv[1:] if os.path.exists(path) and os.path.getsize(path) > 0]
for run in runs:
    run["steps"] = [flat_step(s) for s in run["steps"]]
for run in runs:
    table(run)
one = next((run for run in runs if run["speakers"] == 1), None)
if one:
    targets(one)
