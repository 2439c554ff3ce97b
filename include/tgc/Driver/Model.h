//===- Model.h - reading and writing the models tgc is given ----*- C++ -*-===//
//
// What every subcommand does first and last: read a model (.mlir, or .onnx
// through the importer and the post-import passes, keeping the parameter
// values), find the function to work on, and write outputs so that an error
// leaves no partial file behind.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DRIVER_MODEL_H
#define TGC_DRIVER_MODEL_H

#include "tgc/Eval/Tensor.h"
#include "tgc/Import/ONNX/Importer.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace tgc {

/// Prints "tgc: error: MESSAGE" (an error that has no location in the
/// model) and returns failure.
mlir::LogicalResult reportError(const llvm::Twine &message);

/// An array a user gives in a file (`--input`, `--input-value`): .npy, or
/// an ONNX TensorProto (.pb).
llvm::Expected<npy::Array> readArrayFile(mlir::MLIRContext &context,
                                         llvm::StringRef path);

/// How an ONNX model becomes a module (`--input-shape`, `--input-value`,
/// `--loss-output`, `--add-loss`), as the user wrote them.
struct ModelImportFlags {
  std::vector<std::string> inputShapes;
  std::string lossOutput;
  /// `cross_entropy:LOGITS`.
  std::string addLoss;
  /// `--parameters FILE`, `--parameter GLOB`, `--buffer GLOB`.
  std::string parametersFile;
  std::vector<std::string> parameterGlobs;
  std::vector<std::string> bufferGlobs;
  /// `--input-value NAME=FILE` (.npy, or an ONNX TensorProto .pb).
  std::vector<std::string> inputValues;
  /// `--explain-attention`: tg-raise's remarks on the attentions it leaves
  /// decomposed.
  bool explainAttention = false;
};

struct LoadedModel {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// The parameter values an ONNX model carries, and its running
  /// statistics' (`tg.buffer` state), in argument order.
  std::vector<ImportedParameter> parameters;
  /// The initializers of an ONNX model imported as constants.
  std::vector<ImportedBuffer> buffers;
  /// The initializers imported as `tg.buffer` state.
  std::vector<ImportedBuffer> states;
};

/// Parses and verifies `path` (.mlir, or - for stdin; .onnx through the
/// importer and the post-import pipeline). Diagnostics go through
/// `sourceMgr`'s handler with file:line:col.
mlir::FailureOr<LoadedModel> loadModel(mlir::MLIRContext &context,
                                       llvm::SourceMgr &sourceMgr,
                                       llvm::StringRef path,
                                       const ModelImportFlags &flags);

/// The function to work on: `wanted`, else the only function, else @main;
/// an error listing the functions otherwise.
mlir::FunctionOpInterface findEntry(mlir::ModuleOp module,
                                    llvm::StringRef wanted,
                                    llvm::StringRef filename);

/// The values `tgc train --init imported` starts `entry`'s parameters from:
/// each of `parameters` named like a param argument of `entry` (or a
/// `tg.buffer` state argument: a running statistic), converted
/// to that argument's global type (the whole value, also of a partitioned
/// step). A parameter the model has no value for is absent: it starts from
/// its seeded value. A value that does not fit its argument is an error.
mlir::FailureOr<llvm::StringMap<Tensor>>
getImportedInitialValues(mlir::FunctionOpInterface entry,
                         llvm::ArrayRef<ImportedParameter> parameters);

/// Writes `file` (- for stdout) through `write`, through a temporary file
/// renamed at the end: on any error the file is as it was.
mlir::LogicalResult
writeOutputFile(llvm::StringRef file,
                llvm::function_ref<void(llvm::raw_ostream &)> write);

/// Writes `module` to `file` and, when `parameters` is not empty, the
/// parameters next to it (FILE.safetensors); on any error neither file is
/// changed. Refuses to write over `inputFile` (the model read), and a
/// `file` named like its parameters file.
mlir::LogicalResult writeModel(mlir::ModuleOp module,
                               llvm::ArrayRef<ImportedParameter> parameters,
                               llvm::StringRef file, llvm::StringRef inputFile);

} // namespace tgc

#endif // TGC_DRIVER_MODEL_H
