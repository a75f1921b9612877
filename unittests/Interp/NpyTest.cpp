//===- NpyTest.cpp - Tests of the .npy reader and writer ------------------===//
//
// This file tests that .npy files round-trip for every supported dtype and
// that malformed files are rejected with a message naming the file.
//
//===----------------------------------------------------------------------===//

#include "braid/Interp/HostTensor.h"
#include "braid/Interp/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace mlir::braid::interp;

namespace {
class NpyTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("braid-npy", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string path(llvm::StringRef name) {
    llvm::SmallString<128> result(dir);
    llvm::sys::path::append(result, name);
    return std::string(result);
  }
  std::string errorOf(llvm::StringRef bytes) {
    llvm::Expected<HostTensor> tensor = parseNpy(bytes, "x.npy");
    EXPECT_FALSE(static_cast<bool>(tensor));
    return tensor ? std::string() : llvm::toString(tensor.takeError());
  }
  llvm::SmallString<128> dir;
};
} // namespace

TEST_F(NpyTest, RoundTripsEveryKind) {
  for (ElementKind kind : {ElementKind::f16, ElementKind::f32, ElementKind::f64,
                           ElementKind::i32, ElementKind::i64, ElementKind::i1}) {
    HostTensor tensor(kind, {2, 3});
    for (int64_t i = 0; i < 6; ++i)
      tensor.data[i] = kind == ElementKind::i1 ? i % 2 : i * 1.5 - 2;
    tensor.round();
    std::string file = path("t.npy");
    ASSERT_FALSE(static_cast<bool>(writeNpy(file, tensor)));
    llvm::Expected<HostTensor> back = readNpy(file);
    ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(back->kind, kind);
    EXPECT_EQ(back->shape, tensor.shape);
    EXPECT_EQ(back->data, tensor.data);
  }
}

TEST_F(NpyTest, WritesOneDimensionalAndScalarShapes) {
  HostTensor vector(ElementKind::i64, {4});
  ASSERT_FALSE(static_cast<bool>(writeNpy(path("v.npy"), vector)));
  auto buffer = llvm::MemoryBuffer::getFile(path("v.npy"));
  ASSERT_TRUE(static_cast<bool>(buffer));
  EXPECT_NE((*buffer)->getBuffer().find("'shape': (4,)"), llvm::StringRef::npos);
  // The data starts on a 64-byte boundary.
  EXPECT_EQ(((*buffer)->getBufferSize() - 4 * 8) % 64, 0u);
  HostTensor scalar(ElementKind::f64, {});
  ASSERT_FALSE(static_cast<bool>(writeNpy(path("s.npy"), scalar)));
  llvm::Expected<HostTensor> back = readNpy(path("s.npy"));
  ASSERT_TRUE(static_cast<bool>(back));
  EXPECT_EQ(back->getRank(), 0);
  EXPECT_EQ(back->getNumElements(), 1);
}

TEST_F(NpyTest, RejectsMalformedFiles) {
  EXPECT_EQ(errorOf("hello"), "x.npy: not a .npy file (bad magic string)");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
  auto file = [&](llvm::StringRef text, llvm::StringRef payload) {
    std::string bytes = "\x93NUMPY";
    bytes += '\x01';
    bytes += '\x00';
    bytes += char(text.size() & 0xff);
    bytes += char(text.size() >> 8);
    return bytes + text.str() + payload.str();
  };
  EXPECT_EQ(errorOf(file(header, "abcd")),
            "x.npy: the .npy data is shorter than its shape says (4 bytes)");
  EXPECT_EQ(errorOf(file("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "abcd")),
            "x.npy: unsupported dtype '>f4' (expected <f2, <f4, <f8, <i4, <i8 or |b1)");
  EXPECT_EQ(errorOf(file("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", "abcd")),
            "x.npy: Fortran-ordered arrays are not supported");
  EXPECT_EQ(errorOf(file("{'descr': '<f4', 'shape': (1,), }", "abcd")),
            "x.npy: the .npy header lacks 'descr', 'fortran_order' or 'shape'");
  EXPECT_EQ(errorOf(file("{'descr': '<f4', 'fortran_order': False, 'shape': (x,), }", "")),
            "x.npy: malformed dimension 'x' in the .npy shape");
  EXPECT_EQ(errorOf(file("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", "")),
            "x.npy: the .npy data is shorter than its shape says (0 bytes)");
  // A header that only looks like NumPy's (it was read leniently).
  EXPECT_EQ(errorOf(file("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (1,), }", "abcd")),
            "x.npy: malformed 'fortran_order' in the .npy header: expected True or False, got 'Falsey'");
  EXPECT_EQ(errorOf(file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,,1), }", "abcd")),
            "x.npy: malformed dimension '' in the .npy shape");
  std::string truncated = file(header, "").substr(0, 20);
  EXPECT_EQ(errorOf(truncated), "x.npy: truncated .npy header");

  // One-byte elements, as many as the file holds but more than a tensor may
  // have: refused before they are widened (the payload's pages are never
  // touched, so the buffer costs no memory).
  std::string big = file("{'descr': '|b1', 'fortran_order': False, 'shape': (268435457,), }", "");
  std::unique_ptr<llvm::WritableMemoryBuffer> buffer =
      llvm::WritableMemoryBuffer::getNewUninitMemBuffer(big.size() + (size_t(1) << 28) + 1);
  std::memcpy(buffer->getBufferStart(), big.data(), big.size());
  EXPECT_EQ(errorOf(llvm::StringRef(buffer->getBufferStart(), buffer->getBufferSize())),
            "x.npy: 268435457 elements, more than the 268435456 a tensor may have");
}

TEST_F(NpyTest, IntegersBeyondDoublePrecisionAreRefusedNotRounded) {
  auto file = [&](int64_t value) {
    std::string text =
        "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }";
    std::string bytes = "\x93NUMPY";
    bytes += '\x01';
    bytes += '\x00';
    bytes += char(text.size());
    bytes += '\x00';
    bytes += text;
    int64_t values[2] = {7, value};
    bytes.append(reinterpret_cast<const char *>(values), sizeof values);
    return bytes;
  };
  // 2^53 and -2^53 are the last integers doubles hold exactly.
  for (int64_t exact : {kMaxExactInteger, -kMaxExactInteger}) {
    llvm::Expected<HostTensor> tensor = parseNpy(file(exact), "x.npy");
    ASSERT_TRUE(static_cast<bool>(tensor)) << llvm::toString(tensor.takeError());
    EXPECT_EQ(tensor->data[1], static_cast<double>(exact));
  }
  EXPECT_EQ(errorOf(file(kMaxExactInteger + 1)),
            "x.npy: element 1 is 9007199254740993, beyond the +-2^53 that "
            "Braid's integer tensors hold exactly");
  EXPECT_EQ(errorOf(file(INT64_MIN)),
            "x.npy: element 1 is -9223372036854775808, beyond the +-2^53 that "
            "Braid's integer tensors hold exactly");
}

TEST_F(NpyTest, WritingOutOfRangeIntegersSaturates) {
  HostTensor tensor(ElementKind::i64, {3});
  tensor.data = {1e300, -1e300, std::nan("")};
  ASSERT_FALSE(static_cast<bool>(writeNpy(path("i.npy"), tensor)));
  auto buffer = llvm::MemoryBuffer::getFile(path("i.npy"));
  ASSERT_TRUE(static_cast<bool>(buffer));
  int64_t values[3];
  std::memcpy(values, (*buffer)->getBufferEnd() - sizeof values, sizeof values);
  EXPECT_EQ(values[0], INT64_MAX);
  EXPECT_EQ(values[1], INT64_MIN);
  EXPECT_EQ(values[2], INT64_MIN);
}

TEST_F(NpyTest, MissingFileNamesThePath) {
  llvm::Expected<HostTensor> tensor = readNpy(path("nope.npy"));
  ASSERT_FALSE(static_cast<bool>(tensor));
  std::string message = llvm::toString(tensor.takeError());
  EXPECT_NE(message.find("cannot read a .npy file '"), std::string::npos);
  EXPECT_NE(message.find("nope.npy': No such file"), std::string::npos);
}
