#!/usr/bin/env python3
# ===- scripts/scaling-experiment.py - Horizontal scaling on Brown --------=== #
# Trains dense, cMoLLM (N = 1, 2, 4, 8 x four gatings), ParaScale (P = 2, 4) and
# AltUp (K = 2, 4) for the same tokens and writes docs/results.md with SVG plots.
"""The horizontal-scaling experiment (issue 4): the project's own, small-scale
reproduction of the cMoLLM paper's Table 2 and Figure 3.

For every configuration it writes a model spec under OUT/NAME/spec.json,
compiles it with mixc, trains it with `mix-run train`, evaluates the final
checkpoint with `mix-run eval` on a fixed set of validation batches and
records OUT/NAME/result.json (written last: a run without it is unfinished).
Then it writes the report (default docs/results.md) and its plots
(docs/results/*.svg, drawn here in plain Python).

  nohup nice -n 19 python3 scripts/scaling-experiment.py > runs/scaling/log.txt 2>&1 &
                                                         # everything (~45 min here)
  python3 scripts/scaling-experiment.py --skip-existing  # resume
  python3 scripts/scaling-experiment.py --report-only    # rebuild the report
  python3 scripts/scaling-experiment.py --steps 5 --only 'dense|cmollm-n2-simple' \\
      --out /tmp/scaling-test --results-md /tmp/scaling-test/results.md

Standard library only. Every failing mixc or mix-run call stops the script
with a message that names the run and its log file. The tools are copied from
--bin into OUT/tools first (build/ may be rebuilt while this runs) and run with
OMP_NUM_THREADS=--threads (default 1).
"""

import argparse
import datetime
import hashlib
import json
import math
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG = "scaling-experiment"

# --------------------------------------------------------------------------- #
# Configurations
# --------------------------------------------------------------------------- #

BASE_SPEC = {
    "vocab_size": 256,
    "n_positions": 128,
    "n_layer": 2,
    "d_model": 64,
    "n_head": 4,
    "d_ff": 256,
    "layer_norm_eps": 1e-5,
    "init": {"seed": 0, "std": 0.02},
}
GATINGS = ["simple", "context_aware", "multi_head", "adaptive"]
STREAMS = [1, 2, 4, 8]
# Extra initialisation seeds of the dense model: the run-to-run spread they
# show is the noise level the differences between configurations are read
# against (the data order is the same for every run: mix-run's sampler seed
# is fixed).
REPLICATE_SEEDS = [1, 2]
# With N = 1 the gate is a softmax over one stream, identically 1 (docs/models.md
# §3), so simple, context_aware and multi_head compute the same
# function from the same initial kernels (parameters are drawn per name); their
# extra gate parameters get no gradient. One run, `cmollm-n1` (simple gating),
# stands for the three. adaptive differs: its magnitude r and shift t act
# outside the softmax and are trained at N = 1 as well, so it runs on its own.
N1_SHARED = ["simple", "context_aware", "multi_head"]


def cmollm_name(n, gating):
    """The run that measures cMoLLM with n streams and this gating."""
    if n == 1 and gating in N1_SHARED:
        return "cmollm-n1"
    return "cmollm-n%d-%s" % (n, gating)


def make_configs():
    """All configurations, cheapest families first so that an interrupted
    experiment has the cMoLLM sweep before the expensive ParaScale runs."""
    configs = []

    def add(name, family, arch, section=None, **info):
        spec = {"arch": arch}
        spec.update(json.loads(json.dumps(BASE_SPEC)))
        if section is not None:
            spec[arch] = section
        if "seed" in info:
            spec["init"]["seed"] = info["seed"]
        configs.append(dict(name=name, family=family, spec=spec, **info))

    add("dense", "dense", "dense", width=1, seed=0)
    for s in REPLICATE_SEEDS:
        add("dense-seed%d" % s, "dense", "dense", width=1, seed=s)
    for n in STREAMS:
        for g in GATINGS:
            if n == 1 and g in N1_SHARED[1:]:
                continue  # the same model as cmollm-n1 (see N1_SHARED)
            add(cmollm_name(n, g), "cmollm", "cmollm",
                {"streams": n, "gating": g, "gate_heads": 4,
                 "balance_alpha": 0.01},
                width=n, gating=g, seed=0)
    for k in (2, 4):
        add("altup-k%d" % k, "altup", "altup",
            {"blocks": k, "schedule": "alternating"}, width=k, seed=0)
    for p in (2, 4):
        add("parascale-p%d" % p, "parascale", "parascale",
            {"streams": p, "prefix_tokens": 8, "smoothing": 0.01},
            width=p, seed=0)
    return configs


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


# --------------------------------------------------------------------------- #
# Running
# --------------------------------------------------------------------------- #


class RunError(Exception):
    pass


def log(msg):
    stamp = datetime.datetime.now().strftime("%H:%M:%S")
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


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


CHILD_ENV = dict(os.environ)


def run_logged(run_name, what, cmd, log_path, cwd=ROOT):
    """Runs cmd with stdout and stderr to log_path; raises RunError naming the
    run on a non-zero exit. Returns (wall seconds, CPU seconds, output text):
    the CPU time (user + system, all threads) depends far less than the wall
    time on what else the machine is doing."""
    t0, c0 = time.time(), children_cpu()
    with open(log_path, "w") as logf:
        logf.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        logf.flush()
        try:
            proc = subprocess.run(cmd, cwd=cwd, stdout=logf,
                                  stderr=subprocess.STDOUT, env=CHILD_ENV)
        except OSError as e:
            raise RunError("run %s: %s could not start: %s" % (run_name, what, e))
    wall, cpu = time.time() - t0, children_cpu() - c0
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


def count_params(manifest):
    total = 0
    for p in manifest["params"]:
        n = 1
        for s in p["shape"]:
            n *= s
        total += n
    return total


def run_settings(args):
    """What makes two runs of one configuration the same experiment."""
    return {"batch": args.batch, "seq": args.seq, "steps": args.steps,
            "lr": args.lr, "eval_every": args.eval_every,
            "eval_batches": args.eval_batches,
            "final_eval_batches": args.final_eval_batches,
            "threads": args.threads,
            "data": os.path.relpath(args.data, ROOT)}


def run_one(cfg, args, tools):
    name = cfg["name"]
    run_dir = os.path.join(args.out, name)
    result_path = os.path.join(run_dir, "result.json")
    settings = run_settings(args)
    if args.skip_existing and os.path.exists(result_path):
        with open(result_path) as f:
            old = json.load(f)
        if old.get("settings") == settings and old.get("spec") == cfg["spec"]:
            log("%-26s finished before: val CE %.4f (skipped)" % (name, old["val_ce"]))
            return old
        log("%-26s has a result with other settings: running it again" % name)

    # Start clean: only the files this script writes live in run_dir.
    for sub in ("result.json", "model.mixpkg", "run"):
        path = os.path.join(run_dir, sub)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)
    os.makedirs(run_dir, exist_ok=True)
    spec_path = os.path.join(run_dir, "spec.json")
    with open(spec_path, "w") as f:
        json.dump(cfg["spec"], f, indent=2)
        f.write("\n")
    pkg = os.path.join(run_dir, "model.mixpkg")
    train_dir = os.path.join(run_dir, "run")
    load_start = loadavg()
    started = datetime.datetime.now().isoformat(timespec="seconds")

    log("%-26s compiling" % name)
    compile_s, compile_cpu, _ = run_logged(
        name, "mixc", [tools["mixc"]["path"], spec_path, "--batch", str(args.batch),
                       "--seq", str(args.seq), "-o", pkg],
        os.path.join(run_dir, "compile.log"))
    with open(os.path.join(pkg, "manifest.json")) as f:
        manifest = json.load(f)

    log("%-26s training %d steps" % (name, args.steps))
    train_cmd = [tools["mix-run"]["path"], "train", pkg, "--data", args.data,
                 "--steps", str(args.steps), "--lr", repr(args.lr),
                 "--out", train_dir,
                 "--eval-every", str(args.eval_every),
                 "--eval-batches", str(args.eval_batches)]
    train_s, train_cpu, _ = run_logged(name, "mix-run train", train_cmd,
                            os.path.join(run_dir, "train.log"))
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

    log("%-26s evaluating (%d batches)" % (name, args.final_eval_batches))
    eval_s, eval_cpu, out = run_logged(
        name, "mix-run eval",
        [tools["mix-run"]["path"], "eval", pkg, "--params", ckpt, "--data", args.data,
         "--eval-batches", str(args.final_eval_batches)],
        os.path.join(run_dir, "eval.log"))
    m = re.search(r"val_ce\s+([-+0-9.eEnaif]+)", out)
    if not m:
        raise RunError("run %s: no 'val_ce' line in the output of mix-run eval "
                       "(log %s)" % (name, os.path.join(run_dir, "eval.log")))
    val_ce = float(m.group(1))
    if not math.isfinite(val_ce):
        raise RunError("run %s: mix-run eval reports val_ce %s" % (name, m.group(1)))
    m = re.search(r"perplexity\s+([-+0-9.eEnaif]+)", out)
    printed_ppl = float(m.group(1)) if m else None

    result = {
        "name": name, "family": cfg["family"], "width": cfg["width"],
        "gating": cfg.get("gating"), "seed": cfg["seed"], "spec": cfg["spec"],
        "settings": settings,
        "params": count_params(manifest),
        "forward_macs_per_token": forward_macs(cfg["spec"], args.seq),
        "train_flops_per_token": train_flops(cfg["spec"], args.seq),
        "val_ce": val_ce, "val_ppl": math.exp(val_ce),
        "val_ppl_printed": printed_ppl,
        "final_train_ce": rows[-1].get("ce"),
        "tokens_per_s_median": median_tokens_per_s(rows, args.tps_skip),
        "tokens_per_s_skip_steps": args.tps_skip,
        "compile_s": compile_s, "train_s": train_s, "eval_s": eval_s,
        "compile_cpu_s": compile_cpu, "train_cpu_s": train_cpu, "eval_cpu_s": eval_cpu,
        "started": started,
        "finished": datetime.datetime.now().isoformat(timespec="seconds"),
        "loadavg_start": load_start, "loadavg_end": loadavg(),
        "tools": {k: {"sha256": v["sha256"], "mtime": v["mtime"],
                      "source": os.path.relpath(v["source"], ROOT)}
                  for k, v in tools.items()},
        "git": git_describe(),
        "train_command": " ".join(shlex.quote(c) for c in train_cmd),
    }
    tmp = result_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, result_path)
    log("%-26s val CE %.4f  ppl %.3f  %.0f tok/s  (compile %.0fs, train %.0fs "
        "[%.0f CPU-s], eval %.0fs [%.0f CPU-s])"
        % (name, val_ce, result["val_ppl"], result["tokens_per_s_median"],
           compile_s, train_s, train_cpu, eval_s, eval_cpu))
    return result


# --------------------------------------------------------------------------- #
# SVG plots, by hand
# --------------------------------------------------------------------------- #

COLORS = {
    "simple": "#1f77b4", "context_aware": "#ff7f0e", "multi_head": "#2ca02c",
    "adaptive": "#d62728", "dense": "#000000", "parascale": "#9467bd",
    "altup": "#8c564b",
}
N_COLORS = {1: "#6baed6", 2: "#08519c", 4: "#31a354", 8: "#e08b00"}
PALETTE = ["#000000", "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#2ca02c",
           "#1f77b4", "#ff7f0e", "#d62728", "#17becf", "#bcbd22", "#e377c2"]


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

    def line(self, pts, color, label=None, dash=None, width=1.6, marker=None):
        pts = [(a, b) for a, b in pts if b is not None and math.isfinite(b)]
        if not pts:
            return
        if width > 0:
            d = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", self.px(a), self.py(b))
                         for i, (a, b) in enumerate(pts))
            self.items.append('<path d="%s" fill="none" stroke="%s" stroke-width="%.1f"%s/>'
                              % (d, color, width,
                                 ' stroke-dasharray="%s"' % dash if dash else ""))
        if marker:
            for a, b in pts:
                self.items.append(self._marker(marker, self.px(a), self.py(b), color))
        if label:
            self.legend.append((label, color, dash, marker, width))

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


def ema(values, beta=0.95):
    out, acc = [], 0.0
    for i, v in enumerate(values, 1):
        acc = beta * acc + (1 - beta) * v
        out.append(acc / (1 - beta ** i))
    return out


def plot_val_vs_n(results, path):
    by = {r["name"]: r for r in results}
    ys = [r["val_ce"] for r in results]
    lo, hi = min(ys), max(ys)
    pad = (hi - lo) * 0.08 or 0.01
    p = Panel(0, 0, 720, 460,
              "Validation cross-entropy against streams (same tokens for all)",
              "streams N (cMoLLM); P (ParaScale); K (AltUp)",
              "validation CE (nats/byte)", (1, 8), (lo - pad, hi + pad), xlog2=True,
              xticks=[1, 2, 4, 8], xtick_fmt=lambda t: "%d" % t,
              right_label="perplexity", right_fmt=lambda v: "%.2f" % math.exp(v))
    dense = [r["val_ce"] for r in results if r["family"] == "dense"]
    if len(dense) > 1:
        p.band(min(dense), max(dense), "#000000")
    if "dense" in by:
        p.hline(by["dense"]["val_ce"], COLORS["dense"],
                "dense (seed 0%s)" % (", band: seeds 0-%d" % (len(dense) - 1)
                                       if len(dense) > 1 else ""))
    for g in GATINGS:
        pts = [(n, by[cmollm_name(n, g)]["val_ce"]) for n in STREAMS
               if cmollm_name(n, g) in by]
        p.line(pts, COLORS[g], "cMoLLM " + g, marker="circle")
    for fam, marker in (("parascale", "square"), ("altup", "triangle")):
        pts = sorted((r["width"], r["val_ce"]) for r in results if r["family"] == fam)
        p.line(pts, COLORS[fam], {"parascale": "ParaScale (x = P)",
                                  "altup": "AltUp (x = K)"}[fam],
               dash="3,3", marker=marker)
    note = ["N = 1: one run (cmollm-n1) for",
            "simple, context_aware, multi_head",
            "(the same model with one stream);",
            "adaptive has its own N = 1 run.",
            "Final checkpoints, %d validation"
            % results[0]["settings"]["final_eval_batches"],
            "batches; one seed a configuration."]
    text = "\n".join('<text x="738" y="%d" font-size="11">%s</text>' % (200 + 15 * j, esc(t))
                     for j, t in enumerate(note))
    with open(path, "w") as f:
        f.write(svg_document(960, 460, p.svg("outside") + "\n" + text,
                             "validation CE against N"))


def plot_val_vs_flops(results, path):
    xs = [r["train_flops_per_token"] / 1e6 for r in results]
    ys = [r["val_ce"] for r in results]
    pad = (max(ys) - min(ys)) * 0.08 or 0.01
    p = Panel(0, 0, 720, 460, "Validation CE against training compute (cMoLLM: N = 1, 2, 4, 8)",
              "training FLOPs per token (millions, analytic)",
              "validation CE (nats/byte)", (min(xs) * 0.95, max(xs) * 1.03),
              (min(ys) - pad, max(ys) + pad),
              right_label="perplexity", right_fmt=lambda v: "%.2f" % math.exp(v))
    for fam, marker, label in (("dense", "diamond", "dense"),
                               ("parascale", "square", "ParaScale P = 2, 4"),
                               ("altup", "triangle", "AltUp K = 2, 4")):
        pts = sorted((r["train_flops_per_token"] / 1e6, r["val_ce"])
                     for r in results if r["family"] == fam)
        if pts:
            p.line(pts, COLORS[fam], label, width=0.0, marker=marker)
    by = {r["name"]: r for r in results}
    for g in GATINGS:
        pts = [(by[cmollm_name(n, g)]["train_flops_per_token"] / 1e6,
                by[cmollm_name(n, g)]["val_ce"]) for n in STREAMS
               if cmollm_name(n, g) in by]
        p.line(pts, COLORS[g], "cMoLLM " + g, marker="circle", width=1.0)
    with open(path, "w") as f:
        f.write(svg_document(960, 460, p.svg("outside"), "validation CE against FLOPs"))


def curve(run_dir, key):
    rows = read_metrics(os.path.join(run_dir, "run", "metrics.jsonl"))
    return [(r["step"], r[key]) for r in rows
            if isinstance(r.get(key), (int, float)) and math.isfinite(r[key])]


def plot_curves(results, out_dir, path, key, smooth, title, ylabel, from_frac=0.0,
                relative=False):
    """Panels: one per gating (N = 1, 2, 4, 8 against dense) and one with the
    baselines. relative: each curve minus the dense (seed 0) curve, step by
    step (every run sees the same batches, so the difference is paired), with
    the other dense seeds in grey as the noise reference."""
    by = {r["name"]: r for r in results}
    grey = [("dense-seed%d" % s, "dense, seed %d" % s, "#b0b0b0", None)
            for s in REPLICATE_SEEDS] if relative else []
    groups = []
    for g in GATINGS:
        members = [("dense", "dense" + (" (seed 0, zero line)" if relative else ""),
                    COLORS["dense"], "4,3")] + grey
        members += [(cmollm_name(n, g), "N = %d" % n, N_COLORS[n], None)
                    for n in STREAMS]
        groups.append(("cMoLLM, %s gating" % g, members))
    groups.append(("Baselines", [
        ("dense", "dense" + (" (seed 0, zero line)" if relative else ""),
         COLORS["dense"], "4,3" if relative else None)] + grey + [
        ("parascale-p2", "ParaScale P = 2", "#c5b0d5", None),
        ("parascale-p4", "ParaScale P = 4", COLORS["parascale"], None),
        ("altup-k2", "AltUp K = 2", "#e0a080", None),
        ("altup-k4", "AltUp K = 4", COLORS["altup"], None),
        ("cmollm-n1", "cMoLLM N = 1", N_COLORS[1], "4,3"),
    ]))
    data = {}
    for r in results:
        pts = curve(os.path.join(out_dir, r["name"]), key)
        if smooth and pts:
            pts = list(zip([a for a, _ in pts], ema([b for _, b in pts])))
        data[r["name"]] = pts
    if relative:
        if not data.get("dense"):
            return
        ref = dict(data["dense"])
        data = {k: [(a, b - ref[a]) for a, b in v if a in ref] for k, v in data.items()}
    steps = max((r["settings"]["steps"] for r in results), default=1)
    x0 = max(1, int(steps * from_frac)) if from_frac > 0 else 0
    shown = [b for name, pts in data.items() for a, b in pts if a >= x0]
    if not shown:
        shown = [b for pts in data.values() for _, b in pts] or [0.0, 1.0]
    lo, hi = min(shown), max(shown)
    pad = (hi - lo) * 0.05 or 0.01
    cols, pw, ph, lw = 2, 500, 340, 190  # lw: room for the legend right of a panel
    rows = (len(groups) + cols - 1) // cols
    body = []
    for i, (gtitle, members) in enumerate(groups):
        p = Panel((i % cols) * (pw + lw), (i // cols) * ph, pw, ph, gtitle, "training step",
                  ylabel, (x0, steps), (lo - pad, hi + pad))
        for name, label, color, dash in members:
            if name in by and data.get(name):
                p.line([(a, b) for a, b in data[name] if a >= x0], color, label,
                       dash=dash, marker=None if smooth else "circle",
                       width=1.0 if color == "#b0b0b0" else 1.6)
        body.append(p.svg("outside"))
    W, H = cols * (pw + lw), rows * ph
    notes = ["%s." % title,
             "N = 1 is one run (cmollm-n1) for simple, context_aware and",
             "multi_head: with one stream the three are the same model."]
    if smooth:
        notes.append("Smoothing: exponential moving average, weight 0.95, bias-corrected.")
    notes.append("Every run sees the same batches in the same order.")
    tx, ty = pw + lw + 20, (rows - 1) * ph + 50
    body.append("\n".join('<text x="%d" y="%d" font-size="12">%s</text>'
                          % (tx, ty + 18 * j, esc(t)) for j, t in enumerate(notes)))
    with open(path, "w") as f:
        f.write(svg_document(W, H, "\n".join(body), title))


# --------------------------------------------------------------------------- #
# The report
# --------------------------------------------------------------------------- #

DISCUSSION_BEGIN = "<!-- hand-written notes: begin (kept when the report is rebuilt) -->"
DISCUSSION_END = "<!-- hand-written notes: end -->"


def describe_family(r):
    if r["family"] == "dense":
        return "dense", "-", "-"
    if r["family"] == "cmollm":
        if r["name"] == "cmollm-n1":
            return "cMoLLM", "N = 1", "simple (= context_aware = multi_head at N = 1)"
        return "cMoLLM", "N = %d" % r["width"], r["gating"]
    if r["family"] == "parascale":
        return "ParaScale", "P = %d" % r["width"], "-"
    return "AltUp", "K = %d" % r["width"], "-"


def fmt_dur(s):
    s = int(round(s))
    return "%d:%02d:%02d" % (s // 3600, s % 3600 // 60, s % 60) if s >= 3600 \
        else "%d:%02d" % (s // 60, s % 60)


def auto_findings(results):
    """Plain statements computed from the numbers (no judgement beyond
    comparing with the dense seed spread)."""
    by = {r["name"]: r for r in results}
    lines = []
    dense = [r["val_ce"] for r in results if r["family"] == "dense"]
    noise = None
    if len(dense) > 1:
        noise = max(dense) - min(dense)
        lines.append("* Noise level: the dense model trained from %d initialisation seeds "
                     "(same data order) spans %.4f nats (val CE %s; standard deviation "
                     "%.4f). Differences smaller than this are not distinguishable from "
                     "seed noise in a single run."
                     % (len(dense), noise, ", ".join("%.4f" % v for v in dense),
                        statistics.stdev(dense)))
    if "dense" in by:
        d = by["dense"]["val_ce"]
        for g in GATINGS:
            pts = [(n, by[cmollm_name(n, g)]["val_ce"]) for n in STREAMS
                   if cmollm_name(n, g) in by]
            if len(pts) < 2:
                continue
            best = min(pts, key=lambda t: t[1])
            mono = all(b[1] <= a[1] for a, b in zip(pts, pts[1:]))
            lines.append(
                "* %s: val CE %s for N = %s; change N = %d -> %d: %+.4f nats; best at N = %d "
                "(%+.4f vs dense)%s."
                % (g, ", ".join("%.4f" % v for _, v in pts),
                   ", ".join(str(n) for n, _ in pts), pts[0][0], pts[-1][0],
                   pts[-1][1] - pts[0][1], best[0], best[1] - d,
                   "; decreasing at every step" if mono else "; not monotone in N"))
        for fam in ("parascale", "altup"):
            for r in sorted((r for r in results if r["family"] == fam),
                            key=lambda r: r["width"]):
                lines.append("* %s: val CE %.4f (%+.4f vs dense), %.1fx the dense "
                             "training FLOPs per token."
                             % (r["name"], r["val_ce"], r["val_ce"] - d,
                                r["train_flops_per_token"] / by["dense"]["train_flops_per_token"]))
    if "cmollm-n1" in by and "dense" in by:
        lines.append("* N = 1 (cmollm-n1, the dense architecture with Xavier-uniform "
                     "FFN kernels and a constant 0.01 balance term): val CE %.4f, %+.4f vs "
                     "dense." % (by["cmollm-n1"]["val_ce"],
                                 by["cmollm-n1"]["val_ce"] - by["dense"]["val_ce"]))
    return lines


def write_report(results, args, path, skipped, experiment):
    s0 = results[0]["settings"]
    svg_dir = os.path.join(os.path.dirname(os.path.abspath(path)), "results")
    os.makedirs(svg_dir, exist_ok=True)
    rel = os.path.relpath(svg_dir, os.path.dirname(os.path.abspath(path)))
    plot_val_vs_n(results, os.path.join(svg_dir, "val-loss-vs-n.svg"))
    plot_val_vs_flops(results, os.path.join(svg_dir, "val-loss-vs-flops.svg"))
    plot_curves(results, args.out, os.path.join(svg_dir, "loss-curves.svg"), "ce", True,
                "Training cross-entropy from step %d" % max(1, s0["steps"] // 4),
                "training CE, smoothed (nats/byte)", from_frac=0.25)
    plot_curves(results, args.out, os.path.join(svg_dir, "loss-curves-vs-dense.svg"), "ce",
                True, "Training CE minus dense (seed 0) at the same step",
                "smoothed training CE - dense (nats)", from_frac=0.25, relative=True)
    plot_curves(results, args.out, os.path.join(svg_dir, "val-curves.svg"), "val_ce", False,
                "Validation CE during training (%d batches an evaluation)"
                % s0["eval_batches"], "validation CE (nats/byte)")

    by = {r["name"]: r for r in results}
    dense_flops = by["dense"]["train_flops_per_token"] if "dense" in by else None
    s0 = results[0]["settings"]
    tokens = s0["batch"] * s0["seq"] * s0["steps"]
    total_s = sum(r["compile_s"] + r["train_s"] + r["eval_s"] for r in results)
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

    old_notes = None
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
        if DISCUSSION_BEGIN in text and DISCUSSION_END in text:
            old_notes = text.split(DISCUSSION_BEGIN, 1)[1].split(DISCUSSION_END, 1)[0].strip("\n")

    L = []
    L.append("# Horizontal scaling on the Brown corpus")
    L.append("")
    L.append("The project's own reproduction, at a size two CPU cores can train, of the "
             "cMoLLM paper's Table 2 and Figure 3 (right): validation loss of cMoLLM with "
             "N = 1, 2, 4, 8 streams and each gating, against the dense GPT-2 and the "
             "ParaScale and AltUp baselines, all trained on the same tokens. Generated by "
             "`scripts/scaling-experiment.py` (issue 4); do not edit by hand except between "
             "the hand-written-notes markers below.")
    L.append("")
    L.append("## How it was run")
    L.append("")
    L.append("```sh")
    L.append(experiment.get("command", "python3 scripts/scaling-experiment.py"))
    L.append("```")
    L.append("")
    L.append("* Date: runs from %s to %s; %d runs, %s of compile + train + eval time "
             "in total%s." % (starts[0].replace("T", " "), ends[-1].replace("T", " "),
                              len(results), fmt_dur(total_s),
                              "; the experiment's wall-clock span was %s" % fmt_dur(
                                  experiment["wall_s"]) if experiment.get("wall_s") else ""))
    L.append("* Machine: %s, %d cores shared with other work (`nice -n 19`; the 1-minute "
             "load average seen at run starts and ends ranged %.1f-%.1f), so tokens/s "
             "are indicative only. mixc and mix-run ran with `OMP_NUM_THREADS=%s` (oneDNN's "
             "sgemm runs on OpenMP)." % (cpu, os.cpu_count() or 0, min(loads) if loads else float("nan"),
                                       max(loads) if loads else float("nan"),
                                       "/".join(sorted({str(r["settings"].get("threads", "unset"))
                                                        for r in results}))))
    sources = sorted({os.path.dirname(r["tools"]["mixc"].get("source", "build/bin/mixc"))
                      for r in results})
    L.append("* Tools: `mixc` and `mix-run` from %s, copied into the output directory at "
             "the start so every run of an invocation uses the same binaries (sha256 "
             "prefixes %s); git HEAD at the first run %s, at the last %s (other "
             "engineers commit while the experiment runs; the binaries stay the same)."
             % (", ".join("`%s/`" % d for d in sources),
                "; ".join("mixc %s built %s, mix-run %s built %s" % t for t in tools),
                gits[0], gits[1]))
    L.append("* Model (every configuration): byte vocabulary (256), n_layer 2, d_model 64, "
             "n_head 4, d_ff 256, n_positions 128, init seed 0 std 0.02; cMoLLM gate_heads 4, "
             "balance_alpha 0.01; ParaScale prefix_tokens 8, smoothing 0.01; AltUp schedule "
             "alternating. Specs: `%s/NAME/spec.json`." % os.path.relpath(args.out, ROOT))
    L.append("* Training: `mixc SPEC --batch %d --seq %d`, then `mix-run train --steps %d "
             "--lr %g --eval-every %d --eval-batches %d` (warm-up steps/10, cosine to 10%%, "
             "AdamW, clipping at 1.0, docs/models.md §7): %d steps x %d x %d = %s tokens "
             "(%.2f passes over the %s-byte training text), the same batches in the same "
             "order for every run (mix-run's fixed sampler seed)."
             % (s0["batch"], s0["seq"], s0["steps"], s0["lr"], s0["eval_every"],
                s0["eval_batches"], s0["steps"], s0["batch"], s0["seq"], fmt_si(tokens),
                tokens / max(1, experiment.get("train_bytes", 0) or 1),
                fmt_si(experiment.get("train_bytes", 0))))
    L.append("* Final validation CE: `mix-run eval` of the final checkpoint on %d batches "
             "(%s byte positions at evenly spaced offsets of val.txt, the same for every "
             "run); perplexity = exp(CE) per byte."
             % (s0["final_eval_batches"],
                fmt_si(s0["final_eval_batches"] * s0["batch"] * s0["seq"])))
    L.append("* tokens/s: median of `tokens_per_s` in `metrics.jsonl` (one optimizer step: "
             "compiled `@grad` plus `@adamw`, evaluation excluded) over steps after the "
             "first %d; wall-clock, so it falls when other work shares the cores. "
             "`train CPU` is the user + system CPU time of the whole `mix-run train` "
             "process (all threads, including its in-training evaluations and "
             "checkpoints), which depends much less on the other work."
             % results[0]["tokens_per_s_skip_steps"])
    L.append("* Seeds: one initialisation seed a configuration (the paper uses 3), plus "
             "dense with seeds %s as a noise estimate." % ", ".join(
                 str(s) for s in REPLICATE_SEEDS))
    L.append("* N = 1 runs once for simple, context_aware and multi_head (`cmollm-n1`): "
             "the gate is a softmax over one stream, identically 1 (docs/models.md §3), and "
             "parameters are drawn per name, so the three are the same model from the same "
             "initial weights; their extra gate parameters get no gradient (20-step runs of "
             "the three gave bit-identical losses and gradient norms). adaptive runs at "
             "N = 1 on its own (`cmollm-n1-adaptive`): its magnitude r and shift t act "
             "outside the softmax and are trained. cMoLLM at N = 1 is the dense "
             "architecture, but not the dense run: its FFN up-projection starts "
             "Xavier-uniform (docs/models.md §6) instead of normal(0, 0.02), and its loss "
             "carries a constant 0.01 balance term (the curves and val CE are CE only).")
    if skipped:
        L.append("* Left out (finished with other settings): %s." % ", ".join(skipped))
    L.append("")
    L.append("## Results")
    L.append("")
    L.append("| run | arch | streams | gating | params | train FLOPs/token | vs dense | "
             "val CE | val PPL | tokens/s | train wall | train CPU |")
    L.append("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        arch, width, gating = describe_family(r)
        ratio = ("%.2fx" % (r["train_flops_per_token"] / dense_flops)) if dense_flops else "-"
        cpu = r.get("train_cpu_s")
        L.append("| %s | %s | %s | %s | %s | %s | %s | %.4f | %.3f | %s | %s | %s |"
                 % (r["name"], arch, width, gating, "{:,}".format(r["params"]),
                    "%.3fM" % (r["train_flops_per_token"] / 1e6), ratio, r["val_ce"],
                    r["val_ppl"], "{:,}".format(int(round(r["tokens_per_s_median"]))),
                    fmt_dur(r["train_s"]), fmt_dur(cpu) if cpu is not None else "-"))
    L.append("")
    L.append("Parameters are counted from each package's manifest (every tensor, gate and "
             "tied embedding included; gate parameters of N = 1 models are counted although "
             "a one-way softmax makes them inert). The unigram entropy of the byte stream "
             "is 3.10 nats.")
    L.append("")
    L.append("![validation CE against N](%s/val-loss-vs-n.svg)" % rel)
    L.append("")
    L.append("![validation CE against training FLOPs per token](%s/val-loss-vs-flops.svg)" % rel)
    L.append("")
    L.append("![training loss curves](%s/loss-curves.svg)" % rel)
    L.append("")
    L.append("![training loss minus dense](%s/loss-curves-vs-dense.svg)" % rel)
    L.append("")
    L.append("![validation CE during training](%s/val-curves.svg)" % rel)
    L.append("")
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
    L.append("## What the numbers show")
    L.append("")
    L.append("The paper (section 5.3, Table 2, Figure 3) claims that validation loss and "
             "perplexity improve as the stream count n grows from 1 to 4-8, best with "
             "multi_head at n = 8, mild over-streaming for simple at n = 8, while the FFN "
             "costs (N + 1) d f instead of 2 d f (equation 21). Measured here, "
             "automatically summarised:")
    L.append("")
    L.extend(auto_findings(results))
    L.append("")
    L.append(DISCUSSION_BEGIN)
    L.append(old_notes if old_notes is not None else
             "(No hand-written notes yet.)")
    L.append(DISCUSSION_END)
    L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))
    log("wrote %s and %s/*.svg" % (os.path.relpath(path), os.path.relpath(svg_dir)))


def collect_results(args, configs):
    """Finished runs in OUT (those with result.json) in configuration order,
    restricted to the current batch, seq and steps."""
    results, skipped = [], []
    for cfg in configs:
        path = os.path.join(args.out, cfg["name"], "result.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            r = json.load(f)
        s = r["settings"]
        if (s["batch"], s["seq"], s["steps"]) != (args.batch, args.seq, args.steps):
            skipped.append("%s (B %d, S %d, %d steps)" % (r["name"], s["batch"], s["seq"],
                                                           s["steps"]))
            continue
        results.append(r)
    return results, skipped


def main():
    ap = argparse.ArgumentParser(
        prog="scaling-experiment.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=400, help="optimizer steps (default 400)")
    ap.add_argument("--batch", type=int, default=16, help="batch size B (default 16)")
    ap.add_argument("--seq", type=int, default=128, help="sequence length S (default 128)")
    ap.add_argument("--lr", type=float, default=3e-3, help="peak learning rate (default 3e-3)")
    ap.add_argument("--eval-every", type=int, default=None,
                    help="evaluate during training every N steps (default steps/8)")
    ap.add_argument("--eval-batches", type=int, default=4,
                    help="validation batches an evaluation during training (default 4)")
    ap.add_argument("--final-eval-batches", type=int, default=32,
                    help="validation batches of the final mix-run eval (default 32)")
    ap.add_argument("--tps-skip", type=int, default=5,
                    help="steps left out of the median tokens/s (default 5)")
    ap.add_argument("--threads", type=int, default=1,
                    help="OMP_NUM_THREADS of mixc and mix-run (default 1: on cores "
                         "shared with other work, two OpenMP threads at nice 19 stall "
                         "at every barrier behind the one that is starved)")
    ap.add_argument("--only", metavar="NAME-REGEX",
                    help="run only the configurations whose whole name matches")
    ap.add_argument("--out", default=os.path.join(ROOT, "runs", "scaling"),
                    help="output directory (default runs/scaling)")
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "brown"),
                    help="corpus directory (default data/brown)")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                    help="where mixc and mix-run are (default build/bin)")
    ap.add_argument("--results-md", default=os.path.join(ROOT, "docs", "results.md"),
                    help="the report; plots go to results/ next to it "
                         "(default docs/results.md)")
    ap.add_argument("--skip-existing", action="store_true",
                    help="reuse runs that finished with the same settings")
    ap.add_argument("--report-only", action="store_true",
                    help="only rebuild the report from finished runs")
    ap.add_argument("--list", action="store_true", help="list the configurations and exit")
    args = ap.parse_args()
    if args.steps < 1 or args.batch < 1 or args.seq < 1:
        ap.error("--steps, --batch and --seq must be positive")
    if args.threads < 1:
        ap.error("--threads must be positive")
    CHILD_ENV["OMP_NUM_THREADS"] = str(args.threads)
    if args.eval_every is None:
        args.eval_every = max(1, args.steps // 8)
    args.out = os.path.abspath(args.out)
    args.data = os.path.abspath(args.data)
    args.results_md = os.path.abspath(args.results_md)

    configs = make_configs()
    if args.only:
        try:
            rx = re.compile(args.only)
        except re.error as e:
            ap.error("--only: bad regular expression: %s" % e)
        configs = [c for c in configs if rx.fullmatch(c["name"])]
        if not configs:
            ap.error("--only %r matches no configuration (see --list)" % args.only)
    if args.list:
        for c in configs:
            print("%-26s %.3fM train FLOPs/token" % (
                c["name"], train_flops(c["spec"], args.seq) / 1e6))
        return 0

    exp_path = os.path.join(args.out, "experiment.json")
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
            tools = snapshot_tools(args.bin, args.out)
            niceness = os.nice(0)
            cmd = ("nice -n %d " % niceness if niceness > 0 else "") + "python3 " + " ".join(shlex.quote(a) for a in
                                        [os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)]
                                        + sys.argv[1:])
            t0 = time.time()
            log("%d configurations, %d steps of %d x %d tokens each; output in %s"
                % (len(configs), args.steps, args.batch, args.seq, args.out))
            for cfg in configs:
                run_one(cfg, args, tools)
            wall = time.time() - t0
            log("all runs finished in %s" % fmt_dur(wall))
            if not args.only:
                # The command and span of the last complete invocation.
                experiment.update({"command": cmd, "wall_s": wall,
                                   "finished": datetime.datetime.now().isoformat(
                                       timespec="seconds")})
                with open(exp_path, "w") as f:
                    json.dump(experiment, f, indent=2)
                    f.write("\n")
            else:
                experiment.setdefault("command", cmd)
        results, skipped = collect_results(args, make_configs())
        if not results:
            raise RunError("no finished runs with batch %d, seq %d, %d steps in %s"
                           % (args.batch, args.seq, args.steps, args.out))
        write_report(results, args, args.results_md, skipped, experiment)
    except RunError as e:
        print("%s: error: %s" % (PROG, e), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("%s: interrupted" % PROG, file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
