/* vk_graph.c - a planned graph on the device: partitioning, residency,
 * recording, running.
 *
 * Partitioning: every plan step whose op has a Vulkan kernel that supports
 * it (vk_registry.c over the vk_<family>.c tables) is recorded on the device; the others run on the CPU
 * kernels as host steps between device segments.  Consecutive CPU steps
 * form one host step, so each run is one submit + one fence wait per device
 * segment (exactly one when everything is on the device).
 *
 * Residency: each value the steps touch has a device view and a host home
 * (value->data), and the recorder tracks where its current contents are:
 *   arena values      the device arena at the planned offset; the host home
 *                     is the same memory when memory is unified, otherwise a
 *                     host-visible mirror synchronized by recorded buffer
 *                     copies around CPU segments (only the values a CPU step
 *                     reads, or a device step reads after a CPU step wrote)
 *   constants         uploaded once, on first device use
 *   graph inputs      copied from value->data into their device buffer (or
 *                     its staging) before each run
 *   graph outputs     written to their device buffer, copied back to
 *                     value->data after the run (or before a CPU step that
 *                     reads them)
 * All copies are recorded once; a run only replays them and does the
 * memcpys between caller memory and mapped buffers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_backend.h"

typedef enum loc {
  LOC_NONE = 0,   /* not produced yet */
  LOC_HOST,       /* current on the host only */
  LOC_DEV,        /* current on the device only */
  LOC_BOTH,
} loc;

typedef enum home {
  HOME_UNKNOWN = 0,
  HOME_ARENA,
  HOME_CONST,
  HOME_INPUT,
  HOME_OUTPUT,
} home;

typedef struct vval {
  home home;
  loc loc;
  bool has_dev;
  nn_vk_tensor dev;     /* device view (valid when has_dev) */
  nn_vk_buf own;        /* constants and graph I/O: their device buffer */
  nn_vk_buf stage;      /* graph I/O without a host mapping: staging */
  int host_group;       /* group that produced it on the host, -1 */
  bool run_upload;      /* graph input copied in before each run */
  bool run_download;    /* graph output copied out after each run */
} vval;

/* A memcpy between value->data and a mapped buffer, at run time. */
typedef struct xfer {
  const nn_value *v;
  const nn_vk_buf *buf; /* the mapped buffer (own or stage) */
} xfer;

typedef struct xfer_list {
  int n, cap;
  xfer *v;
} xfer_list;

typedef struct int_list {
  int n, cap;
  int *v;
} int_list;

/* A host step: CPU nodes between two device segments. */
typedef struct group {
  nn_vk_graph *vg;
  int_list steps;       /* node indices */
  xfer_list pre;        /* device-produced graph outputs a CPU node reads */
  xfer_list post;       /* CPU-produced graph outputs a device node reads */
} group;

struct nn_vk_rec {
  nn_vk_graph *vg;
};

struct nn_vk_graph {
  nn_vk_ctx *ctx;       /* own reference */
  nn_vk_mem *mem;
  nn_vk_exec *exec;
  /* the current build (borrowed from the session) */
  nn_graph *g;
  nn_plan *plan;
  nn_ctx *cpu;
  int n_vals;
  vval *vals;           /* g->values, then plan->extra */
  nn_vk_buf arena;      /* kept across builds while it fits */
  nn_vk_buf mirror;     /* host arena when memory is not unified */
  void *host_arena;
  int n_derived, cap_derived;
  nn_vk_buf *derived;
  int n_groups;
  group *groups;        /* sized n_steps: host-step args need stable addresses */
  xfer_list run_in;     /* before each run: value->data -> mapped buffer */
  xfer_list run_out;    /* after each run: mapped buffer -> value->data */
  int nodes_vulkan, nodes_cpu;
  bool built;
  bool logged;
  char fallback[256];
  uint64_t runs;
};

/* ---- small lists ---------------------------------------------------------------- */

static bool xfer_push(xfer_list *l, const nn_value *v, const nn_vk_buf *buf) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    xfer *nv = nn_realloc(l->v, (size_t)cap * sizeof *nv);
    if (!nv)
      return false;
    l->v = nv;
    l->cap = cap;
  }
  l->v[l->n++] = (xfer){v, buf};
  return true;
}

static bool int_push(int_list *l, int x) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    int *nv = nn_realloc(l->v, (size_t)cap * sizeof *nv);
    if (!nv)
      return false;
    l->v = nv;
    l->cap = cap;
  }
  l->v[l->n++] = x;
  return true;
}

/* ---- create / release ----------------------------------------------------------------- */

nn_status nn_vk_graph_create(nn_vk_graph **out, nn_error *err) {
  if (!out)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: NULL out");
  *out = NULL;
  nn_status st;
  nn_vk_graph *vg = nn_calloc(1, sizeof *vg);
  if (!vg)
    return nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
  st = nn_vk_ctx_acquire(&vg->ctx, err);
  if (st != NN_OK)
    goto out_graph;
  st = nn_vk_mem_create(vg->ctx, &vg->mem, err);
  if (st != NN_OK)
    goto out_ctx;
  st = nn_vk_exec_create(vg->ctx, &vg->exec, err);
  if (st != NN_OK)
    goto out_mem;
  *out = vg;
  return NN_OK;

out_mem:
  nn_vk_mem_destroy(vg->mem);
out_ctx:
  nn_vk_ctx_release(vg->ctx);
out_graph:
  nn_free(vg);
  return st;
}

/* Free what one build made (the arena is kept for the next build). */
static void release_build(nn_vk_graph *vg) {
  for (int i = 0; i < vg->n_vals; i++) {
    nn_vk_mem_free(vg->mem, &vg->vals[i].own);
    nn_vk_mem_free(vg->mem, &vg->vals[i].stage);
  }
  nn_free(vg->vals);
  vg->vals = NULL;
  vg->n_vals = 0;
  for (int i = 0; i < vg->n_derived; i++)
    nn_vk_mem_free(vg->mem, &vg->derived[i]);
  vg->n_derived = 0;
  for (int i = 0; i < vg->n_groups; i++) {
    nn_free(vg->groups[i].steps.v);
    nn_free(vg->groups[i].pre.v);
    nn_free(vg->groups[i].post.v);
  }
  nn_free(vg->groups);
  vg->groups = NULL;
  vg->n_groups = 0;
  vg->run_in.n = vg->run_out.n = 0;
  nn_vk_mem_free(vg->mem, &vg->mirror);
  vg->host_arena = NULL;
  vg->nodes_vulkan = vg->nodes_cpu = 0;
  vg->fallback[0] = '\0';
  vg->built = false;
}

void nn_vk_graph_destroy(nn_vk_graph *vg) {
  if (!vg)
    return;
  release_build(vg);
  nn_vk_mem_free(vg->mem, &vg->arena);
  nn_free(vg->derived);
  nn_free(vg->run_in.v);
  nn_free(vg->run_out.v);
  /* pipelines and command buffers before the memory they point into */
  nn_vk_exec_destroy(vg->exec);
  nn_vk_mem_destroy(vg->mem);
  nn_vk_ctx_release(vg->ctx);
  nn_free(vg);
}

/* ---- values ------------------------------------------------------------------------- */

static int val_index(const nn_vk_graph *vg, const nn_value *v) {
  const nn_graph *g = vg->g;
  if (v >= g->values && v < g->values + g->n_values)
    return (int)(v - g->values);
  if (vg->plan->extra && v >= vg->plan->extra && v < vg->plan->extra + vg->plan->n_extra)
    return g->n_values + (int)(v - vg->plan->extra);
  return -1;
}

static bool in_arena(const nn_value *v) {
  return !v->known && !v->is_graph_output && v->kind == NN_VAL_INTER && v->first_use >= 0;
}

static home value_home(const nn_value *v) {
  if (v->known)
    return HOME_CONST;
  if (v->kind == NN_VAL_INPUT)
    return HOME_INPUT;
  if (in_arena(v))
    return HOME_ARENA;
  if (v->kind == NN_VAL_INTER && v->is_graph_output)
    return HOME_OUTPUT;
  return HOME_UNKNOWN;
}

/* Device buffer (and staging when it is not host-mapped) for graph I/O. */
static nn_status io_buffers(nn_vk_graph *vg, const nn_value *v, vval *w, nn_error *err) {
  if (w->has_dev)
    return NN_OK;
  VkDeviceSize n = v->nbytes ? v->nbytes : 4;
  nn_status st = nn_vk_mem_alloc(vg->mem, NN_VK_MEM_DEVICE, n, &w->own, err);
  if (st == NN_OK && !w->own.host)
    st = nn_vk_mem_alloc(vg->mem, NN_VK_MEM_HOST, n, &w->stage, err);
  if (st != NN_OK)
    return st;
  w->dev = nn_vk_view(&w->own, 0, v->nbytes);
  w->has_dev = true;
  return NN_OK;
}

/* The mapped buffer the host copies through for a graph I/O value. */
static const nn_vk_buf *io_mapped(const vval *w) { return w->stage.block ? &w->stage : &w->own; }

static nn_status record_copy(nn_vk_graph *vg, const nn_vk_buf *src, VkDeviceSize soff,
                             const nn_vk_buf *dst, VkDeviceSize doff, VkDeviceSize n,
                             nn_error *err) {
  nn_vk_tensor s = nn_vk_view(src, soff, n), d = nn_vk_view(dst, doff, n);
  return nn_vk_exec_copy(vg->exec, &s, &d, err);
}

/* Make v's current contents available to a device step. */
static nn_status ensure_dev(nn_vk_graph *vg, const nn_value *v, vval *w, nn_error *err) {
  nn_status st = NN_OK;
  switch (w->home) {
  case HOME_ARENA:
    if (w->loc == LOC_HOST) {
      st = record_copy(vg, &vg->mirror, v->offset, &vg->arena, v->offset, v->nbytes, err);
      w->loc = LOC_BOTH;
    }
    return st;
  case HOME_CONST:
    if (!w->has_dev) {
      VkDeviceSize n = v->nbytes ? v->nbytes : 4;
      st = nn_vk_mem_alloc(vg->mem, NN_VK_MEM_DEVICE, n, &w->own, err);
      if (st == NN_OK && v->nbytes)
        st = nn_vk_exec_upload(vg->exec, vg->mem, &w->own, 0, v->data, v->nbytes, err);
      if (st != NN_OK)
        return st;
      w->dev = nn_vk_view(&w->own, 0, v->nbytes);
      w->has_dev = true;
      w->loc = LOC_BOTH;
    }
    return NN_OK;
  case HOME_INPUT:
    if (!w->has_dev) {
      st = io_buffers(vg, v, w, err);
      if (st == NN_OK && !xfer_push(&vg->run_in, v, io_mapped(w)))
        st = nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
      if (st == NN_OK && w->stage.block && v->nbytes)
        st = record_copy(vg, &w->stage, 0, &w->own, 0, v->nbytes, err);
      w->loc = LOC_BOTH;
    }
    return st;
  case HOME_OUTPUT:
    if (w->loc == LOC_HOST) {
      /* produced by a CPU step into value->data: that host step copies it
       * into the mapped buffer, this segment moves it to the device */
      st = io_buffers(vg, v, w, err);
      if (st == NN_OK && w->host_group >= 0 &&
          !xfer_push(&vg->groups[w->host_group].post, v, io_mapped(w)))
        st = nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
      if (st == NN_OK && w->stage.block && v->nbytes)
        st = record_copy(vg, &w->stage, 0, &w->own, 0, v->nbytes, err);
      w->loc = LOC_BOTH;
    }
    return st;
  default:
    return nn_error_set(err, NN_ERR_BACKEND, "vulkan: value '%s' has no device home", v->name);
  }
}

/* Make v's current contents available to a CPU step of group gi (copies
 * recorded before the host step). */
static nn_status ensure_host(nn_vk_graph *vg, const nn_value *v, vval *w, int gi, nn_error *err) {
  if (w->loc != LOC_DEV)
    return NN_OK;
  nn_status st = NN_OK;
  if (w->home == HOME_ARENA) {
    st = record_copy(vg, &vg->arena, v->offset, &vg->mirror, v->offset, v->nbytes, err);
  } else if (w->home == HOME_OUTPUT) {
    if (w->stage.block && v->nbytes)
      st = record_copy(vg, &w->own, 0, &w->stage, 0, v->nbytes, err);
    if (st == NN_OK && !xfer_push(&vg->groups[gi].pre, v, io_mapped(w)))
      st = nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
  }
  w->loc = LOC_BOTH;
  return st;
}

/* Device view for a step's output, which the step then owns exclusively. */
static nn_status produce_dev(nn_vk_graph *vg, const nn_value *v, vval *w, nn_error *err) {
  if (w->home == HOME_OUTPUT) {
    nn_status st = io_buffers(vg, v, w, err);
    if (st != NN_OK)
      return st;
  } else if (w->home != HOME_ARENA) {
    return nn_error_set(err, NN_ERR_BACKEND, "vulkan: step output '%s' is not in the arena",
                        v->name);
  }
  /* on unified memory the mirror is the arena itself */
  w->loc = (w->home == HOME_ARENA && !vg->mirror.block) ? LOC_BOTH : LOC_DEV;
  return NN_OK;
}

nn_vk_exec *nn_vk_rec_exec(nn_vk_rec *r) { return r->vg->exec; }

nn_status nn_vk_rec_value(nn_vk_rec *r, const nn_value *v, nn_vk_tensor *t, nn_error *err) {
  nn_vk_graph *vg = r->vg;
  int i = v ? val_index(vg, v) : -1;
  if (i < 0)
    return nn_error_set(err, NN_ERR_BACKEND, "vulkan: value outside the plan");
  vval *w = &vg->vals[i];
  if (w->home == HOME_ARENA) {
    *t = nn_vk_view(&vg->arena, v->offset, v->nbytes);
    return NN_OK;
  }
  if (!w->has_dev)
    return nn_error_set(err, NN_ERR_BACKEND, "vulkan: value '%s' is not on the device", v->name);
  *t = w->dev;
  return NN_OK;
}

nn_status nn_vk_rec_const(nn_vk_rec *r, const void *data, size_t bytes, nn_vk_tensor *t,
                          nn_error *err) {
  nn_vk_graph *vg = r->vg;
  if (vg->n_derived == vg->cap_derived) {
    int cap = vg->cap_derived ? vg->cap_derived * 2 : 8;
    nn_vk_buf *nd = nn_realloc(vg->derived, (size_t)cap * sizeof *nd);
    if (!nd)
      return nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
    vg->derived = nd;
    vg->cap_derived = cap;
  }
  nn_vk_buf *b = &vg->derived[vg->n_derived];
  nn_status st = nn_vk_mem_alloc(vg->mem, NN_VK_MEM_DEVICE, bytes ? bytes : 4, b, err);
  if (st != NN_OK)
    return st;
  vg->n_derived++;
  st = nn_vk_exec_upload(vg->exec, vg->mem, b, 0, data, bytes, err);
  if (st != NN_OK)
    return st;
  *t = nn_vk_view(b, 0, bytes);
  return NN_OK;
}

/* ---- host steps ---------------------------------------------------------------------- */

static nn_status group_run(void *arg, nn_error *err) {
  group *gr = arg;
  nn_vk_graph *vg = gr->vg;
  nn_status st;
  for (int i = 0; i < gr->pre.n; i++) {
    const xfer *x = &gr->pre.v[i];
    st = nn_vk_mem_invalidate(vg->mem, x->buf, 0, x->v->nbytes, err);
    if (st != NN_OK)
      return st;
    if (x->v->nbytes)
      memcpy(x->v->data, x->buf->host, x->v->nbytes);
  }
  nn_ctx *c = vg->cpu;
  for (int i = 0; i < gr->steps.n; i++) {
    nn_node *n = &vg->g->nodes[gr->steps.v[i]];
    c->node = n;
    st = n->kern->run(c, n);
    if (st != NN_OK) {
      if (c->err && c->err->msg[0] == '\0')
        nn_fail(c, st, "kernel failed (%s)", nn_status_str(st));
      if (err && c->err && err != c->err)
        *err = *c->err;
      c->node = NULL;
      return st;
    }
  }
  c->node = NULL;
  for (int i = 0; i < gr->post.n; i++) {
    const xfer *x = &gr->post.v[i];
    if (x->v->nbytes)
      memcpy(x->buf->host, x->v->data, x->v->nbytes);
    st = nn_vk_mem_flush(vg->mem, x->buf, 0, x->v->nbytes, err);
    if (st != NN_OK)
      return st;
  }
  return NN_OK;
}

/* Close the pending CPU group: downloads its inputs need, then the host
 * step; its outputs now live on the host. */
static nn_status flush_group(nn_vk_graph *vg, int gi, nn_error *err) {
  group *gr = &vg->groups[gi];
  nn_graph *g = vg->g;
  nn_status st;
  for (int i = 0; i < gr->steps.n; i++) {
    const nn_node *n = &g->nodes[gr->steps.v[i]];
    for (int k = 0; k < n->n_in; k++) {
      if (!n->x[k])
        continue;
      int vi = val_index(vg, n->x[k]);
      if (vi >= 0 && (st = ensure_host(vg, n->x[k], &vg->vals[vi], gi, err)) != NN_OK)
        return st;
    }
    for (int k = 0; k < n->n_out; k++) {
      if (!n->y[k])
        continue;
      int vi = val_index(vg, n->y[k]);
      if (vi < 0)
        continue;
      vval *w = &vg->vals[vi];
      /* unified memory: the host arena is the device arena */
      w->loc = (w->home == HOME_ARENA && !vg->mirror.block) ? LOC_BOTH : LOC_HOST;
      w->host_group = gi;
    }
  }
  return nn_vk_exec_host_step(vg->exec, group_run, gr, err);
}

/* ---- build ------------------------------------------------------------------------- */

static void note_fallback(nn_vk_graph *vg, const nn_node *n) {
  size_t len = strlen(vg->fallback);
  if (strstr(vg->fallback, n->op_type) || len + strlen(n->op_type) + 3 >= sizeof vg->fallback)
    return;
  snprintf(vg->fallback + len, sizeof vg->fallback - len, "%s%s", len ? ", " : "", n->op_type);
}

nn_status nn_vk_graph_build(nn_vk_graph *vg, nn_graph *g, nn_plan *plan, const bool *on_dev,
                            nn_ctx *cpu, nn_error *err) {
  nn_status st = NN_OK;
  release_build(vg);
  vg->g = g;
  vg->plan = plan;
  vg->cpu = cpu;
  vg->n_vals = g->n_values + plan->n_extra;
  vg->vals = nn_calloc((size_t)vg->n_vals + 1, sizeof *vg->vals);
  vg->groups = nn_calloc((size_t)plan->n_steps + 1, sizeof *vg->groups);
  if (!vg->vals || !vg->groups) {
    st = nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
    goto out_release;
  }
  for (int i = 0; i < vg->n_vals; i++) {
    const nn_value *v = i < g->n_values ? &g->values[i] : &plan->extra[i - g->n_values];
    vval *w = &vg->vals[i];
    w->home = value_home(v);
    w->host_group = -1;
    w->loc = (w->home == HOME_CONST || w->home == HOME_INPUT) ? LOC_HOST : LOC_NONE;
  }

  /* the partition (partition.c) decided; count and name the host steps */
  for (int s = 0; s < plan->n_steps; s++) {
    const nn_node *n = &g->nodes[plan->steps[s]];
    if (on_dev[s]) {
      vg->nodes_vulkan++;
    } else {
      vg->nodes_cpu++;
      note_fallback(vg, n);
    }
  }

  /* the arena: device memory, plus host memory for CPU steps */
  if (plan->arena_bytes > 0 && (!vg->arena.block || vg->arena.size < plan->arena_bytes)) {
    nn_vk_mem_free(vg->mem, &vg->arena);
    st = nn_vk_mem_alloc(vg->mem, NN_VK_MEM_DEVICE, plan->arena_bytes, &vg->arena, err);
    if (st != NN_OK)
      goto out_release;
  }
  if (vg->nodes_cpu > 0) {
    /* CPU kernels form ws + 0 even without scratch: never bind NULL */
    static _Alignas(NN_ALIGN) unsigned char empty_arena[NN_ALIGN];
    if (plan->arena_bytes == 0) {
      vg->host_arena = empty_arena;
    } else if (vg->arena.host) {
      vg->host_arena = vg->arena.host;
    } else {
      st = nn_vk_mem_alloc(vg->mem, NN_VK_MEM_HOST, plan->arena_bytes, &vg->mirror, err);
      if (st != NN_OK)
        goto out_release;
      vg->host_arena = vg->mirror.host;
    }
    nn_plan_bind_arena(g, plan, vg->host_arena);
  }

  /* record */
  nn_vk_rec rec = {vg};
  int pending = -1;   /* open CPU group */
  st = nn_vk_exec_begin(vg->exec, err);
  if (st != NN_OK)
    goto out_release;
  for (int s = 0; s < plan->n_steps; s++) {
    nn_node *n = &g->nodes[plan->steps[s]];
    if (!on_dev[s]) {
      if (pending < 0) {
        pending = vg->n_groups++;
        vg->groups[pending].vg = vg;
      }
      if (!int_push(&vg->groups[pending].steps, plan->steps[s])) {
        st = nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
        goto out_release;
      }
      continue;
    }
    if (pending >= 0) {
      st = flush_group(vg, pending, err);
      if (st != NN_OK)
        goto out_release;
      pending = -1;
    }
    for (int k = 0; k < n->n_in; k++) {
      if (!n->x[k])
        continue;
      int vi = val_index(vg, n->x[k]);
      if (vi < 0) {
        st = nn_error_set(err, NN_ERR_BACKEND, "vulkan: input of '%s' outside the plan", n->name);
        goto out_release;
      }
      st = ensure_dev(vg, n->x[k], &vg->vals[vi], err);
      if (st != NN_OK)
        goto out_release;
    }
    for (int k = 0; k < n->n_out; k++) {
      if (!n->y[k])
        continue;
      int vi = val_index(vg, n->y[k]);
      if (vi < 0) {
        st = nn_error_set(err, NN_ERR_BACKEND, "vulkan: output of '%s' outside the plan", n->name);
        goto out_release;
      }
      st = produce_dev(vg, n->y[k], &vg->vals[vi], err);
      if (st != NN_OK)
        goto out_release;
    }
    st = nn_vk_op_find(n)->record(&rec, n, err);
    if (st != NN_OK) {
      char msg[sizeof err->msg];
      snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
      st = nn_error_set(err, st, "node '%s' (%s) on vulkan: %s", n->name, n->op_type, msg);
      goto out_release;
    }
  }
  if (pending >= 0) {
    st = flush_group(vg, pending, err);
    if (st != NN_OK)
      goto out_release;
  }
  /* graph outputs computed on the device go back to value->data */
  for (int i = 0; i < g->n_outputs; i++) {
    const nn_value *v = &g->values[g->outputs[i]];
    vval *w = &vg->vals[g->outputs[i]];
    if (w->home != HOME_OUTPUT || w->loc != LOC_DEV || w->run_download)
      continue;
    if (w->stage.block && v->nbytes) {
      st = record_copy(vg, &w->own, 0, &w->stage, 0, v->nbytes, err);
      if (st != NN_OK)
        goto out_release;
    }
    if (!xfer_push(&vg->run_out, v, io_mapped(w))) {
      st = nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
      goto out_release;
    }
    w->run_download = true;
  }
  st = nn_vk_exec_end(vg->exec, err);
  if (st != NN_OK)
    goto out_release;
  if (vg->nodes_cpu > 0 && !vg->logged) {
    /* once per session: which ops the device lacks */
    nn_log(NN_LOG_INFO, "vulkan: %d of %d nodes run on the CPU (%s)", vg->nodes_cpu,
            vg->nodes_cpu + vg->nodes_vulkan, vg->fallback);
    vg->logged = true;
  }
  vg->built = true;
  return NN_OK;

out_release:
  release_build(vg);
  return st;
}

/* ---- run --------------------------------------------------------------------------------- */

nn_status nn_vk_graph_run(nn_vk_graph *vg, nn_error *err) {
  if (!vg->built)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: the graph is not built");
  nn_status st;
  for (int i = 0; i < vg->run_in.n; i++) {
    const xfer *x = &vg->run_in.v[i];
    if (!x->v->nbytes)
      continue;
    if (!x->v->data)
      return nn_error_set(err, NN_ERR_MISSING_INPUT, "vulkan: input '%s' has no data", x->v->name);
    memcpy(x->buf->host, x->v->data, x->v->nbytes);
    st = nn_vk_mem_flush(vg->mem, x->buf, 0, x->v->nbytes, err);
    if (st != NN_OK)
      return st;
  }
  st = nn_vk_exec_run(vg->exec, err);
  if (st != NN_OK)
    return st;
  for (int i = 0; i < vg->run_out.n; i++) {
    const xfer *x = &vg->run_out.v[i];
    if (!x->v->nbytes)
      continue;
    st = nn_vk_mem_invalidate(vg->mem, x->buf, 0, x->v->nbytes, err);
    if (st != NN_OK)
      return st;
    memcpy(x->v->data, x->buf->host, x->v->nbytes);
  }
  vg->runs++;
  return NN_OK;
}

bool nn_vk_graph_supports(const nn_vk_graph *vg, const nn_node *n) {
  return nn_vk_op_supported(vg->ctx, n);
}

bool nn_vk_graph_on_cpu_device(const nn_vk_graph *vg) {
  return vg->ctx->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

void nn_vk_graph_get_stats(const nn_vk_graph *vg, nn_vk_graph_stats *st) {
  memset(st, 0, sizeof *st);
  nn_vk_exec_stats es;
  nn_vk_exec_get_stats(vg->exec, &es);
  nn_vk_mem_stats ms;
  nn_vk_mem_get_stats(vg->mem, &ms);
  st->nodes_vulkan = vg->nodes_vulkan;
  st->nodes_cpu = vg->nodes_cpu;
  st->segments = es.segments;
  st->dispatches = es.dispatches;
  st->barriers = es.barriers;
  st->pipelines = es.pipelines;
  st->device_bytes = ms.device_bytes;
  st->staging_bytes = ms.staging_bytes;
  st->runs = vg->runs;
}

const char *nn_vk_graph_fallback(const nn_vk_graph *vg) { return vg->fallback; }
