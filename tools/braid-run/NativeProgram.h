//===- NativeProgram.h - Running a compiled per-rank program ----*- C++ -*-===//
//
// This file declares how braid-run calls a `--target cpu` artifact: it
// loads OUT/libprogram.so, reads the manifest the library carries
// (`braid_manifest`), and calls the packed entry point with memref
// descriptors built from host tensors.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TOOLS_BRAIDRUN_NATIVEPROGRAM_H
#define BRAID_TOOLS_BRAIDRUN_NATIVEPROGRAM_H

#include "braid/Interp/Interpreter.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace mlir::braid {

class NativeProgram {
public:
  /// A rank's part of a table: rows [rowOffset, rowOffset + rows) and
  /// columns [colOffset, colOffset + cols).
  struct Slice {
    int64_t rowOffset = 0, rows = 0, colOffset = 0, cols = 0;
  };
  struct Argument {
    std::string name, kind, dtype;
    std::vector<int64_t> shape; ///< -1 for dynamic sizes
    /// Tables: each rank's slice, by rank (from the manifest).
    std::vector<Slice> slices;
  };

  /// Loads `dir`/libprogram.so and reads the manifest inside it.
  static llvm::Expected<NativeProgram> load(llvm::StringRef dir);

  const std::vector<Argument> &getArguments() const { return arguments; }
  int64_t getRanks() const { return ranks; }
  /// Whether the program calls collectives (needs one process per rank).
  bool hasExchanges() const { return exchanges; }

  /// Arguments staged once in the program's element types and memref
  /// descriptors, so that repeated calls time the program alone.
  class BoundCall {
  public:
    /// Calls the program; returns its results and the call's wall time.
    llvm::Expected<std::vector<interp::HostTensor>>
    run(double &milliseconds);

  private:
    friend class NativeProgram;
    struct Free {
      void operator()(uint8_t *data) const;
    };
    const NativeProgram *program = nullptr;
    std::vector<std::unique_ptr<uint8_t[], Free>> storage;
    std::vector<std::vector<int64_t>> descriptors;
  };

  /// A table argument: rows [rowOffset, rowOffset + rows) and columns
  /// [colOffset, colOffset + cols) of `data`, written straight into the
  /// program's element type (no double-precision copy of the table).
  struct TableSlice {
    const interp::TableData *data = nullptr;
    int64_t rowOffset = 0, rows = 0, colOffset = 0, cols = 0;
  };
  using ArgumentValue = std::variant<interp::HostTensor, TableSlice>;

  /// Stages `args` (in manifest order) for calls of the program.
  llvm::Expected<BoundCall> bind(llvm::ArrayRef<ArgumentValue> args) const;

private:
  std::vector<Argument> arguments, results;
  int64_t ranks = 1;
  bool exchanges = false;
  void (*entry)(void **) = nullptr;
};

} // namespace mlir::braid

#endif // BRAID_TOOLS_BRAIDRUN_NATIVEPROGRAM_H
