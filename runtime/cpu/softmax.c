/* softmax.c - Softmax, LogSoftmax, Hardmax.
 *
 * Both opset forms are the same [outer, n, inner] walk, the op layer's
 * (ops/softmax.h, shared with Vulkan).
 *
 * The maximum is subtracted before exp for range safety; a row whose maximum
 * is infinite is handled by the IEEE rules (NaN, as the reference gives).
 * float and double keep exp(x - max) in the output and rescale it; the half
 * types recompute exp on the last pass instead, so only the final value is
 * rounded to 16 bits. */
#include <math.h>
#include <string.h>

#include "cpu/ops.h"
#include "cpu/vmath.h"
#include "ops/softmax.h"

typedef enum sm_kind { SM_SOFTMAX, SM_LOGSOFTMAX, SM_HARDMAX } sm_kind;

typedef struct sm_params {
  sm_kind kind;
  nn_softmax_geom g;      /* [outer, n, inner] */
} sm_params;

/* The op layer checked X (a float type) and the axis and set Y
 * (ops/softmax.c). */
static nn_status sm_prepare(nn_ctx *c, nn_node *n) {
  sm_params *p = nn_calloc(1, sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  p->kind = strcmp(n->op_type, "Softmax") == 0      ? SM_SOFTMAX
            : strcmp(n->op_type, "LogSoftmax") == 0 ? SM_LOGSOFTMAX
                                                    : SM_HARDMAX;
  nn_status st = nn_softmax_geom_init(c, n, &p->g);
  if (st != NN_OK)
    return st;
  /* per-column max and sum when the axis is not innermost */
  if (p->g.inner > 1 && p->kind != SM_HARDMAX &&
      nn_mul_overflow_size((size_t)p->g.inner, 2 * sizeof(double), &n->ws_bytes))
    return nn_fail(c, NN_ERR_LIMIT, "workspace size overflows");
  return NN_OK;
}

/* One [n, inner] block.  mx/sum are inner-sized scratch (unused when inner
 * is 1).  STORE_EXP: the output type holds exp(x - max) without loss. */
#define SM_IMPL(NAME, T, A, LOAD, STORE, EXP, LOG, STORE_EXP)                           \
  static void NAME(sm_kind kind, const T *x, T *y, int64_t n, int64_t inner, A *mx,     \
                   A *sum) {                                                            \
    if (inner == 1) {                                                                   \
      A m = -INFINITY;                                                                  \
      for (int64_t j = 0; j < n; j++) {                                                 \
        A v = (A)LOAD(x[j]);                                                            \
        if (v > m || v != v)                                                            \
          m = v;                                                                        \
      }                                                                                 \
      double s = 0.0;                                                                   \
      if (kind == SM_SOFTMAX && STORE_EXP) {                                            \
        for (int64_t j = 0; j < n; j++) {                                               \
          A e = EXP((A)LOAD(x[j]) - m);                                                 \
          y[j] = STORE(e);                                                              \
          s += (double)e;                                                               \
        }                                                                               \
        A r = (A)(1.0 / s);                                                             \
        for (int64_t j = 0; j < n; j++)                                                 \
          y[j] = STORE((A)LOAD(y[j]) * r);                                              \
        return;                                                                         \
      }                                                                                 \
      for (int64_t j = 0; j < n; j++)                                                   \
        s += (double)EXP((A)LOAD(x[j]) - m);                                            \
      if (kind == SM_SOFTMAX) {                                                         \
        A r = (A)(1.0 / s);                                                             \
        for (int64_t j = 0; j < n; j++)                                                 \
          y[j] = STORE(EXP((A)LOAD(x[j]) - m) * r);                                     \
      } else {                                                                          \
        A ls = (A)log(s);                                                               \
        for (int64_t j = 0; j < n; j++)                                                 \
          y[j] = STORE((A)LOAD(x[j]) - m - ls);                                         \
      }                                                                                 \
      return;                                                                           \
    }                                                                                   \
    for (int64_t i = 0; i < inner; i++) {                                               \
      mx[i] = -INFINITY;                                                                \
      sum[i] = 0;                                                                       \
    }                                                                                   \
    for (int64_t j = 0; j < n; j++) {                                                   \
      const T *xr = x + j * inner;                                                      \
      for (int64_t i = 0; i < inner; i++) {                                             \
        A v = (A)LOAD(xr[i]);                                                           \
        if (v > mx[i] || v != v)                                                        \
          mx[i] = v;                                                                    \
      }                                                                                 \
    }                                                                                   \
    for (int64_t j = 0; j < n; j++) {                                                   \
      const T *xr = x + j * inner;                                                      \
      T *yr = y + j * inner;                                                            \
      for (int64_t i = 0; i < inner; i++) {                                             \
        A e = EXP((A)LOAD(xr[i]) - mx[i]);                                              \
        if (kind == SM_SOFTMAX && STORE_EXP)                                            \
          yr[i] = STORE(e);                                                             \
        sum[i] += e;                                                                    \
      }                                                                                 \
    }                                                                                   \
    for (int64_t i = 0; i < inner; i++)                                                 \
      sum[i] = kind == SM_SOFTMAX ? (A)1 / sum[i] : (A)LOG(sum[i]);                     \
    for (int64_t j = 0; j < n; j++) {                                                   \
      const T *xr = x + j * inner;                                                      \
      T *yr = y + j * inner;                                                            \
      for (int64_t i = 0; i < inner; i++) {                                             \
        if (kind == SM_LOGSOFTMAX)                                                      \
          yr[i] = STORE((A)LOAD(xr[i]) - mx[i] - sum[i]);                               \
        else if (STORE_EXP)                                                             \
          yr[i] = STORE((A)LOAD(yr[i]) * sum[i]);                                       \
        else                                                                            \
          yr[i] = STORE(EXP((A)LOAD(xr[i]) - mx[i]) * sum[i]);                          \
      }                                                                                 \
    }                                                                                   \
  }

#define SM_PLAIN(v) (v)
#define SM_F16_LOAD(v) nn_f16_to_f32(v)
#define SM_F16_STORE(v) nn_f32_to_f16((float)(v))
#define SM_BF16_LOAD(v) nn_bf16_to_f32(v)
#define SM_BF16_STORE(v) nn_f32_to_bf16((float)(v))
/* the half types keep double scratch so the block helpers share one ws size */
SM_IMPL(sm_f32, float, float, SM_PLAIN, SM_PLAIN, expf, logf, 1)
SM_IMPL(sm_f64, double, double, SM_PLAIN, SM_PLAIN, exp, log, 1)
SM_IMPL(sm_f16, uint16_t, double, SM_F16_LOAD, SM_F16_STORE, exp, log, 0)
SM_IMPL(sm_bf16, uint16_t, double, SM_BF16_LOAD, SM_BF16_STORE, exp, log, 0)

/* Hardmax: 1 at the first maximum along the axis (first NaN if any), 0 elsewhere. */
static void sm_hardmax(const nn_value *x, nn_value *y, const sm_params *p) {
  size_t es = nn_dtype_size(x->dtype);
  memset(y->data, 0, y->nbytes);
  for (int64_t o = 0; o < p->g.outer; o++) {
    for (int64_t i = 0; i < p->g.inner; i++) {
      int64_t base = o * p->g.n * p->g.inner + i;
      int64_t best = 0;
      double bv = nn_value_get_double(x, base);
      for (int64_t j = 1; j < p->g.n && !isnan(bv); j++) {
        double v = nn_value_get_double(x, base + j * p->g.inner);
        if (v > bv || isnan(v)) {
          bv = v;
          best = j;
        }
      }
      char *dst = (char *)y->data + (size_t)(base + best * p->g.inner) * es;
      switch (x->dtype) {
      case NN_DTYPE_FLOAT: *(float *)dst = 1.0f; break;
      case NN_DTYPE_DOUBLE: *(double *)dst = 1.0; break;
      case NN_DTYPE_FLOAT16: *(uint16_t *)dst = 0x3c00; break;
      case NN_DTYPE_BFLOAT16: *(uint16_t *)dst = 0x3f80; break;
      default: break;
      }
    }
  }
}

typedef struct sm_job {
  const sm_params *p;
  nn_dtype dt;
  const void *x;
  void *y;
} sm_job;

/* Rows with inner == 1 need no scratch, so they can run in parallel. */
static void sm_rows(void *arg, int64_t begin, int64_t end) {
  const sm_job *j = arg;
  const sm_params *p = j->p;
  for (int64_t o = begin; o < end; o++) {
    int64_t off = o * p->g.n;
    switch (j->dt) {
    case NN_DTYPE_FLOAT:
      /* rows on the vector exp (vmath.h): attention rows of 197 spent 14%
       * of a ViT's time in expf */
      if (p->kind != SM_SOFTMAX ||
          !nn_vmath_softmax_row_f32((const float *)j->x + off, (float *)j->y + off, p->g.n))
        sm_f32(p->kind, (const float *)j->x + off, (float *)j->y + off, p->g.n, 1, NULL, NULL);
      break;
    case NN_DTYPE_DOUBLE:
      sm_f64(p->kind, (const double *)j->x + off, (double *)j->y + off, p->g.n, 1, NULL, NULL);
      break;
    case NN_DTYPE_FLOAT16:
      sm_f16(p->kind, (const uint16_t *)j->x + off, (uint16_t *)j->y + off, p->g.n, 1, NULL,
             NULL);
      break;
    case NN_DTYPE_BFLOAT16:
      sm_bf16(p->kind, (const uint16_t *)j->x + off, (uint16_t *)j->y + off, p->g.n, 1, NULL,
              NULL);
      break;
    default:
      break;
    }
  }
}

static nn_status sm_run(nn_ctx *c, nn_node *n) {
  const sm_params *p = n->priv;
  const nn_value *x = n->x[0];
  nn_value *y = n->y[0];
  if (x->numel == 0)
    return NN_OK;
  if (p->kind == SM_HARDMAX) {
    sm_hardmax(x, y, p);
    return NN_OK;
  }
  if (p->g.inner == 1) {
    sm_job j = {p, x->dtype, x->data, y->data};
    /* enough rows per chunk to amortize dispatch */
    int64_t grain = p->g.n >= 4096 ? 1 : 4096 / p->g.n;
    nn_parallel_for(c, p->g.outer, grain, sm_rows, &j);
    return NN_OK;
  }
  int64_t blk = p->g.n * p->g.inner;
  for (int64_t o = 0; o < p->g.outer; o++) {
    int64_t off = o * blk;
    switch (x->dtype) {
    case NN_DTYPE_FLOAT: {
      /* float scratch inside the double-sized workspace */
      float *mx = n->ws, *sum = mx + p->g.inner;
      sm_f32(p->kind, (const float *)x->data + off, (float *)y->data + off, p->g.n, p->g.inner,
             mx, sum);
      break;
    }
    case NN_DTYPE_DOUBLE: {
      double *mx = n->ws, *sum = mx + p->g.inner;
      sm_f64(p->kind, (const double *)x->data + off, (double *)y->data + off, p->g.n, p->g.inner,
             mx, sum);
      break;
    }
    case NN_DTYPE_FLOAT16: {
      double *mx = n->ws, *sum = mx + p->g.inner;
      sm_f16(p->kind, (const uint16_t *)x->data + off, (uint16_t *)y->data + off, p->g.n,
             p->g.inner, mx, sum);
      break;
    }
    case NN_DTYPE_BFLOAT16: {
      double *mx = n->ws, *sum = mx + p->g.inner;
      sm_bf16(p->kind, (const uint16_t *)x->data + off, (uint16_t *)y->data + off, p->g.n,
              p->g.inner, mx, sum);
      break;
    }
    default:
      return nn_fail(c, NN_ERR_UNSUPPORTED, "%s on %s is not supported", n->op_type,
                     nn_dtype_name(x->dtype));
    }
  }
  return NN_OK;
}

const nn_kernel nn_kernels_softmax[] = {
  {.name = "Softmax", .prepare = sm_prepare, .run = sm_run},
  {.name = "LogSoftmax", .prepare = sm_prepare, .run = sm_run},
  {.name = "Hardmax", .prepare = sm_prepare, .run = sm_run},
  {0},
};
