/* activation.c - the fused-activation vocabulary (activation.h): which ONNX
 * activation nodes a producer may absorb, their parameters, and the
 * reference semantics in double precision. */
#include <math.h>
#include <string.h>

#include "ops/activation.h"

static const struct {
  const char *op;
  int kind;
} act_ops[] = {
  {"Relu", NN_ACT_RELU},       {"LeakyRelu", NN_ACT_LEAKY_RELU}, {"Clip", NN_ACT_CLIP},
  {"Sigmoid", NN_ACT_SIGMOID}, {"HardSwish", NN_ACT_HARD_SWISH}, {"Gelu", NN_ACT_GELU},
};

/* Scalar float value of an optional constant input: true and *out set (left
 * untouched when absent); false when it is not a known float32 scalar. */
static bool act_const_scalar(const nn_value *v, float *out) {
  if (!v)
    return true;
  if (!v->known || !v->data || v->dtype != NN_DTYPE_FLOAT || v->numel != 1)
    return false;
  *out = *(const float *)v->data;
  return true;
}

bool nn_act_from_node(const nn_node *act, nn_act *out) {
  memset(out, 0, sizeof *out);
  if (act->domain[0] != '\0')
    return false;
  int kind = NN_ACT_NONE;
  for (size_t i = 0; i < sizeof act_ops / sizeof act_ops[0]; i++)
    if (strcmp(act->op_type, act_ops[i].op) == 0)
      kind = act_ops[i].kind;
  nn_act r = {kind, 0, 0};
  switch (kind) {
  case NN_ACT_NONE: return false;
  case NN_ACT_GELU:   /* the exact form only: the tanh one is another function */
    if (strcmp(nn_attr_string(act, "approximate", "none"), "none") != 0)
      return false;
    break;
  case NN_ACT_LEAKY_RELU: r.a = nn_attr_float(act, "alpha", 0.01f); break;
  case NN_ACT_CLIP:
    r.a = -INFINITY;
    r.b = INFINITY;
    if (act->version < 11) {
      r.a = nn_attr_float(act, "min", -INFINITY);
      r.b = nn_attr_float(act, "max", INFINITY);
    } else if (!act_const_scalar(act->n_in > 1 ? act->x[1] : NULL, &r.a) ||
               !act_const_scalar(act->n_in > 2 ? act->x[2] : NULL, &r.b)) {
      return false;
    }
    break;
  default: break;
  }
  *out = r;
  return true;
}

void nn_act_apply_f64(const nn_act *a, double *y, int64_t n) {
  switch (a->kind) {
  case NN_ACT_RELU:
    for (int64_t i = 0; i < n; i++)
      y[i] = y[i] < 0.0 ? 0.0 : y[i];
    break;
  case NN_ACT_CLIP:
    for (int64_t i = 0; i < n; i++)
      y[i] = y[i] < a->a ? a->a : (y[i] > a->b ? a->b : y[i]);
    break;
  case NN_ACT_LEAKY_RELU:
    for (int64_t i = 0; i < n; i++)
      y[i] = y[i] < 0.0 ? a->a * y[i] : y[i];
    break;
  case NN_ACT_HARD_SWISH:
    for (int64_t i = 0; i < n; i++) {
      double g = y[i] / 6.0 + 0.5;
      g = g < 0.0 ? 0.0 : (g > 1.0 ? 1.0 : g);
      y[i] *= g;
    }
    break;
  case NN_ACT_SIGMOID:
  case NN_ACT_SILU:
    for (int64_t i = 0; i < n; i++) {
      double v = y[i], s;
      if (v >= 0.0) {
        s = 1.0 / (1.0 + exp(-v));
      } else {
        double e = exp(v);
        s = e / (1.0 + e);
      }
      y[i] = a->kind == NN_ACT_SILU ? v * s : s;
    }
    break;
  case NN_ACT_GELU:
    for (int64_t i = 0; i < n; i++)
      y[i] = 0.5 * y[i] * (1.0 + erf(y[i] * 0.70710678118654752440));
    break;
  default: break;
  }
}
