#!/usr/bin/env python3
"""Compares two safetensors files tensor by tensor: the largest difference
relative to the reference (second) tensor's largest magnitude, against a
tolerance (default 2e-2). usage: compare_safetensors.py A B [TOL]"""
import array, json, struct, sys
def load(p):
    b = open(p, 'rb').read()
    n = struct.unpack('<Q', b[:8])[0]
    h = json.loads(b[8:8+n]); d = b[8+n:]
    out = {}
    for k, v in h.items():
        if k == '__metadata__': continue
        s, e = v['data_offsets']
        code = {'F32': 'f', 'I32': 'i', 'F64': 'd'}[v['dtype']]
        out[k] = array.array(code, d[s:e])
    return out
def main():
    a, b = load(sys.argv[1]), load(sys.argv[2])
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 2e-2
    worst = (0.0, "")
    for k in sorted(b):
        if k not in a:
            print("missing", k); sys.exit(1)
        scale = max(max(abs(v) for v in b[k]), 1e-30)
        err = max(abs(x - y) for x, y in zip(a[k], b[k])) / scale
        worst = max(worst, (err, k))
    print(f"{len(b)} tensors; worst error relative to the tensor's largest magnitude: {worst[0]:.3e} ({worst[1]})")
    sys.exit(0 if worst[0] <= tol else 1)


if __name__ == "__main__":
    main()
