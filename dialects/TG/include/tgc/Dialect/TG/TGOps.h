//===- TGOps.h - operations of the tg dialect ------------------*- C++ -*-===//
//
// Declares the tg ops (generated from TGOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DIALECT_TG_TGOPS_H
#define TGC_DIALECT_TG_TGOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGInterfaces.h"
#include "tgc/Dialect/TG/TGTraits.h"

#define GET_OP_CLASSES
#include "tgc/Dialect/TG/TGOps.h.inc"

namespace tgc::tg {
/// The bits tg.bitcast reinterprets per element of `elementType`: its width,
/// 8 for i1 (ONNX stores bool as a byte).
unsigned getBitcastWidth(mlir::Type elementType);
} // namespace tgc::tg

#endif // TGC_DIALECT_TG_TGOPS_H
