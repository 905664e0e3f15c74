/* vk_ops.c - ONNX operators on the Vulkan kernels.
 *
 * One nn_vk_op per op type: supports() says whether this node, as prepared
 * for the current plan (dtypes, shapes, attributes, known constant inputs),
 * is something the kernels compute exactly like the CPU backend; record()
 * turns it into kernel calls on the device views of its values.  A node
 * supports() refuses runs on the CPU (vk_graph.c), so supports() must be
 * complete: record() failing on a node supports() accepted is a bug, not a
 * fallback.
 *
 * Shapes come from the plan (the CPU prepare() already validated them);
 * attributes are re-read here only for what the kernels need.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "cpu/conv_geom.h"
#include "vk_backend.h"

/* ---- helpers ----------------------------------------------------------------- */

static bool op_is(const nn_node *n, const char *name) { return strcmp(n->op_type, name) == 0; }

static bool is_f32(const nn_value *v) { return v && v->dtype == NN_DTYPE_FLOAT; }

/* Largest binding a kernel may use. */
static bool fits(const nn_vk_ctx *ctx, const nn_value *v) {
  return v && v->nbytes <= ctx->props.limits.maxStorageBufferRange && v->numel < ((int64_t)1 << 30);
}

/* Inputs [0, n_in) present, float32 and bindable; output 0 likewise. */
static bool f32_io(const nn_vk_ctx *ctx, const nn_node *n, int n_in) {
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

static bool known_value(const nn_value *v) { return v && v->known && v->data; }

static int64_t prod(const int64_t *d, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++)
    p *= d[i];
  return p;
}

static void dense_strides(int rank, const int64_t *dims, int64_t *s) {
  int64_t acc = 1;
  for (int i = rank - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= dims[i];
  }
}

#define TRY(expr)                                                                        \
  do {                                                                                   \
    nn_status try_st_ = (expr);                                                          \
    if (try_st_ != NN_OK)                                                                \
      return try_st_;                                                                    \
  } while (0)

/* Device views of input k / output k. */
static nn_status in_t(nn_vk_rec *r, const nn_node *n, int k, nn_vk_tensor *t, nn_error *err) {
  return nn_vk_rec_value(r, n->x[k], t, err);
}
static nn_status out_t(nn_vk_rec *r, const nn_node *n, int k, nn_vk_tensor *t, nn_error *err) {
  return nn_vk_rec_value(r, n->y[k], t, err);
}

static bool same_view(const nn_vk_tensor *a, const nn_vk_tensor *b) {
  return a->buffer == b->buffer && a->offset == b->offset;
}

/* "_fused_act" attributes set by the graph's fusion pass (see cpu/gemm.c). */
static bool fused_act(const nn_node *n, nn_vk_act *a) {
  const char *s = nn_attr_string(n, "_fused_act", "");
  *a = (nn_vk_act){NN_VK_ACT_NONE, 0, 0};
  if (!s || !s[0])
    return true;
  if (strcmp(s, "Relu") == 0)
    a->kind = NN_VK_ACT_RELU;
  else if (strcmp(s, "Clip") == 0)
    *a = (nn_vk_act){NN_VK_ACT_CLIP, nn_attr_float(n, "_fused_min", -INFINITY),
                     nn_attr_float(n, "_fused_max", INFINITY)};
  else if (strcmp(s, "LeakyRelu") == 0)
    *a = (nn_vk_act){NN_VK_ACT_LEAKY_RELU, nn_attr_float(n, "_fused_alpha", 0.01f), 0};
  else if (strcmp(s, "HardSwish") == 0)
    a->kind = NN_VK_ACT_HARD_SWISH;
  else if (strcmp(s, "Sigmoid") == 0)
    a->kind = NN_VK_ACT_SIGMOID;
  else
    return false;
  return true;
}

/* ---- element-wise unary -------------------------------------------------------- */

typedef struct unary_map {
  const char *name;
  int kind;
} unary_map;

static const unary_map k_unary[] = {
    {"Relu", NN_VK_ACT_RELU}, {"LeakyRelu", NN_VK_ACT_LEAKY_RELU}, {"Sigmoid", NN_VK_ACT_SIGMOID},
    {"HardSigmoid", NN_VK_ACT_HARD_SIGMOID}, {"HardSwish", NN_VK_ACT_HARD_SWISH},
    {"Tanh", NN_VK_ACT_TANH}, {"Elu", NN_VK_ACT_ELU}, {"Selu", NN_VK_ACT_SELU},
    {"Softplus", NN_VK_ACT_SOFTPLUS}, {"Softsign", NN_VK_ACT_SOFTSIGN}, {"Exp", NN_VK_ACT_EXP},
    {"Log", NN_VK_ACT_LOG}, {"Abs", NN_VK_ACT_ABS}, {"Neg", NN_VK_ACT_NEG},
    {"Sqrt", NN_VK_ACT_SQRT}, {"Reciprocal", NN_VK_ACT_RECIPROCAL}, {"Floor", NN_VK_ACT_FLOOR},
    {"Ceil", NN_VK_ACT_CEIL}, {"Erf", NN_VK_ACT_ERF}, {"Sin", NN_VK_ACT_SIN},
    {"Cos", NN_VK_ACT_COS}, {"Tan", NN_VK_ACT_TAN}, {"Round", NN_VK_ACT_ROUND},
    {"Sign", NN_VK_ACT_SIGN}, {"Mish", NN_VK_ACT_MISH},
    {"ThresholdedRelu", NN_VK_ACT_THRESHOLDED_RELU}, {"Celu", NN_VK_ACT_CELU},
    {"Shrink", NN_VK_ACT_SHRINK}, {"Asin", NN_VK_ACT_ASIN}, {"Acos", NN_VK_ACT_ACOS},
    {"Atan", NN_VK_ACT_ATAN}, {"Sinh", NN_VK_ACT_SINH}, {"Cosh", NN_VK_ACT_COSH},
    {"Asinh", NN_VK_ACT_ASINH}, {"Acosh", NN_VK_ACT_ACOSH}, {"Atanh", NN_VK_ACT_ATANH},
    {"Gelu", NN_VK_ACT_GELU}, {"Clip", NN_VK_ACT_CLIP}, {"Identity", NN_VK_ACT_NONE},
};

/* Activation of a unary node with its attribute (or constant input)
 * parameters; false when a parameter is not known. */
static bool unary_act(const nn_node *n, nn_vk_act *a) {
  int kind = -1;
  for (size_t i = 0; i < sizeof k_unary / sizeof k_unary[0]; i++)
    if (op_is(n, k_unary[i].name))
      kind = k_unary[i].kind;
  if (kind < 0)
    return false;
  *a = (nn_vk_act){kind, 0, 0};
  switch (kind) {
  case NN_VK_ACT_LEAKY_RELU: a->a = nn_attr_float(n, "alpha", 0.01f); break;
  case NN_VK_ACT_HARD_SIGMOID:
    a->a = nn_attr_float(n, "alpha", 0.2f);
    a->b = nn_attr_float(n, "beta", 0.5f);
    break;
  case NN_VK_ACT_ELU: a->a = nn_attr_float(n, "alpha", 1.0f); break;
  case NN_VK_ACT_SELU:
    a->a = nn_attr_float(n, "alpha", 1.67326319217681884765625f);
    a->b = nn_attr_float(n, "gamma", 1.05070102214813232421875f);
    break;
  case NN_VK_ACT_THRESHOLDED_RELU: a->a = nn_attr_float(n, "alpha", 1.0f); break;
  case NN_VK_ACT_CELU: a->a = nn_attr_float(n, "alpha", 1.0f); break;
  case NN_VK_ACT_SHRINK:
    a->a = nn_attr_float(n, "bias", 0.0f);
    a->b = nn_attr_float(n, "lambd", 0.5f);
    break;
  case NN_VK_ACT_GELU: {
    const char *ap = nn_attr_string(n, "approximate", "none");
    if (strcmp(ap, "tanh") == 0)
      a->kind = NN_VK_ACT_GELU_TANH;
    else if (strcmp(ap, "none") != 0)
      return false;
    break;
  }
  case NN_VK_ACT_CLIP:
    a->a = -INFINITY;
    a->b = INFINITY;
    if (n->version < 11) {
      a->a = nn_attr_float(n, "min", -FLT_MAX);
      a->b = nn_attr_float(n, "max", FLT_MAX);
    } else {
      for (int k = 1; k <= 2; k++) {
        if (k >= n->n_in || !n->x[k])
          continue;
        const nn_value *v = n->x[k];
        if (!known_value(v) || !is_f32(v) || v->numel != 1)
          return false;
        float f;
        memcpy(&f, v->data, 4);
        if (k == 1)
          a->a = f;
        else
          a->b = f;
      }
    }
    break;
  }
  return true;
}

static bool unary_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  nn_vk_act a;
  return f32_io(ctx, n, 1) && unary_act(n, &a);
}

static nn_status unary_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  nn_vk_act a;
  unary_act(n, &a);
  nn_vk_tensor x, y;
  TRY(in_t(r, n, 0, &x, err));
  TRY(out_t(r, n, 0, &y, err));
  return nn_vk_k_unary(nn_vk_rec_exec(r), a, n->y[0]->numel, &x, &y, err);
}

/* ---- element-wise binary and variadic --------------------------------------------- */

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
  return fused_act(n, &a);
}

static nn_status binary_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *y = n->y[0];
  nn_vk_exec *e = nn_vk_rec_exec(r);
  int op = binary_op(n);
  nn_vk_act act;
  fused_act(n, &act);
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

/* ---- views and copies ---------------------------------------------------------------- */

/* Reshape, Flatten, (Un)Squeeze, Identity (any dtype), Dropout at
 * inference: the bytes of x.  The planner usually lets y share x's bytes,
 * then there is nothing to do. */
static bool view_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  (void)ctx;
  if (n->n_in < 1 || !n->x[0] || n->n_out < 1 || !n->y[0] || n->x[0]->nbytes != n->y[0]->nbytes)
    return false;
  if (n->x[0]->dtype == NN_DTYPE_STRING)
    return false;
  for (int k = 1; k < n->n_out; k++)
    if (n->y[k])
      return false;   /* Dropout's mask */
  if (op_is(n, "Dropout") && nn_attr_int(n, "is_test", 1) == 0 && n->version < 7)
    return false;
  /* Dropout 12: training_mode input must be absent or false */
  if (op_is(n, "Dropout") && n->n_in > 2 && n->x[2]) {
    if (!known_value(n->x[2]) || ((const unsigned char *)n->x[2]->data)[0] != 0)
      return false;
  }
  return true;
}

static nn_status view_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  nn_vk_tensor x, y;
  TRY(in_t(r, n, 0, &x, err));
  TRY(out_t(r, n, 0, &y, err));
  if (same_view(&x, &y) || n->y[0]->nbytes == 0)
    return NN_OK;
  x.size = y.size = n->y[0]->nbytes;
  return nn_vk_exec_copy(nn_vk_rec_exec(r), &x, &y, err);
}

/* Strided copies move 32-bit words; 64-bit elements are two words (an
 * extra innermost dim of 2); 1- and 2-byte elements only as contiguous runs. */
static bool copy_dtype_ok(const nn_value *v) {
  size_t es = nn_dtype_size(v->dtype);
  return v->dtype != NN_DTYPE_STRING && (es == 4 || es == 8);
}

static nn_status copy_elems(nn_vk_exec *e, size_t es, int rank, const int64_t *dims,
                            const int64_t *xs, int64_t x_off, const int64_t *ys, int64_t y_off,
                            const nn_vk_tensor *x, const nn_vk_tensor *y, nn_error *err) {
  if (es == 4)
    return nn_vk_k_copy(e, rank, dims, xs, x_off, ys, y_off, x, y, err);
  int64_t d2[NN_VK_MAX_RANK], xs2[NN_VK_MAX_RANK], ys2[NN_VK_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    d2[k] = dims[k];
    xs2[k] = xs[k] * 2;
    ys2[k] = ys[k] * 2;
  }
  d2[rank] = 2;
  xs2[rank] = ys2[rank] = 1;
  return nn_vk_k_copy(e, rank + 1, d2, xs2, x_off * 2, ys2, y_off * 2, x, y, err);
}

static int copy_max_rank(const nn_value *v) {
  return nn_dtype_size(v->dtype) == 8 ? NN_VK_MAX_RANK - 1 : NN_VK_MAX_RANK;
}

static bool copy_io_ok(const nn_vk_ctx *ctx, const nn_node *n) {
  if (n->n_in < 1 || !n->x[0] || n->n_out < 1 || !n->y[0])
    return false;
  const nn_value *x = n->x[0], *y = n->y[0];
  return x->dtype == y->dtype && copy_dtype_ok(x) && fits(ctx, x) && fits(ctx, y) &&
         y->rank <= copy_max_rank(y) && x->rank <= copy_max_rank(x);
}

static bool transpose_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  return copy_io_ok(ctx, n) && n->n_out == 1;
}

static nn_status transpose_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0], *y = n->y[0];
  int rank = x->rank, cnt = 0;
  const int64_t *perm = nn_attr_ints(n, "perm", &cnt);
  int64_t xst[NN_MAX_RANK], xs[NN_MAX_RANK], ys[NN_MAX_RANK];
  dense_strides(rank, x->dims, xst);
  dense_strides(y->rank, y->dims, ys);
  for (int i = 0; i < rank; i++) {
    int p = perm && cnt == rank ? (int)perm[i] : rank - 1 - i;
    if (p < 0)
      p += rank;
    xs[i] = xst[p];
  }
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return copy_elems(nn_vk_rec_exec(r), nn_dtype_size(x->dtype), rank, y->dims, xs, 0, ys, 0,
                    &tx, &ty, err);
}

static bool concat_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  const nn_value *y = n->n_out > 0 ? n->y[0] : NULL;
  if (!y || !copy_dtype_ok(y) || !fits(ctx, y) || y->rank < 1)
    return false;
  for (int k = 0; k < n->n_in; k++)
    if (!n->x[k] || n->x[k]->dtype != y->dtype || !fits(ctx, n->x[k]))
      return false;
  return true;
}

static nn_status concat_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *y = n->y[0];
  int axis;
  nn_norm_axis(nn_attr_int(n, "axis", 1), y->rank, &axis);
  int64_t outer = prod(y->dims, 0, axis), inner = prod(y->dims, axis + 1, y->rank);
  int64_t at = 0;
  nn_vk_tensor ty;
  TRY(out_t(r, n, 0, &ty, err));
  size_t es = nn_dtype_size(y->dtype);
  for (int k = 0; k < n->n_in; k++) {
    const nn_value *x = n->x[k];
    int64_t len = x->rank > axis ? x->dims[axis] : 0;
    if (x->numel > 0) {
      nn_vk_tensor tx;
      TRY(in_t(r, n, k, &tx, err));
      int64_t dims[2] = {outer, len * inner}, xs[2] = {len * inner, 1};
      int64_t ys[2] = {y->dims[axis] * inner, 1};
      TRY(copy_elems(nn_vk_rec_exec(r), es, 2, dims, xs, 0, ys, at * inner, &tx, &ty, err));
    }
    at += len;
  }
  return NN_OK;
}

static bool split_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  if (n->n_in < 1 || !n->x[0] || !copy_dtype_ok(n->x[0]) || !fits(ctx, n->x[0]) ||
      n->x[0]->rank < 1)
    return false;
  for (int k = 0; k < n->n_out; k++)
    if (!n->y[k] || n->y[k]->dtype != n->x[0]->dtype)
      return false;
  return true;
}

static nn_status split_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0];
  int axis;
  nn_norm_axis(nn_attr_int(n, "axis", 0), x->rank, &axis);
  int64_t outer = prod(x->dims, 0, axis), inner = prod(x->dims, axis + 1, x->rank);
  nn_vk_tensor tx;
  TRY(in_t(r, n, 0, &tx, err));
  size_t es = nn_dtype_size(x->dtype);
  int64_t at = 0;
  for (int k = 0; k < n->n_out; k++) {
    const nn_value *y = n->y[k];
    int64_t len = y->dims[axis];
    if (y->numel > 0) {
      nn_vk_tensor ty;
      TRY(out_t(r, n, k, &ty, err));
      int64_t dims[2] = {outer, len * inner}, xs[2] = {x->dims[axis] * inner, 1};
      int64_t ys[2] = {len * inner, 1};
      TRY(copy_elems(nn_vk_rec_exec(r), es, 2, dims, xs, at * inner, ys, 0, &tx, &ty, err));
    }
    at += len;
  }
  return NN_OK;
}

/* Slice parameters per axis: first index and step (ONNX clamping rules). */
static bool slice_params(const nn_node *n, int64_t *start, int64_t *step) {
  const nn_value *x = n->x[0];
  int rank = x->rank;
  for (int i = 0; i < rank; i++) {
    start[i] = 0;
    step[i] = 1;
  }
  /* ends are not needed: the output shape (from prepare) says how many */
  int64_t st[NN_MAX_RANK], ax[NN_MAX_RANK], sp[NN_MAX_RANK];
  int cnt = 0;
  if (n->version < 10) {
    int ce = 0, ca = 0;
    const int64_t *s = nn_attr_ints(n, "starts", &cnt), *e = nn_attr_ints(n, "ends", &ce);
    const int64_t *a = nn_attr_ints(n, "axes", &ca);
    if (!s || !e || ce != cnt || cnt > rank || (a && ca != cnt))
      return false;
    for (int i = 0; i < cnt; i++) {
      st[i] = s[i];
      ax[i] = a ? a[i] : i;
      sp[i] = 1;
    }
  } else {
    for (int k = 1; k <= 4; k++)
      if (k < n->n_in && n->x[k] && !known_value(n->x[k]))
        return false;
    if (n->n_in < 3 || !n->x[1] || !n->x[2])
      return false;
    cnt = (int)n->x[1]->numel;
    if (cnt > rank || n->x[2]->numel != cnt)
      return false;
    for (int i = 0; i < cnt; i++) {
      st[i] = nn_value_get_int(n->x[1], i);
      ax[i] = n->n_in > 3 && n->x[3] ? nn_value_get_int(n->x[3], i) : i;
      sp[i] = n->n_in > 4 && n->x[4] ? nn_value_get_int(n->x[4], i) : 1;
    }
  }
  for (int i = 0; i < cnt; i++) {
    int a;
    if (!nn_norm_axis(ax[i], rank, &a) || sp[i] == 0)
      return false;
    int64_t d = x->dims[a], s = st[i];
    if (s < 0)
      s += d;
    if (sp[i] > 0)
      s = s < 0 ? 0 : s > d ? d : s;
    else
      s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
    start[a] = s;
    step[a] = sp[i];
  }
  return true;
}

static bool slice_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  int64_t start[NN_MAX_RANK], step[NN_MAX_RANK];
  return copy_io_ok(ctx, n) && n->y[0]->rank == n->x[0]->rank && slice_params(n, start, step);
}

static nn_status slice_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0], *y = n->y[0];
  int64_t start[NN_MAX_RANK], step[NN_MAX_RANK], xst[NN_MAX_RANK], xs[NN_MAX_RANK], ys[NN_MAX_RANK];
  slice_params(n, start, step);
  dense_strides(x->rank, x->dims, xst);
  dense_strides(y->rank, y->dims, ys);
  int64_t off = 0;
  for (int i = 0; i < x->rank; i++) {
    off += start[i] * xst[i];
    xs[i] = step[i] * xst[i];
  }
  if (y->numel == 0)
    return NN_OK;
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return copy_elems(nn_vk_rec_exec(r), nn_dtype_size(x->dtype), y->rank, y->dims, xs, off, ys, 0,
                    &tx, &ty, err);
}

static bool expand_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  return copy_io_ok(ctx, n) && n->x[0]->rank <= n->y[0]->rank;
}

static nn_status expand_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0], *y = n->y[0];
  int64_t xs[NN_MAX_RANK], ys[NN_MAX_RANK];
  nn_broadcast_strides(x->rank, x->dims, y->rank, y->dims, xs);
  dense_strides(y->rank, y->dims, ys);
  if (y->numel == 0)
    return NN_OK;
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return copy_elems(nn_vk_rec_exec(r), nn_dtype_size(x->dtype), y->rank, y->dims, xs, 0, ys, 0,
                    &tx, &ty, err);
}

/* Tile: y[(r_i, c_i)...] = x[c_i...], a copy over 2*rank dims. */
static bool tile_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  return copy_io_ok(ctx, n) && 2 * n->x[0]->rank <= copy_max_rank(n->x[0]) &&
         n->y[0]->rank == n->x[0]->rank;
}

static nn_status tile_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0], *y = n->y[0];
  int rank = x->rank;
  int64_t xst[NN_MAX_RANK], yst[NN_MAX_RANK];
  int64_t dims[NN_VK_MAX_RANK], xs[NN_VK_MAX_RANK], ys[NN_VK_MAX_RANK];
  dense_strides(rank, x->dims, xst);
  dense_strides(rank, y->dims, yst);
  for (int i = 0; i < rank; i++) {
    int64_t reps = x->dims[i] ? y->dims[i] / x->dims[i] : 0;
    dims[2 * i] = reps;
    xs[2 * i] = 0;
    ys[2 * i] = x->dims[i] * yst[i];
    dims[2 * i + 1] = x->dims[i];
    xs[2 * i + 1] = xst[i];
    ys[2 * i + 1] = yst[i];
  }
  if (y->numel == 0)
    return NN_OK;
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return copy_elems(nn_vk_rec_exec(r), nn_dtype_size(x->dtype), 2 * rank, dims, xs, 0, ys, 0, &tx,
                    &ty, err);
}

/* ---- Pad ---------------------------------------------------------------------------- */

static bool pad_params(const nn_node *n, int *mode, int64_t *begin, uint32_t *value) {
  const nn_value *x = n->x[0];
  int rank = x->rank;
  const char *m = nn_attr_string(n, "mode", "constant");
  if (strcmp(m, "constant") == 0)
    *mode = NN_VK_PAD_CONSTANT;
  else if (strcmp(m, "reflect") == 0)
    *mode = NN_VK_PAD_REFLECT;
  else if (strcmp(m, "edge") == 0)
    *mode = NN_VK_PAD_EDGE;
  else if (strcmp(m, "wrap") == 0)
    *mode = NN_VK_PAD_WRAP;
  else
    return false;
  for (int i = 0; i < rank; i++)
    begin[i] = 0;
  float fv = 0;
  if (n->version < 11) {
    int cnt = 0;
    const int64_t *p = nn_attr_ints(n, n->version < 2 ? "paddings" : "pads", &cnt);
    if (!p || cnt != 2 * rank)
      return false;
    for (int i = 0; i < rank; i++)
      begin[i] = p[i];
    fv = nn_attr_float(n, "value", 0.0f);
  } else {
    if (n->n_in < 2 || !known_value(n->x[1]))
      return false;
    const nn_value *pv = n->x[1];
    int naxes = rank;
    int64_t axes[NN_MAX_RANK];
    for (int i = 0; i < rank; i++)
      axes[i] = i;
    if (n->n_in > 3 && n->x[3]) {
      if (!known_value(n->x[3]))
        return false;
      naxes = (int)n->x[3]->numel;
      if (naxes > rank)
        return false;
      for (int i = 0; i < naxes; i++) {
        int a;
        if (!nn_norm_axis(nn_value_get_int(n->x[3], i), rank, &a))
          return false;
        axes[i] = a;
      }
    }
    if (pv->numel != 2 * naxes)
      return false;
    for (int i = 0; i < naxes; i++)
      begin[axes[i]] = nn_value_get_int(pv, i);
    if (n->n_in > 2 && n->x[2]) {
      if (!known_value(n->x[2]) || n->x[2]->dtype != x->dtype || n->x[2]->numel != 1)
        return false;
      memcpy(&fv, n->x[2]->data, 4);
    }
  }
  memcpy(value, &fv, 4);
  return true;
}

static bool pad_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  int mode;
  int64_t begin[NN_MAX_RANK];
  uint32_t value;
  if (!copy_io_ok(ctx, n) || nn_dtype_size(n->x[0]->dtype) != 4 || n->x[0]->rank < 1)
    return false;
  /* the constant is read as float bits; int32 constants differ */
  if (n->x[0]->dtype != NN_DTYPE_FLOAT)
    return false;
  if (!pad_params(n, &mode, begin, &value))
    return false;
  /* reflect/edge/wrap of an empty axis have nothing to copy from */
  if (mode != NN_VK_PAD_CONSTANT && n->x[0]->numel == 0)
    return false;
  return true;
}

static nn_status pad_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  int mode;
  int64_t begin[NN_MAX_RANK];
  uint32_t value;
  pad_params(n, &mode, begin, &value);
  nn_vk_tensor tx, ty;
  if (n->y[0]->numel == 0)
    return NN_OK;
  TRY(out_t(r, n, 0, &ty, err));
  if (n->x[0]->numel == 0) {
    /* nothing to read: the pad kernel binds y in x's place */
    tx = ty;
  } else {
    TRY(in_t(r, n, 0, &tx, err));
  }
  return nn_vk_k_pad(nn_vk_rec_exec(r), mode, value, n->x[0]->rank, n->x[0]->dims, n->y[0]->dims,
                     begin, &tx, &ty, err);
}

/* ---- Conv --------------------------------------------------------------------------- */

static bool conv_geometry(const nn_node *n, conv_geom *g) {
  const nn_value *x = n->x[0], *w = n->x[1];
  if (x->rank != 3 && x->rank != 4)
    return false;
  int nsp = x->rank - 2;
  nn_ctx c = {0};
  return conv_geom_init(&c, n, nsp, x->dims + 2, w->dims + 2, true, false, g) == NN_OK;
}

static bool conv_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  bool bias = n->n_in > 2 && n->x[2];
  if (n->n_in < 2 || !f32_io(ctx, n, 2) || (bias && (!is_f32(n->x[2]) || !fits(ctx, n->x[2]))))
    return false;
  const nn_value *x = n->x[0], *w = n->x[1], *y = n->y[0];
  if (w->rank != x->rank || y->rank != x->rank)
    return false;
  int64_t group = nn_attr_int(n, "group", 1);
  if (group < 1 || x->dims[1] % group || w->dims[0] % group || w->dims[1] * group != x->dims[1])
    return false;
  conv_geom g;
  nn_vk_act a;
  if (!conv_geometry(n, &g) || !fused_act(n, &a))
    return false;
  for (int i = 1; i < 3; i++)
    if (g.k[i] > 64 || g.s[i] > 64 || g.d[i] > 64 || g.pb[i] > INT32_MAX)
      return false;
  return y->dims[y->rank - 1] == g.out[2] && (x->rank == 3 || y->dims[2] == g.out[1]);
}

static nn_status conv_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0], *w = n->x[1], *y = n->y[0];
  conv_geom g;
  conv_geometry(n, &g);
  nn_vk_conv2d p = {
      .N = x->dims[0], .C = x->dims[1], .H = g.in[1], .W = g.in[2], .M = w->dims[0],
      .OH = g.out[1], .OW = g.out[2], .KH = (int)g.k[1], .KW = (int)g.k[2], .SH = (int)g.s[1],
      .SW = (int)g.s[2], .DH = (int)g.d[1], .DW = (int)g.d[2], .PT = (int)g.pb[1],
      .PL = (int)g.pb[2], .group = (int)nn_attr_int(n, "group", 1),
  };
  fused_act(n, &p.act);
  (void)y;
  nn_vk_tensor tx, tw, tb, ty;
  bool bias = n->n_in > 2 && n->x[2];
  TRY(in_t(r, n, 0, &tx, err));
  TRY(in_t(r, n, 1, &tw, err));
  if (bias)
    TRY(in_t(r, n, 2, &tb, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_conv2d(nn_vk_rec_exec(r), &p, &tx, &tw, bias ? &tb : NULL, &ty, err);
}

/* ---- Gemm / MatMul -------------------------------------------------------------------- */

static bool gemm_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  bool has_c = n->n_in > 2 && n->x[2];
  if (n->n_in < 2 || !is_f32(n->x[0]) || !is_f32(n->x[1]) || !is_f32(n->y[0]) ||
      (has_c && !is_f32(n->x[2])))
    return false;
  if (!fits(ctx, n->x[0]) || !fits(ctx, n->y[0]) || (has_c && !fits(ctx, n->x[2])))
    return false;
  if (n->x[0]->rank != 2 || n->x[1]->rank != 2 || n->y[0]->rank != 2)
    return false;
  if (nn_attr_int(n, "broadcast", 1) == 0 && n->version < 7 && has_c &&
      n->x[2]->numel != n->y[0]->numel)
    return false;
  if (has_c && n->x[2]->rank > 2)
    return false;
  /* B beyond maxStorageBufferRange is split by output columns (M == 1) */
  if (!fits(ctx, n->x[1]) && n->y[0]->dims[0] != 1)
    return false;
  nn_vk_act a;
  return fused_act(n, &a);
}

static nn_status gemm_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *a = n->x[0], *b = n->x[1], *y = n->y[0];
  bool ta = nn_attr_int(n, "transA", 0) != 0, tb = nn_attr_int(n, "transB", 0) != 0;
  bool has_c = n->n_in > 2 && n->x[2];
  int64_t M = y->dims[0], N = y->dims[1], K = ta ? a->dims[0] : a->dims[1];
  nn_vk_gemm p = {.M = M, .N = N, .K = K, .batch1 = 1, .batch2 = 1,
                  .alpha = nn_attr_float(n, "alpha", 1.0f), .beta = nn_attr_float(n, "beta", 1.0f)};
  p.sam = ta ? 1 : a->dims[1];
  p.sak = ta ? a->dims[1] : 1;
  p.sbk = tb ? 1 : b->dims[1];
  p.sbn = tb ? b->dims[1] : 1;
  if (has_c) {
    const nn_value *c = n->x[2];
    int64_t cm = c->rank == 2 ? c->dims[0] : 1, cn = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
    p.scm = cm == 1 ? 0 : cn;
    p.scn = cn == 1 ? 0 : 1;
  }
  fused_act(n, &p.act);
  nn_vk_tensor tA, tB, tC, tY;
  TRY(in_t(r, n, 0, &tA, err));
  TRY(in_t(r, n, 1, &tB, err));
  if (has_c)
    TRY(in_t(r, n, 2, &tC, err));
  TRY(out_t(r, n, 0, &tY, err));
  return nn_vk_k_gemm(nn_vk_rec_exec(r), &p, &tA, &tB, has_c ? &tC : NULL, &tY, err);
}

/* MatMul batch dims broadcast; collapsed they must fit the kernel's two
 * batch levels. */
static bool matmul_params(const nn_node *n, nn_vk_gemm *p) {
  const nn_value *a = n->x[0], *b = n->x[1];
  int ra = a->rank, rb = b->rank;
  if (ra < 1 || rb < 1)
    return false;
  int64_t M = ra >= 2 ? a->dims[ra - 2] : 1, K = a->dims[ra - 1];
  int64_t N = rb >= 2 ? b->dims[rb - 1] : 1;
  int64_t Kb = rb >= 2 ? b->dims[rb - 2] : b->dims[0];
  if (K != Kb)
    return false;
  int na = ra > 2 ? ra - 2 : 0, nb = rb > 2 ? rb - 2 : 0;
  int nbat = na > nb ? na : nb;
  int64_t bd[NN_MAX_RANK], sa[NN_MAX_RANK], sb[NN_MAX_RANK];
  if (nbat > 0 && nn_broadcast_shape(na, a->dims, nb, b->dims, &nbat, bd) != NN_OK)
    return false;
  if (nbat > 0) {
    int64_t ad[NN_MAX_RANK], bdd[NN_MAX_RANK];
    for (int i = 0; i < na; i++)
      ad[i] = a->dims[i];
    for (int i = 0; i < nb; i++)
      bdd[i] = b->dims[i];
    nn_broadcast_strides(na, ad, nbat, bd, sa);
    nn_broadcast_strides(nb, bdd, nbat, bd, sb);
    for (int i = 0; i < nbat; i++) {
      sa[i] *= M * K;
      sb[i] *= K * N;
    }
  }
  /* collapse batch dims: drop 1s, merge contiguous neighbours */
  int64_t cd[NN_MAX_RANK], ca[NN_MAX_RANK], cb[NN_MAX_RANK];
  int c = 0;
  for (int i = 0; i < nbat; i++) {
    if (bd[i] == 1)
      continue;
    if (c > 0 && ca[c - 1] == sa[i] * bd[i] && cb[c - 1] == sb[i] * bd[i]) {
      cd[c - 1] *= bd[i];
      ca[c - 1] = sa[i];
      cb[c - 1] = sb[i];
      continue;
    }
    cd[c] = bd[i];
    ca[c] = sa[i];
    cb[c] = sb[i];
    c++;
  }
  if (c > 2)
    return false;
  memset(p, 0, sizeof *p);
  p->M = M;
  p->N = N;
  p->K = K;
  p->sam = K;
  p->sak = 1;
  p->sbk = N;
  p->sbn = 1;
  p->batch1 = c >= 2 ? cd[0] : 1;
  p->batch2 = c >= 1 ? cd[c - 1] : 1;
  p->sa1 = c >= 2 ? ca[0] : 0;
  p->sb1 = c >= 2 ? cb[0] : 0;
  p->sa2 = c >= 1 ? ca[c - 1] : 0;
  p->sb2 = c >= 1 ? cb[c - 1] : 0;
  p->alpha = 1.0f;
  return true;
}

static bool matmul_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  nn_vk_gemm p;
  nn_vk_act a;
  if (n->n_in != 2 || !f32_io(ctx, n, 1) || !is_f32(n->x[1]))
    return false;
  if (!matmul_params(n, &p) || !fused_act(n, &a))
    return false;
  return fits(ctx, n->x[1]) || (p.M == 1 && p.batch1 * p.batch2 == 1);
}

static nn_status matmul_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  nn_vk_gemm p;
  matmul_params(n, &p);
  fused_act(n, &p.act);
  nn_vk_tensor tA, tB, tY;
  TRY(in_t(r, n, 0, &tA, err));
  TRY(in_t(r, n, 1, &tB, err));
  TRY(out_t(r, n, 0, &tY, err));
  return nn_vk_k_gemm(nn_vk_rec_exec(r), &p, &tA, &tB, NULL, &tY, err);
}

/* ---- pooling -------------------------------------------------------------------------- */

static bool pool_geometry(const nn_node *n, conv_geom *g) {
  const nn_value *x = n->x[0];
  if (x->rank != 3 && x->rank != 4)
    return false;
  int nsp = x->rank - 2, cnt = 0;
  const int64_t *ks = nn_attr_ints(n, "kernel_shape", &cnt);
  if (!ks || cnt != nsp)
    return false;
  bool ceil = nn_attr_int(n, "ceil_mode", 0) != 0;
  nn_ctx c = {0};
  return conv_geom_init(&c, n, nsp, x->dims + 2, ks, true, ceil, g) == NN_OK;
}

static bool pool_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  conv_geom g;
  if (!f32_io(ctx, n, 1) || !pool_geometry(n, &g))
    return false;
  if (op_is(n, "MaxPool") && nn_attr_int(n, "storage_order", 0) != 0 && n->n_out > 1)
    return false;
  const nn_value *y = n->y[0];
  for (int i = 1; i < 3; i++)
    if (g.k[i] > 64 || g.s[i] > 64 || g.d[i] > 64)
      return false;
  return y->dims[y->rank - 1] == g.out[2] && (y->rank == 3 || y->dims[2] == g.out[1]);
}

static nn_status pool_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0];
  conv_geom g;
  pool_geometry(n, &g);
  nn_vk_pool2d p = {
      .kind = op_is(n, "MaxPool") ? NN_VK_POOL_MAX : NN_VK_POOL_AVG,
      .NC = x->dims[0] * x->dims[1], .H = g.in[1], .W = g.in[2], .OH = g.out[1], .OW = g.out[2],
      .KH = (int)g.k[1], .KW = (int)g.k[2], .SH = (int)g.s[1], .SW = (int)g.s[2],
      .DH = (int)g.d[1], .DW = (int)g.d[2], .PT = (int)g.pb[1], .PL = (int)g.pb[2],
      .PB = (int)g.pe[1], .PR = (int)g.pe[2],
      .count_include_pad = nn_attr_int(n, "count_include_pad", 0) != 0,
  };
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_pool2d(nn_vk_rec_exec(r), &p, &tx, &ty, err);
}

static bool gpool_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  return f32_io(ctx, n, 1) && n->x[0]->rank >= 3 && n->x[0]->numel > 0;
}

static nn_status gpool_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0];
  int kind = op_is(n, "GlobalMaxPool") ? NN_VK_RED_MAX : NN_VK_RED_MEAN;
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_reduce(nn_vk_rec_exec(r), kind, x->dims[0] * x->dims[1], prod(x->dims, 2, x->rank),
                        1, &tx, &ty, err);
}

/* ---- Softmax --------------------------------------------------------------------------- */

static bool softmax_shape(const nn_node *n, int64_t *outer, int64_t *r, int64_t *inner) {
  const nn_value *x = n->x[0];
  bool coerce = n->version < 13;
  int64_t axis = nn_attr_int(n, "axis", coerce ? 1 : -1);
  if (x->rank == 0)
    return false;
  if (coerce && axis == x->rank) {
    *outer = x->numel;
    *r = 1;
    *inner = 1;
    return true;
  }
  int a;
  if (!nn_norm_axis(axis, x->rank, &a))
    return false;
  *outer = prod(x->dims, 0, a);
  if (coerce) {
    *r = prod(x->dims, a, x->rank);
    *inner = 1;
  } else {
    *r = x->dims[a];
    *inner = prod(x->dims, a + 1, x->rank);
  }
  return true;
}

static bool softmax_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  int64_t o, rr, i;
  return f32_io(ctx, n, 1) && softmax_shape(n, &o, &rr, &i);
}

static nn_status softmax_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  int64_t outer, rr, inner;
  softmax_shape(n, &outer, &rr, &inner);
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_softmax(nn_vk_rec_exec(r), op_is(n, "LogSoftmax"), outer, rr, inner, &tx, &ty,
                         err);
}

/* ---- reductions ----------------------------------------------------------------------- */

typedef struct reduce_map {
  const char *name;
  int kind;
  int axes_input_version;
} reduce_map;

static const reduce_map k_reduce[] = {
    {"ReduceSum", NN_VK_RED_SUM, 13},          {"ReduceMean", NN_VK_RED_MEAN, 18},
    {"ReduceMax", NN_VK_RED_MAX, 18},          {"ReduceMin", NN_VK_RED_MIN, 18},
    {"ReduceProd", NN_VK_RED_PROD, 18},        {"ReduceL1", NN_VK_RED_L1, 18},
    {"ReduceL2", NN_VK_RED_L2, 18},            {"ReduceLogSum", NN_VK_RED_LOG_SUM, 18},
    {"ReduceLogSumExp", NN_VK_RED_LOG_SUM_EXP, 18}, {"ReduceSumSquare", NN_VK_RED_SUM_SQUARE, 18},
};

/* The reduced axes must form one contiguous run once unit dims are
 * ignored: x is then [outer, r, inner].  *noop: a plain copy. */
static bool reduce_shape(const nn_node *n, int *kind, int64_t *outer, int64_t *r, int64_t *inner,
                         bool *noop) {
  const reduce_map *m = NULL;
  for (size_t i = 0; i < sizeof k_reduce / sizeof k_reduce[0]; i++)
    if (op_is(n, k_reduce[i].name))
      m = &k_reduce[i];
  if (!m)
    return false;
  const nn_value *x = n->x[0];
  int rank = x->rank;
  bool red[NN_MAX_RANK] = {false};
  int naxes = 0;
  *noop = false;
  if (n->version >= m->axes_input_version) {
    bool noop_empty = nn_attr_int(n, "noop_with_empty_axes", 0) != 0;
    if (n->n_in > 1 && n->x[1]) {
      if (!known_value(n->x[1]))
        return false;
      for (int64_t i = 0; i < n->x[1]->numel; i++) {
        int a;
        if (!nn_norm_axis(nn_value_get_int(n->x[1], i), rank, &a))
          return false;
        red[a] = true;
        naxes++;
      }
    }
    if (naxes == 0 && noop_empty)
      *noop = true;
  } else {
    int cnt = 0;
    const int64_t *ax = nn_attr_ints(n, "axes", &cnt);
    for (int i = 0; ax && i < cnt; i++) {
      int a;
      if (!nn_norm_axis(ax[i], rank, &a))
        return false;
      red[a] = true;
      naxes++;
    }
  }
  if (naxes == 0)
    for (int i = 0; i < rank; i++)
      red[i] = true;
  int first = -1, last = -1;
  for (int i = 0; i < rank; i++) {
    if (!red[i] || x->dims[i] == 1)
      continue;
    if (first < 0)
      first = i;
    last = i;
  }
  for (int i = first; first >= 0 && i <= last; i++)
    if (!red[i] && x->dims[i] != 1)
      return false;
  *kind = m->kind;
  if (first < 0) {
    *outer = x->numel;
    *r = 1;
    *inner = 1;
  } else {
    *outer = prod(x->dims, 0, first);
    *r = prod(x->dims, first, last + 1);
    *inner = prod(x->dims, last + 1, rank);
  }
  return true;
}

static bool reduce_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  int kind;
  int64_t o, rr, i;
  bool noop;
  if (!f32_io(ctx, n, 1) || !reduce_shape(n, &kind, &o, &rr, &i, &noop))
    return false;
  return n->x[0]->numel > 0;
}

static nn_status reduce_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  int kind;
  int64_t outer, rr, inner;
  bool noop;
  reduce_shape(n, &kind, &outer, &rr, &inner, &noop);
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  if (noop) {
    if (same_view(&tx, &ty))
      return NN_OK;
    tx.size = ty.size = n->y[0]->nbytes;
    return nn_vk_exec_copy(nn_vk_rec_exec(r), &tx, &ty, err);
  }
  return nn_vk_k_reduce(nn_vk_rec_exec(r), kind, outer, rr, inner, &tx, &ty, err);
}

/* ---- BatchNormalization, LRN ---------------------------------------------------------------- */

static bool bn_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  if (n->n_in < 5 || !f32_io(ctx, n, 1) || n->x[0]->rank < 2)
    return false;
  if (nn_attr_int(n, "training_mode", 0) != 0 || (n->version < 7 && nn_attr_int(n, "is_test", 0) == 0))
    return false;
  for (int k = 1; k < 5; k++)
    if (!known_value(n->x[k]) || !is_f32(n->x[k]) || n->x[k]->numel != n->x[0]->dims[1])
      return false;
  return true;
}

static nn_status bn_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0];
  int64_t C = x->dims[1];
  float eps = nn_attr_float(n, "epsilon", 1e-5f);
  const float *sc = n->x[1]->data, *b = n->x[2]->data, *mean = n->x[3]->data, *var = n->x[4]->data;
  /* y = (x - mean) / sqrt(var + eps) * scale + B = x * s + (B - mean * s) */
  float *sb = nn_malloc((size_t)C * 2 * sizeof *sb);
  if (!sb)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  for (int64_t c = 0; c < C; c++) {
    float s = sc[c] / sqrtf(var[c] + eps);
    sb[c] = s;
    sb[C + c] = b[c] - mean[c] * s;
  }
  nn_vk_tensor tsb, tx, ty;
  nn_status st = nn_vk_rec_const(r, sb, (size_t)C * 2 * sizeof *sb, &tsb, err);
  nn_free(sb);
  if (st != NN_OK)
    return st;
  nn_vk_tensor ts = {tsb.buffer, tsb.offset, (VkDeviceSize)C * 4};
  nn_vk_tensor tb = {tsb.buffer, tsb.offset + (VkDeviceSize)C * 4, (VkDeviceSize)C * 4};
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  nn_vk_act act;
  fused_act(n, &act);
  return nn_vk_k_affine(nn_vk_rec_exec(r), x->dims[0], C, prod(x->dims, 2, x->rank), act, &tx, &ts,
                        &tb, &ty, err);
}

static bool lrn_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  return f32_io(ctx, n, 1) && n->x[0]->rank >= 2 && nn_attr_int(n, "size", 0) >= 1;
}

static nn_status lrn_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0];
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_lrn(nn_vk_rec_exec(r), x->dims[0], x->dims[1], prod(x->dims, 2, x->rank),
                     (int)nn_attr_int(n, "size", 1), nn_attr_float(n, "alpha", 1e-4f),
                     nn_attr_float(n, "beta", 0.75f), nn_attr_float(n, "bias", 1.0f), &tx, &ty, err);
}

/* ---- Resize / Upsample -------------------------------------------------------------------- */

static bool resize_params(const nn_node *n, nn_vk_resize *p) {
  const nn_value *x = n->x[0], *y = n->y[0];
  if (x->rank != 4 || y->rank != 4 || x->dims[0] != y->dims[0] || x->dims[1] != y->dims[1])
    return false;
  bool upsample = op_is(n, "Upsample");
  const char *mode = nn_attr_string(n, "mode", "nearest");
  memset(p, 0, sizeof *p);
  if (strcmp(mode, "nearest") == 0)
    p->mode = NN_VK_RESIZE_NEAREST;
  else if (strcmp(mode, "linear") == 0 || strcmp(mode, "bilinear") == 0)
    p->mode = NN_VK_RESIZE_LINEAR;
  else
    return false;
  float scales[4] = {1, 1, 1, 1};
  bool have_scales = false;
  if (upsample) {
    /* Upsample: asymmetric coordinates, nearest rounds down */
    p->coord = NN_VK_COORD_ASYMMETRIC;
    p->nearest = NN_VK_NEAREST_FLOOR;
    if (n->version < 9) {
      int cnt = 0;
      const float *s = nn_attr_floats(n, "scales", &cnt);
      if (!s || cnt != 4)
        return false;
      memcpy(scales, s, sizeof scales);
    } else {
      if (n->n_in < 2 || !known_value(n->x[1]) || n->x[1]->numel != 4 || !is_f32(n->x[1]))
        return false;
      memcpy(scales, n->x[1]->data, sizeof scales);
    }
    have_scales = true;
  } else {
    if (n->version < 11)
      return false;   /* opset 10's Resize: rare, left to the CPU */
    const char *ct = nn_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    if (strcmp(ct, "half_pixel") == 0)
      p->coord = NN_VK_COORD_HALF_PIXEL;
    else if (strcmp(ct, "asymmetric") == 0)
      p->coord = NN_VK_COORD_ASYMMETRIC;
    else if (strcmp(ct, "align_corners") == 0)
      p->coord = NN_VK_COORD_ALIGN_CORNERS;
    else if (strcmp(ct, "pytorch_half_pixel") == 0)
      p->coord = NN_VK_COORD_PYTORCH_HALF_PIXEL;
    else if (strcmp(ct, "half_pixel_symmetric") == 0)
      p->coord = NN_VK_COORD_HALF_PIXEL_SYMMETRIC;
    else
      return false;
    const char *nm = nn_attr_string(n, "nearest_mode", "round_prefer_floor");
    if (strcmp(nm, "round_prefer_floor") == 0)
      p->nearest = NN_VK_NEAREST_ROUND_PREFER_FLOOR;
    else if (strcmp(nm, "round_prefer_ceil") == 0)
      p->nearest = NN_VK_NEAREST_ROUND_PREFER_CEIL;
    else if (strcmp(nm, "floor") == 0)
      p->nearest = NN_VK_NEAREST_FLOOR;
    else if (strcmp(nm, "ceil") == 0)
      p->nearest = NN_VK_NEAREST_CEIL;
    else
      return false;
    if (nn_attr_int(n, "antialias", 0) != 0 || nn_attr_int(n, "exclude_outside", 0) != 0 ||
        nn_attr_get(n, "axes") != NULL)
      return false;
    const char *kp = nn_attr_string(n, "keep_aspect_ratio_policy", "stretch");
    if (strcmp(kp, "stretch") != 0)
      return false;
    if (n->n_in > 2 && n->x[2] && n->x[2]->numel > 0) {
      if (!known_value(n->x[2]) || !is_f32(n->x[2]) || n->x[2]->numel != 4)
        return false;
      memcpy(scales, n->x[2]->data, sizeof scales);
      have_scales = true;
    }
  }
  if (!have_scales) {
    /* sizes given: the scale is output / input, as ONNX defines it */
    for (int i = 0; i < 4; i++)
      scales[i] = (float)y->dims[i] / (float)x->dims[i];
  }
  if (scales[0] != 1.0f || scales[1] != 1.0f || !(scales[2] > 0) || !(scales[3] > 0))
    return false;
  p->NC = x->dims[0] * x->dims[1];
  p->H = x->dims[2];
  p->W = x->dims[3];
  p->OH = y->dims[2];
  p->OW = y->dims[3];
  p->scale_h = scales[2];
  p->scale_w = scales[3];
  return p->H > 0 && p->W > 0;
}

static bool resize_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  nn_vk_resize p;
  return n->n_in >= 1 && n->x[0] && is_f32(n->x[0]) && is_f32(n->y[0]) && fits(ctx, n->x[0]) &&
         fits(ctx, n->y[0]) && n->n_out == 1 && resize_params(n, &p);
}

static nn_status resize_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  nn_vk_resize p;
  resize_params(n, &p);
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_resize(nn_vk_rec_exec(r), &p, &tx, &ty, err);
}

/* ---- Cast float -> float ----------------------------------------------------------------- */

static bool cast_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  return n->n_in >= 1 && n->x[0] && n->y[0] && n->x[0]->dtype == n->y[0]->dtype &&
         n->x[0]->dtype != NN_DTYPE_STRING && fits(ctx, n->x[0]);
}

/* ---- the table ------------------------------------------------------------------------------ */

static const nn_vk_op k_ops[] = {
    {"Relu", unary_supports, unary_record},
    {"LeakyRelu", unary_supports, unary_record},
    {"Sigmoid", unary_supports, unary_record},
    {"HardSigmoid", unary_supports, unary_record},
    {"HardSwish", unary_supports, unary_record},
    {"Tanh", unary_supports, unary_record},
    {"Elu", unary_supports, unary_record},
    {"Selu", unary_supports, unary_record},
    {"Softplus", unary_supports, unary_record},
    {"Softsign", unary_supports, unary_record},
    {"Exp", unary_supports, unary_record},
    {"Log", unary_supports, unary_record},
    {"Abs", unary_supports, unary_record},
    {"Neg", unary_supports, unary_record},
    {"Sqrt", unary_supports, unary_record},
    {"Reciprocal", unary_supports, unary_record},
    {"Floor", unary_supports, unary_record},
    {"Ceil", unary_supports, unary_record},
    {"Erf", unary_supports, unary_record},
    {"Sin", unary_supports, unary_record},
    {"Cos", unary_supports, unary_record},
    {"Tan", unary_supports, unary_record},
    {"Round", unary_supports, unary_record},
    {"Sign", unary_supports, unary_record},
    {"Mish", unary_supports, unary_record},
    {"ThresholdedRelu", unary_supports, unary_record},
    {"Celu", unary_supports, unary_record},
    {"Shrink", unary_supports, unary_record},
    {"Asin", unary_supports, unary_record},
    {"Acos", unary_supports, unary_record},
    {"Atan", unary_supports, unary_record},
    {"Sinh", unary_supports, unary_record},
    {"Cosh", unary_supports, unary_record},
    {"Asinh", unary_supports, unary_record},
    {"Acosh", unary_supports, unary_record},
    {"Atanh", unary_supports, unary_record},
    {"Gelu", unary_supports, unary_record},
    {"Clip", unary_supports, unary_record},
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
    {"Reshape", view_supports, view_record},
    {"Flatten", view_supports, view_record},
    {"Squeeze", view_supports, view_record},
    {"Unsqueeze", view_supports, view_record},
    {"Identity", view_supports, view_record},
    {"Dropout", view_supports, view_record},
    {"Cast", cast_supports, view_record},
    {"Transpose", transpose_supports, transpose_record},
    {"Concat", concat_supports, concat_record},
    {"Split", split_supports, split_record},
    {"Slice", slice_supports, slice_record},
    {"Expand", expand_supports, expand_record},
    {"Tile", tile_supports, tile_record},
    {"Pad", pad_supports, pad_record},
    {"Conv", conv_supports, conv_record},
    {"Gemm", gemm_supports, gemm_record},
    {"MatMul", matmul_supports, matmul_record},
    {"MaxPool", pool_supports, pool_record},
    {"AveragePool", pool_supports, pool_record},
    {"GlobalAveragePool", gpool_supports, gpool_record},
    {"GlobalMaxPool", gpool_supports, gpool_record},
    {"Softmax", softmax_supports, softmax_record},
    {"LogSoftmax", softmax_supports, softmax_record},
    {"ReduceSum", reduce_supports, reduce_record},
    {"ReduceMean", reduce_supports, reduce_record},
    {"ReduceMax", reduce_supports, reduce_record},
    {"ReduceMin", reduce_supports, reduce_record},
    {"ReduceProd", reduce_supports, reduce_record},
    {"ReduceL1", reduce_supports, reduce_record},
    {"ReduceL2", reduce_supports, reduce_record},
    {"ReduceLogSum", reduce_supports, reduce_record},
    {"ReduceLogSumExp", reduce_supports, reduce_record},
    {"ReduceSumSquare", reduce_supports, reduce_record},
    {"BatchNormalization", bn_supports, bn_record},
    {"LRN", lrn_supports, lrn_record},
    {"Resize", resize_supports, resize_record},
    {"Upsample", resize_supports, resize_record},
};

const nn_vk_op *nn_vk_op_find(const nn_node *n) {
  if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
    return NULL;
  for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; i++)
    if (strcmp(k_ops[i].name, n->op_type) == 0)
      return &k_ops[i];
  return NULL;
}

bool nn_vk_op_supported(const nn_vk_ctx *ctx, const nn_node *n) {
  const nn_vk_op *op = nn_vk_op_find(n);
  return op && op->supports(ctx, n);
}
