//===- FloatFormats.cpp - rounding to low-precision float formats ---------===//
//
// Rounding works on the f32 bit pattern so that the array loop has no calls
// and no data-dependent branches (only selects), which lets the compiler
// vectorize it: this runs on every op result of the interpreter.
//
//===----------------------------------------------------------------------===//

#include "tgc/Support/FloatFormats.h"

#include "tgc/runtime/FloatFormats.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/ErrorHandling.h"

#include <cfloat>
#include <cmath>

using namespace tgc;

namespace {

using rt::FormatTraits;
constexpr const FormatTraits &kBF16 = rt::kBF16Traits;
constexpr const FormatTraits &kF16 = rt::kF16Traits;
constexpr const FormatTraits &kE4M3FN = rt::kE4M3FNTraits;
constexpr const FormatTraits &kE5M2 = rt::kE5M2Traits;
constexpr const FormatTraits &kE4M3FNUZ = rt::kE4M3FNUZTraits;
constexpr const FormatTraits &kE5M2FNUZ = rt::kE5M2FNUZTraits;
constexpr const FormatTraits &kE2M1FN = rt::kE2M1FNTraits;

template <const FormatTraits &Traits>
void roundArrayWithTraits(float *values, size_t count) {
  for (size_t i = 0; i < count; ++i)
    values[i] = rt::roundWithTraits<Traits>(values[i]);
}

} // namespace

float tgc::roundToFormat(float value, FloatFormat format) {
  switch (format) {
  case FloatFormat::F32:
    return value;
  case FloatFormat::F16:
    return rt::roundWithTraits<kF16>(value);
  case FloatFormat::BF16:
    return rt::roundWithTraits<kBF16>(value);
  case FloatFormat::F8E4M3FN:
    return rt::roundWithTraits<kE4M3FN>(value);
  case FloatFormat::F8E5M2:
    return rt::roundWithTraits<kE5M2>(value);
  case FloatFormat::F8E4M3FNUZ:
    return rt::roundWithTraits<kE4M3FNUZ>(value);
  case FloatFormat::F8E5M2FNUZ:
    return rt::roundWithTraits<kE5M2FNUZ>(value);
  case FloatFormat::F4E2M1FN:
    return rt::roundWithTraits<kE2M1FN>(value);
  case FloatFormat::F8E8M0FNU:
    return rt::roundToE8M0(value);
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
  case FloatFormat::F8E4M3FNUZ:
    return roundArrayWithTraits<kE4M3FNUZ>(values, count);
  case FloatFormat::F8E5M2FNUZ:
    return roundArrayWithTraits<kE5M2FNUZ>(values, count);
  case FloatFormat::F4E2M1FN:
    return roundArrayWithTraits<kE2M1FN>(values, count);
  case FloatFormat::F8E8M0FNU:
    for (size_t i = 0; i < count; ++i)
      values[i] = rt::roundToE8M0(values[i]);
    return;
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
  case FloatFormat::F8E4M3FNUZ:
    return llvm::bit_cast<float>(kE4M3FNUZ.maxFiniteBits);
  case FloatFormat::F8E5M2FNUZ:
    return llvm::bit_cast<float>(kE5M2FNUZ.maxFiniteBits);
  case FloatFormat::F4E2M1FN:
    return llvm::bit_cast<float>(kE2M1FN.maxFiniteBits);
  case FloatFormat::F8E8M0FNU:
    return 0x1p127f;
  }
  llvm_unreachable("unknown float format");
}
