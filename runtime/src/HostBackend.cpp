//===- HostBackend.cpp - the host target: the CPU, OpenBLAS ---------------===//
//
// The arena is host memory; GEMMs go through OpenBLAS exactly as the
// interpreter calls it (lib/Eval/ComputeKernels.cpp), and attention is the
// interpreter's reference algorithm, so the host target reproduces the
// interpreter's numbers.
//
//===----------------------------------------------------------------------===//

#include "AtomicFile.h"
#include "Backend.h"
#include "Elements.h"

#include "tgc/runtime/CudaCompat.h"
#include "tgc/runtime/FlashAttention.h"
#include "tgc/runtime/Runtime.h"
#include "tgc/runtime/ScalarOps.h"
#include "tgc/runtime/TiledGemm.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include <sched.h>
#include <sys/mman.h>
#include <ucontext.h>

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
/// The CPUs this process may run on.
unsigned availableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

/// The processes of this launch on this machine, which share its CPUs
/// (backend::setLocalProcesses; 1 until the trainer knows).
unsigned localProcesses = 1;

/// Environment variable `name` as a count from 1 to 1024 of `what`, or
/// `otherwise` when it is not set; anything else stops the process.
unsigned countFromEnvironment(const char *name, const char *what,
                              unsigned otherwise) {
  const char *text = std::getenv(name);
  if (!text)
    return otherwise;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end || value < 1 || value > 1024) {
    std::fprintf(stderr,
                 "error: %s='%s' is not a number of %s from 1 to 1024\n", name,
                 text, what);
    std::exit(1);
  }
  return static_cast<unsigned>(value);
}

/// TGC_HOST_WORKERS, else the available CPUs shared among the local
/// processes (at least 1 each).
unsigned workerCount() {
  return countFromEnvironment("TGC_HOST_WORKERS", "workers",
                              std::max(1u, availableCpus() / localProcesses));
}

/// The fibers that run the threads of a block on one worker
/// (TGC_HOST_THREADS): each runs until its next __syncthreads (or its
/// end), then the next one still running resumes, so every thread reaches
/// a barrier before any passes it. The threads take turns in order in
/// even blocks and in reverse in odd ones, so that a read of another
/// thread's write with no barrier between them reads too early in one of
/// the two.
struct Fibers {
  /// Each fiber's stack, below it a page that faults: an overflow stops
  /// the process instead of writing over another fiber's stack.
  static constexpr size_t kStack = 512 * 1024, kGuard = 4096;
  ucontext_t scheduler;
  std::vector<ucontext_t> contexts;
  std::vector<void *> stacks;
  std::vector<char> finished;
  unsigned count = 0, current = 0, running = 0;
  bool reverse = false;
  void (*block)(void *) = nullptr;
  void *context = nullptr;

  ~Fibers() {
    for (void *stack : stacks)
      munmap(stack, kGuard + kStack);
  }
  /// The next fiber still running after the current one, cyclically.
  unsigned next() const {
    for (unsigned step = 1; step <= count; ++step) {
      unsigned f =
          reverse ? (current + count - step) % count : (current + step) % count;
      if (!finished[f])
        return f;
    }
    return current;
  }
  void runBlock(unsigned threads, void (*body)(void *), void *argument);
};
thread_local Fibers *fibers = nullptr;

void fiberEntry() {
  Fibers &f = *fibers;
  f.block(f.context);
  f.finished[f.current] = 1;
  --f.running;
  // Returning resumes the scheduler (uc_link).
}

void Fibers::runBlock(unsigned threads, void (*body)(void *), void *argument) {
  while (stacks.size() < threads) {
    void *stack = mmap(nullptr, kGuard + kStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stack == MAP_FAILED || mprotect(stack, kGuard, PROT_NONE) != 0) {
      std::fprintf(stderr,
                   "error: cannot map the stacks of %u host threads per "
                   "block (TGC_HOST_THREADS)\n",
                   threads);
      std::fflush(stderr);
      std::_Exit(1);
    }
    stacks.push_back(stack);
  }
  contexts.resize(threads);
  finished.assign(threads, 0);
  count = running = threads;
  block = body;
  context = argument;
  for (unsigned t = 0; t < threads; ++t) {
    getcontext(&contexts[t]);
    contexts[t].uc_stack.ss_sp = static_cast<char *>(stacks[t]) + kGuard;
    contexts[t].uc_stack.ss_size = kStack;
    contexts[t].uc_link = &scheduler;
    makecontext(&contexts[t], fiberEntry, 0);
  }
  reverse = blockIdx.x % 2 == 1;
  current = reverse ? 0 : threads - 1;
  while (running) {
    current = next();
    threadIdx = dim3(current);
    swapcontext(&scheduler, &contexts[current]);
  }
}

/// The workers that run a launch's blocks: the launching thread and
/// workerCount() - 1 others, each taking the next chunk of blocks until
/// none is left.
class BlockPool {
public:
  explicit BlockPool(unsigned workers) {
    for (unsigned w = 1; w < workers; ++w)
      threads.emplace_back([this] { work(); });
  }
  ~BlockPool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread &thread : threads)
      thread.join();
  }
  unsigned workers() const { return static_cast<unsigned>(threads.size()) + 1; }

  void launch(unsigned grid, unsigned threadsPerBlock, void (*block)(void *),
              void *context) {
    Job job{grid, threadsPerBlock, block, context};
    // A launch from inside a block (a GEMM of the host attention's heads)
    // runs on its worker alone.
    if (inJob || threads.empty() || grid == 1) {
      job.chunk = grid;
      run(job);
      return;
    }
    // A few chunks per worker, so that one descheduled worker delays the
    // launch by little.
    job.chunk = std::max(1u, grid / (workers() * 4));
    {
      std::lock_guard<std::mutex> lock(mutex);
      current = &job;
      ++generation;
      active = static_cast<unsigned>(threads.size());
    }
    wake.notify_all();
    run(job);
    std::unique_lock<std::mutex> lock(mutex);
    finished.wait(lock, [&] { return active == 0; });
    current = nullptr;
  }

private:
  struct Job {
    unsigned grid, threads;
    void (*block)(void *);
    void *context;
    unsigned chunk = 1;
    std::atomic<unsigned> next{0};
  };

  static void run(Job &job) {
    bool outer = !inJob;
    inJob = true;
    runBlocks(job);
    inJob = !outer;
  }
  static void runBlocks(Job &job) {
    for (;;) {
      unsigned first = job.next.fetch_add(job.chunk);
      if (first >= job.grid)
        return;
      unsigned last = std::min(job.grid, first + job.chunk);
      for (unsigned b = first; b < last; ++b) {
        blockIdx = dim3(b);
        if (job.threads == 1) {
          threadIdx = dim3(0);
          job.block(job.context);
          continue;
        }
        static thread_local Fibers own;
        fibers = &own;
        hostBlockIsThreaded = true;
        own.runBlock(job.threads, job.block, job.context);
        hostBlockIsThreaded = false;
      }
    }
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      Job *job;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || generation != seen; });
        if (stopping)
          return;
        seen = generation;
        job = current;
      }
      run(*job);
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (--active == 0)
          finished.notify_one();
      }
    }
  }

  static inline thread_local bool inJob = false;
  std::vector<std::thread> threads;
  std::mutex mutex;
  std::condition_variable wake, finished;
  Job *current = nullptr;
  uint64_t generation = 0;
  unsigned active = 0;
  bool stopping = false;
};

BlockPool &blockPool() {
  // GEMMs are tiles on the workers (sgemm), each tile on one thread.
  static BlockPool pool((openblas_set_num_threads(1), workerCount()));
  return pool;
}

/// Runs body(i) for i in [0, count) on the workers.
template <typename Body> void parallelFor(int64_t count, Body &&body) {
  blockPool().launch(
      static_cast<unsigned>(count), 1,
      [](void *context) {
        (*static_cast<std::remove_reference_t<Body> *>(context))(
            static_cast<int64_t>(blockIdx.x));
      },
      &body);
}
/// Runs body(i) for i in [0, count): on the workers when there are parts
/// enough for all of them, else in order here (each part's GEMMs then
/// split over the workers).
template <typename Body> void forEachPart(int64_t count, Body &&body) {
  if (count >= blockPool().workers())
    return parallelFor(count, body);
  for (int64_t i = 0; i < count; ++i)
    body(i);
}
} // namespace

unsigned tgc::rt::hostThreadsPerBlock() {
  static const unsigned threads =
      countFromEnvironment("TGC_HOST_THREADS", "threads per block", 1);
  return threads;
}

void backend::setLocalProcesses(int count) {
  localProcesses = static_cast<unsigned>(std::max(1, count));
  // The workers now, so that a bad TGC_HOST_WORKERS or TGC_HOST_THREADS
  // stops the run before anything is read.
  blockPool();
  hostThreadsPerBlock();
}

void tgc::rt::hostSyncThreads() {
  Fibers &f = *fibers;
  unsigned from = f.current, to = f.next();
  if (to == from)
    return;
  f.current = to;
  threadIdx = dim3(to);
  swapcontext(&f.contexts[from], &f.contexts[to]);
}

void tgc::rt::hostLaunchBlocks(unsigned grid, unsigned threads,
                               void (*block)(void *), void *context) {
  gridDim = dim3(grid);
  blockDim = dim3(threads);
  if (grid == 0)
    return;
  blockPool().launch(grid, threads, block, context);
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
  // Blocks run on several workers: the first error is reported, and the
  // process ends at once (exit's destructors would run beside the others).
  static std::mutex reporting;
  std::lock_guard<std::mutex> lock(reporting);
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s %lld is out of range [0, %lld)\n", what,
               static_cast<long long>(value), static_cast<long long>(bound));
  std::fflush(stderr);
  removePendingTemporaries();
  std::_Exit(1);
}

namespace {

/// C[m x n] = alpha op(A) op(B) + beta C, row-major, as lib/Eval computes
/// it (tgc/runtime/TiledGemm.h): the tiles on the workers.
void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
           const float *a, const float *b, float *c, float alpha = 1.0f,
           float beta = 0.0f) {
  tiledGemm(transA, transB, m, n, k, a, b, c, alpha, beta,
            [](int64_t tiles, auto &&tile) { parallelFor(tiles, tile); });
}

/// `count` values at `data` as f32: the memory itself when it holds f32,
/// else a converted copy in `copy`.
const float *floatsOf(const void *data, DType type, int64_t count,
                      std::vector<float> &copy) {
  if (type == DType::F32)
    return static_cast<const float *>(data);
  copy = loadFloats(data, type, count);
  return copy.data();
}

/// op(A) op(B) of `d` in f32 into `c`, as lib/Eval calls BLAS.
void productInto(const GemmDesc &d, const void *a, const void *b, float *c) {
  int64_t cCount = d.batch * d.m * d.n;
  if (!cCount)
    return;
  if (d.k <= 0) {
    std::fill(c, c + cCount, 0.0f);
    return;
  }
  std::vector<float> aCopy, bCopy;
  const float *fa = floatsOf(a, d.a, d.batch * d.m * d.k, aCopy);
  const float *fb =
      floatsOf(b, d.b, (d.sharedRhs ? 1 : d.batch) * d.k * d.n, bCopy);
  if (d.sharedRhs && !d.transA) {
    // A linear layer: all batches form one tall matrix.
    sgemm(false, d.transB, d.batch * d.m, d.n, d.k, fa, fb, c);
    return;
  }
  for (int64_t i = 0; i < d.batch; ++i)
    sgemm(d.transA, d.transB, d.m, d.n, d.k, fa + i * d.m * d.k,
          fb + (d.sharedRhs ? 0 : i * d.k * d.n), c + i * d.m * d.n);
}

/// op(A) op(B) of `d` in f32, as lib/Eval calls BLAS.
std::vector<float> product(const GemmDesc &d, const void *a, const void *b) {
  std::vector<float> c(d.batch * d.m * d.n);
  productInto(d, a, b, c.data());
  return c;
}

/// The sums of the `columns` columns of row-major `values` over their rows,
/// each in order (tg.reduce's kernel on one thread): the rows read in
/// turn, the workers taking blocks of columns.
std::vector<float> columnSums(const float *values, int64_t count,
                              int64_t columns) {
  std::vector<float> sums(columns);
  int64_t rows = columns ? count / columns : 0;
  int64_t parts = std::max<int64_t>(
      1, std::min<int64_t>(blockPool().workers(), columns / 16));
  forEachPart(parts, [&](int64_t part) {
    int64_t first = columns * part / parts, last = columns * (part + 1) / parts;
    std::vector<CascadeSum<float>> partial(last - first);
    for (int64_t r = 0; r < rows; ++r) {
      const float *row = values + r * columns;
      for (int64_t c = first; c < last; ++c)
        partial[c - first].add(row[c]);
    }
    for (int64_t c = first; c < last; ++c)
      sums[c] = partial[c - first].result();
  });
  return sums;
}

/// `count` values of `type` at `data`.
struct Span {
  const void *data;
  size_t bytes;
};
Span spanOf(const void *data, int64_t count, DType type) {
  return {data, static_cast<size_t>(count) * getDTypeBytes(type)};
}

/// `c`, the f32 result of `d`, when the product may be computed in its
/// memory: it overlaps neither operand nor any of `others` (values read
/// after the product is written); else null.
float *inPlace(const GemmDesc &d, const void *a, const void *b, void *c,
               std::initializer_list<Span> others) {
  if (d.c != DType::F32)
    return nullptr;
  auto *first = static_cast<const char *>(c);
  const char *end = first + d.batch * d.m * d.n * sizeof(float);
  auto overlaps = [&](Span span) {
    auto *p = static_cast<const char *>(span.data);
    return p && p < end && first < p + span.bytes;
  };
  if (overlaps(spanOf(a, d.batch * d.m * d.k, d.a)) ||
      overlaps(spanOf(b, (d.sharedRhs ? 1 : d.batch) * d.k * d.n, d.b)) ||
      std::any_of(others.begin(), others.end(), overlaps))
    return nullptr;
  return static_cast<float *>(c);
}

bool isEpilogueType(DType type) {
  return type == DType::F32 || type == DType::BF16 || type == DType::F16;
}

} // namespace

void tgc::rt::gemm(Context &, const GemmDesc &d, const void *a, const void *b,
                   void *c, const char *kernel) {
  if (float *direct = inPlace(d, a, b, c, {}))
    productInto(d, a, b, direct);
  else
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
  int64_t n = d.n, rows = d.batch * d.m, count = rows * n;
  // The product in `out` itself where it is f32 and overlaps nothing the
  // epilogue reads (the residual may be `out`), else in `storage`.
  bool dgelu = e.activation == GemmActivation::DGelu;
  std::vector<float> storage;
  float *v = inPlace(d, a, b, out,
                     {spanOf(e.bias, n, e.biasType),
                      spanOf(e.residual, count, e.product),
                      spanOf(e.aux, count, e.auxType)});
  if (v) {
    productInto(d, a, b, v);
  } else {
    storage = product(d, a, b);
    v = storage.data();
  }
  // Every stage rounded to `type` (an epilogue type) as storing and
  // loading it would.
  auto rounded = [](float x, DType type) {
    if (type == DType::BF16)
      return static_cast<float>(ld(st<bf16>(x)));
    if (type == DType::F16)
      return static_cast<float>(ld(st<f16>(x)));
    return x;
  };
  std::vector<float> bias, auxCopy, residualCopy;
  if (e.bias) {
    bias = loadFloats(e.bias, e.biasType, n);
    for (float &x : bias)
      x = rounded(x, e.product);
  }
  const float *x = dgelu ? floatsOf(e.aux, e.auxType, count, auxCopy) : nullptr;
  const float *residual =
      e.residual ? floatsOf(e.residual, e.product, count, residualCopy)
                 : nullptr;
  bool storeAux = e.aux && (e.activation == GemmActivation::Relu ||
                            e.activation == GemmActivation::Gelu);
  // The rows' elements through every stage in one pass, the workers taking
  // blocks of rows.
  int64_t parts = std::max<int64_t>(
      1, std::min<int64_t>({blockPool().workers(), rows, count / 4096}));
  forEachPart(parts, [&](int64_t part) {
    for (int64_t r = rows * part / parts, last = rows * (part + 1) / parts;
         r < last; ++r)
      for (int64_t c = 0, i = r * n; c < n; ++c, ++i) {
        float y = rounded(v[i], e.product);
        if (e.bias)
          y = rounded(y + bias[c], e.product);
        switch (e.activation) {
        case GemmActivation::None:
          break;
        case GemmActivation::Relu:
        case GemmActivation::Gelu:
          if (storeAux) {
            if (e.auxType == DType::BF16)
              static_cast<bf16 *>(e.aux)[i] = st<bf16>(y);
            else if (e.auxType == DType::F16)
              static_cast<f16 *>(e.aux)[i] = st<f16>(y);
            else
              static_cast<float *>(e.aux)[i] = y;
          }
          y = rounded(e.activation == GemmActivation::Relu ? relu(y)
                                                           : geluTanh(y),
                      e.product);
          break;
        case GemmActivation::DGelu:
          y = y * geluTanhGrad(x[i]);
          break;
        }
        if (residual)
          y = rounded(y + residual[i], e.product);
        v[i] = rounded(y, d.c);
      }
  });
  std::vector<float> sums, copy;
  if (e.biasGradOf == GemmBiasGrad::Output)
    sums = columnSums(v, count, n);
  else if (e.biasGradOf == GemmBiasGrad::A)
    sums = columnSums(floatsOf(a, d.a, d.k * d.m, copy), d.k * d.m, d.m);
  else if (e.biasGradOf == GemmBiasGrad::B)
    sums = columnSums(floatsOf(b, d.b, d.k * d.n, copy), d.k * d.n, d.n);
  // Operands are read: D may be the residual.
  if (!storage.empty())
    storeFloats(storage, out, d.c);
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
  flash::DropoutKey key = flash::dropoutKey(d);
  // The heads on the workers, each with its own scores.
  forEachPart(d.batch * d.heads, [&](int64_t head) {
    int64_t b = head / d.heads, h = head % d.heads;
    static thread_local std::vector<float> scores;
    scores.resize(d.queries * d.keys);
    int64_t kvh = h / group;
    const float *qp = q.data() + ((b * d.heads + h) * d.queries) * d.headSize;
    const float *kp = k.data() + ((b * d.kvHeads + kvh) * d.keys) * d.headSize;
    const float *vp = v.data() + ((b * d.kvHeads + kvh) * d.keys) * d.valueSize;
    float *outRows = out.data() + ((b * d.heads + h) * d.queries) * d.valueSize;
    if (scores.empty())
      return;
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
  });
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
  bool dropout = d.dropout > 0.0;
  flash::DropoutKey key = flash::dropoutKey(d);
  // The kv heads on the workers: each computes its group's heads in order,
  // adding their dk and dv as one thread does, with its own buffers.
  if (d.queries * d.keys > 0)
    forEachPart(d.batch * d.kvHeads, [&](int64_t kvHead) {
      static thread_local std::vector<float> p, dp, slope, dropped;
      static thread_local std::vector<char> kept;
      p.resize(d.queries * d.keys);
      dp.resize(d.queries * d.keys);
      // The soft cap's slope 1 - (capped / softcap)^2 at each score.
      slope.resize(d.softcap > 0.0 ? d.queries * d.keys : 0);
      // With dropout, p through the mask (dv's weights), and the mask
      // itself.
      dropped.resize(dropout ? d.queries * d.keys : 0);
      kept.resize(dropped.size());
      int64_t b = kvHead / d.kvHeads, kvh = kvHead % d.kvHeads;
      for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
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
    });
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
