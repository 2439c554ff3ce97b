//===- TensorNpy.cpp - host tensors from and to .npy arrays ---------------===//

#include "tgc/Eval/TensorNpy.h"

#include "KernelUtils.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace tgc;

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "(";
  for (auto [i, size] : llvm::enumerate(shape))
    text += (i ? ", " : "") + std::to_string(size);
  return text + (shape.size() == 1 ? ",)" : ")");
}

template <typename T> static T readElement(const npy::Array &array, int64_t i) {
  T value;
  std::memcpy(&value, array.data.data() + i * sizeof(T), sizeof(T));
  return value;
}

/// Element `i` of an integer array, whatever its width and signedness.
static int64_t readInteger(const npy::Array &array, int64_t i) {
  switch (array.dtype) {
  case npy::DType::I8:
    return readElement<int8_t>(array, i);
  case npy::DType::I16:
    return readElement<int16_t>(array, i);
  case npy::DType::I32:
    return readElement<int32_t>(array, i);
  case npy::DType::U8:
    return readElement<uint8_t>(array, i);
  case npy::DType::U16:
    return readElement<uint16_t>(array, i);
  case npy::DType::U32:
    return readElement<uint32_t>(array, i);
  case npy::DType::U64: // its bits: ui64 holds them so
    return static_cast<int64_t>(readElement<uint64_t>(array, i));
  default:
    return readElement<int64_t>(array, i);
  }
}

npy::DType tgc::getIntegerDType(Type elementType) {
  bool isUnsigned = elementType.isUnsignedInteger();
  switch (elementType.getIntOrFloatBitWidth()) {
  case 2: // i2, ui2, i4 and ui4 are held in a byte each
  case 4:
  case 8:
    return isUnsigned ? npy::DType::U8 : npy::DType::I8;
  case 16:
    return isUnsigned ? npy::DType::U16 : npy::DType::I16;
  case 32:
    return isUnsigned ? npy::DType::U32 : npy::DType::I32;
  default:
    return isUnsigned ? npy::DType::U64 : npy::DType::I64;
  }
}

static double readHalf(const npy::Array &array, int64_t i) {
  uint16_t bits = readElement<uint16_t>(array, i);
  return APFloat(APFloat::IEEEhalf(), APInt(16, bits)).convertToDouble();
}

llvm::Expected<Tensor> tgc::tensorFromNpy(const npy::Array &array,
                                          RankedTensorType type, StringRef name,
                                          bool allowNonFinite,
                                          bool allowSplitView) {
  auto error = [&](const Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "argument '" + name + "': " + message);
  };
  if (ArrayRef<int64_t>(array.shape) != type.getShape() &&
      !(allowSplitView && isSplitView(array.shape, type.getShape())))
    return error("the array has shape " + formatShape(array.shape) +
                 ", the argument is " + formatShape(type.getShape()));
  Type elementType = type.getElementType();
  npy::DType dtype = array.dtype;
  int64_t count = array.getNumElements();
  auto wrongDtype = [&]() {
    std::string typeText;
    llvm::raw_string_ostream os(typeText);
    os << elementType;
    return error("an array of dtype '" + npy::getDescr(dtype).str() +
                 "' cannot hold " + typeText + " values");
  };

  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    bool accepted = dtype == npy::DType::F32 ||
                    (dtype == npy::DType::F64 && floatType.isF64()) ||
                    (dtype == npy::DType::F16 && floatType.isF16());
    if (!accepted)
      return wrongDtype();
    Tensor tensor(type, floatType.isF64() ? Tensor::Storage::Double
                                          : Tensor::Storage::Float);
    FloatFormat format = detail::getFloatFormat(floatType);
    for (int64_t i = 0; i < count; ++i) {
      double value = dtype == npy::DType::F32   ? readElement<float>(array, i)
                     : dtype == npy::DType::F64 ? readElement<double>(array, i)
                                                : readHalf(array, i);
      if (!allowNonFinite && !std::isfinite(value))
        return error(llvm::formatv("element {0} is {1}; pass "
                                   "--allow-non-finite to accept NaN and "
                                   "infinity",
                                   i, value)
                         .str());
      // A finite f32 value beyond a low-precision type's range would become
      // an infinity (or NaN) when rounded to it: the same policy applies.
      if (!allowNonFinite && format != FloatFormat::F32 &&
          !std::isfinite(roundToFormat(static_cast<float>(value), format))) {
        std::string typeText;
        llvm::raw_string_ostream(typeText) << elementType;
        return error(llvm::formatv("element {0} is {1}, beyond the largest "
                                   "finite {2} value ({3}); pass "
                                   "--allow-non-finite to accept it as "
                                   "non-finite",
                                   i, llvm::format("%g", value), typeText,
                                   llvm::format("%g", getMaxFinite(format)))
                         .str());
      }
      tensor.setAsDouble(i, value);
    }
    return tensor;
  }

  Tensor tensor(type, Tensor::Storage::Int);
  unsigned width = elementType.getIntOrFloatBitWidth();
  if (width == 1) {
    if (dtype != npy::DType::Bool)
      return wrongDtype();
    for (int64_t i = 0; i < count; ++i)
      tensor.ints()[i] = readElement<uint8_t>(array, i) != 0;
    return tensor;
  }
  if (!npy::isInteger(dtype))
    return wrongDtype();
  // Any integer dtype, as long as every value fits the element type (ui64
  // holds its values' bits: any uint64, or a signed value from 0).
  int64_t low = getIntMin(elementType), high = getIntMax(elementType);
  bool bits64 = elementType.isUnsignedInteger(64);
  for (int64_t i = 0; i < count; ++i) {
    int64_t value = readInteger(array, i);
    bool fits = bits64 ? dtype == npy::DType::U64 || value >= 0
                       : value >= low && value <= high &&
                             (dtype != npy::DType::U64 || value >= 0);
    if (!fits) {
      std::string typeText;
      llvm::raw_string_ostream(typeText) << elementType;
      return error(llvm::formatv("element {0} ({1}) does not fit in {2}", i,
                                 value, typeText)
                       .str());
    }
    tensor.ints()[i] = value;
  }
  return tensor;
}

npy::Array tgc::tensorToNpy(const Tensor &tensor) {
  npy::Array array;
  array.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  int64_t count = tensor.getNumElements();
  auto fill = [&](npy::DType dtype, auto convert) {
    using T = decltype(convert(int64_t(0)));
    array.dtype = dtype;
    array.data.resize(count * sizeof(T));
    for (int64_t i = 0; i < count; ++i) {
      T value = convert(i);
      std::memcpy(array.data.data() + i * sizeof(T), &value, sizeof(T));
    }
  };
  if (tensor.isDoubleStorage())
    fill(npy::DType::F64, [&](int64_t i) { return tensor.doubles()[i]; });
  else if (tensor.isFloatStorage())
    fill(npy::DType::F32, [&](int64_t i) { return tensor.floats()[i]; });
  else if (tensor.getElementType().isInteger(1))
    fill(npy::DType::Bool,
         [&](int64_t i) { return uint8_t(tensor.ints()[i] != 0); });
  else {
    // Any integer type: the low bytes of the int64 value (two's complement,
    // little-endian), which wraps it to the element's width.
    array.dtype = getIntegerDType(tensor.getElementType());
    size_t size = npy::getElementSize(array.dtype);
    array.data.resize(count * size);
    for (int64_t i = 0; i < count; ++i)
      std::memcpy(array.data.data() + i * size, &tensor.ints()[i], size);
  }
  return array;
}
