//===- KernelOps.cpp - each op as a step of a kernel ----------------------===//
//
// The formulas follow lib/Eval's kernels (compute in f32 for the float
// formats, round once to the result type; integers wrap), so that the host
// target reproduces the interpreter.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Eval/LineLayout.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::cuda;

namespace {

ArrayRef<int64_t> getShape(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

std::string str(int64_t value) { return std::to_string(value); }

/// The formula of an elementwise op on its loaded operands `x`, in compute
/// type `t`; empty when the op has none for these types.
std::string getFormula(Operation *op, ArrayRef<std::string> x,
                       const std::string &t, bool isInt) {
  auto T = [&](const char *literal) { return t + "(" + literal + ")"; };
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case([&](tg::AddOp) {
        return isInt ? "wrapAdd(" + x[0] + ", " + x[1] + ")"
                     : "(" + x[0] + " + " + x[1] + ")";
      })
      .Case([&](tg::SubOp) {
        return isInt ? "wrapSub(" + x[0] + ", " + x[1] + ")"
                     : "(" + x[0] + " - " + x[1] + ")";
      })
      .Case([&](tg::MulOp) {
        return isInt ? "wrapMul(" + x[0] + ", " + x[1] + ")"
                     : "(" + x[0] + " * " + x[1] + ")";
      })
      .Case([&](tg::DivOp) {
        return isInt ? "integerDivide(" + x[0] + ", " + x[1] + ")"
                     : "(" + x[0] + " / " + x[1] + ")";
      })
      .Case([&](tg::MaxOp) {
        return "propagatingMax(" + x[0] + ", " + x[1] + ")";
      })
      .Case([&](tg::MinOp) {
        return "propagatingMin(" + x[0] + ", " + x[1] + ")";
      })
      .Case([&](tg::PowOp) { return "std::pow(" + x[0] + ", " + x[1] + ")"; })
      .Case([&](tg::NegOp) {
        return isInt ? "wrapSub(0, " + x[0] + ")" : "(-" + x[0] + ")";
      })
      .Case([&](tg::AbsOp) {
        return isInt ? "(" + x[0] + " < 0 ? wrapSub(0, " + x[0] +
                           ") : " + x[0] + ")"
                     : "std::abs(" + x[0] + ")";
      })
      .Case([&](tg::ExpOp) { return "std::exp(" + x[0] + ")"; })
      .Case([&](tg::LogOp) { return "std::log(" + x[0] + ")"; })
      .Case([&](tg::SqrtOp) { return "std::sqrt(" + x[0] + ")"; })
      .Case([&](tg::RsqrtOp) {
        return "(" + T("1") + " / std::sqrt(" + x[0] + "))";
      })
      .Case([&](tg::TanhOp) { return "std::tanh(" + x[0] + ")"; })
      .Case([&](tg::ErfOp) { return "std::erf(" + x[0] + ")"; })
      .Case([&](tg::SinOp) { return "std::sin(" + x[0] + ")"; })
      .Case([&](tg::CosOp) { return "std::cos(" + x[0] + ")"; })
      .Case([&](tg::SigmoidOp) { return "sigmoid(" + x[0] + ")"; })
      .Case([&](tg::ReluOp) { return "relu(" + x[0] + ")"; })
      .Case([&](tg::SiluOp) { return "silu(" + x[0] + ")"; })
      .Case([&](tg::GeluOp gelu) {
        return (gelu.getApproximation() == tg::GeluApproximation::Tanh
                    ? "geluTanh("
                    : "geluErf(") +
               x[0] + ")";
      })
      .Case([&](tg::GeluGradOp grad) {
        return "(" + x[0] + " * " +
               (grad.getApproximation() == tg::GeluApproximation::Tanh
                    ? "geluTanhGrad("
                    : "geluErfGrad(") +
               x[1] + "))";
      })
      .Case([&](tg::CompareOp compare) {
        const char *symbol = "==";
        switch (compare.getDirection()) {
        case tg::CompareDirection::EQ:
          symbol = "==";
          break;
        case tg::CompareDirection::NE:
          symbol = "!=";
          break;
        case tg::CompareDirection::LT:
          symbol = "<";
          break;
        case tg::CompareDirection::LE:
          symbol = "<=";
          break;
        case tg::CompareDirection::GT:
          symbol = ">";
          break;
        case tg::CompareDirection::GE:
          symbol = ">=";
          break;
        }
        return "(" + x[0] + " " + symbol + " " + x[1] + ")";
      })
      .Case([&](tg::SelectOp) {
        return "(" + x[0] + " ? " + x[1] + " : " + x[2] + ")";
      })
      .Case([&](tg::ScaleGradOp) { return x[0]; })
      .Case([&](tg::FakeQuantGradOp) { return x[0]; })
      .Default([](Operation *) { return std::string(); });
}

} // namespace

LogicalResult KernelEmitter::emitElementwise(Operation *op) {
  Value out = op->getResult(0);
  FailureOr<StorageType> outType =
      getStorageType(getElementType(out), op->getLoc());
  if (failed(outType))
    return failure();
  SmallVector<std::string> loaded;
  std::string computeType = outType->computeType;
  bool isInt = computeType == "int64_t";
  for (Value operand : op->getOperands()) {
    FailureOr<std::string> name = pointer(operand);
    if (failed(name))
      return failure();
    loaded.push_back("ld(" + *name + "[i])");
  }
  // Operands of compare (and the choices of select) set the compute type.
  if (isa<tg::CompareOp>(op) || isa<tg::SelectOp>(op)) {
    Value reference = op->getOperand(isa<tg::SelectOp>(op) ? 1 : 0);
    FailureOr<StorageType> type =
        getStorageType(getElementType(reference), op->getLoc());
    if (failed(type))
      return failure();
    computeType = type->computeType;
    isInt = computeType == "int64_t";
  }
  std::string formula;
  if (auto convert = dyn_cast<tg::ConvertOp>(op)) {
    Type target = getElementType(out);
    bool fromInt = !isa<FloatType>(getElementType(convert.getOperand()));
    if (target.isInteger(1))
      formula = "(" + loaded[0] + " != 0)";
    else if (isa<IntegerType>(target) && !fromInt)
      formula = "floatToInt(double(" + loaded[0] + "), " +
                (target.isInteger(32) ? "INT32_MIN, INT32_MAX"
                                      : "INT64_MIN, INT64_MAX") +
                ")";
    else
      formula = "static_cast<" + outType->computeType + ">(" + loaded[0] + ")";
  } else {
    formula = getFormula(op, loaded, computeType, isInt);
  }
  if (formula.empty())
    return op->emitError("the CUDA emitter has no formula for ")
           << op->getName() << " on these element types";
  FailureOr<std::string> result = this->result(out);
  if (failed(result))
    return failure();
  int64_t count = getNumElements(out);
  beginStep(op, count, /*pointwise=*/true);
  body += "  for (int64_t i = th.index; i < " + str(count) +
          "; i += th.count)\n    " + *result + "[i] = st<" + outType->cType +
          ">(" + formula + ");\n";
  return success();
}

LogicalResult KernelEmitter::emitShape(Operation *op) {
  Value out = op->getResult(0);
  int64_t count = getNumElements(out);
  ArrayRef<int64_t> outShape = getShape(out);
  std::string rank = str(outShape.size());
  // A view: the same bytes under another shape, unless it must be copied
  // to a planned place.
  if (auto reshape = dyn_cast<tg::ReshapeOp>(op)) {
    if (!outputs.count(out)) {
      auto it = bound.find(reshape.getOperand());
      if (it == bound.end())
        return op->emitError("the CUDA emitter found no place for an operand");
      Bound view = it->second;
      bound[out] = view;
      return success();
    }
    FailureOr<std::string> in = pointer(reshape.getOperand());
    FailureOr<std::string> result = this->result(out);
    if (failed(in) || failed(result))
      return failure();
    beginStep(op, count);
    body += "  gather(th, " + *in + ", " + *result + ", " + str(count) +
            ", 1, Dims{{" + str(count) + "}}, Dims{{1}}, 0);\n";
    return success();
  }
  if (auto constant = dyn_cast<tg::ConstantOp>(op)) {
    FailureOr<StorageType> type =
        getStorageType(getElementType(out), op->getLoc());
    FailureOr<std::string> result = this->result(out);
    if (failed(type) || failed(result))
      return failure();
    ElementsAttr value = constant.getValue();
    std::vector<std::string> values;
    if (auto dense = dyn_cast<DenseElementsAttr>(value);
        dense && dense.isSplat()) {
      values.push_back(
          isa<FloatType>(getElementType(out))
              ? formatNumber(dense.getSplatValue<APFloat>().convertToDouble())
              : str(dense.getSplatValue<APInt>().getSExtValue()));
    } else if (auto floats = value.tryGetValues<APFloat>()) {
      for (APFloat v : *floats) {
        bool losesInfo = false;
        v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
        values.push_back(formatNumber(v.convertToDouble()));
      }
    } else if (auto ints = value.tryGetValues<APInt>()) {
      bool isBool = getElementType(out).isInteger(1);
      for (const APInt &v : *ints)
        values.push_back(
            str(isBool ? int64_t(v.getZExtValue()) : v.getSExtValue()));
    } else {
      return op->emitError("the CUDA emitter cannot read this constant");
    }
    beginStep(op, count);
    if (values.size() == 1) {
      body += "  fill(th, " + *result + ", " + str(count) + ", st<" +
              type->cType + ">(" + type->computeType + "(" + values[0] +
              ")));\n";
      return success();
    }
    std::string table =
        "  static const " + type->computeType + " " + *result + "_values[] = {";
    for (auto [i, v] : llvm::enumerate(values))
      table += (i ? ", " : "") + v;
    body += table + "};\n  for (int64_t i = th.index; i < " + str(count) +
            "; i += th.count)\n    " + *result + "[i] = st<" + type->cType +
            ">(" + *result + "_values[i]);\n";
    return success();
  }
  if (auto concat = dyn_cast<tg::ConcatOp>(op)) {
    FailureOr<std::string> result = this->result(out);
    if (failed(result))
      return failure();
    LineLayout line = getLineLayout(outShape, concat.getDimension());
    beginStep(op, count);
    int64_t rowSize = line.size * line.inner, column = 0;
    for (Value input : concat.getOperands()) {
      FailureOr<std::string> in = pointer(input);
      if (failed(in))
        return failure();
      int64_t chunk = getShape(input)[concat.getDimension()] * line.inner;
      body += "  concatPart(th, " + *in + ", " + *result + ", " +
              str(line.outer) + ", " + str(chunk) + ", " + str(rowSize) + ", " +
              str(column) + ");\n";
      column += chunk;
    }
    return success();
  }
  Value input = op->getOperand(0);
  FailureOr<std::string> in = pointer(input);
  FailureOr<std::string> result = this->result(out);
  if (failed(in) || failed(result))
    return failure();
  SmallVector<int64_t> inStrides = getRowMajorStrides(getShape(input));
  SmallVector<int64_t> strides(outShape.size(), 0);
  int64_t offset = 0;
  if (auto broadcast = dyn_cast<tg::BroadcastInDimOp>(op)) {
    for (auto [i, dim] : llvm::enumerate(broadcast.getBroadcastDimensions()))
      if (getShape(input)[i] != 1)
        strides[dim] = inStrides[i];
  } else if (auto transpose = dyn_cast<tg::TransposeOp>(op)) {
    for (auto [i, dim] : llvm::enumerate(transpose.getPermutation()))
      strides[i] = inStrides[dim];
  } else if (auto slice = dyn_cast<tg::SliceOp>(op)) {
    for (auto [i, stride] : llvm::enumerate(inStrides)) {
      offset += slice.getStartIndices()[i] * stride;
      strides[i] = slice.getStrides()[i] * stride;
    }
  } else if (auto pad = dyn_cast<tg::PadOp>(op)) {
    SmallVector<int64_t> step;
    for (int64_t interior : pad.getInterior())
      step.push_back(interior + 1);
    beginStep(op, count);
    body += "  pad(th, " + *in + ", " + *result + ", " + str(count) + ", " +
            rank + ", " + formatDims(outShape) + ", " +
            formatDims(getShape(input)) + ", " + formatDims(pad.getLow()) +
            ", " + formatDims(step) + ");\n";
    return success();
  } else {
    return op->emitError("the CUDA emitter has no lowering for ")
           << op->getName();
  }
  beginStep(op, count);
  body += "  gather(th, " + *in + ", " + *result + ", " + str(count) + ", " +
          rank + ", " + formatDims(outShape) + ", " + formatDims(strides) +
          ", " + str(offset) + ");\n";
  return success();
}
