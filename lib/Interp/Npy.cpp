//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//
//
// This file implements a strict reader and a writer for the NumPy .npy
// format
// (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html).
// Malformed headers, unsupported dtypes, Fortran order and truncated data are
// errors naming the file; nothing is read past the buffer.
//
//===----------------------------------------------------------------------===//

#include "braid/Interp/Npy.h"

#include "braid/Support/AtomicOutput.h"
#include "braid/Support/BoundedInput.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace llvm;
using namespace mlir::braid::interp;

static Error npyError(StringRef name, const Twine &message) {
  return createStringError(inconvertibleErrorCode(), name + ": " + message);
}

/// Returns the text after `'key':` in a header dict, trimmed.
static std::optional<StringRef> findHeaderValue(StringRef header,
                                                StringRef key) {
  std::string quoted = ("'" + key + "'").str();
  size_t at = header.find(quoted);
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(at + quoted.size()).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  return rest.ltrim();
}

/// Bytes per element and element kind for a NumPy dtype string.
static std::optional<std::pair<int, ElementKind>> decodeDescr(StringRef descr) {
  if (descr == "<f2")
    return std::make_pair(2, ElementKind::f16);
  if (descr == "<f4")
    return std::make_pair(4, ElementKind::f32);
  if (descr == "<f8")
    return std::make_pair(8, ElementKind::f64);
  if (descr == "<i4")
    return std::make_pair(4, ElementKind::i32);
  if (descr == "<i8")
    return std::make_pair(8, ElementKind::i64);
  if (descr == "|b1")
    return std::make_pair(1, ElementKind::i1);
  return std::nullopt;
}

static double halfToDouble(uint16_t bits) {
  APFloat value(APFloat::IEEEhalf(), APInt(16, bits));
  bool losesInfo;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToDouble();
}

Expected<HostTensor> mlir::braid::interp::parseNpy(StringRef bytes,
                                                   StringRef name) {
  if (!bytes.starts_with("\x93NUMPY") || bytes.size() < 10)
    return npyError(name, "not a .npy file (bad magic string)");
  uint8_t major = bytes[6];
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = uint8_t(bytes[8]) | (uint8_t(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return npyError(name, "truncated .npy header");
    headerLength = uint32_t(uint8_t(bytes[8])) |
                   (uint32_t(uint8_t(bytes[9])) << 8) |
                   (uint32_t(uint8_t(bytes[10])) << 16) |
                   (uint32_t(uint8_t(bytes[11])) << 24);
    headerStart = 12;
  } else {
    return npyError(name, "unsupported .npy format version " + Twine(unsigned(major)));
  }
  if (headerStart + headerLength > bytes.size())
    return npyError(name, "truncated .npy header");
  StringRef header = bytes.substr(headerStart, headerLength);

  std::optional<StringRef> descrText = findHeaderValue(header, "descr");
  std::optional<StringRef> fortranText =
      findHeaderValue(header, "fortran_order");
  std::optional<StringRef> shapeText = findHeaderValue(header, "shape");
  if (!descrText || !fortranText || !shapeText)
    return npyError(name, "the .npy header lacks 'descr', 'fortran_order' or "
                          "'shape'");
  StringRef descr = *descrText;
  if (!descr.consume_front("'") || descr.find('\'') == StringRef::npos)
    return npyError(name, "malformed 'descr' in the .npy header");
  descr = descr.take_until([](char c) { return c == '\''; });
  auto decoded = decodeDescr(descr);
  if (!decoded)
    return npyError(name, "unsupported dtype '" + descr +
                              "' (expected <f2, <f4, <f8, <i4, <i8 or |b1)");
  // The value is a Python literal up to the next ',' or '}'.
  StringRef fortran = fortranText->take_until(
      [](char c) { return c == ',' || c == '}'; }).trim();
  if (fortran == "True")
    return npyError(name, "Fortran-ordered arrays are not supported");
  if (fortran != "False")
    return npyError(name, "malformed 'fortran_order' in the .npy header: "
                          "expected True or False, got '" +
                              fortran + "'");

  StringRef shape = *shapeText;
  if (!shape.consume_front("("))
    return npyError(name, "malformed 'shape' in the .npy header");
  shape = shape.take_until([](char c) { return c == ')'; });
  SmallVector<int64_t, 4> dims;
  SmallVector<StringRef> pieces;
  shape.split(pieces, ',');
  for (auto [index, piece] : llvm::enumerate(pieces)) {
    piece = piece.trim();
    // Only a trailing comma leaves an empty piece: "(8,)" (and "()").
    if (piece.empty() && index + 1 == pieces.size())
      continue;
    int64_t size;
    if (piece.getAsInteger(10, size) || size < 0)
      return npyError(name,
                      "malformed dimension '" + piece + "' in the .npy shape");
    dims.push_back(size);
  }
  std::optional<int64_t> count = getNumElements(dims);
  auto [elementBytes, kind] = *decoded;
  StringRef payload = bytes.drop_front(headerStart + headerLength);
  if (!count || static_cast<uint64_t>(*count) >
                    payload.size() / static_cast<uint64_t>(elementBytes))
    return npyError(name, "the .npy data is shorter than its shape says (" +
                              Twine(payload.size()) + " bytes)");
  // Checked before the values are widened to doubles: a file of 1-byte
  // elements within the reader's size bound would hold 8 times as many.
  if (*count > kMaxTensorElements)
    return npyError(name, Twine(*count) + " elements, more than the " +
                              Twine(kMaxTensorElements) + " a tensor may have");

  HostTensor tensor;
  tensor.kind = kind;
  tensor.shape = dims;
  tensor.data.resize(*count);
  const char *raw = payload.data();
  for (int64_t i = 0; i < *count; ++i) {
    const char *at = raw + i * elementBytes;
    double value = 0;
    switch (kind) {
    case ElementKind::f16: {
      uint16_t bits;
      std::memcpy(&bits, at, 2);
      value = halfToDouble(bits);
      break;
    }
    case ElementKind::f32: {
      float v;
      std::memcpy(&v, at, 4);
      value = v;
      break;
    }
    case ElementKind::f64:
      std::memcpy(&value, at, 8);
      break;
    case ElementKind::i32: {
      int32_t v;
      std::memcpy(&v, at, 4);
      value = v;
      break;
    }
    case ElementKind::i64: {
      int64_t v;
      std::memcpy(&v, at, 8);
      // Elements are held as doubles, exact up to 2^53: a larger integer
      // would silently become another one (and an index error would then
      // name a number the file does not hold).
      if (v > kMaxExactInteger || v < -kMaxExactInteger)
        return npyError(name, "element " + Twine(i) + " is " + Twine(v) +
                                  ", beyond the +-2^53 that Braid's "
                                  "integer tensors hold exactly");
      value = static_cast<double>(v);
      break;
    }
    case ElementKind::i1:
      value = *at ? 1 : 0;
      break;
    default:
      break;
    }
    tensor.data[i] = value;
  }
  return tensor;
}

Expected<HostTensor> mlir::braid::interp::readNpy(StringRef path) {
  // The header and at most kMaxTensorElements 8-byte elements.
  Expected<std::unique_ptr<MemoryBuffer>> buffer = readBoundedFile(
      path, (uint64_t(1) << 20) + uint64_t(kMaxTensorElements) * 8,
      "a .npy file");
  if (!buffer)
    return buffer.takeError();
  return parseNpy((*buffer)->getBuffer(), path);
}

Error mlir::braid::interp::writeNpy(StringRef path, const HostTensor &tensor) {
  StringRef parent = sys::path::parent_path(path);
  if (!parent.empty())
    if (std::error_code ec = sys::fs::create_directories(parent))
      return npyError(path, "cannot create directory: " + ec.message());
  StringRef descr;
  int elementBytes;
  switch (tensor.kind) {
  case ElementKind::f16:
    descr = "<f2";
    elementBytes = 2;
    break;
  case ElementKind::bf16:
  case ElementKind::f32:
    descr = "<f4";
    elementBytes = 4;
    break;
  case ElementKind::f64:
    descr = "<f8";
    elementBytes = 8;
    break;
  case ElementKind::i1:
    descr = "|b1";
    elementBytes = 1;
    break;
  case ElementKind::i32:
    descr = "<i4";
    elementBytes = 4;
    break;
  case ElementKind::i64:
  case ElementKind::index:
    descr = "<i8";
    elementBytes = 8;
    break;
  }
  std::string header;
  raw_string_ostream os(header);
  os << "{'descr': '" << descr << "', 'fortran_order': False, 'shape': (";
  for (int64_t size : tensor.shape)
    os << size << (tensor.shape.size() == 1 ? "," : ", ");
  os << "), }";
  // Pad with spaces so that the data starts on a 64-byte boundary.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');

  return writeFileAtomically(path, [&](raw_ostream &out) {
    out << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
        << char(header.size() >> 8) << header;
    for (double value : tensor.data) {
      char bytes[8];
      switch (tensor.kind) {
      case ElementKind::f16: {
        APFloat half(value);
        bool losesInfo;
        half.convert(APFloat::IEEEhalf(), APFloat::rmNearestTiesToEven,
                     &losesInfo);
        uint16_t bits = half.bitcastToAPInt().getZExtValue();
        std::memcpy(bytes, &bits, 2);
        break;
      }
      case ElementKind::bf16:
      case ElementKind::f32: {
        float v = static_cast<float>(value);
        std::memcpy(bytes, &v, 4);
        break;
      }
      case ElementKind::f64:
        std::memcpy(bytes, &value, 8);
        break;
      case ElementKind::i1:
        bytes[0] = value != 0;
        break;
      case ElementKind::i32: {
        int32_t v = !(value >= -0x1p31)  ? INT32_MIN
                    : !(value < 0x1p31) ? INT32_MAX
                                        : static_cast<int32_t>(value);
        std::memcpy(bytes, &v, 4);
        break;
      }
      case ElementKind::i64:
      case ElementKind::index: {
        // In range whenever the tensor came from the reader or the
        // reference semantics; anything else saturates, never UB.
        int64_t v = !(value >= -0x1p63)  ? INT64_MIN
                    : !(value < 0x1p63) ? INT64_MAX
                                        : static_cast<int64_t>(value);
        std::memcpy(bytes, &v, 8);
        break;
      }
      }
      out.write(bytes, elementBytes);
    }
  });
}
