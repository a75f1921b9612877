//===- FuzzNpy.cpp - Fuzz the .npy reader ---------------------------------===//
//
// Input: the bytes of an .npy file. An accepted file gives a tensor whose
// element count is the product of its shape, and writing it back and
// reading that gives the same shape and values.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "braid/Interp/HostTensor.h"
#include "braid/Interp/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstring>

using namespace mlir::braid;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::Expected<interp::HostTensor> tensor = interp::parseNpy(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.npy");
  if (!tensor) {
    if (llvm::toString(tensor.takeError()).empty())
      fuzz::invariantFailed("a rejected file without a message");
    return 0;
  }
  std::optional<int64_t> elements = interp::getNumElements(tensor->shape);
  if (!elements || *elements != tensor->getNumElements())
    fuzz::invariantFailed("the element count is not the shape's product");
  // Round trip, through a file as the tools do.
  static std::string path = [] {
    llvm::SmallString<128> p;
    llvm::sys::fs::createUniquePath("braid-fuzz-npy-%%%%%%.npy", p, true);
    return std::string(p);
  }();
  if (llvm::Error error = interp::writeNpy(path, *tensor)) {
    llvm::consumeError(std::move(error));
    return 0; // a full disk is not the reader's bug
  }
  llvm::Expected<interp::HostTensor> again = interp::readNpy(path);
  if (!again)
    fuzz::invariantFailed("a written tensor does not read back");
  if (again->shape != tensor->shape ||
      again->getNumElements() != tensor->getNumElements())
    fuzz::invariantFailed("a written tensor reads back another shape");
  for (int64_t i = 0; i < tensor->getNumElements(); ++i) {
    double a = tensor->data[i], b = again->data[i];
    if (std::memcmp(&a, &b, sizeof a) != 0 && !(std::isnan(a) && std::isnan(b)))
      fuzz::invariantFailed("a written tensor reads back other values");
  }
  return 0;
}
