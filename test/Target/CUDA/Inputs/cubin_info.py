#===- cubin_info.py - What a cubin is, read from its ELF header ------------===#
#
# The lit tests' own reader of CUDA ELF files (no cuobjdump needed): checks
# the ELF header of a cubin and prints its machine, its SM version (bits
# 8-15 of e_flags in the CUDA ELF ABI since CUDA 12), and how many kernels
# it holds (its .text.<kernel> sections).
#
#===----------------------------------------------------------------------===#
"""Usage: cubin_info.py CUBIN [PTX]

Prints "ELF64 EM_CUDA sm_NN, K kernels"; with PTX, also checks that the
cubin has a kernel for each .entry of the PTX, by name."""
import re
import struct
import sys

EM_CUDA = 190


def main():
    data = open(sys.argv[1], "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit("cubin_info.py: %s is not a 64-bit ELF file" % sys.argv[1])
    machine = struct.unpack_from("<H", data, 18)[0]
    flags = struct.unpack_from("<I", data, 48)[0]
    shoff = struct.unpack_from("<Q", data, 40)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    sections = []
    for i in range(shnum):
        name, _, _, _, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        sections.append((name, offset, size))
    strtab = sections[shstrndx]
    names = []
    for name, _, _ in sections:
        start = strtab[1] + name
        names.append(data[start:data.index(b"\0", start)].decode())
    kernels = sorted(n[len(".text."):] for n in names if n.startswith(".text."))
    print("ELF64 %s sm_%d, %d kernels" % (
        "EM_CUDA" if machine == EM_CUDA else "machine %d" % machine,
        (flags >> 8) & 0xFF, len(kernels)))
    if len(sys.argv) > 2:
        entries = sorted(re.findall(r"^\.visible \.entry (\w+)\(",
                                    open(sys.argv[2]).read(), re.M))
        if entries != kernels:
            sys.exit("cubin_info.py: the cubin's kernels differ from the PTX's "
                     "entries: %s" % sorted(set(entries) ^ set(kernels))[:10])
        print("every PTX entry is a kernel of the cubin")


if __name__ == "__main__":
    main()
