//===- RunPasses.h - passes, with a pass's bug named as one ----*- C++ -*-===//
//
// The pass manager verifies the IR after every pass, and a verifier error
// is reported at the op it is about: after a pass bug, a line of the user's
// model that is correct. tgc's subcommands run their passes through
// runPasses, which tells the two apart.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_PIPELINE_RUNPASSES_H
#define TGC_PIPELINE_RUNPASSES_H

#include "mlir/Support/LLVM.h"

namespace mlir {
class Operation;
class PassManager;
} // namespace mlir

namespace tgc {

/// Runs `pm` on `op`, verifying the IR after every pass itself (in place of
/// the pass manager). When the IR does not verify after a pass that
/// reported no error, the error is "internal error: pass 'P' left IR that
/// does not verify; this is a bug in tgc, not in the model", at the op the
/// pass ran on, with the verifier's messages as notes at their locations;
/// the passes after it do not run. A pass's own errors are reported as they
/// are. The pass manager's own verifier is off during the run and on after
/// it. When the context already has an action handler (a debugger's), runs
/// `pm` as it is.
mlir::LogicalResult runPasses(mlir::PassManager &pm, mlir::Operation *op);

} // namespace tgc

#endif // TGC_PIPELINE_RUNPASSES_H
