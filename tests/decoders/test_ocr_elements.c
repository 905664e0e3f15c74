/* test_ocr_elements.c - gst-check tests of tensordecoder's OCR schemes.
 *
 * scheme=dbnet: a probability map with a planted text blob, carried with
 * the geometry onnxinfer records (the frame stretched into the map), must
 * give one "text" ROI in frame pixels with its `rotated-box`; scheme=ctc:
 * recogniser outputs on two regions label those regions (`text`
 * parameter), on the whole frame they become a ROI covering it; a missing
 * dictionary and a tensor of the wrong class count are clear errors.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "gstonnxtensormeta.h"

/* ---- tensors (as test_elements.c) ---------------------------------------- */

#include "element_helpers.h"
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

/* A dictionary file: a, b, 中 -> classes blank, a, b, 中, space (C = 5). */
static gchar *
write_dictionary (void)
{
  gchar *path = NULL;
  gint fd = g_file_open_tmp ("ocr-dict-XXXXXX.txt", &path, NULL);
  const gchar body[] = "a\nb\n\xe4\xb8\xad\n";

  fail_unless (fd >= 0);
  fail_unless (write (fd, body, sizeof body - 1) == (gssize) (sizeof body - 1));
  close (fd);
  return path;
}

/* [1,T,5] one-hot rows for the given class indices */
static void
ctc_rows (gfloat * p, const gint * idx, gint t)
{
  gint s, k;

  for (s = 0; s < t; s++)
    for (k = 0; k < 5; k++)
      p[s * 5 + k] = k == idx[s] ? 0.9f : 0.025f;
}

/* A 640x480 frame stretched into a 128x96 map (scale 0.2): the 40x20 blob
 * at x 20..59, y 30..49 gives the rectangle 39x19 around (39.5, 39.5),
 * unclipped by 2 * 39*19*1.5/116 = 19.16 to 58.16 x 38.16; in the frame
 * (x5): center (197.5, 197.5), 290.8 x 190.8. */
GST_START_TEST (test_dbnet_frame)
{
  GstBus *bus;
  GstHarness *hh = decoder_harness ("tensordecoder scheme=dbnet", 640, 480,
      &bus);
  static gfloat map[96 * 128];
  TensorSpec spec = { "sigmoid_0.tmp_0", 4, {1, 1, 96, 128}, map };
  GstOnnxTensorGeometry g = geometry (640, 480, 128, 96, 0, 0, 640, 480,
      0.2, 0.2, 0, 0);
  GstBuffer *in, *out;
  GstVideoRegionOfInterestMeta *roi;
  GstStructure *det, *rb;
  GstMessage *m;
  const GValue *pts;
  gdouble v, cx, cy, w, h, angle;
  guint count;
  gint x, y;

  memset (map, 0, sizeof map);
  for (y = 30; y <= 49; y++)
    for (x = 20; x <= 59; x++)
      map[y * 128 + x] = 0.9f;
  in = new_frame (640 * 480 * 3);
  add_tensors (in, "det", -1, &spec, 1, &g);
  out = gst_harness_push_and_pull (hh, in);
  fail_unless_equals_int (n_rois (out), 1);
  roi = gst_buffer_get_video_region_of_interest_meta_id (out, 1);
  fail_unless (roi != NULL);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), "text");
  fail_unless_equals_int (roi->parent_id, -1);
  fail_unless (abs ((gint) roi->x - 52) <= 3 && abs ((gint) roi->w - 291) <= 5,
      "x %u w %u", roi->x, roi->w);
  fail_unless (abs ((gint) roi->y - 102) <= 3 && abs ((gint) roi->h - 191) <= 5,
      "y %u h %u", roi->y, roi->h);
  det = gst_video_region_of_interest_meta_get_param (roi, "detection");
  fail_unless (det != NULL);
  fail_unless (gst_structure_get_double (det, "confidence", &v) &&
      fabs (v - 0.9) < 1e-3);
  rb = gst_video_region_of_interest_meta_get_param (roi, "rotated-box");
  fail_unless (rb != NULL);
  fail_unless (gst_structure_get_double (rb, "cx", &cx) &&
      gst_structure_get_double (rb, "cy", &cy) &&
      gst_structure_get_double (rb, "width", &w) &&
      gst_structure_get_double (rb, "height", &h) &&
      gst_structure_get_double (rb, "angle", &angle));
  fail_unless (fabs (cx - 197.5) < 3 && fabs (cy - 197.5) < 3, "%g %g", cx, cy);
  fail_unless (fabs (w - 290.8) < 5 && fabs (h - 190.8) < 5, "%g %g", w, h);
  fail_unless (fabs (angle) < 0.5, "angle %g", angle);
  pts = gst_structure_get_value (rb, "points");
  fail_unless (pts && gst_value_array_get_size (pts) == 4);
  fail_unless_equals_int (gst_value_array_get_size (gst_value_array_get_value
          (pts, 0)), 2);
  gst_buffer_unref (out);

  m = pop_element_message (bus, "tensordecoder");
  fail_unless (m != NULL);
  fail_unless (gst_structure_get_uint (gst_message_get_structure (m), "count",
          &count) && count == 1);
  fail_unless_equals_string (gst_structure_get_string
      (gst_message_get_structure (m), "scheme"), "dbnet");
  gst_message_unref (m);
  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);
}

GST_END_TEST;

GST_START_TEST (test_ctc_regions)
{
  GstBus *bus;
  gchar *dict = write_dictionary ();
  gchar *desc = g_strdup_printf ("tensordecoder scheme=ctc model-id=rec "
      "labels-file=%s", dict);
  GstHarness *hh = decoder_harness (desc, 640, 480, &bus);
  static gfloat r1[6 * 5], r2[6 * 5];
  static const gint i1[6] = { 1, 1, 0, 1, 2, 0 };       /* "aab" */
  static const gint i2[6] = { 3, 3, 4, 3, 0, 0 };       /* "中 中" */
  TensorSpec s1 = { "softmax", 3, {1, 6, 5}, r1 };
  TensorSpec s2 = { "softmax", 3, {1, 6, 5}, r2 };
  GstOnnxTensorGeometry g = geometry (640, 480, 48, 24, 10, 10, 96, 48, 0.5,
      0.5, 0, 0);
  GstBuffer *in, *out;
  GstVideoRegionOfInterestMeta *roi;
  GstStructure *ts;
  GstMessage *m;
  const GstStructure *ms;
  const GValue *labels;
  gdouble conf;
  guint count;

  ctc_rows (r1, i1, 6);
  ctc_rows (r2, i2, 6);
  in = new_frame (640 * 480 * 3);
  roi = gst_buffer_add_video_region_of_interest_meta (in, "text", 10, 10, 96,
      48);
  roi->id = 1;
  roi = gst_buffer_add_video_region_of_interest_meta (in, "text", 100, 200,
      96, 48);
  roi->id = 2;
  add_tensors (in, "rec", 1, &s1, 1, &g);
  add_tensors (in, "rec", 2, &s2, 1, &g);
  out = gst_harness_push_and_pull (hh, in);
  fail_unless_equals_int (n_rois (out), 2);
  ts = gst_video_region_of_interest_meta_get_param (roi_by_id (out, 1),
      "text");
  fail_unless (ts != NULL);
  fail_unless_equals_string (gst_structure_get_string (ts, "text"), "aab");
  fail_unless (gst_structure_get_double (ts, "confidence", &conf) &&
      fabs (conf - 0.9) < 1e-5);
  fail_unless_equals_string (gst_structure_get_string (ts, "model-id"), "rec");
  ts = gst_video_region_of_interest_meta_get_param (roi_by_id (out, 2),
      "text");
  fail_unless (ts != NULL);
  fail_unless_equals_string (gst_structure_get_string (ts, "text"),
      "\xe4\xb8\xad \xe4\xb8\xad");
  gst_buffer_unref (out);

  m = pop_element_message (bus, "tensordecoder");
  fail_unless (m != NULL);
  ms = gst_message_get_structure (m);
  fail_unless (gst_structure_get_uint (ms, "count", &count) && count == 2);
  labels = gst_structure_get_value (ms, "labels");
  fail_unless_equals_string (g_value_get_string (gst_value_array_get_value
          (labels, 0)), "aab");
  fail_unless_equals_int (int_at (ms, "roi-ids", 1), 2);
  gst_message_unref (m);
  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);
  g_unlink (dict);
  g_free (dict);
  g_free (desc);
}

GST_END_TEST;

/* space-threshold: "a", a blank step where the space class has 0.3, "b"
 * reads "a b" with the default (0.1) and "ab" at 1 (PaddleOCR's greedy
 * decoding). */
static gchar *
read_soft_space (const gchar * dict, const gchar * extra)
{
  gchar *desc = g_strdup_printf ("tensordecoder scheme=ctc model-id=rec "
      "labels-file=%s %s", dict, extra);
  GstBus *bus;
  GstHarness *hh = decoder_harness (desc, 640, 480, &bus);
  static gfloat r[3 * 5];
  static const gint idx[3] = { 1, 0, 2 };
  TensorSpec spec = { "softmax", 3, {1, 3, 5}, r };
  GstOnnxTensorGeometry g = geometry (640, 480, 48, 24, 10, 10, 96, 48, 0.5,
      0.5, 0, 0);
  GstVideoRegionOfInterestMeta *roi;
  GstBuffer *in, *out;
  GstStructure *ts;
  gchar *text;

  ctc_rows (r, idx, 3);
  r[1 * 5 + 0] = 0.6f;          /* blank */
  r[1 * 5 + 4] = 0.3f;          /* space, second */
  r[1 * 5 + 1] = r[1 * 5 + 2] = r[1 * 5 + 3] = 0.1f / 3;
  in = new_frame (640 * 480 * 3);
  roi = gst_buffer_add_video_region_of_interest_meta (in, "text", 10, 10, 96,
      48);
  roi->id = 1;
  add_tensors (in, "rec", 1, &spec, 1, &g);
  out = gst_harness_push_and_pull (hh, in);
  ts = gst_video_region_of_interest_meta_get_param (roi_by_id (out, 1),
      "text");
  fail_unless (ts != NULL);
  text = g_strdup (gst_structure_get_string (ts, "text"));
  gst_buffer_unref (out);
  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);
  g_free (desc);
  return text;
}

GST_START_TEST (test_ctc_space_threshold)
{
  gchar *dict = write_dictionary ();
  GstElement *e = gst_element_factory_make ("tensordecoder", NULL);
  gfloat t = 0;
  gchar *text;

  g_object_get (e, "space-threshold", &t, NULL);
  fail_unless (fabs (t - 0.1) < 1e-6, "default %g", t);
  gst_object_unref (e);
  text = read_soft_space (dict, "");
  fail_unless_equals_string (text, "a b");
  g_free (text);
  text = read_soft_space (dict, "space-threshold=0.35");
  fail_unless_equals_string (text, "ab");
  g_free (text);
  text = read_soft_space (dict, "space-threshold=1");
  fail_unless_equals_string (text, "ab");
  g_free (text);
  g_unlink (dict);
  g_free (dict);
}

GST_END_TEST;

GST_START_TEST (test_ctc_frame_and_errors)
{
  GstBus *bus;
  gchar *dict = write_dictionary ();
  gchar *desc = g_strdup_printf ("tensordecoder scheme=ctc labels-file=%s",
      dict);
  GstHarness *hh = decoder_harness (desc, 320, 48, &bus);
  static gfloat r[4 * 5], bad[4 * 6];
  static const gint idx[4] = { 2, 0, 2, 1 };    /* "bba" */
  TensorSpec s = { "softmax", 3, {1, 4, 5}, r };
  TensorSpec sb = { "softmax", 3, {1, 4, 6}, bad };
  GstBuffer *out;
  GstVideoRegionOfInterestMeta *roi;
  GstStructure *ts;
  GstMessage *m;
  GError *err = NULL;
  GstElement *e;

  ctc_rows (r, idx, 4);
  out = gst_harness_push_and_pull (hh, frame_with_tensors (320 * 48 * 3, &s,
          1));
  fail_unless_equals_int (n_rois (out), 1);
  roi = roi_by_id (out, 1);
  fail_unless (roi && roi->x == 0 && roi->y == 0 && roi->w == 320 &&
      roi->h == 48);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), "text");
  ts = gst_video_region_of_interest_meta_get_param (roi, "text");
  fail_unless (ts != NULL);
  fail_unless_equals_string (gst_structure_get_string (ts, "text"), "bba");
  gst_buffer_unref (out);

  /* 6 classes for a dictionary of 3: an error naming both */
  memset (bad, 0, sizeof bad);
  fail_unless_equals_int (gst_harness_push (hh,
          frame_with_tensors (320 * 48 * 3, &sb, 1)), GST_FLOW_ERROR);
  while ((m = gst_bus_pop (bus)) && GST_MESSAGE_TYPE (m) != GST_MESSAGE_ERROR)
    gst_message_unref (m);
  fail_unless (m != NULL);
  gst_message_parse_error (m, &err, NULL);
  fail_unless (strstr (err->message, "ctc") != NULL &&
      strstr (err->message, "needs 5") != NULL, "%s", err->message);
  g_clear_error (&err);
  gst_message_unref (m);
  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);

  /* no dictionary: the start fails, saying what is missing */
  e = gst_element_factory_make ("tensordecoder", NULL);
  bus = gst_bus_new ();
  gst_util_set_object_arg (G_OBJECT (e), "scheme", "ctc");
  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  while ((m = gst_bus_pop (bus)) && GST_MESSAGE_TYPE (m) != GST_MESSAGE_ERROR)
    gst_message_unref (m);
  fail_unless (m != NULL);
  gst_message_parse_error (m, &err, NULL);
  fail_unless (strstr (err->message, "labels-file") != NULL, "%s",
      err->message);
  g_clear_error (&err);
  gst_message_unref (m);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
  g_unlink (dict);
  g_free (dict);
  g_free (desc);
}

GST_END_TEST;

/* The rotated-box of roi: its angle and corner k. */
static gdouble
rbox_angle (GstVideoRegionOfInterestMeta * roi, gint k, gdouble * x,
    gdouble * y)
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi,
      "rotated-box");
  const GValue *pts, *p;
  gdouble a = 1000.0;

  fail_unless (s != NULL);
  fail_unless (gst_structure_get_double (s, "angle", &a));
  pts = gst_structure_get_value (s, "points");
  fail_unless (pts && gst_value_array_get_size (pts) == 4);
  p = gst_value_array_get_value (pts, (guint) k);
  *x = g_value_get_double (gst_value_array_get_value (p, 0));
  *y = g_value_get_double (gst_value_array_get_value (p, 1));
  return a;
}

static void
add_rotated_box (GstVideoRegionOfInterestMeta * roi, gdouble angle)
{
  GValue pts = G_VALUE_INIT;
  gdouble c[4][2] = { {10, 20}, {110, 30}, {108, 50}, {8, 40} };
  GstStructure *s;
  gint k;

  g_value_init (&pts, GST_TYPE_ARRAY);
  for (k = 0; k < 4; k++) {
    GValue p = G_VALUE_INIT, v = G_VALUE_INIT;
    g_value_init (&p, GST_TYPE_ARRAY);
    g_value_init (&v, G_TYPE_DOUBLE);
    g_value_set_double (&v, c[k][0]);
    gst_value_array_append_value (&p, &v);
    g_value_set_double (&v, c[k][1]);
    gst_value_array_append_value (&p, &v);
    g_value_unset (&v);
    gst_value_array_append_and_take_value (&pts, &p);
  }
  s = gst_structure_new ("rotated-box", "cx", G_TYPE_DOUBLE, 59.0, "cy",
      G_TYPE_DOUBLE, 35.0, "width", G_TYPE_DOUBLE, 100.5, "height",
      G_TYPE_DOUBLE, 20.1, "angle", G_TYPE_DOUBLE, angle, NULL);
  gst_structure_take_value (s, "points", &pts);
  gst_video_region_of_interest_meta_add_param (roi, s);
}

/* scheme=text-direction: an upside-down call >= 0.9 turns the rotated box
 * (angle +-180, corners two places on), a weaker one or a 0-degree call
 * leaves it; a region without a box gets one; bad tensors are an error. */
GST_START_TEST (test_text_direction)
{
  GstBus *bus;
  GstHarness *hh = decoder_harness ("tensordecoder scheme=text-direction "
      "model-id=cls", 320, 240, &bus);
  static const gfloat up[2] = { 0.03f, 0.97f }, weak[2] = { 0.2f, 0.8f },
      upright[2] = { 0.99f, 0.01f }, three[3] = { 0.1f, 0.2f, 0.7f };
  TensorSpec s_up = { "softmax", 2, {1, 2}, up };
  TensorSpec s_weak = { "softmax", 2, {1, 2}, weak };
  TensorSpec s_upright = { "softmax", 2, {1, 2}, upright };
  TensorSpec s_three = { "softmax", 2, {1, 3}, three };
  GstOnnxTensorGeometry g = geometry (320, 240, 192, 48, 8, 20, 102, 30,
      1.0, 1.0, 0, 0);
  GstVideoRegionOfInterestMeta *roi;
  GstBuffer *in, *out;
  GstStructure *d;
  GstMessage *m;
  GError *err = NULL;
  gdouble x, y, conf;
  gboolean turned;
  gint angle;

  in = new_frame (320 * 240 * 3);
  roi = gst_buffer_add_video_region_of_interest_meta (in, "text", 8, 20, 102,
      30);
  roi->id = 1;
  add_rotated_box (roi, 5.7);
  roi = gst_buffer_add_video_region_of_interest_meta (in, "text", 8, 20, 102,
      30);
  roi->id = 2;
  add_rotated_box (roi, 5.7);
  roi = gst_buffer_add_video_region_of_interest_meta (in, "text", 40, 100, 80,
      20);
  roi->id = 3;                  /* no rotated-box: one from the rectangle */
  roi = gst_buffer_add_video_region_of_interest_meta (in, "text", 8, 20, 102,
      30);
  roi->id = 4;
  add_rotated_box (roi, -3.0);
  add_tensors (in, "cls", 1, &s_up, 1, &g);
  add_tensors (in, "cls", 2, &s_weak, 1, &g);
  add_tensors (in, "cls", 3, &s_up, 1, &g);
  add_tensors (in, "cls", 4, &s_upright, 1, &g);
  out = gst_harness_push_and_pull (hh, in);
  fail_unless_equals_int (n_rois (out), 4);

  /* turned: 5.7 - 180, the old bottom-right (108, 50) first */
  roi = roi_by_id (out, 1);
  fail_unless (fabs (rbox_angle (roi, 0, &x, &y) - (5.7 - 180.0)) < 1e-4);
  fail_unless (x == 108 && y == 50, "%f %f", x, y);
  rbox_angle (roi, 2, &x, &y);
  fail_unless (x == 10 && y == 20);
  d = gst_video_region_of_interest_meta_get_param (roi, "text-direction");
  fail_unless (d && gst_structure_get_int (d, "angle", &angle) &&
      angle == 180 && gst_structure_get_boolean (d, "turned", &turned) &&
      turned && gst_structure_get_double (d, "confidence", &conf) &&
      fabs (conf - 0.97) < 1e-6);
  /* 0.8 < 0.9: called 180 but not turned */
  roi = roi_by_id (out, 2);
  fail_unless (fabs (rbox_angle (roi, 0, &x, &y) - 5.7) < 1e-4 && x == 10);
  d = gst_video_region_of_interest_meta_get_param (roi, "text-direction");
  fail_unless (gst_structure_get_int (d, "angle", &angle) && angle == 180 &&
      gst_structure_get_boolean (d, "turned", &turned) && !turned);
  /* no box: the rectangle turned, its bottom-right corner first */
  roi = roi_by_id (out, 3);
  fail_unless (fabs (rbox_angle (roi, 0, &x, &y) - 180.0) < 1e-4);
  fail_unless (x == 120 && y == 120, "%f %f", x, y);
  /* upright, -3 degrees kept */
  roi = roi_by_id (out, 4);
  fail_unless (fabs (rbox_angle (roi, 0, &x, &y) + 3.0) < 1e-4);
  d = gst_video_region_of_interest_meta_get_param (roi, "text-direction");
  fail_unless (gst_structure_get_int (d, "angle", &angle) && angle == 0);
  gst_buffer_unref (out);

  /* three scores a region: an error saying what was expected */
  in = new_frame (320 * 240 * 3);
  roi = gst_buffer_add_video_region_of_interest_meta (in, "text", 8, 20, 102,
      30);
  roi->id = 1;
  add_tensors (in, "cls", 1, &s_three, 1, &g);
  fail_unless_equals_int (gst_harness_push (hh, in), GST_FLOW_ERROR);
  while ((m = gst_bus_pop (bus)) && GST_MESSAGE_TYPE (m) != GST_MESSAGE_ERROR)
    gst_message_unref (m);
  fail_unless (m != NULL);
  gst_message_parse_error (m, &err, NULL);
  fail_unless (strstr (err->message, "text-direction") != NULL &&
      strstr (err->message, "two float scores") != NULL, "%s", err->message);
  g_clear_error (&err);
  gst_message_unref (m);
  gst_element_set_bus (hh->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (hh);
}

GST_END_TEST;

static Suite *
ocr_suite (void)
{
  Suite *s = suite_create ("tensordecoder-ocr");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_dbnet_frame);
  tcase_add_test (tc, test_text_direction);
  tcase_add_test (tc, test_ctc_regions);
  tcase_add_test (tc, test_ctc_frame_and_errors);
  tcase_add_test (tc, test_ctc_space_threshold);
  return s;
}

GST_CHECK_MAIN (ocr);
