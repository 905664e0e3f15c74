/* nn_internal.h - runtime internals shared by the loader, the graph passes,
 * the planner, the session and the kernels.  Not installed.
 *
 * Life of a model:
 *   loader (onnx/loader.c)   protobuf -> nn_graph: values, nodes, attributes;
 *                            initializers copied into session-owned memory
 *   graph.c                  topological order, validation, op lookup
 *   passes.c                 drop Identity/Dropout, fold BatchNorm into Conv
 *   prepare (plan.c)         for the concrete input shapes: every node's
 *                            prepare() sets its outputs' dtype/shape; nodes
 *                            whose inputs are all known are run once (constant
 *                            folding); the rest form the execution list
 *   plan.c                   lifetimes -> arena offsets (greedy by size,
 *                            best-fitting gap), in-place and view aliasing
 *   session.c                run = for each node: kern->run()
 */
#ifndef NN_INTERNAL_H
#define NN_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "include/nn.h"

/* ---- allocation (alloc.c) --------------------------------------------------
 * Every allocation of the runtime goes through these; they call the hooks of
 * nn_set_allocator() and keep the counters of nn_memory_usage().  Memory from
 * nn_malloc/nn_calloc/nn_realloc/nn_strdup is freed with nn_free.
 * nn_malloc(0) returns a valid unique pointer. */
void *nn_malloc(size_t size);
void *nn_calloc(size_t n, size_t size);          /* overflow-checked */
void *nn_realloc(void *ptr, size_t size);
void nn_free(void *ptr);
char *nn_strdup(const char *s);
char *nn_strndup(const char *s, size_t n);
/* 64-byte aligned block for tensor data; free with nn_aligned_free. */
void *nn_aligned_alloc(size_t size);
void nn_aligned_free(void *ptr);
/* Number of live sessions/contexts that pin the allocator. */
void nn_alloc_pin(void);
void nn_alloc_unpin(void);

#define NN_ALIGN 64
static inline size_t nn_align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* Overflow-checked arithmetic: return true on overflow. */
static inline bool nn_mul_overflow_i64(int64_t a, int64_t b, int64_t *r) {
  return __builtin_mul_overflow(a, b, r);
}
static inline bool nn_mul_overflow_size(size_t a, size_t b, size_t *r) {
  return __builtin_mul_overflow(a, b, r);
}

/* ---- files (file.c; the public readers are in include/nn_file.h) --------
 * Open `path` for reading with the guards of nn_file.h: a regular file only
 * (a FIFO does not block, a device or directory is refused by name), and,
 * when inside_dir is not NULL, a real path inside the real path of
 * inside_dir (checked before opening and on the open descriptor).  On
 * success *fd is an open descriptor the caller closes and *size the file's
 * size; on failure *fd is -1 and err says why, naming the path (NN_ERR_IO,
 * with *outside, when not NULL, set for a path that resolves outside
 * inside_dir: the loader reports that as an invalid model). */
nn_status nn_file_open(const char *path, const char *inside_dir, int *fd, int64_t *size,
                       bool *outside, nn_error *err);
/* NN_ERR_LIMIT, naming the path, when a file of fsize bytes is over
 * max_bytes (what nn_file_read refuses before allocating). */
nn_status nn_file_check_size(const char *path, int64_t fsize, size_t max_bytes, nn_error *err);
/* nn_file_read on a descriptor from nn_file_open (fsize its size), read from
 * its current offset; closes fd.  *data is caller-owned, nn_file_free(). */
nn_status nn_file_read_fd(int fd, int64_t fsize, const char *path, size_t max_bytes, void **data,
                          size_t *size, nn_error *err);

/* ---- errors (error.c) ------------------------------------------------------ */
/* Format into err (may be NULL) and return st. */
nn_status nn_error_set(nn_error *err, nn_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- dtypes (dtype.c) ------------------------------------------------------ */
float nn_f16_to_f32(uint16_t h);
uint16_t nn_f32_to_f16(float f);     /* round to nearest even */
float nn_bf16_to_f32(uint16_t h);
uint16_t nn_f32_to_bf16(float f);    /* round to nearest even */
bool nn_dtype_is_float(nn_dtype dt); /* float16, bfloat16, float, double */
bool nn_dtype_is_int(nn_dtype dt);   /* signed and unsigned integers */
bool nn_dtype_is_signed(nn_dtype dt);

/* ---- values and nodes ------------------------------------------------------- */
typedef enum nn_value_kind {
  NN_VAL_INTER = 0,   /* produced by a node, lives in the arena */
  NN_VAL_INPUT,       /* graph input fed by the caller */
  NN_VAL_CONST,       /* initializer, Constant, or folded at plan time */
  NN_VAL_OUTPUT,      /* graph output, lives in its own session buffer */
} nn_value_kind;

/* What a value holds (ONNX TypeProto): a tensor, or a boxed value -- a
 * sequence of tensors or an optional (of a tensor or of a sequence).  A boxed
 * value's nn_value describes its bytes as a uint8 vector (dtype UINT8, rank 1,
 * dims[0] = nbytes: the items' data, each at a 64-byte aligned offset), and
 * its `box` (the header: item count, each item's dtype and shape, pointers
 * into those bytes) is owned by whoever set it: the producing node (its
 * boxes, or the priv of a control op), the control-flow kernel feeding a
 * subgraph input.  Like a tensor's shape, a box's item count and item
 * shapes are fixed for a plan. */
typedef enum nn_vtype {
  NN_VT_TENSOR = 0,
  NN_VT_SEQUENCE,
  NN_VT_OPTIONAL,
} nn_vtype;

typedef struct nn_box {
  nn_vtype vtype;              /* NN_VT_SEQUENCE or NN_VT_OPTIONAL */
  bool elem_is_seq;            /* optional: its element is a sequence */
  bool none;                   /* optional: holds no element */
  nn_dtype elem_dtype;         /* element type; NN_DTYPE_UNDEFINED when unknown */
  int n;                       /* items (optional of a tensor: 0 or 1) */
  nn_tensor *items;            /* n tensors; data points into the value's bytes */
} nn_box;

/* A tensor of the graph.  dtype/rank/dims are known after prepare; data is
 * valid after planning (arena + offset, const storage, io buffer). */
typedef struct nn_value {
  char *name;                  /* owned by the graph */
  nn_dtype dtype;
  int rank;
  int64_t dims[NN_MAX_RANK];
  int64_t numel;
  size_t nbytes;
  void *data;
  nn_value_kind kind;
  int producer;                /* index of the producing node, -1 if none */
  int n_uses;                  /* consumer count (+1 when graph output) */
  /* model-level declaration (graph input/output value_info), rank -1 unknown */
  nn_dtype decl_dtype;
  int decl_rank;
  int64_t decl_dims[NN_MAX_RANK];   /* -1 = dynamic */
  /* constants: storage owned by the graph (nn_aligned_alloc) */
  void *const_data;
  /* > 0: const_data holds this constant as the GEMM engine's packed A panels
   * (cpu/sgemm.h), in that many groups of dims[0] / groups rows by
   * numel / dims[0] columns, one block of nn_plan_packed_a_group_bytes()
   * each: the layout its only consumer reads (kern->const_a_groups), set by
   * the planner of a CPU session and turned back into the ONNX layout
   * before any re-plan.  0: the ONNX layout. */
  int64_t packed_a_groups;
  /* inputs: the default (initializer) when has_default */
  bool has_default;
  bool is_graph_output;
  /* planner bookkeeping */
  bool known;                  /* data is fixed for the current plan (constant,
                                  unfed default, or folded at plan time) */
  void *fold_data;             /* plan-owned buffer of a value folded at plan time */
  int first_use, last_use;     /* execution step range */
  int alias_of;                /* value whose buffer this one shares, -1 */
  size_t alias_off;            /* where in alias_of's bytes this one starts (a
                                  Concat input placed in its output; 0 otherwise) */
  size_t offset;               /* arena offset */
  /* boxed values (nn_vtype): set by infer or prepare (or by the kernel
   * feeding a subgraph input); box is borrowed, valid for the plan */
  nn_vtype vtype;
  nn_box *box;
  /* declared type of a subgraph input or output (loader): tensor, sequence,
   * optional */
  nn_vtype decl_vtype;
  bool decl_opt_seq;           /* an optional declared to hold a sequence */
  /* subgraphs: a value of an enclosing scope read here (kind NN_VAL_INPUT):
   * the index of the owning node's input that carries it (its implicit
   * inputs, nn_node.n_implicit); -1 otherwise */
  int outer_slot;
} nn_value;

typedef enum nn_attr_type {
  NN_ATTR_UNDEFINED = 0,
  NN_ATTR_FLOAT = 1,
  NN_ATTR_INT = 2,
  NN_ATTR_STRING = 3,
  NN_ATTR_TENSOR = 4,
  NN_ATTR_GRAPH = 5,
  NN_ATTR_FLOATS = 6,
  NN_ATTR_INTS = 7,
  NN_ATTR_STRINGS = 8,
  NN_ATTR_TENSORS = 9,
  NN_ATTR_GRAPHS = 10,
  NN_ATTR_SPARSE_TENSOR = 11,
  NN_ATTR_SPARSE_TENSORS = 12,
  NN_ATTR_TYPE_PROTO = 13,
  NN_ATTR_TYPE_PROTOS = 14,
} nn_attr_type;

typedef struct nn_attr {
  char *name;
  nn_attr_type type;
  float f;
  int64_t i;
  char *s;                     /* NUL-terminated copy */
  size_t s_len;
  int n;                       /* element count of floats / ints / strings */
  float *floats;
  int64_t *ints;
  char **strings;
  nn_tensor t;                 /* NN_ATTR_TENSOR, data owned by the graph */
  struct nn_graph *g;          /* NN_ATTR_GRAPH: the subgraph, owned by the graph
                                  holding the node (nn_graph_free) */
} nn_attr;

struct nn_op_def;

/* An activation fused into a node's epilogue: the vocabulary (the NN_ACT_*
 * kinds, what a and b mean, which ONNX ops it absorbs) is the op layer's,
 * ops/activation.h.  A zeroed struct is NN_ACT_NONE. */
typedef struct nn_act {
  int kind;                    /* NN_ACT_* (ops/act_kinds.h) */
  float a, b;                  /* LeakyRelu: a = alpha; Clip: a = min, b = max */
} nn_act;

typedef struct nn_node {
  char *name;                  /* never NULL (generated when the model has none) */
  char *op_type;
  char *domain;                /* "" for the default domain */
  int opset;                   /* the model's opset for this domain */
  int version;                 /* semantic version resolved from op->versions */
  int n_in, n_out;
  int *in, *out;               /* value indices, -1 for an omitted optional */
  int n_in_model;              /* n_in as loaded (plan-time rewrites may add one) */
  int n_implicit;              /* the last n_implicit of the n_in_model inputs are
                                  outer-scope values its subgraphs read (If, Loop,
                                  Scan bodies): ordinary inputs for ordering,
                                  lifetimes and transfers; not ONNX inputs */
  nn_value **x, **y;           /* resolved value pointers (NULL when omitted) */
  int n_attrs;
  nn_attr *attrs;
  const struct nn_op_def *op;  /* the op layer's entry, resolved at finalize */
  const struct nn_kernel *kern;/* its CPU kernel, resolved at finalize */
  /* set by prepare */
  void *priv;                  /* kernel parameters: one nn_malloc block,
                                  freed by the framework before re-prepare */
  size_t ws_bytes;             /* workspace the kernel needs during run */
  size_t priv_const_bytes;     /* constant data prepare derived into priv (e.g. a
                                  pre-packed copy of the weights): reported as
                                  weights by nn_session_stats (plan.c adds it
                                  to folded_bytes for executed nodes) */
  void *boxes;                 /* the headers of its boxed outputs (nn_box), set
                                  by its op's infer (ops/box.h nn_node_boxes):
                                  one nn_malloc block, freed with priv */
  /* set by the planner */
  void *ws;                    /* workspace, valid during run */
  bool folded;                 /* evaluated at plan time */
  bool fused;                  /* absorbed into its producer by a plan-time pass */
  nn_act act;                  /* activation a plan-time pass fused into this node's
                                  epilogue (ops/activation.h); NN_ACT_NONE = none */
  struct nn_node *pre;         /* a producer a plan-time pass fused in front of this node
                                  (a depthwise Conv before a 1x1 Conv, which reads its
                                  input from a spare slot); NULL = none */
  int res_slot;                /* > 0: input x[res_slot] is a residual a plan-time pass
                                  fused into the epilogue, y = act(op(x) + residual)
                                  (the shortcut Add of a ResNet / MobileNet block;
                                  Conv and MatMul, slot 3); 0 = none */
  bool removed;                /* dropped by a graph pass */
  const struct nn_op_def *box_op; /* the op for boxed inputs (Identity of a
                                  sequence), resolved at finalize; NULL = none */
  const struct nn_kernel *box_kern; /* box_op's CPU kernel */
} nn_node;

/* ---- kernel context ---------------------------------------------------------
 * One context for prepare and run.  Kernels report errors through nn_fail(),
 * which prefixes the node's name and op. */
typedef struct nn_threadpool nn_threadpool;

typedef struct nn_ctx {
  nn_node *node;               /* node being prepared or run */
  nn_error *err;
  const nn_limits *limits;
  nn_threadpool *pool;         /* NULL = run serially */
  int threads;
  struct nn_strstore *strings; /* the session's string bytes (nn_strings.h); NULL
                                  outside a session: string kernels then fail */
} nn_ctx;

/* A message for the log hook (nn_set_log), stderr by default. */
void nn_log(nn_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

nn_status nn_fail(nn_ctx *c, nn_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Set an output's dtype and shape in prepare: checks dims >= 0, rank and
 * element-count limits, computes numel and nbytes. */
nn_status nn_set_output(nn_ctx *c, nn_value *y, nn_dtype dt, int rank,
                        const int64_t *dims);

/* Run fn over [0, n) split into chunks of at least `grain` items, on the
 * session's workers (serially when there are none).  Returns when all chunks
 * are done.  fn must not allocate. */
typedef void (*nn_range_fn)(void *arg, int64_t begin, int64_t end);
void nn_parallel_for(nn_ctx *c, int64_t n, int64_t grain, nn_range_fn fn, void *arg);
/* Participants of nn_parallel_for on this context (1 when serial), and the
 * index of the calling thread among them, in [0, width): kernels use it to
 * pick per-thread scratch inside their workspace. */
int nn_parallel_width(const nn_ctx *c);
int nn_parallel_worker(void);

/* ---- operator definitions -------------------------------------------------- */
enum {
  /* output 0 may share the buffer of an input of the same shape and dtype
   * size whose last use is this node: the kernel reads element k of that
   * input before writing element k of the output. */
  NN_OP_ELEMENTWISE = 1u << 0,
  /* output 0 holds exactly the bytes of input 0 (Reshape, Squeeze, ...): the
   * planner may alias them; run must then do nothing when y->data == x->data
   * and copy otherwise. */
  NN_OP_VIEW = 1u << 1,
  /* never fold at plan time (random ops) */
  NN_OP_NO_FOLD = 1u << 2,
  /* has subgraph attributes (If, Loop, Scan, SequenceMap): the planner asks
   * subgraph_needs() which inputs' values its subgraphs need at plan time */
  NN_OP_SUBGRAPH = 1u << 3,
  /* reads or writes boxed values (sequences, optionals); a node whose input
   * is boxed and whose op lacks this flag is refused at prepare (Identity is
   * resolved to its boxed variant, nn_node.box_op) */
  NN_OP_BOXES = 1u << 4,
};

#define NN_MAX_VERSIONS 8

/* An operator in the op layer (runtime/ops/<family>.c, table
 * nn_ops_<family>[], found by nn_op_find): what it is and what it produces,
 * the same for every backend. */
typedef struct nn_op_def {
  const char *name;            /* op_type */
  const char *domain;          /* NULL or "" = default domain */
  /* ONNX since-versions whose semantics this op implements, ascending,
   * 0-terminated.  A node resolves to the largest entry <= the model's opset;
   * none -> unsupported.  Type-only revisions need no entry. */
  int versions[NN_MAX_VERSIONS];
  /* bitmask of inputs whose VALUES determine output shapes (Reshape's shape,
   * Slice's starts, ...): they must be known at prepare. */
  unsigned shape_inputs;
  unsigned flags;
  /* Shape and dtype inference: validate attributes and input dtypes/shapes
   * and set every output with nn_set_output().  Inputs in shape_inputs have
   * data != NULL; other inputs may have data (constants) or not.  Sets no
   * priv and no workspace (those are a kernel's).  NULL where the kernel's
   * prepare infers the outputs: the control ops, whose outputs are those of
   * the body the CPU kernel plans (cpu/control.c). */
  nn_status (*infer)(nn_ctx *c, nn_node *n);
} nn_op_def;

/* A CPU kernel (runtime/cpu/<family>.c, table nn_kernels_<family>[], found by
 * nn_kernel_find): the reference implementation of an op.  Every node has
 * one (the planner folds constants with it; a device backend runs the steps
 * it refuses with it). */
typedef struct nn_kernel {
  const char *name;            /* op_type, as in the op layer */
  const char *domain;          /* NULL or "" = default domain */
  /* Optional, called after the op's infer: refuse the dtypes the kernel
   * does not handle, set node->priv (its parameters) and node->ws_bytes. */
  nn_status (*prepare)(nn_ctx *c, nn_node *n);
  /* Compute.  Every input and output has data (possibly 0 bytes). */
  nn_status (*run)(nn_ctx *c, nn_node *n);
  /* Optional.  Asked once planning is complete, for a step whose
   * input 1 is a float32 constant that nothing else reads (no other node,
   * graph output or backend): the number of groups in which run() reads it
   * as packed GEMM A panels (nn_value.packed_a_groups), or 0 to keep it as
   * it is.  The planner then re-lays it out in place of the original, so the
   * weights are packed once and not twice in memory. */
  int64_t (*const_a_groups)(const nn_node *n);
  /* Optional (ops with NN_OP_SUBGRAPH): set need[k] for each input k whose
   * value (not only its shape) the node needs at plan time, from the
   * structure alone (no shapes yet); returns false when it needs none. */
  bool (*subgraph_needs)(const nn_node *n, bool *need);
} nn_kernel;

/* Bytes of one group's block of a constant laid out as packed GEMM A
 * panels (nn_value.packed_a_groups): rows x cols floats, a multiple of 64
 * (plan.c). */
size_t nn_plan_packed_a_group_bytes(int64_t rows, int64_t cols);

/* Op lookup over the op layer's family tables (ops/registry.c).  NULL when
 * unknown. */
const nn_op_def *nn_op_find(const char *domain, const char *op_type);
/* True when an entry's domain (NULL or "" = default) is `domain`: the one
 * matching rule of nn_op_find and the backends' kernel lookups. */
bool nn_op_domain_matches(const char *entry_domain, const char *domain);
/* ops/schema.c: resolve node->version from op->versions and the node's
 * opset; 0 if none. */
int nn_op_resolve_version(const nn_op_def *op, int opset);
/* ops/schema.c: check the node's input/output counts, required slots and
 * attribute types against the ONNX schema of its operator version
 * (node->opset must be set). */
nn_status nn_op_check_schema(const nn_node *n, nn_error *err);
/* ops/schema.c: NULL, "" and "ai.onnx" all name the default domain. */
bool nn_op_domain_is_default(const char *domain);

/* ---- attributes (attr.c) ---------------------------------------------------
 * Lookups by name; the returned pointers are graph-owned, valid until dispose. */
const nn_attr *nn_attr_get(const nn_node *n, const char *name);
int64_t nn_attr_int(const nn_node *n, const char *name, int64_t def);
float nn_attr_float(const nn_node *n, const char *name, float def);
const char *nn_attr_string(const nn_node *n, const char *name, const char *def);
/* Array attributes: NULL and *count = 0 when absent. */
const int64_t *nn_attr_ints(const nn_node *n, const char *name, int *count);
const float *nn_attr_floats(const nn_node *n, const char *name, int *count);
const nn_tensor *nn_attr_tensor(const nn_node *n, const char *name);
/* Free what an attribute owns (not the struct itself). */
void nn_attr_free(nn_attr *a);

/* ---- shape helpers (shape_util.c) ------------------------------------------ */
/* Multidirectional (numpy) broadcast of two shapes; NN_ERR_SHAPE when they
 * don't broadcast. */
nn_status nn_broadcast_shape(int ra, const int64_t *da, int rb, const int64_t *db,
                             int *rout, int64_t *dout);
/* Element strides of a tensor of rank r viewed at rank rout (right-aligned),
 * with 0 on broadcast dimensions.  Writes rout strides. */
void nn_broadcast_strides(int r, const int64_t *dims, int rout,
                          const int64_t *dout, int64_t *strides);
/* Normalize an axis in [-rank, rank) to [0, rank); false when out of range. */
bool nn_norm_axis(int64_t axis, int rank, int *out);
int64_t nn_dims_numel(int rank, const int64_t *dims);
/* Read element i of an integer tensor of any int dtype as int64. */
int64_t nn_value_get_int(const nn_value *v, int64_t i);
/* Read element i of a float/double/f16/bf16/int tensor as double. */
double nn_value_get_double(const nn_value *v, int64_t i);

#endif /* NN_INTERNAL_H */
