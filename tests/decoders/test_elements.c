/* test_elements.c - gst-check tests of tensordecoder and roioverlay.
 *
 * tensordecoder gets frames carrying a GstOnnxTensorMeta built here (the
 * producer API of the plugin library), with a face planted in BlazeFace
 * tensors or boxes in a YOLOv8 tensor, and must attach the right
 * GstVideoRegionOfInterestMeta (frame coordinates, label, confidence,
 * keypoints) and post the per-frame message; tensors of the wrong shape
 * must end in a clear element error.  roioverlay must draw the box on each
 * of its eight formats and leave the rest of the frame alone.
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "gstonnxtensormeta.h"

/* fontconfig (under pango) keeps its configuration for the life of the
 * process; LeakSanitizer builds would report it.  Not our allocation. */
const char *__lsan_default_suppressions (void);
const char *
__lsan_default_suppressions (void)
{
  return "leak:libfontconfig.so\n";
}

/* ---- tensors ------------------------------------------------------------- */

typedef struct
{
  const gchar *name;
  gint n_dims;
  gint64 dims[4];
  const gfloat *data;
} TensorSpec;

static GstBuffer *
make_storage (const TensorSpec * specs, guint n)
{
  gsize sizes[8], offsets[8];
  GstOnnxTensorStorageLayout layout;
  GstBuffer *storage;
  GstMapInfo map;
  GstOnnxTensor *t;
  guint i;

  for (i = 0; i < n; i++) {
    gsize e = 1;
    gint d;
    for (d = 0; d < specs[i].n_dims; d++)
      e *= (gsize) specs[i].dims[d];
    sizes[i] = e * sizeof (gfloat);
  }
  gst_onnx_tensor_storage_layout_init (&layout, n, sizes, offsets);
  storage = gst_buffer_new_allocate (NULL, layout.total_size, NULL);
  fail_unless (gst_buffer_map (storage, &map, GST_MAP_WRITE));
  t = gst_onnx_tensor_storage_init (map.data, map.size, n);
  for (i = 0; i < n; i++) {
    gint d;
    memset (&t[i], 0, sizeof t[i]);
    t[i].name = g_quark_from_string (specs[i].name);
    t[i].data_type = GST_ONNX_TENSOR_DATA_TYPE_FLOAT32;
    t[i].n_dims = specs[i].n_dims;
    for (d = 0; d < specs[i].n_dims; d++)
      t[i].dims[d] = specs[i].dims[d];
    t[i].size = sizes[i];
    t[i].offset = offsets[i];
    t[i].data = map.data + offsets[i];
    memcpy (map.data + offsets[i], specs[i].data, sizes[i]);
  }
  gst_buffer_unmap (storage, &map);
  return storage;
}

static GstBuffer *
frame_with_tensors (gsize frame_size, const TensorSpec * specs, guint n)
{
  GstBuffer *frame = gst_buffer_new_allocate (NULL, frame_size, NULL);
  GstBuffer *storage = make_storage (specs, n);

  gst_buffer_memset (frame, 0, 0x80, frame_size);
  fail_unless (gst_buffer_add_onnx_tensor_meta (frame,
          g_quark_from_string ("detector"), storage, 1, FALSE) != NULL);
  gst_buffer_unref (storage);
  GST_BUFFER_PTS (frame) = 0;
  GST_BUFFER_DURATION (frame) = GST_SECOND / 30;
  return frame;
}

/* BlazeFace outputs with one face on anchor 100 (16x16 cell x=2, y=3):
 * center (20, 28) in the 128x128 input, box 20x24, logit 5. */
static gfloat bf_s0[512], bf_s1[384], bf_r0[512 * 16], bf_r1[384 * 16];

static void
blazeface_specs (TensorSpec * s, gboolean bad_dims)
{
  gint i, k;

  for (i = 0; i < 512; i++)
    bf_s0[i] = -10.0f;
  for (i = 0; i < 384; i++)
    bf_s1[i] = -10.0f;
  memset (bf_r0, 0, sizeof bf_r0);
  memset (bf_r1, 0, sizeof bf_r1);
  bf_s0[100] = 5.0f;
  bf_r0[100 * 16 + 2] = 20.0f;
  bf_r0[100 * 16 + 3] = 24.0f;
  for (k = 0; k < 6; k++) {
    bf_r0[100 * 16 + 4 + 2 * k] = (gfloat) k;
    bf_r0[100 * 16 + 5 + 2 * k] = 0.0f;
  }
  s[0] = (TensorSpec) { "Identity:0", 3, {1, 512, 1}, bf_s0 };
  s[1] = (TensorSpec) { "Identity_1:0", 3, {1, 384, 1}, bf_s1 };
  s[2] = (TensorSpec) { "Identity_2:0", 3, {1, 512, 16}, bf_r0 };
  s[3] = (TensorSpec) { "Identity_3:0", 3, {1, 384, 16}, bf_r1 };
  if (bad_dims)                 /* 17 values per anchor: not BlazeFace */
    s[2].dims[2] = s[3].dims[2] = 8;
}

static GstHarness *
decoder_harness (const gchar * desc, gint w, gint h, GstBus ** bus)
{
  GstHarness *hh = gst_harness_new_parse (desc);
  gchar *caps = g_strdup_printf ("video/x-raw,format=RGB,width=%d,height=%d,"
      "framerate=30/1", w, h);

  *bus = gst_bus_new ();
  gst_element_set_bus (hh->element, *bus);
  gst_harness_set_src_caps_str (hh, caps);
  g_free (caps);
  return hh;
}

static GstMessage *
pop_element_message (GstBus * bus, const gchar * name)
{
  GstMessage *m;

  while ((m = gst_bus_pop (bus))) {
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT &&
        gst_structure_has_name (gst_message_get_structure (m), name))
      return m;
    gst_message_unref (m);
  }
  return NULL;
}

static gdouble
sigmoid (gdouble x)
{
  return 1.0 / (1.0 + exp (-x));
}

GST_START_TEST (test_blazeface_roi)
{
  GstBus *bus;
  GstHarness *hh = decoder_harness ("tensordecoder scheme=blazeface", 256,
      256, &bus);
  TensorSpec specs[4];
  GstBuffer *out;
  GstVideoRegionOfInterestMeta *roi;
  GstStructure *det, *kp;
  gdouble conf;
  gint cls;
  const GValue *v;
  GstMessage *m;
  const GstStructure *ms;
  guint count;

  blazeface_specs (specs, FALSE);
  out = gst_harness_push_and_pull (hh, frame_with_tensors (256 * 256 * 3,
          specs, 4));
  fail_unless (out != NULL);
  /* the 128x128 model box [10,16]-[30,40] scaled x2 to the 256x256 frame */
  roi = gst_buffer_get_video_region_of_interest_meta (out);
  fail_unless (roi != NULL);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), "face");
  fail_unless_equals_int (roi->x, 20);
  fail_unless_equals_int (roi->y, 32);
  fail_unless_equals_int (roi->w, 40);
  fail_unless_equals_int (roi->h, 48);
  det = gst_video_region_of_interest_meta_get_param (roi, "detection");
  fail_unless (det != NULL);
  fail_unless (gst_structure_get_double (det, "confidence", &conf));
  fail_unless (fabs (conf - sigmoid (5.0)) < 1e-5);
  fail_unless (gst_structure_get_int (det, "class-id", &cls));
  fail_unless_equals_int (cls, 0);
  fail_unless_equals_string (gst_structure_get_string (det, "label"), "face");
  /* keypoint 2 (nose tip) at center + (2, 0) -> (22, 28) x2 = (44, 56) */
  kp = gst_video_region_of_interest_meta_get_param (roi, "keypoints");
  fail_unless (kp != NULL);
  fail_unless_equals_int (gst_structure_n_fields (kp), 6);
  v = gst_structure_get_value (kp, "nose-tip");
  fail_unless (v != NULL && gst_value_array_get_size (v) == 2);
  fail_unless (fabs (g_value_get_double (gst_value_array_get_value (v,
                  0)) - 44.0) < 1e-3);
  fail_unless (fabs (g_value_get_double (gst_value_array_get_value (v,
                  1)) - 56.0) < 1e-3);
  gst_buffer_unref (out);

  m = pop_element_message (bus, "tensordecoder");
  fail_unless (m != NULL);
  ms = gst_message_get_structure (m);
  fail_unless (gst_structure_get_uint (ms, "count", &count));
  fail_unless_equals_int (count, 1);
  fail_unless_equals_string (gst_structure_get_string (ms, "scheme"),
      "blazeface");
  fail_unless_equals_string (gst_structure_get_string (ms, "model-id"),
      "detector");
  v = gst_structure_get_value (ms, "boxes");
  fail_unless (v && gst_value_array_get_size (v) == 1);
  v = gst_value_array_get_value (v, 0);
  fail_unless_equals_int (g_value_get_uint (gst_value_array_get_value (v, 0)),
      20);
  fail_unless_equals_int (g_value_get_uint (gst_value_array_get_value (v, 3)),
      48);
  gst_message_unref (m);

  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);
}

GST_END_TEST;

GST_START_TEST (test_blazeface_letterbox_and_frame_size)
{
  GstBus *bus;
  /* The decorated frame is the 128x128 letterboxed model input; the
   * coordinates are wanted for the 720x528 original: content 128x93 at
   * y=17, scale 720/128 = 5.625 -> box x 10..30 -> 56..169 (rounded),
   * y 16..40 -> (16-17)*528/93 < 0 -> clipped to 0 .. (40-17)*5.677 = 131 */
  GstHarness *hh = decoder_harness ("tensordecoder scheme=blazeface "
      "scale-mode=letterbox frame-width=720 frame-height=528", 128, 128, &bus);
  TensorSpec specs[4];
  GstBuffer *out;
  GstVideoRegionOfInterestMeta *roi;

  blazeface_specs (specs, FALSE);
  out = gst_harness_push_and_pull (hh, frame_with_tensors (128 * 128 * 3,
          specs, 4));
  roi = gst_buffer_get_video_region_of_interest_meta (out);
  fail_unless (roi != NULL);
  fail_unless_equals_int (roi->x, 56);
  fail_unless_equals_int (roi->y, 0);
  fail_unless_equals_int (roi->x + roi->w, 169);
  fail_unless_equals_int (roi->y + roi->h, 131);
  gst_buffer_unref (out);
  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);
}

GST_END_TEST;

GST_START_TEST (test_yolov8_labels)
{
  GstBus *bus;
  GstHarness *hh;
  gchar *labels, *desc;
  /* [1,4+3,16]: two boxes, classes 2 and 0, in 640x640 input pixels */
  static gfloat y8[7 * 16];
  TensorSpec spec = { "output0", 3, {1, 7, 16}, y8 };
  GstBuffer *out;
  GstVideoRegionOfInterestMeta *roi;
  gpointer state = NULL;
  gint n = 0;
  GError *err = NULL;

  memset (y8, 0, sizeof y8);
  /* box 0: center (320, 320) 64x32, class 2 p .9 */
  y8[0 * 16 + 0] = 320, y8[1 * 16 + 0] = 320, y8[2 * 16 + 0] = 64,
      y8[3 * 16 + 0] = 32, y8[6 * 16 + 0] = 0.9f;
  /* box 1: center (100, 100) 20x20, class 0 p .5 */
  y8[0 * 16 + 1] = 100, y8[1 * 16 + 1] = 100, y8[2 * 16 + 1] = 20,
      y8[3 * 16 + 1] = 20, y8[4 * 16 + 1] = 0.5f;

  labels = g_build_filename (g_get_tmp_dir (), "nd-test-labels.txt", NULL);
  fail_unless (g_file_set_contents (labels, "person\nbicycle\ncar\n", -1,
          &err));
  desc = g_strdup_printf ("tensordecoder scheme=yolov8 labels-file=%s "
      "model-width=640 model-height=640", labels);
  hh = decoder_harness (desc, 320, 320, &bus);
  out = gst_harness_push_and_pull (hh, frame_with_tensors (320 * 320 * 3,
          &spec, 1));
  while ((roi = (GstVideoRegionOfInterestMeta *)
          gst_buffer_iterate_meta_filtered (out, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    if (roi->id == 0) {
      /* best first: the car, (288,304)-(352,336) / 2 */
      fail_unless_equals_string (g_quark_to_string (roi->roi_type), "car");
      fail_unless_equals_int (roi->x, 144);
      fail_unless_equals_int (roi->y, 152);
      fail_unless_equals_int (roi->w, 32);
      fail_unless_equals_int (roi->h, 16);
    } else {
      fail_unless_equals_string (g_quark_to_string (roi->roi_type), "person");
    }
    n++;
  }
  fail_unless_equals_int (n, 2);
  gst_buffer_unref (out);
  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);
  unlink (labels);
  g_free (labels);
  g_free (desc);
}

GST_END_TEST;

GST_START_TEST (test_malformed_tensors_error)
{
  GstBus *bus;
  GstHarness *hh = decoder_harness ("tensordecoder scheme=blazeface", 128,
      128, &bus);
  TensorSpec specs[4];
  GstMessage *m;
  GError *err = NULL;
  gchar *dbg = NULL;

  blazeface_specs (specs, TRUE);
  fail_unless_equals_int (gst_harness_push (hh,
          frame_with_tensors (128 * 128 * 3, specs, 4)), GST_FLOW_ERROR);
  while ((m = gst_bus_pop (bus)) && GST_MESSAGE_TYPE (m) != GST_MESSAGE_ERROR)
    gst_message_unref (m);
  fail_unless (m != NULL);
  gst_message_parse_error (m, &err, &dbg);
  GST_INFO ("error: %s", err->message);
  /* says which scheme and what it expected */
  fail_unless (strstr (err->message, "blazeface") != NULL);
  fail_unless (strstr (err->message, "[1,N,16]") != NULL);
  g_clear_error (&err);
  g_free (dbg);
  gst_message_unref (m);
  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);
}

GST_END_TEST;

GST_START_TEST (test_no_meta_passes)
{
  GstBus *bus;
  GstHarness *hh = decoder_harness ("tensordecoder", 64, 64, &bus);
  GstBuffer *in = gst_buffer_new_allocate (NULL, 64 * 64 * 3, NULL), *out;
  GstMessage *m;
  gint warnings = 0, i;

  for (i = 0; i < 3; i++) {
    out = gst_harness_push_and_pull (hh, gst_buffer_ref (in));
    fail_unless (out != NULL);
    fail_unless (gst_buffer_get_video_region_of_interest_meta (out) == NULL);
    gst_buffer_unref (out);
  }
  /* one warning, not one per frame */
  while ((m = gst_bus_pop (bus))) {
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_WARNING)
      warnings++;
    gst_message_unref (m);
  }
  fail_unless_equals_int (warnings, 1);
  gst_buffer_unref (in);
  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);
}

GST_END_TEST;

GST_START_TEST (test_missing_labels_file_fails_start)
{
  GstElement *e = gst_element_factory_make ("tensordecoder", NULL);
  GstBus *bus = gst_bus_new ();
  GstMessage *m;
  GError *err = NULL;

  g_object_set (e, "labels-file", "/nonexistent/labels.txt", NULL);
  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  while ((m = gst_bus_pop (bus)) && GST_MESSAGE_TYPE (m) != GST_MESSAGE_ERROR)
    gst_message_unref (m);
  fail_unless (m != NULL);
  gst_message_parse_error (m, &err, NULL);
  fail_unless (strstr (err->message, "/nonexistent/labels.txt") != NULL);
  g_clear_error (&err);
  gst_message_unref (m);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
}

GST_END_TEST;

/* ---- roioverlay ---------------------------------------------------------- */

static void
pixel_at (GstVideoFrame * f, gint x, gint y, gint out[3])
{
  const GstVideoFormatInfo *fi = f->info.finfo;
  gint c;

  for (c = 0; c < 3; c++) {
    gint comp = c;
    gint plane = GST_VIDEO_FORMAT_INFO_PLANE (fi, comp);
    gint pstride = GST_VIDEO_FORMAT_INFO_PSTRIDE (fi, comp);
    gint sx = GST_VIDEO_FORMAT_INFO_SCALE_WIDTH (fi, comp, x);
    gint sy = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (fi, comp, y);
    guint8 *p = GST_VIDEO_FRAME_PLANE_DATA (f, plane);
    p += sy * GST_VIDEO_FRAME_PLANE_STRIDE (f, plane) + sx * pstride +
        GST_VIDEO_FORMAT_INFO_POFFSET (fi, comp);
    out[c] = *p;
  }
}

GST_START_TEST (test_roioverlay_formats)
{
  const gchar *formats[] = { "RGB", "BGR", "RGBA", "BGRA", "RGBx", "BGRx",
    "I420", "NV12"
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (formats); i++) {
    GstHarness *hh = gst_harness_new_parse ("roioverlay thickness=2");
    GstVideoInfo info;
    GstBuffer *in, *out;
    GstVideoFrame vf;
    GstVideoRegionOfInterestMeta *roi;
    gint inside[3], corner[3], before[3];
    gboolean yuv = g_str_equal (formats[i], "I420") ||
        g_str_equal (formats[i], "NV12");
    gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=160,"
        "height=120,framerate=30/1", formats[i]);

    gst_harness_set_src_caps_str (hh, caps);
    gst_video_info_set_format (&info, gst_video_format_from_string (formats[i]),
        160, 120);
    in = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
    gst_buffer_memset (in, 0, 0x80, GST_VIDEO_INFO_SIZE (&info));
    gst_buffer_add_video_meta_full (in, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_INFO_FORMAT (&info), 160, 120, GST_VIDEO_INFO_N_PLANES (&info),
        info.offset, info.stride);
    roi = gst_buffer_add_video_region_of_interest_meta (in, "face", 40, 50,
        60, 40);
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("detection", "label", G_TYPE_STRING, "face",
            "class-id", G_TYPE_INT, 0, "confidence", G_TYPE_DOUBLE, 0.9, NULL));
    out = gst_harness_push_and_pull (hh, in);
    fail_unless (out != NULL);
    fail_unless (gst_video_frame_map (&vf, &info, out, GST_MAP_READ));
    pixel_at (&vf, 40, 50, corner);
    pixel_at (&vf, 70, 70, inside);
    pixel_at (&vf, 150, 110, before);
    /* palette color of class 0 is 0xFF3838; in BT.601 limited range
     * Y = 115, U = 98, V = 215.  (pixel_at returns R, G, B or Y, U, V
     * whatever the memory order.) */
    if (yuv) {
      fail_unless (abs (corner[0] - 115) <= 3 && abs (corner[1] - 98) <= 3
          && abs (corner[2] - 215) <= 3, "%s corner %d %d %d", formats[i],
          corner[0], corner[1], corner[2]);
    } else {
      fail_unless (corner[0] == 0xFF && corner[1] == 0x38
          && corner[2] == 0x38, "%s corner %d %d %d", formats[i], corner[0],
          corner[1], corner[2]);
    }
    fail_unless (inside[0] == 0x80 && inside[1] == 0x80 && inside[2] == 0x80,
        "%s inside changed", formats[i]);
    fail_unless (before[0] == 0x80, "%s outside changed", formats[i]);
    gst_video_frame_unmap (&vf);
    gst_buffer_unref (out);
    gst_harness_teardown (hh);
    g_free (caps);
  }
}

GST_END_TEST;

GST_START_TEST (test_roioverlay_clear_layer)
{
  GstHarness *hh = gst_harness_new_parse ("roioverlay clear=true");
  GstVideoInfo info;
  GstBuffer *in, *out;
  GstMapInfo map;

  gst_harness_set_src_caps_str (hh, "video/x-raw,format=BGRA,width=64,"
      "height=64,framerate=30/1");
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRA, 64, 64);
  in = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  gst_buffer_memset (in, 0, 0xff, GST_VIDEO_INFO_SIZE (&info));
  gst_buffer_add_video_region_of_interest_meta (in, "thing", 8, 8, 32, 32);
  out = gst_harness_push_and_pull (hh, in);
  fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
  /* inside the box (below its label, which sits inside the top edge as
   * there is no room above): transparent; on the outline: opaque */
  fail_unless_equals_int (map.data[(34 * 64 + 30) * 4 + 3], 0);
  fail_unless_equals_int (map.data[(60 * 64 + 60) * 4 + 3], 0);
  fail_unless_equals_int (map.data[(8 * 64 + 8) * 4 + 3], 255);
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);
  gst_harness_teardown (hh);
}

GST_END_TEST;

/* A GstVideoMeta that puts rows outside the buffer (here I420 planes with
 * 4x the stride, or the image starting near the end) is refused with an
 * error instead of drawing past the buffer. */
GST_START_TEST (test_roioverlay_lying_video_meta)
{
  guint k;

  for (k = 0; k < 2; k++) {
    GstHarness *hh = gst_harness_new_parse ("roioverlay thickness=2");
    GstVideoInfo info;
    GstBuffer *in;
    gsize offset[GST_VIDEO_MAX_PLANES] = { 0 };
    gint stride[GST_VIDEO_MAX_PLANES] = { 0 };
    guint p;

    gst_harness_set_src_caps_str (hh, "video/x-raw,format=I420,width=64,"
        "height=64,framerate=30/1");
    gst_video_info_set_format (&info, GST_VIDEO_FORMAT_I420, 64, 64);
    in = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
    gst_buffer_memset (in, 0, 0x80, GST_VIDEO_INFO_SIZE (&info));
    for (p = 0; p < 3; p++) {
      offset[p] = GST_VIDEO_INFO_PLANE_OFFSET (&info, p);
      stride[p] = GST_VIDEO_INFO_PLANE_STRIDE (&info, p);
    }
    if (k == 0)
      stride[2] *= 4;
    else
      offset[0] = GST_VIDEO_INFO_SIZE (&info) - 16;
    gst_buffer_add_video_meta_full (in, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_FORMAT_I420, 64, 64, 3, offset, stride);
    gst_buffer_add_video_region_of_interest_meta (in, "thing", 4, 4, 56, 56);
    fail_unless_equals_int (gst_harness_push (hh, in), GST_FLOW_ERROR);
    gst_harness_teardown (hh);
  }
}

GST_END_TEST;

static Suite *
decoders_suite (void)
{
  Suite *s = suite_create ("tensordecoder");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_blazeface_roi);
  tcase_add_test (tc, test_blazeface_letterbox_and_frame_size);
  tcase_add_test (tc, test_yolov8_labels);
  tcase_add_test (tc, test_malformed_tensors_error);
  tcase_add_test (tc, test_no_meta_passes);
  tcase_add_test (tc, test_missing_labels_file_fails_start);
  tcase_add_test (tc, test_roioverlay_formats);
  tcase_add_test (tc, test_roioverlay_clear_layer);
  tcase_add_test (tc, test_roioverlay_lying_video_meta);
  return s;
}

GST_CHECK_MAIN (decoders);
