#!/usr/bin/env python3
"""Checks an upcycled run against the dense run it started from:
usage: upcycle_check.py MIX_METRICS DENSE_METRICS BALANCE_ALPHA MIX_CKPT

 * step 1's cross-entropy is the dense model's (within float32 rounding:
   the mixture sums N equal kernels weighted by gates that sum to 1);
 * step 1's balance term is at least its minimum, balance_alpha (uniform
   gates), and within 2% of it (the gate starts near uniform);
 * the stream kernels of the final checkpoint differ from each other in
   every layer: the gate's initialization broke their symmetry.
Prints one line."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors  # noqa: E402


def first(path):
    with open(path) as f:
        return json.loads(f.readline())


mix, dense = first(sys.argv[1]), first(sys.argv[2])
alpha = float(sys.argv[3])
if abs(mix["ce"] - dense["ce"]) > 1e-5 * abs(dense["ce"]):
    sys.exit("upcycle_check: step 1 ce %r, the dense model's %r"
             % (mix["ce"], dense["ce"]))
if not alpha * (1 - 1e-6) <= mix["aux"] <= 1.02 * alpha:
    sys.exit("upcycle_check: step 1 aux %r, expected near %r"
             % (mix["aux"], alpha))
tensors, _ = safetensors.read(sys.argv[4])
layers = 0
for name, (_, shape, values) in tensors.items():
    if not name.endswith(".mlp.kernels") or not name.startswith("param."):
        continue
    n, size = shape[0], len(values) // shape[0]
    streams = [values[k * size:(k + 1) * size] for k in range(n)]
    for k in range(1, n):
        if streams[k] == streams[0]:
            sys.exit("upcycle_check: %s: stream %d still equals stream 0"
                     % (name, k))
    layers += 1
if not layers:
    sys.exit("upcycle_check: no stream kernels in " + sys.argv[4])
print("step 1 ce equals the dense model's; aux %.4g; the streams diverged "
      "in %d layers" % (mix["aux"] / alpha, layers))
