//===- BraidModule.cpp - The braid._braid Python extension ----------------===//
//
// This file implements the native part of the Python package `braid`: a
// nanobind module over the C API (include/braid-c/Braid.h). Each function
// returns (ok, output, errors) and the pure-Python layer turns a failure
// into braid.Error with the located messages; nothing here raises, aborts
// or holds the GIL while the compiler runs.
//
//===----------------------------------------------------------------------===//

#include "braid-c/Braid.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <string>
#include <tuple>

namespace nb = nanobind;

namespace {
/// What one call sends to its two callbacks.
struct Collected {
  std::string output, errors;
};

void appendOutput(MlirStringRef text, void *userData) {
  static_cast<Collected *>(userData)->output.append(text.data, text.length);
}

void appendErrors(MlirStringRef text, void *userData) {
  static_cast<Collected *>(userData)->errors.append(text.data, text.length);
}

MlirStringRef ref(const std::string &text) {
  return mlirStringRefCreate(text.data(), text.size());
}

using Result = std::tuple<bool, std::string, std::string>;

Result finish(MlirLogicalResult result, Collected &collected) {
  return {mlirLogicalResultIsSuccess(result), std::move(collected.output),
          std::move(collected.errors)};
}
} // namespace

NB_MODULE(_braid, m) {
  m.doc() = "Braid's compiler, through its C API (use the `braid` package)";
  m.def(
      "compile",
      [](const std::string &request) {
        Collected collected;
        MlirLogicalResult result;
        {
          nb::gil_scoped_release release;
          result = braidCompile(ref(request), appendOutput, appendErrors,
                                &collected);
        }
        return finish(result, collected);
      },
      nb::arg("request"),
      "Runs braid-compile on a JSON request; returns (ok, report, errors).");
  m.def(
      "simulate_collective",
      [](const std::string &kind, double bytes, int64_t ranks, int64_t nodes,
         const std::string &hardware) {
        Collected collected;
        MlirLogicalResult result;
        {
          // A local-cpu description may be measured first (seconds).
          nb::gil_scoped_release release;
          result = braidSimulateCollective(ref(kind), bytes, ranks, nodes,
                                           ref(hardware), appendOutput,
                                           appendErrors, &collected);
        }
        return finish(result, collected);
      },
      nb::arg("kind"), nb::arg("bytes"), nb::arg("ranks"), nb::arg("nodes"),
      nb::arg("hardware"),
      "braid-sim collective; returns (ok, JSON text, errors).");
  m.def(
      "import_model",
      [](const std::string &json, const std::string &fileName) {
        Collected collected;
        MlirLogicalResult result;
        {
          nb::gil_scoped_release release;
          result = braidImportModel(ref(json), ref(fileName), appendOutput,
                                    appendErrors, &collected);
        }
        return finish(result, collected);
      },
      nb::arg("json"), nb::arg("file_name"),
      "Imports a model spec; returns (ok, MLIR text, errors).");
  m.def(
      "run_pipeline",
      [](const std::string &module, const std::string &pipeline) {
        Collected collected;
        MlirLogicalResult result;
        {
          nb::gil_scoped_release release;
          result = braidRunPipeline(ref(module), ref(pipeline), appendOutput,
                                    appendErrors, &collected);
        }
        return finish(result, collected);
      },
      nb::arg("module"), nb::arg("pipeline"),
      "Runs a textual pass pipeline; returns (ok, MLIR text, errors).");
}
