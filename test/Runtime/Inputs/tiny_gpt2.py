#===- tiny_gpt2.py - A small GPT-2 vocabulary for the lit tests -------------===#
#
# Writes DIR/encoder.json and DIR/vocab.bpe in GPT-2's format: the 256 byte
# symbols of GPT-2's printable alphabet, then merges of two letters ("t h" ->
# "th", ...) until the vocabulary has SIZE entries.
#
#===----------------------------------------------------------------------===#
"""Usage: tiny_gpt2.py DIR SIZE"""
import itertools
import json
import os
import sys


def byte_alphabet():
    """GPT-2's bytes_to_unicode(): byte -> printable character."""
    printable = (list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) +
                 list(range(0xAE, 0x100)))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(0x100 + extra)
            extra += 1
    return chars


def main(argv):
    out, size = argv[1], int(argv[2])
    symbols = list(byte_alphabet().values())
    merges = []
    for a, b in itertools.product("etaoinshr", repeat=2):
        if len(symbols) >= size:
            break
        merges.append(a + " " + b)
        symbols.append(a + b)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "encoder.json"), "w", encoding="utf-8") as f:
        json.dump({s: i for i, s in enumerate(symbols)}, f, ensure_ascii=False)
    with open(os.path.join(out, "vocab.bpe"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(m + "\n" for m in merges))


if __name__ == "__main__":
    main(sys.argv)
