#!/usr/bin/env python3
"""Time from exec of `parlor serve` to its `listening on` line, on fresh databases (migrations run) and on an
existing one. Prints JSON. Each server is killed by its own PID right after the line; the database is then
checkpointed so the next start sees it as after a clean shutdown."""
import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import time


def once(binary, flags, database, data_dir):
    started = time.perf_counter_ns()
    process = subprocess.Popen([binary, "serve", *flags, "--database", database, "--data-dir", data_dir],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = process.stdout.readline().decode()
    elapsed = (time.perf_counter_ns() - started) / 1e6
    process.kill()
    process.wait()
    if not line.startswith("listening on"):
        raise SystemExit(f"startup.py: unexpected first line {line!r}")
    connection = sqlite3.connect(database)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return elapsed


def summary(samples):
    return {"runs": len(samples), "median_ms": statistics.median(samples), "min_ms": min(samples),
            "max_ms": max(samples), "samples_ms": samples}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--dir", help="scratch directory for fresh and existing databases")
    parser.add_argument("--existing", help="measure only this existing database")
    parser.add_argument("--data-dir", help="data dir (JWT secret) to use with --existing")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--flags", default="--host 127.0.0.1 --port 0")
    args = parser.parse_args()
    flags = args.flags.split()

    if args.existing:
        print(json.dumps({"existing_populated": summary(
            [once(args.binary, flags, args.existing, args.data_dir) for _ in range(args.runs)])}))
        return

    shutil.rmtree(args.dir, ignore_errors=True)
    os.makedirs(args.dir)
    fresh = []
    for run in range(args.runs):
        data = os.path.join(args.dir, f"fresh-data-{run}")
        fresh.append(once(args.binary, flags, os.path.join(args.dir, f"fresh-{run}.db"), data))
    # An existing database: the first fresh one, already migrated (and its JWT secret already generated).
    existing = [once(args.binary, flags, os.path.join(args.dir, "fresh-0.db"), os.path.join(args.dir, "fresh-data-0"))
                for _ in range(args.runs)]
    shutil.rmtree(args.dir, ignore_errors=True)
    print(json.dumps({"fresh": summary(fresh), "existing": summary(existing)}))


if __name__ == "__main__":
    main()
