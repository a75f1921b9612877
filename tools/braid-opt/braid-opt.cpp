//===- braid-opt.cpp - The Braid optimizer driver -------------------------===//
//
// This file implements braid-opt: mlir-opt with the Braid dialect, passes and
// pipelines registered. The input is read as Braid's tools read what a user
// hands them (BoundedInput.h): a regular file of at most 1 GiB whose
// brackets nest at most kMaxMlirNesting deep, so that /dev/zero, a FIFO or a
// deeply nested file is a located error, not an endless read or a stack
// overflow in the parser.
//
//===----------------------------------------------------------------------===//

#include "braid/InitAll.h"
#include "braid/Support/BoundedInput.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::braid::registerAllDialects(registry);
  mlir::braid::registerAllPasses();
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv, "Braid optimizer driver\n", registry);
  // Standard input is read by MLIR's driver as it is.
  if (input != "-") {
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
        mlir::braid::readBoundedFile(input, uint64_t(1) << 30, "");
    if (!file) {
      llvm::errs() << input << ": error: " << llvm::toString(file.takeError())
                   << "\n";
      return 1;
    }
    if (std::optional<mlir::braid::TextPosition> at =
            mlir::braid::findMlirNestingBeyond((*file)->getBuffer())) {
      llvm::errs() << input << ":" << at->line << ":" << at->column
                   << ": error: brackets nested deeper than "
                   << mlir::braid::kMaxMlirNesting << " levels\n";
      return 1;
    }
  }
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, input, output, registry));
}
