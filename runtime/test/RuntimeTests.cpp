//===- RuntimeTests.cpp - the runtime's unit tests, without MLIR ----------===//
//
// Element formats, Philox's known answers, safetensors round trips and
// errors, op kernels run on the host target's one thread per block, and
// the host target's workers (at least four, TGC_HOST_WORKERS, whatever the
// CPUs) running blocks, GEMMs and fibers of a block.
//
//===----------------------------------------------------------------------===//

#include "tgc/runtime/Dataset.h"
#include "tgc/runtime/FlashAttention.h"
#include "tgc/runtime/Kernels.h"
#include "tgc/runtime/LrSchedule.h"
#include "tgc/runtime/Runtime.h"
#include "tgc/runtime/Safetensors.h"
#include "tgc/runtime/TiledGemm.h"
#include "tgc/runtime/TokenFile.h"

#include "AtomicFile.h"
#include "Checkpoint.h"
#include "Ranks.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <tuple>
#include <type_traits>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

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

/// A parameter 'w' of `size` elements of `dtype`.
static ArgumentInfo makeVectorParam(DType dtype, int64_t size) {
  ArgumentInfo arg{};
  arg.name = "w";
  arg.dtype = dtype;
  arg.rank = 1;
  arg.shape[0] = size;
  arg.init.role = ArgRole::Param;
  arg.isModelValue = true;
  return arg;
}

/// The step count a --save checkpoint records: a count, or an error (not
/// a silent 0 or a negative step).
static void testCheckpointSteps() {
  std::string path = "steps-test.safetensors", error;
  ArgumentInfo arg = makeVectorParam(DType::F32, 2);
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

/// Checkpoints of the types safetensors has no one-byte name for: a
/// f8E4M3FNUZ parameter is saved as F32 and read back bit for bit; an F32
/// file loads into f16 rounded; an I8 file loads into i4 when its values
/// fit, and not otherwise; a float file does not load into integers.
static void testCheckpointFileTypes() {
  std::string path = "types-test.safetensors", error;
  ArgumentInfo arg = makeVectorParam(DType::F8E4M3FNUZ, 3);
  StepInfo info{};
  info.arguments = &arg;
  info.numArguments = 1;
  ArgumentBytes saved = {{char(0x00), char(0x7f), char(0xc8)}};
  CHECK(saveCheckpoint(path, info, saved, {ArgRole::Param}, 1, error));
  std::vector<safetensors::Entry> entries;
  std::map<std::string, std::string> metadata;
  CHECK(safetensors::read(path, entries, metadata, error));
  CHECK(entries.size() == 1 && entries[0].dtype == "F32" &&
        entries[0].data.size() == 12);
  float values[3];
  std::memcpy(values, entries[0].data.data(), sizeof(values));
  CHECK(values[0] == 0.0f && values[1] == 240.0f && values[2] == -2.0f);
  ArgumentBytes loaded(1);
  int64_t steps = 0;
  CHECK(loadCheckpoint(path, info, loaded, {ArgRole::Param}, steps, error));
  CHECK(loaded[0] == saved[0] && steps == 1);

  arg.dtype = DType::F16;
  float wide[3] = {1.0f, 1.0f + 0x1p-12f, 65504.0f};
  safetensors::Entry f32{"w", "F32", {3}, std::vector<char>(12)};
  std::memcpy(f32.data.data(), wide, sizeof(wide));
  CHECK(safetensors::write(path, {f32}, {}, error));
  CHECK(loadImportedParams(path, info, loaded, error));
  CHECK(loaded[0].size() == 6 &&
        ld(reinterpret_cast<f16 *>(loaded[0].data())[1]) == 1.0f);
  CHECK(ld(reinterpret_cast<f16 *>(loaded[0].data())[2]) == 65504.0f);

  arg.dtype = DType::I4;
  safetensors::Entry i8{"w", "I8", {3}, {char(-8), char(7), char(3)}};
  CHECK(safetensors::write(path, {i8}, {}, error));
  CHECK(loadImportedParams(path, info, loaded, error));
  CHECK(loaded[0] == i8.data);
  i8.data[1] = 9;
  CHECK(safetensors::write(path, {i8}, {}, error));
  CHECK(!loadImportedParams(path, info, loaded, error));
  CHECK(error.find("holds 9 at element 1") != std::string::npos);
  CHECK(safetensors::write(path, {f32}, {}, error));
  CHECK(!loadImportedParams(path, info, loaded, error));
  CHECK(error.find("is F32 [3]; the step takes I8 [3]") != std::string::npos);
  std::remove(path.c_str());
}

/// On a mesh, a rank reads only its block of each value from the mapped
/// file: the block takeBlock cuts from the whole value read on one device
/// (converted alike, ZeRO's padding zero), and its values alone checked.
static void testCheckpointBlocks() {
  std::string path = "blocks-test.safetensors", error;
  // A bf16 [5, 6] parameter from an F32 file, split on its rows over dp=2
  // (padded to 6: ZeRO) and on its columns over tp=3.
  StepInfo local{};
  local.mesh.numAxes = 2;
  local.mesh.axisSizes[0] = 2, local.mesh.axisSizes[1] = 3;
  ArgumentInfo block = makeVectorParam(DType::BF16, 3);
  block.rank = 2;
  block.shape[1] = 2;
  block.globalShape[0] = 5, block.globalShape[1] = 6;
  std::memset(block.dimAxes, -1, sizeof(block.dimAxes));
  block.dimAxes[0][0] = 0, block.dimAxes[1][0] = 1;
  local.arguments = &block;
  local.numArguments = 1;
  ArgumentInfo whole = ranks::getGlobalArgument(block);
  StepInfo global = local;
  global.arguments = &whole;
  std::vector<float> values(30);
  for (int i = 0; i < 30; ++i)
    values[i] = 1.0f + float(i) / 1024.0f; // not all bf16: rounded
  safetensors::Entry w{"w", "F32", {5, 6}, std::vector<char>(120)};
  std::memcpy(w.data.data(), values.data(), 120);
  CHECK(safetensors::write(path, {w}, {}, error));
  ArgumentBytes all(1);
  CHECK(loadImportedParams(path, global, all, error));
  for (int64_t rank = 0; rank < 6; ++rank) {
    DeviceBlocks blocks{&local, ranks::getCoordinates(local.mesh, rank)};
    ArgumentBytes mine(1);
    CHECK(loadImportedParams(path, global, mine, error, &blocks));
    CHECK(mine[0] ==
          ranks::takeBlock(block, local.mesh, blocks.coordinates, all[0]));
    CHECK(mine[0].size() == 3 * 2 * 2);
  }
  // A NaN at element 29 (row 4, column 5): rank 5 (dp 1, tp 2) holds it
  // and names it by its place in the whole value; rank 0 does not see it.
  values[29] = NAN;
  std::memcpy(w.data.data(), values.data(), 120);
  CHECK(safetensors::write(path, {w}, {}, error));
  ArgumentBytes mine(1);
  DeviceBlocks first{&local, ranks::getCoordinates(local.mesh, 0)};
  CHECK(loadImportedParams(path, global, mine, error, &first));
  DeviceBlocks last{&local, ranks::getCoordinates(local.mesh, 5)};
  int64_t steps = 0;
  CHECK(!loadCheckpoint(path, global, mine, {ArgRole::Param}, steps, error,
                        &last));
  CHECK(error.find("holds NaN at element 29") != std::string::npos);
  std::remove(path.c_str());
}

/// A streamed write holds one tensor at a time and calls its producer for
/// every tensor, in order, whatever fails (the producer may take part in
/// collectives): a producer's failure or an unwritable path leaves no file
/// and names the cause.
static void testStreamedWrite() {
  std::string path = "streamed-test.safetensors", error;
  std::vector<safetensors::EntryView> entries(3);
  for (int i = 0; i < 3; ++i) {
    entries[i].name = "t" + std::to_string(i);
    entries[i].dtype = "F32";
    entries[i].shape = {i + 1};
    entries[i].size = 4 * (i + 1);
  }
  std::vector<size_t> calls;
  auto produce = [&](bool failSecond) {
    return
        [&, failSecond](size_t i, std::vector<char> &bytes, std::string &why) {
          calls.push_back(i);
          if (failSecond && i == 1) {
            why = "no bytes for t1";
            return false;
          }
          std::vector<float> values(i + 1, float(i));
          bytes.resize(values.size() * 4);
          std::memcpy(bytes.data(), values.data(), bytes.size());
          return true;
        };
  };
  CHECK(safetensors::writeStreamed(path, entries, {}, produce(false), error));
  CHECK((calls == std::vector<size_t>{0, 1, 2}));
  std::vector<safetensors::Entry> read;
  std::map<std::string, std::string> metadata;
  CHECK(safetensors::read(path, read, metadata, error));
  CHECK(read.size() == 3 && read[2].shape == std::vector<int64_t>{3} &&
        read[2].data.size() == 12);
  float last = 0;
  std::memcpy(&last, read[2].data.data() + 8, 4);
  CHECK(last == 2.0f);
  std::remove(path.c_str());

  calls.clear();
  CHECK(!safetensors::writeStreamed(path, entries, {}, produce(true), error));
  CHECK((calls == std::vector<size_t>{0, 1, 2}));
  CHECK(error == "no bytes for t1");
  CHECK(!std::ifstream(path) && !std::ifstream(path + ".tmp"));

  calls.clear();
  std::string missing = "no-such-directory/streamed.safetensors";
  CHECK(
      !safetensors::writeStreamed(missing, entries, {}, produce(false), error));
  CHECK((calls == std::vector<size_t>{0, 1, 2}));
  CHECK(error.find("cannot write") != std::string::npos);
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
  // A process that ends in the middle of a write leaves no partial
  // temporary behind: std::exit (as a failed transfer between stages
  // does), and SIGTERM (the launcher stopping the ranks; Ctrl-C's SIGINT
  // alike), which still ends it by the signal.
  auto endsWriting = [](const char *path, void (*end)()) {
    pid_t child = ::fork();
    if (child == 0) {
      std::string ignored;
      writeFileAtomically(
          path,
          [end](std::ostream &out) {
            out << "partial";
            out.flush();
            end();
          },
          ignored);
      std::_Exit(2);
    }
    int status = 0;
    CHECK(child > 0 && ::waitpid(child, &status, 0) == child);
    CHECK(!std::ifstream(std::string(path) + ".tmp"));
    CHECK(!std::ifstream(path));
    return status;
  };
  int status = endsWriting("exits.safetensors", [] { std::exit(1); });
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
  status = endsWriting("stopped.safetensors", [] { std::raise(SIGTERM); });
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
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
/// The learning rate schedule: llm.c's linear warmup, then a cosine that
/// reaches 0 after decaySteps and stays there; constant without either.
static void testLrSchedule() {
  LrSchedule constant;
  CHECK(constant.isConstant() && constant.at(0.5, 0) == 0.5 &&
        constant.at(0.5, 1000) == 0.5);
  LrSchedule warmup{4, false, 0};
  CHECK(!warmup.isConstant());
  CHECK(warmup.at(0.4, 0) == 0.1 && warmup.at(0.4, 1) == 0.2 &&
        warmup.at(0.4, 3) == 0.4 && warmup.at(0.4, 10) == 0.4);
  LrSchedule cosine{2, true, 6};
  CHECK(cosine.at(1.0, 1) == 1.0 && cosine.at(1.0, 2) == 1.0);
  // Halfway from the warmup's end (2) to decaySteps (6): half the peak.
  CHECK(std::abs(cosine.at(1.0, 4) - 0.5) < 1e-15);
  CHECK(cosine.at(1.0, 5) > 0 && cosine.at(1.0, 5) < 0.5);
  CHECK(cosine.at(1.0, 6) < 1e-15 && cosine.at(1.0, 6) >= 0);
  CHECK(cosine.at(1.0, 100) == cosine.at(1.0, 6));
  // Towards a floor: the same cosine between the peak and minLr.
  LrSchedule floor{2, true, 6, 0.2};
  CHECK(std::abs(floor.at(1.0, 4) - 0.6) < 1e-15 && floor.at(1.0, 6) == 0.2 &&
        floor.at(1.0, 50) == 0.2 && floor.at(1.0, 0) == 0.5);
  // A decay that ends within the warmup leaves the peak after it.
  LrSchedule degenerate{4, true, 3};
  CHECK(degenerate.at(1.0, 10) == 1.0);
}

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

/// An example file's order: each epoch a permutation of the examples (the
/// left-over ones waiting for another epoch), epochs in different orders,
/// the same for the same seed; a rank's rows gathered as the whole batch's.
static void testExampleOrder() {
  const int64_t examples = 11, batch = 3;
  DatasetOrder order(examples, batch, 5), again(examples, batch, 5);
  std::vector<std::vector<int64_t>> epochs;
  for (unsigned epoch = 0; epoch < 3; ++epoch) {
    std::vector<int64_t> seen;
    for (unsigned j = 0; j < examples / batch; ++j) {
      std::vector<int64_t> rows = order.examplesOf(epoch * 3 + j);
      CHECK(int64_t(rows.size()) == batch);
      CHECK(rows == again.examplesOf(epoch * 3 + j));
      seen.insert(seen.end(), rows.begin(), rows.end());
    }
    std::vector<int64_t> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
    CHECK(sorted.front() >= 0 && sorted.back() < examples);
    epochs.push_back(seen);
  }
  CHECK(epochs[0] != epochs[1] && epochs[1] != epochs[2]);
  // A step of an earlier epoch after a later one: the same examples.
  CHECK(order.examplesOf(1) == again.examplesOf(1));
  CHECK(DatasetOrder(examples, batch, 6).examplesOf(0) != order.examplesOf(0));

  // Examples of 2 I32 elements; the batch's rows 0 and 2 held.
  std::vector<int32_t> values(examples * 2);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = int32_t(100 + i);
  DatasetTensor tensor;
  tensor.type = detail::FileType::I32;
  tensor.data = reinterpret_cast<const char *>(values.data());
  tensor.exampleElements = 2;
  std::vector<int64_t> rows = {4, 0, 9}, whole(6, -1), mine(6, -1);
  auto noFloat = [](int64_t, double) {};
  gatherExamples(
      tensor, rows, [&](int64_t j, int64_t v) { whole[j] = v; }, noFloat);
  CHECK((whole == std::vector<int64_t>{108, 109, 100, 101, 118, 119}));
  std::vector<bool> held = {true, false, true};
  gatherExamples(
      tensor, rows, [&](int64_t j, int64_t v) { mine[j] = v; }, noFloat, &held);
  CHECK((mine == std::vector<int64_t>{108, 109, -1, -1, 118, 119}));
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

/// `count` values in [-1, 1), a hash of the index and `seed`.
static std::vector<float> pseudoRandom(int64_t count, uint32_t seed) {
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] =
        float((i * 2654435761u + seed * 40503u) % 2001u) / 1000.0f - 1.0f;
  return values;
}

static bool allFinite(const std::vector<float> &values) {
  return std::all_of(values.begin(), values.end(),
                     [](float x) { return std::isfinite(x); });
}

/// Points `d` at an attention bias of `shape` ([batch, heads, queries,
/// keys], 1 on a broadcast dimension, whose stride is then 0), stored in
/// `values` (which must outlive the uses of `d`): value(b, h, i, j) for
/// each element of the shape.
template <typename Value>
static void attachBias(AttentionDesc &d, std::vector<float> &values,
                       std::array<int64_t, 4> shape, Value &&value) {
  values.clear();
  for (int64_t b = 0; b < shape[0]; ++b)
    for (int64_t h = 0; h < shape[1]; ++h)
      for (int64_t i = 0; i < shape[2]; ++i)
        for (int64_t j = 0; j < shape[3]; ++j)
          values.push_back(value(b, h, i, j));
  int64_t stride = 1;
  for (int dim = 3; dim >= 0; --dim) {
    d.biasStrides[dim] = shape[dim] == 1 ? 0 : stride;
    stride *= shape[dim];
  }
  d.bias = values.data();
}

/// A value in [-1, 1) for bias element (b, h, i, j).
static float noise(int64_t b, int64_t h, int64_t i, int64_t j) {
  uint64_t n = uint64_t(((b * 131 + h) * 1031 + i) * 2053 + j);
  return float(n * 2654435761u % 2001u) / 1000.0f - 1.0f;
}

/// Pseudo-random q, k, v and output gradient for `d` (from seeds `seed` to
/// `seed + 3`), and the host target's reference attention of them: output,
/// logsumexp and the gradients of q, k and v.
struct AttentionRun {
  std::vector<float> q, k, v, dout, out, lse, dq, dk, dv;
};
static AttentionRun runReferenceAttention(const AttentionDesc &d,
                                          uint32_t seed) {
  int64_t qRows = d.batch * d.heads * d.queries;
  int64_t kvRows = d.batch * d.kvHeads * d.keys;
  AttentionRun r;
  r.q = pseudoRandom(qRows * d.headSize, seed);
  r.k = pseudoRandom(kvRows * d.headSize, seed + 1);
  r.v = pseudoRandom(kvRows * d.valueSize, seed + 2);
  r.dout = pseudoRandom(qRows * d.valueSize, seed + 3);
  r.out.resize(qRows * d.valueSize);
  r.lse.resize(qRows);
  r.dq.resize(r.q.size());
  r.dk.resize(r.k.size());
  r.dv.resize(r.v.size());
  Context context;
  attention(context, d, r.q.data(), r.k.data(), r.v.data(), r.out.data(),
            r.lse.data(), "reference");
  attentionGrad(context, d, r.dout.data(), r.q.data(), r.k.data(), r.v.data(),
                r.out.data(), r.lse.data(), r.dq.data(), r.dk.data(),
                r.dv.data(), "reference");
  return r;
}

/// The CUDA target's tiled attention (FlashAttention.h), run here with one
/// thread per block owning the whole tile, against the host target's
/// reference attention: forward, dq, dk and dv. Returns the number of query
/// rows that see no key with a score above -inf (a logsumexp of +inf).
template <int DMAX> static int64_t checkFlashAttention(AttentionDesc d) {
  constexpr int kRows = flash::kRows<DMAX>;
  AttentionRun run = runReferenceAttention(d, 1);
  const std::vector<float> &q = run.q, &k = run.k, &v = run.v, &dout = run.dout,
                           &out = run.out, &lse = run.lse, &dq = run.dq,
                           &dk = run.dk, &dv = run.dv;
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
  // Logsumexps agree (relatively: a finite mask of -3.4e38 gives ones near
  // it), +inf exactly on the rows that see nothing, never -inf or NaN; such
  // rows' outputs are zeros.
  bool sameLse = true, emptyRowsZero = true;
  int64_t emptyRows = 0;
  for (size_t i = 0; i < lse.size(); ++i) {
    if (std::isinf(lse[i]) || std::isinf(fLse[i])) {
      sameLse &= lse[i] == INFINITY && fLse[i] == INFINITY;
      ++emptyRows;
      for (int64_t e = 0; e < d.valueSize; ++e)
        emptyRowsZero &= out[i * d.valueSize + e] == 0.0f &&
                         fOut[i * d.valueSize + e] == 0.0f;
    } else {
      sameLse &= std::fabs(fLse[i] - lse[i]) <=
                 1e-5f * std::max(1.0f, std::fabs(lse[i]));
    }
  }
  CHECK(sameLse);
  CHECK(emptyRowsZero);
  CHECK(allFinite(out) && allFinite(fOut));
  CHECK(allFinite(dq) && allFinite(dk) && allFinite(dv));
  CHECK(allFinite(fDq) && allFinite(fDk) && allFinite(fDv));
  CHECK(relativeError(fOut, out) < 1e-5f);
  CHECK(relativeError(fDq, dq) < 1e-5f);
  CHECK(relativeError(fDk, dk) < 1e-5f);
  CHECK(relativeError(fDv, dv) < 1e-5f);
  return emptyRows;
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
  CHECK(checkFlashAttention<64>(desc(2, 2, 150, 16, 2, 150, 16, true)) == 0);
  CHECK(checkFlashAttention<64>(desc(1, 3, 70, 64, 3, 70, 64, false)) == 0);
  // Grouped heads, fewer queries than keys (the diagonal moves), and more
  // queries than keys (the first 50 rows of each head see nothing).
  CHECK(checkFlashAttention<64>(desc(1, 4, 33, 32, 2, 97, 24, true)) == 0);
  CHECK(checkFlashAttention<64>(desc(1, 2, 90, 8, 1, 40, 8, true)) == 100);
  // Head sizes past 64.
  CHECK(checkFlashAttention<128>(desc(1, 2, 45, 80, 1, 45, 128, true)) == 0);

  // An additive bias. A padding mask [batch, 1, 1, keys]: batch 1 sees its
  // first 41 keys only.
  const float inf = INFINITY;
  std::vector<float> bias;
  {
    AttentionDesc d = desc(2, 3, 70, 32, 3, 70, 32, false);
    attachBias(d, bias, {2, 1, 1, 70},
               [&](int64_t b, int64_t, int64_t, int64_t j) {
                 return b == 1 && j >= 41 ? -inf : 0.0f;
               });
    CHECK(checkFlashAttention<64>(d) == 0);
  }
  // A full [batch, heads, queries, keys] bias of finite values, with more
  // keys than queries, and with head sizes past 64.
  for (AttentionDesc d : {desc(2, 2, 90, 16, 2, 110, 16, false),
                          desc(1, 2, 45, 80, 1, 45, 128, false)}) {
    attachBias(d, bias, {d.batch, d.heads, d.queries, d.keys},
               [](int64_t b, int64_t h, int64_t i, int64_t j) {
                 return 3.0f * noise(b, h, i, j);
               });
    if (d.valueSize > 64)
      CHECK(checkFlashAttention<128>(d) == 0);
    else
      CHECK(checkFlashAttention<64>(d) == 0);
  }
  // -inf hiding keys, and whole rows (i % 7 == 3: 9 of 60 queries) of
  // every head: a [batch, 1, queries, keys] bias over grouped heads.
  {
    auto hideRows = [&](int64_t b, int64_t, int64_t i, int64_t j) {
      return i % 7 == 3 || j % 5 == 0 ? -inf : noise(b, 0, i, j);
    };
    AttentionDesc d = desc(2, 2, 60, 16, 1, 75, 16, false);
    attachBias(d, bias, {2, 1, 60, 75}, hideRows);
    CHECK(checkFlashAttention<64>(d) == 2 * 2 * 9);
    d = desc(1, 2, 45, 80, 1, 45, 128, false);
    attachBias(d, bias, {1, 1, 45, 45}, hideRows);
    CHECK(checkFlashAttention<128>(d) == 2 * 6);
  }
  // Causal with a bias, grouped heads (the bias is per query head): the
  // diagonal moves (33 queries, 97 keys); rows i % 13 == 7 hide exactly
  // the keys the diagonal leaves them (empty rows, though later keys have
  // finite biases), rows i % 13 == 2 hide every key but the diagonal's.
  {
    AttentionDesc d = desc(1, 4, 33, 32, 2, 97, 24, true);
    attachBias(d, bias, {1, 4, 33, 97},
               [&](int64_t b, int64_t h, int64_t i, int64_t j) {
                 int64_t diagonal = i + 97 - 33;
                 if (i % 13 == 7 && j <= diagonal)
                   return -inf;
                 if (i % 13 == 2 && j != diagonal)
                   return -inf;
                 return 2.0f * noise(b, h, i, j);
               });
    // Rows 7 and 20 of each of the 4 heads.
    CHECK(checkFlashAttention<64>(d) == 4 * 2);
    // More queries than keys: 50 rows of each head see no key, and the
    // bias hides rows 60, 71 and 82 of the others.
    d = desc(1, 2, 90, 8, 1, 40, 8, true);
    attachBias(d, bias, {1, 1, 90, 40},
               [&](int64_t, int64_t, int64_t i, int64_t j) {
                 return i % 11 == 5 ? -inf : noise(0, 0, i, j);
               });
    CHECK(checkFlashAttention<64>(d) == 2 * (50 + 3));
  }
  // HuggingFace's finite masks (torch.finfo(float32).min): an ordinary
  // softmax over huge negative scores, no NaN. Causal and padding in one
  // [batch, 1, queries, keys] mask; batch 2 masks every key (its rows
  // average all the values, as HuggingFace's do).
  {
    const float lowest = -3.4e38f;
    const int64_t valid[] = {50, 17, 0};
    AttentionDesc d = desc(3, 2, 50, 16, 2, 50, 16, false);
    attachBias(d, bias, {3, 1, 50, 50},
               [&](int64_t b, int64_t, int64_t i, int64_t j) {
                 return j > i || j >= valid[b] ? lowest : 0.0f;
               });
    CHECK(checkFlashAttention<64>(d) == 0);
  }
  // Rows whose logsumexp f32 cannot resolve (past kDegenerateLse), which
  // the backward recomputes from the row: Hugging Face's left padding under
  // a causal mask, finfo(f32).min on batch b's first pad[b] keys, so that
  // its first pad[b] query rows hide every key they see (a uniform softmax
  // whose logsumexp rounds to the mask's value; batch 2 is all padding),
  // and rows i % 9 == 4 whose other keys -1e4 hides (a logsumexp near
  // -1e4). Grouped heads, two tiles of queries and keys, and a non-causal
  // [batch, heads, queries, keys] mask with head sizes past 64.
  {
    const float lowest = -std::numeric_limits<float>::max();
    const int64_t pad[] = {0, 5, 70};
    AttentionDesc d = desc(3, 2, 70, 16, 1, 70, 16, true);
    attachBias(d, bias, {3, 1, 70, 70},
               [&](int64_t b, int64_t, int64_t i, int64_t j) {
                 if (j < pad[b])
                   return lowest;
                 return i % 9 == 4 ? -1e4f : noise(b, 0, i, j);
               });
    CHECK(checkFlashAttention<64>(d) == 0);
    d = desc(2, 2, 45, 80, 1, 45, 128, false);
    attachBias(d, bias, {2, 2, 45, 45},
               [&](int64_t b, int64_t h, int64_t i, int64_t j) {
                 if ((b + h + i) % 6 == 1)
                   return lowest;
                 if ((b + h + i) % 6 == 3)
                   return j % 4 == 0 ? -INFINITY : -1e4f;
                 return noise(b, h, i, j);
               });
    CHECK(checkFlashAttention<128>(d) == 0);
  }
  // ALiBi-like: a per-head slope (each query head of a group its own),
  // broadcast over the batch ([1, heads, queries, keys]), causal.
  {
    AttentionDesc d = desc(2, 6, 40, 32, 2, 40, 32, true);
    attachBias(d, bias, {1, 6, 40, 40},
               [](int64_t, int64_t h, int64_t i, int64_t j) {
                 return -std::ldexp(1.0f, -int(h)) * float(i - j);
               });
    CHECK(checkFlashAttention<64>(d) == 0);
  }
  // A soft cap (Gemma 2's tanh capping) small enough to bend the scores:
  // alone over grouped heads, causal; with a padding bias (its -inf keys
  // still hidden after the cap) and head sizes past 64.
  {
    AttentionDesc d = desc(2, 4, 50, 32, 2, 50, 32, true);
    d.scale = 1.0;
    d.softcap = 1.25;
    CHECK(checkFlashAttention<64>(d) == 0);
    d = desc(2, 2, 70, 96, 2, 70, 80, false);
    d.scale = 0.5;
    d.softcap = 2.0;
    attachBias(d, bias, {2, 1, 1, 70},
               [](int64_t b, int64_t, int64_t, int64_t j) {
                 return b == 1 && j >= 55 ? -INFINITY : 0.0f;
               });
    CHECK(checkFlashAttention<128>(d) == 0);
  }
  // Attention dropout, the mask regenerated tile by tile in each kernel:
  // causal over grouped heads; and a device's block of heads 2..3 of 4
  // (an offset and two index levels) over unequal sequences, soft-capped.
  {
    int64_t seed = 0x5eed1234abcdll, offset = 2 * 70 * 90;
    AttentionDesc d = desc(2, 4, 50, 32, 2, 50, 32, true);
    d.dropout = 0.3;
    d.seed = &seed;
    d.stream = 5;
    CHECK(checkFlashAttention<64>(d) == 0);
    d = desc(2, 2, 70, 96, 1, 90, 80, false);
    d.scale = 0.5;
    d.softcap = 2.0;
    d.dropout = 0.5;
    d.seed = &seed;
    d.offset = &offset;
    d.stream = 2;
    d.levelCount = 2;
    int64_t levels[2][3] = {{2, 2 * 70 * 90, 4 * 70 * 90}, {2 * 70 * 90, 1, 1}};
    std::memcpy(d.levels, levels, sizeof levels);
    CHECK(checkFlashAttention<128>(d) == 0);
  }
}

/// The host target's reference attention (forward and backward) with a
/// bias, against the formulas in double on small sizes (from the scores in
/// f32, as the kernels round them next to a huge bias), causal and not:
/// - grouped heads, a full [batch, heads, queries, keys] bias of finite
///   values, -inf on some keys and on whole rows, Hugging Face's
///   finfo(f32).min on some keys, and on every key of some rows (whose
///   logsumexp rounds to the mask's value, past kDegenerateLse), and a row
///   whose every key -1e4 hides;
/// - a [batch, 1, queries, keys] mask whose every row is past
///   kDegenerateLse: finfo.min on every key (batch 0), -1e4 plus noise
///   (batch 1), where exp(score - logsumexp) would give p = 1 instead of
///   1 / n, or be off by the logsumexp's rounding (f32's spacing at 1e4 is
///   2^-10);
/// each also with a soft cap of 0.3 (scores c * tanh(s / c) before the
/// bias, ds times 1 - tanh^2), which bends every score, and then with a
/// dropout of 0.4 too, as a device's block of heads 4..7 of 8 draws it
/// (an offset and index levels; the expected mask from the element's index
/// in the whole tensor).
static void testAttentionReference() {
  const float inf = INFINITY;
  const float lowest = -std::numeric_limits<float>::max();
  for (auto [softcap, rate] :
       {std::pair{0.0, 0.0}, std::pair{0.3, 0.0}, std::pair{0.3, 0.4}})
    for (bool causal : {false, true})
      for (bool degenerateOnly : {false, true}) {
        AttentionDesc d{2, 4,      6,    5,          2,         9,
                        3, causal, 0.45, DType::F32, DType::F32};
        d.softcap = softcap;
        int64_t seed = 77, offset = 4 * 6 * 9;
        int64_t levels[2][3] = {{2, 4 * 6 * 9, 8 * 6 * 9}, {4 * 6 * 9, 1, 1}};
        if (rate > 0) {
          d.dropout = rate;
          d.seed = &seed;
          d.offset = &offset;
          d.stream = 3;
          d.levelCount = 2;
          std::memcpy(d.levels, levels, sizeof levels);
        }
        // The dropout's factor on probability (b, h, i, j): 1 / (1 - rate)
        // where dropoutUniform keeps it at its index in the whole [2, 8, 6,
        // 9] tensor, else 0.
        auto keepFactor = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
          if (!(rate > 0))
            return 1.0;
          uint64_t index = ((b * 8 + h + 4) * d.queries + i) * d.keys + j;
          return dropoutUniform(uint64_t(seed), index, 3) >= rate
                     ? 1.0 / (1.0 - rate)
                     : 0.0;
        };
        int64_t group = d.heads / d.kvHeads;
        int64_t diagonal = d.keys - d.queries;
        // The rows whose every visible key finfo.min hides: their logsumexp
        // is the mask's value itself.
        auto isFinfoRow = [&](int64_t b, int64_t h, int64_t i) {
          return degenerateOnly ? b == 0 : h == 3 && (i == 1 || i == 3);
        };
        std::vector<float> bias;
        if (degenerateOnly)
          attachBias(d, bias, {d.batch, 1, d.queries, d.keys},
                     [&](int64_t b, int64_t, int64_t i, int64_t j) {
                       return b == 0 ? lowest : -1e4f + noise(b, 0, i, j);
                     });
        else
          attachBias(d, bias, {d.batch, d.heads, d.queries, d.keys},
                     [&](int64_t b, int64_t h, int64_t i, int64_t j) {
                       if (h == 1 && i == 2)
                         return -inf; // the whole row
                       if (h == 2 && i == 4 && j <= i + diagonal)
                         return -inf; // the keys the diagonal leaves
                       if (h == 3 && i == 1)
                         return lowest; // the whole row
                       if (h == 0 && i == 5)
                         return -1e4f; // the whole row
                       if ((i + j) % 4 == 1)
                         return -inf;
                       if ((i + 2 * j + h) % 5 == 0 || (h == 3 && i == 3))
                         return lowest; // and the whole row (h 3, i 3)
                       return 2.0f * noise(b, h, i, j);
                     });
        auto biasOf = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
          return bias[b * d.biasStrides[0] + h * d.biasStrides[1] +
                      i * d.biasStrides[2] + j * d.biasStrides[3]];
        };
        AttentionRun run = runReferenceAttention(d, 5);
        const std::vector<float> &q = run.q, &k = run.k, &v = run.v,
                                 &dout = run.dout, &out = run.out,
                                 &lse = run.lse, &dq = run.dq, &dk = run.dk,
                                 &dv = run.dv;

        std::vector<double> eOut(out.size(), 0.0), eLse(lse.size()),
            eDq(dq.size(), 0.0), eDk(dk.size(), 0.0), eDv(dv.size(), 0.0),
            eDbias(bias.size(), 0.0);
        int64_t emptyRows = 0;
        // The forward's logsumexp: the mask's value itself on the finfo.min
        // rows, past kDegenerateLse on every row of degenerateOnly.
        bool degenerateLse = true;
        for (int64_t b = 0; b < d.batch; ++b)
          for (int64_t h = 0; h < d.heads; ++h)
            for (int64_t i = 0; i < d.queries; ++i) {
              int64_t row = (b * d.heads + h) * d.queries + i;
              int64_t kvBase = (b * d.kvHeads + h / group) * d.keys;
              if (isFinfoRow(b, h, i))
                degenerateLse &= lse[row] == lowest;
              if (degenerateOnly)
                degenerateLse &= std::isfinite(lse[row]) &&
                                 std::fabs(lse[row]) >= kDegenerateLse;
              std::vector<double> s(d.keys, -INFINITY), p(d.keys, 0.0),
                  slope(d.keys, 1.0);
              double max = -INFINITY;
              for (int64_t j = 0; j < d.keys; ++j) {
                if (causal && j > i + diagonal)
                  continue;
                // The score in f32 as the kernels form it, the rest in
                // double.
                float dot = 0;
                for (int64_t e = 0; e < d.headSize; ++e)
                  dot += q[row * d.headSize + e] *
                         k[(kvBase + j) * d.headSize + e];
                float score = float(d.scale) * dot;
                if (softcap > 0) {
                  double t = std::tanh(double(score) / softcap);
                  score = float(softcap * t);
                  slope[j] = 1.0 - t * t;
                }
                s[j] = score + biasOf(b, h, i, j);
                max = std::max(max, s[j]);
              }
              if (max == -INFINITY) {
                eLse[row] = INFINITY;
                ++emptyRows;
                continue;
              }
              double sum = 0;
              for (int64_t j = 0; j < d.keys; ++j)
                sum += p[j] = std::exp(s[j] - max);
              eLse[row] = max + std::log(sum);
              for (int64_t j = 0; j < d.keys; ++j) {
                p[j] /= sum;
                for (int64_t e = 0; e < d.valueSize; ++e)
                  eOut[row * d.valueSize + e] +=
                      p[j] * keepFactor(b, h, i, j) *
                      v[(kvBase + j) * d.valueSize + e];
              }
              // dv += p dout; ds = scale p (dout . v - dout . out); dq = ds k;
              // dk += ds q.
              double delta = 0;
              for (int64_t e = 0; e < d.valueSize; ++e)
                delta +=
                    dout[row * d.valueSize + e] * eOut[row * d.valueSize + e];
              for (int64_t j = 0; j < d.keys; ++j) {
                double dp = 0;
                for (int64_t e = 0; e < d.valueSize; ++e) {
                  dp += double(dout[row * d.valueSize + e]) *
                        v[(kvBase + j) * d.valueSize + e];
                  eDv[(kvBase + j) * d.valueSize + e] +=
                      p[j] * keepFactor(b, h, i, j) *
                      dout[row * d.valueSize + e];
                }
                dp *= keepFactor(b, h, i, j);
                // The bias's gradient: ds before the cap's slope and the
                // scale, summed over what the bias broadcasts.
                eDbias[b * d.biasStrides[0] + h * d.biasStrides[1] +
                       i * d.biasStrides[2] + j * d.biasStrides[3]] +=
                    p[j] * (dp - delta);
                double ds = d.scale * slope[j] * p[j] * (dp - delta);
                for (int64_t e = 0; e < d.headSize; ++e) {
                  eDq[row * d.headSize + e] +=
                      ds * k[(kvBase + j) * d.headSize + e];
                  eDk[(kvBase + j) * d.headSize + e] +=
                      ds * q[row * d.headSize + e];
                }
              }
            }
        // Row 2 of head 1 in each batch, and causal, row 4 of head 2.
        CHECK(emptyRows == (degenerateOnly ? 0 : causal ? 2 * 2 : 2));
        CHECK(degenerateLse);
        auto asFloats = [](const std::vector<double> &values) {
          return std::vector<float>(values.begin(), values.end());
        };
        bool sameLse = true;
        for (size_t i = 0; i < lse.size(); ++i)
          sameLse &= std::isinf(eLse[i])
                         ? lse[i] == INFINITY
                         : std::fabs(lse[i] - eLse[i]) <=
                               1e-5 * std::max(1.0, std::fabs(eLse[i]));
        CHECK(sameLse);
        // The finfo.min rows' outputs are the means of the values they see.
        CHECK(relativeError(out, asFloats(eOut)) < 1e-5f);
        CHECK(relativeError(dq, asFloats(eDq)) < 1e-5f);
        CHECK(relativeError(dk, asFloats(eDk)) < 1e-5f);
        CHECK(relativeError(dv, asFloats(eDv)) < 1e-5f);
        // tg.attention_bias_grad's runtime call.
        Context context;
        std::vector<float> dbias(bias.size(), NAN);
        attentionBiasGrad(context, d, dout.data(), q.data(), k.data(), v.data(),
                          out.data(), lse.data(), dbias.data(),
                          "attention_bias_grad");
        CHECK(allFinite(dbias));
        CHECK(relativeError(dbias, asFloats(eDbias)) < 1e-5f);
        CHECK(allFinite(out) && allFinite(dq) && allFinite(dk) &&
              allFinite(dv));
      }
}

/// The host target's GEMM epilogues (what one cuBLASLt call computes for a
/// gemm region), each stage against its formula.
/// The host target's workers: every block of a launch runs once; blocks
/// of several threads (fibers) that run at once on different workers each
/// see only their own shared memory, and every thread reaches a barrier
/// before any passes it; a GEMM split over the workers (by rows, by
/// columns, operands transposed) is the product, and its tiles computed
/// one after another on one thread to the bit.
static void testHostWorkers() {
  constexpr unsigned kBlocks = 1000, kThreads = 8;
  std::vector<unsigned> ran(kBlocks, 0);
  hostLaunch(kBlocks, [&] { ++ran[blockIdx.x]; });
  CHECK(std::all_of(ran.begin(), ran.end(), [](unsigned n) { return n == 1; }));

  // Each thread writes its slot, then reads its neighbour's (written by a
  // thread that may run after it but before the barrier lets it read).
  std::vector<int64_t> seen(kBlocks * kThreads, -1);
  hostLaunch(
      kBlocks,
      [&] {
        __shared__ int64_t slots[kThreads];
        unsigned t = threadIdx.x, b = blockIdx.x;
        slots[t] = int64_t(b) * 100 + t;
        __syncthreads();
        seen[b * kThreads + t] = slots[(t + 1) % kThreads];
        __syncthreads();
      },
      kThreads);
  bool isolated = true;
  for (unsigned b = 0; b < kBlocks; ++b)
    for (unsigned t = 0; t < kThreads; ++t)
      isolated &=
          seen[b * kThreads + t] == int64_t(b) * 100 + (t + 1) % kThreads;
  CHECK(isolated);

  struct Shape {
    bool transA, transB;
    int64_t m, n, k;
  };
  // Tall (split by rows) and wide (by columns), each way transposed.
  for (Shape shape :
       {Shape{false, false, 600, 70, 100}, Shape{true, false, 600, 70, 100},
        Shape{false, true, 30, 900, 100}, Shape{true, true, 30, 900, 100}}) {
    auto [transA, transB, m, n, k] = shape;
    std::vector<float> a(m * k), b(k * n), c(m * n), expected(m * n);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = std::sin(0.37f * float(i)) * 3;
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = std::cos(0.11f * float(i)) - 0.25f;
    Context context;
    GemmDesc desc{transA, transB, true,       1,          m,
                  n,      k,      DType::F32, DType::F32, DType::F32};
    gemm(context, desc, a.data(), b.data(), c.data(), "split");
    // The same tiles one after another on this thread.
    tiledGemm(transA, transB, m, n, k, a.data(), b.data(), expected.data(),
              1.0f, 0.0f, [](int64_t tiles, auto &&tile) {
                for (int64_t t = tiles - 1; t >= 0; --t)
                  tile(t);
              });
    CHECK(c == expected);
    // And the product itself, in double.
    double worst = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l)
          sum += double(transA ? a[l * m + i] : a[i * k + l]) *
                 double(transB ? b[j * k + l] : b[l * n + j]);
        worst = std::max(worst, std::fabs(sum - c[i * n + j]));
      }
    CHECK(worst < 1e-3);
  }
}

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

/// The experts' products (expertRows, then expertMatmul and
/// expertMatmulGrad, a block per tile) against a double reference: several
/// row tiles of one expert, an expert of no row, partial tiles along every
/// dimension and several stages of the contraction, both layouts of the
/// matrices, in f32 (64-wide tiles) and f64 (32), with 1 and 96 threads a
/// block (the threaded blocks meet at every __syncthreads, as a GPU's);
/// the whole stack and a block of it (expert parallelism).
template <typename T> static void testExpertProducts() {
  const int64_t rows = 300, experts = 5, h = 70, o = 130;
  std::vector<int64_t> ids(rows);
  for (int64_t i = 0; i < rows; ++i)
    ids[i] = i % 7 == 0 ? 0 : (i % 3 == 0 ? 4 : (i * 5 + 1) % 3);
  std::vector<T> x(rows * h), w(experts * h * o), dy(rows * o);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = T(std::sin(0.37 * i + 0.2));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = T(std::cos(0.11 * i + 0.5));
  for (size_t i = 0; i < dy.size(); ++i)
    dy[i] = T(std::sin(0.23 * i - 0.4));
  const int64_t size = expertTileSize(sizeof(T));
  for (bool transB : {false, true}) {
    auto weight = [&](int64_t e, int64_t k, int64_t c) {
      return double(transB ? w[(e * o + c) * h + k] : w[(e * h + k) * o + c]);
    };
    std::vector<double> y(rows * o, 0.0), dw(experts * h * o, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < o; ++c)
        for (int64_t k = 0; k < h; ++k) {
          y[r * o + c] += double(x[r * h + k]) * weight(ids[r], k, c);
          int64_t at =
              transB ? (ids[r] * o + c) * h + k : (ids[r] * h + k) * o + c;
          dw[at] += double(x[r * h + k]) * double(dy[r * o + c]);
        }
    // The whole stack, then a device's block of experts [2, 4) (expert
    // parallelism): ids relative to the block, the other rows zeros.
    for (auto [first, block] : {std::pair<int64_t, int64_t>{0, experts},
                                std::pair<int64_t, int64_t>{2, 2}}) {
      int64_t slots = block + (block < experts ? 1 : 0);
      std::vector<int64_t> local(rows);
      for (int64_t r = 0; r < rows; ++r)
        local[r] = ids[r] - first;
      std::vector<T> blockW(w.begin() + first * h * o,
                            w.begin() + (first + block) * h * o);
      for (unsigned threads : {1u, 96u}) {
        std::vector<int64_t> offsets(slots + 1, -1), order(rows, -1);
        hostLaunch(
            2,
            [&] {
              k::expertRows(gridThreads(), local.data(), offsets.data(),
                            order.data(), rows, block, experts);
            },
            threads);
        CHECK(offsets[0] == 0 && offsets[slots] == rows);
        for (int64_t e = 0; e < slots; ++e)
          for (int64_t j = offsets[e]; j < offsets[e + 1]; ++j)
            CHECK((e < block
                       ? local[order[j]] == e
                       : local[order[j]] < 0 || local[order[j]] >= block) &&
                  (j == offsets[e] || order[j - 1] < order[j]));
        std::vector<T> out(rows * o, T(-7)), grad(block * h * o, T(-7));
        hostLaunch(
            static_cast<unsigned>(expertMatmulBlocks(size, rows, o, slots)),
            [&] {
              k::expertMatmul(rowThreads(), x.data(), blockW.data(),
                              offsets.data(), order.data(), out.data(), rows, h,
                              o, block, slots, transB);
            },
            threads);
        hostLaunch(
            3,
            [&] {
              k::expertMatmulGrad(rowThreads(), x.data(), dy.data(),
                                  offsets.data(), order.data(), grad.data(),
                                  block, h, o, transB);
            },
            threads);
        double tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-12;
        for (size_t i = 0; i < out.size(); ++i) {
          int64_t id = ids[i / o];
          double expected = id >= first && id < first + block ? y[i] : 0.0;
          CHECK(std::fabs(double(out[i]) - expected) <=
                tolerance * (1 + std::fabs(expected)));
        }
        for (size_t i = 0; i < grad.size(); ++i) {
          double expected = dw[first * h * o + i];
          CHECK(std::fabs(double(grad[i]) - expected) <=
                tolerance * (1 + std::fabs(expected)));
        }
      }
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
  // Several workers even on one CPU, before the first launch makes them.
  setenv("TGC_HOST_WORKERS", "4", 0);
  testFormats();
  testPhilox();
  testSafetensors();
  testCheckpointSteps();
  testCheckpointFileTypes();
  testCheckpointBlocks();
  testStreamedWrite();
  testCheckWritable();
  testKernels();
  testRandom();
  testFlashAttention();
  testAttentionReference();
  testGemmEpilogue();
  testNormGradColumns();
  testReduceColumns();
  testTopK();
  testEmbeddingGrad();
  testExpertProducts<float>();
  testExpertProducts<double>();
  testFakeQuant();
  testHostWorkers();
  testHeldTokenRows();
  testShiftedLabels();
  testLrSchedule();
  testExampleOrder();
  if (failures)
    std::fprintf(stderr, "%d check(s) failed\n", failures);
  else
    std::printf("runtime tests passed\n");
  return failures ? 1 : 0;
}
