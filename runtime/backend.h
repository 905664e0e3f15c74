/* backend.h - the one interface between the session and an execution backend.
 *
 * The session (session.c) knows nothing of CPUs or GPUs: it loads the graph,
 * plans it (plan.c: shapes, constant folding, arena offsets) and hands the
 * plan to the backend it chose through this table.  Each backend lives in its
 * own folder (cpu/, vulkan/) and is the only code that includes that
 * folder's headers; the session reaches it through the two symbols below.
 *
 * Partitioning is generic (partition.c): the session asks the backend, step
 * by step, whether it supports the node (supports_node); the steps it does
 * not take run on the host through the node's reference CPU kernel
 * (kern->run).  A backend that owns a device records the whole plan, host steps
 * included, because only it knows where each value lives (device buffer or
 * host mirror) and which transfers a host step needs.
 *
 * Life of one backend instance (one per session):
 *   create          acquire the device / nothing (CPU); NN_ERR_NO_DEVICE when
 *                   the backend exists in this build but no device does
 *   before_plan     the graph is about to be re-planned: give back anything
 *                   that points into the previous plan and restore every
 *                   constant the backend re-laid out to the ONNX layout
 *   build           after nn_plan_build: place the arena, re-lay out weights
 *                   the backend's kernels read in their own layout, record
 *   run             execute the plan once (inputs already bound)
 *   stats           counters for nn_session_stats
 *   destroy         everything above; the instance pointer dies
 * A failed build leaves the instance ready for another build or destroy.
 */
#ifndef NN_BACKEND_H
#define NN_BACKEND_H

#include "graph.h"

typedef struct nn_backend_stats {
  int nodes_host;             /* executed steps run by the host reference kernels */
  int nodes_device;           /* executed steps run by the backend's own kernels */
  size_t host_bytes;          /* host memory the backend holds for the plan (arena) */
  size_t weight_bytes;        /* extra copies of weights in the backend's layout */
  size_t device_bytes;        /* device memory */
  size_t staging_bytes;       /* host-visible transfer buffers */
  int nodes_one_thread;       /* of nodes_host: the steps that run on the calling thread
                                 alone because they were faster so (cpu_backend.c) */
} nn_backend_stats;

typedef struct nn_backend_iface {
  const char *name;           /* "cpu", "vulkan": messages and nn-run */
  nn_backend kind;
  unsigned fusions;           /* NN_FUSE_* (graph.h) its kernels implement: the planner
                                 makes those fusions only for such a backend */
  /* *state is owned by the backend, released by destroy. */
  nn_status (*create)(void **state, nn_error *err);
  /* A device that only emulates an accelerator on the CPU (lavapipe):
   * NN_BACKEND_AUTO passes over it.  NULL = never. */
  bool (*is_software)(const void *state);
  /* Can this backend's own kernels run the (prepared) node?  NULL = all. */
  bool (*supports_node)(const void *state, const nn_node *n);
  /* NULL = nothing to do. */
  nn_status (*before_plan)(void *state, nn_graph *g, nn_error *err);
  /* on_device[k] tells for plan step k whether supports_node() took it
   * (partition.c); ctx is the session's kernel context for host steps. */
  nn_status (*build)(void *state, nn_graph *g, nn_plan *plan, const bool *on_device,
                     nn_ctx *ctx, nn_error *err);
  nn_status (*run)(void *state, nn_ctx *ctx, nn_error *err);
  void (*stats)(const void *state, nn_backend_stats *st);
  void (*destroy)(void *state);
} nn_backend_iface;

/* The CPU backend (cpu/cpu_backend.c): always present.  Its kernel tables
 * are also the reference every other backend falls back to. */
extern const nn_backend_iface nn_backend_cpu;

/* The Vulkan backend (vulkan/vk_backend_iface.c), or NULL when this build
 * has none (vulkan/vk_absent.c). */
const nn_backend_iface *nn_backend_vulkan(void);

/* CPU kernel lookup (cpu/registry.c): the reference kernels every node
 * resolves to at nn_graph_finalize (the planner folds with them, a device
 * backend runs what it refuses with them).  NULL when the CPU has none. */
const nn_kernel *nn_kernel_find(const char *domain, const char *op_type);

/* partition.c: on_device[k] for every plan step k: supports_node() of the
 * backend, minus the op types the NN_VULKAN_CPU_OPS knob sends to the host
 * (tests use it to exercise the transfers on real nets).  Returns the number
 * of steps on the device. */
int nn_partition_steps(const nn_backend_iface *b, const void *state, const nn_graph *g,
                       const nn_plan *plan, bool *on_device);

#endif /* NN_BACKEND_H */
