/* test-onnxinfer-soak.c - state cycles with flat memory, and the leaks
 * tracer over a real pipeline.
 *
 * ONNXINFER_SOAK_CYCLES overrides the number of NULL->PLAYING->NULL cycles
 * (default 1000).
 */
#include <stdlib.h>

#include "onnxinfer-check.h"

#define TIMEOUT (60 * GST_SECOND)

/* The model for the real pipelines: BlazeFace when available, else a
 * synthetic one (and a note). */
static gchar *
soak_model (const gchar ** caps)
{
  gchar *m = real_case_model ("blazeface_front_128");
  if (m) {
    *caps = "video/x-raw,width=128,height=128";
    return m;
  }
  g_print ("  blazeface_front_128 not found: using a synthetic model\n");
  *caps = "video/x-raw,width=64,height=48";
  return test_model ("relu-f32-nchw-dyn.onnx");
}

GST_START_TEST (test_state_cycles_flat_rss)
{
  const gchar *caps;
  gchar *model = soak_model (&caps);
  const gchar *env = g_getenv ("ONNXINFER_SOAK_CYCLES");
  gint cycles = env ? atoi (env) : 1000, i;
  gchar *desc = g_strdup_printf ("videotestsrc ! %s ! onnxinfer name=nn "
      "backend=cpu threads=1 input-mean=\"<127.5>\" input-std=\"<127.5>\" "
      "model-location=%s ! fakesink name=sink", caps, model);
  GstElement *p = gst_parse_launch (desc, NULL);
  GstElement *nn = gst_bin_get_by_name (GST_BIN (p), "nn");
  gsize rss_first = 0, rss_warm = 0, rss_last = 0, rss_max = 0;
  /* the warm-up: a tenth of the run (the process's RSS reaches its plateau
   * over the first tens of cycles: new streaming threads, GStreamer's
   * caches), as test-vk-graph's cycles do */
  gint warm = MAX (cycles / 10, 1);
  guint64 inferred = 0;
  gint64 t0 = g_get_monotonic_time ();
  size_t nn_cur = 0, nn_peak = 0;

  fail_unless (p != NULL);
  for (i = 0; i < cycles; i++) {
    GstStateChangeReturn ret = gst_element_set_state (p, GST_STATE_PLAYING);
    fail_unless (ret != GST_STATE_CHANGE_FAILURE, "cycle %d", i);
    /* PLAYING is reached after preroll: at least one inference. */
    ret = gst_element_get_state (p, NULL, NULL, TIMEOUT);
    fail_unless_equals_int (ret, GST_STATE_CHANGE_SUCCESS);
    inferred += get_u64 (nn, "frames-inferred");
    fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    /* Everything the session had is gone in NULL. */
    fail_unless_equals_uint64 (get_u64 (nn, "peak-bytes"), 0);

    if (i == 0)
      rss_first = rss_bytes ();
    if (i == warm - 1)
      rss_warm = rss_bytes ();
    rss_max = MAX (rss_max, rss_bytes ());
  }
  rss_last = rss_bytes ();
  nn_memory_usage (&nn_cur, &nn_peak);

  g_print ("  %d NULL->PLAYING->NULL cycles in %.1f s, %" G_GUINT64_FORMAT
      " frames inferred; RSS first %.2f MiB, after %d %.2f MiB, last %.2f MiB"
      " (max %.2f MiB, last - after %d = %+ld KiB); runtime heap now %zu B "
      "(peak %zu B)\n", cycles, (g_get_monotonic_time () - t0) / 1e6,
      inferred, rss_first / 1048576.0, warm, rss_warm / 1048576.0,
      rss_last / 1048576.0, rss_max / 1048576.0, warm,
      ((long) rss_last - (long) rss_warm) / 1024, nn_cur, nn_peak);
  fail_unless (inferred >= (guint64) cycles);
  /* No session alive: the runtime holds nothing. */
  fail_unless_equals_int (nn_cur, 0);
  /* Flat: a leak of even 1 KiB per cycle would show as 900 KiB here. */
  fail_unless ((long) rss_last - (long) rss_warm < 768 * 1024,
      "RSS grew by %ld KiB", ((long) rss_last - (long) rss_warm) / 1024);

  gst_object_unref (nn);
  gst_object_unref (p);
  g_free (desc);
  g_free (model);
}

GST_END_TEST;

/* ---- leaks tracer -------------------------------------------------------- */

static GstTracer *
find_leaks_tracer (void)
{
  GList *tracers = gst_tracing_get_active_tracers (), *l;
  GstTracer *found = NULL;

  for (l = tracers; l; l = l->next)
    if (g_str_equal (G_OBJECT_TYPE_NAME (l->data), "GstLeaksTracer"))
      found = gst_object_ref (l->data);
  g_list_free_full (tracers, gst_object_unref);
  return found;
}

/* Number of live objects the tracer knows, and their description. */
static guint
live_objects (GstTracer * tracer, GString * out)
{
  GstStructure *info = NULL;
  const GValue *list;
  guint i, n;

  g_signal_emit_by_name (tracer, "get-live-objects", &info);
  fail_unless (info != NULL);
  list = gst_structure_get_value (info, "live-objects-list");
  n = gst_value_list_get_size (list);
  for (i = 0; out && i < n; i++) {
    const GstStructure *o =
        gst_value_get_structure (gst_value_list_get_value (list, i));
    gchar *s = gst_structure_to_string (o);
    g_string_append_printf (out, "    %s\n", s);
    g_free (s);
  }
  gst_structure_free (info);
  return n;
}

static void
run_once (const gchar * desc)
{
  GstElement *p = gst_parse_launch (desc, NULL);
  GstMessage *msg;

  fail_unless (p != NULL);
  msg = run_pipeline (p, TIMEOUT);
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS,
      "pipeline did not reach EOS");
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (p);
  /* Streaming threads finish asynchronously: join them before counting. */
  gst_task_cleanup_all ();
}

/* Objects in the checkpoint's created list not matched (by address) in its
 * removed list: those created since the last checkpoint and still alive. */
static guint
checkpoint_alive (GstTracer * tracer, guint * n_removed)
{
  GstStructure *cp = NULL;
  GHashTable *count = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL);
  const gchar *lists[2] = { "objects-created-list", "objects-removed-list" };
  GHashTableIter iter;
  gpointer key, value;
  guint alive = 0, l, i;

  g_signal_emit_by_name (tracer, "activity-get-checkpoint", &cp);
  fail_unless (cp != NULL);
  for (l = 0; l < 2; l++) {
    const GValue *list = gst_structure_get_value (cp, lists[l]);
    for (i = 0; i < gst_value_list_get_size (list); i++) {
      const GstStructure *o =
          gst_value_get_structure (gst_value_list_get_value (list, i));
      const gchar *addr = gst_structure_get_string (o, "address");
      gint c = GPOINTER_TO_INT (g_hash_table_lookup (count, addr));
      g_hash_table_insert (count, g_strdup (addr),
          GINT_TO_POINTER (c + (l == 0 ? 1 : -1)));
    }
  }
  *n_removed = gst_value_list_get_size (gst_structure_get_value (cp,
          lists[1]));
  g_hash_table_iter_init (&iter, count);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (GPOINTER_TO_INT (value) > 0)
      alive += GPOINTER_TO_INT (value);
  g_hash_table_unref (count);
  gst_structure_free (cp);
  return alive;
}

GST_START_TEST (test_leaks_tracer)
{
  const gchar *caps;
  gchar *model = soak_model (&caps);
  gchar *image = media_file ("astronaut.png");
  gchar *desc;
  GstTracer *tracer = find_leaks_tracer ();
  guint before, after;
  GString *report = g_string_new (NULL);

  fail_unless (tracer != NULL, "GST_TRACERS=leaks is not active");
  /* A real pipeline: the image through decode/convert/scale when we have
   * it, then 30 frames of video; inference-interval and a cascade so every
   * code path of the meta runs. */
  if (image && strstr (caps, "128"))
    desc = g_strdup_printf ("filesrc location=%s ! pngdec ! imagefreeze "
        "num-buffers=30 ! videoconvert ! videoscale ! %s ! onnxinfer "
        "backend=cpu threads=1 input-mean=\"<127.5>\" input-std=\"<127.5>\" "
        "model-location=%s ! onnxinfer name=second inference-interval=3 "
        "backend=cpu threads=1 model-location=%s ! fakesink name=out", image, caps,
        model, model);
  else
    desc = g_strdup_printf ("videotestsrc num-buffers=30 ! %s ! onnxinfer "
        "backend=cpu threads=1 model-location=%s ! onnxinfer name=second "
        "inference-interval=3 backend=cpu threads=1 model-location=%s ! "
        "fakesink name=out", caps, model, model);

  /* Warm-up run: one-time objects (loaded plugins, features, caches). */
  run_once (desc);
  before = live_objects (tracer, NULL);
  /* The tracer does see what stays alive: while a frame with its tensors is
   * held after its pipeline is gone, objects created since the checkpoint
   * are alive.  (Activity tracking here: get-live-objects takes ownership of
   * what it lists, it is meant for the end of a run.) */
  {
    GstElement *p = gst_parse_launch (desc, NULL);
    GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "out");
    GstSample *sample;
    guint held, dropped, removed;

    g_signal_emit_by_name (tracer, "activity-start-tracking");
    fail_unless_equals_int (gst_element_set_state (p, GST_STATE_PAUSED),
        GST_STATE_CHANGE_ASYNC);
    fail_unless_equals_int (gst_element_get_state (p, NULL, NULL, TIMEOUT),
        GST_STATE_CHANGE_SUCCESS);
    g_object_get (sink, "last-sample", &sample, NULL);
    fail_unless (sample != NULL);
    fail_unless_equals_int (gst_buffer_get_n_onnx_tensor_metas
        (gst_sample_get_buffer (sample)), 2);
    fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    gst_object_unref (sink);
    gst_object_unref (p);
    gst_task_cleanup_all ();
    held = checkpoint_alive (tracer, &removed);
    gst_sample_unref (sample);
    /* Dropping the frame destroys what it held. */
    dropped = checkpoint_alive (tracer, &removed);
    g_signal_emit_by_name (tracer, "activity-stop-tracking");
    g_print ("  leaks tracer: %u objects alive while a frame with its tensors "
        "is held past its pipeline; dropping it destroys %u\n", held,
        removed);
    fail_unless (held >= 4);    /* sample, frame, caps, 2 storage buffers... */
    fail_unless_equals_int (dropped, 0);
    fail_unless_equals_int (removed, held);
  }
  run_once (desc);
  run_once (desc);
  after = live_objects (tracer, report);
  g_print ("  leaks tracer: %u live objects before, %u after two more "
      "pipeline runs\n", before, after);
  if (after > before)
    g_print ("  live objects:\n%s", report->str);
  fail_unless (after <= before, "%u objects leaked", after - before);

  g_string_free (report, TRUE);
  gst_object_unref (tracer);
  g_free (desc);
  g_free (image);
  g_free (model);
}

GST_END_TEST;

static Suite *
soak_suite (void)
{
  Suite *s = suite_create ("onnxinfer-soak");
  TCase *tc = tcase_create ("soak");

  tcase_set_timeout (tc, 1200);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_state_cycles_flat_rss);
  tcase_add_test (tc, test_leaks_tracer);
  return s;
}

int
main (int argc, char **argv)
{
  onnxinfer_check_setup_env ();
  /* The leaks tracer must be active from gst_init on (only when its test
   * runs: it slows the state cycles down). */
  if (g_getenv ("GST_TRACERS") == NULL && (g_getenv ("GST_CHECKS") == NULL ||
          strstr (g_getenv ("GST_CHECKS"), "leaks") != NULL))
    g_setenv ("GST_TRACERS", "leaks", TRUE);
  gst_check_init (&argc, &argv);
  return gst_check_run_suite (soak_suite (), "onnxinfer-soak", __FILE__);
}
