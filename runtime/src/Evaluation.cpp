//===- Evaluation.cpp - train --val-data: the validation loss -------------===//

#include "Evaluation.h"

#include "Backend.h"
#include "Elements.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>

using namespace tgc::rt;

Evaluation::~Evaluation() {
  backend::release(context.commScratch);
  backend::release(context.fallbackScratch);
  backend::release(context.scratch);
  backend::release(context.arena);
}

/// The bytes of argument `arg`.
static int64_t getBytes(const ArgumentInfo &arg) {
  return getNumElements(arg) * int64_t(getDTypeBytes(arg.dtype));
}

/// Whether two meshes have the same axes.
static bool isSameMesh(const MeshInfo &a, const MeshInfo &b) {
  if (a.numAxes != b.numAxes)
    return false;
  for (int i = 0; i < a.numAxes; ++i)
    if (std::strcmp(a.axisNames[i], b.axisNames[i]) != 0 ||
        a.axisSizes[i] != b.axisSizes[i])
      return false;
  return true;
}

/// Whether the blocks of `a` and `b` (of the same global shape) are cut
/// alike.
static bool isSameLayout(const ArgumentInfo &a, const ArgumentInfo &b) {
  for (int d = 0; d < a.rank; ++d)
    if (a.globalShape[d] != b.globalShape[d] ||
        !std::equal(a.dimAxes[d], a.dimAxes[d] + 4, b.dimAxes[d]))
      return false;
  return true;
}

/// `mesh` without its pipeline axis (itself when it has none).
static MeshInfo withoutPipelineAxis(const MeshInfo &mesh) {
  MeshInfo result = mesh;
  if (mesh.pipelineAxis < 0)
    return result;
  result.numAxes = 0;
  for (int a = 0; a < mesh.numAxes; ++a) {
    if (a == mesh.pipelineAxis)
      continue;
    result.axisNames[result.numAxes] = mesh.axisNames[a];
    result.axisSizes[result.numAxes++] = mesh.axisSizes[a];
  }
  result.pipelineAxis = result.pipelineGroup = -1;
  return result;
}

bool Evaluation::open(const StepInfo &evaluationInfo, StepFunction function,
                      const StepInfo &step, Communication *stepRanks,
                      const std::string &path, unsigned most, uint64_t seed,
                      std::string &error) {
  info = &evaluationInfo;
  evaluate = function;
  this->stepRanks = stepRanks;
  stepInfo = &step;
  // A pipelined step's evaluation runs whole on the mesh without the
  // pipeline axis, the same on each stage's ranks.
  if (!isSameMesh(info->mesh, withoutPipelineAxis(step.mesh)) ||
      bool(stepRanks) != bool(step.mesh.numAxes) ||
      info->mesh.pipelineAxis >= 0) {
    error = "--val-data: the evaluation was not compiled for the step's mesh "
            "(was evaluate.cu compiled with this step?)";
    return false;
  }
  if (stepRanks && info->mesh.numAxes) {
    communication = std::make_unique<Communication>();
    // Its groups: the step's coordinates without the pipeline axis, which
    // is appended last to the mesh they are split on, so that each stage's
    // ranks form groups of their own.
    MeshInfo grouped = info->mesh;
    std::vector<int64_t> at;
    for (int a = 0; a < step.mesh.numAxes; ++a)
      if (a != step.mesh.pipelineAxis)
        at.push_back(stepRanks->coordinates[a]);
    communication->coordinates = at;
    if (step.mesh.pipelineAxis >= 0) {
      grouped.axisNames[grouped.numAxes] =
          step.mesh.axisNames[step.mesh.pipelineAxis];
      grouped.axisSizes[grouped.numAxes++] =
          step.mesh.axisSizes[step.mesh.pipelineAxis];
      at.push_back(stepRanks->coordinates[step.mesh.pipelineAxis]);
    }
    if (!ranks::makeGroups(*stepRanks->world, grouped, at,
                           communication->groups, error)) {
      error = "the evaluation's groups: " + error;
      return false;
    }
    context.comm = communication.get();
  }
  for (int r = 0; r < info->numResults; ++r)
    if (info->results[r].isLoss)
      lossIndex = r;
  if (lossIndex < 0) {
    error = "--val-data: the evaluation has no 'loss' result";
    return false;
  }
  // What the data feeds.
  fromTokens = !isDatasetPath(path);
  std::vector<bool> fed(info->numArguments, false);
  if (fromTokens) {
    if (info->copyIds < 0 || info->copyLabels < 0) {
      error = "--val-data " + path +
              ": a token file needs a token-id 'input' read by tg.embedding "
              "and labels of the same type; this step has none (give "
              "FILE.safetensors of examples)";
      return false;
    }
    ArgumentInfo ids = ranks::getGlobalArgument(info->arguments[info->copyIds]);
    seq = ids.rank ? ids.shape[ids.rank - 1] : 1;
    rows = seq ? getNumElements(ids) / seq : 0;
    if (!tokens.open(path, seq, info->vocabulary, error)) {
      error = "--val-data: " + error;
      return false;
    }
    batches = unsigned(std::min<int64_t>(
        most, countEvaluationBatches(tokens.getTokens(), rows, seq)));
    fed[info->copyIds] = fed[info->copyLabels] = true;
  } else {
    std::vector<DatasetArgument> arguments;
    for (int i = 0; i < info->numArguments; ++i)
      arguments.push_back(
          getDatasetArgument(ranks::getGlobalArgument(info->arguments[i])));
    if (!examples.open(path, arguments, error)) {
      error = "--val-data: " + error;
      return false;
    }
    const Dataset &dataset = examples.getDataset();
    batches = unsigned(std::min<int64_t>(
        most, dataset.batch ? dataset.examples / dataset.batch : 0));
    for (const DatasetTensor &tensor : dataset.tensors)
      fed[tensor.argument] = true;
  }
  if (batches == 0) {
    error = "--val-data " + path +
            ": the validation data holds no whole batch of the evaluation";
    return false;
  }

  std::string why;
  context.arena = static_cast<char *>(backend::allocate(info->arenaBytes, why));
  context.scratch =
      context.arena
          ? static_cast<char *>(backend::allocate(info->scratchBytes, why))
          : nullptr;
  if (!context.arena || !context.scratch) {
    error = "the evaluation's arena of " + std::to_string(info->arenaBytes) +
            " bytes and scratch of " + std::to_string(info->scratchBytes) +
            " bytes: " + why;
    return false;
  }
  context.fallbackScratchBytes = info->fallbackScratchBytes;
  context.commScratch =
      static_cast<char *>(backend::allocate(info->commScratchBytes, why));
  if (!context.commScratch) {
    error = "the evaluation's collectives' staging of " +
            std::to_string(info->commScratchBytes) + " bytes: " + why;
    return false;
  }
  if (info->gemmWorkspaceOffset >= 0 && info->gemmWorkspaceBytes > 0 &&
      info->gemmWorkspaceOffset + info->gemmWorkspaceBytes <=
          info->arenaBytes) {
    context.gemmWorkspace = context.arena + info->gemmWorkspaceOffset;
    context.gemmWorkspaceBytes = size_t(info->gemmWorkspaceBytes);
  }
  // The step's values it takes, and the start of the others.
  for (int i = 0; i < info->numArguments; ++i) {
    const ArgumentInfo &arg = info->arguments[i];
    if (arg.init.role == ArgRole::Param || arg.init.role == ArgRole::State) {
      const ArgumentInfo *match = nullptr;
      for (int j = 0; j < step.numArguments && !match; ++j)
        if (std::strcmp(step.arguments[j].name, arg.name) == 0 &&
            (step.arguments[j].init.role == ArgRole::Param ||
             step.arguments[j].init.role == ArgRole::State))
          match = &step.arguments[j];
      if (!match || match->dtype != arg.dtype || match->rank != arg.rank ||
          !std::equal(arg.globalShape, arg.globalShape + arg.rank,
                      match->globalShape)) {
        error = std::string("the evaluation's '") + arg.name + "' is " +
                (match ? "not of the type and shape of the step's"
                       : "no parameter or state of the step") +
                " (was evaluate.cu compiled with this step?)";
        return false;
      }
      // The same block: copied on the device. Cut otherwise (ZeRO-3
      // shards the step's parameters, which the evaluation holds whole) or
      // held by some stages' ranks only: gathered from the step's blocks.
      if (step.mesh.pipelineAxis < 0 &&
          std::equal(arg.shape, arg.shape + arg.rank, match->shape) &&
          isSameLayout(arg, *match))
        taken.push_back({arg.offset, match->offset, getBytes(arg)});
      else
        regathered.push_back({i, match});
      continue;
    }
    if (fed[i])
      continue;
    ArgumentInfo global = ranks::getGlobalArgument(arg);
    std::vector<char> value = makeNamedInput(global);
    if (value.empty())
      value = makeArgument(global, unsigned(i), seed);
    upload(i, value);
  }
  return true;
}

void Evaluation::upload(int i, const std::vector<char> &whole) {
  const ArgumentInfo &arg = info->arguments[i];
  if (!communication) {
    backend::toDevice(context.arena + arg.offset, whole.data(), whole.size());
    return;
  }
  std::vector<char> block =
      ranks::takeBlock(arg, info->mesh, communication->coordinates, whole);
  backend::toDevice(context.arena + arg.offset, block.data(), block.size());
}

std::vector<char> Evaluation::gather(const ArgumentInfo &stepArg,
                                     const char *stepArena) {
  int64_t devices = ranks::getDeviceCount(stepMesh());
  size_t bytes = size_t(getBytes(stepArg));
  std::vector<char> blocks(bytes * devices);
  std::string why;
  void *gathered = backend::allocate(blocks.size(), why);
  if (!gathered) {
    std::fprintf(stderr, "error: gathering '%s' for the evaluation: %s\n",
                 stepArg.name, why.c_str());
    std::exit(1);
  }
  // A rank that does not hold it (another stage's) sends what its arena
  // holds there (the arena is as large on every rank), which the others
  // skip.
  std::string what =
      "gathering '" + std::string(stepArg.name) + "' for the evaluation";
  backend::beginCollective();
  stepRanks->world->getWorldGroup().allGather(stepArena + stepArg.offset,
                                              gathered, bytes, what.c_str());
  backend::endCollective(info->numCollectives);
  backend::waitCollective(info->numCollectives);
  backend::toHost(blocks.data(), gathered, blocks.size());
  backend::release(gathered);
  ArgumentInfo global = ranks::getGlobalArgument(stepArg);
  std::vector<char> whole(getBytes(global));
  for (int64_t r = 0; r < devices; ++r) {
    std::vector<int64_t> at = ranks::getCoordinates(stepMesh(), r);
    if (ranks::holdsArgument(stepArg, stepMesh(), at))
      ranks::putBlock(stepArg, stepMesh(), at,
                      std::vector<char>(blocks.begin() + r * bytes,
                                        blocks.begin() + (r + 1) * bytes),
                      whole);
  }
  return whole;
}

double Evaluation::measure(const char *stepArena) {
  for (const Taken &value : taken)
    backend::onDevice(context.arena + value.offset,
                      stepArena + value.stepOffset, size_t(value.bytes));
  for (auto [i, stepArg] : regathered)
    upload(i, gather(*stepArg, stepArena));
  double sum = 0;
  for (unsigned b = 0; b < batches; ++b) {
    if (fromTokens) {
      std::vector<int64_t> ids(rows * seq), labels(rows * seq);
      fillEvaluationWindows(tokens.getTokens(), ids.data(), labels.data(), rows,
                            seq, b, info->copyLabelsShifted);
      for (auto [i, values] : {std::make_pair(info->copyIds, &ids),
                               std::make_pair(info->copyLabels, &labels)})
        upload(i, toElements(*values, info->arguments[i].dtype));
    } else {
      const Dataset &dataset = examples.getDataset();
      std::vector<int64_t> examplesOfBatch(dataset.batch);
      std::iota(examplesOfBatch.begin(), examplesOfBatch.end(),
                int64_t(b) * dataset.batch);
      for (const DatasetTensor &tensor : dataset.tensors)
        upload(int(tensor.argument),
               gatherElements(tensor, examplesOfBatch,
                              info->arguments[tensor.argument].dtype));
    }
    backend::runStep(evaluate, context, /*mayCapture=*/false);
    backend::synchronize("the evaluation");
    const ResultInfo &loss = info->results[lossIndex];
    std::vector<char> bytes(loss.bytes);
    backend::toHost(bytes.data(), context.arena + loss.offset, bytes.size());
    sum += loadDouble(bytes.data(), loss.dtype, 0);
  }
  return sum / batches;
}
