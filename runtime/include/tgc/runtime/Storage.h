//===- Storage.h - element storage of arena buffers -------------*- C++ -*-===//
//
// How each tg element type is stored in the arena (bf16, f16, the fp8
// formats and f4E2M1FN as their bit patterns, f4E2M1FN one a byte; i1 as
// one byte; the integers in their C types, ui8 as the struct u8, the ones
// narrower than a byte one a byte) and the conversions every
// kernel uses: `ld` widens a stored element to its compute type (float for
// the float formats, double for f64, int64_t for integers) and `st<S>`
// rounds a computed value to storage S, round to nearest even, as the
// interpreter rounds every op result.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_STORAGE_H
#define TGC_RUNTIME_STORAGE_H

#include "tgc/runtime/FloatFormats.h"

#include <type_traits>

namespace tgc::rt {

struct bf16 {
  uint16_t bits;
};
struct f16 {
  uint16_t bits;
};
struct f8e4m3fn {
  uint8_t bits;
};
struct f8e5m2 {
  uint8_t bits;
};
struct f8e4m3fnuz {
  uint8_t bits;
};
struct f8e5m2fnuz {
  uint8_t bits;
};
/// f4E2M1FN: one element a byte, in its low four bits.
struct f4e2m1fn {
  uint8_t bits;
};
/// f8E8M0FNU: 2^(bits - 127); 0xff is NaN.
struct f8e8m0fnu {
  uint8_t bits;
};
/// i1: one byte, 0 or 1.
using i1 = uint8_t;
/// ui8: a byte of its own type (uint8_t is i1's storage).
struct u8 {
  uint8_t bits;
};
/// The integers narrower than a byte (i4, ui4, i2, ui2): one element a
/// byte, holding the value itself (sign-extended for the signed ones, so
/// that the byte is the value as an int8_t or uint8_t).
template <int Bits, bool Signed> struct narrow {
  std::conditional_t<Signed, int8_t, uint8_t> value;
};
using i4 = narrow<4, true>;
using u4 = narrow<4, false>;
using i2 = narrow<2, true>;
using u2 = narrow<2, false>;

namespace detail {
/// Where a small float format keeps its special values.
enum class Specials {
  /// The all-ones exponent holds the infinities and NaNs (f16, f8E5M2).
  IEEE,
  /// Only S.1111.111 is NaN, there is no infinity (f8E4M3FN).
  AllOnesNaN,
  /// The pattern of -0 (1000 0000) is the only NaN, no infinity, no -0
  /// (f8E4M3FNUZ, f8E5M2FNUZ).
  NegativeZeroNaN,
  /// None: every pattern is a finite value (f4E2M1FN).
  None
};

/// The f32 value of a small float format's bit pattern: `ExpBits` exponent
/// bits with bias `Bias`, `MantBits` mantissa bits, specials as `S` says.
template <int ExpBits, int MantBits, int Bias, Specials S>
TGC_HD inline float decodeSmall(uint32_t bits) {
  constexpr uint32_t kExpMask = (1u << ExpBits) - 1;
  constexpr uint32_t kMantMask = (1u << MantBits) - 1;
  constexpr uint32_t kSignShift = ExpBits + MantBits;
  uint32_t sign = (bits >> kSignShift) & 1;
  uint32_t exponent = (bits >> MantBits) & kExpMask;
  uint32_t mantissa = bits & kMantMask;
  uint32_t out;
  if (S == Specials::IEEE && exponent == kExpMask) {
    out = mantissa ? 0x7fc00000u : 0x7f800000u;
  } else if (S == Specials::AllOnesNaN && exponent == kExpMask &&
             mantissa == kMantMask) {
    out = 0x7fc00000u;
  } else if (S == Specials::NegativeZeroNaN && sign && !exponent && !mantissa) {
    return bitCast<float>(0x7fc00000u);
  } else if (exponent == 0) {
    // Subnormal (or zero): mantissa * 2^(1 - bias - MantBits), exact.
    float value = static_cast<float>(mantissa);
    for (int i = 0; i < Bias - 1 + MantBits; ++i)
      value *= 0.5f;
    return sign ? -value : value;
  } else {
    out = ((exponent - Bias + 127) << 23) | (mantissa << (23 - MantBits));
  }
  return bitCast<float>(out | (sign << 31));
}

/// The bit pattern of `value`, which must already be a value of the format
/// (rounded by roundWithTraits: no -0, infinity or NaN where the format has
/// none).
template <int ExpBits, int MantBits, int Bias, Specials S>
TGC_HD inline uint32_t encodeSmall(float value) {
  constexpr uint32_t kExpMask = (1u << ExpBits) - 1;
  constexpr uint32_t kMantMask = (1u << MantBits) - 1;
  constexpr uint32_t kSignShift = ExpBits + MantBits;
  uint32_t bits = bitCast<uint32_t>(value);
  uint32_t sign = (bits >> 31) << kSignShift;
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) { // NaN
    if (S == Specials::NegativeZeroNaN)
      return 1u << kSignShift;
    if (S == Specials::AllOnesNaN)
      return sign | (kExpMask << MantBits) | kMantMask;
    return sign | (kExpMask << MantBits) | (1u << (MantBits - 1));
  }
  if (magnitude == 0x7f800000u) // infinity (IEEE formats only)
    return sign | (kExpMask << MantBits);
  int exponent = static_cast<int>(magnitude >> 23) - 127;
  if (exponent < 1 - Bias) {
    // Subnormal: |value| / 2^(1 - bias - MantBits) is an integer.
    float scaled = bitCast<float>(magnitude);
    for (int i = 0; i < Bias - 1 + MantBits; ++i)
      scaled *= 2.0f;
    uint32_t pattern = static_cast<uint32_t>(scaled);
    return S == Specials::NegativeZeroNaN && !pattern ? 0u : sign | pattern;
  }
  return sign | (static_cast<uint32_t>(exponent + Bias) << MantBits) |
         ((magnitude >> (23 - MantBits)) & kMantMask);
}
} // namespace detail

TGC_HD inline float ld(float x) { return x; }
TGC_HD inline double ld(double x) { return x; }
TGC_HD inline float ld(bf16 x) {
  return bitCast<float>(static_cast<uint32_t>(x.bits) << 16);
}
TGC_HD inline float ld(f16 x) {
  return detail::decodeSmall<5, 10, 15, detail::Specials::IEEE>(x.bits);
}
TGC_HD inline float ld(f8e4m3fn x) {
  return detail::decodeSmall<4, 3, 7, detail::Specials::AllOnesNaN>(x.bits);
}
TGC_HD inline float ld(f8e5m2 x) {
  return detail::decodeSmall<5, 2, 15, detail::Specials::IEEE>(x.bits);
}
TGC_HD inline float ld(f8e4m3fnuz x) {
  return detail::decodeSmall<4, 3, 8, detail::Specials::NegativeZeroNaN>(
      x.bits);
}
TGC_HD inline float ld(f8e5m2fnuz x) {
  return detail::decodeSmall<5, 2, 16, detail::Specials::NegativeZeroNaN>(
      x.bits);
}
TGC_HD inline float ld(f4e2m1fn x) {
  return detail::decodeSmall<2, 1, 1, detail::Specials::None>(x.bits);
}
TGC_HD inline float ld(f8e8m0fnu x) {
  // 2^-127 is the f32 subnormal 0x00400000.
  return bitCast<float>(x.bits == 0xff ? 0x7fc00000u
                        : x.bits       ? static_cast<uint32_t>(x.bits) << 23
                                       : 0x00400000u);
}
template <int Bits, bool Signed>
TGC_HD inline int64_t ld(narrow<Bits, Signed> x) {
  return x.value;
}
TGC_HD inline int64_t ld(int64_t x) { return x; }
TGC_HD inline int64_t ld(int32_t x) { return x; }
TGC_HD inline int64_t ld(int16_t x) { return x; }
TGC_HD inline int64_t ld(int8_t x) { return x; }
TGC_HD inline int64_t ld(uint32_t x) { return x; }
TGC_HD inline int64_t ld(uint16_t x) { return x; }
TGC_HD inline int64_t ld(u8 x) { return x.bits; }
TGC_HD inline int64_t ld(uint8_t x) { return x; }

/// `value` stored as S: rounded to the format (floats), wrapped to the width
/// (integers), nonzero to 1 (i1).
template <typename S> struct Store;
template <> struct Store<float> {
  template <typename V> TGC_HD static float to(V v) {
    return static_cast<float>(v);
  }
};
template <> struct Store<double> {
  template <typename V> TGC_HD static double to(V v) {
    return static_cast<double>(v);
  }
};
template <> struct Store<bf16> {
  template <typename V> TGC_HD static bf16 to(V v) {
    return {static_cast<uint16_t>(
        bitCast<uint32_t>(roundToBF16(static_cast<float>(v))) >> 16)};
  }
};
template <> struct Store<f16> {
  template <typename V> TGC_HD static f16 to(V v) {
    return {static_cast<uint16_t>(
        detail::encodeSmall<5, 10, 15, detail::Specials::IEEE>(
            roundToF16(static_cast<float>(v))))};
  }
};
template <> struct Store<f8e4m3fn> {
  template <typename V> TGC_HD static f8e4m3fn to(V v) {
    return {static_cast<uint8_t>(
        detail::encodeSmall<4, 3, 7, detail::Specials::AllOnesNaN>(
            roundToF8E4M3FN(static_cast<float>(v))))};
  }
};
template <> struct Store<f8e5m2> {
  template <typename V> TGC_HD static f8e5m2 to(V v) {
    return {static_cast<uint8_t>(
        detail::encodeSmall<5, 2, 15, detail::Specials::IEEE>(
            roundToF8E5M2(static_cast<float>(v))))};
  }
};
template <> struct Store<f8e4m3fnuz> {
  template <typename V> TGC_HD static f8e4m3fnuz to(V v) {
    return {static_cast<uint8_t>(
        detail::encodeSmall<4, 3, 8, detail::Specials::NegativeZeroNaN>(
            roundWithTraits<kE4M3FNUZTraits>(static_cast<float>(v))))};
  }
};
template <> struct Store<f8e5m2fnuz> {
  template <typename V> TGC_HD static f8e5m2fnuz to(V v) {
    return {static_cast<uint8_t>(
        detail::encodeSmall<5, 2, 16, detail::Specials::NegativeZeroNaN>(
            roundWithTraits<kE5M2FNUZTraits>(static_cast<float>(v))))};
  }
};
template <> struct Store<f4e2m1fn> {
  template <typename V> TGC_HD static f4e2m1fn to(V v) {
    return {static_cast<uint8_t>(
        detail::encodeSmall<2, 1, 1, detail::Specials::None>(
            roundWithTraits<kE2M1FNTraits>(static_cast<float>(v))))};
  }
};
template <> struct Store<f8e8m0fnu> {
  template <typename V> TGC_HD static f8e8m0fnu to(V v) {
    uint32_t bits = bitCast<uint32_t>(roundToE8M0(static_cast<float>(v)));
    // NaN is 0xff; 2^-127 (an f32 subnormal) has exponent field 0.
    return {static_cast<uint8_t>(bits > 0x7f800000u ? 0xffu : bits >> 23)};
  }
};
template <> struct Store<int64_t> {
  template <typename V> TGC_HD static int64_t to(V v) {
    return static_cast<int64_t>(v);
  }
};
template <> struct Store<int32_t> {
  template <typename V> TGC_HD static int32_t to(V v) {
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(v)));
  }
};
/// The narrow integers wrap: the low bits of the two's complement value.
template <typename S> struct StoreWrapped {
  template <typename V> TGC_HD static S to(V v) {
    using U = std::make_unsigned_t<S>;
    return static_cast<S>(static_cast<U>(static_cast<int64_t>(v)));
  }
};
template <> struct Store<int16_t> : StoreWrapped<int16_t> {};
template <> struct Store<int8_t> : StoreWrapped<int8_t> {};
template <> struct Store<uint32_t> : StoreWrapped<uint32_t> {};
template <> struct Store<uint16_t> : StoreWrapped<uint16_t> {};
/// i4, ui4, i2, ui2 wrap to their width.
template <int Bits, bool Signed> struct Store<narrow<Bits, Signed>> {
  template <typename V> TGC_HD static narrow<Bits, Signed> to(V v) {
    constexpr int64_t kMask = (int64_t(1) << Bits) - 1;
    constexpr int64_t kHalf = int64_t(1) << (Bits - 1);
    int64_t low = static_cast<int64_t>(v) & kMask;
    using T = std::conditional_t<Signed, int8_t, uint8_t>;
    return {static_cast<T>(Signed ? (low ^ kHalf) - kHalf : low)};
  }
};
template <> struct Store<u8> {
  template <typename V> TGC_HD static u8 to(V v) {
    return {static_cast<uint8_t>(static_cast<int64_t>(v))};
  }
};
template <> struct Store<uint8_t> {
  template <typename V> TGC_HD static uint8_t to(V v) { return v != V(0); }
};

template <typename S, typename V> TGC_HD inline S st(V value) {
  return Store<S>::to(value);
}

/// The compute type of a storage type: what `ld` returns.
template <typename S> using Compute = decltype(ld(S{}));

} // namespace tgc::rt

#endif // TGC_RUNTIME_STORAGE_H
