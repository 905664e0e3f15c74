/* activation.h - the one fused-activation vocabulary of the runtime.
 *
 * The planner (plan.c) lets a Conv, Gemm or MatMul apply the activation that
 * alone reads its output in its own epilogue; it records what to apply as a
 * typed nn_act on the producing node (nn_node.act), and every backend's
 * kernel reads that field: no string attribute is re-parsed per backend.
 * The kind codes are shared with the shaders (act_kinds.h).
 */
#ifndef NN_OPS_ACTIVATION_H
#define NN_OPS_ACTIVATION_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/act_kinds.h"

/* An activation with its parameters; a zeroed struct is NN_ACT_NONE. */
typedef struct nn_act {
  int kind;                    /* NN_ACT_* */
  float a, b;                  /* LeakyRelu: a = alpha; Clip: a = min, b = max
                                  (-INFINITY / INFINITY when unbounded) */
} nn_act;

struct nn_node;

/* The activation node `act` (Relu, LeakyRelu, Clip, Sigmoid, HardSwish of
 * the default domain) as an nn_act: true and *out set when it is one of the
 * vocabulary's and its parameters are known now (Clip-11+: its min / max
 * inputs absent or known float32 scalars); false otherwise, *out then
 * NN_ACT_NONE.  The node must be resolved (act->x set). */
bool nn_act_from_node(const struct nn_node *act, nn_act *out);

/* The ONNX operator a kind stands for ("Relu", ...): "" for NN_ACT_NONE,
 * "?" for a code outside the vocabulary.  Static storage. */
const char *nn_act_name(int kind);

/* Apply a in double precision to y[0..n) in place: the reference semantics
 * of each kind, for kernels that compute outside float32. */
void nn_act_apply_f64(const nn_act *a, double *y, int64_t n);

#endif /* NN_OPS_ACTIVATION_H */
