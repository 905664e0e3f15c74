/* conv.c - Conv, ConvTranspose, DeformConv, ConvInteger, QLinearConv.
 *
 * float32 products go through the packed GEMM engine (cpu/sgemm.h) or the
 * depthwise kernel (cpu/dwconv.h); the path is chosen per node in prepare:
 *   dw        one input channel per group, 1-D/2-D: nn_dwconv2d over the
 *             whole tensor (depth multiplier = outputs per group);
 *   winograd  3x3 stride 1 (2-D, constant weights, >= 16 channels in and
 *             out): F(2x2, 3x3), 2.25x fewer multiply-adds, the weights
 *             transformed once (see the section below);
 *   1x1       kernel 1, stride 1, no padding (any rank): the input planes
 *             already are the GEMM's right-hand matrix (ldb = H*W);
 *   packed    1-D/2-D with many output channels on a small map: the
 *             im2col matrix (or the 1x1 input planes) packed once into the
 *             engine's B panels, then a plain product (conv_explicit_pays);
 *   implicit  other 1-D/2-D convolutions: the engine gathers the im2col
 *             matrix block by block straight into its B panels
 *             (nn_sgemm_pack_im2col), so no im2col matrix is stored;
 *   explicit  3-D: im2col of a column tile into the workspace (parallel over
 *             its rows), then an ordinary product;
 *   smallc    2-4 input channels, group 1, 2-D, no residual (an RGB first
 *             layer) on AVX2: nn_sconv2d, a direct kernel on a padded copy
 *             of the input (cpu/conv_smallc.h), taken over any of the above;
 *   direct    stride 1 (or 2 on AVX-512 and large maps), group 1, 2-D,
 *             no residual, constant weights, up to 128 input channels, on
 *             AVX2: nn_dconv2d (cpu/conv_direct.h) over implicit and
 *             packed, and over Winograd with few channels in or out on
 *             several threads (conv_direct_pays).
 * In a CPU session the planner replaces a weight that one Conv alone reads
 * by its packed GEMM A panels (conv_const_a_groups, plan.c): packed once
 * and held once.  A weight that other nodes also read (or any weight on the
 * Vulkan backend's CPU steps) is used raw: the engine packs A per tile.
 * Bias and the fused activation (nn_node.act, ops/activation.h) are
 * applied in the GEMM's store while the tile is in registers.
 * ConvTranspose is the adjoint: col = W_g^T * X_g (transposed A, no copy),
 * then col2im accumulates into Y (parallel over output channels), then
 * bias + activation.  DeformConv is the explicit path with a bilinear-sampling
 * im2col.  ConvInteger and QLinearConv accumulate exactly in int32 on their
 * own serial path.
 *
 * Threads: the engine and the depthwise kernel split each product over the
 * session's workers themselves; this file parallelizes its own loops
 * (im2col, col2im, the Winograd transforms and its 16 products, one per
 * worker), never around an engine call that threads itself.
 *
 * float16 is staged through float32 copies in the workspace.  Workspace
 * layout (floats, each part a multiple of 16 so every part stays 64-byte
 * aligned): [float16 staging][int32 weights (quantized)][col tile / packed B
 * / Winograd blocks][serial slots (quantized)][engine scratch (bytes)].
 */
#include <limits.h>
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"
#include "cpu/conv_direct.h"
#include "cpu/conv_smallc.h"
#include "cpu/dwconv.h"
#include "cpu/kernel_util.h"
#include "cpu/ops.h"
#include "cpu/qconv_direct.h"
#include "cpu/qgemm.h"
#include "cpu/sgemm.h"
#include "cpu/vmath.h"
#include "cpu/sgemm_simd.h"
#include "ops/activation.h"
#include "ops/conv.h"
#include "ops/norm.h"

/* ---- fused activation ------------------------------------------------------ */

/* The node's fused activation (nn_node.act) as the engine's epilogue (bias
 * set per call). */
static nn_status conv_act_parse(nn_ctx *c, const nn_node *n, nn_sgemm_epi *e) {
  if (!nn_sgemm_epi_from_act(&n->act, e))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "fused activation %d is not supported", n->act.kind);
  return NN_OK;
}

/* The call's epilogue: the node's activation plus a per-row (output
 * channel) bias when there is one, and the fused residual (rows of ldres
 * floats, laid out as the output; NULL none). */
static nn_sgemm_epi conv_epi_with_bias(const nn_sgemm_epi *act, const float *bias,
                                       const float *res, int64_t ldres) {
  nn_sgemm_epi e = *act;
  e.bias = bias;
  e.bias_kind = bias ? NN_SGEMM_BIAS_ROW : NN_SGEMM_BIAS_NONE;
  e.res = res;
  e.ldres = res ? ldres : 0;
  return e;
}

/* The residual a plan-time pass fused into this Conv (nn_node.res_slot):
 * a float32 tensor of Y's shape added before the activation, or NULL. */
static const nn_value *conv_residual(const nn_node *n) {
  return n->res_slot > 0 && n->res_slot < n->n_in ? n->x[n->res_slot] : NULL;
}

/* ---- parameters ------------------------------------------------------------ */

typedef enum conv_path {
  CONV_PATH_IMPLICIT = 0, /* engine + nn_sgemm_pack_im2col */
  CONV_PATH_PACKED,       /* im2col (or the input planes) packed once into B panels */
  CONV_PATH_EXPLICIT,     /* im2col tile in the workspace + engine (3-D) */
  CONV_PATH_1X1,          /* engine on the input planes */
  CONV_PATH_DW,           /* nn_dwconv2d */
  CONV_PATH_WINO,         /* Winograd F(2x2, 3x3), weights transformed once */
  CONV_PATH_TRANSPOSE,
  CONV_PATH_DEFORM,       /* DeformConv: explicit with a bilinear-sampled im2col */
  CONV_PATH_INT,          /* ConvInteger / QLinearConv: exact int32 accumulation */
  CONV_PATH_DWPW,         /* a 1x1 Conv with the depthwise Conv before it fused in
                             (nn_node.pre): see conv_run_dwpw */
  CONV_PATH_SMALLC,       /* few input channels (a first layer): nn_sconv2d */
  CONV_PATH_DIRECT,       /* stride 1 or 2, up to 128 input channels: nn_dconv2d */
  CONV_PATH_TAPS,         /* mostly padding (dilated): one product per tap and output
                             region, over the taps that land in the input (conv_run_taps) */
} conv_path;

/* How CONV_PATH_DWPW produces the depthwise output the GEMM reads. */
typedef enum conv_dwpw_mode {
  DWPW_BLOCKS = 0,        /* per B block, inside the GEMM (nn_dwconv2d_pack): in cache */
  DWPW_ONCE,              /* into packed B panels in the workspace, then the GEMM */
  DWPW_PLANES,            /* as planes in the workspace (no vector panel path), then
                             the plain 1x1 GEMM: the unfused work, nothing lost */
  DWPW_BANDS,             /* large maps: a band of rows at a time, the depthwise
                             output as planes of the band in the worker's slot, then
                             its serial 1x1 GEMM while they are in L2 (conv_dwpw_bands) */
} conv_dwpw_mode;

/* The input slot that holds the fused depthwise conv's input (after X, W,
 * B and the residual slot 3); x[0] stays the depthwise output, whose shape
 * the 1x1 conv is prepared with but which is never stored. */
#define CONV_DWPW_SLOT 4
/* A channel-scale Mul fused in front (plan.c): its scales, [N or 1, C, 1, 1],
 * in the slot after that. */
#define CONV_SCALE_SLOT 5
/* Maps up to this many pixels compute the depthwise output inside the GEMM;
 * larger ones a band of rows at a time (DWPW_BANDS).  Measured on BlazeFace
 * (AVX2, Zen 3): the in-GEMM path is 14% faster on the front model's maps
 * (64x64 and less) and 7-16% slower on the back model's 128x128 ones than
 * the whole depthwise output as planes first, which bands beat in turn:
 * the back model 6.27 -> 5.54 ms on 1 thread, 4.69 -> 3.84 on 2 (AVX2,
 * Zen 4).  Since the GEMM's lean kernels (sgemm.c) bands win at 64x64
 * too (Zen 4, 1 thread): a 24-channel block 0.102 -> 0.092 ms (AVX2),
 * 0.110 -> 0.100 (AVX-512); the back model 5.21 -> 5.14 ms (AVX2), the
 * front 0.878 -> 0.849, MobileNetV2 7.22 -> 7.14 (AVX-512).  And from
 * 32x32 up since the four-row interior depthwise kernel stopped spilling
 * (dwconv.c), which bands reach and in-GEMM panels do not: a 48-channel
 * block at 32x32 0.074 -> 0.064 ms, the back model 5.00 -> 4.91 (AVX2, 1
 * thread; 2 threads the same within noise, the front model 2% slower).
 * 16x16 maps stay in the GEMM: one band there would leave a thread idle. */
#define CONV_DWPW_MAX_PIXELS 256
/* DWPW_BANDS: a band's depthwise output holds about this many floats, in
 * whole output rows: 96 KiB, in L2 when the GEMM reads it (12K to 96K
 * floats ran the same, Zen 4). */
#define CONV_DWPW_BAND_FLOATS (24 * 1024)


/* Explicit im2col (3-D, DeformConv): the column tile holds at most this many
 * floats (4 MiB); the packed path takes a 2-D right-hand matrix only when it
 * fits whole (conv_explicit_pays). */
#define CONV_COL_FLOATS ((int64_t)1 << 20)
/* Quantized path: size in floats of its (serial) column tile. */
#define CONV_TILE_FLOATS ((int64_t)1 << 17)
/* Column tiles are multiples of this (the widest B panel of the engine). */
#define CONV_NR 32

typedef struct conv_priv {
  nn_conv_geom g;         /* Conv: in -> out; ConvTranspose: X spatial -> Y spatial */
  conv_path path;
  nn_dtype dt;
  int64_t batch, C, M, group, Cg, Mg;
  int64_t K;              /* GEMM depth: Cg * k_sz (Conv), Cg (ConvTranspose) */
  int64_t nt;             /* columns per product: explicit / deform / quantized tile over
                             out_sz, ConvTranspose tile over in_sz */
  int nslots;             /* quantized path: serial scratch slots (1) */
  size_t slot_floats;     /* quantized path: scratch floats per slot */
  size_t wt_floats;       /* quantized path: int32 shifted weights */
  size_t stage_floats;    /* float16: float copies of X, W, B, Y, before all else */
  size_t col_floats;      /* explicit / deform / ConvTranspose column tile, packed B,
                             Winograd blocks */
  size_t gemm_ws;         /* engine scratch in bytes, after everything else */
  int64_t offset_group;   /* DeformConv */
  nn_sgemm_epi epi;       /* fused activation; the bias is set per call */
  nn_sconv_shape scs;     /* CONV_PATH_SMALLC */
  nn_dconv_shape dcs;     /* CONV_PATH_DIRECT: its reordered weights (dc_floats) follow
                             the struct, written at the first run (as Winograd's) */
  size_t dc_floats;
  bool dc_ready;
  /* CONV_PATH_TAPS: KH * KW packed M x C matrices (taps_pa_bytes each) follow
   * the struct, written at the first run */
  size_t taps_pa_bytes;
  size_t taps_out_floats;  /* workspace: the narrow rectangles' results, then one packed B */
  bool taps_ready;
  /* Winograd: 16 transformed weight matrices per group, pre-packed after
   * the struct (packed_bytes each); tiles of 2x2 outputs, tb per block */
  size_t packed_bytes;
  int64_t th, tw, tb;
  size_t v_floats;        /* transformed input block: [16][Cg][tb] */
  size_t blk_floats;      /* one block's V + M (col_floats holds wino_par of them) */
  int64_t wino_nblk;      /* wino_par > 1: blocks, tiles split evenly (conv_wino_block_t0) */
  int wino_par;           /* blocks in flight: 1 = the phases of each block split
                             over the workers; > 1 = whole blocks per worker */
  bool wino_ready;        /* weights transformed (at the first run) */
  /* CONV_PATH_DWPW: the fused depthwise conv, per image */
  nn_dwconv_shape dws;
  nn_sgemm_epi dwepi;     /* its activation; its bias is set per call */
  conv_dwpw_mode dwpw;
  int64_t band_px, band_ld; /* DWPW_BANDS: pixels per band (whole rows), plane stride */
  size_t band_floats;     /* DWPW_BANDS: one worker's band planes */
  int band_par;           /* DWPW_BANDS: workers the slots were sized for */
  /* a BatchNormalization fused before this 1x1 conv (nn_node.pre, NN_FUSE_NORM_PW):
   * X is the normalization's input, packed as min(max(x * a[c] + b[c], lo), hi);
   * a and b, C floats each, follow the struct (conv_norm_ab) */
  bool norm_pre;
  /* CONV_PATH_INT through the float engine (qconv_run_float): workspace
   * floats of the input image, the weights, the column bounds, one image's
   * output (and as many int32 sums), in that order */
  bool qfloat;
  size_t qx_floats, qw_floats, qc_floats, qy_floats;
  /* constant weights (and zero points): their float copy and the bounds
   * kept after the struct instead, made at the first run */
  bool qw_const, qw_ready;
  /* CONV_PATH_INT on the integer GEMM (qconv_run_qgemm): each group's packed
   * weights (qa_bytes each) follow the struct, made at prepare */
  bool qgemm;
  size_t qa_bytes;
  /* ... or, group 1 or depthwise with weight zero points 0, the direct
   * kernel (cpu/qconv_direct.h): its packed block in that place, no
   * offsets */
  bool qdirect;
  /* between two direct integer convolutions, the first's output being the
   * second's input and nothing else's (qconv_link): kept channels-last,
   * written so by the first (qd_out_nhwc), read so by the second */
  bool qd_out_nhwc, qd_in_nhwc;
  /* then, for each k of a group's K, its offset in the (padded) image from
   * the group's first plane at output pixel 0 (qconv_gemm_row) */
  size_t qk_bytes;
  float norm_lo, norm_hi;
  /* a channel-scale Mul fused before this 1x1 conv (the squeeze-excitation
   * gate, nn_node.pre): packed as the normalization with a[c] the run's
   * scales (CONV_SCALE_SLOT; per image when scale_batched) and b[c] = 0 */
  bool scale_pre, scale_batched;
} conv_priv;

#define CONV_PRIV_HEAD nn_align_up(sizeof(conv_priv), 64)

static const void *conv_wino_u(const conv_priv *p, int64_t gi, int xi) {
  return (const char *)p + CONV_PRIV_HEAD + (size_t)(gi * 16 + xi) * p->packed_bytes;
}

/* The fused normalization's per-channel scale (C floats) then shift (C
 * floats): a pointwise conv has no transformed weights before them. */
static float *conv_norm_ab(const conv_priv *p) {
  return (float *)((char *)p + CONV_PRIV_HEAD);
}

/* Column tile of `cols` for a product of depth `rows`: a multiple of CONV_NR
 * with rows x tile <= `budget` floats (at least 2 panels), or all columns. */
static int64_t conv_tile_cols(int64_t rows, int64_t cols, int64_t budget) {
  int64_t nt = budget / (rows > 0 ? rows : 1);
  nt = nt / CONV_NR * CONV_NR;
  if (nt < 2 * CONV_NR)
    nt = 2 * CONV_NR;
  if (nt > cols)
    nt = cols;
  return nt < 1 ? 1 : nt;
}

/* Whether the 2-D geometry fits the int fields of the engine's im2col and
 * the depthwise kernel's shape (attributes may go up to NN_CONV_ATTR_MAX). */
static bool conv_geom_fits_int(const nn_conv_geom *g) {
  for (int i = 0; i < NN_CONV_SP; i++)
    if (g->k[i] > INT_MAX || g->s[i] > INT_MAX || g->d[i] > INT_MAX || g->pb[i] > INT_MAX)
      return false;
  return true;
}


/* The float kernels take float32, and float16 through float32 copies (the
 * op layer's inference saw that W and B have X's type). */
static nn_status conv_check_float(nn_ctx *c, const nn_node *n) {
  nn_dtype dt = n->x[0]->dtype;
  if (dt != NN_DTYPE_FLOAT && dt != NN_DTYPE_FLOAT16)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "input type %s is not supported (float32, float16)",
                   nn_dtype_name(dt));
  return NN_OK;
}

/* The op layer's channels, groups and window (ops/conv.h), X's type and the
 * fused activation; the rest of p zero. */
static nn_status conv_priv_init(nn_ctx *c, const nn_node *n, const nn_conv_params *cp,
                                conv_priv *p) {
  memset(p, 0, sizeof *p);
  p->g = cp->g;
  p->dt = n->x[0]->dtype;
  p->batch = cp->batch;
  p->C = cp->C;
  p->M = cp->M;
  p->group = cp->group;
  p->Cg = cp->Cg;
  p->Mg = cp->Mg;
  return conv_act_parse(c, n, &p->epi);
}

static nn_status conv_finish_priv(nn_ctx *c, nn_node *n, const conv_priv *p) {
  size_t fl = p->stage_floats, slots, bytes;
  if (__builtin_add_overflow(fl, p->wt_floats, &fl) ||
      __builtin_add_overflow(fl, p->col_floats, &fl) ||
      nn_mul_overflow_size((size_t)p->nslots, p->slot_floats, &slots) ||
      __builtin_add_overflow(fl, slots, &fl) ||
      nn_mul_overflow_size(fl, sizeof(float), &bytes) ||
      __builtin_add_overflow(bytes, p->gemm_ws, &bytes))
    return nn_fail(c, NN_ERR_LIMIT, "workspace size overflows");
  size_t priv = CONV_PRIV_HEAD, packed = 0;
  if (p->packed_bytes &&
      (nn_mul_overflow_size((size_t)p->group * 16, p->packed_bytes, &packed) ||
       __builtin_add_overflow(priv, packed, &priv)))
    return nn_fail(c, NN_ERR_LIMIT, "transformed weights overflow");
  if (p->dc_floats &&
      (nn_mul_overflow_size(p->dc_floats, sizeof(float), &packed) ||
       __builtin_add_overflow(priv, packed, &priv)))
    return nn_fail(c, NN_ERR_LIMIT, "reordered weights overflow");
  if (p->taps_pa_bytes &&
      (nn_mul_overflow_size(p->taps_pa_bytes, (size_t)p->g.k_sz, &packed) ||
       __builtin_add_overflow(priv, packed, &priv)))
    return nn_fail(c, NN_ERR_LIMIT, "per-tap weights overflow");
  if (p->qw_const &&
      (nn_mul_overflow_size(p->qw_floats + p->qc_floats, sizeof(float), &packed) ||
       __builtin_add_overflow(priv, packed, &priv)))
    return nn_fail(c, NN_ERR_LIMIT, "the integer weights' float copy overflows");
  if (p->qa_bytes &&
      (nn_mul_overflow_size(p->qa_bytes, p->qdirect ? 1 : (size_t)p->group, &packed) ||
       __builtin_add_overflow(priv, packed, &priv)))
    return nn_fail(c, NN_ERR_LIMIT, "the packed integer weights overflow");
  if (p->qk_bytes && __builtin_add_overflow(priv, p->qk_bytes, &priv))
    return nn_fail(c, NN_ERR_LIMIT, "the integer convolution's offsets overflow");
  if (p->norm_pre && (p->packed_bytes ||
                      __builtin_add_overflow(priv, (size_t)p->C * 2 * sizeof(float), &priv)))
    return nn_fail(c, NN_ERR_LIMIT, "the fused normalization's parameters overflow");
  conv_priv *q = nn_malloc(priv);
  if (!q)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *q = *p;
  /* the transformed copy is a second set of weights: count it as such */
  n->priv_const_bytes = packed;
  n->priv = q;
  n->ws_bytes = bytes;
  return NN_OK;
}


/* float16 runs on float32 copies of every tensor, laid out first in the workspace. */
static size_t conv_stage_floats(const nn_node *n) {
  if (n->x[0]->dtype != NN_DTYPE_FLOAT16)
    return 0;
  size_t s = 0;
  for (int i = 0; i < n->n_in && i < 3; i++)
    if (n->x[i])
      s += nn_align_up((size_t)n->x[i]->numel, 16);
  s += nn_align_up((size_t)n->y[0]->numel, 16);
  return s;
}

/* ---- Conv prepare ------------------------------------------------------------ */

/* Shared by Conv, ConvInteger, QLinearConv and DeformConv (W input wi,
 * bias input bi, -1 none): p from the parameters the op layer's inference
 * checked, and the GEMM depth. */
static nn_status conv_prepare_common(nn_ctx *c, nn_node *n, int wi, int bi, conv_priv *p) {
  nn_conv_params cp;
  nn_status st = nn_conv_params_init(c, n, wi, bi, &cp);
  if (st || (st = conv_priv_init(c, n, &cp, p)))
    return st;
  p->K = p->Cg * p->g.k_sz;
  return NN_OK;
}


/* Whether a 2-D product (rows x cols x depth per image and group) runs
 * faster with its right-hand matrix (the im2col matrix, or the input planes
 * of a 1x1 conv) packed once into the workspace than gathered per tile of
 * rows (nn_sgemm_compute_fn packs each B block once per row tile).  It pays
 * with enough row tiles and a matrix small enough to stay in cache (small
 * maps, deep K); measured on the benchmark models' shapes (AVX-512, 1
 * thread): 3x3 256->256 at 14x14 87 -> 92 GFLOP/s with the col matrix then
 * packed per tile, 1x1 stride 2 512->1024 at 14x14 70 -> 93; large maps
 * (56x56) lose 15-20% because the packed matrix leaves the cache. */
static bool conv_explicit_pays(int64_t rows, int64_t cols, int64_t depth) {
  return rows >= 96 && depth * cols <= CONV_COL_FLOATS && cols <= 1024;
}

/* Engine scratch for a rows x cols x depth product on this context's workers. */
static size_t conv_gemm_ws(const nn_ctx *c, int64_t rows, int64_t cols, int64_t depth) {
  return nn_sgemm_workspace(rows, cols, depth, c->threads > 1 ? c->threads : 1);
}

/* Column tile and workspace of the explicit / deform paths. */
static void conv_plan_explicit(nn_ctx *c, conv_priv *p, int64_t budget) {
  p->nt = conv_tile_cols(p->K, p->g.out_sz, budget);
  p->col_floats = nn_align_up((size_t)(p->K * p->nt), 16);
  p->gemm_ws = conv_gemm_ws(c, p->Mg, p->nt, p->K);
}

/* ---- Winograd F(2x2, 3x3) -----------------------------------------------------------
 * A 3x3 stride-1 convolution computes each 2x2 block of outputs from a 4x4
 * input patch d as Y = A^T [ (G g G^T) .* (B^T d B) ] A: 16 products per
 * block instead of 36.  Over all channels the 16 element-wise products
 * become 16 GEMMs, one per position xi of the 4x4 transform domain:
 *   M[xi] (Mg x tiles) = U[xi] (Mg x Cg) * V[xi] (Cg x tiles)
 * U = G g G^T is transformed once at prepare and pre-packed for the engine
 * (16/9 of the layer's weights, reported as weights: priv_const_bytes); V =
 * B^T d B and the output transform (with bias and activation) run per block
 * of tiles in the workspace.  2.25x fewer multiply-adds; the transforms cost
 * O(C + M) per tile.  The constants (0, +-1, +-1/2) keep the error at the
 * level of the direct product.  NN_NO_WINOGRAD=1 (read at prepare) turns
 * the path off, e.g. to save the weight copy.
 * The transform runs at the first run, into room prepare reserved in priv:
 * the planner prepares a node up to three times (BatchNorm and activation
 * fusion re-prepare it, the first with other weights), and transforming
 * each time tripled the cost of creating a session. */

#define CONV_WINO_FLOATS ((int64_t)1 << 18)   /* V + M block budget (1 MiB: L2) */
/* Widest tile row (the transforms' row buffers live on the stack: 56 KiB). */
#define CONV_WINO_MAX_TW 512

static bool conv_wino_pays(const nn_node *n, const conv_priv *p) {
  const nn_conv_geom *g = &p->g;
  if (nn_knobs().no_winograd || p->dt != NN_DTYPE_FLOAT || g->nsp != 2)
    return false;
  if (g->k[1] != 3 || g->k[2] != 3 || g->s[1] != 1 || g->s[2] != 1 || g->d[1] != 1 ||
      g->d[2] != 1 || g->out[1] < 2 || g->out[2] < 2)
    return false;
  /* the transforms are O(C + M) per tile against O(C * M) products: thin
   * layers gain nothing; the weights must be constant to transform them once,
   * and a node folded at plan time (constant input) runs once anyway */
  /* and the 16 products (Mg x tiles x Cg) must be wider than what the GEMM
   * engine runs on its narrow kernel: a 7x7 map has 16 tiles, which on
   * AVX-512 made ResNet-50's last 3x3 convs 1.7x slower than im2col (Zen 5) */
  int64_t tiles = ((g->out[1] + 1) / 2) * ((g->out[2] + 1) / 2);
  return p->Cg >= 16 && p->Mg >= 16 && (g->out[2] + 1) / 2 <= CONV_WINO_MAX_TW &&
         tiles > nn_sgemm_narrow_max() && n->x[1]->known && n->x[1]->data && !n->x[0]->known;
}

/* Tiles per worker below which whole blocks per worker would make the
 * products too narrow: the phases of each block are split instead. */
#define CONV_WINO_PAR_MIN_TILES 64
/* V + M budget of a worker's own block: the same as one thread's, since
 * each core has an L2 of its own.  Half of it (when both blocks were taken
 * to share one L2) made every worker read the transformed weights twice as
 * often: Inception-v2's 56x56 layer ran 1.70 instead of 1.80 ms and ResNet-50
 * 30.8 instead of 32.1 ms on 2 threads (Zen 5) */
#define CONV_WINO_PAR_FLOATS ((int64_t)1 << 18)
/* Input channels up to which the direct kernel replaces the im2col GEMM
 * (conv_direct_pays). */
#define CONV_DIRECT_MAX_C 128
/* Output pixels from which a stride-2 conv runs the direct kernel on
 * phase planes (cpu/conv_direct.h), AVX-512 only: ResNet-50's 3x3 128 ->
 * 128 from 56x56 to 28x28 ran 0.87x (1 thread) and 0.80x (2) the im2col
 * GEMM's time, but its every smaller output lost (Inception-v2's 128 -> 160
 * to 14x14 1.18x, 256 -> 256 to 7x7 2.35x: a few blocks of pixels, each
 * reading all the weights, against one GEMM pass; Zen 5). */
#define CONV_DIRECT_S2_MIN_OUT (28 * 28)

/* First tile of block b of nblk over `tiles` (b = nblk: tiles): as even a
 * split as multiples of 8 tiles allow.  Blocks of a fixed size, the last
 * one what is left, gave 2 threads 112 and 84 of ResNet-50's 196 tiles at
 * 28x28 (3x3 128 -> 128 scaled 1.5x) and 416 and 368 of its 784 at 56x56. */
static int64_t conv_wino_block_t0(int64_t tiles, int64_t nblk, int64_t b) {
  return b >= nblk ? tiles : b * tiles / nblk / 8 * 8;
}

static void conv_plan_wino(nn_ctx *c, conv_priv *p) {
  const nn_conv_geom *g = &p->g;
  const int threads = c->threads > 1 ? c->threads : 1;
  p->th = (g->out[1] + 1) / 2;
  p->tw = (g->out[2] + 1) / 2;
  int64_t tiles = p->th * p->tw;
  /* tiles per block: V [16][Cg][tb] and M [16][Mg][tb] within the budget */
  int64_t tb = CONV_WINO_FLOATS / (16 * (p->Cg + p->Mg));
  tb = tb / CONV_NR * CONV_NR;
  if (tb < CONV_NR)
    tb = CONV_NR;
  p->wino_par = 1;
  if (threads > 1 && tiles >= threads * CONV_WINO_PAR_MIN_TILES) {
    /* whole blocks per worker, a multiple of the workers of them, each in
     * its own core's cache: splitting each block's three phases over the
     * workers moved every transformed plane between cores, and 2 threads
     * ran ResNet-50's 56x56 layers no faster than one (Zen 5) */
    int64_t tbp = CONV_WINO_PAR_FLOATS / (16 * (p->Cg + p->Mg));
    tbp = tbp < CONV_WINO_PAR_MIN_TILES ? CONV_WINO_PAR_MIN_TILES : tbp;
    tb = tbp < tb ? tbp : tb;
    int64_t nblk = (tiles + tb - 1) / tb;
    nblk = (nblk + threads - 1) / threads * threads;
    /* the tiles split evenly (conv_wino_block_t0); tb the largest block */
    tb = 0;
    for (int64_t b = 0; b < nblk; b++) {
      int64_t nt = conv_wino_block_t0(tiles, nblk, b + 1) - conv_wino_block_t0(tiles, nblk, b);
      tb = nt > tb ? nt : tb;
    }
    p->wino_nblk = nblk;
    p->wino_par = threads;
  }
  p->tb = tb < tiles ? tb : tiles;
  p->v_floats = nn_align_up((size_t)(16 * p->Cg * p->tb), 16);
  p->blk_floats = p->v_floats + nn_align_up((size_t)(16 * p->Mg * p->tb), 16);
  p->col_floats = p->blk_floats * (size_t)p->wino_par;
  /* the first run transforms the weights in this block */
  if (p->col_floats < (size_t)(p->Mg * p->Cg))
    p->col_floats = nn_align_up((size_t)(p->Mg * p->Cg), 16);
  /* one serial product per worker at a time (conv_wino_gemms) */
  p->gemm_ws = nn_sgemm_workspace(p->Mg, p->tb, p->Cg, 1) * (size_t)(c->threads > 1 ? c->threads : 1);
  p->packed_bytes = nn_align_up(nn_sgemm_pack_a_size(p->Mg, p->Cg), 64);
}

/* U[xi] = (G g G^T)[xi] for every (m, c) of every group, packed for the
 * engine.  G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].  One xi at a
 * time through u, a scratch of Mg * Cg floats (the workspace's column block
 * is at least that large: see conv_plan_wino). */
static void conv_wino_transform(conv_priv *p, const float *w, float *u) {
  for (int64_t gi = 0; gi < p->group; gi++)
    for (int xi = 0; xi < 16; xi++) {
      const int i = xi / 4, jj = xi % 4;
      for (int64_t m = 0; m < p->Mg; m++)
        for (int64_t ci = 0; ci < p->Cg; ci++) {
          const float *k = w + ((gi * p->Mg + m) * p->Cg + ci) * 9;
          float t[3];   /* row i of G g */
          for (int j = 0; j < 3; j++) {
            float g0 = k[0 * 3 + j], g1 = k[1 * 3 + j], g2 = k[2 * 3 + j];
            t[j] = i == 0 ? g0 : i == 1 ? 0.5f * (g0 + g1 + g2) : i == 2 ? 0.5f * (g0 - g1 + g2) : g2;
          }
          /* column jj of (G g) G^T */
          u[m * p->Cg + ci] = jj == 0 ? t[0] : jj == 1 ? 0.5f * (t[0] + t[1] + t[2])
                            : jj == 2 ? 0.5f * (t[0] - t[1] + t[2]) : t[2];
        }
      nn_sgemm_pack_a(0, p->Mg, p->Cg, u, p->Cg,
                      (char *)p + CONV_PRIV_HEAD + (size_t)(gi * 16 + xi) * p->packed_bytes);
    }
  p->wino_ready = true;
}

/* The fused normalization bn's a = scale / sqrt(var + eps), b = B - mean * a
 * per channel, in double then rounded, as its own kernel computes them
 * (cpu/norm.c): the fused conv packs exactly the values it would have stored. */
static nn_status conv_norm_init(nn_ctx *c, const nn_node *bn, conv_priv *p) {
  nn_bn_params bp;
  nn_status st = nn_bn_params_init(c, bn, &bp);
  if (st)
    return st;
  const float *scale = bn->x[1]->data, *bias = bn->x[2]->data;
  const float *mean = bn->x[3]->data, *var = bn->x[4]->data;
  float *a = conv_norm_ab(p), *b = a + p->C;
  for (int64_t ch = 0; ch < p->C; ch++) {
    double s = (double)scale[ch] / sqrt((double)var[ch] + bp.eps);
    a[ch] = (float)s;
    b[ch] = (float)((double)bias[ch] - (double)mean[ch] * s);
  }
  return NN_OK;
}

/* Whether, with several threads, the direct kernel beats Winograd: when
 * the transforms, O(Cg + Mg) per tile against O(Cg x Mg) products, weigh
 * enough, (Cg + Mg) / (Cg x Mg) above 1/32, or above 1/52 on maps too small
 * for whole blocks per worker (wino_par 1, whose three phases each split
 * over the workers scale worst).  Measured on 2 threads (Zen 5, AVX-512):
 * direct 0.61-0.73x Winograd's time on SqueezeNet's 32 -> 128 at 27x27,
 * 0.63-0.8x on its 48 -> 192 and 64 -> 256 at 13x13, 0.72x on DenseNet's
 * 128 -> 32 at 14x14 (SqueezeNet 8%, DenseNet 9% faster); Winograd kept
 * for Inception's 64 -> 192 at 55x55 (direct 1.32x), 128 -> 192 at 27x27
 * (1.56x), 96 -> 208 and 128 -> 256 at 13x13 (1.15x, 1.33x) and VGG's 64
 * -> 64 (even).  On one thread Winograd won or tied them all.  That is the
 * AVX-512 kernel, on the input itself; AVX2's, on a padded copy in 6 x 16
 * blocks, beats Winograd only up to CONV_DIRECT_WINO_AVX2_MAX_C input
 * channels (the rule above ran SqueezeNet and DenseNet 14% slower with
 * NN_CPU=avx2; 16: SqueezeNet 1.4% faster than none, Zen 5).  Where 512-bit
 * FMAs run at the 256-bit rate (Zen 4, nn_cpu_avx512_half_rate) the AVX-512
 * direct kernel loses the edge the rule above was measured with: Winograd
 * ran SqueezeNet's 64 -> 256 and 48 -> 192 at 13x13 0.23-0.29 and 0.13-0.15
 * ms on 2 threads there, direct 0.37 and 0.21; with the AVX2 rule SqueezeNet
 * ran 9% and DenseNet 2.5% faster on 2 threads, Inception even (Zen 4). */
#define CONV_DIRECT_WINO_AVX2_MAX_C 16
static bool conv_direct_beats_wino(const conv_priv *p) {
  if (nn_cpu_isa_get() < NN_CPU_AVX512 || nn_cpu_avx512_half_rate())
    return p->Cg <= CONV_DIRECT_WINO_AVX2_MAX_C;
  const int64_t prod = p->Cg * p->Mg, sum = p->Cg + p->Mg;
  return 32 * sum > prod || (52 * sum > prod && p->wino_par == 1);
}

/* Whether a stride-1 or -2 2-D conv runs the direct kernel (CONV_PATH_DIRECT)
 * instead of the path prepare chose (measured on Zen 5, AVX-512):
 *   - instead of the im2col GEMM (implicit or packed once), up to
 *     CONV_DIRECT_MAX_C input channels: no im2col to gather, and no GEMM
 *     tile wasted on few output channels: 3x3 8 -> 32 at 64x64 1.38x
 *     faster, 5x5 12 -> 24 at 48x48 2.1x (1 thread) and 3x (2), 3x3 64 -> 8
 *     at 28x28 3.8x, 5x5 128 -> 64 at 14x14 1.17x (1) and 1.34x (2); deeper
 *     ones (3x3 160 -> 192 at 7x7) were 9% slower on 2 threads;
 *   - stride 2 on AVX-512 (phase planes), instead of the im2col GEMM
 *     on maps of CONV_DIRECT_S2_MIN_OUT outputs or more;
 *   - instead of Winograd, only with several threads and few channels
 *     in or out (conv_direct_beats_wino): Winograd does 2.25x fewer
 *     multiply-adds and wins on one thread, but its thin products and
 *     transformed blocks scale poorly.
 * Constant weights only: they are reordered once. */
static bool conv_direct_pays(const nn_ctx *c, const nn_node *n, const conv_priv *p, bool two_d) {
  const nn_conv_geom *g = &p->g;
  if (nn_knobs().no_direct || !two_d || g->nsp != 2 || p->group != 1 ||
      p->dt != NN_DTYPE_FLOAT || n->pre || conv_residual(n) || !n->x[1]->known ||
      !n->x[1]->data || g->s[1] != g->s[2] || g->s[1] > 2 || g->d[1] != g->d[2] ||
      (g->d[1] != 1 && g->s[1] != 1))
    return false;
  if (g->s[1] == 2)
    return (p->path == CONV_PATH_IMPLICIT || p->path == CONV_PATH_PACKED) &&
           p->Cg <= CONV_DIRECT_MAX_C && (g->k[1] > 1 || g->k[2] > 1) &&
           g->out_sz >= CONV_DIRECT_S2_MIN_OUT;
  if (p->path == CONV_PATH_WINO)
    return c->threads > 1 && conv_direct_beats_wino(p);
  return (p->path == CONV_PATH_IMPLICIT || p->path == CONV_PATH_PACKED) &&
         p->Cg <= CONV_DIRECT_MAX_C;
}

/* ---- mostly-padding convolutions (CONV_PATH_TAPS) ------------------------------
 * A dilated conv on a small map (DeepLab's ASPP: 3x3 at rates 6/12/18 on a
 * 32x32 map, 12/24/36 on 33x33) reads padding for most of its taps: at rate
 * 18 on 32 rows, an off-centre row of taps lands in the map for 14 rows of
 * 32, so 61% of the im2col GEMM multiplies zeros, and at rate 36 every
 * off-centre tap does.  Each spatial axis splits into spans of output
 * positions over which the same taps land in the input; each pair of spans
 * (a rectangle of outputs) is the sum, over its landing taps only, of
 * W[:, :, kh, kw] (M x C, packed once per tap) times the input shifted by
 * that tap (a 1x1 im2col of a window: no padding is read). */
#define CONV_TAPS_MAX_K 7
/* Up to this share of the im2col's multiply-adds landing in the input:
 * below it the products over landing taps (K = C each, accumulated in C)
 * beat the one deep product.  320 -> 256 on 32x32, 1 thread, Zen 4: rate 6
 * (share 0.77) 17.4 -> 13.3 ms, rate 12 17.2 -> 9.6, rate 18 16.1 -> 6.7;
 * 960 -> 256 at rate 24 on 33x33 57 -> 17.  At 0.97 (rate 2 on 64x64) the
 * two ran even, and a 3x3 on 7x7 (0.82) was 1.4x slower than Winograd. */
#define CONV_TAPS_MAX_SHARE 0.8

typedef struct conv_span {
  int64_t lo, hi;         /* output positions [lo, hi) on the axis */
  uint32_t taps;          /* bit k: tap k lands in the input for all of them */
} conv_span;

/* The spans of one axis (O outputs, I inputs, K taps, stride S, leading
 * pad P, dilation D), in order; their count (at most 2K + 1). */
static int conv_tap_spans(int64_t O, int64_t I, int64_t K, int64_t S, int64_t P, int64_t D,
                          conv_span *sp) {
  int64_t lo[CONV_TAPS_MAX_K], hi[CONV_TAPS_MAX_K], cut[2 * CONV_TAPS_MAX_K + 2];
  int nc = 0;
  cut[nc++] = 0;
  cut[nc++] = O;
  for (int64_t k = 0; k < K; k++) {
    /* o lands when 0 <= o * S - P + k * D <= I - 1 */
    int64_t a = P - k * D, b = I - 1 + P - k * D;
    lo[k] = a <= 0 ? 0 : (a + S - 1) / S;
    hi[k] = b < 0 ? 0 : b / S + 1;
    lo[k] = lo[k] < O ? lo[k] : O;
    hi[k] = hi[k] < lo[k] ? lo[k] : hi[k] < O ? hi[k] : O;
    cut[nc++] = lo[k];
    cut[nc++] = hi[k];
  }
  for (int i = 1; i < nc; i++)   /* insertion sort: a few cuts */
    for (int j = i; j > 0 && cut[j - 1] > cut[j]; j--) {
      int64_t t = cut[j];
      cut[j] = cut[j - 1];
      cut[j - 1] = t;
    }
  int n = 0;
  for (int i = 0; i + 1 < nc; i++) {
    if (cut[i] == cut[i + 1])
      continue;
    uint32_t m = 0;
    for (int64_t k = 0; k < K; k++)
      if (lo[k] <= cut[i] && cut[i + 1] <= hi[k])
        m |= 1u << k;
    sp[n++] = (conv_span){cut[i], cut[i + 1], m};
  }
  return n;
}

/* Whether the conv runs CONV_PATH_TAPS; if so, *max_px is its largest
 * output rectangle narrower than the map (held in the workspace). */
static bool conv_taps_pays(const nn_node *n, const conv_priv *p, bool two_d, int64_t *max_px) {
  const nn_conv_geom *g = &p->g;
  if (nn_knobs().no_direct || !two_d || g->nsp != 2 || p->group != 1 || p->dt != NN_DTYPE_FLOAT ||
      n->pre || conv_residual(n) || !n->x[1]->known || !n->x[1]->data || p->Cg < 32 ||
      g->k[1] > CONV_TAPS_MAX_K || g->k[2] > CONV_TAPS_MAX_K || g->k_sz < 2 ||
      (p->path != CONV_PATH_IMPLICIT && p->path != CONV_PATH_PACKED))
    return false;
  conv_span sh[2 * CONV_TAPS_MAX_K + 1], sw[2 * CONV_TAPS_MAX_K + 1];
  int nh = conv_tap_spans(g->out[1], g->in[1], g->k[1], g->s[1], g->pb[1], g->d[1], sh);
  int nw = conv_tap_spans(g->out[2], g->in[2], g->k[2], g->s[2], g->pb[2], g->d[2], sw);
  double landing = 0;
  *max_px = 0;
  for (int a = 0; a < nh; a++)
    for (int b = 0; b < nw; b++) {
      int64_t px = (sh[a].hi - sh[a].lo) * (sw[b].hi - sw[b].lo);
      int taps = __builtin_popcount(sh[a].taps) * __builtin_popcount(sw[b].taps);
      if (taps == 0)
        return false;   /* outputs that see only padding: left to the GEMM */
      landing += (double)px * taps;
      if (sw[b].hi - sw[b].lo < g->out[2] && px > *max_px)
        *max_px = px;
    }
  return landing <= CONV_TAPS_MAX_SHARE * (double)g->out_sz * (double)g->k_sz;
}

static nn_status conv_prepare(nn_ctx *c, nn_node *n) {
  nn_status st = conv_check_float(c, n);
  if (st)
    return st;
  conv_priv p;
  if ((st = conv_prepare_common(c, n, 1, 2, &p)))
    return st;
  const nn_conv_geom *g = &p.g;
  bool unit = true;
  for (int i = 0; i < NN_CONV_SP; i++)
    if (g->k[i] != 1 || g->s[i] != 1 || g->pb[i] != 0 || g->pe[i] != 0)
      unit = false;
  /* 1-D and 2-D occupy the last two geometry slots */
  bool two_d = g->nsp <= 2 && conv_geom_fits_int(g);
  /* a 1x1 conv's input is B as it is, read in place by the GEMM engine:
   * packed once, only when a normalization fused in front (n->pre) must be
   * applied on the way (ResNet-50 and Inception-v2 ran 5% faster on 2
   * threads in place than packed once, Zen 5) */
  bool pack_once = conv_explicit_pays(p.Mg, g->out_sz, p.K) && (!unit || n->pre);
  if (p.Cg == 1 && two_d) {
    p.path = CONV_PATH_DW;
  } else if (unit && !pack_once) {
    p.path = CONV_PATH_1X1;
    p.gemm_ws = conv_gemm_ws(c, p.Mg, g->out_sz, p.K);
  } else if (two_d || unit) {
    p.path = pack_once ? CONV_PATH_PACKED : CONV_PATH_IMPLICIT;
    p.gemm_ws = conv_gemm_ws(c, p.Mg, g->out_sz, p.K);
    if (pack_once)
      p.col_floats = nn_align_up(nn_sgemm_pack_b_size(p.K, g->out_sz), 64) / sizeof(float);
  } else {
    p.path = CONV_PATH_EXPLICIT;
    conv_plan_explicit(c, &p, CONV_COL_FLOATS);
  }
  if (conv_wino_pays(n, &p)) {
    p.path = CONV_PATH_WINO;
    conv_plan_wino(c, &p);
  }
  if (p.path != CONV_PATH_DW && two_d && g->nsp == 2 && p.group == 1 &&
      p.dt == NN_DTYPE_FLOAT && !n->pre && !conv_residual(n) && g->d[1] == 1 && g->d[2] == 1) {
    /* an RGB first layer: a direct kernel instead of the GEMM on an im2col
     * as many times larger than the input (cpu/conv_smallc.h) */
    nn_sconv_shape ss = {
      .C = p.C, .M = p.M, .IH = g->in[1], .IW = g->in[2], .OH = g->out[1], .OW = g->out[2],
      .KH = (int)g->k[1], .KW = (int)g->k[2], .SH = (int)g->s[1], .SW = (int)g->s[2],
      .PT = (int)g->pb[1], .PL = (int)g->pb[2],
    };
    if (!nn_knobs().no_direct && nn_sconv_ok(&ss)) {
      p.path = CONV_PATH_SMALLC;
      p.scs = ss;
      p.gemm_ws = 0;
      p.packed_bytes = 0;
      p.col_floats = nn_sconv_ws_floats(&ss);
    }
  }
  if (conv_direct_pays(c, n, &p, two_d)) {
    /* few input channels: a direct kernel (cpu/conv_direct.h) */
    nn_dconv_shape ds = {
      .C = p.C, .M = p.M, .IH = g->in[1], .IW = g->in[2], .OH = g->out[1], .OW = g->out[2],
      .KH = (int)g->k[1], .KW = (int)g->k[2], .PT = (int)g->pb[1], .PL = (int)g->pb[2],
      .S = (int)g->s[1], .D = (int)g->d[1],
    };
    if (nn_dconv_ok(&ds)) {
      p.path = CONV_PATH_DIRECT;
      p.dcs = ds;
      p.gemm_ws = 0;
      p.packed_bytes = 0;
      p.col_floats = nn_dconv_ws_floats(&ds);
      p.dc_floats = nn_dconv_pack_floats(&ds);
    }
  }
  if (n->pre && strcmp(n->pre->op_type, "BatchNormalization") == 0) {
    /* a normalization fused in front (plan.c): applied as this 1x1 conv packs X */
    if (!unit || p.group != 1 || p.dt != NN_DTYPE_FLOAT || n->n_in <= CONV_DWPW_SLOT ||
        !n->x[CONV_DWPW_SLOT] || (p.path != CONV_PATH_1X1 && p.path != CONV_PATH_PACKED))
      return nn_fail(c, NN_ERR_INVALID_MODEL, "the normalization fused before it does not fit");
    const nn_act *a = &n->pre->act;
    p.norm_pre = true;
    p.norm_lo = a->kind == NN_ACT_RELU ? 0.0f : a->kind == NN_ACT_CLIP ? a->a : -INFINITY;
    p.norm_hi = a->kind == NN_ACT_CLIP ? a->b : INFINITY;
  } else if (n->pre && strcmp(n->pre->op_type, "Mul") == 0) {
    /* a squeeze-excitation gate fused in front (plan.c): its scales applied
     * as this 1x1 conv packs X */
    const nn_value *sv = n->n_in > CONV_SCALE_SLOT ? n->x[CONV_SCALE_SLOT] : NULL;
    if (!unit || p.group != 1 || p.dt != NN_DTYPE_FLOAT || !n->x[CONV_DWPW_SLOT] || !sv ||
        sv->dtype != NN_DTYPE_FLOAT || sv->numel % p.C != 0 ||
        (sv->numel != p.C && sv->numel != p.batch * p.C) ||
        (p.path != CONV_PATH_1X1 && p.path != CONV_PATH_PACKED))
      return nn_fail(c, NN_ERR_INVALID_MODEL, "the channel scales fused before it do not fit");
    p.norm_pre = true;
    p.scale_pre = true;
    p.scale_batched = sv->numel != p.C;
    p.norm_lo = -INFINITY;
    p.norm_hi = INFINITY;
  } else if (n->pre) {
    /* a depthwise Conv fused in front (plan.c): this 1x1 conv reads its output */
    const conv_priv *dp = n->pre->priv;
    if (!unit || p.group != 1 || p.dt != NN_DTYPE_FLOAT || !dp || dp->path != CONV_PATH_DW ||
        dp->dt != NN_DTYPE_FLOAT || dp->Mg != 1 || dp->C != p.C || n->n_in <= CONV_DWPW_SLOT ||
        !n->x[CONV_DWPW_SLOT])
      return nn_fail(c, NN_ERR_INVALID_MODEL, "the depthwise conv fused before it does not fit");
    const nn_conv_geom *dg = &dp->g;
    p.dws = (nn_dwconv_shape){
      .batch = 1, .C = dp->C, .mult = 1,
      .IH = dg->in[1], .IW = dg->in[2], .OH = dg->out[1], .OW = dg->out[2],
      .KH = (int)dg->k[1], .KW = (int)dg->k[2], .SH = (int)dg->s[1], .SW = (int)dg->s[2],
      .PT = (int)dg->pb[1], .PL = (int)dg->pb[2], .DH = (int)dg->d[1], .DW = (int)dg->d[2],
    };
    p.dwepi = dp->epi;
    int64_t N = g->out_sz;
    p.path = CONV_PATH_DWPW;
    p.gemm_ws = conv_gemm_ws(c, p.Mg, N, p.K);
    p.col_floats = 0;
    if (nn_dwconv2d_panel_ok(&p.dws) && N > CONV_DWPW_MAX_PIXELS) {
      /* whole rows, a multiple of 16 pixels (a B panel, 64-byte planes);
       * the plane stride one line more, so that the K planes the GEMM reads
       * side by side do not fall in the same L1 sets */
      const int64_t OW = p.dws.OW;
      int64_t rows = CONV_DWPW_BAND_FLOATS / (p.C * OW);
      rows = rows < 2 ? 2 : rows;
      while ((rows * OW) % 16)
        rows++;
      rows = rows < p.dws.OH ? rows : p.dws.OH;
      int par = c->threads > 1 ? c->threads : 1;
      p.dwpw = DWPW_BANDS;
      p.band_px = rows * OW;
      p.band_ld = nn_align_up((size_t)p.band_px, 16) + 16;
      p.band_floats = (size_t)(p.C * p.band_ld);
      p.band_par = par;
      p.col_floats = p.band_floats * (size_t)par;
      p.gemm_ws = nn_sgemm_workspace(p.Mg, p.band_px, p.K, 1) * (size_t)par;
    } else if (!nn_dwconv2d_panel_ok(&p.dws)) {
      p.dwpw = DWPW_PLANES;
      p.col_floats = nn_align_up((size_t)(p.C * N), 16);
    } else if (p.Mg <= nn_sgemm_rows_per_tile()) {
      /* one row tile covers M: each block is asked for (and computed) once */
      p.dwpw = DWPW_BLOCKS;
    } else {
      p.dwpw = DWPW_ONCE;
      p.col_floats = nn_align_up(nn_sgemm_pack_b_size(p.K, N), 64) / sizeof(float);
    }
  }
  int64_t taps_px;
  if (conv_taps_pays(n, &p, two_d, &taps_px)) {
    p.path = CONV_PATH_TAPS;
    p.taps_pa_bytes = nn_align_up(nn_sgemm_pack_a_size(p.M, p.C), 64);
    p.gemm_ws = conv_gemm_ws(c, p.M, g->out_sz, p.C);
    /* the narrow rectangles' results (at the first run one tap's M x C),
     * then one rectangle's input for one tap, packed */
    size_t col = (size_t)(p.M * (taps_px > p.C ? taps_px : p.C));
    p.taps_out_floats = nn_align_up(col, 16);
    p.col_floats = p.taps_out_floats + nn_align_up(nn_sgemm_pack_b_size(p.C, g->out_sz), 64) / sizeof(float);
  }
  const nn_value *res = conv_residual(n);
  if (res && (res->dtype != NN_DTYPE_FLOAT || p.dt != NN_DTYPE_FLOAT || res->rank != n->y[0]->rank ||
              memcmp(res->dims, n->y[0]->dims, sizeof(int64_t) * (size_t)res->rank) != 0))
    return nn_fail(c, NN_ERR_SHAPE, "the fused residual '%s' is not a float32 tensor of Y's shape",
                   res->name);
  p.stage_floats = conv_stage_floats(n);
  if ((st = conv_finish_priv(c, n, &p)))
    return st;
  if (p.scale_pre)   /* b = 0; a comes with each run */
    memset(conv_norm_ab(n->priv), 0, sizeof(float) * 2 * (size_t)p.C);
  else if (p.norm_pre)
    st = conv_norm_init(c, n->pre, n->priv);
  return st;
}

/* ---- Conv run ------------------------------------------------------------------ */

typedef struct conv_job {
  const conv_priv *p;
  const float *x, *w, *b;
  const float *res;       /* fused residual (conv_residual), laid out as y; NULL none */
  const float *dww, *dwb; /* CONV_PATH_DWPW: the fused depthwise conv's weights, bias */
  const float *scale;     /* scale_pre: the fused channel scales */
  float *y;
  size_t wpack;           /* > 0: w holds packed A panels, a block of this many
                             bytes per group (nn_value.packed_a_groups) */
  const float *offset;    /* DeformConv: (N, og*k_sz*2, out) sampling offsets */
  const float *mask;      /* DeformConv: (N, og*k_sz, out) modulation, NULL = 1 */
  /* the tile being gathered / scattered */
  int64_t bi, gi, j0, nn;
  const float *xg;        /* the group's input planes */
  float *col;
  float *yg;              /* ConvTranspose: the group's output planes */
} conv_job;

/* The fused channel scales of image bi (scale_pre), NULL without them. */
static const float *conv_scale_of(const conv_priv *p, const conv_job *jb, int64_t bi) {
  if (!p->scale_pre)
    return NULL;
  return p->scale_batched ? jb->scale + bi * p->C : jb->scale;
}

/* Rows [r0, r1) of the im2col of output positions [j0, j0 + nn) of one
 * group: col is K x nn, row r = (channel, kd, kh, kw) in weight order. */
static void conv_im2col(const conv_priv *p, const float *x, int64_t j0, int64_t nn, float *col,
                        int64_t r0, int64_t r1) {
  const nn_conv_geom *g = &p->g;
  const int64_t OH = g->out[1], OW = g->out[2];
  const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];
  const int64_t sw = g->s[2];
  /* the tile holds whole output rows (always, but for 3-D tiles): the
   * in-range columns are the same for every row of a tap, computed once,
   * and rows are copied inline (a memcpy call per 7- or 14-float row cost
   * more than the copy) */
  const bool whole_rows = j0 % OW == 0 && nn % OW == 0;
  for (int64_t r = r0; r < r1; r++) {
    int64_t ci = r / g->k_sz, kk = r % g->k_sz;
    int64_t kw = kk % g->k[2], kh = (kk / g->k[2]) % g->k[1], kd = kk / (g->k[2] * g->k[1]);
    int64_t offd = kd * g->d[0] - g->pb[0];
    int64_t offh = kh * g->d[1] - g->pb[1];
    int64_t offw = kw * g->d[2] - g->pb[2];
    const float *xc = x + ci * g->in_sz;
    float *dst = col + r * nn;
    if (whole_rows) {
      int64_t lo = offw < 0 ? (-offw + sw - 1) / sw : 0;
      int64_t hi = offw >= IW ? 0 : (IW - 1 - offw) / sw + 1;
      lo = lo < OW ? lo : OW;
      hi = hi < OW ? hi : OW;
      hi = hi > lo ? hi : lo;
      for (int64_t row = j0 / OW; row < (j0 + nn) / OW; row++, dst += OW) {
        int64_t oh = row % OH, od = row / OH;
        int64_t id = od * g->s[0] + offd, ih = oh * g->s[1] + offh;
        float *restrict d = dst;
        if (id < 0 || id >= ID || ih < 0 || ih >= IH) {
          for (int64_t t = 0; t < OW; t++)
            d[t] = 0.0f;
          continue;
        }
        const float *restrict xr = xc + (id * IH + ih) * IW;
        for (int64_t t = 0; t < lo; t++)
          d[t] = 0.0f;
        if (sw == 1)
          for (int64_t t = lo; t < hi; t++)
            d[t] = xr[t + offw];
        else
          for (int64_t t = lo; t < hi; t++)
            d[t] = xr[t * sw + offw];
        for (int64_t t = hi; t < OW; t++)
          d[t] = 0.0f;
      }
      continue;
    }
    int64_t j = j0, jend = j0 + nn;
    int64_t ow = j % OW, oh = (j / OW) % OH, od = j / (OW * OH);
    while (j < jend) {
      int64_t len = OW - ow < jend - j ? OW - ow : jend - j;
      int64_t id = od * g->s[0] + offd, ih = oh * g->s[1] + offh;
      if (id < 0 || id >= ID || ih < 0 || ih >= IH) {
        memset(dst, 0, (size_t)len * sizeof(float));
      } else {
        ku_gather_row(dst, xc + (id * IH + ih) * IW, IW, ow * sw + offw, sw, len);
      }
      dst += len;
      j += len;
      ow += len;
      if (ow == OW) {
        ow = 0;
        if (++oh == OH) {
          oh = 0;
          od++;
        }
      }
    }
  }
}

/* Bilinear sample of plane x (h x w) at (y, xx); corners outside read 0
 * (GridSample, align_corners = 1, zeros padding: what DeformConv specifies). */
static float conv_bilinear(const float *x, int64_t h, int64_t w, float y, float xx) {
  if (!(y > -1.0f && y < (float)h && xx > -1.0f && xx < (float)w))
    return 0.0f;   /* also catches NaN offsets */
  float fy = floorf(y), fx = floorf(xx);
  int64_t y0 = (int64_t)fy, x0 = (int64_t)fx;
  float ly = y - fy, lx = xx - fx;
  float v00 = 0, v01 = 0, v10 = 0, v11 = 0;
  if (y0 >= 0) {
    if (x0 >= 0)
      v00 = x[y0 * w + x0];
    if (x0 + 1 < w)
      v01 = x[y0 * w + x0 + 1];
  }
  if (y0 + 1 < h) {
    if (x0 >= 0)
      v10 = x[(y0 + 1) * w + x0];
    if (x0 + 1 < w)
      v11 = x[(y0 + 1) * w + x0 + 1];
  }
  return (1.0f - ly) * ((1.0f - lx) * v00 + lx * v01) + ly * ((1.0f - lx) * v10 + lx * v11);
}

/* im2col of DeformConv (2-D): tap (ki, kj) of output position (oh, ow) reads
 * X at (oh*s - p + ki*d + dy, ow*s - p + kj*d + dx), bilinearly, times the
 * mask; (dy, dx) and the mask come per offset group of input channels. */
static void conv_deform_im2col(const conv_job *jb, int64_t r0, int64_t r1) {
  const conv_priv *p = jb->p;
  const nn_conv_geom *gm = &p->g;
  const int64_t bi = jb->bi, g = jb->gi, j0 = jb->j0, nn = jb->nn;
  const int64_t IH = gm->in[1], IW = gm->in[2], OW = gm->out[2];
  const int64_t KW = gm->k[2], osz = gm->out_sz;
  const int64_t cpo = p->C / p->offset_group;   /* input channels per offset group */
  const float *ob = jb->offset + bi * p->offset_group * gm->k_sz * 2 * osz;
  const float *mb = jb->mask ? jb->mask + bi * p->offset_group * gm->k_sz * osz : NULL;
  for (int64_t r = r0; r < r1; r++) {
    int64_t ch = g * p->Cg + r / gm->k_sz, kk = r % gm->k_sz;
    int64_t ki = kk / KW, kj = kk % KW, og = ch / cpo;
    const float *xc = jb->x + (bi * p->C + ch) * gm->in_sz;
    const float *offy = ob + ((og * gm->k_sz + kk) * 2) * osz;
    const float *offx = offy + osz;
    const float *mk = mb ? mb + (og * gm->k_sz + kk) * osz : NULL;
    float *dst = jb->col + r * nn;
    for (int64_t t = 0; t < nn; t++) {
      int64_t j = j0 + t, oh = j / OW, ow = j % OW;
      float y = (float)(oh * gm->s[1] - gm->pb[1] + ki * gm->d[1]) + offy[j];
      float xx = (float)(ow * gm->s[2] - gm->pb[2] + kj * gm->d[2]) + offx[j];
      float v = conv_bilinear(xc, IH, IW, y, xx);
      dst[t] = mk ? v * mk[j] : v;
    }
  }
}

/* nn_parallel_for body: rows [r0, r1) of the current tile's im2col. */
static void conv_im2col_range(void *arg, int64_t r0, int64_t r1) {
  const conv_job *jb = arg;
  if (jb->p->path == CONV_PATH_DEFORM)
    conv_deform_im2col(jb, r0, r1);
  else
    conv_im2col(jb->p, jb->xg, jb->j0, jb->nn, jb->col, r0, r1);
}

/* col2im of ConvTranspose: col (Mg*k_sz x nn) for input positions
 * [j0, j0 + nn) is added into output planes [m0, m1) of the group (yg).
 * Rows of different output channels touch different planes, so ranges of
 * channels run in parallel without conflicts. */
static void convt_col2im_range(void *arg, int64_t m0, int64_t m1) {
  const conv_job *jb = arg;
  const conv_priv *p = jb->p;
  const nn_conv_geom *g = &p->g;
  const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
  const int64_t IH = g->in[1], IW = g->in[2];
  const int64_t sw = g->s[2];
  const int64_t j0 = jb->j0, nn = jb->nn;
  for (int64_t r = m0 * g->k_sz; r < m1 * g->k_sz; r++) {
    int64_t m = r / g->k_sz, kk = r % g->k_sz;
    int64_t kw = kk % g->k[2], kh = (kk / g->k[2]) % g->k[1], kd = kk / (g->k[2] * g->k[1]);
    int64_t offd = kd * g->d[0] - g->pb[0];
    int64_t offh = kh * g->d[1] - g->pb[1];
    int64_t offw = kw * g->d[2] - g->pb[2];
    float *ym = jb->yg + m * g->out_sz;
    const float *src = jb->col + r * nn;
    int64_t j = j0, jend = j0 + nn;
    int64_t iw = j % IW, ih = (j / IW) % IH, id = j / (IW * IH);
    while (j < jend) {
      int64_t len = IW - iw < jend - j ? IW - iw : jend - j;
      int64_t od = id * g->s[0] + offd, oh = ih * g->s[1] + offh;
      if (od >= 0 && od < OD && oh >= 0 && oh < OH) {
        float *orow = ym + (od * OH + oh) * OW;
        int64_t base = iw * sw + offw;
        int64_t lo = base < 0 ? (-base + sw - 1) / sw : 0;
        int64_t hi = base >= OW ? 0 : (OW - 1 - base) / sw + 1;
        if (hi > len)
          hi = len;
        for (int64_t t = lo; t < hi; t++)
          orow[base + t * sw] += src[t];
      }
      src += len;
      j += len;
      iw += len;
      if (iw == IW) {
        iw = 0;
        if (++ih == IH) {
          ih = 0;
          id++;
        }
      }
    }
  }
}

/* Rows of the current tile per nn_parallel_for item so that one chunk is
 * worth a hand-off (a condition-variable wake-up costs microseconds). */
static int64_t conv_grain(int64_t cost_per_item, int64_t min_cost) {
  return cost_per_item >= min_cost ? 1 : (min_cost + cost_per_item - 1) / (cost_per_item > 0 ? cost_per_item : 1);
}

static nn_status conv_gemm_failed(nn_ctx *c, nn_status st) {
  return nn_fail(c, st, "GEMM engine refused the product (%s)", nn_status_str(st));
}

static nn_status convt_run_f32(nn_ctx *c, const conv_priv *p, conv_job *jb, void *gws) {
  const nn_conv_geom *g = &p->g;
  const int64_t rows = p->Mg * g->k_sz;
  for (int64_t bi = 0; bi < p->batch; bi++)
    for (int64_t gi = 0; gi < p->group; gi++) {
      const float *xg = jb->x + (bi * p->C + gi * p->Cg) * g->in_sz;
      /* W is (C, Mg, k...): per group a Cg x rows matrix, whose transpose
       * is the left operand (transa: no copy) */
      const float *wg = jb->w + gi * p->Cg * rows;
      jb->yg = jb->y + (bi * p->M + gi * p->Mg) * g->out_sz;
      memset(jb->yg, 0, (size_t)(p->Mg * g->out_sz) * sizeof(float));
      for (int64_t j0 = 0; j0 < g->in_sz; j0 += p->nt) {
        int64_t nn = g->in_sz - j0 < p->nt ? g->in_sz - j0 : p->nt;
        nn_status st = nn_sgemm_compute(c, 1, 0, rows, nn, p->Cg, 1.0f, wg, rows, xg + j0,
                                        g->in_sz, 0.0f, jb->col, nn, NULL, gws, p->gemm_ws);
        if (st)
          return conv_gemm_failed(c, st);
        jb->j0 = j0;
        jb->nn = nn;
        nn_parallel_for(c, p->Mg, conv_grain(g->k_sz * nn, 1 << 14), convt_col2im_range, jb);
      }
      if (jb->b || p->epi.act != NN_SGEMM_ACT_NONE) {
        /* bias + activation: the engine's epilogue over Y itself (K = 0,
         * beta = 1: A and B are not read) */
        nn_sgemm_epi e = conv_epi_with_bias(&p->epi, jb->b ? jb->b + gi * p->Mg : NULL, NULL, 0);
        nn_status st = nn_sgemm_compute(c, 0, 0, p->Mg, g->out_sz, 0, 1.0f, NULL, 1, NULL,
                                        g->out_sz, 1.0f, jb->yg, g->out_sz, &e, NULL, 0);
        if (st)
          return conv_gemm_failed(c, st);
      }
    }
  return NN_OK;
}

/* The input planes of a 1x1 stride-1 conv: op(B) is X_g itself (Cg x HW,
 * row-major), with the normalization fused in front, if any. */
typedef struct conv_rows {
  const float *x;
  int64_t ld;
  const float *a, *b;     /* conv_pack_rows_norm: the fused normalization, per row */
  float lo, hi;           /* and its activation's bounds */
} conv_rows;

/* nn_sgemm_pack_fn over those planes with the fused normalization applied
 * on the way, in the operations and order of its own kernel (multiply, add,
 * then the bounds: NaN goes through as it does there). */
static inline __attribute__((always_inline)) void conv_pack_rows_norm_body(
    void *user, int64_t k0, int64_t kc, int64_t j0, int64_t nb, int nr, float *dst,
    int64_t pstride) {
  const conv_rows *r = user;
  const float lo = r->lo, hi = r->hi;
  for (int64_t k = 0; k < kc; k++) {
    const float *restrict src = r->x + (k0 + k) * r->ld + j0;
    const float a = r->a[k0 + k], b = r->b[k0 + k];
    for (int64_t p = 0; p * nr < nb; p++) {
      float *restrict d = dst + p * pstride + k * nr;
      int64_t n = nb - p * nr < nr ? nb - p * nr : nr;
      for (int64_t q = 0; q < n; q++) {
        float y = src[p * nr + q] * a + b;
        y = y < lo ? lo : y;
        d[q] = y > hi ? hi : y;
      }
      for (int64_t q = n; q < nr; q++)
        d[q] = 0.0f;
    }
  }
}

/* Compiled for the baseline and for AVX2 (the panels are 16 or 32 floats:
 * 8 lanes instead of SSE's 4), chosen with the engine's dispatch. */
#define CONV_PACK_ARGS void *user, int64_t k0, int64_t kc, int64_t j0, int64_t nb, int nr, \
                       float *dst, int64_t pstride
#define CONV_PACK_CALL user, k0, kc, j0, nb, nr, dst, pstride
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static void conv_pack_rows_norm_avx2(CONV_PACK_ARGS) {
  conv_pack_rows_norm_body(CONV_PACK_CALL);
}
#endif

static void conv_pack_rows_norm(CONV_PACK_ARGS) {
#if defined(__x86_64__) || defined(__i386__)
  if (nn_cpu_isa_get() >= NN_CPU_AVX2) {
    conv_pack_rows_norm_avx2(CONV_PACK_CALL);
    return;
  }
#endif
  conv_pack_rows_norm_body(CONV_PACK_CALL);
}

/* The input planes x (row stride ld) of a 1x1 conv, with its fused
 * normalization when it has one; scale: the fused channel scales of the
 * image (scale_pre). */
static conv_rows conv_rows_of(const conv_priv *p, const float *x, int64_t ld,
                              const float *scale) {
  conv_rows r = {x, ld, NULL, NULL, 0.0f, 0.0f};
  if (p->norm_pre) {
    r.a = p->scale_pre ? scale : conv_norm_ab(p);
    r.b = conv_norm_ab(p) + p->C;
    r.lo = p->norm_lo;
    r.hi = p->norm_hi;
  }
  return r;
}

typedef struct conv_wino_job {
  const conv_priv *p;
  const float *xg;        /* the group's input planes */
  float *yg;              /* the group's output planes */
  const float *bias;      /* the group's bias or NULL */
  const float *rg;        /* the group's residual planes or NULL */
  float *v, *mm;          /* [16][Cg][nt], [16][Mg][nt] */
  int64_t t0, nt;         /* tiles of this block */
  int64_t gi;             /* group */
  char *gws;              /* engine scratch: one slot of slot_bytes per worker */
  size_t slot_bytes;
  nn_status st;           /* first GEMM failure */
} conv_wino_job;

/* V[xi][c][t] = (B^T d B)[xi] of the 4x4 patch of tile t in channel c,
 * B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]; outside the input reads 0.
 * Per channel, each input row the block needs is read once: split into its
 * even and odd columns (zero-padded), which turns the horizontal transform
 * d B into unit-stride loops over all the tiles of the row; consecutive tile
 * rows share two input rows, so the row transforms sit in a ring of four.
 * The vertical transform B^T (d B) then writes the 16 planes as contiguous
 * runs over the tiles: every loop is over tiles and vectorizes. */
/* d B of one tile of a row whose 4 input columns c .. c + 3 reach into the
 * padding: the columns outside [0, IW) read as 0. */
/* Four scalar loads, each behind its own test: vectorized, the four became
 * a masked load (vmaskmovps, slow on AMD) stored to the stack and read back
 * a float at a time, the hottest instructions of the transform (Zen 5). */
static inline __attribute__((always_inline)) float conv_wino_at(const float *xr, int64_t IW,
                                                               int64_t c) {
  return (uint64_t)c < (uint64_t)IW ? xr[c] : 0.0f;
}

static inline __attribute__((always_inline)) void conv_wino_row_edge(const float *xr, int64_t IW,
                                                                     int64_t c, float *h0,
                                                                     float *h1, float *h2,
                                                                     float *h3) {
  const float a0 = conv_wino_at(xr, IW, c), a1 = conv_wino_at(xr, IW, c + 1);
  const float a2 = conv_wino_at(xr, IW, c + 2), a3 = conv_wino_at(xr, IW, c + 3);
  *h0 = a0 - a2;
  *h1 = a1 + a2;
  *h2 = a2 - a1;
  *h3 = a1 - a3;
}

static inline __attribute__((always_inline)) void conv_wino_in_body(void *arg, int64_t c0,
                                                                    int64_t c1) {
  const conv_wino_job *j = arg;
  const conv_priv *p = j->p;
  const nn_conv_geom *g = &p->g;
  const int64_t IH = g->in[1], IW = g->in[2], PT = g->pb[1], PL = g->pb[2];
  const int64_t TW = p->tw, xs = p->Cg * j->nt;   /* xs: distance between xi planes */
  const int64_t ty_a = j->t0 / TW, ty_b = (j->t0 + j->nt - 1) / TW;
  /* tiles [lo, hi) of a row read columns 2t - PL .. 2t + 3 - PL all inside
   * the row: straight from X; the others (the padding) one by one */
  const int64_t lo_ = (PL + 1) / 2 < TW ? (PL + 1) / 2 : TW;
  int64_t hi = IW + PL >= 4 ? (IW + PL - 4) / 2 + 1 : 0;
  hi = hi < TW ? hi : TW;
  const int64_t lo = lo_ < hi ? lo_ : hi;
  float h[4][4][CONV_WINO_MAX_TW];   /* ring of row transforms: [row & 3][q][tile] */
  for (int64_t ci = c0; ci < c1; ci++) {
    const float *xc = j->xg + ci * g->in_sz;
    float *vc = j->v + ci * j->nt;
    int64_t next = 2 * ty_a;   /* next padded row to transform */
    for (int64_t ty = ty_a; ty <= ty_b; ty++) {
      for (; next <= 2 * ty + 3; next++) {
        float *restrict h0 = h[next & 3][0], *restrict h1 = h[next & 3][1],
                        *restrict h2 = h[next & 3][2], *restrict h3 = h[next & 3][3];
        int64_t yy = next - PT;
        if (yy < 0 || yy >= IH) {
          for (int64_t t = 0; t < TW; t++)
            h0[t] = h1[t] = h2[t] = h3[t] = 0.0f;
          continue;
        }
        const float *restrict xr = xc + yy * IW;
        /* d B with a0..a3 = the tile's 4 input columns 2t - PL .. 2t + 3 - PL.
         * Read from X itself: a deinterleaved copy read back at once (an
         * unaligned load over two fresh stores) stalled store forwarding:
         * this loop was a fifth of DenseNet-121. */
        for (int64_t t = 0; t < lo; t++)
          conv_wino_row_edge(xr, IW, 2 * t - PL, h0 + t, h1 + t, h2 + t, h3 + t);
        for (int64_t t = hi; t < TW; t++)
          conv_wino_row_edge(xr, IW, 2 * t - PL, h0 + t, h1 + t, h2 + t, h3 + t);
        for (int64_t t = lo; t < hi; t++) {
          const int64_t c = 2 * t - PL;
          h0[t] = xr[c] - xr[c + 2];
          h1[t] = xr[c + 1] + xr[c + 2];
          h2[t] = xr[c + 2] - xr[c + 1];
          h3[t] = xr[c + 1] - xr[c + 3];
        }
      }
      int64_t ta = ty * TW > j->t0 ? 0 : j->t0 - ty * TW;   /* tiles [ta, tb) of the row */
      int64_t tb = (ty + 1) * TW < j->t0 + j->nt ? TW : j->t0 + j->nt - ty * TW;
      int64_t n = tb - ta;
      float *vrow = vc + ty * TW + ta - j->t0;
      for (int q = 0; q < 4; q++) {   /* B^T (d B), per column q */
        const float *restrict e0 = h[(2 * ty) & 3][q] + ta, *restrict e1 = h[(2 * ty + 1) & 3][q] + ta,
                              *restrict e2 = h[(2 * ty + 2) & 3][q] + ta,
                              *restrict e3 = h[(2 * ty + 3) & 3][q] + ta;
        float *restrict o0 = vrow + (0 * 4 + q) * xs, *restrict o1 = vrow + (1 * 4 + q) * xs,
                        *restrict o2 = vrow + (2 * 4 + q) * xs, *restrict o3 = vrow + (3 * 4 + q) * xs;
        for (int64_t t = 0; t < n; t++) {
          o0[t] = e0[t] - e2[t];
          o1[t] = e1[t] + e2[t];
          o2[t] = e2[t] - e1[t];
          o3[t] = e1[t] - e3[t];
        }
      }
    }
  }
}

/* Tiles per chunk of the output transform's buffers (on the stack). */
#define CONV_WINO_OUT_CHUNK 1024

/* Y block = A^T M A + bias, activated; A^T = [1 1 1 0; 0 1 -1 -1].  Per
 * output channel (ranges of channels run in parallel): the 2x2 outputs of
 * every tile of a chunk in one pass over the 16 planes (contiguous in the
 * tile index, long loops that vectorize even on 7x7 maps), then bias and
 * activation on the way to Y, a tile row at a time. */
#if defined(__x86_64__) || defined(__i386__)
static SG256 int64_t conv_wino_out8(const float *v, int64_t xs, int64_t n, float bias,
                                    float *o00, float *o01, float *o10, float *o11);
#endif

/* simd: the first pass's whole vectors through conv_wino_out8 (the AVX2
 * clone only). */
static inline __attribute__((always_inline)) void conv_wino_out_body(void *arg, int64_t m0,
                                                                     int64_t m1, bool simd) {
  const conv_wino_job *j = arg;
  const conv_priv *p = j->p;
  const nn_conv_geom *g = &p->g;
  const int64_t OH = g->out[1], OW = g->out[2], TW = p->tw;
  const int64_t xs = p->Mg * j->nt;
  const sg_act act = sg_act_from(&p->epi);
  /* a costly activation over each row segment once it is written, in
   * vectors (per element, SiLU's expf made a 16 -> 16 3x3 conv at 160x160
   * twice as slow as the direct kernel); the scalar loops apply the rest */
  const bool post = sg_act_costly(act.act);
  sg_act act1 = act;
  if (post)
    act1.act = NN_SGEMM_ACT_NONE;
  float o[4][CONV_WINO_OUT_CHUNK];   /* outputs (0,0), (0,1), (1,0), (1,1) of each tile */
  for (int64_t m = m0; m < m1; m++) {
    float *ym = j->yg + m * g->out_sz;
    const float bias = j->bias ? j->bias[m] : 0.0f;
    for (int64_t c0 = 0; c0 < j->nt; c0 += CONV_WINO_OUT_CHUNK) {
      const int64_t n = j->nt - c0 < CONV_WINO_OUT_CHUNK ? j->nt - c0 : CONV_WINO_OUT_CHUNK;
      const float *restrict v = j->mm + m * j->nt + c0;
      float *restrict o00 = o[0], *restrict o01 = o[1], *restrict o10 = o[2], *restrict o11 = o[3];
      int64_t t0 = 0;
#if defined(__x86_64__) || defined(__i386__)
      if (simd)
        t0 = conv_wino_out8(v, xs, n, bias, o00, o01, o10, o11);
#else
      (void)simd;
#endif
      for (int64_t t = t0; t < n; t++) {
        float a00 = v[0 * xs + t] + v[4 * xs + t] + v[8 * xs + t];
        float a01 = v[1 * xs + t] + v[5 * xs + t] + v[9 * xs + t];
        float a02 = v[2 * xs + t] + v[6 * xs + t] + v[10 * xs + t];
        float a03 = v[3 * xs + t] + v[7 * xs + t] + v[11 * xs + t];
        float a10 = v[4 * xs + t] - v[8 * xs + t] - v[12 * xs + t];
        float a11 = v[5 * xs + t] - v[9 * xs + t] - v[13 * xs + t];
        float a12 = v[6 * xs + t] - v[10 * xs + t] - v[14 * xs + t];
        float a13 = v[7 * xs + t] - v[11 * xs + t] - v[15 * xs + t];
        o00[t] = a00 + a01 + a02 + bias;
        o01[t] = a01 - a02 - a03 + bias;
        o10[t] = a10 + a11 + a12 + bias;
        o11[t] = a11 - a12 - a13 + bias;
      }
      /* scatter, a tile row at a time: tiles [t, t + len) of row ty */
      for (int64_t t = 0; t < n;) {
        int64_t tt = j->t0 + c0 + t, ty = tt / TW, tx = tt % TW;
        int64_t len = TW - tx < n - t ? TW - tx : n - t;
        for (int r = 0; r < 2 && 2 * ty + r < OH; r++) {
          float *restrict yr = ym + (2 * ty + r) * OW + 2 * tx;
          const float *restrict e = r ? o10 + t : o00 + t, *restrict f = r ? o11 + t : o01 + t;
          /* the last column of an odd-width map has no right neighbour */
          int64_t full = 2 * (tx + len) <= OW ? len : len - 1;
          if (j->rg) {   /* a fused residual: added before the activation */
            const float *restrict rr = j->rg + m * g->out_sz + (2 * ty + r) * OW + 2 * tx;
            for (int64_t q = 0; q < full; q++) {
              yr[2 * q] = sg_act1(&act1, e[q] + rr[2 * q]);
              yr[2 * q + 1] = sg_act1(&act1, f[q] + rr[2 * q + 1]);
            }
            if (full < len)
              yr[2 * full] = sg_act1(&act1, e[full] + rr[2 * full]);
            if (post)
              nn_sgemm_act_run(&act, yr, 2 * full + (full < len));
            continue;
          }
          switch (act1.act) {
          case NN_SGEMM_ACT_NONE:
            for (int64_t q = 0; q < full; q++) {
              yr[2 * q] = e[q];
              yr[2 * q + 1] = f[q];
            }
            break;
          case NN_SGEMM_ACT_RELU:
            for (int64_t q = 0; q < full; q++) {
              yr[2 * q] = e[q] < 0.0f ? 0.0f : e[q];
              yr[2 * q + 1] = f[q] < 0.0f ? 0.0f : f[q];
            }
            break;
          default:
            for (int64_t q = 0; q < full; q++) {
              yr[2 * q] = sg_act1(&act1, e[q]);
              yr[2 * q + 1] = sg_act1(&act1, f[q]);
            }
            break;
          }
          if (full < len)
            yr[2 * full] = sg_act1(&act1, e[full]);
          if (post)
            nn_sgemm_act_run(&act, yr, 2 * full + (full < len));
        }
        t += len;
      }
    }
  }
}

/* The transforms are plain loops over tiles; compiled a second time for
 * AVX2 (8 lanes instead of SSE's 4), chosen at run time with the GEMM
 * engine's dispatch (NN_CPU=portable keeps the baseline).  Same operations
 * in the same order (no FMA contraction in C11 mode): same results. */
static void conv_wino_in(void *arg, int64_t c0, int64_t c1) { conv_wino_in_body(arg, c0, c1); }
static void conv_wino_out(void *arg, int64_t m0, int64_t m1) {
  conv_wino_out_body(arg, m0, m1, false);
}
#if defined(__x86_64__) || defined(__i386__)
/* conv_wino_in_avx2: blocks of up to this many tiles (all of them: a
 * block's tiles are at most CONV_WINO_FLOATS / (16 * 32) = 512 plus the
 * rounding of an even split); larger ones, and blocks of fewer than 8
 * tiles, take the C loops. */
#define CONV_WINO_IN_TILES 640

/* Columns c .. c + 15 of the input row xr, zero outside [0, IW), in two
 * vectors: plain loads inside the row, masked ones at its edges (the
 * masked-off lanes, outside the row, are never read). */
static SG_ALWAYS_INLINE SG256 void conv_wino_load16(const float *xr, int64_t IW, int64_t c,
                                                    __m256 *lo, __m256 *hi) {
  if (c >= 0 && c + 16 <= IW) {
    *lo = _mm256_loadu_ps(xr + c);
    *hi = _mm256_loadu_ps(xr + c + 8);
    return;
  }
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i w = _mm256_set1_epi32((int)IW), none = _mm256_set1_epi32(-1);
  __m256i c0 = _mm256_add_epi32(_mm256_set1_epi32((int)c), lane);
  __m256i c1 = _mm256_add_epi32(c0, _mm256_set1_epi32(8));
  __m256i m0 = _mm256_and_si256(_mm256_cmpgt_epi32(c0, none), _mm256_cmpgt_epi32(w, c0));
  __m256i m1 = _mm256_and_si256(_mm256_cmpgt_epi32(c1, none), _mm256_cmpgt_epi32(w, c1));
  const float *at = (const float *)((uintptr_t)xr + (uintptr_t)(c * (int64_t)sizeof(float)));
  *lo = _mm256_maskload_ps(at, m0);
  *hi = _mm256_maskload_ps(at + 8, m1);
}

/* The input transform with AVX2 intrinsics, 8 tiles a vector over the
 * block's tile index: per tile row and each of its 4 input rows, the row
 * transforms d B of the row's tiles (the even and odd columns of two
 * loads, zero outside the row), stored at the tiles' block index; then
 * B^T over all the block's tiles at once.  The C loops (conv_wino_in_body)
 * run along one tile row, 7 tiles on a 14x14 map, and the compiler left
 * them scalar: DenseNet-121's 3x3 convs spent 14% of its time here.  An
 * input row shared by two tile rows is transformed twice.  The same
 * operations on the same values as conv_wino_in_body: the same results. */
static SG256 void conv_wino_in_avx2(void *arg, int64_t c0, int64_t c1) {
  const conv_wino_job *j = arg;
  const conv_priv *p = j->p;
  const int64_t nt = j->nt, t0 = j->t0;
  if (nt > CONV_WINO_IN_TILES || nt < 8) {
    conv_wino_in_body(arg, c0, c1);
    return;
  }
  const nn_conv_geom *g = &p->g;
  const int64_t IH = g->in[1], IW = g->in[2], PT = g->pb[1], PL = g->pb[2];
  const int64_t TW = p->tw, xs = p->Cg * nt;
  const int64_t ty_a = t0 / TW, ty_b = (t0 + nt - 1) / TW;
  /* [input row k of the tile][column q][block tile], 8 floats of slack: a
   * row's last vector spills into the next row's first tiles, which that
   * row rewrites */
  float hh[16][CONV_WINO_IN_TILES + 8] __attribute__((aligned(32)));   /* 41 KiB */
  for (int64_t ci = c0; ci < c1; ci++) {
    const float *xc = j->xg + ci * g->in_sz;
    float *vc = j->v + ci * nt;
    for (int64_t ty = ty_a; ty <= ty_b; ty++) {
      const int64_t ta = ty * TW > t0 ? 0 : t0 - ty * TW;
      const int64_t tb = (ty + 1) * TW < t0 + nt ? TW : t0 + nt - ty * TW;
      const int64_t ib = ty * TW - t0;   /* block index of the row's tile 0 */
      for (int k = 0; k < 4; k++) {
        const int64_t yy = 2 * ty + k - PT;
        float *d0 = hh[4 * k], *d1 = hh[4 * k + 1], *d2 = hh[4 * k + 2], *d3 = hh[4 * k + 3];
        if (yy < 0 || yy >= IH) {
          for (int64_t t = ta; t < tb; t += 8) {
            _mm256_storeu_ps(d0 + ib + t, _mm256_setzero_ps());
            _mm256_storeu_ps(d1 + ib + t, _mm256_setzero_ps());
            _mm256_storeu_ps(d2 + ib + t, _mm256_setzero_ps());
            _mm256_storeu_ps(d3 + ib + t, _mm256_setzero_ps());
          }
          continue;
        }
        const float *xr = xc + yy * IW;
        for (int64_t t = ta; t < tb; t += 8) {
          __m256 lo, hi, lo2, hi2;
          conv_wino_load16(xr, IW, 2 * t - PL, &lo, &hi);
          conv_wino_load16(xr, IW, 2 * t - PL + 2, &lo2, &hi2);
          /* a0..a3: columns 2t - PL + 0..3 of tiles t .. t + 7 */
          __m256 a0 = sg2_even_lanes(lo, hi), a1 = sg2_odd_lanes(lo, hi);
          __m256 a2 = sg2_even_lanes(lo2, hi2), a3 = sg2_odd_lanes(lo2, hi2);
          _mm256_storeu_ps(d0 + ib + t, _mm256_sub_ps(a0, a2));
          _mm256_storeu_ps(d1 + ib + t, _mm256_add_ps(a1, a2));
          _mm256_storeu_ps(d2 + ib + t, _mm256_sub_ps(a2, a1));
          _mm256_storeu_ps(d3 + ib + t, _mm256_sub_ps(a1, a3));
        }
      }
    }
    /* B^T (d B) per column q, over the block: the last vector overlaps the
     * one before instead of writing past the channel's tiles */
    for (int q = 0; q < 4; q++) {
      const float *e0 = hh[q], *e1 = hh[4 + q], *e2 = hh[8 + q], *e3 = hh[12 + q];
      float *o0 = vc + q * xs, *o1 = vc + (4 + q) * xs, *o2 = vc + (8 + q) * xs,
            *o3 = vc + (12 + q) * xs;
      for (int64_t i = 0; i < nt; i += 8) {
        const int64_t u = i + 8 <= nt ? i : nt - 8;
        __m256 v0 = _mm256_loadu_ps(e0 + u), v1 = _mm256_loadu_ps(e1 + u);
        __m256 v2 = _mm256_loadu_ps(e2 + u), v3 = _mm256_loadu_ps(e3 + u);
        _mm256_storeu_ps(o0 + u, _mm256_sub_ps(v0, v2));
        _mm256_storeu_ps(o1 + u, _mm256_add_ps(v1, v2));
        _mm256_storeu_ps(o2 + u, _mm256_sub_ps(v2, v1));
        _mm256_storeu_ps(o3 + u, _mm256_sub_ps(v1, v3));
      }
    }
  }
}
/* The output transform's first pass with AVX2 intrinsics, 8 tiles a
 * vector: the 4 outputs of tiles [0, n) of channel plane v (planes xs
 * apart) plus bias into o00 .. o11, in conv_wino_out_body's order of
 * operations (the same results); the compiler's version of that loop kept
 * its 16 plane pointers on the stack.  Returns the tiles done (a multiple
 * of 8); the C loop does the rest. */
static SG256 int64_t conv_wino_out8(const float *v, int64_t xs, int64_t n, float bias,
                                    float *o00, float *o01, float *o10, float *o11) {
  const __m256 b = _mm256_set1_ps(bias);
  int64_t t = 0;
  for (; t + 8 <= n; t += 8) {
    const float *p0 = v + t, *p1 = p0 + 4 * xs, *p2 = p0 + 8 * xs, *p3 = p0 + 12 * xs;
#define WO_L(p, k) _mm256_loadu_ps((p) + (k) * xs)
    __m256 a00 = _mm256_add_ps(_mm256_add_ps(WO_L(p0, 0), WO_L(p1, 0)), WO_L(p2, 0));
    __m256 a01 = _mm256_add_ps(_mm256_add_ps(WO_L(p0, 1), WO_L(p1, 1)), WO_L(p2, 1));
    __m256 a02 = _mm256_add_ps(_mm256_add_ps(WO_L(p0, 2), WO_L(p1, 2)), WO_L(p2, 2));
    __m256 a03 = _mm256_add_ps(_mm256_add_ps(WO_L(p0, 3), WO_L(p1, 3)), WO_L(p2, 3));
    _mm256_storeu_ps(o00 + t, _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a00, a01), a02), b));
    _mm256_storeu_ps(o01 + t, _mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(a01, a02), a03), b));
    __m256 a10 = _mm256_sub_ps(_mm256_sub_ps(WO_L(p1, 0), WO_L(p2, 0)), WO_L(p3, 0));
    __m256 a11 = _mm256_sub_ps(_mm256_sub_ps(WO_L(p1, 1), WO_L(p2, 1)), WO_L(p3, 1));
    __m256 a12 = _mm256_sub_ps(_mm256_sub_ps(WO_L(p1, 2), WO_L(p2, 2)), WO_L(p3, 2));
    __m256 a13 = _mm256_sub_ps(_mm256_sub_ps(WO_L(p1, 3), WO_L(p2, 3)), WO_L(p3, 3));
#undef WO_L
    _mm256_storeu_ps(o10 + t, _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a10, a11), a12), b));
    _mm256_storeu_ps(o11 + t, _mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(a11, a12), a13), b));
  }
  return t;
}

__attribute__((target("avx2"))) static void conv_wino_out_avx2(void *arg, int64_t m0, int64_t m1) {
  conv_wino_out_body(arg, m0, m1, true);
}
#define CONV_HAVE_AVX2_CLONES 1
#else
#define CONV_HAVE_AVX2_CLONES 0
#endif

/* The 16 products of a block, a range of xi per worker, each product
 * serial (nn_ctx NULL) in the worker's own scratch slot: one hand-off for
 * the 16 instead of one per product, whose halves were too small to split
 * on small maps (7x7: 16 tiles). */
static void conv_wino_gemms(void *arg, int64_t x0, int64_t x1) {
  conv_wino_job *j = arg;
  const conv_priv *p = j->p;
  char *ws = j->gws + (size_t)nn_parallel_worker() * j->slot_bytes;
  for (int64_t xi = x0; xi < x1; xi++) {
    nn_status st = nn_sgemm_compute_pa(NULL, 0, p->Mg, j->nt, p->Cg, 1.0f,
                                       conv_wino_u(p, j->gi, (int)xi), j->v + xi * p->Cg * j->nt,
                                       j->nt, 0.0f, j->mm + xi * p->Mg * j->nt, j->nt, NULL, ws,
                                       j->slot_bytes);
    if (st)
      j->st = st;
  }
}

/* Whole blocks per worker (conv_priv.wino_par > 1): block b = tiles
 * [conv_wino_block_t0(b), conv_wino_block_t0(b + 1)) through the three
 * phases, serially, in the worker's own V + M buffers and engine slot
 * (conv_wino_gemms picks the slot). */
typedef struct conv_wino_par_job {
  conv_wino_job base;     /* group, planes, bias, residual; t0 / nt / v / mm per block */
  float *bufs;            /* wino_par blocks of blk_floats */
  nn_range_fn in, out;
  int64_t tiles;
} conv_wino_par_job;

static void conv_wino_blocks(void *arg, int64_t b0, int64_t b1) {
  conv_wino_par_job *pj = arg;
  const conv_priv *p = pj->base.p;
  int w = nn_parallel_worker();
  conv_wino_job j = pj->base;
  j.v = pj->bufs + (size_t)w * p->blk_floats;
  j.mm = j.v + p->v_floats;
  for (int64_t b = b0; b < b1; b++) {
    j.t0 = conv_wino_block_t0(pj->tiles, p->wino_nblk, b);
    j.nt = conv_wino_block_t0(pj->tiles, p->wino_nblk, b + 1) - j.t0;
    pj->in(&j, 0, p->Cg);
    conv_wino_gemms(&j, 0, 16);
    pj->out(&j, 0, p->Mg);
  }
  if (j.st)
    pj->base.st = j.st;   /* any failure; which one does not matter */
}

static nn_status conv_run_wino(nn_ctx *c, const conv_priv *p, conv_job *jb, void *gws) {
  const nn_conv_geom *g = &p->g;
  if (!p->wino_ready)   /* priv is the node's own: written once, before any use */
    conv_wino_transform((conv_priv *)p, jb->w, jb->col);
  const int64_t tiles = p->th * p->tw;
  conv_wino_job j = {.p = p, .v = jb->col, .mm = jb->col + p->v_floats, .gws = gws,
                     .slot_bytes = p->gemm_ws / (size_t)nn_parallel_width(c)};
  nn_range_fn wino_in = conv_wino_in, wino_out = conv_wino_out;
#if CONV_HAVE_AVX2_CLONES
  if (nn_cpu_isa_get() >= NN_CPU_AVX2) {
    wino_in = conv_wino_in_avx2;
    wino_out = conv_wino_out_avx2;
  }
#endif
  for (int64_t bi = 0; bi < p->batch; bi++)
    for (int64_t gi = 0; gi < p->group; gi++) {
      j.xg = jb->x + (bi * p->C + gi * p->Cg) * g->in_sz;
      j.yg = jb->y + (bi * p->M + gi * p->Mg) * g->out_sz;
      j.bias = jb->b ? jb->b + gi * p->Mg : NULL;
      j.rg = jb->res ? jb->res + (bi * p->M + gi * p->Mg) * g->out_sz : NULL;
      j.gi = gi;
      if (p->wino_par > 1 && nn_parallel_width(c) >= p->wino_par) {
        conv_wino_par_job pj = {.base = j, .bufs = jb->col, .in = wino_in, .out = wino_out,
                                .tiles = tiles};
        nn_parallel_for(c, p->wino_nblk, 1, conv_wino_blocks, &pj);
        if (pj.base.st)
          return conv_gemm_failed(c, pj.base.st);
        continue;
      }
      for (j.t0 = 0; j.t0 < tiles; j.t0 += p->tb) {
        j.nt = tiles - j.t0 < p->tb ? tiles - j.t0 : p->tb;
        nn_parallel_for(c, p->Cg, conv_grain(16 * j.nt, 1 << 14), wino_in, &j);
        nn_parallel_for(c, 16, 1, conv_wino_gemms, &j);
        if (j.st)
          return conv_gemm_failed(c, j.st);
        nn_parallel_for(c, p->Mg, conv_grain(16 * j.nt, 1 << 14), wino_out, &j);
      }
    }
  return NN_OK;
}

/* DWPW_BANDS: bands of output rows, each worker's in its own slot (band
 * planes and engine scratch), depthwise then a serial GEMM per band. */
typedef struct conv_band_job {
  const conv_priv *p;
  const nn_dwconv_panel *pp;
  const float *w;         /* A: packed panels (pa) or the weights */
  bool pa;
  float *y;
  const nn_sgemm_epi *e;  /* the image's epilogue; its residual offset per band */
  float *bufs;
  char *gws;
  size_t slot_bytes;
  nn_status st;
} conv_band_job;

static void conv_dwpw_bands(void *arg, int64_t b0, int64_t b1) {
  conv_band_job *j = arg;
  const conv_priv *p = j->p;
  const int64_t N = p->g.out_sz;
  int w = nn_parallel_worker();
  float *buf = j->bufs + (size_t)w * p->band_floats;
  char *ws = j->gws + (size_t)w * j->slot_bytes;
  for (int64_t b = b0; b < b1; b++) {
    int64_t p0 = b * p->band_px, np = N - p0 < p->band_px ? N - p0 : p->band_px;
    nn_dwconv2d_band(j->pp, p0, np, buf, p->band_ld);
    nn_sgemm_epi e = *j->e;
    if (e.res)
      e.res += p0;
    nn_status st =
        j->pa ? nn_sgemm_compute_pa(NULL, 0, p->M, np, p->K, 1.0f, j->w, buf, p->band_ld, 0.0f,
                                    j->y + p0, N, &e, ws, j->slot_bytes)
              : nn_sgemm_compute(NULL, 0, 0, p->M, np, p->K, 1.0f, j->w, p->K, buf, p->band_ld,
                                 0.0f, j->y + p0, N, &e, ws, j->slot_bytes);
    if (st)
      j->st = st;   /* any failure; which one does not matter */
  }
}

/* A 1x1 conv with its depthwise producer fused in (CONV_PATH_DWPW), per
 * image: the depthwise output is made where the GEMM wants it (conv_priv's
 * dwpw mode), then multiplied with this conv's epilogue. */
static nn_status conv_run_dwpw(nn_ctx *c, const conv_priv *p, conv_job *jb, void *gws) {
  const int64_t N = p->g.out_sz, K = p->K, M = p->M;
  const int64_t in_sz = p->dws.IH * p->dws.IW;
  const void *pa = jb->wpack ? jb->w : NULL;
  for (int64_t bi = 0; bi < p->batch; bi++) {
    nn_dwconv_panel pp = {.s = p->dws, .x = jb->x + bi * p->C * in_sz, .w = jb->dww};
    pp.epi = conv_epi_with_bias(&p->dwepi, jb->dwb, NULL, 0);
    float *yg = jb->y + bi * M * N;
    const float *rg = jb->res ? jb->res + bi * M * N : NULL;
    nn_sgemm_epi e = conv_epi_with_bias(&p->epi, jb->b, rg, N);
    nn_status st;
    switch (p->dwpw) {
    case DWPW_BANDS: {
      conv_band_job bj = {.p = p, .pp = &pp, .w = jb->w, .pa = pa != NULL, .y = yg, .e = &e,
                          .bufs = jb->col, .gws = gws,
                          .slot_bytes = p->gemm_ws / (size_t)p->band_par};
      int64_t nb = (N + p->band_px - 1) / p->band_px;
      /* slots for band_par workers: a wider pool than at prepare runs serially */
      nn_parallel_for(nn_parallel_width(c) <= p->band_par ? c : NULL, nb, 1, conv_dwpw_bands, &bj);
      st = bj.st;
      break;
    }
    case DWPW_BLOCKS:
      st = pa ? nn_sgemm_compute_pa_fn(c, M, N, K, 1.0f, pa, nn_dwconv2d_pack, &pp, 0.0f, yg, N,
                                       &e, gws, p->gemm_ws)
              : nn_sgemm_compute_fn(c, 0, M, N, K, 1.0f, jb->w, K, nn_dwconv2d_pack, &pp, 0.0f,
                                    yg, N, &e, gws, p->gemm_ws);
      break;
    case DWPW_ONCE:
      nn_sgemm_pack_b_fn(c, K, N, 1, nn_dwconv2d_pack, &pp, jb->col);
      st = pa ? nn_sgemm_compute_papb(c, M, N, K, 1.0f, pa, jb->col, 0.0f, yg, N, &e, gws,
                                      p->gemm_ws)
              : nn_sgemm_compute_pb(c, 0, M, N, K, 1.0f, jb->w, K, jb->col, 0.0f, yg, N, &e, gws,
                                    p->gemm_ws);
      break;
    default:
      st = nn_dwconv2d(c, &pp.s, pp.x, pp.w, jb->col, &pp.epi);
      if (st)
        return nn_fail(c, st, "depthwise kernel refused the shape");
      st = pa ? nn_sgemm_compute_pa(c, 0, M, N, K, 1.0f, pa, jb->col, N, 0.0f, yg, N, &e, gws,
                                    p->gemm_ws)
              : nn_sgemm_compute(c, 0, 0, M, N, K, 1.0f, jb->w, K, jb->col, N, 0.0f, yg, N, &e,
                                 gws, p->gemm_ws);
      break;
    }
    if (st)
      return conv_gemm_failed(c, st);
  }
  return NN_OK;
}

/* CONV_PATH_TAPS (see above): per image, per rectangle of outputs, one
 * product per landing tap, the first writing (beta 0), the last applying
 * the bias and activation; a rectangle as wide as the map is written in
 * place, a narrower one in the workspace and copied.  Each tap's shifted
 * window is packed once (in parallel) for all of M's row tiles: gathered
 * per row tile inside the product instead, rate 6 took 15.9 ms, not 13.3. */
static nn_status conv_run_taps(nn_ctx *c, const conv_priv *p, conv_job *jb, void *gws) {
  const nn_conv_geom *g = &p->g;
  const int64_t KW = g->k[2], IH = g->in[1], IW = g->in[2], OW = g->out[2], N = g->out_sz;
  const int64_t C = p->C, M = p->M;
  unsigned char *pa = (unsigned char *)p + CONV_PRIV_HEAD;
  if (!p->taps_ready) {   /* priv is the node's own: written once, before any use */
    float *tmp = jb->col;
    for (int64_t t = 0; t < g->k_sz; t++) {
      for (int64_t m = 0; m < M; m++)
        for (int64_t ci = 0; ci < C; ci++)
          tmp[m * C + ci] = jb->w[(m * C + ci) * g->k_sz + t];
      nn_sgemm_pack_a(0, M, C, tmp, C, pa + (size_t)t * p->taps_pa_bytes);
    }
    ((conv_priv *)p)->taps_ready = true;
  }
  conv_span sh[2 * CONV_TAPS_MAX_K + 1], sw[2 * CONV_TAPS_MAX_K + 1];
  int nh = conv_tap_spans(g->out[1], IH, g->k[1], g->s[1], g->pb[1], g->d[1], sh);
  int nw = conv_tap_spans(OW, IW, KW, g->s[2], g->pb[2], g->d[2], sw);
  nn_sgemm_epi last_e = conv_epi_with_bias(&p->epi, jb->b, NULL, 0);
  void *bpack = jb->col + p->taps_out_floats;
  for (int64_t bi = 0; bi < p->batch; bi++) {
    const float *x = jb->x + bi * C * IH * IW;
    float *y = jb->y + bi * M * N;
    for (int a = 0; a < nh; a++)
      for (int b = 0; b < nw; b++) {
        const int64_t rows = sh[a].hi - sh[a].lo, cols = sw[b].hi - sw[b].lo, px = rows * cols;
        const bool in_place = cols == OW;
        float *dst = in_place ? y + sh[a].lo * OW : jb->col;
        const int64_t ldc = in_place ? N : px;
        const int count = __builtin_popcount(sh[a].taps) * __builtin_popcount(sw[b].taps);
        int done = 0;
        for (int64_t kh = 0; kh < g->k[1]; kh++)
          for (int64_t kw = 0; kw < KW; kw++) {
            if (!(sh[a].taps >> kh & 1) || !(sw[b].taps >> kw & 1))
              continue;
            const int64_t ih0 = sh[a].lo * g->s[1] - g->pb[1] + kh * g->d[1];
            const int64_t iw0 = sw[b].lo * g->s[2] - g->pb[2] + kw * g->d[2];
            nn_sgemm_im2col im = {
              .x = x + ih0 * IW + iw0, .C = C, .IH = IH, .IW = IW, .OH = rows, .OW = cols,
              .KH = 1, .KW = 1, .SH = (int)g->s[1], .SW = (int)g->s[2],
            };
            done++;
            nn_sgemm_pack_b_fn(c, C, px, 1, nn_sgemm_pack_im2col, &im, bpack);
            nn_status st = nn_sgemm_compute_papb(
                c, M, px, C, 1.0f, pa + (size_t)(kh * KW + kw) * p->taps_pa_bytes,
                bpack, done == 1 ? 0.0f : 1.0f, dst, ldc,
                done == count ? &last_e : NULL, gws, p->gemm_ws);
            if (st)
              return conv_gemm_failed(c, st);
          }
        if (!in_place)
          for (int64_t m = 0; m < M; m++)
            for (int64_t r = 0; r < rows; r++)
              memcpy(y + m * N + (sh[a].lo + r) * OW + sw[b].lo, jb->col + m * px + r * cols,
                     sizeof(float) * (size_t)cols);
      }
  }
  return NN_OK;
}

static nn_status conv_run_f32(nn_ctx *c, const conv_priv *p, conv_job *jb, void *gws) {
  const nn_conv_geom *g = &p->g;
  if (p->path == CONV_PATH_DWPW)
    return conv_run_dwpw(c, p, jb, gws);
  if (p->path == CONV_PATH_TRANSPOSE)
    return convt_run_f32(c, p, jb, gws);
  if (p->path == CONV_PATH_WINO)
    return conv_run_wino(c, p, jb, gws);
  if (p->path == CONV_PATH_TAPS)
    return conv_run_taps(c, p, jb, gws);
  if (p->path == CONV_PATH_DIRECT) {
    float *wp = (float *)((char *)p + CONV_PRIV_HEAD);
    if (!p->dc_ready) {   /* priv is the node's own: written once, before any use */
      nn_dconv_pack(&p->dcs, jb->w, wp);
      ((conv_priv *)p)->dc_ready = true;
    }
    for (int64_t bi = 0; bi < p->batch; bi++) {
      nn_sgemm_epi e = conv_epi_with_bias(&p->epi, jb->b, NULL, 0);
      nn_status st = nn_dconv2d(c, &p->dcs, jb->x + bi * p->C * g->in_sz, wp,
                                jb->y + bi * p->M * g->out_sz, &e, jb->col);
      if (st)
        return nn_fail(c, st, "direct kernel refused the shape");
    }
    return NN_OK;
  }
  if (p->path == CONV_PATH_SMALLC) {
    for (int64_t bi = 0; bi < p->batch; bi++) {
      nn_sgemm_epi e = conv_epi_with_bias(&p->epi, jb->b, NULL, 0);
      nn_status st = nn_sconv2d(c, &p->scs, jb->x + bi * p->C * g->in_sz, jb->w,
                                jb->y + bi * p->M * g->out_sz, &e, jb->col);
      if (st)
        return nn_fail(c, st, "direct kernel refused the shape");
    }
    return NN_OK;
  }
  if (p->path == CONV_PATH_DW) {
    nn_dwconv_shape s = {
      .batch = p->batch, .C = p->C, .mult = p->Mg,
      .IH = g->in[1], .IW = g->in[2], .OH = g->out[1], .OW = g->out[2],
      .KH = (int)g->k[1], .KW = (int)g->k[2], .SH = (int)g->s[1], .SW = (int)g->s[2],
      .PT = (int)g->pb[1], .PL = (int)g->pb[2], .DH = (int)g->d[1], .DW = (int)g->d[2],
    };
    nn_sgemm_epi e = conv_epi_with_bias(&p->epi, jb->b, jb->res, g->out[2]);
    nn_status st = nn_dwconv2d(c, &s, jb->x, jb->w, jb->y, &e);
    return st ? nn_fail(c, st, "depthwise kernel refused the shape") : NN_OK;
  }
  const int64_t N = g->out_sz;
  for (int64_t bi = 0; bi < p->batch; bi++)
    for (int64_t gi = 0; gi < p->group; gi++) {
      const float *xg = jb->x + (bi * p->C + gi * p->Cg) * g->in_sz;
      const float *wg = jb->w + gi * p->Mg * p->K;
      const void *pa = jb->wpack ? (const char *)jb->w + (size_t)gi * jb->wpack : NULL;
      float *yg = jb->y + (bi * p->M + gi * p->Mg) * N;
      const float *rg = jb->res ? jb->res + (bi * p->M + gi * p->Mg) * N : NULL;
      nn_sgemm_epi e = conv_epi_with_bias(&p->epi, jb->b ? jb->b + gi * p->Mg : NULL, rg, N);
      nn_status st = NN_OK;
      switch (p->path) {
      case CONV_PATH_1X1:
        if (p->norm_pre) {
          /* each tile's B block packed through the normalization */
          conv_rows rows = conv_rows_of(p, xg, g->in_sz, conv_scale_of(p, jb, bi));
          st = pa ? nn_sgemm_compute_pa_fn(c, p->Mg, N, p->K, 1.0f, pa, conv_pack_rows_norm,
                                           &rows, 0.0f, yg, N, &e, gws, p->gemm_ws)
                  : nn_sgemm_compute_fn(c, 0, p->Mg, N, p->K, 1.0f, wg, p->K,
                                        conv_pack_rows_norm, &rows, 0.0f, yg, N, &e, gws,
                                        p->gemm_ws);
          break;
        }
        st = pa ? nn_sgemm_compute_pa(c, 0, p->Mg, N, p->K, 1.0f, pa, xg, g->in_sz, 0.0f, yg, N,
                                      &e, gws, p->gemm_ws)
                : nn_sgemm_compute(c, 0, 0, p->Mg, N, p->K, 1.0f, wg, p->K, xg, g->in_sz, 0.0f,
                                   yg, N, &e, gws, p->gemm_ws);
        break;
      case CONV_PATH_PACKED:
      case CONV_PATH_IMPLICIT: {
        nn_sgemm_im2col im = {
          .x = xg, .C = p->Cg, .IH = g->in[1], .IW = g->in[2], .OH = g->out[1], .OW = g->out[2],
          .KH = (int)g->k[1], .KW = (int)g->k[2], .SH = (int)g->s[1], .SW = (int)g->s[2],
          .PT = (int)g->pb[1], .PL = (int)g->pb[2], .DH = (int)g->d[1], .DW = (int)g->d[2],
        };
        if (p->path == CONV_PATH_PACKED) {
          /* B packed once (in parallel), then a plain product */
          /* a 1x1 conv packs once only to apply its fused normalization
           * (conv_prepare); any other packs its im2col, by channels */
          conv_rows rows = conv_rows_of(p, xg, g->in_sz, conv_scale_of(p, jb, bi));
          if (p->norm_pre)
            nn_sgemm_pack_b_fn(c, p->K, N, 1, conv_pack_rows_norm, &rows, jb->col);
          else
            nn_sgemm_pack_b_fn(c, p->K, N, g->k[1] * g->k[2], nn_sgemm_pack_im2col, &im, jb->col);
          st = pa ? nn_sgemm_compute_papb(c, p->Mg, N, p->K, 1.0f, pa, jb->col, 0.0f, yg, N, &e,
                                          gws, p->gemm_ws)
                  : nn_sgemm_compute_pb(c, 0, p->Mg, N, p->K, 1.0f, wg, p->K, jb->col, 0.0f, yg,
                                        N, &e, gws, p->gemm_ws);
        } else {
          st = pa ? nn_sgemm_compute_pa_fn(c, p->Mg, N, p->K, 1.0f, pa, nn_sgemm_pack_im2col, &im,
                                           0.0f, yg, N, &e, gws, p->gemm_ws)
                  : nn_sgemm_compute_fn(c, 0, p->Mg, N, p->K, 1.0f, wg, p->K, nn_sgemm_pack_im2col,
                                        &im, 0.0f, yg, N, &e, gws, p->gemm_ws);
        }
        break;
      }
      default: /* explicit, deform: gather a tile, then multiply it */
        jb->xg = xg;
        jb->bi = bi;
        jb->gi = gi;
        for (int64_t j0 = 0; j0 < N && !st; j0 += p->nt) {
          int64_t nn = N - j0 < p->nt ? N - j0 : p->nt;
          jb->j0 = j0;
          jb->nn = nn;
          int64_t cost = p->path == CONV_PATH_DEFORM ? 16 * nn : nn;
          nn_parallel_for(c, p->K, conv_grain(cost, 1 << 14), conv_im2col_range, jb);
          e.res = rg ? rg + j0 : NULL;   /* the product writes columns from j0 */
          st = pa ? nn_sgemm_compute_pa(c, 0, p->Mg, nn, p->K, 1.0f, pa, jb->col, nn, 0.0f,
                                        yg + j0, N, &e, gws, p->gemm_ws)
                  : nn_sgemm_compute(c, 0, 0, p->Mg, nn, p->K, 1.0f, wg, p->K, jb->col, nn, 0.0f,
                                     yg + j0, N, &e, gws, p->gemm_ws);
        }
        break;
      }
      if (st)
        return conv_gemm_failed(c, st);
    }
  return NN_OK;
}

static void conv_f16_to_f32(const nn_value *v, float *dst) {
  const uint16_t *s = v->data;
  for (int64_t i = 0; i < v->numel; i++)
    dst[i] = nn_f16_to_f32(s[i]);
}

static nn_status conv_run(nn_ctx *c, nn_node *n) {
  const conv_priv *p = n->priv;
  conv_job jb;
  memset(&jb, 0, sizeof jb);
  jb.p = p;
  float *ws = n->ws;
  const nn_value *bv = n->n_in > 2 ? n->x[2] : NULL;
  if (p->path == CONV_PATH_DEFORM)
    bv = n->n_in > 3 ? n->x[3] : NULL;
  if (p->dt == NN_DTYPE_FLOAT16) {
    float *s = ws;
    const nn_value *v[3] = {n->x[0], n->x[1], bv};
    const float *dst[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
      if (!v[i])
        continue;
      conv_f16_to_f32(v[i], s);
      dst[i] = s;
      s += nn_align_up((size_t)v[i]->numel, 16);
    }
    jb.x = dst[0];
    jb.w = dst[1];
    jb.b = dst[2];
    jb.y = s;
  } else {
    jb.x = n->x[0]->data;
    jb.w = n->x[1]->data;
    jb.b = bv ? bv->data : NULL;
    jb.y = n->y[0]->data;
    const nn_value *rv = conv_residual(n);
    jb.res = rv ? rv->data : NULL;
    if (p->norm_pre)
      jb.x = n->x[CONV_DWPW_SLOT]->data;
    if (p->scale_pre)
      jb.scale = n->x[CONV_SCALE_SLOT]->data;
    if (p->path == CONV_PATH_DWPW) {
      const nn_node *dw = n->pre;
      jb.x = n->x[CONV_DWPW_SLOT]->data;
      jb.dww = dw->x[1]->data;
      jb.dwb = dw->n_in > 2 && dw->x[2] ? dw->x[2]->data : NULL;
    }
    if (n->x[1]->packed_a_groups > 0)
      jb.wpack = nn_plan_packed_a_group_bytes(p->Mg, p->K);
  }
  if (p->path == CONV_PATH_DEFORM) {
    jb.offset = n->x[2]->data;
    jb.mask = n->n_in > 4 && n->x[4] ? n->x[4]->data : NULL;
  }
  jb.col = ws + p->stage_floats + p->wt_floats;
  void *gws = jb.col + p->col_floats + (size_t)p->nslots * p->slot_floats;
  nn_status st = conv_run_f32(c, p, &jb, gws);
  if (st)
    return st;
  if (p->dt == NN_DTYPE_FLOAT16) {
    uint16_t *yd = n->y[0]->data;
    for (int64_t i = 0; i < n->y[0]->numel; i++)
      yd[i] = nn_f32_to_f16(jb.y[i]);
  }
  return NN_OK;
}

/* ---- ConvTranspose prepare --------------------------------------------------- */

static nn_status convt_prepare(nn_ctx *c, nn_node *n) {
  nn_status st = conv_check_float(c, n);
  if (st)
    return st;
  /* the window geometry is the op layer's (ops/conv.h), as on Vulkan */
  nn_conv_params cp;
  conv_priv p;
  if ((st = nn_convt_params_init(c, n, &cp)) || (st = conv_priv_init(c, n, &cp, &p)))
    return st;
  p.path = CONV_PATH_TRANSPOSE;
  const nn_conv_geom *g = &p.g;
  p.K = p.Cg;
  int64_t rows = p.Mg * g->k_sz;
  p.nt = conv_tile_cols(rows, g->in_sz, CONV_COL_FLOATS);
  p.col_floats = nn_align_up((size_t)(rows * p.nt), 16);
  p.gemm_ws = conv_gemm_ws(c, rows, p.nt, p.Cg);
  p.stage_floats = conv_stage_floats(n);
  return conv_finish_priv(c, n, &p);
}

/* ---- DeformConv ----------------------------------------------------------------- */

static nn_status deform_prepare(nn_ctx *c, nn_node *n) {
  for (int i = 0; i < n->n_in && i < 5; i++)
    if (n->x[i] && n->x[i]->dtype != NN_DTYPE_FLOAT)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "input %d type %s is not supported (float32)", i,
                     nn_dtype_name(n->x[i]->dtype));
  if (n->x[0]->rank != 4)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "only 2-D DeformConv is supported (input rank %d)",
                   n->x[0]->rank);
  nn_conv_params cp;
  int64_t og;
  conv_priv p;
  nn_status st = nn_deform_params_init(c, n, &cp, &og);
  if (st || (st = conv_priv_init(c, n, &cp, &p)))
    return st;
  p.offset_group = og;
  p.K = p.Cg * p.g.k_sz;
  p.path = CONV_PATH_DEFORM;
  conv_plan_explicit(c, &p, CONV_COL_FLOATS);
  return conv_finish_priv(c, n, &p);
}

/* ---- ConvInteger and QLinearConv --------------------------------------------------
 * Exact int32 sums of (x - x_zero_point) * (w - w_zero_point); im2col pads with
 * zeros of the shifted values, i.e. with the zero point.  QLinearConv then
 * adds the int32 bias and requantizes: round_half_even(acc * x_scale * w_scale
 * / y_scale) + y_zero_point, saturated.  Serial: quantized models are not
 * the speed target of this path. */


static const nn_value *conv_qget(const nn_node *n, int i) {
  return i >= 0 && i < n->n_in ? n->x[i] : NULL;
}

static int32_t conv_q8(const nn_value *v, int64_t i) {
  return v->dtype == NN_DTYPE_UINT8 ? ((const uint8_t *)v->data)[i] : ((const int8_t *)v->data)[i];
}

/* QLinearConv's requantization of output channel m: the multiplier float32
 * x * w / y (as ONNX Runtime and the reference form it), the channel's bias
 * and the output zero point. */
static void qconv_requant_of(const nn_node *n, const nn_qconv_in *q, int64_t m, float *mult,
                             int32_t *bias, int32_t *zp) {
  const nn_value *wsv = conv_qget(n, q->w_scale), *bv = conv_qget(n, q->bias);
  const nn_value *yzpv = conv_qget(n, q->y_zp);
  float xs = *(const float *)conv_qget(n, q->x_scale)->data, ys = *(const float *)conv_qget(n, q->y_scale)->data;
  float wsc = ((const float *)wsv->data)[wsv->numel == 1 ? 0 : m];
  *mult = xs * wsc / ys;
  *bias = bv ? ((const int32_t *)bv->data)[m] : 0;
  *zp = yzpv ? conv_q8(yzpv, 0) : 0;
}

/* qconv_requant_of for output channels 0 .. M - 1 at once: mult[m], the
 * channel's bias added to bias[m] (mod 2^32), the zero point. */
static void qconv_requant_all(const nn_node *n, const nn_qconv_in *q, int64_t M, float *mult,
                              int32_t *bias, int32_t *zp) {
  *zp = 0;   /* set by every channel below (with M = 0 nothing is stored) */
  for (int64_t m = 0; m < M; m++) {
    int32_t b;
    qconv_requant_of(n, q, m, &mult[m], &b, zp);
    bias[m] = (int32_t)((uint32_t)bias[m] + (uint32_t)b);
  }
}

/* Store n requantized sums (from af, floats holding exact integers, or
 * else ai) as 8-bit elements: ONNX Runtime's arithmetic (vmath.h's
 * nn_vmath_requant_8: the product rounded to float32, where the ONNX
 * reference keeps it in double and a tie such as 140.5000038 falls the other
 * way), vector blocks through vmath, the rest here, value for value the
 * same. */
static void qconv_store8(bool u8, void *out, const float *af, const int32_t *ai, int64_t n,
                         float mult, int32_t bias, int32_t zp) {
  unsigned char *dst = out;
  for (int64_t t = nn_vmath_requant_8(af, ai, bias, mult, zp, u8, dst, n); t < n; t++)
    nn_vmath_requant_1(af ? (int32_t)af[t] : ai[t], bias, mult, zp, u8, dst + t);
}

/* qconv_run_float (below): windows of up to this many taps, whose one input
 * channel's sum (x 255 x 255) stays exact in float32; the bound itself */
#define QCONV_MAX_TAPS 256
#define QCONV_EXACT 16777216.0   /* 2^24 */

/* The padded image's geometry (qconv_run_qgemm): its rows and columns, and
 * the bytes of one copy, with slack: a wide im2col row of the last tap reads
 * up to (KW - 1) * DW past its plane.  0 when the image is read in place: a
 * uint8 image without padding, unless wide rows would read past its end. */
static size_t qconv_pad_geom(const conv_priv *p, bool s8, int64_t *Hp, int64_t *Wp) {
  const nn_conv_geom *g = &p->g;
  bool pad = g->pb[1] || g->pb[2] || g->pe[1] || g->pe[2];
  *Hp = g->in[1] + g->pb[1] + g->pe[1];
  *Wp = g->in[2] + g->pb[2] + g->pe[2];
  const bool wide = g->s[1] == 1 && g->s[2] == 1;
  if (!pad && !s8 && (!wide || g->k[2] == 1))
    return 0;
  /* hostile pads (up to INT_MAX each) must not wrap the size */
  int64_t b;
  if (__builtin_mul_overflow(*Hp, *Wp, &b) || __builtin_mul_overflow(b, p->C, &b) ||
      __builtin_add_overflow(b, *Wp + (g->k[2] - 1) * g->d[2] + 64, &b) || b > INT64_MAX / 2)
    return SIZE_MAX;
  return nn_align_up((size_t)b, 64);
}

/* A direct integer convolution whose input is the only use of another
 * direct QLinearConv's output (no graph output, not folded): the tensor
 * between them is kept channels-last, the producer told so here (its
 * prepare ran first: nodes prepare in execution order), and neither
 * transposes it.  MobileNetV2's expand -> depthwise -> project chains and
 * ResNet's two 3x3s per block pass so.  The producer is found through the
 * node array: a value's producer is an index into it, and this node's own
 * index is its output's producer. */
static bool qconv_link(nn_node *n, const nn_qconv_in *q) {
  const nn_value *x = conv_qget(n, q->x);
  if (!x || x->producer < 0 || x->n_uses != 1 || x->is_graph_output || x->known ||
      x->kind == NN_VAL_CONST || !n->y[0] || n->y[0]->producer < 0)
    return false;
  nn_node *prod = n + (x->producer - n->y[0]->producer);
  if (prod->n_out < 1 || prod->y[0] != x || prod->removed || prod->folded || prod->fused ||
      !prod->priv || !prod->op || strcmp(prod->op->name, "QLinearConv") != 0 ||
      (prod->op->domain && prod->op->domain[0]))
    return false;
  conv_priv *pp = prod->priv;
  if (!pp->qdirect || pp->batch != n->x[q->x]->dims[0])
    return false;
  pp->qd_out_nhwc = true;
  return true;
}

/* The direct kernel's workspace head: M multipliers and M biases. */
static size_t qconv_direct_head(int64_t M) {
  return nn_align_up((size_t)M * (sizeof(float) + sizeof(int32_t)), 64);
}

/* The direct kernel's view of a (group-1 or depthwise) 2-D convolution. */
static void qconv_direct_shape(const conv_priv *p, nn_qdc_shape *s) {
  const nn_conv_geom *g = &p->g;
  *s = (nn_qdc_shape){.C = p->C, .M = p->M, .IH = g->in[1], .IW = g->in[2], .OH = g->out[1],
                      .OW = g->out[2], .KH = g->k[1], .KW = g->k[2], .SH = g->s[1], .SW = g->s[2],
                      .DH = g->d[1], .DW = g->d[2], .PT = g->pb[1], .PL = g->pb[2],
                      .group = p->group};
}

/* Whether the direct kernel takes the convolution: group 1 with channels a
 * multiple of 4 (3 would compute a fourth for nothing: the GEMM packs K =
 * 3 x taps rounded once) or depthwise (group = C = M), output channels
 * that fill its panels to 3/4 at least (MobileNetV2's 24-channel
 * projections ran 3x slower in 64-lane panels than on the GEMM), and every
 * weight zero point at 0 after the uint8 shift. */
static bool qconv_direct_ok(const nn_node *n, const nn_qconv_in *q, const conv_priv *p) {
  const bool depthwise = p->group > 1 && p->group == p->C && p->M == p->C;
  if (nn_knobs().no_direct || !(depthwise || (p->group == 1 && p->C % 4 == 0)))
    return false;
  nn_qdc_shape s;
  qconv_direct_shape(p, &s);
  if (!nn_qdc_worth(&s))
    return false;
  const nn_value *w = conv_qget(n, q->w), *wzp = conv_qget(n, q->w_zp);
  const int32_t shift = w->dtype == NN_DTYPE_UINT8 ? 128 : 0;
  for (int64_t m = 0; m < p->M; m++)
    if ((wzp ? conv_q8(wzp, wzp->numel == 1 ? 0 : m) : 0) != shift)
      return false;
  return true;
}

static int64_t *qconv_koff(const conv_priv *p) {
  return (int64_t *)((char *)p + CONV_PRIV_HEAD + (size_t)p->group * p->qa_bytes);
}

/* The integer GEMM's weights (qconv_run_qgemm): each group's M/group x K
 * matrix as int8 (uint8 weights shifted by -128 with their zero points, so
 * every w - w_zp stays), packed into priv once. */
static nn_status qconv_pack(nn_ctx *c, nn_node *n, const nn_qconv_in *q) {
  conv_priv *p = n->priv;
  const nn_value *w = conv_qget(n, q->w), *wzp = conv_qget(n, q->w_zp);
  const bool u8 = w->dtype == NN_DTYPE_UINT8;
  if (p->qdirect) {   /* the whole tensor, shifted when uint8 */
    int8_t *all = nn_malloc((size_t)w->numel + 1);
    if (!all)
      return nn_fail(c, NN_ERR_NOMEM, "out of memory");
    const unsigned char *src = w->data;
    for (int64_t i = 0; i < w->numel; i++)
      all[i] = (int8_t)(u8 ? src[i] ^ 0x80u : src[i]);
    nn_qdc_shape sh;
    qconv_direct_shape(p, &sh);
    sh.channels_last = p->qd_in_nhwc;
    nn_qdc_pack(&sh, all, (char *)p + CONV_PRIV_HEAD);
    nn_free(all);
    return NN_OK;
  }
  int8_t *a = nn_malloc((size_t)(p->Mg * p->K) + 1);
  int32_t *za = nn_malloc(sizeof(int32_t) * (size_t)p->Mg);
  nn_status st = NN_OK;
  if (!a || !za) {
    st = nn_fail(c, NN_ERR_NOMEM, "out of memory");
    goto out;
  }
  for (int64_t gi = 0; gi < p->group; gi++) {
    for (int64_t r = 0; r < p->Mg; r++) {
      const int64_t m = gi * p->Mg + r;
      const unsigned char *src = (const unsigned char *)w->data + m * p->K;
      for (int64_t k = 0; k < p->K; k++)
        a[r * p->K + k] = (int8_t)(u8 ? src[k] ^ 0x80u : src[k]);
      za[r] = (wzp ? conv_q8(wzp, wzp->numel == 1 ? 0 : m) : 0) - (u8 ? 128 : 0);
    }
    nn_qgemm_pack_a(p->Mg, p->K, a, p->K, za,
                    (char *)p + CONV_PRIV_HEAD + (size_t)gi * p->qa_bytes);
  }
  {
    int64_t Hp, Wp, *koff = qconv_koff(p);
    qconv_pad_geom(p, n->x[q->x]->dtype == NN_DTYPE_INT8, &Hp, &Wp);
    const nn_conv_geom *g = &p->g;
    for (int64_t k = 0; k < p->K; k++) {
      const int64_t tap = k % g->k_sz, kh = tap / g->k[2], kw = tap % g->k[2];
      koff[k] = k / g->k_sz * Hp * Wp + kh * g->d[1] * Wp + kw * g->d[2];
    }
  }
out:
  nn_free(a);
  nn_free(za);
  return st;
}

static nn_status qconv_prepare(nn_ctx *c, nn_node *n, const nn_qconv_in *q) {
  conv_priv p;
  nn_status st = conv_prepare_common(c, n, q->w, q->bias, &p);
  if (st)
    return st;
  if (p.epi.act != NN_SGEMM_ACT_NONE)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "a fused activation on an integer convolution");
  p.path = CONV_PATH_INT;
  const nn_value *wv0 = conv_qget(n, q->w), *wz0 = conv_qget(n, q->w_zp);
  const bool w_const = wv0->known && wv0->data && (!wz0 || (wz0->known && wz0->data));
  const bool depthwise = p.Cg == 1 && p.group == p.C;
  const bool direct = p.g.nsp == 2 && conv_geom_fits_int(&p.g) && w_const &&
                      qconv_direct_ok(n, q, &p);
  if (direct || (p.g.nsp == 2 && conv_geom_fits_int(&p.g) && w_const && !depthwise)) {
    p.qgemm = true;
    if (direct) {
      nn_qdc_shape sh;
      qconv_direct_shape(&p, &sh);
      p.qdirect = true;
      p.qd_in_nhwc = qconv_link(n, q);
      p.qa_bytes = nn_align_up(nn_qdc_pack_size(&sh), 64);
      p.gemm_ws = qconv_direct_head(p.M) + nn_qdc_workspace(&sh);
      if ((st = conv_finish_priv(c, n, &p)))
        return st;
      return qconv_pack(c, n, q);
    }
    p.qa_bytes = nn_align_up(nn_qgemm_pack_a_size(p.Mg, p.K), 64);
    p.qk_bytes = nn_align_up((size_t)p.K * sizeof(int64_t), 64);
    int64_t Hp, Wp;
    const size_t pad = qconv_pad_geom(&p, n->x[q->x]->dtype == NN_DTYPE_INT8, &Hp, &Wp);
    if (pad == SIZE_MAX)
      return nn_fail(c, NN_ERR_LIMIT, "the padded input (%lld x %lld per channel) is too large",
                     (long long)Hp, (long long)Wp);
    const int64_t cols = p.g.s[1] == 1 && p.g.s[2] == 1 ? p.g.out[1] * Wp : p.g.out_sz;
    p.gemm_ws = pad + nn_qgemm_workspace(p.Mg, p.K, cols, c->threads > 1 ? c->threads : 1);
    if ((st = conv_finish_priv(c, n, &p)))
      return st;
    return qconv_pack(c, n, q);
  }
  if (p.g.nsp == 2 && conv_geom_fits_int(&p.g) && p.g.k_sz <= QCONV_MAX_TAPS) {
    /* one image's float copies, sums in the workspace: qconv_run_float */
    p.qfloat = true;
    p.qx_floats = nn_align_up((size_t)(p.C * p.g.in_sz), 16);
    p.qw_floats = nn_align_up((size_t)(p.M * p.K), 16);
    p.qc_floats = nn_align_up((size_t)p.C, 16);
    p.qy_floats = nn_align_up((size_t)(p.M * p.g.out_sz), 16);
    const nn_value *wv = conv_qget(n, q->w), *wzv = conv_qget(n, q->w_zp);
    p.qw_const = wv->known && wv->data && (!wzv || wzv->known);
    p.col_floats = p.qx_floats + (p.qw_const ? 0 : p.qw_floats + p.qc_floats) + 2 * p.qy_floats;
    p.gemm_ws = conv_gemm_ws(c, p.Mg, p.g.out_sz, p.K);
    return conv_finish_priv(c, n, &p);
  }
  p.nt = conv_tile_cols(p.K, p.g.out_sz, CONV_TILE_FLOATS);
  p.nslots = 1;
  /* workspace (int32): shifted weights M x K, one col tile, one acc tile */
  p.wt_floats = nn_align_up((size_t)(p.M * p.K), 16);
  p.slot_floats = nn_align_up((size_t)(p.K * p.nt), 16) + nn_align_up((size_t)(p.Mg * p.nt), 16);
  return conv_finish_priv(c, n, &p);
}

static nn_status convint_prepare(nn_ctx *c, nn_node *n) { return qconv_prepare(c, n, &nn_qconv_integer); }

/* ---- integer convolutions through the float engine ------------------------------
 * QLinearConv and ConvInteger sum (x - x_zp) (w - w_zp) in int32: integers,
 * and float32 holds every integer below 2^24 exactly, so a float product
 * whose partial sums all stay below 2^24 in magnitude is exact in any order
 * of summation.  The input channels are cut into chunks whose bound (the
 * largest |x - x_zp| times, per input channel, the largest sum over output
 * channels of |w - w_zp| over its taps) stays below 2^24: one product per
 * chunk in the float engine (SIMD, threads, implicit im2col), the chunks'
 * exact sums added in int32 (wrapping, as the hardware's would); most
 * layers are one chunk.  Depthwise layers (a channel's taps: at most
 * QCONV_MAX_TAPS x 255 x 255 < 2^24) run the depthwise kernel.  Then the
 * scalar path's requantization, value for value.  The scalar int32 loop
 * took 35 ms for a 3x3 64 -> 64 uint8 conv at 56x56 (ONNX Runtime 1.6). */
/* A depthwise layer on the float path in runs of channels, each on one
 * worker: its planes converted, the depthwise kernel over them (serial
 * inside a worker), its outputs requantized (or stored) while they are in
 * cache.  The whole tensor in three serial passes took 0.31 ms for 144
 * channels at 56x56 on either thread count (Zen 4). */
#define QCONV_DW_CHANNELS 16

typedef struct qconv_dw_job {
  nn_ctx *c;
  const nn_node *n;
  const nn_qconv_in *q;
  const conv_priv *p;
  const uint8_t *x;        /* this image */
  bool s8;
  int32_t xzp;
  float *xf, *yf;
  const float *wf;
  int64_t obase;           /* this image's first output element */
  _Atomic int st;
} qconv_dw_job;

static void qconv_dw_range(void *arg, int64_t u0, int64_t u1) {
  qconv_dw_job *j = arg;
  const conv_priv *p = j->p;
  const nn_conv_geom *g = &p->g;
  const int64_t c0 = u0 * QCONV_DW_CHANNELS, c1 = u1 * QCONV_DW_CHANNELS < p->C ? u1 * QCONV_DW_CHANNELS : p->C;
  const int64_t in_sz = g->in_sz, N = g->out_sz;
  {   /* locals, so that the compiler vectorizes the conversion */
    float *restrict xf = j->xf;
    const uint8_t *restrict x8 = j->x;
    const float zp = (float)j->xzp;
    if (j->s8)
      for (int64_t i = c0 * in_sz; i < c1 * in_sz; i++)
        xf[i] = (float)(int8_t)x8[i] - zp;
    else
      for (int64_t i = c0 * in_sz; i < c1 * in_sz; i++)
        xf[i] = (float)x8[i] - zp;
  }
  nn_dwconv_shape s = {
    .batch = 1, .C = c1 - c0, .mult = p->Mg,
    .IH = g->in[1], .IW = g->in[2], .OH = g->out[1], .OW = g->out[2],
    .KH = (int)g->k[1], .KW = (int)g->k[2], .SH = (int)g->s[1], .SW = (int)g->s[2],
    .PT = (int)g->pb[1], .PL = (int)g->pb[2], .DH = (int)g->d[1], .DW = (int)g->d[2],
  };
  nn_status st = nn_dwconv2d(j->c, &s, j->xf + c0 * in_sz, j->wf + c0 * p->Mg * g->k_sz,
                             j->yf + c0 * p->Mg * N, NULL);
  if (st) {
    atomic_store(&j->st, (int)st);
    return;
  }
  nn_value *y = j->n->y[0];
  for (int64_t m = c0 * p->Mg; m < c1 * p->Mg; m++) {
    const float *ym = j->yf + m * N;
    if (!conv_qget(j->n, j->q->x_scale)) {   /* ConvInteger */
      int32_t *yo = (int32_t *)y->data + j->obase + m * N;
      for (int64_t t = 0; t < N; t++)
        yo[t] = (int32_t)ym[t];
      continue;
    }
    float mult;
    int32_t bias, zp;
    qconv_requant_of(j->n, j->q, m, &mult, &bias, &zp);
    qconv_store8(y->dtype == NN_DTYPE_UINT8, (unsigned char *)y->data + j->obase + m * N, ym, NULL, N,
                 mult, bias, zp);
  }
}

static nn_status qconv_run_float(nn_ctx *c, nn_node *n, const nn_qconv_in *q) {
  const conv_priv *p = n->priv;
  const nn_conv_geom *g = &p->g;
  const nn_value *x = conv_qget(n, q->x), *w = conv_qget(n, q->w);
  const nn_value *xzpv = conv_qget(n, q->x_zp), *wzpv = conv_qget(n, q->w_zp);
  const nn_value *xsv = conv_qget(n, q->x_scale);
  nn_value *y = n->y[0];
  const int64_t K = p->K, N = g->out_sz, in_sz = g->in_sz, ksz = g->k_sz;
  float *xf = n->ws, *wf = xf + p->qx_floats, *cmax, *yf;
  if (p->qw_const)   /* priv is the node's own: written once, before any use */
    wf = (float *)((char *)p + CONV_PRIV_HEAD);
  cmax = wf + p->qw_floats;
  yf = p->qw_const ? xf + p->qx_floats : cmax + p->qc_floats;
  uint32_t *acc = (uint32_t *)(yf + p->qy_floats);
  void *gws = (float *)acc + p->qy_floats;
  const int32_t xzp = xzpv ? conv_q8(xzpv, 0) : 0;
  const int32_t xlo = x->dtype == NN_DTYPE_UINT8 ? 0 : -128, xhi = x->dtype == NN_DTYPE_UINT8 ? 255 : 127;
  const double xb = (double)(xzp - xlo > xhi - xzp ? xzp - xlo : xhi - xzp);
  /* the weights minus their zero points, and each input channel's bound */
  for (int64_t ci = 0; ci < p->C && !p->qw_ready; ci++)
    cmax[ci] = 0.0f;
  for (int64_t m = 0; m < p->M && !p->qw_ready; m++) {
    int32_t wzp = wzpv ? conv_q8(wzpv, wzpv->numel == 1 ? 0 : m) : 0;
    int64_t cbase = m / p->Mg * p->Cg;
    for (int64_t cl = 0; cl < p->Cg; cl++) {
      float s = 0.0f;
      const int64_t o = m * K + cl * ksz;
      for (int64_t t = 0; t < ksz; t++) {
        int32_t v = (w->dtype == NN_DTYPE_UINT8 ? (int32_t)((const uint8_t *)w->data)[o + t]
                                                : (int32_t)((const int8_t *)w->data)[o + t]) - wzp;
        wf[o + t] = (float)v;
        s += (float)(v < 0 ? -v : v);
      }
      if (s > cmax[cbase + cl])
        cmax[cbase + cl] = s;
    }
  }
  if (p->qw_const)
    ((conv_priv *)p)->qw_ready = true;
  const bool dw = p->Cg == 1 && p->group == p->C;
  for (int64_t bi = 0; bi < p->batch; bi++) {
    const int64_t xn = p->C * in_sz;
    if (dw) {
      qconv_dw_job j = {.c = c, .n = n, .q = q, .p = p, .x = (const uint8_t *)x->data + bi * xn,
                        .s8 = x->dtype == NN_DTYPE_INT8, .xzp = xzp, .xf = xf, .yf = yf, .wf = wf,
                        .obase = bi * p->M * N};
      atomic_init(&j.st, 0);
      const int64_t units = (p->C + QCONV_DW_CHANNELS - 1) / QCONV_DW_CHANNELS;
      nn_parallel_for(c, units, conv_grain(QCONV_DW_CHANNELS * p->Mg * N * ksz, 1 << 16),
                      qconv_dw_range, &j);
      if (atomic_load(&j.st))
        return nn_fail(c, (nn_status)atomic_load(&j.st), "depthwise kernel refused the shape");
      continue;
    }
    if (x->dtype == NN_DTYPE_UINT8) {
      const uint8_t *xs = (const uint8_t *)x->data + bi * xn;
      for (int64_t i = 0; i < xn; i++)
        xf[i] = (float)((int32_t)xs[i] - xzp);
    } else {
      const int8_t *xs = (const int8_t *)x->data + bi * xn;
      for (int64_t i = 0; i < xn; i++)
        xf[i] = (float)((int32_t)xs[i] - xzp);
    }
    bool chunked = false;   /* the sums are in acc, not yf */
    if (dw) {
      nn_dwconv_shape s = {
        .batch = 1, .C = p->C, .mult = p->Mg,
        .IH = g->in[1], .IW = g->in[2], .OH = g->out[1], .OW = g->out[2],
        .KH = (int)g->k[1], .KW = (int)g->k[2], .SH = (int)g->s[1], .SW = (int)g->s[2],
        .PT = (int)g->pb[1], .PL = (int)g->pb[2], .DH = (int)g->d[1], .DW = (int)g->d[2],
      };
      nn_status st = nn_dwconv2d(c, &s, xf, wf, yf, NULL);
      if (st)
        return nn_fail(c, st, "depthwise kernel refused the shape");
    } else {
      for (int64_t gi = 0; gi < p->group; gi++) {
        float *yg = yf + gi * p->Mg * N;
        for (int64_t c0 = 0; c0 < p->Cg;) {
          /* the chunk: channels while the bound stays exact (one always fits) */
          double bound = 0;
          int64_t c1 = c0;
          while (c1 < p->Cg && (c1 == c0 || bound + xb * cmax[gi * p->Cg + c1] < QCONV_EXACT))
            bound += xb * cmax[gi * p->Cg + c1++];
          const float *a = wf + gi * p->Mg * K + c0 * ksz;
          const float *xg = xf + (gi * p->Cg + c0) * in_sz;
          nn_sgemm_im2col im = {
            .x = xg, .C = c1 - c0, .IH = g->in[1], .IW = g->in[2], .OH = g->out[1], .OW = g->out[2],
            .KH = (int)g->k[1], .KW = (int)g->k[2], .SH = (int)g->s[1], .SW = (int)g->s[2],
            .PT = (int)g->pb[1], .PL = (int)g->pb[2], .DH = (int)g->d[1], .DW = (int)g->d[2],
          };
          nn_status st = nn_sgemm_compute_fn(c, 0, p->Mg, N, (c1 - c0) * ksz, 1.0f, a, K,
                                             nn_sgemm_pack_im2col, &im, 0.0f, yg, N, NULL, gws,
                                             p->gemm_ws);
          if (st)
            return conv_gemm_failed(c, st);
          if (c0 > 0 || c1 < p->Cg) {
            uint32_t *ag = acc + gi * p->Mg * N;
            for (int64_t i = 0; i < p->Mg * N; i++)
              ag[i] = (c0 == 0 ? 0u : ag[i]) + (uint32_t)(int32_t)yg[i];
            chunked = true;
          }
          c0 = c1;
        }
      }
    }
    /* requantize (QLinearConv) or store the int32 sums (ConvInteger) */
    for (int64_t m = 0; m < p->M; m++) {
      const int64_t obase = (bi * p->M + m) * N;
      const float *ym = yf + m * N;
      const int32_t *am = (const int32_t *)acc + m * N;
      if (!xsv) {
        int32_t *yo = (int32_t *)y->data + obase;
        for (int64_t t = 0; t < N; t++)
          yo[t] = chunked ? am[t] : (int32_t)ym[t];
        continue;
      }
      float mult;
      int32_t bias, zp;
      qconv_requant_of(n, q, m, &mult, &bias, &zp);
      qconv_store8(y->dtype == NN_DTYPE_UINT8, (unsigned char *)y->data + obase, chunked ? NULL : ym, am, N,
                   mult, bias, zp);
    }
  }
  return NN_OK;
}
static nn_status qlinearconv_prepare(nn_ctx *c, nn_node *n) { return qconv_prepare(c, n, &nn_qconv_linear); }

/* ---- integer convolutions on the integer GEMM -----------------------------------
 * Per image and group, C = W (Mg x K, packed at prepare) times the implicit
 * im2col matrix of uint8 (cpu/qgemm.h: exact int32 sums), requantized
 * (QLinearConv) or stored (ConvInteger) while each panel's rows are in
 * cache.  Depthwise layers stay on the float path's depthwise kernel.
 *
 * The image is first copied with its padding (the zero point, whose
 * differences are 0) and, for an int8 input, shifted by +128 (its zero point
 * with it) unless it is a uint8 image without padding, read in place.  Then
 * at stride 1 the columns are "wide": output rows as long as the padded
 * input's (Wp), the last Wp - OW of each computed and dropped, so every
 * im2col row is one contiguous run of the padded image, handed to the GEMM
 * in place (no gather, no copy): 2/56 more columns for a 3x3 on 56x56
 * against a gather that took a third of the time.  Strided convolutions
 * gather their rows from the padded image. */
typedef struct qconv_gemm_job {
  const nn_node *n;
  const nn_qconv_in *q;
  const conv_priv *p;
  const uint8_t *x;       /* the group's first (padded) input plane of this image */
  int64_t Hp, Wp, plane;  /* the padded image's rows, columns, plane size */
  const int64_t *koff;    /* each k's offset (qconv_koff) */
  bool wide;              /* stride 1: columns are oh * Wp + ow, ow < OW stored */
  int64_t ybase;          /* element offset of the group's first output row */
  int64_t mbase;          /* the group's first output channel */
  bool requant;
  /* the direct kernel: each channel's bias (its zero point's term folded
   * in: nn_qdc_offsets), the output zero point (QLinearConv hands both, with
   * the multipliers, to the kernel as an nn_qdc_requant) */
  const int32_t *dbias;
  int32_t dzp;
} qconv_gemm_job;

static const uint8_t *qconv_gemm_row(void *user, int64_t k, int64_t j0, int64_t nb,
                                     uint8_t *dst) {
  const qconv_gemm_job *jb = user;
  const nn_conv_geom *g = &jb->p->g;
  const int64_t OW = g->out[2], Wp = jb->Wp;
  const uint8_t *plane = jb->x + jb->koff[k];
  if (jb->wide)
    return plane + j0;
  const int64_t SH = g->s[1], SW = g->s[2];
  uint8_t *o = dst;
  for (int64_t j = j0, end = j0 + nb; j < end;) {
    const int64_t oh = j / OW, ow = j % OW;
    const int64_t seg = end - j < OW - ow ? end - j : OW - ow;
    const uint8_t *src = plane + oh * SH * Wp + ow * SW;
    for (int64_t t = 0; t < seg; t++)
      o[t] = src[t * SW];
    o += seg;
    j += seg;
  }
  return dst;
}

static void qconv_gemm_store(void *user, int64_t m0, int64_t mr, int64_t j0, int64_t nb,
                             const int32_t *cc, int64_t ldc) {
  const qconv_gemm_job *jb = user;
  const int64_t N = jb->p->g.out_sz, OW = jb->p->g.out[2];
  const int64_t W = jb->wide ? jb->Wp : OW;   /* the columns' row length */
  nn_value *y = jb->n->y[0];
  const bool u8 = y->dtype == NN_DTYPE_UINT8;
  /* requantized a whole row at a time, in vectors: a wide 7x7 map's runs of
   * 7 would all take the scalar tail */
  unsigned char q8[NN_QGEMM_COLS_MAX];
  for (int64_t r = 0; r < mr; r++) {
    const int32_t *src = cc + r * ldc;
    if (jb->requant) {
      float mult;
      int32_t bias, zp;
      qconv_requant_of(jb->n, jb->q, jb->mbase + m0 + r, &mult, &bias, &zp);
      qconv_store8(u8, q8, NULL, src, nb, mult, bias, zp);
    }
    /* runs of stored columns: whole rows unless wide */
    for (int64_t j = j0, end = j0 + nb; j < end;) {
      const int64_t oh = j / W, ow = j % W;
      const int64_t seg = end - j < W - ow ? end - j : W - ow;
      const int64_t keep = ow >= OW ? 0 : seg < OW - ow ? seg : OW - ow;
      if (keep > 0) {
        const int64_t off = jb->ybase + (m0 + r) * N + oh * OW + ow;
        if (jb->requant)
          memcpy((unsigned char *)y->data + off, q8 + (j - j0), (size_t)keep);
        else
          memcpy((int32_t *)y->data + off, src + (j - j0), (size_t)keep * sizeof(int32_t));
      }
      j += seg;
    }
  }
}

/* ConvInteger's sums from the direct kernel (cpu/qconv_direct.h:
 * pixel-major) into y, channel-major, with the zero point's term. */
static void qconv_direct_store(void *user, int64_t m0, int64_t mr, int64_t p0, int64_t np,
                               const int32_t *cc, int64_t ldc) {
  const qconv_gemm_job *jb = user;
  const int64_t N = jb->p->g.out_sz;
  const int32_t *bias = jb->dbias + m0;
  int32_t *yo = (int32_t *)jb->n->y[0]->data + jb->ybase + m0 * N + p0;
  for (int64_t t = 0; t < np; t++)
    for (int64_t r = 0; r < mr; r++)
      yo[r * N + t] = (int32_t)((uint32_t)cc[t * ldc + r] + (uint32_t)bias[r]);
}

/* QLinearConv's bytes from the direct kernel (requantized there), turned
 * channel-major in 16 x 16 blocks (a channels-last y, for the next
 * convolution, the kernel writes itself). */
static void qconv_direct_store8(void *user, int64_t m0, int64_t mr, int64_t p0, int64_t np,
                                const uint8_t *c8, int64_t ldc) {
  const qconv_gemm_job *jb = user;
  const int64_t N = jb->p->g.out_sz;
  nn_vmath_transpose_u8((uint8_t *)jb->n->y[0]->data + jb->ybase + m0 * N + p0, N, c8, ldc, np, mr, 0);
}

static nn_status qconv_run_qgemm(nn_ctx *c, nn_node *n, const nn_qconv_in *q) {
  const conv_priv *p = n->priv;
  const nn_conv_geom *g = &p->g;
  const nn_value *x = conv_qget(n, q->x), *xzpv = conv_qget(n, q->x_zp);
  const bool s8 = x->dtype == NN_DTYPE_INT8;
  const int32_t zb = (xzpv ? conv_q8(xzpv, 0) : 0) + (s8 ? 128 : 0);
  const uint8_t fl = s8 ? 0x80 : 0;
  qconv_gemm_job jb = {.n = n, .q = q, .p = p, .requant = conv_qget(n, q->x_scale) != NULL,
                       .koff = qconv_koff(p)};
  const size_t pad_bytes = qconv_pad_geom(p, s8, &jb.Hp, &jb.Wp);
  jb.plane = jb.Hp * jb.Wp;
  jb.wide = g->s[1] == 1 && g->s[2] == 1;
  const int64_t cols = jb.wide ? g->out[1] * jb.Wp : g->out_sz;
  if (p->qdirect) {
    /* the workspace: each channel's multiplier and bias, then the kernel's */
    const void *pk = (const char *)p + CONV_PRIV_HEAD;
    const size_t head = qconv_direct_head(p->M);
    float *mult = n->ws;
    int32_t *bias = (int32_t *)(mult + p->M);
    nn_qdc_offsets(pk, zb, bias);
    if (jb.requant)
      qconv_requant_all(n, q, p->M, mult, bias, &jb.dzp);
    jb.dbias = bias;
    nn_qdc_requant rq = {bias, mult, jb.dzp, n->y[0]->dtype == NN_DTYPE_UINT8, NULL, p->M};
    for (int64_t bi = 0; bi < p->batch; bi++) {
      jb.ybase = bi * p->M * g->out_sz;
      if (p->qd_out_nhwc)
        rq.dst = (uint8_t *)n->y[0]->data + jb.ybase;
      const uint8_t *xi = (const uint8_t *)x->data + bi * p->C * g->in_sz;
      void *kws = (char *)n->ws + head;
      nn_status st = jb.requant ? nn_qdc_compute_8(c, pk, xi, fl, zb, &rq, qconv_direct_store8, &jb,
                                                   kws, n->ws_bytes - head)
                                : nn_qdc_compute(c, pk, xi, fl, zb, qconv_direct_store, &jb, kws,
                                                 n->ws_bytes - head);
      if (st)
        return nn_fail(c, st, "the direct integer convolution refused its operands");
    }
    return NN_OK;
  }
  uint8_t *xp = n->ws;
  void *gws = (char *)n->ws + pad_bytes;
  const size_t gws_bytes = n->ws_bytes - pad_bytes;
  if (pad_bytes)
    memset(xp, zb, pad_bytes);   /* the border once; the interior is rewritten per image */
  for (int64_t bi = 0; bi < p->batch; bi++) {
    const uint8_t *xi = (const uint8_t *)x->data + bi * p->C * g->in_sz;
    if (pad_bytes) {
      for (int64_t ci = 0; ci < p->C; ci++)
        for (int64_t h = 0; h < g->in[1]; h++) {
          const uint8_t *src = xi + (ci * g->in[1] + h) * g->in[2];
          uint8_t *dst = xp + ci * jb.plane + (h + g->pb[1]) * jb.Wp + g->pb[2];
          if (!fl) {
            memcpy(dst, src, (size_t)g->in[2]);
            continue;
          }
          int64_t t = 0;
          for (; t + 8 <= g->in[2]; t += 8) {   /* eight at a time: GCC leaves the byte loop scalar */
            uint64_t v;
            memcpy(&v, src + t, 8);
            v ^= 0x8080808080808080ull;
            memcpy(dst + t, &v, 8);
          }
          for (; t < g->in[2]; t++)
            dst[t] = src[t] ^ fl;
        }
      xi = xp;
    }
    for (int64_t gi = 0; gi < p->group; gi++) {
      jb.x = xi + gi * p->Cg * jb.plane;
      jb.mbase = gi * p->Mg;
      jb.ybase = (bi * p->M + jb.mbase) * g->out_sz;
      nn_status st = nn_qgemm_compute(c, (const char *)p + CONV_PRIV_HEAD + (size_t)gi * p->qa_bytes,
                                      cols, zb, qconv_gemm_row, qconv_gemm_store, &jb, gws,
                                      gws_bytes);
      if (st)
        return nn_fail(c, st, "integer GEMM refused its operands");
    }
  }
  return NN_OK;
}

static nn_status qconv_run_with(nn_ctx *c, nn_node *n, const nn_qconv_in *q) {
  const conv_priv *p = n->priv;
  if (p->qgemm)
    return qconv_run_qgemm(c, n, q);
  if (p->qfloat)
    return qconv_run_float(c, n, q);
  const nn_conv_geom *g = &p->g;
  const nn_value *x = conv_qget(n, q->x), *w = conv_qget(n, q->w);
  const nn_value *xzpv = conv_qget(n, q->x_zp), *wzpv = conv_qget(n, q->w_zp);
  const nn_value *xsv = conv_qget(n, q->x_scale);
  nn_value *y = n->y[0];
  int32_t *wq = n->ws;
  int32_t *col = wq + p->wt_floats;
  int32_t *acc = col + nn_align_up((size_t)(p->K * p->nt), 16);
  int32_t xzp = xzpv ? conv_q8(xzpv, 0) : 0;
  for (int64_t m = 0; m < p->M; m++) {
    int32_t wzp = wzpv ? conv_q8(wzpv, wzpv->numel == 1 ? 0 : m) : 0;
    for (int64_t k = 0; k < p->K; k++)
      wq[m * p->K + k] = conv_q8(w, m * p->K + k) - wzp;
  }
  const int64_t OH = g->out[1], OW = g->out[2], ID = g->in[0], IH = g->in[1], IW = g->in[2];
  for (int64_t bi = 0; bi < p->batch; bi++)
    for (int64_t gi = 0; gi < p->group; gi++)
      for (int64_t j0 = 0; j0 < g->out_sz; j0 += p->nt) {
        int64_t nn = g->out_sz - j0 < p->nt ? g->out_sz - j0 : p->nt;
        for (int64_t r = 0; r < p->K; r++) {
          int64_t ci = gi * p->Cg + r / g->k_sz, kk = r % g->k_sz;
          int64_t kw = kk % g->k[2], kh = (kk / g->k[2]) % g->k[1], kd = kk / (g->k[2] * g->k[1]);
          int64_t xbase = (bi * p->C + ci) * g->in_sz;
          for (int64_t t = 0; t < nn; t++) {
            int64_t j = j0 + t, ow = j % OW, oh = (j / OW) % OH, od = j / (OW * OH);
            int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
            int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
            int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
            bool in = id >= 0 && id < ID && ih >= 0 && ih < IH && iw >= 0 && iw < IW;
            col[r * nn + t] = in ? conv_q8(x, xbase + (id * IH + ih) * IW + iw) - xzp : 0;
          }
        }
        for (int64_t m = 0; m < p->Mg; m++) {
          int32_t *a = acc + m * nn;
          const int32_t *wr = wq + (gi * p->Mg + m) * p->K;
          for (int64_t t = 0; t < nn; t++)
            a[t] = 0;
          /* unsigned: a hostile K wraps around (as int32 hardware does)
           * instead of being undefined behaviour */
          uint32_t *au = (uint32_t *)a;
          for (int64_t k = 0; k < p->K; k++) {
            uint32_t wv = (uint32_t)wr[k];
            const int32_t *cr = col + k * nn;
            for (int64_t t = 0; t < nn; t++)
              au[t] += wv * (uint32_t)cr[t];
          }
          int64_t mo = gi * p->Mg + m;
          int64_t obase = (bi * p->M + mo) * g->out_sz + j0;
          if (!xsv) {
            memcpy((int32_t *)y->data + obase, a, (size_t)nn * sizeof(int32_t));
            continue;
          }
          float mult;
          int32_t bias, zp;
          qconv_requant_of(n, q, mo, &mult, &bias, &zp);
          qconv_store8(y->dtype == NN_DTYPE_UINT8, (unsigned char *)y->data + obase, NULL, a, nn, mult,
                     bias, zp);
        }
      }
  return NN_OK;
}

static nn_status convint_run(nn_ctx *c, nn_node *n) { return qconv_run_with(c, n, &nn_qconv_integer); }
static nn_status qlinearconv_run(nn_ctx *c, nn_node *n) { return qconv_run_with(c, n, &nn_qconv_linear); }

/* The planner may hand a Conv its weights as packed GEMM A panels, one
 * block per group (nn_value.packed_a_groups), on the float32 paths whose
 * products read them as they are; Winograd keeps its transformed copy and
 * depthwise its own kernel. */
static int64_t conv_const_a_groups(const nn_node *n) {
  const conv_priv *p = n->priv;
  if (!p || p->dt != NN_DTYPE_FLOAT)
    return 0;
  switch (p->path) {
  case CONV_PATH_1X1:
  case CONV_PATH_IMPLICIT:
  case CONV_PATH_PACKED:
  case CONV_PATH_EXPLICIT:
  case CONV_PATH_DWPW:
    return p->group;
  default:
    return 0;
  }
}

const nn_kernel nn_kernels_conv[] = {
  {.name = "Conv", .prepare = conv_prepare, .run = conv_run, .const_a_groups = conv_const_a_groups},
  {.name = "ConvTranspose", .prepare = convt_prepare, .run = conv_run},
  {.name = "DeformConv", .prepare = deform_prepare, .run = conv_run},
  {.name = "ConvInteger", .prepare = convint_prepare, .run = convint_run},
  {.name = "QLinearConv", .prepare = qlinearconv_prepare, .run = qlinearconv_run},
  {0},
};
