//===- Plot.cpp - A PNG line plot of the loss curves ----------------------===//
//
// A tiny rasteriser, a 5x7 bitmap font and a PNG encoder (stored deflate
// blocks, no external library): training loss in blue, validation
// cross-entropy in red, on a light grid with labelled axes and a legend.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Train.h"

#include "mixrt/Error.h"
#include "mixrt/File.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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

/// 5x7 glyphs, one row of five bits a byte, for the characters the plot's
/// labels use.
struct Glyph {
  char c;
  uint8_t rows[7];
};
constexpr Glyph kFont[] = {
    {'0', {14, 17, 19, 21, 25, 17, 14}}, {'1', {4, 12, 4, 4, 4, 4, 14}},
    {'2', {14, 17, 1, 2, 4, 8, 31}},     {'3', {31, 2, 4, 2, 1, 17, 14}},
    {'4', {2, 6, 10, 18, 31, 2, 2}},     {'5', {31, 16, 30, 1, 1, 17, 14}},
    {'6', {6, 8, 16, 30, 17, 17, 14}},   {'7', {31, 1, 2, 4, 8, 8, 8}},
    {'8', {14, 17, 17, 14, 17, 17, 14}}, {'9', {14, 17, 17, 15, 1, 2, 12}},
    {'.', {0, 0, 0, 0, 0, 12, 12}},      {'-', {0, 0, 0, 31, 0, 0, 0}},
    {'(', {2, 4, 8, 8, 8, 4, 2}},        {')', {8, 4, 2, 2, 2, 4, 8}},
    {'a', {0, 0, 14, 1, 15, 17, 15}},    {'e', {0, 0, 14, 17, 31, 16, 14}},
    {'i', {4, 0, 12, 4, 4, 4, 14}},      {'l', {12, 4, 4, 4, 4, 4, 14}},
    {'n', {0, 0, 22, 25, 17, 17, 17}},   {'o', {0, 0, 14, 17, 17, 17, 14}},
    {'p', {0, 0, 30, 17, 30, 16, 16}},   {'r', {0, 0, 22, 25, 16, 16, 16}},
    {'s', {0, 0, 14, 16, 14, 1, 30}},    {'t', {8, 8, 28, 8, 8, 9, 6}},
    {'v', {0, 0, 17, 17, 17, 10, 4}},    {'C', {14, 17, 16, 16, 16, 17, 14}},
    {'E', {31, 16, 16, 30, 16, 16, 31}},
};

/// Draws `text` with its top-left corner at (x, y), `scale` pixels a dot;
/// characters without a glyph are spaces. Returns the width drawn.
int drawText(Canvas &c, int x, int y, const std::string &text, uint32_t color,
             int scale = 1) {
  for (size_t i = 0; i < text.size(); ++i) {
    for (const Glyph &g : kFont) {
      if (g.c != text[i])
        continue;
      for (int row = 0; row < 7; ++row)
        for (int col = 0; col < 5; ++col)
          if (g.rows[row] & (16 >> col))
            for (int dy = 0; dy < scale; ++dy)
              for (int dx = 0; dx < scale; ++dx)
                c.set(x + int(i) * 6 * scale + col * scale + dx,
                      y + row * scale + dy, color);
    }
  }
  return int(text.size()) * 6 * scale;
}

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
  const int w = 800, h = 500, left = 70, right = 20, top = 40, bottom = 50;
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
  auto px = [&](double x) { return left + (w - left - right) * x / xmax; };
  auto py = [&](double y) {
    return h - bottom - (h - top - bottom) * (y - ymin) / (ymax - ymin);
  };
  char label[32];
  for (int i = 0; i <= 10; ++i) {
    double gx = left + (w - left - right) * i / 10.0;
    double gy = top + (h - top - bottom) * i / 10.0;
    c.line(gx, top, gx, h - bottom, 0xe0e0e0);
    c.line(left, gy, w - right, gy, 0xe0e0e0);
    if (i % 2)
      continue;
    // Tick labels: steps below the x axis, losses left of the y axis.
    std::snprintf(label, sizeof label, "%.0f", xmax * i / 10.0);
    int width = int(std::string(label).size()) * 6;
    drawText(c, int(gx) - width / 2, h - bottom + 6, label, 0x000000);
    std::snprintf(label, sizeof label, "%.2f",
                  ymax - (ymax - ymin) * i / 10.0);
    width = int(std::string(label).size()) * 6;
    drawText(c, left - 6 - width, int(gy) - 3, label, 0x000000);
  }
  c.line(left, h - bottom, w - right, h - bottom, 0x000000);
  c.line(left, top, left, h - bottom, 0x000000);
  drawText(c, (left + w - right) / 2 - 24, h - bottom + 22, "step", 0x000000,
           2);
  drawText(c, 6, 8, "loss (nats)", 0x000000, 2);
  // The legend, top right.
  int lx = w - right - 290;
  c.line(lx, 16, lx + 24, 16, 0x1f77b4, 1);
  drawText(c, lx + 30, 10, "train loss", 0x1f77b4, 2);
  c.line(lx + 170, 16, lx + 194, 16, 0xd62728, 3);
  drawText(c, lx + 200, 10, "val CE", 0xd62728, 2);
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
