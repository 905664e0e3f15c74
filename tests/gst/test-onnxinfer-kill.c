/* test-onnxinfer-kill.c - pipelines ended mid-stream leave nothing behind.
 *
 * Each test ends a streaming pipeline the hard way: EOS, an error from
 * upstream (an application posting one, a failing element, a frame that is
 * too short), an error downstream, flushing seeks again and again (with the
 * element waiting for a free output buffer), NULL while frames are in
 * flight, pads blocked, unlinked, and onnxinfer swapped for another one while
 * the stream runs.  Afterwards, with the leaks tracer (GST_TRACERS=leaks, set
 * by main()) tracking since the start of the test: no GstBuffer, GstMemory,
 * buffer pool, caps or event created by the test is alive (a frame's tensor
 * meta holds a pooled storage buffer, so a leaked meta shows as a buffer),
 * and the runtime's heap (nn_memory_usage) is back to zero.
 *
 * Backend: ONNXINFER_TEST_BACKEND=cpu|vulkan (onnxinfer-longrun.h).
 */
#include <gst/app/gstappsrc.h>

#include "onnxinfer-longrun.h"

#define TIMEOUT (60 * GST_SECOND)
#define TIMEOUT_MS 60000

/* The model, its caps and the onnxinfer properties of every test. */
static gchar *model;
static const gchar *model_caps;
static gboolean model_real;
static gchar *nn_props;

static void
kill_setup (void)
{
  model = longrun_model (&model_caps, &model_real);
  nn_props = g_strdup_printf ("backend=%s threads=1 input-mean=\"<127.5>\" "
      "input-std=\"<127.5>\" model-location=%s", test_backend (), model);
}

static void
kill_teardown (void)
{
  g_free (model);
  g_free (nn_props);
}

/* Runs @desc to EOS or error; NULL; unref. */
static void
run_briefly (const gchar * desc)
{
  GstElement *p = longrun_launch (desc);
  GstMessage *msg = run_pipeline (p, TIMEOUT);

  fail_unless (msg != NULL);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (p);
}

/* One-time objects (classes' pad templates, static caps, the system clock,
 * the default task pool) of every element these tests use. */
static void
warmup (gpointer unused)
{
  gchar *d = g_strdup_printf ("videotestsrc num-buffers=3 ! %s ! queue ! "
      "identity ! onnxinfer %s ! tee ! queue ! fakesink sync=true", model_caps,
      nn_props);
  GstElement *p;

  run_briefly (d);
  g_free (d);
  d = g_strdup_printf ("appsrc caps=\"%s\" ! fakesink", model_caps);
  p = longrun_launch (d);
  gst_element_set_state (p, GST_STATE_PAUSED);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
  g_free (d);
}

static GstElement *
get (GstElement * p, const gchar * name)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (p), name);
  fail_unless (e != NULL, "no element %s", name);
  return e;
}

/* Sets NULL and checks the session is gone. */
static void
stop_checked (GstElement * p, GstElement * nn)
{
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  if (nn) {
    fail_unless_equals_uint64 (get_u64 (nn, "peak-bytes"), 0);
    fail_unless_equals_uint64 (get_u64 (nn, "device-bytes"), 0);
  }
}

static GstMessage *
wait_message (GstElement * p, GstMessageType types)
{
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, TIMEOUT, types);
  gst_object_unref (bus);
  fail_unless (msg != NULL, "timeout waiting for a message");
  return msg;
}

static void
expect_error_from (GstMessage * msg, const gchar * src, const gchar * needle)
{
  GError *err = NULL;
  gchar *dbg = NULL;

  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_ERROR);
  gst_message_parse_error (msg, &err, &dbg);
  g_print ("    error from %s: %s\n", GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)),
      err->message);
  if (src)
    fail_unless_equals_string (GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), src);
  if (needle)
    fail_unless (strstr (err->message, needle) != NULL ||
        (dbg && strstr (dbg, needle) != NULL), "'%s' not in '%s' (%s)",
        needle, err->message, dbg ? dbg : "");
  g_error_free (err);
  g_free (dbg);
}

/* ---- the checker itself ------------------------------------------------- */

/* The leak guard does see what a test leaves behind: a buffer (with its
 * memory) and a buffer pool created after the start are counted until they
 * are gone. */
GST_START_TEST (test_leak_guard_sees_leaks)
{
  LeakGuard g;
  GstBuffer *buf;
  GstBufferPool *pool;
  GString *types = g_string_new (NULL);
  guint alive;

  kill_setup ();
  leak_guard_begin (&g, warmup, NULL);
  buf = gst_buffer_new_allocate (NULL, 64, NULL);
  pool = gst_buffer_pool_new ();
  alive = leaks_alive_since_start (g.tracer, types);
  g_print ("  leak guard: %u objects alive with a buffer and a pool held:%s\n",
      alive, types->str);
  fail_unless_equals_int (alive, 3);    /* GstBuffer, GstMemory, pool */
  fail_unless (strstr (types->str, "GstBuffer@") != NULL);
  fail_unless (strstr (types->str, "GstBufferPool@") != NULL);
  gst_buffer_unref (buf);
  gst_object_unref (pool);
  g_string_free (types, TRUE);
  leak_guard_end (&g, "leak guard self-test");
  kill_teardown ();
}

GST_END_TEST;

/* ---- EOS ----------------------------------------------------------------- */

/* EOS sent to a running pipeline with frames queued before and after the
 * element: every inferred frame reaches the sink with its tensors, and the
 * queues drain. */
GST_START_TEST (test_kill_eos)
{
  static const guint after[] = { 1, 7, 30 };
  LeakGuard g;
  guint k;

  kill_setup ();
  leak_guard_begin (&g, warmup, NULL);
  for (k = 0; k < G_N_ELEMENTS (after); k++) {
    gchar *d = g_strdup_printf ("videotestsrc pattern=ball ! %s ! "
        "queue max-size-buffers=3 ! onnxinfer name=nn %s ! "
        "queue max-size-buffers=3 ! fakesink name=sink sync=false",
        model_caps, nn_props);
    GstElement *p = longrun_launch (d);
    GstElement *nn = get (p, "nn");
    FrameLog *log = frame_log_new ("nn", 1, 1);
    GstMessage *msg;
    guint64 inferred;

    frame_log_attach (log, p, "sink", "sink");
    fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    fail_unless (wait_inferred (nn, after[k], TIMEOUT_MS));
    fail_unless (gst_element_send_event (p, gst_event_new_eos ()));
    msg = wait_message (p, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
    gst_message_unref (msg);
    inferred = get_u64 (nn, "frames-inferred");
    g_print ("  EOS after >= %u frames: %" G_GUINT64_FORMAT " inferred, %u "
        "reached the sink, all with their tensors\n", after[k], inferred,
        log->buffers);
    fail_unless (inferred >= after[k]);
    fail_unless_equals_uint64 ((guint64) log->buffers, inferred);
    fail_unless_equals_int (log->with_meta, log->buffers);
    fail_unless_equals_int (log->bad, 0);
    stop_checked (p, nn);
    gst_object_unref (nn);
    gst_object_unref (p);
    frame_log_free (log);
    g_free (d);
  }
  leak_guard_end (&g, "EOS mid-stream");
  kill_teardown ();
}

GST_END_TEST;

/* ---- errors -------------------------------------------------------------- */

static GstBuffer *
gray_frame (gsize size, guint i)
{
  GstBuffer *b = gst_buffer_new_allocate (NULL, size, NULL);
  gst_buffer_memset (b, 0, (guint8) (i * 13), size);
  GST_BUFFER_PTS (b) = i * GST_SECOND / 30;
  GST_BUFFER_DURATION (b) = GST_SECOND / 30;
  GST_BUFFER_OFFSET (b) = i;
  return b;
}

static gsize
frame_size (void)
{
  GstVideoInfo info;
  GstCaps *caps = gst_caps_from_string (model_caps);
  fail_unless (gst_video_info_from_caps (&info, caps));
  gst_caps_unref (caps);
  return GST_VIDEO_INFO_SIZE (&info);
}

/* An application (or an element upstream) posts an error while frames wait
 * in appsrc and in the queues; the application sets NULL at once. */
GST_START_TEST (test_kill_error_posted_upstream)
{
  LeakGuard g;
  gchar *d;
  GstElement *p, *nn, *src;
  GstMessage *msg;
  guint i;

  kill_setup ();
  leak_guard_begin (&g, warmup, NULL);
  d = g_strdup_printf ("appsrc name=src caps=\"%s\" format=time "
      "max-bytes=0 ! queue max-size-buffers=5 ! onnxinfer name=nn %s ! "
      "queue max-size-buffers=5 ! fakesink sync=false", model_caps, nn_props);
  p = longrun_launch (d);
  nn = get (p, "nn");
  src = get (p, "src");
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  for (i = 0; i < 40; i++)
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
            gray_frame (frame_size (), i)), GST_FLOW_OK);
  fail_unless (wait_inferred (nn, 3, TIMEOUT_MS));
  GST_ELEMENT_ERROR (src, STREAM, FAILED, ("upstream failure (test)"),
      ("posted by test_kill_error_posted_upstream"));
  msg = wait_message (p, GST_MESSAGE_ERROR);
  expect_error_from (msg, "src", "upstream failure");
  gst_message_unref (msg);
  g_print ("  error posted by appsrc after %" G_GUINT64_FORMAT " of 40 "
      "frames inferred\n", get_u64 (nn, "frames-inferred"));
  stop_checked (p, nn);
  gst_object_unref (src);
  gst_object_unref (nn);
  gst_object_unref (p);
  g_free (d);
  leak_guard_end (&g, "error posted upstream");
  kill_teardown ();
}

GST_END_TEST;

/* Hostile frames: buffers shorter than the caps say (and empty ones) end
 * the stream with a clear error from onnxinfer, never a read past the
 * buffer; the frames before them were inferred. */
GST_START_TEST (test_kill_short_frame)
{
  static const gsize sizes[] = { 100, 0, 1 };
  LeakGuard g;
  guint k, i;

  kill_setup ();
  leak_guard_begin (&g, warmup, NULL);
  for (k = 0; k < G_N_ELEMENTS (sizes); k++) {
    gchar *d = g_strdup_printf ("appsrc name=src caps=\"%s\" format=time "
        "max-bytes=0 ! onnxinfer name=nn %s ! fakesink sync=false",
        model_caps, nn_props);
    GstElement *p = longrun_launch (d);
    GstElement *nn = get (p, "nn");
    GstElement *src = get (p, "src");
    GstMessage *msg;

    fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    for (i = 0; i < 5; i++)
      gst_app_src_push_buffer (GST_APP_SRC (src), gray_frame (frame_size (),
              i));
    gst_app_src_push_buffer (GST_APP_SRC (src), sizes[k] ?
        gray_frame (sizes[k], 5) : gst_buffer_new ());
    for (i = 6; i < 10; i++)
      gst_app_src_push_buffer (GST_APP_SRC (src), gray_frame (frame_size (),
              i));
    msg = wait_message (p, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    expect_error_from (msg, "nn", "map the video frame");
    gst_message_unref (msg);
    g_print ("  %" G_GSIZE_FORMAT "-byte frame after 5 good ones: %"
        G_GUINT64_FORMAT " inferred\n", sizes[k],
        get_u64 (nn, "frames-inferred"));
    fail_unless_equals_uint64 (get_u64 (nn, "frames-inferred"), 5);
    stop_checked (p, nn);
    gst_object_unref (src);
    gst_object_unref (nn);
    gst_object_unref (p);
    g_free (d);
  }
  leak_guard_end (&g, "short frames");
  kill_teardown ();
}

GST_END_TEST;

/* Hostile frames: the buffer has the size the caps say, but a GstVideoMeta
 * claims rows (stride, offset) that lie past its end.  The stream ends with
 * a clear error from onnxinfer, never a read outside the buffer (valgrind.sh
 * and ASan builds would see one). */
GST_START_TEST (test_kill_lying_video_meta)
{
  LeakGuard g;
  guint k, i;

  kill_setup ();
  leak_guard_begin (&g, warmup, NULL);
  for (k = 0; k < 3; k++) {
    gchar *d = g_strdup_printf ("appsrc name=src caps=\"%s\" format=time "
        "max-bytes=0 ! onnxinfer name=nn %s ! fakesink sync=false",
        model_caps, nn_props);
    GstElement *p = longrun_launch (d);
    GstElement *nn = get (p, "nn");
    GstElement *src = get (p, "src");
    GstVideoInfo info;
    GstCaps *caps = gst_caps_from_string (model_caps);
    GstBuffer *bad;
    gsize offset[GST_VIDEO_MAX_PLANES] = { 0 };
    gint stride[GST_VIDEO_MAX_PLANES] = { 0 };
    GstMessage *msg;

    fail_unless (gst_video_info_from_caps (&info, caps));
    gst_caps_unref (caps);
    stride[0] = GST_VIDEO_INFO_PLANE_STRIDE (&info, 0);
    if (k == 0)                 /* rows 4x apart */
      stride[0] *= 4;
    else if (k == 1)            /* the image starts near the end */
      offset[0] = GST_VIDEO_INFO_SIZE (&info) - 16;
    else                        /* negative stride: rows before the start */
      stride[0] = -stride[0];
    fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    for (i = 0; i < 3; i++)
      gst_app_src_push_buffer (GST_APP_SRC (src), gray_frame (frame_size (),
              i));
    bad = gray_frame (frame_size (), 3);
    gst_buffer_add_video_meta_full (bad, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_INFO_FORMAT (&info), GST_VIDEO_INFO_WIDTH (&info),
        GST_VIDEO_INFO_HEIGHT (&info), 1, offset, stride);
    gst_app_src_push_buffer (GST_APP_SRC (src), bad);
    gst_app_src_push_buffer (GST_APP_SRC (src), gray_frame (frame_size (), 4));
    gst_app_src_end_of_stream (GST_APP_SRC (src));
    msg = wait_message (p, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    g_print ("  video meta with %s: %s, %" G_GUINT64_FORMAT " inferred\n",
        k == 0 ? "4x the stride" : k == 1 ? "the image at the end" :
        "a negative stride", GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR ?
        "error" : "EOS", get_u64 (nn, "frames-inferred"));
    expect_error_from (msg, "nn", NULL);
    gst_message_unref (msg);
    fail_unless_equals_uint64 (get_u64 (nn, "frames-inferred"), 3);
    stop_checked (p, nn);
    gst_object_unref (src);
    gst_object_unref (nn);
    gst_object_unref (p);
    g_free (d);
  }
  leak_guard_end (&g, "lying video meta");
  kill_teardown ();
}

GST_END_TEST;

/* A failing element (identity error-after) upstream and downstream of
 * onnxinfer. */
GST_START_TEST (test_kill_failing_element)
{
  LeakGuard g;
  guint k;

  kill_setup ();
  leak_guard_begin (&g, warmup, NULL);
  for (k = 0; k < 2; k++) {
    gchar *d = k == 0 ?
        g_strdup_printf ("videotestsrc pattern=ball ! %s ! identity "
        "name=bad error-after=25 ! queue max-size-buffers=4 ! onnxinfer "
        "name=nn %s ! queue max-size-buffers=4 ! fakesink sync=false",
        model_caps, nn_props) :
        g_strdup_printf ("videotestsrc pattern=ball ! %s ! queue "
        "max-size-buffers=4 ! onnxinfer name=nn %s ! identity name=bad "
        "error-after=25 ! fakesink sync=false", model_caps, nn_props);
    GstElement *p = longrun_launch (d);
    GstElement *nn = get (p, "nn");
    GstMessage *msg;
    guint64 inferred;

    fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    msg = wait_message (p, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    expect_error_from (msg, "bad", NULL);
    gst_message_unref (msg);
    inferred = get_u64 (nn, "frames-inferred");
    g_print ("  failing element %s onnxinfer after 25 frames: %"
        G_GUINT64_FORMAT " inferred\n", k == 0 ? "upstream of" :
        "downstream of", inferred);
    if (k == 0)
      fail_unless (inferred <= 24);
    else
      fail_unless (inferred >= 25);
    stop_checked (p, nn);
    gst_object_unref (nn);
    gst_object_unref (p);
    g_free (d);
  }
  leak_guard_end (&g, "failing element");
  kill_teardown ();
}

GST_END_TEST;

/* ---- flushing seeks ------------------------------------------------------ */

typedef struct
{
  GMutex lock;
  gboolean after_flush;
  guint flushes, checked, stale, buffers, no_meta;
} FlushCheck;

/* After a FLUSH_STOP, the first frame carries a fresh inference: never a
 * result kept (inference-interval) from before the seek. */
static GstPadProbeReturn
flush_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  FlushCheck *c = user_data;

  g_mutex_lock (&c->lock);
  if (info->type & GST_PAD_PROBE_TYPE_EVENT_FLUSH) {
    if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) ==
        GST_EVENT_FLUSH_STOP) {
      c->after_flush = TRUE;
      c->flushes++;
    }
  } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
    GstOnnxTensorMeta *m =
        gst_buffer_get_onnx_tensor_meta (GST_PAD_PROBE_INFO_BUFFER (info),
        "nn");
    c->buffers++;
    if (m == NULL)
      c->no_meta++;
    if (c->after_flush && m) {
      c->checked++;
      if (m->reused)
        c->stale++;
    }
    c->after_flush = FALSE;
  }
  g_mutex_unlock (&c->lock);
  return GST_PAD_PROBE_OK;
}

/* Flushing seeks, again and again, into a pipeline whose output pool is
 * exhausted (a synchronised sink holds the frames): the element is woken
 * from its wait, the stream goes on after each seek with fresh results. */
GST_START_TEST (test_kill_flushing_seeks)
{
  LeakGuard g;
  gchar *d;
  GstElement *p, *nn;
  GstPad *pad;
  FlushCheck c = { 0, };
  GstMessage *msg;
  guint i, n_seeks = env_uint ("ONNXINFER_KILL_SEEKS", 40);
  guint64 before;

  kill_setup ();
  g_mutex_init (&c.lock);
  leak_guard_begin (&g, warmup, NULL);
  /* inference-interval=1000: without a reset on flush every frame after a
   * seek would carry the result of a frame from before it. */
  d = g_strdup_printf ("videotestsrc pattern=ball ! %s ! onnxinfer name=nn "
      "%s output-pool-size=2 inference-interval=1000 ! queue "
      "max-size-buffers=6 ! fakesink name=sink sync=true", model_caps,
      nn_props);
  p = longrun_launch (d);
  nn = get (p, "nn");
  pad = gst_element_get_static_pad (nn, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_EVENT_FLUSH, flush_probe, &c, NULL);
  gst_object_unref (pad);

  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (p, NULL, NULL, TIMEOUT),
      GST_STATE_CHANGE_SUCCESS);
  for (i = 0; i < n_seeks; i++) {
    GstClockTime pos = (GstClockTime) ((i * 7) % 50) * GST_SECOND / 10;
    GstSeekFlags flags = GST_SEEK_FLAG_FLUSH |
        (i % 3 == 0 ? GST_SEEK_FLAG_ACCURATE : 0);
    g_usleep ((i * 13 % 40) * 1000);
    fail_unless (gst_element_seek_simple (p, GST_FORMAT_TIME, flags, pos),
        "seek %u", i);
    /* Every few seeks, let the pipeline preroll again before the next. */
    if (i % 4 == 3)
      fail_unless_equals_int (gst_element_get_state (p, NULL, NULL, TIMEOUT),
          GST_STATE_CHANGE_SUCCESS);
  }
  fail_unless_equals_int (gst_element_get_state (p, NULL, NULL, TIMEOUT),
      GST_STATE_CHANGE_SUCCESS);
  /* The stream goes on after the last seek. */
  before = get_u64 (nn, "frames-inferred");
  g_usleep (G_USEC_PER_SEC / 2);
  msg = pop_error (p);
  if (msg)
    expect_error_from (msg, NULL, "no error expected");
  g_mutex_lock (&c.lock);
  g_print ("  %u flushing seeks: %u flushes seen, %u frames out, %"
      G_GUINT64_FORMAT " inferences (inference-interval=1000), %u first "
      "frames after a flush checked, %u of them with a result from before "
      "the flush\n", n_seeks, c.flushes, c.buffers,
      get_u64 (nn, "frames-inferred"), c.checked, c.stale);
  fail_unless (c.flushes >= n_seeks / 2);
  fail_unless (c.checked >= 1);
  fail_unless_equals_int (c.stale, 0);
  fail_unless_equals_int (c.no_meta, 0);
  g_mutex_unlock (&c.lock);
  fail_unless (get_u64 (nn, "frames-inferred") >= before);
  stop_checked (p, nn);
  gst_object_unref (nn);
  gst_object_unref (p);
  g_free (d);
  leak_guard_end (&g, "flushing seeks");
  g_mutex_clear (&c.lock);
  kill_teardown ();
}

GST_END_TEST;

/* ---- NULL with frames in flight ------------------------------------------ */

/* NULL at once, or after a few frames, with frames queued on both sides of
 * the element and the output pool exhausted (the element waiting). */
GST_START_TEST (test_kill_null_in_flight)
{
  LeakGuard g;
  gchar *d;
  guint i, rounds = env_uint ("ONNXINFER_KILL_ROUNDS", 16);

  kill_setup ();
  leak_guard_begin (&g, warmup, NULL);
  d = g_strdup_printf ("videotestsrc pattern=ball ! %s ! queue "
      "max-size-buffers=4 ! onnxinfer name=nn %s output-pool-size=3 ! queue "
      "max-size-buffers=10 ! fakesink sync=true", model_caps, nn_props);
  for (i = 0; i < rounds; i++) {
    GstElement *p = longrun_launch (d);
    GstElement *nn = get (p, "nn");

    fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    if (i % 4 != 0) {
      fail_unless (wait_inferred (nn, i % 4, TIMEOUT_MS));
      g_usleep ((i * 7919 % 50) * 1000);
    }
    stop_checked (p, nn);
    fail_unless (nn_heap_now () == 0, "round %u: runtime heap %zu B", i,
        nn_heap_now ());
    gst_object_unref (nn);
    gst_object_unref (p);
  }
  g_print ("  %u pipelines set to NULL mid-stream (at once or after 1-3 "
      "frames + 0-49 ms)\n", rounds);
  g_free (d);
  leak_guard_end (&g, "NULL in flight");
  kill_teardown ();
}

GST_END_TEST;

/* ---- pads: block, unlink, swap ------------------------------------------- */

typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean blocked;
} Block;

static GstPadProbeReturn
block_cb (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Block *b = user_data;

  g_mutex_lock (&b->lock);
  b->blocked = TRUE;
  g_cond_signal (&b->cond);
  g_mutex_unlock (&b->lock);
  return GST_PAD_PROBE_OK;      /* stay blocked */
}

static void
wait_blocked (Block * b)
{
  gint64 end = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;

  g_mutex_lock (&b->lock);
  while (!b->blocked)
    fail_unless (g_cond_wait_until (&b->cond, &b->lock, end), "not blocked");
  g_mutex_unlock (&b->lock);
}

typedef struct
{
  GMutex lock;
  GQuark last_model;
  guint buffers, no_meta, two_metas;
} MetaSeen;

static GstPadProbeReturn
meta_seen_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  MetaSeen *m = user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstOnnxTensorMeta *meta = gst_buffer_get_onnx_tensor_meta (buf, NULL);

  g_mutex_lock (&m->lock);
  m->buffers++;
  if (meta == NULL)
    m->no_meta++;
  else
    m->last_model = meta->model_id;
  if (gst_buffer_get_n_onnx_tensor_metas (buf) > 1)
    m->two_metas++;
  g_mutex_unlock (&m->lock);
  return GST_PAD_PROBE_OK;
}

/* Drops the messages waiting on the bus; fails on an error among them. */
static void
drain_bus (GstElement * p)
{
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *msg;

  while ((msg = gst_bus_pop (bus))) {
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
      expect_error_from (msg, NULL, "no error expected");
    gst_message_unref (msg);
  }
  gst_object_unref (bus);
}

static void
finalized (gpointer data, GObject * where)
{
  *(gboolean *) data = TRUE;
}

/* onnxinfer is replaced by a new one (a new session) while the stream runs,
 * the usual way: block the queue's src pad, unlink, set the old element to
 * NULL, remove it, add and link the new one, unblock.  The old one is
 * finalized with nothing left; the frames go on with the new one's tensors. */
GST_START_TEST (test_kill_swap_element)
{
  LeakGuard g;
  gchar *d;
  GstElement *p, *q, *sink, *cur;
  GstPad *qsrc, *sinkpad;
  MetaSeen seen = { 0, };
  guint k, swaps = 4;

  kill_setup ();
  g_mutex_init (&seen.lock);
  leak_guard_begin (&g, warmup, NULL);
  d = g_strdup_printf ("videotestsrc pattern=ball ! %s ! queue name=q "
      "max-size-buffers=3 ! onnxinfer name=nn0 %s ! fakesink name=sink "
      "sync=false", model_caps, nn_props);
  p = longrun_launch (d);
  q = get (p, "q");
  sink = get (p, "sink");
  cur = get (p, "nn0");
  qsrc = gst_element_get_static_pad (q, "src");
  sinkpad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_BUFFER, meta_seen_probe,
      &seen, NULL);
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless (wait_inferred (cur, 3, TIMEOUT_MS));

  for (k = 1; k <= swaps; k++) {
    Block b = { 0, };
    gulong id;
    gboolean gone = FALSE;
    gchar *name = g_strdup_printf ("nn%u", k);
    GstElement *next;
    guint64 old_inferred;

    g_mutex_init (&b.lock);
    g_cond_init (&b.cond);
    id = gst_pad_add_probe (qsrc, GST_PAD_PROBE_TYPE_BLOCK_DOWNSTREAM,
        block_cb, &b, NULL);
    wait_blocked (&b);

    old_inferred = get_u64 (cur, "frames-inferred");
    gst_element_unlink_many (q, cur, sink, NULL);
    fail_unless_equals_int (gst_element_set_state (cur, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    fail_unless_equals_uint64 (get_u64 (cur, "peak-bytes"), 0);
    g_object_weak_ref (G_OBJECT (cur), finalized, &gone);
    fail_unless (gst_bin_remove (GST_BIN (p), cur));
    gst_object_unref (cur);
    /* The bus holds the old element's state-change messages (and them a
     * reference): drop them. */
    drain_bus (p);
    fail_unless (gone, "the removed onnxinfer was not finalized");

    next = gst_element_factory_make ("onnxinfer", name);
    fail_unless (next != NULL);
    g_object_set (next, "model-location", model, "threads", 1, NULL);
    gst_util_set_object_arg (G_OBJECT (next), "backend", test_backend ());
    gst_util_set_object_arg (G_OBJECT (next), "input-mean", "<127.5>");
    gst_util_set_object_arg (G_OBJECT (next), "input-std", "<127.5>");
    fail_unless (gst_bin_add (GST_BIN (p), next));
    fail_unless (gst_element_link_many (q, next, sink, NULL));
    fail_unless (gst_element_sync_state_with_parent (next));
    cur = gst_object_ref (next);
    gst_pad_remove_probe (qsrc, id);
    fail_unless (wait_inferred (cur, 3, TIMEOUT_MS), "%s does not run",
        name);
    g_print ("  swap %u: old element inferred %" G_GUINT64_FORMAT " frames, "
        "finalized; %s runs\n", k, old_inferred, name);
    g_mutex_clear (&b.lock);
    g_cond_clear (&b.cond);
    g_free (name);
  }
  /* The frames now carry the last element's tensors. */
  g_usleep (G_USEC_PER_SEC / 10);
  g_mutex_lock (&seen.lock);
  g_print ("  %u frames at the sink, %u without tensors, last from %s\n",
      seen.buffers, seen.no_meta, g_quark_to_string (seen.last_model));
  fail_unless_equals_string (g_quark_to_string (seen.last_model),
      GST_OBJECT_NAME (cur));
  fail_unless_equals_int (seen.no_meta, 0);
  fail_unless_equals_int (seen.two_metas, 0);
  g_mutex_unlock (&seen.lock);

  stop_checked (p, cur);
  gst_object_unref (cur);
  gst_object_unref (qsrc);
  gst_object_unref (sinkpad);
  gst_object_unref (q);
  gst_object_unref (sink);
  gst_object_unref (p);
  g_free (d);
  leak_guard_end (&g, "onnxinfer swapped mid-stream");
  g_mutex_clear (&seen.lock);
  kill_teardown ();
}

GST_END_TEST;

/* The element's src pad unlinked while it streams: not-linked ends the
 * stream with an error. */
GST_START_TEST (test_kill_unlink)
{
  LeakGuard g;
  gchar *d;
  GstElement *p, *nn, *sink;
  GstMessage *msg;

  kill_setup ();
  leak_guard_begin (&g, warmup, NULL);
  d = g_strdup_printf ("videotestsrc pattern=ball ! %s ! onnxinfer name=nn "
      "%s ! fakesink name=sink sync=false", model_caps, nn_props);
  p = longrun_launch (d);
  nn = get (p, "nn");
  sink = get (p, "sink");
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless (wait_inferred (nn, 5, TIMEOUT_MS));
  gst_element_unlink (nn, sink);
  msg = wait_message (p, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  expect_error_from (msg, NULL, "not-linked");
  gst_message_unref (msg);
  stop_checked (p, nn);
  gst_object_unref (sink);
  gst_object_unref (nn);
  gst_object_unref (p);
  g_free (d);
  leak_guard_end (&g, "src pad unlinked");
  kill_teardown ();
}

GST_END_TEST;

/* A frame with its tensors held in a blocked pad probe (after onnxinfer)
 * when the pipeline goes to NULL: the block is released, the frame dropped,
 * nothing left. */
GST_START_TEST (test_kill_null_while_blocked)
{
  LeakGuard g;
  gchar *d;
  guint k;

  kill_setup ();
  leak_guard_begin (&g, warmup, NULL);
  d = g_strdup_printf ("videotestsrc pattern=ball ! %s ! queue "
      "max-size-buffers=3 ! onnxinfer name=nn %s inference-interval=2 ! "
      "queue name=q max-size-buffers=3 ! fakesink sync=false", model_caps,
      nn_props);
  for (k = 0; k < 2; k++) {
    GstElement *p = longrun_launch (d);
    GstElement *nn = get (p, "nn");
    GstElement *blocked = k == 0 ? gst_object_ref (nn) : get (p, "q");
    GstPad *pad = gst_element_get_static_pad (blocked, "src");
    Block b = { 0, };

    g_mutex_init (&b.lock);
    g_cond_init (&b.cond);
    fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    fail_unless (wait_inferred (nn, 2, TIMEOUT_MS));
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BLOCK_DOWNSTREAM |
        GST_PAD_PROBE_TYPE_BUFFER, block_cb, &b, NULL);
    wait_blocked (&b);
    g_print ("  %s's src pad blocked on a frame, %" G_GUINT64_FORMAT
        " inferred: NULL\n", GST_OBJECT_NAME (blocked),
        get_u64 (nn, "frames-inferred"));
    stop_checked (p, nn);
    gst_object_unref (pad);
    gst_object_unref (blocked);
    gst_object_unref (nn);
    gst_object_unref (p);
    g_mutex_clear (&b.lock);
    g_cond_clear (&b.cond);
  }
  g_free (d);
  leak_guard_end (&g, "NULL while blocked");
  kill_teardown ();
}

GST_END_TEST;

static Suite *
kill_suite (void)
{
  Suite *s = suite_create ("onnxinfer-kill");
  TCase *tc = tcase_create ("kill");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_leak_guard_sees_leaks);
  tcase_add_test (tc, test_kill_eos);
  tcase_add_test (tc, test_kill_error_posted_upstream);
  tcase_add_test (tc, test_kill_short_frame);
  tcase_add_test (tc, test_kill_lying_video_meta);
  tcase_add_test (tc, test_kill_failing_element);
  tcase_add_test (tc, test_kill_flushing_seeks);
  tcase_add_test (tc, test_kill_null_in_flight);
  tcase_add_test (tc, test_kill_swap_element);
  tcase_add_test (tc, test_kill_unlink);
  tcase_add_test (tc, test_kill_null_while_blocked);
  return s;
}

int
main (int argc, char **argv)
{
  int skip;

  onnxinfer_check_setup_env ();
  if ((skip = longrun_check_backend ("onnxinfer-kill")) != 0)
    return skip;
  /* The leaks tracer must be active from gst_init on. */
  if (g_getenv ("GST_TRACERS") == NULL)
    g_setenv ("GST_TRACERS", "leaks", TRUE);
  gst_check_init (&argc, &argv);
  return gst_check_run_suite (kill_suite (), "onnxinfer-kill", __FILE__);
}
