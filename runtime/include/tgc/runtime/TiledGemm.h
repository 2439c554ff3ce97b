//===- TiledGemm.h - GEMMs whose bits do not depend on threads --*- C++ -*-===//
//
// The interpreter and the host target compute every f32 and f64 GEMM the
// same way: C (row-major) cut into tiles of kGemmTile rows, or columns
// where C is wider than tall, each tile one BLAS call on one thread. The
// tiles depend on the shape alone, so each element is the same sum
// however many threads take the tiles; OpenBLAS's own threads split a
// product differently for each thread count, and its results change with
// the machine's cores. Header-only: the caller brings the loop over tiles.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_RUNTIME_TILEDGEMM_H
#define TGC_RUNTIME_TILEDGEMM_H

#include <cblas.h>

#include <algorithm>
#include <cstdint>

namespace tgc::rt {

/// Rows (or columns) of C per tile.
constexpr int64_t kGemmTile = 128;

/// One BLAS call: C = alpha op(A) op(B) + beta C, row-major, leading
/// dimensions given.
inline void blasGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                     float alpha, const float *a, int64_t lda, const float *b,
                     int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
              ldb, beta, c, ldc);
}
inline void blasGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                     double alpha, const double *a, int64_t lda,
                     const double *b, int64_t ldb, double beta, double *c,
                     int64_t ldc) {
  cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
              ldb, beta, c, ldc);
}

/// C[m x n] = alpha op(A) op(B) + beta C, row-major, A [m x k] (stored
/// [k x m] when transA), B [k x n] ([n x k] when transB), as tiles (BLAS
/// must run each call on one thread: openblas_set_num_threads(1)):
/// `forEachTile(count, body)` runs body(t) for t in [0, count), in any
/// order, on any threads.
template <typename T, typename ForEachTile>
void tiledGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
               const T *a, const T *b, T *c, T alpha, T beta,
               ForEachTile &&forEachTile) {
  if (m == 0 || n == 0)
    return;
  int64_t lda = transA ? m : k, ldb = transB ? k : n;
  bool byRows = m >= n;
  int64_t extent = byRows ? m : n;
  int64_t tiles = (extent + kGemmTile - 1) / kGemmTile;
  auto tile = [&](int64_t t) {
    int64_t first = t * kGemmTile;
    int64_t size = std::min(kGemmTile, extent - first);
    if (byRows)
      blasGemm(transA, transB, size, n, k, alpha,
               transA ? a + first : a + first * k, lda, b, ldb, beta,
               c + first * n, n);
    else
      blasGemm(transA, transB, m, size, k, alpha, a, lda,
               transB ? b + first * k : b + first, ldb, beta, c + first, n);
  };
  if (tiles <= 1)
    return blasGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, n);
  forEachTile(tiles, tile);
}

} // namespace tgc::rt

#endif // TGC_RUNTIME_TILEDGEMM_H
