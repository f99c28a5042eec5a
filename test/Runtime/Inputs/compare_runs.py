"""compare_runs.py A B: the per-step loss terms of two metrics.jsonl files
must be identical (the timing fields may differ)."""
import json
import sys

def load(path):
    return [json.loads(line) for line in open(path) if line.strip()]

a, b = load(sys.argv[1]), load(sys.argv[2])
if [r["step"] for r in a] != [r["step"] for r in b]:
    sys.exit("steps differ: %s vs %s" % ([r["step"] for r in a], [r["step"] for r in b]))
for ra, rb in zip(a, b):
    for key in ("loss", "ce", "aux", "lr", "val_ce"):
        if ra.get(key) != rb.get(key):
            sys.exit("step %d: %s differs: %r vs %r" % (ra["step"], key, ra.get(key), rb.get(key)))
print("%d steps; loss, ce, aux and val_ce identical" % len(a))
