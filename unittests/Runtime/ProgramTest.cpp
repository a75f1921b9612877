//===- ProgramTest.cpp - The runtime's program loader ----------------------===//
//
// Loads a hand-written program (FakeProgram.c) through program.h: its
// manifest, staging with shape checks, calls and results.
//
//===----------------------------------------------------------------------===//

#include "braidrt/program.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace {

/// The hand-written program, sealed (its content hash written) as
/// braid-compile seals what it links.
const char *sealedProgram() {
  static bool sealed =
      braidrt_program_seal(BRAID_FAKE_PROGRAM_DIR "/libprogram.so") == 0;
  EXPECT_TRUE(sealed) << braidrt_program_last_error();
  return BRAID_FAKE_PROGRAM_DIR;
}

struct ProgramDeleter {
  void operator()(braidrt_program *program) const {
    braidrt_program_free(program);
  }
};
using ProgramPtr = std::unique_ptr<braidrt_program, ProgramDeleter>;

TEST(RuntimeProgram, ReadsTheManifest) {
  ProgramPtr program(braidrt_program_load(sealedProgram()));
  ASSERT_TRUE(program) << braidrt_program_last_error();
  EXPECT_EQ(braidrt_program_ranks(program.get()), 2);
  EXPECT_EQ(braidrt_program_has_exchanges(program.get()), 0);
  EXPECT_EQ(braidrt_program_batch_split(program.get())[0], 3);
  EXPECT_EQ(braidrt_program_batch_split(program.get())[1], 2);
  ASSERT_EQ(braidrt_program_num_arguments(program.get()), 2);
  braidrt_argument_info info;
  ASSERT_EQ(braidrt_program_argument(program.get(), 1, &info), 0);
  EXPECT_STREQ(info.name, "t");
  EXPECT_STREQ(info.kind, "table");
  EXPECT_STREQ(info.dtype, "f32");
  ASSERT_EQ(info.rank, 2);
  EXPECT_EQ(info.shape[0], -1);
  EXPECT_EQ(info.shape[1], 2);
  braidrt_table_slice slice;
  ASSERT_EQ(braidrt_program_table_slice(program.get(), 1, 1, &slice), 0);
  EXPECT_EQ(slice.row_offset, 3);
  EXPECT_EQ(slice.rows, 1);
  EXPECT_EQ(braidrt_program_table_slice(program.get(), 1, 2, &slice), -1);
  EXPECT_STREQ(braidrt_program_last_error(),
               "the manifest has no slice of table 't' for rank 2");
  EXPECT_EQ(braidrt_program_table_slice(program.get(), 0, 0, &slice), -1);
  EXPECT_EQ(braidrt_program_argument(program.get(), 2, &info), -1);
  EXPECT_EQ(braidrt_program_argument(program.get(), -1, &info), -1);
  ASSERT_EQ(braidrt_program_num_results(program.get()), 1);
}

TEST(RuntimeProgram, StagesCallsAndReturnsResults) {
  ProgramPtr program(braidrt_program_load(sealedProgram()));
  ASSERT_TRUE(program) << braidrt_program_last_error();
  // Unstaged arguments and results before a call are errors.
  EXPECT_EQ(braidrt_program_call(program.get(), nullptr), -1);
  EXPECT_STREQ(braidrt_program_last_error(), "argument 'x' is not staged");
  braidrt_tensor_view view;
  EXPECT_EQ(braidrt_program_result(program.get(), 0, &view), -1);

  int64_t xShape[] = {3};
  auto *x = static_cast<float *>(
      braidrt_program_stage(program.get(), 0, xShape, 1));
  ASSERT_TRUE(x) << braidrt_program_last_error();
  x[0] = 1, x[1] = 2, x[2] = -4;
  // The table's columns are fixed at 2; its rows are the slice's.
  int64_t wrongTable[] = {3, 5};
  EXPECT_FALSE(braidrt_program_stage(program.get(), 1, wrongTable, 2));
  EXPECT_STREQ(braidrt_program_last_error(),
               "argument 't': size 5 of dimension 1 does not fit the "
               "program's shape");
  EXPECT_FALSE(braidrt_program_stage(program.get(), 1, wrongTable, 1));
  int64_t tableShape[] = {3, 2};
  auto *table = static_cast<float *>(
      braidrt_program_stage(program.get(), 1, tableShape, 2));
  ASSERT_TRUE(table);
  table[0] = 0.5f;
  for (int call = 0; call < 2; ++call) {
    double ms = -1;
    ASSERT_EQ(braidrt_program_call(program.get(), &ms), 0)
        << braidrt_program_last_error();
    EXPECT_GE(ms, 0);
    ASSERT_EQ(braidrt_program_result(program.get(), 0, &view), 0);
    EXPECT_STREQ(view.dtype, "f32");
    ASSERT_EQ(view.rank, 1);
    ASSERT_EQ(view.shape[0], 3);
    const float *out = static_cast<const float *>(view.data) + view.offset;
    EXPECT_FLOAT_EQ(out[0], 2.5f);
    EXPECT_FLOAT_EQ(out[1], 4.5f);
    EXPECT_FLOAT_EQ(out[2], -7.5f);
  }
  // Sizes whose byte count overflows are refused, not wrapped.
  int64_t huge[] = {INT64_MAX};
  EXPECT_FALSE(braidrt_program_stage(program.get(), 0, huge, 1));
  EXPECT_STREQ(braidrt_program_last_error(), "argument 'x' is too large");
}

/// A copy of the sealed library in `dir`, passed through `damage`.
void copyDamaged(const std::string &dir,
                 void (*damage)(std::string &bytes)) {
  std::ifstream in(std::string(sealedProgram()) + "/libprogram.so",
                   std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  damage(bytes);
  std::string command = "mkdir -p " + dir;
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ofstream out(dir + "/libprogram.so", std::ios::binary);
  out << bytes;
}

TEST(RuntimeProgram, RefusesADamagedLibraryBeforeMappingIt) {
  std::string base = ::testing::TempDir() + "/braid-damaged";
  copyDamaged(base + "/flipped",
              [](std::string &bytes) { bytes[bytes.size() / 2] ^= 0x20; });
  EXPECT_FALSE(braidrt_program_load((base + "/flipped").c_str()));
  EXPECT_NE(std::string(braidrt_program_last_error())
                .find("is damaged: its content hash does not match"),
            std::string::npos);
  copyDamaged(base + "/truncated",
              [](std::string &bytes) { bytes.resize(bytes.size() / 3); });
  EXPECT_FALSE(braidrt_program_load((base + "/truncated").c_str()));
  std::string message = braidrt_program_last_error();
  EXPECT_TRUE(message.find("has no content hash") != std::string::npos ||
              message.find("is damaged") != std::string::npos)
      << message;
  copyDamaged(base + "/intact", [](std::string &) {});
  braidrt_program *intact = braidrt_program_load((base + "/intact").c_str());
  EXPECT_TRUE(intact) << braidrt_program_last_error();
  braidrt_program_free(intact);
}

TEST(RuntimeProgram, RefusesWhatIsNotAProgram) {
  EXPECT_FALSE(braidrt_program_load("/nonexistent"));
  EXPECT_STREQ(braidrt_program_last_error(),
               "/nonexistent/libprogram.so: cannot load: no such file");
  EXPECT_FALSE(braidrt_program_load(nullptr));
}

} // namespace
