//===- TGDialect.h - the tg dialect ----------------------------*- C++ -*-===//
//
// Declares the tg dialect and its enums.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DIALECT_TG_TGDIALECT_H
#define TGC_DIALECT_TG_TGDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"

#include "tgc/Dialect/TG/TGDialect.h.inc"
#include "tgc/Dialect/TG/TGEnums.h.inc"

namespace mlir {
class FunctionOpInterface;
} // namespace mlir

namespace tgc::tg {

/// The `tg.role` of argument or result `index` of `function` ("" if none).
llvm::StringRef getArgumentRole(mlir::FunctionOpInterface function,
                                unsigned index);
llvm::StringRef getResultRole(mlir::FunctionOpInterface function,
                              unsigned index);

} // namespace tgc::tg

#endif // TGC_DIALECT_TG_TGDIALECT_H
