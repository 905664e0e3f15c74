/* gather.c - indexed reads and writes: Gather, GatherElements, GatherND,
 * Scatter / ScatterElements, ScatterND, OneHot, TensorScatter (the KV-cache
 * update of opset 24).
 *
 * Indices come from the data at run time, so each kernel checks every index
 * against its axis before touching memory and fails with NN_ERR_RUNTIME on
 * the first one out of range.  Copies work on element size; only the scatter
 * reductions (add/mul/max/min) look at the element type.  The output shapes
 * come from the op layer (ops/gather.c). */
#include "cpu/shp_common.h"
#include "ops/gather.h"

/* Copy one element or block of `n` bytes; small fixed sizes avoid the call. */
static inline void gat_copy(unsigned char *d, const unsigned char *s, size_t n) {
  switch (n) {
  case 1: *d = *s; break;
  case 2: memcpy(d, s, 2); break;
  case 4: memcpy(d, s, 4); break;
  case 8: memcpy(d, s, 8); break;
  default: memcpy(d, s, n);
  }
}

/* Normalized index i of `v` along an axis of length len, or -1. */
static inline int64_t gat_index(const nn_value *v, int64_t i, int64_t len) {
  int64_t k = shp_index_at(v, i);
  if (k < 0)
    k += len;
  return k >= 0 && k < len ? k : -1;
}

static nn_status gat_check_indices(nn_ctx *c, const nn_value *idx, int64_t len, int64_t count,
                                   int64_t stride) {
  for (int64_t i = 0; i < count; i++) {
    if (gat_index(idx, i * stride, len) < 0)
      return nn_fail(c, NN_ERR_RUNTIME, "index %lld is out of range for an axis of length %lld",
                     (long long)shp_index_at(idx, i * stride), (long long)len);
  }
  return NN_OK;
}

/* ---- Gather ----------------------------------------------------------------- */

typedef struct gather_priv {
  int64_t outer, len, nidx;
  size_t inner;           /* bytes per gathered block */
} gather_priv;

static nn_status gather_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *idx = n->x[1];
  int r = x->rank, axis;
  nn_norm_axis(nn_attr_int(n, "axis", 0), r, &axis);
  gather_priv *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  p->outer = nn_dims_numel(axis, x->dims);
  p->len = x->dims[axis];
  p->nidx = idx->numel;
  p->inner = (size_t)nn_dims_numel(r - axis - 1, x->dims + axis + 1) * nn_dtype_size(x->dtype);
  /* constant indices: report a bad one now rather than at the first run */
  if (idx->data)
    return gat_check_indices(c, idx, p->len, idx->numel, 1);
  return NN_OK;
}

typedef struct gather_job {
  const gather_priv *p;
  const nn_value *idx;
  const unsigned char *x;
  unsigned char *y;
} gather_job;

static void gather_range(void *arg, int64_t begin, int64_t end) {
  const gather_job *j = arg;
  const gather_priv *p = j->p;
  for (int64_t t = begin; t < end; t++) {
    int64_t o = t / p->nidx, i = t % p->nidx;
    int64_t k = gat_index(j->idx, i, p->len);
    gat_copy(j->y + (size_t)t * p->inner, j->x + (size_t)(o * p->len + k) * p->inner, p->inner);
  }
}

static nn_status gather_run(nn_ctx *c, nn_node *n) {
  const gather_priv *p = n->priv;
  nn_status st = gat_check_indices(c, n->x[1], p->len, p->nidx, 1);
  if (st != NN_OK || p->inner == 0 || p->outer * p->nidx == 0)
    return st;
  gather_job j = {p, n->x[1], n->x[0]->data, n->y[0]->data};
  nn_parallel_for(c, p->outer * p->nidx, shp_grain_rows(p->inner), gather_range, &j);
  return NN_OK;
}

/* ---- GatherElements ----------------------------------------------------------- */

typedef struct gel_priv {
  int rank, axis;
  int64_t dstr[NN_MAX_RANK];     /* data element strides */
  int64_t len;                   /* data axis length */
  size_t es;
} gel_priv;

static nn_status gel_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  int r = x->rank, axis;
  nn_norm_axis(nn_attr_int(n, "axis", 0), r, &axis);
  gel_priv *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  p->rank = r;
  p->axis = axis;
  p->len = x->dims[axis];
  p->es = nn_dtype_size(x->dtype);
  shp_strides(r, x->dims, p->dstr);
  return NN_OK;
}

static nn_status gel_run(nn_ctx *c, nn_node *n) {
  const gel_priv *p = n->priv;
  nn_value *idx = n->x[1];
  nn_status st = gat_check_indices(c, idx, p->len, idx->numel, 1);
  if (st != NN_OK)
    return st;
  const unsigned char *x = n->x[0]->data;
  unsigned char *y = n->y[0]->data;
  int64_t cnt[NN_MAX_RANK] = {0};
  const int r = p->rank;
  for (int64_t t = 0; t < idx->numel; t++) {
    int64_t off = 0;
    for (int d = 0; d < r; d++)
      off += (d == p->axis ? gat_index(idx, t, p->len) : cnt[d]) * p->dstr[d];
    gat_copy(y + (size_t)t * p->es, x + (size_t)off * p->es, p->es);
    for (int d = r - 1; d >= 0; d--) {
      if (++cnt[d] < idx->dims[d])
        break;
      cnt[d] = 0;
    }
  }
  return NN_OK;
}

/* ---- GatherND -------------------------------------------------------------------- */

typedef struct gnd_priv {
  int64_t batches;       /* product of the batch dims */
  int64_t tuples;        /* index tuples per batch */
  int k;                 /* tuple length */
  int64_t dims[NN_MAX_RANK];     /* data dims addressed by a tuple */
  int64_t str[NN_MAX_RANK];      /* their strides, in slices */
  int64_t batch_elems;   /* data elements per batch */
  size_t slice;          /* bytes per gathered slice */
} gnd_priv;

static nn_status gnd_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *idx = n->x[1];
  int r = x->rank, q = idx->rank;
  int64_t b = n->version >= 12 ? nn_attr_int(n, "batch_dims", 0) : 0;
  int64_t k = idx->dims[q - 1];
  gnd_priv *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  int64_t slice = nn_dims_numel(r - (int)(b + k), x->dims + b + k);
  p->batches = nn_dims_numel((int)b, x->dims);
  p->tuples = nn_dims_numel(q - 1 - (int)b, idx->dims + b);
  p->k = (int)k;
  p->batch_elems = nn_dims_numel(r - (int)b, x->dims + b);
  p->slice = (size_t)slice * nn_dtype_size(x->dtype);
  int64_t s = 1;
  for (int d = (int)k - 1; d >= 0; d--) {
    p->dims[d] = x->dims[b + d];
    p->str[d] = s;
    s *= p->dims[d];
  }
  return NN_OK;
}

/* Slice offset of tuple t (in slices), or -1 when an index is out of range. */
static int64_t gnd_tuple(const gnd_priv *p, const nn_value *idx, int64_t t, int *bad) {
  int64_t off = 0;
  for (int j = 0; j < p->k; j++) {
    int64_t v = gat_index(idx, t * p->k + j, p->dims[j]);
    if (v < 0) {
      *bad = j;
      return -1;
    }
    off += v * p->str[j];
  }
  return off;
}

static nn_status gnd_run(nn_ctx *c, nn_node *n) {
  const gnd_priv *p = n->priv;
  nn_value *idx = n->x[1];
  const unsigned char *x = n->x[0]->data;
  unsigned char *y = n->y[0]->data;
  int64_t total = p->batches * p->tuples;
  for (int64_t t = 0; t < total; t++) {
    int bad = 0;
    if (gnd_tuple(p, idx, t, &bad) < 0)
      return nn_fail(c, NN_ERR_RUNTIME, "index %lld is out of range for an axis of length %lld",
                     (long long)shp_index_at(idx, t * p->k + bad), (long long)p->dims[bad]);
  }
  if (p->slice == 0)
    return NN_OK;
  const size_t batch_bytes = (size_t)p->batch_elems * nn_dtype_size(n->x[0]->dtype);
  for (int64_t t = 0; t < total; t++) {
    int bad = 0;
    int64_t off = gnd_tuple(p, idx, t, &bad);
    memcpy(y + (size_t)t * p->slice, x + (size_t)(t / p->tuples) * batch_bytes + (size_t)off * p->slice,
           p->slice);
  }
  return NN_OK;
}

/* ---- scatter reductions ------------------------------------------------------------ */

typedef void (*scat_fn)(void *dst, const void *src);

#define SCAT_DEFINE(NAME, T)                                                                  \
  static void scat_add_##NAME(void *d, const void *s) {                                       \
    T a, b; memcpy(&a, d, sizeof a); memcpy(&b, s, sizeof b); a = (T)(a + b); memcpy(d, &a, sizeof a); \
  }                                                                                           \
  static void scat_mul_##NAME(void *d, const void *s) {                                       \
    T a, b; memcpy(&a, d, sizeof a); memcpy(&b, s, sizeof b); a = (T)(a * b); memcpy(d, &a, sizeof a); \
  }                                                                                           \
  static void scat_max_##NAME(void *d, const void *s) {                                       \
    T a, b; memcpy(&a, d, sizeof a); memcpy(&b, s, sizeof b); if (b > a) memcpy(d, &b, sizeof b); \
  }                                                                                           \
  static void scat_min_##NAME(void *d, const void *s) {                                       \
    T a, b; memcpy(&a, d, sizeof a); memcpy(&b, s, sizeof b); if (b < a) memcpy(d, &b, sizeof b); \
  }

SCAT_DEFINE(f32, float)
SCAT_DEFINE(f64, double)
SCAT_DEFINE(i8, int8_t)
SCAT_DEFINE(u8, uint8_t)
SCAT_DEFINE(i16, int16_t)
SCAT_DEFINE(u16, uint16_t)
SCAT_DEFINE(i32, int32_t)
SCAT_DEFINE(u32, uint32_t)
SCAT_DEFINE(i64, int64_t)
SCAT_DEFINE(u64, uint64_t)

#define SCAT_HALF(NAME, TOF, FROMF)                                                           \
  static void scat_add_##NAME(void *d, const void *s) {                                       \
    uint16_t a, b; memcpy(&a, d, 2); memcpy(&b, s, 2); a = FROMF(TOF(a) + TOF(b)); memcpy(d, &a, 2); \
  }                                                                                           \
  static void scat_mul_##NAME(void *d, const void *s) {                                       \
    uint16_t a, b; memcpy(&a, d, 2); memcpy(&b, s, 2); a = FROMF(TOF(a) * TOF(b)); memcpy(d, &a, 2); \
  }                                                                                           \
  static void scat_max_##NAME(void *d, const void *s) {                                       \
    uint16_t a, b; memcpy(&a, d, 2); memcpy(&b, s, 2); if (TOF(b) > TOF(a)) memcpy(d, &b, 2);  \
  }                                                                                           \
  static void scat_min_##NAME(void *d, const void *s) {                                       \
    uint16_t a, b; memcpy(&a, d, 2); memcpy(&b, s, 2); if (TOF(b) < TOF(a)) memcpy(d, &b, 2);  \
  }

SCAT_HALF(f16, nn_f16_to_f32, nn_f32_to_f16)
SCAT_HALF(bf16, nn_bf16_to_f32, nn_f32_to_bf16)

static void scat_or_bool(void *d, const void *s) {
  *(uint8_t *)d = (*(uint8_t *)d | *(const uint8_t *)s) != 0;
}
static void scat_and_bool(void *d, const void *s) {
  *(uint8_t *)d = (*(uint8_t *)d && *(const uint8_t *)s);
}

static scat_fn scat_pick(nn_dtype dt, int red) {
#define SCAT_CASE(DT, NAME)                                                                  \
  case DT:                                                                                    \
    return red == NN_SCATTER_ADD ? scat_add_##NAME : red == NN_SCATTER_MUL ? scat_mul_##NAME                \
         : red == NN_SCATTER_MAX ? scat_max_##NAME : scat_min_##NAME;
  switch (dt) {
  SCAT_CASE(NN_DTYPE_FLOAT, f32)
  SCAT_CASE(NN_DTYPE_DOUBLE, f64)
  SCAT_CASE(NN_DTYPE_INT8, i8)
  SCAT_CASE(NN_DTYPE_UINT8, u8)
  SCAT_CASE(NN_DTYPE_INT16, i16)
  SCAT_CASE(NN_DTYPE_UINT16, u16)
  SCAT_CASE(NN_DTYPE_INT32, i32)
  SCAT_CASE(NN_DTYPE_UINT32, u32)
  SCAT_CASE(NN_DTYPE_INT64, i64)
  SCAT_CASE(NN_DTYPE_UINT64, u64)
  SCAT_CASE(NN_DTYPE_FLOAT16, f16)
  SCAT_CASE(NN_DTYPE_BFLOAT16, bf16)
  case NN_DTYPE_BOOL:
    return red == NN_SCATTER_ADD || red == NN_SCATTER_MAX ? scat_or_bool : scat_and_bool;
  default:
    return NULL;
  }
#undef SCAT_CASE
}

/* The reduction (ops/gather.h), refused on a dtype it has no function for. */
static nn_status scat_reduction(nn_ctx *c, nn_node *n, int *red) {
  nn_status st = nn_scatter_reduction(c, n, red);
  if (st == NN_OK && *red != NN_SCATTER_NONE && !scat_pick(n->x[0]->dtype, *red))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "reduction '%s' on %s is not supported",
                   nn_attr_string(n, "reduction", "none"), nn_dtype_name(n->x[0]->dtype));
  return st;
}

typedef struct scat_priv {
  int red;
  size_t es;
  int rank, axis;
  int64_t len;
  int64_t dstr[NN_MAX_RANK];     /* data element strides */
} scat_priv;

/* ---- ScatterElements / Scatter ----------------------------------------------------- */

static nn_status scel_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  int r = x->rank, axis;
  nn_norm_axis(nn_attr_int(n, "axis", 0), r, &axis);
  scat_priv *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  nn_status st = scat_reduction(c, n, &p->red);
  if (st != NN_OK)
    return st;
  p->es = nn_dtype_size(x->dtype);
  p->rank = r;
  p->axis = axis;
  p->len = x->dims[axis];
  shp_strides(r, x->dims, p->dstr);
  return NN_OK;
}

static nn_status scel_run(nn_ctx *c, nn_node *n) {
  const scat_priv *p = n->priv;
  nn_value *x = n->x[0], *idx = n->x[1], *upd = n->x[2], *y = n->y[0];
  nn_status st = gat_check_indices(c, idx, p->len, idx->numel, 1);
  if (st != NN_OK)
    return st;
  if (y->data != x->data)
    memcpy(y->data, x->data, y->nbytes);
  scat_fn fn = p->red == NN_SCATTER_NONE ? NULL : scat_pick(x->dtype, p->red);
  unsigned char *yd = y->data;
  const unsigned char *ud = upd->data;
  int64_t cnt[NN_MAX_RANK] = {0};
  const int r = p->rank;
  for (int64_t t = 0; t < idx->numel; t++) {
    int64_t off = 0;
    for (int d = 0; d < r; d++)
      off += (d == p->axis ? gat_index(idx, t, p->len) : cnt[d]) * p->dstr[d];
    unsigned char *dst = yd + (size_t)off * p->es;
    if (fn)
      fn(dst, ud + (size_t)t * p->es);
    else
      gat_copy(dst, ud + (size_t)t * p->es, p->es);
    for (int d = r - 1; d >= 0; d--) {
      if (++cnt[d] < idx->dims[d])
        break;
      cnt[d] = 0;
    }
  }
  return NN_OK;
}

/* ---- ScatterND ------------------------------------------------------------------------ */

typedef struct snd_priv {
  int red;
  size_t es;
  int k;
  int64_t dims[NN_MAX_RANK];    /* data dims addressed by a tuple */
  int64_t str[NN_MAX_RANK];     /* their strides, in slices */
  int64_t slice;                /* elements per slice */
  int64_t tuples;
} snd_priv;

static nn_status snd_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *idx = n->x[1];
  int r = x->rank, q = idx->rank;
  int64_t k = idx->dims[q - 1];
  snd_priv *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  nn_status st = scat_reduction(c, n, &p->red);
  if (st != NN_OK)
    return st;
  p->es = nn_dtype_size(x->dtype);
  p->k = (int)k;
  p->slice = nn_dims_numel(r - (int)k, x->dims + k);
  p->tuples = nn_dims_numel(q - 1, idx->dims);
  int64_t s = 1;
  for (int d = (int)k - 1; d >= 0; d--) {
    p->dims[d] = x->dims[d];
    p->str[d] = s;
    s *= p->dims[d];
  }
  return NN_OK;
}

static nn_status snd_run(nn_ctx *c, nn_node *n) {
  const snd_priv *p = n->priv;
  nn_value *x = n->x[0], *idx = n->x[1], *upd = n->x[2], *y = n->y[0];
  for (int64_t t = 0; t < p->tuples; t++)
    for (int j = 0; j < p->k; j++)
      if (gat_index(idx, t * p->k + j, p->dims[j]) < 0)
        return nn_fail(c, NN_ERR_RUNTIME, "index %lld is out of range for an axis of length %lld",
                       (long long)shp_index_at(idx, t * p->k + j), (long long)p->dims[j]);
  if (y->data != x->data)
    memcpy(y->data, x->data, y->nbytes);
  scat_fn fn = p->red == NN_SCATTER_NONE ? NULL : scat_pick(x->dtype, p->red);
  unsigned char *yd = y->data;
  const unsigned char *ud = upd->data;
  const size_t sb = (size_t)p->slice * p->es;
  for (int64_t t = 0; t < p->tuples; t++) {
    int64_t off = 0;
    for (int j = 0; j < p->k; j++)
      off += gat_index(idx, t * p->k + j, p->dims[j]) * p->str[j];
    unsigned char *dst = yd + (size_t)off * sb;
    const unsigned char *src = ud + (size_t)t * sb;
    if (!fn) {
      memcpy(dst, src, sb);
      continue;
    }
    for (int64_t e = 0; e < p->slice; e++)
      fn(dst + (size_t)e * p->es, src + (size_t)e * p->es);
  }
  return NN_OK;
}

/* ---- OneHot ------------------------------------------------------------------------------ */

typedef struct onehot_priv {
  int64_t depth, outer, inner;
  size_t es;
} onehot_priv;

static nn_status onehot_prepare(nn_ctx *c, nn_node *n) {
  nn_value *idx = n->x[0], *vals = n->x[2];
  int q = idx->rank, axis;
  nn_norm_axis(nn_attr_int(n, "axis", -1), q + 1, &axis);
  onehot_priv *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  p->depth = n->y[0]->dims[axis];
  p->outer = nn_dims_numel(axis, idx->dims);
  p->inner = nn_dims_numel(q - axis, idx->dims + axis);
  p->es = nn_dtype_size(vals->dtype);
  return NN_OK;
}

static nn_status onehot_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const onehot_priv *p = n->priv;
  nn_value *idx = n->x[0], *vals = n->x[2], *y = n->y[0];
  const unsigned char *off = vals->data, *on = off + p->es;
  unsigned char *yd = y->data;
  shp_fill(yd, off, p->es, y->numel);
  bool is_float = nn_dtype_is_float(idx->dtype);
  for (int64_t o = 0; o < p->outer; o++) {
    for (int64_t i = 0; i < p->inner; i++) {
      int64_t t = o * p->inner + i, k;
      if (is_float) {
        double v = nn_value_get_double(idx, t);
        if (!(v > -9.0e18 && v < 9.0e18))
          continue;
        k = (int64_t)v;
      } else {
        k = nn_value_get_int(idx, t);
      }
      if (k < 0)
        k += p->depth;
      if (k < 0 || k >= p->depth)
        continue;
      memcpy(yd + (size_t)((o * p->depth + k) * p->inner + i) * p->es, on, p->es);
    }
  }
  return NN_OK;
}

/* ---- TensorScatter (24): update written into past_cache along `axis`, in
 * mode linear or circular (ops/gather.c). */
typedef struct tsc_params {
  int64_t B, outer, L, U, inner; /* outer: dims between batch and axis */
  size_t es;
  bool circular;
} tsc_params;

static nn_status tsc_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *past = n->x[0], *upd = n->x[1];
  int r = past->rank, ax;
  nn_norm_axis(nn_attr_int(n, "axis", -2), r, &ax);
  tsc_params *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *p = (tsc_params){
    .B = past->dims[0], .outer = nn_dims_numel(ax - 1, past->dims + 1), .L = past->dims[ax],
    .U = upd->dims[ax], .inner = nn_dims_numel(r - ax - 1, past->dims + ax + 1),
    .es = nn_dtype_size(past->dtype),
    .circular = strcmp(nn_attr_string(n, "mode", "linear"), "circular") == 0,
  };
  n->priv = p;
  return NN_OK;
}

static nn_status tsc_run(nn_ctx *c, nn_node *n) {
  const tsc_params *p = n->priv;
  const nn_value *past = n->x[0], *upd = n->x[1], *wi = n->n_in > 2 ? n->x[2] : NULL;
  nn_value *y = n->y[0];
  /* every index first, so a bad one leaves nothing half-written */
  for (int64_t b = 0; wi && b < p->B; b++) {
    int64_t k = shp_index_at(wi, b);
    if (k < 0 || k >= p->L || (!p->circular && k + p->U > p->L))
      return nn_fail(c, NN_ERR_RUNTIME, "write_indices[%lld] = %lld: %s", (long long)b,
                     (long long)k, k < 0 || k >= p->L ? "out of range for the cache length"
                                                      : "the update runs past the cache end "
                                                        "(mode linear)");
  }
  if (y->data != past->data && y->nbytes)
    memcpy(y->data, past->data, y->nbytes);
  const size_t row = (size_t)p->inner * p->es;
  unsigned char *yd = y->data;
  const unsigned char *ud = upd->data;
  for (int64_t b = 0; b < p->B; b++) {
    int64_t k0 = wi ? shp_index_at(wi, b) : 0;
    for (int64_t o = 0; o < p->outer; o++) {
      int64_t base = b * p->outer + o;
      for (int64_t s = 0; s < p->U; s++) {
        int64_t pos = p->circular ? (k0 + s) % p->L : k0 + s;
        memcpy(yd + ((size_t)(base * p->L + pos)) * row, ud + ((size_t)(base * p->U + s)) * row,
               row);
      }
    }
  }
  return NN_OK;
}

const nn_kernel nn_kernels_gather[] = {
  {.name = "Gather", .prepare = gather_prepare, .run = gather_run},
  {.name = "GatherElements", .prepare = gel_prepare, .run = gel_run},
  {.name = "GatherND", .prepare = gnd_prepare, .run = gnd_run},
  {.name = "ScatterElements", .prepare = scel_prepare, .run = scel_run},
  {.name = "Scatter", .prepare = scel_prepare, .run = scel_run},
  {.name = "ScatterND", .prepare = snd_prepare, .run = snd_run},
  {.name = "OneHot", .prepare = onehot_prepare, .run = onehot_run},
  {.name = "TensorScatter", .prepare = tsc_prepare, .run = tsc_run},
  {0},
};
