/* session.c - create / run / dispose, pre-allocated I/O, memory stats.
 *
 * Life of a session:
 *   create   load + validate the graph, pre-allocate inputs with static
 *            shapes, and plan right away when every required input shape is
 *            known (so unsupported ops/shapes fail at creation);
 *   run      re-plan only when an input shape, the set of fed optional inputs
 *            or the value of a shape-deciding input changed; otherwise only
 *            pointer updates and the kernels: no heap allocation;
 *   dispose  everything released; the handle answers NN_ERR_DISPOSED.
 *
 * The session knows no backend: it plans, asks partition.c which steps the
 * chosen backend takes, and drives it through backend.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "graph.h"
#include "include/nn_file.h"
#include "knobs.h"
#include "nn_limits.h"
#include "nn_strings.h"
#include "threadpool.h"

typedef struct in_slot {
  int value;                 /* graph value index */
  bool has_default;
  bool fed;                  /* the caller provides it this run */
  bool bound;                /* zero-copy from caller memory */
  bool need_value;           /* its value decides shapes: snapshot + compare */
  nn_dtype dtype;
  int rank;
  int64_t dims[NN_MAX_RANK]; /* current shape (-1 = dynamic, not yet set) */
  int def_rank;
  int64_t def_dims[NN_MAX_RANK];
  nn_tensor tensor;          /* the pre-allocated tensor handed out */
  void *own;                 /* its storage (nn_aligned_alloc), own_cap bytes */
  size_t own_cap;
  nn_tensor bound_t;         /* the caller's tensor when bound */
  void *snap;                /* plan-time copy of a shape-deciding input */
  size_t snap_cap, snap_bytes;
  /* a sequence or optional input (vtype not NN_VT_TENSOR): the fed items'
   * header (box, its items array grown to items_cap, never shrunk) and
   * their bytes in own, in the box layout (each item 64-byte aligned) */
  nn_vtype vtype;
  bool opt_seq;              /* an optional declared to hold a sequence */
  bool box_need;             /* its value decides shapes: re-plan on every feed */
  nn_box box;
  nn_tensor *items;
  int items_cap;
} in_slot;

typedef struct out_slot {
  int value;
  nn_tensor tensor;
  void *arena_data;          /* its slot in the arena (CPU: the plan's outputs_in_arena), or NULL */
  void *own;                 /* else its storage (nn_aligned_alloc), own_cap bytes */
  size_t own_cap;
  bool bound;
  nn_tensor bound_t;
} out_slot;

struct nn_session {
  bool disposed;
  nn_error err;
  nn_options opt;
  nn_graph *g;
  nn_plan plan;
  bool planned;
  bool need_plan;
  bool *on_device;           /* per plan step: the backend's own kernels take it */
  int on_device_cap;
  int n_in, n_out;
  in_slot *in;
  out_slot *out;
  nn_ctx ctx;
  uint64_t runs;
  size_t peak;
  nn_backend backend;
  const nn_backend_iface *be; /* the backend executing the plan */
  void *be_state;            /* its instance, owned */
};

#define CHECK_SESSION(s)                                                                  \
  do {                                                                                    \
    if (!(s))                                                                             \
      return NN_ERR_INVALID_ARG;                                                          \
    if ((s)->disposed)                                                                    \
      return nn_error_set(&(s)->err, NN_ERR_DISPOSED, "the session was disposed");        \
    (s)->err.msg[0] = '\0';                                                               \
    (s)->err.status = NN_OK;                                                              \
  } while (0)

void nn_options_init(nn_options *opt) {
  memset(opt, 0, sizeof *opt);
  opt->backend = NN_BACKEND_CPU;
  opt->threads = 1;
  opt->limits.max_rank = NN_MAX_RANK;
  opt->limits.max_tensor_elems = NN_LIMIT_TENSOR_ELEMS;
  opt->limits.max_weights_bytes = NN_LIMIT_WEIGHTS_BYTES;
  opt->limits.max_arena_bytes = NN_LIMIT_ARENA_BYTES;
  opt->limits.max_nodes = NN_LIMIT_NODES;
  opt->limits.max_graph_depth = NN_LIMIT_GRAPH_DEPTH;
  opt->limits.max_model_bytes = NN_LIMIT_MODEL_BYTES;
}

static void limits_fill(nn_limits *l) {
  nn_options d;
  nn_options_init(&d);
  if (l->max_rank <= 0 || l->max_rank > NN_MAX_RANK) l->max_rank = d.limits.max_rank;
  if (l->max_tensor_elems <= 0) l->max_tensor_elems = d.limits.max_tensor_elems;
  if (l->max_weights_bytes <= 0) l->max_weights_bytes = d.limits.max_weights_bytes;
  if (l->max_arena_bytes <= 0) l->max_arena_bytes = d.limits.max_arena_bytes;
  if (l->max_nodes <= 0) l->max_nodes = d.limits.max_nodes;
  if (l->max_graph_depth <= 0) l->max_graph_depth = d.limits.max_graph_depth;
  if (l->max_model_bytes <= 0) l->max_model_bytes = d.limits.max_model_bytes;
}

static size_t session_io_bytes(const nn_session *s) {
  size_t n = 0;
  for (int i = 0; i < s->n_in; i++)
    n += s->in[i].own_cap + s->in[i].snap_cap;
  for (int i = 0; i < s->n_out; i++)
    n += s->out[i].own_cap;
  return n;
}

static void session_track_peak(nn_session *s) {
  nn_backend_stats bs;
  s->be->stats(s->be_state, &bs);
  size_t total = s->g->weights_bytes + s->plan.folded_bytes + session_io_bytes(s) +
                 nn_strstore_bytes(s->ctx.strings) + bs.host_bytes +
                 bs.weight_bytes + bs.device_bytes + bs.staging_bytes;
  if (total > s->peak)
    s->peak = total;
}

static bool shape_static(int rank, const int64_t *dims) {
  if (rank < 0)
    return false;
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0)
      return false;
  return true;
}

static void shape_str(int rank, const int64_t *dims, char *buf, size_t len) {
  size_t off = 0;
  buf[0] = '\0';
  if (rank < 0) {
    snprintf(buf, len, "(unknown)");
    return;
  }
  if (rank == 0) {
    snprintf(buf, len, "(scalar)");
    return;
  }
  for (int i = 0; i < rank && off < len; i++)
    off += (size_t)snprintf(buf + off, len - off, dims[i] < 0 ? "%s?" : "%s%lld", i ? "x" : "",
                            (long long)dims[i]);
}

/* Bytes of a tensor with this shape, with overflow and limit checks. */
static nn_status shape_bytes(nn_session *s, const char *name, nn_dtype dt, int rank, const int64_t *dims,
                             size_t *out) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0)
      return nn_error_set(&s->err, NN_ERR_SHAPE, "input '%s' has a negative dimension", name);
    if (nn_mul_overflow_i64(n, dims[i], &n))
      return nn_error_set(&s->err, NN_ERR_LIMIT, "input '%s': element count overflows", name);
  }
  if (n > s->opt.limits.max_tensor_elems)
    return nn_error_set(&s->err, NN_ERR_LIMIT, "input '%s' has %lld elements, more than the limit %lld",
                        name, (long long)n, (long long)s->opt.limits.max_tensor_elems);
  if (nn_mul_overflow_size((size_t)n, nn_dtype_size(dt), out))
    return nn_error_set(&s->err, NN_ERR_LIMIT, "input '%s': byte size overflows", name);
  return NN_OK;
}

/* Input, snapshot and output buffers are each bounded by max_tensor_elems,
 * but a model may declare thousands of them: their total is held to the
 * arena limit too, checked before growing one from old_cap to new_bytes. */
static nn_status io_budget(nn_session *s, size_t old_cap, size_t new_bytes, const char *name) {
  size_t total = session_io_bytes(s) - old_cap;
  if (new_bytes > (uint64_t)s->opt.limits.max_arena_bytes ||
      total > (uint64_t)s->opt.limits.max_arena_bytes - new_bytes)
    return nn_error_set(&s->err, NN_ERR_LIMIT,
                        "'%s': the session's input and output buffers would exceed the limit of %lld "
                        "bytes", name, (long long)s->opt.limits.max_arena_bytes);
  return NN_OK;
}

/* Make the pre-allocated buffer of an input fit its current shape. */
static nn_status in_slot_alloc(nn_session *s, in_slot *sl) {
  const char *name = s->g->values[sl->value].name;
  size_t nbytes;
  nn_status st = shape_bytes(s, name, sl->dtype, sl->rank, sl->dims, &nbytes);
  if (st != NN_OK)
    return st;
  if (nbytes > sl->own_cap || !sl->own) {
    if ((st = io_budget(s, sl->own_cap, nbytes, name)) != NN_OK)
      return st;
    void *p = nn_aligned_alloc(nbytes ? nbytes : 1);
    if (!p)
      return nn_error_set(&s->err, NN_ERR_NOMEM, "out of memory for input '%s' (%zu bytes)", name, nbytes);
    nn_aligned_free(sl->own);
    sl->own = p;
    sl->own_cap = nbytes;
    memset(sl->own, 0, nbytes);
  }
  sl->tensor.dtype = sl->dtype;
  sl->tensor.rank = sl->rank;
  memcpy(sl->tensor.dims, sl->dims, sizeof sl->dims);
  sl->tensor.data = sl->own;
  sl->tensor.nbytes = nbytes;
  return NN_OK;
}

/* Does `rank/dims` agree with the model's declaration of the input? */
static nn_status check_decl_shape(nn_session *s, const nn_value *v, int rank, const int64_t *dims) {
  if (rank < 0 || rank > s->opt.limits.max_rank)
    return nn_error_set(&s->err, NN_ERR_SHAPE, "input '%s': rank %d is out of range", v->name, rank);
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0)
      return nn_error_set(&s->err, NN_ERR_SHAPE, "input '%s': dimension %d is negative", v->name, i);
  if (v->decl_rank < 0)
    return NN_OK;
  bool ok = v->decl_rank == rank;
  for (int i = 0; ok && i < rank; i++)
    if (v->decl_dims[i] >= 0 && v->decl_dims[i] != dims[i])
      ok = false;
  if (!ok) {
    char want[128], got[128];
    shape_str(v->decl_rank, v->decl_dims, want, sizeof want);
    shape_str(rank, dims, got, sizeof got);
    return nn_error_set(&s->err, NN_ERR_SHAPE, "input '%s' expects shape %s, got %s", v->name, want, got);
  }
  return NN_OK;
}

static bool dims_equal(int ra, const int64_t *a, int rb, const int64_t *b) {
  if (ra != rb)
    return false;
  for (int i = 0; i < ra; i++)
    if (a[i] != b[i])
      return false;
  return true;
}

/* ---- sequence and optional inputs ---------------------------------------------- */
static size_t box_layout_bytes(const nn_box *b) {
  size_t t = 0;
  for (int i = 0; i < b->n; i++)
    t += nn_align_up(b->items[i].nbytes, NN_ALIGN);
  return t;
}

/* The fed items as the value of the graph input (a boxed value). */
static void box_slot_to_value(in_slot *sl, nn_value *v) {
  size_t total = box_layout_bytes(&sl->box);
  v->vtype = sl->box.vtype;
  v->box = &sl->box;
  v->dtype = NN_DTYPE_UINT8;
  v->rank = 1;
  memset(v->dims, 0, sizeof v->dims);
  v->dims[0] = (int64_t)total;
  v->numel = (int64_t)total;
  v->nbytes = total;
  v->known = sl->box_need;
  v->data = sl->own;
}

/* ---- planning ---------------------------------------------------------------- */
static const void *in_slot_data(const in_slot *sl) {
  return sl->bound ? sl->bound_t.data : sl->own;
}

/* The snapshot of a shape-deciding input: its bytes, or for strings its
 * views and a copy of the bytes they show (the caller may rewrite those
 * behind the same views), compared by content. */
static size_t snap_need(const in_slot *sl, const nn_value *v) {
  size_t n = v->nbytes;
  if (sl->dtype == NN_DTYPE_STRING) {
    const nn_string *x = in_slot_data(sl);
    for (int64_t i = 0; i < v->numel; i++)
      n += x[i].len;
  }
  return n;
}

static void snap_take(in_slot *sl, const nn_value *v) {
  memcpy(sl->snap, in_slot_data(sl), v->nbytes);
  if (sl->dtype != NN_DTYPE_STRING)
    return;
  nn_string *x = sl->snap;
  char *bytes = (char *)sl->snap + v->nbytes;
  for (int64_t i = 0; i < v->numel; i++) {
    if (x[i].len)
      memcpy(bytes, x[i].data, x[i].len);
    x[i].data = x[i].len ? bytes : NULL;
    bytes += x[i].len;
  }
}

static bool snap_differs(const in_slot *sl) {
  size_t nbytes = sl->bound ? sl->bound_t.nbytes : sl->tensor.nbytes;
  if (sl->snap_bytes != nbytes)
    return true;
  if (sl->dtype != NN_DTYPE_STRING)
    return memcmp(sl->snap, in_slot_data(sl), nbytes) != 0;
  const nn_string *a = sl->snap, *b = in_slot_data(sl);
  for (size_t i = 0; i < nbytes / sizeof(nn_string); i++)
    if (!nn_str_eq(&a[i], &b[i]))
      return true;
  return false;
}

static nn_status session_plan(nn_session *s) {
  nn_graph *g = s->g;
  nn_status st;
  s->planned = false;
  nn_plan_clear(g, &s->plan);
  nn_strstore_clear(s->ctx.strings); /* the strings of the old plan's folds */
  if (s->be->before_plan && (st = s->be->before_plan(s->be_state, g, &s->err)) != NN_OK)
    return st;
  for (int i = 0; i < s->n_in; i++) {
    in_slot *sl = &s->in[i];
    nn_value *v = &g->values[sl->value];
    if (sl->vtype != NN_VT_TENSOR) {
      if (!sl->fed)
        return nn_error_set(&s->err, NN_ERR_MISSING_INPUT,
                            "input '%s' was not given (nn_session_set_input_items)", v->name);
      box_slot_to_value(sl, v);
      continue;
    }
    if (sl->fed) {
      v->dtype = sl->dtype;
      v->rank = sl->rank;
      memcpy(v->dims, sl->dims, sizeof v->dims);
      v->numel = nn_dims_numel(sl->rank, sl->dims);
      v->nbytes = (size_t)v->numel * nn_dtype_size(sl->dtype);
      v->known = false;
      v->data = NULL;
      if (sl->need_value) {
        size_t need = snap_need(sl, v);
        if (need > sl->snap_cap || !sl->snap) {
          if ((st = io_budget(s, sl->snap_cap, need, v->name)) != NN_OK)
            return st;
          void *p = nn_aligned_alloc(need ? need : 1);
          if (!p)
            return nn_error_set(&s->err, NN_ERR_NOMEM, "out of memory");
          nn_aligned_free(sl->snap);
          sl->snap = p;
          sl->snap_cap = need;
        }
        snap_take(sl, v);
        sl->snap_bytes = v->nbytes;
        v->data = sl->snap;
        v->known = true;
      }
    } else if (sl->has_default) {
      v->dtype = sl->dtype;
      v->rank = sl->def_rank;
      memcpy(v->dims, sl->def_dims, sizeof v->dims);
      v->numel = nn_dims_numel(v->rank, v->dims);
      v->nbytes = (size_t)v->numel * nn_dtype_size(v->dtype);
      v->data = v->const_data;
      v->known = true;
    } else {
      return nn_error_set(&s->err, NN_ERR_MISSING_INPUT,
                          "input '%s' was neither filled (nn_session_input_tensor) nor bound", v->name);
    }
  }
  s->err.msg[0] = '\0';
  /* the CPU arena is host memory the outputs can be read from: planned
   * there, a large output reuses intermediates' memory (a segmentation
   * map is often the largest tensor of its model) */
  s->plan.outputs_in_arena = s->be == &nn_backend_cpu;
  st = nn_plan_build(g, &s->plan, &s->opt.limits, &s->ctx, &s->err);
  if (st != NN_OK)
    goto out_clear;
  if (s->plan.n_steps + 1 > s->on_device_cap) {
    bool *p = nn_calloc((size_t)s->plan.n_steps + 1, sizeof *p);
    if (!p) {
      st = nn_error_set(&s->err, NN_ERR_NOMEM, "out of memory");
      goto out_clear;
    }
    nn_free(s->on_device);
    s->on_device = p;
    s->on_device_cap = s->plan.n_steps + 1;
  }
  nn_partition_steps(s->be, s->be_state, g, &s->plan, s->on_device);
  /* the backend places the arena (and binds it for the steps run on the
   * host), re-lays out the weights its kernels want in their own layout */
  st = s->be->build(s->be_state, g, &s->plan, s->on_device, &s->ctx, &s->err);
  if (st != NN_OK)
    goto out_clear;
  for (int i = 0; i < s->n_out; i++) {
    out_slot *sl = &s->out[i];
    nn_value *v = &g->values[sl->value];
    sl->arena_data = NULL;
    if (s->plan.outputs_in_arena && v->is_graph_output && v->first_use >= 0 && !v->known &&
        v->kind == NN_VAL_INTER) {
      sl->arena_data = v->data; /* bound by the backend's build */
      nn_aligned_free(sl->own);
      sl->own = NULL;
      sl->own_cap = 0;
    } else if (v->nbytes > sl->own_cap || !sl->own) {
      if ((st = io_budget(s, sl->own_cap, v->nbytes, v->name)) != NN_OK)
        goto out_clear;
      void *p = nn_aligned_alloc(v->nbytes ? v->nbytes : 1);
      if (!p) {
        st = nn_error_set(&s->err, NN_ERR_NOMEM, "out of memory for output '%s'", v->name);
        goto out_clear;
      }
      nn_aligned_free(sl->own);
      sl->own = p;
      sl->own_cap = v->nbytes;
    }
    sl->tensor.dtype = v->dtype;
    sl->tensor.rank = v->rank;
    memcpy(sl->tensor.dims, v->dims, sizeof v->dims);
    sl->tensor.nbytes = v->nbytes;
    sl->tensor.data = sl->arena_data ? sl->arena_data : sl->own;
  }
  s->planned = true;
  s->need_plan = false;
  nn_strstore_mark(s->ctx.strings); /* strings folded at plan time outlive the runs */
  session_track_peak(s);
  return NN_OK;

out_clear:
  nn_plan_clear(g, &s->plan);
  return st;
}

/* ---- creation ------------------------------------------------------------------ */
/* Where the model comes from: bytes in memory (data, size), or a file open
 * on fd (fd >= 0; fsize its size, path its name), which the loader reads
 * without ever holding the whole file next to the weights
 * (nn_graph_load_fd).  The graph keeps what it needs, so planning (weight
 * packing, folding) runs without the file's bytes resident. */
typedef struct model_src {
  const void *data;
  size_t size;
  int fd;
  int64_t fsize;
  const char *path;
} model_src;

static nn_status session_create(const model_src *src, const char *base_dir, const nn_options *opt,
                                nn_session **out, nn_error *err) {
  nn_status st;
  nn_graph *g = NULL;
  nn_session *s = NULL;
  bool *need = NULL;
  nn_options o;
  if (opt)
    o = *opt;
  else
    nn_options_init(&o);
  limits_fill(&o.limits);
  if (o.threads < 1)
    o.threads = 1;
  nn_backend backend = o.backend;
  if (backend == NN_BACKEND_AUTO && !nn_backend_vulkan())
    backend = NN_BACKEND_CPU;
  if (o.threads > 256)
    st = nn_error_set(err, NN_ERR_INVALID_ARG, "threads must be between 1 and 256, got %d", o.threads);
  else if (backend == NN_BACKEND_VULKAN && !nn_backend_vulkan())
    st = nn_error_set(err, NN_ERR_UNSUPPORTED, "this build has no Vulkan backend");
  else if (backend != NN_BACKEND_CPU && backend != NN_BACKEND_VULKAN && backend != NN_BACKEND_AUTO)
    st = nn_error_set(err, NN_ERR_INVALID_ARG, "unknown backend %d", (int)o.backend);
  else
    st = NN_OK;
  if (st != NN_OK) {
    if (src->fd >= 0)
      close(src->fd);   /* the loader would have */
    return st;
  }

  st = src->fd >= 0 ? nn_graph_load_fd(src->fd, src->fsize, src->path, base_dir, &o.limits, &g, err)
                     : nn_graph_load(src->data, src->size, base_dir, &o.limits, &g, err);
  if (st != NN_OK)
    return st;
  st = nn_graph_finalize(g, &o.limits, nn_kernel_find, err);
  if (st != NN_OK)
    goto out_free_graph;
  st = nn_graph_simplify(g, nn_kernel_find, err);
  if (st != NN_OK)
    goto out_free_graph;

  s = nn_calloc(1, sizeof *s);
  need = nn_calloc((size_t)g->n_values + 1, sizeof(bool));
  if (!s || !need) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    goto out_free_session;
  }
  s->g = g;
  s->opt = o;
  s->opt.base_dir = NULL; /* not owned; only the loader needed it */
  /* vulkan: no device is an error; auto: no device means the CPU */
  if (backend == NN_BACKEND_VULKAN || backend == NN_BACKEND_AUTO) {
    const nn_backend_iface *dev = nn_backend_vulkan();
    nn_error verr = {0};
    st = dev->create(&s->be_state, &verr);
    if (st == NN_OK && backend == NN_BACKEND_AUTO && dev->is_software &&
        dev->is_software(s->be_state) && !nn_knobs().vulkan_device) {
      /* a CPU Vulkan implementation (lavapipe) is slower than our own CPU
       * kernels: auto means "a GPU when there is one" */
      dev->destroy(s->be_state);
      s->be_state = NULL;
      st = NN_ERR_NO_DEVICE;
    }
    if (st == NN_OK) {
      backend = dev->kind;
      s->be = dev;
    } else if (backend == NN_BACKEND_AUTO) {
      backend = NN_BACKEND_CPU;
    } else {
      nn_error_set(err, st, "%s", verr.msg);
      goto out_free_session;
    }
  }
  if (!s->be) {
    s->be = &nn_backend_cpu;
    if ((st = s->be->create(&s->be_state, err)) != NN_OK) {
      s->be = NULL;
      goto out_free_session;
    }
  }
  s->backend = backend;
  g->fusions = s->be->fusions;   /* what the plan may fuse for this backend's kernels */
  if ((g->fusions & NN_FUSE_QDQ) && (st = nn_graph_fuse_qdq(g, nn_kernel_find, err)) != NN_OK)
    goto out_free_session;
  s->ctx.err = &s->err;
  s->ctx.limits = &s->opt.limits;
  s->ctx.threads = o.threads;
  if (nn_strstore_create(0, &s->ctx.strings) != NN_OK) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    goto out_free_session;
  }
  if (nn_threadpool_create(o.threads, &s->ctx.pool) != NN_OK) {
    st = nn_error_set(err, NN_ERR_NOMEM, "cannot start %d worker threads", o.threads);
    goto out_free_session;
  }
  s->n_in = g->n_inputs;
  s->n_out = g->n_outputs;
  s->in = nn_calloc((size_t)s->n_in + 1, sizeof(in_slot));
  s->out = nn_calloc((size_t)s->n_out + 1, sizeof(out_slot));
  if (!s->in || !s->out) {
    st = nn_error_set(err, NN_ERR_NOMEM, "out of memory");
    goto out_free_session;
  }
  nn_plan_value_needs(g, need);
  bool can_plan = true;
  for (int i = 0; i < s->n_in; i++) {
    in_slot *sl = &s->in[i];
    nn_value *v = &g->values[g->inputs[i]];
    sl->value = g->inputs[i];
    sl->has_default = v->has_default;
    sl->need_value = need[sl->value];
    if (v->decl_vtype != NN_VT_TENSOR && !v->has_default) {
      /* a sequence or optional: fed whole by nn_session_set_input_items */
      sl->vtype = v->decl_vtype;
      sl->opt_seq = v->decl_opt_seq;
      sl->box_need = sl->need_value;
      sl->need_value = false;
      sl->dtype = v->decl_dtype;
      sl->rank = -1;
      can_plan = false;
      continue;
    }
    sl->dtype = v->has_default ? v->dtype : v->decl_dtype;
    if (v->has_default) {
      sl->def_rank = v->rank;
      memcpy(sl->def_dims, v->dims, sizeof v->dims);
      sl->rank = v->rank;
      memcpy(sl->dims, v->dims, sizeof v->dims);
    } else {
      sl->rank = v->decl_rank;
      memcpy(sl->dims, v->decl_dims, sizeof v->dims);
      if (shape_static(sl->rank, sl->dims)) {
        st = in_slot_alloc(s, sl);
        if (st != NN_OK) {
          nn_error_set(err, st, "%s", s->err.msg);
          goto out_free_session;
        }
      }
      if (!shape_static(sl->rank, sl->dims) || sl->need_value)
        can_plan = false;
    }
  }
  for (int i = 0; i < s->n_out; i++)
    s->out[i].value = g->outputs[i];
  nn_free(need);
  need = NULL;

  /* plan now when possible so that unsupported shapes fail at creation; the
   * inputs count as fed for this first plan (their data is not needed) */
  if (can_plan) {
    for (int i = 0; i < s->n_in; i++)
      if (!s->in[i].has_default)
        s->in[i].fed = true;
    st = session_plan(s);
    for (int i = 0; i < s->n_in; i++)
      if (!s->in[i].has_default)
        s->in[i].fed = false;
    if (st != NN_OK) {
      nn_error_set(err, st, "%s", s->err.msg);
      goto out_free_session;
    }
  } else {
    s->need_plan = true;
  }
  nn_alloc_pin();
  *out = s;
  return NN_OK;

out_free_session:
  nn_free(need);
  if (s) {
    s->g = g;
    g = NULL;
    nn_session_dispose(s);
    nn_free(s);
  }
out_free_graph:
  nn_graph_free(g);
  return st;
}

nn_status nn_session_create_from_memory(const void *data, size_t size, const nn_options *opt,
                                        nn_session **out, nn_error *err) {
  if (err) {
    err->status = NN_OK;
    err->msg[0] = '\0';
  }
  if (!out)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "out is NULL");
  *out = NULL;
  if (!data && size)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "data is NULL");
  model_src src = {.data = data, .size = size, .fd = -1};
  return session_create(&src, opt ? opt->base_dir : NULL, opt, out, err);
}

nn_status nn_session_create_from_file(const char *path, const nn_options *opt, nn_session **out,
                                      nn_error *err) {
  nn_status st;
  char *dir = NULL;
  if (err) {
    err->status = NN_OK;
    err->msg[0] = '\0';
  }
  if (!out || !path)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "path or out is NULL");
  *out = NULL;
  nn_options o;
  if (opt)
    o = *opt;
  else
    nn_options_init(&o);
  limits_fill(&o.limits);
  /* the guarded reader: a FIFO does not block, a device or a directory is
   * refused by name, the size limit holds before anything is allocated */
  nn_error ferr = {0};
  model_src src = {.fd = -1, .path = path};
  st = nn_file_open(path, NULL, &src.fd, &src.fsize, NULL, &ferr);
  if (st == NN_OK)
    st = nn_file_check_size(path, src.fsize, (size_t)o.limits.max_model_bytes, &ferr);
  if (st != NN_OK) {
    if (src.fd >= 0)
      close(src.fd);
    return nn_error_set(err, st, "cannot read model: %s", ferr.msg);
  }
  const char *slash = strrchr(path, '/');
  dir = slash ? nn_strndup(path, (size_t)(slash - path) + (slash == path ? 1 : 0)) : nn_strdup(".");
  if (!dir) {
    close(src.fd);
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  }
  st = session_create(&src, dir, &o, out, err);
  if ((st == NN_ERR_PARSE || st == NN_ERR_LIMIT) && err && strstr(err->msg, path) == NULL) {
    char tmp[sizeof err->msg];
    snprintf(tmp, sizeof tmp, "%.200s: %.300s", path, err->msg);
    memcpy(err->msg, tmp, sizeof tmp);
  }
  nn_free(dir);
  return st;
}

/* ---- queries ------------------------------------------------------------------- */
const char *nn_session_last_error(const nn_session *s) {
  return s ? s->err.msg : "no session";
}

nn_status nn_session_io_count(const nn_session *s, int *n_inputs, int *n_outputs) {
  if (!s)
    return NN_ERR_INVALID_ARG;
  if (s->disposed)
    return NN_ERR_DISPOSED;
  if (n_inputs)
    *n_inputs = s->n_in;
  if (n_outputs)
    *n_outputs = s->n_out;
  return NN_OK;
}

nn_status nn_session_input_info(const nn_session *s, int index, nn_io_info *info) {
  if (!s || !info)
    return NN_ERR_INVALID_ARG;
  if (s->disposed)
    return NN_ERR_DISPOSED;
  if (index < 0 || index >= s->n_in)
    return NN_ERR_INVALID_ARG;
  const in_slot *sl = &s->in[index];
  const nn_value *v = &s->g->values[sl->value];
  memset(info, 0, sizeof *info);
  info->name = v->name;
  info->dtype = sl->dtype;
  info->rank = sl->rank;
  memcpy(info->dims, sl->dims, sizeof info->dims);
  info->has_default = sl->has_default;
  info->kind = sl->vtype == NN_VT_SEQUENCE ? NN_IO_SEQUENCE
               : sl->vtype == NN_VT_OPTIONAL ? NN_IO_OPTIONAL : NN_IO_TENSOR;
  info->holds_sequence = sl->opt_seq;
  return NN_OK;
}

nn_status nn_session_output_info(const nn_session *s, int index, nn_io_info *info) {
  if (!s || !info)
    return NN_ERR_INVALID_ARG;
  if (s->disposed)
    return NN_ERR_DISPOSED;
  if (index < 0 || index >= s->n_out)
    return NN_ERR_INVALID_ARG;
  const nn_value *v = &s->g->values[s->out[index].value];
  memset(info, 0, sizeof *info);
  info->name = v->name;
  if (s->planned) {
    info->dtype = v->dtype;
    info->rank = v->rank;
    memcpy(info->dims, v->dims, sizeof info->dims);
  } else {
    info->dtype = v->decl_dtype;
    info->rank = v->decl_rank;
    memcpy(info->dims, v->decl_dims, sizeof info->dims);
  }
  nn_vtype vt = s->planned && v->vtype != NN_VT_TENSOR ? v->vtype : v->decl_vtype;
  info->kind = vt == NN_VT_SEQUENCE ? NN_IO_SEQUENCE : vt == NN_VT_OPTIONAL ? NN_IO_OPTIONAL : NN_IO_TENSOR;
  info->holds_sequence = v->decl_opt_seq;
  if (info->kind != NN_IO_TENSOR) {
    info->rank = -1;
    info->dtype = s->planned && v->box ? v->box->elem_dtype : v->decl_dtype;
  }
  return NN_OK;
}

static nn_status find_name(const nn_session *s, const char *name, bool input, int *index) {
  if (!s || !name || !index)
    return NN_ERR_INVALID_ARG;
  if (s->disposed)
    return NN_ERR_DISPOSED;
  int n = input ? s->n_in : s->n_out;
  for (int i = 0; i < n; i++) {
    int v = input ? s->in[i].value : s->out[i].value;
    if (strcmp(s->g->values[v].name, name) == 0) {
      *index = i;
      return NN_OK;
    }
  }
  return NN_ERR_INVALID_ARG;
}

nn_status nn_session_find_input(const nn_session *s, const char *name, int *index) {
  return find_name(s, name, true, index);
}

nn_status nn_session_find_output(const nn_session *s, const char *name, int *index) {
  return find_name(s, name, false, index);
}

/* ---- inputs -------------------------------------------------------------------- */
nn_status nn_session_set_input_shape(nn_session *s, int index, int rank, const int64_t *dims) {
  CHECK_SESSION(s);
  if (index < 0 || index >= s->n_in || (rank > 0 && !dims) || rank < 0 || rank > NN_MAX_RANK)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "bad input index %d or rank %d", index, rank);
  in_slot *sl = &s->in[index];
  if (sl->vtype != NN_VT_TENSOR)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "input '%s' is a sequence or optional: use "
                        "nn_session_set_input_items", s->g->values[sl->value].name);
  const nn_value *v = &s->g->values[sl->value];
  nn_status st = check_decl_shape(s, v, rank, dims);
  if (st != NN_OK)
    return st;
  if (dims_equal(rank, dims, sl->rank, sl->dims) && sl->own)
    return NN_OK;
  int old_rank = sl->rank;
  int64_t old[NN_MAX_RANK];
  memcpy(old, sl->dims, sizeof old);
  sl->rank = rank;
  for (int i = 0; i < rank; i++)
    sl->dims[i] = dims[i];
  st = in_slot_alloc(s, sl);
  if (st != NN_OK) {
    sl->rank = old_rank;
    memcpy(sl->dims, old, sizeof old);
    return st;
  }
  s->need_plan = true;
  return NN_OK;
}

nn_status nn_session_input_tensor(nn_session *s, int index, nn_tensor **t) {
  CHECK_SESSION(s);
  if (index < 0 || index >= s->n_in || !t)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "bad input index %d", index);
  in_slot *sl = &s->in[index];
  const nn_value *v = &s->g->values[sl->value];
  if (sl->vtype != NN_VT_TENSOR)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "input '%s' is a sequence or optional: use "
                        "nn_session_set_input_items", v->name);
  if (!shape_static(sl->rank, sl->dims)) {
    char got[128];
    shape_str(sl->rank, sl->dims, got, sizeof got);
    return nn_error_set(&s->err, NN_ERR_SHAPE,
                        "input '%s' has dynamic shape %s: call nn_session_set_input_shape first", v->name,
                        got);
  }
  if (!sl->own || sl->tensor.data != sl->own) {
    nn_status st = in_slot_alloc(s, sl);
    if (st != NN_OK)
      return st;
  }
  if (sl->has_default && !sl->fed) {
    /* start from the default so a partial fill is still meaningful */
    memcpy(sl->own, v->const_data, sl->tensor.nbytes < v->nbytes ? sl->tensor.nbytes : v->nbytes);
    s->need_plan = true;
  }
  if (sl->bound)
    sl->bound = false;
  sl->fed = true;
  *t = &sl->tensor;
  return NN_OK;
}

nn_status nn_session_bind_input(nn_session *s, int index, const nn_tensor *t) {
  CHECK_SESSION(s);
  if (index < 0 || index >= s->n_in || !t)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "bad input index %d", index);
  in_slot *sl = &s->in[index];
  const nn_value *v = &s->g->values[sl->value];
  if (sl->vtype != NN_VT_TENSOR)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "input '%s' is a sequence or optional: use "
                        "nn_session_set_input_items", v->name);
  if (t->dtype != sl->dtype)
    return nn_error_set(&s->err, NN_ERR_DTYPE, "input '%s' expects %s, got %s", v->name,
                        nn_dtype_name(sl->dtype), nn_dtype_name(t->dtype));
  nn_status st = check_decl_shape(s, v, t->rank, t->dims);
  if (st != NN_OK)
    return st;
  size_t nbytes;
  st = shape_bytes(s, v->name, t->dtype, t->rank, t->dims, &nbytes);
  if (st != NN_OK)
    return st;
  if (t->nbytes != nbytes || (nbytes && !t->data))
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "input '%s': tensor has %zu bytes, its shape needs %zu",
                        v->name, t->nbytes, nbytes);
  if (!dims_equal(t->rank, t->dims, sl->rank, sl->dims) || (sl->has_default && !sl->fed)) {
    sl->rank = t->rank;
    memcpy(sl->dims, t->dims, sizeof sl->dims);
    s->need_plan = true;
  }
  sl->bound_t = *t;
  sl->bound = true;
  sl->fed = true;
  return NN_OK;
}

nn_status nn_session_reset_input(nn_session *s, int index) {
  CHECK_SESSION(s);
  if (index < 0 || index >= s->n_in)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "bad input index %d", index);
  in_slot *sl = &s->in[index];
  if (sl->vtype != NN_VT_TENSOR)
    return NN_OK; /* the items fed last stay */
  sl->bound = false;
  if (sl->has_default) {
    if (sl->fed)
      s->need_plan = true;
    sl->fed = false;
    sl->rank = sl->def_rank;
    memcpy(sl->dims, sl->def_dims, sizeof sl->dims);
  } else if (sl->own && !dims_equal(sl->tensor.rank, sl->tensor.dims, sl->rank, sl->dims)) {
    sl->rank = sl->tensor.rank;
    memcpy(sl->dims, sl->tensor.dims, sizeof sl->dims);
    s->need_plan = true;
  }
  return NN_OK;
}

nn_status nn_session_bind_output(nn_session *s, int index, const nn_tensor *t) {
  CHECK_SESSION(s);
  if (index < 0 || index >= s->n_out)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "bad output index %d", index);
  out_slot *sl = &s->out[index];
  if (!t) {
    sl->bound = false;
    return NN_OK;
  }
  if (s->g->values[sl->value].decl_vtype != NN_VT_TENSOR)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "output '%s' is a sequence or optional: read it "
                        "with nn_session_output_items", s->g->values[sl->value].name);
  if (t->nbytes && !t->data)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "output tensor has no data");
  sl->bound_t = *t;
  sl->bound = true;
  return NN_OK;
}

/* ---- run ---------------------------------------------------------------------- */
nn_status nn_session_run(nn_session *s) {
  CHECK_SESSION(s);
  nn_graph *g = s->g;
  nn_status st;
  for (int i = 0; i < s->n_in; i++) {
    in_slot *sl = &s->in[i];
    if (!sl->fed && !sl->has_default)
      return nn_error_set(&s->err, NN_ERR_MISSING_INPUT,
                          "input '%s' was neither filled (nn_session_input_tensor) nor bound",
                          g->values[sl->value].name);
    if (sl->fed && sl->need_value && s->planned && !s->need_plan && snap_differs(sl))
      s->need_plan = true;
  }
  if (s->need_plan || !s->planned) {
    st = session_plan(s);
    if (st != NN_OK)
      return st;
  }
  /* bind this run's buffers: pointer updates only */
  for (int i = 0; i < s->n_in; i++) {
    in_slot *sl = &s->in[i];
    if (sl->fed)
      g->values[sl->value].data = (void *)in_slot_data(sl);
  }
  for (int i = 0; i < s->n_out; i++) {
    out_slot *sl = &s->out[i];
    nn_value *v = &g->values[sl->value];
    void *dst = sl->arena_data ? sl->arena_data : sl->own;
    if (sl->bound) {
      if (sl->bound_t.nbytes != v->nbytes)
        return nn_error_set(&s->err, NN_ERR_SHAPE, "bound output '%s' has %zu bytes, the result needs %zu",
                            v->name, sl->bound_t.nbytes, v->nbytes);
      dst = sl->bound_t.data;
    }
    sl->tensor.data = dst;
    if (!v->known && v->kind == NN_VAL_INTER)
      v->data = dst;
  }
  nn_strstore_rewind(s->ctx.strings); /* the last run's strings: their bytes are reused */
  st = s->be->run(s->be_state, &s->ctx, &s->err);
  if (st != NN_OK)
    return st;
  /* outputs that no step wrote: constants, folded values, graph inputs */
  for (int i = 0; i < s->n_out; i++) {
    out_slot *sl = &s->out[i];
    const nn_value *v = &g->values[sl->value];
    if ((v->known || v->kind != NN_VAL_INTER) && v->data != sl->tensor.data && v->nbytes)
      memcpy(sl->tensor.data, v->data, v->nbytes);
  }
  s->runs++;
  return NN_OK;
}

nn_status nn_session_output_tensor(nn_session *s, int index, const nn_tensor **t) {
  CHECK_SESSION(s);
  if (index < 0 || index >= s->n_out || !t)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "bad output index %d", index);
  if (!s->planned)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "no result yet: run the session first");
  *t = &s->out[index].tensor;
  return NN_OK;
}

/* ---- sequence and optional I/O ------------------------------------------------ */
nn_status nn_session_set_input_items(nn_session *s, int index, int n, const nn_tensor *items) {
  CHECK_SESSION(s);
  if (index < 0 || index >= s->n_in)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "bad input index %d", index);
  in_slot *sl = &s->in[index];
  const char *name = s->g->values[sl->value].name;
  if (sl->vtype == NN_VT_TENSOR)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "input '%s' is a tensor", name);
  bool none = n < 0;
  if (none && sl->vtype != NN_VT_OPTIONAL)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "input '%s' is a sequence: n must be >= 0", name);
  if (none)
    n = 0;
  if (sl->vtype == NN_VT_OPTIONAL && !sl->opt_seq && !none && n != 1)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "input '%s' is an optional tensor: one item or none",
                        name);
  if (n > NN_LIMIT_SEQUENCE_ITEMS || (n > 0 && !items))
    return nn_error_set(&s->err, n > 0 && !items ? NN_ERR_INVALID_ARG : NN_ERR_LIMIT,
                        "input '%s': %d items", name, n);
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    const nn_tensor *t = &items[i];
    size_t nb;
    if (t->rank < 0 || t->rank > s->opt.limits.max_rank)
      return nn_error_set(&s->err, NN_ERR_SHAPE, "input '%s': item %d has rank %d", name, i, t->rank);
    nn_status st = shape_bytes(s, name, t->dtype, t->rank, t->dims, &nb);
    if (st != NN_OK)
      return st;
    if (nn_dtype_size(t->dtype) == 0 || (sl->dtype != NN_DTYPE_UNDEFINED && t->dtype != sl->dtype) ||
        t->dtype != items[0].dtype)
      return nn_error_set(&s->err, NN_ERR_DTYPE, "input '%s': item %d is %s, expected %s", name, i,
                          nn_dtype_name(t->dtype),
                          nn_dtype_name(sl->dtype != NN_DTYPE_UNDEFINED ? sl->dtype : items[0].dtype));
    if (t->nbytes != nb || (nb && !t->data))
      return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "input '%s': item %d has %zu bytes, its shape "
                          "needs %zu", name, i, t->nbytes, nb);
    total += nn_align_up(nb, NN_ALIGN);
  }
  if (n > sl->items_cap) {
    nn_tensor *p = nn_realloc(sl->items, (size_t)n * sizeof *p);
    if (!p)
      return nn_error_set(&s->err, NN_ERR_NOMEM, "out of memory");
    sl->items = p;
    sl->items_cap = n;
  }
  if (total > sl->own_cap || !sl->own) {
    nn_status st = io_budget(s, sl->own_cap, total, name);
    if (st != NN_OK)
      return st;
    void *p = nn_aligned_alloc(total ? total : 1);
    if (!p)
      return nn_error_set(&s->err, NN_ERR_NOMEM, "out of memory for input '%s' (%zu bytes)", name, total);
    nn_aligned_free(sl->own);
    sl->own = p;
    sl->own_cap = total;
  }
  /* the same layout as the last feed: no re-plan */
  bool same = sl->fed && sl->box.none == none && sl->box.n == n;
  for (int i = 0; same && i < n; i++)
    same = sl->items[i].dtype == items[i].dtype && sl->items[i].rank == items[i].rank &&
           memcmp(sl->items[i].dims, items[i].dims, sizeof(int64_t) * (size_t)items[i].rank) == 0;
  sl->box.vtype = sl->vtype;
  sl->box.none = none;
  sl->box.elem_is_seq = sl->vtype == NN_VT_OPTIONAL && sl->opt_seq;
  sl->box.elem_dtype = n > 0 ? items[0].dtype : sl->dtype;
  sl->box.n = n;
  sl->box.items = sl->items;
  size_t off = 0;
  for (int i = 0; i < n; i++) {
    sl->items[i] = items[i];
    sl->items[i].data = (unsigned char *)sl->own + off;
    if (items[i].nbytes)
      memcpy(sl->items[i].data, items[i].data, items[i].nbytes);
    off += nn_align_up(items[i].nbytes, NN_ALIGN);
  }
  sl->fed = true;
  if (!same || sl->box_need)
    s->need_plan = true;
  return NN_OK;
}

nn_status nn_session_output_items(nn_session *s, int index, int *n, const nn_tensor **items, int *none) {
  CHECK_SESSION(s);
  if (index < 0 || index >= s->n_out || !n || !items)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "bad output index %d", index);
  if (!s->planned)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "no result yet: run the session first");
  const nn_value *v = &s->g->values[s->out[index].value];
  if (v->vtype == NN_VT_TENSOR || !v->box)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "output '%s' is a tensor", v->name);
  *n = v->box->n;
  *items = v->box->items;
  if (none)
    *none = v->box->none;
  return NN_OK;
}

nn_status nn_session_parallel_for(nn_session *s, int64_t n, int64_t grain,
                                  nn_task_fn fn, void *arg) {
  CHECK_SESSION(s);
  if (!fn || n < 0)
    return nn_error_set(&s->err, NN_ERR_INVALID_ARG, "parallel_for: %s",
                        fn ? "negative count" : "no function");
  /* the same pool as the kernels: no run is in progress (one thread per
   * session), so the workers are free */
  nn_parallel_for(&s->ctx, n, grain, fn, arg);
  return NN_OK;
}

int nn_session_parallel_width(const nn_session *s) {
  if (!s || s->disposed)
    return 0;
  return nn_parallel_width(&s->ctx);
}

int nn_session_worker_index(void) {
  return nn_parallel_worker();
}

nn_status nn_session_stats(const nn_session *s, nn_stats *st) {
  if (!s || !st)
    return NN_ERR_INVALID_ARG;
  if (s->disposed)
    return NN_ERR_DISPOSED;
  memset(st, 0, sizeof *st);
  st->weights_bytes = s->g->weights_bytes + s->plan.folded_bytes;
  st->arena_bytes = s->plan.arena_bytes;
  st->arena_naive_bytes = s->plan.arena_naive_bytes;
  st->io_bytes = session_io_bytes(s) + nn_strstore_bytes(s->ctx.strings);
  st->peak_bytes = s->peak;
  nn_backend_stats bs;
  s->be->stats(s->be_state, &bs);
  st->nodes_cpu = bs.nodes_host;
  st->nodes_cpu_one_thread = bs.nodes_one_thread;
  st->nodes_vulkan = s->be->kind == NN_BACKEND_VULKAN ? bs.nodes_device : 0;
  st->device_bytes = bs.device_bytes;
  st->staging_bytes = bs.staging_bytes;
  st->nodes_folded = s->plan.nodes_folded;
  st->runs = s->runs;
  st->backend = s->backend;
  return NN_OK;
}

/* ---- dispose ------------------------------------------------------------------ */
nn_status nn_session_dispose(nn_session *s) {
  if (!s)
    return NN_ERR_INVALID_ARG;
  if (s->disposed)
    return NN_ERR_DISPOSED;
  if (s->be)
    s->be->destroy(s->be_state); /* before the plan it points into */
  s->be = NULL;
  s->be_state = NULL;
  nn_free(s->on_device);
  s->on_device = NULL;
  s->on_device_cap = 0;
  if (s->g) {
    nn_plan_clear(s->g, &s->plan);
    nn_graph_free(s->g);
    s->g = NULL;
  }
  for (int i = 0; s->in && i < s->n_in; i++) {
    nn_aligned_free(s->in[i].own);
    nn_aligned_free(s->in[i].snap);
    nn_free(s->in[i].items);
  }
  for (int i = 0; s->out && i < s->n_out; i++)
    nn_aligned_free(s->out[i].own);
  nn_free(s->in);
  nn_free(s->out);
  s->in = NULL;
  s->out = NULL;
  nn_threadpool_destroy(s->ctx.pool);
  s->ctx.pool = NULL;
  nn_strstore_free(s->ctx.strings);
  s->ctx.strings = NULL;
  s->disposed = true;
  s->planned = false;
  return NN_OK;
}

/* The handle is nn_malloc'd, so the allocator stays pinned until it is freed. */
void nn_session_free(nn_session *s) {
  if (!s)
    return;
  if (!s->disposed)
    nn_session_dispose(s);
  nn_alloc_unpin();
  nn_free(s);
}
