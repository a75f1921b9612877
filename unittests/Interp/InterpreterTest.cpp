//===- InterpreterTest.cpp - Tests of the reference semantics -------------===//
//
// This file tests the interpreter through its C++ API: bindings generated
// from a seed are deterministic, parameters are shared by all ranks while
// inputs differ, and global and per-rank results agree with hand-computed
// values on random data.
//
//===----------------------------------------------------------------------===//

#include "braid/Interp/Bindings.h"
#include "braid/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace mlir::braid;
using namespace mlir::braid::interp;

namespace {
class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  OwningOpRef<ModuleOp> parse(StringRef text) {
    return parseSourceString<ModuleOp>(text, &context);
  }
  MLIRContext context;
};

constexpr StringLiteral kModel = R"mlir(
braid.table @t : tensor<30x4xf32> pooling_factor = 3.0
func.func @forward(%dense: tensor<5x3xf32> {braid.input = "dense"},
                   %idx: tensor<?xi64> {braid.input = "t.indices"},
                   %off: tensor<6xi64> {braid.input = "t.offsets"},
                   %w: tensor<4x3xf32> {braid.param = "layer.weight"},
                   %b: tensor<4xf32> {braid.param = "layer.bias"}) -> (tensor<5x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>) {
  %e = braid.embedding_bag @t(%idx, %off) sum : (tensor<?xi64>, tensor<6xi64>) -> tensor<5x4xf32>
  %h = braid.linear %dense, %w, %b none : tensor<5x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<5x4xf32>
  %s = braid.all_reduce sum %h : tensor<5x4xf32>
  return %e, %h, %s : tensor<5x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>
}
)mlir";
} // namespace

TEST_F(InterpreterTest, GeneratedBindingsAreDeterministicAndShaped) {
  OwningOpRef<ModuleOp> module = parse(kModel);
  ASSERT_TRUE(module);
  FailureOr<func::FuncOp> func = findEntryFunction(*module);
  ASSERT_TRUE(succeeded(func));
  BindingOptions options;
  options.numRanks = 3;
  options.seed = 11;
  FailureOr<TableMap> tables = bindTables(*func, options);
  ASSERT_TRUE(succeeded(tables));
  FailureOr<RankValues> first = bindArguments(*func, *tables, options);
  FailureOr<RankValues> second = bindArguments(*func, *tables, options);
  ASSERT_TRUE(succeeded(first) && succeeded(second));
  for (int64_t rank = 0; rank < 3; ++rank)
    for (size_t i = 0; i < (*first)[rank].size(); ++i)
      EXPECT_EQ((*first)[rank][i].data, (*second)[rank][i].data);

  // Offsets are a valid bag layout over the generated indices.
  const HostTensor &indices = (*first)[0][1];
  const HostTensor &offsets = (*first)[0][2];
  EXPECT_EQ(offsets.data.front(), 0);
  EXPECT_EQ(offsets.data.back(), indices.getNumElements());
  for (double index : indices.data)
    EXPECT_TRUE(index >= 0 && index < 30);
  // Parameters are shared by every rank; inputs are not.
  EXPECT_EQ((*first)[0][3].data, (*first)[2][3].data);
  EXPECT_NE((*first)[0][0].data, (*first)[2][0].data);
  // nn.Linear initialization: |w| <= 1/sqrt(fan_in).
  for (double w : (*first)[0][3].data)
    EXPECT_LE(std::abs(w), 1 / std::sqrt(3.0) + 1e-7);
}

TEST_F(InterpreterTest, SignaturesRoundTripThroughJsonAndBindAlike) {
  OwningOpRef<ModuleOp> module = parse(kModel);
  ASSERT_TRUE(module);
  func::FuncOp func = *findEntryFunction(*module);
  Signature described = describeFunction(func);
  ASSERT_EQ(described.arguments.size(), 5u);
  EXPECT_EQ(described.arguments[1].shape, (SmallVector<int64_t, 4>{-1}));
  EXPECT_TRUE(described.arguments[3].parameter);
  ASSERT_EQ(described.tables.size(), 1u);
  EXPECT_EQ(described.tables[0].rows, 30);
  EXPECT_EQ(described.tables[0].poolingFactor, 3.0);

  // Through text, as a manifest carries it.
  std::string text =
      llvm::formatv("{0}", llvm::json::Value(signatureToJson(described)));
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  ASSERT_TRUE(bool(json));
  llvm::Expected<Signature> read = signatureFromJson(*json, "global");
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  EXPECT_FALSE(compareSignatures(described, *read));

  // Both bind the same values: a compiled artifact generates exactly the
  // reference semantics' inputs.
  BindingOptions options;
  options.numRanks = 2;
  options.seed = 7;
  TableMap tables = *bindTables(func, options);
  RankValues fromFunc = *bindArguments(func, tables, options);
  llvm::Expected<RankValues> fromJson = bindArguments(*read, tables, options);
  ASSERT_TRUE(bool(fromJson));
  for (int64_t rank = 0; rank < 2; ++rank)
    for (size_t i = 0; i < fromFunc[rank].size(); ++i)
      EXPECT_EQ(fromFunc[rank][i].data, (*fromJson)[rank][i].data);

  // A different signature is named, and bad JSON names its path.
  Signature other = *read;
  other.arguments[0].shape = {6, 3};
  std::optional<std::string> why = compareSignatures(described, other);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "its argument 0 is input 'dense' f32[6, 3], not input "
                  "'dense' f32[5, 3]");
  llvm::json::Object broken = signatureToJson(described);
  (*broken.getArray("tables"))[0].getAsObject()->erase("rows");
  llvm::Expected<Signature> bad =
      signatureFromJson(llvm::json::Value(std::move(broken)), "global");
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "global.tables[0]: needs a 'name', positive 'rows' and 'dim', a "
            "float 'dtype' and a finite, non-negative 'pooling_factor'");
}

TEST_F(InterpreterTest, ResultsMatchAHandWrittenOracle) {
  OwningOpRef<ModuleOp> module = parse(kModel);
  ASSERT_TRUE(module);
  func::FuncOp func = *findEntryFunction(*module);
  for (uint64_t seed : {1u, 2u, 3u}) {
    BindingOptions options;
    options.numRanks = 2;
    options.seed = seed;
    TableMap tables = *bindTables(func, options);
    RankValues args = *bindArguments(func, tables, options);
    FailureOr<RankValues> results = runFunction(func, args, tables);
    ASSERT_TRUE(succeeded(results));
    const TableData &table = tables.find("t")->second;
    for (int64_t rank = 0; rank < 2; ++rank) {
      const std::vector<HostTensor> &in = args[rank];
      const std::vector<HostTensor> &out = (*results)[rank];
      for (int64_t bag = 0; bag < 5; ++bag)
        for (int64_t c = 0; c < 4; ++c) {
          double expected = 0;
          for (int64_t i = in[2].data[bag]; i < in[2].data[bag + 1]; ++i)
            expected += table.get(in[1].data[i], c);
          EXPECT_NEAR(out[0].data[bag * 4 + c], expected, 1e-5);
          double linear = in[4].data[c];
          for (int64_t k = 0; k < 3; ++k)
            linear += in[0].data[bag * 3 + k] * in[3].data[c * 3 + k];
          EXPECT_NEAR(out[1].data[bag * 4 + c], linear, 1e-5);
          // all_reduce over the two ranks' linear outputs.
          EXPECT_NEAR(out[2].data[bag * 4 + c],
                      (*results)[0][1].data[bag * 4 + c] +
                          (*results)[1][1].data[bag * 4 + c],
                      1e-5);
        }
    }
  }
}

TEST_F(InterpreterTest, GeneratedTablesAreBoundedAndStable) {
  TableData table = TableData::generated("big", 40000000, 128, ElementKind::f32, 0);
  double bound = 1 / std::sqrt(40000000.0);
  for (int64_t row : {int64_t(0), int64_t(12345678), int64_t(39999999)})
    for (int64_t col : {0, 127}) {
      double value = table.get(row, col);
      EXPECT_LE(std::abs(value), bound);
      EXPECT_EQ(value, table.get(row, col));
    }
  TableData other = TableData::generated("big2", 40000000, 128, ElementKind::f32, 0);
  EXPECT_NE(table.get(5, 5), other.get(5, 5));
}

TEST_F(InterpreterTest, WrongArgumentCountIsAnError) {
  OwningOpRef<ModuleOp> module = parse(kModel);
  ASSERT_TRUE(module);
  std::string message;
  context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  func::FuncOp func = *findEntryFunction(*module);
  RankValues args(1);
  EXPECT_TRUE(failed(runFunction(func, args, TableMap())));
  EXPECT_EQ(message, "expected 5 arguments, got 0");
}
