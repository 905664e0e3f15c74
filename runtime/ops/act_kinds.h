/* act_kinds.h - the codes of the fused-activation vocabulary (activation.h).
 *
 * Plain #defines only: this file is #included by the C compiler and, through
 * shaders/nn_vk_kinds.h, by glslc, so the planner that fuses an activation,
 * the CPU kernels and the compute shaders that apply it read one number for
 * one meaning.  The Vulkan unary kernel numbers its other activations
 * (NN_VK_ACT_* in shaders/nn_vk_kinds.h) around these: code 5 is its
 * HardSigmoid, which no kernel fuses, GELU keeps the code it had there,
 * and SiLU takes the code after theirs. */
#ifndef NN_OPS_ACT_KINDS_H
#define NN_OPS_ACT_KINDS_H

#define NN_ACT_NONE 0       /* identity */
#define NN_ACT_RELU 1       /* v < 0 ? 0 : v (NaN kept) */
#define NN_ACT_LEAKY_RELU 2 /* v < 0 ? a * v : v; a = alpha */
#define NN_ACT_CLIP 3       /* v < a ? a : v > b ? b : v; a = min, b = max */
#define NN_ACT_SIGMOID 4    /* 1 / (1 + exp(-v)) */
#define NN_ACT_HARD_SWISH 6 /* v * clamp(v / 6 + 1/2, 0, 1) */
#define NN_ACT_GELU 21      /* 0.5 v (1 + erf(v / sqrt(2))): Gelu, or the five nodes
                               exporters write for it, fused as one */
#define NN_ACT_SILU 40      /* v * sigmoid(v): Mul(x, Sigmoid(x)), fused as one */

#endif /* NN_OPS_ACT_KINDS_H */
