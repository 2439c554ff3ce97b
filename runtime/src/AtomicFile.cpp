//===- AtomicFile.cpp - files written whole or not at all -----------------===//

#include "AtomicFile.h"

#include <cstdio>
#include <fstream>

bool tgc::rt::writeFileAtomically(
    const std::string &path, const std::function<void(std::ostream &)> &write,
    std::string &error) {
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (out)
      write(out);
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      error = "cannot write '" + path + "'";
      return false;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}
