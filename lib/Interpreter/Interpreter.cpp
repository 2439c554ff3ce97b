//===- Interpreter.cpp - the CPU reference interpreter --------------------===//
//
// The executor: binds arguments, runs each op's registered kernel in order,
// rounds results to their element type, and frees values after their last
// use so that real model graphs fit in memory.
//
//===----------------------------------------------------------------------===//

#include "tgc/Interpreter/Interpreter.h"

#include "KernelUtils.h"
#include "tgc/Support/FloatFormats.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tgc;

/// 2^33 elements: 32 GiB of floats, more than a test machine has.
static constexpr uint64_t kMaxElementsPerTensor = uint64_t(1) << 33;

static bool isTooLarge(Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType || !tensorType.hasStaticShape())
    return false;
  uint64_t elements = 1;
  for (int64_t size : tensorType.getShape())
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(size),
                               &elements) ||
        elements > kMaxElementsPerTensor)
      return true;
  return false;
}

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
  return FloatFormat::F32;
}

void Interpreter::normalize(Tensor &tensor) const {
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
  // Wrap around to the element width, sign-extending back.
  for (int64_t &value : tensor.ints()) {
    uint64_t bits = static_cast<uint64_t>(value) & ((uint64_t(1) << width) - 1);
    value = width == 1
                ? static_cast<int64_t>(bits)
                : static_cast<int64_t>(bits << (64 - width)) >> (64 - width);
  }
}

Tensor Interpreter::convertArgument(const Tensor &tensor) const {
  Type elementType = tensor.getElementType();
  if (!isa<FloatType>(elementType)) {
    Tensor result = tensor;
    normalize(result);
    return result;
  }
  KernelContext context{options, const_cast<Interpreter &>(*this)};
  Tensor result = context.makeResult(tensor.getType());
  int64_t count = tensor.getNumElements();
  for (int64_t i = 0; i < count; ++i)
    detail::setFloat(result, i, tensor.getAsDouble(i));
  normalize(result);
  return result;
}

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<Tensor>> Interpreter::run(FunctionOpInterface function,
                                                ArrayRef<Tensor> arguments) {
  if (function.isExternal())
    return function.emitError("cannot run a function without a body");
  ArrayRef<Type> argumentTypes = function.getArgumentTypes();
  if (arguments.size() != argumentTypes.size())
    return function.emitError("expected ")
           << argumentTypes.size() << " arguments, got " << arguments.size();
  // Refuse what cannot fit before allocating anything: a shape whose size
  // overflows, or a tensor larger than the machine could hold.
  for (auto [i, type] : llvm::enumerate(argumentTypes))
    if (isTooLarge(type))
      return function.emitError("the interpreter cannot hold argument #")
             << i << " of type " << type;
  WalkResult sizes = function->walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (isTooLarge(type)) {
        op->emitError("the interpreter cannot hold a ")
            << type << ": more than " << kMaxElementsPerTensor << " elements";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (sizes.wasInterrupted())
    return failure();
  SmallVector<Tensor> converted;
  SmallVector<const Tensor *> pointers;
  converted.reserve(arguments.size());
  for (auto [i, argument, type] : llvm::enumerate(arguments, argumentTypes)) {
    if (argument.getType() != type)
      return function.emitError("argument #")
             << i << " has type " << argument.getType() << ", expected "
             << type;
    converted.push_back(convertArgument(argument));
  }
  for (const Tensor &tensor : converted)
    pointers.push_back(&tensor);
  return runBlock(function.getFunctionBody().front(), pointers);
}

FailureOr<SmallVector<Tensor>>
Interpreter::runBlock(Block &block, ArrayRef<const Tensor *> arguments) {
  // Values computed here, and where each one is used for the last time (the
  // index of the op in the block), so that it can be freed right after.
  llvm::DenseMap<Value, Tensor> computed;
  llvm::DenseMap<Value, const Tensor *> bound;
  for (auto [argument, tensor] : llvm::zip(block.getArguments(), arguments))
    bound[argument] = tensor;
  llvm::DenseMap<Value, size_t> lastUse;
  SmallVector<Operation *> ops;
  for (Operation &op : block) {
    for (Value operand : op.getOperands())
      lastUse[operand] = ops.size();
    ops.push_back(&op);
  }

  auto lookup = [&](Value value) -> const Tensor * {
    if (auto it = computed.find(value); it != computed.end())
      return &it->second;
    if (auto it = bound.find(value); it != bound.end())
      return it->second;
    return nullptr;
  };

  KernelContext context{options, *this};
  for (auto [index, op] : llvm::enumerate(ops)) {
    SmallVector<const Tensor *> operands;
    for (Value operand : op->getOperands()) {
      const Tensor *tensor = lookup(operand);
      if (!tensor)
        return op->emitError("the interpreter has no value for an operand "
                             "defined outside the block");
      operands.push_back(tensor);
    }
    if (op->hasTrait<OpTrait::IsTerminator>()) {
      SmallVector<Tensor> results;
      for (const Tensor *tensor : operands)
        results.push_back(*tensor);
      return results;
    }

    const Kernel *kernel = registry.lookup(op->getName().getStringRef());
    if (!kernel)
      return op->emitError("the interpreter has no kernel for '")
             << op->getName() << "'";
    SmallVector<Tensor> results;
    if (failed((*kernel)(op, operands, results, context)))
      return failure();
    if (results.size() != op->getNumResults())
      return op->emitError("internal error: the kernel produced ")
             << results.size() << " results for " << op->getNumResults();
    for (auto [result, tensor] : llvm::zip(op->getResults(), results)) {
      if (tensor.getType() != result.getType())
        return op->emitError("internal error: the kernel produced a ")
               << tensor.getType() << " for a result of type "
               << result.getType();
      normalize(tensor);
      if (!result.use_empty())
        computed[result] = std::move(tensor);
    }
    for (Value operand : op->getOperands())
      if (lastUse.lookup(operand) == index)
        computed.erase(operand);
  }
  return block.getParentOp()->emitError(
      "the interpreter found no terminator in the block");
}
