//===- Plot.cpp - The loss curves drawn with cairo ------------------------===//
//
// Training loss in blue and validation cross-entropy in red, on a light
// grid with round-numbered, labelled axes and a legend, drawn once with
// cairo and written twice: a compressed PNG and a vector SVG. Text is set
// in DejaVu Sans (fontconfig picks the nearest sans-serif font elsewhere).
//
//===----------------------------------------------------------------------===//

#include "mixrt/Train.h"

#include "mixrt/Error.h"
#include "mixrt/File.h"

#include <cairo-svg.h>
#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace mixrt;

namespace {

using Curve = std::vector<std::pair<int64_t, double>>;

constexpr double kWidth = 800, kHeight = 500;
constexpr double kLeft = 72, kRight = 24, kTop = 48, kBottom = 56;
constexpr const char *kFont = "DejaVu Sans";

struct Color {
  double r, g, b;
};
constexpr Color kTrainColor{0x1f / 255.0, 0x77 / 255.0, 0xb4 / 255.0};
constexpr Color kValColor{0xd6 / 255.0, 0x27 / 255.0, 0x28 / 255.0};

/// Round tick positions covering [lo, hi]: multiples of 1, 2 or 5 times a
/// power of ten, about \p wanted of them.
std::vector<double> niceTicks(double lo, double hi, int wanted) {
  double span = hi - lo;
  if (!(span > 0))
    return {lo};
  double raw = span / wanted;
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  std::vector<double> ticks;
  double first = std::ceil(lo / step);
  // By index, at most a few dozen: a step below the values' resolution
  // would not advance a running sum.
  for (int i = 0; i < 4 * wanted; ++i) {
    double t = (first + i) * step;
    if (t > hi + 1e-9 * span)
      break;
    ticks.push_back(std::abs(t) < 1e-12 * step ? 0.0 : t);
  }
  return ticks;
}

/// The digits a tick label needs at this step.
std::string formatTick(double value, double step) {
  int decimals = std::max(0, int(-std::floor(std::log10(step) + 1e-9)));
  char label[32];
  std::snprintf(label, sizeof label, "%.*f", decimals, value);
  return label;
}

void setColor(cairo_t *cr, Color c) { cairo_set_source_rgb(cr, c.r, c.g, c.b); }

/// Shows \p text anchored at (x, y): \p alignX 0 puts its left end there,
/// 0.5 its centre, 1 its right end; \p alignY 0 its top (the font's
/// ascent), 0.5 its middle, 1 its bottom (the descent).
void showText(cairo_t *cr, const std::string &text, double x, double y,
              double alignX, double alignY) {
  cairo_text_extents_t ext;
  cairo_text_extents(cr, text.c_str(), &ext);
  cairo_font_extents_t font;
  cairo_font_extents(cr, &font);
  cairo_move_to(cr, x - ext.x_advance * alignX,
                y + font.ascent - alignY * (font.ascent + font.descent));
  cairo_show_text(cr, text.c_str());
}

/// The plot, drawn on \p cr in a kWidth x kHeight box.
void drawPlot(cairo_t *cr, const Curve &train, const Curve &val) {
  double xmax = 1, ymin = INFINITY, ymax = -INFINITY;
  for (const Curve *curve : {&train, &val})
    for (auto [x, y] : *curve) {
      xmax = std::max(xmax, double(x));
      if (std::isfinite(y)) {
        ymin = std::min(ymin, y);
        ymax = std::max(ymax, y);
      }
    }
  if (!(ymin <= ymax)) {
    ymin = 0;
    ymax = 1;
  }
  // Some room above and below; for a flat curve, relative to its level
  // (an absolute pad would vanish in the rounding of large values).
  double pad =
      std::max(0.05 * (ymax - ymin), 1e-3 * std::max(1.0, std::abs(ymax)));
  ymin -= pad;
  ymax += pad;
  double plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + plotW * x / xmax; };
  auto py = [&](double y) { return kTop + plotH * (ymax - y) / (ymax - ymin); };

  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, kFont, CAIRO_FONT_SLANT_NORMAL,
                         CAIRO_FONT_WEIGHT_NORMAL);

  // Grid and tick labels.
  std::vector<double> xticks = niceTicks(0, xmax, 8);
  std::vector<double> yticks = niceTicks(ymin, ymax, 6);
  cairo_set_line_width(cr, 1);
  cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
  for (double t : xticks) {
    double x = std::round(px(t)) + 0.5;
    cairo_move_to(cr, x, kTop);
    cairo_line_to(cr, x, kTop + plotH);
  }
  for (double t : yticks) {
    double y = std::round(py(t)) + 0.5;
    cairo_move_to(cr, kLeft, y);
    cairo_line_to(cr, kLeft + plotW, y);
  }
  cairo_stroke(cr);
  cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
  cairo_set_font_size(cr, 12);
  double xstep = xticks.size() > 1 ? xticks[1] - xticks[0] : 1;
  double ystep = yticks.size() > 1 ? yticks[1] - yticks[0] : 1;
  for (double t : xticks)
    showText(cr, formatTick(t, std::max(xstep, 1.0)), px(t), kTop + plotH + 6,
             0.5, 0);
  for (double t : yticks)
    showText(cr, formatTick(t, ystep), kLeft - 8, py(t), 1, 0.5);

  // Axes and their titles.
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_move_to(cr, kLeft + 0.5, kTop);
  cairo_line_to(cr, kLeft + 0.5, kTop + plotH + 0.5);
  cairo_line_to(cr, kLeft + plotW, kTop + plotH + 0.5);
  cairo_stroke(cr);
  cairo_set_font_size(cr, 14);
  showText(cr, "step", kLeft + plotW / 2, kHeight - 8, 0.5, 1);
  cairo_save(cr);
  cairo_translate(cr, 18, kTop + plotH / 2);
  cairo_rotate(cr, -M_PI / 2);
  showText(cr, "loss (nats/token)", 0, 0, 0.5, 0.5);
  cairo_restore(cr);

  // The legend, above the plot on the right.
  struct Entry {
    const char *name;
    Color color;
    double width;
  };
  double lx = kLeft + plotW;
  for (const Entry &e : {Entry{"validation cross-entropy", kValColor, 2.5},
                         Entry{"training loss", kTrainColor, 1.5}}) {
    cairo_text_extents_t ext;
    cairo_text_extents(cr, e.name, &ext);
    lx -= ext.x_advance;
    setColor(cr, {0, 0, 0});
    showText(cr, e.name, lx, kTop / 2, 0, 0.5);
    setColor(cr, e.color);
    cairo_set_line_width(cr, e.width);
    cairo_move_to(cr, lx - 30, kTop / 2);
    cairo_line_to(cr, lx - 6, kTop / 2);
    cairo_stroke(cr);
    lx -= 52;
  }

  // The curves, clipped to the plot; a marker at each point.
  cairo_save(cr);
  cairo_rectangle(cr, kLeft, kTop, plotW, plotH);
  cairo_clip(cr);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  auto drawCurve = [&](const Curve &curve, Color color, double width,
                       double marker) {
    setColor(cr, color);
    cairo_set_line_width(cr, width);
    bool pen = false;
    for (auto [x, y] : curve) {
      if (!std::isfinite(y)) {
        pen = false;
        continue;
      }
      if (pen)
        cairo_line_to(cr, px(x), py(y));
      else
        cairo_move_to(cr, px(x), py(y));
      pen = true;
    }
    cairo_stroke(cr);
    if (marker > 0)
      for (auto [x, y] : curve)
        if (std::isfinite(y)) {
          cairo_arc(cr, px(x), py(y), marker, 0, 2 * M_PI);
          cairo_fill(cr);
        }
  };
  drawCurve(train, kTrainColor, 1.5, train.size() <= 100 ? 2 : 0);
  drawCurve(val, kValColor, 2.5, 3.5);
  cairo_restore(cr);
}

/// A cairo write callback that appends to a std::string.
cairo_status_t appendTo(void *closure, const unsigned char *data,
                        unsigned int length) {
  // No exception may cross cairo's (and libpng's) C frames.
  try {
    static_cast<std::string *>(closure)->append(
        reinterpret_cast<const char *>(data), length);
  } catch (...) {
    return CAIRO_STATUS_NO_MEMORY;
  }
  return CAIRO_STATUS_SUCCESS;
}

/// Fails naming \p path unless \p status is success.
void check(cairo_status_t status, const std::string &path) {
  if (status != CAIRO_STATUS_SUCCESS)
    fail(path, ": cannot draw the loss plot: ", cairo_status_to_string(status));
}

/// Draws on \p surface and finishes it; the bytes it wrote (SVG) or that
/// \p encode writes from it (PNG) go to \p path atomically.
void writeSurface(cairo_surface_t *surface, const std::string &path,
                  std::string &bytes, const Curve &train, const Curve &val,
                  bool png) {
  cairo_t *cr = cairo_create(surface);
  drawPlot(cr, train, val);
  cairo_status_t status = cairo_status(cr);
  cairo_destroy(cr);
  if (png && status == CAIRO_STATUS_SUCCESS)
    status = cairo_surface_write_to_png_stream(surface, appendTo, &bytes);
  cairo_surface_finish(surface);
  if (status == CAIRO_STATUS_SUCCESS)
    status = cairo_surface_status(surface);
  cairo_surface_destroy(surface);
  check(status, path);
  AtomicFileWriter out(path);
  out.write(bytes);
  out.commit();
}

} // namespace

void mixrt::writeLossPlot(const std::string &stem, const Curve &train,
                          const Curve &val) {
  std::string png;
  writeSurface(
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, int(kWidth), int(kHeight)),
      stem + ".png", png, train, val, /*png=*/true);
  std::string svg;
  writeSurface(
      cairo_svg_surface_create_for_stream(appendTo, &svg, kWidth, kHeight),
      stem + ".svg", svg, train, val, /*png=*/false);
}
