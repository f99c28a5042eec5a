#===- compare.py - A device's gradients against the CPU's -----------------===#
#
# Compares the loss terms and every gradient two `mix-run grad` outputs hold
# (pure Python: the device machine may have no numpy). Each tensor's error
# is max |a - b| over max |a| (the reference's largest magnitude), so the
# tolerance reads as "relative to the tensor's scale".
#
#===----------------------------------------------------------------------===#
"""Usage: compare.py REFERENCE OTHER TOLERANCE NAME

Prints one line: NAME, pass/FAIL, the loss of each, and the worst tensor.
Exits 1 if any tensor's error exceeds TOLERANCE."""
import json
import struct
import sys


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        if info["dtype"] != "F32":
            sys.exit("compare.py: %s: %s is %s, expected F32" % (path, name, info["dtype"]))
        out[name] = struct.unpack("<%df" % ((end - begin) // 4), body[begin:end])
    return out


def main():
    ref, other, tol, name = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    if sorted(ref) != sorted(other):
        print("%s FAIL: different tensors %s" % (name, sorted(set(ref) ^ set(other))[:5]))
        return 1
    worst, worst_name = 0.0, ""
    for key, values in ref.items():
        scale = max(abs(v) for v in values) or 1.0
        err = max(abs(a - b) for a, b in zip(values, other[key])) / scale
        if err != err:  # NaN
            err = float("inf")
        if err >= worst:
            worst, worst_name = err, key
    ok = worst <= tol
    print("%s %s: loss %.6f (cpu) %.6f (device); worst %s %.2e (tolerance %.0e)" % (
        name, "pass" if ok else "FAIL", ref["loss"][0], other["loss"][0],
        worst_name, worst, tol))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
