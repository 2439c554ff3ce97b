//===- Interpreter.cpp - the CPU reference interpreter --------------------===//
//
// The executor: binds arguments, runs each op's registered kernel in order,
// rounds results to their element type, and frees values after their last
// use so that real model graphs fit in memory.
//
//===----------------------------------------------------------------------===//

#include "tgc/Interpreter/Interpreter.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <fstream>

using namespace mlir;
using namespace tgc;

/// 2^33 elements: 32 GiB of floats, the most one tensor may hold.
static constexpr uint64_t kMaxElementsPerTensor = uint64_t(1) << 33;

/// The memory the machine has available now (Linux's MemAvailable), or 0
/// when unknown.
static uint64_t getAvailableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:")
      return kib * 1024;
  return 0;
}

/// The most elements one tensor may hold: kMaxElementsPerTensor, and no
/// more than the memory available holds as f64 (the widest storage), so
/// that an allocation fails here with a message rather than abort.
static uint64_t getMaxElementsPerTensor() {
  static const uint64_t limit = [] {
    uint64_t available = getAvailableMemoryBytes();
    if (available == 0)
      return kMaxElementsPerTensor;
    return std::min<uint64_t>(kMaxElementsPerTensor, available / 8);
  }();
  return limit;
}

static bool isTooLarge(Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return false;
  // A dynamic shape has no size to allocate: the interpreter refuses it.
  if (!tensorType.hasStaticShape())
    return true;
  uint64_t elements = 1;
  for (int64_t size : tensorType.getShape())
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(size),
                               &elements) ||
        elements > getMaxElementsPerTensor())
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

LogicalResult Interpreter::checkCanRun(FunctionOpInterface function) {
  if (function.isExternal())
    return function.emitError("cannot run a function without a body");
  // One block: a branch to another block would be taken for the return.
  if (!function.getFunctionBody().hasOneBlock())
    return function.emitError("the interpreter runs functions of one block; @")
           << function.getName() << " has "
           << function.getFunctionBody().getBlocks().size();
  ArrayRef<Type> argumentTypes = function.getArgumentTypes();
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
            << type << ": more than " << getMaxElementsPerTensor()
            << " elements (at most 2^33, and what the memory available "
               "holds)";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(sizes.wasInterrupted());
}

FailureOr<SmallVector<Tensor>> Interpreter::run(FunctionOpInterface function,
                                                ArrayRef<Tensor> arguments) {
  if (failed(checkCanRun(function)))
    return failure();
  ArrayRef<Type> argumentTypes = function.getArgumentTypes();
  if (arguments.size() != argumentTypes.size())
    return function.emitError("expected ")
           << argumentTypes.size() << " arguments, got " << arguments.size();
  SmallVector<Tensor> converted;
  SmallVector<const Tensor *> pointers;
  converted.reserve(arguments.size());
  for (auto [i, argument, type] : llvm::enumerate(arguments, argumentTypes)) {
    if (argument.getType() != type)
      return function.emitError("argument #")
             << i << " has type " << argument.getType() << ", expected "
             << type;
    converted.push_back(convertTensor(argument, options));
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

    SmallVector<Tensor> results;
    if (failed(runOp(op, operands, results)))
      return failure();
    for (auto [result, tensor] : llvm::zip(op->getResults(), results))
      if (!result.use_empty())
        computed[result] = std::move(tensor);
    for (Value operand : op->getOperands())
      if (lastUse.lookup(operand) == index)
        computed.erase(operand);
  }
  return block.getParentOp()->emitError(
      "the interpreter found no terminator in the block");
}

LogicalResult Interpreter::runOp(Operation *op,
                                 ArrayRef<const Tensor *> operands,
                                 SmallVectorImpl<Tensor> &results) {
  const Kernel *kernel = registry.lookup(op->getName().getStringRef());
  if (!kernel)
    return op->emitError("the interpreter has no kernel for '")
           << op->getName() << "'";
  auto runNested = [this](Block &nested, ArrayRef<const Tensor *> values) {
    return runBlock(nested, values);
  };
  KernelContext context{options, runNested};
  size_t first = results.size();
  // Results with no elements: nothing to compute. The kernels would still
  // walk the rows of an operand like tensor<64x2x3x1048576x0xf64>, 4 * 10^8
  // empty ones (found by tgc-fuzz-onnx: minutes for no work).
  bool allEmpty = op->getNumResults() > 0 &&
                  llvm::all_of(op->getResultTypes(), [](Type type) {
                    auto tensor = dyn_cast<RankedTensorType>(type);
                    return tensor && tensor.hasStaticShape() &&
                           tensor.getNumElements() == 0;
                  });
  if (allEmpty) {
    for (Type type : op->getResultTypes())
      results.push_back(context.makeResult(type));
  } else if (failed((*kernel)(op, operands, results, context))) {
    return failure();
  }
  if (results.size() - first != op->getNumResults())
    return op->emitError("internal error: the kernel produced ")
           << results.size() - first << " results for " << op->getNumResults();
  for (auto [result, tensor] :
       llvm::zip(op->getResults(),
                 MutableArrayRef<Tensor>(results).drop_front(first))) {
    if (tensor.getType() != result.getType())
      return op->emitError("internal error: the kernel produced a ")
             << tensor.getType() << " for a result of type "
             << result.getType();
    normalizeTensor(tensor, options);
  }
  return success();
}
