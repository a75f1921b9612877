//===- Checks.cpp - Run-time checks in generated kernels ------------------===//
//
// This file builds the run-time checks that generated kernels make on the
// data they read (indices inside the table, consistent offsets): a branch
// that calls an abort function the target provides.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/BraidToLoops/Checks.h"
#include "braid/Conversion/BraidToLoops/KernelNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

void mlir::braid::emitIndexCheck(OpBuilder &b, Location loc,
                                 func::FuncOp indexError, Value row,
                                 Value rows) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value low = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, zero);
  Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, rows);
  emitAbortIf(b, loc, indexError, arith::OrIOp::create(b, loc, low, high),
              row, rows);
}

void mlir::braid::emitAbortIf(OpBuilder &b, Location loc, func::FuncOp fn,
                              Value condition, Value first, Value second) {
  scf::IfOp::create(b, loc, condition, [&](OpBuilder &tb, Location tloc) {
    Type i64 = tb.getI64Type();
    func::CallOp::create(
        tb, tloc, fn,
        ValueRange{arith::IndexCastOp::create(tb, tloc, i64, first),
                   arith::IndexCastOp::create(tb, tloc, i64, second)});
    scf::YieldOp::create(tb, tloc);
  });
}

/// Builds `body`(i) for every i in [0, count) as one scf.forall: on the
/// CUDA target a kernel, so the data checked is read where it lives.
static void emitParallelCheck(
    OpBuilder &b, Location loc, Value count,
    function_ref<void(OpBuilder &, Location, Value)> body) {
  auto loop = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{OpFoldResult(count)}, ValueRange{},
      /*mapping=*/std::nullopt);
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  body(lb, loc, loop.getInductionVar(0));
}

void mlir::braid::emitIndicesCheck(OpBuilder &b, Location loc,
                                   func::FuncOp indexError, Value indices,
                                   Value rows, bool parallel) {
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value count = tensor::DimOp::create(b, loc, indices, c0);
  if (parallel) {
    emitParallelCheck(b, withKernelSuffix(loc, "indices_check"), count,
                      [&](OpBuilder &lb, Location lloc, Value i) {
      Value raw = tensor::ExtractOp::create(lb, lloc, indices, i);
      emitIndexCheck(
          lb, lloc, indexError,
          arith::IndexCastOp::create(lb, lloc, lb.getIndexType(), raw), rows);
    });
    return;
  }
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  scf::ForOp::create(
      b, loc, c0, count, c1, ValueRange{},
      [&](OpBuilder &lb, Location lloc, Value i, ValueRange) {
        Value raw = tensor::ExtractOp::create(lb, lloc, indices, i);
        emitIndexCheck(lb, lloc, indexError,
                       arith::IndexCastOp::create(lb, lloc, lb.getIndexType(), raw),
                       rows);
        scf::YieldOp::create(lb, lloc);
      });
}

void mlir::braid::emitSameRowsCheck(OpBuilder &b, Location loc,
                                    func::FuncOp rowsError,
                                    ValueRange features, Value rows) {
  for (Value feature : features) {
    if (!cast<RankedTensorType>(feature.getType()).isDynamicDim(0))
      continue;
    Value count = tensor::DimOp::create(b, loc, feature, 0);
    emitAbortIf(b, loc, rowsError,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, count,
                                      rows),
                count, rows);
  }
}

void mlir::braid::emitOffsetsCheck(OpBuilder &b, Location loc,
                                   func::FuncOp offsetsError, Value offsets,
                                   Value indices, bool parallel) {
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  auto offsetAt = [&](OpBuilder &ob, Location oloc, Value at) -> Value {
    return arith::IndexCastOp::create(
        ob, oloc, ob.getIndexType(),
        tensor::ExtractOp::create(ob, oloc, offsets, at));
  };
  Value count = tensor::DimOp::create(b, loc, offsets, c0);
  // At least one entry: the verifier sees to it for a static shape, and a
  // dynamic one (a per-rank program's) is checked here, as entry -1, before
  // entry 0 and the last are read.
  emitAbortIf(b, loc, offsetsError,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, count,
                                    c1),
              arith::ConstantIndexOp::create(b, loc, -1), c0);
  Value last = arith::SubIOp::create(b, loc, count, c1);
  if (parallel) {
    // Each entry in an iteration of its own: entry 0 must be 0, the last
    // the number of indices, and every other at least the one before.
    Value numIndices = tensor::DimOp::create(b, loc, indices, c0);
    emitParallelCheck(
        b, withKernelSuffix(loc, "offsets_check"), count,
        [&](OpBuilder &lb, Location lloc, Value i) {
          Value current = offsetAt(lb, lloc, i);
          // Entry `at` must hold `expected`.
          auto expect = [&](Value at, Value expected) {
            Value here = arith::CmpIOp::create(lb, lloc,
                                               arith::CmpIPredicate::eq, i, at);
            Value wrong = arith::CmpIOp::create(
                lb, lloc, arith::CmpIPredicate::ne, current, expected);
            emitAbortIf(lb, lloc, offsetsError,
                        arith::AndIOp::create(lb, lloc, here, wrong), i,
                        current);
          };
          expect(c0, c0);
          expect(last, numIndices);
          Value later = arith::CmpIOp::create(
              lb, lloc, arith::CmpIPredicate::sgt, i, c0);
          scf::IfOp::create(lb, lloc, later, [&](OpBuilder &tb, Location tloc) {
            Value previous =
                offsetAt(tb, tloc, arith::SubIOp::create(tb, tloc, i, c1));
            emitAbortIf(tb, tloc, offsetsError,
                        arith::CmpIOp::create(tb, tloc,
                                              arith::CmpIPredicate::slt,
                                              current, previous),
                        i, current);
            scf::YieldOp::create(tb, tloc);
          });
        });
    return;
  }
  // Entry 0 must be 0 and the last the number of indices.
  Value first = offsetAt(b, loc, c0);
  emitAbortIf(b, loc, offsetsError,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, first, c0),
              c0, first);
  Value end = offsetAt(b, loc, last);
  emitAbortIf(b, loc, offsetsError,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, end,
                                    tensor::DimOp::create(b, loc, indices, c0)),
              last, end);
  scf::ForOp::create(
      b, loc, c1, count, c1, ValueRange{},
      [&](OpBuilder &lb, Location lloc, Value i, ValueRange) {
        Value previous =
            offsetAt(lb, lloc, arith::SubIOp::create(lb, lloc, i, c1));
        Value current = offsetAt(lb, lloc, i);
        emitAbortIf(lb, lloc, offsetsError,
                    arith::CmpIOp::create(lb, lloc, arith::CmpIPredicate::slt,
                                          current, previous),
                    i, current);
        scf::YieldOp::create(lb, lloc);
      });
}
