//===- GradientCheck.h - gradients against finite differences --*- C++ -*-===//
//
// Checks the gradients tg-autodiff builds against central finite differences
// of the loss (Richardson-extrapolated), in the f64 interpreter: along the
// gradient and random directions for every parameter, and element by element
// for small parameters.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_TRAINING_GRADIENTCHECK_H
#define TGC_TRAINING_GRADIENTCHECK_H

#include "tgc/Eval/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace tgc {

struct GradientCheckOptions {
  /// The larger step of the central differences along unit-norm directions
  /// (Richardson extrapolation combines it with half of it).
  double epsilon = 1e-3;
  /// Random directions per parameter.
  unsigned directions = 3;
  /// Parameters with at most this many elements are also checked per
  /// element.
  int64_t maxElementwiseSize = 16;
  /// Seeds the directions.
  uint64_t seed = 0;
};

struct ParameterGradientCheck {
  std::string name;
  /// max |numeric - analytic| / max(|numeric|, |analytic|, |gradient|) over
  /// the unit directions checked (the gradient's own, random ones, and each
  /// element of a small parameter). A difference below the rounding noise of
  /// the loss (64 ulps of it divided by the step) counts as 0: no finite
  /// difference can resolve it.
  double maxRelativeError = 0.0;
  unsigned checks = 0;
};

/// Differentiates `forward` (a function with a loss result) on a copy, runs
/// both in the f64 interpreter on `arguments`, and compares each parameter's
/// gradient with finite differences. Errors are reported on the function.
mlir::FailureOr<std::vector<ParameterGradientCheck>>
checkGradients(mlir::func::FuncOp forward, llvm::ArrayRef<Tensor> arguments,
               const GradientCheckOptions &options);

} // namespace tgc

#endif // TGC_TRAINING_GRADIENTCHECK_H
