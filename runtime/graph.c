/* graph.c - graph structure: values, op resolution, validation and
 * topological order. */
#include <stdio.h>
#include <string.h>

#include "graph.h"
#include "nn_limits.h"

int nn_graph_add_value(nn_graph *g, const char *name) {
  if (g->n_values == g->cap_values) {
    int cap = g->cap_values ? g->cap_values * 2 : 64;
    nn_value *nv = nn_realloc(g->values, (size_t)cap * sizeof *nv);
    if (!nv)
      return -1;
    g->values = nv;
    g->cap_values = cap;
  }
  nn_value *v = &g->values[g->n_values];
  memset(v, 0, sizeof *v);
  v->name = nn_strdup(name);
  if (!v->name)
    return -1;
  v->producer = -1;
  v->alias_of = -1;
  v->decl_rank = -1;
  v->outer_slot = -1;
  return g->n_values++;
}

int nn_graph_find_value(const nn_graph *g, const char *name) {
  for (int i = 0; i < g->n_values; i++)
    if (strcmp(g->values[i].name, name) == 0)
      return i;
  return -1;
}

nn_status nn_node_for_subgraphs(nn_node *n, nn_subgraph_fn fn, void *user) {
  for (int k = 0; k < n->n_attrs; k++)
    if (n->attrs[k].type == NN_ATTR_GRAPH && n->attrs[k].g) {
      nn_status st = fn(n->attrs[k].g, user);
      if (st != NN_OK)
        return st;
    }
  return NN_OK;
}

int nn_graph_opset(const nn_graph *g, const char *domain) {
  while (g->parent)
    g = g->parent;
  if (!domain || strcmp(domain, "ai.onnx") == 0)
    domain = "";
  for (int i = 0; i < g->n_opsets; i++)
    if (strcmp(g->opsets[i].domain, domain) == 0)
      return g->opsets[i].version;
  return 0;
}


void nn_graph_free(nn_graph *g) {
  if (!g)
    return;
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *n = &g->nodes[i];
    nn_free(n->name);
    nn_free(n->op_type);
    nn_free(n->domain);
    nn_free(n->in);
    nn_free(n->out);
    nn_free(n->x);
    nn_free(n->y);
    for (int k = 0; k < n->n_attrs; k++) {
      nn_graph_free(n->attrs[k].g);
      n->attrs[k].g = NULL;
      nn_attr_free(&n->attrs[k]);
    }
    nn_free(n->attrs);
    nn_free(n->priv);
    nn_free(n->boxes);
  }
  nn_free(g->nodes);
  for (int i = 0; i < g->n_values; i++) {
    nn_free(g->values[i].name);
    nn_aligned_free(g->values[i].const_data);
    nn_aligned_free(g->values[i].fold_data);
  }
  nn_free(g->values);
  nn_free(g->inputs);
  nn_free(g->outputs);
  for (int i = 0; i < g->n_opsets; i++)
    nn_free(g->opsets[i].domain);
  nn_free(g->opsets);
  nn_free(g->base_dir);
  nn_free(g->plan.steps);
  nn_free(g->plan.ws_offsets);
  for (int i = 0; i < g->plan.n_extra; i++)
    nn_aligned_free(g->plan.extra[i].fold_data);
  nn_free(g->plan.extra);
  nn_aligned_free(g->scratch);
  nn_free(g);
}

/* ---- attributes ----------------------------------------------------------- */

/* ---- finalize -------------------------------------------------------------- */
void nn_graph_resolve_pointers(nn_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_in; k++)
      n->x[k] = n->in[k] >= 0 ? &g->values[n->in[k]] : NULL;
    for (int k = 0; k < n->n_out; k++)
      n->y[k] = n->out[k] >= 0 ? &g->values[n->out[k]] : NULL;
  }
}

static void versions_str(const nn_op_def *op, char *buf, size_t len) {
  size_t off = 0;
  buf[0] = '\0';
  for (int i = 0; i < NN_MAX_VERSIONS && op->versions[i] && off < len; i++)
    off += (size_t)snprintf(buf + off, len - off, "%s%d", i ? ", " : "", op->versions[i]);
}

/* Kahn's algorithm, stable on the model's order; nodes are physically
 * reordered so that index order is execution order. */
static nn_status topo_sort(nn_graph *g, const nn_limits *lim, nn_error *err) {
  nn_status st = NN_OK;
  int n = g->n_nodes;
  int *indeg = nn_calloc((size_t)n + 1, sizeof(int));
  int *queue = nn_calloc((size_t)n + 1, sizeof(int));
  int *depth = nn_calloc((size_t)n + 1, sizeof(int));
  int *newidx = nn_calloc((size_t)n + 1, sizeof(int));
  /* consumer lists in CSR form */
  int *cstart = nn_calloc((size_t)g->n_values + 1, sizeof(int));
  int *clist = NULL;
  nn_node *sorted = NULL;
  if (!indeg || !queue || !depth || !newidx || !cstart) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    goto out;
  }
  size_t total = 0;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < g->nodes[i].n_in; k++)
      if (g->nodes[i].in[k] >= 0) {
        cstart[g->nodes[i].in[k]]++;
        total++;
      }
  for (int v = 0, acc = 0; v <= g->n_values; v++) {
    int c = v < g->n_values ? cstart[v] : 0;
    cstart[v] = acc;
    acc += c;
  }
  clist = nn_calloc(total + 1, sizeof(int));
  if (!clist) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    goto out;
  }
  {
    int *pos = nn_calloc((size_t)g->n_values + 1, sizeof(int));
    if (!pos) {
      st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
      goto out;
    }
    for (int i = 0; i < n; i++)
      for (int k = 0; k < g->nodes[i].n_in; k++) {
        int v = g->nodes[i].in[k];
        if (v >= 0)
          clist[cstart[v] + pos[v]++] = i;
      }
    nn_free(pos);
  }
  for (int i = 0; i < n; i++)
    for (int k = 0; k < g->nodes[i].n_in; k++) {
      int v = g->nodes[i].in[k];
      if (v >= 0 && g->values[v].producer >= 0)
        indeg[i]++;
    }
  int head = 0, tail = 0;
  for (int i = 0; i < n; i++)
    if (indeg[i] == 0)
      queue[tail++] = i;
  int max_depth = 0;
  while (head < tail) {
    int i = queue[head++];
    for (int k = 0; k < g->nodes[i].n_out; k++) {
      int v = g->nodes[i].out[k];
      if (v < 0)
        continue;
      for (int c = cstart[v]; c < cstart[v + 1]; c++) {
        int j = clist[c];
        if (depth[j] < depth[i] + 1)
          depth[j] = depth[i] + 1;
        if (depth[j] > max_depth)
          max_depth = depth[j];
        if (--indeg[j] == 0)
          queue[tail++] = j;
      }
    }
  }
  if (tail < n) {
    int culprit = -1;
    for (int i = 0; i < n && culprit < 0; i++)
      if (indeg[i] > 0)
        culprit = i;
    st = nn_error_set(err, NN_ERR_INVALID_MODEL, "the graph has a cycle through node '%s' (%s)",
                      g->nodes[culprit].name, g->nodes[culprit].op_type);
    goto out;
  }
  int max_allowed = lim && lim->max_graph_depth ? lim->max_graph_depth : NN_LIMIT_GRAPH_DEPTH;
  if (max_depth + 1 > max_allowed) {
    st = nn_error_set(err, NN_ERR_LIMIT, "the graph is %d nodes deep, more than the limit %d",
                      max_depth + 1, max_allowed);
    goto out;
  }
  sorted = nn_malloc(((size_t)n + 1) * sizeof(nn_node));
  if (!sorted) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    goto out;
  }
  for (int i = 0; i < n; i++) {
    sorted[i] = g->nodes[queue[i]];
    newidx[queue[i]] = i;
  }
  for (int v = 0; v < g->n_values; v++)
    if (g->values[v].producer >= 0)
      g->values[v].producer = newidx[g->values[v].producer];
  nn_free(g->nodes);
  g->nodes = sorted;
  g->cap_nodes = n;
  sorted = NULL;
out:
  nn_free(indeg);
  nn_free(queue);
  nn_free(depth);
  nn_free(newidx);
  nn_free(cstart);
  nn_free(clist);
  nn_free(sorted);
  return st;
}

nn_status nn_graph_count_uses(nn_graph *g) {
  for (int v = 0; v < g->n_values; v++)
    g->values[v].n_uses = g->values[v].is_graph_output ? 1 : 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].removed)
      continue;
    for (int k = 0; k < g->nodes[i].n_in; k++)
      if (g->nodes[i].in[k] >= 0)
        g->values[g->nodes[i].in[k]].n_uses++;
  }
  return NN_OK;
}

nn_status nn_graph_finalize(nn_graph *g, const nn_limits *lim, nn_kernel_lookup_fn find_kernel,
                            nn_error *err) {
  /* every consumed value must come from somewhere */
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_in; k++) {
      int v = n->in[k];
      if (v < 0)
        continue;
      nn_value *val = &g->values[v];
      if (val->producer < 0 && val->kind != NN_VAL_CONST && val->kind != NN_VAL_INPUT) {
        if (k >= n->n_in_model - n->n_implicit)
          return nn_error_set(err, NN_ERR_INVALID_MODEL,
                              "a subgraph of node '%s' (%s) reads '%s', which no enclosing scope "
                              "defines", n->name, n->op_type, val->name);
        return nn_error_set(err, NN_ERR_INVALID_MODEL,
                            "input '%s' of node '%s' (%s) is neither a graph input, an initializer "
                            "nor produced by any node", val->name, n->name, n->op_type);
      }
    }
  }
  for (int i = 0; i < g->n_outputs; i++) {
    nn_value *val = &g->values[g->outputs[i]];
    if (val->producer < 0 && val->kind != NN_VAL_CONST && val->kind != NN_VAL_INPUT)
      return nn_error_set(err, NN_ERR_INVALID_MODEL, "graph output '%s' is never produced", val->name);
  }
  /* operators and versions */
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *n = &g->nodes[i];
    n->op = nn_op_find(n->domain, n->op_type);
    n->kern = n->op ? find_kernel(n->domain, n->op_type) : NULL;
    if (!n->op || !n->kern)
      return nn_error_set(err, NN_ERR_UNSUPPORTED, "unsupported operator %s%s%s at node '%s'",
                          n->domain[0] ? n->domain : "", n->domain[0] ? ":" : "", n->op_type, n->name);
    n->opset = nn_graph_opset(g, n->domain);
    if (n->opset == 0)
      return nn_error_set(err, NN_ERR_INVALID_MODEL,
                          "node '%s' (%s) uses domain '%s' which the model does not import", n->name,
                          n->op_type, n->domain);
    n->version = nn_op_resolve_version(n->op, n->opset);
    if (n->version == 0) {
      char vs[64];
      versions_str(n->op, vs, sizeof vs);
      return nn_error_set(err, NN_ERR_UNSUPPORTED,
                          "operator %s at opset %d (node '%s') is not supported: implemented "
                          "since-versions %s", n->op_type, n->opset, n->name, vs);
    }
    /* the schema knows the ONNX inputs, not the outer-scope ones */
    n->n_in_model -= n->n_implicit;
    nn_status ast = nn_op_check_schema(n, err);
    n->n_in_model += n->n_implicit;
    if (ast != NN_OK)
      return ast;
    if (n->op_type[0] && strcmp(n->op_type, "Identity") == 0 && n->domain[0] == '\0') {
      n->box_op = nn_op_find("nn.box", n->op_type);
      n->box_kern = find_kernel("nn.box", n->op_type);
    }
    bool has_sub = false;
    for (int k = 0; k < n->n_attrs; k++)
      if (n->attrs[k].type == NN_ATTR_GRAPH && n->attrs[k].g) {
        has_sub = true;
        ast = nn_graph_finalize(n->attrs[k].g, lim, find_kernel, err);
        if (ast != NN_OK)
          return ast;
      }
    if (has_sub && !(n->op->flags & NN_OP_SUBGRAPH))
      return nn_error_set(err, NN_ERR_UNSUPPORTED, "node '%s' (%s) has a graph attribute, which "
                          "this operator does not take", n->name, n->op_type);
  }
  nn_status st = topo_sort(g, lim, err);
  if (st != NN_OK)
    return st;
  nn_graph_count_uses(g);
  nn_graph_resolve_pointers(g);
  return NN_OK;
}
