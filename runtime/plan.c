/* plan.c - from concrete input shapes to an execution plan.
 *
 * 1. prepare: in topological order every node computes its output shapes;
 *    a node whose inputs are all known (constants, unfed defaults, values
 *    folded before it, or only the shape of its input for Shape/Size) is
 *    evaluated right away and its outputs become plan-time constants.
 * 2. fusion: BatchNormalization after a Conv with constant weights is folded
 *    into new Conv weights and bias.
 * 3. lifetimes: every intermediate value lives from the step producing it to
 *    its last consumer.  Element-wise ops write over an input that dies there
 *    (in place); view ops (Reshape...) share their input's bytes.
 * 4. placement: buffers sorted by size, each put in the best-fitting gap among
 *    the already-placed buffers whose lifetimes overlap it (the greedy-by-size
 *    strategy of TFLite's arena planner); the arena is the highest end.
 * The planner is layout-free: constants keep the ONNX layout here.  A
 * backend that reads weights in its own layout re-lays them out in its build
 * step and restores them in before_plan (backend.h; the CPU backend's GEMM
 * panels: cpu/cpu_weights.c), so every pass above sees the model's tensors.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "knobs.h"
#include "nn_limits.h"
#include "ops/activation.h"
#include "ops/batchnorm.h"

static int *plan_producers(const nn_graph *g);

static bool op_is(const nn_node *n, const char *op) {
  return n->domain[0] == '\0' && strcmp(n->op_type, op) == 0;
}

/* Shape and Size read only the dims of their input. */
static bool op_needs_dims_only(const nn_node *n) {
  return op_is(n, "Shape") || op_is(n, "Size") || op_is(n, "SequenceLength") ||
         op_is(n, "OptionalHasElement");
}

static void subgraph_value_needs(const nn_node *n, bool *need);

void nn_plan_value_needs(const nn_graph *g, bool *need) {
  memset(need, 0, (size_t)g->n_values * sizeof *need);
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    const nn_node *n = &g->nodes[i];
    if (n->removed || !n->op)
      continue;
    bool outs_needed = false;
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k] >= 0 && need[n->out[k]])
        outs_needed = true;
    for (int k = 0; k < n->n_in; k++) {
      if (n->in[k] < 0)
        continue;
      bool shape_slot = k < 32 && (n->op->shape_inputs & (1u << k));
      if (shape_slot || (outs_needed && !op_needs_dims_only(n)))
        need[n->in[k]] = true;
    }
    subgraph_value_needs(n, need);
  }
}

/* ---- subgraphs ---------------------------------------------------------------- */
/* A control-flow node (If, Loop, Scan) reads values its subgraphs need at
 * plan time (a Loop whose scan outputs are as long as its trip count, a
 * body that slices by the iteration number): its op says which, from the
 * structure alone. */
static void subgraph_value_needs(const nn_node *n, bool *need) {
  if (!(n->op->flags & NN_OP_SUBGRAPH) || !n->kern->subgraph_needs || n->n_in <= 0)
    return;
  bool *k_need = nn_calloc((size_t)n->n_in, sizeof(bool));
  if (!k_need) {
    /* out of memory: the conservative answer, every input */
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] >= 0)
        need[n->in[k]] = true;
    return;
  }
  if (n->kern->subgraph_needs(n, k_need))
    for (int k = 0; k < n->n_in; k++)
      if (k_need[k] && n->in[k] >= 0)
        need[n->in[k]] = true;
  nn_free(k_need);
}

static nn_status clear_one_subgraph(nn_graph *sub, void *user) {
  (void)user;
  nn_plan_clear(sub, &sub->plan);
  sub->planned = false;
  return NN_OK;
}

/* The subgraphs' plans go with their node's. */
static void clear_subgraphs(nn_graph *g) {
  for (int i = 0; i < g->n_nodes; i++)
    nn_node_for_subgraphs(&g->nodes[i], clear_one_subgraph, NULL);
  for (int v = 0; v < g->n_values; v++) {
    nn_value *val = &g->values[v];
    if (val->kind != NN_VAL_INPUT) {
      val->vtype = NN_VT_TENSOR;
      val->box = NULL;
    }
  }
}

/* A boxed input (a sequence, an optional) reaches only ops that take them;
 * Identity switches to its boxed variant. */
static nn_status check_boxed_inputs(nn_ctx *c, nn_node *n) {
  bool boxed = false;
  for (int k = 0; k < n->n_in; k++)
    if (n->x[k] && n->x[k]->vtype != NN_VT_TENSOR)
      boxed = true;
  if (!boxed || (n->op->flags & NN_OP_BOXES))
    return NN_OK;
  if (n->box_op) {
    n->op = n->box_op;
    n->kern = n->box_kern;
    return NN_OK;
  }
  return nn_fail(c, NN_ERR_UNSUPPORTED, "takes a sequence or optional input, which this operator "
                 "does not accept");
}

/* ---- clearing ---------------------------------------------------------------- */
void nn_plan_clear(nn_graph *g, nn_plan *plan) {
  clear_subgraphs(g);
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *n = &g->nodes[i];
    nn_free(n->priv);
    n->priv = NULL;
    nn_free(n->boxes);
    n->boxes = NULL;
    n->ws = NULL;
    n->ws_bytes = 0;
    n->priv_const_bytes = 0;
    n->folded = false;
    n->fused = false;
    memset(&n->act, 0, sizeof n->act);
    n->res_slot = 0;
    n->pre = NULL;
    n->n_in = n->n_in_model;
  }
  for (int v = 0; v < g->n_values; v++) {
    nn_value *val = &g->values[v];
    if (val->fold_data)
      val->packed_a_groups = 0;   /* the packed block was the folded value */
    nn_aligned_free(val->fold_data);
    val->fold_data = NULL;
    val->alias_of = -1;
    val->offset = 0;
    if (val->kind == NN_VAL_CONST) {
      val->known = true;
      val->data = val->const_data;
    } else if (val->kind != NN_VAL_INPUT) {
      val->known = false;
      val->data = NULL;
    }
  }
  if (plan) {
    for (int i = 0; i < plan->n_extra; i++)
      nn_aligned_free(plan->extra[i].fold_data);
    nn_free(plan->extra);
    nn_free(plan->steps);
    nn_free(plan->ws_offsets);
    memset(plan, 0, sizeof *plan);
  }
  nn_graph_resolve_pointers(g);
}

/* ---- prepare and fold -------------------------------------------------------- */
static nn_status alloc_value_data(nn_value *v, nn_error *err) {
  v->fold_data = nn_aligned_alloc(v->nbytes ? v->nbytes : 1);
  if (!v->fold_data)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory folding '%s' (%zu bytes)", v->name, v->nbytes);
  v->data = v->fold_data;
  return NN_OK;
}

static nn_status prepare_node(nn_ctx *c, nn_node *n, nn_error *err) {
  nn_free(n->priv);
  n->priv = NULL;
  nn_free(n->boxes);
  n->boxes = NULL;
  n->ws_bytes = 0;
  n->priv_const_bytes = 0;
  c->node = n;
  nn_status bst = check_boxed_inputs(c, n);
  if (bst != NN_OK)
    return bst;
  for (int k = 0; k < n->n_in; k++) {
    nn_value *x = n->x[k];
    if (!x)
      continue;
    if (x->dtype == NN_DTYPE_UNDEFINED)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "input %d ('%s') has no type", k, x->name);
    if (k < 32 && (n->op->shape_inputs & (1u << k)) && !x->known)
      return nn_fail(c, NN_ERR_UNSUPPORTED,
                     "input %d ('%s') decides the output shape but is only computed at run time "
                     "(data-dependent shapes are not supported)", k, x->name);
  }
  for (int k = 0; k < n->n_out; k++)
    if (n->y[k]) {
      n->y[k]->dtype = NN_DTYPE_UNDEFINED;
      n->y[k]->rank = 0;
      n->y[k]->numel = 0;
      n->y[k]->nbytes = 0;
      n->y[k]->vtype = NN_VT_TENSOR;
      n->y[k]->box = NULL;
    }
  /* the op layer infers the outputs, then the CPU kernel (the reference every
   * node has: folding runs it, a device backend falls back to it) takes its
   * parameters and sizes its workspace */
  nn_status st = n->op->infer ? n->op->infer(c, n) : NN_OK;
  if (st == NN_OK && n->kern->prepare)
    st = n->kern->prepare(c, n);
  if (st != NN_OK) {
    if (err && err->msg[0] == '\0')
      nn_fail(c, st, "prepare failed (%s)", nn_status_str(st));
    return st;
  }
  for (int k = 0; k < n->n_out; k++)
    if (n->y[k] && n->y[k]->dtype == NN_DTYPE_UNDEFINED)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "output %d ('%s') was not produced by prepare", k,
                     n->y[k]->name);
  /* a workspace lives in the arena (or is allocated alone when folding):
   * bound it before anything is allocated for it */
  int64_t max_arena = c->limits && c->limits->max_arena_bytes ? c->limits->max_arena_bytes
                                                              : NN_LIMIT_ARENA_BYTES;
  if (n->ws_bytes > (uint64_t)max_arena)
    return nn_fail(c, NN_ERR_LIMIT, "needs a %zu-byte workspace, more than the arena limit of %lld bytes",
                   n->ws_bytes, (long long)max_arena);
  return NN_OK;
}

static nn_status fold_node(nn_ctx *c, nn_node *n, nn_plan *plan, nn_error *err) {
  nn_status st = NN_OK;
  void *ws = NULL;
  for (int k = 0; k < n->n_out; k++) {
    nn_value *y = n->y[k];
    if (!y)
      continue;
    st = alloc_value_data(y, err);
    if (st != NN_OK)
      return st;
    plan->folded_bytes += y->nbytes;
  }
  ws = nn_aligned_alloc(n->ws_bytes ? n->ws_bytes : 1);
  if (!ws)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory for workspace of node '%s'", n->name);
  n->ws = ws;
  c->node = n;
  st = n->kern->run(c, n);
  n->ws = NULL;
  nn_aligned_free(ws);
  if (st != NN_OK) {
    if (err && err->msg[0] == '\0')
      nn_fail(c, st, "constant folding failed (%s)", nn_status_str(st));
    return st;
  }
  for (int k = 0; k < n->n_out; k++)
    if (n->y[k])
      n->y[k]->known = true;
  n->folded = true;
  plan->nodes_folded++;
  return NN_OK;
}

static bool node_foldable(const nn_node *n) {
  if (n->op->flags & NN_OP_NO_FOLD)
    return false;
  if (op_needs_dims_only(n))
    return true;
  for (int k = 0; k < n->n_in; k++)
    if (n->x[k] && !n->x[k]->known)
      return false;
  return true;
}

/* ---- Conv + BatchNormalization fusion --------------------------------------- */
static int vidx(const nn_graph *g, const nn_value *v) {
  if (v < g->values || v >= g->values + g->n_values)
    return -1;
  return (int)(v - g->values);
}

static bool value_is_const_f32(const nn_value *v) {
  return v && v->known && v->dtype == NN_DTYPE_FLOAT && v->data;
}

/* The Conv producing x, when fusing BN into it is legal. */
static nn_node *bn_fusable_conv(nn_graph *g, const nn_node *bn) {
  if (!nn_bn_fold_candidate(bn) || bn->folded || bn->removed)
    return NULL;
  for (int k = 1; k < 5; k++)
    if (!value_is_const_f32(bn->x[k]))
      return NULL;
  for (int k = 1; k < bn->n_out; k++)
    if (bn->y[k] && bn->y[k]->n_uses > 0)
      return NULL;
  const nn_value *x = bn->x[0];
  if (!x || x->known || x->producer < 0 || x->is_graph_output || x->n_uses != 1)
    return NULL;
  nn_node *conv = &g->nodes[x->producer];
  if (!op_is(conv, "Conv") || conv->folded || conv->fused || conv->removed || conv->y[0] != x)
    return NULL;
  if (!value_is_const_f32(conv->x[1]) || x->dtype != NN_DTYPE_FLOAT)
    return NULL;
  if (conv->n_in > 2 && conv->x[2] && !value_is_const_f32(conv->x[2]))
    return NULL;
  int64_t m = conv->x[1]->dims[0];
  if (conv->x[1]->rank < 1 || x->rank < 2 || x->dims[1] != m)
    return NULL;
  for (int k = 1; k < 5; k++)
    if (bn->x[k]->numel != m)
      return NULL;
  return conv;
}

/* Conv's weights and bias made writable for a fold: a value folded for this
 * plan and read by this Conv alone is rewritten in place; anything else
 * gets a plan-owned copy in plan->extra (a missing bias: zeros).  On
 * return conv->x[1] / x[2] are those values (n_in 3). */
static nn_status conv_params_writable(nn_graph *g, nn_plan *plan, int cap, nn_node *conv,
                                      nn_error *err) {
  nn_value *w = conv->x[1];
  nn_value *b = conv->n_in > 2 ? conv->x[2] : NULL;
  int64_t m = w->dims[0];
  /* a copy an earlier fold made for this Conv is its own already */
  bool w_own = w >= plan->extra && w < plan->extra + plan->n_extra;
  bool b_own = b && b >= plan->extra && b < plan->extra + plan->n_extra;
  bool w_inplace = w_own || (vidx(g, w) >= 0 && w->fold_data && w->n_uses == 1);
  bool b_inplace = b_own || (b && vidx(g, b) >= 0 && b->fold_data && b->n_uses == 1);
  nn_value *nw = w, *nb = b;
  nn_status st;
  if (plan->n_extra + 2 > cap)
    return nn_error_set(err, NN_ERR_NOMEM, "conv fold: plan constants exhausted");
  if (!w_inplace) {
    nw = &plan->extra[plan->n_extra++];
    *nw = *w;
    nw->const_data = NULL;
    nw->fold_data = NULL;
    st = alloc_value_data(nw, err);
    if (st != NN_OK)
      return st;
    memcpy(nw->data, w->data, w->nbytes);
    nw->known = true;
    plan->folded_bytes += nw->nbytes;
  }
  if (!b_inplace) {
    const char *name = b ? b->name : w->name;
    nb = &plan->extra[plan->n_extra++];
    memset(nb, 0, sizeof *nb);
    nb->name = (char *)name;
    nb->dtype = NN_DTYPE_FLOAT;
    nb->rank = 1;
    nb->dims[0] = m;
    nb->numel = m;
    nb->nbytes = (size_t)m * sizeof(float);
    nb->kind = NN_VAL_CONST;
    nb->producer = -1;
    nb->alias_of = -1;
    st = alloc_value_data(nb, err);
    if (st != NN_OK)
      return st;
    if (b)
      memcpy(nb->data, b->data, nb->nbytes);
    else
      memset(nb->data, 0, nb->nbytes);
    nb->known = true;
    plan->folded_bytes += nb->nbytes;
  }
  conv->x[1] = nw;
  conv->x[2] = nb;
  if (conv->n_in < 3)
    conv->n_in = 3;
  return NN_OK;
}

/* The Conv producing x (float, read once, M output channels), when a fold
 * of the node reading x into it is legal.  prod: the node producing each
 * value in this plan (a Conv that absorbed a fold produces its output). */
static nn_node *foldable_conv(nn_graph *g, const int *prod, const nn_value *x) {
  int xi = vidx(g, x);
  if (xi < 0 || x->known || prod[xi] < 0 || x->is_graph_output || x->n_uses != 1 ||
      x->dtype != NN_DTYPE_FLOAT)
    return NULL;
  nn_node *conv = &g->nodes[prod[xi]];
  if (!op_is(conv, "Conv") || conv->folded || conv->fused || conv->removed || conv->y[0] != x ||
      conv->act.kind != NN_ACT_NONE)
    return NULL;
  if (!value_is_const_f32(conv->x[1]) || conv->x[1]->rank < 1 || x->rank < 2 ||
      x->dims[1] != conv->x[1]->dims[0])
    return NULL;
  if (conv->n_in > 2 && conv->x[2] && !value_is_const_f32(conv->x[2]))
    return NULL;
  return conv;
}

/* A constant that broadcasts onto a Conv output [N, M, ...] of rank r as
 * one value per channel (or one for all): numel 1, or its dims
 * right-aligned to the output's are 1 except M on the channel axis. */
static bool per_channel_const(const nn_value *k, int r, int64_t m) {
  if (!value_is_const_f32(k) || k->rank > r)
    return false;
  if (k->numel == 1)
    return true;
  for (int d = 0; d < k->rank; d++) {
    int axis = r - k->rank + d;
    int64_t want = axis == 1 ? m : 1;
    if (k->dims[d] != want)
      return false;
  }
  return k->rank >= r - 1; /* the channel axis is within its dims */
}

static int count_fold_candidates(const nn_graph *g) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (op_is(&g->nodes[i], "BatchNormalization") || op_is(&g->nodes[i], "Mul") ||
        op_is(&g->nodes[i], "Add") || op_is(&g->nodes[i], "Sub"))
      n++;
  return n;
}

/* Node n absorbed by `into` (a fold or a fusion): `into` writes n's output
 * and is prepared again; prod (the producer of each value) follows. */
static nn_status absorb(nn_ctx *c, nn_graph *g, int *prod, nn_node *into, nn_node *n,
                        nn_error *err) {
  into->y[0] = n->y[0];
  n->fused = true;
  int yi = vidx(g, n->y[0]);
  if (yi >= 0)
    prod[yi] = (int)(into - g->nodes);
  return prepare_node(c, into, err);
}

/* Per-channel affine maps after a Conv, folded into its weights for this
 * plan: BatchNormalization (inference form), and Mul / Add / Sub by a
 * per-channel or scalar constant (PP-LCNet's learnable affine blocks, the
 * scale-and-shift exporters write out).  Each fold makes the Conv produce
 * the node's output; a chain (Conv, Mul, Add) folds one node at a time in
 * topological order. */
static nn_status fuse_conv_affine(nn_ctx *c, nn_graph *g, nn_plan *plan, int cap, nn_error *err) {
  int *prod = nn_malloc(((size_t)g->n_values + 1) * sizeof(int));
  if (!prod)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  for (int v = 0; v < g->n_values; v++)
    prod[v] = g->values[v].producer;
  /* BatchNormalization always folds (it is the model's own affine map);
   * the Mul/Add folds are fusions NN_NO_FUSION turns off */
  const bool no_fusion = nn_knobs().no_fusion;
  nn_status st = NN_OK;
  for (int i = 0; i < g->n_nodes && st == NN_OK; i++) {
    nn_node *n = &g->nodes[i];
    if (n->removed || n->folded || n->fused || !n->y[0])
      continue;
    nn_node *conv = NULL;
    const nn_value *k = NULL;
    int kind = 0; /* 1 BN, 2 Mul, 3 Add, 4 Sub */
    if (op_is(n, "BatchNormalization")) {
      conv = bn_fusable_conv(g, n);
      kind = 1;
    } else if (!no_fusion && (op_is(n, "Mul") || op_is(n, "Add") || op_is(n, "Sub")) &&
               n->n_in == 2 && n->x[0] && n->x[1]) {
      kind = op_is(n, "Mul") ? 2 : op_is(n, "Add") ? 3 : 4;
      /* the Conv output on either side of Mul/Add, on the left of Sub */
      for (int side = 0; side < (kind == 4 ? 1 : 2) && !conv; side++) {
        nn_node *cv = foldable_conv(g, prod, n->x[side]);
        const nn_value *kk = n->x[1 - side];
        if (cv && per_channel_const(kk, n->x[side]->rank, cv->x[1]->dims[0]) &&
            n->y[0]->rank == n->x[side]->rank &&
            memcmp(n->y[0]->dims, n->x[side]->dims, sizeof(int64_t) * (size_t)n->y[0]->rank) == 0) {
          conv = cv;
          k = kk;
        }
      }
    }
    if (!conv)
      continue;
    st = conv_params_writable(g, plan, cap, conv, err);
    if (st != NN_OK)
      break;
    nn_value *w = conv->x[1], *b = conv->x[2];
    int64_t m = w->dims[0], per = w->numel / (m ? m : 1);
    float *wd = w->data, *bd = b->data;
    if (kind == 1) {
      nn_bn_fold_into_conv(n, m, per, n->x[1]->data, n->x[2]->data, n->x[3]->data, n->x[4]->data,
                           wd, bd);
    } else {
      const float *kd = k->data;
      for (int64_t o = 0; o < m; o++) {
        float v = kd[k->numel == 1 ? 0 : o];
        if (kind == 2) {
          for (int64_t j = 0; j < per; j++)
            wd[o * per + j] *= v;
          bd[o] *= v;
        } else {
          bd[o] += kind == 3 ? v : -v;
        }
      }
    }
    st = absorb(c, g, prod, conv, n, err);
  }
  nn_free(prod);
  return st;
}

/* A Conv that reads no padding: every output is a full window of its
 * input, so an affine map of the input is one of the weights and bias. */
static bool conv_pad_free(const nn_node *conv) {
  const char *ap = nn_attr_string(conv, "auto_pad", "NOTSET");
  if (strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0)
    return false;
  const nn_attr *pads = nn_attr_get(conv, "pads");
  if (pads) {
    if (pads->type != NN_ATTR_INTS)
      return false;
    for (int k = 0; k < pads->n; k++)
      if (pads->ints[k] != 0)
        return false;
  }
  return true;
}

/* Mul / Add / Sub by a per-channel or scalar constant whose result only a
 * padding-free Conv reads, folded into that Conv for this plan:
 * W[o, c, .] *= s[c]; B[o] += t[c] * sum W[o, c, .].  Walked backwards so a
 * chain (Mul, Add, Conv) folds from the Conv outwards. */
static nn_status fuse_affine_into_conv(nn_ctx *c, nn_graph *g, nn_plan *plan, int cap,
                                       nn_error *err) {
  int *cons = nn_malloc(((size_t)g->n_values + 1) * sizeof(int));
  if (!cons)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  for (int v = 0; v < g->n_values; v++)
    cons[v] = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *n = &g->nodes[i];
    if (n->removed || n->folded || n->fused)
      continue;
    for (int k = 0; k < n->n_in; k++) {
      int vi = n->x[k] ? vidx(g, n->x[k]) : -1;
      if (vi >= 0)
        cons[vi] = i;
    }
  }
  nn_status st = NN_OK;
  for (int i = g->n_nodes - 1; i >= 0 && st == NN_OK; i--) {
    nn_node *n = &g->nodes[i];
    if (n->removed || n->folded || n->fused || n->n_in != 2 || !n->x[0] || !n->x[1] || !n->y[0])
      continue;
    int kind = op_is(n, "Mul") ? 2 : op_is(n, "Add") ? 3 : op_is(n, "Sub") ? 4 : 0;
    const nn_value *y = n->y[0];
    int yi = vidx(g, y);
    if (!kind || yi < 0 || y->known || y->n_uses != 1 || y->is_graph_output || cons[yi] < 0 ||
        y->dtype != NN_DTYPE_FLOAT || y->rank < 3)
      continue;
    nn_node *conv = &g->nodes[cons[yi]];
    if (!op_is(conv, "Conv") || conv->fused || conv->folded || conv->removed || conv->x[0] != y ||
        conv->act.kind != NN_ACT_NONE || !value_is_const_f32(conv->x[1]) || conv->x[1]->rank < 3 ||
        (conv->n_in > 2 && conv->x[2] && !value_is_const_f32(conv->x[2])) || !conv_pad_free(conv))
      continue;
    int64_t cin = y->dims[1];
    nn_value *xin = NULL;
    const nn_value *k = NULL;
    for (int side = 0; side < (kind == 4 ? 1 : 2) && !xin; side++) {
      nn_value *a = n->x[side];
      const nn_value *kk = n->x[1 - side];
      if (!a->known && a->rank == y->rank &&
          memcmp(a->dims, y->dims, sizeof(int64_t) * (size_t)y->rank) == 0 &&
          per_channel_const(kk, y->rank, cin)) {
        xin = a;
        k = kk;
      }
    }
    if (!xin)
      continue;
    int64_t m = conv->x[1]->dims[0], cg = conv->x[1]->dims[1];
    int64_t groups = cg > 0 ? cin / cg : 0;
    if (groups < 1 || groups * cg != cin || m % groups != 0)
      continue;
    st = conv_params_writable(g, plan, cap, conv, err);
    if (st != NN_OK)
      break;
    float *wd = conv->x[1]->data, *bd = conv->x[2]->data;
    const float *kd = k->data;
    int64_t per = conv->x[1]->numel / m, spatial = per / cg, m_per_g = m / groups;
    for (int64_t o = 0; o < m; o++) {
      int64_t g0 = (o / m_per_g) * cg;
      for (int64_t cl = 0; cl < cg; cl++) {
        float v = kd[k->numel == 1 ? 0 : g0 + cl];
        float *wr = wd + o * per + cl * spatial;
        if (kind == 2) {
          for (int64_t j = 0; j < spatial; j++)
            wr[j] *= v;
        } else {
          float sum = 0.0f;
          for (int64_t j = 0; j < spatial; j++)
            sum += wr[j];
          bd[o] += (kind == 3 ? v : -v) * sum;
        }
      }
    }
    conv->x[0] = xin;
    n->fused = true;
    int xi = vidx(g, xin);
    if (xi >= 0)
      cons[xi] = (int)(conv - g->nodes);
    st = prepare_node(c, conv, err);
  }
  nn_free(cons);
  return st;
}

/* Both affine folds, sharing the plan-owned constants they may need. */
/* A BatchNormalization in inference form, float32, with per-channel
 * constant parameters (C of them), whose output x only the node reading it
 * reads; NULL otherwise. */
static nn_node *foldable_bn(nn_graph *g, const int *prod, const nn_value *x) {
  int xi = vidx(g, x);
  if (xi < 0 || x->known || prod[xi] < 0 || x->is_graph_output || x->n_uses != 1 ||
      x->dtype != NN_DTYPE_FLOAT || x->rank < 2)
    return NULL;
  nn_node *bn = &g->nodes[prod[xi]];
  if (!op_is(bn, "BatchNormalization") || bn->folded || bn->fused || bn->removed ||
      bn->y[0] != x || bn->act.kind != NN_ACT_NONE || bn->n_in < 5)
    return NULL;
  for (int k = 1; k < bn->n_out; k++)
    if (bn->y[k])
      return NULL;   /* training outputs */
  if (bn->version >= 14 && nn_attr_int(bn, "training_mode", 0) != 0)
    return NULL;
  for (int k = 1; k <= 4; k++)
    if (!bn->x[k] || !value_is_const_f32(bn->x[k]) || bn->x[k]->numel != x->dims[1])
      return NULL;   /* per element (spatial = 0), or not constants */
  return bn;
}

/* A plan-owned copy of constant input k of node n (once: a copy an earlier
 * fold made is the node's own already). */
static nn_status param_writable(nn_plan *plan, int cap, nn_node *n, int k, nn_error *err) {
  nn_value *v = n->x[k];
  if (v >= plan->extra && v < plan->extra + plan->n_extra)
    return NN_OK;
  if (plan->n_extra + 1 > cap)
    return nn_error_set(err, NN_ERR_NOMEM, "fold: plan constants exhausted");
  nn_value *nv = &plan->extra[plan->n_extra++];
  *nv = *v;
  nv->const_data = NULL;
  nv->fold_data = NULL;
  nn_status st = alloc_value_data(nv, err);
  if (st != NN_OK)
    return st;
  memcpy(nv->data, v->data, v->nbytes);
  nv->known = true;
  plan->folded_bytes += nv->nbytes;
  n->x[k] = nv;
  return NN_OK;
}

/* Mul / Add / Sub by a per-channel or scalar constant after a
 * BatchNormalization that alone feeds it, folded into the normalization's
 * scale and bias for this plan: scale * k and B * k; B + d; B - d.  Caffe2's
 * DenseNet-121 writes every one of its 62 normalizations as BN, Mul, Add
 * (then Relu): two passes over memory each, 6% of its time (Zen 5). */
static nn_status fuse_bn_affine(nn_ctx *c, nn_graph *g, nn_plan *plan, int cap, nn_error *err) {
  int *prod = plan_producers(g);
  if (!prod)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  nn_status st = NN_OK;
  for (int i = 0; i < g->n_nodes && st == NN_OK; i++) {
    nn_node *n = &g->nodes[i];
    if (n->removed || n->folded || n->fused || !n->y[0] || n->n_in != 2 || !n->x[0] || !n->x[1])
      continue;
    int kind = op_is(n, "Mul") ? 2 : op_is(n, "Add") ? 3 : op_is(n, "Sub") ? 4 : 0;
    if (!kind)
      continue;
    nn_node *bn = NULL;
    const nn_value *k = NULL;
    for (int side = 0; side < (kind == 4 ? 1 : 2) && !bn; side++) {
      nn_node *b = foldable_bn(g, prod, n->x[side]);
      const nn_value *kk = n->x[1 - side];
      if (b && per_channel_const(kk, n->x[side]->rank, n->x[side]->dims[1]) &&
          n->y[0]->rank == n->x[side]->rank &&
          memcmp(n->y[0]->dims, n->x[side]->dims, sizeof(int64_t) * (size_t)n->y[0]->rank) == 0) {
        bn = b;
        k = kk;
      }
    }
    if (!bn)
      continue;
    if ((st = param_writable(plan, cap, bn, 1, err)) || (st = param_writable(plan, cap, bn, 2, err)))
      break;
    float *scale = bn->x[1]->data, *bias = bn->x[2]->data;
    const float *kd = k->data;
    for (int64_t ch = 0; ch < bn->x[1]->numel; ch++) {
      float v = kd[k->numel == 1 ? 0 : ch];
      if (kind == 2) {
        scale[ch] *= v;
        bias[ch] *= v;
      } else {
        bias[ch] += kind == 3 ? v : -v;
      }
    }
    st = absorb(c, g, prod, bn, n, err);
  }
  nn_free(prod);
  return st;
}

static nn_status fuse_affine(nn_ctx *c, nn_graph *g, nn_plan *plan, nn_error *err) {
  int cap = count_fold_candidates(g) * 2;
  if (cap == 0)
    return NN_OK;
  plan->extra = nn_calloc((size_t)cap, sizeof(nn_value));
  if (!plan->extra)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  nn_status st = fuse_conv_affine(c, g, plan, cap, err);
  if (st == NN_OK && !nn_knobs().no_fusion)
    st = fuse_affine_into_conv(c, g, plan, cap, err);
  if (st == NN_OK && !nn_knobs().no_fusion)
    st = fuse_bn_affine(c, g, plan, cap, err);
  return st;
}

/* The node producing each value in this plan (-1 none): the executed
 * nodes' outputs, so a node that absorbed another produces its output.
 * Caller-owned (nn_free); NULL when out of memory. */
static int *plan_producers(const nn_graph *g) {
  int *prod = nn_malloc(((size_t)g->n_values + 1) * sizeof(int));
  if (!prod)
    return NULL;
  for (int v = 0; v < g->n_values; v++)
    prod[v] = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const nn_node *n = &g->nodes[i];
    if (n->removed || n->folded || n->fused)
      continue;
    for (int k = 0; k < n->n_out; k++) {
      int vi = n->y[k] ? vidx(g, n->y[k]) : -1;
      if (vi >= 0)
        prod[vi] = i;
    }
  }
  return prod;
}

/* ---- residual fusion -------------------------------------------------------- */
/* Add(Conv(x), r) where the Add alone reads the Conv's output and r has the
 * output's shape (no broadcast): the Conv adds r in its epilogue, while the
 * tile is in registers, and writes the Add's output, so the sum costs no pass
 * over memory (ResNet bottlenecks, MobileNet/BlazeFace blocks: a shortcut
 * Add, then a Relu that the activation fusion below folds in as well).  Only
 * for a backend whose kernels implement it (NN_FUSE_RESIDUAL).  r must exist
 * when the Conv runs: an input, a constant, or the output of an earlier
 * node; its last use moves from the Add to the Conv, so the planner never
 * places the Conv's output over it (the epilogue reads r after earlier K
 * slices wrote partial sums into the output). */
#define RES_SLOT 3   /* Conv's inputs are X, W, B: the residual comes after them */

static bool res_same_shape(const nn_value *a, const nn_value *b) {
  return a->rank == b->rank && memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* The two-input Adds of the plan (a two-input Sum too when sum: caffe2
 * exports write ResNet shortcuts so) with a float32 output, offered to
 * `take` one operand at a time: x, read by the Add alone and produced by a
 * node of this plan (prod[x] >= 0), and r the other, both float32 and x of
 * the output's shape.  take returns true when it absorbed the Add into x's
 * producer (which then writes the Add's output: prod follows), false to go
 * on; a failure stops the walk with *st set. */
typedef bool (*add_take_fn)(nn_ctx *c, nn_graph *g, const int *prod, nn_node *add, nn_value *x,
                            nn_value *r, nn_status *st, nn_error *err);

static nn_status fuse_adds(nn_ctx *c, nn_graph *g, bool sum, add_take_fn take, nn_error *err) {
  int *prod = plan_producers(g);
  if (!prod)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  nn_status st = NN_OK;
  for (int i = 0; i < g->n_nodes && st == NN_OK; i++) {
    nn_node *add = &g->nodes[i];
    if (!(op_is(add, "Add") || (sum && op_is(add, "Sum"))) || add->removed || add->folded ||
        add->fused || add->n_in != 2 || !add->x[0] || !add->x[1] || !add->y[0] ||
        add->y[0]->dtype != NN_DTYPE_FLOAT)
      continue;
    for (int side = 0; side < 2; side++) {
      nn_value *x = add->x[side], *r = add->x[1 - side];
      int xi = vidx(g, x), ri = vidx(g, r);
      if (xi < 0 || ri < 0 || x == r || x->known || x->is_graph_output || x->n_uses != 1 ||
          prod[xi] < 0 || x->dtype != NN_DTYPE_FLOAT || r->dtype != NN_DTYPE_FLOAT ||
          !res_same_shape(x, add->y[0]))
        continue;
      int pi = prod[xi];
      if (take(c, g, prod, add, x, r, &st, err)) {
        int yi = vidx(g, add->y[0]);
        if (yi >= 0)
          prod[yi] = pi;
        break;
      }
    }
  }
  nn_free(prod);
  return st;
}

/* The producer of x, with the Add's output and the Add fused: prepared again. */
static nn_status add_absorbed(nn_ctx *c, nn_node *into, nn_node *add, nn_error *err) {
  into->y[0] = add->y[0];
  add->fused = true;
  return prepare_node(c, into, err);
}

static bool residual_take(nn_ctx *c, nn_graph *g, const int *prod, nn_node *add, nn_value *x,
                          nn_value *r, nn_status *st, nn_error *err) {
  int ci = prod[vidx(g, x)];
  nn_node *conv = &g->nodes[ci];
  if (!res_same_shape(r, add->y[0]) || !op_is(conv, "Conv") || conv->y[0] != x ||
      conv->act.kind != NN_ACT_NONE || conv->res_slot != 0 || conv->n_in > RES_SLOT ||
      !conv->x[0] || conv->x[0]->dtype != NN_DTYPE_FLOAT)
    return false;
  /* r is ready before the Conv runs (an input or constant has no producer) */
  if (prod[vidx(g, r)] >= ci)
    return false;
  for (int k = conv->n_in; k < RES_SLOT; k++)
    conv->x[k] = NULL;   /* an omitted bias */
  conv->x[RES_SLOT] = r;
  conv->n_in = RES_SLOT + 1;
  conv->res_slot = RES_SLOT;
  *st = add_absorbed(c, conv, add, err);
  return true;
}

static nn_status fuse_residuals(nn_ctx *c, nn_graph *g, nn_error *err) {
  return fuse_adds(c, g, true, residual_take, err);
}

/* ---- MatMul + Add fusion ------------------------------------------------------ */
/* Transformer layers write a linear layer as MatMul then Add(bias), and the
 * block's shortcut as another Add: Add(MatMul(a, b), c), the Add alone
 * reading the product, becomes the MatMul's epilogue (NN_FUSE_MATMUL_ADD).
 * A float32 constant c that varies along the last axis only (shape [N],
 * [1, N], [1, 1, N] ...) is its column bias, input 2; a c of the output's
 * shape, ready before the MatMul runs, is its residual, input 3
 * (MM_RES_SLOT, res_slot as for a Conv: its last use moves to the MatMul,
 * so the output is never placed over it).  A bias first, then a residual:
 * ViT's Add(x, Add(MatMul(h, W), b)) fuses both, in topological order. */
#define MM_BIAS_SLOT 2
#define MM_RES_SLOT 3

/* c is a float32 constant of N values along the last axis of y. */
static bool mm_col_bias(const nn_value *c, const nn_value *y) {
  if (!value_is_const_f32(c) || c->rank < 1 || c->rank > y->rank || y->rank < 1 ||
      c->dims[c->rank - 1] != y->dims[y->rank - 1] || c->numel != y->dims[y->rank - 1])
    return false;
  return true;
}

static bool matmul_add_take(nn_ctx *c, nn_graph *g, const int *prod, nn_node *add, nn_value *x,
                            nn_value *r, nn_status *st, nn_error *err) {
  int mi = prod[vidx(g, x)];
  nn_node *mm = &g->nodes[mi];
  if (!op_is(mm, "MatMul") || mm->y[0] != x || mm->act.kind != NN_ACT_NONE ||
      mm->res_slot != 0 || !mm->x[0] || mm->x[0]->dtype != NN_DTYPE_FLOAT)
    return false;
  if (mm->n_in == 2 && mm_col_bias(r, x)) {
    mm->x[MM_BIAS_SLOT] = r;
    mm->n_in = MM_BIAS_SLOT + 1;
  } else if (res_same_shape(r, x) && prod[vidx(g, r)] < mi) {
    for (int k = mm->n_in; k < MM_RES_SLOT; k++)
      mm->x[k] = NULL;   /* no bias */
    mm->x[MM_RES_SLOT] = r;
    mm->n_in = MM_RES_SLOT + 1;
    mm->res_slot = MM_RES_SLOT;
  } else {
    return false;
  }
  *st = add_absorbed(c, mm, add, err);
  return true;
}

static nn_status fuse_matmul_adds(nn_ctx *c, nn_graph *g, nn_error *err) {
  return fuse_adds(c, g, false, matmul_add_take, err);
}

/* ---- depthwise -> pointwise fusion ------------------------------------------ */
/* A depthwise Conv (one input channel per group, multiplier 1) whose output
 * only a 1x1, stride-1, unpadded Conv reads (MobileNet, BlazeFace, PP-LCNet
 * blocks): the 1x1 Conv runs both (nn_node.pre = the depthwise node), so the
 * backend can compute the depthwise output block by block where its GEMM
 * wants it instead of storing it and reading it back.  The 1x1 Conv keeps
 * the depthwise output as x[0] (its shape; it is never stored) and reads
 * the depthwise input from slot DWPW_SLOT.  Runs after the other fusions:
 * the depthwise conv's activation, the 1x1 conv's residual and activation
 * are already in their epilogues. */
#define DWPW_SLOT 4

static bool attr_all_ones(const nn_node *n, const char *name) {
  int cnt = 0;
  const int64_t *v = nn_attr_ints(n, name, &cnt);
  for (int k = 0; v && k < cnt; k++)
    if (v[k] != 1)
      return false;
  return true;
}

static bool conv_is_pointwise(const nn_node *n) {
  const nn_value *w = n->n_in > 1 ? n->x[1] : NULL;
  return op_is(n, "Conv") && value_is_const_f32(w) && w->rank == 4 && w->dims[2] == 1 &&
         w->dims[3] == 1 && nn_attr_int(n, "group", 1) == 1 && attr_all_ones(n, "strides") &&
         attr_all_ones(n, "dilations") && conv_pad_free(n);
}

static bool conv_is_depthwise(const nn_node *n) {
  const nn_value *x = n->x[0], *w = n->n_in > 1 ? n->x[1] : NULL;
  return op_is(n, "Conv") && x && x->rank == 4 && x->dtype == NN_DTYPE_FLOAT &&
         value_is_const_f32(w) && w->rank == 4 && w->dims[1] == 1 && w->dims[0] == x->dims[1] &&
         nn_attr_int(n, "group", 1) == x->dims[1] && attr_all_ones(n, "dilations") &&
         (n->n_in < 3 || !n->x[2] || value_is_const_f32(n->x[2]));
}

/* ---- normalization -> pointwise fusion -------------------------------------- */
/* A BatchNormalization in inference form (its Relu or Clip fused, NN_FUSE_NORM_ACT)
 * whose output only a 1x1, stride-1, unpadded Conv reads: DenseNet's
 * pre-activation "BN, ReLU, 1x1 conv" on each concatenation.  A Conv after the
 * normalization cannot take it into its weights (the activation is in
 * between), but it packs its input into panels anyway: the Conv applies the
 * per-channel affine map and the activation on the way (nn_node.pre = the
 * normalization, its input in slot DWPW_SLOT, as for the depthwise fusion),
 * and the normalized tensor is never written nor read back.  Every BN
 * parameter must be a constant float32 of one value per channel. */
static bool bn_params_const(const nn_node *bn) {
  const nn_value *x = bn->x[0];
  if (bn->n_in < 5 || !x || x->rank != 4 || x->dtype != NN_DTYPE_FLOAT || bn->version < 7 ||
      (bn->version >= 14 && nn_attr_int(bn, "training_mode", 0) != 0))
    return false;
  for (int k = 1; k < bn->n_out; k++)
    if (bn->y[k])
      return false;   /* training outputs */
  for (int k = 1; k < 5; k++) {
    const nn_value *v = bn->x[k];
    if (!value_is_const_f32(v) || v->numel != x->dims[1])
      return false;   /* per element (spatial = 0), or not constants */
  }
  return true;
}

/* ---- channel scale -> pointwise fusion --------------------------------------- */
/* A squeeze-excitation block ends in Mul(x, s), s of shape [N, C, 1, 1]
 * computed at run time (EfficientNet's Sigmoid gate, MobileNetV3's
 * HardSigmoid), and the block's 1x1 projection reads the product: that Conv
 * scales each input channel as it packs it (nn_node.pre = the Mul, x in
 * slot DWPW_SLOT, s in SCALE_SLOT), and the product is never written nor
 * read back.  Returns the operand index of x in the Mul, -1 when it is not
 * such a Mul. */
#define SCALE_SLOT 5

static int mul_channel_scale(const nn_node *m) {
  if (!op_is(m, "Mul") || m->n_in != 2 || !m->x[0] || !m->x[1] || m->x[0] == m->x[1])
    return -1;
  for (int xi = 0; xi < 2; xi++) {
    const nn_value *x = m->x[xi], *s = m->x[1 - xi];
    if (x->rank == 4 && s->rank == 4 && x->dtype == NN_DTYPE_FLOAT &&
        s->dtype == NN_DTYPE_FLOAT && res_same_shape(x, m->y[0]) && s->dims[1] == x->dims[1] &&
        s->dims[2] == 1 && s->dims[3] == 1 && (s->dims[0] == x->dims[0] || s->dims[0] == 1) &&
        !x->known)
      return xi;
  }
  return -1;
}

/* The node fusable in front of the pointwise Conv pw (its x[0]'s producer,
 * read by pw alone): a depthwise Conv (NN_FUSE_DW_PW), a BatchNorm or a
 * channel-scale Mul (NN_FUSE_NORM_PW), as the backend opted in; NULL when
 * none. */
static nn_node *pointwise_pre(nn_graph *g, const int *prod, const nn_node *pw, unsigned fusions) {
  nn_value *mid = pw->x[0];
  int mi = vidx(g, mid);
  if (mi < 0 || mid->known || mid->is_graph_output || mid->n_uses != 1 || prod[mi] < 0)
    return NULL;
  nn_node *p = &g->nodes[prod[mi]];
  if (p->fused || p->folded || p->removed || p->pre || p->y[0] != mid)
    return NULL;
  if ((fusions & NN_FUSE_DW_PW) && !p->res_slot && conv_is_depthwise(p))
    return p;
  if ((fusions & NN_FUSE_NORM_PW) && op_is(p, "BatchNormalization") && bn_params_const(p) &&
      (p->act.kind == NN_ACT_NONE || p->act.kind == NN_ACT_RELU || p->act.kind == NN_ACT_CLIP))
    return p;
  if ((fusions & NN_FUSE_NORM_PW) && mul_channel_scale(p) >= 0)
    return p;
  return NULL;
}

static nn_status fuse_into_pointwise(nn_ctx *c, nn_graph *g, nn_error *err) {
  int *prod = plan_producers(g);
  if (!prod)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  nn_status st = NN_OK;
  for (int i = 0; i < g->n_nodes && st == NN_OK; i++) {
    nn_node *pw = &g->nodes[i];
    if (pw->removed || pw->folded || pw->fused || pw->pre || pw->n_in > DWPW_SLOT || !pw->x[0] ||
        pw->x[0]->dtype != NN_DTYPE_FLOAT || !conv_is_pointwise(pw))
      continue;
    nn_node *pre = pointwise_pre(g, prod, pw, g->fusions);
    if (!pre)
      continue;
    for (int k = pw->n_in; k < DWPW_SLOT; k++)
      pw->x[k] = NULL;
    int xi = op_is(pre, "Mul") ? mul_channel_scale(pre) : 0;
    pw->x[DWPW_SLOT] = pre->x[xi];
    pw->n_in = DWPW_SLOT + 1;
    if (op_is(pre, "Mul")) {
      pw->x[SCALE_SLOT] = pre->x[1 - xi];
      pw->n_in = SCALE_SLOT + 1;
    }
    pw->pre = pre;
    pre->fused = true;
    st = prepare_node(c, pw, err);
  }
  nn_free(prod);
  return st;
}

/* ---- activation fusion ------------------------------------------------------ */
/* Conv/Gemm/MatMul followed by an activation that alone reads their output:
 * the producer applies the activation in its epilogue (nn_node.act, the
 * vocabulary of ops/activation.h, read by every backend's kernel) and writes
 * the activation's output directly.  Per plan, because BatchNorm fusion
 * often has to happen first. */
static bool op_is_fusable_producer(const nn_node *n) {
  return op_is(n, "Conv") || op_is(n, "Gemm") || op_is(n, "MatMul");
}

/* SiLU as exporters write it, Mul(x, Sigmoid(x)) (PyTorch's nn.SiLU: every
 * activation of YOLOv5/v8 and EfficientNet): the Mul that completes the
 * Sigmoid `sig`, when x is read by these two nodes only and the Sigmoid's
 * output by the Mul only; NULL otherwise. */
static nn_node *silu_mul(nn_graph *g, const nn_node *sig) {
  const nn_value *x = sig->x[0], *s = sig->y[0];
  if (!op_is(sig, "Sigmoid") || sig->n_out != 1 || x->n_uses != 2 || s->n_uses != 1 ||
      s->is_graph_output)
    return NULL;
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *m = &g->nodes[i];
    if (m->removed || m->folded || m->fused || !op_is(m, "Mul") || m->n_in != 2 || !m->y[0])
      continue;
    if ((m->x[0] == x && m->x[1] == s) || (m->x[0] == s && m->x[1] == x))
      return m;
  }
  return NULL;
}

/* ---- GELU as exporters write it -------------------------------------------- */
/* PyTorch's nn.GELU (exact form) before opset 20 is five nodes:
 *   d = Div(x, sqrt 2) (or Mul(x, 1/sqrt 2)), e = Erf(d), a = Add(e, 1),
 *   then 0.5 * x * a as Mul(Mul(x, a), 0.5), Mul(Mul(x, 0.5), a) or
 *   Mul(x, Mul(a, 0.5)), operands in either order.
 * gelu_match takes the first node (the Div / Mul reading x) and, when x is
 * read by that node and one Mul of the tail only and every intermediate by
 * its successor only, returns the last Mul, stores the other four in mid[]
 * and x in *xp; NULL otherwise.  Constants must be float32 scalars within 1e-6 of
 * their exact values (an export writes them rounded to float). */
static bool const_scalar_near(const nn_value *v, double want) {
  return v && value_is_const_f32(v) && v->numel == 1 &&
         fabs((double)*(const float *)v->data - want) <= 1e-6 * fabs(want);
}

/* The one live node reading v, when v has one use and is no graph output. */
static nn_node *sole_reader(nn_graph *g, const nn_value *v, const char *op) {
  if (!v || v->n_uses != 1 || v->is_graph_output)
    return NULL;
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *n = &g->nodes[i];
    if (n->removed || n->folded || n->fused)
      continue;
    for (int k = 0; k < n->n_in; k++)
      if (n->x[k] == v)
        return op_is(n, op) && n->n_out == 1 && n->y[0] ? n : NULL;
  }
  return NULL;
}

/* The operand of the two-input node n that is not `known` (NULL when
 * neither input is it). */
static nn_value *other_input(const nn_node *n, const nn_value *known) {
  if (n->n_in != 2)
    return NULL;
  return n->x[0] == known ? n->x[1] : n->x[1] == known ? n->x[0] : NULL;
}

static nn_node *gelu_match(nn_graph *g, nn_node *d, nn_node *mid[4], nn_value **xp) {
  if (d->n_in != 2 || d->n_out != 1 || !d->y[0] || !d->x[0] || !d->x[1])
    return NULL;
  nn_value *x;
  if (op_is(d, "Div") && const_scalar_near(d->x[1], 1.41421356237309505))
    x = d->x[0];
  else if (op_is(d, "Mul") && const_scalar_near(d->x[1], 0.70710678118654752))
    x = d->x[0];
  else if (op_is(d, "Mul") && const_scalar_near(d->x[0], 0.70710678118654752))
    x = d->x[1];
  else
    return NULL;
  if (x->n_uses != 2)
    return NULL;
  nn_node *e = sole_reader(g, d->y[0], "Erf");
  nn_node *a = e ? sole_reader(g, e->y[0], "Add") : NULL;
  if (!a || !const_scalar_near(other_input(a, e->y[0]), 1.0) || a->y[0]->is_graph_output)
    return NULL;
  /* the tail: the Mul reading a, and the Mul reading that */
  nn_node *m1 = sole_reader(g, a->y[0], "Mul"), *m2 = NULL;
  if (!m1)
    return NULL;
  nn_value *o = other_input(m1, a->y[0]);
  if (o == x) {                                   /* Mul(Mul(x, a), 0.5) */
    m2 = sole_reader(g, m1->y[0], "Mul");
    if (!m2 || !const_scalar_near(other_input(m2, m1->y[0]), 0.5))
      return NULL;
  } else if (const_scalar_near(o, 0.5)) {         /* Mul(x, Mul(a, 0.5)) */
    m2 = sole_reader(g, m1->y[0], "Mul");
    if (!m2 || other_input(m2, m1->y[0]) != x)
      return NULL;
  } else if (o) {                                 /* Mul(Mul(x, 0.5), a) */
    nn_node *h = NULL;
    for (int i = 0; i < g->n_nodes && !h; i++) {
      nn_node *n = &g->nodes[i];
      if (n != d && !n->removed && !n->folded && !n->fused && n->n_out == 1 &&
          n->y[0] == o && op_is(n, "Mul") && other_input(n, x) &&
          const_scalar_near(other_input(n, x), 0.5))
        h = n;
    }
    if (!h || o->n_uses != 1 || o->is_graph_output)
      return NULL;
    m2 = m1;
    m1 = h;
  }
  if (!m2 || m1->n_out != 1 || m2->n_out != 1 || !m2->y[0])
    return NULL;
  mid[0] = d;
  mid[1] = e;
  mid[2] = a;
  mid[3] = m1;
  *xp = x;
  return m2;
}

static nn_status fuse_activations(nn_ctx *c, nn_graph *g, nn_error *err) {
  int *prod = plan_producers(g);
  if (!prod)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  nn_status st = NN_OK;
  for (int i = 0; i < g->n_nodes && st == NN_OK; i++) {
    nn_node *act = &g->nodes[i];
    if (act->removed || act->folded || act->fused || act->n_in < 1 || !act->x[0] || !act->y[0])
      continue;
    nn_value *x = act->x[0];
    /* one reader, or the two of a GELU (whose first node may read x as its
     * second operand) or a SiLU */
    nn_node *gmid[4] = {NULL}, *gelu = gelu_match(g, act, gmid, &x);
    nn_node *silu = !gelu && x->n_uses == 2 ? silu_mul(g, act) : NULL;
    int xi = vidx(g, x);
    if (xi < 0 || x->known || x->is_graph_output || (x->n_uses != 1 && !silu && !gelu) ||
        x->dtype != NN_DTYPE_FLOAT || prod[xi] < 0)
      continue;
    nn_node *p = &g->nodes[prod[xi]];
    bool norm = (g->fusions & NN_FUSE_NORM_ACT) && op_is(p, "BatchNormalization") &&
                p->n_out == 1 && x->dtype == NN_DTYPE_FLOAT;
    if (!(op_is_fusable_producer(p) || norm) || p->y[0] != x || p->act.kind != NN_ACT_NONE)
      continue;
    nn_act a;
    if (silu)
      a = (nn_act){.kind = NN_ACT_SILU};
    else if (gelu)
      a = (nn_act){.kind = NN_ACT_GELU};
    else if (!nn_act_from_node(act, &a))
      continue;
    if (norm && a.kind != NN_ACT_RELU && a.kind != NN_ACT_CLIP)
      continue;
    p->act = a;
    if (silu) {   /* the producer writes the Mul's output; the Sigmoid goes */
      act->fused = true;
      act = silu;
    } else if (gelu) {   /* ... the last Mul's; the other four go */
      for (int k = 0; k < 4; k++)
        gmid[k]->fused = true;
      act = gelu;
    }
    st = absorb(c, g, prod, p, act, err);
  }
  nn_free(prod);
  return st;
}

/* ---- lifetimes and placement ---------------------------------------------- */
typedef struct buf {
  size_t size;
  int first, last;
  size_t offset;
  int root;   /* value index (or -1 - step for a workspace) */
} buf;

static int buf_cmp_size(const void *a, const void *b) {
  const buf *x = a, *y = b;
  if (x->size != y->size)
    return x->size > y->size ? -1 : 1;
  if (x->first != y->first)
    return x->first < y->first ? -1 : 1;
  return 0;
}


/* An arena value: produced by a step, not a graph output, not known. */
static bool in_arena(const nn_value *v) {
  return v && !v->known && !v->is_graph_output && v->kind == NN_VAL_INTER;
}

/* A graph output planned in the arena (plan->outputs_in_arena): a tensor
 * made by a step.  It never joins an alias group (in_arena() is false for
 * it): a caller may bind the output to memory of its own, which the
 * producer then writes instead, so no other value may live in its slot. */
static bool out_in_arena(const nn_plan *plan, const nn_value *v) {
  return plan->outputs_in_arena && v && !v->known && v->is_graph_output && v->kind == NN_VAL_INTER &&
         v->vtype == NN_VT_TENSOR && v->dtype != NN_DTYPE_STRING;
}

static int alias_root(const nn_graph *g, int v) {
  while (g->values[v].alias_of >= 0)
    v = g->values[v].alias_of;
  return v;
}

/* Where v starts in its root's buffer. */
static size_t alias_offset(const nn_graph *g, int v) {
  size_t off = 0;
  for (; g->values[v].alias_of >= 0; v = g->values[v].alias_of)
    off += g->values[v].alias_off;
  return off;
}

/* Concat placement (NN_FUSE_CONCAT): a Concat whose output is one outer row
 * (the axis dims before it all 1: a channel Concat of one image) holds each
 * input as a contiguous slice, so an input that is the whole of its own
 * buffer group, made by an earlier step, can be planned as that slice: its
 * producer writes the Concat's output in place and the copy goes.  Chains
 * nest (DenseNet's Concat of the previous Concat and a new Conv output: one
 * buffer per dense block).  The group then lives as long as the Concat's.
 * An input read twice, used by another Concat already, made in an
 * unaligned slice, a graph input or output, or a constant is copied as
 * before. */
static void plan_concat_inputs(nn_graph *g, const nn_node *n, int s, int *gfirst, int *glast,
                               const size_t *gsize) {
  nn_value *y = n->y[0];
  int yi = vidx(g, y), axis = (int)nn_attr_int(n, "axis", 0);
  if (yi < 0 || y->alias_of >= 0 || y->rank < 1)
    return;
  if (axis < 0)
    axis += y->rank;
  if (axis < 0 || axis >= y->rank)
    return;
  for (int d = 0; d < axis; d++)
    if (y->dims[d] != 1)
      return;
  size_t off = 0;
  for (int k = 0; k < n->n_in; k++) {
    nn_value *x = n->x[k];
    size_t here = off;
    off += x ? x->nbytes : 0;
    int xi = x ? vidx(g, x) : -1;
    if (xi < 0 || !in_arena(x) || x->first_use < 0 || x->first_use >= s || x->dtype != y->dtype ||
        x->dtype == NN_DTYPE_STRING || here % NN_ALIGN != 0 || x->nbytes == 0)
      continue;
    bool twice = false;
    for (int q = 0; q < n->n_in; q++)
      twice |= q != k && n->x[q] == x;
    int r = alias_root(g, xi);
    if (twice || r == yi || gsize[r] != x->nbytes || alias_offset(g, xi) != 0)
      continue;
    g->values[r].alias_of = yi;
    g->values[r].alias_off = here;
    if (gfirst[r] < gfirst[yi])
      gfirst[yi] = gfirst[r];
    if (glast[r] > glast[yi])
      glast[yi] = glast[r];
  }
}

static bool same_dims(const nn_value *a, const nn_value *b) {
  if (a->rank != b->rank)
    return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i])
      return false;
  return true;
}

/* Best-fitting gap among placed buffers overlapping [first,last]. */
static size_t place(buf *bufs, int n_placed, const buf *b, int *scratch) {
  int k = 0;
  for (int i = 0; i < n_placed; i++)
    if (bufs[i].first <= b->last && b->first <= bufs[i].last)
      scratch[k++] = i;
  /* insertion sort by offset: overlapping sets are small */
  for (int i = 1; i < k; i++) {
    int t = scratch[i], j = i - 1;
    while (j >= 0 && bufs[scratch[j]].offset > bufs[t].offset) {
      scratch[j + 1] = scratch[j];
      j--;
    }
    scratch[j + 1] = t;
  }
  size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
  for (int i = 0; i < k; i++) {
    const buf *o = &bufs[scratch[i]];
    if (o->offset > cursor) {
      size_t gap = o->offset - cursor;
      if (gap >= b->size && gap < best_gap) {
        best_gap = gap;
        best = cursor;
      }
    }
    size_t end = o->offset + o->size;
    if (end > cursor)
      cursor = end;
  }
  return best != SIZE_MAX ? best : cursor;
}

static nn_status plan_memory(nn_graph *g, nn_plan *plan, nn_error *err) {
  nn_status st = NN_OK;
  int nv = g->n_values;
  int *gfirst = NULL, *glast = NULL, *scratch = NULL;
  size_t *gsize = NULL;
  buf *bufs = NULL;
  gfirst = nn_malloc(((size_t)nv + 1) * sizeof(int));
  glast = nn_malloc(((size_t)nv + 1) * sizeof(int));
  gsize = nn_calloc((size_t)nv + 1, sizeof(size_t));
  if (!gfirst || !glast || !gsize) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    goto out;
  }
  for (int v = 0; v < nv; v++) {
    g->values[v].first_use = -1;
    g->values[v].last_use = -1;
    g->values[v].alias_of = -1;
    g->values[v].alias_off = 0;
  }
  const bool concat_in_place = (g->fusions & NN_FUSE_CONCAT) && !nn_knobs().no_fusion;
  /* lifetimes */
  for (int s = 0; s < plan->n_steps; s++) {
    nn_node *n = &g->nodes[plan->steps[s]];
    for (int k = 0; k < n->n_out; k++)
      if (in_arena(n->y[k])) {
        n->y[k]->first_use = s;
        n->y[k]->last_use = s;
      } else if (out_in_arena(plan, n->y[k])) {
        n->y[k]->first_use = s;
        n->y[k]->last_use = plan->n_steps - 1; /* read by the caller after the run */
      }
    for (int k = 0; k < n->n_in; k++)
      if (in_arena(n->x[k]))
        n->x[k]->last_use = s;
  }
  /* aliasing, in step order: a group's last use is final once all members
   * that exist are known, because later members are created by later steps */
  for (int v = 0; v < nv; v++) {
    gfirst[v] = g->values[v].first_use;
    glast[v] = g->values[v].last_use;
    gsize[v] = g->values[v].nbytes;
  }
  for (int s = 0; s < plan->n_steps; s++) {
    nn_node *n = &g->nodes[plan->steps[s]];
    nn_value *y = n->n_out > 0 ? n->y[0] : NULL;
    if (!in_arena(y))
      continue;
    int yi = vidx(g, y);
    if (yi < 0)
      continue;
    /* views and in-place results alias the input itself (which may be a
     * slice of a Concat's output), their group's bookkeeping is its root's */
    if ((n->op->flags & NN_OP_VIEW) && n->n_in > 0 && in_arena(n->x[0]) && vidx(g, n->x[0]) >= 0 &&
        n->x[0]->nbytes == y->nbytes) {
      int r = alias_root(g, vidx(g, n->x[0]));
      y->alias_of = vidx(g, n->x[0]);
      if (glast[yi] > glast[r])
        glast[r] = glast[yi];
      continue;
    }
    if (concat_in_place && op_is(n, "Concat") && n->n_out == 1) {
      plan_concat_inputs(g, n, s, gfirst, glast, gsize);
      continue;
    }
    if (n->op->flags & NN_OP_ELEMENTWISE) {
      for (int k = 0; k < n->n_in; k++) {
        nn_value *x = n->x[k];
        int xi = x ? vidx(g, x) : -1;
        if (xi < 0 || !in_arena(x) || x->nbytes != y->nbytes || !same_dims(x, y))
          continue;
        int r = alias_root(g, xi);
        if (glast[r] != s)
          continue;
        y->alias_of = xi;
        glast[r] = glast[yi] > s ? glast[yi] : s;
        if (gsize[r] < y->nbytes)
          gsize[r] = y->nbytes;
        break;
      }
    }
  }
  /* one buffer per group root plus one per workspace */
  int nb = 0;
  bufs = nn_calloc((size_t)nv + (size_t)plan->n_steps + 1, sizeof(buf));
  scratch = nn_malloc(((size_t)nv + (size_t)plan->n_steps + 1) * sizeof(int));
  if (!bufs || !scratch) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    goto out;
  }
  plan->arena_naive_bytes = 0;
  for (int v = 0; v < nv; v++) {
    nn_value *val = &g->values[v];
    if (val->first_use < 0)
      continue;
    plan->arena_naive_bytes += nn_align_up(val->nbytes, NN_ALIGN);
    if (val->alias_of >= 0)
      continue;
    bufs[nb++] = (buf){nn_align_up(gsize[v], NN_ALIGN), gfirst[v], glast[v], 0, v};
  }
  for (int s = 0; s < plan->n_steps; s++) {
    nn_node *n = &g->nodes[plan->steps[s]];
    if (n->ws_bytes) {
      plan->arena_naive_bytes += nn_align_up(n->ws_bytes, NN_ALIGN);
      bufs[nb++] = (buf){nn_align_up(n->ws_bytes, NN_ALIGN), s, s, 0, -1 - s};
    }
  }
  qsort(bufs, (size_t)nb, sizeof *bufs, buf_cmp_size);
  size_t arena = 0;
  for (int i = 0; i < nb; i++) {
    bufs[i].offset = place(bufs, i, &bufs[i], scratch);
    if (bufs[i].offset + bufs[i].size > arena)
      arena = bufs[i].offset + bufs[i].size;
  }
  plan->arena_bytes = arena;
  for (int i = 0; i < nb; i++) {
    if (bufs[i].root >= 0)
      g->values[bufs[i].root].offset = bufs[i].offset;
    else
      plan->ws_offsets[-1 - bufs[i].root] = bufs[i].offset;
  }
  for (int v = 0; v < nv; v++)
    if (g->values[v].first_use >= 0 && g->values[v].alias_of >= 0)
      g->values[v].offset = g->values[alias_root(g, v)].offset + alias_offset(g, v);
out:
  nn_free(gfirst);
  nn_free(glast);
  nn_free(gsize);
  nn_free(bufs);
  nn_free(scratch);
  return st;
}

nn_status nn_plan_build(nn_graph *g, nn_plan *plan, const nn_limits *lim, nn_ctx *ctx, nn_error *err) {
  nn_status st;
  /* per-plan node state is reset by the caller through nn_plan_clear(), which
   * must run before the session sets the inputs' plan fields */
  ctx->node = NULL;
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *n = &g->nodes[i];
    if (n->removed)
      continue;
    st = prepare_node(ctx, n, err);
    if (st != NN_OK)
      return st;
    if (node_foldable(n)) {
      /* folded values become constants of the session: they count against
       * the weights limit, checked before they are allocated */
      int64_t max_w = lim && lim->max_weights_bytes ? lim->max_weights_bytes : NN_LIMIT_WEIGHTS_BYTES;
      uint64_t total = g->weights_bytes + plan->folded_bytes;
      for (int k = 0; k < n->n_out; k++)
        if (n->y[k])
          total += n->y[k]->nbytes;
      if (total > (uint64_t)max_w)
        return nn_error_set(err, NN_ERR_LIMIT,
                            "node '%s' (%s): constants folded at plan time would exceed the weights "
                            "limit of %lld bytes", n->name, n->op_type, (long long)max_w);
      st = fold_node(ctx, n, plan, err);
      if (st != NN_OK)
        return st;
    }
  }
  st = fuse_affine(ctx, g, plan, err);
  if (st != NN_OK)
    return st;
  if (!nn_knobs().no_fusion) {
    if (g->fusions & NN_FUSE_RESIDUAL) {
      st = fuse_residuals(ctx, g, err);
      if (st != NN_OK)
        return st;
    }
    if (g->fusions & NN_FUSE_MATMUL_ADD) {
      st = fuse_matmul_adds(ctx, g, err);
      if (st != NN_OK)
        return st;
    }
    st = fuse_activations(ctx, g, err);
    if (st != NN_OK)
      return st;
    if (g->fusions & (NN_FUSE_DW_PW | NN_FUSE_NORM_PW)) {
      st = fuse_into_pointwise(ctx, g, err);
      if (st != NN_OK)
        return st;
    }
  }
  plan->steps = nn_malloc(((size_t)g->n_nodes + 1) * sizeof(int));
  plan->ws_offsets = nn_calloc((size_t)g->n_nodes + 1, sizeof(size_t));
  if (!plan->steps || !plan->ws_offsets)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  plan->n_steps = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *n = &g->nodes[i];
    if (!n->removed && !n->folded && !n->fused) {
      plan->steps[plan->n_steps++] = i;
      /* kernels' pre-packed weight copies are session constants too */
      plan->folded_bytes += n->priv_const_bytes;
    }
  }
  st = plan_memory(g, plan, err);
  if (st != NN_OK)
    return st;
  int64_t max_arena = lim && lim->max_arena_bytes ? lim->max_arena_bytes : NN_LIMIT_ARENA_BYTES;
  if ((int64_t)plan->arena_bytes > max_arena)
    return nn_error_set(err, NN_ERR_LIMIT, "the planned arena (%zu bytes) exceeds the limit of %lld bytes",
                        plan->arena_bytes, (long long)max_arena);
  return NN_OK;
}

void nn_plan_bind_arena(nn_graph *g, nn_plan *plan, void *arena) {
  unsigned char *base = arena;
  for (int v = 0; v < g->n_values; v++) {
    nn_value *val = &g->values[v];
    if (val->first_use >= 0 && (in_arena(val) || out_in_arena(plan, val)))
      val->data = base + val->offset;
  }
  for (int s = 0; s < plan->n_steps; s++) {
    nn_node *n = &g->nodes[plan->steps[s]];
    /* never NULL: kernels may form ws + 0 even when they need no scratch */
    n->ws = n->ws_bytes ? base + plan->ws_offsets[s] : base;
  }
}
