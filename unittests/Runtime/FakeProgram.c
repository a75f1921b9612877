/*===- FakeProgram.c - A hand-written compiled program for tests -----------===*\
|*                                                                            *|
|* What braid-compile --target cpu writes, by hand: a manifest and a packed *|
|* entry point. result[i] = 2 * x[i] + table[0][0]; the result is malloc'd  *|
|* as compiled programs do.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "braidrt/program.h"

#include <stdint.h>
#include <stdlib.h>

/* The content hash's slot; the test seals the library before loading it. */
const char braid_content_hash[24] = BRAIDRT_HASH_MAGIC;

const char braid_manifest[] =
    "{\"version\": 1, \"ranks\": 2, \"batch_split\": [3, 2],"
    " \"exchanges\": false, \"function\": \"forward\","
    " \"entry\": \"fake_entry\","
    " \"arguments\": ["
    "  {\"name\": \"x\", \"kind\": \"input\", \"dtype\": \"f32\","
    "   \"shape\": [-1]},"
    "  {\"name\": \"t\", \"kind\": \"table\", \"dtype\": \"f32\","
    "   \"shape\": [-1, 2], \"slices\": ["
    "    {\"row_offset\": 0, \"rows\": 3, \"col_offset\": 0, \"cols\": 2},"
    "    {\"row_offset\": 3, \"rows\": 1, \"col_offset\": 0, \"cols\": 2}]}],"
    " \"results\": [{\"dtype\": \"f32\", \"shape\": [-1]}],"
    " \"global\": {\"arguments\": [], \"tables\": []}}";

void fake_entry(void **args) {
  int64_t *result = (int64_t *)args[0];
  int64_t *x = (int64_t *)args[1];
  int64_t *table = (int64_t *)args[2];
  int64_t n = x[3];
  const float *in = (const float *)x[1] + x[2];
  const float *t = (const float *)table[1] + table[2];
  float *out = (float *)malloc(sizeof(float) * (n ? n : 1));
  for (int64_t i = 0; i < n; ++i)
    out[i] = 2 * in[i] + t[0];
  result[0] = result[1] = (int64_t)out;
  result[2] = 0;
  result[3] = n;
  result[4] = 1;
}
