//===- BoundedInput.cpp - Reading untrusted files and JSON ----------------===//

#include "braid/Support/BoundedInput.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>

using namespace llvm;

/// Standard input, up to `maxBytes` bytes.
static Expected<std::unique_ptr<MemoryBuffer>>
readBoundedStdin(uint64_t maxBytes, const Twine &prefix) {
  SmallString<4096> text;
  constexpr size_t kChunk = 1 << 16;
  while (true) {
    size_t size = text.size();
    text.resize_for_overwrite(size + kChunk);
    Expected<size_t> read = sys::fs::readNativeFile(
        sys::fs::getStdinHandle(),
        MutableArrayRef<char>(text.data() + size, kChunk));
    if (!read)
      return createStringError(inconvertibleErrorCode(),
                               prefix + toString(read.takeError()));
    text.truncate(size + *read);
    if (*read == 0)
      break;
    if (text.size() > maxBytes)
      return createStringError(inconvertibleErrorCode(),
                               prefix + "more than the " + Twine(maxBytes) +
                                   " bytes it may have");
  }
  return MemoryBuffer::getMemBufferCopy(text, "<stdin>");
}

Expected<std::unique_ptr<MemoryBuffer>>
mlir::braid::readBoundedFile(StringRef path, uint64_t maxBytes,
                             StringRef what) {
  std::string prefix =
      ("cannot read " + (what.empty() ? "" : what + " ") + "'" + path + "': ")
          .str();
  if (path == "-")
    return readBoundedStdin(maxBytes, prefix);
  sys::fs::file_status status;
  if (std::error_code ec = sys::fs::status(path, status))
    return createStringError(ec, prefix + ec.message());
  if (status.type() != sys::fs::file_type::regular_file)
    return createStringError(inconvertibleErrorCode(),
                             prefix + "not a regular file");
  if (status.getSize() > maxBytes)
    return createStringError(inconvertibleErrorCode(),
                             prefix + Twine(status.getSize()) +
                                 " bytes, more than the " + Twine(maxBytes) +
                                 " it may have");
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return createStringError(buffer.getError(),
                             prefix + buffer.getError().message());
  return std::move(*buffer);
}

std::optional<mlir::braid::TextPosition>
mlir::braid::findMlirNestingBeyond(StringRef text, unsigned maxDepth) {
  unsigned depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      // A string literal: its brackets are text, and `\"` does not end it.
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = std::min(text.find('\n', i), text.size());
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > maxDepth) {
        StringRef before = text.take_front(i);
        size_t lineStart = before.rfind('\n');
        return TextPosition{
            unsigned(before.count('\n') + 1),
            unsigned(i - (lineStart == StringRef::npos ? 0 : lineStart + 1) +
                     1)};
      }
    } else if ((c == ')' || c == ']' || c == '}' ||
                (c == '>' && (i == 0 || text[i - 1] != '-'))) &&
               depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

Expected<json::Value> mlir::braid::parseBoundedJson(StringRef text,
                                                    unsigned maxDepth) {
  unsigned depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return createStringError(inconvertibleErrorCode(),
                                 "[offset " + Twine(i) +
                                     "]: nested deeper "
                                     "than " +
                                     Twine(maxDepth) + " levels");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return json::parse(text);
}
