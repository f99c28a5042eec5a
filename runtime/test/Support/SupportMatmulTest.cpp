//===- SupportMatmulTest.cpp - The packages' matrix products, on data -----===//
//
// Links the C support code every CPU package is compiled with
// (runtime/support/CPUSupport.c), calls its matrix-product entry points on
// views of every layout the lowering produces (row-major and transposed
// operands, views with no unit stride, batches, a bias, accumulate and
// overwrite) through each routine (oneDNN's matmul primitive, its sgemm,
// the loops), and checks every result against a double-precision triple
// loop.
//
//===----------------------------------------------------------------------===//

#include "mixrt/PackageABI.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

/// The support code's entry points under test, as PackageABI.h declares
/// them (the library is linked into this test, compiled from
/// runtime/support/CPUSupport.c as mixc compiles it into every package).
struct SupportLibrary {
  static SupportLibrary &get() {
    static SupportLibrary library;
    return library;
  }
  std::string error;
  decltype(&mixrt_matmul) matmul = mixrt_matmul,
                          matmulSet = mixrt_matmul_set;
  decltype(&mixrt_matmul_bias) matmulBias = mixrt_matmul_bias;
  decltype(&mixrt_batch_matmul) batchMatmul = mixrt_batch_matmul,
                                batchMatmulSet = mixrt_batch_matmul_set;
  decltype(&mixrt_matmul_bf16) matmulBF16 = mixrt_matmul_bf16,
                               matmulSetBF16 = mixrt_matmul_set_bf16;
  decltype(&mixrt_matmul_bias_bf16) matmulBiasBF16 = mixrt_matmul_bias_bf16;
};

/// A (rows x cols) view of `data`: element (i, j) at offset + i*s0 + j*s1.
struct View {
  std::vector<float> data;
  int64_t offset = 0, s0 = 0, s1 = 0;
  float &at(int64_t i, int64_t j) { return data[offset + i * s0 + j * s1]; }
};

/// The bf16 value of `x` rounded toward zero, as a float (exact) and as
/// its 16 bits (the high half of the float's).
float toBF16Value(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits &= 0xffff0000u;
  std::memcpy(&x, &bits, sizeof bits);
  return x;
}
uint16_t bf16Bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return uint16_t(bits >> 16);
}

/// Lays out a (rows x cols) view: row-major, transposed (column-major), or
/// with no unit stride (every other element of a row-major array, which no
/// BLAS routine takes), at an offset, in an array that holds `fill`
/// wherever the view does not reach.
enum class Layout { RowMajor, Transposed, Strided };
View makeView(int64_t rows, int64_t cols, Layout layout, float fill) {
  View v;
  v.offset = 3;
  switch (layout) {
  case Layout::RowMajor:
    v.s0 = cols + 2, v.s1 = 1; // a padded leading dimension
    break;
  case Layout::Transposed:
    v.s0 = 1, v.s1 = rows + 1;
    break;
  case Layout::Strided:
    v.s0 = 2 * cols + 1, v.s1 = 2;
    break;
  }
  v.data.assign(v.offset + (rows - 1) * v.s0 + (cols - 1) * v.s1 + 8, fill);
  return v;
}

struct Case {
  int64_t m, n, k;
  Layout a, b;
};

/// C += A B, C = A B, C = A B + bias with a contiguous bias, and with a
/// bias of stride 2.
enum class Form { Accumulate, Overwrite, Bias, StridedBias };

/// Runs C = A B (+ C, + bias) through the support code twice (the first
/// call makes the site's primitive or picks its routine, the second reuses
/// it) and compares with a double-precision product. `mode` is
/// MIXRT_MATMUL ("" for the default choice). With `bf16`, A and B are
/// passed as bf16 (the _bf16 entry points), their values rounded to bf16
/// first so that the reference uses the same ones.
void check(const Case &c, Form form, const char *mode, int64_t site,
           bool bf16 = false) {
  SupportLibrary &lib = SupportLibrary::get();
  ASSERT_EQ(lib.error, "");
  std::mt19937 rng{static_cast<unsigned>(site)};
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  View a = makeView(c.m, c.k, c.a, NAN), b = makeView(c.k, c.n, c.b, NAN);
  // Overwriting forms must not read C: NaN there would show.
  View out = makeView(c.m, c.n, Layout::RowMajor,
                      form == Form::Accumulate ? 0.0f : NAN);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.k; ++j)
      a.at(i, j) = dist(rng);
  for (int64_t i = 0; i < c.k; ++i)
    for (int64_t j = 0; j < c.n; ++j)
      b.at(i, j) = dist(rng);
  // The bf16 copies of A and B, laid out as the f32 ones (NaN padding
  // stays NaN).
  std::vector<uint16_t> a16, b16;
  if (bf16) {
    for (View *v : {&a, &b})
      for (float &x : v->data)
        x = toBF16Value(x);
    for (float x : a.data)
      a16.push_back(bf16Bits(x));
    for (float x : b.data)
      b16.push_back(bf16Bits(x));
  }
  const int64_t biasStride = form == Form::StridedBias ? 2 : 1;
  std::vector<float> bias(2 * c.n, NAN);
  for (int64_t j = 0; j < c.n; ++j)
    bias[biasStride * j] = dist(rng);
  std::vector<float> start(c.m * c.n);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j)
      if (form == Form::Accumulate)
        out.at(i, j) = start[i * c.n + j] = dist(rng);

  if (*mode)
    setenv("MIXRT_MATMUL", mode, 1);
  else
    unsetenv("MIXRT_MATMUL");
  for (int call = 0; call < 2; ++call) {
    // The second call starts from the same C (NaN where C is not read).
    if (call == 1)
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j)
          out.at(i, j) = form == Form::Accumulate ? start[i * c.n + j] : NAN;
    float *pa = a.data.data(), *pb = b.data.data(), *pc = out.data.data();
    if (bf16) {
      uint16_t *qa = a16.data(), *qb = b16.data();
      if (form == Form::Accumulate || form == Form::Overwrite)
        (form == Form::Accumulate ? lib.matmulBF16 : lib.matmulSetBF16)(
            site, qa, a.offset, c.m, c.k, a.s0, a.s1, qb, b.offset, c.k, c.n,
            b.s0, b.s1, pc, out.offset, c.m, c.n, out.s0, out.s1);
      else
        lib.matmulBiasBF16(site, qa, a.offset, c.m, c.k, a.s0, a.s1, qb,
                           b.offset, c.k, c.n, b.s0, b.s1, pc, out.offset, c.m,
                           c.n, out.s0, out.s1, bias.data(), 0, c.n,
                           biasStride);
    } else {
      switch (form) {
    case Form::Accumulate:
    case Form::Overwrite:
      (form == Form::Accumulate ? lib.matmul : lib.matmulSet)(
          site, pa, a.offset, c.m, c.k, a.s0, a.s1, pb, b.offset, c.k, c.n,
          b.s0, b.s1, pc, out.offset, c.m, c.n, out.s0, out.s1);
      break;
    case Form::Bias:
    case Form::StridedBias:
      lib.matmulBias(site, pa, a.offset, c.m, c.k, a.s0, a.s1, pb, b.offset,
                     c.k, c.n, b.s0, b.s1, pc, out.offset, c.m, c.n, out.s0,
                     out.s1, bias.data(), 0, c.n, biasStride);
      break;
    }
    }
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double want = form == Form::Accumulate  ? start[i * c.n + j]
                      : form == Form::Overwrite ? 0.0
                                                : bias[biasStride * j];
        double scale = std::fabs(want);
        for (int64_t p = 0; p < c.k; ++p) {
          double term = double(a.at(i, p)) * double(b.at(p, j));
          want += term;
          scale += std::fabs(term);
        }
        // f32 rounding of k terms, whatever the order: k * 2^-24 * scale.
        double tolerance = double(c.k + 2) * 6e-8 * scale + 1e-30;
        ASSERT_NEAR(out.at(i, j), want, tolerance)
            << "C[" << i << ", " << j << "], call " << call + 1 << ", m n k "
            << c.m << " " << c.n << " " << c.k << ", layouts of A and B "
            << int(c.a) << " " << int(c.b) << ", form " << int(form)
            << ", MIXRT_MATMUL '" << mode << "'" << (bf16 ? ", bf16" : "");
      }
    // Nothing outside the view was written: the padding at the end of
    // each row and the elements before the offset.
    auto untouched = [&](float x) {
      return form == Form::Accumulate ? x == 0.0f : std::isnan(x);
    };
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = c.n; j < out.s0; ++j)
        ASSERT_TRUE(untouched(out.data[out.offset + i * out.s0 + j]))
            << "wrote outside C at row " << i << ", column " << j;
    for (int64_t i = 0; i < out.offset; ++i)
      ASSERT_TRUE(untouched(out.data[i])) << "wrote before C";
  }
  unsetenv("MIXRT_MATMUL");
}

const char *const kModes[] = {"", "sgemm", "primitive"};
const Layout kLayouts[] = {Layout::RowMajor, Layout::Transposed,
                           Layout::Strided};

/// Every layout of A and B, wider and narrower than the contraction (the
/// default choice sends row-major A and B with n > k to sgemm), through
/// every routine, in each form.
TEST(SupportMatmul, EveryLayoutRoutineAndForm) {
  const int64_t shapes[][3] = {{37, 53, 19}, {41, 17, 29}, {64, 96, 32}};
  int64_t site = 0;
  for (const auto &shape : shapes)
    for (Layout la : kLayouts)
      for (Layout lb : kLayouts)
        for (Form form :
             {Form::Accumulate, Form::Overwrite, Form::Bias, Form::StridedBias})
          for (const char *mode : kModes) {
            Case c{shape[0], shape[1], shape[2], la, lb};
            check(c, form, mode, site++);
            if (HasFatalFailure())
              return;
          }
}

/// bf16 operands (the bf16 primitive where oneDNN has one, else widened to
/// f32; with MIXRT_MATMUL=sgemm widened for sgemm or the loops), every
/// layout and form.
TEST(SupportMatmul, BF16Operands) {
  const int64_t shapes[][3] = {{37, 53, 19}, {41, 17, 29}};
  int64_t site = 2000;
  for (const auto &shape : shapes)
    for (Layout la : kLayouts)
      for (Layout lb : kLayouts)
        for (Form form : {Form::Accumulate, Form::Overwrite, Form::Bias,
                          Form::StridedBias})
          for (const char *mode : kModes) {
            Case c{shape[0], shape[1], shape[2], la, lb};
            check(c, form, mode, site++, /*bf16=*/true);
            if (HasFatalFailure())
              return;
          }
}

/// A batch of products with strided batches, accumulating and
/// overwriting, through every routine.
TEST(SupportMatmul, Batches) {
  SupportLibrary &lib = SupportLibrary::get();
  ASSERT_EQ(lib.error, "");
  const int64_t batch = 3, m = 20, n = 33, k = 12;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  // A (batch, m, k) with padded rows; B (batch, k, n) transposed in each
  // batch; C (batch, m, n) packed.
  const int64_t asb = m * (k + 1), bsb = k * n + 5, csb = m * n;
  std::vector<float> a(batch * asb), b(batch * bsb);
  for (float &x : a)
    x = dist(rng);
  for (float &x : b)
    x = dist(rng);
  int64_t site = 1000;
  for (bool accumulate : {true, false})
    for (const char *mode : kModes) {
      if (*mode)
        setenv("MIXRT_MATMUL", mode, 1);
      else
        unsetenv("MIXRT_MATMUL");
      std::vector<float> c(batch * csb, accumulate ? 0.5f : NAN);
      (accumulate ? lib.batchMatmul : lib.batchMatmulSet)(
          site++, a.data(), 0, batch, m, k, asb, k + 1, 1, b.data(), 0, batch,
          k, n, bsb, 1, k, c.data(), 0, batch, m, n, csb, n, 1);
      for (int64_t q = 0; q < batch; ++q)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double want = accumulate ? 0.5 : 0.0, scale = std::fabs(want);
            for (int64_t p = 0; p < k; ++p) {
              double term = double(a[q * asb + i * (k + 1) + p]) *
                            double(b[q * bsb + p + j * k]);
              want += term;
              scale += std::fabs(term);
            }
            ASSERT_NEAR(c[q * csb + i * n + j], want,
                        double(k + 2) * 6e-8 * scale)
                << "batch " << q << ", C[" << i << ", " << j
                << "], MIXRT_MATMUL '" << mode << "'";
          }
    }
  unsetenv("MIXRT_MATMUL");
}

} // namespace
