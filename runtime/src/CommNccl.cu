//===- CommNccl.cu - the CUDA target's ranks: NCCL ------------------------===//
//
// One NCCL communicator per group, the world's bootstrapped from a unique
// id that rank 0 publishes in the store (as PyTorch does), the groups'
// split from it (ncclCommSplit). Collectives are enqueued on the runtime's
// stream, so they are ordered with the kernels around them.
//
// Nothing may hang: the communicators are non-blocking (config.blocking =
// 0), so their creation is polled against the timeout and aborted when it
// runs out; and a watchdog thread, as in PyTorch's ProcessGroupNCCL,
// follows each enqueued collective through an event and ends the process
// when one does not finish within the timeout or NCCL reports an
// asynchronous error (a peer gone).
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "Store.h"

#include "tgc/runtime/Kernels.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <mutex>
#include <thread>

using namespace tgc::rt;
using namespace tgc::rt::comm;

namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point deadlineAfter(double seconds) {
  return Clock::now() + std::chrono::microseconds(int64_t(seconds * 1e6));
}

std::string formatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", seconds);
  return text;
}

std::string describe(ncclResult_t result, ncclComm_t comm) {
  std::string text = ncclGetErrorString(result);
  const char *last = ncclGetLastError(comm);
  if (last && *last)
    text += std::string(": ") + last;
  return text;
}

/// Waits until the non-blocking communicators' pending work (creation,
/// split, an enqueue that connects) is done: ncclSuccess, an error, or
/// ncclInProgress when `deadline` passed.
ncclResult_t waitReady(std::initializer_list<ncclComm_t> comms,
                       Clock::time_point deadline) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    for (ncclComm_t comm : comms) {
      if (!comm)
        continue;
      ncclResult_t result = ncclSuccess;
      ncclResult_t query = ncclCommGetAsyncError(comm, &result);
      if (query != ncclSuccess)
        return query;
      if (result != ncclSuccess && result != ncclInProgress)
        return result;
      if (result == ncclInProgress)
        state = ncclInProgress;
    }
    if (state == ncclSuccess || Clock::now() >= deadline)
      return state;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

ncclConfig_t nonBlockingConfig() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

/// Follows the enqueued collectives of every communicator of the world:
/// each through an event recorded after it on the stream.
class Watchdog {
public:
  Watchdog(int device, int worldRank, double timeoutSeconds,
           std::shared_ptr<TcpStore> store)
      : device(device), worldRank(worldRank), timeoutSeconds(timeoutSeconds),
        store(std::move(store)) {
    thread = std::thread([this] { run(); });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    thread.join();
    for (Entry &entry : pending)
      cudaEventDestroy(entry.done);
  }

  void add(ncclComm_t comm) {
    std::lock_guard<std::mutex> lock(mutex);
    comms.push_back(comm);
  }
  /// Before `comm` is destroyed: its collectives are done (the caller
  /// synchronized the stream).
  void remove(ncclComm_t comm) {
    std::lock_guard<std::mutex> lock(mutex);
    comms.erase(std::remove(comms.begin(), comms.end(), comm), comms.end());
    for (auto entry = pending.begin(); entry != pending.end();)
      if (entry->comm == comm) {
        cudaEventDestroy(entry->done);
        entry = pending.erase(entry);
      } else {
        ++entry;
      }
  }

  void watch(ncclComm_t comm, cudaStream_t stream, const char *what) {
    cudaEvent_t done;
    if (cudaEventCreateWithFlags(&done, cudaEventDisableTiming) !=
            cudaSuccess ||
        cudaEventRecord(done, stream) != cudaSuccess)
      failCollective(worldRank, what,
                     std::string("cannot follow it: ") +
                         cudaGetErrorString(cudaGetLastError()));
    std::lock_guard<std::mutex> lock(mutex);
    pending.push_back({done, what, deadlineAfter(timeoutSeconds), comm});
  }

private:
  struct Entry {
    cudaEvent_t done;
    std::string what;
    Clock::time_point deadline;
    ncclComm_t comm;
  };

  void run() {
    cudaSetDevice(device);
    std::unique_lock<std::mutex> lock(mutex);
    Clock::time_point nextAsk = Clock::now();
    while (!stopping) {
      wake.wait_for(lock, std::chrono::milliseconds(20));
      // A peer's death does not always reach NCCL (a rank waiting for a
      // third one goes on); the store hears its connection close.
      std::string lost;
      if (store && !pending.empty() && Clock::now() >= nextAsk) {
        nextAsk = Clock::now() + std::chrono::milliseconds(100);
        if (findLostRank(*store, worldRank, lost))
          fail(pending.front().what, lost, store.get());
      }
      for (ncclComm_t comm : comms) {
        ncclResult_t result = ncclSuccess;
        ncclCommGetAsyncError(comm, &result);
        if (result != ncclSuccess && result != ncclInProgress) {
          // NCCL says a peer failed; the store knows which rank left.
          std::string culprit = explainLostPeer(store.get(), worldRank);
          std::string cause = describe(result, comm);
          fail(pending.empty() ? "a collective" : pending.front().what,
               culprit.empty() ? cause : culprit + " (NCCL: " + cause + ")",
               culprit.empty() ? nullptr : store.get());
        }
      }
      // One stream: the collectives finish in the order they were enqueued.
      while (!pending.empty()) {
        Entry &entry = pending.front();
        cudaError_t status = cudaEventQuery(entry.done);
        if (status == cudaErrorNotReady) {
          if (Clock::now() >= entry.deadline)
            fail(entry.what, "not finished after " +
                                 formatSeconds(timeoutSeconds) +
                                 " (another rank is stuck or gone)");
          break;
        }
        if (status != cudaSuccess)
          fail(entry.what, cudaGetErrorString(status));
        cudaEventDestroy(entry.done);
        pending.pop_front();
      }
    }
  }

  /// Aborts every communicator, so that no kernel waits for a peer, and
  /// ends the process. Called with the mutex held. With `servingStore` after a
  /// rank was lost: rank 0 serves the store a little longer for the others to
  /// learn which.
  [[noreturn]] void fail(const std::string &what, const std::string &cause,
                         TcpStore *servingStore = nullptr) {
    for (ncclComm_t comm : comms)
      ncclCommAbort(comm);
    failCollective(worldRank, what, cause, servingStore);
  }

  int device, worldRank;
  double timeoutSeconds;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::shared_ptr<TcpStore> store;
  std::vector<ncclComm_t> comms;
  std::deque<Entry> pending;
  std::thread thread;
};

bool getNcclType(DType type, ncclDataType_t &result) {
  switch (type) {
  case DType::F32:
    result = ncclFloat32;
    return true;
  case DType::F64:
    result = ncclFloat64;
    return true;
  case DType::BF16:
    result = ncclBfloat16;
    return true;
  case DType::F16:
    result = ncclFloat16;
    return true;
  case DType::I32:
    result = ncclInt32;
    return true;
  case DType::I64:
    result = ncclInt64;
    return true;
  default:
    return false;
  }
}

ncclRedOp_t getNcclOp(ReduceOp op) {
  switch (op) {
  case ReduceOp::Max:
    return ncclMax;
  case ReduceOp::Min:
    return ncclMin;
  case ReduceOp::Average:
    return ncclAvg;
  case ReduceOp::Sum:
    break;
  }
  return ncclSum;
}

/// Flushes and frees a communicator whose collectives are done; aborts it
/// when that does not finish within the timeout.
void destroyComm(ncclComm_t comm, double timeoutSeconds) {
  if (ncclCommFinalize(comm) == ncclSuccess ||
      waitReady({comm}, deadlineAfter(timeoutSeconds)) == ncclSuccess)
    ncclCommDestroy(comm);
  else
    ncclCommAbort(comm);
}

class NcclGroup : public Group {
public:
  NcclGroup(ncclComm_t comm, int worldRank, double timeoutSeconds,
            std::shared_ptr<Watchdog> watchdog)
      : comm(comm), worldRank(worldRank), timeoutSeconds(timeoutSeconds),
        watchdog(std::move(watchdog)) {
    ncclCommUserRank(comm, &rank);
    ncclCommCount(comm, &size);
    this->watchdog->add(comm);
  }
  ~NcclGroup() override {
    cudaStreamSynchronize(currentCommStream());
    watchdog->remove(comm);
    destroyComm(comm, timeoutSeconds);
  }

  int getRank() const override { return rank; }
  int getSize() const override { return size; }

  void allReduce(const void *in, void *out, size_t count, DType type,
                 ReduceOp op, const char *what) override {
    if (count == 0)
      return;
    ncclDataType_t ncclType;
    if (!getNcclType(type, ncclType))
      failCollective(worldRank, what,
                     std::string("no all-reduce of ") +
                         getSafetensorsDType(type) + " elements");
    cudaStream_t stream = currentCommStream();
    finish(ncclAllReduce(in, out, count, ncclType, getNcclOp(op), comm, stream),
           stream, what);
  }

  void allGather(const void *in, void *out, size_t bytes,
                 const char *what) override {
    if (bytes == 0)
      return;
    cudaStream_t stream = currentCommStream();
    finish(ncclAllGather(in, out, bytes, ncclInt8, comm, stream), stream, what);
  }

  void reduceScatter(const void *in, void *out, size_t count, DType type,
                     ReduceOp op, const char *what) override {
    if (count == 0)
      return;
    ncclDataType_t ncclType;
    if (!getNcclType(type, ncclType))
      failCollective(worldRank, what,
                     std::string("no reduce-scatter of ") +
                         getSafetensorsDType(type) + " elements");
    cudaStream_t stream = currentCommStream();
    finish(ncclReduceScatter(in, out, count, ncclType, getNcclOp(op), comm,
                             stream),
           stream, what);
  }

  /// NCCL has no all-to-all call: a send and a receive per peer, fused
  /// into one operation by a group (NCCL's documented pattern).
  void allToAll(const void *in, void *out, size_t bytes,
                const char *what) override {
    if (bytes == 0)
      return;
    cudaStream_t stream = currentCommStream();
    ncclResult_t result = ncclGroupStart();
    for (int peer = 0; peer < size && result == ncclSuccess; ++peer) {
      result = ncclSend(static_cast<const char *>(in) + bytes * size_t(peer),
                        bytes, ncclInt8, peer, comm, stream);
      if (result == ncclSuccess || result == ncclInProgress)
        result = ncclRecv(static_cast<char *>(out) + bytes * size_t(peer),
                          bytes, ncclInt8, peer, comm, stream);
      if (result == ncclInProgress)
        result = ncclSuccess;
    }
    ncclResult_t ended = ncclGroupEnd();
    finish(result == ncclSuccess ? ended : result, stream, what);
  }

  void broadcast(void *buffer, size_t bytes, int root,
                 const char *what) override {
    if (bytes == 0)
      return;
    cudaStream_t stream = currentCommStream();
    finish(ncclBroadcast(buffer, buffer, bytes, ncclInt8, root, comm, stream),
           stream, what);
  }

  /// A pipelined step's transfers between stages need sends that never
  /// hold the compute back (the host's copies) and an order of NCCL's
  /// rendezvous sends and receives proven free of deadlock on every
  /// schedule; neither is built yet, and the trainer refuses a pipelined
  /// step on the GPU before it starts (trainMain).
  void send(const void *, size_t, int, uint32_t, const char *what) override {
    failCollective(worldRank, what, kNoTransfers);
  }
  void recv(void *, size_t, int, uint32_t, const char *what) override {
    failCollective(worldRank, what, kNoTransfers);
  }
  void finishSends(const char *) override {}

private:
  static constexpr const char *kNoTransfers =
      "the CUDA target has no transfers between pipeline stages yet";

  /// An enqueue's result: done, or in progress (a non-blocking
  /// communicator connecting its peers on first use), or an error.
  void finish(ncclResult_t result, cudaStream_t stream, const char *what) {
    if (result == ncclInProgress)
      result = waitReady({comm}, deadlineAfter(timeoutSeconds));
    if (result == ncclInProgress) {
      ncclCommAbort(comm);
      failCollective(worldRank, what,
                     "NCCL did not enqueue it within " +
                         formatSeconds(timeoutSeconds) +
                         " (another rank is stuck or gone)");
    }
    if (result != ncclSuccess)
      failCollective(worldRank, what, describe(result, comm));
    watchdog->watch(comm, stream, what);
  }

  ncclComm_t comm;
  int worldRank, rank = 0, size = 1;
  double timeoutSeconds;
  std::shared_ptr<Watchdog> watchdog;
};

class NcclWorld : public World {
public:
  NcclWorld(const LaunchEnv &env, double timeoutSeconds)
      : rank(env.rank), size(env.worldSize), timeoutSeconds(timeoutSeconds) {}

  ~NcclWorld() override {
    // Ending on an error: the store lists this rank gone before its
    // communicators close (see GlooWorld).
    bool failed = store && !finished;
    std::string error;
    if (failed)
      store->abandon(error);
    worldGroup.reset();
    watchdog.reset();
    if (failed)
      store->lingerIfServing();
  }

  void finish() override {
    if (store && !finished)
      finishThroughStore(*store, rank, size);
    finished = true;
  }

  bool connect(const LaunchEnv &env, std::string &error) {
    // One GPU per local rank; a launcher that binds one GPU to each task
    // (srun --gpus-per-task) leaves it the only one visible.
    int devices = 0;
    cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess) {
      error = std::string("no CUDA device: ") + cudaGetErrorString(status);
      return false;
    }
    int device = devices == 1 ? 0 : env.localRank;
    if (device >= devices) {
      error = "the local rank " + std::to_string(env.localRank) +
              " has no GPU: this machine shows " + std::to_string(devices) +
              " (CUDA_VISIBLE_DEVICES?)";
      return false;
    }
    // Before the runtime's stream exists: it belongs to this device.
    if ((status = cudaSetDevice(device)) != cudaSuccess) {
      error = "cannot use GPU " + std::to_string(device) + ": " +
              cudaGetErrorString(status);
      return false;
    }

    ncclUniqueId id;
    if (size == 1) {
      ncclResult_t result = ncclGetUniqueId(&id);
      if (result != ncclSuccess) {
        error = "ncclGetUniqueId: " + describe(result, nullptr);
        return false;
      }
    } else if (!shareId(env, id, error)) {
      return false;
    }

    ncclConfig_t config = nonBlockingConfig();
    ncclComm_t comm = nullptr;
    ncclResult_t result =
        ncclCommInitRankConfig(&comm, size, id, rank, &config);
    if (result == ncclInProgress)
      result = waitReady({comm}, deadlineAfter(timeoutSeconds));
    if (result != ncclSuccess) {
      if (result == ncclInProgress)
        error = "NCCL's bootstrap did not finish within " +
                formatSeconds(timeoutSeconds) + " (a rank did not join)";
      else
        error = "ncclCommInitRank: " + describe(result, comm);
      if (comm)
        ncclCommAbort(comm);
      return false;
    }
    watchdog = std::make_shared<Watchdog>(device, rank, timeoutSeconds, store);
    worldComm = comm;
    worldGroup =
        std::make_unique<NcclGroup>(comm, rank, timeoutSeconds, watchdog);
    return true;
  }

  int getRank() const override { return rank; }
  int getSize() const override { return size; }
  Group &getWorldGroup() override { return *worldGroup; }

  std::unique_ptr<Group> split(int color, int key,
                               std::string &error) override {
    if (color < 0) {
      error = "split: the color " + std::to_string(color) +
              " is negative; every rank must be in a group";
      return nullptr;
    }
    ncclConfig_t config = nonBlockingConfig();
    ncclComm_t comm = nullptr;
    ncclResult_t result = ncclCommSplit(worldComm, color, key, &comm, &config);
    if (result == ncclInProgress)
      result = waitReady({worldComm, comm}, deadlineAfter(timeoutSeconds));
    if (result != ncclSuccess) {
      if (result == ncclInProgress)
        error = "ncclCommSplit did not finish within " +
                formatSeconds(timeoutSeconds) +
                " (a rank did not split with the others)";
      else
        error = "ncclCommSplit: " + describe(result, worldComm);
      if (comm)
        ncclCommAbort(comm);
      return nullptr;
    }
    return std::make_unique<NcclGroup>(comm, rank, timeoutSeconds, watchdog);
  }

  bool checkSame(const std::string &fingerprint, std::string &error) override {
    if (size == 1)
      return true;
    return checkSameThroughStore(*store, "check/" + std::to_string(checks++),
                                 rank, size, fingerprint, error);
  }

private:
  /// Rank 0's unique id, to every rank through the store.
  bool shareId(const LaunchEnv &env, ncclUniqueId &id, std::string &error) {
    store = TcpStore::create(env.masterAddr, env.masterPort, rank == 0,
                             timeoutSeconds, error, rank);
    if (!store)
      return false;
    std::vector<int> ranks(size);
    for (int i = 0; i < size; ++i)
      ranks[i] = i;
    std::vector<std::string> ignored;
    if (!exchange(*store, "join", "the start", ranks, rank, "", ignored, error))
      return false;
    if (rank == 0) {
      ncclResult_t result = ncclGetUniqueId(&id);
      if (result != ncclSuccess) {
        error = "ncclGetUniqueId: " + describe(result, nullptr);
        return false;
      }
      return store->set(
          "nccl/id",
          std::vector<char>(id.internal, id.internal + sizeof(id.internal)),
          error);
    }
    std::vector<char> bytes;
    if (!store->get("nccl/id", bytes, error))
      return false;
    if (bytes.size() != sizeof(id.internal)) {
      error = "rank 0's NCCL id has " + std::to_string(bytes.size()) +
              " bytes, not " + std::to_string(sizeof(id.internal)) +
              " (another NCCL version?)";
      return false;
    }
    std::memcpy(id.internal, bytes.data(), bytes.size());
    return true;
  }

  int rank, size;
  double timeoutSeconds;
  std::shared_ptr<TcpStore> store;
  std::shared_ptr<Watchdog> watchdog;
  ncclComm_t worldComm = nullptr;
  std::unique_ptr<Group> worldGroup;
  int checks = 0;
  bool finished = false;
};

} // namespace

std::unique_ptr<World>
World::create(const LaunchEnv &env, double timeoutSeconds, std::string &error) {
  auto world = std::make_unique<NcclWorld>(env, timeoutSeconds);
  if (!world->connect(env, error))
    return nullptr;
  return world;
}
