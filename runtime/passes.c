/* passes.c - rewrites done once at load, before any shape is known:
 * Identity and inference-mode Dropout are removed by pointing their consumers
 * at their input, and a BatchNormalization whose parameters and preceding
 * Conv's weights are true initializers is folded into those weights for good.
 * (When the weights only become constant through plan-time folding, as in
 * models that build them with ConstantOfShape, plan.c does the same fusion
 * per plan; the arithmetic of both is ops/batchnorm.c.)  HardSwish written
 * out as x * Clip(x + 3, 0, 6) / 6 (what exporters emit for opsets before
 * 14: PaddleOCR's PP-LCNet backbones have 28 of them, four passes over a
 * feature map each) becomes one HardSwish node.  A Constant node holding a
 * numeric tensor becomes an initializer, its bytes moved, not copied: folded
 * at plan time it would be held twice (paddle2onnx writes all of PP-OCR's
 * weights as Constant nodes: 9.6 MB of PP-OCRv4 rec's 15 MB). */
#include <stdio.h>
#include <string.h>

#include <math.h>

#include "graph.h"
#include "knobs.h"
#include "ops/batchnorm.h"

/* A Dropout is a no-op at inference unless training_mode is given and not a
 * constant false, or its mask output is consumed. */
static bool dropout_is_noop(const nn_graph *g, const nn_node *n) {
  if (n->n_out > 1 && n->out[1] >= 0 && g->values[n->out[1]].n_uses > 0)
    return false;
  if (n->n_in > 2 && n->in[2] >= 0) {
    const nn_value *tm = &g->values[n->in[2]];
    if (tm->kind != NN_VAL_CONST || tm->has_default || tm->numel != 1 ||
        ((const uint8_t *)tm->const_data)[0] != 0)
      return false;
  }
  return true;
}

static bool pure_const_f32(const nn_value *v) {
  return v->kind == NN_VAL_CONST && !v->has_default && v->dtype == NN_DTYPE_FLOAT && v->const_data;
}

/* Fold BN(Conv(x, W, B)) into Conv(x, W', B') when everything is a true
 * initializer that nothing else reads: the weights are rewritten in place,
 * so the model's memory does not grow. */
static nn_status fuse_conv_batchnorm(nn_graph *g, nn_error *err) {
  bool changed = false;
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *bn = &g->nodes[i];
    if (bn->removed || !nn_bn_fold_candidate(bn) || bn->in[0] < 0 || bn->out[0] < 0)
      continue;
    bool extra_outputs = false;
    for (int k = 1; k < bn->n_out; k++)
      if (bn->out[k] >= 0 && g->values[bn->out[k]].n_uses > 0)
        extra_outputs = true;
    if (extra_outputs)
      continue;
    bool params_ok = true;
    for (int k = 1; k < 5; k++)
      if (bn->in[k] < 0 || !pure_const_f32(&g->values[bn->in[k]]))
        params_ok = false;
    if (!params_ok)
      continue;
    nn_value *x = &g->values[bn->in[0]];
    if (x->producer < 0 || x->n_uses != 1 || x->is_graph_output)
      continue;
    nn_node *conv = &g->nodes[x->producer];
    if (conv->removed || conv->domain[0] || strcmp(conv->op_type, "Conv") != 0 || conv->n_in < 2 ||
        conv->in[1] < 0 || conv->out[0] != bn->in[0])
      continue;
    nn_value *w = &g->values[conv->in[1]];
    nn_value *b = conv->n_in > 2 && conv->in[2] >= 0 ? &g->values[conv->in[2]] : NULL;
    if (!pure_const_f32(w) || w->n_uses != 1 || w->rank < 1 || (b && (!pure_const_f32(b) || b->n_uses != 1)))
      continue;
    int64_t m = w->dims[0], per = m ? w->numel / m : 0;
    bool sizes_ok = (!b || b->numel == m);
    for (int k = 1; k < 5; k++)
      if (g->values[bn->in[k]].numel != m)
        sizes_ok = false;
    if (!sizes_ok)
      continue;
    if (!b) {
      /* a new bias initializer, named after the BN's shift */
      char name[256];
      snprintf(name, sizeof name, "%s/fused_bias", g->values[bn->in[2]].name);
      int bi = nn_graph_add_value(g, name); /* may move g->values */
      if (bi < 0)
        return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
      nn_value *nb = &g->values[bi];
      nb->const_data = nn_aligned_alloc((size_t)(m ? m : 1) * sizeof(float));
      if (!nb->const_data)
        return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
      memset(nb->const_data, 0, (size_t)m * sizeof(float));
      nb->kind = NN_VAL_CONST;
      nb->dtype = NN_DTYPE_FLOAT;
      nb->rank = 1;
      nb->dims[0] = m;
      nb->numel = m;
      nb->nbytes = (size_t)m * sizeof(float);
      nb->data = nb->const_data;
      g->weights_bytes += nb->nbytes;
      conv->in[2] = bi;
      conv->n_in = conv->n_in_model = 3;
      b = nb;
      w = &g->values[conv->in[1]];
    }
    nn_bn_fold_into_conv(bn, m, per, g->values[bn->in[1]].const_data,
                         g->values[bn->in[2]].const_data, g->values[bn->in[3]].const_data,
                         g->values[bn->in[4]].const_data, w->const_data, b->const_data);
    /* the Conv now produces the BN's output; its old output is orphaned */
    g->values[conv->out[0]].producer = -1;
    conv->out[0] = bn->out[0];
    g->values[bn->out[0]].producer = (int)(conv - g->nodes);
    bn->removed = true;
    changed = true;
  }
  if (changed) {
    nn_graph_count_uses(g);
    nn_graph_resolve_pointers(g);
  }
  return NN_OK;
}

/* The float value of scalar v: an initializer, or the output of a Constant
 * node (plan-time folding has not run yet).  false when v is not one. */
static bool scalar_f32(const nn_graph *g, int v, float *out) {
  if (v < 0 || v >= g->n_values)
    return false;
  const nn_value *val = &g->values[v];
  if (pure_const_f32(val) && val->numel == 1) {
    *out = ((const float *)val->const_data)[0];
    return true;
  }
  if (val->kind == NN_VAL_CONST || val->producer < 0)
    return false;
  const nn_node *c = &g->nodes[val->producer];
  if (c->removed || c->domain[0] || strcmp(c->op_type, "Constant") != 0 || c->n_attrs != 1)
    return false;
  const nn_attr *a = &c->attrs[0];
  if (strcmp(a->name, "value_float") == 0 && a->type == NN_ATTR_FLOAT) {
    *out = a->f;
    return true;
  }
  if (strcmp(a->name, "value") == 0 && a->type == NN_ATTR_TENSOR && a->t.dtype == NN_DTYPE_FLOAT &&
      a->t.nbytes == sizeof(float) && a->t.data) {
    memcpy(out, a->t.data, sizeof(float));
    return true;
  }
  return false;
}

/* The node producing v when it is op_type (default domain, not removed) and
 * v is its only output read, read by one consumer only; else NULL. */
static nn_node *sole_producer(nn_graph *g, int v, const char *op_type) {
  if (v < 0 || v >= g->n_values)
    return NULL;
  const nn_value *val = &g->values[v];
  if (val->producer < 0 || val->n_uses != 1 || val->is_graph_output)
    return NULL;
  nn_node *p = &g->nodes[val->producer];
  if (p->removed || p->domain[0] || strcmp(p->op_type, op_type) != 0 || p->n_out < 1 ||
      p->out[0] != v)
    return NULL;
  return p;
}

static bool clip_is_0_6(const nn_graph *g, const nn_node *clip) {
  float lo, hi;
  if (clip->version < 11) {
    const nn_attr *a = NULL, *b = NULL;
    for (int k = 0; k < clip->n_attrs; k++) {
      if (strcmp(clip->attrs[k].name, "min") == 0)
        a = &clip->attrs[k];
      else if (strcmp(clip->attrs[k].name, "max") == 0)
        b = &clip->attrs[k];
    }
    return clip->n_in == 1 && a && b && a->type == NN_ATTR_FLOAT && b->type == NN_ATTR_FLOAT &&
           a->f == 0.0f && b->f == 6.0f;
  }
  return clip->n_in == 3 && scalar_f32(g, clip->in[1], &lo) && scalar_f32(g, clip->in[2], &hi) &&
         lo == 0.0f && hi == 6.0f;
}

/* x * Clip(x + 3, 0, 6) / 6 (or * (1/6)), any operand order, each
 * intermediate read once: the last node becomes HardSwish(x), the other
 * three are removed. */
static nn_status fuse_hard_swish(nn_graph *g, nn_kernel_lookup_fn find_kernel, nn_error *err) {
  const nn_op_def *hs = nn_op_find("", "HardSwish");
  const nn_kernel *hs_kern = find_kernel ? find_kernel("", "HardSwish") : NULL;
  int hs_version = hs ? nn_op_resolve_version(hs, 14) : 0;
  if (!hs || !hs_kern || hs_version == 0)
    return NN_OK; /* a kernel table without HardSwish: leave the pattern */
  bool changed = false;
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *d = &g->nodes[i];
    if (d->removed || d->domain[0] || d->n_in != 2 || d->n_out != 1 || d->n_attrs != 0)
      continue;
    bool div = strcmp(d->op_type, "Div") == 0, mul = strcmp(d->op_type, "Mul") == 0;
    if (!div && !mul)
      continue;
    float k;
    int mi = -1;
    if (div && scalar_f32(g, d->in[1], &k) && k == 6.0f)
      mi = d->in[0];
    else if (mul && scalar_f32(g, d->in[1], &k) && fabsf(k - 1.0f / 6.0f) < 1e-7f)
      mi = d->in[0];
    else if (mul && scalar_f32(g, d->in[0], &k) && fabsf(k - 1.0f / 6.0f) < 1e-7f)
      mi = d->in[1];
    nn_node *m = mi >= 0 ? sole_producer(g, mi, "Mul") : NULL;
    if (!m || m->n_in != 2 || m->n_attrs != 0)
      continue;
    for (int side = 0; side < 2; side++) {
      int x = m->in[side], ci = m->in[1 - side];
      nn_node *clip = sole_producer(g, ci, "Clip");
      if (x < 0 || !clip || clip->n_in < 1 || !clip_is_0_6(g, clip))
        continue;
      nn_node *add = sole_producer(g, clip->in[0], "Add");
      if (!add || add->n_in != 2 || add->n_attrs != 0)
        continue;
      float three;
      int other = add->in[0] == x ? add->in[1] : add->in[1] == x ? add->in[0] : -1;
      if (other < 0 || !scalar_f32(g, other, &three) || three != 3.0f)
        continue;
      char *name = nn_malloc(sizeof "HardSwish");
      if (!name)
        return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
      memcpy(name, "HardSwish", sizeof "HardSwish");
      nn_free(d->op_type);
      d->op_type = name;
      d->op = hs;
      d->kern = hs_kern;
      d->opset = 14;
      d->version = hs_version;
      d->in[0] = x;
      d->n_in = d->n_in_model = 1;
      nn_node *gone[3] = {add, clip, m};
      for (int r = 0; r < 3; r++) {
        gone[r]->removed = true;
        g->values[gone[r]->out[0]].producer = -1;
      }
      changed = true;
      break;
    }
  }
  if (changed) {
    nn_graph_count_uses(g);
    nn_graph_resolve_pointers(g);
  }
  return NN_OK;
}

/* Constant(value=tensor) -> an initializer owning the attribute's bytes.
 * Left as nodes: graph outputs (the output keeps its producer), strings,
 * sparse and scalar-attribute forms, tensors whose bytes do not match their
 * shape (prepare reports those). */
static void constants_to_initializers(nn_graph *g) {
  bool changed = false;
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *n = &g->nodes[i];
    if (n->removed || n->domain[0] || strcmp(n->op_type, "Constant") != 0 || n->n_attrs != 1 ||
        n->n_out != 1 || n->out[0] < 0 || n->n_in != 0)
      continue;
    nn_attr *a = &n->attrs[0];
    if (a->type != NN_ATTR_TENSOR || strcmp(a->name, "value") != 0)
      continue;
    nn_tensor *t = &a->t;
    size_t es = nn_dtype_size(t->dtype);
    if (es == 0 || t->dtype == NN_DTYPE_STRING || t->rank < 0 || t->rank > NN_MAX_RANK)
      continue;
    int64_t numel = nn_tensor_numel(t);
    if (numel <= 0 || t->nbytes != (size_t)numel * es || !t->data)
      continue;
    nn_value *y = &g->values[n->out[0]];
    if (y->is_graph_output || y->kind != NN_VAL_INTER)
      continue;
    y->kind = NN_VAL_CONST;
    y->dtype = t->dtype;
    y->rank = t->rank;
    memcpy(y->dims, t->dims, sizeof y->dims);
    y->numel = numel;
    y->nbytes = t->nbytes;
    y->const_data = t->data;
    y->data = t->data;
    y->producer = -1;
    g->weights_bytes += t->nbytes;
    t->data = NULL;   /* the value owns the bytes now */
    t->nbytes = 0;
    n->removed = true;
    changed = true;
  }
  if (changed) {
    nn_graph_count_uses(g);
    nn_graph_resolve_pointers(g);
  }
}

nn_status nn_graph_simplify(nn_graph *g, nn_kernel_lookup_fn find_kernel, nn_error *err) {
  constants_to_initializers(g);
  int *repl = nn_malloc(((size_t)g->n_values + 1) * sizeof(int));
  if (!repl)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  for (int v = 0; v < g->n_values; v++)
    repl[v] = v;
  bool changed = false;
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *n = &g->nodes[i];
    bool identity = strcmp(n->op_type, "Identity") == 0 && n->domain[0] == '\0';
    bool dropout = strcmp(n->op_type, "Dropout") == 0 && n->domain[0] == '\0';
    if (!identity && !dropout)
      continue;
    if (n->n_in < 1 || n->in[0] < 0 || n->n_out < 1 || n->out[0] < 0)
      continue;
    if (dropout && !dropout_is_noop(g, n))
      continue;
    nn_value *y = &g->values[n->out[0]];
    if (y->is_graph_output)
      continue; /* the output name must survive: keep the node as a copy */
    /* nodes are in topological order, so the input was already replaced
     * when it came from a removed node itself */
    repl[n->out[0]] = repl[n->in[0]];
    y->producer = -1;
    if (n->n_out > 1 && n->out[1] >= 0)
      g->values[n->out[1]].producer = -1;
    n->removed = true;
    changed = true;
  }
  if (changed) {
    for (int i = 0; i < g->n_nodes; i++) {
      nn_node *n = &g->nodes[i];
      for (int k = 0; k < n->n_in; k++)
        if (n->in[k] >= 0)
          n->in[k] = repl[n->in[k]];
    }
    nn_graph_count_uses(g);
    nn_graph_resolve_pointers(g);
  }
  nn_free(repl);
  nn_status st = fuse_conv_batchnorm(g, err);
  if (st == NN_OK && !nn_knobs().no_fusion)
    st = fuse_hard_swish(g, find_kernel, err);
  return st;
}
