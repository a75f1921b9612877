//===- AtomicOutput.cpp - Writing output files all or nothing -------------===//

#include "braid/Support/AtomicOutput.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;

/// Finishes `os`: flushes and closes it, and returns (and clears) its
/// error, so that its destructor does not abort the tool.
static std::error_code finish(raw_fd_ostream &os) {
  os.close();
  std::error_code ec = os.error();
  os.clear_error();
  return ec;
}

Error mlir::braid::writeFileAtomically(
    StringRef path, function_ref<void(raw_ostream &)> write) {
  auto failure = [&](std::error_code ec) {
    return createStringError(ec,
                             "cannot write '" + path + "': " + ec.message());
  };
  sys::fs::file_status status;
  bool inPlace = !sys::fs::status(path, status) &&
                 status.type() != sys::fs::file_type::regular_file;
  if (inPlace) {
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    if (ec)
      return failure(ec);
    write(os);
    if (std::error_code error = finish(os))
      return failure(error);
    return Error::success();
  }
  SmallString<256> model(path);
  model += ".tmp-%%%%%%";
  int fd;
  SmallString<256> temporary;
  if (std::error_code ec = sys::fs::createUniqueFile(model, fd, temporary))
    return failure(ec);
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    write(os);
    if (std::error_code ec = finish(os)) {
      sys::fs::remove(temporary);
      return failure(ec);
    }
  }
  if (std::error_code ec = sys::fs::rename(temporary, path)) {
    sys::fs::remove(temporary);
    return failure(ec);
  }
  return Error::success();
}

std::string mlir::braid::joinPath(StringRef dir, StringRef name) {
  SmallString<256> path(dir);
  sys::path::append(path, name);
  return std::string(path);
}
