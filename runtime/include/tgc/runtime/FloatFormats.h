//===- FloatFormats.h - rounding to low-precision float formats -*- C++ -*-===//
//
// bf16, f16, the float8 formats (f8E4M3FN, f8E5M2 and their FNUZ variants),
// f4E2M1FN and f8E8M0FNU as f32 values rounded to the nearest value of the
// format (ties to even), with the format's overflow rule (to infinity; to NaN
// for the formats without infinities; to the largest value for f4E2M1FN, which
// has neither), its subnormals and its zeros (no -0 in the FNUZ formats).
// Header only and host/device, so that the interpreter (through
// tgc/Support/FloatFormats.h), the host target and CUDA kernels round the
// same way, bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_FLOATFORMATS_H
#define TGC_RUNTIME_FLOATFORMATS_H

#include "tgc/runtime/HostDevice.h"

namespace tgc::rt {

/// What rounding needs to know about a format, as f32 quantities.
struct FormatTraits {
  /// Explicit mantissa bits of the format (f32 has 23).
  unsigned mantissaBits;
  /// Unbiased exponent of the smallest normal value.
  int minExponent;
  /// f32 bit pattern of the largest finite value.
  uint32_t maxFiniteBits;
  /// Where a value beyond the largest finite one goes: to infinity, to NaN
  /// (f8E4M3FN and the FNUZ formats, which have no infinity), or to the
  /// largest finite value (f4E2M1FN, which has neither infinity nor NaN).
  enum Overflow { ToInfinity, ToNaN, ToLargest } overflow;
  /// Whether the format has NaN; NaN becomes zero in one that has not
  /// (f4E2M1FN: ONNX leaves the result undefined, ml_dtypes gives a zero).
  bool hasNaN;
  /// Whether the format has -0 (the FNUZ formats spend that pattern on
  /// NaN: a result that rounds to zero is +0).
  bool hasNegativeZero;
};

// The formats: mantissa bits, smallest normal exponent, largest value,
// overflow, NaN, -0.
// clang-format off
constexpr FormatTraits kBF16Traits =     {7, -126, 0x7f7f0000u, /* 3.3895e38 */
                                          FormatTraits::ToInfinity, true, true};
constexpr FormatTraits kF16Traits =      {10, -14, 0x477fe000u, /* 65504 */
                                          FormatTraits::ToInfinity, true, true};
constexpr FormatTraits kE4M3FNTraits =   {3, -6, 0x43e00000u, /* 448 */
                                          FormatTraits::ToNaN, true, true};
constexpr FormatTraits kE5M2Traits =     {2, -14, 0x47600000u, /* 57344 */
                                          FormatTraits::ToInfinity, true, true};
constexpr FormatTraits kE4M3FNUZTraits = {3, -7, 0x43700000u, /* 240 */
                                          FormatTraits::ToNaN, true, false};
constexpr FormatTraits kE5M2FNUZTraits = {2, -15, 0x47600000u, /* 57344 */
                                          FormatTraits::ToNaN, true, false};
constexpr FormatTraits kE2M1FNTraits =   {1, 0, 0x40c00000u, /* 6 */
                                          FormatTraits::ToLargest, false, true};
// clang-format on

namespace detail {
constexpr uint32_t kSignBit = 0x80000000u;
constexpr uint32_t kInfinityBits = 0x7f800000u;
constexpr uint32_t kQuietNaNBits = 0x7fc00000u;

/// 2^exponent as a float, for the small range of exponents used here.
TGC_HD constexpr float powerOfTwo(int exponent) {
  float result = 1.0f;
  for (; exponent > 0; --exponent)
    result *= 2.0f;
  for (; exponent < 0; ++exponent)
    result *= 0.5f;
  return result;
}
} // namespace detail

/// `value` rounded to the format of `Traits` (round to nearest, ties to
/// even); NaN stays NaN (a quiet one).
template <const FormatTraits &Traits>
TGC_HD inline float roundWithTraits(float value) {
  using namespace detail;
  static_assert(Traits.mantissaBits >= 1 && Traits.mantissaBits < 23, "");
  constexpr unsigned kDroppedBits = 23 - Traits.mantissaBits;
  constexpr uint32_t kDroppedMask = (1u << kDroppedBits) - 1;
  constexpr uint32_t kHalfMinusOne = (1u << (kDroppedBits - 1)) - 1;

  uint32_t bits = bitCast<uint32_t>(value);
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
    constexpr uint32_t kMinNormalBits =
        static_cast<uint32_t>(Traits.minExponent + 127) << 23;
    float magnitudeValue = bitCast<float>(magnitude);
    float subnormal = (magnitudeValue + kShifter) - kShifter;
    uint32_t subnormalBits = bitCast<uint32_t>(subnormal);
    // A mask rather than `?:`: GCC sinks the f32 addition into a branch of
    // the conditional and then, as the addition might trap, cannot turn the
    // branch back into a vector select.
    uint32_t isSubnormal = -static_cast<uint32_t>(magnitude < kMinNormalBits);
    rounded = (subnormalBits & isSubnormal) | (rounded & ~isSubnormal);
  }

  // Overflow is decided after rounding, as IEEE 754 says: f16 65519 rounds
  // down to 65504, 65520 is a tie that rounds up to 65536, which overflows.
  constexpr uint32_t kOverflowBits =
      Traits.overflow == FormatTraits::ToInfinity ? kInfinityBits
      : Traits.overflow == FormatTraits::ToNaN    ? kQuietNaNBits
                                                  : Traits.maxFiniteBits;
  rounded = rounded > Traits.maxFiniteBits ? kOverflowBits : rounded;
  constexpr uint32_t kNaNBits = Traits.hasNaN ? kQuietNaNBits : 0u;
  rounded = magnitude > kInfinityBits ? kNaNBits : rounded;
  if constexpr (!Traits.hasNegativeZero)
    sign = rounded == 0 ? 0u : sign;
  return bitCast<float>(rounded | sign);
}

TGC_HD inline float roundToBF16(float value) {
  return roundWithTraits<kBF16Traits>(value);
}
TGC_HD inline float roundToF16(float value) {
  return roundWithTraits<kF16Traits>(value);
}
TGC_HD inline float roundToF8E4M3FN(float value) {
  return roundWithTraits<kE4M3FNTraits>(value);
}
TGC_HD inline float roundToF8E5M2(float value) {
  return roundWithTraits<kE5M2Traits>(value);
}

/// `value` rounded to f8E8M0FNU, the MX scales (powers of two 2^-127 to
/// 2^127, and NaN): the f32 exponent, one more when the mantissa is at
/// least one half (for an f32 subnormal, more than one half), as ONNX's
/// "nearest" mode rounds; zero becomes 2^-127, and a negative value, an
/// infinity, NaN or a value rounding beyond 2^127 becomes NaN.
TGC_HD inline float roundToE8M0(float value) {
  using namespace detail;
  uint32_t bits = bitCast<uint32_t>(value);
  uint32_t exponent = (bits >> 23) & 0xff, mantissa = bits & 0x7fffff;
  bool negative = (bits >> 31) && (bits & 0x7fffffff);
  if (exponent == 0xff || negative)
    return bitCast<float>(kQuietNaNBits);
  bool half = mantissa & 0x400000, beyondHalf = mantissa & 0x3fffff;
  exponent += half && (beyondHalf || exponent > 0);
  if (exponent == 0xff)
    return bitCast<float>(kQuietNaNBits);
  // 2^-127 is an f32 subnormal.
  return bitCast<float>(exponent ? exponent << 23 : 0x400000u);
}

} // namespace tgc::rt

#endif // TGC_RUNTIME_FLOATFORMATS_H
