//===- Store.h - the ranks' key-value store over TCP -------------*- C++
//-*-===//
//
// How ranks find each other before any engine is connected (PyTorch's
// TCPStore, in spirit): rank 0 serves a map of keys to bytes on
// MASTER_PORT, every rank (rank 0 too) is a client of it. Gloo's and NCCL's
// bootstraps, split's membership and checkSame's fingerprints all go
// through it. Every wait has the timeout, and a wait that runs out names
// what it waited for, so that a missing rank is an error, never a hang.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_SRC_STORE_H
#define TGC_RUNTIME_SRC_STORE_H

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
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
  /// and `timedOut` (when given) is set.
  bool get(const std::string &key, std::vector<char> &value, std::string &error,
           bool *timedOut = nullptr);
  /// Adds `delta` to the counter at `key` (0 when absent); `value` is the
  /// sum. A counter reads back through get() as 8 bytes.
  bool add(const std::string &key, int64_t delta, int64_t &value,
           std::string &error);

  /// The ranks whose connection to the store closed (they exited), in the
  /// order the store saw them go.
  bool getGoneRanks(std::vector<int> &ranks, std::string &error);

  /// On rank 0, before it exits on an error: serves the store until the
  /// other ranks have left or `seconds` passed, so that they can still
  /// learn who left first.
  void lingerIfServing(double seconds);

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
/// check in. Prints a warning when some rank does not come.
void finishThroughStore(TcpStore &store, int rank, int size);

/// After an engine lost a peer: "rank K has exited or crashed" from the
/// store's list of closed connections (waiting a little for it to hear),
/// "rank 0 ..." when the store itself is gone, or "" when nobody left.
std::string explainLostPeer(TcpStore *store, int self);

/// Prints "error: rank R: <what> failed: <cause>" and exits 1: a failed
/// collective leaves the ranks out of step, nothing can go on.
[[noreturn]] void failCollective(int rank, const std::string &what,
                                 const std::string &cause);

} // namespace tgc::rt::comm

#endif // TGC_RUNTIME_SRC_STORE_H
