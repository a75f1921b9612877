//===- braid-translate.cpp - Braid translation driver ---------------------===//
//
// This file implements braid-translate: mlir-translate with Braid's
// importers registered (--import-model-json). The input must be a regular
// file of at most kMaxJsonFileBytes (BoundedInput.h), checked before MLIR's
// driver reads it, so that /dev/zero or a FIFO is an error and not an
// endless read.
//
//===----------------------------------------------------------------------===//

#include "braid/Import/ModelJson.h"
#include "braid/Support/BoundedInput.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

/// The input file among the arguments: the first that is not an option or
/// the value of `-o` (the driver's one option that takes its value as the
/// next argument). Empty for standard input.
static llvm::StringRef inputArgument(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "-o") {
      ++i;
      continue;
    }
    if (arg == "--")
      return i + 1 < argc ? llvm::StringRef(argv[i + 1]) : llvm::StringRef();
    if (arg.starts_with("-"))
      continue;
    return arg;
  }
  return {};
}

int main(int argc, char **argv) {
  mlir::braid::registerImportModelJsonTranslation();
  llvm::StringRef input = inputArgument(argc, argv);
  if (!input.empty()) {
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
        mlir::braid::readBoundedFile(input, mlir::braid::kMaxJsonFileBytes,
                                     "");
    if (!file) {
      llvm::errs() << input << ": error: "
                   << llvm::toString(file.takeError()) << "\n";
      return 1;
    }
  }
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Braid translation driver\n"));
}
