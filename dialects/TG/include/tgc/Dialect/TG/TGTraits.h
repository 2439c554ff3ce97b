//===- TGTraits.h - op traits of the tg dialect ----------------*- C++ -*-===//
//
// Marker traits that group tg ops for fusion: shape ops and reductions.
// (Elementwise ops carry MLIR's own `Elementwise` trait.)
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DIALECT_TG_TGTRAITS_H
#define TGC_DIALECT_TG_TGTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace tgc::tg::OpTrait {

/// The op moves or reinterprets data without arithmetic.
template <typename ConcreteType>
class ShapeOp : public mlir::OpTrait::TraitBase<ConcreteType, ShapeOp> {};

/// The op reduces along some dimensions of its first operand.
template <typename ConcreteType>
class ReductionOp : public mlir::OpTrait::TraitBase<ConcreteType, ReductionOp> {
};

} // namespace tgc::tg::OpTrait

#endif // TGC_DIALECT_TG_TGTRAITS_H
