//===- Options.cpp - the names of the pipeline's enum knobs ---------------===//

#include "tgc/Pipeline/Options.h"

using namespace tgc;
namespace cl = llvm::cl;

llvm::StringRef tgc::stringifyPrecisionPolicy(PrecisionPolicy policy) {
  switch (policy) {
  case PrecisionPolicy::FP32:
    return "fp32";
  case PrecisionPolicy::BF16:
    return "bf16";
  case PrecisionPolicy::FP16:
    return "fp16";
  case PrecisionPolicy::FP8:
    return "fp8";
  }
  llvm_unreachable("unknown precision policy");
}

llvm::StringRef tgc::stringifyOptimizerKind(OptimizerKind kind) {
  switch (kind) {
  case OptimizerKind::None:
    return "none";
  case OptimizerKind::SGD:
    return "sgd";
  case OptimizerKind::AdamW:
    return "adamw";
  case OptimizerKind::LAMB:
    return "lamb";
  case OptimizerKind::Adafactor:
    return "adafactor";
  }
  llvm_unreachable("unknown optimizer");
}

llvm::StringRef tgc::stringifyRecomputeStrategy(RecomputeStrategy strategy) {
  switch (strategy) {
  case RecomputeStrategy::DP:
    return "dp";
  case RecomputeStrategy::None:
    return "none";
  case RecomputeStrategy::Full:
    return "full";
  case RecomputeStrategy::Sqrt:
    return "sqrt";
  case RecomputeStrategy::Selective:
    return "selective";
  }
  llvm_unreachable("unknown recompute strategy");
}

cl::ValuesClass tgc::getPrecisionPolicyValues() {
  return cl::values(
      clEnumValN(PrecisionPolicy::FP32, "fp32", "f32 everywhere (default)"),
      clEnumValN(PrecisionPolicy::BF16, "bf16", "bf16 compute"),
      clEnumValN(PrecisionPolicy::FP16, "fp16",
                 "f16 compute, dynamic loss scaling"),
      clEnumValN(PrecisionPolicy::FP8, "fp8",
                 "fp8 matmuls with delayed scaling, bf16 elsewhere"));
}

cl::ValuesClass tgc::getOptimizerKindValues() {
  return cl::values(
      clEnumValN(OptimizerKind::None, "none", "no update (default)"),
      clEnumValN(OptimizerKind::SGD, "sgd", "SGD with optional momentum"),
      clEnumValN(OptimizerKind::AdamW, "adamw", "AdamW"),
      clEnumValN(OptimizerKind::LAMB, "lamb", "LAMB"),
      clEnumValN(OptimizerKind::Adafactor, "adafactor", "Adafactor"));
}

cl::ValuesClass tgc::getRecomputeStrategyValues() {
  return cl::values(
      clEnumValN(RecomputeStrategy::DP, "dp",
                 "the cheapest plan that fits the memory budget (default; "
                 "nothing without a budget)"),
      clEnumValN(RecomputeStrategy::None, "none", "keep every activation"),
      clEnumValN(RecomputeStrategy::Full, "full", "keep only layer inputs"),
      clEnumValN(RecomputeStrategy::Sqrt, "sqrt",
                 "keep every sqrt(n)-th layer input"),
      clEnumValN(RecomputeStrategy::Selective, "selective",
                 "Megatron's: recompute the attention core"));
}
