//===- SpectralConverters.cpp - DFT and STFT ------------------------------===//
//
// ONNX's discrete Fourier transforms as matrix products: the transform of
// length n along an axis is the signal times an n x k matrix of cosines and
// one of sines (computed in double at import), in f64, so that the result
// is within a few f64 ulps of an FFT's before it is rounded to the signal's
// type. O(n k) work per transformed vector: meant for the lengths of audio
// frames and test signals, not for transforms of millions of points; the
// length is bounded at import.
//
//===----------------------------------------------------------------------===//

#include "ConverterUtils.h"

#include "tgc/Dialect/TG/TGOps.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

using Importer = GraphImporter;

namespace {

/// The longest transform (and the largest matrix, in elements) imported.
constexpr int64_t kMaxLength = 1 << 14;
constexpr int64_t kMaxMatrixElements = int64_t(1) << 24;

/// The first `count` elements of `value` along its last dimension.
Value keepFirst(Importer &g, Value value, int64_t count) {
  RankedTensorType type = Importer::getType(value);
  if (count >= type.getShape().back())
    return value;
  SmallVector<int64_t> starts(type.getRank(), 0), strides(type.getRank(), 1);
  SmallVector<int64_t> limits(type.getShape());
  limits.back() = count;
  return g.slice(value, starts, limits, strides);
}

/// The real and imaginary parts of a transform of length `n` of the signal
/// `re` + i `im` (f64, the transformed axis last, of `m` points: truncated
/// to n, or zero-padded, as ONNX's dft_length), the first `bins` frequencies
/// of it; `inverse` scales by 1/n and turns the rotation around.
FailureOr<std::pair<Value, Value>> transform(Importer &g, Value re, Value im,
                                             int64_t n, int64_t bins,
                                             bool inverse) {
  RankedTensorType type = Importer::getType(re);
  int64_t m = type.getShape().back();
  if (m * bins > kMaxMatrixElements)
    return (void)g.fail("a transform of " + llvm::Twine(m) + " points to " +
                        llvm::Twine(bins) +
                        " frequencies needs a matrix of "
                        "more than 2^24 elements"),
           failure();
  int64_t used = std::min(m, n);
  re = keepFirst(g, re, used);
  if (im)
    im = keepFirst(g, im, used);
  // e^(sign i 2 pi t k / n), t k reduced mod n first (exact in int64): the
  // rotation is clockwise forward (sign -1), counterclockwise inverse.
  double sign = inverse ? 1.0 : -1.0;
  SmallVector<double> cosines, sines;
  for (int64_t t = 0; t < used; ++t)
    for (int64_t k = 0; k < bins; ++k) {
      double angle = 2 * M_PI * double((t * k) % n) / double(n);
      cosines.push_back(std::cos(angle));
      sines.push_back(sign * std::sin(angle));
    }
  RankedTensorType matrix =
      RankedTensorType::get({used, bins}, g.builder.getF64Type());
  Value cosine = g.constant(matrix, cosines), sine = g.constant(matrix, sines);
  // (re + i im)(cos + i sine) = re cos - im sine + i (re sine + im cos).
  ASSIGN_OR_FAIL(outRe, buildMatMul(g, re, cosine));
  ASSIGN_OR_FAIL(outIm, buildMatMul(g, re, sine));
  if (im) {
    ASSIGN_OR_FAIL(imCos, buildMatMul(g, im, cosine));
    ASSIGN_OR_FAIL(imSine, buildMatMul(g, im, sine));
    outRe = buildBinary<tg::SubOp>(g, outRe, imSine);
    outIm = buildBinary<tg::AddOp>(g, outIm, imCos);
  }
  if (inverse) {
    RankedTensorType resultType = Importer::getType(outRe);
    Value scale = g.splat(resultType, 1.0 / double(n));
    outRe = buildBinary<tg::MulOp>(g, outRe, scale);
    outIm = buildBinary<tg::MulOp>(g, outIm, scale);
  }
  return std::make_pair(outRe, outIm);
}

/// The real signal of `n` points whose spectrum's first n / 2 + 1
/// frequencies are `re` + i `im` (f64, the frequency axis last; truncated or
/// zero-padded to n / 2 + 1, as numpy's irfft): the Hermitian spectrum's
/// inverse, each frequency but the zero and the Nyquist one counted twice
/// (for their conjugates); those two contribute their real parts only.
FailureOr<Value> inverseOneSided(Importer &g, Value re, Value im, int64_t n) {
  int64_t used = std::min(Importer::getType(re).getShape().back(), n / 2 + 1);
  if (used * n > kMaxMatrixElements)
    return (void)g.fail("an inverse transform of " + llvm::Twine(used) +
                        " frequencies to " + llvm::Twine(n) +
                        " points needs a matrix of more than 2^24 elements"),
           failure();
  re = keepFirst(g, re, used);
  im = keepFirst(g, im, used);
  SmallVector<double> cosines, sines;
  for (int64_t k = 0; k < used; ++k) {
    bool single = k == 0 || 2 * k == n;
    double weight = (single ? 1.0 : 2.0) / double(n);
    for (int64_t t = 0; t < n; ++t) {
      double angle = 2 * M_PI * double((t * k) % n) / double(n);
      cosines.push_back(weight * std::cos(angle));
      sines.push_back(single ? 0.0 : -weight * std::sin(angle));
    }
  }
  RankedTensorType matrix =
      RankedTensorType::get({used, n}, g.builder.getF64Type());
  ASSIGN_OR_FAIL(real, buildMatMul(g, re, g.constant(matrix, cosines)));
  ASSIGN_OR_FAIL(imaginary, buildMatMul(g, im, g.constant(matrix, sines)));
  return buildBinary<tg::AddOp>(g, real, imaginary);
}

/// The parts of a signal [..., 1] (real) or [..., 2] (complex) in f64,
/// without the last dimension; the imaginary part null for a real signal.
FailureOr<std::pair<Value, Value>> splitComplex(Importer &g, Value signal) {
  RankedTensorType type = Importer::getType(signal);
  if (type.getRank() < 2 ||
      (type.getShape().back() != 1 && type.getShape().back() != 2))
    return (void)g.fail("the signal's last dimension must be 1 (real) or 2 "
                        "(complex)"),
           failure();
  Type f64 = g.builder.getF64Type();
  SmallVector<int64_t> shape(type.getShape().drop_back());
  SmallVector<int64_t> starts(type.getRank(), 0), strides(type.getRank(), 1);
  SmallVector<int64_t> limits(type.getShape());
  limits.back() = 1;
  Value re = g.reshape(g.convert(g.slice(signal, starts, limits, strides), f64),
                       shape);
  if (type.getShape().back() == 1)
    return std::make_pair(re, Value());
  starts.back() = 1;
  limits.back() = 2;
  Value im = g.reshape(g.convert(g.slice(signal, starts, limits, strides), f64),
                       shape);
  return std::make_pair(re, im);
}

/// [..., k] real and imaginary parts as [..., k, 2] of `elementType`.
Value joinComplex(Importer &g, Value re, Value im, Type elementType) {
  SmallVector<int64_t> shape(Importer::getType(re).getShape());
  shape.push_back(1);
  Value parts[] = {g.reshape(re, shape), g.reshape(im, shape)};
  shape.back() = 2;
  Value joined = g.create<tg::ConcatOp>(
      RankedTensorType::get(shape, g.builder.getF64Type()), parts,
      uint64_t(shape.size() - 1));
  return g.convert(joined, elementType);
}

/// A transform length read at import (input `index`), in [1, kMaxLength].
FailureOr<int64_t> requireLength(Importer &g, unsigned index, StringRef what) {
  ASSIGN_OR_FAIL(value, g.requireConstantScalar(index, what));
  int64_t length = toInt64Saturating(value);
  if (double(length) != value || length < 1 || length > kMaxLength)
    return (void)g.fail(what + " must be an integer in [1, " +
                        llvm::Twine(kMaxLength) + "]"),
           failure();
  return length;
}

} // namespace

// DFT-17/20: along `axis` (an attribute at 17, input 2 at 20; not the
// first or the last dimension), of length dft_length (input 1, the axis's
// size by default), forward or inverse, all frequencies or the first n/2 + 1
// (onesided: of a real signal forward; inverse, the real signal of such a
// spectrum, IRFFT, 2 (m - 1) points by default).
LogicalResult onnx_import::convertDFT(Importer &g) {
  ASSIGN_OR_FAIL(signal, g.requireInput(0));
  if (failed(requireFloat(g, signal)))
    return failure();
  RankedTensorType type = Importer::getType(signal);
  int64_t rank = type.getRank();
  int64_t axisValue = g.getInt("axis", 1);
  if (g.opset >= 20) {
    axisValue = -2;
    if (g.input(2)) {
      ASSIGN_OR_FAIL(given, g.requireConstantScalar(2, "axis"));
      axisValue = toInt64Saturating(given);
    }
  }
  if (rank < 2)
    return g.fail("the signal must have rank >= 2");
  ASSIGN_OR_FAIL(axis, g.normalizeAxis(axisValue, rank));
  if (axis == 0 || axis == rank - 1)
    return g.fail("axis must be a signal dimension (not the batch or the "
                  "real/imaginary one)");
  bool inverse = g.getBool("inverse", false);
  bool onesided = g.getBool("onesided", false);
  int64_t n = type.getDimSize(axis);
  // The inverse of a one-sided spectrum (IRFFT) is 2 (m - 1) points long.
  if (onesided && inverse)
    n = 2 * (n - 1);
  if (g.input(1)) {
    ASSIGN_OR_FAIL(length, requireLength(g, 1, "dft_length"));
    n = length;
  } else if (n < 1 || n > kMaxLength) {
    return g.fail("the transformed dimension must have 1 to " +
                  llvm::Twine(kMaxLength) + " elements");
  }
  ASSIGN_OR_FAIL(parts, splitComplex(g, signal));
  if (onesided && !inverse && parts.second)
    return g.fail("a one-sided forward transform applies to real signals "
                  "only");
  if (onesided && inverse && !parts.second)
    return g.fail("a one-sided inverse transform applies to complex "
                  "spectra only");
  // The transformed axis last, then back in place.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  SmallVector<int64_t> inverse_perm(rank - 1);
  for (auto [i, d] : llvm::enumerate(perm))
    inverse_perm[d] = i;
  Value re = g.transpose(parts.first, perm);
  Value im = parts.second ? g.transpose(parts.second, perm) : Value();
  if (onesided && inverse) {
    ASSIGN_OR_FAIL(real, inverseOneSided(g, re, im, n));
    SmallVector<int64_t> shape(Importer::getType(real).getShape());
    shape.push_back(1);
    g.setOutput(0, g.convert(g.reshape(g.transpose(real, inverse_perm), shape),
                             type.getElementType()));
    return success();
  }
  int64_t bins = onesided ? n / 2 + 1 : n;
  ASSIGN_OR_FAIL(result, transform(g, re, im, n, bins, inverse));
  g.setOutput(0, joinComplex(g, g.transpose(result.first, inverse_perm),
                             g.transpose(result.second, inverse_perm),
                             type.getElementType()));
  return success();
}

// STFT-17: frames of frame_length points every frame_step (both read at
// import; frame_length the window's length when a window is given), each
// multiplied by the window and transformed: [batch, frames, bins, 2], the
// first frame_length / 2 + 1 frequencies when onesided (the default).
LogicalResult onnx_import::convertSTFT(Importer &g) {
  ASSIGN_OR_FAIL(signal, g.requireInput(0));
  if (failed(requireFloat(g, signal)))
    return failure();
  RankedTensorType type = Importer::getType(signal);
  if (type.getRank() != 3)
    return g.fail("the signal must be [batch, length, 1 or 2]");
  ASSIGN_OR_FAIL(step, requireLength(g, 1, "frame_step"));
  Value window = g.input(2);
  int64_t length = 0;
  if (window) {
    RankedTensorType windowType = Importer::getType(window);
    if (windowType.getRank() != 1 || !isFloat(window))
      return g.fail("window must be a float vector");
    length = windowType.getDimSize(0);
  }
  if (g.input(3)) {
    ASSIGN_OR_FAIL(given, requireLength(g, 3, "frame_length"));
    if (window && given != length)
      return g.fail("frame_length differs from the window's length");
    length = given;
  }
  if (length < 1)
    return g.fail("a window or a frame_length is required");
  int64_t signalLength = type.getDimSize(1);
  if (length > signalLength)
    return g.fail("frames of " + llvm::Twine(length) +
                  " points do not fit a signal of " +
                  llvm::Twine(signalLength));
  int64_t frames = 1 + (signalLength - length) / step;
  if (frames * length > kMaxMatrixElements)
    return g.fail("more than 2^24 framed points");
  bool onesided = g.getBool("onesided", true);
  ASSIGN_OR_FAIL(parts, splitComplex(g, signal));
  if (onesided && parts.second)
    return g.fail("onesided applies to real signals only");
  // [batch, length] -> [batch, frames, frame_length], windowed.
  SmallVector<int64_t> positions;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t t = 0; t < length; ++t)
      positions.push_back(f * step + t);
  int64_t batch = type.getDimSize(0);
  auto frame = [&](Value part) -> Value {
    if (!part)
      return part;
    Value framed =
        g.reshape(g.takeAlongAxis(part, 1, positions), {batch, frames, length});
    if (!window)
      return framed;
    Value weights = g.convert(window, g.builder.getF64Type());
    return buildBinary<tg::MulOp>(
        g, framed, g.broadcastTo(weights, {batch, frames, length}));
  };
  ASSIGN_OR_FAIL(result, transform(g, frame(parts.first), frame(parts.second),
                                   length, onesided ? length / 2 + 1 : length,
                                   /*inverse=*/false));
  g.setOutput(
      0, joinComplex(g, result.first, result.second, type.getElementType()));
  return success();
}

// MelWeightMatrix-17: the [dft_length / 2 + 1, num_mel_bins] matrix of
// triangular mel filters, a constant computed at import (every input must
// be known there) as ONNX's reference computes it: the band edges evenly
// spaced in mel between the edge frequencies (the edges' mel values
// rounded as the reference's f32 arithmetic rounds them), mapped to
// spectrogram bins with a floor, each filter rising from its left edge to
// 1 at its center and falling to its right edge.
LogicalResult onnx_import::convertMelWeightMatrix(Importer &g) {
  ASSIGN_OR_FAIL(melsValue, g.requireConstantScalar(0, "num_mel_bins"));
  ASSIGN_OR_FAIL(dftValue, g.requireConstantScalar(1, "dft_length"));
  ASSIGN_OR_FAIL(rate, g.requireConstantScalar(2, "sample_rate"));
  ASSIGN_OR_FAIL(lower, g.requireConstantScalar(3, "lower_edge_hertz"));
  ASSIGN_OR_FAIL(upper, g.requireConstantScalar(4, "upper_edge_hertz"));
  int64_t mels = toInt64Saturating(melsValue),
          dftLength = toInt64Saturating(dftValue);
  if (double(mels) != melsValue || mels < 1 || mels > kMaxLength ||
      double(dftLength) != dftValue || dftLength < 1 || dftLength > kMaxLength)
    return g.fail("num_mel_bins and dft_length must be integers in [1, " +
                  llvm::Twine(kMaxLength) + "]");
  if (!(rate > 0) || !(lower >= 0) || !(upper > lower))
    return g.fail("the frequencies must satisfy 0 <= lower_edge_hertz < "
                  "upper_edge_hertz and sample_rate > 0");
  Type elementType = getElementType(*g.builder.getContext(),
                                    int32_t(g.getInt("output_datatype", 1)));
  if (!elementType || !isa<FloatType>(elementType))
    return g.fail("output_datatype must be a float type tg has");
  int64_t bins = dftLength / 2 + 1;
  auto toMel = [](double hertz) {
    float scaled = 2595.0f * std::log1p(float(hertz) / 700.0f);
    return double(scaled) / std::log(10.0);
  };
  double low = toMel(lower), step = (toMel(upper) - low) / double(mels + 2);
  SmallVector<int64_t> edges;
  for (int64_t i = 0; i < mels + 2; ++i) {
    double hertz =
        700 * std::expm1((double(i) * step + low) / 2595 * std::log(10.0));
    double bin = std::floor(double(dftLength + 1) * hertz / rate);
    if (!(bin >= 0 && bin < double(bins)))
      return g.fail("mel band edge " + llvm::Twine(i) +
                    " falls outside the spectrogram's " + llvm::Twine(bins) +
                    " bins (upper_edge_hertz beyond sample_rate / 2?)");
    edges.push_back(int64_t(bin));
  }
  SmallVector<double> values(bins * mels, 0.0);
  for (int64_t i = 0; i < mels; ++i) {
    int64_t left = edges[i], center = edges[i + 1], right = edges[i + 2];
    if (center == left)
      values[center * mels + i] = 1;
    for (int64_t j = left; center > left && j <= center; ++j)
      values[j * mels + i] = double(j - left) / double(center - left);
    for (int64_t j = center; j < right; ++j)
      values[j * mels + i] = double(right - j) / double(right - center);
  }
  g.setOutput(
      0, g.constant(RankedTensorType::get({bins, mels}, elementType), values));
  return success();
}
