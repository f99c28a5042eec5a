#===- safetensors.py - Independent safetensors reader and writer -----------===#
#
# The lit tests' own implementation of the safetensors format on Python's
# standard library (struct, json), used to check what mix-run writes and to
# craft the files it must accept or reject.
#
#===----------------------------------------------------------------------===#
"""Usage:
  safetensors.py make OUT SPEC...   write OUT; SPEC is NAME=DTYPE:SHAPE:VALUES,
                                    SHAPE like 2x3 ("" for a scalar), VALUES
                                    comma-separated, repeated cyclically
  safetensors.py edit IN OUT OP...  copy IN with edits: drop:NAME, add:SPEC,
                                    f64:NAME (retype as F64), reshape:NAME=2x8,
                                    nan:NAME and inf:NAME (element 0),
                                    big:NAME=X (element 0 set to X),
                                    meta:KEY=VALUE (a metadata string),
                                    unmeta:KEY (a metadata string removed);
                                    a checksum_fnv1a64 in the metadata is
                                    recomputed, as a tool that knows the
                                    format would, unless an edit sets it or
                                    the op nosum keeps it as it was
  safetensors.py params CKPT OUT    write the parameters of a training
                                    checkpoint (its param.NAME tensors) as
                                    a parameter file (NAME)
  safetensors.py truncate IN OUT N  copy IN without its last N bytes
  safetensors.py flip IN OUT N      copy IN with the byte N bytes before its
                                    end (N > 0) or at offset -N xor 1
  safetensors.py checksum FILE      check FILE's checksum_fnv1a64: "checksum
                                    ok", "no checksum", or the mismatch
  safetensors.py raw OUT HEADER [N [LENGTH]]
                                    write HEADER as the header (\\xNN escapes
                                    are bytes), then N zero bytes of data; the
                                    8-byte length field holds LENGTH (default:
                                    the header's length)
  safetensors.py dump FILE          print each tensor: name dtype shape values
  safetensors.py compare A B TOL [SKIP]
                                    A and B hold the same tensors (names,
                                    dtypes, shapes) whose values agree: for
                                    each, max |a - b| <= TOL * max(1, max |a|);
                                    the values of tensors whose names match
                                    the regular expression SKIP are not
                                    compared
"""
import json
import re
import struct
import sys

FORMATS = {"F32": "f", "F64": "d", "I32": "i", "I64": "q"}
CHECKSUM_KEY = "checksum_fnv1a64"


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xffffffffffffffff
    return h


def checksum_digits(data):
    """The span of the checksum's 16 digits in the file's bytes, or None:
    the one place where the key, quoted, is followed by a colon and a
    quoted 16-character string (mix-run's runtime/lib/Support/Safetensors.cpp
    has the rule)."""
    (n,) = struct.unpack("<Q", data[:8])
    pattern = rb'"' + CHECKSUM_KEY.encode() + rb'"[ \t\n\r]*:[ \t\n\r]*"(.{16})"'
    found = [m.span(1) for m in re.finditer(pattern, data[8:8 + n], re.S)]
    if len(found) != 1:
        return None
    return found[0][0] + 8, found[0][1] + 8


def compute_checksum(data, span):
    """FNV-1a 64 of the file with the checksum's digits read as '0'."""
    begin, end = span
    return "%016x" % fnv1a64(data[:begin] + b"0" * 16 + data[end:])


def read(path):
    """Returns ({name: (dtype, shape, [values])} in file order, metadata)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    meta = header.pop("__metadata__", None)
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        fmt = FORMATS[info["dtype"]]
        count = (end - begin) // struct.calcsize(fmt)
        values = list(struct.unpack("<%d%s" % (count, fmt), body[begin:end]))
        tensors[name] = (info["dtype"], list(info["shape"]), values)
    return tensors, meta


def write(path, tensors, meta=None, stamp=False):
    """With stamp, fills in the metadata's checksum_fnv1a64."""
    header, blobs, offset = {}, [], 0
    if meta:
        header["__metadata__"] = meta
    for name, (dtype, shape, values) in tensors.items():
        blob = struct.pack("<%d%s" % (len(values), FORMATS[dtype]), *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    data = struct.pack("<Q", len(text)) + text + b"".join(blobs)
    if stamp:
        meta[CHECKSUM_KEY] = "0" * 16
        header["__metadata__"] = meta
        text = json.dumps(header).encode()
        text += b" " * (-len(text) % 8)
        data = struct.pack("<Q", len(text)) + text + b"".join(blobs)
        span = checksum_digits(data)
        data = data[:span[0]] + compute_checksum(data, span).encode() + data[span[1]:]
    with open(path, "wb") as f:
        f.write(data)


def parse_shape(text):
    return [int(d) for d in text.split("x")] if text else []


def parse_spec(spec):
    name, rest = spec.split("=", 1)
    dtype, shape, values = rest.split(":")
    shape = parse_shape(shape)
    count = 1
    for d in shape:
        count *= d
    cast = float if dtype.startswith("F") else int
    pool = [cast(v) for v in values.split(",")] if values else [0]
    return name, (dtype, shape, [pool[i % len(pool)] for i in range(count)])


def main(argv):
    command = argv[1]
    if command == "make":
        write(argv[2], dict(parse_spec(s) for s in argv[3:]))
    elif command == "params":
        tensors, _ = read(argv[2])
        write(argv[3], {name[len("param."):]: t for name, t in tensors.items()
                        if name.startswith("param.")})
    elif command == "edit":
        tensors, meta = read(argv[2])
        stamp = CHECKSUM_KEY in (meta or {})
        for op in argv[4:]:
            if op == "nosum":
                stamp = False
                continue
            kind, arg = op.split(":", 1)
            if kind == "drop":
                del tensors[arg]
            elif kind == "add":
                name, tensor = parse_spec(arg)
                tensors[name] = tensor
            elif kind == "f64":
                _, shape, values = tensors[arg]
                tensors[arg] = ("F64", shape, values)
            elif kind == "reshape":
                name, shape = arg.split("=")
                dtype, _, values = tensors[name]
                tensors[name] = (dtype, parse_shape(shape), values)
            elif kind in ("nan", "inf"):
                dtype, shape, values = tensors[arg]
                tensors[arg] = (dtype, shape, [float(kind)] + values[1:])
            elif kind == "big":
                name, value = arg.split("=")
                dtype, shape, values = tensors[name]
                tensors[name] = (dtype, shape, [float(value)] + values[1:])
            elif kind == "meta":
                key, value = arg.split("=", 1)
                meta = dict(meta or {}, **{key: value})
                if key == CHECKSUM_KEY:
                    stamp = False
            elif kind == "unmeta":
                meta = {k: v for k, v in (meta or {}).items() if k != arg}
                if arg == CHECKSUM_KEY:
                    stamp = False
            else:
                sys.exit("unknown edit " + op)
        write(argv[3], tensors, meta, stamp)
    elif command == "truncate":
        with open(argv[2], "rb") as f:
            data = f.read()
        with open(argv[3], "wb") as f:
            f.write(data[:len(data) - int(argv[4])])
    elif command == "flip":
        with open(argv[2], "rb") as f:
            data = bytearray(f.read())
        n = int(argv[4])
        data[len(data) - n if n > 0 else -n] ^= 1
        with open(argv[3], "wb") as f:
            f.write(bytes(data))
    elif command == "checksum":
        with open(argv[2], "rb") as f:
            data = f.read()
        _, meta = read(argv[2])
        if CHECKSUM_KEY not in (meta or {}):
            print("no checksum")
            return
        span = checksum_digits(data)
        if span is None:
            sys.exit("the checksum is not written as mix-run writes it")
        stored, computed = meta[CHECKSUM_KEY], compute_checksum(data, span)
        if stored == computed:
            print("checksum ok")
        else:
            print("checksum mismatch: stored %s, computed %s" % (stored, computed))
    elif command == "raw":
        header = re.sub(rb"\\x([0-9a-fA-F]{2})",
                        lambda m: bytes([int(m.group(1), 16)]),
                        argv[3].encode())
        size = int(argv[4]) if len(argv) > 4 else 0
        length = int(argv[5]) if len(argv) > 5 else len(header)
        with open(argv[2], "wb") as f:
            f.write(struct.pack("<Q", length) + header + bytes(size))
    elif command == "list":
        tensors, _ = read(argv[2])
        for name, (dtype, shape, values) in tensors.items():
            print(name, dtype, shape)
    elif command == "dump":
        tensors, _ = read(argv[2])
        for name, (dtype, shape, values) in tensors.items():
            print(name, dtype, shape, " ".join("%.9g" % v for v in values))
    elif command == "compare":
        a, _ = read(argv[2])
        b, _ = read(argv[3])
        tol = float(argv[4])
        skip = re.compile(argv[5]) if len(argv) > 5 else None
        if sorted(a) != sorted(b):
            sys.exit("compare: different tensors: %s" % sorted(set(a) ^ set(b)))
        worst, worst_name = 0.0, None
        for name, (dtype, shape, values) in a.items():
            other = b[name]
            if (dtype, shape) != other[:2]:
                sys.exit("compare: %s is %s %s in one file and %s %s in the other"
                         % (name, dtype, shape, other[0], other[1]))
            if skip and skip.fullmatch(name):
                continue
            scale = max([1.0] + [abs(v) for v in values])
            diff = max([0.0] + [abs(x - y) for x, y in zip(values, other[2])]) / scale
            if not diff <= tol:
                sys.exit("compare: %s differs by %g (relative), more than %g"
                         % (name, diff, tol))
            if diff >= worst:
                worst, worst_name = diff, name
        print("%d tensors agree within %g" % (len(a), tol))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
