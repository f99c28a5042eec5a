"""Makes and reads directories of text files for train-text-dir.test.

  text_dir.py make SRC DIR        SRC's lines over 20 files under DIR (some in
                                  a subdirectory), plus files the split skips
  text_dir.py parts DIR OUT       OUT/train.txt and OUT/val.txt: the files of
                                  DIR as the documented split assigns them
                                  (the *.txt files whose relative path's
                                  FNV-1a 64 hash is 0 mod 10 validate; the
                                  last one when none or all would),
                                  concatenated in relative-path order

Written from docs/training.md's rule, not from the runtime's code.
"""
import os
import sys


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def make(src, out):
    lines = open(src, "rb").read().split(b"\n")
    os.makedirs(os.path.join(out, "b-sub"), exist_ok=True)
    os.makedirs(os.path.join(out, ".hidden"), exist_ok=True)
    per = len(lines) // 20 + 1
    for i in range(20):
        name = ("a%02d.txt" % i) if i < 10 else os.path.join("b-sub", "c%02d.txt" % i)
        chunk = b"\n".join(lines[i * per:(i + 1) * per]) + b"\n"
        open(os.path.join(out, name), "wb").write(chunk)
    open(os.path.join(out, "notes.md"), "wb").write(b"not a text file\n")
    open(os.path.join(out, ".hidden", "h.txt"), "wb").write(b"hidden\n")


def parts(root, out):
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for f in filenames:
            if f.endswith(".txt") and not f.startswith("."):
                found.append(os.path.relpath(os.path.join(dirpath, f), root))
    found.sort(key=lambda p: p.encode())
    val = [p for p in found if fnv1a64(p) % 10 == 0]
    if len(val) in (0, len(found)):
        val = found[-1:]
    train = [p for p in found if p not in val]
    os.makedirs(out, exist_ok=True)
    for name, files in (("train.txt", train), ("val.txt", val)):
        with open(os.path.join(out, name), "wb") as f:
            for p in files:
                f.write(open(os.path.join(root, p), "rb").read())
    print("%d training files, validation: %s" % (len(train), " ".join(val)))


if __name__ == "__main__":
    {"make": make, "parts": parts}[sys.argv[1]](*sys.argv[2:])
