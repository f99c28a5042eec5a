"""check_plot.py STEM: STEM.png and STEM.svg are the loss plot.

The PNG is decoded here (zlib and PNG's row filters, no imaging library):
800 x 500 RGB, its image data deflate-compressed (not stored blocks), with
pixels of the training curve's blue, the validation curve's red and dark
text. The SVG parses as XML with an <svg> root of the same size that draws
paths. Prints one summary line.
"""
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

stem = sys.argv[1]
data = open(stem + ".png", "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, header = 8, b"", None
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        header = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
width, height, depth, color = header[:4]
assert (width, height, depth) == (800, 500, 8), header
channels = {2: 3, 6: 4}[color]
raw = zlib.decompress(idat)
assert len(idat) < len(raw) / 4, "image data not compressed: %d of %d" % (len(idat), len(raw))

# PNG row filters (none, sub, up, average, Paeth).
stride = width * channels
rows, prev = [], bytearray(stride)
for y in range(height):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - channels] if i >= channels else 0
        b, c = prev[i], prev[i - channels] if i >= channels else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line


def count(test):
    n = 0
    for line in rows:
        for x in range(width):
            px = line[x * channels:x * channels + 3]
            # cairo's RGB24 is stored as BGRx in memory but written as RGB.
            n += test(*px)
    return n


blue = count(lambda r, g, b: abs(r - 0x1f) < 24 and abs(g - 0x77) < 24 and abs(b - 0xb4) < 24)
red = count(lambda r, g, b: abs(r - 0xd6) < 24 and abs(g - 0x27) < 24 and abs(b - 0x28) < 24)
dark = count(lambda r, g, b: r < 80 and g < 80 and b < 80)
assert blue > 200 and red > 200 and dark > 500, (blue, red, dark)

svg = ET.parse(stem + ".svg").getroot()
assert svg.tag == "{http://www.w3.org/2000/svg}svg", svg.tag
assert svg.get("width").startswith("800") and svg.get("height").startswith("500")
paths = svg.findall(".//{http://www.w3.org/2000/svg}path")
assert len(paths) > 10, len(paths)
print("plot ok: 800x500, png %d bytes compressed from %d, blue %s red %s text %s, svg %d paths"
      % (len(data), len(raw), blue > 0, red > 0, dark > 0, len(paths)))
