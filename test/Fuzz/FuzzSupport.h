//===- FuzzSupport.h - Shared pieces of Braid's libFuzzer harnesses -------===//
//
// Each harness is one translation unit linked with -fsanitize=fuzzer, so the
// definitions here appear once per binary.
//
//===----------------------------------------------------------------------===//

#ifndef BRAID_TEST_FUZZ_FUZZSUPPORT_H
#define BRAID_TEST_FUZZ_FUZZSUPPORT_H

#include "llvm/Support/raw_ostream.h"
#include <cstdlib>

// The harnesses run under ASan with clang, where LLVM's headers always see
// an ASan build (`__has_feature(address_sanitizer)`; the gcc build's
// -U__SANITIZE_ADDRESS__ has no clang counterpart) and their inline
// BumpPtrAllocator code poisons slab memory that Debian's uninstrumented
// libMLIR.so later reuses without unpoisoning. The only user poisoning in
// these processes is that allocator annotation, so it is switched off; every
// other ASan check stays on. Leaks are not checked: MLIR's registries live
// until exit.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_leaks=0";
}

// Undefined behaviour is a crash, so libFuzzer keeps the input, whatever
// UBSAN_OPTIONS the caller has.
extern "C" const char *__ubsan_default_options() {
  return "halt_on_error=1:print_stacktrace=1";
}

namespace mlir::braid::fuzz {

/// A broken invariant of a successful parse: a bug, reported as a crash so
/// that libFuzzer keeps the input.
[[noreturn]] inline void invariantFailed(const char *what) {
  llvm::errs() << "fuzz invariant failed: " << what << "\n";
  std::abort();
}

} // namespace mlir::braid::fuzz

#endif // BRAID_TEST_FUZZ_FUZZSUPPORT_H
