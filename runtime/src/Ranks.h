//===- Ranks.h - a partitioned step's rank among its devices ----*- C++ -*-===//
//
// A partitioned step runs as one process per device of its mesh. This is
// what the trainer needs of that: the process's place on the mesh, a group
// per set of axes its collectives run along (Comm.h's engines underneath),
// and the blocks of the global values each rank holds (tg.sharding's
// layout, as the interpreter's simulated ranks cut them).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_SRC_RANKS_H
#define TGC_RUNTIME_SRC_RANKS_H

#include "Comm.h"

#include "tgc/runtime/Runtime.h"

#include <memory>
#include <string>
#include <vector>

namespace tgc::rt {

struct Communication {
  std::unique_ptr<comm::World> world;
  /// One per StepInfo::mesh.groups entry: this rank's group along those
  /// axes.
  std::vector<std::unique_ptr<comm::Group>> groups;
  /// This rank's coordinates on the mesh's axes.
  std::vector<int64_t> coordinates;
  /// A pipelined step's axis and its group along it (MeshInfo), or -1.
  int pipelineAxis = -1, pipelineGroup = -1;
};

namespace ranks {

/// The devices of `mesh` (1 for a step of one device).
int64_t getDeviceCount(const MeshInfo &mesh);
/// "dp=2,tp=2".
std::string describe(const MeshInfo &mesh);
/// The coordinates of `rank`: row-major over the axes, the last innermost.
std::vector<int64_t> getCoordinates(const MeshInfo &mesh, int64_t rank);

/// Joins the ranks of the launch `env` into `info`'s mesh: checks that the
/// launch has as many ranks as the mesh has devices and that every rank
/// runs the same compiled step, then makes the groups. Null with `error`
/// set otherwise.
std::unique_ptr<Communication> connect(const StepInfo &info,
                                       const comm::LaunchEnv &env,
                                       double timeoutSeconds,
                                       std::string &error);

/// This rank's group (at coordinates `at`) for each of `mesh`'s groups,
/// appended to `groups`. Collective: every rank of `world` calls it, in the
/// same order. False with `error` when a split fails.
bool makeGroups(comm::World &world, const MeshInfo &mesh,
                const std::vector<int64_t> &at,
                std::vector<std::unique_ptr<comm::Group>> &groups,
                std::string &error);

/// `arg` with its global shape: the value the user holds.
ArgumentInfo getGlobalArgument(const ArgumentInfo &arg);

/// The block of the global value `global` of `arg` that the device at
/// `coordinates` holds.
std::vector<char> takeBlock(const ArgumentInfo &arg, const MeshInfo &mesh,
                            const std::vector<int64_t> &coordinates,
                            const std::vector<char> &global);
/// A contiguous run of a block in the global value: `count` elements from
/// element `local` of the block and element `global` of the whole.
struct BlockRun {
  int64_t local, global, count;
};
/// The runs of the block of `arg` at `coordinates`, in the whole value's
/// order (ZeRO's padding, past the global shape, in none).
std::vector<BlockRun> getBlockRuns(const ArgumentInfo &arg,
                                   const MeshInfo &mesh,
                                   const std::vector<int64_t> &coordinates);
/// Which rows of `rowElements` elements of the global value of `arg` the
/// block at `coordinates` holds any element of (a flag per row).
std::vector<bool> getHeldRows(const ArgumentInfo &arg, const MeshInfo &mesh,
                              const std::vector<int64_t> &coordinates,
                              int64_t rowElements);
/// Whether the rank at `coordinates` holds `arg` (in a pipelined step, the
/// ranks of the stages that read it; every rank otherwise).
bool holdsArgument(const ArgumentInfo &arg, const MeshInfo &mesh,
                   const std::vector<int64_t> &coordinates);

/// Whether the rank at `coordinates` writes `arg` to a sharded checkpoint:
/// when it holds it, or (an argument no stage reads, which keeps its first
/// value) when it is at pipeline coordinate 0.
bool savesArgument(const ArgumentInfo &arg, const MeshInfo &mesh,
                   const std::vector<int64_t> &coordinates);
/// The pipeline coordinates whose ranks write `arg` (bit d for coordinate
/// d).
uint64_t getSavingDevices(const ArgumentInfo &arg);

/// Puts that block back into `global`.
void putBlock(const ArgumentInfo &arg, const MeshInfo &mesh,
              const std::vector<int64_t> &coordinates,
              const std::vector<char> &block, std::vector<char> &global);

} // namespace ranks
} // namespace tgc::rt

#endif // TGC_RUNTIME_SRC_RANKS_H
