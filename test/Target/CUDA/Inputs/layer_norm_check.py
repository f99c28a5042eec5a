#!/usr/bin/env python3
"""Runs the LayerNorm kernels of layer_norm.mlir, built for the CUDA
emulator, on random inputs and compares them with PyTorch (float64):
torch.nn.functional.layer_norm's result, each row's mean and 1/std, and
the gradients of the input, the weight and the bias (autograd) for a
random adjoint; and the same with a residual add before the LayerNorm and
the residual gradient's add after its backward pass (also into the buffer
of the incoming gradient itself), which the kernels
take in.

usage: layer_norm_check.py LIB.so
Prints the largest error of each result, relative to the largest
magnitude of the reference, and exits 1 if any is above the tolerance.
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulated_device import Device  # noqa: E402

TOLERANCE = 1e-5
EPS = 1e-5


def report(name, got, want):
    want = want.detach().numpy()
    err = float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))
    ok = np.isfinite(got).all() and err <= TOLERANCE
    print(f"{name}: max relative error {err:.3g} {'ok' if ok else 'FAILED'}")
    return ok


def check(dev, case, shape):
    gen = torch.Generator().manual_seed(7)
    width = shape[-1]
    # Rows with an offset and a spread of their own, as a residual's are.
    x = (3 * torch.randn(shape, generator=gen, dtype=torch.float64)
         + torch.randn(shape[:-1] + (1,), generator=gen, dtype=torch.float64))
    w = 1 + 0.1 * torch.randn(width, generator=gen, dtype=torch.float64)
    b = 0.1 * torch.randn(width, generator=gen, dtype=torch.float64)
    dy = torch.randn(shape, generator=gen, dtype=torch.float64)
    # Both sides start from the same float32 values.
    x, w, b, dy = (t.float().double() for t in (x, w, b, dy))
    x.requires_grad_()
    w.requires_grad_()
    b.requires_grad_()
    y = torch.nn.functional.layer_norm(x, (width,), w, b, EPS)
    y.backward(dy)
    mean = x.mean(-1)
    rstd = 1 / torch.sqrt(x.var(-1, unbiased=False) + EPS)

    rows = shape[:-1]
    got_y, got_mean, got_rstd = dev.run(
        "fwd_" + case, [x.detach().numpy(), w.detach().numpy(),
                        b.detach().numpy()], [shape, rows, rows])
    ok = report(case + " result", got_y, y)
    ok &= report(case + " mean", got_mean, mean)
    ok &= report(case + " rstd", got_rstd, rstd)
    got_dx, got_dw, got_db = dev.run(
        "grad_" + case, [x.detach().numpy(), w.detach().numpy(),
                         got_mean, got_rstd, dy.numpy()],
        [shape, (width,), (width,)])
    ok &= report(case + " dinput", got_dx, x.grad)
    ok &= report(case + " dweight", got_dw, w.grad)
    ok &= report(case + " dbias", got_db, b.grad)
    return ok


def check_residual(dev):
    """fwd_residual and grad_residual: the residual add before the
    LayerNorm and the residual gradient's add after its backward pass, each
    inside the kernel."""
    shape, width = (201, 300), 300
    gen = torch.Generator().manual_seed(11)
    a, r, dy, dres = (torch.randn(shape, generator=gen, dtype=torch.float64)
                      for _ in range(4))
    w = 1 + 0.1 * torch.randn(width, generator=gen, dtype=torch.float64)
    b = 0.1 * torch.randn(width, generator=gen, dtype=torch.float64)
    a, r, dy, dres, w, b = (t.float().double()
                            for t in (a, r, dy, dres, w, b))
    # The sum as float32 computes it, as the kernel's input.
    x = (a.float() + r.float()).double().requires_grad_()
    w.requires_grad_()
    b.requires_grad_()
    y = torch.nn.functional.layer_norm(x, (width,), w, b, EPS)
    y.backward(dy)
    got_x, got_y, got_mean, got_rstd = dev.run(
        "fwd_residual", [a.numpy(), r.numpy(), w.detach().numpy(),
                         b.detach().numpy()], [shape, shape, (201,), (201,)])
    ok = report("residual sum", got_x, x)
    ok &= report("residual result", got_y, y)
    # The same with the add's operand a temporary freed before the
    # LayerNorm (freed after it instead).
    got_x, got_y, _, _ = dev.run(
        "fwd_residual_freed", [a.numpy(), r.numpy(), w.detach().numpy(),
                               b.detach().numpy()],
        [shape, shape, (201,), (201,)])
    ok &= report("residual sum, operand freed", got_x, x)
    ok &= report("residual result, operand freed", got_y, y)
    got_out, got_dw, got_db = dev.run(
        "grad_residual", [x.detach().numpy(), w.detach().numpy(), got_mean,
                          got_rstd, dy.numpy(), dres.numpy()],
        [shape, (width,), (width,)])
    ok &= report("residual dinput + dresidual", got_out, x.grad + dres)
    ok &= report("residual dweight", got_dw, w.grad)
    ok &= report("residual dbias", got_db, b.grad)
    # The residual stream's gradient updated in place: dresult's buffer
    # receives dinput + dresult.
    x2 = x.detach().clone().requires_grad_()
    w2 = w.detach().clone().requires_grad_()
    b2 = b.detach().clone().requires_grad_()
    torch.nn.functional.layer_norm(x2, (width,), w2, b2, EPS).backward(dres)
    got_dw, got_db, got_out = dev.run(
        "grad_residual_in_place", [x.detach().numpy(), w.detach().numpy(),
                                   got_mean, got_rstd, dres.numpy()],
        [(width,), (width,), shape])
    ok &= report("in place dinput + dresult", got_out, x2.grad + dres)
    ok &= report("in place dweight", got_dw, w2.grad)
    ok &= report("in place dbias", got_db, b2.grad)
    return ok


def check_sum(dev):
    """grad_sum and grad_sum_kept: the incoming gradient the sum of two
    (a mixture layer's gate and experts' input gradients), computed in the
    backward kernel, or by a launch of its own when read again after it."""
    shape, width = (201, 300), 300
    gen = torch.Generator().manual_seed(13)
    x, g1, g2, dres = (torch.randn(shape, generator=gen, dtype=torch.float64)
                       for _ in range(4))
    w = 1 + 0.1 * torch.randn(width, generator=gen, dtype=torch.float64)
    x, g1, g2, dres, w = (t.float().double() for t in (x, g1, g2, dres, w))
    b = torch.zeros(width, dtype=torch.float64)
    mean = x.mean(-1)
    rstd = 1 / torch.sqrt(x.var(-1, unbiased=False) + EPS)
    # The sum as float32 computes it.
    dy = (g1.float() + g2.float()).double()
    x.requires_grad_()
    w.requires_grad_()
    b.requires_grad_()
    torch.nn.functional.layer_norm(x, (width,), w, b, EPS).backward(dy)
    args = [x.detach().numpy(), w.detach().numpy(), mean.float().numpy(),
            rstd.float().numpy(), g1.numpy(), g2.numpy()]
    got_dw, got_db, got_out = dev.run(
        "grad_sum", args + [dres.numpy()], [(width,), (width,), shape])
    ok = report("sum dinput + dresidual", got_out, x.grad + dres)
    ok &= report("sum dweight", got_dw, w.grad)
    ok &= report("sum dbias", got_db, b.grad)
    got_dx, got_dw, got_db, got_sum = dev.run(
        "grad_sum_kept", args, [shape, (width,), (width,), shape])
    ok &= report("kept sum dinput", got_dx, x.grad)
    ok &= report("kept sum dweight", got_dw, w.grad)
    ok &= report("kept sum", got_sum, dy)
    return ok


def main():
    dev = Device(sys.argv[1])
    ok = check(dev, "small", (3, 5, 40))
    ok &= check(dev, "wide", (201, 300))
    ok &= check(dev, "tall", (1101, 40))
    ok &= check_residual(dev)
    ok &= check_sum(dev)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
