#!/usr/bin/env python3
"""Runs the cross-entropy kernels of cross_entropy.mlir, built for the CUDA
emulator, on random inputs and compares them with PyTorch (float64): the
mean token cross-entropy (torch.nn.functional.cross_entropy), each row's
log-sum-exp (torch.logsumexp), and the logits' gradient (autograd) scaled
by an adjoint of 0.75, given as a buffer or as the op's constant scale;
and the loss with its gradient from one entry point, where the two ops
share a launch.

usage: cross_entropy_check.py LIB.so
Prints the largest absolute error of each result and exits 1 if any is
above the tolerance (float32 sums over at most 1000 terms).
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulated_device import Device  # noqa: E402

TOLERANCE = 2e-5
ADJOINT = 0.75


def report(name, got, want):
    err = float(np.max(np.abs(got - want.detach().numpy())))
    ok = np.isfinite(got).all() and err <= TOLERANCE
    print(f"{name}: max error {err:.3g} {'ok' if ok else 'FAILED'}")
    return ok


def check(dev, case, b, s, v, dtype):
    gen = torch.Generator().manual_seed(3)
    # Spread logits (as a model's are) and a few large ones, where a
    # softmax without its max would overflow float32.
    logits = 4 * torch.randn(b, s, v, generator=gen, dtype=torch.float64)
    logits[0, 0, 7] = 120.0
    logits = logits.requires_grad_()
    targets = torch.randint(0, v, (b, s), generator=gen)
    targets[0, 0] = 7
    ce = torch.nn.functional.cross_entropy(logits.reshape(-1, v),
                                           targets.reshape(-1))
    lse = torch.logsumexp(logits, -1)
    (ADJOINT * ce).backward()

    ids = targets.numpy().astype(dtype)
    got_ce, got_lse = dev.run("fwd_" + case, [logits.detach().numpy(), ids],
                              [(), (b, s)])
    ok = report(case + " loss", got_ce, ce)
    ok &= report(case + " lse", got_lse, lse)
    (got_grad,) = dev.run(
        "grad_" + case,
        [logits.detach().numpy(), ids, lse.detach().numpy(),
         np.array(ADJOINT, dtype=np.float32)], [(b, s, v)])
    ok &= report(case + " dlogits", got_grad, logits.grad)
    if case == "i32":
        # The loss and its gradient in one launch of rows.
        got_ce, got_grad = dev.run(
            "both_i32",
            [logits.detach().numpy(), ids, np.array(ADJOINT, dtype=np.float32)],
            [(), (b, s, v)])
        ok &= report(case + " loss and dlogits together: loss", got_ce, ce)
        ok &= report(case + " loss and dlogits together: dlogits", got_grad,
                     logits.grad)
        # The same adjoint as the op's constant scale.
        (got_scaled,) = dev.run(
            "grad_i32_scaled",
            [logits.detach().numpy(), ids, lse.detach().numpy()],
            [(b, s, v)])
        ok &= report(case + " dlogits, constant adjoint", got_scaled,
                     logits.grad)
    return ok


def main():
    dev = Device(sys.argv[1])
    ok = check(dev, "i32", 2, 3, 300, np.int32)
    ok &= check(dev, "i64", 3, 2, 1000, np.int64)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
