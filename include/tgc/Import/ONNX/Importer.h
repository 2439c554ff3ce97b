//===- Importer.h - ONNX models to tg functions -----------------*- C++ -*-===//
//
// Turns an ONNX model (opsets 13 to 21; older forms of the migrated
// attributes too) into a module with one tg `func.func @main`: float
// initializers become `param` arguments whose values come back beside the
// module, graph inputs become `input` arguments, everything computable at
// import (shape sub-graphs, non-float initializers) is folded to constants.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_IMPORT_ONNX_IMPORTER_H
#define TGC_IMPORT_ONNX_IMPORTER_H

#include "tgc/Support/Npy.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace tgc {

struct ONNXImportOptions {
  /// Shapes of graph inputs, binding their symbolic dimensions.
  llvm::StringMap<std::vector<int64_t>> inputShapes;
  /// Values of graph inputs fixed at import (`--input-value NAME=FILE`):
  /// each becomes a constant, as an operand tg needs at import must be (a
  /// Reshape's shape, a Slice's starts, TopK's k, a Trilu's k). The value's
  /// shape is the input's.
  llvm::StringMap<npy::Array> inputValues;
  /// The graph output that is the loss (a scalar): it gets `tg.role = loss`.
  /// Empty: an output named "loss" that is a float scalar, if any.
  std::string lossOutput;
  /// The graph output whose logits get a `tg.cross_entropy` (mean) against a
  /// new `label` argument, returned first as the loss. Excludes lossOutput.
  std::string crossEntropyLogits;

  // Which float initializers are trained parameters; the others (buffers:
  // masks, rotary tables, inv_freq...) import as constants. The first that
  // applies decides, in this order:
  /// Globs over initializer names forced to be parameters (`--parameter`).
  std::vector<std::string> parameterGlobs;
  /// Globs over initializer names forced to be buffers (`--buffer`).
  std::vector<std::string> bufferGlobs;
  /// The names of the parameters (`--parameters FILE`, e.g. from PyTorch's
  /// `model.named_parameters()`): the others are buffers.
  std::optional<std::vector<std::string>> parameterNames;
  // Else the evidence in the graph (docs/import.md, "Parameters and
  // buffers").
};

/// A float initializer the import treats as a buffer, and why.
struct ImportedBuffer {
  std::string name;
  std::string reason;
};

/// One parameter's value: its `tg.name` and the initializer's data.
struct ImportedParameter {
  std::string name;
  npy::Array value;
};

struct ImportedModel {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// The initial values of the `param` arguments of @main and of its
  /// `tg.buffer` state arguments, in the order of the arguments.
  std::vector<ImportedParameter> parameters;
  /// The float initializers imported as constants, in the model's order.
  std::vector<ImportedBuffer> buffers;
  /// The float initializers imported as `tg.buffer` state arguments (their
  /// values are among `parameters`): the running statistics of
  /// training-mode BatchNormalizations, which the step updates.
  std::vector<ImportedBuffer> states;
};

/// Parses an `--input-shape` value, "NAME=2x128" (a shape of "" or
/// "scalar" is rank 0), into `shapes`.
llvm::Error parseInputShape(llvm::StringRef spec,
                            llvm::StringMap<std::vector<int64_t>> &shapes);

/// Imports the model in the file `path` (external data files are looked up
/// next to it). Errors are emitted as diagnostics on the context, located
/// at the model file with the node's name and op type.
mlir::FailureOr<ImportedModel> importONNXFile(mlir::MLIRContext &context,
                                              llvm::StringRef path,
                                              const ONNXImportOptions &options);

/// Imports a serialized ModelProto held in memory; `name` stands for the
/// file in diagnostics, `baseDirectory` is where external data is looked up
/// (empty: external data is refused).
mlir::FailureOr<ImportedModel>
importONNXBytes(mlir::MLIRContext &context, llvm::StringRef bytes,
                llvm::StringRef name, llvm::StringRef baseDirectory,
                const ONNXImportOptions &options);

/// Reads a serialized ONNX TensorProto (the backend tests' input_0.pb...):
/// its name (may be empty), the MLIR element type it holds, and its value.
struct ONNXTensorFile {
  std::string name;
  mlir::Type elementType;
  npy::Array value;
};
/// With `uint16AsBFloat16` (the reader expects a bfloat16 tensor), a UINT16
/// file holds bfloat16 bits and is read as bfloat16: ONNX's backend test
/// data before onnx 1.13 stored bfloat16 tensors so.
llvm::Expected<ONNXTensorFile>
readONNXTensorFile(mlir::MLIRContext &context, llvm::StringRef path,
                   bool uint16AsBFloat16 = false);

/// Writes `parameters` to the safetensors file `path`, or its bytes to `os`.
llvm::Error writeParameters(llvm::StringRef path,
                            llvm::ArrayRef<ImportedParameter> parameters);
llvm::Error writeParameters(llvm::raw_ostream &os,
                            llvm::ArrayRef<ImportedParameter> parameters);

} // namespace tgc

#endif // TGC_IMPORT_ONNX_IMPORTER_H
