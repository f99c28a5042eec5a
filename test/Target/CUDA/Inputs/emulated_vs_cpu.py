#!/usr/bin/env python3
"""Compiles a model spec twice, for the CPU and for the CUDA emulator
(mixc --target cuda --emulate), and compares what mix-run computes with
each: `grad` (the loss and every gradient) on the same parameters and
batch, and the losses of a few `train` steps.

usage: emulated_vs_cpu.py MIXC SPEC.json B S WORKDIR TOL [MIXC FLAGS...]
(the flags are the emulated package's; --precision goes to both)
The tolerance is relative to each tensor's largest magnitude (TF32 2e-2,
BF16 5e-2: the products' operands are rounded, as by the tensor cores).
Prints one summary line, or what differs (and exits 1).
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compare_safetensors import load  # noqa: E402


def run(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
    return r.stdout


def worst(a, b):
    err, name = 0.0, ""
    for k in sorted(b):
        if k not in a:
            sys.exit(f"missing {k}")
        scale = max(max(abs(v) for v in b[k]), 1e-30)
        e = max(abs(x - y) for x, y in zip(a[k], b[k])) / scale
        if e > err:
            err, name = e, k
    return err, name


def main():
    mixc, spec, b, s, work, tol = sys.argv[1:7]
    flags, tol = sys.argv[7:], float(tol)
    mixrun = os.path.join(os.path.dirname(mixc), "mix-run")
    data = os.path.join(HERE, "..", "..", "..", "Runtime", "Inputs", "corpus")
    os.makedirs(work, exist_ok=True)
    p = lambda name: os.path.join(work, name)
    # --precision is the step's, on either target: the CPU package rounds
    # the same operands.
    shared = [f for i, f in enumerate(flags)
              if f.startswith("--precision") or
              (i and flags[i - 1] == "--precision")]
    run(mixc, spec, "--batch", b, "--seq", s, *shared, "-o", p("cpu.mixpkg"))
    run(mixc, spec, "--batch", b, "--seq", s, "--target", "cuda",
        "--emulate", *flags, "-o", p("emu.mixpkg"))
    manifest = json.load(open(p("emu.mixpkg/manifest.json")))
    if manifest.get("emulated") is not True or manifest["target"] != "cuda":
        sys.exit("the emulated package's manifest does not say so")
    run(mixrun, "init", p("cpu.mixpkg"), "--out", p("params.safetensors"))
    run(sys.executable, os.path.join(HERE, "..", "..", "..", "Runtime",
                                     "Inputs", "safetensors.py"), "make",
        p("batch.safetensors"), f"tokens=I32:{b}x{s}:1",
        f"targets=I32:{b}x{s}:2")
    for kind in ("cpu", "emu"):
        run(mixrun, "grad", p(kind + ".mixpkg"), "--params",
            p("params.safetensors"), "--batch", p("batch.safetensors"),
            "--out", p(kind + ".grad.safetensors"))
    gerr, gname = worst(load(p("emu.grad.safetensors")),
                        load(p("cpu.grad.safetensors")))
    losses = {}
    for kind in ("cpu", "emu"):
        run(mixrun, "train", p(kind + ".mixpkg"), "--data", data,
            "--steps", "3", "--out", p(kind + ".run"), "--eval-every", "3",
            "--eval-batches", "1", "--lr", "0.01", "--warmup", "1")
        with open(p(kind + ".run/metrics.jsonl")) as f:
            losses[kind] = [json.loads(line)["loss"] for line in f]
    lerr = max(abs(x - y) / abs(y) for x, y in zip(losses["emu"],
                                                    losses["cpu"]))
    name = os.path.basename(spec) + (" " + " ".join(flags) if flags else "")
    if gerr > tol or lerr > tol or len(losses["emu"]) != 3:
        print(f"{name}: grad differs by {gerr:.3e} ({gname}), train losses "
              f"by {lerr:.3e}: more than {tol}")
        return 1
    print(f"{name}: grad within {tol} of the CPU's (worst {gerr:.1e}), "
          f"3 train losses within {tol}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
