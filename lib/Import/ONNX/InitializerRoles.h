//===- InitializerRoles.h - parameters and buffers of a graph --*- C++ -*-===//
//
// Private to lib/Import/ONNX: which float initializers are trained
// parameters and which are buffers (masks, rotary tables, inv_freq...),
// from the user's list or globs, else from the evidence in the graph.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_IMPORT_ONNX_INITIALIZERROLES_H
#define TGC_LIB_IMPORT_ONNX_INITIALIZERROLES_H

#include "tgc/Eval/Tensor.h"
#include "tgc/Import/ONNX/Importer.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/GlobPattern.h"

#include <onnx/onnx_pb.h>

#include <optional>

namespace tgc::onnx_import {

/// Whether the BatchNormalization `node` (of the default domain, `opset`)
/// normalizes with the batch's statistics: `training_mode` from opset 14,
/// more than one output from opset 7, `is_test = 0` before; or, whatever
/// those say, when its FX node is a training-mode batch norm
/// (getRecoveredBatchNormMomentum).
bool isTrainingBatchNorm(const onnx::NodeProto &node, int64_t opset);

/// The names the subgraphs of `node` (an If's branches) read from the
/// graphs around them, each once: the node's inputs beyond its own.
llvm::SmallVector<std::string> getOuterNames(const onnx::NodeProto &node);

class InitializerRoles {
public:
  /// The analysis of `graph`; an error for a glob that does not parse.
  static llvm::Expected<InitializerRoles>
  create(const onnx::GraphProto &graph, const ONNXImportOptions &options);

  /// Why the float initializer `name` of rank >= 1, holding `value`, is a
  /// buffer; std::nullopt when it is a parameter.
  std::optional<std::string> getBufferReason(llvm::StringRef name,
                                             const Tensor &value) const;

  /// Whether a --parameter or --buffer glob matches `name` (the user
  /// decided its role).
  bool matchesGlob(llvm::StringRef name) const;

  /// Whether `name` only feeds a weight operand (a matmul, Gemm or
  /// embedding operand), possibly through transposes and reshapes.
  bool feedsWeightOperand(llvm::StringRef name) const;

  /// Whether a BatchNormalization reads `name` as its mean or variance
  /// (running statistics, never trained), directly or through Identity
  /// nodes, and nothing reads it otherwise.
  bool isBatchNormStatistic(llvm::StringRef name) const;

  /// Which running statistic of a training-mode BatchNormalization
  /// (default domain, `opset`) `name` is, read as its input 3 (mean: 1) or
  /// 4 (variance: 2) with the matching output (the updated statistic)
  /// present: the step updates it. 0 when none (or an inference-mode one).
  unsigned getRunningStatistic(llvm::StringRef name, int64_t opset) const;

  /// Whether every node that reads `name` reads it as an operand the
  /// import computes with (Resize's roi and scales, Upsample's scales,
  /// Range's bounds, what NonZero and Unique read, RoiAlign's regions):
  /// never a value of the step.
  bool isImportTimeOperand(llvm::StringRef name) const;
  /// Whether `name` is read only as the scale of QuantizeLinear,
  /// DequantizeLinear, QLinearMatMul or QLinearConv.
  bool isQuantizationScale(llvm::StringRef name) const;
  /// Whether every node reading `name` is of an op type of `operands` and
  /// reads it only at inputs whose bit is set in that op's mask.
  bool isOnlyReadAs(llvm::StringRef name,
                    const llvm::StringMap<uint32_t> &operands) const;

  /// The parameters of the exported program (the dynamo exporter's
  /// `pkg.torch.export.ExportedProgram.graph_signature`) that the
  /// exporter's optimizer folded into initializer `name` (its
  /// `pkg.onnxscript.optimizer.folded_from`): GPT-2's position embedding
  /// gathered at arange(T), a Linear's weight transposed. Empty when none
  /// or when the graph does not say.
  llvm::SmallVector<std::string>
  getFoldedParameters(llvm::StringRef name) const;
  /// The ops of the FX nodes folded into initializer `name`: first the
  /// one it is named after (`neg` of RWKV's `neg`, -exp(time_decay); `add`
  /// of `add_6`), then those its folded_from names (`exp`, `neg` of
  /// Mamba's `unsqueeze_3`, -exp(A_log) unsqueezed), each name without its
  /// `_N` suffix. Not the optimizer's own `val_N`, state-dict names,
  /// parameters or buffers; empty for a value the optimizer did not fold.
  llvm::SmallVector<std::string> getFoldedOps(llvm::StringRef name) const;
  /// The buffers of the exported program the optimizer's folded_from of
  /// `name` names (an index buffer gathered from, a mask multiplied by).
  llvm::SmallVector<std::string> getFoldedBuffers(llvm::StringRef name) const;
  /// Whether `name` is what the exported program's signature calls a
  /// parameter, a buffer (std::nullopt when it does not name it).
  std::optional<bool> isSignatureParameter(llvm::StringRef name) const;
  /// The parameters of the exported program's signature, in its order
  /// (empty without one).
  llvm::ArrayRef<std::string> getSignatureParameters() const {
    return signatureParameterList;
  }
  /// Whether `name` is a tensor the TorchScript exporter folded
  /// (`onnx::Conv_12`: it names the framework's tensors by their
  /// state-dict names).
  bool isTorchScriptFold(llvm::StringRef name) const {
    return torchScriptExport && name.starts_with("onnx::");
  }
  /// Whether `name` is one the exporter made up (undotted among state-dict
  /// names: `val_12`, `unsqueeze_14`, `where`; not a top-level parameter
  /// such as ViT's `cls_token`, which the signature or --parameters name).
  /// The TorchScript exporter names its folded tensors `onnx::Mul_12`,
  /// `/model/Constant_output_0` or a number: an undotted name there is a
  /// top-level parameter's (timm's `cls_token`).
  bool isMadeUpName(llvm::StringRef name) const {
    if (torchScriptExport && !name.contains('/') &&
        !llvm::all_of(name, llvm::isDigit))
      return false;
    return hasStateDictNames && !name.contains('.') && !name.contains(':') &&
           !signatureParameters.contains(name) &&
           !signatureBuffers.contains(name) &&
           !(parameterNames && parameterNames->contains(name));
  }

private:
  InitializerRoles() = default;
  bool onlyMakesMasks(llvm::StringRef value, llvm::StringSet<> &visiting) const;

  llvm::StringMap<llvm::SmallVector<const onnx::NodeProto *>> consumers;
  llvm::StringSet<> graphOutputs;
  std::optional<llvm::StringSet<>> parameterNames;
  llvm::SmallVector<std::pair<std::string, llvm::GlobPattern>> parameterGlobs,
      bufferGlobs;
  /// Whether some initializer has a dotted state-dict name
  /// (`model.layers.0.mlp.up_proj.weight`): then the exporter named the
  /// framework's tensors, and an undotted name is one it made up.
  bool hasStateDictNames = false;
  /// Whether the graph is the TorchScript exporter's (nodes named after
  /// their scope, `/model/layers.0/Mul`, or values `onnx::Mul_12`), which
  /// keeps the state-dict name of a top-level parameter.
  bool torchScriptExport = false;
  /// The exported program's parameter and buffer targets (state-dict
  /// names), from the graph's metadata.
  llvm::StringSet<> signatureParameters, signatureBuffers;
  llvm::SmallVector<std::string> signatureParameterList;
  /// The optimizer's folded_from of each folded initializer.
  llvm::StringMap<llvm::SmallVector<std::string>> foldedFrom;
};

} // namespace tgc::onnx_import

#endif // TGC_LIB_IMPORT_ONNX_INITIALIZERROLES_H
