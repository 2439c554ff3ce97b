//===- TensorVisit.h - element vectors of tensors by storage ----*- C++ -*-===//
//
// Generic code over a tensor's elements, whatever storage holds them: the
// op kernels and the simulated ranks' block copies share it.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_EVAL_TENSORVISIT_H
#define TGC_EVAL_TENSORVISIT_H

#include "tgc/Eval/Tensor.h"

namespace tgc::detail {

/// Calls `fn(source, destination)` with the element vectors of two tensors
/// of the same storage.
template <typename Fn>
void visitData(const Tensor &source, Tensor &destination, Fn &&fn) {
  switch (source.getStorage()) {
  case Tensor::Storage::Float:
    return fn(source.floats(), destination.floats());
  case Tensor::Storage::Double:
    return fn(source.doubles(), destination.doubles());
  case Tensor::Storage::Int:
    return fn(source.ints(), destination.ints());
  }
}

} // namespace tgc::detail

#endif // TGC_EVAL_TENSORVISIT_H
