//===- Svg.h - helpers of the SVG charts tgc writes ---------------*- C++
//-*-===//

#ifndef TGC_LIB_ANALYSIS_SVG_H
#define TGC_LIB_ANALYSIS_SVG_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tgc::svg {

/// `bytes` with a binary unit, for an axis label; with `significant` > 0,
/// that many significant digits (for close ticks).
inline std::string formatBytes(double bytes, int significant = 0) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (significant > 0)
    os << llvm::format("%.*g %s", significant, bytes, units[unit]);
  else
    os << llvm::format(bytes >= 10 || unit == 0 ? "%.0f %s" : "%.1f %s", bytes,
                       units[unit]);
  return text;
}

/// `text` with XML's special characters escaped.
inline std::string escapeXml(llvm::StringRef text) {
  std::string escaped;
  for (char c : text) {
    switch (c) {
    case '<':
      escaped += "&lt;";
      break;
    case '>':
      escaped += "&gt;";
      break;
    case '&':
      escaped += "&amp;";
      break;
    case '"':
      escaped += "&quot;";
      break;
    default:
      escaped += c;
    }
  }
  return escaped;
}

} // namespace tgc::svg

#endif // TGC_LIB_ANALYSIS_SVG_H
