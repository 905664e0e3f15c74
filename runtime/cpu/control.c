/* control.c - CPU kernels of the control-flow ops: If (1, 11, 13, 16),
 * Loop (1, 11, 13, 16), Scan (8, 9, 11, 16).
 *
 * Their subgraphs (nn_attr.g, loaded with the model; the values they read
 * from enclosing scopes are the node's implicit inputs) are planned like the
 * main graph, once per plan of the node: prepare sets the subgraph's inputs
 * to the shapes of this plan, builds its plan (nn_plan_build: shapes,
 * folding, its own arena offsets) and asks for that arena as the node's
 * workspace, so the session's planner reserves it inside the session arena
 * and run allocates nothing: it binds the subgraph's arena to the workspace,
 * points its inputs at the node's inputs (or its loop-carried buffers, two
 * of them, swapped each iteration, also in the workspace) and its outputs at
 * their destination (a scan output's slice of the node's output), and runs
 * its steps.
 *
 * A Loop whose outputs' shapes are not fixed by shapes alone (its state
 * changes shape from one iteration to the next, it carries a sequence, its
 * scan outputs' length depends on a condition computed in the body, its
 * body reads the iteration number as a shape) is evaluated while planning
 * instead: the planner makes every input it needs known (op.subgraph_needs,
 * nn_plan_value_needs) and prepare runs the iterations, planning the body
 * for each, and keeps the results in its priv for run to copy out.
 *
 * Limits (nn_limits.h): NN_LIMIT_LOOP_ITERATIONS per Loop run,
 * NN_LIMIT_SUBGRAPH_DEPTH nesting (checked by the loader).
 */
#include <stdio.h>
#include <string.h>

#include "cpu/ops.h"
#include "graph.h"
#include "nn_limits.h"
#include "ops/box.h"

/* ---- subgraph helpers ------------------------------------------------------------ */
static nn_graph *attr_graph(const nn_node *n, const char *name) {
  const nn_attr *a = nn_attr_get(n, name);
  return a && a->type == NN_ATTR_GRAPH ? a->g : NULL;
}

static int n_explicit(const nn_node *n) {
  return n->n_in_model - n->n_implicit;
}

static bool truthy(nn_dtype dt, const void *p) {
  switch (nn_dtype_size(dt)) {
  case 1: return *(const uint8_t *)p != 0;
  case 2: return *(const uint16_t *)p != 0;
  case 4: return dt == NN_DTYPE_FLOAT ? *(const float *)p != 0.0f : *(const uint32_t *)p != 0;
  case 8: return dt == NN_DTYPE_DOUBLE ? *(const double *)p != 0.0 : *(const uint64_t *)p != 0;
  default: return false;
  }
}

static void set_input_like(nn_value *d, const nn_value *s, bool known) {
  d->dtype = s->dtype;
  d->rank = s->rank;
  memcpy(d->dims, s->dims, sizeof d->dims);
  d->numel = s->numel;
  d->nbytes = s->nbytes;
  d->vtype = s->vtype;
  d->box = s->box;
  d->known = known && s->known;
  d->data = d->known ? s->data : NULL;
}

static void set_input_tensor(nn_value *d, nn_dtype dt, int rank, const int64_t *dims, void *data,
                             bool known) {
  d->dtype = dt;
  d->rank = rank;
  memset(d->dims, 0, sizeof d->dims);
  for (int i = 0; i < rank; i++)
    d->dims[i] = dims[i];
  d->numel = nn_dims_numel(rank, dims);
  d->nbytes = (size_t)d->numel * nn_dtype_size(dt);
  d->vtype = NN_VT_TENSOR;
  d->box = NULL;
  d->known = known;
  d->data = data;
}

/* The subgraph's outer-scope values: at prepare their type, shape and (when
 * known for the plan) data; at run the data of those computed at run time. */
static void bind_outer(nn_graph *sub, nn_node *n, bool prepare) {
  for (int v = 0; v < sub->n_values; v++) {
    nn_value *val = &sub->values[v];
    if (val->outer_slot < 0 || val->outer_slot >= n->n_in || !n->x[val->outer_slot])
      continue;
    const nn_value *src = n->x[val->outer_slot];
    if (prepare)
      set_input_like(val, src, true);
    else if (!val->known)
      val->data = src->data;
  }
}

static nn_value *sub_in(nn_graph *sub, int k) {
  return &sub->values[sub->inputs[k]];
}

static nn_value *sub_out(nn_graph *sub, int k) {
  return &sub->values[sub->outputs[k]];
}

/* Plan sub for the inputs set on it; errors name the node and the part. */
static nn_status sub_plan(nn_ctx *c, nn_node *n, nn_graph *sub, const char *what) {
  nn_plan_clear(sub, &sub->plan);
  nn_error local = {0};
  nn_error *err = c->err ? c->err : &local;
  err->msg[0] = '\0';
  nn_status st = nn_plan_build(sub, &sub->plan, c->limits, c, err);
  c->node = n;
  if (st != NN_OK) {
    char tmp[sizeof err->msg];
    snprintf(tmp, sizeof tmp, "node '%.120s' (%.60s), %.60s: %.250s", n->name, n->op_type, what,
             err->msg[0] ? err->msg : nn_status_str(st));
    memcpy(err->msg, tmp, sizeof tmp);
    err->status = st;
    nn_plan_clear(sub, &sub->plan);
    sub->planned = false;
    return st;
  }
  sub->planned = true;
  return NN_OK;
}

/* Run sub's steps with output k written to targets[k]; outputs no step
 * writes (an input passed through, a constant) are copied there. */
static nn_status sub_run(nn_ctx *c, nn_node *n, nn_graph *sub, void *const *targets) {
  for (int j = sub->n_outputs - 1; j >= 0; j--) {
    nn_value *ov = sub_out(sub, j);
    if (ov->kind == NN_VAL_INTER && !ov->known)
      ov->data = targets[j];
  }
  nn_status st = NN_OK;
  for (int k = 0; k < sub->plan.n_steps && st == NN_OK; k++) {
    nn_node *s = &sub->nodes[sub->plan.steps[k]];
    c->node = s;
    st = s->kern->run(c, s);
    if (st != NN_OK && c->err && c->err->msg[0] == '\0')
      nn_fail(c, st, "kernel failed (%s)", nn_status_str(st));
  }
  c->node = n;
  if (st != NN_OK)
    return st;
  for (int j = 0; j < sub->n_outputs; j++) {
    nn_value *ov = sub_out(sub, j);
    if (targets[j] && ov->data != targets[j] && ov->nbytes)
      memcpy(targets[j], ov->data, ov->nbytes);
  }
  return NN_OK;
}

/* Outer-scope values a subgraph needs at plan time -> need[slot]; true when
 * any formal input of the subgraph (index < n_formal) is needed too. */
static bool sub_needs(const nn_graph *sub, bool *need, bool *formal_needed) {
  bool *nv = nn_calloc((size_t)sub->n_values + 1, sizeof(bool));
  if (!nv)
    return false;
  nn_plan_value_needs(sub, nv);
  bool any = false;
  for (int v = 0; v < sub->n_values; v++) {
    if (!nv[v])
      continue;
    if (sub->values[v].outer_slot >= 0) {
      need[sub->values[v].outer_slot] = true;
      any = true;
    }
  }
  *formal_needed = false;
  for (int k = 0; k < sub->n_inputs; k++)
    if (nv[sub->inputs[k]] || sub->values[sub->inputs[k]].decl_vtype != NN_VT_TENSOR)
      *formal_needed = true;
  nn_free(nv);
  return any;
}

static bool all_inputs_known(const nn_node *n) {
  for (int k = 0; k < n->n_in; k++)
    if (n->x[k] && !n->x[k]->known)
      return false;
  return true;
}

static bool same_shape(const nn_value *a, const nn_value *b) {
  return a->vtype == b->vtype && a->dtype == b->dtype && a->rank == b->rank &&
         memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0 &&
         (a->vtype == NN_VT_TENSOR || (a->box && b->box && nn_box_same(a->box, b->box)));
}

static void shape_text(const nn_value *v, char *buf, size_t len) {
  if (v->vtype != NN_VT_TENSOR) {
    snprintf(buf, len, "a %s of %d items", v->vtype == NN_VT_SEQUENCE ? "sequence" : "optional",
             v->box ? v->box->n : 0);
    return;
  }
  size_t off = (size_t)snprintf(buf, len, "%s[", nn_dtype_name(v->dtype));
  for (int i = 0; i < v->rank && off < len; i++)
    off += (size_t)snprintf(buf + off, len - off, "%s%lld", i ? "x" : "", (long long)v->dims[i]);
  if (off < len)
    snprintf(buf + off, len - off, "]");
}

/* ---- If ------------------------------------------------------------------------------- */
typedef struct if_priv {
  int branch;          /* 1 then, 0 else, -1: by the condition at run time */
  void **targets;      /* n_out, in this block */
} if_priv;

/* May the branches give output j different shapes?  Judged from their
 * declarations: sequences and optionals (whose layout is their length and
 * item shapes) and tensors declared with different static shapes. */
static bool if_outputs_may_differ(const nn_graph *a, const nn_graph *b) {
  if (a->n_outputs != b->n_outputs)
    return true;
  for (int j = 0; j < a->n_outputs; j++) {
    const nn_value *x = &a->values[a->outputs[j]], *y = &b->values[b->outputs[j]];
    if (x->decl_vtype != NN_VT_TENSOR || y->decl_vtype != NN_VT_TENSOR)
      return true;
    if (x->decl_rank >= 0 && y->decl_rank >= 0) {
      if (x->decl_rank != y->decl_rank)
        return true;
      for (int d = 0; d < x->decl_rank; d++)
        if (x->decl_dims[d] >= 0 && y->decl_dims[d] >= 0 && x->decl_dims[d] != y->decl_dims[d])
          return true;
    }
  }
  return false;
}

static bool if_needs(const nn_node *n, bool *need) {
  bool any = false, formal;
  nn_graph *subs[2] = {attr_graph(n, "then_branch"), attr_graph(n, "else_branch")};
  for (int b = 0; b < 2; b++)
    if (subs[b] && sub_needs(subs[b], need, &formal))
      any = true;
  if (subs[0] && subs[1] && if_outputs_may_differ(subs[0], subs[1])) {
    need[0] = true; /* the condition picks the shapes: known at plan time */
    any = true;
  }
  return any;
}

static nn_status if_prepare(nn_ctx *c, nn_node *n) {
  nn_graph *subs[2] = {attr_graph(n, "else_branch"), attr_graph(n, "then_branch")};
  if (!subs[0] || !subs[1])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs the graphs then_branch and else_branch");
  const nn_value *cond = n->x[0];
  if (!cond || cond->numel != 1 || cond->vtype != NN_VT_TENSOR)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "the condition must be one element");
  int branch = cond->known ? truthy(cond->dtype, cond->data) : -1;
  nn_status st;
  size_t ws = 0, folded = 0;
  for (int b = 0; b < 2; b++)
    if (subs[b]->n_outputs != n->n_out)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "its %s branch returns %d values, the node has %d outputs",
                     b ? "then" : "else", subs[b]->n_outputs, n->n_out);
  for (int b = 0; b < 2; b++) {
    nn_graph *sub = subs[b];
    if (branch >= 0 && b != branch) {
      nn_plan_clear(sub, &sub->plan); /* never taken in this plan */
      sub->planned = false;
      continue;
    }
    if (sub->n_outputs != n->n_out)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "its %s branch returns %d values, the node has %d outputs",
                     b ? "then" : "else", sub->n_outputs, n->n_out);
    bind_outer(sub, n, true);
    if ((st = sub_plan(c, n, sub, b ? "then branch" : "else branch")) != NN_OK)
      return st;
    if (sub->plan.arena_bytes > ws)
      ws = sub->plan.arena_bytes;
    folded += sub->plan.folded_bytes;
  }
  nn_graph *ref = subs[branch >= 0 ? branch : 1];
  for (int j = 0; j < n->n_out; j++) {
    if (!n->y[j])
      return nn_fail(c, NN_ERR_UNSUPPORTED, "output %d is omitted", j);
    if (branch < 0 && !same_shape(sub_out(subs[0], j), sub_out(subs[1], j))) {
      char a[128], b[128];
      shape_text(sub_out(subs[1], j), a, sizeof a);
      shape_text(sub_out(subs[0], j), b, sizeof b);
      return nn_fail(c, NN_ERR_UNSUPPORTED, "the branches give output %d different shapes (%s and %s) and "
                     "the condition is only known at run time", j, a, b);
    }
  }
  int *items = nn_malloc(((size_t)n->n_out + 1) * sizeof(int));
  nn_box **boxes = nn_malloc(((size_t)n->n_out + 1) * sizeof(nn_box *));
  if (!items || !boxes) {
    nn_free(items);
    nn_free(boxes);
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  }
  for (int j = 0; j < n->n_out; j++) {
    const nn_value *ov = sub_out(ref, j);
    items[j] = ov->vtype != NN_VT_TENSOR && ov->box ? ov->box->n : -1;
  }
  size_t psize = nn_align_up(sizeof(if_priv), 16) + (size_t)n->n_out * sizeof(void *);
  n->priv = nn_priv_with_boxes(c, psize, n->n_out, items, boxes);
  st = n->priv ? NN_OK : (c->err ? c->err->status : NN_ERR_NOMEM);
  if (st == NN_OK) {
    if_priv *p = n->priv;
    p->branch = branch;
    p->targets = (void **)((unsigned char *)n->priv + nn_align_up(sizeof(if_priv), 16));
    for (int j = 0; j < n->n_out && st == NN_OK; j++) {
      const nn_value *ov = sub_out(ref, j);
      if (boxes[j]) {
        nn_box_copy_desc(boxes[j], ov->box);
        st = nn_set_box_output(c, n->y[j], boxes[j]);
      } else {
        st = nn_set_output(c, n->y[j], ov->dtype, ov->rank, ov->dims);
      }
    }
  }
  nn_free(items);
  nn_free(boxes);
  n->ws_bytes = ws;
  n->priv_const_bytes = folded;
  return st;
}

static nn_status if_run(nn_ctx *c, nn_node *n) {
  if_priv *p = n->priv;
  int branch = p->branch >= 0 ? p->branch : truthy(n->x[0]->dtype, n->x[0]->data);
  nn_graph *sub = attr_graph(n, branch ? "then_branch" : "else_branch");
  nn_plan_bind_arena(sub, &sub->plan, n->ws);
  bind_outer(sub, n, false);
  for (int j = 0; j < n->n_out; j++)
    p->targets[j] = n->y[j]->data;
  nn_status st = sub_run(c, n, sub, p->targets);
  for (int j = 0; j < n->n_out && st == NN_OK; j++)
    if (n->y[j]->box)
      nn_box_bind(n->y[j]->box, n->y[j]->data);
  return st;
}

/* ---- held values (Loop evaluated at plan time) ----------------------------------------- */
typedef struct held {
  nn_value v;          /* type and shape; v.data = data */
  nn_box box;
  nn_tensor *items;
  int items_cap;
  void *data;
  size_t cap;
} held;

static nn_status held_set(nn_ctx *c, held *h, const nn_value *v) {
  if (v->nbytes > h->cap || !h->data) {
    void *p = nn_aligned_alloc(v->nbytes ? v->nbytes : 1);
    if (!p)
      return nn_fail(c, NN_ERR_NOMEM, "out of memory (%zu bytes)", v->nbytes);
    nn_aligned_free(h->data);
    h->data = p;
    h->cap = v->nbytes;
  }
  if (v->nbytes && v->data)
    memmove(h->data, v->data, v->nbytes);
  h->v.dtype = v->dtype;
  h->v.rank = v->rank;
  memcpy(h->v.dims, v->dims, sizeof v->dims);
  h->v.numel = v->numel;
  h->v.nbytes = v->nbytes;
  h->v.vtype = v->vtype;
  if (v->vtype != NN_VT_TENSOR) {
    if (!v->box)
      return nn_fail(c, NN_ERR_RUNTIME, "'%s' has no sequence header", v->name);
    if (v->box->n > h->items_cap) {
      nn_tensor *it = nn_realloc(h->items, (size_t)v->box->n * sizeof *it);
      if (!it)
        return nn_fail(c, NN_ERR_NOMEM, "out of memory");
      h->items = it;
      h->items_cap = v->box->n;
    }
    h->box.items = h->items;
    nn_box_copy_desc(&h->box, v->box);
    nn_box_bind(&h->box, h->data);
  }
  return NN_OK;
}

static void held_to_input(held *h, nn_value *d) {
  set_input_like(d, &h->v, false);
  d->box = h->v.vtype != NN_VT_TENSOR ? &h->box : NULL;
  d->known = true;
  d->data = h->data;
}

static void held_free(held *h) {
  nn_aligned_free(h->data);
  nn_free(h->items);
  memset(h, 0, sizeof *h);
}

/* ---- Loop -------------------------------------------------------------------------------- */
typedef struct loop_priv {
  bool eager;          /* evaluated at prepare: run copies the results */
  int N, K;
  int64_t iters;       /* static with scan outputs: the planned iterations; -1 */
  size_t off_a, off_b, off_iter, off_cond, off_cout;
  size_t *carry_off;   /* N: offset of carried value k in buffer A / B */
  size_t *slice;       /* K: bytes of one iteration of scan output k */
  void **targets;      /* 1 + N + K */
  size_t *res_off;     /* eager: n_out offsets of the results, from res */
  unsigned char *res;
} loop_priv;

/* Is the body's condition output its condition input, unchanged? */
static bool loop_cond_trivial(const nn_graph *body) {
  if (body->n_inputs < 2 || body->n_outputs < 1)
    return false;
  int out = body->outputs[0], in = body->inputs[1];
  if (out == in)
    return true;
  int p = body->values[out].producer;
  if (p >= 0 && p < body->n_nodes) {
    const nn_node *pn = &body->nodes[p];
    if (strcmp(pn->op_type, "Identity") == 0 && pn->n_in >= 1 && pn->in[0] == in)
      return true;
  }
  return false;
}

static bool loop_needs(const nn_node *n, bool *need) {
  nn_graph *body = attr_graph(n, "body");
  if (!body)
    return false;
  bool formal = false;
  bool any = sub_needs(body, need, &formal);
  int N = n_explicit(n) - 2, K = n->n_out - N;
  bool all = formal;
  if (K > 0 && (!loop_cond_trivial(body) || n_explicit(n) < 1 || n->in[0] < 0))
    all = true;
  if (all) {
    for (int k = 0; k < n->n_in; k++)
      need[k] = true;
    return true;
  }
  if (K > 0) {
    need[0] = true;
    if (n_explicit(n) > 1)
      need[1] = true;
    return true;
  }
  return any;
}

static size_t loop_priv_size(int N, int K, int n_out, size_t res_bytes) {
  return nn_align_up(sizeof(loop_priv), 16) + (size_t)N * sizeof(size_t) + (size_t)K * sizeof(size_t) +
         (size_t)(1 + N + K) * sizeof(void *) + (size_t)n_out * sizeof(size_t) + 64 + res_bytes;
}

static void loop_priv_layout(loop_priv *p, int N, int K, int n_out) {
  unsigned char *b = (unsigned char *)p + nn_align_up(sizeof(loop_priv), 16);
  p->carry_off = (size_t *)b;
  b += (size_t)N * sizeof(size_t);
  p->slice = (size_t *)b;
  b += (size_t)K * sizeof(size_t);
  p->targets = (void **)b;
  b += (size_t)(1 + N + K) * sizeof(void *);
  p->res_off = (size_t *)b;
  b += (size_t)n_out * sizeof(size_t);
  p->res = (unsigned char *)nn_align_up((size_t)b, 64);
}

static int64_t loop_limit(void) {
  return NN_LIMIT_LOOP_ITERATIONS;
}

/* All inputs known: run the iterations now, planning the body for each. */
static nn_status loop_eager(nn_ctx *c, nn_node *n, nn_graph *body, int N, int K) {
  nn_status st = NN_OK;
  held *cur = nn_calloc((size_t)N + 1, sizeof(held)), *nxt = nn_calloc((size_t)N + 1, sizeof(held));
  held *scan = nn_calloc((size_t)K + 1, sizeof(held));
  size_t *scan_len = nn_calloc((size_t)K + 1, sizeof(size_t));
  int *items = nn_malloc(((size_t)n->n_out + 1) * sizeof(int));
  nn_box **boxes = nn_malloc(((size_t)n->n_out + 1) * sizeof(nn_box *));
  if (!cur || !nxt || !scan || !scan_len || !items || !boxes) {
    st = nn_fail(c, NN_ERR_NOMEM, "out of memory");
    goto out;
  }
  int64_t M = n->x[0] ? nn_value_get_int(n->x[0], 0) : INT64_MAX;
  bool cond = n->n_in > 1 && n->x[1] ? truthy(n->x[1]->dtype, n->x[1]->data) : true;
  for (int k = 0; k < N && st == NN_OK; k++) {
    if (!n->x[2 + k]) {
      st = nn_fail(c, NN_ERR_UNSUPPORTED, "loop-carried input %d is omitted", k);
      break;
    }
    st = held_set(c, &cur[k], n->x[2 + k]);
  }
  int64_t max_elems = c->limits && c->limits->max_tensor_elems ? c->limits->max_tensor_elems
                                                               : NN_LIMIT_TENSOR_ELEMS;
  int64_t i = 0, iter_val = 0;
  uint8_t cond_val = 0;
  for (; st == NN_OK && i < M && cond; i++) {
    if (i >= loop_limit()) {
      st = nn_fail(c, NN_ERR_LIMIT, "ran %lld iterations, the limit (its condition never turned false?)",
                   (long long)loop_limit());
      break;
    }
    iter_val = i;
    cond_val = cond;
    set_input_tensor(sub_in(body, 0), NN_DTYPE_INT64, 0, NULL, &iter_val, true);
    set_input_tensor(sub_in(body, 1), NN_DTYPE_BOOL, 0, NULL, &cond_val, true);
    for (int k = 0; k < N; k++)
      held_to_input(&cur[k], sub_in(body, 2 + k));
    bind_outer(body, n, true);
    if ((st = sub_plan(c, n, body, "body")) != NN_OK)
      break;
    if (body->plan.n_steps > 0) {
      nn_node *s = &body->nodes[body->plan.steps[0]];
      st = nn_fail(c, NN_ERR_UNSUPPORTED, "its body cannot be evaluated while planning (node '%s' (%s) "
                   "does not fold), which a Loop of data-dependent shape needs", s->name, s->op_type);
      break;
    }
    const nn_value *co = sub_out(body, 0);
    if (co->numel != 1 || co->vtype != NN_VT_TENSOR) {
      st = nn_fail(c, NN_ERR_INVALID_MODEL, "its body's condition output is not one element");
      break;
    }
    cond = truthy(co->dtype, co->data);
    for (int k = 0; k < N && st == NN_OK; k++)
      st = held_set(c, &nxt[k], sub_out(body, 1 + k));
    for (int k = 0; k < K && st == NN_OK; k++) {
      const nn_value *so = sub_out(body, 1 + N + k);
      held *h = &scan[k];
      if (so->vtype != NN_VT_TENSOR) {
        st = nn_fail(c, NN_ERR_UNSUPPORTED, "scan output %d is not a tensor", k);
        break;
      }
      if (i == 0) {
        h->v.dtype = so->dtype;
        h->v.rank = so->rank;
        memcpy(h->v.dims, so->dims, sizeof so->dims);
        h->v.nbytes = so->nbytes;
      } else if (so->dtype != h->v.dtype || so->rank != h->v.rank ||
                 memcmp(so->dims, h->v.dims, sizeof(int64_t) * (size_t)so->rank) != 0) {
        st = nn_fail(c, NN_ERR_SHAPE, "scan output %d changes shape at iteration %lld", k, (long long)i);
        break;
      }
      if (so->rank + 1 > NN_MAX_RANK ||
          (so->numel > 0 && (int64_t)(i + 1) > max_elems / so->numel)) {
        st = nn_fail(c, NN_ERR_LIMIT, "scan output %d grows past the tensor limit", k);
        break;
      }
      size_t need = scan_len[k] + so->nbytes;
      if (need > h->cap || !h->data) {
        size_t cap = h->cap ? h->cap * 2 : 256;
        while (cap < need)
          cap *= 2;
        void *p = nn_aligned_alloc(cap);
        if (!p) {
          st = nn_fail(c, NN_ERR_NOMEM, "out of memory");
          break;
        }
        if (scan_len[k])
          memcpy(p, h->data, scan_len[k]);
        nn_aligned_free(h->data);
        h->data = p;
        h->cap = cap;
      }
      if (so->nbytes)
        memcpy((unsigned char *)h->data + scan_len[k], so->data, so->nbytes);
      scan_len[k] = need;
    }
    held *t = cur;
    cur = nxt;
    nxt = t;
  }
  nn_plan_clear(body, &body->plan);
  body->planned = false;
  if (st != NN_OK)
    goto out;
  /* results: the final state and the stacked scan outputs, in priv */
  size_t res_bytes = 0;
  for (int k = 0; k < N; k++)
    res_bytes += nn_align_up(cur[k].v.nbytes, 64);
  for (int k = 0; k < K; k++)
    res_bytes += nn_align_up(scan_len[k], 64);
  for (int j = 0; j < n->n_out; j++)
    items[j] = j < N && cur[j].v.vtype != NN_VT_TENSOR ? cur[j].box.n : -1;
  n->priv = nn_priv_with_boxes(c, loop_priv_size(N, K, n->n_out, res_bytes), n->n_out, items, boxes);
  if (!n->priv) {
    st = c->err ? c->err->status : NN_ERR_NOMEM;
    goto out;
  }
  loop_priv *p = n->priv;
  loop_priv_layout(p, N, K, n->n_out);
  p->eager = true;
  p->N = N;
  p->K = K;
  size_t off = 0;
  for (int k = 0; k < N && st == NN_OK; k++) {
    p->res_off[k] = off;
    if (cur[k].v.nbytes)
      memcpy(p->res + off, cur[k].data, cur[k].v.nbytes);
    off += nn_align_up(cur[k].v.nbytes, 64);
    if (!n->y[k])
      continue;
    if (boxes[k]) {
      nn_box_copy_desc(boxes[k], &cur[k].box);
      st = nn_set_box_output(c, n->y[k], boxes[k]);
    } else {
      st = nn_set_output(c, n->y[k], cur[k].v.dtype, cur[k].v.rank, cur[k].v.dims);
    }
  }
  for (int k = 0; k < K && st == NN_OK; k++) {
    p->res_off[N + k] = off;
    if (scan_len[k])
      memcpy(p->res + off, scan[k].data, scan_len[k]);
    off += nn_align_up(scan_len[k], 64);
    if (!n->y[N + k])
      continue;
    int64_t dims[NN_MAX_RANK];
    dims[0] = i;
    int r = 1;
    if (i > 0) {
      for (int d = 0; d < scan[k].v.rank; d++)
        dims[r++] = scan[k].v.dims[d];
      st = nn_set_output(c, n->y[N + k], scan[k].v.dtype, r, dims);
    } else {
      /* no iteration: the declared item shape, unknown dims as 0 */
      const nn_value *so = sub_out(body, 1 + N + k);
      for (int d = 0; d < so->decl_rank && r < NN_MAX_RANK; d++)
        dims[r++] = so->decl_dims[d] > 0 ? so->decl_dims[d] : 0;
      nn_dtype dt = so->decl_dtype != NN_DTYPE_UNDEFINED ? so->decl_dtype : NN_DTYPE_FLOAT;
      st = nn_set_output(c, n->y[N + k], dt, r, dims);
    }
  }
out:
  for (int k = 0; cur && k < N; k++)
    held_free(&cur[k]);
  for (int k = 0; nxt && k < N; k++)
    held_free(&nxt[k]);
  for (int k = 0; scan && k < K; k++)
    held_free(&scan[k]);
  nn_free(cur);
  nn_free(nxt);
  nn_free(scan);
  nn_free(scan_len);
  nn_free(items);
  nn_free(boxes);
  return st;
}

static nn_status loop_prepare(nn_ctx *c, nn_node *n) {
  nn_graph *body = attr_graph(n, "body");
  if (!body)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs the graph attribute body");
  int N = n_explicit(n) - 2, K = n->n_out - N;
  if (N < 0 || K < 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "has %d inputs and %d outputs: a Loop needs M, cond and as "
                   "many outputs as loop-carried values at least", n_explicit(n), n->n_out);
  if (body->n_inputs != N + 2 || body->n_outputs != 1 + N + K)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "its body takes %d inputs and returns %d values; with %d "
                   "loop-carried values and %d scan outputs it must take %d and return %d",
                   body->n_inputs, body->n_outputs, N, K, N + 2, 1 + N + K);
  const nn_value *M = n->x[0], *cond = n->n_in > 1 ? n->x[1] : NULL;
  if ((M && (M->numel != 1 || !nn_dtype_is_int(M->dtype))) || (cond && cond->numel != 1))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "M and cond must be one element each");
  if (all_inputs_known(n))
    return loop_eager(c, n, body, N, K);
  for (int k = 0; k < N; k++)
    if (!n->x[2 + k] || n->x[2 + k]->vtype != NN_VT_TENSOR)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "carries a sequence or optional (input %d) computed at run "
                     "time: such a Loop runs only when all its inputs are known at plan time", 2 + k);
  /* planned once: the state keeps its shape, the body its plan */
  set_input_tensor(sub_in(body, 0), NN_DTYPE_INT64, 0, NULL, NULL, false);
  set_input_tensor(sub_in(body, 1), NN_DTYPE_BOOL, 0, NULL, NULL, false);
  for (int k = 0; k < N; k++)
    set_input_like(sub_in(body, 2 + k), n->x[2 + k], false);
  bind_outer(body, n, true);
  nn_status st = sub_plan(c, n, body, "body");
  if (st != NN_OK)
    return st;
  const nn_value *co = sub_out(body, 0);
  if (co->numel != 1 || co->vtype != NN_VT_TENSOR)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "its body's condition output is not one element");
  for (int k = 0; k < N; k++) {
    const nn_value *a = sub_in(body, 2 + k), *b = sub_out(body, 1 + k);
    if (!same_shape(a, b)) {
      char sa[128], sb[128];
      shape_text(a, sa, sizeof sa);
      shape_text(b, sb, sizeof sb);
      return nn_fail(c, NN_ERR_UNSUPPORTED, "loop-carried value %d is %s before the body and %s after it: "
                     "a Loop whose state changes shape runs only when all its inputs are known at plan "
                     "time", k, sa, sb);
    }
  }
  int64_t iters = -1;
  if (K > 0) {
    if (!M || !M->known || (cond && !cond->known) || !loop_cond_trivial(body))
      return nn_fail(c, NN_ERR_UNSUPPORTED, "the length of its scan outputs depends on values only known "
                     "at run time");
    iters = (!cond || truthy(cond->dtype, cond->data)) ? nn_value_get_int(M, 0) : 0;
    if (iters < 0)
      iters = 0;
    if (iters > loop_limit())
      return nn_fail(c, NN_ERR_LIMIT, "would run %lld iterations, more than the limit %lld",
                     (long long)iters, (long long)loop_limit());
  }
  n->priv = nn_calloc(1, loop_priv_size(N, K, n->n_out, 0));
  if (!n->priv)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  loop_priv *p = n->priv;
  loop_priv_layout(p, N, K, n->n_out);
  p->N = N;
  p->K = K;
  p->iters = iters;
  size_t carried = 0;
  for (int k = 0; k < N; k++) {
    p->carry_off[k] = carried;
    carried += nn_align_up(n->x[2 + k]->nbytes, NN_ALIGN);
    if ((st = nn_set_output(c, n->y[k], n->x[2 + k]->dtype, n->x[2 + k]->rank, n->x[2 + k]->dims)) != NN_OK)
      return st;
  }
  for (int k = 0; k < K; k++) {
    const nn_value *so = sub_out(body, 1 + N + k);
    if (so->vtype != NN_VT_TENSOR || so->rank + 1 > NN_MAX_RANK)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "scan output %d is not a tensor of rank < %d", k, NN_MAX_RANK);
    int64_t dims[NN_MAX_RANK];
    dims[0] = iters;
    for (int d = 0; d < so->rank; d++)
      dims[1 + d] = so->dims[d];
    p->slice[k] = so->nbytes;
    if (!n->y[N + k])
      return nn_fail(c, NN_ERR_UNSUPPORTED, "scan output %d is omitted", k);
    if ((st = nn_set_output(c, n->y[N + k], so->dtype, so->rank + 1, dims)) != NN_OK)
      return st;
  }
  for (int k = 0; k < N; k++)
    if (!n->y[k])
      return nn_fail(c, NN_ERR_UNSUPPORTED, "output %d is omitted", k);
  size_t off = nn_align_up(body->plan.arena_bytes, NN_ALIGN);
  p->off_a = off;
  off += carried;
  p->off_b = off;
  off += carried;
  p->off_iter = off;
  off += 64;
  p->off_cond = off;
  off += 64;
  p->off_cout = off;
  off += nn_align_up(co->nbytes > 64 ? co->nbytes : 64, NN_ALIGN);
  n->ws_bytes = off;
  n->priv_const_bytes = body->plan.folded_bytes;
  return NN_OK;
}

static nn_status loop_run(nn_ctx *c, nn_node *n) {
  loop_priv *p = n->priv;
  int N = p->N, K = p->K;
  if (p->eager) {
    for (int j = 0; j < n->n_out; j++) {
      nn_value *y = n->y[j];
      if (!y)
        continue;
      if (y->nbytes)
        memcpy(y->data, p->res + p->res_off[j], y->nbytes);
      if (y->box)
        nn_box_bind(y->box, y->data);
    }
    return NN_OK;
  }
  nn_graph *body = attr_graph(n, "body");
  unsigned char *ws = n->ws;
  nn_plan_bind_arena(body, &body->plan, ws);
  bind_outer(body, n, false);
  int64_t M = n->x[0] ? nn_value_get_int(n->x[0], 0) : INT64_MAX;
  bool cond = n->n_in > 1 && n->x[1] ? truthy(n->x[1]->dtype, n->x[1]->data) : true;
  unsigned char *cur = ws + p->off_a, *nxt = ws + p->off_b;
  for (int k = 0; k < N; k++)
    if (n->x[2 + k]->nbytes)
      memcpy(cur + p->carry_off[k], n->x[2 + k]->data, n->x[2 + k]->nbytes);
  nn_value *iv = sub_in(body, 0), *cv = sub_in(body, 1);
  const nn_value *co = sub_out(body, 0);
  iv->data = ws + p->off_iter;
  cv->data = ws + p->off_cond;
  p->targets[0] = ws + p->off_cout;
  int64_t i = 0;
  for (; i < M && cond; i++) {
    if (i >= loop_limit())
      return nn_fail(c, NN_ERR_LIMIT, "ran %lld iterations, the limit (its condition never turned false?)",
                     (long long)loop_limit());
    if (p->iters >= 0 && i >= p->iters)
      return nn_fail(c, NN_ERR_RUNTIME, "runs more iterations than planned (%lld)", (long long)p->iters);
    *(int64_t *)iv->data = i;
    *(uint8_t *)cv->data = cond;
    for (int k = 0; k < N; k++) {
      sub_in(body, 2 + k)->data = cur + p->carry_off[k];
      p->targets[1 + k] = nxt + p->carry_off[k];
    }
    for (int k = 0; k < K; k++)
      p->targets[1 + N + k] = (unsigned char *)n->y[N + k]->data + (size_t)i * p->slice[k];
    nn_status st = sub_run(c, n, body, p->targets);
    if (st != NN_OK)
      return st;
    cond = truthy(co->dtype, p->targets[0]);
    unsigned char *t = cur;
    cur = nxt;
    nxt = t;
  }
  if (p->iters >= 0 && i != p->iters)
    return nn_fail(c, NN_ERR_RUNTIME, "ran %lld iterations, %lld were planned", (long long)i,
                   (long long)p->iters);
  for (int k = 0; k < N; k++)
    if (n->y[k]->nbytes)
      memcpy(n->y[k]->data, cur + p->carry_off[k], n->y[k]->nbytes);
  return NN_OK;
}

/* ---- Scan ---------------------------------------------------------------------------------- */
typedef struct scan_io {
  size_t slot;         /* workspace offset of the slice */
  int64_t outer;       /* elements before the scan axis (excluding the batch) */
  size_t inner;        /* bytes after it (one step of the axis) */
  size_t batch_stride; /* bytes per batch entry (Scan 8) */
  bool reverse;
} scan_io;

typedef struct scan_priv {
  int N, M, K, first_state;
  int64_t L, B;
  size_t off_a, off_b;
  size_t *carry_off, *carry_bytes;   /* N */
  scan_io *in, *out;                 /* M, K */
  void **targets;                    /* N + K */
} scan_priv;

static bool scan_needs(const nn_node *n, bool *need) {
  nn_graph *body = attr_graph(n, "body");
  if (!body)
    return false;
  bool formal = false;
  bool any = sub_needs(body, need, &formal);
  if (formal) {
    for (int k = 0; k < n->n_in; k++)
      need[k] = true;
    return true;
  }
  return any;
}

static nn_status scan_prepare(nn_ctx *c, nn_node *n) {
  nn_graph *body = attr_graph(n, "body");
  if (!body)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs the graph attribute body");
  bool v8 = n->version < 9;
  int M = (int)nn_attr_int(n, "num_scan_inputs", -1);
  int first = v8 ? 1 : 0;
  int N = n_explicit(n) - first - M, K = n->n_out - N;
  if (M < 1 || N < 0 || K < 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "num_scan_inputs %d does not fit its %d inputs and %d outputs",
                   M, n_explicit(n), n->n_out);
  if (body->n_inputs != N + M || body->n_outputs != N + K)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "its body takes %d inputs and returns %d values; with %d state "
                   "values, %d scan inputs and %d scan outputs it must take %d and return %d",
                   body->n_inputs, body->n_outputs, N, M, K, N + M, N + K);
  int n_ax = 0, n_dir = 0, n_oax = 0, n_odir = 0;
  const int64_t *in_axes = nn_attr_ints(n, "scan_input_axes", &n_ax);
  const int64_t *in_dirs = nn_attr_ints(n, v8 ? "directions" : "scan_input_directions", &n_dir);
  const int64_t *out_axes = nn_attr_ints(n, "scan_output_axes", &n_oax);
  const int64_t *out_dirs = nn_attr_ints(n, "scan_output_directions", &n_odir);
  if ((in_axes && n_ax != M) || (in_dirs && n_dir != M) || (out_axes && n_oax != K) ||
      (out_dirs && n_odir != K))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "its axes or directions do not match its scan inputs/outputs");
  int64_t B = 1, L = -1;
  if (v8) {
    if (N + M < 1 || !n->x[first])
      return nn_fail(c, NN_ERR_INVALID_MODEL, "has no batched input");
    B = n->x[first]->rank > 0 ? n->x[first]->dims[0] : 0;
    if (n->x[0])
      return nn_fail(c, NN_ERR_UNSUPPORTED, "sequence_lens is not supported (all sequences full length)");
  }
  nn_status st;
  for (int k = 0; k < N + M; k++) {
    const nn_value *x = n->x[first + k];
    if (!x || x->vtype != NN_VT_TENSOR)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "input %d must be a tensor", first + k);
    if (v8 && (x->rank < 1 || x->dims[0] != B))
      return nn_fail(c, NN_ERR_SHAPE, "input %d does not have the batch size %lld", first + k, (long long)B);
  }
  /* the body's inputs: states without the batch, scan slices without the axis */
  for (int k = 0; k < N; k++) {
    const nn_value *x = n->x[first + k];
    set_input_tensor(sub_in(body, k), x->dtype, x->rank - (v8 ? 1 : 0), x->dims + (v8 ? 1 : 0), NULL, false);
  }
  int *axes = nn_malloc(((size_t)M + (size_t)K + 1) * sizeof(int));
  if (!axes)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  for (int j = 0; j < M; j++) {
    const nn_value *x = n->x[first + N + j];
    int r = x->rank - (v8 ? 1 : 0);
    const int64_t *d = x->dims + (v8 ? 1 : 0);
    int a = 0;
    if (!v8 && in_axes && !nn_norm_axis(in_axes[j], r, &a)) {
      nn_free(axes);
      return nn_fail(c, NN_ERR_INVALID_MODEL, "scan_input_axes[%d] is out of range", j);
    }
    if (r < 1) {
      nn_free(axes);
      return nn_fail(c, NN_ERR_SHAPE, "scan input %d has no axis to scan", j);
    }
    if (L < 0)
      L = d[a];
    else if (d[a] != L) {
      nn_free(axes);
      return nn_fail(c, NN_ERR_SHAPE, "scan inputs have different lengths (%lld and %lld)", (long long)L,
                     (long long)d[a]);
    }
    axes[j] = a;
    int64_t sd[NN_MAX_RANK];
    int sr = 0;
    for (int q = 0; q < r; q++)
      if (q != a)
        sd[sr++] = d[q];
    set_input_tensor(sub_in(body, N + j), x->dtype, sr, sd, NULL, false);
  }
  bind_outer(body, n, true);
  if ((st = sub_plan(c, n, body, "body")) != NN_OK) {
    nn_free(axes);
    return st;
  }
  for (int k = 0; k < N; k++)
    if (!same_shape(sub_in(body, k), sub_out(body, k))) {
      nn_free(axes);
      return nn_fail(c, NN_ERR_UNSUPPORTED, "state value %d changes shape in the body", k);
    }
  size_t psize = nn_align_up(sizeof(scan_priv), 16) + 2 * (size_t)N * sizeof(size_t) +
                 ((size_t)M + (size_t)K) * sizeof(scan_io) + ((size_t)N + (size_t)K) * sizeof(void *);
  n->priv = nn_calloc(1, psize);
  if (!n->priv) {
    nn_free(axes);
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  }
  scan_priv *p = n->priv;
  unsigned char *b = (unsigned char *)p + nn_align_up(sizeof(scan_priv), 16);
  p->carry_off = (size_t *)b;
  b += (size_t)N * sizeof(size_t);
  p->carry_bytes = (size_t *)b;
  b += (size_t)N * sizeof(size_t);
  p->in = (scan_io *)b;
  b += (size_t)M * sizeof(scan_io);
  p->out = (scan_io *)b;
  b += (size_t)K * sizeof(scan_io);
  p->targets = (void **)b;
  p->N = N;
  p->M = M;
  p->K = K;
  p->first_state = first;
  p->L = L;
  p->B = B;
  size_t off = nn_align_up(body->plan.arena_bytes, NN_ALIGN), carried = 0;
  for (int k = 0; k < N; k++) {
    p->carry_off[k] = carried;
    p->carry_bytes[k] = sub_in(body, k)->nbytes;
    carried += nn_align_up(p->carry_bytes[k], NN_ALIGN);
    const nn_value *x = n->x[first + k];
    if (!n->y[k]) {
      nn_free(axes);
      return nn_fail(c, NN_ERR_UNSUPPORTED, "output %d is omitted", k);
    }
    if ((st = nn_set_output(c, n->y[k], x->dtype, x->rank, x->dims)) != NN_OK) {
      nn_free(axes);
      return st;
    }
  }
  p->off_a = off;
  off += carried;
  p->off_b = off;
  off += carried;
  for (int j = 0; j < M; j++) {
    const nn_value *x = n->x[first + N + j];
    const int64_t *d = x->dims + (v8 ? 1 : 0);
    scan_io *io = &p->in[j];
    io->outer = 1;
    for (int q = 0; q < axes[j]; q++)
      io->outer *= d[q];
    io->inner = nn_dtype_size(x->dtype);
    for (int q = axes[j] + 1; q < x->rank - (v8 ? 1 : 0); q++)
      io->inner *= (size_t)d[q];
    io->batch_stride = v8 && B > 0 ? x->nbytes / (size_t)B : 0;
    io->reverse = in_dirs && in_dirs[j] != 0;
    io->slot = off;
    off += nn_align_up(sub_in(body, N + j)->nbytes, NN_ALIGN);
  }
  for (int k = 0; k < K; k++) {
    const nn_value *so = sub_out(body, N + k);
    if (so->vtype != NN_VT_TENSOR || so->rank + 1 + (v8 ? 1 : 0) > NN_MAX_RANK) {
      nn_free(axes);
      return nn_fail(c, NN_ERR_UNSUPPORTED, "scan output %d is not a tensor of a supported rank", k);
    }
    int a = 0;
    if (!v8 && out_axes && !nn_norm_axis(out_axes[k], so->rank + 1, &a)) {
      nn_free(axes);
      return nn_fail(c, NN_ERR_INVALID_MODEL, "scan_output_axes[%d] is out of range", k);
    }
    int64_t dims[NN_MAX_RANK];
    int r = 0;
    if (v8)
      dims[r++] = B;
    for (int q = 0, s = 0; q <= so->rank; q++)
      dims[r++] = q == a ? L : so->dims[s++];
    scan_io *io = &p->out[k];
    io->outer = 1;
    for (int q = 0; q < a; q++)
      io->outer *= so->dims[q];
    io->inner = nn_dtype_size(so->dtype);
    for (int q = a; q < so->rank; q++)
      io->inner *= (size_t)so->dims[q];
    io->batch_stride = (size_t)L * so->nbytes;
    io->reverse = out_dirs && out_dirs[k] != 0;
    io->slot = off;
    off += nn_align_up(so->nbytes, NN_ALIGN);
    if (!n->y[N + k]) {
      nn_free(axes);
      return nn_fail(c, NN_ERR_UNSUPPORTED, "scan output %d is omitted", k);
    }
    if ((st = nn_set_output(c, n->y[N + k], so->dtype, r, dims)) != NN_OK) {
      nn_free(axes);
      return st;
    }
  }
  nn_free(axes);
  n->ws_bytes = off;
  n->priv_const_bytes = body->plan.folded_bytes;
  return NN_OK;
}

static nn_status scan_run(nn_ctx *c, nn_node *n) {
  scan_priv *p = n->priv;
  nn_graph *body = attr_graph(n, "body");
  unsigned char *ws = n->ws;
  int N = p->N, M = p->M, K = p->K, first = p->first_state;
  nn_plan_bind_arena(body, &body->plan, ws);
  bind_outer(body, n, false);
  for (int64_t b = 0; b < p->B; b++) {
    unsigned char *cur = ws + p->off_a, *nxt = ws + p->off_b;
    for (int k = 0; k < N; k++)
      if (p->carry_bytes[k])
        memcpy(cur + p->carry_off[k], (unsigned char *)n->x[first + k]->data + (size_t)b * p->carry_bytes[k],
               p->carry_bytes[k]);
    for (int j = 0; j < M; j++)
      sub_in(body, N + j)->data = ws + p->in[j].slot;
    for (int k = 0; k < K; k++)
      p->targets[N + k] = ws + p->out[k].slot;
    for (int64_t t = 0; t < p->L; t++) {
      for (int j = 0; j < M; j++) {
        const scan_io *io = &p->in[j];
        int64_t at = io->reverse ? p->L - 1 - t : t;
        const unsigned char *src = (const unsigned char *)n->x[first + N + j]->data + (size_t)b * io->batch_stride;
        unsigned char *dst = ws + io->slot;
        for (int64_t o = 0; o < io->outer && io->inner; o++)
          memcpy(dst + (size_t)o * io->inner, src + ((size_t)o * (size_t)p->L + (size_t)at) * io->inner,
                 io->inner);
      }
      for (int k = 0; k < N; k++) {
        sub_in(body, k)->data = cur + p->carry_off[k];
        p->targets[k] = nxt + p->carry_off[k];
      }
      nn_status st = sub_run(c, n, body, p->targets);
      if (st != NN_OK)
        return st;
      for (int k = 0; k < K; k++) {
        const scan_io *io = &p->out[k];
        int64_t at = io->reverse ? p->L - 1 - t : t;
        unsigned char *dst = (unsigned char *)n->y[N + k]->data + (size_t)b * io->batch_stride;
        const unsigned char *src = ws + io->slot;
        for (int64_t o = 0; o < io->outer && io->inner; o++)
          memcpy(dst + ((size_t)o * (size_t)p->L + (size_t)at) * io->inner, src + (size_t)o * io->inner,
                 io->inner);
      }
      unsigned char *tmp = cur;
      cur = nxt;
      nxt = tmp;
    }
    for (int k = 0; k < N; k++)
      if (p->carry_bytes[k])
        memcpy((unsigned char *)n->y[k]->data + (size_t)b * p->carry_bytes[k], cur + p->carry_off[k],
               p->carry_bytes[k]);
  }
  return NN_OK;
}

/* ---- SequenceMap ------------------------------------------------------------------------ */
/* Its body runs once per item of the input sequences, on items whose shapes
 * may all differ: evaluated while planning (every input is needed, so
 * known), the body planned for each item; run copies the results. */
typedef struct smap_priv {
  int n_out;
  size_t *res_off;     /* n_out */
  unsigned char *res;
} smap_priv;

static bool smap_needs(const nn_node *n, bool *need) {
  for (int k = 0; k < n->n_in; k++)
    need[k] = true;
  return n->n_in > 0;
}

static nn_status smap_prepare(nn_ctx *c, nn_node *n) {
  nn_graph *body = attr_graph(n, "body");
  if (!body)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs the graph attribute body");
  int ne = n_explicit(n), K = n->n_out;
  if (ne < 1 || !n->x[0] || n->x[0]->vtype != NN_VT_SEQUENCE)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "input 0 must be a sequence");
  if (body->n_inputs != ne || body->n_outputs != K)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "its body takes %d inputs and returns %d values; the node has "
                   "%d inputs and %d outputs", body->n_inputs, body->n_outputs, ne, K);
  if (!all_inputs_known(n))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "its inputs are only known at run time");
  int L = n->x[0]->box->n;
  for (int k = 1; k < ne; k++)
    if (n->x[k] && n->x[k]->vtype == NN_VT_SEQUENCE && n->x[k]->box->n != L)
      return nn_fail(c, NN_ERR_SHAPE, "its input sequences have different lengths");
  nn_status st = NN_OK;
  held *res = nn_calloc((size_t)L * (size_t)K + 1, sizeof(held));
  int *items = nn_malloc(((size_t)K + 1) * sizeof(int));
  nn_box **boxes = nn_malloc(((size_t)K + 1) * sizeof(nn_box *));
  if (!res || !items || !boxes) {
    st = nn_fail(c, NN_ERR_NOMEM, "out of memory");
    goto out;
  }
  for (int i = 0; i < L && st == NN_OK; i++) {
    for (int k = 0; k < ne; k++) {
      const nn_value *x = n->x[k];
      nn_value *bi = sub_in(body, k);
      if (x && x->vtype == NN_VT_SEQUENCE) {
        const nn_tensor *it = &x->box->items[i];
        set_input_tensor(bi, it->dtype, it->rank, it->dims, it->data, true);
      } else if (x) {
        set_input_like(bi, x, true);
      }
    }
    bind_outer(body, n, true);
    if ((st = sub_plan(c, n, body, "body")) != NN_OK)
      break;
    if (body->plan.n_steps > 0) {
      st = nn_fail(c, NN_ERR_UNSUPPORTED, "its body cannot be evaluated while planning");
      break;
    }
    for (int k = 0; k < K && st == NN_OK; k++) {
      const nn_value *ov = sub_out(body, k);
      if (ov->vtype != NN_VT_TENSOR)
        st = nn_fail(c, NN_ERR_UNSUPPORTED, "its body returns a sequence");
      else
        st = held_set(c, &res[(size_t)i * (size_t)K + (size_t)k], ov);
    }
  }
  nn_plan_clear(body, &body->plan);
  body->planned = false;
  if (st != NN_OK)
    goto out;
  size_t bytes = 0;
  for (int k = 0; k < K; k++) {
    items[k] = L;
    for (int i = 0; i < L; i++)
      bytes += nn_align_up(res[(size_t)i * (size_t)K + (size_t)k].v.nbytes, NN_ALIGN);
  }
  size_t psize = nn_align_up(sizeof(smap_priv), 16) + (size_t)K * sizeof(size_t) + 64 + bytes;
  n->priv = nn_priv_with_boxes(c, psize, K, items, boxes);
  if (!n->priv) {
    st = c->err ? c->err->status : NN_ERR_NOMEM;
    goto out;
  }
  smap_priv *p = n->priv;
  p->n_out = K;
  p->res_off = (size_t *)((unsigned char *)p + nn_align_up(sizeof(smap_priv), 16));
  p->res = (unsigned char *)nn_align_up((size_t)(p->res_off + K), 64);
  size_t off = 0;
  for (int k = 0; k < K && st == NN_OK; k++) {
    p->res_off[k] = off;
    nn_box *b = boxes[k];
    b->vtype = NN_VT_SEQUENCE;
    b->elem_dtype = L > 0 ? res[k].v.dtype : NN_DTYPE_FLOAT;
    for (int i = 0; i < L; i++) {
      held *h = &res[(size_t)i * (size_t)K + (size_t)k];
      nn_box_item_set(&b->items[i], h->v.dtype, h->v.rank, h->v.dims);
      if (h->v.nbytes)
        memcpy(p->res + off, h->data, h->v.nbytes);
      off += nn_align_up(h->v.nbytes, NN_ALIGN);
    }
    if (!n->y[k]) {
      st = nn_fail(c, NN_ERR_UNSUPPORTED, "output %d is omitted", k);
      break;
    }
    st = nn_set_box_output(c, n->y[k], b);
  }
out:
  for (size_t i = 0; res && i < (size_t)L * (size_t)K; i++)
    held_free(&res[i]);
  nn_free(res);
  nn_free(items);
  nn_free(boxes);
  return st;
}

static nn_status smap_run(nn_ctx *c, nn_node *n) {
  (void)c;
  smap_priv *p = n->priv;
  for (int k = 0; k < p->n_out; k++) {
    nn_value *y = n->y[k];
    if (y->nbytes)
      memcpy(y->data, p->res + p->res_off[k], y->nbytes);
    nn_box_bind(y->box, y->data);
  }
  return NN_OK;
}

const nn_kernel nn_kernels_control[] = {
  {.name = "If", .prepare = if_prepare, .run = if_run, .subgraph_needs = if_needs},
  {.name = "Loop", .prepare = loop_prepare, .run = loop_run, .subgraph_needs = loop_needs},
  {.name = "Scan", .prepare = scan_prepare, .run = scan_run, .subgraph_needs = scan_needs},
  {.name = "SequenceMap", .prepare = smap_prepare, .run = smap_run, .subgraph_needs = smap_needs},
  {0},
};
