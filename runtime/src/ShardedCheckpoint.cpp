//===- ShardedCheckpoint.cpp - one file per rank and a manifest -----------===//

#include "ShardedCheckpoint.h"

#include "Elements.h"
#include "Ranks.h"

#include "tgc/runtime/Safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sys/stat.h>

using namespace tgc::rt;

namespace {

/// `object`'s member `key`, or null when `object` is no object or has none
/// (nlohmann's const operator[] asserts that the key is there).
const nlohmann::json &member(const nlohmann::json &object, const char *key) {
  static const nlohmann::json none;
  if (!object.is_object())
    return none;
  auto it = object.find(key);
  return it == object.end() ? none : *it;
}

bool hasRole(const std::vector<ArgRole> &roles, ArgRole role) {
  return std::find(roles.begin(), roles.end(), role) != roles.end();
}

std::string getManifestPath(const std::string &directory) {
  return directory + "/manifest.json";
}

const char *kFormat = "tgc-sharded-checkpoint";

} // namespace

std::string tgc::rt::getShardPath(const std::string &directory, int rank) {
  return directory + "/rank-" + std::to_string(rank) + ".safetensors";
}

bool tgc::rt::saveShard(const std::string &directory, const StepInfo &info,
                        int rank, const ArgumentBytes &blocks,
                        const std::vector<ArgRole> &roles, int64_t steps,
                        std::string &error) {
  struct stat status;
  if (::mkdir(directory.c_str(), 0777) != 0 &&
      !(::stat(directory.c_str(), &status) == 0 && S_ISDIR(status.st_mode))) {
    error = "cannot create the checkpoint directory '" + directory + "'";
    return false;
  }
  // In a pipelined step a rank writes the values its stages hold.
  std::vector<ArgumentInfo> written;
  ArgumentBytes writtenBlocks;
  std::vector<int64_t> coordinates = ranks::getCoordinates(info.mesh, rank);
  for (int i = 0; i < info.numArguments; ++i)
    if (ranks::savesArgument(info.arguments[i], info.mesh, coordinates)) {
      written.push_back(info.arguments[i]);
      writtenBlocks.push_back(blocks[i]);
    }
  StepInfo held = info;
  held.arguments = written.data();
  held.numArguments = static_cast<int>(written.size());
  return saveCheckpoint(getShardPath(directory, rank), held, writtenBlocks,
                        roles, steps, error,
                        {{"tgc.rank", std::to_string(rank)},
                         {"tgc.mesh", ranks::describe(info.mesh)}});
}

bool tgc::rt::saveManifest(const std::string &directory, const StepInfo &info,
                           const std::vector<ArgRole> &roles, int64_t steps,
                           std::string &error) {
  using nlohmann::ordered_json;
  ordered_json manifest;
  manifest["format"] = kFormat;
  manifest["version"] = 1;
  manifest["steps"] = steps;
  ordered_json axes = ordered_json::array();
  for (int a = 0; a < info.mesh.numAxes; ++a)
    axes.push_back(
        {{"name", info.mesh.axisNames[a]}, {"size", info.mesh.axisSizes[a]}});
  manifest["mesh"] = axes;
  manifest["ranks"] = ranks::getDeviceCount(info.mesh);
  bool pipelined = info.mesh.pipelineAxis >= 0;
  if (pipelined)
    manifest["pipeline_axis"] = info.mesh.axisNames[info.mesh.pipelineAxis];
  ordered_json tensors = ordered_json::object();
  for (int i = 0; i < info.numArguments; ++i) {
    const ArgumentInfo &arg = info.arguments[i];
    if (!hasRole(roles, arg.init.role))
      continue;
    ordered_json sharding = ordered_json::array();
    for (int d = 0; d < arg.rank; ++d) {
      ordered_json dimension = ordered_json::array();
      for (int k = 0; k < 4 && arg.dimAxes[d][k] >= 0; ++k)
        dimension.push_back(info.mesh.axisNames[arg.dimAxes[d][k]]);
      sharding.push_back(dimension);
    }
    tensors[arg.name] = {
        {"dtype", getSafetensorsDType(arg.dtype)},
        {"global_shape",
         std::vector<int64_t>(arg.globalShape, arg.globalShape + arg.rank)},
        {"sharding", sharding}};
    // A pipelined step: the pipeline coordinates whose rank files hold it.
    if (pipelined) {
      ordered_json holders = ordered_json::array();
      for (int64_t d = 0; d < info.mesh.axisSizes[info.mesh.pipelineAxis]; ++d)
        if (d < 64 && (ranks::getSavingDevices(arg) >> d) & 1)
          holders.push_back(d);
      tensors[arg.name]["pipeline_holders"] = holders;
    }
  }
  manifest["tensors"] = tensors;
  return writeFileAtomically(getManifestPath(directory),
                             manifest.dump(2) + "\n", error);
}

bool tgc::rt::isShardedCheckpoint(const std::string &path) {
  struct stat status;
  return ::stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode) &&
         ::stat(getManifestPath(path).c_str(), &status) == 0;
}

bool tgc::rt::loadShardedCheckpoint(
    const std::string &directory, const StepInfo &global,
    ArgumentBytes &arguments, const std::vector<ArgRole> &roles, int64_t &steps,
    std::string &error, const StepInfo *local, int rank, int64_t *filesRead,
    int64_t *savedRanks, bool *ownFile) {
  std::string manifestPath = getManifestPath(directory);
  nlohmann::json manifest;
  {
    std::ifstream in(manifestPath);
    manifest = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  }
  auto bad = [&](const std::string &why) {
    error = "'" + manifestPath + "' is not a tgc sharded checkpoint: " + why;
    return false;
  };
  // A member's text, "" when it is missing or not a string.
  auto text = [](const nlohmann::json &object, const char *key) {
    const nlohmann::json &found = member(object, key);
    return found.is_string() ? found.get<std::string>() : std::string();
  };
  if (!manifest.is_object() || text(manifest, "format") != kFormat)
    return bad("no \"format\": \"" + std::string(kFormat) + "\"");
  if (!manifest["steps"].is_number_integer() || !manifest["mesh"].is_array() ||
      manifest["mesh"].size() > 8 || !manifest["ranks"].is_number_integer() ||
      !manifest["tensors"].is_object())
    return bad("it needs integer \"steps\" and \"ranks\", a \"mesh\" of at "
               "most 8 axes and \"tensors\"");
  // The saved mesh, as the step's description of one.
  MeshInfo mesh{};
  std::vector<std::string> axisNames;
  for (const nlohmann::json &axis : manifest["mesh"]) {
    const nlohmann::json &size = member(axis, "size");
    if (!member(axis, "name").is_string() || !size.is_number_integer() ||
        size.get<int64_t>() < 1 || size.get<int64_t>() > (1 << 20))
      return bad("a mesh axis needs a \"name\" and a \"size\" in [1, 2^20]");
    axisNames.push_back(text(axis, "name"));
    mesh.axisSizes[mesh.numAxes++] = size.get<int64_t>();
  }
  for (int a = 0; a < mesh.numAxes; ++a)
    mesh.axisNames[a] = axisNames[a].c_str();
  // At most 2^20 devices: the product of the axes stays far from
  // overflowing, and a list per device stays small.
  int64_t devices = 1;
  for (int a = 0; a < mesh.numAxes; ++a)
    if ((devices *= mesh.axisSizes[a]) > (int64_t(1) << 20))
      return bad("its mesh has more than 2^20 devices");
  if (manifest["ranks"].get<int64_t>() != devices)
    return bad("\"ranks\" is not the mesh's device count");
  // A pipelined step's checkpoint: each tensor is in the files of the
  // ranks at the pipeline coordinates it lists.
  int pipelineAxis = -1;
  if (manifest.contains("pipeline_axis")) {
    auto found = std::find(axisNames.begin(), axisNames.end(),
                           text(manifest, "pipeline_axis"));
    if (found == axisNames.end())
      return bad("its \"pipeline_axis\" is not an axis of its mesh");
    pipelineAxis = static_cast<int>(found - axisNames.begin());
  }
  // Whether the file of rank r holds a tensor the ranks at pipeline
  // coordinates `holders` (bit d for coordinate d) wrote.
  auto isInFile = [&](uint64_t holders, int64_t r) {
    return pipelineAxis < 0 ||
           (holders >> ranks::getCoordinates(mesh, r)[pipelineAxis]) & 1;
  };
  std::vector<int64_t> here = local && rank >= 0
                                  ? ranks::getCoordinates(local->mesh, rank)
                                  : std::vector<int64_t>();

  // The step's own mesh, when it runs on the saved one: then a tensor
  // saved in the layout the step holds it in needs only this rank's file.
  bool sameMesh = local && rank >= 0 && local->mesh.numAxes == mesh.numAxes;
  for (int a = 0; sameMesh && a < mesh.numAxes; ++a)
    sameMesh = local->mesh.axisSizes[a] == mesh.axisSizes[a] &&
               axisNames[a] == local->mesh.axisNames[a];

  // Each tensor's saved layout, checked before any rank file is read.
  struct Saved {
    int index;
    ArgumentInfo layout;
    std::vector<int64_t> blockShape;
    int64_t blockBytes;
    /// The pipeline coordinates whose rank files hold it.
    uint64_t holders;
  };
  std::vector<Saved> tensors;
  for (int i = 0; i < global.numArguments; ++i) {
    const ArgumentInfo &arg = global.arguments[i];
    if (!hasRole(roles, arg.init.role))
      continue;
    const nlohmann::json &tensor = manifest["tensors"][arg.name];
    if (!tensor.is_object())
      return bad(std::string("it has no tensor '") + arg.name + "'");
    // A rank of a pipelined step that does not hold it reads nothing of it.
    if (!here.empty() &&
        !ranks::holdsArgument(local->arguments[i], local->mesh, here))
      continue;
    uint64_t holders = ~uint64_t(0);
    if (pipelineAxis >= 0) {
      const nlohmann::json &listed = member(tensor, "pipeline_holders");
      if (!listed.is_array())
        return bad(std::string("tensor '") + arg.name +
                   "' needs \"pipeline_holders\", the pipeline coordinates "
                   "whose files hold it");
      holders = 0;
      for (const nlohmann::json &device : listed) {
        if (!device.is_number_integer() || device.get<int64_t>() < 0 ||
            device.get<int64_t>() >=
                std::min<int64_t>(64, mesh.axisSizes[pipelineAxis]))
          return bad(std::string("the \"pipeline_holders\" of '") + arg.name +
                     "' name a coordinate off the pipeline axis");
        holders |= uint64_t(1) << device.get<int64_t>();
      }
      if (!holders)
        return bad(std::string("no rank file holds '") + arg.name + "'");
    }
    std::vector<int64_t> shape(arg.shape, arg.shape + arg.rank);
    std::vector<int64_t> savedShape;
    const nlohmann::json &globalShape = member(tensor, "global_shape");
    const nlohmann::json &sharding = member(tensor, "sharding");
    if (globalShape.is_array())
      for (const nlohmann::json &size : globalShape)
        savedShape.push_back(size.is_number_integer() ? size.get<int64_t>()
                                                      : -1);
    // A parameter saved in a split view of its shape (tensor parallelism's
    // fused projections) is the same bytes once whole.
    bool view = savedShape != shape && isSplitView(savedShape, shape);
    if (text(tensor, "dtype") != getSafetensorsDType(arg.dtype) ||
        (savedShape != shape && !view)) {
      const nlohmann::json &dtype = member(tensor, "dtype");
      error = "'" + manifestPath + "': tensor '" + arg.name + "' is " +
              (dtype.is_string() ? dtype.get<std::string>() : dtype.dump()) +
              " " + globalShape.dump() + "; the step takes " +
              getSafetensorsDType(arg.dtype) + " " +
              nlohmann::json(shape).dump();
      return false;
    }
    if (!sharding.is_array() || sharding.size() != savedShape.size())
      return bad(std::string("the \"sharding\" of '") + arg.name +
                 "' needs a list of mesh axes per dimension");
    // The saved block layout of this tensor.
    ArgumentInfo saved = arg;
    saved.rank = static_cast<int>(savedShape.size());
    if (saved.rank > 8)
      return bad(std::string("'") + arg.name + "' has more than 8 dimensions");
    for (int d = 0; d < saved.rank; ++d) {
      saved.globalShape[d] = savedShape[d];
      const nlohmann::json &axes = sharding[size_t(d)];
      if (!axes.is_array() || axes.size() > 4)
        return bad(std::string("the sharding of '") + arg.name +
                   "' needs a list of at most 4 axes per dimension");
      int64_t blocks = 1;
      for (int k = 0; k < 4; ++k) {
        saved.dimAxes[d][k] = -1;
        if (k >= static_cast<int>(axes.size()))
          continue;
        auto found = std::find(axisNames.begin(), axisNames.end(),
                               axes[k].is_string() ? axes[k].get<std::string>()
                                                   : std::string());
        if (found == axisNames.end())
          return bad(std::string("the sharding of '") + arg.name +
                     "' names an axis the mesh does not have");
        saved.dimAxes[d][k] = static_cast<int8_t>(found - axisNames.begin());
        blocks *= mesh.axisSizes[saved.dimAxes[d][k]];
      }
      if (savedShape[d] < 1)
        return bad(std::string("'") + arg.name + "' has an empty dimension");
      // Blocks that do not divide the dimension end in ZeRO's padding.
      saved.shape[d] = (savedShape[d] + blocks - 1) / blocks;
    }
    int64_t blockBytes = static_cast<int64_t>(getDTypeBytes(arg.dtype));
    for (int d = 0; d < saved.rank; ++d)
      blockBytes *= saved.shape[d];
    tensors.push_back(
        {i, saved, std::vector<int64_t>(saved.shape, saved.shape + saved.rank),
         blockBytes, holders});
  }

  // This rank's blocks (the whole values on one device) are read from the
  // saved blocks that meet them: for each tensor, the rank files of one
  // copy of its saved blocks (on the saved axes its layout does not split,
  // this rank's own coordinates on the saved mesh when its file holds the
  // tensor, else the first file that does), each read only where it meets
  // this rank's runs. On the saved mesh that is this rank's own file; a
  // file no tensor needs is not opened.
  struct Piece {
    size_t tensor;
    // Elements of the saved block, of the target, and the count.
    int64_t from, to, count, global;
  };
  std::vector<std::vector<Piece>> pieces(devices);
  for (size_t t = 0; t < tensors.size(); ++t) {
    const Saved &tensor = tensors[t];
    int i = tensor.index;
    std::vector<ranks::BlockRun> wanted;
    int64_t count = getNumElements(global.arguments[i]);
    if (!here.empty()) {
      wanted = ranks::getBlockRuns(local->arguments[i], local->mesh, here);
      count = getNumElements(local->arguments[i]);
    } else if (count) {
      wanted.push_back({0, 0, count});
    }
    // ZeRO's padding, past the global shape, stays zero.
    arguments[i].assign(count * getDTypeBytes(global.arguments[i].dtype), 0);
    // The saved coordinates of the copy read, on the unsplit axes.
    std::vector<bool> split(mesh.numAxes, false);
    for (int d = 0; d < tensor.layout.rank; ++d)
      for (int k = 0; k < 4 && tensor.layout.dimAxes[d][k] >= 0; ++k)
        split[tensor.layout.dimAxes[d][k]] = true;
    std::vector<int64_t> copy(mesh.numAxes, 0);
    if (sameMesh && isInFile(tensor.holders, rank))
      copy = here;
    else if (pipelineAxis >= 0)
      while (!((tensor.holders >> copy[pipelineAxis]) & 1))
        ++copy[pipelineAxis];
    for (int64_t r = 0; r < devices; ++r) {
      std::vector<int64_t> at = ranks::getCoordinates(mesh, r);
      bool inCopy = true;
      for (int a = 0; a < mesh.numAxes; ++a)
        inCopy = inCopy && (split[a] || at[a] == copy[a]);
      if (!inCopy || !isInFile(tensor.holders, r))
        continue;
      // Both lists of runs are in the whole value's order.
      std::vector<ranks::BlockRun> saved =
          ranks::getBlockRuns(tensor.layout, mesh, at);
      for (size_t a = 0, b = 0; a < saved.size() && b < wanted.size();) {
        int64_t begin = std::max(saved[a].global, wanted[b].global);
        int64_t endA = saved[a].global + saved[a].count,
                endB = wanted[b].global + wanted[b].count;
        int64_t end = std::min(endA, endB);
        if (begin < end)
          pieces[r].push_back({t, saved[a].local + begin - saved[a].global,
                               wanted[b].local + begin - wanted[b].global,
                               end - begin, begin});
        if (endA <= endB)
          ++a;
        else
          ++b;
      }
    }
  }
  if (filesRead)
    *filesRead = 0;
  if (savedRanks)
    *savedRanks = devices;
  if (ownFile)
    *ownFile = sameMesh;
  for (int64_t r = 0; r < devices; ++r) {
    if (pieces[r].empty())
      continue;
    if (filesRead)
      ++*filesRead;
    if (ownFile)
      *ownFile = *ownFile && r == rank;
    std::string path = getShardPath(directory, static_cast<int>(r));
    SafetensorsFile file;
    if (!file.read(path, error))
      return false;
    // Rank files of another save than the manifest's (a save interrupted
    // after some ranks rewrote theirs: --save-every) would mix two steps.
    auto recorded = file.metadata.find("tgc.steps");
    std::string promised = std::to_string(manifest["steps"].get<int64_t>());
    if (recorded == file.metadata.end() || recorded->second != promised) {
      error = "'" + path + "' holds the values after " +
              (recorded == file.metadata.end() ? std::string("an unknown")
                                               : recorded->second) +
              " steps, the manifest after " + promised +
              " (a save that did not finish?)";
      return false;
    }
    for (const Piece &piece : pieces[r]) {
      const Saved &tensor = tensors[piece.tensor];
      const ArgumentInfo &arg = global.arguments[tensor.index];
      const safetensors::EntryView *found = file.find(arg.name);
      // The block as saved: in the file's type (F32 for the formats
      // safetensors has no name for).
      DType fileType = getFileDType(arg.dtype);
      int64_t element = static_cast<int64_t>(getDTypeBytes(arg.dtype)),
              fileElement = static_cast<int64_t>(getDTypeBytes(fileType));
      int64_t fileBytes = tensor.blockBytes / element * fileElement;
      if (!found || found->dtype != getSafetensorsDType(arg.dtype) ||
          found->shape != tensor.blockShape ||
          static_cast<int64_t>(found->size) != fileBytes) {
        error = "'" + path + "' has no " + getSafetensorsDType(arg.dtype) +
                " block " + nlohmann::json(tensor.blockShape).dump() + " of '" +
                arg.name + "', which the manifest promises";
        return false;
      }
      char *out = arguments[tensor.index].data() + piece.to * element;
      if (!convertElements(found->data + piece.from * fileElement, piece.count,
                           fileType, arg.dtype, out, error, piece.global)) {
        error = "'" + path + "': tensor '" + arg.name + "' " + error;
        return false;
      }
      if (!checkValues(path, out, piece.count, piece.global, arg, error))
        return false;
    }
  }
  steps = manifest["steps"].get<int64_t>();
  return true;
}
