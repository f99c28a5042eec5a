#!/usr/bin/env python3
"""Checks that every kernel launch passes as many arguments as its kernel
takes: the parameter count of each `.entry` in the PTX against the number of
arguments of each `gpu.launch_func` of it in the host IR.

usage: kernel_params.py KERNELS.ptx HOST.mlir
Prints one line per mismatch and exits 1, or a summary and exits 0.
"""
import re
import sys


def ptx_entries(text):
    entries = {}
    for m in re.finditer(r"\.entry\s+(\w+)\(([^)]*)\)", text):
        entries[m.group(1)] = len(re.findall(r"\.param\b", m.group(2)))
    return entries


def launches(text):
    for m in re.finditer(r"gpu\.launch_func\s+@\w+::@(\w+)[^\n]*?args\(([^\n]*)\)\s*$",
                         text, re.M):
        yield m.group(1), m.group(2).count(" : ")


def main():
    ptx = open(sys.argv[1]).read()
    host = open(sys.argv[2]).read()
    entries = ptx_entries(ptx)
    bad = 0
    count = 0
    for name, args in launches(host):
        count += 1
        if name not in entries:
            print(f"launch of {name}: no such .entry in the PTX")
            bad += 1
        elif entries[name] != args:
            print(f"launch of {name} passes {args} arguments, "
                  f".entry {name} takes {entries[name]}")
            bad += 1
    if count == 0:
        print("no launches found")
        return 1
    if bad:
        return 1
    print(f"{count} launches of {len(entries)} kernels: argument counts match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
