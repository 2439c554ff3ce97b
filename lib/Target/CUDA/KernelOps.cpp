//===- KernelOps.cpp - each op as a step of a kernel ----------------------===//
//
// The formulas follow lib/Eval's kernels (compute in f32 for the float
// formats, round once to the result type; integers wrap), so that the host
// target reproduces the interpreter.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "tgc/Dialect/TG/TGOps.h"

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
      .Case([&](tg::QuantizeDequantizeOp quant) {
        return "quantizeDequantize(" + x[0] + ", " + x[1] + ", " + x[2] + ", " +
               T(str(int64_t(quant.getLow())).c_str()) + ", " +
               T(str(int64_t(quant.getHigh())).c_str()) + ")";
      })
      .Case([&](tg::QuantizeDequantizeGradOp grad) {
        return "quantizeDequantizeGrad(" + x[0] + ", " + x[1] + ", " + x[2] +
               ", " + x[3] + ", " + T(str(int64_t(grad.getLow())).c_str()) +
               ", " + T(str(int64_t(grad.getHigh())).c_str()) + ")";
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
      .Case([&](tg::BitwiseOp bitwise) {
        const char *symbol = bitwise.getKind() == tg::BitwiseKind::And  ? "&"
                             : bitwise.getKind() == tg::BitwiseKind::Or ? "|"
                                                                        : "^";
        return "(" + x[0] + " " + symbol + " " + x[1] + ")";
      })
      .Case([&](tg::BitwiseNotOp) {
        // Integers are held sign-extended (signed) or zero-extended
        // (unsigned, i1) in int64_t: flip only the type's bits of the
        // latter (i1's ~1 would be -2, which stores as true).
        Type type = getElementTypeOrSelf(op->getResult(0).getType());
        if (!type.isUnsignedInteger() && !type.isInteger(1))
          return "(~" + x[0] + ")";
        uint64_t mask = type.isInteger(1)
                            ? 1
                            : (uint64_t(1) << type.getIntOrFloatBitWidth()) - 1;
        return "(" + x[0] + " ^ int64_t(" + std::to_string(mask) + "))";
      })
      .Case([&](tg::ScaleGradOp) { return x[0]; })
      .Case([&](tg::ModeSelectOp) { return x[0]; })
      .Case([&](tg::FakeQuantGradOp) { return x[0]; })
      .Default([](Operation *) { return std::string(); });
}

/// tg.bitcast of `x` (computed in `from`'s compute type) to `to`: the bits
/// of `from`'s storage, as an unsigned integer, read back as `to`. The
/// types narrower than a byte (f4E2M1FN, i4, ui4, i2, ui2) keep their
/// pattern in the low bits.
std::string getBitcastFormula(const std::string &x, Type from,
                              const StorageType &fromStorage, Type to,
                              const StorageType &toStorage) {
  std::string bits;
  if (from.isF32())
    bits = "bitCast<uint32_t>(" + x + ")";
  else if (from.isF64())
    bits = "bitCast<uint64_t>(" + x + ")";
  else if (isa<FloatType>(from))
    bits = "st<" + fromStorage.cType + ">(" + x + ").bits";
  else
    bits = x; // an integer or i1, extended to int64_t: its low bits
  unsigned width = to.getIntOrFloatBitWidth();
  if (to.isInteger(1))
    return "int64_t(" + bits + " != 0)";
  if (width < 8) {
    std::string mask = str((int64_t(1) << width) - 1);
    std::string low = "(int64_t(" + bits + ") & " + mask + ")";
    if (isa<FloatType>(to))
      return "ld(" + toStorage.cType + "{static_cast<uint8_t>(" + low + ")})";
    if (to.isUnsignedInteger())
      return low;
    std::string half = str(int64_t(1) << (width - 1));
    return "((" + low + " ^ " + half + ") - " + half + ")";
  }
  std::string unsignedType = "uint" + str(width) + "_t";
  if (isa<IntegerType>(to))
    return "int64_t(static_cast<" +
           (to.isUnsignedInteger() ? unsignedType : "int" + str(width) + "_t") +
           ">(" + bits + "))";
  if (to.isF32() || to.isF64())
    return "bitCast<" + toStorage.computeType + ">(static_cast<" +
           unsignedType + ">(" + bits + "))";
  return "ld(" + toStorage.cType + "{static_cast<" + unsignedType + ">(" +
         bits + ")})";
}

} // namespace

FailureOr<std::string>
KernelEmitter::formula(Operation *op, const std::string &index, bool same) {
  Value out = op->getResult(0);
  FailureOr<StorageType> outType =
      getStorageType(getElementType(out), op->getLoc());
  if (failed(outType))
    return failure();
  if (auto constant = dyn_cast<tg::ConstantOp>(op)) {
    auto dense = cast<DenseElementsAttr>(constant.getValue());
    return outType->computeType + "(" +
           (isa<FloatType>(getElementType(out))
                ? formatNumber(dense.getSplatValue<APFloat>())
                : str(getElementType(out).isUnsignedInteger()
                          ? int64_t(dense.getSplatValue<APInt>().getZExtValue())
                          : dense.getSplatValue<APInt>().getSExtValue())) +
           ")";
  }
  SmallVector<std::string> loaded;
  std::string computeType = outType->computeType;
  bool isInt = computeType == "int64_t";
  for (Value operand : op->getOperands()) {
    FailureOr<std::string> value = element(operand, index, same);
    if (failed(value))
      return failure();
    loaded.push_back(*value);
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
  std::string text;
  if (auto bitcast = dyn_cast<tg::BitcastOp>(op)) {
    FailureOr<StorageType> inType =
        getStorageType(getElementType(bitcast.getOperand()), op->getLoc());
    if (failed(inType))
      return failure();
    text = getBitcastFormula(loaded[0], getElementType(bitcast.getOperand()),
                             *inType, getElementType(out), *outType);
  } else if (auto convert = dyn_cast<tg::ConvertOp>(op)) {
    Type target = getElementType(out);
    bool fromInt = !isa<FloatType>(getElementType(convert.getOperand()));
    if (target.isInteger(1))
      text = "(" + loaded[0] + " != 0)";
    else if (isa<IntegerType>(target) && !fromInt)
      text = "floatToInt(double(" + loaded[0] + "), " + outType->intMin + ", " +
             outType->intMax + ")";
    else
      text = "static_cast<" + outType->computeType + ">(" + loaded[0] + ")";
  } else {
    text = getFormula(op, loaded, computeType, isInt);
  }
  if (text.empty())
    return op->emitError("the CUDA emitter has no formula for ")
           << op->getName() << " on these element types";
  return text;
}

LogicalResult KernelEmitter::store(Value value, Operation *op) {
  FailureOr<StorageType> type =
      getStorageType(getElementType(value), op->getLoc());
  if (failed(type))
    return failure();
  int64_t count = getNumElements(value);
  beginPart(op, count, isReadable(value, /*same=*/true));
  openLoop(count);
  bool isFormula = formulas.count(value);
  FailureOr<std::string> text = element(value, "i", /*same=*/true);
  if (failed(text))
    return failure();
  formulas.erase(value);
  views.erase(value);
  pieces.erase(value);
  FailureOr<std::string> result = this->result(value);
  if (failed(result))
    return failure();
  if (!isFormula) // a formula's local has its comment
    comment(op, "    ");
  body += "    " + *result + "[i] = st<" + type->cType + ">(" + *text + ");\n";
  written[*result] = Written::Pointwise;
  return success();
}

LogicalResult KernelEmitter::emitElementwise(Operation *op) {
  Value out = op->getResult(0);
  formulas[out] = op;
  if (!needsMemory(out))
    return success();
  return store(out, op);
}

LogicalResult KernelEmitter::emitShape(Operation *op) {
  Value out = op->getResult(0);
  int64_t count = getNumElements(out);
  ArrayRef<int64_t> outShape = getShape(out);
  // Views: formulas at a mapped index, stored only where needed. A
  // reshape of a stored value is the same bytes under another shape.
  if (auto reshape = dyn_cast<tg::ReshapeOp>(op)) {
    auto it = bound.find(reshape.getOperand());
    if (it != bound.end() && !outputs.count(out)) {
      Bound view = it->second;
      bound[out] = view;
      return success();
    }
    views[out] = View{reshape.getOperand(), {}, {}, 0, /*identity=*/true};
    return needsMemory(out) ? store(out, op) : success();
  }
  if (isa<tg::BroadcastInDimOp, tg::TransposeOp, tg::SliceOp>(op)) {
    Value input = op->getOperand(0);
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
    } else {
      auto slice = cast<tg::SliceOp>(op);
      for (auto [i, stride] : llvm::enumerate(inStrides)) {
        offset += slice.getStartIndices()[i] * stride;
        strides[i] = slice.getStrides()[i] * stride;
      }
    }
    // The identity map: every dimension of extent above 1 at its row-major
    // stride, and the same element count.
    SmallVector<int64_t> rowMajor = getRowMajorStrides(outShape);
    bool identity = offset == 0 && count == getNumElements(input);
    for (auto [d, extent] : llvm::enumerate(outShape))
      identity &= extent == 1 || strides[d] == rowMajor[d];
    views[out] =
        View{input, SmallVector<int64_t>(outShape), strides, offset, identity};
    return needsMemory(out) ? store(out, op) : success();
  }
  if (auto constant = dyn_cast<tg::ConstantOp>(op)) {
    ElementsAttr value = constant.getValue();
    if (auto dense = dyn_cast<DenseElementsAttr>(value);
        dense && dense.isSplat()) {
      formulas[out] = op;
      return needsMemory(out) ? store(out, op) : success();
    }
    FailureOr<StorageType> type =
        getStorageType(getElementType(out), op->getLoc());
    FailureOr<std::string> result = this->result(out);
    if (failed(type) || failed(result))
      return failure();
    std::vector<std::string> values;
    if (auto floats = value.tryGetValues<APFloat>()) {
      for (APFloat v : *floats) {
        bool losesInfo = false;
        v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
        values.push_back(formatNumber(v));
      }
    } else if (auto ints = value.tryGetValues<APInt>()) {
      Type elementType = getElementType(out);
      bool zeroExtend =
          elementType.isInteger(1) || elementType.isUnsignedInteger();
      for (const APInt &v : *ints)
        values.push_back(
            str(zeroExtend ? int64_t(v.getZExtValue()) : v.getSExtValue()));
    } else {
      return op->emitError("the CUDA emitter cannot read this constant");
    }
    beginPart(op, count, /*join=*/true);
    closeLoop();
    comment(op, "  ");
    std::string table =
        "  static const " + type->computeType + " " + *result + "_values[] = {";
    for (auto [i, v] : llvm::enumerate(values))
      table += (i ? ", " : "") + v;
    body += table + "};\n";
    openLoop(count);
    body += "    " + *result + "[i] = st<" + type->cType + ">(" + *result +
            "_values[i]);\n";
    written[*result] = Written::Pointwise;
    return success();
  }
  if (isa<tg::PadOp, tg::ConcatOp>(op)) {
    pieces[out] = op;
    return needsMemory(out) ? store(out, op) : success();
  }
  return op->emitError("the CUDA emitter has no lowering for ")
         << op->getName();
}
