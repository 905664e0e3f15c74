/* consumer.c - an application built against an installed onnxinfer, with
 * nothing but `pkg-config --cflags --libs gstreamer-onnxinfer-1.0` and
 * -O2 -Wall -Wextra -Werror (see test-install.sh).
 *
 *   consumer MODEL
 *
 * MODEL takes a float [1,3,16,16] RGB image and has two outputs: "mean"
 * (GlobalAveragePool, [1,3,1,1]) and "flat" (the same, flattened to [1,3]).
 * The pipeline feeds it a solid colour (R,G,B) = (51,102,153); onnxinfer's
 * default normalisation is none, so both outputs must read 51, 102, 153.
 * The tensors are read twice: with the header's static inline functions
 * (borrowed pointers, valid as long as the buffer) and with the reader
 * library libgstonnxinfermeta-1.0 (a reference-counted snapshot, read again
 * after the pipeline is gone).  Prints what it reads; exits 1 on a mismatch.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <string.h>

#include <gst/gst.h>
#include <gst/onnxinfer/gstonnxtensormeta.h>
#include <gst/onnxinfer/gstonnxinfermeta.h>

static const float expected[3] = { 51.0f, 102.0f, 153.0f };

typedef struct
{
  guint n_buffers;
  guint failures;
  GstOnnxInferResult *kept;     /* first frame's result, read after NULL */
} State;

static void
check (State * st, gboolean ok, const gchar * what)
{
  if (!ok) {
    fprintf (stderr, "consumer: FAIL: %s\n", what);
    st->failures++;
  }
}

static void
check_values (State * st, const gchar * api, const gchar * name,
    const float *v, gsize n)
{
  gsize i;

  printf ("%s: %s =", api, name);
  for (i = 0; i < n; i++)
    printf (" %.3f", v[i]);
  printf ("\n");
  check (st, n == 3, "3 values");
  for (i = 0; i < n && i < 3; i++)
    check (st, v[i] > expected[i] - 0.5f && v[i] < expected[i] + 0.5f,
        "value as expected");
}

/* The header's inline API, on the buffer itself. */
static void
read_inline (State * st, GstBuffer * buf)
{
  GstOnnxTensorMeta *meta = gst_buffer_get_onnx_tensor_meta (buf, "infer");
  const GstOnnxTensor *mean, *flat;

  check (st, gst_buffer_get_n_onnx_tensor_metas (buf) == 1, "one meta");
  check (st, meta != NULL, "meta of 'infer'");
  if (meta == NULL)
    return;
  check (st, meta->roi_id == -1, "whole-frame result");
  check (st, meta->n_tensors == 2, "2 tensors");
  check (st, meta->geometry.frame_width == 16, "geometry frame_width 16");
  mean = gst_onnx_tensor_meta_get_by_name (meta, "mean");
  flat = gst_onnx_tensor_meta_get (meta, 1);
  check (st, mean != NULL && flat != NULL, "tensors 'mean' and #1");
  if (mean == NULL || flat == NULL)
    return;
  check (st, flat->name == g_quark_from_string ("flat"), "#1 is 'flat'");
  check (st, mean->data_type == GST_ONNX_TENSOR_DATA_TYPE_FLOAT32, "float32");
  check (st, mean->n_dims == 4 && mean->dims[0] == 1 && mean->dims[1] == 3 &&
      mean->dims[2] == 1 && mean->dims[3] == 1, "mean is [1,3,1,1]");
  check (st, flat->n_dims == 2 && flat->dims[0] == 1 && flat->dims[1] == 3,
      "flat is [1,3]");
  if (st->n_buffers == 0)
    printf ("inline: %s %s [%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%"
        G_GINT64_FORMAT ",%" G_GINT64_FORMAT "]\n",
        g_quark_to_string (mean->name),
        gst_onnx_tensor_data_type_get_name (mean->data_type),
        mean->dims[0], mean->dims[1], mean->dims[2], mean->dims[3]);
  check_values (st, "inline", "mean", mean->data,
      (gsize) gst_onnx_tensor_get_n_elements (mean));
}

/* The reader library, as the language bindings use it. */
static void
read_result (State * st, GstOnnxInferResult * r, const gchar * api)
{
  GstOnnxInferTensor *t;
  GList *tensors;
  GBytes *data;
  const gint64 *dims;
  guint n_dims;
  gsize size;
  const float *v;

  check (st, strcmp (gst_onnx_infer_result_get_model_id (r), "infer") == 0,
      "model id 'infer'");
  check (st, gst_onnx_infer_result_get_roi_id (r) == -1, "roi id -1");
  check (st, gst_onnx_infer_result_get_n_tensors (r) == 2, "2 tensors");
  tensors = gst_onnx_infer_result_get_tensors (r);
  check (st, g_list_length (tensors) == 2, "tensor list of 2");
  g_list_free_full (tensors, (GDestroyNotify) gst_onnx_infer_tensor_unref);

  t = gst_onnx_infer_result_get_tensor_by_name (r, "flat");
  check (st, t != NULL, "tensor 'flat'");
  if (t == NULL)
    return;
  check (st, strcmp (gst_onnx_infer_tensor_get_data_type (t), "float32") == 0,
      "float32");
  dims = gst_onnx_infer_tensor_get_dims (t, &n_dims);
  check (st, n_dims == 2 && dims[0] == 1 && dims[1] == 3, "flat is [1,3]");
  check (st, gst_onnx_infer_tensor_get_size (t) == 3 * sizeof (float),
      "12 bytes");
  data = gst_onnx_infer_tensor_get_data (t);
  gst_onnx_infer_tensor_unref (t);      /* the GBytes keeps the data alive */
  v = g_bytes_get_data (data, &size);
  check_values (st, api, "flat", v, size / sizeof (float));
  g_bytes_unref (data);
}

static GstPadProbeReturn
probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  State *st = user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstOnnxInferResult *r;

  (void) pad;
  read_inline (st, buf);
  r = gst_onnx_infer_buffer_get_result (buf, NULL, -1);
  check (st, r != NULL, "reader library finds the result");
  if (r) {
    read_result (st, r, "reader");
    if (st->kept == NULL)
      st->kept = r;
    else
      gst_onnx_infer_result_unref (r);
  }
  st->n_buffers++;
  return GST_PAD_PROBE_OK;
}

int
main (int argc, char **argv)
{
  State st = { 0, 0, NULL };
  GError *err = NULL;
  GstElement *pipeline, *sink;
  GstPad *pad;
  GstBus *bus;
  GstMessage *msg;
  GstPlugin *plugin;
  gchar *desc;

  gst_init (&argc, &argv);
  if (argc != 2) {
    fprintf (stderr, "usage: consumer MODEL\n");
    return 2;
  }
  /* Before any onnxinfer element exists the meta type is unknown: the
   * readers say "no result", they do not fail. */
  check (&st, GST_ONNX_TENSOR_META_API_TYPE == 0, "no meta type before load");

  desc = g_strdup_printf ("videotestsrc num-buffers=5 pattern=solid-color "
      "foreground-color=0xff336699 ! video/x-raw,format=RGB,width=16,height=16"
      " ! onnxinfer name=infer backend=cpu model-location=\"%s\" ! "
      "fakesink name=sink", argv[1]);
  pipeline = gst_parse_launch (desc, &err);
  g_free (desc);
  if (pipeline == NULL) {
    fprintf (stderr, "consumer: FAIL: %s\n", err ? err->message : "parse");
    return 1;
  }
  plugin = gst_registry_find_plugin (gst_registry_get (), "onnxinfer");
  if (plugin) {
    printf ("plugin: %s (license %s)\n", gst_plugin_get_filename (plugin),
        gst_plugin_get_license (plugin));
    gst_object_unref (plugin);
  }
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, probe, &st, NULL);
  gst_object_unref (pad);
  gst_object_unref (sink);

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  bus = gst_element_get_bus (pipeline);
  msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (msg == NULL || GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gchar *dbg = NULL;
    if (msg)
      gst_message_parse_error (msg, &err, &dbg);
    fprintf (stderr, "consumer: FAIL: %s (%s)\n",
        err ? err->message : "timeout", dbg ? dbg : "");
    st.failures++;
    g_clear_error (&err);
    g_free (dbg);
  }
  if (msg)
    gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);

  /* The session is disposed and the frames are gone: the snapshot still
   * holds the storage. */
  check (&st, st.kept != NULL, "a result was kept");
  if (st.kept) {
    read_result (&st, st.kept, "after NULL");
    gst_onnx_infer_result_unref (st.kept);
  }
  check (&st, st.n_buffers == 5, "5 buffers");
  printf ("consumer: %u buffers, %u failures\n", st.n_buffers, st.failures);
  return st.failures == 0 ? 0 : 1;
}
