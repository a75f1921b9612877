//===- NativeProgram.cpp - Running a compiled per-rank program ------------===//
//
// This file implements NativeProgram over the runtime's loader: element
// conversion between host tensors (doubles) and the program's types, and
// the manifest's "global" signature.
//
//===----------------------------------------------------------------------===//

#include "NativeProgram.h"

#include "braid/Support/BoundedInput.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cstring>

using namespace mlir;
using namespace mlir::braid;
using interp::ElementKind;
using interp::HostTensor;

static llvm::Error runtimeError(const llvm::Twine &context = "") {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 context + braidrt_program_last_error());
}

llvm::Expected<NativeProgram> NativeProgram::load(llvm::StringRef dir) {
  NativeProgram native;
  native.program.reset(braidrt_program_load(dir.str().c_str()));
  if (!native.program)
    return runtimeError();
  braidrt_program *program = native.program.get();
  for (int64_t i = 0, e = braidrt_program_num_arguments(program); i < e; ++i) {
    braidrt_argument_info info;
    if (braidrt_program_argument(program, i, &info))
      return runtimeError();
    native.arguments.push_back(
        {info.name, info.kind, info.dtype,
         std::vector<int64_t>(info.shape, info.shape + info.rank)});
    if (native.arguments.back().kind == "table")
      continue;
    interp::ArgumentSpec spec;
    spec.name = info.name;
    spec.kind = interp::parseElementKind(info.dtype);
    spec.shape.assign(info.shape, info.shape + info.rank);
    // The type as MLIR prints it, for messages ("tensor<?x13xf32>").
    spec.type = "tensor<";
    for (int64_t size : spec.shape)
      spec.type += (size < 0 ? std::string("?") : std::to_string(size)) + "x";
    spec.type += std::string(info.dtype) + ">";
    spec.parameter = native.arguments.back().kind == "param";
    native.perRank.arguments.push_back(std::move(spec));
  }
  // The global signature is a host's concern, so braid-run reads it.
  std::string where = (dir + "/libprogram.so: its manifest").str();
  llvm::Expected<llvm::json::Value> json =
      parseBoundedJson(braidrt_program_manifest(program));
  if (!json)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   where + ": " +
                                       llvm::toString(json.takeError()));
  const llvm::json::Value *global =
      json->getAsObject() ? json->getAsObject()->get("global") : nullptr;
  if (!global)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   where + ": has no 'global' signature");
  llvm::Expected<interp::Signature> signature =
      interp::signatureFromJson(*global, where + ": global");
  if (!signature)
    return signature.takeError();
  native.global = std::move(*signature);
  native.function =
      json->getAsObject()->getString("function").value_or("forward").str();
  return native;
}

llvm::Expected<braidrt_table_slice>
NativeProgram::getTableSlice(size_t index, int64_t rank) const {
  braidrt_table_slice slice;
  if (braidrt_program_table_slice(program.get(), index, rank, &slice))
    return runtimeError();
  return slice;
}

static size_t elementBytes(llvm::StringRef dtype) {
  if (dtype == "f16" || dtype == "bf16")
    return 2;
  if (dtype == "f32" || dtype == "i32")
    return 4;
  return 8;
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

llvm::Error NativeProgram::bind(llvm::ArrayRef<ArgumentValue> args) {
  if (args.size() != arguments.size())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("the program takes {0} arguments, got {1}",
                      arguments.size(), args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const Argument &argument = arguments[i];
    const auto *tensor = std::get_if<HostTensor>(&args[i]);
    const auto *slice = std::get_if<TableSlice>(&args[i]);
    llvm::SmallVector<int64_t> shape;
    if (tensor)
      shape.assign(tensor->shape.begin(), tensor->shape.end());
    else
      shape = {slice->rows, slice->cols};
    auto *storage = static_cast<uint8_t *>(
        braidrt_program_stage(program.get(), i, shape.data(), shape.size()));
    if (!storage)
      return runtimeError();
    if (tensor) {
      storeAll(storage, argument.dtype, tensor->data.size(),
               [&](size_t e) { return tensor->data[e]; });
      continue;
    }
    size_t bytes = elementBytes(argument.dtype);
    for (int64_t r = 0; r < slice->rows; ++r)
      storeAll(storage + size_t(r) * slice->cols * bytes, argument.dtype,
               slice->cols, [&](size_t c) {
                 return slice->data->get(slice->rowOffset + r,
                                         slice->colOffset + int64_t(c));
               });
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<HostTensor>>
NativeProgram::run(double &milliseconds) {
  if (braidrt_program_call(program.get(), &milliseconds))
    return runtimeError();
  std::vector<HostTensor> outputs;
  for (int64_t i = 0, e = braidrt_program_num_results(program.get()); i < e;
       ++i) {
    braidrt_tensor_view view;
    if (braidrt_program_result(program.get(), i, &view))
      return runtimeError();
    std::optional<ElementKind> kind = interp::parseElementKind(view.dtype);
    if (!kind || !interp::isFloatKind(*kind))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     llvm::Twine("results of type ") +
                                         view.dtype + " are not supported");
    llvm::SmallVector<int64_t> shape(view.shape, view.shape + view.rank);
    HostTensor output(*kind, shape);
    const auto *data = static_cast<const uint8_t *>(view.data);
    size_t bytes = elementBytes(view.dtype);
    for (int64_t element = 0; element < output.getNumElements(); ++element) {
      // Row-major position `element` through the view's strides.
      int64_t linear = view.offset, rest = element;
      for (int64_t d = view.rank - 1; d >= 0; --d) {
        linear += (rest % shape[d]) * view.strides[d];
        rest /= shape[d];
      }
      output.data[element] = loadValue(data + linear * bytes, view.dtype);
    }
    outputs.push_back(std::move(output));
  }
  return outputs;
}
