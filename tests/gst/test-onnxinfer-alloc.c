/* test-onnxinfer-alloc.c - after warm-up, the element's per-frame path makes
 * no heap allocation and creates no GstMemory or GstBuffer.
 *
 * Three counters:
 *  - heap: malloc/calloc/realloc/memalign replaced in this executable (glibc
 *    "replacing malloc"); counted on the streaming thread between the buffer
 *    entering onnxinfer's sink pad and leaving its source pad (pad probes),
 *    i.e. basetransform + onnxinfer + the runtime on that thread;
 *  - runtime: nn_set_allocator() hooks, on every thread (kernel workers too);
 *  - GStreamer objects: a tracer hooked on "mini-object-created" counts the
 *    GstMemory and GstBuffer created inside the same window.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "onnxinfer-check.h"

/* ---- heap counting ------------------------------------------------------- */

extern void *__libc_malloc (size_t);
extern void *__libc_calloc (size_t, size_t);
extern void *__libc_realloc (void *, size_t);
extern void *__libc_memalign (size_t, size_t);
extern void __libc_free (void *);

static __thread int in_window;
static atomic_long heap_allocs;

#define COUNT() do { if (in_window) atomic_fetch_add (&heap_allocs, 1); } while (0)

void *
malloc (size_t n)
{
  COUNT ();
  return __libc_malloc (n);
}

void *
calloc (size_t a, size_t b)
{
  COUNT ();
  return __libc_calloc (a, b);
}

void *
realloc (void *p, size_t n)
{
  COUNT ();
  return __libc_realloc (p, n);
}

void
free (void *p)
{
  __libc_free (p);
}

void *
memalign (size_t al, size_t n)
{
  COUNT ();
  return __libc_memalign (al, n);
}

void *
aligned_alloc (size_t al, size_t n)
{
  COUNT ();
  return __libc_memalign (al, n);
}

int
posix_memalign (void **out, size_t al, size_t n)
{
  void *p;
  COUNT ();
  p = __libc_memalign (al, n);
  if (!p)
    return ENOMEM;
  *out = p;
  return 0;
}

void *
valloc (size_t n)
{
  COUNT ();
  return __libc_memalign (4096, n);
}

void *
pvalloc (size_t n)
{
  COUNT ();
  return __libc_memalign (4096, (n + 4095) & ~(size_t) 4095);
}

/* ---- runtime allocator hooks --------------------------------------------- */

static atomic_long rt_allocs;

static void *
rt_malloc (size_t n, void *ud)
{
  atomic_fetch_add (&rt_allocs, 1);
  return __libc_malloc (n);
}

static void *
rt_realloc (void *p, size_t n, void *ud)
{
  atomic_fetch_add (&rt_allocs, 1);
  return __libc_realloc (p, n);
}

static void
rt_free (void *p, void *ud)
{
  __libc_free (p);
}

/* ---- GstMiniObject creation tracer --------------------------------------- */

static atomic_long mem_created, buf_created, other_created;

typedef struct
{
  GstTracer parent;
} CountTracer;
typedef struct
{
  GstTracerClass parent_class;
} CountTracerClass;

G_DEFINE_TYPE (CountTracer, count_tracer, GST_TYPE_TRACER);

static void
on_mini_object_created (GObject * tracer, GstClockTime ts, GstMiniObject * obj)
{
  if (!in_window)
    return;
  if (GST_IS_BUFFER (obj))
    atomic_fetch_add (&buf_created, 1);
  else if (obj->type == GST_TYPE_MEMORY)
    atomic_fetch_add (&mem_created, 1);
  else
    atomic_fetch_add (&other_created, 1);
}

static void
count_tracer_class_init (CountTracerClass * klass)
{
}

static void
count_tracer_init (CountTracer * self)
{
  gst_tracing_register_hook (GST_TRACER (self), "mini-object-created",
      G_CALLBACK (on_mini_object_created));
}

/* ---- the measurement ----------------------------------------------------- */

typedef struct
{
  gint frame;
  gint warmup;
  long heap_steady, rt_steady, mem_steady, buf_steady, other_steady;
  long heap_first;
  long rt_at_warmup;
} Window;

static GstPadProbeReturn
enter_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Window *w = user_data;
  if (w->frame == w->warmup)
    w->rt_at_warmup = atomic_load (&rt_allocs);
  atomic_store (&heap_allocs, 0);
  atomic_store (&mem_created, 0);
  atomic_store (&buf_created, 0);
  atomic_store (&other_created, 0);
  in_window = 1;
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
leave_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Window *w = user_data;
  in_window = 0;
  if (w->frame == 0)
    w->heap_first = atomic_load (&heap_allocs);
  if (w->frame >= w->warmup) {
    w->heap_steady += atomic_load (&heap_allocs);
    w->mem_steady += atomic_load (&mem_created);
    w->buf_steady += atomic_load (&buf_created);
    w->other_steady += atomic_load (&other_created);
  }
  w->frame++;
  return GST_PAD_PROBE_OK;
}

/* Region mode: this many regions of interest are put on every frame before
 * it reaches onnxinfer (outside the measured window).  With text_lines,
 * frame k gets a varying number of text lines instead (1 .. 8, the widest
 * on every warm-up frame), each with a rotated-box as the DBNet decoder
 * puts on them. */
static gint rois_per_frame;
static gboolean text_lines;
static gint frames_seen;

static void
add_text_lines (GstBuffer * buf)
{
  gint k = frames_seen++, n = k < 5 ? 8 : 1 + (k * 5) % 8, i;

  for (i = 0; i < n; i++) {
    /* widths 60 .. 200 at a height of 24 (aspects 2.5 .. 8.3, all within
     * one halving of the widest), angles -10 .. 10 degrees */
    gdouble w = i == 0 ? 200 : 60 + (i * 37 + k * 13) % 140, h = 24;
    gdouble cx = 20 + w / 2 + (i % 2) * 60, cy = 20 + 30 * i;
    gdouble angle = -10 + (i * 7 + k) % 21;
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_add_video_region_of_interest_meta (buf, "text",
        (guint) (cx - w / 2), (guint) (cy - h / 2), (guint) w, (guint) h);
    roi->id = i + 1;
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("rotated-box", "cx", G_TYPE_DOUBLE, cx,
            "cy", G_TYPE_DOUBLE, cy, "width", G_TYPE_DOUBLE, w,
            "height", G_TYPE_DOUBLE, h, "angle", G_TYPE_DOUBLE, angle, NULL));
  }
}

static GstPadProbeReturn
add_rois_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstBuffer *buf = gst_buffer_make_writable (GST_PAD_PROBE_INFO_BUFFER (info));
  gint i;

  if (text_lines) {
    add_text_lines (buf);
    GST_PAD_PROBE_INFO_DATA (info) = buf;
    return GST_PAD_PROBE_OK;
  }
  for (i = 0; i < rois_per_frame; i++) {
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_add_video_region_of_interest_meta (buf, "face",
        10 + 37 * i, 20 + 11 * i, 40 + 9 * i, 50 + 5 * i);
    roi->id = i + 1;
  }
  GST_PAD_PROBE_INFO_DATA (info) = buf;
  return GST_PAD_PROBE_OK;
}

static void
measure (const gchar * label, const gchar * model, const gchar * caps,
    const gchar * props, gint frames)
{
  /* ONNXINFER_TEST_BACKEND=vulkan measures the Vulkan backend instead. */
  const gchar *backend = g_getenv ("ONNXINFER_TEST_BACKEND");
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%d ! %s ! "
      "onnxinfer name=nn backend=%s threads=1 model-location=%s %s ! "
      "fakesink sync=false enable-last-sample=false", frames, caps,
      backend ? backend : "cpu", model, props);
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  GstElement *nn;
  GstPad *sinkpad, *srcpad;
  Window w = { 0, 5, 0 };
  GstMessage *msg;
  long rt_total, rt_start = atomic_load (&rt_allocs);

  fail_unless (p != NULL, "%s", err ? err->message : "");
  nn = gst_bin_get_by_name (GST_BIN (p), "nn");
  sinkpad = gst_element_get_static_pad (nn, "sink");
  srcpad = gst_element_get_static_pad (nn, "src");
  if (rois_per_frame > 0 || text_lines)
    gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_BUFFER, add_rois_probe,
        NULL, NULL);
  gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_BUFFER, enter_probe, &w,
      NULL);
  gst_pad_add_probe (srcpad, GST_PAD_PROBE_TYPE_BUFFER, leave_probe, &w, NULL);

  msg = run_pipeline (p, 120 * GST_SECOND);
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  rt_total = atomic_load (&rt_allocs) - w.rt_at_warmup;

  g_print ("  %s: %d frames (%d warm-up), frames-inferred=%" G_GUINT64_FORMAT
      "; before: runtime %ld allocations (session creation, first runs), "
      "first frame's path %ld heap allocations; after warm-up, all frames "
      "together: heap %ld, runtime %ld, GstMemory %ld, GstBuffer %ld, other "
      "mini-objects %ld\n", label, w.frame, w.warmup, get_u64 (nn,
          "frames-inferred"), w.rt_at_warmup - rt_start, w.heap_first,
      w.heap_steady, rt_total, w.mem_steady, w.buf_steady, w.other_steady);
  fail_unless (w.rt_at_warmup > rt_start, "the runtime hooks do not count");
  fail_unless_equals_int (w.frame, frames);
  fail_unless (w.heap_first > 0, "the counter does not count");
  fail_unless_equals_int (w.heap_steady, 0);
  fail_unless_equals_int (rt_total, 0);
  fail_unless_equals_int (w.mem_steady, 0);
  fail_unless_equals_int (w.buf_steady, 0);

  gst_object_unref (sinkpad);
  gst_object_unref (srcpad);
  gst_object_unref (nn);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (p);
  g_free (desc);
}

static void
setup (void)
{
  static const nn_allocator hooks = { rt_malloc, rt_realloc, rt_free, NULL };
  static GstTracer *tracer;

  /* Before any session exists. */
  fail_unless_equals_int (nn_set_allocator (&hooks), NN_OK);
  if (tracer == NULL)
    tracer = g_object_new (count_tracer_get_type (), NULL);
}

GST_START_TEST (test_zero_alloc_blazeface)
{
  gchar *model = real_case_model ("blazeface_front_128");

  SKIP_IF_NULL (model, "blazeface_front_128");
  setup ();
  measure ("blazeface float NHWC, RGB->float", model,
      "video/x-raw,width=128,height=128,format=RGB",
      "input-mean=\"<127.5>\" input-std=\"<127.5>\"", 40);
  g_free (model);
}

GST_END_TEST;

GST_START_TEST (test_zero_alloc_ppocr_interval)
{
  gchar *model = real_case_model ("ppocr_mobile_cls");

  SKIP_IF_NULL (model, "ppocr_mobile_cls");
  setup ();
  measure ("ppocr cls float NCHW dynamic, BGRx->float, interval 2", model,
      "video/x-raw,width=192,height=48,format=BGRx",
      "channel-order=bgr inference-interval=2 input-mean=\"<127.5>\" "
      "input-std=\"<127.5>\"", 40);
  g_free (model);
}

GST_END_TEST;

/* The recognition pass of the OCR cascade: PP-OCRv4 rec on rotated text
 * lines (pad-right, the input width following the lines), 1 to 8 lines a
 * frame in batches of 4: after warm-up, no allocation whatever the number
 * of lines. */
GST_START_TEST (test_zero_alloc_text_lines)
{
  gchar *model = real_case_model ("ppocr_v4_rec");

  SKIP_IF_NULL (model, "ppocr_v4_rec");
  setup ();
  text_lines = TRUE;
  frames_seen = 0;
  measure ("ppocr rec, 1..8 rotated lines a frame, max-batch 4", model,
      "video/x-raw,width=320,height=256,format=RGB",
      "inference-region=roi-list object-class=text scale-mode=pad-right "
      "channel-order=bgr input-mean=127.5 input-std=127.5 pad-value=127.5 "
      "max-batch=4", 10);
  text_lines = FALSE;
  g_free (model);
}

GST_END_TEST;

GST_START_TEST (test_zero_alloc_zero_copy)
{
  gchar *model = test_model ("cast-u8-nhwc-8x8.onnx");

  setup ();
  measure ("uint8 NHWC zero-copy input", model,
      "video/x-raw,width=8,height=8,format=RGB", "", 40);
  g_free (model);
}

GST_END_TEST;

/* Real video in: decoder formats at their own size, resized and converted
 * inside the element. */
GST_START_TEST (test_zero_alloc_yuv)
{
  gchar *model = real_case_model ("blazeface_front_128");

  SKIP_IF_NULL (model, "blazeface_front_128");
  setup ();
  measure ("blazeface, NV12 1280x720 -> 128x128 float", model,
      "video/x-raw,width=1280,height=720,format=NV12",
      "input-mean=\"<127.5>\" input-std=\"<127.5>\"", 30);
  measure ("blazeface, I420 640x360 letterbox", model,
      "video/x-raw,width=640,height=360,format=I420",
      "scale-mode=letterbox input-mean=\"<127.5>\" input-std=\"<127.5>\"",
      30);
  measure ("blazeface, YUY2 320x240 crop", model,
      "video/x-raw,width=320,height=240,format=YUY2",
      "scale-mode=crop input-mean=\"<127.5>\" input-std=\"<127.5>\"", 30);
  g_free (model);
}

GST_END_TEST;

GST_START_TEST (test_zero_alloc_regions)
{
  gchar *b1 = test_model ("mean-colour-b1.onnx");
  gchar *dyn = test_model ("mean-colour-dyn.onnx");

  setup ();
  rois_per_frame = 6;
  measure ("regions: 6 per NV12 frame, batch 1", b1,
      "video/x-raw,width=640,height=360,format=NV12",
      "inference-region=roi-list", 30);
  measure ("regions: 6 per I420 frame, dynamic batch, max-batch 4", dyn,
      "video/x-raw,width=640,height=360,format=I420",
      "inference-region=roi-list max-batch=4 scale-mode=letterbox", 30);
  rois_per_frame = 0;
  g_free (b1);
  g_free (dyn);
}

GST_END_TEST;

static Suite *
alloc_suite (void)
{
  Suite *s = suite_create ("onnxinfer-alloc");
  TCase *tc = tcase_create ("zero-alloc");

  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_zero_alloc_blazeface);
  tcase_add_test (tc, test_zero_alloc_ppocr_interval);
  tcase_add_test (tc, test_zero_alloc_zero_copy);
  tcase_add_test (tc, test_zero_alloc_yuv);
  tcase_add_test (tc, test_zero_alloc_regions);
  tcase_add_test (tc, test_zero_alloc_text_lines);
  return s;
}

int
main (int argc, char **argv)
{
  onnxinfer_check_setup_env ();
  gst_check_init (&argc, &argv);
  return gst_check_run_suite (alloc_suite (), "onnxinfer-alloc", __FILE__);
}
