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

#endif // TGC_DIALECT_TG_TGDIALECT_H
