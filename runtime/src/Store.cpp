//===- Store.cpp - the ranks' key-value store over TCP --------------------===//
//
// One request at a time per client, framed as
//   op (1 byte) | key length (u32) | key | value length (u64) | value
// and answered with a value length (u64) and the value. The server is one
// thread polling its sockets; a get of a missing key is parked until a set
// of that key answers it, so a waiting client costs nothing, and the
// client alone keeps the time (poll with the remaining timeout).
//
//===----------------------------------------------------------------------===//

#include "Store.h"

#include "AtomicFile.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace tgc::rt::comm;

namespace {

using Clock = std::chrono::steady_clock;

enum Op : char {
  Hello = 'H',
  Set = 'S',
  Get = 'G',
  Add = 'A',
  Gone = 'X',
  Leave = 'L',
  Abandon = 'F'
};
/// A reply's size with this bit set is an error: its bytes say why.
constexpr uint64_t kFailedReply = uint64_t(1) << 63;
/// The store holds addresses, ids and fingerprints: a frame that claims
/// more is not from one of ours (a port scanner, another protocol), and
/// its sizes must not be trusted to allocate or to add without overflow.
constexpr uint32_t kMaxKeyBytes = 1u << 16;
constexpr uint64_t kMaxValueBytes = uint64_t(1) << 30;
/// What a server says to a client's hello: a port held by something else
/// is an error, not a silent hang.
const char *const kGreeting = "tgc-store-1";

std::string formatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", seconds);
  return text;
}

int remainingMs(Clock::time_point deadline) {
  // Rounded up: a poll that ends before the deadline would look like a
  // spurious timeout.
  auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now())
          .count();
  return left < 0 ? 0 : left > 1000000000 ? 1000000000 : int(left);
}

/// What the ranks are told of the first rank gone (the cause: the others
/// followed it).
std::string describeLostRank(int rank) {
  return "rank " + std::to_string(rank) + " has exited or crashed";
}

Clock::time_point deadlineAfter(double seconds) {
  return Clock::now() + std::chrono::microseconds(int64_t(seconds * 1e6));
}

bool sendAll(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t sent = ::send(fd, data, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR)
      continue;
    if (sent <= 0)
      return false;
    data += sent;
    size -= size_t(sent);
  }
  return true;
}

enum class Received { Ok, Closed, TimedOut };

/// Reads exactly `size` bytes before `deadline`.
Received receiveAll(int fd, char *data, size_t size,
                    Clock::time_point deadline) {
  while (size > 0) {
    pollfd entry{fd, POLLIN, 0};
    int ready = ::poll(&entry, 1, remainingMs(deadline));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready < 0)
      return Received::Closed;
    if (ready == 0)
      return Received::TimedOut;
    ssize_t got = ::recv(fd, data, size, 0);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (got <= 0)
      return Received::Closed;
    data += got;
    size -= size_t(got);
  }
  return Received::Ok;
}

std::string frame(char op, const std::string &key,
                  const std::vector<char> &value) {
  std::string message(1, op);
  uint32_t keySize = uint32_t(key.size());
  uint64_t valueSize = value.size();
  message.append(reinterpret_cast<const char *>(&keySize), sizeof(keySize));
  message += key;
  message.append(reinterpret_cast<const char *>(&valueSize), sizeof(valueSize));
  message.append(value.begin(), value.end());
  return message;
}

std::string frameReply(const std::vector<char> &value, bool failed = false) {
  uint64_t size = value.size() | (failed ? kFailedReply : 0);
  std::string reply(reinterpret_cast<const char *>(&size), sizeof(size));
  reply.append(value.begin(), value.end());
  return reply;
}

} // namespace

namespace tgc::rt::comm {

/// Rank 0's side: a map of keys to bytes, served on a thread.
class StoreServer {
public:
  static std::unique_ptr<StoreServer> start(int port, std::string &error);
  ~StoreServer();
  size_t countClients() {
    std::lock_guard<std::mutex> lock(mutex);
    return pending.size();
  }

private:
  StoreServer() = default;
  void run();
  void accept();
  /// Handles the complete requests buffered for `fd`; false when the
  /// client must be dropped.
  bool serve(int fd);
  void drop(int fd);
  bool reply(int fd, const std::vector<char> &value, bool failed = false);
  /// Lists `rank` gone and fails every parked get: nothing a rank waits
  /// for can come once one is gone.
  void lose(int rank);

  int listener = -1;
  /// Written to on destruction to wake the thread's poll.
  int wake[2] = {-1, -1};
  std::thread thread;
  /// Guards `pending` against countClients from other threads.
  std::mutex mutex;
  std::map<int, std::string> pending;
  /// The rank each client said it is in its hello, and the ranks whose
  /// connection closed: when a collective fails, that names the culprit.
  std::map<int, int> ranks;
  std::vector<int> gone;
  std::map<std::string, std::vector<char>> values;
  std::map<std::string, std::vector<int>> waiting;
};

} // namespace tgc::rt::comm

std::unique_ptr<StoreServer> StoreServer::start(int port, std::string &error) {
  std::unique_ptr<StoreServer> server(new StoreServer());
  server->listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server->listener < 0) {
    error = std::string("cannot open a socket for the store: ") +
            std::strerror(errno);
    return nullptr;
  }
  // A store that just stopped leaves its port in TIME_WAIT; the next run
  // may take it. A port that a live process listens on still fails.
  int one = 1;
  ::setsockopt(server->listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(uint16_t(port));
  if (::bind(server->listener, reinterpret_cast<sockaddr *>(&address),
             sizeof(address)) != 0 ||
      ::listen(server->listener, 1024) != 0) {
    if (errno == EADDRINUSE)
      error = "the master port " + std::to_string(port) +
              " is in use (another job or a stale process holds it; choose "
              "another MASTER_PORT)";
    else
      error = "cannot serve the store on port " + std::to_string(port) + ": " +
              std::strerror(errno);
    return nullptr;
  }
  if (::pipe2(server->wake, O_CLOEXEC) != 0) {
    error = std::string("cannot start the store: ") + std::strerror(errno);
    return nullptr;
  }
  server->thread = std::thread([s = server.get()] { s->run(); });
  return server;
}

StoreServer::~StoreServer() {
  if (thread.joinable()) {
    char stop = 0;
    while (::write(wake[1], &stop, 1) < 0 && errno == EINTR) {
    }
    thread.join();
  }
  for (auto &[fd, buffer] : pending)
    ::close(fd);
  for (int fd : {listener, wake[0], wake[1]})
    if (fd >= 0)
      ::close(fd);
}

void StoreServer::run() {
  std::vector<pollfd> polled;
  for (;;) {
    polled.clear();
    polled.push_back({wake[0], POLLIN, 0});
    polled.push_back({listener, POLLIN, 0});
    for (auto &[fd, buffer] : pending)
      polled.push_back({fd, POLLIN, 0});
    if (::poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR)
        continue;
      std::fprintf(stderr, "error: the store stopped: %s\n",
                   std::strerror(errno));
      return;
    }
    if (polled[0].revents)
      return;
    if (polled[1].revents & POLLIN)
      accept();
    for (size_t i = 2; i < polled.size(); ++i) {
      if (!polled[i].revents)
        continue;
      int fd = polled[i].fd;
      char buffer[65536];
      ssize_t got = ::recv(fd, buffer, sizeof(buffer), 0);
      if (got < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (got <= 0) {
        drop(fd);
        continue;
      }
      pending[fd].append(buffer, size_t(got));
      if (!serve(fd))
        drop(fd);
    }
  }
}

void StoreServer::accept() {
  int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0)
    return;
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  // A client that stops reading must not stop the store for everyone.
  timeval limit{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
  std::lock_guard<std::mutex> lock(mutex);
  pending[fd];
}

void StoreServer::drop(int fd) {
  ::close(fd);
  std::unique_lock<std::mutex> lock(mutex);
  pending.erase(fd);
  lock.unlock();
  for (auto &[key, fds] : waiting)
    fds.erase(std::remove(fds.begin(), fds.end(), fd), fds.end());
  auto rank = ranks.find(fd);
  if (rank != ranks.end()) {
    int lost = rank->second;
    ranks.erase(rank);
    if (lost >= 0)
      lose(lost);
  }
}

bool StoreServer::reply(int fd, const std::vector<char> &value, bool failed) {
  std::string message = frameReply(value, failed);
  return sendAll(fd, message.data(), message.size());
}

void StoreServer::lose(int rank) {
  gone.push_back(rank);
  std::string why = describeLostRank(gone[0]);
  std::map<std::string, std::vector<int>> parked;
  parked.swap(waiting);
  for (auto &[key, fds] : parked)
    for (int fd : fds)
      if (!reply(fd, std::vector<char>(why.begin(), why.end()), true))
        ::shutdown(fd, SHUT_RDWR);
}

bool StoreServer::serve(int fd) {
  std::string &buffer = pending[fd];
  for (;;) {
    uint32_t keySize;
    uint64_t valueSize;
    const size_t head = 1 + sizeof(keySize);
    if (buffer.size() < head)
      return true;
    std::memcpy(&keySize, buffer.data() + 1, sizeof(keySize));
    if (keySize > kMaxKeyBytes)
      return false;
    if (buffer.size() < head + keySize + sizeof(valueSize))
      return true;
    std::memcpy(&valueSize, buffer.data() + head + keySize, sizeof(valueSize));
    if (valueSize > kMaxValueBytes)
      return false;
    size_t total = head + keySize + sizeof(valueSize) + valueSize;
    if (buffer.size() < total)
      return true;
    char op = buffer[0];
    std::string key = buffer.substr(head, keySize);
    std::vector<char> value(buffer.begin() + (total - valueSize),
                            buffer.begin() + total);
    buffer.erase(0, total);

    switch (op) {
    case Hello:
      ranks[fd] = key.empty() ? -1 : std::atoi(key.c_str());
      if (!reply(fd, std::vector<char>(kGreeting,
                                       kGreeting + std::strlen(kGreeting))))
        return false;
      break;
    case Leave:
      // Its connection closing is no longer a rank gone.
      ranks[fd] = -1;
      if (!reply(fd, {}))
        return false;
      break;
    case Abandon: {
      // Gone now, though its connection (rank 0's to its own store) may
      // stay open a while.
      int rank = ranks[fd];
      ranks[fd] = -1;
      if (rank >= 0)
        lose(rank);
      if (!reply(fd, {}))
        return false;
      break;
    }
    case Gone: {
      std::string list;
      for (int rank : gone)
        list += (list.empty() ? "" : " ") + std::to_string(rank);
      if (!reply(fd, std::vector<char>(list.begin(), list.end())))
        return false;
      break;
    }
    case Set: {
      values[key] = value;
      if (!reply(fd, {}))
        return false;
      // Answer the parked gets; one that fails only loses its client.
      std::vector<int> waiters;
      waiters.swap(waiting[key]);
      waiting.erase(key);
      for (int waiter : waiters)
        if (waiter != fd && !reply(waiter, value))
          ::shutdown(waiter, SHUT_RDWR);
      break;
    }
    case Get: {
      auto found = values.find(key);
      if (found != values.end()) {
        if (!reply(fd, found->second))
          return false;
      } else if (!gone.empty()) {
        std::string why = describeLostRank(gone[0]);
        if (!reply(fd, std::vector<char>(why.begin(), why.end()), true))
          return false;
      } else {
        waiting[key].push_back(fd);
      }
      break;
    }
    case Add: {
      int64_t delta = 0, sum = 0;
      if (value.size() != sizeof(delta))
        return false;
      std::memcpy(&delta, value.data(), sizeof(delta));
      std::vector<char> &stored = values[key];
      if (stored.size() == sizeof(sum))
        std::memcpy(&sum, stored.data(), sizeof(sum));
      sum += delta;
      stored.assign(reinterpret_cast<const char *>(&sum),
                    reinterpret_cast<const char *>(&sum) + sizeof(sum));
      if (!reply(fd, stored))
        return false;
      break;
    }
    default:
      // Not a client of ours: drop it rather than guess.
      return false;
    }
  }
}

//===----------------------------------------------------------------------===//
// The client
//===----------------------------------------------------------------------===//

namespace {

/// One connection attempt to every address of `host`:`port`, each bounded
/// by `deadline`. Returns the socket or -1; `fatal` when retrying cannot
/// help (the name does not resolve).
int connectOnce(const std::string &host, int port, Clock::time_point deadline,
                std::string &fatal) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *addresses = nullptr;
  int status = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints,
                             &addresses);
  if (status != 0) {
    if (status != EAI_AGAIN)
      fatal = "cannot resolve the master address '" + host +
              "': " + ::gai_strerror(status);
    return -1;
  }
  int connected = -1;
  for (addrinfo *address = addresses; address && connected < 0;
       address = address->ai_next) {
    int fd = ::socket(address->ai_family,
                      address->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                      address->ai_protocol);
    if (fd < 0)
      continue;
    // Non-blocking, so that an address that drops packets costs the
    // timeout at most, not the kernel's two minutes.
    int result = ::connect(fd, address->ai_addr, address->ai_addrlen);
    if (result != 0 && errno == EINPROGRESS) {
      pollfd entry{fd, POLLOUT, 0};
      int error = 0;
      socklen_t size = sizeof(error);
      if (::poll(&entry, 1, remainingMs(deadline)) == 1 &&
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 &&
          error == 0)
        result = 0;
    }
    if (result == 0) {
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      connected = fd;
    } else {
      ::close(fd);
    }
  }
  ::freeaddrinfo(addresses);
  return connected;
}

} // namespace

std::unique_ptr<TcpStore> TcpStore::create(const std::string &host, int port,
                                           bool serve, double timeoutSeconds,
                                           std::string &error, int rank) {
  std::unique_ptr<TcpStore> store(new TcpStore());
  store->host = host;
  store->port = port;
  store->timeoutSeconds = timeoutSeconds;
  if (serve && !(store->server = StoreServer::start(port, error)))
    return nullptr;

  Clock::time_point deadline = deadlineAfter(timeoutSeconds);
  for (;;) {
    std::string fatal;
    store->socket = connectOnce(host, port, deadline, fatal);
    if (store->socket >= 0)
      break;
    if (!fatal.empty()) {
      error = fatal;
      return nullptr;
    }
    if (Clock::now() >= deadline) {
      error = "no master at " + store->describe() + " after " +
              formatSeconds(timeoutSeconds) +
              " (rank 0 serves the store there: did it start, and do "
              "MASTER_ADDR and MASTER_PORT name it?)";
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  int64_t limitUs = std::max<int64_t>(int64_t(timeoutSeconds * 1e6), 1000);
  timeval limit{long(limitUs / 1000000), long(limitUs % 1000000)};
  ::setsockopt(store->socket, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));

  std::vector<char> greeting;
  if (!store->request(Hello, rank < 0 ? "" : std::to_string(rank), {}, greeting,
                      error)) {
    error = "the master at " + store->describe() +
            " does not answer as tgc's store (" + error +
            "): is MASTER_PORT held by another program?";
    return nullptr;
  }
  if (std::string(greeting.begin(), greeting.end()) != kGreeting) {
    error = "the master at " + store->describe() +
            " does not answer as tgc's store: is MASTER_PORT held by "
            "another program?";
    return nullptr;
  }
  return store;
}

TcpStore::~TcpStore() {
  if (socket >= 0)
    ::close(socket);
  // The server (rank 0's) stops after its own client is gone.
  server.reset();
}

std::string TcpStore::getLocalAddress() const {
  sockaddr_in address{};
  socklen_t size = sizeof(address);
  char text[INET_ADDRSTRLEN] = {};
  if (::getsockname(socket, reinterpret_cast<sockaddr *>(&address), &size) !=
          0 ||
      !::inet_ntop(AF_INET, &address.sin_addr, text, sizeof(text)))
    return "";
  return text;
}

std::string TcpStore::describe() const {
  return host + ":" + std::to_string(port);
}

bool TcpStore::request(char op, const std::string &key,
                       const std::vector<char> &value, std::vector<char> &reply,
                       std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  if (broken) {
    error = "the connection to the store at " + describe() +
            " was abandoned after a timeout";
    return false;
  }
  std::string message = frame(op, key, value);
  if (!sendAll(socket, message.data(), message.size())) {
    broken = true;
    error = "lost the store at " + describe() + " (" + std::strerror(errno) +
            "; did rank 0 exit?)";
    return false;
  }
  Clock::time_point deadline = deadlineAfter(timeoutSeconds);
  uint64_t size = 0;
  Received received = receiveAll(socket, reinterpret_cast<char *>(&size),
                                 sizeof(size), deadline);
  bool failed = size & kFailedReply;
  size &= ~kFailedReply;
  if (received == Received::Ok && size > kMaxValueBytes) {
    broken = true;
    error = "the store at " + describe() + " answered with a malformed reply";
    return false;
  }
  if (received == Received::Ok) {
    reply.resize(size);
    received = receiveAll(socket, reply.data(), size, deadline);
  }
  if (received == Received::Ok && failed) {
    error.assign(reply.begin(), reply.end());
    return false;
  }
  if (received == Received::Ok)
    return true;
  broken = true;
  if (received == Received::TimedOut)
    error = "timed out after " + formatSeconds(timeoutSeconds);
  else
    error = "lost the store at " + describe() + " (did rank 0 exit?)";
  return false;
}

bool TcpStore::set(const std::string &key, const std::vector<char> &value,
                   std::string &error) {
  std::vector<char> reply;
  return request(Set, key, value, reply, error);
}

bool TcpStore::get(const std::string &key, std::vector<char> &value,
                   std::string &error, bool *timedOut) {
  if (request(Get, key, {}, value, error))
    return true;
  bool expired = error.rfind("timed out", 0) == 0;
  if (expired)
    error =
        "no '" + key + "' in the store after " + formatSeconds(timeoutSeconds);
  if (timedOut)
    *timedOut = expired;
  return false;
}

bool TcpStore::add(const std::string &key, int64_t delta, int64_t &value,
                   std::string &error) {
  std::vector<char> operand(reinterpret_cast<const char *>(&delta),
                            reinterpret_cast<const char *>(&delta) +
                                sizeof(delta));
  std::vector<char> reply;
  if (!request(Add, key, operand, reply, error))
    return false;
  if (reply.size() != sizeof(value)) {
    error = "the store answered an add of '" + key + "' with " +
            std::to_string(reply.size()) + " bytes";
    return false;
  }
  std::memcpy(&value, reply.data(), sizeof(value));
  return true;
}

bool TcpStore::leave(std::string &error) {
  std::vector<char> reply;
  return request(Leave, "", {}, reply, error);
}

bool TcpStore::abandon(std::string &error) {
  std::vector<char> reply;
  return request(Abandon, "", {}, reply, error);
}

void TcpStore::lingerIfServing() {
  if (!server)
    return;
  // Our own client is one of the server's connections.
  Clock::time_point deadline = deadlineAfter(std::min(2.0, timeoutSeconds));
  while (server->countClients() > 1 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

bool TcpStore::getGoneRanks(std::vector<int> &ranks, std::string &error) {
  std::vector<char> reply;
  if (!request(Gone, "", {}, reply, error))
    return false;
  ranks.clear();
  std::string list(reply.begin(), reply.end());
  for (size_t start = 0; start < list.size();) {
    size_t end = list.find(' ', start);
    if (end == std::string::npos)
      end = list.size();
    ranks.push_back(std::atoi(list.substr(start, end - start).c_str()));
    start = end + 1;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// What the worlds do through the store
//===----------------------------------------------------------------------===//

bool tgc::rt::comm::exchange(TcpStore &store, const std::string &prefix,
                             const char *what, const std::vector<int> &ranks,
                             int self, const std::string &value,
                             std::vector<std::string> &values,
                             std::string &error) {
  if (!store.set(prefix + "/" + std::to_string(self),
                 std::vector<char>(value.begin(), value.end()), error))
    return false;
  values.assign(ranks.size(), std::string());
  for (size_t i = 0; i < ranks.size(); ++i) {
    std::vector<char> bytes;
    bool timedOut = false;
    if (!store.get(prefix + "/" + std::to_string(ranks[i]), bytes, error,
                   &timedOut)) {
      if (timedOut)
        error = "rank " + std::to_string(ranks[i]) + " did not reach " + what +
                " within " + formatSeconds(store.getTimeout()) +
                " (it failed, or is stuck, or the launch started fewer "
                "ranks than WORLD_SIZE)";
      else
        error = std::string(what) + " failed: " + error;
      return false;
    }
    values[i].assign(bytes.begin(), bytes.end());
  }
  return true;
}

bool tgc::rt::comm::checkSameThroughStore(TcpStore &store,
                                          const std::string &prefix, int rank,
                                          int size,
                                          const std::string &fingerprint,
                                          std::string &error) {
  std::vector<int> ranks(size);
  for (int i = 0; i < size; ++i)
    ranks[i] = i;
  std::vector<std::string> fingerprints;
  if (!exchange(store, prefix, "the check of the compiled step", ranks, rank,
                fingerprint, fingerprints, error))
    return false;
  auto shorten = [](const std::string &text) {
    return text.size() <= 24 ? text : text.substr(0, 24) + "...";
  };
  for (int i = 1; i < size; ++i)
    if (fingerprints[i] != fingerprints[0]) {
      error = "rank " + std::to_string(i) +
              " runs a different compiled step than rank 0 (fingerprint " +
              shorten(fingerprints[i]) + ", rank 0's " +
              shorten(fingerprints[0]) +
              "): every rank must run the same step.json and mesh";
      return false;
    }
  return true;
}

bool tgc::rt::comm::findSplit(TcpStore &store, const std::string &prefix,
                              int rank, int size, int color, int key,
                              std::vector<int> &members, std::string &error) {
  std::vector<int> ranks(size);
  for (int i = 0; i < size; ++i)
    ranks[i] = i;
  std::vector<std::string> entries;
  if (!exchange(store, prefix, "the split into groups", ranks, rank,
                std::to_string(color) + " " + std::to_string(key), entries,
                error))
    return false;
  std::vector<std::pair<int, int>> sorted;
  for (int i = 0; i < size; ++i) {
    int otherColor = 0, otherKey = 0;
    if (std::sscanf(entries[i].c_str(), "%d %d", &otherColor, &otherKey) != 2) {
      error = "rank " + std::to_string(i) + " sent a malformed split entry";
      return false;
    }
    if (otherColor == color)
      sorted.push_back({otherKey, i});
  }
  std::sort(sorted.begin(), sorted.end());
  members.clear();
  for (auto &[otherKey, member] : sorted)
    members.push_back(member);
  return true;
}

void tgc::rt::comm::finishThroughStore(TcpStore &store, int rank, int size) {
  std::string error;
  int64_t arrived = 0;
  if (!store.add("finish", 1, arrived, error))
    return;
  if (arrived == size)
    store.set("finish/all", {}, error);
  // Done with every collective: the others' watches must not take this
  // rank's exit for a crash.
  store.leave(error);
  if (rank != 0)
    return;
  std::vector<char> ignored;
  if (!store.get("finish/all", ignored, error))
    std::fprintf(stderr,
                 "warning: rank 0: not every rank reached the end (%s); "
                 "closing the store\n",
                 error.c_str());
}

bool tgc::rt::comm::findLostRank(TcpStore &store, int self,
                                 std::string &cause) {
  std::vector<int> gone;
  std::string error;
  if (!store.getGoneRanks(gone, error)) {
    // A connection given up after a timeout says nothing of rank 0.
    if (self == 0 || error.rfind("lost the store", 0) != 0)
      return false;
    cause = "rank 0 exited or crashed (its store is gone)";
    return true;
  }
  if (gone.empty())
    return false;
  cause = describeLostRank(gone[0]);
  return true;
}

std::string tgc::rt::comm::explainLostPeer(TcpStore *store, int self) {
  if (!store)
    return "";
  // The dead rank's store connection closes when its engine's does; the
  // store may hear of it a little later than we did.
  Clock::time_point deadline = deadlineAfter(1.0);
  std::string cause;
  while (!findLostRank(*store, self, cause) && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return cause;
}

LostRankWatch::LostRankWatch(std::shared_ptr<TcpStore> store, int rank)
    : store(std::move(store)), rank(rank) {
  thread = std::thread([this] { run(); });
}

LostRankWatch::~LostRankWatch() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  thread.join();
}

LostRankWatch::InFlight::InFlight(LostRankWatch *watch, const char *what)
    : watch(watch) {
  if (!watch)
    return;
  std::lock_guard<std::mutex> lock(watch->mutex);
  watch->what = what;
  ++watch->started;
}

LostRankWatch::InFlight::~InFlight() {
  if (!watch)
    return;
  std::lock_guard<std::mutex> lock(watch->mutex);
  watch->what = nullptr;
}

void LostRankWatch::run() {
  std::unique_lock<std::mutex> lock(mutex);
  uint64_t seen = 0;
  while (!stopping) {
    wake.wait_for(lock, std::chrono::milliseconds(50));
    if (stopping || !what || started != seen) {
      // Short collectives end before the store is asked anything.
      seen = started;
      continue;
    }
    std::string inFlight = what;
    lock.unlock();
    std::string cause;
    bool lost = findLostRank(*store, rank, cause);
    lock.lock();
    if (lost && what && started == seen)
      failCollective(rank, inFlight, cause, store.get());
  }
}

void tgc::rt::comm::failCollective(int rank, const std::string &what,
                                   const std::string &cause, TcpStore *store) {
  static std::atomic<bool> failing{false};
  if (failing.exchange(true))
    for (;;)
      std::this_thread::sleep_for(std::chrono::hours(1));
  std::fprintf(stderr, "error: rank %d: %s failed: %s\n", rank, what.c_str(),
               cause.c_str());
  std::fflush(nullptr);
  removePendingTemporaries();
  if (store)
    store->lingerIfServing();
  // The engine's threads (Gloo's event loop, NCCL's proxy) still run and
  // may hold locks that exit handlers need: leave at once.
  std::_Exit(1);
}
