//===- ModelBuilders.cpp - tg graphs of the zoo's models ------------------===//
//
// Builds the forward pass and loss of GPT-2, Llama and an MLP as one
// func.func of tg ops, with the parameters as `param` arguments in the order
// of getParameters(). Every op gets its result type spelled out, so that a
// mistake here is a verifier error rather than a failed type inference.
//
//===----------------------------------------------------------------------===//

#include "tgc/Zoo/ModelZoo.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::zoo;

namespace {

/// An argument of the built function.
struct ArgumentSpec {
  std::string name;
  RankedTensorType type;
  tg::Role role;
};

/// Creates tg ops with explicit result types over f32 activations, and the
/// function that holds them.
class GraphBuilder {
public:
  GraphBuilder(MLIRContext &context, StringRef modelName)
      : builder(NameLoc::get(StringAttr::get(&context, modelName)), &context),
        f32(Float32Type::get(&context)), i64(IntegerType::get(&context, 64)) {
    module = ModuleOp::create(builder.getLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// Creates the function with `arguments` and one loss result, and moves
  /// the insertion point into its body. Values of the arguments are then
  /// found by name with arg().
  void createFunction(StringRef name, ArrayRef<ArgumentSpec> arguments) {
    SmallVector<Type> types;
    for (const ArgumentSpec &argument : arguments)
      types.push_back(argument.type);
    auto lossType = RankedTensorType::get({}, f32);
    auto function = func::FuncOp::create(
        builder, name, builder.getFunctionType(types, {lossType}));
    // All at once: setArgAttr rebuilds (and keeps, uniqued) the whole list
    // of argument attributes at each call, quadratic in the arguments.
    SmallVector<DictionaryAttr> argumentAttrs;
    for (const ArgumentSpec &argument : arguments)
      argumentAttrs.push_back(builder.getDictionaryAttr(
          {tg::getRoleAttr(builder, argument.role),
           builder.getNamedAttr(tg::TGDialect::kNameAttrName,
                                builder.getStringAttr(argument.name))}));
    function.setAllArgAttrs(argumentAttrs);
    tg::setResultRole(function, 0, tg::Role::Loss);
    function.setResultAttr(0, tg::TGDialect::kNameAttrName,
                           builder.getStringAttr("loss"));
    Block *body = function.addEntryBlock();
    for (auto [argument, value] :
         llvm::zip_equal(arguments, body->getArguments()))
      argumentsByName[argument.name] = value;
    builder.setInsertionPointToEnd(body);
  }

  /// Ends the function, returning `loss`, and verifies the module.
  FailureOr<OwningOpRef<ModuleOp>> finish(Value loss) {
    func::ReturnOp::create(builder, loss);
    if (failed(verify(*module)))
      return failure();
    return std::move(module);
  }

  Value arg(StringRef name) const { return argumentsByName.lookup(name); }

  /// Ops built from now on are located at `name` (e.g. `h.3.attn`), which
  /// diagnostics of later passes show.
  void setScope(const Twine &name) {
    builder.setLoc(NameLoc::get(builder.getStringAttr(name)));
  }

  RankedTensorType tensorType(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, f32);
  }
  RankedTensorType indexType(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, i64);
  }

  static ArrayRef<int64_t> shapeOf(Value value) {
    return cast<RankedTensorType>(value.getType()).getShape();
  }

  Value add(Value lhs, Value rhs) {
    return tg::AddOp::create(builder, lhs, rhs);
  }
  Value mul(Value lhs, Value rhs) {
    return tg::MulOp::create(builder, lhs, rhs);
  }
  Value neg(Value value) { return tg::NegOp::create(builder, value); }

  Value constant(ArrayRef<float> values) {
    auto type = tensorType({int64_t(values.size())});
    return tg::ConstantOp::create(builder,
                                  DenseElementsAttr::get(type, values));
  }

  Value broadcast(Value value, ArrayRef<int64_t> dims,
                  ArrayRef<int64_t> shape) {
    return tg::BroadcastInDimOp::create(builder, retype(value, shape), value,
                                        dims);
  }

  Value reshape(Value value, ArrayRef<int64_t> shape) {
    return tg::ReshapeOp::create(builder, retype(value, shape), value);
  }

  Value transpose(Value value, ArrayRef<int64_t> perm) {
    SmallVector<int64_t> shape;
    for (int64_t dim : perm)
      shape.push_back(shapeOf(value)[dim]);
    return tg::TransposeOp::create(builder, retype(value, shape), value, perm);
  }

  /// Elements [start, limit) of the last dimension.
  Value sliceLast(Value value, int64_t start, int64_t limit) {
    SmallVector<int64_t> shape(shapeOf(value));
    SmallVector<int64_t> starts(shape.size(), 0), limits(shape);
    SmallVector<int64_t> strides(shape.size(), 1);
    starts.back() = start;
    limits.back() = limit;
    shape.back() = limit - start;
    return tg::SliceOp::create(builder, retype(value, shape), value, starts,
                               limits, strides);
  }

  /// Rows [0, rows) of the first dimension.
  Value sliceRows(Value value, int64_t rows) {
    SmallVector<int64_t> shape(shapeOf(value));
    SmallVector<int64_t> starts(shape.size(), 0), limits(shape);
    SmallVector<int64_t> strides(shape.size(), 1);
    limits.front() = rows;
    shape.front() = rows;
    return tg::SliceOp::create(builder, retype(value, shape), value, starts,
                               limits, strides);
  }

  Value concat(ValueRange inputs, int64_t dim) {
    SmallVector<int64_t> shape(shapeOf(inputs.front()));
    shape[dim] = 0;
    for (Value input : inputs)
      shape[dim] += shapeOf(input)[dim];
    return tg::ConcatOp::create(builder, retype(inputs.front(), shape), inputs,
                                uint64_t(dim));
  }

  /// `x @ w` for an [in, out] matrix `w` ([out, in] with `transposeB`),
  /// shared by every row of `x`.
  Value matmul(Value x, Value w, bool transposeB = false) {
    SmallVector<int64_t> shape(shapeOf(x));
    shape.back() = shapeOf(w)[transposeB ? 0 : 1];
    return tg::MatmulOp::create(builder, tensorType(shape), x, w,
                                /*transpose_a=*/false, transposeB);
  }

  /// `x @ w + bias`, the bias broadcast over the leading dimensions.
  Value linear(Value x, Value w, Value bias) {
    Value product = matmul(x, w);
    ArrayRef<int64_t> shape = shapeOf(product);
    return add(product, broadcast(bias, {int64_t(shape.size()) - 1}, shape));
  }

  Value layerNorm(Value x, Value scale, Value bias, double epsilon) {
    ArrayRef<int64_t> shape = shapeOf(x);
    auto statsType = tensorType(shape.drop_back());
    return tg::LayerNormOp::create(builder, x.getType(), statsType, statsType,
                                   x, scale, bias,
                                   builder.getF64FloatAttr(epsilon))
        .getResult();
  }

  Value rmsNorm(Value x, Value scale, double epsilon) {
    auto statsType = tensorType(shapeOf(x).drop_back());
    return tg::RmsNormOp::create(builder, x.getType(), statsType, x, scale,
                                 builder.getF64FloatAttr(epsilon))
        .getResult();
  }

  /// Causal attention of [B, H, S, D] queries on [B, K, S, D] keys/values,
  /// with a dropout of the probabilities when `dropoutRate` > 0 (the next
  /// stream number, as eagerCausalAttention's tg.dropout takes it: the same
  /// mask).
  Value causalAttention(Value q, Value k, Value v, Value seed = Value(),
                        double dropoutRate = 0.0) {
    ArrayRef<int64_t> shape = shapeOf(q);
    double scale = 1.0 / std::sqrt(double(shape.back()));
    bool drops = dropoutRate > 0.0;
    return tg::AttentionOp::create(
               builder, q.getType(), tensorType(shape.drop_back()), q, k, v,
               /*bias=*/Value(), drops ? seed : Value(),
               /*offset=*/Value(), /*causal=*/true,
               builder.getF64FloatAttr(scale),
               /*softcap=*/FloatAttr(),
               drops ? builder.getF64FloatAttr(dropoutRate) : FloatAttr(),
               drops ? builder.getI64IntegerAttr(nextStream++) : IntegerAttr(),
               /*global_shape=*/DenseI64ArrayAttr())
        .getOutput();
  }

  /// The same attention as Hugging Face's eager path computes it, every
  /// step its own op: scores = q k^T * scale, the causal mask (a select of
  /// -1e4 above the diagonal, GPT-2's masked_bias), softmax, dropout of the
  /// probabilities when `dropoutRate` > 0, probabilities @ v. Keys and
  /// values of grouped-query attention are repeated to the query heads
  /// (repeat_kv).
  Value eagerCausalAttention(Value q, Value k, Value v, Value seed,
                             double dropoutRate) {
    SmallVector<int64_t> shape(shapeOf(q));
    int64_t b = shape[0], heads = shape[1], s = shape[2], d = shape[3];
    int64_t kvHeads = shapeOf(k)[1];
    auto repeat = [&](Value x) {
      if (kvHeads == heads)
        return x;
      int64_t group = heads / kvHeads;
      Value expanded = broadcast(reshape(x, {b, kvHeads, 1, s, d}),
                                 {0, 1, 2, 3, 4}, {b, kvHeads, group, s, d});
      return reshape(expanded, {b, heads, s, d});
    };
    k = repeat(k);
    v = repeat(v);
    Value scores = tg::MatmulOp::create(builder, retype(q, {b, heads, s, s}), q,
                                        k, /*transpose_a=*/false,
                                        /*transpose_b=*/true);
    auto scalar = [&](double value) {
      return tg::ConstantOp::create(
          builder,
          DenseElementsAttr::get(tensorType({}), static_cast<float>(value)));
    };
    SmallVector<int64_t> scoreShape = {b, heads, s, s};
    scores = mul(scores,
                 broadcast(scalar(1.0 / std::sqrt(double(d))), {}, scoreShape));
    SmallVector<bool> causal(s * s);
    for (int64_t row = 0; row < s; ++row)
      for (int64_t column = 0; column <= row; ++column)
        causal[row * s + column] = true;
    Value mask = tg::ConstantOp::create(
        builder,
        DenseElementsAttr::get(
            RankedTensorType::get({s, s}, builder.getI1Type()), causal));
    Value masked = tg::SelectOp::create(
        builder,
        tg::BroadcastInDimOp::create(
            builder, RankedTensorType::get(scoreShape, builder.getI1Type()),
            mask, ArrayRef<int64_t>{2, 3}),
        scores, broadcast(scalar(-1.0e4), {}, scoreShape));
    Value probs = tg::SoftmaxOp::create(builder, masked, 3);
    if (dropoutRate > 0.0)
      probs = dropout(probs, seed, dropoutRate);
    return tg::MatmulOp::create(builder, retype(q, shape), probs, v,
                                /*transpose_a=*/false, /*transpose_b=*/false);
  }

  /// Dropout with the next stream number, so that no two dropouts of the
  /// graph draw the same mask.
  Value dropout(Value x, Value seed, double rate) {
    return tg::DropoutOp::create(builder, x.getType(), x, seed,
                                 /*offset=*/Value(),
                                 builder.getF64FloatAttr(rate),
                                 builder.getI64IntegerAttr(nextStream++),
                                 /*global_shape=*/nullptr);
  }

  Value embedding(Value table, Value ids) {
    SmallVector<int64_t> shape(shapeOf(ids));
    shape.push_back(shapeOf(table)[1]);
    return tg::EmbeddingOp::create(builder, tensorType(shape), table, ids);
  }

  Value meanCrossEntropy(Value logits, Value labels) {
    return tg::CrossEntropyOp::create(
               builder, tensorType({}), tensorType(shapeOf(labels)),
               tg::LossReduction::Mean, logits, labels, IntegerAttr())
        .getLoss();
  }

  ImplicitLocOpBuilder builder;
  Type f32, i64;

private:
  RankedTensorType retype(Value like, ArrayRef<int64_t> shape) {
    return RankedTensorType::get(
        shape, cast<RankedTensorType>(like.getType()).getElementType());
  }

  OwningOpRef<ModuleOp> module;
  llvm::StringMap<Value> argumentsByName;
  int64_t nextStream = 0;
};

} // namespace

/// `param` arguments for `params`, after the `leading` ones.
static SmallVector<ArgumentSpec>
withParameters(GraphBuilder &graph, SmallVector<ArgumentSpec> leading,
               ArrayRef<ParameterSpec> params) {
  for (const ParameterSpec &param : params)
    leading.push_back(
        {param.name, graph.tensorType(param.shape), tg::Role::Param});
  return leading;
}

//===----------------------------------------------------------------------===//
// GPT-2
//===----------------------------------------------------------------------===//

FailureOr<OwningOpRef<ModuleOp>> tgc::zoo::buildModel(MLIRContext &context,
                                                      const GPT2Config &config,
                                                      StringRef functionName) {
  int64_t b = config.batch, s = config.seq, h = config.hidden;
  int64_t heads = config.heads, d = h / heads;
  bool hasDropout = config.dropout > 0.0;
  GraphBuilder graph(context, "gpt2");

  SmallVector<ArgumentSpec> leading = {
      {"input_ids", graph.indexType({b, s}), tg::Role::Input},
      {"labels", graph.indexType({b, s}), tg::Role::Label}};
  if (hasDropout)
    leading.push_back({"dropout_seed", graph.indexType({}), tg::Role::Hyper});
  graph.createFunction(functionName, withParameters(graph, std::move(leading),
                                                    getParameters(config)));
  Value seed = hasDropout ? graph.arg("dropout_seed") : Value();
  auto maybeDropout = [&](Value x) {
    return hasDropout ? graph.dropout(x, seed, config.dropout) : x;
  };

  // Token embeddings plus the first `seq` rows of the position table.
  graph.setScope("embeddings");
  Value tokens =
      graph.embedding(graph.arg("wte.weight"), graph.arg("input_ids"));
  Value positions = graph.sliceRows(graph.arg("wpe.weight"), s);
  Value x = maybeDropout(
      graph.add(tokens, graph.broadcast(positions, {1, 2}, {b, s, h})));

  for (int64_t n = 0; n < config.layers; ++n) {
    std::string prefix = "h." + std::to_string(n) + ".";
    auto w = [&](StringRef suffix) { return graph.arg(prefix + suffix.str()); };
    auto linear = [&](Value in, StringRef weight, StringRef bias) {
      return graph.linear(in, w(weight), w(bias));
    };

    // Pre-LayerNorm attention block: c_attn gives q, k, v side by side.
    graph.setScope(prefix + "attn");
    Value normed = graph.layerNorm(x, w("ln_1.weight"), w("ln_1.bias"),
                                   config.layerNormEpsilon);
    Value qkv = linear(normed, "attn.c_attn.weight", "attn.c_attn.bias");
    SmallVector<Value, 3> qkvHeads;
    for (int64_t part = 0; part < 3; ++part) {
      Value flat = graph.sliceLast(qkv, part * h, (part + 1) * h);
      Value split = graph.reshape(flat, {b, s, heads, d});
      qkvHeads.push_back(graph.transpose(split, {0, 2, 1, 3}));
    }
    Value attended =
        config.eagerAttention
            ? graph.eagerCausalAttention(qkvHeads[0], qkvHeads[1], qkvHeads[2],
                                         seed, config.dropout)
            : graph.causalAttention(qkvHeads[0], qkvHeads[1], qkvHeads[2], seed,
                                    config.dropout);
    Value merged =
        graph.reshape(graph.transpose(attended, {0, 2, 1, 3}), {b, s, h});
    Value projected = linear(merged, "attn.c_proj.weight", "attn.c_proj.bias");
    x = graph.add(x, maybeDropout(projected));

    // Pre-LayerNorm MLP block with GELU (tanh approximation).
    graph.setScope(prefix + "mlp");
    normed = graph.layerNorm(x, w("ln_2.weight"), w("ln_2.bias"),
                             config.layerNormEpsilon);
    Value fc = linear(normed, "mlp.c_fc.weight", "mlp.c_fc.bias");
    Value activated =
        tg::GeluOp::create(graph.builder, fc, tg::GeluApproximation::Tanh);
    Value out = linear(activated, "mlp.c_proj.weight", "mlp.c_proj.bias");
    x = graph.add(x, maybeDropout(out));
  }

  // Final LayerNorm and the LM head tied to wte: logits = x @ wte^T.
  graph.setScope("lm_head");
  x = graph.layerNorm(x, graph.arg("ln_f.weight"), graph.arg("ln_f.bias"),
                      config.layerNormEpsilon);
  Value logits = graph.matmul(x, graph.arg("wte.weight"), /*transposeB=*/true);
  return graph.finish(graph.meanCrossEntropy(logits, graph.arg("labels")));
}

//===----------------------------------------------------------------------===//
// Llama
//===----------------------------------------------------------------------===//

namespace {

/// cos and sin of the rotary angles of each position and channel, [S, D]
/// with the D/2 frequencies repeated (Hugging Face's
/// `emb = cat(freqs, freqs)`), or broadcast from there to [B, N, S, D] heads.
struct RotaryTables {
  Value cos, sin;
};

} // namespace

static RotaryTables buildRotaryTables(GraphBuilder &graph,
                                      const LlamaConfig &config) {
  int64_t s = config.seq, d = config.hidden / config.heads, half = d / 2;
  // inv_freq[i] = theta ^ (-2i / D), computed in double and rounded once.
  SmallVector<float> inverseFrequencies, positions;
  for (int64_t i = 0; i < half; ++i)
    inverseFrequencies.push_back(
        float(1.0 / std::pow(config.ropeTheta, double(2 * i) / double(d))));
  for (int64_t p = 0; p < s; ++p)
    positions.push_back(float(p));
  // One op per statement: the order of the ops must not depend on the order
  // in which the compiler evaluates function arguments.
  Value positionColumn =
      graph.broadcast(graph.constant(positions), {0}, {s, half});
  Value frequencyRow =
      graph.broadcast(graph.constant(inverseFrequencies), {1}, {s, half});
  Value angles = graph.mul(positionColumn, frequencyRow);
  Value repeated = graph.concat({angles, angles}, 1);
  return {tg::CosOp::create(graph.builder, repeated),
          tg::SinOp::create(graph.builder, repeated)};
}

static RotaryTables broadcastToHeads(GraphBuilder &graph,
                                     const RotaryTables &tables, int64_t batch,
                                     int64_t heads) {
  ArrayRef<int64_t> shape = GraphBuilder::shapeOf(tables.cos);
  SmallVector<int64_t> headShape = {batch, heads, shape[0], shape[1]};
  return {graph.broadcast(tables.cos, {2, 3}, headShape),
          graph.broadcast(tables.sin, {2, 3}, headShape)};
}

/// x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x2, x1) for the
/// halves x1, x2 of the last dimension (Hugging Face's apply_rotary_pos_emb).
static Value applyRotary(GraphBuilder &graph, Value x,
                         const RotaryTables &tables) {
  int64_t d = GraphBuilder::shapeOf(x).back();
  Value first = graph.sliceLast(x, 0, d / 2);
  Value second = graph.sliceLast(x, d / 2, d);
  Value rotated = graph.concat({graph.neg(second), first}, 3);
  Value cosTerm = graph.mul(x, tables.cos);
  Value sinTerm = graph.mul(rotated, tables.sin);
  return graph.add(cosTerm, sinTerm);
}

FailureOr<OwningOpRef<ModuleOp>> tgc::zoo::buildModel(MLIRContext &context,
                                                      const LlamaConfig &config,
                                                      StringRef functionName) {
  int64_t b = config.batch, s = config.seq, h = config.hidden;
  int64_t heads = config.heads, kvHeads = config.kvHeads, d = h / heads;
  GraphBuilder graph(context, "llama");
  graph.createFunction(
      functionName,
      withParameters(graph,
                     {{"input_ids", graph.indexType({b, s}), tg::Role::Input},
                      {"labels", graph.indexType({b, s}), tg::Role::Label}},
                     getParameters(config)));

  graph.setScope("model.embed_tokens");
  Value x = graph.embedding(graph.arg("model.embed_tokens.weight"),
                            graph.arg("input_ids"));

  // The rotary tables are shared by every layer.
  graph.setScope("model.rotary_emb");
  RotaryTables tables = buildRotaryTables(graph, config);
  RotaryTables queryTables = broadcastToHeads(graph, tables, b, heads);
  RotaryTables keyTables = kvHeads == heads
                               ? queryTables
                               : broadcastToHeads(graph, tables, b, kvHeads);

  // `x @ W` of the weight `name`.
  auto project = [&](Value in, const std::string &name) {
    return graph.matmul(in, graph.arg(name));
  };

  // [B, S, N * D] -> [B, N, S, D].
  auto splitHeads = [&](Value value, int64_t count) {
    return graph.transpose(graph.reshape(value, {b, s, count, d}),
                           {0, 2, 1, 3});
  };

  for (int64_t n = 0; n < config.layers; ++n) {
    std::string prefix = "model.layers." + std::to_string(n) + ".";
    auto w = [&](StringRef suffix) { return graph.arg(prefix + suffix.str()); };
    auto linear = [&](Value in, StringRef suffix) {
      return project(in, prefix + suffix.str());
    };

    // Attention: RMSNorm, q/k/v, rotary embeddings of q and k, grouped-query
    // causal attention (tg.attention maps query head i to kv head
    // i / (heads / kv_heads), as repeat_kv does), o_proj.
    graph.setScope(prefix + "self_attn");
    Value normed =
        graph.rmsNorm(x, w("input_layernorm.weight"), config.rmsNormEpsilon);
    Value q = splitHeads(linear(normed, "self_attn.q_proj.weight"), heads);
    Value k = splitHeads(linear(normed, "self_attn.k_proj.weight"), kvHeads);
    Value v = splitHeads(linear(normed, "self_attn.v_proj.weight"), kvHeads);
    q = applyRotary(graph, q, queryTables);
    k = applyRotary(graph, k, keyTables);
    Value attended =
        config.eagerAttention
            ? graph.eagerCausalAttention(q, k, v, Value(), /*dropoutRate=*/0.0)
            : graph.causalAttention(q, k, v);
    Value merged =
        graph.reshape(graph.transpose(attended, {0, 2, 1, 3}), {b, s, h});
    x = graph.add(x, linear(merged, "self_attn.o_proj.weight"));

    // SwiGLU MLP: down(silu(gate(x)) * up(x)).
    graph.setScope(prefix + "mlp");
    normed = graph.rmsNorm(x, w("post_attention_layernorm.weight"),
                           config.rmsNormEpsilon);
    Value gate = tg::SiluOp::create(graph.builder,
                                    linear(normed, "mlp.gate_proj.weight"));
    Value up = linear(normed, "mlp.up_proj.weight");
    x = graph.add(x, linear(graph.mul(gate, up), "mlp.down_proj.weight"));
  }

  // Final RMSNorm and the untied LM head.
  graph.setScope("lm_head");
  x = graph.rmsNorm(x, graph.arg("model.norm.weight"), config.rmsNormEpsilon);
  Value logits = project(x, "lm_head.weight");
  return graph.finish(graph.meanCrossEntropy(logits, graph.arg("labels")));
}

//===----------------------------------------------------------------------===//
// MLP
//===----------------------------------------------------------------------===//

FailureOr<OwningOpRef<ModuleOp>> tgc::zoo::buildModel(MLIRContext &context,
                                                      const MLPConfig &config,
                                                      StringRef functionName) {
  bool hasDropout = config.dropout > 0.0;
  GraphBuilder graph(context, "mlp");
  SmallVector<ArgumentSpec> leading = {
      {"inputs", graph.tensorType({config.batch, config.inputSize}),
       tg::Role::Input},
      {"labels", graph.indexType({config.batch}), tg::Role::Label}};
  if (hasDropout)
    leading.push_back({"dropout_seed", graph.indexType({}), tg::Role::Hyper});
  graph.createFunction(functionName, withParameters(graph, std::move(leading),
                                                    getParameters(config)));

  Value x = graph.arg("inputs");
  for (int64_t n = 1; n <= config.layers; ++n) {
    std::string prefix = "fc" + std::to_string(n);
    graph.setScope(prefix);
    x = graph.linear(x, graph.arg(prefix + ".weight"),
                     graph.arg(prefix + ".bias"));
    if (n == config.layers)
      break;
    if (config.activation == MLPActivation::ReLU)
      x = tg::ReluOp::create(graph.builder, x);
    else
      x = tg::GeluOp::create(graph.builder, x, tg::GeluApproximation::Erf);
    if (hasDropout)
      x = graph.dropout(x, graph.arg("dropout_seed"), config.dropout);
  }
  graph.setScope("loss");
  return graph.finish(graph.meanCrossEntropy(x, graph.arg("labels")));
}

//===----------------------------------------------------------------------===//
// LoRA
//===----------------------------------------------------------------------===//

LogicalResult tgc::zoo::addLoraAdapters(ModuleOp module, const LoraConfig &lora,
                                        ArrayRef<std::string> targets) {
  TGLoraOptions options;
  options.rank = lora.rank;
  options.alpha = lora.alpha;
  options.targets.assign(targets.begin(), targets.end());
  PassManager pm(module.getContext());
  pm.addPass(createTGLora(options));
  return pm.run(module);
}

SmallVector<ParameterSpec> tgc::zoo::getBuiltParameters(ModuleOp module) {
  SmallVector<ParameterSpec> params;
  for (auto function : module.getOps<func::FuncOp>())
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes())) {
      if (tg::getArgumentRole(function, index) != tg::Role::Param)
        continue;
      auto name = function.getArgAttrOfType<StringAttr>(
          index, tg::TGDialect::kNameAttrName);
      params.push_back(
          {name ? name.str() : "arg" + std::to_string(index),
           SmallVector<int64_t, 2>(cast<RankedTensorType>(type).getShape())});
    }
  return params;
}
