"""bench/run's charts: gnuplot pictures of the cost curve, the latencies, the hold's timeline and HTTP (report.py
draws them after the table)."""
import os
import subprocess
import tempfile


def gnuplot(script):
    with tempfile.NamedTemporaryFile("w", suffix=".gp", delete=False) as handle:
        handle.write(script)
    try:
        subprocess.run(["gnuplot", handle.name], check=True, capture_output=True)
    finally:
        os.unlink(handle.name)


def draw(curve, ws, http, charts, quick, floor_us):
    if subprocess.run(["which", "gnuplot"], capture_output=True).returncode != 0:
        print("gnuplot missing: no charts")
        return
    # The charts' data files go in a directory that leaves with the run, not one per run left in /tmp.
    with tempfile.TemporaryDirectory() as data:
        draw_from(data, curve, ws, http, charts, quick, floor_us)


def draw_from(data, curve, ws, http, charts, quick, floor_us):
    os.makedirs(charts, exist_ok=True)
    tag = " (QUICK run)" if quick else ""
    common = 'set terminal pngcairo size 900,540 font "DejaVu Sans,11"\nset grid\nset key top left\n'

    conns = [c for c in curve if c["label"] in ("conn-1k", "conn-5k", "hold-10k")]
    if conns:
        path = os.path.join(data, "conns.dat")
        with open(path, "w") as handle:
            for c in sorted(conns, key=lambda c: c["clients"]):
                handle.write(f"{c['clients']} {c['peak_rss_mib'] or 0} {c['server_cpu_us_per_event'] or 0} "
                             f"{c['fanout_p99_ms'] or 0}\n")
        gnuplot(common + f"""set output "{charts}/cost-connections.png"
set title "Server cost by connection count (rooms of 10, 1,000 joins/s){tag}"
set xlabel "WebSocket connections"
set ylabel "peak RSS (MiB)"
set y2label "server CPU per delivered event (µs)"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
plot "{path}" using 1:2 with linespoints lw 2 pt 7 title "peak RSS (MiB)", \\
     "{path}" using 1:3 axes x1y2 with linespoints lw 2 pt 5 title "µs per delivered event", \\
     150 with lines dt 2 lc rgb "red" title "RSS target 150 MiB"
""")
    sizes = [c for c in curve if c["label"] in ("room-2", "room-10", "room-100", "room-1000")]
    half_core = [c for c in curve if c["label"].endswith("-at-half-core")]
    if sizes:
        path = os.path.join(data, "sizes.dat")
        with open(path, "w") as handle:
            for c in sorted(sizes, key=lambda c: c["members_per_room"]):
                handle.write(f"{c['members_per_room']} {c['events_per_server_cpu_second'] or 0} {c['events_per_second']} "
                             f"{c['server_cpu_us_per_event'] or 0}\n")
        half_path = os.path.join(data, "sizes-half-core.dat")
        with open(half_path, "w") as handle:
            for c in sorted(half_core, key=lambda c: c["members_per_room"]):
                handle.write(f"{c['members_per_room']} {c['server_cpu_us_per_event'] or 0}\n")
        half_plot = (f', \\\n     "{half_path}" using 1:2 axes x1y2 with linespoints lw 2 pt 11 '
                     f'title "µs per event, generator at half a core (right)"') if half_core else ""
        gnuplot(common + f"""set output "{charts}/cost-room-size.png"
set title "Delivered events per server CPU second by room size (2,000 connections){tag}"
set logscale x
set xlabel "members per room (one join = n deliveries)"
set ylabel "events"
set yrange [0:*]
set y2label "µs per delivered event"
set ytics nomirror
set y2tics
set y2range [0:*]
plot "{path}" using 1:2 with linespoints lw 2 pt 7 title "events per server CPU second", \\
     "{path}" using 1:3 with linespoints lw 2 pt 5 title "events delivered per second", \\
     "{path}" using 1:4 axes x1y2 with linespoints lw 2 pt 9 title "µs per event (right)"{half_plot}, \\
     {1.1 * (floor_us or 0):.2f} axes x1y2 with lines dt 2 lc rgb "red" title "target 1.1× floor, rooms of 100+ (right)"
""")
    if curve:
        path = os.path.join(data, "latency.dat")
        with open(path, "w") as handle:
            for c in curve:
                handle.write(f"{c['label']} {c['fanout_p50_ms'] or 0} {c['fanout_p99_ms'] or 0} {c['join_p99_ms'] or 0}\n")
        gnuplot(common + f"""set output "{charts}/latency.png"
set title "Fan-out and join latency by scenario{tag}"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "milliseconds (log)"
set xtics rotate by -20
plot "{path}" using 2:xtic(1) title "fan-out p50", "" using 3 title "fan-out p99", "" using 4 title "join p99", \\
     10 with lines dt 2 lc rgb "red" title "target p99 10 ms"
""")
    hold = ws.get("hold-10k")
    if hold and hold.get("join_timeline"):
        path = os.path.join(data, "timeline.dat")
        with open(path, "w") as handle:
            for point in hold["join_timeline"]:
                handle.write(f"{point['second']} {point['p50_ms']} {point['p99_ms']} {point['max_ms']}\n")
        gnuplot(common + f"""set output "{charts}/hold-timeline.png"
set title "10,000 connections, 1,000 joins/s: join round trip per second of the run{tag}"
set xlabel "second of the measured window"
set ylabel "milliseconds (log)"
set logscale y
plot "{path}" using 1:2 with lines lw 2 title "p50", "" using 1:3 with lines lw 2 title "p99", \\
     "" using 1:4 with lines lw 1 title "max", 10 with lines dt 2 lc rgb "red" title "10 ms"
""")
    if http["rooms"] and http["nginx"] and http["auth"]:
        path = os.path.join(data, "http.dat")
        with open(path, "w") as handle:
            handle.write(f"\"nginx static /rooms\" {max(r['requests_per_second'] for r in http['nginx'])}\n")
            handle.write(f"\"parlor GET /rooms\" {max(r['requests_per_second'] for r in http['rooms'])}\n")
            handle.write(f"\"parlor POST /auth\" {http['auth']['requests_per_second']}\n")
        gnuplot(common + f"""set output "{charts}/http.png"
set title "HTTP requests per second, wrk -t2 -c50, keep-alive{tag}"
set style data histogram
set style fill solid 0.8 border -1
set boxwidth 0.6
set yrange [0:*]
set ylabel "requests per second"
unset key
plot "{path}" using 2:xtic(1) lc rgb "#4477aa"
""")
    print(f"charts in {charts}")
