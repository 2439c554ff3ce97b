//===- Tensor.h - tensors on the host for the op kernels --------*- C++ -*-===//
//
// A host tensor of the op kernels (the interpreter's values, the importer's
// folded constants): its MLIR type and its elements, row-major.
// Floating-point elements are held as float (f32, f16, bf16, f8 values, all
// exactly representable in f32) or as double (f64, and every float type in
// f64 mode); integers and i1 as int64_t.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_EVAL_TENSOR_H
#define TGC_EVAL_TENSOR_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace tgc {

class Tensor {
public:
  enum class Storage { Float, Double, Int };

  Tensor() = default;
  /// A zero-filled tensor of `type`, held as `storage`.
  Tensor(mlir::RankedTensorType type, Storage storage);

  mlir::RankedTensorType getType() const { return type; }
  mlir::Type getElementType() const { return type.getElementType(); }
  llvm::ArrayRef<int64_t> getShape() const { return type.getShape(); }
  int64_t getNumElements() const { return type.getNumElements(); }
  Storage getStorage() const { return storage; }
  bool isFloatStorage() const { return storage == Storage::Float; }
  bool isDoubleStorage() const { return storage == Storage::Double; }
  bool isIntStorage() const { return storage == Storage::Int; }

  std::vector<float> &floats() { return floatData; }
  const std::vector<float> &floats() const { return floatData; }
  std::vector<double> &doubles() { return doubleData; }
  const std::vector<double> &doubles() const { return doubleData; }
  std::vector<int64_t> &ints() { return intData; }
  const std::vector<int64_t> &ints() const { return intData; }

  /// The elements of a Float or Double tensor as T (float or double).
  template <typename T> std::vector<T> &data();
  template <typename T> const std::vector<T> &data() const;

  /// Element `index` (row-major) converted to double, whatever the storage.
  double getAsDouble(int64_t index) const;
  /// Sets element `index` of a Float or Double tensor to `value` (rounded to
  /// float for Float storage).
  void setAsDouble(int64_t index, double value);

  /// The same elements with another type of the same element count (reshape).
  Tensor withType(mlir::RankedTensorType newType) const;

private:
  mlir::RankedTensorType type;
  Storage storage = Storage::Float;
  std::vector<float> floatData;
  std::vector<double> doubleData;
  std::vector<int64_t> intData;
};

template <> inline std::vector<float> &Tensor::data<float>() {
  return floatData;
}
template <> inline std::vector<double> &Tensor::data<double>() {
  return doubleData;
}
template <> inline const std::vector<float> &Tensor::data<float>() const {
  return floatData;
}
template <> inline const std::vector<double> &Tensor::data<double>() const {
  return doubleData;
}

/// Whether `view` is `shape` with one dimension N split into [k, N/k]: the
/// same row-major elements (a fused weight that tg-split-fused-projections
/// split).
bool isSplitView(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> view);

} // namespace tgc

#endif // TGC_EVAL_TENSOR_H
