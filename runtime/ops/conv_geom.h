/* conv_geom.h - sliding-window geometry of Conv, ConvTranspose and the
 * pools, for every backend: the kernel_shape / strides / dilations / pads /
 * auto_pad / ceil_mode attributes turned into a typed nn_conv_geom (output
 * sizes, begin / end pads).  The CPU kernels (cpu/conv.c, cpu/pool.c) and
 * the Vulkan ones read the same struct.
 *
 * Geometry is normalized to NN_CONV_SP (3) spatial dimensions: a model with
 * nsp spatial dims occupies the LAST nsp slots, the leading ones are size-1
 * with kernel 1, stride 1, no padding.  Kernels then need a single 3-D loop
 * nest for 1-D, 2-D and 3-D operators.
 */
#ifndef NN_OPS_CONV_GEOM_H
#define NN_OPS_CONV_GEOM_H

#include "nn_internal.h"

#define NN_CONV_SP 3
/* Attribute values above this are refused: they keep every size product of
 * the geometry (e.g. (k-1)*d) far from int64 overflow. */
#define NN_CONV_ATTR_MAX ((int64_t)1 << 31)

typedef struct nn_conv_geom {
  int nsp; /* spatial dims of the model (1..NN_CONV_SP) */
  int64_t in[NN_CONV_SP], out[NN_CONV_SP];
  int64_t k[NN_CONV_SP], s[NN_CONV_SP], d[NN_CONV_SP];
  int64_t pb[NN_CONV_SP], pe[NN_CONV_SP]; /* pads at the begin / end */
  int64_t in_sz, out_sz, k_sz;            /* element counts of one plane / window */
} nn_conv_geom;

typedef enum nn_conv_autopad {
  NN_CONV_PAD_NOTSET = 0,
  NN_CONV_PAD_SAME_UPPER,
  NN_CONV_PAD_SAME_LOWER,
  NN_CONV_PAD_VALID,
} nn_conv_autopad;

/* The auto_pad attribute; NN_ERR_UNSUPPORTED through nn_fail(c) for a value
 * ONNX does not define. */
nn_status nn_conv_autopad_parse(nn_ctx *c, const nn_node *n, nn_conv_autopad *ap);

/* Read an ints attribute of exactly `want` entries, each in
 * [lo, NN_CONV_ATTR_MAX], into dst (left untouched when the attribute is
 * absent). */
nn_status nn_conv_attr_ints(nn_ctx *c, const nn_node *n, const char *name, int want, int64_t lo,
                            int64_t *dst);

/* Parse the window attributes for a node whose input has spatial sizes
 * in[0..nsp) and whose kernel is kern[0..nsp) (weights or kernel_shape).
 * ceil_mode: pools only (false for Conv).  dil_ok: whether dilations are
 * allowed.  Fills g with the normalized geometry and the output sizes.
 * Errors through nn_fail(c) (c may have no err to only test). */
nn_status nn_conv_geom_init(nn_ctx *c, const nn_node *n, int nsp, const int64_t *in,
                            const int64_t *kern, bool dil_ok, bool ceil_mode, nn_conv_geom *g);

/* ConvTranspose: the window attributes (strides, dilations, pads,
 * output_padding, output_shape, auto_pad) for an input of spatial sizes
 * in[0..nsp) and a kernel kern[0..nsp) (the weights' trailing dims).  g->in
 * holds the input (X) sizes, g->out the output (Y) sizes, g->pb / g->pe the
 * pads cropped from the begin / end of the full (unpadded) output, whose
 * size is s*(in-1) + output_padding + (k-1)*d + 1; a negative pe is the
 * zeros output_shape asks beyond the kernel's reach.  Errors through
 * nn_fail(c) (c may have no err to only test).  Both backends' geometry. */
nn_status nn_convt_geom_init(nn_ctx *c, const nn_node *n, int nsp, const int64_t *in,
                             const int64_t *kern, nn_conv_geom *g);

/* Max / Average / LpPool on an input of rank >= 3: kernel_shape (required,
 * one per spatial dim) through nn_conv_geom_init with ceil_mode, and the
 * flags, each 0 or 1 (count_include_pad: AveragePool; storage_order:
 * MaxPool's indices).  Both backends' pooling geometry. */
typedef struct nn_pool_params {
  nn_conv_geom g;
  bool ceil_mode, count_include_pad, storage_order;
} nn_pool_params;

nn_status nn_pool_params_init(nn_ctx *c, const nn_node *n, nn_pool_params *p);

/* Conv / ConvTranspose: kernel_shape, when given, has nsp entries equal to
 * the weights' spatial dims kern[0..nsp). */
nn_status nn_conv_kernel_shape(nn_ctx *c, const nn_node *n, int nsp, const int64_t *kern);

/* Conv / ConvTranspose's `group`: >= 1 and dividing both the input channels
 * C and the output channels M (pass M = 0 to check C only). */
nn_status nn_conv_group(nn_ctx *c, const nn_node *n, int64_t C, int64_t M, int64_t *group);

/* Range [*lo, *hi) of kernel taps t (0 <= t < k) for which o*s - pb + t*d
 * falls inside [0, in).  Inline: kernels call it per output position. */
static inline void nn_conv_geom_taps(int64_t o, int64_t s, int64_t pb, int64_t d, int64_t k,
                                     int64_t in, int64_t *lo, int64_t *hi) {
  int64_t base = o * s - pb;
  int64_t a = 0, b = k;
  if (base < 0)
    a = (-base + d - 1) / d;
  if (base + (k - 1) * d >= in)
    b = base >= in ? 0 : (in - 1 - base) / d + 1;
  if (b < a)
    b = a;
  *lo = a;
  *hi = b;
}

#endif /* NN_OPS_CONV_GEOM_H */
