//===- RunSupport.h - Helpers shared by braid-run's files -------*- C++ -*-===//
//
// Error reporting, paths and the table dump that both braid-run's forward
// runs and its training (Train.cpp) use.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TOOLS_BRAID_RUN_RUNSUPPORT_H
#define BRAID_TOOLS_BRAID_RUN_RUNSUPPORT_H

#include "braid/Interp/Interpreter.h"
#include "braid/Interp/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <sys/resource.h>

namespace mlir::braid {

/// The median of `values` (not empty): the middle one, or the mean of the
/// two middle ones for an even count (as Python's statistics.median, which
/// the benches take of braid-run's figures).
inline double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t half = values.size() / 2;
  return values.size() % 2 ? values[half]
                           : (values[half - 1] + values[half]) / 2;
}

/// Minor page faults of this process so far: memory touched for the first
/// time. braid-run reports them per timed call after the first, where a
/// program that reuses its buffers takes almost none.
inline double minorPageFaults() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return double(usage.ru_minflt);
}

/// Milliseconds of CPU this process has used so far, in all its threads:
/// beside a call's wall time, what it computed and what it only waited.
inline double cpuMs() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  auto ms = [](const struct timeval &time) {
    return double(time.tv_sec) * 1e3 + double(time.tv_usec) * 1e-3;
  };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

/// Each timed op's time (braid-compile --profile-ops) as --json's `ops_ms`:
/// [{"op": NAME, "ms": MS}, ...] in program order.
inline llvm::json::Array
opTimesJson(llvm::ArrayRef<std::pair<std::string, double>> ops) {
  llvm::json::Array json;
  for (const auto &[name, ms] : ops)
    json.push_back(llvm::json::Object{{"op", name}, {"ms", ms}});
  return json;
}

/// Reports `message` as one line written at once, so that lines of ranks
/// that fail together never interleave; returns the exit code 1.
inline int failRun(const llvm::Twine &message) {
  llvm::errs() << ("braid-run: error: " + message + "\n").str();
  return 1;
}

inline std::string joinPath(llvm::StringRef dir, const llvm::Twine &name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

/// Writes `table` as DIR/NAME.npy unless it has more than `maxElements`
/// elements (then a note says so). Returns whether it was written.
inline llvm::Expected<bool> dumpTable(llvm::StringRef dir, llvm::StringRef name,
                                      const interp::TableData &table,
                                      int64_t maxElements) {
  if (table.getNumRows() * table.getDim() > maxElements) {
    llvm::errs() << "braid-run: note: table '" << name << "' is not dumped ("
                 << table.getNumRows() << " x " << table.getDim()
                 << " elements exceed --max-dump-table-elements)\n";
    return false;
  }
  if (llvm::Error error =
          interp::writeNpy(joinPath(dir, name + ".npy"), table.materialize()))
    return std::move(error);
  return true;
}

} // namespace mlir::braid

#endif // BRAID_TOOLS_BRAID_RUN_RUNSUPPORT_H
