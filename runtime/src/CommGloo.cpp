//===- CommGloo.cpp - the host target's ranks: Gloo over TCP --------------===//
//
// PyTorch's ProcessGroupGloo, in small: one Gloo context per group, its
// pairs connected through our TCP store (GlooStore below adapts it), one
// TCP device shared by all of them. Gloo has no 16-bit float arithmetic
// on the CPU: BF16/F16 are reduced in f32 and rounded back once, as the
// GPU's NCCL accumulates them in wider precision too.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "Store.h"

#include "tgc/runtime/Storage.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

using namespace tgc::rt;
using namespace tgc::rt::comm;

namespace {

/// Gloo's view of the store: its keys under our prefix, our timeout, and
/// a timeout that names the rank Gloo waited for.
class GlooStore : public gloo::rendezvous::Store {
public:
  GlooStore(TcpStore &store, std::string prefix, std::vector<int> worldRanks)
      : store(store), prefix(std::move(prefix)),
        worldRanks(std::move(worldRanks)) {}

  void set(const std::string &key, const std::vector<char> &data) override {
    std::string error;
    if (!store.set(prefix + key, data, error))
      throw std::runtime_error(error);
  }
  std::vector<char> get(const std::string &key) override {
    std::vector<char> data;
    std::string error;
    if (!store.get(prefix + key, data, error))
      throw std::runtime_error(explain(key, error));
    return data;
  }
  void wait(const std::vector<std::string> &keys) override {
    for (const std::string &key : keys)
      get(key);
  }
  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &) override {
    wait(keys);
  }

private:
  /// Gloo's keys are a group rank ("3": its pairs' addresses) or
  /// "rank_3" (its host name).
  std::string explain(const std::string &key, const std::string &error) {
    if (error.rfind("no '", 0) != 0)
      return error;
    std::string digits = key.rfind("rank_", 0) == 0 ? key.substr(5) : key;
    if (digits.empty() ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      return error;
    size_t rank = std::stoul(digits);
    if (rank >= worldRanks.size())
      return error;
    return "rank " + std::to_string(worldRanks[rank]) +
           " did not connect within " +
           std::to_string(int(store.getTimeout())) + " s (" + error + ")";
  }

  TcpStore &store;
  std::string prefix;
  std::vector<int> worldRanks;
};

/// Gloo's messages start with the source location that threw them
/// ("[/build/gloo/transport/tcp/pair.cc:598] Connection closed by
/// peer..."): not the user's business.
std::string describe(const std::exception &exception) {
  std::string text = exception.what();
  if (!text.empty() && text[0] == '[') {
    size_t end = text.find("] ");
    if (end != std::string::npos)
      text = text.substr(end + 2);
  }
  return text;
}

bool isLostPeer(const std::string &text) {
  return text.find("closed by peer") != std::string::npos ||
         text.find("Connection reset") != std::string::npos ||
         text.find("Broken pipe") != std::string::npos;
}

/// A failed collective's cause: a lost peer named through the store when
/// there is one.
std::string describe(const std::exception &exception, TcpStore *store,
                     int rank) {
  std::string text = describe(exception);
  if (isLostPeer(text)) {
    // Gloo names the peer by its address; the store knows its rank.
    std::string culprit = explainLostPeer(store, rank);
    text = (culprit.empty() ? "another rank exited or crashed" : culprit) +
           " (Gloo: " + text + ")";
  } else if (text.find("Timed out") != std::string::npos) {
    // A send or receive that waited out the timeout while a rank died (its
    // closing not seen on this connection): the dead rank is the cause.
    std::string culprit = explainLostPeer(store, rank);
    text = culprit.empty() ? text + " (another rank is stuck, or gone "
                                    "without closing its connections)"
                           : culprit + " (Gloo: " + text + ")";
  }
  return text;
}

template <typename T>
using ReduceFn = void (*)(void *, const void *, const void *, size_t);

template <typename T> ReduceFn<T> getReduceFn(ReduceOp op) {
  switch (op) {
  case ReduceOp::Max:
    return &gloo::max<T>;
  case ReduceOp::Min:
    return &gloo::min<T>;
  case ReduceOp::Sum:
  case ReduceOp::Average:
    break;
  }
  return &gloo::sum<T>;
}

/// A group of one: the collectives are copies.
class LocalGroup : public Group {
public:
  explicit LocalGroup(int worldRank) : worldRank(worldRank) {}
  int getRank() const override { return 0; }
  int getSize() const override { return 1; }
  void allReduce(const void *in, void *out, size_t count, DType type, ReduceOp,
                 const char *) override {
    if (in != out)
      std::memmove(out, in, count * getDTypeBytes(type));
  }
  void allGather(const void *in, void *out, size_t bytes,
                 const char *) override {
    if (in != out)
      std::memmove(out, in, bytes);
  }
  void reduceScatter(const void *in, void *out, size_t count, DType type,
                     ReduceOp, const char *) override {
    if (in != out)
      std::memmove(out, in, count * getDTypeBytes(type));
  }
  void allToAll(const void *in, void *out, size_t bytes,
                const char *) override {
    if (in != out)
      std::memmove(out, in, bytes);
  }
  void broadcast(void *, size_t, int, const char *) override {}
  /// A group of one has no peer (a pipeline axis of one device has no
  /// transfers).
  void send(const void *, size_t, int, uint32_t, const char *what) override {
    failCollective(worldRank, what, "a group of one has no peer to send to");
  }
  void recv(void *, size_t, int, uint32_t, const char *what) override {
    failCollective(worldRank, what,
                   "a group of one has no peer to receive from");
  }
  void finishSends(const char *) override {}

private:
  int worldRank;
};

class GlooGroup : public Group {
public:
  GlooGroup(std::shared_ptr<gloo::Context> context, int worldRank,
            double timeoutSeconds, std::shared_ptr<TcpStore> store,
            std::shared_ptr<LostRankWatch> watch)
      : context(std::move(context)), worldRank(worldRank),
        timeout(int64_t(timeoutSeconds * 1000)), store(std::move(store)),
        watch(std::move(watch)) {}

  int getRank() const override { return context->rank; }
  int getSize() const override { return context->size; }

  void allReduce(const void *in, void *out, size_t count, DType type,
                 ReduceOp op, const char *what) override {
    // Gloo refuses empty buffers; there is nothing to exchange.
    if (count == 0)
      return;
    LostRankWatch::InFlight inFlight(watch.get(), what);
    try {
      switch (type) {
      case DType::F32:
        return reduce<float>(in, out, count, op);
      case DType::F64:
        return reduce<double>(in, out, count, op);
      case DType::I32:
        return reduce<int32_t>(in, out, count, op);
      case DType::I64:
        return reduce<int64_t>(in, out, count, op);
      case DType::BF16:
        return reduceInF32<bf16>(in, out, count, op);
      case DType::F16:
        return reduceInF32<f16>(in, out, count, op);
      default:
        failCollective(worldRank, what,
                       std::string("no all-reduce of ") +
                           getSafetensorsDType(type) + " elements");
      }
    } catch (const std::exception &exception) {
      fail(what, exception);
    }
  }

  void allGather(const void *in, void *out, size_t bytes,
                 const char *what) override {
    if (bytes == 0)
      return;
    LostRankWatch::InFlight inFlight(watch.get(), what);
    try {
      gloo::AllgatherOptions options(context);
      char *output = static_cast<char *>(out);
      // Gloo copies the input into its block of the output first; without
      // an input, that block already holds it.
      if (in != output + bytes * size_t(context->rank))
        options.setInput(const_cast<char *>(static_cast<const char *>(in)),
                         bytes);
      options.setOutput(output, bytes * size_t(context->size));
      options.setTag(nextTag++);
      options.setTimeout(timeout);
      gloo::allgather(options);
    } catch (const std::exception &exception) {
      fail(what, exception);
    }
  }

  /// Gloo's reduce-scatter algorithms take another layout: the whole
  /// all-reduce, then this rank's block (host memory: a temporary).
  void reduceScatter(const void *in, void *out, size_t count, DType type,
                     ReduceOp op, const char *what) override {
    size_t block = count * getDTypeBytes(type);
    std::vector<char> whole(block * size_t(context->size));
    allReduce(in, whole.data(), count * size_t(context->size), type, op, what);
    std::memcpy(out, whole.data() + block * size_t(context->rank), block);
  }

  void allToAll(const void *in, void *out, size_t bytes,
                const char *what) override {
    if (bytes == 0)
      return;
    LostRankWatch::InFlight inFlight(watch.get(), what);
    try {
      size_t total = bytes * size_t(context->size);
      gloo::AlltoallOptions options(context);
      options.setInput(const_cast<char *>(static_cast<const char *>(in)),
                       total);
      options.setOutput(static_cast<char *>(out), total);
      options.setTag(nextTag++);
      options.setTimeout(timeout);
      gloo::alltoall(options);
    } catch (const std::exception &exception) {
      fail(what, exception);
    }
  }

  void broadcast(void *buffer, size_t bytes, int root,
                 const char *what) override {
    if (bytes == 0)
      return;
    LostRankWatch::InFlight inFlight(watch.get(), what);
    try {
      gloo::BroadcastOptions options(context);
      options.setOutput(static_cast<char *>(buffer), bytes);
      options.setRoot(root);
      options.setTag(nextTag++);
      options.setTimeout(timeout);
      gloo::broadcast(options);
    } catch (const std::exception &exception) {
      fail(what, exception);
    }
  }

  /// Gloo's unbound buffers, in a slot space of their own (its collectives
  /// use prefixes 1 to 8): the copy is sent once the peer has posted the
  /// matching receive, and kept until finishSends. A tag's copy and its
  /// buffer are kept for the next step's send under the same tag.
  void send(const void *in, size_t bytes, int peer, uint32_t tag,
            const char *what) override {
    if (bytes == 0)
      return;
    try {
      std::unique_ptr<Sent> &sent = staged[tag];
      if (sent && sent->inFlight)
        finish(*sent, "another send under its tag");
      if (!sent || sent->bytes.size() != bytes) {
        sent = std::make_unique<Sent>();
        sent->bytes.resize(bytes);
        sent->buffer = context->createUnboundBuffer(sent->bytes.data(), bytes);
      }
      std::memcpy(sent->bytes.data(), in, bytes);
      sent->what = what;
      sent->buffer->send(peer, gloo::Slot::build(kStageSlotPrefix, tag));
      sent->inFlight = true;
      inFlight.push_back(sent.get());
    } catch (const std::exception &exception) {
      fail(what, exception);
    }
  }

  void recv(void *out, size_t bytes, int peer, uint32_t tag,
            const char *what) override {
    if (bytes == 0)
      return;
    LostRankWatch::InFlight inFlight(watch.get(), what);
    try {
      std::unique_ptr<gloo::transport::UnboundBuffer> buffer =
          context->createUnboundBuffer(out, bytes);
      buffer->recv(peer, gloo::Slot::build(kStageSlotPrefix, tag));
      buffer->waitRecv(timeout);
    } catch (const std::exception &exception) {
      fail(what, exception);
    }
  }

  void finishSends(const char *what) override {
    for (Sent *sent : inFlight)
      if (sent->inFlight)
        finish(*sent, what);
    inFlight.clear();
  }

private:
  static constexpr uint8_t kStageSlotPrefix = 0x20;
  /// The copy a send under one tag sent, what it is for messages, and
  /// whether it is still in flight.
  struct Sent {
    std::vector<char> bytes;
    std::string what;
    std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
    bool inFlight = false;
  };
  std::map<uint32_t, std::unique_ptr<Sent>> staged;
  std::vector<Sent *> inFlight;

  void finish(Sent &sent, const char *what) {
    std::string described = sent.what + " (" + what + ")";
    LostRankWatch::InFlight inFlight(watch.get(), described.c_str());
    try {
      sent.buffer->waitSend(timeout);
    } catch (const std::exception &exception) {
      fail(described.c_str(), exception);
    }
    sent.inFlight = false;
  }

  [[noreturn]] void fail(const char *what, const std::exception &exception) {
    std::string cause = describe(exception, store.get(), worldRank);
    // After a lost peer, close this group's connections at once, so that
    // the ranks waiting for ours fail now; rank 0 then serves the store a
    // little longer for them to learn who left first. (After a timeout the
    // others are stuck: nobody would ask.)
    bool lostPeer = store && isLostPeer(exception.what());
    if (lostPeer)
      context.reset();
    failCollective(worldRank, what, cause, lostPeer ? store.get() : nullptr);
  }

  template <typename T>
  void reduce(const void *in, void *out, size_t count, ReduceOp op) {
    T *output = static_cast<T *>(out);
    gloo::AllreduceOptions options(context);
    // Without an input Gloo reduces the output in place.
    if (in != out)
      options.setInput(const_cast<T *>(static_cast<const T *>(in)), count);
    options.setOutput(output, count);
    options.setReduceFunction(getReduceFn<T>(op));
    options.setTag(nextTag++);
    options.setTimeout(timeout);
    gloo::allreduce(options);
    if (op == ReduceOp::Average)
      for (size_t i = 0; i < count; ++i)
        output[i] /= T(context->size);
  }

  template <typename S>
  void reduceInF32(const void *in, void *out, size_t count, ReduceOp op) {
    const S *input = static_cast<const S *>(in);
    std::vector<float> wide(count);
    for (size_t i = 0; i < count; ++i)
      wide[i] = ld(input[i]);
    reduce<float>(wide.data(), wide.data(), count, op);
    S *output = static_cast<S *>(out);
    for (size_t i = 0; i < count; ++i)
      output[i] = st<S>(wide[i]);
  }

  std::shared_ptr<gloo::Context> context;
  int worldRank;
  std::chrono::milliseconds timeout;
  /// The world's, to name a rank that is gone.
  std::shared_ptr<TcpStore> store;
  std::shared_ptr<LostRankWatch> watch;
  /// Tells consecutive collectives' messages apart; every rank of the
  /// group counts the same.
  uint32_t nextTag = 0;
};

class GlooWorld : public World {
public:
  GlooWorld(const LaunchEnv &env, double timeoutSeconds)
      : rank(env.rank), size(env.worldSize), timeoutSeconds(timeoutSeconds) {}

  ~GlooWorld() override {
    // Ending on an error: the store lists this rank gone before its
    // connections close, so that it is named first, not a rank that saw
    // them close and failed too.
    bool failed = store && !finished;
    std::string error;
    if (failed)
      store->abandon(error);
    worldGroup.reset();
    watch.reset();
    if (failed)
      store->lingerIfServing();
  }

  void finish() override {
    if (store && !finished)
      finishThroughStore(*store, rank, size);
    finished = true;
  }

  bool connect(const LaunchEnv &env, std::string &error) {
    if (size == 1) {
      worldGroup = std::make_unique<LocalGroup>(rank);
      return true;
    }
    store = TcpStore::create(env.masterAddr, env.masterPort, rank == 0,
                             timeoutSeconds, error, rank);
    if (!store)
      return false;
    // Everyone checks in first, so that a missing rank is named by the
    // store rather than by a Gloo connect timeout.
    std::vector<int> ranks(size);
    for (int i = 0; i < size; ++i)
      ranks[i] = i;
    std::vector<std::string> ignored;
    if (!exchange(*store, "join", "the start", ranks, rank, "", ignored, error))
      return false;

    // Gloo writes to its sockets with writev: a peer that died would kill
    // us with SIGPIPE before Gloo could report the broken pipe.
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 &&
        current.sa_handler == SIG_DFL)
      std::signal(SIGPIPE, SIG_IGN);

    gloo::transport::tcp::attr attr;
    // Loopback when every rank is on this machine. Otherwise the address
    // this host reached the master from, which the other machines reach
    // too (a host name may resolve to 127.0.1.1), unless
    // GLOO_SOCKET_IFNAME names the interface (as in PyTorch).
    if (const char *iface = std::getenv("GLOO_SOCKET_IFNAME"))
      attr.iface = iface;
    else if (env.localWorldSize == env.worldSize)
      attr.hostname = "127.0.0.1";
    else
      attr.hostname = store->getLocalAddress();
    try {
      device = gloo::transport::tcp::CreateDevice(attr);
    } catch (const std::exception &exception) {
      error = "cannot open Gloo's TCP device: " + describe(exception);
      return false;
    }
    std::shared_ptr<gloo::Context> context;
    if (!connectGroup("world/", ranks, context, error))
      return false;
    watch = std::make_shared<LostRankWatch>(store, rank);
    worldGroup = std::make_unique<GlooGroup>(context, rank, timeoutSeconds,
                                             store, watch);
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
    if (size == 1)
      return std::make_unique<LocalGroup>(rank);
    std::string prefix = "split/" + std::to_string(splits++);
    std::vector<int> members;
    if (!findSplit(*store, prefix, rank, size, color, key, members, error))
      return nullptr;
    if (members.size() == 1)
      return std::make_unique<LocalGroup>(rank);
    std::shared_ptr<gloo::Context> context;
    if (!connectGroup(prefix + "/" + std::to_string(color) + "/", members,
                      context, error))
      return nullptr;
    return std::make_unique<GlooGroup>(context, rank, timeoutSeconds, store,
                                       watch);
  }

  bool checkSame(const std::string &fingerprint, std::string &error) override {
    if (size == 1)
      return true;
    return checkSameThroughStore(*store, "check/" + std::to_string(checks++),
                                 rank, size, fingerprint, error);
  }

private:
  /// A Gloo context over `members` (world ranks in group order, this rank
  /// among them), its keys under `prefix`.
  bool connectGroup(const std::string &prefix, const std::vector<int> &members,
                    std::shared_ptr<gloo::Context> &result,
                    std::string &error) {
    int groupRank =
        int(std::find(members.begin(), members.end(), rank) - members.begin());
    auto context = std::make_shared<gloo::rendezvous::Context>(
        groupRank, int(members.size()));
    context->setTimeout(
        std::chrono::milliseconds(int64_t(timeoutSeconds * 1000)));
    GlooStore glooStore(*store, prefix, members);
    try {
      context->connectFullMesh(glooStore, device);
    } catch (const std::exception &exception) {
      error = "connecting the ranks through Gloo: " +
              describe(exception, store.get(), rank);
      return false;
    }
    result = context;
    return true;
  }

  int rank, size;
  double timeoutSeconds;
  std::shared_ptr<TcpStore> store;
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<LostRankWatch> watch;
  std::unique_ptr<Group> worldGroup;
  int splits = 0, checks = 0;
  bool finished = false;
};

} // namespace

std::unique_ptr<World>
World::create(const LaunchEnv &env, double timeoutSeconds, std::string &error) {
  auto world = std::make_unique<GlooWorld>(env, timeoutSeconds);
  if (!world->connect(env, error))
    return nullptr;
  return world;
}
