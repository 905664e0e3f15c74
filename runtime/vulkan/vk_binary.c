/* vk_binary.c - element-wise binary and variadic ops (Add .. Mod, Sum,
 * Mean) on the Vulkan backend: their supports/record and the broadcasting
 * binary kernel (shader binary).  The CPU side is cpu/binary.c. */
#include <string.h>

#include "vk_op_util.h"
#include "vulkan/nn_vk_spirv.h"

/* ---- ops -------------------------------------------------------------------------- */

typedef struct binary_map {
  const char *name;
  int op;
} binary_map;

static const binary_map k_binary[] = {
    {"Add", NN_VK_BIN_ADD}, {"Sub", NN_VK_BIN_SUB},   {"Mul", NN_VK_BIN_MUL},
    {"Div", NN_VK_BIN_DIV}, {"Max", NN_VK_BIN_MAX},   {"Min", NN_VK_BIN_MIN},
    {"Pow", NN_VK_BIN_POW}, {"PRelu", NN_VK_BIN_PRELU}, {"Mod", NN_VK_BIN_FMOD},
    {"Sum", NN_VK_BIN_ADD}, {"Mean", NN_VK_BIN_ADD},
};

static int binary_op(const nn_node *n) {
  for (size_t i = 0; i < sizeof k_binary / sizeof k_binary[0]; i++)
    if (op_is(n, k_binary[i].name))
      return k_binary[i].op;
  return -1;
}

static bool binary_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  int op = binary_op(n);
  bool variadic = op_is(n, "Sum") || op_is(n, "Mean") || op_is(n, "Max") || op_is(n, "Min");
  if (op < 0 || n->n_in < 1 || n->n_in > 64 || (!variadic && n->n_in != 2))
    return false;
  if (!f32_io(ctx, n, n->n_in) || n->y[0]->rank > NN_VK_MAX_RANK)
    return false;
  /* before opset 7 broadcasting was opt-in (broadcast/axis attributes) */
  if (nn_attr_int(n, "broadcast", 0) != 0)
    return false;
  if (op_is(n, "Mod") && nn_attr_int(n, "fmod", 0) != 1)
    return false;
  /* every input must broadcast to y numpy-style (legacy PRelu slopes
   * follow the channel axis instead) */
  const nn_value *y = n->y[0];
  for (int k = 0; k < n->n_in; k++) {
    const nn_value *x = n->x[k];
    if (x->rank > y->rank)
      return false;
    for (int i = 0; i < x->rank; i++) {
      int64_t d = x->dims[i], yd = y->dims[y->rank - x->rank + i];
      if (d != yd && d != 1)
        return false;
    }
  }
  nn_vk_act a;
  return nn_vk_fused_act(n, &a);
}

static nn_status binary_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *y = n->y[0];
  nn_vk_exec *e = nn_vk_rec_exec(r);
  int op = binary_op(n);
  nn_vk_act act;
  nn_vk_fused_act(n, &act);
  nn_vk_tensor ty, ta, tb;
  TRY(out_t(r, n, 0, &ty, err));
  int64_t sa[NN_MAX_RANK], sb[NN_MAX_RANK], sy[NN_MAX_RANK];
  if (n->n_in == 1) {
    TRY(in_t(r, n, 0, &ta, err));
    if (same_view(&ta, &ty))
      return NN_OK;
    ta.size = ty.size = y->nbytes;
    return nn_vk_exec_copy(e, &ta, &ty, err);
  }
  bool mean = op_is(n, "Mean");
  /* y = x0 op x1, then y = y op xk: each step broadcast to y's shape; the
   * running result is dense in y's shape, so it may be read in place.  The
   * fused activation goes on the last step (Mean: after the scaling). */
  /* The planner may give y the bytes of any input of y's shape: the first
   * step must consume that input before overwriting it.  Only variadic
   * (commutative) ops have more than two inputs, so reordering is safe. */
  int order[64];
  int n_in = n->n_in < 64 ? n->n_in : 64;
  for (int k = 0; k < n_in; k++)
    order[k] = k;
  for (int k = 2; k < n_in; k++) {
    nn_vk_tensor tk;
    TRY(in_t(r, n, k, &tk, err));
    if (same_view(&tk, &ty)) {
      order[k] = 1;
      order[1] = k;
      break;
    }
  }
  TRY(in_t(r, n, order[0], &ta, err));
  nn_broadcast_strides(n->x[order[0]]->rank, n->x[order[0]]->dims, y->rank, y->dims, sa);
  dense_strides(y->rank, y->dims, sy);
  for (int k = 1; k < n_in; k++) {
    const nn_value *xk = n->x[order[k]];
    TRY(in_t(r, n, order[k], &tb, err));
    nn_broadcast_strides(xk->rank, xk->dims, y->rank, y->dims, sb);
    bool last = k == n_in - 1 && !mean;
    nn_vk_act a = last ? act : (nn_vk_act){NN_VK_ACT_NONE, 0, 0};
    TRY(nn_vk_k_binary(e, op, a, y->rank, y->dims, k == 1 ? sa : sy, sb, k == 1 ? &ta : &ty,
                       &tb, &ty, err));
  }
  if (mean) {
    float inv = 1.0f / (float)n->n_in;
    nn_vk_tensor tc;
    TRY(nn_vk_rec_const(r, &inv, sizeof inv, &tc, err));
    int64_t zero[NN_MAX_RANK] = {0};
    TRY(nn_vk_k_binary(e, NN_VK_BIN_MUL, act, y->rank, y->dims, sy, zero, &ty, &tc, &ty, err));
  }
  return NN_OK;
}

/* ---- kernels ---------------------------------------------------------------------- */

nn_status nn_vk_k_binary(nn_vk_exec *e, int op, nn_vk_act act, int rank, const int64_t *dims,
                         const int64_t *sa, const int64_t *sb, const nn_vk_tensor *a,
                         const nn_vk_tensor *b, const nn_vk_tensor *y, nn_error *err) {
  if (rank < 0 || rank > NN_VK_MAX_RANK || op < 0 || op >= NN_VK_BIN_COUNT)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan binary: rank %d / op %d", rank, op);
  int64_t n = 1;
  for (int k = 0; k < rank; k++) {
    if (dims[k] < 0 || !fits_u32(sa[k]) || !fits_u32(sb[k]))
      return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan binary: bad dims/strides");
    n *= dims[k];
  }
  if (n == 0)
    return NN_OK;
  int64_t cd[NN_VK_MAX_RANK], ca[NN_VK_MAX_RANK], cb[NN_VK_MAX_RANK];
  int r = nn_vk_collapse2(rank, dims, sa, sb, cd, ca, cb);
  uint64_t na = span_elems(r, cd, ca), nb = span_elems(r, cd, cb);
  nn_status st;
  if ((st = need(a, na, "binary a", err)) || (st = need(b, nb, "binary b", err)) ||
      (st = need(y, (uint64_t)n, "binary y", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_BINARY);
  d.n_spec = 5;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)op;
  d.spec[2] = (uint32_t)act.kind;
  d.spec[3] = (uint32_t)r;
  d.spec[4] = (r == 1 && ca[0] == 1 && cb[0] == 1) ? 1 : 0;
  push_u(&d, 0, (uint64_t)n);
  push_u(&d, 1, bind_n(e, &d, 0, a, na, false));
  push_u(&d, 2, bind_n(e, &d, 1, b, nb, false));
  push_u(&d, 3, bind_n(e, &d, 2, y, (uint64_t)n, true));
  push_f(&d, 4, act.a);
  push_f(&d, 5, act.b);
  for (int k = 0; k < r; k++) {
    push_u(&d, 6 + k, (uint64_t)cd[k]);
    push_u(&d, 6 + NN_VK_MAX_RANK + k, (uint64_t)ca[k]);
    push_u(&d, 6 + 2 * NN_VK_MAX_RANK + k, (uint64_t)cb[k]);
  }
  d.groups[0] = groups_for((uint64_t)n, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_binary[] = {
    {"Add", binary_supports, binary_record},
    {"Sub", binary_supports, binary_record},
    {"Mul", binary_supports, binary_record},
    {"Div", binary_supports, binary_record},
    {"Max", binary_supports, binary_record},
    {"Min", binary_supports, binary_record},
    {"Pow", binary_supports, binary_record},
    {"PRelu", binary_supports, binary_record},
    {"Mod", binary_supports, binary_record},
    {"Sum", binary_supports, binary_record},
    {"Mean", binary_supports, binary_record},
    {0},
};
