//===- LocalMachine.cpp - The calibrated description of this machine ------===//
//
// This file implements the `local-cpu` cluster name: the description
// braid-calibrate measured on this machine, kept in the user's cache
// directory. When it is missing, the first tool that asks for it runs
// braid-calibrate under mpirun (one rank per core) with a one-line notice,
// and later runs reuse the file.
//
//===----------------------------------------------------------------------===//

#include "braid/Cluster/Hardware.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <thread>
#include <unistd.h>

using namespace llvm;
using namespace mlir::braid::cluster;

std::string mlir::braid::cluster::getLocalCalibrationPath() {
  SmallString<256> path;
  if (std::optional<std::string> dir = sys::Process::GetEnv("BRAID_CACHE_DIR");
      dir && !dir->empty()) {
    path = *dir;
  } else if (std::optional<std::string> xdg =
                 sys::Process::GetEnv("XDG_CACHE_HOME");
             xdg && !xdg->empty()) {
    path = *xdg;
    sys::path::append(path, "braid");
  } else if (std::optional<std::string> home = sys::Process::GetEnv("HOME");
             home && !home->empty()) {
    path = *home;
    sys::path::append(path, ".cache", "braid");
  } else {
    path = "/tmp/braid-cache";
  }
  sys::path::append(path, std::string(kLocalCpuName) + ".json");
  return std::string(path);
}

/// braid-calibrate beside the running tool (the build or install tree),
/// else in $BRAID_TOOLS_DIR (which the Python package sets to its build's
/// bin/: its running program is the interpreter), else on PATH.
static Expected<std::string> findCalibrate() {
  std::string self = sys::fs::getMainExecutable("braid", nullptr);
  if (!self.empty()) {
    SmallString<256> sibling(sys::path::parent_path(self));
    sys::path::append(sibling, "braid-calibrate");
    if (sys::fs::can_execute(sibling))
      return std::string(sibling);
  }
  if (std::optional<std::string> dir = sys::Process::GetEnv("BRAID_TOOLS_DIR")) {
    SmallString<256> inDir(*dir);
    sys::path::append(inDir, "braid-calibrate");
    if (sys::fs::can_execute(inDir))
      return std::string(inDir);
  }
  if (ErrorOr<std::string> onPath = sys::findProgramByName("braid-calibrate"))
    return *onPath;
  return createStringError(inconvertibleErrorCode(),
                           "cannot find braid-calibrate next to this tool, "
                           "in $BRAID_TOOLS_DIR or on PATH to measure this "
                           "machine");
}

Error mlir::braid::cluster::calibrateLocalMachine(StringRef path) {
  Expected<std::string> calibrate = findCalibrate();
  if (!calibrate)
    return calibrate.takeError();
  ErrorOr<std::string> mpirun = sys::findProgramByName("mpirun");
  if (!mpirun)
    return createStringError(inconvertibleErrorCode(),
                             "cannot find mpirun on PATH to measure this "
                             "machine with braid-calibrate");
  if (std::error_code ec =
          sys::fs::create_directories(sys::path::parent_path(path)))
    return createStringError(ec, "cannot create the directory of '" + path +
                                     "': " + ec.message());
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::string ranks = std::to_string(cores);
  // Measure into a file of this process's own, then rename: tools that
  // calibrate at once never see each other's half-written file.
  std::string partial = (path + ".partial." + Twine(::getpid())).str();
  SmallVector<StringRef> args = {*mpirun, "-n", ranks, "--oversubscribe",
                                 *calibrate, "-o", partial};
  // Root may run mpirun only when it says so; these variables say it for
  // the calibration run alone.
  std::vector<std::string> environment;
  for (char **entry = environ; entry && *entry; ++entry)
    environment.emplace_back(*entry);
  if (::geteuid() == 0) {
    environment.emplace_back("OMPI_ALLOW_RUN_AS_ROOT=1");
    environment.emplace_back("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1");
  }
  SmallVector<StringRef> env(environment.begin(), environment.end());
  SmallString<128> log;
  if (std::error_code ec = sys::fs::createTemporaryFile("braid-calibrate",
                                                        "log", log))
    return createStringError(ec, "cannot create a log file: " + ec.message());
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  errs() << ("braid: note: no calibration of this machine at " + path +
             " yet; measuring it now with braid-calibrate on " + ranks +
             " ranks (a few seconds, once)\n")
                .str();
  std::string message;
  // A calibration takes seconds; one that has not finished in ten minutes
  // is stuck (an MPI that cannot start), and is an error, not a hang.
  int rc = sys::ExecuteAndWait(*mpirun, args, env, redirects,
                               /*SecondsToWait=*/600, /*MemoryLimit=*/0,
                               &message);
  std::string output;
  if (ErrorOr<std::unique_ptr<MemoryBuffer>> text =
          MemoryBuffer::getFile(log))
    output = (*text)->getBuffer().trim().str();
  sys::fs::remove(log);
  if (rc != 0) {
    sys::fs::remove(partial);
    std::string why = message.empty() ? "exit code " + std::to_string(rc)
                                      : message;
    return createStringError(inconvertibleErrorCode(),
                             "measuring this machine failed (" + why +
                                 "): " + output);
  }
  if (std::error_code ec = sys::fs::rename(partial, path)) {
    sys::fs::remove(partial);
    return createStringError(ec, "cannot write '" + path +
                                     "': " + ec.message());
  }
  return Error::success();
}

Expected<HardwareDesc> mlir::braid::cluster::loadLocalMachine() {
  std::string path = getLocalCalibrationPath();
  if (!sys::fs::exists(path))
    if (Error error = calibrateLocalMachine(path))
      return std::move(error);
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return createStringError(buffer.getError(),
                             "cannot read this machine's calibration '" +
                                 path + "': " + buffer.getError().message());
  Expected<HardwareDesc> hw = parseHardware((*buffer)->getBuffer(), path);
  if (!hw)
    return createStringError(
        inconvertibleErrorCode(),
        toString(hw.takeError()) +
            " (delete it, or run braid-calibrate to measure this machine "
            "again)");
  return hw;
}
