//===- Run.h - arguments and results on the interpreter ---------*- C++ -*-===//
//
// What `tgc run` and `tgc gradcheck` do around the interpreter: the
// arguments from --input files, known parameter values or random values;
// the results printed, written as .npy files, or compared.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DRIVER_RUN_H
#define TGC_DRIVER_RUN_H

#include "tgc/Eval/Tensor.h"
#include "tgc/Support/Npy.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <optional>
#include <string>
#include <vector>

namespace tgc {

struct ArgumentSources {
  /// `NAME=PATH` (.npy, or an ONNX TensorProto .pb), NAME a tg.name or argN.
  std::vector<std::string> inputs;
  /// Values of `param` arguments by tg.name (an ONNX model's, --params).
  llvm::StringMap<npy::Array> parameters;
  /// Accept NaN and infinity in --input files.
  bool allowNonFinite = false;
  /// Give every other argument a random value from this seed; none: an
  /// argument without a value is an error.
  std::optional<uint64_t> randomSeed;
  /// The names of the tensors of a --params file, when one is given: each
  /// must name an argument, and every `param` argument must be among them
  /// (or given by --input) unless `allowMissingParameters`.
  std::optional<llvm::StringSet<>> parameterFileNames;
  bool allowMissingParameters = false;
};

/// Adds the tensors of a .safetensors file to `parameters`.
mlir::LogicalResult readParameterFile(llvm::StringRef path,
                                      llvm::StringMap<npy::Array> &parameters);

/// The values of the arguments that `inputs` (`NAME=PATH`, as
/// ArgumentSources::inputs) give, by argument index; errors name the
/// argument or the file.
mlir::FailureOr<llvm::SmallVector<std::optional<Tensor>>>
readGivenArguments(mlir::FunctionOpInterface function,
                   llvm::ArrayRef<std::string> inputs, bool allowNonFinite);

/// The arguments of `function` from `sources`.
mlir::FailureOr<llvm::SmallVector<Tensor>>
prepareArguments(mlir::FunctionOpInterface function,
                 const ArgumentSources &sources);

/// One line per result: name, type, mean, largest magnitude, non-finite
/// count; with `printValues`, every element.
void printResult(llvm::raw_ostream &os, llvm::StringRef name,
                 const Tensor &tensor, bool printValues);

/// Writes DIR/<name>.npy per result; on any error removes what it wrote.
mlir::LogicalResult writeResults(mlir::FunctionOpInterface function,
                                 llvm::ArrayRef<Tensor> results,
                                 llvm::StringRef directory);

/// Compares `actual` with `expected` per result (numpy's allclose) and
/// prints the largest errors; failure when any result differs.
mlir::LogicalResult compareResults(mlir::FunctionOpInterface function,
                                   llvm::ArrayRef<Tensor> actual,
                                   llvm::ArrayRef<Tensor> expected, double rtol,
                                   double atol);

} // namespace tgc

#endif // TGC_DRIVER_RUN_H
