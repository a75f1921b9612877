//===- NativeProgram.cpp - Running a compiled per-rank program ------------===//
//
// This file implements NativeProgram over the runtime's loader: element
// conversion between host tensors (doubles) and the program's types, and
// the manifest's "global" signature.
//
//===----------------------------------------------------------------------===//

#include "NativeProgram.h"

#include "braid/Support/BoundedInput.h"

#include "braidrt/braidrt.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::braid;
using interp::ElementKind;
using interp::HostTensor;
using interp::RankValues;
using interp::TableData;
using interp::TableMap;

static llvm::Error runtimeError(const llvm::Twine &context = "") {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 context + braidrt_program_last_error());
}

/// Reads argument `index`'s optional "shard_ranks" and "shard_dim" from the
/// manifest: the distinct ranks (below `ranks`) whose slices along that
/// dimension make a sharded state or a parameter stored as blocks.
static llvm::Error readShardRanks(const llvm::json::Value &manifest,
                                  int64_t index,
                                  NativeProgram::Argument &argument,
                                  int64_t ranks, llvm::StringRef where) {
  auto bad = [&](const llvm::Twine &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   where + ": argument " + llvm::Twine(index) +
                                       " ('" + argument.name + "'): " + what);
  };
  const llvm::json::Object *object = manifest.getAsObject();
  const llvm::json::Array *arguments =
      object ? object->getArray("arguments") : nullptr;
  if (!arguments || index >= int64_t(arguments->size()))
    return llvm::Error::success();
  const llvm::json::Object *entry = (*arguments)[index].getAsObject();
  const llvm::json::Value *field = entry ? entry->get("shard_ranks") : nullptr;
  if (!field)
    return llvm::Error::success();
  const llvm::json::Array *list = field->getAsArray();
  std::optional<int64_t> dim = entry->getInteger("shard_dim");
  if (entry->get("shard_dim") && !dim)
    return bad("'shard_dim' must be an integer");
  argument.shardDim = dim.value_or(0);
  int64_t tensorRank = argument.shape.size();
  if (!list || list->empty() ||
      (argument.kind != "state" && argument.kind != "param") ||
      argument.shardDim < 0 || argument.shardDim >= tensorRank ||
      argument.shape[argument.shardDim] < 0)
    return bad("'shard_ranks' must be a non-empty list on a state or "
               "parameter of static dimension 'shard_dim' (0 by default)");
  for (const llvm::json::Value &value : *list) {
    std::optional<int64_t> rank = value.getAsInteger();
    if (!rank || *rank < 0 || *rank >= ranks ||
        llvm::is_contained(argument.shardRanks, *rank))
      return bad("'shard_ranks' must list distinct ranks below " +
                 llvm::Twine(ranks));
    argument.shardRanks.push_back(*rank);
  }
  return llvm::Error::success();
}

llvm::Expected<NativeProgram> NativeProgram::load(llvm::StringRef dir) {
  NativeProgram native;
  native.program.reset(braidrt_program_load(dir.str().c_str()));
  if (!native.program)
    return runtimeError();
  braidrt_program *program = native.program.get();
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
  const llvm::json::Object &top = *json->getAsObject();
  for (auto [key, field] : {std::pair{"pipelined_of", &native.pipelinedOf},
                            std::pair{"input_dist", &native.inputDistDir},
                            std::pair{"input_dist_of", &native.inputDistOf}})
    if (const llvm::json::Value *value = top.get(key)) {
      std::optional<llvm::StringRef> text = value->getAsString();
      if (!text || text->empty())
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       where + ": '" + key +
                                           "' is not a non-empty string");
      *field = text->str();
    }
  // The input distribution's library lies below the form's, by one name.
  if (native.pipelinedOf.empty() != native.inputDistDir.empty() ||
      llvm::StringRef(native.inputDistDir).contains('/') ||
      native.inputDistDir == "." || native.inputDistDir == "..")
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        where + ": a pipelined form needs both 'pipelined_of' and "
                "'input_dist', the latter a directory name below its own");
  if (const llvm::json::Value *ops =
          json->getAsObject()->get("profiled_ops")) {
    const llvm::json::Array *names = ops->getAsArray();
    if (!names)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     where + ": 'profiled_ops' is not an array");
    for (const llvm::json::Value &name : *names) {
      std::optional<llvm::StringRef> text = name.getAsString();
      if (!text)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            where + ": 'profiled_ops' holds a non-string entry");
      native.profiledOps.push_back(text->str());
    }
  }
  for (int64_t i = 0, e = braidrt_program_num_arguments(program); i < e; ++i) {
    braidrt_argument_info info;
    if (braidrt_program_argument(program, i, &info))
      return runtimeError();
    native.arguments.push_back(
        {info.name, info.kind, info.dtype,
         std::vector<int64_t>(info.shape, info.shape + info.rank), {}});
    if (llvm::Error error = readShardRanks(*json, i, native.arguments.back(),
                                           braidrt_program_ranks(program),
                                           where))
      return std::move(error);
    // The per-rank signature is the forward pass's inputs and parameters.
    if (native.isHostSupplied(native.arguments.back()))
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
    spec.shardRanks = native.arguments.back().shardRanks;
    spec.shardDim = native.arguments.back().shardDim;
    native.perRank.arguments.push_back(std::move(spec));
  }
  for (int64_t i = 0, e = braidrt_program_num_results(program); i < e; ++i) {
    braidrt_argument_info info;
    if (braidrt_program_result_info(program, i, &info))
      return runtimeError();
    native.results.push_back(
        {info.name, info.kind, info.dtype,
         std::vector<int64_t>(info.shape, info.shape + info.rank), {}});
  }
  return native;
}

std::optional<size_t>
NativeProgram::getInputPosition(llvm::StringRef name) const {
  for (auto [position, spec] : llvm::enumerate(perRank.arguments))
    if (!spec.parameter && spec.name == name)
      return position;
  return std::nullopt;
}

llvm::Expected<std::map<std::string, HostTensor>>
mlir::braid::runInputDistribution(
    NativeProgram &dist,
    llvm::function_ref<llvm::Expected<HostTensor>(llvm::StringRef)> input) {
  auto error = [&](const llvm::Twine &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the input distribution @" +
                                       dist.getFunctionName() + " " + what);
  };
  for (auto [index, argument] : llvm::enumerate(dist.getArguments())) {
    if (argument.kind != "input")
      return error("takes '" + argument.name + "', which is no input");
    llvm::Expected<HostTensor> value = input(argument.name);
    if (!value)
      return value.takeError();
    if (llvm::Error bound = dist.bindOne(index, *value))
      return std::move(bound);
  }
  double ms = 0;
  llvm::Expected<std::vector<HostTensor>> results = dist.run(ms);
  if (!results)
    return results.takeError();
  std::map<std::string, HostTensor> carried;
  for (auto [index, result] : llvm::enumerate(dist.getResults())) {
    if (result.kind != "carried" || carried.count(result.name))
      return error("returns '" + result.name + "' (result " +
                   llvm::Twine(index) + "), which is no carried value");
    carried[result.name] = std::move((*results)[index]);
  }
  return carried;
}

std::vector<double> NativeProgram::readOpTimes() const {
  std::vector<double> ms;
  for (size_t i = 0; i < profiledOps.size(); ++i)
    ms.push_back(braidrt_op_ms(int64_t(i)));
  return ms;
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
  for (size_t i = 0; i < args.size(); ++i)
    if (llvm::Error error = bindOne(i, args[i]))
      return error;
  return llvm::Error::success();
}

llvm::Error NativeProgram::bindOne(size_t i, const ArgumentValue &value) {
  const Argument &argument = arguments[i];
  const auto *tensor = std::get_if<HostTensor>(&value);
  const auto *slice = std::get_if<TableSlice>(&value);
  llvm::SmallVector<int64_t> shape;
  if (tensor)
    shape.assign(tensor->shape.begin(), tensor->shape.end());
  else
    shape = {slice->rows, slice->cols};
  auto *storage = static_cast<uint8_t *>(
      braidrt_program_stage(program.get(), i, shape.data(), shape.size()));
  if (!storage)
    return runtimeError();
  if (staged.size() < arguments.size())
    staged.resize(arguments.size());
  staged[i] = {storage, std::vector<int64_t>(shape.begin(), shape.end())};
  if (tensor) {
    // The readers hold integers within +-2^53; an i32 argument takes fewer.
    if (argument.dtype == "i32")
      for (auto [e, v] : llvm::enumerate(tensor->data))
        if (v < double(std::numeric_limits<int32_t>::min()) ||
            v > double(std::numeric_limits<int32_t>::max()))
          return llvm::createStringError(
              llvm::inconvertibleErrorCode(),
              llvm::formatv("'{0}': element {1} is {2}, which does not fit "
                            "the program's i32",
                            argument.name, e, int64_t(v)));
    storeAll(storage, argument.dtype, tensor->data.size(),
             [&](size_t e) { return tensor->data[e]; });
    return llvm::Error::success();
  }
  size_t bytes = elementBytes(argument.dtype);
  for (int64_t r = 0; r < slice->rows; ++r)
    storeAll(storage + size_t(r) * slice->cols * bytes, argument.dtype,
             slice->cols, [&](size_t c) {
               return slice->data->get(slice->rowOffset + r,
                                       slice->colOffset + int64_t(c));
             });
  return llvm::Error::success();
}

int64_t NativeProgram::getStagedBytes(size_t index) const {
  if (index >= staged.size() || !staged[index].storage)
    return 0;
  int64_t elements = 1;
  for (int64_t size : staged[index].shape)
    elements *= size;
  return elements * int64_t(elementBytes(arguments[index].dtype));
}

llvm::Expected<HostTensor> NativeProgram::readArgument(size_t index) const {
  if (index >= staged.size() || !staged[index].storage)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   llvm::formatv("argument {0} is not staged",
                                                 index));
  const Argument &argument = arguments[index];
  std::optional<ElementKind> kind = interp::parseElementKind(argument.dtype);
  if (!kind)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown element type " + argument.dtype);
  HostTensor tensor(*kind, staged[index].shape);
  size_t bytes = elementBytes(argument.dtype);
  for (int64_t e = 0; e < tensor.getNumElements(); ++e)
    tensor.data[e] = loadValue(staged[index].storage + e * bytes,
                               argument.dtype);
  return tensor;
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
    // Integer results are a pipelined form's carried indices and counts;
    // host tensors hold them exactly within +-2^53.
    std::optional<ElementKind> kind = interp::parseElementKind(view.dtype);
    if (!kind)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     llvm::Twine("results of type ") +
                                         view.dtype + " are not supported");
    bool integer = !interp::isFloatKind(*kind);
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
      if (integer && bytes == 8) {
        int64_t value;
        std::memcpy(&value, data + linear * bytes, 8);
        if (value > (int64_t(1) << 53) || value < -(int64_t(1) << 53))
          return llvm::createStringError(
              llvm::inconvertibleErrorCode(),
              llvm::formatv("result {0}'s element {1} is {2}, beyond +-2^53, "
                            "which a host tensor holds exactly",
                            i, element, value));
      }
      output.data[element] = loadValue(data + linear * bytes, view.dtype);
    }
    outputs.push_back(std::move(output));
  }
  return outputs;
}

/// True when started by mpirun (Open MPI, MPICH or PMIx environments).
bool mlir::braid::isUnderMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") ||
         std::getenv("PMIX_RANK");
}

/// The rows of table argument `index` that `rank` passes to the compiled
/// program: its slice in the library's manifest (the whole table, or the
/// rank's shard, empty if none), checked against the table's data.
llvm::Expected<NativeProgram::TableSlice>
mlir::braid::tableArgument(const NativeProgram &program, const TableMap &tables,
              size_t index, int64_t rank) {
  const std::string &name = program.getArguments()[index].name;
  auto data = tables.find(name);
  if (data == tables.end())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no data for table '" + name + "'");
  const TableData &table = data->second;
  llvm::Expected<braidrt_table_slice> slice =
      program.getTableSlice(index, rank);
  if (!slice)
    return slice.takeError();
  if (slice->row_offset > table.getNumRows() ||
      slice->rows > table.getNumRows() - slice->row_offset ||
      slice->col_offset > table.getDim() ||
      slice->cols > table.getDim() - slice->col_offset)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the manifest's slice of table '" + name + "' for rank " +
            llvm::Twine(rank) + " lies outside its " +
            llvm::Twine(table.getNumRows()) + " x " +
            llvm::Twine(table.getDim()) + " rows and columns");
  return NativeProgram::TableSlice{&table, slice->row_offset, slice->rows,
                                   slice->col_offset, slice->cols};
}

/// Sends every rank's results to rank 0; returns them there, in rank
/// order, and nothing on the other ranks.
std::optional<interp::RankValues>
mlir::braid::gatherToRankZero(const std::vector<HostTensor> &results) {
  int64_t rank = braidrt_rank(), ranks = braidrt_world_size();
  RankValues all(ranks);
  for (const HostTensor &result : results) {
    // The shapes first (rows differ by rank), then the values as doubles.
    std::vector<int64_t> rows(ranks),
        mine = {result.shape.empty() ? 1 : result.shape[0]};
    braidrt_all_gather(mine.data(), rows.data(), 1, BRAIDRT_I64);
    std::vector<int64_t> sendCounts(ranks, 0), recvCounts(ranks, 0);
    sendCounts[0] = result.getNumElements();
    void *received = nullptr;
    braidrt_all_to_all_v(result.data.data(), sendCounts.data(), &received,
                         recvCounts.data(), BRAIDRT_F64);
    if (rank == 0) {
      const double *values = static_cast<const double *>(received);
      for (int64_t r = 0; r < ranks; ++r) {
        HostTensor part = result;
        if (!part.shape.empty())
          part.shape[0] = rows[r];
        part.data.assign(values, values + recvCounts[r]);
        values += recvCounts[r];
        all[r].push_back(std::move(part));
      }
    }
    braidrt_free(received);
  }
  if (rank != 0)
    return std::nullopt;
  return all;
}

