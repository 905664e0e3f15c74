/* ml.c - the ai.onnx.ml operators the ONNX suite exercises:
 * ArrayFeatureExtractor (1), Binarizer (1), LabelEncoder (1, 2, 4) and
 * TreeEnsemble (5).
 *
 * Everything a tree ensemble or a label map is made of comes from
 * attributes, so prepare checks all of it once (lengths agree, every node
 * and leaf id in range, no cycle, every feature id inside X's columns,
 * every target id below n_targets) and builds flat arrays in priv; run
 * then follows ids without a check and always terminates.  Indices that
 * come from data (ArrayFeatureExtractor's) are checked at run and fail with
 * NN_ERR_RUNTIME. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu/kernel_util.h"
#include "nn_strings.h"

/* ---- ArrayFeatureExtractor: z[..., j] = x[..., y[j]] ------------------------ */
static nn_status afe_prepare(nn_ctx *c, nn_node *n) {
  if (n->n_in != 2 || !n->x[0] || !n->x[1] || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 2 inputs and 1 output");
  const nn_value *x = n->x[0], *y = n->x[1];
  if (nn_dtype_size(x->dtype) == 0 || x->dtype == NN_DTYPE_BOOL)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "data type %s is not supported", nn_dtype_name(x->dtype));
  if (y->dtype != NN_DTYPE_INT64)
    return nn_fail(c, NN_ERR_DTYPE, "indices must be int64, got %s", nn_dtype_name(y->dtype));
  if (x->rank < 1)
    return nn_fail(c, NN_ERR_SHAPE, "X must have rank >= 1");
  int64_t dims[NN_MAX_RANK];
  int r = x->rank;
  if (r == 1) { /* a 1-D X gives [1, count] (as ONNX Runtime) */
    dims[0] = 1;
    r = 2;
  } else {
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)(r - 1));
  }
  dims[r - 1] = y->numel;
  return nn_set_output(c, n->y[0], x->dtype, r, dims);
}

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
static nn_status bin_prepare(nn_ctx *c, nn_node *n) {
  if (n->n_in != 1 || !n->x[0] || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 1 input and 1 output");
  const nn_value *x = n->x[0];
  if (x->dtype != NN_DTYPE_FLOAT && x->dtype != NN_DTYPE_DOUBLE && x->dtype != NN_DTYPE_INT64 &&
      x->dtype != NN_DTYPE_INT32)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "data type %s is not supported", nn_dtype_name(x->dtype));
  return nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
}

static nn_status bin_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const nn_value *x = n->x[0];
  double t = nn_attr_float(n, "threshold", 0.0f);
  for (int64_t i = 0; i < x->numel; i++)
    ku_std(n->y[0]->data, x->dtype, i, ku_ldd(x->data, x->dtype, i) > t ? 1.0 : 0.0);
  return NN_OK;
}

/* ---- LabelEncoder ------------------------------------------------------------
 * Keys and values as one class each: integers (compared as int64), reals
 * (double; a NaN key matches a NaN input) or strings (bytes).  The keys are
 * sorted once (duplicates: the last one wins, as the reference's dict) and
 * looked up by binary search. */
enum { LE_INT, LE_REAL, LE_STR };

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

static int le_cls(nn_dtype dt) {
  if (dt == NN_DTYPE_STRING)
    return LE_STR;
  if (nn_dtype_is_float(dt))
    return LE_REAL;
  return nn_dtype_is_int(dt) ? LE_INT : -1;
}

static int le_cmp_key(int cls, const le_key *a, const le_key *b) {
  if (cls == LE_INT)
    return a->i < b->i ? -1 : a->i > b->i;
  if (cls == LE_STR)
    return nn_str_cmp(&a->s, &b->s);
  bool na = isnan(a->d), nb = isnan(b->d); /* NaN sorts last, equal to NaN */
  if (na || nb)
    return na - nb;
  return a->d < b->d ? -1 : a->d > b->d;
}
static int le_cmp_int(const void *a, const void *b) {
  return le_cmp_key(LE_INT, a, b);
}
static int le_cmp_real(const void *a, const void *b) {
  return le_cmp_key(LE_REAL, a, b);
}
static int le_cmp_str(const void *a, const void *b) {
  return le_cmp_key(LE_STR, a, b);
}
static int le_cmp_stable(int cls, const le_key *a, const le_key *b) {
  int r = le_cmp_key(cls, a, b);
  return r ? r : (a->value < b->value ? -1 : a->value > b->value);
}
static int le_cmp_int_s(const void *a, const void *b) {
  return le_cmp_stable(LE_INT, a, b);
}
static int le_cmp_real_s(const void *a, const void *b) {
  return le_cmp_stable(LE_REAL, a, b);
}
static int le_cmp_str_s(const void *a, const void *b) {
  return le_cmp_stable(LE_STR, a, b);
}

/* A typed list from an attribute: strings, ints, floats, or a tensor. */
typedef struct le_list {
  nn_dtype dt;
  int64_t count;
  const int64_t *ints;
  const float *floats;
  char *const *strings;
  const nn_tensor *t;
  bool present;
} le_list;

static void le_list_get(const nn_node *n, const char *prefix, le_list *l) {
  char name[32];
  const nn_attr *a;
  memset(l, 0, sizeof *l);
  snprintf(name, sizeof name, "%s_tensor", prefix);
  if ((a = nn_attr_get(n, name)) && a->type == NN_ATTR_TENSOR) {
    l->t = &a->t, l->dt = a->t.dtype, l->count = nn_tensor_numel(&a->t), l->present = true;
    return;
  }
  snprintf(name, sizeof name, "%s_strings", prefix);
  if ((a = nn_attr_get(n, name)) && a->type == NN_ATTR_STRINGS) {
    l->strings = a->strings, l->dt = NN_DTYPE_STRING, l->count = a->n, l->present = true;
    return;
  }
  snprintf(name, sizeof name, "%s_int64s", prefix);
  if ((a = nn_attr_get(n, name)) && a->type == NN_ATTR_INTS) {
    l->ints = a->ints, l->dt = NN_DTYPE_INT64, l->count = a->n, l->present = true;
    return;
  }
  snprintf(name, sizeof name, "%s_floats", prefix);
  if ((a = nn_attr_get(n, name)) && a->type == NN_ATTR_FLOATS) {
    l->floats = a->floats, l->dt = NN_DTYPE_FLOAT, l->count = a->n, l->present = true;
    return;
  }
}

static void le_list_at(const le_list *l, int64_t i, int64_t *iv, double *dv, nn_string *sv) {
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

/* The default for values of class vcls and type vdt. */
static nn_status le_default(nn_ctx *c, const nn_node *n, nn_dtype vdt, le_params *p) {
  const nn_attr *dt = nn_attr_get(n, "default_tensor");
  if (dt && dt->type == NN_ATTR_TENSOR) {
    if (dt->t.dtype != vdt || nn_tensor_numel(&dt->t) != 1)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "default_tensor must be one %s", nn_dtype_name(vdt));
    le_list l = {.t = &dt->t, .dt = vdt, .count = 1};
    le_list_at(&l, 0, &p->def_i, &p->def_d, &p->def_s);
    return NN_OK;
  }
  p->def_i = nn_attr_int(n, "default_int64", -1);
  p->def_d = nn_attr_float(n, "default_float", -0.0f);
  const nn_attr *s = nn_attr_get(n, "default_string");
  p->def_s.data = s && s->type == NN_ATTR_STRING ? s->s : "_Unused";
  p->def_s.len = s && s->type == NN_ATTR_STRING ? s->s_len : 7;
  return NN_OK;
}

static nn_status le_prepare(nn_ctx *c, nn_node *n) {
  if (n->n_in != 1 || !n->x[0] || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 1 input and 1 output");
  const nn_value *x = n->x[0];
  le_list keys, vals, classes;
  nn_dtype vdt;
  if (n->version < 2) {
    /* classes_strings: string -> its index, int64 -> the string at it */
    le_list_get(n, "classes", &classes);
    if (!classes.present || classes.dt != NN_DTYPE_STRING)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "classes_strings is missing");
    if (x->dtype == NN_DTYPE_STRING) {
      keys = classes;
      vals = (le_list){.dt = NN_DTYPE_INT64, .count = classes.count, .present = true};
      vdt = NN_DTYPE_INT64;
    } else if (x->dtype == NN_DTYPE_INT64) {
      keys = (le_list){.dt = NN_DTYPE_INT64, .count = classes.count, .present = true};
      vals = classes;
      vdt = NN_DTYPE_STRING;
    } else {
      return nn_fail(c, NN_ERR_DTYPE, "input must be string or int64");
    }
  } else {
    le_list_get(n, "keys", &keys);
    le_list_get(n, "values", &vals);
    if (!keys.present || !vals.present)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "keys and values are required");
    vdt = vals.dt;
  }
  if (keys.count != vals.count)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%lld keys but %lld values", (long long)keys.count,
                   (long long)vals.count);
  int kcls = le_cls(keys.dt), vcls = le_cls(vdt);
  if (kcls < 0 || vcls < 0 || le_cls(x->dtype) != kcls ||
      (kcls != LE_STR && x->dtype != keys.dt && !keys.ints && !keys.floats) || vdt == NN_DTYPE_BOOL)
    return nn_fail(c, NN_ERR_DTYPE, "input %s does not match keys of %s (values %s)",
                   nn_dtype_name(x->dtype), nn_dtype_name(keys.dt), nn_dtype_name(vdt));
  if (n->version >= 2 && keys.ints && x->dtype != NN_DTYPE_INT64)
    return nn_fail(c, NN_ERR_DTYPE, "keys_int64s need an int64 input");
  if (n->version >= 2 && keys.floats && x->dtype != NN_DTYPE_FLOAT)
    return nn_fail(c, NN_ERR_DTYPE, "keys_floats need a float input");
  if (vcls != LE_STR && !ku_dtype_storable(vdt))
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
    if (n->version < 2 && kcls == LE_INT)
      k->i = (int64_t)i, k->d = (double)i;
    else
      le_list_at(&keys, (int64_t)i, &k->i, &k->d, &k->s);
    k->value = (int64_t)i;
    if (n->version < 2 && vcls == LE_INT)
      p->vi[i] = (int64_t)i, p->vd[i] = (double)i;
    else
      le_list_at(&vals, (int64_t)i, &p->vi[i], &p->vd[i], &p->vs[i]);
  }
  /* sort by key then position; keep the last of equal keys */
  int (*stable)(const void *, const void *) = kcls == LE_INT    ? le_cmp_int_s
                                              : kcls == LE_REAL ? le_cmp_real_s
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
  nn_status st = le_default(c, n, vdt, p);
  if (st == NN_OK)
    st = nn_set_output(c, n->y[0], vdt, x->rank, x->dims);
  if (st != NN_OK) {
    nn_free(blk);
    return st;
  }
  n->priv = p;
  return NN_OK;
}

static nn_status le_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const le_params *p = n->priv;
  const nn_value *x = n->x[0];
  nn_value *y = n->y[0];
  int (*cmp)(const void *, const void *) = p->kcls == LE_INT    ? le_cmp_int
                                           : p->kcls == LE_REAL ? le_cmp_real
                                                                : le_cmp_str;
  for (int64_t i = 0; i < x->numel; i++) {
    le_key q = {0};
    if (p->kcls == LE_STR)
      q.s = ((const nn_string *)x->data)[i];
    else if (p->kcls == LE_INT)
      q.i = x->dtype == NN_DTYPE_INT64 ? ((const int64_t *)x->data)[i]
                                       : (int64_t)ku_ldd(x->data, x->dtype, i);
    else
      q.d = ku_ldd(x->data, x->dtype, i);
    const le_key *hit = p->n_keys ? bsearch(&q, p->keys, (size_t)p->n_keys, sizeof(le_key), cmp)
                                  : NULL;
    int64_t v = hit ? hit->value : -1;
    if (p->vcls == LE_STR)
      ((nn_string *)y->data)[i] = v >= 0 ? p->vs[v] : p->def_s;
    else if (p->vcls == LE_INT && y->dtype == NN_DTYPE_INT64)
      ((int64_t *)y->data)[i] = v >= 0 ? p->vi[v] : p->def_i;
    else if (p->vcls == LE_INT)
      ku_std(y->data, y->dtype, i, (double)(v >= 0 ? p->vi[v] : p->def_i));
    else
      ku_std(y->data, y->dtype, i, v >= 0 ? p->vd[v] : p->def_d);
  }
  return NN_OK;
}

/* ---- TreeEnsemble (5) ----------------------------------------------------------
 * Nodes: featureid, mode (BRANCH_LEQ, LT, GTE, GT, EQ, NEQ, MEMBER), split,
 * true/false successor (a node or, when the *leafs flag is set, a leaf),
 * missing_value_tracks_true.  Leaves: target id and weight.  Per row and
 * target, the trees' leaf weights are aggregated (AVERAGE, SUM, MIN, MAX;
 * targets no leaf reached stay 0 for SUM/AVERAGE and at the type's
 * largest/smallest finite value for MIN/MAX, as the reference), then
 * post-transformed (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO; PROBIT is
 * refused). */
enum { TE_LEQ, TE_LT, TE_GTE, TE_GT, TE_EQ, TE_NEQ, TE_MEMBER };
enum { TE_AVERAGE, TE_SUM, TE_MIN, TE_MAX };
enum { TE_NONE, TE_SOFTMAX, TE_LOGISTIC, TE_SOFTMAX_ZERO, TE_PROBIT };

typedef struct te_node {
  int64_t feature;
  double split;
  int64_t next[2]; /* [0] false, [1] true: a node or a leaf index */
  uint8_t leaf[2]; /* next[k] is a leaf */
  uint8_t mode, missing_true;
  int64_t set_begin, set_end; /* MEMBER: its values in te_params.set */
} te_node;

typedef struct te_params {
  int64_t n_nodes, n_leaves, n_trees, n_targets, C;
  int agg, post;
  te_node *nodes;
  int64_t *roots, *leaf_target;
  double *leaf_weight, *set;
} te_params;

static const int64_t *te_ints(const nn_node *n, const char *name, int64_t *count) {
  int k = 0;
  const int64_t *v = nn_attr_ints(n, name, &k);
  *count = k;
  return v;
}

static bool te_real_tensor(const nn_tensor *t) {
  return t && (t->dtype == NN_DTYPE_FLOAT || t->dtype == NN_DTYPE_DOUBLE ||
               t->dtype == NN_DTYPE_FLOAT16);
}

/* Kahn's algorithm over the node -> node edges: false when they cycle. */
static bool te_acyclic(const te_params *p, int64_t *indeg, int64_t *queue) {
  memset(indeg, 0, sizeof(int64_t) * (size_t)p->n_nodes);
  for (int64_t i = 0; i < p->n_nodes; i++)
    for (int k = 0; k < 2; k++)
      if (!p->nodes[i].leaf[k])
        indeg[p->nodes[i].next[k]]++;
  int64_t head = 0, tail = 0;
  for (int64_t i = 0; i < p->n_nodes; i++)
    if (indeg[i] == 0)
      queue[tail++] = i;
  while (head < tail) {
    const te_node *d = &p->nodes[queue[head++]];
    for (int k = 0; k < 2; k++)
      if (!d->leaf[k] && --indeg[d->next[k]] == 0)
        queue[tail++] = d->next[k];
  }
  return tail == p->n_nodes;
}

static nn_status te_prepare(nn_ctx *c, nn_node *n) {
  if (n->n_in != 1 || !n->x[0] || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 1 input and 1 output");
  const nn_value *x = n->x[0];
  if (x->dtype != NN_DTYPE_FLOAT && x->dtype != NN_DTYPE_DOUBLE && x->dtype != NN_DTYPE_FLOAT16)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "X of type %s is not supported", nn_dtype_name(x->dtype));
  if (x->rank != 2)
    return nn_fail(c, NN_ERR_SHAPE, "X must be [N, C]");
  int64_t nf, nt, nfl, ntl, nfe, nr, nlt, nmv = 0;
  const int64_t *falseids = te_ints(n, "nodes_falsenodeids", &nf);
  const int64_t *trueids = te_ints(n, "nodes_truenodeids", &nt);
  const int64_t *falseleafs = te_ints(n, "nodes_falseleafs", &nfl);
  const int64_t *trueleafs = te_ints(n, "nodes_trueleafs", &ntl);
  const int64_t *features = te_ints(n, "nodes_featureids", &nfe);
  const int64_t *roots = te_ints(n, "tree_roots", &nr);
  const int64_t *targets = te_ints(n, "leaf_targetids", &nlt);
  const int64_t *mvt = te_ints(n, "nodes_missing_value_tracks_true", &nmv);
  const nn_tensor *modes = nn_attr_tensor(n, "nodes_modes");
  const nn_tensor *splits = nn_attr_tensor(n, "nodes_splits");
  const nn_tensor *weights = nn_attr_tensor(n, "leaf_weights");
  const nn_tensor *members = nn_attr_tensor(n, "membership_values");
  int64_t n_targets = nn_attr_int(n, "n_targets", -1);
  int64_t agg = nn_attr_int(n, "aggregate_function", TE_SUM);
  int64_t post = nn_attr_int(n, "post_transform", TE_NONE);
  if (!falseids || !trueids || !falseleafs || !trueleafs || !features || !roots || !targets ||
      !modes || !splits || !weights)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "a required attribute is missing");
  int64_t N = nf;
  if (nt != N || nfl != N || ntl != N || nfe != N || nn_tensor_numel(modes) != N ||
      nn_tensor_numel(splits) != N || (mvt && nmv != N))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "the nodes_* attributes differ in length");
  if (nn_tensor_numel(weights) != nlt)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "leaf_targetids and leaf_weights differ in length");
  if (modes->dtype != NN_DTYPE_UINT8 || !te_real_tensor(splits) || !te_real_tensor(weights) ||
      (members && !te_real_tensor(members)))
    return nn_fail(c, NN_ERR_INVALID_MODEL,
                   "nodes_modes must be uint8, splits, weights and "
                   "membership values real");
  if (n_targets < 1 || n_targets > ((int64_t)1 << 24))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "n_targets = %lld", (long long)n_targets);
  if (agg < TE_AVERAGE || agg > TE_MAX)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "aggregate_function = %lld", (long long)agg);
  if (post < TE_NONE || post > TE_PROBIT)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "post_transform = %lld", (long long)post);
  if (post == TE_PROBIT)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "post_transform PROBIT is not supported");
  if (N < 1 || nr < 1 || nlt < 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "the ensemble has no node, tree or leaf");
  int64_t n_members = members ? nn_tensor_numel(members) : 0;

  size_t bytes = sizeof(te_params) + (size_t)N * sizeof(te_node) + (size_t)nr * sizeof(int64_t) +
                 (size_t)nlt * (sizeof(int64_t) + sizeof(double)) +
                 (size_t)n_members * sizeof(double) + 64;
  unsigned char *blk = nn_calloc(1, bytes);
  int64_t *scratch = nn_calloc((size_t)N * 2 + 1, sizeof(int64_t));
  if (!blk || !scratch) {
    nn_free(blk);
    nn_free(scratch);
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  }
  te_params *p = (te_params *)blk;
  p->nodes = (te_node *)(p + 1);
  p->roots = (int64_t *)(p->nodes + N);
  p->leaf_target = p->roots + nr;
  p->leaf_weight = (double *)(p->leaf_target + nlt);
  p->set = p->leaf_weight + nlt;
  p->n_nodes = N, p->n_leaves = nlt, p->n_trees = nr, p->n_targets = n_targets;
  p->C = x->dims[1];
  p->agg = (int)agg, p->post = (int)post;
  nn_status st = NN_OK;
  int64_t set_pos = 0;
  for (int64_t i = 0; i < N && st == NN_OK; i++) {
    te_node *d = &p->nodes[i];
    d->feature = features[i];
    d->split = ku_ldd(splits->data, splits->dtype, i);
    d->mode = ((const uint8_t *)modes->data)[i];
    d->missing_true = mvt && mvt[i] != 0;
    d->next[0] = falseids[i], d->next[1] = trueids[i];
    d->leaf[0] = falseleafs[i] != 0, d->leaf[1] = trueleafs[i] != 0;
    if (d->mode > TE_MEMBER)
      st = nn_fail(c, NN_ERR_INVALID_MODEL, "node %lld has mode %d", (long long)i, d->mode);
    else if (d->feature < 0 || d->feature >= p->C)
      st = nn_fail(c, NN_ERR_INVALID_MODEL, "node %lld reads feature %lld; X has %lld",
                   (long long)i, (long long)d->feature, (long long)p->C);
    for (int k = 0; k < 2 && st == NN_OK; k++) {
      int64_t lim = d->leaf[k] ? nlt : N;
      if (d->next[k] < 0 || d->next[k] >= lim)
        st = nn_fail(c, NN_ERR_INVALID_MODEL, "node %lld: %s %s id %lld is out of range [0, %lld)",
                     (long long)i, k ? "true" : "false", d->leaf[k] ? "leaf" : "node",
                     (long long)d->next[k], (long long)lim);
    }
    if (st == NN_OK && d->mode == TE_MEMBER) { /* its set: up to the next NaN */
      d->set_begin = set_pos;
      while (set_pos < n_members && !isnan(ku_ldd(members->data, members->dtype, set_pos))) {
        p->set[set_pos] = ku_ldd(members->data, members->dtype, set_pos);
        set_pos++;
      }
      d->set_end = set_pos;
      if (!members)
        st = nn_fail(c, NN_ERR_INVALID_MODEL, "BRANCH_MEMBER node %lld without membership_values",
                     (long long)i);
      set_pos++; /* the NaN */
    }
  }
  for (int64_t t = 0; t < nr && st == NN_OK; t++) {
    p->roots[t] = roots[t];
    if (roots[t] < 0 || roots[t] >= N)
      st = nn_fail(c, NN_ERR_INVALID_MODEL, "tree root %lld is out of range [0, %lld)",
                   (long long)roots[t], (long long)N);
  }
  for (int64_t l = 0; l < nlt && st == NN_OK; l++) {
    p->leaf_target[l] = targets[l];
    p->leaf_weight[l] = ku_ldd(weights->data, weights->dtype, l);
    if (targets[l] < 0 || targets[l] >= n_targets)
      st = nn_fail(c, NN_ERR_INVALID_MODEL, "leaf %lld has target %lld; n_targets is %lld",
                   (long long)l, (long long)targets[l], (long long)n_targets);
  }
  if (st == NN_OK && !te_acyclic(p, scratch, scratch + N))
    st = nn_fail(c, NN_ERR_INVALID_MODEL, "the nodes form a cycle");
  nn_free(scratch);
  if (st == NN_OK) {
    int64_t dims[2] = {x->dims[0], n_targets};
    st = nn_set_output(c, n->y[0], x->dtype, 2, dims);
  }
  if (st == NN_OK)
    n->ws_bytes = (size_t)n_targets * sizeof(double);
  if (st != NN_OK) {
    nn_free(blk);
    return st;
  }
  n->priv = p;
  return NN_OK;
}

static bool te_cond(const te_params *p, const te_node *d, double v) {
  if (isnan(v) && d->missing_true)
    return true;
  switch (d->mode) {
  case TE_LEQ: return v <= d->split;
  case TE_LT: return v < d->split;
  case TE_GTE: return v >= d->split;
  case TE_GT: return v > d->split;
  case TE_EQ: return v == d->split;
  case TE_NEQ: return v != d->split;
  default:
    for (int64_t k = d->set_begin; k < d->set_end; k++)
      if (p->set[k] == v)
        return true;
    return false;
  }
}

static nn_status te_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const te_params *p = n->priv;
  const nn_value *x = n->x[0];
  nn_value *y = n->y[0];
  double *acc = n->ws;
  bool dbl = x->dtype == NN_DTYPE_DOUBLE;
  double big = dbl ? DBL_MAX : x->dtype == NN_DTYPE_FLOAT ? FLT_MAX : 65504.0;
  for (int64_t r = 0; r < x->dims[0]; r++) {
    for (int64_t t = 0; t < p->n_targets; t++)
      acc[t] = p->agg == TE_MIN ? big : p->agg == TE_MAX ? -big : 0.0;
    for (int64_t t = 0; t < p->n_trees; t++) {
      int64_t i = p->roots[t];
      /* acyclic (prepare): at most n_nodes steps */
      for (int64_t steps = 0; steps <= p->n_nodes; steps++) {
        const te_node *d = &p->nodes[i];
        int k = te_cond(p, d, ku_ldd(x->data, x->dtype, r * p->C + d->feature));
        i = d->next[k];
        if (d->leaf[k])
          break;
      }
      double w = p->leaf_weight[i];
      double *a = &acc[p->leaf_target[i]];
      if (p->agg == TE_MIN)
        *a = w < *a ? w : *a;
      else if (p->agg == TE_MAX)
        *a = w > *a ? w : *a;
      else
        *a += w;
    }
    if (p->agg == TE_AVERAGE)
      for (int64_t t = 0; t < p->n_targets; t++)
        acc[t] /= (double)p->n_trees;
    if (p->post == TE_LOGISTIC) {
      for (int64_t t = 0; t < p->n_targets; t++)
        acc[t] = 1.0 / (1.0 + exp(-acc[t]));
    } else if (p->post == TE_SOFTMAX || p->post == TE_SOFTMAX_ZERO) {
      double mx = -DBL_MAX, sum = 0;
      for (int64_t t = 0; t < p->n_targets; t++)
        if (acc[t] > mx && (p->post == TE_SOFTMAX || acc[t] != 0.0))
          mx = acc[t];
      for (int64_t t = 0; t < p->n_targets; t++) {
        bool zero = p->post == TE_SOFTMAX_ZERO && acc[t] == 0.0;
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
  {.name = "ArrayFeatureExtractor", .domain = "ai.onnx.ml", .prepare = afe_prepare, .run = afe_run},
  {.name = "Binarizer", .domain = "ai.onnx.ml", .prepare = bin_prepare, .run = bin_run},
  {.name = "LabelEncoder", .domain = "ai.onnx.ml", .prepare = le_prepare, .run = le_run},
  {.name = "TreeEnsemble", .domain = "ai.onnx.ml", .prepare = te_prepare, .run = te_run},
  {0},
};
