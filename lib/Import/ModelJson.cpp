//===- ModelJson.cpp - Import DLRM model specs ----------------------------===//
//
// This file imports a JSON DLRM model spec into a Braid module: one
// braid.table per table and a @forward function computing the DLRM forward
// pass of facebookresearch/dlrm: bottom MLP (ReLU after every layer),
// embedding bags, interaction (dot, cat, or DCN-v2: cat then low-rank cross
// layers), top MLP (ReLU after every layer but the last, which is followed
// by a sigmoid). Every malformed field is reported with its
// JSON path, e.g. `tables[3].embedding_dim`.
//
//===----------------------------------------------------------------------===//

#include "braid/Import/ModelJson.h"

#include "braid/Dialect/Braid/IR/Braid.h"
#include "braid/Dialect/Braid/IR/Optimizers.h"
#include "braid/Support/BoundedInput.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>

using namespace mlir;
using namespace mlir::braid;
namespace json = llvm::json;

namespace {
struct TableSpec {
  std::string name;
  int64_t rows = 0, dim = 0;
  double poolingFactor = 0;
  std::optional<double> uniqueRatio;
  PoolingMode pooling = PoolingMode::sum;
  Type elementType;
};

struct ModelSpec {
  std::string name;
  int64_t batchSize = 0, denseFeatures = 0;
  SmallVector<int64_t> bottomMlp, topMlp;
  InteractionKind interaction = InteractionKind::dot;
  /// DCN-v2 low-rank cross layers after a cat interaction ("dcn"): how
  /// many, and their rank; 0 layers for dot and cat.
  int64_t dcnLayers = 0, dcnLowRank = 0;
  SmallVector<TableSpec> tables;
  /// The training optimizers ("optimizer"), every field filled in; null
  /// when the spec names none.
  DictionaryAttr optimizer;
};

/// Reads a ModelSpec out of JSON, reporting the first problem with its path.
class SpecReader {
public:
  SpecReader(MLIRContext *context, Location loc) : context(context), loc(loc) {}

  FailureOr<ModelSpec> read(const json::Value &root);

private:
  InFlightDiagnostic error(StringRef path) {
    return emitError(loc) << "model spec: " << path << ": ";
  }
  FailureOr<const json::Value *> field(const json::Object &object,
                                       StringRef path, StringRef key,
                                       bool required = true);
  /// A positive integer of at most `max`.
  FailureOr<int64_t> positiveInt(const json::Value &value, StringRef path,
                                 int64_t max);
  FailureOr<std::string> string(const json::Value &value, StringRef path);
  FailureOr<SmallVector<int64_t>> sizes(const json::Value &value,
                                        StringRef path, bool allowEmpty);
  LogicalResult checkKeys(const json::Object &object, StringRef path,
                          ArrayRef<StringRef> known);
  FailureOr<TableSpec> table(const json::Value &value, StringRef path);
  FailureOr<DictionaryAttr> optimizer(const json::Value &value);
  FailureOr<DictionaryAttr> optimizerPart(const json::Value &value,
                                          StringRef path,
                                          ArrayRef<StringRef> types);

  MLIRContext *context;
  Location loc;
};
} // namespace

/// Renders a JSON value for an error message.
static std::string render(const json::Value &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value;
  if (text.size() > 60)
    text = text.substr(0, 57) + "...";
  return text;
}

LogicalResult SpecReader::checkKeys(const json::Object &object, StringRef path,
                                    ArrayRef<StringRef> known) {
  for (const auto &entry : object) {
    StringRef key = entry.first;
    if (key.starts_with("_") || llvm::is_contained(known, key))
      continue;
    return error(path.empty() ? key : StringRef((path + "." + key).str()))
           << "unknown field '" << key << "'";
  }
  return success();
}

FailureOr<const json::Value *> SpecReader::field(const json::Object &object,
                                                 StringRef path, StringRef key,
                                                 bool required) {
  const json::Value *value = object.get(key);
  if (!value && required)
    return error(path.empty() ? key.str() : (path + "." + key).str())
           << "missing required field";
  return value;
}

/// The largest sizes a model may have: far beyond any real DLRM (MLPerf's
/// largest table has 40M rows; its batch is 65,536), small enough that no
/// product of sizes the compiler forms overflows int64.
static constexpr int64_t kMaxRows = int64_t(1) << 40;
static constexpr int64_t kMaxWidth = int64_t(1) << 20;
static constexpr int64_t kMaxBatch = int64_t(1) << 30;
static constexpr int64_t kMaxTables = 100000;
static constexpr int64_t kMaxElements = int64_t(1) << 50;
static constexpr double kMaxPoolingFactor = TableOp::kMaxPoolingFactor;
static constexpr int64_t kMaxDcnLayers = 64;

FailureOr<int64_t> SpecReader::positiveInt(const json::Value &value,
                                           StringRef path, int64_t max) {
  std::optional<int64_t> number = value.getAsInteger();
  if (!number || *number <= 0)
    return error(path) << "expected a positive integer, got " << render(value);
  if (*number > max)
    return error(path) << "expected at most " << max << ", got " << *number;
  return *number;
}

FailureOr<std::string> SpecReader::string(const json::Value &value,
                                          StringRef path) {
  std::optional<StringRef> text = value.getAsString();
  if (!text || text->empty())
    return error(path) << "expected a non-empty string, got " << render(value);
  return text->str();
}

FailureOr<SmallVector<int64_t>>
SpecReader::sizes(const json::Value &value, StringRef path, bool allowEmpty) {
  const json::Array *array = value.getAsArray();
  if (!array)
    return error(path) << "expected an array of layer sizes, got " << render(value);
  if (array->empty() && !allowEmpty)
    return error(path) << "expected at least one layer";
  SmallVector<int64_t> result;
  for (auto [index, element] : llvm::enumerate(*array)) {
    FailureOr<int64_t> size =
        positiveInt(element, (path + "[" + Twine(index) + "]").str(),
                    kMaxWidth);
    if (failed(size))
      return failure();
    result.push_back(*size);
  }
  return result;
}

/// True for names usable as symbols and file names: [A-Za-z_][A-Za-z0-9_]*.
static bool isValidName(StringRef name) {
  if (name.empty() || !(std::isalpha(name[0]) || name[0] == '_'))
    return false;
  return llvm::all_of(name, [](char c) { return std::isalnum(c) || c == '_'; });
}

FailureOr<TableSpec> SpecReader::table(const json::Value &value,
                                       StringRef path) {
  const json::Object *object = value.getAsObject();
  if (!object)
    return error(path) << "expected a table object, got " << render(value);
  if (failed(checkKeys(*object, path,
                       {"name", "num_embeddings", "embedding_dim",
                        "pooling_factor", "pooling", "unique_ratio", "dtype"})))
    return failure();
  TableSpec spec;
  auto sub = [&](StringRef key) { return (path + "." + key).str(); };
  FailureOr<const json::Value *> name = field(*object, path, "name");
  FailureOr<const json::Value *> rows = field(*object, path, "num_embeddings");
  FailureOr<const json::Value *> dim = field(*object, path, "embedding_dim");
  FailureOr<const json::Value *> pooling =
      field(*object, path, "pooling_factor");
  if (failed(name) || failed(rows) || failed(dim) || failed(pooling))
    return failure();
  FailureOr<std::string> nameText = string(**name, sub("name"));
  if (failed(nameText))
    return failure();
  if (!isValidName(*nameText))
    return error(sub("name")) << "'" << *nameText
                              << "' is not a valid table name (letters, "
                                 "digits and '_', not starting with a digit)";
  spec.name = *nameText;
  FailureOr<int64_t> rowCount =
      positiveInt(**rows, sub("num_embeddings"), kMaxRows);
  FailureOr<int64_t> dimSize =
      positiveInt(**dim, sub("embedding_dim"), kMaxWidth);
  if (failed(rowCount) || failed(dimSize))
    return failure();
  if (*rowCount > kMaxElements / *dimSize)
    return error(sub("num_embeddings"))
           << "a table of " << *rowCount << " x " << *dimSize
           << " has more than 2^50 elements";
  spec.rows = *rowCount;
  spec.dim = *dimSize;
  std::optional<double> factor = (*pooling)->getAsNumber();
  if (!factor || !std::isfinite(*factor) || *factor < 0)
    return error(sub("pooling_factor"))
           << "expected a non-negative number, got " << render(**pooling);
  if (*factor > kMaxPoolingFactor)
    return error(sub("pooling_factor"))
           << "expected at most " << int64_t(kMaxPoolingFactor)
           << " lookups per bag, got " << render(**pooling);
  spec.poolingFactor = *factor;
  if (const json::Value *mode = object->get("pooling")) {
    std::optional<StringRef> text = mode->getAsString();
    std::optional<PoolingMode> parsed =
        text ? symbolizePoolingMode(*text) : std::nullopt;
    if (!parsed)
      return error(sub("pooling"))
             << "expected \"sum\", \"mean\" or \"max\", got " << render(*mode);
    spec.pooling = *parsed;
  }
  if (const json::Value *ratio = object->get("unique_ratio")) {
    std::optional<double> number = ratio->getAsNumber();
    if (!number || !(*number > 0 && *number <= 1))
      return error(sub("unique_ratio"))
             << "expected a number in (0, 1], got " << render(*ratio);
    spec.uniqueRatio = *number;
  }
  spec.elementType = Float32Type::get(context);
  if (const json::Value *dtype = object->get("dtype")) {
    std::optional<StringRef> text = dtype->getAsString();
    if (text == "f32")
      spec.elementType = Float32Type::get(context);
    else if (text == "f16")
      spec.elementType = Float16Type::get(context);
    else if (text == "bf16")
      spec.elementType = BFloat16Type::get(context);
    else
      return error(sub("dtype"))
             << "expected \"f32\", \"f16\" or \"bf16\", got " << render(*dtype);
  }
  return spec;
}

/// One optimizer: its type, then lr and the type's hyperparameters, with
/// PyTorch's (and FBGEMM's, for rowwise_adagrad) defaults filled in.
FailureOr<DictionaryAttr>
SpecReader::optimizerPart(const json::Value &value, StringRef path,
                          ArrayRef<StringRef> types) {
  const json::Object *object = value.getAsObject();
  if (!object)
    return error(path) << "expected an optimizer object, got "
                       << render(value);
  auto sub = [&](StringRef key) { return (path + "." + key).str(); };
  FailureOr<const json::Value *> typeValue = field(*object, path, "type");
  if (failed(typeValue))
    return failure();
  std::optional<StringRef> type = (*typeValue)->getAsString();
  if (!type || !llvm::is_contained(types, *type)) {
    std::string expected;
    for (auto [index, name] : llvm::enumerate(types))
      expected += (index == 0 ? "\"" : index + 1 == types.size() ? " or \"" : ", \"") +
                  name.str() + "\"";
    return error(sub("type")) << "expected " << expected << ", got "
                              << render(**typeValue);
  }
  // The hyperparameters each type takes, with their defaults (lr has none).
  SmallVector<std::pair<StringRef, double>> known = {{"lr", 0}};
  for (const OptimizerHyperparameter &parameter :
       getOptimizerHyperparameters(*type))
    known.push_back({parameter.name, parameter.defaultValue});
  SmallVector<StringRef> keys = {"type"};
  for (auto &entry : known)
    keys.push_back(entry.first);
  if (failed(checkKeys(*object, path, keys)))
    return failure();
  Builder builder(context);
  SmallVector<NamedAttribute> fields = {
      builder.getNamedAttr("type", builder.getStringAttr(*type))};
  for (auto [key, fallback] : known) {
    const json::Value *given = object->get(key);
    if (!given && key == "lr")
      return error(sub(key)) << "missing required field";
    double number = fallback;
    if (given) {
      std::optional<double> parsed = given->getAsNumber();
      bool isBeta = key.starts_with("beta");
      bool valid = parsed && std::isfinite(*parsed) &&
                   (isBeta ? *parsed >= 0 && *parsed < 1 : *parsed > 0);
      if (!valid)
        return error(sub(key))
               << (isBeta ? "expected a number in [0, 1), got "
                          : "expected a finite positive number, got ")
               << render(*given);
      number = *parsed;
    }
    fields.push_back(builder.getNamedAttr(key, builder.getF64FloatAttr(number)));
  }
  return builder.getDictionaryAttr(fields);
}

FailureOr<DictionaryAttr> SpecReader::optimizer(const json::Value &value) {
  const json::Object *object = value.getAsObject();
  if (!object)
    return error("optimizer") << "expected an object with \"dense\" and "
                                 "\"embedding\", got "
                              << render(value);
  if (failed(checkKeys(*object, "optimizer", {"dense", "embedding"})))
    return failure();
  FailureOr<const json::Value *> dense = field(*object, "optimizer", "dense");
  FailureOr<const json::Value *> embedding =
      field(*object, "optimizer", "embedding");
  if (failed(dense) || failed(embedding))
    return failure();
  FailureOr<DictionaryAttr> denseAttr =
      optimizerPart(**dense, "optimizer.dense", getDenseOptimizerTypes());
  if (failed(denseAttr))
    return failure();
  FailureOr<DictionaryAttr> embeddingAttr =
      optimizerPart(**embedding, "optimizer.embedding",
                    getEmbeddingOptimizerTypes());
  if (failed(embeddingAttr))
    return failure();
  Builder builder(context);
  return builder.getDictionaryAttr(
      {builder.getNamedAttr("dense", *denseAttr),
       builder.getNamedAttr("embedding", *embeddingAttr)});
}

FailureOr<ModelSpec> SpecReader::read(const json::Value &root) {
  const json::Object *object = root.getAsObject();
  if (!object)
    return error("$") << "expected a JSON object";
  if (failed(checkKeys(*object, "",
                       {"name", "batch_size", "dense_features", "bottom_mlp",
                        "top_mlp", "interaction", "dcn_num_layers",
                        "dcn_low_rank_dim", "optimizer", "tables"})))
    return failure();
  ModelSpec spec;
  FailureOr<const json::Value *> name = field(*object, "", "name");
  FailureOr<const json::Value *> batch = field(*object, "", "batch_size");
  FailureOr<const json::Value *> dense = field(*object, "", "dense_features");
  FailureOr<const json::Value *> bottom = field(*object, "", "bottom_mlp");
  FailureOr<const json::Value *> top = field(*object, "", "top_mlp");
  FailureOr<const json::Value *> interaction =
      field(*object, "", "interaction");
  FailureOr<const json::Value *> tables = field(*object, "", "tables");
  if (failed(name) || failed(batch) || failed(dense) || failed(bottom) ||
      failed(top) || failed(interaction) || failed(tables))
    return failure();
  FailureOr<std::string> nameText = string(**name, "name");
  FailureOr<int64_t> batchSize = positiveInt(**batch, "batch_size", kMaxBatch);
  FailureOr<int64_t> denseFeatures =
      positiveInt(**dense, "dense_features", kMaxWidth);
  FailureOr<SmallVector<int64_t>> bottomSizes =
      sizes(**bottom, "bottom_mlp", /*allowEmpty=*/true);
  FailureOr<SmallVector<int64_t>> topSizes =
      sizes(**top, "top_mlp", /*allowEmpty=*/false);
  if (failed(nameText) || failed(batchSize) || failed(denseFeatures) ||
      failed(bottomSizes) || failed(topSizes))
    return failure();
  spec.name = *nameText;
  spec.batchSize = *batchSize;
  spec.denseFeatures = *denseFeatures;
  spec.bottomMlp = *bottomSizes;
  spec.topMlp = *topSizes;
  std::optional<StringRef> kind = (*interaction)->getAsString();
  bool dcn = kind && *kind == "dcn";
  // DCN-v2 is cat followed by the cross layers.
  std::optional<InteractionKind> parsedKind =
      dcn ? InteractionKind::cat
          : (kind ? symbolizeInteractionKind(*kind) : std::nullopt);
  if (!parsedKind)
    return error("interaction") << "expected \"dot\", \"cat\" or \"dcn\", got "
                                << render(**interaction);
  spec.interaction = *parsedKind;
  for (StringRef key : {"dcn_num_layers", "dcn_low_rank_dim"}) {
    const json::Value *value = object->get(key);
    if (!dcn && value)
      return error(key) << "only a \"dcn\" interaction has cross layers";
    if (dcn && !value)
      return error(key) << "a \"dcn\" interaction needs " << key;
  }
  if (dcn) {
    FailureOr<int64_t> layers = positiveInt(*object->get("dcn_num_layers"),
                                            "dcn_num_layers", kMaxDcnLayers);
    FailureOr<int64_t> rank = positiveInt(*object->get("dcn_low_rank_dim"),
                                          "dcn_low_rank_dim", kMaxWidth);
    if (failed(layers) || failed(rank))
      return failure();
    spec.dcnLayers = *layers;
    spec.dcnLowRank = *rank;
  }

  if (const json::Value *optimizerValue = object->get("optimizer")) {
    FailureOr<DictionaryAttr> parsed = optimizer(*optimizerValue);
    if (failed(parsed))
      return failure();
    spec.optimizer = *parsed;
  }

  const json::Array *tableArray = (*tables)->getAsArray();
  if (!tableArray || tableArray->empty())
    return error("tables") << "expected a non-empty array of tables";
  llvm::StringSet<> names;
  for (auto [index, value] : llvm::enumerate(*tableArray)) {
    std::string path = ("tables[" + Twine(index) + "]").str();
    FailureOr<TableSpec> table = this->table(value, path);
    if (failed(table))
      return failure();
    if (!names.insert(table->name).second)
      return error(path + ".name") << "duplicate table name '" << table->name
                                   << "'";
    spec.tables.push_back(std::move(*table));
  }
  if (spec.tables.size() > size_t(kMaxTables))
    return error("tables") << "expected at most " << kMaxTables
                           << " tables, got " << spec.tables.size();
  // The interaction's width, summed without overflow (each part is at most
  // kMaxWidth): the top MLP's input, and with the batch an activation.
  int64_t width =
      spec.bottomMlp.empty() ? spec.denseFeatures : spec.bottomMlp.back();
  int64_t numTables = spec.tables.size();
  if (spec.interaction == InteractionKind::dot)
    width += numTables * (numTables + 1) / 2;
  else
    for (const TableSpec &table : spec.tables)
      width += table.dim;
  if (spec.batchSize > kMaxElements / width)
    return error("batch_size") << "a batch of " << spec.batchSize << " x "
                               << width
                               << " interaction features has more than "
                                  "2^50 elements";
  if (spec.interaction == InteractionKind::dot) {
    int64_t denseDim =
        spec.bottomMlp.empty() ? spec.denseFeatures : spec.bottomMlp.back();
    for (auto [index, table] : llvm::enumerate(spec.tables))
      if (table.dim != denseDim)
        return error(("tables[" + Twine(index) + "].embedding_dim").str())
               << "dot interaction needs every embedding_dim to equal the "
                  "bottom MLP's last size ("
               << denseDim << "), got " << table.dim;
  }
  return spec;
}

/// Emits the module for `spec`.
static OwningOpRef<ModuleOp> buildModule(const ModelSpec &spec,
                                         MLIRContext *context, Location loc) {
  OpBuilder builder(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  (*module)->setAttr(BraidDialect::kModelAttrName,
                     builder.getStringAttr(spec.name));
  if (spec.optimizer)
    (*module)->setAttr(BraidDialect::kOptimizerAttrName, spec.optimizer);
  builder.setInsertionPointToEnd(module->getBody());
  Type f32 = builder.getF32Type();
  Type i64 = builder.getI64Type();
  auto named = [&](const Twine &name) {
    return NameLoc::get(builder.getStringAttr(name), loc);
  };

  for (const TableSpec &table : spec.tables) {
    auto type = RankedTensorType::get({table.rows, table.dim},
                                      table.elementType);
    TableOp::create(builder, named(table.name),
                    builder.getStringAttr(table.name), TypeAttr::get(type),
                    builder.getF64FloatAttr(table.poolingFactor),
                    table.uniqueRatio
                        ? builder.getF64FloatAttr(*table.uniqueRatio)
                        : FloatAttr(),
                    TablePlacementAttrInterface());
  }

  // Signature: inputs first, then parameters, each named by an attribute.
  int64_t batch = spec.batchSize;
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  auto addArg = [&](Type type, StringRef kind, const Twine &name) {
    argTypes.push_back(type);
    argAttrs.push_back(builder.getDictionaryAttr(
        builder.getNamedAttr(kind, builder.getStringAttr(name))));
    return argTypes.size() - 1;
  };
  StringRef input = BraidDialect::kInputAttrName;
  StringRef param = BraidDialect::kParamAttrName;
  size_t denseArg =
      addArg(RankedTensorType::get({batch, spec.denseFeatures}, f32), input,
             "dense");
  SmallVector<std::pair<size_t, size_t>> bagArgs;
  for (const TableSpec &table : spec.tables) {
    size_t indices = addArg(RankedTensorType::get({ShapedType::kDynamic}, i64),
                            input, table.name + ".indices");
    size_t offsets = addArg(RankedTensorType::get({batch + 1}, i64), input,
                            table.name + ".offsets");
    bagArgs.push_back({indices, offsets});
  }
  struct Layer {
    std::string name;
    int64_t in, out;
    size_t weight, bias;
  };
  auto addMlp = [&](StringRef prefix, int64_t in, ArrayRef<int64_t> sizes) {
    SmallVector<Layer> layers;
    for (auto [index, out] : llvm::enumerate(sizes)) {
      std::string name = (prefix + "." + Twine(index)).str();
      size_t weight =
          addArg(RankedTensorType::get({out, in}, f32), param, name + ".weight");
      size_t bias = addArg(RankedTensorType::get({out}, f32), param,
                           name + ".bias");
      layers.push_back({name, in, out, weight, bias});
      in = out;
    }
    return layers;
  };
  SmallVector<Layer> bottom = addMlp("bottom_mlp", spec.denseFeatures,
                                     spec.bottomMlp);
  int64_t denseDim =
      spec.bottomMlp.empty() ? spec.denseFeatures : spec.bottomMlp.back();
  int64_t numTables = spec.tables.size();
  int64_t interactionDim = denseDim;
  if (spec.interaction == InteractionKind::dot)
    interactionDim += numTables * (numTables + 1) / 2;
  else
    for (const TableSpec &table : spec.tables)
      interactionDim += table.dim;
  // DCN-v2's low-rank cross layers (TorchRec's LowRankCrossNet):
  // x_{l+1} = x_0 * (W_l (V_l x_l) + b_l) + x_l on the cat features, with
  // V_l [low_rank, N], W_l [N, low_rank] and b_l [N].
  struct CrossLayer {
    std::string name;
    size_t v, w, bias;
  };
  SmallVector<CrossLayer> cross;
  for (int64_t l = 0; l < spec.dcnLayers; ++l) {
    std::string name = ("dcn." + Twine(l)).str();
    size_t v = addArg(RankedTensorType::get({spec.dcnLowRank, interactionDim},
                                            f32),
                      param, name + ".V");
    size_t w = addArg(RankedTensorType::get({interactionDim, spec.dcnLowRank},
                                            f32),
                      param, name + ".W");
    size_t bias = addArg(RankedTensorType::get({interactionDim}, f32), param,
                         name + ".bias");
    cross.push_back({name, v, w, bias});
  }
  SmallVector<Layer> top = addMlp("top_mlp", interactionDim, spec.topMlp);

  auto resultType = RankedTensorType::get({batch, spec.topMlp.back()}, f32);
  auto funcType = builder.getFunctionType(argTypes, {resultType});
  auto func = func::FuncOp::create(builder, named("forward"), "forward",
                                   funcType);
  func.setAllArgAttrs(argAttrs);
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  auto arg = [&](size_t index) { return body->getArgument(index); };

  auto runMlp = [&](Value x, ArrayRef<Layer> layers, bool lastIsSigmoid) {
    for (auto [index, layer] : llvm::enumerate(layers)) {
      Activation activation = Activation::relu;
      if (lastIsSigmoid && index + 1 == layers.size())
        activation = Activation::sigmoid;
      auto type = RankedTensorType::get({batch, layer.out}, f32);
      x = LinearOp::create(builder, named(layer.name), type, x,
                           arg(layer.weight), arg(layer.bias), activation,
                           DensePlacementAttr())
              .getResult();
    }
    return x;
  };
  Value dense = runMlp(arg(denseArg), bottom, /*lastIsSigmoid=*/false);
  SmallVector<Value> embeddings;
  for (auto [table, bagArg] : llvm::zip(spec.tables, bagArgs)) {
    auto type = RankedTensorType::get({batch, table.dim}, table.elementType);
    Value pooled =
        EmbeddingBagOp::create(builder, named(table.name), type,
                               table.name,
                               arg(bagArg.first), arg(bagArg.second), Value(),
                               table.pooling)
            .getResult();
    if (table.elementType != f32)
      pooled = arith::ExtFOp::create(
          builder, named(table.name),
          RankedTensorType::get({batch, table.dim}, f32), pooled);
    embeddings.push_back(pooled);
  }
  Value features =
      InteractionOp::create(builder, named("interaction"),
                            RankedTensorType::get({batch, interactionDim}, f32),
                            spec.interaction, dense, embeddings)
          .getResult();
  if (!cross.empty()) {
    auto rankType = RankedTensorType::get({spec.dcnLowRank}, f32);
    auto lowType = RankedTensorType::get({batch, spec.dcnLowRank}, f32);
    auto wideType = RankedTensorType::get({batch, interactionDim}, f32);
    Value x0 = features;
    for (const CrossLayer &layer : cross) {
      Location at = named(layer.name);
      // V has no bias: a zero one.
      Value noBias = arith::ConstantOp::create(
          builder, at, cast<TypedAttr>(builder.getZeroAttr(rankType)));
      Value low = LinearOp::create(builder, at, lowType, features,
                                   arg(layer.v), noBias, Activation::none,
                                   DensePlacementAttr());
      Value mixed = LinearOp::create(builder, at, wideType, low, arg(layer.w),
                                     arg(layer.bias), Activation::none,
                                     DensePlacementAttr());
      features = arith::AddFOp::create(
          builder, at, arith::MulFOp::create(builder, at, x0, mixed),
          features);
    }
  }
  Value output = runMlp(features, top, /*lastIsSigmoid=*/true);
  func::ReturnOp::create(builder, named("forward"), output);
  return module;
}

OwningOpRef<ModuleOp> mlir::braid::importModelJson(StringRef jsonText,
                                                   StringRef fileName,
                                                   MLIRContext *context) {
  context->loadDialect<BraidDialect, func::FuncDialect, arith::ArithDialect>();
  Location loc = FileLineColLoc::get(context, fileName, 1, 1);
  llvm::Expected<json::Value> root = parseBoundedJson(jsonText);
  if (!root) {
    emitError(loc) << "invalid JSON: " << llvm::toString(root.takeError());
    return nullptr;
  }
  FailureOr<ModelSpec> spec = SpecReader(context, loc).read(*root);
  if (failed(spec))
    return nullptr;
  OwningOpRef<ModuleOp> module = buildModule(*spec, context, loc);
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

void mlir::braid::registerImportModelJsonTranslation() {
  TranslateToMLIRRegistration registration(
      "import-model-json", "import a JSON DLRM model spec into Braid IR",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        return importModelJson(buffer->getBuffer(),
                               buffer->getBufferIdentifier(), context);
      },
      [](DialectRegistry &registry) {
        registry.insert<BraidDialect, arith::ArithDialect, func::FuncDialect>();
      });
}
