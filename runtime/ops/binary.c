/* binary.c - the elementwise operators of two or more inputs with ONNX
 * (numpy) broadcasting (nn_ops_binary[], collected by ops/registry.c): their
 * attributes and opset < 7 broadcasting (binary.h), the dtypes each takes
 * and their shape and dtype inference. */
#include <stdio.h>
#include <string.h>

#include "ops/binary.h"

nn_status nn_binary_attrs_init(nn_ctx *c, const nn_node *n, nn_binary_attrs *b) {
  memset(b, 0, sizeof *b);
  b->legacy_broadcast = nn_attr_int(n, "broadcast", 0) != 0;
  const nn_attr *ax = nn_attr_get(n, "axis");
  if (ax) {
    b->has_axis = true;
    b->axis = ax->i;
  }
  if (!strcmp(n->op_type, "Mod")) {
    int64_t fm = nn_attr_int(n, "fmod", 0);
    if (fm != 0 && fm != 1)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "fmod=%lld (expected 0 or 1)", (long long)fm);
    b->fmod = (int)fm;
  }
  if (!strcmp(n->op_type, "BitShift")) {
    const char *dir = nn_attr_string(n, "direction", "");
    if (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "direction '%s' is not LEFT or RIGHT", dir);
    b->shift_left = strcmp(dir, "LEFT") == 0;
  }
  return NN_OK;
}

/* ---- operator descriptions -------------------------------------------------- */

enum {
  BIN_T_FLOAT = 1u << 0, /* float, double, float16, bfloat16 */
  BIN_T_SINT = 1u << 1,
  BIN_T_UINT = 1u << 2,
  BIN_T_BOOL = 1u << 3,
  BIN_T_ANY = 1u << 4,   /* any dtype the runtime holds (Where selects bytes) */
  BIN_T_NUM = BIN_T_FLOAT | BIN_T_SINT | BIN_T_UINT,
  BIN_T_INT = BIN_T_SINT | BIN_T_UINT,
};

enum { BIN_BINARY = 2, BIN_TERNARY = 3, BIN_VARIADIC = -1 };

/* The inputs an operator takes, their dtypes (its ONNX type constraint)
 * and whether it answers bool. */
typedef struct bin_desc {
  const char *name;
  int arity;
  unsigned types;
  bool to_bool;      /* output is bool (comparison, logic) */
} bin_desc;

static const bin_desc bin_descs[] = {
  {"Add", BIN_BINARY, BIN_T_NUM, false},
  {"Sub", BIN_BINARY, BIN_T_NUM, false},
  {"Mul", BIN_BINARY, BIN_T_NUM, false},
  {"Div", BIN_BINARY, BIN_T_NUM, false},
  {"Pow", BIN_BINARY, BIN_T_NUM, false},
  {"Mod", BIN_BINARY, BIN_T_NUM, false},
  {"PRelu", BIN_BINARY, BIN_T_NUM, false},
  {"Equal", BIN_BINARY, BIN_T_NUM | BIN_T_BOOL, true},
  {"Less", BIN_BINARY, BIN_T_NUM, true},
  {"Greater", BIN_BINARY, BIN_T_NUM, true},
  {"LessOrEqual", BIN_BINARY, BIN_T_NUM, true},
  {"GreaterOrEqual", BIN_BINARY, BIN_T_NUM, true},
  {"And", BIN_BINARY, BIN_T_BOOL, true},
  {"Or", BIN_BINARY, BIN_T_BOOL, true},
  {"Xor", BIN_BINARY, BIN_T_BOOL, true},
  {"BitwiseAnd", BIN_BINARY, BIN_T_INT, false},
  {"BitwiseOr", BIN_BINARY, BIN_T_INT, false},
  {"BitwiseXor", BIN_BINARY, BIN_T_INT, false},
  {"BitShift", BIN_BINARY, BIN_T_UINT, false},
  {"Max", BIN_VARIADIC, BIN_T_NUM, false},
  {"Min", BIN_VARIADIC, BIN_T_NUM, false},
  {"Sum", BIN_VARIADIC, BIN_T_NUM, false},
  {"Mean", BIN_VARIADIC, BIN_T_FLOAT, false},
  {"Where", BIN_TERNARY, BIN_T_ANY, false},
};

static const bin_desc *bin_find(const char *name) {
  for (size_t i = 0; i < sizeof bin_descs / sizeof bin_descs[0]; i++)
    if (strcmp(bin_descs[i].name, name) == 0)
      return &bin_descs[i];
  return NULL;
}

static bool bin_type_ok(unsigned types, nn_dtype dt) {
  if (types & BIN_T_ANY)
    return nn_dtype_size(dt) != 0;
  if (nn_dtype_is_float(dt))
    return types & BIN_T_FLOAT;
  if (dt == NN_DTYPE_BOOL)
    return types & BIN_T_BOOL;
  if (nn_dtype_is_int(dt))
    return (types & (nn_dtype_is_signed(dt) ? BIN_T_SINT : BIN_T_UINT)) != 0;
  return false;
}

/* ---- opset < 7 broadcasting --------------------------------------------------- */

static const char *bin_shape_str(char *buf, size_t cap, int rank, const int64_t *dims) {
  size_t len = 0;
  len += (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < rank && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, i ? ",%lld" : "%lld", (long long)dims[i]);
  if (len < cap)
    snprintf(buf + len, cap - len, "]");
  return buf;
}

static nn_status bin_shape_error(nn_ctx *c, const char *what, int ra, const int64_t *da,
                                 int rb, const int64_t *db) {
  char sa[96], sb[96];
  return nn_fail(c, NN_ERR_SHAPE, "%s: shapes %s and %s do not broadcast", what,
                 bin_shape_str(sa, sizeof sa, ra, da), bin_shape_str(sb, sizeof sb, rb, db));
}

/* Opset < 7 broadcasting (broadcast=1): B's dims line up with A's starting
 * at `axis` (default: suffix alignment); expressed as numpy dims for B. */
static nn_status bin_legacy_dims(nn_ctx *c, const nn_binary_attrs *ba, const nn_value *a,
                                 const nn_value *b, nn_binary_legacy *p) {
  if (!ba->legacy_broadcast)
    return NN_OK; /* shapes must match; numpy broadcasting accepts that */
  if (b->rank > a->rank)
    return nn_fail(c, NN_ERR_SHAPE, "broadcast: B has rank %d > A's rank %d", b->rank, a->rank);
  int axis = a->rank - b->rank;
  if (ba->has_axis && b->rank > 0) {
    if (!nn_norm_axis(ba->axis, a->rank, &axis) || axis + b->rank > a->rank)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "broadcast axis %lld out of range for ranks %d, %d",
                     (long long)ba->axis, a->rank, b->rank);
  }
  p->on = true;
  p->b_rank = a->rank - axis;
  for (int i = 0; i < p->b_rank; i++)
    p->b_dims[i] = i < b->rank ? b->dims[i] : 1;
  return NN_OK;
}

/* Opset < 7 PRelu: a 1-D slope of C values is per channel (axis 1). */
static void bin_prelu_legacy_dims(const nn_value *x, const nn_value *slope, nn_binary_legacy *p) {
  if (slope->rank != 1 || x->rank < 2 || slope->dims[0] == 1 || slope->dims[0] != x->dims[1])
    return;
  p->on = true;
  p->b_rank = x->rank - 1;
  p->b_dims[0] = slope->dims[0];
  for (int i = 1; i < p->b_rank; i++)
    p->b_dims[i] = 1;
}

nn_status nn_binary_legacy_init(nn_ctx *c, const nn_node *n, const nn_binary_attrs *ba,
                                nn_binary_legacy *lg) {
  memset(lg, 0, sizeof *lg);
  const bin_desc *d = bin_find(n->op_type);
  if (!d || d->arity != BIN_BINARY || n->version >= 7 || n->n_in != 2 || !n->x[0] || !n->x[1])
    return NN_OK;
  if (!strcmp(n->op_type, "PRelu")) {
    bin_prelu_legacy_dims(n->x[0], n->x[1], lg);
    return NN_OK;
  }
  return bin_legacy_dims(c, ba, n->x[0], n->x[1], lg);
}

/* ---- shape and dtype inference ---------------------------------------------- */

/* Y has the broadcast shape of the inputs (X's for PRelu) and the dtype of
 * the operands (bool for comparisons and logic). */
static nn_status binary_infer(nn_ctx *c, nn_node *n) {
  const bin_desc *d = bin_find(n->op->name);
  if (!d)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "no elementwise operator of this name");
  int need = d->arity == BIN_VARIADIC ? 1 : d->arity;
  if (n->n_in < need || (d->arity != BIN_VARIADIC && n->n_in > need) || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects %s%d inputs and 1 output, got %d inputs",
                   d->arity == BIN_VARIADIC ? "at least " : "", need, n->n_in);
  for (int i = 0; i < n->n_in; i++)
    if (!n->x[i])
      return nn_fail(c, NN_ERR_INVALID_MODEL, "input %d is missing", i);

  nn_binary_attrs ba;
  nn_status st = nn_binary_attrs_init(c, n, &ba);
  if (st != NN_OK)
    return st;
  const bool is_where = d->arity == BIN_TERNARY, is_pow = !strcmp(d->name, "Pow");
  /* Input whose dtype is the output's and the operands' type. */
  const int t0 = is_where ? 1 : 0;
  nn_dtype dt = n->x[t0]->dtype;
  if (!bin_type_ok(d->types, dt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "data type %s is not supported", nn_dtype_name(dt));
  for (int i = 0; i < n->n_in; i++) {
    nn_dtype di = n->x[i]->dtype;
    if (is_where && i == 0) {
      if (di != NN_DTYPE_BOOL)
        return nn_fail(c, NN_ERR_DTYPE, "condition must be bool, got %s", nn_dtype_name(di));
    } else if (is_pow && i == 1) {
      if (!bin_type_ok(BIN_T_NUM, di))
        return nn_fail(c, NN_ERR_UNSUPPORTED, "exponent type %s is not supported",
                       nn_dtype_name(di));
    } else if (di != dt) {
      return nn_fail(c, NN_ERR_DTYPE, "input %d is %s but input %d is %s", i, nn_dtype_name(di),
                     t0, nn_dtype_name(dt));
    }
  }

  /* Output shape. */
  nn_binary_legacy lg;
  st = nn_binary_legacy_init(c, n, &ba, &lg);
  if (st != NN_OK)
    return st;
  int rank = n->x[0]->rank;
  int64_t dims[NN_MAX_RANK];
  memcpy(dims, n->x[0]->dims, sizeof(int64_t) * (size_t)rank);
  for (int i = 1; i < n->n_in; i++) {
    const nn_value *x = n->x[i];
    int rb = x->rank;
    const int64_t *db = x->dims;
    if (i == 1 && lg.on) {
      rb = lg.b_rank;
      db = lg.b_dims;
    }
    int r2;
    int64_t d2[NN_MAX_RANK];
    if (nn_broadcast_shape(rank, dims, rb, db, &r2, d2) != NN_OK)
      return bin_shape_error(c, "inputs", rank, dims, rb, db);
    rank = r2;
    memcpy(dims, d2, sizeof(int64_t) * (size_t)rank);
  }
  if (!strcmp(d->name, "PRelu")) {
    /* The slope broadcasts to X (unidirectional): the output is X's shape. */
    const nn_value *x = n->x[0];
    bool same = rank == x->rank;
    for (int i = 0; same && i < rank; i++)
      same = dims[i] == x->dims[i];
    if (!same)
      return bin_shape_error(c, "slope does not broadcast to X", x->rank, x->dims, n->x[1]->rank,
                             n->x[1]->dims);
  }
  return nn_set_output(c, n->y[0], d->to_bool ? NN_DTYPE_BOOL : dt, rank, dims);
}

/* Equal also compares strings (opset 19+ types), byte-wise. */
static nn_status equal_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in < 1 || !n->x[0] || n->x[0]->dtype != NN_DTYPE_STRING)
    return binary_infer(c, n);
  if (n->n_in != 2 || !n->x[1] || n->x[1]->dtype != NN_DTYPE_STRING || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_DTYPE, "Equal on strings needs two string inputs and one output");
  const nn_value *a = n->x[0], *b = n->x[1];
  int rank;
  int64_t dims[NN_MAX_RANK];
  if (nn_broadcast_shape(a->rank, a->dims, b->rank, b->dims, &rank, dims) != NN_OK)
    return bin_shape_error(c, "inputs", a->rank, a->dims, b->rank, b->dims);
  return nn_set_output(c, n->y[0], NN_DTYPE_BOOL, rank, dims);
}

/* The family's operators (ops/registry.c): one inference for all
 * (binary_infer), Equal's with strings (equal_infer). */
#define BIN_OP(NAME, ...)                                                                  \
  {.name = NAME, .versions = {__VA_ARGS__}, .flags = NN_OP_ELEMENTWISE, .infer = binary_infer}

/* versions: since-versions with distinct semantics.  1: legacy broadcast
 * attribute (opset < 7); 7/8: numpy broadcasting; later revisions only add
 * types. */
const nn_op_def nn_ops_binary[] = {
  BIN_OP("Add", 1, 7),
  BIN_OP("Sub", 1, 7),
  BIN_OP("Mul", 1, 7),
  BIN_OP("Div", 1, 7),
  BIN_OP("Pow", 1, 7),
  BIN_OP("Mod", 10),
  BIN_OP("PRelu", 1, 7),
  {.name = "Equal", .versions = {1, 7}, .flags = NN_OP_ELEMENTWISE, .infer = equal_infer},
  BIN_OP("Less", 1, 7),
  BIN_OP("Greater", 1, 7),
  BIN_OP("LessOrEqual", 12),
  BIN_OP("GreaterOrEqual", 12),
  BIN_OP("And", 1, 7),
  BIN_OP("Or", 1, 7),
  BIN_OP("Xor", 1, 7),
  BIN_OP("BitwiseAnd", 18),
  BIN_OP("BitwiseOr", 18),
  BIN_OP("BitwiseXor", 18),
  BIN_OP("BitShift", 11),
  BIN_OP("Max", 1, 8),
  BIN_OP("Min", 1, 8),
  BIN_OP("Sum", 1, 8),
  BIN_OP("Mean", 1, 8),
  BIN_OP("Where", 9),
  {0},
};
