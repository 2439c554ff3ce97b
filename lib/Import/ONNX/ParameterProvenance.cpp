//===- ParameterProvenance.cpp - state-dict names the exporter lost -------===//
//
// Recovers the parameters of the user's list that the exporter merged into
// another tensor or folded into a transpose, from the evidence the
// exporters leave in the graph; see ParameterProvenance.h.
//
//===----------------------------------------------------------------------===//

#include "ParameterProvenance.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <google/protobuf/unknown_field_set.h>

#include <limits>

using namespace llvm;
using namespace tgc::onnx_import;

static constexpr StringLiteral kNameScopes = "pkg.torch.onnx.name_scopes";
static constexpr StringLiteral kFxNode = "pkg.torch.onnx.fx_node";
static constexpr StringLiteral kFoldedFrom =
    "pkg.onnxscript.optimizer.folded_from";

std::optional<std::string>
tgc::onnx_import::getMetadata(const google::protobuf::Message &proto, int field,
                              StringRef key) {
  const google::protobuf::UnknownFieldSet &unknown =
      proto.GetReflection()->GetUnknownFields(proto);
  for (int i = 0, e = unknown.field_count(); i < e; ++i) {
    const google::protobuf::UnknownField &entry = unknown.field(i);
    if (entry.number() != field ||
        entry.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto pair;
    if (pair.ParseFromString(entry.length_delimited()) && pair.key() == key)
      return pair.value();
  }
  return std::nullopt;
}

static std::optional<std::string> getNodeMetadata(const onnx::NodeProto &node,
                                                  StringRef key) {
  return getMetadata(node, kNodeMetadataField, key);
}

std::optional<SmallVector<std::string>>
tgc::onnx_import::parseStringList(StringRef text) {
  text = text.trim();
  if (!text.consume_front("[") || !text.consume_back("]"))
    return std::nullopt;
  SmallVector<std::string> items;
  text = text.trim();
  while (!text.empty()) {
    char quote = text.front();
    if (quote != '\'' && quote != '"')
      return std::nullopt;
    size_t end = text.find(quote, 1);
    if (end == StringRef::npos)
      return std::nullopt;
    StringRef item = text.slice(1, end);
    if (item.contains('\\'))
      return std::nullopt;
    items.push_back(item.str());
    text = text.drop_front(end + 1).ltrim();
    if (!text.empty() && !text.consume_front(","))
      return std::nullopt;
    text = text.ltrim();
  }
  return items;
}

StringRef tgc::onnx_import::getFxNodeOp(StringRef name) {
  auto [base, suffix] = name.rsplit('_');
  return !suffix.empty() && llvm::all_of(suffix, llvm::isDigit) ? base : name;
}

bool tgc::onnx_import::hasScopeMetadata(const onnx::NodeProto &node) {
  std::optional<std::string> scopes = getNodeMetadata(node, kNameScopes);
  if (!scopes)
    return false;
  std::optional<SmallVector<std::string>> items = parseStringList(*scopes);
  return items && items->size() >= 2;
}

std::optional<std::string>
tgc::onnx_import::getModuleScope(const onnx::NodeProto &node) {
  // The last scope is the op's own (`linear`, `mul_4`), the one before it
  // the innermost module's path from the exported module.
  if (std::optional<std::string> scopes = getNodeMetadata(node, kNameScopes)) {
    std::optional<SmallVector<std::string>> items = parseStringList(*scopes);
    if (!items || items->size() < 2)
      return std::nullopt;
    return (*items)[items->size() - 2];
  }
  // `/model/layers.0/mlp/up_proj/MatMul`: the TorchScript exporter joins
  // the module names of the scope with '/'. A called container's child is
  // named after it (`/layer1/layer1.0/conv1/Conv`: `layer1.0.conv1`).
  StringRef name = node.name();
  if (!name.consume_front("/"))
    return std::nullopt;
  SmallVector<StringRef> parts;
  name.split(parts, '/');
  parts.pop_back();
  if (parts.empty() || llvm::any_of(parts, [](StringRef p) {
        return p.empty() || p.contains(':');
      }))
    return std::nullopt;
  SmallVector<StringRef> path;
  for (StringRef part : parts) {
    if (!path.empty() && part.starts_with(path.back().str() + "."))
      path.pop_back();
    path.push_back(part);
  }
  return llvm::join(path, ".");
}

/// The target of the FX node an ONNX node came from (`aten.linear.default`).
static std::optional<std::string> getFxTarget(const onnx::NodeProto &node) {
  std::optional<std::string> fx = getNodeMetadata(node, kFxNode);
  if (!fx)
    return std::nullopt;
  size_t start = fx->find("[target=");
  if (start == StringRef::npos)
    return std::nullopt;
  StringRef target = StringRef(*fx).drop_front(start + strlen("[target="));
  target = target.take_until([](char c) { return c == ']'; });
  target.consume_front("torch.ops.");
  return target.str();
}

/// The parameter placeholders (`p_model_norm_weight`) among the arguments
/// of the FX node an ONNX node came from.
static SmallVector<std::string>
getFxParameterArguments(const onnx::NodeProto &node) {
  SmallVector<std::string> placeholders;
  std::optional<std::string> fx = getNodeMetadata(node, kFxNode);
  if (!fx)
    return placeholders;
  size_t start = fx->find("](");
  if (start == StringRef::npos)
    return placeholders;
  StringRef args = StringRef(*fx).drop_front(start);
  while (true) {
    size_t at = args.find("%p_");
    if (at == StringRef::npos)
      break;
    args = args.drop_front(at + 1);
    StringRef token =
        args.take_while([](char c) { return llvm::isAlnum(c) || c == '_'; });
    placeholders.push_back(token.lower());
    args = args.drop_front(token.size());
  }
  return placeholders;
}

/// The arguments of the FX node an ONNX node came from, as printed
/// (`%conv2d`, `None`, `True`, `0.1`), split at the commas outside brackets,
/// and its keyword arguments (`label_smoothing: 0.1`) by name.
struct FxArguments {
  SmallVector<std::string> positional;
  llvm::StringMap<std::string> keywords;
};
static std::optional<FxArguments> getFxArguments(const onnx::NodeProto &node) {
  std::optional<std::string> fx = getNodeMetadata(node, kFxNode);
  if (!fx)
    return std::nullopt;
  FxArguments result;
  // Splits the text after `open` up to its closing bracket into items.
  auto split = [&](StringRef text, StringRef open,
                   SmallVector<std::string> &items) {
    size_t start = text.find(open);
    if (start == StringRef::npos)
      return false;
    text = text.drop_front(start + open.size());
    int depth = 0;
    std::string item;
    for (char c : text) {
      if (depth == 0 && (c == ')' || c == '}' || c == ',')) {
        if (!StringRef(item).trim().empty())
          items.push_back(StringRef(item).trim().str());
        item.clear();
        if (c == ',')
          continue;
        return true;
      }
      depth += (c == '(' || c == '[' || c == '{');
      depth -= (c == ')' || c == ']' || c == '}');
      item += c;
    }
    return false;
  };
  SmallVector<std::string> keywords;
  if (!split(*fx, "](args = (", result.positional) ||
      !split(*fx, "kwargs = {", keywords))
    return std::nullopt;
  for (StringRef keyword : keywords) {
    auto [key, value] = keyword.split(':');
    result.keywords[key.trim()] = value.trim().str();
  }
  return result;
}

std::optional<ExportDeviation>
tgc::onnx_import::getExportDeviation(const onnx::NodeProto &node) {
  std::optional<std::string> target = getFxTarget(node);
  std::optional<FxArguments> args = getFxArguments(node);
  if (!target || !args)
    return std::nullopt;
  // An argument by position or by name, as printed.
  auto argument = [&](size_t index, StringRef name) -> std::string {
    auto keyword = args->keywords.find(name);
    if (keyword != args->keywords.end())
      return keyword->second;
    return index < args->positional.size() ? args->positional[index] : "";
  };
  std::string module = getModuleScope(node).value_or("");
  std::string where = module.empty() ? "" : " '" + module + "'";
  auto deviation = [&](StringRef kind, std::string message) {
    return ExportDeviation{kind.str(), module, std::move(message)};
  };
  StringRef op = *target;
  // The rewrite rules that made the node, comma-separated in the order
  // applied (`RemoveOptionalBiasFromConv, FuseBatchNormIntoConv`).
  std::string rule;
  if (std::optional<std::string> rules =
          getNodeMetadata(node, "pkg.onnxscript.rewriter.rule_name")) {
    SmallVector<StringRef> names;
    StringRef(*rules).split(names, ',');
    for (StringRef name : names)
      if (name.trim().starts_with("FuseBatchNormInto"))
        rule = name.trim().str();
  }
  bool fused = !rule.empty() && node.op_type() != "BatchNormalization";
  // aten.batch_norm, native_batch_norm, _native_batch_norm_legit(_functional):
  // (input, weight, bias, running_mean, running_var, training, ...);
  // _batch_norm_with_update trains without the flag. Without running
  // statistics the exporter computes the batch's.
  bool training = op.contains("batch_norm") && !op.contains("backward") &&
                  (argument(5, "training") == "True" ||
                   op.starts_with("aten._batch_norm_with_update"));
  if (training && argument(3, "running_mean") != "None") {
    bool trainingNode = false;
    for (const onnx::AttributeProto &attribute : node.attribute())
      trainingNode |= attribute.name() == "training_mode" && attribute.i();
    if (node.op_type() == "BatchNormalization"
            ? trainingNode || node.output_size() > 1
            : !fused)
      return std::nullopt;
    std::string text =
        "training-mode batch norm" + where +
        " exported in inference mode (the dynamo exporter's way): ";
    // A BatchNormalization of its own trains as the FX node says:
    // (..., training, momentum, eps), or (..., momentum, eps) of
    // _batch_norm_with_update.
    std::string momentum = argument(
        op.starts_with("aten._batch_norm_with_update") ? 5 : 6, "momentum");
    double value = 0;
    if (!fused && !StringRef(momentum).getAsDouble(value) && value >= 0 &&
        value <= 1) {
      ExportDeviation recovered =
          deviation("train-bn-recovered",
                    text +
                        "trained as its FX node says (the batch's statistics; "
                        "the running ones updated with momentum " +
                        StringRef(momentum).take_front(24).str() +
                        " and the unbiased variance, as PyTorch does)");
      recovered.recovered = true;
      recovered.momentum = value;
      return recovered;
    }
    text += "it normalizes with the running statistics, not the batch's";
    if (fused)
      text += "; folded into this " + node.op_type() + " by " + rule;
    return deviation(fused ? "train-bn-fused" : "train-bn",
                     text + "; export with dynamo=False, "
                            "training=TrainingMode.TRAINING to train as "
                            "PyTorch does");
  }
  // An eval-mode batch norm the optimizer folded into the Conv, ConvTranspose
  // or Gemm before it (W * gamma / std, (b - mean) * gamma / std + beta):
  // the same function, but what trains is the product, and the batch norm's
  // weight and bias, which PyTorch trains in eval mode too, are gone. The
  // file keeps neither factor, so the import cannot undo it.
  if (fused && op.contains("batch_norm") && !op.contains("backward"))
    return deviation(
        "eval-bn-fused",
        "batch norm" + where + " folded into this " + node.op_type() + " by " +
            rule +
            " (export with optimize=False to avoid): its weight and bias do "
            "not train, the " +
            node.op_type() + " trains their product");
  // aten.embedding(weight, indices, padding_idx, scale_grad_by_freq, ...).
  if (op.starts_with("aten.embedding.") && node.op_type() == "Gather" &&
      argument(3, "scale_grad_by_freq") == "True")
    return deviation("embedding-freq",
                     "embedding" + where +
                         " has scale_grad_by_freq=True in PyTorch, which a "
                         "Gather cannot say: its gradient is not divided by "
                         "the ids' counts here");
  // aten.scaled_dot_product_attention(query, key, value, attn_mask,
  // dropout_p, is_causal, ...): decomposed into nodes that all record it
  // (warned at its Softmax), or ONNX's Attention; neither drops.
  if (op.starts_with("aten.scaled_dot_product_attention") &&
      (node.op_type() == "Softmax" || node.op_type() == "Attention")) {
    std::string rate = argument(4, "dropout_p");
    double value = 0;
    if (rate.empty() || StringRef(rate).getAsDouble(value) || value == 0)
      return std::nullopt;
    return deviation(
        "sdpa-dropout",
        "scaled_dot_product_attention" + where + " has dropout_p " +
            StringRef(rate).take_front(24).str() +
            " in PyTorch, which the exporter dropped: this attention drops "
            "nothing; export an attention written op by op (its softmax, a "
            "Dropout, a matmul) to keep it");
  }
  // aten.cross_entropy_loss(self, target, weight, reduction, ignore_index,
  // label_smoothing): ONNX's loss ops have no smoothing.
  if (op.starts_with("aten.cross_entropy_loss") &&
      (node.op_type() == "SoftmaxCrossEntropyLoss" ||
       node.op_type() == "NegativeLogLikelihoodLoss")) {
    std::string smoothing = argument(5, "label_smoothing");
    double value = 0;
    if (smoothing.empty() || StringRef(smoothing).getAsDouble(value) ||
        value == 0)
      return std::nullopt;
    return deviation(
        "label-smoothing",
        "cross-entropy" + where + " has label_smoothing " +
            StringRef(smoothing).take_front(24).str() +
            " in PyTorch, which the exporter dropped (" + node.op_type() +
            " has none): this loss is unsmoothed; compute the smoothed loss "
            "in the model's code to export it");
  }
  return std::nullopt;
}

std::optional<double>
tgc::onnx_import::getRecoveredBatchNormMomentum(const onnx::NodeProto &node) {
  if (node.op_type() != "BatchNormalization")
    return std::nullopt;
  std::optional<ExportDeviation> deviation = getExportDeviation(node);
  if (!deviation || !deviation->recovered)
    return std::nullopt;
  return deviation->momentum;
}

llvm::DenseSet<const onnx::NodeProto *>
tgc::onnx_import::findAttentionMaskFills(const onnx::GraphProto &graph) {
  // The FX nodes (their text) of the attentions whose softmax is guarded.
  llvm::StringSet<> guarded;
  SmallVector<std::pair<const onnx::NodeProto *, std::string>> fills;
  for (const onnx::NodeProto &node : graph.node()) {
    if (!node.domain().empty() ||
        (node.op_type() != "IsNaN" && node.op_type() != "Where"))
      continue;
    std::optional<std::string> target = getFxTarget(node);
    if (!target ||
        !StringRef(*target).starts_with("aten.scaled_dot_product_attention"))
      continue;
    std::optional<std::string> fx = getNodeMetadata(node, kFxNode);
    if (node.op_type() == "IsNaN")
      guarded.insert(*fx);
    else if (node.input_size() == 3)
      fills.push_back({&node, *fx});
  }
  llvm::DenseSet<const onnx::NodeProto *> result;
  for (auto &[node, fx] : fills)
    if (guarded.contains(fx))
      result.insert(node);
  return result;
}

bool tgc::onnx_import::hasNoFxConvBias(const onnx::NodeProto &node) {
  std::optional<std::string> target = getFxTarget(node);
  if (!target || !(StringRef(*target).starts_with("aten.conv1d.") ||
                   StringRef(*target).starts_with("aten.conv2d.") ||
                   StringRef(*target).starts_with("aten.conv3d.") ||
                   StringRef(*target).starts_with("aten.convolution.")))
    return false;
  // (input, weight, bias=None, stride, ...): the bias third, by position
  // or name, None when not given.
  std::optional<FxArguments> args = getFxArguments(node);
  if (!args || args->positional.size() < 2)
    return false;
  auto keyword = args->keywords.find("bias");
  if (keyword != args->keywords.end())
    return keyword->second == "None";
  return args->positional.size() == 2 || args->positional[2] == "None";
}

std::optional<int64_t>
tgc::onnx_import::getEmbeddingPaddingIdx(const onnx::NodeProto &node) {
  std::optional<std::string> target = getFxTarget(node);
  if (!target || !StringRef(*target).starts_with("aten.embedding.") ||
      node.op_type() != "Gather")
    return std::nullopt;
  std::optional<FxArguments> args = getFxArguments(node);
  if (!args)
    return std::nullopt;
  // aten.embedding(weight, indices, padding_idx=-1, scale_grad_by_freq,
  // sparse); nn.Embedding makes a negative padding_idx a row first.
  auto keyword = args->keywords.find("padding_idx");
  StringRef text = keyword != args->keywords.end() ? keyword->second
                   : args->positional.size() > 2   ? args->positional[2]
                                                   : "";
  int64_t row = -1;
  if (text.getAsInteger(10, row) || row < 0)
    return std::nullopt;
  return row;
}

/// torch.export's placeholder for parameter `name`, lowercased as
/// torch.export writes it (`p_bert_embeddings_layernorm_weight` for
/// `bert.embeddings.LayerNorm.weight`).
static std::string getPlaceholder(StringRef name) {
  std::string placeholder = "p_" + name.lower();
  std::replace(placeholder.begin(), placeholder.end(), '.', '_');
  return placeholder;
}

bool tgc::onnx_import::readsParameterInFx(const onnx::NodeProto &node,
                                          StringRef name) {
  return llvm::is_contained(getFxParameterArguments(node),
                            getPlaceholder(name));
}

static bool isDefaultDomain(const onnx::NodeProto &node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

static std::string describe(const onnx::NodeProto &node) {
  return "'" + (node.name().empty() ? node.op_type() : node.name()) + "'";
}

/// The readers of a parameter through which a gradient flows (not
/// comparisons or shapes).
static bool carriesGradient(const onnx::NodeProto &node) {
  static const StringSet<> noGradient = {
      "Equal",          "Less",  "LessOrEqual", "Greater",
      "GreaterOrEqual", "Shape", "Size",        "IsNaN"};
  return !noGradient.contains(node.op_type());
}

namespace {
/// The analysis in progress: the user's names, which the graph lacks, and
/// who reads what.
struct Analysis {
  const onnx::GraphProto &graph;
  StringSet<> listed, missing, graphOutputs, initializers;
  StringMap<SmallVector<const onnx::NodeProto *>> readers;
  StringMap<SmallVector<std::string>> foldedFrom;
  /// The listed name of each placeholder (`p_model_norm_weight`); empty
  /// where two listed names share one (`a.b_c`, `a_b.c`).
  StringMap<std::string> placeholderNames;
  ParameterProvenance result;

  explicit Analysis(const onnx::GraphProto &graph) : graph(graph) {}
  /// The listed name of the FX placeholder argument `argument` (`%p_...`),
  /// or "".
  std::string getListedName(StringRef argument) const {
    if (!argument.consume_front("%"))
      return "";
    return placeholderNames.lookup(argument.lower());
  }
  void findSplits(const onnx::TensorProto &initializer, StringRef source);
  void findTranspose(const onnx::TensorProto &initializer);
  void findBroadcast(const onnx::TensorProto &initializer);
  void dropNamesClaimedTwice();
  void findDroppedBiases();
  void findTiedNames(ArrayRef<std::string> order);
  /// The names a recovery found so far gives a tensor.
  StringSet<> getClaimedNames() const {
    StringSet<> claimed;
    for (const ParameterSplit &split : result.splits)
      claimed.insert(split.name);
    for (const FoldedTranspose &transpose : result.transposes)
      claimed.insert(transpose.name);
    for (const FoldedBroadcast &broadcast : result.broadcasts)
      claimed.insert(broadcast.name);
    for (const DroppedBias &bias : result.droppedBiases)
      claimed.insert(bias.name);
    return claimed;
  }
};
} // namespace

/// torch.export gives parameters tied by module sharing one placeholder,
/// named after one of them (GPT-2's `lm_head.weight` for the embedding
/// `transformer.wte.weight` it is tied to; the other name stays in the
/// signature, read by no FX node), and the exporter names the initializer
/// after it. A node in module M whose FX node reads parameter I through I's
/// placeholder, where `M.<I's last name>` is listed, missing and read by no
/// FX node, shows that name to be I's tie: the parameter takes the first of
/// its names in the list (named_parameters()'s, which checkpoints that
/// store a tie once keep).
void Analysis::findTiedNames(ArrayRef<std::string> order) {
  StringSet<> claimed = getClaimedNames(), readInFx;
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &placeholder : getFxParameterArguments(node))
      readInFx.insert(placeholder);
  // An unlisted name comes after every listed one (named_parameters()
  // lists a tie once: GPT-2's `lm_head.weight` is not in a --parameters
  // list of it).
  StringMap<unsigned> position;
  for (auto [i, name] : llvm::enumerate(order))
    position.try_emplace(name, i);
  auto rank = [&](StringRef name) {
    auto it = position.find(name);
    return it == position.end() ? std::numeric_limits<unsigned>::max()
                                : it->second;
  };
  for (const onnx::TensorProto &initializer : graph.initializer()) {
    StringRef name = initializer.name();
    StringRef leaf = name.rsplit('.').second;
    std::string first = name.str();
    for (const onnx::NodeProto *node : readers.lookup(name)) {
      std::optional<std::string> module = getModuleScope(*node);
      if (leaf.empty() || !module || !readsParameterInFx(*node, name))
        continue;
      std::string tie = *module + "." + leaf.str();
      if (tie == name || !missing.contains(tie) || claimed.contains(tie) ||
          readInFx.contains(getPlaceholder(tie)))
        continue;
      if (rank(tie) < rank(first))
        first = tie;
    }
    if (first != name) {
      claimed.insert(first);
      result.tiedNames.push_back({name.str(), first});
    }
  }
}

/// One tensor read in several modules whose parameters the list names but
/// the graph lacks: each reader whose FX node reads such a parameter's
/// placeholder gets it back (the one missing parameter its FX node reads,
/// else the reader's module and the tensor's leaf name, `weight`). A reader
/// in the tensor's own module, or whose FX node reads the tensor's own
/// placeholder (a tied weight), keeps the tensor.
void Analysis::findSplits(const onnx::TensorProto &initializer,
                          StringRef source) {
  StringRef name = initializer.name();
  SmallVector<const onnx::NodeProto *> users;
  for (const onnx::NodeProto *node : readers.lookup(name))
    if (carriesGradient(*node))
      users.push_back(node);
  if (users.size() < 2 || missing.empty() ||
      llvm::any_of(users,
                   [](const onnx::NodeProto *node) {
                     return node->op_type() == "Identity";
                   }) ||
      llvm::none_of(users, [](const onnx::NodeProto *node) {
        return hasScopeMetadata(*node);
      }))
    return;
  auto [prefix, leaf] = source.rsplit('.');
  if (leaf.empty() || prefix.empty())
    return;
  std::string own = getPlaceholder(source);
  MapVector<StringRef, SmallVector<RecoveredUse>> splits;
  std::string problem;
  bool ownReader = false;
  for (const onnx::NodeProto *node : users) {
    if (!hasScopeMetadata(*node)) {
      problem = "node " + describe(*node) + " has no module scope (" +
                kNameScopes.str() + ")";
      break;
    }
    std::string module = *getModuleScope(*node);
    std::string candidate = module + "." + leaf.str();
    SmallVector<std::string> placeholders = getFxParameterArguments(*node);
    // The FX node names the parameter where the module does not (the
    // out_proj.bias of nn.MultiheadAttention, read by F.linear in the
    // attention's own scope): the one missing parameter among its
    // arguments, or the one of them with the tensor's leaf name.
    SmallVector<std::string> read;
    for (const std::string &placeholder : placeholders)
      if (std::string listedName = placeholderNames.lookup(placeholder);
          missing.contains(listedName) && !llvm::is_contained(read, listedName))
        read.push_back(listedName);
    if (read.size() > 1)
      llvm::erase_if(read, [&](const std::string &other) {
        return StringRef(other).rsplit('.').second != leaf;
      });
    if (read.size() == 1)
      candidate = read.front();
    if (candidate == source || llvm::is_contained(placeholders, own)) {
      ownReader = true;
      continue;
    }
    std::string where = "node " + describe(*node) + " in '" + module + "'";
    if (!missing.contains(candidate)) {
      problem = where + " would read '" + candidate + "', which " +
                (listed.contains(candidate) ? "is an initializer of its own"
                                            : "--parameters does not list");
      break;
    }
    if (placeholders.empty()) {
      problem = where + " has no FX node (" + kFxNode.str() +
                ") to tell a merged tensor from a tied one";
      break;
    }
    if (!llvm::is_contained(placeholders, getPlaceholder(candidate))) {
      problem = where + " reads '" + placeholders.front() +
                "' in its FX node, not '" + getPlaceholder(candidate) + "'";
      break;
    }
    splits[StringRef(missing.find(candidate)->getKey())].push_back(
        {node, module});
  }
  if (problem.empty() && !splits.empty() && !ownReader)
    problem = "no reader is in the module of '" + source.str() + "' itself";
  if (!problem.empty()) {
    result.unrecovered.push_back({name.str(), "not split: " + problem});
    return;
  }
  for (auto &[splitName, uses] : splits)
    result.splits.push_back(
        {name.str(), splitName.str(), std::move(uses), source.str()});
}

/// A rank-2 initializer the list does not name, read only as the right
/// operand of MatMuls in module M (of one, without FX nodes) where the list
/// names `M.weight` (or the weight argument of their FX node) and the graph
/// lacks it: the exporter folded the weight's transpose (a Linear computes
/// x W^T). Certain when the dynamo exporter's FX nodes are `aten.linear` of
/// that placeholder (and the optimizer's folded_from, when present, names
/// it alone), or when the TorchScript exporter named the initializer after
/// its MatMul (`onnx::MatMul_N`) and the node after M. A weight the graph
/// has is a tied one (F.linear(h, embedding.weight)), certain only with the
/// FX node's word.
void Analysis::findTranspose(const onnx::TensorProto &initializer) {
  StringRef name = initializer.name();
  // A copy: lookup returns the list by value (an ArrayRef of it dangled,
  // and a list past the inline size crashed the import of RWKV).
  const SmallVector<const onnx::NodeProto *> users = readers.lookup(name);
  if (initializer.dims_size() != 2 || users.empty() ||
      graphOutputs.contains(name))
    return;
  // The parameter each MatMul reads: its module's `weight`, or the FX
  // node's weight argument, which names the parameter where the module
  // does not (nn.MultiheadAttention's in_proj_weight, a head that is
  // F.linear(x, embedding.weight)). Several readers (a Linear applied
  // twice) must all be aten.linear of the same one.
  std::string weight;
  std::optional<std::string> module;
  bool namedByFx = false;
  for (const onnx::NodeProto *node : users) {
    if (node->op_type() != "MatMul" || !isDefaultDomain(*node) ||
        node->input_size() != 2 || node->input(1) != name ||
        node->input(0) == name)
      return;
    std::optional<std::string> scope = getModuleScope(*node);
    if (!scope || (users.size() > 1 && !hasScopeMetadata(*node)))
      return;
    std::string read = *scope + ".weight";
    bool fromFx = false;
    if (std::optional<FxArguments> args = getFxArguments(*node);
        args && hasScopeMetadata(*node)) {
      auto keyword = args->keywords.find("weight");
      std::string listedName = getListedName(
          keyword != args->keywords.end() ? StringRef(keyword->second)
          : args->positional.size() > 1   ? StringRef(args->positional[1])
                                          : StringRef());
      fromFx = !listedName.empty();
      if (fromFx)
        read = listedName;
    }
    if (node != users.front() && read != weight)
      return;
    weight = read;
    namedByFx = fromFx;
    if (!module)
      module = scope;
  }
  // A listed parameter the graph has: the folded tensor may be its tied
  // transpose (checked against its value at import), certain only with the
  // FX node's word.
  bool tied = !missing.contains(weight);
  if (tied && (!namedByFx || !initializers.contains(weight)))
    return;
  std::string evidence;
  auto refuse = [&](const std::string &why) {
    result.unrecovered.push_back(
        {name.str(), "not named '" + weight + "': " + why});
  };
  const onnx::NodeProto &node = *users.front();
  if (hasScopeMetadata(node)) {
    // `x @ weight.T` (Falcon's FalconLinear): aten.matmul of the FX node
    // `permute` or `t` of the weight, which the optimizer folded, its
    // folded_from naming the weight alone.
    auto folded = foldedFrom.find(name);
    StringRef stem = getFxNodeOp(name);
    bool transposeFold =
        (stem == "permute" || stem == "t" || stem == "transpose") &&
        folded != foldedFrom.end() && folded->second.size() == 1 &&
        folded->second.front() == weight;
    for (const onnx::NodeProto *user : users) {
      std::optional<std::string> target = getFxTarget(*user);
      bool linear = target && *target == "aten.linear.default";
      bool matmul = target && (*target == "aten.matmul.default" ||
                               *target == "aten.mm.default");
      if (!linear && !(matmul && transposeFold))
        return refuse(
            "its MatMul " + describe(*user) + " comes from " +
            (target ? "'" + *target + "'" : std::string("no FX node")) +
            ", not aten.linear");
      if (linear && !readsParameterInFx(*user, weight))
        return refuse("its MatMul's FX node does not read '" +
                      getPlaceholder(weight) + "'");
    }
    evidence = "its MatMul " + describe(node) +
               (users.size() > 1
                    ? " and " + std::to_string(users.size() - 1) + " more are"
                    : std::string(" is")) +
               (transposeFold && getFxTarget(node) != "aten.linear.default"
                    ? " aten.matmul of its " + stem.str()
                    : std::string(" aten.linear of it"));
    if (folded != foldedFrom.end()) {
      if (folded->second.size() != 1 || folded->second.front() != weight)
        return refuse("the optimizer's folded_from does not name it alone");
      evidence += ", folded_from names it";
    }
  } else {
    if (!name.starts_with("onnx::MatMul_"))
      return;
    evidence = "TorchScript node '" + node.name() + "'";
  }
  result.transposes.push_back(
      {name.str(), weight, {&node, *module}, std::move(evidence), tied});
}

/// An initializer the optimizer folded from aten.expand of one listed
/// parameter: named after the FX node (`expand`, `expand_3`), its
/// folded_from naming that parameter and otherwise only values the fold
/// consumed (the expand's sizes), none of them an initializer.
void Analysis::findBroadcast(const onnx::TensorProto &initializer) {
  StringRef name = initializer.name();
  if (getFxNodeOp(name) != "expand" || graphOutputs.contains(name))
    return;
  auto folded = foldedFrom.find(name);
  if (folded == foldedFrom.end())
    return;
  std::string source;
  for (const std::string &from : folded->second) {
    if (listed.contains(from)) {
      if (!source.empty())
        return;
      source = from;
    } else if (initializers.contains(from)) {
      return;
    }
  }
  if (source.empty())
    return;
  result.broadcasts.push_back(
      {name.str(), source, initializers.contains(source)});
}

/// The nodes whose FX node is aten.linear, aten.addmm or a convolution with
/// a bias parameter that is missing, unclaimed and read by no node: the
/// optimizer dropped it (it only drops a zero bias). A Gemm, Conv or
/// ConvTranspose then has no bias input; a MatMul no other node of its FX
/// node (the Add).
void Analysis::findDroppedBiases() {
  StringSet<> claimed = getClaimedNames();
  // A MatMul whose FX node other nodes share kept its bias there (the Add
  // of a linear, reading a tensor merged with another).
  StringMap<unsigned> fxNodeUses;
  for (const onnx::NodeProto &node : graph.node())
    if (std::optional<std::string> fx = getNodeMetadata(node, kFxNode))
      ++fxNodeUses[*fx];
  MapVector<StringRef, DroppedBias> dropped;
  for (const onnx::NodeProto &node : graph.node()) {
    StringRef type = node.op_type();
    bool biasInput =
        type == "Gemm" || type == "Conv" || type == "ConvTranspose";
    if (!isDefaultDomain(node) || (!biasInput && type != "MatMul") ||
        (biasInput && node.input_size() > 2 && !node.input(2).empty()) ||
        node.output_size() != 1)
      continue;
    std::optional<std::string> target = getFxTarget(node);
    std::optional<FxArguments> args = getFxArguments(node);
    if (!target || !args)
      continue;
    if (type == "MatMul" &&
        fxNodeUses.lookup(*getNodeMetadata(node, kFxNode)) > 1)
      continue;
    StringRef op = *target;
    // aten.addmm(bias, x, weight): GPT-2's Conv1D.
    bool addmm = op == "aten.addmm.default";
    bool linear = op == "aten.linear.default" || addmm;
    bool conv = op.starts_with("aten.conv1d.") ||
                op.starts_with("aten.conv2d.") ||
                op.starts_with("aten.conv3d.") ||
                op.starts_with("aten.conv_transpose1d.") ||
                op.starts_with("aten.conv_transpose2d.") ||
                op.starts_with("aten.conv_transpose3d.") ||
                op == "aten.convolution.default";
    if (!(linear && (type == "Gemm" || type == "MatMul")) &&
        !(conv && (type == "Conv" || type == "ConvTranspose")))
      continue;
    auto keyword = args->keywords.find(addmm ? "self" : "bias");
    size_t position = addmm ? 0 : 2;
    std::string bias = getListedName(keyword != args->keywords.end()
                                         ? StringRef(keyword->second)
                                     : args->positional.size() > position
                                         ? StringRef(args->positional[position])
                                         : StringRef());
    if (bias.empty() || !missing.contains(bias) || claimed.contains(bias) ||
        readers.count(bias))
      continue;
    DroppedBias &entry = dropped[StringRef(missing.find(bias)->getKey())];
    entry.name = bias;
    entry.lastDimension = linear;
    entry.nodes.push_back(&node);
  }
  for (auto &[name, entry] : dropped)
    result.droppedBiases.push_back(std::move(entry));
}

/// A name two tensors would take is no certain name for either.
void Analysis::dropNamesClaimedTwice() {
  StringMap<unsigned> claims;
  for (const ParameterSplit &split : result.splits)
    ++claims[split.name];
  for (const FoldedTranspose &transpose : result.transposes)
    if (!transpose.tied)
      ++claims[transpose.name];
  for (const FoldedBroadcast &broadcast : result.broadcasts)
    if (!broadcast.present)
      ++claims[broadcast.name];
  auto claimedTwice = [&](StringRef claimed) {
    return claims.lookup(claimed) > 1;
  };
  for (const ParameterSplit &split : result.splits)
    if (claimedTwice(split.name))
      result.unrecovered.push_back(
          {split.initializer,
           "not split: '" + split.name + "' is claimed by another tensor too"});
  for (const FoldedTranspose &transpose : result.transposes)
    if (!transpose.tied && claimedTwice(transpose.name))
      result.unrecovered.push_back(
          {transpose.initializer,
           "not named '" + transpose.name + "': another tensor claims it too"});
  for (const FoldedBroadcast &broadcast : result.broadcasts)
    if (!broadcast.present && claimedTwice(broadcast.name))
      result.unrecovered.push_back(
          {broadcast.initializer,
           "not named '" + broadcast.name + "': another tensor claims it too"});
  llvm::erase_if(result.splits, [&](const ParameterSplit &split) {
    return claimedTwice(split.name);
  });
  llvm::erase_if(result.transposes, [&](const FoldedTranspose &transpose) {
    return !transpose.tied && claimedTwice(transpose.name);
  });
  llvm::erase_if(result.broadcasts, [&](const FoldedBroadcast &broadcast) {
    return !broadcast.present && claimedTwice(broadcast.name);
  });
}

ParameterProvenance
ParameterProvenance::analyze(const onnx::GraphProto &graph,
                             ArrayRef<std::string> listed,
                             const StringMap<std::string> &identityOutputs) {
  Analysis analysis(graph);
  for (const onnx::TensorProto &initializer : graph.initializer())
    analysis.initializers.insert(initializer.name());
  for (const std::string &name : listed) {
    analysis.listed.insert(name);
    if (!analysis.initializers.contains(name) && !identityOutputs.count(name))
      analysis.missing.insert(name);
    auto [entry, inserted] =
        analysis.placeholderNames.try_emplace(getPlaceholder(name), name);
    if (!inserted && entry->second != name)
      entry->second.clear();
  }
  // The graph's own tensors a list leaves out are named by the FX node
  // too: the head of a tie that named_parameters() lists once (GPT-2's
  // `lm_head.weight`), whose folded transpose is then found tied.
  for (const onnx::TensorProto &initializer : graph.initializer())
    analysis.placeholderNames.try_emplace(getPlaceholder(initializer.name()),
                                          initializer.name());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &input : node.input()) {
      SmallVector<const onnx::NodeProto *> &users = analysis.readers[input];
      if (!input.empty() && (users.empty() || users.back() != &node))
        users.push_back(&node);
    }
  for (const onnx::ValueInfoProto &output : graph.output())
    analysis.graphOutputs.insert(output.name());
  for (const onnx::ValueInfoProto &info : graph.value_info())
    if (std::optional<std::string> folded =
            getMetadata(info, kValueInfoMetadataField, kFoldedFrom))
      if (std::optional<SmallVector<std::string>> names =
              parseStringList(*folded))
        analysis.foldedFrom[info.name()] = std::move(*names);

  for (const onnx::TensorProto &initializer : graph.initializer()) {
    if (analysis.listed.contains(initializer.name())) {
      analysis.findSplits(initializer, initializer.name());
    } else {
      // A tensor folded from one parameter the graph lacks (GroupNorm's
      // weight unsqueezed to [C, 1, 1]), merged by value with others' folds:
      // split along the FX nodes like the parameter itself.
      auto folded = analysis.foldedFrom.find(initializer.name());
      if (folded != analysis.foldedFrom.end()) {
        SmallVector<StringRef> sources;
        for (const std::string &from : folded->second)
          if (analysis.listed.contains(from))
            sources.push_back(from);
        if (sources.size() == 1 && analysis.missing.contains(sources.front()))
          analysis.findSplits(initializer, sources.front());
      }
      analysis.findTranspose(initializer);
      analysis.findBroadcast(initializer);
    }
  }
  analysis.dropNamesClaimedTwice();
  analysis.findDroppedBiases();
  analysis.findTiedNames(listed);
  return std::move(analysis.result);
}

const FoldedTranspose *
ParameterProvenance::findTranspose(StringRef initializer) const {
  for (const FoldedTranspose &transpose : transposes)
    if (transpose.initializer == initializer)
      return &transpose;
  return nullptr;
}

const FoldedBroadcast *
ParameterProvenance::findBroadcast(StringRef initializer) const {
  for (const FoldedBroadcast &broadcast : broadcasts)
    if (broadcast.initializer == initializer)
      return &broadcast;
  return nullptr;
}
