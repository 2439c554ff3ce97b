//===- TransformerConverters.cpp - Attention, RMS norm, rotary embedding --===//
//
// The transformer ops of opset 23 on: RMSNormalization (tg.rms_norm),
// RotaryEmbedding (slices, products and concatenations) and Attention: a
// tg.attention, the fused flash-attention op tg-fuse and the runtime lower
// to one kernel, when the node asks for what it computes (no mask, no soft
// cap, a causal mask aligned as tg aligns it); otherwise the operator's
// pattern from its specification, op by op (the scaled product, the soft
// cap, the additive bias of the mask, the causal and sliding-window bounds
// and the padding of nonpad_kv_seqlen, the softmax, the guard that makes a
// query row with no visible key a row of zeros, the product with V).
//
//===----------------------------------------------------------------------===//

#include "ConverterUtils.h"

#include "tgc/Dialect/TG/TGOps.h"

#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

using Importer = GraphImporter;

namespace {

/// Inputs 0 to 2 (query, key, value), float tensors.
FailureOr<std::tuple<Value, Value, Value>> requireQueryKeyValue(Importer &g) {
  Value values[3];
  for (unsigned i = 0; i < 3; ++i) {
    ASSIGN_OR_FAIL(value, g.requireInput(i));
    if (failed(requireFloat(g, value)))
      return failure();
    values[i] = value;
  }
  return std::make_tuple(values[0], values[1], values[2]);
}

/// `a && b` of two i1 tensors of one shape.
Value both(Importer &g, Value a, Value b) { return select(g, a, b, a); }

/// The last dimension of `value` from `start` to `limit` (step `step`).
Value sliceLast(Importer &g, Value value, int64_t start, int64_t limit,
                int64_t step = 1) {
  RankedTensorType type = Importer::getType(value);
  SmallVector<int64_t> starts(type.getRank(), 0), strides(type.getRank(), 1);
  SmallVector<int64_t> limits(type.getShape());
  starts.back() = start;
  limits.back() = limit;
  strides.back() = step;
  return g.slice(value, starts, limits, strides);
}

/// Concatenation along the last dimension.
Value concatLast(Importer &g, ArrayRef<Value> values) {
  SmallVector<int64_t> shape(Importer::getType(values.front()).getShape());
  shape.back() = 0;
  for (Value v : values)
    shape.back() += Importer::getType(v).getShape().back();
  RankedTensorType type =
      Importer::getType(values.front()).clone(ArrayRef<int64_t>(shape));
  return g.create<tg::ConcatOp>(type, values, uint64_t(shape.size() - 1));
}

} // namespace

//===----------------------------------------------------------------------===//
// RMSNormalization
//===----------------------------------------------------------------------===//

// RMSNormalization-23: X / sqrt(mean(X^2) + epsilon) over the dimensions
// from `axis` on, times Scale. A tg.rms_norm (statistics in f32, as
// stash_type 1 asks) over the flattened normalized dimensions, with Scale as
// its vector where Scale broadcasts to those dimensions; a Scale with
// dimensions before `axis` multiplies afterwards. An f64 X, or stash_type
// 11, is composed in f64.
LogicalResult onnx_import::convertRMSNormalization(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(scale, g.requireInput(1));
  if (failed(requireFloat(g, x)) || failed(requireFloat(g, scale)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  Type elementType = type.getElementType();
  if (Importer::getType(scale).getElementType() != elementType)
    return g.fail("scale must have X's element type");
  int64_t rank = type.getRank();
  if (rank == 0)
    return g.fail("expects a tensor of rank >= 1");
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(g.getInt("axis", -1), rank));
  ASSIGN_OR_FAIL(stash, getStashType(g));
  double epsilon = g.getFloat("epsilon", 1e-5f);
  ArrayRef<int64_t> shape = type.getShape();
  ArrayRef<int64_t> normalized = shape.drop_front(axis);
  ArrayRef<int64_t> scaleShape = Importer::getType(scale).getShape();
  if (!broadcastsTo(scaleShape, shape))
    return g.fail("scale must broadcast to X");
  bool scaleIsVector = broadcastsTo(scaleShape, normalized);
  int64_t size = product(normalized);

  Value y;
  if (elementType.isF64() || stash == onnx::TensorProto::DOUBLE) {
    Type f64 = g.builder.getF64Type();
    Composer e{g, type.clone(f64)};
    Value wide = g.convert(x, f64);
    SmallVector<int64_t> dims;
    for (int64_t d = axis; d < rank; ++d)
      dims.push_back(d);
    Value meanSquare = g.broadcastTo(
        g.reduce(tg::ReduceKind::Mean, e.mul(wide, wide), dims, true), shape);
    Value rms = e.sqrt(e.add(meanSquare, e.c(epsilon)));
    Value normalizedX = g.convert(e.div(wide, rms), elementType);
    y = buildBinary<tg::MulOp>(g, normalizedX, g.broadcastTo(scale, shape));
  } else {
    SmallVector<int64_t> rows(shape.take_front(axis));
    rows.push_back(size);
    Value vector =
        scaleIsVector
            ? g.reshape(g.broadcastTo(scale, normalized), {size})
            : g.splat(RankedTensorType::get({size}, elementType), 1.0);
    RankedTensorType rstdType =
        RankedTensorType::get(shape.take_front(axis), g.builder.getF32Type());
    SmallVector<Value> results = g.createResults<tg::RmsNormOp>(
        TypeRange{RankedTensorType::get(rows, elementType), rstdType},
        g.reshape(x, rows), vector, g.builder.getF64FloatAttr(epsilon));
    y = g.reshape(results[0], shape);
    if (!scaleIsVector)
      y = buildBinary<tg::MulOp>(g, y, g.broadcastTo(scale, shape));
  }
  g.setOutput(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding
//===----------------------------------------------------------------------===//

// RotaryEmbedding-23 on X [batch, heads, sequence, head] (or [batch,
// sequence, heads * head] with num_heads): the first rotary_embedding_dim
// features of each head (all by default), as pairs (x1, x2) of its two
// halves or, interleaved, of its even and odd features, become (cos x1 -
// sin x2, sin x1 + cos x2); cos and sin are the caches' rows at
// position_ids ([batch, sequence]), or the caches themselves ([batch,
// sequence, dim / 2]) without position_ids. Computed in X's type.
LogicalResult onnx_import::convertRotaryEmbedding(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(cosCache, g.requireInput(1));
  ASSIGN_OR_FAIL(sinCache, g.requireInput(2));
  if (failed(requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  Type elementType = type.getElementType();
  for (Value cache : {cosCache, sinCache})
    if (Importer::getType(cache).getElementType() != elementType)
      return g.fail("cos_cache and sin_cache must have X's element type");
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank();
  if (rank != 3 && rank != 4)
    return g.fail("X must have rank 3 or 4");
  int64_t numHeads = g.getInt("num_heads", 0);
  // [batch, sequence, heads, head].
  Value input;
  int64_t batch = shape[0], heads, sequence, head;
  if (rank == 4) {
    heads = shape[1];
    sequence = shape[2];
    head = shape[3];
    input = g.transpose(x, {0, 2, 1, 3});
  } else {
    if (numHeads <= 0 || shape[2] % numHeads != 0)
      return g.fail("a 3D X needs num_heads, a divisor of its hidden size " +
                    llvm::Twine(shape[2]));
    heads = numHeads;
    sequence = shape[1];
    head = shape[2] / numHeads;
    input = g.reshape(x, {batch, sequence, heads, head});
  }
  int64_t dim = g.getInt("rotary_embedding_dim", 0);
  if (dim == 0)
    dim = head;
  if (dim < 0 || dim > head || dim % 2 != 0)
    return g.fail("rotary_embedding_dim must be even and at most the head "
                  "size " +
                  llvm::Twine(head));
  int64_t half = dim / 2;
  SmallVector<int64_t> cacheShape = {batch, sequence, half};
  auto rows = [&](Value cache, StringRef what) -> FailureOr<Value> {
    RankedTensorType cacheType = Importer::getType(cache);
    if (Value ids = g.input(3)) {
      RankedTensorType idsType = Importer::getType(ids);
      if (!isa<IntegerType>(idsType.getElementType()) ||
          idsType.getShape() != ArrayRef<int64_t>{batch, sequence})
        return (void)g.fail("position_ids must be integers of shape [" +
                            llvm::Twine(batch) + ", " + llvm::Twine(sequence) +
                            "]"),
               failure();
      if (cacheType.getRank() != 2 || cacheType.getDimSize(1) != half)
        return (void)g.fail(what + " must be [positions, " + llvm::Twine(half) +
                            "] with position_ids"),
               failure();
      return g.takeRows(cache, ids);
    }
    if (cacheType.getShape() != ArrayRef<int64_t>(cacheShape))
      return (void)g.fail(what + " must be [" + llvm::Twine(batch) + ", " +
                          llvm::Twine(sequence) + ", " + llvm::Twine(half) +
                          "] without position_ids"),
             failure();
    return cache;
  };
  ASSIGN_OR_FAIL(cosRows, rows(cosCache, "cos_cache"));
  ASSIGN_OR_FAIL(sinRows, rows(sinCache, "sin_cache"));
  SmallVector<int64_t> halfShape = {batch, sequence, heads, half};
  Value cos =
      g.broadcastTo(g.reshape(cosRows, {batch, sequence, 1, half}), halfShape);
  Value sin =
      g.broadcastTo(g.reshape(sinRows, {batch, sequence, 1, half}), halfShape);
  Value rotated = sliceLast(g, input, 0, dim);
  bool interleaved = g.getBool("interleaved", false);
  Value x1 = interleaved ? sliceLast(g, rotated, 0, dim, 2)
                         : sliceLast(g, rotated, 0, half);
  Value x2 = interleaved ? sliceLast(g, rotated, 1, dim, 2)
                         : sliceLast(g, rotated, half, dim);
  Composer e{g, Importer::getType(x1)};
  Value real = e.sub(e.mul(cos, x1), e.mul(sin, x2));
  Value imag = e.add(e.mul(sin, x1), e.mul(cos, x2));
  SmallVector<Value> parts;
  if (interleaved) {
    SmallVector<int64_t> pairShape(halfShape);
    pairShape.push_back(1);
    Value pairs =
        concatLast(g, {g.reshape(real, pairShape), g.reshape(imag, pairShape)});
    parts.push_back(g.reshape(pairs, {batch, sequence, heads, dim}));
  } else {
    parts = {real, imag};
  }
  if (dim < head)
    parts.push_back(sliceLast(g, input, dim, head));
  Value output = parts.size() == 1 ? parts.front() : concatLast(g, parts);
  g.setOutput(0, rank == 4 ? g.transpose(output, {0, 2, 1, 3})
                           : g.reshape(output, shape));
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

namespace {

/// Q, K or V as [batch, heads, sequence, head]: a 4D input as it is, a 3D
/// one ([batch, sequence, heads * head]) split into `heads`.
FailureOr<Value> toHeads(Importer &g, Value value, int64_t heads,
                         StringRef what) {
  RankedTensorType type = Importer::getType(value);
  ArrayRef<int64_t> shape = type.getShape();
  if (type.getRank() == 4)
    return value;
  if (heads <= 0 || shape[2] % heads != 0)
    return (void)g.fail("the hidden size " + llvm::Twine(shape[2]) + " of " +
                        what + " is not a multiple of its " +
                        llvm::Twine(heads) + " heads"),
           failure();
  return g.transpose(
      g.reshape(value, {shape[0], shape[1], heads, shape[2] / heads}),
      {0, 2, 1, 3});
}

/// `lhs` [B, Hq, S, X] times `rhs` [B, Hkv, X, Y] for Hq a multiple of Hkv:
/// query head h with key/value head h / (Hq / Hkv), without repeating the
/// key/value heads ([B, Hkv, G, S, X] times [B, Hkv, 1, X, Y]).
FailureOr<Value> groupedMatMul(Importer &g, Value lhs, Value rhs) {
  ArrayRef<int64_t> l = Importer::getType(lhs).getShape();
  ArrayRef<int64_t> r = Importer::getType(rhs).getShape();
  int64_t groups = l[1] / r[1];
  ASSIGN_OR_FAIL(
      product, buildMatMul(g, g.reshape(lhs, {l[0], r[1], groups, l[2], l[3]}),
                           g.reshape(rhs, {r[0], r[1], 1, r[2], r[3]})));
  return g.reshape(product, {l[0], l[1], l[2], r[3]});
}

/// Checks Q [B, Hq, L, E], K [B, Hkv, S, E] and V [B, Hkv, S, Ev] (as
/// `qs`, `ks`, `vs`) for one attention: Hkv divides Hq.
LogicalResult checkAttentionShapes(Importer &g, ArrayRef<int64_t> qs,
                                   ArrayRef<int64_t> ks, ArrayRef<int64_t> vs) {
  if (ks[0] != qs[0] || vs[0] != qs[0])
    return g.fail("Q, K and V have different batch sizes");
  if (ks[3] != qs[3])
    return g.fail("K's head size " + llvm::Twine(ks[3]) + " differs from Q's " +
                  llvm::Twine(qs[3]));
  if (vs[1] != ks[1] || vs[2] != ks[2])
    return g.fail("V's heads and sequence differ from K's");
  if (ks[1] == 0 || qs[1] % ks[1] != 0)
    return g.fail("the " + llvm::Twine(qs[1]) +
                  " query heads are not a multiple of the " +
                  llvm::Twine(ks[1]) + " key/value heads");
  return success();
}

/// The node's `softmax_precision` as a float type, `fallback` when it is
/// absent or 0.
FailureOr<Type> getSoftmaxPrecision(Importer &g, Type fallback) {
  std::optional<int64_t> precision = g.getOptionalInt("softmax_precision");
  if (!precision || *precision == 0)
    return fallback;
  Type type = getElementType(*g.builder.getContext(), int32_t(*precision));
  if (!type || !isa<FloatType>(type))
    return (void)g.fail("softmax_precision must be FLOAT, FLOAT16, DOUBLE or "
                        "BFLOAT16"),
           failure();
  return type;
}

} // namespace

// Attention-23/24/25 (see the file comment). Q, K and V are 4D [batch,
// heads, sequence, head] or 3D with q_num_heads and kv_num_heads; past_key
// and past_value are prepended to K and V (present_key, present_value);
// the query heads are a multiple of the key/value heads (grouped-query
// attention). The causal bound and the sliding window are aligned at
// `offset`: the past's length, nonpad_kv_seqlen - the query length per
// batch (an external cache), else 0.
LogicalResult onnx_import::convertAttention(Importer &g) {
  ASSIGN_OR_FAIL(qkv, requireQueryKeyValue(g));
  auto [q, k, v] = qkv;
  RankedTensorType qType = Importer::getType(q);
  Type elementType = qType.getElementType();
  int64_t rank = qType.getRank();
  if ((rank != 3 && rank != 4) || Importer::getType(k).getRank() != rank ||
      Importer::getType(v).getRank() != rank)
    return g.fail("Q, K and V must all have rank 3 or all rank 4");
  if (Importer::getType(k).getElementType() != elementType)
    return g.fail("K must have Q's element type");
  // V may have another float type (T2): the product with the
  // probabilities is computed in Q's, the type of Y.
  v = g.convert(v, elementType);
  int64_t qHeads = g.getInt("q_num_heads", 0);
  int64_t kvHeads = g.getInt("kv_num_heads", 0);
  if (rank == 3 && (qHeads <= 0 || kvHeads <= 0))
    return g.fail("3D inputs need q_num_heads and kv_num_heads");
  if (rank == 4) {
    if ((qHeads && qHeads != qType.getDimSize(1)) ||
        (kvHeads && kvHeads != Importer::getType(k).getDimSize(1)))
      return g.fail("q_num_heads and kv_num_heads differ from the heads of "
                    "the 4D Q and K");
  }
  ASSIGN_OR_FAIL(query, toHeads(g, q, qHeads, "Q"));
  ASSIGN_OR_FAIL(key, toHeads(g, k, kvHeads, "K"));
  ASSIGN_OR_FAIL(value, toHeads(g, v, kvHeads, "V"));
  ArrayRef<int64_t> qs = Importer::getType(query).getShape();
  int64_t batch = qs[0], heads = qs[1], sequence = qs[2], depth = qs[3];
  if (failed(checkAttentionShapes(g, qs, Importer::getType(key).getShape(),
                                  Importer::getType(value).getShape())))
    return failure();

  // The cache: past_key and past_value before K and V.
  Value pastKey = g.input(4), pastValue = g.input(5);
  if (bool(pastKey) != bool(pastValue))
    return g.fail("past_key and past_value go together");
  Value nonpad = g.input(6);
  if (nonpad && pastKey)
    return g.fail("nonpad_kv_seqlen cannot be combined with past_key and "
                  "past_value");
  int64_t past = 0;
  if (pastKey) {
    auto prepend = [&](Value cache, Value current,
                       StringRef what) -> FailureOr<Value> {
      RankedTensorType cacheType = Importer::getType(cache);
      ArrayRef<int64_t> cs = cacheType.getShape();
      ArrayRef<int64_t> now = Importer::getType(current).getShape();
      if (cacheType.getRank() != 4 || cs[0] != now[0] || cs[1] != now[1] ||
          cs[3] != now[3])
        return (void)g.fail(what + " must be [" + llvm::Twine(now[0]) + ", " +
                            llvm::Twine(now[1]) + ", past, " +
                            llvm::Twine(now[3]) + "]"),
               failure();
      cache = g.convert(cache, elementType);
      SmallVector<int64_t> shape(now);
      shape[2] += cs[2];
      return g.create<tg::ConcatOp>(
          Importer::getType(current).clone(ArrayRef<int64_t>(shape)),
          ValueRange{cache, current}, uint64_t(2));
    };
    if (Importer::getType(pastKey).getRank() != 4 ||
        Importer::getType(pastValue).getRank() != 4)
      return g.fail("past_key and past_value must have rank 4");
    past = Importer::getType(pastKey).getDimSize(2);
    if (Importer::getType(pastValue).getDimSize(2) != past)
      return g.fail("past_key and past_value have different lengths");
    ASSIGN_OR_FAIL(presentKey, prepend(pastKey, key, "past_key"));
    ASSIGN_OR_FAIL(presentValue, prepend(pastValue, value, "past_value"));
    key = presentKey;
    value = presentValue;
  }
  if (g.hasOutput(1))
    g.setOutput(1, key);
  if (g.hasOutput(2))
    g.setOutput(2, value);
  int64_t keys = Importer::getType(key).getDimSize(2);
  int64_t valueDepth = Importer::getType(value).getDimSize(3);

  bool causal = g.getBool("is_causal", false);
  std::optional<float> scaleAttr = g.getOptionalFloat("scale");
  double scale =
      scaleAttr ? double(*scaleAttr) : 1.0 / std::sqrt(double(depth));
  float softcap = g.getFloat("softcap", 0.0f);
  if (!(softcap >= 0.0f) || std::isinf(softcap))
    return g.fail("softcap must be finite and not negative");
  int64_t mode = g.getInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return g.fail("qk_matmul_output_mode must be 0, 1, 2 or 3");
  int64_t left = g.getInt("left_window_size", -1);
  int64_t right = g.getInt("right_window_size", -1);
  if (left < -1 || right < -1)
    return g.fail("left_window_size and right_window_size must be -1 or "
                  "non-negative");
  ASSIGN_OR_FAIL(softmaxType, getSoftmaxPrecision(g, elementType));
  Value mask = g.input(3);
  bool wantScores = g.hasOutput(3);
  auto toOutput = [&](Value y) {
    // [batch, heads, sequence, depth] to Y's layout.
    if (rank == 4)
      return y;
    return g.reshape(g.transpose(y, {0, 2, 1, 3}),
                     {batch, sequence, heads * valueDepth});
  };

  SmallVector<int64_t> scoreShape = {batch, heads, sequence, keys};
  RankedTensorType scoreType = RankedTensorType::get(scoreShape, elementType);

  // The additive bias, of element type `biasType`: the mask's, and -inf
  // where the causal bound (unless `nativeCausal`: the attention's own), the
  // window or the padding hides a key. Broadcastable to the scores, [B|1,
  // H|1, Sq|1, Sk]; null when nothing hides a key.
  bool windowed = left >= 0 || right >= 0;
  auto buildBias = [&](Type biasType, bool nativeCausal) -> FailureOr<Value> {
    Value maskBias;
    if (mask) {
      RankedTensorType maskType = Importer::getType(mask);
      SmallVector<int64_t> maskShape(maskType.getShape());
      if (maskShape.empty() || maskShape.back() > keys)
        return (void)g.fail("attn_mask's last dimension must be at most the " +
                            llvm::Twine(keys) + " keys"),
               failure();
      // Checked as if padded to the keys (below).
      SmallVector<int64_t> paddedShape(maskShape);
      paddedShape.back() = keys;
      if (!broadcastsTo(paddedShape, scoreShape))
        return (void)g.fail("attn_mask must broadcast to [" +
                            llvm::Twine(batch) + ", " + llvm::Twine(heads) +
                            ", " + llvm::Twine(sequence) + ", " +
                            llvm::Twine(keys) + "]"),
               failure();
      bool boolean = isBool(mask);
      maskBias = mask;
      if (boolean) {
        Composer m{g, maskType.clone(biasType)};
        maskBias = m.select(mask, m.c(0.0), m.c(-INFINITY));
      } else {
        maskBias = g.convert(mask, biasType);
      }
      // Rank 4, then a shorter mask hides the keys after it.
      maskShape.insert(maskShape.begin(), 4 - maskShape.size(), 1);
      maskBias = g.reshape(maskBias, maskShape);
      if (int64_t missing = keys - maskShape.back()) {
        SmallVector<int64_t> padShape(maskShape);
        padShape.back() = missing;
        Value pad =
            g.splat(RankedTensorType::get(padShape, biasType), -INFINITY);
        maskBias = concatLast(g, {maskBias, pad});
        maskShape.back() = keys;
      }
    }
    bool hideCausal = causal && !nativeCausal;
    if (!hideCausal && !windowed && !nonpad)
      return maskBias;
    // distance[i, j] = j - i; key j is visible to query i when
    // j - i <= offset (causal), offset - left <= j - i (left window),
    // j - i - right <= offset (right window), and j < nonpad (padding).
    Type i64 = g.builder.getI64Type();
    int64_t rows = nonpad ? batch : 1;
    SmallVector<int64_t> shape = {rows, 1, sequence, keys};
    // From a column of query indices and a row of key indices (not a
    // Sq x Sk constant: long sequences would make the module huge).
    auto iota = [&](int64_t count, ArrayRef<int64_t> layout) {
      SmallVector<double> values;
      for (int64_t i = 0; i < count; ++i)
        values.push_back(double(i));
      return g.broadcastTo(
          g.constant(RankedTensorType::get(layout, i64), values), shape);
    };
    Value row = iota(sequence, {1, 1, sequence, 1});
    Value column = iota(keys, {1, 1, 1, keys});
    RankedTensorType intType = RankedTensorType::get(shape, i64);
    Composer c{g, intType};
    Value distance = c.sub(column, row);
    Value offset = c.c(double(past));
    Value length;
    if (nonpad) {
      RankedTensorType nonpadType = Importer::getType(nonpad);
      if (!isa<IntegerType>(nonpadType.getElementType()) || isBool(nonpad) ||
          nonpadType.getShape() != ArrayRef<int64_t>{batch})
        return (void)g.fail("nonpad_kv_seqlen must be an integer vector of "
                            "the " +
                            llvm::Twine(batch) + " batch entries"),
               failure();
      length = g.broadcastTo(
          g.reshape(g.convert(nonpad, i64), {batch, 1, 1, 1}), shape);
      offset = c.sub(length, c.c(double(sequence)));
    }
    Value visible;
    auto require = [&](Value condition) {
      visible = visible ? both(g, visible, condition) : condition;
    };
    auto lessEqual = [&](Value a, Value b) {
      return compare(g, tg::CompareDirection::LE, a, b);
    };
    if (hideCausal)
      require(lessEqual(distance, offset));
    if (left >= 0)
      require(lessEqual(c.sub(offset, c.c(double(left))), distance));
    if (right >= 0)
      require(lessEqual(c.sub(distance, c.c(double(right))), offset));
    if (nonpad)
      require(c.less(column, length));
    Composer b{g, RankedTensorType::get(shape, biasType)};
    Value hidden = b.select(visible, b.c(0.0), b.c(-INFINITY));
    if (!maskBias)
      return hidden;
    // Both in their common shape.
    ArrayRef<int64_t> maskShape = Importer::getType(maskBias).getShape();
    SmallVector<int64_t> common;
    for (auto [a, h] : llvm::zip(maskShape, shape))
      common.push_back(std::max(a, h));
    Composer sum{g, RankedTensorType::get(common, biasType)};
    return sum.add(g.broadcastTo(maskBias, common),
                   g.broadcastTo(hidden, common));
  };

  // tg.attention when the softmax is of the biased (and soft-capped)
  // scores, no scores wanted out, in Q's type or f32: its kernels cap the
  // scores and read the bias in place, and its causal mask is the node's
  // when aligned at the past's length (at keys - sequence).
  bool flashable =
      !wantScores && (softmaxType == elementType || softmaxType.isF32());
  if (flashable) {
    bool nativeCausal = causal && keys - sequence == past && !nonpad;
    ASSIGN_OR_FAIL(flashBias, buildBias(g.builder.getF32Type(), nativeCausal));
    RankedTensorType outputType = RankedTensorType::get(
        {batch, heads, sequence, valueDepth}, elementType);
    RankedTensorType lseType =
        RankedTensorType::get({batch, heads, sequence}, g.builder.getF32Type());
    FloatAttr scaleAttribute;
    if (scaleAttr)
      scaleAttribute = g.builder.getF64FloatAttr(scale);
    FloatAttr softcapAttribute;
    if (softcap > 0.0f)
      softcapAttribute = g.builder.getF64FloatAttr(softcap);
    SmallVector<Value> results = g.createResults<tg::AttentionOp>(
        outputType, lseType, query, key, value, flashBias, /*seed=*/Value(),
        /*offset=*/Value(), nativeCausal, scaleAttribute, softcapAttribute,
        /*dropout=*/FloatAttr(), /*stream=*/IntegerAttr(),
        /*global_shape=*/DenseI64ArrayAttr());
    g.setOutput(0, toOutput(results[0]));
    return success();
  }

  // The scaled product: Q and K each times sqrt(scale), in their type.
  Composer qc{g, Importer::getType(query)};
  Composer kc{g, Importer::getType(key)};
  double root = std::sqrt(scale);
  Value scaledKey = kc.mul(key, kc.c(root));
  ASSIGN_OR_FAIL(scores, groupedMatMul(g, qc.mul(query, qc.c(root)),
                                       g.transpose(scaledKey, {0, 1, 3, 2})));
  Composer s{g, scoreType};
  Value raw = scores;
  if (softcap > 0.0f)
    scores =
        s.mul(s.c(softcap),
              g.create<tg::TanhOp>(scoreType, s.div(scores, s.c(softcap))));
  Value capped = scores;
  ASSIGN_OR_FAIL(compactBias, buildBias(elementType, /*nativeCausal=*/false));
  Value bias;
  if (compactBias) {
    bias = g.broadcastTo(compactBias, scoreShape);
    scores = s.add(scores, bias);
  }
  Value biased = scores;

  // The softmax, in softmax_precision; a query row whose keys are all
  // hidden is a row of zeros (its softmax input replaced by zeros first,
  // so that neither the softmax nor its gradient sees a row of -inf).
  Value fullyHidden;
  if (bias) {
    const Tensor *constantBias = g.getConstant(bias);
    bool someRowHidden = !constantBias;
    if (constantBias)
      for (int64_t row = 0; row < batch * heads * sequence && !someRowHidden;
           ++row) {
        bool hidden = true;
        for (int64_t j = 0; j < keys && hidden; ++j)
          hidden = constantBias->getAsDouble(row * keys + j) == -INFINITY;
        someRowHidden = hidden;
      }
    if (someRowHidden)
      fullyHidden = g.broadcastTo(
          s.equal(
              g.reduce(tg::ReduceKind::Max, bias, {3}, true),
              g.splat(scoreType.clone({batch, heads, sequence, 1}), -INFINITY)),
          scoreShape);
  }
  if (fullyHidden)
    scores = s.select(fullyHidden, s.c(0.0), scores);
  RankedTensorType softmaxTensor = scoreType.clone(softmaxType);
  Value probabilities = g.create<tg::SoftmaxOp>(
      softmaxTensor, g.convert(scores, softmaxType), int64_t(3));
  if (fullyHidden) {
    Composer p{g, softmaxTensor};
    probabilities = p.select(fullyHidden, p.c(0.0), probabilities);
  }
  probabilities = g.convert(probabilities, elementType);
  ASSIGN_OR_FAIL(output, groupedMatMul(g, probabilities, value));
  g.setOutput(0, toOutput(output));
  if (wantScores) {
    Value chosen[] = {raw, capped, biased, probabilities};
    g.setOutput(3, chosen[mode]);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// FlexAttention
//===----------------------------------------------------------------------===//

// FlexAttention-1 of ai.onnx.preview (PyTorch's flex_attention): Q [B, Hq,
// L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev] of one float type T, Hkv
// dividing Hq (query head h reads key/value head h / (Hq / Hkv)). As its
// function body: Q and K each times sqrt(scale) in T, their product in T,
// then in softmax_precision (f32, or f64 for f64 inputs): score_mod, the
// softmax over the keys, prob_mod, the product with V; Y back in T. The
// key/value heads are repeated as Hugging Face's repeat_kv writes it and
// the scores are one 4-D product, the form tg-raise reads: a score_mod it
// takes as a mask, a bias or a soft cap (and no prob_mod) makes the whole
// one tg.attention.
LogicalResult onnx_import::convertFlexAttention(Importer &g,
                                                FlexModifier modify) {
  ASSIGN_OR_FAIL(query, g.requireInput(0));
  ASSIGN_OR_FAIL(key, g.requireInput(1));
  ASSIGN_OR_FAIL(value, g.requireInput(2));
  RankedTensorType qType = Importer::getType(query);
  Type elementType = qType.getElementType();
  if (!isa<FloatType>(elementType) ||
      Importer::getType(key).getElementType() != elementType ||
      Importer::getType(value).getElementType() != elementType)
    return g.fail("Q, K and V must have one float element type");
  if (qType.getRank() != 4 || Importer::getType(key).getRank() != 4 ||
      Importer::getType(value).getRank() != 4)
    return g.fail("Q, K and V must have rank 4 (batch, heads, sequence, "
                  "head size)");
  ArrayRef<int64_t> qs = qType.getShape();
  ArrayRef<int64_t> ks = Importer::getType(key).getShape();
  ArrayRef<int64_t> vs = Importer::getType(value).getShape();
  if (failed(checkAttentionShapes(g, qs, ks, vs)))
    return failure();
  std::optional<float> scaleAttr = g.getOptionalFloat("scale");
  if (scaleAttr && !(*scaleAttr > 0.0f && std::isfinite(*scaleAttr)))
    return g.fail("scale must be finite and positive");
  double scale =
      scaleAttr ? double(*scaleAttr) : 1.0 / std::sqrt(double(qs[3]));
  ASSIGN_OR_FAIL(softmaxType,
                 getSoftmaxPrecision(g, elementType.isF64()
                                            ? elementType
                                            : Type(g.builder.getF32Type())));
  // Each key/value head repeated for the query heads of its group:
  // [B, Hkv, S, X] -> [B, Hkv, 1, S, X] -> [B, Hkv, G, S, X] -> [B, Hq, S, X].
  int64_t group = qs[1] / ks[1];
  auto repeatHeads = [&](Value v) {
    if (group == 1)
      return v;
    ArrayRef<int64_t> s = Importer::getType(v).getShape();
    return g.reshape(g.broadcastTo(g.reshape(v, {s[0], s[1], 1, s[2], s[3]}),
                                   {s[0], s[1], group, s[2], s[3]}),
                     {s[0], qs[1], s[2], s[3]});
  };
  // The keys scaled after their repetition, so that tg-raise peels the
  // scale off the product's operand.
  Value repeatedKey = repeatHeads(key);
  Composer qc{g, qType};
  Composer kc{g, Importer::getType(repeatedKey)};
  double root = std::sqrt(scale);
  Value scaledKey = kc.mul(repeatedKey, kc.c(root));
  RankedTensorType scoreType =
      RankedTensorType::get({qs[0], qs[1], qs[2], ks[2]}, elementType);
  Value scores = g.create<tg::MatmulOp>(scoreType, qc.mul(query, qc.c(root)),
                                        scaledKey, /*transposeA=*/false,
                                        /*transposeB=*/true);
  scores = g.convert(scores, softmaxType);
  ASSIGN_OR_FAIL(modified, modify("score_mod", scores));
  Value probabilities = g.create<tg::SoftmaxOp>(scoreType.clone(softmaxType),
                                                modified, int64_t(3));
  ASSIGN_OR_FAIL(weights, modify("prob_mod", probabilities));
  Value values = repeatHeads(g.convert(value, softmaxType));
  Value output = g.create<tg::MatmulOp>(
      RankedTensorType::get({qs[0], qs[1], qs[2], vs[3]}, softmaxType), weights,
      values, /*transposeA=*/false, /*transposeB=*/false);
  g.setOutput(0, g.convert(output, elementType));
  return success();
}

//===----------------------------------------------------------------------===//
// CausalConvWithState
//===----------------------------------------------------------------------===//

// CausalConvWithState-27 (Mamba's and Gated DeltaNet's convolution): a
// depthwise causal 1D convolution of input [B, C, L] with weight [C, 1, k]
// over the past k - 1 positions (past_state, zeros without) and the input:
// output[t] = bias + sum_j weight[j] * padded[t + j], k products of shifted
// slices, then SiLU with activation 'silu' or 'swish'; present_state is the
// last k - 1 positions of the padded sequence.
LogicalResult onnx_import::convertCausalConvWithState(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(weight, g.requireInput(1));
  if (failed(requireFloat(g, x)))
    return failure();
  RankedTensorType type = Importer::getType(x);
  Type elementType = type.getElementType();
  if (type.getRank() != 3)
    return g.fail("input must have rank 3 (batch, channels, length)");
  int64_t batch = type.getDimSize(0), channels = type.getDimSize(1),
          length = type.getDimSize(2);
  RankedTensorType weightType = Importer::getType(weight);
  if (weightType.getElementType() != elementType || weightType.getRank() != 3 ||
      weightType.getDimSize(0) != channels || weightType.getDimSize(1) != 1 ||
      weightType.getDimSize(2) < 1)
    return g.fail("weight must be [" + llvm::Twine(channels) +
                  ", 1, k] of the input's element type");
  int64_t k = weightType.getDimSize(2);
  if (k > 1024)
    return g.fail("a kernel of " + llvm::Twine(k) +
                  " positions is more than the 1024 tg unrolls");
  std::string activation =
      g.getString("activation", "none", {"none", "silu", "swish"});
  SmallVector<int64_t> stateShape = {batch, channels, k - 1};
  Value past = g.input(3);
  if (past) {
    if (Importer::getType(past) != type.clone(ArrayRef<int64_t>(stateShape)))
      return g.fail("past_state must be [" + llvm::Twine(batch) + ", " +
                    llvm::Twine(channels) + ", " + llvm::Twine(k - 1) +
                    "] of the input's element type");
  } else {
    past = g.splat(type.clone(ArrayRef<int64_t>(stateShape)), 0.0);
  }
  Value padded = k > 1 ? concatLast(g, {past, x}) : x;
  SmallVector<int64_t> outShape = {batch, channels, length};
  RankedTensorType outType = type.clone(ArrayRef<int64_t>(outShape));
  // Summed in f32 (f64 for f64) and rounded once, as a convolution
  // accumulates.
  Type accumulator = elementType.isF64() ? Type(g.builder.getF64Type())
                                         : Type(g.builder.getF32Type());
  Composer e{g, outType.clone(accumulator)};
  Value wide = g.convert(padded, accumulator);
  Value output;
  for (int64_t j = 0; j < k; ++j) {
    Value tap = g.broadcastTo(
        g.reshape(g.convert(g.slice(weight, {0, 0, j}, {channels, 1, j + 1},
                                    {1, 1, 1}),
                            accumulator),
                  {channels, 1}),
        outShape);
    Value term = e.mul(sliceLast(g, wide, j, j + length), tap);
    output = output ? e.add(output, term) : term;
  }
  if (Value bias = g.input(2)) {
    RankedTensorType biasType = Importer::getType(bias);
    if (biasType != RankedTensorType::get({channels}, elementType))
      return g.fail("bias must be a vector of the " + llvm::Twine(channels) +
                    " channels");
    output = e.add(output, g.broadcastTo(g.reshape(g.convert(bias, accumulator),
                                                   {channels, 1}),
                                         outShape));
  }
  output = g.convert(output, elementType);
  if (activation != "none")
    output = g.create<tg::SiluOp>(outType, output);
  g.setOutput(0, output);
  if (g.hasOutput(1))
    g.setOutput(1, sliceLast(g, padded, length, length + k - 1));
  return success();
}

//===----------------------------------------------------------------------===//
// LinearAttention
//===----------------------------------------------------------------------===//

// LinearAttention-27 (linear attention, GLA/RetNet decay, DeltaNet and
// Gated DeltaNet): the recurrence over the tokens, unrolled (one step per
// token, in f32, as the specification defines it):
//   S = exp(g_t) S                           (gated rules)
//   v_t = beta_t (v_t - S^T k_t)             (delta rules)
//   S = S + k_t v_t^T;  o_t = scale q_t^T S  (query head h reads the state of
//                                            key/value head h / (Hq / Hkv))
// from past_state (zeros without); present_state is the last S. Q, K, V,
// decay and beta are packed [B, T, heads * D]; the state is [B, Hkv, dk, dv].
LogicalResult onnx_import::convertLinearAttention(Importer &g) {
  ASSIGN_OR_FAIL(qkv, requireQueryKeyValue(g));
  auto [q, k, v] = qkv;
  std::string rule = g.getString("update_rule", "gated_delta",
                                 {"linear", "gated", "delta", "gated_delta"});
  bool gated = rule == "gated" || rule == "gated_delta";
  bool delta = rule == "delta" || rule == "gated_delta";
  ASSIGN_OR_FAIL(qHeads, g.requireInt("q_num_heads"));
  ASSIGN_OR_FAIL(kvHeads, g.requireInt("kv_num_heads"));
  if (qHeads <= 0 || kvHeads <= 0 || qHeads % kvHeads != 0)
    return g.fail("q_num_heads must be a positive multiple of kv_num_heads");
  RankedTensorType qType = Importer::getType(q);
  if (qType.getRank() != 3 || Importer::getType(k).getRank() != 3 ||
      Importer::getType(v).getRank() != 3)
    return g.fail("query, key and value must be [batch, tokens, heads * "
                  "size]");
  int64_t batch = qType.getDimSize(0), tokens = qType.getDimSize(1);
  for (Value value : {k, v})
    if (Importer::getType(value).getDimSize(0) != batch ||
        Importer::getType(value).getDimSize(1) != tokens)
      return g.fail("query, key and value have different batch or token "
                    "counts");
  if (qType.getDimSize(2) % qHeads != 0 ||
      Importer::getType(v).getDimSize(2) % kvHeads != 0)
    return g.fail("the hidden sizes are not multiples of the head counts");
  int64_t dk = qType.getDimSize(2) / qHeads;
  int64_t dv = Importer::getType(v).getDimSize(2) / kvHeads;
  int64_t groups = qHeads / kvHeads;
  if (Importer::getType(k).getDimSize(2) != kvHeads * dk)
    return g.fail("key must hold kv_num_heads heads of query's head size " +
                  llvm::Twine(dk));
  constexpr int64_t kMaxTokens = 4096;
  if (tokens > kMaxTokens)
    return g.fail(llvm::Twine(tokens) +
                  " tokens: tg unrolls the recurrence, "
                  "one step per token, up to " +
                  llvm::Twine(kMaxTokens));
  Value decay = g.input(4), beta = g.input(5);
  if (gated != bool(decay))
    return g.fail("update_rule '" + rule + "' " +
                  (gated ? "requires" : "forbids") + " the decay input");
  if (delta != bool(beta))
    return g.fail("update_rule '" + rule + "' " +
                  (delta ? "requires" : "forbids") + " the beta input");
  Type f32 = g.builder.getF32Type();
  // [B, T, H * D] -> [B, H, T, D] in f32.
  auto heads = [&](Value value, int64_t count) {
    int64_t size = Importer::getType(value).getDimSize(2) / count;
    return g.transpose(
        g.reshape(g.convert(value, f32), {batch, tokens, count, size}),
        {0, 2, 1, 3});
  };
  // Token t of [B, H, T, D] as [B, H, rows, cols].
  auto token = [&](Value value, int64_t t, int64_t rows, int64_t cols) {
    ArrayRef<int64_t> shape = Importer::getType(value).getShape();
    Value slice = g.slice(value, {0, 0, t, 0},
                          {shape[0], shape[1], t + 1, shape[3]}, {1, 1, 1, 1});
    return g.reshape(slice, {shape[0], shape[1], rows, cols});
  };
  Value queries = heads(q, qHeads), keys = heads(k, kvHeads),
        values = heads(v, kvHeads);
  Value decays, betas;
  if (decay) {
    RankedTensorType t = Importer::getType(decay);
    if (t.getRank() != 3 || t.getDimSize(0) != batch ||
        t.getDimSize(1) != tokens ||
        (t.getDimSize(2) != kvHeads && t.getDimSize(2) != kvHeads * dk))
      return g.fail("decay must be [batch, tokens, kv_num_heads] or [batch, "
                    "tokens, kv_num_heads * head size]");
    decays = heads(decay, kvHeads);
  }
  if (beta) {
    RankedTensorType t = Importer::getType(beta);
    if (t.getRank() != 3 || t.getDimSize(0) != batch ||
        t.getDimSize(1) != tokens ||
        (t.getDimSize(2) != kvHeads && t.getDimSize(2) != 1))
      return g.fail("beta must be [batch, tokens, kv_num_heads] or [batch, "
                    "tokens, 1]");
    betas = heads(beta, t.getDimSize(2));
  }
  SmallVector<int64_t> stateShape = {batch, kvHeads, dk, dv};
  RankedTensorType stateType = RankedTensorType::get(stateShape, f32);
  Value state;
  Type stateOutType = qType.getElementType();
  if (Value past = g.input(3)) {
    RankedTensorType pastType = Importer::getType(past);
    if (pastType.getShape() != ArrayRef<int64_t>(stateShape) ||
        !isa<FloatType>(pastType.getElementType()))
      return g.fail("past_state must be [" + llvm::Twine(batch) + ", " +
                    llvm::Twine(kvHeads) + ", " + llvm::Twine(dk) + ", " +
                    llvm::Twine(dv) + "] floats");
    state = g.convert(past, f32);
    stateOutType = pastType.getElementType();
  } else {
    state = g.splat(stateType, 0.0);
  }
  float scaleAttr = g.getFloat("scale", 0.0f);
  double scale =
      scaleAttr != 0.0f ? double(scaleAttr) : 1.0 / std::sqrt(double(dk));
  Composer s{g, stateType};
  SmallVector<Value> outputs;
  for (int64_t t = 0; t < tokens; ++t) {
    Value kt = token(keys, t, dk, 1);   // [B, Hkv, dk, 1]
    Value vt = token(values, t, 1, dv); // [B, Hkv, 1, dv]
    if (decays) {
      int64_t width = Importer::getType(decays).getDimSize(3);
      Value gate = token(decays, t, width, 1);
      state = s.mul(state, g.broadcastTo(g.create<tg::ExpOp>(
                                             Importer::getType(gate), gate),
                                         stateShape));
    }
    if (betas) {
      // The value the state retrieves for k_t: k_t^T S ([B, Hkv, 1, dv]).
      ASSIGN_OR_FAIL(retrieved,
                     buildMatMul(g, g.transpose(kt, {0, 1, 3, 2}), state));
      Value b = g.broadcastTo(token(betas, t, 1, 1),
                              Importer::getType(vt).getShape());
      vt = buildBinary<tg::MulOp>(g, b,
                                  buildBinary<tg::SubOp>(g, vt, retrieved));
    }
    ASSIGN_OR_FAIL(update, buildMatMul(g, kt, vt));
    state = s.add(state, update);
    // o_t = scale q_t^T S: [B, Hkv, G, dk] times [B, Hkv, dk, dv].
    Value qt =
        g.reshape(token(queries, t, 1, dk), {batch, kvHeads, groups, dk});
    ASSIGN_OR_FAIL(read, buildMatMul(g, qt, state));
    Composer o{g, Importer::getType(read)};
    outputs.push_back(
        g.reshape(o.mul(read, o.c(scale)), {batch, 1, qHeads * dv}));
  }
  RankedTensorType outputType =
      RankedTensorType::get({batch, tokens, qHeads * dv}, f32);
  Value output = outputs.empty() ? g.splat(outputType, 0.0)
                 : outputs.size() == 1
                     ? outputs.front()
                     : g.create<tg::ConcatOp>(outputType, outputs, uint64_t(1));
  g.setOutput(0, g.convert(output, qType.getElementType()));
  if (g.hasOutput(1))
    g.setOutput(1, g.convert(state, stateOutType));
  return success();
}
