#!/usr/bin/env python3
"""Checks that two outputs say the same thing up to rounding: the text
between their numbers is identical, and each pair of numbers agrees to
RTOL relative (of the larger magnitude). Prints one line, or what differs
(and exits 1).

usage: close_numbers.py A.txt B.txt RTOL
"""
import re
import sys

NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def split(path):
    with open(path) as f:
        text = f.read()
    return NUMBER.split(text), [float(x) for x in NUMBER.findall(text)]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    (words_a, a), (words_b, b) = split(sys.argv[1]), split(sys.argv[2])
    rtol = float(sys.argv[3])
    if words_a != words_b:
        sys.exit("close_numbers: the texts differ beyond their numbers: %r vs %r"
                 % (words_a, words_b))
    if not a:
        sys.exit("close_numbers: %s has no numbers" % sys.argv[1])
    for i, (x, y) in enumerate(zip(a, b)):
        if abs(x - y) > rtol * max(abs(x), abs(y)):
            sys.exit("close_numbers: number %d differs: %r vs %r" % (i + 1, x, y))
    print("%d numbers agree within %g" % (len(a), rtol))


if __name__ == "__main__":
    main()
