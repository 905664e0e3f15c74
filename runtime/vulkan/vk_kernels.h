/* vk_kernels.h - the Vulkan compute kernels: the API under the op layer.
 *
 * One nn_vk_k_* function per compute kernel (a GLSL shader, or a pair that
 * serve one job, like gemm/gemv): parameters -> push constants,
 * specialization constants, bindings, group counts -> nn_vk_exec_dispatch.
 * Each kernel lives in the family file of the ops that use it, next to
 * their supports/record functions; this header groups them the same way,
 * one section per vk_<family>.c.  The op layer (vk_<family>.c) and the
 * kernel tests (tests/vulkan) call them; vk_graph.c does not.
 *
 * Each records one (or a few) dispatches computing on float32 tensors given
 * as nn_vk_tensor views.  Shapes are validated against the views' sizes
 * (NN_ERR_INVALID_ARG on mismatch); a tensor larger than the device's
 * maxStorageBufferRange gives NN_ERR_UNSUPPORTED (so the op layer can fall
 * back).  Zero-element outputs record nothing.  Output views may alias input
 * views only where stated (element-wise kernels).
 *
 * What goes where: shapes and offsets travel in push constants, so one
 * pipeline serves every layer with the same structure; what decides the
 * code (operation, activation, kernel geometry, rank, tile sizes) is a
 * specialization constant, so the driver compiles straight-line code for it.
 * A model thus needs a few dozen pipelines, not one per node.
 */
#ifndef NN_VK_KERNELS_H
#define NN_VK_KERNELS_H

#include "vk_backend.h"

/* An activation applied by the unary kernel, or fused into the epilogue of
 * the binary, conv2d, gemm and affine kernels. */
typedef struct nn_vk_act {
  int kind;               /* NN_VK_ACT_* */
  float a, b;
} nn_vk_act;

/* ==== unary (vk_unary.c, shader unary) ===================================== */

/* y = act(x), n elements.  y may alias x exactly. */
nn_status nn_vk_k_unary(nn_vk_exec *e, nn_vk_act act, int64_t n,
                        const nn_vk_tensor *x, const nn_vk_tensor *y, nn_error *err);

/* ==== binary (vk_binary.c, shader binary) ================================== */

/* y = act(a OP b) over the output shape dims[rank] with element strides of
 * a and b (0 on broadcast dims; see nn_broadcast_strides).  y is dense.
 * y may alias a or b exactly when that operand is dense in y's shape. */
nn_status nn_vk_k_binary(nn_vk_exec *e, int op, nn_vk_act act, int rank,
                         const int64_t *dims, const int64_t *sa, const int64_t *sb,
                         const nn_vk_tensor *a, const nn_vk_tensor *b,
                         const nn_vk_tensor *y, nn_error *err);

/* Integer Add, Sub, Mul, Max, Min (shader binary_int): as nn_vk_k_binary on
 * operands of one integer element type et (NN_VK_ET_I8 .. U64), computed on
 * 64 bits and stored wrapped to the type's width; no activation. */
nn_status nn_vk_k_binary_int(nn_vk_exec *e, int op, int et, int rank, const int64_t *dims,
                             const int64_t *sa, const int64_t *sb, const nn_vk_tensor *a,
                             const nn_vk_tensor *b, const nn_vk_tensor *y, nn_error *err);

/* Comparisons and logic (NN_VK_CMP_*, shader binary_compare): y (bool) =
 * a OP b over the output shape dims[rank] with element strides of a and b
 * (0 on broadcast dims), both of element type et (NN_VK_ET_*); NOT reads a
 * only.  y is dense; it may alias a or b exactly when that operand is a
 * dense bool. */
nn_status nn_vk_k_compare(nn_vk_exec *e, int op, int et, int rank, const int64_t *dims,
                          const int64_t *sa, const int64_t *sb, const nn_vk_tensor *a,
                          const nn_vk_tensor *b, const nn_vk_tensor *y, nn_error *err);

/* Where (shader binary_where): y = c ? x : z over dims[rank] (rank <=
 * NN_VK_WHERE_MAX_RANK) with element strides per operand; c bool, x, z, y
 * of element type et.  y is dense and may alias x or z exactly when dense. */
nn_status nn_vk_k_where(nn_vk_exec *e, int et, int rank, const int64_t *dims,
                        const int64_t *sc, const int64_t *sx, const int64_t *sz,
                        const nn_vk_tensor *c, const nn_vk_tensor *x, const nn_vk_tensor *z,
                        const nn_vk_tensor *y, nn_error *err);

/* ==== cast (vk_cast.c, shader cast) ======================================== */

/* y = x converted from element type eti to eto (NN_VK_ET_*), n elements,
 * with the CPU's Cast semantics.  y may alias x exactly when the two types
 * have the same size. */
nn_status nn_vk_k_cast(nn_vk_exec *e, int eti, int eto, int64_t n, const nn_vk_tensor *x,
                       const nn_vk_tensor *y, nn_error *err);

/* ==== conv (vk_conv.c, shaders conv2d, conv2d_direct, conv_transpose) ====== */

/* 2-D convolution, NCHW, weights [M, C/group, KH, KW], optional bias [M].
 * Implicit GEMM tiled in shared memory (1x1 fast path), or a direct kernel
 * for depthwise (group == C). */
typedef struct nn_vk_conv2d {
  int64_t N, C, H, W;     /* input */
  int64_t M, OH, OW;      /* output channels and size */
  int KH, KW, SH, SW, DH, DW;
  int PT, PL;             /* leading pads (trailing ones follow from OH/OW) */
  int group;
  nn_vk_act act;
} nn_vk_conv2d;
nn_status nn_vk_k_conv2d(nn_vk_exec *e, const nn_vk_conv2d *p, const nn_vk_tensor *x,
                         const nn_vk_tensor *w, const nn_vk_tensor *bias,
                         const nn_vk_tensor *y, nn_error *err);

/* ConvTranspose, NC + 3 spatial dims (1-D and 2-D models: leading dims of
 * size 1, as nn_conv_geom), weights [C, M/group, k...] (the ONNX layout),
 * optional bias [M].  pb: the pads cropped at the begin of each dim (the
 * end follows from out). */
typedef struct nn_vk_convt {
  int64_t N, C, M;
  int64_t in[3], out[3];
  int k[3], s[3], d[3], pb[3];
  int group;
  nn_vk_act act;
} nn_vk_convt;
nn_status nn_vk_k_convt(nn_vk_exec *e, const nn_vk_convt *p, const nn_vk_tensor *x,
                        const nn_vk_tensor *w, const nn_vk_tensor *bias, const nn_vk_tensor *y,
                        nn_error *err);

/* ==== pool (vk_pool.c, shader pool2d; global pooling uses reduce) ========== */

/* Max/average pooling over the last two dims of [NC, H, W].  Average divides
 * by the window clipped to the padded input (count_include_pad) or to the
 * input. */
typedef struct nn_vk_pool2d {
  int kind;               /* NN_VK_POOL_* */
  int64_t NC, H, W, OH, OW;
  int KH, KW, SH, SW, DH, DW;
  int PT, PL, PB, PR;
  bool count_include_pad;
} nn_vk_pool2d;
nn_status nn_vk_k_pool2d(nn_vk_exec *e, const nn_vk_pool2d *p, const nn_vk_tensor *x,
                         const nn_vk_tensor *y, nn_error *err);

/* ==== norm (vk_norm.c, shaders affine, lrn, norm_rows) ===================== */

/* Per-channel affine (inference BatchNormalization, scale+bias):
 * x viewed as [outer, C, inner]; y = act(x * scale[c] + bias[c]).  y may
 * alias x. */
nn_status nn_vk_k_affine(nn_vk_exec *e, int64_t outer, int64_t C, int64_t inner,
                         nn_vk_act act, const nn_vk_tensor *x, const nn_vk_tensor *scale,
                         const nn_vk_tensor *bias, const nn_vk_tensor *y, nn_error *err);

/* Local response normalization across channels of [N, C, inner]. */
nn_status nn_vk_k_lrn(nn_vk_exec *e, int64_t N, int64_t C, int64_t inner, int size,
                      float alpha, float beta, float bias, const nn_vk_tensor *x,
                      const nn_vk_tensor *y, nn_error *err);

/* Row normalization (shader norm_rows): x viewed as [rows, len], each row
 * normalized (NN_VK_ROWNORM_LAYER: mean and variance; RMS: mean square)
 * then y = v * scale[pi] + bias[pi] with pi = (row % RM) * rs + (j / JD) * js
 * per parameter (Layer/RMS: a full row or a scalar; Instance/Group: per
 * channel or group).  bias, mean, inv may be NULL; mean and inv receive the
 * row's mean and 1/sqrt(var + eps) (float, [rows]).  y may alias x. */
typedef struct nn_vk_rownorm {
  int kind;               /* NN_VK_ROWNORM_* */
  int64_t rows, len;
  float eps;
  int64_t RM, JD;
  int64_t rs_s, js_s, rs_b, js_b;
  int64_t n_scale, n_bias; /* elements of the parameter views */
} nn_vk_rownorm;
nn_status nn_vk_k_rownorm(nn_vk_exec *e, const nn_vk_rownorm *p, const nn_vk_tensor *x,
                          const nn_vk_tensor *scale, const nn_vk_tensor *bias,
                          const nn_vk_tensor *y, const nn_vk_tensor *mean,
                          const nn_vk_tensor *inv, nn_error *err);

/* ==== gemm (vk_gemm.c, shaders gemm, gemv) ================================= */

/* Batched GEMM: y[b][m][n] = act(alpha * sum_k A(b,m,k) B(b,k,n) + beta * C(m,n))
 * with A(b,m,k) = a[(b/batch2)*sa1 + (b%batch2)*sa2 + m*sam + k*sak] (element
 * strides express transposes and batch broadcasting), B alike, C optional
 * (strides scm/scn, 0 to broadcast; no batch), y dense [batch1*batch2, M, N]. */
typedef struct nn_vk_gemm {
  int64_t M, N, K;
  int64_t sam, sak, sbk, sbn;
  int64_t batch1, batch2;
  int64_t sa1, sa2, sb1, sb2;
  int64_t scm, scn;
  float alpha, beta;
  nn_vk_act act;
} nn_vk_gemm;
nn_status nn_vk_k_gemm(nn_vk_exec *e, const nn_vk_gemm *p, const nn_vk_tensor *a,
                       const nn_vk_tensor *b, const nn_vk_tensor *c,
                       const nn_vk_tensor *y, nn_error *err);

/* ==== reduce (vk_reduce.c, shaders reduce, reduce_arg) ===================== */

/* x viewed as [outer, r, inner] reduced over r -> y [outer, inner]. */
nn_status nn_vk_k_reduce(nn_vk_exec *e, int kind, int64_t outer, int64_t r, int64_t inner,
                         const nn_vk_tensor *x, const nn_vk_tensor *y, nn_error *err);

/* ArgMax / ArgMin (shader reduce_arg): x of element type et viewed as
 * [outer, len, inner] -> int64 indices y [outer, inner]; first extreme (last
 * with `last`), a NaN wins (numpy). */
nn_status nn_vk_k_argminmax(nn_vk_exec *e, int et, bool is_max, bool last, int64_t outer,
                            int64_t len, int64_t inner, const nn_vk_tensor *x,
                            const nn_vk_tensor *y, nn_error *err);

/* ==== softmax (vk_softmax.c, shader softmax) =============================== */

/* (Log)softmax of x viewed as [outer, r, inner] along r. */
nn_status nn_vk_k_softmax(nn_vk_exec *e, bool log, int64_t outer, int64_t r, int64_t inner,
                          const nn_vk_tensor *x, const nn_vk_tensor *y, nn_error *err);

/* ==== transform (vk_transform.c, shaders copy, pad) ======================== */

/* Strided copy of 32-bit words: for every index c over dims[rank],
 * y[y_off + sum c_i*ys_i] = x[x_off + sum c_i*xs_i] (strides may be 0 or
 * negative on x).  Transpose, slice, concat/split (one call per part),
 * expand. */
nn_status nn_vk_k_copy(nn_vk_exec *e, int rank, const int64_t *dims,
                       const int64_t *xs, int64_t x_off, const int64_t *ys, int64_t y_off,
                       const nn_vk_tensor *x, const nn_vk_tensor *y, nn_error *err);

/* Pad (32-bit words): y has out_dims, x sits at pads_begin (negative pads
 * crop).  `value` is the constant as raw bits. */
nn_status nn_vk_k_pad(nn_vk_exec *e, int mode, uint32_t value, int rank,
                      const int64_t *in_dims, const int64_t *out_dims,
                      const int64_t *pads_begin, const nn_vk_tensor *x,
                      const nn_vk_tensor *y, nn_error *err);

/* ==== resize (vk_resize.c, shader resize) ================================== */

/* Resize of the last two dims of [NC, H, W] -> [NC, OH, OW]. */
typedef struct nn_vk_resize {
  int mode;               /* NN_VK_RESIZE_* */
  int coord;              /* NN_VK_COORD_* */
  int nearest;            /* NN_VK_NEAREST_* */
  int64_t NC, H, W, OH, OW;
  float scale_h, scale_w; /* ONNX scales (output/input) */
  float cubic_a;          /* cubic: cubic_coeff_a */
  bool exclude_outside;   /* cubic: taps outside the input weigh 0 */
} nn_vk_resize;
nn_status nn_vk_k_resize(nn_vk_exec *e, const nn_vk_resize *p, const nn_vk_tensor *x,
                         const nn_vk_tensor *y, nn_error *err);

#endif /* NN_VK_KERNELS_H */
