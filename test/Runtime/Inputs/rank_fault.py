#===- rank_fault.py - A rank of a data-parallel run dies or stalls ---------===#
#
# Starts a data-parallel `mpirun ... mix-run train` run, waits until it has
# logged a few steps, then SIGKILLs or SIGSTOPs one rank (found by the
# OMPI_COMM_WORLD_RANK in its environment), and requires the whole run to
# end with a non-zero status within a bound instead of hanging in a
# collective. Prints what happened for FileCheck.
#
#===----------------------------------------------------------------------===#
"""Usage: rank_fault.py kill|stop RANK BOUND METRICS LOG -- COMMAND...

COMMAND is started with stdout and stderr to LOG; once METRICS has three
lines, RANK is sent SIGKILL (kill) or SIGSTOP (stop). The run must then end
within BOUND seconds with a non-zero status.
"""
import os
import signal
import subprocess
import sys
import time


def fail(message):
    sys.exit("rank_fault.py: " + message)


def descendants(pid):
    """Every process below pid, by /proc's parent links."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except OSError:
            continue
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def find_rank(root, rank):
    for pid in descendants(root):
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if b"mix-run" in cmd and ("OMPI_COMM_WORLD_RANK=%d" % rank).encode() in env:
            return pid
    return None


def main():
    args = sys.argv[1:]
    if len(args) < 7 or args[5] != "--" or args[0] not in ("kill", "stop"):
        fail(__doc__)
    mode, rank, bound, metrics, log = args[0], int(args[1]), float(args[2]), args[3], args[4]
    command = args[6:]
    with open(log, "w") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                fail("the run ended (status %d) before the fault; see %s" % (proc.returncode, log))
            if time.monotonic() > deadline:
                fail("the run logged no 3 steps in 120 s")
            try:
                with open(metrics) as f:
                    if len(f.readlines()) >= 3:
                        break
            except OSError:
                pass
            time.sleep(0.01)
        victim = find_rank(proc.pid, rank)
        if victim is None:
            fail("no process of rank %d under the launcher" % rank)
        os.kill(victim, signal.SIGKILL if mode == "kill" else signal.SIGSTOP)
        start = time.monotonic()
        try:
            status = proc.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            fail("the run still runs %g s after rank %d was %s" %
                 (bound, rank, "killed" if mode == "kill" else "stopped"))
        print("rank %d %s: the run ended with status %d within %g s" %
              (rank, "killed" if mode == "kill" else "stopped", status, bound))
        if status == 0:
            fail("the run ended with status 0 after losing a rank")
        del start
    finally:
        # Nothing may outlive the test, the stopped rank included.
        for pid in descendants(proc.pid) + [proc.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        proc.wait()


if __name__ == "__main__":
    main()
