//===- Storage.h - element storage of arena buffers -------------*- C++ -*-===//
//
// How each tg element type is stored in the arena (bf16, f16 and the fp8
// formats as their bit patterns; i1 as one byte; the integers in their C
// types, ui8 as the struct u8) and the conversions every
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
/// i1: one byte, 0 or 1.
using i1 = uint8_t;
/// ui8: a byte of its own type (uint8_t is i1's storage).
struct u8 {
  uint8_t bits;
};

namespace detail {
/// The f32 value of a small float format's bit pattern: `ExpBits` exponent
/// bits, `MantBits` mantissa bits, IEEE bias; `IEEESpecials` says whether the
/// all-ones exponent holds infinities and NaNs (f8E4M3FN has only the NaN
/// pattern S.1111.111).
template <int ExpBits, int MantBits, bool IEEESpecials>
TGC_HD inline float decodeSmall(uint32_t bits) {
  constexpr int kBias = (1 << (ExpBits - 1)) - 1;
  constexpr uint32_t kExpMask = (1u << ExpBits) - 1;
  constexpr uint32_t kMantMask = (1u << MantBits) - 1;
  uint32_t sign = (bits >> (ExpBits + MantBits)) & 1;
  uint32_t exponent = (bits >> MantBits) & kExpMask;
  uint32_t mantissa = bits & kMantMask;
  uint32_t out;
  if (IEEESpecials && exponent == kExpMask) {
    out = mantissa ? 0x7fc00000u : 0x7f800000u;
  } else if (!IEEESpecials && exponent == kExpMask && mantissa == kMantMask) {
    out = 0x7fc00000u;
  } else if (exponent == 0) {
    // Subnormal (or zero): mantissa * 2^(1 - bias - MantBits), exact.
    float value = static_cast<float>(mantissa);
    for (int i = 0; i < kBias - 1 + MantBits; ++i)
      value *= 0.5f;
    return sign ? -value : value;
  } else {
    out = ((exponent - kBias + 127) << 23) | (mantissa << (23 - MantBits));
  }
  return bitCast<float>(out | (sign << 31));
}

/// The bit pattern of `value`, which must already be a value of the format
/// (rounded by roundWithTraits).
template <int ExpBits, int MantBits, bool IEEESpecials>
TGC_HD inline uint32_t encodeSmall(float value) {
  constexpr int kBias = (1 << (ExpBits - 1)) - 1;
  constexpr uint32_t kExpMask = (1u << ExpBits) - 1;
  uint32_t bits = bitCast<uint32_t>(value);
  uint32_t sign = (bits >> 31) << (ExpBits + MantBits);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN
    return sign |
           (IEEESpecials ? (kExpMask << MantBits) | (1u << (MantBits - 1))
                         : (kExpMask << MantBits) | ((1u << MantBits) - 1));
  if (magnitude == 0x7f800000u) // infinity (never for f8E4M3FN)
    return sign | (kExpMask << MantBits);
  int exponent = static_cast<int>(magnitude >> 23) - 127;
  if (exponent < 1 - kBias) {
    // Subnormal: |value| / 2^(1 - bias - MantBits) is an integer.
    float scaled = bitCast<float>(magnitude);
    for (int i = 0; i < kBias - 1 + MantBits; ++i)
      scaled *= 2.0f;
    return sign | static_cast<uint32_t>(scaled);
  }
  return sign | (static_cast<uint32_t>(exponent + kBias) << MantBits) |
         ((magnitude >> (23 - MantBits)) & ((1u << MantBits) - 1));
}
} // namespace detail

TGC_HD inline float ld(float x) { return x; }
TGC_HD inline double ld(double x) { return x; }
TGC_HD inline float ld(bf16 x) {
  return bitCast<float>(static_cast<uint32_t>(x.bits) << 16);
}
TGC_HD inline float ld(f16 x) {
  return detail::decodeSmall<5, 10, true>(x.bits);
}
TGC_HD inline float ld(f8e4m3fn x) {
  return detail::decodeSmall<4, 3, false>(x.bits);
}
TGC_HD inline float ld(f8e5m2 x) {
  return detail::decodeSmall<5, 2, true>(x.bits);
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
        detail::encodeSmall<5, 10, true>(roundToF16(static_cast<float>(v))))};
  }
};
template <> struct Store<f8e4m3fn> {
  template <typename V> TGC_HD static f8e4m3fn to(V v) {
    return {static_cast<uint8_t>(detail::encodeSmall<4, 3, false>(
        roundToF8E4M3FN(static_cast<float>(v))))};
  }
};
template <> struct Store<f8e5m2> {
  template <typename V> TGC_HD static f8e5m2 to(V v) {
    return {static_cast<uint8_t>(
        detail::encodeSmall<5, 2, true>(roundToF8E5M2(static_cast<float>(v))))};
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
