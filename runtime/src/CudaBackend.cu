//===- CudaBackend.cu - the CUDA target: device memory, cuBLAS, attention -===//
//
// GEMMs through cuBLASLt with f32 accumulation (row-major operands as the
// transposed column-major product), with a gemm region's epilogue where
// cuBLASLt has a kernel for it, one plan per shape, types, epilogue and
// alignment (cublasGemmStridedBatchedEx where it has none), and attention
// (forward and backward) that keeps no s x s matrix in memory: the tiled
// kernels of FlashAttention.h for head sizes up to 128, else (or with
// TGC_ATTENTION=reference) a reference of one thread per output element
// that recomputes the scores it needs. Every failing call reports the
// kernel (the tg op or region) it ran for.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include "tgc/runtime/FlashAttention.h"
#include "tgc/runtime/Kernels.h"
#include "tgc/runtime/Runtime.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

using namespace tgc::rt;

namespace {

cudaStream_t stream = nullptr;
/// Collectives run on their own stream, ordered against the kernels by
/// events: `ready` (the compute stream's queued work) and one `done` per
/// collective of the step.
cudaStream_t commStream = nullptr;
cudaEvent_t ready = nullptr;
std::vector<cudaEvent_t> done;
cublasHandle_t blas = nullptr;
cublasLtHandle_t lt = nullptr;
/// cuBLASLt's workspace when the memory plan has none in the arena (32
/// MiB, what Hopper's kernels ask for), allocated at its first use; none
/// when it cannot be.
void *ownWorkspace = nullptr;
size_t ownWorkspaceBytes = 0;
size_t peakUsed = 0;

void check(cudaError_t status, const char *what, const char *kernel) {
  if (status == cudaSuccess)
    return;
  std::fprintf(stderr, "error: %s for %s: %s\n", what, kernel,
               cudaGetErrorString(status));
  std::exit(1);
}

void ensureStarted() {
  if (stream)
    return;
  check(cudaStreamCreate(&stream), "cudaStreamCreate", "the runtime");
  check(cudaStreamCreateWithFlags(&commStream, cudaStreamNonBlocking),
        "cudaStreamCreate", "the communication stream");
  check(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming),
        "cudaEventCreate", "the communication stream");
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: cublasCreate failed\n");
    std::exit(1);
  }
  cublasSetStream(blas, stream);
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: cublasLtCreate failed\n");
    std::exit(1);
  }
}

void notePeak() {
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) == cudaSuccess && total - free > peakUsed)
    peakUsed = total - free;
}

cudaDataType toCuda(DType type) {
  switch (type) {
  case DType::F64:
    return CUDA_R_64F;
  case DType::BF16:
    return CUDA_R_16BF;
  case DType::F16:
    return CUDA_R_16F;
  default:
    return CUDA_R_32F;
  }
}

} // namespace

cudaStream_t tgc::rt::currentStream() {
  ensureStarted();
  return stream;
}

cudaStream_t tgc::rt::currentCommStream() {
  ensureStarted();
  return commStream;
}

void backend::beginCollective() {
  ensureStarted();
  check(cudaEventRecord(ready, stream), "cudaEventRecord", "a collective");
  check(cudaStreamWaitEvent(commStream, ready, 0), "cudaStreamWaitEvent",
        "a collective");
}

void backend::endCollective(int id) {
  while (done.size() <= static_cast<size_t>(id)) {
    cudaEvent_t event;
    check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
          "cudaEventCreate", "a collective");
    done.push_back(event);
  }
  check(cudaEventRecord(done[id], commStream), "cudaEventRecord",
        "a collective");
}

void backend::waitCollective(int id) {
  check(cudaStreamWaitEvent(stream, done[id], 0), "cudaStreamWaitEvent",
        "a collective's result");
}

bool backend::hasStageTransfers() { return false; }

std::string backend::describe() {
  ensureStarted();
  int device = 0;
  cudaDeviceProp properties;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&properties, device) != cudaSuccess)
    return "cuda";
  return std::string("cuda, ") + properties.name;
}

void *backend::allocate(size_t bytes, std::string &error) {
  ensureStarted();
  void *pointer = nullptr;
  cudaError_t status = cudaMalloc(&pointer, bytes ? bytes : 1);
  if (status != cudaSuccess) {
    size_t free = 0, total = 0;
    cudaMemGetInfo(&free, &total);
    error = std::string("cannot allocate ") + std::to_string(bytes) +
            " bytes on the GPU (" + std::to_string(free) + " of " +
            std::to_string(total) + " free): " + cudaGetErrorString(status);
    return nullptr;
  }
  check(cudaMemset(pointer, 0, bytes ? bytes : 1), "cudaMemset", "the arena");
  notePeak();
  return pointer;
}

void backend::release(void *pointer) { cudaFree(pointer); }

void backend::toDevice(void *device, const void *host, size_t bytes) {
  check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream),
        "cudaMemcpy to the device", "an argument");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize", "an argument");
}

void backend::toHost(void *host, const void *device, size_t bytes) {
  check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream),
        "cudaMemcpy to the host", "a result");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize", "a result");
}

void backend::onDevice(void *destination, const void *source, size_t bytes) {
  check(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToDevice,
                        stream),
        "cudaMemcpy on the device", "an updated argument");
}

void backend::copyRows(void *destination, size_t destinationPitch,
                       const void *source, size_t sourcePitch, size_t width,
                       size_t rows, bool onCommStream) {
  if (!rows || !width)
    return;
  check(cudaMemcpy2DAsync(destination, destinationPitch, source, sourcePitch,
                          width, rows, cudaMemcpyDeviceToDevice,
                          onCommStream ? commStream : stream),
        "cudaMemcpy2D on the device", "a collective's blocks");
}

void backend::selectDevice(int localRank) {
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount", "the runtime");
  if (count > 0)
    check(cudaSetDevice(localRank % count), "cudaSetDevice", "the runtime");
}

void backend::setLocalProcesses(int) {}

void backend::synchronize(const char *what) {
  check(cudaStreamSynchronize(stream), "the GPU", what);
  notePeak();
}

size_t backend::peakMemory() { return peakUsed; }

namespace {
/// The step as a CUDA graph, once captured; `stepCalls` counts the calls.
cudaGraphExec_t stepGraph = nullptr;
int64_t stepCalls = 0;
bool graphFailed = false;
} // namespace

void backend::runStep(StepFunction step, Context &context, bool mayCapture) {
  ensureStarted();
  static const bool disabled = [] {
    const char *choice = std::getenv("TGC_CUDA_GRAPH");
    return choice && std::string(choice) == "0";
  }();
  // The first step runs eagerly: cuBLAS and the kernels load, and whatever
  // they allocate is allocated before a capture.
  if (!mayCapture || disabled || graphFailed || stepCalls++ == 0)
    return step(context);
  if (!stepGraph) {
    cudaGraph_t graph = nullptr;
    cudaError_t status =
        cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    if (status == cudaSuccess) {
      step(context); // recorded, not run
      status = cudaStreamEndCapture(stream, &graph);
    }
    if (status == cudaSuccess)
      status = cudaGraphInstantiate(&stepGraph, graph, 0);
    if (graph)
      cudaGraphDestroy(graph);
    if (status != cudaSuccess) {
      cudaGetLastError();
      stepGraph = nullptr;
      graphFailed = true;
      std::fprintf(stderr,
                   "note: the step could not be captured as a CUDA graph "
                   "(%s); its kernels are launched one by one\n",
                   cudaGetErrorString(status));
      return step(context);
    }
  }
  check(cudaGraphLaunch(stepGraph, stream), "cudaGraphLaunch", "the step");
}

namespace {
bool profiling = false;
/// profileBegin's event, then one per mark, reused from step to step.
std::vector<cudaEvent_t> profileEvents;
std::vector<const char *> profileKernels;
size_t profileMarks = 0;

void recordProfileEvent() {
  if (profileMarks == profileEvents.size()) {
    cudaEvent_t event;
    check(cudaEventCreate(&event), "cudaEventCreate", "the profile");
    profileEvents.push_back(event);
  }
  check(cudaEventRecord(profileEvents[profileMarks++], stream),
        "cudaEventRecord", "the profile");
}
} // namespace

void backend::profileBegin() {
  ensureStarted();
  profiling = true;
  profileMarks = 0;
  profileKernels.clear();
  recordProfileEvent();
}

void backend::profileMark(const char *kernel) {
  if (!profiling)
    return;
  recordProfileEvent();
  profileKernels.push_back(kernel);
}

void backend::profileEnd(std::vector<std::pair<std::string, double>> &times) {
  profiling = false;
  synchronize("the profiled step");
  for (size_t i = 1; i < profileMarks; ++i) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, profileEvents[i - 1], profileEvents[i]),
          "cudaEventElapsedTime", "the profile");
    times.emplace_back(profileKernels[i - 1], ms * 1e-3);
  }
}

void tgc::rt::checkLaunch(const char *kernel, const char *location) {
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess)
    return backend::profileMark(kernel);
  std::fprintf(stderr, "error: kernel %s (%s) failed to launch: %s\n", kernel,
               location, cudaGetErrorString(status));
  std::exit(1);
}

void tgc::rt::reportKernelError(const char *what, int64_t value,
                                int64_t bound) {
  std::fprintf(stderr, "error: %s %lld is out of range [0, %lld)\n", what,
               static_cast<long long>(value), static_cast<long long>(bound));
  std::exit(1);
}

namespace {

/// A cuBLASLt plan: the operation, its layouts and the algorithm the
/// heuristic chose, or none (`ok` false) when it found none.
struct LtPlan {
  bool ok = false;
  /// Whether a call succeeded with it (a first failure declines the plan).
  bool used = false;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo;
};
std::map<std::string, LtPlan> ltPlans;

bool isLtType(DType type) {
  return type == DType::F32 || type == DType::BF16 || type == DType::F16;
}

/// The alignment cuBLASLt may assume of `pointer` (at most 256 bytes).
uint32_t alignmentOf(const void *pointer) {
  auto address = reinterpret_cast<uintptr_t>(pointer);
  uint32_t alignment = 256;
  while (alignment > 1 && address % alignment)
    alignment /= 2;
  return alignment;
}

/// The cuBLASLt epilogue of `e` for the column-major product (cuBLASLt's A
/// is our B); false when it has none (ReLU's aux is a bit mask there, not
/// the pre-activation).
bool getLtEpilogue(const GemmEpilogue *e, cublasLtEpilogue_t &epilogue) {
  epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  if (!e)
    return true;
  if (e->bias && e->biasGradOf != GemmBiasGrad::None)
    return false;
  switch (e->activation) {
  case GemmActivation::None:
    if (e->aux)
      return false;
    if (e->biasGradOf == GemmBiasGrad::A)
      epilogue = CUBLASLT_EPILOGUE_BGRADB;
    else if (e->biasGradOf == GemmBiasGrad::B)
      epilogue = CUBLASLT_EPILOGUE_BGRADA;
    else if (e->biasGradOf == GemmBiasGrad::Output)
      return false;
    else if (e->bias)
      epilogue = CUBLASLT_EPILOGUE_BIAS;
    return true;
  case GemmActivation::Relu:
    if (e->aux || e->biasGradOf != GemmBiasGrad::None)
      return false;
    epilogue = e->bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    return true;
  case GemmActivation::Gelu:
    if (e->biasGradOf != GemmBiasGrad::None)
      return false;
    epilogue = e->aux ? (e->bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS
                                 : CUBLASLT_EPILOGUE_GELU_AUX)
                      : (e->bias ? CUBLASLT_EPILOGUE_GELU_BIAS
                                 : CUBLASLT_EPILOGUE_GELU);
    return true;
  case GemmActivation::DGelu:
    if (e->bias || (e->biasGradOf != GemmBiasGrad::None &&
                    e->biasGradOf != GemmBiasGrad::Output))
      return false;
    epilogue = e->biasGradOf == GemmBiasGrad::Output
                   ? CUBLASLT_EPILOGUE_DGELU_BGRAD
                   : CUBLASLT_EPILOGUE_DGELU;
    return true;
  }
  return false;
}

template <typename T>
void setAttribute(cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t name,
                  const T &value) {
  cublasLtMatmulDescSetAttribute(op, name, &value, sizeof(value));
}

template <typename T>
void setAttribute(cublasLtMatrixLayout_t layout,
                  cublasLtMatrixLayoutAttribute_t name, const T &value) {
  cublasLtMatrixLayoutSetAttribute(layout, name, &value, sizeof(value));
}

cublasLtMatrixLayout_t makeLayout(DType type, uint64_t rows, uint64_t cols,
                                  int64_t ld, int32_t batch, int64_t stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  if (cublasLtMatrixLayoutCreate(&layout, toCuda(type), rows, cols, ld) !=
      CUBLAS_STATUS_SUCCESS)
    return nullptr;
  if (batch > 1) {
    setAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, batch);
    setAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride);
  }
  return layout;
}

/// D = op(A) op(B) (+ the residual) with `e`'s epilogue (null: none) in one
/// cuBLASLt call; false, having written nothing, when cuBLASLt has no
/// kernel for it. Row-major C = op(A) op(B) is column-major
/// C^T = op(B)^T op(A)^T: cuBLASLt's A is our B, its m our n.
bool ltMatmul(Context &context, const GemmDesc &g, const GemmEpilogue *e,
              const void *a, const void *b, void *out, const char *kernel) {
  cublasLtEpilogue_t epilogue;
  if (!lt || g.a != g.b || !isLtType(g.a) || !isLtType(g.c) ||
      !getLtEpilogue(e, epilogue))
    return false;
  // A linear layer's batches form one tall matrix; an epilogue takes no
  // other batching here.
  bool tall = g.sharedRhs && !g.transA;
  int64_t rows = tall ? g.batch * g.m : g.m;
  int32_t batch = tall ? 1 : static_cast<int32_t>(g.batch);
  if (e && batch > 1)
    return false;
  const void *bias = nullptr;
  DType biasType = g.c;
  if (e) {
    bias = e->bias ? e->bias : e->biasGrad;
    biasType = e->bias ? e->biasType : e->biasGradType;
    if ((bias && !isLtType(biasType)) || (e->aux && !isLtType(e->auxType)) ||
        (e->aux && g.n % 8) || (e->residual && e->product != g.c))
      return false;
  }
  const void *residual = e ? e->residual : nullptr;
  // The workspace the memory plan put in the arena, else one of our own.
  void *workspace = context.gemmWorkspace;
  size_t workspaceBytes = context.gemmWorkspaceBytes;
  if (!workspace) {
    if (!ownWorkspace) {
      if (cudaMalloc(&ownWorkspace, size_t(32) << 20) == cudaSuccess)
        ownWorkspaceBytes = size_t(32) << 20;
      else
        cudaGetLastError();
    }
    workspace = ownWorkspace;
    workspaceBytes = ownWorkspaceBytes;
  }
  std::string key =
      std::to_string(g.transA) + std::to_string(g.transB) + " " +
      std::to_string(rows) + "x" + std::to_string(g.n) + "x" +
      std::to_string(g.k) + "x" + std::to_string(batch) + " " +
      std::to_string(g.sharedRhs) + std::to_string(int(g.a)) + "." +
      std::to_string(int(g.c)) + " " + std::to_string(int(epilogue)) + "." +
      std::to_string(int(biasType)) + "." +
      std::to_string(e && e->aux ? int(e->auxType) : -1) + "." +
      std::to_string(residual != nullptr) + " " +
      std::to_string(alignmentOf(a)) + "." + std::to_string(alignmentOf(b)) +
      "." + std::to_string(alignmentOf(out)) + "." +
      std::to_string(residual ? alignmentOf(residual) : 0) + "." +
      std::to_string(bias ? alignmentOf(bias) : 256) + "." +
      std::to_string(e && e->aux ? alignmentOf(e->aux) : 256) + " " +
      std::to_string(workspaceBytes);
  auto [it, isNew] = ltPlans.try_emplace(key);
  LtPlan &plan = it->second;
  if (isNew) {
    if (cublasLtMatmulDescCreate(&plan.op, CUBLAS_COMPUTE_32F, CUDA_R_32F) !=
        CUBLAS_STATUS_SUCCESS)
      return false;
    cublasOperation_t transA = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t transB = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    setAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSA, transA);
    setAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSB, transB);
    setAttribute(plan.op, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);
    if (bias) {
      setAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
      setAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                   int32_t(toCuda(biasType)));
    }
    if (e && e->aux) {
      setAttribute(plan.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, e->aux);
      setAttribute(plan.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, g.n);
      setAttribute(plan.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE,
                   int32_t(toCuda(e->auxType)));
    }
    plan.a = g.transB ? makeLayout(g.b, g.k, g.n, g.k, batch,
                                   g.sharedRhs ? 0 : g.k * g.n)
                      : makeLayout(g.b, g.n, g.k, g.n, batch,
                                   g.sharedRhs ? 0 : g.k * g.n);
    plan.b = g.transA ? makeLayout(g.a, rows, g.k, rows, batch, g.m * g.k)
                      : makeLayout(g.a, g.k, rows, g.k, batch, g.m * g.k);
    plan.d = makeLayout(g.c, g.n, rows, g.n, batch, g.m * g.n);
    plan.c = makeLayout(g.c, g.n, rows, g.n, batch, g.m * g.n);
    cublasLtMatmulPreference_t preference = nullptr;
    cublasLtMatmulHeuristicResult_t result = {};
    int found = 0;
    if (plan.a && plan.b && plan.c && plan.d &&
        cublasLtMatmulPreferenceCreate(&preference) == CUBLAS_STATUS_SUCCESS) {
      auto prefer = [&](cublasLtMatmulPreferenceAttributes_t name, auto value) {
        cublasLtMatmulPreferenceSetAttribute(preference, name, &value,
                                             sizeof(value));
      };
      prefer(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
             uint64_t(workspaceBytes));
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignmentOf(b));
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignmentOf(a));
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
             alignmentOf(residual ? residual : out));
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignmentOf(out));
      if (cublasLtMatmulAlgoGetHeuristic(lt, plan.op, plan.a, plan.b, plan.c,
                                         plan.d, preference, 1, &result,
                                         &found) != CUBLAS_STATUS_SUCCESS)
        found = 0;
      cublasLtMatmulPreferenceDestroy(preference);
    }
    plan.ok = found > 0;
    if (plan.ok)
      plan.algo = result.algo;
  }
  if (!plan.ok)
    return false;
  // The plan holds the pointers of its first call: set this call's.
  if (bias)
    setAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  if (e && e->aux)
    setAttribute(plan.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, e->aux);
  float alpha = 1.0f, beta = residual ? 1.0f : 0.0f;
  cublasStatus_t status =
      cublasLtMatmul(lt, plan.op, &alpha, b, plan.a, a, plan.b, &beta,
                     residual ? residual : out, plan.c, out, plan.d, &plan.algo,
                     workspace, workspaceBytes, stream);
  if (status != CUBLAS_STATUS_SUCCESS) {
    if (!plan.used) {
      // Rejected at its first call: declined from now on.
      plan.ok = false;
      return false;
    }
    std::fprintf(stderr, "error: cuBLASLt GEMM for %s failed (status %d)\n",
                 kernel, static_cast<int>(status));
    std::exit(1);
  }
  plan.used = true;
  backend::profileMark(kernel);
  return true;
}

} // namespace

void tgc::rt::gemm(Context &context, const GemmDesc &d, const void *a,
                   const void *b, void *c, const char *kernel) {
  ensureStarted();
  if (ltMatmul(context, d, nullptr, a, b, c, kernel))
    return;
  if (d.a != d.b) {
    std::fprintf(stderr,
                 "error: %s: cuBLAS needs both GEMM operands in one "
                 "type\n",
                 kernel);
    std::exit(1);
  }
  bool isDouble = d.a == DType::F64;
  double alpha64 = 1.0, beta64 = 0.0;
  float alpha32 = 1.0f, beta32 = 0.0f;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  cublasStatus_t status = cublasGemmStridedBatchedEx(
      blas, d.transB ? CUBLAS_OP_T : CUBLAS_OP_N,
      d.transA ? CUBLAS_OP_T : CUBLAS_OP_N, d.n, d.m, d.k,
      isDouble ? static_cast<const void *>(&alpha64) : &alpha32, b, toCuda(d.b),
      d.transB ? d.k : d.n, d.sharedRhs ? 0 : d.k * d.n, a, toCuda(d.a),
      d.transA ? d.m : d.k, d.m * d.k,
      isDouble ? static_cast<const void *>(&beta64) : &beta32, c, toCuda(d.c),
      d.n, d.m * d.n, d.batch,
      isDouble ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: cuBLAS GEMM for %s failed (status %d)\n",
                 kernel, static_cast<int>(status));
    std::exit(1);
  }
  backend::profileMark(kernel);
}

bool tgc::rt::gemmEpilogue(Context &context, const GemmDesc &desc,
                           const GemmEpilogue &epilogue, const void *a,
                           const void *b, void *d, const char *kernel) {
  ensureStarted();
  return backend::gemmEpiloguesEnabled() &&
         ltMatmul(context, desc, &epilogue, a, b, d, kernel);
}

namespace {

/// One thread per output element (b, h, i, d): the row's max and sum, then
/// the weighted sum of values; d == 0 also writes the logsumexp. Scores
/// (flash::scoreAt) carry the bias, the values are weighed through the
/// dropout's mask (flash::dropped); a row that sees no key with a score
/// above -inf gets zeros and a logsumexp of +inf.
template <typename S, typename L>
__global__ void attentionForward(AttentionDesc d, const S *q, const S *k,
                                 const S *v, S *out, L *lse) {
  Threads th = gridThreads();
  int64_t total = d.batch * d.heads * d.queries * d.valueSize;
  int64_t group = d.heads / d.kvHeads;
  for (int64_t x = th.index; x < total; x += th.count) {
    int64_t e = x % d.valueSize, row = x / d.valueSize;
    int64_t i = row % d.queries, bh = row / d.queries;
    int64_t h = bh % d.heads, b = bh / d.heads;
    int64_t kvRow = (b * d.kvHeads + h / group) * d.keys;
    int64_t visible = d.causal ? i + d.keys - d.queries + 1 : d.keys;
    const S *qi = q + row * d.headSize;
    auto scoreOf = [&](int64_t j) {
      return flash::scoreAt(d, qi, k + (kvRow + j) * d.headSize, b, h, i, j);
    };
    flash::DropoutKey key = flash::dropoutKey(d);
    float max = -INFINITY, sum = 0, acc = 0;
    for (int64_t j = 0; j < visible; ++j)
      max = fmaxf(max, scoreOf(j));
    for (int64_t j = 0; j < visible; ++j) {
      float s = scoreOf(j);
      // A key the bias hides weighs nothing (and a row of them gives no
      // exp(-inf - -inf)).
      if (s == -INFINITY)
        continue;
      float p = expf(s - max);
      sum += p;
      acc += flash::dropped(d, key, p, b, h, i, j) *
             ld(v[(kvRow + j) * d.valueSize + e]);
    }
    bool empty = sum == 0.0f;
    out[x] = st<S>(empty ? 0.0f : acc / sum);
    if (e == 0)
      lse[row] = st<L>(empty ? INFINITY : max + logf(sum));
  }
}

/// dq: one thread per (b, h, i, e). p = exp((score - max) - logSum) with
/// the row's flash::backwardRow (0 on a row whose logsumexp is +inf), dp
/// through the dropout's mask, ds through the soft cap's slope; the bias
/// gets no gradient.
template <typename S, typename L>
__global__ void attentionGradQuery(AttentionDesc d, const S *dout, const S *q,
                                   const S *k, const S *v, const S *out,
                                   const L *lse, S *dq) {
  Threads th = gridThreads();
  int64_t total = d.batch * d.heads * d.queries * d.headSize;
  int64_t group = d.heads / d.kvHeads;
  for (int64_t x = th.index; x < total; x += th.count) {
    int64_t e = x % d.headSize, row = x / d.headSize;
    int64_t i = row % d.queries, bh = row / d.queries;
    int64_t h = bh % d.heads, b = bh / d.heads;
    int64_t kvRow = (b * d.kvHeads + h / group) * d.keys;
    int64_t visible = d.causal ? i + d.keys - d.queries + 1 : d.keys;
    const S *qi = q + row * d.headSize;
    const S *doi = dout + row * d.valueSize;
    float delta = 0;
    for (int64_t f = 0; f < d.valueSize; ++f)
      delta += ld(doi[f]) * ld(out[row * d.valueSize + f]);
    flash::SoftmaxRow softmax = flash::backwardRow(
        d, float(ld(lse[row])), qi, k + kvRow * d.headSize, b, h, i);
    flash::DropoutKey key = flash::dropoutKey(d);
    float acc = 0;
    for (int64_t j = 0; j < visible; ++j) {
      float c = flash::cappedScoreAt(d, qi, k + (kvRow + j) * d.headSize);
      float s = c + flash::biasAt(d, b, h, i, j);
      float p = expf((s - softmax.max) - softmax.logSum);
      float dp = 0;
      for (int64_t f = 0; f < d.valueSize; ++f)
        dp += ld(doi[f]) * ld(v[(kvRow + j) * d.valueSize + f]);
      dp = flash::dropped(d, key, dp, b, h, i, j);
      acc += float(d.scale) * flash::capSlope(d, c) * p * (dp - delta) *
             ld(k[(kvRow + j) * d.headSize + e]);
    }
    dq[x] = st<S>(acc);
  }
}

/// dk and dv: one thread per (b, kv head, j, e), summing over the heads of
/// the group and the queries that see key j, with p as in
/// attentionGradQuery.
template <typename S, typename L>
__global__ void
attentionGradKeyValue(AttentionDesc d, const S *dout, const S *q, const S *k,
                      const S *v, const S *out, const L *lse, S *dk, S *dv) {
  Threads th = gridThreads();
  int64_t width = d.headSize > d.valueSize ? d.headSize : d.valueSize;
  int64_t total = d.batch * d.kvHeads * d.keys * width;
  int64_t group = d.heads / d.kvHeads;
  for (int64_t x = th.index; x < total; x += th.count) {
    int64_t e = x % width, kvRow = x / width;
    int64_t j = kvRow % d.keys, bkv = kvRow / d.keys;
    int64_t kvh = bkv % d.kvHeads, b = bkv / d.kvHeads;
    float dkAcc = 0, dvAcc = 0;
    flash::DropoutKey key = flash::dropoutKey(d);
    for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h)
      for (int64_t i = 0; i < d.queries; ++i) {
        if (d.causal && j >= i + d.keys - d.queries + 1)
          continue;
        int64_t row = (b * d.heads + h) * d.queries + i;
        const S *doi = dout + row * d.valueSize;
        const S *qi = q + row * d.headSize;
        flash::SoftmaxRow softmax = flash::backwardRow(
            d, float(ld(lse[row])), qi, k + bkv * d.keys * d.headSize, b, h, i);
        float c = flash::cappedScoreAt(d, qi, k + kvRow * d.headSize);
        float s = c + flash::biasAt(d, b, h, i, j);
        float p = expf((s - softmax.max) - softmax.logSum);
        bool kept = flash::keeps(d, key, b, h, i, j);
        if (e < d.valueSize)
          dvAcc += flash::throughMask(d, kept, p) * ld(doi[e]);
        if (e < d.headSize) {
          float delta = 0, dp = 0;
          for (int64_t f = 0; f < d.valueSize; ++f) {
            delta += ld(doi[f]) * ld(out[row * d.valueSize + f]);
            dp += ld(doi[f]) * ld(v[kvRow * d.valueSize + f]);
          }
          dp = flash::throughMask(d, kept, dp);
          dkAcc += float(d.scale) * flash::capSlope(d, c) * p * (dp - delta) *
                   ld(q[row * d.headSize + e]);
        }
      }
    if (e < d.headSize)
      dk[kvRow * d.headSize + e] = st<S>(dkAcc);
    if (e < d.valueSize)
      dv[kvRow * d.valueSize + e] = st<S>(dvAcc);
  }
}

/// The bias's gradient: one thread per bias element (flash::biasGradAt).
template <typename S, typename L>
__global__ void
attentionBiasGradKernel(AttentionDesc d, const S *dout, const S *q, const S *k,
                        const S *v, const S *out, const L *lse, float *dbias) {
  Threads th = gridThreads();
  flash::DropoutKey key = flash::dropoutKey(d);
  for (int64_t x = th.index, n = flash::biasElements(d); x < n; x += th.count)
    dbias[x] = flash::biasGradAt(d, key, dout, q, k, v, out, lse, x);
}

/// A grid of `blocks` blocks, at least 1 and at most 65535: the kernels
/// loop over the blocks (or elements) past it.
unsigned gridOf(int64_t blocks) {
  return static_cast<unsigned>(blocks < 1       ? 1
                               : blocks > 65535 ? 65535
                                                : blocks);
}

/// One thread per element, 256 a block.
unsigned blocksFor(int64_t elements) { return gridOf((elements + 255) / 256); }

/// A block per tile of `tile` rows of each of `groups` groups.
unsigned tiledBlocks(int64_t groups, int64_t rows, int tile) {
  return gridOf(groups * ((rows + tile - 1) / tile));
}

/// Calls tiled(std::integral_constant<int, DMAX>()) with the tiled
/// kernels' bound for `d` and returns true; false when they do not take it
/// (rows longer than 128) or TGC_ATTENTION=reference asks for the
/// reference kernels.
template <typename Fn> bool runTiled(const AttentionDesc &d, Fn &&tiled) {
  static const bool reference = [] {
    const char *choice = std::getenv("TGC_ATTENTION");
    return choice && std::string(choice) == "reference";
  }();
  int bound = flash::boundFor(d);
  if (reference || !bound)
    return false;
  if (bound == 64)
    tiled(std::integral_constant<int, 64>());
  else
    tiled(std::integral_constant<int, 128>());
  return true;
}

/// Calls fn(S{}, L{}) for the storage types of an attention.
template <typename Fn>
void visitAttention(const AttentionDesc &d, Fn &&fn, const char *kernel) {
  if (d.lseType != DType::F32) {
    std::fprintf(stderr,
                 "error: %s: the CUDA attention takes an f32 "
                 "logsumexp\n",
                 kernel);
    std::exit(1);
  }
  switch (d.type) {
  case DType::F32:
    return fn(float{}, float{});
  case DType::BF16:
    return fn(bf16{}, float{});
  case DType::F16:
    return fn(f16{}, float{});
  default:
    std::fprintf(stderr,
                 "error: %s: the CUDA attention takes f32, bf16 or "
                 "f16\n",
                 kernel);
    std::exit(1);
  }
}

} // namespace

void tgc::rt::attention(Context &, const AttentionDesc &d, const void *q,
                        const void *k, const void *v, void *out, void *lse,
                        const char *kernel) {
  ensureStarted();
  visitAttention(
      d,
      [&](auto s, auto l) {
        using S = decltype(s);
        using L = decltype(l);
        auto tiled = [&](auto bound) {
          constexpr int DMAX = decltype(bound)::value;
          constexpr int kRows = flash::kRows<DMAX>;
          flash::flashForward<S, L, DMAX, 1>
              <<<tiledBlocks(d.batch * d.heads, d.queries, kRows), kRows, 0,
                 stream>>>(d, static_cast<const S *>(q),
                           static_cast<const S *>(k), static_cast<const S *>(v),
                           static_cast<S *>(out), static_cast<L *>(lse));
        };
        if (runTiled(d, tiled))
          return;
        attentionForward<S, L>
            <<<blocksFor(d.batch * d.heads * d.queries * d.valueSize), 256, 0,
               stream>>>(d, static_cast<const S *>(q),
                         static_cast<const S *>(k), static_cast<const S *>(v),
                         static_cast<S *>(out), static_cast<L *>(lse));
      },
      kernel);
  checkLaunch(kernel, "attention");
}

void tgc::rt::attentionGrad(Context &, const AttentionDesc &d, const void *dout,
                            const void *q, const void *k, const void *v,
                            const void *out, const void *lse, void *dq,
                            void *dk, void *dv, const char *kernel) {
  ensureStarted();
  visitAttention(
      d,
      [&](auto s, auto l) {
        using S = decltype(s);
        using L = decltype(l);
        auto tiled = [&](auto bound) {
          constexpr int DMAX = decltype(bound)::value;
          constexpr int kRows = flash::kRows<DMAX>;
          flash::flashGradQuery<S, L, DMAX, 1>
              <<<tiledBlocks(d.batch * d.heads, d.queries, kRows), kRows, 0,
                 stream>>>(d, static_cast<const S *>(dout),
                           static_cast<const S *>(q), static_cast<const S *>(k),
                           static_cast<const S *>(v),
                           static_cast<const S *>(out),
                           static_cast<const L *>(lse), static_cast<S *>(dq));
          flash::flashGradKeyValue<S, L, DMAX, 1>
              <<<tiledBlocks(d.batch * d.kvHeads, d.keys, kRows), kRows, 0,
                 stream>>>(
                  d, static_cast<const S *>(dout), static_cast<const S *>(q),
                  static_cast<const S *>(k), static_cast<const S *>(v),
                  static_cast<const S *>(out), static_cast<const L *>(lse),
                  static_cast<S *>(dk), static_cast<S *>(dv));
        };
        if (runTiled(d, tiled))
          return;
        attentionGradQuery<S, L>
            <<<blocksFor(d.batch * d.heads * d.queries * d.headSize), 256, 0,
               stream>>>(d, static_cast<const S *>(dout),
                         static_cast<const S *>(q), static_cast<const S *>(k),
                         static_cast<const S *>(v), static_cast<const S *>(out),
                         static_cast<const L *>(lse), static_cast<S *>(dq));
        int64_t width = d.headSize > d.valueSize ? d.headSize : d.valueSize;
        attentionGradKeyValue<S, L>
            <<<blocksFor(d.batch * d.kvHeads * d.keys * width), 256, 0,
               stream>>>(d, static_cast<const S *>(dout),
                         static_cast<const S *>(q), static_cast<const S *>(k),
                         static_cast<const S *>(v), static_cast<const S *>(out),
                         static_cast<const L *>(lse), static_cast<S *>(dk),
                         static_cast<S *>(dv));
      },
      kernel);
  checkLaunch(kernel, "attention_grad");
}

void tgc::rt::attentionBiasGrad(Context &, const AttentionDesc &d,
                                const void *dout, const void *q, const void *k,
                                const void *v, const void *out, const void *lse,
                                float *dbias, const char *kernel) {
  ensureStarted();
  visitAttention(
      d,
      [&](auto s, auto l) {
        using S = decltype(s);
        using L = decltype(l);
        attentionBiasGradKernel<S, L>
            <<<blocksFor(flash::biasElements(d)), 256, 0, stream>>>(
                d, static_cast<const S *>(dout), static_cast<const S *>(q),
                static_cast<const S *>(k), static_cast<const S *>(v),
                static_cast<const S *>(out), static_cast<const L *>(lse),
                dbias);
      },
      kernel);
  checkLaunch(kernel, "attention_bias_grad");
}
