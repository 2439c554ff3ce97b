//===- FlashAttention.h - tiled attention kernels for CUDA ------*- C++ -*-===//
//
// Attention forward and backward in the manner of FlashAttention-2 (Dao,
// 2023), in plain CUDA C++ with f32 arithmetic: no s x s matrix in memory,
// and keys and values read once per tile of queries instead of once per
// output element.
//
// - flashForward: a block per (batch, head, tile of queries); each thread
//   owns query rows and keeps their running max, sum and weighted values
//   while the block walks the visible keys a shared-memory tile at a time
//   (the online softmax). Writes the output and the rows' logsumexp.
// - flashGradQuery: a block per (batch, head, tile of queries); dq from the
//   forward's logsumexp, recomputing the probabilities tile by tile.
// - flashGradKeyValue: a block per (batch, kv head, tile of keys); each
//   thread owns key rows and sums dk and dv over the group's heads and the
//   queries that see them, a shared-memory tile of queries at a time.
//
// A score is scale * q . k, soft-capped to c * tanh(x / c) when the desc
// has a cap c (capScore), plus the desc's additive bias (biasAt), hidden
// past the causal diagonal; the backward multiplies ds by the cap's slope
// 1 - (capped / c)^2 (capSlope). With dropout, a probability weighs the
// values through tg.dropout's mask, regenerated from Philox where it is
// used (dropped): the forward's accumulator and dv take the dropped p, and
// dp = dO . v goes through the mask; the softmax's sum and logsumexp, and
// delta = rowsum(dO * O), are the undropped ones. A query row that sees no key
// with a score above -inf gets an output of zeros and a logsumexp of +inf
// (FlashAttention's convention); the bias gets no gradient here.
//
// The backward rebuilds a row's probabilities as
// p = exp((score - max) - logSum), the row's (max, logSum) from backwardRow:
// (logsumexp, 0), FlashAttention's exp(score - logsumexp), 0 on the rows of
// +inf. A finite logsumexp of kDegenerateLse or more in magnitude
// (Runtime.h) has lost the bits of the row's log-sum (on a row that Hugging
// Face's finfo.min mask hides whole, it equals every score), so that row's
// max and log-sum are recomputed by the thread that owns it, walking the
// row's keys in global memory (no barrier in it): rare rows, a serial walk.
//
// The kernels are written for any block size: a thread owns `R` rows of
// the block's tile, R = kRows<DMAX> / blockDim.x. The CUDA target launches
// kRows threads with R = 1; the runtime's unit test runs the same source
// on the host (CudaCompat.h: one thread per block) with R = kRows and
// compares it with the host target's reference attention.
//
// DMAX bounds the head and value sizes (64 or 128): rows live in registers
// of DMAX floats, zero past the real size.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_FLASHATTENTION_H
#define TGC_RUNTIME_FLASHATTENTION_H

#include "tgc/runtime/Kernels.h"
#include "tgc/runtime/Philox.h"
#include "tgc/runtime/Runtime.h"

#include <cmath>

namespace tgc::rt::flash {

/// Rows of a block's own tile (queries in the forward and dq, keys in dk
/// and dv), and keys per shared-memory tile: 32 KiB of K and V in f32.
template <int DMAX> constexpr int kRows = 4096 / DMAX;
/// Queries per shared-memory tile of the dk/dv kernel.
template <int DMAX> constexpr int kQueryTile = 1024 / DMAX;

/// The first key query `i` does not see (keys past the diagonal).
__device__ inline int64_t visibleKeys(const AttentionDesc &d, int64_t i) {
  if (!d.causal)
    return d.keys;
  int64_t visible = i + d.keys - d.queries + 1;
  return visible < 0 ? 0 : visible > d.keys ? d.keys : visible;
}

/// The additive bias of the score of query `i` of (batch `b`, query head
/// `h`) against key `j`: 0 without a bias.
__device__ inline float biasAt(const AttentionDesc &d, int64_t b, int64_t h,
                               int64_t i, int64_t j) {
  if (!d.bias)
    return 0.0f;
  return d.bias[b * d.biasStrides[0] + h * d.biasStrides[1] +
                i * d.biasStrides[2] + j * d.biasStrides[3]];
}

/// The soft cap of the scaled score `x`: softcap * tanh(x / softcap), `x`
/// itself without a cap.
__device__ inline float capScore(const AttentionDesc &d, float x) {
  if (!(d.softcap > 0.0))
    return x;
  float cap = float(d.softcap);
  return cap * tanhf(x / cap);
}

/// The derivative of capScore at the score it gave, `capped`:
/// 1 - (capped / softcap)^2, 1 without a cap.
__device__ inline float capSlope(const AttentionDesc &d, float capped) {
  if (!(d.softcap > 0.0))
    return 1.0f;
  float t = capped / float(d.softcap);
  return 1.0f - t * t;
}

/// An integer scalar of `type` (I32, else I64) at `at`.
__device__ inline int64_t loadIndex(const void *at, DType type) {
  return type == DType::I32 ? *static_cast<const int32_t *>(at)
                            : *static_cast<const int64_t *>(at);
}

/// The desc's dropout seed and the index of its first probability, read
/// once per kernel.
struct DropoutKey {
  uint64_t seed, first;
};
__device__ inline DropoutKey dropoutKey(const AttentionDesc &d) {
  if (!(d.dropout > 0.0))
    return {0, 0};
  return {static_cast<uint64_t>(loadIndex(d.seed, d.seedType)),
          d.offset ? static_cast<uint64_t>(loadIndex(d.offset, d.offsetType))
                   : 0};
}

/// Whether the desc's dropout keeps the probability of query `i` of (batch
/// `b`, query head `h`) against key `j` (always, without dropout).
__device__ inline bool keeps(const AttentionDesc &d, DropoutKey key, int64_t b,
                             int64_t h, int64_t i, int64_t j) {
  if (!(d.dropout > 0.0))
    return true;
  int64_t local = ((b * d.heads + h) * d.queries + i) * d.keys + j;
  uint64_t index = key.first;
  if (d.levelCount == 0)
    index += static_cast<uint64_t>(local);
  for (int l = 0; l < d.levelCount; ++l)
    index += static_cast<uint64_t>((local / d.levels[l][1]) % d.levels[l][0] *
                                   d.levels[l][2]);
  return dropoutUniform(key.seed, index, d.stream) >= d.dropout;
}

/// `x` through the mask of a probability the dropout keeps (`kept`) or not:
/// x / (1 - rate), or 0; `x` itself without dropout.
__device__ inline float throughMask(const AttentionDesc &d, bool kept,
                                    float x) {
  if (!(d.dropout > 0.0))
    return x;
  return kept ? x / (1.0f - float(d.dropout)) : 0.0f;
}

/// Probability `p` (of query `i` of (`b`, `h`) against key `j`) through
/// the dropout's mask.
__device__ inline float dropped(const AttentionDesc &d, DropoutKey key, float p,
                                int64_t b, int64_t h, int64_t i, int64_t j) {
  return throughMask(d, keeps(d, key, b, h, i, j), p);
}

/// Copies rows [first, first + count) of `source` (row length `size`) into
/// `tile` as f32, zero past `size` and past `limit` rows; the block's
/// threads share the work.
template <typename S, int DMAX, int STRIDE>
__device__ void loadTile(float (*tile)[STRIDE], int count, const S *source,
                         int64_t first, int64_t limit, int64_t size) {
  for (int x = threadIdx.x; x < count * DMAX; x += blockDim.x) {
    int r = x / DMAX, e = x % DMAX;
    int64_t row = first + r;
    tile[r][e] =
        row < limit && e < size ? float(ld(source[row * size + e])) : 0.0f;
  }
}

/// capScore(scale * q . k) for query row `q` and key row `k` in global
/// memory: the score before its bias, formed as the kernels form it from
/// their registers and tiles, in the same order.
template <typename S>
__device__ inline float cappedScoreAt(const AttentionDesc &d, const S *q,
                                      const S *k) {
  float sum = 0;
  for (int64_t e = 0; e < d.headSize; ++e)
    sum += float(ld(q[e])) * float(ld(k[e]));
  return capScore(d, float(d.scale) * sum);
}

/// The score of query row `q` (query `i` of batch `b`, head `h`) against
/// key row `k` (key `j`): cappedScoreAt + bias(b, h, i, j).
template <typename S>
__device__ inline float scoreAt(const AttentionDesc &d, const S *q, const S *k,
                                int64_t b, int64_t h, int64_t i, int64_t j) {
  return cappedScoreAt(d, q, k) + biasAt(d, b, h, i, j);
}

/// What the backward forms query row i's probabilities from:
/// p = exp((score - max) - logSum).
struct SoftmaxRow {
  float max, logSum;
};

/// The SoftmaxRow of query `i` of (batch `b`, query head `h`) from the
/// forward's logsumexp `lse`: (lse, 0) (so that p = exp(score - lse) to the
/// bit, and 0 on the +inf rows of nothing visible), or where `lse` is
/// finite and at least kDegenerateLse in magnitude, the row's max and
/// log(sum(exp(score - max))) over its visible keys (hidden ones of -inf
/// left out), recomputed from global memory: `q` is the query's row and
/// `k` the first key of its kv head.
template <typename S>
__device__ SoftmaxRow backwardRow(const AttentionDesc &d, float lse, const S *q,
                                  const S *k, int64_t b, int64_t h, int64_t i) {
  if (!(lse > -INFINITY && lse < INFINITY) ||
      (lse > -kDegenerateLse && lse < kDegenerateLse))
    return {lse, 0.0f};
  int64_t keys = visibleKeys(d, i);
  float max = -INFINITY;
  for (int64_t j = 0; j < keys; ++j) {
    float s = scoreAt(d, q, k + j * d.headSize, b, h, i, j);
    max = s > max ? s : max;
  }
  // Nothing visible after all: p = 0, as on a row of +inf.
  if (max == -INFINITY)
    return {INFINITY, 0.0f};
  float sum = 0;
  for (int64_t j = 0; j < keys; ++j) {
    float s = scoreAt(d, q, k + j * d.headSize, b, h, i, j);
    if (s != -INFINITY)
      sum += expf(s - max);
  }
  return {max, logf(sum)};
}

/// The bias's gradient at its element `element` (row-major in the bias's
/// shape: a dimension the bias broadcasts, stride 0, is of size 1): the sum
/// of ds = p * (dp - delta) over the scores that read it, p rebuilt as the
/// backward kernels rebuild it (backwardRow), dp = dout_i . v_j through the
/// dropout's mask, delta = dout_i . out_i; a score past the causal diagonal
/// adds nothing. A loop per element over the broadcast dimensions, the
/// keys' and values' rows read from global memory: the bias's gradient is
/// rare (a trained position bias) and keeps no [B, H, Sq, Sk] tensor.
template <typename S, typename L>
__device__ float biasGradAt(const AttentionDesc &d, DropoutKey key,
                            const S *dout, const S *q, const S *k, const S *v,
                            const S *out, const L *lse, int64_t element) {
  const int64_t full[4] = {d.batch, d.heads, d.queries, d.keys};
  int64_t first[4], count[4];
  for (int dim = 3; dim >= 0; --dim) {
    bool broadcast = d.biasStrides[dim] == 0;
    int64_t size = broadcast ? 1 : full[dim];
    first[dim] = broadcast ? 0 : element % size;
    count[dim] = broadcast ? full[dim] : 1;
    element /= size;
  }
  int64_t group = d.heads / d.kvHeads;
  float sum = 0.0f;
  for (int64_t b = first[0]; b < first[0] + count[0]; ++b)
    for (int64_t h = first[1]; h < first[1] + count[1]; ++h) {
      int64_t kvRow = (b * d.kvHeads + h / group) * d.keys;
      for (int64_t i = first[2]; i < first[2] + count[2]; ++i) {
        int64_t row = (b * d.heads + h) * d.queries + i;
        const S *qi = q + row * d.headSize;
        const S *doi = dout + row * d.valueSize;
        SoftmaxRow softmax = backwardRow(d, float(ld(lse[row])), qi,
                                         k + kvRow * d.headSize, b, h, i);
        float delta = 0.0f;
        for (int64_t e = 0; e < d.valueSize; ++e)
          delta += float(ld(doi[e])) * float(ld(out[row * d.valueSize + e]));
        int64_t visible = visibleKeys(d, i);
        for (int64_t j = first[3]; j < first[3] + count[3] && j < visible;
             ++j) {
          float s = scoreAt(d, qi, k + (kvRow + j) * d.headSize, b, h, i, j);
          float p = expf((s - softmax.max) - softmax.logSum);
          float dp = 0.0f;
          for (int64_t e = 0; e < d.valueSize; ++e)
            dp +=
                float(ld(doi[e])) * float(ld(v[(kvRow + j) * d.valueSize + e]));
          sum += p * (dropped(d, key, dp, b, h, i, j) - delta);
        }
      }
    }
  return sum;
}

/// The number of elements of the desc's bias.
TGC_HD inline int64_t biasElements(const AttentionDesc &d) {
  const int64_t full[4] = {d.batch, d.heads, d.queries, d.keys};
  int64_t elements = 1;
  for (int dim = 0; dim < 4; ++dim)
    elements *= d.biasStrides[dim] == 0 ? 1 : full[dim];
  return elements;
}

template <int DMAX>
__device__ inline float dot(const float *a, const float *b) {
  float sum = 0;
  TGC_UNROLL
  for (int e = 0; e < DMAX; ++e)
    sum += a[e] * b[e];
  return sum;
}

/// Block `block` of the forward and dq kernels (`tiles` tiles of `tile`
/// queries per head): its (batch, head), its queries [first, last) and the
/// first row of its keys and values.
struct QueryTile {
  int64_t bh, first, last, kvRow;
};
__device__ inline QueryTile queryTile(const AttentionDesc &d, int64_t block,
                                      int64_t tiles, int64_t tile) {
  int64_t bh = block / tiles, first = (block % tiles) * tile;
  int64_t kvHead = bh % d.heads / (d.heads / d.kvHeads);
  return {bh, first, first + tile < d.queries ? first + tile : d.queries,
          (bh / d.heads * d.kvHeads + kvHead) * d.keys};
}

/// The shared part of the forward and dq kernels: for the block's queries
/// [first, last) of a (batch, head) whose keys start at row `kvRow`, walks
/// the keys they see a shared-memory tile of K and V at a time, calling
/// visit(r, i, j, t) for each visible (query, key) pair of this thread, in
/// key order: r is the thread's row (query i of the head), j the key (of
/// the head) and t its row in the tiles `ks` and `vs`.
template <typename S, int DMAX, int R, typename Visit>
__device__ void forEachVisibleKey(const AttentionDesc &d, const S *k,
                                  const S *v, int64_t kvRow, int64_t first,
                                  int64_t last, float (*ks)[DMAX],
                                  float (*vs)[DMAX], Visit &&visit) {
  constexpr int kTile = kRows<DMAX>;
  int64_t keys = visibleKeys(d, last - 1);
  for (int64_t j0 = 0; j0 < keys; j0 += kTile) {
    __syncthreads();
    loadTile<S, DMAX>(ks, kTile, k, kvRow + j0, kvRow + d.keys, d.headSize);
    loadTile<S, DMAX>(vs, kTile, v, kvRow + j0, kvRow + d.keys, d.valueSize);
    __syncthreads();
    for (int r = 0; r < R; ++r) {
      int64_t i = first + threadIdx.x + r * blockDim.x;
      if (i >= last)
        continue;
      int64_t end = visibleKeys(d, i) - j0;
      end = end > kTile ? kTile : end;
      for (int t = 0; t < end; ++t)
        visit(r, i, j0 + t, t);
    }
  }
}

template <typename S, typename L, int DMAX, int R>
__global__ void flashForward(AttentionDesc d, const S *q, const S *k,
                             const S *v, S *out, L *lse) {
  constexpr int kTile = kRows<DMAX>;
  __shared__ float ks[kTile][DMAX];
  __shared__ float vs[kTile][DMAX];
  int64_t tiles = (d.queries + kTile - 1) / kTile;
  for (int64_t block = blockIdx.x; block < d.batch * d.heads * tiles;
       block += gridDim.x) {
    auto [bh, first, last, kvRow] = queryTile(d, block, tiles, kTile);
    int64_t b = bh / d.heads, h = bh % d.heads;
    DropoutKey key = dropoutKey(d);
    float qr[R][DMAX], acc[R][DMAX], max[R], sum[R];
    for (int r = 0; r < R; ++r) {
      int64_t i = first + threadIdx.x + r * blockDim.x;
      const S *row = q + (bh * d.queries + i) * d.headSize;
      TGC_UNROLL
      for (int e = 0; e < DMAX; ++e) {
        qr[r][e] = i < last && e < d.headSize ? float(ld(row[e])) : 0.0f;
        acc[r][e] = 0.0f;
      }
      max[r] = -INFINITY;
      sum[r] = 0.0f;
    }
    auto visit = [&](int r, int64_t i, int64_t j, int t) {
      float s = capScore(d, float(d.scale) * dot<DMAX>(qr[r], ks[t])) +
                biasAt(d, b, h, i, j);
      // A key the bias hides weighs nothing; skipping it also keeps
      // exp(-inf - -inf) out of a row whose max is still -inf.
      if (s == -INFINITY)
        return;
      if (s > max[r]) {
        float correction = expf(max[r] - s);
        sum[r] *= correction;
        TGC_UNROLL
        for (int e = 0; e < DMAX; ++e)
          acc[r][e] *= correction;
        max[r] = s;
      }
      float p = expf(s - max[r]);
      sum[r] += p;
      float weight = dropped(d, key, p, b, h, i, j);
      TGC_UNROLL
      for (int e = 0; e < DMAX; ++e)
        acc[r][e] += weight * vs[t][e];
    };
    forEachVisibleKey<S, DMAX, R>(d, k, v, kvRow, first, last, ks, vs, visit);
    for (int r = 0; r < R; ++r) {
      int64_t i = first + threadIdx.x + r * blockDim.x;
      if (i >= last)
        continue;
      int64_t row = bh * d.queries + i;
      // A row that sees no key with a score above -inf: zeros and a
      // logsumexp of +inf, as the reference attention gives.
      bool empty = sum[r] == 0.0f;
      float inverse = empty ? 0.0f : 1.0f / sum[r];
      TGC_UNROLL
      for (int e = 0; e < DMAX; ++e)
        if (e < d.valueSize)
          out[row * d.valueSize + e] = st<S>(acc[r][e] * inverse);
      lse[row] = st<L>(empty ? INFINITY : max[r] + logf(sum[r]));
    }
  }
}

template <typename S, typename L, int DMAX, int R>
__global__ void flashGradQuery(AttentionDesc d, const S *dout, const S *q,
                               const S *k, const S *v, const S *out,
                               const L *lse, S *dq) {
  constexpr int kTile = kRows<DMAX>;
  __shared__ float ks[kTile][DMAX];
  __shared__ float vs[kTile][DMAX];
  int64_t tiles = (d.queries + kTile - 1) / kTile;
  for (int64_t block = blockIdx.x; block < d.batch * d.heads * tiles;
       block += gridDim.x) {
    auto [bh, first, last, kvRow] = queryTile(d, block, tiles, kTile);
    int64_t b = bh / d.heads, h = bh % d.heads;
    DropoutKey key = dropoutKey(d);
    float qr[R][DMAX], dor[R][DMAX], acc[R][DMAX], delta[R];
    SoftmaxRow softmax[R];
    for (int r = 0; r < R; ++r) {
      int64_t i = first + threadIdx.x + r * blockDim.x;
      int64_t row = bh * d.queries + i;
      delta[r] = 0.0f;
      TGC_UNROLL
      for (int e = 0; e < DMAX; ++e) {
        bool inRow = i < last;
        qr[r][e] =
            inRow && e < d.headSize ? float(ld(q[row * d.headSize + e])) : 0;
        dor[r][e] = inRow && e < d.valueSize
                        ? float(ld(dout[row * d.valueSize + e]))
                        : 0.0f;
        if (inRow && e < d.valueSize)
          delta[r] += dor[r][e] * float(ld(out[row * d.valueSize + e]));
        acc[r][e] = 0.0f;
      }
      softmax[r] =
          i < last ? backwardRow(d, float(ld(lse[row])), q + row * d.headSize,
                                 k + kvRow * d.headSize, b, h, i)
                   : SoftmaxRow{0.0f, 0.0f};
    }
    forEachVisibleKey<S, DMAX, R>(
        d, k, v, kvRow, first, last, ks, vs,
        [&](int r, int64_t i, int64_t j, int t) {
          float c = capScore(d, float(d.scale) * dot<DMAX>(qr[r], ks[t]));
          float s = c + biasAt(d, b, h, i, j);
          float p = expf((s - softmax[r].max) - softmax[r].logSum);
          float dp = dropped(d, key, dot<DMAX>(dor[r], vs[t]), b, h, i, j);
          float ds = float(d.scale) * capSlope(d, c) * p * (dp - delta[r]);
          TGC_UNROLL
          for (int e = 0; e < DMAX; ++e)
            acc[r][e] += ds * ks[t][e];
        });
    for (int r = 0; r < R; ++r) {
      int64_t i = first + threadIdx.x + r * blockDim.x;
      if (i >= last)
        continue;
      int64_t row = bh * d.queries + i;
      TGC_UNROLL
      for (int e = 0; e < DMAX; ++e)
        if (e < d.headSize)
          dq[row * d.headSize + e] = st<S>(acc[r][e]);
    }
  }
}

template <typename S, typename L, int DMAX, int R>
__global__ void flashGradKeyValue(AttentionDesc d, const S *dout, const S *q,
                                  const S *k, const S *v, const S *out,
                                  const L *lse, S *dk, S *dv) {
  constexpr int kTile = kRows<DMAX>, kQueries = kQueryTile<DMAX>;
  // The block's own keys and values, a row per thread: padded by one so
  // that the threads' rows fall in different banks.
  __shared__ float kOwn[kTile][DMAX + 1];
  __shared__ float vOwn[kTile][DMAX + 1];
  __shared__ float qs[kQueries][DMAX];
  __shared__ float dos[kQueries][DMAX];
  __shared__ SoftmaxRow softmaxRows[kQueries];
  __shared__ float deltas[kQueries];
  int64_t tiles = (d.keys + kTile - 1) / kTile;
  int64_t group = d.heads / d.kvHeads;
  for (int64_t block = blockIdx.x; block < d.batch * d.kvHeads * tiles;
       block += gridDim.x) {
    int64_t bkv = block / tiles, first = (block % tiles) * kTile;
    int64_t b = bkv / d.kvHeads, kvh = bkv % d.kvHeads;
    int64_t kvRow = bkv * d.keys;
    DropoutKey key = dropoutKey(d);
    int64_t last = first + kTile < d.keys ? first + kTile : d.keys;
    __syncthreads();
    loadTile<S, DMAX>(kOwn, kTile, k, kvRow + first, kvRow + d.keys,
                      d.headSize);
    loadTile<S, DMAX>(vOwn, kTile, v, kvRow + first, kvRow + d.keys,
                      d.valueSize);
    float dkAcc[R][DMAX], dvAcc[R][DMAX];
    for (int r = 0; r < R; ++r)
      TGC_UNROLL
    for (int e = 0; e < DMAX; ++e)
      dkAcc[r][e] = dvAcc[r][e] = 0.0f;
    // The first query that sees the block's first key.
    int64_t start = d.causal ? first - (d.keys - d.queries) : 0;
    start = start < 0 ? 0 : start;
    for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h) {
      int64_t rows = (b * d.heads + h) * d.queries;
      for (int64_t i0 = start; i0 < d.queries; i0 += kQueries) {
        __syncthreads();
        loadTile<S, DMAX>(qs, kQueries, q, rows + i0, rows + d.queries,
                          d.headSize);
        loadTile<S, DMAX>(dos, kQueries, dout, rows + i0, rows + d.queries,
                          d.valueSize);
        for (int x = threadIdx.x; x < kQueries; x += blockDim.x) {
          int64_t row = rows + i0 + x;
          float delta = 0.0f;
          if (i0 + x < d.queries)
            for (int64_t e = 0; e < d.valueSize; ++e)
              delta += float(ld(dout[row * d.valueSize + e])) *
                       float(ld(out[row * d.valueSize + e]));
          deltas[x] = delta;
          softmaxRows[x] =
              i0 + x < d.queries
                  ? backwardRow(d, float(ld(lse[row])), q + row * d.headSize,
                                k + kvRow * d.headSize, b, h, i0 + x)
                  : SoftmaxRow{0.0f, 0.0f};
        }
        __syncthreads();
        int64_t count = d.queries - i0 < kQueries ? d.queries - i0 : kQueries;
        for (int r = 0; r < R; ++r) {
          int t = threadIdx.x + r * blockDim.x;
          int64_t j = first + t;
          if (j >= last)
            continue;
          for (int x = 0; x < count; ++x) {
            if (d.causal && j >= visibleKeys(d, i0 + x))
              continue;
            float c = capScore(d, float(d.scale) * dot<DMAX>(qs[x], kOwn[t]));
            float s = c + biasAt(d, b, h, i0 + x, j);
            float p = expf((s - softmaxRows[x].max) - softmaxRows[x].logSum);
            bool kept = keeps(d, key, b, h, i0 + x, j);
            float dp = throughMask(d, kept, dot<DMAX>(dos[x], vOwn[t]));
            float ds = float(d.scale) * capSlope(d, c) * p * (dp - deltas[x]);
            float weight = throughMask(d, kept, p);
            TGC_UNROLL
            for (int e = 0; e < DMAX; ++e) {
              dvAcc[r][e] += weight * dos[x][e];
              dkAcc[r][e] += ds * qs[x][e];
            }
          }
        }
      }
    }
    for (int r = 0; r < R; ++r) {
      int64_t j = first + threadIdx.x + r * blockDim.x;
      if (j >= last)
        continue;
      TGC_UNROLL
      for (int e = 0; e < DMAX; ++e) {
        if (e < d.headSize)
          dk[(kvRow + j) * d.headSize + e] = st<S>(dkAcc[r][e]);
        if (e < d.valueSize)
          dv[(kvRow + j) * d.valueSize + e] = st<S>(dvAcc[r][e]);
      }
    }
  }
}

/// The head-size bound these kernels take for `d` (64 or 128), or 0 when a
/// head or value row is longer than 128 (the caller falls back).
inline int boundFor(const AttentionDesc &d) {
  int64_t size = d.headSize > d.valueSize ? d.headSize : d.valueSize;
  return size <= 64 ? 64 : size <= 128 ? 128 : 0;
}

} // namespace tgc::rt::flash

#endif // TGC_RUNTIME_FLASHATTENTION_H
