//===- Bindings.cpp - Inputs and weights of a Braid program ---------------===//
//
// This file implements how the reference semantics binds a function's
// arguments and a module's tables to values: from .npy files, or generated
// from a seed. Generated values follow the conventions of DLRM training:
// dense features in [0, 1), weights uniform in +-1/sqrt(fan_in) (PyTorch's
// nn.Linear), tables uniform in +-1/sqrt(rows) (TorchRec), bags whose sizes
// average the table's pooling factor, with uniformly drawn rows.
//
//===----------------------------------------------------------------------===//

#include "braid/Interp/Bindings.h"

#include "Kernels.h"
#include "braid/Interp/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

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

FailureOr<func::FuncOp> mlir::braid::interp::findEntryFunction(ModuleOp module) {
  if (auto forward = module.lookupSymbol<func::FuncOp>("forward"))
    return forward;
  func::FuncOp found;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal())
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

/// Fits `tensor`, read from `file`, to `type`: same rank, static sizes and a
/// compatible element kind (floats to floats, integers to integers).
static FailureOr<HostTensor> fitToType(Operation *anchor, HostTensor tensor,
                                       Type type, StringRef file) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  Type elementType = tensorType ? tensorType.getElementType() : type;
  ArrayRef<int64_t> shape = tensorType ? tensorType.getShape()
                                       : ArrayRef<int64_t>();
  std::optional<ElementKind> kind = getElementKind(elementType);
  bool shapeOk = static_cast<int64_t>(shape.size()) == tensor.getRank();
  for (size_t d = 0; shapeOk && d < shape.size(); ++d)
    shapeOk = ShapedType::isDynamic(shape[d]) || shape[d] == tensor.shape[d];
  if (!kind || !shapeOk || isFloatKind(*kind) != isFloatKind(tensor.kind))
    return anchor->emitError() << file << ": holds " << tensor.describeType()
                               << " but " << type << " is expected";
  tensor.kind = *kind;
  tensor.round();
  return tensor;
}

static bool fileExists(const std::string &path) {
  return llvm::sys::fs::exists(path);
}

static std::string joinPath(StringRef dir, const Twine &name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

static FailureOr<HostTensor> readFile(Operation *anchor,
                                      const std::string &path) {
  llvm::Expected<HostTensor> tensor = readNpy(path);
  if (!tensor)
    return anchor->emitError() << llvm::toString(tensor.takeError());
  return std::move(*tensor);
}

FailureOr<TableMap> mlir::braid::interp::bindTables(ModuleOp module,
                                                    const BindingOptions &options) {
  TableMap tables;
  for (auto table : module.getOps<TableOp>()) {
    std::optional<ElementKind> kind = getElementKind(table.getElementType());
    if (!kind)
      return table.emitError() << "unsupported table element type";
    if (!options.weightsDir) {
      tables[table.getSymName()] =
          TableData::generated(table.getSymName(), table.getNumRows(),
                               table.getDim(), *kind, options.seed);
      continue;
    }
    std::string path = joinPath(*options.weightsDir, table.getSymName() + ".npy");
    if (!fileExists(path))
      return table.emitError() << "missing weights file " << path
                               << " for table '" << table.getSymName() << "'";
    FailureOr<HostTensor> tensor = readFile(table, path);
    if (failed(tensor))
      return failure();
    FailureOr<HostTensor> fitted =
        fitToType(table, std::move(*tensor), table.getTableType(), path);
    if (failed(fitted))
      return failure();
    tables[table.getSymName()] = TableData::loaded(std::move(*fitted));
  }
  return tables;
}

namespace {
/// Generates the arguments of one rank from a seed.
class ArgumentGenerator {
public:
  ArgumentGenerator(func::FuncOp func, const TableMap &tables, uint64_t seed,
                    int64_t rank)
      : func(func), tables(tables), seed(seed), rank(rank) {}

  FailureOr<HostTensor> generate(unsigned index);

private:
  /// A stream of random numbers specific to `name` (and the rank, unless
  /// the argument is a parameter, which every rank shares).
  uint64_t streamFor(StringRef name, bool perRank) const {
    return mixBits(seed ^ hashName(name) ^ (perRank ? mixBits(rank + 1) : 0));
  }
  FailureOr<std::pair<HostTensor, HostTensor>> makeBags(StringRef table);
  std::optional<unsigned> findArgument(StringRef name) {
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (getArgumentName(func, i) == name)
        return i;
    return std::nullopt;
  }

  func::FuncOp func;
  const TableMap &tables;
  uint64_t seed;
  int64_t rank;
  /// Indices and offsets made per table, so both arguments agree.
  llvm::StringMap<std::pair<HostTensor, HostTensor>> bags;
};
} // namespace

FailureOr<std::pair<HostTensor, HostTensor>>
ArgumentGenerator::makeBags(StringRef tableName) {
  auto cached = bags.find(tableName);
  if (cached != bags.end())
    return cached->second;
  auto module = func->getParentOfType<ModuleOp>();
  auto table = module ? module.lookupSymbol<TableOp>(tableName) : TableOp();
  std::optional<unsigned> offsetsArg = findArgument((tableName + ".offsets").str());
  std::optional<unsigned> indicesArg = findArgument((tableName + ".indices").str());
  if (!table || !offsetsArg || !indicesArg)
    return func.emitError() << "cannot generate bags for '" << tableName
                            << "': expected a braid.table of that name and "
                               "arguments '"
                            << tableName << ".indices' and '" << tableName
                            << ".offsets'";
  auto offsetsType =
      cast<RankedTensorType>(func.getArgument(*offsetsArg).getType());
  auto indicesType =
      cast<RankedTensorType>(func.getArgument(*indicesArg).getType());
  if (offsetsType.isDynamicDim(0))
    return func.emitError() << "cannot generate '" << tableName
                            << ".offsets' of dynamic length; give --inputs";
  int64_t numBags = offsetsType.getDimSize(0) - 1;
  if (!isAllocatable(offsetsType.getShape()) ||
      (!indicesType.isDynamicDim(0) && !isAllocatable(indicesType.getShape())))
    return func.emitError() << "cannot generate bags for '" << tableName
                            << "': more than " << kMaxTensorElements
                            << " offsets or indices";
  uint64_t stream = streamFor(tableName, /*perRank=*/true);
  uint64_t counter = 0;
  auto next = [&]() { return mixBits(stream ^ mixBits(++counter)); };

  HostTensor offsets(*getElementKind(offsetsType.getElementType()),
                     {numBags + 1});
  if (indicesType.isDynamicDim(0)) {
    // Bag sizes uniform in [0, 2 * pooling factor]: their mean is the
    // pooling factor.
    int64_t maxBag = std::llround(
        2 * table.getPoolingFactor().convertToDouble());
    for (int64_t b = 0; b < numBags; ++b)
      offsets.data[b + 1] =
          offsets.data[b] + static_cast<double>(next() % (maxBag + 1));
  } else {
    // A fixed number of indices split at sorted random cut points.
    int64_t total = indicesType.getDimSize(0);
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
    return func.emitError() << "cannot generate " << numIndices
                            << " indices for '" << tableName << "': more than "
                            << kMaxTensorElements;
  HostTensor indices(*getElementKind(indicesType.getElementType()),
                     {numIndices});
  for (int64_t i = 0; i < numIndices; ++i)
    indices.data[i] = static_cast<double>(next() % table.getNumRows());
  return bags[tableName] = std::make_pair(indices, offsets);
}

FailureOr<HostTensor> ArgumentGenerator::generate(unsigned index) {
  std::string name = getArgumentName(func, index);
  Type type = func.getArgument(index).getType();
  auto tensorType = dyn_cast<RankedTensorType>(type);
  std::optional<ElementKind> kind =
      getElementKind(tensorType ? tensorType.getElementType() : type);
  if (!tensorType || !kind)
    return func.emitError() << "cannot generate argument " << index << " '"
                            << name << "' of type " << type;
  StringRef nameRef(name);
  for (StringRef suffix : {".indices", ".offsets"}) {
    if (!nameRef.ends_with(suffix))
      continue;
    FailureOr<std::pair<HostTensor, HostTensor>> made =
        makeBags(nameRef.drop_back(suffix.size()));
    if (failed(made))
      return failure();
    return suffix == ".indices" ? made->first : made->second;
  }
  if (!isFloatKind(*kind))
    return func.emitError() << "cannot generate integer argument " << index
                            << " '" << name << "'; give --inputs";
  SmallVector<int64_t> shape = llvm::to_vector(tensorType.getShape());
  if (nameRef.ends_with(".weights")) {
    // Per-sample weights: one per index of the matching table.
    FailureOr<std::pair<HostTensor, HostTensor>> made =
        makeBags(nameRef.drop_back(strlen(".weights")));
    if (failed(made))
      return failure();
    shape = {made->first.getNumElements()};
  }
  if (!tensorType.hasStaticShape() && !nameRef.ends_with(".weights"))
    return func.emitError() << "cannot generate argument " << index << " '"
                            << name << "' of dynamic shape " << type
                            << "; give --inputs";
  if (!isAllocatable(shape))
    return func.emitError() << "cannot generate argument " << index << " '"
                            << name << "' of type " << type << ": more than "
                            << kMaxTensorElements << " elements";
  bool parameter = isParameter(func, index);
  double low = 0, high = 1;
  if (parameter) {
    // nn.Linear: uniform in +-1/sqrt(fan_in); a bias uses its weight's.
    int64_t fanIn = shape.size() >= 2 ? shape[1] : shape.empty() ? 1 : shape[0];
    if (nameRef.ends_with(".bias"))
      if (auto weight = findArgument(nameRef.drop_back(5).str() + ".weight"))
        if (auto weightType = dyn_cast<RankedTensorType>(
                func.getArgument(*weight).getType());
            weightType && weightType.getRank() == 2)
          fanIn = weightType.getDimSize(1);
    high = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(fanIn, 1)));
    low = -high;
  }
  HostTensor tensor(*kind, shape);
  uint64_t stream = streamFor(name, /*perRank=*/!parameter);
  for (int64_t i = 0; i < tensor.getNumElements(); ++i)
    tensor.data[i] = low + (high - low) * unitInterval(mixBits(stream ^ mixBits(i)));
  tensor.round();
  return tensor;
}

FailureOr<RankValues>
mlir::braid::interp::bindArguments(func::FuncOp func, const TableMap &tables,
                                   const BindingOptions &options) {
  if (options.numRanks < 1)
    return func.emitError() << "the number of ranks must be positive";
  RankValues args(options.numRanks);
  for (int64_t rank = 0; rank < options.numRanks; ++rank) {
    ArgumentGenerator generator(func, tables, options.seed, rank);
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      std::string name = getArgumentName(func, i);
      const std::optional<std::string> &dir =
          isParameter(func, i) ? options.weightsDir : options.inputsDir;
      if (!dir) {
        FailureOr<HostTensor> value = generator.generate(i);
        if (failed(value))
          return failure();
        args[rank].push_back(std::move(*value));
        continue;
      }
      std::string path = joinPath(*dir, name + ".npy");
      std::string rankPath =
          joinPath(*dir, "rank" + std::to_string(rank) + "/" + name + ".npy");
      if (!isParameter(func, i) && fileExists(rankPath))
        path = rankPath;
      if (!fileExists(path))
        return func.emitError() << "missing file " << path << " for argument "
                                << i << " '" << name << "'";
      FailureOr<HostTensor> tensor = readFile(func, path);
      if (failed(tensor))
        return failure();
      FailureOr<HostTensor> fitted = fitToType(
          func, std::move(*tensor), func.getArgument(i).getType(), path);
      if (failed(fitted))
        return failure();
      args[rank].push_back(std::move(*fitted));
    }
  }
  return args;
}
