//===- TensorNpy.h - host tensors from and to .npy arrays -------*- C++ -*-===//
//
// The conversions between .npy arrays and host tensors, shared by the
// interpreter's inputs and outputs and by the ONNX importer's initializers.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_EVAL_TENSORNPY_H
#define TGC_EVAL_TENSORNPY_H

#include "tgc/Eval/Tensor.h"
#include "tgc/Support/Npy.h"

#include "llvm/Support/Error.h"

namespace tgc {

/// The tensor held by `array` as a value of `type`, for argument `name`.
/// Accepted: f32 <- f4; f64 <- f8 (or f4); f16 <- f2 or f4; bf16 and f8 <-
/// f4; an integer type <- any integer dtype whose values fit it (i64 <- i8,
/// ui8 <- u1 or i8 within 0..255...); i1 <- b1. Values
/// are rounded to `type` when it has lower precision. Non-finite floats are
/// an error unless `allowNonFinite`. The shapes match, or, with
/// `allowSplitView` (a parameter's value), `type` views one dimension N of
/// the array as [k, N/k]: the same row-major elements, a fused weight that
/// tg-split-fused-projections split.
llvm::Expected<Tensor> tensorFromNpy(const npy::Array &array,
                                     mlir::RankedTensorType type,
                                     llvm::StringRef name, bool allowNonFinite,
                                     bool allowSplitView = false);

/// The array to write for `tensor`: f32, f16, bf16 and f8 as f4 (their
/// values are exact in f4, with or without precision emulation); f64, or any
/// float held in double (f64 mode), as f8; i64 as i8, i32 as i4, i16 as
/// i2, i8 as i1, ui32/ui16/ui8 as u4/u2/u1, i1 as b1.
npy::Array tensorToNpy(const Tensor &tensor);

/// The .npy dtype of integer element type `elementType` (not i1).
npy::DType getIntegerDType(mlir::Type elementType);

} // namespace tgc

#endif // TGC_EVAL_TENSORNPY_H
