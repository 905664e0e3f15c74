/* binary.c - elementwise operators of two or more inputs with ONNX
 * (numpy) broadcasting: arithmetic, comparison, logic, bitwise, PRelu, the
 * variadic Max/Min/Sum/Mean, and Where.
 *
 * Every operator is one case of a kernel written per compute domain (float,
 * double, int64, uint64; see ew_conv.h) that processes one row: a run of
 * output elements over which each input advances by 0 or 1 element.  The
 * broadcast walk (ew_iter.h) reduces any shape combination to such rows, so
 * float32 same-shape and scalar cases are single flat loops over memory.
 * Other dtypes are converted to their domain in small chunks on the way in
 * and out.
 */
#include <string.h>

#include "cpu/ew_iter.h"
#include "cpu/ops.h"
#include "nn_strings.h"
#include "ops/binary.h"

typedef enum bin_op {
  BIN_OP_ADD = 1,
  BIN_OP_SUB,
  BIN_OP_MUL,
  BIN_OP_DIV,
  BIN_OP_POW,
  BIN_OP_MOD,
  BIN_OP_MAX,
  BIN_OP_MIN,
  BIN_OP_PRELU,
  BIN_OP_EQ,
  BIN_OP_LT,
  BIN_OP_GT,
  BIN_OP_LE,
  BIN_OP_GE,
  BIN_OP_AND,
  BIN_OP_OR,
  BIN_OP_XOR,
  BIN_OP_BAND,
  BIN_OP_BOR,
  BIN_OP_BXOR,
  BIN_OP_SHL,
  BIN_OP_SHR,
  BIN_OP_SUM,     /* variadic Add */
  BIN_OP_MEAN,    /* variadic Add, then divided by the input count */
  BIN_OP_WHERE,
  BIN_OP_BITSHIFT, /* resolved to SHL/SHR from the direction attribute */
} bin_op;

typedef struct bin_args {
  int fmod;
} bin_args;

/* One row of y = f(u, v).  The four stride cases are separate loops so that
 * each is a plain loop over contiguous memory the compiler can vectorize. */
#define BIN_LOOP(TY, EXPR)                                                         \
  do {                                                                             \
    TY *yy_ = (TY *)y;                                                             \
    if (sa && sb) {                                                                \
      for (int64_t i_ = 0; i_ < n; i_++) {                                         \
        const BT u = a[i_], v = b[i_];                                             \
        (void)v;                                                                   \
        yy_[i_] = (TY)(EXPR);                                                      \
      }                                                                            \
    } else if (sb) {                                                               \
      const BT u = a[0];                                                           \
      for (int64_t i_ = 0; i_ < n; i_++) {                                         \
        const BT v = b[i_];                                                        \
        (void)v;                                                                   \
        yy_[i_] = (TY)(EXPR);                                                      \
      }                                                                            \
    } else if (sa) {                                                               \
      const BT v = b[0];                                                           \
      (void)v;                                                                     \
      for (int64_t i_ = 0; i_ < n; i_++) {                                         \
        const BT u = a[i_];                                                        \
        yy_[i_] = (TY)(EXPR);                                                      \
      }                                                                            \
    } else {                                                                       \
      const BT u = a[0], v = b[0];                                                 \
      (void)v;                                                                     \
      const TY r_ = (TY)(EXPR);                                                    \
      for (int64_t i_ = 0; i_ < n; i_++)                                           \
        yy_[i_] = r_;                                                              \
    }                                                                              \
  } while (0)

typedef void (*bin_kernel)(int op, const bin_args *p, const void *a, int sa, const void *b,
                           int sb, void *y, int64_t n);

#define BT float
#define BKIND 1
#define BM(fn) fn##f
#define BFN bin_kernel_f32
#include "cpu/ew_bin_tmpl.h"
#undef BT
#undef BKIND
#undef BM
#undef BFN

#define BT double
#define BKIND 1
#define BM(fn) fn
#define BFN bin_kernel_f64
#include "cpu/ew_bin_tmpl.h"
#undef BT
#undef BKIND
#undef BM
#undef BFN

#define BT int64_t
#define BKIND 2
#define BFN bin_kernel_i64
#include "cpu/ew_bin_tmpl.h"
#undef BT
#undef BKIND
#undef BFN

#define BT uint64_t
#define BKIND 3
#define BFN bin_kernel_u64
#include "cpu/ew_bin_tmpl.h"
#undef BT
#undef BKIND
#undef BFN

static bin_kernel bin_kernel_for(ew_dom d) {
  switch (d) {
  case EW_F32: return bin_kernel_f32;
  case EW_F64: return bin_kernel_f64;
  case EW_I64: return bin_kernel_i64;
  case EW_U64: return bin_kernel_u64;
  default: return NULL;
  }
}

/* ---- operator descriptions -------------------------------------------------- */

/* The kernel case of each operator; its inputs, their dtypes and the
 * output's are the op layer's (ops/binary.c). */
typedef struct bin_desc {
  const char *name;
  int op;
  bool variadic;     /* Max/Min/Sum/Mean: inputs folded pairwise (bin_run_variadic) */
} bin_desc;

static const bin_desc bin_descs[] = {
  {"Add", BIN_OP_ADD, false},
  {"Sub", BIN_OP_SUB, false},
  {"Mul", BIN_OP_MUL, false},
  {"Div", BIN_OP_DIV, false},
  {"Pow", BIN_OP_POW, false},
  {"Mod", BIN_OP_MOD, false},
  {"PRelu", BIN_OP_PRELU, false},
  {"Equal", BIN_OP_EQ, false},
  {"Less", BIN_OP_LT, false},
  {"Greater", BIN_OP_GT, false},
  {"LessOrEqual", BIN_OP_LE, false},
  {"GreaterOrEqual", BIN_OP_GE, false},
  {"And", BIN_OP_AND, false},
  {"Or", BIN_OP_OR, false},
  {"Xor", BIN_OP_XOR, false},
  {"BitwiseAnd", BIN_OP_BAND, false},
  {"BitwiseOr", BIN_OP_BOR, false},
  {"BitwiseXor", BIN_OP_BXOR, false},
  {"BitShift", BIN_OP_BITSHIFT, false},
  {"Max", BIN_OP_MAX, true},
  {"Min", BIN_OP_MIN, true},
  {"Sum", BIN_OP_SUM, true},
  {"Mean", BIN_OP_MEAN, true},
  {"Where", BIN_OP_WHERE, false},
};

static const bin_desc *bin_find(const char *name) {
  for (size_t i = 0; i < sizeof bin_descs / sizeof bin_descs[0]; i++)
    if (strcmp(bin_descs[i].name, name) == 0)
      return &bin_descs[i];
  return NULL;
}

/* Kernel parameters, one nn_malloc block in node->priv. */
typedef struct bin_priv {
  const bin_desc *desc;
  int op;                      /* the kernel case (BitShift resolved) */
  ew_dom cd;                   /* domain the kernel computes in */
  bool to_bool;                /* the output is bool (comparison, logic) */
  bin_args args;
  /* opset < 7 broadcasting: input 1 is seen with these dims (ops/binary.h) */
  nn_binary_legacy legacy;
} bin_priv;

static ew_dom bin_pow_domain(nn_dtype base, nn_dtype expo) {
  ew_dom db = ew_dom_of(base), de = ew_dom_of(expo);
  if (!ew_dom_is_float(db) && !ew_dom_is_float(de))
    return (db == EW_U64 && de == EW_U64) ? EW_U64 : EW_I64;
  if (db == EW_F32 && de == EW_F32)
    return EW_F32;
  return EW_F64;
}

/* The op layer checked the inputs and their dtypes and set Y
 * (ops/binary.c): every dtype it admits has a compute domain here. */
static nn_status bin_prepare(nn_ctx *c, nn_node *n) {
  const bin_desc *d = bin_find(n->op->name);
  if (!d)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "no elementwise kernel for this op");
  bin_priv pr = {.desc = d, .op = d->op, .to_bool = n->y[0]->dtype == NN_DTYPE_BOOL};
  /* the attributes' meaning is the op layer's (ops/binary.h) */
  nn_binary_attrs ba;
  nn_status st = nn_binary_attrs_init(c, n, &ba);
  if (st != NN_OK)
    return st;
  if (d->op == BIN_OP_BITSHIFT)
    pr.op = ba.shift_left ? BIN_OP_SHL : BIN_OP_SHR;
  if (d->op == BIN_OP_MOD)
    pr.args.fmod = ba.fmod;
  if (d->op == BIN_OP_SUM || d->op == BIN_OP_MEAN)
    pr.op = BIN_OP_ADD;
  /* Where's operands are inputs 1 and 2 (it selects bytes: no domain) */
  nn_dtype dt = n->x[d->op == BIN_OP_WHERE ? 1 : 0]->dtype;
  pr.cd = d->op == BIN_OP_POW ? bin_pow_domain(dt, n->x[1]->dtype) : ew_dom_of(dt);
  st = nn_binary_legacy_init(c, n, &ba, &pr.legacy);
  if (st != NN_OK)
    return st;

  /* Variadic folds of 3+ inputs may need a scratch accumulator (see
   * bin_run_variadic). */
  if (d->variadic && n->n_in >= 3)
    n->ws_bytes = n->y[0]->nbytes;

  bin_priv *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *p = pr;
  n->priv = p;
  return NN_OK;
}

/* ---- execution -------------------------------------------------------------- */

typedef struct bin_operand {
  nn_dtype dt;
  int rank;
  const int64_t *dims;
  const void *data;
} bin_operand;

typedef struct bin_exec {
  int op;
  const bin_args *args;
  bin_kernel kern;
  ew_dom cd;
  ew_dom rd;                   /* domain the kernel writes, EW_NONE for bool */
  bool direct;                 /* all operands native: no conversion */
  const char *a, *b;
  char *y;
  nn_dtype da, db, dy;
  size_t ea, eb, ey;
} bin_exec;

static void bin_segment(void *ctx, const int64_t *off, const int *step, int64_t yo, int64_t len) {
  const bin_exec *e = ctx;
  const char *a = e->a + off[0] * (int64_t)e->ea;
  const char *b = e->b + off[1] * (int64_t)e->eb;
  char *y = e->y + yo * (int64_t)e->ey;
  if (e->direct) {
    e->kern(e->op, e->args, a, step[0], b, step[1], y, len);
    return;
  }
  uint64_t ba[EW_CHUNK], bb[EW_CHUNK], by[EW_CHUNK], tmp[EW_CHUNK];
  for (int64_t i = 0; i < len; i += EW_CHUNK) {
    int64_t m = len - i < EW_CHUNK ? len - i : EW_CHUNK;
    const void *ca = ew_fetch(e->da, a + (step[0] ? i * (int64_t)e->ea : 0), step[0] ? m : 1,
                              e->cd, ba, tmp);
    const void *cb = ew_fetch(e->db, b + (step[1] ? i * (int64_t)e->eb : 0), step[1] ? m : 1,
                              e->cd, bb, tmp);
    char *yi = y + i * (int64_t)e->ey;
    if (e->rd == EW_NONE || ew_native(e->dy, e->rd)) {
      e->kern(e->op, e->args, ca, step[0], cb, step[1], yi, m);
    } else {
      e->kern(e->op, e->args, ca, step[0], cb, step[1], by, m);
      ew_put(e->rd, by, e->dy, yi, m, tmp);
    }
  }
}

/* y = op(a, b) with broadcasting; y has the broadcast shape. */
static void bin_apply(nn_ctx *c, const bin_priv *p, const bin_operand *a, const bin_operand *b,
                      nn_value *y, void *ydata) {
  bin_exec e = {
    .op = p->op, .args = &p->args, .kern = bin_kernel_for(p->cd), .cd = p->cd,
    .rd = p->to_bool ? EW_NONE : p->cd,
    .a = a->data, .b = b->data, .y = ydata,
    .da = a->dt, .db = b->dt, .dy = y->dtype,
    .ea = nn_dtype_size(a->dt), .eb = nn_dtype_size(b->dt), .ey = nn_dtype_size(y->dtype),
  };
  e.direct = ew_native(e.da, e.cd) && ew_native(e.db, e.cd) &&
             (e.rd == EW_NONE || ew_native(e.dy, e.rd));
  const int ranks[2] = {a->rank, b->rank};
  const int64_t *dims[2] = {a->dims, b->dims};
  ew_iter it;
  ew_iter_init(&it, y->rank, y->dims, 2, ranks, dims, bin_segment, &e);
  ew_iter_run(c, &it);
}

static bin_operand bin_operand_of(const nn_value *v) {
  return (bin_operand){v->dtype, v->rank, v->dims, v->data};
}

static bool bin_overlap(const nn_value *v, const nn_value *y) {
  const char *p = v->data, *q = y->data;
  return v->nbytes && y->nbytes && p < q + y->nbytes && q < p + v->nbytes;
}

static void bin_mean_scale(nn_value *y, int count) {
  ew_dom d = ew_dom_of(y->dtype);
  const int64_t total = y->numel;
  const size_t es = nn_dtype_size(y->dtype);
  uint64_t buf[EW_CHUNK], tmp[EW_CHUNK];
  for (int64_t i = 0; i < total; i += EW_CHUNK) {
    int64_t m = total - i < EW_CHUNK ? total - i : EW_CHUNK;
    char *p = (char *)y->data + i * (int64_t)es;
    void *v = (void *)ew_fetch(y->dtype, p, m, d, buf, tmp);
    if (d == EW_F32) {
      float *f = v;
      for (int64_t j = 0; j < m; j++)
        f[j] /= (float)count;
    } else {
      double *f = v;
      for (int64_t j = 0; j < m; j++)
        f[j] /= (double)count;
    }
    ew_put(d, v, y->dtype, p, m, tmp);
  }
}

/* Max/Min/Sum/Mean fold the inputs pairwise into the output.  The planner
 * may give the output the buffer of any same-shape input (even several, when
 * the same value is passed twice); an input read after the first write would
 * then be clobbered, so in that case the partial results go to the
 * workspace and only the last step writes the output. */
static nn_status bin_run_variadic(nn_ctx *c, nn_node *n) {
  const bin_priv *p = n->priv;
  nn_value *y = n->y[0];
  const int count = n->n_in;
  if (count == 1) {
    if (y->data != n->x[0]->data)
      memcpy(y->data, n->x[0]->data, y->nbytes);
  } else {
    bool hazard = false;
    for (int k = 2; k < count; k++)
      hazard |= bin_overlap(n->x[k], y);
    void *acc = hazard ? n->ws : y->data;
    if (hazard && !acc)
      return nn_fail(c, NN_ERR_RUNTIME, "workspace missing");
    bin_operand a = bin_operand_of(n->x[0]);
    bin_operand b = bin_operand_of(n->x[1]);
    bin_apply(c, p, &a, &b, y, count == 2 ? y->data : acc);
    for (int k = 2; k < count; k++) {
      bin_operand s = {y->dtype, y->rank, y->dims, acc};
      b = bin_operand_of(n->x[k]);
      bin_apply(c, p, &s, &b, y, k == count - 1 ? y->data : acc);
    }
  }
  if (p->desc->op == BIN_OP_MEAN && count > 1)
    bin_mean_scale(y, count);
  return NN_OK;
}

/* ---- Where -------------------------------------------------------------------- */

typedef struct where_exec {
  const uint8_t *cond;
  const char *x, *z;
  char *y;
  size_t es;
} where_exec;

#define WHERE_LOOP(T)                                                              \
  do {                                                                             \
    const T *x = (const T *)e->x + off[1];                                         \
    const T *z = (const T *)e->z + off[2];                                         \
    T *y = (T *)e->y + yo;                                                         \
    const int s0 = step[0], s1 = step[1], s2 = step[2];                            \
    if (s0 && s1 && s2) {                                                          \
      for (int64_t i = 0; i < len; i++)                                            \
        y[i] = cond[i] ? x[i] : z[i];                                              \
    } else {                                                                       \
      for (int64_t i = 0; i < len; i++)                                            \
        y[i] = cond[i * s0] ? x[i * s1] : z[i * s2];                               \
    }                                                                              \
  } while (0)

static void where_segment(void *ctx, const int64_t *off, const int *step, int64_t yo, int64_t len) {
  const where_exec *e = ctx;
  const uint8_t *cond = e->cond + off[0];
  switch (e->es) {
  case 1: WHERE_LOOP(uint8_t); break;
  case 2: WHERE_LOOP(uint16_t); break;
  case 4: WHERE_LOOP(uint32_t); break;
  case 8: WHERE_LOOP(uint64_t); break;
  default: break;
  }
}

static nn_status where_run(nn_ctx *c, nn_node *n) {
  nn_value *y = n->y[0];
  where_exec e = {n->x[0]->data, n->x[1]->data, n->x[2]->data, y->data, nn_dtype_size(y->dtype)};
  const int ranks[3] = {n->x[0]->rank, n->x[1]->rank, n->x[2]->rank};
  const int64_t *dims[3] = {n->x[0]->dims, n->x[1]->dims, n->x[2]->dims};
  ew_iter it;
  ew_iter_init(&it, y->rank, y->dims, 3, ranks, dims, where_segment, &e);
  ew_iter_run(c, &it);
  return NN_OK;
}

static nn_status bin_run(nn_ctx *c, nn_node *n) {
  const bin_priv *p = n->priv;
  if (p->desc->op == BIN_OP_WHERE)
    return where_run(c, n);
  if (p->desc->variadic)
    return bin_run_variadic(c, n);
  bin_operand a = bin_operand_of(n->x[0]);
  bin_operand b = bin_operand_of(n->x[1]);
  if (p->legacy.on) {
    b.rank = p->legacy.b_rank;
    b.dims = p->legacy.b_dims;
  }
  bin_apply(c, p, &a, &b, n->y[0], n->y[0]->data);
  return NN_OK;
}

/* ---- Equal on strings (opset 19+ types): byte-wise equality ------------------ */
typedef struct bin_str_exec {
  const nn_string *a, *b;
  uint8_t *y;
} bin_str_exec;

static void bin_str_segment(void *ctx, const int64_t *off, const int *step, int64_t yo,
                            int64_t len) {
  const bin_str_exec *e = ctx;
  const nn_string *a = e->a + off[0], *b = e->b + off[1];
  for (int64_t i = 0; i < len; i++)
    e->y[yo + i] = nn_str_eq(&a[step[0] ? i : 0], &b[step[1] ? i : 0]);
}

/* Strings need no parameters (ops/binary.c checked both inputs). */
static nn_status equal_prepare(nn_ctx *c, nn_node *n) {
  if (n->x[0]->dtype == NN_DTYPE_STRING)
    return NN_OK;
  return bin_prepare(c, n);
}

static nn_status equal_run(nn_ctx *c, nn_node *n) {
  if (n->x[0]->dtype != NN_DTYPE_STRING)
    return bin_run(c, n);
  const nn_value *a = n->x[0], *b = n->x[1];
  nn_value *y = n->y[0];
  bin_str_exec e = {a->data, b->data, y->data};
  const int ranks[2] = {a->rank, b->rank};
  const int64_t *dims[2] = {a->dims, b->dims};
  ew_iter it;
  ew_iter_init(&it, y->rank, y->dims, 2, ranks, dims, bin_str_segment, &e);
  ew_iter_run(c, &it);
  return NN_OK;
}

#define BIN_K(NAME) {.name = NAME, .prepare = bin_prepare, .run = bin_run}

const nn_kernel nn_kernels_binary[] = {
  BIN_K("Add"),
  BIN_K("Sub"),
  BIN_K("Mul"),
  BIN_K("Div"),
  BIN_K("Pow"),
  BIN_K("Mod"),
  BIN_K("PRelu"),
  {.name = "Equal", .prepare = equal_prepare, .run = equal_run},
  BIN_K("Less"),
  BIN_K("Greater"),
  BIN_K("LessOrEqual"),
  BIN_K("GreaterOrEqual"),
  BIN_K("And"),
  BIN_K("Or"),
  BIN_K("Xor"),
  BIN_K("BitwiseAnd"),
  BIN_K("BitwiseOr"),
  BIN_K("BitwiseXor"),
  BIN_K("BitShift"),
  BIN_K("Max"),
  BIN_K("Min"),
  BIN_K("Sum"),
  BIN_K("Mean"),
  BIN_K("Where"),
  {0},
};
