"""The models mixc compiles, in plain PyTorch: dense GPT-2, cMoLLM (simple,
context_aware, multi_head and adaptive gating), ParaScale and AltUp, as
docs/models.md defines them, built from a model spec or a package's
manifest and loading mix-run's parameter files and checkpoints. For
evaluating, sampling or fine-tuning a model trained with mix-run in
PyTorch; it needs nothing but torch.

    import mixmodels
    model = mixmodels.MixModel.from_package("run/model.mixpkg")
    model.load("run/checkpoint.safetensors")        # or a parameter file
    logits, loss = model(tokens, targets)          # loss: ce, aux and total
    model.save("tuned.safetensors")                 # for mix-run --params

Parameters keep mix-run's names ("h.0.mlp.kernels", ...), every matrix
(out, in) as torch.nn.Linear stores it: model.named_tensors() lists them,
model.tensor(name) gives one. Computation is in the parameters' dtype
(float32 as loaded; model.double() for float64).
"""
import json
import math
import os
import struct

import torch
import torch.nn.functional as F

__all__ = ["MixModel", "read_safetensors", "write_safetensors", "load_spec"]

_DTYPES = {"F32": (torch.float32, "f", 4), "F64": (torch.float64, "d", 8),
           "I32": (torch.int32, "i", 4), "I64": (torch.int64, "q", 8)}


def read_safetensors(path):
    """{name: tensor} of a safetensors file (F32, F64, I32, I64)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    out = {}
    for name, info in header.items():
        dtype, fmt, size = _DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        values = struct.unpack("<%d%s" % ((end - begin) // size, fmt),
                               body[begin:end])
        out[name] = torch.tensor(values, dtype=dtype).reshape(info["shape"])
    return out


def write_safetensors(path, tensors):
    """Writes {name: tensor} as float32 (integer tensors as they are)."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().cpu()
        if t.is_floating_point():
            t = t.to(torch.float32)
        code = {torch.float32: "F32", torch.int32: "I32",
                torch.int64: "I64"}[t.dtype]
        _, fmt, _ = _DTYPES[code]
        values = t.flatten().tolist()
        blob = struct.pack("<%d%s" % (len(values), fmt), *values)
        header[name] = {"dtype": code, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    os.replace(tmp, path)


def load_spec(path):
    """The model spec of a spec file, a package's manifest.json, or a
    package directory."""
    if os.path.isdir(path):
        path = os.path.join(path, "manifest.json")
    with open(path) as f:
        data = json.load(f)
    return data["spec"] if "spec" in data and "arch" not in data else data


_DEFAULTS = {
    "cmollm": {"streams": 4, "gating": "simple", "gate_heads": 4,
               "balance_alpha": 0.01},
    "parascale": {"streams": 4, "prefix_tokens": 48, "smoothing": 0.01},
    "altup": {"blocks": 2, "schedule": "alternating"},
}


class MixModel(torch.nn.Module):
    """One of the four architectures of docs/models.md, from its spec."""

    def __init__(self, spec):
        super().__init__()
        self.spec = dict(spec)
        self.arch = spec["arch"]
        if self.arch not in ("dense", "cmollm", "parascale", "altup"):
            raise ValueError("unknown arch %r" % self.arch)
        self.section = dict(_DEFAULTS.get(self.arch, {}))
        self.section.update(spec.get(self.arch, {}))
        self.V, self.P_pos = spec["vocab_size"], spec["n_positions"]
        self.L, self.d = spec["n_layer"], spec["d_model"]
        self.h, self.f = spec["n_head"], spec["d_ff"]
        self.eps = spec.get("layer_norm_eps", 1e-5)
        self._names = []
        self._params = torch.nn.ParameterDict()
        for name, shape in self._shapes():
            self._names.append(name)
            self._params[name.replace(".", "__")] = torch.nn.Parameter(
                torch.zeros(shape))

    @classmethod
    def from_package(cls, path):
        return cls(load_spec(path))

    # ---- parameters ------------------------------------------------------

    def _shapes(self):
        d, f, h, L = self.d, self.f, self.h, self.L
        out = [("wte.weight", (self.V, d)), ("wpe.weight", (self.P_pos, d))]

        def ln(p):
            out.extend([(p + ".weight", (d,)), (p + ".bias", (d,))])

        def linear(p, o, i):
            out.extend([(p + ".weight", (o, i)), (p + ".bias", (o,))])

        for l in range(L):
            p = "h.%d." % l
            ln(p + "ln_1")
            linear(p + "attn.c_attn", 3 * d, d)
            linear(p + "attn.c_proj", d, d)
            if self.arch == "parascale":
                s = self.section
                shape = (s["streams"], h, s["prefix_tokens"], d // h)
                out += [(p + "attn.prefix_k", shape),
                        (p + "attn.prefix_v", shape)]
            ln(p + "ln_2")
            if self.arch == "cmollm":
                n, gating = self.section["streams"], self.section["gating"]
                out += [(p + "mlp.kernels", (n, f, d)),
                        (p + "mlp.kernel_bias", (n, f))]
                if gating == "multi_head":
                    gh = self.section["gate_heads"]
                    out += [(p + "mlp.gate.weight", (gh, n, d // gh)),
                            (p + "mlp.gate.bias", (gh, n))]
                else:
                    linear(p + "mlp.gate", n, d)
                if gating == "context_aware":
                    linear(p + "mlp.ctx.fc1", d // 4, d)
                    linear(p + "mlp.ctx.fc2", d, d // 4)
                    ln(p + "mlp.gate_ln")
                if gating == "adaptive":
                    linear(p + "mlp.adapt.fc1", d // 4, d)
                    linear(p + "mlp.adapt.fc2", 3, d // 4)
            else:
                linear(p + "mlp.c_fc", f, d)
            linear(p + "mlp.c_proj", d, f)
            if self.arch == "altup":
                k = self.section["blocks"]
                out += [(p + "altup.predict", (k, k)),
                        (p + "altup.correct", (k,))]
        ln("ln_f")
        if self.arch == "parascale":
            n = self.section["streams"]
            linear("agg.fc1", d, n * d)
            linear("agg.fc2", n, d)
        return out

    def tensor(self, name):
        return self._params[name.replace(".", "__")]

    def named_tensors(self):
        return [(n, self.tensor(n)) for n in self._names]

    def load(self, path):
        """Loads a parameter file or a checkpoint (its param.* tensors);
        every parameter must be there with its shape, and nothing else."""
        tensors = read_safetensors(path)
        if any(n.startswith("param.") for n in tensors):
            tensors = {n[len("param."):]: t for n, t in tensors.items()
                       if n.startswith("param.")}
        missing = [n for n in self._names if n not in tensors]
        extra = sorted(set(tensors) - set(self._names))
        if missing or extra:
            raise ValueError("%s: missing %s, unexpected %s"
                             % (path, missing, extra))
        with torch.no_grad():
            for name in self._names:
                t, p = tensors[name], self.tensor(name)
                if tuple(t.shape) != tuple(p.shape):
                    raise ValueError("%s: %s has shape %s, expected %s"
                                     % (path, name, tuple(t.shape),
                                        tuple(p.shape)))
                p.copy_(t.to(p.dtype))
        return self

    def save(self, path):
        """Writes the parameters as a parameter file mix-run reads."""
        write_safetensors(path, dict(self.named_tensors()))

    # ---- the computation (docs/models.md) --------------------------------

    def _ln(self, x, p):
        return F.layer_norm(x, (self.d,), self.tensor(p + ".weight"),
                            self.tensor(p + ".bias"), self.eps)

    def _linear(self, x, p):
        return F.linear(x, self.tensor(p + ".weight"), self.tensor(p + ".bias"))

    @staticmethod
    def _gelu(u):
        return 0.5 * u * (1 + torch.tanh(math.sqrt(2 / math.pi) *
                                         (u + 0.044715 * u ** 3)))

    def _attention(self, a, l, prefix=None):
        """Causal multi-head attention of a (R, S, d); prefix: (k, v), each
        (R, h, T, dh), keys and values every query sees before its own."""
        R, S, d = a.shape
        h, dh = self.h, d // self.h
        q, k, v = self._linear(a, "h.%d.attn.c_attn" % l).split(d, dim=-1)
        q, k, v = (t.reshape(R, S, h, dh).transpose(1, 2) for t in (q, k, v))
        mask = torch.ones(S, S, dtype=torch.bool, device=a.device).tril()
        if prefix is not None:
            pk, pv = prefix
            k, v = torch.cat([pk, k], 2), torch.cat([pv, v], 2)
            mask = torch.cat([torch.ones(S, pk.shape[2], dtype=torch.bool,
                                         device=a.device), mask], 1)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
        scores = scores.masked_fill(~mask, float("-inf"))
        o = (scores.softmax(-1) @ v).transpose(1, 2).reshape(R, S, d)
        return self._linear(o, "h.%d.attn.c_proj" % l)

    def _ffn(self, m, l):
        """The FFN of layer l on m (R, S, d), and its balance term (or
        None)."""
        p = "h.%d.mlp." % l
        if self.arch != "cmollm":
            u = self._gelu(self._linear(m, p + "c_fc"))
            return self._linear(u, p + "c_proj"), None
        s = self.section
        n, gating, alpha = s["streams"], s["gating"], s["balance_alpha"]
        K, kb = self.tensor(p + "kernels"), self.tensor(p + "kernel_bias")
        R, S, d = m.shape
        count = torch.arange(1, S + 1, dtype=m.dtype, device=m.device)
        c = m.cumsum(1) / count[None, :, None]  # the causal running mean
        r, t = 1.0, 0.0
        if gating == "multi_head":
            gh = s["gate_heads"]
            W, b = self.tensor(p + "gate.weight"), self.tensor(p + "gate.bias")
            mj = m.reshape(R, S, gh, d // gh)
            g = torch.einsum("rsjc,jnc->rsjn", mj, W) + b  # (R, S, H, N)
            g = g.softmax(-1)
            fj = self.f // gh
            # Chunk j of U mixes the kernels' rows of chunk j with g^j.
            outs = [torch.einsum("rsd,ncd->nrsc", m,
                                 K[:, j * fj:(j + 1) * fj])
                    + kb[:, None, None, j * fj:(j + 1) * fj]
                    for j in range(gh)]  # each (N, R, S, f/H)
            U = torch.cat([torch.einsum("nrsc,rsn->rsc", o, g[:, :, j])
                           for j, o in enumerate(outs)], -1)
            p_k = g.mean(dim=(1, 2))  # over positions and heads: (R, N)
        else:
            x = m
            if gating == "context_aware":
                mod = torch.sigmoid(self._linear(
                    F.relu(self._linear(c, p + "ctx.fc1")), p + "ctx.fc2"))
                x = self._ln(m * mod, p + "gate_ln")
            logits = self._linear(x, p + "gate")
            if gating == "adaptive":
                a = self._linear(F.relu(self._linear(c, p + "adapt.fc1")),
                                 p + "adapt.fc2")
                sens = 2 * torch.sigmoid(a[..., 0:1])
                t = torch.tanh(a[..., 1:2])
                r = 2 * torch.sigmoid(a[..., 2:3])
                logits = sens * logits
            g = logits.softmax(-1)  # (R, S, N)
            # U = sum_k g_k (m @ K_k^T + kernel_bias_k), the mixture of
            # linear experts (equal to m @ (sum_k g_k K_k)^T + ...).
            experts = torch.einsum("rsd,nfd->nrsf", m, K)
            U = torch.einsum("nrsf,rsn->rsf", experts, g) + g @ kb
            p_k = g.mean(dim=1)
        down = self.tensor(p + "c_proj.weight")
        out = r * (self._gelu(U + t) @ down.T) + self.tensor(p + "c_proj.bias")
        aux = (alpha * n * (p_k ** 2).sum(-1)).mean()
        return out, aux

    def _block(self, x, l, prefix=None):
        x = x + self._attention(self._ln(x, "h.%d.ln_1" % l), l, prefix)
        ffn, aux = self._ffn(self._ln(x, "h.%d.ln_2" % l), l)
        return x + ffn, aux

    def forward(self, tokens, targets=None):
        """logits (B, S, V), and with targets the loss terms
        {"ce", "aux", "loss"} (loss = ce + the layers' mean balance term)."""
        B, S = tokens.shape
        wte = self.tensor("wte.weight")
        x = wte[tokens] + self.tensor("wpe.weight")[:S]
        auxes = []
        if self.arch == "parascale":
            n = self.section["streams"]
            x = x.repeat(n, 1, 1)  # stream p's sequence b at row p B + b
            for l in range(self.L):
                pk = self.tensor("h.%d.attn.prefix_k" % l)
                pv = self.tensor("h.%d.attn.prefix_v" % l)
                # Row p B + b sees stream p's prefixes.
                prefix = (pk.repeat_interleave(B, 0), pv.repeat_interleave(B, 0))
                x, _ = self._block(x, l, prefix)
            z = self._ln(x, "ln_f").reshape(n, B, S, self.d)
            cat = z.permute(1, 2, 0, 3).reshape(B, S, n * self.d)
            w = self._linear(F.silu(self._linear(cat, "agg.fc1")), "agg.fc2")
            w = w.softmax(-1)
            sm = self.section["smoothing"]
            w = (1 - sm) * w + sm / n
            logits = torch.einsum("bsp,pbsd->bsd", w, z) @ wte.T
        elif self.arch == "altup":
            k = self.section["blocks"]
            xs = [x] * k
            for l in range(self.L):
                j = l % k if self.section["schedule"] == "alternating" else 0
                pred = self.tensor("h.%d.altup.predict" % l)
                corr = self.tensor("h.%d.altup.correct" % l)
                xhat = [sum(pred[i, q] * xs[q] for q in range(k))
                        for i in range(k)]
                xtil, _ = self._block(xs[j], l)
                xs = [xhat[i] + corr[i] * (xtil - xhat[j]) for i in range(k)]
            logits = self._ln(sum(xs) / k, "ln_f") @ wte.T
        else:
            for l in range(self.L):
                x, aux = self._block(x, l)
                if aux is not None:
                    auxes.append(aux)
            logits = self._ln(x, "ln_f") @ wte.T
        if targets is None:
            return logits
        ce = F.cross_entropy(logits.reshape(B * S, self.V),
                             targets.reshape(B * S))
        aux = torch.stack(auxes).mean() if auxes else ce.new_zeros(())
        return logits, {"ce": ce, "aux": aux, "loss": ce + aux}
