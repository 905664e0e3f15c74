/* passes.c - structural rewrites done once at load, before any shape is
 * known: Identity and inference-mode Dropout are removed by pointing their
 * consumers at their input.  (Folding BatchNormalization into Conv needs the
 * constants that plan-time folding produces, so it lives in plan.c.) */
#include <string.h>

#include "graph.h"

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
  return NN_OK;
}
