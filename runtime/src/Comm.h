//===- Comm.h - ranks, their launch, and collectives among them -*- C++ -*-===//
//
// One process per device. The launch is torchrun's environment (RANK,
// WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), or
// srun's (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID), Open MPI's
// (OMPI_COMM_WORLD_RANK, ...) or MPICH's (PMI_RANK, PMI_SIZE, ...), with
// MASTER_ADDR/MASTER_PORT for the store.
// Rank 0 serves a small TCP key-value store at MASTER_ADDR:MASTER_PORT
// (PyTorch's TCPStore, in spirit); the collectives are an existing engine
// behind one interface: Gloo over TCP on the host target (CommGloo.cpp),
// NCCL on the CUDA target (CommNccl.cu), its unique id shared through the
// store. Every wait (the store, the bootstrap, each collective) has a
// timeout, so a missing or dead rank is an error on every survivor, never
// a hang.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_SRC_COMM_H
#define TGC_RUNTIME_SRC_COMM_H

#include "tgc/runtime/Runtime.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tgc::rt::comm {

/// Where this process stands in the launch.
struct LaunchEnv {
  int rank = 0, worldSize = 1;
  int localRank = 0, localWorldSize = 1;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 0;
  /// "torchrun", "slurm", "mpi", or "single" (no launch variables: one
  /// process, no store needed).
  std::string launcher = "single";
};

/// Reads the launch variables. Returns nullopt with `error` set when they
/// are inconsistent (RANK without WORLD_SIZE, RANK >= WORLD_SIZE, a
/// non-numeric value, a world size above 1 without MASTER_PORT...).
std::optional<LaunchEnv> readLaunchEnv(std::string &error);

/// The seconds every wait (the store, the bootstrap, each collective) may
/// take: TGC_COMM_TIMEOUT, 300 by default. A value that is not a number
/// of seconds above 0 is an error that exits.
double getCommTimeout();

/// The ranks of one group (the whole world, or the devices along some mesh
/// axes) and the collectives among them. Buffers are the target's device
/// memory (host memory on the host target). `in` and `out` may be the same
/// buffer for allReduce. On the host a call returns with its result in
/// `out`; on the GPU it is enqueued on the communication stream
/// (currentCommStream(), ordered against the kernels by the runtime's
/// events) and a watchdog follows it. On failure (a
/// peer gone, the timeout) a call prints "error: rank R: <what> failed:
/// <cause>" and exits 1.
class Group {
public:
  virtual ~Group() = default;
  virtual int getRank() const = 0;
  virtual int getSize() const = 0;
  /// out[i] = op over the ranks of in[i], for `count` elements of `type`
  /// (F32, F64, BF16, F16, I32, I64; BF16/F16 summed in f32 on the host).
  /// Average is the sum divided by the group's size.
  virtual void allReduce(const void *in, void *out, size_t count, DType type,
                         ReduceOp op, const char *what) = 0;
  /// out = the ranks' `in` (`bytes` each) one after another, rank order.
  virtual void allGather(const void *in, void *out, size_t bytes,
                         const char *what) = 0;
  /// `in` holds one block of `count` elements per rank, rank order; out =
  /// op over the ranks of block getRank() (ncclReduceScatter).
  virtual void reduceScatter(const void *in, void *out, size_t count,
                             DType type, ReduceOp op, const char *what) = 0;
  /// `in` and `out` hold one block of `bytes` per rank, rank order: block r
  /// of `in` goes to rank r, and block r of `out` comes from rank r
  /// (ncclSend/ncclRecv pairs in one group; gloo::alltoall).
  virtual void allToAll(const void *in, void *out, size_t bytes,
                        const char *what) = 0;
  /// `buffer` (`bytes`) on every rank = group rank `root`'s.
  virtual void broadcast(void *buffer, size_t bytes, int root,
                         const char *what) = 0;
  /// Point to point, between this rank and group rank `peer` (a pipelined
  /// step's stages): a send and a receive match by their `tag`. send takes
  /// a copy of `in` and returns; finishSends waits until every send since
  /// the last has been delivered. recv returns once `out` holds the value.
  /// The host target's engine (Gloo); the CUDA target has none yet.
  virtual void send(const void *in, size_t bytes, int peer, uint32_t tag,
                    const char *what) = 0;
  virtual void recv(void *out, size_t bytes, int peer, uint32_t tag,
                    const char *what) = 0;
  virtual void finishSends(const char *what) = 0;
};

/// The world: all ranks, connected through the store.
class World {
public:
  virtual ~World() = default;

  /// Connects the ranks of `env` (a world of one needs no store). Fails
  /// with `error` naming the cause (the port in use at the master, no
  /// master within the timeout, a rank that did not join). On the CUDA
  /// target it selects the rank's GPU (LOCAL_RANK's), so it must come
  /// before anything that touches the GPU (backend::describe, allocate).
  static std::unique_ptr<World>
  create(const LaunchEnv &env, double timeoutSeconds, std::string &error);

  virtual int getRank() const = 0;
  virtual int getSize() const = 0;
  virtual Group &getWorldGroup() = 0;

  /// The group of the ranks that share this rank's `color`, ordered by
  /// `key` (MPI_Comm_split / ncclCommSplit). Collective: every rank of the
  /// world calls it, in the same order.
  virtual std::unique_ptr<Group> split(int color, int key,
                                       std::string &error) = 0;

  /// Checks that every rank passes the same `fingerprint` (e.g. a hash of
  /// the compiled step and its mesh). Returns false with `error` naming a
  /// rank that differs, on every rank.
  virtual bool checkSame(const std::string &fingerprint,
                         std::string &error) = 0;

  /// At the end of a run that succeeded on this rank: rank 0 waits for
  /// every rank to reach its end (its store must outlive their last use
  /// of it), then every rank leaves the store. A world destroyed without
  /// finish ends on an error: the store lists its rank gone at once, so
  /// that the others' waits fail naming it.
  virtual void finish() = 0;
};

/// `train --nproc N`: starts N copies of this program (argv without
/// --nproc) with torchrun's variables for one machine (MASTER_ADDR
/// 127.0.0.1, a free MASTER_PORT), forwards their output, waits for them,
/// and when one fails reports which rank and why (its exit status or
/// signal), stops the others after `timeoutSeconds`, and returns 1.
/// SIGINT or SIGTERM to the launcher is forwarded to the ranks, and it
/// returns 128 + the signal. Returns 0 when every rank exits with 0.
int launchLocal(int nproc, int argc, char **argv, double timeoutSeconds);

} // namespace tgc::rt::comm

#endif // TGC_RUNTIME_SRC_COMM_H
