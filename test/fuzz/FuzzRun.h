//===- FuzzRun.h - running a fuzzed function on the interpreter -*- C++ -*-===//
//
// The fuzzers run what they accept on the interpreter, but only small
// functions: a mutant that asks for a 2^40-element tensor is refused by the
// interpreter's own check (Interpreter::checkCanRun), which is tested, and
// one that asks for a gigabyte would only make the fuzzer slow.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_TEST_FUZZ_FUZZRUN_H
#define TGC_TEST_FUZZ_FUZZRUN_H

#include "tgc/Interpreter/GlobalStep.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/Interpreter/Interpreter.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cstdlib>

namespace tgc::fuzz {

/// The fuzzers' diagnostic handler: swallows every diagnostic, or prints it
/// under TGC_FUZZ_VERBOSE=1 (to see why an input fails).
inline mlir::LogicalResult handleDiagnostic(mlir::Diagnostic &diagnostic) {
  static const bool verbose = getenv("TGC_FUZZ_VERBOSE");
  if (verbose)
    llvm::errs() << diagnostic.getLocation() << ": " << diagnostic << "\n";
  return mlir::success();
}

/// Runs `function` as `tgc run` does (a partitioned one on every simulated
/// rank) on random arguments drawn from `seed`, when its global arguments
/// hold fewer than 2^17 elements and each value fewer than 2^20; true when
/// it ran (whatever the outcome).
inline bool runIfSmall(mlir::FunctionOpInterface function, uint64_t seed) {
  if (function.isExternal())
    return false;
  for (mlir::Type type : function.getArgumentTypes()) {
    auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() ||
        tensor.getNumElements() >= (1 << 17))
      return false;
  }
  bool small = true;
  function->walk([&](mlir::Operation *op) {
    for (mlir::Type type : op->getResultTypes())
      if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type))
        small &= tensor.hasStaticShape() && tensor.getNumElements() < (1 << 20);
  });
  if (!small || mlir::failed(Interpreter::checkCanRun(function)))
    return false;
  mlir::FailureOr<GlobalStepRunner> runner = GlobalStepRunner::create(function);
  if (mlir::failed(runner))
    return false;
  int64_t elements = 0;
  for (mlir::RankedTensorType type : runner->getArgumentTypes())
    if ((elements += type.getNumElements()) >= (1 << 17))
      return false;
  llvm::SmallVector<Tensor> arguments;
  for (auto [a, type] : llvm::enumerate(runner->getArgumentTypes()))
    arguments.push_back(makeRandomArgument(function, a, seed, type));
  (void)runner->run(arguments);
  return true;
}

} // namespace tgc::fuzz

#endif // TGC_TEST_FUZZ_FUZZRUN_H
