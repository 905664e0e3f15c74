/* vk_binary.c - element-wise binary and variadic ops on the Vulkan backend:
 * Add .. Mod, Sum, Mean on float32 (shader binary), integer Add, Sub, Mul,
 * Max, Min (shader binary_int), the comparisons and
 * logic ops with their bool outputs (shader binary_compare), Where (shader
 * binary_where); their supports/record and the broadcasting kernels.  The
 * CPU side is cpu/binary.c. */
#include <string.h>

#include "ops/activation.h"
#include "ops/binary.h"
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

/* Integer operands (all of one 8..64-bit integer type): Add, Sub, Mul, Max,
 * Min of two inputs, without a fused activation (shader binary_int). */
static bool int_binary(const nn_node *n) {
  if (n->n_in != 2 || n->n_out != 1 || !n->y[0] || !n->x[0] || !n->x[1])
    return false;
  nn_dtype dt = n->y[0]->dtype;
  int et = vk_et(dt);
  if (et < 0 || et == NN_VK_ET_F32 || et == NN_VK_ET_BOOL || et == NN_VK_ET_F16 ||
      et == NN_VK_ET_BF16 || et == NN_VK_ET_F64 || n->x[0]->dtype != dt || n->x[1]->dtype != dt)
    return false;
  int op = binary_op(n);
  return op == NN_VK_BIN_ADD || op == NN_VK_BIN_SUB || op == NN_VK_BIN_MUL ||
         op == NN_VK_BIN_MAX || op == NN_VK_BIN_MIN;
}

static bool bcast_to_y(const nn_node *n, int n_in);

/* Before opset 7 broadcasting was opt-in (broadcast / axis attributes):
 * the shaders broadcast numpy-style only.  Also false for an fmod the op
 * layer refuses. */
static bool legacy_broadcast(const nn_node *n) {
  nn_binary_attrs ba;
  return nn_binary_attrs_init(NULL, n, &ba) != NN_OK || ba.legacy_broadcast;
}

static bool int_binary_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  return !op_is(n, "Sum") && !op_is(n, "Mean") && typed_ok(ctx, n->x[0]) &&
         typed_ok(ctx, n->x[1]) && typed_ok(ctx, n->y[0]) && n->y[0]->rank <= NN_VK_MAX_RANK &&
         !legacy_broadcast(n) && n->act.kind == NN_ACT_NONE && bcast_to_y(n, 2);
}

static bool binary_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  if (int_binary(n))
    return int_binary_supports(ctx, n);
  int op = binary_op(n);
  bool variadic = op_is(n, "Sum") || op_is(n, "Mean") || op_is(n, "Max") || op_is(n, "Min");
  if (op < 0 || n->n_in < 1 || n->n_in > 64 || (!variadic && n->n_in != 2))
    return false;
  if (!f32_io(ctx, n, n->n_in) || n->y[0]->rank > NN_VK_MAX_RANK)
    return false;
  nn_binary_attrs ba;
  if (legacy_broadcast(n) || nn_binary_attrs_init(NULL, n, &ba) != NN_OK)
    return false;
  if (op_is(n, "Mod") && ba.fmod != 1)
    return false;   /* the shader computes C's fmod only */
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
  if (int_binary(n)) {
    nn_vk_tensor ta, tb, ty;
    TRY(in_t(r, n, 0, &ta, err));
    TRY(in_t(r, n, 1, &tb, err));
    TRY(out_t(r, n, 0, &ty, err));
    int64_t sa[NN_MAX_RANK], sb[NN_MAX_RANK];
    nn_broadcast_strides(n->x[0]->rank, n->x[0]->dims, y->rank, y->dims, sa);
    nn_broadcast_strides(n->x[1]->rank, n->x[1]->dims, y->rank, y->dims, sb);
    return nn_vk_k_binary_int(e, op, vk_et(y->dtype), y->rank, y->dims, sa, sb, &ta, &tb, &ty,
                              err);
  }
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

/* ---- comparisons and logic: bool outputs ------------------------------------------- */

static const binary_map k_compare[] = {
    {"Equal", NN_VK_CMP_EQ}, {"Less", NN_VK_CMP_LT},        {"Greater", NN_VK_CMP_GT},
    {"LessOrEqual", NN_VK_CMP_LE}, {"GreaterOrEqual", NN_VK_CMP_GE}, {"And", NN_VK_CMP_AND},
    {"Or", NN_VK_CMP_OR},    {"Xor", NN_VK_CMP_XOR},        {"Not", NN_VK_CMP_NOT},
};

static int compare_op(const nn_node *n) {
  for (size_t i = 0; i < sizeof k_compare / sizeof k_compare[0]; i++)
    if (op_is(n, k_compare[i].name))
      return k_compare[i].op;
  return -1;
}

/* Every input broadcasts to y numpy-style (rank <= y's, dims equal or 1). */
static bool bcast_to_y(const nn_node *n, int n_in) {
  const nn_value *y = n->y[0];
  for (int k = 0; k < n_in; k++) {
    const nn_value *x = n->x[k];
    if (x->rank > y->rank)
      return false;
    for (int i = 0; i < x->rank; i++) {
      int64_t d = x->dims[i], yd = y->dims[y->rank - x->rank + i];
      if (d != yd && d != 1)
        return false;
    }
  }
  return true;
}

static bool compare_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  int op = compare_op(n);
  int n_in = op == NN_VK_CMP_NOT ? 1 : 2;
  if (op < 0 || n->n_in != n_in || n->n_out != 1 || !n->y[0] ||
      n->y[0]->dtype != NN_DTYPE_BOOL || !fits(ctx, n->y[0]) || n->y[0]->rank > NN_VK_MAX_RANK)
    return false;
  for (int k = 0; k < n_in; k++)
    if (!typed_ok(ctx, n->x[k]) || n->x[k]->dtype != n->x[0]->dtype)
      return false;
  /* the logic ops are defined on bool (as the CPU kernels take them) */
  if (op >= NN_VK_CMP_AND && n->x[0]->dtype != NN_DTYPE_BOOL)
    return false;
  if (legacy_broadcast(n))
    return false;
  return bcast_to_y(n, n_in);
}

static nn_status compare_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *y = n->y[0];
  int op = compare_op(n);
  bool unary = op == NN_VK_CMP_NOT;
  nn_vk_tensor ta, tb, ty;
  TRY(in_t(r, n, 0, &ta, err));
  if (unary)
    tb = ta;
  else
    TRY(in_t(r, n, 1, &tb, err));
  TRY(out_t(r, n, 0, &ty, err));
  int64_t sa[NN_MAX_RANK], sb[NN_MAX_RANK] = {0};
  nn_broadcast_strides(n->x[0]->rank, n->x[0]->dims, y->rank, y->dims, sa);
  if (!unary)
    nn_broadcast_strides(n->x[1]->rank, n->x[1]->dims, y->rank, y->dims, sb);
  else
    memcpy(sb, sa, sizeof sb);
  return nn_vk_k_compare(nn_vk_rec_exec(r), op, vk_et(n->x[0]->dtype), y->rank, y->dims, sa,
                         sb, &ta, &tb, &ty, err);
}

/* ---- Where ------------------------------------------------------------------------- */

/* Dims of y and the strides of cond, x, z collapsed together (unit dims
 * dropped, neighbours merged where all three are contiguous); the rank. */
static int where_collapse(const nn_node *n, int64_t *od, int64_t os[3][NN_MAX_RANK]) {
  const nn_value *y = n->y[0];
  int64_t s[3][NN_MAX_RANK];
  for (int k = 0; k < 3; k++)
    nn_broadcast_strides(n->x[k]->rank, n->x[k]->dims, y->rank, y->dims, s[k]);
  int r = 0;
  for (int i = 0; i < y->rank; i++) {
    int64_t d = y->dims[i];
    if (d == 1)
      continue;
    bool merge = r > 0;
    for (int k = 0; k < 3 && merge; k++)
      merge = os[k][r - 1] == s[k][i] * d;
    if (merge) {
      od[r - 1] *= d;
      for (int k = 0; k < 3; k++)
        os[k][r - 1] = s[k][i];
      continue;
    }
    od[r] = d;
    for (int k = 0; k < 3; k++)
      os[k][r] = s[k][i];
    r++;
  }
  if (r == 0) {
    od[0] = 1;
    os[0][0] = os[1][0] = os[2][0] = 0;
    r = 1;
  }
  return r;
}

static bool where_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  if (n->n_in != 3 || n->n_out != 1 || !n->y[0] || !typed_ok(ctx, n->y[0]) ||
      n->y[0]->rank > NN_MAX_RANK)
    return false;
  for (int k = 0; k < 3; k++)
    if (!typed_ok(ctx, n->x[k]))
      return false;
  if (n->x[0]->dtype != NN_DTYPE_BOOL || n->x[1]->dtype != n->y[0]->dtype ||
      n->x[2]->dtype != n->y[0]->dtype || !bcast_to_y(n, 3))
    return false;
  int64_t od[NN_MAX_RANK], os[3][NN_MAX_RANK];
  return where_collapse(n, od, os) <= NN_VK_WHERE_MAX_RANK;
}

static nn_status where_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  nn_vk_tensor tc, tx, tz, ty;
  TRY(in_t(r, n, 0, &tc, err));
  TRY(in_t(r, n, 1, &tx, err));
  TRY(in_t(r, n, 2, &tz, err));
  TRY(out_t(r, n, 0, &ty, err));
  int64_t od[NN_MAX_RANK], os[3][NN_MAX_RANK];
  int rank = where_collapse(n, od, os);
  return nn_vk_k_where(nn_vk_rec_exec(r), vk_et(n->y[0]->dtype), rank, od, os[0], os[1], os[2],
                       &tc, &tx, &tz, &ty, err);
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

nn_status nn_vk_k_binary_int(nn_vk_exec *e, int op, int et, int rank, const int64_t *dims,
                             const int64_t *sa, const int64_t *sb, const nn_vk_tensor *a,
                             const nn_vk_tensor *b, const nn_vk_tensor *y, nn_error *err) {
  if (rank < 0 || rank > NN_VK_MAX_RANK || et < 0 || et >= NN_VK_ET_COUNT ||
      (op != NN_VK_BIN_ADD && op != NN_VK_BIN_SUB && op != NN_VK_BIN_MUL && op != NN_VK_BIN_MAX &&
       op != NN_VK_BIN_MIN))
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan binary_int: rank %d / op %d / type %d",
                        rank, op, et);
  int64_t n = 1;
  for (int k = 0; k < rank; k++) {
    if (dims[k] < 0 || !fits_u32(sa[k]) || !fits_u32(sb[k]))
      return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan binary_int: bad dims/strides");
    n *= dims[k];
  }
  if (n == 0)
    return NN_OK;
  int64_t cd[NN_VK_MAX_RANK], ca[NN_VK_MAX_RANK], cb[NN_VK_MAX_RANK];
  int r = nn_vk_collapse2(rank, dims, sa, sb, cd, ca, cb);
  uint64_t es = vk_et_size(et);
  uint64_t na = span_elems(r, cd, ca), nb = span_elems(r, cd, cb);
  nn_status st;
  if ((st = need_typed(a, na, es, "binary_int a", err)) ||
      (st = need_typed(b, nb, es, "binary_int b", err)) ||
      (st = need_typed(y, (uint64_t)n, es, "binary_int y", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_BINARY_INT);
  d.n_spec = 4;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)op;
  d.spec[2] = (uint32_t)et;
  d.spec[3] = (uint32_t)r;
  push_u(&d, 0, (uint64_t)n);
  push_u(&d, 1, bind_bytes(e, &d, 0, a, na * es, false));
  push_u(&d, 2, bind_bytes(e, &d, 1, b, nb * es, false));
  push_u(&d, 3, bind_bytes(e, &d, 2, y, (uint64_t)n * es, true));
  for (int k = 0; k < r; k++) {
    push_u(&d, 4 + k, (uint64_t)cd[k]);
    push_u(&d, 4 + NN_VK_MAX_RANK + k, (uint64_t)ca[k]);
    push_u(&d, 4 + 2 * NN_VK_MAX_RANK + k, (uint64_t)cb[k]);
  }
  uint64_t per = es < 4 ? 4 / es : 1;
  d.groups[0] = groups_for(((uint64_t)n + per - 1) / per, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

/* Elements a strided operand spans (its last index + 1). */
static uint64_t typed_span(int rank, const int64_t *dims, const int64_t *s) {
  return span_elems(rank, dims, s);
}

nn_status nn_vk_k_compare(nn_vk_exec *e, int op, int et, int rank, const int64_t *dims,
                          const int64_t *sa, const int64_t *sb, const nn_vk_tensor *a,
                          const nn_vk_tensor *b, const nn_vk_tensor *y, nn_error *err) {
  if (rank < 0 || rank > NN_VK_MAX_RANK || op < 0 || op >= NN_VK_CMP_COUNT || et < 0 ||
      et >= NN_VK_ET_COUNT)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan compare: rank %d / op %d / type %d",
                        rank, op, et);
  int64_t n = 1;
  for (int k = 0; k < rank; k++) {
    if (dims[k] < 0 || !fits_u32(sa[k]) || !fits_u32(sb[k]))
      return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan compare: bad dims/strides");
    n *= dims[k];
  }
  if (n == 0)
    return NN_OK;
  int64_t cd[NN_VK_MAX_RANK], ca[NN_VK_MAX_RANK], cb[NN_VK_MAX_RANK];
  int r = nn_vk_collapse2(rank, dims, sa, sb, cd, ca, cb);
  uint64_t es = vk_et_size(et);
  uint64_t na = typed_span(r, cd, ca), nb = typed_span(r, cd, cb);
  nn_status st;
  if ((st = need_typed(a, na, es, "compare a", err)) ||
      (st = need_typed(b, nb, es, "compare b", err)) ||
      (st = need_typed(y, (uint64_t)n, 1, "compare y", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_BINARY_COMPARE);
  d.n_spec = 4;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)op;
  d.spec[2] = (uint32_t)et;
  d.spec[3] = (uint32_t)r;
  push_u(&d, 0, (uint64_t)n);
  push_u(&d, 1, bind_bytes(e, &d, 0, a, na * es, false));
  push_u(&d, 2, bind_bytes(e, &d, 1, b, nb * es, false));
  push_u(&d, 3, bind_bytes(e, &d, 2, y, (uint64_t)n, true));
  for (int k = 0; k < r; k++) {
    push_u(&d, 4 + k, (uint64_t)cd[k]);
    push_u(&d, 4 + NN_VK_MAX_RANK + k, (uint64_t)ca[k]);
    push_u(&d, 4 + 2 * NN_VK_MAX_RANK + k, (uint64_t)cb[k]);
  }
  d.groups[0] = groups_for(((uint64_t)n + 3) / 4, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

nn_status nn_vk_k_where(nn_vk_exec *e, int et, int rank, const int64_t *dims,
                        const int64_t *sc, const int64_t *sx, const int64_t *sz,
                        const nn_vk_tensor *c, const nn_vk_tensor *x, const nn_vk_tensor *z,
                        const nn_vk_tensor *y, nn_error *err) {
  if (rank < 1 || rank > NN_VK_WHERE_MAX_RANK || et < 0 || et >= NN_VK_ET_COUNT)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan where: rank %d / type %d", rank, et);
  int64_t n = 1;
  for (int k = 0; k < rank; k++) {
    if (dims[k] < 0 || !fits_u32(sc[k]) || !fits_u32(sx[k]) || !fits_u32(sz[k]))
      return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan where: bad dims/strides");
    n *= dims[k];
  }
  if (n == 0)
    return NN_OK;
  uint64_t es = vk_et_size(et);
  uint64_t nc = typed_span(rank, dims, sc), nx = typed_span(rank, dims, sx),
           nz = typed_span(rank, dims, sz);
  nn_status st;
  if ((st = need_typed(c, nc, 1, "where cond", err)) ||
      (st = need_typed(x, nx, es, "where x", err)) ||
      (st = need_typed(z, nz, es, "where z", err)) ||
      (st = need_typed(y, (uint64_t)n, es, "where y", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_BINARY_WHERE);
  d.n_spec = 3;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)et;
  d.spec[2] = (uint32_t)rank;
  push_u(&d, 0, (uint64_t)n);
  push_u(&d, 1, bind_bytes(e, &d, 0, c, nc, false));
  push_u(&d, 2, bind_bytes(e, &d, 1, x, nx * es, false));
  push_u(&d, 3, bind_bytes(e, &d, 2, z, nz * es, false));
  push_u(&d, 4, bind_bytes(e, &d, 3, y, (uint64_t)n * es, true));
  for (int k = 0; k < rank; k++) {
    push_u(&d, 5 + k, (uint64_t)dims[k]);
    push_u(&d, 5 + NN_VK_WHERE_MAX_RANK + k, (uint64_t)sc[k]);
    push_u(&d, 5 + 2 * NN_VK_WHERE_MAX_RANK + k, (uint64_t)sx[k]);
    push_u(&d, 5 + 3 * NN_VK_WHERE_MAX_RANK + k, (uint64_t)sz[k]);
  }
  uint64_t per = es < 4 ? 4 / es : 1;
  d.groups[0] = groups_for(((uint64_t)n + per - 1) / per, local_1d(e));
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
    {"Equal", compare_supports, compare_record},
    {"Less", compare_supports, compare_record},
    {"Greater", compare_supports, compare_record},
    {"LessOrEqual", compare_supports, compare_record},
    {"GreaterOrEqual", compare_supports, compare_record},
    {"And", compare_supports, compare_record},
    {"Or", compare_supports, compare_record},
    {"Xor", compare_supports, compare_record},
    {"Not", compare_supports, compare_record},
    {"Where", where_supports, where_record},
    {0},
};
