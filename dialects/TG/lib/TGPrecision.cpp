//===- TGPrecision.cpp - PrecisionOpInterface of the tg ops ---------------===//
//
// Which operands of each op may run in bf16/f16 or fp8, which results take
// the op's compute type, and what the op accumulates in. Ops that keep the
// interface's defaults declare nothing here: shape ops (which follow their
// operands), the elementwise ops, embedding and dropout (reduced).
//
//===----------------------------------------------------------------------===//

#include "tgc/Dialect/TG/TGOps.h"

using namespace mlir;
using namespace tgc::tg;

namespace {
Type getF32(Operation *op) { return Float32Type::get(op->getContext()); }
} // namespace

//===----------------------------------------------------------------------===//
// Reductions, softmax and the loss: f32, as autocast does, because their sums
// and exponentials lose most to rounding.
//===----------------------------------------------------------------------===//

OperandPrecision ReduceOp::getOperandPrecision(unsigned) {
  return OperandPrecision::Full;
}
OperandPrecision SoftmaxOp::getOperandPrecision(unsigned) {
  return OperandPrecision::Full;
}
OperandPrecision LogSoftmaxOp::getOperandPrecision(unsigned) {
  return OperandPrecision::Full;
}
OperandPrecision CrossEntropyOp::getOperandPrecision(unsigned) {
  return OperandPrecision::Full;
}

//===----------------------------------------------------------------------===//
// Compute ops
//===----------------------------------------------------------------------===//

OperandPrecision MatmulOp::getOperandPrecision(unsigned) {
  return OperandPrecision::Fp8;
}
Type MatmulOp::getAccumulationType() { return getF32(*this); }

// Norms: the normalized input may be reduced (the statistics are f32 inside
// the op); the scale and bias are f32 master weights; mean and rstd are f32.
Type ExpertMatmulOp::getAccumulationType() { return getF32(*this); }
Type ExpertMatmulGradOp::getAccumulationType() { return getF32(*this); }

OperandPrecision LayerNormOp::getOperandPrecision(unsigned index) {
  return index == 0 ? OperandPrecision::Reduced : OperandPrecision::Full;
}
bool LayerNormOp::isResultInComputeType(unsigned index) { return index == 0; }
Type LayerNormOp::getAccumulationType() { return getF32(*this); }

OperandPrecision RmsNormOp::getOperandPrecision(unsigned index) {
  return index == 0 ? OperandPrecision::Reduced : OperandPrecision::Full;
}
bool RmsNormOp::isResultInComputeType(unsigned index) { return index == 0; }
Type RmsNormOp::getAccumulationType() { return getF32(*this); }

// Attention reads bf16 q/k/v like its GEMMs; scores, softmax and the
// log-sum-exp are f32 inside the op, and so is the bias added to them (the
// seed and offset of its dropout are integers, left alone).
OperandPrecision AttentionOp::getOperandPrecision(unsigned index) {
  return index >= 3 ? OperandPrecision::Full : OperandPrecision::Reduced;
}
bool AttentionOp::isResultInComputeType(unsigned index) { return index == 0; }
Type AttentionOp::getAccumulationType() { return getF32(*this); }

//===----------------------------------------------------------------------===//
// Mixed-precision ops: the operand keeps its type; the scale and the amax
// history are f32 state.
//===----------------------------------------------------------------------===//

OperandPrecision ScaleGradOp::getOperandPrecision(unsigned index) {
  return index == 0 ? OperandPrecision::Follow : OperandPrecision::Full;
}
OperandPrecision FakeQuantOp::getOperandPrecision(unsigned index) {
  return index == 0 ? OperandPrecision::Follow : OperandPrecision::Full;
}
OperandPrecision FakeQuantGradOp::getOperandPrecision(unsigned index) {
  return index == 0 ? OperandPrecision::Follow : OperandPrecision::Full;
}

//===----------------------------------------------------------------------===//
// Optimizer updates: f32 parameters, gradients and state.
//===----------------------------------------------------------------------===//

OperandPrecision SgdOp::getOperandPrecision(unsigned) {
  return OperandPrecision::Full;
}
OperandPrecision AdamWOp::getOperandPrecision(unsigned) {
  return OperandPrecision::Full;
}
OperandPrecision LambOp::getOperandPrecision(unsigned) {
  return OperandPrecision::Full;
}
OperandPrecision AdafactorOp::getOperandPrecision(unsigned) {
  return OperandPrecision::Full;
}
