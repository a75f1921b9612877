//===- OutlineKernels.cpp - Generated CPU kernels in functions of 16 ------===//
//
// This file moves the lookup-side Braid ops of a function (embedding_bag,
// shard_embedding_bag, bucketize, combine_shards), sixteen at a time, into
// private functions before convert-braid-to-cpu lowers them, leaving a call
// behind.
//
// Why: a model with a thousand tables otherwise lowers to one function with
// a thousand kernels, and upstream passes that work a function at a time
// are superlinear in its size (one-shot bufferization and scf-to-cf split
// blocks and re-walk the function: 3x the tables took 14x the time), and
// one-shot bufferization is superlinear in the number of functions too.
// Groups of sixteen keep both small. The functions are internal and
// `noinline`, so that LLVM's inliner does not rebuild the one huge function
// either; a call per sixteen kernels costs nothing next to their lookups.
//
//===----------------------------------------------------------------------===//

#include "LowerExchanges.h"

#include "braid/Dialect/Braid/IR/Braid.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::braid;

/// Kernels per outlined function. Upstream passes are superlinear both in
/// a function's size and in the number of calls and functions of a module
/// (one-shot bufferization across function boundaries took 105 s for a
/// thousand one-kernel functions): sixteen keeps both small.
static constexpr unsigned kKernelsPerFunction = 16;

/// The table whose rows `op` reads through a function argument, if any.
static FlatSymbolRefAttr rowsReadBy(Operation *op) {
  if (auto bag = dyn_cast<EmbeddingBagOp>(op))
    return bag.getTableAttr();
  if (auto shard = dyn_cast<ShardEmbeddingBagOp>(op))
    return shard.getTableAttr();
  return {};
}

/// Splits the kernels of `caller`, in program order, into groups that can
/// move to the place of their last member: consecutive kernels of one block
/// whose results no op between them uses.
static SmallVector<SmallVector<Operation *>> groupKernels(func::FuncOp caller) {
  SmallVector<SmallVector<Operation *>> groups;
  caller.walk([&](Operation *op) {
    if (!isa<EmbeddingBagOp, ShardEmbeddingBagOp, BucketizeOp,
             CombineShardsOp>(op))
      return;
    bool joins = !groups.empty() &&
                 groups.back().size() < kKernelsPerFunction &&
                 groups.back().front()->getBlock() == op->getBlock();
    if (joins) {
      SmallVector<Operation *> &group = groups.back();
      llvm::SmallPtrSet<Operation *, 16> members(group.begin(), group.end());
      members.insert(op);
      // Every outside use of an earlier member must come after `op`.
      for (Operation *member : group)
        for (Operation *user : member->getUsers()) {
          Operation *inBlock = op->getBlock()->findAncestorOpInBlock(*user);
          if (!inBlock ||
              (!members.contains(inBlock) && !op->isBeforeInBlock(inBlock)))
            joins = false;
        }
    }
    if (joins)
      groups.back().push_back(op);
    else
      groups.push_back({op});
  });
  return groups;
}

/// The name of the function holding `group`: its caller's, then its first
/// kernel's op and table, made unique by the symbol table.
static std::string kernelName(func::FuncOp caller,
                              ArrayRef<Operation *> group) {
  std::string name = ("__braid_" + caller.getSymName() + "_" +
                      group.front()->getName().stripDialect())
                         .str();
  if (auto table = group.front()->getAttrOfType<FlatSymbolRefAttr>("table"))
    name += ("_" + table.getValue()).str();
  return name;
}

void mlir::braid::outlineKernels(CpuLoweringState &state) {
  ModuleOp module = state.module;
  MLIRContext *context = module.getContext();
  SymbolTable symbols(module);
  auto noinline = ArrayAttr::get(context, {StringAttr::get(context, "noinline")});
  auto internal =
      LLVM::LinkageAttr::get(context, LLVM::linkage::Linkage::Internal);
  for (auto caller : llvm::to_vector(module.getOps<func::FuncOp>())) {
    if (caller.isExternal() || caller.isPrivate())
      continue;
    for (SmallVector<Operation *> &group : groupKernels(caller)) {
      llvm::SmallPtrSet<Operation *, 16> members(group.begin(), group.end());
      // Arguments: the values the group reads from outside, then the rows
      // of each table it looks up. Results: what is used outside.
      llvm::SetVector<Value> arguments;
      llvm::MapVector<Attribute, Value> tables;
      SmallVector<Value> results;
      for (Operation *op : group) {
        for (Value operand : op->getOperands())
          if (!members.contains(operand.getDefiningOp()))
            arguments.insert(operand);
        if (FlatSymbolRefAttr table = rowsReadBy(op))
          tables.insert({table.getAttr(), state.tableArgument(op, table)});
        for (Value result : op->getResults())
          if (llvm::any_of(result.getUsers(), [&](Operation *user) {
                return !members.contains(user);
              }))
            results.push_back(result);
      }
      SmallVector<Value> operands(arguments.begin(), arguments.end());
      for (auto [name, rows] : tables)
        operands.push_back(rows);

      Location loc = group.back()->getLoc();
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      auto kernel = func::FuncOp::create(
          b, loc, kernelName(caller, group),
          FunctionType::get(context, ValueRange(operands).getTypes(),
                            ValueRange(results).getTypes()));
      symbols.insert(kernel);
      kernel.setPrivate();
      kernel->setAttr("passthrough", noinline);
      kernel->setAttr("llvm.linkage", internal);
      Block *body = kernel.addEntryBlock();
      IRMapping mapping;
      mapping.map(operands, body->getArguments());
      for (auto [index, entry] : llvm::enumerate(tables))
        state.tableArgs[{kernel, entry.first}] =
            body->getArgument(arguments.size() + index);
      b.setInsertionPointToStart(body);
      for (Operation *op : group)
        b.clone(*op, mapping);
      SmallVector<Value> returned;
      for (Value result : results)
        returned.push_back(mapping.lookup(result));
      func::ReturnOp::create(b, loc, returned);

      // The call takes the group's place: after every value it reads and
      // before every use of what it returns (groupKernels' condition).
      b.setInsertionPoint(group.back());
      auto call = func::CallOp::create(b, loc, kernel, operands);
      for (auto [result, replacement] : llvm::zip(results, call.getResults()))
        result.replaceAllUsesWith(replacement);
      for (Operation *op : llvm::reverse(group))
        op->erase();
    }
  }
}
