"""The Node `ws` peer's part of bench/run's report (issue 37): Parlor and bench/node-peer/server.js run the same
parlor-bench scenario in alternating rounds (Parlor, Node, Parlor, Node ...); each round's ratio is Parlor's server
CPU per delivered event over Node's, and the figure is the median of the rounds' ratios."""
import glob
import json
import os
import re
import statistics

TARGET = 0.8  # issue 37: Parlor's CPU per delivered event <= 0.8 x the Node ws peer's, in the same run
SIZES = (("room-10", "10"), ("room-100", "100"))


def load_runs(raw):
    """{size: {round: {"parlor": run, "node": run}}} from the raw files peer-<size>-<server>-<round>.json."""
    runs = {}
    for path in glob.glob(os.path.join(raw, "peer-*.json")):
        match = re.match(r"peer-(.+)-(parlor|node)-(\d+)\.json$", os.path.basename(path))
        if not match:
            continue
        try:
            with open(path) as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            continue
        runs.setdefault(match.group(1), {}).setdefault(int(match.group(3)), {})[match.group(2)] = data
    return runs


def us_per_event(run):
    return run.get("server", {}).get("cpu_us_per_event") or 0


def delivered(run):
    """Events received in the window over what its completed leaves and joins announce (a leave and a join in a room
    of n are 2n deliveries): well under 1 means a server (or the generator) fell behind and events were still queued
    when the window closed, so its CPU per event is not a steady state's."""
    expected = run["joins_per_second"] * 2 * run["members_per_room"]
    return run["events_per_second"] / expected if expected else 0


def summarise(rounds):
    """The complete rounds of one size: per-round ratios, medians and what the table needs."""
    pairs = [(n, r["parlor"], r["node"]) for n, r in sorted(rounds.items())
             if "parlor" in r and "node" in r and us_per_event(r["parlor"]) and us_per_event(r["node"])]
    if not pairs:
        return None
    ratios = [us_per_event(p) / us_per_event(n) for _, p, n in pairs]
    median = lambda values: statistics.median(values) if values else 0
    both = [run for _, p, n in pairs for run in (p, n)]
    return {
        "rounds": len(pairs),
        "ratios": ratios,
        "ratio_median": median(ratios),
        "parlor_cpu_us_per_event_median": median([us_per_event(p) for _, p, _ in pairs]),
        "node_cpu_us_per_event_median": median([us_per_event(n) for _, _, n in pairs]),
        "parlor_peak_rss_mib_median": median([p.get("server", {}).get("peak_rss_mib", 0) for _, p, _ in pairs]),
        "node_peak_rss_mib_median": median([n.get("server", {}).get("peak_rss_mib", 0) for _, _, n in pairs]),
        "parlor_joins_per_second_median": median([p["joins_per_second"] for _, p, _ in pairs]),
        "node_joins_per_second_median": median([n["joins_per_second"] for _, _, n in pairs]),
        "errors": sum(run["errors"] for run in both),
        "window_seconds": median([run["window_seconds"] for run in both]),
        "members_per_room": pairs[0][1]["members_per_room"],
        "others_cores_max": max(run["machine"]["other_processes_cores"] for run in both),
        "steal_cores_max": max(run["machine"].get("steal_cores", 0) for run in both),
        "delivered_fraction_min": min(delivered(run) for run in both),
        "runs": [{"round": r, "server": name, "cpu_us_per_event": us_per_event(run), "delivered_fraction": delivered(run),
                  "events_per_second": run["events_per_second"], "joins_per_second": run["joins_per_second"],
                  "peak_rss_mib": run.get("server", {}).get("peak_rss_mib", 0),
                  "fanout_p99_ms": run["fanout"].get("p99_ms", 0), "errors": run["errors"],
                  "generator_cpu_percent": run["generator"]["cpu_percent_of_one_core"],
                  "others_cores": run["machine"]["other_processes_cores"],
                  "steal_cores": run["machine"].get("steal_cores", 0)}
                 for r, p, n in pairs for name, run in (("parlor", p), ("node", n))],
    }


def rows(raw, row, figures):
    """Adds the table's rows through report.py's `row` and `figures`; returns the summaries for latest.json."""
    runs = load_runs(raw)
    summaries = {}
    for size, members in SIZES:
        if size not in runs:
            continue
        s = summarise(runs[size])
        if not s:
            row(f"CPU per delivered event vs Node ws, rooms of {members}", f"<= {TARGET}× Node ws", "no complete round", False)
            continue
        summaries[size] = s
        spread = f"{min(s['ratios']):.2f}–{max(s['ratios']):.2f}"
        errors = f"; {s['errors']} errors" if s["errors"] else ""
        if s["delivered_fraction_min"] < 0.9:
            errors += f"; a run delivered only {s['delivered_fraction_min']:.0%} of its events in the window (behind)"
        row(f"CPU per delivered event vs Node ws, rooms of {members}",
            f"<= {TARGET}× Node ws (median of alternating rounds)",
            f"{s['ratio_median']:.2f}× ({s['rounds']} rounds of {s['window_seconds']:.0f} s, {spread}): "
            f"{s['parlor_cpu_us_per_event_median']:.2f} vs {s['node_cpu_us_per_event_median']:.2f} µs; "
            f"RSS {s['parlor_peak_rss_mib_median']:.0f} vs {s['node_peak_rss_mib_median']:.0f} MiB; "
            f"{s['parlor_joins_per_second_median']:,.0f} vs {s['node_joins_per_second_median']:,.0f} joins/s{errors}",
            s["ratio_median"] <= TARGET and s["errors"] == 0 and s["rounds"] >= 5,
            f"node_peer_{size}_ratio", s["ratio_median"])
        for server in ("parlor", "node"):
            figures[f"node_peer_{size}_{server}_cpu_us_per_event"] = s[f"{server}_cpu_us_per_event_median"]
    return summaries


def print_rounds(summaries):
    """Each round's runs, after the cost curve: what the medians were taken from."""
    if not summaries:
        return
    print()
    print("Node ws peer   round  server  µs/event  events/s  delivered  joins/s  peak MiB  fan-out p99 ms  gen CPU%  others  "
          "steal  ratio")
    for size, s in summaries.items():
        for index, run in enumerate(s["runs"]):
            ratio = f"{s['ratios'][index // 2]:.2f}" if run["server"] == "node" else ""
            print(f"{size:<14} {run['round']:>5}  {run['server']:<6} {run['cpu_us_per_event']:>9.2f} "
                  f"{run['events_per_second']:>9.0f} {run['delivered_fraction']:>10.0%} {run['joins_per_second']:>8.0f} {run['peak_rss_mib']:>9.1f} "
                  f"{run['fanout_p99_ms']:>15.2f} {run['generator_cpu_percent']:>9.0f} {run['others_cores']:>7.2f} "
                  f"{run['steal_cores']:>6.2f}  {ratio}")
