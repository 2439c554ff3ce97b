//===- Elements.h - stored elements as numbers, on the host -----*- C++ -*-===//

#ifndef TGC_RUNTIME_SRC_ELEMENTS_H
#define TGC_RUNTIME_SRC_ELEMENTS_H

#include "tgc/runtime/Runtime.h"

#include <optional>
#include <string>
#include <vector>

namespace tgc::rt {

/// Element i of host bytes `data` of `type`, as a double.
double loadDouble(const void *data, DType type, int64_t i);
/// Stores `value` as element i of `type`, rounded as a kernel would round it.
void storeDouble(void *data, DType type, int64_t i, double value);
/// `count` elements of a float type widened to f32 (f64 narrowed).
std::vector<float> loadFloats(const void *data, DType type, int64_t count);
void storeFloats(const std::vector<float> &values, void *data, DType type);
/// The type whose safetensors name is `name` (getSafetensorsDType's names).
std::optional<DType> parseFileDType(const std::string &name);
/// `data`, elements of `from`, as elements of `to` in `out`: a float type
/// to a float type rounded as storeDouble rounds, an integer type (or i1)
/// to one that holds each value. False, with `error` naming the element,
/// for a float to an integer or the reverse and for an integer that does
/// not fit.
bool convertElements(const std::vector<char> &data, DType from, DType to,
                     std::vector<char> &out, std::string &error);
/// The same for `count` elements at `data` into `out` (room for them),
/// an element named in `error` counted from `first` (where `data` lies in
/// a larger value).
bool convertElements(const char *data, int64_t count, DType from, DType to,
                     char *out, std::string &error, int64_t first = 0);
/// The elements of `arg` in its (local) shape.
int64_t getNumElements(const ArgumentInfo &arg);

} // namespace tgc::rt

#endif // TGC_RUNTIME_SRC_ELEMENTS_H
