/* vk_backend.h - the Vulkan compute backend: internal API.
 *
 * Layers, bottom up (each file owns one):
 *
 *   vk_context.c  nn_vk_ctx   one VkInstance/VkDevice/queue per process,
 *                             refcounted, shared by every session
 *   vk_memory.c   nn_vk_mem   per-session sub-allocator over a few large
 *                             VkDeviceMemory blocks (device-local and
 *                             host-visible staging)
 *   vk_exec.c     nn_vk_exec  per-session pipelines (from the embedded
 *                             SPIR-V), descriptor sets, command buffers:
 *                             record once, replay with one submit + one
 *                             fence wait per run
 *   vk_<family>.c nn_vk_op    one file per op family (unary, binary, cast,
 *                 nn_vk_k_*   conv, pool, norm, gemm, reduce, softmax, shape,
 *                             transform, resize: the CPU backend's families):
 *                             per ONNX op, does the Vulkan backend support
 *                             this node, and record it (node -> kernels);
 *                             then the family's compute kernels (parameters
 *                             -> push constants, specialization constants,
 *                             bindings, group counts -> nn_vk_exec_dispatch,
 *                             declared in vk_kernels.h) and its op table.
 *                             Shared helpers: vk_op_util.h/.c.
 *   vk_registry.c             nn_vk_op_find over the family tables
 *   vk_graph.c    nn_vk_graph a planned graph on the device: weights, arena,
 *                             I/O, the recorded command buffers, CPU
 *                             fallback segments
 *
 * Ownership, in one paragraph: the context is shared and refcounted
 * (acquire/release); everything else is owned by exactly one session.  A
 * session creates its nn_vk_mem and nn_vk_exec against an acquired context,
 * destroys them (exec first, then mem) before releasing the context.
 * nn_vk_buf is a plain value describing a sub-allocation: it is owned by
 * whoever called nn_vk_mem_alloc and given back with nn_vk_mem_free; the
 * VkBuffer inside it belongs to the allocator and must never be destroyed by
 * the holder.  nn_vk_tensor is a borrowed view (buffer, offset, size) that is
 * valid as long as the sub-allocation it points into.
 *
 * Threading: nn_vk_ctx_acquire/release and queue submission are thread-safe;
 * one nn_vk_mem/nn_vk_exec must not be used by two threads at once (a
 * session is single-threaded by contract, see nn.h).
 *
 * Element type: the compute kernels work on float32.  The copy kernels
 * (copy, pad) move 32-bit words, so they serve int32 too; 64-bit types are
 * copied as pairs of words by the op layer.  The typed kernels (comparisons
 * and logic, Where, Cast, integer arithmetic, ArgMax/ArgMin) read and write
 * any numeric type and bool as 32-bit words (shaders/elem.glsl): narrow
 * elements packed, a word written whole, which the 64-byte granules of
 * every allocation and arena offset make safe.
 */
#ifndef NN_VK_BACKEND_H
#define NN_VK_BACKEND_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

#include "graph.h"
#include "nn_internal.h"
#include "../../shaders/nn_vk_kinds.h"

/* ==== context (vk_context.c) ============================================== */

typedef struct nn_vk_ctx {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;  /* VK_NULL_HANDLE without validation */
  VkPhysicalDevice phys;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  uint32_t device_index;               /* in vkEnumeratePhysicalDevices order */
  uint32_t api_version;                /* min(instance, device) version in use */
  VkPhysicalDeviceProperties props;
  VkPhysicalDeviceMemoryProperties mem_props;
  uint32_t subgroup_size;
  bool storage16;                      /* storageBuffer16BitAccess enabled */
  /* Device-local memory the host can map, on a device that shares memory
   * with the host (integrated GPU, lavapipe): the backend then binds I/O and
   * uploads weights through the mapping instead of staging copies.
   * Env NN_VULKAN_UNIFIED=0 turns it off (tests the staging paths). */
  bool unified_memory;
  bool validation;                     /* Khronos validation layer active */
  /* A CPU implementation (lavapipe): run each new pipeline once at record
   * time (see warm_pipeline in vk_exec.c). */
  bool warm_pipelines;
  VkPipelineCache pipeline_cache;      /* shared by the sessions' pipelines */
  pthread_mutex_t queue_lock;          /* VkQueue needs external sync */
  int refs;                            /* guarded by the process-wide lock */
} nn_vk_ctx;

/* Take a reference on the process-wide context, creating it on first use.
 * *out is valid until the matching nn_vk_ctx_release().  Device choice:
 * discrete > integrated > virtual > CPU, or env NN_VULKAN_DEVICE=index|name
 * substring.  Env NN_VULKAN_VALIDATION=1 enables the Khronos validation layer
 * (with synchronization validation) and a debug messenger that counts every
 * warning and error in nn_vk_validation_messages().
 * Errors: NN_ERR_NO_DEVICE (no loader/ICD/device, or NN_VULKAN_DEVICE matches
 * none), NN_ERR_BACKEND (a Vulkan call failed), NN_ERR_NOMEM. */
nn_status nn_vk_ctx_acquire(nn_vk_ctx **out, nn_error *err);
/* Drop a reference; the last one destroys the device and the instance.
 * NULL is a no-op. */
void nn_vk_ctx_release(nn_vk_ctx *ctx);

/* Process-wide counts of warnings and errors reported to the messenger
 * since start: validation (and performance) reports, and general ones (the
 * loader: "no driver found", a broken ICD manifest).  Tests require both to
 * stay 0, except the no-device test, which expects the loader's report. */
uint64_t nn_vk_validation_messages(void);
uint64_t nn_vk_general_messages(void);
/* Whether a context currently exists (tests: destroyed with the last ref). */
bool nn_vk_ctx_alive(void);
/* Number of contexts created since process start (tests: reuse vs re-create). */
uint64_t nn_vk_ctx_generation(void);

/* VkResult -> static name, and the usual "call failed" error. */
const char *nn_vk_result_str(VkResult r);
nn_status nn_vk_fail(nn_error *err, VkResult r, const char *what);

/* ==== memory (vk_memory.c) ================================================= */

typedef enum nn_vk_mem_kind {
  /* Device-local: weights and the intermediate arena.  Mapped for the host
   * (buf.host != NULL) only where memory is unified. */
  NN_VK_MEM_DEVICE = 0,
  /* Host-visible and persistently mapped: staging for uploads, inputs and
   * outputs.  Prefers HOST_CACHED (fast readback) and HOST_COHERENT. */
  NN_VK_MEM_HOST = 1,
  NN_VK_MEM_KINDS
} nn_vk_mem_kind;

typedef struct nn_vk_block nn_vk_block;
typedef struct nn_vk_mem nn_vk_mem;

/* A sub-allocation.  Owned by the caller of nn_vk_mem_alloc, returned with
 * nn_vk_mem_free.  `buffer` is the block's VkBuffer (allocator-owned): bind
 * it at `offset`.  `host` is the persistent mapping of [offset, offset+size)
 * or NULL when the memory is not host-visible; valid until freed. */
typedef struct nn_vk_buf {
  VkBuffer buffer;
  VkDeviceSize offset;
  VkDeviceSize size;
  void *host;
  nn_vk_block *block;
  nn_vk_mem_kind kind;
} nn_vk_buf;

typedef struct nn_vk_mem_stats {
  size_t device_bytes;    /* VkDeviceMemory held for NN_VK_MEM_DEVICE */
  size_t staging_bytes;   /* VkDeviceMemory held for NN_VK_MEM_HOST */
  size_t device_used;     /* bytes of live sub-allocations, per kind */
  size_t staging_used;
  int blocks;             /* live VkDeviceMemory objects */
  int allocs;             /* live sub-allocations */
} nn_vk_mem_stats;

/* Create a sub-allocator.  *out is owned by the caller (the session) and
 * destroyed with nn_vk_mem_destroy before ctx is released. */
nn_status nn_vk_mem_create(nn_vk_ctx *ctx, nn_vk_mem **out, nn_error *err);
/* Free every block (live sub-allocations included).  NULL is a no-op. */
void nn_vk_mem_destroy(nn_vk_mem *m);
/* Sub-allocate `size` bytes (> 0).  Alignment: the buffer's
 * VkMemoryRequirements, minStorageBufferOffsetAlignment, nonCoherentAtomSize
 * for host memory, and 64 bytes at least.  Requests larger than the default
 * block get a block of their own; empty blocks are freed at once, so the
 * byte counters follow the live allocations. */
nn_status nn_vk_mem_alloc(nn_vk_mem *m, nn_vk_mem_kind kind, VkDeviceSize size,
                          nn_vk_buf *out, nn_error *err);
/* Give a sub-allocation back and zero *b.  A zeroed nn_vk_buf is a no-op. */
void nn_vk_mem_free(nn_vk_mem *m, nn_vk_buf *b);
/* Host writes -> device (flush) and device writes -> host (invalidate) for
 * [off, off+size) of a mapped buffer; no-ops on coherent memory. */
nn_status nn_vk_mem_flush(nn_vk_mem *m, const nn_vk_buf *b, VkDeviceSize off,
                          VkDeviceSize size, nn_error *err);
nn_status nn_vk_mem_invalidate(nn_vk_mem *m, const nn_vk_buf *b, VkDeviceSize off,
                               VkDeviceSize size, nn_error *err);
void nn_vk_mem_get_stats(const nn_vk_mem *m, nn_vk_mem_stats *st);

/* ==== execution (vk_exec.c) ================================================ */

/* A borrowed view of bytes in a VkBuffer; valid while the memory it points
 * into is.  Offsets of float tensors are multiples of 4. */
typedef struct nn_vk_tensor {
  VkBuffer buffer;
  VkDeviceSize offset;
  VkDeviceSize size;
} nn_vk_tensor;

static inline nn_vk_tensor nn_vk_view(const nn_vk_buf *b, VkDeviceSize off, VkDeviceSize size) {
  nn_vk_tensor t = {b->buffer, b->offset + off, size};
  return t;
}

#define NN_VK_MAX_BINDINGS 6
#define NN_VK_MAX_SPEC 16
#define NN_VK_PUSH_WORDS 32    /* 128 bytes: the minimum every device offers */

/* One compute dispatch.  Fill with nn_vk_dispatch_init and
 * nn_vk_dispatch_bind; the kernels (vk_kernels.h) do this. */
typedef struct nn_vk_dispatch {
  int shader;                            /* NN_VK_SHADER_* (nn_vk_spirv.h) */
  int n_spec;                            /* constant_id 0 .. n_spec-1 */
  uint32_t spec[NN_VK_MAX_SPEC];
  int n_bindings;
  nn_vk_tensor bind[NN_VK_MAX_BINDINGS]; /* already aligned down */
  bool write[NN_VK_MAX_BINDINGS];
  uint32_t push[NN_VK_PUSH_WORDS];
  uint32_t groups[3];
} nn_vk_dispatch;

typedef struct nn_vk_exec nn_vk_exec;

/* Host work between two device segments (CPU fallback nodes).  Runs after
 * every device command recorded before it completed and its writes are
 * visible to the host; host writes it makes are seen by the commands
 * recorded after it (on non-coherent memory it must nn_vk_mem_flush them).
 * Must not allocate (it runs on every nn_vk_exec_run). */
typedef nn_status (*nn_vk_host_fn)(void *arg, nn_error *err);

typedef struct nn_vk_exec_stats {
  int dispatches;         /* in the current recording */
  int barriers;
  int copies;
  int segments;           /* command buffers submitted per run */
  int host_steps;
  int pipelines;          /* live VkPipeline objects of this exec */
  int descriptor_sets;
  uint64_t runs;
} nn_vk_exec_stats;

/* Create the per-session execution state.  *out is owned by the caller and
 * destroyed with nn_vk_exec_destroy before ctx is released. */
nn_status nn_vk_exec_create(nn_vk_ctx *ctx, nn_vk_exec **out, nn_error *err);
/* Destroy pipelines, descriptor pools, command buffers, fence.  Must not be
 * called while a run is in progress.  NULL is a no-op. */
void nn_vk_exec_destroy(nn_vk_exec *e);

/* Recording.  begin() drops the previous recording (descriptor sets and
 * command buffers are reset and reused; pipelines are kept), then
 * dispatch/copy/fill/host_step append, end() closes it.  Barriers are
 * inserted automatically: a command that reads or writes a range written by
 * an earlier command since the last barrier (or writes a range read since
 * then) gets a memory barrier first.  Recording may allocate; running never
 * does. */
nn_status nn_vk_exec_begin(nn_vk_exec *e, nn_error *err);
void nn_vk_dispatch_init(nn_vk_dispatch *d, int shader);
/* Bind t at binding `slot` (writing when `write`).  Descriptor offsets must
 * be aligned to minStorageBufferOffsetAlignment, so the binding starts at the
 * aligned-down offset and the return value is the distance to t->offset in
 * 4-byte words: the kernel adds it to its indices (every shader takes these
 * offsets in its push constants). */
uint32_t nn_vk_dispatch_bind(const nn_vk_exec *e, nn_vk_dispatch *d, int slot,
                             const nn_vk_tensor *t, bool write);
nn_status nn_vk_exec_dispatch(nn_vk_exec *e, const nn_vk_dispatch *d, nn_error *err);
nn_status nn_vk_exec_copy(nn_vk_exec *e, const nn_vk_tensor *src,
                          const nn_vk_tensor *dst, nn_error *err);
/* Fill dst with a 32-bit pattern (offset and size multiples of 4). */
nn_status nn_vk_exec_fill(nn_vk_exec *e, const nn_vk_tensor *dst, uint32_t word,
                          nn_error *err);
/* End the current command buffer, run fn on the host, start the next one. */
nn_status nn_vk_exec_host_step(nn_vk_exec *e, nn_vk_host_fn fn, void *arg, nn_error *err);
nn_status nn_vk_exec_end(nn_vk_exec *e, nn_error *err);

/* Replay the recording: per segment one submit and one fence wait, then its
 * host step.  Without host steps that is one submit + one wait per run.  No
 * allocation, no Vulkan object creation. */
nn_status nn_vk_exec_run(nn_vk_exec *e, nn_error *err);

/* One-shot transfers for set-up time (weights, tests): copy host bytes into
 * dst / dst bytes to the host.  A mapped buffer is accessed directly;
 * otherwise the bytes go through a temporary staging buffer from m and a
 * one-time command buffer (submit + wait), ordered by barriers against
 * everything submitted before and after.  They use their own command buffer,
 * so they may be called while a recording is open (vk_graph.c uploads
 * constants on first use that way).  Not for the per-run path: they
 * allocate. */
nn_status nn_vk_exec_upload(nn_vk_exec *e, nn_vk_mem *m, const nn_vk_buf *dst,
                            VkDeviceSize dst_off, const void *src, size_t size,
                            nn_error *err);
nn_status nn_vk_exec_download(nn_vk_exec *e, nn_vk_mem *m, const nn_vk_buf *src,
                              VkDeviceSize src_off, void *dst, size_t size,
                              nn_error *err);

void nn_vk_exec_get_stats(const nn_vk_exec *e, nn_vk_exec_stats *st);
nn_vk_ctx *nn_vk_exec_ctx(const nn_vk_exec *e);

/* ==== ops (vk_registry.c, vk_<family>.c) ==================================
 * The compute kernels under the ops are declared in vk_kernels.h; the op
 * layer's shared helpers in vk_op_util.h.
 *
 * Recording context handed to the op table by vk_graph.c (which implements
 * the nn_vk_rec_* functions): it owns the device views of the plan's
 * values. */
typedef struct nn_vk_rec nn_vk_rec;

nn_vk_exec *nn_vk_rec_exec(nn_vk_rec *r);
/* Device view of a value of the plan: arena values at their planned offset,
 * graph inputs/outputs in their own buffers, constants uploaded on first
 * use (set-up time).  Valid until the next nn_vk_graph_build/destroy. */
nn_status nn_vk_rec_value(nn_vk_rec *r, const nn_value *v, nn_vk_tensor *t, nn_error *err);
/* A constant derived at record time (BatchNormalization's scale and
 * shift): copied to device memory owned by the graph. */
nn_status nn_vk_rec_const(nn_vk_rec *r, const void *data, size_t bytes, nn_vk_tensor *t,
                          nn_error *err);

typedef struct nn_vk_op {
  const char *name;                              /* ONNX op_type, default domain */
  /* Can the kernels compute this node, as prepared for the current plan,
   * exactly as the CPU backend does?  Refused nodes run on the CPU. */
  bool (*supports)(const nn_vk_ctx *ctx, const nn_node *n);
  /* Record its dispatches/copies (only called after supports()). */
  nn_status (*record)(nn_vk_rec *r, const nn_node *n, nn_error *err);
} nn_vk_op;

/* The Vulkan implementation of a node's op type, NULL when there is none
 * (vk_registry.c: a lookup over the families' nn_vk_ops_<family>[]). */
const nn_vk_op *nn_vk_op_find(const nn_node *n);
bool nn_vk_op_supported(const nn_vk_ctx *ctx, const nn_node *n);

/* ==== a planned graph on the device (vk_graph.c) ==========================
 *
 * Lifetime: one nn_vk_graph per session, created with the session (it holds
 * its own reference on the shared context, its memory and its pipelines),
 * built once per plan, run per nn_session_run, destroyed at dispose.
 *
 *   nn_vk_graph_create   acquire the context; create nn_vk_mem + nn_vk_exec
 *   nn_vk_graph_build    after nn_plan_build, with the partition's choice of
 *                        Vulkan or CPU per step (on_dev[step]),
 *                        upload constants, lay the arena on the device,
 *                        record the command buffers (with CPU fallback
 *                        segments) -- and bind the plan's arena values to
 *                        host memory for the CPU steps (see below)
 *   nn_vk_graph_run      copy graph inputs in (from value->data), replay,
 *                        copy graph outputs out (to value->data)
 *   nn_vk_graph_destroy  everything above, then release the context
 */
typedef struct nn_vk_graph nn_vk_graph;

typedef struct nn_vk_graph_stats {
  int nodes_vulkan;          /* plan steps recorded on the device */
  int nodes_cpu;             /* plan steps run by the CPU kernels */
  int segments;              /* command buffers submitted per run */
  int dispatches;
  int barriers;
  int pipelines;
  size_t device_bytes;       /* VkDeviceMemory held for weights, arena, I/O */
  size_t staging_bytes;      /* host-visible memory (staging, arena mirror) */
  uint64_t runs;
} nn_vk_graph_stats;

/* *out is owned by the caller (nn_vk_graph_destroy).  Acquires the shared
 * context: NN_ERR_NO_DEVICE when there is none. */
nn_status nn_vk_graph_create(nn_vk_graph **out, nn_error *err);
/* Whether the chosen device is a CPU implementation (lavapipe, SwiftShader):
 * backend=auto prefers the CPU kernels over it. */
bool nn_vk_graph_on_cpu_device(const nn_vk_graph *vg);
/* Build for the current plan.  g and plan are borrowed and must not change
 * until the next build or destroy; cpu (the session's kernel context, for
 * fallback nodes) likewise.  Any previous build is released first (its
 * device arena is kept when the new one fits).
 *
 * Arena: the graph calls nn_plan_bind_arena() itself with host memory that
 * CPU steps can use: on unified memory the mapping of the device arena
 * (zero copies), otherwise a host-visible mirror, kept in sync by copies
 * recorded around the CPU segments.  When every step runs on the device no
 * host arena exists and arena values keep data == NULL.  The caller's own
 * arena is not used. */
nn_status nn_vk_graph_build(nn_vk_graph *vg, nn_graph *g, nn_plan *plan, const bool *on_dev,
                            nn_ctx *cpu, nn_error *err);
/* Can the device kernels run this prepared node (the partition's question)? */
bool nn_vk_graph_supports(const nn_vk_graph *vg, const nn_node *n);
/* One inference.  Before it, every fed graph input has value->data set and
 * every graph output that is not known (folded) has value->data pointing at
 * its destination (as nn_session_run does for the CPU path).  No heap
 * allocation, no Vulkan object creation. */
nn_status nn_vk_graph_run(nn_vk_graph *vg, nn_error *err);
void nn_vk_graph_destroy(nn_vk_graph *vg);
void nn_vk_graph_get_stats(const nn_vk_graph *vg, nn_vk_graph_stats *st);
/* One line naming the op types that fall back to the CPU ("" when none).
 * Graph-owned, valid until the next build. */
const char *nn_vk_graph_fallback(const nn_vk_graph *vg);

#endif /* NN_VK_BACKEND_H */
