/* math_gemm.h - the single-precision GEMM shared by the CPU kernels (MatMul,
 * Gemm, and whoever lowers to a matrix product: Conv via im2col, ...).
 *
 * Row-major storage throughout.  The routine is the seam the speed work
 * replaces with packed SIMD micro-kernels: callers only see this signature.
 */
#ifndef NN_CPU_MATH_GEMM_H
#define NN_CPU_MATH_GEMM_H

#include <stdint.h>

/* C[M x N] = alpha * op(A)[M x K] * op(B)[K x N] + beta * C
 *
 *   transa == 0: A(i,k) = A[i * lda + k]   (A stored M x K)
 *   transa != 0: A(i,k) = A[k * lda + i]   (A stored K x M)
 *   transb == 0: B(k,j) = B[k * ldb + j]   (B stored K x N)
 *   transb != 0: B(k,j) = B[j * ldb + k]   (B stored N x K)
 *
 * beta == 0 means C is write-only (its old contents, NaN included, are never
 * read), as in BLAS.  K == 0 gives C = beta * C.  C must not overlap A or B.
 *
 * Makes no heap allocation: its packing buffers (about 96 KiB) live on the
 * calling thread's stack.  Safe to call from several threads at once on
 * disjoint C blocks. */
void nn_sgemm(int transa, int transb, int64_t M, int64_t N, int64_t K, float alpha,
              const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
              float *C, int64_t ldc);

#endif
