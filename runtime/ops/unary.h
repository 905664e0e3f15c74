/* unary.h - the attributes of the parameterised elementwise ops, with
 * ONNX's defaults, for every backend (cpu/unary.c, vulkan/vk_unary.c).
 * Clip's bounds are here up to opset 6, where they are attributes; from
 * opset 11 they are inputs, which each backend reads in its own domain. */
#ifndef NN_OPS_UNARY_H
#define NN_OPS_UNARY_H

#include "nn_internal.h"

typedef struct nn_unary_attrs {
  /* LeakyRelu (0.01), Elu / Celu / ThresholdedRelu / Swish (1), Selu
   * (1.6732632), HardSigmoid (0.2): alpha; Selu: gamma (1.0507010);
   * HardSigmoid: beta (0.5) */
  double alpha, beta, gamma;
  double lambd, bias;          /* Shrink (0.5, 0) */
  bool gelu_tanh;              /* Gelu approximate="tanh" ("none" default) */
  bool detect_pos, detect_neg; /* IsInf (both on by default) */
  bool has_min, has_max;       /* Clip-1/6: the min / max attributes given */
  double clip_min, clip_max;   /* their values (float attributes) */
} nn_unary_attrs;

/* The attributes of node n (any op: the ones it does not have stay 0);
 * NN_ERR_UNSUPPORTED through nn_fail(c) for a Gelu approximation ONNX does
 * not define (c may have no err to only test). */
nn_status nn_unary_attrs_init(nn_ctx *c, const nn_node *n, nn_unary_attrs *u);

#endif
