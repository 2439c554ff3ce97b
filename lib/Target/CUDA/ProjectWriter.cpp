//===- ProjectWriter.cpp - a generated project on disk --------------------===//
//
// step.json (what the step takes and returns, where it lives), the CMake
// project, the initial parameters, and the directory written all at once:
// into a temporary directory beside it, renamed at the end.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGSharding.h"
#include "tgc/Eval/TensorNpy.h"
#include "tgc/Interpreter/GlobalStep.h"
#include "tgc/Interpreter/Inputs.h"
#include "tgc/Target/CUDA/CudaEmitter.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <cstring>

using namespace mlir;
using namespace tgc;
using namespace tgc::cuda;

namespace {

/// A problem with the output directory, in tgc's own words.
LogicalResult reportError(const llvm::Twine &message) {
  llvm::errs() << "tgc: error: " << message << "\n";
  return failure();
}

using nlohmann::ordered_json;

ordered_json describeStep(func::FuncOp step, const CudaProject &project,
                          const std::optional<tg::Mesh> &mesh) {
  ordered_json json;
  json["function"] = step.getName().str();
  json["source"] = formatLocation(step.getLoc());
  json["arena_size"] =
      step->getAttrOfType<IntegerAttr>(tg::TGDialect::kArenaSizeAttrName)
          .getInt();
  if (mesh) {
    ordered_json axes = ordered_json::array();
    for (auto [name, size] : llvm::zip(mesh->axisNames, mesh->axisSizes))
      axes.push_back({{"name", name}, {"size", size}});
    json["mesh"] = {{"name", mesh->name},
                    {"spec", mesh->str()},
                    {"devices", mesh->getNumDevices()},
                    {"axes", axes}};
  }
  ordered_json arguments = ordered_json::array();
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    auto type = cast<RankedTensorType>(step.getArgumentTypes()[i]);
    ordered_json arg;
    arg["name"] = getArgumentName(step, i);
    auto role =
        step.getArgAttrOfType<StringAttr>(i, tg::TGDialect::kRoleAttrName);
    arg["role"] = role ? role.str() : "input";
    // Loaded and saved with the parameters (a running statistic).
    if (tg::getArgumentRole(step, i) == tg::Role::State &&
        tg::isModelValue(step, i))
      arg["model_value"] = true;
    // A parameter the step does not train (a LoRA step's base weights).
    if (step.getArgAttr(i, tg::TGDialect::kFrozenAttrName))
      arg["frozen"] = true;
    arg["shape"] = type.getShape().vec();
    // A partitioned step's argument: the block of a global value.
    // ZeRO's padding (tg.unpadded_shape) is not in the global shape, the
    // caller's (the step emitter has checked that it fits).
    if (tg::ShardingAttr sharding = tg::getArgSharding(step, i); mesh) {
      SmallVector<int64_t> global =
          tg::getGlobalShape(sharding, type.getShape(), *mesh);
      FailureOr<SmallVector<int64_t>> caller =
          tg::getCallerArgShape(step, i, &*mesh);
      arg["global_shape"] = succeeded(caller) ? *caller : global;
      if (succeeded(caller) && *caller != global)
        arg["padded_shape"] = global;
      ordered_json dims = ordered_json::array();
      for (int64_t d = 0; d < type.getRank(); ++d) {
        ordered_json axes = ordered_json::array();
        if (sharding)
          for (StringRef axis : sharding.getDimAxes(d))
            axes.push_back(axis.str());
        dims.push_back(axes);
      }
      arg["sharding"] = dims;
    }
    FailureOr<StorageType> storage =
        getStorageType(type.getElementType(), step.getLoc());
    arg["dtype"] = succeeded(storage) ? storage->dtype : "";
    if (auto offset = step.getArgAttrOfType<IntegerAttr>(
            i, tg::TGDialect::kOffsetAttrName))
      arg["offset"] = offset.getInt();
    // Integer ids: the rows or classes of what reads them, and the ids
    // outside them a loss ignores (what --data's values must be).
    rt::RandomSpec spec = getRandomSpec(step, i);
    if (spec.idBound) {
      arg["id_bound"] = spec.idBound;
      if (spec.numIgnoredIds)
        arg["ignored_ids"] = std::vector<int64_t>(
            spec.ignoredIds, spec.ignoredIds + spec.numIgnoredIds);
    }
    if (i < project.argumentPipelineHolders.size())
      arg["pipeline_holders"] = project.argumentPipelineHolders[i];
    arguments.push_back(arg);
  }
  json["arguments"] = arguments;
  ordered_json results = ordered_json::array();
  for (unsigned r = 0, e = step.getNumResults(); r < e; ++r) {
    ordered_json result;
    result["name"] = getResultName(step, r);
    if (auto role = step.getResultAttrOfType<StringAttr>(
            r, tg::TGDialect::kRoleAttrName))
      result["role"] = role.str();
    if (auto aliases = step.getResultAttrOfType<IntegerAttr>(
            r, tg::TGDialect::kAliasesAttrName))
      result["aliases"] = aliases.getInt();
    if (r < project.resultPipelineHolders.size())
      result["pipeline_holder"] = project.resultPipelineHolders[r];
    results.push_back(result);
  }
  json["results"] = results;
  auto module = step->getParentOfType<ModuleOp>();
  if (Attribute pipeline =
          module ? module->getAttr(tg::TGDialect::kPipelineAttrName)
                 : nullptr) {
    std::string text;
    llvm::raw_string_ostream os(text);
    pipeline.print(os);
    json["pipeline"] = text;
  }
  json["kernels"] = project.kernels;
  ordered_json estimates = ordered_json::array();
  for (const CudaProject::Estimate &estimate : project.estimates) {
    ordered_json op = {{"name", estimate.name},
                       {"kernels", estimate.kernels},
                       {"seconds", estimate.seconds}};
    if (!estimate.fallback.empty())
      op["fallback_kernels"] = estimate.fallback;
    estimates.push_back(std::move(op));
  }
  json["estimates"] = {{"device", project.device}, {"ops", estimates}};
  return json;
}

const char *kCMakeLists =
    R"cmake(# Generated by tgc: builds `train` for the step in step.cu.
#   cmake -S . -B build [-DTGC_TARGET=host] && cmake --build build
# TGC_TARGET=cuda (default): nvcc, cuBLAS, for CMAKE_CUDA_ARCHITECTURES (90).
# TGC_TARGET=host: the same kernels on the CPU's cores (runtime's CudaCompat.h).
cmake_minimum_required(VERSION 3.20)
project(tgc_step LANGUAGES CXX)

set(TGC_TARGET cuda CACHE STRING "cuda (a GPU) or host (the CPU)")
set_property(CACHE TGC_TARGET PROPERTY STRINGS cuda host)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()
find_package(TGCRuntime REQUIRED CONFIG)
# The step, and the evaluation train --val-data runs (tgc compile --evaluation).
set(TGC_STEP_SOURCES @SOURCES@)

if(TGC_TARGET STREQUAL "host")
  # The .cu source compiled as C++ with the runtime's CUDA compatibility
  # header; no contraction into FMAs, so that the numbers are the
  # interpreter's.
  set(host_sources)
  foreach(source IN LISTS TGC_STEP_SOURCES)
    get_filename_component(stem ${source} NAME_WE)
    configure_file(${source} ${CMAKE_CURRENT_BINARY_DIR}/${stem}_host.cpp
                   COPYONLY)
    list(APPEND host_sources ${CMAKE_CURRENT_BINARY_DIR}/${stem}_host.cpp)
  endforeach()
  add_executable(train ${host_sources})
  target_compile_options(train PRIVATE -ffp-contract=off)
  target_link_libraries(train PRIVATE TGCRuntime::host)
elseif(TGC_TARGET STREQUAL "cuda")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  if(NOT TARGET TGCRuntime::cuda)
    message(FATAL_ERROR "this tgc runtime was built without CUDA "
      "(configure it with -DTGC_RUNTIME_CUDA=ON), or use -DTGC_TARGET=host")
  endif()
  add_executable(train ${TGC_STEP_SOURCES})
  target_link_libraries(train PRIVATE TGCRuntime::cuda)
else()
  message(FATAL_ERROR "TGC_TARGET is cuda or host, not '${TGC_TARGET}'")
endif()
)cmake";

LogicalResult writeFile(StringRef path, StringRef contents) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return reportError("cannot write '" + path + "': " + error.message());
  os << contents;
  os.close();
  if (os.has_error())
    return reportError("cannot write '" + path + "'");
  return success();
}

} // namespace

LogicalResult
tgc::writeCudaProject(func::FuncOp step, StringRef directory,
                      const std::vector<safetensors::Entry> *parameters,
                      func::FuncOp evaluation) {
  if (directory.empty() || directory == "-")
    return reportError("--emit cuda writes a directory: give -o DIR");
  // An existing directory must be empty; nothing else may be in the way.
  if (llvm::sys::fs::exists(directory)) {
    if (!llvm::sys::fs::is_directory(directory))
      return reportError("'" + directory +
                         "' exists and is not a directory; --emit cuda "
                         "writes a project directory");
    std::error_code error;
    llvm::sys::fs::directory_iterator it(directory, error);
    if (error)
      return reportError("cannot read '" + directory + "': " + error.message());
    if (it != llvm::sys::fs::directory_iterator())
      return reportError("'" + directory +
                         "' exists and is not empty; give a new or empty "
                         "directory");
  }
  FailureOr<CudaProject> project =
      emitCudaProject(step, /*withEvaluation=*/bool(evaluation));
  if (failed(project))
    return failure();
  FailureOr<std::optional<tg::Mesh>> mesh = tg::lookupFunctionMesh(step);
  if (failed(mesh))
    return failure();
  ordered_json json = describeStep(step, *project, *mesh);
  std::optional<CudaProject> evaluationProject;
  if (evaluation) {
    FailureOr<std::optional<tg::Mesh>> evaluationMesh =
        tg::lookupFunctionMesh(evaluation);
    if (failed(evaluationMesh))
      return failure();
    // A pipelined step's evaluation runs on its mesh without the pp axis.
    std::string expected =
        *mesh ? (*mesh)->withoutAxis("pp").str() : std::string();
    if (expected != (*evaluationMesh ? (*evaluationMesh)->str() : ""))
      return evaluation.emitError("the evaluation's mesh is not the step's")
             << (*mesh && (*mesh)->getAxisIndex("pp") ? " without its pp axis"
                                                      : "");
    FailureOr<CudaProject> emitted = emitCudaEvaluation(evaluation);
    if (failed(emitted))
      return failure();
    evaluationProject = std::move(*emitted);
    json["evaluation"] =
        describeStep(evaluation, *evaluationProject, *evaluationMesh);
  }
  project->stepJson = json.dump(2) + "\n";
  project->cmakeLists = kCMakeLists;
  size_t sources = project->cmakeLists.find("@SOURCES@");
  project->cmakeLists.replace(sources, strlen("@SOURCES@"),
                              evaluation ? "step.cu evaluate.cu" : "step.cu");
  if (parameters)
    project->cmakeLists +=
        "\n# The model's parameter values: train starts from them (--init "
        "random:\n# from --seed alone).\n"
        "target_compile_definitions(train PRIVATE\n"
        "  \"TGC_IMPORTED_PARAMS=\\\"${CMAKE_CURRENT_SOURCE_DIR}/"
        "params.safetensors\\\"\")\n";

  // The initial parameters are the global values, also of a partitioned
  // step: each rank takes its block.
  std::vector<safetensors::Entry> initial;
  if (!parameters) {
    FailureOr<SmallVector<RankedTensorType>> types =
        getGlobalArgumentTypes(step);
    if (failed(types))
      return failure();
    for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i)
      if (tg::isModelValue(step, i))
        initial.push_back(safetensors::toEntry(
            getArgumentName(step, i),
            tensorToNpy(makeRandomArgument(step, i, /*seed=*/0, (*types)[i]))));
    parameters = &initial;
  }

  SmallString<128> absolute(directory);
  if (std::error_code error = llvm::sys::fs::make_absolute(absolute))
    return reportError("cannot resolve '" + directory +
                       "': " + error.message());
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  SmallString<128> parent = llvm::sys::path::parent_path(absolute);
  SmallString<128> temporary;
  if (std::error_code error = llvm::sys::fs::createUniqueDirectory(
          parent + "/." + llvm::sys::path::filename(absolute) + ".tmp",
          temporary))
    return reportError("cannot create a directory beside '" + directory +
                       "': " + error.message());
  auto cleanUp = [&] { llvm::sys::fs::remove_directories(temporary); };
  auto file = [&](StringRef name) { return (temporary + "/" + name).str(); };
  if (failed(writeFile(file("CMakeLists.txt"), project->cmakeLists)) ||
      failed(writeFile(file("step.cu"), project->stepSource)) ||
      failed(writeFile(file("step.json"), project->stepJson)) ||
      (evaluationProject &&
       failed(writeFile(file("evaluate.cu"), evaluationProject->stepSource)))) {
    cleanUp();
    return failure();
  }
  if (llvm::Error error =
          safetensors::write(file("params.safetensors"), *parameters)) {
    cleanUp();
    return reportError(llvm::toString(std::move(error)));
  }
  // rename(2) replaces an empty directory, and nothing else.
  if (std::error_code error = llvm::sys::fs::rename(temporary, absolute)) {
    cleanUp();
    return reportError("cannot move the project to '" + directory +
                       "': " + error.message());
  }
  return success();
}
