#!/usr/bin/env python3
"""Splits a `perf record -g` of the server into what the issue-13 CPU budget has to pay for.

Reads `perf script -F comm,ip,sym,dso` on stdin. Arguments: a file of `perf stat -x,` counts over the same window
(the server's task-clock and its system calls), the window's length in seconds, and the delivered events per second.

Kernel samples are split by the system call they are under (the kernel's stacks unwind). User samples are split by
the library they are in: Debian's libsqlite3 has no frame pointers, so a stack through it ends there and a caller
cannot be read; libc code whose caller is in libsqlite3 is counted as SQLite's. `pread64`, `pwrite64`, `fcntl` and
`fdatasync` are SQLite's alone (the server's own files are written with `write`).
"""
import collections
import re
import sys

SYSCALLS = [  # (part of a kernel symbol on the stack, the row it counts in); the first that matches, leaf outwards
    ("do_writev", "writev: deliveries and replies"),
    ("sys_pwrite64", "SQLite: pwrite (WAL, checkpoint copies)"),
    ("sys_pread64", "SQLite: pread (pages the cache missed)"),
    ("sys_fcntl", "SQLite: fcntl (file locks)"),
    ("do_fsync", "SQLite: fdatasync (checkpoint)"),
    ("eventfd_write", "eventfd writes (waking a thread)"),
    ("do_epoll_wait", "epoll_wait, sleeping and waking"),
    ("futex", "epoll_wait, sleeping and waking"),
    ("ksys_read", "read: requests in"),
    ("ksys_write", "write: other (log, accept, ...)"),
    ("timerfd_settime", "timerfd_settime"),
]


def classify(frames):
    """frames: (symbol, dso) from the leaf outwards."""
    leaf_symbol, leaf_dso = frames[0]
    if "kernel" in leaf_dso:
        for symbol, _ in frames:
            for marker, row in SYSCALLS:
                if marker in symbol:
                    return row
        if any(s.startswith(("schedule", "finish_task_switch")) for s, _ in frames):
            return "epoll_wait, sleeping and waking"
        return "kernel: other (syscall entry, interrupts, faults)"
    if "libsqlite3" in leaf_dso:
        return "SQLite: its code"
    if "libc.so" in leaf_dso:
        if len(frames) > 1 and "libsqlite3" in frames[1][1]:
            return "SQLite: its code"
        return "libc (malloc, memmove) for Parlor"
    if "libswift" in leaf_dso or "libFoundation" in leaf_dso or "libdispatch" in leaf_dso:
        return "Swift runtime (retain, release, allocation)"
    return "Parlor's own code (and vdso, ld.so)"


def samples(lines):
    comm, frames = None, []
    for line in lines:
        if not line.strip():
            if comm is not None and frames:
                yield comm, frames
            comm, frames = None, []
        elif not line.startswith((" ", "\t")):
            comm, frames = line.split()[0], []
        else:
            parts = line.strip().split(None, 1)
            if len(parts) == 2:
                symbol = re.sub(r"\+0x[0-9a-f]+$", "", parts[1].split(" (")[0])
                dso = parts[1].rsplit("(", 1)[-1].rstrip(")")
                frames.append((symbol, dso))
    if comm is not None and frames:
        yield comm, frames


def main():
    stat_file, seconds, events_per_second = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    counts, cpu_seconds = {}, 0.0
    for line in open(stat_file):
        fields = line.strip().split(",")
        if len(fields) > 2 and fields[2].startswith("syscalls:sys_enter_"):
            counts[fields[2].removeprefix("syscalls:sys_enter_")] = int(fields[0])
        elif len(fields) > 2 and fields[2] == "task-clock":
            cpu_seconds = float(fields[0]) / 1000
    cpu_percent = 100 * cpu_seconds / seconds
    rows, threads = collections.Counter(), collections.Counter()
    for comm, frames in samples(sys.stdin):
        rows[classify(frames)] += 1
        threads[comm] += 1
    total = sum(rows.values())
    print(f"{total} samples; the server used {cpu_percent:.1f} % of one core in the window (perf attached), "
          f"{events_per_second:,.0f} delivered events/s")
    print(f"{'':48} {'samples':>8} {'% of a core':>12} {'µs/event':>9}")
    for row, count in rows.most_common():
        share = count / total
        print(f"{row:48} {100 * share:7.1f}% {share * cpu_percent:11.1f}% "
              f"{share * cpu_percent / 100 * 1e6 / events_per_second:9.2f}")
    sqlite = sum(c for r, c in rows.items() if r.startswith("SQLite"))
    writes = rows["writev: deliveries and replies"]
    print(f"{'writev + SQLite':48} {100 * (writes + sqlite) / total:7.1f}% "
          f"{(writes + sqlite) / total * cpu_percent:11.1f}%   (issue 13's target in the standard scenario: 25 % for everything)")
    print("threads: " + ", ".join(f"{t} {100 * c / total:.1f}%" for t, c in threads.most_common()))
    if counts:
        print("system calls per second: " + ", ".join(f"{name} {count / seconds:,.0f}" for name, count in counts.items()))
        if counts.get("writev"):
            per_write = writes / total * cpu_percent / 100 / (counts["writev"] / seconds) * 1e6
            print(f"CPU per writev in the server: {per_write:.2f} µs")


if __name__ == "__main__":
    main()
