//===- Exchanges.h - What the runtime's exchange files share ----*- C++ -*-===//
//
// Internal to libbraidrt: the number of ranks, the deadline-bounded
// wait every collective ends in, and the row buffers the exchanges of
// compiled programs move. Runtime.cpp defines them; DeferredExchanges.cpp
// (the all_to_all_v whose counts move after its start) uses them.
//
//===----------------------------------------------------------------------===//

#ifndef BRAIDRT_LIB_EXCHANGES_H
#define BRAIDRT_LIB_EXCHANGES_H

#include "braidrt/compiled.h"

#include <mpi.h>

#include <cstddef>
#include <cstdint>

namespace braidrt::detail {

/// The number of ranks (MPI_COMM_WORLD).
int rankCount();

/// Fails (braidrt_fail) unless MPI is initialized.
void requireInitialized(const char *what);

/// `count` as MPI's int, failing for a count MPI cannot hold.
int checkedCount(int64_t count, const char *what);

/// Completes `request`, aborting after the timeout (BRAIDRT_TIMEOUT_S); the
/// time goes to the wait totals under `what`.
void waitFor(MPI_Request &request, const char *what);

/// A row-major buffer from an MLIR descriptor: its first byte, its rows
/// (first dimension) and the bytes of one row.
struct Rows {
  char *data = nullptr;
  int64_t rows = 0, rowBytes = 0;
};
Rows rowsOf(const braidrt_unranked_memref *memref, size_t elementBytes,
            const char *what);

/// The world's counts (one per rank) in an i64 buffer.
const int64_t *countsOf(const braidrt_unranked_memref *memref,
                        const char *what);

/// The deferred all_to_all_v exchanges (DeferredExchanges.cpp): their
/// communicator, made by braidrt_init and freed by braidrt_finalize, and
/// their progress, which braidrt_progress makes: it posts the rows of those
/// whose counts have arrived, in start order, and tests those moving.
void initDeferredExchanges();
void finalizeDeferredExchanges();
void progressDeferredExchanges();

} // namespace braidrt::detail

#endif // BRAIDRT_LIB_EXCHANGES_H
