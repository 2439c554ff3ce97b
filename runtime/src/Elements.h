//===- Elements.h - stored elements as numbers, on the host -----*- C++ -*-===//

#ifndef TGC_RUNTIME_SRC_ELEMENTS_H
#define TGC_RUNTIME_SRC_ELEMENTS_H

#include "tgc/runtime/Runtime.h"

#include <vector>

namespace tgc::rt {

/// Element i of host bytes `data` of `type`, as a double.
double loadDouble(const void *data, DType type, int64_t i);
/// Stores `value` as element i of `type`, rounded as a kernel would round it.
void storeDouble(void *data, DType type, int64_t i, double value);
/// `count` elements of a float type widened to f32 (f64 narrowed).
std::vector<float> loadFloats(const void *data, DType type, int64_t count);
void storeFloats(const std::vector<float> &values, void *data, DType type);
/// The elements of `arg` in its (local) shape.
int64_t getNumElements(const ArgumentInfo &arg);

} // namespace tgc::rt

#endif // TGC_RUNTIME_SRC_ELEMENTS_H
