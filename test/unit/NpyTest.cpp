//===- NpyTest.cpp - .npy reading and writing against NumPy's own files ---===//
//
// The fixtures in Inputs/npy are written by NumPy (make_fixtures.py there).
//
//===----------------------------------------------------------------------===//

#include "tgc/Support/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>

using namespace tgc::npy;
using llvm::StringRef;

namespace {

std::string getFixturePath(StringRef name) {
  return (llvm::Twine(TGC_NPY_FIXTURES) + "/" + name).str();
}

std::string readBytes(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  EXPECT_TRUE(static_cast<bool>(buffer)) << path.str();
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

template <typename T> std::vector<T> getValues(const Array &array) {
  EXPECT_EQ(array.data.size() % sizeof(T), 0u);
  std::vector<T> values(array.data.size() / sizeof(T));
  if (!values.empty())
    std::memcpy(values.data(), array.data.data(), array.data.size());
  return values;
}

template <typename T>
Array makeArray(DType dtype, std::vector<int64_t> shape,
                const std::vector<T> &values) {
  Array array;
  array.dtype = dtype;
  array.shape = std::move(shape);
  array.data.resize(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(array.data.data(), values.data(), array.data.size());
  return array;
}

::testing::AssertionResult succeeded(llvm::Error error) {
  if (!error)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << llvm::toString(std::move(error));
}

/// Reads a fixture that must be valid.
Array readFixture(StringRef name) {
  llvm::Expected<Array> array = readNpy(getFixturePath(name));
  if (!array) {
    ADD_FAILURE() << llvm::toString(array.takeError());
    return Array();
  }
  return std::move(*array);
}

/// The error message of a parse that must fail.
std::string getParseError(StringRef bytes, StringRef name = "test.npy") {
  llvm::Expected<Array> array = parseNpy(bytes, name);
  if (array) {
    ADD_FAILURE() << "parsing succeeded";
    return "";
  }
  return llvm::toString(array.takeError());
}

/// An .npy file with `dict` as its header, unpadded.
std::string makeNpyBytes(StringRef dict, StringRef data, unsigned major = 1) {
  std::string bytes("\x93NUMPY", 6);
  bytes.push_back(static_cast<char>(major));
  bytes.push_back(0);
  char length[4];
  llvm::support::endian::write32le(length, dict.size());
  bytes.append(length, major == 1 ? 2 : 4);
  bytes += dict.str();
  bytes += data.str();
  return bytes;
}

/// Six little-endian f32 values: -1, -0.5, 0, 0.5, 1, 1.5.
std::string getF32Data() {
  std::vector<float> values = {-1, -0.5, 0, 0.5, 1, 1.5};
  return std::string(reinterpret_cast<const char *>(values.data()),
                     values.size() * sizeof(float));
}

class NpyTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tgc-npy-test", tempDir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(tempDir); }

  std::string getTempPath(StringRef name) const {
    llvm::SmallString<128> path(tempDir);
    llvm::sys::path::append(path, name);
    return path.str().str();
  }

  /// The names of the files in the temporary directory.
  std::vector<std::string> listTempDir() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(tempDir, ec), end;
         it != end && !ec; it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    std::sort(names.begin(), names.end());
    return names;
  }

  llvm::SmallString<128> tempDir;
};

//===----------------------------------------------------------------------===//
// Reading NumPy's files
//===----------------------------------------------------------------------===//

TEST_F(NpyTest, ReadsF16) {
  Array array = readFixture("f16.npy");
  EXPECT_EQ(array.dtype, DType::F16);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  // -1, -0.5, 0, 0.5, 1, 1.5 as binary16 bit patterns.
  EXPECT_EQ(
      getValues<uint16_t>(array),
      (std::vector<uint16_t>{0xbc00, 0xb800, 0x0000, 0x3800, 0x3c00, 0x3e00}));
}

TEST_F(NpyTest, ReadsF32) {
  Array array = readFixture("f32.npy");
  EXPECT_EQ(array.dtype, DType::F32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(array.getNumElements(), 6);
  EXPECT_EQ(getValues<float>(array),
            (std::vector<float>{-1, -0.5, 0, 0.5, 1, 1.5}));
}

TEST_F(NpyTest, ReadsF64) {
  Array array = readFixture("f64.npy");
  EXPECT_EQ(array.dtype, DType::F64);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(getValues<double>(array),
            (std::vector<double>{-1, -0.5, 0, 0.5, 1, 1.5}));
}

TEST_F(NpyTest, ReadsI32) {
  Array array = readFixture("i32.npy");
  EXPECT_EQ(array.dtype, DType::I32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(getValues<int32_t>(array),
            (std::vector<int32_t>{-3, -2, -1, 0, 1, 2}));
}

TEST_F(NpyTest, ReadsI64) {
  Array array = readFixture("i64.npy");
  EXPECT_EQ(array.dtype, DType::I64);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(getValues<int64_t>(array),
            (std::vector<int64_t>{-3, -2, -1, 0, 1, 2}));
}

TEST_F(NpyTest, ReadsBool) {
  Array array = readFixture("bool.npy");
  EXPECT_EQ(array.dtype, DType::Bool);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(getValues<uint8_t>(array), (std::vector<uint8_t>{1, 0, 0, 1, 1}));
}

TEST_F(NpyTest, ReadsScalar) {
  Array array = readFixture("scalar_f32.npy");
  EXPECT_EQ(array.dtype, DType::F32);
  EXPECT_TRUE(array.shape.empty());
  EXPECT_EQ(array.getNumElements(), 1);
  EXPECT_EQ(getValues<float>(array), (std::vector<float>{3.5}));
}

TEST_F(NpyTest, ReadsEmptyArray) {
  Array array = readFixture("empty_f32.npy");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{0}));
  EXPECT_EQ(array.getNumElements(), 0);
  EXPECT_TRUE(array.data.empty());
}

TEST_F(NpyTest, ReadsOneElementTuple) {
  Array array = readFixture("one_i64.npy");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(getValues<int64_t>(array), (std::vector<int64_t>{-7}));
}

TEST_F(NpyTest, Reads3D) {
  Array array = readFixture("arange_3d_i32.npy");
  EXPECT_EQ(array.dtype, DType::I32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3, 4}));
  std::vector<int32_t> expected(24);
  for (int32_t i = 0; i < 24; ++i)
    expected[i] = i;
  EXPECT_EQ(getValues<int32_t>(array), expected);
}

TEST_F(NpyTest, ReadsLongArray) {
  Array array = readFixture("long_f64.npy");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{1000}));
  EXPECT_EQ(getValues<double>(array), std::vector<double>(1000, 0.25));
}

TEST_F(NpyTest, ReadsVersion2) {
  std::string bytes = readBytes(getFixturePath("v2_f32.npy"));
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(bytes[6], 2); // Make sure the fixture really is version 2.0.
  Array array = readFixture("v2_f32.npy");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(getValues<float>(array),
            (std::vector<float>{-1, -0.5, 0, 0.5, 1, 1.5}));
}

TEST_F(NpyTest, ReadsVersion3) {
  std::string bytes = readBytes(getFixturePath("v3_i32.npy"));
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(bytes[6], 3);
  Array array = readFixture("v3_i32.npy");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(getValues<int32_t>(array),
            (std::vector<int32_t>{-3, -2, -1, 0, 1, 2}));
}

TEST_F(NpyTest, RejectsFortranOrder) {
  std::string path = getFixturePath("fortran_f32.npy");
  llvm::Expected<Array> array = readNpy(path);
  ASSERT_FALSE(array);
  std::string message = llvm::toString(array.takeError());
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("Fortran"), std::string::npos) << message;
}

TEST_F(NpyTest, RejectsBigEndian) {
  std::string path = getFixturePath("bigendian_f32.npy");
  llvm::Expected<Array> array = readNpy(path);
  ASSERT_FALSE(array);
  std::string message = llvm::toString(array.takeError());
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("'>f4'"), std::string::npos) << message;
  EXPECT_NE(message.find("big-endian"), std::string::npos) << message;
}

TEST_F(NpyTest, RejectsUnsupportedDTypes) {
  for (StringRef name : {"complex64.npy", "structured.npy"}) {
    std::string path = getFixturePath(name);
    llvm::Expected<Array> array = readNpy(path);
    ASSERT_FALSE(array) << name.str();
    std::string message = llvm::toString(array.takeError());
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("unsupported dtype"), std::string::npos) << message;
  }
  std::string message =
      llvm::toString(readNpy(getFixturePath("complex64.npy")).takeError());
  EXPECT_NE(message.find("'<c8'"), std::string::npos) << message;
}

TEST_F(NpyTest, MissingFileIsAnError) {
  std::string path = getTempPath("does-not-exist.npy");
  llvm::Expected<Array> array = readNpy(path);
  ASSERT_FALSE(array);
  std::string message = llvm::toString(array.takeError());
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

//===----------------------------------------------------------------------===//
// Header parsing
//===----------------------------------------------------------------------===//

TEST_F(NpyTest, ParsesHeadersNumPyDoesNotWrite) {
  std::string data = getF32Data();
  // Keys in any order, odd spacing, double quotes, no trailing comma, a
  // trailing comma inside the shape tuple, '=' for native (little) order,
  // and no padding or final newline.
  for (StringRef dict : {
           "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",
           "{ \"descr\" : \"<f4\" ,\n'fortran_order':False,'shape':( 2 ,3 , ) "
           ", }  \n",
           "{'fortran_order': False, 'descr': '=f4', 'shape': (2,3)}",
           "\t{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3),}",
       }) {
    for (unsigned major : {1u, 2u, 3u}) {
      llvm::Expected<Array> array =
          parseNpy(makeNpyBytes(dict, data, major), "test.npy");
      ASSERT_TRUE(static_cast<bool>(array))
          << dict.str() << ": " << llvm::toString(array.takeError());
      EXPECT_EQ(array->dtype, DType::F32);
      EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 3}));
      EXPECT_EQ(getValues<float>(*array),
                (std::vector<float>{-1, -0.5, 0, 0.5, 1, 1.5}));
    }
  }
}

TEST_F(NpyTest, ParsesEveryDescr) {
  struct Case {
    StringRef descr;
    DType dtype;
  };
  for (Case c : {Case{"<f2", DType::F16}, Case{"<f4", DType::F32},
                 Case{"<f8", DType::F64}, Case{"<i4", DType::I32},
                 Case{"<i8", DType::I64}, Case{"|b1", DType::Bool},
                 Case{"=i8", DType::I64}, Case{"|i1", DType::I8},
                 Case{"<i1", DType::I8}, Case{"|u1", DType::U8},
                 Case{"<i2", DType::I16}, Case{"<u2", DType::U16},
                 Case{"<u4", DType::U32}, Case{"<u8", DType::U64}}) {
    std::string dict = "{'descr': '" + c.descr.str() +
                       "', 'fortran_order': False, 'shape': (3,), }";
    std::string data(3 * getElementSize(c.dtype), '\1');
    llvm::Expected<Array> array = parseNpy(makeNpyBytes(dict, data), "x");
    ASSERT_TRUE(static_cast<bool>(array))
        << c.descr.str() << ": " << llvm::toString(array.takeError());
    EXPECT_EQ(array->dtype, c.dtype);
    EXPECT_EQ(array->data.size(), data.size());
  }
}

TEST_F(NpyTest, GetDescrAndElementSize) {
  EXPECT_EQ(getDescr(DType::F16), "<f2");
  EXPECT_EQ(getDescr(DType::F32), "<f4");
  EXPECT_EQ(getDescr(DType::F64), "<f8");
  EXPECT_EQ(getDescr(DType::I32), "<i4");
  EXPECT_EQ(getDescr(DType::I64), "<i8");
  EXPECT_EQ(getDescr(DType::Bool), "|b1");
  EXPECT_EQ(getElementSize(DType::F16), 2u);
  EXPECT_EQ(getElementSize(DType::F32), 4u);
  EXPECT_EQ(getElementSize(DType::F64), 8u);
  EXPECT_EQ(getElementSize(DType::I32), 4u);
  EXPECT_EQ(getElementSize(DType::I64), 8u);
  EXPECT_EQ(getElementSize(DType::Bool), 1u);
  EXPECT_EQ(getDescr(DType::I8), "|i1");
  EXPECT_EQ(getDescr(DType::U8), "|u1");
  EXPECT_EQ(getDescr(DType::I16), "<i2");
  EXPECT_EQ(getDescr(DType::U16), "<u2");
  EXPECT_EQ(getDescr(DType::U32), "<u4");
  EXPECT_EQ(getElementSize(DType::I8), 1u);
  EXPECT_EQ(getElementSize(DType::U8), 1u);
  EXPECT_EQ(getElementSize(DType::I16), 2u);
  EXPECT_EQ(getElementSize(DType::U16), 2u);
  EXPECT_EQ(getElementSize(DType::U32), 4u);
  EXPECT_EQ(getDescr(DType::U64), "<u8");
  EXPECT_EQ(getElementSize(DType::U64), 8u);
  EXPECT_TRUE(isInteger(DType::U64));
  EXPECT_TRUE(isInteger(DType::U8));
  EXPECT_FALSE(isInteger(DType::Bool));
  EXPECT_FALSE(isInteger(DType::F16));
}

/// Expects parsing `bytes` to fail with a message naming the file and
/// containing `problem`.
void expectParseError(StringRef bytes, StringRef problem) {
  std::string message = getParseError(bytes, "bad.npy");
  EXPECT_NE(message.find("'bad.npy'"), std::string::npos) << message;
  EXPECT_NE(message.find(problem.str()), std::string::npos)
      << "expected '" << problem.str() << "' in: " << message;
}

TEST_F(NpyTest, BadMagic) {
  expectParseError("", "bad magic");
  expectParseError("\x93NUMP", "bad magic");
  expectParseError("PK\x03\x04 a zip file", "bad magic");
  expectParseError(std::string("\x93numpy\x01\x00", 8), "bad magic");
}

TEST_F(NpyTest, TruncatedHeader) {
  std::string valid = makeNpyBytes(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
      getF32Data());
  expectParseError(valid.substr(0, 7), "truncated header");
  expectParseError(valid.substr(0, 9), "truncated header");
  expectParseError(valid.substr(0, 30), "truncated header");
  // Version 2.0 needs four length bytes.
  expectParseError(std::string("\x93NUMPY\x02\x00\x10\x00", 10),
                   "truncated header");
  // A header length that runs past the end of the file.
  expectParseError(std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14),
                   "truncated header");
}

TEST_F(NpyTest, UnsupportedVersion) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': ()}";
  std::string data(4, '\0');
  std::string bytes = makeNpyBytes(dict, data, 4);
  expectParseError(bytes, "unsupported .npy version 4.0");
  bytes = makeNpyBytes(dict, data, 1);
  bytes[7] = 1;
  expectParseError(bytes, "unsupported .npy version 1.1");
  bytes[6] = 0;
  bytes[7] = 0;
  expectParseError(bytes, "unsupported .npy version 0.0");
}

TEST_F(NpyTest, MissingAndUnexpectedKeys) {
  std::string data = getF32Data();
  expectParseError(
      makeNpyBytes("{'fortran_order': False, 'shape': (2, 3)}", data),
      "missing key 'descr'");
  expectParseError(makeNpyBytes("{'descr': '<f4', 'shape': (2, 3)}", data),
                   "missing key 'fortran_order'");
  expectParseError(
      makeNpyBytes("{'descr': '<f4', 'fortran_order': False}", data),
      "missing key 'shape'");
  expectParseError(makeNpyBytes("{}", data), "missing key");
  expectParseError(makeNpyBytes("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (2, 3), 'extra': 1}",
                                data),
                   "unexpected key 'extra'");
  expectParseError(makeNpyBytes("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (2, 3), 'descr': '<f4'}",
                                data),
                   "duplicate key 'descr'");
}

TEST_F(NpyTest, MalformedDict) {
  std::string data = getF32Data();
  for (StringRef dict : {
           "",
           "[1, 2]",
           "{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3)}",
           "{'descr' '<f4', 'fortran_order': False, 'shape': (2, 3)}",
           "{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3)}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} x",
           "{'descr': '<f4', 'fortran_order': false, 'shape': (2, 3)}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3}",
           "{1: '<f4'}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': ((((((((((("
           "((((2,),),),),),),),),),),),),)}",
       }) {
    expectParseError(makeNpyBytes(dict, data), "bad header");
  }
}

TEST_F(NpyTest, BadShape) {
  auto withShape = [](StringRef shape, StringRef data) {
    return makeNpyBytes(("{'descr': '<f4', 'fortran_order': False, "
                         "'shape': " +
                         shape + ", }")
                            .str(),
                        data);
  };
  std::string data = getF32Data();
  // (6) is the integer 6 in Python, not a tuple.
  expectParseError(withShape("(6)", data), "bad shape: not a tuple");
  expectParseError(withShape("[2, 3]", data), "bad shape: not a tuple");
  expectParseError(withShape("6", data), "bad shape: not a tuple");
  expectParseError(withShape("'(2, 3)'", data), "bad shape: not a tuple");
  expectParseError(withShape("(2, -3)", data), "bad shape: negative");
  expectParseError(withShape("(2, 'a')", data), "bad shape");
  expectParseError(withShape("(2, (3,))", data), "bad shape");
  expectParseError(withShape("(2, True)", data), "bad shape");
  // The element count overflows: 2^32 * 2^32.
  expectParseError(withShape("(4294967296, 4294967296)", ""), "bad shape");
  // The byte count overflows: 2^62 f32 elements.
  expectParseError(withShape("(4611686018427387904,)", ""), "bad shape");
  // An integer beyond int64.
  expectParseError(withShape("(99999999999999999999,)", ""), "too large");
}

TEST_F(NpyTest, DataSizeMustMatchShape) {
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  std::string data = getF32Data();
  expectParseError(makeNpyBytes(dict, data.substr(0, 20)), "truncated");
  expectParseError(makeNpyBytes(dict, data.substr(0, 23)), "data is 23 bytes");
  expectParseError(makeNpyBytes(dict, ""), "needs 24");
  expectParseError(makeNpyBytes(dict, data + "x"), "extra data");
  // A zero-size array has no data at all.
  expectParseError(
      makeNpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3)}",
                   StringRef("\0", 1)),
      "extra data");
}

TEST_F(NpyTest, UnsupportedDescr) {
  for (StringRef descr :
       {"<c8", "<c16", "<b1", "<f16", "f4", ">i2", "|i2", ">i8", "S10", "O"}) {
    std::string dict = "{'descr': '" + descr.str() +
                       "', 'fortran_order': False, 'shape': (), }";
    expectParseError(makeNpyBytes(dict, "12345678"),
                     "unsupported dtype '" + descr.str() + "'");
  }
  // A structured dtype's descr is a list.
  expectParseError(makeNpyBytes("{'descr': [('a', '<f4')], "
                                "'fortran_order': False, 'shape': (), }",
                                "1234"),
                   "unsupported dtype");
}

TEST_F(NpyTest, FortranOrderMustBeBoolean) {
  std::string data = getF32Data();
  expectParseError(
      makeNpyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3)}",
                   data),
      "Fortran-order arrays are not supported");
  expectParseError(
      makeNpyBytes("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3)}",
                   data),
      "'fortran_order' is not True or False");
}

/// A small deterministic generator (Knuth's MMIX LCG), so that the mutation
/// loop does the same thing on every run and platform.
class MutationRng {
public:
  uint64_t next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  }
  size_t below(size_t bound) { return bound ? next() % bound : 0; }

private:
  uint64_t state = 0x5eed;
};

TEST_F(NpyTest, MutatedFilesNeverCrash) {
  // Byte flips, truncations and header-length edits of a valid file must
  // give an array or an error, never a crash or an out-of-bounds read (run
  // under a sanitizer to check the latter).
  std::string valid = readBytes(getFixturePath("f32.npy"));
  ASSERT_FALSE(valid.empty());
  MutationRng rng;
  int parsed = 0, rejected = 0;
  for (int iteration = 0; iteration < 2000; ++iteration) {
    std::string bytes = valid;
    switch (rng.below(4)) {
    case 0: // Flip a few bytes anywhere.
      for (size_t flips = 1 + rng.below(3); flips > 0; --flips)
        bytes[rng.below(bytes.size())] ^= static_cast<char>(1 + rng.below(255));
      break;
    case 1: // Flip a byte of the header dict, where the parser works.
      bytes[10 + rng.below(118)] = static_cast<char>(rng.below(256));
      break;
    case 2: // Truncate.
      bytes.resize(rng.below(bytes.size()));
      break;
    case 3: // Change the header length.
      bytes[8 + rng.below(2)] = static_cast<char>(rng.below(256));
      break;
    }
    // Copy into an exactly-sized heap buffer so that a sanitizer sees any
    // read past the end.
    std::unique_ptr<char[]> copy(new char[bytes.size() + 1]);
    std::memcpy(copy.get(), bytes.data(), bytes.size());
    llvm::Expected<Array> array =
        parseNpy(StringRef(copy.get(), bytes.size()), "mutated.npy");
    if (array) {
      ++parsed;
      EXPECT_EQ(static_cast<int64_t>(array->data.size()),
                array->getNumElements() *
                    static_cast<int64_t>(getElementSize(array->dtype)));
    } else {
      ++rejected;
      std::string message = llvm::toString(array.takeError());
      EXPECT_NE(message.find("mutated.npy"), std::string::npos) << message;
    }
  }
  EXPECT_EQ(parsed + rejected, 2000);
  // Both outcomes occur: flips of data bytes still parse.
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

TEST_F(NpyTest, WritesNumPyBytesExactly) {
  // Reading NumPy's file and writing the array back must reproduce the file
  // byte for byte: same header text, growth spaces and padding.
  for (StringRef name : {"f16.npy", "f32.npy", "f64.npy", "i32.npy", "i64.npy",
                         "bool.npy", "scalar_f32.npy", "empty_f32.npy",
                         "one_i64.npy", "arange_3d_i32.npy", "long_f64.npy"}) {
    Array array = readFixture(name);
    std::string path = getTempPath(name);
    ASSERT_TRUE(succeeded(writeNpy(path, array))) << name.str();
    EXPECT_EQ(readBytes(path), readBytes(getFixturePath(name))) << name.str();
  }
}

TEST_F(NpyTest, WritesArraysBuiltInMemory) {
  // The same arrays as f32.npy and scalar_f32.npy, built here rather than
  // read, so that the comparison does not depend on the reader.
  std::string path = getTempPath("f32.npy");
  Array array =
      makeArray<float>(DType::F32, {2, 3}, {-1, -0.5, 0, 0.5, 1, 1.5});
  ASSERT_TRUE(succeeded(writeNpy(path, array)));
  EXPECT_EQ(readBytes(path), readBytes(getFixturePath("f32.npy")));

  Array scalar = makeArray<float>(DType::F32, {}, {3.5});
  ASSERT_TRUE(succeeded(writeNpy(path, scalar))); // Overwrites.
  EXPECT_EQ(readBytes(path), readBytes(getFixturePath("scalar_f32.npy")));
  EXPECT_EQ(listTempDir(), std::vector<std::string>{"f32.npy"});
}

TEST_F(NpyTest, WriteThenReadRoundTrips) {
  std::vector<Array> arrays = {
      makeArray<uint16_t>(DType::F16, {3}, {0x3c00, 0x7c00, 0x8001}),
      makeArray<float>(DType::F32, {1, 1, 1, 1}, {-2.5f}),
      makeArray<double>(DType::F64, {2, 0, 5}, {}),
      makeArray<int32_t>(DType::I32, {}, {INT32_MIN}),
      makeArray<int64_t>(DType::I64, {2, 2}, {1, -1, INT64_MAX, INT64_MIN}),
      makeArray<uint8_t>(DType::Bool, {4}, {1, 0, 1, 1}),
      // Many dimensions, each with many digits.
      makeArray<uint8_t>(DType::Bool,
                         {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                          1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},
                         {}),
      makeArray<float>(DType::F32, {int64_t(1) << 40, 0}, {}),
  };
  for (size_t i = 0; i < arrays.size(); ++i) {
    std::string path = getTempPath("roundtrip" + std::to_string(i) + ".npy");
    ASSERT_TRUE(succeeded(writeNpy(path, arrays[i]))) << i;
    std::string bytes = readBytes(path);
    // Version 1.0, data aligned to 64 bytes after a header ending in '\n'.
    ASSERT_GE(bytes.size(), 10u);
    EXPECT_EQ(bytes[6], 1) << i;
    size_t dataStart = 10 + llvm::support::endian::read16le(bytes.data() + 8);
    EXPECT_EQ(dataStart % 64, 0u) << i;
    EXPECT_EQ(bytes[dataStart - 1], '\n') << i;
    EXPECT_EQ(bytes.size() - dataStart, arrays[i].data.size()) << i;

    llvm::Expected<Array> back = readNpy(path);
    ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(back->dtype, arrays[i].dtype) << i;
    EXPECT_EQ(back->shape, arrays[i].shape) << i;
    EXPECT_EQ(back->data, arrays[i].data) << i;
  }
}

TEST_F(NpyTest, WritesVersion2WhenTheHeaderNeedsIt) {
  // 30000 dimensions make a header longer than version 1.0's 16-bit length
  // (NumPy itself caps ndim at 32, so this never comes from NumPy).
  Array array;
  array.dtype = DType::I32;
  array.shape.assign(30000, 1);
  array.data.assign(4, '\x7f');
  std::string path = getTempPath("v2.npy");
  ASSERT_TRUE(succeeded(writeNpy(path, array)));
  std::string bytes = readBytes(path);
  ASSERT_GE(bytes.size(), 12u);
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ(bytes[7], 0);
  size_t dataStart = 12 + llvm::support::endian::read32le(bytes.data() + 8);
  EXPECT_GT(dataStart, 65535u);
  EXPECT_EQ(dataStart % 64, 0u);
  EXPECT_EQ(bytes[dataStart - 1], '\n');
  llvm::Expected<Array> back = readNpy(path);
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->shape, array.shape);
  EXPECT_EQ(back->data, array.data);
}

TEST_F(NpyTest, WriteRejectsInconsistentArrays) {
  std::string path = getTempPath("bad.npy");
  Array array = makeArray<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5});
  llvm::Error error = writeNpy(path, array);
  ASSERT_TRUE(static_cast<bool>(error));
  std::string message = llvm::toString(std::move(error));
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("data is 20 bytes"), std::string::npos) << message;

  array.shape = {-1};
  error = writeNpy(path, array);
  ASSERT_TRUE(static_cast<bool>(error));
  message = llvm::toString(std::move(error));
  EXPECT_NE(message.find("bad shape"), std::string::npos) << message;
  EXPECT_TRUE(listTempDir().empty());
}

TEST_F(NpyTest, FailedWriteLeavesNothingBehind) {
  Array array = makeArray<float>(DType::F32, {1}, {1});
  // The directory does not exist: the temporary file cannot be created.
  std::string missing = getTempPath("no-such-dir/out.npy");
  llvm::Error error = writeNpy(missing, array);
  ASSERT_TRUE(static_cast<bool>(error));
  std::string message = llvm::toString(std::move(error));
  EXPECT_NE(message.find(missing), std::string::npos) << message;

  // The destination is a non-empty directory: the final rename fails after
  // the data was written, and the temporary file must go.
  std::string directory = getTempPath("occupied.npy");
  ASSERT_FALSE(llvm::sys::fs::create_directory(directory));
  ASSERT_TRUE(succeeded(writeNpy(directory + "/inside.npy", array)));
  error = writeNpy(directory, array);
  ASSERT_TRUE(static_cast<bool>(error));
  message = llvm::toString(std::move(error));
  EXPECT_NE(message.find(directory), std::string::npos) << message;
  EXPECT_EQ(listTempDir(), std::vector<std::string>{"occupied.npy"});
}

} // namespace
