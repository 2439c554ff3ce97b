//===- Data.cpp - the batches of the generated trainer --------------------===//

#include "Data.h"

#include <fstream>
#include <iterator>

using namespace tgc::rt;

bool tgc::rt::loadTokenFile(const std::string &path, int64_t seq,
                            int64_t vocabulary, std::vector<uint16_t> &tokens,
                            std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read token file '" + path + "'";
    return false;
  }
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  auto fail = [&](const std::string &message) {
    error = "token file '" + path + "': " + message;
    return false;
  };
  if (bytes.size() % 2 != 0)
    return fail("its size (" + std::to_string(bytes.size()) +
                " bytes) is odd; expected little-endian uint16 token ids");
  tokens.resize(bytes.size() / 2);
  for (size_t i = 0; i < tokens.size(); ++i) {
    uint16_t token = bytes[2 * i] | static_cast<uint16_t>(bytes[2 * i + 1])
                                        << 8;
    if (token >= vocabulary)
      return fail("token " + std::to_string(i) + " is " +
                  std::to_string(token) + ", not below the vocabulary size " +
                  std::to_string(vocabulary));
    tokens[i] = token;
  }
  if (static_cast<int64_t>(tokens.size()) < seq + 1)
    return fail("it holds " + std::to_string(tokens.size()) +
                " tokens; a window of the sequence length " +
                std::to_string(seq) + " and its next token need " +
                std::to_string(seq + 1));
  return true;
}
