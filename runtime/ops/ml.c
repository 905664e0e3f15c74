/* ml.c - the ml family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_ml[], collected by ops/registry.c),
 * and the label maps and tree ensembles of ml.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/ml.h"

/* ---- ArrayFeatureExtractor: z[..., j] = x[..., y[j]] ------------------------ */
static nn_status afe_infer(nn_ctx *c, nn_node *n) {
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

/* ---- Binarizer: y = x > threshold ? 1 : 0, x's type ------------------------- */
static nn_status bin_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in != 1 || !n->x[0] || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 1 input and 1 output");
  const nn_value *x = n->x[0];
  if (x->dtype != NN_DTYPE_FLOAT && x->dtype != NN_DTYPE_DOUBLE && x->dtype != NN_DTYPE_INT64 &&
      x->dtype != NN_DTYPE_INT32)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "data type %s is not supported", nn_dtype_name(x->dtype));
  return nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
}

/* ---- LabelEncoder ------------------------------------------------------------ */
static int le_cls(nn_dtype dt) {
  if (dt == NN_DTYPE_STRING)
    return NN_LE_STR;
  if (nn_dtype_is_float(dt))
    return NN_LE_REAL;
  return nn_dtype_is_int(dt) ? NN_LE_INT : -1;
}

static void le_list_get(const nn_node *n, const char *prefix, nn_le_list *l) {
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

nn_status nn_le_types_init(nn_ctx *c, const nn_node *n, nn_le_types *t) {
  if (n->n_in != 1 || !n->x[0] || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 1 input and 1 output");
  const nn_value *x = n->x[0];
  nn_le_list keys, vals, classes;
  nn_dtype vdt;
  if (n->version < 2) {
    /* classes_strings: string -> its index, int64 -> the string at it */
    le_list_get(n, "classes", &classes);
    if (!classes.present || classes.dt != NN_DTYPE_STRING)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "classes_strings is missing");
    if (x->dtype == NN_DTYPE_STRING) {
      keys = classes;
      vals = (nn_le_list){.dt = NN_DTYPE_INT64, .count = classes.count, .present = true};
      vdt = NN_DTYPE_INT64;
    } else if (x->dtype == NN_DTYPE_INT64) {
      keys = (nn_le_list){.dt = NN_DTYPE_INT64, .count = classes.count, .present = true};
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
      (kcls != NN_LE_STR && x->dtype != keys.dt && !keys.ints && !keys.floats) ||
      vdt == NN_DTYPE_BOOL)
    return nn_fail(c, NN_ERR_DTYPE, "input %s does not match keys of %s (values %s)",
                   nn_dtype_name(x->dtype), nn_dtype_name(keys.dt), nn_dtype_name(vdt));
  if (n->version >= 2 && keys.ints && x->dtype != NN_DTYPE_INT64)
    return nn_fail(c, NN_ERR_DTYPE, "keys_int64s need an int64 input");
  if (n->version >= 2 && keys.floats && x->dtype != NN_DTYPE_FLOAT)
    return nn_fail(c, NN_ERR_DTYPE, "keys_floats need a float input");
  const nn_attr *def = nn_attr_get(n, "default_tensor");
  if (def && def->type == NN_ATTR_TENSOR &&
      (def->t.dtype != vdt || nn_tensor_numel(&def->t) != 1))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "default_tensor must be one %s", nn_dtype_name(vdt));
  t->keys = keys, t->vals = vals, t->vdt = vdt, t->kcls = kcls, t->vcls = vcls;
  return NN_OK;
}

static nn_status le_infer(nn_ctx *c, nn_node *n) {
  nn_le_types t;
  nn_status st = nn_le_types_init(c, n, &t);
  if (st != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], t.vdt, n->x[0]->rank, n->x[0]->dims);
}

/* ---- TreeEnsemble ---------------------------------------------------------------- */

/* Element i of a real attribute tensor (te_real_tensor) as double. */
static double tensor_real(const nn_tensor *t, int64_t i) {
  switch (t->dtype) {
  case NN_DTYPE_FLOAT: return ((const float *)t->data)[i];
  case NN_DTYPE_DOUBLE: return ((const double *)t->data)[i];
  case NN_DTYPE_FLOAT16: return nn_f16_to_f32(((const uint16_t *)t->data)[i]);
  default: return 0.0;
  }
}

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
static bool te_acyclic(const nn_tree_ensemble *p, int64_t *indeg, int64_t *queue) {
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
    const nn_te_node *d = &p->nodes[queue[head++]];
    for (int k = 0; k < 2; k++)
      if (!d->leaf[k] && --indeg[d->next[k]] == 0)
        queue[tail++] = d->next[k];
  }
  return tail == p->n_nodes;
}

nn_status nn_tree_ensemble_build(nn_ctx *c, const nn_node *n, nn_tree_ensemble **out) {
  *out = NULL;
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
  int64_t agg = nn_attr_int(n, "aggregate_function", NN_TE_SUM);
  int64_t post = nn_attr_int(n, "post_transform", NN_TE_NONE);
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
  if (agg < NN_TE_AVERAGE || agg > NN_TE_MAX)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "aggregate_function = %lld", (long long)agg);
  if (post < NN_TE_NONE || post > NN_TE_PROBIT)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "post_transform = %lld", (long long)post);
  if (N < 1 || nr < 1 || nlt < 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "the ensemble has no node, tree or leaf");
  int64_t n_members = members ? nn_tensor_numel(members) : 0;

  size_t bytes = sizeof(nn_tree_ensemble) + (size_t)N * sizeof(nn_te_node) +
                 (size_t)nr * sizeof(int64_t) + (size_t)nlt * (sizeof(int64_t) + sizeof(double)) +
                 (size_t)n_members * sizeof(double) + 64;
  unsigned char *blk = nn_calloc(1, bytes);
  int64_t *scratch = nn_calloc((size_t)N * 2 + 1, sizeof(int64_t));
  if (!blk || !scratch) {
    nn_free(blk);
    nn_free(scratch);
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  }
  nn_tree_ensemble *p = (nn_tree_ensemble *)blk;
  p->nodes = (nn_te_node *)(p + 1);
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
    nn_te_node *d = &p->nodes[i];
    d->feature = features[i];
    d->split = tensor_real(splits, i);
    d->mode = ((const uint8_t *)modes->data)[i];
    d->missing_true = mvt && mvt[i] != 0;
    d->next[0] = falseids[i], d->next[1] = trueids[i];
    d->leaf[0] = falseleafs[i] != 0, d->leaf[1] = trueleafs[i] != 0;
    if (d->mode > NN_TE_MEMBER)
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
    if (st == NN_OK && d->mode == NN_TE_MEMBER) { /* its set: up to the next NaN */
      d->set_begin = set_pos;
      while (set_pos < n_members && !isnan(tensor_real(members, set_pos))) {
        p->set[set_pos] = tensor_real(members, set_pos);
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
    p->leaf_weight[l] = tensor_real(weights, l);
    if (targets[l] < 0 || targets[l] >= n_targets)
      st = nn_fail(c, NN_ERR_INVALID_MODEL, "leaf %lld has target %lld; n_targets is %lld",
                   (long long)l, (long long)targets[l], (long long)n_targets);
  }
  if (st == NN_OK && !te_acyclic(p, scratch, scratch + N))
    st = nn_fail(c, NN_ERR_INVALID_MODEL, "the nodes form a cycle");
  nn_free(scratch);
  if (st != NN_OK) {
    nn_free(blk);
    return st;
  }
  *out = p;
  return NN_OK;
}

/* [N, n_targets] of X's type */
static nn_status te_infer(nn_ctx *c, nn_node *n) {
  nn_tree_ensemble *p;
  nn_status st = nn_tree_ensemble_build(c, n, &p);
  if (st != NN_OK)
    return st;
  int64_t dims[2] = {n->x[0]->dims[0], p->n_targets};
  nn_free(p);
  return nn_set_output(c, n->y[0], n->x[0]->dtype, 2, dims);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; cpu/ml.c has the kernels. */
const nn_op_def nn_ops_ml[] = {
  {.name = "ArrayFeatureExtractor", .domain = "ai.onnx.ml", .versions = {1}, .infer = afe_infer},
  {.name = "Binarizer", .domain = "ai.onnx.ml", .versions = {1}, .flags = NN_OP_ELEMENTWISE,
   .infer = bin_infer},
  {.name = "LabelEncoder", .domain = "ai.onnx.ml", .versions = {1, 2, 4}, .infer = le_infer},
  {.name = "TreeEnsemble", .domain = "ai.onnx.ml", .versions = {5}, .infer = te_infer},
  {0},
};
