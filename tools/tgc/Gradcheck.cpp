//===- Gradcheck.cpp - tgc gradcheck: gradients against differences -------===//

#include "Flags.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Training/GradientCheck.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>

using namespace mlir;
using namespace tgc;
namespace cl = llvm::cl;

#define TGC_GRADCHECK                                                          \
  cl::sub(cli::getGradcheckCommand()), cl::cat(cli::getCategory())

static cl::opt<double> epsilon(
    "epsilon",
    cl::desc("Step of the central differences along unit directions "
             "(default 1e-3; Richardson extrapolation also uses half of it)"),
    cl::init(1e-3), TGC_GRADCHECK);
static cl::opt<unsigned>
    directions("directions",
               cl::desc("Random directions per parameter (default 3)"),
               cl::init(3), TGC_GRADCHECK);
static cl::opt<double>
    tolerance("tolerance",
              cl::desc("Largest relative error accepted (default 1e-6)"),
              cl::init(1e-6), TGC_GRADCHECK);

/// Whether `function` returns a loss.
static bool hasLoss(func::FuncOp function) {
  for (unsigned i = 0, e = function.getNumResults(); i < e; ++i)
    if (tg::getResultRole(function, i) == tg::Role::Loss)
      return true;
  return false;
}

LogicalResult cli::runGradcheck(MLIRContext &context,
                                llvm::SourceMgr &sourceMgr) {
  auto format = [](double value) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%g", value);
    return text;
  };
  // A zero step divides zero by zero: every check would "differ".
  if (!std::isfinite(epsilon) || epsilon <= 0 || epsilon > 1)
    return reportError("--epsilon must be a finite number in (0, 1], got " +
                       format(epsilon));
  if (directions < 1 || directions > 1024)
    return reportError("--directions must be in [1, 1024], got " +
                       llvm::Twine(directions.getValue()));
  if (!std::isfinite(tolerance) || tolerance < 0)
    return reportError("--tolerance must be a finite number >= 0, got " +
                       format(tolerance));
  FailureOr<LoadedModel> model =
      loadModel(context, sourceMgr, getInputFile(), getImportFlags());
  if (failed(model))
    return failure();
  SmallVector<func::FuncOp> functions;
  for (auto function : model->module->getOps<func::FuncOp>())
    if (hasLoss(function) &&
        (getEntryName().empty() || function.getName() == getEntryName()))
      functions.push_back(function);
  if (functions.empty())
    return reportError(getInputFile() + " has no function " +
                       (getEntryName().empty()
                            ? std::string("with a loss result")
                            : "'" + getEntryName().str() + "' with a loss") +
                       " to check");
  // Random values (seed 0) unless told otherwise; the seed also draws the
  // directions.
  FailureOr<ArgumentSources> sources =
      getArgumentSources(model->parameters, /*defaultSeed=*/0);
  if (failed(sources))
    return failure();
  GradientCheckOptions options;
  options.epsilon = epsilon;
  options.directions = directions;
  options.seed = *sources->randomSeed;
  bool allPassed = true;
  for (func::FuncOp function : functions) {
    FailureOr<SmallVector<Tensor>> arguments =
        prepareArguments(function, *sources);
    if (failed(arguments))
      return failure();
    FailureOr<std::vector<ParameterGradientCheck>> checks =
        checkGradients(function, *arguments, options);
    if (failed(checks))
      return failure();
    for (const ParameterGradientCheck &check : *checks) {
      bool passed = check.maxRelativeError <= tolerance;
      allPassed &= passed;
      llvm::outs() << "@" << function.getName() << " " << check.name << ": "
                   << llvm::format("max relative error %.3g over %u checks",
                                   check.maxRelativeError, check.checks)
                   << (passed ? " ok" : " FAIL") << "\n";
    }
  }
  if (!allPassed)
    llvm::errs() << "tgc: error: gradients differ from finite differences "
                    "beyond "
                 << llvm::format("%g", double(tolerance)) << "\n";
  return success(allPassed);
}
