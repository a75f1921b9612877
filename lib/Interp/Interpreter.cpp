//===- Interpreter.cpp - Reference semantics of Braid ---------------------===//
//
// This file implements runFunction: it walks a single-block function once and
// executes each operation for every simulated rank (lockstep). Besides the
// Braid ops it runs the few upstream ops Braid programs use for constants
// and index arithmetic (arith, tensor.splat). Every result is checked
// against its static type, so a kernel bug cannot hide behind a dynamic dim.
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
  /// The table `op` names and its data, or a located error.
  FailureOr<std::pair<TableOp, const TableData *>>
  lookupTable(Operation *op, FlatSymbolRefAttr name);

  const TableMap &tables;
  int64_t numRanks;
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
      .Case([&](AllToAllVOp exchange) {
        FailureOr<std::vector<HostTensor>> results = runAllToAllV(
            exchange, lookup(exchange.getInput()),
            lookup(exchange.getSendCounts()));
        if (failed(results))
          return failure();
        values[exchange.getResult()] = std::move(*results);
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
        values[wait.getResult()] = lookup(wait.getToken());
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
      .Case([&](arith::DivFOp) {
        return runElementwise(op, [](double a, double b) { return a / b; });
      })
      .Case<arith::IndexCastOp, arith::SIToFPOp, arith::FPToSIOp,
            arith::ExtFOp, arith::TruncFOp>([&](auto) { return runCast(op); })
      .Case([&](tensor::SplatOp splat) {
        auto type = splat.getType();
        if (!type.hasStaticShape())
          return LogicalResult(splat.emitError()
                               << "the reference semantics needs a static "
                                  "splat shape");
        return perRank(op, [&](int64_t rank) -> FailureOr<HostTensor> {
          const HostTensor &scalar = lookup(splat.getInput())[rank];
          FailureOr<HostTensor> result =
              allocate(splat, scalar.kind, type.getShape());
          if (succeeded(result))
            std::fill(result->data.begin(), result->data.end(), scalar.data[0]);
          return result;
        });
      })
      .Default([&](Operation *other) {
        return other->emitError()
               << "the reference semantics cannot run '" << other->getName()
               << "'";
      });
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
