//===- BoundedInput.h - Reading untrusted files and JSON --------*- C++ -*-===//
//
// This file declares how Braid's tools read what a user hands them: a file
// must be a regular file no larger than a bound (so `/dev/zero` or a FIFO
// is an error, not a read that never ends), and JSON may nest only so deep
// (so a hostile document cannot exhaust the stack of LLVM's recursive
// parser).
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_SUPPORT_BOUNDEDINPUT_H
#define BRAID_SUPPORT_BOUNDEDINPUT_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>

namespace mlir::braid {

/// The most a JSON document (model, cluster, plan) may be.
constexpr uint64_t kMaxJsonFileBytes = uint64_t(64) << 20;
/// The most arrays and objects JSON may nest.
constexpr unsigned kMaxJsonDepth = 64;

/// Reads `path`, a regular file of at most `maxBytes` bytes, or standard
/// input for "-"; `what` names it in errors ("a model", "a cluster file",
/// or nothing).
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readBoundedFile(llvm::StringRef path, uint64_t maxBytes, llvm::StringRef what);

/// Parses `text` as JSON after checking, without recursion, that arrays and
/// objects nest at most `maxDepth` deep and that no object repeats a key.
llvm::Expected<llvm::json::Value>
parseBoundedJson(llvm::StringRef text, unsigned maxDepth = kMaxJsonDepth);

/// The most brackets MLIR text may nest. MLIR's parser recurses once per
/// level, and about ten thousand overflow a tool's stack; a Braid program
/// nests a few dozen.
constexpr unsigned kMaxMlirNesting = 1000;

/// A line and column of a text, from 1.
struct TextPosition {
  unsigned line = 1, column = 1;
};

/// Checks, without recursion, that `(`, `[`, `{` and `<` nest at most
/// `maxDepth` deep in the MLIR text `text` (outside string literals and
/// `//` comments; the `>` of `->` closes nothing): the position of the first
/// bracket past the bound, if any.
std::optional<TextPosition>
findMlirNestingBeyond(llvm::StringRef text, unsigned maxDepth = kMaxMlirNesting);

} // namespace mlir::braid

#endif // BRAID_SUPPORT_BOUNDEDINPUT_H
