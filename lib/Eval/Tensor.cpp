//===- Tensor.cpp - tensors on the host for the op kernels ----------------===//

#include "tgc/Eval/Tensor.h"

using namespace mlir;
using namespace tgc;

Tensor::Tensor(RankedTensorType type, Storage storage)
    : type(type), storage(storage) {
  size_t count = type.getNumElements();
  switch (storage) {
  case Storage::Float:
    floatData.assign(count, 0.0f);
    break;
  case Storage::Double:
    doubleData.assign(count, 0.0);
    break;
  case Storage::Int:
    intData.assign(count, 0);
    break;
  }
}

double Tensor::getAsDouble(int64_t index) const {
  switch (storage) {
  case Storage::Float:
    return floatData[index];
  case Storage::Double:
    return doubleData[index];
  case Storage::Int:
    // ui64 holds its values' bits.
    if (getElementType().isUnsignedInteger(64))
      return static_cast<double>(static_cast<uint64_t>(intData[index]));
    return static_cast<double>(intData[index]);
  }
  return 0.0;
}

void Tensor::setAsDouble(int64_t index, double value) {
  if (storage == Storage::Double)
    doubleData[index] = value;
  else
    floatData[index] = static_cast<float>(value);
}

bool tgc::isSplitView(ArrayRef<int64_t> shape, ArrayRef<int64_t> view) {
  if (view.size() != shape.size() + 1)
    return false;
  for (size_t dim = 0; dim < shape.size(); ++dim)
    if (shape.take_front(dim) == view.take_front(dim) &&
        shape.drop_front(dim + 1) == view.drop_front(dim + 2) &&
        view[dim] * view[dim + 1] == shape[dim])
      return true;
  return false;
}

Tensor Tensor::withType(RankedTensorType newType) const {
  Tensor result = *this;
  result.type = newType;
  return result;
}
