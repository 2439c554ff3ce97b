//===- ModelZoo.h - forward + loss graphs of well-known models --*- C++ -*-===//
//
// Configurations, presets, parameter lists and tg graph builders for the
// models of `tgc-zoo`: GPT-2, Llama and a plain MLP classifier.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ZOO_MODELZOO_H
#define TGC_ZOO_MODELZOO_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace tgc::zoo {

/// The largest size any option may take (layers excepted), and the most
/// layers: with these bounds no tensor's element count and no parameter total
/// can overflow int64_t.
constexpr int64_t kMaxSize = int64_t(1) << 20;
constexpr int64_t kMaxLayers = 10000;

/// One trainable tensor: its stable (Hugging Face-style) name and shape.
struct ParameterSpec {
  std::string name;
  llvm::SmallVector<int64_t, 2> shape;

  int64_t getNumElements() const;
};

/// LoRA adapters (Hu et al., 2021), added to a built model by the tg-lora
/// pass (addLoraAdapters): every linear weight `P.weight` that one of
/// `targets` matches gets `P.lora_A.weight` [in, rank] and
/// `P.lora_B.weight` [rank, out], each of its matmuls computes
/// `x W + ((x A) B) * (alpha / rank)`, and the base model is frozen.
struct LoraConfig {
  /// 0: no adapters.
  int64_t rank = 0;
  /// 0: the rank (a scaling of 1).
  double alpha = 0.0;
  /// Globs over the weight names of the linear layers; empty: the model's
  /// default (getDefaultLoraTargets).
  llvm::SmallVector<std::string, 2> targets;

  bool isEnabled() const { return rank > 0; }
  double getAlpha() const { return alpha > 0.0 ? alpha : double(rank); }
};

/// GPT-2 as Hugging Face's GPT2LMHeadModel computes it.
struct GPT2Config {
  int64_t layers = 12;
  int64_t hidden = 768;
  int64_t heads = 12;
  /// Rows of the learned position table `wpe` (n_positions); the graph uses
  /// the first `seq` of them.
  int64_t positions = 1024;
  int64_t vocab = 50257;
  int64_t seq = 64;
  int64_t batch = 2;
  /// Embedding, residual and attention-probability dropout rate (GPT-2's
  /// embd_pdrop, resid_pdrop and attn_pdrop); 0 emits no dropout.
  double dropout = 0.0;
  double layerNormEpsilon = 1e-5;
  /// Attention as separate ops (scores, mask, softmax, dropout, matmul)
  /// instead of one tg.attention.
  bool eagerAttention = false;
  LoraConfig lora;
};

/// Llama (LlamaForCausalLM): RMSNorm, rotary embeddings, grouped-query
/// attention, SwiGLU MLP, untied LM head, no biases.
struct LlamaConfig {
  int64_t layers = 32;
  int64_t hidden = 4096;
  int64_t heads = 32;
  /// Key/value heads; fewer than `heads` is grouped-query attention.
  int64_t kvHeads = 32;
  int64_t intermediate = 11008;
  int64_t vocab = 32000;
  int64_t seq = 64;
  int64_t batch = 2;
  double rmsNormEpsilon = 1e-5;
  double ropeTheta = 10000.0;
  /// Attention as separate ops instead of one tg.attention.
  bool eagerAttention = false;
  LoraConfig lora;
};

enum class MLPActivation { ReLU, GELU };

/// A classifier of `layers` linear layers (`layers - 1` hidden ones with an
/// activation), with mean cross-entropy over the classes.
struct MLPConfig {
  int64_t layers = 2;
  int64_t hidden = 256;
  int64_t inputSize = 784;
  int64_t classes = 10;
  int64_t batch = 32;
  MLPActivation activation = MLPActivation::ReLU;
  /// Dropout rate after each hidden activation; 0 emits no dropout ops.
  double dropout = 0.0;
};

/// A named configuration of a model.
template <typename ConfigT> struct Preset {
  llvm::StringLiteral name;
  /// Where the numbers come from, for --help and --summary.
  llvm::StringLiteral description;
  ConfigT config;
};

llvm::ArrayRef<Preset<GPT2Config>> getGPT2Presets();
llvm::ArrayRef<Preset<LlamaConfig>> getLlamaPresets();

/// The configuration of preset `name` in `presets`, or null.
template <typename ConfigT>
const Preset<ConfigT> *lookupPreset(llvm::ArrayRef<Preset<ConfigT>> presets,
                                    llvm::StringRef name) {
  for (const Preset<ConfigT> &preset : presets)
    if (preset.name == name)
      return &preset;
  return nullptr;
}

/// Checks that a configuration describes a model that can be built (sizes in
/// range, heads dividing the width, ...); the error says what is wrong in
/// terms of the tool's options.
llvm::Error verifyConfig(const GPT2Config &config);
llvm::Error verifyConfig(const LlamaConfig &config);
llvm::Error verifyConfig(const MLPConfig &config);

/// The parameters in the order of the framework's state dict, which is also
/// the order of the `param` arguments of the built function (LoRA adapters
/// aside: see getBuiltParameters). The config must have passed verifyConfig.
llvm::SmallVector<ParameterSpec> getParameters(const GPT2Config &config);
llvm::SmallVector<ParameterSpec> getParameters(const LlamaConfig &config);
llvm::SmallVector<ParameterSpec> getParameters(const MLPConfig &config);

/// The `param` arguments of a built function, in order: with LoRA, the
/// base parameters and then the adapters tg-lora added.
llvm::SmallVector<ParameterSpec> getBuiltParameters(mlir::ModuleOp module);

/// The default --lora-targets: gpt2 `*c_attn.weight`, llama
/// `*q_proj.weight,*v_proj.weight` (PEFT's defaults).
llvm::SmallVector<std::string, 2> getDefaultLoraTargets(const GPT2Config &);
llvm::SmallVector<std::string, 2> getDefaultLoraTargets(const LlamaConfig &);
/// The configuration's --lora-targets, else the model's default.
llvm::SmallVector<std::string, 2> getLoraTargets(const GPT2Config &config);
llvm::SmallVector<std::string, 2> getLoraTargets(const LlamaConfig &config);

/// Whether `name` is a LoRA adapter (`*.lora_A.weight`, `*.lora_B.weight`).
bool isLoraParameter(llvm::StringRef name);

/// One line that states every field of the configuration.
std::string describeConfig(const GPT2Config &config);
std::string describeConfig(const LlamaConfig &config);
std::string describeConfig(const MLPConfig &config);

/// Sum of the element counts of `params`.
int64_t countParameters(llvm::ArrayRef<ParameterSpec> params);

/// Prints one row per parameter group (the parameters whose names are equal
/// once the layer number is replaced by `*`, so `h.*.attn.c_attn.weight`
/// gathers every layer's), with shape, tensor count, parameter count and
/// share of the total, then the total. With LoRA adapters among `params`,
/// their groups come last, followed by their subtotal, the total and the
/// trainable count (the adapters) and fraction.
void printParameterSummary(llvm::raw_ostream &os,
                           llvm::ArrayRef<ParameterSpec> params);

/// Builds a module with one function `functionName` computing the forward
/// pass and the loss (LoRA adapters aside: addLoraAdapters), then verifies
/// it. Failure (a bug of the builder) has
/// been reported through the context's diagnostic handler. The config must
/// have passed verifyConfig.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildModel(mlir::MLIRContext &context, const GPT2Config &config,
           llvm::StringRef functionName);
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildModel(mlir::MLIRContext &context, const LlamaConfig &config,
           llvm::StringRef functionName);
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildModel(mlir::MLIRContext &context, const MLPConfig &config,
           llvm::StringRef functionName);

/// Runs tg-lora on a built model: adapters of `lora`'s rank and alpha on the
/// weights that `targets` match (the linear layers' weights: a glob naming
/// an embedding, a norm or nothing adapts nothing, which is an error).
/// Failure has been reported through the context's diagnostic handler.
mlir::LogicalResult addLoraAdapters(mlir::ModuleOp module,
                                    const LoraConfig &lora,
                                    llvm::ArrayRef<std::string> targets);

} // namespace tgc::zoo

#endif // TGC_ZOO_MODELZOO_H
