#===- interrupt_run.py - Interrupt mix-run train, resume it, compare -------===#
#
# Drives `mix-run train` through the faults of a real run: killed with
# SIGKILL at random moments, or stopped by SIGINT / SIGTERM (once or
# repeatedly), then resumed with --resume until it completes. Its
# metrics.jsonl must then hold each step once, every line whole, with the
# losses of an uninterrupted run bit for bit.
#
#===----------------------------------------------------------------------===#
"""Usage: interrupt_run.py MODE REFERENCE OUT -- TRAIN_COMMAND...

TRAIN_COMMAND is a mix-run train command line without --out and --resume;
REFERENCE is the metrics.jsonl of the same command run uninterrupted; OUT is
the run directory to use (created fresh).

MODE:
  kill:K     K times: start the run (resuming after the first), wait until
             it has written a new checkpoint, wait a random 0-30 ms more and
             SIGKILL it; the random seed is printed (MIXRT_TEST_SEED sets it)
  int, term  SIGINT or SIGTERM once the run has logged two steps: the run
             must exit with 130 or 143, saying where its checkpoint is, and
             that checkpoint must be at the last logged step
  int3       three SIGINTs 2 ms apart: the run ends with 130 after the
             second, or is killed by the third; either way nothing is lost
  segv       SIGSEGV once the run has logged two steps, as a fault would: the
             run must report the crash with a backtrace and end by SIGSEGV;
             resumed, it completes from its last checkpoint

Every run gets OMP_NUM_THREADS=1 (the reference should be made with it too):
spinning OpenMP threads make the tiny model crawl on a busy machine.
"""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors  # noqa: E402

TIMEOUT = 120


LOG = None


def fail(message):
    """Ends the check; the end of the runs' log goes with the message, so
    that a failure far away (in CI) shows what the run said."""
    tail = ""
    if LOG is not None:
        LOG.flush()
        with open(LOG.name, errors="replace") as f:
            lines = f.read().splitlines()[-40:]
        tail = "\nthe last lines of %s:\n%s" % (LOG.name, "\n".join(lines))
    sys.exit("interrupt_run.py: " + message + tail)


def wait_until(condition, what, proc=None):
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if proc is not None and proc.poll() is not None:
            return False
        if time.monotonic() > deadline:
            fail("timed out waiting for " + what)
        time.sleep(0.001)
    return True


def checkpoint_id(path):
    """Changes whenever a new checkpoint replaces the file."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def checkpoint_step(path):
    _, meta = safetensors.read(path)
    return int(meta["step"])


def metrics_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def load_metrics(path):
    """Every line must be a whole JSON object; steps 1, 2, ... once each."""
    with open(path, "rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):
        fail("%s ends with a partial line: %r" % (path, data[-80:]))
    rows = [json.loads(line) for line in data.decode().splitlines()]
    steps = [r["step"] for r in rows]
    if steps != list(range(1, len(rows) + 1)):
        fail("%s: steps are %s, expected 1..%d once each" % (path, steps, len(rows)))
    return rows


def compare(reference, out):
    a, b = load_metrics(reference), load_metrics(out)
    if len(a) != len(b):
        fail("%d steps in the reference, %d after the interruptions" % (len(a), len(b)))
    for ra, rb in zip(a, b):
        for key in ("loss", "ce", "aux", "lr", "grad_norm", "val_ce"):
            if ra.get(key) != rb.get(key):
                fail("step %d: %s is %r uninterrupted, %r interrupted"
                     % (ra["step"], key, ra.get(key), rb.get(key)))
    print("%d steps; loss, ce, aux, lr, grad_norm and val_ce identical" % len(a))


def start(command, out, resume, log):
    args = command + ["--out", out] + (["--resume"] if resume else [])
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.Popen(args, stdout=log, stderr=log, env=env)


def finish(command, out, log):
    """Resumes the run to its end."""
    proc = start(command, out, True, log)
    if proc.wait(TIMEOUT) != 0:
        fail("the resumed run failed with status %d; see %s" % (proc.returncode, log.name))


def run_kills(kills, command, out, log):
    seed = int(os.environ.get("MIXRT_TEST_SEED", time.time_ns() % 1000003))
    rng = random.Random(seed)
    print("seed %d" % seed)
    ckpt = os.path.join(out, "checkpoint.safetensors")
    for k in range(kills):
        before = checkpoint_id(ckpt)
        proc = start(command, out, k > 0, log)
        wrote = wait_until(lambda: checkpoint_id(ckpt) not in (None, before),
                           "a new checkpoint", proc)
        delay = rng.uniform(0, 0.030)
        time.sleep(delay)
        if not wrote or proc.poll() is not None:
            fail("run %d ended (status %s) before it could be killed; give it "
                 "more steps" % (k + 1, proc.returncode))
        proc.kill()
        proc.wait(TIMEOUT)
        # The process may have ended on its own during the last moment.
        status = "killed" if proc.returncode == -signal.SIGKILL else \
            "ended with status %d" % proc.returncode
        saving = any(".tmp." in n for n in os.listdir(out))
        print("run %d: %s %.1f ms after a new checkpoint%s; checkpoint at step "
              "%d, %d metrics lines" % (k + 1, status, delay * 1000,
                                        " (while writing the next)" if saving else "",
                                        checkpoint_step(ckpt),
                                        metrics_lines(os.path.join(out, "metrics.jsonl"))),
              flush=True)
    finish(command, out, log)


def run_signals(mode, command, out, log):
    metrics = os.path.join(out, "metrics.jsonl")
    ckpt = os.path.join(out, "checkpoint.safetensors")
    proc = start(command, out, False, log)
    if not wait_until(lambda: metrics_lines(metrics) >= 2, "two steps", proc):
        fail("the run ended (status %s) before two steps" % proc.returncode)
    signo = signal.SIGTERM if mode == "term" else signal.SIGINT
    for i in range(3 if mode == "int3" else 1):
        if i:
            time.sleep(0.002)
        proc.send_signal(signo)
    status = proc.wait(TIMEOUT)
    log.flush()
    with open(log.name) as f:
        text = f.read()
    if status == -signal.SIGINT and mode == "int3":
        print("the third SIGINT ended the run")
    else:
        if status != 128 + signo:
            fail("status %d, expected %d; see %s" % (status, 128 + signo, log.name))
        m = re.search(r"mix-run: interrupted by (SIG\w+): stopped after step "
                      r"(\d+) with a checkpoint in (\S+); to continue, run "
                      r"the same command with --resume\n", text)
        if not m:
            fail("no stop message in %s" % log.name)
        step = int(m.group(2))
        if m.group(1) != signal.Signals(signo).name or m.group(3) != ckpt:
            fail("the stop message names %s and %s" % (m.group(1), m.group(3)))
        if checkpoint_step(ckpt) != step or len(load_metrics(metrics)) != step:
            fail("stopped after step %d, but the checkpoint is at step %d and "
                 "the metrics have %d lines" % (step, checkpoint_step(ckpt),
                                                metrics_lines(metrics)))
        print("status %d: stopped after step %d with a checkpoint" % (status, step))
    if mode == "int3" and "mix-run: still stopping" in text:
        print("the second SIGINT was noted")
    finish(command, out, log)


def run_segv(command, out, log):
    metrics = os.path.join(out, "metrics.jsonl")
    proc = start(command, out, False, log)
    if not wait_until(lambda: metrics_lines(metrics) >= 2, "two steps", proc):
        fail("the run ended (status %s) before two steps" % proc.returncode)
    proc.send_signal(signal.SIGSEGV)
    status = proc.wait(TIMEOUT)
    log.flush()
    with open(log.name) as f:
        text = f.read()
    if status != -signal.SIGSEGV:
        fail("status %d, expected %d (ended by SIGSEGV)" % (status, -signal.SIGSEGV))
    m = re.search(r"(\S+: crashed: SIGSEGV .*)\n((?:.*\n)+)", text)
    if not m:
        fail("no crash report in %s" % log.name)
    frames = [l for l in m.group(2).splitlines() if re.search(r"\[0x[0-9a-f]+\]$", l)]
    print(m.group(1))
    print("%s frames in the backtrace" % ("some" if frames else "no"))
    # --resume goes on from the last checkpoint, or starts afresh.
    finish(command, out, log)


def main(argv):
    if len(argv) < 6 or argv[4] != "--":
        sys.exit(__doc__)
    mode, reference, out, command = argv[1], argv[2], argv[3], argv[5:]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    global LOG
    with open(out + ".log", "w") as log:
        LOG = log
        if mode.startswith("kill:"):
            run_kills(int(mode[5:]), command, out, log)
        elif mode in ("int", "term", "int3"):
            run_signals(mode, command, out, log)
        elif mode == "segv":
            run_segv(command, out, log)
        else:
            sys.exit(__doc__)
    compare(reference, os.path.join(out, "metrics.jsonl"))
    left = [n for n in os.listdir(out) if ".tmp." in n]
    if left:
        fail("temporary files left in %s: %s" % (out, left))


if __name__ == "__main__":
    main(sys.argv)
