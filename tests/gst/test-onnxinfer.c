/* test-onnxinfer.c - the onnxinfer element: properties, errors, negotiation,
 * pre-processing, zero-copy input, inference-interval, cascades, lifetime of
 * the outputs, and real models against the runtime and nn-run.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <glib/gstdio.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include "onnxinfer-check.h"

#define TIMEOUT (30 * GST_SECOND)

/* ---- helpers ------------------------------------------------------------- */

static GstElement *
launch (const gchar * desc)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);

  fail_unless (p != NULL && err == NULL, "parse '%s': %s", desc,
      err ? err->message : "?");
  return p;
}

static void
stop_and_unref (GstElement * pipeline)
{
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (pipeline);
}

/* Deterministic pixel bytes. */
static guint8
pix (gint x, gint y, gint c, gint seed)
{
  return (guint8) (x * 37 + y * 101 + c * 59 + seed * 17 + 3);
}

/* A frame for @info; with @extra_stride > 0 each row gets that many padding
 * bytes more than the default layout and a GstVideoMeta says so. */
static GstBuffer *
make_frame (const GstVideoInfo * info, gint seed, gint extra_stride)
{
  gint W = GST_VIDEO_INFO_WIDTH (info), H = GST_VIDEO_INFO_HEIGHT (info);
  gint ps = GST_VIDEO_INFO_COMP_PSTRIDE (info, 0);
  gint stride = GST_VIDEO_INFO_PLANE_STRIDE (info, 0) + extra_stride;
  GstBuffer *buf = gst_buffer_new_allocate (NULL, (gsize) stride * H, NULL);
  GstMapInfo map;
  gint x, y, b;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  memset (map.data, 0xA5, map.size);
  for (y = 0; y < H; y++)
    for (x = 0; x < W; x++)
      for (b = 0; b < ps; b++)
        map.data[y * stride + x * ps + b] = pix (x, y, b, seed);
  gst_buffer_unmap (buf, &map);
  if (extra_stride) {
    gsize offset[GST_VIDEO_MAX_PLANES] = { 0 };
    gint strides[GST_VIDEO_MAX_PLANES] = { stride };
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_INFO_FORMAT (info), W, H, 1, offset, strides);
  }
  GST_BUFFER_PTS (buf) = seed * GST_SECOND / 30;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  return buf;
}

/* Expected model input value for channel k (model order) at (x, y). */
static gfloat
expected_input (const GstVideoInfo * info, GstBuffer * frame, gint x, gint y,
    gint k, gboolean bgr, const gfloat * mean, const gfloat * std)
{
  GstVideoFrame vf;
  const GstVideoFormatInfo *fi = info->finfo;
  gint comp;
  guint8 v;

  if (GST_VIDEO_FORMAT_INFO_IS_GRAY (fi))
    comp = 0;
  else if (k < 3)
    comp = bgr ? 2 - k : k;
  else
    comp = 3;
  fail_unless (gst_video_frame_map (&vf, (GstVideoInfo *) info, frame,
          GST_MAP_READ));
  if (comp == 3 && !GST_VIDEO_FORMAT_INFO_HAS_ALPHA (fi))
    v = 255;
  else
    v = ((guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&vf, 0))[y *
        GST_VIDEO_FRAME_PLANE_STRIDE (&vf, 0) + x *
        GST_VIDEO_FRAME_COMP_PSTRIDE (&vf, 0) +
        GST_VIDEO_FRAME_COMP_POFFSET (&vf, comp)];
  gst_video_frame_unmap (&vf);
  return ((gfloat) v - mean[k]) / std[k];
}

static const GstOnnxTensor *
sample_tensor (GstSample * sample, const gchar * element, const gchar * name,
    GstOnnxTensorMeta ** meta_out)
{
  GstBuffer *buf = gst_sample_get_buffer (sample);
  GstOnnxTensorMeta *meta = gst_buffer_get_onnx_tensor_meta (buf, element);
  const GstOnnxTensor *t;

  fail_unless (meta != NULL, "no tensor meta from %s", element);
  t = gst_onnx_tensor_meta_get_by_name (meta, name);
  fail_unless (t != NULL, "no tensor '%s'", name);
  if (meta_out)
    *meta_out = meta;
  return t;
}

/* Log capture, to see which path the element took. */
static GString *captured_log;
static GMutex log_lock;

static void
capture_log (GstDebugCategory * category, GstDebugLevel level,
    const gchar * file, const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer user_data)
{
  if (strcmp (gst_debug_category_get_name (category), "onnxinfer") != 0)
    return;
  g_mutex_lock (&log_lock);
  g_string_append (captured_log, gst_debug_message_get (message));
  g_string_append_c (captured_log, '\n');
  g_mutex_unlock (&log_lock);
}

static void
start_log_capture (void)
{
  captured_log = g_string_new (NULL);
  gst_debug_set_threshold_for_name ("onnxinfer", GST_LEVEL_INFO);
  gst_debug_add_log_function (capture_log, NULL, NULL);
}

static gchar *
stop_log_capture (void)
{
  gst_debug_remove_log_function (capture_log);
  return g_string_free (captured_log, FALSE);
}

/* ---- properties ---------------------------------------------------------- */

GST_START_TEST (test_properties)
{
  GstElement *e = gst_element_factory_make ("onnxinfer", "nn");
  gchar *loc = NULL;
  gint backend = -1, order = -1;
  guint threads = 99, interval = 0, pool = 0;
  GValue arr = G_VALUE_INIT, v = G_VALUE_INIT;
  gchar *s;

  fail_unless (e != NULL);
  g_object_get (e, "model-location", &loc, "backend", &backend,
      "channel-order", &order, "threads", &threads, "inference-interval",
      &interval, "output-pool-size", &pool, NULL);
  fail_unless (loc == NULL);
  fail_unless_equals_int (backend, 0);  /* auto */
  fail_unless_equals_int (order, 0);    /* rgb */
  fail_unless_equals_int (threads, 0);
  fail_unless_equals_int (interval, 1);
  fail_unless_equals_int (pool, 32);
  fail_unless_equals_uint64 (get_u64 (e, "frames-inferred"), 0);
  fail_unless_equals_uint64 (get_u64 (e, "weights-bytes"), 0);

  gst_util_set_object_arg (G_OBJECT (e), "input-mean", "<127.5, 1, 2>");
  gst_util_set_object_arg (G_OBJECT (e), "input-std", "<127.5>");
  gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
  gst_util_set_object_arg (G_OBJECT (e), "channel-order", "bgr");
  g_object_get (e, "input-mean", &s, NULL);
  fail_unless_equals_string (s, "127.5,1,2");
  g_free (s);
  g_object_get (e, "backend", &backend, "channel-order", &order, NULL);
  fail_unless_equals_int (backend, 1);
  fail_unless_equals_int (order, 1);

  /* the forms a shell user types: one number, a comma list, blanks */
  {
    static const struct
    {
      const gchar *in, *out;
    } forms[] = {
      {"127.5", "127.5"}, {"127.5,127.5,127.5", "127.5,127.5,127.5"},
      {"123.675, 116.28, 103.53", "123.675,116.28,103.53"},
      {"0.5 1 2", "0.5,1,2"}, {"<(float)1, (float)2>", "1,2"}, {"", ""},
      {"1,2,3,4,5", "1,2,3,4"},
    };
    guint k;
    for (k = 0; k < G_N_ELEMENTS (forms); k++) {
      gst_util_set_object_arg (G_OBJECT (e), "input-mean", forms[k].in);
      g_object_get (e, "input-mean", &s, NULL);
      fail_unless_equals_string (s, forms[k].out);
      g_free (s);
    }
  }
  /* a GstValueArray, as applications set it with g_object_set_property */
  g_value_init (&arr, GST_TYPE_ARRAY);
  g_value_init (&v, G_TYPE_FLOAT);
  g_value_set_float (&v, 2.5f);
  gst_value_array_append_value (&arr, &v);
  g_value_set_float (&v, 3.0f);
  gst_value_array_append_value (&arr, &v);
  g_object_set_property (G_OBJECT (e), "input-mean", &arr);
  g_value_unset (&arr);
  g_value_unset (&v);
  g_object_get (e, "input-mean", &s, NULL);
  fail_unless_equals_string (s, "2.5,3");
  g_free (s);

  /* std = 0 and junk are refused with a warning, the old value stays. */
  ASSERT_WARNING (gst_util_set_object_arg (G_OBJECT (e), "input-std", "0"));
  ASSERT_WARNING (gst_util_set_object_arg (G_OBJECT (e), "input-std",
          "1,abc"));
  g_object_get (e, "input-std", &s, NULL);
  fail_unless_equals_string (s, "127.5");
  g_free (s);

  gst_object_unref (e);
}

GST_END_TEST;

/* model-location can change in NULL and READY, not in PAUSED/PLAYING. */
GST_START_TEST (test_location_change_refused_when_running)
{
  gchar *m1 = test_model ("relu-f32-nchw-dyn.onnx");
  gchar *m2 = test_model ("cast-u8-nhwc-8x8.onnx");
  gchar *desc = g_strdup_printf ("videotestsrc is-live=true ! "
      "video/x-raw,width=8,height=8 ! onnxinfer name=nn backend=cpu "
      "threads=1 model-location=%s ! fakesink", m1);
  GstElement *p = launch (desc);
  GstElement *nn = gst_bin_get_by_name (GST_BIN (p), "nn");
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *msg;
  gchar *loc;

  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (p, NULL, NULL, TIMEOUT),
      GST_STATE_CHANGE_SUCCESS);
  g_object_set (nn, "model-location", m2, NULL);
  g_object_get (nn, "model-location", &loc, NULL);
  fail_unless_equals_string (loc, m1);
  g_free (loc);
  msg = gst_bus_timed_pop_filtered (bus, TIMEOUT, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  {
    GError *err;
    gst_message_parse_warning (msg, &err, NULL);
    fail_unless (strstr (err->message, "model-location") != NULL);
    g_error_free (err);
  }
  gst_message_unref (msg);

  /* In READY it is taken, and READY->PAUSED loads the new model. */
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  g_object_set (nn, "model-location", m2, NULL);
  g_object_get (nn, "model-location", &loc, NULL);
  fail_unless_equals_string (loc, m2);
  g_free (loc);
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (p, NULL, NULL, TIMEOUT),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR) == NULL);

  gst_object_unref (bus);
  gst_object_unref (nn);
  stop_and_unref (p);
  g_free (desc);
  g_free (m1);
  g_free (m2);
}

GST_END_TEST;

/* ---- errors -------------------------------------------------------------- */

/* NULL->READY must fail with @domain/@code and a message containing all
 * of @needles; nothing is left allocated (the element goes back to NULL). */
static void
check_open_error (const gchar * props, GQuark domain, gint code,
    const gchar * const *needles)
{
  gchar *desc = g_strdup_printf ("videotestsrc ! onnxinfer name=nn %s ! "
      "fakesink", props);
  GstElement *p = launch (desc);
  GstElement *nn = gst_bin_get_by_name (GST_BIN (p), "nn");
  GstMessage *msg;

  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_READY),
      GST_STATE_CHANGE_FAILURE);
  msg = pop_error (p);
  fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (nn));
  assert_error (msg, domain, code, needles);
  gst_message_unref (msg);
  fail_unless_equals_uint64 (get_u64 (nn, "weights-bytes"), 0);
  gst_object_unref (nn);
  stop_and_unref (p);
  g_free (desc);
}

GST_START_TEST (test_error_no_location)
{
  const gchar *needles[] = { "model-location", NULL };
  check_open_error ("", GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
      needles);
}

GST_END_TEST;

GST_START_TEST (test_error_missing_file)
{
  const gchar *needles[] = { "/nonexistent/model.onnx", "does not exist",
    NULL
  };
  check_open_error ("model-location=/nonexistent/model.onnx",
      GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND, needles);
}

GST_END_TEST;

GST_START_TEST (test_error_not_onnx)
{
  gchar *m = test_model ("not-onnx.onnx");
  gchar *props = g_strdup_printf ("model-location=%s backend=cpu", m);
  const gchar *needles[] = { "not-onnx.onnx", "not a valid ONNX model", NULL };

  check_open_error (props, GST_STREAM_ERROR, GST_STREAM_ERROR_WRONG_TYPE,
      needles);
  g_free (props);
  g_free (m);
}

GST_END_TEST;

GST_START_TEST (test_error_unsupported_op)
{
  gchar *m = test_model ("unsupported-op.onnx");
  gchar *props = g_strdup_printf ("model-location=%s backend=cpu", m);
  const gchar *needles[] = { "FrobnicateOp", "frob_node_7", NULL };

  check_open_error (props, GST_STREAM_ERROR, GST_STREAM_ERROR_CODEC_NOT_FOUND,
      needles);
  g_free (props);
  g_free (m);
}

GST_END_TEST;

GST_START_TEST (test_error_two_inputs)
{
  gchar *m = test_model ("two-inputs.onnx");
  gchar *props = g_strdup_printf ("model-location=%s backend=cpu", m);
  const gchar *needles[] = { "2 required inputs", "'left'", "'right'",
    "exactly one image input", NULL
  };

  check_open_error (props, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT, needles);
  g_free (props);
  g_free (m);
}

GST_END_TEST;

GST_START_TEST (test_error_not_an_image)
{
  gchar *m = test_model ("not-an-image.onnx");
  gchar *props = g_strdup_printf ("model-location=%s backend=cpu", m);
  const gchar *needles[] = { "'ids'", "not an image input", "int64", NULL };

  check_open_error (props, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT, needles);
  g_free (props);
  g_free (m);
}

GST_END_TEST;

GST_START_TEST (test_error_no_vulkan_device)
{
  gchar *m = test_model ("relu-f32-nchw-dyn.onnx");
  gchar *props = g_strdup_printf ("model-location=%s backend=vulkan", m);
  const gchar *needles[] = { "backend=vulkan", "backend=cpu", NULL };

  /* Hide every Vulkan driver from the loader (this test runs in its own
   * process). */
  g_setenv ("VK_ICD_FILENAMES", "/nonexistent/no-driver.json", TRUE);
  g_setenv ("VK_DRIVER_FILES", "/nonexistent/no-driver.json", TRUE);
  check_open_error (props, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
      needles);
  g_free (props);
  g_free (m);
}

GST_END_TEST;

/* backend=auto without a Vulkan device falls back to the CPU and runs. */
GST_START_TEST (test_auto_backend_falls_back_to_cpu)
{
  gchar *m = test_model ("relu-f32-nchw-dyn.onnx");
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=2 ! "
      "video/x-raw,width=8,height=8 ! onnxinfer name=nn backend=auto "
      "threads=1 model-location=%s ! fakesink", m);
  GstElement *p;
  GstMessage *msg;
  gchar *log;

  g_setenv ("VK_ICD_FILENAMES", "/nonexistent/no-driver.json", TRUE);
  g_setenv ("VK_DRIVER_FILES", "/nonexistent/no-driver.json", TRUE);
  start_log_capture ();
  p = launch (desc);
  msg = run_pipeline (p, TIMEOUT);
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  log = stop_log_capture ();
  fail_unless (strstr (log, "backend=auto: using the CPU") != NULL, "%s", log);
  g_free (log);
  stop_and_unref (p);
  g_free (desc);
  g_free (m);
}

GST_END_TEST;

/* ---- negotiation --------------------------------------------------------- */

/* Upstream insists on a format the element cannot read: it says why. */
GST_START_TEST (test_caps_mismatch_error)
{
  gchar *m = test_model ("relu-f32-nhwc-6x4.onnx");
  gchar *desc = g_strdup_printf ("appsrc name=src format=time caps="
      "video/x-raw,format=GRAY16_LE,width=320,height=240,framerate=30/1 ! "
      "onnxinfer name=nn backend=cpu threads=1 model-location=%s ! fakesink",
      m);
  GstElement *p = launch (desc);
  GstElement *src = gst_bin_get_by_name (GST_BIN (p), "src");
  GstElement *nn = gst_bin_get_by_name (GST_BIN (p), "nn");
  GstVideoInfo info;
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *msg;
  const gchar *needles[] = { "GRAY16_LE", "NV12", "I420", "'videoconvert'",
    NULL
  };

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_GRAY16_LE, 320, 240);
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  gst_app_src_push_buffer (GST_APP_SRC (src), make_frame (&info, 0, 0));
  msg = gst_bus_timed_pop_filtered (bus, TIMEOUT, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (nn),
      "error from %s, not from onnxinfer", GST_OBJECT_NAME (GST_MESSAGE_SRC
          (msg)));
  assert_error (msg, GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION, needles);
  gst_message_unref (msg);
  fail_unless_equals_uint64 (get_u64 (nn, "frames-inferred"), 0);

  gst_object_unref (bus);
  gst_object_unref (src);
  gst_object_unref (nn);
  stop_and_unref (p);
  g_free (desc);
  g_free (m);
}

GST_END_TEST;

/* A capsfilter with a format the element cannot read: gst-launch refuses
 * to link, naming the caps (no pipeline that runs and then hangs). */
GST_START_TEST (test_caps_mismatch_capsfilter)
{
  gchar *m = test_model ("relu-f32-nhwc-6x4.onnx");
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=3 ! "
      "video/x-raw,format=Y444,width=320,height=240 ! "
      "onnxinfer name=nn backend=cpu threads=1 model-location=%s ! fakesink",
      m);
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);

  fail_unless (err != NULL, "Y444 linked");
  g_print ("  %s\n", err->message);
  fail_unless (strstr (err->message, "Y444") != NULL, "%s", err->message);
  g_error_free (err);
  if (p)
    gst_object_unref (p);
  g_free (desc);
  g_free (m);
}

GST_END_TEST;

/* Any size and format goes straight in and passes through untouched; the
 * tensors have the model's size and the geometry says how it was mapped. */
GST_START_TEST (test_negotiates_model_size)
{
  gchar *m = test_model ("relu-f32-nhwc-6x4.onnx");
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=3 ! "
      "video/x-raw,format=I420,width=320,height=240 ! "
      "onnxinfer name=nn backend=cpu threads=1 "
      "model-location=%s ! appsink name=sink sync=false", m);
  GstElement *p = launch (desc);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  GstSample *sample;
  GstStructure *s;
  gint w = 0, h = 0;
  const GstOnnxTensor *t;
  GstOnnxTensorMeta *meta;

  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), TIMEOUT);
  fail_unless (sample != NULL);
  s = gst_caps_get_structure (gst_sample_get_caps (sample), 0);
  gst_structure_get_int (s, "width", &w);
  gst_structure_get_int (s, "height", &h);
  fail_unless_equals_int (w, 320);
  fail_unless_equals_int (h, 240);
  fail_unless_equals_string (gst_structure_get_string (s, "format"), "I420");
  t = sample_tensor (sample, "nn", "y", &meta);
  fail_unless_equals_int (t->n_dims, 4);
  fail_unless_equals_int (t->dims[1], 4);
  fail_unless_equals_int (t->dims[2], 6);
  fail_unless_equals_int (t->dims[3], 3);
  fail_unless_equals_int (meta->roi_id, -1);
  fail_unless_equals_int (meta->geometry.frame_width, 320);
  fail_unless_equals_int (meta->geometry.frame_height, 240);
  fail_unless_equals_int (meta->geometry.input_width, 6);
  fail_unless_equals_int (meta->geometry.input_height, 4);
  fail_unless_equals_float (meta->geometry.scale_x, 6.0 / 320);
  fail_unless_equals_float (meta->geometry.scale_y, 4.0 / 240);
  fail_unless_equals_float (meta->geometry.offset_x, 0.0);
  gst_sample_unref (sample);
  gst_object_unref (sink);
  stop_and_unref (p);
  g_free (desc);
  g_free (m);
}

GST_END_TEST;

/* ---- pre-processing ------------------------------------------------------ */

typedef struct
{
  const gchar *model;
  gboolean nchw;
  gint channels;
} ModelDesc;

static const ModelDesc relu_nchw = { "relu-f32-nchw-dyn.onnx", TRUE, 3 };
static const ModelDesc relu_nhwc = { "relu-f32-nhwc-6x4.onnx", FALSE, 3 };
static const ModelDesc relu_gray = { "relu-f32-gray-dyn.onnx", TRUE, 1 };

/* Push frames of @format/@W x @H through a Relu model with mean/std and
 * compare the output (= the model input, clamped at 0) with what the
 * pre-processing must produce. */
static void
check_conversion (const ModelDesc * md, GstVideoFormat format, gint W, gint H,
    gboolean bgr, gint extra_stride)
{
  static const gfloat mean[3] = { 0.0f, 0.5f, 1.0f };
  static const gfloat std[3] = { 1.0f, 2.0f, 4.0f };
  static const gfloat mean1[3] = { 1.0f, 1.0f, 1.0f };
  static const gfloat std1[3] = { 2.0f, 2.0f, 2.0f };
  const gfloat *mn = md->channels == 3 ? mean : mean1;
  const gfloat *sd = md->channels == 3 ? std : std1;
  gchar *m = test_model (md->model);
  GstVideoInfo info;
  GstCaps *caps;
  gchar *caps_str, *desc;
  GstElement *p, *src, *sink;
  gint f, x, y, k;

  gst_video_info_set_format (&info, format, W, H);
  caps = gst_video_info_to_caps (&info);
  gst_caps_set_simple (caps, "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
  caps_str = gst_caps_to_string (caps);
  /* dynamic models get the frame's own size (else it would be rounded to
   * a multiple of 32): the tensor is the frame, pixel for pixel */
  desc = g_strdup_printf ("appsrc name=src format=time caps=\"%s\" ! "
      "onnxinfer name=nn backend=cpu threads=1 model-location=%s "
      "input-width=%d input-height=%d "
      "channel-order=%s input-mean=\"%s\" input-std=\"%s\" ! "
      "appsink name=sink sync=false", caps_str, m,
      g_str_has_suffix (md->model, "dyn.onnx") ? W : 0,
      g_str_has_suffix (md->model, "dyn.onnx") ? H : 0, bgr ? "bgr" : "rgb",
      md->channels == 3 ? "<0, 0.5, 1>" : "<1>",
      md->channels == 3 ? "<1, 2, 4>" : "<2>");
  p = launch (desc);
  src = gst_bin_get_by_name (GST_BIN (p), "src");
  sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);

  /* Two frames: the first run learns the outputs, the second writes them
   * straight into pooled memory. */
  for (f = 0; f < 2; f++) {
    GstBuffer *frame = make_frame (&info, f, extra_stride);
    GstSample *sample;
    const GstOnnxTensor *t;
    const gfloat *out;
    gint bad = 0;

    gst_app_src_push_buffer (GST_APP_SRC (src), gst_buffer_ref (frame));
    sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), TIMEOUT);
    fail_unless (sample != NULL, "no output for %s %dx%d",
        gst_video_format_to_string (format), W, H);
    t = sample_tensor (sample, "nn", "y", NULL);
    fail_unless_equals_int (t->data_type, GST_ONNX_TENSOR_DATA_TYPE_FLOAT32);
    fail_unless_equals_int (gst_onnx_tensor_get_n_elements (t),
        W * H * md->channels);
    out = t->data;
    for (y = 0; y < H; y++)
      for (x = 0; x < W; x++)
        for (k = 0; k < md->channels; k++) {
          gfloat want = MAX (0.0f, expected_input (&info, frame, x, y, k, bgr,
                  mn, sd));
          gsize idx = md->nchw ? ((gsize) k * H + y) * W + x :
              ((gsize) y * W + x) * md->channels + k;
          /* 1:1 resampling is exact; only the order of the float
           * normalisation may differ by an ulp */
          if (fabsf (out[idx] - want) > 1e-5f * MAX (1.0f, fabsf (want)) &&
              bad++ < 5)
            g_print ("  %s %dx%d %s: (%d,%d,c%d) got %g want %g\n",
                gst_video_format_to_string (format), W, H, md->model, x, y,
                k, out[idx], want);
        }
    fail_unless_equals_int (bad, 0);
    gst_sample_unref (sample);
    gst_buffer_unref (frame);
  }

  gst_object_unref (src);
  gst_object_unref (sink);
  stop_and_unref (p);
  gst_caps_unref (caps);
  g_free (caps_str);
  g_free (desc);
  g_free (m);
}

GST_START_TEST (test_convert_rgb_family_nchw)
{
  static const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_RGB,
    GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA,
    GST_VIDEO_FORMAT_RGBx, GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_GRAY8
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (formats); i++) {
    /* Odd sizes: rows are padded to 4 bytes by the default layout. */
    check_conversion (&relu_nchw, formats[i], 5, 3, FALSE, 0);
    check_conversion (&relu_nchw, formats[i], 7, 2, TRUE, 0);
    /* Explicit strides from a GstVideoMeta. */
    check_conversion (&relu_nchw, formats[i], 4, 3, FALSE, 12);
  }
}

GST_END_TEST;

GST_START_TEST (test_convert_rgb_family_nhwc)
{
  static const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_RGB,
    GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA,
    GST_VIDEO_FORMAT_RGBx, GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_GRAY8
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (formats); i++) {
    check_conversion (&relu_nhwc, formats[i], 6, 4, FALSE, 0);
    check_conversion (&relu_nhwc, formats[i], 6, 4, TRUE, 8);
  }
}

GST_END_TEST;

GST_START_TEST (test_convert_gray_model)
{
  check_conversion (&relu_gray, GST_VIDEO_FORMAT_GRAY8, 7, 3, FALSE, 0);
  check_conversion (&relu_gray, GST_VIDEO_FORMAT_GRAY8, 16, 9, FALSE, 5);
}

GST_END_TEST;

/* uint8 NHWC RGB: the frame is bound as the input (no conversion); the
 * model casts it to float, so the output is the pixels.  BGR frames and
 * padded rows take the conversion path and give the same result. */
static void
check_u8 (const gchar * model, gboolean nchw, GstVideoFormat format,
    gint extra_stride, gboolean expect_zero_copy)
{
  gchar *m = test_model (model);
  GstVideoInfo info;
  GstCaps *caps;
  gchar *caps_str, *desc, *log;
  GstElement *p, *src, *sink;
  gint f, x, y, k;
  static const gfloat zero[3] = { 0, 0, 0 }, one[3] = { 1, 1, 1 };

  gst_video_info_set_format (&info, format, 8, 8);
  caps = gst_video_info_to_caps (&info);
  gst_caps_set_simple (caps, "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
  caps_str = gst_caps_to_string (caps);
  desc = g_strdup_printf ("appsrc name=src format=time caps=\"%s\" ! "
      "onnxinfer name=nn backend=cpu threads=1 model-location=%s ! "
      "appsink name=sink sync=false", caps_str, m);
  start_log_capture ();
  p = launch (desc);
  src = gst_bin_get_by_name (GST_BIN (p), "src");
  sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);

  for (f = 0; f < 3; f++) {
    GstBuffer *frame = make_frame (&info, f, extra_stride);
    GstSample *sample;
    const GstOnnxTensor *t;
    const gfloat *out;
    GstOnnxTensorMeta *meta;

    gst_app_src_push_buffer (GST_APP_SRC (src), gst_buffer_ref (frame));
    sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), TIMEOUT);
    fail_unless (sample != NULL);
    t = sample_tensor (sample, "nn", "y", &meta);
    out = t->data;
    for (y = 0; y < 8; y++)
      for (x = 0; x < 8; x++)
        for (k = 0; k < 3; k++) {
          gsize idx = nchw ? ((gsize) k * 8 + y) * 8 + x : (gsize) ((y * 8 + x) * 3 + k);
          fail_unless_equals_float (out[idx], expected_input (&info, frame, x,
                  y, k, FALSE, zero, one));
        }
    if (meta->n_tensors > 1) {
      const GstOnnxTensor *z = gst_onnx_tensor_meta_get_by_name (meta, "z");
      fail_unless (z != NULL);
      fail_unless (memcmp (z->data, t->data, t->size) == 0);
    }
    gst_sample_unref (sample);
    gst_buffer_unref (frame);
  }
  stop_and_unref (p);
  log = stop_log_capture ();
  if (expect_zero_copy)
    fail_unless (strstr (log, "(zero-copy)") != NULL, "no zero-copy: %s", log);
  else
    fail_unless (strstr (log, "(zero-copy)") == NULL || extra_stride,
        "unexpected zero-copy: %s", log);
  g_free (log);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_caps_unref (caps);
  g_free (caps_str);
  g_free (desc);
  g_free (m);
}

GST_START_TEST (test_zero_copy_u8_nhwc)
{
  check_u8 ("cast-u8-nhwc-8x8.onnx", FALSE, GST_VIDEO_FORMAT_RGB, 0, TRUE);
  /* Padded rows: same caps, but each frame falls back to converting. */
  check_u8 ("cast-u8-nhwc-8x8.onnx", FALSE, GST_VIDEO_FORMAT_RGB, 8, TRUE);
  check_u8 ("cast-u8-nhwc-8x8.onnx", FALSE, GST_VIDEO_FORMAT_BGR, 0, FALSE);
  check_u8 ("cast-u8-nhwc-8x8.onnx", FALSE, GST_VIDEO_FORMAT_RGBx, 0, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_u8_nchw_two_outputs)
{
  check_u8 ("cast-u8-nchw-8x8.onnx", TRUE, GST_VIDEO_FORMAT_RGB, 0, FALSE);
  check_u8 ("cast-u8-nchw-8x8.onnx", TRUE, GST_VIDEO_FORMAT_BGRA, 0, FALSE);
}

GST_END_TEST;

/* ---- interval, cascade, lifetime ----------------------------------------- */

typedef struct
{
  guint frames;
  guint fresh;
  guint reused;
  guint64 last_id;
  gboolean ok;
  guint n_metas_bad;
  guint expected_metas;
} MetaCount;

static GstPadProbeReturn
count_metas (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  MetaCount *mc = user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstOnnxTensorMeta *meta = gst_buffer_get_onnx_tensor_meta (buf, "nn");

  if (gst_buffer_get_n_onnx_tensor_metas (buf) != mc->expected_metas)
    mc->n_metas_bad++;
  if (meta == NULL) {
    mc->ok = FALSE;
  } else {
    if (meta->reused)
      mc->reused++;
    else
      mc->fresh++;
    /* Frames 0,1,2 carry inference 1, frames 3,4,5 inference 2... */
    if (meta->inference_id != mc->frames / 3 + 1)
      mc->ok = FALSE;
    mc->last_id = meta->inference_id;
  }
  mc->frames++;
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_inference_interval)
{
  gchar *m = test_model ("relu-f32-nchw-dyn.onnx");
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=30 ! "
      "video/x-raw,width=16,height=8 ! onnxinfer name=nn backend=cpu "
      "threads=1 inference-interval=3 model-location=%s ! fakesink name=sink",
      m);
  GstElement *p = launch (desc);
  GstElement *nn = gst_bin_get_by_name (GST_BIN (p), "nn");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  MetaCount mc = { 0, 0, 0, 0, TRUE, 0, 1 };
  GstMessage *msg;

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_metas, &mc, NULL);
  msg = run_pipeline (p, TIMEOUT);
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);

  g_print ("  inference-interval=3: %u frames, frames-inferred=%"
      G_GUINT64_FORMAT ", %u fresh + %u reused metas\n", mc.frames,
      get_u64 (nn, "frames-inferred"), mc.fresh, mc.reused);
  fail_unless_equals_int (mc.frames, 30);
  fail_unless_equals_uint64 (get_u64 (nn, "frames-inferred"), 10);
  fail_unless_equals_int (mc.fresh, 10);
  fail_unless_equals_int (mc.reused, 20);
  fail_unless_equals_uint64 (mc.last_id, 10);
  fail_unless (mc.ok);
  fail_unless_equals_int (mc.n_metas_bad, 0);

  gst_object_unref (pad);
  gst_object_unref (sink);
  gst_object_unref (nn);
  stop_and_unref (p);
  g_free (desc);
  g_free (m);
}

GST_END_TEST;

/* Two onnxinfer in a row: each frame carries one meta per element. */
GST_START_TEST (test_cascade)
{
  gchar *m1 = test_model ("relu-f32-nchw-dyn.onnx");
  gchar *m2 = test_model ("relu-f32-gray-dyn.onnx");
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=12 ! "
      "video/x-raw,width=16,height=8,format=GRAY8 ! "
      "onnxinfer name=nn backend=cpu threads=1 inference-interval=3 "
      "model-location=%s ! onnxinfer name=second backend=cpu threads=1 "
      "model-location=%s ! fakesink name=sink", m1, m2);
  GstElement *p = launch (desc);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  GstElement *nn2 = gst_bin_get_by_name (GST_BIN (p), "second");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  MetaCount mc = { 0, 0, 0, 0, TRUE, 0, 2 };
  GstMessage *msg;

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_metas, &mc, NULL);
  msg = run_pipeline (p, TIMEOUT);
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  fail_unless_equals_int (mc.frames, 12);
  fail_unless_equals_int (mc.n_metas_bad, 0);
  fail_unless (mc.ok);
  fail_unless_equals_uint64 (get_u64 (nn2, "frames-inferred"), 12);

  gst_object_unref (pad);
  gst_object_unref (sink);
  gst_object_unref (nn2);
  stop_and_unref (p);
  g_free (desc);
  g_free (m1);
  g_free (m2);
}

GST_END_TEST;

/* A frame's tensors live as long as the frame: after the element went to
 * NULL (session disposed), a sample pulled before still has its data. */
GST_START_TEST (test_outputs_outlive_session)
{
  gchar *m = test_model ("cast-u8-nhwc-8x8.onnx");
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=5 "
      "pattern=gradient ! video/x-raw,width=8,height=8,format=RGB ! "
      "onnxinfer name=nn backend=cpu threads=1 model-location=%s ! "
      "appsink name=sink sync=false max-buffers=0", m);
  GstElement *p = launch (desc);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  GstSample *samples[5];
  gfloat copy[5][192];
  gint i;

  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  for (i = 0; i < 5; i++) {
    const GstOnnxTensor *t;
    samples[i] = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), TIMEOUT);
    fail_unless (samples[i] != NULL);
    t = sample_tensor (samples[i], "nn", "y", NULL);
    fail_unless_equals_int (t->size, sizeof copy[i]);
    memcpy (copy[i], t->data, t->size);
  }
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  for (i = 0; i < 5; i++) {
    const GstOnnxTensor *t = sample_tensor (samples[i], "nn", "y", NULL);
    fail_unless (memcmp (copy[i], t->data, t->size) == 0);
    gst_sample_unref (samples[i]);
  }
  gst_object_unref (sink);
  gst_object_unref (p);
  g_free (desc);
  g_free (m);
}

GST_END_TEST;

/* Downstream holding every pooled result (an encoder's look-ahead) must not
 * stall the stream: the element allocates beyond the pool and counts it;
 * shutting down meanwhile does not deadlock either. */
GST_START_TEST (test_bounded_pool_shutdown)
{
  gchar *m = test_model ("relu-f32-nchw-dyn.onnx");
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=50 ! "
      "video/x-raw,width=8,height=8 ! onnxinfer name=nn backend=cpu "
      "threads=1 output-pool-size=3 model-location=%s ! "
      "appsink name=sink sync=false max-buffers=0", m);
  GstElement *p = launch (desc);
  GstElement *nn = gst_bin_get_by_name (GST_BIN (p), "nn");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  GstSample *held[5];
  guint64 n = 0;
  gint i;

  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  for (i = 0; i < 5; i++) {
    held[i] = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), TIMEOUT);
    fail_unless (held[i] != NULL, "stalled at frame %d", i);
  }
  /* the appsink queues the rest: every frame still gets inferred */
  for (i = 0; i < 100 && n < 50; i++) {
    g_usleep (G_USEC_PER_SEC / 50);
    n = get_u64 (nn, "frames-inferred");
  }
  g_print ("  output-pool-size=3, downstream holding every result: %"
      G_GUINT64_FORMAT " inferred, %" G_GUINT64_FORMAT " overflow buffers\n",
      n, get_u64 (nn, "pool-overflows"));
  fail_unless_equals_uint64 (n, 50);
  fail_unless (get_u64 (nn, "pool-overflows") >= 40);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  for (i = 0; i < 5; i++)
    gst_sample_unref (held[i]);
  gst_object_unref (nn);
  gst_object_unref (sink);
  gst_object_unref (p);
  g_free (desc);
  g_free (m);
}

GST_END_TEST;

/* ---- real models vs the runtime and nn-run ------------------------------- */

/* Minimal protobuf for TensorProto (dims=1, data_type=2, name=8,
 * raw_data=9). */
static void
pb_varint (GByteArray * a, guint64 v)
{
  do {
    guint8 b = v & 0x7f;
    v >>= 7;
    if (v)
      b |= 0x80;
    g_byte_array_append (a, &b, 1);
  } while (v);
}

static gboolean
write_tensor_pb (const gchar * path, const gchar * name, const nn_tensor * t)
{
  GByteArray *a = g_byte_array_new ();
  gboolean ok;
  gint i;

  for (i = 0; i < t->rank; i++) {
    pb_varint (a, (1 << 3) | 0);
    pb_varint (a, (guint64) t->dims[i]);
  }
  pb_varint (a, (2 << 3) | 0);
  pb_varint (a, (guint64) t->dtype);
  pb_varint (a, (8 << 3) | 2);
  pb_varint (a, strlen (name));
  g_byte_array_append (a, (const guint8 *) name, strlen (name));
  pb_varint (a, (9 << 3) | 2);
  pb_varint (a, t->nbytes);
  g_byte_array_append (a, t->data, t->nbytes);
  ok = g_file_set_contents (path, (const gchar *) a->data, a->len, NULL);
  g_byte_array_unref (a);
  return ok;
}

static gboolean
pb_read_varint (const guint8 ** p, const guint8 * end, guint64 * v)
{
  gint shift = 0;
  *v = 0;
  while (*p < end && shift < 64) {
    guint8 b = *(*p)++;
    *v |= (guint64) (b & 0x7f) << shift;
    if (!(b & 0x80))
      return TRUE;
    shift += 7;
  }
  return FALSE;
}

/* Reads raw_data (or float_data) of a saved TensorProto as floats. */
static gfloat *
read_tensor_pb (const gchar * path, gsize * n_out)
{
  gchar *contents;
  gsize len;
  const guint8 *p, *end;
  gfloat *out = NULL;

  *n_out = 0;
  if (!g_file_get_contents (path, &contents, &len, NULL))
    return NULL;
  p = (const guint8 *) contents;
  end = p + len;
  while (p < end) {
    guint64 key, v;
    if (!pb_read_varint (&p, end, &key))
      break;
    switch (key & 7) {
      case 0:
        pb_read_varint (&p, end, &v);
        break;
      case 1:
        p += 8;
        break;
      case 5:
        p += 4;
        break;
      case 2:
        pb_read_varint (&p, end, &v);
        if ((key >> 3) == 9 || (key >> 3) == 4) {
          g_free (out);
          out = g_memdup2 (p, v);
          *n_out = v / sizeof (gfloat);
        }
        p += v;
        break;
      default:
        p = end;
        break;
    }
  }
  g_free (contents);
  return out;
}

typedef struct
{
  const gchar *case_name;
  const gchar *image;           /* in the media dir; NULL: videotestsrc */
  gint width, height;
  gboolean nchw;
  const gchar *crop;            /* optional videocrop properties */
} RealCase;

/* Runs the element on a real image, rebuilds the same input tensor from the
 * frame the element saw, runs it through a separate session and through
 * nn-run, and compares every output. */
static void
check_real_case (const RealCase * rc)
{
  gchar *model = real_case_model (rc->case_name);
  gchar *image = rc->image ? media_file (rc->image) : NULL;
  gchar *src_desc, *desc, *tmpdir;
  GstElement *p, *sink;
  GstSample *sample;
  GstBuffer *buf;
  GstVideoInfo vinfo;
  GstVideoFrame vf;
  GstOnnxTensorMeta *meta;
  nn_session *s = NULL;
  nn_options opt;
  nn_error err;
  nn_tensor *in;
  int64_t dims[4];
  gint x, y, c, i, n_in, n_out;

  SKIP_IF_NULL (model, rc->case_name);
  if (rc->image && image == NULL)
    g_print ("  %s: %s missing (run tools/fetch-media.sh); using "
        "videotestsrc\n", rc->case_name, rc->image);
  if (image)
    src_desc = g_strdup_printf ("filesrc location=%s ! pngdec%s%s", image,
        rc->crop ? " ! videocrop " : "", rc->crop ? rc->crop : "");
  else
    src_desc = g_strdup ("videotestsrc num-buffers=1 pattern=smpte");
  desc = g_strdup_printf ("%s ! videoconvert ! videoscale ! "
      "video/x-raw,format=RGB,width=%d,height=%d ! onnxinfer name=nn "
      "backend=cpu threads=1 input-mean=\"<127.5>\" input-std=\"<127.5>\" "
      "input-width=%d input-height=%d "
      "model-location=%s ! appsink name=sink sync=false", src_desc,
      rc->width, rc->height, rc->width, rc->height, model);
  p = launch (desc);
  sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), TIMEOUT);
  fail_unless (sample != NULL);
  buf = gst_sample_get_buffer (sample);
  meta = gst_buffer_get_onnx_tensor_meta (buf, "nn");
  fail_unless (meta != NULL);

  /* The reference input, from the frame as the element received it. */
  nn_options_init (&opt);
  opt.backend = NN_BACKEND_CPU;
  opt.threads = 1;
  fail_unless_equals_int (nn_session_create_from_file (model, &opt, &s,
          &err), NN_OK);
  nn_session_io_count (s, &n_in, &n_out);
  fail_unless_equals_int (n_out, (gint) meta->n_tensors);
  dims[0] = 1;
  if (rc->nchw) {
    dims[1] = 3;
    dims[2] = rc->height;
    dims[3] = rc->width;
  } else {
    dims[1] = rc->height;
    dims[2] = rc->width;
    dims[3] = 3;
  }
  fail_unless_equals_int (nn_session_set_input_shape (s, 0, 4, dims), NN_OK);
  fail_unless_equals_int (nn_session_input_tensor (s, 0, &in), NN_OK);
  fail_unless (gst_video_info_from_caps (&vinfo, gst_sample_get_caps
          (sample)));
  fail_unless (gst_video_frame_map (&vf, &vinfo, buf, GST_MAP_READ));
  for (y = 0; y < rc->height; y++)
    for (x = 0; x < rc->width; x++)
      for (c = 0; c < 3; c++) {
        guint8 v = ((guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&vf, 0))[y *
            GST_VIDEO_FRAME_PLANE_STRIDE (&vf, 0) + x * 3 + c];
        gsize idx = rc->nchw ? ((gsize) c * rc->height + y) * rc->width + x :
            ((gsize) y * rc->width + x) * 3 + c;
        ((gfloat *) in->data)[idx] = ((gfloat) v - 127.5f) / 127.5f;
      }
  gst_video_frame_unmap (&vf);

  /* Same tensor through nn-run. */
  tmpdir = g_dir_make_tmp ("onnxinfer-XXXXXX", NULL);
  fail_unless (tmpdir != NULL);
  {
    nn_io_info ii;
    gchar *inpath = g_build_filename (tmpdir, "input.pb", NULL);
    gchar *outdir = g_build_filename (tmpdir, "out", NULL);
    const gchar *nn_run = g_getenv ("ONNXINFER_NN_RUN");
    gchar *cmd, *spec;
    gint status = -1;

    nn_session_input_info (s, 0, &ii);
    fail_unless (write_tensor_pb (inpath, ii.name, in));
    spec = g_strdup_printf ("%s=%s", ii.name, inpath);
    cmd = g_strdup_printf ("'%s' '%s' --backend cpu --threads 1 --input '%s' "
        "--save-outputs '%s'", nn_run ? nn_run : NN_RUN_PATH, model, spec,
        outdir);
    fail_unless (g_spawn_command_line_sync (cmd, NULL, NULL, &status, NULL));
    fail_unless (WIFEXITED (status) && WEXITSTATUS (status) == 0,
        "'%s' failed", cmd);

    fail_unless_equals_int (nn_session_run (s), NN_OK);
    for (i = 0; i < n_out; i++) {
      const nn_tensor *ref;
      nn_io_info oi;
      const GstOnnxTensor *t;
      gchar *opath = g_strdup_printf ("%s/output_%d.pb", outdir, i);
      gsize n_file = 0;
      gfloat *file = read_tensor_pb (opath, &n_file);
      gdouble diff_rt = 0, diff_file = 0;
      gint64 j, n;

      nn_session_output_info (s, i, &oi);
      fail_unless_equals_int (nn_session_output_tensor (s, i, &ref), NN_OK);
      t = gst_onnx_tensor_meta_get_by_name (meta, oi.name);
      fail_unless (t != NULL, "no output '%s' in the meta", oi.name);
      n = gst_onnx_tensor_get_n_elements (t);
      fail_unless_equals_int (n, nn_tensor_numel (ref));
      fail_unless (file != NULL && (gint64) n_file == n, "%s", opath);
      /* relative to max(1, |x|): the element normalises the pixels in its
       * own order of float operations (an ulp apart), which a deep
       * network carries into large logits */
      for (j = 0; j < n; j++) {
        gfloat a = ((const gfloat *) t->data)[j];
        gfloat r = ((const gfloat *) ref->data)[j];
        diff_rt = MAX (diff_rt, fabs (a - r) / MAX (1.0, fabs (r)));
        diff_file = MAX (diff_file, fabs (a - file[j]) / MAX (1.0,
                fabs (file[j])));
      }
      g_print ("  %s output %s (%" G_GINT64_FORMAT " values): max |element - "
          "session| = %g, max |element - nn-run| = %g\n", rc->case_name,
          oi.name, n, diff_rt, diff_file);
      fail_unless (diff_rt <= 1e-4);
      fail_unless (diff_file <= 1e-4);
      g_free (file);
      g_free (opath);
    }
    cmd = g_strdup_printf ("rm -rf '%s'", tmpdir);
    g_spawn_command_line_sync (cmd, NULL, NULL, NULL, NULL);
    g_free (cmd);
    g_free (spec);
    g_free (inpath);
    g_free (outdir);
  }
  nn_session_free (s);
  {
    GstElement *nn = gst_bin_get_by_name (GST_BIN (p), "nn");
    fail_unless (get_u64 (nn, "weights-bytes") > 0);
    gst_object_unref (nn);
  }

  gst_sample_unref (sample);
  gst_object_unref (sink);
  stop_and_unref (p);
  g_free (tmpdir);
  g_free (desc);
  g_free (src_desc);
  g_free (model);
  g_free (image);
}

GST_START_TEST (test_real_blazeface)
{
  static const RealCase rc = { "blazeface_front_128", "astronaut.png", 128,
    128, FALSE, NULL
  };
  check_real_case (&rc);
}

GST_END_TEST;

GST_START_TEST (test_real_ppocr_cls)
{
  static const RealCase rc = { "ppocr_mobile_cls", "imageTextN.png", 192, 48,
    TRUE, "top=0 bottom=235 right=170"
  };
  check_real_case (&rc);
}

GST_END_TEST;

/* Statistics are exposed and frames counted. */
GST_START_TEST (test_stats)
{
  gchar *model = real_case_model ("blazeface_front_128");
  gchar *desc;
  GstElement *p, *nn;
  GstMessage *msg;

  SKIP_IF_NULL (model, "blazeface_front_128");
  desc = g_strdup_printf ("videotestsrc num-buffers=4 ! "
      "video/x-raw,width=128,height=128 ! onnxinfer name=nn backend=cpu "
      "threads=1 model-location=%s ! fakesink", model);
  p = launch (desc);
  nn = gst_bin_get_by_name (GST_BIN (p), "nn");
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  g_print ("  READY: weights-bytes=%" G_GUINT64_FORMAT " arena-bytes=%"
      G_GUINT64_FORMAT " peak-bytes=%" G_GUINT64_FORMAT "\n",
      get_u64 (nn, "weights-bytes"), get_u64 (nn, "arena-bytes"),
      get_u64 (nn, "peak-bytes"));
  msg = run_pipeline (p, TIMEOUT);
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  g_print ("  after 4 frames: weights-bytes=%" G_GUINT64_FORMAT
      " arena-bytes=%" G_GUINT64_FORMAT " device-bytes=%" G_GUINT64_FORMAT
      " peak-bytes=%" G_GUINT64_FORMAT " frames-inferred=%" G_GUINT64_FORMAT
      " last-latency-us=%" G_GUINT64_FORMAT "\n", get_u64 (nn,
          "weights-bytes"), get_u64 (nn, "arena-bytes"), get_u64 (nn,
          "device-bytes"), get_u64 (nn, "peak-bytes"), get_u64 (nn,
          "frames-inferred"), get_u64 (nn, "last-latency-us"));
  fail_unless (get_u64 (nn, "weights-bytes") > 0);
  fail_unless (get_u64 (nn, "arena-bytes") > 0);
  fail_unless (get_u64 (nn, "peak-bytes") >= get_u64 (nn, "weights-bytes"));
  fail_unless_equals_uint64 (get_u64 (nn, "frames-inferred"), 4);
  fail_unless (get_u64 (nn, "last-latency-us") > 0);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  /* READY->NULL disposed the session. */
  fail_unless_equals_uint64 (get_u64 (nn, "weights-bytes"), 0);
  fail_unless_equals_uint64 (get_u64 (nn, "peak-bytes"), 0);
  gst_object_unref (nn);
  gst_object_unref (p);
  g_free (desc);
  g_free (model);
}

GST_END_TEST;

/* ---- real video in: YUV, letterbox, regions ------------------------------ */

/* Pushes one frame through "appsrc ! onnxinfer <props> ! appsink" and
 * returns the sample (caller unrefs). */
static GstSample *
infer_one (const gchar * model, const gchar * caps_str, const gchar * props,
    GstBuffer * frame)
{
  gchar *m = test_model (model);
  gchar *desc = g_strdup_printf ("appsrc name=src format=time caps=\"%s\" ! "
      "onnxinfer name=nn backend=cpu threads=1 model-location=%s %s ! "
      "appsink name=sink sync=false", caps_str, m, props);
  GstElement *p = launch (desc);
  GstElement *src = gst_bin_get_by_name (GST_BIN (p), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  GstSample *sample;

  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  gst_app_src_push_buffer (GST_APP_SRC (src), frame);
  sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), TIMEOUT);
  fail_unless (sample != NULL, "no output for %s", desc);
  gst_object_unref (src);
  gst_object_unref (sink);
  stop_and_unref (p);
  g_free (desc);
  g_free (m);
  return sample;
}

/* A solid frame of one YUV colour, in a planar/semi-planar/packed format. */
static GstBuffer *
solid_yuv (const GstVideoInfo * info, guint8 Y, guint8 U, guint8 V)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (info),
      NULL);
  GstVideoFrame f;
  guint c, x, y;

  fail_unless (gst_video_frame_map (&f, (GstVideoInfo *) info, buf,
          GST_MAP_WRITE));
  for (c = 0; c < GST_VIDEO_FRAME_N_COMPONENTS (&f); c++) {
    guint8 val = c == 0 ? Y : c == 1 ? U : V;
    guint8 *d = GST_VIDEO_FRAME_COMP_DATA (&f, c);
    gint st = GST_VIDEO_FRAME_COMP_STRIDE (&f, c);
    gint ps = GST_VIDEO_FRAME_COMP_PSTRIDE (&f, c);
    for (y = 0; y < (guint) GST_VIDEO_FRAME_COMP_HEIGHT (&f, c); y++)
      for (x = 0; x < (guint) GST_VIDEO_FRAME_COMP_WIDTH (&f, c); x++)
        d[y * st + x * ps] = val;
  }
  gst_video_frame_unmap (&f);
  GST_BUFFER_PTS (buf) = 0;
  return buf;
}

/* Decoder output goes straight in: a pure red in BT.601 limited range
 * (Y 81, U 90, V 240) is R 255, G 0, B 0 in every YUV format; the same
 * bytes flagged BT.709 are another colour, so the colorimetry is used. */
GST_START_TEST (test_yuv_formats_direct)
{
  static const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_NV12,
    GST_VIDEO_FORMAT_NV21, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YV12,
    GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY
  };
  guint i, j;

  for (i = 0; i < G_N_ELEMENTS (formats); i++) {
    for (j = 0; j < 2; j++) {
      GstVideoInfo info;
      GstCaps *caps;
      gchar *cs;
      GstSample *sample;
      const GstOnnxTensor *t;
      const gfloat *y;
      gint k;

      gst_video_info_set_format (&info, formats[i], 38, 22);
      gst_video_colorimetry_from_string (&info.colorimetry,
          j == 0 ? "bt601" : "bt709");
      caps = gst_video_info_to_caps (&info);
      gst_caps_set_simple (caps, "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
      cs = gst_caps_to_string (caps);
      sample = infer_one ("relu-f32-nhwc-6x4.onnx", cs, "",
          solid_yuv (&info, 81, 90, 240));
      t = sample_tensor (sample, "nn", "y", NULL);
      y = t->data;
      if (j == 0) {
        for (k = 0; k < 24; k++) {
          fail_unless (fabsf (y[k * 3] - 255.0f) < 1.5f &&
              y[k * 3 + 1] < 1.5f && y[k * 3 + 2] < 1.5f,
              "%s bt601 pixel %d: %g %g %g", gst_video_format_to_string
              (formats[i]), k, y[k * 3], y[k * 3 + 1], y[k * 3 + 2]);
        }
      } else {
        /* BT.709: R = 1.164*65 + 1.793*112 > 255, B = 1.164*65 +
         * 2.112*(-38) < 0, G = 1.16438*65 + 0.21325*38 - 0.53291*112 */
        for (k = 0; k < 24; k++)
          fail_unless (fabsf (y[k * 3] - 255.0f) < 1.5f &&
              fabsf (y[k * 3 + 1] - 24.10f) < 0.6f && y[k * 3 + 2] < 1.5f,
              "%s bt709 pixel %d: %g %g %g", gst_video_format_to_string
              (formats[i]), k, y[k * 3], y[k * 3 + 1], y[k * 3 + 2]);
      }
      gst_sample_unref (sample);
      gst_caps_unref (caps);
      g_free (cs);
    }
  }
  /* mid grey with colour: BT.601 and BT.709 give different green */
  {
    gfloat g[2];
    for (j = 0; j < 2; j++) {
      GstVideoInfo info;
      GstCaps *caps;
      gchar *cs;
      GstSample *sample;
      const GstOnnxTensor *t;

      gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, 16, 16);
      gst_video_colorimetry_from_string (&info.colorimetry,
          j == 0 ? "bt601" : "bt709");
      caps = gst_video_info_to_caps (&info);
      gst_caps_set_simple (caps, "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
      cs = gst_caps_to_string (caps);
      sample = infer_one ("relu-f32-nhwc-6x4.onnx", cs, "",
          solid_yuv (&info, 126, 100, 160));
      t = sample_tensor (sample, "nn", "y", NULL);
      g[j] = ((const gfloat *) t->data)[1];
      gst_sample_unref (sample);
      gst_caps_unref (caps);
      g_free (cs);
    }
    /* G = 1.164 (Y-16) - 0.392 (U-128) - 0.813 (V-128)  (601)
     *   = 1.164 (Y-16) - 0.213 (U-128) - 0.533 (V-128)  (709) */
    g_print ("  NV12 (126,100,160): G bt601 %.2f, bt709 %.2f\n", g[0], g[1]);
    fail_unless (fabsf (g[0] - (1.16438f * 110 - 0.39176f * -28 -
                0.81297f * 32)) < 0.6f);
    fail_unless (fabsf (g[1] - (1.16438f * 110 - 0.21325f * -28 -
                0.53291f * 32)) < 0.6f);
  }
}

GST_END_TEST;

/* 64x16 into the 6x4 model letterboxed: scale 6/64, content 6 x 1.5 rows
 * centred (rows 1.25..2.75: rows 1 and 2 carry the picture), the rest is
 * pad-value; the geometry says so. */
GST_START_TEST (test_letterbox)
{
  GstVideoInfo info;
  GstCaps *caps;
  gchar *cs;
  GstSample *sample;
  GstOnnxTensorMeta *meta;
  const GstOnnxTensor *t;
  const gfloat *y;
  GstBuffer *buf;
  GstMapInfo map;
  gint x;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_GRAY8, 64, 16);
  buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  memset (map.data, 200, map.size);
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = 0;
  caps = gst_video_info_to_caps (&info);
  gst_caps_set_simple (caps, "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
  cs = gst_caps_to_string (caps);
  sample = infer_one ("relu-f32-nhwc-6x4.onnx", cs,
      "scale-mode=letterbox pad-value=7", buf);
  t = sample_tensor (sample, "nn", "y", &meta);
  y = t->data;
  fail_unless_equals_float (meta->geometry.scale_x, 6.0 / 64);
  fail_unless_equals_float (meta->geometry.scale_y, 6.0 / 64);
  fail_unless_equals_float (meta->geometry.offset_x, 0.0);
  fail_unless_equals_float (meta->geometry.offset_y, 1.25);
  for (x = 0; x < 6; x++) {
    fail_unless_equals_float (y[(0 * 6 + x) * 3], 7.0f);
    fail_unless_equals_float (y[(1 * 6 + x) * 3], 200.0f);
    fail_unless_equals_float (y[(2 * 6 + x) * 3 + 2], 200.0f);
    fail_unless_equals_float (y[(3 * 6 + x) * 3 + 1], 7.0f);
  }
  gst_sample_unref (sample);
  gst_caps_unref (caps);
  g_free (cs);
}

GST_END_TEST;

#define RW 80
#define RH 60

static guint8
region_pix (gint x, gint y, gint c)
{
  return (guint8) ((x * 7 + y * 13 + c * 50) % 256);
}

/* Mean of channel c over the rectangle, the image extended by its edges
 * (what the converter samples for a region reaching outside the frame). */
static gdouble
region_mean (gint rx, gint ry, gint rw, gint rh, gint c)
{
  gdouble s = 0;
  gint x, y;
  for (y = ry; y < ry + rh; y++)
    for (x = rx; x < rx + rw; x++)
      s += region_pix (CLAMP (x, 0, RW - 1), CLAMP (y, 0, RH - 1), c);
  return s / ((gdouble) rw * rh);
}

typedef struct
{
  const gchar *label;
  guint id, x, y, w, h;
} TestRoi;

static const TestRoi test_rois[] = {
  {"face", 4, 0, 0, 32, 32},
  {"car", 5, 10, 10, 40, 40},
  {"face", 9, 40, 20, 48, 48},  /* reaches past the right/bottom edges */
  {"face", 11, 30, 5, 17, 35},
  {"face", 12, 1, 1, 5, 5},     /* below roi-min-size */
};

/* The model's output on every region is the mean colour of the region's
 * crop: checks which regions ran, that each result carries its region's id
 * and that each crop is the right pixels.  With a dynamic batch, max-batch
 * 1, 2 and 3 (3 regions: one full and one partial batch, or one). */
static void
check_regions (const gchar * model, guint max_batch)
{
  GstVideoInfo info;
  GstCaps *caps;
  gchar *cs, *props;
  GstSample *sample;
  GstBuffer *buf, *out;
  GstMapInfo map;
  gint x, y, c;
  guint i, n_metas = 0;
  gpointer state = NULL;
  GstMeta *gm;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, RW, RH);
  buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (y = 0; y < RH; y++)
    for (x = 0; x < RW; x++)
      for (c = 0; c < 3; c++)
        map.data[y * GST_VIDEO_INFO_PLANE_STRIDE (&info, 0) + x * 3 + c] =
            region_pix (x, y, c);
  gst_buffer_unmap (buf, &map);
  for (i = 0; i < G_N_ELEMENTS (test_rois); i++) {
    const TestRoi *r = &test_rois[i];
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_add_video_region_of_interest_meta (buf, r->label, r->x,
        r->y, r->w, r->h);
    roi->id = (gint) r->id;
  }
  GST_BUFFER_PTS (buf) = 0;
  caps = gst_video_info_to_caps (&info);
  gst_caps_set_simple (caps, "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
  cs = gst_caps_to_string (caps);
  props = g_strdup_printf ("inference-region=roi-list object-class=\"face, "
      "person\" roi-min-size=16 max-batch=%u", max_batch);
  sample = infer_one (model, cs, props, buf);
  out = gst_sample_get_buffer (sample);

  while ((gm = gst_buffer_iterate_meta_filtered (out, &state,
              GST_ONNX_TENSOR_META_API_TYPE)))
    n_metas++;
  fail_unless_equals_int (n_metas, 3);
  fail_unless (gst_buffer_get_onnx_tensor_meta_for_roi (out, "nn", 5) == NULL,
      "the car was inferred");
  fail_unless (gst_buffer_get_onnx_tensor_meta_for_roi (out, "nn", 12) ==
      NULL, "the small region was inferred");
  fail_unless (gst_buffer_get_onnx_tensor_meta_for_roi (out, "nn", -1) ==
      NULL, "a whole-frame result in roi-list mode");
  for (i = 0; i < G_N_ELEMENTS (test_rois); i++) {
    const TestRoi *r = &test_rois[i];
    GstOnnxTensorMeta *meta;
    const GstOnnxTensor *t;
    const gfloat *v;

    if (strcmp (r->label, "face") != 0 || r->w < 16)
      continue;
    meta = gst_buffer_get_onnx_tensor_meta_for_roi (out, "nn", (gint) r->id);
    fail_unless (meta != NULL, "no result for region %u", r->id);
    t = gst_onnx_tensor_meta_get_by_name (meta, "y");
    fail_unless (t != NULL);
    fail_unless_equals_int (t->n_dims, 4);
    fail_unless_equals_int (t->dims[0], 1);
    fail_unless_equals_int (t->dims[1], 3);
    v = t->data;
    fail_unless_equals_float (meta->geometry.src_x, r->x);
    fail_unless_equals_float (meta->geometry.src_width, r->w);
    fail_unless_equals_float (meta->geometry.scale_y, 16.0 / r->h);
    for (c = 0; c < 3; c++) {
      gdouble want = region_mean (r->x, r->y, r->w, r->h, c);
      fail_unless (fabs (v[c] - want) < 1e-3,
          "region %u channel %d (max-batch %u): mean %g, expected %g", r->id,
          c, max_batch, v[c], want);
    }
  }
  gst_sample_unref (sample);
  gst_caps_unref (caps);
  g_free (cs);
  g_free (props);
}

GST_START_TEST (test_regions)
{
  check_regions ("mean-colour-b1.onnx", 1);
  check_regions ("mean-colour-dyn.onnx", 1);
  check_regions ("mean-colour-dyn.onnx", 2);
  check_regions ("mean-colour-dyn.onnx", 3);
}

GST_END_TEST;

/* The real cascade: BlazeFace on Megamind.avi straight from the decoder,
 * then a second model in region mode on every face: once per face on every
 * frame, each result attached to its face (roi_id, geometry = the face's
 * box), none for other regions, none left over. */
GST_START_TEST (test_real_cascade)
{
  gchar *video = media_file ("Megamind.avi");
  gchar *front = media_file ("models/blazeface/face_detection_front_128x128_barracuda.onnx");
  gchar *m2 = test_model ("mean-colour-b1.onnx");
  gchar *desc;
  GstElement *p, *sink, *nn2;
  guint frames = 0, faces = 0, max_faces = 0;
  GstSample *sample;

  SKIP_IF_NULL (video, "Megamind.avi");
  SKIP_IF_NULL (front, "the BlazeFace front model");
  if (!gst_registry_check_feature_version (gst_registry_get (), "avdec_mpeg4",
          1, 0, 0)) {
    g_print ("  SKIP: no avdec_mpeg4 (gstreamer1.0-libav) for Megamind.avi\n");
    goto done;
  }
  desc = g_strdup_printf ("filesrc location=%s ! decodebin ! "
      "onnxinfer name=faces backend=cpu threads=1 model-location=%s "
      "scale-mode=letterbox input-mean=\"<127.5>\" input-std=\"<127.5>\" ! "
      "tensordecoder model-id=faces scheme=blazeface post-messages=false ! "
      "onnxinfer name=second backend=cpu threads=1 model-location=%s "
      "inference-region=roi-list object-class=face ! "
      "appsink name=sink sync=false", video, front, m2);
  p = launch (desc);
  sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  nn2 = gst_bin_get_by_name (GST_BIN (p), "second");
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
              TIMEOUT))) {
    GstBuffer *buf = gst_sample_get_buffer (sample);
    GstVideoRegionOfInterestMeta *roi;
    GstOnnxTensorMeta *tm;
    gpointer state = NULL;
    guint n_faces = 0, n_results = 0;

    while ((roi = (GstVideoRegionOfInterestMeta *)
            gst_buffer_iterate_meta_filtered (buf, &state,
                GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
      fail_unless_equals_string (g_quark_to_string (roi->roi_type), "face");
      tm = gst_buffer_get_onnx_tensor_meta_for_roi (buf, "second", roi->id);
      fail_unless (tm != NULL, "frame %u: no result for face %d", frames,
          roi->id);
      fail_unless_equals_float (tm->geometry.src_x, roi->x);
      fail_unless_equals_float (tm->geometry.src_y, roi->y);
      fail_unless_equals_float (tm->geometry.src_width, roi->w);
      fail_unless_equals_float (tm->geometry.src_height, roi->h);
      fail_unless_equals_int (tm->geometry.frame_width, 720);
      fail_unless_equals_int (tm->n_tensors, 1);
      n_faces++;
    }
    state = NULL;
    while ((tm = (GstOnnxTensorMeta *) gst_buffer_iterate_meta_filtered (buf,
                &state, GST_ONNX_TENSOR_META_API_TYPE)))
      if (tm->model_id == g_quark_from_string ("second"))
        n_results++;
    fail_unless_equals_int (n_results, n_faces);
    faces += n_faces;
    max_faces = MAX (max_faces, n_faces);
    frames++;
    gst_sample_unref (sample);
  }
  g_print ("  cascade on Megamind.avi: %u frames, %u faces (up to %u a "
      "frame), second model ran %" G_GUINT64_FORMAT " times\n", frames, faces,
      max_faces, get_u64 (nn2, "frames-inferred"));
  fail_unless_equals_int (frames, 270);
  fail_unless (faces >= 269);
  fail_unless_equals_uint64 (get_u64 (nn2, "frames-inferred"), faces);
  gst_object_unref (sink);
  gst_object_unref (nn2);
  stop_and_unref (p);
  g_free (desc);
done:
  g_free (video);
  g_free (front);
  g_free (m2);
}

GST_END_TEST;

/* input-mean with the wrong number of values: the error says how many it
 * got and how many the model needs. */
GST_START_TEST (test_error_mean_count)
{
  gchar *m = test_model ("relu-f32-nhwc-6x4.onnx");
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=2 ! "
      "video/x-raw,width=16,height=8 ! onnxinfer name=nn backend=cpu "
      "threads=1 model-location=%s input-mean=1,2,3,4,5 ! fakesink", m);
  GstElement *p = launch (desc);
  GstMessage *msg = run_pipeline (p, TIMEOUT);
  const gchar *needles[] = { "input-mean has 5 values", "3 channels", NULL };

  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR);
  assert_error (msg, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS, needles);
  gst_message_unref (msg);
  stop_and_unref (p);
  g_free (desc);
  g_free (m);
}

GST_END_TEST;

/* A run that fails on the second frame (an index out of range that depends
 * on the pixels): the error names the node and says what is wrong, not
 * just NN_ERR_RUNTIME; the first frame's result went through. */
GST_START_TEST (test_error_runtime_message)
{
  gchar *m = test_model ("gather-u8-8x8.onnx");
  gchar *desc = g_strdup_printf ("appsrc name=src format=time caps="
      "video/x-raw,format=RGB,width=8,height=8,framerate=30/1 ! "
      "onnxinfer name=nn backend=cpu threads=1 model-location=%s ! "
      "appsink name=sink sync=false", m);
  GstElement *p = launch (desc);
  GstElement *src = gst_bin_get_by_name (GST_BIN (p), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");
  GstBus *bus = gst_element_get_bus (p);
  const gchar *needles[] = { "lookup_node", "out of range", NULL };
  GstVideoInfo info;
  GstSample *sample;
  GstMessage *msg;
  gint f;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, 8, 8);
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  for (f = 0; f < 3; f++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, 8 * 8 * 3, NULL);
    gst_buffer_memset (buf, 0, f == 2 ? 255 : 3, 8 * 8 * 3);
    GST_BUFFER_PTS (buf) = f * GST_SECOND / 30;
    gst_app_src_push_buffer (GST_APP_SRC (src), buf);
    if (f < 2) {
      const GstOnnxTensor *t;
      sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), TIMEOUT);
      fail_unless (sample != NULL);
      t = sample_tensor (sample, "nn", "y", NULL);
      fail_unless_equals_float (((const gfloat *) t->data)[5], 3.0f);
      gst_sample_unref (sample);
    }
  }
  msg = gst_bus_timed_pop_filtered (bus, TIMEOUT, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  assert_error (msg, GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED, needles);
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_object_unref (src);
  gst_object_unref (sink);
  stop_and_unref (p);
  g_free (desc);
  g_free (m);
}

GST_END_TEST;

/* post-messages summaries of float16 and bfloat16 outputs: real numbers,
 * not NaN. */
GST_START_TEST (test_half_summaries)
{
  gchar *m = test_model ("cast-half-6x4.onnx");
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=1 "
      "pattern=solid-color foreground-color=0xff646464 ! "
      "video/x-raw,format=RGB,width=6,height=4 ! onnxinfer name=nn "
      "backend=cpu threads=1 post-messages=true model-location=%s ! "
      "fakesink", m);
  GstElement *p = launch (desc);
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *msg;
  gboolean seen = FALSE;

  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  while ((msg = gst_bus_timed_pop_filtered (bus, TIMEOUT,
              GST_MESSAGE_ELEMENT | GST_MESSAGE_EOS | GST_MESSAGE_ERROR))) {
    const GstStructure *st = gst_message_get_structure (msg);
    if (GST_MESSAGE_TYPE (msg) != GST_MESSAGE_ELEMENT) {
      gst_message_unref (msg);
      break;
    }
    if (gst_structure_has_name (st, "onnxinfer")) {
      const gchar *h = gst_structure_get_string (st, "output-0");
      const gchar *b = gst_structure_get_string (st, "output-1");
      g_print ("  %s\n  %s\n", h, b);
      fail_unless (strstr (h, "float16") && strstr (h, "min=100 max=100"),
          "%s", h);
      fail_unless (strstr (b, "bfloat16") && strstr (b, "min=100 max=100"),
          "%s", b);
      seen = TRUE;
    }
    gst_message_unref (msg);
  }
  fail_unless (seen);
  gst_object_unref (bus);
  stop_and_unref (p);
  g_free (desc);
  g_free (m);
}

GST_END_TEST;

/* Error paths driven from an application, many times in a row, with the
 * CPUs busy: every failing pipeline reports an error within seconds, and
 * set_state(NULL) from another thread returns (no hang, whatever the
 * error: a missing model, a run-time failure, a FIFO as labels file). */
typedef struct
{
  GstElement *pipeline;
  GMutex lock;
  GCond cond;
  gboolean done;
  GstStateChangeReturn ret;
} NullJob;

static gpointer
null_from_thread (gpointer data)
{
  NullJob *j = data;
  GstStateChangeReturn r = gst_element_set_state (j->pipeline, GST_STATE_NULL);
  g_mutex_lock (&j->lock);
  j->ret = r;
  j->done = TRUE;
  g_cond_signal (&j->cond);
  g_mutex_unlock (&j->lock);
  return NULL;
}

static volatile gint burn_stop;

static gpointer
burn_cpu (gpointer data)
{
  volatile gdouble x = 0;
  while (!g_atomic_int_get (&burn_stop))
    x += 1.0;
  return NULL;
}

GST_START_TEST (test_error_paths_under_load)
{
  gchar *gather = test_model ("gather-u8-8x8.onnx");
  gchar *relu = test_model ("relu-f32-nchw-dyn.onnx");
  gchar *dir = g_dir_make_tmp ("onnxinfer-fifo-XXXXXX", NULL);
  gchar *fifo = g_build_filename (dir, "labels.fifo", NULL);
  gchar *descs[3];
  GThread *burners[2];
  guint round, rounds = 30, c;

  fail_unless (mkfifo (fifo, 0600) == 0);
  descs[0] = g_strdup ("videotestsrc ! onnxinfer backend=cpu "
      "model-location=/nonexistent/model.onnx ! fakesink");
  descs[1] = g_strdup_printf ("videotestsrc pattern=white ! "
      "video/x-raw,format=RGB,width=8,height=8 ! onnxinfer backend=cpu "
      "threads=2 model-location=%s ! fakesink", gather);
  descs[2] = g_strdup_printf ("videotestsrc ! onnxinfer backend=cpu "
      "model-location=%s ! tensordecoder scheme=classify labels-file=%s ! "
      "fakesink", relu, fifo);
  g_atomic_int_set (&burn_stop, 0);
  for (c = 0; c < 2; c++)
    burners[c] = g_thread_new ("burn", burn_cpu, NULL);

  for (round = 0; round < rounds; round++) {
    for (c = 0; c < G_N_ELEMENTS (descs); c++) {
      GstElement *p = launch (descs[c]);
      GstBus *bus = gst_element_get_bus (p);
      GstMessage *msg;
      NullJob j = { p, };
      GThread *t;
      gint64 deadline;

      g_mutex_init (&j.lock);
      g_cond_init (&j.cond);
      gst_element_set_state (p, GST_STATE_PLAYING);
      msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
          GST_MESSAGE_ERROR);
      fail_unless (msg != NULL, "round %u case %u: no error within 10 s",
          round, c);
      if (round == 0) {
        GError *err = NULL;
        gst_message_parse_error (msg, &err, NULL);
        g_print ("  case %u: %s\n", c, err->message);
        g_error_free (err);
      }
      gst_message_unref (msg);
      t = g_thread_new ("null", null_from_thread, &j);
      deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;
      g_mutex_lock (&j.lock);
      while (!j.done)
        if (!g_cond_wait_until (&j.cond, &j.lock, deadline))
          break;
      g_mutex_unlock (&j.lock);
      fail_unless (j.done, "round %u case %u: set_state(NULL) from another "
          "thread did not return within 10 s", round, c);
      fail_unless_equals_int (j.ret, GST_STATE_CHANGE_SUCCESS);
      g_thread_join (t);
      g_mutex_clear (&j.lock);
      g_cond_clear (&j.cond);
      gst_object_unref (bus);
      gst_object_unref (p);
    }
  }
  g_print ("  %u rounds of 3 failing pipelines, CPUs busy: every error within "
      "10 s, every NULL from another thread returned\n", rounds);
  g_atomic_int_set (&burn_stop, 1);
  for (c = 0; c < 2; c++)
    g_thread_join (burners[c]);
  for (c = 0; c < G_N_ELEMENTS (descs); c++)
    g_free (descs[c]);
  g_unlink (fifo);
  g_rmdir (dir);
  g_free (fifo);
  g_free (dir);
  g_free (gather);
  g_free (relu);
}

GST_END_TEST;

static Suite *
onnxinfer_suite (void)
{
  Suite *s = suite_create ("onnxinfer");
  TCase *tc;

  tc = tcase_create ("properties");
  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_location_change_refused_when_running);

  tc = tcase_create ("errors");
  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_error_no_location);
  tcase_add_test (tc, test_error_missing_file);
  tcase_add_test (tc, test_error_not_onnx);
  tcase_add_test (tc, test_error_unsupported_op);
  tcase_add_test (tc, test_error_two_inputs);
  tcase_add_test (tc, test_error_not_an_image);
  tcase_add_test (tc, test_error_no_vulkan_device);
  tcase_add_test (tc, test_auto_backend_falls_back_to_cpu);

  tc = tcase_create ("negotiation");
  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_caps_mismatch_error);
  tcase_add_test (tc, test_caps_mismatch_capsfilter);
  tcase_add_test (tc, test_negotiates_model_size);

  tc = tcase_create ("preprocessing");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_convert_rgb_family_nchw);
  tcase_add_test (tc, test_convert_rgb_family_nhwc);
  tcase_add_test (tc, test_convert_gray_model);
  tcase_add_test (tc, test_zero_copy_u8_nhwc);
  tcase_add_test (tc, test_u8_nchw_two_outputs);

  tc = tcase_create ("streaming");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_inference_interval);
  tcase_add_test (tc, test_cascade);
  tcase_add_test (tc, test_outputs_outlive_session);
  tcase_add_test (tc, test_bounded_pool_shutdown);

  tc = tcase_create ("real-models");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_real_blazeface);
  tcase_add_test (tc, test_real_ppocr_cls);
  tcase_add_test (tc, test_stats);
  tcase_add_test (tc, test_yuv_formats_direct);
  tcase_add_test (tc, test_letterbox);
  tcase_add_test (tc, test_regions);
  tcase_add_test (tc, test_real_cascade);
  tcase_add_test (tc, test_error_mean_count);
  tcase_add_test (tc, test_error_runtime_message);
  tcase_add_test (tc, test_half_summaries);
  tcase_add_test (tc, test_error_paths_under_load);
  return s;
}

int
main (int argc, char **argv)
{
  onnxinfer_check_setup_env ();
  gst_check_init (&argc, &argv);
  return gst_check_run_suite (onnxinfer_suite (), "onnxinfer", __FILE__);
}
