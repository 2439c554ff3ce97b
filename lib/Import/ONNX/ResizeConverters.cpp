//===- ResizeConverters.cpp - Resize, Upsample, GridSample as gathers -----===//
//
// Resize (opsets 10 to 19: nearest, linear and cubic modes, every
// coordinate transformation, exclude_outside, extrapolation, antialias,
// axes, keep_aspect_ratio_policy) and Upsample, with the semantics of
// ONNX's reference implementation. Interpolation is separable: each resized
// axis in turn gathers, for every output position, its n neighbours along
// the axis (a tg.embedding over the axis's positions, which the importer
// computes with their weights as constants) and sums them weighted. Nearest
// neighbours (and any axis whose weights are all 0 or 1) are the gather
// alone, exact for every element type. Everything is an existing tg op, so
// a resize trains (the gather's gradient is tg.embedding_grad), fuses and
// runs on every target. GridSample samples at coordinates computed at run
// time the same way (the indices and weights are tensors of the step).
//
//===----------------------------------------------------------------------===//

#include "ConverterUtils.h"

#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

using Importer = GraphImporter;

/// The most (output position, neighbour) pairs one axis may gather: the
/// position table is a constant of the step.
constexpr int64_t kMaxResizePositions = int64_t(1) << 24;

namespace {
/// A Resize's attributes, normalized across opsets.
struct ResizeAttributes {
  std::string mode, coordinates, nearestMode;
  double cubicA = -0.75, extrapolation = 0.0;
  bool excludeOutside = false, antialias = false;
};

/// One axis's interpolation: each output position reads `neighbours`
/// input positions (`indices`, clamped to the axis) with `weights`, or the
/// extrapolation value where `extrapolated`.
struct AxisPlan {
  int64_t neighbours = 0;
  SmallVector<int64_t> indices;
  SmallVector<double> weights;
  SmallVector<bool> extrapolated;

  /// Whether every output position reads one input position, whole.
  bool isGather() const {
    for (size_t o = 0; o * neighbours < weights.size(); ++o) {
      int ones = 0;
      for (int64_t k = 0; k < neighbours; ++k) {
        double w = weights[o * neighbours + k];
        if (w != 0.0 && w != 1.0)
          return false;
        ones += w == 1.0;
      }
      if (ones != 1)
        return false;
    }
    return true;
  }
};
} // namespace

/// The weights of the neighbours of a source coordinate whose distance from
/// the neighbour on its left is `ratio` (in (0, 1]), as ONNX's reference.
static SmallVector<double> getCoefficients(const ResizeAttributes &a,
                                           double ratio, double scale) {
  double A = a.cubicA;
  if (a.mode == "nearest") {
    bool right;
    // Resize-10's: the left neighbour upsampling, the right one
    // downsampling (as onnxruntime).
    if (ratio == 1.0 || a.nearestMode == "ceil" ||
        (a.nearestMode == "simple" && scale < 1))
      right = true;
    else if (a.nearestMode == "simple")
      right = false;
    else if (a.nearestMode == "floor")
      right = false;
    else if (a.nearestMode == "round_prefer_ceil")
      right = ratio >= 0.5;
    else
      right = ratio > 0.5;
    return {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
  }
  if (!a.antialias) {
    if (a.mode == "linear")
      return {1 - ratio, ratio};
    double r1 = ratio + 1, s = 1 - ratio, s1 = s + 1;
    return {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A,
            ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
            ((A + 2) * s - (A + 3)) * s * s + 1,
            ((A * s1 - 5 * A) * s1 + 8 * A) * s1 - 4 * A};
  }
  // Antialiasing widens the kernel by 1 / scale when downsampling.
  scale = std::min(scale, 1.0);
  SmallVector<double> coefficients;
  if (a.mode == "linear") {
    int64_t start = int64_t(std::floor(-1 / scale)) + 1;
    for (int64_t i = start; i < start + 2 - 2 * start; ++i)
      coefficients.push_back(
          std::clamp(1 - std::abs((double(i) - ratio) * scale), 0.0, 1.0));
  } else {
    int64_t start = int64_t(std::floor(-2 / scale)) + 1;
    for (int64_t i = start; i < 2 - start; ++i) {
      double x = std::abs(scale * (double(i) - ratio));
      double x2 = x * x, x3 = x2 * x;
      coefficients.push_back(x <= 1  ? (A + 2) * x3 - (A + 3) * x2 + 1
                             : x < 2 ? A * x3 - 5 * A * x2 + 8 * A * x - 4 * A
                                     : 0.0);
    }
  }
  double sum = 0;
  for (double c : coefficients)
    sum += c;
  for (double &c : coefficients)
    c /= sum;
  return coefficients;
}

/// The interpolation of one axis of `width` positions to `outputs` with
/// `scale` (and its region of interest `roiBegin`..`roiEnd` for
/// tf_crop_and_resize).
static FailureOr<AxisPlan> planAxis(Importer &g, const ResizeAttributes &a,
                                    int64_t width, int64_t outputs,
                                    double scale, double roiBegin,
                                    double roiEnd) {
  AxisPlan plan;
  // Antialiasing reads 4 / scale neighbours (cubic) per output when
  // downsampling: bounded before the coefficients are listed.
  if (a.antialias && a.mode != "nearest" && outputs > 0 &&
      !(4 / scale <= double(kMaxResizePositions)))
    return (void)g.fail("antialiased downsampling of an axis of " +
                        llvm::Twine(width) + " to " + llvm::Twine(outputs) +
                        " positions reads too many neighbours"),
           failure();
  double outputWidth = scale * double(width);
  const std::string &mode = a.coordinates;
  for (int64_t y = 0; y < outputs; ++y) {
    double x;
    bool extrapolated = false;
    if (mode == "align_corners") {
      x = outputWidth == 1 ? 0.0
                           : double(y) * double(width - 1) / (outputWidth - 1);
    } else if (mode == "asymmetric") {
      x = double(y) / scale;
    } else if (mode == "tf_crop_and_resize") {
      x = outputWidth == 1 ? (roiEnd - roiBegin) * double(width - 1) / 2
                           : double(y) * (roiEnd - roiBegin) *
                                 double(width - 1) / (outputWidth - 1);
      x += roiBegin * double(width - 1);
      extrapolated = x < 0 || x > double(width - 1);
    } else if (mode == "pytorch_half_pixel") {
      x = outputWidth == 1 ? -0.5 : (double(y) + 0.5) / scale - 0.5;
    } else if (mode == "tf_half_pixel_for_nn") {
      x = (double(y) + 0.5) / scale;
    } else if (mode == "half_pixel_symmetric") {
      double adjustment = double(outputs) / outputWidth;
      double offset = double(width) / 2 * (1 - adjustment);
      x = offset + (double(y) + 0.5) / scale - 0.5;
    } else {
      x = (double(y) + 0.5) / scale - 0.5;
    }
    if (!std::isfinite(x))
      return (void)g.fail("the source coordinate of output position " +
                          llvm::Twine(y) + " is not finite"),
             failure();
    // Far outside the axis every neighbour is clamped to its edge (within
    // 2^40, so that the positions below stay exact integers).
    x = std::clamp(x, std::max(-4.0 - 4 / scale, -0x1p40),
                   std::min(double(width) + 4 + 4 / scale, 0x1p40));
    double floorX = std::floor(x);
    double ratio = x == floorX ? 1.0 : x - floorX;
    SmallVector<double> coefficients = getCoefficients(a, ratio, scale);
    int64_t n = coefficients.size();
    if (y == 0)
      plan.neighbours = n;
    // The n positions nearest to x, ties to the smaller, on the axis
    // padded with its edges.
    int64_t pad = (n + 1) / 2;
    double padded = x + double(pad);
    double p = std::floor(padded), fraction = padded - p;
    int64_t offset;
    if (n % 2 == 0)
      offset = fraction == 0 ? -(n / 2) : -(n / 2) + 1;
    else
      offset = fraction <= 0.5 ? -((n - 1) / 2) : -((n - 1) / 2) + 1;
    int64_t start = int64_t(p) + offset - pad;
    if (a.excludeOutside) {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        if (start + k < 0 || start + k >= width)
          coefficients[k] = 0;
        sum += coefficients[k];
      }
      for (double &c : coefficients)
        c /= sum == 0 ? 1.0 : sum;
    }
    for (int64_t k = 0; k < n; ++k) {
      plan.indices.push_back(std::clamp<int64_t>(start + k, 0, width - 1));
      plan.weights.push_back(coefficients[k]);
    }
    plan.extrapolated.push_back(extrapolated);
    if (int64_t(plan.indices.size()) > kMaxResizePositions)
      return (void)g.fail("resizing an axis of " + llvm::Twine(width) + " to " +
                          llvm::Twine(outputs) +
                          " positions gathers too many neighbours"),
             failure();
  }
  return plan;
}

/// `x` resized along `axis` by `plan`: the neighbours gathered, weighted
/// and summed (or gathered alone), the extrapolated positions set.
static Value resizeAxis(Importer &g, Value x, int64_t axis,
                        const AxisPlan &plan, double extrapolation) {
  RankedTensorType type = Importer::getType(x);
  int64_t outputs = plan.extrapolated.size(), n = plan.neighbours;
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = outputs;
  Value result;
  if (plan.isGather()) {
    SmallVector<int64_t> chosen;
    for (int64_t o = 0; o < outputs; ++o)
      for (int64_t k = 0; k < n; ++k)
        if (plan.weights[o * n + k] == 1.0)
          chosen.push_back(plan.indices[o * n + k]);
    result = g.takeAlongAxis(x, axis, chosen);
  } else {
    // [..., outputs * n, ...] -> [..., outputs, n, ...] times the weights,
    // summed over the neighbours.
    Value gathered = g.takeAlongAxis(x, axis, plan.indices);
    SmallVector<int64_t> split(shape);
    split.insert(split.begin() + axis + 1, n);
    gathered = g.reshape(gathered, split);
    SmallVector<int64_t> weightShape(split.size(), 1);
    weightShape[axis] = outputs;
    weightShape[axis + 1] = n;
    Value weights =
        g.constant(RankedTensorType::get(weightShape, type.getElementType()),
                   plan.weights);
    result = g.reduce(
        tg::ReduceKind::Sum,
        buildBinary<tg::MulOp>(g, gathered, g.broadcastTo(weights, split)),
        {axis + 1}, /*keepDims=*/false);
  }
  if (llvm::is_contained(plan.extrapolated, true)) {
    SmallVector<double> mask(plan.extrapolated.begin(),
                             plan.extrapolated.end());
    SmallVector<int64_t> maskShape(shape.size(), 1);
    maskShape[axis] = outputs;
    Value where = g.constant(
        RankedTensorType::get(maskShape, g.builder.getI1Type()), mask);
    result = select(g, g.broadcastTo(where, shape),
                    g.splat(Importer::getType(result), extrapolation), result);
  }
  return result;
}

/// Resize of `x` over `axes` (all, in order, when empty) to `sizes` or by
/// `scales` (one per axis; exactly one of them given).
static LogicalResult buildResize(Importer &g, Value x,
                                 const ResizeAttributes &a,
                                 SmallVector<int64_t> axes,
                                 std::optional<SmallVector<double>> scales,
                                 std::optional<SmallVector<int64_t>> sizes,
                                 SmallVector<double> roi) {
  RankedTensorType type = Importer::getType(x);
  int64_t rank = type.getRank();
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  size_t count = axes.size();
  if ((scales && scales->size() != count) || (sizes && sizes->size() != count))
    return g.fail("'" + llvm::Twine(scales ? "scales" : "sizes") +
                  "' must hold one value per resized axis (" +
                  llvm::Twine(count) + ")");
  bool crop = a.coordinates == "tf_crop_and_resize";
  if (crop && roi.size() != 2 * count)
    return g.fail("tf_crop_and_resize needs a roi of " +
                  llvm::Twine(2 * count) + " values");
  if (a.mode != "nearest" && !isFloat(x))
    return g.fail(a.mode + " interpolation of integers is not supported");
  SmallVector<double> axisScales(count);
  SmallVector<int64_t> outputs(count);
  for (size_t i = 0; i < count; ++i) {
    int64_t width = type.getDimSize(axes[i]);
    if (sizes) {
      if ((*sizes)[i] < 0)
        return g.fail("'sizes' must not be negative");
      if (width == 0)
        return g.fail("an empty axis cannot be resized to a size");
      axisScales[i] = double((*sizes)[i]) / double(width);
      outputs[i] = (*sizes)[i];
    } else {
      if (!((*scales)[i] > 0))
        return g.fail("'scales' must be positive");
      axisScales[i] = (*scales)[i];
      double output = (*scales)[i] * double(width);
      if (output >= double(kMaxImportElements))
        return g.fail("the resized axis is too large");
      outputs[i] = int64_t(output);
    }
  }
  std::string policy = g.getString("keep_aspect_ratio_policy", "stretch",
                                   {"stretch", "not_larger", "not_smaller"});
  if (sizes && policy != "stretch") {
    double scale = axisScales.front();
    for (double s : axisScales)
      scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
    for (size_t i = 0; i < count; ++i) {
      axisScales[i] = scale;
      outputs[i] =
          toInt64Saturating(scale * double(type.getDimSize(axes[i])) + 0.5);
    }
  }
  if (g.hadError())
    return failure();
  Type elementType = type.getElementType();
  // Narrow floats are weighted in f32 and rounded once at the end.
  bool widen = a.mode != "nearest" && elementType.getIntOrFloatBitWidth() < 32;
  if (widen)
    x = g.convert(x, g.builder.getF32Type());
  for (size_t i = 0; i < count; ++i) {
    int64_t axis = axes[i], width = type.getDimSize(axis);
    double roiBegin = crop ? roi[i] : 0.0, roiEnd = crop ? roi[count + i] : 1.0;
    if (std::abs(axisScales[i] - 1) < 1e-9 && outputs[i] == width &&
        std::abs(roiBegin) < 1e-9 && std::abs(roiEnd - 1) < 1e-9)
      continue;
    // The other axes' elements times the outputs, without overflow.
    if (std::max<int64_t>(outputs[i], 1) >
        kMaxImportElements /
            std::max<int64_t>(span(Importer::getType(x).getShape()) /
                                  std::max<int64_t>(width, 1),
                              1))
      return g.fail("the resized tensor is too large");
    ASSIGN_OR_FAIL(plan, planAxis(g, a, width, outputs[i], axisScales[i],
                                  roiBegin, roiEnd));
    x = resizeAxis(g, x, axis, plan, a.extrapolation);
  }
  g.setOutput(0, g.convert(x, elementType));
  return success();
}

LogicalResult onnx_import::convertResize(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ResizeAttributes a;
  a.mode = g.getString("mode", "nearest", {"nearest", "linear", "cubic"});
  if (g.opset < 11) {
    // Resize-10 samples as onnxruntime does: asymmetric coordinates, the
    // nearest neighbour on the left when upsampling (Upsample's and
    // PyTorch's legacy `nearest`), on the right when downsampling.
    if (a.mode == "cubic")
      return g.fail("cubic mode needs opset 11");
    a.coordinates = "asymmetric";
    a.nearestMode = "simple";
    ASSIGN_OR_FAIL(scales, g.requireConstantFloats(1, "scales"));
    return buildResize(g, x, a, {}, scales, std::nullopt, {});
  }
  SmallVector<StringRef> modes = {"half_pixel", "pytorch_half_pixel",
                                  "align_corners", "asymmetric",
                                  "tf_crop_and_resize"};
  if (g.opset < 13)
    modes.push_back("tf_half_pixel_for_nn");
  if (g.opset >= 19)
    modes.push_back("half_pixel_symmetric");
  a.coordinates =
      g.getString("coordinate_transformation_mode", "half_pixel", modes);
  a.nearestMode =
      g.getString("nearest_mode", "round_prefer_floor",
                  {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  a.cubicA = g.getFloat("cubic_coeff_a", -0.75f);
  a.excludeOutside = g.getBool("exclude_outside", false);
  a.extrapolation = g.getFloat("extrapolation_value", 0.0f);
  a.antialias = g.getBool("antialias", false);
  if (a.antialias && a.mode == "nearest")
    return g.fail("antialias applies to linear and cubic modes only");
  SmallVector<int64_t> axes;
  if (std::optional<SmallVector<int64_t>> given = g.getInts("axes")) {
    for (int64_t axis : *given) {
      ASSIGN_OR_FAIL(d, g.normalizeAxis(axis, Importer::getType(x).getRank()));
      if (llvm::is_contained(axes, d))
        return g.fail("axis " + llvm::Twine(axis) + " is repeated");
      axes.push_back(d);
    }
  }
  auto present = [&](unsigned index) {
    Value v = g.input(index);
    return v && Importer::getType(v).getNumElements() != 0;
  };
  std::optional<SmallVector<double>> scales;
  std::optional<SmallVector<int64_t>> sizes;
  if (present(2) == present(3))
    return g.fail("exactly one of 'scales' and 'sizes' must be given");
  if (present(2)) {
    ASSIGN_OR_FAIL(values, g.requireConstantFloats(2, "scales"));
    scales = values;
  } else {
    ASSIGN_OR_FAIL(values, g.requireConstantInts(3, "sizes"));
    sizes = values;
  }
  SmallVector<double> roi;
  if (a.coordinates == "tf_crop_and_resize" && present(1)) {
    ASSIGN_OR_FAIL(values, g.requireConstantFloats(1, "roi"));
    roi = values;
  }
  return buildResize(g, x, a, axes, scales, sizes, roi);
}

// Upsample-7 (scales attribute) and -9 (scales input): Resize-10's
// sampling.
LogicalResult onnx_import::convertUpsample(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ResizeAttributes a;
  a.mode = g.getString("mode", "nearest", {"nearest", "linear", "bilinear"});
  if (a.mode == "bilinear")
    a.mode = "linear";
  a.coordinates = "asymmetric";
  a.nearestMode = "floor";
  SmallVector<double> scales;
  if (g.opset < 9) {
    const onnx::AttributeProto *attr =
        g.attribute("scales", onnx::AttributeProto::FLOATS);
    if (!attr)
      return g.fail("Upsample needs the 'scales' attribute");
    scales.assign(attr->floats().begin(), attr->floats().end());
  } else {
    ASSIGN_OR_FAIL(values, g.requireConstantFloats(1, "scales"));
    scales = values;
  }
  return buildResize(g, x, a, {}, scales, std::nullopt, {});
}

//===----------------------------------------------------------------------===//
// GridSample
//===----------------------------------------------------------------------===//

/// `x` reflected into [lo, hi] by its nearer border until inside, as ONNX's
/// reference (`_gs_reflect`): the distance past the border, less whole
/// spans, measured from that border or the other by the span count's
/// parity.
static Value reflect(Composer &e, Value x, double lo, double hi) {
  double span = hi - lo;
  if (span <= 0)
    return e.c(lo);
  auto fold = [&](Value distance, double near, double far) {
    Value spans = e.trunc(e.div(distance, e.c(span)));
    Value rest = e.sub(distance, e.mul(spans, e.c(span)));
    Value even =
        e.equal(e.mul(e.floor(e.mul(spans, e.c(0.5))), e.c(2.0)), spans);
    Value sign = e.c(near < far ? 1.0 : -1.0);
    return e.select(even, e.add(e.c(near), e.mul(sign, rest)),
                    e.sub(e.c(far), e.mul(sign, rest)));
  };
  return e.select(
      e.less(x, e.c(lo)), fold(e.sub(e.c(lo), x), lo, hi),
      e.select(e.less(e.c(hi), x), fold(e.sub(x, e.c(hi)), hi, lo), x));
}

// AffineGrid-20: the sampling grid of GridSample for theta ([N, 2, 3] or
// [N, 3, 4]) and the output size (N, C, H, W) or (N, C, D, H, W), known at
// import: theta times the homogeneous coordinates (x, y[, z], 1) of each
// output position, which run from -1 to 1 (the corner pixels' centres with
// align_corners, their outer edges without), computed in double at import.
LogicalResult onnx_import::convertAffineGrid(Importer &g) {
  ASSIGN_OR_FAIL(theta, g.requireInput(0));
  if (failed(requireFloat(g, theta)))
    return failure();
  ASSIGN_OR_FAIL(size, g.requireConstantInts(1, "size"));
  RankedTensorType thetaType = Importer::getType(theta);
  int64_t spatial = int64_t(size.size()) - 2;
  if (spatial != 2 && spatial != 3)
    return g.fail("size must have 4 (2D) or 5 (3D) elements");
  int64_t batch = size[0];
  if (thetaType.getShape() != ArrayRef<int64_t>{batch, spatial, spatial + 1})
    return g.fail("theta must be [" + llvm::Twine(batch) + ", " +
                  llvm::Twine(spatial) + ", " + llvm::Twine(spatial + 1) +
                  "] for this size");
  // Output dimensions, outermost first (D, H, W or H, W).
  SmallVector<int64_t> dims(size.begin() + 2, size.end());
  int64_t positions = 1;
  for (int64_t d : dims) {
    if (d < 1)
      return g.fail("size's spatial dimensions must be positive");
    positions *= d;
    if (positions > kMaxFoldElements)
      return g.fail("more than 2^24 grid positions");
  }
  bool alignCorners = g.getBool("align_corners", false);
  auto coordinate = [&](int64_t i, int64_t n) {
    if (alignCorners)
      return n == 1 ? -1.0 : -1.0 + 2.0 * double(i) / double(n - 1);
    return (2.0 * double(i) + 1.0) / double(n) - 1.0;
  };
  // [spatial + 1, positions]: row 0 the innermost (x), ..., last row ones.
  SmallVector<double> base((spatial + 1) * positions);
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rest = p;
    for (int64_t d = spatial - 1; d >= 0; --d) {
      int64_t index = rest % dims[d];
      rest /= dims[d];
      base[(spatial - 1 - d) * positions + p] = coordinate(index, dims[d]);
    }
    base[spatial * positions + p] = 1.0;
  }
  Value coordinates =
      g.constant(RankedTensorType::get({spatial + 1, positions},
                                       thetaType.getElementType()),
                 base);
  ASSIGN_OR_FAIL(grid, buildMatMul(g, theta, coordinates));
  SmallVector<int64_t> shape = {batch};
  llvm::append_range(shape, dims);
  shape.push_back(spatial);
  g.setOutput(0, g.reshape(g.transpose(grid, {0, 2, 1}), shape));
  return success();
}

/// The neighbours sampleGrid reads along each dimension in `mode`.
static int64_t getSampleTaps(StringRef mode) {
  return mode == "nearest" ? 1 : mode == "bicubic" || mode == "cubic" ? 4 : 2;
}

/// Whether sampleGrid can sample data of `xType` ([N, C, D1...]) at
/// `positions` in `mode`: no empty spatial dimension, at most 4096
/// neighbourhoods per position (every combination of the dimensions' taps
/// is a gather of the step), 2^24 positions (each one's batch offset is a
/// constant table) and kMaxImportElements gathered elements; else a
/// located error.
static LogicalResult checkSampleGrid(Importer &g, RankedTensorType xType,
                                     StringRef mode, int64_t positions) {
  int64_t dims = xType.getRank() - 2, channels = xType.getDimSize(1);
  for (int64_t size : xType.getShape().drop_front(2))
    if (size == 0)
      return g.fail("X has an empty spatial dimension");
  double combinations = std::pow(double(getSampleTaps(mode)), double(dims));
  if (combinations > 4096)
    return g.fail("sampling " + llvm::Twine(dims) +
                  " dimensions would gather " +
                  llvm::Twine(int64_t(combinations)) +
                  " neighbourhoods per position (at most 4096)");
  if (positions > (int64_t(1) << 24))
    return g.fail("the grid has " + llvm::Twine(positions) +
                  " positions (at most 2^24)");
  if (combinations * double(positions) * double(channels) >
      double(kMaxImportElements))
    return g.fail("the sampled neighbourhoods are too large");
  return success();
}

/// GridSample's sampling of `x` ([N, C, D1...]) at `indices` (one tensor
/// [positions] per spatial dimension, outermost first, in the data's index
/// space: 0 is the first element's centre; the positions batch-major, as
/// many per batch entry): each coordinate moved inside by `padding`, its
/// neighbours along each dimension (nearest: the coordinate rounded to
/// even; linear: 2; cubic: 4, Keys' kernel with a = -0.75), each at an
/// index padded by `padding` (zeros: outside reads 0; border: clamped;
/// reflection: reflected within the borders `alignCorners` sets), gathered
/// as rows of channels by a tg.embedding at indices computed at run time,
/// weighted and summed: [positions, C] in the indices' type.
static Value sampleGrid(Importer &g, Value x, ArrayRef<Value> indices,
                        StringRef mode, StringRef padding, bool alignCorners) {
  RankedTensorType xType = Importer::getType(x);
  int64_t rank = xType.getRank(), dims = rank - 2;
  int64_t n = xType.getDimSize(0), channels = xType.getDimSize(1);
  ArrayRef<int64_t> spatial = xType.getShape().drop_front(2);
  int64_t inputPositions = product(spatial);
  RankedTensorType indexType = Importer::getType(indices.front());
  int64_t positions = indexType.getDimSize(0);
  Type computeType = indexType.getElementType();
  int64_t taps = getSampleTaps(mode);
  Composer e{g, indexType};
  auto i64 = g.builder.getI64Type();
  // Per dimension, each tap's index (float) and weight.
  SmallVector<SmallVector<std::pair<Value, Value>>> perDim;
  for (int64_t d = 0; d < dims; ++d) {
    double size = double(spatial[d]);
    Value v = indices[d];
    if (mode == "nearest")
      v = e.round(v);
    double lo = alignCorners ? 0.0 : -0.5;
    double hi = alignCorners ? size - 1 : size - 0.5;
    if (padding != "zeros") {
      Value below = e.less(v, e.c(lo));
      Value outside = e.select(below, below, e.less(e.c(hi), v));
      v = e.select(outside,
                   padding == "border" ? e.clamp(v, 0, size - 1)
                                       : reflect(e, v, lo, hi),
                   v);
    }
    SmallVector<std::pair<Value, Value>> tapsOfDim;
    if (mode == "nearest") {
      tapsOfDim.push_back({v, e.c(1.0)});
    } else {
      Value base = e.floor(v), t = e.sub(v, base);
      if (taps == 2) {
        tapsOfDim.push_back({base, e.sub(e.c(1.0), t)});
        tapsOfDim.push_back({e.add(base, e.c(1.0)), t});
      } else {
        // Keys' cubic convolution kernel at distances t + 1, t, 1 - t,
        // 2 - t.
        double a = -0.75;
        auto far = [&](Value s) { // 1 < s < 2
          return e.sub(
              e.mul(e.add(e.mul(e.sub(e.mul(e.c(a), s), e.c(5 * a)), s),
                          e.c(8 * a)),
                    s),
              e.c(4 * a));
        };
        auto nearK = [&](Value s) { // 0 <= s <= 1
          return e.add(
              e.mul(e.mul(e.sub(e.mul(e.c(a + 2), s), e.c(a + 3)), s), s),
              e.c(1.0));
        };
        Value one = e.c(1.0);
        tapsOfDim.push_back({e.sub(base, one), far(e.add(t, one))});
        tapsOfDim.push_back({base, nearK(t)});
        tapsOfDim.push_back({e.add(base, one), nearK(e.sub(one, t))});
        tapsOfDim.push_back({e.add(base, e.c(2.0)), far(e.sub(e.c(2.0), t))});
      }
    }
    // Each tap's index padded: zeros reads 0 outside (its weight masked),
    // border clamps, reflection reflects (then truncates, as the
    // reference's int()).
    for (auto &[index, weight] : tapsOfDim) {
      if (padding == "zeros") {
        Value above = compare(g, tg::CompareDirection::GE, index, e.c(0.0));
        Value inside = e.select(above, e.less(index, e.c(size)), above);
        weight = e.select(inside, weight, e.c(0.0));
      } else if (padding == "reflection") {
        index = e.trunc(reflect(e, index, lo, hi));
      }
      index = g.convert(e.clamp(index, 0, size - 1), i64);
    }
    perDim.push_back(std::move(tapsOfDim));
  }

  // The data as rows of channels: [N * D1 * ..., C]; every combination of
  // the dimensions' taps one gather of [positions, C], weighted.
  SmallVector<int64_t> toChannelsLast{0};
  for (int64_t d = 2; d < rank; ++d)
    toChannelsLast.push_back(d);
  toChannelsLast.push_back(1);
  Value table =
      g.reshape(g.transpose(g.convert(x, computeType), toChannelsLast),
                {n * inputPositions, channels});
  // Each output position's batch offset; the rows are counted in i64 (in
  // f32, a batch of images past 2^24 pixels would read a neighbour).
  SmallVector<int64_t> batchOffsets;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t p = 0; p < positions / std::max<int64_t>(n, 1); ++p)
      batchOffsets.push_back(b * inputPositions);
  auto rowIndexType = RankedTensorType::get({positions}, i64);
  Value offset = g.constantInts(batchOffsets, rowIndexType);
  RankedTensorType rowsType =
      RankedTensorType::get({positions, channels}, computeType);
  Value sum;
  SmallVector<size_t> choice(dims, 0);
  while (true) {
    Value flat = offset, weight;
    int64_t stride = inputPositions;
    for (int64_t d = 0; d < dims; ++d) {
      stride /= spatial[d];
      auto [index, w] = perDim[d][choice[d]];
      flat = buildBinary<tg::AddOp>(
          g, flat,
          buildBinary<tg::MulOp>(g, index,
                                 g.splat(rowIndexType, double(stride))));
      weight = weight ? e.mul(weight, w) : w;
    }
    Value rows = g.takeRows(table, flat);
    Value term = buildBinary<tg::MulOp>(
        g, rows,
        g.broadcastTo(g.reshape(weight, {positions, 1}), rowsType.getShape()));
    sum = sum ? buildBinary<tg::AddOp>(g, sum, term) : term;
    int64_t d = dims - 1;
    while (d >= 0 && ++choice[d] == perDim[d].size())
      choice[d--] = 0;
    if (d < 0)
      break;
  }
  return sum;
}

/// GridSample-16 and -20 (any number of spatial dimensions): every output
/// position's source coordinates (the grid's, last axis reversed,
/// denormalized by align_corners) moved inside by padding_mode, then its
/// neighbours along each dimension (nearest: the coordinate rounded to
/// even; linear: 2; cubic: 4, Keys' kernel with a = -0.75), each at an
/// index padded by padding_mode (zeros: outside reads 0; border: clamped;
/// reflection: reflected), gathered from the data as rows of channels by a
/// tg.embedding at indices computed at run time, weighted and summed. The
/// gradient reaches the data (tg.embedding_grad) and the grid (through the
/// weights).
LogicalResult onnx_import::convertGridSample(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(grid, g.requireInput(1));
  if (failed(requireFloat(g, x)) || failed(requireFloat(g, grid)))
    return failure();
  std::string mode = g.getString(
      "mode", g.opset >= 20 ? "linear" : "bilinear",
      g.opset >= 20 ? SmallVector<StringRef>{"linear", "nearest", "cubic"}
                    : SmallVector<StringRef>{"bilinear", "nearest", "bicubic"});
  std::string padding =
      g.getString("padding_mode", "zeros", {"zeros", "border", "reflection"});
  bool alignCorners = g.getBool("align_corners", false);
  if (g.hadError())
    return failure();
  RankedTensorType xType = Importer::getType(x);
  RankedTensorType gridType = Importer::getType(grid);
  int64_t rank = xType.getRank(), dims = rank - 2;
  if (rank < 3 || gridType.getRank() != rank ||
      gridType.getDimSize(0) != xType.getDimSize(0) ||
      gridType.getShape().back() != dims)
    return g.fail("X must be [N, C, D1...] and grid [N, O1..., " +
                  llvm::Twine(dims) + "] of the same rank");
  int64_t n = xType.getDimSize(0), channels = xType.getDimSize(1);
  ArrayRef<int64_t> spatial = xType.getShape().drop_front(2);
  ArrayRef<int64_t> outSpatial = gridType.getShape().slice(1, dims);
  int64_t positions = product(gridType.getShape().drop_back());
  if (failed(checkSampleGrid(g, xType, mode, positions)))
    return failure();

  // Coordinates computed in f32 (f64 for f64), one tensor [positions] per
  // spatial dimension, in the data's index space.
  Type elementType = xType.getElementType();
  Type computeType =
      elementType.isF64() ? elementType : Type(g.builder.getF32Type());
  Value coordinates =
      g.reshape(g.convert(grid, computeType), {positions, dims});
  Composer e{g, RankedTensorType::get({positions}, computeType)};
  SmallVector<Value> indices;
  for (int64_t d = 0; d < dims; ++d) {
    double size = double(spatial[d]);
    int64_t column = dims - 1 - d; // the grid's last axis is reversed
    Value v = g.reshape(
        g.slice(coordinates, {0, column}, {positions, column + 1}, {1, 1}),
        {positions});
    indices.push_back(
        alignCorners
            ? e.mul(e.add(v, e.c(1.0)), e.c((size - 1) / 2))
            : e.div(e.sub(e.mul(e.add(v, e.c(1.0)), e.c(size)), e.c(1.0)),
                    e.c(2.0)));
  }
  Value sum = sampleGrid(g, x, indices, mode, padding, alignCorners);
  SmallVector<int64_t> channelsLast{n};
  llvm::append_range(channelsLast, outSpatial);
  channelsLast.push_back(channels);
  SmallVector<int64_t> toChannelsFirst{0, rank - 1};
  for (int64_t d = 1; d < rank - 1; ++d)
    toChannelsFirst.push_back(d);
  g.setOutput(
      0, g.convert(g.transpose(g.reshape(sum, channelsLast), toChannelsFirst),
                   elementType));
  return success();
}

//===----------------------------------------------------------------------===//
// DeformConv
//===----------------------------------------------------------------------===//

// DeformConv-19 and -22 (deformable convolution v2, any number of spatial
// dimensions): each output position's kernel taps sampled bilinearly from
// X (zeros outside) at the tap's position plus its learned offset (one set
// per offset group of input channels), scaled by the mask, then the
// convolution of those columns with W per group as a batched GEMM, plus B.
// The sampling is GridSample's (sampleGrid), so the gradient reaches X,
// the offsets (through the bilinear weights), the mask, W and B.
LogicalResult onnx_import::convertDeformConv(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(w, g.requireInput(1));
  ASSIGN_OR_FAIL(offset, g.requireInput(2));
  Value bias = g.input(3), mask = g.input(4);
  for (Value value : {x, w, offset, bias, mask})
    if (value && failed(requireFloat(g, value)))
      return failure();
  RankedTensorType xType = Importer::getType(x), wType = Importer::getType(w),
                   offsetType = Importer::getType(offset);
  int64_t rank = xType.getRank(), dims = rank - 2;
  if (rank < 3 || wType.getRank() != rank || offsetType.getRank() != rank)
    return g.fail("X, W and offset must be [N, C, D1...], [M, C / group, "
                  "k1...] and [N, offset_group * prod(k) * dims, O1...]");
  int64_t n = xType.getDimSize(0), channels = xType.getDimSize(1);
  int64_t outChannels = wType.getDimSize(0);
  int64_t group = g.getInt("group", 1);
  int64_t offsetGroup = g.getInt("offset_group", 1);
  if (group < 1 || offsetGroup < 1 || channels % group != 0 ||
      outChannels % group != 0 || wType.getDimSize(1) != channels / group ||
      channels % offsetGroup != 0)
    return g.fail("group and offset_group must divide the " +
                  llvm::Twine(channels) + " input channels (and group the " +
                  llvm::Twine(outChannels) +
                  " output channels), W having C / group input channels");
  auto ints = [&](StringRef name, ArrayRef<int64_t> fill) {
    std::optional<SmallVector<int64_t>> values = g.getInts(name);
    return values ? *values : SmallVector<int64_t>(fill);
  };
  SmallVector<int64_t> kernel =
                           ints("kernel_shape", wType.getShape().drop_front(2)),
                       strides = ints("strides", SmallVector<int64_t>(dims, 1)),
                       dilations =
                           ints("dilations", SmallVector<int64_t>(dims, 1)),
                       pads = ints("pads", SmallVector<int64_t>(2 * dims, 0));
  if (int64_t(kernel.size()) != dims || int64_t(strides.size()) != dims ||
      int64_t(dilations.size()) != dims || int64_t(pads.size()) != 2 * dims ||
      ArrayRef<int64_t>(kernel) != wType.getShape().drop_front(2))
    return g.fail("kernel_shape (W's), strides, dilations and pads must give "
                  "each spatial dimension");
  int64_t taps = 1, outPositions = 1;
  SmallVector<int64_t> outSpatial;
  for (int64_t d = 0; d < dims; ++d) {
    int64_t size = xType.getDimSize(2 + d), k = kernel[d], st = strides[d],
            dil = dilations[d], begin = pads[d], end = pads[dims + d];
    constexpr int64_t kLimit = int64_t(1) << 20;
    if (k < 1 || st < 1 || dil < 1 || begin < 0 || end < 0 || k > kLimit ||
        st > kLimit || dil > kLimit || begin > kLimit || end > kLimit)
      return g.fail("the kernel, strides and dilations must be positive, "
                    "pads non-negative, and none above 2^20");
    int64_t extent = (k - 1) * dil + 1, padded = size + begin + end;
    int64_t expected = padded < extent ? 0 : (padded - extent) / st + 1;
    if (offsetType.getDimSize(2 + d) != expected || expected == 0)
      return g.fail("offset's spatial dimension " + llvm::Twine(d) + " is " +
                    llvm::Twine(offsetType.getDimSize(2 + d)) +
                    "; the padding, dilation, stride and kernel give " +
                    llvm::Twine(expected));
    outSpatial.push_back(expected);
    taps *= k;
    outPositions *= expected;
    if (taps > 4096 || outPositions > kMaxImportElements)
      return g.fail("more than 4096 kernel taps or too many output "
                    "positions");
  }
  if (offsetType.getDimSize(0) != n ||
      offsetType.getDimSize(1) != offsetGroup * taps * dims)
    return g.fail("offset must be [" + llvm::Twine(n) + ", " +
                  llvm::Twine(offsetGroup * taps * dims) +
                  ", ...]: offset_group x prod(kernel_shape) x " +
                  llvm::Twine(dims) + " coordinates");
  SmallVector<int64_t> maskShape = {n, offsetGroup * taps};
  llvm::append_range(maskShape, outSpatial);
  if (mask && Importer::getType(mask).getShape() != ArrayRef(maskShape))
    return g.fail("mask must be [N, offset_group x prod(kernel_shape), "
                  "O1...]");
  if (bias &&
      Importer::getType(bias).getShape() != ArrayRef<int64_t>{outChannels})
    return g.fail("B must hold one value per output channel");
  int64_t positions = n * taps * outPositions;
  int64_t groupChannels = channels / offsetGroup;
  RankedTensorType groupType = xType.clone([&] {
    SmallVector<int64_t> shape(xType.getShape());
    shape[1] = groupChannels;
    return shape;
  }());
  if (failed(checkSampleGrid(g, groupType, "linear", positions)))
    return failure();

  Type elementType = xType.getElementType();
  Type computeType =
      elementType.isF64() ? elementType : Type(g.builder.getF32Type());
  // Each tap's position before its offset, [taps, O] per dimension:
  // -pad + stride * output index + dilation * kernel index.
  RankedTensorType tableType =
      RankedTensorType::get({taps, outPositions}, computeType);
  SmallVector<Value> bases;
  for (int64_t d = 0; d < dims; ++d) {
    SmallVector<double> base(taps * outPositions);
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t o = 0; o < outPositions; ++o) {
        int64_t kernelIndex = t, outIndex = o;
        for (int64_t e = dims - 1; e > d; --e) {
          kernelIndex /= kernel[e];
          outIndex /= outSpatial[e];
        }
        kernelIndex %= kernel[d];
        outIndex %= outSpatial[d];
        base[t * outPositions + o] = double(-pads[d] + strides[d] * outIndex +
                                            dilations[d] * kernelIndex);
      }
    bases.push_back(
        g.broadcastTo(g.constant(tableType, base), {n, taps, outPositions}));
  }
  Value offsets = g.reshape(g.convert(offset, computeType),
                            {n, offsetGroup, taps, dims, outPositions});
  Value masks = mask ? g.reshape(g.convert(mask, computeType),
                                 {n, offsetGroup, taps, outPositions})
                     : Value();
  Value xCompute = g.convert(x, computeType);
  SmallVector<Value> columns;
  for (int64_t og = 0; og < offsetGroup; ++og) {
    SmallVector<Value> indices;
    for (int64_t d = 0; d < dims; ++d) {
      Value delta = g.reshape(g.slice(offsets, {0, og, 0, d, 0},
                                      {n, og + 1, taps, d + 1, outPositions},
                                      {1, 1, 1, 1, 1}),
                              {n, taps, outPositions});
      indices.push_back(
          g.reshape(buildBinary<tg::AddOp>(g, bases[d], delta), {positions}));
    }
    SmallVector<int64_t> starts(rank, 0), limits(xType.getShape());
    starts[1] = og * groupChannels;
    limits[1] = (og + 1) * groupChannels;
    Value sampled = sampleGrid(
        g, g.slice(xCompute, starts, limits, SmallVector<int64_t>(rank, 1)),
        indices, "linear", "zeros", /*alignCorners=*/true);
    if (masks) {
      Value scale =
          g.reshape(g.slice(masks, {0, og, 0, 0},
                            {n, og + 1, taps, outPositions}, {1, 1, 1, 1}),
                    {positions, 1});
      sampled = buildBinary<tg::MulOp>(
          g, sampled, g.broadcastTo(scale, {positions, groupChannels}));
    }
    columns.push_back(
        g.reshape(sampled, {n, taps, outPositions, groupChannels}));
  }
  Value cols = columns.size() == 1
                   ? columns.front()
                   : g.create<tg::ConcatOp>(
                         RankedTensorType::get(
                             {n, taps, outPositions, channels}, computeType),
                         columns, 3);
  // [N, K, O, C] -> [N, O, C, K] -> [N * O, G, Cg * K] -> [G, N * O, Cg * K]
  // times W as [G, Cg * K, Mg].
  int64_t convChannels = channels / group, mg = outChannels / group;
  Value lhs =
      g.transpose(g.reshape(g.transpose(cols, {0, 2, 3, 1}),
                            {n * outPositions, group, convChannels * taps}),
                  {1, 0, 2});
  Value rhs = g.transpose(
      g.reshape(g.convert(w, computeType), {group, mg, convChannels * taps}),
      {0, 2, 1});
  ASSIGN_OR_FAIL(product, buildMatMul(g, lhs, rhs));
  // [G, N * O, Mg] -> [N, G, Mg, O] -> [N, M, O1...].
  Value result = g.transpose(g.reshape(product, {group, n, outPositions, mg}),
                             {1, 0, 3, 2});
  SmallVector<int64_t> resultShape = {n, outChannels};
  llvm::append_range(resultShape, outSpatial);
  result = g.reshape(result, resultShape);
  if (bias) {
    SmallVector<int64_t> column(rank, 1);
    column[1] = outChannels;
    result = buildBinary<tg::AddOp>(
        g, result,
        g.broadcastTo(g.reshape(g.convert(bias, computeType), column),
                      resultShape));
  }
  g.setOutput(0, g.convert(result, elementType));
  return success();
}

//===----------------------------------------------------------------------===//
// RoiAlign
//===----------------------------------------------------------------------===//

namespace {
/// One axis (y or x) of RoiAlign's sampling: per region r, bin p and sample
/// i of the bin, the sample's coordinate, as ONNX's reference computes it
/// (in the compute type, in its order of operations).
struct RoiAxis {
  /// The feature map's size along the axis, the output's bins, the most
  /// samples per bin (every region's, or the largest adaptive grid).
  int64_t size, bins, samples;
  /// The columns of the region's start and end in `rois`.
  int64_t startColumn, endColumn;
  /// Per region, its samples per bin (adaptive grids), else empty.
  SmallVector<int64_t> grids;
};
} // namespace

/// Each region's adaptive sampling grid along an axis (sampling_ratio 0):
/// ceil(extent / bins), the extent computed as the reference does, in T.
template <typename T>
static SmallVector<int64_t> getAdaptiveGrids(const Tensor &rois, T scale,
                                             T offset, bool clampExtent,
                                             const RoiAxis &axis) {
  SmallVector<int64_t> grids;
  for (int64_t r = 0; r < rois.getShape()[0]; ++r) {
    T start = T(rois.getAsDouble(r * 4 + axis.startColumn)) * scale - offset;
    T end = T(rois.getAsDouble(r * 4 + axis.endColumn)) * scale - offset;
    T extent = end - start;
    if (clampExtent)
      extent = std::max(extent, T(1));
    double grid = std::ceil(double(extent / T(axis.bins)));
    // int() of the reference: NaN and out-of-range grids are refused by
    // the caller's bound.
    grids.push_back(std::isfinite(grid) ? int64_t(std::clamp(grid, -1e9, 1e9))
                                        : int64_t(1e9));
  }
  return grids;
}

/// RoiAlign-10 and -16 (ONNX's reference, which follows Detectron's
/// kernel): for every region, output bin and sample of the bin's grid, the
/// bilinear interpolation of the feature map at the sample's coordinates,
/// which are computed at run time from `rois` (the four corners gathered
/// as rows of channels by a tg.embedding at indices of the step, so the
/// gradient reaches X through tg.embedding_grad, and regions computed from
/// parameters through the bilinear weights), averaged over the samples
/// ("avg") or
/// their largest weighted corner ("max"). A sample outside [-1, size]
/// reads 0. sampling_ratio 0 sizes each region's grid by the region,
/// which needs `rois` at import.
LogicalResult onnx_import::convertRoiAlign(Importer &g) {
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(roisInput, g.requireInput(1));
  ASSIGN_OR_FAIL(batchIndices, g.requireInput(2));
  if (failed(requireFloat(g, x)) || failed(requireFloat(g, roisInput)))
    return failure();
  bool halfPixel =
      g.opset >= 16 &&
      g.getString("coordinate_transformation_mode", "half_pixel",
                  {"half_pixel", "output_half_pixel"}) == "half_pixel";
  bool maxMode = g.getString("mode", "avg", {"avg", "max"}) == "max";
  int64_t outHeight = g.getInt("output_height", 1);
  int64_t outWidth = g.getInt("output_width", 1);
  int64_t samplingRatio = g.getInt("sampling_ratio", 0);
  float scale = g.getFloat("spatial_scale", 1.0f);
  if (g.hadError())
    return failure();
  RankedTensorType xType = Importer::getType(x);
  RankedTensorType roisType = Importer::getType(roisInput);
  RankedTensorType indexType = Importer::getType(batchIndices);
  if (xType.getRank() != 4 || roisType.getRank() != 2 ||
      roisType.getDimSize(1) != 4 || indexType.getRank() != 1 ||
      indexType.getDimSize(0) != roisType.getDimSize(0))
    return g.fail("X must be [N, C, H, W], rois [R, 4] and batch_indices [R]");
  if (!isa<IntegerType>(indexType.getElementType()) || isBool(batchIndices))
    return g.fail("batch_indices must be integers");
  if (outHeight < 1 || outWidth < 1 || samplingRatio < 0 ||
      !std::isfinite(scale))
    return g.fail("output_height and output_width must be positive, "
                  "sampling_ratio at least 0 and spatial_scale finite");
  int64_t n = xType.getDimSize(0), channels = xType.getDimSize(1);
  int64_t regions = roisType.getDimSize(0);
  RoiAxis ys{xType.getDimSize(2), outHeight, samplingRatio, 1, 3, {}};
  RoiAxis xs{xType.getDimSize(3), outWidth, samplingRatio, 0, 2, {}};
  if (ys.size == 0 || xs.size == 0)
    return g.fail("X has an empty spatial dimension");

  Type elementType = xType.getElementType();
  bool f64 = elementType.isF64() || roisType.getElementType().isF64();
  Type computeType =
      f64 ? Type(g.builder.getF64Type()) : g.builder.getF32Type();
  double offset = halfPixel ? 0.5 : 0.0;
  if (samplingRatio == 0) {
    const Tensor *rois = g.getConstant(roisInput);
    if (!rois)
      return g.fail("sampling_ratio 0 sizes each region's sampling grid by "
                    "the region, so 'rois' must be computable at import, but " +
                    g.explainNotConstant(roisInput) +
                    "; a positive sampling_ratio samples regions known at "
                    "run time");
    for (RoiAxis *axis : {&ys, &xs}) {
      axis->grids = f64 ? getAdaptiveGrids<double>(*rois, scale, offset,
                                                   !halfPixel, *axis)
                        : getAdaptiveGrids<float>(*rois, scale, float(offset),
                                                  !halfPixel, *axis);
      axis->samples = 1;
      for (int64_t grid : axis->grids)
        axis->samples = std::max(axis->samples, grid);
    }
  }
  // Every (region, bin, sample) reads four rows of channels.
  int64_t samples =
      product({regions, outHeight, outWidth, ys.samples, xs.samples});
  if (samples > (int64_t(1) << 24) ||
      double(samples) * 4 * double(channels) > double(kMaxImportElements))
    return g.fail("sampling " + llvm::Twine(regions) + " regions at " +
                  llvm::Twine(outHeight) + " x " + llvm::Twine(outWidth) +
                  " bins of " + llvm::Twine(ys.samples) + " x " +
                  llvm::Twine(xs.samples) +
                  " samples gathers too much (at most 2^24 samples)");

  // Per axis, tensors shaped [R, bins, samples] placed in the sample space
  // [R, outHeight, outWidth, samples y, samples x] (y: [R, oh, 1, sy, 1],
  // x: [R, 1, ow, 1, sx]): the low corner's index, its weight and the high
  // corner's, 0 where the sample reads nothing.
  Value rois = g.convert(roisInput, computeType);
  Type i64 = g.builder.getI64Type();
  SmallVector<int64_t> fullShape{regions, outHeight, outWidth, ys.samples,
                                 xs.samples};
  struct Corners {
    Value low, high, lowWeight, highWeight;
  };
  auto sampleAxis = [&](const RoiAxis &axis, bool isY) -> Corners {
    SmallVector<int64_t> shape =
        isY ? SmallVector<int64_t>{regions, axis.bins, 1, axis.samples, 1}
            : SmallVector<int64_t>{regions, 1, axis.bins, 1, axis.samples};
    auto type = RankedTensorType::get(shape, computeType);
    Composer e{g, type};
    auto column = [&](int64_t k) {
      Value c = g.reshape(g.slice(rois, {0, k}, {regions, k + 1}, {1, 1}),
                          {regions, 1, 1, 1, 1});
      return g.broadcastTo(c, shape);
    };
    Value start =
        e.sub(e.mul(column(axis.startColumn), e.c(scale)), e.c(offset));
    Value end = e.sub(e.mul(column(axis.endColumn), e.c(scale)), e.c(offset));
    Value extent = e.sub(end, start);
    if (!halfPixel)
      extent = buildBinary<tg::MaxOp>(g, extent, e.c(1.0));
    Value bin = e.div(extent, e.c(double(axis.bins)));
    // The bin's index, the sample's (i + 0.5), the region's grid, and
    // whether the sample is in the region's grid.
    SmallVector<double> bins, phases, grids, inGrid;
    for (int64_t r = 0; r < regions; ++r)
      for (int64_t p = 0; p < axis.bins; ++p)
        for (int64_t i = 0; i < axis.samples; ++i) {
          int64_t grid = axis.grids.empty() ? axis.samples : axis.grids[r];
          bins.push_back(double(p));
          phases.push_back(double(i) + 0.5);
          grids.push_back(double(std::max<int64_t>(grid, 1)));
          inGrid.push_back(i < grid ? 1.0 : 0.0);
        }
    // start + p * bin + (i + 0.5) * bin / grid, in the reference's order.
    Value v = e.add(
        e.add(start, e.mul(g.constant(type, bins), bin)),
        e.div(e.mul(g.constant(type, phases), bin), g.constant(type, grids)));
    double size = double(axis.size);
    Value above = compare(g, tg::CompareDirection::GE, v, e.c(-1.0));
    Value inside = e.select(
        above, compare(g, tg::CompareDirection::LE, v, e.c(size)), above);
    Value reads = e.select(inside, g.constant(type, inGrid), e.c(0.0));
    v = e.clamp(v, 0.0, size - 1);
    Value low = e.floor(v);
    Value high = buildBinary<tg::MinOp>(g, e.add(low, e.c(1.0)), e.c(size - 1));
    Value fraction = e.sub(v, low);
    auto place = [&](Value value) { return g.broadcastTo(value, fullShape); };
    return {place(g.convert(low, i64)), place(g.convert(high, i64)),
            place(e.mul(e.sub(e.c(1.0), fraction), reads)),
            place(e.mul(fraction, reads))};
  };
  Corners y = sampleAxis(ys, true), xc = sampleAxis(xs, false);

  // The feature map as rows of channels [N * H * W, C]; each corner's row
  // (batch * H + y) * W + x, in i64.
  Value table = g.reshape(g.transpose(g.convert(x, computeType), {0, 2, 3, 1}),
                          {n * ys.size * xs.size, channels});
  auto fullI64 = RankedTensorType::get(fullShape, i64);
  Value batch = g.broadcastTo(
      g.reshape(g.convert(batchIndices, i64), {regions, 1, 1, 1, 1}),
      fullShape);
  auto mulC = [&](Value a, int64_t c) {
    return buildBinary<tg::MulOp>(g, a, g.splat(fullI64, double(c)));
  };
  auto rowOf = [&](Value yIndex, Value xIndex) {
    Value row = buildBinary<tg::AddOp>(g, mulC(batch, ys.size), yIndex);
    return g.reshape(buildBinary<tg::AddOp>(g, mulC(row, xs.size), xIndex),
                     {samples});
  };
  auto weightOf = [&](Value a, Value b) {
    return g.broadcastTo(
        g.reshape(buildBinary<tg::MulOp>(g, a, b), {samples, 1}),
        {samples, channels});
  };
  SmallVector<std::pair<Value, Value>> corners = {
      {rowOf(y.low, xc.low), weightOf(y.lowWeight, xc.lowWeight)},
      {rowOf(y.low, xc.high), weightOf(y.lowWeight, xc.highWeight)},
      {rowOf(y.high, xc.low), weightOf(y.highWeight, xc.lowWeight)},
      {rowOf(y.high, xc.high), weightOf(y.highWeight, xc.highWeight)}};
  Value combined;
  for (auto [row, weight] : corners) {
    Value term = buildBinary<tg::MulOp>(g, g.takeRows(table, row), weight);
    combined = !combined ? term
               : maxMode ? buildBinary<tg::MaxOp>(g, combined, term)
                         : buildBinary<tg::AddOp>(g, combined, term);
  }

  // Over each bin's samples: the mean (divided by the region's grid size,
  // at least 1) or the largest; a bin without samples (an adaptive grid of
  // a region of no extent) gives 0.
  int64_t perBin = ys.samples * xs.samples;
  Value perSample =
      g.reshape(combined, {regions, outHeight, outWidth, perBin, channels});
  SmallVector<double> divisors, counted, nonEmpty;
  for (int64_t r = 0; r < regions; ++r) {
    int64_t gy = ys.grids.empty() ? ys.samples : ys.grids[r];
    int64_t gx = xs.grids.empty() ? xs.samples : xs.grids[r];
    nonEmpty.push_back(gy > 0 && gx > 0 ? 1.0 : 0.0);
    for (int64_t sy = 0; sy < ys.samples; ++sy)
      for (int64_t sx = 0; sx < xs.samples; ++sx) {
        divisors.push_back(double(std::max<int64_t>(gy * gx, 1)));
        counted.push_back(sy < gy && sx < gx ? 1.0 : 0.0);
      }
  }
  auto perRegion = [&](ArrayRef<double> values, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> to) {
    return g.broadcastTo(
        g.constant(RankedTensorType::get(shape, computeType), values), to);
  };
  SmallVector<int64_t> sampleShape{regions, outHeight, outWidth, perBin,
                                   channels};
  SmallVector<int64_t> binShape{regions, 1, 1, perBin, 1};
  Value pooled;
  if (!maxMode) {
    pooled =
        g.reduce(tg::ReduceKind::Sum,
                 buildBinary<tg::DivOp>(
                     g, perSample, perRegion(divisors, binShape, sampleShape)),
                 {3}, false);
  } else {
    // Samples outside the region's (adaptive) grid do not compete.
    if (llvm::is_contained(counted, 0.0)) {
      auto sampleType = RankedTensorType::get(sampleShape, computeType);
      Value competes = compare(g, tg::CompareDirection::NE,
                               perRegion(counted, binShape, sampleShape),
                               g.splat(sampleType, 0));
      perSample =
          select(g, competes, perSample, g.splat(sampleType, -INFINITY));
    }
    pooled = g.reduce(tg::ReduceKind::Max, perSample, {3}, false);
    if (llvm::is_contained(nonEmpty, 0.0)) {
      SmallVector<int64_t> resultShape{regions, outHeight, outWidth, channels};
      Value keep =
          compare(g, tg::CompareDirection::NE,
                  perRegion(nonEmpty, {regions, 1, 1, 1}, resultShape),
                  g.splat(RankedTensorType::get(resultShape, computeType), 0));
      pooled =
          select(g, keep, pooled,
                 g.splat(RankedTensorType::get(resultShape, computeType), 0));
    }
  }
  g.setOutput(0, g.convert(g.transpose(pooled, {0, 3, 1, 2}), elementType));
  return success();
}
