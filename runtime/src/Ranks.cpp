//===- Ranks.cpp - a partitioned step's rank among its devices ------------===//

#include "Ranks.h"

#include "Backend.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace tgc::rt;

int64_t ranks::getDeviceCount(const MeshInfo &mesh) {
  int64_t count = 1;
  for (int a = 0; a < mesh.numAxes; ++a)
    count *= mesh.axisSizes[a];
  return count;
}

std::string ranks::describe(const MeshInfo &mesh) {
  std::string text;
  for (int a = 0; a < mesh.numAxes; ++a)
    text += (a ? "," : "") + std::string(mesh.axisNames[a]) + "=" +
            std::to_string(mesh.axisSizes[a]);
  return text;
}

std::vector<int64_t> ranks::getCoordinates(const MeshInfo &mesh, int64_t rank) {
  std::vector<int64_t> coordinates(mesh.numAxes);
  for (int a = mesh.numAxes - 1; a >= 0; --a) {
    coordinates[a] = rank % mesh.axisSizes[a];
    rank /= mesh.axisSizes[a];
  }
  return coordinates;
}

std::unique_ptr<Communication> ranks::connect(const StepInfo &info,
                                              const comm::LaunchEnv &env,
                                              double timeoutSeconds,
                                              std::string &error) {
  const MeshInfo &mesh = info.mesh;
  int64_t devices = getDeviceCount(mesh);
  if (env.worldSize != devices) {
    error = "the step was compiled for a mesh of " + std::to_string(devices) +
            " devices (" + describe(mesh) + ") but the launch has " +
            std::to_string(env.worldSize) + " rank(s)";
    if (env.launcher == "single")
      error += ": start one process per device (train --nproc " +
               std::to_string(devices) + ", torchrun, srun or mpirun)";
    return nullptr;
  }
  auto communication = std::make_unique<Communication>();
  communication->world = comm::World::create(env, timeoutSeconds, error);
  if (!communication->world)
    return nullptr;
  if (!communication->world->checkSame(info.fingerprint, error))
    return nullptr;
  communication->coordinates = getCoordinates(mesh, env.rank);
  if (mesh.pipelineAxis >= 0 && mesh.pipelineAxis < mesh.numAxes &&
      mesh.pipelineGroup >= 0 && mesh.pipelineGroup < mesh.numGroups) {
    communication->pipelineAxis = mesh.pipelineAxis;
    communication->pipelineGroup = mesh.pipelineGroup;
  } else if (mesh.pipelineAxis >= 0) {
    error = "the step's pipeline axis or group is not one of its mesh's";
    return nullptr;
  }
  if (!makeGroups(*communication->world, mesh, communication->coordinates,
                  communication->groups, error))
    return nullptr;
  return communication;
}

bool ranks::makeGroups(comm::World &world, const MeshInfo &mesh,
                       const std::vector<int64_t> &at,
                       std::vector<std::unique_ptr<comm::Group>> &groups,
                       std::string &error) {
  // A group: the ranks that share this rank's coordinates on the other
  // axes (its color), ordered by the mixed-radix number of their
  // coordinates on the group's axes, the first major (its key).
  for (int g = 0; g < mesh.numGroups; ++g) {
    const GroupInfo &group = mesh.groups[g];
    std::vector<bool> inGroup(mesh.numAxes, false);
    int64_t key = 0;
    for (int i = 0; i < group.numAxes; ++i) {
      inGroup[group.axes[i]] = true;
      key = key * mesh.axisSizes[group.axes[i]] + at[group.axes[i]];
    }
    int64_t color = 0;
    for (int a = 0; a < mesh.numAxes; ++a)
      if (!inGroup[a])
        color = color * mesh.axisSizes[a] + at[a];
    std::unique_ptr<comm::Group> made =
        world.split(static_cast<int>(color), static_cast<int>(key), error);
    if (!made)
      return false;
    groups.push_back(std::move(made));
  }
  return true;
}

ArgumentInfo ranks::getGlobalArgument(const ArgumentInfo &arg) {
  ArgumentInfo global = arg;
  for (int d = 0; d < arg.rank; ++d)
    global.shape[d] = arg.globalShape[d];
  return global;
}

namespace {

/// Calls `copy(localOffset, globalOffset, bytes)` for each contiguous run
/// of the block of `arg` at `coordinates` (offsets in bytes). Where ZeRO
/// padded the argument (its blocks reach past the global shape), the runs
/// stop at the global shape: the block's padding is not copied.
template <typename Copy>
void forEachRun(const ArgumentInfo &arg, const MeshInfo &mesh,
                const std::vector<int64_t> &coordinates, Copy copy) {
  int rank = arg.rank;
  int64_t element = static_cast<int64_t>(getDTypeBytes(arg.dtype));
  if (rank == 0) {
    copy(0, 0, element);
    return;
  }
  // The block's start in each dimension.
  std::vector<int64_t> start(rank);
  for (int d = 0; d < rank; ++d) {
    int64_t index = 0;
    for (int i = 0; i < 4 && arg.dimAxes[d][i] >= 0; ++i)
      index = index * mesh.axisSizes[arg.dimAxes[d][i]] +
              coordinates[arg.dimAxes[d][i]];
    start[d] = index * arg.shape[d];
  }
  int64_t run = arg.shape[rank - 1] * element;
  int64_t kept = std::max<int64_t>(
                     0, std::min(arg.shape[rank - 1],
                                 arg.globalShape[rank - 1] - start[rank - 1])) *
                 element;
  for (int d = 0; d < rank; ++d)
    if (arg.shape[d] == 0)
      return;
  std::vector<int64_t> index(rank, 0);
  int64_t local = 0;
  while (true) {
    int64_t global = 0;
    bool inside = kept > 0;
    for (int d = 0; d < rank; ++d) {
      inside = inside && start[d] + index[d] < arg.globalShape[d];
      global = global * arg.globalShape[d] + start[d] + index[d];
    }
    if (inside)
      copy(local, global * element, kept);
    local += run;
    int d = rank - 2;
    while (d >= 0 && ++index[d] == arg.shape[d])
      index[d--] = 0;
    if (d < 0)
      return;
  }
}

} // namespace

std::vector<char> ranks::takeBlock(const ArgumentInfo &arg,
                                   const MeshInfo &mesh,
                                   const std::vector<int64_t> &coordinates,
                                   const std::vector<char> &global) {
  int64_t count = 1;
  for (int d = 0; d < arg.rank; ++d)
    count *= arg.shape[d];
  std::vector<char> block(count * getDTypeBytes(arg.dtype));
  forEachRun(arg, mesh, coordinates,
             [&](int64_t local, int64_t at, int64_t bytes) {
               std::memcpy(block.data() + local, global.data() + at, bytes);
             });
  return block;
}

std::vector<ranks::BlockRun>
ranks::getBlockRuns(const ArgumentInfo &arg, const MeshInfo &mesh,
                    const std::vector<int64_t> &coordinates) {
  int64_t element = static_cast<int64_t>(getDTypeBytes(arg.dtype));
  std::vector<BlockRun> runs;
  forEachRun(arg, mesh, coordinates,
             [&](int64_t local, int64_t at, int64_t bytes) {
               runs.push_back({local / element, at / element, bytes / element});
             });
  return runs;
}

std::vector<bool> ranks::getHeldRows(const ArgumentInfo &arg,
                                     const MeshInfo &mesh,
                                     const std::vector<int64_t> &coordinates,
                                     int64_t rowElements) {
  int64_t count = 1;
  for (int d = 0; d < arg.rank; ++d)
    count *= arg.globalShape[d];
  int64_t rows = rowElements ? count / rowElements : 0;
  std::vector<bool> held(rows, false);
  for (const BlockRun &run : getBlockRuns(arg, mesh, coordinates))
    for (int64_t row = run.global / rowElements;
         row <= (run.global + run.count - 1) / rowElements && row < rows; ++row)
      held[row] = true;
  return held;
}

namespace {
/// Whether the rank at `coordinates` is at one of the pipeline `devices`
/// (bit d for coordinate d); every rank is, in a step without stages.
bool isOnDevices(uint64_t devices, const MeshInfo &mesh,
                 const std::vector<int64_t> &coordinates) {
  if (mesh.pipelineAxis < 0 ||
      mesh.pipelineAxis >= static_cast<int>(coordinates.size()))
    return true;
  int64_t device = coordinates[mesh.pipelineAxis];
  return device < 64 && (devices >> device) & 1;
}
} // namespace

bool ranks::holdsArgument(const ArgumentInfo &arg, const MeshInfo &mesh,
                          const std::vector<int64_t> &coordinates) {
  return isOnDevices(arg.pipelineHolders, mesh, coordinates);
}

uint64_t ranks::getSavingDevices(const ArgumentInfo &arg) {
  return arg.pipelineHolders ? arg.pipelineHolders : 1;
}

bool ranks::savesArgument(const ArgumentInfo &arg, const MeshInfo &mesh,
                          const std::vector<int64_t> &coordinates) {
  return isOnDevices(getSavingDevices(arg), mesh, coordinates);
}

void ranks::putBlock(const ArgumentInfo &arg, const MeshInfo &mesh,
                     const std::vector<int64_t> &coordinates,
                     const std::vector<char> &block,
                     std::vector<char> &global) {
  forEachRun(arg, mesh, coordinates,
             [&](int64_t local, int64_t at, int64_t bytes) {
               std::memcpy(global.data() + at, block.data() + local, bytes);
             });
}

namespace {
/// The collective itself, on the communication stream.
void collectOn(comm::Group &group, const CollectiveDesc &desc, const void *in,
               void *out, char *scratch, size_t count, size_t outer,
               size_t bytes, size_t inner, size_t size, size_t rank,
               const char *what);
} // namespace

void tgc::rt::waitCollective(Context &, int id) { backend::waitCollective(id); }

bool tgc::rt::onPipelineDevice(Context &context, int device) {
  if (!context.comm || context.comm->pipelineAxis < 0)
    return device == 0;
  return context.comm->coordinates[context.comm->pipelineAxis] == device;
}

namespace {
/// The group along the pipeline axis (a rank's number in it is its pipeline
/// coordinate), or an exit naming the transfer.
comm::Group &getPipelineGroup(Context &context, const std::string &what) {
  if (!context.comm || context.comm->pipelineGroup < 0) {
    std::fprintf(stderr,
                 "error: %s: a transfer between pipeline stages needs the "
                 "step's ranks\n",
                 what.c_str());
    std::exit(1);
  }
  return *context.comm->groups[context.comm->pipelineGroup];
}

/// A runtime call of the step, for messages.
std::string describeCall(Context &context, const char *kernel,
                         const char *location) {
  return std::string(kernel) + " (" + location + ") in step " +
         std::to_string(context.step);
}
} // namespace

void tgc::rt::sendToStage(Context &context, int peer, const void *in,
                          int64_t bytes, int tag, const char *kernel,
                          const char *location) {
  std::string what = describeCall(context, kernel, location);
  getPipelineGroup(context, what)
      .send(in, size_t(bytes), peer, uint32_t(tag), what.c_str());
  backend::profileMark(kernel);
}

void tgc::rt::recvFromStage(Context &context, int peer, void *out,
                            int64_t bytes, int tag, const char *kernel,
                            const char *location) {
  std::string what = describeCall(context, kernel, location);
  getPipelineGroup(context, what)
      .recv(out, size_t(bytes), peer, uint32_t(tag), what.c_str());
  // On the host the wait for the peer is this mark's time.
  backend::profileMark(kernel);
}

void tgc::rt::collective(Context &context, const CollectiveDesc &desc,
                         const void *in, void *out, int id, const char *kernel,
                         const char *location) {
  std::string what = describeCall(context, kernel, location);
  if (!context.comm || desc.group < 0 ||
      desc.group >= static_cast<int>(context.comm->groups.size())) {
    std::fprintf(stderr, "error: %s: the step's collectives need its ranks\n",
                 what.c_str());
    std::exit(1);
  }
  comm::Group &group = *context.comm->groups[desc.group];
  size_t element = getDTypeBytes(desc.type);
  size_t count = 1, outer = 1;
  for (int d = 0; d < desc.rank; ++d) {
    count *= desc.shape[d];
    if (d < desc.dim)
      outer *= desc.shape[d];
  }
  size_t bytes = count * element;
  // Bytes of one row of the blocks along `dim`: dimensions dim.. of the
  // operand.
  size_t inner = outer ? bytes / outer : 0;
  size_t size = group.getSize(), rank = group.getRank();
  char *scratch = context.commScratch;
  backend::beginCollective();
  collectOn(group, desc, in, out, scratch, count, outer, bytes, inner, size,
            rank, what.c_str());
  backend::endCollective(id);
  backend::profileMark(kernel);
}

namespace {

/// The `size` blocks of `bytes / size` each that `in` holds along a
/// dimension whose rows (`rows` of `rowBytes`) each hold one piece of every
/// block, put one after another in `out` (the layout the engines take).
void separateBlocks(char *out, const void *in, size_t bytes, size_t rowBytes,
                    size_t rows, size_t size) {
  for (size_t r = 0; r < size; ++r)
    backend::copyRows(out + r * (bytes / size), rowBytes / size,
                      static_cast<const char *>(in) + r * (rowBytes / size),
                      rowBytes, rowBytes / size, rows, /*onCommStream=*/true);
}

/// The reverse for `size` blocks of `blockBytes` one after another in `in`,
/// each of `rows` rows of `rowBytes`: row o of `out` is row o of every
/// block, in block order.
void interleaveBlocks(void *out, const char *in, size_t blockBytes,
                      size_t rowBytes, size_t rows, size_t size) {
  for (size_t r = 0; r < size; ++r)
    backend::copyRows(static_cast<char *>(out) + r * rowBytes, size * rowBytes,
                      in + r * blockBytes, rowBytes, rowBytes, rows,
                      /*onCommStream=*/true);
}

void collectOn(comm::Group &group, const CollectiveDesc &desc, const void *in,
               void *out, char *scratch, size_t count, size_t outer,
               size_t bytes, size_t inner, size_t size, size_t rank,
               const char *what) {
  switch (desc.kind) {
  case CollectiveKind::AllReduce:
    group.allReduce(in, out, count, desc.type, desc.op, what);
    return;
  case CollectiveKind::AllGather:
    if (outer == 1) {
      group.allGather(in, out, bytes, what);
      return;
    }
    // Each rank's block lands whole; row o of the result is row o of every
    // block, one after another.
    group.allGather(in, scratch, bytes, what);
    interleaveBlocks(out, scratch, bytes, inner, outer, size);
    return;
  case CollectiveKind::ReduceScatter:
    // The engine's reduce-scatter takes the blocks rank after rank: along
    // a dimension other than the first, they are put so first.
    if (outer != 1) {
      separateBlocks(scratch, in, bytes, inner, outer, size);
      in = scratch;
    }
    group.reduceScatter(in, out, count / size, desc.type, desc.op, what);
    return;
  case CollectiveKind::AllSlice:
    backend::copyRows(out, inner / size,
                      static_cast<const char *>(in) + rank * (inner / size),
                      inner, inner / size, outer, /*onCommStream=*/true);
    return;
  case CollectiveKind::AllToAll: {
    // The engine exchanges blocks that lie one after another: along a
    // dimension other than the first, they are put so first (as for a
    // reduce-scatter), in the first half of the staging.
    size_t block = bytes / size;
    if (block == 0)
      return;
    if (outer != 1) {
      separateBlocks(scratch, in, bytes, inner, outer, size);
      in = scratch;
    }
    // The block from rank r is the operand's shape cut along `dim`; it is
    // row r of every row of the result along `concatDim` (as an
    // all-gather's blocks), received in the second half of the staging
    // unless it lands whole.
    size_t concatOuter = 1;
    for (int d = 0; d < desc.concatDim; ++d)
      concatOuter *= d == desc.dim ? desc.shape[d] / size : desc.shape[d];
    if (concatOuter == 1) {
      group.allToAll(in, out, block, what);
      return;
    }
    char *received = scratch + bytes;
    group.allToAll(in, received, block, what);
    interleaveBlocks(out, received, block, block / concatOuter, concatOuter,
                     size);
    return;
  }
  }
}

} // namespace
