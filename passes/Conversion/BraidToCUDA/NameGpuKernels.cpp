//===- NameGpuKernels.cpp - Kernels named after what they compute ---------===//
//
// This file implements braid-name-gpu-kernels: after gpu-kernel-outlining,
// each kernel (its gpu.module and gpu.func, and every gpu.launch_func of it)
// takes the name its location carries (convert-braid-to-cpu names the
// location of every Braid op it lowers after what the op computes), so that
// OUT/kernels/, profiles and cuobjdump say what each kernel does.
//
//===----------------------------------------------------------------------===//

#include "braid/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::braid {
#define GEN_PASS_DEF_BRAIDNAMEGPUKERNELSPASS
#include "braid/Conversion/Passes.h.inc"
} // namespace mlir::braid

using namespace mlir;
using namespace mlir::braid;

/// The kernel name convert-braid-to-cpu tagged a location with (the
/// metadata of a fused location), looking through fused and call-site
/// locations; empty if none.
static StringRef kernelTagOf(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (auto tag = dyn_cast_if_present<StringAttr>(fused.getMetadata()))
      return tag.getValue();
    for (Location part : fused.getLocations())
      if (StringRef name = kernelTagOf(part); !name.empty())
        return name;
    return {};
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return kernelTagOf(callSite.getCallee());
  if (auto named = dyn_cast<NameLoc>(loc))
    return kernelTagOf(named.getChildLoc());
  return {};
}

/// The first plain name in a location (a model importer's), or empty.
static StringRef plainNameOf(Location loc) {
  if (auto named = dyn_cast<NameLoc>(loc))
    return named.getName().getValue();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location part : fused.getLocations())
      if (StringRef name = plainNameOf(part); !name.empty())
        return name;
  return {};
}

/// The name of `kernel`'s work: the tag of its own location, else of the
/// first op of its body that carries one (outlining gives the function the
/// launch's location, which tiling may have replaced). Untagged kernels
/// (elementwise work that bufferization turned into loops) are
/// `elementwise`, followed by the model's name for the value if it has one.
static std::string workNameOf(gpu::GPUFuncOp kernel) {
  if (StringRef name = kernelTagOf(kernel.getLoc()); !name.empty())
    return name.str();
  std::string found, plain;
  kernel.walk([&](Operation *op) {
    if (StringRef name = kernelTagOf(op->getLoc()); !name.empty()) {
      found = name.str();
      return WalkResult::interrupt();
    }
    if (plain.empty())
      plain = plainNameOf(op->getLoc()).str();
    return WalkResult::advance();
  });
  if (!found.empty())
    return found;
  std::string name = "elementwise";
  if (!plain.empty())
    name += "_" + plain;
  for (char &c : name)
    if (!llvm::isAlnum(c))
      c = '_';
  return name;
}

namespace {
struct BraidNameGpuKernelsPass
    : public braid::impl::BraidNameGpuKernelsPassBase<BraidNameGpuKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The kernels to name: the single kernel of each gpu.module.
    auto kernelOf = [](gpu::GPUModuleOp kernelModule) -> gpu::GPUFuncOp {
      auto kernels = llvm::to_vector(kernelModule.getOps<gpu::GPUFuncOp>());
      if (kernels.size() != 1 || !kernels.front().isKernel())
        return {};
      return kernels.front();
    };
    // The names in use, so that a kernel never takes another symbol's
    // (modules left as they are included).
    llvm::StringMap<unsigned> taken;
    for (Operation &op : module.getOps()) {
      auto kernelModule = dyn_cast<gpu::GPUModuleOp>(op);
      if (kernelModule && kernelOf(kernelModule))
        continue;
      if (auto symbol =
              op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
        taken[symbol.getValue()] = 1;
    }
    // Old (module, function) symbol -> new name, in program order.
    llvm::DenseMap<SymbolRefAttr, StringAttr> renamed;
    for (auto kernelModule :
         llvm::to_vector(module.getOps<gpu::GPUModuleOp>())) {
      gpu::GPUFuncOp kernel = kernelOf(kernelModule);
      if (!kernel)
        continue;
      std::string base = workNameOf(kernel), name = base;
      for (unsigned suffix = 1; taken.count(name); ++suffix)
        name = base + "_" + std::to_string(suffix);
      taken[name] = 1;
      auto oldRef =
          SymbolRefAttr::get(kernelModule.getNameAttr(),
                             {FlatSymbolRefAttr::get(kernel.getNameAttr())});
      StringAttr newName = StringAttr::get(&getContext(), name);
      renamed[oldRef] = newName;
      kernelModule.setName(newName);
      kernel.setName(newName);
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = renamed.find(launch.getKernel());
      if (it != renamed.end())
        launch.setKernelAttr(SymbolRefAttr::get(
            it->second, {FlatSymbolRefAttr::get(it->second)}));
    });
  }
};
} // namespace
