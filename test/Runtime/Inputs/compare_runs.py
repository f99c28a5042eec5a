"""compare_runs.py A B [RTOL]: the per-step loss terms of two metrics.jsonl
files must be identical (the timing fields may differ), or with RTOL agree
to RTOL relative (a data-parallel run against one rank: the same sums in
another order)."""
import json
import sys

def load(path):
    return [json.loads(line) for line in open(path) if line.strip()]

a, b = load(sys.argv[1]), load(sys.argv[2])
rtol = float(sys.argv[3]) if len(sys.argv) > 3 else None
if [r["step"] for r in a] != [r["step"] for r in b]:
    sys.exit("steps differ: %s vs %s" % ([r["step"] for r in a], [r["step"] for r in b]))
for ra, rb in zip(a, b):
    for key in ("loss", "ce", "aux", "lr", "val_ce"):
        x, y = ra.get(key), rb.get(key)
        if rtol is None or x is None or y is None:
            same = x == y
        else:
            same = abs(x - y) <= rtol * max(abs(x), abs(y))
        if not same:
            sys.exit("step %d: %s differs: %r vs %r" % (ra["step"], key, x, y))
if rtol is None:
    print("%d steps; loss, ce, aux and val_ce identical" % len(a))
else:
    print("%d steps; loss, ce, aux and val_ce agree within %g" % (len(a), rtol))
