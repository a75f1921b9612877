//===- CudaCheck.h - Located CUDA, cuBLASLt and NCCL errors -----*- C++ -*-===//
//
// This file declares the CUDA runtime's driver table (the driver is loaded
// with dlopen) and the macros that turn a failed call into
// "CALL failed at FILE:LINE: NAME: TEXT" through braidrt_fail.
//
//===----------------------------------------------------------------------===//

#ifndef BRAIDRT_CUDA_CUDACHECK_H
#define BRAIDRT_CUDA_CUDACHECK_H

#include <cuda.h>

namespace braidrt::cuda {

/// The driver entry points the runtime uses, resolved from libcuda.so.1.
struct Driver {
  decltype(&::cuInit) init;
  decltype(&::cuGetErrorName) getErrorName;
  decltype(&::cuGetErrorString) getErrorString;
  decltype(&::cuDeviceGetCount) deviceGetCount;
  decltype(&::cuDeviceGet) deviceGet;
  decltype(&::cuDevicePrimaryCtxRetain) primaryCtxRetain;
  decltype(&::cuCtxSetCurrent) ctxSetCurrent;
  decltype(&::cuMemAllocManaged) memAllocManaged;
  decltype(&::cuMemFree) memFree;
  decltype(&::cuMemcpyDtoH) memcpyDtoH;
  decltype(&::cuModuleLoadData) moduleLoadData;
  decltype(&::cuModuleLoadDataEx) moduleLoadDataEx;
  decltype(&::cuModuleUnload) moduleUnload;
  decltype(&::cuModuleGetFunction) moduleGetFunction;
  decltype(&::cuModuleGetGlobal) moduleGetGlobal;
  decltype(&::cuLaunchKernel) launchKernel;
  decltype(&::cuStreamCreate) streamCreate;
  decltype(&::cuStreamSynchronize) streamSynchronize;
  decltype(&::cuStreamQuery) streamQuery;
  decltype(&::cuStreamDestroy) streamDestroy;
  decltype(&::cuEventCreate) eventCreate;
  decltype(&::cuEventRecord) eventRecord;
  decltype(&::cuEventSynchronize) eventSynchronize;
  decltype(&::cuEventQuery) eventQuery;
  decltype(&::cuEventDestroy) eventDestroy;
};

/// The driver, loaded and initialized (cuInit) on first use, with this
/// rank's device's primary context current on the calling thread.
const Driver &driver();

/// Counts the started collectives whose event the program has not waited
/// for: while any is, a freed buffer goes back to the driver instead of the
/// cache (Memory.cpp), since the collective may still use it.
void collectiveStarted();
void collectiveWaited();

/// Fails the job for a driver error of `call` at `file`:`line`.
[[noreturn]] void failDriver(CUresult result, const char *call,
                             const char *file, int line);

} // namespace braidrt::cuda

/// Checks a CUDA driver call through the runtime's table.
#define BRAIDRT_CU(call)                                                       \
  do {                                                                         \
    CUresult braidrtResult = (call);                                           \
    if (braidrtResult != CUDA_SUCCESS)                                         \
      ::braidrt::cuda::failDriver(braidrtResult, #call, __FILE__, __LINE__);   \
  } while (0)

#endif // BRAIDRT_CUDA_CUDACHECK_H
