//===- Elements.cpp - stored elements as numbers, on the host -------------===//

#include "Elements.h"

#include "tgc/runtime/Storage.h"

#include <cstring>
#include <type_traits>

using namespace tgc::rt;

size_t tgc::rt::getDTypeBytes(DType type) {
  switch (type) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
  case DType::U32:
    return 4;
  case DType::BF16:
  case DType::F16:
  case DType::I16:
  case DType::U16:
    return 2;
  case DType::F8E4M3FN:
  case DType::F8E5M2:
  case DType::I1:
  case DType::I8:
  case DType::U8:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2FNUZ:
  case DType::F4E2M1FN:
  case DType::F8E8M0FNU:
  case DType::I4:
  case DType::U4:
  case DType::I2:
  case DType::U2:
    return 1;
  }
  return 1;
}

DType tgc::rt::getFileDType(DType type) {
  switch (type) {
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2FNUZ:
  case DType::F4E2M1FN:
    return DType::F32;
  case DType::I4:
  case DType::I2:
    return DType::I8;
  case DType::U4:
  case DType::U2:
    return DType::U8;
  default:
    return type;
  }
}

const char *tgc::rt::getSafetensorsDType(DType type) {
  switch (getFileDType(type)) {
  case DType::F64:
    return "F64";
  case DType::F32:
    return "F32";
  case DType::BF16:
    return "BF16";
  case DType::F16:
    return "F16";
  case DType::F8E4M3FN:
    return "F8_E4M3";
  case DType::F8E5M2:
    return "F8_E5M2";
  case DType::I64:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::I1:
    return "BOOL";
  case DType::I16:
    return "I16";
  case DType::I8:
    return "I8";
  case DType::U32:
    return "U32";
  case DType::U16:
    return "U16";
  case DType::U8:
    return "U8";
  case DType::F8E8M0FNU:
    return "F8_E8M0";
  default:
    return "";
  }
}

std::optional<DType> tgc::rt::parseFileDType(const std::string &name) {
  static const DType kFileTypes[] = {
      DType::F32,    DType::F64,       DType::BF16, DType::F16, DType::F8E4M3FN,
      DType::F8E5M2, DType::F8E8M0FNU, DType::I64,  DType::I32, DType::I1,
      DType::I16,    DType::I8,        DType::U32,  DType::U16, DType::U8};
  for (DType type : kFileTypes)
    if (name == getSafetensorsDType(type))
      return type;
  return std::nullopt;
}

bool tgc::rt::isFloatDType(DType type) {
  switch (type) {
  case DType::F32:
  case DType::F64:
  case DType::BF16:
  case DType::F16:
  case DType::F8E4M3FN:
  case DType::F8E5M2:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2FNUZ:
  case DType::F4E2M1FN:
  case DType::F8E8M0FNU:
    return true;
  default:
    return false;
  }
}

namespace {
/// Calls fn(S{}) with the storage type of `type`.
template <typename Fn> auto visitStorage(DType type, Fn &&fn) {
  switch (type) {
  case DType::F64:
    return fn(double{});
  case DType::BF16:
    return fn(bf16{});
  case DType::F16:
    return fn(f16{});
  case DType::F8E4M3FN:
    return fn(f8e4m3fn{});
  case DType::F8E5M2:
    return fn(f8e5m2{});
  case DType::I64:
    return fn(int64_t{});
  case DType::I32:
    return fn(int32_t{});
  case DType::I1:
    return fn(uint8_t{});
  case DType::I16:
    return fn(int16_t{});
  case DType::I8:
    return fn(int8_t{});
  case DType::U32:
    return fn(uint32_t{});
  case DType::U16:
    return fn(uint16_t{});
  case DType::U8:
    return fn(u8{});
  case DType::F8E4M3FNUZ:
    return fn(f8e4m3fnuz{});
  case DType::F8E5M2FNUZ:
    return fn(f8e5m2fnuz{});
  case DType::F4E2M1FN:
    return fn(f4e2m1fn{});
  case DType::F8E8M0FNU:
    return fn(f8e8m0fnu{});
  case DType::I4:
    return fn(i4{});
  case DType::U4:
    return fn(u4{});
  case DType::I2:
    return fn(i2{});
  case DType::U2:
    return fn(u2{});
  case DType::F32:
    break;
  }
  return fn(float{});
}
} // namespace

double tgc::rt::loadDouble(const void *data, DType type, int64_t i) {
  return visitStorage(type, [&](auto tag) {
    using S = decltype(tag);
    return static_cast<double>(ld(static_cast<const S *>(data)[i]));
  });
}

void tgc::rt::storeDouble(void *data, DType type, int64_t i, double value) {
  visitStorage(type, [&](auto tag) {
    using S = decltype(tag);
    using T = Compute<S>;
    // A float type rounds through f32 as the interpreter's tensors do.
    if constexpr (std::is_same_v<T, float>)
      static_cast<S *>(data)[i] = st<S>(static_cast<float>(value));
    else
      static_cast<S *>(data)[i] = st<S>(static_cast<T>(value));
  });
}

std::vector<float> tgc::rt::loadFloats(const void *data, DType type,
                                       int64_t count) {
  std::vector<float> values(count);
  if (type == DType::F32) {
    std::memcpy(values.data(), data, count * sizeof(float));
    return values;
  }
  // The type is chosen once, not per element: loadDouble's values.
  visitStorage(type, [&](auto tag) {
    using S = decltype(tag);
    const S *stored = static_cast<const S *>(data);
    for (int64_t i = 0; i < count; ++i)
      values[i] = static_cast<float>(static_cast<double>(ld(stored[i])));
  });
  return values;
}

void tgc::rt::storeFloats(const std::vector<float> &values, void *data,
                          DType type) {
  if (type == DType::F32) {
    std::memcpy(data, values.data(), values.size() * sizeof(float));
    return;
  }
  // The type is chosen once, not per element: storeDouble's rounding.
  visitStorage(type, [&](auto tag) {
    using S = decltype(tag);
    using T = Compute<S>;
    S *stored = static_cast<S *>(data);
    for (size_t i = 0; i < values.size(); ++i)
      stored[i] = st<S>(static_cast<T>(values[i]));
  });
}

bool tgc::rt::convertElements(const char *data, int64_t count, DType from,
                              DType to, char *out, std::string &error,
                              int64_t first) {
  if (isFloatDType(from) != isFloatDType(to)) {
    error = std::string("holds ") + getSafetensorsDType(from) +
            " values; an integer cannot take a float's place or a float an "
            "integer's";
    return false;
  }
  if (from == to) {
    std::memcpy(out, data, count * getDTypeBytes(from));
    return true;
  }
  for (int64_t i = 0; i < count; ++i) {
    if (isFloatDType(from)) {
      storeDouble(out, to, i, loadDouble(data, from, i));
      continue;
    }
    int64_t value = visitStorage(from, [&](auto tag) -> int64_t {
      using S = decltype(tag);
      if constexpr (std::is_same_v<Compute<S>, int64_t>)
        return ld(reinterpret_cast<const S *>(data)[i]);
      return 0;
    });
    int64_t stored = visitStorage(to, [&](auto tag) -> int64_t {
      using S = decltype(tag);
      if constexpr (std::is_same_v<Compute<S>, int64_t>) {
        S &element = reinterpret_cast<S *>(out)[i];
        element = st<S>(value);
        return ld(element);
      }
      return 0;
    });
    // i1 stores any nonzero value as 1: only 0 and 1 fit.
    if (stored != value) {
      error = "holds " + std::to_string(value) + " at element " +
              std::to_string(first + i) + ", beyond the step's element type";
      return false;
    }
  }
  return true;
}

bool tgc::rt::convertElements(const std::vector<char> &data, DType from,
                              DType to, std::vector<char> &out,
                              std::string &error) {
  int64_t count = static_cast<int64_t>(data.size() / getDTypeBytes(from));
  out.assign(count * getDTypeBytes(to), 0);
  return convertElements(data.data(), count, from, to, out.data(), error);
}

int64_t tgc::rt::getNumElements(const ArgumentInfo &arg) {
  int64_t count = 1;
  for (int d = 0; d < arg.rank; ++d)
    count *= arg.shape[d];
  return count;
}
