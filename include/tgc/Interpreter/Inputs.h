//===- Inputs.h - arguments for the interpreter: files and random -*- C++
//-*-===//
//
// Where the interpreter's arguments come from: .npy files named by the user,
// or random values with a documented distribution per role; and how results
// go back to .npy files.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_INTERPRETER_INPUTS_H
#define TGC_INTERPRETER_INPUTS_H

#include "tgc/Interpreter/Tensor.h"
#include "tgc/Support/Npy.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace tgc {

/// The name of argument `index`: its `tg.name`, else `arg<index>`.
std::string getArgumentName(mlir::FunctionOpInterface function, unsigned index);
/// The name of result `index`: its `tg.name`, else its index.
std::string getResultName(mlir::FunctionOpInterface function, unsigned index);

/// A value for argument `index` of `function`: its `tg.default` if it has
/// one, else a random value from `seed`:
///  - `param`: normal, mean 0, standard deviation 0.02, or its `tg.init`
///    ("zeros", "ones");
///  - `state`: zeros;
///  - `label` (integer): uniform class ids in [0, C), C being the class
///    dimension of the cross-entropy that reads it (else [0, 2));
///  - `hyper`: integers uniform in [0, 2^31) (seeds), floats 1e-3;
///  - `input` and no role: floats normal(0, 1); integers uniform in [0, V)
///    for embedding ids (V rows), else in [0, 16).
/// Each argument draws from its own generator, seeded by (seed, index), so a
/// value does not change when other arguments are added or given as files.
Tensor makeRandomArgument(mlir::FunctionOpInterface function, unsigned index,
                          uint64_t seed);

/// The tensor held by `array` as a value of `type`, for argument `name`.
/// Accepted: f32 <- f4; f64 <- f8 (or f4); f16 <- f2 or f4; bf16 and f8 <-
/// f4; i64 <- i8 or i4; i32 <- i4 (or i8 within range); i1 <- b1. Values
/// are rounded to `type` when it has lower precision. Non-finite floats are
/// an error unless `allowNonFinite`.
llvm::Expected<Tensor> tensorFromNpy(const npy::Array &array,
                                     mlir::RankedTensorType type,
                                     llvm::StringRef name, bool allowNonFinite);

/// The array to write for `tensor`: f32, f16, bf16 and f8 as f4 (their
/// values are exact in f4, with or without precision emulation); f64, or any
/// float held in double (f64 mode), as f8; i64 as i8, i32 as i4, i1 as b1.
npy::Array tensorToNpy(const Tensor &tensor);

} // namespace tgc

#endif // TGC_INTERPRETER_INPUTS_H
