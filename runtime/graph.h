/* graph.h - the in-memory model: values, nodes, inputs/outputs, and the plan.
 *
 * Ownership: an nn_graph owns every name, attribute, node array and constant
 * buffer it points to; nn_graph_free() releases all of it.
 */
#ifndef NN_GRAPH_H
#define NN_GRAPH_H

#include "nn_internal.h"

typedef struct nn_opset {
  char *domain;
  int version;
} nn_opset;

/* Fusions a backend opts into (nn_backend_iface.fusions, nn_graph.fusions). */
#define NN_FUSE_RESIDUAL 1u  /* Add(Conv(x), r) -> Conv with r in its epilogue (res_slot) */
#define NN_FUSE_DW_PW 2u     /* depthwise Conv -> 1x1 Conv: one node (nn_node.pre) */
#define NN_FUSE_NORM_ACT 4u  /* BatchNormalization (inference) -> Relu / Clip: the
                                normalization applies it (nn_node.act) */
#define NN_FUSE_NORM_PW 8u   /* BatchNormalization (inference, its Relu / Clip fused),
                                or a Mul by per-channel scales computed at run time
                                (a squeeze-excitation gate), -> 1x1 Conv: the Conv
                                applies it to its input as it packs it (nn_node.pre) */
#define NN_FUSE_CONCAT 16u   /* Concat (one outer row) with its inputs planned inside
                                its output: their producers write it in place
                                (nn_value.alias_off), and the Concat copies nothing */
#define NN_FUSE_QDQ 64u      /* DequantizeLinear -> Conv / MatMul / Add / Mul /
                                GlobalAveragePool -> QuantizeLinear -> the 8-bit
                                operator of the same integers, MatMulInteger ->
                                Cast -> Mul -> MatMulIntegerToFloat (qdq.c), at load */
#define NN_FUSE_MATMUL_ADD 32u /* Add(MatMul(a, b), c) -> MatMul with c in its epilogue:
                                a constant c along the last axis as its bias (x[2]),
                                or a tensor of the output's shape as its residual
                                (res_slot 3) */

/* The outcome of planning for concrete input shapes. */
typedef struct nn_plan {
  int n_steps;
  int *steps;                /* node indices in execution order (folded nodes excluded) */
  size_t *ws_offsets;        /* per step: arena offset of the node's workspace */
  int n_extra;
  nn_value *extra;           /* plan-owned constants made by fusion passes */
  size_t arena_bytes;        /* planned size */
  size_t arena_naive_bytes;  /* sum of all intermediate sizes (and workspaces) */
  size_t folded_bytes;       /* constants produced at plan time: folded values, fusion
                                copies, kernels' pre-packed weights (priv_const_bytes) */
  int nodes_folded;
  /* Set by the caller before nn_plan_build (nn_plan_clear resets it): the
   * graph's tensor outputs made by steps get arena slots too, live from
   * their producer to the end of the run, so a large output shares memory
   * with the intermediates dead by then instead of sitting in a buffer of
   * its own.  Only where the arena is host memory the caller reads (CPU). */
  bool outputs_in_arena;
} nn_plan;

/* A graph: the model's main graph, or a subgraph (an If branch, a Loop or
 * Scan body) owned by the attribute of the node holding it. */
typedef struct nn_graph {
  int n_values, cap_values;
  nn_value *values;
  int n_nodes, cap_nodes;
  nn_node *nodes;
  /* graph inputs in API order (required first, then defaulted) and outputs;
   * indices into values */
  int n_inputs, n_outputs;
  int *inputs, *outputs;
  int n_opsets;
  nn_opset *opsets;
  int64_t ir_version;
  char *base_dir;            /* for external data; NULL when none allowed */
  size_t weights_bytes;      /* bytes of const_data owned by the graph */
  unsigned fusions;          /* NN_FUSE_* plan-time fusions the executing backend's
                                kernels implement (session.c sets it; 0 = only the
                                ones every backend has) */
  /* subgraphs: the enclosing graph (NULL for the main graph), the nesting
   * level (main = 0), and their own plan for the shapes their node last
   * prepared them with (the main graph's plan is the session's).  The
   * plan's arena is a region of the node's workspace, inside the session's
   * arena; scratch is a grow-only block (nn_aligned_alloc) for running it at
   * plan time, when the node is evaluated while planning. */
  struct nn_graph *parent;
  int depth;
  nn_plan plan;
  bool planned;
  void *scratch;
  size_t scratch_cap;
} nn_graph;


/* loader.c: decode an ONNX model into a graph.  *out is caller-owned, free
 * with nn_graph_free().  base_dir (may be NULL) anchors external data. */
nn_status nn_graph_load(const void *data, size_t size, const char *base_dir,
                        const nn_limits *lim, nn_graph **out, nn_error *err);
/* As nn_graph_load, from the regular file open on fd (nn_file_open; fsize
 * its size, path names it in errors), reading the main graph's large
 * initializers straight into their tensors (loader.c, "weights straight
 * from the file"): the model's bytes and its weights are never all in
 * memory at once.  Closes fd. */
nn_status nn_graph_load_fd(int fd, int64_t fsize, const char *path, const char *base_dir,
                           const nn_limits *lim, nn_graph **out, nn_error *err);
void nn_graph_free(nn_graph *g);

/* graph.c */
/* Add a value with the given name (copied); returns its index or -1 on OOM. */
int nn_graph_add_value(nn_graph *g, const char *name);
/* Index of the value with that name, -1 when none. */
int nn_graph_find_value(const nn_graph *g, const char *name);
/* Resolve ops (the op layer's nn_op_find) and versions, and each node's
 * kernel through find_kernel (the graph knows no kernel table: the session
 * passes the CPU's), check every input is produced exactly once, sort the
 * nodes topologically (cycle -> error), count uses, resolve x/y pointers. */
typedef const nn_kernel *(*nn_kernel_lookup_fn)(const char *domain, const char *op_type);
nn_status nn_graph_finalize(nn_graph *g, const nn_limits *lim, nn_kernel_lookup_fn find_kernel,
                            nn_error *err);
/* Recount value uses (consumers + graph output) over nodes not removed. */
nn_status nn_graph_count_uses(nn_graph *g);
/* Resolve node->x / node->y after values were added or nodes rewired. */
void nn_graph_resolve_pointers(nn_graph *g);
/* Subgraphs of a node: calls fn for each graph attribute. */
typedef nn_status (*nn_subgraph_fn)(nn_graph *sub, void *user);
nn_status nn_node_for_subgraphs(nn_node *n, nn_subgraph_fn fn, void *user);
/* Opset the model imports for a domain (a subgraph asks its main graph);
 * 0 when not imported. */
int nn_graph_opset(const nn_graph *g, const char *domain);

/* passes.c: structure-only rewrites done once at load (no shapes needed);
 * find_kernel resolves the kernels of the ops a rewrite introduces
 * (HardSwish). */
nn_status nn_graph_simplify(nn_graph *g, nn_kernel_lookup_fn find_kernel, nn_error *err);
/* qdq.c: the QDQ format's groups to 8-bit operators (NN_FUSE_QDQ), once,
 * after simplify, for a backend whose kernel table (find_kernel) has them. */
nn_status nn_graph_fuse_qdq(nn_graph *g, nn_kernel_lookup_fn find_kernel, nn_error *err);

/* plan.c: prepare every node for the current input shapes, fold constants,
 * plan the arena.  Inputs must have dtype/rank/dims set (and data for inputs
 * that feed shape-determining slots).  Frees the previous plan's per-node
 * state first. */
nn_status nn_plan_build(nn_graph *g, nn_plan *plan, const nn_limits *lim, nn_ctx *ctx,
                        nn_error *err);
/* Reset every per-plan field of the graph and free the plan's memory.
 * Afterwards constants are known; inputs keep what the session set. */
void nn_plan_clear(nn_graph *g, nn_plan *plan);
/* Point arena values and workspaces into `arena` (plan->arena_bytes long). */
void nn_plan_bind_arena(nn_graph *g, nn_plan *plan, void *arena);
/* need[v] = the value of v (not only its shape) must be known when planning,
 * because it decides some output shape. */
void nn_plan_value_needs(const nn_graph *g, bool *need);

#endif /* NN_GRAPH_H */
