//===- PostImportPipeline.h - passes on every imported graph ----*- C++ -*-===//
//
// What runs on a module right after ONNX import, before any user pipeline:
// clean-up of the literal translation (canonicalize, CSE) and the raising of
// decomposed patterns to tg ops. It runs passes, so it lives here, above the
// importer, which is translation only.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_PIPELINE_POSTIMPORTPIPELINE_H
#define TGC_PIPELINE_POSTIMPORTPIPELINE_H

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace tgc {

/// Adds the post-import passes to `pm` (a pass manager on the module);
/// with `explainAttention`, tg-raise remarks on each reason it leaves an
/// attention decomposed.
void buildPostImportPipeline(mlir::OpPassManager &pm,
                             bool explainAttention = false);

} // namespace tgc

#endif // TGC_PIPELINE_POSTIMPORTPIPELINE_H
