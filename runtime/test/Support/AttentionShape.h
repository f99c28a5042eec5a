//===- AttentionShape.h - Shapes of the fused attention tests ---*- C++ -*-===//
//
// The sizes of one call of the CPU's fused attention kernels, and the name
// a parameterized test gives them; shared by SupportAttentionTest (against
// a direct double implementation) and MixTorchTests' AttentionKernelTest
// (against libtorch).
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_TEST_SUPPORT_ATTENTIONSHAPE_H
#define MIXRT_TEST_SUPPORT_ATTENTIONSHAPE_H

#include <cstdint>
#include <string>

namespace mixtest {

/// Batch rows, sequence, heads, head width; prefix streams and prefix
/// length (ParaScale), or none.
struct AttentionShape {
  int64_t batch, seq, heads, dh, streams = 0, prefix = 0;
};

/// "B2_S70_H2_dh76", with "_P2_T70" for prefixes.
inline std::string attentionShapeName(const AttentionShape &s) {
  std::string name = "B" + std::to_string(s.batch) + "_S" +
                     std::to_string(s.seq) + "_H" + std::to_string(s.heads) +
                     "_dh" + std::to_string(s.dh);
  if (s.prefix)
    name += "_P" + std::to_string(s.streams) + "_T" + std::to_string(s.prefix);
  return name;
}

} // namespace mixtest

#endif // MIXRT_TEST_SUPPORT_ATTENTIONSHAPE_H
