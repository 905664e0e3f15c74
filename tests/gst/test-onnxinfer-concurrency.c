/* test-onnxinfer-concurrency.c - several sessions at once in one process.
 *
 * Pipelines in parallel threads (created, run and disposed concurrently),
 * several onnxinfer elements on one model file in one pipeline (tee) and in
 * a cascade, pipelines disposed while another runs, and concurrent state
 * cycles.  Every frame's tensors are compared with a reference computed
 * alone, before: byte for byte on the same backend (a race in shared state
 * would show as a difference), within a tolerance across backends.  At the
 * end the runtime's heap is back to zero.
 *
 * ONNXINFER_TEST_BACKEND=cpu: every element on the CPU; =vulkan: the
 * elements alternate Vulkan and CPU (so Vulkan sessions run beside each
 * other and beside CPU sessions).  Model: see longrun_model().
 * ONNXINFER_CONC_FRAMES sets the frames per pipeline.
 */
#include "onnxinfer-longrun.h"

#define TIMEOUT (120 * GST_SECOND)
#define TIMEOUT_MS 120000
/* Sums of the outputs, CPU vs Vulkan kernels. */
#define CROSS_BACKEND_RTOL 1e-3

static gchar *model;
static const gchar *model_caps;
static gboolean model_real;
static guint n_frames;
static FrameLog *ref[2];        /* reference per backend: 0 cpu, 1 vulkan */

/* Backend of the @i-th element of a test. */
static const gchar *
backend_of (guint i)
{
  if (!test_backend_is_vulkan ())
    return "cpu";
  return i % 2 == 0 ? "vulkan" : "cpu";
}

static gchar *
nn_desc (const gchar * name, const gchar * backend)
{
  return g_strdup_printf ("onnxinfer name=%s backend=%s threads=1 "
      "input-mean=\"<127.5>\" input-std=\"<127.5>\" model-location=%s", name,
      backend, model);
}

typedef struct
{
  gchar *desc;
  const gchar *probe_element;   /* the sink whose sink pad gets the log */
  FrameLog *log;
  guint rounds;
  GstClockTime delay;           /* before each round */
  /* results (read after the join) */
  gchar *error;
  guint64 inferred;
} Job;

static void
job_set_error (Job * j, const gchar * what, GstMessage * msg)
{
  if (j->error)
    return;
  if (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gst_message_parse_error (msg, &err, NULL);
    j->error = g_strdup_printf ("%s: %s: %s", what,
        GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), err->message);
    g_error_free (err);
  } else {
    j->error = g_strdup (what);
  }
}

/* Runs the job's pipeline to EOS, @rounds times, in the calling thread;
 * never fails (the main thread checks the results). */
static gpointer
job_run (gpointer data)
{
  Job *j = data;
  guint r;

  for (r = 0; r < j->rounds; r++) {
    GstElement *p = gst_parse_launch (j->desc, NULL);
    GstElement *nn;
    GstMessage *msg;

    if (j->delay)
      g_usleep (j->delay / GST_USECOND);
    if (p == NULL) {
      job_set_error (j, "parse", NULL);
      return NULL;
    }
    if (j->log)
      frame_log_attach (j->log, p, j->probe_element, "sink");
    msg = run_pipeline (p, TIMEOUT);
    if (msg == NULL)
      job_set_error (j, "timeout", NULL);
    else if (GST_MESSAGE_TYPE (msg) != GST_MESSAGE_EOS)
      job_set_error (j, "error", msg);
    if (msg)
      gst_message_unref (msg);
    nn = gst_bin_get_by_name (GST_BIN (p), "nn");
    if (nn) {
      j->inferred += get_u64 (nn, "frames-inferred");
      gst_object_unref (nn);
    }
    if (gst_element_set_state (p, GST_STATE_NULL) != GST_STATE_CHANGE_SUCCESS)
      job_set_error (j, "set_state NULL", NULL);
    gst_object_unref (p);
  }
  return NULL;
}

static void
job_clear (Job * j)
{
  g_free (j->desc);
  g_free (j->error);
  if (j->log)
    frame_log_free (j->log);
}

static gchar *
single_desc (const gchar * backend, guint frames)
{
  gchar *nn = nn_desc ("nn", backend);
  gchar *d = g_strdup_printf ("videotestsrc num-buffers=%u pattern=ball ! %s "
      "! %s ! fakesink name=sink sync=false", frames, model_caps, nn);
  g_free (nn);
  return d;
}

/* References, computed alone before the concurrent runs. */
static void
conc_setup (void)
{
  guint b;

  model = longrun_model (&model_caps, &model_real);
  n_frames = env_uint ("ONNXINFER_CONC_FRAMES", model_real ? 40 : 200);
  for (b = 0; b < 2; b++) {
    Job j = { 0, };
    if (b == 1 && !test_backend_is_vulkan ())
      break;
    j.desc = single_desc (b ? "vulkan" : "cpu", n_frames);
    j.probe_element = "sink";
    j.log = frame_log_new ("nn", n_frames, 1);
    j.rounds = 1;
    job_run (&j);
    fail_unless (j.error == NULL, "reference run: %s", j.error);
    fail_unless_equals_int (j.log->with_meta, n_frames);
    ref[b] = j.log;
    j.log = NULL;
    job_clear (&j);
  }
  if (ref[1]) {
    guint n = frame_log_compare (ref[0], ref[1], n_frames, FALSE,
        CROSS_BACKEND_RTOL, "cpu vs vulkan reference");
    g_print ("  references: %u frames, %s; Vulkan and CPU outputs agree "
        "(sums, rtol %g)\n", n, model_real ? "BlazeFace" : "synthetic model",
        CROSS_BACKEND_RTOL);
  }
}

static void
conc_teardown (void)
{
  guint b;

  for (b = 0; b < 2; b++)
    if (ref[b]) {
      frame_log_free (ref[b]);
      ref[b] = NULL;
    }
  g_free (model);
  /* No session alive: the runtime holds nothing. */
  fail_unless (nn_heap_now () == 0, "runtime heap %zu B at the end",
      nn_heap_now ());
}

/* @log (from an element on @backend) against the reference. */
static void
check_against_ref (FrameLog * log, const gchar * backend, const gchar * what)
{
  gboolean vk = g_str_equal (backend, "vulkan");

  fail_unless_equals_int (log->bad, 0);
  frame_log_compare (ref[vk], log, n_frames, TRUE, 0.0, what);
  if (vk)
    frame_log_compare (ref[0], log, n_frames, FALSE, CROSS_BACKEND_RTOL,
        what);
}

/* ---- pipelines in parallel threads --------------------------------------- */

GST_START_TEST (test_parallel_pipelines)
{
  guint n = env_uint ("ONNXINFER_CONC_PIPELINES", 4), rounds = 2, i;
  Job *jobs;
  GThread **threads;
  gint64 t0;

  conc_setup ();
  jobs = g_new0 (Job, n);
  threads = g_new0 (GThread *, n);
  t0 = g_get_monotonic_time ();
  for (i = 0; i < n; i++) {
    jobs[i].desc = single_desc (backend_of (i), n_frames);
    jobs[i].probe_element = "sink";
    jobs[i].log = frame_log_new ("nn", n_frames, 1);
    jobs[i].rounds = rounds;
    /* Staggered: sessions are created and disposed while others run. */
    jobs[i].delay = i * 3 * GST_MSECOND;
    threads[i] = g_thread_new ("pipeline", job_run, &jobs[i]);
  }
  for (i = 0; i < n; i++)
    g_thread_join (threads[i]);
  g_print ("  %u pipelines x %u rounds x %u frames in parallel threads "
      "(%.1f s)\n", n, rounds, n_frames,
      (g_get_monotonic_time () - t0) / 1e6);
  for (i = 0; i < n; i++) {
    gchar *what = g_strdup_printf ("pipeline %u (%s)", i, backend_of (i));
    fail_unless (jobs[i].error == NULL, "%s: %s", what, jobs[i].error);
    fail_unless_equals_uint64 (jobs[i].inferred, (guint64) rounds * n_frames);
    fail_unless_equals_int (jobs[i].log->with_meta, rounds * n_frames);
    check_against_ref (jobs[i].log, backend_of (i), what);
    g_print ("    %s: %u frames, tensors identical to the reference\n", what,
        jobs[i].log->with_meta);
    g_free (what);
    job_clear (&jobs[i]);
  }
  g_free (jobs);
  g_free (threads);
  conc_teardown ();
}

GST_END_TEST;

/* ---- one pipeline, one model file, several elements ---------------------- */

/* tee into three branches, each with its own onnxinfer on the same model:
 * each branch's frames carry exactly its own element's tensors. */
GST_START_TEST (test_tee_shared_model)
{
  const gchar *names[3] = { "a", "b", "c" };
  GString *d = g_string_new (NULL);
  FrameLog *logs[3];
  GstElement *p;
  GstMessage *msg;
  guint i;

  conc_setup ();
  g_string_printf (d, "videotestsrc num-buffers=%u pattern=ball ! %s ! tee "
      "name=t", n_frames, model_caps);
  for (i = 0; i < 3; i++) {
    gchar *nn = nn_desc (names[i], backend_of (i));
    g_string_append_printf (d, " t. ! queue max-size-buffers=3 ! %s ! "
        "fakesink name=sink_%s sync=false", nn, names[i]);
    g_free (nn);
  }
  p = longrun_launch (d->str);
  for (i = 0; i < 3; i++) {
    gchar *sink = g_strdup_printf ("sink_%s", names[i]);
    logs[i] = frame_log_new (names[i], n_frames, 1);
    frame_log_attach (logs[i], p, sink, "sink");
    g_free (sink);
  }
  msg = run_pipeline (p, TIMEOUT);
  fail_unless (msg != NULL);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
    assert_error (msg, 0, 0, NULL);
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  for (i = 0; i < 3; i++) {
    gchar *what = g_strdup_printf ("tee branch %s (%s)", names[i],
        backend_of (i));
    fail_unless_equals_int (logs[i]->buffers, n_frames);
    fail_unless_equals_int (logs[i]->with_meta, n_frames);
    check_against_ref (logs[i], backend_of (i), what);
    g_print ("  %s: %u frames, one tensor meta each, identical to the "
        "reference\n", what, logs[i]->with_meta);
    frame_log_free (logs[i]);
    g_free (what);
  }
  gst_object_unref (p);
  g_string_free (d, TRUE);
  conc_teardown ();
}

GST_END_TEST;

/* Two onnxinfer in a row on the same model (the second on the other backend
 * in the vulkan variant): both metas on every frame, both right. */
GST_START_TEST (test_cascade_shared_model)
{
  gchar *a, *b, *d;
  FrameLog *la, *lb;
  GstElement *p;
  GstMessage *msg;

  conc_setup ();
  a = nn_desc ("a", backend_of (0));
  b = nn_desc ("b", backend_of (1));
  d = g_strdup_printf ("videotestsrc num-buffers=%u pattern=ball ! %s ! %s ! "
      "queue max-size-buffers=3 ! %s ! fakesink name=sink sync=false",
      n_frames, model_caps, a, b);
  p = longrun_launch (d);
  la = frame_log_new ("a", n_frames, 2);
  lb = frame_log_new ("b", n_frames, 2);
  frame_log_attach (la, p, "sink", "sink");
  frame_log_attach (lb, p, "sink", "sink");
  msg = run_pipeline (p, TIMEOUT);
  fail_unless (msg != NULL);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
    assert_error (msg, 0, 0, NULL);
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (la->with_meta, n_frames);
  fail_unless_equals_int (lb->with_meta, n_frames);
  check_against_ref (la, backend_of (0), "cascade, first");
  check_against_ref (lb, backend_of (1), "cascade, second");
  g_print ("  cascade %s -> %s: %u frames with both metas, both identical to "
      "the reference\n", backend_of (0), backend_of (1), n_frames);
  frame_log_free (la);
  frame_log_free (lb);
  gst_object_unref (p);
  g_free (d);
  g_free (a);
  g_free (b);
  conc_teardown ();
}

GST_END_TEST;

/* ---- dispose while another pipeline runs --------------------------------- */

GST_START_TEST (test_dispose_while_running)
{
  guint cycles = env_uint ("ONNXINFER_CONC_CYCLES", 12), i, long_frames;
  Job runner = { 0, };
  GThread *thread;
  guint64 short_inferred = 0;

  conc_setup ();
  /* The long pipeline: as many frames as the reference, 4 times over. */
  long_frames = n_frames;
  runner.desc = single_desc (backend_of (0), long_frames);
  runner.probe_element = "sink";
  runner.log = frame_log_new ("nn", long_frames, 1);
  runner.rounds = 4;
  thread = g_thread_new ("runner", job_run, &runner);

  /* Meanwhile: pipelines on the same model (the other backend first)
   * created, run for a few frames and disposed, again and again. */
  for (i = 0; i < cycles; i++) {
    gchar *d = single_desc (backend_of (i + 1), 1000000);
    GstElement *p = longrun_launch (d);
    GstElement *nn = gst_bin_get_by_name (GST_BIN (p), "nn");
    GstMessage *msg;

    fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    fail_unless (wait_inferred (nn, 1 + i % 3, TIMEOUT_MS));
    msg = pop_error (p);
    fail_unless (msg == NULL);
    short_inferred += get_u64 (nn, "frames-inferred");
    fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    fail_unless_equals_uint64 (get_u64 (nn, "peak-bytes"), 0);
    gst_object_unref (nn);
    gst_object_unref (p);
    g_free (d);
  }
  g_thread_join (thread);
  fail_unless (runner.error == NULL, "long pipeline: %s", runner.error);
  fail_unless_equals_uint64 (runner.inferred, 4 * (guint64) long_frames);
  check_against_ref (runner.log, backend_of (0), "long pipeline");
  g_print ("  %u pipelines (%" G_GUINT64_FORMAT " frames) created and "
      "disposed while a %s pipeline ran %u frames: its tensors identical to "
      "the reference\n", cycles, short_inferred, backend_of (0),
      runner.log->with_meta);
  job_clear (&runner);
  conc_teardown ();
}

GST_END_TEST;

/* ---- concurrent state cycles --------------------------------------------- */

typedef struct
{
  guint index, cycles;
  gchar *error;
  guint64 inferred;
} Cycler;

static gpointer
cycler_run (gpointer data)
{
  Cycler *c = data;
  gchar *d = single_desc (backend_of (c->index), 1000000);
  GstElement *p = gst_parse_launch (d, NULL);
  GstElement *nn = p ? gst_bin_get_by_name (GST_BIN (p), "nn") : NULL;
  guint i;

  for (i = 0; nn && i < c->cycles && !c->error; i++) {
    if (gst_element_set_state (p, GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_FAILURE ||
        gst_element_get_state (p, NULL, NULL, TIMEOUT) !=
        GST_STATE_CHANGE_SUCCESS)
      c->error = g_strdup_printf ("cycle %u: PLAYING failed", i);
    c->inferred += get_u64 (nn, "frames-inferred");
    if (gst_element_set_state (p, GST_STATE_NULL) != GST_STATE_CHANGE_SUCCESS)
      c->error = g_strdup_printf ("cycle %u: NULL failed", i);
    else if (get_u64 (nn, "peak-bytes") != 0)
      c->error = g_strdup_printf ("cycle %u: session alive in NULL", i);
  }
  if (!nn)
    c->error = g_strdup ("no pipeline");
  if (nn)
    gst_object_unref (nn);
  if (p)
    gst_object_unref (p);
  g_free (d);
  return NULL;
}

/* Sessions created and disposed in several threads at once (on Vulkan: the
 * shared, refcounted device context is taken and dropped concurrently). */
GST_START_TEST (test_concurrent_state_cycles)
{
  guint n = 3, cycles = env_uint ("ONNXINFER_CONC_STATE_CYCLES", 30), i;
  Cycler c[3] = { {0,}, };
  GThread *t[3];
  gint64 t0 = g_get_monotonic_time ();

  model = longrun_model (&model_caps, &model_real);
  for (i = 0; i < n; i++) {
    c[i].index = i;
    c[i].cycles = cycles;
    t[i] = g_thread_new ("cycler", cycler_run, &c[i]);
  }
  for (i = 0; i < n; i++)
    g_thread_join (t[i]);
  g_print ("  %u threads x %u NULL->PLAYING->NULL cycles at once (%.1f s)\n",
      n, cycles, (g_get_monotonic_time () - t0) / 1e6);
  for (i = 0; i < n; i++) {
    fail_unless (c[i].error == NULL, "thread %u (%s): %s", i, backend_of (i),
        c[i].error);
    fail_unless (c[i].inferred >= cycles);
    g_print ("    thread %u (%s): %" G_GUINT64_FORMAT " frames inferred\n", i,
        backend_of (i), c[i].inferred);
  }
  g_free (model);
  fail_unless (nn_heap_now () == 0, "runtime heap %zu B at the end",
      nn_heap_now ());
}

GST_END_TEST;

static Suite *
concurrency_suite (void)
{
  Suite *s = suite_create ("onnxinfer-concurrency");
  TCase *tc = tcase_create ("concurrency");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_parallel_pipelines);
  tcase_add_test (tc, test_tee_shared_model);
  tcase_add_test (tc, test_cascade_shared_model);
  tcase_add_test (tc, test_dispose_while_running);
  tcase_add_test (tc, test_concurrent_state_cycles);
  return s;
}

int
main (int argc, char **argv)
{
  int skip;

  onnxinfer_check_setup_env ();
  if ((skip = longrun_check_backend ("onnxinfer-concurrency")) != 0)
    return skip;
  gst_check_init (&argc, &argv);
  return gst_check_run_suite (concurrency_suite (), "onnxinfer-concurrency",
      __FILE__);
}
