//===- NativeProgram.cpp - Running a compiled per-rank program ------------===//
//
// This file implements NativeProgram. A memref descriptor of rank r is
// {allocated, aligned, offset, sizes[r], strides[r]}, all 8-byte fields;
// several results are consecutive descriptors. Results are buffers the
// program allocated with malloc, freed here after copying.
//
//===----------------------------------------------------------------------===//

#include "NativeProgram.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>

using namespace mlir;
using namespace mlir::braid;
using interp::ElementKind;
using interp::HostTensor;

static llvm::Error manifestError(llvm::StringRef path, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + what);
}

static size_t elementBytes(llvm::StringRef dtype) {
  if (dtype == "f16" || dtype == "bf16")
    return 2;
  if (dtype == "f32" || dtype == "i32")
    return 4;
  if (dtype == "f64" || dtype == "i64" || dtype == "index")
    return 8;
  return 0;
}

static llvm::Expected<std::vector<NativeProgram::Argument>>
readArguments(const llvm::json::Array *array, llvm::StringRef path,
              llvm::StringRef what) {
  if (!array)
    return manifestError(path, "'" + what + "' must be an array");
  std::vector<NativeProgram::Argument> result;
  for (const llvm::json::Value &value : *array) {
    const llvm::json::Object *object = value.getAsObject();
    const llvm::json::Array *shape = object ? object->getArray("shape") : nullptr;
    std::optional<llvm::StringRef> dtype =
        object ? object->getString("dtype") : std::nullopt;
    if (!object || !shape || !dtype || !elementBytes(*dtype))
      return manifestError(path, "every entry of '" + what +
                                     "' needs a shape and a known dtype");
    NativeProgram::Argument argument;
    argument.dtype = dtype->str();
    argument.name = object->getString("name").value_or("").str();
    argument.kind = object->getString("kind").value_or("").str();
    for (const llvm::json::Value &size : *shape) {
      std::optional<int64_t> n = size.getAsInteger();
      if (!n || *n < -1)
        return manifestError(path, "a shape in '" + what + "' is malformed");
      argument.shape.push_back(*n);
    }
    if (argument.kind == "table") {
      const llvm::json::Array *slices = object->getArray("slices");
      if (!slices)
        return manifestError(path, "table '" + argument.name +
                                       "' has no per-rank slices");
      for (const llvm::json::Value &sliceValue : *slices) {
        const llvm::json::Object *slice = sliceValue.getAsObject();
        NativeProgram::Slice parsed;
        for (auto [key, field] : {std::pair{"row_offset", &parsed.rowOffset},
                                  std::pair{"rows", &parsed.rows},
                                  std::pair{"col_offset", &parsed.colOffset},
                                  std::pair{"cols", &parsed.cols}}) {
          std::optional<int64_t> n =
              slice ? slice->getInteger(key) : std::nullopt;
          if (!n || *n < 0)
            return manifestError(path, "a slice of table '" + argument.name +
                                           "' is malformed");
          *field = *n;
        }
        argument.slices.push_back(parsed);
      }
    }
    result.push_back(std::move(argument));
  }
  return result;
}

llvm::Expected<NativeProgram> NativeProgram::load(llvm::StringRef dir) {
  // The library describes itself: its manifest is the string
  // `braid_manifest` inside it.
  llvm::SmallString<256> libraryPath(dir);
  llvm::sys::path::append(libraryPath, "libprogram.so");
  std::string error;
  auto handle = llvm::sys::DynamicLibrary::getPermanentLibrary(
      libraryPath.c_str(), &error);
  if (!handle.isValid())
    return manifestError(libraryPath, "cannot load: " + error);
  auto *text = static_cast<const char *>(
      handle.getAddressOfSymbol("braid_manifest"));
  std::string path = (libraryPath + ": its manifest").str();
  if (!text)
    return manifestError(libraryPath,
                         "has no embedded manifest (braid_manifest): it was "
                         "not written by braid-compile --target cpu");
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return manifestError(path, llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root || root->getInteger("version") != 1)
    return manifestError(path, "not a version 1 Braid manifest");
  NativeProgram program;
  program.ranks = root->getInteger("ranks").value_or(0);
  program.exchanges = root->getBoolean("exchanges").value_or(false);
  if (program.ranks < 1)
    return manifestError(path, "'ranks' must be positive");
  auto arguments = readArguments(root->getArray("arguments"), path, "arguments");
  if (!arguments)
    return arguments.takeError();
  auto results = readArguments(root->getArray("results"), path, "results");
  if (!results)
    return results.takeError();
  program.arguments = std::move(*arguments);
  program.results = std::move(*results);
  std::optional<llvm::StringRef> entry = root->getString("entry");
  if (!entry)
    return manifestError(path, "'entry' is required");
  void *symbol = handle.getAddressOfSymbol(entry->str().c_str());
  if (!symbol)
    return manifestError(libraryPath, "has no entry point '" + *entry + "'");
  program.entry = reinterpret_cast<void (*)(void **)>(symbol);
  return program;
}

/// Writes `count` values, value(e) for element e, into `at` as `dtype`;
/// the element type is decided once, not per element.
static void storeAll(uint8_t *at, llvm::StringRef dtype, size_t count,
                     llvm::function_ref<double(size_t)> value) {
  auto each = [&](auto convert) {
    using T = decltype(convert(0.0));
    for (size_t e = 0; e < count; ++e) {
      T converted = convert(value(e));
      std::memcpy(at + e * sizeof(T), &converted, sizeof(T));
    }
  };
  if (dtype == "f32")
    each([](double v) { return float(v); });
  else if (dtype == "f64")
    each([](double v) { return v; });
  else if (dtype == "i32")
    each([](double v) { return int32_t(v); });
  else if (dtype == "f16" || dtype == "bf16")
    each([&](double v) {
      llvm::APFloat half(v);
      bool lost;
      half.convert(dtype == "f16" ? llvm::APFloat::IEEEhalf()
                                  : llvm::APFloat::BFloat(),
                   llvm::APFloat::rmNearestTiesToEven, &lost);
      return uint16_t(half.bitcastToAPInt().getZExtValue());
    });
  else
    each([](double v) { return int64_t(v); });
}

static double loadValue(const uint8_t *at, llvm::StringRef dtype) {
  if (dtype == "f32") {
    float v;
    std::memcpy(&v, at, 4);
    return v;
  }
  if (dtype == "f64") {
    double v;
    std::memcpy(&v, at, 8);
    return v;
  }
  if (dtype == "f16" || dtype == "bf16") {
    uint16_t bits;
    std::memcpy(&bits, at, 2);
    llvm::APFloat half(dtype == "f16" ? llvm::APFloat::IEEEhalf()
                                      : llvm::APFloat::BFloat(),
                       llvm::APInt(16, bits));
    return half.convertToDouble();
  }
  if (dtype == "i32") {
    int32_t v;
    std::memcpy(&v, at, 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, at, 8);
  return double(v);
}

/// Huge pages back buffers of at least this size.
static constexpr size_t kHugePageBytes = size_t(2) << 20;

/// Storage for an argument of `bytes` bytes, or null. Large buffers (the
/// tables) are aligned to 2 MiB and advised to use transparent huge pages:
/// random row reads then miss the TLB far less often.
static uint8_t *allocateArgument(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  size_t alignment = bytes >= kHugePageBytes ? kHugePageBytes : 64;
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void *data = std::aligned_alloc(alignment, rounded);
  if (data && bytes >= kHugePageBytes)
    madvise(data, rounded, MADV_HUGEPAGE); // advice only; failure is harmless
  return static_cast<uint8_t *>(data);
}

void NativeProgram::BoundCall::Free::operator()(uint8_t *data) const {
  std::free(data);
}

llvm::Expected<NativeProgram::BoundCall>
NativeProgram::bind(llvm::ArrayRef<ArgumentValue> args) const {
  if (args.size() != arguments.size())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("the program takes {0} arguments, got {1}",
                      arguments.size(), args.size()));
  BoundCall bound;
  bound.program = this;
  bound.storage.resize(args.size());
  bound.descriptors.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Argument &argument = arguments[i];
    const auto *tensor = std::get_if<HostTensor>(&args[i]);
    const auto *slice = std::get_if<TableSlice>(&args[i]);
    llvm::SmallVector<int64_t> shape;
    if (tensor)
      shape.assign(tensor->shape.begin(), tensor->shape.end());
    else
      shape = {slice->rows, slice->cols};
    auto describe = [&] {
      if (tensor)
        return tensor->describeType();
      std::string text = "a " + std::to_string(slice->rows) + " x " +
                         std::to_string(slice->cols) + " table slice";
      return text;
    };
    if (shape.size() != argument.shape.size())
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("argument '{0}' has rank {1}, the program expects {2}",
                        argument.name, shape.size(), argument.shape.size()));
    for (size_t d = 0; d < argument.shape.size(); ++d)
      if (argument.shape[d] >= 0 && argument.shape[d] != shape[d])
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            llvm::formatv("argument '{0}' is {1}, which does not fit the "
                          "program's shape",
                          argument.name, describe()));
    size_t bytes = elementBytes(argument.dtype);
    size_t count = 1;
    for (int64_t size : shape)
      count *= size_t(size);
    uint8_t *storage = allocateArgument(count * bytes);
    if (!storage)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("cannot allocate {0} bytes for argument '{1}'",
                        count * bytes, argument.name));
    bound.storage[i].reset(storage);
    if (tensor) {
      storeAll(storage, argument.dtype, count,
               [&](size_t e) { return tensor->data[e]; });
    } else {
      for (int64_t r = 0; r < slice->rows; ++r)
        storeAll(storage + size_t(r) * slice->cols * bytes, argument.dtype,
                 slice->cols, [&](size_t c) {
                   return slice->data->get(slice->rowOffset + r,
                                           slice->colOffset + int64_t(c));
                 });
    }
    int64_t rank = shape.size();
    std::vector<int64_t> &descriptor = bound.descriptors[i];
    descriptor.assign(3 + 2 * rank, 0);
    auto base = reinterpret_cast<int64_t>(storage);
    descriptor[0] = base;
    descriptor[1] = base;
    int64_t stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      descriptor[3 + d] = shape[d];
      descriptor[3 + rank + d] = stride;
      stride *= shape[d];
    }
  }
  return bound;
}

llvm::Expected<std::vector<HostTensor>>
NativeProgram::BoundCall::run(double &milliseconds) {
  const std::vector<Argument> &results = program->results;
  // The results' descriptors come first, consecutively.
  size_t resultWords = 0;
  for (const Argument &result : results)
    resultWords += 3 + 2 * result.shape.size();
  std::vector<int64_t> resultDescriptors(resultWords, 0);
  std::vector<void *> pointers;
  if (!results.empty())
    pointers.push_back(resultDescriptors.data());
  for (std::vector<int64_t> &descriptor : descriptors)
    pointers.push_back(descriptor.data());
  auto start = std::chrono::steady_clock::now();
  program->entry(pointers.data());
  milliseconds = std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count();

  std::vector<HostTensor> outputs;
  size_t at = 0;
  for (const Argument &result : results) {
    int64_t rank = result.shape.size();
    const int64_t *descriptor = &resultDescriptors[at];
    at += 3 + 2 * rank;
    llvm::SmallVector<int64_t> shape(descriptor + 3, descriptor + 3 + rank);
    std::optional<ElementKind> kind =
        result.dtype == "f32"   ? ElementKind::f32
        : result.dtype == "f64" ? ElementKind::f64
        : result.dtype == "f16" ? ElementKind::f16
        : result.dtype == "bf16" ? std::optional(ElementKind::bf16)
                                 : std::nullopt;
    if (!kind)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "results of type " + result.dtype +
                                         " are not supported");
    HostTensor output(*kind, shape);
    auto *aligned = reinterpret_cast<const uint8_t *>(descriptor[1]);
    size_t bytes = elementBytes(result.dtype);
    for (int64_t e = 0; e < output.getNumElements(); ++e) {
      // Row-major position e through the descriptor's strides.
      int64_t linear = descriptor[2], rest = e;
      for (int64_t d = rank - 1; d >= 0; --d) {
        linear += (rest % shape[d]) * descriptor[3 + rank + d];
        rest /= shape[d];
      }
      output.data[e] = loadValue(aligned + linear * bytes, result.dtype);
    }
    std::free(reinterpret_cast<void *>(descriptor[0]));
    outputs.push_back(std::move(output));
  }
  return outputs;
}
