//===- FloatFormats.cpp - rounding to low-precision float formats ---------===//
//
// Rounding works on the f32 bit pattern so that the array loop has no calls
// and no data-dependent branches (only selects), which lets the compiler
// vectorize it: this runs on every op result of the interpreter.
//
//===----------------------------------------------------------------------===//

#include "tgc/Support/FloatFormats.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/ErrorHandling.h"

#include <cfloat>

using namespace tgc;

namespace {

/// What rounding needs to know about a format, as f32 quantities.
struct FormatTraits {
  /// Explicit mantissa bits of the format (f32 has 23).
  unsigned mantissaBits;
  /// Unbiased exponent of the smallest normal value.
  int minExponent;
  /// f32 bit pattern of the largest finite value.
  uint32_t maxFiniteBits;
  /// Whether overflow goes to infinity; otherwise it goes to NaN (f8E4M3FN,
  /// whose all-ones pattern is NaN and which has no infinity).
  bool hasInfinity;
};

constexpr FormatTraits kBF16 = {7, -126, 0x7f7f0000u, true};  // 3.3895e38
constexpr FormatTraits kF16 = {10, -14, 0x477fe000u, true};   // 65504
constexpr FormatTraits kE4M3FN = {3, -6, 0x43e00000u, false}; // 448
constexpr FormatTraits kE5M2 = {2, -14, 0x47600000u, true};   // 57344

constexpr uint32_t kSignBit = 0x80000000u;
constexpr uint32_t kInfinityBits = 0x7f800000u;
constexpr uint32_t kQuietNaNBits = 0x7fc00000u;

/// The f32 bit pattern of the smallest normal value of `traits`.
constexpr uint32_t minNormalBits(const FormatTraits &traits) {
  return static_cast<uint32_t>(traits.minExponent + 127) << 23;
}

/// 2^exponent as a float, for the small range of exponents used here.
constexpr float powerOfTwo(int exponent) {
  float result = 1.0f;
  for (; exponent > 0; --exponent)
    result *= 2.0f;
  for (; exponent < 0; ++exponent)
    result *= 0.5f;
  return result;
}

template <const FormatTraits &Traits>
inline float roundWithTraits(float value) {
  static_assert(Traits.mantissaBits >= 1 && Traits.mantissaBits < 23, "");
  constexpr unsigned kDroppedBits = 23 - Traits.mantissaBits;
  constexpr uint32_t kDroppedMask = (1u << kDroppedBits) - 1;
  constexpr uint32_t kHalfMinusOne = (1u << (kDroppedBits - 1)) - 1;

  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  uint32_t sign = bits & kSignBit;
  uint32_t magnitude = bits ^ sign;

  // Normal range: round the f32 significand to the format's width with ties
  // to even. Adding just under half an ulp, plus one more when the kept lsb is
  // odd, carries into the exponent when rounding up crosses a power of two.
  // Because f32 subnormal patterns are linear in their value, this is also
  // exact for bf16 subnormals (bf16 and f32 share their exponent range).
  uint32_t rounded =
      (magnitude + kHalfMinusOne + ((magnitude >> kDroppedBits) & 1)) &
      ~kDroppedMask;

  if constexpr (Traits.minExponent > -126) {
    // Below the format's smallest normal the spacing is fixed at
    // 2^(minExponent - mantissaBits). Adding `kShifter` (that spacing times
    // 2^23) puts the value where f32's own spacing is exactly that, so the
    // f32 addition rounds it to nearest even for us; the subtraction is
    // exact. This needs the default rounding mode and no -ffast-math. Under
    // flush-to-zero the result is still right: inputs that are f32
    // subnormals are far below half the format's smallest subnormal.
    constexpr float kShifter = powerOfTwo(
        Traits.minExponent - static_cast<int>(Traits.mantissaBits) + 23);
    float magnitudeValue = llvm::bit_cast<float>(magnitude);
    float subnormal = (magnitudeValue + kShifter) - kShifter;
    uint32_t subnormalBits = llvm::bit_cast<uint32_t>(subnormal);
    // A mask rather than `?:`: GCC sinks the f32 addition into a branch of
    // the conditional and then, as the addition might trap, cannot turn the
    // branch back into a vector select.
    uint32_t isSubnormal =
        -static_cast<uint32_t>(magnitude < minNormalBits(Traits));
    rounded = (subnormalBits & isSubnormal) | (rounded & ~isSubnormal);
  }

  // Overflow is decided after rounding, as IEEE 754 says: f16 65519 rounds
  // down to 65504, 65520 is a tie that rounds up to 65536, which overflows.
  constexpr uint32_t kOverflowBits =
      Traits.hasInfinity ? kInfinityBits : kQuietNaNBits;
  rounded = rounded > Traits.maxFiniteBits ? kOverflowBits : rounded;
  // NaN stays NaN (a quiet one); infinity was handled as an overflow.
  rounded = magnitude > kInfinityBits ? kQuietNaNBits : rounded;
  return llvm::bit_cast<float>(rounded | sign);
}

template <const FormatTraits &Traits>
void roundArrayWithTraits(float *values, size_t count) {
  for (size_t i = 0; i < count; ++i)
    values[i] = roundWithTraits<Traits>(values[i]);
}

} // namespace

float tgc::roundToFormat(float value, FloatFormat format) {
  switch (format) {
  case FloatFormat::F32:
    return value;
  case FloatFormat::F16:
    return roundWithTraits<kF16>(value);
  case FloatFormat::BF16:
    return roundWithTraits<kBF16>(value);
  case FloatFormat::F8E4M3FN:
    return roundWithTraits<kE4M3FN>(value);
  case FloatFormat::F8E5M2:
    return roundWithTraits<kE5M2>(value);
  }
  llvm_unreachable("unknown float format");
}

void tgc::roundToFormat(float *values, size_t count, FloatFormat format) {
  // One loop per format, so that each has compile-time constants and no
  // switch inside.
  switch (format) {
  case FloatFormat::F32:
    return;
  case FloatFormat::F16:
    return roundArrayWithTraits<kF16>(values, count);
  case FloatFormat::BF16:
    return roundArrayWithTraits<kBF16>(values, count);
  case FloatFormat::F8E4M3FN:
    return roundArrayWithTraits<kE4M3FN>(values, count);
  case FloatFormat::F8E5M2:
    return roundArrayWithTraits<kE5M2>(values, count);
  }
  llvm_unreachable("unknown float format");
}

float tgc::getMaxFinite(FloatFormat format) {
  switch (format) {
  case FloatFormat::F32:
    return FLT_MAX;
  case FloatFormat::F16:
    return llvm::bit_cast<float>(kF16.maxFiniteBits);
  case FloatFormat::BF16:
    return llvm::bit_cast<float>(kBF16.maxFiniteBits);
  case FloatFormat::F8E4M3FN:
    return llvm::bit_cast<float>(kE4M3FN.maxFiniteBits);
  case FloatFormat::F8E5M2:
    return llvm::bit_cast<float>(kE5M2.maxFiniteBits);
  }
  llvm_unreachable("unknown float format");
}
