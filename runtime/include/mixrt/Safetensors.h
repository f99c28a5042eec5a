//===- Safetensors.h - Reading and writing safetensors files ----*- C++ -*-===//
//
// The safetensors format: an 8-byte little-endian header length N, N bytes
// of JSON header mapping names to {"dtype", "shape", "data_offsets"} (and an
// optional "__metadata__" object of strings), then the raw little-endian
// tensor data, contiguous and row-major.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_SAFETENSORS_H
#define MIXRT_SAFETENSORS_H

#include "mixrt/Error.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "mixrt reads and writes tensor data in the host byte order"
#endif

namespace mixrt {

/// The element types the runtime reads and writes.
enum class DType { F32, F64, I32, I64 };

/// The safetensors name of \p dtype ("F32", ...).
const char *getDTypeName(DType dtype);
/// The size in bytes of one element of \p dtype.
size_t getDTypeSize(DType dtype);

template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> {
  static constexpr DType value = DType::F32;
};
template <> struct DTypeOf<double> {
  static constexpr DType value = DType::F64;
};
template <> struct DTypeOf<int32_t> {
  static constexpr DType value = DType::I32;
};
template <> struct DTypeOf<int64_t> {
  static constexpr DType value = DType::I64;
};

/// "(2, 8)" for shape {2, 8}, "()" for a scalar.
std::string formatShape(const std::vector<int64_t> &shape);

/// The number of elements of \p shape; throws Error on negative dimensions
/// or overflow.
int64_t getNumElements(const std::vector<int64_t> &shape);

/// A dense row-major tensor with its bytes in host (little-endian) order.
struct Tensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> data;

  int64_t getNumElements() const { return mixrt::getNumElements(shape); }

  /// The elements as T; T must match dtype.
  template <typename T> const T *getData() const {
    checkType(DTypeOf<T>::value);
    return reinterpret_cast<const T *>(data.data());
  }
  template <typename T> T *getData() {
    checkType(DTypeOf<T>::value);
    return reinterpret_cast<T *>(data.data());
  }

  /// A tensor of \p shape holding \p values (row-major).
  template <typename T>
  static Tensor create(std::vector<int64_t> shape,
                       const std::vector<T> &values) {
    Tensor tensor;
    tensor.dtype = DTypeOf<T>::value;
    tensor.shape = std::move(shape);
    if (tensor.getNumElements() != static_cast<int64_t>(values.size()))
      fail("tensor of shape ", formatShape(tensor.shape), " given ",
           values.size(), " values");
    tensor.data.resize(values.size() * sizeof(T));
    if (!values.empty())
      std::memcpy(tensor.data.data(), values.data(), tensor.data.size());
    return tensor;
  }

private:
  void checkType(DType requested) const;
};

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

/// The contents of one safetensors file: tensors in order, and metadata.
class TensorFile {
public:
  /// Appends a tensor; throws Error if the name is taken or reserved.
  Tensor &add(std::string name, Tensor tensor);
  /// The tensor named \p name, or null.
  const Tensor *find(const std::string &name) const;

  const std::vector<NamedTensor> &getTensors() const { return tensors; }

  /// The "__metadata__" string map, in order.
  std::vector<std::pair<std::string, std::string>> metadata;

private:
  std::vector<NamedTensor> tensors;
  std::unordered_map<std::string, size_t> index;
};

/// The metadata key of a file's checksum: 16 lowercase hex digits, the
/// FNV-1a 64 hash of the whole file (length field, header and data) as it
/// would be with those 16 digits written as '0'. The key and its value
/// appear in the header exactly once, as `"checksum_fnv1a64":"<digits>"`
/// (whitespace around the colon allowed), so that any reader can find them.
constexpr const char *kChecksumKey = "checksum_fnv1a64";

/// Reads and validates \p path; throws Error naming the file and tensor on
/// a truncated file, a bad header length, malformed JSON, an unknown or
/// unsupported dtype, a shape that disagrees with the data offsets, offsets
/// out of range, overlapping or leaving gaps, and duplicate names. A file
/// whose metadata holds kChecksumKey must match it (an Error says the file
/// is corrupt otherwise); the key stays in the returned metadata.
TensorFile readSafetensors(const std::string &path);

/// Writes \p file to \p path atomically (the previous file survives any
/// failure). Tensors are stored in order; the header is padded to 8 bytes.
/// With \p addChecksum, the metadata gains kChecksumKey as its last entry;
/// a kChecksumKey \p file already holds (read with it) is never copied.
void writeSafetensors(const std::string &path, const TensorFile &file,
                      bool addChecksum = false);

} // namespace mixrt

#endif // MIXRT_SAFETENSORS_H
