#!/usr/bin/env python3
"""bench/media-cascade's figures (issue 41): per-listener and per-link cost on the speaker's node, the 3-node
prediction against the measurement, and the link's added latency. Reads results/media-cascade-{local,link,link2,
spread,latency}.json; writes results/media-cascade-summary.json.

Cost unit: microseconds of a node's CPU (schedstat, all its threads: "process"; or its parlor-media* threads:
"media") per packet the speaker sent in the window."""
import json
import os
import statistics
import sys

KINDS = {"process": "runtime_cores", "media": "media_runtime_cores"}


def load(results, run):
    path = os.path.join(results, f"media-cascade-{run}.json")
    return json.load(open(path)) if os.path.exists(path) else None


def cost(step, node, kind):
    """µs of `node`'s CPU per speaker packet in `step`."""
    share = step["nodes"][node]
    return share[KINDS[kind]] * step["window_seconds"] / step["speaker_packets"] * 1e6


def fit(points):
    """Least-squares line through (x, y): (slope, intercept)."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)
    return slope, my - slope * mx


def alone_and_loaded(run, kind):
    """Node A's cost in the windows with no listener, and in those with listeners (each a list)."""
    alone = [cost(s, 0, kind) for s in run["steps"] if s["listeners"] == 0]
    loaded = [cost(s, 0, kind) for s in run["steps"] if s["listeners"] > 0]
    return alone, loaded


def span(values):
    return f"{statistics.fmean(values):.2f} (windows {', '.join(f'{v:.2f}' for v in values)})"


def step_line(step):
    parts = []
    for n in step["nodes"]:
        lat = n["latency"]
        p50, p95 = lat.get("p50_milliseconds"), lat.get("p95_milliseconds")
        parts.append(f"{'ABC'[n['node']]}: {n['listeners']} listeners, {n['runtime_cores']:.3f} core "
                     f"(media {n['media_runtime_cores']:.3f}), loss {n['loss_percent']:.2f} %"
                     + (f", p50/p95 {p50:.2f}/{p95:.2f} ms" if p50 is not None else ""))
    per_packet = 1e6 * step["window_seconds"] / step["speaker_packets"]
    threads = sorted(step["nodes"][0].get("thread_cores", {}).items(), key=lambda t: -t[1])
    busy = ", ".join(f"{name} {cores * per_packet:.1f}" for name, cores in threads if cores * per_packet >= 1)
    return f"  N={step['listeners']}: " + "; ".join(parts) + f"\n    A's threads, µs per speaker packet: {busy}"


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
    runs = {name: load(results, name) for name in ("local", "link", "link2", "spread", "latency")}
    summary = {}
    for name, run in runs.items():
        if run is None:
            continue
        print(f"\n{name}: {len(run['steps'][0]['nodes'])} node(s), 1 speaker on A ({run['srtp_profile']})"
              + (f"; stopped early: {run['stopped_early']}" if run.get("stopped_early") else ""))
        for step in run["steps"]:
            print(step_line(step))
        metrics = os.path.join(results, f"media-cascade-{name}.metrics.txt")
        if os.path.exists(metrics):
            lines = [l.strip() for l in open(metrics) if l.startswith(("#", "parlor_media_link_packets_sent", "parlor_media_link_packets_received"))]
            print("  counters: " + " | ".join(lines))
    for kind in KINDS:
        figures = {}
        local, link, spread = runs["local"], runs["link"], runs["spread"]
        if local:
            points = [(s["nodes"][0]["listeners"], cost(s, 0, kind)) for s in local["steps"]]
            figures["per_listener_us"], figures["alone_fit_us"] = fit(points)
        # Each difference needs both kinds of window (CASCADE_LINK=10,10 has no speaker-alone one).
        if link and all(alone_and_loaded(link, kind)):
            alone, loaded = alone_and_loaded(link, kind)
            figures["link_alone_us"], figures["link_loaded_us"] = statistics.fmean(alone), statistics.fmean(loaded)
            figures["per_link_us"] = figures["link_loaded_us"] - figures["link_alone_us"]
            print(f"\n[{kind}] link run, A µs per speaker packet: alone {span(alone)}; listeners on B only {span(loaded)}")
        if runs["link2"] and "per_link_us" in figures and all(alone_and_loaded(runs["link2"], kind)):
            alone, loaded = alone_and_loaded(runs["link2"], kind)
            figures["two_links_us"] = statistics.fmean(loaded) - statistics.fmean(alone)
            print(f"[{kind}] link2 run, A µs per speaker packet: alone {span(alone)}; listeners on B and C only {span(loaded)}: "
                  f"two links {figures['two_links_us']:.2f} µs, the second adds {figures['two_links_us'] - figures['per_link_us']:.2f}")
        if spread and "per_listener_us" in figures and "per_link_us" in figures and all(alone_and_loaded(spread, kind)):
            alone, loaded = alone_and_loaded(spread, kind)
            loaded_steps = [s for s in spread["steps"] if s["listeners"] > 0]
            own = statistics.fmean(s["nodes"][0]["listeners"] for s in loaded_steps)
            others = len(spread["steps"][0]["nodes"]) - 1
            predicted = own * figures["per_listener_us"] + others * figures["per_link_us"]
            measured = statistics.fmean(loaded) - statistics.fmean(alone)
            figures.update(spread_own_listeners=own, spread_links=others, spread_alone_us=statistics.fmean(alone),
                           spread_measured_us=measured, spread_predicted_us=predicted,
                           spread_difference_percent=100 * (measured - predicted) / predicted)
            print(f"[{kind}] spread run, A µs per speaker packet: alone {span(alone)}; loaded {span(loaded)}")
        if figures:
            print(f"[{kind}] per-listener {figures.get('per_listener_us', float('nan')):.3f} µs (local fit, alone at "
                  f"{figures.get('alone_fit_us', float('nan')):.2f}); per-link {figures.get('per_link_us', float('nan')):.3f} µs")
        if "spread_measured_us" in figures:
            f = figures
            verdict = "within" if abs(f["spread_difference_percent"]) <= 10 else "NOT within"
            if "two_links_us" in f and f["spread_links"] == 2:
                alt = f["spread_own_listeners"] * f["per_listener_us"] + f["two_links_us"]
                f["spread_predicted_with_link2_us"] = alt
                print(f"[{kind}] with link2's measured two links instead of 2 × per-link: predicted {alt:.2f} µs, "
                      f"{100 * (f['spread_measured_us'] - alt) / alt:+.1f} %")
            print(f"[{kind}] A above its speaker-alone windows: measured {f['spread_measured_us']:.2f} µs vs predicted "
                  f"{f['spread_own_listeners']:.0f} × {f['per_listener_us']:.3f} + {f['spread_links']} × {f['per_link_us']:.3f} = "
                  f"{f['spread_predicted_us']:.2f} µs: {f['spread_difference_percent']:+.1f} % ({verdict} 10 %)")
        summary[kind] = figures
    for name in ("latency", "spread"):
        run = runs[name]
        if not run:
            continue
        rows = []
        for step in (s for s in run["steps"] if s["listeners"] > 0):
            lat = [n["latency"] for n in step["nodes"]]
            if any(l.get("p50_milliseconds") is None for l in lat):
                continue
            rows.append([(l["p50_milliseconds"], l["p95_milliseconds"]) for l in lat])
        if not rows:
            continue
        added = [r[1][0] - r[0][0] for r in rows]
        summary[f"{name}_latency"] = {"windows": rows, "added_p50_ms": added}
        print(f"\n{name} latency, speaker → listener p50/p95 ms per window: "
              + "; ".join(" ".join(f"{'ABC'[i]} {p50:.2f}/{p95:.2f}" for i, (p50, p95) in enumerate(r)) for r in rows))
        print(f"  the link adds at p50 (B − A): {', '.join(f'{a:+.2f}' for a in added)} ms "
              f"({'within' if max(added) <= 2 else 'NOT within'} 2 ms)")
    with open(os.path.join(results, "media-cascade-summary.json"), "w") as out:
        json.dump(summary, out, indent=2, sort_keys=True)


if __name__ == "__main__":
    main()
