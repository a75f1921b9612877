//===- KernelNames.h - Names of the kernels an op becomes -------*- C++ -*-===//
//
// This file declares how a location carries the name of the kernel it
// becomes: convert-braid-to-cpu tags each Braid op's location with what it
// computes, and braid-name-gpu-kernels names the outlined GPU kernels after
// that tag.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_CONVERSION_BRAIDTOLOOPS_KERNELNAMES_H
#define BRAID_CONVERSION_BRAIDTOLOOPS_KERNELNAMES_H

#include "mlir/IR/Location.h"

namespace mlir::braid {

/// `loc` with `_suffix` added to the kernel name convert-braid-to-cpu tagged
/// it with (a fused location's metadata), so that the kernels one op
/// becomes have names of their own (`linear_grad_top_mlp_0_bias`,
/// `embedding_bag_t_indices_check`); `loc` itself if it has no tag.
Location withKernelSuffix(Location loc, StringRef suffix);

} // namespace mlir::braid

#endif // BRAID_CONVERSION_BRAIDTOLOOPS_KERNELNAMES_H
