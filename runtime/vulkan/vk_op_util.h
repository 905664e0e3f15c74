/* vk_op_util.h - what the Vulkan op family files share: the family tables,
 * node predicates, record helpers, and the dispatch plumbing their kernels
 * use.  Internal to vk_<family>.c, vk_op_util.c and vk_registry.c.
 *
 * A family file vk_<family>.c holds, for the ops of one family (the CPU
 * backend's families, runtime/cpu/<family>.c): supports() -- does the
 * Vulkan backend compute this node, as prepared for the current plan
 * (dtypes, shapes, attributes, known constant inputs), exactly like the CPU
 * backend -- and record() -- the node as kernel calls on the device views
 * of its values; then the kernels those ops use (vk_kernels.h) and the
 * family's 0-terminated table nn_vk_ops_<family>[].  A node supports()
 * refuses runs on the CPU (vk_graph.c), so supports() must be complete:
 * record() failing on a node supports() accepted is a bug, not a fallback.
 * Shapes come from the plan (the CPU prepare() already validated them);
 * attributes are re-read only for what the kernels need.
 *
 * Naming: the static inline helpers below keep short names (each family
 * file sees them as its own); functions with external linkage
 * (vk_op_util.c) carry the nn_vk_ prefix.
 */
#ifndef NN_VK_OP_UTIL_H
#define NN_VK_OP_UTIL_H

#include <string.h>

#include "vulkan/vk_families.h"
#include "vk_backend.h"
#include "vk_kernels.h"

/* ==== the family tables (vk_registry.c looks ops up in them) =============== */

/* one table per Vulkan family (vk_<family>.c), the list generated from
 * ops/families.txt */
#define NN_VK_FAMILY_EXTERN(f) extern const nn_vk_op nn_vk_ops_##f[];
NN_VK_FAMILY_LIST(NN_VK_FAMILY_EXTERN)
#undef NN_VK_FAMILY_EXTERN

/* ==== node predicates (supports) =========================================== */

static inline bool op_is(const nn_node *n, const char *name) {
  return strcmp(n->op_type, name) == 0;
}

static inline bool is_f32(const nn_value *v) { return v && v->dtype == NN_DTYPE_FLOAT; }

/* Largest binding a kernel may use. */
static inline bool fits(const nn_vk_ctx *ctx, const nn_value *v) {
  return v && v->nbytes <= ctx->props.limits.maxStorageBufferRange && v->numel < ((int64_t)1 << 30);
}

/* Inputs [0, n_in) present, float32 and bindable; output 0 likewise. */
static inline bool f32_io(const nn_vk_ctx *ctx, const nn_node *n, int n_in) {
  if (n->n_in < n_in || n->n_out < 1 || !is_f32(n->y[0]) || !fits(ctx, n->y[0]))
    return false;
  for (int k = 0; k < n_in; k++)
    if (!is_f32(n->x[k]) || !fits(ctx, n->x[k]))
      return false;
  /* extra outputs (masks, indices, saved statistics) are not produced */
  for (int k = 1; k < n->n_out; k++)
    if (n->y[k])
      return false;
  return true;
}

/* The element type code of the typed kernels (NN_VK_ET_*, shaders/elem.glsl)
 * for a dtype, -1 for the types they do not hold (strings, complex). */
static inline int vk_et(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_FLOAT: return NN_VK_ET_F32;
  case NN_DTYPE_BOOL: return NN_VK_ET_BOOL;
  case NN_DTYPE_INT8: return NN_VK_ET_I8;
  case NN_DTYPE_UINT8: return NN_VK_ET_U8;
  case NN_DTYPE_INT16: return NN_VK_ET_I16;
  case NN_DTYPE_UINT16: return NN_VK_ET_U16;
  case NN_DTYPE_INT32: return NN_VK_ET_I32;
  case NN_DTYPE_UINT32: return NN_VK_ET_U32;
  case NN_DTYPE_INT64: return NN_VK_ET_I64;
  case NN_DTYPE_UINT64: return NN_VK_ET_U64;
  case NN_DTYPE_FLOAT16: return NN_VK_ET_F16;
  case NN_DTYPE_BFLOAT16: return NN_VK_ET_BF16;
  case NN_DTYPE_DOUBLE: return NN_VK_ET_F64;
  default: return -1;
  }
}

/* Bytes of one element of an NN_VK_ET_* type. */
static inline uint64_t vk_et_size(int et) {
  switch (et) {
  case NN_VK_ET_BOOL: case NN_VK_ET_I8: case NN_VK_ET_U8: return 1;
  case NN_VK_ET_I16: case NN_VK_ET_U16: case NN_VK_ET_F16: case NN_VK_ET_BF16: return 2;
  case NN_VK_ET_I64: case NN_VK_ET_U64: case NN_VK_ET_F64: return 8;
  default: return 4;
  }
}

/* Value v is present, of a typed-kernel type and bindable. */
static inline bool typed_ok(const nn_vk_ctx *ctx, const nn_value *v) {
  return v && vk_et(v->dtype) >= 0 && fits(ctx, v);
}

static inline bool known_value(const nn_value *v) { return v && v->known && v->data; }

static inline int64_t prod(const int64_t *d, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++)
    p *= d[i];
  return p;
}

static inline void dense_strides(int rank, const int64_t *dims, int64_t *s) {
  int64_t acc = 1;
  for (int i = rank - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= dims[i];
  }
}

/* The activation the planner fused into the node (nn_node.act,
 * ops/activation.h) as the kernels' nn_vk_act: what the binary, conv, gemm
 * and norm kernels apply in their epilogue; false when it is one they do
 * not have. */
bool nn_vk_fused_act(const nn_node *n, nn_vk_act *a);

/* ==== record helpers ======================================================== */

#define TRY(expr)                                                                        \
  do {                                                                                   \
    nn_status try_st_ = (expr);                                                          \
    if (try_st_ != NN_OK)                                                                \
      return try_st_;                                                                    \
  } while (0)

/* Device views of input k / output k. */
static inline nn_status in_t(nn_vk_rec *r, const nn_node *n, int k, nn_vk_tensor *t,
                             nn_error *err) {
  return nn_vk_rec_value(r, n->x[k], t, err);
}
static inline nn_status out_t(nn_vk_rec *r, const nn_node *n, int k, nn_vk_tensor *t,
                              nn_error *err) {
  return nn_vk_rec_value(r, n->y[k], t, err);
}

static inline bool same_view(const nn_vk_tensor *a, const nn_vk_tensor *b) {
  return a->buffer == b->buffer && a->offset == b->offset;
}

/* y = the bytes of x (views, Identity, same-type Cast): nothing when the
 * planner let y share x's bytes or y is empty, else one transfer. */
nn_status nn_vk_copy_through(nn_vk_rec *r, const nn_node *n, nn_error *err);

/* ==== dispatch plumbing (the kernels) =======================================
 * Push-constant words are written in the order the shader declares its
 * push block.  Specialization constant 0 is the local size of the 1-D
 * kernels; the tiled kernels (gemm, conv2d) run 16x16 invocations and
 * specialize the tile shape instead (TM x TN outputs per invocation). */

#define NN_VK_MAX_GROUPS 65535u   /* maxComputeWorkGroupCount minimum */

/* Local sizes (specialization constant 0 of the 1-D kernels): 256 where
 * the device allows (the spec only guarantees 128 invocations), and 64 for
 * the shared-memory reductions, which need a power of two. */
static inline uint32_t local_1d(const nn_vk_exec *e) {
  const VkPhysicalDeviceLimits *l = &nn_vk_exec_ctx(e)->props.limits;
  uint32_t n = 256;
  if (l->maxComputeWorkGroupInvocations < n)
    n = l->maxComputeWorkGroupInvocations;
  if (l->maxComputeWorkGroupSize[0] < n)
    n = l->maxComputeWorkGroupSize[0];
  return n;
}

static inline uint32_t local_red(const nn_vk_exec *e) {
  (void)e;
  return 64;
}

static inline void push_u(nn_vk_dispatch *d, int i, uint64_t v) { d->push[i] = (uint32_t)v; }
static inline void push_i(nn_vk_dispatch *d, int i, int64_t v) {
  int32_t s = (int32_t)v;
  memcpy(&d->push[i], &s, 4);
}
static inline void push_f(nn_vk_dispatch *d, int i, float v) { memcpy(&d->push[i], &v, 4); }

static inline uint32_t groups_for(uint64_t items, uint32_t per_group) {
  uint64_t g = (items + per_group - 1) / per_group;
  return g > NN_VK_MAX_GROUPS ? NN_VK_MAX_GROUPS : (uint32_t)(g ? g : 1);
}

/* A float tensor view must hold `elems` elements and be indexable with
 * 32-bit indices in the shaders. */
static inline nn_status need(const nn_vk_tensor *t, uint64_t elems, const char *what,
                             nn_error *err) {
  if (!t || t->buffer == VK_NULL_HANDLE)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan kernel: %s: no buffer", what);
  if (t->offset % 4)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan kernel: %s: offset not 4-aligned", what);
  if (elems > UINT32_MAX / 2)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan kernel: %s: %llu elements is too many",
                        what, (unsigned long long)elems);
  if (t->size < elems * 4)
    return nn_error_set(err, NN_ERR_INVALID_ARG,
                        "vulkan kernel: %s: view of %llu bytes, need %llu", what,
                        (unsigned long long)t->size, (unsigned long long)(elems * 4));
  return NN_OK;
}

/* Bind exactly `elems` floats of a view (the view may be larger). */
static inline uint32_t bind_n(const nn_vk_exec *e, nn_vk_dispatch *d, int slot,
                              const nn_vk_tensor *t, uint64_t elems, bool write) {
  nn_vk_tensor v = {t->buffer, t->offset, elems * 4};
  return nn_vk_dispatch_bind(e, d, slot, &v, write);
}

/* A typed tensor view of `elems` elements of `es` bytes, read and written
 * as whole 32-bit words: the view starts on a word and holds the elements'
 * bytes; the binding (bind_bytes) covers them rounded up to a word, which
 * every allocation's padding provides (64-byte granules). */
static inline nn_status need_typed(const nn_vk_tensor *t, uint64_t elems, uint64_t es,
                                   const char *what, nn_error *err) {
  if (!t || t->buffer == VK_NULL_HANDLE)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan kernel: %s: no buffer", what);
  if (t->offset % 4)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan kernel: %s: offset not 4-aligned", what);
  if (elems > UINT32_MAX / 8)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan kernel: %s: %llu elements is too many",
                        what, (unsigned long long)elems);
  if (t->size < elems * es)
    return nn_error_set(err, NN_ERR_INVALID_ARG,
                        "vulkan kernel: %s: view of %llu bytes, need %llu", what,
                        (unsigned long long)t->size, (unsigned long long)(elems * es));
  return NN_OK;
}

/* Bind the words holding `bytes` bytes of a view (rounded up to a word). */
static inline uint32_t bind_bytes(const nn_vk_exec *e, nn_vk_dispatch *d, int slot,
                                  const nn_vk_tensor *t, uint64_t bytes, bool write) {
  nn_vk_tensor v = {t->buffer, t->offset, (bytes + 3) / 4 * 4};
  return nn_vk_dispatch_bind(e, d, slot, &v, write);
}

static inline bool fits_u32(int64_t v) { return v >= 0 && v <= (int64_t)UINT32_MAX; }

/* Elements a strided view spans: 1 + the largest index it reaches. */
static inline uint64_t span_elems(int rank, const int64_t *dims, const int64_t *s) {
  uint64_t hi = 0;
  for (int k = 0; k < rank; k++)
    if (dims[k] > 0 && s[k] > 0)
      hi += (uint64_t)(dims[k] - 1) * (uint64_t)s[k];
  return hi + 1;
}

/* Drop unit dims and merge neighbours that are contiguous for both
 * operands: [N,C,H,W] + [1,C,1,1] becomes [N, C, H*W] with strides
 * (0,1,0) for the bias; fewer dims, fewer divisions per element.  Returns
 * the new rank (>= 1).  The binary and copy kernels use it. */
int nn_vk_collapse2(int rank, const int64_t *dims, const int64_t *s1, const int64_t *s2,
                    int64_t *od, int64_t *o1, int64_t *o2);

#endif /* NN_VK_OP_UTIL_H */
