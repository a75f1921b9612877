//===- Interpreter.cpp - Reference semantics of Braid ---------------------===//
//
// This file implements runFunction: it walks a single-block function once and
// executes each operation for every simulated rank (lockstep). Besides the
// Braid ops it runs the few upstream ops Braid programs use: constants and
// index arithmetic (arith, tensor.splat), and the reshapes, slices and
// concatenations that bucketed collectives pack and unpack with. Every
// result is checked against its static type, so a kernel bug cannot hide
// behind a dynamic dim.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

namespace {
/// Runs one function for all ranks.
class LockstepInterpreter {
public:
  LockstepInterpreter(const TableMap &tables, int64_t numRanks)
      : tables(tables), numRanks(numRanks) {}
  /// An interpreter whose fused updates write `tables` and `state`.
  LockstepInterpreter(TableMap &tables, EmbeddingState &state,
                      int64_t numRanks)
      : tables(tables), numRanks(numRanks), writableTables(&tables),
        embeddingState(&state) {}

  FailureOr<RankValues> run(func::FuncOp func, const RankValues &args);

  /// Rank 0's value of every SSA value the last run computed.
  llvm::DenseMap<Value, HostTensor> takeRankZeroValues() {
    llvm::DenseMap<Value, HostTensor> result;
    for (auto &entry : values)
      result[entry.first] = std::move(entry.second.front());
    return result;
  }

private:
  /// Per-rank values of every SSA value computed so far.
  using PerRank = std::vector<HostTensor>;

  LogicalResult execute(Operation &op);
  LogicalResult checkAgainstType(Operation *op, Type type,
                                 const HostTensor &value, StringRef what);
  const PerRank &lookup(Value value) { return values.find(value)->second; }
  /// Applies `fn` to every rank's operands.
  LogicalResult
  perRank(Operation &op,
          const std::function<FailureOr<HostTensor>(int64_t)> &fn);
  LogicalResult runConstant(arith::ConstantOp op);
  LogicalResult runElementwise(Operation &op,
                               const std::function<double(double, double)> &fn);
  LogicalResult runCast(Operation &op);
  LogicalResult runBucketizeOp(BucketizeOp op);
  /// tensor.collapse_shape and tensor.expand_shape: the same elements in
  /// the static `type`'s shape.
  LogicalResult runReshape(Operation &op, Value source, RankedTensorType type);
  LogicalResult runConcat(tensor::ConcatOp op);
  LogicalResult runExtractSlice(tensor::ExtractSliceOp op);
  LogicalResult runInsertSlice(tensor::InsertSliceOp op);
  /// This rank's offsets of a slice: the static ones and the values of the
  /// dynamic.
  SmallVector<int64_t> rankOffsets(OffsetSizeAndStrideOpInterface op,
                                   int64_t rank);
  /// This rank's sizes of a slice, likewise.
  SmallVector<int64_t> rankSizes(OffsetSizeAndStrideOpInterface op,
                                 int64_t rank);
  /// `statics` with each dynamic entry replaced by the next of `dynamics`'
  /// values on `rank`.
  SmallVector<int64_t> rankValues(ArrayRef<int64_t> statics,
                                  ValueRange dynamics, int64_t rank);
  /// `lhs == rhs` (or `!=` when not `equal`) elementwise, as i1.
  LogicalResult runEquality(Operation &op, Value lhs, Value rhs, bool equal);
  /// The ops of the training step; failure() with no diagnostic never.
  std::optional<LogicalResult> executeTraining(Operation &op);
  /// Runs `fn` for every rank and stores its results as `op`'s.
  LogicalResult perRankMulti(
      Operation &op,
      const std::function<FailureOr<std::vector<HostTensor>>(int64_t)> &fn);
  /// The writable data of the table `op` updates, or a located error.
  FailureOr<std::pair<TableOp, TableData *>>
  lookupWritableTable(Operation *op, FlatSymbolRefAttr name);
  /// The table `op` names and its data, or a located error.
  FailureOr<std::pair<TableOp, const TableData *>>
  lookupTable(Operation *op, FlatSymbolRefAttr name);

  const TableMap &tables;
  int64_t numRanks;
  TableMap *writableTables = nullptr;
  EmbeddingState *embeddingState = nullptr;
  llvm::DenseMap<Value, PerRank> values;
};
} // namespace

LogicalResult LockstepInterpreter::checkAgainstType(Operation *op, Type type,
                                                    const HostTensor &value,
                                                    StringRef what) {
  if (auto token = dyn_cast<TokenType>(type))
    type = token.getValueType();
  Type elementType = type;
  ArrayRef<int64_t> staticShape;
  if (auto tensorType = dyn_cast<RankedTensorType>(type)) {
    elementType = tensorType.getElementType();
    staticShape = tensorType.getShape();
  }
  std::optional<ElementKind> kind = getElementKind(elementType);
  bool shapeOk = static_cast<int64_t>(staticShape.size()) == value.getRank();
  for (size_t d = 0; shapeOk && d < staticShape.size(); ++d)
    shapeOk = ShapedType::isDynamic(staticShape[d]) ||
              staticShape[d] == value.shape[d];
  if (!kind || *kind != value.kind || !shapeOk)
    return op->emitError() << what << " is " << value.describeType()
                           << " at run time, which does not fit its type "
                           << type;
  return success();
}

LogicalResult LockstepInterpreter::perRank(
    Operation &op, const std::function<FailureOr<HostTensor>(int64_t)> &fn) {
  PerRank results;
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    FailureOr<HostTensor> result = fn(rank);
    if (failed(result))
      return failure();
    results.push_back(std::move(*result));
  }
  values[op.getResult(0)] = std::move(results);
  return success();
}

LogicalResult LockstepInterpreter::runConstant(arith::ConstantOp op) {
  Attribute attr = op.getValue();
  HostTensor tensor;
  std::optional<ElementKind> kind;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    auto type = cast<ShapedType>(dense.getType());
    kind = getElementKind(type.getElementType());
    if (kind) {
      tensor = HostTensor(*kind, type.getShape());
      int64_t i = 0;
      if (isFloatKind(*kind))
        for (APFloat value : dense.getValues<APFloat>())
          tensor.data[i++] = value.convertToDouble();
      else
        for (APInt value : dense.getValues<APInt>())
          tensor.data[i++] = *kind == ElementKind::i1
                                 ? static_cast<double>(value.getZExtValue())
                                 : static_cast<double>(value.getSExtValue());
    }
  } else if (auto floatAttr = dyn_cast<FloatAttr>(attr)) {
    kind = getElementKind(floatAttr.getType());
    if (kind) {
      tensor = HostTensor(*kind, {});
      tensor.data[0] = floatAttr.getValueAsDouble();
    }
  } else if (auto intAttr = dyn_cast<IntegerAttr>(attr)) {
    kind = getElementKind(intAttr.getType());
    if (kind) {
      tensor = HostTensor(*kind, {});
      tensor.data[0] = *kind == ElementKind::i1
                           ? static_cast<double>(intAttr.getValue().getZExtValue())
                           : static_cast<double>(intAttr.getValue().getSExtValue());
    }
  }
  if (!kind)
    return op.emitError() << "the reference semantics cannot hold constant "
                          << attr;
  tensor.round();
  values[op.getResult()] = PerRank(numRanks, tensor);
  return success();
}

LogicalResult LockstepInterpreter::runElementwise(
    Operation &op, const std::function<double(double, double)> &fn) {
  return perRank(op, [&](int64_t rank) -> FailureOr<HostTensor> {
    const HostTensor &lhs = lookup(op.getOperand(0))[rank];
    const HostTensor &rhs = lookup(op.getOperand(1))[rank];
    if (lhs.shape != rhs.shape)
      return op.emitError() << "operands are " << lhs.describeType()
                            << " and " << rhs.describeType()
                            << " at run time";
    HostTensor result = lhs;
    for (size_t i = 0; i < result.data.size(); ++i)
      result.data[i] = fn(lhs.data[i], rhs.data[i]);
    result.round();
    return result;
  });
}

LogicalResult LockstepInterpreter::runCast(Operation &op) {
  Type resultType = getElementTypeOrSelf(op.getResult(0).getType());
  std::optional<ElementKind> kind = getElementKind(resultType);
  if (!kind)
    return op.emitError() << "the reference semantics cannot cast to "
                          << resultType;
  return perRank(op, [&](int64_t rank) -> FailureOr<HostTensor> {
    HostTensor result = lookup(op.getOperand(0))[rank];
    if (!isFloatKind(*kind) && isFloatKind(result.kind))
      for (double &value : result.data)
        value = std::trunc(value);
    result.kind = *kind;
    result.round();
    return result;
  });
}

FailureOr<std::pair<TableOp, const TableData *>>
LockstepInterpreter::lookupTable(Operation *op, FlatSymbolRefAttr name) {
  auto table = SymbolTable::lookupNearestSymbolFrom<TableOp>(op, name);
  auto data = tables.find(name.getValue());
  if (!table || data == tables.end())
    return op->emitError() << "no data for table '" << name.getValue() << "'";
  return std::make_pair(table, &data->second);
}

LogicalResult LockstepInterpreter::runBucketizeOp(BucketizeOp op) {
  FailureOr<std::pair<TableOp, const TableData *>> table =
      lookupTable(op, op.getTableAttr());
  if (failed(table))
    return failure();
  std::array<PerRank, 3> results;
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    FailureOr<std::array<HostTensor, 3>> routed =
        runBucketize(op, table->first, lookup(op.getIndices())[rank],
                     lookup(op.getOffsets())[rank], rank, numRanks);
    if (failed(routed))
      return failure();
    for (int i = 0; i < 3; ++i)
      results[i].push_back(std::move((*routed)[i]));
  }
  for (int i = 0; i < 3; ++i)
    values[op->getResult(i)] = std::move(results[i]);
  return success();
}

LogicalResult LockstepInterpreter::execute(Operation &op) {
  auto operandsOf = [&](ValueRange operands, int64_t rank) {
    SmallVector<HostTensor> result;
    for (Value operand : operands)
      result.push_back(lookup(operand)[rank]);
    return result;
  };
  auto collective = [&](Operation &collectiveOp,
                        Value input) -> LogicalResult {
    FailureOr<std::vector<HostTensor>> results =
        isa<PermuteOp>(collectiveOp)
            ? runPermute(cast<PermuteOp>(collectiveOp), lookup(input))
            : runCollective(cast<CollectiveOpInterface>(collectiveOp),
                            lookup(input));
    if (failed(results))
      return failure();
    values[collectiveOp.getResult(0)] = std::move(*results);
    return success();
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](EmbeddingBagOp bag) {
        auto table = tables.find(bag.getTable());
        if (table == tables.end())
          return LogicalResult(bag.emitError()
                               << "no data for table '" << bag.getTable()
                               << "'");
        return perRank(op, [&](int64_t rank) {
          const HostTensor *weights =
              bag.getPerSampleWeights()
                  ? &lookup(bag.getPerSampleWeights())[rank]
                  : nullptr;
          return runEmbeddingBag(bag, table->second,
                                 lookup(bag.getIndices())[rank],
                                 lookup(bag.getOffsets())[rank], weights);
        });
      })
      .Case([&](BucketizeOp bucketize) { return runBucketizeOp(bucketize); })
      .Case([&](SliceBagsOp slice) {
        return perRankMulti(op, [&](int64_t rank)
                                    -> FailureOr<std::vector<HostTensor>> {
          FailureOr<std::array<HostTensor, 2>> range =
              runSliceBags(slice, lookup(slice.getIndices())[rank],
                           lookup(slice.getOffsets())[rank]);
          if (failed(range))
            return failure();
          return std::vector<HostTensor>{std::move((*range)[0]),
                                         std::move((*range)[1])};
        });
      })
      .Case([&](AllToAllVOp exchange) {
        FailureOr<std::vector<HostTensor>> results = runAllToAllV(
            exchange, lookup(exchange.getInput()),
            lookup(exchange.getSendCounts()));
        if (failed(results))
          return failure();
        values[exchange.getResult()] = std::move(*results);
        return success();
      })
      .Case([&](AllToAllVStartOp exchange) {
        // The exchange happens at the start; its wait hands the result on.
        FailureOr<std::vector<HostTensor>> results = runAllToAllV(
            exchange, lookup(exchange.getInput()),
            lookup(exchange.getSendCounts()));
        if (failed(results))
          return failure();
        values[exchange.getToken()] = std::move(*results);
        return success();
      })
      .Case([&](FusedAllToAllVStartOp fused) {
        // Each member exchanges as it would alone; the tokens hand the
        // results on. A narrower wire type must hold every value.
        std::optional<Type> wire = fused.getWireType();
        double bound =
            wire ? std::ldexp(1.0, wire->getIntOrFloatBitWidth() - 1) : 0;
        ValueRange narrowed = wire ? fused.getInputs() : ValueRange();
        for (auto [m, input] : llvm::enumerate(narrowed))
          for (auto [rank, sent] : llvm::enumerate(lookup(input)))
            for (double value : sent.data)
              if (value < -bound || value >= bound) {
                fused.emitError()
                    << "rank " << rank << ": member " << m << " sends "
                    << int64_t(value) << ", which does not fit the wire "
                    << "type " << *wire;
                return failure();
              }
        for (auto [input, counts, token] : llvm::zip_equal(
                 fused.getInputs(), fused.getSendCounts(), fused.getTokens())) {
          FailureOr<std::vector<HostTensor>> results =
              runAllToAllV(fused, lookup(input), lookup(counts));
          if (failed(results))
            return failure();
          values[token] = std::move(*results);
        }
        return success();
      })
      .Case([&](ShardEmbeddingBagOp bag) {
        FailureOr<std::pair<TableOp, const TableData *>> table =
            lookupTable(bag, bag.getTableAttr());
        if (failed(table))
          return failure();
        return perRank(op, [&](int64_t rank) {
          return runShardEmbeddingBag(bag, table->first, *table->second, rank,
                                      lookup(bag.getValues())[rank],
                                      lookup(bag.getLengths())[rank]);
        });
      })
      .Case([&](CombineShardsOp combine) {
        FailureOr<std::pair<TableOp, const TableData *>> table =
            lookupTable(combine, combine.getTableAttr());
        if (failed(table))
          return failure();
        return perRank(op, [&](int64_t rank) {
          return runCombineShards(combine, table->first,
                                  lookup(combine.getReceived())[rank],
                                  lookup(combine.getOffsets())[rank]);
        });
      })
      .Case([&](LinearOp linear) {
        return perRank(op, [&](int64_t rank) {
          return runLinear(linear, lookup(linear.getInput())[rank],
                           lookup(linear.getWeight())[rank],
                           lookup(linear.getBias())[rank]);
        });
      })
      .Case([&](InteractionOp interaction) {
        return perRank(op, [&](int64_t rank) {
          return runInteraction(interaction,
                                lookup(interaction.getDense())[rank],
                                operandsOf(interaction.getEmbeddings(), rank));
        });
      })
      .Case<RankOp, WorldSizeOp>([&](auto rankOp) {
        return perRank(op, [&](int64_t rank) -> FailureOr<HostTensor> {
          HostTensor scalar(ElementKind::index, {});
          scalar.data[0] = isa<RankOp>(op) ? rank : numRanks;
          return scalar;
        });
      })
      .Case([&](PermuteOp permute) {
        return collective(op, permute.getInput());
      })
      .Case([&](CollectiveOpInterface collectiveOp) {
        return collective(op, collectiveOp.getInput());
      })
      .Case([&](WaitOp wait) {
        // A copy first: inserting the result may grow the map that the
        // token's value lives in.
        PerRank result = lookup(wait.getToken());
        values[wait.getResult()] = std::move(result);
        return success();
      })
      .Case([&](arith::ConstantOp constant) { return runConstant(constant); })
      .Case<arith::AddFOp, arith::AddIOp>([&](auto) {
        return runElementwise(op, [](double a, double b) { return a + b; });
      })
      .Case<arith::SubFOp, arith::SubIOp>([&](auto) {
        return runElementwise(op, [](double a, double b) { return a - b; });
      })
      .Case<arith::MulFOp, arith::MulIOp>([&](auto) {
        return runElementwise(op, [](double a, double b) { return a * b; });
      })
      .Case<arith::MinUIOp, arith::MaxUIOp>([&](auto) -> LogicalResult {
        // Index arithmetic on sizes (a chunk's rows): non-negative integers.
        for (Value operand : op.getOperands())
          for (const HostTensor &value : lookup(operand))
            if (llvm::any_of(value.data, [](double e) { return e < 0; }))
              return op.emitError() << "the reference semantics takes the "
                                       "unsigned minimum and maximum of "
                                       "non-negative integers only";
        bool min = isa<arith::MinUIOp>(op);
        return runElementwise(op, [min](double a, double b) {
          return min ? std::min(a, b) : std::max(a, b);
        });
      })
      .Case([&](arith::DivFOp) {
        return runElementwise(op, [](double a, double b) { return a / b; });
      })
      .Case<arith::DivUIOp, arith::RemUIOp>([&](auto) -> LogicalResult {
        // Index arithmetic on ranks and sizes: non-negative integers.
        bool remainder = isa<arith::RemUIOp>(op);
        for (Value operand : op.getOperands())
          for (const HostTensor &value : lookup(operand))
            for (double element : value.data)
              if (element < 0 || (operand == op.getOperand(1) && element == 0))
                return op.emitError() << "the reference semantics divides "
                                         "non-negative integers by positive "
                                         "ones only";
        return runElementwise(op, [remainder](double a, double b) {
          auto x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
          return double(remainder ? x % y : x / y);
        });
      })
      .Case<arith::IndexCastOp, arith::SIToFPOp, arith::FPToSIOp,
            arith::ExtFOp, arith::TruncFOp>([&](auto) { return runCast(op); })
      .Case<arith::TruncIOp, arith::ExtSIOp>([&](auto) -> LogicalResult {
        // Between i64 and i32: truncation wraps (two's complement), sign
        // extension keeps the value.
        auto from = getElementTypeOrSelf(op.getOperand(0).getType());
        auto to = getElementTypeOrSelf(op.getResult(0).getType());
        auto isI32OrI64 = [](Type type) {
          return type.isInteger(32) || type.isInteger(64);
        };
        if (!isI32OrI64(from) || !isI32OrI64(to))
          return op.emitError() << "the reference semantics runs '"
                                << op.getName() << "' between i64 and i32 only";
        return perRank(op, [&](int64_t rank) -> FailureOr<HostTensor> {
          HostTensor result = lookup(op.getOperand(0))[rank];
          result.kind = to.isInteger(32) ? ElementKind::i32 : ElementKind::i64;
          // Wrapped modulo 2^32 into [-2^31, 2^31), in doubles: exact for
          // every integer a HostTensor holds, and defined for all of them.
          if (to.isInteger(32))
            for (double &value : result.data) {
              value -= std::floor(value / 4294967296.0) * 4294967296.0;
              if (value >= 2147483648.0)
                value -= 4294967296.0;
            }
          return result;
        });
      })
      .Case([&](tensor::DimOp dim) {
        return perRank(op, [&](int64_t rank) -> FailureOr<HostTensor> {
          const HostTensor &source = lookup(dim.getSource())[rank];
          int64_t index = int64_t(lookup(dim.getIndex())[rank].data[0]);
          if (index < 0 || index >= source.getRank())
            return dim.emitError() << "dimension " << index << " of a rank-"
                                   << source.getRank() << " tensor";
          HostTensor size(ElementKind::index, {});
          size.data[0] = double(source.shape[index]);
          return size;
        });
      })
      .Case([&](tensor::FromElementsOp build) {
        return perRank(op, [&](int64_t rank) -> FailureOr<HostTensor> {
          std::optional<ElementKind> kind =
              getElementKind(build.getType().getElementType());
          if (!kind)
            return build.emitError() << "the reference semantics has no "
                                        "element kind for "
                                     << build.getType();
          HostTensor result(*kind, build.getType().getShape());
          for (auto [i, element] : llvm::enumerate(build.getElements()))
            result.data[i] = lookup(element)[rank].data[0];
          return result;
        });
      })
      .Case([&](tensor::ExtractOp extract) {
        return perRank(op, [&](int64_t rank) -> FailureOr<HostTensor> {
          const HostTensor &source = lookup(extract.getTensor())[rank];
          int64_t flat = 0;
          for (auto [d, index] : llvm::enumerate(extract.getIndices())) {
            int64_t at = int64_t(lookup(index)[rank].data[0]);
            if (at < 0 || at >= source.shape[d])
              return extract.emitError()
                     << "index " << at << " along dimension " << d << " of "
                     << source.describeType();
            flat = flat * source.shape[d] + at;
          }
          HostTensor element(source.kind, {});
          element.data[0] = source.data[flat];
          return element;
        });
      })
      .Case([&](tensor::SplatOp splat) {
        auto type = splat.getType();
        return perRank(op, [&](int64_t rank) -> FailureOr<HostTensor> {
          const HostTensor &scalar = lookup(splat.getInput())[rank];
          SmallVector<int64_t> shape(type.getShape());
          auto sizes = splat.getDynamicSizes().begin();
          for (int64_t &size : shape)
            if (ShapedType::isDynamic(size)) {
              size = int64_t(lookup(*sizes++)[rank].data[0]);
              if (size < 0)
                return splat.emitError() << "a dynamic size is negative";
            }
          FailureOr<HostTensor> result = allocate(splat, scalar.kind, shape);
          if (succeeded(result))
            std::fill(result->data.begin(), result->data.end(), scalar.data[0]);
          return result;
        });
      })
      .Case<tensor::CollapseShapeOp, tensor::ExpandShapeOp>([&](auto reshape) {
        return runReshape(op, reshape.getSrc(), reshape.getResultType());
      })
      .Case([&](tensor::ConcatOp concat) { return runConcat(concat); })
      .Case([&](tensor::ExtractSliceOp slice) { return runExtractSlice(slice); })
      .Case([&](tensor::InsertSliceOp insert) { return runInsertSlice(insert); })
      .Case([&](tensor::CastOp cast) {
        // The result type is checked against the value like every result.
        return perRank(op, [&](int64_t rank) {
          return FailureOr<HostTensor>(lookup(cast.getSource())[rank]);
        });
      })
      .Case([&](arith::CmpIOp compare) -> LogicalResult {
        using Predicate = arith::CmpIPredicate;
        Predicate predicate = compare.getPredicate();
        if (predicate != Predicate::eq && predicate != Predicate::ne)
          return compare.emitError() << "the reference semantics compares "
                                        "integers with eq and ne only";
        return runEquality(op, compare.getLhs(), compare.getRhs(),
                           predicate == Predicate::eq);
      })
      .Default([&](Operation *other) {
        if (std::optional<LogicalResult> result = executeTraining(*other))
          return *result;
        return LogicalResult(other->emitError()
                             << "the reference semantics cannot run '"
                             << other->getName() << "'");
      });
}

LogicalResult LockstepInterpreter::runReshape(Operation &op, Value source,
                                              RankedTensorType type) {
  // One dynamic size at most: the elements left by the static ones.
  if (llvm::count_if(type.getShape(), ShapedType::isDynamic) > 1)
    return op.emitError() << "the reference semantics reshapes to at most "
                             "one dynamic size, not "
                          << type;
  int64_t staticElements = 1;
  for (int64_t size : type.getShape())
    if (!ShapedType::isDynamic(size))
      staticElements *= size;
  return perRank(op, [&](int64_t rank) -> FailureOr<HostTensor> {
    HostTensor result = lookup(source)[rank];
    int64_t elements = result.getNumElements();
    bool fits = type.hasStaticShape()
                    ? elements == staticElements
                    : (staticElements > 0 && elements % staticElements == 0) ||
                          (staticElements == 0 && elements == 0);
    if (!fits)
      return op.emitError() << "reshapes " << result.describeType() << " to "
                            << type;
    result.shape.assign(type.getShape().begin(), type.getShape().end());
    for (int64_t &size : result.shape)
      if (ShapedType::isDynamic(size))
        size = staticElements ? elements / staticElements : 0;
    return result;
  });
}

LogicalResult LockstepInterpreter::runConcat(tensor::ConcatOp op) {
  int64_t dim = op.getDim();
  return perRank(*op, [&](int64_t rank) -> FailureOr<HostTensor> {
    std::vector<HostTensor> parts;
    for (Value input : op.getInputs()) {
      const HostTensor &part = lookup(input)[rank];
      if (!parts.empty())
        for (int64_t d = 0; d < part.getRank(); ++d)
          if (d != dim && part.shape[d] != parts.front().shape[d])
            return op.emitError()
                   << "concatenates " << parts.front().describeType()
                   << " and " << part.describeType() << " along dimension "
                   << dim;
      parts.push_back(part);
    }
    return HostTensor::concat(parts, dim);
  });
}

LogicalResult LockstepInterpreter::runExtractSlice(tensor::ExtractSliceOp op) {
  if (!op.hasUnitStride() ||
      op.getResultType().getRank() != op.getSourceType().getRank())
    return op.emitError() << "the reference semantics extracts slices of "
                             "unit strides and the source's rank only";
  return perRank(*op, [&](int64_t rank) -> FailureOr<HostTensor> {
    SmallVector<int64_t> offsets = rankOffsets(op, rank);
    // Dynamic sizes (a fused combine's local bags) are index values.
    SmallVector<int64_t> sizes = rankSizes(op, rank);
    HostTensor result = lookup(op.getSource())[rank];
    for (int64_t d = 0; d < result.getRank(); ++d) {
      if (offsets[d] < 0 || sizes[d] < 0 ||
          offsets[d] + sizes[d] > result.shape[d])
        return op.emitError() << "slices [" << offsets[d] << ", "
                              << offsets[d] + sizes[d] << ") of dimension "
                              << d << " of " << result.describeType();
      result = result.slice(d, offsets[d], sizes[d]);
    }
    return result;
  });
}

SmallVector<int64_t>
LockstepInterpreter::rankValues(ArrayRef<int64_t> statics, ValueRange dynamics,
                                int64_t rank) {
  SmallVector<int64_t> values(statics);
  auto dynamic = dynamics.begin();
  for (int64_t &value : values)
    if (ShapedType::isDynamic(value))
      value = int64_t(lookup(*dynamic++)[rank].data[0]);
  return values;
}

SmallVector<int64_t>
LockstepInterpreter::rankOffsets(OffsetSizeAndStrideOpInterface op,
                                 int64_t rank) {
  return rankValues(op.getStaticOffsets(), op.getOffsets(), rank);
}

SmallVector<int64_t>
LockstepInterpreter::rankSizes(OffsetSizeAndStrideOpInterface op,
                               int64_t rank) {
  return rankValues(op.getStaticSizes(), op.getSizes(), rank);
}

LogicalResult LockstepInterpreter::runEquality(Operation &op, Value lhs,
                                               Value rhs, bool equal) {
  return perRank(op, [&](int64_t rank) -> FailureOr<HostTensor> {
    const HostTensor &a = lookup(lhs)[rank];
    const HostTensor &b = lookup(rhs)[rank];
    if (a.shape != b.shape)
      return op.emitError() << "operands are " << a.describeType() << " and "
                            << b.describeType() << " at run time";
    HostTensor result(ElementKind::i1, a.shape);
    for (size_t i = 0; i < a.data.size(); ++i)
      result.data[i] = (a.data[i] == b.data[i]) == equal;
    return result;
  });
}

LogicalResult LockstepInterpreter::runInsertSlice(tensor::InsertSliceOp op) {
  RankedTensorType sourceType = op.getSourceType();
  if (!op.hasUnitStride() || !op.getSizes().empty() ||
      sourceType.getRank() != op.getResultType().getRank())
    return op.emitError() << "the reference semantics inserts slices of "
                             "static sizes, unit strides and the "
                             "destination's rank only";
  return perRank(*op, [&](int64_t rank) -> FailureOr<HostTensor> {
    SmallVector<int64_t> offsets = rankOffsets(op, rank);
    const HostTensor &source = lookup(op.getSource())[rank];
    HostTensor result = lookup(op.getDest())[rank];
    int64_t dims = result.getRank();
    for (int64_t d = 0; d < dims; ++d)
      if (offsets[d] < 0 || offsets[d] + source.shape[d] > result.shape[d])
        return op.emitError() << "inserts [" << offsets[d] << ", "
                              << offsets[d] + source.shape[d]
                              << ") of dimension " << d << " into "
                              << result.describeType();
    // Row-major strides of the destination; each source element's place.
    SmallVector<int64_t> strides(dims, 1);
    for (int64_t d = dims - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * result.shape[d + 1];
    SmallVector<int64_t> index(dims, 0);
    for (double element : source.data) {
      int64_t at = 0;
      for (int64_t d = 0; d < dims; ++d)
        at += (offsets[d] + index[d]) * strides[d];
      result.data[at] = element;
      for (int64_t d = dims - 1; d >= 0; --d) {
        if (++index[d] < source.shape[d])
          break;
        index[d] = 0;
      }
    }
    return result;
  });
}

LogicalResult LockstepInterpreter::perRankMulti(
    Operation &op,
    const std::function<FailureOr<std::vector<HostTensor>>(int64_t)> &fn) {
  std::vector<PerRank> results(op.getNumResults());
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    FailureOr<std::vector<HostTensor>> rankResults = fn(rank);
    if (failed(rankResults))
      return failure();
    for (auto [index, result] : llvm::enumerate(*rankResults))
      results[index].push_back(std::move(result));
  }
  for (auto [result, perRankValues] : llvm::zip(op.getResults(), results))
    values[result] = std::move(perRankValues);
  return success();
}

FailureOr<std::pair<TableOp, TableData *>>
LockstepInterpreter::lookupWritableTable(Operation *op,
                                         FlatSymbolRefAttr name) {
  if (!writableTables)
    return op->emitError() << "'" << op->getName()
                           << "' updates a table: run it as a training step";
  auto table = SymbolTable::lookupNearestSymbolFrom<TableOp>(op, name);
  auto data = writableTables->find(name.getValue());
  if (!table || data == writableTables->end())
    return op->emitError() << "no data for table '" << name.getValue() << "'";
  return std::make_pair(table, &data->second);
}

std::optional<LogicalResult>
LockstepInterpreter::executeTraining(Operation &op) {
  auto tensors = [&](ValueRange operands, int64_t rank) {
    std::vector<HostTensor> result;
    for (Value operand : operands)
      result.push_back(lookup(operand)[rank]);
    return result;
  };
  auto asVector = [](auto array) {
    return std::vector<HostTensor>(std::make_move_iterator(array.begin()),
                                   std::make_move_iterator(array.end()));
  };
  using Results = FailureOr<std::vector<HostTensor>>;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(&op)
      .Case([&](BceWithLogitsOp loss) {
        return perRankMulti(op, [&](int64_t rank) -> Results {
          auto results = runBceWithLogits(loss, lookup(loss.getLogits())[rank],
                                          lookup(loss.getLabels())[rank]);
          if (failed(results))
            return failure();
          return asVector(std::move(*results));
        });
      })
      .Case([&](LinearGradOp grad) {
        return perRankMulti(op, [&](int64_t rank) -> Results {
          auto results = runLinearGrad(
              grad, lookup(grad.getInput())[rank],
              lookup(grad.getWeight())[rank], lookup(grad.getResult())[rank],
              lookup(grad.getResultGrad())[rank]);
          if (failed(results))
            return failure();
          return asVector(std::move(*results));
        });
      })
      .Case([&](InteractionGradOp grad) {
        return perRankMulti(op, [&](int64_t rank) -> Results {
          std::vector<HostTensor> features = {lookup(grad.getDense())[rank]};
          for (HostTensor &embedding : tensors(grad.getEmbeddings(), rank))
            features.push_back(std::move(embedding));
          return runInteractionGrad(grad, lookup(grad.getResultGrad())[rank],
                                    features);
        });
      })
      .Case([&](CombineShardsGradOp grad) -> LogicalResult {
        FailureOr<std::pair<TableOp, const TableData *>> table =
            lookupTable(grad, grad.getTableAttr());
        if (failed(table))
          return failure();
        return perRank(op, [&](int64_t rank) {
          return runCombineShardsGrad(grad, table->first,
                                      lookup(grad.getResultGrad())[rank],
                                      lookup(grad.getOffsets())[rank]);
        });
      })
      .Case([&](EmbeddingBagGradOp grad) -> LogicalResult {
        FailureOr<std::pair<TableOp, const TableData *>> table =
            lookupTable(grad, grad.getTableAttr());
        if (failed(table))
          return failure();
        const TableData &data = *table->second;
        return perRank(op, [&](int64_t rank) -> FailureOr<HostTensor> {
          FailureOr<RowGradients> rows = runBagRowGradients(
              grad, grad.getMode(), data, lookup(grad.getIndices())[rank],
              lookup(grad.getOffsets())[rank],
              lookup(grad.getPooledGrad())[rank]);
          if (failed(rows))
            return failure();
          FailureOr<HostTensor> result = allocate(
              grad, ElementKind::f32, {data.getNumRows(), data.getDim()});
          if (failed(result))
            return failure();
          for (const auto &[row, gradient] : *rows)
            llvm::copy(gradient, result->data.begin() + row * data.getDim());
          result->round();
          return result;
        });
      })
      .Case([&](EmbeddingBagUpdateOp update) -> LogicalResult {
        FailureOr<std::pair<TableOp, TableData *>> table =
            lookupWritableTable(update, update.getTableAttr());
        if (failed(table))
          return failure();
        OptimizerConfig config = readOptimizerPart(update.getOptimizer());
        for (int64_t rank = 0; rank < numRanks; ++rank) {
          FailureOr<RowGradients> rows = runBagRowGradients(
              update, update.getMode(), *table->second,
              lookup(update.getIndices())[rank],
              lookup(update.getOffsets())[rank],
              lookup(update.getPooledGrad())[rank]);
          if (failed(rows))
            return failure();
          applyRowUpdates(*table->second, 0, *rows, config,
                          (*embeddingState)[update.getTable()]);
        }
        return success();
      })
      .Case([&](ShardEmbeddingBagUpdateOp update) -> LogicalResult {
        FailureOr<std::pair<TableOp, TableData *>> table =
            lookupWritableTable(update, update.getTableAttr());
        if (failed(table))
          return failure();
        OptimizerConfig config = readOptimizerPart(update.getOptimizer());
        // Each rank's rows are its own shard's: updating them one rank
        // after another is what the ranks do at once.
        SmallVector<RowGradients> perRankRows;
        for (int64_t rank = 0; rank < numRanks; ++rank) {
          FailureOr<RowGradients> rows = runShardRowGradients(
              update, table->first, *table->second, rank,
              lookup(update.getValues())[rank],
              lookup(update.getLengths())[rank],
              lookup(update.getPooledGrad())[rank]);
          if (failed(rows))
            return failure();
          perRankRows.push_back(std::move(*rows));
        }
        for (auto [rank, rows] : llvm::enumerate(perRankRows))
          if (std::optional<TableShard> shard =
                  getShardOnRank(table->first, rank))
            applyRowUpdates(*table->second, shard->colOffset, rows, config,
                            (*embeddingState)[update.getTable()]);
        return success();
      })
      .Case([&](TableUpdateOp update) -> LogicalResult {
        FailureOr<std::pair<TableOp, TableData *>> table =
            lookupWritableTable(update, update.getTableAttr());
        if (failed(table))
          return failure();
        // The replicas hold one table here: every rank must bring the same
        // summed gradient, which is then applied once.
        const PerRank &grads = lookup(update.getTableGrad());
        for (int64_t rank = 1; rank < numRanks; ++rank)
          if (grads[rank].data != grads[0].data)
            return update.emitError()
                   << "rank " << rank << "'s gradient of replicated table '"
                   << update.getTable() << "' differs from rank 0's";
        const HostTensor &grad = grads.front();
        int64_t dim = table->second->getDim();
        RowGradients rows;
        for (int64_t row = 0; row < table->second->getNumRows(); ++row) {
          auto begin = grad.data.begin() + row * dim;
          if (std::any_of(begin, begin + dim, [](double g) { return g != 0; }))
            rows[row].assign(begin, begin + dim);
        }
        applyRowUpdates(*table->second, 0, rows,
                        readOptimizerPart(update.getOptimizer()),
                        (*embeddingState)[update.getTable()]);
        return success();
      })
      .Case([&](DenseUpdateOp update) {
        return perRankMulti(op, [&](int64_t rank) {
          return runDenseUpdate(update, lookup(update.getParam())[rank],
                                lookup(update.getGrad())[rank],
                                lookup(update.getStep())[rank],
                                tensors(update.getState(), rank));
        });
      })
      .Case([&](FusedDenseUpdateOp update) {
        return perRankMulti(op, [&](int64_t rank) {
          return runFusedDenseUpdate(update, tensors(update.getParams(), rank),
                                     lookup(update.getGrads())[rank],
                                     lookup(update.getStep())[rank],
                                     tensors(update.getState(), rank));
        });
      })
      .Case([&](arith::NegFOp) {
        return perRank(op, [&](int64_t rank) {
          HostTensor result = lookup(op.getOperand(0))[rank];
          for (double &value : result.data)
            value = -value;
          return FailureOr<HostTensor>(std::move(result));
        });
      })
      .Case([&](arith::CmpFOp compare) -> LogicalResult {
        if (compare.getPredicate() != arith::CmpFPredicate::OEQ)
          return compare.emitError() << "the reference semantics compares "
                                        "floats with oeq only";
        return runEquality(op, compare.getLhs(), compare.getRhs(), true);
      })
      .Case([&](arith::SelectOp select) -> LogicalResult {
        return perRank(op, [&](int64_t rank) -> FailureOr<HostTensor> {
          const HostTensor &condition = lookup(select.getCondition())[rank];
          HostTensor result = lookup(select.getTrueValue())[rank];
          const HostTensor &other = lookup(select.getFalseValue())[rank];
          // A scalar condition picks a whole operand.
          bool scalar = !isa<ShapedType>(select.getCondition().getType());
          if ((!scalar && condition.shape != result.shape) ||
              other.shape != result.shape)
            return select.emitError() << "operands have different shapes at "
                                         "run time";
          for (size_t i = 0; i < result.data.size(); ++i)
            if (condition.data[scalar ? 0 : i] == 0)
              result.data[i] = other.data[i];
          return result;
        });
      })
      .Default([](Operation *) { return std::nullopt; });
}

FailureOr<RankValues> LockstepInterpreter::run(func::FuncOp func,
                                               const RankValues &args) {
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return func.emitError() << "the reference semantics runs functions with "
                               "one block";
  Block &entry = func.getBody().front();
  for (const std::vector<HostTensor> &rankArgs : args)
    if (rankArgs.size() != entry.getNumArguments())
      return func.emitError() << "expected " << entry.getNumArguments()
                              << " arguments, got " << rankArgs.size();
  for (BlockArgument arg : entry.getArguments()) {
    PerRank perRankArgs;
    for (int64_t rank = 0; rank < numRanks; ++rank) {
      const HostTensor &value = args[rank][arg.getArgNumber()];
      if (failed(checkAgainstType(func, arg.getType(), value,
                                  "argument " +
                                      std::to_string(arg.getArgNumber()))))
        return failure();
      perRankArgs.push_back(value);
    }
    values[arg] = std::move(perRankArgs);
  }
  for (Operation &op : entry) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      RankValues results(numRanks);
      for (int64_t rank = 0; rank < numRanks; ++rank)
        for (Value operand : ret.getOperands())
          results[rank].push_back(lookup(operand)[rank]);
      return results;
    }
    if (op.getNumRegions() != 0)
      return op.emitError() << "the reference semantics cannot run ops with "
                               "regions";
    if (failed(execute(op)))
      return failure();
    for (OpResult result : op.getResults())
      for (int64_t rank = 0; rank < numRanks; ++rank)
        if (failed(checkAgainstType(&op, result.getType(),
                                    lookup(result)[rank],
                                    "result " +
                                        std::to_string(result.getResultNumber()))))
          return failure();
  }
  return func.emitError() << "function has no return";
}

FailureOr<RankValues>
mlir::braid::interp::runFunction(func::FuncOp func, const RankValues &args,
                                 const TableMap &tables) {
  if (args.empty())
    return func.emitError() << "the reference semantics needs at least one "
                               "rank";
  return LockstepInterpreter(tables, args.size()).run(func, args);
}

FailureOr<RankValues> mlir::braid::interp::runTrainingFunction(
    func::FuncOp func, const RankValues &args, TableMap &tables,
    EmbeddingState &state) {
  if (args.empty())
    return func.emitError() << "the reference semantics needs at least one "
                               "rank";
  return LockstepInterpreter(tables, state, args.size()).run(func, args);
}

FailureOr<llvm::DenseMap<Value, HostTensor>>
mlir::braid::interp::runFunctionRecording(func::FuncOp func,
                                          ArrayRef<HostTensor> args,
                                          const TableMap &tables) {
  LockstepInterpreter interpreter(tables, 1);
  if (failed(interpreter.run(func, RankValues{std::vector<HostTensor>(
                                       args.begin(), args.end())})))
    return failure();
  return interpreter.takeRankZeroValues();
}
