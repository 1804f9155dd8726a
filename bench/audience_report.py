"""The audience-10k scenario's part of bench/run's report (issue 37): one stage room filled by 10,000 members at
500 joins/s (parlor-bench --scenario audience), graded against the issue's targets. Run alone:
`python3 bench/audience_report.py RAW-DIR` prints the rows of the audience-*.json files in it."""
import glob
import json
import os
import sys

KIB = 1024


def load(raw):
    runs = []
    for path in sorted(glob.glob(os.path.join(raw, "audience-*.json"))):
        try:
            with open(path) as handle:
                runs.append(json.load(handle))
        except (OSError, ValueError):
            continue
    return runs


def rows(raw, row, figures):
    """Adds the audience rows to bench/run's table; returns the runs' JSON for latest.json."""
    runs = load(raw)
    for run in runs:
        members, rate = run["members"], run["join_rate"]
        prefix = f"audience {members:,} at {rate:.0f} joins/s"
        errors = sum(run["errors"].values())
        ideal = (members - 1) / rate
        fill_ok = run["fill_seconds"] <= ideal * 1.25 and errors == 0 and run["failed"] == 0
        row(f"{prefix}: fill time, errors", f"<= {ideal * 1.25:.0f} s, 0 errors",
            f"{run['fill_seconds']:.1f} s, {errors} errors {run['errors'] or ''}".strip(), fill_ok,
            key="audience_fill_seconds", value=run["fill_seconds"])
        cpu = run.get("server_cpu_fill_cores") or 0
        row(f"{prefix}: server CPU during the fill", "<= 50% of a core", f"{cpu * 100:.0f}% of a core", cpu <= 0.5,
            key="audience_fill_cpu_percent", value=cpu * 100)
        rss = run["server_peak_rss_mib"]
        row(f"{prefix}: server peak RSS", "<= 150 MiB", f"{rss:.1f} MiB", rss <= 150, key="audience_peak_rss_mib", value=rss)
        # The target is the audience's steady state: what a listener receives while the room announces it in summary
        # (above 200 members), measured over the second half of the planned fill (10 s at 10,000 and 500/s) for every
        # listener in the room then. The first 200 joins are full events to everyone, as in any room of that size;
        # the average over each listener's whole time in the fill, that burst included, is shown beside it.
        steady = run.get("listener_steady_presence_bytes_per_s", {})
        steady_all = run.get("listener_steady_bytes_per_s", {})
        whole = run["listener_fill_presence_bytes_per_s"]
        if steady.get("count"):
            row(f"{prefix}: presence bytes/s a listener receives during the fill, summary mode (max over listeners)",
                "<= 2 KB/s", f"{steady['max'] / 1000:.2f} KB/s over {run.get('steady_window_seconds', 0):.0f} s (median {steady['median'] / 1000:.2f}; everything incl. "
                f"speaking and roles max {steady_all.get('max', 0) / 1000:.2f}; over the whole fill incl. the first 200 "
                f"full joins max {whole.get('max', 0) / 1000:.2f})", steady["max"] <= 2000,
                key="audience_listener_presence_bytes_per_s_max", value=steady["max"])
        for name, label in (("role_change", "a role change"), ("speaking_change", "a speaking change")):
            change = run[name]
            latency = change["latency"]
            coverage = change.get("min_coverage_after_fill")
            p99 = latency.get("p99_ms", 0)
            reached = coverage is not None and coverage >= 1.0
            row(f"{prefix}: {label} reaching every member, p99", "<= 250 ms, all reached",
                f"{p99:.0f} ms (max {latency.get('max_ms', 0):.0f}; {change['sent']} sent, "
                f"{'all reached' if reached else f'min reach {coverage}'})",
                p99 <= 250 and reached and latency.get("count", 0) > 0, key=f"audience_{name}_p99_ms", value=p99)
        joins = run["moderator_join_latency"]
        seen = int(joins.get("count", 0))
        row(f"{prefix}: the moderator sees each join, p99", "<= 1 s, every join",
            f"{joins.get('p99_ms', 0):.0f} ms ({seen:,} of {run['moderator_joins_expected']:,} seen)",
            joins.get("p99_ms", 1e9) <= 1000 and seen >= run["moderator_joins_expected"],
            key="audience_moderator_join_p99_ms", value=joins.get("p99_ms", 0))
        row(f"{prefix}: generator CPU, machine", "-",
            f"generator {run['generator_cpu_cores'] * 100:.0f}% of a core; machine busy {run['machine_busy_cores']:.2f} "
            f"cores, stolen {run['machine_steal_cores']:.2f}", None)
    return runs


if __name__ == "__main__":
    table = []
    rows(sys.argv[1], lambda metric, target, measured, ok, key=None, value=None:
         table.append((metric, target, measured, "pass" if ok else ("miss" if ok is False else "-"))), {})
    for metric, target, measured, verdict in table:
        print(f"{metric:<90} {target:<24} {measured}  [{verdict}]")
