#!/usr/bin/env python3
"""bench/cluster's helper (standard library only).

  window  opens the generators' windows (creates the go file), waits --settle, samples /proc, waits --duration,
          samples again: CPU of each Parlor node (and per thread name), of every PostgreSQL process (the postmaster,
          its live children, and the children it reaped: cutime+cstime), of the generators and of the machine, plus
          the load average; optionally perf samples of the nodes and PostgreSQL in the middle of the window.
  merge   merges the generators' JSON (sums; percentiles over the summed histograms) with the window's CPU.
  table   prints the runs as one markdown table.
"""
import argparse
import json
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def stat_fields(path):
    """Fields of a /proc stat file after the command name: index 0 is field 3 (state)."""
    with open(path) as f:
        text = f.read()
    return text[text.rindex(")") + 2:].split()


def proc_cpu(pid, children=False):
    """utime+stime (+ cutime+cstime of reaped children) in seconds, or None if the process is gone."""
    try:
        f = stat_fields(f"/proc/{pid}/stat")
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return None
    ticks = int(f[11]) + int(f[12]) + ((int(f[13]) + int(f[14])) if children else 0)
    return ticks / TICK


def children_of(ppid):
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if int(stat_fields(f"/proc/{entry}/stat")[1]) == ppid:
                    pids.append(int(entry))
            except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
                pass
    return pids


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except FileNotFoundError:
        return ""


def thread_cpu(pid):
    """CPU seconds per thread name (the event loops name their threads: parlor-rooms, parlor-media, …)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            f = stat_fields(f"/proc/{pid}/task/{tid}/stat")
            out[name] = out.get(name, 0.0) + (int(f[11]) + int(f[12])) / TICK
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass
    return out


def machine_busy():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / TICK


def pg_commits(psql, port):
    """Transactions committed in the benchmark's database so far (pg_stat_database; its counters lag ≤ 0.5 s)."""
    if not psql:
        return 0
    out = subprocess.run([psql, "-h", "127.0.0.1", "-p", str(port), "-U", "parlor", "-d", "parlor", "-Atc",
                          "SELECT xact_commit FROM pg_stat_database WHERE datname = 'parlor'"],
                         capture_output=True, text=True)
    return int(out.stdout.strip() or 0)


def sample(parlor, postmaster, generators, psql=None, port=0):
    commits = pg_commits(psql, port)
    pg = {postmaster: proc_cpu(postmaster, children=True) or 0.0}
    kinds = {}
    for child in children_of(postmaster):
        cpu = proc_cpu(child)
        if cpu is not None:
            pg[child] = cpu
            kinds[child] = cmdline(child)
    return {
        "time": time.time(),
        "machine_busy": machine_busy(),
        "loadavg": open("/proc/loadavg").read().split()[:3],
        "parlor": {str(p): proc_cpu(p) or 0.0 for p in parlor},
        "parlor_threads": {str(p): thread_cpu(p) for p in parlor},
        "postgres": {str(p): c for p, c in pg.items()},
        "postgres_cmd": {str(p): k for p, k in kinds.items()},
        "generators": {str(p): proc_cpu(p) or 0.0 for p in generators},
        "pg_commits": commits,
    }


def sample_waits(psql, port, end, counts):
    """Where the nodes' PostgreSQL backends are, 5 times a second: pg_stat_activity's state and wait event (ClientRead:
    idle in a transaction, waiting for the node's next statement; Lock: a row lock another node holds; IO/WALSync…)."""
    query = ("SELECT state || ' ' || coalesce(wait_event_type || ':' || wait_event, 'running'), count(*) "
             "FROM pg_stat_activity WHERE datname = 'parlor' AND application_name = 'parlor' "
             "AND pid <> pg_backend_pid() GROUP BY 1")
    while time.time() < end:
        out = subprocess.run([psql, "-h", "127.0.0.1", "-p", str(port), "-U", "parlor", "-d", "parlor", "-AtF", "\t", "-c", query],
                             capture_output=True, text=True)
        for line in out.stdout.splitlines():
            key, _, n = line.rpartition("\t")
            counts[key] = counts.get(key, 0) + int(n)
        counts["samples"] = counts.get("samples", 0) + 1
        time.sleep(0.2)


def window(args):
    parlor = [int(p) for p in args.parlor.split()]
    generators = [int(p) for p in args.generators.split()]
    open(args.go, "w").close()
    time.sleep(args.settle)
    before = sample(parlor, args.postmaster, generators, args.psql, args.pg_port)
    loads = [before["loadavg"]]
    end = before["time"] + args.duration
    perf = None
    if args.perf > 0:
        time.sleep(max(0, (args.duration - args.perf) / 2))
        pids = parlor + [args.postmaster] + children_of(args.postmaster)
        perf = subprocess.Popen(["perf", "record", "-F", "499", "-g", "-o", args.perf_out + ".data",
                                 "-p", ",".join(map(str, pids)), "--", "sleep", str(args.perf)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    waits = {}
    if args.pg_waits:
        import threading
        threading.Thread(target=sample_waits, args=(args.psql, args.pg_port, end, waits), daemon=True).start()
    while time.time() < end:
        time.sleep(min(10, max(0, end - time.time())))
        loads.append(open("/proc/loadavg").read().split()[:3])
    after = sample(parlor, args.postmaster, generators, args.psql, args.pg_port)
    if args.statements_out:  # at once, before the generators' drain and close add their own statements
        query = ("SELECT calls, round(total_exec_time) AS ms, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) "
                 "AS query FROM pg_stat_statements ORDER BY calls DESC LIMIT 30")
        with open(args.statements_out, "w") as f:
            subprocess.run([args.psql, "-h", "127.0.0.1", "-p", str(args.pg_port), "-U", "parlor", "-d", "parlor", "-c", query],
                           stdout=f, stderr=subprocess.STDOUT)
    if perf:
        perf.wait()
        report = subprocess.run(["perf", "report", "-i", args.perf_out + ".data", "--no-children", "--sort", "comm,dso,sym",
                                 "--stdio", "-g", "none", "--percent-limit", "0.7"],
                                capture_output=True, text=True)
        with open(args.perf_out + ".txt", "w") as f:
            f.write(report.stdout)
    json.dump({"before": before, "after": after, "loadavg_samples": loads,
               "perf_report": (args.perf_out + ".txt") if perf else None, "pg_waits": waits}, sys.stdout)


def percentiles(buckets):
    """buckets: {upper_us: count}. The same rank rule as parlor-bench's (nearest rank, rounded up)."""
    total = sum(buckets.values())
    if total == 0:
        return {"count": 0}
    keys = sorted(buckets)

    def at(p):
        rank = max(1, min(total, int(-(-p * total // 1))))
        seen = 0
        for k in keys:
            seen += buckets[k]
            if seen >= rank:
                return k / 1000
        return keys[-1] / 1000

    return {"count": total, "p50_ms": at(0.50), "p90_ms": at(0.90), "p99_ms": at(0.99), "p999_ms": at(0.999),
            "max_ms": keys[-1] / 1000}


def merge(args):
    gens = [json.load(open(path)) for path in args.files]
    win = json.load(open(args.window))
    b, a = win["before"], win["after"]
    seconds = a["time"] - b["time"]

    def hist(key):
        out = {}
        for g in gens:
            for upper, count in g.get("histograms_us", {}).get(key, []):
                out[upper] = out.get(upper, 0) + count
        return out

    events = sum(g["events_in_window"] for g in gens)
    gen_window = max(g["window_seconds"] for g in gens)
    node_cpu = {p: a["parlor"][p] - b["parlor"][p] for p in a["parlor"]}
    threads = {}
    for p in a["parlor_threads"]:
        for name, cpu in a["parlor_threads"][p].items():
            threads[name] = threads.get(name, 0.0) + cpu - b["parlor_threads"].get(p, {}).get(name, 0.0)
    pg_cpu = sum(a["postgres"].get(p, 0.0) - b["postgres"].get(p, 0.0) for p in a["postgres"])
    # Per kind of PostgreSQL process (backends of the nodes, walwriter, checkpointer, …).
    pg_kinds = {}
    for p, cpu in a["postgres"].items():
        kind = a["postgres_cmd"].get(p, "postmaster (+ reaped children)")
        kind = kind.split("(")[0].strip() if "127.0.0.1" in kind else kind
        pg_kinds[kind] = pg_kinds.get(kind, 0.0) + cpu - b["postgres"].get(p, 0.0)
    parlor_cpu = sum(node_cpu.values())
    gen_cpu = sum(a["generators"][p] - b["generators"][p] for p in a["generators"])
    machine = a["machine_busy"] - b["machine_busy"]
    per_event = (lambda cpu: cpu / events * 1e6 if events else 0)
    joined_by_node = {}
    for g in gens:
        for url, n in zip(g.get("urls", []), g.get("joined_by_url", [])):
            joined_by_node[url] = joined_by_node.get(url, 0) + n
    out = {
        "name": args.name, "nodes": args.nodes, "generators": args.generators, "room_size": args.room_size,
        "clients": sum(g["clients"] for g in gens), "rate_target": args.rate,
        "connections_held": sum(g["connections_held"] for g in gens),
        "connections_held_min": sum(g["connections_held_min"] for g in gens),
        "joined_at_end": sum(g["joined_at_end"] for g in gens),
        "joined_by_node": joined_by_node,
        "joined_after_ramp": sum(g["setup"]["joined_after_ramp"] for g in gens),
        "setup_auth_seconds": max(g["setup"]["auth_seconds"] for g in gens),
        "setup_rooms_seconds": max(g["setup"]["rooms_seconds"] for g in gens),
        "ramp_seconds": max(g["setup"]["ramp_seconds"] for g in gens),
        "ready_seconds": args.ready_seconds, "total_seconds": args.total_seconds,
        "window_seconds": gen_window, "sampled_seconds": seconds,
        "window_start_spread_ms": (max(g["window_start_unix"] for g in gens) - min(g["window_start_unix"] for g in gens)) * 1e3,
        "joins_per_second": sum(g["join_rtt"].get("count", 0) for g in gens) / gen_window,
        "ops_skipped": sum(g["ops_skipped"] for g in gens),
        "events_in_window": events, "events_per_second": events / gen_window,
        "fanout": percentiles(hist("fanout")),
        "fanout_same_node": percentiles(hist("fanout_same_node")),
        "fanout_cross_node": percentiles(hist("fanout_cross_node")),
        "join_rtt": percentiles(hist("join_rtt")),
        "initial_join_rtt": percentiles(hist("initial_join_rtt")),
        "errors": sum(g["errors"] for g in gens),
        "pg_commits_in_window": a.get("pg_commits", 0) - b.get("pg_commits", 0),
        "error_kinds": [g["error_kinds"] for g in gens if g["errors"]],
        "cpu": {
            "parlor_seconds": parlor_cpu, "parlor_per_node_seconds": node_cpu, "parlor_threads_seconds": threads,
            "postgres_seconds": pg_cpu, "postgres_by_kind_seconds": pg_kinds,
            "generators_seconds": gen_cpu, "machine_busy_seconds": machine,
            "others_seconds": max(0.0, machine - parlor_cpu - pg_cpu - gen_cpu),
            "parlor_us_per_event": per_event(parlor_cpu), "postgres_us_per_event": per_event(pg_cpu),
            "sum_us_per_event": per_event(parlor_cpu + pg_cpu),
            "generators_us_per_event": per_event(gen_cpu),
        },
        "loadavg_samples": win["loadavg_samples"],
        "perf_report": win.get("perf_report"),
        # Average number of the nodes' backends in each state during the window (CLUSTER_PG_STATS=1 only).
        "pg_backends_by_state": {k: v / win["pg_waits"]["samples"] for k, v in win.get("pg_waits", {}).items()
                                 if k != "samples"} if win.get("pg_waits", {}).get("samples") else {},
    }
    json.dump(out, open(args.out, "w"), indent=1, sort_keys=True)
    print(render([out]))


def render(runs):
    def ms(p, key):
        return f"{p[key]:.1f}" if p.get("count") else "–"

    rows = [
        ("nodes / generator processes", lambda r: f"{r['nodes']} / {r['generators']}"),
        ("connections held (min in window) of target", lambda r: f"{r['connections_held_min']:,} of {r['clients']:,}"),
        ("joined at end / per node", lambda r: f"{r['joined_at_end']:,} / " + " ".join(f"{n:,}" for n in r["joined_by_node"].values())),
        ("setup: auth, rooms, ramp (s)", lambda r: f"{r['setup_auth_seconds']:.0f}, {r['setup_rooms_seconds']:.0f}, {r['ramp_seconds']:.0f}"),
        ("start to window open / whole run (s)", lambda r: f"{r['ready_seconds']} / {r['total_seconds']}"),
        ("joins/s (target)", lambda r: f"{r['joins_per_second']:,.0f} ({r['rate_target']:,}), skipped {r['ops_skipped']}"),
        ("events delivered/s", lambda r: f"{r['events_per_second']:,.0f}"),
        ("fan-out p50 / p99 ms, all", lambda r: f"{ms(r['fanout'], 'p50_ms')} / {ms(r['fanout'], 'p99_ms')}"),
        ("fan-out p50 / p99 ms, cross-node", lambda r: f"{ms(r['fanout_cross_node'], 'p50_ms')} / {ms(r['fanout_cross_node'], 'p99_ms')}"),
        ("fan-out p50 / p99 ms, same node", lambda r: f"{ms(r['fanout_same_node'], 'p50_ms')} / {ms(r['fanout_same_node'], 'p99_ms')}"),
        ("join round trip p50 / p99 ms", lambda r: f"{ms(r['join_rtt'], 'p50_ms')} / {ms(r['join_rtt'], 'p99_ms')}"),
        ("errors", lambda r: f"{r['errors']}"),
        ("PostgreSQL commits/s (per join)", lambda r: f"{r['pg_commits_in_window'] / r['sampled_seconds']:,.0f} "
            f"({r['pg_commits_in_window'] / max(1, r['joins_per_second'] * r['window_seconds']):.1f})"),
        ("CPU µs/event: Parlor", lambda r: f"{r['cpu']['parlor_us_per_event']:.1f}"),
        ("CPU µs/event: PostgreSQL", lambda r: f"{r['cpu']['postgres_us_per_event']:.1f}"),
        ("CPU µs/event: sum", lambda r: f"**{r['cpu']['sum_us_per_event']:.1f}**"),
        ("cores: Parlor, PostgreSQL, generators, others", lambda r: ", ".join(
            f"{r['cpu'][k] / r['sampled_seconds']:.2f}" for k in ("parlor_seconds", "postgres_seconds", "generators_seconds", "others_seconds"))),
        ("rooms threads (cores, all nodes)", lambda r: f"{r['cpu']['parlor_threads_seconds'].get('parlor-rooms', 0) / r['sampled_seconds']:.2f}"),
        ("load average (1 min) during window", lambda r: "–".join(sorted({s[0] for s in r["loadavg_samples"]}, key=float)[::max(1, len(r["loadavg_samples"]) - 1)])),
    ]
    lines = ["| | " + " | ".join(r["name"] for r in runs) + " |", "|---|" + "---|" * len(runs)]
    for label, fn in rows:
        lines.append(f"| {label} | " + " | ".join(fn(r) for r in runs) + " |")
    return "\n".join(lines)


def table(args):
    runs = [json.load(open(p)) for p in args.files if os.path.exists(p)]
    print(render(runs))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("window")
    w.add_argument("--go", required=True)
    w.add_argument("--settle", type=float, default=1)
    w.add_argument("--duration", type=float, required=True)
    w.add_argument("--parlor", required=True)
    w.add_argument("--postmaster", type=int, required=True)
    w.add_argument("--generators", required=True)
    w.add_argument("--perf", type=float, default=0)
    w.add_argument("--perf-out", default="perf")
    w.add_argument("--psql")
    w.add_argument("--pg-port", type=int, default=0)
    w.add_argument("--pg-waits", action="store_true")
    w.add_argument("--statements-out")
    m = sub.add_parser("merge")
    for flag in ("--name", "--window", "--out"):
        m.add_argument(flag, required=True)
    for flag in ("--nodes", "--generators", "--room-size", "--rate", "--ready-seconds", "--total-seconds"):
        m.add_argument(flag, type=int, required=True)
    m.add_argument("files", nargs="+")
    t = sub.add_parser("table")
    t.add_argument("files", nargs="+")
    args = parser.parse_args()
    {"window": window, "merge": merge, "table": table}[args.command](args)


if __name__ == "__main__":
    main()
