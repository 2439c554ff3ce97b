//===- Device.h - the accelerators tgc plans for ----------------*- C++ -*-===//
//
// What the cost model and the memory budget know about a GPU: peak dense
// FLOP/s per element type, HBM capacity and bandwidth, the links between
// GPUs, and the per-kernel launch overhead. A built-in table holds public
// datasheet figures; `--device-file` reads the same fields from JSON.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_DEVICE_H
#define TGC_ANALYSIS_DEVICE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace tgc {

/// A link between GPUs, in the alpha-beta model: a message of n bytes takes
/// latency + n / bandwidth.
struct LinkSpec {
  double bandwidth = 0; // bytes/s, one direction
  double latency = 0;   // s
};

struct DeviceSpec {
  std::string name;
  std::string description;
  /// Peak dense FLOP/s on the matrix units (tensor cores), per input type;
  /// 0 where the device has none for that type (the next wider type is used).
  double matrixFp32 = 0; // plain fp32 GEMM (no tensor cores)
  double matrixTf32 = 0;
  double matrixBf16 = 0; // also fp16
  double matrixFp8 = 0;
  /// Peak FLOP/s of the vector units (elementwise work, reductions).
  double vectorFp32 = 0;
  /// 32-bit integer instructions per second of the vector units (Philox's
  /// rounds for dropout masks); 0: integer work is not modelled.
  double vectorInt32 = 0;
  int64_t hbmBytes = 0;
  double hbmBandwidth = 0; // bytes/s
  /// NVLink between the GPUs of one node, InfiniBand (one NIC per GPU)
  /// between nodes; a collective whose group spans nodes runs at the
  /// InfiniBand figures.
  LinkSpec nvlink;
  LinkSpec infiniband;
  /// GPUs in one NVLink domain (a node): devices are numbered so that
  /// ranks [k * gpusPerNode, (k + 1) * gpusPerNode) share node k.
  int64_t gpusPerNode = 8;
  /// Fixed cost of one kernel launch, in seconds.
  double launchOverhead = 0;
  /// The GEMM library's workspace (cuBLASLt), allocated once per device.
  int64_t gemmWorkspaceBytes = 0;
  /// Run f32 matmuls as TF32 (as PyTorch's allow_tf32 does).
  bool allowTf32 = false;

  /// Peak FLOP/s of the matrix units for inputs of `type` (f32, f16, bf16,
  /// f8, f64...).
  double getMatrixPeak(mlir::Type type) const;

  /// The JSON form, as `--device-file` reads it (see docs/cost-model.md).
  nlohmann::json toJson() const;
  static llvm::Expected<DeviceSpec> fromJson(const nlohmann::json &json);

  /// The attribute form, the JSON's fields in a dictionary: what a module's
  /// `tg.device` holds, so every pass and report reads the one device the
  /// driver resolved.
  mlir::DictionaryAttr toAttr(mlir::MLIRContext *context) const;
  static llvm::Expected<DeviceSpec> fromAttr(mlir::DictionaryAttr attr);
};

/// The built-in devices, in table order.
llvm::ArrayRef<DeviceSpec> getBuiltinDevices();

/// The built-in device called `name` (case-insensitive; "H100" finds
/// "H100-SXM"), or an error listing the known names.
llvm::Expected<DeviceSpec> lookupDevice(llvm::StringRef name);

/// Reads a device from a JSON file: an object with the fields of
/// `DeviceSpec::toJson`; a `base` field names a built-in device whose values
/// the file overrides.
llvm::Expected<DeviceSpec> loadDeviceFile(llvm::StringRef path);

/// The name of the default device (H100-SXM).
llvm::StringRef getDefaultDeviceName();

/// The device the user chose: the built-in `name` or the JSON `file` (at
/// most one of them; neither: the default device). The one place where a
/// device is parsed from what the user wrote.
llvm::Expected<DeviceSpec> resolveDevice(llvm::StringRef name,
                                         llvm::StringRef file);

/// Records `device` as `module`'s `tg.device`.
void setModuleDevice(mlir::Operation *module, const DeviceSpec &device);

/// The device a pass over `op` plans for: the built-in device `name` when
/// one is given (a pass option), else the enclosing module's `tg.device`,
/// else the default device.
llvm::Expected<DeviceSpec> getDeviceOf(mlir::Operation *op,
                                       llvm::StringRef name = {});

} // namespace tgc

#endif // TGC_ANALYSIS_DEVICE_H
