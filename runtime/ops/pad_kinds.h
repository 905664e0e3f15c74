/* pad_kinds.h - the codes of Pad's modes (ops/transform.h).
 *
 * Plain #defines only: #included by the C compiler and, through
 * shaders/nn_vk_kinds.h, by glslc, so the op layer, the CPU kernel and the
 * Vulkan shader read one number for one mode. */
#ifndef NN_OPS_PAD_KINDS_H
#define NN_OPS_PAD_KINDS_H

#define NN_PAD_CONSTANT 0 /* the constant value outside */
#define NN_PAD_REFLECT 1  /* mirrored, the edge element not repeated */
#define NN_PAD_EDGE 2     /* the edge element repeated */
#define NN_PAD_WRAP 3     /* periodic */

#endif /* NN_OPS_PAD_KINDS_H */
