//===- PlanModel.cpp - the models tgc plan can rebuild --------------------===//
//
// A zoo model (gpt2, llama) is recognised from its IR: the configuration is
// read off the parameters' shapes and a few ops' attributes, and accepted
// only when building that configuration prints the same module, so that
// the planner's 1- and 2-layer variants and other batches are the same
// model. Anything else is planned as it is.
//
//===----------------------------------------------------------------------===//

#include "tgc/Driver/Plan.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Zoo/ModelZoo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace tgc;

PlanModel::~PlanModel() = default;

/// GPT-2: wpe on the first stage, ln_f on the last, wte (the tied LM head)
/// on both. LLaMA: the embedding on the first, the norm and the untied LM
/// head on the last.
static std::pair<int64_t, int64_t> edgeParams(const zoo::GPT2Config &c) {
  return {c.positions * c.hidden, 2 * c.hidden};
}
static std::pair<int64_t, int64_t> edgeParams(const zoo::LlamaConfig &c) {
  return {c.vocab * c.hidden, c.hidden + c.hidden * c.vocab};
}

namespace {

/// The expert stacks `function`'s `tg.expert_matmul` ops read (through
/// views and conversions of a parameter): their elements and experts.
static SmallVector<std::pair<int64_t, int64_t>>
findExpertStacks(func::FuncOp function) {
  SmallVector<std::pair<int64_t, int64_t>> stacks;
  llvm::SmallDenseSet<unsigned> seen;
  function.walk([&](tg::ExpertMatmulOp product) {
    Value value = product.getWeight();
    while (Operation *def = value.getDefiningOp()) {
      if (!isa<tg::ReshapeOp, tg::TransposeOp, tg::ConvertOp, tg::SliceOp>(def))
        return;
      value = def->getOperand(0);
    }
    auto arg = cast<BlockArgument>(value);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type ||
        tg::getArgumentRole(function, arg.getArgNumber()) != tg::Role::Param ||
        !seen.insert(arg.getArgNumber()).second)
      return;
    stacks.push_back({type.getNumElements(), product.getNumExperts()});
  });
  return stacks;
}

/// The module as given: one batch, one sequence length, compiled whole.
class GivenModel : public PlanModel {
public:
  GivenModel(ModuleOp module, int64_t batch, int64_t seq, int64_t params,
             std::string file,
             SmallVector<std::pair<int64_t, int64_t>> expertStacks)
      : module(module), batch(batch), seq(seq), params(params),
        file(std::move(file)), expertStacks(std::move(expertStacks)) {}
  std::string describe() const override {
    return file + " as given (not a tgc-zoo model: compiled whole for every "
                  "configuration)";
  }
  int64_t getLayers() const override { return 1; }
  int64_t getSeq() const override { return seq; }
  int64_t getBatch() const override { return batch; }
  bool canReshape() const override { return false; }
  FailureOr<OwningOpRef<ModuleOp>> build(MLIRContext &, int64_t, int64_t,
                                         int64_t) const override {
    return OwningOpRef<ModuleOp>(cast<ModuleOp>(module->clone()));
  }
  std::string getWriteCommand(int64_t, int64_t, StringRef) const override {
    return "";
  }
  int64_t getParams() const override { return params; }
  ArrayRef<std::pair<int64_t, int64_t>> getExpertStacks() const override {
    return expertStacks;
  }

private:
  ModuleOp module;
  int64_t batch, seq, params;
  std::string file;
  SmallVector<std::pair<int64_t, int64_t>> expertStacks;
};

/// A tgc-zoo model of `ConfigT`, rebuilt at any layer count, batch and
/// sequence length.
template <typename ConfigT> class ZooModel : public PlanModel {
public:
  ZooModel(ConfigT config, std::string kind, std::string functionName,
           llvm::ArrayRef<zoo::Preset<ConfigT>> presets)
      : config(config), kind(std::move(kind)),
        functionName(std::move(functionName)), presets(presets) {}
  std::string describe() const override {
    return "tgc-zoo " + kind + " (" + zoo::describeConfig(config) + ")";
  }
  int64_t getLayers() const override { return config.layers; }
  int64_t getSeq() const override { return config.seq; }
  int64_t getBatch() const override { return config.batch; }
  bool canReshape() const override { return true; }
  FailureOr<OwningOpRef<ModuleOp>> build(MLIRContext &context, int64_t layers,
                                         int64_t batch,
                                         int64_t seq) const override {
    ConfigT variant = config;
    variant.layers = layers;
    variant.batch = batch;
    variant.seq = seq;
    if (llvm::Error error = zoo::verifyConfig(variant)) {
      llvm::consumeError(std::move(error));
      return failure();
    }
    return zoo::buildModel(context, variant, functionName);
  }
  std::string getWriteCommand(int64_t batch, int64_t seq,
                              StringRef file) const override {
    std::string command = "tgc-zoo " + kind + " " + getConfigFlags();
    if (functionName != kind)
      command += " --name " + functionName;
    return command +
           llvm::formatv(" --seq {0} --batch {1} -o {2}", seq, batch, file)
               .str();
  }
  int64_t getParams() const override {
    return zoo::countParameters(zoo::getParameters(config));
  }
  int64_t getHidden() const override { return config.hidden; }
  std::pair<int64_t, int64_t> getEdgeParams() const override {
    return edgeParams(config);
  }

  /// The preset the configuration is (sequence and batch aside), else its
  /// sizes as flags.
  std::string getConfigFlags() const;

private:
  ConfigT config;
  std::string kind, functionName;
  llvm::ArrayRef<zoo::Preset<ConfigT>> presets;
};

} // namespace

static bool sameShape(const zoo::GPT2Config &a, const zoo::GPT2Config &b) {
  return a.layers == b.layers && a.hidden == b.hidden && a.heads == b.heads &&
         a.positions == b.positions && a.vocab == b.vocab &&
         a.layerNormEpsilon == b.layerNormEpsilon;
}
static bool sameShape(const zoo::LlamaConfig &a, const zoo::LlamaConfig &b) {
  return a.layers == b.layers && a.hidden == b.hidden && a.heads == b.heads &&
         a.kvHeads == b.kvHeads && a.intermediate == b.intermediate &&
         a.vocab == b.vocab && a.rmsNormEpsilon == b.rmsNormEpsilon &&
         a.ropeTheta == b.ropeTheta;
}
/// `value` as %g writes it when that reads back as the same double, else
/// with all its digits.
static std::string formatDouble(double value) {
  std::string text = llvm::formatv("{0}", llvm::format("%g", value)).str();
  if (std::strtod(text.c_str(), nullptr) == value)
    return text;
  return llvm::formatv("{0}", llvm::format("%.17g", value)).str();
}
static std::string sizeFlags(const zoo::GPT2Config &c) {
  return llvm::formatv("--layers {0} --hidden {1} --heads {2} --positions {3} "
                       "--vocab {4} --norm-eps {5}",
                       c.layers, c.hidden, c.heads, c.positions, c.vocab,
                       formatDouble(c.layerNormEpsilon))
      .str();
}
static std::string sizeFlags(const zoo::LlamaConfig &c) {
  return llvm::formatv("--layers {0} --hidden {1} --heads {2} --kv-heads {3} "
                       "--intermediate {4} --vocab {5} --norm-eps {6} "
                       "--rope-theta {7}",
                       c.layers, c.hidden, c.heads, c.kvHeads, c.intermediate,
                       c.vocab, formatDouble(c.rmsNormEpsilon),
                       formatDouble(c.ropeTheta))
      .str();
}

template <typename ConfigT>
std::string ZooModel<ConfigT>::getConfigFlags() const {
  for (const zoo::Preset<ConfigT> &preset : presets)
    if (sameShape(preset.config, config))
      return ("--preset " + preset.name).str();
  return sizeFlags(config);
}

/// The module printed without locations, for comparing two builds.
static std::string printWithoutLocations(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags());
  return text;
}

namespace {
/// What the IR says about a zoo-like model: its parameters by name, its
/// input's shape, and the first attention, norm and 1-D constants.
struct ModelFacts {
  func::FuncOp function;
  llvm::StringMap<ArrayRef<int64_t>> params;
  int64_t batch = 0, seq = 0, params_ = 0;
  tg::AttentionOp attention;
  std::optional<double> epsilon;
  SmallVector<DenseElementsAttr> vectors;

  int64_t countLayers(StringRef format) const {
    int64_t layers = 0;
    while (params.count(llvm::formatv(format.data(), layers).str()))
      ++layers;
    return layers;
  }
  ArrayRef<int64_t> shape(StringRef name) const {
    auto it = params.find(name);
    return it == params.end() ? ArrayRef<int64_t>() : it->second;
  }
};
} // namespace

static std::optional<ModelFacts> readFacts(ModuleOp module) {
  auto functions = llvm::to_vector(module.getOps<func::FuncOp>());
  if (functions.size() != 1 || functions.front().isExternal())
    return std::nullopt;
  ModelFacts facts;
  facts.function = functions.front();
  for (BlockArgument arg : facts.function.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    std::optional<tg::Role> role =
        tg::getArgumentRole(facts.function, arg.getArgNumber());
    if (!type || !role)
      continue;
    auto name = facts.function.getArgAttrOfType<StringAttr>(
        arg.getArgNumber(), tg::TGDialect::kNameAttrName);
    if (*role == tg::Role::Param) {
      facts.params_ += type.getNumElements();
      if (name)
        facts.params[name.getValue()] = type.getShape();
    } else if (*role == tg::Role::Input && !facts.batch) {
      if (type.getRank() < 1)
        continue;
      facts.batch = type.getDimSize(0);
      facts.seq = type.getRank() > 1 ? type.getDimSize(1) : 0;
    }
  }
  facts.function.walk([&](Operation *op) {
    if (auto attention = dyn_cast<tg::AttentionOp>(op);
        attention && !facts.attention)
      facts.attention = attention;
    else if (auto norm = dyn_cast<tg::RmsNormOp>(op); norm && !facts.epsilon)
      facts.epsilon = norm.getEpsilon().convertToDouble();
    else if (auto norm = dyn_cast<tg::LayerNormOp>(op); norm && !facts.epsilon)
      facts.epsilon = norm.getEpsilon().convertToDouble();
    else if (auto constant = dyn_cast<tg::ConstantOp>(op))
      if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
          dense && dense.getType().getRank() == 1)
        facts.vectors.push_back(dense);
  });
  return facts;
}

/// Accepts `config` when building it prints `module`.
template <typename ConfigT>
static std::unique_ptr<PlanModel>
acceptIfSame(ModuleOp module, ModelFacts &facts, const ConfigT &config,
             StringRef kind, llvm::ArrayRef<zoo::Preset<ConfigT>> presets) {
  if (llvm::Error error = zoo::verifyConfig(config)) {
    llvm::consumeError(std::move(error));
    return nullptr;
  }
  FailureOr<OwningOpRef<ModuleOp>> rebuilt = zoo::buildModel(
      *module.getContext(), config, facts.function.getSymName());
  if (failed(rebuilt) ||
      printWithoutLocations(**rebuilt) != printWithoutLocations(module))
    return nullptr;
  return std::make_unique<ZooModel<ConfigT>>(
      config, kind.str(), facts.function.getSymName().str(), presets);
}

static std::unique_ptr<PlanModel> recognizeGPT2(ModuleOp module,
                                                ModelFacts &facts) {
  ArrayRef<int64_t> wte = facts.shape("wte.weight"),
                    wpe = facts.shape("wpe.weight");
  if (wte.size() != 2 || wpe.size() != 2 || !facts.attention || !facts.epsilon)
    return nullptr;
  zoo::GPT2Config config;
  config.layers = facts.countLayers("h.{0}.ln_1.weight");
  config.vocab = wte[0];
  config.hidden = wte[1];
  config.positions = wpe[0];
  config.heads = facts.attention.getQuery().getType().getDimSize(1);
  config.seq = facts.seq;
  config.batch = facts.batch;
  config.layerNormEpsilon = *facts.epsilon;
  return acceptIfSame(module, facts, config, "gpt2", zoo::getGPT2Presets());
}

static std::unique_ptr<PlanModel> recognizeLlama(ModuleOp module,
                                                 ModelFacts &facts) {
  ArrayRef<int64_t> embed = facts.shape("model.embed_tokens.weight"),
                    gate = facts.shape("model.layers.0.mlp.gate_proj.weight");
  if (embed.size() != 2 || gate.size() != 2 || !facts.attention ||
      !facts.epsilon)
    return nullptr;
  zoo::LlamaConfig config;
  config.layers = facts.countLayers("model.layers.{0}.input_layernorm.weight");
  config.vocab = embed[0];
  config.hidden = embed[1];
  config.intermediate = gate[1];
  config.heads = facts.attention.getQuery().getType().getDimSize(1);
  config.kvHeads = facts.attention.getKey().getType().getDimSize(1);
  config.seq = facts.seq;
  config.batch = facts.batch;
  config.rmsNormEpsilon = *facts.epsilon;
  // The rotary frequencies theta^(-2i/D): the theta their second element
  // gives (rounded, as published thetas are whole), else Llama's default.
  int64_t half = config.heads ? config.hidden / config.heads / 2 : 0;
  for (DenseElementsAttr vector : facts.vectors) {
    if (vector.getNumElements() != half || half < 2 ||
        !vector.getElementType().isF32())
      continue;
    auto values = vector.getValues<float>();
    if (values[0] != 1.0f || !(values[1] > 0.0f && values[1] < 1.0f))
      continue;
    double theta = std::pow(double(values[1]), -double(half));
    config.ropeTheta = std::round(theta);
    break;
  }
  return acceptIfSame(module, facts, config, "llama", zoo::getLlamaPresets());
}

std::unique_ptr<PlanModel> tgc::recognizePlanModel(ModuleOp module,
                                                   StringRef modelFile) {
  std::optional<ModelFacts> facts = readFacts(module);
  if (facts) {
    if (auto gpt2 = recognizeGPT2(module, *facts))
      return gpt2;
    if (auto llama = recognizeLlama(module, *facts))
      return llama;
  }
  return std::make_unique<GivenModel>(
      module, facts ? facts->batch : 0, facts ? facts->seq : 0,
      facts ? facts->params_ : 0, modelFile.str(),
      facts ? findExpertStacks(facts->function)
            : SmallVector<std::pair<int64_t, int64_t>>());
}
