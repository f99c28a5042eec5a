#!/usr/bin/env python3
"""Checks python/mixmodels.py against mix-run grad: builds the model of a
package (PKG/manifest.json), loads a parameter file or checkpoint, and
computes on a batch, in float64, the loss terms and every parameter's
gradient (autograd), which must agree with mix-run grad's output within
RTOL (the loss terms relative, each gradient relative to its largest
magnitude). Prints one line.

usage: mixmodels_check.py PKG PARAMS BATCH GRAD RTOL"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "python"))
import mixmodels  # noqa: E402


def main():
    pkg, params, batch, grad, rtol = sys.argv[1:6]
    rtol = float(rtol)
    model = mixmodels.MixModel.from_package(pkg).double()
    model.load(params)
    b = mixmodels.read_safetensors(batch)
    _, terms = model(b["tokens"].long(), b["targets"].long())
    terms["loss"].backward()
    want = mixmodels.read_safetensors(grad)
    for key in ("loss", "ce", "aux"):
        a, e = terms[key].item(), want[key].item()
        if abs(a - e) > rtol * max(abs(e), 1e-6):
            sys.exit("mixmodels_check: %s is %r, mix-run grad's %r"
                     % (key, a, e))
    worst = 0.0
    for name, p in model.named_tensors():
        e = want["grad." + name].double()
        scale = max(e.abs().max().item(), 1e-12)
        err = (p.grad - e).abs().max().item() / scale
        worst = max(worst, err)
        if err > rtol:
            sys.exit("mixmodels_check: grad.%s differs by %.3g of its largest"
                     " magnitude" % (name, err))
    print("%s: loss, ce, aux and %d gradients agree (worst %.1e)"
          % (model.arch + ("/" + model.section["gating"]
                           if model.arch == "cmollm" else ""),
             len(model.named_tensors()), worst))


if __name__ == "__main__":
    main()
