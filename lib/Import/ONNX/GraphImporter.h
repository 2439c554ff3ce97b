//===- GraphImporter.h - state of one ONNX graph import ---------*- C++ -*-===//
//
// Private to lib/Import/ONNX: what the op converters see while a graph is
// imported (values by ONNX name, the current node, its attributes and
// inputs), and the builder that folds every op whose operands are all
// constants with its kernel from lib/Eval.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_IMPORT_ONNX_GRAPHIMPORTER_H
#define TGC_LIB_IMPORT_ONNX_GRAPHIMPORTER_H

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Eval/Kernels.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <optional>

namespace tgc::onnx_import {

/// The largest tensor the importer reads (elements).
constexpr int64_t kMaxImportElements = int64_t(1) << 31;
/// The largest tensor the importer computes at import (elements): larger
/// constants would make the module itself huge.
constexpr int64_t kMaxFoldElements = int64_t(1) << 24;

/// The MLIR element type of an ONNX TensorProto data type, or null where tg
/// has none (strings, complex, 8/16-bit and unsigned integers).
mlir::Type getElementType(mlir::MLIRContext &context, int32_t dataType);
/// The ONNX name of a TensorProto data type ("FLOAT", "UINT8"...).
std::string getDataTypeName(int32_t dataType);

/// The value of a TensorProto (inline, raw or external data).
llvm::Expected<Tensor> decodeTensorProto(mlir::MLIRContext &context,
                                         const onnx::TensorProto &proto,
                                         llvm::StringRef baseDirectory);

/// A tensor of `type` as an MLIR constant attribute.
mlir::DenseElementsAttr toAttribute(const Tensor &tensor);

class GraphImporter {
public:
  GraphImporter(mlir::OpBuilder &builder, llvm::StringRef modelName,
                int64_t opset)
      : builder(builder), modelName(modelName.str()), opset(opset) {}

  mlir::OpBuilder &builder;
  std::string modelName;
  int64_t opset;
  /// Where external data files are looked up (empty: refused).
  std::string baseDirectory;

  //===--------------------------------------------------------------------===//
  // Values by ONNX name
  //===--------------------------------------------------------------------===//

  void define(llvm::StringRef name, mlir::Value value) { values[name] = value; }
  bool isDefined(llvm::StringRef name) const { return values.count(name); }
  mlir::Value lookup(llvm::StringRef name) const { return values.lookup(name); }
  /// The value of a constant (a tg.constant built here), or null.
  const Tensor *getConstant(mlir::Value value) const;
  /// A tg.constant holding `tensor`.
  mlir::Value constant(Tensor tensor);
  mlir::Value constant(mlir::RankedTensorType type,
                       llvm::ArrayRef<double> values);
  mlir::Value constantInts(llvm::ArrayRef<int64_t> values, mlir::Type type);
  /// A scalar of `elementType` broadcast to `type`'s shape.
  mlir::Value splat(mlir::RankedTensorType type, double value);

  //===--------------------------------------------------------------------===//
  // The current node
  //===--------------------------------------------------------------------===//

  void setNode(const onnx::NodeProto *node, mlir::Location location) {
    this->node = node;
    this->location = location;
  }
  const onnx::NodeProto &getNode() const { return *node; }
  mlir::Location getLoc() const { return location; }
  /// An error about the current node: "node 'N' (Op, opset K): ...".
  mlir::InFlightDiagnostic emitNodeError();
  mlir::LogicalResult fail(const llvm::Twine &message) {
    emitNodeError() << message;
    return mlir::failure();
  }

  /// Input `index`, or null when absent (an optional input left empty).
  mlir::Value input(unsigned index) const;
  /// Input `index`, which must be present and be a tensor of tg's types.
  mlir::FailureOr<mlir::Value> requireInput(unsigned index);
  unsigned getNumInputs() const { return node->input_size(); }
  unsigned getNumOutputs() const { return node->output_size(); }
  /// Whether output `index` is wanted (present and named).
  bool hasOutput(unsigned index) const {
    return int(index) < node->output_size() && !node->output(index).empty();
  }
  void setOutput(unsigned index, mlir::Value value);

  /// The integers of input `index`, which must be a constant integer tensor
  /// (shape operands: computed at import); `what` names it in errors.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  requireConstantInts(unsigned index, llvm::StringRef what);
  /// The float value of a constant scalar input.
  mlir::FailureOr<double> requireConstantScalar(unsigned index,
                                                llvm::StringRef what);

  const onnx::AttributeProto *attribute(llvm::StringRef name) const;
  int64_t getInt(llvm::StringRef name, int64_t defaultValue) const;
  float getFloat(llvm::StringRef name, float defaultValue) const;
  std::string getString(llvm::StringRef name,
                        llvm::StringRef defaultValue) const;
  std::optional<llvm::SmallVector<int64_t>> getInts(llvm::StringRef name) const;

  /// Axes from an input (newer opsets) or an attribute (older ones).
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  getAxes(unsigned inputIndex, llvm::StringRef attributeName);
  /// `axis` in [-rank, rank) made non-negative, else an error.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);

  //===--------------------------------------------------------------------===//
  // Building ops
  //===--------------------------------------------------------------------===//

  /// Builds `OpTy`, verifies it and, when every operand is a constant,
  /// replaces it by the constants its interpreter kernel computes. After an
  /// error, ops are still built (so that converters need no checks at every
  /// step) but neither verified nor folded; `hadError` reports it.
  template <typename OpTy, typename... Args>
  llvm::SmallVector<mlir::Value> createResults(Args &&...args) {
    OpTy op = OpTy::create(builder, location, std::forward<Args>(args)...);
    return finish(op.getOperation());
  }
  template <typename OpTy, typename... Args>
  mlir::Value create(Args &&...args) {
    return createResults<OpTy>(std::forward<Args>(args)...).front();
  }
  bool hadError() const { return errorSeen; }
  void setError() { errorSeen = true; }

  //===--------------------------------------------------------------------===//
  // Shape helpers shared by the converters
  //===--------------------------------------------------------------------===//

  static mlir::RankedTensorType getType(mlir::Value value) {
    return llvm::cast<mlir::RankedTensorType>(value.getType());
  }
  mlir::Value reshape(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value value, llvm::ArrayRef<int64_t> perm);
  mlir::Value convert(mlir::Value value, mlir::Type elementType);
  /// Broadcasts `value` to `shape` with numpy's right-aligned rule.
  mlir::Value broadcastTo(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  /// The numpy broadcast of several shapes, or an error on the node.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  broadcastShapes(llvm::ArrayRef<mlir::Value> values);
  /// Reduces over `dims` (any order, no duplicates), keeping them as size-1
  /// dimensions when `keepDims`.
  mlir::Value reduce(tg::ReduceKind kind, mlir::Value value,
                     llvm::ArrayRef<int64_t> dims, bool keepDims);
  mlir::Value slice(mlir::Value value, llvm::ArrayRef<int64_t> starts,
                    llvm::ArrayRef<int64_t> limits,
                    llvm::ArrayRef<int64_t> strides);
  /// The rows of `table` picked by integer `ids` (each in [0, rows)): ids'
  /// shape followed by the table's dimensions after the first. Any element
  /// type (a tg.embedding over the table flattened to rows x rest).
  mlir::Value takeRows(mlir::Value table, mlir::Value ids);
  /// `value` along `axis` at the constant positions `indices` (each in
  /// [0, size)): a reversal, a reflection, a repetition...
  mlir::Value takeAlongAxis(mlir::Value value, int64_t axis,
                            llvm::ArrayRef<int64_t> indices);

private:
  llvm::SmallVector<mlir::Value> finish(mlir::Operation *op);

  llvm::StringMap<mlir::Value> values;
  llvm::DenseMap<mlir::Value, Tensor> constants;
  const onnx::NodeProto *node = nullptr;
  mlir::Location location = mlir::UnknownLoc::get(builder.getContext());
  /// The numerics of folding: the interpreter's defaults.
  EvalOptions foldOptions;
  bool errorSeen = false;
};

/// Converts the current node of `importer`, defining its outputs.
using NodeConverter = mlir::LogicalResult (*)(GraphImporter &importer);
/// The converter of an op type of the default domain, or null.
NodeConverter lookupConverter(llvm::StringRef opType);

} // namespace tgc::onnx_import

#endif // TGC_LIB_IMPORT_ONNX_GRAPHIMPORTER_H
