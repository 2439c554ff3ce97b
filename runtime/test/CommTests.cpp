//===- CommTests.cpp - ranks, their launch and collectives, over Gloo -----===//
//
// `TGCRuntimeCommTests <test>` is the driver: it starts ranks of this same
// program (`TGCRuntimeCommTests rank <scenario>`) through launchLocal, as
// `train --nproc N` does, or alone with hand-set variables, and checks
// their exit status, their messages and how long they took. The bad
// launches run with a short TGC_COMM_TIMEOUT so that the suite stays fast.
//
//===----------------------------------------------------------------------===//

#include "AtomicFile.h"
#include "Comm.h"
#include "Store.h"

#include "tgc/runtime/Storage.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tgc::rt;
using namespace tgc::rt::comm;

static int failures = 0;
#define CHECK(condition)                                                       \
  do {                                                                         \
    if (!(condition)) {                                                        \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,    \
                   #condition);                                                \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

//===----------------------------------------------------------------------===//
// The ranks' side
//===----------------------------------------------------------------------===//

static void testCollectives(World &world) {
  Group &group = world.getWorldGroup();
  const int n = group.getSize(), r = group.getRank();
  CHECK(n == world.getSize() && r == world.getRank());

  // f32: every op, out of place and in place, and a buffer long enough
  // for Gloo to cut into segments.
  const size_t count = 100003;
  std::vector<float> in(count), out(count);
  for (size_t i = 0; i < count; ++i)
    in[i] = float(r) + float(i % 64) * 0.5f;
  const float rankSum = float(n * (n - 1) / 2);
  group.allReduce(in.data(), out.data(), count, DType::F32, ReduceOp::Sum,
                  "f32 sum");
  bool ok = true;
  for (size_t i = 0; i < count; ++i)
    ok &= out[i] == rankSum + float(n) * float(i % 64) * 0.5f;
  CHECK(ok);
  group.allReduce(in.data(), out.data(), 64, DType::F32, ReduceOp::Max,
                  "f32 max");
  CHECK(out[3] == float(n - 1) + 1.5f);
  group.allReduce(in.data(), out.data(), 64, DType::F32, ReduceOp::Min,
                  "f32 min");
  CHECK(out[3] == 1.5f);
  group.allReduce(in.data(), out.data(), 64, DType::F32, ReduceOp::Average,
                  "f32 average");
  CHECK(out[3] == rankSum / float(n) + 1.5f);
  std::vector<float> inPlace = {float(r), 1.0f};
  group.allReduce(inPlace.data(), inPlace.data(), 2, DType::F32, ReduceOp::Sum,
                  "f32 in place");
  CHECK(inPlace[0] == rankSum && inPlace[1] == float(n));

  // bf16 and f16: summed in f32 and rounded once. 256 + 1 + ... is not a
  // bf16 value for 4 ranks (8 bits of mantissa): 256 + 6 = 262 is.
  std::vector<bf16> halfIn = {st<bf16>(float(r + 1)), st<bf16>(256.0f + r)},
                    halfOut(2);
  group.allReduce(halfIn.data(), halfOut.data(), 2, DType::BF16, ReduceOp::Sum,
                  "bf16 sum");
  CHECK(ld(halfOut[0]) == float(n * (n + 1) / 2));
  CHECK(ld(halfOut[1]) == ld(st<bf16>(256.0f * n + rankSum)));
  group.allReduce(halfIn.data(), halfOut.data(), 2, DType::BF16,
                  ReduceOp::Average, "bf16 average");
  CHECK(ld(halfOut[0]) == float(n + 1) / 2);
  group.allReduce(halfIn.data(), halfOut.data(), 2, DType::BF16, ReduceOp::Max,
                  "bf16 max");
  CHECK(ld(halfOut[0]) == float(n));
  std::vector<f16> f16In = {st<f16>(0.25f * r)}, f16Out(1);
  group.allReduce(f16In.data(), f16Out.data(), 1, DType::F16, ReduceOp::Sum,
                  "f16 sum");
  CHECK(ld(f16Out[0]) == 0.25f * rankSum);

  // Integers: 64 bits survive, Average truncates.
  std::vector<int64_t> longIn = {(int64_t(1) << 40) + r, -r}, longOut(2);
  group.allReduce(longIn.data(), longOut.data(), 2, DType::I64, ReduceOp::Sum,
                  "i64 sum");
  CHECK(longOut[0] == (int64_t(n) << 40) + int64_t(rankSum));
  CHECK(longOut[1] == -int64_t(rankSum));
  group.allReduce(longIn.data(), longOut.data(), 2, DType::I64, ReduceOp::Min,
                  "i64 min");
  CHECK(longOut[0] == int64_t(1) << 40 && longOut[1] == -(n - 1));
  group.allReduce(longIn.data(), longOut.data(), 2, DType::I64, ReduceOp::Max,
                  "i64 max");
  CHECK(longOut[0] == (int64_t(1) << 40) + n - 1 && longOut[1] == 0);
  std::vector<int32_t> intIn = {r}, intOut(1);
  group.allReduce(intIn.data(), intOut.data(), 1, DType::I32, ReduceOp::Sum,
                  "i32 sum");
  CHECK(intOut[0] == int32_t(rankSum));
  std::vector<double> doubleIn = {double(r)}, doubleOut(1);
  group.allReduce(doubleIn.data(), doubleOut.data(), 1, DType::F64,
                  ReduceOp::Average, "f64 average");
  CHECK(doubleOut[0] == double(rankSum) / n);

  // Nothing to exchange is no error.
  group.allReduce(in.data(), out.data(), 0, DType::F32, ReduceOp::Sum,
                  "empty all_reduce");
  group.allGather(in.data(), out.data(), 0, "empty all_gather");

  // allGather: rank order, out of place and from this rank's own block.
  std::vector<int32_t> mine = {r * 10, r * 10 + 1, r * 10 + 2};
  std::vector<int32_t> all(3 * n, -1);
  group.allGather(mine.data(), all.data(), sizeof(int32_t) * 3, "gather");
  ok = true;
  for (int i = 0; i < 3 * n; ++i)
    ok &= all[i] == (i / 3) * 10 + i % 3;
  CHECK(ok);
  std::vector<int32_t> blocks(n, -1);
  blocks[r] = 100 + r;
  group.allGather(blocks.data() + r, blocks.data(), sizeof(int32_t),
                  "gather in place");
  ok = true;
  for (int i = 0; i < n; ++i)
    ok &= blocks[i] == 100 + i;
  CHECK(ok);

  // reduceScatter: block b of rank q holds q * 100 + b * 2 + {0, 1}; rank
  // r gets the sum over q of its block r.
  std::vector<float> scattered(2 * n), own(2, -1);
  for (int b = 0; b < n; ++b)
    for (int k = 0; k < 2; ++k)
      scattered[2 * b + k] = float(r * 100 + b * 2 + k);
  group.reduceScatter(scattered.data(), own.data(), 2, DType::F32,
                      ReduceOp::Sum, "reduce_scatter");
  for (int k = 0; k < 2; ++k)
    CHECK(own[k] == float(100 * (n * (n - 1) / 2) + n * (r * 2 + k)));

  // allToAll: block b of rank q holds q * 1000 + b * 10 + {0, 1, 2}; rank
  // r receives block r of every rank, in rank order. Long enough blocks
  // for Gloo to cut into segments, and nothing to exchange.
  const size_t width = 3, longWidth = 40000;
  std::vector<int32_t> sent(width * n), received(width * n, -1);
  for (int b = 0; b < n; ++b)
    for (size_t k = 0; k < width; ++k)
      sent[width * b + k] = r * 1000 + b * 10 + int32_t(k);
  group.allToAll(sent.data(), received.data(), sizeof(int32_t) * width,
                 "all_to_all");
  ok = true;
  for (int q = 0; q < n; ++q)
    for (size_t k = 0; k < width; ++k)
      ok &= received[width * q + k] == q * 1000 + r * 10 + int32_t(k);
  CHECK(ok);
  std::vector<float> longSent(longWidth * n), longReceived(longWidth * n);
  for (size_t i = 0; i < longSent.size(); ++i)
    longSent[i] = float(r) * 1e6f + float(i);
  group.allToAll(longSent.data(), longReceived.data(),
                 sizeof(float) * longWidth, "long all_to_all");
  ok = true;
  for (int q = 0; q < n; ++q)
    for (size_t k = 0; k < longWidth; k += 997)
      ok &= longReceived[longWidth * q + k] ==
            float(q) * 1e6f + float(longWidth * r + k);
  CHECK(ok);
  group.allToAll(sent.data(), received.data(), 0, "empty all_to_all");
}

/// Point to point, as a pipelined step's stages use it: messages both ways
/// between neighbours at once under distinct tags, received in the reverse
/// order of sending, the sender's buffer overwritten right after each send
/// (a send takes a copy); then a broadcast from the last rank.
static void testPointToPoint(World &world) {
  Group &group = world.getWorldGroup();
  const int n = group.getSize(), r = group.getRank();
  const int next = (r + 1) % n, previous = (r + n - 1) % n;
  const size_t count = 50000, bytes = count * sizeof(int32_t);
  std::vector<int32_t> buffer(count);
  for (uint32_t tag = 0; tag < 4; ++tag) {
    for (size_t i = 0; i < count; ++i)
      buffer[i] = int32_t(r * 100 + tag + i);
    group.send(buffer.data(), bytes, next, tag, "send forward");
    group.send(buffer.data(), bytes, previous, 100 + tag, "send back");
  }
  std::fill(buffer.begin(), buffer.end(), -1);
  for (int tag = 3; tag >= 0; --tag) {
    std::vector<int32_t> got(count, -1);
    group.recv(got.data(), bytes, previous, uint32_t(tag), "recv forward");
    bool ok = true;
    for (size_t i = 0; i < count; ++i)
      ok &= got[i] == int32_t(previous * 100 + tag + i);
    CHECK(ok);
    group.recv(got.data(), bytes, next, uint32_t(100 + tag), "recv back");
    ok = true;
    for (size_t i = 0; i < count; ++i)
      ok &= got[i] == int32_t(next * 100 + tag + i);
    CHECK(ok);
  }
  group.finishSends("the sends");
  std::vector<double> value(3, double(r));
  group.broadcast(value.data(), sizeof(double) * value.size(), n - 1,
                  "broadcast");
  for (double v : value)
    CHECK(v == double(n - 1));
}

/// A 2x2 mesh: rank = 2 * row + column.
static void testMesh(World &world) {
  std::string error;
  const int r = world.getRank(), row = r / 2, column = r % 2;
  std::unique_ptr<Group> rowGroup = world.split(row, column, error);
  std::unique_ptr<Group> columnGroup = world.split(column, row, error);
  // One group of everyone, ordered backwards by its key.
  std::unique_ptr<Group> reversed = world.split(7, -r, error);
  CHECK(rowGroup && columnGroup && reversed);
  if (!rowGroup || !columnGroup || !reversed) {
    std::fprintf(stderr, "rank %d: %s\n", r, error.c_str());
    return;
  }
  CHECK(rowGroup->getSize() == 2 && rowGroup->getRank() == column);
  CHECK(columnGroup->getSize() == 2 && columnGroup->getRank() == row);
  CHECK(reversed->getSize() == 4 && reversed->getRank() == 3 - r);

  int64_t value = r, sum = 0;
  rowGroup->allReduce(&value, &sum, 1, DType::I64, ReduceOp::Sum, "row sum");
  CHECK(sum == (row == 0 ? 0 + 1 : 2 + 3));
  columnGroup->allReduce(&value, &sum, 1, DType::I64, ReduceOp::Sum,
                         "column sum");
  CHECK(sum == (column == 0 ? 0 + 2 : 1 + 3));
  int32_t mine = r, rowAll[2] = {-1, -1}, everyone[4] = {-1, -1, -1, -1};
  rowGroup->allGather(&mine, rowAll, sizeof(mine), "row gather");
  CHECK(rowAll[0] == 2 * row && rowAll[1] == 2 * row + 1);
  reversed->allGather(&mine, everyone, sizeof(mine), "reversed gather");
  CHECK(everyone[0] == 3 && everyone[1] == 2 && everyone[2] == 1 &&
        everyone[3] == 0);
  // Within a column: block q goes to the rank of row q.
  int32_t sent[2] = {r * 10, r * 10 + 1}, received[2] = {-1, -1};
  columnGroup->allToAll(sent, received, sizeof(int32_t), "column all_to_all");
  CHECK(received[0] == column * 10 + row &&
        received[1] == (2 + column) * 10 + row);
  // The world still works after the splits, interleaved with the groups.
  float one = 1, total = 0;
  world.getWorldGroup().allReduce(&one, &total, 1, DType::F32, ReduceOp::Sum,
                                  "world sum");
  CHECK(total == 4);
  columnGroup->allReduce(&one, &total, 1, DType::F32, ReduceOp::Sum,
                         "column sum again");
  CHECK(total == 2);
}

static void testCheckSame(World &world) {
  std::string error;
  CHECK(world.checkSame("step-a", error));
  // Rank 2 runs another step: every rank learns it, and of rank 2.
  bool same =
      world.checkSame(world.getRank() == 2 ? "step-b" : "step-a", error);
  CHECK(!same);
  CHECK(error.find("rank 2 runs a different compiled step") !=
        std::string::npos);
  // A third check after a failed one still meets.
  CHECK(world.checkSame("step-c", error));
}

/// The ranks' side of every scenario.
static int runRank(const std::string &scenario) {
  std::string error;
  std::optional<LaunchEnv> env = readLaunchEnv(error);
  if (!env) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  std::unique_ptr<World> world = World::create(*env, getCommTimeout(), error);
  if (!world) {
    std::fprintf(stderr, "error: rank %d: %s\n", env->rank, error.c_str());
    return 1;
  }
  if (scenario == "collectives")
    testCollectives(*world);
  else if (scenario == "mesh")
    testMesh(*world);
  else if (scenario == "check-same")
    testCheckSame(*world);
  else if (scenario == "point-to-point")
    testPointToPoint(*world);
  else if (scenario == "recv-waits") {
    // Rank 0 waits for a value rank 1 never sends.
    int32_t value = 0;
    if (world->getRank() == 0)
      world->getWorldGroup().recv(&value, sizeof(value), 1, 7,
                                  "recv_7 (model.mlir:3:4) in step 1");
    else
      std::this_thread::sleep_for(std::chrono::hours(1));
  } else if (scenario == "dies" || scenario == "hangs") {
    float value = 1, sum = 0;
    for (int step = 1; step <= 1000; ++step) {
      if (world->getRank() == 1 && step == 3) {
        if (scenario == "dies")
          std::raise(SIGKILL);
        std::this_thread::sleep_for(std::chrono::hours(1));
      }
      std::string what = "all_reduce at step " + std::to_string(step);
      world->getWorldGroup().allReduce(&value, &sum, 1, DType::F32,
                                       ReduceOp::Sum, what.c_str());
    }
  } else if (scenario == "sleeps") {
    std::this_thread::sleep_for(std::chrono::hours(1));
  } else if (scenario == "dies-sending") {
    // Rank 1 is killed in the middle of a long collective, while the others
    // write to it: a write to its closed socket must be an error, not
    // SIGPIPE.
    std::vector<float> buffer(1 << 22, 1.0f);
    if (world->getRank() == 1)
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        std::raise(SIGKILL);
      }).detach();
    for (int step = 1; step <= 1000; ++step)
      world->getWorldGroup().allReduce(buffer.data(), buffer.data(),
                                       buffer.size(), DType::F32, ReduceOp::Max,
                                       "a long all_reduce");
  } else if (scenario == "dies-elsewhere") {
    // Rank 1 is killed while ranks 0 and 2 wait for each other: no engine
    // connection of theirs closes, the store hears it.
    if (world->getRank() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      std::raise(SIGKILL);
    }
    int32_t value = 0;
    world->getWorldGroup().recv(&value, sizeof(value), 2 - world->getRank(), 9,
                                "recv_9 (model.mlir:5:6) in step 1");
  } else if (scenario == "dies-while-saving") {
    // Rank 0 writes a file whose values a collective gathers (train
    // --save) when rank 1 is killed: no partial file may stay behind.
    if (world->getRank() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      std::raise(SIGKILL);
    }
    const char *path = std::getenv("TGC_TEST_SAVE_PATH");
    std::vector<float> buffer(1 << 20, 1.0f);
    auto gather = [&](std::ostream &out) {
      out << "the first tensor";
      out.flush();
      for (int step = 1; step <= 1000; ++step)
        world->getWorldGroup().allReduce(buffer.data(), buffer.data(),
                                         buffer.size(), DType::F32,
                                         ReduceOp::Max, "the gather");
    };
    if (world->getRank() == 0 && path)
      CHECK(!writeFileAtomically(path, gather, error));
    else
      gather(std::cout);
  } else if (scenario == "leader-fails") {
    // Rank 0 ends on an error (no finish) while the others wait for it in
    // a collective: it must not wait for them at the end.
    if (world->getRank() == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      return 1;
    }
    float value = 1, sum = 0;
    world->getWorldGroup().allReduce(&value, &sum, 1, DType::F32, ReduceOp::Sum,
                                     "all_reduce_4 (model.mlir:7:8)");
  } else if (scenario == "fails-before-split") {
    // Rank 2 ends on an error while the others split: their wait in the
    // store fails at once.
    if (world->getRank() == 2)
      return 1;
    std::unique_ptr<Group> group = world->split(0, world->getRank(), error);
    CHECK(!group);
    std::fprintf(stderr, "error: rank %d: %s\n", world->getRank(),
                 error.c_str());
    return 1;
  } else if (scenario != "connect") {
    std::fprintf(stderr, "error: no scenario '%s'\n", scenario.c_str());
    return 1;
  }
  if (failures)
    return 1;
  world->finish();
  return 0;
}

//===----------------------------------------------------------------------===//
// The driver's side
//===----------------------------------------------------------------------===//

struct Outcome {
  int status = -1;
  std::string output;
  double seconds = 0;
};

/// Runs `TGCRuntimeCommTests rank <scenario>` with `env` added: under
/// launchLocal with `nproc` ranks, or alone when `nproc` is 0.
static Outcome runRanks(const std::string &scenario, int nproc,
                        const std::map<std::string, std::string> &env,
                        int signalAfterMs = 0) {
  char path[] = "/tmp/tgc-comm-test-XXXXXX";
  int fd = ::mkstemp(path);
  auto start = std::chrono::steady_clock::now();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    for (const char *name : {"RANK", "WORLD_SIZE", "LOCAL_RANK",
                             "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"})
      ::unsetenv(name);
    for (auto &[name, value] : env)
      ::setenv(name.c_str(), value.c_str(), 1);
    std::string rankArg = "rank";
    char *argv[] = {const_cast<char *>("TGCRuntimeCommTests"), rankArg.data(),
                    const_cast<char *>(scenario.c_str()), nullptr};
    if (nproc > 0)
      ::_exit(launchLocal(nproc, 3, argv, getCommTimeout()));
    ::execv("/proc/self/exe", argv);
    ::_exit(127);
  }
  Outcome outcome;
  int status = 0;
  if (signalAfterMs) {
    std::this_thread::sleep_for(std::chrono::milliseconds(signalAfterMs));
    ::kill(pid, SIGTERM);
  }
  ::waitpid(pid, &status, 0);
  outcome.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  outcome.output = text.str();
  // To read what the ranks print: TGC_COMM_TEST_VERBOSE=1.
  if (std::getenv("TGC_COMM_TEST_VERBOSE"))
    std::fprintf(stderr, "--- %s, %d rank(s): status %d after %.2f s\n%s",
                 scenario.c_str(), nproc, outcome.status, outcome.seconds,
                 outcome.output.c_str());
  ::close(fd);
  ::unlink(path);
  return outcome;
}

static bool contains(const Outcome &outcome, const std::string &text) {
  if (outcome.output.find(text) != std::string::npos)
    return true;
  std::fprintf(stderr, "expected '%s' in:\n%s\n", text.c_str(),
               outcome.output.c_str());
  return false;
}

static void expectSuccess(const Outcome &outcome) {
  if (outcome.status != 0)
    std::fprintf(stderr, "the ranks failed (%d):\n%s\n", outcome.status,
                 outcome.output.c_str());
  CHECK(outcome.status == 0);
}

static int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address));
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &size);
  ::close(fd);
  return ntohs(address.sin_port);
}

/// A connection to 127.0.0.1:`port`, or -1.
static int connectTo(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(uint16_t(port));
  if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address))) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// Starts `nproc` ranks the way srun does on `nproc` machines of one task
/// each (Slurm's variables, no launchLocal): the store and Gloo then bind
/// the address this host reaches the master from, not loopback.
static bool runAsSlurmTasks(const std::string &scenario, int nproc) {
  int port = freePort();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < nproc; ++rank) {
    pid_t pid = ::fork();
    if (pid == 0) {
      for (const char *name :
           {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
            "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"})
        ::unsetenv(name);
      ::setenv("SLURM_PROCID", std::to_string(rank).c_str(), 1);
      ::setenv("SLURM_NTASKS", std::to_string(nproc).c_str(), 1);
      ::setenv("SLURM_LOCALID", "0", 1);
      ::setenv("SLURM_NODEID", std::to_string(rank).c_str(), 1);
      ::setenv("SLURM_TASKS_PER_NODE",
               ("1(x" + std::to_string(nproc) + ")").c_str(), 1);
      ::setenv("MASTER_ADDR", "localhost", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("TGC_COMM_TIMEOUT", "20", 1);
      char *argv[] = {const_cast<char *>("TGCRuntimeCommTests"),
                      const_cast<char *>("rank"),
                      const_cast<char *>(scenario.c_str()), nullptr};
      ::execv("/proc/self/exe", argv);
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  bool ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

/// Sets the variables for one readLaunchEnv, then clears them.
static std::optional<LaunchEnv>
readWith(const std::map<std::string, std::string> &vars, std::string &error) {
  for (auto &[name, value] : vars)
    ::setenv(name.c_str(), value.c_str(), 1);
  std::optional<LaunchEnv> env = readLaunchEnv(error);
  for (auto &[name, value] : vars)
    ::unsetenv(name.c_str());
  return env;
}

static void testLaunchEnv() {
  std::string error;
  for (const char *name : {"RANK",
                           "WORLD_SIZE",
                           "LOCAL_RANK",
                           "LOCAL_WORLD_SIZE",
                           "MASTER_ADDR",
                           "MASTER_PORT",
                           "SLURM_PROCID",
                           "SLURM_NTASKS",
                           "SLURM_LOCALID",
                           "SLURM_TASKS_PER_NODE",
                           "SLURM_NODEID",
                           "OMPI_COMM_WORLD_RANK",
                           "OMPI_COMM_WORLD_SIZE",
                           "OMPI_COMM_WORLD_LOCAL_RANK",
                           "OMPI_COMM_WORLD_LOCAL_SIZE",
                           "PMI_RANK",
                           "PMI_SIZE",
                           "MPI_LOCALRANKID",
                           "MPI_LOCALNRANKS",
                           "TGC_COMM_TIMEOUT"})
    ::unsetenv(name);

  std::optional<LaunchEnv> env = readWith({}, error);
  CHECK(env && env->launcher == "single" && env->worldSize == 1);
  env = readWith({{"RANK", "3"},
                  {"WORLD_SIZE", "8"},
                  {"LOCAL_RANK", "3"},
                  {"LOCAL_WORLD_SIZE", "4"},
                  {"MASTER_ADDR", "node0"},
                  {"MASTER_PORT", "29500"}},
                 error);
  CHECK(env && env->launcher == "torchrun" && env->rank == 3 &&
        env->worldSize == 8 && env->localWorldSize == 4 &&
        env->masterAddr == "node0" && env->masterPort == 29500);
  // One machine: MASTER_ADDR defaults to loopback.
  env = readWith({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1234"}},
                 error);
  CHECK(env && env->masterAddr == "127.0.0.1" && env->localRank == 1);

  auto expectError = [&](const std::map<std::string, std::string> &vars,
                         const char *message) {
    error.clear();
    std::optional<LaunchEnv> bad = readWith(vars, error);
    CHECK(!bad);
    if (error.find(message) == std::string::npos) {
      std::fprintf(stderr, "expected '%s', got '%s'\n", message, error.c_str());
      ++failures;
    }
  };
  expectError({{"RANK", "0"}}, "RANK is set but WORLD_SIZE is not");
  expectError({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}},
              "RANK=2 is not below WORLD_SIZE=2");
  expectError({{"RANK", "x"}, {"WORLD_SIZE", "2"}},
              "RANK='x' is not an integer");
  expectError({{"RANK", "0"}, {"WORLD_SIZE", "0"}},
              "WORLD_SIZE='0' is not an integer >= 1");
  expectError({{"RANK", "0"}, {"WORLD_SIZE", "2"}}, "MASTER_PORT is not set");
  expectError({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}},
              "MASTER_PORT='70000' is not an integer in [1, 65535]");
  expectError({{"RANK", "0"},
               {"WORLD_SIZE", "8"},
               {"LOCAL_WORLD_SIZE", "4"},
               {"LOCAL_RANK", "0"},
               {"MASTER_PORT", "1"}},
              "MASTER_ADDR is not set and the 8 ranks span several machines");
  expectError({{"RANK", "0"},
               {"WORLD_SIZE", "2"},
               {"LOCAL_RANK", "4"},
               {"LOCAL_WORLD_SIZE", "2"},
               {"MASTER_PORT", "1"}},
              "the local rank 4 and the local world size 2");

  // srun: the tasks on this node from SLURM_TASKS_PER_NODE.
  env = readWith({{"SLURM_PROCID", "5"},
                  {"SLURM_NTASKS", "7"},
                  {"SLURM_LOCALID", "1"},
                  {"SLURM_NODEID", "2"},
                  {"SLURM_TASKS_PER_NODE", "2(x2),3"},
                  {"MASTER_ADDR", "n0"},
                  {"MASTER_PORT", "29500"}},
                 error);
  CHECK(env && env->launcher == "slurm" && env->rank == 5 &&
        env->worldSize == 7 && env->localRank == 1 && env->localWorldSize == 3);
  // mpirun inside an allocation: Open MPI's variables win over Slurm's.
  env = readWith({{"OMPI_COMM_WORLD_RANK", "1"},
                  {"OMPI_COMM_WORLD_SIZE", "2"},
                  {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                  {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                  {"SLURM_PROCID", "0"},
                  {"SLURM_NTASKS", "1"},
                  {"MASTER_PORT", "29500"}},
                 error);
  CHECK(env && env->launcher == "mpi" && env->rank == 1 && env->worldSize == 2);
  // MPICH's mpiexec (Hydra): PMI_RANK, PMI_SIZE and the local ids.
  env = readWith({{"PMI_RANK", "3"},
                  {"PMI_SIZE", "4"},
                  {"MPI_LOCALRANKID", "1"},
                  {"MPI_LOCALNRANKS", "2"},
                  {"MASTER_ADDR", "n0"},
                  {"MASTER_PORT", "29500"}},
                 error);
  CHECK(env && env->launcher == "mpich" && env->rank == 3 &&
        env->worldSize == 4 && env->localRank == 1 && env->localWorldSize == 2);
  env = readWith({{"PMI_RANK", "4"}, {"PMI_SIZE", "4"}, {"MASTER_PORT", "1"}},
                 error);
  CHECK(!env &&
        error.find("PMI_RANK=4 is not below PMI_SIZE=4") != std::string::npos);

  CHECK(getCommTimeout() == 300);
  ::setenv("TGC_COMM_TIMEOUT", "2.5", 1);
  CHECK(getCommTimeout() == 2.5);
  ::unsetenv("TGC_COMM_TIMEOUT");

  // A world of one: no store, the collectives are copies.
  LaunchEnv single;
  std::unique_ptr<World> world = World::create(single, 1, error);
  CHECK(world && world->getSize() == 1);
  if (world) {
    float in[2] = {1, 2}, out[2] = {};
    world->getWorldGroup().allReduce(in, out, 2, DType::F32, ReduceOp::Average,
                                     "single");
    CHECK(out[0] == 1 && out[1] == 2);
    std::unique_ptr<Group> group = world->split(0, 0, error);
    CHECK(group && group->getSize() == 1);
    CHECK(world->checkSame("x", error));
  }
}

static void testStore() {
  std::string error;
  int port = freePort();
  std::unique_ptr<TcpStore> server =
      TcpStore::create("127.0.0.1", port, true, 1.0, error);
  CHECK(server);
  if (!server)
    return;
  std::unique_ptr<TcpStore> client =
      TcpStore::create("localhost", port, false, 1.0, error);
  CHECK(client);
  if (!client)
    return;
  std::vector<char> value;
  // A get that waits is answered by a later set from another client.
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::string setError;
    server->set("late", {'o', 'k'}, setError);
  });
  CHECK(client->get("late", value, error) &&
        std::string(value.begin(), value.end()) == "ok");
  setter.join();
  int64_t sum = 0;
  CHECK(client->add("count", 2, sum, error) && sum == 2);
  CHECK(server->add("count", 3, sum, error) && sum == 5);
  // A get that times out names its key, and the client says so after.
  CHECK(!client->get("never", value, error));
  CHECK(error.find("no 'never' in the store after 1 s") != std::string::npos);
  CHECK(!client->set("x", {}, error));
  CHECK(error.find("abandoned after a timeout") != std::string::npos);
  // A rank that leaves before its connection closes is not gone; one that
  // does not leave is.
  for (int rank : {5, 6}) {
    std::unique_ptr<TcpStore> ranked =
        TcpStore::create("localhost", port, false, 1.0, error, rank);
    CHECK(ranked && (rank == 6 || ranked->leave(error)));
  }
  std::vector<int> gone;
  for (int tries = 0; tries < 100 && gone.empty(); ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(server->getGoneRanks(gone, error));
  }
  CHECK(gone == std::vector<int>{6});
  // A frame whose sizes no store client sends (a value of 2^64 - 6 bytes:
  // trusted, the frame's end would wrap around) loses its sender, not the
  // store.
  {
    int raw = connectTo(port);
    CHECK(raw >= 0);
    uint32_t keySize = 1;
    uint64_t valueSize = UINT64_MAX - 5;
    std::string frame(1, 'S');
    frame.append(reinterpret_cast<const char *>(&keySize), sizeof(keySize));
    frame += 'k';
    frame.append(reinterpret_cast<const char *>(&valueSize), sizeof(valueSize));
    frame += "tail";
    CHECK(::send(raw, frame.data(), frame.size(), MSG_NOSIGNAL) ==
          ssize_t(frame.size()));
    char byte;
    CHECK(::recv(raw, &byte, 1, 0) == 0);
    ::close(raw);
    CHECK(server->add("count", 1, sum, error) && sum == 6);
  }
  // The port is now taken: a second server says so.
  CHECK(!TcpStore::create("127.0.0.1", port, true, 1.0, error));
  CHECK(error.find("the master port " + std::to_string(port) + " is in use") !=
        std::string::npos);
}

/// MASTER_PORT held by another program that answers anything with text: a
/// clear error, not an allocation of the size its first 8 bytes spell.
static void testForeignMaster() {
  int port = freePort();
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(uint16_t(port));
  CHECK(::bind(listener, reinterpret_cast<sockaddr *>(&address),
               sizeof(address)) == 0 &&
        ::listen(listener, 1) == 0);
  std::thread other([listener] {
    int fd = ::accept(listener, nullptr, nullptr);
    char request[64];
    if (fd >= 0 && ::recv(fd, request, sizeof(request), 0) > 0) {
      const char answer[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
      ::send(fd, answer, sizeof(answer) - 1, MSG_NOSIGNAL);
    }
    if (fd >= 0)
      ::close(fd);
  });
  std::string error;
  CHECK(!TcpStore::create("127.0.0.1", port, false, 2.0, error, 1));
  CHECK(error.find("does not answer as tgc's store") != std::string::npos);
  other.join();
  ::close(listener);
}

static void runTest(const std::string &test) {
  std::map<std::string, std::string> fast = {{"TGC_COMM_TIMEOUT", "20"}};
  if (test == "collectives-2")
    return expectSuccess(runRanks("collectives", 2, fast));
  if (test == "collectives-4")
    return expectSuccess(runRanks("collectives", 4, fast));
  if (test == "mesh-2x2")
    return expectSuccess(runRanks("mesh", 4, fast));
  if (test == "slurm-tasks") {
    CHECK(runAsSlurmTasks("mesh", 4));
    return;
  }
  if (test == "check-same")
    return expectSuccess(runRanks("check-same", 3, fast));
  if (test == "point-to-point-2")
    return expectSuccess(runRanks("point-to-point", 2, fast));
  if (test == "point-to-point-3")
    return expectSuccess(runRanks("point-to-point", 3, fast));
  if (test == "recv-waits") {
    // A receive whose send never comes times out, naming the transfer.
    Outcome outcome = runRanks("recv-waits", 2, {{"TGC_COMM_TIMEOUT", "1"}});
    CHECK(outcome.status == 1);
    CHECK(contains(
        outcome, "error: rank 0: recv_7 (model.mlir:3:4) in step 1 failed: "));
    CHECK(contains(outcome, "error: stopping rank(s) 1"));
    CHECK(outcome.seconds < 8);
    return;
  }
  if (test == "launch-env") {
    testLaunchEnv();
    testForeignMaster();
    return testStore();
  }
  if (test == "rank-dies") {
    // Rank 1 is killed at its third step: the launcher says so, the others
    // fail their collective at once (the connection closes) and say which.
    Outcome outcome = runRanks("dies", 3, {{"TGC_COMM_TIMEOUT", "5"}});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome, "error: rank 1 was killed by signal 9 (SIGKILL)"));
    CHECK(contains(outcome, "error: rank 0: all_reduce at step 3 failed: "
                            "rank 1 has exited or crashed"));
    CHECK(contains(outcome, "error: rank 2: all_reduce at step 3 failed: "
                            "rank 1 has exited or crashed"));
    CHECK(contains(outcome, "error: rank 0 exited with status 1"));
    CHECK(outcome.seconds < 5);
    return;
  }
  if (test == "rank-dies-sending") {
    Outcome outcome = runRanks("dies-sending", 3, {{"TGC_COMM_TIMEOUT", "5"}});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome, "error: rank 1 was killed by signal 9 (SIGKILL)"));
    CHECK(contains(outcome, "error: rank 0: a long all_reduce failed: rank 1 "
                            "has exited or crashed"));
    CHECK(contains(outcome, "error: rank 2: a long all_reduce failed: rank 1 "
                            "has exited or crashed"));
    CHECK(outcome.seconds < 5);
    return;
  }
  if (test == "rank-dies-elsewhere") {
    Outcome outcome =
        runRanks("dies-elsewhere", 3, {{"TGC_COMM_TIMEOUT", "20"}});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome, "error: rank 1 was killed by signal 9 (SIGKILL)"));
    CHECK(contains(outcome, "error: rank 0: recv_9 (model.mlir:5:6) in step 1 "
                            "failed: rank 1 has exited or crashed"));
    CHECK(contains(outcome, "error: rank 2: recv_9 (model.mlir:5:6) in step 1 "
                            "failed: rank 1 has exited or crashed"));
    CHECK(outcome.seconds < 5);
    return;
  }
  if (test == "dies-while-saving") {
    char directory[] = "/tmp/tgc-save-test-XXXXXX";
    CHECK(::mkdtemp(directory));
    std::string path = std::string(directory) + "/ckpt.safetensors";
    Outcome outcome =
        runRanks("dies-while-saving", 2,
                 {{"TGC_COMM_TIMEOUT", "20"}, {"TGC_TEST_SAVE_PATH", path}});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome, "error: rank 0: the gather failed: rank 1 has "
                            "exited or crashed"));
    CHECK(::access(path.c_str(), F_OK) != 0);
    CHECK(::access((path + ".tmp").c_str(), F_OK) != 0);
    ::rmdir(directory);
    return;
  }
  if (test == "leader-fails") {
    Outcome outcome = runRanks("leader-fails", 3, {{"TGC_COMM_TIMEOUT", "20"}});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome, "error: rank 1: all_reduce_4 (model.mlir:7:8) "
                            "failed: rank 0 has exited or crashed"));
    CHECK(contains(outcome, "error: rank 2: all_reduce_4 (model.mlir:7:8) "
                            "failed: rank 0 has exited or crashed"));
    CHECK(outcome.seconds < 5);
    return;
  }
  if (test == "store-wait-fails") {
    Outcome outcome =
        runRanks("fails-before-split", 3, {{"TGC_COMM_TIMEOUT", "20"}});
    CHECK(outcome.status == 1);
    for (int rank : {0, 1})
      CHECK(contains(outcome, "error: rank " + std::to_string(rank) +
                                  ": the split into groups failed: rank 2 "
                                  "has exited or crashed"));
    CHECK(outcome.seconds < 5);
    return;
  }
  if (test == "launcher-signal") {
    // SIGTERM to the launcher reaches its ranks; it returns 128 + 15 once
    // they are gone.
    Outcome outcome = runRanks("sleeps", 2, {{"TGC_COMM_TIMEOUT", "20"}},
                               /*signalAfterMs=*/500);
    CHECK(outcome.status == 128 + SIGTERM);
    CHECK(outcome.seconds < 5);
    return;
  }
  if (test == "rank-hangs") {
    // Rank 1 stops taking part: rank 0 times out in its collective, then
    // the launcher gives rank 1 the timeout and stops it.
    Outcome outcome = runRanks("hangs", 2, {{"TGC_COMM_TIMEOUT", "1"}});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome, "error: rank 0: all_reduce at step 3 failed: "));
    CHECK(contains(outcome, "error: rank 0 exited with status 1"));
    CHECK(contains(outcome, "error: stopping rank(s) 1"));
    CHECK(outcome.seconds < 8);
    return;
  }
  if (test == "port-in-use") {
    int holder = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(address);
    CHECK(::bind(holder, reinterpret_cast<sockaddr *>(&address),
                 sizeof(address)) == 0 &&
          ::listen(holder, 4) == 0 &&
          ::getsockname(holder, reinterpret_cast<sockaddr *>(&address),
                        &size) == 0);
    std::string port = std::to_string(ntohs(address.sin_port));
    Outcome outcome = runRanks("connect", 0,
                               {{"RANK", "0"},
                                {"WORLD_SIZE", "2"},
                                {"MASTER_PORT", port},
                                {"TGC_COMM_TIMEOUT", "2"}});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome,
                   "error: rank 0: the master port " + port + " is in use"));
    // A rank other than 0 finds something that is not a store there.
    outcome = runRanks("connect", 0,
                       {{"RANK", "1"},
                        {"WORLD_SIZE", "2"},
                        {"MASTER_PORT", port},
                        {"TGC_COMM_TIMEOUT", "1"}});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome, "does not answer as tgc's store"));
    ::close(holder);
    return;
  }
  if (test == "missing-rank") {
    // WORLD_SIZE=2 with only rank 0: it names rank 1 within the timeout.
    std::string port = std::to_string(freePort());
    Outcome outcome = runRanks("connect", 0,
                               {{"RANK", "0"},
                                {"WORLD_SIZE", "2"},
                                {"MASTER_PORT", port},
                                {"TGC_COMM_TIMEOUT", "1"}});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome,
                   "error: rank 0: rank 1 did not reach the start within 1 s"));
    CHECK(outcome.seconds < 4);
    // Only rank 1: nobody serves the store.
    outcome = runRanks("connect", 0,
                       {{"RANK", "1"},
                        {"WORLD_SIZE", "2"},
                        {"MASTER_PORT", port},
                        {"TGC_COMM_TIMEOUT", "1"}});
    CHECK(outcome.status == 1);
    CHECK(contains(outcome, "error: rank 1: no master at 127.0.0.1:" + port +
                                " after 1 s"));
    return;
  }
  std::fprintf(stderr, "error: no test '%s'\n", test.c_str());
  ++failures;
}

int main(int argc, char **argv) {
  if (argc == 3 && std::string(argv[1]) == "rank")
    return runRank(argv[2]);
  if (argc != 2) {
    std::fprintf(stderr, "USAGE: %s <test> | rank <scenario>\n", argv[0]);
    return 2;
  }
  runTest(argv[1]);
  if (failures)
    std::fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
