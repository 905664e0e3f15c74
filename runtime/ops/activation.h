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

#include "nn_internal.h"
#include "ops/act_kinds.h"

/* nn_act (nn_internal.h, so that nn_node can hold one): kind is NN_ACT_*;
 * LeakyRelu: a = alpha; Clip: a = min, b = max (-INFINITY / INFINITY when
 * unbounded); a and b are 0 for the kinds without parameters. */

/* The activation node `act` (Relu, LeakyRelu, Clip, Sigmoid, HardSwish of
 * the default domain) as an nn_act: true and *out set when it is one of the
 * vocabulary's and its parameters are known now (Clip-11+: its min / max
 * inputs absent or known float32 scalars); false otherwise, *out then
 * NN_ACT_NONE.  The node must be resolved (act->x set). */
bool nn_act_from_node(const nn_node *act, nn_act *out);

/* Apply a in double precision to y[0..n) in place: the reference semantics
 * of each kind, for kernels that compute outside float32. */
void nn_act_apply_f64(const nn_act *a, double *y, int64_t n);

#endif /* NN_OPS_ACTIVATION_H */
