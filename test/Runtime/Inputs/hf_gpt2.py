#!/usr/bin/env python3
#===- hf_gpt2.py - GPT-2 as Hugging Face stores it, in float64 -----------===#
#
# An independent GPT-2 forward written against Hugging Face's layout (what
# transformers' GPT2LMHeadModel computes, from its config.json and
# model.safetensors), in PyTorch float64, without transformers: Conv1D
# layers y = x W + b with W stored [in, out], c_attn's output split into
# q, k and v (each n_embd wide, heads contiguous within), causal softmax
# attention scaled by 1/sqrt(head dim), gelu_new (the tanh form), pre-norm
# blocks with residuals, ln_f, and the head tied to wte. Reads the
# safetensors file with the tests' own reader. Prints the mean
# cross-entropy of the batch's targets.
#
# With `make`, writes such a checkpoint instead, with random weights, as a
# checkpoint made outside the project would be: config.json and
# model.safetensors; with --legacy, as the original GPT-2 checkpoints on
# the Hugging Face hub are, the names without "transformer.", the tied
# lm_head.weight stored, and each layer's attn.bias mask buffer.
#
# usage: hf_gpt2.py DIR BATCH.safetensors
#        hf_gpt2.py make DIR VOCAB POSITIONS N_EMBD N_LAYER N_HEAD N_INNER
#                   SEED [--legacy]
#
#===----------------------------------------------------------------------===#
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors  # noqa: E402  (the tests' reader, not the PyPI package)


def fail(message):
    sys.exit("hf_gpt2: " + message)


def make(directory, V, P, d, L, H, d_ff, seed, legacy):
    g = torch.Generator().manual_seed(seed)
    prefix = "" if legacy else "transformer."
    tensors = {}

    def add(name, *shape, scale=0.02, offset=0.0):
        t = torch.randn(*shape, generator=g, dtype=torch.float64) * scale
        tensors[name] = ("F32", list(shape), (t + offset).flatten().tolist())

    add(prefix + "wte.weight", V, d, scale=0.1)
    add(prefix + "wpe.weight", P, d, scale=0.05)
    for i in range(L):
        p = prefix + "h.%d." % i
        add(p + "ln_1.weight", d, scale=0.1, offset=1.0)
        add(p + "ln_1.bias", d)
        add(p + "attn.c_attn.weight", d, 3 * d, scale=0.1)
        add(p + "attn.c_attn.bias", 3 * d)
        add(p + "attn.c_proj.weight", d, d, scale=0.1)
        add(p + "attn.c_proj.bias", d)
        add(p + "ln_2.weight", d, scale=0.1, offset=1.0)
        add(p + "ln_2.bias", d)
        add(p + "mlp.c_fc.weight", d, d_ff, scale=0.1)
        add(p + "mlp.c_fc.bias", d_ff)
        add(p + "mlp.c_proj.weight", d_ff, d, scale=0.1)
        add(p + "mlp.c_proj.bias", d)
        if legacy:
            mask = torch.ones(P, P).tril().reshape(1, 1, P, P)
            tensors[p + "attn.bias"] = ("F32", [1, 1, P, P],
                                        mask.flatten().tolist())
    add(prefix + "ln_f.weight", d, scale=0.1, offset=1.0)
    add(prefix + "ln_f.bias", d)
    if legacy:
        tensors["lm_head.weight"] = tensors[prefix + "wte.weight"]
    os.makedirs(directory, exist_ok=True)
    safetensors.write(os.path.join(directory, "model.safetensors"), tensors,
                      meta={"format": "pt"})
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
              "vocab_size": V, "n_positions": P, "n_ctx": P, "n_embd": d,
              "n_layer": L, "n_head": H, "n_inner": d_ff,
              "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
              "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1,
              "summary_type": "cls_index", "transformers_version": "4.46.0"}
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


def main():
    if sys.argv[1] == "make":
        args = [int(a) for a in sys.argv[3:10]]
        make(sys.argv[2], *args, legacy="--legacy" in sys.argv[10:])
        return
    directory, batch_path = sys.argv[1], sys.argv[2]
    config = json.load(open(os.path.join(directory, "config.json")))
    if config.get("architectures") != ["GPT2LMHeadModel"] or \
            config.get("model_type") != "gpt2":
        fail("config.json is not a GPT2LMHeadModel's: %r" % config)
    if config.get("activation_function") != "gelu_new" or \
            not config.get("tie_word_embeddings", True):
        fail("expected gelu_new and a tied head: %r" % config)
    tensors, meta = safetensors.read(os.path.join(directory,
                                                  "model.safetensors"))
    if (meta or {}).get("format") != "pt":
        fail("model.safetensors lacks transformers' metadata format=pt")
    d, n_head, L = config["n_embd"], config["n_head"], config["n_layer"]
    d_ff = config["n_inner"] or 4 * d
    V, P = config["vocab_size"], config["n_positions"]
    eps = config["layer_norm_epsilon"]

    def param(name, shape):
        if name not in tensors:
            fail("model.safetensors has no %s" % name)
        dtype, got, values = tensors[name]
        if dtype != "F32" or got != shape:
            fail("%s is %s %s, expected F32 %s" % (name, dtype, got, shape))
        return torch.tensor(values, dtype=torch.float64).reshape(shape)

    # Checkpoints from the hub lack the prefix and hold the tied head and
    # the attention's mask buffers too.
    if "wte.weight" in tensors:
        tensors = {("transformer." + n if n != "lm_head.weight" else n): t
                   for n, t in tensors.items()
                   if not n.endswith(".attn.bias")}
    tensors.pop("lm_head.weight", None)
    expected = 3 + 12 * L + 1  # wte, wpe, ln_f's two; 12 a block
    if len(tensors) != expected:
        fail("%d tensors, expected %d: %s" % (len(tensors), expected,
                                               sorted(tensors)))
    wte, wpe = param("transformer.wte.weight", [V, d]), \
        param("transformer.wpe.weight", [P, d])

    batch, _ = safetensors.read(batch_path)
    B, S = batch["tokens"][1]
    tokens = torch.tensor(batch["tokens"][2]).reshape(B, S)
    targets = torch.tensor(batch["targets"][2]).reshape(B, S)

    def layer_norm(x, prefix):
        w, b = param(prefix + ".weight", [d]), param(prefix + ".bias", [d])
        return torch.nn.functional.layer_norm(x, (d,), w, b, eps)

    def conv1d(x, prefix, n_in, n_out):
        return x @ param(prefix + ".weight", [n_in, n_out]) + \
            param(prefix + ".bias", [n_out])

    def gelu_new(x):
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) *
                                         (x + 0.044715 * x ** 3)))

    hd = d // n_head
    causal = torch.ones(S, S, dtype=torch.bool).tril()
    x = wte[tokens] + wpe[torch.arange(S)]
    for i in range(L):
        p = "transformer.h.%d." % i
        qkv = conv1d(layer_norm(x, p + "ln_1"), p + "attn.c_attn", d, 3 * d)
        q, k, v = (t.reshape(B, S, n_head, hd).transpose(1, 2)
                   for t in qkv.split(d, dim=-1))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        scores = scores.masked_fill(~causal, float("-inf"))
        a = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, S, d)
        x = x + conv1d(a, p + "attn.c_proj", d, d)
        h = gelu_new(conv1d(layer_norm(x, p + "ln_2"), p + "mlp.c_fc", d,
                            d_ff))
        x = x + conv1d(h, p + "mlp.c_proj", d_ff, d)
    logits = layer_norm(x, "transformer.ln_f") @ wte.T
    ce = torch.nn.functional.cross_entropy(logits.reshape(B * S, V),
                                           targets.reshape(B * S))
    print("ce %.9g" % ce.item())


if __name__ == "__main__":
    main()
