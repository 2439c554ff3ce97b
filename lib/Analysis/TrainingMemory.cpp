//===- TrainingMemory.cpp - persistent memory of a training step ----------===//

#include "tgc/Analysis/TrainingMemory.h"

#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGInterfaces.h"

#include "llvm/Support/Format.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace tgc;

static void add(MemoryCategory &category, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  ++category.tensors;
  category.elements += tensor.getNumElements();
  category.bytes += tg::getTensorByteSize(tensor);
}

static StringRef getRole(DictionaryAttr attrs) {
  auto role = attrs ? attrs.getAs<StringAttr>(tg::TGDialect::kRoleAttrName)
                    : StringAttr();
  return role ? role.getValue() : StringRef();
}

TrainingMemory TrainingMemory::compute(func::FuncOp differentiated,
                                       func::FuncOp step, StringRef optimizer) {
  TrainingMemory memory;
  memory.functionName = step.getName().str();
  memory.optimizer = optimizer.str();
  SmallVector<DictionaryAttr> attrs;
  step.getAllArgAttrs(attrs);
  for (auto [type, argAttrs] : llvm::zip(step.getArgumentTypes(), attrs)) {
    StringRef role = getRole(argAttrs);
    if (role == "param")
      add(memory.parameters, type);
    else if (role == "state")
      add(memory.optimizerState, type);
  }
  attrs.clear();
  differentiated.getAllResultAttrs(attrs);
  attrs.resize(differentiated.getNumResults());
  for (auto [type, resultAttrs] :
       llvm::zip(differentiated.getResultTypes(), attrs))
    if (getRole(resultAttrs) == "grad") {
      add(memory.gradients, type);
      add(memory.trainable, type);
    }
  return memory;
}

void TrainingMemory::print(raw_ostream &os) const {
  double params = std::max<int64_t>(1, parameters.elements);
  os << "persistent training memory of @" << functionName << " (" << optimizer
     << "), per device\n";
  os << llvm::format("  %-22s %8s %15s %15s %12s\n", "category", "tensors",
                     "elements", "bytes", "bytes/param");
  auto row = [&](const MemoryCategory &c, bool withBytes) {
    os << llvm::format("  %-22s %8lld %15lld", c.name.c_str(),
                       static_cast<long long>(c.tensors),
                       static_cast<long long>(c.elements));
    if (withBytes)
      os << llvm::format(" %15lld %12.2f", static_cast<long long>(c.bytes),
                         c.bytes / params);
    os << "\n";
  };
  row(parameters, true);
  row(trainable, false);
  row(gradients, true);
  row(optimizerState, true);
  os << llvm::format("  %-22s %8s %15s %15lld %12.2f\n", "total", "", "",
                     static_cast<long long>(getTotalBytes()),
                     getTotalBytes() / params);
  os << llvm::format("  trainable: %.4f%% of the parameters\n",
                     100.0 * trainable.elements / params);
}

nlohmann::json TrainingMemory::toJson() const {
  auto category = [](const MemoryCategory &c) {
    return nlohmann::json{
        {"tensors", c.tensors}, {"elements", c.elements}, {"bytes", c.bytes}};
  };
  return {{"function", functionName},
          {"optimizer", optimizer},
          {"parameters", category(parameters)},
          {"trainable_parameters", category(trainable)},
          {"gradients", category(gradients)},
          {"optimizer_state", category(optimizerState)},
          {"total_bytes", getTotalBytes()}};
}
