//===- Trainer.cpp - the generated project's `train` ----------------------===//
//
// What `tgc train` does on the interpreter (lib/Training/Trainer.cpp), on
// the generated step: the same initial values and batches for a seed
// (tgc/runtime/Random.h), the same step and seed hypers, the same log
// lines, plus learning-rate schedules, checkpoints and timing.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Checkpoint.h"
#include "Data.h"
#include "Elements.h"
#include "Evaluation.h"
#include "Ranks.h"
#include "ShardedCheckpoint.h"

#include "tgc/runtime/LrSchedule.h"
#include "tgc/runtime/Runtime.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace tgc::rt;

namespace {

struct Flags {
  unsigned steps = 100;
  uint64_t seed = 0;
  std::string data;
  bool hasLr = false;
  double lr = 0;
  /// --warmup, --lr-schedule cosine and --decay-steps (default: the last
  /// step of the run, set once the first step is known).
  LrSchedule schedule;
  bool hasDecaySteps = false, hasMinLr = false;
  unsigned logEvery = 10;
  /// Checkpoints (--save, --save-shards) also after every K steps.
  unsigned saveEvery = 0;
  std::string params, save, saveShards, resume, profile;
  std::string init = "imported";
  unsigned nproc = 0;
  std::string valData;
  unsigned valEvery = 0, valBatches = 20;
  bool hasValFlag = false;
};

void printUsage(const char *program) {
  std::printf(
      "USAGE: %s [options]\n\n"
      "Trains the step tgc generated, as `tgc train` does on the "
      "interpreter.\n\n"
      "  --steps N          steps to run (default 100)\n"
      "  --seed S           seeds the initial values and the data (default 0)\n"
      "  --data D           synthetic-copy (fresh random ids each step, labels "
      "= ids),\n"
      "                     fixed (one random batch), FILE.bin (uint16 "
      "tokens,\n"
      "                     nanoGPT's or llm.c's; mapped, windows prefetched) "
      "or\n"
      "                     FILE.safetensors (examples of the inputs and "
      "labels, by\n"
      "                     name; shuffled each epoch, mapped, prefetched)\n"
      "  --lr X             peak learning rate (default: the step's own)\n"
      "  --warmup N         linear warmup over the first N steps\n"
      "  --lr-schedule S    constant (default) or cosine (after the warmup, "
      "from --lr\n"
      "                     towards 0, reached after --decay-steps)\n"
      "  --min-lr X         the rate the cosine ends at (default 0)\n"
      "  --decay-steps N    the step the cosine ends at, counted from the "
      "start of\n"
      "                     training (default: the last step of this run; "
      "a run to be\n"
      "                     resumed gives the whole training's last)\n"
      "  --log-every K      print the loss every K steps (default 10)\n"
      "  --val-data FILE    held-out data (FILE.bin: consecutive windows; "
      "FILE.safetensors:\n"
      "                     the examples in order): print the loss of the "
      "evaluation\n"
      "                     (no dropout, BatchNorm on its running "
      "statistics)\n"
      "                     after every --val-every steps and the last\n"
      "                     (a project compiled with tgc compile "
      "--evaluation)\n"
      "  --val-every K      (default 0: after the last step only)\n"
      "  --val-batches N    batches a validation loss averages (default "
      "20)\n"
      "  --params FILE      start from these parameters (.safetensors; "
      "in a LoRA\n"
      "                     step the adapters it lacks start from --seed)\n"
      "  --init I           imported (default: an imported model's values, "
      "the\n"
      "                     project's params.safetensors, and --seed for "
      "the rest)\n"
      "                     or random (every parameter from --seed)\n"
      "  --save FILE        write parameters, optimizer state and the step "
      "count\n"
      "  --save-every K     also save those checkpoints after every K "
      "steps (each\n"
      "                     overwriting the last), so that a run that "
      "fails resumes\n"
      "  --save-shards DIR  each rank writes its blocks to "
      "DIR/rank-R.safetensors, rank 0\n"
      "                     the layout to DIR/manifest.json\n"
      "  --resume FILE|DIR  continue from a checkpoint --save or "
      "--save-shards wrote\n"
      "                     (on the saved mesh each rank reads its own "
      "file; on\n"
      "                     another, the parts of the files its blocks "
      "overlap)\n"
      "  --nproc N          start N local processes, one per device of the "
      "step's\n"
      "                     mesh (as torchrun --nproc-per-node N does)\n"
      "  --profile FILE     time every kernel and library call of steps 2.. "
      "(step 1\n"
      "                     alone if it is the only one); print the ten "
      "slowest and\n"
      "                     write them all to FILE (JSON)\n\n"
      "A step compiled with --mesh runs as one process per device: `train "
      "--nproc N`,\nor under torchrun, srun or mpirun (RANK, WORLD_SIZE, "
      "LOCAL_RANK, MASTER_ADDR,\nMASTER_PORT or their SLURM_/OMPI_ "
      "equivalents). Each rank holds only its\nblocks of the parameters "
      "and of the global batch (reading only those of a\nfile); rank 0 "
      "logs and writes --save, the whole values gathered from the\nranks "
      "one tensor at a time. A pipelined step (--mesh pp=P) runs each stage "
      "on\nits ranks and sends the values between stages (the host target "
      "only).\nTGC_COMM_TIMEOUT (seconds, default 300) bounds every wait "
      "for another rank; a rank\nthat dies or ends on an error is named "
      "by the others at once.\n\n"
      "On the GPU, a step of one device is replayed as a CUDA graph from "
      "step 2\n(TGC_CUDA_GRAPH=0: kernel by kernel); TGC_ATTENTION=reference "
      "uses the\nreference attention kernels. TGC_GEMM_EPILOGUE=0 runs "
      "each GEMM's epilogue as\nkernels of its own instead of in the GEMM "
      "call. On the host, the blocks of a launch run on the CPUs the "
      "process\nmay use (shared among the local ranks; TGC_HOST_WORKERS=N: "
      "N workers), and\nTGC_HOST_THREADS=T runs every block as T threads "
      "taking turns at each\n__syncthreads.\n",
      program);
}

/// A decimal integer in [0, 2^64) (no sign, nothing after it).
bool parseUnsigned(const char *text, uint64_t &value) {
  char *end = nullptr;
  if (*text < '0' || *text > '9')
    return false;
  errno = 0;
  value = std::strtoull(text, &end, 10);
  return *end == '\0' && errno != ERANGE;
}

/// Parses the command line; prints the problem and returns false on error.
bool parseFlags(int argc, char **argv, Flags &flags, bool &help) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      help = true;
      return true;
    }
    std::string value;
    size_t equals = flag.find('=');
    if (equals != std::string::npos) {
      value = flag.substr(equals + 1);
      flag = flag.substr(0, equals);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      std::fprintf(stderr, "error: %s needs a value\n", flag.c_str());
      return false;
    }
    uint64_t number = 0;
    auto needUnsigned = [&](auto &field) {
      using Field = std::remove_reference_t<decltype(field)>;
      uint64_t largest = std::numeric_limits<Field>::max();
      if (!parseUnsigned(value.c_str(), number) || number > largest) {
        std::fprintf(stderr,
                     "error: %s takes an integer from 0 to %llu, not '%s'\n",
                     flag.c_str(), static_cast<unsigned long long>(largest),
                     value.c_str());
        return false;
      }
      field = static_cast<Field>(number);
      return true;
    };
    if (flag == "--steps") {
      if (!needUnsigned(flags.steps))
        return false;
    } else if (flag == "--seed") {
      if (!needUnsigned(flags.seed))
        return false;
    } else if (flag == "--warmup") {
      if (!needUnsigned(flags.schedule.warmup))
        return false;
    } else if (flag == "--decay-steps") {
      if (!needUnsigned(flags.schedule.decaySteps))
        return false;
      flags.hasDecaySteps = true;
    } else if (flag == "--log-every") {
      if (!needUnsigned(flags.logEvery))
        return false;
    } else if (flag == "--save-every") {
      if (!needUnsigned(flags.saveEvery))
        return false;
    } else if (flag == "--val-every") {
      if (!needUnsigned(flags.valEvery))
        return false;
      flags.hasValFlag = true;
    } else if (flag == "--val-batches") {
      if (!needUnsigned(flags.valBatches))
        return false;
      if (!flags.valBatches) {
        std::fprintf(stderr, "error: --val-batches takes at least 1 batch\n");
        return false;
      }
      flags.hasValFlag = true;
    } else if (flag == "--val-data") {
      flags.valData = value;
    } else if (flag == "--nproc") {
      if (!needUnsigned(flags.nproc))
        return false;
      if (!flags.nproc) {
        std::fprintf(stderr, "error: --nproc takes at least 1 process\n");
        return false;
      }
    } else if (flag == "--lr" || flag == "--min-lr") {
      double &rate = flag == "--lr" ? flags.lr : flags.schedule.minLr;
      char *end = nullptr;
      rate = std::strtod(value.c_str(), &end);
      if (value.empty() || *end || !(rate >= 0) || !std::isfinite(rate)) {
        std::fprintf(stderr,
                     "error: %s takes a non-negative number, not '%s'\n",
                     flag.c_str(), value.c_str());
        return false;
      }
      (flag == "--lr" ? flags.hasLr : flags.hasMinLr) = true;
    } else if (flag == "--lr-schedule") {
      if (value != "constant" && value != "cosine") {
        std::fprintf(stderr,
                     "error: --lr-schedule is constant or cosine, not '%s'\n",
                     value.c_str());
        return false;
      }
      flags.schedule.cosine = value == "cosine";
    } else if (flag == "--data") {
      flags.data = value;
    } else if (flag == "--params") {
      flags.params = value;
    } else if (flag == "--init") {
      if (value != "imported" && value != "random") {
        std::fprintf(stderr, "error: --init is imported or random, not '%s'\n",
                     value.c_str());
        return false;
      }
      flags.init = value;
    } else if (flag == "--save") {
      flags.save = value;
    } else if (flag == "--save-shards") {
      flags.saveShards = value;
    } else if (flag == "--resume") {
      flags.resume = value;
    } else if (flag == "--profile") {
      flags.profile = value;
    } else {
      std::fprintf(stderr, "error: unknown option '%s' (see --help)\n",
                   flag.c_str());
      return false;
    }
  }
  if ((flags.hasDecaySteps || flags.hasMinLr) && !flags.schedule.cosine) {
    std::fprintf(stderr, "error: %s needs --lr-schedule cosine\n",
                 flags.hasDecaySteps ? "--decay-steps" : "--min-lr");
    return false;
  }
  if (flags.hasDecaySteps &&
      flags.schedule.decaySteps <= flags.schedule.warmup) {
    std::fprintf(stderr,
                 "error: --decay-steps %llu must be above --warmup %u\n",
                 static_cast<unsigned long long>(flags.schedule.decaySteps),
                 flags.schedule.warmup);
    return false;
  }
  if (flags.saveEvery && flags.save.empty() && flags.saveShards.empty()) {
    std::fprintf(stderr, "error: --save-every needs --save or --save-shards\n");
    return false;
  }
  if (flags.hasValFlag && flags.valData.empty()) {
    std::fprintf(stderr, "error: --val-every and --val-batches need "
                         "--val-data\n");
    return false;
  }
  return true;
}

/// Sums `times` (a kernel's name and seconds, per call) by kernel over
/// `steps` steps, prints the ten slowest per step and writes them all, the
/// slowest first, to `path` as JSON. False (with `error`) if the file
/// cannot be written.
bool writeProfile(const std::string &path,
                  const std::vector<std::pair<std::string, double>> &times,
                  unsigned steps, std::string &error) {
  std::map<std::string, std::pair<int64_t, double>> byKernel;
  double total = 0;
  for (const auto &[kernel, seconds] : times) {
    auto &entry = byKernel[kernel];
    ++entry.first;
    entry.second += seconds;
    total += seconds;
  }
  std::vector<std::pair<std::string, std::pair<int64_t, double>>> sorted(
      byKernel.begin(), byKernel.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto &a, const auto &b) {
                     return a.second.second > b.second.second;
                   });
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto &[kernel, entry] : sorted)
    kernels.push_back({{"name", kernel},
                       {"calls_per_step", double(entry.first) / steps},
                       {"seconds_per_step", entry.second / steps}});
  nlohmann::json json = {{"device", backend::describe()},
                         {"steps", steps},
                         {"kernel_seconds_per_step", total / steps},
                         {"kernels", kernels}};
  std::printf("profile of %u step(s): %zu kernels and calls, %.3f ms of "
              "them per step; the slowest:\n",
              steps, sorted.size(), total / steps * 1e3);
  for (size_t i = 0; i < sorted.size() && i < 10; ++i)
    std::printf("  %-32s %9.3f ms  %5.1f%%\n", sorted[i].first.c_str(),
                sorted[i].second.second / steps * 1e3,
                total > 0 ? 100 * sorted[i].second.second / total : 0.0);
  return writeFileAtomically(path, json.dump(1) + "\n", error);
}

/// The block of that value the device at `coordinates` holds, made without
/// the whole value: its elements are drawn in order up to the block's last
/// one, and only the block's kept (the padding ZeRO adds stays zero).
std::vector<char> makeBlock(const ArgumentInfo &arg, const MeshInfo &mesh,
                            const std::vector<int64_t> &coordinates,
                            unsigned index, uint64_t seed) {
  std::vector<char> bytes(getNumElements(arg) * getDTypeBytes(arg.dtype));
  std::vector<ranks::BlockRun> runs =
      ranks::getBlockRuns(arg, mesh, coordinates);
  if (runs.empty())
    return bytes;
  size_t run = 0;
  auto store = [&](int64_t i, auto value) {
    while (i >= runs[run].global + runs[run].count)
      ++run;
    if (i >= runs[run].global)
      storeDouble(bytes.data(), arg.dtype,
                  runs[run].local + (i - runs[run].global),
                  static_cast<double>(value));
  };
  int64_t end = runs.back().global + runs.back().count;
  if (arg.init.isFloat)
    generateFloats(arg.init, end, seed, index, store);
  else
    generateInts(arg.init, end, seed, index, store);
  return bytes;
}

int findArgument(const StepInfo &info, ArgRole role, const char *name) {
  for (int i = 0; i < info.numArguments; ++i)
    if (info.arguments[i].init.role == role &&
        std::strcmp(info.arguments[i].name, name) == 0)
      return i;
  return -1;
}

/// This process's rank, in messages of a run of several (-1: one process).
int messageRank = -1;

int fail(const std::string &message) {
  if (messageRank >= 0)
    std::fprintf(stderr, "error: rank %d: %s\n", messageRank, message.c_str());
  else
    std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

} // namespace

char *tgc::rt::getFallbackScratch(Context &context, const char *kernel) {
  if (!context.fallbackScratch) {
    std::string error;
    context.fallbackScratch = static_cast<char *>(
        backend::allocate(context.fallbackScratchBytes, error));
    if (!context.fallbackScratch) {
      fail(std::string(kernel) +
           " declined its cuBLASLt epilogue, and its "
           "fallback's scratch of " +
           std::to_string(context.fallbackScratchBytes) + " bytes: " + error);
      std::exit(1);
    }
  }
  return context.fallbackScratch;
}

/// Whether the files written after the run (--save, --profile, rank 0's
/// file of --save-shards) could be written now: checked before the run, by
/// rank 0 and by the launcher of local processes before it starts them, so
/// that a mistyped directory fails at once, and none is the --data file;
/// false (with `error`) if not.
static bool checkOutputs(const Flags &flags, std::string &error) {
  std::string shardProbe;
  if (!flags.saveShards.empty()) {
    // The directory is made at the end: its parent must take it, or it
    // must be a directory that takes the rank files.
    struct stat status;
    if (::stat(flags.saveShards.c_str(), &status) != 0)
      shardProbe = flags.saveShards;
    else if (S_ISDIR(status.st_mode))
      shardProbe = getShardPath(flags.saveShards, 0);
    else {
      error = "--save-shards: '" + flags.saveShards + "' is not a directory";
      return false;
    }
  }
  // The data files, which an output written over one would lose.
  std::vector<std::pair<std::string, struct stat>> dataFiles;
  for (auto [flag, path] : {std::make_pair("--data", &flags.data),
                            std::make_pair("--val-data", &flags.valData)}) {
    struct stat data;
    if (::stat(path->c_str(), &data) == 0 && S_ISREG(data.st_mode))
      dataFiles.push_back({flag, data});
  }
  for (auto [flag, path] :
       {std::make_pair("--save", &flags.save),
        std::make_pair("--profile", &flags.profile),
        std::make_pair("--save-shards",
                       static_cast<const std::string *>(&shardProbe))}) {
    if (path->empty())
      continue;
    struct stat output;
    if (::stat(path->c_str(), &output) == 0)
      for (const auto &[dataFlag, data] : dataFiles)
        if (output.st_dev == data.st_dev && output.st_ino == data.st_ino) {
          error = std::string(flag) + ": '" + *path + "' is the " + dataFlag +
                  " file; writing it would lose the data";
          return false;
        }
    if (!checkWritable(*path, error)) {
      error = std::string(flag) + ": " + error;
      return false;
    }
  }
  return true;
}

int tgc::rt::trainMain(int argc, char **argv, const StepInfo &info,
                       StepFunction step, const StepInfo *evaluationInfo,
                       StepFunction evaluate) {
  Flags flags;
  bool help = false;
  if (!parseFlags(argc, argv, flags, help))
    return 1;
  if (help) {
    printUsage(argv[0]);
    return 0;
  }
  int64_t devices = ranks::getDeviceCount(info.mesh);
  bool pipelined = info.mesh.pipelineAxis >= 0;
  if (pipelined && !backend::hasStageTransfers())
    return fail("the step is pipelined (" + ranks::describe(info.mesh) +
                "), and the CUDA target has no transfers between pipeline "
                "stages yet: build the project with -DTGC_TARGET=host to "
                "train it on CPUs, or compile without a pp axis");
  if (flags.nproc) {
    if (flags.nproc != devices)
      return fail("--nproc " + std::to_string(flags.nproc) +
                  ": the step was compiled for a mesh of " +
                  std::to_string(devices) + " device(s)" +
                  (info.mesh.numAxes ? " (" + ranks::describe(info.mesh) + ")"
                                     : std::string()));
    std::string error;
    if (!checkOutputs(flags, error))
      return fail(error);
    return comm::launchLocal(static_cast<int>(flags.nproc), argc, argv,
                             comm::getCommTimeout());
  }
  std::string error;
  std::optional<comm::LaunchEnv> env = comm::readLaunchEnv(error);
  if (!env)
    return fail(error);
  if (env->worldSize > 1)
    messageRank = env->rank;
  backend::setLocalProcesses(env->localWorldSize);
  if (env->rank == 0 && !checkOutputs(flags, error))
    return fail(error);
  std::unique_ptr<Communication> communication;
  if (info.mesh.numAxes) {
    backend::selectDevice(env->localRank);
    communication = ranks::connect(info, *env, comm::getCommTimeout(), error);
    if (!communication)
      return fail(error);
  } else if (env->worldSize > 1) {
    return fail("the step was compiled for one device but the launch has " +
                std::to_string(env->worldSize) +
                " ranks; compile with --mesh (e.g. --mesh dp=" +
                std::to_string(env->worldSize) + ") to train on several");
  }
  bool lead = env->rank == 0;
  // The host holds what its device holds: the values of one device, or
  // this rank's blocks of the global values, each made or read as `tgc
  // train` makes or reads the whole.
  std::vector<ArgumentInfo> globalArguments;
  for (int i = 0; i < info.numArguments; ++i)
    globalArguments.push_back(ranks::getGlobalArgument(info.arguments[i]));
  StepInfo global = info;
  global.arguments = globalArguments.data();
  bool hasCopyTask = info.copyIds >= 0 && info.copyLabels >= 0;
  std::string source = flags.data;
  if (source.empty())
    source = hasCopyTask ? "synthetic-copy" : "fixed";
  bool fromExamples = isDatasetPath(source);
  bool fromFile =
      !fromExamples && source != "synthetic-copy" && source != "fixed";
  if (!hasCopyTask && source != "fixed" && !fromExamples)
    return fail("--data " + source +
                " needs a token-id 'input' argument read by tg.embedding and "
                "labels of the same type (a 'label' argument, or an 'input' "
                "read as a loss's labels); this step has none (try --data "
                "fixed, or --data FILE.safetensors of examples)");
  int64_t seq = 1, rows = 0;
  MappedTokenFile tokens;
  if (hasCopyTask) {
    const ArgumentInfo &ids = global.arguments[info.copyIds];
    seq = ids.rank ? ids.shape[ids.rank - 1] : 1;
    rows = seq ? getNumElements(ids) / seq : 0;
  }
  if (fromFile && !tokens.open(source, seq, info.vocabulary, error))
    return fail(error);
  // Each data-parallel rank reads the windows of its own rows of the
  // batch (the rows its blocks of the ids and labels hold).
  std::vector<bool> heldRows;
  if (fromFile && communication) {
    heldRows.assign(rows, false);
    for (int i : {info.copyIds, info.copyLabels}) {
      std::vector<bool> held = ranks::getHeldRows(
          info.arguments[i], info.mesh, communication->coordinates, seq);
      for (int64_t row = 0; row < rows && row < int64_t(held.size()); ++row)
        heldRows[row] = heldRows[row] || held[row];
    }
  }
  std::optional<WindowPrefetcher> windows;
  if (fromFile)
    windows.emplace(tokens.getTokens(), rows, seq, flags.seed,
                    info.copyLabelsShifted, heldRows);
  // An example file: each rank reads the examples of its own rows of the
  // batch for each argument it feeds.
  std::vector<DatasetArgument> exampleArguments;
  MappedExampleFile examples;
  std::optional<ExamplePrefetcher> examplesOfStep;
  if (fromExamples) {
    for (int i = 0; i < info.numArguments; ++i)
      exampleArguments.push_back(getDatasetArgument(global.arguments[i]));
    if (!examples.open(source, exampleArguments, error))
      return fail(error);
    std::vector<ExamplePrefetcher::Feed> feeds;
    for (const DatasetTensor &tensor : examples.getDataset().tensors) {
      const ArgumentInfo &arg = info.arguments[tensor.argument];
      feeds.push_back(
          {arg.dtype,
           communication
               ? ranks::getHeldRows(arg, info.mesh, communication->coordinates,
                                    tensor.exampleElements)
               : std::vector<bool>()});
    }
    examplesOfStep.emplace(examples.getDataset(), flags.seed, std::move(feeds));
  }

  // This process's part of a whole value.
  auto own = [&](int i, std::vector<char> whole) {
    return communication ? ranks::takeBlock(info.arguments[i], info.mesh,
                                            communication->coordinates, whole)
                         : whole;
  };

  // Every argument starts as `tgc train --seed` starts it, on the host.
  ArgumentBytes arguments(info.numArguments);
  for (int i = 0; i < info.numArguments; ++i)
    arguments[i] = communication
                       ? makeBlock(info.arguments[i], info.mesh,
                                   communication->coordinates, i, flags.seed)
                       : makeArgument(global.arguments[i], i, flags.seed);
  // Integer inputs get the value their name says (an attention mask all
  // ones...), as `tgc train` gives them; the data then feeds its own.
  for (int i = 0; i < info.numArguments; ++i) {
    std::vector<char> whole = makeNamedInput(global.arguments[i]);
    if (!whole.empty())
      arguments[i] = own(i, std::move(whole));
  }
  int64_t firstStep = 0;
  // Whether every rank's `ok` is set (a flag per rank, gathered), so that
  // a failure some ranks see stops all of them rather than leaving the
  // others waiting in a collective. Empty (with `error`) when the flags
  // cannot be moved.
  auto agree = [&](char ok, const char *what) {
    std::vector<char> everyone(devices, ok);
    if (!communication)
      return everyone;
    char *flagsOnDevice =
        static_cast<char *>(backend::allocate(devices + 1, error));
    if (!flagsOnDevice)
      return std::vector<char>();
    backend::toDevice(flagsOnDevice, &ok, 1);
    backend::beginCollective();
    communication->world->getWorldGroup().allGather(flagsOnDevice,
                                                    flagsOnDevice + 1, 1, what);
    backend::endCollective(info.numCollectives);
    backend::waitCollective(info.numCollectives);
    backend::toHost(everyone.data(), flagsOnDevice + 1, devices);
    backend::release(flagsOnDevice);
    return everyone;
  };
  // Values read from a file: on a mesh, only this rank's block of each
  // (read from the mapped file and converted alone: no rank holds a whole
  // value it keeps a block of).
  DeviceBlocks blocks{&info, communication ? communication->coordinates
                                           : std::vector<int64_t>()};
  const DeviceBlocks *ownBlocks = communication ? &blocks : nullptr;
  std::string resumed;
  auto readValues = [&]() {
    // An imported model's values, as `tgc train` starts from them.
    if (flags.params.empty() && flags.resume.empty() &&
        flags.init == "imported" && info.importedParams &&
        !loadImportedParams(info.importedParams, global, arguments, error,
                            ownBlocks)) {
      error += " (the model's parameter values train starts from: give "
               "--params FILE, or --init random to start from --seed)";
      return false;
    }
    int64_t ignored = 0;
    std::vector<std::string> fresh;
    if (!flags.params.empty() &&
        !loadCheckpoint(flags.params, global, arguments, {ArgRole::Param},
                        ignored, error, ownBlocks, &fresh))
      return false;
    if (lead && !fresh.empty())
      std::printf("params: %zu trained parameter%s not in '%s' start from "
                  "--seed (%s%s)\n",
                  fresh.size(), fresh.size() == 1 ? "" : "s",
                  flags.params.c_str(), fresh[0].c_str(),
                  fresh.size() > 1 ? ", ..." : "");
    if (flags.resume.empty())
      return true;
    std::vector<ArgRole> roles = {ArgRole::Param, ArgRole::State};
    if (!isShardedCheckpoint(flags.resume))
      return loadCheckpoint(flags.resume, global, arguments, roles, firstStep,
                            error, ownBlocks);
    int64_t filesRead = 0, savedRanks = 0;
    bool ownFile = false;
    if (!loadShardedCheckpoint(
            flags.resume, global, arguments, roles, firstStep, error, &info,
            communication ? env->rank : -1, &filesRead, &savedRanks, &ownFile))
      return false;
    resumed = "read " + std::to_string(filesRead) + " of " +
              std::to_string(savedRanks) + " rank files";
    if (ownFile && savedRanks > 1)
      resumed = "each rank read its own file (the saved mesh)";
    else if (communication)
      resumed = "rank 0 " + resumed + " (those its blocks overlap)";
    return true;
  };
  // Whether every rank could `what` (`ok` here, `error` saying why not):
  // the message that stops this rank, empty when all could.
  auto checkEveryRank = [&](char ok, const std::string &what) {
    std::string own = error;
    std::vector<char> everyone = agree(ok, ("agreeing to " + what).c_str());
    if (!ok)
      return own;
    if (everyone.empty())
      return "agreeing to " + what + ": " + error;
    for (int64_t r = 0; r < devices; ++r)
      if (!everyone[r])
        return "rank " + std::to_string(r) + " could not " + what +
               " (its error says why)";
    return std::string();
  };
  // A rank sees only its blocks' values: a bad one stops every rank.
  if (std::string stop =
          checkEveryRank(readValues(), "read its blocks of the values");
      !stop.empty())
    return fail(stop);
  if (lead && !resumed.empty())
    std::printf("resumed from '%s' at step %lld: %s\n", flags.resume.c_str(),
                static_cast<long long>(firstStep), resumed.c_str());

  // The steps a checkpoint says were run, and those to run, count in
  // `unsigned` as the step hyper-parameter and the data do.
  if (firstStep < 0 ||
      firstStep > int64_t(std::numeric_limits<unsigned>::max()) - flags.steps)
    return fail("--resume: the checkpoint says " + std::to_string(firstStep) +
                " steps were run; with --steps " + std::to_string(flags.steps) +
                " that is past the " +
                std::to_string(std::numeric_limits<unsigned>::max()) +
                " steps train counts");
  Context context;
  context.comm = communication.get();
  // Whether this rank holds argument i (in a pipelined step, the ranks of
  // the stages that read it; the others may plan other values at its
  // offset).
  auto holds = [&](int i) {
    return !communication || ranks::holdsArgument(info.arguments[i], info.mesh,
                                                  communication->coordinates);
  };
  auto upload = [&](int i, const std::vector<char> &bytes) {
    if (holds(i))
      backend::toDevice(context.arena + info.arguments[i].offset, bytes.data(),
                        bytes.size());
  };
  context.arena =
      static_cast<char *>(backend::allocate(info.arenaBytes, error));
  if (!context.arena)
    return fail("the step's arena of " + std::to_string(info.arenaBytes) +
                " bytes: " + error);
  context.fallbackScratchBytes = info.fallbackScratchBytes;
  context.scratch =
      static_cast<char *>(backend::allocate(info.scratchBytes, error));
  if (!context.scratch)
    return fail("the kernels' scratch of " + std::to_string(info.scratchBytes) +
                " bytes: " + error);
  context.commScratch =
      static_cast<char *>(backend::allocate(info.commScratchBytes, error));
  if (!context.commScratch)
    return fail("the collectives' staging of " +
                std::to_string(info.commScratchBytes) + " bytes: " + error);
  if (info.gemmWorkspaceOffset >= 0 && info.gemmWorkspaceBytes > 0 &&
      info.gemmWorkspaceOffset + info.gemmWorkspaceBytes <= info.arenaBytes) {
    context.gemmWorkspace = context.arena + info.gemmWorkspaceOffset;
    context.gemmWorkspaceBytes = size_t(info.gemmWorkspaceBytes);
  }
  int lrIndex = findArgument(info, ArgRole::Hyper, "lr");
  int stepIndex = findArgument(info, ArgRole::Hyper, "step");
  int scaleIndex = findArgument(info, ArgRole::State, "loss_scale");
  // The parameters and optimizer state live on the device from now on (a
  // save reads them back): the host lets its copies go. A value no stage
  // of this rank reads keeps its first value here, and the loss scale is
  // read every step.
  for (int i = 0; i < info.numArguments; ++i) {
    upload(i, arguments[i]);
    ArgRole role = info.arguments[i].init.role;
    if (holds(i) && i != scaleIndex &&
        (role == ArgRole::Param || role == ArgRole::State))
      std::vector<char>().swap(arguments[i]);
  }
  // The validation loss (--val-data), on an arena of its own.
  std::optional<Evaluation> evaluation;
  if (!flags.valData.empty()) {
    if (!evaluationInfo || !evaluate)
      return fail("--val-data: this project has no evaluation; compile it "
                  "with tgc compile --emit cuda --evaluation");
    evaluation.emplace();
    // A rank that cannot set it up (its file, its memory) stops all.
    if (std::string stop = checkEveryRank(
            evaluation->open(*evaluationInfo, evaluate, info,
                             communication.get(), flags.valData,
                             flags.valBatches, flags.seed, error),
            "set up the evaluation");
        !stop.empty())
      return fail(stop);
  }
  double peakLr = 0;
  if (lrIndex >= 0)
    peakLr = flags.hasLr ? flags.lr
                         : loadDouble(arguments[lrIndex].data(),
                                      info.arguments[lrIndex].dtype, 0);
  else if (flags.hasLr || !flags.schedule.isConstant())
    return fail("--lr, --warmup and --lr-schedule cosine need an 'lr' "
                "hyper-parameter; this step has none");
  if (flags.schedule.minLr > peakLr) {
    char rates[96];
    std::snprintf(rates, sizeof(rates), "%g is above the peak rate %g",
                  flags.schedule.minLr, peakLr);
    return fail(std::string("--min-lr ") + rates);
  }
  // The cosine's end: the last step of this run, unless given (a resumed
  // run continues the schedule of the whole training with the same one).
  if (!flags.hasDecaySteps)
    flags.schedule.decaySteps = uint64_t(firstStep) + flags.steps;
  int lossIndex = -1, scaleResult = -1;
  for (int r = 0; r < info.numResults; ++r) {
    if (info.results[r].isLoss)
      lossIndex = r;
    if (info.results[r].aliases == scaleIndex && scaleIndex >= 0)
      scaleResult = r;
  }
  if (lossIndex < 0)
    return fail("the step has no 'loss' result to train on");

  // A pipelined step: the results one stage computes for the ranks of the
  // others (the loss, an argument another stage reads) cross through the
  // group along the pipeline axis, in a buffer of their own.
  comm::Group *pipelineGroup =
      pipelined && communication && communication->pipelineGroup >= 0
          ? communication->groups[communication->pipelineGroup].get()
          : nullptr;
  int64_t pipelineCoordinate =
      pipelineGroup ? communication->coordinates[info.mesh.pipelineAxis] : -1;
  char *crossing = nullptr;
  if (pipelineGroup) {
    int64_t most = 0;
    for (int r = 0; r < info.numResults; ++r)
      most = std::max(most, info.results[r].bytes);
    crossing = static_cast<char *>(backend::allocate(most, error));
    if (!crossing)
      return fail("the buffer of the values crossing pipeline stages (" +
                  std::to_string(most) + " bytes): " + error);
  }
  // Result r into `crossing` on every rank of this rank's pipeline group,
  // from the ranks of the stage that computed it.
  auto crossStages = [&](int r) {
    const ResultInfo &result = info.results[r];
    if (pipelineCoordinate == result.pipelineHolder)
      backend::onDevice(crossing, context.arena + result.offset, result.bytes);
    std::string what = "result '" + std::string(result.name) + "' of step " +
                       std::to_string(context.step) +
                       " to the other pipeline stages";
    backend::beginCollective();
    pipelineGroup->broadcast(crossing, size_t(result.bytes),
                             result.pipelineHolder, what.c_str());
    backend::endCollective(info.numCollectives);
    backend::waitCollective(info.numCollectives);
  };
  // Result r on the host, wherever it was computed.
  auto readResult = [&](int r) {
    const ResultInfo &result = info.results[r];
    std::vector<char> bytes(result.bytes);
    if (pipelineGroup && result.pipelineHolder >= 0) {
      crossStages(r);
      backend::toHost(bytes.data(), crossing, bytes.size());
    } else {
      backend::toHost(bytes.data(), context.arena + result.offset,
                      bytes.size());
    }
    return bytes;
  };

  // Which arguments the data feeds, and how: `tgc train`'s remark.
  if (lead && fromExamples)
    std::printf("data: %s\n",
                describeDataset(source, examples.getDataset(), exampleArguments)
                    .c_str());
  else if (lead && hasCopyTask && source != "fixed")
    std::printf("data: %s\n",
                describeDataFeed(source, info.arguments[info.copyIds].name,
                                 info.arguments[info.copyLabels].name,
                                 info.vocabulary, info.copyLabelsShifted)
                    .c_str());
  double firstLoss = NAN, lastLoss = NAN;
  unsigned skipped = 0;
  std::vector<std::pair<std::string, double>> kernelTimes;
  unsigned profiledSteps = 0;
  // --save and --save-shards: the checkpoints of the values after
  // `stepsDone` steps (0 when written, else train's exit status).
  auto saveCheckpoints = [&](int64_t stepsDone) -> int {
    if (!flags.save.empty()) {
      // The whole value of argument i, one at a time as the file is written:
      // of several ranks, gathered, rank 0 putting the blocks together.
      auto wholeOf = [&](int i, std::vector<char> &whole, std::string &why) {
        const ArgumentInfo &arg = info.arguments[i];
        size_t bytes = getDTypeBytes(arg.dtype);
        for (int d = 0; d < arg.rank; ++d)
          bytes *= arg.shape[d];
        if (!communication) {
          whole.resize(bytes);
          backend::toHost(whole.data(), context.arena + arg.offset, bytes);
          return true;
        }
        void *gathered = backend::allocate(bytes * (devices + 1), why);
        if (!gathered) {
          why = "gathering '" + std::string(arg.name) + "': " + why;
          return false;
        }
        // A rank of a stage that does not read it sends its first value (in
        // the last block of the buffer), which counts only when no stage
        // reads it (ranks::savesArgument).
        const char *block = context.arena + arg.offset;
        if (!holds(i)) {
          block = static_cast<char *>(gathered) + bytes * devices;
          backend::toDevice(const_cast<char *>(block), arguments[i].data(),
                            bytes);
        }
        backend::beginCollective();
        communication->world->getWorldGroup().allGather(
            block, gathered, bytes,
            ("gathering '" + std::string(arg.name) + "' for --save").c_str());
        backend::endCollective(info.numCollectives);
        backend::waitCollective(info.numCollectives);
        if (lead) {
          std::vector<char> blocks(bytes * devices);
          backend::toHost(blocks.data(), gathered, blocks.size());
          whole.assign(getNumElements(global.arguments[i]) *
                           getDTypeBytes(arg.dtype),
                       0);
          for (int64_t r = 0; r < devices; ++r) {
            std::vector<int64_t> at = ranks::getCoordinates(info.mesh, r);
            if (ranks::savesArgument(arg, info.mesh, at))
              ranks::putBlock(
                  arg, info.mesh, at,
                  std::vector<char>(blocks.begin() + r * bytes,
                                    blocks.begin() + (r + 1) * bytes),
                  whole);
          }
        }
        backend::release(gathered);
        return true;
      };
      std::vector<ArgRole> roles = {ArgRole::Param, ArgRole::State};
      if (lead) {
        if (!saveCheckpoint(flags.save, global, wholeOf, roles, stepsDone,
                            error))
          return fail(error);
      } else {
        // The other ranks take part in the same gathers, in the same order.
        std::vector<char> ignored;
        std::string why;
        for (int i = 0; i < info.numArguments; ++i) {
          ArgRole role = info.arguments[i].init.role;
          if (std::find(roles.begin(), roles.end(), role) != roles.end() &&
              !wholeOf(i, ignored, why))
            return fail(why);
        }
      }
    }
    if (!flags.saveShards.empty()) {
      // Every rank writes its own blocks; rank 0 writes the manifest once all
      // have, so that a manifest always describes complete files.
      std::vector<ArgRole> roles = {ArgRole::Param, ArgRole::State};
      ArgumentBytes blocks(info.numArguments);
      for (int i = 0; i < info.numArguments; ++i) {
        const ArgumentInfo &arg = info.arguments[i];
        if (arg.init.role != ArgRole::Param && arg.init.role != ArgRole::State)
          continue;
        size_t bytes = getDTypeBytes(arg.dtype);
        for (int d = 0; d < arg.rank; ++d)
          bytes *= arg.shape[d];
        // A value no stage of a pipelined step reads keeps its first value.
        if (!holds(i)) {
          blocks[i] = arguments[i];
          continue;
        }
        blocks[i].resize(bytes);
        backend::toHost(blocks[i].data(), context.arena + arg.offset, bytes);
      }
      std::string saveError;
      char saved = saveShard(flags.saveShards, info, env->rank, blocks, roles,
                             stepsDone, saveError);
      if (!saved)
        fail(saveError);
      std::vector<char> everyone = agree(saved, "--save-shards");
      if (everyone.empty())
        return fail("--save-shards: " + error);
      for (int64_t r = 0; r < devices; ++r)
        if (!everyone[r])
          return r == env->rank
                     ? 1
                     : fail("--save-shards: rank " + std::to_string(r) +
                            " could not write its blocks; no "
                            "manifest was written");
      if (lead &&
          !saveManifest(flags.saveShards, info, roles, stepsDone, error))
        return fail(error);
    }
    return 0;
  };
  auto start = std::chrono::steady_clock::now();
  for (unsigned k = 0; k < flags.steps; ++k) {
    unsigned n = static_cast<unsigned>(firstStep) + k;
    uint64_t seedOfStep = stepSeed(flags.seed, n);
    // The arguments that change every step, on the host, then uploaded.
    std::vector<int> changed;
    for (int i = 0; i < info.numArguments; ++i) {
      const ArgumentInfo &arg = info.arguments[i];
      if (i == stepIndex) {
        storeDouble(arguments[i].data(), arg.dtype, 0, double(n + 1));
      } else if (i == lrIndex) {
        storeDouble(arguments[i].data(), arg.dtype, 0,
                    flags.schedule.at(peakLr, n));
      } else if (arg.init.role == ArgRole::Hyper && !arg.init.isFloat &&
                 !arg.init.hasDefault) {
        // Dropout seeds.
        arguments[i] = own(i, makeArgument(global.arguments[i], i, seedOfStep));
      } else if (!fromFile && source == "synthetic-copy" && i == info.copyIds) {
        std::vector<char> ids =
            makeArgument(global.arguments[i], i, seedOfStep);
        std::vector<char> labels = ids;
        if (info.copyLabelsShifted)
          shiftCopyLabels(labels.data(), rows, seq,
                          getDTypeBytes(info.arguments[i].dtype));
        arguments[info.copyLabels] = own(info.copyLabels, std::move(labels));
        arguments[i] = own(i, std::move(ids));
        changed.push_back(info.copyLabels);
      } else {
        continue;
      }
      changed.push_back(i);
    }
    if (fromFile) {
      std::vector<int64_t> ids, labels;
      windows->take(n, ids, labels);
      for (auto [i, values] : {std::make_pair(info.copyIds, &ids),
                               std::make_pair(info.copyLabels, &labels)}) {
        arguments[i] = own(i, toElements(*values, info.arguments[i].dtype));
        changed.push_back(i);
      }
    }
    if (fromExamples) {
      std::vector<std::vector<char>> values = examplesOfStep->take(n);
      for (size_t t = 0; t < values.size(); ++t) {
        int i = static_cast<int>(examples.getDataset().tensors[t].argument);
        arguments[i] = own(i, std::move(values[t]));
        changed.push_back(i);
      }
    }
    for (int i : changed)
      upload(i, arguments[i]);

    context.step = n + 1;
    bool profiled = !flags.profile.empty() && (k > 0 || flags.steps == 1);
    if (profiled)
      backend::profileBegin();
    backend::runStep(step, context, !profiled && !communication);
    if (pipelineGroup)
      pipelineGroup->finishSends(
          ("the transfers between pipeline stages of step " +
           std::to_string(n + 1))
              .c_str());
    if (profiled) {
      backend::profileEnd(kernelTimes);
      ++profiledSteps;
    }
    backend::synchronize("the step");

    const ResultInfo &lossResult = info.results[lossIndex];
    double loss = loadDouble(readResult(lossIndex).data(), lossResult.dtype, 0);
    if (k == 0)
      firstLoss = loss;
    lastLoss = loss;
    if (!std::isfinite(loss))
      return fail("the loss is " + std::to_string(loss) + " at step " +
                  std::to_string(n + 1) +
                  "; try a smaller learning rate or gradient clipping");
    double scale = NAN, newScale = NAN;
    if (scaleResult >= 0) {
      scale = loadDouble(arguments[scaleIndex].data(),
                         info.arguments[scaleIndex].dtype, 0);
      const ResultInfo &result = info.results[scaleResult];
      std::vector<char> bytes = readResult(scaleResult);
      newScale = loadDouble(bytes.data(), result.dtype, 0);
      arguments[scaleIndex] = bytes;
    }
    bool wasSkipped = newScale < scale;
    skipped += wasSkipped;
    unsigned every = flags.logEvery ? flags.logEvery : 1;
    if (lead && (n + 1 == 1 || (n + 1) % every == 0 || k + 1 == flags.steps ||
                 wasSkipped)) {
      std::printf("step %u: loss %.6f", n + 1, loss);
      if (wasSkipped)
        std::printf(" (skipped: non-finite gradients; loss scale %g -> %g)",
                    scale, newScale);
      else if (!std::isnan(scale))
        std::printf(" (loss scale %g)", newScale);
      // The rate a schedule gave the step (tgc train prints the same).
      if (lrIndex >= 0 && !flags.schedule.isConstant())
        std::printf(" (lr %g)", flags.schedule.at(peakLr, n));
      std::printf("\n");
      std::fflush(stdout);
    }
    // New values of arguments not updated in place go to their buffers;
    // in a pipelined step, from the stage that computed one to the ranks
    // of every stage that reads it (a tied embedding, the step's hypers).
    for (int r = 0; r < info.numResults; ++r) {
      const ResultInfo &result = info.results[r];
      if (result.aliases < 0)
        continue;
      const ArgumentInfo &arg = info.arguments[result.aliases];
      int64_t offset = arg.offset;
      if (pipelineGroup && result.pipelineHolder >= 0) {
        bool elsewhere = (arg.pipelineHolders &
                          ~(uint64_t(1) << result.pipelineHolder)) != 0;
        if (elsewhere)
          crossStages(r);
        if (!holds(result.aliases))
          continue;
        if (pipelineCoordinate != result.pipelineHolder)
          backend::onDevice(context.arena + offset, crossing, result.bytes);
        else if (offset != result.offset)
          backend::onDevice(context.arena + offset,
                            context.arena + result.offset, result.bytes);
        continue;
      }
      if (offset != result.offset)
        backend::onDevice(context.arena + offset, context.arena + result.offset,
                          result.bytes);
    }
    if (evaluation && (k + 1 == flags.steps ||
                       (flags.valEvery && (n + 1) % flags.valEvery == 0))) {
      double loss = evaluation->measure(context.arena);
      unsigned batches = evaluation->getBatches();
      if (lead) {
        std::printf("step %u: val loss %.6f (%u batch%s)\n", n + 1, loss,
                    batches, batches == 1 ? "" : "es");
        std::fflush(stdout);
      }
    }
    // A checkpoint every --save-every steps (the last one follows the run).
    if (flags.saveEvery && (n + 1) % flags.saveEvery == 0 &&
        k + 1 != flags.steps) {
      backend::synchronize(("step " + std::to_string(n + 1)).c_str());
      if (int status = saveCheckpoints(n + 1))
        return status;
      if (lead) {
        std::printf("step %u: saved %s\n", n + 1,
                    flags.save.empty() ? flags.saveShards.c_str()
                                       : flags.save.c_str());
        std::fflush(stdout);
      }
    }
  }
  backend::synchronize("the last step");
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  double perStep = flags.steps ? seconds / flags.steps : 0;
  if (lead) {
    std::printf("trained %u steps (%s, %s data) in %.2f s: loss %.6f -> %.6f; "
                "%.3f ms/step",
                flags.steps, backend::describe().c_str(), source.c_str(),
                seconds, firstLoss, lastLoss, perStep * 1e3);
    if (hasCopyTask && perStep > 0)
      std::printf(", %.0f tokens/s", double(rows * seq) / perStep);
    if (size_t peak = backend::peakMemory())
      std::printf(", peak device memory %zu bytes", peak);
    std::printf("\n");
    if (skipped)
      std::printf("%u step(s) skipped by dynamic loss scaling\n", skipped);
    std::string error;
    if (profiledSteps &&
        !writeProfile(flags.profile, kernelTimes, profiledSteps, error))
      return fail("--profile: " + error);
  }

  if (int status = saveCheckpoints(firstStep + flags.steps))
    return status;
  backend::release(crossing);
  backend::release(context.commScratch);
  backend::release(context.scratch);
  backend::release(context.fallbackScratch);
  backend::release(context.arena);
  if (communication)
    communication->world->finish();
  return 0;
}
