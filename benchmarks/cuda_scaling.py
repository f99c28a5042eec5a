#!/usr/bin/env python3
"""The tables of benchmarks/cuda-scaling.sh: for a GPT-2-small-size cMoLLM
with N streams on G GPUs, stream parallelism (mixc --stream-shards) beside
data parallelism, from rank 0's MIXRT_CUDA_PROFILE report of the second
training step of a count-only run (MIXEMU_COUNT_ONLY=1) under mpirun. The
12-layer figures are 1 + 11 x (2 layers - 1 layer) of each count and of
each part of the runtime's H200 estimate (both are sums over identical
layers). Nothing here is timed.

usage: cuda_scaling.py WORK "N..." "G..."

WORK/cmollmN-lL/{streams,data}-gG/ hold package/manifest.json and
rank.R.log (rank R's stderr) for L = 1, 2.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from mixrt_profile import ESTIMATE, HEADING  # noqa: E402

BF16_PEAK = 989e12  # the H200's dense BF16 tensor-core peak, FLOP/s
LAYERS = 12
PARTS = ("total", "kernels", "arithmetic", "products", "launches", "copies",
         "collectives", "hidden_collectives")
COUNTS = ("launches", "products", "collectives", "collective_bytes",
          "wire_bytes", "read", "written", "gflop", "product_bytes")
# The runtime's estimate of the products (runtime/lib/Exec/DeviceProfile.h):
# the longer of their FLOPs at the tensor cores' peak and their bytes at
# HBM bandwidth, over the step's totals.
PRODUCT_PEAK = {"BF16": 989e12, "TF32": 494e12}
HBM = 4.8e12


def report(path):
    """The counts and estimate parts (ms) of step 2 in rank 0's log."""
    lines = open(path).read().splitlines()
    heading = None
    for line in lines:
        h = HEADING.match(line)
        if h and h["title"].startswith("step 2 "):
            heading = h
        e = ESTIMATE.match(line)
        if heading and e and e["title"] == heading["title"]:
            counts = {k: float(heading[k] or 0) for k in COUNTS}
            counts["precision"] = heading["precision"]
            parts = {k: float(e[k] or 0) for k in PARTS}
            return counts, parts
    sys.exit(f"cuda_scaling: {path}: no profile of step 2 (did the run fail?)")


def params(manifest):
    """The parameters the model-FLOPs formula counts: all but the position
    embedding (a lookup)."""
    return sum(math.prod(p["shape"]) for p in manifest["params"]
               if p["name"] != "wpe.weight")


def state_bytes(manifest):
    """A rank's training state: its part of every parameter (the whole of
    a replicated one), with the gradient and both AdamW moments, float32."""
    return 16 * sum(math.prod(p["shape"]) // p.get("stream_shards", 1)
                    for p in manifest["params"])


def config(work, n, kind, g):
    """The 12-layer counts, estimate parts and manifest facts of a
    configuration, or None if it was not run."""
    out = []
    for layers in (1, 2):
        d = os.path.join(work, f"cmollm{n}-l{layers}", f"{kind}-g{g}")
        log = os.path.join(d, "rank.0.log")
        if not os.path.exists(log):
            return None
        manifest = json.load(open(os.path.join(d, "package", "manifest.json")))
        counts, parts = report(log)
        out.append((counts, parts, manifest))
    (c1, p1, m1), (c2, p2, m2) = out
    extend = lambda a, b: {k: a[k] + (LAYERS - 1) * (b[k] - a[k]) for k in a
                           if k != "precision"}
    counts, est = extend(c1, c2), extend(p1, p2)
    # The products' part is a maximum of totals, not a sum over layers:
    # made again from the extended totals.
    products = 1e3 * max(counts["gflop"] * 1e9 / PRODUCT_PEAK[c1["precision"]],
                         counts["product_bytes"] / HBM)
    est["total"] += products - est["products"]
    est["products"] = products
    return {
        "counts": counts, "est": est,
        "n": params(m1) + (LAYERS - 1) * (params(m2) - params(m1)),
        "state": state_bytes(m1) + (LAYERS - 1) * (state_bytes(m2) -
                                                   state_bytes(m1)),
        "batch": m1["batch"], "seq": m1["seq"], "d": m1["spec"]["d_model"],
        "shards": m1.get("stream_shards", 1),
    }


def main():
    work, streams, gpus = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
    for n in map(int, streams):
        one = config(work, n, "streams", 1)
        if not one:
            continue
        tokens = one["batch"] * one["seq"]
        model_flops = (6 * one["n"] + 12 * LAYERS * one["d"] * one["seq"]) * tokens
        t1 = one["est"]["total"]
        print(f"#### cMoLLM N = {n} (multi_head), {LAYERS} layers, d = "
              f"{one['d']}, {one['n'] / 1e6:.0f} M parameters in the model "
              f"FLOPs; {one['batch']} x {one['seq']} tokens a step in all\n")
        print("| GPUs | layout | per-GPU batch | estimated step | of it "
              "NCCL all-reduces | behind the backward pass | NCCL launches, "
              "bytes sent a GPU | kernel "
              "launches + products a GPU | training state a GPU | speed-up | "
              "efficiency | MFU |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for g in map(int, gpus):
            for kind in ("streams", "data"):
                if g == 1 and kind == "data":
                    continue
                c = one if g == 1 else config(work, n, kind, g)
                if not c:
                    continue
                e, k = c["est"], c["counts"]
                if g == 1:
                    layout = "one GPU"
                elif kind == "streams":
                    data = g // c["shards"]
                    layout = f"{c['shards']} stream shards" + (
                        f" x {data} data ranks" if data > 1 else "")
                else:
                    layout = f"{g} data ranks"
                share = e["collectives"] / e["total"]
                print(f"| {g} | {layout} | {c['batch']} | {e['total']:.2f} ms "
                      f"| {e['collectives']:.2f} ms ({100 * share:.1f}%) | "
                      f"{e['hidden_collectives']:.2f} ms | "
                      f"{k['collectives']:.0f}, {k['wire_bytes'] / 1e6:.1f} MB "
                      f"| {k['launches'] + k['products']:.0f} | "
                      f"{c['state'] / 2**30:.2f} GiB | "
                      f"{t1 / e['total']:.2f}x | "
                      f"{100 * t1 / (g * e['total']):.0f}% | "
                      f"{100 * model_flops / (g * e['total'] * 1e-3 * BF16_PEAK):.1f}% |")
        print()
    print("Speed-up: the one-GPU step's estimate over this one's, at the same "
          "global batch; efficiency: the speed-up over the GPUs; MFU = (6 N "
          "+ 12 L d S) x tokens / (step x GPUs x 989e12 FLOP/s). Stream "
          "shards sum over the stream group inside the step, a layer: the "
          "mixture's partial output forward (T x d_ff), the gradients of "
          "its replicated input (T x d) and gate and a scalar backward; "
          "data ranks average the gradients in buckets of 25 MB (one NCCL "
          "group each) on a stream of their own while the backward pass "
          "runs. NCCL: 10 us a launch plus what a GPU sends (a ring's "
          "2 (R - 1) / R of the payload) at NVLink's 450 GB/s a direction "
          "(900 GB/s both ways); the all-reduces column is what the work "
          "after them does not hide, the next what it does; every other "
          "part is the one-GPU estimate's (docs/cuda.md). Training state: "
          "the parameters a GPU holds (its part of the stream kernels, the "
          "rest whole), their gradients and AdamW moments, float32; "
          "activations not included.")


if __name__ == "__main__":
    main()
