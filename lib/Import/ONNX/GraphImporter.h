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

#include "ParameterProvenance.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Eval/Kernels.h"
#include "tgc/Support/Diagnostics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <optional>

namespace tgc::onnx_import {

/// `value` as an int64: toward zero, saturating, NaN to 0 (a cast of an
/// out-of-range double is undefined behaviour: every double read from a
/// model goes through this). Callers that need an exact integer compare the
/// result with the value (requireLength) or check the range themselves.
int64_t toInt64Saturating(double value);

/// The largest tensor the importer reads (elements).
constexpr int64_t kMaxImportElements = int64_t(1) << 31;
/// The largest tensor the importer computes at import (elements): larger
/// constants would make the module itself huge; such an op is left to run
/// time.
constexpr int64_t kMaxFoldElements = int64_t(1) << 24;
/// The most elements all the ops folded in one import may compute together
/// (a chain of folded ops keeps every intermediate constant): past it, the
/// remaining constant ops are left to run time, with a warning.
constexpr int64_t kMaxTotalFoldElements = int64_t(1) << 26;
/// The most arithmetic all the folded ops may do together (their
/// CostOpInterface FLOPs, about a second of the interpreter): a 2048^3
/// matmul fits, a 4096^3 one is left to run time.
constexpr int64_t kMaxTotalFoldFlops = int64_t(1) << 34;
/// Ops with results this small (elements, and FLOPs) still fold past the
/// budgets above: shapes, axes and the other operands tg needs at import
/// are small, and a model whose large constants spent the budget must
/// still import. Each such op adds a bounded amount to the import's work.
constexpr int64_t kAlwaysFoldElements = int64_t(1) << 12;
constexpr int64_t kAlwaysFoldFlops = int64_t(1) << 20;

/// The data types ONNX 1.14 to 1.23 added (Debian's ONNX 1.12 headers lack
/// their names).
constexpr int32_t kFloat8E4M3FN = 17;
constexpr int32_t kFloat8E4M3FNUZ = 18;
constexpr int32_t kFloat8E5M2 = 19;
constexpr int32_t kFloat8E5M2FNUZ = 20;
constexpr int32_t kUInt4 = 21;
constexpr int32_t kInt4 = 22;
constexpr int32_t kFloat4E2M1 = 23;
constexpr int32_t kFloat8E8M0 = 24;
constexpr int32_t kUInt2 = 25;
constexpr int32_t kInt2 = 26;
/// The MLIR element type of an ONNX TensorProto data type, or null where tg
/// has none (strings, complex, uint64).
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
  /// The step's dropout seed, a `hyper` i64 scalar argument the model
  /// importer adds on first use (null when it cannot: a value of that name
  /// exists); training-mode dropouts draw their masks from it.
  std::function<mlir::Value()> getDropoutSeed;
  /// The stream of the next tg.dropout, so that no two draw the same mask.
  int64_t nextDropoutStream = 0;
  /// The `state` arguments a node updates (the running statistics of a
  /// training-mode BatchNormalization, `tg.buffer`), and the new values
  /// nodes computed for them, in order: the model importer returns the
  /// first of each as the argument's next value (a batch norm recovered
  /// from its FX node and run twice chains its updates into one entry).
  llvm::DenseSet<mlir::Value> updatedState;
  llvm::SmallVector<std::pair<mlir::Value, mlir::Value>> stateUpdates;
  /// Where a converter followed a node's FX node rather than the graph
  /// (ExportDeviation::recovered): the model importer remarks once per
  /// kind, with the deviations of the export.
  llvm::SmallVector<std::pair<mlir::Location, ExportDeviation>> followedFx;
  /// The Where nodes filling a boolean attention mask with the lowest float
  /// (findAttentionMaskFills), which fill with -inf as PyTorch masks.
  llvm::DenseSet<const onnx::NodeProto *> attentionMaskFills;
  /// What each QuantizeLinear quantized (its float input, scale and zero
  /// point, axis and grid), by its integer result: a DequantizeLinear of
  /// that result with the same scale and zero point becomes one
  /// differentiable tg.quantize_dequantize.
  struct Quantization {
    mlir::Value input, scale, zeroPoint;
    int64_t axis, low, high;
  };
  llvm::DenseMap<mlir::Value, Quantization> quantizations;
  /// What each argument of the step is ("graph input", "parameter") and
  /// its name, for errors about a value that is not constant.
  struct ArgumentDescription {
    std::string kind, name;
  };
  llvm::DenseMap<mlir::Value, ArgumentDescription> argumentDescriptions;
  /// A NonZero of a tensor computed at run time (the eager loop of a
  /// mixture of experts selecting each expert's tokens) is imported densely
  /// (NonZeroHits.cpp): its output lists every position of its input that
  /// can be a hit, and `mask` (i1, one entry per position) says which are.
  /// `dim` is the dimension of a value that runs over those positions; the
  /// ops after the NonZero carry it (propagateHits) until a scatter writes
  /// only the hits back or a reduction over them reduces only the hits, and
  /// any op that would mix the positions is refused.
  struct Hits {
    mlir::Value mask;
    int64_t dim;
    /// The NonZero node, for errors, and the --input-value hint when its
    /// input depends on a graph input.
    std::string node, hint;
    mlir::Location location;
  };
  llvm::DenseMap<mlir::Value, Hits> hitDims;
  /// Shape vectors holding the number of those positions (a Shape of a
  /// value with a hit dimension) at `positions`: read only as shapes.
  struct HitCount {
    Hits hits;
    llvm::SmallVector<int64_t> positions;
  };
  llvm::DenseMap<mlir::Value, HitCount> hitCounts;

  //===--------------------------------------------------------------------===//
  // Values by ONNX name
  //===--------------------------------------------------------------------===//

  void define(llvm::StringRef name, mlir::Value value) {
    shadow(name);
    values[name] = value;
  }
  bool isDefined(llvm::StringRef name) const {
    return values.count(name) || sequences.count(name);
  }
  mlir::Value lookup(llvm::StringRef name) const { return values.lookup(name); }
  /// The tensors of the sequence `name`, or null when it is none.
  const llvm::SmallVector<mlir::Value> *
  lookupSequence(llvm::StringRef name) const {
    auto it = sequences.find(name);
    return it == sequences.end() ? nullptr : &it->second;
  }
  /// A subgraph (an If's branch, a Loop's body) is imported between
  /// beginScope and endScope, so that the names it defines end with it
  /// (what they shadowed comes back) while the values it computed stay.
  /// Costs the names the subgraph defines, not the graph's.
  size_t beginScope() {
    ++openScopes;
    return shadowed.size();
  }
  void endScope(size_t mark);
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
  /// Sequences (SplitToSequence's result, as the dynamo exporter writes
  /// torch.split without its optimizer): tg has no sequence type, so a
  /// sequence is imported as the list of its tensors, and only the ops that
  /// take tensors out of it (SequenceAt) read it.
  void setSequenceOutput(unsigned index, llvm::ArrayRef<mlir::Value> tensors);
  mlir::FailureOr<llvm::ArrayRef<mlir::Value>>
  requireSequenceInput(unsigned index);

  /// The value of input `index`, which must be computable at import (else
  /// an error on the node naming `what`, and null).
  const Tensor *requireConstant(unsigned index, llvm::StringRef what);
  /// The integers of input `index`, which must be a constant integer tensor
  /// (shape operands: computed at import); `what` names it in errors.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  requireConstantInts(unsigned index, llvm::StringRef what);
  /// The values of input `index`, a constant tensor of finite numbers
  /// (scales, a region of interest), as doubles.
  mlir::FailureOr<llvm::SmallVector<double>>
  requireConstantFloats(unsigned index, llvm::StringRef what);
  /// The float value of a constant scalar input.
  mlir::FailureOr<double> requireConstantScalar(unsigned index,
                                                llvm::StringRef what);
  /// Why `value` is not a constant: the arguments of the step it depends
  /// on ("graph input 'size'", "parameter 'w'"), with the --input-value
  /// hint for the first graph input (in `hint` instead, when given).
  std::string explainNotConstant(mlir::Value value,
                                 std::string *hint = nullptr) const;

  //===--------------------------------------------------------------------===//
  // Attributes
  //===--------------------------------------------------------------------===//
  //
  // Every accessor checks the attribute's ONNX type (and, where the values
  // form a closed set, the value) once, here: a mismatch is an error on the
  // node (the import fails after the converter), never a default. An absent
  // attribute gives the default.

  /// Attribute `name` of the current node, null when absent or when it is
  /// not of `type` (an error on the node).
  const onnx::AttributeProto *
  attribute(llvm::StringRef name, onnx::AttributeProto::AttributeType type);
  int64_t getInt(llvm::StringRef name, int64_t defaultValue);
  std::optional<int64_t> getOptionalInt(llvm::StringRef name);
  /// An int attribute the op requires (absent: an error on the node).
  mlir::FailureOr<int64_t> requireInt(llvm::StringRef name);
  /// A flag: an int that must be 0 or 1.
  bool getBool(llvm::StringRef name, bool defaultValue);
  float getFloat(llvm::StringRef name, float defaultValue);
  std::optional<float> getOptionalFloat(llvm::StringRef name);
  /// A string attribute; when `allowed` is not empty, its value must be one
  /// of them.
  std::string getString(llvm::StringRef name, llvm::StringRef defaultValue,
                        llvm::ArrayRef<llvm::StringRef> allowed = {});
  std::optional<llvm::SmallVector<int64_t>> getInts(llvm::StringRef name);
  const onnx::TensorProto *getTensor(llvm::StringRef name);

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
  /// Success when `size` positions listed at import (an index constant
  /// along a dimension: a reversal, a one-hot's positions...) stay within
  /// kMaxFoldElements; else an error on the node naming `what`, so that a
  /// hostile shape never makes the importer allocate gigabytes.
  mlir::LogicalResult checkIndexLength(int64_t size, const llvm::Twine &what);
  /// `value` along `axis` at the constant positions `indices` (each in
  /// [0, size)): a reversal, a reflection, a repetition...
  mlir::Value takeAlongAxis(mlir::Value value, int64_t axis,
                            llvm::ArrayRef<int64_t> indices);

private:
  llvm::SmallVector<mlir::Value> finish(mlir::Operation *op);
  /// Runs `check` (a verifier, a folding kernel) on `op`, an op built for
  /// the current node; its error, about an op the user never wrote, becomes
  /// an error on the node.
  mlir::LogicalResult
  blameNode(mlir::Operation *op,
            llvm::function_ref<mlir::LogicalResult()> check);

  /// Before a name is (re)defined inside a scope: what it was.
  void shadow(llvm::StringRef name);

  llvm::StringMap<mlir::Value> values;
  llvm::StringMap<llvm::SmallVector<mlir::Value>> sequences;
  struct Shadowed {
    std::string name;
    std::optional<mlir::Value> value;
    std::optional<llvm::SmallVector<mlir::Value>> sequence;
  };
  std::vector<Shadowed> shadowed;
  unsigned openScopes = 0;
  llvm::DenseMap<mlir::Value, Tensor> constants;
  const onnx::NodeProto *node = nullptr;
  mlir::Location location = mlir::UnknownLoc::get(builder.getContext());
  /// The numerics of folding: the interpreter's defaults.
  EvalOptions foldOptions;
  bool errorSeen = false;
  /// Elements computed by folding so far, against kMaxTotalFoldElements.
  int64_t foldedElements = 0;
  int64_t foldedFlops = 0;
  bool foldBudgetReported = false, foldLimitReported = false;
};

/// Converts the current node of `importer`, defining its outputs.
using NodeConverter = mlir::LogicalResult (*)(GraphImporter &importer);
/// How tg converts an op type of the default domain, and at which opsets.
struct OpSupport {
  /// Null for the ops with subgraphs (If, Loop, Scan): the model importer
  /// imports their branches and bodies itself.
  NodeConverter convert;
  /// The opset that introduced the op: an older model cannot use it.
  int64_t introduced;
  /// The first opset whose version of the op tg implements; the versions
  /// before it mean something tg does not convert.
  int64_t supportedFrom;
};
/// The support of an op type of the default domain, or null.
const OpSupport *lookupOp(llvm::StringRef opType);
/// The converter of an op of ONNX's training domain
/// (`ai.onnx.preview.training`, version 1), or null.
NodeConverter lookupTrainingOp(llvm::StringRef opType);
/// The training domain's name.
constexpr llvm::StringLiteral kTrainingDomain = "ai.onnx.preview.training";
/// The domain of ONNX's preview ops (tgc imports its FlexAttention).
constexpr llvm::StringLiteral kPreviewDomain = "ai.onnx.preview";

/// The opsets of the default domain that tg imports.
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 28;

} // namespace tgc::onnx_import

#endif // TGC_LIB_IMPORT_ONNX_GRAPHIMPORTER_H
