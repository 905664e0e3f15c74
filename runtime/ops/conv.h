/* conv.h - channels, groups and window of the conv family (Conv,
 * ConvTranspose, DeformConv, ConvInteger, QLinearConv) from their inputs'
 * shapes and attributes, for the op layer's shape inference (ops/conv.c) and
 * the CPU kernels (cpu/conv.c), which recompute them at prepare.  Errors go
 * through nn_fail(c); nothing is allocated. */
#ifndef NN_OPS_CONV_H
#define NN_OPS_CONV_H

#include "ops/conv_geom.h"

typedef struct nn_conv_params {
  nn_conv_geom g;  /* Conv: in -> out; ConvTranspose: X spatial -> Y spatial */
  int64_t batch, C, M, group, Cg, Mg;
} nn_conv_params;

/* Conv, DeformConv, ConvInteger, QLinearConv: X (input 0), W (input wi,
 * M x C/group x kernel) and the bias (input bi, -1 none: [M] when present);
 * kernel_shape, group and the window attributes; every output position
 * non-empty.  Also requires output Y. */
nn_status nn_conv_params_init(nn_ctx *c, const nn_node *n, int wi, int bi, nn_conv_params *p);

/* ConvTranspose: X (C channels), W (C x M/group x kernel), the bias (input
 * 2, [M]) and the window attributes, output_shape included
 * (nn_convt_geom_init). */
nn_status nn_convt_params_init(nn_ctx *c, const nn_node *n, nn_conv_params *p);

/* DeformConv: nn_conv_params_init (W input 1, bias input 3), offset_group
 * (dividing C) into *offset_group, and the shapes of the offset (input 2,
 * required) and mask (input 4) against the output positions. */
nn_status nn_deform_params_init(nn_ctx *c, const nn_node *n, nn_conv_params *p,
                                int64_t *offset_group);

/* ConvInteger and QLinearConv: the positions of their inputs (-1 = none),
 * read by the op layer's inference and the CPU kernel alike. */
typedef struct nn_qconv_in {
  int x, x_zp, w, w_zp, bias;
  int x_scale, w_scale, y_scale, y_zp;
} nn_qconv_in;

static const nn_qconv_in nn_qconv_integer = {0, 2, 1, 3, -1, -1, -1, -1, -1};
static const nn_qconv_in nn_qconv_linear = {0, 2, 3, 5, 8, 1, 4, 6, 7};

#endif /* NN_OPS_CONV_H */
