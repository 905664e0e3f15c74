/* unary.c - elementwise operators of one tensor: math functions,
 * activations, Not/BitwiseNot, IsNaN/IsInf and Clip.
 *
 * Each operator is a case of a kernel per compute domain (ew_conv.h): the
 * float and double kernels come from one template (ew_un_tmpl.h), the few
 * integer operators are written below.  float32, double, int64 and uint64
 * tensors are processed in place in one flat loop per thread; float16,
 * bfloat16 and narrow integers go through stack chunks converted to and from
 * their domain.
 */
#include <math.h>
#include <string.h>

#include "cpu/ew_conv.h"
#include "cpu/ops.h"
#include "cpu/vmath.h"
#include "ops/unary.h"

typedef enum un_kind {
  UN_ABS = 1,
  UN_NEG,
  UN_CEIL,
  UN_FLOOR,
  UN_ROUND,
  UN_SQRT,
  UN_EXP,
  UN_LOG,
  UN_RECIPROCAL,
  UN_SIGN,
  UN_SIGMOID_K,
  UN_TANH,
  UN_ERF,
  UN_RELU,
  UN_LEAKYRELU,
  UN_ELU,
  UN_SELU,
  UN_CELU,
  UN_THRESHOLDEDRELU,
  UN_HARDSIGMOID,
  UN_HARDSWISH,
  UN_SOFTPLUS_K,
  UN_SOFTSIGN,
  UN_SHRINK,
  UN_SIN,
  UN_COS,
  UN_TAN,
  UN_ASIN,
  UN_ACOS,
  UN_ATAN,
  UN_SINH,
  UN_COSH,
  UN_ASINH,
  UN_ACOSH,
  UN_ATANH,
  UN_GELU,
  UN_GELU_TANH,
  UN_MISH,
  UN_SWISH,
  UN_CLIP,
  UN_ISNAN,
  UN_ISINF,
  UN_NOT,
  UN_BITNOT,
} un_kind;

typedef struct un_args {
  nn_unary_attrs u;            /* the attributes (ops/unary.h) */
  /* Clip bounds in the domain of X */
  double lo_f, hi_f;
  int64_t lo_i, hi_i;
  uint64_t lo_u, hi_u;
} un_args;

#define UN_SQRT1_2 0.70710678118654752440
#define UN_SQRT_2_PI 0.79788456080286535588 /* sqrt(2/pi) */

#define UN_CLAMP01(t) ((t) < 0 ? 0 : (t) > 1 ? 1 : (t))
/* max(v, lo) then min(., hi): when lo > hi everything becomes hi, as numpy's
 * clip and the ONNX reference do. */
#define UN_CLAMP(v, lo, hi) ((v) < (lo) ? ((lo) > (hi) ? (hi) : (lo)) : (v) > (hi) ? (hi) : (v))

#define UN_LOOP(EXPR)                                                              \
  do {                                                                             \
    for (int64_t i_ = 0; i_ < n; i_++) {                                           \
      const UT v = x[i_];                                                          \
      y[i_] = (EXPR);                                                              \
    }                                                                              \
  } while (0)

#define UT float
#define UM(fn) fn##f
#define UFN un_kernel_f32_libm
#include "cpu/ew_un_tmpl.h"
#undef UT
#undef UM
#undef UFN

/* float32: the transcendental activations on the vector path (vmath.h),
 * the rest (and everything on the portable path) through libm. */
static void un_kernel_f32(int kind, const un_args *p, const void *x, void *y, int64_t n) {
  int f = -1;
  switch (kind) {
  case UN_EXP: f = NN_VM_EXP; break;
  case UN_SIGMOID_K: f = NN_VM_SIGMOID; break;
  case UN_TANH: f = NN_VM_TANH; break;
  case UN_ERF: f = NN_VM_ERF; break;
  case UN_GELU: f = NN_VM_GELU; break;
  case UN_SWISH: f = p->u.alpha == 1.0f ? NN_VM_SILU : -1; break;
  default: break;
  }
  if (f < 0 || !nn_vmath_f32((nn_vmath_fn)f, x, y, n))
    un_kernel_f32_libm(kind, p, x, y, n);
}

#define UT double
#define UM(fn) fn
#define UFN un_kernel_f64
#include "cpu/ew_un_tmpl.h"
#undef UT
#undef UM
#undef UFN

/* Integer kernels: negation wraps (computed on uint64), so the most negative
 * value stays itself as in two's complement hardware. */
static void un_kernel_i64(int kind, const un_args *p, const void *xv, void *yv, int64_t n) {
  const int64_t *x = xv;
  int64_t *y = yv;
#define UT int64_t
  switch (kind) {
  case UN_ABS: UN_LOOP(v < 0 ? (int64_t)(0 - (uint64_t)v) : v); break;
  case UN_NEG: UN_LOOP((int64_t)(0 - (uint64_t)v)); break;
  case UN_SIGN: UN_LOOP(v > 0 ? 1 : v < 0 ? -1 : 0); break;
  case UN_RELU: UN_LOOP(v < 0 ? 0 : v); break;
  case UN_BITNOT: UN_LOOP(~v); break;
  case UN_CLIP: {
    const int64_t lo = p->lo_i, hi = p->hi_i;
    UN_LOOP(UN_CLAMP(v, lo, hi));
    break;
  }
  default: break;
  }
#undef UT
}

static void un_kernel_u64(int kind, const un_args *p, const void *xv, void *yv, int64_t n) {
  const uint64_t *x = xv;
  uint64_t *y = yv;
#define UT uint64_t
  switch (kind) {
  case UN_ABS: case UN_RELU: UN_LOOP(v); break;
  case UN_NEG: UN_LOOP(0 - v); break;
  case UN_SIGN: UN_LOOP(v != 0); break;
  case UN_BITNOT: UN_LOOP(~v); break;
  case UN_NOT: UN_LOOP(v == 0); break;
  case UN_CLIP: {
    const uint64_t lo = p->lo_u, hi = p->hi_u;
    UN_LOOP(UN_CLAMP(v, lo, hi));
    break;
  }
  default: break;
  }
#undef UT
}

typedef void (*un_kernel)(int kind, const un_args *p, const void *x, void *y, int64_t n);

static un_kernel un_kernel_for(ew_dom d) {
  switch (d) {
  case EW_F32: return un_kernel_f32;
  case EW_F64: return un_kernel_f64;
  case EW_I64: return un_kernel_i64;
  case EW_U64: return un_kernel_u64;
  default: return NULL;
  }
}

/* ---- operator descriptions -------------------------------------------------- */

/* The kernel of each operator; the dtypes each takes are the op layer's
 * (ops/unary.c). */
typedef struct un_desc {
  const char *name;
  int kind;
} un_desc;

static const un_desc un_descs[] = {
  {"Abs", UN_ABS},
  {"Neg", UN_NEG},
  {"Ceil", UN_CEIL},
  {"Floor", UN_FLOOR},
  {"Round", UN_ROUND},
  {"Sqrt", UN_SQRT},
  {"Exp", UN_EXP},
  {"Log", UN_LOG},
  {"Reciprocal", UN_RECIPROCAL},
  {"Sign", UN_SIGN},
  {"Sigmoid", UN_SIGMOID_K},
  {"Tanh", UN_TANH},
  {"Erf", UN_ERF},
  {"Relu", UN_RELU},
  {"LeakyRelu", UN_LEAKYRELU},
  {"Elu", UN_ELU},
  {"Selu", UN_SELU},
  {"Celu", UN_CELU},
  {"ThresholdedRelu", UN_THRESHOLDEDRELU},
  {"HardSigmoid", UN_HARDSIGMOID},
  {"HardSwish", UN_HARDSWISH},
  {"Softplus", UN_SOFTPLUS_K},
  {"Softsign", UN_SOFTSIGN},
  {"Shrink", UN_SHRINK},
  {"Sin", UN_SIN},
  {"Cos", UN_COS},
  {"Tan", UN_TAN},
  {"Asin", UN_ASIN},
  {"Acos", UN_ACOS},
  {"Atan", UN_ATAN},
  {"Sinh", UN_SINH},
  {"Cosh", UN_COSH},
  {"Asinh", UN_ASINH},
  {"Acosh", UN_ACOSH},
  {"Atanh", UN_ATANH},
  {"Gelu", UN_GELU},
  {"Mish", UN_MISH},
  {"Swish", UN_SWISH},
  {"Clip", UN_CLIP},
  {"IsNaN", UN_ISNAN},
  {"IsInf", UN_ISINF},
  {"Not", UN_NOT},
  {"BitwiseNot", UN_BITNOT},
};

static const un_desc *un_find(const char *name) {
  for (size_t i = 0; i < sizeof un_descs / sizeof un_descs[0]; i++)
    if (strcmp(un_descs[i].name, name) == 0)
      return &un_descs[i];
  return NULL;
}

typedef struct un_priv {
  int kind;
  bool to_bool;
  bool clip_inputs;            /* Clip-11+: bounds come from inputs 1 and 2 */
  ew_dom d;
  un_args args;
} un_priv;

/* Clip bounds as given (attribute or input) into every representation;
 * absent bounds are the whole range of the domain. */
static void un_clip_defaults(un_args *a) {
  a->lo_f = -INFINITY;
  a->hi_f = INFINITY;
  a->lo_i = INT64_MIN;
  a->hi_i = INT64_MAX;
  a->lo_u = 0;
  a->hi_u = UINT64_MAX;
}

static void un_clip_set(un_args *a, ew_dom d, const void *v, bool is_hi) {
  switch (d) {
  case EW_F32: *(is_hi ? &a->hi_f : &a->lo_f) = *(const float *)v; break;
  case EW_F64: *(is_hi ? &a->hi_f : &a->lo_f) = *(const double *)v; break;
  case EW_I64: *(is_hi ? &a->hi_i : &a->lo_i) = *(const int64_t *)v; break;
  case EW_U64: *(is_hi ? &a->hi_u : &a->lo_u) = *(const uint64_t *)v; break;
  default: break;
  }
}

/* The op layer checked the inputs and their dtypes and set Y (ops/unary.c):
 * every dtype it admits has a compute domain here. */
static nn_status un_prepare(nn_ctx *c, nn_node *n) {
  const un_desc *d = un_find(n->op->name);
  if (!d)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "no elementwise kernel for this op");
  const nn_value *x = n->x[0];
  /* IsNaN / IsInf: the kernel writes the bool Y itself */
  un_priv pr = {.kind = d->kind, .to_bool = n->y[0]->dtype != x->dtype, .d = ew_dom_of(x->dtype)};
  un_args *a = &pr.args;
  /* the attributes' meaning and defaults are the op layer's (ops/unary.h) */
  nn_status ust = nn_unary_attrs_init(c, n, &a->u);
  if (ust != NN_OK)
    return ust;
  if (d->kind == UN_GELU && a->u.gelu_tanh)
    pr.kind = UN_GELU_TANH;
  switch (d->kind) {
  case UN_CLIP:
    un_clip_defaults(a);
    if (n->version < 11) {
      /* Clip-1/6: float attributes; integer X only reaches here from
       * malformed models, saturate the bounds rather than misbehave. */
      const nn_unary_attrs *u = &a->u;
      if (u->has_min) {
        float lo = (float)u->clip_min;
        a->lo_f = lo;
        a->lo_i = ew_f64_to_i64(ceil(lo));
        a->lo_u = lo <= 0 ? 0 : ew_f64_to_u64(ceil(lo));
      }
      if (u->has_max) {
        float hi = (float)u->clip_max;
        a->hi_f = hi;
        a->hi_i = ew_f64_to_i64(floor(hi));
        a->hi_u = hi < 0 ? 0 : ew_f64_to_u64(floor(hi));
      }
    } else {
      for (int i = 1; i < n->n_in; i++)
        if (n->x[i])
          pr.clip_inputs = true;
    }
    break;
  default:
    break;
  }

  un_priv *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *p = pr;
  n->priv = p;
  return NN_OK;
}

typedef struct un_exec {
  int kind;
  const un_args *args;
  un_kernel kern;
  ew_dom d;
  bool direct;
  bool to_bool;
  nn_dtype dx, dy;
  const char *x;
  char *y;
  size_t ex, ey;
} un_exec;

static void un_range(void *arg, int64_t begin, int64_t end) {
  const un_exec *e = arg;
  const char *x = e->x + begin * (int64_t)e->ex;
  char *y = e->y + begin * (int64_t)e->ey;
  const int64_t len = end - begin;
  if (e->direct) {
    e->kern(e->kind, e->args, x, y, len);
    return;
  }
  uint64_t bx[EW_CHUNK], by[EW_CHUNK], tmp[EW_CHUNK];
  for (int64_t i = 0; i < len; i += EW_CHUNK) {
    int64_t m = len - i < EW_CHUNK ? len - i : EW_CHUNK;
    const void *cx = ew_fetch(e->dx, x + i * (int64_t)e->ex, m, e->d, bx, tmp);
    char *yi = y + i * (int64_t)e->ey;
    if (e->to_bool) {
      e->kern(e->kind, e->args, cx, yi, m);
    } else {
      e->kern(e->kind, e->args, cx, by, m);
      ew_put(e->d, by, e->dy, yi, m, tmp);
    }
  }
}

static nn_status un_run(nn_ctx *c, nn_node *n) {
  const un_priv *p = n->priv;
  const nn_value *x = n->x[0];
  nn_value *y = n->y[0];
  un_args args = p->args;
  if (p->clip_inputs) {
    /* Bounds may be computed tensors: read them now. */
    uint64_t buf[1], tmp[1];
    for (int i = 1; i < n->n_in; i++)
      if (n->x[i])
        un_clip_set(&args, p->d, ew_fetch(x->dtype, n->x[i]->data, 1, p->d, buf, tmp), i == 2);
  }
  un_exec e = {
    .kind = p->kind, .args = &args, .kern = un_kernel_for(p->d), .d = p->d,
    .to_bool = p->to_bool, .dx = x->dtype, .dy = y->dtype, .x = x->data, .y = y->data,
    .ex = nn_dtype_size(x->dtype), .ey = nn_dtype_size(y->dtype),
  };
  e.direct = ew_native(x->dtype, p->d) && (p->to_bool || ew_native(y->dtype, p->d));
  if (x->numel > 0)
    nn_parallel_for(c, x->numel, EW_GRAIN, un_range, &e);
  return NN_OK;
}

#define UN_K(NAME) {.name = NAME, .prepare = un_prepare, .run = un_run}

const nn_kernel nn_kernels_unary[] = {
  UN_K("Abs"),
  UN_K("Neg"),
  UN_K("Ceil"),
  UN_K("Floor"),
  UN_K("Round"),
  UN_K("Sqrt"),
  UN_K("Exp"),
  UN_K("Log"),
  UN_K("Reciprocal"),
  UN_K("Sign"),
  UN_K("Sigmoid"),
  UN_K("Tanh"),
  UN_K("Erf"),
  UN_K("Relu"),
  UN_K("LeakyRelu"),
  UN_K("Elu"),
  UN_K("Selu"),
  UN_K("Celu"),
  UN_K("ThresholdedRelu"),
  UN_K("HardSigmoid"),
  UN_K("HardSwish"),
  UN_K("Softplus"),
  UN_K("Softsign"),
  UN_K("Shrink"),
  UN_K("Sin"),
  UN_K("Cos"),
  UN_K("Tan"),
  UN_K("Asin"),
  UN_K("Acos"),
  UN_K("Atan"),
  UN_K("Sinh"),
  UN_K("Cosh"),
  UN_K("Asinh"),
  UN_K("Acosh"),
  UN_K("Atanh"),
  UN_K("Not"),
  UN_K("IsNaN"),
  UN_K("IsInf"),
  UN_K("Gelu"),
  UN_K("Mish"),
  UN_K("Swish"),
  UN_K("BitwiseNot"),
  UN_K("Clip"),
  {0},
};
