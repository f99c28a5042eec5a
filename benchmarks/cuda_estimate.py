#!/usr/bin/env python3
"""The summary of benchmarks/cuda-estimate.sh: for each model, the counts of
one training step (its grad and adamw calls) from the MIXRT_CUDA_PROFILE
report of a count-only run (MIXEMU_COUNT_ONLY=1), the H200 estimate the
runtime made of them, and the model-FLOPs utilisation that estimate
implies. Nothing here is timed: every figure comes from counts.

usage: cuda_estimate.py WORK MODEL...

WORK/MODEL/ holds what the script left there: package/manifest.json,
train.log (mix-run's stderr), compile.time and run.time (/usr/bin/time -v
of the compile and of the count-only run; tool costs on this machine, not
results) and note.txt (how the size was reached). WORK/MODEL-l1/ and
WORK/MODEL-l2/, where present, hold the same for the model with one layer
and with two: their difference is one layer's launches and products.
"""
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from mixrt_profile import ESTIMATE, HEADING, KERNEL, SITE  # noqa: E402

PEAK = re.compile(r"at most (\d+) bytes of device memory were allocated")

# The H200 (SXM) figure MFU divides by: the dense BF16 tensor-core peak
# (989 TFLOP/s; docs/cuda.md), whatever precision the package's products
# use, as the issue asks for bf16.
BF16_PEAK = 989e12


def step_report(log):
    """The second training step's report, the first that runs as CUDA
    graphs (the first call of each entry point plans its memory and is not
    captured; the counts are the same): its heading's counts, its kernel
    table, its product sites and its estimate's parts (ms)."""
    lines = open(log).read().splitlines()
    for i, line in enumerate(lines):
        h = HEADING.match(line)
        if not h or not h["title"].startswith("step 2 "):
            continue
        kernels, sites = [], []
        j = i + 1
        while j < len(lines) and lines[j].startswith("  "):
            k, s = KERNEL.match(lines[j]), SITE.match(lines[j])
            if s:
                sites.append(tuple(int(s.group(n)) for n in range(1, 7)))
            elif k and k.group(1) != "kernel":
                kernels.append((k.group(1), int(k.group(2))))
            j += 1
        e = ESTIMATE.match(lines[j]) if j < len(lines) else None
        if not e or e["title"] != h["title"]:
            sys.exit(f"cuda_estimate: {log}: no estimate after the step")
        estimate = {p: float(e[p]) for p in
                    ("total", "kernels", "arithmetic", "products", "launches",
                     "copies")}
        return h, kernels, sites, estimate
    sys.exit(f"cuda_estimate: {log}: no profile of step 2 (did the run "
             "fail?)")


def parameters(manifest):
    """All parameters, and those the model-FLOPs formula counts: all but
    the position embedding, a lookup (the token embedding is also the
    output projection, tied, so it multiplies)."""
    total = counted = 0
    for p in manifest["params"]:
        n = math.prod(p["shape"])
        total += n
        if p["name"] != "wpe.weight":
            counted += n
    return total, counted


def tool_cost(path):
    """'M:SS wall, G GiB peak' from /usr/bin/time -v's output, or '?'."""
    if not os.path.exists(path):
        return "?"
    text = open(path).read()
    wall = re.search(r"Elapsed \(wall clock\) time .*: (\S+)", text)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if not wall or not rss:
        return "?"
    return f"{wall.group(1)} wall, {int(rss.group(1)) / 2**20:.2f} GiB peak"


def fmt(x, digits=4):
    return f"{x:.{digits}g}"


def main():
    work, models = sys.argv[1], sys.argv[2:]
    rows = []
    for name in models:
        d = os.path.join(work, name)
        manifest = json.load(open(os.path.join(d, "package", "manifest.json")))
        spec = manifest["spec"]
        B, S = manifest["batch"], manifest["seq"]
        L, dm = spec["n_layer"], spec["d_model"]
        tokens = B * S
        h, kernels, sites, est = step_report(os.path.join(d, "train.log"))
        total_params, n = parameters(manifest)
        # PaLM's (appendix B) and llm.c's model FLOPs: 6 N per token for
        # the parameters' products forward and backward, 12 L d S for the
        # attention's two products (the full S x S, causal or not).
        model_flops = (6 * n + 12 * L * dm * S) * tokens
        step_s = est["total"] * 1e-3
        no_launch_s = (est["total"] - est["launches"]) * 1e-3
        launches, products = int(h["launches"]), int(h["products"])
        per_token = [(k, c) for k, c in kernels if c >= tokens]
        peak = PEAK.search(open(os.path.join(d, "train.log")).read())
        note = open(os.path.join(d, "note.txt")).read().strip()
        # One layer: the two-layer step's counts less the one-layer one's.
        layer = "?"
        logs = [os.path.join(work, f"{name}-l{n}", "train.log")
                for n in (1, 2)]
        if all(os.path.exists(log) for log in logs):
            (h1, *_), (h2, *_) = (step_report(log) for log in logs)
            layer = (f"{int(h2['launches']) - int(h1['launches'])} + "
                     f"{int(h2['products']) - int(h1['products'])}")
        rows.append({
            "name": name, "arch": spec["arch"] + (
                f" N={spec['cmollm']['streams']} {spec['cmollm']['gating']}"
                if spec["arch"] == "cmollm" else ""),
            "B": B, "S": S, "L": L, "d": dm, "tokens": tokens,
            "precision": h["precision"], "params": total_params, "n": n,
            "launches": launches, "kernels": int(h["kernels"]),
            "products": products, "sites": len(sites),
            "per_token_kernels": len(per_token),
            "per_token_launches": sum(c for _, c in per_token),
            "kernel_bytes": int(h["read"]) + int(h["written"]) +
                            int(h["memset_bytes"]),
            "copy_bytes": int(h["h2d_bytes"]) + int(h["d2h_bytes"]),
            "copies": int(h["h2d"]) + int(h["d2h"]),
            "gemm_flops": float(h["gflop"]) * 1e9,
            "model_flops": model_flops, "est": est,
            "mfu": model_flops / (step_s * BF16_PEAK),
            "mfu_no_launch": model_flops / (no_launch_s * BF16_PEAK),
            "peak": int(peak.group(1)) if peak else None,
            "compile": tool_cost(os.path.join(d, "compile.time")),
            "run": tool_cost(os.path.join(d, "run.time")),
            "note": note, "layer": layer,
        })

    print("#### Counts of one training step (grad + adamw), from "
          "MIXEMU_COUNT_ONLY=1\n")
    print("| model | B x S | GEMMs | parameters (counted N) | kernel "
          "launches | of them once a token | launches + products a layer | "
          "a layer: launches + products (2-layer less 1-layer step) | "
          "distinct kernels + product sites a layer | kernels' bytes "
          "(compiler's estimate) | host-device copies | GEMM TFLOP | model "
          "TFLOP | peak device memory |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        peak = f"{r['peak'] / 2**30:.1f} GiB" if r["peak"] else "?"
        print(f"| {r['name']} ({r['arch']}) | {r['B']} x {r['S']} | "
              f"{r['products']} {r['precision']} | {r['params'] / 1e6:.1f} M "
              f"({r['n'] / 1e6:.1f} M) | {r['launches']} | "
              f"{r['per_token_launches']} ({r['per_token_kernels']} kernels) "
              f"| {(r['launches'] + r['products']) / r['L']:.0f} | "
              f"{r['layer']} | "
              f"{(r['kernels'] + r['sites']) / r['L']:.0f} | "
              f"{r['kernel_bytes'] / 1e9:.1f} GB | {r['copies']} "
              f"({r['copy_bytes'] / 1e6:.2f} MB) | "
              f"{r['gemm_flops'] / 1e12:.2f} | {r['model_flops'] / 1e12:.2f} "
              f"| {peak} |")

    print("\n#### The H200 estimate of that step and the MFU it implies "
          "(an estimate, not a measurement)\n")
    print("| model | estimated step | = kernels' bytes | + kernels' "
          "arithmetic | + products | + launches | + copies | tokens/s | MFU | "
          "MFU without the launches' cost |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        e = r["est"]
        print(f"| {r['name']} | {fmt(e['total'])} ms | {fmt(e['kernels'])} "
              f"ms | {fmt(e['arithmetic'])} ms | {fmt(e['products'])} ms | "
              f"{fmt(e['launches'])} ms | "
              f"{fmt(e['copies'])} ms | "
              f"{r['tokens'] / (e['total'] * 1e-3):.0f} | "
              f"{100 * r['mfu']:.2f}% | {100 * r['mfu_no_launch']:.1f}% |")

    print("\nMFU = (6 N + 12 L d S) x B S / (estimated step time x 989e12 "
          "FLOP/s), the PaLM (appendix B) and llm.c formula: N the "
          "parameters but the position embedding (the token embedding is "
          "the tied output projection; cMoLLM's N streams' kernels all "
          "apply to every token, so they count), L layers, d the model "
          "width, S the sequence, B S the tokens of a step; 989 TFLOP/s is "
          "the H200's dense BF16 tensor-core peak. The kernels' arithmetic "
          "(the compiler's count of their float operations) runs at the "
          "CUDA cores' 67 TFLOP/s of float32, their mma.sync products (the "
          "flash attention's scores and accumulators) at the tensor cores' "
          "peak of the products' precision (BF16's 989 TFLOP/s with "
          "m16n8k16, TF32's 494 with m16n8k8): optimistic, since "
          "mma.sync reaches only about two thirds of the peak that Hopper's "
          "wgmma does (FlashAttention-3, section 1). \"Without the launches' "
          "cost\" drops the estimate's launch costs (the step is the "
          "second, run as one CUDA graph: 1 us a launch in it, 10 us the "
          "graph): a bound, not a plan. "
          "\"Once a token\": kernels launched B S times in the step (a host "
          "loop over the rows). \"A layer\": the step's totals over L, "
          "embedding, head, loss and AdamW included, or (2-layer less "
          "1-layer) the difference of the same model's steps with two "
          "layers and with one: a layer's own launches and products.")
    print("\nTool costs on this machine (not results): " + "; ".join(
        f"{r['name']}: compile {r['compile']}, count-only step "
        f"{r['run']}" for r in rows))
    for r in rows:
        if r["note"]:
            print(f"\n{r['name']}: {r['note']}")


if __name__ == "__main__":
    main()
