//===- OptionLimits.cpp - the range of every numeric pipeline knob -------===//
//
// One table: each numeric option of TrainingPipelineOptions with the values
// it takes. NaN and infinities are refused everywhere (a learning rate of
// 1e400 parses as inf); counts have an upper bound so that a typo cannot
// ask for a million micro-batches.
//
//===----------------------------------------------------------------------===//

#include "tgc/Pipeline/Options.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace tgc;

namespace {
struct OptionRange {
  llvm::StringRef name;
  double value;
  double min, max;
  /// Whether `min` itself, or `max`, is excluded.
  bool minExclusive = false, maxExclusive = false;
};
} // namespace

/// `value` as printf's %.10g writes it: 65536, 1e+06, nan, inf.
static std::string formatNumber(double value) {
  return llvm::formatv("{0}", llvm::format("%.10g", value)).str();
}

llvm::Error tgc::validatePipelineOptions(const TrainingPipelineOptions &o) {
  const OptionRange ranges[] = {
      {"lora", double(o.lora), 0, 1048576},
      {"lora-alpha", o.loraAlpha, 0, 1e6},
      {"micro-batches", double(o.microBatches), 1, 65536},
      {"lr", o.lr, 0, 1e6},
      {"momentum", o.momentum, 0, 1, false, /*maxExclusive=*/true},
      {"beta1", o.beta1, 0, 1, false, /*maxExclusive=*/true},
      {"beta2", o.beta2, 0, 1, false, /*maxExclusive=*/true},
      {"eps", o.eps, 0, 1, /*minExclusive=*/true},
      {"weight-decay", o.weightDecay, 0, 1e6},
      {"clip-norm", o.clipNorm, 0, 1e30},
      {"init-scale", o.initScale, 0, 1e38, /*minExclusive=*/true},
      {"growth-interval", double(o.growthInterval), 1, 1e9},
      {"amax-history", double(o.amaxHistory), 1, 65536},
      {"fp8-margin", double(o.fp8Margin), 0, 64},
      {"zero", double(o.zero), 0, 3},
      {"grad-bucket-mb", double(o.gradBucketMB), 0, 1048576},
      {"virtual-stages", double(o.virtualStages), 0, 1024},
  };
  for (const OptionRange &range : ranges) {
    bool inRange = std::isfinite(range.value) &&
                   (range.maxExclusive ? range.value < range.max
                                       : range.value <= range.max) &&
                   (range.minExclusive ? range.value > range.min
                                       : range.value >= range.min);
    if (!inRange)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("--{0} must be a finite number in {1}{2}, {3}{4}, "
                        "got {5}",
                        range.name, range.minExclusive ? "(" : "[",
                        formatNumber(range.min), formatNumber(range.max),
                        range.maxExclusive ? ")" : "]",
                        formatNumber(range.value))
              .str());
  }
  for (auto [name, value] :
       {std::pair<std::string, std::string>("scatter", o.scatterBuckets),
        {"gather", o.gatherBuckets}})
    if (value != "auto" && value != "always" && value != "never")
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--" + name +
                                         "-buckets is auto, always or never, "
                                         "got '" +
                                         value + "'");
  // An optimizer's options given to another would be silently unused.
  auto misplaced = [&](llvm::StringRef option, llvm::StringRef kinds) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--" + option + " is an option of " + kinds +
                                       "; the optimizer is " +
                                       stringifyOptimizerKind(o.optimizer));
  };
  bool adamLike =
      o.optimizer == OptimizerKind::AdamW || o.optimizer == OptimizerKind::LAMB;
  if (o.optimizer != OptimizerKind::None) {
    if (o.optimizer != OptimizerKind::SGD && o.momentum != 0.0)
      return misplaced("momentum", "sgd");
    if (o.optimizer != OptimizerKind::SGD && o.nesterov)
      return misplaced("nesterov", "sgd");
    if (!adamLike && o.beta1 != 0.9)
      return misplaced("beta1", "adamw and lamb");
    if (!adamLike && o.beta2 != 0.999)
      return misplaced("beta2", "adamw and lamb");
    if (!adamLike && o.eps != 1e-8)
      return misplaced("eps", "adamw and lamb");
  }
  if (o.nesterov && o.momentum == 0.0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--nesterov needs --momentum above 0");
  return llvm::Error::success();
}
