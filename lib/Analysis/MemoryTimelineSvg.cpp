//===- MemoryTimelineSvg.cpp - live memory over the op sequence, as SVG ---===//
//
// A stacked area chart: one band per memory kind, the x axis the op
// sequence, the y axis live bytes. The phases are shaded behind it and the
// peak is marked. Long programs are bucketed to one column per pixel, each
// column showing the op with the most live bytes in it, so the peak survives.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/MemorySimulator.h"

#include "Svg.h"

#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace tgc;

static const char *kKindColors[kNumMemoryKinds] = {
    "#4e79a7", "#f28e2b", "#76b7b2", "#bab0ac",
    "#e15759", "#59a14f", "#edc948", "#b07aa1"};
static const char *kPhaseColors[] = {"#f2f6fb", "#fbf3ec", "#f1f8ef"};

void MemorySimulation::writeTimelineSvg(raw_ostream &os) const {
  const double width = 1000, height = 420, left = 80, right = 250, top = 40,
               bottom = 50;
  const double plotWidth = width - left - right;
  const double plotHeight = height - top - bottom;
  size_t numOps = timeline.size();
  size_t columns = std::max<size_t>(1, std::min<size_t>(numOps, plotWidth));

  // One representative op per column: the one with the most live bytes.
  std::vector<size_t> representative(columns, 0);
  for (size_t column = 0; column < columns && numOps; ++column) {
    size_t begin = column * numOps / columns;
    size_t end = std::max(begin + 1, (column + 1) * numOps / columns);
    size_t best = begin;
    for (size_t index = begin; index < end && index < numOps; ++index)
      if (getTotal(timeline[index]) > getTotal(timeline[best]))
        best = index;
    representative[column] = best;
  }
  double maxBytes = std::max<double>(1.0, static_cast<double>(peakBytes));
  // A round top for the y axis: 1, 2 or 5 times a power of two's unit.
  double step = std::pow(10.0, std::floor(std::log10(maxBytes / 4)));
  for (double factor : {1.0, 2.0, 5.0, 10.0})
    if (maxBytes / (step * factor) <= 5) {
      step *= factor;
      break;
    }
  double yMax = std::ceil(maxBytes / step) * step;
  auto x = [&](double column) {
    return left + plotWidth * column / static_cast<double>(columns);
  };
  auto y = [&](double bytes) {
    return top + plotHeight - plotHeight * bytes / yMax;
  };

  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << llvm::format("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                     "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                     "font-family=\"sans-serif\" font-size=\"11\">\n",
                     width, height, width, height);
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"" << static_cast<int>(left)
     << "\" y=\"20\" font-size=\"14\">live memory of @"
     << svg::escapeXml(functionName) << " (" << numOps << " ops, peak "
     << svg::formatBytes(static_cast<double>(peakBytes)) << ")</text>\n";

  // Phase shading, one rect per run of columns in the same phase.
  for (size_t column = 0; column < columns && numOps;) {
    Phase phase = phases[representative[column]];
    size_t end = column;
    while (end < columns && phases[representative[end]] == phase)
      ++end;
    os << llvm::format("<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                       "height=\"%.2f\" fill=\"%s\"><title>%s</title></rect>\n",
                       x(column), top, x(end) - x(column), plotHeight,
                       kPhaseColors[static_cast<unsigned>(phase)],
                       stringifyPhase(phase).str().c_str());
    // Named where there is room (ops of one phase can run amid another's,
    // e.g. a small optimizer update scheduled in the backward).
    if (x(end) - x(column) >= 60)
      os << llvm::format(
          "<text x=\"%.2f\" y=\"%.2f\" fill=\"#888\">%s</text>\n",
          x(column) + 3, top + 12, stringifyPhase(phase).str().c_str());
    column = end;
  }

  // The stacked bands, bottom-up in kind order.
  std::vector<double> below(columns, 0.0);
  for (unsigned kind = 0; kind < kNumMemoryKinds && numOps; ++kind) {
    bool any = false;
    for (size_t column = 0; column < columns; ++column)
      any |= timeline[representative[column]][kind] > 0;
    if (!any)
      continue;
    std::string upper, lower;
    llvm::raw_string_ostream upperOs(upper), lowerOs(lower);
    for (size_t column = 0; column < columns; ++column) {
      double level = below[column] + timeline[representative[column]][kind];
      upperOs << llvm::format("%.2f,%.2f %.2f,%.2f ", x(column), y(level),
                              x(column + 1), y(level));
      below[column] = level;
    }
    for (size_t column = columns; column-- > 0;) {
      double base = below[column] - timeline[representative[column]][kind];
      lowerOs << llvm::format("%.2f,%.2f %.2f,%.2f ", x(column + 1), y(base),
                              x(column), y(base));
    }
    os << "<polygon fill=\"" << kKindColors[kind] << "\" points=\"" << upper
       << lower << "\"><title>" << stringifyMemoryKind(MemoryKind(kind))
       << "</title></polygon>\n";
  }

  // Axes and ticks.
  os << llvm::format("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                     "stroke=\"black\"/>\n",
                     left, top, left, top + plotHeight);
  os << llvm::format("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                     "stroke=\"black\"/>\n",
                     left, top + plotHeight, left + plotWidth,
                     top + plotHeight);
  for (double tick = 0; tick <= yMax * 1.0001; tick += step) {
    os << llvm::format("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                       "stroke=\"#ccc\"/>\n",
                       left, y(tick), left + plotWidth, y(tick));
    os << llvm::format(
        "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n", left - 4,
        y(tick) + 4, svg::formatBytes(tick).c_str());
  }
  os << llvm::format("<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">op "
                     "(program order, %zu ops)</text>\n",
                     left + plotWidth / 2, height - 15, numOps);

  // The peak.
  if (peakIndex >= 0) {
    double column =
        static_cast<double>(peakIndex) * columns / std::max<size_t>(1, numOps);
    double px = x(column + 0.5);
    os << llvm::format("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                       "stroke=\"red\" stroke-dasharray=\"4,3\"/>\n",
                       px, top, px, top + plotHeight);
    os << llvm::format(
        "<text x=\"%.2f\" y=\"%.2f\" fill=\"red\" "
        "text-anchor=\"%s\">peak %s at op #%lld (%s)</text>\n",
        px + (column > columns / 2 ? -4 : 4), top - 4,
        column > columns / 2 ? "end" : "start",
        svg::formatBytes(static_cast<double>(peakBytes)).c_str(),
        static_cast<long long>(peakIndex),
        svg::escapeXml(ops[peakIndex]->getName().getStringRef()).c_str());
  }

  // Legend.
  double legendY = top;
  for (unsigned kind = kNumMemoryKinds; kind-- > 0;) {
    os << llvm::format("<rect x=\"%.2f\" y=\"%.2f\" width=\"12\" "
                       "height=\"12\" fill=\"%s\"/>\n",
                       width - right + 15, legendY, kKindColors[kind]);
    os << llvm::format(
        "<text x=\"%.2f\" y=\"%.2f\">%s (%s at peak)</text>\n",
        width - right + 32, legendY + 10,
        stringifyMemoryKind(MemoryKind(kind)).str().c_str(),
        svg::formatBytes(static_cast<double>(peakBreakdown[kind])).c_str());
    legendY += 18;
  }
  // The phase shading.
  legendY += 8;
  for (Phase phase : {Phase::Forward, Phase::Backward, Phase::Optimizer}) {
    os << llvm::format("<rect x=\"%.2f\" y=\"%.2f\" width=\"12\" "
                       "height=\"12\" fill=\"%s\" stroke=\"#bbb\"/>\n",
                       width - right + 15, legendY,
                       kPhaseColors[static_cast<unsigned>(phase)]);
    os << llvm::format("<text x=\"%.2f\" y=\"%.2f\">%s ops</text>\n",
                       width - right + 32, legendY + 10,
                       stringifyPhase(phase).str().c_str());
    legendY += 18;
  }
  os << "</svg>\n";
}
