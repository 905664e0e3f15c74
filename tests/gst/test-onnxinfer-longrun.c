/* test-onnxinfer-longrun.c - soak: a long stream and many state cycles with
 * flat memory, on the backend named by ONNXINFER_TEST_BACKEND (cpu or
 * vulkan; see onnxinfer-longrun.h).
 *
 * test_stream_soak: ONNXINFER_SOAK_FRAMES frames (default 10000) through
 *   videotestsrc ! onnxinfer ! queue ! tensordecoder ! roioverlay ! fakesink
 *   (BlazeFace; the synthetic model without the decoder when it is missing
 *   or on Vulkan, see onnxinfer-longrun.h; ONNXINFER_SOAK_DECODE=0: no
 *   decoder).
 *   RSS, the runtime heap (nn_memory_usage), device-bytes and peak-bytes are
 *   sampled on the element's streaming thread after the first frame, after
 *   the warm-up (ONNXINFER_SOAK_WARMUP frames, default 10% up to 500) and on
 *   the last frame.  After the warm-up: RSS grows by less than 1 MiB, the
 *   runtime heap, device-bytes and peak-bytes do not change at all.
 *
 * test_state_cycles: ONNXINFER_SOAK_CYCLES NULL->PLAYING->NULL cycles
 *   (default 1000), same figures at cycle 1, after the warm-up
 *   (ONNXINFER_SOAK_CYCLES_WARMUP cycles, default 10%) and at the end;
 *   after each NULL the session's stats and the runtime heap are zero.
 *   The warm-up is long because on Vulkan (lavapipe) RSS climbs for about
 *   100 cycles and then stays flat: glibc's malloc arenas of the driver's
 *   threads (created and joined with each device) fill up; valgrind finds no
 *   block that accumulates (runtime alone: 4 and 16 cycles end with the same
 *   bytes in use).
 */
#include "onnxinfer-longrun.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#define TIMEOUT (120 * GST_SECOND)
#define MIB (1024.0 * 1024.0)
#define MAX_GROWTH (1024 * 1024)

typedef struct
{
  gsize rss;
  gsize malloc_used;            /* bytes in use in malloc (glibc), 0: n/a */
  size_t heap;                  /* runtime heap (nn_memory_usage) */
  guint64 device, peak, weights, arena, inferred;
} Figures;

static void
sample (Figures * f, GstElement * nn)
{
  f->rss = rss_bytes ();
#ifdef __GLIBC__
  {
    struct mallinfo2 mi = mallinfo2 ();
    f->malloc_used = mi.uordblks + mi.hblkhd;
  }
#endif
  f->heap = nn_heap_now ();
  g_object_get (nn, "device-bytes", &f->device, "peak-bytes", &f->peak,
      "weights-bytes", &f->weights, "arena-bytes", &f->arena,
      "frames-inferred", &f->inferred, NULL);
}

static void
print_figures (const gchar * label, const Figures * f)
{
  g_print ("    %-16s RSS %8.2f MiB  malloc in use %8.2f MiB  runtime heap %9zu B  device-bytes %9"
      G_GUINT64_FORMAT "  peak-bytes %9" G_GUINT64_FORMAT "  weights %"
      G_GUINT64_FORMAT "  arena %" G_GUINT64_FORMAT "  (%" G_GUINT64_FORMAT
      " inferred)\n", label, f->rss / MIB, f->malloc_used / MIB, f->heap, f->device, f->peak,
      f->weights, f->arena, f->inferred);
}

/* ---- a long stream ------------------------------------------------------- */

typedef struct
{
  GstElement *nn;
  guint frames, warm, count, step;
  Figures start, warmed, end;
  gsize rss_max_after_warm, rss_min_after_warm;
  gsize trace[11];              /* RSS at each tenth of the run */
  guint missing_meta;
} StreamSoak;

static GstPadProbeReturn
soak_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  StreamSoak *s = user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  guint n;

  if (gst_buffer_get_onnx_tensor_meta (buf, "nn") == NULL)
    s->missing_meta++;
  n = ++s->count;
  /* The element's own thread, right after its transform: no run is in
   * progress, so the runtime's figures are exact. */
  if (n == 1)
    sample (&s->start, s->nn);
  if (n == s->warm) {
    sample (&s->warmed, s->nn);
    s->rss_max_after_warm = s->rss_min_after_warm = s->warmed.rss;
  }
  if (n > s->warm && (n % s->step == 0 || n == s->frames)) {
    gsize rss = rss_bytes ();
    s->rss_max_after_warm = MAX (s->rss_max_after_warm, rss);
    s->rss_min_after_warm = MIN (s->rss_min_after_warm, rss);
  }
  if (n % MAX (s->frames / 10, 1) == 0 && n / MAX (s->frames / 10, 1) <= 10)
    s->trace[n / MAX (s->frames / 10, 1)] = rss_bytes ();
  if (n == s->frames)
    sample (&s->end, s->nn);
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_stream_soak)
{
  const gchar *caps, *backend = test_backend ();
  gboolean real, decode;
  gchar *model = longrun_model (&caps, &real);
  StreamSoak s = { 0, };
  gchar *desc;
  GstElement *p;
  GstPad *pad;
  GstMessage *msg;
  gint64 t0;
  gdouble secs;
  long growth;

  s.frames = env_uint ("ONNXINFER_SOAK_FRAMES", 10000);
  s.warm = env_uint ("ONNXINFER_SOAK_WARMUP", MIN (500, MAX (s.frames / 10,
              1)));
  s.step = MAX (s.frames / 50, 1);
  fail_unless (s.frames >= 2 && s.warm >= 1 && s.warm < s.frames);
  decode = real && env_uint ("ONNXINFER_SOAK_DECODE", 1) != 0;

  desc = g_strdup_printf ("videotestsrc num-buffers=%u pattern=ball ! %s ! "
      "onnxinfer name=nn backend=%s threads=1 input-mean=\"<127.5>\" "
      "input-std=\"<127.5>\" model-location=%s ! queue max-size-buffers=4 ! "
      "%s fakesink sync=false", s.frames, caps, backend, model,
      decode ? "tensordecoder scheme=blazeface post-messages=false ! "
      "roioverlay ! " : "");
  p = longrun_launch (desc);
  s.nn = gst_bin_get_by_name (GST_BIN (p), "nn");
  pad = gst_element_get_static_pad (s.nn, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, soak_probe, &s, NULL);
  gst_object_unref (pad);

  g_print ("  stream soak, backend=%s: %u frames of %s (%s), warm-up %u "
      "frames\n", backend, s.frames, real ? "BlazeFace" : "a synthetic model",
      decode ? "with tensordecoder ! roioverlay" : "no decoder", s.warm);
  t0 = g_get_monotonic_time ();
  msg = run_pipeline (p, TIMEOUT * 10);
  secs = (g_get_monotonic_time () - t0) / 1e6;
  fail_unless (msg != NULL, "timeout");
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
    assert_error (msg, 0, 0, NULL);
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);

  print_figures ("first frame:", &s.start);
  print_figures ("after warm-up:", &s.warmed);
  print_figures ("last frame:", &s.end);
  growth = (long) s.end.rss - (long) s.warmed.rss;
  {
    GString *t = g_string_new ("    RSS (MiB) at each tenth of the run:");
    guint k;
    for (k = 1; k <= 10; k++)
      if (s.trace[k])
        g_string_append_printf (t, " %.2f", s.trace[k] / MIB);
    g_print ("%s\n", t->str);
    g_string_free (t, TRUE);
  }
  g_print ("    %u frames in %.1f s (%.0f frames/s); after warm-up: RSS %+ld "
      "KiB (range %.2f..%.2f MiB), runtime heap %+ld B, device-bytes %+ld B, "
      "peak-bytes %+ld B\n", s.count, secs, s.count / secs, growth / 1024,
      s.rss_min_after_warm / MIB, s.rss_max_after_warm / MIB,
      (long) s.end.heap - (long) s.warmed.heap,
      (long) s.end.device - (long) s.warmed.device,
      (long) s.end.peak - (long) s.warmed.peak);

  /* Every frame went through the model and carries its tensors. */
  fail_unless_equals_int (s.count, s.frames);
  fail_unless_equals_int (s.missing_meta, 0);
  fail_unless_equals_uint64 (s.end.inferred, s.frames);
  fail_unless (s.start.peak > 0 && (s.start.weights > 0 || !real));
  /* Steady state: nothing the runtime holds changes after the warm-up. */
  fail_unless_equals_uint64 (s.end.heap, s.warmed.heap);
  fail_unless_equals_uint64 (s.end.device, s.warmed.device);
  fail_unless_equals_uint64 (s.end.peak, s.warmed.peak);
  fail_unless_equals_uint64 (s.end.weights, s.warmed.weights);
  fail_unless_equals_uint64 (s.end.arena, s.warmed.arena);
  fail_unless (growth < MAX_GROWTH, "RSS grew by %ld KiB after the warm-up",
      growth / 1024);
  fail_unless ((long) s.rss_max_after_warm - (long) s.warmed.rss < MAX_GROWTH,
      "RSS peaked %ld KiB above the warm-up figure",
      ((long) s.rss_max_after_warm - (long) s.warmed.rss) / 1024);

  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_uint64 (get_u64 (s.nn, "peak-bytes"), 0);
  fail_unless_equals_uint64 (get_u64 (s.nn, "device-bytes"), 0);
  fail_unless_equals_int (nn_heap_now (), 0);
  g_print ("    after NULL: runtime heap 0 B, RSS %.2f MiB\n",
      rss_bytes () / MIB);

  gst_object_unref (s.nn);
  gst_object_unref (p);
  g_free (desc);
  g_free (model);
}

GST_END_TEST;

/* ---- state cycles -------------------------------------------------------- */

GST_START_TEST (test_state_cycles)
{
  const gchar *caps, *backend = test_backend ();
  gboolean real;
  gchar *model = longrun_model (&caps, &real);
  guint cycles = env_uint ("ONNXINFER_SOAK_CYCLES", 1000), warm, i;
  gchar *desc = g_strdup_printf ("videotestsrc ! %s ! onnxinfer name=nn "
      "backend=%s threads=1 input-mean=\"<127.5>\" input-std=\"<127.5>\" "
      "model-location=%s ! fakesink", caps, backend, model);
  GstElement *p = longrun_launch (desc);
  GstElement *nn = gst_bin_get_by_name (GST_BIN (p), "nn");
  Figures c_first = { 0, }, c_warm = { 0, }, c_last = { 0, }, playing;
  gsize rss_max = 0, after_null_warm = 0, after_null_last = 0;
  long max_growth;
  guint64 inferred = 0;
  gint64 t0 = g_get_monotonic_time ();
  gdouble secs;
  long growth;

  fail_unless (cycles >= 2);
  warm = env_uint ("ONNXINFER_SOAK_CYCLES_WARMUP", MAX (cycles / 10, 1));
  fail_unless (warm < cycles);
  for (i = 0; i < cycles; i++) {
    GstStateChangeReturn ret = gst_element_set_state (p, GST_STATE_PLAYING);
    fail_unless (ret != GST_STATE_CHANGE_FAILURE, "cycle %u", i);
    /* PLAYING is reached after preroll: at least one inference. */
    ret = gst_element_get_state (p, NULL, NULL, TIMEOUT);
    fail_unless_equals_int (ret, GST_STATE_CHANGE_SUCCESS);
    sample (&playing, nn);
    fail_unless (playing.inferred >= 1 && playing.peak > 0 &&
        (playing.weights > 0 || !real), "cycle %u: no session stats", i);
    inferred += playing.inferred;
    if (i == 0)
      c_first = playing;
    if (i == warm)
      c_warm = playing;
    if (i == cycles - 1)
      c_last = playing;
    /* The session's figures are the same in every cycle. */
    fail_unless_equals_uint64 (playing.device, c_first.device);
    fail_unless_equals_uint64 (playing.peak, c_first.peak);
    fail_unless_equals_uint64 (playing.weights, c_first.weights);

    fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    /* Everything the session had is gone in NULL. */
    fail_unless_equals_uint64 (get_u64 (nn, "peak-bytes"), 0);
    fail_unless_equals_uint64 (get_u64 (nn, "device-bytes"), 0);
    fail_unless (nn_heap_now () == 0, "cycle %u: runtime heap %zu B in "
        "NULL", i, nn_heap_now ());
    rss_max = MAX (rss_max, rss_bytes ());
    if (i == warm)
      after_null_warm = rss_bytes ();
  }
  after_null_last = rss_bytes ();
  secs = (g_get_monotonic_time () - t0) / 1e6;

  g_print ("  state cycles, backend=%s: %u NULL->PLAYING->NULL cycles of %s "
      "in %.1f s (%.1f ms/cycle), %" G_GUINT64_FORMAT " frames inferred\n",
      backend, cycles, real ? "BlazeFace" : "a synthetic model", secs,
      secs * 1000.0 / cycles, inferred);
  print_figures ("PLAYING, #1:", &c_first);
  {
    gchar *label = g_strdup_printf ("PLAYING, #%u:", warm + 1);
    print_figures (label, &c_warm);
    g_free (label);
  }
  print_figures ("PLAYING, last:", &c_last);
  growth = (long) after_null_last - (long) after_null_warm;
  g_print ("    in NULL: RSS after %u cycles %.2f MiB, at the end %.2f MiB "
      "(%+ld KiB, max %.2f MiB); runtime heap 0 B after every cycle\n",
      warm + 1, after_null_warm / MIB, after_null_last / MIB, growth / 1024,
      rss_max / MIB);

  fail_unless (inferred >= cycles);
  /* Every Vulkan cycle is a new VkInstance/VkDevice: the loader and
   * lavapipe keep ~430 B of heap per cycle (malloc in use +0.4 MiB over
   * 900 cycles, identical in every run), and the pages that heap lands on
   * make the RSS figure swing between +0.3 and +1.1 MiB from run to run.
   * Our own memory is checked exactly above (runtime heap 0 B, device
   * bytes 0 after every cycle); RSS is the coarse guard, with room for
   * the driver's share on Vulkan. */
  max_growth = strcmp (backend, "vulkan") == 0 ? 2 * MAX_GROWTH : MAX_GROWTH;
  fail_unless (growth < max_growth, "RSS grew by %ld KiB after the warm-up",
      growth / 1024);
  fail_unless ((long) c_last.rss - (long) c_warm.rss < max_growth,
      "RSS in PLAYING grew by %ld KiB after the warm-up",
      ((long) c_last.rss - (long) c_warm.rss) / 1024);

  gst_object_unref (nn);
  gst_object_unref (p);
  g_free (desc);
  g_free (model);
}

GST_END_TEST;

static Suite *
longrun_suite (void)
{
  Suite *s = suite_create ("onnxinfer-longrun");
  TCase *tc = tcase_create ("soak");

  tcase_set_timeout (tc, 3600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_stream_soak);
  tcase_add_test (tc, test_state_cycles);
  return s;
}

int
main (int argc, char **argv)
{
  int skip;

  onnxinfer_check_setup_env ();
  if ((skip = longrun_check_backend ("onnxinfer-longrun")) != 0)
    return skip;
  gst_check_init (&argc, &argv);
  return gst_check_run_suite (longrun_suite (), "onnxinfer-longrun",
      __FILE__);
}
