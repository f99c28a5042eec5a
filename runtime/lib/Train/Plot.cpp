//===- Plot.cpp - A PNG line plot of the loss curves ----------------------===//
//
// A tiny rasteriser and PNG encoder (stored deflate blocks, no external
// library): training loss in blue, validation cross-entropy in red, on a
// light grid.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Train.h"

#include "mixrt/Error.h"
#include "mixrt/File.h"

#include <algorithm>
#include <cmath>

using namespace mixrt;

namespace {
struct Canvas {
  int width, height;
  std::vector<uint8_t> rgb;
  Canvas(int w, int h) : width(w), height(h), rgb(size_t(w) * h * 3, 255) {}

  void set(int x, int y, uint32_t color) {
    if (x < 0 || y < 0 || x >= width || y >= height)
      return;
    uint8_t *p = &rgb[(size_t(y) * width + x) * 3];
    p[0] = color >> 16;
    p[1] = color >> 8;
    p[2] = color;
  }
  void line(double x0, double y0, double x1, double y1, uint32_t color,
            int thick = 1) {
    int n = int(std::max(std::abs(x1 - x0), std::abs(y1 - y0))) + 1;
    for (int i = 0; i <= n; ++i) {
      double t = double(i) / n;
      int x = int(std::lround(x0 + t * (x1 - x0)));
      int y = int(std::lround(y0 + t * (y1 - y0)));
      for (int dx = -thick / 2; dx <= thick / 2; ++dx)
        for (int dy = -thick / 2; dy <= thick / 2; ++dy)
          set(x + dx, y + dy, color);
    }
  }
};

uint32_t crc32(const uint8_t *data, size_t n, uint32_t crc = 0) {
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k)
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

void put32(std::string &out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8)
    out.push_back(char((v >> s) & 0xff));
}

void chunk(std::string &out, const char *type, const std::string &data) {
  put32(out, uint32_t(data.size()));
  std::string body = std::string(type, 4) + data;
  out += body;
  put32(out,
        crc32(reinterpret_cast<const uint8_t *>(body.data()), body.size()));
}

std::string encodePNG(const Canvas &c) {
  // Raw scanlines (filter 0), wrapped in zlib with stored blocks.
  std::string raw;
  for (int y = 0; y < c.height; ++y) {
    raw.push_back(0);
    raw.append(reinterpret_cast<const char *>(&c.rgb[size_t(y) * c.width * 3]),
               size_t(c.width) * 3);
  }
  std::string z{char(0x78), char(0x01)};
  for (size_t off = 0; off < raw.size(); off += 65535) {
    size_t len = std::min<size_t>(65535, raw.size() - off);
    z.push_back(off + len == raw.size() ? 1 : 0);
    z.push_back(char(len & 0xff));
    z.push_back(char(len >> 8));
    z.push_back(char(~len & 0xff));
    z.push_back(char((~len >> 8) & 0xff));
    z.append(raw, off, len);
  }
  uint32_t a = 1, b = 0;
  for (unsigned char ch : raw) {
    a = (a + ch) % 65521;
    b = (b + a) % 65521;
  }
  put32(z, (b << 16) | a);
  std::string png = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  put32(ihdr, uint32_t(c.width));
  put32(ihdr, uint32_t(c.height));
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);
  chunk(png, "IHDR", ihdr);
  chunk(png, "IDAT", z);
  chunk(png, "IEND", "");
  return png;
}
} // namespace

void mixrt::writeLossPlot(const std::string &path,
                          const std::vector<std::pair<int64_t, double>> &train,
                          const std::vector<std::pair<int64_t, double>> &val) {
  const int w = 800, h = 500, margin = 40;
  Canvas c(w, h);
  double xmax = 1, ymin = 1e30, ymax = -1e30;
  for (const auto *series : {&train, &val})
    for (auto [x, y] : *series) {
      xmax = std::max(xmax, double(x));
      if (std::isfinite(y)) {
        ymin = std::min(ymin, y);
        ymax = std::max(ymax, y);
      }
    }
  if (ymin > ymax) {
    ymin = 0;
    ymax = 1;
  }
  double pad = 0.05 * (ymax - ymin + 1e-9);
  ymin -= pad;
  ymax += pad;
  auto px = [&](double x) { return margin + (w - 2 * margin) * x / xmax; };
  auto py = [&](double y) {
    return h - margin - (h - 2 * margin) * (y - ymin) / (ymax - ymin);
  };
  for (int i = 0; i <= 10; ++i) {
    double gx = margin + (w - 2 * margin) * i / 10.0;
    double gy = margin + (h - 2 * margin) * i / 10.0;
    c.line(gx, margin, gx, h - margin, 0xe0e0e0);
    c.line(margin, gy, w - margin, gy, 0xe0e0e0);
  }
  c.line(margin, h - margin, w - margin, h - margin, 0x000000);
  c.line(margin, margin, margin, h - margin, 0x000000);
  auto draw = [&](const std::vector<std::pair<int64_t, double>> &s,
                  uint32_t color, int thick) {
    for (size_t i = 1; i < s.size(); ++i)
      c.line(px(s[i - 1].first), py(s[i - 1].second), px(s[i].first),
             py(s[i].second), color, thick);
    for (auto [x, y] : s)
      c.line(px(x) - 2, py(y), px(x) + 2, py(y), color, thick);
  };
  draw(train, 0x1f77b4, 1);
  draw(val, 0xd62728, 3);
  AtomicFileWriter out(path);
  out.write(encodePNG(c));
  out.commit();
}
