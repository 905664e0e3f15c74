/* vk_unary.c - element-wise unary ops (activations, math functions, Clip)
 * on the Vulkan backend: their supports/record and the unary kernel
 * (shader unary).  The CPU side is cpu/unary.c. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "vk_op_util.h"
#include "ops/unary.h"
#include "vulkan/nn_vk_spirv.h"

/* ---- ops -------------------------------------------------------------------------- */

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
  /* the attributes' meaning and defaults: the op layer's (ops/unary.h) */
  nn_ctx c = {0};
  nn_unary_attrs ua;
  if (nn_unary_attrs_init(&c, n, &ua) != NN_OK)
    return false;
  switch (kind) {
  case NN_VK_ACT_LEAKY_RELU:
  case NN_VK_ACT_ELU:
  case NN_VK_ACT_THRESHOLDED_RELU:
  case NN_VK_ACT_CELU: a->a = (float)ua.alpha; break;
  case NN_VK_ACT_HARD_SIGMOID:
    a->a = (float)ua.alpha;
    a->b = (float)ua.beta;
    break;
  case NN_VK_ACT_SELU:
    a->a = (float)ua.alpha;
    a->b = (float)ua.gamma;
    break;
  case NN_VK_ACT_SHRINK:
    a->a = (float)ua.bias;
    a->b = (float)ua.lambd;
    break;
  case NN_VK_ACT_GELU:
    if (ua.gelu_tanh)
      a->kind = NN_VK_ACT_GELU_TANH;
    break;
  case NN_VK_ACT_CLIP:
    a->a = -INFINITY;
    a->b = INFINITY;
    if (n->version < 11) {
      a->a = ua.has_min ? (float)ua.clip_min : -FLT_MAX;
      a->b = ua.has_max ? (float)ua.clip_max : FLT_MAX;
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

/* ---- kernels ---------------------------------------------------------------------- */

nn_status nn_vk_k_unary(nn_vk_exec *e, nn_vk_act act, int64_t n, const nn_vk_tensor *x,
                        const nn_vk_tensor *y, nn_error *err) {
  if (n <= 0)
    return NN_OK;
  nn_status st;
  if ((st = need(x, (uint64_t)n, "unary x", err)) || (st = need(y, (uint64_t)n, "unary y", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_UNARY);
  d.n_spec = 2;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)act.kind;
  push_u(&d, 0, (uint64_t)n);
  push_u(&d, 1, bind_n(e, &d, 0, x, (uint64_t)n, false));
  push_u(&d, 2, bind_n(e, &d, 1, y, (uint64_t)n, true));
  push_f(&d, 3, act.a);
  push_f(&d, 4, act.b);
  d.groups[0] = groups_for((uint64_t)n, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_unary[] = {
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
    {0},
};
