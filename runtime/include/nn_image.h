/* nn_image.h - pixels -> tensor: crop, resize, colour conversion,
 * normalisation, layout and data type in one pass.
 *
 * Part of the runtime's public API (plain C11, no GStreamer or GLib types),
 * for the onnxinfer element, nn-run and applications alike.  ncnn's
 * Mat::from_pixels_resize is the precedent; this one also takes the planar
 * and semi-planar YUV formats decoders produce, a source rectangle anywhere
 * (even partly outside the image) and turned by any angle (text lines cut
 * along their slant), three ways to fit it into the tensor or an explicit
 * destination rectangle, and the frame's colorimetry.
 *
 * What one conversion does, per tensor pixel (x, y) of the destination:
 *
 *   1. Geometry.  The source rectangle `src` (image pixels, fractional),
 *      turned by `angle` about its own centre when that is not 0, is
 *      mapped onto the destination rectangle `content` of the tensor:
 *        params.content, when given: exactly that rectangle (the mode is
 *                   ignored, the aspect ratio is the caller's); the rest
 *                   is padding (pad_value), as in letterbox;
 *        STRETCH    content = the whole tensor (aspect ratio not kept);
 *        LETTERBOX  aspect kept, scaled to fit, centered; the rest is padding
 *                   (pad_value);
 *        CROP       aspect kept, scaled to cover, centered; the overflow of
 *                   the source is cut.
 *      The mapping is reported as nn_image_geometry.  With c the centre of
 *      src (src_x + src_width / 2, src_y + src_height / 2) and R(a) the
 *      rotation taking the x axis (1, 0) to (cos a, sin a) in image
 *      coordinates (y down, so a positive angle turns clockwise on screen),
 *      an image point p lands at
 *        u      = R(-angle) (p - c) + (src_width / 2, src_height / 2)
 *        tensor = u * scale + offset                       (per axis)
 *      u is p in the rectangle's own frame: the corner that was (src_x,
 *      src_y) before the turn is u = (0, 0), the content's top-left, and
 *      the rectangle's content comes out upright (angle 180: the
 *      axis-aligned result turned by 180 degrees).  For angle 0 this is
 *        tensor_x = (image_x - src_x) * scale_x + offset_x   (same for y).
 *   2. Resampling, per image component (Y, U, V or R, G, B, A) on the
 *      component's own grid (chroma of 4:2:0 / 4:2:2 formats is resampled
 *      from its own subsampled plane, taken as centred on the luma pixels
 *      it covers).  Samples outside the image repeat the edge pixel (clamp
 *      to edge).
 *      angle 0: separable.  A tensor pixel covers the source footprint
 *      [a, b) = its extent mapped back to the component's grid:
 *        b - a <= 1 (upscaling or 1:1): bilinear between the two nearest
 *                   source samples (pixel centres at i + 0.5);
 *        b - a  > 1 (downscaling): the exact area average of the footprint
 *                   (every source pixel weighted by its overlap), so strong
 *                   downscaling (1080 -> 128) does not alias.
 *      angle != 0: with f_x = 1 / scale_x and f_y = 1 / scale_y the image
 *      pixels per tensor pixel along the rectangle's axes, n = ceil(f_x)
 *      and m = ceil(f_y), each at most 8 (1 when f <= 1): the mean of the
 *      n x m bilinear samples (clamp to edge, each component on its grid)
 *      at the image points of the tensor points
 *        (x + (i + 0.5) / n, y + (j + 0.5) / m),  i < n, j < m,
 *      i.e. spread evenly over the pixel's footprint, at most one image
 *      pixel apart, so that downscaling by up to 8 does not skip pixels
 *      (beyond 8 the samples thin out; n = m = 1: bilinear at the centre).
 *      A tensor pixel is content when its centre lies inside `content`;
 *      the others (letterbox, explicit content) take pad_value in every
 *      channel.
 *   3. Colour: YUV -> RGB with the image's matrix (BT.601, BT.709, BT.2020)
 *      and range (limited 16-235/240 or full), results clamped to [0, 255]
 *      (limited Y = 235, U = V = 128 is exactly 255; Y = 16 exactly 0);
 *      gray models from RGB get BT.601 luma (0.299 R + 0.587 G + 0.114 B),
 *      from YUV the expanded luma; GRAY8 into 3 or 4 channels is repeated.
 *   4. Channels in the requested order (RGB or BGR; a 4th channel is the
 *      image's alpha, or 255), then (v - mean[c]) / std[c] (computed as
 *      (v - mean[c]) * (1 / std[c])).
 *   5. Stored as float32, or uint8 (clamped to 0..255, rounded half up),
 *      NCHW or NHWC, into batch slot `batch_index` of the destination.
 *   The separable resampling sums in float32, the turned one in double:
 *   results are within 1e-3 (of 0..255) of the exact definition
 *   (tests/image/reference.py checks both), and do not depend on the
 *   number of threads.
 *
 * Limits (beyond them: NN_ERR_INVALID_ARG): image sides 1..65536, tensor
 * sides 1..32768, |src.x|, |src.y| and the rect's sides up to 2^30, its
 * sides at least 1/1024 pixel; angle finite (any value, taken modulo 360);
 * content, when given, finite, inside the tensor (0 <= x, x + width <=
 * tensor width, the same for y) and its sides at least 1/1024 pixel.  The
 * filter tables of angle 0 stay within image plus tensor size whatever the
 * rect (a 1x1 rect into 4096x4096, an 8192x8192 image into 1x1); a turned
 * rect needs none.
 *
 * Memory: an nn_image_converter owns scratch (filter tables, row
 * accumulators and component rows per worker), allocated through the
 * runtime's allocator hooks.  It grows on the first conversion of a larger image or tensor (or
 * with more workers) and is reused afterwards: converting the same sizes
 * again, or smaller ones, makes no heap allocation.
 *
 * Threads: nn_image_convert() spreads the destination rows over the
 * workers of the session passed to it (nn_session_parallel_for), or runs on
 * the calling thread when that is NULL; the result is the same bits either
 * way.  One converter must not be used by two threads at once, nor with a
 * session that is running (nn_session_run) on another thread.
 *
 * SIMD: AVX2+FMA kernels where the CPU has them, else portable C;
 * NN_CPU=portable (read once) forces the portable ones.  The sampler of a
 * turned rect (angle != 0) is portable C; its colour and store steps are
 * the same kernels.
 */
#ifndef NN_IMAGE_H
#define NN_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "nn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nn_pixel_format {
  NN_PIX_RGB = 0,   /* packed, 3 bytes a pixel: R G B */
  NN_PIX_BGR,
  NN_PIX_RGBA,      /* 4 bytes: R G B A */
  NN_PIX_BGRA,
  NN_PIX_RGBX,      /* 4 bytes, the 4th unused */
  NN_PIX_BGRX,
  NN_PIX_XRGB,      /* 4 bytes, the 1st unused */
  NN_PIX_XBGR,
  NN_PIX_ARGB,
  NN_PIX_ABGR,
  NN_PIX_GRAY8,     /* 1 byte: luma, full range */
  NN_PIX_NV12,      /* Y plane, then interleaved U V at half width and height */
  NN_PIX_NV21,      /* Y plane, then interleaved V U */
  NN_PIX_I420,      /* Y, U, V planes; U and V at half width and height */
  NN_PIX_YV12,      /* Y, V, U planes */
  NN_PIX_YUY2,      /* packed 4:2:2: Y0 U Y1 V */
  NN_PIX_UYVY,      /* packed 4:2:2: U Y0 V Y1 */
  NN_PIX_COUNT
} nn_pixel_format;

/* Static upper-case name as GStreamer spells it ("NV12"); "?" when unknown. */
const char *nn_pixel_format_name(nn_pixel_format f);
/* Planes the format has (1..3); 0 for an unknown format. */
int nn_pixel_format_planes(nn_pixel_format f);

typedef enum nn_yuv_matrix {
  NN_YUV_BT601 = 0,
  NN_YUV_BT709,
  NN_YUV_BT2020,
} nn_yuv_matrix;

typedef enum nn_yuv_range {
  NN_YUV_LIMITED = 0,  /* Y 16..235, U/V 16..240 (what decoders produce) */
  NN_YUV_FULL,         /* 0..255 */
} nn_yuv_range;

/* A mapped image; the planes are borrowed for the duration of a call.
 * Chroma planes of 4:2:0 formats are (width+1)/2 x (height+1)/2; a YUY2 /
 * UYVY row holds (width+1)/2 macropixels of 4 bytes.  Chroma samples are
 * taken as centred on the luma pixels they cover (JPEG/MPEG-1 siting). */
typedef struct nn_image {
  nn_pixel_format format;
  int width, height;           /* >= 1 */
  const uint8_t *planes[3];
  int strides[3];              /* bytes from one row to the next, >= the row */
  nn_yuv_matrix matrix;        /* YUV formats only */
  nn_yuv_range range;
} nn_image;

typedef enum nn_resize_mode {
  NN_RESIZE_STRETCH = 0,
  NN_RESIZE_LETTERBOX,
  NN_RESIZE_CROP,
} nn_resize_mode;

typedef struct nn_rect {
  double x, y, width, height;  /* pixels; width <= 0 or height <= 0: the whole
                                  image (x, y ignored); may reach outside the
                                  image (edge pixels repeat) */
} nn_rect;

typedef enum nn_tensor_layout {
  NN_LAYOUT_NCHW = 0,          /* planar: channel planes of height x width */
  NN_LAYOUT_NHWC,              /* interleaved: channels last */
} nn_tensor_layout;

/* Where the pixels go.  data points at the tensor's first byte; batch slot
 * batch_index starts batch_index * channels * height * width elements in. */
typedef struct nn_image_dest {
  void *data;
  size_t nbytes;               /* bytes available at data (checked) */
  nn_dtype dtype;              /* NN_DTYPE_FLOAT or NN_DTYPE_UINT8 */
  nn_tensor_layout layout;
  int channels;                /* 1, 3 or 4 */
  int width, height;
  int batch_index;
} nn_image_dest;

typedef struct nn_image_params {
  nn_rect src;                 /* source rectangle (image pixels) */
  nn_resize_mode mode;
  float pad_value;             /* 0..255 pixel value of the padding (every
                                  channel, alpha too), before mean/std */
  int bgr;                     /* 1: channels in B, G, R (, A) order */
  float mean[4], std[4];       /* per channel, in the tensor's channel order;
                                  nn_image_params_init: 0 and 1 */
  double angle;                /* degrees: src turned by this about its
                                  centre (the rect's x axis along (cos, sin),
                                  y down: clockwise on screen; 1. above);
                                  any finite value, taken modulo 360;
                                  nn_image_params_init: 0 (axis-aligned) */
  nn_rect content;             /* tensor pixels: src is stretched onto
                                  exactly this rectangle (mode ignored), the
                                  rest is padding; must lie inside the
                                  tensor.  width <= 0 or height <= 0: off,
                                  the mode decides (nn_image_params_init) */
} nn_image_params;

void nn_image_params_init(nn_image_params *p);

/* How image pixels map to tensor pixels (1. above): with c = (src_x +
 * src_width / 2, src_y + src_height / 2) the rect's centre,
 *   u      = R(-angle) (image - c) + (src_width / 2, src_height / 2)
 *   tensor = u * scale + offset                             (per axis)
 * R(a) = [cos a, -sin a; sin a, cos a] (image coordinates, y down).  For
 * angle 0 that is exactly
 *   tensor_x = (image_x - src_x) * scale_x + offset_x       (same for y).
 * The inverse: image = c + R(angle) ((tensor - offset) / scale - (src_width
 * / 2, src_height / 2)).  content_* is the part of the tensor holding image
 * content (the rest is padding: letterbox mode, params.content). */
typedef struct nn_image_geometry {
  double src_x, src_y, src_width, src_height;   /* after defaulting (the rect
                                                   before its turn) */
  double scale_x, scale_y;
  double offset_x, offset_y;
  double content_x, content_y, content_width, content_height;
  double angle;                /* degrees, normalised to [0, 360) */
} nn_image_geometry;

/* The geometry a conversion with these parameters uses, without converting
 * (p NULL: defaults).  NN_ERR_INVALID_ARG for what nn_image_convert would
 * refuse in img's format and size, p or the tensor size. */
nn_status nn_image_geometry_compute(const nn_image *img, const nn_image_params *p,
                                    int dst_width, int dst_height,
                                    nn_image_geometry *geo);

typedef struct nn_image_converter nn_image_converter;

/* *out is caller-owned: nn_image_converter_free(). */
nn_status nn_image_converter_new(nn_image_converter **out);
void nn_image_converter_free(nn_image_converter *c);

/* Convert img into dst.  p NULL: nn_image_params_init() defaults.
 * workers: a session whose threads run the rows (NULL: the calling thread).
 * geo (optional) gets the mapping used.  Errors (NN_ERR_INVALID_ARG with
 * err->msg, err optional, saying which field): NULL arguments, an unknown
 * format, matrix, range, mode, layout, sizes out of the limits above, a
 * missing plane, a stride shorter than a row, a dest too small for the
 * batch slot, an unsupported dtype/channel count, std 0 (or not finite,
 * or with 1/std not finite), mean or pad_value not finite, a source
 * rectangle not finite or out of the limits, angle not finite, a content
 * rectangle not finite, too small or not inside the tensor;
 * NN_ERR_DISPOSED when workers was disposed; NN_ERR_NOMEM.  Nothing is
 * written (dst, geo) on error. */
nn_status nn_image_convert(nn_image_converter *c, const nn_image *img,
                           const nn_image_params *p, const nn_image_dest *dst,
                           nn_session *workers, nn_image_geometry *geo,
                           nn_error *err);

#ifdef __cplusplus
}
#endif

#endif /* NN_IMAGE_H */
