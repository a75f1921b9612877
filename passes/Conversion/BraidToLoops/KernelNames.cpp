//===- KernelNames.cpp - Names of the kernels an op becomes ---------------===//
//
// This file implements the suffixes that give the kernels one Braid op
// becomes names of their own.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/BraidToLoops/KernelNames.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

Location mlir::braid::withKernelSuffix(Location loc, StringRef suffix) {
  auto fused = dyn_cast<FusedLoc>(loc);
  auto tag = fused ? dyn_cast_if_present<StringAttr>(fused.getMetadata())
                   : StringAttr();
  if (!tag)
    return loc;
  return FusedLoc::get(loc.getContext(), fused.getLocations(),
                       StringAttr::get(loc.getContext(),
                                       tag.getValue() + "_" + suffix));
}
