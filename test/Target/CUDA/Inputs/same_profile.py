#!/usr/bin/env python3
"""Compares two MIXRT_CUDA_PROFILE reports (mix-run's stderr) of the same
run: one computed, one counted only (MIXEMU_COUNT_ONLY=1). Every report's
heading (launches, kernels, the compiler's bytes, memsets, products and
their GFLOP, copies each way with their bytes), its tables (launches by
kernel, products by site) and its H200 estimate must be the same, line for
line; each must hold at least one report. Prints one line a report with
its counts, then "identical".

usage: same_profile.py COMPUTED.txt COUNTED.txt
"""
import sys

from check_profile import HEADING


def profile(path):
    """The profile's lines: its headings, their tables and estimates."""
    lines = []
    inside = False
    for line in open(path).read().splitlines():
        if line.startswith("mixrt cuda profile: "):
            lines.append(line)
            inside = True
        elif inside and line.startswith("  "):
            lines.append(line)
        else:
            inside = False
    return lines


def main():
    computed, counted = profile(sys.argv[1]), profile(sys.argv[2])
    headings = [HEADING.match(line) for line in computed]
    headings = [h for h in headings if h]
    if not headings:
        sys.exit("same_profile: no profile in " + sys.argv[1])
    for i in range(max(len(computed), len(counted))):
        a = computed[i] if i < len(computed) else "(nothing)"
        b = counted[i] if i < len(counted) else "(nothing)"
        if a != b:
            sys.exit(f"same_profile: line {i + 1} of the profile differs:\n"
                     f"  computed: {a}\n  counted:  {b}")
    for h in headings:
        print(f"{h['title']}: {h['launches']} launches, {h['products']} "
              f"products ({h['gflop']} GFLOP), {h['h2d']} + {h['d2h']} + "
              f"{h['d2d']} copies")
    print(f"identical: {len(headings)} reports, {len(computed)} lines")


if __name__ == "__main__":
    main()
