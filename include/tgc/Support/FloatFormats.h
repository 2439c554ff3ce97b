//===- FloatFormats.h - rounding to low-precision float formats -*- C++ -*-===//
//
// Emulation of bf16, f16, the float8 formats (f8E4M3FN, f8E5M2,
// f8E4M3FNUZ, f8E5M2FNUZ) and f4E2M1FN on the CPU: a value computed in f32 is
// rounded to the nearest value of the format (ties to even), with the
// format's overflow rule (to infinity, to NaN where it has no infinity, to
// the largest value for f4E2M1FN, which has no NaN either), its subnormals
// and its zeros. Every value of these formats is exactly representable in
// f32, so rounded values are stored as floats.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_SUPPORT_FLOATFORMATS_H
#define TGC_SUPPORT_FLOATFORMATS_H

#include <cstddef>
#include <cstdint>

namespace tgc {

enum class FloatFormat {
  F32,
  F16,
  BF16,
  F8E4M3FN,
  F8E5M2,
  F8E4M3FNUZ,
  F8E5M2FNUZ,
  F4E2M1FN,
  /// Powers of two 2^-127 to 2^127 and NaN (OCP MX scales): no sign, no
  /// zero, no mantissa; see roundToFormat.
  F8E8M0FNU
};

/// Rounds `value` to the nearest value of `format` (round to nearest, ties to
/// even). F32 returns `value` unchanged. NaN stays NaN. F8E8M0FNU keeps
/// the f32 exponent, one more when the mantissa is at least one half (for
/// an f32 subnormal, more than one half), as ONNX's "nearest" mode rounds;
/// zero becomes 2^-127, the smallest value, and a negative value, an
/// infinity or a value rounding beyond 2^127 becomes NaN.
float roundToFormat(float value, FloatFormat format);

/// Rounds `count` values in place.
void roundToFormat(float *values, size_t count, FloatFormat format);

/// The largest finite value of `format`.
float getMaxFinite(FloatFormat format);

} // namespace tgc

#endif // TGC_SUPPORT_FLOATFORMATS_H
