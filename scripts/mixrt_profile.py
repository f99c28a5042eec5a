"""The report mix-run prints with MIXRT_CUDA_PROFILE=1 (docs/cuda.md, "The
profile and the H200 estimate"), as regular expressions: one heading a
report (with the NCCL all-reduces and the CUDA graphs launched, if any), its table of kernels (name, launches, bytes read, bytes written,
float operations on the CUDA cores and on the tensor cores; "?" where the
compiler made no estimate) and of product sites (site,
calls, batch x m x n x k, GFLOP), and the H200 estimate line after it.
Shared by the tests that check the report and the benchmark that
tabulates it.
"""
import re

HEADING = re.compile(
    r"^mixrt cuda profile: (?P<title>.*?): (?P<launches>\d+) kernel launches "
    r"\((?P<kernels>\d+) kernels\), (?P<read>\d+) bytes read and "
    r"(?P<written>\d+) written, (?P<kernel_gflop>[0-9.e+-]+) GFLOP of "
    r"arithmetic and (?P<mma_gflop>[0-9.e+-]+) on the tensor cores "
    r"\(compiler's estimate\); (?P<memsets>\d+) "
    r"memsets \((?P<memset_bytes>\d+) bytes\); (?P<products>\d+) products "
    r"\((?P<gflop>[0-9.e+-]+) GFLOP, (?P<product_bytes>\d+) bytes, "
    r"(?P<precision>TF32|BF16)\); copies: "
    r"(?P<h2d>\d+) to the device \((?P<h2d_bytes>\d+) bytes\), (?P<d2h>\d+) "
    r"from it \((?P<d2h_bytes>\d+) bytes\), (?P<d2d>\d+) on it "
    r"\((?P<d2d_bytes>\d+) bytes\)(?:; NCCL all-reduces: (?P<collectives>\d+) "
    r"\((?P<collective_bytes>\d+) bytes, (?P<wire_bytes>\d+) sent a rank"
    r"(?:; (?P<hidden_ms>[0-9.e+-]+) ms of them behind the backward pass)?\))?"
    r"(?:; (?P<graphs>\d+) CUDA graph launches "
    r"\((?P<graph_nodes>\d+) of the above in them\))?$")
KERNEL = re.compile(
    r"^  (\S+)\s+(\d+)\s+(-?\d+|\?)\s+(-?\d+|\?)\s+(-?\d+|\?)"
    r"\s+(-?\d+|\?)$")
SITE = re.compile(r"^  (\d+)\s+(\d+) (\d+)x(\d+)x(\d+)x(\d+)\s+([0-9.e+-]+)$")
ESTIMATE = re.compile(
    r"^mixrt cuda profile: (?P<title>.*?): H200 estimate \(a roofline sum, "
    r"not a measurement\): (?P<total>[0-9.e+-]+) ms = kernels "
    r"(?P<kernels>[0-9.e+-]+) ms .* arithmetic (?P<arithmetic>[0-9.e+-]+) "
    r"ms .* products (?P<products>[0-9.e+-]+) ms "
    r"\+ launches (?P<launches>[0-9.e+-]+) ms .* copies "
    r"(?P<copies>[0-9.e+-]+) ms [^+]*"
    r"(?:\+ all-reduces (?P<collectives>[0-9.e+-]+) ms \([^;)]*"
    r"(?:; (?P<hidden_collectives>[0-9.e+-]+) ms more behind the backward "
    r"pass)?\))?")
