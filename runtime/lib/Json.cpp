//===- Json.cpp - A small JSON reader for the runtime ---------------------===//
//
// This file implements a recursive-descent JSON reader (RFC 8259) whose
// recursion is bounded by kMaxDepth.
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include <cerrno>
#include <cstdlib>

using namespace braidrt::json;

const Value *Value::get(const std::string &key) const {
  if (kind != Kind::Object)
    return nullptr;
  auto found = object.find(key);
  return found == object.end() ? nullptr : &found->second;
}

std::optional<int64_t> Value::getInteger(const std::string &key) const {
  const Value *value = get(key);
  return value && value->kind == Kind::Number ? value->integer : std::nullopt;
}

std::optional<std::string> Value::getString(const std::string &key) const {
  const Value *value = get(key);
  if (!value || value->kind != Kind::String)
    return std::nullopt;
  return value->string;
}

std::optional<bool> Value::getBool(const std::string &key) const {
  const Value *value = get(key);
  if (!value || value->kind != Kind::Bool)
    return std::nullopt;
  return value->boolean;
}

const std::vector<Value> *Value::getArray(const std::string &key) const {
  const Value *value = get(key);
  return value && value->kind == Kind::Array ? &value->array : nullptr;
}

namespace {
class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  std::optional<Value> parseDocument(std::string &error) {
    Value value;
    bool ok = parseValue(value, 0);
    skipSpace();
    if (ok && at != text.size())
      ok = fail("trailing characters after the document");
    if (!ok) {
      error = "at byte " + std::to_string(at) + ": " + message;
      return std::nullopt;
    }
    return value;
  }

private:
  bool fail(const std::string &what) {
    if (message.empty())
      message = what;
    return false;
  }
  void skipSpace() {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t' ||
                                text[at] == '\n' || text[at] == '\r'))
      ++at;
  }
  bool consume(const char *word) {
    size_t length = std::char_traits<char>::length(word);
    if (text.compare(at, length, word) != 0)
      return false;
    at += length;
    return true;
  }

  bool parseValue(Value &value, int depth) {
    skipSpace();
    if (at >= text.size())
      return fail("unexpected end of the document");
    char c = text[at];
    if ((c == '{' || c == '[') && depth >= kMaxDepth)
      return fail("nested deeper than " + std::to_string(kMaxDepth) +
                  " levels");
    if (c == '{')
      return parseObject(value, depth);
    if (c == '[')
      return parseArray(value, depth);
    if (c == '"') {
      value.kind = Value::Kind::String;
      return parseString(value.string);
    }
    for (bool truth : {true, false})
      if (consume(truth ? "true" : "false")) {
        value.kind = Value::Kind::Bool;
        value.boolean = truth;
        return true;
      }
    if (consume("null")) {
      value.kind = Value::Kind::Null;
      return true;
    }
    return parseNumber(value);
  }

  bool parseObject(Value &value, int depth) {
    value.kind = Value::Kind::Object;
    ++at; // '{'
    skipSpace();
    if (at < text.size() && text[at] == '}') {
      ++at;
      return true;
    }
    while (true) {
      skipSpace();
      std::string key;
      if (at >= text.size() || text[at] != '"')
        return fail("expected a member name");
      if (!parseString(key))
        return false;
      skipSpace();
      if (at >= text.size() || text[at] != ':')
        return fail("expected ':' after a member name");
      ++at;
      Value member;
      if (!parseValue(member, depth + 1))
        return false;
      value.object[key] = std::move(member);
      skipSpace();
      if (at < text.size() && text[at] == ',') {
        ++at;
        continue;
      }
      if (at < text.size() && text[at] == '}') {
        ++at;
        return true;
      }
      return fail("expected ',' or '}' in an object");
    }
  }

  bool parseArray(Value &value, int depth) {
    value.kind = Value::Kind::Array;
    ++at; // '['
    skipSpace();
    if (at < text.size() && text[at] == ']') {
      ++at;
      return true;
    }
    while (true) {
      Value element;
      if (!parseValue(element, depth + 1))
        return false;
      value.array.push_back(std::move(element));
      skipSpace();
      if (at < text.size() && text[at] == ',') {
        ++at;
        continue;
      }
      if (at < text.size() && text[at] == ']') {
        ++at;
        return true;
      }
      return fail("expected ',' or ']' in an array");
    }
  }

  static void appendUtf8(std::string &out, uint32_t code) {
    if (code < 0x80) {
      out += char(code);
    } else if (code < 0x800) {
      out += char(0xC0 | (code >> 6));
      out += char(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += char(0xE0 | (code >> 12));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    } else {
      out += char(0xF0 | (code >> 18));
      out += char(0x80 | ((code >> 12) & 0x3F));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    }
  }

  bool parseHex4(uint32_t &code) {
    if (at + 4 > text.size())
      return fail("a \\u escape needs four hex digits");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[at++];
      code <<= 4;
      if (c >= '0' && c <= '9')
        code |= c - '0';
      else if (c >= 'a' && c <= 'f')
        code |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        code |= c - 'A' + 10;
      else
        return fail("a \\u escape needs four hex digits");
    }
    return true;
  }

  bool parseString(std::string &out) {
    ++at; // '"'
    while (true) {
      if (at >= text.size())
        return fail("unterminated string");
      char c = text[at++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at >= text.size())
        return fail("unterminated string");
      char escape = text[at++];
      switch (escape) {
      case '"':
      case '\\':
      case '/':
        out += escape;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t code;
        if (!parseHex4(code))
          return false;
        if (code >= 0xD800 && code < 0xDC00 &&
            text.compare(at, 2, "\\u") == 0) {
          at += 2;
          uint32_t low;
          if (!parseHex4(low))
            return false;
          if (low < 0xDC00 || low >= 0xE000)
            return fail("an unpaired surrogate in a \\u escape");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        } else if (code >= 0xD800 && code < 0xE000) {
          return fail("an unpaired surrogate in a \\u escape");
        }
        appendUtf8(out, code);
        break;
      }
      default:
        return fail(std::string("unknown escape '\\") + escape + "'");
      }
    }
  }

  bool parseNumber(Value &value) {
    size_t start = at;
    if (at < text.size() && text[at] == '-')
      ++at;
    auto digits = [&] {
      size_t first = at;
      while (at < text.size() && text[at] >= '0' && text[at] <= '9')
        ++at;
      return at > first;
    };
    if (!digits())
      return fail("expected a value");
    bool integral = true;
    if (at < text.size() && text[at] == '.') {
      ++at;
      integral = false;
      if (!digits())
        return fail("expected digits after '.'");
    }
    if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
      ++at;
      integral = false;
      if (at < text.size() && (text[at] == '+' || text[at] == '-'))
        ++at;
      if (!digits())
        return fail("expected digits in an exponent");
    }
    std::string literal = text.substr(start, at - start);
    value.kind = Value::Kind::Number;
    value.number = std::strtod(literal.c_str(), nullptr);
    if (integral) {
      errno = 0;
      char *end = nullptr;
      long long parsed = std::strtoll(literal.c_str(), &end, 10);
      if (errno == 0 && end && *end == '\0')
        value.integer = parsed;
    }
    return true;
  }

  const std::string &text;
  size_t at = 0;
  std::string message;
};
} // namespace

std::optional<Value> braidrt::json::parse(const std::string &text,
                                          std::string &error) {
  return Parser(text).parseDocument(error);
}
