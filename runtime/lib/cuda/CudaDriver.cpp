//===- CudaDriver.cpp - Device, memory, kernels and their errors ----------===//
//
// This file implements the CUDA runtime's use of the driver: libcuda.so.1
// loaded with dlopen (a machine without a driver gets a located message, not
// a loader error), the rank's device and its primary context, the entry
// points MLIR's GPU-to-LLVM lowering calls (mgpu*, module
// loading and kernel launches; MLIR's memref allocation hooks), and the
// kernels' device-side error records.
//
//===----------------------------------------------------------------------===//

#include "CudaCheck.h"

#include "braidrt/braidrt.h"
#include "braidrt/cuda.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

using namespace braidrt::cuda;

namespace {
/// A loaded kernel module and its error record, if it has one.
struct LoadedModule {
  CUmodule module;
  CUdeviceptr record = 0;
};

/// The runtime's CUDA state: one device per process.
struct State {
  Driver driver{};
  CUdevice device = 0;
  int ordinal = -1;
  CUcontext context = nullptr;
  std::mutex modulesMutex;
  std::vector<LoadedModule> modules;
  /// The error record of each kernel's module (0: none), by kernel.
  std::unordered_map<CUfunction, CUdeviceptr> recordOfKernel;
};
} // namespace

/// The error records of this thread's kernels launched since their stream
/// was last synchronized, with that stream: a synchronization reads only
/// these, not every loaded module's (one copy per launch, not one per
/// module per launch).
static thread_local std::vector<std::pair<CUstream, CUdeviceptr>>
    pendingRecords;

static State &state() {
  static State instance;
  return instance;
}

/// The first integer environment variable of `names` that is set, or -1.
static int integerFromEnvironment(std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (const char *value = std::getenv(name)) {
      char *end = nullptr;
      long parsed = std::strtol(value, &end, 10);
      if (end != value && *end == '\0' && parsed >= 0 && parsed < (1 << 20))
        return static_cast<int>(parsed);
    }
  return -1;
}

[[noreturn]] void braidrt::cuda::failDriver(CUresult result, const char *call,
                                            const char *file, int line) {
  const char *name = nullptr, *text = nullptr;
  const Driver &table = state().driver;
  if (table.getErrorName)
    table.getErrorName(result, &name);
  if (table.getErrorString)
    table.getErrorString(result, &text);
  braidrt_fail("%s failed at %s:%d: %s: %s", call, file, line,
               name ? name : "CUDA_ERROR_UNKNOWN",
               text ? text : "no description");
  std::abort(); // braidrt_fail does not return.
}

/// Resolves every entry point of the table from `library`.
static void resolve(void *library, Driver &table) {
  auto get = [&](auto &slot, const char *symbol) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
        dlsym(library, symbol));
    if (!slot)
      braidrt_fail("the CUDA driver (libcuda.so.1) has no '%s': it is older "
                   "than this runtime needs",
                   symbol);
  };
  get(table.init, "cuInit");
  get(table.getErrorName, "cuGetErrorName");
  get(table.getErrorString, "cuGetErrorString");
  get(table.deviceGetCount, "cuDeviceGetCount");
  get(table.deviceGet, "cuDeviceGet");
  get(table.primaryCtxRetain, "cuDevicePrimaryCtxRetain");
  get(table.ctxSetCurrent, "cuCtxSetCurrent");
  get(table.memAllocManaged, "cuMemAllocManaged");
  get(table.memFree, "cuMemFree_v2");
  get(table.memcpyDtoH, "cuMemcpyDtoH_v2");
  get(table.moduleLoadData, "cuModuleLoadData");
  get(table.moduleLoadDataEx, "cuModuleLoadDataEx");
  get(table.moduleUnload, "cuModuleUnload");
  get(table.moduleGetFunction, "cuModuleGetFunction");
  get(table.moduleGetGlobal, "cuModuleGetGlobal_v2");
  get(table.launchKernel, "cuLaunchKernel");
  get(table.streamCreate, "cuStreamCreate");
  get(table.streamSynchronize, "cuStreamSynchronize");
  get(table.streamQuery, "cuStreamQuery");
  get(table.streamDestroy, "cuStreamDestroy_v2");
  get(table.eventCreate, "cuEventCreate");
  get(table.eventRecord, "cuEventRecord");
  get(table.eventSynchronize, "cuEventSynchronize");
  get(table.eventQuery, "cuEventQuery");
  get(table.eventDestroy, "cuEventDestroy_v2");
}

const Driver &braidrt::cuda::driver() {
  State &s = state();
  static std::once_flag once;
  std::call_once(once, [&] {
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library)
      braidrt_fail("no CUDA driver: dlopen(\"libcuda.so.1\") failed: %s",
                   dlerror());
    resolve(library, s.driver);
    BRAIDRT_CU(s.driver.init(0));
    int count = 0;
    BRAIDRT_CU(s.driver.deviceGetCount(&count));
    if (count == 0)
      braidrt_fail("no CUDA device on this host");
    int local = integerFromEnvironment(
        {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"});
    s.ordinal = (local < 0 ? 0 : local) % count;
    BRAIDRT_CU(s.driver.deviceGet(&s.device, s.ordinal));
    BRAIDRT_CU(s.driver.primaryCtxRetain(&s.context, s.device));
  });
  // The context is current per thread: made so once on each thread, not
  // on every launch and allocation.
  thread_local bool current = false;
  if (!current) {
    BRAIDRT_CU(s.driver.ctxSetCurrent(s.context));
    current = true;
  }
  return s.driver;
}

int braidrt_cuda_device(void) {
  driver();
  return state().ordinal;
}

/// Reads the error record at `record` and reports what a kernel wrote
/// there, as the CPU runtime does (none of its reports returns).
static void reportErrorRecord(const Driver &table, CUdeviceptr record) {
  int64_t fields[3] = {0, 0, 0};
  BRAIDRT_CU(table.memcpyDtoH(fields, record, sizeof(fields)));
  if (fields[0] == 0)
    return;
  if (fields[0] == 1)
    braidrt_index_error(fields[1], fields[2]);
  else if (fields[0] == 2)
    braidrt_offsets_error(fields[1], fields[2]);
  else if (fields[0] == 3)
    braidrt_weights_error(fields[1], fields[2]);
  braidrt_fail("a kernel reported error code %lld",
               static_cast<long long>(fields[0]));
}

void braidrt_cuda_check_kernel_errors(void) {
  const Driver &table = driver();
  State &s = state();
  std::lock_guard<std::mutex> lock(s.modulesMutex);
  for (const LoadedModule &loaded : s.modules)
    if (loaded.record)
      reportErrorRecord(table, loaded.record);
}

/// Registers a loaded module and its error record.
static void *registerModule(CUmodule module) {
  const Driver &table = driver();
  LoadedModule loaded{module};
  size_t bytes = 0;
  CUresult found =
      table.moduleGetGlobal(&loaded.record, &bytes, module, "braid_error");
  if (found != CUDA_SUCCESS || bytes != 3 * sizeof(int64_t))
    loaded.record = 0;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.modulesMutex);
  s.modules.push_back(loaded);
  return module;
}

//===----------------------------------------------------------------------===//
// The entry points MLIR's gpu-to-llvm lowering and gpu.binary translation
// call (names and signatures are that lowering's ABI).
//===----------------------------------------------------------------------===//

extern "C" {

void *mgpuModuleLoad(void *data, size_t /*size*/) {
  CUmodule module = nullptr;
  BRAIDRT_CU(driver().moduleLoadData(&module, data));
  return registerModule(module);
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  CUmodule module = nullptr;
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  BRAIDRT_CU(driver().moduleLoadDataEx(&module, data, 1, options, values));
  return registerModule(module);
}

void mgpuModuleUnload(void *module) {
  // At exit the driver may already be shut down: nothing to report then.
  State &s = state();
  if (s.context)
    s.driver.moduleUnload(static_cast<CUmodule>(module));
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  CUfunction function = nullptr;
  BRAIDRT_CU(driver().moduleGetFunction(&function,
                                        static_cast<CUmodule>(module), name));
  State &s = state();
  std::lock_guard<std::mutex> lock(s.modulesMutex);
  CUdeviceptr record = 0;
  for (const LoadedModule &loaded : s.modules)
    if (loaded.module == static_cast<CUmodule>(module))
      record = loaded.record;
  s.recordOfKernel[function] = record;
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, void *stream,
                      void **params, void **extra, size_t /*paramCount*/) {
  // An empty batch gives an empty grid: nothing to launch.
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return;
  BRAIDRT_CU(driver().launchKernel(
      static_cast<CUfunction>(function), gridX, gridY, gridZ, blockX, blockY,
      blockZ, sharedBytes, static_cast<CUstream>(stream), params, extra));
  // Its module's error record is read when its stream is next synchronized.
  CUdeviceptr record = 0;
  {
    State &s = state();
    std::lock_guard<std::mutex> lock(s.modulesMutex);
    auto found = s.recordOfKernel.find(static_cast<CUfunction>(function));
    if (found != s.recordOfKernel.end())
      record = found->second;
  }
  std::pair<CUstream, CUdeviceptr> pending{static_cast<CUstream>(stream),
                                           record};
  if (record && std::find(pendingRecords.begin(), pendingRecords.end(),
                          pending) == pendingRecords.end())
    pendingRecords.push_back(pending);
}

// gpu-to-llvm creates and destroys a stream around every launch; the
// runtime keeps one non-blocking stream per thread instead (creating one
// costs more than a small kernel), so a launch never waits for a
// collective running on the communication stream.
void *mgpuStreamCreate() {
  thread_local CUstream stream = nullptr;
  if (!stream)
    BRAIDRT_CU(driver().streamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

void mgpuStreamDestroy(void *) {}

void mgpuStreamSynchronize(void *stream) {
  const Driver &table = driver();
  BRAIDRT_CU(table.streamSynchronize(static_cast<CUstream>(stream)));
  // The kernels this thread launched on the stream have finished: their
  // modules' records are final. Others' kernels may still be running.
  // (A record a kernel wrote ends the job there.) No allocation: this runs
  // after every launch.
  auto onStream = [&](const std::pair<CUstream, CUdeviceptr> &pending) {
    return pending.first == static_cast<CUstream>(stream);
  };
  for (const auto &pending : pendingRecords)
    if (onStream(pending))
      reportErrorRecord(table, pending.second);
  pendingRecords.erase(
      std::remove_if(pendingRecords.begin(), pendingRecords.end(), onStream),
      pendingRecords.end());
}

// Every buffer a compiled CUDA program allocates (finalize-memref-to-llvm
// with use-generic-functions) is managed memory, so host code (input
// checks, the deallocation helper) and kernels use the same pointers.
void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return braidrt_cuda_alloc(bytes);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes) {
  if (alignment > 256)
    braidrt_fail("a buffer asks for %zu-byte alignment; managed memory "
                 "gives 256",
                 alignment);
  return braidrt_cuda_alloc(bytes);
}

void _mlir_memref_to_llvm_free(void *pointer) { braidrt_cuda_free(pointer); }

} // extern "C"
