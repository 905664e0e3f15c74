/* reduce.c - reductions: Reduce{Sum,Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,
 * SumSquare}, ArgMax/ArgMin, TopK, CumSum/CumProd.
 *
 * Reduce* accumulate in one of three domains chosen by the input type:
 * double for the float types, int64 for signed integers, uint64 for
 * unsigned integers and bool.  Integer sums and products wrap modulo 2^64
 * (then truncate to the element type), which is the two's-complement result
 * the element type would give, without signed-overflow UB.
 *
 * The shape is canonicalized at prepare: size-1 dims are dropped and runs of
 * adjacent reduced / kept dims merged, so a reduction is a short list of
 * alternating groups.  run walks the input once, in memory order, and folds
 * each contiguous innermost run into the output accumulators: a scalar fold
 * when the innermost group is reduced, an element-wise fold over a row of
 * accumulators when it is kept.  No transposition, no index arithmetic per
 * element. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "cpu/ops.h"
#include "ops/reduce.h"

/* ---- Reduce* ----------------------------------------------------------------- */
typedef enum red_op {
  RED_SUM,
  RED_MEAN,
  RED_MAX,
  RED_MIN,
  RED_PROD,
  RED_L1,
  RED_L2,
  RED_LOGSUM,
  RED_LOGSUMEXP,
  RED_SUMSQ,
} red_op;

typedef enum red_domain { RED_DOM_F, RED_DOM_I, RED_DOM_U } red_domain;

typedef struct red_plan {
  red_op op;
  red_domain dom;
  bool noop;                  /* empty axes with noop_with_empty_axes: a copy */
  int ngroups;
  int64_t gsize[NN_MAX_RANK];
  bool greduced[NN_MAX_RANK];
  int64_t gostride[NN_MAX_RANK];   /* output stride of each group, 0 when reduced */
  int64_t count;              /* input elements folded into each output */
} red_plan;

/* Innermost fold: n contiguous elements of x into acc[0] (scalar) or acc[0..n)
 * (vec).  aux holds the per-output maximum for the LogSumExp second pass. */
typedef void (*red_fold_fn)(red_op op, const void *x, int64_t n, bool vec, void *acc,
                            const double *aux);

#define RED_F_ADD(a, b) ((a) + (b))
#define RED_F_MUL(a, b) ((a) * (b))
#define RED_F_ABS(v) fabs(v)
#define RED_I_ADD(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define RED_I_MUL(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))
#define RED_I_ABS(v) ((v) < 0 ? (int64_t)(0 - (uint64_t)(v)) : (v))
#define RED_U_ADD(a, b) ((a) + (b))
#define RED_U_MUL(a, b) ((a) * (b))
#define RED_U_ABS(v) (v)

#define RED_LOAD_PLAIN(v) (v)
#define RED_LOAD_F16(v) ((double)nn_f16_to_f32(v))
#define RED_LOAD_BF16(v) ((double)nn_bf16_to_f32(v))
#define RED_LOAD_BOOL(v) ((uint64_t)((v) != 0))

/* NaN-propagating max/min: once acc is NaN no comparison replaces it, and a
 * NaN element always does.  (v != v is constant-false for integers.) */
#define RED_FOLD(NAME, T, A, LOAD, ADD, MUL, ABS)                                        \
  static void NAME(red_op op, const void *xv, int64_t n, bool vec, void *accv,            \
                   const double *aux) {                                                   \
    const T *x = xv;                                                                      \
    A *acc = accv;                                                                        \
    switch (op) {                                                                         \
    case RED_SUM: case RED_MEAN: case RED_LOGSUM:                                         \
      if (vec) {                                                                          \
        for (int64_t i = 0; i < n; i++)                                                   \
          acc[i] = ADD(acc[i], (A)LOAD(x[i]));                                            \
      } else {                                                                            \
        A s = acc[0];                                                                     \
        for (int64_t i = 0; i < n; i++)                                                   \
          s = ADD(s, (A)LOAD(x[i]));                                                      \
        acc[0] = s;                                                                       \
      }                                                                                   \
      break;                                                                              \
    case RED_SUMSQ: case RED_L2:                                                          \
      if (vec) {                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                 \
          A v = (A)LOAD(x[i]);                                                            \
          acc[i] = ADD(acc[i], MUL(v, v));                                                \
        }                                                                                 \
      } else {                                                                            \
        A s = acc[0];                                                                     \
        for (int64_t i = 0; i < n; i++) {                                                 \
          A v = (A)LOAD(x[i]);                                                            \
          s = ADD(s, MUL(v, v));                                                          \
        }                                                                                 \
        acc[0] = s;                                                                       \
      }                                                                                   \
      break;                                                                              \
    case RED_L1:                                                                          \
      for (int64_t i = 0; i < n; i++) {                                                   \
        A v = (A)LOAD(x[i]);                                                              \
        A *d = vec ? &acc[i] : &acc[0];                                                   \
        *d = ADD(*d, ABS(v));                                                             \
      }                                                                                   \
      break;                                                                              \
    case RED_PROD:                                                                        \
      for (int64_t i = 0; i < n; i++) {                                                   \
        A *d = vec ? &acc[i] : &acc[0];                                                   \
        *d = MUL(*d, (A)LOAD(x[i]));                                                      \
      }                                                                                   \
      break;                                                                              \
    case RED_MAX: case RED_LOGSUMEXP:                                                     \
      for (int64_t i = 0; i < n; i++) {                                                   \
        A v = (A)LOAD(x[i]);                                                              \
        A *d = vec ? &acc[i] : &acc[0];                                                   \
        if (v > *d || v != v)                                                             \
          *d = v;                                                                         \
      }                                                                                   \
      break;                                                                              \
    case RED_MIN:                                                                         \
      for (int64_t i = 0; i < n; i++) {                                                   \
        A v = (A)LOAD(x[i]);                                                              \
        A *d = vec ? &acc[i] : &acc[0];                                                   \
        if (v < *d || v != v)                                                             \
          *d = v;                                                                         \
      }                                                                                   \
      break;                                                                              \
    }                                                                                     \
    (void)aux;                                                                            \
  }

RED_FOLD(red_fold_f32, float, double, RED_LOAD_PLAIN, RED_F_ADD, RED_F_MUL, RED_F_ABS)
RED_FOLD(red_fold_f64, double, double, RED_LOAD_PLAIN, RED_F_ADD, RED_F_MUL, RED_F_ABS)
RED_FOLD(red_fold_f16, uint16_t, double, RED_LOAD_F16, RED_F_ADD, RED_F_MUL, RED_F_ABS)
RED_FOLD(red_fold_bf16, uint16_t, double, RED_LOAD_BF16, RED_F_ADD, RED_F_MUL, RED_F_ABS)
RED_FOLD(red_fold_i8, int8_t, int64_t, RED_LOAD_PLAIN, RED_I_ADD, RED_I_MUL, RED_I_ABS)
RED_FOLD(red_fold_i16, int16_t, int64_t, RED_LOAD_PLAIN, RED_I_ADD, RED_I_MUL, RED_I_ABS)
RED_FOLD(red_fold_i32, int32_t, int64_t, RED_LOAD_PLAIN, RED_I_ADD, RED_I_MUL, RED_I_ABS)
RED_FOLD(red_fold_i64, int64_t, int64_t, RED_LOAD_PLAIN, RED_I_ADD, RED_I_MUL, RED_I_ABS)
RED_FOLD(red_fold_u8, uint8_t, uint64_t, RED_LOAD_PLAIN, RED_U_ADD, RED_U_MUL, RED_U_ABS)
RED_FOLD(red_fold_u16, uint16_t, uint64_t, RED_LOAD_PLAIN, RED_U_ADD, RED_U_MUL, RED_U_ABS)
RED_FOLD(red_fold_u32, uint32_t, uint64_t, RED_LOAD_PLAIN, RED_U_ADD, RED_U_MUL, RED_U_ABS)
RED_FOLD(red_fold_u64, uint64_t, uint64_t, RED_LOAD_PLAIN, RED_U_ADD, RED_U_MUL, RED_U_ABS)
RED_FOLD(red_fold_bool, uint8_t, uint64_t, RED_LOAD_BOOL, RED_U_ADD, RED_U_MUL, RED_U_ABS)

/* Second LogSumExp pass: sum of exp(x - max), shifted only by a finite max so
 * that all -inf (or an empty set) gives log(0) = -inf and +inf stays +inf. */
#define RED_LSE_FOLD(NAME, T, LOAD)                                                     \
  static void NAME(const void *xv, int64_t n, bool vec, double *acc, const double *mx) { \
    const T *x = xv;                                                                    \
    for (int64_t i = 0; i < n; i++) {                                                   \
      double m = vec ? mx[i] : mx[0];                                                   \
      double sh = isfinite(m) ? m : 0.0;                                                \
      acc[vec ? i : 0] += exp((double)LOAD(x[i]) - sh);                                 \
    }                                                                                   \
  }

RED_LSE_FOLD(red_lse_f32, float, RED_LOAD_PLAIN)
RED_LSE_FOLD(red_lse_f64, double, RED_LOAD_PLAIN)
RED_LSE_FOLD(red_lse_f16, uint16_t, RED_LOAD_F16)
RED_LSE_FOLD(red_lse_bf16, uint16_t, RED_LOAD_BF16)

typedef void (*red_lse_fn)(const void *x, int64_t n, bool vec, double *acc, const double *mx);

static red_fold_fn red_fold_for(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_FLOAT: return red_fold_f32;
  case NN_DTYPE_DOUBLE: return red_fold_f64;
  case NN_DTYPE_FLOAT16: return red_fold_f16;
  case NN_DTYPE_BFLOAT16: return red_fold_bf16;
  case NN_DTYPE_INT8: return red_fold_i8;
  case NN_DTYPE_INT16: return red_fold_i16;
  case NN_DTYPE_INT32: return red_fold_i32;
  case NN_DTYPE_INT64: return red_fold_i64;
  case NN_DTYPE_UINT8: return red_fold_u8;
  case NN_DTYPE_UINT16: return red_fold_u16;
  case NN_DTYPE_UINT32: return red_fold_u32;
  case NN_DTYPE_UINT64: return red_fold_u64;
  case NN_DTYPE_BOOL: return red_fold_bool;
  default: return NULL;
  }
}

static red_lse_fn red_lse_for(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_FLOAT: return red_lse_f32;
  case NN_DTYPE_DOUBLE: return red_lse_f64;
  case NN_DTYPE_FLOAT16: return red_lse_f16;
  case NN_DTYPE_BFLOAT16: return red_lse_bf16;
  default: return NULL;
  }
}

static red_domain red_domain_of(nn_dtype dt) {
  if (nn_dtype_is_float(dt))
    return RED_DOM_F;
  if (nn_dtype_is_signed(dt))
    return RED_DOM_I;
  return RED_DOM_U;
}

/* Smallest / largest value of an integer element type, as the initial max /
 * min, so an empty reduction yields the type's extreme (ReduceMax-20). */
static int64_t red_int_min(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_INT8: return INT8_MIN;
  case NN_DTYPE_INT16: return INT16_MIN;
  case NN_DTYPE_INT32: return INT32_MIN;
  default: return INT64_MIN;
  }
}

static int64_t red_int_max(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_INT8: return INT8_MAX;
  case NN_DTYPE_INT16: return INT16_MAX;
  case NN_DTYPE_INT32: return INT32_MAX;
  default: return INT64_MAX;
  }
}

static uint64_t red_uint_max(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_BOOL: return 1;
  case NN_DTYPE_UINT8: return UINT8_MAX;
  case NN_DTYPE_UINT16: return UINT16_MAX;
  case NN_DTYPE_UINT32: return UINT32_MAX;
  default: return UINT64_MAX;
  }
}

typedef struct red_def {
  const char *name;
  red_op op;
} red_def;

/* (where each takes its axes from: ops/reduce.h) */
static const red_def red_defs[] = {
  {"ReduceSum", RED_SUM},
  {"ReduceMean", RED_MEAN},
  {"ReduceMax", RED_MAX},
  {"ReduceMin", RED_MIN},
  {"ReduceProd", RED_PROD},
  {"ReduceL1", RED_L1},
  {"ReduceL2", RED_L2},
  {"ReduceLogSum", RED_LOGSUM},
  {"ReduceLogSumExp", RED_LOGSUMEXP},
  {"ReduceSumSquare", RED_SUMSQ},
};

static const red_def *red_def_of(const nn_node *n) {
  for (size_t i = 0; i < sizeof red_defs / sizeof red_defs[0]; i++)
    if (strcmp(red_defs[i].name, n->op_type) == 0)
      return &red_defs[i];
  return NULL;
}

static nn_status reduce_prepare(nn_ctx *c, nn_node *n) {
  const red_def *def = red_def_of(n);
  if (!def)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unknown reduction");
  const nn_value *x = n->x[0];
  nn_dtype dt = x->dtype;
  /* ops/reduce.c admits every numeric type (and bool for Max / Min), all of
   * which fold here; LogSumExp's two passes are written for floats only */
  if (def->op == RED_LOGSUMEXP && !nn_dtype_is_float(dt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s on %s is not supported", def->name,
                   nn_dtype_name(dt));

  int rank = x->rank;
  nn_reduce_axes ra;
  nn_status st0 = nn_reduce_axes_init(c, n, &ra);
  if (st0 != NN_OK)
    return st0;
  const bool *reduce = ra.reduce;

  red_plan *p = nn_calloc(1, sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  p->op = def->op;
  p->dom = red_domain_of(dt);
  if (ra.noop) {
    p->noop = true;
    return NN_OK;
  }

  /* groups: drop size-1 dims, merge neighbours with the same role */
  p->count = 1;
  int g = 0;
  for (int i = 0; i < rank; i++) {
    int64_t d = x->dims[i];
    if (reduce[i])
      p->count *= d;
    if (d == 1)
      continue;
    if (g > 0 && p->greduced[g - 1] == reduce[i]) {
      p->gsize[g - 1] *= d;
    } else {
      p->gsize[g] = d;
      p->greduced[g] = reduce[i];
      g++;
    }
  }
  if (g == 0) {
    p->gsize[0] = 1;
    p->greduced[0] = false;
    g = 1;
  }
  p->ngroups = g;
  int64_t s = 1;
  for (int i = g - 1; i >= 0; i--) {
    p->gostride[i] = p->greduced[i] ? 0 : s;
    if (!p->greduced[i])
      s *= p->gsize[i];
  }

  /* accumulators (8 bytes each), plus the maxima of the LogSumExp first pass */
  size_t per = def->op == RED_LOGSUMEXP ? 16 : 8;
  if (nn_mul_overflow_size((size_t)n->y[0]->numel, per, &n->ws_bytes))
    return nn_fail(c, NN_ERR_LIMIT, "workspace size overflows");
  return NN_OK;
}

static void red_init(const red_plan *p, nn_dtype dt, red_op op, void *acc, int64_t m) {
  if (p->dom == RED_DOM_F) {
    double v = 0.0;
    if (op == RED_PROD)
      v = 1.0;
    else if (op == RED_MAX || op == RED_LOGSUMEXP)
      v = -INFINITY;
    else if (op == RED_MIN)
      v = INFINITY;
    double *a = acc;
    for (int64_t i = 0; i < m; i++)
      a[i] = v;
  } else if (p->dom == RED_DOM_I) {
    int64_t v = op == RED_PROD ? 1 : op == RED_MAX ? red_int_min(dt)
                                   : op == RED_MIN ? red_int_max(dt) : 0;
    int64_t *a = acc;
    for (int64_t i = 0; i < m; i++)
      a[i] = v;
  } else {
    uint64_t v = op == RED_PROD ? 1 : op == RED_MIN ? red_uint_max(dt) : 0;
    uint64_t *a = acc;
    for (int64_t i = 0; i < m; i++)
      a[i] = v;
  }
}

/* Walk the input in memory order; see the file comment. */
static void red_walk(const red_plan *p, const void *x, size_t es, red_op op, red_fold_fn fold,
                     red_lse_fn lse, void *acc, const double *mx) {
  int g = p->ngroups;
  int64_t inner = p->gsize[g - 1];
  bool vec = !p->greduced[g - 1];
  int64_t outer = 1;
  for (int i = 0; i < g - 1; i++)
    outer *= p->gsize[i];
  int64_t idx[NN_MAX_RANK] = {0};
  int64_t ooff = 0;
  const char *xp = x;
  for (int64_t t = 0; t < outer; t++) {
    if (lse)
      lse(xp, inner, vec, (double *)acc + ooff, mx + ooff);
    else
      fold(op, xp, inner, vec, (char *)acc + ooff * 8, NULL);
    xp += inner * (int64_t)es;
    for (int i = g - 2; i >= 0; i--) {
      idx[i]++;
      ooff += p->gostride[i];
      if (idx[i] < p->gsize[i])
        break;
      ooff -= idx[i] * p->gostride[i];
      idx[i] = 0;
    }
  }
}

static void red_store_f(nn_dtype dt, void *y, int64_t i, double v) {
  switch (dt) {
  case NN_DTYPE_FLOAT: ((float *)y)[i] = (float)v; break;
  case NN_DTYPE_DOUBLE: ((double *)y)[i] = v; break;
  case NN_DTYPE_FLOAT16: ((uint16_t *)y)[i] = nn_f32_to_f16((float)v); break;
  case NN_DTYPE_BFLOAT16: ((uint16_t *)y)[i] = nn_f32_to_bf16((float)v); break;
  default: break;
  }
}

/* Integer results: wrapped to the element width. */
static void red_store_u(nn_dtype dt, void *y, int64_t i, uint64_t v) {
  switch (dt) {
  case NN_DTYPE_INT8: case NN_DTYPE_UINT8: ((uint8_t *)y)[i] = (uint8_t)v; break;
  case NN_DTYPE_BOOL: ((uint8_t *)y)[i] = v != 0; break;
  case NN_DTYPE_INT16: case NN_DTYPE_UINT16: ((uint16_t *)y)[i] = (uint16_t)v; break;
  case NN_DTYPE_INT32: case NN_DTYPE_UINT32: ((uint32_t *)y)[i] = (uint32_t)v; break;
  case NN_DTYPE_INT64: case NN_DTYPE_UINT64: ((uint64_t *)y)[i] = v; break;
  default: break;
  }
}

/* double -> int64 without the undefined behaviour of an out-of-range cast
 * (L2 of a wrapped sum, log of 0): NaN gives 0, the rest saturates. */
static int64_t red_d2i(double v) {
  if (isnan(v))
    return 0;
  if (v >= 9223372036854775807.0)
    return INT64_MAX;
  if (v <= -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)v;
}

static uint64_t red_d2u(double v) {
  if (!(v > 0.0))
    return 0;
  if (v >= 18446744073709551615.0)
    return UINT64_MAX;
  return (uint64_t)v;
}

static double red_finish_f(red_op op, double a, double mx, int64_t count) {
  switch (op) {
  case RED_MEAN: return a / (double)count;
  case RED_L2: return sqrt(a);
  case RED_LOGSUM: return log(a);
  case RED_LOGSUMEXP: return log(a) + (isfinite(mx) ? mx : 0.0);
  default: return a;
  }
}

static nn_status reduce_run(nn_ctx *c, nn_node *n) {
  const red_plan *p = n->priv;
  const nn_value *x = n->x[0];
  nn_value *y = n->y[0];
  nn_dtype dt = x->dtype;
  if (p->noop) {
    if (y->data != x->data && x->nbytes)
      memcpy(y->data, x->data, x->nbytes);
    return NN_OK;
  }
  int64_t m = y->numel;
  if (m == 0)
    return NN_OK;
  size_t es = nn_dtype_size(dt);
  red_fold_fn fold = red_fold_for(dt);
  if (!fold)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s on %s is not supported", n->op_type,
                   nn_dtype_name(dt));
  void *acc = n->ws;
  double *mx = NULL;
  if (p->op == RED_LOGSUMEXP) {
    /* pass 1: maxima into the second half of the workspace; pass 2: sums */
    mx = (double *)n->ws + m;
    red_init(p, dt, RED_MAX, mx, m);
    if (x->numel)
      red_walk(p, x->data, es, RED_MAX, fold, NULL, mx, NULL);
    red_init(p, dt, RED_SUM, acc, m);
    if (x->numel)
      red_walk(p, x->data, es, RED_SUM, fold, red_lse_for(dt), acc, mx);
  } else {
    red_init(p, dt, p->op, acc, m);
    if (x->numel)
      red_walk(p, x->data, es, p->op, fold, NULL, acc, NULL);
  }

  if (p->dom == RED_DOM_F) {
    const double *a = acc;
    for (int64_t i = 0; i < m; i++)
      red_store_f(dt, y->data, i, red_finish_f(p->op, a[i], mx ? mx[i] : 0.0, p->count));
    return NN_OK;
  }
  for (int64_t i = 0; i < m; i++) {
    uint64_t v;
    if (p->dom == RED_DOM_I) {
      int64_t a = ((const int64_t *)acc)[i];
      switch (p->op) {
      case RED_MEAN: a = p->count ? a / p->count : 0; break;
      case RED_L2: a = red_d2i(sqrt((double)a)); break;
      case RED_LOGSUM: a = red_d2i(log((double)a)); break;
      default: break;
      }
      v = (uint64_t)a;
    } else {
      v = ((const uint64_t *)acc)[i];
      switch (p->op) {
      case RED_MEAN: v = p->count ? v / (uint64_t)p->count : 0; break;
      case RED_L2: v = red_d2u(sqrt((double)v)); break;
      case RED_LOGSUM: v = red_d2u(log((double)v)); break;
      default: break;
      }
    }
    red_store_u(dt, y->data, i, v);
  }
  return NN_OK;
}

/* ---- shared helpers for axis-wise ops -------------------------------------------- */
/* [outer, n, inner] view of dims around axis. */
static void red_split(const nn_value *x, int axis, int64_t *outer, int64_t *n, int64_t *inner) {
  int64_t o = 1, in = 1;
  for (int i = 0; i < axis; i++)
    o *= x->dims[i];
  for (int i = axis + 1; i < x->rank; i++)
    in *= x->dims[i];
  *outer = o;
  *n = x->rank ? x->dims[axis] : 1;
  *inner = in;
}

/* ---- ArgMax / ArgMin ---------------------------------------------------------- */
typedef struct arg_params {
  int axis;
  bool is_max, last;
} arg_params;

static nn_status arg_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  arg_params *p = nn_calloc(1, sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  nn_arg_params ap;
  nn_status st = nn_arg_params_init(c, n, &ap);
  if (st != NN_OK)
    return st;
  p->axis = ap.axis;
  p->is_max = strcmp(n->op_type, "ArgMax") == 0;
  p->last = ap.last;
  /* best value per inner position, at most 8 bytes each */
  int64_t outer, len, inner;
  red_split(x, p->axis, &outer, &len, &inner);
  n->ws_bytes = (size_t)inner * 8;
  return NN_OK;
}

/* One pass over the [n, inner] block in memory order: the best value per
 * inner position lives in the workspace (type A, exact for T), its index in
 * the output.  A NaN beats every number and nothing beats a NaN, so the
 * first NaN is reported, as numpy's argmax/argmin do.  (v != v is
 * constant-false for integers.) */
#define ARG_IMPL(NAME, T, A, LOAD)                                                       \
  static void NAME(const arg_params *p, const void *xv, int64_t outer, int64_t n,        \
                   int64_t inner, int64_t *out, void *ws) {                              \
    const T *x = xv;                                                                     \
    A *best = ws;                                                                        \
    for (int64_t o = 0; o < outer; o++) {                                                \
      const T *xo = x + o * n * inner;                                                   \
      int64_t *yo = out + o * inner;                                                     \
      for (int64_t i = 0; i < inner; i++) {                                              \
        yo[i] = 0;                                                                       \
        best[i] = (A)LOAD(xo[i]);                                                        \
      }                                                                                  \
      for (int64_t j = 1; j < n; j++) {                                                  \
        const T *xr = xo + j * inner;                                                    \
        for (int64_t i = 0; i < inner; i++) {                                            \
          A v = (A)LOAD(xr[i]), b = best[i];                                             \
          bool take;                                                                     \
          if (b != b)                                                                    \
            take = false;                                                                \
          else if (v != v)                                                               \
            take = true;                                                                 \
          else if (p->is_max)                                                            \
            take = p->last ? v >= b : v > b;                                             \
          else                                                                           \
            take = p->last ? v <= b : v < b;                                             \
          if (take) {                                                                    \
            best[i] = v;                                                                 \
            yo[i] = j;                                                                   \
          }                                                                              \
        }                                                                                \
      }                                                                                  \
    }                                                                                    \
  }

#define ARG_LOAD_F16(v) nn_f16_to_f32(v)
#define ARG_LOAD_BF16(v) nn_bf16_to_f32(v)
ARG_IMPL(arg_f32, float, float, RED_LOAD_PLAIN)
ARG_IMPL(arg_f64, double, double, RED_LOAD_PLAIN)
ARG_IMPL(arg_f16, uint16_t, float, ARG_LOAD_F16)
ARG_IMPL(arg_bf16, uint16_t, float, ARG_LOAD_BF16)
ARG_IMPL(arg_i8, int8_t, int8_t, RED_LOAD_PLAIN)
ARG_IMPL(arg_i16, int16_t, int16_t, RED_LOAD_PLAIN)
ARG_IMPL(arg_i32, int32_t, int32_t, RED_LOAD_PLAIN)
ARG_IMPL(arg_i64, int64_t, int64_t, RED_LOAD_PLAIN)
ARG_IMPL(arg_u8, uint8_t, uint8_t, RED_LOAD_PLAIN)
ARG_IMPL(arg_u16, uint16_t, uint16_t, RED_LOAD_PLAIN)
ARG_IMPL(arg_u32, uint32_t, uint32_t, RED_LOAD_PLAIN)
ARG_IMPL(arg_u64, uint64_t, uint64_t, RED_LOAD_PLAIN)

static nn_status arg_run(nn_ctx *c, nn_node *n) {
  const arg_params *p = n->priv;
  const nn_value *x = n->x[0];
  if (n->y[0]->numel == 0)
    return NN_OK;
  int64_t outer, len, inner;
  red_split(x, p->axis, &outer, &len, &inner);
  int64_t *out = n->y[0]->data;
  switch (x->dtype) {
  case NN_DTYPE_FLOAT: arg_f32(p, x->data, outer, len, inner, out, n->ws); break;
  case NN_DTYPE_DOUBLE: arg_f64(p, x->data, outer, len, inner, out, n->ws); break;
  case NN_DTYPE_FLOAT16: arg_f16(p, x->data, outer, len, inner, out, n->ws); break;
  case NN_DTYPE_BFLOAT16: arg_bf16(p, x->data, outer, len, inner, out, n->ws); break;
  case NN_DTYPE_INT8: arg_i8(p, x->data, outer, len, inner, out, n->ws); break;
  case NN_DTYPE_INT16: arg_i16(p, x->data, outer, len, inner, out, n->ws); break;
  case NN_DTYPE_INT32: arg_i32(p, x->data, outer, len, inner, out, n->ws); break;
  case NN_DTYPE_INT64: arg_i64(p, x->data, outer, len, inner, out, n->ws); break;
  case NN_DTYPE_UINT8: arg_u8(p, x->data, outer, len, inner, out, n->ws); break;
  case NN_DTYPE_UINT16: arg_u16(p, x->data, outer, len, inner, out, n->ws); break;
  case NN_DTYPE_UINT32: arg_u32(p, x->data, outer, len, inner, out, n->ws); break;
  case NN_DTYPE_UINT64: arg_u64(p, x->data, outer, len, inner, out, n->ws); break;
  default:
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s on %s is not supported", n->op_type,
                   nn_dtype_name(x->dtype));
  }
  return NN_OK;
}

/* ---- TopK ------------------------------------------------------------------------
 * Each slice along the axis is copied into the workspace as sort keys (double
 * for the float types and narrow integers, int64 / uint64 for the wide ones),
 * then a K-element heap keeps the best seen so far with the worst at the root:
 * O(n log K).  Popping the heap fills the result from the back, so the output
 * is always sorted (a valid answer for sorted=0 too).  Order is total: a
 * larger value wins (NaN counts as the largest, as in numpy's sort), and on
 * equal values the lower index wins, for largest and smallest alike. */
typedef enum topk_key { TOPK_KEY_F, TOPK_KEY_I, TOPK_KEY_U } topk_key;

typedef struct topk_params {
  int axis;
  int64_t k;
  bool largest;
  topk_key key;
} topk_params;

static topk_key topk_key_of(nn_dtype dt) {
  if (dt == NN_DTYPE_INT64)
    return TOPK_KEY_I;
  if (dt == NN_DTYPE_UINT64)
    return TOPK_KEY_U;
  return TOPK_KEY_F;
}

static nn_status topk_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  topk_params *p = nn_calloc(1, sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  nn_topk_params tp;
  nn_status st = nn_topk_params_init(c, n, &tp);
  if (st != NN_OK)
    return st;
  p->axis = tp.axis;
  p->k = tp.k;
  p->largest = tp.largest;
  p->key = topk_key_of(x->dtype);
  /* keys (8 bytes each) for one slice, then the heap of K indices */
  int64_t len = x->dims[p->axis];
  if (nn_mul_overflow_size((size_t)len, 8, &n->ws_bytes) ||
      __builtin_add_overflow(n->ws_bytes, (size_t)p->k * 8, &n->ws_bytes))
    return nn_fail(c, NN_ERR_LIMIT, "workspace size overflows");
  return NN_OK;
}

/* "a ranks before b" for index a, b of keys: the heap keeps its worst at the
 * root, so sift with the reverse relation. */
#define TOPK_IMPL(SUF, K, GREATER)                                                      \
  static bool topk_before_##SUF(const K *key, bool largest, int64_t a, int64_t b) {     \
    if (GREATER(key[a], key[b]))                                                        \
      return largest;                                                                   \
    if (GREATER(key[b], key[a]))                                                        \
      return !largest;                                                                  \
    return a < b;                                                                       \
  }                                                                                     \
  static void topk_sift_##SUF(const K *key, bool largest, int64_t *h, int64_t m,        \
                              int64_t i) {                                              \
    for (;;) {                                                                          \
      int64_t l = 2 * i + 1, r = l + 1, w = i;                                          \
      if (l < m && topk_before_##SUF(key, largest, h[w], h[l]))                         \
        w = l;                                                                          \
      if (r < m && topk_before_##SUF(key, largest, h[w], h[r]))                         \
        w = r;                                                                          \
      if (w == i)                                                                       \
        return;                                                                         \
      int64_t t = h[i];                                                                 \
      h[i] = h[w];                                                                      \
      h[w] = t;                                                                         \
      i = w;                                                                            \
    }                                                                                   \
  }                                                                                     \
  /* On return h[0..k) holds the indices best first. */                                 \
  static void topk_select_##SUF(const K *key, int64_t n, int64_t k, bool largest,       \
                                int64_t *h) {                                           \
    if (k == 0)                                                                         \
      return;                                                                           \
    for (int64_t i = 0; i < k; i++)                                                     \
      h[i] = i;                                                                         \
    for (int64_t i = k / 2 - 1; i >= 0; i--)                                            \
      topk_sift_##SUF(key, largest, h, k, i);                                           \
    for (int64_t i = k; i < n; i++) {                                                   \
      if (topk_before_##SUF(key, largest, i, h[0])) {                                   \
        h[0] = i;                                                                       \
        topk_sift_##SUF(key, largest, h, k, 0);                                         \
      }                                                                                 \
    }                                                                                   \
    for (int64_t m = k - 1; m > 0; m--) {                                               \
      int64_t t = h[0];                                                                 \
      h[0] = h[m];                                                                      \
      h[m] = t;                                                                         \
      topk_sift_##SUF(key, largest, h, m, 0);                                           \
    }                                                                                   \
  }

#define TOPK_GT_F(a, b) ((a) > (b) || (isnan(a) && !isnan(b)))
#define TOPK_GT_INT(a, b) ((a) > (b))
TOPK_IMPL(f, double, TOPK_GT_F)
TOPK_IMPL(i, int64_t, TOPK_GT_INT)
TOPK_IMPL(u, uint64_t, TOPK_GT_INT)

static nn_status topk_run(nn_ctx *c, nn_node *n) {
  const topk_params *p = n->priv;
  const nn_value *x = n->x[0];
  nn_value *yv = n->y[0], *yi = n->y[1];
  int64_t outer, len, inner;
  red_split(x, p->axis, &outer, &len, &inner);
  int64_t k = p->k;
  if (outer * inner == 0 || k == 0)
    return NN_OK;
  size_t es = nn_dtype_size(x->dtype);
  void *keys = n->ws;
  int64_t *heap = (int64_t *)((char *)n->ws + (size_t)len * 8);
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * len * inner + i;
      if (p->key == TOPK_KEY_I) {
        int64_t *kk = keys;
        for (int64_t j = 0; j < len; j++)
          kk[j] = ((const int64_t *)x->data)[base + j * inner];
        topk_select_i(kk, len, k, p->largest, heap);
      } else if (p->key == TOPK_KEY_U) {
        uint64_t *kk = keys;
        for (int64_t j = 0; j < len; j++)
          kk[j] = ((const uint64_t *)x->data)[base + j * inner];
        topk_select_u(kk, len, k, p->largest, heap);
      } else {
        double *kk = keys;
        if (x->dtype == NN_DTYPE_FLOAT) {
          const float *xf = (const float *)x->data + base;
          for (int64_t j = 0; j < len; j++)
            kk[j] = xf[j * inner];
        } else {
          for (int64_t j = 0; j < len; j++)
            kk[j] = nn_value_get_double(x, base + j * inner);
        }
        topk_select_f(kk, len, k, p->largest, heap);
      }
      int64_t obase = o * k * inner + i;
      for (int64_t j = 0; j < k; j++) {
        int64_t src = base + heap[j] * inner, dst = obase + j * inner;
        if (yv)
          memcpy((char *)yv->data + (size_t)dst * es, (const char *)x->data + (size_t)src * es,
                 es);
        if (yi)
          ((int64_t *)yi->data)[dst] = heap[j];
      }
    }
  }
  (void)c;
  return NN_OK;
}

/* ---- CumSum / CumProd ------------------------------------------------------------
 * The axis is an input; it is usually a constant and then checked at prepare
 * (ops/reduce.c), otherwise at run.  Running accumulation in the element type
 * (float for the half types) like the reference's numpy cumsum; integers
 * wrap. */
typedef struct cum_params {
  bool prod, exclusive, reverse;
} cum_params;

static nn_status cum_prepare(nn_ctx *c, nn_node *n) {
  cum_params *p = nn_calloc(1, sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  p->prod = strcmp(n->op_type, "CumProd") == 0;
  p->exclusive = nn_attr_int(n, "exclusive", 0) != 0;
  p->reverse = nn_attr_int(n, "reverse", 0) != 0;
  return NN_OK;
}

#define CUM_IMPL(NAME, T, A, LOAD, STORE, ADD, MUL)                                     \
  static void NAME(const cum_params *p, const void *xv, void *yv, int64_t outer,        \
                   int64_t n, int64_t inner) {                                          \
    const T *x = xv;                                                                    \
    T *y = yv;                                                                          \
    for (int64_t o = 0; o < outer; o++) {                                               \
      for (int64_t i = 0; i < inner; i++) {                                             \
        int64_t base = o * n * inner + i;                                               \
        A acc = p->prod ? (A)1 : (A)0;                                                  \
        for (int64_t t = 0; t < n; t++) {                                               \
          int64_t j = p->reverse ? n - 1 - t : t;                                       \
          int64_t off = base + j * inner;                                               \
          A v = (A)LOAD(x[off]);                                                        \
          if (p->exclusive) {                                                           \
            y[off] = STORE(acc);                                                        \
            acc = p->prod ? MUL(acc, v) : ADD(acc, v);                                  \
          } else {                                                                      \
            acc = p->prod ? MUL(acc, v) : ADD(acc, v);                                  \
            y[off] = STORE(acc);                                                        \
          }                                                                             \
        }                                                                               \
      }                                                                                 \
    }                                                                                   \
  }

#define CUM_STORE_PLAIN(v) (v)
#define CUM_LOAD_F16(v) nn_f16_to_f32(v)
#define CUM_STORE_F16(v) nn_f32_to_f16(v)
#define CUM_LOAD_BF16(v) nn_bf16_to_f32(v)
#define CUM_STORE_BF16(v) nn_f32_to_bf16(v)
#define CUM_STORE_I32(v) ((int32_t)(v))
#define CUM_STORE_I64(v) ((int64_t)(v))
CUM_IMPL(cum_f32, float, float, RED_LOAD_PLAIN, CUM_STORE_PLAIN, RED_F_ADD, RED_F_MUL)
CUM_IMPL(cum_f64, double, double, RED_LOAD_PLAIN, CUM_STORE_PLAIN, RED_F_ADD, RED_F_MUL)
CUM_IMPL(cum_f16, uint16_t, float, CUM_LOAD_F16, CUM_STORE_F16, RED_F_ADD, RED_F_MUL)
CUM_IMPL(cum_bf16, uint16_t, float, CUM_LOAD_BF16, CUM_STORE_BF16, RED_F_ADD, RED_F_MUL)
CUM_IMPL(cum_i32, int32_t, uint32_t, RED_LOAD_PLAIN, CUM_STORE_I32, RED_U_ADD, RED_U_MUL)
CUM_IMPL(cum_i64, int64_t, uint64_t, RED_LOAD_PLAIN, CUM_STORE_I64, RED_U_ADD, RED_U_MUL)
CUM_IMPL(cum_u32, uint32_t, uint32_t, RED_LOAD_PLAIN, CUM_STORE_PLAIN, RED_U_ADD, RED_U_MUL)
CUM_IMPL(cum_u64, uint64_t, uint64_t, RED_LOAD_PLAIN, CUM_STORE_PLAIN, RED_U_ADD, RED_U_MUL)

static nn_status cum_run(nn_ctx *c, nn_node *n) {
  const cum_params *p = n->priv;
  const nn_value *x = n->x[0];
  int axis;
  nn_status st = nn_cum_axis(c, n, &axis);
  if (st != NN_OK)
    return st;
  if (x->numel == 0)
    return NN_OK;
  int64_t outer, len, inner;
  red_split(x, axis, &outer, &len, &inner);
  void *y = n->y[0]->data;
  switch (x->dtype) {
  case NN_DTYPE_FLOAT: cum_f32(p, x->data, y, outer, len, inner); break;
  case NN_DTYPE_DOUBLE: cum_f64(p, x->data, y, outer, len, inner); break;
  case NN_DTYPE_FLOAT16: cum_f16(p, x->data, y, outer, len, inner); break;
  case NN_DTYPE_BFLOAT16: cum_bf16(p, x->data, y, outer, len, inner); break;
  case NN_DTYPE_INT32: cum_i32(p, x->data, y, outer, len, inner); break;
  case NN_DTYPE_INT64: cum_i64(p, x->data, y, outer, len, inner); break;
  case NN_DTYPE_UINT32: cum_u32(p, x->data, y, outer, len, inner); break;
  case NN_DTYPE_UINT64: cum_u64(p, x->data, y, outer, len, inner); break;
  default:
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s on %s is not supported", n->op_type,
                   nn_dtype_name(x->dtype));
  }
  return NN_OK;
}

#define RED_K(NAME) {.name = NAME, .prepare = reduce_prepare, .run = reduce_run}

const nn_kernel nn_kernels_reduce[] = {
  RED_K("ReduceSum"),
  RED_K("ReduceMean"),
  RED_K("ReduceMax"),
  RED_K("ReduceMin"),
  RED_K("ReduceProd"),
  RED_K("ReduceL1"),
  RED_K("ReduceL2"),
  RED_K("ReduceLogSum"),
  RED_K("ReduceLogSumExp"),
  RED_K("ReduceSumSquare"),
  {.name = "ArgMax", .prepare = arg_prepare, .run = arg_run},
  {.name = "ArgMin", .prepare = arg_prepare, .run = arg_run},
  {.name = "TopK", .prepare = topk_prepare, .run = topk_run},
  {.name = "CumSum", .prepare = cum_prepare, .run = cum_run},
  {.name = "CumProd", .prepare = cum_prepare, .run = cum_run},
  {0},
};
