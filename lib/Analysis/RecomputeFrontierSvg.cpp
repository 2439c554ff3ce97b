//===- RecomputeFrontierSvg.cpp - the recompute frontier as an SVG chart --===//
//
// Extra (recompute) time against simulated peak: the best plan for every
// budget is a staircase through the frontier's plans, each a dot whose
// tooltip gives its peak, extra time and recomputed activations.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/RecomputePlanner.h"

#include "Svg.h"

#include <algorithm>

using namespace mlir;
using namespace tgc;

void tgc::writeRecomputeFrontierSvg(raw_ostream &os, StringRef functionName,
                                    StringRef deviceName,
                                    ArrayRef<RecomputePlan> frontier,
                                    int64_t peakWithoutRecompute,
                                    size_t numCandidates) {
  const double width = 800, height = 420, left = 80, right = 30, top = 40,
               bottom = 50;
  const double plotWidth = width - left - right;
  const double plotHeight = height - top - bottom;
  double lowPeak = static_cast<double>(peakWithoutRecompute);
  double highPeak = lowPeak, maxTime = 0;
  for (const RecomputePlan &plan : frontier) {
    lowPeak = std::min(lowPeak, static_cast<double>(plan.peakBytes));
    highPeak = std::max(highPeak, static_cast<double>(plan.peakBytes));
    maxTime = std::max(maxTime, plan.extraTime);
  }
  double span = std::max(1.0, highPeak - lowPeak);
  lowPeak -= 0.05 * span;
  highPeak += 0.05 * span;
  if (maxTime <= 0)
    maxTime = 1e-6;
  maxTime *= 1.1;
  auto x = [&](double peak) {
    return left + (peak - lowPeak) / (highPeak - lowPeak) * plotWidth;
  };
  auto y = [&](double time) { return top + plotHeight * (1 - time / maxTime); };

  os << llvm::format("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                     "width=\"%.0f\" height=\"%.0f\" "
                     "font-family=\"sans-serif\" font-size=\"11\">\n",
                     width, height);
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"" << static_cast<int>(left)
     << "\" y=\"20\" font-size=\"14\">recompute frontier of @"
     << svg::escapeXml(functionName) << " on " << svg::escapeXml(deviceName)
     << " (" << numCandidates << " activations, " << frontier.size()
     << " plans)</text>\n";

  // Axes with five ticks each.
  os << llvm::format("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                     "stroke=\"black\"/>\n",
                     left, top + plotHeight, left + plotWidth,
                     top + plotHeight);
  os << llvm::format("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                     "stroke=\"black\"/>\n",
                     left, top, left, top + plotHeight);
  for (int tick = 0; tick <= 4; ++tick) {
    double peak = lowPeak + (highPeak - lowPeak) * tick / 4;
    double time = maxTime * tick / 4;
    os << llvm::format("<text x=\"%.2f\" y=\"%.2f\" "
                       "text-anchor=\"middle\">%s</text>\n",
                       x(peak), top + plotHeight + 16,
                       svg::formatBytes(peak, 4).c_str());
    os << llvm::format("<text x=\"%.2f\" y=\"%.2f\" "
                       "text-anchor=\"end\">%.3g ms</text>\n",
                       left - 4, y(time) + 4, time * 1e3);
  }
  os << llvm::format("<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">"
                     "simulated peak</text>\n",
                     left + plotWidth / 2, height - 8);
  os << llvm::format("<text x=\"14\" y=\"%.2f\" text-anchor=\"middle\" "
                     "transform=\"rotate(-90 14 %.2f)\">extra time</text>\n",
                     top + plotHeight / 2, top + plotHeight / 2);

  // The peak without recomputation.
  os << llvm::format("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                     "stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n",
                     x(static_cast<double>(peakWithoutRecompute)), top,
                     x(static_cast<double>(peakWithoutRecompute)),
                     top + plotHeight);

  // The staircase: a budget between two plans' peaks gets the lower one's
  // extra time.
  if (!frontier.empty()) {
    os << "<polyline fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"2\" "
          "points=\"";
    for (size_t i = 0; i < frontier.size(); ++i) {
      double peak = static_cast<double>(frontier[i].peakBytes);
      os << llvm::format("%.2f,%.2f ", x(peak), y(frontier[i].extraTime));
      double next = i + 1 < frontier.size()
                        ? static_cast<double>(frontier[i + 1].peakBytes)
                        : highPeak;
      os << llvm::format("%.2f,%.2f ", x(next), y(frontier[i].extraTime));
    }
    os << "\"/>\n";
  }
  for (const RecomputePlan &plan : frontier)
    os << llvm::format("<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" "
                       "fill=\"#e15759\"><title>peak %lld bytes, extra time "
                       "%.3e s, %zu recomputed</title></circle>\n",
                       x(static_cast<double>(plan.peakBytes)),
                       y(plan.extraTime),
                       static_cast<long long>(plan.peakBytes), plan.extraTime,
                       plan.recomputed.size());
  os << "</svg>\n";
}
