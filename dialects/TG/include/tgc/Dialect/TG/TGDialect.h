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

#include <optional>

namespace mlir {
class Builder;
class FunctionOpInterface;
} // namespace mlir

namespace tgc::tg {

/// The `tg.role` of argument or result `index` of `function`, if it has a
/// known one (the verifier rejects the others).
std::optional<Role> getArgumentRole(mlir::FunctionOpInterface function,
                                    unsigned index);
std::optional<Role> getResultRole(mlir::FunctionOpInterface function,
                                  unsigned index);
/// The `tg.role` held by an argument or result attribute dictionary (null:
/// none).
std::optional<Role> getRole(mlir::DictionaryAttr attrs);

/// Whether argument `index` of `function` holds a value of the model, which
/// imports and checkpoints carry with the parameters: a `param`, or `state`
/// marked `tg.buffer` (a BatchNorm's running statistics; not optimizer
/// state).
bool isModelValue(mlir::FunctionOpInterface function, unsigned index);

/// Sets the `tg.role` of argument or result `index` of `function`.
void setArgumentRole(mlir::FunctionOpInterface function, unsigned index,
                     Role role);
void setResultRole(mlir::FunctionOpInterface function, unsigned index,
                   Role role);
/// The `tg.role = role` entry of an argument or result attribute dictionary.
mlir::NamedAttribute getRoleAttr(mlir::Builder &builder, Role role);

/// Whether an argument, or a result, may have `role`.
bool isArgumentRole(Role role);
bool isResultRole(Role role);

} // namespace tgc::tg

#endif // TGC_DIALECT_TG_TGDIALECT_H
