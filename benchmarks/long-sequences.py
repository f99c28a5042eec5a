#!/usr/bin/env python3
"""Long sequences on the CPU: fused attention against the decomposed one.

For a dense GPT-2 and a cMoLLM (N=4, context_aware), 4 layers, d=384, 6
heads, byte vocabulary, at a fixed number of tokens a step (8192) and
sequences of 256, 1024, 4096 and 8192, compiles the model twice (mixc
--attention fused, the default, and --attention decomposed, which holds
each layer's S x S probabilities for the backward pass), trains each for a
few steps on the Brown corpus side by side, and reports the median
tokens/s over the steps after the first, the process's peak resident
memory (getrusage's ru_maxrss of the mix-run child) and, from
MIXRT_PROFILE, the attention's share of the step's compute and its
GFLOP/s. Both forms run in one invocation, interleaved, on the same
machine state.

  python3 benchmarks/long-sequences.py [--steps 5] [--seqs 256,1024,4096,8192]
      [--models dense,cmollm] [--bin build/bin] [--out runs/long-sequences]
      [--markdown FILE]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def spec(arch, seq):
    s = {"arch": "dense" if arch == "dense" else "cmollm",
         "vocab_size": 256, "n_positions": seq,
         "n_layer": 4, "d_model": 384, "n_head": 6, "d_ff": 1536,
         "layer_norm_eps": 1e-5, "init": {"seed": 0, "std": 0.02}}
    if arch == "cmollm":
        s["cmollm"] = {"streams": 4, "gating": "context_aware",
                       "gate_heads": 4, "balance_alpha": 0.01}
    return s


PROFILE = {
    "attention": re.compile(
        r"mixrt profile: attention (forward|backward)\s+(\d+) calls\s+"
        r"([0-9.]+) s\s+([0-9.]+) GFLOP/s"),
    "products": re.compile(r"mixrt profile: \d+ product sites, ([0-9.]+) s"),
    "loops": re.compile(r"mixrt profile: \d+ threaded loop nests, ([0-9.]+) s"),
}


def run(cmd, env=None, log=None):
    """Runs cmd; returns (stderr text, peak RSS in MiB of the child)."""
    with open(log, "w") if log else open(os.devnull, "w") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE,
                             env=env, text=True)
        err = p.stderr.read()
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError("%s failed (exit %d):\n%s" %
                           (" ".join(cmd), p.returncode, err[-2000:]))
    return err, usage.ru_maxrss / 1024.0


def measure(args, arch, seq, mode):
    name = "%s-s%d-%s" % (arch, seq, mode)
    work = os.path.join(args.out, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    spec_path = os.path.join(work, "model.json")
    with open(spec_path, "w") as f:
        json.dump(spec(arch, seq), f)
    batch = args.tokens // seq
    pkg = os.path.join(work, "model.mixpkg")
    run([os.path.join(args.bin, "mixc"), spec_path, "--batch", str(batch),
         "--seq", str(seq), "--attention", mode, "-o", pkg])
    env = dict(os.environ, MIXRT_PROFILE="1")
    run_dir = os.path.join(work, "run")
    start = time.time()
    err, rss = run([os.path.join(args.bin, "mix-run"), "train", pkg,
                    "--data", args.data, "--steps", str(args.steps),
                    "--eval-every", str(args.steps), "--eval-batches", "1",
                    "--out", run_dir], env=env,
                   log=os.path.join(work, "train.log"))
    wall = time.time() - start
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        steps = [json.loads(line) for line in f if line.strip()]
    tps = statistics.median(s["tokens_per_s"] for s in steps[1:])
    attention = {m.group(1): (float(m.group(3)), float(m.group(4)))
                 for m in PROFILE["attention"].finditer(err)}
    products = PROFILE["products"].search(err)
    loops = PROFILE["loops"].search(err)
    compute = (float(products.group(1)) if products else 0) + \
        (float(loops.group(1)) if loops else 0)
    attn_s = sum(v[0] for v in attention.values())
    row = {"model": arch, "seq": seq, "batch": batch, "attention": mode,
           "tokens_per_s": tps, "peak_mib": rss, "wall_s": wall,
           "attention_share": attn_s / (compute + attn_s)
           if attention else None,
           "attention_gflops": {k: v[1] for k, v in attention.items()}}
    print("%-8s S=%-5d B=%-3d %-10s %8.0f tok/s  peak %7.0f MiB%s" % (
        arch, seq, batch, mode, tps, rss,
        "  attention %.0f%% of compute, %s GFLOP/s" % (
            100 * row["attention_share"],
            "/".join("%.0f" % v[1] for v in attention.values()))
        if attention else ""), flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=8192,
                    help="tokens a step (batch = tokens / seq)")
    ap.add_argument("--seqs", default="256,1024,4096,8192")
    ap.add_argument("--models", default="dense,cmollm")
    ap.add_argument("--modes", default="fused,decomposed")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "brown"))
    ap.add_argument("--out", default=os.path.join(ROOT, "runs",
                                                  "long-sequences"))
    ap.add_argument("--markdown", help="also write the table to this file")
    args = ap.parse_args()
    rows = []
    for arch in args.models.split(","):
        for seq in [int(s) for s in args.seqs.split(",")]:
            for mode in args.modes.split(","):
                try:
                    rows.append(measure(args, arch, seq, mode))
                except RuntimeError as e:
                    print("%s S=%d %s: %s" % (arch, seq, mode, e),
                          file=sys.stderr)
    by = {(r["model"], r["seq"], r["attention"]): r for r in rows}
    lines = ["| model | S x B | fused tok/s | decomposed tok/s | fused / "
             "decomposed | fused peak MiB | decomposed peak MiB | attention "
             "share (fused) | attention GFLOP/s fwd/bwd (fused) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for arch in args.models.split(","):
        for seq in [int(s) for s in args.seqs.split(",")]:
            f = by.get((arch, seq, "fused"))
            d = by.get((arch, seq, "decomposed"))
            if not f and not d:
                continue
            g = f["attention_gflops"] if f else {}
            lines.append("| %s | %d x %d | %s | %s | %s | %s | %s | %s | %s |" % (
                arch, seq, args.tokens // seq,
                "%.0f" % f["tokens_per_s"] if f else "-",
                "%.0f" % d["tokens_per_s"] if d else "-",
                "%.2fx" % (f["tokens_per_s"] / d["tokens_per_s"])
                if f and d else "-",
                "%.0f" % f["peak_mib"] if f else "-",
                "%.0f" % d["peak_mib"] if d else "-",
                "%.0f%%" % (100 * f["attention_share"])
                if f and f["attention_share"] is not None else "-",
                "%.0f / %.0f" % (g.get("forward", 0), g.get("backward", 0))
                if g else "-"))
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
