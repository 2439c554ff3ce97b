//===- ShardedCheckpoint.h - one file per rank and a manifest ---*- C++ -*-===//
//
// `train --save-shards DIR` on a partitioned step: every rank writes its
// blocks to DIR/rank-R.safetensors (local shapes), and rank 0, once every
// rank has written, DIR/manifest.json: the mesh, and each tensor's dtype,
// global shape and sharding (the mesh axes of each dimension, major
// first). `--resume DIR` puts the blocks of the rank files back together
// into the whole values, so a run resumes on the same mesh (each rank
// reading its own file), on another, or on one device.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_SRC_SHARDEDCHECKPOINT_H
#define TGC_RUNTIME_SRC_SHARDEDCHECKPOINT_H

#include "Checkpoint.h"

#include <string>
#include <vector>

namespace tgc::rt {

/// The file of rank `rank` in a sharded checkpoint directory.
std::string getShardPath(const std::string &directory, int rank);

/// Writes this rank's `blocks` (indexed like info.arguments, local shapes)
/// of the arguments whose role is in `roles`. Creates `directory` if
/// needed.
bool saveShard(const std::string &directory, const StepInfo &info, int rank,
               const ArgumentBytes &blocks, const std::vector<ArgRole> &roles,
               int64_t steps, std::string &error);

/// Writes the manifest (rank 0, after every rank's saveShard succeeded).
bool saveManifest(const std::string &directory, const StepInfo &info,
                  const std::vector<ArgRole> &roles, int64_t steps,
                  std::string &error);

/// Whether `path` is a directory holding a manifest.json.
bool isShardedCheckpoint(const std::string &path);

/// Reads the values of the arguments whose role is in `roles` from the
/// sharded checkpoint `directory`, for a step whose arguments (`global`)
/// have their global shapes: each must be in the manifest with its dtype
/// and shape, and every rank file read must hold its block. `arguments`
/// gets whole values; or, for rank `rank` of the partitioned step `local`,
/// this rank's blocks (local shapes, as its device holds them). Each value
/// is read, converted and checked only where the saved blocks meet what
/// `arguments` gets, from one copy of the saved blocks (this rank's own on
/// the saved mesh), and a rank file none of them is in is not opened: on
/// the saved mesh a rank reads its own file alone, on another one the
/// files its blocks overlap, from their mapped bytes. The files are read
/// one at a time. `filesRead` gets how many rank files were read, of
/// `savedRanks`; `ownFile` whether that was this rank's own file alone on
/// the saved mesh.
bool loadShardedCheckpoint(const std::string &directory, const StepInfo &global,
                           ArgumentBytes &arguments,
                           const std::vector<ArgRole> &roles, int64_t &steps,
                           std::string &error, const StepInfo *local = nullptr,
                           int rank = -1, int64_t *filesRead = nullptr,
                           int64_t *savedRanks = nullptr,
                           bool *ownFile = nullptr);

} // namespace tgc::rt

#endif // TGC_RUNTIME_SRC_SHARDEDCHECKPOINT_H
