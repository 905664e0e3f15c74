/* transform.h - what the element-moving ops mean, once for every backend:
 * Transpose's permutation, Concat's and Split's axis, Slice's first index,
 * step and count per axis, Pad's mode and pads, DepthToSpace /
 * SpaceToDepth as a 6-D strided copy.
 *
 * Each reads the node's attributes (and, from the opsets that moved them to
 * inputs, those inputs, which must then be known) and input 0's shape, and
 * checks them as ONNX defines them.  Errors go through nn_fail(c) (c may
 * have no err to only test).  Nothing is allocated.  The CPU kernels
 * (cpu/transform.c) compile the result into their copy plans; the Vulkan
 * records (vulkan/vk_transform.c) into their copy and pad dispatches.
 *
 * Negative axes are accepted in every opset: the spec only allows them from
 * opset 11, but older exporters (PyTorch at opset 6-9) emitted them and
 * other runtimes take them. */
#ifndef NN_OPS_TRANSFORM_H
#define NN_OPS_TRANSFORM_H

#include "nn_internal.h"
#include "ops/pad_kinds.h"

/* Transpose: perm[i] = the input axis output axis i takes; `perm`, or the
 * axes reversed.  A perm that is not a permutation of 0..rank-1 is refused. */
nn_status nn_transpose_perm(nn_ctx *c, const nn_node *n, int rank, int *perm);

/* Concat's axis (required from opset 4; 1 before) and Split's (default 0),
 * normalized against rank. */
nn_status nn_concat_axis(nn_ctx *c, const nn_node *n, int rank, int *axis);
nn_status nn_split_axis(nn_ctx *c, const nn_node *n, int rank, int *axis);

/* Split: the length along the axis (dim long) of each of the node's
 * n_out outputs, into sizes[n_out]. */
nn_status nn_split_sizes(nn_ctx *c, const nn_node *n, int64_t dim, int64_t *sizes);

/* Slice (opsets 1 and 10+): per axis of the input, the first index read,
 * the step (1 on untouched axes) and the output's extent, after ONNX's
 * clamping of starts and ends. */
typedef struct nn_slice_params {
  int rank;
  int64_t first[NN_MAX_RANK], step[NN_MAX_RANK], count[NN_MAX_RANK];
} nn_slice_params;

nn_status nn_slice_params_init(nn_ctx *c, const nn_node *n, nn_slice_params *p);

/* Pad (opsets 1, 2, 11, 18, 19): the mode (NN_PAD_*), the pads before and
 * after each axis of the input (0 on axes not listed) and the output shape.
 * The constant: `value` before opset 11; from 11 on input 2, when given,
 * which may change between runs (value_input; its dtype and size are
 * checked here). */
typedef struct nn_pad_params {
  int mode;
  int rank;
  int64_t begin[NN_MAX_RANK], end[NN_MAX_RANK], out[NN_MAX_RANK];
  double value;      /* the attribute (opsets < 11), else 0 */
  bool value_input;  /* opset >= 11 with a constant_value input */
} nn_pad_params;

nn_status nn_pad_params_init(nn_ctx *c, const nn_node *n, nn_pad_params *p);

/* DepthToSpace (CRD or DCR) and SpaceToDepth on a 4-D input: the output
 * shape, and the copy that makes it: the output viewed as the dense 6-D
 * tensor d6, each element read from the input at strides s6 (elements). */
typedef struct nn_d2s_params {
  int64_t block;
  bool crd;          /* DepthToSpace mode CRD (else DCR) */
  int64_t out[4];
  int64_t d6[6], s6[6];
} nn_d2s_params;

/* n is a DepthToSpace or a SpaceToDepth node. */
nn_status nn_d2s_params_init(nn_ctx *c, const nn_node *n, nn_d2s_params *p);

#endif /* NN_OPS_TRANSFORM_H */
