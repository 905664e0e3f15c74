/* test-meta-consumer.c - an application that reads GstOnnxTensorMeta with
 * nothing but the public header and libgstreamer: it does not link with the
 * plugin library (see meson.build) and finds the meta API by name once the
 * plugin is loaded.
 */
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/check/gstcheck.h>

#include "gstonnxtensormeta.h"

GST_START_TEST (test_read_meta_without_linking_the_plugin)
{
  gchar *model = g_build_filename (TEST_MODELS_DIR, "cast-u8-nhwc-8x8.onnx",
      NULL);
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=3 ! "
      "video/x-raw,format=RGB,width=8,height=8 ! onnxinfer name=det "
      "backend=cpu threads=1 model-location=%s ! appsink name=sink "
      "sync=false", model);
  GstElement *p, *sink;
  GstSample *sample;
  GstOnnxTensorMeta *meta;
  const GstOnnxTensor *y;

  /* Not loaded yet: the lookup says so instead of failing. */
  fail_unless (GST_ONNX_TENSOR_META_API_TYPE == 0);

  p = gst_parse_launch (desc, NULL);
  fail_unless (p != NULL);
  fail_unless (GST_ONNX_TENSOR_META_API_TYPE != 0);
  sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 30 * GST_SECOND);
  fail_unless (sample != NULL);

  meta = gst_buffer_get_onnx_tensor_meta (gst_sample_get_buffer (sample),
      "det");
  fail_unless (meta != NULL);
  fail_unless_equals_int (meta->n_tensors, 1);
  y = gst_onnx_tensor_meta_get_by_name (meta, "y");
  fail_unless (y != NULL);
  fail_unless_equals_int (y->data_type, GST_ONNX_TENSOR_DATA_TYPE_FLOAT32);
  fail_unless_equals_int (gst_onnx_tensor_get_n_elements (y), 8 * 8 * 3);
  fail_unless_equals_int (y->size, 8 * 8 * 3 * sizeof (float));
  fail_unless (y->data != NULL);

  gst_sample_unref (sample);
  gst_object_unref (sink);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (p);
  g_free (desc);
  g_free (model);
}

GST_END_TEST;

static Suite *
consumer_suite (void)
{
  Suite *s = suite_create ("meta-consumer");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_read_meta_without_linking_the_plugin);
  return s;
}

GST_CHECK_MAIN (consumer);
