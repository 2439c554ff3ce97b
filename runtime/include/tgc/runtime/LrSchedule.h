//===- LrSchedule.h - the learning rate of each training step ---*- C++ -*-===//
//
// The schedule `tgc train` and a generated `train` give the step's `lr`
// hyper-parameter (--warmup, --lr-schedule, --decay-steps): one function of
// the absolute step, so that the two trainers, and a run resumed from a
// checkpoint with the same flags, use the same rate at every step.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_LRSCHEDULE_H
#define TGC_RUNTIME_LRSCHEDULE_H

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tgc::rt {

struct LrSchedule {
  /// Steps of linear warmup: step n (from 0) runs at peak * (n + 1) / warmup
  /// (llm.c's warmup).
  unsigned warmup = 0;
  /// After the warmup: the peak (constant), or a cosine from the peak
  /// towards `minLr` (PyTorch's CosineAnnealingLR with eta_min, nanoGPT's
  /// decay to min_lr), which it reaches after step `decaySteps` (counted
  /// from the start of training, not from a resumed step) and keeps.
  bool cosine = false;
  uint64_t decaySteps = 0;
  double minLr = 0;

  bool isConstant() const { return !warmup && !cosine; }

  /// The rate of step `n` (0 for the first step of training).
  double at(double peak, uint64_t n) const {
    if (n < warmup)
      return peak * double(n + 1) / double(warmup);
    if (!cosine || decaySteps <= warmup)
      return peak;
    double progress =
        std::min(1.0, double(n - warmup) / double(decaySteps - warmup));
    return minLr + (peak - minLr) * 0.5 *
                       (1.0 + std::cos(3.14159265358979323846 * progress));
  }
};

} // namespace tgc::rt

#endif // TGC_RUNTIME_LRSCHEDULE_H
