//===- Json.h - A small JSON reader for the runtime -------------*- C++ -*-===//
//
// The runtime reads the manifest compiled programs carry without LLVM: a
// JSON reader that bounds nesting depth (so a hostile document cannot
// overflow the stack) and reports errors with their byte offset.
//
//===----------------------------------------------------------------------===//

#ifndef BRAIDRT_LIB_JSON_H
#define BRAIDRT_LIB_JSON_H

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace braidrt::json {

class Value {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  /// Set when the number was written as an integer that fits int64.
  std::optional<int64_t> integer;
  std::string string;
  std::vector<Value> array;
  std::map<std::string, Value> object;

  /// The member `key` of an object, or null when absent or not an object.
  const Value *get(const std::string &key) const;
  std::optional<int64_t> getInteger(const std::string &key) const;
  std::optional<std::string> getString(const std::string &key) const;
  std::optional<bool> getBool(const std::string &key) const;
  const std::vector<Value> *getArray(const std::string &key) const;
};

/// Parses `text`; on failure returns nothing and sets `error`.
std::optional<Value> parse(const std::string &text, std::string &error);

/// More arrays and objects nested in each other than this is an error.
constexpr int kMaxDepth = 64;

} // namespace braidrt::json

#endif // BRAIDRT_LIB_JSON_H
