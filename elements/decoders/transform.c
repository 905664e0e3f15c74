/* transform.c - map model-input coordinates back to the frame.
 *
 * When the producer recorded how it cut the model input from the frame
 * (nd_geometry: source rectangle, scale, offset), the mapping is that
 * record inverted: exact for any scale mode and for regions.  Otherwise the
 * model saw the frame through a scaler in front of `onnxinfer`.  The
 * letterbox case mirrors videoscale's add-borders exactly (integer content
 * size floor(model_w * frame_h / frame_w), borders split with the odd pixel
 * at the bottom/right), so boxes land where the pixels came from.  Square
 * pixels are assumed on both sides.
 */
#include "decode_internal.h"

nd_status nd_transform_init(nd_transform *t, int mw, int mh, int fw, int fh, nd_scale_mode mode,
                            nd_error *err) {
  if (!t)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "transform: NULL");
  if (mw < 1 || mh < 1 || fw < 1 || fh < 1)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "transform: model %dx%d, frame %dx%d", mw, mh,
                        fw, fh);
  t->frame_width = fw;
  t->frame_height = fh;
  t->shift_x = t->shift_y = 0;
  switch (mode) {
    case ND_SCALE_STRETCH:
      t->scale_x = (double)fw / mw;
      t->scale_y = (double)fh / mh;
      return ND_OK;
    case ND_SCALE_LETTERBOX: {
      /* content rectangle inside the model input, as videoscale computes it */
      int64_t to_h = (int64_t)mw * fh / fw;
      int cx = 0, cy = 0, cw = mw, ch = mh;
      if (to_h <= mh) {
        ch = (int)to_h;
        cy = (mh - ch) / 2;
      } else {
        cw = (int)((int64_t)mh * fw / fh);
        cx = (mw - cw) / 2;
      }
      if (cw < 1 || ch < 1)
        return nd_set_error(err, ND_ERR_INVALID_ARG,
                            "transform: frame %dx%d letterboxed into %dx%d leaves no content",
                            fw, fh, mw, mh);
      t->scale_x = (double)fw / cw;
      t->scale_y = (double)fh / ch;
      t->shift_x = -cx * t->scale_x;
      t->shift_y = -cy * t->scale_y;
      return ND_OK;
    }
    case ND_SCALE_CROP: {
      /* the frame was cropped (centered) to the model's aspect, then scaled */
      double cw = fw, ch = fh, cx = 0, cy = 0;
      if ((int64_t)fw * mh > (int64_t)fh * mw) {
        cw = (double)fh * mw / mh;
        cx = (fw - cw) / 2;
      } else {
        ch = (double)fw * mh / mw;
        cy = (fh - ch) / 2;
      }
      t->scale_x = cw / mw;
      t->scale_y = ch / mh;
      t->shift_x = cx;
      t->shift_y = cy;
      return ND_OK;
    }
  }
  return nd_set_error(err, ND_ERR_INVALID_ARG, "transform: unknown scale mode %d", (int)mode);
}

nd_status nd_transform_init_geometry(nd_transform *t, const nd_geometry *g, int mw, int mh,
                                     int ow, int oh, nd_error *err) {
  if (!t || !g)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "transform: NULL");
  if (g->frame_width < 1 || g->frame_height < 1 || g->input_width < 1 || g->input_height < 1)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "transform: geometry of frame %dx%d, input %dx%d",
                        g->frame_width, g->frame_height, g->input_width, g->input_height);
  /* !(x > 0) also refuses NaN; the scale must be finite for the division */
  if (!(g->scale_x > 0) || !(g->scale_y > 0) || !isfinite(g->scale_x) || !isfinite(g->scale_y) ||
      !isfinite(g->offset_x) || !isfinite(g->offset_y) || !isfinite(g->src_x) ||
      !isfinite(g->src_y))
    return nd_set_error(err, ND_ERR_INVALID_ARG,
                        "transform: geometry scale %g x %g, offset %g,%g, source at %g,%g",
                        g->scale_x, g->scale_y, g->offset_x, g->offset_y, g->src_x, g->src_y);
  if (mw < 0 || mh < 0 || ow < 0 || oh < 0)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "transform: model %dx%d, output %dx%d", mw, mh,
                        ow, oh);
  if (mw == 0)
    mw = g->input_width;
  if (mh == 0)
    mh = g->input_height;
  if (ow == 0)
    ow = g->frame_width;
  if (oh == 0)
    oh = g->frame_height;
  /* decoder pixels -> input pixels -> frame pixels -> output frame pixels */
  const double kx = (double)g->input_width / mw, ky = (double)g->input_height / mh;
  const double rx = (double)ow / g->frame_width, ry = (double)oh / g->frame_height;
  t->scale_x = kx / g->scale_x * rx;
  t->scale_y = ky / g->scale_y * ry;
  t->shift_x = (g->src_x - g->offset_x / g->scale_x) * rx;
  t->shift_y = (g->src_y - g->offset_y / g->scale_y) * ry;
  t->frame_width = ow;
  t->frame_height = oh;
  return ND_OK;
}

void nd_transform_then(nd_transform *t, const nd_transform *then) {
  t->scale_x *= then->scale_x;
  t->scale_y *= then->scale_y;
  t->shift_x = t->shift_x * then->scale_x + then->shift_x;
  t->shift_y = t->shift_y * then->scale_y + then->shift_y;
  t->frame_width = then->frame_width;
  t->frame_height = then->frame_height;
}

void nd_transform_point(const nd_transform *t, float *x, float *y) {
  *x = (float)(*x * t->scale_x + t->shift_x);
  *y = (float)(*y * t->scale_y + t->shift_y);
}

static float clampf(float v, float lo, float hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

void nd_transform_detection(const nd_transform *t, nd_detection *d) {
  nd_transform_point(t, &d->x0, &d->y0);
  nd_transform_point(t, &d->x1, &d->y1);
  d->x0 = clampf(d->x0, 0, (float)t->frame_width);
  d->x1 = clampf(d->x1, 0, (float)t->frame_width);
  d->y0 = clampf(d->y0, 0, (float)t->frame_height);
  d->y1 = clampf(d->y1, 0, (float)t->frame_height);
  for (int k = 0; k < d->n_keypoints && k < ND_MAX_KEYPOINTS; k++)
    nd_transform_point(t, &d->keypoints[k].x, &d->keypoints[k].y);
}
