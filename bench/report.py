#!/usr/bin/env python3
"""Reads the raw outputs of bench/run, prints the one results table, writes results/latest.json and draws the
charts with gnuplot."""
import argparse
import glob
import json
import os
import re
import subprocess
import time

import audience_report
import node_peer_report
from charts import draw


def load(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def parse_wrk(path):
    try:
        text = open(path).read()
    except OSError:
        return None
    result = {"requests_per_second": float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))}
    unit = {"us": 1e-3, "ms": 1.0, "s": 1e3}
    for percent in ("50", "90", "99"):
        match = re.search(rf"^\s+{percent}%\s+([\d.]+)(us|ms|s)", text, re.M)
        if match:
            result[f"p{percent}_ms"] = float(match.group(1)) * unit[match.group(2)]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    result["non_2xx"] = int(non2xx.group(1)) if non2xx else 0
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    result["socket_errors"] = sum(int(g) for g in errors.groups()) if errors else 0
    total = re.search(r"(\d+) requests in ([\d.]+)", text)
    result["requests"] = int(total.group(1)) if total else 0
    ticks = re.search(r"server_cpu_ticks: (\d+) clk_tck: (\d+)", text)
    if ticks and result["requests"]:
        cpu = int(ticks.group(1)) / int(ticks.group(2))
        result["server_cpu_seconds"] = cpu
        result["server_cpu_us_per_request"] = cpu / result["requests"] * 1e6
    return result


def floor_figure(raw):
    """The floor probes of this run (parlor-bench --floor-probe, before and after the WebSocket scenarios)."""
    probes = [p for p in (load(path) for path in sorted(glob.glob(os.path.join(raw, "floor-*.json")))) if p]
    if not probes:
        return None
    values = [p["cpu_us_per_writev"] for p in probes]
    return {"cpu_us_per_writev": sum(values) / len(values), "probes": probes,
            "min": min(values), "max": max(values)}


def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        return ""


def promote(latest, committed):
    """Copies the figures of a run into the committed result (done deliberately, then committed with the change)."""
    data = load(latest)
    if not data or "figures" not in data:
        raise SystemExit(f"{latest} has no figures (run bench/run first)")
    record = {"commit": data.get("commit", ""), "generated_at": data["generated_at"], "quick": data["quick"],
              "machine": data["machine"], "nice": data["nice"], "databases": data["databases"],
              "figures": data["figures"]}
    old = load(committed) or {}
    # A partial run (BENCH_ONLY) keeps the committed figures it did not measure.
    record["figures"] = {**old.get("figures", {}), **data["figures"]}
    # Each promoted run also stays beside it, named by when it ran and its commit, so the earlier ones remain.
    stamp = record["generated_at"][:16].replace(":", "")
    results = os.path.dirname(os.path.abspath(committed))
    kept = os.path.join(results, f"promoted-{stamp}-{record['commit'] or 'run'}.json")
    for path in (committed, kept):
        with open(path, "w") as handle:
            json.dump(record, handle, indent=2, sort_keys=True)
            handle.write("\n")
    print(f"wrote {committed} and {kept} ({len(data['figures'])} figures from {data.get('commit') or 'a run'})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--raw")
    parser.add_argument("--out", required=True)
    parser.add_argument("--charts")
    parser.add_argument("--quick", default="0")
    parser.add_argument("--sigterm-ignored", type=int, default=0)
    parser.add_argument("--machine", default="")
    parser.add_argument("--nice", default="0")
    parser.add_argument("--db-dir", default="")
    parser.add_argument("--committed", default="", help="the committed result to compare with (results/committed.json)")
    parser.add_argument("--promote", action="store_true", help="copy --out's figures into --committed and stop")
    args = parser.parse_args()
    if args.promote:
        promote(args.out, args.committed)
        return
    raw = args.raw
    quick = args.quick == "1"

    ws = {}
    for path in sorted(glob.glob(os.path.join(raw, "ws-*.json"))):
        data = load(path)
        if data:
            ws[data["label"]] = data
    startup = load(os.path.join(raw, "startup.json")) or {}
    populated = load(os.path.join(raw, "startup-populated.json")) or {}
    http = {
        "rooms": [r for r in (parse_wrk(os.path.join(raw, f"wrk-rooms-{i}.txt")) for i in (1, 2)) if r],
        "nginx": [r for r in (parse_wrk(os.path.join(raw, f"wrk-nginx-{i}.txt")) for i in (1, 2)) if r],
        "auth": parse_wrk(os.path.join(raw, "wrk-auth.txt")),
        "server": load(os.path.join(raw, "http-server.json")),
        "logs": load(os.path.join(raw, "http-logs.json")),
    }
    try:
        http["rooms_body_bytes"] = int(open(os.path.join(raw, "rooms-bytes.txt")).read())
    except OSError:
        pass

    floor = floor_figure(raw)
    floor_us = floor["cpu_us_per_writev"] if floor else None
    committed_record = load(args.committed) if args.committed else None
    committed = (committed_record or {}).get("figures", {})
    figures = {}  # key -> value: what --promote keeps, and what the next run compares with

    def multiple(us):
        return f" = {us / floor_us:.2f}× floor" if floor_us and us else ""

    def change(key):
        """The committed figure and the change, for the table's last two columns."""
        if key not in figures or key not in committed or not committed[key]:
            return ("", "")
        old, new = committed[key], figures[key]
        return (f"{old:,.4g}", f"{(new - old) / old * 100:+.0f}%")

    rows = []  # metric, target, measured, verdict, committed, change

    def row(metric, target, measured, ok, key=None, value=None):
        if key is not None and value is not None:
            figures[key] = value
        rows.append((metric, target, measured, "pass" if ok else ("miss" if ok is False else "-"))
                    + (change(key) if key else ("", "")))

    if floor_us:
        row("floor: sender CPU per writev, 200 B frame to loopback", "-",
            f"{floor_us:.2f} µs ({', '.join('%.2f' % p['cpu_us_per_writev'] for p in floor['probes'])}; "
            f"{floor['probes'][0]['sockets']} sockets)", None, "floor_us", floor_us)

    hold = ws.get("hold-10k")
    hold_seconds = 15 if quick else 60
    if hold:
        held_min = hold["connections_held_min"]
        row("WebSocket connections held (10k in 1,000 rooms)", f"10,000 for {hold_seconds} s",
            f"{held_min:,} min, {hold['connections_held']:,} at end, {hold['window_seconds']:.0f} s, "
            f"{hold['pings_answered']:,} pings answered",
            held_min >= 10000 and hold["window_seconds"] >= hold_seconds - 1)
        server = hold.get("server", {})
        row("peak server RSS (VmHWM), 10k connections", "<= 80 MiB", f"{server.get('peak_rss_mib', 0):.1f} MiB",
            server.get("peak_rss_mib", 1e9) <= 80, "hold_peak_rss_mib", server.get("peak_rss_mib"))
        row("server CPU, 10k connections, 1,000 joins/s", "<= 25% of a core",
            f"{server.get('cpu_percent_of_one_core', 0):.0f}% of a core", server.get("cpu_percent_of_one_core", 1e9) <= 25,
            "hold_cpu_percent", server.get("cpu_percent_of_one_core"))
        fan = hold["fanout"]
        row("fan-out p99, 1,000 joins/s into rooms of 10", "<= 3 ms",
            f"{fan.get('p99_ms', float('nan')):.2f} ms (p50 {fan.get('p50_ms', float('nan')):.2f}, "
            f"{hold['joins_per_second']:.0f} joins/s)", fan.get("p99_ms", 1e9) <= 3, "hold_fanout_p99_ms", fan.get("p99_ms"))
        row("errors in that run", "0", f"{hold['errors']} {hold['error_kinds'] or ''}".strip(), hold["errors"] == 0)
        tmpfs = ws.get("hold-10k-tmpfs")
        if tmpfs:
            fan = tmpfs["fanout"]
            row("the same with the database on tmpfs: fan-out p99", "-",
                f"{fan.get('p99_ms', float('nan')):.2f} ms (p50 {fan.get('p50_ms', float('nan')):.2f}, "
                f"{tmpfs.get('server', {}).get('cpu_percent_of_one_core', 0):.0f}% of a core, {tmpfs['errors']} errors)",
                None, "hold_tmpfs_fanout_p99_ms", fan.get("p99_ms"))
        join = hold["join_rtt"]
        row("join round trip p50 / p99 / p99.9 (same run)", "-",
            f"{join.get('p50_ms', 0):.2f} / {join.get('p99_ms', 0):.2f} / {join.get('p999_ms', 0):.2f} ms", None)
        row("events delivered per second (same run)", "-", f"{hold['events_per_second']:,.0f}", None)
        us = server.get("cpu_us_per_event", 0)
        row("server CPU per delivered event (same run)", "-", f"{us:.1f} µs{multiple(us)}", None,
            "hold_cpu_us_per_event", us)
    if ws:
        best = max(ws.values(), key=lambda d: d["events_per_second"])
        server = best.get("server", {})
        us = server.get("cpu_us_per_event", 0)
        row("server CPU per delivered event at the highest rate", "-",
            f"{us:.2f} µs{multiple(us)} at {best['events_per_second']:,.0f} events/s ({best['label']})", None,
            "best_cpu_us_per_event", us)
        # The targets are defined at the rate where the generator uses at most half a core (the -at-half-core runs);
        # a run without them (BENCH_ONLY, an older raw directory) falls back to the fixed rate, and says so.
        for label, size, bound in (("room-10", "10", 1.3), ("room-100", "100", 1.1), ("room-1000", "1,000", 1.1)):
            d = ws.get(f"{label}-at-half-core") or ws.get(label)
            if not d:
                continue
            us = d.get("server", {}).get("cpu_us_per_event", 0)
            generator = d["generator"]["cpu_percent_of_one_core"]
            row(f"server CPU per delivered event, rooms of {size}", f"<= {bound}× floor, generator <= 50%",
                f"{us:.2f} µs{multiple(us)} at {d['events_per_second']:,.0f} events/s ({d['joins_per_second']:,.0f} "
                f"joins/s, generator {generator:.0f}% of a core)",
                (us <= bound * floor_us and generator <= 50) if floor_us else None, f"{d['label']}_cpu_us_per_event", us)
        big = ws.get("room-1000")
        if big:
            p99 = big["fanout"].get("p99_ms", 1e9)
            row("fan-out p99, rooms of 1,000", "<= 10 ms", f"{p99:.2f} ms (p50 {big['fanout'].get('p50_ms', 0):.2f})",
                p99 <= 10, "room-1000_fanout_p99_ms", p99)
        gen = best["generator"]
        row("generator CPU in that run", "-", f"{gen['cpu_percent_of_one_core']:.0f}% of a core; other processes "
            f"{best['machine']['other_processes_cores']:.2f} cores, stolen by the host "
            f"{best['machine'].get('steal_cores', 0):.2f}", None)
    # The Node ws peer: same generator and scenario, alternating rounds (bench/node_peer_report.py).
    peer = node_peer_report.rows(raw, row, figures)
    # One stage room of 10,000 (bench/audience_report.py).
    audience = audience_report.rows(raw, row, figures)
    if http["rooms"] and http["nginx"]:
        parlor = max(r["requests_per_second"] for r in http["rooms"])
        nginx = max(r["requests_per_second"] for r in http["nginx"])
        errors = sum(r["non_2xx"] + r["socket_errors"] for r in http["rooms"])
        row("GET /rooms (20 rooms) vs nginx static file", ">= 120% of nginx",
            f"{parlor:,.0f} vs {nginx:,.0f} req/s = {100 * parlor / nginx:.0f}%"
            + (f", {errors} errors" if errors else ""), parlor >= 1.2 * nginx and errors == 0,
            "rooms_percent_of_nginx", 100 * parlor / nginx)
        cpu = lambda runs: min(r.get("server_cpu_us_per_request", 0) for r in runs)
        row("server CPU per request: GET /rooms vs nginx", "-",
            f"{cpu(http['rooms']):.1f} µs vs {cpu(http['nginx']):.1f} µs = {100 * cpu(http['nginx']) / max(cpu(http['rooms']), 1e-9):.0f}%",
            None, "rooms_cpu_us_per_request", cpu(http["rooms"]))
    if http.get("logs"):
        logs = http["logs"]
        row("access log lines written to a file during GET /rooms", "both",
            f"Parlor {logs['parlor_get_rooms_lines']:,} (info), nginx {logs['nginx_access_lines']:,} (access_log)",
            logs["parlor_get_rooms_lines"] > 0 and logs["nginx_access_lines"] > 0)
    if http["auth"]:
        auth = http["auth"]
        row("POST /auth", ">= 10,000 req/s",
            f"{auth['requests_per_second']:,.0f} req/s (p99 {auth.get('p99_ms', 0):.2f} ms, "
            f"{auth.get('server_cpu_us_per_request', 0):.1f} µs CPU/request"
            + (f", {auth['non_2xx']} non-2xx" if auth["non_2xx"] else "") + ")",
            auth["requests_per_second"] >= 10000 and auth["non_2xx"] == 0, "auth_cpu_us_per_request",
            auth.get("server_cpu_us_per_request"))
    if startup:
        row("start to listening, existing database (median)", "<= 50 ms",
            f"{startup['existing']['median_ms']:.1f} ms (min {startup['existing']['min_ms']:.1f}, max "
            f"{startup['existing']['max_ms']:.1f}, {startup['existing']['runs']} runs)", startup["existing"]["median_ms"] <= 50,
            "startup_existing_ms", startup["existing"]["median_ms"])
        row("start to listening, fresh database + migrations", "<= 200 ms",
            f"{startup['fresh']['median_ms']:.1f} ms (min {startup['fresh']['min_ms']:.1f}, max "
            f"{startup['fresh']['max_ms']:.1f})", startup["fresh"]["median_ms"] <= 200)
    if populated:
        p = populated["existing_populated"]
        row("start to listening, database of the HTTP run", "<= 50 ms", f"{p['median_ms']:.1f} ms", p["median_ms"] <= 50)
    if args.sigterm_ignored:
        row("servers that ignored SIGTERM (killed after 6 s)", "0", str(args.sigterm_ignored), False)

    base = (committed_record or {}).get("commit") or "committed"
    header = ("metric", "target", "measured", "result", base, "change")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(6)]
    print()
    print("Parlor bench" + (" (QUICK: short durations, not the standard run)" if quick else "")
          + f" — {args.machine}, databases on {args.db_dir}, nice {args.nice}"
          + (f"; compared with {args.committed} ({base}, {committed_record.get('generated_at', '')})"
             if committed_record else "; no committed result to compare with"))
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))

    curve = []
    for label in ("conn-1k", "conn-5k", "hold-10k", "hold-10k-tmpfs", "room-2", "room-10", "room-100", "room-1000",
                  "room-10-at-half-core", "room-100-at-half-core", "room-1000-at-half-core"):
        d = ws.get(label)
        if not d:
            continue
        s = d.get("server", {})
        curve.append({"label": label, "clients": d["clients"], "members_per_room": d["members_per_room"],
                      "joins_per_second": d["joins_per_second"], "events_per_second": d["events_per_second"],
                      "server_cpu_us_per_event": s.get("cpu_us_per_event"),
                      "events_per_server_cpu_second": s.get("events_per_cpu_second"),
                      "server_cpu_percent": s.get("cpu_percent_of_one_core"), "peak_rss_mib": s.get("peak_rss_mib"),
                      "fanout_p50_ms": d["fanout"].get("p50_ms"), "fanout_p99_ms": d["fanout"].get("p99_ms"),
                      "join_p99_ms": d["join_rtt"].get("p99_ms"), "errors": d["errors"],
                      "generator_cpu_percent": d["generator"]["cpu_percent_of_one_core"],
                      "other_processes_cores": d["machine"]["other_processes_cores"],
                      "steal_cores": d["machine"].get("steal_cores", 0)})
    if curve:
        print()
        print("cost curve              clients  members  joins/s  events/s  srv CPU%  µs/event  ×floor  events/CPU-s  peak MiB  "
              "fan-out p50/p99 ms  gen CPU%  others  steal  µs/event committed, change")
        for c in curve:
            us = c["server_cpu_us_per_event"] or 0
            key = f"{c['label']}_cpu_us_per_event"
            figures[key] = us
            figures[f"{c['label']}_fanout_p99_ms"] = c["fanout_p99_ms"] or 0
            old, delta = change(key)
            print(f"{c['label']:<22} {c['clients']:>8} {c['members_per_room']:>8.0f} {c['joins_per_second']:>8.0f} "
                  f"{c['events_per_second']:>9.0f} {c['server_cpu_percent'] or 0:>9.0f} {us:>9.2f} "
                  f"{(us / floor_us if floor_us else 0):>7.2f} "
                  f"{c['events_per_server_cpu_second'] or 0:>13.0f} {c['peak_rss_mib'] or 0:>9.1f} "
                  f"{c['fanout_p50_ms'] or 0:>9.2f}/{c['fanout_p99_ms'] or 0:<9.2f} {c['generator_cpu_percent']:>8.0f} "
                  f"{c['other_processes_cores']:>7.2f}  {c['steal_cores']:>5.2f}  {old:>9} {delta}")
        stolen = max(curve, key=lambda c: c["steal_cores"])
        if stolen["steal_cores"] >= 0.1:
            # Steal time is the host running other machines on these virtual CPUs: latency tails grow with it.
            print(f"note: the host took up to {stolen['steal_cores']:.2f} cores ({stolen['label']}) during this run; "
                  "latency tails are not comparable with a run whose steal stays near 0")
    node_peer_report.print_rounds(peer)

    result = {"generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "quick": quick,
              "machine": args.machine, "nice": args.nice, "databases": args.db_dir,
              "table": [dict(zip(("metric", "target", "measured", "result"), r)) for r in rows],
              "startup": {**startup, **populated}, "http": http, "websocket": ws, "cost_curve": curve,
              "sigterm_ignored": args.sigterm_ignored, "floor": floor, "figures": figures, "commit": git_commit(),
              "node_peer": peer, "audience": audience}
    with open(args.out, "w") as handle:
        json.dump(result, handle, indent=2, sort_keys=True)
    print(f"\nwrote {args.out}")
    draw(curve, ws, http, args.charts, quick, floor_us)


if __name__ == "__main__":
    main()
