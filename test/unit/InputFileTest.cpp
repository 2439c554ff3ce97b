//===- InputFileTest.cpp - opening input files safely ---------------------===//

#include "tgc/Support/InputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace tgc;

namespace {
/// A fresh directory with a model folder and a file outside it.
class InputFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tgc-input", root));
    model = root;
    llvm::sys::path::append(model, "model");
    ASSERT_FALSE(llvm::sys::fs::create_directory(model));
    write(path("model/w.bin"), "0123456789");
    write(path("outside.bin"), "secret");
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }

  std::string path(llvm::StringRef relative) {
    llvm::SmallString<256> result(root);
    llvm::sys::path::append(result, relative);
    return std::string(result);
  }
  static void write(const std::string &file, llvm::StringRef bytes) {
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    ASSERT_FALSE(ec);
    os << bytes;
  }
  static std::string message(llvm::Error error) {
    return llvm::toString(std::move(error));
  }

  llvm::SmallString<256> root, model;
};

TEST_F(InputFileTest, ReadsARangeOfARegularFile) {
  llvm::Expected<std::string> bytes =
      readInputFileRange(path("model/w.bin"), 2, 5);
  ASSERT_TRUE(!!bytes) << message(bytes.takeError());
  EXPECT_EQ(*bytes, "23456");
  llvm::Expected<std::string> tooFar =
      readInputFileRange(path("model/w.bin"), 8, 5);
  ASSERT_FALSE(!!tooFar);
  EXPECT_NE(message(tooFar.takeError()).find("holds 10 bytes"),
            std::string::npos);
  // An offset near 2^64 must not wrap around the size check.
  llvm::Expected<std::string> wrapped =
      readInputFileRange(path("model/w.bin"), UINT64_MAX - 1, 4);
  ASSERT_FALSE(!!wrapped);
  llvm::consumeError(wrapped.takeError());
}

TEST_F(InputFileTest, RefusesWhatIsNotARegularFile) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> fifo =
      readInputFile(path("fifo"));
  ASSERT_FALSE(!!fifo);
  EXPECT_NE(message(fifo.takeError()).find("is a FIFO"), std::string::npos);
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> zero =
      readInputFile("/dev/zero");
  ASSERT_FALSE(!!zero);
  EXPECT_NE(message(zero.takeError()).find("is a character device"),
            std::string::npos);
  llvm::Expected<std::string> directory = readInputFileRange(root, 0, 0);
  ASSERT_FALSE(!!directory);
  EXPECT_NE(message(directory.takeError()).find("is a directory"),
            std::string::npos);
}

TEST_F(InputFileTest, BoundsTheSize) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> small =
      readInputFile(path("model/w.bin"), 4);
  ASSERT_FALSE(!!small);
  EXPECT_NE(message(small.takeError()).find("more than the 4"),
            std::string::npos);
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> whole =
      readInputFile(path("model/w.bin"));
  ASSERT_TRUE(!!whole) << message(whole.takeError());
  EXPECT_EQ((*whole)->getBuffer(), "0123456789");
}

TEST_F(InputFileTest, ResolvesOnlyInsideTheDirectory) {
  llvm::Expected<std::string> plain = resolveInsideDirectory(model, "w.bin");
  ASSERT_TRUE(!!plain) << message(plain.takeError());
  ASSERT_EQ(
      ::symlink(path("outside.bin").c_str(), path("model/link.bin").c_str()),
      0);
  ASSERT_EQ(::symlink(root.c_str(), path("model/up").c_str()), 0);
  ASSERT_EQ(::symlink("w.bin", path("model/alias.bin").c_str()), 0);
  for (llvm::StringRef escaping :
       {"link.bin", "up/outside.bin", "up/model/../outside.bin",
        "../outside.bin", "/etc/passwd"}) {
    llvm::Expected<std::string> resolved =
        resolveInsideDirectory(model, escaping);
    ASSERT_FALSE(!!resolved) << escaping.str();
    std::string text = message(resolved.takeError());
    EXPECT_NE(text.find("outside the model's directory"), std::string::npos)
        << text;
  }
  // A sibling whose name starts like the model's folder is outside too.
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("model2")));
  write(path("model2/w.bin"), "x");
  ASSERT_EQ(::symlink(path("model2/w.bin").c_str(),
                      path("model/sibling.bin").c_str()),
            0);
  llvm::Expected<std::string> sibling =
      resolveInsideDirectory(model, "sibling.bin");
  ASSERT_FALSE(!!sibling);
  llvm::consumeError(sibling.takeError());
  // A link that stays inside is followed.
  llvm::Expected<std::string> alias =
      resolveInsideDirectory(model, "alias.bin");
  ASSERT_TRUE(!!alias) << message(alias.takeError());
  EXPECT_EQ(*alias, *plain);
}
} // namespace
