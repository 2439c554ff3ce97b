//===- IndexingConverters.cpp - converters of the indexing ONNX ops -------===//
//
// Pad, CumSum, GatherND, GatherElements, Tile, TopK, IsNaN, and the ops
// whose output shape depends on values (Compress, NonZero, Unique), with
// the semantics of the ONNX specification (opsets 1 to 21) and its
// reference implementation. Gathers of any element type become a tg.embedding
// over the data flattened to rows, with flat row ids computed by integer ops;
// when the ids and the data are constants everything folds at import.
//
//===----------------------------------------------------------------------===//

#include "ConverterUtils.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

using Importer = GraphImporter;

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

/// The padding of one axis: `begin` and `end` elements (negative: removed).
struct AxisPadding {
  int64_t begin = 0, end = 0;
};

/// The source position that position `position` (relative to the first
/// element; negative before it) of a non-constant mode reads, in [0, size).
static int64_t mapPadPosition(StringRef mode, int64_t position, int64_t size) {
  if (mode == "edge")
    return std::clamp<int64_t>(position, 0, size - 1);
  if (mode == "wrap")
    return ((position % size) + size) % size;
  // reflect, as numpy: mirrored about the first and last element.
  if (size == 1)
    return 0;
  int64_t period = 2 * (size - 1);
  int64_t p = ((position % period) + period) % period;
  return p < size ? p : period - p;
}

static FailureOr<SmallVector<AxisPadding>> getPadding(Importer &g,
                                                      int64_t rank) {
  SmallVector<int64_t> pads, axes;
  if (g.opset < 11) {
    std::optional<SmallVector<int64_t>> attr = g.getInts("pads");
    if (!attr)
      attr = g.getInts("paddings");
    if (!attr)
      return (void)g.fail("expects a 'pads' attribute"), failure();
    pads = *attr;
  } else {
    ASSIGN_OR_FAIL(p, g.requireConstantInts(1, "pads"));
    pads = p;
    if (g.getNumInputs() > 3 && g.input(3)) {
      ASSIGN_OR_FAIL(a, g.requireConstantInts(3, "axes"));
      axes = a;
    }
  }
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  if (pads.size() != 2 * axes.size())
    return (void)g.fail("pads has " + llvm::Twine(pads.size()) +
                        " values for " + llvm::Twine(axes.size()) + " axes"),
           failure();
  SmallVector<AxisPadding> padding(rank);
  SmallVector<bool> seen(rank, false);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    ASSIGN_OR_FAIL(dim, g.normalizeAxis(axis, rank));
    if (seen[dim])
      return (void)g.fail("axis " + llvm::Twine(axis) + " is repeated"),
             failure();
    seen[dim] = true;
    padding[dim] = {pads[i], pads[axes.size() + i]};
  }
  return padding;
}

/// The value constant mode pads with: a scalar of the data's type.
static FailureOr<Value> getPadValue(Importer &g, RankedTensorType type) {
  RankedTensorType scalar = RankedTensorType::get({}, type.getElementType());
  if (g.opset < 11)
    return g.splat(scalar, g.getFloat("value", 0.0f));
  if (g.getNumInputs() < 3 || !g.input(2))
    return g.splat(scalar, 0.0);
  ASSIGN_OR_FAIL(value, g.requireInput(2));
  RankedTensorType valueType = Importer::getType(value);
  if (valueType.getNumElements() != 1 ||
      valueType.getElementType() != type.getElementType())
    return (void)g.fail("constant_value must be one element of the data's "
                        "type, got " +
                        llvm::Twine(valueType.getNumElements()) + " elements"),
           failure();
  return g.reshape(value, {});
}

LogicalResult onnx_import::convertPad(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  RankedTensorType type = Importer::getType(x);
  int64_t rank = type.getRank();
  std::string mode =
      g.getString("mode", "constant", {"constant", "reflect", "edge", "wrap"});
  ASSIGN_OR_FAIL(padding, getPadding(g, rank));

  // Negative pads crop first (as onnxruntime does; numpy, ONNX's reference,
  // has no negative pads), then the positive ones pad the cropped tensor.
  SmallVector<int64_t> starts, limits, strides(rank, 1), low, high,
      interior(rank, 0);
  for (auto [d, pad] : llvm::enumerate(padding)) {
    starts.push_back(std::max<int64_t>(-pad.begin, 0));
    limits.push_back(type.getDimSize(d) - std::max<int64_t>(-pad.end, 0));
    low.push_back(std::max<int64_t>(pad.begin, 0));
    high.push_back(std::max<int64_t>(pad.end, 0));
    if (starts.back() > limits.back())
      return g.fail("pads remove more than the " +
                    llvm::Twine(type.getDimSize(d)) + " elements of axis " +
                    llvm::Twine(d));
  }
  // The padded shape, bounded as every tensor the import builds.
  SmallVector<int64_t> paddedShape;
  for (int64_t d = 0; d < rank; ++d) {
    std::optional<int64_t> size =
        llvm::checkedAdd(limits[d] - starts[d], low[d]);
    if (size)
      size = llvm::checkedAdd(*size, high[d]);
    if (!size)
      return g.fail("the padded axis " + llvm::Twine(d) + " overflows");
    paddedShape.push_back(*size);
  }
  if (span(paddedShape) > kMaxImportElements)
    return g.fail("the padded tensor has more than " +
                  llvm::Twine(kMaxImportElements) +
                  " elements (zero dimensions counted as one)");
  Value kept = g.slice(x, starts, limits, strides);
  RankedTensorType keptType = Importer::getType(kept);
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; })) {
    g.setOutput(0, kept);
    return success();
  }

  if (mode != "constant") {
    Value result = kept;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = keptType.getDimSize(d);
      if (low[d] == 0 && high[d] == 0)
        continue;
      if (size == 0)
        return g.fail("cannot pad the empty axis " + llvm::Twine(d) +
                      " in mode '" + mode + "'");
      // The source position of each padded position is listed at import.
      if (paddedShape[d] > kMaxFoldElements)
        return g.fail("axis " + llvm::Twine(d) + " padded to " +
                      llvm::Twine(paddedShape[d]) + " elements in mode '" +
                      mode + "' (at most " + llvm::Twine(kMaxFoldElements) +
                      ")");
      SmallVector<int64_t> positions;
      for (int64_t j = 0; j < size + low[d] + high[d]; ++j)
        positions.push_back(mapPadPosition(mode, j - low[d], size));
      result = g.takeAlongAxis(result, d, positions);
    }
    g.setOutput(0, result);
    return success();
  }

  // Constant mode: zeros around, then a mask of the kept elements puts the
  // value there unless it is +0.
  ASSIGN_OR_FAIL(value, getPadValue(g, type));
  Value padded = g.create<tg::PadOp>(kept, low, high, interior);
  RankedTensorType paddedType = Importer::getType(padded);
  const Tensor *constantValue = g.getConstant(value);
  if (constantValue && constantValue->getAsDouble(0) == 0.0 &&
      !std::signbit(constantValue->getAsDouble(0))) {
    g.setOutput(0, padded);
    return success();
  }
  Value inside = g.create<tg::PadOp>(
      g.splat(keptType.clone(g.builder.getI1Type()), 1), low, high, interior);
  g.setOutput(0, select(g, inside, padded,
                        g.broadcastTo(value, paddedType.getShape())));
  return success();
}

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

/// A numeric tensor of rank >= 1 (CumSum, TopK).
static FailureOr<Value> requireSortable(Importer &g, StringRef op) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (isBool(x))
    return (void)g.fail(op + " of a bool tensor is not defined"), failure();
  if (Importer::getType(x).getRank() == 0)
    return (void)g.fail(op + " expects a tensor of rank >= 1"), failure();
  return x;
}

/// The permutation that moves `axis` last, and its inverse.
static std::pair<SmallVector<int64_t>, SmallVector<int64_t>>
moveAxisLast(int64_t rank, int64_t axis) {
  SmallVector<int64_t> perm, inverse;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  for (int64_t d = 0; d < rank; ++d)
    inverse.push_back(d < axis ? d : d == axis ? rank - 1 : d - 1);
  return {perm, inverse};
}

namespace {
/// A CumSum's or CumProd's input (x, axis), as [rows, size] with the scanned
/// axis last, and how to put a result of that layout back.
struct ScanOperand {
  Value flat;
  int64_t rows, size;
  bool exclusive, reverse;
  SmallVector<int64_t> movedShape, inverse;
};
} // namespace

static FailureOr<ScanOperand> getScanOperand(Importer &g, StringRef op) {
  ASSIGN_OR_FAIL(x, requireSortable(g, op));
  RankedTensorType type = Importer::getType(x);
  int64_t rank = type.getRank();
  ASSIGN_OR_FAIL(axisValue, g.requireConstantInts(1, "axis"));
  if (axisValue.size() != 1)
    return (void)g.fail("axis must hold one value"), failure();
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(axisValue.front(), rank));
  ScanOperand scan;
  scan.exclusive = g.getBool("exclusive", false);
  scan.reverse = g.getBool("reverse", false);
  scan.size = type.getDimSize(axis);
  auto [perm, inverse] = moveAxisLast(rank, axis);
  scan.inverse = inverse;
  Value moved = g.transpose(x, perm);
  scan.movedShape.assign(Importer::getType(moved).getShape().begin(),
                         Importer::getType(moved).getShape().end());
  scan.rows = scan.size == 0 ? 0 : type.getNumElements() / scan.size;
  scan.flat = g.reshape(moved, {scan.rows, scan.size});
  return scan;
}

static void setScanResult(Importer &g, const ScanOperand &scan, Value result) {
  g.setOutput(0, g.transpose(g.reshape(result, scan.movedShape), scan.inverse));
}

LogicalResult onnx_import::convertCumSum(Importer &g) {
  ASSIGN_OR_FAIL(scan, getScanOperand(g, "CumSum"));
  // The sum along the last axis as a product with a 0/1 matrix:
  // include[i][o] says whether input position i counts in output o.
  int64_t size = scan.size, rows = scan.rows;
  if (size > 0 && size > kMaxFoldElements / size) // size * size, unwrapped
    return g.fail("the axis of " + llvm::Twine(size) +
                  " elements is too long for CumSum in tg");
  SmallVector<double> include;
  for (int64_t i = 0; i < size; ++i)
    for (int64_t o = 0; o < size; ++o)
      include.push_back(scan.reverse ? (scan.exclusive ? i > o : i >= o)
                                     : (scan.exclusive ? i < o : i <= o));
  Value flat = scan.flat;
  RankedTensorType type = Importer::getType(flat);
  Value sums;
  if (isFloat(flat)) {
    // Differentiable: the gradient is the reverse cumulative sum.
    Value matrix =
        g.constant(type.clone(ArrayRef<int64_t>{size, size}), include);
    sums = g.create<tg::MatmulOp>(flat, matrix);
  } else {
    // Integers exactly: the masked rows summed.
    Type i1 = g.builder.getI1Type();
    Value mask = g.constant(RankedTensorType::get({size, size}, i1), include);
    SmallVector<int64_t> cube{rows, size, size};
    RankedTensorType cubeType = type.clone(cube);
    Value spread =
        g.create<tg::BroadcastInDimOp>(cubeType, flat, ArrayRef<int64_t>{0, 1});
    Value masks = g.create<tg::BroadcastInDimOp>(cubeType.clone(i1), mask,
                                                 ArrayRef<int64_t>{1, 2});
    sums = g.reduce(tg::ReduceKind::Sum,
                    select(g, masks, spread, g.splat(cubeType, 0)), {1},
                    /*keepDims=*/false);
  }
  setScanResult(g, scan, sums);
  return success();
}

// CumProd-26: the running product along `axis` (exclusive: of the elements
// before; reverse: from the end), as a scan of log2(n) elementwise
// products of the values and their shifts (ones shifted in): exact for
// integers (their products wrap), and through a zero the gradient stays
// exact, as no division is involved.
LogicalResult onnx_import::convertCumProd(Importer &g) {
  ASSIGN_OR_FAIL(scan, getScanOperand(g, "CumProd"));
  int64_t rows = scan.rows, size = scan.size;
  // `value` moved by `shift` positions along the scan (toward the end, or
  // the start when reversed), ones filling the vacated positions.
  auto shifted = [&](Value value, int64_t shift) {
    RankedTensorType flatType = Importer::getType(value);
    Value ones = g.splat(flatType.clone(ArrayRef<int64_t>{rows, shift}), 1.0);
    Value kept = scan.reverse
                     ? g.slice(value, {0, shift}, {rows, size}, {1, 1})
                     : g.slice(value, {0, 0}, {rows, size - shift}, {1, 1});
    SmallVector<Value> parts = scan.reverse ? SmallVector<Value>{kept, ones}
                                            : SmallVector<Value>{ones, kept};
    return g.create<tg::ConcatOp>(flatType, parts, uint64_t(1));
  };
  Value product = scan.flat;
  if (scan.exclusive && size > 0)
    product = shifted(product, 1);
  for (int64_t shift = 1; shift < size; shift *= 2)
    product = buildBinary<tg::MulOp>(g, product, shifted(product, shift));
  setScanResult(g, scan, product);
  return success();
}

//===----------------------------------------------------------------------===//
// GatherND and GatherElements
//===----------------------------------------------------------------------===//

/// Integer indices as i64, or an error.
static FailureOr<Value> requireIndices(Importer &g, unsigned index) {
  ASSIGN_OR_FAIL(indices, g.requireInput(index));
  if (!isa<IntegerType>(Importer::getType(indices).getElementType()) ||
      isBool(indices))
    return (void)g.fail("indices must be integers"), failure();
  return g.convert(indices, g.builder.getI64Type());
}

/// Fails when constant flat ids leave [0, count).
static LogicalResult checkConstantIds(Importer &g, Value ids, int64_t count) {
  const Tensor *constantIds = g.getConstant(ids);
  if (!constantIds)
    return success();
  for (int64_t id : constantIds->ints())
    if (id < 0 || id >= count)
      return g.fail("an index is out of range of the data");
  return success();
}

namespace {
/// GatherND's and ScatterND's view of data: rows of the dimensions after
/// the indexed ones, picked by flat row ids.
struct NDRows {
  Value ids;                     // [batch * tuples] i64
  SmallVector<int64_t> table;    // [batch * cells, rest...]
  SmallVector<int64_t> gathered; // indices' shape but the last, rest...
};
} // namespace

/// The rows of `dataShape` that `indices` ([..., depth], i64) address, with
/// `batchDims` leading dimensions shared (GatherND's and ScatterND's).
static FailureOr<NDRows> getNDRows(Importer &g, ArrayRef<int64_t> dataShape,
                                   Value indices, int64_t batchDims) {
  ArrayRef<int64_t> indexShape = Importer::getType(indices).getShape();
  int64_t r = dataShape.size(), q = indexShape.size();
  if (r < 1 || q < 1)
    return (void)g.fail("data and indices must have rank >= 1"), failure();
  if (batchDims < 0 || batchDims >= std::min(r, q))
    return (void)g.fail("batch_dims " + llvm::Twine(batchDims) +
                        " must be below the ranks of data and indices"),
           failure();
  int64_t depth = indexShape.back();
  if (depth < 1 || depth > r - batchDims)
    return (void)g.fail("the last dimension of indices (" + llvm::Twine(depth) +
                        ") must be in [1, " + llvm::Twine(r - batchDims) + "]"),
           failure();
  if (dataShape.take_front(batchDims) != indexShape.take_front(batchDims))
    return (void)g.fail("the batch dimensions of data and indices differ"),
           failure();

  // data: [batch..., indexed (depth dims)..., rest...] as rows of `rest`;
  // the flat row of a tuple is batch * cells + sum(index_j * stride_j).
  int64_t batch = product(dataShape.take_front(batchDims));
  ArrayRef<int64_t> indexed = dataShape.slice(batchDims, depth);
  int64_t cells = product(indexed);
  int64_t tuples =
      product(indexShape.drop_back()) / std::max<int64_t>(batch, 1);
  if (batch == 0)
    tuples = 0;
  auto i64 = g.builder.getI64Type();
  RankedTensorType tupleType = RankedTensorType::get({batch, tuples}, i64);
  Value components = g.reshape(indices, {batch, tuples, depth});
  SmallVector<double> offsets;
  for (int64_t b = 0; b < batch; ++b)
    offsets.push_back(double(b * cells));
  Value ids = g.create<tg::BroadcastInDimOp>(
      tupleType, g.constant(RankedTensorType::get({batch}, i64), offsets),
      ArrayRef<int64_t>{0});
  int64_t stride = cells;
  for (int64_t j = 0; j < depth; ++j) {
    stride /= std::max<int64_t>(indexed[j], 1);
    Value component = g.reshape(
        g.slice(components, {0, 0, j}, {batch, tuples, j + 1}, {1, 1, 1}),
        {batch, tuples});
    component = wrapNegativeIndices(g, component, indexed[j]);
    ids = buildBinary<tg::AddOp>(
        g, ids,
        buildBinary<tg::MulOp>(g, component, g.splat(tupleType, stride)));
  }
  // Each component in the range of its own dimension (a flat id alone
  // would not tell that a later component overflowed into the next cell).
  if (const Tensor *constantIndices = g.getConstant(indices)) {
    const std::vector<int64_t> &values = constantIndices->ints();
    for (size_t i = 0; i < values.size(); ++i) {
      int64_t dim = indexed[i % depth];
      if (values[i] < -dim || values[i] >= dim)
        return (void)g.fail("index " + llvm::Twine(values[i]) +
                            " is out of range [" + llvm::Twine(-dim) + ", " +
                            llvm::Twine(dim) + ")"),
               failure();
    }
  }
  NDRows rows;
  rows.ids = g.reshape(ids, {batch * tuples});
  rows.table.push_back(batch * cells);
  llvm::append_range(rows.table, dataShape.drop_front(batchDims + depth));
  rows.gathered.assign(indexShape.begin(), indexShape.end() - 1);
  llvm::append_range(rows.gathered, dataShape.drop_front(batchDims + depth));
  return rows;
}

LogicalResult onnx_import::convertGatherND(Importer &g) {
  ASSIGN_OR_FAIL(data, g.requireInput(0));
  ASSIGN_OR_FAIL(indices, requireIndices(g, 1));
  ASSIGN_OR_FAIL(rows, getNDRows(g, Importer::getType(data).getShape(), indices,
                                 g.getInt("batch_dims", 0)));
  g.setOutput(0, g.reshape(g.takeRows(g.reshape(data, rows.table), rows.ids),
                           rows.gathered));
  return success();
}

/// The flat positions in data (of `dataShape`) that GatherElements and
/// ScatterElements address: each element's own position, but along `axis`
/// (the node's attribute, default 0, unless given) its index (`indices`,
/// i64, of data's rank).
static FailureOr<Value> getElementIds(Importer &g, ArrayRef<int64_t> dataShape,
                                      Value indices, StringRef op,
                                      std::optional<int64_t> givenAxis = {}) {
  ArrayRef<int64_t> indexShape = Importer::getType(indices).getShape();
  int64_t rank = dataShape.size();
  if (rank < 1 || int64_t(indexShape.size()) != rank)
    return (void)g.fail("data and indices must have the same rank >= 1"),
           failure();
  ASSIGN_OR_FAIL(axis, givenAxis ? FailureOr<int64_t>(*givenAxis)
                                 : g.normalizeAxis(g.getInt("axis", 0), rank));
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indexShape[d] > dataShape[d])
      return (void)g.fail("indices dimension " + llvm::Twine(d) + " (" +
                          llvm::Twine(indexShape[d]) +
                          ") exceeds the data's (" + llvm::Twine(dataShape[d]) +
                          ")"),
             failure();
  int64_t count = product(indexShape);
  if (span(indexShape) > kMaxFoldElements)
    return (void)g.fail("too many indices for " + op + " in tg"), failure();
  // A constant offset of the other coordinates plus the index times the
  // stride of `axis`.
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dataShape[d + 1];
  SmallVector<double> offsets(count, 0.0);
  SmallVector<int64_t> coordinate(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        offsets[i] += double(coordinate[d] * strides[d]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++coordinate[d] < indexShape[d])
        break;
      coordinate[d] = 0;
    }
  }
  RankedTensorType idType = Importer::getType(indices);
  int64_t size = dataShape[axis];
  if (const Tensor *constantIndices = g.getConstant(indices))
    for (int64_t index : constantIndices->ints())
      if (index < -size || index >= size)
        return (void)g.fail("index " + llvm::Twine(index) +
                            " is out of range [" + llvm::Twine(-size) + ", " +
                            llvm::Twine(size) + ")"),
               failure();
  Value ids = buildBinary<tg::AddOp>(
      g, g.constant(idType, offsets),
      buildBinary<tg::MulOp>(g, wrapNegativeIndices(g, indices, size),
                             g.splat(idType, strides[axis])));
  if (failed(checkConstantIds(g, ids, product(dataShape))))
    return failure();
  return ids;
}

LogicalResult onnx_import::convertGatherElements(Importer &g) {
  ASSIGN_OR_FAIL(data, g.requireInput(0));
  ASSIGN_OR_FAIL(indices, requireIndices(g, 1));
  ArrayRef<int64_t> dataShape = Importer::getType(data).getShape();
  ASSIGN_OR_FAIL(ids, getElementIds(g, dataShape, indices, "GatherElements"));
  g.setOutput(0, g.takeRows(g.reshape(data, {product(dataShape)}), ids));
  return success();
}

// TensorScatter-24 (a KV cache's update): past_cache with, along `axis`
// (default -2), the update's sequence written from each batch entry's
// write index (0 without write_indices; modulo the cache length in
// circular mode). Computed as a gather: each cache position p of batch
// entry b reads the update at p - write_indices[b] (mod the length in
// circular mode) where that is within the update, else keeps the cache;
// the gradient reaches both.
LogicalResult onnx_import::convertTensorScatter(Importer &g) {
  ASSIGN_OR_FAIL(past, g.requireInput(0));
  ASSIGN_OR_FAIL(update, g.requireInput(1));
  Value writeIndices = g.input(2);
  std::string mode = g.getString("mode", "linear", {"linear", "circular"});
  RankedTensorType type = Importer::getType(past),
                   updateType = Importer::getType(update);
  int64_t rank = type.getRank();
  if (rank < 2 || updateType.getRank() != rank ||
      updateType.getElementType() != type.getElementType())
    return g.fail("past_cache and update must have one element type and "
                  "one rank of at least 2");
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(g.getInt("axis", -2), rank));
  if (axis == 0)
    return g.fail("axis must not be the batch dimension");
  for (int64_t d = 0; d < rank; ++d)
    if (d == axis ? updateType.getDimSize(d) > type.getDimSize(d)
                  : updateType.getDimSize(d) != type.getDimSize(d))
      return g.fail("update must have past_cache's shape but along axis " +
                    llvm::Twine(axis) + ", where it can be shorter");
  int64_t batch = type.getDimSize(0), length = type.getDimSize(axis),
          written = updateType.getDimSize(axis);
  if (g.hadError())
    return failure();
  if (written == 0 || product(type.getShape()) == 0) {
    g.setOutput(0, past);
    return success();
  }
  Type i64 = g.builder.getI64Type();
  RankedTensorType gridType = RankedTensorType::get({batch, length}, i64);
  Value starts = g.splat(gridType, 0.0);
  if (writeIndices) {
    ASSIGN_OR_FAIL(given, requireIndices(g, 2));
    if (Importer::getType(given).getShape() != ArrayRef<int64_t>{batch})
      return g.fail("write_indices must hold one index per batch entry");
    starts = g.broadcastTo(g.reshape(given, {batch, 1}), {batch, length});
  }
  Value positions = g.broadcastTo(
      g.reshape(g.constantInts(llvm::to_vector(llvm::seq<int64_t>(0, length)),
                               RankedTensorType::get({length}, i64)),
                {1, length}),
      {batch, length});
  // Which update element lands at each position.
  Value source = buildBinary<tg::SubOp>(g, positions, starts);
  if (mode == "circular") {
    // (p - w) mod length, for any sign of w: the truncating remainder,
    // plus the length where negative.
    Value lengths = g.splat(gridType, double(length));
    Value rest = buildBinary<tg::SubOp>(
        g, source,
        buildBinary<tg::MulOp>(g, buildBinary<tg::DivOp>(g, source, lengths),
                               lengths));
    source = select(
        g, compare(g, tg::CompareDirection::LT, rest, g.splat(gridType, 0.0)),
        buildBinary<tg::AddOp>(g, rest, lengths), rest);
  }
  Value inside =
      compare(g, tg::CompareDirection::GE, source, g.splat(gridType, 0.0));
  inside = select(g, inside,
                  compare(g, tg::CompareDirection::LT, source,
                          g.splat(gridType, double(written))),
                  inside);
  Value clamped = g.create<tg::MaxOp>(
      gridType,
      g.create<tg::MinOp>(gridType, source,
                          g.splat(gridType, double(written - 1))),
      g.splat(gridType, 0.0));
  // [B, L] along the batch and the axis, broadcast over the rest.
  SmallVector<int64_t> spread(rank, 1);
  spread[0] = batch;
  spread[axis] = length;
  ArrayRef<int64_t> shape = type.getShape();
  Value indices = g.broadcastTo(g.reshape(clamped, spread), shape);
  ASSIGN_OR_FAIL(ids, getElementIds(g, updateType.getShape(), indices,
                                    "TensorScatter", axis));
  Value gathered =
      g.takeRows(g.reshape(update, {product(updateType.getShape())}), ids);
  g.setOutput(0, select(g, g.broadcastTo(g.reshape(inside, spread), shape),
                        g.reshape(gathered, shape), past));
  return success();
}

//===----------------------------------------------------------------------===//
// ScatterND and ScatterElements
//===----------------------------------------------------------------------===//

/// The most elements of the [N, R, W] choice scatterRowsOneHot builds.
constexpr int64_t kMaxOneHotScatter = int64_t(1) << 24;

double onnx_import::getNeutralElement(StringRef reduction, Type elementType) {
  bool isFloatData = isa<FloatType>(elementType);
  if (reduction == "mul")
    return 1.0;
  if (reduction == "max")
    return isFloatData ? -INFINITY : double(getIntMin(elementType));
  if (reduction == "min")
    return isFloatData ? INFINITY : double(getIntMax(elementType));
  return 0.0;
}

/// scatterRows of rows computed at run time into `table` ([R, W]) by
/// comparing each of the N ids with every row: update n reaches row r where
/// ids[n] == r, through an [N, R, W] choice reduced over n (a sum for none
/// and add, a maximum, minimum or product for the others), so that any
/// element type and every reduction work, and gradients flow through the
/// reductions. Bounded by kMaxOneHotScatter; reshaped to `shape`.
static FailureOr<Value> scatterRowsOneHot(Importer &g, Value table, Value ids,
                                          Value updates, StringRef reduction,
                                          ArrayRef<int64_t> shape) {
  RankedTensorType type = Importer::getType(table);
  Type elementType = type.getElementType();
  int64_t rows = type.getDimSize(0), width = type.getDimSize(1);
  int64_t count = Importer::getType(ids).getDimSize(0);
  if (elementType.isInteger(1))
    return (void)g.fail("reduction '" + reduction +
                        "' of bool data at indices computed at run time is "
                        "not supported"),
           failure();
  if (span({count, rows, width}) > kMaxOneHotScatter)
    return (void)g.fail("scattering " + llvm::Twine(count) + " updates of " +
                        llvm::Twine(width) + " elements into " +
                        llvm::Twine(rows) +
                        " rows at indices computed at "
                        "run time compares every update with every row: " +
                        llvm::Twine(span({count, rows, width})) +
                        " elements, above 2^24 (f32, f16, bf16 and bool data "
                        "with reduction none or add take a scatter-add "
                        "instead)"),
           failure();
  Type i64 = g.builder.getI64Type();
  Value positions = g.broadcastTo(
      g.reshape(g.constantInts(llvm::to_vector(llvm::seq<int64_t>(0, rows)),
                               RankedTensorType::get({rows}, i64)),
                {1, rows}),
      {count, rows});
  Value hit = compare(g, tg::CompareDirection::EQ,
                      g.broadcastTo(g.reshape(ids, {count, 1}), {count, rows}),
                      positions);
  double neutral = getNeutralElement(reduction, elementType);
  RankedTensorType cubeType =
      RankedTensorType::get({count, rows, width}, elementType);
  Value cube = select(
      g, g.broadcastTo(g.reshape(hit, {count, rows, 1}), cubeType.getShape()),
      g.broadcastTo(g.reshape(updates, {count, 1, width}), cubeType.getShape()),
      g.splat(cubeType, neutral));
  Value result;
  if (reduction == "max" || reduction == "min") {
    bool max = reduction == "max";
    Value reduced =
        g.reduce(max ? tg::ReduceKind::Max : tg::ReduceKind::Min, cube, {0},
                 /*keepDims=*/false);
    result = max ? buildBinary<tg::MaxOp>(g, table, reduced)
                 : buildBinary<tg::MinOp>(g, table, reduced);
  } else if (reduction == "mul") {
    result = buildBinary<tg::MulOp>(
        g, table, buildProduct(g, cube, {0}, /*keepDims=*/false));
  } else {
    Value sum = g.reduce(tg::ReduceKind::Sum, cube, {0}, /*keepDims=*/false);
    if (reduction == "add") {
      result = buildBinary<tg::AddOp>(g, table, sum);
    } else {
      Value written = g.reduce(tg::ReduceKind::Sum, g.convert(hit, i64), {0},
                               /*keepDims=*/false);
      Value any = compare(g, tg::CompareDirection::GT, written,
                          g.splat(RankedTensorType::get({rows}, i64), 0.0));
      result =
          select(g, g.broadcastTo(g.reshape(any, {rows, 1}), {rows, width}),
                 sum, table);
    }
  }
  return g.reshape(result, shape);
}

/// `table` ([R, rest...]) with the rows of `updates` ([N, rest...]) written
/// at rows `ids` ([N], i64) by `reduction` (none: replaced; add, mul, max,
/// min: combined with what is there, in the updates' order).
FailureOr<Value> onnx_import::scatterRows(Importer &g, Value table, Value ids,
                                          Value updates, StringRef reduction) {
  RankedTensorType type = Importer::getType(table);
  Type elementType = type.getElementType();
  int64_t rows = type.getDimSize(0);
  int64_t width = product(type.getShape().drop_front());
  int64_t count = Importer::getType(ids).getDimSize(0);
  Value flatTable = g.reshape(table, {rows, width});
  Value flatUpdates = g.reshape(updates, {count, width});
  auto combine = [&](Value current, Value update) -> Value {
    if (reduction == "add")
      return buildBinary<tg::AddOp>(g, current, update);
    if (reduction == "mul")
      return buildBinary<tg::MulOp>(g, current, update);
    if (reduction == "max")
      return buildBinary<tg::MaxOp>(g, current, update);
    if (reduction == "min")
      return buildBinary<tg::MinOp>(g, current, update);
    return update;
  };
  auto i1 = g.builder.getI1Type();
  const Tensor *known = g.getConstant(ids);
  // Each round of writes to the rows is a gather of the step with a table
  // of the rows as constants: more than 64 rounds, or tables of more than
  // 2^24 entries, take the scatter-add below, where it can.
  if (known) {
    llvm::DenseMap<int64_t, int64_t> writes;
    int64_t most = 0;
    for (int64_t id : known->ints())
      most = std::max(most, ++writes[id]);
    if (most > 64 || rows * most > (int64_t(1) << 24)) {
      if (reduction != "none" && reduction != "add")
        return (void)g.fail("writing " + llvm::Twine(rows) + " rows up to " +
                            llvm::Twine(most) + " times with reduction '" +
                            reduction + "' (at most 64 times, 2^24 in all)"),
               failure();
      known = nullptr;
    }
  }
  if (known) {
    // Rows known at import: the k-th writes of every row are one gather of
    // the updates, combined in turn (exact, any element type).
    std::vector<SmallVector<int64_t>> writers(rows);
    size_t depth = 0;
    for (int64_t n = 0; n < count; ++n) {
      SmallVector<int64_t> &row = writers[known->ints()[n]];
      row.push_back(n);
      depth = std::max(depth, row.size());
    }
    Value result = flatTable;
    for (size_t k = 0; k < depth; ++k) {
      SmallVector<int64_t> source(rows, 0);
      SmallVector<double> hit(rows, 0.0);
      for (int64_t r = 0; r < rows; ++r)
        if (k < writers[r].size()) {
          source[r] = writers[r][k];
          hit[r] = 1.0;
        }
      Value gathered = g.takeRows(
          flatUpdates,
          g.constantInts(
              source, RankedTensorType::get({rows}, g.builder.getI64Type())));
      Value mask = g.broadcastTo(
          g.constant(RankedTensorType::get({rows, 1}, i1), hit), {rows, width});
      result = select(g, mask, combine(result, gathered), result);
    }
    return g.reshape(result, type.getShape());
  }
  // Rows computed at run time: a scatter-add (tg.embedding_grad, which
  // accumulates in f32: one write of an f32, f16, bf16 or bool is exact).
  bool isMask = elementType.isInteger(1);
  bool scatterAdds = isMask || elementType.isF32() || elementType.isF16() ||
                     elementType.isBF16();
  if (!scatterAdds || (reduction != "none" && reduction != "add"))
    return scatterRowsOneHot(g, flatTable, ids, flatUpdates, reduction,
                             type.getShape());
  Type computeType = isMask ? g.builder.getF32Type() : elementType;
  RankedTensorType flatType = RankedTensorType::get({rows, width}, computeType);
  Value current = g.convert(flatTable, computeType);
  Value scattered = g.create<tg::EmbeddingGradOp>(
      flatType, g.convert(flatUpdates, computeType), ids);
  Value result;
  if (reduction == "add") {
    result = buildBinary<tg::AddOp>(g, current, scattered);
  } else {
    Value hits = g.create<tg::EmbeddingGradOp>(
        flatType.clone({rows, 1}),
        g.splat(RankedTensorType::get({count, 1}, computeType), 1.0), ids);
    Value mask = g.broadcastTo(compare(g, tg::CompareDirection::GT, hits,
                                       g.splat(Importer::getType(hits), 0.0)),
                               {rows, width});
    result = select(g, mask, scattered, current);
  }
  return g.reshape(g.convert(result, elementType), type.getShape());
}

/// scatterRows of the rows `valid` (i1, [N]) marks, the hits of a dense
/// NonZero: the others add nothing (or combine the reduction's neutral
/// element); without a reduction, the rows no hit wrote keep the table.
static FailureOr<Value> scatterHitRows(Importer &g, Value table, Value ids,
                                       Value updates, Value valid,
                                       StringRef reduction) {
  RankedTensorType updateType = Importer::getType(updates);
  double neutral = getNeutralElement(reduction, updateType.getElementType());
  SmallVector<int64_t> validShape(updateType.getRank(), 1);
  validShape[0] = updateType.getDimSize(0);
  Value masked = select(
      g, g.broadcastTo(g.reshape(valid, validShape), updateType.getShape()),
      updates, g.splat(updateType, neutral));
  if (reduction != "none")
    return scatterRows(g, table, ids, masked, reduction);
  RankedTensorType tableType = Importer::getType(table);
  ASSIGN_OR_FAIL(written,
                 scatterRows(g, g.splat(tableType, 0.0), ids, masked, "add"));
  const Tensor *known = g.getConstant(table);
  if (known && llvm::all_of(llvm::seq<int64_t>(0, known->getNumElements()),
                            [&](int64_t i) {
                              return known->isIntStorage()
                                         ? known->ints()[i] == 0
                                         : known->getAsDouble(i) == 0.0;
                            }))
    return written;
  // Which rows a hit wrote: a count per row.
  auto f32 = g.builder.getF32Type();
  int64_t rows = tableType.getDimSize(0),
          count = Importer::getType(ids).getDimSize(0);
  RankedTensorType countType = RankedTensorType::get({rows, 1}, f32);
  ASSIGN_OR_FAIL(hits, scatterRows(g, g.splat(countType, 0.0), ids,
                                   g.reshape(g.convert(valid, f32), {count, 1}),
                                   "add"));
  SmallVector<int64_t> wroteShape(tableType.getRank(), 1);
  wroteShape[0] = rows;
  Value wrote = g.broadcastTo(g.reshape(compare(g, tg::CompareDirection::GT,
                                                hits, g.splat(countType, 0.0)),
                                        wroteShape),
                              tableType.getShape());
  return select(g, wrote, written, table);
}

/// The reduction of a Scatter* node (none before opset 16).
static std::string getScatterReduction(Importer &g) {
  if (g.opset < 16)
    return "none";
  SmallVector<StringRef> allowed = {"none", "add", "mul"};
  if (g.opset >= 18)
    allowed.append({"max", "min"});
  return g.getString("reduction", "none", allowed);
}

/// Data, indices and updates of a Scatter* node, the updates of data's
/// element type and of `updatesShape` (checked by the caller).
static LogicalResult checkUpdates(Importer &g, Value data, Value updates,
                                  ArrayRef<int64_t> expected) {
  RankedTensorType type = Importer::getType(updates);
  if (type.getElementType() != Importer::getType(data).getElementType())
    return g.fail("updates have another element type than data");
  if (type.getShape() != expected) {
    g.emitNodeError() << "updates have shape " << type
                      << "; the indices address ["
                      << llvm::make_range(expected.begin(), expected.end())
                      << "]";
    return failure();
  }
  return success();
}

LogicalResult onnx_import::convertScatterND(Importer &g) {
  ASSIGN_OR_FAIL(data, g.requireInput(0));
  ASSIGN_OR_FAIL(indices, requireIndices(g, 1));
  ASSIGN_OR_FAIL(updates, g.requireInput(2));
  std::string reduction = getScatterReduction(g);
  ArrayRef<int64_t> dataShape = Importer::getType(data).getShape();
  ASSIGN_OR_FAIL(rows, getNDRows(g, dataShape, indices, 0));
  if (failed(checkUpdates(g, data, updates, rows.gathered)) || g.hadError())
    return failure();
  SmallVector<int64_t> updateRows(rows.table);
  updateRows.front() = Importer::getType(rows.ids).getDimSize(0);
  ASSIGN_OR_FAIL(hit, getScatterHitMask(g, indices, updates, std::nullopt));
  Value table = g.reshape(data, rows.table);
  Value rowUpdates = g.reshape(updates, updateRows);
  ASSIGN_OR_FAIL(result,
                 hit ? scatterHitRows(g, table, rows.ids, rowUpdates,
                                      g.reshape(hit, {updateRows.front()}),
                                      reduction)
                     : scatterRows(g, table, rows.ids, rowUpdates, reduction));
  g.setOutput(0, g.reshape(result, dataShape));
  return success();
}

// ScatterElements (and Scatter, its name before opset 11).
LogicalResult onnx_import::convertScatterElements(Importer &g) {
  ASSIGN_OR_FAIL(data, g.requireInput(0));
  ASSIGN_OR_FAIL(indices, requireIndices(g, 1));
  ASSIGN_OR_FAIL(updates, g.requireInput(2));
  std::string reduction =
      g.getNode().op_type() == "Scatter" ? "none" : getScatterReduction(g);
  ArrayRef<int64_t> dataShape = Importer::getType(data).getShape();
  ASSIGN_OR_FAIL(ids,
                 getElementIds(g, dataShape, indices, g.getNode().op_type()));
  ArrayRef<int64_t> indexShape = Importer::getType(indices).getShape();
  if (failed(checkUpdates(g, data, updates, indexShape)) || g.hadError())
    return failure();
  int64_t count = product(indexShape);
  Value table = g.reshape(data, {product(dataShape), 1});
  Value flatIds = g.reshape(ids, {count});
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(g.getInt("axis", 0), dataShape.size()));
  ASSIGN_OR_FAIL(hit, getScatterHitMask(g, indices, updates, axis));
  Value flatUpdates = g.reshape(updates, {count, 1});
  ASSIGN_OR_FAIL(result,
                 hit ? scatterHitRows(g, table, flatIds, flatUpdates,
                                      g.reshape(hit, {count}), reduction)
                     : scatterRows(g, table, flatIds, flatUpdates, reduction));
  g.setOutput(0, g.reshape(result, dataShape));
  return success();
}

// ReverseSequence-10: along time_axis, each batch entry's first
// sequence_lens[b] elements reversed, the rest kept: a tg.embedding of the
// [time * batch] rows at ids computed from the lengths (constants fold;
// lengths computed at run time are ids of the step).
LogicalResult onnx_import::convertReverseSequence(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(lengths, requireIndices(g, 1));
  RankedTensorType type = Importer::getType(x);
  int64_t rank = type.getRank();
  if (rank < 2)
    return g.fail("input must have rank >= 2");
  int64_t timeAxis = g.getInt("time_axis", 0),
          batchAxis = g.getInt("batch_axis", 1);
  if (!((timeAxis == 0 && batchAxis == 1) || (timeAxis == 1 && batchAxis == 0)))
    return g.fail("time_axis and batch_axis must be 0 and 1, or 1 and 0");
  int64_t steps = type.getDimSize(timeAxis), batch = type.getDimSize(batchAxis);
  if (Importer::getType(lengths).getShape() != ArrayRef<int64_t>{batch})
    return g.fail("sequence_lens must hold one length per batch entry (" +
                  llvm::Twine(batch) + ")");
  // The time and batch positions are constant tables of the step.
  if (span({steps, batch}) > (int64_t(1) << 24))
    return g.fail("time x batch (" + llvm::Twine(span({steps, batch})) +
                  ") is above 2^24 positions");
  if (const Tensor *known = g.getConstant(lengths))
    for (int64_t length : known->ints())
      if (length < 0 || length > steps)
        return g.fail("a sequence length (" + llvm::Twine(length) +
                      ") is outside [0, " + llvm::Twine(steps) + "]");
  // [time, batch, rest...] as rows.
  SmallVector<int64_t> perm{timeAxis, batchAxis};
  for (int64_t d = 2; d < rank; ++d)
    perm.push_back(d);
  Value timeFirst = g.transpose(x, perm);
  SmallVector<int64_t> rows{steps * batch};
  llvm::append_range(rows, type.getShape().drop_front(2));
  auto i64 = g.builder.getI64Type();
  RankedTensorType idType = RankedTensorType::get({steps, batch}, i64);
  SmallVector<double> positions, columns;
  for (int64_t t = 0; t < steps; ++t)
    for (int64_t b = 0; b < batch; ++b) {
      positions.push_back(double(t));
      columns.push_back(double(b));
    }
  Value t = g.constant(idType, positions);
  Value length =
      g.create<tg::BroadcastInDimOp>(idType, lengths, ArrayRef<int64_t>{1});
  Value reversed = buildBinary<tg::SubOp>(
      g, buildBinary<tg::SubOp>(g, length, g.splat(idType, 1.0)), t);
  Value source =
      select(g, compare(g, tg::CompareDirection::LT, t, length), reversed, t);
  Value ids = buildBinary<tg::AddOp>(
      g, buildBinary<tg::MulOp>(g, source, g.splat(idType, double(batch))),
      g.constant(idType, columns));
  Value gathered =
      g.takeRows(g.reshape(timeFirst, rows), g.reshape(ids, {steps * batch}));
  SmallVector<int64_t> timeFirstShape(Importer::getType(timeFirst).getShape());
  g.setOutput(0, g.transpose(g.reshape(gathered, timeFirstShape), perm));
  return success();
}

//===----------------------------------------------------------------------===//
// Tile, TopK, IsNaN
//===----------------------------------------------------------------------===//

// CenterCropPad-18: each of `axes` (all by default) cropped or zero-padded
// to its size in `shape` (known at import), centred: a crop starts at
// floor((size - target) / 2), a pad puts floor((target - size) / 2) zeros
// before and the rest after.
LogicalResult onnx_import::convertCenterCropPad(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(targets, g.requireConstantInts(1, "shape"));
  RankedTensorType type = Importer::getType(x);
  int64_t rank = type.getRank();
  SmallVector<int64_t> axes;
  if (std::optional<SmallVector<int64_t>> given = g.getInts("axes")) {
    for (int64_t axis : *given) {
      ASSIGN_OR_FAIL(normalized, g.normalizeAxis(axis, rank));
      if (llvm::is_contained(axes, normalized))
        return g.fail("axis " + llvm::Twine(axis) + " is repeated");
      axes.push_back(normalized);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (targets.size() != axes.size())
    return g.fail("shape has " + llvm::Twine(targets.size()) +
                  " elements for " + llvm::Twine(axes.size()) + " axes");
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> starts(rank, 0), limits(shape), strides(rank, 1);
  SmallVector<int64_t> low(rank, 0), high(rank, 0), interior(rank, 0);
  for (auto [axis, target] : llvm::zip(axes, targets)) {
    int64_t size = shape[axis];
    if (target < 0 || target > kMaxImportElements)
      return g.fail("shape's size " + llvm::Twine(target) + " for axis " +
                    llvm::Twine(axis) + " is out of range");
    if (target < size) {
      starts[axis] = (size - target) / 2;
      limits[axis] = starts[axis] + target;
    } else {
      low[axis] = (target - size) / 2;
      high[axis] = target - size - low[axis];
    }
  }
  SmallVector<int64_t> result(shape);
  for (auto [axis, target] : llvm::zip(axes, targets))
    result[axis] = target;
  if (span(result) > kMaxImportElements)
    return g.fail("the result would have more than 2^31 elements");
  Value cropped = g.slice(x, starts, limits, strides);
  g.setOutput(0, g.create<tg::PadOp>(cropped, low, high, interior));
  return success();
}

LogicalResult onnx_import::convertTile(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(repeats, g.requireConstantInts(1, "repeats"));
  RankedTensorType type = Importer::getType(x);
  if (int64_t(repeats.size()) != type.getRank())
    return g.fail("repeats has " + llvm::Twine(repeats.size()) +
                  " values for rank " + llvm::Twine(type.getRank()));
  // [d0, d1...] broadcast to [r0, d0, r1, d1...], then merged pairwise.
  SmallVector<int64_t> spread, dims, result;
  for (auto [d, repeat] : llvm::enumerate(repeats)) {
    if (repeat < 0)
      return g.fail("repeats has a negative value");
    spread.push_back(repeat);
    spread.push_back(type.getDimSize(d));
    dims.push_back(2 * d + 1);
    std::optional<int64_t> size = llvm::checkedMul(repeat, type.getDimSize(d));
    if (!size)
      return g.fail("the tiled tensor is too large");
    result.push_back(*size);
  }
  if (span(result) > kMaxImportElements)
    return g.fail("the tiled tensor is too large");
  if (llvm::all_of(repeats, [](int64_t r) { return r == 1; })) {
    g.setOutput(0, x);
    return success();
  }
  Value tiled = g.create<tg::BroadcastInDimOp>(type.clone(spread), x, dims);
  g.setOutput(0, g.reshape(tiled, result));
  return success();
}

LogicalResult onnx_import::convertTopK(Importer &g) {
  ASSIGN_OR_FAIL(x, requireSortable(g, "TopK"));
  RankedTensorType type = Importer::getType(x);
  int64_t rank = type.getRank();
  int64_t k;
  if (g.opset < 10) {
    ASSIGN_OR_FAIL(kAttribute, g.requireInt("k"));
    k = kAttribute;
  } else {
    ASSIGN_OR_FAIL(kValue, g.requireConstantInts(1, "K"));
    if (kValue.size() != 1)
      return g.fail("K must hold one value");
    k = kValue.front();
  }
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(g.getInt("axis", -1), rank));
  if (k < 0 || k > type.getDimSize(axis))
    return g.fail("k = " + llvm::Twine(k) + " is out of range [0, " +
                  llvm::Twine(type.getDimSize(axis)) + "]");
  // `sorted = 0` leaves the order unspecified: sorted is one such order.
  bool smallest = g.opset >= 11 && !g.getBool("largest", true);
  auto [perm, inverse] = moveAxisLast(rank, axis);
  Value moved = g.transpose(x, perm);
  SmallVector<Value> results =
      g.createResults<tg::TopKOp>(moved, uint64_t(k), smallest);
  if (g.hadError())
    return failure();
  g.setOutput(0, g.transpose(results[0], inverse));
  if (g.hasOutput(1))
    g.setOutput(1, g.transpose(results[1], inverse));
  return success();
}

/// The position of the largest (`smallest`: the smallest) element of each
/// row of `x` along `axis`, the first of equal ones (i64; `axis` kept with
/// size 1): TopK with k = 1.
static Value getArgExtreme(Importer &g, Value x, int64_t axis, bool smallest) {
  auto [perm, inverse] = moveAxisLast(Importer::getType(x).getRank(), axis);
  SmallVector<Value> results =
      g.createResults<tg::TopKOp>(g.transpose(x, perm), uint64_t(1), smallest);
  if (g.hadError())
    return {};
  return g.transpose(results[1], inverse);
}

// ArgMax and ArgMin: the first position of an extreme, or with
// select_last_index (opset 12) the last: n - 1 minus the first in the row
// reversed.
LogicalResult onnx_import::convertArgExtreme(Importer &g) {
  bool smallest = g.getNode().op_type() == "ArgMin";
  ASSIGN_OR_FAIL(x, requireSortable(g, smallest ? "ArgMin" : "ArgMax"));
  RankedTensorType type = Importer::getType(x);
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(g.getInt("axis", 0), type.getRank()));
  int64_t size = type.getDimSize(axis);
  if (size == 0)
    return g.fail("the reduced dimension is empty");
  bool last = g.getBool("select_last_index", false);
  if (last && failed(g.checkIndexLength(size, "the reduced dimension")))
    return failure();
  if (last)
    x = g.takeAlongAxis(
        x, axis, llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, size))));
  Value indices = getArgExtreme(g, x, axis, smallest);
  if (!indices)
    return failure();
  if (last) {
    RankedTensorType indicesType = Importer::getType(indices);
    indices =
        buildBinary<tg::SubOp>(g, g.splat(indicesType, size - 1.0), indices);
  }
  if (!g.getBool("keepdims", true)) {
    SmallVector<int64_t> shape(type.getShape());
    shape.erase(shape.begin() + axis);
    indices = g.reshape(indices, shape);
  }
  g.setOutput(0, indices);
  return success();
}

/// 0, 1, ..., size - 1 (i64) along dimension `axis` of a tensor of rank
/// `rank`, of size 1 in the others.
static Value getPositions(Importer &g, int64_t size, int64_t axis,
                          int64_t rank) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = size;
  return g.reshape(
      g.constantInts(llvm::to_vector(llvm::seq<int64_t>(0, size)),
                     RankedTensorType::get({size}, g.builder.getI64Type())),
      shape);
}

// OneHot-9/11: `on` where the position along the new `axis` equals the
// index (negative indices count from `depth`), `off` elsewhere; `depth`
// must be known at import.
LogicalResult onnx_import::convertOneHot(Importer &g) {
  ASSIGN_OR_FAIL(indices, g.requireInput(0));
  ASSIGN_OR_FAIL(values, g.requireInput(2));
  ASSIGN_OR_FAIL(depthValue, g.requireConstantScalar(1, "depth"));
  if (isBool(indices))
    return g.fail("indices must be numbers");
  if (!(depthValue >= 1 && depthValue <= double(kMaxImportElements)))
    return g.fail("depth must be a positive size, got " +
                  std::to_string(depthValue));
  auto depth = int64_t(depthValue);
  if (failed(g.checkIndexLength(depth, "depth")))
    return failure();
  RankedTensorType valuesType = Importer::getType(values);
  if (valuesType.getNumElements() != 2)
    return g.fail("values must hold two elements, [off, on]");
  RankedTensorType indicesType = Importer::getType(indices);
  int64_t rank = indicesType.getRank() + 1;
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(g.getInt("axis", -1), rank));
  SmallVector<int64_t> shape(indicesType.getShape());
  shape.insert(shape.begin() + axis, depth);
  if (span(shape) > kMaxImportElements)
    return g.fail("the one-hot tensor is too large");
  // Indices as i64 (float ones truncated, as the reference casts them),
  // negative ones wrapped, the new axis inserted.
  Type i64 = g.builder.getI64Type();
  Value ids = g.convert(indices, i64);
  RankedTensorType idsType = Importer::getType(ids);
  Value negative =
      compare(g, tg::CompareDirection::LT, ids, g.splat(idsType, 0.0));
  ids = select(g, negative,
               buildBinary<tg::AddOp>(g, ids, g.splat(idsType, double(depth))),
               ids);
  SmallVector<int64_t> expanded(indicesType.getShape());
  expanded.insert(expanded.begin() + axis, 1);
  Value hit = compare(g, tg::CompareDirection::EQ,
                      g.broadcastTo(g.reshape(ids, expanded), shape),
                      g.broadcastTo(getPositions(g, depth, axis, rank), shape));
  Value flat = g.reshape(values, {2});
  auto pick = [&](int64_t i) {
    return g.broadcastTo(g.reshape(g.slice(flat, {i}, {i + 1}, {1}), {}),
                         shape);
  };
  g.setOutput(0, select(g, hit, pick(1), pick(0)));
  return success();
}

// EyeLike-9: ones on the k-th diagonal of a matrix of the input's shape, in
// `dtype` (default: the input's element type).
LogicalResult onnx_import::convertEyeLike(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  RankedTensorType type = Importer::getType(x);
  if (type.getRank() != 2)
    return g.fail("expects a matrix");
  Type elementType = type.getElementType();
  if (std::optional<int64_t> dtype = g.getOptionalInt("dtype")) {
    elementType = getElementType(*g.builder.getContext(), int32_t(*dtype));
    if (!elementType)
      return g.fail("dtype " + llvm::Twine(*dtype) + " has no tg equivalent");
  }
  int64_t k = g.getInt("k", 0);
  ArrayRef<int64_t> shape = type.getShape();
  if (failed(g.checkIndexLength(std::max(shape[0], shape[1]), "a dimension")))
    return failure();
  // column - row == k.
  Value diagonal = buildBinary<tg::SubOp>(
      g, g.broadcastTo(getPositions(g, shape[1], 1, 2), shape),
      g.broadcastTo(getPositions(g, shape[0], 0, 2), shape));
  Value hit = compare(g, tg::CompareDirection::EQ, diagonal,
                      g.splat(Importer::getType(diagonal), double(k)));
  RankedTensorType resultType = type.clone(elementType);
  g.setOutput(
      0, select(g, hit, g.splat(resultType, 1.0), g.splat(resultType, 0.0)));
  return success();
}

Value onnx_import::buildHardmax(Importer &g, Value x, int64_t axis) {
  RankedTensorType type = Importer::getType(x);
  int64_t size = type.getDimSize(axis);
  if (size == 0)
    return x;
  if (failed(g.checkIndexLength(size, "the axis")))
    return {};
  Value indices = getArgExtreme(g, x, axis, /*smallest=*/false);
  if (!indices)
    return {};
  // Each position compared with its row's index.
  Value hit = compare(g, tg::CompareDirection::EQ,
                      g.broadcastTo(indices, type.getShape()),
                      g.broadcastTo(getPositions(g, size, axis, type.getRank()),
                                    type.getShape()));
  return select(g, hit, g.splat(type, 1.0), g.splat(type, 0.0));
}

LogicalResult onnx_import::convertIsNaN(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  if (!isFloat(x))
    return g.fail("IsNaN expects a float tensor");
  // NaN is the only value unequal to itself.
  g.setOutput(0, compare(g, tg::CompareDirection::NE, x, x));
  return success();
}

//===----------------------------------------------------------------------===//
// Outputs whose shape depends on values
//===----------------------------------------------------------------------===//
//
// tg's shapes are static, so what decides these outputs' shapes must be
// computable at import: Compress's condition (the data may be computed at
// run time, and is differentiable), NonZero's and Unique's input.

LogicalResult onnx_import::convertCompress(Importer &g) {
  ASSIGN_OR_FAIL(data, g.requireInput(0));
  ASSIGN_OR_FAIL(conditionValue, g.requireInput(1));
  if (!isBool(conditionValue) ||
      Importer::getType(conditionValue).getRank() != 1) {
    g.emitNodeError() << "the condition must be a 1-D bool tensor, got "
                      << Importer::getType(conditionValue);
    return failure();
  }
  const Tensor *condition = g.requireConstant(1, "condition");
  if (!condition)
    return failure();
  // Without an axis, the elements of the flattened input.
  std::optional<int64_t> axisAttribute = g.getOptionalInt("axis");
  if (g.hadError())
    return failure();
  RankedTensorType type = Importer::getType(data);
  int64_t axis = 0;
  if (axisAttribute) {
    ASSIGN_OR_FAIL(normalized, g.normalizeAxis(*axisAttribute, type.getRank()));
    axis = normalized;
  } else {
    data = g.reshape(data, {type.getNumElements()});
  }
  int64_t size = Importer::getType(data).getDimSize(axis);
  // A shorter condition discards the slices past its end.
  if (condition->getNumElements() > size)
    return g.fail("the condition has " +
                  llvm::Twine(condition->getNumElements()) +
                  " entries, more than the " + llvm::Twine(size) +
                  " slices along the axis");
  SmallVector<int64_t> kept;
  for (auto [index, value] : llvm::enumerate(condition->ints()))
    if (value)
      kept.push_back(index);
  Value indices =
      g.constantInts(kept, RankedTensorType::get({int64_t(kept.size())},
                                                 g.builder.getI64Type()));
  ASSIGN_OR_FAIL(gathered, gatherAxis(g, data, indices, axis));
  g.setOutput(0, gathered);
  return success();
}

LogicalResult onnx_import::convertNonZero(Importer &g) {
  ASSIGN_OR_FAIL(input, g.requireInput(0));
  const Tensor *x = g.getConstant(input);
  if (!x)
    return convertNonZeroDensely(g, input);
  // numpy's nonzero, which treats a scalar as a 1-D tensor of one element.
  SmallVector<int64_t> shape(x->getShape());
  if (shape.empty())
    shape.push_back(1);
  SmallVector<int64_t> hits;
  for (int64_t i = 0; i < x->getNumElements(); ++i)
    if (x->isIntStorage() ? x->ints()[i] != 0 : x->getAsDouble(i) != 0.0)
      hits.push_back(i);
  // [rank, hits]: row d holds the hits' coordinates along dimension d.
  int64_t count = hits.size(), rank = shape.size();
  if (failed(g.checkIndexLength(product({rank, count}), "the output")))
    return failure();
  SmallVector<int64_t> coordinates(rank * count);
  for (auto [column, flat] : llvm::enumerate(hits))
    for (int64_t d = rank - 1; d >= 0; --d) {
      coordinates[d * count + column] = flat % shape[d];
      flat /= shape[d];
    }
  g.setOutput(0, g.constantInts(coordinates,
                                RankedTensorType::get({rank, count},
                                                      g.builder.getI64Type())));
  return success();
}

namespace {
/// The slices of a tensor along an axis, compared as numpy.unique does:
/// lexicographically over each slice's elements in row-major order (NaN
/// equal to NaN and after every number, as numpy's equal_nan).
struct Slices {
  const Tensor &tensor;
  int64_t count, outer, inner;

  int64_t element(int64_t slice, int64_t k) const {
    return (k / inner * count + slice) * inner + k % inner;
  }
  int compareElements(int64_t a, int64_t b) const {
    if (tensor.isIntStorage()) {
      int64_t x = tensor.ints()[a], y = tensor.ints()[b];
      return x < y ? -1 : x > y ? 1 : 0;
    }
    double x = tensor.getAsDouble(a), y = tensor.getAsDouble(b);
    if (std::isnan(x) || std::isnan(y))
      return std::isnan(x) - std::isnan(y);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  int compare(int64_t a, int64_t b) const {
    for (int64_t k = 0; k < outer * inner; ++k)
      if (int c = compareElements(element(a, k), element(b, k)))
        return c;
    return 0;
  }
};
} // namespace

LogicalResult onnx_import::convertUnique(Importer &g) {
  const Tensor *x = g.requireConstant(0, "X");
  if (!x)
    return failure();
  std::optional<int64_t> axisAttribute = g.getOptionalInt("axis");
  bool sorted = g.getBool("sorted", true);
  if (g.hadError())
    return failure();
  // Without an axis, the elements of the flattened input.
  SmallVector<int64_t> shape(x->getShape());
  int64_t axis = 0;
  if (axisAttribute) {
    if (shape.empty())
      return g.fail("cannot take the unique slices of a scalar");
    ASSIGN_OR_FAIL(normalized, g.normalizeAxis(*axisAttribute, shape.size()));
    axis = normalized;
  } else {
    shape = {x->getNumElements()};
  }
  Slices slices{*x, shape[axis], product(ArrayRef(shape).take_front(axis)),
                product(ArrayRef(shape).drop_front(axis + 1))};
  // The slices in order, equal ones by first occurrence (a stable sort).
  SmallVector<int64_t> order(slices.count);
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(
      order, [&](int64_t a, int64_t b) { return slices.compare(a, b) < 0; });
  // Each distinct slice's first occurrence, and which one each slice is.
  SmallVector<int64_t> firsts, counts, inverse(slices.count);
  for (int64_t position : order) {
    if (firsts.empty() || slices.compare(firsts.back(), position) != 0) {
      firsts.push_back(position);
      counts.push_back(0);
    }
    inverse[position] = firsts.size() - 1;
    ++counts.back();
  }
  // sorted = 0: in order of first occurrence.
  if (!sorted) {
    SmallVector<int64_t> byOccurrence(firsts.size());
    std::iota(byOccurrence.begin(), byOccurrence.end(), 0);
    llvm::sort(byOccurrence,
               [&](int64_t a, int64_t b) { return firsts[a] < firsts[b]; });
    SmallVector<int64_t> rank(firsts.size()), newFirsts, newCounts;
    for (auto [newIndex, old] : llvm::enumerate(byOccurrence)) {
      rank[old] = newIndex;
      newFirsts.push_back(firsts[old]);
      newCounts.push_back(counts[old]);
    }
    for (int64_t &index : inverse)
      index = rank[index];
    firsts = std::move(newFirsts);
    counts = std::move(newCounts);
  }
  // Y: the distinct slices.
  int64_t distinct = firsts.size();
  SmallVector<int64_t> yShape(shape);
  yShape[axis] = distinct;
  Tensor y(x->getType().clone(yShape), x->getStorage());
  Slices ySlices{y, distinct, slices.outer, slices.inner};
  for (auto [slice, first] : llvm::enumerate(firsts))
    for (int64_t k = 0; k < slices.outer * slices.inner; ++k) {
      int64_t to = ySlices.element(slice, k), from = slices.element(first, k);
      if (x->isIntStorage())
        y.ints()[to] = x->ints()[from];
      else
        y.setAsDouble(to, x->getAsDouble(from));
    }
  g.setOutput(0, g.constant(std::move(y)));
  Type i64 = g.builder.getI64Type();
  auto vector = [&](ArrayRef<int64_t> values) {
    return g.constantInts(values,
                          RankedTensorType::get({int64_t(values.size())}, i64));
  };
  if (g.hasOutput(1))
    g.setOutput(1, vector(firsts));
  if (g.hasOutput(2))
    g.setOutput(2, vector(inverse));
  if (g.hasOutput(3))
    g.setOutput(3, vector(counts));
  return success();
}
