/* GStreamer onnxinfer plugin
 *
 * gstroioverlay.c: draws every GstVideoRegionOfInterestMeta on the frame.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * SECTION:element-roioverlay
 * @title: roioverlay
 * @short_description: draw regions of interest (boxes, rotated text
 *   boxes, labels, scores, recognised texts, keypoints) on video frames
 * @see_also: tensordecoder
 *
 * `roioverlay` draws each #GstVideoRegionOfInterestMeta of a frame: the box
 * outline, a label with the score (from the ROI's `detection` parameter
 * structure, `confidence` field) and, when the ROI has a `keypoints`
 * parameter structure, its points.  Whole-frame ROIs with only a
 * `classification` parameter are listed as labels in the top-left corner;
 * a region that a classifier labelled (`tensordecoder` in region mode) is
 * drawn as a box with its class appended to its label.
 * It works on the frame in place, in RGB, BGR, RGBA, BGRA, RGBx, BGRx, I420
 * and NV12, so it usually needs no conversion around it.
 *
 * OCR results: a ROI with a `rotated-box` parameter structure (what
 * `tensordecoder scheme=dbnet` puts on each text line: `points`, an array of
 * four <x, y> arrays, the corners top-left, top-right, bottom-right,
 * bottom-left in frame pixels) is drawn as that quadrilateral, the outline
 * centred on its edges, instead of its axis-aligned box; a `rotated-box`
 * whose `points` are not four pairs of finite numbers is drawn as the box,
 * with a warning (once, until the caps change).  A ROI with a `text`
 * parameter structure (`text`, UTF-8, and `confidence`: `tensordecoder
 * scheme=ctc`) is labelled with the recognised text, followed by its
 * confidence when #GstRoiOverlay:draw-scores is set ("文本 97%"), instead
 * of its type; the label sits above the top-left corner of the
 * quadrilateral (or box), below it when there is no room, and is kept
 * inside the frame; a long text is cut with an ellipsis.  A `text` ROI that
 * was not read yet (no `text` parameter, or an empty text) keeps the
 * `text NN%` label of its detection; texts read on the whole frame (ROIs
 * covering the frame with only a `text` parameter) are listed in the
 * top-left corner like whole-frame classes.  Scripts with no installed font
 * are drawn as pango's placeholder boxes.  The label of a shape entirely
 * outside the frame is not drawn.
 *
 * Text is laid out by pango and rendered by cairo (any system font, any
 * script); each distinct label is rendered once into a small cached ARGB
 * image and blended onto the frames where it appears.
 *
 * With #GstRoiOverlay:clear the frame (RGBA/BGRA) is made transparent
 * before drawing: the output is an overlay layer to put on another stream
 * with `compositor`, which draws the results of a model that ran on scaled
 * frames onto the original-resolution video.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 filesrc location=astronaut.png ! pngdec ! videoconvert ! \
 *   videoscale ! video/x-raw,width=128,height=128 ! \
 *   onnxinfer model-location=face_detection_front_128x128.onnx \
 *     input-mean="<127.5>" input-std="<127.5>" ! \
 *   tensordecoder scheme=blazeface ! roioverlay ! videoconvert ! pngenc ! \
 *   filesink location=faces.png
 * ]| Boxes and keypoints on the model-sized frame.
 * |[
 * gst-launch-1.0 filesrc location=page.png ! pngdec ! videoconvert ! \
 *   imagefreeze num-buffers=1 ! \
 *   onnxinfer name=det model-location=ch_PP-OCRv4_det_infer.onnx \
 *     channel-order=bgr input-mean="103.53,116.28,123.675" \
 *     input-std="57.375,57.12,58.395" ! \
 *   tensordecoder scheme=dbnet model-id=det ! \
 *   onnxinfer name=rec model-location=ch_PP-OCRv4_rec_infer.onnx \
 *     inference-region=roi-list channel-order=bgr input-mean=0 \
 *     input-std=255 input-height=48 input-width=1024 \
 *     scale-mode=letterbox ! \
 *   tensordecoder scheme=ctc model-id=rec labels-file=ppocr_keys_v1.txt ! \
 *   roioverlay ! videoconvert ! pngenc ! filesink location=ocr.png
 * ]| Each text line's rotated box and the text read in it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gstonnxvideoutil.h"
#include "gstroioverlay.h"
#include "decode.h"

GST_DEBUG_CATEGORY_STATIC (gst_roi_overlay_debug);
#define GST_CAT_DEFAULT gst_roi_overlay_debug

#define DEFAULT_THICKNESS 0
#define DEFAULT_FONT_DESC NULL
#define DEFAULT_COLOR 0
#define DEFAULT_DRAW_LABELS TRUE
#define DEFAULT_DRAW_SCORES TRUE
#define DEFAULT_DRAW_KEYPOINTS TRUE
#define DEFAULT_CLEAR FALSE

enum
{
  PROP_0,
  PROP_THICKNESS,
  PROP_FONT_DESC,
  PROP_COLOR,
  PROP_DRAW_LABELS,
  PROP_DRAW_SCORES,
  PROP_DRAW_KEYPOINTS,
  PROP_CLEAR,
};

struct _GstRoiOverlay
{
  GstVideoFilter parent;

  /* Properties: GST_OBJECT_LOCK */
  guint thickness;
  gchar *font_desc;
  guint color;
  gboolean draw_labels;
  gboolean draw_scores;
  gboolean draw_keypoints;
  gboolean clear;
  gboolean font_changed;

  /* Streaming thread */
  nd_text_renderer *text;
  nd_pixfmt pixfmt;
  gint auto_thickness;
  gint auto_font_px;
  gboolean warned_clear;
  gboolean warned_rotated_box;
};

#define VIDEO_FORMATS "{ RGB, BGR, RGBA, BGRA, RGBx, BGRx, I420, NV12 }"

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)));

#define gst_roi_overlay_parent_class parent_class
G_DEFINE_TYPE (GstRoiOverlay, gst_roi_overlay, GST_TYPE_VIDEO_FILTER);

GST_ELEMENT_REGISTER_DEFINE (roioverlay, "roioverlay", GST_RANK_NONE,
    GST_TYPE_ROI_OVERLAY);

static void gst_roi_overlay_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_roi_overlay_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static void gst_roi_overlay_finalize (GObject * object);
static gboolean gst_roi_overlay_stop (GstBaseTransform * trans);
static gboolean gst_roi_overlay_set_info (GstVideoFilter * filter,
    GstCaps * incaps, GstVideoInfo * in_info, GstCaps * outcaps,
    GstVideoInfo * out_info);
static GstFlowReturn gst_roi_overlay_transform_frame_ip (GstVideoFilter *
    filter, GstVideoFrame * frame);

#define PROP_FLAGS_LIVE (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | \
    GST_PARAM_MUTABLE_PLAYING)

static void
gst_roi_overlay_class_init (GstRoiOverlayClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstVideoFilterClass *filter_class = GST_VIDEO_FILTER_CLASS (klass);

  GST_DEBUG_CATEGORY_INIT (gst_roi_overlay_debug, "roioverlay", 0,
      "Region of interest overlay");

  gobject_class->set_property = gst_roi_overlay_set_property;
  gobject_class->get_property = gst_roi_overlay_get_property;
  gobject_class->finalize = gst_roi_overlay_finalize;

  g_object_class_install_property (gobject_class, PROP_THICKNESS,
      g_param_spec_uint ("thickness", "Thickness",
          "Box outline thickness in pixels (0: from the frame size, "
          "about 1/160 of its smaller side, at least 2)", 0, 100,
          DEFAULT_THICKNESS, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_FONT_DESC,
      g_param_spec_string ("font-desc", "Font description",
          "Pango font description of the labels, e.g. \"Sans Bold 14\" "
          "(NULL: bold sans sized from the frame height)", DEFAULT_FONT_DESC,
          PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_COLOR,
      g_param_spec_uint ("color", "Color",
          "Color of boxes and label backgrounds as 0xAARRGGBB (0: one "
          "color per class)", 0, G_MAXUINT32, DEFAULT_COLOR,
          PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_DRAW_LABELS,
      g_param_spec_boolean ("draw-labels", "Draw labels",
          "Draw the label of each region", DEFAULT_DRAW_LABELS,
          PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_DRAW_SCORES,
      g_param_spec_boolean ("draw-scores", "Draw scores",
          "Append the confidence (percent) to the labels",
          DEFAULT_DRAW_SCORES, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_DRAW_KEYPOINTS,
      g_param_spec_boolean ("draw-keypoints", "Draw keypoints",
          "Draw the keypoints of regions that have them",
          DEFAULT_DRAW_KEYPOINTS, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_CLEAR,
      g_param_spec_boolean ("clear", "Clear",
          "Make the frame transparent before drawing (RGBA/BGRA only), to "
          "produce an overlay layer for compositor", DEFAULT_CLEAR,
          PROP_FLAGS_LIVE));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Region of interest overlay", "Filter/Effect/Video",
      "Draws the regions of interest of each frame: boxes, labels with "
      "scores, keypoints", ONNXINFER_AUTHOR);

  trans_class->stop = GST_DEBUG_FUNCPTR (gst_roi_overlay_stop);
  filter_class->set_info = GST_DEBUG_FUNCPTR (gst_roi_overlay_set_info);
  filter_class->transform_frame_ip =
      GST_DEBUG_FUNCPTR (gst_roi_overlay_transform_frame_ip);
}

static void
gst_roi_overlay_init (GstRoiOverlay * self)
{
  self->thickness = DEFAULT_THICKNESS;
  self->font_desc = g_strdup (DEFAULT_FONT_DESC);
  self->color = DEFAULT_COLOR;
  self->draw_labels = DEFAULT_DRAW_LABELS;
  self->draw_scores = DEFAULT_DRAW_SCORES;
  self->draw_keypoints = DEFAULT_DRAW_KEYPOINTS;
  self->clear = DEFAULT_CLEAR;
  /* Drawing happens in place: never skip a frame as passthrough. */
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
}

static void
gst_roi_overlay_finalize (GObject * object)
{
  GstRoiOverlay *self = GST_ROI_OVERLAY (object);

  g_free (self->font_desc);
  nd_text_renderer_free (self->text);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_roi_overlay_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstRoiOverlay *self = GST_ROI_OVERLAY (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_THICKNESS:
      self->thickness = g_value_get_uint (value);
      break;
    case PROP_FONT_DESC:
      g_free (self->font_desc);
      self->font_desc = g_value_dup_string (value);
      self->font_changed = TRUE;
      break;
    case PROP_COLOR:
      self->color = g_value_get_uint (value);
      break;
    case PROP_DRAW_LABELS:
      self->draw_labels = g_value_get_boolean (value);
      break;
    case PROP_DRAW_SCORES:
      self->draw_scores = g_value_get_boolean (value);
      break;
    case PROP_DRAW_KEYPOINTS:
      self->draw_keypoints = g_value_get_boolean (value);
      break;
    case PROP_CLEAR:
      self->clear = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_roi_overlay_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstRoiOverlay *self = GST_ROI_OVERLAY (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_THICKNESS:
      g_value_set_uint (value, self->thickness);
      break;
    case PROP_FONT_DESC:
      g_value_set_string (value, self->font_desc);
      break;
    case PROP_COLOR:
      g_value_set_uint (value, self->color);
      break;
    case PROP_DRAW_LABELS:
      g_value_set_boolean (value, self->draw_labels);
      break;
    case PROP_DRAW_SCORES:
      g_value_set_boolean (value, self->draw_scores);
      break;
    case PROP_DRAW_KEYPOINTS:
      g_value_set_boolean (value, self->draw_keypoints);
      break;
    case PROP_CLEAR:
      g_value_set_boolean (value, self->clear);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static gboolean
gst_roi_overlay_stop (GstBaseTransform * trans)
{
  GstRoiOverlay *self = GST_ROI_OVERLAY (trans);

  nd_text_renderer_free (self->text);
  self->text = NULL;
  return TRUE;
}

static gboolean
gst_roi_overlay_set_info (GstVideoFilter * filter, GstCaps * incaps,
    GstVideoInfo * in_info, GstCaps * outcaps, GstVideoInfo * out_info)
{
  GstRoiOverlay *self = GST_ROI_OVERLAY (filter);
  gint w = GST_VIDEO_INFO_WIDTH (in_info), h = GST_VIDEO_INFO_HEIGHT (in_info);
  gint font_px;

  switch (GST_VIDEO_INFO_FORMAT (in_info)) {
    case GST_VIDEO_FORMAT_RGB: self->pixfmt = ND_FMT_RGB; break;
    case GST_VIDEO_FORMAT_BGR: self->pixfmt = ND_FMT_BGR; break;
    case GST_VIDEO_FORMAT_RGBA: self->pixfmt = ND_FMT_RGBA; break;
    case GST_VIDEO_FORMAT_BGRA: self->pixfmt = ND_FMT_BGRA; break;
    case GST_VIDEO_FORMAT_RGBx: self->pixfmt = ND_FMT_RGBX; break;
    case GST_VIDEO_FORMAT_BGRx: self->pixfmt = ND_FMT_BGRX; break;
    case GST_VIDEO_FORMAT_I420: self->pixfmt = ND_FMT_I420; break;
    case GST_VIDEO_FORMAT_NV12: self->pixfmt = ND_FMT_NV12; break;
    default:
      GST_ERROR_OBJECT (self, "unsupported format %s",
          gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (in_info)));
      return FALSE;
  }
  /* Sizes follow the frame so a 128x128 thumbnail and a 1080p frame both
   * get legible labels and visible boxes. */
  self->auto_thickness = MAX (2, MIN (w, h) / 160);
  font_px = CLAMP (h / 30, 9, 64);
  if (font_px != self->auto_font_px) {
    self->auto_font_px = font_px;
    GST_OBJECT_LOCK (self);
    self->font_changed = TRUE;
    GST_OBJECT_UNLOCK (self);
  }
  self->warned_clear = FALSE;
  self->warned_rotated_box = FALSE;
  return TRUE;
}

/* The renderer for the current font, (re)created when the font changed. */
static gboolean
ensure_text (GstRoiOverlay * self)
{
  gchar *font = NULL;
  gboolean changed;
  nd_error err = { 0 };
  nd_text_renderer *r = NULL;

  GST_OBJECT_LOCK (self);
  changed = self->font_changed || !self->text;
  if (changed) {
    font = self->font_desc && *self->font_desc ? g_strdup (self->font_desc) :
        g_strdup_printf ("Sans Bold %dpx", self->auto_font_px);
    self->font_changed = FALSE;
  }
  GST_OBJECT_UNLOCK (self);
  if (!changed)
    return TRUE;

  if (nd_text_renderer_new (font, 128, &r, &err) != ND_OK) {
    GST_ELEMENT_WARNING (self, LIBRARY, INIT,
        ("Cannot render text with font '%s': %s", font, err.msg),
        ("labels are not drawn"));
    g_free (font);
    return FALSE;
  }
  GST_DEBUG_OBJECT (self, "text renderer with font '%s'", font);
  g_free (font);
  nd_text_renderer_free (self->text);
  self->text = r;
  return TRUE;
}

static nd_color
color_from_argb (guint argb)
{
  nd_color c;
  c.a = (argb >> 24) & 0xff;
  c.r = (argb >> 16) & 0xff;
  c.g = (argb >> 8) & 0xff;
  c.b = argb & 0xff;
  return c;
}

/* Keypoints of a `keypoints` parameter: fields holding an <x, y> array. */
static gint
read_keypoints (const GstStructure * s, nd_detection * d)
{
  gint i, n = gst_structure_n_fields (s), k = 0;

  for (i = 0; i < n && k < ND_MAX_KEYPOINTS; i++) {
    const GValue *v = gst_structure_get_value (s,
        gst_structure_nth_field_name (s, i));
    const GValue *vx, *vy;

    if (!v || !GST_VALUE_HOLDS_ARRAY (v) || gst_value_array_get_size (v) < 2)
      continue;
    vx = gst_value_array_get_value (v, 0);
    vy = gst_value_array_get_value (v, 1);
    if (!G_VALUE_HOLDS_DOUBLE (vx) || !G_VALUE_HOLDS_DOUBLE (vy))
      continue;
    d->keypoints[k].x = (float) g_value_get_double (vx);
    d->keypoints[k].y = (float) g_value_get_double (vy);
    k++;
  }
  d->n_keypoints = k;
  return k;
}

static gboolean
value_to_double (const GValue * v, gdouble * out)
{
  if (G_VALUE_HOLDS_DOUBLE (v))
    *out = g_value_get_double (v);
  else if (G_VALUE_HOLDS_FLOAT (v))
    *out = g_value_get_float (v);
  else if (G_VALUE_HOLDS_INT (v))
    *out = g_value_get_int (v);
  else if (G_VALUE_HOLDS_INT64 (v))
    *out = (gdouble) g_value_get_int64 (v);
  else
    return FALSE;
  return isfinite (*out);
}

/* The corners of a `rotated-box` parameter: `points`, an array of four
 * <x, y> arrays of numbers (top-left, top-right, bottom-right, bottom-left);
 * FALSE when it is not that. */
static gboolean
read_rotated_box (const GstStructure * s, gfloat xy[8])
{
  const GValue *pts = gst_structure_get_value (s, "points");
  guint k, c;

  if (!pts || !GST_VALUE_HOLDS_ARRAY (pts) ||
      gst_value_array_get_size (pts) != 4)
    return FALSE;
  for (k = 0; k < 4; k++) {
    const GValue *p = gst_value_array_get_value (pts, k);

    if (!GST_VALUE_HOLDS_ARRAY (p) || gst_value_array_get_size (p) != 2)
      return FALSE;
    for (c = 0; c < 2; c++) {
      gdouble v;

      if (!value_to_double (gst_value_array_get_value (p, c), &v))
        return FALSE;
      /* within the range of a float: the drawing clips the rest */
      xy[2 * k + c] = (gfloat) CLAMP (v, -1e30, 1e30);
    }
  }
  return TRUE;
}

/* The recognised text of a `text` parameter as a label: its valid UTF-8,
 * cut at a character (with an ellipsis) so that the score and the label
 * still fit the renderer's ND_LABEL_MAX bytes.  FALSE when there is no text
 * (no field, or empty). */
static gboolean
text_label (const GstStructure * s, gdouble conf, gboolean scores,
    gchar * out, gsize out_size)
{
  const gchar *t = gst_structure_get_string (s, "text");
  const gchar *end = NULL;
  gchar score[16] = "";
  gsize len, room;
  gboolean cut = FALSE;

  if (!t)
    return FALSE;
  /* GstStructure refuses invalid UTF-8; pango would warn of it: checked
   * anyway, the valid start is drawn */
  g_utf8_validate (t, -1, &end);
  len = (gsize) (end - t);
  if (len == 0)
    return FALSE;
  if (scores && conf >= 0.0)
    g_snprintf (score, sizeof score, " %.0f%%", conf * 100.0);
  room = MIN (out_size, ND_LABEL_MAX) - 1 - strlen (score);
  if (len > room) {
    len = room - strlen ("…");
    while (len > 0 && ((guchar) t[len] & 0xC0) == 0x80)
      len--;
    cut = TRUE;
  }
  g_snprintf (out, out_size, "%.*s%s%s", (gint) len, t, cut ? "…" : "",
      score);
  return TRUE;
}

static void
clear_frame (GstVideoFrame * frame)
{
  guint8 *p = GST_VIDEO_FRAME_PLANE_DATA (frame, 0);
  gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (frame, 0);
  gint row = GST_VIDEO_FRAME_WIDTH (frame) * 4, y;

  for (y = 0; y < GST_VIDEO_FRAME_HEIGHT (frame); y++)
    memset (p + (gsize) y * stride, 0, row);
}

static GstFlowReturn
gst_roi_overlay_transform_frame_ip (GstVideoFilter * filter,
    GstVideoFrame * frame)
{
  GstRoiOverlay *self = GST_ROI_OVERLAY (filter);
  GstVideoRegionOfInterestMeta *roi;
  gpointer state = NULL;
  nd_frame f;
  nd_error err = { 0 };
  guint thickness, color;
  gboolean labels, scores, keypoints, clear, have_text;
  gint i, class_row = 0;

  GST_OBJECT_LOCK (self);
  thickness = self->thickness;
  color = self->color;
  labels = self->draw_labels;
  scores = self->draw_scores;
  keypoints = self->draw_keypoints;
  clear = self->clear;
  GST_OBJECT_UNLOCK (self);
  if (thickness == 0)
    thickness = (guint) self->auto_thickness;

  if (!gst_onnx_video_frame_in_bounds (frame)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Invalid video frame: its "
            "layout (strides, plane offsets) puts rows outside the buffer."),
        ("%dx%d %s, %" G_GSIZE_FORMAT " bytes mapped",
            GST_VIDEO_FRAME_WIDTH (frame), GST_VIDEO_FRAME_HEIGHT (frame),
            gst_video_format_to_string (GST_VIDEO_FRAME_FORMAT (frame)),
            frame->map[0].size));
    return GST_FLOW_ERROR;
  }

  if (clear) {
    if (self->pixfmt == ND_FMT_RGBA || self->pixfmt == ND_FMT_BGRA) {
      clear_frame (frame);
    } else if (!self->warned_clear) {
      GST_ELEMENT_WARNING (self, CORE, NEGOTIATION,
          ("'clear' needs RGBA or BGRA frames"), ("ignored for %s",
              gst_video_format_to_string (GST_VIDEO_FRAME_FORMAT (frame))));
      self->warned_clear = TRUE;
    }
  }

  memset (&f, 0, sizeof f);
  f.format = self->pixfmt;
  f.width = GST_VIDEO_FRAME_WIDTH (frame);
  f.height = GST_VIDEO_FRAME_HEIGHT (frame);
  for (i = 0; i < (gint) GST_VIDEO_FRAME_N_PLANES (frame) && i < 3; i++) {
    f.planes[i] = GST_VIDEO_FRAME_PLANE_DATA (frame, i);
    f.strides[i] = GST_VIDEO_FRAME_PLANE_STRIDE (frame, i);
  }

  have_text = labels && ensure_text (self);

  while ((roi = (GstVideoRegionOfInterestMeta *)
          gst_buffer_iterate_meta_filtered (frame->buffer, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    const gchar *label = g_quark_to_string (roi->roi_type);
    GstStructure *det, *cls, *kp, *rbox, *txt;
    gboolean whole_frame, is_poly = FALSE, has_text = FALSE;
    gdouble conf = -1.0, text_conf = -1.0;
    gint class_id = -1;
    gchar text[128];
    gfloat xy[8];
    nd_detection d;
    nd_color c;

    det = gst_video_region_of_interest_meta_get_param (roi, "detection");
    cls = gst_video_region_of_interest_meta_get_param (roi, "classification");
    kp = gst_video_region_of_interest_meta_get_param (roi, "keypoints");
    rbox = gst_video_region_of_interest_meta_get_param (roi, "rotated-box");
    txt = gst_video_region_of_interest_meta_get_param (roi, "text");
    if (rbox) {
      is_poly = read_rotated_box (rbox, xy);
      if (!is_poly && !self->warned_rotated_box) {
        gchar *str = gst_structure_to_string (rbox);

        GST_WARNING_OBJECT (self, "ROI %d: malformed rotated-box (its "
            "'points' must be 4 arrays of 2 finite numbers), drawn as its "
            "axis-aligned box: %s", roi->id, str);
        g_free (str);
        self->warned_rotated_box = TRUE;
      }
    }
    if (txt && !gst_structure_get_double (txt, "confidence", &text_conf))
      text_conf = -1.0;
    if (txt)
      has_text = text_label (txt, text_conf, scores, text, sizeof text);
    /* whole-frame classes, and texts read on the whole frame (scheme=ctc
     * without regions): listed top left */
    whole_frame = (cls || has_text) && !det && !is_poly && roi->x == 0 &&
        roi->y == 0 && (gint) roi->w >= f.width && (gint) roi->h >= f.height;
    if (det || (whole_frame && cls)) {
      const GstStructure *s = det ? det : cls;
      if (!gst_structure_get_double (s, "confidence", &conf))
        conf = -1.0;
      if (!gst_structure_get_int (s, "class-id", &class_id))
        class_id = -1;
    }
    if (color)
      c = color_from_argb (color);
    else if (class_id >= 0)
      c = nd_palette_color (class_id);
    else                        /* ROIs from other elements: color by type */
      c = nd_palette_color ((gint) (g_str_hash (label ? label : "") % 20));

    /* a recognised text replaces the type (and the detection's score):
     * "文本 97%" */
    if (!has_text) {
      if (label && scores && conf >= 0.0)
        g_snprintf (text, sizeof text, "%s %.0f%%", label, conf * 100.0);
      else
        g_snprintf (text, sizeof text, "%s", label ? label : "");
    }
    if (cls && !whole_frame) {
      /* a labelled region: "face 91%: smiling 80%" */
      const gchar *cl = gst_structure_get_string (cls, "label");
      gdouble cc = -1.0;
      gsize len = strlen (text);

      if (cl && len < sizeof text - 1) {
        if (scores && gst_structure_get_double (cls, "confidence", &cc))
          g_snprintf (text + len, sizeof text - len, ": %s %.0f%%", cl,
              cc * 100.0);
        else
          g_snprintf (text + len, sizeof text - len, ": %s", cl);
      }
    }

    if (whole_frame) {
      /* whole-frame classes: a list of labels, top left */
      if (have_text) {
        gint tw = 0, th = 0;
        nd_text_size (self->text, text, &tw, &th, &err);
        if (nd_draw_text (self->text, &f, 0, class_row, text,
                (nd_color) {255, 255, 255, 255}, c, &err) != ND_OK)
          GST_WARNING_OBJECT (self, "label: %s", err.msg);
        class_row += th;
      }
      continue;
    }

    memset (&d, 0, sizeof d);
    d.x0 = (float) roi->x;
    d.y0 = (float) roi->y;
    d.x1 = (float) ((gdouble) roi->x + roi->w);
    d.y1 = (float) ((gdouble) roi->y + roi->h);
    d.score = (float) conf;
    d.class_id = class_id;
    if (kp && keypoints)
      read_keypoints (kp, &d);
    if (is_poly) {
      if (nd_draw_detection_polygon (have_text ? self->text : NULL, &f, &d, xy,
              4, have_text ? text : NULL, c, (int) thickness, &err) != ND_OK)
        GST_WARNING_OBJECT (self, "drawing ROI %d: %s", roi->id, err.msg);
    } else if (nd_draw_detection (have_text ? self->text : NULL, &f, &d,
            have_text ? text : NULL, c, (int) thickness, &err) != ND_OK) {
      GST_WARNING_OBJECT (self, "drawing ROI %d: %s", roi->id, err.msg);
    }
  }
  return GST_FLOW_OK;
}
