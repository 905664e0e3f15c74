/* unary.c - the elementwise operators of one tensor (nn_ops_unary[],
 * collected by ops/registry.c): the attributes of the parameterised ones
 * (unary.h), the dtypes each takes and their shape and dtype inference. */
#include <string.h>

#include "ops/unary.h"

nn_status nn_unary_attrs_init(nn_ctx *c, const nn_node *n, nn_unary_attrs *u) {
  memset(u, 0, sizeof *u);
  const char *op = n->op_type;
  if (!strcmp(op, "LeakyRelu")) {
    u->alpha = nn_attr_float(n, "alpha", 0.01f);
  } else if (!strcmp(op, "Elu") || !strcmp(op, "Celu") || !strcmp(op, "ThresholdedRelu") ||
             !strcmp(op, "Swish")) {
    u->alpha = nn_attr_float(n, "alpha", 1.0f);
  } else if (!strcmp(op, "Selu")) {
    u->alpha = nn_attr_float(n, "alpha", 1.67326319217681884765625f);
    u->gamma = nn_attr_float(n, "gamma", 1.05070102214813232421875f);
  } else if (!strcmp(op, "HardSigmoid")) {
    u->alpha = nn_attr_float(n, "alpha", 0.2f);
    u->beta = nn_attr_float(n, "beta", 0.5f);
  } else if (!strcmp(op, "Shrink")) {
    u->lambd = nn_attr_float(n, "lambd", 0.5f);
    u->bias = nn_attr_float(n, "bias", 0.0f);
  } else if (!strcmp(op, "IsInf")) {
    u->detect_pos = nn_attr_int(n, "detect_positive", 1) != 0;
    u->detect_neg = nn_attr_int(n, "detect_negative", 1) != 0;
  } else if (!strcmp(op, "Clip") && n->version < 11) {
    const nn_attr *lo = nn_attr_get(n, "min"), *hi = nn_attr_get(n, "max");
    u->has_min = lo != NULL;
    u->has_max = hi != NULL;
    u->clip_min = lo ? lo->f : 0.0;
    u->clip_max = hi ? hi->f : 0.0;
  } else if (!strcmp(op, "Gelu")) {
    const char *ap = nn_attr_string(n, "approximate", "none");
    if (!strcmp(ap, "tanh"))
      u->gelu_tanh = true;
    else if (strcmp(ap, "none") != 0)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "approximate='%s' (expected none or tanh)", ap);
  }
  return NN_OK;
}

/* ---- shape and dtype inference ---------------------------------------------- */

enum {
  UN_T_FLOAT = 1u << 0,
  UN_T_SINT = 1u << 1,
  UN_T_UINT = 1u << 2,
  UN_T_BOOL = 1u << 3,
  UN_T_NUM = UN_T_FLOAT | UN_T_SINT | UN_T_UINT,
  UN_T_INT = UN_T_SINT | UN_T_UINT,
};

/* The dtypes an operator takes (its ONNX type constraint) and whether it
 * answers bool (IsNaN, IsInf) rather than the dtype of X. */
typedef struct un_types {
  const char *name;
  unsigned types;
  bool to_bool;
} un_types;

static const un_types un_type_table[] = {
  {"Abs", UN_T_NUM, false},
  {"Neg", UN_T_FLOAT | UN_T_SINT, false},
  {"Ceil", UN_T_FLOAT, false},
  {"Floor", UN_T_FLOAT, false},
  {"Round", UN_T_FLOAT, false},
  {"Sqrt", UN_T_FLOAT, false},
  {"Exp", UN_T_FLOAT, false},
  {"Log", UN_T_FLOAT, false},
  {"Reciprocal", UN_T_FLOAT, false},
  {"Sign", UN_T_NUM, false},
  {"Sigmoid", UN_T_FLOAT, false},
  {"Tanh", UN_T_FLOAT, false},
  {"Erf", UN_T_FLOAT, false},
  {"Relu", UN_T_FLOAT | UN_T_SINT, false},
  {"LeakyRelu", UN_T_FLOAT, false},
  {"Elu", UN_T_FLOAT, false},
  {"Selu", UN_T_FLOAT, false},
  {"Celu", UN_T_FLOAT, false},
  {"ThresholdedRelu", UN_T_FLOAT, false},
  {"HardSigmoid", UN_T_FLOAT, false},
  {"HardSwish", UN_T_FLOAT, false},
  {"Softplus", UN_T_FLOAT, false},
  {"Softsign", UN_T_FLOAT, false},
  {"Shrink", UN_T_FLOAT, false},
  {"Sin", UN_T_FLOAT, false},
  {"Cos", UN_T_FLOAT, false},
  {"Tan", UN_T_FLOAT, false},
  {"Asin", UN_T_FLOAT, false},
  {"Acos", UN_T_FLOAT, false},
  {"Atan", UN_T_FLOAT, false},
  {"Sinh", UN_T_FLOAT, false},
  {"Cosh", UN_T_FLOAT, false},
  {"Asinh", UN_T_FLOAT, false},
  {"Acosh", UN_T_FLOAT, false},
  {"Atanh", UN_T_FLOAT, false},
  {"Gelu", UN_T_FLOAT, false},
  {"Mish", UN_T_FLOAT, false},
  {"Swish", UN_T_FLOAT, false},
  {"Clip", UN_T_NUM, false},
  {"IsNaN", UN_T_FLOAT, true},
  {"IsInf", UN_T_FLOAT, true},
  {"Not", UN_T_BOOL, false},
  {"BitwiseNot", UN_T_INT, false},
};

static const un_types *un_types_find(const char *name) {
  for (size_t i = 0; i < sizeof un_type_table / sizeof un_type_table[0]; i++)
    if (strcmp(un_type_table[i].name, name) == 0)
      return &un_type_table[i];
  return NULL;
}

static bool un_type_ok(unsigned types, nn_dtype dt) {
  if (nn_dtype_is_float(dt))
    return types & UN_T_FLOAT;
  if (dt == NN_DTYPE_BOOL)
    return types & UN_T_BOOL;
  if (nn_dtype_is_int(dt))
    return (types & (nn_dtype_is_signed(dt) ? UN_T_SINT : UN_T_UINT)) != 0;
  return false;
}

/* Y has the shape of X and its dtype (bool for IsNaN / IsInf). */
static nn_status unary_infer(nn_ctx *c, nn_node *n) {
  const un_types *d = un_types_find(n->op->name);
  if (!d)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "no elementwise operator of this name");
  const bool is_clip = strcmp(n->op->name, "Clip") == 0;
  const int max_in = is_clip && n->version >= 11 ? 3 : 1;
  if (n->n_in < 1 || n->n_in > max_in || !n->x[0] || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 1%s input%s and 1 output, got %d inputs",
                   max_in > 1 ? " to 3" : "", max_in > 1 ? "s" : "", n->n_in);
  const nn_value *x = n->x[0];
  if (!un_type_ok(d->types, x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "data type %s is not supported", nn_dtype_name(x->dtype));
  nn_unary_attrs u; /* validates Gelu's approximation */
  nn_status st = nn_unary_attrs_init(c, n, &u);
  if (st != NN_OK)
    return st;
  if (is_clip && n->version >= 11) {
    /* Clip-11+: the optional bounds min and max are scalars of X's dtype */
    for (int i = 1; i < n->n_in; i++) {
      const nn_value *b = n->x[i];
      if (!b)
        continue;
      if (b->dtype != x->dtype)
        return nn_fail(c, NN_ERR_DTYPE, "%s is %s but the input is %s", i == 1 ? "min" : "max",
                       nn_dtype_name(b->dtype), nn_dtype_name(x->dtype));
      if (b->numel != 1)
        return nn_fail(c, NN_ERR_SHAPE, "%s must be a scalar, has %lld elements",
                       i == 1 ? "min" : "max", (long long)b->numel);
    }
  }
  return nn_set_output(c, n->y[0], d->to_bool ? NN_DTYPE_BOOL : x->dtype, x->rank, x->dims);
}

/* The family's operators (ops/registry.c): one inference for all, Y of X's
 * shape (unary_infer). */
#define UN_OP(NAME, ...)                                                                  \
  {.name = NAME, .versions = {__VA_ARGS__}, .flags = NN_OP_ELEMENTWISE, .infer = unary_infer}

/* versions: since-versions with distinct semantics; revisions that only
 * add types or drop the legacy consumed_inputs attribute need no entry. */
const nn_op_def nn_ops_unary[] = {
  UN_OP("Abs", 1),
  UN_OP("Neg", 1),
  UN_OP("Ceil", 1),
  UN_OP("Floor", 1),
  UN_OP("Round", 11),
  UN_OP("Sqrt", 1),
  UN_OP("Exp", 1),
  UN_OP("Log", 1),
  UN_OP("Reciprocal", 1),
  UN_OP("Sign", 9),
  UN_OP("Sigmoid", 1),
  UN_OP("Tanh", 1),
  UN_OP("Erf", 9),
  UN_OP("Relu", 1),
  UN_OP("LeakyRelu", 1),
  UN_OP("Elu", 1),
  UN_OP("Selu", 1),
  UN_OP("Celu", 12),
  UN_OP("ThresholdedRelu", 10),
  UN_OP("HardSigmoid", 1),
  UN_OP("HardSwish", 14),
  UN_OP("Softplus", 1),
  UN_OP("Softsign", 1),
  UN_OP("Shrink", 9),
  UN_OP("Sin", 7),
  UN_OP("Cos", 7),
  UN_OP("Tan", 7),
  UN_OP("Asin", 7),
  UN_OP("Acos", 7),
  UN_OP("Atan", 7),
  UN_OP("Sinh", 9),
  UN_OP("Cosh", 9),
  UN_OP("Asinh", 9),
  UN_OP("Acosh", 9),
  UN_OP("Atanh", 9),
  UN_OP("Not", 1),
  UN_OP("IsNaN", 9),
  UN_OP("IsInf", 10),
  UN_OP("Gelu", 20),
  UN_OP("Mish", 18),
  UN_OP("Swish", 24),
  UN_OP("BitwiseNot", 18),
  /* 1: min/max attributes; 11: optional min/max inputs */
  UN_OP("Clip", 1, 11),
  {0},
};
