/* ml.c - the ai.onnx.ml operators the ONNX suite exercises:
 * ArrayFeatureExtractor (1), Binarizer (1), LabelEncoder (1, 2, 4) and
 * TreeEnsemble (5).
 *
 * The attributes are checked and the shapes inferred by the op layer
 * (ops/ml.h, ops/ml.c); prepare builds the label maps' sorted keys and the
 * ensembles' flat arrays in priv, which run follows without a check.
 * Indices that come from data (ArrayFeatureExtractor's) are checked at run
 * and fail with NN_ERR_RUNTIME. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu/kernel_util.h"
#include "nn_strings.h"
#include "ops/ml.h"

/* ---- ArrayFeatureExtractor: z[..., j] = x[..., y[j]] ------------------------ */
static nn_status afe_run(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0], *y = n->x[1];
  const int64_t C = x->dims[x->rank - 1], rows = C ? x->numel / C : 0, k = y->numel;
  const int64_t *idx = y->data;
  for (int64_t j = 0; j < k; j++)
    if (idx[j] < 0 || idx[j] >= C)
      return nn_fail(c, NN_ERR_RUNTIME, "index %lld (element %lld) is out of range [0, %lld)",
                     (long long)idx[j], (long long)j, (long long)C);
  const size_t es = nn_dtype_size(x->dtype);
  const unsigned char *xs = x->data;
  unsigned char *zs = n->y[0]->data;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < k; j++)
      memcpy(zs + (size_t)(r * k + j) * es, xs + (size_t)(r * C + idx[j]) * es, es);
  return NN_OK;
}

/* ---- Binarizer: y = x > threshold ? 1 : 0, x's type ------------------------- */
static nn_status bin_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const nn_value *x = n->x[0];
  double t = nn_attr_float(n, "threshold", 0.0f);
  for (int64_t i = 0; i < x->numel; i++)
    ku_std(n->y[0]->data, x->dtype, i, ku_ldd(x->data, x->dtype, i) > t ? 1.0 : 0.0);
  return NN_OK;
}

/* ---- LabelEncoder ------------------------------------------------------------
 * Integers compare as int64, reals as double (a NaN key matches a NaN
 * input), strings as bytes.  The keys are sorted once (duplicates: the last
 * one wins, as the reference's dict) and looked up by binary search. */
typedef struct le_key {
  int64_t i;
  double d;
  nn_string s;
  int64_t value; /* index into the values */
} le_key;

typedef struct le_params {
  int kcls, vcls;
  int64_t n_keys; /* after removing duplicates */
  le_key *keys;   /* sorted */
  int64_t *vi;
  double *vd;
  nn_string *vs;
  int64_t def_i;
  double def_d;
  nn_string def_s;
} le_params;

static int le_cmp_key(int cls, const le_key *a, const le_key *b) {
  if (cls == NN_LE_INT)
    return a->i < b->i ? -1 : a->i > b->i;
  if (cls == NN_LE_STR)
    return nn_str_cmp(&a->s, &b->s);
  bool na = isnan(a->d), nb = isnan(b->d); /* NaN sorts last, equal to NaN */
  if (na || nb)
    return na - nb;
  return a->d < b->d ? -1 : a->d > b->d;
}
static int le_cmp_int(const void *a, const void *b) {
  return le_cmp_key(NN_LE_INT, a, b);
}
static int le_cmp_real(const void *a, const void *b) {
  return le_cmp_key(NN_LE_REAL, a, b);
}
static int le_cmp_str(const void *a, const void *b) {
  return le_cmp_key(NN_LE_STR, a, b);
}
static int le_cmp_stable(int cls, const le_key *a, const le_key *b) {
  int r = le_cmp_key(cls, a, b);
  return r ? r : (a->value < b->value ? -1 : a->value > b->value);
}
static int le_cmp_int_s(const void *a, const void *b) {
  return le_cmp_stable(NN_LE_INT, a, b);
}
static int le_cmp_real_s(const void *a, const void *b) {
  return le_cmp_stable(NN_LE_REAL, a, b);
}
static int le_cmp_str_s(const void *a, const void *b) {
  return le_cmp_stable(NN_LE_STR, a, b);
}

static void le_list_at(const nn_le_list *l, int64_t i, int64_t *iv, double *dv, nn_string *sv) {
  if (l->t && l->dt == NN_DTYPE_STRING) {
    *sv = ((const nn_string *)l->t->data)[i];
  } else if (l->t) {
    *dv = ku_ldd(l->t->data, l->dt, i);
    *iv = l->dt == NN_DTYPE_INT64 ? ((const int64_t *)l->t->data)[i] : (int64_t)*dv;
  } else if (l->strings) {
    sv->data = l->strings[i];
    sv->len = strlen(l->strings[i]);
  } else if (l->ints) {
    *iv = l->ints[i];
    *dv = (double)l->ints[i];
  } else if (l->floats) {
    *dv = l->floats[i];
    *iv = (int64_t)ku_clampd(l->floats[i], -9e18, 9e18);
  }
}

/* The default for values of type vdt (default_tensor is checked: one vdt). */
static void le_default(const nn_node *n, nn_dtype vdt, le_params *p) {
  const nn_attr *dt = nn_attr_get(n, "default_tensor");
  if (dt && dt->type == NN_ATTR_TENSOR) {
    nn_le_list l = {.t = &dt->t, .dt = vdt, .count = 1};
    le_list_at(&l, 0, &p->def_i, &p->def_d, &p->def_s);
    return;
  }
  p->def_i = nn_attr_int(n, "default_int64", -1);
  p->def_d = nn_attr_float(n, "default_float", -0.0f);
  const nn_attr *s = nn_attr_get(n, "default_string");
  p->def_s.data = s && s->type == NN_ATTR_STRING ? s->s : "_Unused";
  p->def_s.len = s && s->type == NN_ATTR_STRING ? s->s_len : 7;
}

static nn_status le_prepare(nn_ctx *c, nn_node *n) {
  nn_le_types t;
  nn_status st = nn_le_types_init(c, n, &t);
  if (st != NN_OK)
    return st;
  const nn_le_list keys = t.keys, vals = t.vals;
  const nn_dtype vdt = t.vdt;
  const int kcls = t.kcls, vcls = t.vcls;
  if (vcls != NN_LE_STR && !ku_dtype_storable(vdt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "values of %s are not supported", nn_dtype_name(vdt));

  /* one block: params, keys, values */
  size_t nk = (size_t)keys.count;
  size_t bytes = sizeof(le_params) + nk * sizeof(le_key) + nk * sizeof(int64_t) +
                 nk * sizeof(double) + nk * sizeof(nn_string) + 64;
  unsigned char *blk = nn_calloc(1, bytes);
  if (!blk)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  le_params *p = (le_params *)blk;
  p->keys = (le_key *)(p + 1);
  p->vi = (int64_t *)(p->keys + nk);
  p->vd = (double *)(p->vi + nk);
  p->vs = (nn_string *)(p->vd + nk);
  p->kcls = kcls, p->vcls = vcls;
  for (size_t i = 0; i < nk; i++) {
    le_key *k = &p->keys[i];
    if (n->version < 2 && kcls == NN_LE_INT)
      k->i = (int64_t)i, k->d = (double)i;
    else
      le_list_at(&keys, (int64_t)i, &k->i, &k->d, &k->s);
    k->value = (int64_t)i;
    if (n->version < 2 && vcls == NN_LE_INT)
      p->vi[i] = (int64_t)i, p->vd[i] = (double)i;
    else
      le_list_at(&vals, (int64_t)i, &p->vi[i], &p->vd[i], &p->vs[i]);
  }
  /* sort by key then position; keep the last of equal keys */
  int (*stable)(const void *, const void *) = kcls == NN_LE_INT    ? le_cmp_int_s
                                              : kcls == NN_LE_REAL ? le_cmp_real_s
                                                                   : le_cmp_str_s;
  if (nk > 1)
    qsort(p->keys, nk, sizeof(le_key), stable);
  size_t m = 0;
  for (size_t i = 0; i < nk; i++) {
    if (m && le_cmp_key(kcls, &p->keys[m - 1], &p->keys[i]) == 0)
      p->keys[m - 1] = p->keys[i];
    else
      p->keys[m++] = p->keys[i];
  }
  p->n_keys = (int64_t)m;
  le_default(n, vdt, p);
  n->priv = p;
  return NN_OK;
}

static nn_status le_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const le_params *p = n->priv;
  const nn_value *x = n->x[0];
  nn_value *y = n->y[0];
  int (*cmp)(const void *, const void *) = p->kcls == NN_LE_INT    ? le_cmp_int
                                           : p->kcls == NN_LE_REAL ? le_cmp_real
                                                                   : le_cmp_str;
  for (int64_t i = 0; i < x->numel; i++) {
    le_key q = {0};
    if (p->kcls == NN_LE_STR)
      q.s = ((const nn_string *)x->data)[i];
    else if (p->kcls == NN_LE_INT)
      q.i = x->dtype == NN_DTYPE_INT64 ? ((const int64_t *)x->data)[i]
                                       : (int64_t)ku_ldd(x->data, x->dtype, i);
    else
      q.d = ku_ldd(x->data, x->dtype, i);
    const le_key *hit = p->n_keys ? bsearch(&q, p->keys, (size_t)p->n_keys, sizeof(le_key), cmp)
                                  : NULL;
    int64_t v = hit ? hit->value : -1;
    if (p->vcls == NN_LE_STR)
      ((nn_string *)y->data)[i] = v >= 0 ? p->vs[v] : p->def_s;
    else if (p->vcls == NN_LE_INT && y->dtype == NN_DTYPE_INT64)
      ((int64_t *)y->data)[i] = v >= 0 ? p->vi[v] : p->def_i;
    else if (p->vcls == NN_LE_INT)
      ku_std(y->data, y->dtype, i, (double)(v >= 0 ? p->vi[v] : p->def_i));
    else
      ku_std(y->data, y->dtype, i, v >= 0 ? p->vd[v] : p->def_d);
  }
  return NN_OK;
}

/* ---- TreeEnsemble (5) ----------------------------------------------------------
 * Targets no leaf reached stay 0 for SUM/AVERAGE and at the type's
 * largest/smallest finite value for MIN/MAX, as the reference; PROBIT is
 * refused. */

static nn_status te_prepare(nn_ctx *c, nn_node *n) {
  if (nn_attr_int(n, "post_transform", NN_TE_NONE) == NN_TE_PROBIT)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "post_transform PROBIT is not supported");
  nn_tree_ensemble *p;
  nn_status st = nn_tree_ensemble_build(c, n, &p);
  if (st != NN_OK)
    return st;
  /* the aggregate of every target for one row */
  n->ws_bytes = (size_t)p->n_targets * sizeof(double);
  n->priv = p;
  return NN_OK;
}

static bool te_cond(const nn_tree_ensemble *p, const nn_te_node *d, double v) {
  if (isnan(v) && d->missing_true)
    return true;
  switch (d->mode) {
  case NN_TE_LEQ: return v <= d->split;
  case NN_TE_LT: return v < d->split;
  case NN_TE_GTE: return v >= d->split;
  case NN_TE_GT: return v > d->split;
  case NN_TE_EQ: return v == d->split;
  case NN_TE_NEQ: return v != d->split;
  default:
    for (int64_t k = d->set_begin; k < d->set_end; k++)
      if (p->set[k] == v)
        return true;
    return false;
  }
}

static nn_status te_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const nn_tree_ensemble *p = n->priv;
  const nn_value *x = n->x[0];
  nn_value *y = n->y[0];
  double *acc = n->ws;
  bool dbl = x->dtype == NN_DTYPE_DOUBLE;
  double big = dbl ? DBL_MAX : x->dtype == NN_DTYPE_FLOAT ? FLT_MAX : 65504.0;
  for (int64_t r = 0; r < x->dims[0]; r++) {
    for (int64_t t = 0; t < p->n_targets; t++)
      acc[t] = p->agg == NN_TE_MIN ? big : p->agg == NN_TE_MAX ? -big : 0.0;
    for (int64_t t = 0; t < p->n_trees; t++) {
      int64_t i = p->roots[t];
      /* acyclic (prepare): at most n_nodes steps */
      for (int64_t steps = 0; steps <= p->n_nodes; steps++) {
        const nn_te_node *d = &p->nodes[i];
        int k = te_cond(p, d, ku_ldd(x->data, x->dtype, r * p->C + d->feature));
        i = d->next[k];
        if (d->leaf[k])
          break;
      }
      double w = p->leaf_weight[i];
      double *a = &acc[p->leaf_target[i]];
      if (p->agg == NN_TE_MIN)
        *a = w < *a ? w : *a;
      else if (p->agg == NN_TE_MAX)
        *a = w > *a ? w : *a;
      else
        *a += w;
    }
    if (p->agg == NN_TE_AVERAGE)
      for (int64_t t = 0; t < p->n_targets; t++)
        acc[t] /= (double)p->n_trees;
    if (p->post == NN_TE_LOGISTIC) {
      for (int64_t t = 0; t < p->n_targets; t++)
        acc[t] = 1.0 / (1.0 + exp(-acc[t]));
    } else if (p->post == NN_TE_SOFTMAX || p->post == NN_TE_SOFTMAX_ZERO) {
      double mx = -DBL_MAX, sum = 0;
      for (int64_t t = 0; t < p->n_targets; t++)
        if (acc[t] > mx && (p->post == NN_TE_SOFTMAX || acc[t] != 0.0))
          mx = acc[t];
      for (int64_t t = 0; t < p->n_targets; t++) {
        bool zero = p->post == NN_TE_SOFTMAX_ZERO && acc[t] == 0.0;
        acc[t] = zero ? 0.0 : exp(acc[t] - mx);
        sum += acc[t];
      }
      for (int64_t t = 0; t < p->n_targets && sum > 0; t++)
        acc[t] /= sum;
    }
    for (int64_t t = 0; t < p->n_targets; t++)
      ku_std(y->data, y->dtype, r * p->n_targets + t, acc[t]);
  }
  return NN_OK;
}

const nn_kernel nn_kernels_ml[] = {
  {.name = "ArrayFeatureExtractor", .domain = "ai.onnx.ml", .run = afe_run},
  {.name = "Binarizer", .domain = "ai.onnx.ml", .run = bin_run},
  {.name = "LabelEncoder", .domain = "ai.onnx.ml", .prepare = le_prepare, .run = le_run},
  {.name = "TreeEnsemble", .domain = "ai.onnx.ml", .prepare = te_prepare, .run = te_run},
  {0},
};
