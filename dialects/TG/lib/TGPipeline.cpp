//===- TGPipeline.cpp - pipeline stages, micro-batches, schedules ---------===//

#include "tgc/Dialect/TG/TGPipeline.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

#include <algorithm>

using namespace mlir;
using namespace tgc;

StringRef tgc::stringifyPipelineScheduleKind(PipelineScheduleKind kind) {
  switch (kind) {
  case PipelineScheduleKind::GPipe:
    return "gpipe";
  case PipelineScheduleKind::OneFOneB:
    return "1f1b";
  case PipelineScheduleKind::Interleaved:
    return "interleaved";
  }
  llvm_unreachable("unknown pipeline schedule");
}

std::optional<PipelineScheduleKind>
tgc::symbolizePipelineScheduleKind(StringRef name) {
  for (PipelineScheduleKind kind :
       {PipelineScheduleKind::GPipe, PipelineScheduleKind::OneFOneB,
        PipelineScheduleKind::Interleaved})
    if (name == stringifyPipelineScheduleKind(kind))
      return kind;
  return std::nullopt;
}

std::string PipelineConfig::validate() const {
  constexpr int64_t kMax = int64_t(1) << 20;
  if (stages < 1 || stages > kMax)
    return "the pipeline needs between 1 and " + std::to_string(kMax) +
           " stages, got " + std::to_string(stages);
  if (virtualStages < 1 || virtualStages > 1024)
    return "virtual stages must be in [1, 1024], got " +
           std::to_string(virtualStages);
  if (microBatches < 1 || microBatches > 65536)
    return "micro-batches must be in [1, 65536], got " +
           std::to_string(microBatches);
  if (schedule != PipelineScheduleKind::Interleaved && virtualStages != 1)
    return "virtual stages need the interleaved schedule (--pipeline-schedule "
           "interleaved)";
  if (schedule == PipelineScheduleKind::Interleaved &&
      microBatches % stages != 0)
    return "the interleaved schedule needs micro-batches (" +
           std::to_string(microBatches) +
           ") to be a multiple of the pipeline stages (" +
           std::to_string(stages) + ")";
  return "";
}

DictionaryAttr PipelineConfig::toAttr(MLIRContext *context) const {
  Builder b(context);
  return b.getDictionaryAttr(
      {b.getNamedAttr("axis", b.getStringAttr(axis)),
       b.getNamedAttr("micro_batches", b.getI64IntegerAttr(microBatches)),
       b.getNamedAttr("schedule",
                      b.getStringAttr(stringifyPipelineScheduleKind(schedule))),
       b.getNamedAttr("stages", b.getI64IntegerAttr(stages)),
       b.getNamedAttr("virtual_stages", b.getI64IntegerAttr(virtualStages))});
}

int64_t PipelineConfig::getDeviceOf(Operation *op) const {
  std::optional<int64_t> stage = getStage(op);
  return stage ? getDevice(*stage) : 0;
}

double PipelineConfig::getFormulaBubble() const {
  int64_t chunks =
      schedule == PipelineScheduleKind::Interleaved ? virtualStages : 1;
  return static_cast<double>(stages - 1) /
         static_cast<double>(chunks * microBatches + stages - 1);
}

std::optional<PipelineConfig> PipelineConfig::get(Operation *function) {
  auto interface = dyn_cast<FunctionOpInterface>(function);
  if (!interface || !function->hasAttr(kPipelineAttrName))
    return std::nullopt;
  // Diagnostics off: an analysis only asks.
  ScopedDiagnosticHandler silence(function->getContext(),
                                  [](Diagnostic &) { return success(); });
  FailureOr<std::optional<PipelineConfig>> config = lookup(interface);
  return succeeded(config) ? *config : std::nullopt;
}

FailureOr<std::optional<PipelineConfig>>
PipelineConfig::lookup(FunctionOpInterface function) {
  Attribute raw = function->getAttr(kPipelineAttrName);
  if (!raw)
    return std::optional<PipelineConfig>();
  auto dict = dyn_cast<DictionaryAttr>(raw);
  auto malformed = [&](StringRef why) {
    return function.emitError("malformed '")
           << kPipelineAttrName << "': " << why;
  };
  if (!dict)
    return malformed("not a dictionary");
  // The fields the dialect's verifier checked; the missing ones default.
  PipelineConfig config;
  if (auto axis = dict.getAs<StringAttr>("axis"))
    config.axis = axis.str();
  if (auto schedule = dict.getAs<StringAttr>("schedule")) {
    std::optional<PipelineScheduleKind> kind =
        symbolizePipelineScheduleKind(schedule.getValue());
    if (!kind)
      return malformed("schedule must be gpipe, 1f1b or interleaved, got '" +
                       schedule.getValue().str() + "'");
    config.schedule = *kind;
  }
  for (auto [name, field] : {std::pair{"stages", &config.stages},
                             std::pair{"virtual_stages", &config.virtualStages},
                             std::pair{"micro_batches", &config.microBatches}})
    if (auto value = dict.getAs<IntegerAttr>(name))
      *field = value.getInt();
  if (std::string why = config.validate(); !why.empty())
    return malformed(why);
  return std::optional<PipelineConfig>(config);
}

SmallVector<PipelineUnit> tgc::getPipelineOrder(const PipelineConfig &config,
                                                int64_t device) {
  int64_t p = config.stages, v = config.virtualStages, m = config.microBatches;
  SmallVector<PipelineUnit> order;
  if (config.schedule == PipelineScheduleKind::GPipe) {
    for (int64_t k = 0; k < m; ++k)
      order.push_back({k, 0, false});
    for (int64_t k = 0; k < m; ++k)
      order.push_back({k, 0, true});
    return order;
  }
  // Megatron-LM's forward_backward_pipelining_with(out)_interleaving: the
  // k-th forward (backward) of a device runs micro-batch
  // (k div PV) * P + k mod P through chunk (k mod PV) div P (backwards:
  // the chunks in reverse).
  int64_t total = m * v;
  int64_t warmup;
  if (config.schedule == PipelineScheduleKind::OneFOneB)
    warmup = std::min(p - device - 1, m);
  else if (m == p)
    warmup = total;
  else
    warmup = std::min((p - device - 1) * 2 + (v - 1) * p, total);
  auto unit = [&](int64_t k, bool backward) {
    int64_t inGroup = k % (p * v);
    int64_t chunk = inGroup / p;
    if (backward)
      chunk = v - chunk - 1;
    return PipelineUnit{(k / (p * v)) * p + inGroup % p, chunk, backward};
  };
  for (int64_t k = 0; k < warmup; ++k)
    order.push_back(unit(k, false));
  for (int64_t k = 0; k < total - warmup; ++k) {
    order.push_back(unit(k + warmup, false));
    order.push_back(unit(k, true));
  }
  for (int64_t k = total - warmup; k < total; ++k)
    order.push_back(unit(k, true));
  return order;
}

int64_t tgc::getMaxUnitsInFlight(const PipelineConfig &config, int64_t device) {
  int64_t inFlight = 0, most = 0;
  for (const PipelineUnit &unit : getPipelineOrder(config, device)) {
    inFlight += unit.backward ? -1 : 1;
    most = std::max(most, inFlight);
  }
  return most;
}

static std::optional<int64_t> getI64Attr(Operation *op, StringRef name) {
  if (auto attr = op->getAttrOfType<IntegerAttr>(name))
    return attr.getInt();
  return std::nullopt;
}

std::optional<int64_t> tgc::getStage(Operation *op) {
  return getI64Attr(op, kStageAttrName);
}

std::optional<int64_t> tgc::getMicroBatch(Operation *op) {
  return getI64Attr(op, kMicroBatchAttrName);
}

bool tgc::isBackward(Operation *op) { return op->hasAttr(kBackwardAttrName); }

void tgc::setStage(Operation *op, int64_t stage) {
  op->setAttr(kStageAttrName,
              Builder(op->getContext()).getI64IntegerAttr(stage));
}

void tgc::copyPipelineAttrs(Operation *from, Operation *to) {
  for (StringRef name :
       {kStageAttrName, kMicroBatchAttrName, kBackwardAttrName}) {
    if (Attribute attr = from->getAttr(name))
      to->setAttr(name, attr);
    else
      to->removeAttr(name);
  }
}
