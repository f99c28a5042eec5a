#!/usr/bin/env python3
"""Runs the flash attention kernels of flash_attention.mlir, built for the
CUDA emulator, on random inputs and compares them with attention written
directly in PyTorch (float64, autograd for the gradients): the scores
q k^T / sqrt(dh) with the prefix keys first and the causal mask on the
real keys, their softmax, its log-sum-exp, and the gradients of
sum(out * dout).

usage: flash_attention_check.py LIB.so [tf32|bf16]
The kernels compute their products on the tensor cores from operands
rounded to tf32 (the default) or bf16 (mix-flash-attention-kernels
{rounding=...}), with float32 accumulation. Prints the largest error of
each result relative to the largest magnitude of the reference's, and
exits 1 if any is above the tolerance: 8 units of the operands' rounding
(2^-11 for tf32, 2^-8 for bf16), a bound that a misplaced fragment element
or a missed mask (errors of order 1) is far above.
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulated_device import Device  # noqa: E402

TOLERANCE = {"tf32": 8 * 2.0**-11, "bf16": 8 * 2.0**-8}
tolerance = TOLERANCE["tf32"]


def reference(qkv, heads, pk=None, pv=None):
    """out (B,S,d) and lse (B,heads,S) of causal attention over qkv."""
    b, s, d3 = qkv.shape
    d = d3 // 3
    dh = d // heads
    q, k, v = (qkv[:, :, i * d:(i + 1) * d].reshape(b, s, heads, dh)
               .transpose(1, 2) for i in range(3))
    mask = torch.ones(s, s, dtype=torch.bool).tril()
    if pk is not None:
        streams, _, tp, _ = pk.shape
        rows = b // streams
        k = torch.cat([pk.repeat_interleave(rows, 0), k], 2)
        v = torch.cat([pv.repeat_interleave(rows, 0), v], 2)
        mask = torch.cat([torch.ones(s, tp, dtype=torch.bool), mask], 1)
    scores = (q @ k.transpose(-1, -2)) / dh**0.5
    scores = scores.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(scores, -1)
    out = torch.softmax(scores, -1) @ v
    return out.transpose(1, 2).reshape(b, s, d), lse


def report(name, got, want):
    want = want.detach().numpy()
    err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    ok = np.isfinite(got).all() and err <= tolerance
    print(f"{name}: relative error {err:.3g} {'ok' if ok else 'FAILED'}")
    return ok


def check(dev, case, b, s, heads, dh, streams=0, tp=0):
    gen = torch.Generator().manual_seed(7)
    d = heads * dh

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    qkv = rand(b, s, 3 * d).requires_grad_()
    prefix = []
    if tp:
        prefix = [rand(streams, heads, tp, dh).requires_grad_()
                  for _ in range(2)]
    out, lse = reference(qkv, heads, *prefix)
    dout = rand(b, s, d)
    (out * dout).sum().backward()

    ins = [t.detach().numpy() for t in [qkv] + prefix]
    got_out, got_lse = dev.run("fwd_" + case, ins, [(b, s, d), (b, heads, s)])
    ok = report(case + " out", got_out, out)
    ok &= report(case + " lse", got_lse, lse)

    # The gradients from the reference's out and lse, rounded to float32.
    ins += [out.detach().numpy(), lse.detach().numpy(), dout.numpy()]
    shapes = [(b, s, 3 * d)] + [(streams, heads, tp, dh)] * len(prefix)
    grads = dev.run("grad_" + case, ins, shapes)
    ok &= report(case + " dqkv", grads[0], qkv.grad)
    for name, got, t in zip(["dprefix_k", "dprefix_v"], grads[1:], prefix):
        ok &= report(case + " " + name, got, t.grad)
    return ok


def main():
    global tolerance
    dev = Device(sys.argv[1])
    tolerance = TOLERANCE[sys.argv[2] if len(sys.argv) > 2 else "tf32"]
    ok = check(dev, "plain", b=2, s=70, heads=2, dh=76)
    ok &= check(dev, "prefix", b=4, s=40, heads=2, dh=16, streams=2, tp=70)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
