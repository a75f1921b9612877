//===- BoundedInput.cpp - Reading untrusted files and JSON ----------------===//

#include "braid/Support/BoundedInput.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
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

/// The index of the quote that closes the string literal opening at
/// `open` (a `\"` does not close it), or the text's size if none does.
static size_t endOfString(StringRef text, size_t open) {
  size_t i = open + 1;
  for (; i < text.size() && text[i] != '"'; ++i)
    if (text[i] == '\\')
      ++i; // the escaped character cannot end the string
  return std::min(i, text.size());
}

std::optional<mlir::braid::TextPosition>
mlir::braid::findMlirNestingBeyond(StringRef text, unsigned maxDepth) {
  unsigned depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      i = endOfString(text, i); // a string literal's brackets are text
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
  // One frame per open array or object, an object's with the keys it has
  // had: LLVM's parser keeps the last of two equal keys, so a document
  // saying two things about one field would mean the second silently. (Keys
  // are compared as written: one spelled with an escape and one without
  // are not caught.)
  SmallVector<std::optional<StringSet<>>, 16> frames;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      size_t start = i;
      i = endOfString(text, i);
      if (i >= text.size())
        break; // unterminated: the parser below reports it
      size_t next = text.find_first_not_of(" \t\r\n", i + 1);
      bool isKey = !frames.empty() && frames.back() &&
                   next != StringRef::npos && text[next] == ':';
      if (isKey && !frames.back()->insert(text.slice(start + 1, i)).second)
        return createStringError(inconvertibleErrorCode(),
                                 "[offset " + Twine(start) +
                                     "]: duplicate key " +
                                     text.slice(start, i + 1));
    } else if (c == '[' || c == '{') {
      if (frames.size() + 1 > maxDepth)
        return createStringError(inconvertibleErrorCode(),
                                 "[offset " + Twine(i) +
                                     "]: nested deeper "
                                     "than " +
                                     Twine(maxDepth) + " levels");
      frames.push_back(c == '{' ? std::optional<StringSet<>>(StringSet<>())
                                : std::nullopt);
    } else if ((c == ']' || c == '}') && !frames.empty()) {
      frames.pop_back();
    }
  }
  return json::parse(text);
}
