#!/usr/bin/env python3
# ===- scripts/scaling-experiment.py - Horizontal scaling on Brown --------=== #
# Trains dense, cMoLLM (N = 1, 2, 4, 8 x four gatings), ParaScale (P = 2, 4),
# AltUp (K = 2, 4) and compute-matched dense models over several seeds, and
# writes docs/results.md (statistics, fitted laws, verdicts) with SVG plots.
"""The horizontal-scaling study (issue 4): the project's own, small-scale
test of the cMoLLM paper's Table 2 and Figure 3, with enough seeds to tell
differences between stream counts from seed noise.

Every configuration is trained once per seed; study seed s sets both the
initialisation (spec init.seed = s) and the batch order (mix-run train
--data-seed 1000 + s). A run writes its spec, compiles it with mixc, trains
it with `mix-run train`, evaluates the final checkpoint with `mix-run eval`
on a fixed set of validation batches, and keeps its raw results, small
enough to commit, in RAW/CONFIG/sSEED/ (spec.json, metrics.jsonl: the
training metrics averaged over windows of steps plus every evaluation, and
result.json, written last: a run without it is unfinished). Checkpoints,
packages and logs stay in the scratch directory OUT (default runs/scaling,
ignored by git); checkpoints and packages are deleted once a run is
evaluated (--keep-checkpoints keeps them). Then the script writes the report
(default docs/results.md, raw results in docs/results/raw/) and its plots
(docs/results/*.svg, drawn here in plain Python) from RAW alone, so
--report-only rebuilds it from the committed raw results.

Configurations: dense; dense with d_ff widened to match the training FLOPs of
cMoLLM (simple gating) at N = 2, 4, 8 (`dense-match-nN`); cMoLLM N = 1, 2, 4,
8 with each gating (N = 1 one run for the three gatings it makes identical,
plus adaptive's own); ParaScale P = 2, 4; AltUp K = 2, 4: 22 configurations.

The full study (the defaults): d_model 64, 4 heads, 2 layers, d_ff 256, byte
vocabulary, S = 128, B = 16, 2000 steps (4.1M tokens, 0.76 passes over
Brown's 5.4M training bytes, 33 tokens per dense parameter), peak learning
rate 1.2e-2, seeds 0-3: 22 configurations x 4 seeds = 88 runs, two at a
time with one thread each (two one-thread jobs use both cores without
OpenMP barriers; see --threads).

Time, measured on this machine (2 cores shared with other work; tools of
2026-12-03). A 60-step probe of all 22 configurations at the full size, two
at a time (--steps 60 --eval-every 60 --seeds 0), gave median step times
from 0.058 s (AltUp K = 2) and 0.065 s (dense) to 0.099-0.131 s (cMoLLM
N = 8) and 0.234 s (ParaScale P = 4): 2.0 s for one step of all 22, plus
about 210 CPU-s a seed for compiling and the final evaluations. Estimate:
4 seeds x 2000 steps x 2.0 s / 2 jobs + 4 x 210 s / 2 = 8,400 s, 2.3 hours.
Full-length runs bracket the probe within about 25% either way (dense:
101-108 s for 2000 steps, 0.048-0.054 s a step; cMoLLM N = 8 multi_head:
234-284 s, 0.11-0.14 s a step; the spread is the other work on the
machine), so expect 2-3 hours on otherwise idle cores, more when they are
busy. The whole --quick study took 2 min 50 s.

Learning rate, one for every configuration. Dense (seed 0, 2000 steps)
reached validation CE 1.981, 1.865, 1.805, 1.760 and 1.768 at peak learning
rates 1.5e-3, 3e-3 (the old 400-step study's), 6e-3, 1.2e-2 and 2.4e-2;
cMoLLM N = 8 multi_head 1.672 at 6e-3 and 1.629 at 1.2e-2; and the
configurations most likely to diverge (ParaScale P = 4, AltUp K = 4, cMoLLM
N = 8 adaptive and context_aware, dense-match-n8) trained through the
peak-learning-rate phase (the first 400 of 2000 steps) at 1.2e-2 without
trouble. So 1.2e-2: the dense baseline's best of those tried.

Length. At 1.2e-2 the dense validation CE falls 0.03-0.06 nats every 125
steps half-way through and 0.007-0.02 in the last quarter, which brings 7%
of its fall from step 125 (dense-convergence.svg shows the curve); it is
slowing, not flat (the cosine schedule also flattens the end).

What was traded. Two cores give about 18,000 CPU-seconds in two and a half
hours. In 40-step timing runs a step of d_model 128 cost 2.2x (dense) to
3.2x (cMoLLM N = 8) a step of d_model 64, d_model 96 about 1.5x; and dense
d_model 96 trained 1600 steps ended at the same validation CE (1.811) as
d_model 64 trained 2400 steps (1.819) in the same CPU time (both at 3e-3).
A wider model would have cost either steps (a comparison of early
optimisation speed, the loss still falling fast) or seeds, for no better
loss; four seeds instead of three narrow a 95% paired confidence interval by
a third for the same spread (t 3.18/sqrt(4) against 4.30/sqrt(3)), worth
more here than more steps. At d_model 64 the FFN is already 44% of the dense
model's forward FLOPs and the mixture layer 55%, 67% and 79% of cMoLLM's
at N = 2, 4, 8. Not varied: 2 layers, S = 128, one learning rate for all,
the byte vocabulary and the Brown corpus; these models (125k-360k
parameters) are hundreds to thousands of times smaller than the paper's.

  mkdir -p runs/scaling && nohup nice -n 19 python3 scripts/scaling-experiment.py \
      > runs/scaling/log.txt 2>&1 &
                                                         # the study (2-3 h)
  python3 scripts/scaling-experiment.py --skip-existing  # resume
  python3 scripts/scaling-experiment.py --report-only    # rebuild the report
  python3 scripts/scaling-experiment.py --quick          # the whole pipeline,
        # small (a few minutes): runs/scaling-quick/results.md
  python3 scripts/scaling-experiment.py --quick --only 'dense|cmollm-n2-simple' \\
      --seeds 0,1 --out /tmp/scaling-test --results-md /tmp/scaling-test/results.md

Standard library only. Every failing mixc or mix-run call stops the script
(after the runs in progress) with a message that names the run and its log
file. The tools are copied from --bin into OUT/tools first (build/ may be
rebuilt while this runs) and run with OMP_NUM_THREADS=--threads (default 1),
--jobs (default 2) at a time.
"""

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import math
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG = "scaling-experiment"

# --------------------------------------------------------------------------- #
# Presets
# --------------------------------------------------------------------------- #

# The full study and --quick, a small version of it that runs every code path
# (matched compute, statistics, fits, verdicts, plots) in a few minutes.
# Command-line options override single values.
PRESETS = {
    "full": {
        "d_model": 64, "n_head": 4, "n_layer": 2, "d_ff": 256,
        "seq": 128, "batch": 16, "steps": 2000, "lr": 1.2e-2,
        "seeds": "0,1,2,3", "eval_points": 16, "eval_batches": 8,
        "final_eval_batches": 128, "metrics_every": 25,
        "out": os.path.join(ROOT, "runs", "scaling"),
        "results_md": os.path.join(ROOT, "docs", "results.md"),
    },
    "quick": {
        "d_model": 16, "n_head": 2, "n_layer": 1, "d_ff": 32,
        "seq": 32, "batch": 4, "steps": 30, "lr": 1e-2,
        "seeds": "0,1,2", "eval_points": 3, "eval_batches": 2,
        "final_eval_batches": 4, "metrics_every": 2,
        "out": os.path.join(ROOT, "runs", "scaling-quick"),
        "results_md": os.path.join(ROOT, "runs", "scaling-quick", "results.md"),
    },
}

# --------------------------------------------------------------------------- #
# Configurations
# --------------------------------------------------------------------------- #

GATINGS = ["simple", "context_aware", "multi_head", "adaptive"]
STREAMS = [1, 2, 4, 8]
MATCH_STREAMS = [2, 4, 8]  # dense widened to cMoLLM's FLOPs at these N
DATA_SEED_OFFSET = 1000  # study seed s trains with mix-run --data-seed 1000 + s
# With N = 1 the gate is a softmax over one stream, identically 1 (docs/models.md
# §3), so simple, context_aware and multi_head compute the same
# function from the same initial kernels (parameters are drawn per name); their
# extra gate parameters get no gradient. One run, `cmollm-n1` (simple gating),
# stands for the three. adaptive differs: its magnitude r and shift t act
# outside the softmax and are trained at N = 1 as well, so it runs on its own.
N1_SHARED = ["simple", "context_aware", "multi_head"]


def cmollm_name(n, gating):
    """The configuration that measures cMoLLM with n streams and this gating."""
    if n == 1 and gating in N1_SHARED:
        return "cmollm-n1"
    return "cmollm-n%d-%s" % (n, gating)


def base_spec(args):
    return {
        "vocab_size": 256,
        "n_positions": args.seq,
        "n_layer": args.n_layer,
        "d_model": args.d_model,
        "n_head": args.n_head,
        "d_ff": args.d_ff,
        "layer_norm_eps": 1e-5,
        "init": {"seed": 0, "std": 0.02},
    }


def cmollm_section(n, gating):
    return {"streams": n, "gating": gating, "gate_heads": 4, "balance_alpha": 0.01}


def matched_d_ff(base, n, seq):
    """d_ff of a dense model with the training FLOPs per token of cMoLLM
    (simple gating) with n streams and the same d_model: the two differ only
    in the FFN, so 2 d f' = N d f + N f + f d + d N (MACs a layer), rounded to
    a multiple of 8."""
    spec = dict(base, arch="cmollm", cmollm=cmollm_section(n, "simple"))
    d, f = base["d_model"], base["d_ff"]
    mix = n * d * f + n * f + f * d + d * n
    exact = mix / (2.0 * d)
    ff = max(8, int(exact / 8.0 + 0.5) * 8)
    target = train_flops(spec, seq)
    return ff, target


def make_configs(args):
    """All configurations (without a seed)."""
    base = base_spec(args)
    configs = []

    def add(name, family, arch, section=None, **info):
        spec = {"arch": arch}
        spec.update(json.loads(json.dumps(base)))
        if section is not None:
            spec[arch] = section
        if "d_ff" in info:
            spec["d_ff"] = info["d_ff"]
        configs.append(dict(name=name, family=family, spec=spec, **info))

    add("dense", "dense", "dense", width=1)
    for n in MATCH_STREAMS:
        ff, target = matched_d_ff(base, n, args.seq)
        add("dense-match-n%d" % n, "dense-match", "dense", width=n, d_ff=ff,
            match_n=n, match_target_flops=target)
    for n in STREAMS:
        for g in GATINGS:
            if n == 1 and g in N1_SHARED[1:]:
                continue  # the same model as cmollm-n1 (see N1_SHARED)
            add(cmollm_name(n, g), "cmollm", "cmollm", cmollm_section(n, g),
                width=n, gating=g)
    for k in (2, 4):
        add("altup-k%d" % k, "altup", "altup",
            {"blocks": k, "schedule": "alternating"}, width=k)
    for p in (2, 4):
        add("parascale-p%d" % p, "parascale", "parascale",
            {"streams": p, "prefix_tokens": 8, "smoothing": 0.01}, width=p)
    return configs


def seeded(cfg, seed):
    """The run of configuration cfg with study seed `seed`."""
    spec = json.loads(json.dumps(cfg["spec"]))
    spec["init"]["seed"] = seed
    run = dict(cfg, spec=spec, config=cfg["name"], seed=seed,
               data_seed=DATA_SEED_OFFSET + seed)
    run["name"] = "%s/s%d" % (cfg["name"], seed)
    return run


# --------------------------------------------------------------------------- #
# FLOPs per token (documented in the report; keep the two in step)
# --------------------------------------------------------------------------- #


def forward_macs(spec, seq):
    """Multiply-accumulates per token of the forward pass, matrix products
    only (LayerNorm, softmax, GELU and other element-wise work left out).
    Attention scores and the attention-weighted sum are counted over the full
    context (S, plus the T_p prefix positions for ParaScale), as the usual
    6N + 12 L d S estimate does; the causal mask is not discounted."""
    d, f, v, L = spec["d_model"], spec["d_ff"], spec["vocab_size"], spec["n_layer"]
    arch = spec["arch"]
    ctx = seq + (spec["parascale"]["prefix_tokens"] if arch == "parascale" else 0)
    attn = 3 * d * d + d * d + 2 * ctx * d  # c_attn, c_proj, q.k and att.v
    ffn = 2 * d * f  # c_fc and c_proj
    logits = d * v  # tied output embedding
    if arch == "dense":
        return L * (attn + ffn) + logits
    if arch == "cmollm":
        c = spec["cmollm"]
        n, g = c["streams"], c["gating"]
        # Stacked-kernel form: m @ [K_1 .. K_N]^T (N d f), the gate-weighted
        # sum of the N stream outputs (N f), the shared down projection (f d).
        mix = n * d * f + n * f + f * d
        gate = d * n  # gate logits (multi_head: H heads of d/H x N = d N)
        if g == "context_aware":
            gate += d * (d // 4) * 2  # ctx.fc1, ctx.fc2
        elif g == "adaptive":
            gate += d * (d // 4) + (d // 4) * 3  # adapt.fc1, adapt.fc2
        return L * (attn + mix + gate) + logits
    if arch == "parascale":
        p = spec["parascale"]["streams"]
        agg = p * d * d + d * p + p * d  # agg.fc1, agg.fc2, weighted sum
        return p * L * (attn + ffn) + agg + logits
    if arch == "altup":
        k = spec["altup"]["blocks"]
        # One transformer block a layer, on the active block; prediction is a
        # K x K mix of the K blocks, correction K scaled updates.
        return L * (attn + ffn + k * k * d + k * d) + k * d + logits
    raise ValueError("unknown arch " + arch)


def train_flops(spec, seq):
    """Training FLOPs per token: forward + backward = 3 x forward, forward =
    2 FLOPs per multiply-accumulate, so 6 x forward MACs."""
    return 6 * forward_macs(spec, seq)


def ffn_share(spec, seq):
    """Share of the forward MACs spent in the FFN (dense) or the mixture
    layer with its gate (cMoLLM); None for the other architectures."""
    if spec["arch"] not in ("dense", "cmollm"):
        return None
    total = forward_macs(spec, seq)
    plain = dict(spec, arch="dense", d_ff=0)
    plain.pop("cmollm", None)
    return (total - forward_macs(plain, seq)) / total


# --------------------------------------------------------------------------- #
# Running
# --------------------------------------------------------------------------- #


class RunError(Exception):
    pass


LOG_LOCK = threading.Lock()


def log(msg):
    stamp = datetime.datetime.now().strftime("%H:%M:%S")
    with LOG_LOCK:
        print("[%s] %s" % (stamp, msg), flush=True)


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except OSError:
        return None


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def git_describe():
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def snapshot_tools(bin_dir, out_dir):
    """Copy mixc and mix-run into OUT/tools so that every run of one
    invocation uses the same binaries even while build/ is being rebuilt."""
    tools_dir = os.path.join(out_dir, "tools")
    os.makedirs(tools_dir, exist_ok=True)
    tools = {}
    for name in ("mixc", "mix-run"):
        src = os.path.join(bin_dir, name)
        if not os.access(src, os.X_OK):
            raise RunError("%s is missing or not executable (build it: "
                           "cd build && ninja mixc mix-run)" % src)
        dst = os.path.join(tools_dir, name)
        tmp = dst + ".tmp"
        shutil.copy2(src, tmp)
        os.replace(tmp, dst)
        tools[name] = {"path": dst, "source": src, "sha256": sha256(dst),
                       "mtime": datetime.datetime.fromtimestamp(
                           os.path.getmtime(src)).isoformat(timespec="seconds")}
    return tools


CHILD_ENV = dict(os.environ)


def run_logged(run_name, what, cmd, log_path, cwd=ROOT):
    """Runs cmd with stdout and stderr to log_path; raises RunError naming the
    run on a non-zero exit. Returns (wall seconds, CPU seconds, output text):
    the CPU time (user + system, all threads) depends far less than the wall
    time on what else the machine is doing. It is this child's own (wait4),
    so runs in parallel threads do not see each other's."""
    t0 = time.time()
    with open(log_path, "w") as logf:
        logf.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        logf.flush()
        try:
            proc = subprocess.Popen(cmd, cwd=cwd, stdout=logf,
                                    stderr=subprocess.STDOUT, env=CHILD_ENV)
        except OSError as e:
            raise RunError("run %s: %s could not start: %s" % (run_name, what, e))
        try:
            _, status, ru = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall, cpu = time.time() - t0, ru.ru_utime + ru.ru_stime
    with open(log_path, errors="replace") as f:
        text = f.read()
    if proc.returncode != 0:
        tail = "\n".join("    " + l for l in text.rstrip().splitlines()[-8:])
        status = ("killed by signal %d" % -proc.returncode
                  if proc.returncode < 0 else "exit status %d" % proc.returncode)
        raise RunError("run %s: %s failed (%s); log %s; last lines:\n%s"
                       % (run_name, what, status, log_path, tail))
    return wall, cpu, text


def read_metrics(path):
    rows = []
    with open(path) as f:
        for i, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except ValueError:
                raise RunError("%s:%d: not JSON: %r" % (path, i, line[:80]))
    return rows


def median_tokens_per_s(rows, skip):
    vals = [r["tokens_per_s"] for r in rows if r.get("step", 0) > skip
            and isinstance(r.get("tokens_per_s"), (int, float))]
    if not vals:  # very short runs: use what there is
        vals = [r["tokens_per_s"] for r in rows if "tokens_per_s" in r]
    return statistics.median(vals) if vals else float("nan")


def g6(x):
    """x rounded to 6 significant digits (keeps the raw files small)."""
    if isinstance(x, float) and math.isfinite(x):
        return float("%.6g" % x)
    return x


def compact_metrics(rows, every):
    """The committed form of metrics.jsonl: one row a window of `every`
    steps (a window also ends at every evaluation and at the last step) with
    the window's mean ce, loss, aux and grad_norm, its median tokens_per_s,
    the lr of its last step and `steps`, the number of steps it holds; an
    evaluation's val_ce and val_ppl are kept on the row of its step."""
    out, acc = [], []
    for i, r in enumerate(rows):
        acc.append(r)
        last = i == len(rows) - 1
        if not (r.get("step", 0) % every == 0 or "val_ce" in r or last):
            continue
        row = {"step": r["step"], "steps": len(acc)}
        for key in ("ce", "loss", "aux", "grad_norm"):
            vals = [a[key] for a in acc if isinstance(a.get(key), (int, float))]
            if vals:
                row[key] = g6(sum(vals) / len(vals))
        tps = [a["tokens_per_s"] for a in acc
               if isinstance(a.get("tokens_per_s"), (int, float))]
        if tps:
            row["tokens_per_s"] = g6(float(statistics.median(tps)))
        if "lr" in r:
            row["lr"] = g6(r["lr"])
        for key in ("val_ce", "val_ppl"):
            if key in r:
                row[key] = g6(r[key])
        out.append(row)
        acc = []
    return out


def count_params(manifest):
    total = 0
    for p in manifest["params"]:
        n = 1
        for s in p["shape"]:
            n *= s
        total += n
    return total


def run_settings(args):
    """What makes two runs of one configuration and seed the same experiment
    (the model itself is in the spec)."""
    return {"batch": args.batch, "seq": args.seq, "steps": args.steps,
            "lr": args.lr, "eval_every": args.eval_every,
            "eval_batches": args.eval_batches,
            "final_eval_batches": args.final_eval_batches,
            "threads": args.threads,
            "data": os.path.relpath(args.data, ROOT)}


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def run_one(run, args, tools):
    """Trains and evaluates one configuration with one seed. Scratch files
    (package, checkpoint, logs) go to OUT/CONFIG/sSEED, the raw results to
    RAW/CONFIG/sSEED."""
    name = run["name"]
    work_dir = os.path.join(args.out, run["config"], "s%d" % run["seed"])
    raw_dir = os.path.join(args.raw, run["config"], "s%d" % run["seed"])
    result_path = os.path.join(raw_dir, "result.json")
    settings = run_settings(args)
    if args.skip_existing and os.path.exists(result_path):
        with open(result_path) as f:
            old = json.load(f)
        if old.get("settings") == settings and old.get("spec") == run["spec"] \
                and old.get("data_seed") == run["data_seed"]:
            log("%-28s finished before: val CE %.4f (skipped)" % (name, old["val_ce"]))
            return old, False
        log("%-28s has a result with other settings: running it again" % name)

    # Start clean: only the files this script writes live in these.
    for d in (work_dir, raw_dir):
        remove(d)
        os.makedirs(d)
    spec_path = os.path.join(work_dir, "spec.json")
    write_json(spec_path, run["spec"])
    pkg = os.path.join(work_dir, "model.mixpkg")
    train_dir = os.path.join(work_dir, "run")
    load_start = loadavg()
    started = datetime.datetime.now().isoformat(timespec="seconds")

    log("%-28s compiling" % name)
    compile_s, compile_cpu, _ = run_logged(
        name, "mixc", [tools["mixc"]["path"], spec_path, "--batch", str(args.batch),
                       "--seq", str(args.seq), "-o", pkg],
        os.path.join(work_dir, "compile.log"))
    with open(os.path.join(pkg, "manifest.json")) as f:
        manifest = json.load(f)

    log("%-28s training %d steps (data seed %d)" % (name, args.steps, run["data_seed"]))
    train_cmd = [tools["mix-run"]["path"], "train", pkg, "--data", args.data,
                 "--steps", str(args.steps), "--lr", repr(args.lr),
                 "--out", train_dir,
                 "--eval-every", str(args.eval_every),
                 "--eval-batches", str(args.eval_batches),
                 "--ckpt-every", str(args.steps),
                 "--data-seed", str(run["data_seed"])]
    train_s, train_cpu, _ = run_logged(name, "mix-run train", train_cmd,
                                       os.path.join(work_dir, "train.log"))
    metrics_path = os.path.join(train_dir, "metrics.jsonl")
    ckpt = os.path.join(train_dir, "checkpoint.safetensors")
    if not os.path.exists(metrics_path) or not os.path.exists(ckpt):
        raise RunError("run %s: mix-run train succeeded but left no %s"
                       % (name, metrics_path if not os.path.exists(metrics_path) else ckpt))
    rows = read_metrics(metrics_path)
    if not rows or rows[-1].get("step") != args.steps:
        raise RunError("run %s: %s ends at step %s, expected %d"
                       % (name, metrics_path, rows[-1].get("step") if rows else None,
                          args.steps))

    log("%-28s evaluating (%d batches)" % (name, args.final_eval_batches))
    eval_s, eval_cpu, out = run_logged(
        name, "mix-run eval",
        [tools["mix-run"]["path"], "eval", pkg, "--params", ckpt, "--data", args.data,
         "--eval-batches", str(args.final_eval_batches)],
        os.path.join(work_dir, "eval.log"))
    m = re.search(r"val_ce\s+([-+0-9.eEnaif]+)", out)
    if not m:
        raise RunError("run %s: no 'val_ce' line in the output of mix-run eval "
                       "(log %s)" % (name, os.path.join(work_dir, "eval.log")))
    val_ce = float(m.group(1))
    if not math.isfinite(val_ce):
        raise RunError("run %s: mix-run eval reports val_ce %s" % (name, m.group(1)))
    m = re.search(r"perplexity\s+([-+0-9.eEnaif]+)", out)
    printed_ppl = float(m.group(1)) if m else None
    if not args.keep_checkpoints:
        remove(ckpt)
        remove(pkg)

    result = {
        "name": name, "config": run["config"], "family": run["family"],
        "width": run["width"], "gating": run.get("gating"),
        "seed": run["seed"], "data_seed": run["data_seed"],
        "match_n": run.get("match_n"),
        "match_target_flops_per_token": run.get("match_target_flops"),
        "spec": run["spec"], "settings": settings,
        "params": count_params(manifest),
        "forward_macs_per_token": forward_macs(run["spec"], args.seq),
        "train_flops_per_token": train_flops(run["spec"], args.seq),
        "ffn_share_of_forward_macs": ffn_share(run["spec"], args.seq),
        "val_ce": val_ce, "val_ppl": math.exp(val_ce),
        "val_ppl_printed": printed_ppl,
        "final_train_ce": rows[-1].get("ce"),
        "tokens_per_s_median": median_tokens_per_s(rows, args.tps_skip),
        "tokens_per_s_skip_steps": args.tps_skip,
        "metrics_every": args.metrics_every,
        "compile_s": compile_s, "train_s": train_s, "eval_s": eval_s,
        "compile_cpu_s": compile_cpu, "train_cpu_s": train_cpu, "eval_cpu_s": eval_cpu,
        "started": started,
        "finished": datetime.datetime.now().isoformat(timespec="seconds"),
        "loadavg_start": load_start, "loadavg_end": loadavg(),
        "jobs": args.jobs,
        "tools": {k: {"sha256": v["sha256"], "mtime": v["mtime"],
                      "source": os.path.relpath(v["source"], ROOT)}
                  for k, v in tools.items()},
        "git": git_describe(),
        "train_command": " ".join(shlex.quote(os.path.relpath(c, ROOT)
                                              if os.path.isabs(c) else c)
                                  for c in train_cmd),
    }
    write_json(os.path.join(raw_dir, "spec.json"), run["spec"])
    with open(os.path.join(raw_dir, "metrics.jsonl"), "w") as f:
        for row in compact_metrics(rows, args.metrics_every):
            f.write(json.dumps(row) + "\n")
    write_json(result_path, result)
    log("%-28s val CE %.4f  %.0f tok/s  (compile %.0fs, train %.0fs "
        "[%.0f CPU-s], eval %.0fs)"
        % (name, val_ce, result["tokens_per_s_median"], compile_s, train_s,
           train_cpu, eval_s))
    return result, True


def run_all(runs, args, tools):
    """Runs `runs` in order, args.jobs at a time. The first failure stops
    new runs from starting; those in progress finish, then it is raised.
    Progress is logged as the share of the training FLOPs (of the runs not
    skipped) done."""
    done_cost = [0.0]
    total_cost = [sum(train_flops(r["spec"], args.seq) for r in runs)]
    t0 = time.time()
    failures = []
    lock = threading.Lock()
    stop = threading.Event()

    def job(run):
        if stop.is_set():
            return None
        try:
            res, ran = run_one(run, args, tools)
        except BaseException as e:
            stop.set()
            with lock:
                failures.append(e)
            return None
        with lock:
            if not ran:
                total_cost[0] -= train_flops(run["spec"], args.seq)
                return res
            done_cost[0] += train_flops(run["spec"], args.seq)
            frac = done_cost[0] / total_cost[0]
            elapsed = time.time() - t0
            if 0 < frac < 1:
                log("progress: %.0f%% of the training FLOPs done after %s; about %s "
                    "to go" % (100 * frac, fmt_dur(elapsed),
                               fmt_dur(elapsed * (1 - frac) / frac)))
        return res

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futures = [ex.submit(job, r) for r in runs]
        try:
            for fut in futures:
                fut.result()
        except KeyboardInterrupt:
            stop.set()
            for fut in futures:
                fut.cancel()
            raise
    if failures:
        if len(failures) > 1 and isinstance(failures[0], RunError):
            raise RunError("%s\n(and %d more failed runs: %s)" % (
                failures[0], len(failures) - 1,
                "; ".join(str(f).splitlines()[0] for f in failures[1:])))
        raise failures[0]


# --------------------------------------------------------------------------- #
# Statistics (standard library only)
# --------------------------------------------------------------------------- #

# Two-sided 95% quantiles of Student's t by degrees of freedom; a df between
# two entries takes the smaller df's (larger, so conservative) quantile.
T95 = [(1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (5, 2.571), (6, 2.447),
       (7, 2.365), (8, 2.306), (9, 2.262), (10, 2.228), (12, 2.179), (15, 2.131),
       (20, 2.086), (30, 2.042), (60, 2.000), (120, 1.980)]
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_RNG_SEED = 20261130
ALPHA_GRID = [0.02 * i for i in range(1, 201)]  # 0.02 .. 4.00


def t95(df):
    q = None
    for d, v in T95:
        if d <= df:
            q = v
    return q if q is not None else float("nan")


class Summary:
    """Mean, standard deviation and 95% confidence interval of the mean
    (t distribution) of a list of numbers."""

    def __init__(self, values):
        self.values = list(values)
        self.n = len(self.values)
        self.mean = statistics.fmean(self.values) if self.values else float("nan")
        self.sd = statistics.stdev(self.values) if self.n > 1 else float("nan")
        if self.n > 1:
            half = t95(self.n - 1) * self.sd / math.sqrt(self.n)
            self.lo, self.hi = self.mean - half, self.mean + half
        else:
            self.lo = self.hi = float("nan")

    def ok(self):
        return self.n > 1 and math.isfinite(self.lo)


def paired(a, b):
    """a, b: {seed: value}. Summary of a[s] - b[s] over the seeds both have."""
    seeds = sorted(set(a) & set(b))
    return Summary(a[s] - b[s] for s in seeds)


def percentile(sorted_vals, q):
    if not sorted_vals:
        return float("nan")
    pos = (len(sorted_vals) - 1) * q
    i = int(math.floor(pos))
    j = min(i + 1, len(sorted_vals) - 1)
    return sorted_vals[i] + (sorted_vals[j] - sorted_vals[i]) * (pos - i)


def fit_power_law(ns, ys):
    """Least-squares fit of L(N) = E + A N^-alpha: for each alpha of a grid,
    E and A by closed-form linear least squares; the alpha with the smallest
    squared error wins. Returns dict(E, A, alpha, rmse, edge) (edge: alpha
    at an end of the grid, the fit wants a larger or smaller exponent than it
    allows) or None with fewer than three points."""
    if len(ns) < 3:
        return None
    best = None
    n = len(ns)
    ybar = sum(ys) / n
    for alpha in ALPHA_GRID:
        xs = [m ** -alpha for m in ns]
        xbar = sum(xs) / n
        sxx = sum((x - xbar) ** 2 for x in xs)
        if sxx <= 0:
            continue
        sxy = sum((x - xbar) * (y - ybar) for x, y in zip(xs, ys))
        A = sxy / sxx
        E = ybar - A * xbar
        sse = sum((E + A * x - y) ** 2 for x, y in zip(xs, ys))
        if best is None or sse < best[0] - 1e-18:
            best = (sse, E, A, alpha)
    sse, E, A, alpha = best
    return {"E": E, "A": A, "alpha": alpha, "rmse": math.sqrt(sse / n),
            "edge": alpha in (ALPHA_GRID[0], ALPHA_GRID[-1])}


def fit_with_bootstrap(by_n):
    """by_n: {N: {seed: val CE}}. Fits the law to the means over the seeds
    every N has, then refits BOOTSTRAP_RESAMPLES times to the means over
    seeds drawn with replacement (one draw of seeds for all N: a seed's runs
    share their data order, so the resampling keeps the pairing). Returns
    the fit with 2.5/97.5 percentiles of E, A, alpha, or None."""
    ns = sorted(by_n)
    seeds = sorted(set.intersection(*(set(by_n[n]) for n in ns))) if ns else []
    if len(ns) < 3 or not seeds:
        return None
    fit = fit_power_law(ns, [statistics.fmean(by_n[n][s] for s in seeds) for n in ns])
    fit["ns"], fit["seeds"] = ns, seeds
    fit["means"] = [statistics.fmean(by_n[n][s] for s in seeds) for n in ns]
    if len(seeds) < 2:
        return fit
    rng = random.Random(BOOTSTRAP_RNG_SEED)
    draws = {"E": [], "A": [], "alpha": []}
    for _ in range(BOOTSTRAP_RESAMPLES):
        pick = [rng.choice(seeds) for _ in seeds]
        f = fit_power_law(ns, [statistics.fmean(by_n[n][s] for s in pick) for n in ns])
        for k in draws:
            draws[k].append(f[k])
    for k, vals in draws.items():
        vals.sort()
        fit[k + "_ci"] = (percentile(vals, 0.025), percentile(vals, 0.975))
    fit["distinct_resamples"] = math.comb(2 * len(seeds) - 1, len(seeds))
    return fit


def slope_per_doubling(by_n):
    """Per seed, the least-squares slope of val CE against log2 N (nats per
    doubling of N) over the N every seed has; Summary over seeds."""
    ns = sorted(by_n)
    if len(ns) < 2:
        return Summary([])
    seeds = sorted(set.intersection(*(set(by_n[n]) for n in ns)))
    xs = [math.log2(n) for n in ns]
    xbar = statistics.fmean(xs)
    sxx = sum((x - xbar) ** 2 for x in xs)
    slopes = []
    for s in seeds:
        ys = [by_n[n][s] for n in ns]
        ybar = statistics.fmean(ys)
        slopes.append(sum((x - xbar) * (y - ybar) for x, y in zip(xs, ys)) / sxx)
    return Summary(slopes)


SUPPORTS, REFUTES, CANNOT_TELL = "supports", "refutes", "cannot tell"


def verdict(s, claimed="negative"):
    """The verdict of one paired difference whose claimed sign is negative
    (the claim: lower validation loss): supports if the 95% CI lies below 0,
    refutes if it lies above 0, cannot tell otherwise (or without a CI)."""
    if not s.ok():
        return CANNOT_TELL
    lo, hi = (s.lo, s.hi) if claimed == "negative" else (-s.hi, -s.lo)
    if hi < 0:
        return SUPPORTS
    if lo > 0:
        return REFUTES
    return CANNOT_TELL


def combine(verdicts):
    """One verdict for a claim tested in several cells (gatings, N):
    supports if at least half the cells support it and none refutes it,
    refutes if at least half refute it and none supports it, mixed if some
    cells support it and others refute it, cannot tell otherwise."""
    vs = list(verdicts)
    if not vs:
        return "not run"
    ns, nr = vs.count(SUPPORTS), vs.count(REFUTES)
    if ns and nr:
        return "mixed"
    if ns * 2 >= len(vs):
        return SUPPORTS
    if nr * 2 >= len(vs):
        return REFUTES
    return CANNOT_TELL


def fmt_ci(s, digits=4, sign=True):
    """'+0.0123 [+0.0050, +0.0196]' (mean and 95% CI)."""
    if s is None or s.n == 0:
        return "-"
    f = "%+.*f" if sign else "%.*f"
    if not s.ok():
        return (f % (digits, s.mean)) + " (n = %d)" % s.n
    return "%s [%s, %s]" % (f % (digits, s.mean), f % (digits, s.lo), f % (digits, s.hi))


def fmt_msd(s, digits=4):
    if s is None or s.n == 0:
        return "-"
    if s.n < 2:
        return "%.*f" % (digits, s.mean)
    return "%.*f ± %.*f" % (digits, s.mean, digits, s.sd)


class Study:
    """The finished runs, grouped: val[config][seed] = val CE."""

    def __init__(self, results):
        self.results = results
        self.val, self.runs, self.first = {}, {}, {}
        for r in results:
            self.val.setdefault(r["config"], {})[r["seed"]] = r["val_ce"]
            self.runs.setdefault(r["config"], []).append(r)
            self.first.setdefault(r["config"], r)
        self.configs = list(self.first)
        self.seeds = sorted({r["seed"] for r in results})

    def has(self, config):
        return config in self.val

    def summary(self, config):
        return Summary(self.val[config][s] for s in sorted(self.val[config])) \
            if self.has(config) else Summary([])

    def diff(self, a, b):
        if not (self.has(a) and self.has(b)):
            return Summary([])
        return paired(self.val[a], self.val[b])

    def by_n(self, gating):
        """{N: {seed: val CE}} of cMoLLM with this gating."""
        return {n: self.val[cmollm_name(n, gating)] for n in STREAMS
                if self.has(cmollm_name(n, gating))}

    def contrast_4_8_vs_2(self, gating):
        """Per seed: mean of val CE at N = 4 and 8 (those run) minus at N = 2."""
        c2 = cmollm_name(2, gating)
        highs = [cmollm_name(n, gating) for n in (4, 8) if self.has(cmollm_name(n, gating))]
        if not self.has(c2) or not highs:
            return Summary([])
        seeds = sorted(set(self.val[c2]).intersection(*(set(self.val[h]) for h in highs)))
        return Summary(statistics.fmean(self.val[h][s] for h in highs) - self.val[c2][s]
                       for s in seeds)

    def mean_metric(self, config, key):
        vals = [r[key] for r in self.runs.get(config, [])
                if isinstance(r.get(key), (int, float))]
        return statistics.fmean(vals) if vals else float("nan")


def claims(st):
    """The four claims of the paper, each with its per-cell evidence and
    verdict, computed from the numbers (rules in the report)."""
    out = []
    # 1. Loss falls as N grows: slope of val CE per doubling of N, paired.
    cells = []
    for g in GATINGS:
        bn = st.by_n(g)
        if len(bn) >= 2:
            s = slope_per_doubling(bn)
            cells.append((g, s, verdict(s)))
    out.append({
        "claim": "Validation loss falls as the stream count N grows (N = 1 to 8)",
        "test": "per gating, the least-squares slope of val CE against log2 N "
                "(nats per doubling of N), computed per seed; 95% t interval over seeds",
        "cells": cells, "verdict": combine(v for _, _, v in cells)})
    # 2. Gains continue to N = 4-8 rather than stopping at N = 2.
    cells = []
    for g in GATINGS:
        s = st.contrast_4_8_vs_2(g)
        if s.n:
            cells.append((g, s, verdict(s)))
    out.append({
        "claim": "The gains continue to N = 4-8 (not only to N = 2)",
        "test": "per gating, mean of val CE at N = 4 and N = 8 minus val CE at N = 2, "
                "paired by seed",
        "cells": cells, "verdict": combine(v for _, _, v in cells)})
    # 3. multi_head is the best gating, at N = 8 (the paper's best point).
    cells = []
    mh = cmollm_name(8, "multi_head")
    for g in GATINGS:
        if g == "multi_head":
            continue
        s = st.diff(mh, cmollm_name(8, g))
        if s.n:
            cells.append(("vs " + g, s, verdict(s)))
    vs = [v for _, _, v in cells]
    if not vs:
        v = "not run"
    elif all(x == SUPPORTS for x in vs):
        v = SUPPORTS
    elif REFUTES in vs:
        v = REFUTES
    else:
        v = CANNOT_TELL
    out.append({
        "claim": "multi_head is the best gating (at N = 8)",
        "test": "val CE of multi_head minus each other gating at N = 8, paired by seed; "
                "supports only if multi_head beats every other gating, refutes if any "
                "other gating beats it",
        "cells": cells, "verdict": v})
    # 4. Better than dense at matched compute.
    cells = []
    for n in MATCH_STREAMS:
        for g in GATINGS:
            s = st.diff(cmollm_name(n, g), "dense-match-n%d" % n)
            if s.n:
                cells.append(("N = %d %s" % (n, g), s, verdict(s)))
    out.append({
        "claim": "cMoLLM is better than dense at matched compute",
        "test": "val CE of cMoLLM minus the dense model whose d_ff is widened to the same "
                "training FLOPs per token (dense-match-nN), paired by seed, for every N "
                "and gating",
        "cells": cells, "verdict": combine(v for _, _, v in cells)})
    # 5. (The comparison of the paper's Table 2.) Better than dense of the
    # same width, which costs (N + 1)/2 times its FFN FLOPs.
    cells = []
    for n in MATCH_STREAMS:
        for g in GATINGS:
            s = st.diff(cmollm_name(n, g), "dense")
            if s.n:
                cells.append(("N = %d %s" % (n, g), s, verdict(s)))
    out.append({
        "claim": "cMoLLM is better than dense at equal width (N > 1; more FLOPs)",
        "test": "val CE of cMoLLM minus the dense model with the same d_model and d_ff, "
                "paired by seed, for N = 2, 4, 8 and every gating",
        "cells": cells, "verdict": combine(v for _, _, v in cells)})
    return out


# --------------------------------------------------------------------------- #
# SVG plots, by hand
# --------------------------------------------------------------------------- #

COLORS = {
    "simple": "#1f77b4", "context_aware": "#ff7f0e", "multi_head": "#2ca02c",
    "adaptive": "#d62728", "dense": "#000000", "parascale": "#9467bd",
    "altup": "#8c564b", "dense-match": "#000000",
}
N_COLORS = {1: "#6baed6", 2: "#08519c", 4: "#31a354", 8: "#e08b00"}
# Pixel offsets that keep the error bars of the four gatings at one N apart.
DX = {"simple": -9.0, "context_aware": -3.0, "multi_head": 3.0, "adaptive": 9.0}


def esc(s):
    return (str(s).replace("&", "&amp;").replace("<", "&lt;")
            .replace(">", "&gt;").replace('"', "&quot;"))


def nice_ticks(lo, hi, target=6):
    """Round tick positions covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0, 1.0]
    if hi <= lo:
        hi = lo + (abs(lo) * 0.1 or 1.0)
    raw = (hi - lo) / max(1, target - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = mag
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            step = m * mag
            break
    start = math.floor(lo / step + 1e-9) * step
    ticks = []
    t = start
    while t <= hi + step * 0.5 and len(ticks) < 50:
        ticks.append(round(t, 12))
        t += step
    if ticks[-1] < hi:
        ticks.append(round(ticks[-1] + step, 12))
    return ticks


def fmt_tick(v, step):
    """v with as many decimals as the tick step needs."""
    digits = 0
    while digits < 6 and abs(step * 10 ** digits - round(step * 10 ** digits)) > 1e-6:
        digits += 1
    if abs(v) < step * 1e-6:
        v = 0.0  # no "-0.000"
    return "%.*f" % (digits, v)


def fmt_si(v):
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            x = v / div
            return ("%.1f" % x).rstrip("0").rstrip(".") + suffix
    return "%g" % v


class Panel:
    """One plot area: axes, ticks, labels, lines, points and a legend."""

    def __init__(self, x, y, w, h, title, xlabel, ylabel, xlim, ylim,
                 xlog2=False, xticks=None, xtick_fmt=None, right_label=None,
                 right_fmt=None):
        self.x, self.y, self.w, self.h = x, y, w, h
        self.title, self.xlabel, self.ylabel = title, xlabel, ylabel
        self.xlog2 = xlog2
        self.xtick_fmt = xtick_fmt
        self.right_label, self.right_fmt = right_label, right_fmt
        self.ml, self.mr, self.mt, self.mb = 62, (58 if right_label else 14), 28, 44
        xl, xh = xlim
        if xlog2:
            xl, xh = math.log2(xl), math.log2(xh)
        pad = (xh - xl) * 0.05 or 0.5
        self.xlim = (xl - pad, xh + pad) if xlog2 else (xl, xh)
        self.xticks = xticks if xticks is not None else nice_ticks(xl, xh)
        if xticks is None and not xlog2:
            self.xlim = (min(xl, self.xticks[0]), max(xh, self.xticks[-1]))
        self.yticks = nice_ticks(*ylim)
        self.ylim = (self.yticks[0], self.yticks[-1])
        self.items = []
        self.legend = []

    def px(self, v):
        if self.xlog2:
            v = math.log2(v)
        x0, x1 = self.xlim
        return self.x + self.ml + (v - x0) / (x1 - x0) * (self.w - self.ml - self.mr)

    def py(self, v):
        y0, y1 = self.ylim
        v = min(max(v, y0), y1)
        return self.y + self.h - self.mb - (v - y0) / (y1 - y0) * (self.h - self.mt - self.mb)

    def line(self, pts, color, label=None, dash=None, width=1.6, marker=None, dx=0.0):
        """A polyline through pts (data coordinates), shifted dx pixels to the
        right (to keep error bars at the same x apart)."""
        pts = [(a, b) for a, b in pts if b is not None and math.isfinite(b)]
        if not pts:
            if label:
                self.legend.append((label, color, dash, marker, width))
            return
        if width > 0:
            d = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", self.px(a) + dx,
                                          self.py(b))
                         for i, (a, b) in enumerate(pts))
            self.items.append('<path d="%s" fill="none" stroke="%s" stroke-width="%.1f"%s/>'
                              % (d, color, width,
                                 ' stroke-dasharray="%s"' % dash if dash else ""))
        if marker:
            for a, b in pts:
                self.items.append(self._marker(marker, self.px(a) + dx, self.py(b), color))
        if label:
            self.legend.append((label, color, dash, marker, width))

    def errorbar(self, x, lo, hi, color, dx=0.0):
        """A vertical bar from lo to hi at x (plus dx pixels), with caps."""
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return
        X, y0, y1 = self.px(x) + dx, self.py(lo), self.py(hi)
        self.items.append('<path d="M%.1f,%.1fL%.1f,%.1fM%.1f,%.1fL%.1f,%.1fM%.1f,%.1fL%.1f,%.1f" '
                          'fill="none" stroke="%s" stroke-width="1.2"/>'
                          % (X, y0, X, y1, X - 3, y0, X + 3, y0, X - 3, y1, X + 3, y1,
                             color))

    def area(self, pts, color, opacity=0.15):
        """A shaded band: pts are (x, lo, hi) in data coordinates."""
        pts = [(a, lo, hi) for a, lo, hi in pts if math.isfinite(lo) and math.isfinite(hi)]
        if len(pts) < 2:
            return
        d = "M" + " L".join("%.1f,%.1f" % (self.px(a), self.py(lo)) for a, lo, _ in pts)
        d += " L" + " L".join("%.1f,%.1f" % (self.px(a), self.py(hi))
                              for a, _, hi in reversed(pts)) + " Z"
        self.items.insert(0, '<path d="%s" fill="%s" fill-opacity="%.2f" stroke="none"/>'
                          % (d, color, opacity))

    def hline(self, v, color, label=None, dash="6,4"):
        x0, x1 = self.xlim
        if self.xlog2:
            x0, x1 = 2 ** x0, 2 ** x1
        self.line([(x0, v), (x1, v)], color, label, dash=dash, width=1.2)

    def band(self, lo, hi, color, opacity=0.12):
        y0, y1 = self.py(hi), self.py(lo)
        self.items.insert(0, '<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" '
                          'fill="%s" fill-opacity="%.2f"/>'
                          % (self.x + self.ml, y0, self.w - self.ml - self.mr,
                             max(0.5, y1 - y0), color, opacity))

    @staticmethod
    def _marker(kind, x, y, color):
        if kind == "square":
            return ('<rect x="%.1f" y="%.1f" width="7" height="7" fill="%s"/>'
                    % (x - 3.5, y - 3.5, color))
        if kind == "triangle":
            return ('<path d="M%.1f,%.1fL%.1f,%.1fL%.1f,%.1fZ" fill="%s"/>'
                    % (x, y - 4.5, x + 4.5, y + 3.5, x - 4.5, y + 3.5, color))
        if kind == "diamond":
            return ('<path d="M%.1f,%.1fL%.1f,%.1fL%.1f,%.1fL%.1f,%.1fZ" fill="%s"/>'
                    % (x, y - 5, x + 5, y, x, y + 5, x - 5, y, color))
        return '<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>' % (x, y, color)

    def svg(self, legend_pos="right-top"):
        out = []
        L, R = self.x + self.ml, self.x + self.w - self.mr
        T, B = self.y + self.mt, self.y + self.h - self.mb
        out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="white" '
                   'stroke="#444" stroke-width="1"/>' % (L, T, R - L, B - T))
        ystep = self.yticks[1] - self.yticks[0] if len(self.yticks) > 1 else 1
        for t in self.yticks:
            yy = self.py(t)
            out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>'
                       % (L, yy, R, yy))
            out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444"/>'
                       % (L - 4, yy, L, yy))
            out.append('<text x="%.1f" y="%.1f" text-anchor="end" font-size="11">%s</text>'
                       % (L - 6, yy + 4, esc(fmt_tick(t, ystep))))
            if self.right_fmt:
                out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444"/>'
                           % (R, yy, R + 4, yy))
                out.append('<text x="%.1f" y="%.1f" font-size="11">%s</text>'
                           % (R + 6, yy + 4, esc(self.right_fmt(t))))
        xs = self.xticks
        xstep = (xs[1] - xs[0]) if len(xs) > 1 else 1
        for t in xs:
            xx = self.px(t)
            out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>'
                       % (xx, T, xx, B))
            out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444"/>'
                       % (xx, B, xx, B + 4))
            label = self.xtick_fmt(t) if self.xtick_fmt else fmt_tick(t, xstep)
            out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11">%s</text>'
                       % (xx, B + 16, esc(label)))
        out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="13" '
                   'font-weight="bold">%s</text>' % ((L + R) / 2, self.y + 18, esc(self.title)))
        out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="12">%s</text>'
                   % ((L + R) / 2, B + 34, esc(self.xlabel)))
        cy = (T + B) / 2
        out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="12" '
                   'transform="rotate(-90 %.1f %.1f)">%s</text>'
                   % (self.x + 16, cy, self.x + 16, cy, esc(self.ylabel)))
        if self.right_label:
            rx = self.x + self.w - 8
            out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="12" '
                       'transform="rotate(90 %.1f %.1f)">%s</text>'
                       % (rx, cy, rx, cy, esc(self.right_label)))
        out.append('<g clip-path="url(#clip%d_%d)">' % (int(self.x), int(self.y)))
        out.extend(self.items)
        out.append("</g>")
        out.insert(0, '<clipPath id="clip%d_%d"><rect x="%.1f" y="%.1f" width="%.1f" '
                   'height="%.1f"/></clipPath>' % (int(self.x), int(self.y), L, T, R - L, B - T))
        if self.legend:
            lw = max(len(l[0]) for l in self.legend) * 6.6 + 40
            lh = 16 * len(self.legend) + 8
            if legend_pos == "outside":
                lx, ly = self.x + self.w + 8, T
            elif legend_pos == "right-top":
                lx, ly = R - lw - 6, T + 6
            else:
                lx, ly = L + 6, T + 6
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="white" '
                       'fill-opacity="0.9" stroke="#999"/>' % (lx, ly, lw, lh))
            for i, (label, color, dash, marker, width) in enumerate(self.legend):
                yy = ly + 14 + 16 * i
                out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" '
                           'stroke-width="%.1f"%s/>'
                           % (lx + 6, yy - 4, lx + 28, yy - 4, color, width,
                              ' stroke-dasharray="%s"' % dash if dash else ""))
                if marker:
                    out.append(self._marker(marker, lx + 17, yy - 4, color))
                out.append('<text x="%.1f" y="%.1f" font-size="11">%s</text>'
                           % (lx + 34, yy, esc(label)))
        return "\n".join(out)


def svg_document(w, h, body, title):
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
            'viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif">\n'
            '<title>%s</title>\n<rect width="100%%" height="100%%" fill="white"/>\n%s\n</svg>\n'
            % (w, h, w, h, esc(title), body))


def ylim_of(values, pad_frac=0.08, min_pad=0.005):
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return (0.0, 1.0)
    lo, hi = min(vals), max(vals)
    pad = max((hi - lo) * pad_frac, min_pad)
    return lo - pad, hi + pad


def right_ppl(v):
    return "%.2f" % math.exp(v)


def write_svg(path, w, h, body, title):
    with open(path, "w") as f:
        f.write(svg_document(w, h, body, title))


def notes_svg(x, y, lines, size=11):
    return "\n".join('<text x="%d" y="%d" font-size="%d">%s</text>'
                     % (x, y + 15 * j, size, esc(t)) for j, t in enumerate(lines))


def plot_val_vs_n(st, fits, path):
    """Mean val CE (error bars: ± one standard deviation over seeds) against
    N for each gating, the fitted laws, dense and the compute-matched dense
    models, ParaScale against P and AltUp against K."""
    ys = []
    for c in st.configs:
        s = st.summary(c)
        ys += [s.mean - (s.sd if s.n > 1 else 0), s.mean + (s.sd if s.n > 1 else 0)]
    p = Panel(0, 0, 720, 480,
              "Validation CE against streams (mean ± sd over seeds)",
              "streams N (cMoLLM and matched dense); P (ParaScale); K (AltUp)",
              "validation CE (nats/byte)", (1, 8), ylim_of(ys), xlog2=True,
              xticks=[1, 2, 4, 8], xtick_fmt=lambda t: "%d" % t,
              right_label="perplexity", right_fmt=right_ppl)
    d = st.summary("dense")
    if d.n:
        if d.n > 1:
            p.band(d.mean - d.sd, d.mean + d.sd, "#000000")
        p.hline(d.mean, COLORS["dense"], "dense (band: ± sd)")
        pts = [(1, d.mean)]
        for n in MATCH_STREAMS:
            s = st.summary("dense-match-n%d" % n)
            if s.n:
                pts.append((n, s.mean))
                p.errorbar(n, s.mean - s.sd, s.mean + s.sd, COLORS["dense"])
        if len(pts) > 1:
            p.line(pts, COLORS["dense"], "dense, d_ff matched to N's FLOPs",
                   marker="diamond", width=1.2)
    for g in GATINGS:
        pts = []
        for n in STREAMS:
            s = st.summary(cmollm_name(n, g))
            if s.n:
                pts.append((n, s.mean))
                if s.n > 1:
                    p.errorbar(n, s.mean - s.sd, s.mean + s.sd, COLORS[g], dx=DX[g])
        p.line(pts, COLORS[g], "cMoLLM " + g, marker="circle", dx=DX[g])
        fit = fits.get(g)
        if fit:
            xs = [2 ** (i / 20.0) for i in range(0, 61)]
            p.line([(x, fit["E"] + fit["A"] * x ** -fit["alpha"]) for x in xs],
                   COLORS[g], dash="2,3", width=1.0)
    for fam, marker, label in (("parascale", "square", "ParaScale (x = P)"),
                               ("altup", "triangle", "AltUp (x = K)")):
        pts = []
        for c in st.configs:
            if st.first[c]["family"] == fam:
                s = st.summary(c)
                pts.append((st.first[c]["width"], s.mean))
                if s.n > 1:
                    p.errorbar(st.first[c]["width"], s.mean - s.sd, s.mean + s.sd,
                               COLORS[fam])
        p.line(sorted(pts), COLORS[fam], label, dash="3,3", marker=marker)
    note = ["Dotted: fitted L(N) = E + A N^-alpha",
            "(to the seed means of N = 1, 2, 4, 8).",
            "N = 1: one run a seed (cmollm-n1)",
            "for simple, context_aware and",
            "multi_head (the same model with",
            "one stream); adaptive has its own.",
            "Seeds: %s; error bars ± one sd." % ", ".join(str(s) for s in st.seeds),
            "Gatings drawn a few pixels apart."]
    write_svg(path, 980, 480, p.svg("outside") + "\n" + notes_svg(738, 250, note),
              "validation CE against N")


def plot_deltas(st, path):
    """Paired differences to dense with 95% confidence intervals: at equal
    width (left) and at matched training FLOPs (right)."""
    left, right = [], []  # (x, gating or family, Summary)
    for c in st.configs:
        r = st.first[c]
        if r["family"] in ("cmollm", "parascale", "altup", "dense-match"):
            left.append((r["width"], r.get("gating") or r["family"], c, st.diff(c, "dense")))
        if r["family"] == "cmollm" and r["width"] in MATCH_STREAMS:
            right.append((r["width"], r["gating"], c,
                          st.diff(c, "dense-match-n%d" % r["width"])))
    vals = [0.0]
    for _, _, _, s in left + right:
        vals += [s.lo, s.hi] if s.ok() else [s.mean]
    ylim = ylim_of(vals)
    body = []
    for i, (title, items, xlabel) in enumerate((
            ("At equal width: minus dense (same d_ff)", left,
             "streams N (cMoLLM); P (ParaScale); K (AltUp)"),
            ("At matched compute: minus dense-match-nN", right, "streams N"))):
        p = Panel(i * 470, 0, 470, 460, title, xlabel,
                  "val CE difference (nats), 95% CI" if i == 0 else "", (1, 8), ylim,
                  xlog2=True, xticks=[1, 2, 4, 8], xtick_fmt=lambda t: "%d" % t)
        p.hline(0.0, "#000000", dash="4,3")
        for key in GATINGS + ["parascale", "altup", "dense-match"]:
            pts = []
            for x, k, _, s in items:
                if k == key and s.n:
                    dx = DX.get(key, 0.0)
                    pts.append((x, s.mean))
                    if s.ok():
                        p.errorbar(x, s.lo, s.hi, COLORS[key], dx=dx)
            if pts:
                label = ("cMoLLM " + key) if key in GATINGS else \
                    {"parascale": "ParaScale", "altup": "AltUp",
                     "dense-match": "dense, d_ff widened to N's FLOPs"}[key]
                p.line(sorted(pts), COLORS[key], label if i == 0 else None,
                       marker={"parascale": "square", "altup": "triangle",
                               "dense-match": "diamond"}.get(key, "circle"),
                       width=1.0, dash="3,3" if key not in GATINGS else None,
                       dx=DX.get(key, 0.0))
        body.append(p.svg("outside" if i == 1 else "left-top"))
    note = ["Differences of validation CE paired by seed",
            "(a seed fixes the initialisation and the data",
            "order); bars: 95%% t intervals over %d seeds." % len(st.seeds),
            "Below 0: better than the dense model."]
    body.append(notes_svg(950, 300, note))
    write_svg(path, 1200, 460, "\n".join(body), "differences to dense")


def plot_val_vs_flops(st, path):
    xs, ys = [], []
    for c in st.configs:
        s = st.summary(c)
        xs.append(st.first[c]["train_flops_per_token"] / 1e6)
        ys += [s.mean - (s.sd if s.n > 1 else 0), s.mean + (s.sd if s.n > 1 else 0)]
    p = Panel(0, 0, 720, 480, "Validation CE against training compute (mean ± sd)",
              "training FLOPs per token (millions, analytic)",
              "validation CE (nats/byte)", (min(xs) * 0.95, max(xs) * 1.03), ylim_of(ys),
              right_label="perplexity", right_fmt=right_ppl)

    def series(configs, color, label, marker, width, dash=None):
        pts = []
        for c in configs:
            if not st.has(c):
                continue
            s = st.summary(c)
            x = st.first[c]["train_flops_per_token"] / 1e6
            pts.append((x, s.mean))
            if s.n > 1:
                p.errorbar(x, s.mean - s.sd, s.mean + s.sd, color)
        p.line(sorted(pts), color, label, marker=marker, width=width, dash=dash)

    series(["dense"] + ["dense-match-n%d" % n for n in MATCH_STREAMS], COLORS["dense"],
           "dense, d_ff widened", "diamond", 1.2, "4,3")
    for g in GATINGS:
        series([cmollm_name(n, g) for n in STREAMS], COLORS[g], "cMoLLM " + g,
               "circle", 1.0)
    series([c for c in st.configs if st.first[c]["family"] == "parascale"],
           COLORS["parascale"], "ParaScale P = 2, 4", "square", 0.0)
    series([c for c in st.configs if st.first[c]["family"] == "altup"],
           COLORS["altup"], "AltUp K = 2, 4", "triangle", 0.0)
    write_svg(path, 980, 480, p.svg("outside"), "validation CE against FLOPs")


def load_curve(raw, config, seed, key):
    """[(step, steps in the window, value)] from a run's compact metrics."""
    path = os.path.join(raw, config, "s%d" % seed, "metrics.jsonl")
    if not os.path.exists(path):
        return []
    return [(r["step"], r.get("steps", 1), r[key]) for r in read_metrics(path)
            if isinstance(r.get(key), (int, float)) and math.isfinite(r[key])]


def smooth(rows, beta=0.95):
    """Exponential moving average with weight beta a step, bias-corrected,
    over windows of steps (a window of n steps weighs as n steps)."""
    out, acc, w = [], 0.0, 0.0
    for step, n, v in rows:
        b = beta ** n
        acc = b * acc + (1 - b) * v
        w = b * w + (1 - b)
        out.append((step, acc / w))
    return out


def mean_curve(st, raw, config, key, smoothed, ref=None):
    """The curve of `config` averaged over seeds at the steps every seed
    has; with ref, each seed's curve minus ref's curve of the same seed."""
    per = []
    for s in sorted(st.val.get(config, {})):
        rows = load_curve(raw, config, s, key)
        c = dict(smooth(rows) if smoothed else [(a, v) for a, _, v in rows])
        if ref is not None:
            r = load_curve(raw, ref, s, key)
            if not r:
                continue
            rc = dict(smooth(r) if smoothed else [(a, v) for a, _, v in r])
            c = {a: v - rc[a] for a, v in c.items() if a in rc}
        if c:
            per.append(c)
    if not per:
        return []
    steps = sorted(set.intersection(*(set(c) for c in per)))
    return [(a, statistics.fmean(c[a] for c in per)) for a in steps]


def plot_curves(st, raw, path, key, smoothed, title, ylabel, from_frac=0.0,
                relative=False):
    """Panels: one per gating (N = 1, 2, 4, 8 against dense) and one with the
    baselines; each curve the mean over seeds. relative: each seed's curve
    minus the dense curve of the same seed (the same batches), averaged."""
    groups = []
    dense_label = "dense" + (" (zero line)" if relative else "")
    for g in GATINGS:
        members = [("dense", dense_label, COLORS["dense"], "4,3")]
        members += [(cmollm_name(n, g), "N = %d" % n, N_COLORS[n], None) for n in STREAMS]
        groups.append(("cMoLLM, %s gating" % g, members))
    groups.append(("Baselines", [
        ("dense", dense_label, COLORS["dense"], "4,3" if relative else None),
        ("dense-match-n2", "dense, FLOPs of N = 2", "#999999", "2,2"),
        ("dense-match-n8", "dense, FLOPs of N = 8", "#555555", "2,2"),
        ("parascale-p2", "ParaScale P = 2", "#c5b0d5", None),
        ("parascale-p4", "ParaScale P = 4", COLORS["parascale"], None),
        ("altup-k2", "AltUp K = 2", "#e0a080", None),
        ("altup-k4", "AltUp K = 4", COLORS["altup"], None),
        ("cmollm-n1", "cMoLLM N = 1", N_COLORS[1], "4,3"),
    ]))
    data = {}
    for c in st.configs:
        data[c] = mean_curve(st, raw, c, key, smoothed, "dense" if relative else None)
    steps = max((r["settings"]["steps"] for r in st.results), default=1)
    x0 = max(1, int(steps * from_frac)) if from_frac > 0 else 0
    shown = [b for pts in data.values() for a, b in pts if a >= x0]
    if not shown:
        shown = [b for pts in data.values() for _, b in pts] or [0.0, 1.0]
    ylim = ylim_of(shown, 0.05, 0.002)
    cols, pw, ph, lw = 2, 500, 340, 190  # lw: room for the legend right of a panel
    rows = (len(groups) + cols - 1) // cols
    body = []
    for i, (gtitle, members) in enumerate(groups):
        p = Panel((i % cols) * (pw + lw), (i // cols) * ph, pw, ph, gtitle, "training step",
                  ylabel, (x0, steps), ylim)
        for name, label, color, dash in members:
            if data.get(name):
                p.line([(a, b) for a, b in data[name] if a >= x0], color, label,
                       dash=dash, marker=None if smoothed else "circle",
                       width=1.6)
        body.append(p.svg("outside"))
    W, H = cols * (pw + lw), rows * ph
    notes = ["%s." % title,
             "Each curve: the mean over seeds %s." % ", ".join(str(s) for s in st.seeds),
             "N = 1 is one run a seed (cmollm-n1) for simple, context_aware and",
             "multi_head: with one stream the three are the same model."]
    if smoothed:
        notes.append("Smoothing: exponential moving average, weight 0.95 a step, "
                     "bias-corrected.")
    if relative:
        notes.append("Differences are taken per seed (same batches), then averaged.")
    tx, ty = pw + lw + 20, (rows - 1) * ph + 50
    body.append(notes_svg(tx, ty, notes, 12))
    write_svg(path, W, H, "\n".join(body), title)


def dense_convergence(st, raw):
    """The dense model's validation curve (in-training evaluations), mean
    over seeds, and how much of its fall came in the last quarter."""
    curve = mean_curve(st, raw, "dense", "val_ce", False)
    if len(curve) < 3:
        return None
    steps = curve[-1][0]

    def at(frac):
        target = steps * frac
        return min(curve, key=lambda t: abs(t[0] - target))

    first, q3, half, last = curve[0], at(0.75), at(0.5), curve[-1]
    total = first[1] - last[1]
    return {"curve": curve, "first": first, "half": half, "q3": q3, "last": last,
            "last_quarter_drop": q3[1] - last[1],
            "second_half_drop": half[1] - last[1],
            "share_last_quarter": (q3[1] - last[1]) / total if total > 0 else float("nan")}


def plot_dense_convergence(st, raw, conv, path):
    per = {s: [(a, v) for a, _, v in load_curve(raw, "dense", s, "val_ce")]
           for s in st.val.get("dense", {})}
    vals = [v for pts in per.values() for _, v in pts]
    steps = conv["last"][0]
    lo = min(vals)
    # From a tenth of the way in: the first evaluations would flatten the rest.
    hi = max(v for a, v in conv["curve"] if a >= steps * 0.1)
    p = Panel(0, 0, 720, 440, "Dense model: validation CE during training",
              "training step", "validation CE (nats/byte)", (0, steps),
              ylim_of([lo, hi], 0.05), right_label="perplexity", right_fmt=right_ppl)
    for i, (s, pts) in enumerate(sorted(per.items())):
        p.line(pts, "#b0b0b0", "each seed" if i == 0 else None, width=1.0)
    p.line(conv["curve"], COLORS["dense"], "mean over seeds", marker="circle")
    for n, color in ((2, "#999999"), (8, "#555555")):
        c = mean_curve(st, raw, "dense-match-n%d" % n, "val_ce", False)
        p.line(c, color, "dense, FLOPs of N = %d" % n, dash="3,3")
    q3 = conv["q3"]
    p.line([(q3[0], lo - 1), (q3[0], hi + 1)], "#d62728", "last quarter starts",
           dash="2,3", width=1.0)
    note = ["Validation CE on %d batches every %d steps"
            % (st.results[0]["settings"]["eval_batches"],
               st.results[0]["settings"]["eval_every"]),
            "(the same batches each time).",
            "Last quarter: %+.4f nats, %.0f%% of the fall"
            % (-conv["last_quarter_drop"], 100 * conv["share_last_quarter"]),
            "from the first evaluation (%s)." % ("step %d" % conv["first"][0]),
            "The learning rate decays (cosine to 10%),",
            "which flattens every curve at the end."]
    write_svg(path, 980, 440, p.svg("outside") + "\n" + notes_svg(738, 250, note),
              "dense convergence")


# --------------------------------------------------------------------------- #
# The report
# --------------------------------------------------------------------------- #

DISCUSSION_BEGIN = "<!-- hand-written notes: begin (kept when the report is rebuilt) -->"
DISCUSSION_END = "<!-- hand-written notes: end -->"

# How each claim's verdicts read, cell by cell ({} = the cells).
CLAIM_WORDS = [
    ("the loss falls with N for {}", "the loss rises with N for {}"),
    ("N = 4-8 beat N = 2 for {}", "N = 4-8 are worse than N = 2 for {}"),
    ("multi_head beats {}", "multi_head is worse than {}"),
    ("cMoLLM beats the compute-matched dense model at {}",
     "the compute-matched dense model beats cMoLLM at {}"),
    ("cMoLLM beats dense of its width at {}", "dense of the same width beats cMoLLM at {}"),
]


def describe_family(r):
    if r["family"] == "dense":
        return "dense", "-", "-"
    if r["family"] == "dense-match":
        return "dense", "FLOPs of N = %d" % r["match_n"], "-"
    if r["family"] == "cmollm":
        if r["config"] == "cmollm-n1":
            return "cMoLLM", "N = 1", "simple (= context_aware = multi_head at N = 1)"
        return "cMoLLM", "N = %d" % r["width"], r["gating"]
    if r["family"] == "parascale":
        return "ParaScale", "P = %d" % r["width"], "-"
    return "AltUp", "K = %d" % r["width"], "-"


def fmt_dur(s):
    s = int(round(s))
    return "%d:%02d:%02d" % (s // 3600, s % 3600 // 60, s % 60) if s >= 3600 \
        else "%d:%02d" % (s // 60, s % 60)


def fmt_secs(s):
    return ("%.0f s" if s >= 10 else "%.1f s") % s


def show_path(path):
    """path relative to the repository root when it is inside it."""
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    return path if rel.startswith("..") else rel


def half_width(s):
    return (s.hi - s.lo) / 2 if s.ok() else float("nan")


def explain(claim, words):
    """Why the verdict is what it is, from the cells."""
    cells = claim["cells"]
    if not cells:
        return "Not run (the configurations it needs have no finished runs)."
    groups = {SUPPORTS: [], REFUTES: [], CANNOT_TELL: []}
    for label, s, v in cells:
        groups[v].append((label, s))
    def names(group):
        return ", ".join(re.sub(r"^vs ", "", l) for l, _ in group)

    parts = []
    if groups[SUPPORTS]:
        parts.append(words[0].format(names(groups[SUPPORTS]))
                     + " (95% interval entirely on the claimed side of 0)")
    if groups[REFUTES]:
        parts.append(words[1].format(names(groups[REFUTES]))
                     + " (interval entirely on the other side)")
    if groups[CANNOT_TELL]:
        hws = [half_width(s) for _, s in groups[CANNOT_TELL] if s.ok()]
        parts.append("the interval includes 0 for %s%s"
                     % (names(groups[CANNOT_TELL]),
                        " (half-widths %.4f-%.4f nats: differences smaller than that "
                        "are not resolved with %d seeds)"
                        % (min(hws), max(hws), max(s.n for _, s in groups[CANNOT_TELL]))
                        if hws else " (fewer than two seeds: no interval)"))
    text = "; ".join(parts)
    # A sentence starts with a capital, but cMoLLM keeps its spelling.
    if not text.startswith("cMoLLM"):
        text = text[:1].upper() + text[1:]
    return text + "."


def write_report(st, fits, cl, conv, args, path, skipped, experiment, quick):
    results = st.results
    s0 = results[0]["settings"]
    svg_dir = os.path.join(os.path.dirname(os.path.abspath(path)), "results")
    os.makedirs(svg_dir, exist_ok=True)
    rel = os.path.relpath(svg_dir, os.path.dirname(os.path.abspath(path)))
    raw_rel = show_path(args.raw)
    plots = []

    def plot(name, alt, fn, *a, **kw):
        fn(*a, **kw)
        plots.append((name, alt))

    plot("val-loss-vs-n.svg", "validation CE against N, mean ± sd, with fitted laws",
         plot_val_vs_n, st, fits, os.path.join(svg_dir, "val-loss-vs-n.svg"))
    plot("delta-vs-dense.svg", "differences to dense with 95% intervals",
         plot_deltas, st, os.path.join(svg_dir, "delta-vs-dense.svg"))
    plot("val-loss-vs-flops.svg", "validation CE against training FLOPs per token",
         plot_val_vs_flops, st, os.path.join(svg_dir, "val-loss-vs-flops.svg"))
    if conv:
        plot("dense-convergence.svg", "dense validation CE during training",
             plot_dense_convergence, st, args.raw, conv,
             os.path.join(svg_dir, "dense-convergence.svg"))
    plot("loss-curves.svg", "training loss curves", plot_curves, st, args.raw,
         os.path.join(svg_dir, "loss-curves.svg"), "ce", True,
         "Training cross-entropy from step %d" % max(1, s0["steps"] // 4),
         "training CE, smoothed (nats/byte)", from_frac=0.25)
    plot("loss-curves-vs-dense.svg", "training loss minus dense", plot_curves, st,
         args.raw, os.path.join(svg_dir, "loss-curves-vs-dense.svg"), "ce", True,
         "Training CE minus dense of the same seed",
         "smoothed training CE - dense (nats)", from_frac=0.25, relative=True)
    plot("val-curves.svg", "validation CE during training", plot_curves, st, args.raw,
         os.path.join(svg_dir, "val-curves.svg"), "val_ce", False,
         "Validation CE during training from step %d (%d batches an evaluation)"
         % (max(1, s0["steps"] // 4), s0["eval_batches"]),
         "validation CE (nats/byte)", from_frac=0.25)

    dense_flops = st.first["dense"]["train_flops_per_token"] if st.has("dense") else None
    tokens = s0["batch"] * s0["seq"] * s0["steps"]
    total_s = sum(r["compile_s"] + r["train_s"] + r["eval_s"] for r in results)
    total_cpu = sum(r["compile_cpu_s"] + r["train_cpu_s"] + r["eval_cpu_s"] for r in results)
    tools = sorted({(r["tools"]["mixc"]["sha256"][:12], r["tools"]["mixc"]["mtime"],
                     r["tools"]["mix-run"]["sha256"][:12], r["tools"]["mix-run"]["mtime"])
                    for r in results})
    by_start = sorted(results, key=lambda r: r["started"])
    gits = [by_start[0].get("git", "unknown"), by_start[-1].get("git", "unknown")]
    starts = sorted(r["started"] for r in results)
    ends = sorted(r["finished"] for r in results)
    loads = [r["loadavg_start"][0] for r in results if r.get("loadavg_start")] + \
            [r["loadavg_end"][0] for r in results if r.get("loadavg_end")]
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    spec = st.first.get("dense", results[0])["spec"]
    n_seeds = len(st.seeds)

    old_notes = None
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
        if DISCUSSION_BEGIN in text and DISCUSSION_END in text:
            old_notes = text.split(DISCUSSION_BEGIN, 1)[1].split(DISCUSSION_END, 1)[0].strip("\n")

    L = []
    L.append("# Horizontal scaling on the Brown corpus")
    L.append("")
    if quick:
        L.append("> **This is a `--quick` run**, a test of the script: a tiny model trained "
                 "for a few steps. Its numbers and verdicts say nothing about the models.")
        L.append("")
    L.append("The project's own test, at a size two CPU cores can train, of the cMoLLM "
             "paper's Table 2 and Figure 3 (right): validation loss of cMoLLM with N = 1, "
             "2, 4, 8 streams and each gating, against the dense GPT-2 at equal width and "
             "at matched training compute, and against the ParaScale and AltUp baselines. "
             "Every configuration is trained with %d seeds (%s); a seed sets both the "
             "initialisation and the order of the training batches. Generated by "
             "`scripts/scaling-experiment.py` from the raw results in `%s/` (metrics "
             "and results of every run, committed); do not edit by hand except between "
             "the hand-written-notes markers below."
             % (n_seeds, ", ".join(str(s) for s in st.seeds), raw_rel))
    L.append("")

    # ---- Verdict -------------------------------------------------------- #
    L.append("## Verdict")
    L.append("")
    L.append("Claims 1-4 are the paper's claims as this study tests them; 5 is the "
             "comparison of the paper's Table 2 (same width, so cMoLLM spends (N + 1)/2 "
             "times the dense FFN's FLOPs), given for context.")
    L.append("")
    L.append("| claim (cMoLLM paper, section 5.3) | verdict | test | evidence: mean "
             "[95% CI] in nats, per cell |")
    L.append("|---|---|---|---|")
    for i, c in enumerate(cl):
        ev = "; ".join("%s %s (%s)" % (label, fmt_ci(s), v) for label, s, v in c["cells"])
        L.append("| %d. %s | **%s** | %s | %s |" % (i + 1, c["claim"], c["verdict"],
                                                   c["test"], ev or "-"))
    L.append("")
    for i, c in enumerate(cl):
        L.append("* **%d. %s: %s.** %s" % (i + 1, c["claim"], c["verdict"],
                                           explain(c, CLAIM_WORDS[i])))
    L.append("")
    L.append("Rules, applied by the script to the numbers: a *cell* is one paired "
             "difference (one gating, one N), computed seed by seed and summarised by its "
             "mean and 95%% t interval over the %d seeds. A cell **supports** the claim "
             "when its interval lies entirely on the claimed side of 0 (lower validation "
             "loss), **refutes** it when it lies entirely on the other side, and **cannot "
             "tell** otherwise. A claim tested in several cells is supported when at least "
             "half its cells support it and none refutes it, refuted when at least half "
             "refute it and none supports it, *mixed* when some cells support it and "
             "others refute it, and cannot tell otherwise (claim 3 has its own rule, "
             "above). The intervals are not corrected for the number of cells: with "
             "%d cells in all, about one in twenty intervals misses its true value, so a "
             "single supporting or refuting cell among many undecided ones is weak "
             "evidence." % (n_seeds, sum(len(c["cells"]) for c in cl)))
    L.append("")

    # ---- How it was run ------------------------------------------------- #
    L.append("## How it was run")
    L.append("")
    L.append("```sh")
    L.append(experiment.get("command", "python3 scripts/scaling-experiment.py"))
    L.append("```")
    L.append("")
    L.append("* Date: runs from %s to %s; %d runs (%d configurations x %d seeds), %s of "
             "compile + train + eval wall time and %s CPU time in total%s."
             % (starts[0].replace("T", " "), ends[-1].replace("T", " "), len(results),
                len(st.configs), n_seeds, fmt_dur(total_s), fmt_dur(total_cpu),
                "; the experiment's wall-clock span was %s with %s runs at a time"
                % (fmt_dur(experiment["wall_s"]), experiment.get("jobs", "?"))
                if experiment.get("wall_s") else ""))
    L.append("* Machine: %s, %d cores shared with other work (the 1-minute load average "
             "seen at run starts and ends ranged %.1f-%.1f), so wall times and tokens/s "
             "are indicative only. mixc and mix-run ran with `OMP_NUM_THREADS=%s`."
             % (cpu, os.cpu_count() or 0, min(loads) if loads else float("nan"),
                max(loads) if loads else float("nan"),
                "/".join(sorted({str(r["settings"].get("threads", "unset"))
                                 for r in results}))))
    sources = sorted({os.path.dirname(r["tools"]["mixc"].get("source", "build/bin/mixc"))
                      for r in results})
    L.append("* Tools: `mixc` and `mix-run` from %s, copied into the scratch directory at "
             "the start so every run of an invocation uses the same binaries (sha256 "
             "prefixes %s); git HEAD at the first run %s, at the last %s."
             % (", ".join("`%s/`" % d for d in sources),
                "; ".join("mixc %s built %s, mix-run %s built %s" % t for t in tools),
                gits[0], gits[1]))
    L.append("* Model (every configuration): byte vocabulary (256), n_layer %d, d_model %d, "
             "n_head %d, d_ff %d (widened for `dense-match-nN`, below), n_positions %d, init "
             "std 0.02; cMoLLM gate_heads 4, balance_alpha 0.01; ParaScale prefix_tokens "
             "8, smoothing 0.01; AltUp schedule alternating. Specs: `%s/CONFIG/sSEED/"
             "spec.json`." % (spec["n_layer"], spec["d_model"], spec["n_head"], spec["d_ff"],
                              spec["n_positions"], raw_rel))
    L.append("* Training: `mixc SPEC --batch %d --seq %d`, then `mix-run train --steps %d "
             "--lr %g --eval-every %d --eval-batches %d --data-seed 1000+SEED` (warm-up "
             "steps/10, cosine to 10%%, AdamW, clipping at 1.0, docs/models.md §7): %d "
             "steps x %d x %d = %s tokens (%.2f passes over the %s-byte training text%s)."
             % (s0["batch"], s0["seq"], s0["steps"], s0["lr"], s0["eval_every"],
                s0["eval_batches"], s0["steps"], s0["batch"], s0["seq"], fmt_si(tokens),
                tokens / max(1, experiment.get("train_bytes", 0) or 1),
                fmt_si(experiment.get("train_bytes", 0)),
                "; %.0f tokens per dense parameter" % (tokens / st.first["dense"]["params"])
                if st.has("dense") else ""))
    L.append("* Seeds: study seed s sets the spec's `init.seed` = s and `mix-run train "
             "--data-seed` = 1000 + s, so seeds differ in both the initialisation and the "
             "order of the batches; the configurations of one seed share both (up to "
             "tensors only some of them have), which is what the paired differences "
             "use.")
    L.append("* Final validation CE: `mix-run eval` of the final checkpoint on %d batches "
             "(%s byte positions at evenly spaced offsets of val.txt, the same for every "
             "run); perplexity = exp(CE) per byte. Checkpoints are deleted after this "
             "evaluation; the raw results keep the metrics only."
             % (s0["final_eval_batches"],
                fmt_si(s0["final_eval_batches"] * s0["batch"] * s0["seq"])))
    L.append("* tokens/s: median of `tokens_per_s` in `metrics.jsonl` (one optimizer step) "
             "over steps after the first %d; wall-clock, so it falls when other work "
             "shares the cores. `train CPU` is the user + system CPU time of `mix-run "
             "train` (including its evaluations), which depends much less on the other work."
             % results[0]["tokens_per_s_skip_steps"])
    L.append("* N = 1 runs once a seed for simple, context_aware and multi_head "
             "(`cmollm-n1`): the gate is a softmax over one stream, identically 1 "
             "(docs/models.md §3), and parameters are drawn per name, so the three are the "
             "same model from the same initial weights. adaptive runs at N = 1 on its own "
             "(`cmollm-n1-adaptive`): its magnitude r and shift t act outside the softmax. "
             "cMoLLM at N = 1 is the dense architecture, but not the dense run: its FFN "
             "up-projection starts Xavier-uniform (docs/models.md §6) instead of normal(0, "
             "0.02), and its loss carries a constant 0.01 balance term (curves and val CE "
             "are CE only).")
    if skipped:
        L.append("* Left out (finished with other settings): %s." % ", ".join(skipped))
    L.append("")
    L.append("### Scale, and what was traded")
    L.append("")
    if st.has("dense"):
        d = st.first["dense"]
        L.append("The dense model has %s parameters; its FFN is %.0f%% of its forward "
                 "matrix-product FLOPs, cMoLLM's mixture layer (with its gate) %s of "
                 "cMoLLM's at N = %s."
                 % ("{:,}".format(d["params"]), 100 * d["ffn_share_of_forward_macs"],
                    ", ".join("%.0f%%" % (100 * st.first[cmollm_name(n, "simple")]
                                          ["ffn_share_of_forward_macs"])
                              for n in STREAMS if st.has(cmollm_name(n, "simple"))),
                    ", ".join(str(n) for n in STREAMS if st.has(cmollm_name(n, "simple")))))
        L.append("")
    L.append("This report: d_model %d, n_layer %d, d_ff %d, %d steps of %d x %d bytes, peak "
             "learning rate %g, %d seeds. The full study's defaults (d_model 64, 2 layers, "
             "d_ff 256, 2000 steps of 16 x 128 bytes, learning rate 1.2e-2, seeds 0-3) were "
             "chosen to fit about two and a half hours on two cores; the measurements are "
             "in the script's docstring. In short: a step of d_model 96 costs about 1.5x "
             "one of d_model 64, and d_model 128 2.2-3.2x, and a dense d_model 96 model "
             "trained 1600 steps ended at the same validation CE (1.811) as a d_model 64 "
             "model trained 2400 steps (1.819) in the same CPU time. So width was traded "
             "for steps and seeds: d_model 64 trained until the dense loss has slowed "
             "(below), with four seeds rather than three (a 95%% interval over four seeds is "
             "a third narrower than over three for the same spread: t = 3.18/sqrt(4) "
             "against 4.30/sqrt(3)). The learning rate is dense's best of 1.5e-3, 3e-3, "
             "6e-3, 1.2e-2 and 2.4e-2 at this length (1.760 against 1.865 at the 3e-3 of "
             "the earlier 400-step study), the same for every configuration and tuned "
             "for none of the others. Not varied: depth, context (128 bytes), the byte "
             "vocabulary and the Brown corpus. These models are hundreds to thousands of "
             "times smaller than the paper's (85M-760M parameters) and see far fewer "
             "tokens, so a verdict here is a verdict at this scale."
             % (spec["d_model"], spec["n_layer"], spec["d_ff"], s0["steps"], s0["batch"],
                s0["seq"], s0["lr"], n_seeds))
    if n_seeds < 4:
        L.append("")
        L.append("This report has %d seed%s, not the default four: the machine's two cores "
                 "were shared with other work while it ran, and %s. A 95%% interval over "
                 "three seeds is %.0f%% wider than over four for the same spread. More "
                 "seeds can be added later (`--seeds 3 --skip-existing` runs only the "
                 "missing ones, and the report is rebuilt from all the raw results)."
                 % (n_seeds, "" if n_seeds == 1 else "s",
                    "three is the fewest the study is designed for" if n_seeds == 3
                    else "the verdicts below say what that leaves undecided",
                    100 * ((4.30 / 3 ** 0.5) / (3.18 / 2) - 1)))
    L.append("")

    # ---- Results -------------------------------------------------------- #
    L.append("## Results")
    L.append("")
    L.append("Validation CE as mean ± standard deviation over seeds; differences paired "
             "by seed, mean [95%% t interval]. *vs dense*: against the dense model of the "
             "same width (d_ff %d); *vs matched*: against the dense model with the "
             "training FLOPs of cMoLLM (simple) at the same N." % spec["d_ff"])
    L.append("")
    L.append("| config | arch | streams | gating | d_ff | params | train FLOPs/token | "
             "x dense | seeds | val CE | val PPL | vs dense | vs matched | tokens/s | "
             "train CPU |")
    L.append("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in st.configs:
        r = st.first[c]
        arch, width, gating = describe_family(r)
        s = st.summary(c)
        ratio = ("%.2fx" % (r["train_flops_per_token"] / dense_flops)) if dense_flops else "-"
        vs_d = fmt_ci(st.diff(c, "dense")) if c != "dense" else "-"
        vs_m = "-"
        if r["family"] == "cmollm" and r["width"] in MATCH_STREAMS:
            vs_m = fmt_ci(st.diff(c, "dense-match-n%d" % r["width"]))
        L.append("| %s | %s | %s | %s | %d | %s | %s | %s | %d | %s | %.3f | %s | %s | %s | %s |"
                 % (c, arch, width, gating, r["spec"]["d_ff"], "{:,}".format(r["params"]),
                    "%.3fM" % (r["train_flops_per_token"] / 1e6), ratio, s.n, fmt_msd(s),
                    math.exp(s.mean), vs_d, vs_m,
                    "{:,}".format(int(round(st.mean_metric(c, "tokens_per_s_median")))),
                    fmt_secs(st.mean_metric(c, "train_cpu_s"))))
    L.append("")
    L.append("Parameters are counted from each package's manifest (every tensor, gate and "
             "tied embedding included). tokens/s and train CPU are means over seeds. The "
             "unigram entropy of the byte stream is 3.10 nats.")
    L.append("")

    # ---- Matched compute ------------------------------------------------ #
    L.append("## Matched compute")
    L.append("")
    L.append("cMoLLM and dense differ only in the FFN, so a dense model with the FLOPs of "
             "cMoLLM (simple gating) at N solves 2 d f' = N d f + N f + f d + d N "
             "(multiply-accumulates a layer) for f', rounded to a multiple of 8. The other "
             "gatings cost slightly more than simple (context_aware and adaptive add a "
             "small MLP); the column *vs simple* gives their excess.")
    L.append("")
    hdr = "| N | cMoLLM simple FLOPs/token | dense d_ff (exact) | dense FLOPs/token | " \
          "mismatch | params cMoLLM / dense |"
    for g in GATINGS:
        hdr += " %s - matched |" % g
    L.append(hdr)
    L.append("|---:|---:|---:|---:|---:|---:|" + "---:|" * len(GATINGS))
    for n in MATCH_STREAMS:
        m = "dense-match-n%d" % n
        if not st.has(m):
            continue
        r = st.first[m]
        target = r["match_target_flops_per_token"]
        d, f = spec["d_model"], spec["d_ff"]
        exact = (n * d * f + n * f + f * d + d * n) / (2.0 * d)
        cm = st.first.get(cmollm_name(n, "simple"))
        row = "| %d | %.3fM | %d (%.1f) | %.3fM | %+.2f%% | %s |" % (
            n, target / 1e6, r["spec"]["d_ff"], exact, r["train_flops_per_token"] / 1e6,
            100 * (r["train_flops_per_token"] / target - 1),
            ("%s / %s" % ("{:,}".format(cm["params"]), "{:,}".format(r["params"])))
            if cm else "-")
        for g in GATINGS:
            c = cmollm_name(n, g)
            s = st.diff(c, m)
            extra = ""
            if st.has(c) and g != "simple":
                extra = " (FLOPs %+.1f%% vs simple)" % (
                    100 * (st.first[c]["train_flops_per_token"] / target - 1))
            row += " %s%s |" % (fmt_ci(s), extra)
        L.append(row)
    L.append("")

    # ---- Fits ----------------------------------------------------------- #
    L.append("## Horizontal scaling law")
    L.append("")
    L.append("L(N) = E + A N^-alpha fitted per gating to the mean validation CE over seeds "
             "at N = 1, 2, 4, 8 (least squares: alpha on a grid of %.2f-%.2f in steps of "
             "0.02, E and A in closed form at each alpha). E is the loss the law tends to as "
             "N grows, A the gain from N = 1 to infinitely many streams (negative: the loss "
             "rises with N), alpha how fast it comes. Intervals: 2.5 and 97.5 percentiles "
             "of %d refits to seeds resampled with replacement (RNG seed %d; one draw of "
             "seeds for all N, keeping the pairing)."
             % (ALPHA_GRID[0], ALPHA_GRID[-1], BOOTSTRAP_RESAMPLES, BOOTSTRAP_RNG_SEED))
    L.append("")
    L.append("| gating | seeds | E | A | alpha | fitted L(1), L(2), L(4), L(8) | "
             "measured means | rms residual |")
    L.append("|---|---:|---|---|---|---|---|---:|")
    for g in GATINGS:
        f = fits.get(g)
        if not f:
            continue

        def ci(k, digits=4):
            if k + "_ci" not in f:
                return "%.*f" % (digits, f[k])
            lo, hi = f[k + "_ci"]
            return "%.*f [%.*f, %.*f]" % (digits, f[k], digits, lo, digits, hi)
        L.append("| %s | %d | %s | %s | %s%s | %s | %s | %.4f |"
                 % (g, len(f["seeds"]), ci("E"), ci("A"), ci("alpha", 2),
                    " (at the grid's end)" if f["edge"] else "",
                    ", ".join("%.4f" % (f["E"] + f["A"] * n ** -f["alpha"]) for n in f["ns"]),
                    ", ".join("%.4f" % v for v in f["means"]), f["rmse"]))
    L.append("")
    if fits:
        nd = min(f.get("distinct_resamples", 1) for f in fits.values())
        L.append("Four points and three parameters leave one degree of freedom, so the law "
                 "fits almost any four numbers; the fit summarises the curve rather than "
                 "testing its shape. With %d seeds there are only %d distinct resamples, so "
                 "the bootstrap intervals are rough and, with so few seeds, too narrow "
                 "rather than too wide. alpha is poorly determined when A is small (a flat "
                 "curve fits any alpha); the claims above rest on the paired differences, "
                 "not on the fit." % (n_seeds, nd))
        edge = [g for g, f in fits.items() if f["edge"]]
        if edge:
            L.append("")
            L.append("For %s the best alpha lies at an end of the grid. At the small end the "
                     "law degenerates into a straight line in log N (N^-alpha ~ 1 - alpha "
                     "ln N): the means are not a saturating power law (a loss that rises "
                     "with N, or no clear curvature), E and A then trade off against each "
                     "other without meaning, and the slope per doubling of N (next section) "
                     "is the better summary. At the large end the gain is all at N = 2."
                     % ", ".join(edge))
        L.append("")

    # ---- Contrasts ------------------------------------------------------ #
    L.append("## Stream count, gating by gating (paired by seed)")
    L.append("")
    L.append("| gating | N=2 - N=1 | N=4 - N=2 | N=8 - N=4 | N=8 - N=1 | mean(N=4, 8) - N=2 | "
             "slope per doubling of N |")
    L.append("|---|---|---|---|---|---|---|")
    for g in GATINGS:
        bn = st.by_n(g)
        if len(bn) < 2:
            continue
        cells = []
        for a, b in ((2, 1), (4, 2), (8, 4), (8, 1)):
            cells.append(fmt_ci(st.diff(cmollm_name(a, g), cmollm_name(b, g))))
        cells.append(fmt_ci(st.contrast_4_8_vs_2(g)))
        cells.append(fmt_ci(slope_per_doubling(bn)))
        L.append("| %s | %s |" % (g, " | ".join(cells)))
    L.append("")
    L.append("N = 1 of simple, context_aware and multi_head is the same run (`cmollm-n1`).")
    L.append("")
    L.append("## Gatings compared (paired by seed)")
    L.append("")
    pairs = [("multi_head", "simple"), ("multi_head", "context_aware"),
             ("multi_head", "adaptive"), ("context_aware", "simple"), ("adaptive", "simple")]
    L.append("| N | " + " | ".join("%s - %s" % p for p in pairs) + " |")
    L.append("|---:|" + "---|" * len(pairs))
    for n in (2, 4, 8):
        L.append("| %d | %s |" % (n, " | ".join(
            fmt_ci(st.diff(cmollm_name(n, a), cmollm_name(n, b))) for a, b in pairs)))
    L.append("")

    # ---- Convergence ---------------------------------------------------- #
    L.append("## Has the dense model converged?")
    L.append("")
    if conv:
        L.append("The dense model's validation CE during training (mean over seeds, %d "
                 "batches every %d steps): %.4f at step %d, %.4f at step %d (half-way), "
                 "%.4f at step %d (three quarters), %.4f at the end (step %d). The last "
                 "quarter of training lowered it by %.4f nats, %.0f%% of its fall from the "
                 "first evaluation; the second half by %.4f. The learning rate decays "
                 "(cosine to 10%% of its peak), which flattens the end of any curve, so "
                 "this says the model has slowed, not that more tokens would not help."
                 % (s0["eval_batches"], s0["eval_every"], conv["first"][1], conv["first"][0],
                    conv["half"][1], conv["half"][0], conv["q3"][1], conv["q3"][0],
                    conv["last"][1], conv["last"][0], conv["last_quarter_drop"],
                    100 * conv["share_last_quarter"], conv["second_half_drop"]))
    else:
        L.append("Too few evaluations during training to tell.")
    L.append("")

    # ---- Plots ---------------------------------------------------------- #
    L.append("## Plots")
    L.append("")
    for name, alt in plots:
        L.append("![%s](%s/%s)" % (alt, rel, name))
        L.append("")

    # ---- Per seed ------------------------------------------------------- #
    L.append("## Per seed")
    L.append("")
    L.append("Final validation CE of every run (the raw numbers the statistics use).")
    L.append("")
    L.append("| config | " + " | ".join("seed %d" % s for s in st.seeds) + " |")
    L.append("|---|" + "---:|" * len(st.seeds))
    for c in st.configs:
        L.append("| %s | %s |" % (c, " | ".join(
            "%.4f" % st.val[c][s] if s in st.val[c] else "-" for s in st.seeds)))
    L.append("")

    # ---- FLOPs ---------------------------------------------------------- #
    L.append("## FLOPs per token")
    L.append("")
    L.append("Analytic, matrix products only (LayerNorm, softmax, GELU and other "
             "element-wise work left out). Counting multiply-accumulates (MACs) per token "
             "of the forward pass, with d = d_model, f = d_ff, V = vocabulary, L = layers, "
             "S = sequence length:")
    L.append("")
    L.append("* attention, per layer: 4 d^2 (c_attn and c_proj) + 2 S' d (scores and the "
             "weighted sum of values over the full context S' = S, not discounted for the "
             "causal mask; ParaScale S' = S + T_p prefix positions);")
    L.append("* dense FFN, per layer: 2 d f;")
    L.append("* cMoLLM FFN, per layer, in the stacked-kernel form: N d f (m times all N "
             "stream kernels) + N f (gate-weighted sum) + f d (shared down projection) + "
             "gate, where the gate is d N (simple; multi_head's H heads of d/H x N are d N "
             "too), plus 2 d (d/4) for context_aware's ctx MLP, plus d (d/4) + 3 (d/4) for "
             "adaptive's MLP. So the FFN costs about (N + 1)/2 times the dense FFN, the "
             "paper's equation 21;")
    L.append("* ParaScale: P times the dense backbone (with prefix attention) + aggregation "
             "P d^2 + d P + P d;")
    L.append("* AltUp: one dense block a layer + K^2 d (prediction) + K d (correction) a "
             "layer;")
    L.append("* output logits (tied embedding): d V, once.")
    L.append("")
    L.append("Training FLOPs per token = 3 x forward (backward twice the forward) x 2 FLOPs "
             "per MAC = 6 x forward MACs.")
    L.append("")

    # ---- Reproducing ---------------------------------------------------- #
    L.append("## Raw results and reproducing")
    L.append("")
    L.append("`%s/CONFIG/sSEED/` holds, for every run, `spec.json`, `metrics.jsonl` (the "
             "training metrics of mix-run averaged over windows of %d steps: mean ce, loss, "
             "aux and grad_norm, median tokens_per_s, the window's last lr, its step count "
             "`steps`, and val_ce at every evaluation) and `result.json` (final validation "
             "CE, timings, tool hashes, the train command). `python3 "
             "scripts/scaling-experiment.py --report-only` rebuilds this page and its plots "
             "from them alone; `--skip-existing` resumes an interrupted study."
             % (raw_rel, results[0].get("metrics_every", 1)))
    L.append("")
    L.append(DISCUSSION_BEGIN)
    L.append(old_notes if old_notes is not None else "(No hand-written notes yet.)")
    L.append(DISCUSSION_END)
    L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))
    log("wrote %s and %s/*.svg" % (os.path.relpath(path), os.path.relpath(svg_dir)))


def collect_results(args, configs, seeds):
    """Finished runs in RAW (those with result.json) in configuration order,
    restricted to the current settings; seeds None: every seed found."""
    results, skipped = [], []
    settings = run_settings(args)
    for cfg in configs:
        cdir = os.path.join(args.raw, cfg["name"])
        if not os.path.isdir(cdir):
            continue
        found = sorted(int(m.group(1)) for m in
                       (re.fullmatch(r"s(\d+)", e) for e in os.listdir(cdir)) if m)
        for seed in found:
            if seeds is not None and seed not in seeds:
                continue
            path = os.path.join(cdir, "s%d" % seed, "result.json")
            if not os.path.exists(path):
                continue
            with open(path) as f:
                r = json.load(f)
            s = r["settings"]
            want = seeded(cfg, seed)["spec"]
            same = all(s.get(k) == settings[k] for k in ("batch", "seq", "steps", "lr"))
            if not same or r.get("spec") != want:
                skipped.append("%s (%s)" % (r["name"], "other spec" if same else
                                            "B %d, S %d, %d steps, lr %g"
                                            % (s["batch"], s["seq"], s["steps"], s["lr"])))
                continue
            results.append(r)
    return results, skipped


def parse_seeds(text):
    seeds = []
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise ValueError(part)
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if hi < lo:
            raise ValueError(part)
        seeds.extend(range(lo, hi + 1))
    return sorted(set(seeds))


def main():
    ap = argparse.ArgumentParser(
        prog="scaling-experiment.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="a small version of the whole study, a test of the script "
                         "(a tiny model, %d steps, seeds %s; output in runs/scaling-quick)"
                         % (PRESETS["quick"]["steps"], PRESETS["quick"]["seeds"]))
    ap.add_argument("--seeds", help="study seeds, e.g. 0,1,2 or 0-3 (default 0-3; "
                                    "--quick 0-2); with --report-only, default: all found")
    ap.add_argument("--steps", type=int, help="optimizer steps (default 2000)")
    ap.add_argument("--batch", type=int, help="batch size B (default 16)")
    ap.add_argument("--seq", type=int, help="sequence length S (default 128)")
    ap.add_argument("--d-model", type=int, help="d_model (default 64)")
    ap.add_argument("--d-ff", type=int, help="d_ff of dense and cMoLLM (default 256)")
    ap.add_argument("--n-layer", type=int, help="layers (default 2)")
    ap.add_argument("--n-head", type=int, help="attention heads (default 4)")
    ap.add_argument("--lr", type=float, help="peak learning rate (default 1.2e-2)")
    ap.add_argument("--eval-every", type=int, default=None,
                    help="evaluate during training every N steps (default steps/16)")
    ap.add_argument("--eval-batches", type=int,
                    help="validation batches an evaluation during training (default 8)")
    ap.add_argument("--final-eval-batches", type=int,
                    help="validation batches of the final mix-run eval (default 128)")
    ap.add_argument("--metrics-every", type=int,
                    help="steps a row of the committed metrics.jsonl averages (default 25)")
    ap.add_argument("--tps-skip", type=int, default=5,
                    help="steps left out of the median tokens/s (default 5)")
    ap.add_argument("--threads", type=int, default=1,
                    help="OMP_NUM_THREADS of mixc and mix-run (default 1: on cores "
                         "shared with other work, two OpenMP threads at nice 19 stall "
                         "at every barrier behind the one that is starved)")
    ap.add_argument("--jobs", type=int, default=2,
                    help="runs at a time (default 2: one a core, each one thread)")
    ap.add_argument("--only", metavar="NAME-REGEX",
                    help="run only the configurations whose whole name matches")
    ap.add_argument("--out", help="scratch directory: tools, packages, checkpoints, logs "
                                  "(default runs/scaling; --quick runs/scaling-quick)")
    ap.add_argument("--raw", help="raw results, small enough to commit (default: results/"
                                  "raw next to --results-md, docs/results/raw)")
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "brown"),
                    help="corpus directory (default data/brown)")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                    help="where mixc and mix-run are (default build/bin)")
    ap.add_argument("--results-md",
                    help="the report; plots go to results/ next to it (default "
                         "docs/results.md; --quick runs/scaling-quick/results.md)")
    ap.add_argument("--skip-existing", action="store_true",
                    help="reuse runs that finished with the same settings")
    ap.add_argument("--keep-checkpoints", action="store_true",
                    help="keep packages and checkpoints in the scratch directory")
    ap.add_argument("--report-only", action="store_true",
                    help="only rebuild the report from the raw results")
    ap.add_argument("--list", action="store_true", help="list the runs and exit")
    args = ap.parse_args()
    preset = PRESETS["quick" if args.quick else "full"]
    for key in ("steps", "batch", "seq", "d_model", "d_ff", "n_layer", "n_head", "lr",
                "eval_batches", "final_eval_batches", "metrics_every", "out", "results_md"):
        if getattr(args, key) is None:
            setattr(args, key, preset[key])
    for key in ("steps", "batch", "seq", "d_model", "d_ff", "n_layer", "n_head",
                "eval_batches", "final_eval_batches", "metrics_every", "threads", "jobs"):
        if getattr(args, key) < 1:
            ap.error("--%s must be positive" % key.replace("_", "-"))
    if args.d_model % args.n_head:
        ap.error("--d-model must be a multiple of --n-head")
    try:
        seeds = parse_seeds(args.seeds if args.seeds is not None else preset["seeds"])
    except ValueError as e:
        ap.error("--seeds: bad seed or range %r (use e.g. 0,1,2 or 0-3)" % str(e))
    report_seeds = seeds if (args.seeds is not None or not args.report_only) else None
    CHILD_ENV["OMP_NUM_THREADS"] = str(args.threads)
    if args.eval_every is None:
        args.eval_every = max(1, args.steps // preset["eval_points"])
    args.out = os.path.abspath(args.out)
    args.data = os.path.abspath(args.data)
    args.results_md = os.path.abspath(args.results_md)
    if args.raw is None:
        args.raw = os.path.join(os.path.dirname(args.results_md), "results", "raw")
    args.raw = os.path.abspath(args.raw)

    configs = make_configs(args)
    selected = configs
    if args.only:
        try:
            rx = re.compile(args.only)
        except re.error as e:
            ap.error("--only: bad regular expression: %s" % e)
        selected = [c for c in configs if rx.fullmatch(c["name"])]
        if not selected:
            ap.error("--only %r matches no configuration (see --list)" % args.only)
    # Seed-major, so that an interrupted study has whole seeds; within a seed
    # the most expensive first, so that the two job slots end together.
    runs = [seeded(c, s) for s in seeds
            for c in sorted(selected, key=lambda c: -train_flops(c["spec"], args.seq))]
    if args.list:
        dense = train_flops(configs[0]["spec"], args.seq)
        for c in selected:
            print("%-24s d_ff %4d  %.3fM train FLOPs/token (%.2fx dense)%s" % (
                c["name"], c["spec"]["d_ff"], train_flops(c["spec"], args.seq) / 1e6,
                train_flops(c["spec"], args.seq) / dense,
                "  matched to %.3fM (%+.2f%%)" % (
                    c["match_target_flops"] / 1e6,
                    100 * (train_flops(c["spec"], args.seq) / c["match_target_flops"] - 1))
                if "match_target_flops" in c else ""))
        print("%d configurations x %d seeds = %d runs" % (len(selected), len(seeds), len(runs)))
        return 0

    exp_path = os.path.join(args.raw, "experiment.json")
    experiment = {}
    if os.path.exists(exp_path):
        with open(exp_path) as f:
            experiment = json.load(f)
    train_txt = os.path.join(args.data, "train.txt")
    if os.path.exists(train_txt):
        experiment["train_bytes"] = os.path.getsize(train_txt)

    try:
        if not args.report_only:
            for f in ("train.txt", "val.txt"):
                if not os.path.exists(os.path.join(args.data, f)):
                    raise RunError("%s is missing (scripts/fetch-data.sh writes it)"
                                   % os.path.join(args.data, f))
            os.makedirs(args.out, exist_ok=True)
            os.makedirs(args.raw, exist_ok=True)
            tools = snapshot_tools(args.bin, args.out)
            niceness = os.nice(0)
            cmd = ("nice -n %d " % niceness if niceness > 0 else "") + "python3 " + \
                " ".join(shlex.quote(a) for a in
                         [os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)] + sys.argv[1:])
            t0 = time.time()
            log("%d configurations x %d seeds = %d runs, %d steps of %d x %d tokens each, "
                "%d at a time; scratch in %s, raw results in %s"
                % (len(selected), len(seeds), len(runs), args.steps, args.batch, args.seq,
                   args.jobs, args.out, args.raw))
            run_all(runs, args, tools)
            wall = time.time() - t0
            log("all runs finished in %s" % fmt_dur(wall))
            if not args.only:
                # The command and span of the last complete invocation.
                experiment.update({"command": cmd, "wall_s": wall, "jobs": args.jobs,
                                   "finished": datetime.datetime.now().isoformat(
                                       timespec="seconds")})
            else:
                experiment.setdefault("command", cmd)
            write_json(exp_path, experiment)
        results, skipped = collect_results(args, configs, report_seeds)
        if not results:
            raise RunError("no finished runs with batch %d, seq %d, %d steps in %s"
                           % (args.batch, args.seq, args.steps, args.raw))
        st = Study(results)
        fits = {}
        for g in GATINGS:
            f = fit_with_bootstrap(st.by_n(g))
            if f:
                fits[g] = f
        cl = claims(st)
        conv = dense_convergence(st, args.raw) if st.has("dense") else None
        write_report(st, fits, cl, conv, args, args.results_md, skipped, experiment,
                     args.quick)
        for i, c in enumerate(cl):
            log("claim %d (%s): %s" % (i + 1, c["claim"], c["verdict"]))
    except RunError as e:
        print("%s: error: %s" % (PROG, e), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("%s: interrupted" % PROG, file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
