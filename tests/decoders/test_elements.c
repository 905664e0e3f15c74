/* test_elements.c - gst-check tests of tensordecoder and roioverlay.
 *
 * tensordecoder gets frames carrying a GstOnnxTensorMeta built here (the
 * producer API of the plugin library), with a face planted in BlazeFace
 * tensors or boxes in a YOLOv8 tensor, and must attach the right
 * GstVideoRegionOfInterestMeta (frame coordinates, label, confidence,
 * keypoints, unique ids) and post the per-frame message; tensors of the
 * wrong shape must end in a clear element error.  Metas that carry the
 * producer's geometry (stretch, letterbox, crop, a region) are mapped
 * through it; metas computed on regions (roi_id >= 0) label those regions
 * (classify) or add boxes whose parent is the region.  roioverlay must draw
 * the box on each of its eight formats and leave the rest of the frame
 * alone; OCR results: a text line's rotated box as its quadrilateral (RGB
 * and 4:2:0, a translucent color blended once), its recognised text (ASCII,
 * Chinese) as the label at the quadrilateral's top-left corner kept inside
 * the frame, whole-frame texts listed, malformed rotated boxes drawn as the
 * axis-aligned box with one warning, huge ones clipped.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

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

#include "element_helpers.h"
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

/* A second face on anchor 512 + 6 * 9 (8x8 cell x=1, y=1: center (24, 24)
 * of 128) moved 60 px right: box 16x16 at [76,16]-[92,32], logit 4. */
static void
blazeface_second_face (void)
{
  bf_s1[6 * 9] = 4.0f;
  bf_r1[6 * 9 * 16 + 0] = 60.0f;
  bf_r1[6 * 9 * 16 + 2] = 16.0f;
  bf_r1[6 * 9 * 16 + 3] = 16.0f;
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
  guint k;

  /* The decorated frame is the 128x128 letterboxed model input; the
   * coordinates are wanted for the 720x528 original: content 128x93 at
   * y=17, scale 720/128 = 5.625 -> box x 10..30 -> 56..169 (rounded),
   * y 16..40 -> (16-17)*528/93 < 0 -> clipped to 0 .. (40-17)*5.677 = 131.
   * The same when onnxinfer recorded its (identity) geometry of the
   * 128x128 frame: the letterbox happened in front of it. */
  for (k = 0; k < 2; k++) {
    GstBus *bus;
    GstHarness *hh = decoder_harness ("tensordecoder scheme=blazeface "
        "scale-mode=letterbox frame-width=720 frame-height=528", 128, 128,
        &bus);
    GstOnnxTensorGeometry g = geometry (128, 128, 128, 128, 0, 0, 128, 128,
        1.0, 1.0, 0, 0);
    TensorSpec specs[4];
    GstBuffer *in, *out;
    GstVideoRegionOfInterestMeta *roi;

    blazeface_specs (specs, FALSE);
    in = new_frame (128 * 128 * 3);
    add_tensors (in, "detector", -1, specs, 4, k == 0 ? NULL : &g);
    out = gst_harness_push_and_pull (hh, in);
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
    fail_unless_equals_int (roi->parent_id, -1);
    if (roi->id == 1) {
      /* best first, ids from 1: the car, (288,304)-(352,336) / 2 */
      fail_unless_equals_string (g_quark_to_string (roi->roi_type), "car");
      fail_unless_equals_int (roi->x, 144);
      fail_unless_equals_int (roi->y, 152);
      fail_unless_equals_int (roi->w, 32);
      fail_unless_equals_int (roi->h, 16);
    } else {
      fail_unless_equals_int (roi->id, 2);
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

/* Geometry on the meta: the mapping is the producer's record inverted,
 * whatever scale-mode says.  640x480 letterboxed into 128x128: content
 * 128x96 at y 16, scale 0.2.  The face [10,16]-[30,40] of the input ->
 * x 50..150, y 0..120; nose tip (22, 28) -> (110, 60).  Then the same frame
 * seen at 320x240 (scaled after onnxinfer): everything halves. */
GST_START_TEST (test_geometry_letterbox)
{
  static const gint sizes[2][2] = { {640, 480}, {320, 240} };
  guint k;

  for (k = 0; k < 2; k++) {
    GstBus *bus;
    GstHarness *hh = decoder_harness ("tensordecoder scheme=blazeface "
        "scale-mode=crop", sizes[k][0], sizes[k][1], &bus);
    GstOnnxTensorGeometry g = geometry (640, 480, 128, 128, 0, 0, 640, 480,
        0.2, 0.2, 0, 16);
    TensorSpec specs[4];
    GstBuffer *in, *out;
    GstVideoRegionOfInterestMeta *roi;
    GstStructure *kp;
    const GValue *v;
    gint div = k == 0 ? 1 : 2;

    blazeface_specs (specs, FALSE);
    in = new_frame ((gsize) sizes[k][0] * sizes[k][1] * 3);
    add_tensors (in, "detector", -1, specs, 4, &g);
    out = gst_harness_push_and_pull (hh, in);
    roi = gst_buffer_get_video_region_of_interest_meta (out);
    fail_unless (roi != NULL);
    fail_unless_equals_int (roi->x, 50 / div);
    fail_unless_equals_int (roi->y, 0);
    fail_unless_equals_int (roi->w, 100 / div);
    fail_unless_equals_int (roi->h, 120 / div);
    fail_unless_equals_int (roi->id, 1);
    fail_unless_equals_int (roi->parent_id, -1);
    kp = gst_video_region_of_interest_meta_get_param (roi, "keypoints");
    v = gst_structure_get_value (kp, "nose-tip");
    fail_unless (fabs (g_value_get_double (gst_value_array_get_value (v,
                    0)) - 110.0 / div) < 1e-3);
    fail_unless (fabs (g_value_get_double (gst_value_array_get_value (v,
                    1)) - 60.0 / div) < 1e-3);
    gst_buffer_unref (out);
    gst_element_set_bus (hh->element, NULL);
    gst_object_unref (bus);
    gst_harness_teardown (hh);
  }
}

GST_END_TEST;

/* Crop: the centered 480x480 of 640x480 (src_x 80) scaled to YOLOv8's
 * 640x640 (scale 4/3).  The car (288,304)-(352,336) of the input ->
 * x 288*0.75+80 = 296 .. 344, y 228 .. 252. */
GST_START_TEST (test_geometry_crop)
{
  GstBus *bus;
  GstHarness *hh = decoder_harness ("tensordecoder scheme=yolov8", 640, 480,
      &bus);
  static gfloat y8[7 * 16];
  TensorSpec spec = { "output0", 3, {1, 7, 16}, y8 };
  GstOnnxTensorGeometry g = geometry (640, 480, 640, 640, 80, 0, 480, 480,
      640.0 / 480, 640.0 / 480, 0, 0);
  GstBuffer *in, *out;
  GstVideoRegionOfInterestMeta *roi;

  memset (y8, 0, sizeof y8);
  y8[0 * 16] = 320, y8[1 * 16] = 320, y8[2 * 16] = 64, y8[3 * 16] = 32;
  y8[6 * 16] = 0.9f;
  in = new_frame (640 * 480 * 3);
  add_tensors (in, "detector", -1, &spec, 1, &g);
  out = gst_harness_push_and_pull (hh, in);
  roi = gst_buffer_get_video_region_of_interest_meta (out);
  fail_unless (roi != NULL);
  fail_unless_equals_int (roi->x, 296);
  fail_unless_equals_int (roi->y, 228);
  fail_unless_equals_int (roi->w, 48);
  fail_unless_equals_int (roi->h, 24);
  fail_unless_equals_int (n_rois (out), 1);
  gst_buffer_unref (out);
  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);
}

GST_END_TEST;

/* BlazeFace back-256: the same tensors as the front model; the geometry's
 * 256x256 input picks the back anchors and scale.  The face on anchor 100
 * with a 40x48 box is [20,32]-[60,80] of 256, x2 on the 512x512 frame:
 * (40, 64) 80x96.  Without geometry, model-width=256 says the same; with
 * neither, the front model's reading is twice as large: [0,4]-[40,52] of
 * 128, x4 = (0, 16) 160x192. */
GST_START_TEST (test_blazeface_back_geometry)
{
  static const struct
  {
    const gchar *desc;
    gboolean geometry;
    guint x, y, w, h;
  } cases[] = {
    {"tensordecoder scheme=blazeface", TRUE, 40, 64, 80, 96},
    {"tensordecoder scheme=blazeface model-width=256 model-height=256",
        FALSE, 40, 64, 80, 96},
    {"tensordecoder scheme=blazeface", FALSE, 0, 16, 160, 192},
  };
  guint c;

  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    GstBus *bus;
    GstHarness *hh = decoder_harness (cases[c].desc, 512, 512, &bus);
    GstOnnxTensorGeometry g = geometry (512, 512, 256, 256, 0, 0, 512, 512,
        0.5, 0.5, 0, 0);
    TensorSpec specs[4];
    GstBuffer *in, *out;
    GstVideoRegionOfInterestMeta *roi;

    blazeface_specs (specs, FALSE);
    bf_r0[100 * 16 + 2] = 40.0f;
    bf_r0[100 * 16 + 3] = 48.0f;
    in = new_frame (512 * 512 * 3);
    add_tensors (in, "detector", -1, specs, 4, cases[c].geometry ? &g : NULL);
    out = gst_harness_push_and_pull (hh, in);
    roi = gst_buffer_get_video_region_of_interest_meta (out);
    fail_unless (roi != NULL, "case %u", c);
    fail_unless (roi->x == cases[c].x && roi->y == cases[c].y &&
        roi->w == cases[c].w && roi->h == cases[c].h,
        "case %u: (%u, %u) %ux%u", c, roi->x, roi->y, roi->w, roi->h);
    gst_buffer_unref (out);
    gst_element_set_bus (hh->element, NULL);
    gst_object_unref (bus);
    gst_harness_teardown (hh);
  }
}

GST_END_TEST;

/* Tensors the BlazeFace scheme cannot account for stop the stream with an
 * error that says why: an input size with no anchor configuration, and
 * outputs that do not cover the back model's 896 anchors. */
GST_START_TEST (test_unaccountable_layout_error)
{
  guint k;

  for (k = 0; k < 2; k++) {
    GstBus *bus;
    GstHarness *hh = decoder_harness ("tensordecoder scheme=blazeface", 512,
        512, &bus);
    GstOnnxTensorGeometry g = k == 0 ?
        geometry (512, 512, 300, 300, 0, 0, 512, 512, 300.0 / 512,
        300.0 / 512, 0, 0) :
        geometry (512, 512, 256, 256, 0, 0, 512, 512, 0.5, 0.5, 0, 0);
    TensorSpec specs[4];
    GstBuffer *in;
    GstMessage *m;
    GError *err = NULL;

    blazeface_specs (specs, FALSE);
    if (k == 1)                 /* 512 + 256 anchors */
      specs[1].dims[1] = specs[3].dims[1] = 256;
    in = new_frame (512 * 512 * 3);
    add_tensors (in, "detector", -1, specs, 4, &g);
    fail_unless_equals_int (gst_harness_push (hh, in), GST_FLOW_ERROR);
    while ((m = gst_bus_pop (bus)) && GST_MESSAGE_TYPE (m) != GST_MESSAGE_ERROR)
      gst_message_unref (m);
    fail_unless (m != NULL);
    gst_message_parse_error (m, &err, NULL);
    GST_INFO ("error: %s", err->message);
    fail_unless (strstr (err->message, "blazeface") != NULL, "%s",
        err->message);
    if (k == 0)
      fail_unless (strstr (err->message, "no anchor configuration for a "
              "300x300 model input") != NULL, "%s", err->message);
    else
      fail_unless (strstr (err->message, "cover 768 anchors") &&
          strstr (err->message, "256x256 back model has 896"), "%s",
          err->message);
    g_clear_error (&err);
    gst_message_unref (m);
    gst_element_set_bus (hh->element, NULL);
    gst_object_unref (bus);
    gst_harness_teardown (hh);
  }
}

GST_END_TEST;

/* Every ROI the decoder adds has an id of its own on the frame: from 1 on
 * a bare frame, from 1 + the largest id already there otherwise, which
 * leaves the ROIs of others alone. */
GST_START_TEST (test_unique_roi_ids)
{
  GstBus *bus;
  GstHarness *hh = decoder_harness ("tensordecoder scheme=blazeface", 128,
      128, &bus);
  TensorSpec specs[4];
  GstBuffer *in, *out;
  GstVideoRegionOfInterestMeta *roi;
  GstMessage *m;
  const GstStructure *ms;
  guint k;

  for (k = 0; k < 2; k++) {
    gint id0 = k == 0 ? 1 : 8;

    blazeface_specs (specs, FALSE);
    blazeface_second_face ();
    in = new_frame (128 * 128 * 3);
    if (k == 1) {
      roi = gst_buffer_add_video_region_of_interest_meta (in, "person", 0, 0,
          64, 64);
      roi->id = 3;
      roi = gst_buffer_add_video_region_of_interest_meta (in, "person", 64, 0,
          64, 64);
      roi->id = 7;
    }
    add_tensors (in, "detector", -1, specs, 4, NULL);
    out = gst_harness_push_and_pull (hh, in);
    fail_unless_equals_int (n_rois (out), k == 0 ? 2 : 4);
    /* best first: the face on anchor 100 (logit 5), then the other */
    roi = roi_by_id (out, id0);
    fail_unless (roi != NULL && roi->x == 10 && roi->y == 16, "frame %u", k);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type), "face");
    fail_unless_equals_int (roi->parent_id, -1);
    roi = roi_by_id (out, id0 + 1);
    fail_unless (roi != NULL && roi->x == 76 && roi->y == 16, "frame %u", k);
    fail_unless_equals_int (roi->parent_id, -1);
    if (k == 1) {
      fail_unless_equals_string (g_quark_to_string (roi_by_id (out,
                  3)->roi_type), "person");
      fail_unless_equals_string (g_quark_to_string (roi_by_id (out,
                  7)->roi_type), "person");
    }
    gst_buffer_unref (out);

    m = pop_element_message (bus, "tensordecoder");
    fail_unless (m != NULL);
    ms = gst_message_get_structure (m);
    fail_unless_equals_int (int_at (ms, "roi-ids", 0), id0);
    fail_unless_equals_int (int_at (ms, "roi-ids", 1), id0 + 1);
    fail_unless_equals_int (int_at (ms, "parent-ids", 0), -1);
    fail_unless_equals_int (int_at (ms, "parent-ids", 1), -1);
    gst_message_unref (m);
  }
  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);
}

GST_END_TEST;

/* A classifier run on two face regions (one meta per region): each region
 * gets the `classification` of its own tensors, and no ROI is added. */
GST_START_TEST (test_classify_in_regions)
{
  GstBus *bus;
  GstHarness *hh = decoder_harness ("tensordecoder scheme=classify top-k=2 "
      "model-id=classifier", 640, 480, &bus);
  static const gfloat scores1[3] = { 0.1f, 0.2f, 0.7f };
  static const gfloat scores2[3] = { 0.6f, 0.3f, 0.1f };
  TensorSpec s1 = { "probs", 2, {1, 3}, scores1 };
  TensorSpec s2 = { "probs", 2, {1, 3}, scores2 };
  TensorSpec bf[4];
  GstOnnxTensorGeometry g1 = geometry (640, 480, 64, 64, 10, 10, 100, 100,
      0.64, 0.64, 0, 0);
  GstOnnxTensorGeometry g2 = geometry (640, 480, 64, 64, 300, 200, 80, 80,
      0.8, 0.8, 0, 0);
  GstBuffer *in, *out;
  GstVideoRegionOfInterestMeta *roi;
  GstStructure *cls;
  GstMessage *m;
  const GstStructure *ms;
  const GValue *v;
  gdouble conf;
  gint id, i;
  guint count, regions;

  in = new_frame (640 * 480 * 3);
  roi = gst_buffer_add_video_region_of_interest_meta (in, "face", 10, 10, 100,
      100);
  roi->id = 1;
  roi = gst_buffer_add_video_region_of_interest_meta (in, "face", 300, 200,
      80, 80);
  roi->id = 2;
  /* the detector's tensors on the frame are not the classifier's */
  blazeface_specs (bf, FALSE);
  add_tensors (in, "detector", -1, bf, 4, NULL);
  add_tensors (in, "classifier", 1, &s1, 1, &g1);
  add_tensors (in, "classifier", 2, &s2, 1, &g2);
  out = gst_harness_push_and_pull (hh, in);
  fail_unless_equals_int (n_rois (out), 2);

  roi = roi_by_id (out, 1);
  cls = gst_video_region_of_interest_meta_get_param (roi, "classification");
  fail_unless (cls != NULL);
  fail_unless_equals_string (gst_structure_get_string (cls, "label"),
      "class-2");
  fail_unless (gst_structure_get_int (cls, "class-id", &id) && id == 2);
  fail_unless (gst_structure_get_double (cls, "confidence", &conf));
  fail_unless (fabs (conf - 0.7) < 1e-6);
  fail_unless_equals_string (gst_structure_get_string (cls, "model-id"),
      "classifier");
  v = gst_structure_get_value (cls, "class-ids");
  fail_unless (v && gst_value_array_get_size (v) == 2);
  fail_unless_equals_int (g_value_get_int (gst_value_array_get_value (v, 1)),
      1);
  /* the region keeps what it was */
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), "face");
  fail_unless (roi->x == 10 && roi->w == 100);

  roi = roi_by_id (out, 2);
  cls = gst_video_region_of_interest_meta_get_param (roi, "classification");
  fail_unless (cls != NULL);
  fail_unless_equals_string (gst_structure_get_string (cls, "label"),
      "class-0");
  fail_unless (gst_structure_get_double (cls, "confidence", &conf));
  fail_unless (fabs (conf - 0.6) < 1e-6);
  gst_buffer_unref (out);

  /* the message: top-2 of each region, with the region's id */
  m = pop_element_message (bus, "tensordecoder");
  fail_unless (m != NULL);
  ms = gst_message_get_structure (m);
  fail_unless (gst_structure_get_uint (ms, "count", &count) && count == 4);
  fail_unless (gst_structure_get_uint (ms, "regions", &regions) &&
      regions == 2);
  for (i = 0; i < 4; i++) {
    gint rid = int_at (ms, "roi-ids", i);
    gint cid = int_at (ms, "class-ids", i);
    fail_unless_equals_int (int_at (ms, "parent-ids", i), rid);
    if (rid == 1)
      fail_unless (cid == 2 || cid == 1, "region 1 class %d", cid);
    else
      fail_unless (rid == 2 && (cid == 0 || cid == 1), "region %d class %d",
          rid, cid);
  }
  v = gst_structure_get_value (ms, "boxes");
  fail_unless (v && gst_value_array_get_size (v) == 4);
  gst_message_unref (m);
  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);
}

GST_END_TEST;

/* A detector run on two regions: its boxes are mapped through each
 * region's geometry and are children of that region.  Region 5 (200,100)
 * 256x256 scaled by 0.5 into 128x128: the face [10,16]-[30,40] -> (220,
 * 132) 40x48; region 9 (0,0) 128x128 at scale 1: (10, 16) 20x24.  New ids
 * start after the largest one (9). */
GST_START_TEST (test_detection_in_regions)
{
  GstBus *bus;
  GstHarness *hh = decoder_harness ("tensordecoder scheme=blazeface", 640,
      480, &bus);
  GstOnnxTensorGeometry g5 = geometry (640, 480, 128, 128, 200, 100, 256, 256,
      0.5, 0.5, 0, 0);
  GstOnnxTensorGeometry g9 = geometry (640, 480, 128, 128, 0, 0, 128, 128,
      1.0, 1.0, 0, 0);
  TensorSpec specs[4];
  GstBuffer *in, *out;
  GstVideoRegionOfInterestMeta *roi, *r5 = NULL, *r9 = NULL;
  GstMessage *m;
  const GstStructure *ms;
  gpointer state = NULL;
  gint i;
  gboolean seen5 = FALSE, seen9 = FALSE;

  in = new_frame (640 * 480 * 3);
  roi = gst_buffer_add_video_region_of_interest_meta (in, "person", 200, 100,
      256, 256);
  roi->id = 5;
  roi = gst_buffer_add_video_region_of_interest_meta (in, "person", 0, 0, 128,
      128);
  roi->id = 9;
  blazeface_specs (specs, FALSE);
  add_tensors (in, "faces", 5, specs, 4, &g5);
  add_tensors (in, "faces", 9, specs, 4, &g9);
  out = gst_harness_push_and_pull (hh, in);
  fail_unless_equals_int (n_rois (out), 4);
  while ((roi = (GstVideoRegionOfInterestMeta *)
          gst_buffer_iterate_meta_filtered (out, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    if (roi->id == 5 || roi->id == 9)
      continue;
    fail_unless (roi->id == 10 || roi->id == 11, "id %d", roi->id);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type), "face");
    if (roi->parent_id == 5)
      r5 = roi;
    else if (roi->parent_id == 9)
      r9 = roi;
  }
  fail_unless (r5 != NULL && r9 != NULL && r5->id != r9->id);
  fail_unless (r5->x == 220 && r5->y == 132 && r5->w == 40 && r5->h == 48,
      "(%u, %u) %ux%u", r5->x, r5->y, r5->w, r5->h);
  fail_unless (r9->x == 10 && r9->y == 16 && r9->w == 20 && r9->h == 24,
      "(%u, %u) %ux%u", r9->x, r9->y, r9->w, r9->h);

  m = pop_element_message (bus, "tensordecoder");
  fail_unless (m != NULL);
  ms = gst_message_get_structure (m);
  for (i = 0; i < 2; i++) {
    gint rid = int_at (ms, "roi-ids", i), pid = int_at (ms, "parent-ids", i);
    if (pid == 5) {
      fail_unless_equals_int (rid, r5->id);
      seen5 = TRUE;
    } else {
      fail_unless_equals_int (pid, 9);
      fail_unless_equals_int (rid, r9->id);
      seen9 = TRUE;
    }
  }
  fail_unless (seen5 && seen9);
  gst_message_unref (m);
  gst_buffer_unref (out);
  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);
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

  /* a region-mode producer leaves frames without regions bare: no warning
   * for a while ... */
  for (i = 0; i < 99; i++) {
    out = gst_harness_push_and_pull (hh, gst_buffer_ref (in));
    fail_unless (out != NULL);
    fail_unless (gst_buffer_get_video_region_of_interest_meta (out) == NULL);
    gst_buffer_unref (out);
  }
  while ((m = gst_bus_pop (bus))) {
    fail_if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_WARNING, "warned early");
    gst_message_unref (m);
  }
  /* ... then 100 frames without any tensors from the start: one warning,
   * not one per frame */
  for (i = 0; i < 50; i++) {
    out = gst_harness_push_and_pull (hh, gst_buffer_ref (in));
    fail_unless (out != NULL);
    gst_buffer_unref (out);
  }
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

/* labels-file and priors-file naming a special file or an odd path: the
 * state change returns FAILURE with an error naming the path and what it is.
 * Run in a thread and waited for 10 s: a FIFO used to block the state change
 * (and a set_state(NULL) from another thread) forever, /dev/zero as priors
 * to spin. */
typedef struct
{
  GstElement *element;
  GstStateChangeReturn ret;
  gboolean done;
  GMutex lock;
  GCond cond;
} StateJob;

static gpointer
set_paused_job (gpointer data)
{
  StateJob *job = data;
  GstStateChangeReturn ret = gst_element_set_state (job->element,
      GST_STATE_PAUSED);

  g_mutex_lock (&job->lock);
  job->ret = ret;
  job->done = TRUE;
  g_cond_signal (&job->cond);
  g_mutex_unlock (&job->lock);
  return NULL;
}

static void
check_bad_file_property (const gchar * prop, const gchar * path,
    const gchar * needle)
{
  GstElement *e = gst_element_factory_make ("tensordecoder", NULL);
  GstBus *bus = gst_bus_new ();
  StateJob job = { e, GST_STATE_CHANGE_SUCCESS, FALSE };
  GThread *thread;
  GstMessage *m;
  GError *err = NULL;
  gint64 deadline;

  gst_util_set_object_arg (G_OBJECT (e), "scheme", "ssd");
  g_object_set (e, prop, path, NULL);
  gst_element_set_bus (e, bus);
  g_mutex_init (&job.lock);
  g_cond_init (&job.cond);
  thread = g_thread_new ("set-state", set_paused_job, &job);
  deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
  g_mutex_lock (&job.lock);
  while (!job.done && g_cond_wait_until (&job.cond, &job.lock, deadline));
  g_mutex_unlock (&job.lock);
  fail_unless (job.done, "%s=%s: the state change did not return within 10 s",
      prop, path);
  g_thread_join (thread);
  fail_unless_equals_int (job.ret, GST_STATE_CHANGE_FAILURE);

  while ((m = gst_bus_pop (bus)) && GST_MESSAGE_TYPE (m) != GST_MESSAGE_ERROR)
    gst_message_unref (m);
  fail_unless (m != NULL, "%s=%s: no error message", prop, path);
  gst_message_parse_error (m, &err, NULL);
  fail_unless (strstr (err->message, needle) != NULL,
      "%s=%s: '%s' lacks '%s'", prop, path, err->message, needle);
  fail_unless_equals_int (err->domain == GST_RESOURCE_ERROR, TRUE);
  g_clear_error (&err);
  gst_message_unref (m);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
  g_mutex_clear (&job.lock);
  g_cond_clear (&job.cond);
}

GST_START_TEST (test_special_files_fail_start)
{
  const gchar *props[] = { "labels-file", "priors-file" };
  gchar *dir = g_dir_make_tmp ("nd-special-XXXXXX", NULL);
  gchar *fifo = g_build_filename (dir, "fifo.txt", NULL);
  gchar *sub = g_build_filename (dir, "dir.txt", NULL);
  gchar *loop = g_build_filename (dir, "loop.txt", NULL);
  gchar *big = g_build_filename (dir, "big.txt", NULL);
  gchar *name = g_strnfill (300, 'n');
  gchar *longp = g_build_filename (dir, name, NULL);
  FILE *f;
  guint i;

  fail_unless (dir != NULL);
  fail_unless_equals_int (mkfifo (fifo, 0600), 0);
  fail_unless_equals_int (g_mkdir (sub, 0700), 0);
  fail_unless_equals_int (symlink ("loop.txt", loop), 0);
  /* over both caps (16 and 64 MiB) by its size: sparse, never read */
  f = fopen (big, "wb");
  fail_unless (f != NULL && ftruncate (fileno (f), (off_t) 65 << 20) == 0);
  fclose (f);

  for (i = 0; i < G_N_ELEMENTS (props); i++) {
    check_bad_file_property (props[i], fifo, "fifo.txt' is a FIFO");
    check_bad_file_property (props[i], "/dev/zero",
        "'/dev/zero' is a character device");
    check_bad_file_property (props[i], sub, "dir.txt' is a directory");
    check_bad_file_property (props[i], loop,
        "loop.txt': too many levels of symbolic links");
    check_bad_file_property (props[i], longp, "is too long");
    check_bad_file_property (props[i], big, "more than the limit");
  }

  unlink (fifo);
  g_rmdir (sub);
  unlink (loop);
  unlink (big);
  g_rmdir (dir);
  g_free (longp);
  g_free (name);
  g_free (big);
  g_free (loop);
  g_free (sub);
  g_free (fifo);
  g_free (dir);
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
    /* the sample covering pixel (x, y) (SCALE_WIDTH rounds up: sizes) */
    gint sx = x >> GST_VIDEO_FORMAT_INFO_W_SUB (fi, comp);
    gint sy = y >> GST_VIDEO_FORMAT_INFO_H_SUB (fi, comp);
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

/* A face region labelled by a classifier (tensordecoder in region mode) is
 * still drawn as a box; only whole-frame classes go to the corner list. */
GST_START_TEST (test_roioverlay_labelled_region)
{
  GstHarness *hh = gst_harness_new_parse ("roioverlay thickness=2 "
      "draw-labels=false");
  GstVideoInfo info;
  GstBuffer *in, *out;
  GstVideoFrame vf;
  GstVideoRegionOfInterestMeta *roi;
  gint corner[3], inside[3];

  gst_harness_set_src_caps_str (hh, "video/x-raw,format=RGB,width=160,"
      "height=120,framerate=30/1");
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, 160, 120);
  in = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  gst_buffer_memset (in, 0, 0x80, GST_VIDEO_INFO_SIZE (&info));
  roi = gst_buffer_add_video_region_of_interest_meta (in, "face", 40, 50, 60,
      40);
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_new ("detection", "label", G_TYPE_STRING, "face",
          "class-id", G_TYPE_INT, 0, "confidence", G_TYPE_DOUBLE, 0.9, NULL));
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_new ("classification", "label", G_TYPE_STRING, "smiling",
          "class-id", G_TYPE_INT, 3, "confidence", G_TYPE_DOUBLE, 0.8, NULL));
  out = gst_harness_push_and_pull (hh, in);
  fail_unless (gst_video_frame_map (&vf, &info, out, GST_MAP_READ));
  pixel_at (&vf, 40, 50, corner);
  pixel_at (&vf, 70, 70, inside);
  /* the box in the detection's class color (class 0: 0xFF3838) */
  fail_unless (corner[0] == 0xFF && corner[1] == 0x38 && corner[2] == 0x38,
      "corner %d %d %d", corner[0], corner[1], corner[2]);
  fail_unless (inside[0] == 0x80 && inside[1] == 0x80 && inside[2] == 0x80);
  gst_video_frame_unmap (&vf);
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

/* ---- roioverlay: OCR results (rotated boxes, recognised texts) ---------- */

#define OCR_W 320
#define OCR_H 240

/* A w x h rectangle centred on (cx, cy), turned by deg degrees (clockwise
 * on screen, y down): its corners top-left, top-right, bottom-right,
 * bottom-left, as tensordecoder scheme=dbnet orders them. */
static void
tilted_rect (gdouble cx, gdouble cy, gdouble w, gdouble h, gdouble deg,
    gdouble p[8])
{
  gdouble a = deg * G_PI / 180.0;
  gdouble ux = cos (a) * w / 2, uy = sin (a) * w / 2;
  gdouble vx = -sin (a) * h / 2, vy = cos (a) * h / 2;

  p[0] = cx - ux - vx;
  p[1] = cy - uy - vy;
  p[2] = cx + ux - vx;
  p[3] = cy + uy - vy;
  p[4] = cx + ux + vx;
  p[5] = cy + uy + vy;
  p[6] = cx - ux + vx;
  p[7] = cy - uy + vy;
}

/* The axis-aligned box of the points, what scheme=dbnet puts in x/y/w/h. */
static void
points_bounds (const gdouble * p, guint n, guint b[4])
{
  gdouble x0 = p[0], y0 = p[1], x1 = p[0], y1 = p[1];
  guint k;

  for (k = 1; k < n; k++) {
    x0 = MIN (x0, p[2 * k]);
    x1 = MAX (x1, p[2 * k]);
    y0 = MIN (y0, p[2 * k + 1]);
    y1 = MAX (y1, p[2 * k + 1]);
  }
  b[0] = (guint) floor (x0);
  b[1] = (guint) floor (y0);
  b[2] = (guint) ceil (x1) - b[0];
  b[3] = (guint) ceil (y1) - b[1];
}

/* A `rotated-box` parameter with `points` = the n <x, y> pairs of p. */
static GstStructure *
rotated_box_param (const gdouble * p, guint n)
{
  GstStructure *s = gst_structure_new ("rotated-box", "cx", G_TYPE_DOUBLE,
      0.0, "cy", G_TYPE_DOUBLE, 0.0, "width", G_TYPE_DOUBLE, 0.0, "height",
      G_TYPE_DOUBLE, 0.0, "angle", G_TYPE_DOUBLE, 20.0, NULL);
  GValue pts = G_VALUE_INIT;
  guint k, c;

  g_value_init (&pts, GST_TYPE_ARRAY);
  for (k = 0; k < n; k++) {
    GValue pt = G_VALUE_INIT;

    g_value_init (&pt, GST_TYPE_ARRAY);
    for (c = 0; c < 2; c++) {
      GValue v = G_VALUE_INIT;

      g_value_init (&v, G_TYPE_DOUBLE);
      g_value_set_double (&v, p[2 * k + c]);
      gst_value_array_append_and_take_value (&pt, &v);
    }
    gst_value_array_append_and_take_value (&pts, &pt);
  }
  gst_structure_take_value (s, "points", &pts);
  return s;
}

/* A `text` ROI as scheme=dbnet makes it: box b, a `detection` (class 0,
 * drawn in 0xFF3838) and the rotated box rb (not added when NULL). */
static GstVideoRegionOfInterestMeta *
add_text_roi (GstBuffer * buf, const guint b[4], GstStructure * rb)
{
  GstVideoRegionOfInterestMeta *roi;

  roi = gst_buffer_add_video_region_of_interest_meta (buf, "text", b[0], b[1],
      b[2], b[3]);
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_new ("detection", "label", G_TYPE_STRING, "text",
          "class-id", G_TYPE_INT, 0, "confidence", G_TYPE_DOUBLE, 0.91, NULL));
  if (rb)
    gst_video_region_of_interest_meta_add_param (roi, rb);
  return roi;
}

static GstHarness *
overlay_harness (const gchar * desc, const gchar * format)
{
  GstHarness *hh = gst_harness_new_parse (desc);
  gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,"
      "framerate=30/1", format, OCR_W, OCR_H);

  gst_harness_set_src_caps_str (hh, caps);
  g_free (caps);
  return hh;
}

static GstBuffer *
ocr_frame (const gchar * format, GstVideoInfo * info)
{
  gst_video_info_set_format (info, gst_video_format_from_string (format),
      OCR_W, OCR_H);
  return new_frame (GST_VIDEO_INFO_SIZE (info));
}

/* Class 0's color 0xFF3838 (Y 115, U 98, V 215) at (x, y). */
static gboolean
is_box_color (GstVideoFrame * vf, gint x, gint y)
{
  gint px[3];

  pixel_at (vf, x, y, px);
  if (GST_VIDEO_FORMAT_INFO_IS_YUV (vf->info.finfo))
    return abs (px[0] - 115) <= 3 && abs (px[1] - 98) <= 3 &&
        abs (px[2] - 215) <= 3;
  return px[0] == 0xFF && px[1] == 0x38 && px[2] == 0x38;
}

static gboolean
is_untouched (GstVideoFrame * vf, gint x, gint y)
{
  gint px[3];

  pixel_at (vf, x, y, px);
  return px[0] == 0x80 && px[1] == 0x80 && px[2] == 0x80;
}

/* A text line tilted by 20 degrees is drawn as its quadrilateral: pixels on
 * its four edges have the box color, the corners of its axis-aligned box
 * (outside the quadrilateral) and the pixels a few pixels off the edges are
 * untouched; on packed RGB and both 4:2:0 layouts. */
GST_START_TEST (test_roioverlay_rotated_box)
{
  const gchar *formats[] = { "RGB", "BGRx", "I420", "NV12" };
  gdouble p[8];
  guint b[4], i;

  tilted_rect (160, 130, 160, 50, 20, p);
  points_bounds (p, 4, b);
  for (i = 0; i < G_N_ELEMENTS (formats); i++) {
    GstHarness *hh = overlay_harness ("roioverlay thickness=2 "
        "draw-labels=false", formats[i]);
    GstVideoInfo info;
    GstBuffer *in = ocr_frame (formats[i], &info), *out;
    GstVideoFrame vf;
    gint k, q;

    add_text_roi (in, b, rotated_box_param (p, 4));
    out = gst_harness_push_and_pull (hh, in);
    fail_unless (out != NULL);
    fail_unless (gst_video_frame_map (&vf, &info, out, GST_MAP_READ));
    for (k = 0; k < 4; k++) {
      gdouble ax = p[2 * k], ay = p[2 * k + 1];
      gdouble bx = p[(2 * k + 2) % 8], by = p[(2 * k + 3) % 8];
      gdouble len = hypot (bx - ax, by - ay);
      /* outward normal (the corners go clockwise on screen) */
      gdouble nx = (by - ay) / len, ny = -(bx - ax) / len;

      for (q = 0; q <= 4; q++) {
        gdouble t = q / 4.0, x = ax + t * (bx - ax), y = ay + t * (by - ay);

        fail_unless (is_box_color (&vf, (gint) x, (gint) y),
            "%s edge %d at %.2f: (%d, %d)", formats[i], k, t, (gint) x,
            (gint) y);
        if (q == 0 || q == 4)
          continue;
        /* a thin outline: 4 pixels out and in are the picture */
        fail_unless (is_untouched (&vf, (gint) (x + 4 * nx),
                (gint) (y + 4 * ny)), "%s edge %d outside", formats[i], k);
        fail_unless (is_untouched (&vf, (gint) (x - 4 * nx),
                (gint) (y - 4 * ny)), "%s edge %d inside", formats[i], k);
      }
    }
    /* the axis-aligned box is not drawn */
    fail_unless (is_untouched (&vf, b[0], b[1]), "%s", formats[i]);
    fail_unless (is_untouched (&vf, b[0] + b[2] - 1, b[1]), "%s", formats[i]);
    fail_unless (is_untouched (&vf, b[0], b[1] + b[3] - 1), "%s", formats[i]);
    fail_unless (is_untouched (&vf, b[0] + b[2] - 1, b[1] + b[3] - 1), "%s",
        formats[i]);
    fail_unless (is_untouched (&vf, 160, 130), "%s centre", formats[i]);
    fail_unless (is_untouched (&vf, 0, 0) && is_untouched (&vf, OCR_W - 1,
            OCR_H - 1), "%s frame corners", formats[i]);
    gst_video_frame_unmap (&vf);
    gst_buffer_unref (out);
    gst_harness_teardown (hh);
  }
}

GST_END_TEST;

static gint
blend_once (gint src, gint dst, gint a)
{
  return (src * a + dst * (255 - a) + 127) / 255;
}

/* A translucent outline is blended once where two edges meet (the corner
 * pixel and, in I420, the corner's chroma sample shared by two rows). */
GST_START_TEST (test_roioverlay_rotated_box_translucent)
{
  const gchar *formats[] = { "RGB", "I420" };
  gdouble p[8];
  guint b[4], i;

  tilted_rect (160, 130, 160, 50, 20, p);
  points_bounds (p, 4, b);
  for (i = 0; i < G_N_ELEMENTS (formats); i++) {
    /* 50% red: R 255 (Y 82, U 90, V 240) at alpha 128 over grey 128 */
    GstHarness *hh = overlay_harness ("roioverlay thickness=3 "
        "draw-labels=false color=0x80ff0000", formats[i]);
    GstVideoInfo info;
    GstBuffer *in = ocr_frame (formats[i], &info), *out;
    GstVideoFrame vf;
    gint px[3], k;

    add_text_roi (in, b, rotated_box_param (p, 4));
    out = gst_harness_push_and_pull (hh, in);
    fail_unless (gst_video_frame_map (&vf, &info, out, GST_MAP_READ));
    for (k = 0; k < 4; k++) {
      pixel_at (&vf, (gint) p[2 * k], (gint) p[2 * k + 1], px);
      if (i == 0)
        fail_unless (px[0] == blend_once (255, 128, 128) &&
            px[1] == blend_once (0, 128, 128) &&
            px[2] == blend_once (0, 128, 128), "RGB corner %d: %d %d %d", k,
            px[0], px[1], px[2]);
      else
        fail_unless (px[0] == blend_once (82, 128, 128) &&
            px[1] == blend_once (90, 128, 128) &&
            px[2] == blend_once (240, 128, 128), "I420 corner %d: %d %d %d",
            k, px[0], px[1], px[2]);
    }
    gst_video_frame_unmap (&vf);
    gst_buffer_unref (out);
    gst_harness_teardown (hh);
  }
}

GST_END_TEST;

/* Counts of the number of pixels of a region by what is there. */
typedef struct
{
  gint bg, light, untouched;
} LabelPixels;

static LabelPixels
label_pixels (GstVideoFrame * vf, gint x0, gint y0, gint x1, gint y1)
{
  LabelPixels n = { 0, 0, 0 };
  gint x, y, px[3];

  for (y = y0; y < y1; y++)
    for (x = x0; x < x1; x++) {
      pixel_at (vf, x, y, px);
      if (px[0] == 0xFF && px[1] == 0x38 && px[2] == 0x38)
        n.bg++;
      else if (px[0] > 200 && px[1] > 200 && px[2] > 200)
        n.light++;
      else if (px[0] == 0x80 && px[1] == 0x80 && px[2] == 0x80)
        n.untouched++;
    }
  return n;
}

/* The recognised text of a `text` parameter is the label of its line,
 * above the quadrilateral's top-left corner (not the axis-aligned box's):
 * ASCII, and Chinese, which this machine may have no font for (pango then
 * draws boxes; nothing fails), and a text longer than a label (cut at a
 * character: pango would warn of a cut one, which fails the test).
 * Without a `text` parameter the line keeps
 * its "text 91%" label; a label that cannot go above or past the frame's
 * edge is moved inside it. */
GST_START_TEST (test_roioverlay_text_label)
{
  gchar long_text[60 * 3 + 1] = "";
  const gchar *texts[] = { NULL, "HELLO", "文本", long_text };
  guint8 region[G_N_ELEMENTS (texts)][30 * 8 * 3];
  gdouble p[8];
  guint b[4], i, k;
  gint tlx, tly, j;

  /* 60 characters, 180 bytes: more than a label holds */
  for (j = 0; j < 60; j++)
    g_strlcat (long_text, "文", sizeof long_text);
  tilted_rect (160, 130, 160, 50, 20, p);
  points_bounds (p, 4, b);
  tlx = (gint) p[0];
  tly = (gint) p[1];
  for (i = 0; i < G_N_ELEMENTS (texts); i++) {
    GstHarness *hh = overlay_harness ("roioverlay thickness=2", "RGB");
    GstVideoInfo info;
    GstBuffer *in = ocr_frame ("RGB", &info), *out;
    GstVideoFrame vf;
    GstVideoRegionOfInterestMeta *roi;
    LabelPixels n;
    gint x, y, px[3];

    roi = add_text_roi (in, b, rotated_box_param (p, 4));
    if (texts[i])
      gst_video_region_of_interest_meta_add_param (roi,
          gst_structure_new ("text", "text", G_TYPE_STRING, texts[i],
              "confidence", G_TYPE_DOUBLE, 0.95, "model-id", G_TYPE_STRING,
              "rec", NULL));
    out = gst_harness_push_and_pull (hh, in);
    fail_unless (gst_video_frame_map (&vf, &info, out, GST_MAP_READ));
    /* rows 3..10 above the top-left corner, 30 columns from it: only the
     * label is there (the outline goes down from that corner) */
    n = label_pixels (&vf, tlx, tly - 10, tlx + 30, tly - 2);
    fail_unless (n.untouched == 0 && n.bg > 20, "'%s': label bg %d light %d "
        "untouched %d", GST_STR_NULL (texts[i]), n.bg, n.light, n.untouched);
    /* the class color is dark: white text */
    if (texts[i] && g_str_has_prefix (texts[i], "文") && n.light == 0)
      GST_INFO ("no glyphs drawn for '%s' (no font)", texts[i]);
    else
      fail_unless (n.light > 0, "'%s': no text pixels",
          GST_STR_NULL (texts[i]));
    /* anchored at the quadrilateral's corner: nothing left of it (where the
     * axis-aligned box starts; the long label is moved left to stay in the
     * frame) nor above the far corner */
    n = label_pixels (&vf, b[0], tly - 10, tlx - 2, tly - 2);
    fail_unless (texts[i] == long_text ||
        n.untouched == (tlx - 2 - (gint) b[0]) * 8, "'%s' left",
        GST_STR_NULL (texts[i]));
    n = label_pixels (&vf, (gint) p[2] - 20, (gint) p[3] - 30, (gint) p[2],
        (gint) p[3] - 22);
    fail_unless (n.untouched == 20 * 8, "'%s' right", GST_STR_NULL (texts[i]));
    for (y = 0; y < 8; y++)
      for (x = 0; x < 30; x++) {
        pixel_at (&vf, tlx + x, tly - 10 + y, px);
        for (j = 0; j < 3; j++)
          region[i][(y * 30 + x) * 3 + j] = (guint8) px[j];
      }
    gst_video_frame_unmap (&vf);
    gst_buffer_unref (out);
    gst_harness_teardown (hh);
  }
  /* different labels */
  for (i = 0; i < G_N_ELEMENTS (texts); i++)
    for (k = i + 1; k < G_N_ELEMENTS (texts); k++)
      fail_unless (memcmp (region[i], region[k], sizeof region[0]) != 0,
          "labels %u and %u look the same", i, k);

  /* top-right corner of the frame: no room above, none to the right */
  {
    GstHarness *hh = overlay_harness ("roioverlay thickness=2", "RGB");
    GstVideoInfo info;
    GstBuffer *in = ocr_frame ("RGB", &info), *out;
    GstVideoFrame vf;
    GstVideoRegionOfInterestMeta *roi;
    gdouble q[8];

    gdouble dx, dy;

    /* the same line with its top-left corner at (300, 2) */
    tilted_rect (0, 0, 160, 50, 20, q);
    dx = 300 - q[0];
    dy = 2 - q[1];
    for (j = 0; j < 4; j++) {
      q[2 * j] += dx;
      q[2 * j + 1] += dy;
    }
    points_bounds (q, 4, b);
    b[2] = OCR_W - b[0];
    roi = add_text_roi (in, b, rotated_box_param (q, 4));
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("text", "text", G_TYPE_STRING, "HELLO",
            "confidence", G_TYPE_DOUBLE, 0.95, NULL));
    out = gst_harness_push_and_pull (hh, in);
    fail_unless (gst_video_frame_map (&vf, &info, out, GST_MAP_READ));
    /* below the corner, ending at the frame's right edge, so starting left
     * of the corner (x 285 is outside the quadrilateral) */
    fail_unless (!is_untouched (&vf, OCR_W - 1, 4));
    fail_unless (!is_untouched (&vf, 285, 4));
    fail_unless (!is_untouched (&vf, 285, 10));
    gst_video_frame_unmap (&vf);
    gst_buffer_unref (out);
    gst_harness_teardown (hh);
  }
}

GST_END_TEST;

/* Texts read on the whole frame (scheme=ctc without regions: ROIs covering
 * the frame with only a `text` parameter) are listed top left, not drawn
 * as a box around the frame. */
GST_START_TEST (test_roioverlay_whole_frame_text)
{
  GstHarness *hh = overlay_harness ("roioverlay thickness=2", "RGB");
  GstVideoInfo info;
  GstBuffer *in = ocr_frame ("RGB", &info), *out;
  GstVideoFrame vf;
  GstVideoRegionOfInterestMeta *roi;
  guint k;

  for (k = 0; k < 2; k++) {
    roi = gst_buffer_add_video_region_of_interest_meta (in, "text", 0, 0,
        OCR_W, OCR_H);
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("text", "text", G_TYPE_STRING,
            k ? "second line" : "first line", "confidence", G_TYPE_DOUBLE,
            0.9, "model-id", G_TYPE_STRING, "rec", NULL));
  }
  out = gst_harness_push_and_pull (hh, in);
  fail_unless (gst_video_frame_map (&vf, &info, out, GST_MAP_READ));
  fail_unless (!is_untouched (&vf, 1, 1));
  fail_unless (!is_untouched (&vf, 1, 20), "second label");
  fail_unless (is_untouched (&vf, OCR_W - 1, OCR_H - 1), "frame outlined");
  fail_unless (is_untouched (&vf, OCR_W - 1, 1), "frame outlined");
  gst_video_frame_unmap (&vf);
  gst_buffer_unref (out);
  gst_harness_teardown (hh);
}

GST_END_TEST;

static void
count_rotated_box_warnings (GstDebugCategory * category, GstDebugLevel level,
    const gchar * file, const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer user_data)
{
  const gchar *m = gst_debug_message_get (message);

  if (level == GST_LEVEL_WARNING &&
      g_str_equal (gst_debug_category_get_name (category), "roioverlay") &&
      m && strstr (m, "rotated-box"))
    g_atomic_int_inc ((gint *) user_data);
}

static GstStructure *
rotated_box_with_points (GValue * pts)
{
  GstStructure *s = gst_structure_new_empty ("rotated-box");

  if (pts)
    gst_structure_take_value (s, "points", pts);
  return s;
}

/* Malformed `rotated-box` parameters (3 points, a point of one number, NaN
 * or infinity, strings, numbers instead of pairs, `points` not an array or
 * missing): the
 * axis-aligned box is drawn instead, with one warning for the stream. */
GST_START_TEST (test_roioverlay_malformed_rotated_box)
{
  GstHarness *hh = overlay_harness ("roioverlay thickness=2 "
      "draw-labels=false", "RGB");
  gdouble p[8];
  guint b[4], k;
  gint warnings = 0;

  tilted_rect (160, 130, 160, 50, 20, p);
  points_bounds (p, 4, b);
  gst_debug_set_threshold_for_name ("roioverlay", GST_LEVEL_WARNING);
  gst_debug_add_log_function (count_rotated_box_warnings, &warnings, NULL);
  for (k = 0; k < 8; k++) {
    GstVideoInfo info;
    GstBuffer *in = ocr_frame ("RGB", &info), *out;
    GstVideoFrame vf;
    GstStructure *rb = NULL;
    GValue pts = G_VALUE_INIT, pt = G_VALUE_INIT, v = G_VALUE_INIT;
    guint j, c;

    switch (k) {
      case 0:                  /* three corners */
        rb = rotated_box_param (p, 3);
        break;
      case 1:                  /* a point of one number */
      case 2:                  /* NaN */
      case 3:                  /* infinity */
        rb = rotated_box_param (p, 4);
        g_value_init (&pt, GST_TYPE_ARRAY);
        g_value_init (&v, G_TYPE_DOUBLE);
        g_value_set_double (&v, k == 2 ? NAN : k == 3 ? INFINITY : 1.0);
        gst_value_array_append_and_take_value (&pt, &v);
        if (k != 1) {
          g_value_init (&v, G_TYPE_DOUBLE);
          g_value_set_double (&v, 100.0);
          gst_value_array_append_and_take_value (&pt, &v);
        }
        g_value_init (&pts, GST_TYPE_ARRAY);
        for (j = 0; j < 4; j++) {
          if (j == 1)
            gst_value_array_append_value (&pts, &pt);
          else
            gst_value_array_append_value (&pts,
                gst_value_array_get_value (gst_structure_get_value (rb,
                        "points"), j));
        }
        g_value_unset (&pt);
        gst_structure_take_value (rb, "points", &pts);
        break;
      case 4:                  /* strings (GstValueArrays are of one type) */
      case 5:                  /* four numbers, not pairs */
        g_value_init (&pts, GST_TYPE_ARRAY);
        for (j = 0; j < 4; j++) {
          if (k == 4) {
            g_value_init (&pt, GST_TYPE_ARRAY);
            for (c = 0; c < 2; c++) {
              g_value_init (&v, G_TYPE_STRING);
              g_value_set_string (&v, c ? "top" : "left");
              gst_value_array_append_and_take_value (&pt, &v);
            }
          } else {
            g_value_init (&pt, G_TYPE_DOUBLE);
            g_value_set_double (&pt, p[j]);
          }
          gst_value_array_append_and_take_value (&pts, &pt);
        }
        rb = rotated_box_with_points (&pts);
        break;
      case 6:                  /* not an array */
        g_value_init (&pts, G_TYPE_STRING);
        g_value_set_string (&pts, "< < 1, 2 > >");
        rb = rotated_box_with_points (&pts);
        break;
      default:                 /* no points */
        rb = rotated_box_with_points (NULL);
        break;
    }
    add_text_roi (in, b, rb);
    out = gst_harness_push_and_pull (hh, in);
    fail_unless (out != NULL);
    fail_unless (gst_video_frame_map (&vf, &info, out, GST_MAP_READ));
    /* the box's corners drawn, the quadrilateral's top edge not */
    fail_unless (is_box_color (&vf, b[0], b[1]), "case %u: no box", k);
    fail_unless (is_box_color (&vf, b[0] + b[2] - 1, b[1] + b[3] - 1),
        "case %u: no box", k);
    fail_unless (is_untouched (&vf, (gint) ((p[0] + p[2]) / 2),
            (gint) ((p[1] + p[3]) / 2)), "case %u: quadrilateral", k);
    gst_video_frame_unmap (&vf);
    gst_buffer_unref (out);
  }
  gst_debug_remove_log_function_by_data (&warnings);
#ifndef GST_DISABLE_GST_DEBUG
  fail_unless_equals_int (g_atomic_int_get (&warnings), 1);
#endif
  gst_harness_teardown (hh);
}

GST_END_TEST;

/* Quadrilaterals far larger than the frame, or outside it, are clipped:
 * an edge of a 2e6-pixel one crosses the frame and is drawn; one of 1e30
 * pixels, one beside the frame and a fallback box near G_MAXUINT draw
 * nothing in the frame (and their labels stay inside it). */
GST_START_TEST (test_roioverlay_huge_polygon)
{
  const gchar *formats[] = { "RGB", "I420" };
  const gdouble big[8] = { -1e6, 50, 1e6, 60, 1e6, 1e6, -1e6, 1e6 };
  const gdouble huge[8] = { -1e30, -1e30, 1e30, -1e30, 1e30, 1e30,
    -1e30, 1e30
  };
  const gdouble beside[8] = { 1000, 10, 1100, 10, 1100, 50, 1000, 50 };
  const guint whole[4] = { 0, 0, OCR_W, OCR_H };
  const guint far[4] = { G_MAXUINT - 10, G_MAXUINT - 10, 100, 100 };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (formats); i++) {
    GstHarness *hh = overlay_harness ("roioverlay thickness=2", formats[i]);
    GstVideoInfo info;
    GstBuffer *in = ocr_frame (formats[i], &info), *out;
    GstVideoFrame vf;
    GstVideoRegionOfInterestMeta *roi;
    GValue pts = G_VALUE_INIT;

    add_text_roi (in, whole, rotated_box_param (big, 4));
    roi = add_text_roi (in, whole, rotated_box_param (huge, 4));
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("text", "text", G_TYPE_STRING, "huge",
            "confidence", G_TYPE_DOUBLE, 0.5, NULL));
    add_text_roi (in, whole, rotated_box_param (beside, 4));
    g_value_init (&pts, G_TYPE_INT);
    add_text_roi (in, far, rotated_box_with_points (&pts));
    out = gst_harness_push_and_pull (hh, in);
    fail_unless (out != NULL);
    fail_unless (gst_video_frame_map (&vf, &info, out, GST_MAP_READ));
    /* the top edge, y = 55 at x = 160 */
    fail_unless (is_box_color (&vf, 160, 55), "%s edge", formats[i]);
    fail_unless (is_box_color (&vf, 300, 55), "%s edge", formats[i]);
    fail_unless (is_untouched (&vf, 160, 40), "%s above", formats[i]);
    fail_unless (is_untouched (&vf, 160, 120), "%s inside", formats[i]);
    fail_unless (is_untouched (&vf, OCR_W - 1, OCR_H - 1), "%s corner",
        formats[i]);
    gst_video_frame_unmap (&vf);
    gst_buffer_unref (out);
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
  tcase_add_test (tc, test_geometry_letterbox);
  tcase_add_test (tc, test_geometry_crop);
  tcase_add_test (tc, test_blazeface_back_geometry);
  tcase_add_test (tc, test_unaccountable_layout_error);
  tcase_add_test (tc, test_unique_roi_ids);
  tcase_add_test (tc, test_classify_in_regions);
  tcase_add_test (tc, test_detection_in_regions);
  tcase_add_test (tc, test_malformed_tensors_error);
  tcase_add_test (tc, test_no_meta_passes);
  tcase_add_test (tc, test_missing_labels_file_fails_start);
  tcase_add_test (tc, test_special_files_fail_start);
  tcase_add_test (tc, test_roioverlay_formats);
  tcase_add_test (tc, test_roioverlay_clear_layer);
  tcase_add_test (tc, test_roioverlay_labelled_region);
  tcase_add_test (tc, test_roioverlay_lying_video_meta);
  tcase_add_test (tc, test_roioverlay_rotated_box);
  tcase_add_test (tc, test_roioverlay_rotated_box_translucent);
  tcase_add_test (tc, test_roioverlay_text_label);
  tcase_add_test (tc, test_roioverlay_whole_frame_text);
  tcase_add_test (tc, test_roioverlay_malformed_rotated_box);
  tcase_add_test (tc, test_roioverlay_huge_polygon);
  return s;
}

GST_CHECK_MAIN (decoders);
