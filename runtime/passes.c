/* passes.c - rewrites done once at load, before any shape is known:
 * Identity and inference-mode Dropout are removed by pointing their consumers
 * at their input, and a BatchNormalization whose parameters and preceding
 * Conv's weights are true initializers is folded into those weights for good.
 * (When the weights only become constant through plan-time folding, as in
 * models that build them with ConstantOfShape, plan.c does the same fusion
 * per plan; the arithmetic of both is ops/batchnorm.c.) */
#include <stdio.h>
#include <string.h>

#include "graph.h"
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

nn_status nn_graph_simplify(nn_graph *g, nn_error *err) {
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
  return fuse_conv_batchnorm(g, err);
}
