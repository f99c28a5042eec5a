//===- Safetensors.cpp - Reading and writing safetensors files ------------===//
//
// A validating reader (every inconsistency is an Error naming the file and
// the tensor) and an atomic writer of the safetensors format, following the
// reference implementation's rules: tensors are contiguous and cover the
// data section exactly.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Safetensors.h"
#include "mixrt/File.h"
#include "mixrt/Init.h"
#include "mixrt/Json.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <unordered_set>

using namespace mixrt;

/// Headers larger than this are rejected (the reference limit).
static constexpr uint64_t kMaxHeaderSize = 100u << 20;
static constexpr const char *kMetadataKey = "__metadata__";

//===----------------------------------------------------------------------===//
// Dtypes, shapes and tensors
//===----------------------------------------------------------------------===//

const char *mixrt::getDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  }
  return "?";
}

size_t mixrt::getDTypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  }
  return 0;
}

static std::optional<DType> parseDType(const std::string &name) {
  for (DType dtype : {DType::F32, DType::F64, DType::I32, DType::I64})
    if (name == getDTypeName(dtype))
      return dtype;
  return std::nullopt;
}

/// Dtypes of the safetensors format that the runtime does not handle.
static bool isKnownUnsupportedDType(const std::string &name) {
  static const char *const names[] = {"BOOL", "U8",      "I8",      "U16",
                                      "I16",  "F16",     "BF16",    "U32",
                                      "U64",  "F8_E4M3", "F8_E5M2", "F8_E8M0",
                                      "F4",   "F6_E2M3", "F6_E3M2", "C64"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

std::string mixrt::formatShape(const std::vector<int64_t> &shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    out += ",";
  return out + ")";
}

int64_t mixrt::getNumElements(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      fail("negative dimension in shape ", formatShape(shape));
    if (__builtin_mul_overflow(count, dim, &count))
      fail("shape ", formatShape(shape), " has too many elements");
  }
  return count;
}

void Tensor::checkType(DType requested) const {
  if (requested != dtype)
    fail("tensor holds ", getDTypeName(dtype), ", not ",
         getDTypeName(requested));
}

Tensor &TensorFile::add(std::string name, Tensor tensor) {
  if (name == kMetadataKey)
    fail("the tensor name ", quote(name), " is reserved");
  if (!index.emplace(name, tensors.size()).second)
    fail("duplicate tensor ", quote(name));
  tensors.push_back(NamedTensor{std::move(name), std::move(tensor)});
  return tensors.back().tensor;
}

const Tensor *TensorFile::find(const std::string &name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &tensors[it->second].tensor;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {
/// One header entry before its data is read.
struct Entry {
  std::string name;
  Tensor tensor;
  uint64_t begin = 0, end = 0;
};
} // namespace

/// Reads a non-negative integer; \p what names it for the message.
static uint64_t getNonNegative(const json::Value &value,
                               const std::string &prefix, const char *what) {
  if (!value.isInteger() || value.getInteger() < 0)
    fail(prefix, what, " must be non-negative integers");
  return static_cast<uint64_t>(value.getInteger());
}

static Entry parseEntry(const std::string &path, const std::string &name,
                        const json::Value &value) {
  std::string prefix = concat(path, ": tensor ", quote(name), ": ");
  if (!value.isObject())
    fail(prefix, "expected an object with dtype, shape and data_offsets, got ",
         json::Value::describe(value.getKind()));
  for (const json::Member &member : value.getObject())
    if (member.key != "dtype" && member.key != "shape" &&
        member.key != "data_offsets")
      fail(prefix, "unexpected key ", quote(member.key),
           " (expected dtype, shape and data_offsets)");
  const json::Value *dtype = value.find("dtype");
  const json::Value *shape = value.find("shape");
  const json::Value *offsets = value.find("data_offsets");
  if (!dtype || !shape || !offsets)
    fail(prefix, "missing ",
         !dtype   ? "dtype"
         : !shape ? "shape"
                  : "data_offsets");

  Entry entry;
  entry.name = name;
  if (!dtype->isString())
    fail(prefix, "dtype must be a string");
  std::optional<DType> parsed = parseDType(dtype->getString());
  if (!parsed && isKnownUnsupportedDType(dtype->getString()))
    fail(prefix, "unsupported dtype ", quote(dtype->getString()),
         " (supported: F32, F64, I32, I64)");
  if (!parsed)
    fail(prefix, "unknown dtype ", quote(dtype->getString()));
  entry.tensor.dtype = *parsed;

  if (!shape->isArray())
    fail(prefix, "shape must be an array of non-negative integers");
  for (const json::Value &dim : shape->getArray())
    entry.tensor.shape.push_back(
        static_cast<int64_t>(getNonNegative(dim, prefix, "shape dimensions")));

  if (!offsets->isArray() || offsets->getArray().size() != 2)
    fail(prefix, "data_offsets must be an array [begin, end]");
  entry.begin = getNonNegative(offsets->getArray()[0], prefix, "data_offsets");
  entry.end = getNonNegative(offsets->getArray()[1], prefix, "data_offsets");
  if (entry.end < entry.begin)
    fail(prefix, "data_offsets [", entry.begin, ", ", entry.end,
         "] end before they begin");

  int64_t count;
  try {
    count = entry.tensor.getNumElements();
  } catch (const Error &e) {
    fail(prefix, e.what());
  }
  uint64_t bytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count),
                             getDTypeSize(entry.tensor.dtype), &bytes))
    fail(prefix, "shape ", formatShape(entry.tensor.shape),
         " has too many elements");
  if (bytes != entry.end - entry.begin)
    fail(prefix, "shape ", formatShape(entry.tensor.shape), " of ",
         getDTypeName(entry.tensor.dtype), " needs ", bytes,
         " bytes but data_offsets [", entry.begin, ", ", entry.end, "] hold ",
         entry.end - entry.begin);
  return entry;
}

static std::vector<std::pair<std::string, std::string>>
parseMetadata(const std::string &path, const json::Value &value) {
  std::vector<std::pair<std::string, std::string>> metadata;
  if (!value.isObject())
    fail(path, ": __metadata__ must be an object of strings");
  for (const json::Member &member : value.getObject()) {
    if (!member.value.isString())
      fail(path, ": __metadata__: ", quote(member.key),
           " must be a string, got ",
           json::Value::describe(member.value.getKind()));
    metadata.emplace_back(member.key, member.value.getString());
  }
  return metadata;
}

/// Checks that the entries tile [0, dataSize) exactly; returns them in the
/// order of their data.
static std::vector<Entry *> checkLayout(const std::string &path,
                                        std::vector<Entry *> sorted,
                                        uint64_t dataSize) {
  std::sort(sorted.begin(), sorted.end(), [](Entry *a, Entry *b) {
    return std::make_pair(a->begin, a->end) < std::make_pair(b->begin, b->end);
  });
  for (Entry *entry : sorted)
    if (entry->end > dataSize)
      fail(path, ": tensor ", quote(entry->name), ": data_offsets [",
           entry->begin, ", ", entry->end, "] run past the end of the data (",
           dataSize, " bytes): the file is truncated or the offsets are wrong");
  uint64_t cursor = 0;
  const Entry *previous = nullptr;
  for (Entry *entry : sorted) {
    if (entry->begin < cursor)
      fail(path, ": tensors ", quote(previous->name), " and ",
           quote(entry->name), " overlap (data_offsets [", previous->begin,
           ", ", previous->end, "] and [", entry->begin, ", ", entry->end,
           "])");
    if (entry->begin > cursor)
      fail(path, ": tensor ", quote(entry->name), ": data_offsets [",
           entry->begin, ", ", entry->end, "] leave bytes [", cursor, ", ",
           entry->begin, ") unused (tensors must be contiguous)");
    cursor = entry->end;
    previous = entry;
  }
  if (cursor != dataSize)
    fail(path, ": ", dataSize - cursor,
         " bytes after the last tensor's data (the header describes ", cursor,
         " bytes of data, the file holds ", dataSize, ")");
  return sorted;
}

//===----------------------------------------------------------------------===//
// Checksums
//===----------------------------------------------------------------------===//

static constexpr size_t kChecksumDigits = 16;

static bool isChecksumText(const std::string &text) {
  return text.size() == kChecksumDigits &&
         std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

static std::string formatChecksum(uint64_t hash) {
  char digits[kChecksumDigits + 1];
  std::snprintf(digits, sizeof digits, "%016" PRIx64, hash);
  return digits;
}

/// The offset in \p header of the checksum's digits: the one place where the
/// key, quoted, is followed by a colon and a quoted 16-character string
/// (JSON whitespace allowed around the colon); npos if there is not exactly
/// one.
static size_t findChecksumDigits(const std::string &header) {
  std::string key = concat('"', kChecksumKey, '"');
  auto skipSpace = [&](size_t i) {
    while (i < header.size() && (header[i] == ' ' || header[i] == '\t' ||
                                 header[i] == '\n' || header[i] == '\r'))
      ++i;
    return i;
  };
  size_t found = std::string::npos;
  for (size_t at = header.find(key); at != std::string::npos;
       at = header.find(key, at + 1)) {
    size_t i = skipSpace(at + key.size());
    if (i >= header.size() || header[i] != ':')
      continue;
    i = skipSpace(i + 1);
    if (i + kChecksumDigits + 2 > header.size() || header[i] != '"' ||
        header[i + kChecksumDigits + 1] != '"')
      continue;
    if (found != std::string::npos)
      return std::string::npos;
    found = i + 1;
  }
  return found;
}

/// The FNV-1a 64 hash of a file made of \p lengthBytes, \p header (its
/// checksum digits, at \p digits, read as '0') and the data of \p tensors
/// in order.
template <typename Range, typename GetData>
static uint64_t hashFile(const unsigned char (&lengthBytes)[8],
                         std::string header, size_t digits,
                         const Range &tensors, GetData getData) {
  header.replace(digits, kChecksumDigits, kChecksumDigits, '0');
  uint64_t hash =
      fnv1a64(std::string_view(reinterpret_cast<const char *>(lengthBytes), 8));
  hash = fnv1a64(header, hash);
  for (const auto &tensor : tensors) {
    const std::vector<unsigned char> &data = getData(tensor);
    hash = fnv1a64(std::string_view(reinterpret_cast<const char *>(data.data()),
                                    data.size()),
                   hash);
  }
  return hash;
}

/// Checks the checksum of a file read as \p lengthBytes, \p header and
/// \p sorted (its tensors in the order of their data).
static void verifyChecksum(const std::string &path,
                           const unsigned char (&lengthBytes)[8],
                           const std::string &header,
                           const std::string &expected,
                           const std::vector<Entry *> &sorted) {
  if (!isChecksumText(expected))
    fail(path, ": __metadata__ ", quote(kChecksumKey), " is ", quote(expected),
         ", expected 16 lowercase hex digits");
  size_t digits = findChecksumDigits(header);
  if (digits == std::string::npos ||
      header.compare(digits, kChecksumDigits, expected) != 0)
    fail(path, ": __metadata__ ", quote(kChecksumKey),
         " must appear once in the header as \"", kChecksumKey,
         "\":\"<16 hex digits>\"; the header was rewritten after the "
         "checksum was computed");
  std::string actual = formatChecksum(
      hashFile(lengthBytes, header, digits, sorted,
               [](const Entry *e) -> const std::vector<unsigned char> & {
                 return e->tensor.data;
               }));
  if (actual != expected)
    fail(path, ": the file is corrupt: its FNV-1a 64 checksum is ", actual,
         ", expected ", expected, " (__metadata__ ", quote(kChecksumKey), ")");
}

TensorFile mixrt::readSafetensors(const std::string &path) {
  InputFile file(path);
  uint64_t fileSize = file.getSize();
  if (fileSize < 8)
    fail(path, ": file is truncated: ", fileSize,
         " bytes, fewer than the 8-byte header length of a safetensors file");
  unsigned char lengthBytes[8];
  file.readAt(0, lengthBytes, 8);
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | lengthBytes[i];
  if (headerSize > fileSize - 8)
    fail(path, ": header length ", headerSize,
         " runs past the end of the file (", fileSize,
         " bytes): the file is truncated or not safetensors");
  if (headerSize > kMaxHeaderSize)
    fail(path, ": header length ", headerSize, " exceeds the limit of ",
         kMaxHeaderSize, " bytes");

  std::string headerText(headerSize, '\0');
  file.readAt(8, headerText.data(), headerSize);
  json::ParseOptions options;
  options.allowDuplicateKeys = true;
  json::Value header;
  try {
    header = json::parse(headerText, options);
  } catch (const json::ParseError &e) {
    fail(path, ": malformed header JSON: ", e.what());
  }
  if (!header.isObject())
    fail(path, ": malformed header: expected a JSON object, got ",
         json::Value::describe(header.getKind()));

  TensorFile result;
  std::vector<Entry> entries;
  std::unordered_set<std::string> seen;
  for (const json::Member &member : header.getObject()) {
    bool isMetadata = member.key == kMetadataKey;
    if (!seen.insert(member.key).second)
      fail(path, ": duplicate ",
           isMetadata ? std::string(kMetadataKey)
                      : "tensor " + quote(member.key),
           " in the header");
    if (isMetadata)
      result.metadata = parseMetadata(path, member.value);
    else
      entries.push_back(parseEntry(path, member.key, member.value));
  }

  std::vector<Entry *> pointers;
  for (Entry &entry : entries)
    pointers.push_back(&entry);
  uint64_t dataStart = 8 + headerSize;
  std::vector<Entry *> sorted =
      checkLayout(path, pointers, fileSize - dataStart);

  for (Entry &entry : entries) {
    entry.tensor.data.resize(entry.end - entry.begin);
    file.readAt(dataStart + entry.begin, entry.tensor.data.data(),
                entry.tensor.data.size());
  }
  for (const auto &[key, value] : result.metadata)
    if (key == kChecksumKey)
      verifyChecksum(path, lengthBytes, headerText, value, sorted);
  for (Entry &entry : entries)
    result.add(std::move(entry.name), std::move(entry.tensor));
  return result;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

void mixrt::writeSafetensors(const std::string &path, const TensorFile &file,
                             bool addChecksum) {
  json::Value::Object header;
  json::Value::Object metadata;
  for (const auto &[key, value] : file.metadata)
    if (key != kChecksumKey)
      metadata.push_back(json::Member{key, json::Value(value)});
  if (addChecksum)
    metadata.push_back(json::Member{
        kChecksumKey, json::Value(std::string(kChecksumDigits, '0'))});
  if (!metadata.empty())
    header.push_back(json::Member{kMetadataKey, json::Value(metadata)});
  uint64_t offset = 0;
  for (const NamedTensor &named : file.getTensors()) {
    const Tensor &tensor = named.tensor;
    uint64_t bytes = static_cast<uint64_t>(tensor.getNumElements()) *
                     getDTypeSize(tensor.dtype);
    if (bytes != tensor.data.size())
      fail(path, ": tensor ", quote(named.name), " of shape ",
           formatShape(tensor.shape), " and dtype ", getDTypeName(tensor.dtype),
           " needs ", bytes, " bytes, has ", tensor.data.size());
    json::Value::Array shape(tensor.shape.begin(), tensor.shape.end());
    json::Value::Array offsets{json::Value(offset),
                               json::Value(offset + bytes)};
    header.push_back(json::Member{
        named.name, json::Value(json::Value::Object{
                        {"dtype", json::Value(getDTypeName(tensor.dtype))},
                        {"shape", json::Value(std::move(shape))},
                        {"data_offsets", json::Value(std::move(offsets))}})});
    offset += bytes;
  }
  std::string headerText = json::write(json::Value(std::move(header)));
  headerText.append((8 - headerText.size() % 8) % 8, ' ');

  unsigned char lengthBytes[8];
  uint64_t headerSize = headerText.size();
  for (int i = 0; i < 8; ++i)
    lengthBytes[i] = static_cast<unsigned char>(headerSize >> (8 * i));

  if (addChecksum) {
    size_t digits = findChecksumDigits(headerText);
    if (digits == std::string::npos)
      fail(path, ": cannot place the checksum in the header (a tensor or "
                 "metadata entry imitates it)");
    std::string checksum = formatChecksum(hashFile(
        lengthBytes, headerText, digits, file.getTensors(),
        [](const NamedTensor &t) -> const std::vector<unsigned char> & {
          return t.tensor.data;
        }));
    headerText.replace(digits, kChecksumDigits, checksum);
  }

  AtomicFileWriter writer(path);
  writer.write(lengthBytes, 8);
  writer.write(headerText);
  for (const NamedTensor &named : file.getTensors())
    writer.write(named.tensor.data.data(), named.tensor.data.size());
  writer.commit();
}
