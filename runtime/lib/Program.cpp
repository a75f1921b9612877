//===- Program.cpp - Loading and calling compiled Braid programs ----------===//
//
// This file implements program.h. A memref descriptor of rank r is
// {allocated, aligned, offset, sizes[r], strides[r]}, all 8-byte fields;
// the packed entry point takes a pointer to the results' descriptors
// (consecutive) followed by one pointer per argument descriptor. Results
// are buffers the program allocated (with malloc, or for a CUDA artifact
// in the CUDA runtime's managed memory); they are freed at the
// next call or when the program is freed.
//
//===----------------------------------------------------------------------===//

#include "braidrt/program.h"
#include "braidrt/braidrt.h"

#include "Json.h"

#include <dlfcn.h>
#include <mpi.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace {
thread_local std::string lastError;

/// Records `message` as the last error; returns `value` for the caller to
/// return.
template <typename T> T failWith(T value, const std::string &message) {
  lastError = message;
  return value;
}

size_t elementBytes(const std::string &dtype) {
  if (dtype == "f16" || dtype == "bf16")
    return 2;
  if (dtype == "f32" || dtype == "i32")
    return 4;
  if (dtype == "f64" || dtype == "i64" || dtype == "index")
    return 8;
  return 0;
}

struct Tensor {
  std::string name, kind, dtype;
  std::vector<int64_t> shape; // -1 where dynamic
  std::vector<braidrt_table_slice> slices;
};

/// How a program's buffers are allocated and released: the heap for a CPU
/// artifact; for a CUDA artifact, the CUDA runtime's managed memory, which
/// its kernels can read (a host-only allocation is invisible to them).
struct Allocator {
  void *(*allocate)(size_t) = nullptr;
  void (*release)(void *) = std::free;
};

struct FreeStorage {
  void (*release)(void *) = std::free;
  void operator()(void *data) const { release(data); }
};

/// Huge pages back buffers of at least this size.
constexpr size_t kHugePageBytes = size_t(2) << 20;

/// Storage of `bytes` bytes, or null. Large buffers (the tables) are
/// aligned to 2 MiB and advised to use transparent huge pages: random row
/// reads then miss the TLB far less often.
void *allocateArgument(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  size_t alignment = bytes >= kHugePageBytes ? kHugePageBytes : 64;
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void *data = std::aligned_alloc(alignment, rounded);
  if (data && bytes >= kHugePageBytes)
    madvise(data, rounded, MADV_HUGEPAGE); // advice only; failure is harmless
  return data;
}

/// The most a program library may be.
constexpr uint64_t kMaxLibraryBytes = uint64_t(1) << 30;
constexpr size_t kMagicBytes = 16, kHashBytes = 8;

/// FNV-1a over `data`, the `kHashBytes` at `skip` taken as zero.
uint64_t contentHash(const std::vector<char> &data, size_t skip) {
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = 0; i < data.size(); ++i) {
    unsigned char byte =
        i >= skip && i < skip + kHashBytes ? 0 : (unsigned char)data[i];
    hash = (hash ^ byte) * 1099511628211ull;
  }
  return hash;
}

/// Reads `path` (a regular file of at most kMaxLibraryBytes) and finds its
/// one hash slot; returns the slot's offset, or an error message.
bool readLibrary(const std::string &path, std::vector<char> &data, size_t &slot,
                 std::string &error) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    error = path + ": cannot load: no such file";
    return false;
  }
  if (uint64_t(info.st_size) > kMaxLibraryBytes) {
    error = path + ": cannot load: larger than 1 GiB";
    return false;
  }
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = path + ": cannot load: " + std::strerror(errno);
    return false;
  }
  data.resize(info.st_size);
  size_t read = std::fread(data.data(), 1, data.size(), file);
  std::fclose(file);
  if (read != data.size()) {
    error = path + ": cannot load: short read";
    return false;
  }
  static const char magic[] = BRAIDRT_HASH_MAGIC;
  auto found =
      std::search(data.begin(), data.end(), magic, magic + kMagicBytes);
  if (found == data.end() ||
      size_t(data.end() - found) < kMagicBytes + kHashBytes) {
    error = path + ": has no content hash: it was not written by "
                   "braid-compile --target cpu, or it is truncated";
    return false;
  }
  if (std::search(found + 1, data.end(), magic, magic + kMagicBytes) !=
      data.end()) {
    error = path + ": holds more than one content hash";
    return false;
  }
  slot = size_t(found - data.begin()) + kMagicBytes;
  return true;
}
} // namespace

struct braidrt_program {
  std::string libraryPath, manifestText;
  int64_t ranks = 1;
  bool exchanges = false;
  std::vector<int64_t> batchSplit;
  std::vector<Tensor> arguments, results;
  void (*entry)(void **) = nullptr;

  /// Where arguments are staged and how results are freed.
  Allocator allocator;
  /// Per argument: its storage and descriptor (empty until staged).
  std::vector<std::unique_ptr<void, FreeStorage>> storage;
  std::vector<std::vector<int64_t>> descriptors;
  /// The last call's result descriptors and the buffers they own.
  std::vector<int64_t> resultDescriptors;
  std::vector<size_t> resultAt;
  std::vector<void *> resultBuffers;

  void releaseResults() {
    for (void *buffer : resultBuffers)
      allocator.release(buffer);
    resultBuffers.clear();
    resultDescriptors.clear();
    resultAt.clear();
  }
  ~braidrt_program() { releaseResults(); }
};

namespace {
using braidrt::json::Value;

/// Reads the "arguments" or "results" array of the manifest.
bool readTensors(const Value &root, const char *key, int64_t ranks,
                 std::vector<Tensor> &out, std::string &error) {
  const std::vector<Value> *array = root.getArray(key);
  if (!array) {
    error = std::string("'") + key + "' must be an array";
    return false;
  }
  for (size_t i = 0; i < array->size(); ++i) {
    const Value &entry = (*array)[i];
    std::string at = std::string(key) + "[" + std::to_string(i) + "]";
    const std::vector<Value> *shape = entry.getArray("shape");
    std::optional<std::string> dtype = entry.getString("dtype");
    if (!shape || !dtype || !elementBytes(*dtype)) {
      error = at + " needs a shape and a known dtype";
      return false;
    }
    Tensor tensor;
    tensor.dtype = *dtype;
    tensor.name = entry.getString("name").value_or("");
    tensor.kind = entry.getString("kind").value_or("");
    for (const Value &size : *shape) {
      if (!size.integer || *size.integer < -1) {
        error = at + ".shape: sizes are integers, -1 for dynamic";
        return false;
      }
      tensor.shape.push_back(*size.integer);
    }
    if (tensor.shape.size() > 8) {
      error = at + ".shape: more than 8 dimensions";
      return false;
    }
    // A table, or a table's optimizer state ([rows] or [rows, cols]),
    // comes with each rank's slice.
    bool state = tensor.kind == "table_state";
    if (tensor.kind == "table" || state) {
      const std::vector<Value> *slices = entry.getArray("slices");
      bool ranked = tensor.shape.size() == 2 ||
                    (state && tensor.shape.size() == 1);
      if (!slices || !ranked || int64_t(slices->size()) != ranks) {
        error = at + ": table '" + tensor.name + "' needs a " +
                (state ? "1-d or 2-d" : "2-d") +
                " shape and one slice per rank";
        return false;
      }
      for (const Value &slice : *slices) {
        braidrt_table_slice parsed;
        std::optional<int64_t> fields[] = {
            slice.getInteger("row_offset"), slice.getInteger("rows"),
            slice.getInteger("col_offset"), slice.getInteger("cols")};
        for (const std::optional<int64_t> &field : fields)
          if (!field || *field < 0) {
            error =
                at + ": a slice of table '" + tensor.name + "' is malformed";
            return false;
          }
        parsed = {*fields[0], *fields[1], *fields[2], *fields[3]};
        if ((tensor.shape[0] >= 0 && parsed.rows != tensor.shape[0]) ||
            (tensor.shape.size() == 2 && tensor.shape[1] >= 0 &&
             parsed.cols != tensor.shape[1])) {
          error = at + ": a slice of table '" + tensor.name +
                  "' does not fit its shape";
          return false;
        }
        tensor.slices.push_back(parsed);
      }
    }
    out.push_back(std::move(tensor));
  }
  return true;
}

bool fillInfo(const std::vector<Tensor> &tensors, int64_t index,
              braidrt_argument_info *info) {
  if (!info || index < 0 || index >= int64_t(tensors.size()))
    return false;
  const Tensor &tensor = tensors[index];
  *info = {tensor.name.c_str(), tensor.kind.c_str(), tensor.dtype.c_str(),
           int64_t(tensor.shape.size()), tensor.shape.data()};
  return true;
}
} // namespace

extern "C" {

const char *braidrt_program_last_error(void) { return lastError.c_str(); }

int braidrt_program_seal(const char *library_path) {
  if (!library_path)
    return failWith(-1, "no library");
  std::vector<char> data;
  size_t slot = 0;
  std::string error;
  if (!readLibrary(library_path, data, slot, error))
    return failWith(-1, error);
  uint64_t hash = contentHash(data, slot);
  FILE *file = std::fopen(library_path, "r+b");
  if (!file || std::fseek(file, long(slot), SEEK_SET) != 0 ||
      std::fwrite(&hash, 1, kHashBytes, file) != kHashBytes) {
    if (file)
      std::fclose(file);
    return failWith(-1, std::string(library_path) + ": cannot write its "
                                                    "content hash");
  }
  if (std::fclose(file) != 0)
    return failWith(-1, std::string(library_path) + ": cannot write its "
                                                    "content hash");
  return 0;
}

braidrt_program *braidrt_program_load(const char *dir) {
  if (!dir)
    return failWith<braidrt_program *>(nullptr, "no artifact directory");
  auto program = std::make_unique<braidrt_program>();
  program->libraryPath = std::string(dir) + "/libprogram.so";
  const std::string &path = program->libraryPath;
  // A truncated or modified library is refused before it is mapped.
  std::vector<char> data;
  size_t slot = 0;
  std::string error;
  if (!readLibrary(path, data, slot, error))
    return failWith<braidrt_program *>(nullptr, error);
  uint64_t stored = 0;
  std::memcpy(&stored, data.data() + slot, kHashBytes);
  if (stored != contentHash(data, slot))
    return failWith<braidrt_program *>(
        nullptr, path + ": is damaged: its content hash does not match (it "
                        "was truncated or modified after braid-compile "
                        "wrote it)");
  data.clear();
  data.shrink_to_fit();
  // Never unloaded: the library's OpenMP threads may outlive this handle.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) {
    const char *reason = dlerror();
    return failWith<braidrt_program *>(
        nullptr, path + ": cannot load: " + (reason ? reason : "unknown"));
  }
  auto *text = static_cast<const char *>(dlsym(handle, "braid_manifest"));
  if (!text)
    return failWith<braidrt_program *>(
        nullptr, path + ": has no embedded manifest (braid_manifest): it was "
                        "not written by braid-compile --target cpu");
  program->manifestText = text;
  std::string where = path + ": its manifest: ";
  std::optional<Value> root =
      braidrt::json::parse(program->manifestText, error);
  if (!root)
    return failWith<braidrt_program *>(nullptr, where + error);
  if (root->getInteger("version") != 1)
    return failWith<braidrt_program *>(
        nullptr, where + "not a version 1 Braid manifest");
  program->ranks = root->getInteger("ranks").value_or(0);
  if (program->ranks < 1 || program->ranks > (int64_t(1) << 20))
    return failWith<braidrt_program *>(
        nullptr, where + "'ranks' must be between 1 and 2^20");
  program->exchanges = root->getBool("exchanges").value_or(false);
  std::string target = root->getString("target").value_or("cpu");
  if (target == "cuda") {
    // The CUDA runtime the library links against serves its memory.
    auto allocate = reinterpret_cast<void *(*)(size_t)>(
        dlsym(handle, "braidrt_cuda_alloc"));
    auto release =
        reinterpret_cast<void (*)(void *)>(dlsym(handle, "braidrt_cuda_free"));
    if (!allocate || !release)
      return failWith<braidrt_program *>(
          nullptr, path + ": is a CUDA artifact but does not link the CUDA "
                          "runtime (braidrt_cuda_alloc)");
    program->allocator = {allocate, release};
  } else if (target != "cpu") {
    return failWith<braidrt_program *>(
        nullptr, where + "unknown 'target' '" + target + "'");
  }
  const std::vector<Value> *split = root->getArray("batch_split");
  if (!split || int64_t(split->size()) != program->ranks)
    return failWith<braidrt_program *>(
        nullptr, where + "'batch_split' needs one entry per rank");
  for (const Value &samples : *split) {
    if (!samples.integer || *samples.integer < 0)
      return failWith<braidrt_program *>(
          nullptr, where + "'batch_split' holds a negative or non-integer "
                           "entry");
    program->batchSplit.push_back(*samples.integer);
  }
  if (!readTensors(*root, "arguments", program->ranks, program->arguments,
                   error) ||
      !readTensors(*root, "results", program->ranks, program->results, error))
    return failWith<braidrt_program *>(nullptr, where + error);
  std::optional<std::string> entry = root->getString("entry");
  if (!entry)
    return failWith<braidrt_program *>(nullptr, where + "'entry' is required");
  void *symbol = dlsym(handle, entry->c_str());
  if (!symbol)
    return failWith<braidrt_program *>(
        nullptr, path + ": has no entry point '" + *entry + "'");
  program->entry = reinterpret_cast<void (*)(void **)>(symbol);
  program->storage.resize(program->arguments.size());
  program->descriptors.resize(program->arguments.size());
  return program.release();
}

void braidrt_program_free(braidrt_program *program) { delete program; }

const char *braidrt_program_manifest(const braidrt_program *program) {
  return program ? program->manifestText.c_str() : "";
}

int64_t braidrt_program_ranks(const braidrt_program *program) {
  return program ? program->ranks : 0;
}

int braidrt_program_has_exchanges(const braidrt_program *program) {
  return program && program->exchanges;
}

const int64_t *braidrt_program_batch_split(const braidrt_program *program) {
  return program ? program->batchSplit.data() : nullptr;
}

int64_t braidrt_program_num_arguments(const braidrt_program *program) {
  return program ? int64_t(program->arguments.size()) : 0;
}

int braidrt_program_argument(const braidrt_program *program, int64_t index,
                             braidrt_argument_info *info) {
  if (!program || !fillInfo(program->arguments, index, info))
    return failWith(-1, "no argument " + std::to_string(index));
  return 0;
}

int braidrt_program_table_slice(const braidrt_program *program, int64_t index,
                                int64_t rank, braidrt_table_slice *slice) {
  if (!program || !slice || index < 0 ||
      index >= int64_t(program->arguments.size()) ||
      (program->arguments[index].kind != "table" &&
       program->arguments[index].kind != "table_state"))
    return failWith(-1,
                    "argument " + std::to_string(index) + " is not a table");
  const Tensor &table = program->arguments[index];
  if (rank < 0 || rank >= int64_t(table.slices.size()))
    return failWith(-1, "the manifest has no slice of table '" + table.name +
                            "' for rank " + std::to_string(rank));
  *slice = table.slices[rank];
  return 0;
}

int64_t braidrt_program_num_results(const braidrt_program *program) {
  return program ? int64_t(program->results.size()) : 0;
}

int braidrt_program_result_info(const braidrt_program *program, int64_t index,
                                braidrt_argument_info *info) {
  if (!program || !fillInfo(program->results, index, info))
    return failWith(-1, "no result " + std::to_string(index));
  return 0;
}

void *braidrt_program_stage(braidrt_program *program, int64_t index,
                            const int64_t *shape, int64_t rank) {
  if (!program || index < 0 || index >= int64_t(program->arguments.size()))
    return failWith<void *>(nullptr, "no argument " + std::to_string(index));
  const Tensor &argument = program->arguments[index];
  std::string what = "argument '" + argument.name + "'";
  if (rank != int64_t(argument.shape.size()) || (rank > 0 && !shape))
    return failWith<void *>(nullptr, what + " has rank " +
                                         std::to_string(rank) +
                                         ", the program expects " +
                                         std::to_string(argument.shape.size()));
  size_t bytes = elementBytes(argument.dtype);
  for (int64_t d = 0; d < rank; ++d) {
    if (shape[d] < 0 ||
        (argument.shape[d] >= 0 && argument.shape[d] != shape[d]))
      return failWith<void *>(nullptr,
                              what + ": size " + std::to_string(shape[d]) +
                                  " of dimension " + std::to_string(d) +
                                  " does not fit the program's shape");
    if (shape[d] != 0 &&
        bytes > std::numeric_limits<size_t>::max() / 2 / size_t(shape[d]))
      return failWith<void *>(nullptr, what + " is too large");
    bytes *= size_t(shape[d]);
  }
  void *data = program->allocator.allocate
                   ? program->allocator.allocate(std::max<size_t>(bytes, 1))
                   : allocateArgument(bytes);
  if (!data)
    return failWith<void *>(nullptr, "cannot allocate " +
                                         std::to_string(bytes) + " bytes for " +
                                         what);
  program->storage[index] = std::unique_ptr<void, FreeStorage>(
      data, FreeStorage{program->allocator.release});
  std::vector<int64_t> &descriptor = program->descriptors[index];
  descriptor.assign(3 + 2 * rank, 0);
  descriptor[0] = descriptor[1] = reinterpret_cast<int64_t>(data);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    descriptor[3 + d] = shape[d];
    descriptor[3 + rank + d] = stride;
    stride *= shape[d];
  }
  return data;
}

int braidrt_program_call(braidrt_program *program, double *milliseconds) {
  if (!program)
    return failWith(-1, "no program");
  for (size_t i = 0; i < program->arguments.size(); ++i)
    if (!program->storage[i])
      return failWith(-1, "argument '" + program->arguments[i].name +
                              "' is not staged");
  // A program that exchanges was compiled for its ranks: on another world
  // its collectives would pair the wrong ranks (a 2-rank program on 4 ran,
  // summing gradients within pairs). Without MPI (a test calling one rank's
  // checks) there is no world to compare, and an exchange fails in MPI.
  int mpiUp = 0;
  MPI_Initialized(&mpiUp);
  if (program->exchanges && mpiUp && braidrt_world_size() != program->ranks)
    return failWith(-1, "the program was compiled for " +
                            std::to_string(program->ranks) +
                            " ranks and exchanges data, but the job has " +
                            std::to_string(braidrt_world_size()) +
                            " (braidrt_init sets it from MPI)");
  program->releaseResults();
  size_t words = 0;
  for (const Tensor &result : program->results) {
    program->resultAt.push_back(words);
    words += 3 + 2 * result.shape.size();
  }
  program->resultDescriptors.assign(words, 0);
  std::vector<void *> pointers;
  if (!program->results.empty())
    pointers.push_back(program->resultDescriptors.data());
  for (std::vector<int64_t> &descriptor : program->descriptors)
    pointers.push_back(descriptor.data());
  auto start = std::chrono::steady_clock::now();
  program->entry(pointers.data());
  // A profiled program's last timer (its return: the frees and result
  // copies that follow its last op) ends when the function has returned.
  braidrt_op_close();
  if (milliseconds)
    *milliseconds = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  // Each result buffer is freed once; a result that aliases an argument's
  // storage stays with the argument.
  std::set<void *> owned;
  for (const auto &storage : program->storage)
    owned.insert(storage.get());
  for (size_t at : program->resultAt) {
    void *allocated = reinterpret_cast<void *>(program->resultDescriptors[at]);
    if (allocated && owned.insert(allocated).second)
      program->resultBuffers.push_back(allocated);
  }
  return 0;
}

int braidrt_program_result(const braidrt_program *program, int64_t index,
                           braidrt_tensor_view *view) {
  if (!program || !view || index < 0 ||
      index >= int64_t(program->resultAt.size()))
    return failWith(-1, "no result " + std::to_string(index) +
                            " (call the program first)");
  const Tensor &result = program->results[index];
  const int64_t *descriptor =
      program->resultDescriptors.data() + program->resultAt[index];
  int64_t rank = result.shape.size();
  *view = {reinterpret_cast<const void *>(descriptor[1]),
           result.dtype.c_str(),
           rank,
           descriptor[2],
           descriptor + 3,
           descriptor + 3 + rank};
  return 0;
}

} // extern "C"
