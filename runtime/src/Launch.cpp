//===- Launch.cpp - where a rank stands, and `train --nproc N` ------------===//
//
// readLaunchEnv reads what torchrun, srun or Open MPI's mpirun set (in
// that order of precedence: explicit torchrun variables win over the
// allocation's, mpirun inside a Slurm allocation is mpirun's launch).
// launchLocal is a one-machine torchrun: N children of this program with
// torchrun's variables, and a report of the first rank that fails.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tgc::rt::comm;

extern char **environ;

namespace {

/// Reads the integer in `name` when set: false with `error` set when it is
/// set but not an integer in [min, max].
bool readInt(const char *name, long min, long max, std::optional<long> &value,
             std::string &error) {
  const char *text = std::getenv(name);
  value.reset();
  if (!text)
    return true;
  errno = 0;
  char *end = nullptr;
  long parsed = std::strtol(text, &end, 10);
  if (!*text || *end || errno == ERANGE || parsed < min || parsed > max) {
    error = std::string(name) + "='" + text + "' is not an integer";
    if (max < INT_MAX)
      error += " in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    else
      error += " >= " + std::to_string(min);
    return false;
  }
  value = parsed;
  return true;
}

/// The tasks on this node from Slurm's SLURM_TASKS_PER_NODE ("2(x3),1":
/// two tasks on each of the first three nodes, one on the fourth) and
/// SLURM_NODEID.
std::optional<long> slurmLocalSize() {
  const char *perNode = std::getenv("SLURM_TASKS_PER_NODE");
  const char *nodeText = std::getenv("SLURM_NODEID");
  if (!perNode || !nodeText)
    return std::nullopt;
  long node = std::atol(nodeText);
  const char *cursor = perNode;
  while (*cursor) {
    char *end = nullptr;
    long tasks = std::strtol(cursor, &end, 10);
    if (end == cursor)
      return std::nullopt;
    long repeat = 1;
    if (std::strncmp(end, "(x", 2) == 0) {
      repeat = std::strtol(end + 2, &end, 10);
      if (*end != ')')
        return std::nullopt;
      ++end;
    }
    if (node < repeat)
      return tasks;
    node -= repeat;
    cursor = *end == ',' ? end + 1 : end;
  }
  return std::nullopt;
}

const char *signalName(int signal) {
  switch (signal) {
  case SIGHUP:
    return "SIGHUP";
  case SIGINT:
    return "SIGINT";
  case SIGQUIT:
    return "SIGQUIT";
  case SIGILL:
    return "SIGILL";
  case SIGTRAP:
    return "SIGTRAP";
  case SIGABRT:
    return "SIGABRT";
  case SIGBUS:
    return "SIGBUS";
  case SIGFPE:
    return "SIGFPE";
  case SIGKILL:
    return "SIGKILL";
  case SIGSEGV:
    return "SIGSEGV";
  case SIGPIPE:
    return "SIGPIPE";
  case SIGALRM:
    return "SIGALRM";
  case SIGTERM:
    return "SIGTERM";
  default:
    return "?";
  }
}

/// A signal the launcher received, to forward to its ranks.
volatile std::sig_atomic_t received = 0;
void onSignal(int signal) { received = signal; }

/// A port nobody listens on now: the kernel's choice for port 0. Another
/// process could take it before rank 0 binds it; rank 0 then says the
/// port is in use.
int findFreePort(std::string &error) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("cannot open a socket: ") + std::strerror(errno);
    return -1;
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)) ==
          0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &size) == 0)
    port = ntohs(address.sin_port);
  else
    error = std::string("cannot find a free port: ") + std::strerror(errno);
  ::close(fd);
  return port;
}

std::string describeStatus(int rank, int status) {
  std::string text = "rank " + std::to_string(rank);
  if (WIFSIGNALED(status))
    return text + " was killed by signal " + std::to_string(WTERMSIG(status)) +
           " (" + signalName(WTERMSIG(status)) + ")";
  return text + " exited with status " + std::to_string(WEXITSTATUS(status));
}

} // namespace

double tgc::rt::comm::getCommTimeout() {
  const char *text = std::getenv("TGC_COMM_TIMEOUT");
  if (!text)
    return 300;
  char *end = nullptr;
  double seconds = std::strtod(text, &end);
  if (!*text || *end || !(seconds > 0) || seconds > 1e7) {
    std::fprintf(stderr,
                 "error: TGC_COMM_TIMEOUT='%s' is not a number of seconds "
                 "above 0\n",
                 text);
    std::exit(1);
  }
  return seconds;
}

std::optional<LaunchEnv> tgc::rt::comm::readLaunchEnv(std::string &error) {
  LaunchEnv env;
  struct Names {
    const char *launcher, *rank, *size, *localRank, *localSize;
  };
  static const Names launchers[] = {
      {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
      {"mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
       "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
      // MPICH and Intel MPI (the Hydra process manager).
      {"mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
      {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", nullptr},
  };
  const Names *names = nullptr;
  for (const Names &candidate : launchers)
    if (std::getenv(candidate.rank) || std::getenv(candidate.size)) {
      names = &candidate;
      break;
    }
  if (!names)
    return env;

  std::optional<long> rank, size, localRank, localSize;
  if (!readInt(names->size, 1, INT_MAX, size, error) ||
      !readInt(names->rank, 0, INT_MAX, rank, error) ||
      !readInt(names->localRank, 0, INT_MAX, localRank, error) ||
      (names->localSize &&
       !readInt(names->localSize, 1, INT_MAX, localSize, error)))
    return std::nullopt;
  if (!rank || !size) {
    error = std::string(rank ? names->rank : names->size) + " is set but " +
            (rank ? names->size : names->rank) +
            " is not: the launch must set both";
    return std::nullopt;
  }
  if (*rank >= *size) {
    error = std::string(names->rank) + "=" + std::to_string(*rank) +
            " is not below " + names->size + "=" + std::to_string(*size);
    return std::nullopt;
  }
  if (!names->localSize)
    localSize = slurmLocalSize();
  // Without the local variables, assume one machine (RANK and WORLD_SIZE
  // set by hand).
  if (!localRank)
    localRank = *rank;
  if (!localSize)
    localSize = *size;
  if (*localSize > *size || *localRank >= *localSize) {
    error = "the local rank " + std::to_string(*localRank) +
            " and the local world size " + std::to_string(*localSize) +
            " do not fit the world size " + std::to_string(*size) + " (" +
            names->launcher + "'s variables)";
    return std::nullopt;
  }
  env.launcher = names->launcher;
  env.rank = int(*rank);
  env.worldSize = int(*size);
  env.localRank = int(*localRank);
  env.localWorldSize = int(*localSize);

  if (const char *address = std::getenv("MASTER_ADDR")) {
    if (!*address) {
      error = "MASTER_ADDR is set but empty";
      return std::nullopt;
    }
    env.masterAddr = address;
  } else if (env.localWorldSize != env.worldSize) {
    error = "MASTER_ADDR is not set and the " + std::to_string(env.worldSize) +
            " ranks span several machines (" +
            std::to_string(env.localWorldSize) +
            " on this one): set it to rank 0's host";
    return std::nullopt;
  }
  std::optional<long> port;
  if (!readInt("MASTER_PORT", 1, 65535, port, error))
    return std::nullopt;
  if (port)
    env.masterPort = int(*port);
  else if (env.worldSize > 1) {
    error = "MASTER_PORT is not set: a world of " +
            std::to_string(env.worldSize) +
            " ranks needs the port of rank 0's store (any free port, the "
            "same on every rank)";
    return std::nullopt;
  }
  return env;
}

int tgc::rt::comm::launchLocal(int nproc, int argc, char **argv,
                               double timeoutSeconds) {
  if (nproc < 1) {
    std::fprintf(stderr, "error: --nproc must be at least 1, not %d\n", nproc);
    return 1;
  }
  std::string error;
  int port = findFreePort(error);
  if (port < 0) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }

  // The ranks' command line: ours without --nproc.
  std::vector<char *> arguments;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strcmp(argv[i], "--nproc") == 0) {
      ++i;
      continue;
    }
    if (i > 0 && std::strncmp(argv[i], "--nproc=", 8) == 0)
      continue;
    arguments.push_back(argv[i]);
  }
  arguments.push_back(nullptr);

  // Each rank's environment: ours, with torchrun's variables replaced.
  static const char *const replaced[] = {
      "RANK=",        "WORLD_SIZE=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE=",
      "MASTER_ADDR=", "MASTER_PORT="};
  std::vector<std::string> inherited;
  for (char **entry = environ; *entry; ++entry) {
    bool keep = true;
    for (const char *prefix : replaced)
      keep &= std::strncmp(*entry, prefix, std::strlen(prefix)) != 0;
    if (keep)
      inherited.push_back(*entry);
  }
  std::vector<std::vector<std::string>> environments(nproc, inherited);
  std::vector<std::vector<char *>> envps(nproc);
  for (int rank = 0; rank < nproc; ++rank) {
    std::vector<std::string> &vars = environments[rank];
    vars.push_back("RANK=" + std::to_string(rank));
    vars.push_back("WORLD_SIZE=" + std::to_string(nproc));
    vars.push_back("LOCAL_RANK=" + std::to_string(rank));
    vars.push_back("LOCAL_WORLD_SIZE=" + std::to_string(nproc));
    vars.push_back("MASTER_ADDR=127.0.0.1");
    vars.push_back("MASTER_PORT=" + std::to_string(port));
    for (std::string &var : vars)
      envps[rank].push_back(var.data());
    envps[rank].push_back(nullptr);
  }

  struct sigaction action {
  }, oldInt{}, oldTerm{};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &oldInt);
  sigaction(SIGTERM, &action, &oldTerm);
  received = 0;

  std::fflush(nullptr);
  std::vector<pid_t> pids(nproc, -1);
  int running = 0;
  int result = 0;
  for (int rank = 0; rank < nproc; ++rank) {
    pid_t pid = ::fork();
    if (pid == 0) {
      // The child: only async-signal-safe calls until exec.
      struct sigaction fallback {};
      fallback.sa_handler = SIG_DFL;
      sigemptyset(&fallback.sa_mask);
      sigaction(SIGINT, &fallback, nullptr);
      sigaction(SIGTERM, &fallback, nullptr);
      ::execve("/proc/self/exe", arguments.data(), envps[rank].data());
      const char message[] = "error: cannot start a rank: exec failed\n";
      ssize_t ignored = ::write(2, message, sizeof(message) - 1);
      (void)ignored;
      ::_exit(127);
    }
    if (pid < 0) {
      std::fprintf(stderr, "error: cannot start rank %d: %s\n", rank,
                   std::strerror(errno));
      result = 1;
      break;
    }
    pids[rank] = pid;
    ++running;
  }

  using Clock = std::chrono::steady_clock;
  // Set when a rank failed or we were interrupted: the others have until
  // then to exit on their own (their collectives fail within the timeout).
  std::optional<Clock::time_point> stopBy;
  if (result != 0)
    stopBy = Clock::now();
  bool terminated = false, killed = false;
  int forwarded = 0;
  while (running > 0) {
    if (received && received != forwarded) {
      forwarded = received;
      for (pid_t pid : pids)
        if (pid > 0)
          ::kill(pid, forwarded);
      if (!stopBy)
        stopBy = Clock::now() + std::chrono::seconds(5);
      if (result == 0)
        result = 128 + forwarded;
    }
    // Every rank that ended since the last look. Those that failed on
    // their own are reported, the likely cause first: a rank killed by a
    // signal or exiting with its own status, before the ones that exit 1
    // because it left.
    std::vector<std::pair<int, int>> failed;
    pid_t pid;
    int status = 0;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      int rank = int(std::find(pids.begin(), pids.end(), pid) - pids.begin());
      if (rank == nproc)
        continue;
      pids[rank] = -1;
      --running;
      // Ranks we stopped ourselves are not news.
      if ((!WIFEXITED(status) || WEXITSTATUS(status) != 0) && !terminated &&
          !forwarded)
        failed.push_back({rank, status});
    }
    if (pid < 0 && errno != EINTR && errno != ECHILD)
      break;
    auto likelyCause = [](const std::pair<int, int> &failure) {
      return WIFSIGNALED(failure.second)        ? 0
             : WEXITSTATUS(failure.second) != 1 ? 1
                                                : 2;
    };
    std::stable_sort(failed.begin(), failed.end(),
                     [&](const auto &a, const auto &b) {
                       return likelyCause(a) < likelyCause(b);
                     });
    for (auto &[rank, rankStatus] : failed)
      std::fprintf(stderr, "error: %s\n",
                   describeStatus(rank, rankStatus).c_str());
    if (!failed.empty()) {
      if (!stopBy)
        stopBy = Clock::now() +
                 std::chrono::microseconds(int64_t(timeoutSeconds * 1e6));
      result = 1;
    }
    if (running == 0)
      break;
    if (stopBy && Clock::now() >= *stopBy) {
      if (!terminated) {
        std::string still;
        for (int rank = 0; rank < nproc; ++rank)
          if (pids[rank] > 0) {
            still += (still.empty() ? "" : ", ") + std::to_string(rank);
            ::kill(pids[rank], SIGTERM);
          }
        if (!forwarded)
          std::fprintf(stderr,
                       "error: stopping rank(s) %s, still running %g s "
                       "after the failure\n",
                       still.c_str(), timeoutSeconds);
        terminated = true;
        stopBy = Clock::now() + std::chrono::seconds(5);
      } else if (!killed) {
        for (pid_t other : pids)
          if (other > 0)
            ::kill(other, SIGKILL);
        killed = true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  sigaction(SIGINT, &oldInt, nullptr);
  sigaction(SIGTERM, &oldTerm, nullptr);
  return result;
}
