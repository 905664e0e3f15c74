/* shape.c - ops that only relabel a tensor's shape or produce small constant
 * tensors: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (as
 * inference), Shape, Size, Constant, ConstantOfShape, Range, EyeLike.
 *
 * Reshape, Flatten, Squeeze, Unsqueeze and Identity are views: the planner
 * may alias their output to their input, in which case run has nothing to
 * do.  Their output shapes come from the op layer (ops/shape.c); prepare
 * only keeps what run copies out. */
#include "cpu/shp_common.h"
#include "ops/shape.h"

/* ---- Dropout ------------------------------------------------------------------
 * Inference only (ops/shape.h): the output is the input and the mask is all
 * ones; a training_mode or ratio unknown at prepare is checked at run. */

typedef struct dropout_priv {
  bool check_at_run;     /* training_mode or ratio were unknown at prepare */
} dropout_priv;

static nn_status dropout_prepare(nn_ctx *c, nn_node *n) {
  nn_value *r = shp_in(n, 1), *t = shp_in(n, 2);
  dropout_priv *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  p->check_at_run = (r && !r->data) || (t && !t->data);
  n->priv = p;
  return NN_OK;
}

static nn_status dropout_run(nn_ctx *c, nn_node *n) {
  const dropout_priv *p = n->priv;
  nn_status st;
  if (p && p->check_at_run && (st = nn_dropout_check(c, n, true)) != NN_OK)
    return st;
  shp_view_run(c, n);
  nn_value *mask = shp_out(n, 1);
  if (mask && mask->numel) {
    unsigned char one[16];
    shp_store_double(mask->dtype, 1.0, one);
    shp_fill(mask->data, one, nn_dtype_size(mask->dtype), mask->numel);
  }
  return NN_OK;
}

/* ---- Shape / Size --------------------------------------------------------------- */

static nn_status shape_run(nn_ctx *c, nn_node *n) {
  (void)c;
  int64_t s, e;
  nn_shape_range(n, &s, &e);
  int64_t *y = n->y[0]->data;
  for (int64_t i = s; i < e; i++)
    y[i - s] = n->x[0]->dims[i];
  return NN_OK;
}

static nn_status size_run(nn_ctx *c, nn_node *n) {
  (void)c;
  *(int64_t *)n->y[0]->data = n->x[0]->numel;
  return NN_OK;
}

/* ---- Constant -------------------------------------------------------------------- */

typedef struct constant_priv {
  const void *src;        /* graph-owned attribute storage */
  size_t nbytes;
  int64_t ival;           /* value_int */
  float fval;             /* value_float */
} constant_priv;

/* value_string(s): views on the graph-owned attribute strings, kept after
 * the priv header (nn_strings.h) */
static nn_status constant_strings(nn_ctx *c, nn_node *n, const nn_attr *one, const nn_attr *many) {
  int cnt = one ? 1 : many->n;
  constant_priv *p = nn_calloc(1, sizeof *p + (size_t)cnt * sizeof(nn_string));
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  nn_string *v = (nn_string *)(p + 1);
  for (int i = 0; i < cnt; i++) {
    v[i].data = one ? one->s : many->strings[i];
    v[i].len = one ? one->s_len : strlen(many->strings[i]);
  }
  p->src = v;
  p->nbytes = (size_t)cnt * sizeof(nn_string);
  return NN_OK;
}

/* The bytes run copies out, from the attribute infer took the value from
 * (ops/shape.h), which it checked. */
static nn_status constant_prepare(nn_ctx *c, nn_node *n) {
  nn_constant_kind kind = nn_constant_kind_of(n);
  if (kind == NN_CONSTANT_STRING)
    return constant_strings(c, n, nn_attr_get(n, "value_string"), NULL);
  if (kind == NN_CONSTANT_STRINGS)
    return constant_strings(c, n, NULL, nn_attr_get(n, "value_strings"));
  constant_priv *p = nn_calloc(1, sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  int cnt;
  switch (kind) {
  case NN_CONSTANT_TENSOR: {
    const nn_tensor *t = nn_attr_tensor(n, "value");
    p->src = t->data;
    p->nbytes = t->nbytes;
    break;
  }
  case NN_CONSTANT_FLOAT:
    p->fval = nn_attr_get(n, "value_float")->f;
    p->src = &p->fval;
    p->nbytes = sizeof p->fval;
    break;
  case NN_CONSTANT_INT:
    p->ival = nn_attr_get(n, "value_int")->i;
    p->src = &p->ival;
    p->nbytes = sizeof p->ival;
    break;
  case NN_CONSTANT_FLOATS:
    p->src = nn_attr_floats(n, "value_floats", &cnt);
    p->nbytes = (size_t)cnt * sizeof(float);
    break;
  case NN_CONSTANT_INTS:
    p->src = nn_attr_ints(n, "value_ints", &cnt);
    p->nbytes = (size_t)cnt * sizeof(int64_t);
    break;
  default:
    break;
  }
  return NN_OK;
}

static nn_status constant_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const constant_priv *p = n->priv;
  if (p->nbytes)
    memcpy(n->y[0]->data, p->src, p->nbytes);
  return NN_OK;
}

/* ---- ConstantOfShape ------------------------------------------------------------- */

typedef struct cos_priv {
  unsigned char val[16];
} cos_priv;

/* The fill element: value's (checked by infer), else a float 0. */
static nn_status cos_prepare(nn_ctx *c, nn_node *n) {
  cos_priv *p = nn_calloc(1, sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  const nn_tensor *t = nn_attr_tensor(n, "value");
  if (t)
    memcpy(p->val, t->data, nn_dtype_size(t->dtype));
  return NN_OK;
}

static nn_status cos_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const cos_priv *p = n->priv;
  nn_value *y = n->y[0];
  shp_fill(y->data, p->val, nn_dtype_size(y->dtype), y->numel);
  return NN_OK;
}

/* ---- Range ------------------------------------------------------------------------- */

static nn_status range_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_value *y = n->y[0];
  nn_dtype dt = y->dtype;
  size_t es = nn_dtype_size(dt);
  unsigned char *out = y->data;
  if (nn_dtype_is_float(dt)) {
    double s = nn_value_get_double(n->x[0], 0), d = nn_value_get_double(n->x[2], 0);
    for (int64_t i = 0; i < y->numel; i++)
      shp_store_double(dt, s + (double)i * d, out + (size_t)i * es);
    return NN_OK;
  }
  /* wrapping arithmetic in uint64 is exact for every in-range element */
  uint64_t s = (uint64_t)nn_value_get_int(n->x[0], 0), d = (uint64_t)nn_value_get_int(n->x[2], 0);
  for (int64_t i = 0; i < y->numel; i++) {
    uint64_t v = s + (uint64_t)i * d;
    switch (es) {
    case 1: { uint8_t t = (uint8_t)v; memcpy(out + i, &t, 1); break; }
    case 2: { uint16_t t = (uint16_t)v; memcpy(out + 2 * i, &t, 2); break; }
    case 4: { uint32_t t = (uint32_t)v; memcpy(out + 4 * i, &t, 4); break; }
    default: memcpy(out + 8 * i, &v, 8); break;
    }
  }
  return NN_OK;
}

/* ---- EyeLike ------------------------------------------------------------------------- */

static nn_status eyelike_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_value *y = n->y[0];
  size_t es = nn_dtype_size(y->dtype);
  int64_t rows = y->dims[0], cols = y->dims[1];
  int64_t k = nn_attr_int(n, "k", 0);
  unsigned char one[16];
  shp_store_double(y->dtype, 1.0, one);
  memset(y->data, 0, y->nbytes);
  unsigned char *out = y->data;
  for (int64_t i = 0; i < rows; i++) {
    /* j = i + k, computed without overflow for any k */
    if (k >= cols || k <= -rows)
      break;
    int64_t j = i + k;
    if (j >= 0 && j < cols)
      memcpy(out + ((size_t)i * (size_t)cols + (size_t)j) * es, one, es);
  }
  return NN_OK;
}

const nn_kernel nn_kernels_shape[] = {
  {.name = "Reshape", .run = shp_view_run},
  {.name = "Flatten", .run = shp_view_run},
  {.name = "Squeeze", .run = shp_view_run},
  {.name = "Unsqueeze", .run = shp_view_run},
  {.name = "Identity", .run = shp_view_run},
  {.name = "Dropout", .prepare = dropout_prepare, .run = dropout_run},
  {.name = "Shape", .run = shape_run},
  {.name = "Size", .run = size_run},
  {.name = "Constant", .prepare = constant_prepare, .run = constant_run},
  {.name = "ConstantOfShape", .prepare = cos_prepare, .run = cos_run},
  {.name = "Range", .run = range_run},
  {.name = "EyeLike", .run = eyelike_run},
  {0},
};
