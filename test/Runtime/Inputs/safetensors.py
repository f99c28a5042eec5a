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
                                    meta:KEY=VALUE (a metadata string)
  safetensors.py truncate IN OUT N  copy IN without its last N bytes
  safetensors.py raw OUT HEADER [N [LENGTH]]
                                    write HEADER as the header (\\xNN escapes
                                    are bytes), then N zero bytes of data; the
                                    8-byte length field holds LENGTH (default:
                                    the header's length)
  safetensors.py dump FILE          print each tensor: name dtype shape values
"""
import json
import re
import struct
import sys

FORMATS = {"F32": "f", "F64": "d", "I32": "i", "I64": "q"}


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


def write(path, tensors, meta=None):
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
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


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
    elif command == "edit":
        tensors, meta = read(argv[2])
        for op in argv[4:]:
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
            elif kind == "meta":
                key, value = arg.split("=", 1)
                meta = dict(meta or {}, **{key: value})
            else:
                sys.exit("unknown edit " + op)
        write(argv[3], tensors, meta)
    elif command == "truncate":
        with open(argv[2], "rb") as f:
            data = f.read()
        with open(argv[3], "wb") as f:
            f.write(data[:len(data) - int(argv[4])])
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
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
