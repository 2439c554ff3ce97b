//===- ParameterProvenance.h - state-dict names the exporter lost -*- C++
//-*-===//
//
// Private to lib/Import/ONNX: which of the user's parameter names
// (`--parameters`) the exporter lost, and where their tensors went. The
// dynamo exporter merges initializers of equal value into one (the all-ones
// norm weights of a fresh model), and both exporters fold a Linear's weight
// transpose into a new tensor (`val_N`, `onnx::MatMul_N`). What the graph
// says is read from the module scope of the nodes (the dynamo exporter's
// `pkg.torch.onnx.name_scopes` metadata, the TorchScript exporter's node
// names), the FX node each ONNX node came from (`pkg.torch.onnx.fx_node`:
// its target and the parameter placeholders it reads) and the optimizer's
// `pkg.onnxscript.optimizer.folded_from` on a folded value. A name is
// recovered only where two of these agree; otherwise the reason is kept for
// a remark.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_IMPORT_ONNX_PARAMETERPROVENANCE_H
#define TGC_LIB_IMPORT_ONNX_PARAMETERPROVENANCE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

namespace google::protobuf {
class Message;
} // namespace google::protobuf

namespace tgc::onnx_import {

/// The field numbers of `metadata_props` (ONNX 1.16), which the ONNX
/// headers tg builds with (Debian's 1.12) do not know: protobuf keeps them
/// as unknown fields, read by getMetadata.
constexpr int kNodeMetadataField = 9;
constexpr int kValueInfoMetadataField = 4;
constexpr int kGraphMetadataField = 16;
/// The value of the metadata entry `key` of `proto` (its metadata_props,
/// field number `field`), or std::nullopt.
std::optional<std::string> getMetadata(const google::protobuf::Message &proto,
                                       int field, llvm::StringRef key);
/// A Python list of string literals as the exporter writes it with repr
/// (`['', 'model', 'model.layers.0']`); std::nullopt for anything else
/// (escapes included: such a name is not trusted).
std::optional<llvm::SmallVector<std::string>>
parseStringList(llvm::StringRef text);

/// The path of the module a node was exported from
/// (`model.layers.0.mlp.up_proj`): the second-to-last entry of the dynamo
/// exporter's `pkg.torch.onnx.name_scopes`, or, without metadata, the
/// TorchScript exporter's node name (`/model/layers.0/mlp/up_proj/MatMul`)
/// less its last component. std::nullopt when neither is there.
std::optional<std::string> getModuleScope(const onnx::NodeProto &node);

/// The op of the FX node a value is named after (`permute` of
/// `permute_3`, `neg` of `neg`): `name` without its `_N` suffix.
llvm::StringRef getFxNodeOp(llvm::StringRef name);

/// Whether the module scope of `node` comes from the dynamo exporter's
/// metadata (rather than a node name).
bool hasScopeMetadata(const onnx::NodeProto &node);

/// Whether the FX node `node` came from (`pkg.torch.onnx.fx_node`) reads
/// the placeholder of parameter `name` (`p_` and the state-dict name with
/// `_` for `.`): that node reads the parameter itself in PyTorch.
bool readsParameterInFx(const onnx::NodeProto &node, llvm::StringRef name);

/// Where the dynamo exporter's graph computes otherwise than the PyTorch
/// code that `node` came from, as its FX node (`pkg.torch.onnx.fx_node`)
/// shows: a training-mode batch norm exported in inference mode (the
/// exporter's BatchNormalization always normalizes with the running
/// statistics; the import recovers it, `recovered`, unless its optimizer
/// fused it into a Conv, ConvTranspose or Gemm,
/// `pkg.onnxscript.rewriter.rule_name`), a cross-entropy whose
/// label smoothing it dropped, an attention whose dropout it dropped, an
/// embedding's scale_grad_by_freq; and an eval-mode batch norm its optimizer
/// folded into the Conv, ConvTranspose or Gemm before it, which then trains
/// otherwise. std::nullopt when the node computes what its FX node does, or
/// has no FX node.
struct ExportDeviation {
  /// The same for the nodes that deviate alike (`eval-bn-fused`), which the
  /// import reports as one warning.
  std::string kind;
  /// The module of the node ('' when the metadata names none).
  std::string module;
  /// The warning's text (a remark's, when recovered).
  std::string message;
  /// Whether the import computes what PyTorch does all the same (a
  /// training-mode BatchNormalization from the FX node's arguments).
  bool recovered = false;
  /// PyTorch's momentum of a recovered batch norm.
  double momentum = 0;
};
std::optional<ExportDeviation> getExportDeviation(const onnx::NodeProto &node);

/// The momentum (PyTorch's: `running = (1 - m) * running + m * batch`) of
/// a training-mode batch norm with running statistics that the dynamo
/// exporter wrote as an inference-mode BatchNormalization `node`: the import
/// trains it as PyTorch does (the batch's statistics, the running ones
/// updated with the unbiased variance). std::nullopt for any other node, a
/// batch norm fused into another op, or an FX momentum that is not a number
/// in [0, 1].
std::optional<double>
getRecoveredBatchNormMomentum(const onnx::NodeProto &node);

/// The Where nodes that fill the masked scores of a dynamo export's
/// `scaled_dot_product_attention` with a boolean mask (their FX node is that
/// attention, and an IsNaN of the same FX node guards its softmax): onnxscript
/// fills with the lowest float, so a query whose keys are all masked
/// averages every value, where PyTorch gives zeros; filled with -inf, the
/// guard gives PyTorch's zeros.
llvm::DenseSet<const onnx::NodeProto *>
findAttentionMaskFills(const onnx::GraphProto &graph);

/// Whether the FX node of `node` is a convolution (`aten.conv1d`, `conv2d`,
/// `conv3d`, `convolution`) whose bias is None: PyTorch adds no bias,
/// whatever zeros the exporter wrote for one.
bool hasNoFxConvBias(const onnx::NodeProto &node);

/// The padding_idx of the `nn.Embedding` (aten.embedding) the dynamo
/// exporter's FX node of `node` (a Gather) records: the row PyTorch gives no
/// gradient, which a Gather cannot say. std::nullopt when none (or no FX
/// node, or one that does not parse as a row).
std::optional<int64_t> getEmbeddingPaddingIdx(const onnx::NodeProto &node);

/// A node of the graph that reads a parameter, and the parameter it reads
/// in the framework.
struct RecoveredUse {
  const onnx::NodeProto *node;
  std::string module;
};

/// A tensor the exporter merged from several parameters: the uses that
/// belong to `name` (another parameter of the user's list) rather than to
/// `initializer`.
struct ParameterSplit {
  std::string initializer;
  std::string name;
  llvm::SmallVector<RecoveredUse> uses;
  /// The parameter `initializer` stands for: itself, or the one the
  /// optimizer folded it from (then `name` takes the folded layout).
  std::string source;
};

/// An initializer the exporter computed as the transpose of parameter
/// `name` (a Linear's weight, [out, in], folded into the [in, out] operand
/// of its MatMul).
struct FoldedTranspose {
  std::string initializer;
  std::string name;
  RecoveredUse use;
  /// What made it certain, for the remark.
  std::string evidence;
  /// `name` is an initializer of the graph too (an embedding whose transpose
  /// is its tied LM head, F.linear(x, embedding.weight)): the initializer is
  /// that parameter's tg.transpose, so the two train as one tensor, where
  /// its value is the transpose bit for bit.
  bool tied = false;
};

/// An initializer the dynamo exporter's optimizer folded from aten.expand
/// of parameter `name` (ViT's `cls_token.expand(batch, -1, -1)`, named
/// `expand`, `expand_N` after its FX node): one tensor in PyTorch, which
/// trained as folded would become a copy per batch row, each with its own
/// gradient. The import makes it the parameter's tg.broadcast_in_dim.
struct FoldedBroadcast {
  std::string initializer;
  std::string name;
  /// `name` is an initializer of the graph too.
  bool present = false;
};

/// A bias the dynamo exporter's optimizer dropped because it was zero (a
/// fresh nn.MultiheadAttention's out_proj.bias, the biases Hugging Face
/// models initialize to zero): the FX node of each of `nodes` (a Gemm,
/// Conv, ConvTranspose or MatMul) is aten.linear or a convolution whose
/// bias is parameter `name`, which no initializer holds and no node reads.
/// The import adds it back as a zero parameter, so it trains as in
/// PyTorch.
struct DroppedBias {
  std::string name;
  llvm::SmallVector<const onnx::NodeProto *> nodes;
  /// The bias runs along the last dimension (aten.linear), else dimension 1
  /// (a convolution's channels).
  bool lastDimension = false;
};

/// A parameter torch.export named after another name of its tie (GPT-2's
/// embedding, tied to the LM head, exported as `lm_head.weight`): it is
/// imported as `name`, the first of its names in the list
/// (`transformer.wte.weight`).
struct TiedName {
  std::string initializer;
  std::string name;
};

/// Why an initializer that looked like a lost parameter was left as it is.
struct UnrecoveredParameter {
  std::string initializer;
  std::string reason;
};

class ParameterProvenance {
public:
  /// The analysis of `graph` against the parameter names `listed` (the
  /// user's `--parameters`, or the parameters a dynamo export's signature
  /// lists); names that an Identity node's output carries
  /// (`identityOutputs`, the TorchScript exporter's merged duplicates) are
  /// not lost.
  static ParameterProvenance
  analyze(const onnx::GraphProto &graph, llvm::ArrayRef<std::string> listed,
          const llvm::StringMap<std::string> &identityOutputs);

  llvm::SmallVector<ParameterSplit> splits;
  llvm::SmallVector<FoldedTranspose> transposes;
  llvm::SmallVector<FoldedBroadcast> broadcasts;
  llvm::SmallVector<DroppedBias> droppedBiases;
  llvm::SmallVector<UnrecoveredParameter> unrecovered;
  llvm::SmallVector<TiedName> tiedNames;

  const FoldedTranspose *findTranspose(llvm::StringRef initializer) const;
  const FoldedBroadcast *findBroadcast(llvm::StringRef initializer) const;
};

} // namespace tgc::onnx_import

#endif // TGC_LIB_IMPORT_ONNX_PARAMETERPROVENANCE_H
