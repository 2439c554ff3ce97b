//===- RuntimeTests.cpp - the runtime's unit tests, without MLIR ----------===//
//
// Element formats, Philox's known answers, safetensors round trips and
// errors, and op kernels run on the host target's one thread per block.
//
//===----------------------------------------------------------------------===//

#include "tgc/runtime/FlashAttention.h"
#include "tgc/runtime/Kernels.h"
#include "tgc/runtime/Runtime.h"
#include "tgc/runtime/Safetensors.h"
#include "tgc/runtime/TokenFile.h"

#include "AtomicFile.h"
#include "Checkpoint.h"
#include "Ranks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <tuple>
#include <type_traits>
#include <vector>

using namespace tgc::rt;

static int failures = 0;
#define CHECK(condition)                                                       \
  do {                                                                         \
    if (!(condition)) {                                                        \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,    \
                   #condition);                                                \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static void testFormats() {
  // Ties to even: 1 + 2^-8 is halfway between two bf16 values.
  CHECK(ld(st<bf16>(1.00390625f)) == 1.0f);
  CHECK(ld(st<bf16>(1.01171875f)) == 1.015625f);
  CHECK(st<bf16>(-2.0f).bits == 0xc000);
  // f16: 65519 rounds down to the largest finite, 65520 overflows.
  CHECK(ld(st<f16>(65519.0f)) == 65504.0f);
  CHECK(std::isinf(ld(st<f16>(65520.0f))));
  CHECK(st<f16>(1.0f).bits == 0x3c00);
  CHECK(ld(f16{0x0001}) == std::ldexp(1.0f, -24)); // smallest subnormal
  CHECK(st<f16>(std::ldexp(1.0f, -24)).bits == 0x0001);
  // f8E4M3FN: no infinity, 448 is the largest, overflow is NaN.
  CHECK(ld(st<f8e4m3fn>(448.0f)) == 448.0f);
  CHECK(std::isnan(ld(st<f8e4m3fn>(500.0f))));
  CHECK(st<f8e4m3fn>(1.0f).bits == 0x38);
  CHECK(ld(st<f8e5m2>(57344.0f)) == 57344.0f);
  CHECK(st<f8e5m2>(-1.0f).bits == 0xbc);
  // Every f16 pattern survives a round trip.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float value = ld(f16{static_cast<uint16_t>(bits)});
    if (!std::isnan(value) && st<f16>(value).bits != bits) {
      CHECK(!"f16 round trip");
      break;
    }
  }
  CHECK(st<int32_t>(int64_t(1) << 32) == 0);
  CHECK(st<uint8_t>(int64_t(7)) == 1);
}

static void testPhilox() {
  // Random123's known-answer vectors for philox4x32_10.
  Philox4x32 zero = philox4x32_10({{0, 0, 0, 0}}, 0, 0);
  CHECK(zero.v[0] == 0x6627e8d5u && zero.v[1] == 0xe169c58du &&
        zero.v[2] == 0xbc57ac4cu && zero.v[3] == 0x9b00dbd8u);
  Philox4x32 pi =
      philox4x32_10({{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
                    0xa4093822u, 0x299f31d0u);
  CHECK(pi.v[0] == 0xd16cfe09u && pi.v[1] == 0x94fdccebu &&
        pi.v[2] == 0x5001e420u && pi.v[3] == 0x24126ea1u);
  double u = dropoutUniform(42, 7, 3);
  CHECK(u >= 0.0 && u < 1.0);
  // tg.random's numbers for seed 1234567890123, stream 5 (the words, the
  // uniform and the Box-Muller normal as test/Import/pytorch-random/
  // tgc_philox.py computes them in numpy).
  constexpr uint64_t kSeed = 1234567890123ull;
  Philox4x32 first = philoxDraw(kSeed, 0, 5);
  CHECK(first.v[0] == 394263432u && first.v[1] == 3400469384u);
  CHECK(randomUniform(kSeed, 0, 5) == 394263432u / 256 * 0x1p-24);
  CHECK(randomUniform(kSeed, 2, 5) == 0.7766844034194946);
  CHECK(std::fabs(randomNormal(kSeed, 0, 5) - 0.5665321348458957) < 1e-15);
  CHECK(std::fabs(randomNormal(kSeed, 1, 5) - 0.30541599393831265) < 1e-15);
  // The uniform numbers are exact in a float; the normal's log is finite
  // for the largest first word.
  for (uint64_t index = 0; index < 1000; ++index) {
    double uniform = randomUniform(kSeed, index, 1);
    CHECK(uniform >= 0.0 && uniform < 1.0 &&
          double(static_cast<float>(uniform)) == uniform);
    CHECK(std::isfinite(randomNormal(kSeed, index, 1)));
  }
}

static void testSafetensors() {
  std::string path = "runtime-test.safetensors", error;
  safetensors::Entry a{"w", "F32", {2, 2}, std::vector<char>(16, 1)};
  safetensors::Entry b{"ids", "I64", {3}, std::vector<char>(24, 2)};
  CHECK(safetensors::write(path, {a, b}, {{"tgc.steps", "5"}}, error));
  std::vector<safetensors::Entry> entries;
  std::map<std::string, std::string> metadata;
  CHECK(safetensors::read(path, entries, metadata, error));
  CHECK(entries.size() == 2 && metadata["tgc.steps"] == "5");
  for (const safetensors::Entry &entry : entries)
    CHECK(entry.name == "w" ? entry.data == a.data && entry.shape == a.shape
                            : entry.data == b.data && entry.shape == b.shape);
  // Two tensors of one name are refused, and nothing is written.
  CHECK(!safetensors::write("dup.safetensors", {a, a}, {}, error));
  CHECK(!std::ifstream("dup.safetensors"));
  // A truncated file is an error that says so.
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 4);
  CHECK(!safetensors::read(path, entries, metadata, error));
  CHECK(error.find("truncated") != std::string::npos);
  std::remove(path.c_str());
}

/// The step count a --save checkpoint records: a count, or an error (not
/// a silent 0 or a negative step).
static void testCheckpointSteps() {
  std::string path = "steps-test.safetensors", error;
  ArgumentInfo arg{};
  arg.name = "w";
  arg.dtype = DType::F32;
  arg.rank = 1;
  arg.shape[0] = 2;
  arg.init.role = ArgRole::Param;
  StepInfo info{};
  info.arguments = &arg;
  info.numArguments = 1;
  safetensors::Entry w{"w", "F32", {2}, std::vector<char>(8, 0)};
  for (auto [text, valid, expected] :
       {std::make_tuple("7", true, int64_t(7)),
        {"0", true, int64_t(0)},
        {"-3", false, int64_t(0)},
        {"abc", false, int64_t(0)},
        {"12x", false, int64_t(0)},
        {"", false, int64_t(0)},
        {"99999999999999999999", false, int64_t(0)}}) {
    CHECK(safetensors::write(path, {w}, {{"tgc.steps", text}}, error));
    ArgumentBytes values(1);
    int64_t steps = -1;
    error.clear();
    bool loaded =
        loadCheckpoint(path, info, values, {ArgRole::Param}, steps, error);
    CHECK(loaded == valid);
    CHECK(!valid || steps == expected);
    CHECK(valid || error.find("is not a count of steps") != std::string::npos);
  }
  std::remove(path.c_str());
}

static void testCheckWritable() {
  std::string error;
  // A writable path: the probe leaves no temporary behind.
  CHECK(checkWritable("probe.safetensors", error));
  CHECK(!std::ifstream("probe.safetensors.tmp"));
  CHECK(!std::ifstream("probe.safetensors"));
  // A temporary that is there already is left alone.
  std::ofstream("held.safetensors.tmp") << "keep";
  CHECK(checkWritable("held.safetensors", error));
  std::string kept;
  std::ifstream("held.safetensors.tmp") >> kept;
  CHECK(kept == "keep");
  std::remove("held.safetensors.tmp");
  // A missing directory, a directory.
  CHECK(!checkWritable("no-such-directory/c.safetensors", error));
  CHECK(error.find("No such file or directory") != std::string::npos);
  CHECK(!checkWritable(".", error));
  CHECK(error.find("it is a directory") != std::string::npos);
  // A special file is written through, never replaced.
  CHECK(checkWritable("/dev/null", error));
  CHECK(writeFileAtomically("/dev/null", "x", error));
  CHECK(!std::ifstream("/dev/null.tmp"));
}

__global__ void reduceRows(const float *in, float *out) {
  k::reduce<k::ReduceKind::Sum>(rowThreads(), in, out, 2, 2, Dims{{2, 3}},
                                /*reduced=*/2u, 0.0f);
}
__global__ void softmaxRows(const float *in, float *out) {
  k::softmax<false>(rowThreads(), in, out, 2, 3, 1);
}

static void testKernels() {
  std::vector<float> in = {1, 2, 3, 4, 5, 6}, sums(2), soft(6);
  TGC_LAUNCH(reduceRows, 3, 1, in.data(), sums.data());
  CHECK(sums[0] == 6 && sums[1] == 15);
  TGC_LAUNCH(softmaxRows, 2, 1, in.data(), soft.data());
  float total = soft[0] + soft[1] + soft[2];
  CHECK(std::fabs(total - 1.0f) < 1e-6f && soft[2] > soft[1]);
  CHECK(std::fabs(geluTanh(1.0f) - 0.841192f) < 1e-5f);
}

static void testRandom() {
  RandomSpec ids;
  ids.isFloat = false;
  ids.idBound = 10;
  std::vector<int64_t> a(100), b(100);
  randomInts(ids, 100, 3, 1, a.data());
  randomInts(ids, 100, 3, 1, b.data());
  CHECK(a == b);
  bool inRange = true;
  for (int64_t v : a)
    inRange &= v >= 0 && v < 10;
  CHECK(inRange);
  randomInts(ids, 100, 4, 1, b.data());
  CHECK(a != b);
}

/// A model that shifts its labels itself gets the window as its labels
/// (it predicts labels[t + 1] at t: the next token); the copy task's labels
/// move one position on (it predicts ids[t] at t).
static void testShiftedLabels() {
  std::vector<unsigned char> bytes(2 * 50);
  for (size_t i = 0; i < 50; ++i)
    bytes[2 * i] = static_cast<unsigned char>(i * 3);
  TokenSpan tokens{bytes.data(), 50};
  const int64_t rows = 3, seq = 5;
  std::vector<int64_t> ids(rows * seq), labels(rows * seq),
      shiftedIds(rows * seq), shifted(rows * seq);
  fillTokenWindows(tokens, ids.data(), labels.data(), rows, seq, 4, false);
  fillTokenWindows(tokens, shiftedIds.data(), shifted.data(), rows, seq, 4,
                   true);
  CHECK(shiftedIds == ids && shifted == ids);
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t t = 0; t + 1 < seq; ++t)
      CHECK(labels[row * seq + t] == ids[row * seq + t + 1]);

  std::vector<int32_t> copy = {1, 2, 3, 4, 5, 6};
  shiftCopyLabels(reinterpret_cast<char *>(copy.data()), 2, 3, sizeof(int32_t));
  CHECK((copy == std::vector<int32_t>{1, 1, 2, 4, 4, 5}));
}

/// A data-parallel rank reads only the windows of its rows of the batch,
/// and they are the whole batch's rows.
static void testHeldTokenRows() {
  std::vector<unsigned char> bytes(2 * 300);
  for (size_t i = 0; i < 300; ++i)
    bytes[2 * i] = static_cast<unsigned char>(i * 7), bytes[2 * i + 1] = 1;
  TokenSpan tokens{bytes.data(), 300};
  const int64_t rows = 4, seq = 16;
  std::vector<int64_t> ids(rows * seq), labels(rows * seq);
  fillTokenWindows(tokens, ids.data(), labels.data(), rows, seq, 9,
                   /*labelsShifted=*/false);

  // ids [4, 16] split on the batch over dp=2: rank 1 holds rows 2 and 3.
  MeshInfo mesh{};
  mesh.numAxes = 1;
  mesh.axisSizes[0] = 2;
  ArgumentInfo arg{};
  arg.dtype = DType::I64;
  arg.rank = 2;
  arg.shape[0] = 2, arg.shape[1] = seq;
  arg.globalShape[0] = rows, arg.globalShape[1] = seq;
  std::memset(arg.dimAxes, -1, sizeof(arg.dimAxes));
  arg.dimAxes[0][0] = 0;
  std::vector<bool> held = ranks::getHeldRows(arg, mesh, {1}, seq);
  CHECK((held == std::vector<bool>{false, false, true, true}));
  std::vector<int64_t> mine(rows * seq, -1), myLabels(rows * seq, -1);
  fillTokenWindows(tokens, mine.data(), myLabels.data(), rows, seq, 9,
                   /*labelsShifted=*/false, &held);
  for (int64_t i = 0; i < rows * seq; ++i) {
    bool inBlock = i >= 2 * seq;
    CHECK(inBlock ? mine[i] == ids[i] && myLabels[i] == labels[i]
                  : mine[i] == -1 && myLabels[i] == -1);
  }
  // Split on the sequence instead: every row has a part in every block.
  arg.shape[0] = rows, arg.shape[1] = seq / 2;
  arg.dimAxes[0][0] = -1, arg.dimAxes[1][0] = 0;
  CHECK((ranks::getHeldRows(arg, mesh, {0}, seq) ==
         std::vector<bool>{true, true, true, true}));
  // ZeRO's padded blocks: 3 rows over dp=2, rank 1's block is row 2 and
  // padding.
  arg.shape[0] = 2, arg.shape[1] = seq;
  arg.globalShape[0] = 3;
  arg.dimAxes[0][0] = 0, arg.dimAxes[1][0] = -1;
  CHECK((ranks::getHeldRows(arg, mesh, {1}, seq) ==
         std::vector<bool>{false, false, true}));
}

/// The largest difference between a and b, relative to b's largest value.
static float relativeError(const std::vector<float> &a,
                           const std::vector<float> &b) {
  float scale = 1e-30f, error = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    scale = std::max(scale, std::fabs(b[i]));
    error = std::max(error, std::fabs(a[i] - b[i]));
  }
  return error / scale;
}

/// The CUDA target's tiled attention (FlashAttention.h), run here with one
/// thread per block owning the whole tile, against the host target's
/// reference attention: forward, dq, dk and dv.
template <int DMAX> static void checkFlashAttention(AttentionDesc d) {
  constexpr int kRows = flash::kRows<DMAX>;
  int64_t qRows = d.batch * d.heads * d.queries;
  int64_t kvRows = d.batch * d.kvHeads * d.keys;
  auto random = [](int64_t count, uint32_t seed) {
    std::vector<float> values(count);
    for (int64_t i = 0; i < count; ++i)
      values[i] =
          float((i * 2654435761u + seed * 40503u) % 2001u) / 1000.0f - 1.0f;
    return values;
  };
  std::vector<float> q = random(qRows * d.headSize, 1),
                     k = random(kvRows * d.headSize, 2),
                     v = random(kvRows * d.valueSize, 3),
                     dout = random(qRows * d.valueSize, 4);
  Context context;
  std::vector<float> out(qRows * d.valueSize), lse(qRows);
  std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
  attention(context, d, q.data(), k.data(), v.data(), out.data(), lse.data(),
            "reference");
  attentionGrad(context, d, dout.data(), q.data(), k.data(), v.data(),
                out.data(), lse.data(), dq.data(), dk.data(), dv.data(),
                "reference");
  std::vector<float> fOut(out.size()), fLse(lse.size()), fDq(dq.size()),
      fDk(dk.size()), fDv(dv.size());
  unsigned queryBlocks = d.batch * d.heads * ((d.queries + kRows - 1) / kRows);
  unsigned keyBlocks = d.batch * d.kvHeads * ((d.keys + kRows - 1) / kRows);
  TGC_LAUNCH((flash::flashForward<float, float, DMAX, kRows>), queryBlocks, 1,
             d, q.data(), k.data(), v.data(), fOut.data(), fLse.data());
  // The gradients from the reference forward's output and logsumexp.
  TGC_LAUNCH((flash::flashGradQuery<float, float, DMAX, kRows>), queryBlocks, 1,
             d, dout.data(), q.data(), k.data(), v.data(), out.data(),
             lse.data(), fDq.data());
  TGC_LAUNCH((flash::flashGradKeyValue<float, float, DMAX, kRows>), keyBlocks,
             1, d, dout.data(), q.data(), k.data(), v.data(), out.data(),
             lse.data(), fDk.data(), fDv.data());
  // The GPU's configuration too: a block of kRows threads, a row each,
  // cooperating through shared memory and barriers (CudaCompat.h's host
  // threads).
  std::vector<float> gOut(out.size()), gLse(lse.size()), gDq(dq.size()),
      gDk(dk.size()), gDv(dv.size());
  hostLaunch(
      queryBlocks,
      [&] {
        flash::flashForward<float, float, DMAX, 1>(
            d, q.data(), k.data(), v.data(), gOut.data(), gLse.data());
      },
      kRows);
  hostLaunch(
      queryBlocks,
      [&] {
        flash::flashGradQuery<float, float, DMAX, 1>(
            d, dout.data(), q.data(), k.data(), v.data(), out.data(),
            lse.data(), gDq.data());
      },
      kRows);
  hostLaunch(
      keyBlocks,
      [&] {
        flash::flashGradKeyValue<float, float, DMAX, 1>(
            d, dout.data(), q.data(), k.data(), v.data(), out.data(),
            lse.data(), gDk.data(), gDv.data());
      },
      kRows);
  // The same arithmetic per row in the same order: equal to the bit.
  CHECK(gOut == fOut && gLse == fLse && gDq == fDq && gDk == fDk && gDv == fDv);
  bool sameLse = true;
  for (size_t i = 0; i < lse.size(); ++i)
    sameLse &= std::isinf(lse[i]) ? fLse[i] == lse[i]
                                  : std::fabs(fLse[i] - lse[i]) < 1e-5f;
  CHECK(sameLse);
  CHECK(relativeError(fOut, out) < 1e-5f);
  CHECK(relativeError(fDq, dq) < 1e-5f);
  CHECK(relativeError(fDk, dk) < 1e-5f);
  CHECK(relativeError(fDv, dv) < 1e-5f);
}

static void testFlashAttention() {
  // batch, heads, queries, headSize, kvHeads, keys, valueSize, causal.
  auto desc = [](int64_t batch, int64_t heads, int64_t queries,
                 int64_t headSize, int64_t kvHeads, int64_t keys,
                 int64_t valueSize, bool causal) {
    return AttentionDesc{
        batch,      heads,     queries,
        headSize,   kvHeads,   keys,
        valueSize,  causal,    1.0 / std::sqrt(double(headSize)),
        DType::F32, DType::F32};
  };
  // Tiles that do not divide the sequence, causal and not.
  checkFlashAttention<64>(desc(2, 2, 150, 16, 2, 150, 16, true));
  checkFlashAttention<64>(desc(1, 3, 70, 64, 3, 70, 64, false));
  // Grouped heads, fewer queries than keys (the diagonal moves), and more
  // queries than keys (the first rows see nothing).
  checkFlashAttention<64>(desc(1, 4, 33, 32, 2, 97, 24, true));
  checkFlashAttention<64>(desc(1, 2, 90, 8, 1, 40, 8, true));
  // Head sizes past 64.
  checkFlashAttention<128>(desc(1, 2, 45, 80, 1, 45, 128, true));
}

/// The host target's GEMM epilogues (what one cuBLASLt call computes for a
/// gemm region), each stage against its formula.
static void testGemmEpilogue() {
  Context context;
  // A [2 x 3] times B [3 x 2], row-major.
  float a[] = {1, 2, 3, -4, 5, -6};
  float b[] = {0.5f, -1, 2, 0.25f, -3, 1};
  float product[] = {1 * 0.5f + 2 * 2 + 3 * -3, 1 * -1 + 2 * 0.25f + 3 * 1,
                     -4 * 0.5f + 5 * 2 + -6 * -3, -4 * -1 + 5 * 0.25f - 6};
  GemmDesc desc{false, false, true,       1,          2,
                2,     3,     DType::F32, DType::F32, DType::F32};

  // Bias, GELU, the pre-activation as aux.
  float bias[] = {0.75f, -2};
  float d[4], aux[4];
  GemmEpilogue gelu;
  gelu.bias = bias;
  gelu.activation = GemmActivation::Gelu;
  gelu.aux = aux;
  CHECK(gemmEpilogue(context, desc, gelu, a, b, d, "gelu"));
  for (int i = 0; i < 4; ++i) {
    CHECK(aux[i] == product[i] + bias[i % 2]);
    CHECK(d[i] == geluTanh(aux[i]));
  }

  // A residual that is D itself (cuBLASLt's C = D), then f32 -> bf16.
  float residual[] = {1, 2, 3, 4};
  GemmEpilogue add;
  add.residual = residual;
  CHECK(gemmEpilogue(context, desc, add, a, b, residual, "residual"));
  for (int i = 0; i < 4; ++i)
    CHECK(residual[i] == product[i] + float(i + 1));
  bf16 rounded[4];
  GemmDesc toBF16 = desc;
  toBF16.c = DType::BF16;
  CHECK(gemmEpilogue(context, toBF16, GemmEpilogue{}, a, b, rounded, "cast"));
  for (int i = 0; i < 4; ++i)
    CHECK(ld(rounded[i]) == roundToBF16(product[i]));

  // DGELU with the column sums of its output.
  float grad[4], sums[2];
  GemmEpilogue dgelu;
  dgelu.activation = GemmActivation::DGelu;
  dgelu.aux = aux;
  dgelu.biasGradOf = GemmBiasGrad::Output;
  dgelu.biasGrad = sums;
  CHECK(gemmEpilogue(context, desc, dgelu, a, b, grad, "dgelu"));
  for (int i = 0; i < 4; ++i)
    CHECK(grad[i] == product[i] * geluTanhGrad(aux[i]));
  CHECK(sums[0] == grad[0] + grad[2] && sums[1] == grad[1] + grad[3]);

  // BGRADB: B's column sums over k; BGRADA: those of A read transposed
  // (A^T B with A [3 x 2]).
  GemmEpilogue gradB;
  gradB.biasGradOf = GemmBiasGrad::B;
  gradB.biasGrad = sums;
  CHECK(gemmEpilogue(context, desc, gradB, a, b, d, "bgradb"));
  CHECK(sums[0] == 0.5f + 2 - 3 && sums[1] == -1 + 0.25f + 1);
  GemmDesc transposed{true, false, true,       1,          2,
                      2,    3,     DType::F32, DType::F32, DType::F32};
  GemmEpilogue gradA;
  gradA.biasGradOf = GemmBiasGrad::A;
  gradA.biasGrad = sums;
  CHECK(gemmEpilogue(context, transposed, gradA, a, b, d, "bgrada"));
  CHECK(sums[0] == 1 + 3 + 5 && sums[1] == 2 - 4 - 6);
  CHECK(d[0] == 1 * 0.5f + 3 * 2 + 5 * -3);
}

/// The norms' dscale and dbias (normGradColumns) with the host target's one
/// thread per block (the rows of each column in order) and with the GPU's
/// block of 96 threads (three lanes of 32 columns, combined in lane order):
/// each against sums in double, and the threaded run the same run after
/// run.
static void testNormGradColumns() {
  const int64_t rows = 37, width = 45, chunk = 32;
  std::vector<float> dy(rows * width), x(rows * width), mean(rows), rstd(rows);
  for (int64_t i = 0; i < rows * width; ++i) {
    dy[i] = std::sin(0.37f * i);
    x[i] = std::cos(0.11f * i) * 3;
  }
  for (int64_t r = 0; r < rows; ++r) {
    mean[r] = 0.1f * r;
    rstd[r] = 1.0f + 0.01f * r;
  }
  std::vector<double> scale(width), bias(width);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j) {
      float xhat = (x[r * width + j] - mean[r]) * rstd[r];
      scale[j] += double(dy[r * width + j]) * xhat;
      bias[j] += dy[r * width + j];
    }
  unsigned blocks = (width + chunk - 1) / chunk;
  auto run = [&](unsigned threads, std::vector<float> &dscale,
                 std::vector<float> &dbias) {
    dscale.assign(width, -1);
    dbias.assign(width, -1);
    hostLaunch(
        blocks,
        [&] {
          k::normGradColumns<true>(rowThreads(), dy.data(), x.data(),
                                   mean.data(), rstd.data(), dscale.data(),
                                   dbias.data(), rows, width, chunk);
        },
        threads);
  };
  std::vector<float> oneScale, oneBias, gpuScale, gpuBias, again, againBias;
  run(1, oneScale, oneBias);
  run(96, gpuScale, gpuBias);
  run(96, again, againBias);
  for (int64_t j = 0; j < width; ++j) {
    CHECK(std::fabs(oneScale[j] - scale[j]) <=
          1e-4 * (1 + std::fabs(scale[j])));
    CHECK(std::fabs(oneBias[j] - bias[j]) <= 1e-4 * (1 + std::fabs(bias[j])));
    CHECK(std::fabs(gpuScale[j] - scale[j]) <=
          1e-4 * (1 + std::fabs(scale[j])));
    CHECK(std::fabs(gpuBias[j] - bias[j]) <= 1e-4 * (1 + std::fabs(bias[j])));
  }
  CHECK(gpuScale == again && gpuBias == againBias);
}

/// topK against a stable sort of each row (ties by position, NaN above
/// every number), largest and smallest, on 1 and 4 threads per block: rows
/// with ties, NaNs, sorted ascending and descending, and k from 0 to the
/// width.
static void testTopK() {
  const int64_t rows = 5, width = 12;
  std::vector<float> in(rows * width);
  for (int64_t j = 0; j < width; ++j) {
    in[0 * width + j] = float(j % 4);       // ties
    in[1 * width + j] = float(j);           // ascending
    in[2 * width + j] = float(width - j);   // descending
    in[3 * width + j] = std::sin(1.3f * j); // distinct
    in[4 * width + j] = j % 5 == 2 ? NAN : float(j % 3);
  }
  for (bool smallest : {false, true})
    for (int64_t k : {int64_t(0), int64_t(1), int64_t(5), width})
      for (unsigned threads : {1u, 4u}) {
        std::vector<float> values(rows * k, -7);
        std::vector<int64_t> indices(rows * k, -7);
        hostLaunch(
            2,
            [&] {
              k::topK(gridThreads(), in.data(), values.data(), indices.data(),
                      rows, width, k, 7, smallest);
            },
            threads);
        for (int64_t r = 0; r < rows; ++r) {
          std::vector<int64_t> order(width);
          for (int64_t j = 0; j < width; ++j)
            order[j] = j;
          const float *row = in.data() + r * width;
          std::stable_sort(
              order.begin(), order.end(), [&](int64_t a, int64_t b) {
                float x = row[a], y = row[b];
                if (std::isnan(x) || std::isnan(y))
                  return smallest ? !std::isnan(x) && std::isnan(y)
                                  : std::isnan(x) && !std::isnan(y);
                return smallest ? x < y : x > y;
              });
          for (int64_t j = 0; j < k; ++j) {
            CHECK(indices[r * k + j] == order[j]);
            CHECK(std::memcmp(&values[r * k + j], &row[order[j]],
                              sizeof(float)) == 0);
          }
        }
      }
}

/// Column reductions (reduceColumns, tg.reduce over the leading
/// dimensions): with one thread per block the same bits as the block per
/// output of `reduce` (the interpreter's order); with the GPU's 96 threads
/// (three lanes) close to the sum in double and the same run after run; a
/// NaN in a column is that column's max, and a mean divides by the rows.
static void testReduceColumns() {
  const int64_t rows = 37, width = 45, chunk = 32;
  std::vector<float> in(rows * width);
  for (int64_t i = 0; i < rows * width; ++i)
    in[i] = std::sin(0.37f * i) * 100;
  in[5 * width + 7] = NAN;
  std::vector<double> exact(width);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j)
      exact[j] += in[r * width + j];
  unsigned blocks = (width + chunk - 1) / chunk;
  auto columns = [&](auto kind, unsigned threads) {
    constexpr k::ReduceKind Kind = decltype(kind)::value;
    std::vector<float> out(width, -1);
    float init = Kind == k::ReduceKind::Max ? -INFINITY : 0.0f;
    hostLaunch(
        blocks,
        [&] {
          k::reduceColumns<Kind>(rowThreads(), in.data(), out.data(), rows,
                                 width, init, chunk);
        },
        threads);
    return out;
  };
  auto perOutput = [&](auto kind) {
    constexpr k::ReduceKind Kind = decltype(kind)::value;
    std::vector<float> out(width, -1);
    float init = Kind == k::ReduceKind::Max ? -INFINITY : 0.0f;
    hostLaunch(
        width,
        [&] {
          k::reduce<Kind>(rowThreads(), in.data(), out.data(), width, 2,
                          Dims{{rows, width}}, 1u, init);
        },
        1);
    return out;
  };
  using Sum = std::integral_constant<k::ReduceKind, k::ReduceKind::Sum>;
  using Max = std::integral_constant<k::ReduceKind, k::ReduceKind::Max>;
  using Mean = std::integral_constant<k::ReduceKind, k::ReduceKind::Mean>;
  auto same = [](const std::vector<float> &a, const std::vector<float> &b) {
    return std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  };
  CHECK(same(columns(Sum{}, 1), perOutput(Sum{})));
  CHECK(same(columns(Max{}, 1), perOutput(Max{})));
  CHECK(same(columns(Mean{}, 1), perOutput(Mean{})));
  std::vector<float> gpu = columns(Sum{}, 96), max = columns(Max{}, 96),
                     mean = columns(Mean{}, 96);
  CHECK(same(gpu, columns(Sum{}, 96)));
  for (int64_t j = 0; j < width; ++j) {
    if (j == 7) {
      CHECK(std::isnan(gpu[j]) && std::isnan(max[j]));
      continue;
    }
    CHECK(std::fabs(gpu[j] - exact[j]) <= 1e-4 * (1 + std::fabs(exact[j])));
    CHECK(std::fabs(mean[j] - exact[j] / rows) <=
          1e-4 * (1 + std::fabs(exact[j] / rows)));
    float expected = -INFINITY;
    for (int64_t r = 0; r < rows; ++r)
      expected = std::max(expected, in[r * width + j]);
    CHECK(max[j] == expected);
  }
}

/// embeddingGradChains and embeddingGradSums against the interpreter's
/// loop (each id's row added in position order to a zeroed table): the
/// same bits, on 1 and 4 threads per block and grids of 1 and 3 blocks,
/// with repeated ids, an id at every position, rows no id names, and no
/// ids at all.
static void testEmbeddingGrad() {
  const int64_t rows = 9, width = 5;
  std::vector<std::vector<int64_t>> cases = {{3, 1, 3, 3, 8, 0, 1, 3},
                                             {4, 4, 4, 4, 4, 4},
                                             {0, 1, 2, 3, 4, 5, 6, 7, 8},
                                             {},
                                             {7}};
  for (const std::vector<int64_t> &ids : cases) {
    int64_t count = ids.size();
    std::vector<float> dy(count * width);
    for (int64_t i = 0; i < count * width; ++i)
      dy[i] = std::sin(0.7f * i + 0.1f) * (i % 3 ? 1e3f : 1e-3f);
    std::vector<float> expected(rows * width, 0.0f);
    for (int64_t i = 0; i < count; ++i)
      for (int64_t d = 0; d < width; ++d)
        expected[ids[i] * width + d] += dy[i * width + d];
    for (unsigned grid : {1u, 3u})
      for (unsigned threads : {1u, 4u}) {
        std::vector<float> out(rows * width, -7);
        std::vector<int64_t> chains(count, -7);
        hostLaunch(
            grid,
            [&] {
              k::embeddingGradChains(gridThreads(), ids.data(), chains.data(),
                                     out.data(), count, width, rows);
            },
            threads);
        hostLaunch(
            grid,
            [&] {
              k::embeddingGradSums(gridThreads(), dy.data(), ids.data(),
                                   chains.data(), out.data(), count, width);
            },
            threads);
        CHECK(std::memcmp(out.data(), expected.data(),
                          out.size() * sizeof(float)) == 0);
      }
  }
}

/// fakeQuant's scale from the amax history (NaN ignored; 0 or infinity:
/// 1), margin, clamping to the format's largest value, rounding to E4M3FN
/// and E5M2, NaN kept; 1 and 4 threads per block.
static void testFakeQuant() {
  struct Case {
    std::vector<float> history;
    int margin;
    bool e4m3;
    std::vector<float> x, expected;
  };
  std::vector<Case> cases = {
      // amax 0: scale 1; 0.3 rounds to 0.3125 in E4M3; clamped at 448.
      {{0, 0}, 0, true, {1000, 0.3f, -1000, NAN}, {448, 0.3125f, -448, NAN}},
      // amax 2 (the NaN ignored): scale 2^floor(log2(224)) = 128.
      {{2, NAN}, 0, true, {1, 3, 4, -0.01f}, {1, 3, 3.5f, -0.009765625f}},
      // margin 1: scale 64; 4 * 64 = 256 fits.
      {{2}, 1, true, {4}, {4}},
      // An infinite amax: scale 1. E5M2: 57344 the largest value.
      {{INFINITY}, 0, false, {1e6f, 0.3f}, {57344, 0.3125f}},
  };
  for (const Case &c : cases)
    for (unsigned threads : {1u, 4u}) {
      std::vector<float> out(c.x.size(), -7);
      hostLaunch(
          2,
          [&] {
            if (c.e4m3)
              k::fakeQuant<true>(gridThreads(), c.x.data(), c.history.data(),
                                 out.data(), int64_t(c.x.size()),
                                 int64_t(c.history.size()), 448.0, c.margin);
            else
              k::fakeQuant<false>(gridThreads(), c.x.data(), c.history.data(),
                                  out.data(), int64_t(c.x.size()),
                                  int64_t(c.history.size()), 57344.0, c.margin);
          },
          threads);
      for (size_t i = 0; i < c.x.size(); ++i)
        CHECK(std::isnan(c.expected[i]) ? std::isnan(out[i])
                                        : out[i] == c.expected[i]);
    }
}

int main() {
  testFormats();
  testPhilox();
  testSafetensors();
  testCheckpointSteps();
  testCheckWritable();
  testKernels();
  testRandom();
  testFlashAttention();
  testGemmEpilogue();
  testNormGradColumns();
  testReduceColumns();
  testTopK();
  testEmbeddingGrad();
  testFakeQuant();
  testHeldTokenRows();
  testShiftedLabels();
  if (failures)
    std::fprintf(stderr, "%d check(s) failed\n", failures);
  else
    std::printf("runtime tests passed\n");
  return failures ? 1 : 0;
}
