/* cpu_weights.h - the CPU backend's own layout of weights.
 *
 * A float32 weight that one executed node alone reads, and that its kernel
 * reads as the GEMM engine's packed A panels (kern->const_a_groups), is
 * re-laid-out once after planning, in place of the ONNX layout: packed once,
 * not per run, and not held twice.  nn_value.packed_a_groups records it; a
 * re-plan first restores the ONNX layout, so the planner and the graph passes
 * only ever see the model's own tensors.  Nothing outside cpu/ reads this.
 */
#ifndef NN_CPU_WEIGHTS_H
#define NN_CPU_WEIGHTS_H

#include "graph.h"

/* After nn_plan_build.  Skipped when the NN_NO_PACK knob is set. */
nn_status nn_cpu_weights_pack(nn_graph *g, nn_plan *plan, nn_error *err);
/* After nn_plan_clear and before the next nn_plan_build: initializers back
 * to the ONNX layout (plan-owned packed values went with the plan). */
nn_status nn_cpu_weights_restore(nn_graph *g, nn_error *err);

#endif
