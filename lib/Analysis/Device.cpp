//===- Device.cpp - the built-in device table and device files -----------===//
//
// Figures are NVIDIA's public datasheet numbers for the SXM parts, dense
// (without the 2:4 sparsity factor): A100 (Ampere architecture whitepaper and
// A100 datasheet), H100 SXM5 and H200 (Hopper datasheets), B200 (HGX/DGX B200
// datasheet, per GPU). Memory sizes are what nvidia-smi reports as total
// memory. Link bandwidths are per direction and per GPU: NVLink's quoted
// figure is the sum of both directions (A100 600 GB/s, H100/H200 900 GB/s,
// B200 1.8 TB/s), InfiniBand is one NIC per GPU (HDR 200 Gb/s on DGX A100,
// NDR 400 Gb/s on DGX H100/H200/B200). Latencies are typical small-message
// NCCL latencies. The SXM parts come in 8-GPU nodes (HGX/DGX baseboards);
// sources in docs/cost-model.md.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/Device.h"
#include "tgc/Support/InputFile.h"

#include "tgc/Dialect/TG/TGDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

#include <cmath>

using namespace mlir;
using namespace tgc;

static constexpr double kTera = 1e12;
static constexpr double kGiga = 1e9;
static constexpr int64_t kMiB = 1024 * 1024;

static std::vector<DeviceSpec> buildTable() {
  std::vector<DeviceSpec> table;
  auto add = [&](const char *name, const char *description, double fp32,
                 double int32, double tf32, double bf16, double fp8,
                 int64_t memoryMiB, double hbm, double nvlinkBothWays,
                 double ib, int64_t workspaceMiB) {
    DeviceSpec device;
    device.name = name;
    device.description = description;
    device.matrixFp32 = fp32 * kTera;
    device.vectorFp32 = fp32 * kTera;
    device.vectorInt32 = int32 * kTera;
    device.matrixTf32 = tf32 * kTera;
    device.matrixBf16 = bf16 * kTera;
    device.matrixFp8 = fp8 * kTera;
    device.hbmBytes = memoryMiB * kMiB;
    device.hbmBandwidth = hbm * kGiga;
    device.nvlink = {nvlinkBothWays / 2 * kGiga, 2e-6};
    device.infiniband = {ib * kGiga, 5e-6};
    device.gpusPerNode = 8;
    device.launchOverhead = 3e-6;
    device.gemmWorkspaceBytes = workspaceMiB * kMiB;
    table.push_back(device);
  };
  // name, description, fp32 (TFLOP/s), int32 (T instructions/s: the INT32
  // lanes per SM, 64 on A100 and H100, 128 assumed on B200, times SMs and
  // boost clock), tf32, bf16/fp16, fp8 (TFLOP/s), memory (MiB), HBM (GB/s),
  // NVLink both ways (GB/s), InfiniBand per GPU (GB/s), cuBLASLt workspace
  // (MiB, NVIDIA's recommendation per architecture).
  add("A100-40GB", "NVIDIA A100 SXM4 40GB (HBM2, NVLink 3, HDR 200Gb/s)", 19.5,
      9.7, 156, 312, 0, 40960, 1555, 600, 25, 4);
  add("A100-80GB", "NVIDIA A100 SXM4 80GB (HBM2e, NVLink 3, HDR 200Gb/s)", 19.5,
      9.7, 156, 312, 0, 81920, 2039, 600, 25, 4);
  add("H100-SXM", "NVIDIA H100 SXM5 80GB (HBM3, NVLink 4, NDR 400Gb/s)", 67,
      16.7, 494.7, 989.4, 1978.9, 81559, 3350, 900, 50, 32);
  add("H200", "NVIDIA H200 SXM 141GB (HBM3e, NVLink 4, NDR 400Gb/s)", 67, 16.7,
      494.7, 989.4, 1978.9, 143771, 4800, 900, 50, 32);
  add("B200", "NVIDIA B200 (HGX B200, per GPU; HBM3e, NVLink 5, NDR 400Gb/s)",
      75, 37.2, 1100, 2250, 4500, 183359, 8000, 1800, 50, 32);
  return table;
}

ArrayRef<DeviceSpec> tgc::getBuiltinDevices() {
  static const std::vector<DeviceSpec> table = buildTable();
  return table;
}

StringRef tgc::getDefaultDeviceName() { return "H100-SXM"; }

double DeviceSpec::getMatrixPeak(Type type) const {
  unsigned width = type.isIntOrFloat() ? type.getIntOrFloatBitWidth() : 32;
  // A type the device has no matrix rate for runs at the next wider one.
  if (width <= 8 && matrixFp8 > 0)
    return matrixFp8;
  if (width <= 16 && matrixBf16 > 0)
    return matrixBf16;
  if (width <= 32 && allowTf32 && matrixTf32 > 0)
    return matrixTf32;
  return width <= 32 ? matrixFp32 : matrixFp32 / 2;
}

llvm::Expected<DeviceSpec> tgc::lookupDevice(StringRef name) {
  ArrayRef<DeviceSpec> table = getBuiltinDevices();
  // An exact name, else a unique prefix ("H100" finds "H100-SXM").
  SmallVector<const DeviceSpec *> prefixed;
  for (const DeviceSpec &device : table) {
    if (StringRef(device.name).equals_insensitive(name))
      return device;
    if (!name.empty() && StringRef(device.name).starts_with_insensitive(name))
      prefixed.push_back(&device);
  }
  if (prefixed.size() == 1)
    return *prefixed.front();
  std::string known;
  for (const DeviceSpec &device : table)
    known += (known.empty() ? "" : ", ") + device.name;
  return llvm::createStringError(
      (prefixed.empty() ? "unknown device '" : "ambiguous device '") +
      name.str() + "'; known devices: " + known +
      " (or --device-file FILE.json)");
}

nlohmann::json DeviceSpec::toJson() const {
  return {{"name", name},
          {"description", description},
          {"matrix_flops_fp32", matrixFp32},
          {"matrix_flops_tf32", matrixTf32},
          {"matrix_flops_bf16", matrixBf16},
          {"matrix_flops_fp8", matrixFp8},
          {"vector_flops_fp32", vectorFp32},
          {"vector_ops_int32", vectorInt32},
          {"hbm_bytes", hbmBytes},
          {"hbm_bandwidth", hbmBandwidth},
          {"nvlink_bandwidth", nvlink.bandwidth},
          {"nvlink_latency", nvlink.latency},
          {"infiniband_bandwidth", infiniband.bandwidth},
          {"infiniband_latency", infiniband.latency},
          {"gpus_per_node", gpusPerNode},
          {"launch_overhead", launchOverhead},
          {"gemm_workspace_bytes", gemmWorkspaceBytes},
          {"allow_tf32", allowTf32}};
}

/// The most bytes a device field may give: 2^53, where doubles (JSON's
/// numbers) stop being exact integers, far above any device's memory.
static constexpr double kMaxDeviceBytes = 9007199254740992.0;

/// The most GPUs one node (one NVLink domain) may hold: far above the
/// largest NVLink switch systems (576 GPUs).
static constexpr int64_t kMaxGpusPerNode = 65536;

llvm::Expected<DeviceSpec> DeviceSpec::fromJson(const nlohmann::json &json) {
  if (!json.is_object())
    return llvm::createStringError("a device must be a JSON object");
  DeviceSpec device;
  if (auto base = json.find("base"); base != json.end()) {
    if (!base->is_string())
      return llvm::createStringError("'base' must be a device name");
    llvm::Expected<DeviceSpec> builtin = lookupDevice(base->get<std::string>());
    if (!builtin)
      return builtin.takeError();
    device = *builtin;
  } else {
    device.name = "custom";
  }
  struct Field {
    const char *key;
    double *value;
  };
  double hbmBytes = static_cast<double>(device.hbmBytes);
  double workspace = static_cast<double>(device.gemmWorkspaceBytes);
  Field fields[] = {{"matrix_flops_fp32", &device.matrixFp32},
                    {"matrix_flops_tf32", &device.matrixTf32},
                    {"matrix_flops_bf16", &device.matrixBf16},
                    {"matrix_flops_fp8", &device.matrixFp8},
                    {"vector_flops_fp32", &device.vectorFp32},
                    {"vector_ops_int32", &device.vectorInt32},
                    {"hbm_bytes", &hbmBytes},
                    {"hbm_bandwidth", &device.hbmBandwidth},
                    {"nvlink_bandwidth", &device.nvlink.bandwidth},
                    {"nvlink_latency", &device.nvlink.latency},
                    {"infiniband_bandwidth", &device.infiniband.bandwidth},
                    {"infiniband_latency", &device.infiniband.latency},
                    {"launch_overhead", &device.launchOverhead},
                    {"gemm_workspace_bytes", &workspace}};
  for (auto &[key, value] : json.items()) {
    if (key == "base")
      continue;
    if (key == "name" || key == "description") {
      if (!value.is_string())
        return llvm::createStringError("'" + key + "' must be a string");
      (key == "name" ? device.name : device.description) =
          value.get<std::string>();
      continue;
    }
    if (key == "gpus_per_node") {
      if (!value.is_number_integer() || value.get<double>() < 1 ||
          value.get<double>() > kMaxGpusPerNode)
        return llvm::createStringError(
            "'gpus_per_node' must be an integer from 1 to " +
            std::to_string(kMaxGpusPerNode) + ", got " + value.dump());
      device.gpusPerNode = value.get<int64_t>();
      continue;
    }
    if (key == "allow_tf32") {
      if (!value.is_boolean())
        return llvm::createStringError("'allow_tf32' must be true or false");
      device.allowTf32 = value.get<bool>();
      continue;
    }
    Field *field =
        llvm::find_if(fields, [&](const Field &f) { return key == f.key; });
    if (field == std::end(fields))
      return llvm::createStringError("unknown device field '" + key + "'");
    // 1e400 parses as infinity; byte counts must also convert to int64
    // exactly (2^64-1 would become a 0-byte workspace).
    if (!value.is_number() || !std::isfinite(value.get<double>()) ||
        value.get<double>() < 0)
      return llvm::createStringError("'" + key +
                                     "' must be a finite non-negative number");
    *field->value = value.get<double>();
    if ((field->value == &hbmBytes || field->value == &workspace) &&
        *field->value > kMaxDeviceBytes)
      return llvm::createStringError(
          "'" + key + "' must be at most 2^53 bytes, got " + value.dump());
  }
  device.hbmBytes = static_cast<int64_t>(hbmBytes);
  device.gemmWorkspaceBytes = static_cast<int64_t>(workspace);
  if (device.vectorFp32 <= 0 || device.hbmBandwidth <= 0 ||
      device.matrixFp32 <= 0)
    return llvm::createStringError(
        "a device needs positive 'vector_flops_fp32', 'matrix_flops_fp32' and "
        "'hbm_bandwidth' (or a 'base' device)");
  // Collectives divide their bytes by the link bandwidths.
  if (device.nvlink.bandwidth <= 0 || device.infiniband.bandwidth <= 0)
    return llvm::createStringError(
        "a device needs positive 'nvlink_bandwidth' and "
        "'infiniband_bandwidth' (or a 'base' device)");
  return device;
}

llvm::Expected<DeviceSpec> tgc::loadDeviceFile(StringRef path) {
  // A device file is a few lines of JSON: 16 MiB bounds it generously.
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      readInputFile(path, uint64_t(1) << 24);
  if (!buffer)
    return llvm::createStringError("device file " +
                                   llvm::toString(buffer.takeError()));
  nlohmann::json json = nlohmann::json::parse(
      (*buffer)->getBuffer().begin(), (*buffer)->getBuffer().end(),
      /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    return llvm::createStringError("device file '" + path.str() +
                                   "' is not valid JSON");
  llvm::Expected<DeviceSpec> device = DeviceSpec::fromJson(json);
  if (!device)
    return llvm::createStringError("device file '" + path.str() +
                                   "': " + llvm::toString(device.takeError()));
  return device;
}

DictionaryAttr DeviceSpec::toAttr(MLIRContext *context) const {
  Builder builder(context);
  SmallVector<NamedAttribute> fields;
  nlohmann::json json = toJson();
  for (auto &[key, value] : json.items()) {
    Attribute attr;
    if (value.is_string())
      attr = builder.getStringAttr(value.get<std::string>());
    else if (value.is_boolean())
      attr = builder.getBoolAttr(value.get<bool>());
    else if (value.is_number_integer())
      attr = builder.getI64IntegerAttr(value.get<int64_t>());
    else
      attr = builder.getF64FloatAttr(value.get<double>());
    fields.push_back(builder.getNamedAttr(key, attr));
  }
  return builder.getDictionaryAttr(fields);
}

llvm::Expected<DeviceSpec> DeviceSpec::fromAttr(DictionaryAttr attr) {
  nlohmann::json json = nlohmann::json::object();
  for (NamedAttribute field : attr) {
    std::string key = field.getName().str();
    Attribute value = field.getValue();
    if (auto string = dyn_cast<StringAttr>(value))
      json[key] = string.getValue().str();
    else if (auto flag = dyn_cast<BoolAttr>(value))
      json[key] = flag.getValue();
    else if (auto integer = dyn_cast<IntegerAttr>(value))
      json[key] = integer.getValue().getSExtValue();
    else if (auto number = dyn_cast<FloatAttr>(value))
      json[key] = number.getValueAsDouble();
    else
      return llvm::createStringError("field '" + key +
                                     "' of tg.device must be a string, a "
                                     "boolean or a number");
  }
  return fromJson(json);
}

llvm::Expected<DeviceSpec> tgc::resolveDevice(StringRef name, StringRef file) {
  if (!name.empty() && !file.empty())
    return llvm::createStringError("give --device or --device-file, not both");
  if (!file.empty())
    return loadDeviceFile(file);
  return lookupDevice(name.empty() ? getDefaultDeviceName() : name);
}

void tgc::setModuleDevice(Operation *module, const DeviceSpec &device) {
  module->setAttr(tg::TGDialect::kDeviceAttrName,
                  device.toAttr(module->getContext()));
}

llvm::Expected<DeviceSpec> tgc::getDeviceOf(Operation *op, StringRef name) {
  if (!name.empty())
    return lookupDevice(name);
  for (Operation *scope = op; scope; scope = scope->getParentOp())
    if (auto attr = scope->getAttrOfType<DictionaryAttr>(
            tg::TGDialect::kDeviceAttrName)) {
      llvm::Expected<DeviceSpec> device = DeviceSpec::fromAttr(attr);
      if (!device)
        return llvm::createStringError("invalid tg.device: " +
                                       llvm::toString(device.takeError()));
      return device;
    }
  return lookupDevice(getDefaultDeviceName());
}
