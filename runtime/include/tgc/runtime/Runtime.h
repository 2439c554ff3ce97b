//===- Runtime.h - what a generated step calls on the host ------*- C++ -*-===//
//
// The interface between a generated step and the runtime: the step's
// description (its arguments and results, their places in the arena), the
// context a step runs in, the library calls (GEMM, attention) and the
// trainer's entry point. One implementation per target: HostBackend.cpp
// (OpenBLAS, the CPU) and CudaBackend.cu (cuBLAS, CUDA kernels).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_RUNTIME_H
#define TGC_RUNTIME_RUNTIME_H

#include "tgc/runtime/Random.h"

#include <cstddef>
#include <cstdint>

namespace tgc::rt {

/// Element types as stored in the arena (see Storage.h).
enum class DType {
  F32,
  F64,
  BF16,
  F16,
  F8E4M3FN,
  F8E5M2,
  I64,
  I32,
  I1,
  I16,
  I8,
  U32,
  U16,
  U8,
  // One element a byte, as Storage.h keeps them.
  F8E4M3FNUZ,
  F8E5M2FNUZ,
  F4E2M1FN,
  F8E8M0FNU,
  I4,
  U4,
  I2,
  U2
};

/// Bytes of one element in the arena.
size_t getDTypeBytes(DType type);
/// The type a value of `type` has in .safetensors files: `type` itself, or
/// F32 for f8E4M3FNUZ, f8E5M2FNUZ and f4E2M1FN, which safetensors has no
/// one-byte name for (F32 holds their values exactly). i4 and i2 are saved
/// as I8, ui4 and ui2 as U8 (their bytes are those values).
DType getFileDType(DType type);
/// The safetensors name of getFileDType(type) ("F32", "BF16"...).
const char *getSafetensorsDType(DType type);
bool isFloatDType(DType type);

/// One argument of the step: its tg.name, role, type, place in the arena and
/// how it starts. In a partitioned step `shape` is the local block of the
/// global `globalShape`: dimension d is cut into as many blocks as the mesh
/// axes dimAxes[d] (major first, -1 after the last) have devices together,
/// and a device holds the block whose number is the mixed-radix number of
/// its coordinates on those axes (tg.sharding's layout).
struct ArgumentInfo {
  const char *name;
  DType dtype;
  int rank;
  int64_t shape[8];
  int64_t offset;
  RandomSpec init;
  int64_t globalShape[8];
  int8_t dimAxes[8][4];
  /// A value of the model, loaded and saved with the parameters: a param,
  /// or state marked tg.buffer (a BatchNorm's running statistics).
  bool isModelValue = false;
  /// In a pipelined step, the pipeline devices (pp coordinates, bit d for
  /// device d) whose ops read the argument: only they hold it, at `offset`
  /// (the others may plan other values there). All ones otherwise.
  uint64_t pipelineHolders = ~uint64_t(0);
  /// A parameter the step does not train (tg.frozen: a LoRA step's base
  /// weights, --freeze).
  bool isFrozen = false;
};

/// One result: its place in the arena, and the argument whose new value it
/// is (tg.aliases), -1 if none.
struct ResultInfo {
  const char *name;
  DType dtype;
  int64_t offset;
  int64_t bytes;
  int aliases;
  bool isLoss;
  /// In a pipelined step, the pipeline device whose op computes the
  /// result (only its ranks hold it); -1 otherwise.
  int pipelineHolder = -1;
};

/// The mesh axes a collective runs along (shard's grid_axes), in order:
/// a device's rank in the group is the mixed-radix number of its
/// coordinates on them, the first major.
struct GroupInfo {
  int numAxes;
  int axes[8];
};

/// The device mesh of a partitioned step (one device: no axes). Ranks are
/// numbered row-major over the axes, the last innermost (the GPUs of one
/// node).
struct MeshInfo {
  int numAxes;
  const char *axisNames[8];
  int64_t axisSizes[8];
  const GroupInfo *groups;
  int numGroups;
  /// A pipelined step (docs/pipeline.md): the pipeline axis, and the group
  /// along it alone (the trainer moves the loss and the values a stage
  /// updates for another through it); -1 for a step without stages.
  int pipelineAxis = -1;
  int pipelineGroup = -1;
};

/// What the trainer needs to know of a step.
struct StepInfo {
  /// The model's file and function, for messages.
  const char *source;
  int64_t arenaBytes;
  /// Region kernels' intermediates (outside the planned arena).
  int64_t scratchBytes;
  /// What the GEMMs and kernels that run only when a GEMM epilogue call
  /// declines need (the GEMM's product, their intermediates): allocated at
  /// the first decline (getFallbackScratch), never when cuBLASLt takes
  /// every epilogue.
  int64_t fallbackScratchBytes;
  const ArgumentInfo *arguments;
  int numArguments;
  const ResultInfo *results;
  int numResults;
  /// The synthetic copy task: the token-id input and the label argument
  /// filled with the same ids (-1 when the step has none), whether the step
  /// shifts its labels by one position itself (tgc::CopyTask), and the ids'
  /// bound (the embedding's rows).
  int copyIds, copyLabels;
  bool copyLabelsShifted;
  int64_t vocabulary;
  MeshInfo mesh;
  /// The collectives of one step, and the bytes of their staging buffer.
  int numCollectives;
  int64_t commScratchBytes;
  /// Identifies the compiled step: every rank must run the same one.
  const char *fingerprint;
  /// The model's parameter values (the project's params.safetensors, from
  /// an imported model): train starts from them, the other parameters from
  /// --seed. Null when the model has none.
  const char *importedParams;
  /// The GEMM library's workspace in the arena (the memory plan's
  /// tg.gemm_workspace_offset, the planned device's size); -1 and 0 when
  /// the plan has none.
  int64_t gemmWorkspaceOffset;
  int64_t gemmWorkspaceBytes;
};

/// The ranks' communication (Comm.h), null for a step of one device.
struct Communication;

/// What a step runs with: the arena (device memory on the GPU) and the
/// scratch of region kernels.
struct Context {
  char *arena = nullptr;
  char *scratch = nullptr;
  /// The step being run (from 1), for messages.
  int64_t step = 0;
  /// This process's rank and its groups (StepInfo::mesh.groups).
  Communication *comm = nullptr;
  /// The collectives' staging (StepInfo::commScratchBytes).
  char *commScratch = nullptr;
  /// The GEMM library's workspace, in the arena where the memory plan put
  /// it (null: none planned; the CUDA backend then allocates its own).
  char *gemmWorkspace = nullptr;
  size_t gemmWorkspaceBytes = 0;
  /// The epilogues' fallback scratch (StepInfo::fallbackScratchBytes), null
  /// until a call declines.
  char *fallbackScratch = nullptr;
  int64_t fallbackScratchBytes = 0;
};

/// The scratch of a declined GEMM epilogue's GEMM and kernels, allocated at
/// the first call; too little device memory for it: a message naming the
/// GEMM and exit 1.
char *getFallbackScratch(Context &context, const char *kernel);

/// C[batch, m, n] = op(A) op(B) for row-major A, B and C of the stored types,
/// with f32 accumulation: a tg.matmul. When `sharedRhs`, B is one matrix for
/// every batch.
struct GemmDesc {
  bool transA, transB, sharedRhs;
  int64_t batch, m, n, k;
  DType a, b, c;
};
void gemm(Context &context, const GemmDesc &desc, const void *a, const void *b,
          void *c, const char *kernel);

/// The activation stage of a GEMM epilogue: none, ReLU or tanh GELU of the
/// biased product, or (DGelu) the product times the tanh GELU's derivative
/// at `aux`, the forward's pre-activation.
enum class GemmActivation { None, Relu, Gelu, DGelu };
/// Which columns a GEMM epilogue also sums into `biasGrad`: those of its
/// output D (after DGelu), of A (read transposed, [k, m]) or of B ([k, n]),
/// over the rows.
enum class GemmBiasGrad { None, Output, A, B };

/// What a gemm region (tg-fuse's `epilogue`, cuBLASLt's stages in their
/// order) computes from the product P = op(A) op(B):
///   D = convert(act(P + bias) + residual), aux = P + bias
/// (aux written when non-null), or with DGelu D = P * gelu'(aux), and
/// `biasGrad` = the column sums `biasGradOf` names. Unused pointers are
/// null.
struct GemmEpilogue {
  /// The type of the product and of every stage before the convert to D
  /// (GemmDesc::c): the host target rounds each stage to it, as the IR's
  /// ops do; cuBLASLt keeps them in f32 and rounds D and aux once.
  DType product = DType::F32;
  /// A vector of n, rounded to `product` and added to every row.
  const void *bias = nullptr;
  DType biasType = DType::F32;
  GemmActivation activation = GemmActivation::None;
  /// Relu/Gelu: where the pre-activation goes (null: nowhere); DGelu: the
  /// forward's pre-activation, read. [batch * m, n] like D.
  void *aux = nullptr;
  DType auxType = DType::F32;
  /// Added after the activation, [batch * m, n] of `product`'s type (it may
  /// be D itself).
  const void *residual = nullptr;
  GemmBiasGrad biasGradOf = GemmBiasGrad::None;
  /// The column sums (f32 accumulation in the interpreter's order).
  void *biasGrad = nullptr;
  DType biasGradType = DType::F32;
};

/// The GEMM of `desc` with `epilogue` in one call where the library takes
/// it: cuBLASLt's epilogue on the GPU (plans cached per shape), a reference
/// of the IR's order on the host. Returns false, having written nothing,
/// where it cannot (a type, layout or batch cuBLASLt has no kernel for, or
/// TGC_GEMM_EPILOGUE=0): the caller then runs the GEMM and the region's
/// kernels.
bool gemmEpilogue(Context &context, const GemmDesc &desc,
                  const GemmEpilogue &epilogue, const void *a, const void *b,
                  void *d, const char *kernel);

/// tg.attention and tg.attention_grad: query [batch, heads, queries,
/// headSize], key [batch, kvHeads, keys, headSize], value [batch, kvHeads,
/// keys, valueSize]; logsumexp [batch, heads, queries] in f32.
/// score(b, h, i, j) = scale * q_i . k_j + bias(b, h, i, j), hidden past the
/// causal diagonal; a query row none of whose keys has a score above -inf
/// gets an output of zeros and a logsumexp of +inf (so that the backward's
/// exp(score - logsumexp) is 0 on it, as in FlashAttention).
/// The backward forms a row's probabilities as
/// p = exp((score - rowMax) - rowLogSum): (logsumexp, 0) on most rows, which
/// is FlashAttention's exp(score - logsumexp), but the row's own max and
/// log(sum(exp(score - max))) over its visible keys, recomputed from the
/// row, where the logsumexp is finite and at least kDegenerateLse in
/// magnitude.
struct AttentionDesc {
  int64_t batch, heads, queries, headSize, kvHeads, keys, valueSize;
  bool causal;
  double scale;
  /// q, k, v, output (and their gradients) share one type.
  DType type;
  DType lseType;
  /// tg.attention's additive f32 `bias`, or null: bias(b, h, i, j) is
  /// bias[b * biasStrides[0] + h * biasStrides[1] + i * biasStrides[2] +
  /// j * biasStrides[3]], a stride 0 on a broadcast dimension.
  const float *bias = nullptr;
  int64_t biasStrides[4] = {0, 0, 0, 0};
  /// tg.attention's soft cap c, 0 for none: a scaled score s becomes
  /// c * tanh(s / c) before the bias is added.
  double softcap = 0.0;
  /// tg.attention's dropout of the probabilities, a rate of 0 for none:
  /// probability (b, h, i, j) weighs the values as p / (1 - rate) where
  /// dropoutUniform(seed, index, stream) >= rate, else not at all (tg.dropout's
  /// mask). `index` is the element's in the whole [B, H, Sq, Sk] tensor:
  /// *offset (0 without one) plus, for its local row-major index e, the sum
  /// over the `levelCount` levels (size, stride, whole stride) of
  /// ((e / stride) % size) * whole stride, or e itself without levels
  /// (CounterRandomOpInterface's index levels). `seed` and `offset` are
  /// integer scalars of `seedType` and `offsetType` (I64 or I32) in device
  /// memory.
  double dropout = 0.0;
  const void *seed = nullptr;
  DType seedType = DType::I64;
  const void *offset = nullptr;
  DType offsetType = DType::I64;
  uint32_t stream = 0;
  int levelCount = 0;
  int64_t levels[4][3] = {};
};
/// The magnitude of logsumexp from which the attention backward recomputes
/// a row's max and log-sum instead of trusting the forward's f32
/// logsumexp: past it the logsumexp has too few bits left for the log of
/// the row's sum (f32's spacing is 2^-12 at 4096, an error of up to 1.2e-4
/// in every p of the row, and more further out). At the extreme, a row
/// whose keys Hugging Face's masks all hide (finfo(f32).min = -3.4028235e38
/// on each, as a left-padded query under a causal mask) has every score
/// equal to M = -3.4e38: a uniform softmax, but a logsumexp M + log(n) that
/// rounds to M, so that exp(score - logsumexp) would be 1, not 1 / n.
/// Ordinary rows stay far below it: the recomputation (a walk over the
/// row's keys) is rare.
inline constexpr float kDegenerateLse = 4096.0f;
void attention(Context &context, const AttentionDesc &desc, const void *q,
               const void *k, const void *v, void *out, void *lse,
               const char *kernel);
void attentionGrad(Context &context, const AttentionDesc &desc,
                   const void *dout, const void *q, const void *k,
                   const void *v, const void *out, const void *lse, void *dq,
                   void *dk, void *dv, const char *kernel);
/// tg.attention_bias_grad: the gradient of the desc's bias (f32, laid out
/// by desc.biasStrides) from the attention's operands, output and
/// logsumexp: ds = p * (dp - rowsum(dout * out)) of every score (dp through
/// the dropout's mask), summed over the dimensions the bias broadcasts.
void attentionBiasGrad(Context &context, const AttentionDesc &desc,
                       const void *dout, const void *q, const void *k,
                       const void *v, const void *out, const void *lse,
                       float *dbias, const char *kernel);

/// The shard dialect's collectives on a partitioned step's group `group`,
/// for an operand of local shape `shape`: all_reduce (out = op over the
/// group), all_gather (out = the blocks of the group's ranks joined along
/// `dim`), reduce_scatter (the all-reduce's block of this rank along
/// `dim`), all_slice (this rank's block of `in` along `dim`, no
/// communication), all_to_all (`in` cut into the group's blocks along
/// `dim`, block r sent to rank r, and the blocks received joined along
/// `concatDim` in rank order). Collective number `id` of the step starts once
/// the work queued before it is done, on the communication stream (on the GPU;
/// at once on the host), and the compute stream goes on; waitCollective
/// makes the compute stream wait for it, before the first op that reads its
/// result or overwrites its buffers (the emitter places the waits).
enum class ReduceOp { Sum, Max, Min, Average };
enum class CollectiveKind {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllSlice,
  AllToAll
};
struct CollectiveDesc {
  CollectiveKind kind;
  ReduceOp op;
  DType type;
  int group;
  int dim;
  int rank;
  int64_t shape[8];
  /// all_to_all's dimension that joins the blocks received.
  int concatDim = 0;
};
void collective(Context &context, const CollectiveDesc &desc, const void *in,
                void *out, int id, const char *kernel, const char *location);
void waitCollective(Context &context, int id);

/// A pipelined step (docs/pipeline.md): every rank runs the step, and an op
/// runs on the ranks of its stage's pipeline device only. Whether this rank
/// is at pipeline coordinate `device`.
bool onPipelineDevice(Context &context, int device);
/// A value moving between stages (a shard.send / shard.recv pair, number
/// `tag` of the step): sent from this rank to the rank at pipeline
/// coordinate `peer` (the same coordinates on the other axes), or received
/// from it. The send takes a copy of `in` and returns at once (the bytes
/// are the sender's to reuse; the step's end waits for the copies to be
/// delivered); the receive returns once `out` holds the value. On failure
/// (a peer gone, the timeout) the rank reports the transfer and exits 1.
void sendToStage(Context &context, int peer, const void *in, int64_t bytes,
                 int tag, const char *kernel, const char *location);
void recvFromStage(Context &context, int peer, void *out, int64_t bytes,
                   int tag, const char *kernel, const char *location);

/// Reports a failed kernel launch (the GPU) with the kernel's name and its
/// tg source location; nothing on the host.
void checkLaunch(const char *kernel, const char *location);

/// A bad id or label in a kernel on the host: reports it and exits 1.
void reportKernelError(const char *what, int64_t value, int64_t bound);

/// The trainer: parses `train`'s command line, sets the arguments up, runs
/// the steps and logs them. Returns the process's exit status. With an
/// evaluation (tgc compile --evaluation: evaluate.cu), --val-data runs it.
using StepFunction = void (*)(Context &);
int trainMain(int argc, char **argv, const StepInfo &info, StepFunction step,
              const StepInfo *evaluationInfo = nullptr,
              StepFunction evaluate = nullptr);

} // namespace tgc::rt

#endif // TGC_RUNTIME_RUNTIME_H
