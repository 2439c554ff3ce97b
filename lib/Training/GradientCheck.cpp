//===- GradientCheck.cpp - gradients against finite differences -----------===//

#include "tgc/Training/GradientCheck.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Interpreter/Interpreter.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <cmath>
#include <limits>
#include <random>

using namespace mlir;
using namespace tgc;

/// The f64 copy of `tensor` with `direction * step` added.
static Tensor perturbed(const Tensor &tensor, ArrayRef<double> direction,
                        double step) {
  Tensor result(tensor.getType(), Tensor::Storage::Double);
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i)
    result.doubles()[i] = tensor.getAsDouble(i) + step * direction[i];
  return result;
}

FailureOr<std::vector<ParameterGradientCheck>>
tgc::checkGradients(func::FuncOp forward, ArrayRef<Tensor> arguments,
                    const GradientCheckOptions &options) {
  // Differentiate a copy, in a module of its own.
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(forward.getLoc());
  auto differentiated = cast<func::FuncOp>(forward->clone());
  scratch->getBody()->push_back(differentiated);
  PassManager pm(forward.getContext());
  pm.addPass(createTGAutodiff());
  if (failed(pm.run(*scratch)))
    return failure();

  std::optional<unsigned> lossIndex;
  for (unsigned i = 0, e = forward.getNumResults(); i < e; ++i)
    if (tg::getResultRole(forward, i) == tg::Role::Loss)
      lossIndex = i;
  if (!lossIndex)
    return forward.emitError("has no 'loss' result to check gradients of");

  InterpreterOptions f64;
  f64.f64 = true;
  Interpreter interpreter(f64);
  FailureOr<SmallVector<Tensor>> analytic =
      interpreter.run(differentiated, arguments);
  if (failed(analytic))
    return failure();

  double lossValue = (*analytic)[*lossIndex].getAsDouble(0);
  auto lossAt = [&](ArrayRef<Tensor> args) -> FailureOr<double> {
    FailureOr<SmallVector<Tensor>> results = interpreter.run(forward, args);
    if (failed(results))
      return failure();
    return (*results)[*lossIndex].getAsDouble(0);
  };

  std::mt19937_64 generator(options.seed);
  std::normal_distribution<double> normal;
  std::vector<ParameterGradientCheck> checks;
  unsigned gradIndex = forward.getNumResults();
  for (unsigned arg = 0, e = forward.getNumArguments(); arg < e; ++arg) {
    if (tg::getArgumentRole(forward, arg) != tg::Role::Param ||
        !isa<FloatType>(getElementTypeOrSelf(forward.getArgumentTypes()[arg])))
      continue;
    const Tensor &grad = (*analytic)[gradIndex++];
    auto name = differentiated.getResultAttrOfType<StringAttr>(
        gradIndex - 1, tg::TGDialect::kNameAttrName);
    ParameterGradientCheck check{name ? name.str() : "?", 0.0, 0};
    int64_t size = grad.getNumElements();

    double gradNorm = 0.0;
    for (int64_t i = 0; i < size; ++i)
      gradNorm += grad.getAsDouble(i) * grad.getAsDouble(i);
    gradNorm = std::sqrt(gradNorm);

    // Unit-norm directions: the gradient's own (the largest signal), random
    // ones, then unit vectors for small parameters.
    std::vector<std::vector<double>> directions;
    auto addNormalized = [&](std::vector<double> direction) {
      double norm = 0.0;
      for (double x : direction)
        norm += x * x;
      if (norm == 0.0)
        return;
      for (double &x : direction)
        x /= std::sqrt(norm);
      directions.push_back(std::move(direction));
    };
    std::vector<double> along(size);
    for (int64_t i = 0; i < size; ++i)
      along[i] = grad.getAsDouble(i);
    addNormalized(std::move(along));
    for (unsigned d = 0; d < options.directions; ++d) {
      std::vector<double> direction(size);
      for (double &x : direction)
        x = normal(generator);
      addNormalized(std::move(direction));
    }
    if (size <= options.maxElementwiseSize)
      for (int64_t i = 0; i < size; ++i) {
        std::vector<double> unit(size, 0.0);
        unit[i] = 1.0;
        addNormalized(std::move(unit));
      }

    SmallVector<Tensor> args(arguments.begin(), arguments.end());
    // The central difference with step h along `direction`.
    auto centralDifference = [&](const std::vector<double> &direction,
                                 double h) -> FailureOr<double> {
      args[arg] = perturbed(arguments[arg], direction, h);
      FailureOr<double> plus = lossAt(args);
      args[arg] = perturbed(arguments[arg], direction, -h);
      FailureOr<double> minus = lossAt(args);
      if (failed(plus) || failed(minus))
        return failure();
      return (*plus - *minus) / (2 * h);
    };
    for (const std::vector<double> &direction : directions) {
      // Richardson extrapolation of two steps cancels the h^2 error term, so
      // a step large enough to keep rounding noise small stays accurate.
      FailureOr<double> coarse = centralDifference(direction, options.epsilon);
      FailureOr<double> fine =
          centralDifference(direction, options.epsilon / 2);
      if (failed(coarse) || failed(fine))
        return failure();
      double numeric = (4 * *fine - *coarse) / 3;
      double exact = 0.0;
      for (int64_t i = 0; i < size; ++i)
        exact += grad.getAsDouble(i) * direction[i];
      // Directional derivatives along unit directions are at most |g|, the
      // natural scale of the error. A difference below the rounding noise of
      // the loss itself (64 ulps of it, divided by the step) says nothing.
      double difference = std::abs(numeric - exact);
      double noise = 64 * std::numeric_limits<double>::epsilon() *
                     std::max(1.0, std::abs(lossValue)) / options.epsilon;
      double scale =
          std::max({std::abs(numeric), std::abs(exact), gradNorm, 1e-300});
      double error = difference <= noise ? 0.0 : difference / scale;
      if (std::isnan(difference))
        error = INFINITY;
      check.maxRelativeError = std::max(check.maxRelativeError, error);
      ++check.checks;
    }
    checks.push_back(std::move(check));
  }
  return checks;
}
