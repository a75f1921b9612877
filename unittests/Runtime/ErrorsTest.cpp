//===- ErrorsTest.cpp - The aborts compiled programs call -----------------===//
//
// The checks compiled programs make call these runtime functions, which
// must end the process with exit code 1 and a message naming the rank and
// what was wrong (a rank outside mpirun is rank 0).
//
//===----------------------------------------------------------------------===//

#include "braidrt/braidrt.h"

#include "gtest/gtest.h"

namespace {

TEST(RuntimeErrors, AdamStepBelowOne) {
  EXPECT_EXIT(braidrt_step_error(0), testing::ExitedWithCode(1),
              "braidrt: rank 0: error: dense_update: adam needs a step number "
              "from 1, got 0");
  EXPECT_EXIT(braidrt_step_error(-3), testing::ExitedWithCode(1), "got -3");
}

TEST(RuntimeErrors, MoreBagsThanSlots) {
  EXPECT_EXIT(braidrt_bags_error(9, 8), testing::ExitedWithCode(1),
              "9 local bags, but bags_per_rank is only 8");
}

TEST(RuntimeErrors, IndexAndOffsets) {
  EXPECT_EXIT(braidrt_index_error(7, 5), testing::ExitedWithCode(1),
              "index 7 is outside its table of 5 rows");
  EXPECT_EXIT(braidrt_offsets_error(2, 1), testing::ExitedWithCode(1),
              "bag offsets entry 2 is 1");
}

} // namespace
