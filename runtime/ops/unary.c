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
