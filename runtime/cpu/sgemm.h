/* sgemm.h - packed single-precision GEMM with runtime CPU dispatch.
 *
 *   C[M x N] = epilogue(alpha * op(A)[M x K] * op(B)[K x N] + beta * C)
 *
 * Row-major storage, BLAS-like conventions:
 *   transa == 0: A(i,k) = A[i * lda + k]   (A stored M x K)
 *   transa != 0: A(i,k) = A[k * lda + i]   (A stored K x M)
 *   transb == 0: B(k,j) = B[k * ldb + j]   (B stored K x N)
 *   transb != 0: B(k,j) = B[j * ldb + k]   (B stored N x K)
 * beta == 0 means C is write-only (old contents, NaN included, never read).
 * K == 0 or alpha == 0 gives C = beta * C (A and B are not read), then the
 * epilogue.  C must not overlap A, B or the workspace.
 *
 * Design (BLIS-style):
 *   - op(A) is packed into panels of MR rows ([panel][k][MR]), op(B) into
 *     panels of NR columns ([panel][k][NR]); a register-blocked micro-kernel
 *     multiplies one A panel by one B panel over a KC slice of K.
 *   - Micro-kernels: AVX-512 (14x32), AVX2+FMA (6x16), portable C (4x8); the
 *     best one present is chosen once at first use (cpuid), or forced with the
 *     environment variable NN_CPU=portable|avx2|avx512 (a request above what
 *     the CPU has falls back to the best path it has).
 *   - Narrow results (N <= 16 / 8 / 4 columns on AVX-512 / AVX2 / portable:
 *     GEMV-like products, a 1x1 conv on a tiny map) and the thin last panel
 *     of wide ones use a second kernel that vectorizes over M instead of
 *     wasting most of the NR lanes; a last panel just past half width
 *     (17-24 columns on AVX-512, 9-12 on AVX2: 7x7 maps, 49 = 32 + 17) runs
 *     a half-width micro-kernel plus the narrow one.
 *   - Packing of A (row-major) and of a transposed B uses 8x8 in-register
 *     transposes on the AVX paths; the weights' rows are prefetched.
 *   - Bias (per row or per column) and the activation are applied in the
 *     micro-kernel's store, while the tile is in registers.
 *   - No allocation: packing buffers live in a caller-provided workspace.
 *   - Threads: the result is cut into tiles claimed dynamically by up to
 *     `threads` workers of nn_parallel_for (one workspace slot each).
 *
 * Constant operands are packed once (nn_sgemm_pack_a / nn_sgemm_pack_b, at
 * prepare time) and passed to nn_sgemm_compute_pa / nn_sgemm_compute_pb:
 *   - Conv as im2col GEMM, Y[Cout x HW] = W[Cout x K] * col[K x HW]: the
 *     constant is A (the weights) -> pack A.  The im2col matrix need not
 *     exist: nn_sgemm_compute_pa_fn with nn_sgemm_pack_im2col gathers it
 *     from the image straight into the B panels (implicit GEMM).  A 1x1,
 *     stride-1, unpadded conv needs no gather at all: B is the input planes
 *     (ldb = H*W) through nn_sgemm_compute_pa.
 *   - MatMul / Gemm, Y[rows x out] = X[rows x in] * W[in x out] (or W^T with
 *     transB=1): the constant is B -> pack B.
 * Depthwise convolution has its own direct kernel: cpu/dwconv.h.
 */
#ifndef NN_CPU_SGEMM_H
#define NN_CPU_SGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nn_internal.h"

/* ---- CPU dispatch ------------------------------------------------------------ */
typedef enum nn_cpu_isa {
  NN_CPU_PORTABLE = 0,   /* plain C, every machine */
  NN_CPU_AVX2 = 1,       /* x86-64 AVX2 + FMA */
  NN_CPU_AVX512 = 2,     /* x86-64 AVX-512F */
  NN_CPU_ISA_COUNT
} nn_cpu_isa;

/* The path in use: resolved once (cpuid + NN_CPU), then cached.  Thread-safe. */
nn_cpu_isa nn_cpu_isa_get(void);
/* Whether this CPU (and this build) can run a path. */
bool nn_cpu_isa_supported(nn_cpu_isa isa);
/* Force a path for the whole process (tests, benchmarks).  Returns false and
 * changes nothing when the path is not supported.  Not to be called while a
 * GEMM runs.  Buffers packed before keep working: they record their path. */
bool nn_cpu_isa_set(nn_cpu_isa isa);
/* Whether this CPU's 512-bit FMAs issue at half the rate of its 256-bit
 * ones (AMD Zen 4: each runs as two 256-bit halves), so that AVX-512 kernels
 * peak no higher than AVX2 ones: a kernel choice tuned where 512-bit FMAs
 * double the peak (conv.c's direct-or-Winograd rule) follows the AVX2 rule
 * there.  Cached after the first call; false off x86. */
bool nn_cpu_avx512_half_rate(void);
/* "portable", "avx2", "avx512". */
const char *nn_cpu_isa_name(nn_cpu_isa isa);

/* ---- epilogue ---------------------------------------------------------------- */
typedef enum nn_sgemm_act {
  NN_SGEMM_ACT_NONE = 0,
  NN_SGEMM_ACT_RELU,     /* max(v, 0) */
  NN_SGEMM_ACT_CLIP,     /* min(max(v, lo), hi); Relu6 is lo = 0, hi = 6 */
  NN_SGEMM_ACT_LEAKY,    /* v < 0 ? alpha * v : v */
  NN_SGEMM_ACT_HSWISH,   /* v * clamp(v / 6 + 1/2, 0, 1) (ONNX HardSwish) */
  NN_SGEMM_ACT_SIGMOID,  /* 1 / (1 + exp(-v)); vector paths: |rel err| < 1e-6 */
  NN_SGEMM_ACT_SILU,     /* v * sigmoid(v) */
  NN_SGEMM_ACT_GELU,     /* 0.5 v (1 + erf(v / sqrt(2))); vector paths: vmath.h's erf */
} nn_sgemm_act;

typedef enum nn_sgemm_bias {
  NN_SGEMM_BIAS_NONE = 0,
  NN_SGEMM_BIAS_ROW,     /* bias[i] added to row i (M values): Conv's per-channel bias */
  NN_SGEMM_BIAS_COL,     /* bias[j] added to column j (N values): Gemm's C of shape [N] */
} nn_sgemm_bias;

/* What happens to each result v = alpha * acc + beta * C_old:
 * v += bias; v += res[i * ldres + j]; v = act(v).  NaN propagates through
 * every activation as in the unfused operators.  A zeroed struct (or a NULL
 * pointer) means none.  The residual is a second operand of the shape of C
 * (a ResNet / MobileNet shortcut the plan fused into the Conv producing the
 * other side of the Add): it is read once, in the store of the last K slice,
 * so it must not overlap C (partial sums of earlier slices live in C). */
typedef struct nn_sgemm_epi {
  nn_sgemm_act act;
  float alpha;           /* LeakyRelu slope */
  float lo, hi;          /* Clip bounds (use -INFINITY / INFINITY for none) */
  nn_sgemm_bias bias_kind;
  const float *bias;     /* borrowed for the call */
  const float *res;      /* M x N residual, row stride ldres; NULL = none; borrowed */
  int64_t ldres;
} nn_sgemm_epi;

/* The epilogue applying a node's fused activation (nn_node.act, the codes
 * of ops/act_kinds.h), no bias or residual.  False, with *e set to none,
 * for a kind the CPU kernels do not apply. */
bool nn_sgemm_epi_from_act(const nn_act *a, nn_sgemm_epi *e);

/* ---- workspace ----------------------------------------------------------------
 * Bytes of scratch the compute entries need for an M x N x K product split
 * over up to `threads` workers (pass the nn_ctx's `threads`; 1 when calling
 * with c == NULL).  Covers all three entries and every dispatch path, so a
 * size computed at prepare stays valid.  0 when nothing needs packing
 * (M, N or K == 0).  Any alignment works; 64-byte alignment (the arena's) is
 * the fast one.  A smaller workspace is accepted as long as it holds one
 * slot: the product then runs on fewer workers.  The size also covers every
 * smaller product (M' <= M, N' <= N), such as a short last band. */
size_t nn_sgemm_workspace(int64_t M, int64_t N, int64_t K, int threads);

/* Rows of C per tile on the path in use (64 portable, 120 AVX2, 112
 * AVX-512): a B block from a caller's packer (nn_sgemm_compute_pa_fn) is
 * asked for once per such block of rows. */
int64_t nn_sgemm_rows_per_tile(void);

/* The widest product (columns of C) the path in use runs on its narrow,
 * GEMV-like kernel (16 AVX-512, 8 AVX2, 4 portable): a caller that can shape
 * its products (Winograd's tiles per block) stays above it. */
int64_t nn_sgemm_narrow_max(void);

/* ---- pre-packed operands -----------------------------------------------------
 * A packed operand is an opaque, self-describing byte block in memory the
 * caller owns (e.g. inside the node's priv block, from nn_malloc: any
 * alignment).  It records its shape and the path it was packed for; it stays
 * valid until the caller frees it, and may be shared by any number of
 * concurrent computes.  The *_size functions are upper bounds for every
 * path.  Packing makes no allocation and does not retain the source. */
size_t nn_sgemm_pack_a_size(int64_t M, int64_t K);
/* Pack op(A) (M x K) for nn_sgemm_compute_pa. */
void nn_sgemm_pack_a(int transa, int64_t M, int64_t K, const float *A, int64_t lda, void *dst);
/* Undo nn_sgemm_pack_a(0, M, K, ...): write the M x K row-major A (lda K)
 * back from its panels.  NN_ERR_INVALID_ARG when src is not a packed A of
 * that shape (and nothing is written). */
nn_status nn_sgemm_unpack_a(const void *src, int64_t M, int64_t K, float *A);
size_t nn_sgemm_pack_b_size(int64_t K, int64_t N);
/* Pack op(B) (K x N) for nn_sgemm_compute_pb. */
void nn_sgemm_pack_b(int transb, int64_t K, int64_t N, const float *B, int64_t ldb, void *dst);

/* ---- compute --------------------------------------------------------------------
 * c: the kernel context; its pool runs the tiles (NULL = serial on the calling
 * thread; kernels already inside nn_parallel_for run serially anyway).
 * epi: NULL = no bias, no activation.  ws / ws_bytes: scratch of at least one
 * slot (see nn_sgemm_workspace), borrowed for the call.
 * Return NN_OK, or NN_ERR_INVALID_ARG on a bad argument (negative size,
 * workspace too small, packed operand of another shape or not packed). */
nn_status nn_sgemm_compute(nn_ctx *c, int transa, int transb, int64_t M, int64_t N,
                           int64_t K, float alpha, const float *A, int64_t lda,
                           const float *B, int64_t ldb, float beta, float *C, int64_t ldc,
                           const nn_sgemm_epi *epi, void *ws, size_t ws_bytes);
/* A pre-packed by nn_sgemm_pack_a with the same M and K. */
nn_status nn_sgemm_compute_pa(nn_ctx *c, int transb, int64_t M, int64_t N, int64_t K,
                              float alpha, const void *packed_a, const float *B, int64_t ldb,
                              float beta, float *C, int64_t ldc, const nn_sgemm_epi *epi,
                              void *ws, size_t ws_bytes);
/* B pre-packed by nn_sgemm_pack_b with the same K and N. */
nn_status nn_sgemm_compute_pb(nn_ctx *c, int transa, int64_t M, int64_t N, int64_t K,
                              float alpha, const float *A, int64_t lda, const void *packed_b,
                              float beta, float *C, int64_t ldc, const nn_sgemm_epi *epi,
                              void *ws, size_t ws_bytes);

/* Both pre-packed (nn_sgemm_pack_a with M, K; nn_sgemm_pack_b or
 * nn_sgemm_pack_b_fn with K, N), on the same path. */
nn_status nn_sgemm_compute_papb(nn_ctx *c, int64_t M, int64_t N, int64_t K, float alpha,
                                const void *packed_a, const void *packed_b, float beta, float *C,
                                int64_t ldc, const nn_sgemm_epi *epi, void *ws, size_t ws_bytes);

/* ---- B packed by the caller: implicit GEMM ------------------------------------------
 * For operands that exist only implicitly (Conv's im2col matrix), the
 * compute asks the caller to write each block of op(B) straight into the
 * panel layout, so no im2col matrix is ever stored.  The packer must write
 *   dst[p * pstride + k * nr + q] = op(B)(k0 + k, j0 + p * nr + q)
 * for every panel p < ceil(nb / nr), k < kc, q < nr, with 0 for columns at
 * or past j0 + nb.  It is called from the compute's workers, concurrently on
 * disjoint blocks, and must not allocate. */
typedef void (*nn_sgemm_pack_fn)(void *user, int64_t k0, int64_t kc, int64_t j0, int64_t nb,
                                 int nr, float *dst, int64_t pstride);

/* C = epilogue(alpha * A * B + beta * C) with A pre-packed (nn_sgemm_pack_a)
 * and B produced block by block by pack_b(user, ...).  Workspace as for the
 * other entries (nn_sgemm_workspace covers it). */
nn_status nn_sgemm_compute_pa_fn(nn_ctx *c, int64_t M, int64_t N, int64_t K, float alpha,
                                 const void *packed_a, nn_sgemm_pack_fn pack_b, void *user,
                                 float beta, float *C, int64_t ldc, const nn_sgemm_epi *epi,
                                 void *ws, size_t ws_bytes);

/* The same with A unpacked (packed per tile like nn_sgemm_compute's A):
 * no second copy of the weights, for a cost of about 1/min(N, 512) of the
 * product. */
nn_status nn_sgemm_compute_fn(nn_ctx *c, int transa, int64_t M, int64_t N, int64_t K,
                              float alpha, const float *A, int64_t lda, nn_sgemm_pack_fn pack_b,
                              void *user, float beta, float *C, int64_t ldc,
                              const nn_sgemm_epi *epi, void *ws, size_t ws_bytes);

/* Pack op(B) (K x N), written block by block by pack_b(user, ...) as for
 * nn_sgemm_compute_pa_fn, into a pre-packed operand for nn_sgemm_compute_pb
 * (dst: nn_sgemm_pack_b_size(K, N) bytes, e.g. in a workspace).  For an
 * operand that exists only implicitly and feeds several row tiles (a conv's
 * im2col matrix on a small map with many output channels): gathered once
 * here, instead of once per row tile by nn_sgemm_compute_fn.  c: its pool
 * packs groups of k_unit rows in parallel, every column of them in one call
 * (NULL = serial; k_unit < 1 = all rows at once): an im2col passes KH * KW,
 * so that each input channel is gathered by one call.  No allocation. */
void nn_sgemm_pack_b_fn(nn_ctx *c, int64_t K, int64_t N, int64_t k_unit, nn_sgemm_pack_fn pack_b,
                        void *user, void *dst);

/* A ready-made packer for 2-D convolution (1-D is IH = OH = KH = 1):
 * op(B) is the im2col matrix of one image and one group, K = C * KH * KW
 * rows in ONNX weight order (c, kh, kw), N = OH * OW columns (oh, ow).
 * Pass a pointer to this struct as `user`; x is borrowed for the call. */
typedef struct nn_sgemm_im2col {
  const float *x;          /* [C][IH][IW]: the group's input channels */
  int64_t C, IH, IW;
  int64_t OH, OW;
  int KH, KW;
  int SH, SW;              /* >= 1 */
  int PT, PL;              /* top / left padding (bottom / right follow from OH, OW) */
  int DH, DW;              /* dilations; 0 means 1 */
} nn_sgemm_im2col;
void nn_sgemm_pack_im2col(void *user, int64_t k0, int64_t kc, int64_t j0, int64_t nb, int nr,
                          float *dst, int64_t pstride);

#endif
