//===- Signature.cpp - What a Braid program takes, without MLIR -----------===//
//
// This file implements lookups in a Signature, its JSON form (which a
// compiled artifact's manifest carries) and comparison of two signatures.
//
//===----------------------------------------------------------------------===//

#include "braid/Interp/Signature.h"

#include "llvm/ADT/Twine.h"

#include <cmath>

using namespace mlir::braid::interp;

std::optional<unsigned> Signature::findArgument(llvm::StringRef name) const {
  for (auto [i, argument] : llvm::enumerate(arguments))
    if (argument.name == name)
      return i;
  return std::nullopt;
}

const TableSpec *Signature::findTable(llvm::StringRef name) const {
  for (const TableSpec &table : tables)
    if (table.name == name)
      return &table;
  return nullptr;
}

std::optional<ElementKind>
mlir::braid::interp::parseElementKind(llvm::StringRef name) {
  for (ElementKind kind :
       {ElementKind::f16, ElementKind::bf16, ElementKind::f32, ElementKind::f64,
        ElementKind::i1, ElementKind::i32, ElementKind::i64,
        ElementKind::index})
    if (stringifyElementKind(kind) == name)
      return kind;
  return std::nullopt;
}

llvm::json::Object
mlir::braid::interp::signatureToJson(const Signature &signature) {
  llvm::json::Array arguments, tables;
  for (const ArgumentSpec &argument : signature.arguments) {
    llvm::json::Array shape;
    for (int64_t size : argument.shape)
      shape.push_back(size);
    llvm::json::Object entry{{"name", argument.name},
                             {"type", argument.type},
                             {"shape", std::move(shape)},
                             {"parameter", argument.parameter}};
    if (argument.kind)
      entry["dtype"] = stringifyElementKind(*argument.kind);
    if (!argument.ranked)
      entry["ranked"] = false;
    arguments.push_back(std::move(entry));
  }
  for (const TableSpec &table : signature.tables)
    tables.push_back(
        llvm::json::Object{{"name", table.name},
                           {"rows", table.rows},
                           {"dim", table.dim},
                           {"dtype", stringifyElementKind(table.kind)},
                           {"pooling_factor", table.poolingFactor}});
  return llvm::json::Object{{"arguments", std::move(arguments)},
                            {"tables", std::move(tables)}};
}

static llvm::Error signatureError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<Signature>
mlir::braid::interp::signatureFromJson(const llvm::json::Value &value,
                                       llvm::StringRef what) {
  const llvm::json::Object *root = value.getAsObject();
  const llvm::json::Array *arguments =
      root ? root->getArray("arguments") : nullptr;
  const llvm::json::Array *tables = root ? root->getArray("tables") : nullptr;
  if (!arguments || !tables)
    return signatureError(what + ": expected an object with 'arguments' and "
                                 "'tables' arrays");
  Signature signature;
  for (auto [i, entry] : llvm::enumerate(*arguments)) {
    std::string at = (what + ".arguments[" + llvm::Twine(i) + "]").str();
    const llvm::json::Object *object = entry.getAsObject();
    std::optional<llvm::StringRef> name =
        object ? object->getString("name") : std::nullopt;
    const llvm::json::Array *shape =
        object ? object->getArray("shape") : nullptr;
    if (!name || !shape)
      return signatureError(at + ": needs a 'name' and a 'shape'");
    ArgumentSpec spec;
    spec.name = name->str();
    spec.type = object->getString("type").value_or("").str();
    spec.parameter = object->getBoolean("parameter").value_or(false);
    spec.ranked = object->getBoolean("ranked").value_or(true);
    if (std::optional<llvm::StringRef> dtype = object->getString("dtype")) {
      spec.kind = parseElementKind(*dtype);
      if (!spec.kind)
        return signatureError(at + ".dtype: unknown element type '" + *dtype +
                              "'");
    }
    for (const llvm::json::Value &size : *shape) {
      std::optional<int64_t> n = size.getAsInteger();
      if (!n || *n < -1)
        return signatureError(at + ".shape: sizes are integers, -1 for "
                                   "dynamic");
      spec.shape.push_back(*n);
    }
    signature.arguments.push_back(std::move(spec));
  }
  for (auto [i, entry] : llvm::enumerate(*tables)) {
    std::string at = (what + ".tables[" + llvm::Twine(i) + "]").str();
    const llvm::json::Object *object = entry.getAsObject();
    std::optional<llvm::StringRef> name =
        object ? object->getString("name") : std::nullopt;
    TableSpec spec;
    spec.rows = object ? object->getInteger("rows").value_or(0) : 0;
    spec.dim = object ? object->getInteger("dim").value_or(0) : 0;
    spec.poolingFactor =
        object ? object->getNumber("pooling_factor").value_or(-1) : -1;
    std::optional<ElementKind> kind =
        parseElementKind(object ? object->getString("dtype").value_or("") : "");
    if (!name || spec.rows < 1 || spec.dim < 1 || !kind ||
        !isFloatKind(*kind) || !std::isfinite(spec.poolingFactor) ||
        spec.poolingFactor < 0)
      return signatureError(at + ": needs a 'name', positive 'rows' and "
                                 "'dim', a float 'dtype' and a finite, "
                                 "non-negative 'pooling_factor'");
    spec.name = name->str();
    spec.kind = *kind;
    signature.tables.push_back(std::move(spec));
  }
  return signature;
}

/// "parameter 'w' f32[4, 3]" or "input 'x' i64[?]".
static std::string describeSpec(const ArgumentSpec &spec) {
  std::string text =
      (spec.parameter ? "parameter '" : "input '") + spec.name + "' " +
      (spec.kind ? stringifyElementKind(*spec.kind).str() : spec.type) + "[";
  for (auto [d, size] : llvm::enumerate(spec.shape))
    text += (d ? ", " : "") + (size < 0 ? "?" : std::to_string(size));
  return text + "]";
}

std::optional<std::string>
mlir::braid::interp::compareSignatures(const Signature &expected,
                                       const Signature &actual) {
  if (expected.arguments.size() != actual.arguments.size())
    return "it has " + std::to_string(actual.arguments.size()) +
           " arguments, not " + std::to_string(expected.arguments.size());
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(expected.arguments, actual.arguments))) {
    auto &[want, have] = pair;
    if (want.name != have.name || want.kind != have.kind ||
        want.shape != have.shape || want.parameter != have.parameter)
      return "its argument " + std::to_string(i) + " is " + describeSpec(have) +
             ", not " + describeSpec(want);
  }
  if (expected.tables.size() != actual.tables.size())
    return "it has " + std::to_string(actual.tables.size()) + " tables, not " +
           std::to_string(expected.tables.size());
  for (auto [want, have] : llvm::zip(expected.tables, actual.tables))
    if (want.name != have.name || want.rows != have.rows ||
        want.dim != have.dim || want.kind != have.kind ||
        want.poolingFactor != have.poolingFactor)
      return "its table '" + have.name + "' differs from '" + want.name + "'";
  return std::nullopt;
}
