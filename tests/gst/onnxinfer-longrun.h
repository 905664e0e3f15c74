/* onnxinfer-longrun.h - helpers of the long-run tests (issue 7, pipeline
 * half): soak (test-onnxinfer-longrun.c), killing pipelines mid-stream
 * (test-onnxinfer-kill.c) and concurrency (test-onnxinfer-concurrency.c).
 *
 * Backend: each of these binaries runs with ONNXINFER_TEST_BACKEND=cpu
 * (default) or vulkan; meson registers one test per backend.  With vulkan
 * and no usable Vulkan device the binary prints why and exits 77, which
 * meson reports as SKIP (never as a pass).
 */
#ifndef ONNXINFER_LONGRUN_H
#define ONNXINFER_LONGRUN_H

#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "onnxinfer-check.h"

/* ---- backend ------------------------------------------------------------- */

static inline const gchar *
test_backend (void)
{
  const gchar *b = g_getenv ("ONNXINFER_TEST_BACKEND");
  return (b && g_str_equal (b, "vulkan")) ? "vulkan" : "cpu";
}

static inline gboolean
test_backend_is_vulkan (void)
{
  return g_str_equal (test_backend (), "vulkan");
}

/* Whether a Vulkan device is usable; the answer comes from a child process
 * so that the test process (which forks once per test) holds no Vulkan
 * driver state or driver threads.  @why gets the runtime's reason. */
static inline gboolean
vulkan_usable (gchar * why, gsize why_len)
{
  int fds[2];
  pid_t pid;
  int status = 0;
  ssize_t n;

  why[0] = '\0';
  if (pipe (fds) != 0)
    return FALSE;
  pid = fork ();
  if (pid == 0) {
    nn_error err;
    nn_status st;
    memset (&err, 0, sizeof err);
    close (fds[0]);
    st = nn_vulkan_available (&err);
    if (write (fds[1], err.msg, strlen (err.msg)) < 0)
      _exit (3);
    _exit (st == NN_OK ? 0 : 1);
  }
  close (fds[1]);
  n = read (fds[0], why, why_len - 1);
  why[n > 0 ? n : 0] = '\0';
  close (fds[0]);
  if (pid < 0 || waitpid (pid, &status, 0) != pid)
    return FALSE;
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

/* Call in main() before running the suite: 0 to go on, 77 to skip. */
static inline int
longrun_check_backend (const gchar * suite)
{
  gchar why[512];

  if (!test_backend_is_vulkan ())
    return 0;
  if (!vulkan_usable (why, sizeof why)) {
    g_print ("SKIP %s (backend=vulkan): no usable Vulkan device: %s\n", suite,
        why[0] ? why : "nn_vulkan_available() failed");
    return 77;
  }
  g_print ("%s: backend=vulkan on %s\n", suite, why);
  return 0;
}

/* ---- models -------------------------------------------------------------- */

/* The model of the soak: BlazeFace (real model) or a synthetic one (a Relu
 * over a 64x48 frame).  ONNXINFER_SOAK_MODEL=real|synthetic chooses; the
 * default is BlazeFace on the CPU and the synthetic model on Vulkan, where
 * lavapipe (Mesa's CPU implementation of Vulkan) takes ~0.3 s per BlazeFace
 * frame.  Without BlazeFace the synthetic model is used, with a note.  @caps
 * gets the raw video caps the model takes, @real whether it is BlazeFace. */
static inline gchar *
longrun_model (const gchar ** caps, gboolean * real)
{
  const gchar *want = g_getenv ("ONNXINFER_SOAK_MODEL");
  gboolean want_real = want ? g_str_equal (want, "real") :
      !test_backend_is_vulkan ();
  gchar *m = want_real ? real_case_model ("blazeface_front_128") : NULL;

  if (m) {
    *caps = "video/x-raw,format=RGB,width=128,height=128,framerate=30/1";
    *real = TRUE;
    return m;
  }
  if (want_real)
    g_print ("  NOTE blazeface_front_128 not found (ONNXINFER_REAL_CASES): "
        "using a synthetic model\n");
  *caps = "video/x-raw,format=RGB,width=64,height=48,framerate=30/1";
  *real = FALSE;
  return test_model ("relu-f32-nchw-dyn.onnx");
}

static inline GstElement *
longrun_launch (const gchar * desc)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);

  fail_unless (p != NULL && err == NULL, "parse '%s': %s", desc,
      err ? err->message : "?");
  return p;
}

static inline guint
env_uint (const gchar * name, guint def)
{
  const gchar *v = g_getenv (name);
  return (v && *v) ? (guint) strtoul (v, NULL, 10) : def;
}

static inline size_t
nn_heap_now (void)
{
  size_t cur = 0, peak = 0;
  nn_memory_usage (&cur, &peak);
  return cur;
}

/* Waits up to @timeout_ms for @e's frames-inferred to reach @n. */
static inline gboolean
wait_inferred (GstElement * e, guint64 n, guint timeout_ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  while (get_u64 (e, "frames-inferred") < n) {
    if (g_get_monotonic_time () > end)
      return FALSE;
    g_usleep (2000);
  }
  return TRUE;
}

/* ---- per-frame record of the tensors ------------------------------------- */

#define FRAMELOG_MAX_TENSORS 8

/* What a pad probe saw: per frame (GST_BUFFER_OFFSET, as videotestsrc
 * numbers its frames), a hash of the bytes of every tensor of one element's
 * meta and the per-tensor sum of the values (float32 tensors). */
typedef struct
{
  GMutex lock;
  gchar *element;               /* model id: the onnxinfer's name */
  guint expect_metas;           /* onnxinfer metas per buffer (0: no check) */
  guint capacity;
  guint64 *hash;                /* 0: frame not seen */
  gdouble *sum;                 /* capacity x FRAMELOG_MAX_TENSORS */
  guint n_tensors;
  guint buffers;                /* buffers seen */
  guint with_meta;              /* ... carrying the element's meta */
  guint bad;                    /* ... with a wrong number of metas */
  guint reused;                 /* ... whose meta was a reused result */
  guint64 last_offset;
} FrameLog;

static inline FrameLog *
frame_log_new (const gchar * element, guint capacity, guint expect_metas)
{
  FrameLog *l = g_new0 (FrameLog, 1);

  g_mutex_init (&l->lock);
  l->element = g_strdup (element);
  l->expect_metas = expect_metas;
  l->capacity = capacity;
  l->hash = g_new0 (guint64, capacity);
  l->sum = g_new0 (gdouble, (gsize) capacity * FRAMELOG_MAX_TENSORS);
  return l;
}

static inline void
frame_log_free (FrameLog * l)
{
  g_mutex_clear (&l->lock);
  g_free (l->element);
  g_free (l->hash);
  g_free (l->sum);
  g_free (l);
}

static inline guint64
fnv1a (guint64 h, const guint8 * p, gsize n)
{
  gsize i;
  for (i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static inline GstPadProbeReturn
frame_log_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  FrameLog *l = user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstOnnxTensorMeta *meta = gst_buffer_get_onnx_tensor_meta (buf, l->element);
  guint64 off = GST_BUFFER_OFFSET (buf);
  guint n_metas = gst_buffer_get_n_onnx_tensor_metas (buf);

  g_mutex_lock (&l->lock);
  l->buffers++;
  l->last_offset = off;
  if (l->expect_metas && n_metas != l->expect_metas)
    l->bad++;
  if (meta) {
    guint64 h = 0xcbf29ce484222325ull;
    guint i;
    l->with_meta++;
    if (meta->reused)
      l->reused++;
    l->n_tensors = meta->n_tensors;
    for (i = 0; i < meta->n_tensors; i++) {
      const GstOnnxTensor *t = &meta->tensors[i];
      h = fnv1a (h, t->data, t->size);
      if (off < l->capacity && i < FRAMELOG_MAX_TENSORS &&
          t->data_type == GST_ONNX_TENSOR_DATA_TYPE_FLOAT32) {
        const gfloat *f = t->data;
        gdouble s = 0.0;
        gsize j;
        for (j = 0; j < t->size / sizeof (gfloat); j++)
          s += f[j];
        l->sum[off * FRAMELOG_MAX_TENSORS + i] = s;
      }
    }
    if (off < l->capacity)
      l->hash[off] = h ? h : 1;
  }
  g_mutex_unlock (&l->lock);
  return GST_PAD_PROBE_OK;
}

static inline gulong
frame_log_attach (FrameLog * l, GstElement * pipeline, const gchar * element,
    const gchar * pad_name)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (pipeline), element);
  GstPad *pad;
  gulong id;

  fail_unless (e != NULL, "no element %s", element);
  pad = gst_element_get_static_pad (e, pad_name);
  fail_unless (pad != NULL);
  id = gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, frame_log_probe, l,
      NULL);
  gst_object_unref (pad);
  gst_object_unref (e);
  return id;
}

/* Frames 0..n-1 of @a and @b: byte-identical tensors (@exact), or sums within
 * a relative tolerance @rtol (different backends).  Returns the number of
 * frames compared; fails on the first difference. */
static inline guint
frame_log_compare (FrameLog * a, FrameLog * b, guint n, gboolean exact,
    gdouble rtol, const gchar * what)
{
  guint i, k, compared = 0;

  for (i = 0; i < n && i < a->capacity && i < b->capacity; i++) {
    fail_unless (a->hash[i] != 0 && b->hash[i] != 0,
        "%s: frame %u missing (%s: %s, %s: %s)", what, i, a->element,
        a->hash[i] ? "seen" : "missing", b->element,
        b->hash[i] ? "seen" : "missing");
    if (exact) {
      fail_unless (a->hash[i] == b->hash[i],
          "%s: frame %u differs between %s and %s", what, i, a->element,
          b->element);
    } else {
      for (k = 0; k < MIN (a->n_tensors, FRAMELOG_MAX_TENSORS); k++) {
        gdouble x = a->sum[i * FRAMELOG_MAX_TENSORS + k];
        gdouble y = b->sum[i * FRAMELOG_MAX_TENSORS + k];
        fail_unless (fabs (x - y) <= rtol * MAX (1.0, MAX (fabs (x),
                    fabs (y))), "%s: frame %u tensor %u: sum %.9g (%s) vs "
            "%.9g (%s)", what, i, k, x, a->element, y, b->element);
      }
    }
    compared++;
  }
  return compared;
}

/* ---- leaks tracer (GST_TRACERS=leaks set by main()) ---------------------- */

static inline GstTracer *
leaks_tracer_get (void)
{
  GList *tracers = gst_tracing_get_active_tracers (), *l;
  GstTracer *found = NULL;

  for (l = tracers; l; l = l->next)
    if (g_str_equal (G_OBJECT_TYPE_NAME (l->data), "GstLeaksTracer"))
      found = gst_object_ref (l->data);
  g_list_free_full (tracers, gst_object_unref);
  return found;
}

/* Objects (GstObject and GstMiniObject: buffers, memories, pools, caps,
 * events...) created since the tracking started and alive now, matched by
 * address; their type names go to @types. */
static inline guint
leaks_alive_since_start (GstTracer * tracer, GString * types)
{
  GstStructure *cp = NULL;
  GHashTable *count = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
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
      const gchar *type = gst_structure_get_string (o, "type-name");
      gint *c = g_hash_table_lookup (count, addr);
      if (c == NULL) {
        c = g_new0 (gint, 2);
        g_hash_table_insert (count, g_strdup (addr), c);
      }
      c[0] += l == 0 ? 1 : -1;
      if (l == 0 && type)
        c[1] = (gint) g_quark_from_string (type);
    }
  }
  g_hash_table_iter_init (&iter, count);
  while (g_hash_table_iter_next (&iter, &key, &value)) {
    gint *c = value;
    if (c[0] > 0) {
      alive += c[0];
      if (types)
        g_string_append_printf (types, " %s@%s", c[1] ?
            g_quark_to_string ((GQuark) c[1]) : "?", (const gchar *) key);
    }
  }
  g_hash_table_unref (count);
  gst_structure_free (cp);
  return alive;
}

/* Start of a leak-checked section: run @warmup once (one-time objects:
 * plugin features, pad templates, static caps, the system clock), then start
 * tracking. */
typedef struct
{
  GstTracer *tracer;
} LeakGuard;

static inline void
leak_guard_begin (LeakGuard * g, void (*warmup) (gpointer), gpointer data)
{
  g->tracer = leaks_tracer_get ();
  fail_unless (g->tracer != NULL, "GST_TRACERS=leaks is not active");
  if (warmup)
    warmup (data);
  gst_task_cleanup_all ();
  g_signal_emit_by_name (g->tracer, "activity-start-tracking");
}

/* End: every pipeline must be gone.  Nothing created since the start may be
 * alive, and the runtime's heap must be back to zero. */
static inline void
leak_guard_end (LeakGuard * g, const gchar * what)
{
  GString *types = g_string_new (NULL);
  guint alive;
  size_t heap;

  /* Streaming threads end asynchronously: join them before counting. */
  gst_task_cleanup_all ();
  alive = leaks_alive_since_start (g->tracer, types);
  heap = nn_heap_now ();
  g_signal_emit_by_name (g->tracer, "activity-stop-tracking");
  g_print ("  %s: %u GStreamer objects left (buffers, memories, pools, "
      "caps...), runtime heap %zu B\n", what, alive, heap);
  fail_unless (alive == 0, "%s: objects left:%s", what, types->str);
  fail_unless (heap == 0, "%s: runtime heap not back to zero: %zu B", what,
      heap);
  g_string_free (types, TRUE);
  gst_object_unref (g->tracer);
  g->tracer = NULL;
}

#endif /* ONNXINFER_LONGRUN_H */
