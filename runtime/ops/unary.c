/* unary.c - attributes of the parameterised elementwise ops (unary.h). */
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

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
#define UN_OP(NAME, ...) {.name = NAME, .versions = {__VA_ARGS__}, .flags = NN_OP_ELEMENTWISE}

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
