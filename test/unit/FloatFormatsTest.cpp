//===- FloatFormatsTest.cpp - rounding to low-precision formats vs APFloat ===//

#include "tgc/Support/FloatFormats.h"

#include "tgc/runtime/Storage.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace tgc;

namespace {

constexpr FloatFormat kNarrowFormats[] = {
    FloatFormat::BF16,    FloatFormat::F16,        FloatFormat::F8E4M3FN,
    FloatFormat::F8E5M2,  FloatFormat::F8E4M3FNUZ, FloatFormat::F8E5M2FNUZ,
    FloatFormat::F4E2M1FN};

const llvm::fltSemantics &getSemantics(FloatFormat format) {
  switch (format) {
  case FloatFormat::F32:
    return llvm::APFloat::IEEEsingle();
  case FloatFormat::F16:
    return llvm::APFloat::IEEEhalf();
  case FloatFormat::BF16:
    return llvm::APFloat::BFloat();
  case FloatFormat::F8E4M3FN:
    return llvm::APFloat::Float8E4M3FN();
  case FloatFormat::F8E5M2:
    return llvm::APFloat::Float8E5M2();
  case FloatFormat::F8E4M3FNUZ:
    return llvm::APFloat::Float8E4M3FNUZ();
  case FloatFormat::F8E5M2FNUZ:
    return llvm::APFloat::Float8E5M2FNUZ();
  case FloatFormat::F4E2M1FN:
    return llvm::APFloat::Float4E2M1FN();
  case FloatFormat::F8E8M0FNU: // not compared with APFloat: see E8M0Cases
    return llvm::APFloat::Float8E8M0FNU();
  }
  return llvm::APFloat::IEEEsingle();
}

const char *getName(FloatFormat format) {
  switch (format) {
  case FloatFormat::F32:
    return "f32";
  case FloatFormat::F16:
    return "f16";
  case FloatFormat::BF16:
    return "bf16";
  case FloatFormat::F8E4M3FN:
    return "f8E4M3FN";
  case FloatFormat::F8E5M2:
    return "f8E5M2";
  case FloatFormat::F8E4M3FNUZ:
    return "f8E4M3FNUZ";
  case FloatFormat::F8E5M2FNUZ:
    return "f8E5M2FNUZ";
  case FloatFormat::F4E2M1FN:
    return "f4E2M1FN";
  case FloatFormat::F8E8M0FNU:
    return "f8E8M0FNU";
  }
  return "?";
}

/// The reference: APFloat's conversion to the format and back to f32 (exact,
/// since every value of these formats is an f32). APFloat keeps an infinity
/// or NaN as such in f4E2M1FN, which has neither: there tgc saturates
/// infinities (ONNX's rule for the formats without them) and gives NaN the
/// zero of its sign.
float roundWithAPFloat(float value, FloatFormat format) {
  if (format == FloatFormat::F4E2M1FN && !std::isfinite(value))
    return std::copysign(std::isnan(value) ? 0.0f : 6.0f, value);
  llvm::APFloat x(value);
  bool losesInfo;
  x.convert(getSemantics(format), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  x.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return x.convertToFloat();
}

std::string describe(float value) {
  std::string result;
  llvm::raw_string_ostream os(result);
  os << llvm::format("%.9g (0x%08x)", value, llvm::bit_cast<uint32_t>(value));
  return result;
}

/// Same bits, or both NaN (NaN payloads and signs are not specified).
::testing::AssertionResult sameFloat(float actual, float expected) {
  if (std::isnan(actual) && std::isnan(expected))
    return ::testing::AssertionSuccess();
  if (llvm::bit_cast<uint32_t>(actual) == llvm::bit_cast<uint32_t>(expected))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << describe(actual) << ", expected " << describe(expected);
}

/// Checks the scalar and the array overload against APFloat for `inputs`.
void checkAgainstAPFloat(const std::vector<float> &inputs, FloatFormat format) {
  std::vector<float> rounded = inputs;
  roundToFormat(rounded.data(), rounded.size(), format);
  int failures = 0;
  for (size_t i = 0; i < inputs.size() && failures < 10; ++i) {
    float expected = roundWithAPFloat(inputs[i], format);
    auto scalar = sameFloat(roundToFormat(inputs[i], format), expected);
    auto array = sameFloat(rounded[i], expected);
    EXPECT_TRUE(scalar) << getName(format) << " scalar, input "
                        << describe(inputs[i]);
    EXPECT_TRUE(array) << getName(format) << " array, input "
                       << describe(inputs[i]);
    failures += !scalar || !array;
  }
}

/// Every f32 bit pattern in steps of a prime, so that all exponents, both
/// signs, NaNs and infinities are hit with varied mantissas.
std::vector<float> getStridedPatterns() {
  std::vector<float> values;
  for (uint64_t bits = 0; bits <= UINT32_MAX; bits += 997)
    values.push_back(llvm::bit_cast<float>(static_cast<uint32_t>(bits)));
  return values;
}

/// Every finite value of `format`, the f32 values around it, and the f32
/// values at and around each midpoint between neighbours (the ties),
/// including the midpoint above the largest finite value (the overflow
/// threshold), with both signs.
std::vector<float> getBoundaryValues(FloatFormat format) {
  const llvm::fltSemantics &semantics = getSemantics(format);
  unsigned width = llvm::APFloat::semanticsSizeInBits(semantics);
  std::vector<float> ascending; // Non-negative finite values of the format.
  for (uint64_t bits = 0; bits < (1ull << (width - 1)); ++bits) {
    llvm::APFloat x(semantics, llvm::APInt(width, bits));
    if (!x.isFinite())
      continue;
    bool losesInfo;
    x.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
              &losesInfo);
    ascending.push_back(x.convertToFloat());
  }
  std::vector<float> values;
  auto addAround = [&](float center) {
    float below = center, above = center;
    values.push_back(center);
    for (int step = 0; step < 2; ++step) {
      below = std::nextafter(below, 0.0f);
      above = std::nextafter(above, INFINITY);
      values.push_back(below);
      values.push_back(above);
    }
  };
  for (size_t i = 0; i < ascending.size(); ++i) {
    // Past the largest value, continue with the spacing of the top binade:
    // the midpoint above it is the overflow threshold. All of this is exact
    // in f32, since the formats have at most 10 mantissa bits.
    float spacing = i + 1 < ascending.size() ? ascending[i + 1] - ascending[i]
                                             : ascending[i] - ascending[i - 1];
    addAround(ascending[i]);
    addAround(ascending[i] + spacing / 2);
    if (i + 1 == ascending.size() && std::isfinite(ascending[i] + spacing))
      addAround(ascending[i] + spacing);
  }
  size_t count = values.size();
  for (size_t i = 0; i < count; ++i)
    values.push_back(-values[i]);
  return values;
}

TEST(FloatFormatsTest, StridedBitPatternsMatchAPFloat) {
  std::vector<float> inputs = getStridedPatterns();
  for (FloatFormat format : kNarrowFormats)
    checkAgainstAPFloat(inputs, format);
}

TEST(FloatFormatsTest, BoundaryValuesMatchAPFloat) {
  for (FloatFormat format : kNarrowFormats)
    checkAgainstAPFloat(getBoundaryValues(format), format);
}

TEST(FloatFormatsTest, SpecialValuesMatchAPFloat) {
  std::vector<float> inputs = {0.0f,    -0.0f,    INFINITY,     -INFINITY,
                               NAN,     -NAN,     FLT_MAX,      -FLT_MAX,
                               FLT_MIN, -FLT_MIN, FLT_TRUE_MIN, -FLT_TRUE_MIN};
  for (FloatFormat format : kNarrowFormats)
    checkAgainstAPFloat(inputs, format);
}

TEST(FloatFormatsTest, F32IsIdentity) {
  for (float value : {1.0f + 0x1p-23f, -3.0e38f, 0x1p-149f, -0.0f, INFINITY})
    EXPECT_TRUE(sameFloat(roundToFormat(value, FloatFormat::F32), value));
  float values[] = {1.0f + 0x1p-23f, NAN};
  roundToFormat(values, 2, FloatFormat::F32);
  EXPECT_EQ(values[0], 1.0f + 0x1p-23f);
  EXPECT_TRUE(std::isnan(values[1]));
}

TEST(FloatFormatsTest, MaxFinite) {
  EXPECT_EQ(getMaxFinite(FloatFormat::F32), FLT_MAX);
  EXPECT_EQ(getMaxFinite(FloatFormat::F16), 65504.0f);
  EXPECT_EQ(getMaxFinite(FloatFormat::BF16), 0x1.fep127f);
  EXPECT_EQ(getMaxFinite(FloatFormat::F8E4M3FN), 448.0f);
  EXPECT_EQ(getMaxFinite(FloatFormat::F8E5M2), 57344.0f);
  EXPECT_EQ(getMaxFinite(FloatFormat::F8E4M3FNUZ), 240.0f);
  EXPECT_EQ(getMaxFinite(FloatFormat::F8E5M2FNUZ), 57344.0f);
  EXPECT_EQ(getMaxFinite(FloatFormat::F4E2M1FN), 6.0f);
  for (FloatFormat format : kNarrowFormats) {
    llvm::APFloat largest = llvm::APFloat::getLargest(getSemantics(format));
    bool losesInfo;
    largest.convert(llvm::APFloat::IEEEsingle(),
                    llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    EXPECT_EQ(getMaxFinite(format), largest.convertToFloat())
        << getName(format);
    // The largest finite value rounds to itself.
    EXPECT_EQ(roundToFormat(getMaxFinite(format), format), getMaxFinite(format))
        << getName(format);
  }
}

/// Expects `input` to round to `expected` in `format`, in both overloads,
/// and APFloat to agree, so that the hand-written expectation is checked too.
void expectRounds(FloatFormat format, float input, float expected) {
  EXPECT_TRUE(sameFloat(roundToFormat(input, format), expected))
      << getName(format) << " input " << describe(input);
  float array[1] = {input};
  roundToFormat(array, 1, format);
  EXPECT_TRUE(sameFloat(array[0], expected))
      << getName(format) << " array, input " << describe(input);
  EXPECT_TRUE(sameFloat(roundWithAPFloat(input, format), expected))
      << "APFloat disagrees with the hand-written expectation: "
      << getName(format) << " input " << describe(input);
}

TEST(FloatFormatsTest, BF16Cases) {
  constexpr FloatFormat bf16 = FloatFormat::BF16;
  // Near 1 the spacing is 2^-7. 1 + 2^-8 is a tie between 1 (even mantissa)
  // and 1 + 2^-7 (odd): down to 1.
  expectRounds(bf16, 1.0f + 0x1p-8f, 1.0f);
  // Just below and just above that tie.
  expectRounds(bf16, 1.0f + 0x1p-8f - 0x1p-23f, 1.0f);
  expectRounds(bf16, 1.0f + 0x1p-8f + 0x1p-23f, 1.0f + 0x1p-7f);
  // 1 + 3 * 2^-8 is a tie between 1 + 2^-7 (odd) and 1 + 2^-6 (even): up.
  expectRounds(bf16, 1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-6f);
  // Rounding up carries into the exponent: 2 - 2^-9 is closer to 2.
  expectRounds(bf16, 2.0f - 0x1p-9f, 2.0f);
  // Overflow: FLT_MAX lies above the tie between the largest bf16
  // (0x1.fep127) and 2^128, so it goes to infinity. The tie itself rounds to
  // the even 2^128 and overflows too; just below it stays finite.
  expectRounds(bf16, FLT_MAX, INFINITY);
  expectRounds(bf16, -FLT_MAX, -INFINITY);
  expectRounds(bf16, 0x1.ffp127f, INFINITY);
  expectRounds(bf16, std::nextafter(0x1.ffp127f, 0.0f), 0x1.fep127f);
  // Subnormals: the smallest is 2^-133 (f32 subnormals are bf16 subnormals
  // with 16 more bits). Half of it is a tie with 0, which is even: to zero.
  expectRounds(bf16, 0x1p-133f, 0x1p-133f);
  expectRounds(bf16, 0x1p-134f, 0.0f);
  expectRounds(bf16, 0x1p-134f + 0x1p-149f, 0x1p-133f);
  expectRounds(bf16, -0x1p-134f, -0.0f);
  // 3 * 2^-134 is a tie between 2^-133 (odd) and 2^-132 (even): up.
  expectRounds(bf16, 3 * 0x1p-134f, 0x1p-132f);
  // The largest subnormal rounds up into the smallest normal, 2^-126.
  expectRounds(bf16, 0x1p-126f - 0x1p-149f, 0x1p-126f);
  // Sign, zero, infinity and NaN.
  expectRounds(bf16, -(1.0f + 0x1p-8f), -1.0f);
  expectRounds(bf16, -0.0f, -0.0f);
  expectRounds(bf16, -INFINITY, -INFINITY);
  EXPECT_TRUE(std::isnan(roundToFormat(NAN, bf16)));
}

TEST(FloatFormatsTest, F16Cases) {
  constexpr FloatFormat f16 = FloatFormat::F16;
  // Near 1 the spacing is 2^-10: ties at 1 + 2^-11 (to the even 1) and at
  // 1 + 3 * 2^-11 (to the even 1 + 2^-9).
  expectRounds(f16, 1.0f + 0x1p-11f, 1.0f);
  expectRounds(f16, 1.0f + 0x1p-11f + 0x1p-23f, 1.0f + 0x1p-10f);
  expectRounds(f16, 1.0f + 0x1p-11f - 0x1p-23f, 1.0f);
  expectRounds(f16, 1.0f + 3 * 0x1p-11f, 1.0f + 0x1p-9f);
  // Above 2048 the spacing is 2: 2049 is a tie to 2048, 2051 a tie to 2052.
  expectRounds(f16, 2049.0f, 2048.0f);
  expectRounds(f16, 2051.0f, 2052.0f);
  // Overflow is decided after rounding: 65504 is the largest, 65520 is the
  // tie between 65504 (odd) and 65536, so it overflows to infinity, while
  // 65519.99 rounds down to 65504.
  expectRounds(f16, 65504.0f, 65504.0f);
  expectRounds(f16, 65519.99f, 65504.0f);
  expectRounds(f16, 65520.0f, INFINITY);
  expectRounds(f16, -65520.0f, -INFINITY);
  expectRounds(f16, 1.0e6f, INFINITY);
  expectRounds(f16, INFINITY, INFINITY);
  // Subnormals: the smallest is 2^-24; 2^-25 is a tie with 0 and goes to
  // zero; anything above it goes to 2^-24. 3 * 2^-25 is a tie between
  // 1 * 2^-24 (odd) and 2 * 2^-24: up to 2^-23; 5 * 2^-25 is a tie between
  // 2 * 2^-24 (even) and 3 * 2^-24: down to 2^-23.
  expectRounds(f16, 0x1p-24f, 0x1p-24f);
  expectRounds(f16, 0x1p-25f, 0.0f);
  expectRounds(f16, std::nextafter(0x1p-25f, 1.0f), 0x1p-24f);
  expectRounds(f16, 3 * 0x1p-25f, 0x1p-23f);
  expectRounds(f16, 5 * 0x1p-25f, 0x1p-23f);
  expectRounds(f16, std::nextafter(5 * 0x1p-25f, 1.0f), 3 * 0x1p-24f);
  expectRounds(f16, -0x1p-26f, -0.0f);
  expectRounds(f16, 1.0e-10f, 0.0f);
  expectRounds(f16, FLT_TRUE_MIN, 0.0f);
  // Halfway between the largest subnormal (1023 * 2^-24, odd) and the
  // smallest normal 2^-14 (even): up to 2^-14.
  expectRounds(f16, 0x1p-14f - 0x1p-25f, 0x1p-14f);
  expectRounds(f16, -0.0f, -0.0f);
  EXPECT_TRUE(std::isnan(roundToFormat(-NAN, f16)));
}

TEST(FloatFormatsTest, F8E4M3FNCases) {
  constexpr FloatFormat e4m3 = FloatFormat::F8E4M3FN;
  // Near 1 the spacing is 2^-3: 1.0625 ties to 1, 1.1875 ties to 1.25.
  expectRounds(e4m3, 1.0625f, 1.0f);
  expectRounds(e4m3, std::nextafter(1.0625f, 2.0f), 1.125f);
  expectRounds(e4m3, 1.1875f, 1.25f);
  // The largest value is 448 (S.1111.110; S.1111.111 is NaN) and the
  // spacing there is 32. 464 is the tie between 448 (even) and 480, which
  // does not exist: it rounds to 448. Anything that would round above 448
  // has nowhere to go and is NaN, as is infinity.
  expectRounds(e4m3, 448.0f, 448.0f);
  expectRounds(e4m3, 464.0f, 448.0f);
  expectRounds(e4m3, -464.0f, -448.0f);
  expectRounds(e4m3, std::nextafter(464.0f, 0.0f), 448.0f);
  EXPECT_TRUE(std::isnan(roundToFormat(std::nextafter(464.0f, 1e9f), e4m3)));
  EXPECT_TRUE(std::isnan(roundToFormat(465.0f, e4m3)));
  EXPECT_TRUE(std::isnan(roundToFormat(-465.0f, e4m3)));
  EXPECT_TRUE(std::isnan(roundToFormat(480.0f, e4m3)));
  EXPECT_TRUE(std::isnan(roundToFormat(1.0e6f, e4m3)));
  EXPECT_TRUE(std::isnan(roundToFormat(FLT_MAX, e4m3)));
  EXPECT_TRUE(std::isnan(roundToFormat(INFINITY, e4m3)));
  EXPECT_TRUE(std::isnan(roundToFormat(-INFINITY, e4m3)));
  EXPECT_TRUE(std::isnan(roundToFormat(NAN, e4m3)));
  // Subnormals: the smallest is 2^-9; 2^-10 ties to zero, 3 * 2^-10 ties
  // to 2^-8, the smallest normal is 2^-6.
  expectRounds(e4m3, 0x1p-9f, 0x1p-9f);
  expectRounds(e4m3, 0x1p-10f, 0.0f);
  expectRounds(e4m3, -0x1p-10f, -0.0f);
  expectRounds(e4m3, std::nextafter(0x1p-10f, 1.0f), 0x1p-9f);
  expectRounds(e4m3, 3 * 0x1p-10f, 0x1p-8f);
  expectRounds(e4m3, 0x1p-6f - 0x1p-10f, 0x1p-6f);
  expectRounds(e4m3, -0.0f, -0.0f);
}

TEST(FloatFormatsTest, F8E5M2Cases) {
  constexpr FloatFormat e5m2 = FloatFormat::F8E5M2;
  // Near 1 the spacing is 2^-2: 1.125 ties to 1, 1.375 ties to 1.5.
  expectRounds(e5m2, 1.125f, 1.0f);
  expectRounds(e5m2, std::nextafter(1.125f, 2.0f), 1.25f);
  expectRounds(e5m2, 1.375f, 1.5f);
  // The largest value is 57344 = 1.75 * 2^15 (odd mantissa); the tie at
  // 61440 rounds to the even 2^16 and overflows to infinity.
  expectRounds(e5m2, 57344.0f, 57344.0f);
  expectRounds(e5m2, std::nextafter(61440.0f, 0.0f), 57344.0f);
  expectRounds(e5m2, 61440.0f, INFINITY);
  expectRounds(e5m2, -61440.0f, -INFINITY);
  expectRounds(e5m2, INFINITY, INFINITY);
  // Subnormals: the smallest is 2^-16; 2^-17 ties to zero, 3 * 2^-17 ties
  // to 2^-15.
  expectRounds(e5m2, 0x1p-16f, 0x1p-16f);
  expectRounds(e5m2, 0x1p-17f, 0.0f);
  expectRounds(e5m2, -0x1p-17f, -0.0f);
  expectRounds(e5m2, std::nextafter(0x1p-17f, 1.0f), 0x1p-16f);
  expectRounds(e5m2, 3 * 0x1p-17f, 0x1p-15f);
  expectRounds(e5m2, -0.0f, -0.0f);
  EXPECT_TRUE(std::isnan(roundToFormat(NAN, e5m2)));
}

TEST(FloatFormatsTest, F8FNUZCases) {
  // E4M3FNUZ: bias 8, so the smallest normal is 2^-7 and the largest value
  // 240 = 1.875 * 2^7 (S.1111.111 is a number; NaN is the -0 pattern).
  constexpr FloatFormat e4m3 = FloatFormat::F8E4M3FNUZ;
  expectRounds(e4m3, 240.0f, 240.0f);
  // 248 ties between 240 (odd mantissa) and 256 (even): up, and overflows
  // to NaN, the only special value.
  expectRounds(e4m3, std::nextafter(248.0f, 0.0f), 240.0f);
  EXPECT_TRUE(std::isnan(roundToFormat(248.0f, e4m3)));
  EXPECT_TRUE(std::isnan(roundToFormat(INFINITY, e4m3)));
  EXPECT_TRUE(std::isnan(roundToFormat(-INFINITY, e4m3)));
  // Subnormals: the smallest is 2^-10; half of it ties to zero. There is no
  // -0: a negative value that rounds to zero, and -0 itself, give +0.
  expectRounds(e4m3, 0x1p-10f, 0x1p-10f);
  expectRounds(e4m3, 0x1p-11f, 0.0f);
  expectRounds(e4m3, -0x1p-11f, 0.0f);
  expectRounds(e4m3, -0.0f, 0.0f);
  expectRounds(e4m3, -0x1p-10f, -0x1p-10f);
  // E5M2FNUZ: bias 16, the smallest subnormal 2^-17, the largest 57344.
  constexpr FloatFormat e5m2 = FloatFormat::F8E5M2FNUZ;
  expectRounds(e5m2, 0x1p-17f, 0x1p-17f);
  expectRounds(e5m2, -0x1p-18f, 0.0f);
  expectRounds(e5m2, 57344.0f, 57344.0f);
  EXPECT_TRUE(std::isnan(roundToFormat(61440.0f, e5m2)));
  EXPECT_TRUE(std::isnan(roundToFormat(NAN, e5m2)));
}

TEST(FloatFormatsTest, F4E2M1FNCases) {
  // Values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives; no infinity and
  // no NaN: beyond 6 saturates (APFloat's rounding), infinities too, and
  // NaN becomes zero (ONNX leaves it undefined).
  constexpr FloatFormat e2m1 = FloatFormat::F4E2M1FN;
  expectRounds(e2m1, 0.25f, 0.0f); // a tie: to the even 0
  expectRounds(e2m1, std::nextafter(0.25f, 1.0f), 0.5f);
  expectRounds(e2m1, 0.75f, 1.0f); // a tie: to the even 1
  expectRounds(e2m1, 2.5f, 2.0f);
  expectRounds(e2m1, 3.5f, 4.0f);
  expectRounds(e2m1, 5.0f, 4.0f);
  expectRounds(e2m1, 7.0f, 6.0f);
  expectRounds(e2m1, -1.0e6f, -6.0f);
  expectRounds(e2m1, INFINITY, 6.0f);
  expectRounds(e2m1, -INFINITY, -6.0f);
  expectRounds(e2m1, -0.25f, -0.0f);
  EXPECT_EQ(roundToFormat(NAN, e2m1), 0.0f);
}

TEST(FloatFormatsTest, E8M0Cases) {
  // Powers of two, each its own value; in between, the exponent rounds up
  // from a mantissa of one half (ONNX's "nearest": 1.5 is 2, 3 is 4,
  // 1.4999999 is 1). APFloat's conversion keeps signs and infinities the
  // format lacks, so these are checked by hand.
  constexpr FloatFormat e8m0 = FloatFormat::F8E8M0FNU;
  auto expectE8M0 = [&](float input, float expected) {
    EXPECT_TRUE(sameFloat(roundToFormat(input, e8m0), expected))
        << describe(input);
    float array[1] = {input};
    roundToFormat(array, 1, e8m0);
    EXPECT_TRUE(sameFloat(array[0], expected)) << describe(input);
  };
  expectE8M0(1.0f, 1.0f);
  expectE8M0(0x1p-100f, 0x1p-100f);
  expectE8M0(1.5f, 2.0f);
  expectE8M0(std::nextafter(1.5f, 0.0f), 1.0f);
  expectE8M0(3.0f, 4.0f);
  expectE8M0(0x1p127f, 0x1p127f);
  // Zero is the smallest value, 2^-127 (an f32 subnormal); f32
  // subnormals round to it, or up to 2^-126 above it.
  expectE8M0(0.0f, 0x1p-127f);
  expectE8M0(-0.0f, 0x1p-127f);
  expectE8M0(0x1p-130f, 0x1p-127f);
  expectE8M0(0x1p-127f, 0x1p-127f);
  expectE8M0(std::nextafter(0x1p-127f, 1.0f), 0x1p-126f);
  // No sign, no infinity: negative values, infinities and values rounding
  // beyond 2^127 are NaN.
  EXPECT_TRUE(std::isnan(roundToFormat(-2.0f, e8m0)));
  EXPECT_TRUE(std::isnan(roundToFormat(INFINITY, e8m0)));
  EXPECT_TRUE(std::isnan(roundToFormat(0x1.8p127f, e8m0)));
  EXPECT_TRUE(std::isnan(roundToFormat(NAN, e8m0)));
  EXPECT_EQ(getMaxFinite(e8m0), 0x1p127f);
}

/// Every bit pattern of storage `S` (the generated kernels' and the
/// runtime's, tgc/runtime/Storage.h) against APFloat's value of it in
/// `semantics`, `bits` wide: `ld` decodes it, and `st` gives the pattern
/// back (a NaN: a pattern that decodes to NaN).
template <typename S>
void checkStorage(const llvm::fltSemantics &semantics, unsigned bits,
                  const char *name, uint32_t end = 0) {
  for (uint32_t pattern = 0; pattern < (end ? end : 1u << bits); ++pattern) {
    llvm::APFloat value(semantics, llvm::APInt(bits, pattern));
    bool losesInfo;
    value.convert(llvm::APFloat::IEEEsingle(),
                  llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    float decoded = rt::ld(S{static_cast<decltype(S::bits)>(pattern)});
    EXPECT_TRUE(sameFloat(decoded, value.convertToFloat()))
        << name << " pattern " << pattern;
    uint32_t stored = rt::st<S>(decoded).bits;
    if (std::isnan(decoded))
      EXPECT_TRUE(std::isnan(rt::ld(S{static_cast<decltype(S::bits)>(stored)})))
          << name << " NaN pattern " << pattern;
    else
      EXPECT_EQ(stored, pattern) << name << " " << describe(decoded);
  }
}

TEST(FloatFormatsTest, StoragePatternsMatchAPFloat) {
  checkStorage<rt::f16>(llvm::APFloat::IEEEhalf(), 16, "f16");
  checkStorage<rt::bf16>(llvm::APFloat::BFloat(), 16, "bf16");
  checkStorage<rt::f8e4m3fn>(llvm::APFloat::Float8E4M3FN(), 8, "f8E4M3FN");
  checkStorage<rt::f8e5m2>(llvm::APFloat::Float8E5M2(), 8, "f8E5M2");
  checkStorage<rt::f8e4m3fnuz>(llvm::APFloat::Float8E4M3FNUZ(), 8,
                               "f8E4M3FNUZ");
  checkStorage<rt::f8e5m2fnuz>(llvm::APFloat::Float8E5M2FNUZ(), 8,
                               "f8E5M2FNUZ");
  checkStorage<rt::f4e2m1fn>(llvm::APFloat::Float4E2M1FN(), 4, "f4E2M1FN");
  // APFloat converts E8M0's NaN (0xff) to an infinity.
  checkStorage<rt::f8e8m0fnu>(llvm::APFloat::Float8E8M0FNU(), 8, "f8E8M0FNU",
                              0xff);
  EXPECT_TRUE(std::isnan(rt::ld(rt::f8e8m0fnu{0xff})));
  // Storing rounds as roundToFormat does: no -0 in the FNUZ formats, f4's
  // saturation, E8M0's exponent rounding.
  EXPECT_EQ(rt::st<rt::f8e4m3fnuz>(-0.0f).bits, 0u);
  EXPECT_EQ(rt::st<rt::f8e4m3fnuz>(-1e-9f).bits, 0u);
  EXPECT_EQ(rt::st<rt::f8e5m2fnuz>(NAN).bits, 0x80u);
  EXPECT_TRUE(std::isnan(rt::ld(rt::st<rt::f8e4m3fnuz>(300.0f))));
  EXPECT_EQ(rt::ld(rt::st<rt::f4e2m1fn>(100.0f)), 6.0f);
  EXPECT_EQ(rt::ld(rt::st<rt::f4e2m1fn>(-2.5f)), -2.0f);
  EXPECT_EQ(rt::ld(rt::st<rt::f8e8m0fnu>(3.0f)), 4.0f);
  EXPECT_EQ(rt::st<rt::f8e8m0fnu>(-1.0f).bits, 0xffu);
}

TEST(FloatFormatsTest, NarrowIntegersWrap) {
  // Wrapped to their width, the byte holding the value itself.
  EXPECT_EQ(rt::ld(rt::st<rt::i4>(int64_t(7))), 7);
  EXPECT_EQ(rt::ld(rt::st<rt::i4>(int64_t(8))), -8);
  EXPECT_EQ(rt::ld(rt::st<rt::i4>(int64_t(-9))), 7);
  EXPECT_EQ(rt::st<rt::i4>(int64_t(-1)).value, -1);
  EXPECT_EQ(rt::ld(rt::st<rt::u4>(int64_t(17))), 1);
  EXPECT_EQ(rt::ld(rt::st<rt::u4>(int64_t(-1))), 15);
  EXPECT_EQ(rt::ld(rt::st<rt::i2>(int64_t(2))), -2);
  EXPECT_EQ(rt::ld(rt::st<rt::u2>(int64_t(6))), 2);
}

TEST(FloatFormatsTest, ArrayOverloadHandlesAnyLength) {
  // Lengths around typical vector widths, to catch remainder-loop bugs.
  for (size_t length : {0u, 1u, 3u, 4u, 7u, 8u, 15u, 16u, 17u, 33u}) {
    std::vector<float> values(length);
    for (size_t i = 0; i < length; ++i)
      values[i] = 1.0f + 0x1p-8f + static_cast<float>(i) * 0.37f;
    std::vector<float> expected = values;
    for (float &value : expected)
      value = roundToFormat(value, FloatFormat::F16);
    roundToFormat(values.data(), values.size(), FloatFormat::F16);
    EXPECT_EQ(values, expected) << length;
  }
}

} // namespace
