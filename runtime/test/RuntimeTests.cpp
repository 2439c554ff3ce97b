//===- RuntimeTests.cpp - the runtime's unit tests, without MLIR ----------===//
//
// Element formats, Philox's known answers, safetensors round trips and
// errors, and op kernels run on the host target's one thread per block.
//
//===----------------------------------------------------------------------===//

#include "tgc/runtime/Kernels.h"
#include "tgc/runtime/Runtime.h"
#include "tgc/runtime/Safetensors.h"

#include <cmath>
#include <cstdio>
#include <fstream>
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

__global__ void reduceRows(const float *in, float *out) {
  k::reduce<k::ReduceKind::Sum>(gridThreads(), in, out, 2, 2, Dims{{2, 3}},
                                /*reduced=*/2u, 0.0f);
}
__global__ void softmaxRows(const float *in, float *out) {
  k::softmax<false>(gridThreads(), in, out, 2, 3, 1);
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

int main() {
  testFormats();
  testPhilox();
  testSafetensors();
  testKernels();
  testRandom();
  if (failures)
    std::fprintf(stderr, "%d check(s) failed\n", failures);
  else
    std::printf("runtime tests passed\n");
  return failures ? 1 : 0;
}
