#!/usr/bin/env python3
"""Checks a MIXRT_CUDA_PROFILE report (mix-run's stderr) against itself,
computed independently here: every heading's totals equal the sums of its
table (launches x bytes by kernel; the products' FLOPs by site), and every
H200 estimate equals the roofline sum of the heading's counts with the
constants docs/cuda.md states. Prints one line a report, saying whether
the report's work ran in CUDA graphs (all of it, or some).

usage: check_profile.py STDERR.txt
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "scripts"))
from mixrt_profile import ESTIMATE, HEADING, KERNEL, SITE  # noqa: E402,F401


HBM, TF32, BF16, FP32 = 4.8e12, 494e12, 989e12, 67e12
LAUNCH, PCIE, COPY = 3e-6, 50e9, 10e-6
GRAPH_NODE, GRAPH_LAUNCH = 1e-6, 10e-6


def close(a, b, what):
    if abs(a - b) > 1e-3 * max(abs(a), abs(b)) + 1e-9:
        sys.exit(f"check_profile: {what}: {a} != {b}")


def main():
    lines = open(sys.argv[1]).read().splitlines()
    reports = 0
    i = 0
    while i < len(lines):
        h = HEADING.match(lines[i])
        i += 1
        if not h:
            continue
        g = {k: (v if k in ("title", "precision") else float(v or 0))
             for k, v in h.groupdict().items()}
        launches = read = written = flops = kernel_flops = mma_flops = 0.0
        kernels = 0
        while i < len(lines) and lines[i].startswith("  "):
            k, s = KERNEL.match(lines[i]), SITE.match(lines[i])
            if k and k.group(3) != "?":
                n = int(k.group(2))
                launches += n
                kernels += 1
                read += n * int(k.group(3))
                written += n * int(k.group(4))
                if k.group(5) != "?":
                    kernel_flops += n * int(k.group(5))
                if k.group(6) != "?":
                    mma_flops += n * int(k.group(6))
            elif s:
                calls, b, m, nn, kk = (int(s.group(j)) for j in range(2, 7))
                flops += 2.0 * calls * b * m * nn * kk
            i += 1
        close(launches, g["launches"], g["title"] + ": launches")
        close(kernels, g["kernels"], g["title"] + ": kernels")
        close(read, g["read"], g["title"] + ": bytes read")
        close(written, g["written"], g["title"] + ": bytes written")
        close(flops * 1e-9, g["gflop"], g["title"] + ": GFLOP")
        close(kernel_flops * 1e-9, g["kernel_gflop"],
              g["title"] + ": kernels' GFLOP")
        close(mma_flops * 1e-9, g["mma_gflop"],
              g["title"] + ": kernels' tensor-core GFLOP")
        e = ESTIMATE.match(lines[i]) if i < len(lines) else None
        if not e or e.group("title") != g["title"]:
            sys.exit(f"check_profile: {g['title']}: no estimate after it")
        peak = BF16 if g["precision"] == "BF16" else TF32
        launched = g["launches"] + g["products"] + g["memsets"] + g["d2d"]
        if g["graph_nodes"] > launched:
            sys.exit(f"check_profile: {g['title']}: more in CUDA graphs than "
                     "launched")
        want = {
            "kernels": (g["read"] + g["written"] + g["memset_bytes"]) / HBM,
            "arithmetic": g["kernel_gflop"] * 1e9 / FP32 +
                          g["mma_gflop"] * 1e9 / TF32,
            "products": max(g["gflop"] * 1e9 / peak, 0.0),
            # A launch costs less in a CUDA graph, which costs one more.
            "launches": (launched - g["graph_nodes"]) * LAUNCH +
                        g["graph_nodes"] * GRAPH_NODE +
                        g["graphs"] * GRAPH_LAUNCH,
            "copies": (g["h2d_bytes"] + g["d2h_bytes"]) / PCIE +
                      (g["h2d"] + g["d2h"]) * COPY +
                      2 * g["d2d_bytes"] / HBM,
        }
        # The products' time is the longer of FLOPs and bytes; their bytes
        # are not printed, so only the lower bound is checked.
        for part in ("kernels", "arithmetic", "launches", "copies"):
            close(float(e.group(part)) * 1e-3, want[part],
                  g["title"] + ": estimate of " + part)
        if float(e.group("products")) * 1e-3 < want["products"] * (1 - 1e-3):
            sys.exit(f"check_profile: {g['title']}: products faster than "
                     "the tensor-core peak")
        total = sum(float(e.group(p)) for p in
                    ("kernels", "arithmetic", "products", "launches",
                     "copies"))
        close(float(e.group("total")), total, g["title"] + ": total")
        graphs = ""
        if g["graphs"]:
            graphs = (", all in CUDA graphs" if g["graph_nodes"] == launched
                      else ", some in CUDA graphs")
        print(f"{g['title']}: consistent{graphs}")
        reports += 1
    if not reports:
        sys.exit("check_profile: no profile in " + sys.argv[1])


if __name__ == "__main__":
    main()
