//===- NativeProgram.h - Running a compiled per-rank program ----*- C++ -*-===//
//
// This file declares braid-run's view of a `--target cpu` artifact, a thin
// layer over the runtime's loader (braidrt/program.h): it converts host
// tensors to and from the program's element types and reads the parts of
// the manifest that concern a host, not the runtime (the global program's
// signature, for binding inputs exactly as the reference semantics does).
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TOOLS_BRAIDRUN_NATIVEPROGRAM_H
#define BRAID_TOOLS_BRAIDRUN_NATIVEPROGRAM_H

#include "braid/Interp/Interpreter.h"
#include "braid/Interp/Signature.h"

#include "braidrt/program.h"

#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace mlir::braid {

class NativeProgram {
public:
  struct Argument {
    std::string name, kind, dtype;
    std::vector<int64_t> shape; ///< -1 for dynamic sizes
    /// A sharded optimizer state or a parameter stored as blocks: the
    /// ranks whose slices along `shardDim`, in order, make the whole (empty
    /// otherwise).
    std::vector<int64_t> shardRanks;
    int64_t shardDim = 0;
  };

  /// Loads `dir`/libprogram.so and reads the manifest inside it.
  static llvm::Expected<NativeProgram> load(llvm::StringRef dir);

  const std::vector<Argument> &getArguments() const { return arguments; }
  /// The results; a training step's name what they update ("param",
  /// "state") or are ("output": the loss).
  const std::vector<Argument> &getResults() const { return results; }
  int64_t getRanks() const { return braidrt_program_ranks(program.get()); }
  /// Whether the program calls collectives (needs one process per rank).
  bool hasExchanges() const {
    return braidrt_program_has_exchanges(program.get());
  }
  llvm::ArrayRef<int64_t> getBatchSplit() const {
    return {braidrt_program_batch_split(program.get()),
            size_t(getRanks())};
  }
  /// The global program's signature, whose inputs are split by rank.
  const interp::Signature &getGlobalSignature() const { return global; }
  /// Whether the host supplies `argument` beyond the forward pass's inputs
  /// and parameters: a table, or a training step's labels, step, dense
  /// optimizer state or table optimizer state.
  /// (A pipelined form's next batch's inputs and carried values are the
  /// host's too.)
  bool isHostSupplied(const Argument &argument) const {
    return argument.kind == "table" || argument.kind == "table_state" ||
           argument.kind == "state" || argument.kind == "next_input" ||
           argument.kind == "carried" ||
           (isTrainingStep() && argument.kind == "input" &&
            (argument.name == "labels" || argument.name == "step"));
  }
  /// Whether the program is a training step or its pipelined form.
  bool isTrainingStep() const {
    return function == "train_step" || pipelinedOf == "train_step";
  }
  /// The name of the compiled function ("forward", "train_step", or a
  /// pipelined form's or an input distribution's name).
  llvm::StringRef getFunctionName() const { return function; }
  /// For a pipelined form (braid-pipeline-input-dist): the function it is
  /// the form of, and the directory, below its own, of the library that
  /// computes the first batch's carried values (both empty otherwise).
  llvm::StringRef getPipelinedOf() const { return pipelinedOf; }
  llvm::StringRef getInputDistDir() const { return inputDistDir; }
  /// For an input distribution: the pipelined form it starts (empty
  /// otherwise).
  llvm::StringRef getInputDistOf() const { return inputDistOf; }
  /// The ops braid-compile --profile-ops timed, by index (empty when it
  /// did not): braidrt_op_ms(i) is op i's time.
  llvm::ArrayRef<std::string> getProfiledOps() const { return profiledOps; }
  /// Each profiled op's milliseconds so far (braidrt_op_ms), by index.
  std::vector<double> readOpTimes() const;
  /// The per-rank program's inputs and parameters (its tables apart).
  const interp::Signature &getRankSignature() const { return perRank; }
  /// Where the batch input `name` is among the rank signature's arguments
  /// (none for a parameter or an unknown name).
  std::optional<size_t> getInputPosition(llvm::StringRef name) const;
  /// The slice of table argument `index` that `rank` passes.
  llvm::Expected<braidrt_table_slice> getTableSlice(size_t index,
                                                    int64_t rank) const;

  /// A table argument: rows [rowOffset, rowOffset + rows) and columns
  /// [colOffset, colOffset + cols) of `data`, written straight into the
  /// program's element type (no double-precision copy of the table).
  struct TableSlice {
    const interp::TableData *data = nullptr;
    int64_t rowOffset = 0, rows = 0, colOffset = 0, cols = 0;
  };
  using ArgumentValue = std::variant<interp::HostTensor, TableSlice>;

  /// Stages `args` (in manifest order) for the calls that follow.
  llvm::Error bind(llvm::ArrayRef<ArgumentValue> args);
  /// Stages argument `index` alone (the others keep their storage, which a
  /// training step updates in place).
  llvm::Error bindOne(size_t index, const ArgumentValue &value);
  /// The bytes staged for argument `index` (0 when not staged).
  int64_t getStagedBytes(size_t index) const;
  /// The current contents of staged argument `index` (a table or its
  /// optimizer state after training steps).
  llvm::Expected<interp::HostTensor> readArgument(size_t index) const;
  /// Calls the program on the staged arguments; returns its results and
  /// the call's wall time.
  llvm::Expected<std::vector<interp::HostTensor>> run(double &milliseconds);

private:
  struct Free {
    void operator()(braidrt_program *program) const {
      braidrt_program_free(program);
    }
  };
  struct Staged {
    uint8_t *storage = nullptr;
    std::vector<int64_t> shape;
  };
  std::unique_ptr<braidrt_program, Free> program;
  std::vector<Argument> arguments, results;
  std::vector<Staged> staged;
  interp::Signature global, perRank;
  std::string function, pipelinedOf, inputDistDir, inputDistOf;
  std::vector<std::string> profiledOps;
};

/// True when started by mpirun (Open MPI, MPICH or PMIx environments).
bool isUnderMpirun();

/// Runs `dist`, a pipelined form's input distribution (OUT/pipelined/
/// input_dist), on the batch inputs `input` gives by name; returns the
/// carried values it computes, by name.
llvm::Expected<std::map<std::string, interp::HostTensor>> runInputDistribution(
    NativeProgram &dist,
    llvm::function_ref<llvm::Expected<interp::HostTensor>(llvm::StringRef)>
        input);

/// The rows of table argument `index` that `rank` passes to the compiled
/// program: its slice in the library's manifest (the whole table, or the
/// rank's shard, empty if none), checked against the table's data.
llvm::Expected<NativeProgram::TableSlice>
tableArgument(const NativeProgram &program, const interp::TableMap &tables,
              size_t index, int64_t rank);

/// Sends every rank's tensors (the same count on each) to rank 0; returns
/// them there, in rank order, and nothing on the other ranks.
std::optional<interp::RankValues>
gatherToRankZero(const std::vector<interp::HostTensor> &results);

} // namespace mlir::braid

#endif // BRAID_TOOLS_BRAIDRUN_NATIVEPROGRAM_H
