//===- Inputs.cpp - arguments for the interpreter: names and random -------===//

#include "tgc/Interpreter/Inputs.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/IR/Block.h"
#include "llvm/ADT/DenseSet.h"

#include <random>

using namespace mlir;
using namespace tgc;

static StringAttr getArgStringAttr(FunctionOpInterface function, unsigned index,
                                   StringRef name) {
  return function.getArgAttrOfType<StringAttr>(index, name);
}

std::string tgc::getArgumentName(FunctionOpInterface function, unsigned index) {
  if (StringAttr name =
          getArgStringAttr(function, index, tg::TGDialect::kNameAttrName))
    return name.str();
  return "arg" + std::to_string(index);
}

std::string tgc::getResultName(FunctionOpInterface function, unsigned index) {
  if (auto name = function.getResultAttrOfType<StringAttr>(
          index, tg::TGDialect::kNameAttrName))
    return name.str();
  return std::to_string(index);
}

/// The exclusive upper bound of the integer ids `value` may hold: the rows of
/// the embedding tables and the classes of the cross-entropies that read it,
/// through shape ops and fusion regions. None if nothing bounds it.
static std::optional<int64_t> findIdBound(Value value) {
  std::optional<int64_t> bound;
  auto tighten = [&](int64_t limit) {
    bound = bound ? std::min(*bound, limit) : limit;
  };
  SmallVector<Value> worklist = {value};
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (!seen.insert(current).second)
      continue;
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (auto embedding = dyn_cast<tg::EmbeddingOp>(user)) {
        if (use.get() == embedding.getIndices())
          tighten(embedding.getTable().getType().getDimSize(0));
      } else if (auto loss = dyn_cast<tg::CrossEntropyOp>(user)) {
        if (use.get() == loss.getLabels())
          tighten(loss.getLogits().getType().getShape().back());
      } else if (user->hasTrait<tg::OpTrait::ShapeOp>()) {
        worklist.append(user->result_begin(), user->result_end());
      } else if (auto fusion = dyn_cast<tg::FusionOp>(user)) {
        worklist.push_back(
            fusion.getBody().getArgument(use.getOperandNumber()));
      }
    }
  }
  return bound;
}

Tensor tgc::makeRandomArgument(FunctionOpInterface function, unsigned index,
                               uint64_t seed) {
  auto type = cast<RankedTensorType>(function.getArgumentTypes()[index]);
  Type elementType = type.getElementType();
  tg::Role role =
      tg::getArgumentRole(function, index).value_or(tg::Role::Input);
  // One generator per argument: seed and index mixed by splitmix64's
  // constants so that neighbouring seeds give unrelated streams.
  std::mt19937_64 generator(seed * 0x9E3779B97F4A7C15ull +
                            (index + 1) * 0xBF58476D1CE4E5B9ull);
  int64_t count = type.getNumElements();

  // A documented default (a learning rate, a step) is the value to use.
  if (Attribute value =
          function.getArgAttr(index, tg::TGDialect::kDefaultAttrName)) {
    Tensor tensor(type, isa<FloatType>(elementType)
                            ? (elementType.isF64() ? Tensor::Storage::Double
                                                   : Tensor::Storage::Float)
                            : Tensor::Storage::Int);
    if (auto floatValue = dyn_cast<FloatAttr>(value))
      for (int64_t i = 0; i < count; ++i)
        tensor.setAsDouble(i, floatValue.getValueAsDouble());
    else if (auto intValue = dyn_cast<IntegerAttr>(value))
      std::fill(tensor.ints().begin(), tensor.ints().end(), intValue.getInt());
    return tensor;
  }

  if (isa<FloatType>(elementType)) {
    Tensor tensor(type, elementType.isF64() ? Tensor::Storage::Double
                                            : Tensor::Storage::Float);
    std::normal_distribution<double> normal(0.0, role == tg::Role::Param ? 0.02
                                                                         : 1.0);
    StringRef init = "normal";
    if (auto attr = function.getArgAttrOfType<StringAttr>(
            index, tg::TGDialect::kInitAttrName))
      init = attr.getValue();
    for (int64_t i = 0; i < count; ++i) {
      double value = 0.0;
      if (role == tg::Role::Hyper)
        value = 1e-3;
      else if (init != "normal")
        value = init == "ones" ? 1.0 : 0.0;
      else if (role != tg::Role::State)
        value = normal(generator);
      tensor.setAsDouble(i, value);
    }
    return tensor;
  }

  Tensor tensor(type, Tensor::Storage::Int);
  if (role == tg::Role::State)
    return tensor;
  int64_t high = 16;
  if (elementType.isInteger(1))
    high = 2;
  else if (role == tg::Role::Hyper)
    high = int64_t(1) << 31;
  else if (role == tg::Role::Label)
    high = findIdBound(function.getArgument(index)).value_or(2);
  else if (std::optional<int64_t> bound =
               findIdBound(function.getArgument(index)))
    high = *bound;
  std::uniform_int_distribution<int64_t> uniform(0, std::max<int64_t>(high, 1) -
                                                        1);
  for (int64_t &value : tensor.ints())
    value = uniform(generator);
  return tensor;
}
