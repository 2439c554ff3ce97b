//===- RunPasses.cpp - passes, with a pass's bug named as one -------------===//

#include "tgc/Pipeline/RunPasses.h"

#include "mlir/IR/Action.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Threading.h"

#include <atomic>

using namespace mlir;

namespace {
/// Runs one pass (a PassExecutionAction) and checks what it left.
class PassChecker {
public:
  explicit PassChecker(MLIRContext *context) : context(context) {}

  bool isBroken() const { return broken; }

  void operator()(function_ref<void()> transform,
                  const tracing::Action &action) {
    const auto *execution = dyn_cast<PassExecutionAction>(&action);
    if (!execution)
      return transform();
    // After a broken pass nothing runs on what it left.
    if (broken)
      return;
    const Pass &pass = execution->getPass();
    // A pass manager nested in the pipeline: its passes come as their own
    // actions.
    if (pass.getArgument().empty())
      return transform();

    // Nested pass managers run their passes on several threads; only this
    // thread's diagnostics are this pass's.
    uint64_t thread = llvm::get_threadid();
    unsigned errors = 0;
    {
      ScopedDiagnosticHandler counter(context, [&](Diagnostic &diagnostic) {
        if (diagnostic.getSeverity() == DiagnosticSeverity::Error &&
            llvm::get_threadid() == thread)
          ++errors;
        return failure();
      });
      transform();
    }
    // The pass failed with its own message; what it left is not checked
    // (as the pass manager does not).
    if (errors)
      return;

    Operation *op = execution->getOp();
    SmallVector<Diagnostic> found;
    LogicalResult verified = success();
    {
      ScopedDiagnosticHandler capture(context, [&](Diagnostic &diagnostic) {
        if (llvm::get_threadid() != thread)
          return failure();
        found.push_back(std::move(diagnostic));
        return success();
      });
      verified = verify(op);
    }
    if (succeeded(verified))
      return;
    broken = true;
    InFlightDiagnostic error =
        emitError(op->getLoc())
        << "internal error: pass '" << pass.getArgument()
        << "' left IR that does not verify; this is a bug in tgc, not in the "
           "model (please report it with the model and the command)";
    for (Diagnostic &diagnostic : found) {
      error.attachNote(diagnostic.getLocation())
          << "the verifier: " << diagnostic.str();
      for (Diagnostic &note : diagnostic.getNotes())
        error.attachNote(note.getLocation()) << note.str();
    }
  }

private:
  MLIRContext *context;
  std::atomic<bool> broken{false};
};
} // namespace

LogicalResult tgc::runPasses(PassManager &pm, Operation *op) {
  MLIRContext *context = pm.getContext();
  if (context->hasActionHandler())
    return pm.run(op);
  PassChecker checker(context);
  pm.enableVerifier(false);
  context->registerActionHandler(
      [&](function_ref<void()> transform, const tracing::Action &action) {
        checker(transform, action);
      });
  LogicalResult result = pm.run(op);
  context->registerActionHandler(nullptr);
  pm.enableVerifier(true);
  return failure(failed(result) || checker.isBroken());
}
