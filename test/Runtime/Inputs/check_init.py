#===- check_init.py - Check `mix-run init` against docs/package.md ---------===#
#
# Recomputes every parameter of a manifest from docs/package.md's algorithm
# in Python (splitmix64, FNV-1a, Box-Muller in double, rounding to float32)
# and compares it bit for bit with the safetensors file mix-run wrote, after
# checking the file's layout byte by byte.
#
#===----------------------------------------------------------------------===#
"""Usage: check_init.py MANIFEST.json P.safetensors"""
import json
import math
import struct
import sys

MASK = (1 << 64) - 1


def splitmix64(state):
    """Returns (new state, output) of one splitmix64 step."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & MASK
    return h


def expected(param, seed):
    count = 1
    for d in param["shape"]:
        count *= d
    _, mixed = splitmix64(seed)
    _, state = splitmix64(mixed ^ fnv1a64(param["name"]))

    def uniform():
        nonlocal state
        state, u = splitmix64(state)
        return ((u >> 11) + 0.5) * 2.0 ** -53

    init = param["init"]
    if init == "normal":
        values = []
        for _ in range(count):
            u1, u2 = uniform(), uniform()
            z = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
            values.append(z * param["std"])
        return values
    if init == "uniform":
        return [param["bound"] * (2.0 * uniform() - 1.0) for _ in range(count)]
    if init == "zeros":
        return [0.0] * count
    if init == "ones":
        return [1.0] * count
    if init == "identity":
        n = param["shape"][0]
        return [1.0 if i // n == i % n else 0.0 for i in range(count)]
    sys.exit("unknown init " + init)


def main(manifest_path, params_path):
    with open(manifest_path) as f:
        manifest = json.load(f)
    with open(params_path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    assert n % 8 == 0, "header not padded to 8 bytes"
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    names = [p["name"] for p in manifest["params"]]
    assert list(header) == names, "tensors %s, expected %s" % (
        list(header), names)
    seed = manifest["spec"]["init"]["seed"]
    offset = 0
    for param in manifest["params"]:
        info = header[param["name"]]
        assert info["dtype"] == "F32", info
        assert info["shape"] == param["shape"], info
        want = expected(param, seed)
        begin, end = info["data_offsets"]
        assert begin == offset and end == begin + 4 * len(want), info
        got = body[begin:end]
        packed = struct.pack("<%df" % len(want), *want)
        for i in range(len(want)):
            g, w = got[4 * i:4 * i + 4], packed[4 * i:4 * i + 4]
            assert g == w, "%s[%d]: got %r, expected %r" % (
                param["name"], i, struct.unpack("<f", g)[0],
                struct.unpack("<f", w)[0])
        offset = end
        print("ok %s %s %s" % (param["name"], param["init"], param["shape"]))
    assert offset == len(body), "%d trailing bytes" % (len(body) - offset)
    print("all %d parameters match" % len(names))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
