//===- Data.h - the batches of the generated trainer ------------*- C++ -*-===//

#ifndef TGC_RUNTIME_SRC_DATA_H
#define TGC_RUNTIME_SRC_DATA_H

#include <cstdint>
#include <string>
#include <vector>

namespace tgc::rt {

/// Reads a token file in nanoGPT's `train.bin` format (little-endian uint16
/// ids, nothing else) for rows of `seq` ids below `vocabulary`: the same
/// checks and messages as `tgc train --data FILE.bin`.
bool loadTokenFile(const std::string &path, int64_t seq, int64_t vocabulary,
                   std::vector<uint16_t> &tokens, std::string &error);

} // namespace tgc::rt

#endif // TGC_RUNTIME_SRC_DATA_H
