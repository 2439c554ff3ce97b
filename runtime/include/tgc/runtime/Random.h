//===- Random.h - the initial values and the data of a training run -*- C++
//-*-===//
//
// What `tgc run --random-inputs SEED` and `tgc train --seed SEED` start from,
// and the batches `tgc train` feeds each step, as pure C++ over a description
// of each argument. The interpreter (lib/Interpreter/Inputs.cpp,
// lib/Training/Trainer.cpp) and the generated trainer both call these, so a
// generated project trains on exactly the values and batches `tgc train`
// does. The generators are std::mt19937_64 with the standard library's
// distributions: the same library gives the same numbers.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_RANDOM_H
#define TGC_RUNTIME_RANDOM_H

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <random>
#include <string>

namespace tgc::rt {

/// The role of a step argument (tg.role).
enum class ArgRole { Param, State, Input, Label, Hyper };

/// How an argument starts, as its attributes say.
struct RandomSpec {
  ArgRole role = ArgRole::Input;
  /// f16/bf16/f32/f8/f64 (else an integer or i1).
  bool isFloat = true;
  bool isI1 = false;
  /// tg.init of a float argument: normal (default), zeros or ones.
  enum class Init { Normal, Zeros, Ones } init = Init::Normal;
  /// tg.default: the value to use, whatever the seed.
  bool hasDefault = false;
  double defaultValue = 0;
  /// For integer ids: the rows of the embedding or classes of the
  /// cross-entropy that read it (0: unbounded).
  int64_t idBound = 0;
  /// The ids outside [0, idBound) the losses that read it ignore (their
  /// ignore_index), at most kMaxIgnoredIds of them.
  static constexpr int kMaxIgnoredIds = 4;
  int numIgnoredIds = 0;
  int64_t ignoredIds[kMaxIgnoredIds] = {};
};

/// The generator of argument `index` under `seed`: seed and index mixed by
/// splitmix64's constants, so that neighbouring seeds give unrelated streams
/// and a value does not change when other arguments are added.
inline std::mt19937_64 argumentGenerator(uint64_t seed, unsigned index) {
  return std::mt19937_64(seed * 0x9E3779B97F4A7C15ull +
                         (index + 1) * 0xBF58476D1CE4E5B9ull);
}

/// The values of a float argument (as doubles, to be rounded to its type):
/// its default; else param: normal(0, 0.02) or its tg.init; state: zeros;
/// hyper: 1e-3; input: normal(0, 1). `store(i, value)` takes element i,
/// for i in [0, count) in order: the values of a prefix are the whole
/// value's (a rank keeps its block's and stops at the block's end).
template <typename Store>
void generateFloats(const RandomSpec &spec, int64_t count, uint64_t seed,
                    unsigned index, Store store) {
  if (spec.hasDefault) {
    for (int64_t i = 0; i < count; ++i)
      store(i, spec.defaultValue);
    return;
  }
  std::mt19937_64 generator = argumentGenerator(seed, index);
  std::normal_distribution<double> normal(
      0.0, spec.role == ArgRole::Param ? 0.02 : 1.0);
  for (int64_t i = 0; i < count; ++i) {
    double value = 0.0;
    if (spec.role == ArgRole::Hyper)
      value = 1e-3;
    else if (spec.init != RandomSpec::Init::Normal)
      value = spec.init == RandomSpec::Init::Ones ? 1.0 : 0.0;
    else if (spec.role != ArgRole::State)
      value = normal(generator);
    store(i, value);
  }
}

inline void randomFloats(const RandomSpec &spec, int64_t count, uint64_t seed,
                         unsigned index, double *out) {
  generateFloats(spec, count, seed, index,
                 [&](int64_t i, double value) { out[i] = value; });
}

/// The values of an integer argument: its default; else state: zeros; i1:
/// uniform in [0, 2); hyper: [0, 2^31) (seeds); label: [0, bound or 2);
/// other ids: [0, bound or 16). `store` as generateFloats's.
template <typename Store>
void generateInts(const RandomSpec &spec, int64_t count, uint64_t seed,
                  unsigned index, Store store) {
  if (spec.hasDefault || spec.role == ArgRole::State) {
    int64_t value =
        spec.hasDefault ? static_cast<int64_t>(spec.defaultValue) : 0;
    for (int64_t i = 0; i < count; ++i)
      store(i, value);
    return;
  }
  std::mt19937_64 generator = argumentGenerator(seed, index);
  int64_t high = 16;
  if (spec.isI1)
    high = 2;
  else if (spec.role == ArgRole::Hyper)
    high = int64_t(1) << 31;
  else if (spec.role == ArgRole::Label)
    high = spec.idBound ? spec.idBound : 2;
  else if (spec.idBound)
    high = spec.idBound;
  std::uniform_int_distribution<int64_t> uniform(0, std::max<int64_t>(high, 1) -
                                                        1);
  for (int64_t i = 0; i < count; ++i)
    store(i, uniform(generator));
}

inline void randomInts(const RandomSpec &spec, int64_t count, uint64_t seed,
                       unsigned index, int64_t *out) {
  generateInts(spec, count, seed, index,
               [&](int64_t i, int64_t value) { out[i] = value; });
}

/// The value a training run gives an integer `input` the data does not
/// feed, by its name, as Hugging Face's models assume when called with their
/// ids alone: a name containing `mask` (attention_mask) all ones, nothing
/// masked; `token_type` (token_type_ids) zeros, one segment; `position`
/// (position_ids) 0, 1, ... along the last dimension. Case-insensitive.
enum class NamedInput { None, Mask, TokenTypes, Positions };

inline NamedInput getNamedInput(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (name.find("mask") != std::string::npos)
    return NamedInput::Mask;
  if (name.find("token_type") != std::string::npos)
    return NamedInput::TokenTypes;
  if (name.find("position") != std::string::npos)
    return NamedInput::Positions;
  return NamedInput::None;
}

/// The `count` values of a `kind` input whose last dimension is `length`;
/// `store` as generateFloats's.
template <typename Store>
void generateNamedInput(NamedInput kind, int64_t count, int64_t length,
                        Store store) {
  for (int64_t i = 0; i < count; ++i)
    store(i, kind == NamedInput::Mask        ? int64_t(1)
             : kind == NamedInput::Positions ? (length ? i % length : 0)
                                             : int64_t(0));
}

/// The seed of step n (from 0) of a run seeded with `seed`: fresh copy-task
/// ids, dropout seeds and token windows each step.
inline uint64_t stepSeed(uint64_t seed, unsigned n) {
  return seed + 1000003ull * (n + 1);
}

} // namespace tgc::rt

#endif // TGC_RUNTIME_RANDOM_H
