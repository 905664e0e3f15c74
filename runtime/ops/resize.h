/* resize.h - Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9) as typed
 * parameters: every attribute and the scales / sizes / roi inputs read once,
 * into the interpolation to apply and the per-axis scale and output size.
 *
 * Each backend's kernel reads nn_resize_params and nothing else of the node:
 * the CPU kernel (cpu/resize.c) takes every combination, the Vulkan one
 * (vulkan/) the subset its shader implements.  Resize-10 and Upsample are
 * the "legacy" forms: asymmetric coordinates and NN_RESIZE_NEAREST_LEGACY.
 */
#ifndef NN_OPS_RESIZE_H
#define NN_OPS_RESIZE_H

#include "nn_internal.h"

typedef enum nn_resize_mode {
  NN_RESIZE_NEAREST = 0,
  NN_RESIZE_LINEAR, /* also Upsample / Resize-10 "bilinear" */
  NN_RESIZE_CUBIC,
} nn_resize_mode;

/* coordinate_transformation_mode */
typedef enum nn_resize_coord {
  NN_RESIZE_HALF_PIXEL = 0,
  NN_RESIZE_HALF_PIXEL_SYMMETRIC,
  NN_RESIZE_PYTORCH_HALF_PIXEL,
  NN_RESIZE_ALIGN_CORNERS,
  NN_RESIZE_ASYMMETRIC,
  NN_RESIZE_TF_HALF_PIXEL_FOR_NN,
  NN_RESIZE_TF_CROP_AND_RESIZE,
} nn_resize_coord;

/* nearest_mode */
typedef enum nn_resize_nearest {
  NN_RESIZE_ROUND_PREFER_FLOOR = 0,
  NN_RESIZE_ROUND_PREFER_CEIL,
  NN_RESIZE_FLOOR,
  NN_RESIZE_CEIL,
  /* Upsample and Resize-10 (no nearest_mode): ONNX Runtime's rule, the
   * coordinate truncated when upscaling and rounded up when downscaling */
  NN_RESIZE_NEAREST_LEGACY,
} nn_resize_nearest;

/* keep_aspect_ratio_policy (Resize-18+, with sizes) */
typedef enum nn_resize_policy {
  NN_RESIZE_POLICY_UNKNOWN = -1, /* a value ONNX does not define: an error
                                     only when sizes are given */
  NN_RESIZE_STRETCH = 0,
  NN_RESIZE_NOT_LARGER,
  NN_RESIZE_NOT_SMALLER,
} nn_resize_policy;

typedef struct nn_resize_params {
  nn_resize_mode mode;
  nn_resize_coord coord;
  nn_resize_nearest nearest;
  double cubic_a;       /* cubic_coeff_a */
  double extrapolation; /* extrapolation_value (tf_crop_and_resize) */
  bool exclude_outside;
  bool antialias; /* Resize-18+, linear and cubic only */
  nn_resize_policy policy;
  bool legacy;     /* Upsample or Resize-10 */
  bool axes_given; /* Resize-18+ `axes` attribute present */
  bool from_sizes; /* output sizes given (else scales) */
  int n_axes;      /* resized axes: `axes`, or all of them */
  int axes[NN_MAX_RANK];
  /* per axis of the input (rank entries): sizes, the scale the coordinates
   * use (output / input as ONNX defines it; 1 on untouched axes), and the
   * tf_crop_and_resize crop (0 and 1 elsewhere) */
  int rank;
  int64_t in[NN_MAX_RANK], out[NN_MAX_RANK];
  double scale[NN_MAX_RANK];
  double roi0[NN_MAX_RANK], roi1[NN_MAX_RANK];
} nn_resize_params;

/* Read node n (Resize or Upsample, resolved version, input 0 with its shape;
 * the roi / scales / sizes inputs it has must be known) into *p.  Errors go
 * through nn_fail(c) (c may have no err to only test).  Nothing allocated. */
nn_status nn_resize_params_init(nn_ctx *c, const nn_node *n, nn_resize_params *p);

#endif /* NN_OPS_RESIZE_H */
