//===- HostBackend.cpp - the host target: the CPU, OpenBLAS ---------------===//
//
// The arena is host memory; GEMMs go through OpenBLAS exactly as the
// interpreter calls it (lib/Eval/ComputeKernels.cpp), and attention is the
// interpreter's reference algorithm, so the host target reproduces the
// interpreter's numbers.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Elements.h"

#include "tgc/runtime/CudaCompat.h"
#include "tgc/runtime/FlashAttention.h"
#include "tgc/runtime/Runtime.h"
#include "tgc/runtime/ScalarOps.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

using namespace tgc::rt;

std::string backend::describe() { return "host"; }
bool backend::hasStageTransfers() { return true; }

void *backend::allocate(size_t bytes, std::string &error) {
  // 256-byte aligned, as cudaMalloc's: generated kernels assume it
  // (alignedArena).
  size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  void *pointer = std::aligned_alloc(256, rounded);
  if (pointer)
    std::memset(pointer, 0, rounded);
  if (!pointer)
    error =
        "cannot allocate " + std::to_string(bytes) + " bytes of host memory";
  return pointer;
}
void backend::release(void *pointer) { std::free(pointer); }
void backend::toDevice(void *device, const void *host, size_t bytes) {
  std::memmove(device, host, bytes);
}
void backend::toHost(void *host, const void *device, size_t bytes) {
  std::memmove(host, device, bytes);
}
void backend::onDevice(void *destination, const void *source, size_t bytes) {
  std::memmove(destination, source, bytes);
}
void backend::copyRows(void *destination, size_t destinationPitch,
                       const void *source, size_t sourcePitch, size_t width,
                       size_t rows, bool) {
  for (size_t r = 0; r < rows; ++r)
    std::memmove(static_cast<char *>(destination) + r * destinationPitch,
                 static_cast<const char *>(source) + r * sourcePitch, width);
}
void backend::selectDevice(int) {}
void backend::beginCollective() {}
void backend::endCollective(int) {}
void backend::waitCollective(int) {}
void backend::synchronize(const char *) {}
size_t backend::peakMemory() { return 0; }

namespace {
/// A reusable barrier of `count` threads (C++17 has no std::barrier).
class Barrier {
public:
  explicit Barrier(unsigned count) : count(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    unsigned arrival = generation;
    if (++arrived == count) {
      arrived = 0;
      ++generation;
      released.notify_all();
      return;
    }
    released.wait(lock, [&] { return arrival != generation; });
  }

private:
  std::mutex mutex;
  std::condition_variable released;
  unsigned count, arrived = 0, generation = 0;
};

Barrier *blockBarrier = nullptr;
} // namespace

unsigned tgc::rt::hostThreadsPerBlock() {
  static const unsigned threads = [] {
    const char *text = std::getenv("TGC_HOST_THREADS");
    long value = text ? std::strtol(text, nullptr, 10) : 1;
    return static_cast<unsigned>(value < 1 ? 1 : value > 1024 ? 1024 : value);
  }();
  return threads;
}

void tgc::rt::hostSyncThreads() { blockBarrier->wait(); }

void tgc::rt::hostLaunchOnThreads(unsigned grid, unsigned threads,
                                  void (*block)(void *), void *context) {
  Barrier barrier(threads);
  blockBarrier = &barrier;
  hostBlockIsThreaded = true;
  blockDim = dim3(threads);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      threadIdx = dim3(t);
      for (unsigned b = 0; b < grid; ++b) {
        blockIdx = dim3(b);
        block(context);
        // Shared memory is the next block's once every thread is done.
        barrier.wait();
      }
    });
  for (std::thread &worker : workers)
    worker.join();
  hostBlockIsThreaded = false;
  blockBarrier = nullptr;
  blockDim = dim3(1);
}

namespace {
bool profiling = false;
std::chrono::steady_clock::time_point lastMark;
std::vector<std::pair<std::string, double>> marks;
} // namespace

void backend::runStep(StepFunction step, Context &context, bool) {
  step(context);
}

void backend::profileBegin() {
  profiling = true;
  lastMark = std::chrono::steady_clock::now();
}

void backend::profileMark(const char *kernel) {
  if (!profiling)
    return;
  auto now = std::chrono::steady_clock::now();
  marks.emplace_back(kernel,
                     std::chrono::duration<double>(now - lastMark).count());
  lastMark = now;
}

void backend::profileEnd(std::vector<std::pair<std::string, double>> &times) {
  profiling = false;
  times.insert(times.end(), marks.begin(), marks.end());
  marks.clear();
}

void tgc::rt::checkLaunch(const char *kernel, const char *) {
  backend::profileMark(kernel);
}

void tgc::rt::reportKernelError(const char *what, int64_t value,
                                int64_t bound) {
  std::fprintf(stderr, "error: %s %lld is out of range [0, %lld)\n", what,
               static_cast<long long>(value), static_cast<long long>(bound));
  std::exit(1);
}

namespace {

/// C[m x n] = alpha op(A) op(B) + beta C, row-major, as lib/Eval calls BLAS.
void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
           const float *a, const float *b, float *c, float alpha = 1.0f,
           float beta = 0.0f) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, alpha, a,
              transA ? m : k, b, transB ? k : n, beta, c, n);
}

/// op(A) op(B) of `d` in f32, as lib/Eval calls BLAS.
std::vector<float> product(const GemmDesc &d, const void *a, const void *b) {
  int64_t aCount = d.batch * d.m * d.k;
  int64_t bCount = (d.sharedRhs ? 1 : d.batch) * d.k * d.n;
  int64_t cCount = d.batch * d.m * d.n;
  std::vector<float> fa = loadFloats(a, d.a, aCount);
  std::vector<float> fb = loadFloats(b, d.b, bCount);
  std::vector<float> fc(cCount, 0.0f);
  if (cCount && d.k > 0) {
    if (d.sharedRhs && !d.transA) {
      // A linear layer: all batches form one tall matrix.
      sgemm(false, d.transB, d.batch * d.m, d.n, d.k, fa.data(), fb.data(),
            fc.data());
    } else {
      for (int64_t i = 0; i < d.batch; ++i)
        sgemm(d.transA, d.transB, d.m, d.n, d.k, fa.data() + i * d.m * d.k,
              fb.data() + (d.sharedRhs ? 0 : i * d.k * d.n),
              fc.data() + i * d.m * d.n);
    }
  }
  return fc;
}

/// Rounds every value to `type`, as storing and loading it would.
void roundTo(std::vector<float> &values, DType type) {
  if (type == DType::F32)
    return;
  std::vector<char> stored(values.size() * getDTypeBytes(type));
  storeFloats(values, stored.data(), type);
  values = loadFloats(stored.data(), type, values.size());
}

/// The sums of the `columns` columns of row-major `values` over their rows,
/// in order (tg.reduce's kernel on one thread).
std::vector<float> columnSums(const std::vector<float> &values,
                              int64_t columns) {
  std::vector<float> sums(columns);
  int64_t rows = columns ? values.size() / columns : 0;
  for (int64_t c = 0; c < columns; ++c) {
    CascadeSum<float> sum;
    for (int64_t r = 0; r < rows; ++r)
      sum.add(values[r * columns + c]);
    sums[c] = sum.result();
  }
  return sums;
}

bool isEpilogueType(DType type) {
  return type == DType::F32 || type == DType::BF16 || type == DType::F16;
}

} // namespace

void tgc::rt::gemm(Context &, const GemmDesc &d, const void *a, const void *b,
                   void *c, const char *kernel) {
  storeFloats(product(d, a, b), c, d.c);
  backend::profileMark(kernel);
}

// The IR's order: every stage rounded to the product's type, as the
// region's kernels round each op's result, so that the host target keeps
// the interpreter's numbers with the epilogue taken.
bool tgc::rt::gemmEpilogue(Context &, const GemmDesc &d, const GemmEpilogue &e,
                           const void *a, const void *b, void *out,
                           const char *kernel) {
  if (!backend::gemmEpiloguesEnabled() || !isEpilogueType(e.product) ||
      !isEpilogueType(d.c) || (e.bias && !isEpilogueType(e.biasType)) ||
      (e.aux && !isEpilogueType(e.auxType)) ||
      (e.biasGrad && !isEpilogueType(e.biasGradType)))
    return false;
  bool matrixGrad =
      e.biasGradOf == GemmBiasGrad::A || e.biasGradOf == GemmBiasGrad::B;
  if (matrixGrad && d.batch != 1)
    return false;
  int64_t n = d.n, count = d.batch * d.m * d.n;
  std::vector<float> v = product(d, a, b);
  roundTo(v, e.product);
  if (e.bias) {
    std::vector<float> bias = loadFloats(e.bias, e.biasType, n);
    roundTo(bias, e.product);
    for (int64_t i = 0; i < count; ++i)
      v[i] = v[i] + bias[i % n];
    roundTo(v, e.product);
  }
  switch (e.activation) {
  case GemmActivation::None:
    break;
  case GemmActivation::Relu:
  case GemmActivation::Gelu:
    if (e.aux)
      storeFloats(v, e.aux, e.auxType);
    for (float &x : v)
      x = e.activation == GemmActivation::Relu ? relu(x) : geluTanh(x);
    roundTo(v, e.product);
    break;
  case GemmActivation::DGelu: {
    std::vector<float> x = loadFloats(e.aux, e.auxType, count);
    for (int64_t i = 0; i < count; ++i)
      v[i] = v[i] * geluTanhGrad(x[i]);
    break;
  }
  }
  if (e.residual) {
    std::vector<float> residual = loadFloats(e.residual, e.product, count);
    for (int64_t i = 0; i < count; ++i)
      v[i] = v[i] + residual[i];
    roundTo(v, e.product);
  }
  roundTo(v, d.c);
  std::vector<float> sums;
  if (e.biasGradOf == GemmBiasGrad::Output)
    sums = columnSums(v, n);
  else if (e.biasGradOf == GemmBiasGrad::A)
    sums = columnSums(loadFloats(a, d.a, d.k * d.m), d.m);
  else if (e.biasGradOf == GemmBiasGrad::B)
    sums = columnSums(loadFloats(b, d.b, d.k * d.n), d.n);
  // Operands are read: D may be the residual.
  storeFloats(v, out, d.c);
  if (e.biasGradOf != GemmBiasGrad::None)
    storeFloats(sums, e.biasGrad, e.biasGradType);
  backend::profileMark(kernel);
  return true;
}

void tgc::rt::attention(Context &, const AttentionDesc &d, const void *qv,
                        const void *kv, const void *vv, void *outv, void *lsev,
                        const char *kernel) {
  int64_t group = d.heads / d.kvHeads;
  std::vector<float> q =
      loadFloats(qv, d.type, d.batch * d.heads * d.queries * d.headSize);
  std::vector<float> k =
      loadFloats(kv, d.type, d.batch * d.kvHeads * d.keys * d.headSize);
  std::vector<float> v =
      loadFloats(vv, d.type, d.batch * d.kvHeads * d.keys * d.valueSize);
  std::vector<float> out(d.batch * d.heads * d.queries * d.valueSize, 0.0f);
  std::vector<float> lse(d.batch * d.heads * d.queries, 0.0f);
  std::vector<float> scores(d.queries * d.keys);
  flash::DropoutKey key = flash::dropoutKey(d);
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h) {
      int64_t kvh = h / group;
      const float *qp = q.data() + ((b * d.heads + h) * d.queries) * d.headSize;
      const float *kp =
          k.data() + ((b * d.kvHeads + kvh) * d.keys) * d.headSize;
      const float *vp =
          v.data() + ((b * d.kvHeads + kvh) * d.keys) * d.valueSize;
      float *outRows =
          out.data() + ((b * d.heads + h) * d.queries) * d.valueSize;
      if (scores.empty())
        continue;
      // scores = softcap(scale * q k^T) + bias, then a masked, stable
      // softmax per row.
      if (d.headSize == 0)
        std::fill(scores.begin(), scores.end(), 0.0f);
      else
        sgemm(false, true, d.queries, d.keys, d.headSize, qp, kp, scores.data(),
              float(d.scale));
      for (int64_t i = 0; i < d.queries; ++i) {
        float *row = scores.data() + i * d.keys;
        int64_t visible = d.causal ? i + d.keys - d.queries + 1 : d.keys;
        float max = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < visible; ++j) {
          row[j] = flash::capScore(d, row[j]) + flash::biasAt(d, b, h, i, j);
          max = propagatingMax(max, row[j]);
        }
        if (max == -std::numeric_limits<float>::infinity()) {
          // No key has a score above -inf: zeros, and a logsumexp of +inf
          // that makes the backward's probabilities 0.
          std::fill(row, row + d.keys, 0.0f);
          lse[(b * d.heads + h) * d.queries + i] =
              std::numeric_limits<float>::infinity();
          continue;
        }
        float sum = 0;
        for (int64_t j = 0; j < d.keys; ++j) {
          row[j] = j < visible ? std::exp(row[j] - max) : 0.0f;
          sum += row[j];
        }
        // The values are weighed through the dropout's mask; the logsumexp
        // is the undropped softmax's.
        for (int64_t j = 0; j < visible; ++j)
          row[j] = flash::dropped(d, key, row[j] / sum, b, h, i, j);
        lse[(b * d.heads + h) * d.queries + i] = max + std::log(sum);
      }
      if (d.keys > 0 && d.valueSize > 0)
        sgemm(false, false, d.queries, d.valueSize, d.keys, scores.data(), vp,
              outRows);
    }
  storeFloats(out, outv, d.type);
  storeFloats(lse, lsev, d.lseType);
  backend::profileMark(kernel);
}

namespace {
/// An attention backward's operands as f32: q, k, v, the forward's output,
/// its gradient and its logsumexp.
struct BackwardOperands {
  std::vector<float> q, k, v, out, dout, lse;
};
BackwardOperands loadBackward(const AttentionDesc &d, const void *dout,
                              const void *q, const void *k, const void *v,
                              const void *out, const void *lse) {
  int64_t qCount = d.batch * d.heads * d.queries;
  int64_t kvCount = d.batch * d.kvHeads * d.keys;
  return {loadFloats(q, d.type, qCount * d.headSize),
          loadFloats(k, d.type, kvCount * d.headSize),
          loadFloats(v, d.type, kvCount * d.valueSize),
          loadFloats(out, d.type, qCount * d.valueSize),
          loadFloats(dout, d.type, qCount * d.valueSize),
          loadFloats(lse, d.lseType, qCount)};
}
} // namespace

void tgc::rt::attentionGrad(Context &, const AttentionDesc &d,
                            const void *doutv, const void *qv, const void *kv,
                            const void *vv, const void *outv, const void *lsev,
                            void *dqv, void *dkv, void *dvv,
                            const char *kernel) {
  int64_t group = d.heads / d.kvHeads;
  int64_t qCount = d.batch * d.heads * d.queries;
  int64_t kvCount = d.batch * d.kvHeads * d.keys;
  auto [q, k, v, o, dout, lse] = loadBackward(d, doutv, qv, kv, vv, outv, lsev);
  std::vector<float> dq(qCount * d.headSize, 0.0f),
      dk(kvCount * d.headSize, 0.0f), dv(kvCount * d.valueSize, 0.0f);
  std::vector<float> p(d.queries * d.keys), dp(d.queries * d.keys);
  // The soft cap's slope 1 - (capped / softcap)^2 at each score.
  std::vector<float> slope(d.softcap > 0.0 ? d.queries * d.keys : 0);
  // With dropout, p through the mask (dv's weights), and the mask itself.
  bool dropout = d.dropout > 0.0;
  std::vector<float> dropped(dropout ? d.queries * d.keys : 0);
  std::vector<char> kept(dropped.size());
  flash::DropoutKey key = flash::dropoutKey(d);
  if (!p.empty())
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.heads; ++h) {
        int64_t kvh = h / group;
        int64_t qOffset = (b * d.heads + h) * d.queries;
        int64_t kvOffset = (b * d.kvHeads + kvh) * d.keys;
        const float *qp = q.data() + qOffset * d.headSize;
        const float *kp = k.data() + kvOffset * d.headSize;
        const float *vp = v.data() + kvOffset * d.valueSize;
        const float *outp = o.data() + qOffset * d.valueSize;
        const float *dop = dout.data() + qOffset * d.valueSize;
        // p = exp((score - rowMax) - rowLogSum) with score =
        // softcap(scale * q k^T) + bias, masked; (rowMax, rowLogSum) = (lse,
        // 0), 0 on a row whose logsumexp is +inf, but on a row whose finite
        // logsumexp is past kDegenerateLse (Runtime.h) the row's own max and
        // log-sum. The bias gets no gradient here.
        if (d.headSize == 0)
          std::fill(p.begin(), p.end(), 0.0f);
        else
          sgemm(false, true, d.queries, d.keys, d.headSize, qp, kp, p.data(),
                float(d.scale), 0.0f);
        for (int64_t i = 0; i < d.queries; ++i) {
          int64_t visible = d.causal ? i + d.keys - d.queries + 1 : d.keys;
          visible = std::clamp<int64_t>(visible, 0, d.keys);
          float *row = p.data() + i * d.keys;
          for (int64_t j = 0; j < visible; ++j) {
            row[j] = flash::capScore(d, row[j]);
            if (!slope.empty())
              slope[i * d.keys + j] = flash::capSlope(d, row[j]);
            row[j] += flash::biasAt(d, b, h, i, j);
          }
          const float inf = std::numeric_limits<float>::infinity();
          float rowMax = lse[qOffset + i], rowLogSum = 0.0f;
          if (std::isfinite(rowMax) && std::fabs(rowMax) >= kDegenerateLse) {
            rowMax = -inf;
            for (int64_t j = 0; j < visible; ++j)
              rowMax = std::max(rowMax, row[j]);
            float sum = 0.0f;
            for (int64_t j = 0; j < visible; ++j)
              if (row[j] != -inf)
                sum += std::exp(row[j] - rowMax);
            // Nothing visible after all: p = 0, as on a row of +inf.
            if (rowMax == -inf)
              rowMax = inf;
            else
              rowLogSum = std::log(sum);
          }
          for (int64_t j = 0; j < d.keys; ++j)
            row[j] =
                j < visible ? std::exp((row[j] - rowMax) - rowLogSum) : 0.0f;
        }
        if (dropout)
          for (int64_t i = 0; i < d.queries; ++i)
            for (int64_t j = 0; j < d.keys; ++j) {
              int64_t x = i * d.keys + j;
              kept[x] = flash::keeps(d, key, b, h, i, j);
              dropped[x] = flash::throughMask(d, kept[x], p[x]);
            }
        // dv += p^T dout; dp = dout v^T (with dropout, dv from the dropped
        // p and dp through the mask).
        if (d.valueSize == 0) {
          std::fill(dp.begin(), dp.end(), 0.0f);
        } else {
          sgemm(true, false, d.keys, d.valueSize, d.queries,
                dropout ? dropped.data() : p.data(), dop,
                dv.data() + kvOffset * d.valueSize, 1.0f, 1.0f);
          sgemm(false, true, d.queries, d.keys, d.valueSize, dop, vp, dp.data(),
                1.0f, 0.0f);
          if (dropout)
            for (size_t x = 0; x < dp.size(); ++x)
              dp[x] = flash::throughMask(d, kept[x], dp[x]);
        }
        // ds = p * (dp - rowsum(dout * out)), through the soft cap's slope,
        // scaled.
        for (int64_t i = 0; i < d.queries; ++i) {
          float delta = 0;
          for (int64_t e = 0; e < d.valueSize; ++e)
            delta += dop[i * d.valueSize + e] * outp[i * d.valueSize + e];
          for (int64_t j = 0; j < d.keys; ++j) {
            float ds = float(d.scale) * p[i * d.keys + j] *
                       (dp[i * d.keys + j] - delta);
            dp[i * d.keys + j] =
                slope.empty() ? ds : ds * slope[i * d.keys + j];
          }
        }
        // dq = ds k; dk += ds^T q.
        if (d.headSize > 0) {
          sgemm(false, false, d.queries, d.headSize, d.keys, dp.data(), kp,
                dq.data() + qOffset * d.headSize, 1.0f, 0.0f);
          sgemm(true, false, d.keys, d.headSize, d.queries, dp.data(), qp,
                dk.data() + kvOffset * d.headSize, 1.0f, 1.0f);
        }
      }
  storeFloats(dq, dqv, d.type);
  storeFloats(dk, dkv, d.type);
  storeFloats(dv, dvv, d.type);
  backend::profileMark(kernel);
}

void tgc::rt::attentionBiasGrad(Context &, const AttentionDesc &d,
                                const void *doutv, const void *qv,
                                const void *kv, const void *vv,
                                const void *outv, const void *lsev,
                                float *dbias, const char *kernel) {
  BackwardOperands in = loadBackward(d, doutv, qv, kv, vv, outv, lsev);
  flash::DropoutKey key = flash::dropoutKey(d);
  for (int64_t e = 0, n = flash::biasElements(d); e < n; ++e)
    dbias[e] =
        flash::biasGradAt(d, key, in.dout.data(), in.q.data(), in.k.data(),
                          in.v.data(), in.out.data(), in.lse.data(), e);
  backend::profileMark(kernel);
}
