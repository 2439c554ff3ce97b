//===- Store.h - the ranks' key-value store over TCP -------------*- C++
//-*-===//
//
// How ranks find each other before any engine is connected (PyTorch's
// TCPStore, in spirit): rank 0 serves a map of keys to bytes on
// MASTER_PORT, every rank (rank 0 too) is a client of it. Gloo's and NCCL's
// bootstraps, split's membership and checkSame's fingerprints all go
// through it. Every wait has the timeout, and a wait that runs out names
// what it waited for, so that a missing rank is an error, never a hang.
// The store also knows which ranks are gone (their connection closed
// before they left, or they abandoned it): its waits then fail at once,
// and LostRankWatch tells the ranks waiting in a collective.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_SRC_STORE_H
#define TGC_RUNTIME_SRC_STORE_H

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tgc::rt::comm {

class StoreServer;

/// A client of the store, and on rank 0 its server as well.
class TcpStore {
public:
  /// Connects to the store at `host`:`port` (IPv4), retrying until
  /// `timeoutSeconds` while the master is not up yet. With `serve`, first
  /// listens on `port` on every interface and serves the store on a
  /// thread until this object is destroyed. Fails with `error` set: "the
  /// master port N is in use", "no master at ADDR:PORT after T s".
  /// A client that gives its `rank` is listed by getGoneRanks once its
  /// connection closes.
  static std::unique_ptr<TcpStore> create(const std::string &host, int port,
                                          bool serve, double timeoutSeconds,
                                          std::string &error, int rank = -1);
  ~TcpStore();

  bool set(const std::string &key, const std::vector<char> &value,
           std::string &error);
  /// Waits for `key` up to the timeout. On timeout `error` names the key
  /// and `timedOut` (when given) is set; once a rank is gone (abandon), it
  /// fails at once with "rank K has exited or crashed".
  bool get(const std::string &key, std::vector<char> &value, std::string &error,
           bool *timedOut = nullptr);
  /// Adds `delta` to the counter at `key` (0 when absent); `value` is the
  /// sum. A counter reads back through get() as 8 bytes.
  bool add(const std::string &key, int64_t delta, int64_t &value,
           std::string &error);

  /// The ranks whose connection to the store closed (they exited) before
  /// they left, in the order the store saw them go.
  bool getGoneRanks(std::vector<int> &ranks, std::string &error);

  /// Says this rank is done: its connection closing is a clean exit, not a
  /// rank gone (a rank may end while others still exchange among
  /// themselves).
  bool leave(std::string &error);
  /// Says this rank ends on an error: the store lists it gone at once (so
  /// does a connection that closes without leave), and every get that
  /// waits, or comes after, fails with "rank K has exited or crashed".
  bool abandon(std::string &error);

  /// On rank 0, before it exits on an error: serves the store until the
  /// other ranks have left, for at most 2 s (or the timeout when shorter),
  /// so that they can still learn who left first.
  void lingerIfServing();

  /// This end's IPv4 address of the connection to the master: an address
  /// of this host that the master's network reaches.
  std::string getLocalAddress() const;

  double getTimeout() const { return timeoutSeconds; }
  std::string describe() const;

private:
  TcpStore() = default;
  bool request(char op, const std::string &key, const std::vector<char> &value,
               std::vector<char> &reply, std::string &error);

  std::unique_ptr<StoreServer> server;
  std::string host;
  int port = 0;
  double timeoutSeconds = 0;
  int socket = -1;
  /// A timed-out get leaves its reply in flight: the connection can no
  /// longer be trusted.
  bool broken = false;
  std::mutex mutex;
};

/// Every rank of `ranks` (world ranks, `self` among them) publishes `value`
/// under `prefix`/<its rank> and reads the others', into `values` in the
/// order of `ranks`. A rank that does not publish within the timeout is
/// named: "rank K did not reach <what> within T s".
bool exchange(TcpStore &store, const std::string &prefix, const char *what,
              const std::vector<int> &ranks, int self, const std::string &value,
              std::vector<std::string> &values, std::string &error);

/// checkSame through the store: false, with `error` naming the first rank
/// whose fingerprint differs from rank 0's, on every rank.
bool checkSameThroughStore(TcpStore &store, const std::string &prefix, int rank,
                           int size, const std::string &fingerprint,
                           std::string &error);

/// split's membership through the store: the world ranks whose color is
/// `color`, ordered by (key, world rank).
bool findSplit(TcpStore &store, const std::string &prefix, int rank, int size,
               int color, int key, std::vector<int> &members,
               std::string &error);

/// Waits, on rank 0, until every rank has reached the end, so that the
/// store it serves outlives the others' last use of it; other ranks only
/// check in. Every rank then leaves the store. Prints a warning when some
/// rank does not come.
void finishThroughStore(TcpStore &store, int rank, int size);

/// Whether the store knows of a rank gone: `cause` is then "rank K has
/// exited or crashed" (the first to go), or, when the store itself is gone
/// and `self` is not rank 0, "rank 0 exited or crashed (its store is
/// gone)".
bool findLostRank(TcpStore &store, int self, std::string &cause);

/// After an engine lost a peer: findLostRank's cause, waiting a little for
/// the store to hear, or "" when nobody left.
std::string explainLostPeer(TcpStore *store, int self);

/// Watches the store while this rank waits in a collective: an engine does
/// not always see a peer die (Gloo's wait for a send to a live rank, or a
/// receive from one, goes on when a third rank dies; it ends at the
/// timeout), the store does, as the dead rank's connection to it closes.
/// A collective still in flight after one period (50 ms) makes the thread
/// ask the store each period; a rank gone fails the collective.
class LostRankWatch {
public:
  LostRankWatch(std::shared_ptr<TcpStore> store, int rank);
  ~LostRankWatch();

  /// Marks `what` in flight for its lifetime (one at a time).
  class InFlight {
  public:
    InFlight(LostRankWatch *watch, const char *what);
    ~InFlight();

  private:
    LostRankWatch *watch;
  };

private:
  void run();

  std::shared_ptr<TcpStore> store;
  int rank;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  /// The collective in flight, and a count of those that started.
  const char *what = nullptr;
  uint64_t started = 0;
  std::thread thread;
};

/// Prints "error: rank R: <what> failed: <cause>" and exits 1: a failed
/// collective leaves the ranks out of step, nothing can go on. Rank 0 first
/// serves `store` (when given) a little longer, until the others left, so
/// that they can learn who left first. Only the first caller prints; a
/// second thread waits for the exit.
[[noreturn]] void failCollective(int rank, const std::string &what,
                                 const std::string &cause,
                                 TcpStore *store = nullptr);

} // namespace tgc::rt::comm

#endif // TGC_RUNTIME_SRC_STORE_H
