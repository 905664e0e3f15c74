/* sampling.h - the typed attributes and geometry of the sampling ops, for
 * every backend (cpu/sampling.c): GridSample's modes, Col2Im's blocks and
 * RoiAlign's bins.  Errors go through nn_fail(c).  Nothing is allocated. */
#ifndef NN_OPS_SAMPLING_H
#define NN_OPS_SAMPLING_H

#include "nn_internal.h"

/* GridSample: mode (opset 16 names them bilinear / nearest / bicubic, 20
 * linear / nearest / cubic), padding_mode, align_corners. */
enum { NN_GS_LINEAR, NN_GS_NEAREST, NN_GS_CUBIC };
enum { NN_GS_ZEROS, NN_GS_BORDER, NN_GS_REFLECTION };

typedef struct nn_gridsample_attrs {
  int mode, pad;
  bool align;
} nn_gridsample_attrs;

nn_status nn_gridsample_attrs_init(nn_ctx *c, const nn_node *n, nn_gridsample_attrs *a);

/* Col2Im: r spatial dims of image img, blocks blk of dilation dil, stride
 * str and leading pad; nb blocks fit along each dim, K = prod(blk) values
 * per channel and block position, L = prod(nb) block positions.  The input
 * is (N, C * K, L). */
typedef struct nn_col2im_geom {
  int r;
  int64_t N, C, K, L;
  int64_t img[NN_MAX_RANK], blk[NN_MAX_RANK], nb[NN_MAX_RANK];
  int64_t dil[NN_MAX_RANK], pad[NN_MAX_RANK], str[NN_MAX_RANK];
} nn_col2im_geom;

/* From image_shape and block_shape (inputs 1 and 2, known at prepare), the
 * attributes and input 0's shape. */
nn_status nn_col2im_geom_init(nn_ctx *c, const nn_node *n, nn_col2im_geom *g);

/* The most sampling points per bin along an axis RoiAlign takes: each is
 * visited for every output bin, so a hostile sampling_ratio is refused. */
#define NN_ROI_MAX_GRID 1024

/* RoiAlign: mode, coordinate_transformation_mode (16), output size,
 * sampling_ratio and spatial_scale. */
typedef struct nn_roialign_attrs {
  bool max_mode, half_pixel;
  int64_t oh, ow, sampling;
  float scale;
} nn_roialign_attrs;

nn_status nn_roialign_attrs_init(nn_ctx *c, const nn_node *n, nn_roialign_attrs *a);

#endif /* NN_OPS_SAMPLING_H */
