//===- Bindings.cpp - Inputs and weights of a Braid program ---------------===//
//
// This file implements how a program's arguments and tables are bound to
// values: from .npy files, or generated from a seed. Generated values
// follow the conventions of DLRM training: dense features in [0, 1),
// weights uniform in +-1/sqrt(fan_in) (PyTorch's nn.Linear), tables uniform
// in +-1/sqrt(rows) (TorchRec), bags whose sizes average the table's pooling
// factor, with uniformly drawn rows. Everything works on a Signature; the
// func.func entry points at the end describe the function and report
// errors at it.
//
//===----------------------------------------------------------------------===//

#include "braid/Interp/Bindings.h"

#include "Kernels.h"
#include "braid/Interp/Npy.h"
#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

static llvm::Error bindingError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Fits `tensor`, read from `file`, to `spec`: same rank, static sizes and
/// a compatible element kind (floats to floats, integers to integers).
static llvm::Expected<HostTensor>
fitToSpec(HostTensor tensor, const ArgumentSpec &spec, StringRef file) {
  bool shapeOk = static_cast<int64_t>(spec.shape.size()) == tensor.getRank();
  for (size_t d = 0; shapeOk && d < spec.shape.size(); ++d)
    shapeOk = spec.shape[d] < 0 || spec.shape[d] == tensor.shape[d];
  if (!spec.kind || !shapeOk ||
      isFloatKind(*spec.kind) != isFloatKind(tensor.kind))
    return bindingError(file + ": holds " + tensor.describeType() + " but '" +
                        spec.type + "' is expected");
  tensor.kind = *spec.kind;
  tensor.round();
  return tensor;
}

static std::string joinPath(StringRef dir, const Twine &name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

llvm::Expected<TableMap>
mlir::braid::interp::bindTables(const Signature &signature,
                                const BindingOptions &options) {
  TableMap tables;
  for (const TableSpec &table : signature.tables) {
    if (!options.weightsDir) {
      tables[table.name] = TableData::generated(
          table.name, table.rows, table.dim, table.kind, options.seed);
      continue;
    }
    std::string path = joinPath(*options.weightsDir, table.name + ".npy");
    if (!llvm::sys::fs::exists(path))
      return bindingError("missing weights file " + path + " for table '" +
                          table.name + "'");
    llvm::Expected<HostTensor> tensor = readNpy(path);
    if (!tensor)
      return tensor.takeError();
    ArgumentSpec spec;
    spec.name = table.name;
    spec.kind = table.kind;
    spec.shape = {table.rows, table.dim};
    spec.type = ("tensor<" + Twine(table.rows) + "x" + Twine(table.dim) + "x" +
                 stringifyElementKind(table.kind) + ">")
                    .str();
    llvm::Expected<HostTensor> fitted =
        fitToSpec(std::move(*tensor), spec, path);
    if (!fitted)
      return fitted.takeError();
    tables[table.name] = TableData::loaded(std::move(*fitted));
  }
  return tables;
}

namespace {
/// Generates the arguments of one rank from a seed.
class ArgumentGenerator {
public:
  ArgumentGenerator(const Signature &signature, uint64_t seed, int64_t rank)
      : signature(signature), seed(seed), rank(rank) {}

  llvm::Expected<HostTensor> generate(unsigned index);

private:
  /// A stream of random numbers specific to `name` (and the rank, unless
  /// the argument is a parameter, which every rank shares).
  uint64_t streamFor(StringRef name, bool perRank) const {
    return mixBits(seed ^ hashName(name) ^ (perRank ? mixBits(rank + 1) : 0));
  }
  llvm::Expected<std::pair<HostTensor, HostTensor>> makeBags(StringRef table);

  const Signature &signature;
  uint64_t seed;
  int64_t rank;
  /// Indices and offsets made per table, so both arguments agree.
  llvm::StringMap<std::pair<HostTensor, HostTensor>> bags;
};
} // namespace

llvm::Expected<std::pair<HostTensor, HostTensor>>
ArgumentGenerator::makeBags(StringRef tableName) {
  auto cached = bags.find(tableName);
  if (cached != bags.end())
    return cached->second;
  const TableSpec *table = signature.findTable(tableName);
  std::optional<unsigned> offsetsArg =
      signature.findArgument((tableName + ".offsets").str());
  std::optional<unsigned> indicesArg =
      signature.findArgument((tableName + ".indices").str());
  const ArgumentSpec *offsetsSpec =
      offsetsArg ? &signature.arguments[*offsetsArg] : nullptr;
  const ArgumentSpec *indicesSpec =
      indicesArg ? &signature.arguments[*indicesArg] : nullptr;
  if (!table || !offsetsSpec || !indicesSpec ||
      offsetsSpec->shape.size() != 1 || indicesSpec->shape.size() != 1 ||
      !offsetsSpec->kind || !indicesSpec->kind ||
      isFloatKind(*offsetsSpec->kind) || isFloatKind(*indicesSpec->kind))
    return bindingError("cannot generate bags for '" + tableName +
                        "': expected a braid.table of that name and integer "
                        "vector arguments '" +
                        tableName + ".indices' and '" + tableName +
                        ".offsets'");
  if (offsetsSpec->shape[0] < 1)
    return bindingError("cannot generate '" + tableName +
                        ".offsets' of dynamic length; give --inputs");
  int64_t numBags = offsetsSpec->shape[0] - 1;
  int64_t staticIndices = indicesSpec->shape[0];
  if (!isAllocatable(offsetsSpec->shape) ||
      (staticIndices >= 0 && !isAllocatable(indicesSpec->shape)))
    return bindingError("cannot generate bags for '" + tableName +
                        "': more than " + Twine(kMaxTensorElements) +
                        " offsets or indices");
  uint64_t stream = streamFor(tableName, /*perRank=*/true);
  uint64_t counter = 0;
  auto next = [&]() { return mixBits(stream ^ mixBits(++counter)); };

  HostTensor offsets(*offsetsSpec->kind, {numBags + 1});
  if (staticIndices < 0) {
    // Bag sizes uniform in [0, 2 * pooling factor]: their mean is the
    // pooling factor.
    int64_t maxBag = std::llround(2 * table->poolingFactor);
    for (int64_t b = 0; b < numBags; ++b)
      offsets.data[b + 1] =
          offsets.data[b] + static_cast<double>(next() % (maxBag + 1));
  } else {
    // A fixed number of indices split at sorted random cut points.
    int64_t total = staticIndices;
    std::vector<int64_t> cuts;
    for (int64_t b = 0; b + 1 < numBags; ++b)
      cuts.push_back(total == 0 ? 0 : next() % (total + 1));
    std::sort(cuts.begin(), cuts.end());
    for (int64_t b = 0; b + 1 < numBags; ++b)
      offsets.data[b + 1] = cuts[b];
    offsets.data[numBags] = total;
  }
  int64_t numIndices = offsets.data[numBags];
  if (numIndices > kMaxTensorElements)
    return bindingError("cannot generate " + Twine(numIndices) +
                        " indices for '" + tableName + "': more than " +
                        Twine(kMaxTensorElements));
  HostTensor indices(*indicesSpec->kind, {numIndices});
  for (int64_t i = 0; i < numIndices; ++i)
    indices.data[i] = static_cast<double>(next() % table->rows);
  return bags[tableName] = std::make_pair(indices, offsets);
}

llvm::Expected<HostTensor> ArgumentGenerator::generate(unsigned index) {
  const ArgumentSpec &spec = signature.arguments[index];
  StringRef name(spec.name);
  if (!spec.ranked || !spec.kind)
    return bindingError("cannot generate argument " + Twine(index) + " '" +
                        name + "' of type '" + spec.type + "'");
  for (StringRef suffix : {".indices", ".offsets"}) {
    if (!name.ends_with(suffix))
      continue;
    llvm::Expected<std::pair<HostTensor, HostTensor>> made =
        makeBags(name.drop_back(suffix.size()));
    if (!made)
      return made.takeError();
    return suffix == ".indices" ? made->first : made->second;
  }
  if (!isFloatKind(*spec.kind))
    return bindingError("cannot generate integer argument " + Twine(index) +
                        " '" + name + "'; give --inputs");
  SmallVector<int64_t> shape(spec.shape.begin(), spec.shape.end());
  bool perSampleWeights = name.ends_with(".weights");
  if (perSampleWeights) {
    // Per-sample weights: one per index of the matching table.
    llvm::Expected<std::pair<HostTensor, HostTensor>> made =
        makeBags(name.drop_back(strlen(".weights")));
    if (!made)
      return made.takeError();
    shape = {made->first.getNumElements()};
  }
  if (!perSampleWeights && llvm::any_of(shape, [](int64_t s) { return s < 0; }))
    return bindingError("cannot generate argument " + Twine(index) + " '" +
                        name + "' of dynamic shape '" + spec.type +
                        "'; give --inputs");
  if (!isAllocatable(shape))
    return bindingError("cannot generate argument " + Twine(index) + " '" +
                        name + "' of type '" + spec.type + "': more than " +
                        Twine(kMaxTensorElements) + " elements");
  double low = 0, high = 1;
  if (spec.parameter) {
    // nn.Linear: uniform in +-1/sqrt(fan_in); a bias uses its weight's.
    int64_t fanIn = shape.size() >= 2 ? shape[1] : shape.empty() ? 1 : shape[0];
    if (name.ends_with(".bias"))
      if (std::optional<unsigned> weight =
              signature.findArgument(name.drop_back(5).str() + ".weight");
          weight && signature.arguments[*weight].shape.size() == 2)
        fanIn = signature.arguments[*weight].shape[1];
    high = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(fanIn, 1)));
    low = -high;
  }
  HostTensor tensor(*spec.kind, shape);
  uint64_t stream = streamFor(name, /*perRank=*/!spec.parameter);
  for (int64_t i = 0; i < tensor.getNumElements(); ++i)
    tensor.data[i] =
        low + (high - low) * unitInterval(mixBits(stream ^ mixBits(i)));
  tensor.round();
  return tensor;
}

llvm::Expected<RankValues>
mlir::braid::interp::bindArguments(const Signature &signature,
                                   const TableMap &tables,
                                   const BindingOptions &options) {
  (void)tables; // generated bags follow the signature's tables
  if (options.numRanks < 1)
    return bindingError("the number of ranks must be positive");
  RankValues args(options.numRanks);
  for (int64_t rank = 0; rank < options.numRanks; ++rank) {
    ArgumentGenerator generator(signature, options.seed, rank);
    for (auto [i, spec] : llvm::enumerate(signature.arguments)) {
      const std::optional<std::string> &dir =
          spec.parameter ? options.weightsDir : options.inputsDir;
      if (!dir) {
        llvm::Expected<HostTensor> value = generator.generate(i);
        if (!value)
          return value.takeError();
        args[rank].push_back(std::move(*value));
        continue;
      }
      std::string path = joinPath(*dir, spec.name + ".npy");
      std::string rankPath = joinPath(*dir, "rank" + std::to_string(rank) +
                                                "/" + spec.name + ".npy");
      if (!spec.parameter && llvm::sys::fs::exists(rankPath))
        path = rankPath;
      if (!llvm::sys::fs::exists(path))
        return bindingError("missing file " + path + " for argument " +
                            Twine(i) + " '" + spec.name + "'");
      llvm::Expected<HostTensor> tensor = readNpy(path);
      if (!tensor)
        return tensor.takeError();
      llvm::Expected<HostTensor> fitted =
          fitToSpec(std::move(*tensor), spec, path);
      if (!fitted)
        return fitted.takeError();
      args[rank].push_back(std::move(*fitted));
    }
  }
  return args;
}

//===----------------------------------------------------------------------===//
// func.func entry points
//===----------------------------------------------------------------------===//

std::string mlir::braid::interp::getArgumentName(func::FuncOp func,
                                                 unsigned index) {
  for (StringRef attrName :
       {BraidDialect::kInputAttrName, BraidDialect::kParamAttrName})
    if (auto name = func.getArgAttrOfType<StringAttr>(index, attrName))
      return name.str();
  return "arg" + std::to_string(index);
}

bool mlir::braid::interp::isParameter(func::FuncOp func, unsigned index) {
  return func.getArgAttr(index, BraidDialect::kParamAttrName) != nullptr;
}

std::vector<int64_t>
mlir::braid::interp::shardRanksOf(ReplicaGroupsAttr groups) {
  for (int64_t g = 0; g < groups.getNumGroups(); ++g)
    if (llvm::is_contained(groups.getGroup(g), 0))
      return std::vector<int64_t>(groups.getGroup(g).begin(),
                                  groups.getGroup(g).end());
  return {};
}

int64_t mlir::braid::interp::getShardDim(func::FuncOp func, unsigned index,
                                         bool isResult) {
  auto dim = isResult ? func.getResultAttrOfType<IntegerAttr>(
                            index, BraidDialect::kShardDimAttrName)
                      : func.getArgAttrOfType<IntegerAttr>(
                            index, BraidDialect::kShardDimAttrName);
  return dim ? dim.getInt() : 0;
}

int64_t ArgumentSpec::shardPositionOf(int64_t rank) const {
  if (shardRanks.empty())
    return -1;
  for (auto [position, member] : llvm::enumerate(shardRanks))
    if (member == rank)
      return position;
  // Groups of consecutive ranks: the same position in another group.
  return rank % int64_t(shardRanks.size());
}

FailureOr<func::FuncOp>
mlir::braid::interp::findEntryFunction(ModuleOp module) {
  if (auto forward = module.lookupSymbol<func::FuncOp>("forward"))
    return forward;
  func::FuncOp found;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal() || isPipelineCompanion(func))
      continue;
    if (found)
      return module.emitError() << "cannot tell which function to run: there "
                                   "is no @forward and more than one public "
                                   "function";
    found = func;
  }
  if (!found)
    return module.emitError() << "no function to run: expected @forward or "
                                 "one public function";
  return found;
}

static std::string printType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

Signature mlir::braid::interp::describeFunction(func::FuncOp func) {
  Signature signature;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    Type type = func.getArgument(i).getType();
    auto tensorType = dyn_cast<RankedTensorType>(type);
    ArgumentSpec spec;
    spec.name = getArgumentName(func, i);
    spec.type = printType(type);
    spec.parameter = isParameter(func, i);
    spec.ranked = tensorType || type.isIntOrIndexOrFloat();
    spec.kind = getElementKind(tensorType ? tensorType.getElementType() : type);
    if (tensorType)
      for (int64_t size : tensorType.getShape())
        spec.shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
    if (auto groups = func.getArgAttrOfType<ReplicaGroupsAttr>(
            i, BraidDialect::kParamShardAttrName)) {
      spec.shardRanks = shardRanksOf(groups);
      spec.shardDim = getShardDim(func, i);
    }
    signature.arguments.push_back(std::move(spec));
  }
  if (auto module = func->getParentOfType<ModuleOp>())
    for (auto table : module.getOps<TableOp>()) {
      TableSpec spec;
      spec.name = table.getSymName().str();
      spec.rows = table.getNumRows();
      spec.dim = table.getDim();
      // The verifier admits float tables only; f32 stands in otherwise.
      spec.kind =
          getElementKind(table.getElementType()).value_or(ElementKind::f32);
      spec.poolingFactor = table.getPoolingFactor().convertToDouble();
      signature.tables.push_back(std::move(spec));
    }
  return signature;
}

FailureOr<TableMap>
mlir::braid::interp::bindTables(func::FuncOp func,
                                const BindingOptions &options) {
  llvm::Expected<TableMap> tables = bindTables(describeFunction(func), options);
  if (!tables)
    return func.emitError() << llvm::toString(tables.takeError());
  return std::move(*tables);
}

FailureOr<RankValues>
mlir::braid::interp::bindArguments(func::FuncOp func, const TableMap &tables,
                                   const BindingOptions &options) {
  llvm::Expected<RankValues> args =
      bindArguments(describeFunction(func), tables, options);
  if (!args)
    return func.emitError() << llvm::toString(args.takeError());
  return std::move(*args);
}
