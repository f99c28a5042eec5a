#!/usr/bin/env python3
"""Checks that training runs computed the same thing, bit for bit: every
field of every line of their metrics.jsonl files but the timing
(tokens_per_s, time) is equal, as written (nine significant digits: a float's
value exactly). Prints one line, or what differs (and exits 1).

usage: same_runs.py METRICS.jsonl METRICS.jsonl...
"""
import json
import sys

TIMING = {"tokens_per_s", "time"}


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    runs = [load(p) for p in sys.argv[1:]]
    first = runs[0]
    if not first:
        sys.exit(f"same_runs: {sys.argv[1]} has no steps")
    for path, run in zip(sys.argv[2:], runs[1:]):
        if len(run) != len(first):
            sys.exit(f"same_runs: {path} has {len(run)} steps, "
                     f"{sys.argv[1]} {len(first)}")
        for a, b in zip(first, run):
            keys = (set(a) | set(b)) - TIMING
            for key in sorted(keys):
                if a.get(key) != b.get(key):
                    sys.exit(f"same_runs: step {a.get('step')}: {key} is "
                             f"{a.get(key)!r} in {sys.argv[1]}, "
                             f"{b.get(key)!r} in {path}")
    fields = sorted(set().union(*(set(line) for line in first)) - TIMING)
    print(f"{len(runs)} runs of {len(first)} steps; {', '.join(fields)} "
          "identical")


if __name__ == "__main__":
    main()
