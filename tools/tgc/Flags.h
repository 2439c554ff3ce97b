//===- Flags.h - the flags every tgc subcommand shares ----------*- C++ -*-===//
//
// The subcommands, and the flags more than one of them reads: the input,
// the ONNX import flags, the device, and the pipeline's knobs (one flag per
// knob of tgc::TrainingPipelineOptions, under the same name).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_TOOLS_TGC_FLAGS_H
#define TGC_TOOLS_TGC_FLAGS_H

#include "tgc/Analysis/Device.h"
#include "tgc/Driver/Model.h"
#include "tgc/Driver/Run.h"
#include "tgc/Pipeline/Options.h"

#include "llvm/Support/CommandLine.h"

#include <optional>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace tgc::cli {

llvm::cl::OptionCategory &getCategory();
llvm::cl::SubCommand &getCompileCommand();
llvm::cl::SubCommand &getReportCommand();
llvm::cl::SubCommand &getRunCommand();
llvm::cl::SubCommand &getTrainCommand();
llvm::cl::SubCommand &getImportCommand();
llvm::cl::SubCommand &getGradcheckCommand();
llvm::cl::SubCommand &getPlanCommand();

/// The positional input of compile, report, train, gradcheck and import.
llvm::StringRef getInputFile();
/// -o of compile and import: the module's file (- for stdout).
llvm::StringRef getOutputFile();
/// --entry: the function to work on (empty: the only one, or main).
llvm::StringRef getEntryName();
/// The ONNX import flags.
ModelImportFlags getImportFlags();
/// --device or --device-file, resolved; none when neither is given; an
/// error printed and failure when the choice is invalid.
mlir::FailureOr<std::optional<DeviceSpec>> getChosenDevice();
/// --dump-pass-pipeline: print the pass pipeline before it runs.
bool shouldDumpPipeline();

/// Fills `options` from the pipeline flags of the running subcommand; with
/// `trainingStep` (--train, or `tgc train`) and no --optimizer, AdamW. Fails
/// (with the error reported) on values out of their range.
mlir::LogicalResult fillPipelineOptions(TrainingPipelineOptions &options,
                                        bool trainingStep);
/// Whether any pipeline flag was given (a compiled step takes none).
bool anyPipelineFlagGiven();
/// --train: build the training step.
bool wantsTrainingStep();
/// --precision, when given.
std::optional<PrecisionPolicy> getGivenPrecision();
/// --optimizer (None when not given).
OptimizerKind getOptimizer();

/// The arguments of a function to interpret, from --input, --params, the
/// model's parameter values and --random-inputs (else `defaultSeed`).
mlir::FailureOr<ArgumentSources>
getArgumentSources(llvm::ArrayRef<ImportedParameter> modelParameters,
                   std::optional<uint64_t> defaultSeed);

/// The subcommands.
mlir::LogicalResult runCompile(mlir::MLIRContext &context,
                               llvm::SourceMgr &sourceMgr);
mlir::LogicalResult runReport(mlir::MLIRContext &context,
                              llvm::SourceMgr &sourceMgr);
mlir::LogicalResult runRun(mlir::MLIRContext &context,
                           llvm::SourceMgr &sourceMgr);
mlir::LogicalResult runTrain(mlir::MLIRContext &context,
                             llvm::SourceMgr &sourceMgr);
mlir::LogicalResult runImport(mlir::MLIRContext &context,
                              llvm::SourceMgr &sourceMgr);
mlir::LogicalResult runGradcheck(mlir::MLIRContext &context,
                                 llvm::SourceMgr &sourceMgr);
mlir::LogicalResult runPlan(mlir::MLIRContext &context,
                            llvm::SourceMgr &sourceMgr);

} // namespace tgc::cli

#endif // TGC_TOOLS_TGC_FLAGS_H
