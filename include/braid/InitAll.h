//===- InitAll.h - Register everything Braid provides -----------*- C++ -*-===//
//
// This file declares the registration entry points of Braid's tools. It only
// declares, so including it costs nothing; the definitions pull in the
// dialects and passes.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_INITALL_H
#define BRAID_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::braid {

/// Adds the Braid dialect and every upstream dialect a Braid program uses.
void registerAllDialects(DialectRegistry &registry);

/// Registers Braid's passes and pipelines and the upstream passes its tools
/// expose.
void registerAllPasses();

} // namespace mlir::braid

#endif // BRAID_INITALL_H
