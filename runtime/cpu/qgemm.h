/* qgemm.h - 8-bit integer GEMM for the quantized convolutions (cpu/conv.c's
 * QLinearConv and ConvInteger):
 *
 *   C[m][n] = sum_k (A[m][k] - za[m]) * (B[k][n] - zb)          (int32)
 *
 * A: the constant weights as int8 values, packed once (nn_qgemm_pack_a); a
 *    uint8 tensor is passed shifted by -128, its zero points with it, which
 *    leaves every difference unchanged.
 * B: the activations as uint8 (an int8 tensor shifted by +128, its zero point
 *    with it), handed over row by row by the caller (implicit im2col): no B
 *    matrix is ever stored, only one block of packed panels per worker.
 * Sums wrap modulo 2^32, as the int32 reference's (and the hardware's) do,
 * so a result is the reference's bit for bit whatever the order of the sum.
 *
 * The product is sum A*B, less zb * (row sums of A) and za[m] * (column sums
 * of B), plus K * zb * za[m]: the zero points never enter the inner loop.
 * The column sums are only made when some za[m] is not 0 (symmetric int8
 * weights, or uint8 weights at 128, need none).
 *
 * Paths (chosen when A is packed, recorded in the packed block; the compute
 * follows the block):
 *   - AVX-512 VNNI: vpdpbusd, 64 uint8 x int8 products summed into 16 int32
 *     per instruction (no intermediate saturation): 8 rows x 32 columns.
 *   - AVX2 (and AVX-512 without VNNI): operands widened to int16 pairs,
 *     vpmaddwd + vpaddd, exact (vpmaddubsw's int16 saturation would not be:
 *     255 * 127 * 2 > 32767): 6 rows x 16 columns.
 *   - portable C over the VNNI layout, 4 rows x 8 columns (tests cover it).
 */
#ifndef NN_CPU_QGEMM_H
#define NN_CPU_QGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nn_internal.h"

/* The path this machine's CPU (nn_cpu_isa_get) takes: 0 portable, 1 AVX2,
 * 2 AVX-512 VNNI (cpu/qconv_direct.c follows the same choice). */
int nn_qgemm_path(void);

/* Bytes of a packed A of M x K: an upper bound for every path. */
size_t nn_qgemm_pack_a_size(int64_t M, int64_t K);

/* Pack A (M x K int8 values, row stride lda) with its per-row zero points
 * za (NULL: all 0) into dst (nn_qgemm_pack_a_size bytes, any alignment; the
 * caller owns it), for the path in use (nn_cpu_isa_get).  The block keeps
 * the row sums; it does not retain A or za. */
void nn_qgemm_pack_a(int64_t M, int64_t K, const int8_t *A, int64_t lda, const int32_t *za,
                     void *dst);

/* The caller's B, one row at a time: return B(k, j0 .. j0 + nb - 1) as nb
 * uint8 values, either a pointer into the caller's data or `scratch` (nb
 * bytes, the callee's to write) after filling it.  Called from the
 * compute's workers, concurrently; must not allocate. */
typedef const uint8_t *(*nn_qgemm_row_fn)(void *user, int64_t k, int64_t j0, int64_t nb,
                                          uint8_t *scratch);

/* The most columns a store is handed at once. */
#define NN_QGEMM_COLS_MAX 512

/* The finished sums of rows m0 .. m0 + mr - 1, columns j0 .. j0 + nb - 1
 * (nb <= NN_QGEMM_COLS_MAX): c[r * ldc + t] is C[m0 + r][j0 + t].  Concurrent calls get disjoint
 * blocks; must not allocate. */
typedef void (*nn_qgemm_store_fn)(void *user, int64_t m0, int64_t mr, int64_t j0, int64_t nb,
                                  const int32_t *c, int64_t ldc);

/* Scratch bytes for a compute of N columns with an A of M x K on up to
 * `threads` workers: an upper bound for every path, so a size taken at
 * prepare stays valid. */
size_t nn_qgemm_workspace(int64_t M, int64_t K, int64_t N, int threads);

/* C for columns [0, N): rows of B from `row`, results to `store`, with B's
 * zero point zb (0..255).  ws / ws_bytes: at least one worker's scratch
 * (fewer workers run when it holds fewer slots).  NN_ERR_INVALID_ARG for a
 * block that is not a packed A, or a workspace below one slot. */
nn_status nn_qgemm_compute(nn_ctx *c, const void *packed_a, int64_t N, int32_t zb,
                           nn_qgemm_row_fn row, nn_qgemm_store_fn store, void *user, void *ws,
                           size_t ws_bytes);

#endif /* NN_CPU_QGEMM_H */
