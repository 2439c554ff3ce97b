//===- PhiloxTest.cpp - Philox4x32-10 against Random123's answers ---------===//

#include "tgc/Support/Philox.h"

#include <gtest/gtest.h>

#include <set>

using namespace tgc;

namespace {

using Words = std::array<uint32_t, 4>;

// The three philox4x32 10 lines of Random123's examples/kat_vectors:
// counter (4 words), key (2 words), expected output (4 words).
TEST(PhiloxTest, KnownAnswerZeros) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
}

TEST(PhiloxTest, KnownAnswerAllOnes) {
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

TEST(PhiloxTest, KnownAnswerPiDigits) {
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// The dropout draw is word 0 of Philox with the documented key and counter
// layout; a wrong word order would still pass the statistical tests below.
TEST(PhiloxTest, DropoutUniformUsesDocumentedLayout) {
  EXPECT_EQ(dropoutUniform(0, 0, 0), 0x6627e8d5 / 4294967296.0);
  uint64_t seed = 0x299f31d0a4093822;
  uint64_t index = 0x85a308d3243f6a88;
  uint32_t stream = 0x13198a2e;
  uint32_t word = philox4x32_10({0x243f6a88, 0x85a308d3, stream, 0},
                                {0xa4093822, 0x299f31d0})[0];
  EXPECT_EQ(dropoutUniform(seed, index, stream), word / 4294967296.0);
}

TEST(PhiloxTest, DropoutUniformIsInUnitInterval) {
  for (uint64_t index = 0; index < 100000; ++index) {
    double u = dropoutUniform(42, index, 7);
    ASSERT_GE(u, 0.0) << index;
    ASSERT_LT(u, 1.0) << index;
  }
  // The largest possible draw, (2^32 - 1) / 2^32, is still below 1.
  EXPECT_LT(0xffffffffu * 0x1p-32, 1.0);
}

TEST(PhiloxTest, DropoutUniformIsDeterministic) {
  for (uint64_t index : {0ull, 1ull, 12345ull, 1ull << 40}) {
    EXPECT_EQ(dropoutUniform(7, index, 3), dropoutUniform(7, index, 3));
  }
}

TEST(PhiloxTest, DropoutUniformDiffersAcrossStreamIndexAndSeed) {
  double base = dropoutUniform(1234, 99, 5);
  EXPECT_NE(base, dropoutUniform(1234, 99, 6));
  EXPECT_NE(base, dropoutUniform(1234, 100, 5));
  EXPECT_NE(base, dropoutUniform(1235, 99, 5));
  // High halves of the seed and index matter too.
  EXPECT_NE(base, dropoutUniform(1234 + (1ull << 32), 99, 5));
  EXPECT_NE(base, dropoutUniform(1234, 99 + (1ull << 32), 5));

  // Draws of consecutive indices in one stream are essentially all distinct.
  std::set<double> seen;
  for (uint64_t index = 0; index < 10000; ++index)
    seen.insert(dropoutUniform(1234, index, 5));
  EXPECT_GE(seen.size(), 9990u);
}

TEST(PhiloxTest, DropoutUniformIsUniform) {
  // With p = 0.1 and n = 1e6 the standard deviation of the fraction is 3e-4,
  // so 0.002 is more than six of them; the draw is deterministic anyway.
  constexpr int kDraws = 1000000;
  int below = 0;
  double sum = 0;
  for (uint64_t index = 0; index < kDraws; ++index) {
    double u = dropoutUniform(20240601, index, 1);
    below += u < 0.1;
    sum += u;
  }
  EXPECT_NEAR(static_cast<double>(below) / kDraws, 0.1, 0.002);
  EXPECT_NEAR(sum / kDraws, 0.5, 0.002);
}

} // namespace
