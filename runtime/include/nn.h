/* nn.h - the onnxinfer inference runtime: the only header elements and
 * applications include.
 *
 * Plain C11, no GStreamer or GLib types.  A session is the unit of lifetime:
 * it owns the weights, the planned intermediate arena, the pre-allocated input
 * and output tensors and every backend object.  nn_session_dispose() releases
 * all of it; afterwards every call on the handle returns NN_ERR_DISPOSED.  The
 * small handle itself is freed by nn_session_free() (which disposes first when
 * needed), so a disposed handle is always safe to query.
 *
 * Ownership conventions used below:
 *   "session-owned, valid until X"  the caller must not free it and must not
 *                                   use it after X;
 *   "caller-owned"                  the caller frees it with the named function.
 *
 * Threading: one session must not be used from two threads at once.  Distinct
 * sessions are independent.
 */
#ifndef NN_H
#define NN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NN_MAX_RANK 8

typedef enum nn_status {
  NN_OK = 0,
  NN_ERR_INVALID_ARG,   /* the caller passed something wrong (NULL, bad index, ...) */
  NN_ERR_NOMEM,         /* an allocation failed */
  NN_ERR_IO,            /* the model (or its external data) cannot be read */
  NN_ERR_PARSE,         /* not an ONNX model: the protobuf does not decode */
  NN_ERR_INVALID_MODEL, /* decodes, but the graph is wrong: cycle, missing producer, bad attribute */
  NN_ERR_UNSUPPORTED,   /* operator, operator version or data type not implemented */
  NN_ERR_SHAPE,         /* shapes do not agree (model or inputs) */
  NN_ERR_DTYPE,         /* data types do not agree (model or inputs) */
  NN_ERR_LIMIT,         /* the model asks for more than the session's limits allow */
  NN_ERR_DISPOSED,      /* the session was disposed */
  NN_ERR_BACKEND,       /* the backend (Vulkan) failed */
  NN_ERR_NO_DEVICE,     /* no usable Vulkan device */
  NN_ERR_RUNTIME,       /* a kernel failed on the data (e.g. an index out of range) */
  NN_ERR_MISSING_INPUT, /* a required input was neither filled nor bound */
} nn_status;

/* Static string naming a status, e.g. "NN_ERR_UNSUPPORTED". */
const char *nn_status_str(nn_status st);

/* Element types: the numeric values are ONNX's TensorProto.DataType. */
typedef enum nn_dtype {
  NN_DTYPE_UNDEFINED = 0,
  NN_DTYPE_FLOAT = 1,
  NN_DTYPE_UINT8 = 2,
  NN_DTYPE_INT8 = 3,
  NN_DTYPE_UINT16 = 4,
  NN_DTYPE_INT16 = 5,
  NN_DTYPE_INT32 = 6,
  NN_DTYPE_INT64 = 7,
  NN_DTYPE_STRING = 8,
  NN_DTYPE_BOOL = 9,
  NN_DTYPE_FLOAT16 = 10,
  NN_DTYPE_DOUBLE = 11,
  NN_DTYPE_UINT32 = 12,
  NN_DTYPE_UINT64 = 13,
  NN_DTYPE_COMPLEX64 = 14,
  NN_DTYPE_COMPLEX128 = 15,
  NN_DTYPE_BFLOAT16 = 16,
} nn_dtype;

/* An element of an NN_DTYPE_STRING tensor: len bytes of UTF-8 at data, not
 * NUL-terminated (data may be NULL when len is 0; a zeroed tensor holds empty
 * strings).  A view: the bytes are not the tensor's.  Inputs: the caller's
 * bytes, which must stay valid until nn_session_run returns.  Outputs: bytes
 * the session made (valid until the next run, re-plan or dispose, like the
 * output tensors themselves), the model's constants, or, for a string the
 * graph passes through unchanged (Identity, Gather, ...), the input's own
 * bytes: copy what must outlive the inputs. */
typedef struct nn_string {
  const char *data;
  size_t len;
} nn_string;

/* Size in bytes of one element (sizeof(nn_string) for NN_DTYPE_STRING); 0
 * for types the runtime cannot hold. */
size_t nn_dtype_size(nn_dtype dt);
/* Static lower-case name, e.g. "float32"; "undefined" for unknown values. */
const char *nn_dtype_name(nn_dtype dt);

/* A dense, row-major tensor.  Who owns `data` is stated by the function that
 * hands the tensor out. */
typedef struct nn_tensor {
  nn_dtype dtype;
  int rank;                    /* 0 .. NN_MAX_RANK; rank 0 is a scalar */
  int64_t dims[NN_MAX_RANK];
  void *data;
  size_t nbytes;               /* numel * nn_dtype_size(dtype) */
} nn_tensor;

/* Number of elements (1 for a scalar, 0 when a dim is 0). */
int64_t nn_tensor_numel(const nn_tensor *t);

/* ---- memory hooks ---------------------------------------------------------
 * Every heap allocation the runtime makes goes through these (protobuf
 * decoding included), so tests and applications can count or cap them.
 * Install before creating the first session; NULL restores libc malloc.
 * Returns NN_ERR_INVALID_ARG while any session or Vulkan context is alive. */
typedef struct nn_allocator {
  void *(*malloc)(size_t size, void *ud);
  void *(*realloc)(void *ptr, size_t size, void *ud);
  void (*free)(void *ptr, void *ud);
  void *ud;
} nn_allocator;

nn_status nn_set_allocator(const nn_allocator *a);

/* Process-wide bytes currently allocated through the hooks, and the peak. */
void nn_memory_usage(size_t *current, size_t *peak);

/* ---- log -------------------------------------------------------------------
 * The runtime's own messages (which nodes fall back to the CPU, Vulkan
 * validation reports, ...).  By default they go to stderr; an application
 * (the GStreamer element routes them into its GST_DEBUG category) installs
 * a function instead.  It may be called from any thread the runtime uses and
 * must not call back into the runtime.  NULL restores stderr. */
typedef enum nn_log_level {
  NN_LOG_ERROR = 0,
  NN_LOG_WARNING,
  NN_LOG_INFO,
  NN_LOG_DEBUG,
} nn_log_level;

typedef void (*nn_log_fn)(nn_log_level level, const char *msg, void *ud);
void nn_set_log(nn_log_fn fn, void *ud);

/* ---- sessions -------------------------------------------------------------- */
typedef enum nn_backend {
  NN_BACKEND_CPU = 0,
  NN_BACKEND_VULKAN = 1,
  NN_BACKEND_AUTO = 2,          /* Vulkan when a device exists, else CPU */
} nn_backend;

/* Hard caps on what a model may ask for; exceeding one fails with NN_ERR_LIMIT.
 * nn_options_init() sets generous defaults; 0 means "use the default". */
typedef struct nn_limits {
  int max_rank;                  /* default NN_MAX_RANK */
  int64_t max_tensor_elems;      /* any single tensor (and any one of its
                                    dims, even when another is 0); default 2^31 */
  int64_t max_weights_bytes;     /* total initializer bytes plus constants
                                    folded at plan time; default 4 GiB */
  int64_t max_arena_bytes;       /* planned intermediate arena, any one node's
                                    workspace, and (separately) all input and
                                    output buffers together; default 8 GiB */
  int max_nodes;                 /* default 1,000,000 */
  int max_graph_depth;           /* longest dependency chain; default 100,000 */
  int64_t max_model_bytes;       /* file or buffer size; default 2 GiB */
} nn_limits;

typedef struct nn_options {
  nn_backend backend;            /* default NN_BACKEND_CPU */
  int threads;                   /* worker threads for kernels; default 1 */
  const char *base_dir;          /* directory for external data when creating
                                    from memory; NULL forbids external data */
  nn_limits limits;
} nn_options;

void nn_options_init(nn_options *opt);

typedef struct nn_session nn_session;

/* Error details: which node, which op, what is wrong. */
typedef struct nn_error {
  nn_status status;
  char msg[512];
} nn_error;

/* Create a session.  On success *out is a caller-owned handle to release with
 * nn_session_free().  On failure *out is NULL, nothing is leaked and `err`
 * (optional) says why.  The session copies everything it needs: the file or
 * buffer may be freed as soon as this returns. */
nn_status nn_session_create_from_file(const char *path, const nn_options *opt,
                                      nn_session **out, nn_error *err);
nn_status nn_session_create_from_memory(const void *data, size_t size,
                                        const nn_options *opt, nn_session **out,
                                        nn_error *err);

/* Message of the last failed call on this session ("" when none).
 * Session-owned, valid until the next call on the session. */
const char *nn_session_last_error(const nn_session *s);

/* Description of one input or output.  `name` is session-owned, valid until
 * dispose.  dims[i] == -1 marks a dynamic dimension not yet fixed. */
/* What an input or output holds: a tensor, a sequence of tensors, or an
 * optional (a tensor, a sequence of tensors, or no value).  Sequences and
 * optionals go in through nn_session_set_input_items and come out through
 * nn_session_output_items; their dtype is the items' (UNDEFINED when the
 * model does not say) and their rank -1. */
typedef enum nn_io_kind {
  NN_IO_TENSOR = 0,
  NN_IO_SEQUENCE = 1,
  NN_IO_OPTIONAL = 2,
} nn_io_kind;

typedef struct nn_io_info {
  const char *name;
  nn_dtype dtype;
  int rank;
  int64_t dims[NN_MAX_RANK];
  int has_default;               /* input backed by an initializer: optional */
  nn_io_kind kind;               /* NN_IO_TENSOR for every tensor */
  int holds_sequence;            /* NN_IO_OPTIONAL: declared to hold a sequence */
} nn_io_info;

/* Inputs are numbered with the required ones first (graph order), then the
 * optional ones that have an initializer as default. */
nn_status nn_session_io_count(const nn_session *s, int *n_inputs, int *n_outputs);
nn_status nn_session_input_info(const nn_session *s, int index, nn_io_info *info);
/* Output dims are those of the current plan (known after the first run or
 * after all input shapes are fixed). */
nn_status nn_session_output_info(const nn_session *s, int index, nn_io_info *info);
nn_status nn_session_find_input(const nn_session *s, const char *name, int *index);
nn_status nn_session_find_output(const nn_session *s, const char *name, int *index);

/* Fix the shape of an input (dynamic dims, or a different size).  Allocates:
 * the next run re-plans once, reusing the arena when it fits. */
nn_status nn_session_set_input_shape(nn_session *s, int index, int rank,
                                     const int64_t *dims);

/* The session's pre-allocated input tensor, to be filled by the caller.
 * Session-owned; valid until dispose or the next set_input_shape on it.
 * For an optional input, asking for its tensor means "I feed this input";
 * nn_session_reset_input() goes back to the default. */
nn_status nn_session_input_tensor(nn_session *s, int index, nn_tensor **t);

/* Zero-copy: the session reads this input straight from caller memory
 * (t->data, borrowed, must stay valid while runs use it, until unbound).
 * A shape different from the current plan behaves as set_input_shape. */
nn_status nn_session_bind_input(nn_session *s, int index, const nn_tensor *t);
/* Back to the pre-allocated tensor (required input) or the default (optional). */
nn_status nn_session_reset_input(nn_session *s, int index);

/* Caller-provided output memory: the next runs write this output into
 * t->data (borrowed; t->nbytes must equal the planned output size at run
 * time).  NULL returns to session-owned output memory. */
nn_status nn_session_bind_output(nn_session *s, int index, const nn_tensor *t);

/* Run the graph.  After the first run with given shapes this makes no heap
 * allocation and creates no backend object. */
nn_status nn_session_run(nn_session *s);

/* Result of the last run.  Session-owned, valid until the next run,
 * set_input_shape or dispose (on the CPU backend an output made by a step
 * has a slot in the planned arena, which the next run's intermediates
 * reuse: copy it, or bind the output, to keep it past that).  With a bound
 * output, data points to the caller's memory. */
nn_status nn_session_output_tensor(nn_session *s, int index, const nn_tensor **t);

/* A sequence or optional input (nn_io_info.kind): the session copies the n
 * tensors, data included (the caller's stay the caller's).  An optional
 * takes n = 0 for no value, or its value: one tensor, or (holds_sequence) a
 * sequence of n.  A different item count or item shape than the last run's
 * re-plans at the next run, as a new input shape does. */
nn_status nn_session_set_input_items(nn_session *s, int index, int n, const nn_tensor *items);
/* A sequence or optional output of the last run: *n items, session-owned,
 * valid until the next run, re-plan or dispose; *none (may be NULL) is set
 * for an optional without a value (then *n is 0). */
nn_status nn_session_output_items(nn_session *s, int index, int *n, const nn_tensor **items,
                                  int *none);

/* Work on the session's worker threads (the CPU kernels' pool), e.g. the
 * pixel conversion in front of a run (nn_image.h).  fn(arg, begin, end) is
 * called over chunks covering [0, n), each at least `grain` items, and this
 * returns when all are done; serially on the calling thread when the session
 * has no workers.  fn must not allocate nor call into the session.
 * NN_ERR_DISPOSED after dispose (fn is not called). */
typedef void (*nn_task_fn)(void *arg, int64_t begin, int64_t end);
nn_status nn_session_parallel_for(nn_session *s, int64_t n, int64_t grain,
                                  nn_task_fn fn, void *arg);
/* Threads taking part in nn_session_parallel_for (1 when serial; 0 for NULL
 * or a disposed session), and, inside fn, the index of the calling thread
 * in [0, that number): callers use it to pick per-thread scratch. */
int nn_session_parallel_width(const nn_session *s);
int nn_session_worker_index(void);

/* With threads > 1 the CPU backend's first runs of a plan (after a create or
 * a new input shape) time each step on the worker pool and on the calling
 * thread alone, then run each step the faster way (NN_THREAD_TUNE=0: always
 * the pool).  This many runs, the first included; a benchmark of the steady
 * state warms up past them.  Results do not depend on the choice. */
#define NN_CPU_CALIBRATION_RUNS 13

typedef struct nn_stats {
  size_t weights_bytes;          /* constants owned by the session (after folding) */
  size_t arena_bytes;            /* planned intermediate arena */
  size_t arena_naive_bytes;      /* sum of all intermediates, as if none were reused */
  size_t io_bytes;               /* pre-allocated input tensors and the output tensors
                                    outside the arena (all on Vulkan; on the CPU those
                                    no step makes), and the bytes held for string outputs */
  size_t device_bytes;           /* GPU memory (Vulkan backend) */
  size_t staging_bytes;          /* host-visible staging memory (Vulkan backend) */
  size_t peak_bytes;             /* peak of weights+arena+io+device+staging */
  int nodes_cpu;                 /* executed nodes per backend, after graph passes */
  int nodes_vulkan;
  int nodes_folded;              /* nodes evaluated once at plan time */
  uint64_t runs;
  nn_backend backend;            /* backend actually in use */
  int nodes_cpu_one_thread;      /* of nodes_cpu, with threads > 1: the steps that run on
                                    the calling thread alone, having been timed faster so
                                    in the plan's first runs (0 until then, and with
                                    NN_THREAD_TUNE=0) */
} nn_stats;

nn_status nn_session_stats(const nn_session *s, nn_stats *st);

/* Release everything the session owns.  The handle stays valid: every later
 * call returns NN_ERR_DISPOSED.  Disposing twice returns NN_ERR_DISPOSED. */
nn_status nn_session_dispose(nn_session *s);

/* Dispose (if not yet) and free the handle.  NULL is a no-op. */
void nn_session_free(nn_session *s);

/* Whether a Vulkan device usable for compute exists (creates and drops the
 * shared context).  Returns NN_OK when one exists, NN_ERR_NO_DEVICE when not,
 * NN_ERR_UNSUPPORTED when built without Vulkan; `err` says which device or why. */
nn_status nn_vulkan_available(nn_error *err);

/* With env NN_VULKAN_VALIDATION=1 the Khronos validation layer is enabled;
 * this counts the warnings and errors it reported in this process (objects
 * left alive at device destruction included).  0 without Vulkan. */
uint64_t nn_vulkan_validation_messages(void);

#ifdef __cplusplus
}
#endif

#endif /* NN_H */
