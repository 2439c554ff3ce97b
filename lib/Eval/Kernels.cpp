//===- Kernels.cpp - the kernel registry and the numerics of results ------===//
//
// The default registry (every kernel group), the storage a result takes, and
// the rounding every op result goes through.
//
//===----------------------------------------------------------------------===//

#include "tgc/Eval/Kernels.h"

#include "KernelUtils.h"
#include "tgc/Support/FloatFormats.h"

using namespace mlir;
using namespace tgc;

//===----------------------------------------------------------------------===//
// Kernel registry
//===----------------------------------------------------------------------===//

void KernelRegistry::add(StringRef opName, Kernel kernel) {
  kernels[opName] = std::move(kernel);
}

const Kernel *KernelRegistry::lookup(StringRef opName) const {
  auto it = kernels.find(opName);
  return it == kernels.end() ? nullptr : &it->second;
}

const KernelRegistry &KernelRegistry::getDefault() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerElementwiseKernels(r);
    registerShapeKernels(r);
    registerReductionKernels(r);
    registerComputeKernels(r);
    registerBackwardKernels(r);
    registerOptimizerKernels(r);
    registerStructureKernels(r);
    registerPrecisionKernels(r);
    return r;
  }();
  return registry;
}

//===----------------------------------------------------------------------===//
// Storage and rounding
//===----------------------------------------------------------------------===//

Tensor::Storage KernelContext::floatStorageFor(Type elementType) const {
  return options.f64 || elementType.isF64() ? Tensor::Storage::Double
                                            : Tensor::Storage::Float;
}

Tensor KernelContext::makeResult(Type type) const {
  auto tensorType = cast<RankedTensorType>(type);
  Type elementType = tensorType.getElementType();
  if (isa<FloatType>(elementType))
    return Tensor(tensorType, floatStorageFor(elementType));
  return Tensor(tensorType, Tensor::Storage::Int);
}

FloatFormat tgc::detail::getFloatFormat(Type elementType) {
  if (elementType.isBF16())
    return FloatFormat::BF16;
  if (elementType.isF16())
    return FloatFormat::F16;
  if (isa<Float8E4M3FNType>(elementType))
    return FloatFormat::F8E4M3FN;
  if (isa<Float8E5M2Type>(elementType))
    return FloatFormat::F8E5M2;
  if (isa<Float8E4M3FNUZType>(elementType))
    return FloatFormat::F8E4M3FNUZ;
  if (isa<Float8E5M2FNUZType>(elementType))
    return FloatFormat::F8E5M2FNUZ;
  if (isa<Float4E2M1FNType>(elementType))
    return FloatFormat::F4E2M1FN;
  if (isa<Float8E8M0FNUType>(elementType))
    return FloatFormat::F8E8M0FNU;
  return FloatFormat::F32;
}

int64_t tgc::getIntMin(Type type) {
  unsigned width = type.getIntOrFloatBitWidth();
  if (type.isUnsignedInteger())
    return 0;
  return width >= 64 ? std::numeric_limits<int64_t>::min()
                     : -(int64_t(1) << (width - 1));
}

int64_t tgc::getIntMax(Type type) {
  unsigned width = type.getIntOrFloatBitWidth();
  if (type.isUnsignedInteger() && width < 64)
    return (int64_t(1) << width) - 1;
  return width >= 64 ? std::numeric_limits<int64_t>::max()
                     : (int64_t(1) << (width - 1)) - 1;
}

void tgc::normalizeTensor(Tensor &tensor, const EvalOptions &options) {
  Type elementType = tensor.getElementType();
  if (tensor.isFloatStorage()) {
    FloatFormat format = detail::getFloatFormat(elementType);
    if (options.precisionEmulation && format != FloatFormat::F32)
      roundToFormat(tensor.floats().data(), tensor.floats().size(), format);
    return;
  }
  if (!tensor.isIntStorage())
    return;
  unsigned width = elementType.getIntOrFloatBitWidth();
  if (width >= 64)
    return;
  // Wrap around to the element width, sign-extending back (zero-extending
  // for i1 and the unsigned types).
  bool zeroExtend = width == 1 || elementType.isUnsignedInteger();
  for (int64_t &value : tensor.ints()) {
    uint64_t bits = static_cast<uint64_t>(value) & ((uint64_t(1) << width) - 1);
    value = zeroExtend
                ? static_cast<int64_t>(bits)
                : static_cast<int64_t>(bits << (64 - width)) >> (64 - width);
  }
}

Tensor tgc::convertTensor(const Tensor &tensor, const EvalOptions &options) {
  Type elementType = tensor.getElementType();
  if (!isa<FloatType>(elementType)) {
    Tensor result = tensor;
    normalizeTensor(result, options);
    return result;
  }
  KernelContext context{options};
  Tensor result = context.makeResult(tensor.getType());
  int64_t count = tensor.getNumElements();
  for (int64_t i = 0; i < count; ++i)
    result.setAsDouble(i, tensor.getAsDouble(i));
  normalizeTensor(result, options);
  return result;
}
