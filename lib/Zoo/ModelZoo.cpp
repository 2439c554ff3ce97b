//===- ModelZoo.cpp - presets, checks and parameter lists of the zoo ------===//
//
// Everything about the zoo's models that needs no MLIR: the published
// presets, the checks of a configuration, the parameter list (names, shapes,
// counts) and the --summary table. The graphs live in ModelBuilders.cpp.
//
//===----------------------------------------------------------------------===//

#include "tgc/Zoo/ModelZoo.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/GlobPattern.h"

#include <cmath>
#include <cstring>

using namespace tgc::zoo;
using llvm::Error;
using llvm::SmallVector;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Presets
//===----------------------------------------------------------------------===//

static GPT2Config makeGPT2(int64_t layers, int64_t hidden, int64_t heads,
                           int64_t vocab) {
  GPT2Config config;
  config.layers = layers;
  config.hidden = hidden;
  config.heads = heads;
  config.vocab = vocab;
  return config;
}

static LlamaConfig makeLlama(int64_t layers, int64_t hidden, int64_t heads,
                             int64_t kvHeads, int64_t intermediate,
                             int64_t vocab) {
  LlamaConfig config;
  config.layers = layers;
  config.hidden = hidden;
  config.heads = heads;
  config.kvHeads = kvHeads;
  config.intermediate = intermediate;
  config.vocab = vocab;
  return config;
}

llvm::ArrayRef<Preset<GPT2Config>> tgc::zoo::getGPT2Presets() {
  // The sizes of OpenAI's four GPT-2 checkpoints (Hugging Face gpt2,
  // gpt2-medium, gpt2-large, gpt2-xl); all have n_positions = 1024 and the
  // 50257-token BPE vocabulary.
  static const Preset<GPT2Config> presets[] = {
      {"tiny", "2 layers, hidden 64, 4 heads, vocab 128",
       makeGPT2(2, 64, 4, 128)},
      {"124m", "gpt2: 12 layers, hidden 768, 12 heads",
       makeGPT2(12, 768, 12, 50257)},
      {"355m", "gpt2-medium: 24 layers, hidden 1024, 16 heads",
       makeGPT2(24, 1024, 16, 50257)},
      {"774m", "gpt2-large: 36 layers, hidden 1280, 20 heads",
       makeGPT2(36, 1280, 20, 50257)},
      {"1.5b", "gpt2-xl: 48 layers, hidden 1600, 25 heads",
       makeGPT2(48, 1600, 25, 50257)},
  };
  return presets;
}

llvm::ArrayRef<Preset<LlamaConfig>> tgc::zoo::getLlamaPresets() {
  // Llama 2 as published in meta-llama/Llama-2-{7b,13b,70b}-hf (config.json):
  // rms_norm_eps 1e-5, rope_theta 10000, vocabulary 32000.
  static const Preset<LlamaConfig> presets[] = {
      {"tiny",
       "2 layers, hidden 64, 4 heads, 2 kv heads, intermediate 176, "
       "vocab 128",
       makeLlama(2, 64, 4, 2, 176, 128)},
      {"7b", "Llama-2-7b: 32 layers, hidden 4096, 32 heads, intermediate 11008",
       makeLlama(32, 4096, 32, 32, 11008, 32000)},
      {"13b",
       "Llama-2-13b: 40 layers, hidden 5120, 40 heads, intermediate 13824",
       makeLlama(40, 5120, 40, 40, 13824, 32000)},
      {"70b",
       "Llama-2-70b: 80 layers, hidden 8192, 64 heads, 8 kv heads, "
       "intermediate 28672",
       makeLlama(80, 8192, 64, 8, 28672, 32000)},
  };
  return presets;
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

/// `value` as printf's %g writes it (1e-05, 0.1, 10000).
static std::string formatDouble(double value) {
  return llvm::formatv("{0}", llvm::format("%g", value)).str();
}

static Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A size option and its value, which must be in [1, limit].
struct SizeOption {
  StringRef option;
  int64_t value;
  int64_t limit = kMaxSize;
};

/// The first size out of range, if any.
static Error checkSizes(llvm::ArrayRef<SizeOption> sizes) {
  for (const SizeOption &size : sizes)
    if (size.value < 1 || size.value > size.limit)
      return makeError("--" + size.option + " must be between 1 and " +
                       llvm::Twine(size.limit) + ", got " +
                       llvm::Twine(size.value));
  return Error::success();
}

/// A tensor of the graph, named by the options its dimensions come from.
struct TensorExtent {
  StringRef what;
  llvm::SmallVector<int64_t, 4> dims;
};

/// The first tensor whose f32 size exceeds what a tg tensor may hold: each
/// size is in range alone, their products may not be (the figures of such a
/// graph would overflow).
static Error checkTensorSizes(llvm::ArrayRef<TensorExtent> tensors) {
  for (const TensorExtent &tensor : tensors) {
    std::optional<int64_t> bytes = 4;
    for (int64_t dim : tensor.dims)
      if (bytes)
        bytes = llvm::checkedMul(*bytes, dim);
    if (!bytes || *bytes > tgc::tg::kMaxTensorBytes)
      return makeError("the " + tensor.what +
                       " tensor would hold more than 2^44 bytes; reduce "
                       "those sizes");
  }
  return Error::success();
}

static Error checkDropout(double rate) {
  // Written so that NaN fails too.
  if (rate >= 0.0 && rate < 1.0)
    return Error::success();
  return makeError("--dropout must be in [0, 1), got " + formatDouble(rate));
}

static Error checkPositive(StringRef option, double value) {
  if (value > 0.0 && std::isfinite(value))
    return Error::success();
  return makeError("--" + option + " must be a positive number, got " +
                   formatDouble(value));
}

static Error checkDivides(StringRef divisorOption, int64_t divisor,
                          StringRef option, int64_t value) {
  if (value % divisor == 0)
    return Error::success();
  return makeError("--" + divisorOption + " (" + llvm::Twine(divisor) +
                   ") must divide --" + option + " (" + llvm::Twine(value) +
                   ")");
}

SmallVector<std::string, 2> tgc::zoo::getLoraTargets(const GPT2Config &config) {
  return config.lora.targets.empty() ? getDefaultLoraTargets(config)
                                     : config.lora.targets;
}

SmallVector<std::string, 2>
tgc::zoo::getLoraTargets(const LlamaConfig &config) {
  return config.lora.targets.empty() ? getDefaultLoraTargets(config)
                                     : config.lora.targets;
}

/// The rank and alpha of `lora`; its targets are tg-lora's to check, on the
/// graph.
static Error checkLora(const LoraConfig &lora) {
  if (!lora.isEnabled()) {
    if (lora.rank < 0)
      return makeError("--lora must be between 1 and " + llvm::Twine(kMaxSize) +
                       ", got " + llvm::Twine(lora.rank));
    return Error::success();
  }
  if (Error error = checkSizes({{"lora", lora.rank}}))
    return error;
  if (lora.alpha != 0.0)
    if (Error error = checkPositive("lora-alpha", lora.alpha))
      return error;
  return Error::success();
}

Error tgc::zoo::verifyConfig(const GPT2Config &config) {
  if (Error error = checkSizes({{"layers", config.layers, kMaxLayers},
                                {"hidden", config.hidden},
                                {"heads", config.heads},
                                {"positions", config.positions},
                                {"vocab", config.vocab},
                                {"seq", config.seq},
                                {"batch", config.batch}}))
    return error;
  if (Error error =
          checkDivides("heads", config.heads, "hidden", config.hidden))
    return error;
  if (Error error = checkTensorSizes(
          {{"logits (--batch x --seq x --vocab)",
            {config.batch, config.seq, config.vocab}},
           {"attention scores (--batch x --heads x --seq x --seq)",
            {config.batch, config.heads, config.seq, config.seq}},
           {"MLP activation (--batch x --seq x 4 --hidden)",
            {config.batch, config.seq, 4, config.hidden}},
           {"token embedding (--vocab x --hidden)",
            {config.vocab, config.hidden}},
           {"position embedding (--positions x --hidden)",
            {config.positions, config.hidden}}}))
    return error;
  if (config.seq > config.positions)
    return makeError("--seq (" + llvm::Twine(config.seq) + ") exceeds the " +
                     llvm::Twine(config.positions) +
                     " rows of the position table wpe (n_positions, "
                     "--positions)");
  if (Error error = checkDropout(config.dropout))
    return error;
  if (Error error = checkPositive("norm-eps", config.layerNormEpsilon))
    return error;
  return checkLora(config.lora);
}

Error tgc::zoo::verifyConfig(const LlamaConfig &config) {
  if (Error error = checkSizes({{"layers", config.layers, kMaxLayers},
                                {"hidden", config.hidden},
                                {"heads", config.heads},
                                {"kv-heads", config.kvHeads},
                                {"intermediate", config.intermediate},
                                {"vocab", config.vocab},
                                {"seq", config.seq},
                                {"batch", config.batch}}))
    return error;
  if (Error error =
          checkDivides("heads", config.heads, "hidden", config.hidden))
    return error;
  if (Error error =
          checkDivides("kv-heads", config.kvHeads, "heads", config.heads))
    return error;
  if (Error error = checkTensorSizes(
          {{"logits (--batch x --seq x --vocab)",
            {config.batch, config.seq, config.vocab}},
           {"attention scores (--batch x --heads x --seq x --seq)",
            {config.batch, config.heads, config.seq, config.seq}},
           {"MLP activation (--batch x --seq x --intermediate)",
            {config.batch, config.seq, config.intermediate}},
           {"MLP weight (--hidden x --intermediate)",
            {config.hidden, config.intermediate}},
           {"token embedding (--vocab x --hidden)",
            {config.vocab, config.hidden}}}))
    return error;
  int64_t headDim = config.hidden / config.heads;
  if (headDim % 2 != 0)
    return makeError("the head size --hidden / --heads (" +
                     llvm::Twine(headDim) +
                     ") must be even for rotary embeddings");
  if (Error error = checkPositive("norm-eps", config.rmsNormEpsilon))
    return error;
  if (Error error = checkPositive("rope-theta", config.ropeTheta))
    return error;
  return checkLora(config.lora);
}

Error tgc::zoo::verifyConfig(const MLPConfig &config) {
  if (Error error = checkSizes({{"layers", config.layers, kMaxLayers},
                                {"hidden", config.hidden},
                                {"input-size", config.inputSize},
                                {"classes", config.classes},
                                {"batch", config.batch}}))
    return error;
  if (Error error = checkTensorSizes(
          {{"input (--batch x --input-size)", {config.batch, config.inputSize}},
           {"activation (--batch x --hidden)", {config.batch, config.hidden}},
           {"weight (--hidden x --hidden)", {config.hidden, config.hidden}},
           {"first weight (--input-size x --hidden)",
            {config.inputSize, config.hidden}}}))
    return error;
  return checkDropout(config.dropout);
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

int64_t ParameterSpec::getNumElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

int64_t tgc::zoo::countParameters(llvm::ArrayRef<ParameterSpec> params) {
  int64_t total = 0;
  for (const ParameterSpec &param : params)
    total += param.getNumElements();
  return total;
}

bool tgc::zoo::isLoraParameter(StringRef name) {
  return name.ends_with(".lora_A.weight") || name.ends_with(".lora_B.weight");
}

SmallVector<std::string, 2>
tgc::zoo::getDefaultLoraTargets(const GPT2Config &) {
  return {"*c_attn.weight"};
}

SmallVector<std::string, 2>
tgc::zoo::getDefaultLoraTargets(const LlamaConfig &) {
  return {"*q_proj.weight", "*v_proj.weight"};
}

SmallVector<ParameterSpec> tgc::zoo::getParameters(const GPT2Config &config) {
  int64_t h = config.hidden;
  SmallVector<ParameterSpec> params;
  params.push_back({"wte.weight", {config.vocab, h}});
  params.push_back({"wpe.weight", {config.positions, h}});
  for (int64_t n = 0; n < config.layers; ++n) {
    std::string prefix = "h." + std::to_string(n) + ".";
    // Conv1D weights of Hugging Face's GPT-2 are [in, out], as used here.
    params.push_back({prefix + "ln_1.weight", {h}});
    params.push_back({prefix + "ln_1.bias", {h}});
    params.push_back({prefix + "attn.c_attn.weight", {h, 3 * h}});
    params.push_back({prefix + "attn.c_attn.bias", {3 * h}});
    params.push_back({prefix + "attn.c_proj.weight", {h, h}});
    params.push_back({prefix + "attn.c_proj.bias", {h}});
    params.push_back({prefix + "ln_2.weight", {h}});
    params.push_back({prefix + "ln_2.bias", {h}});
    params.push_back({prefix + "mlp.c_fc.weight", {h, 4 * h}});
    params.push_back({prefix + "mlp.c_fc.bias", {4 * h}});
    params.push_back({prefix + "mlp.c_proj.weight", {4 * h, h}});
    params.push_back({prefix + "mlp.c_proj.bias", {h}});
  }
  params.push_back({"ln_f.weight", {h}});
  params.push_back({"ln_f.bias", {h}});
  return params;
}

SmallVector<ParameterSpec> tgc::zoo::getParameters(const LlamaConfig &config) {
  int64_t h = config.hidden;
  int64_t kvWidth = config.kvHeads * (h / config.heads);
  int64_t ffn = config.intermediate;
  SmallVector<ParameterSpec> params;
  params.push_back({"model.embed_tokens.weight", {config.vocab, h}});
  for (int64_t n = 0; n < config.layers; ++n) {
    std::string prefix = "model.layers." + std::to_string(n) + ".";
    // Matrices are [in, out] (x @ W); Hugging Face stores the transpose.
    params.push_back({prefix + "self_attn.q_proj.weight", {h, h}});
    params.push_back({prefix + "self_attn.k_proj.weight", {h, kvWidth}});
    params.push_back({prefix + "self_attn.v_proj.weight", {h, kvWidth}});
    params.push_back({prefix + "self_attn.o_proj.weight", {h, h}});
    params.push_back({prefix + "mlp.gate_proj.weight", {h, ffn}});
    params.push_back({prefix + "mlp.up_proj.weight", {h, ffn}});
    params.push_back({prefix + "mlp.down_proj.weight", {ffn, h}});
    params.push_back({prefix + "input_layernorm.weight", {h}});
    params.push_back({prefix + "post_attention_layernorm.weight", {h}});
  }
  params.push_back({"model.norm.weight", {h}});
  params.push_back({"lm_head.weight", {h, config.vocab}});
  return params;
}

SmallVector<ParameterSpec> tgc::zoo::getParameters(const MLPConfig &config) {
  SmallVector<ParameterSpec> params;
  int64_t width = config.inputSize;
  for (int64_t n = 1; n <= config.layers; ++n) {
    int64_t out = n == config.layers ? config.classes : config.hidden;
    std::string prefix = "fc" + std::to_string(n) + ".";
    params.push_back({prefix + "weight", {width, out}});
    params.push_back({prefix + "bias", {out}});
    width = out;
  }
  return params;
}

//===----------------------------------------------------------------------===//
// Descriptions and the summary table
//===----------------------------------------------------------------------===//

/// ` lora_rank=R lora_alpha=A lora_targets=G,G` with adapters, else empty.
template <typename ConfigT>
static std::string describeLora(const ConfigT &config) {
  const LoraConfig &lora = config.lora;
  if (!lora.isEnabled())
    return "";
  return llvm::formatv(" lora_rank={0} lora_alpha={1} lora_targets={2}",
                       lora.rank, formatDouble(lora.getAlpha()),
                       llvm::join(tgc::zoo::getLoraTargets(config), ","))
      .str();
}

std::string tgc::zoo::describeConfig(const GPT2Config &config) {
  return llvm::formatv("layers={0} hidden={1} heads={2} head_dim={3} "
                       "positions={4} vocab={5} seq={6} batch={7} dropout={8}",
                       config.layers, config.hidden, config.heads,
                       config.hidden / config.heads, config.positions,
                       config.vocab, config.seq, config.batch,
                       formatDouble(config.dropout))
             .str() +
         describeLora(config);
}

std::string tgc::zoo::describeConfig(const LlamaConfig &config) {
  return llvm::formatv("layers={0} hidden={1} heads={2} kv_heads={3} "
                       "head_dim={4} intermediate={5} vocab={6} seq={7} "
                       "batch={8} rms_norm_eps={9} rope_theta={10}",
                       config.layers, config.hidden, config.heads,
                       config.kvHeads, config.hidden / config.heads,
                       config.intermediate, config.vocab, config.seq,
                       config.batch, formatDouble(config.rmsNormEpsilon),
                       formatDouble(config.ropeTheta))
             .str() +
         describeLora(config);
}

std::string tgc::zoo::describeConfig(const MLPConfig &config) {
  return llvm::formatv(
             "layers={0} hidden={1} input_size={2} classes={3} batch={4} "
             "activation={5} dropout={6}",
             config.layers, config.hidden, config.inputSize, config.classes,
             config.batch,
             config.activation == MLPActivation::ReLU ? "relu" : "gelu",
             formatDouble(config.dropout))
      .str();
}

/// `name` with every all-digit component (a layer number) replaced by `*`.
static std::string getGroupName(StringRef name) {
  SmallVector<StringRef> parts;
  name.split(parts, '.');
  std::string group;
  for (auto [i, part] : llvm::enumerate(parts)) {
    if (i)
      group += '.';
    bool isNumber = !part.empty() && llvm::all_of(part, llvm::isDigit);
    group += isNumber ? StringRef("*") : part;
  }
  return group;
}

void tgc::zoo::printParameterSummary(llvm::raw_ostream &os,
                                     llvm::ArrayRef<ParameterSpec> params) {
  struct Group {
    std::string name;
    std::string shape;
    int64_t tensors = 0;
    int64_t elements = 0;
  };
  SmallVector<Group> groups;
  llvm::StringMap<size_t> indexOfGroup;
  for (const ParameterSpec &param : params) {
    std::string name = getGroupName(param.name);
    auto [it, inserted] = indexOfGroup.try_emplace(name, groups.size());
    if (inserted) {
      std::string shape = llvm::join(
          llvm::map_range(param.shape,
                          [](int64_t dim) { return std::to_string(dim); }),
          "x");
      groups.push_back({name, shape});
    }
    Group &group = groups[it->second];
    ++group.tensors;
    group.elements += param.getNumElements();
  }

  int64_t total = countParameters(params);
  size_t nameWidth = strlen("parameter"), shapeWidth = strlen("shape");
  for (const Group &group : groups) {
    nameWidth = std::max(nameWidth, group.name.size());
    shapeWidth = std::max(shapeWidth, group.shape.size());
  }
  // Wide enough for the total, and for the headers.
  size_t countWidth = std::max<size_t>(std::to_string(total).size(), 10);
  auto printRow = [&](StringRef name, StringRef shape, StringRef tensors,
                      StringRef elements, StringRef share) {
    os << llvm::left_justify(name, nameWidth) << "  "
       << llvm::left_justify(shape, shapeWidth) << "  "
       << llvm::right_justify(tensors, 7) << "  "
       << llvm::right_justify(elements, countWidth) << "  "
       << llvm::right_justify(share, 6) << "\n";
  };
  printRow("parameter", "shape", "tensors", "parameters", "share");
  for (const Group &group : groups) {
    double groupShare =
        total ? 100.0 * double(group.elements) / double(total) : 0;
    printRow(group.name, group.shape, std::to_string(group.tensors),
             std::to_string(group.elements),
             llvm::formatv("{0:F1}%", groupShare).str());
  }
  int64_t adapterTensors = 0, adapterElements = 0;
  for (const ParameterSpec &param : params) {
    if (!isLoraParameter(param.name))
      continue;
    ++adapterTensors;
    adapterElements += param.getNumElements();
  }
  auto share = [&](int64_t elements) {
    return total ? 100.0 * double(elements) / double(total) : 0.0;
  };
  if (adapterTensors)
    printRow("LoRA adapters", "", std::to_string(adapterTensors),
             std::to_string(adapterElements),
             llvm::formatv("{0:F1}%", share(adapterElements)).str());
  printRow("total", "", std::to_string(params.size()), std::to_string(total),
           "100.0%");
  if (adapterTensors)
    os << "trainable (LoRA): " << adapterElements << " ("
       << llvm::formatv("{0:F4}%", share(adapterElements)) << " of " << total
       << "; the base model is frozen)\n";
}
