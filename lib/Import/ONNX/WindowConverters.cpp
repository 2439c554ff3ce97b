//===- WindowConverters.cpp - Conv and pooling as gathers and matmuls -----===//
//
// Conv, MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool, with the
// semantics of the ONNX specification (auto_pad, pads, strides, dilations,
// group, ceil_mode, count_include_pad). tg has no convolution op: a window
// op gathers each output position's window (im2col) with a tg.embedding
// over the input's spatial positions as rows, a row of the padding value
// appended for the positions outside, then a matmul with the weights (Conv)
// or a reduction over the window (pooling). Everything is an existing tg
// op, so the result trains (the gather's gradient is tg.embedding_grad),
// fuses, shards and runs on every target; the unfolded windows cost
// memory (the kernel's size times the input), which a dedicated kernel
// would not.
//
//===----------------------------------------------------------------------===//

#include "ConverterUtils.h"
#include "ParameterProvenance.h"

#include "tgc/Eval/Kernels.h"

#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

using Importer = GraphImporter;

/// The most window positions (output positions times kernel offsets) a
/// window op may gather: the position table is a constant of the step
/// (128 MiB of i64 at most; a 7x7 kernel over a 512x512 output needs 12.8M).
constexpr int64_t kMaxWindowPositions = int64_t(1) << 24;

namespace {
/// The windows of a convolution or pooling over spatial sizes `input`.
struct Windows {
  SmallVector<int64_t> input, kernel, strides, dilations, padBegin, padEnd,
      output;

  int64_t getNumOutputs() const { return product(output); }
  int64_t getKernelSize() const { return product(kernel); }
};
} // namespace

/// The windows of the node's `kernel_shape` (or `kernel`), `strides`,
/// `dilations`, `pads` and `auto_pad` over the spatial sizes `input`;
/// `ceilMode` rounds the output sizes up (pooling), the last window still
/// starting inside the input or its begin padding.
static FailureOr<Windows> getWindows(Importer &g, ArrayRef<int64_t> input,
                                     ArrayRef<int64_t> kernel, bool ceilMode) {
  size_t rank = input.size();
  Windows w;
  w.input.assign(input.begin(), input.end());
  w.kernel.assign(kernel.begin(), kernel.end());
  auto ints = [&](StringRef name, int64_t fill,
                  size_t count) -> FailureOr<SmallVector<int64_t>> {
    std::optional<SmallVector<int64_t>> values = g.getInts(name);
    if (!values)
      return SmallVector<int64_t>(count, fill);
    if (values->size() != count)
      return (void)g.fail(name + " must hold " + llvm::Twine(count) +
                          " values"),
             failure();
    return *values;
  };
  ASSIGN_OR_FAIL(strides, ints("strides", 1, rank));
  ASSIGN_OR_FAIL(dilations, ints("dilations", 1, rank));
  ASSIGN_OR_FAIL(pads, ints("pads", 0, 2 * rank));
  w.strides = strides;
  w.dilations = dilations;
  std::string autoPad = g.getString(
      "auto_pad", "NOTSET", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"});
  for (size_t i = 0; i < rank; ++i) {
    int64_t size = input[i], k = kernel[i], s = strides[i], d = dilations[i];
    if (k < 1 || s < 1 || d < 1 || size < 1)
      return (void)g.fail("kernel sizes, strides, dilations and the input's "
                          "spatial sizes must be positive"),
             failure();
    if (k > (int64_t(1) << 20) || d > (int64_t(1) << 20) ||
        s > (int64_t(1) << 30))
      return (void)g.fail("the kernel, stride or dilation is too large"),
             failure();
    int64_t extent = (k - 1) * d + 1;
    int64_t begin = 0, end = 0, out = 0;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      out = (size + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + extent - size);
      begin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    } else {
      if (autoPad == "NOTSET") {
        begin = pads[i];
        end = pads[rank + i];
        if (begin < 0 || end < 0 || begin > (int64_t(1) << 30) ||
            end > (int64_t(1) << 30))
          return (void)g.fail("pads must be non-negative and not too large"),
                 failure();
      }
      int64_t span = size + begin + end - extent;
      if (span < 0)
        return (void)g.fail("the kernel does not fit the padded input"),
               failure();
      out = (ceilMode ? (span + s - 1) / s : span / s) + 1;
      // The last window starts inside the input or its begin padding.
      if (ceilMode && (out - 1) * s >= size + begin)
        --out;
    }
    w.padBegin.push_back(begin);
    w.padEnd.push_back(end);
    w.output.push_back(out);
  }
  if (span(w.output) > kMaxImportElements ||
      span(w.kernel) > kMaxImportElements)
    return (void)g.fail("the windows are too large"), failure();
  return w;
}

/// For each output position and kernel offset (row-major), the flat input
/// position it reads, or `-1` outside the input.
static std::vector<int64_t> getWindowPositions(const Windows &w) {
  size_t rank = w.input.size();
  int64_t outputs = w.getNumOutputs(), kernelSize = w.getKernelSize();
  std::vector<int64_t> positions;
  positions.reserve(outputs * kernelSize);
  SmallVector<int64_t> o(rank, 0), k(rank, 0);
  for (int64_t oi = 0; oi < outputs; ++oi) {
    for (int64_t r = oi, i = rank - 1; i >= 0; --i) {
      o[i] = r % w.output[i];
      r /= w.output[i];
    }
    for (int64_t ki = 0; ki < kernelSize; ++ki) {
      for (int64_t r = ki, i = rank - 1; i >= 0; --i) {
        k[i] = r % w.kernel[i];
        r /= w.kernel[i];
      }
      int64_t flat = 0;
      bool inside = true;
      for (size_t i = 0; i < rank; ++i) {
        int64_t p = o[i] * w.strides[i] + k[i] * w.dilations[i] - w.padBegin[i];
        inside &= p >= 0 && p < w.input[i];
        flat = flat * w.input[i] + p;
      }
      positions.push_back(inside ? flat : -1);
    }
  }
  return positions;
}

/// The windows of `x` ([N, C, D1..Dn]) as [O, K, N, C] (O output positions,
/// K kernel offsets), the positions outside the input holding `fill`.
static FailureOr<Value> unfold(Importer &g, Value x, const Windows &w,
                               double fill) {
  RankedTensorType type = Importer::getType(x);
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  int64_t positions = product(w.input);
  int64_t outputs = w.getNumOutputs(), kernelSize = w.getKernelSize();
  std::optional<int64_t> ids = llvm::checkedMul(outputs, kernelSize);
  std::optional<int64_t> unfolded =
      ids ? llvm::checkedMul(*ids, n * c) : std::nullopt;
  if (!unfolded || *ids > kMaxWindowPositions || *unfolded > kMaxImportElements)
    return (void)g.fail("the unfolded windows (" + llvm::Twine(outputs) +
                        " positions x " + llvm::Twine(kernelSize) +
                        " kernel offsets x " + llvm::Twine(n * c) +
                        " rows) are too large"),
           failure();
  // The spatial positions as rows, then a row of `fill`.
  SmallVector<int64_t> perm;
  for (int64_t d = 2; d < type.getRank(); ++d)
    perm.push_back(d);
  perm.append({0, 1});
  Value rows = g.reshape(g.transpose(x, perm), {positions, n * c});
  Value fillRow = g.splat(type.clone(ArrayRef<int64_t>{1, n * c}), fill);
  Value table = g.create<tg::ConcatOp>(
      type.clone(ArrayRef<int64_t>{positions + 1, n * c}),
      ValueRange{rows, fillRow}, uint64_t(0));
  std::vector<int64_t> windowPositions = getWindowPositions(w);
  for (int64_t &p : windowPositions)
    if (p < 0)
      p = positions;
  Value idTable = g.reshape(
      g.constantInts(windowPositions,
                     RankedTensorType::get({*ids}, g.builder.getI64Type())),
      {outputs, kernelSize});
  Value windows = g.takeRows(table, idTable);
  return g.reshape(windows, {outputs, kernelSize, n, c});
}

/// An [N, C, D1..Dn] float (or, with `allowInteger`, integer) input with
/// n >= 1 spatial dimensions.
static FailureOr<Value> requireImage(Importer &g, unsigned index,
                                     bool allowInteger = false) {
  ASSIGN_OR_FAIL(x, g.requireInput(index));
  RankedTensorType type = Importer::getType(x);
  if (!isFloat(x) &&
      !(allowInteger && isa<IntegerType>(type.getElementType()) &&
        !type.getElementType().isInteger(1)))
    return (void)g.fail(allowInteger ? "expects a float or integer tensor"
                                     : "expects a float tensor"),
           failure();
  if (type.getRank() < 3)
    return (void)g.fail("expects a tensor of rank >= 3 (N, C, D1, ...)"),
           failure();
  if (type.getNumElements() == 0)
    return (void)g.fail("expects a non-empty tensor"), failure();
  return x;
}

/// [O, N, M] (output positions first) as [N, M, O1..On].
static Value outputsLast(Importer &g, Value value, const Windows &w) {
  RankedTensorType type = Importer::getType(value);
  SmallVector<int64_t> shape = {type.getDimSize(1), type.getDimSize(2)};
  llvm::append_range(shape, w.output);
  return g.reshape(g.transpose(value, {1, 2, 0}), shape);
}

/// The convolution of `x` ([N, C, D1..Dn]) with `weight` ([M, C/group,
/// k1..kn]) over windows `w`, plus `bias` ([M]) if given.
static FailureOr<Value> buildConv(Importer &g, Value x, Value weight,
                                  Value bias, const Windows &w, int64_t group) {
  RankedTensorType type = Importer::getType(x);
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  int64_t m = Importer::getType(weight).getDimSize(0);
  ASSIGN_OR_FAIL(windows, unfold(g, x, w, 0.0));
  int64_t outputs = w.getNumOutputs(), kernelSize = w.getKernelSize();
  int64_t cg = c / group, mg = m / group;
  // [O, K, N, G, Cg] -> [G, N, O, Cg, K]: one matrix of windows per group.
  Value split = g.reshape(windows, {outputs, kernelSize, n, group, cg});
  Value patches = g.reshape(g.transpose(split, {3, 2, 0, 4, 1}),
                            {group, n * outputs, cg * kernelSize});
  Value filters = g.reshape(weight, {group, mg, cg * kernelSize});
  Value product = g.create<tg::MatmulOp>(
      type.clone(ArrayRef<int64_t>{group, n * outputs, mg}), patches, filters,
      false, true);
  // [G, N, O, Mg] -> [O, N, M].
  Value byOutput = g.reshape(
      g.transpose(g.reshape(product, {group, n, outputs, mg}), {2, 1, 0, 3}),
      {outputs, n, m});
  Value result = outputsLast(g, byOutput, w);
  if (!bias)
    return result;
  RankedTensorType biasType = Importer::getType(bias);
  if (biasType.getRank() != 1 || biasType.getDimSize(0) != m ||
      biasType.getElementType() != type.getElementType())
    return (void)g.fail("B must be a vector of the " + llvm::Twine(m) +
                        " output channels"),
           failure();
  RankedTensorType resultType = Importer::getType(result);
  SmallVector<int64_t> column(type.getRank() - 1, 1);
  column.front() = m;
  return buildBinary<tg::AddOp>(
      g, result, g.broadcastTo(g.reshape(bias, column), resultType.getShape()));
}

/// Checks the weight of a Conv or ConvTranspose against input type `type`
/// (`channels` the dimension that group divides: X's channels for Conv, W's
/// first for ConvTranspose).
static FailureOr<Value> checkWeight(Importer &g, RankedTensorType type,
                                    Value weight, int64_t group) {
  RankedTensorType weightType = Importer::getType(weight);
  int64_t c = type.getDimSize(1);
  bool transposed = g.getNode().op_type() == "ConvTranspose";
  if (weightType.getRank() != type.getRank() ||
      weightType.getElementType() != type.getElementType() || group < 1 ||
      c % group ||
      (transposed ? weightType.getDimSize(0) != c
                  : weightType.getDimSize(0) % group ||
                        weightType.getDimSize(1) != c / group))
    return (void)g.fail(transposed ? "W must be [C, M/group, k1, ...] of X's "
                                     "element type, group dividing C"
                                   : "W must be [M, C/group, k1, ...] of X's "
                                     "element type, group dividing C and M"),
           failure();
  if (std::optional<SmallVector<int64_t>> given = g.getInts("kernel_shape"))
    if (ArrayRef<int64_t>(*given) != weightType.getShape().drop_front(2))
      return (void)g.fail("kernel_shape differs from W's spatial dimensions"),
             failure();
  return weight;
}

/// The weight of a Conv or ConvTranspose: input 1, checked.
static FailureOr<Value> requireWeight(Importer &g, RankedTensorType type,
                                      int64_t group) {
  ASSIGN_OR_FAIL(weight, g.requireInput(1));
  return checkWeight(g, type, weight, group);
}

FailureOr<Value> onnx_import::convolve(Importer &g, Value x, Value weight,
                                       Value bias) {
  RankedTensorType type = Importer::getType(x);
  if (type.getRank() < 3)
    return (void)g.fail("expects a tensor of rank >= 3 (N, C, D1, ...)"),
           failure();
  if (type.getNumElements() == 0)
    return (void)g.fail("expects a non-empty tensor"), failure();
  int64_t group = g.getInt("group", 1);
  ASSIGN_OR_FAIL(checked, checkWeight(g, type, weight, group));
  ASSIGN_OR_FAIL(w,
                 getWindows(g, type.getShape().drop_front(2),
                            Importer::getType(checked).getShape().drop_front(2),
                            /*ceilMode=*/false));
  return buildConv(g, x, checked, bias, w, group);
}

LogicalResult onnx_import::convertConv(Importer &g) {
  ASSIGN_OR_FAIL(x, requireImage(g, 0));
  ASSIGN_OR_FAIL(weight, g.requireInput(1));
  // For a Conv3d without bias the dynamo exporter writes zeros of shape
  // [M, 2] (torchlib expands 0 to Concat(Shape(W)[0:1], [2])), which ONNX
  // rejects; where its FX node's bias is None, PyTorch adds nothing.
  Value bias = g.input(2);
  if (const Tensor *zeros = bias ? g.getConstant(bias) : nullptr;
      zeros && zeros->getShape().size() == 2 &&
      zeros->getShape()[0] == Importer::getType(weight).getDimSize(0) &&
      hasNoFxConvBias(g.getNode())) {
    bool allZero = true;
    for (int64_t i = 0, e = zeros->getNumElements(); i < e && allZero; ++i)
      allZero = zeros->getAsDouble(i) == 0;
    if (allZero) {
      ExportDeviation followed{
          "conv-zero-bias", getModuleScope(g.getNode()).value_or(""),
          "the dynamo exporter's zero bias of shape [" +
              std::to_string(zeros->getShape()[0]) + ", " +
              std::to_string(zeros->getShape()[1]) +
              "] for a convolution without one (its FX node's bias is "
              "None): no bias added, as in PyTorch"};
      followed.recovered = true;
      g.followedFx.push_back({g.getLoc(), std::move(followed)});
      bias = {};
    }
  }
  ASSIGN_OR_FAIL(result, convolve(g, x, weight, bias));
  g.setOutput(0, result);
  return success();
}

// Col2Im-18 (PyTorch's Fold): input [N, C * prod(block_shape), L], the
// columns of the blocks of an image of `image_shape`, summed back into
// [N, C, image_shape...]. Each block position (k1, k2, ...) takes its slice
// [N, C, L1, L2, ...] of the columns and places it in the padded image by a
// tg.pad (k * dilation before it, stride - 1 between neighbours); the
// placements are added and the padding cropped. Exact sums in the order of
// the block positions; differentiable (its backward is the Im2Col of the
// gradient, through tg.pad's slice).
LogicalResult onnx_import::convertCol2Im(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(image, g.requireConstantInts(1, "image_shape"));
  ASSIGN_OR_FAIL(block, g.requireConstantInts(2, "block_shape"));
  RankedTensorType type = Importer::getType(x);
  int64_t spatial = image.size();
  if (type.getRank() != 3 || spatial < 1 || int64_t(block.size()) != spatial)
    return g.fail("input must be [N, C * prod(block_shape), L] and "
                  "image_shape and block_shape have one length");
  auto ints = [&](StringRef name, int64_t fill) {
    std::optional<SmallVector<int64_t>> values = g.getInts(name);
    return values ? *values : SmallVector<int64_t>(spatial, fill);
  };
  SmallVector<int64_t> strides = ints("strides", 1),
                       dilations = ints("dilations", 1), pads(2 * spatial, 0);
  if (std::optional<SmallVector<int64_t>> given = g.getInts("pads"))
    pads = *given;
  if (int64_t(strides.size()) != spatial ||
      int64_t(dilations.size()) != spatial ||
      int64_t(pads.size()) != 2 * spatial)
    return g.fail("strides, dilations and pads must give each spatial "
                  "dimension");
  constexpr int64_t kLimit = int64_t(1) << 20;
  SmallVector<int64_t> padded, counts;
  int64_t blockSize = 1, columns = 1;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t size = image[i], k = block[i], s = strides[i], d = dilations[i];
    int64_t begin = pads[i], end = pads[spatial + i];
    if (size < 1 || k < 1 || s < 1 || d < 1 || begin < 0 || end < 0 ||
        size > kLimit || k > kLimit || s > kLimit || d > kLimit ||
        begin > kLimit || end > kLimit)
      return g.fail("image_shape, block_shape, strides and dilations must be "
                    "positive, pads non-negative, and none above 2^20");
    int64_t total = size + begin + end, extent = (k - 1) * d + 1;
    if (total < extent)
      return g.fail("a block (" + llvm::Twine(extent) +
                    " with its dilation) is larger than the padded image (" +
                    llvm::Twine(total) + ") along spatial dimension " +
                    llvm::Twine(i));
    padded.push_back(total);
    counts.push_back((total - extent) / s + 1);
    blockSize *= k;
    columns *= counts.back();
    if (blockSize > 4096 || columns > kMaxImportElements)
      return g.fail("more than 4096 block positions or too many blocks");
  }
  int64_t n = type.getDimSize(0);
  if (type.getDimSize(1) % blockSize != 0 || type.getDimSize(2) != columns)
    return g.fail("input is [" + llvm::Twine(n) + ", " +
                  llvm::Twine(type.getDimSize(1)) + ", " +
                  llvm::Twine(type.getDimSize(2)) + "]; blocks of " +
                  llvm::Twine(blockSize) + " elements at " +
                  llvm::Twine(columns) + " positions need [N, C * " +
                  llvm::Twine(blockSize) + ", " + llvm::Twine(columns) + "]");
  int64_t channels = type.getDimSize(1) / blockSize;
  // [N, C, k1, k2, ..., L1, L2, ...].
  SmallVector<int64_t> split = {n, channels};
  llvm::append_range(split, block);
  llvm::append_range(split, counts);
  Value blocks = g.reshape(x, split);
  SmallVector<int64_t> resultShape = {n, channels};
  llvm::append_range(resultShape, padded);
  Value sum;
  SmallVector<int64_t> position(spatial, 0);
  for (int64_t flat = 0; flat < blockSize; ++flat) {
    // The block position of `flat`, row-major.
    for (int64_t i = spatial - 1, rest = flat; i >= 0; --i) {
      position[i] = rest % block[i];
      rest /= block[i];
    }
    SmallVector<int64_t> starts(split.size(), 0), limits(split),
        strides1(split.size(), 1);
    for (int64_t i = 0; i < spatial; ++i) {
      starts[2 + i] = position[i];
      limits[2 + i] = position[i] + 1;
    }
    SmallVector<int64_t> sliceShape = {n, channels};
    llvm::append_range(sliceShape, counts);
    Value columnsAt =
        g.reshape(g.slice(blocks, starts, limits, strides1), sliceShape);
    SmallVector<int64_t> low = {0, 0}, high = {0, 0}, interior = {0, 0};
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t first = position[i] * dilations[i];
      int64_t last = first + (counts[i] - 1) * strides[i];
      low.push_back(first);
      interior.push_back(strides[i] - 1);
      high.push_back(padded[i] - 1 - last);
    }
    Value placed = g.create<tg::PadOp>(type.clone(resultShape), columnsAt, low,
                                       high, interior);
    sum = sum ? buildBinary<tg::AddOp>(g, sum, placed) : placed;
  }
  SmallVector<int64_t> starts = {0, 0}, limits = {n, channels};
  for (int64_t i = 0; i < spatial; ++i) {
    starts.push_back(pads[i]);
    limits.push_back(pads[i] + image[i]);
  }
  g.setOutput(0, g.slice(sum, starts, limits,
                         SmallVector<int64_t>(resultShape.size(), 1)));
  return success();
}

// ConvTranspose: the convolution, with stride 1, of the input spaced by
// `strides - 1` zeros and padded by `(k - 1) * d` less the pads on each side
// (`output_padding` more at the end), with the kernel flipped and its
// channel dimensions swapped within each group.
LogicalResult onnx_import::convertConvTranspose(Importer &g) {
  ASSIGN_OR_FAIL(x, requireImage(g, 0));
  RankedTensorType type = Importer::getType(x);
  int64_t rank = type.getRank(), spatial = rank - 2;
  int64_t group = g.getInt("group", 1);
  ASSIGN_OR_FAIL(weight, requireWeight(g, type, group));
  RankedTensorType weightType = Importer::getType(weight);
  ArrayRef<int64_t> kernel = weightType.getShape().drop_front(2);
  auto ints = [&](StringRef name, int64_t fill) {
    std::optional<SmallVector<int64_t>> values = g.getInts(name);
    return values ? *values : SmallVector<int64_t>(spatial, fill);
  };
  SmallVector<int64_t> strides = ints("strides", 1),
                       dilations = ints("dilations", 1),
                       outputPadding = ints("output_padding", 0),
                       pads(2 * spatial, 0);
  if (std::optional<SmallVector<int64_t>> given = g.getInts("pads"))
    pads = *given;
  std::optional<SmallVector<int64_t>> outputShape = g.getInts("output_shape");
  std::string autoPad = g.getString(
      "auto_pad", "NOTSET", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"});
  if (int64_t(strides.size()) != spatial ||
      int64_t(dilations.size()) != spatial ||
      int64_t(outputPadding.size()) != spatial ||
      int64_t(pads.size()) != 2 * spatial ||
      (outputShape && int64_t(outputShape->size()) != spatial))
    return g.fail("strides, dilations, output_padding, output_shape and pads "
                  "must give each spatial dimension");
  SmallVector<int64_t> low, high;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t size = type.getDimSize(2 + i), s = strides[i], d = dilations[i];
    int64_t k = kernel[i], op = outputPadding[i];
    if (s < 1 || d < 1 || k < 1 || op < 0 || s > (int64_t(1) << 20) ||
        d > (int64_t(1) << 20) || k > (int64_t(1) << 20) ||
        op > (int64_t(1) << 20))
      return g.fail("strides, dilations and the kernel must be positive, "
                    "output_padding non-negative, and none too large");
    int64_t extent = (k - 1) * d + 1;
    int64_t begin = pads[i], end = pads[spatial + i];
    if (outputShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t target = outputShape ? (*outputShape)[i] : size * s;
      if (target < 0 || target > (int64_t(1) << 40))
        return g.fail("output_shape " + llvm::Twine(target) +
                      " is negative or too large");
      // Negative when the output is larger than the natural one; halved
      // rounding down, as ONNX's reference (`//`) does.
      int64_t total = s * (size - 1) + op + extent - target;
      int64_t half = llvm::divideFloorSigned(total, 2);
      bool upper = autoPad == "SAME_UPPER";
      begin = upper ? half : total - half;
      end = upper ? total - half : half;
    } else if (autoPad == "VALID") {
      begin = end = 0;
    }
    // Compared, not std::abs'ed: -INT64_MIN overflows.
    constexpr int64_t kMaxPad = int64_t(1) << 30;
    if (begin < -kMaxPad || begin > kMaxPad || end < -kMaxPad || end > kMaxPad)
      return g.fail("the padding is too large");
    low.push_back((k - 1) * d - begin);
    high.push_back((k - 1) * d - end + op);
  }
  // Spaced and padded (negative paddings crop).
  SmallVector<int64_t> zeros(rank, 0), lowPad(2, 0), highPad(2, 0),
      interior(2, 0), spaced(type.getShape());
  for (int64_t i = 0; i < spatial; ++i) {
    lowPad.push_back(std::max<int64_t>(0, low[i]));
    highPad.push_back(std::max<int64_t>(0, high[i]));
    interior.push_back(strides[i] - 1);
    int64_t size = type.getDimSize(2 + i);
    spaced[2 + i] =
        lowPad.back() + size + (size - 1) * interior.back() + highPad.back();
  }
  if (span(spaced) > kMaxImportElements)
    return g.fail("the spaced input is too large");
  Value padded =
      g.create<tg::PadOp>(type.clone(spaced), x, lowPad, highPad, interior);
  SmallVector<int64_t> starts(rank, 0), limits(spaced);
  for (int64_t i = 0; i < spatial; ++i) {
    starts[2 + i] = std::max<int64_t>(0, -low[i]);
    limits[2 + i] = spaced[2 + i] - std::max<int64_t>(0, -high[i]);
    if (limits[2 + i] <= starts[2 + i])
      return g.fail("the pads leave no output");
  }
  padded = g.slice(padded, starts, limits, SmallVector<int64_t>(rank, 1));
  // W [C, Mg, k...] -> [G, Cg, Mg, k...] -> [G, Mg, Cg, k...] -> [M, Cg,
  // k...], each spatial dimension reversed.
  int64_t c = type.getDimSize(1), mg = weightType.getDimSize(1);
  SmallVector<int64_t> grouped = {group, c / group, mg};
  llvm::append_range(grouped, kernel);
  SmallVector<int64_t> perm = {0, 2, 1};
  for (int64_t i = 0; i < spatial; ++i)
    perm.push_back(3 + i);
  SmallVector<int64_t> filterShape = {group * mg, c / group};
  llvm::append_range(filterShape, kernel);
  Value filters =
      g.reshape(g.transpose(g.reshape(weight, grouped), perm), filterShape);
  for (int64_t i = 0; i < spatial; ++i)
    if (failed(g.checkIndexLength(kernel[i], "a kernel dimension")))
      return failure();
  for (int64_t i = 0; i < spatial; ++i)
    filters = g.takeAlongAxis(
        filters, 2 + i,
        llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, kernel[i]))));
  Windows w;
  RankedTensorType paddedType = Importer::getType(padded);
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t size = paddedType.getDimSize(2 + i);
    int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
    if (size < extent)
      return g.fail("the pads leave no output");
    w.input.push_back(size);
    w.kernel.push_back(kernel[i]);
    w.strides.push_back(1);
    w.dilations.push_back(dilations[i]);
    w.padBegin.push_back(0);
    w.padEnd.push_back(0);
    w.output.push_back(size - extent + 1);
  }
  ASSIGN_OR_FAIL(result, buildConv(g, padded, filters, g.input(2), w, group));
  g.setOutput(0, result);
  return success();
}

/// MaxPool, AveragePool and LpPool (the Lp norm of each window).
/// MaxPool's Indices ([O, N, C], i64): each window's first largest
/// element (tg.top_k with k = 1 over the window, NaN first as in the
/// values), as its flat index in the input ([N, C, D1..Dn] row-major, or
/// with `storage_order` = 1 the spatial dimensions column-major), not
/// counting padding; the window's position is mapped through a constant
/// table of its offsets' input positions.
static FailureOr<Value> buildPoolIndices(Importer &g, Value windows,
                                         const Windows &w, int64_t n,
                                         int64_t c) {
  bool columnMajor = g.getInt("storage_order", 0) != 0;
  // Each plane's base index is a constant table of the step.
  if (span({n, c}) > (int64_t(1) << 24))
    return (void)g.fail("MaxPool's Indices over " + llvm::Twine(span({n, c})) +
                        " planes (at most 2^24)"),
           failure();
  int64_t outputs = w.getNumOutputs(), kernelSize = w.getKernelSize();
  int64_t spatial = product(w.input);
  std::vector<int64_t> positions = getWindowPositions(w);
  if (columnMajor)
    for (int64_t &p : positions) {
      if (p < 0)
        continue;
      // Row-major digits, read back in the reverse order.
      int64_t column = 0;
      for (int64_t r = p, i = 0; i < int64_t(w.input.size()); ++i) {
        int64_t size = w.input[w.input.size() - 1 - i];
        column = column * size + r % size;
        r /= size;
      }
      p = column;
    }
  auto i64 = g.builder.getI64Type();
  // [O, K, N, C] -> [O, N, C, K], the window's offset of its largest.
  Value perWindow = g.transpose(windows, {0, 2, 3, 1});
  SmallVector<Value> topK =
      g.createResults<tg::TopKOp>(perWindow, uint64_t(1), false);
  RankedTensorType idType = RankedTensorType::get({outputs, n, c}, i64);
  Value offset = g.reshape(topK[1], {outputs, n, c});
  SmallVector<double> windowBase;
  for (int64_t o = 0; o < outputs; ++o)
    windowBase.push_back(double(o * kernelSize));
  Value row = buildBinary<tg::AddOp>(
      g, offset,
      g.create<tg::BroadcastInDimOp>(
          idType, g.constant(RankedTensorType::get({outputs}, i64), windowBase),
          ArrayRef<int64_t>{0}));
  Value table = g.constantInts(
      positions, RankedTensorType::get({outputs * kernelSize}, i64));
  Value position = g.reshape(
      g.takeRows(table, g.reshape(row, {outputs * n * c})), {outputs, n, c});
  SmallVector<double> planeBase;
  for (int64_t plane = 0; plane < n * c; ++plane)
    planeBase.push_back(double(plane * spatial));
  Value base = g.create<tg::BroadcastInDimOp>(
      idType, g.constant(RankedTensorType::get({n, c}, i64), planeBase),
      ArrayRef<int64_t>{1, 2});
  return buildBinary<tg::AddOp>(g, position, base);
}

/// The p of LpPool and GlobalLpPool (a float before opset 2, an int
/// after; 2 by default), at least 1.
static FailureOr<double> getLpOrder(Importer &g) {
  double p =
      g.opset < 2 ? double(g.getFloat("p", 2.0f)) : double(g.getInt("p", 2));
  if (!(p >= 1.0 && p <= 64.0))
    return (void)g.fail("p must be in [1, 64]"), failure();
  return p;
}

Value onnx_import::buildLpNorm(Importer &g, Value x, ArrayRef<int64_t> dims,
                               bool keepDims, double p) {
  Composer e{g, Importer::getType(x)};
  Value powered = p == 1.0   ? e.abs(x)
                  : p == 2.0 ? e.mul(x, x)
                             : g.create<tg::PowOp>(e.type, e.abs(x), e.c(p));
  Value sum = g.reduce(tg::ReduceKind::Sum, powered, dims, keepDims);
  if (p == 1.0)
    return sum;
  Composer r{g, Importer::getType(sum)};
  Value zero = r.equal(sum, r.c(0.0));
  Value safe = r.select(zero, r.c(1.0), sum);
  Value root =
      p == 2.0 ? r.sqrt(safe) : g.create<tg::PowOp>(r.type, safe, r.c(1.0 / p));
  return r.select(zero, r.c(0.0), root);
}

LogicalResult onnx_import::convertPool(Importer &g) {
  bool isMax = g.getNode().op_type() == "MaxPool";
  bool isLp = g.getNode().op_type() == "LpPool";
  // MaxPool-12 takes int8 and uint8 images too.
  ASSIGN_OR_FAIL(x, requireImage(g, 0, /*allowInteger=*/isMax));
  RankedTensorType type = Importer::getType(x);
  Type elementType = type.getElementType();
  std::optional<SmallVector<int64_t>> kernel = g.getInts("kernel_shape");
  if (!kernel || int64_t(kernel->size()) != type.getRank() - 2)
    return g.fail("kernel_shape must give each spatial dimension");
  // ceil_mode: MaxPool and AveragePool from opset 10, LpPool from 18.
  bool ceilMode = g.opset >= (isLp ? 18 : 10) && g.getInt("ceil_mode", 0) != 0;
  std::optional<double> order;
  if (isLp) {
    ASSIGN_OR_FAIL(p, getLpOrder(g));
    order = p;
  }
  ASSIGN_OR_FAIL(
      w, getWindows(g, type.getShape().drop_front(2), *kernel, ceilMode));
  // Padding never wins a max: -inf, or the integer type's smallest value.
  double fill = !isMax ? 0.0
                : isa<FloatType>(elementType)
                    ? -std::numeric_limits<double>::infinity()
                    : double(getIntMin(elementType));
  ASSIGN_OR_FAIL(windows, unfold(g, x, w, fill));
  int64_t outputs = w.getNumOutputs();
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  // [O, K, N, C] -> [O, N, C]; LpPool's padding is zeros, which add
  // nothing to the norm.
  if (isLp) {
    g.setOutput(0,
                outputsLast(g, buildLpNorm(g, windows, {1}, false, *order), w));
    return success();
  }
  Value pooled = g.reduce(isMax ? tg::ReduceKind::Max : tg::ReduceKind::Sum,
                          windows, {1}, /*keepDims=*/false);
  if (!isMax) {
    // The divisor of each output: its window's positions inside the input,
    // or inside the padded input with count_include_pad.
    bool includePad = g.getInt("count_include_pad", 0) != 0;
    std::vector<int64_t> positions = getWindowPositions(w);
    std::vector<double> counts(outputs, 0.0);
    int64_t kernelSize = w.getKernelSize();
    size_t rank = w.input.size();
    for (int64_t oi = 0; oi < outputs; ++oi)
      for (int64_t ki = 0; ki < kernelSize; ++ki) {
        if (positions[oi * kernelSize + ki] >= 0) {
          counts[oi] += 1;
          continue;
        }
        if (!includePad)
          continue;
        // Inside the padding (not past it, as a ceil_mode window can be).
        bool padded = true;
        for (int64_t r = oi, rk = ki, i = rank - 1; i >= 0; --i) {
          int64_t o = r % w.output[i], k = rk % w.kernel[i];
          r /= w.output[i];
          rk /= w.kernel[i];
          int64_t p = o * w.strides[i] + k * w.dilations[i] - w.padBegin[i];
          padded &= p >= -w.padBegin[i] && p < w.input[i] + w.padEnd[i];
        }
        counts[oi] += padded;
      }
    SmallVector<double> inverse;
    for (double count : counts)
      inverse.push_back(1.0 / std::max(1.0, count));
    Value divisor = g.constant(
        RankedTensorType::get({outputs, 1, 1}, type.getElementType()), inverse);
    Value scale = g.broadcastTo(divisor, {outputs, n, c});
    pooled = buildBinary<tg::MulOp>(g, pooled, scale);
  }
  g.setOutput(0, outputsLast(g, pooled, w));
  if (isMax && g.hasOutput(1)) {
    ASSIGN_OR_FAIL(indices, buildPoolIndices(g, windows, w, n, c));
    g.setOutput(1, outputsLast(g, indices, w));
  }
  return success();
}

/// GlobalAveragePool, GlobalMaxPool and GlobalLpPool: over every spatial
/// dimension, kept with size 1.
LogicalResult onnx_import::convertGlobalPool(Importer &g) {
  ASSIGN_OR_FAIL(x, requireImage(g, 0));
  RankedTensorType type = Importer::getType(x);
  SmallVector<int64_t> spatial;
  for (int64_t d = 2; d < type.getRank(); ++d)
    spatial.push_back(d);
  StringRef opType = g.getNode().op_type();
  if (opType == "GlobalLpPool") {
    ASSIGN_OR_FAIL(p, getLpOrder(g));
    g.setOutput(0, buildLpNorm(g, x, spatial, /*keepDims=*/true, p));
    return success();
  }
  bool isMax = opType == "GlobalMaxPool";
  g.setOutput(0, g.reduce(isMax ? tg::ReduceKind::Max : tg::ReduceKind::Mean, x,
                          spatial, /*keepDims=*/true));
  return success();
}

// MaxUnpool-9/11: X's values written into zeros of shape
// `(in - 1) * stride + kernel - pads` at the flat positions MaxPool's
// Indices give (a scatter at indices of the step), padded at the end to
// the `output_shape` input when given.
LogicalResult onnx_import::convertMaxUnpool(Importer &g) {
  ASSIGN_OR_FAIL(x, requireImage(g, 0));
  ASSIGN_OR_FAIL(indices, g.requireInput(1));
  RankedTensorType type = Importer::getType(x);
  if (Importer::getType(indices).getShape() != type.getShape() ||
      !isa<IntegerType>(Importer::getType(indices).getElementType()))
    return g.fail("I must be integer indices of X's shape");
  int64_t rank = type.getRank() - 2;
  std::optional<SmallVector<int64_t>> kernel = g.getInts("kernel_shape");
  if (!kernel || int64_t(kernel->size()) != rank)
    return g.fail("kernel_shape must give each spatial dimension");
  SmallVector<int64_t> strides =
      g.getInts("strides").value_or(SmallVector<int64_t>(rank, 1));
  SmallVector<int64_t> pads =
      g.getInts("pads").value_or(SmallVector<int64_t>(2 * rank, 0));
  if (int64_t(strides.size()) != rank || int64_t(pads.size()) != 2 * rank)
    return g.fail("strides and pads must give each spatial dimension");
  // The indices are into the shape a MaxPool of X's windows inverts;
  // `output_shape` pads that at the end.
  SmallVector<int64_t> shape(type.getShape().take_front(2));
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back((type.getDimSize(i + 2) - 1) * strides[i] + (*kernel)[i] -
                    pads[i] - pads[i + rank]);
  SmallVector<int64_t> padded(shape);
  if (g.input(2)) {
    ASSIGN_OR_FAIL(given, g.requireConstantInts(2, "output_shape"));
    if (int64_t(given.size()) != rank + 2 ||
        ArrayRef<int64_t>(given).take_front(2) !=
            ArrayRef<int64_t>(shape).take_front(2))
      return g.fail("output_shape must be [N, C, D1...] of X's N and C");
    for (int64_t i = 2; i < rank + 2; ++i)
      if (given[i] < shape[i])
        return g.fail("output_shape is smaller than the unpooled shape");
    padded = given;
  }
  for (int64_t size : shape)
    if (size < 0)
      return g.fail("the output shape has a negative dimension");
  if (span(padded) > kMaxImportElements)
    return g.fail("the output is too large");
  if (g.hadError())
    return failure();
  int64_t count = type.getNumElements(), total = product(shape);
  Value zeros =
      g.splat(RankedTensorType::get({total, 1}, type.getElementType()), 0.0);
  ASSIGN_OR_FAIL(
      result, scatterRows(g, zeros,
                          g.reshape(g.convert(indices, g.builder.getI64Type()),
                                    {count}),
                          g.reshape(x, {count, 1}), "none"));
  Value unpooled = g.reshape(result, shape);
  if (padded != shape) {
    SmallVector<int64_t> low(rank + 2, 0), high, interior(rank + 2, 0);
    for (int64_t i = 0; i < rank + 2; ++i)
      high.push_back(padded[i] - shape[i]);
    unpooled = g.create<tg::PadOp>(unpooled, low, high, interior);
  }
  g.setOutput(0, unpooled);
  return success();
}
