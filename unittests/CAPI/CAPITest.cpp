//===- CAPITest.cpp - Tests of Braid's C API ------------------------------===//
//
// The C API (include/braid-c/Braid.h) answers bad requests with a failed
// result and a message, never an abort, and gives braid-sim's figures.
//
//===----------------------------------------------------------------------===//

#include "braid-c/Braid.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

#include <string>

namespace {
struct Collected {
  std::string output, errors;
};

void appendOutput(MlirStringRef text, void *userData) {
  static_cast<Collected *>(userData)->output.append(text.data, text.length);
}

void appendErrors(MlirStringRef text, void *userData) {
  static_cast<Collected *>(userData)->errors.append(text.data, text.length);
}

MlirStringRef toRef(const std::string &text) {
  return mlirStringRefCreate(text.data(), text.size());
}

TEST(CAPI, SimulatesACollective) {
  Collected collected;
  MlirLogicalResult result = braidSimulateCollective(
      toRef("all_reduce"), 1 << 26, 16, 2, toRef("dgx-h100"), appendOutput,
      appendErrors, &collected);
  ASSERT_TRUE(mlirLogicalResultIsSuccess(result)) << collected.errors;
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(collected.output);
  ASSERT_TRUE(bool(json));
  std::optional<double> time = json->getAsObject()->getNumber("time_us");
  ASSERT_TRUE(time.has_value());
  EXPECT_GT(*time, 0);
}

TEST(CAPI, RefusesABadCollective) {
  Collected collected;
  MlirLogicalResult result = braidSimulateCollective(
      toRef("all_reduce"), 1024, 16, 3, toRef("dgx-h100"), appendOutput,
      appendErrors, &collected);
  EXPECT_TRUE(mlirLogicalResultIsFailure(result));
  EXPECT_NE(collected.errors.find("the nodes must divide the ranks (16), got 3"),
            std::string::npos)
      << collected.errors;
  collected = {};
  result = braidSimulateCollective(toRef("all_reduce"), 1024, 0, 0,
                                   toRef("no-such-cluster"), appendOutput,
                                   appendErrors, &collected);
  EXPECT_TRUE(mlirLogicalResultIsFailure(result));
  EXPECT_NE(collected.errors.find("no-such-cluster"), std::string::npos);
}

TEST(CAPI, RefusesBadCompileRequests) {
  for (auto [request, message] : std::initializer_list<
           std::pair<const char *, const char *>>{
           {"not json", "the request is not JSON"},
           {"[1, 2]", "the request must be a JSON object"},
           {R"({"model": "m.json"})", "the request needs 'model' and 'out'"},
           {R"({"model": "m.json", "out": "o", "nodes": "two"})",
            "a request key has the wrong type"},
           {R"({"model": "m.json", "out": "o", "colour": 1})",
            "unknown request key 'colour'"}}) {
    Collected collected;
    MlirLogicalResult result =
        braidCompile(toRef(request), appendOutput, appendErrors, &collected);
    EXPECT_TRUE(mlirLogicalResultIsFailure(result)) << request;
    EXPECT_NE(collected.errors.find(message), std::string::npos)
        << request << ": " << collected.errors;
  }
}

TEST(CAPI, ImportsAModelAndRunsAPipeline) {
  std::string spec = R"({"name": "m", "batch_size": 4, "dense_features": 3,
      "bottom_mlp": [4], "top_mlp": [1], "interaction": "cat",
      "tables": [{"name": "t", "num_embeddings": 10, "embedding_dim": 4,
                  "pooling_factor": 2}]})";
  Collected imported;
  ASSERT_TRUE(mlirLogicalResultIsSuccess(braidImportModel(
      toRef(spec), toRef("m.json"), appendOutput, appendErrors, &imported)))
      << imported.errors;
  EXPECT_NE(imported.output.find("braid.table"), std::string::npos);
  Collected canonical;
  ASSERT_TRUE(mlirLogicalResultIsSuccess(braidRunPipeline(
      toRef(imported.output), toRef("builtin.module(canonicalize)"), appendOutput,
      appendErrors, &canonical)))
      << canonical.errors;
  EXPECT_NE(canonical.output.find("func.func @forward"), std::string::npos);
  Collected bad;
  EXPECT_TRUE(mlirLogicalResultIsFailure(braidRunPipeline(
      toRef(imported.output), toRef("builtin.module(no-such-pass)"), appendOutput,
      appendErrors, &bad)));
  EXPECT_NE(bad.errors.find("no-such-pass"), std::string::npos) << bad.errors;
  Collected badSpec;
  EXPECT_TRUE(mlirLogicalResultIsFailure(braidImportModel(
      toRef("{\"name\": 1}"), toRef("bad.json"), appendOutput, appendErrors,
      &badSpec)));
  EXPECT_NE(badSpec.errors.find("bad.json:1:1: error: model spec"),
            std::string::npos)
      << badSpec.errors;
}
} // namespace
