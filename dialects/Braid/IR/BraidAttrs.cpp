//===- BraidAttrs.cpp - Braid attributes ----------------------------------===//
//
// This file implements the Braid attributes: replica groups, the table and
// dense-layer placements, and the cluster description.
//
//===----------------------------------------------------------------------===//

#include "braid/Dialect/Braid/IR/Braid.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::braid;

#include "braid/Dialect/Braid/IR/BraidAttrInterfaces.cpp.inc"
#include "braid/Dialect/Braid/IR/BraidEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "braid/Dialect/Braid/IR/BraidAttrs.cpp.inc"

void BraidDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "braid/Dialect/Braid/IR/BraidAttrs.cpp.inc"
      >();
}

/// Checks that `ranks` are non-negative and distinct.
static LogicalResult
verifyDistinctRanks(function_ref<InFlightDiagnostic()> emitError,
                    ArrayRef<int64_t> ranks, StringRef what) {
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t rank : ranks) {
    if (rank < 0)
      return emitError() << what << " has a negative rank " << rank;
    if (!seen.insert(rank).second)
      return emitError() << what << " lists rank " << rank << " twice";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ReplicaGroupsAttr
//===----------------------------------------------------------------------===//

LogicalResult
ReplicaGroupsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          int64_t groupSize, ArrayRef<int64_t> ranks) {
  if (groupSize <= 0)
    return emitError() << "replica groups must not be empty";
  if (ranks.empty() || ranks.size() % groupSize != 0)
    return emitError() << "replica groups must all have " << groupSize
                       << " ranks";
  // Disjointness is a rule of the collectives (a permute's pairs may repeat
  // a rank), checked by CollectiveOpInterface.
  for (int64_t rank : ranks)
    if (rank < 0)
      return emitError() << "replica groups have a negative rank " << rank;
  return success();
}

ReplicaGroupsAttr
ReplicaGroupsAttr::getFromGroups(function_ref<InFlightDiagnostic()> emitError,
                              MLIRContext *context,
                              ArrayRef<SmallVector<int64_t>> groups) {
  if (groups.empty()) {
    emitError() << "replica groups must list at least one group";
    return {};
  }
  int64_t groupSize = groups.front().size();
  SmallVector<int64_t> flat;
  for (const auto &[index, group] : llvm::enumerate(groups)) {
    if (static_cast<int64_t>(group.size()) != groupSize) {
      emitError() << "replica group " << index << " has " << group.size()
                  << " ranks but group 0 has " << groupSize
                  << "; all groups must have the same size";
      return {};
    }
    llvm::append_range(flat, group);
  }
  return Base::getChecked(emitError, context, groupSize, flat);
}

int64_t ReplicaGroupsAttr::getNumGroups() const {
  return getRanks().size() / getGroupSize();
}

ArrayRef<int64_t> ReplicaGroupsAttr::getGroup(int64_t index) const {
  return getRanks().slice(index * getGroupSize(), getGroupSize());
}

std::optional<std::pair<int64_t, int64_t>>
ReplicaGroupsAttr::findRank(int64_t rank) const {
  for (auto [position, member] : llvm::enumerate(getRanks()))
    if (member == rank)
      return std::make_pair(static_cast<int64_t>(position) / getGroupSize(),
                            static_cast<int64_t>(position) % getGroupSize());
  return std::nullopt;
}

bool ReplicaGroupsAttr::isBlocks() const {
  int64_t size = getGroupSize();
  for (int64_t g = 0, e = getNumGroups(); g < e; ++g) {
    ArrayRef<int64_t> members = getGroup(g);
    for (auto [position, member] : llvm::enumerate(members))
      if (member != members.front() + int64_t(position) ||
          members.front() % size != 0)
        return false;
  }
  return true;
}

std::optional<int64_t>
ReplicaGroupsAttr::getTilingStride(int64_t worldSize) const {
  int64_t size = getGroupSize(), numGroups = getNumGroups();
  if (size < 1 || numGroups * size != worldSize)
    return std::nullopt;
  auto tilesWith = [&](auto rankOf) {
    for (int64_t g = 0; g < numGroups; ++g)
      for (auto [position, member] : llvm::enumerate(getGroup(g)))
        if (member != rankOf(g, int64_t(position)))
          return false;
    return true;
  };
  // Blocks [[0, .., n-1], [n, ..], ..]: stride 1.
  if (tilesWith([&](int64_t g, int64_t k) { return g * size + k; }))
    return 1;
  if (tilesWith([&](int64_t g, int64_t k) { return g + k * numGroups; }))
    return numGroups;
  return std::nullopt;
}

void ReplicaGroupsAttr::printBody(AsmPrinter &printer) const {
  printer << '[';
  for (int64_t group = 0, e = getNumGroups(); group < e; ++group) {
    if (group)
      printer << ", ";
    printer << '[';
    llvm::interleaveComma(getGroup(group), printer);
    printer << ']';
  }
  printer << ']';
}

ReplicaGroupsAttr ReplicaGroupsAttr::parseBody(AsmParser &parser) {
  SmallVector<SmallVector<int64_t>> groups;
  SMLoc loc = parser.getCurrentLocation();
  auto parseGroup = [&]() -> ParseResult {
    SmallVector<int64_t> &group = groups.emplace_back();
    return parser.parseCommaSeparatedList(
        AsmParser::Delimiter::Square, [&]() -> ParseResult {
          return parser.parseInteger(group.emplace_back());
        });
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseGroup))
    return {};
  return getFromGroups([&] { return parser.emitError(loc); },
                    parser.getContext(), groups);
}

Attribute ReplicaGroupsAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  ReplicaGroupsAttr attr = parseBody(parser);
  if (!attr || parser.parseGreater())
    return {};
  return attr;
}

void ReplicaGroupsAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printBody(printer);
  printer << '>';
}

//===----------------------------------------------------------------------===//
// Table placements
//===----------------------------------------------------------------------===//

/// Checks `offsets` as the boundaries of `ranks.size()` consecutive ranges
/// covering [0, extent): starting at 0, non-decreasing (strictly increasing
/// when `allowEmpty` is false) and ending at `extent` (when known, i.e. >= 0).
static LogicalResult
verifyOffsets(function_ref<InFlightDiagnostic()> emitError,
              ArrayRef<int64_t> ranks, ArrayRef<int64_t> offsets,
              StringRef name, int64_t extent, StringRef extentName,
              bool allowEmpty) {
  if (ranks.empty())
    return emitError() << "placement must list at least one rank";
  if (offsets.size() != ranks.size() + 1)
    return emitError() << name << " must have one more entry than ranks ("
                       << ranks.size() + 1 << "), got " << offsets.size();
  if (offsets.front() != 0)
    return emitError() << name << " must start at 0, got " << offsets.front();
  for (size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1] ||
        (!allowEmpty && offsets[i] == offsets[i - 1]))
      return emitError() << name << " must be "
                         << (allowEmpty ? "non-decreasing" : "increasing")
                         << ", but entry " << i << " is " << offsets[i]
                         << " after " << offsets[i - 1];
  }
  if (extent >= 0 && offsets.back() != extent)
    return emitError() << name << " must end at the table's " << extentName
                       << " (" << extent << "), got " << offsets.back();
  return verifyDistinctRanks(emitError, ranks, "placement");
}

static SmallVector<TableShard> rowShards(ArrayRef<int64_t> ranks,
                                         ArrayRef<int64_t> offsets,
                                         int64_t dim) {
  SmallVector<TableShard> shards;
  for (auto [i, rank] : llvm::enumerate(ranks))
    shards.push_back(
        {rank, offsets[i], offsets[i + 1] - offsets[i], /*colOffset=*/0, dim});
  return shards;
}

// table_wise
LogicalResult TableWiseAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                    int64_t rank) {
  if (rank < 0)
    return emitError() << "table_wise rank must not be negative, got " << rank;
  return success();
}
StringRef TableWiseAttr::getShardingName() const { return "table_wise"; }
SmallVector<int64_t> TableWiseAttr::getPlacementRanks() const {
  return {getRank()};
}
SmallVector<TableShard> TableWiseAttr::getShards(int64_t rows,
                                                 int64_t dim) const {
  return {{getRank(), 0, rows, 0, dim}};
}
LogicalResult
TableWiseAttr::verifyForTable(int64_t, int64_t,
                              function_ref<InFlightDiagnostic()>) const {
  return success();
}

// row_wise
LogicalResult RowWiseAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ArrayRef<int64_t> ranks,
                                  ArrayRef<int64_t> rowOffsets) {
  return verifyOffsets(emitError, ranks, rowOffsets, "row_offsets", -1, "rows",
                       /*allowEmpty=*/true);
}
StringRef RowWiseAttr::getShardingName() const { return "row_wise"; }
SmallVector<int64_t> RowWiseAttr::getPlacementRanks() const {
  return llvm::to_vector(getRanks());
}
SmallVector<TableShard> RowWiseAttr::getShards(int64_t, int64_t dim) const {
  return rowShards(getRanks(), getRowOffsets(), dim);
}
LogicalResult
RowWiseAttr::verifyForTable(int64_t rows, int64_t,
                            function_ref<InFlightDiagnostic()> emitError) const {
  return verifyOffsets(emitError, getRanks(), getRowOffsets(), "row_offsets",
                       rows, "rows", /*allowEmpty=*/true);
}

// column_wise
LogicalResult
ColumnWiseAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       ArrayRef<int64_t> ranks, ArrayRef<int64_t> colOffsets) {
  return verifyOffsets(emitError, ranks, colOffsets, "col_offsets", -1, "dim",
                       /*allowEmpty=*/false);
}
StringRef ColumnWiseAttr::getShardingName() const { return "column_wise"; }
SmallVector<int64_t> ColumnWiseAttr::getPlacementRanks() const {
  return llvm::to_vector(getRanks());
}
SmallVector<TableShard> ColumnWiseAttr::getShards(int64_t rows,
                                                  int64_t) const {
  SmallVector<TableShard> shards;
  ArrayRef<int64_t> offsets = getColOffsets();
  for (auto [i, rank] : llvm::enumerate(getRanks()))
    shards.push_back({rank, 0, rows, offsets[i], offsets[i + 1] - offsets[i]});
  return shards;
}
LogicalResult ColumnWiseAttr::verifyForTable(
    int64_t, int64_t dim, function_ref<InFlightDiagnostic()> emitError) const {
  return verifyOffsets(emitError, getRanks(), getColOffsets(), "col_offsets",
                       dim, "dim", /*allowEmpty=*/false);
}

// table_row_wise
LogicalResult
TableRowWiseAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         int64_t node, ArrayRef<int64_t> ranks,
                         ArrayRef<int64_t> rowOffsets) {
  if (node < 0)
    return emitError() << "table_row_wise node must not be negative, got "
                       << node;
  return verifyOffsets(emitError, ranks, rowOffsets, "row_offsets", -1, "rows",
                       /*allowEmpty=*/true);
}
StringRef TableRowWiseAttr::getShardingName() const {
  return "table_row_wise";
}
SmallVector<int64_t> TableRowWiseAttr::getPlacementRanks() const {
  return llvm::to_vector(getRanks());
}
SmallVector<TableShard> TableRowWiseAttr::getShards(int64_t,
                                                    int64_t dim) const {
  return rowShards(getRanks(), getRowOffsets(), dim);
}
LogicalResult TableRowWiseAttr::verifyForTable(
    int64_t rows, int64_t, function_ref<InFlightDiagnostic()> emitError) const {
  return verifyOffsets(emitError, getRanks(), getRowOffsets(), "row_offsets",
                       rows, "rows", /*allowEmpty=*/true);
}

// data_parallel
LogicalResult
DataParallelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         ArrayRef<int64_t> ranks) {
  if (ranks.empty())
    return emitError() << "placement must list at least one rank";
  return verifyDistinctRanks(emitError, ranks, "placement");
}
StringRef DataParallelAttr::getShardingName() const { return "data_parallel"; }
SmallVector<int64_t> DataParallelAttr::getPlacementRanks() const {
  return llvm::to_vector(getRanks());
}
SmallVector<TableShard> DataParallelAttr::getShards(int64_t rows,
                                                    int64_t dim) const {
  SmallVector<TableShard> shards;
  for (int64_t rank : getRanks())
    shards.push_back({rank, 0, rows, 0, dim});
  return shards;
}
LogicalResult
DataParallelAttr::verifyForTable(int64_t, int64_t,
                                 function_ref<InFlightDiagnostic()>) const {
  return success();
}

//===----------------------------------------------------------------------===//
// DensePlacementAttr and ClusterAttr
//===----------------------------------------------------------------------===//

LogicalResult
DensePlacementAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           DenseParallelism parallelism,
                           ArrayRef<int64_t> ranks) {
  if (parallelism != DenseParallelism::data_parallel && ranks.size() < 2)
    return emitError() << "tensor-parallel '"
                       << stringifyDenseParallelism(parallelism)
                       << "' placement needs at least two ranks, got "
                       << ranks.size();
  return verifyDistinctRanks(emitError, ranks, "placement");
}

LogicalResult ClusterAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  StringRef hardware, int64_t nodes,
                                  int64_t ranksPerNode) {
  if (hardware.empty())
    return emitError() << "cluster hardware must be named";
  if (nodes <= 0)
    return emitError() << "cluster nodes must be positive, got " << nodes;
  if (ranksPerNode <= 0)
    return emitError() << "cluster ranks_per_node must be positive, got "
                       << ranksPerNode;
  // Every rank's program is planned and simulated (exchanges as R x R
  // matrices): the world is bounded, checked without overflow.
  if (nodes > kMaxWorldSize / ranksPerNode)
    return emitError() << "a cluster of " << nodes << " x " << ranksPerNode
                       << " ranks is more than the " << kMaxWorldSize
                       << " Braid plans and simulates";
  return success();
}
