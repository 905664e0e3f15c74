/* bench-image.c - pre-processing speed: nn_image_convert() against
 * GStreamer's own videoconvert ! videoscale doing the same job, in one run.
 * Driven by tools/bench-preproc; information only, never pass/fail.
 *
 *   bench-image [--frames N] [--rounds R] [--threads 1,2] [--no-gst]
 *
 * For each source format (NV12, I420, BGRx at 1920x1080), destination
 * (128x128x3 float NHWC, 640x640x3 float NCHW; stretch) and thread count:
 *   ours    nn_image_convert() of one in-memory frame into a tensor, on a
 *           session's workers (threads > 1), N times; ms per frame.
 *   gst     appsrc ! videoconvert n-threads=T ! videoscale n-threads=T !
 *           video/x-raw,format=RGB,width=W,height=H ! fakesink: N frames
 *           wrapping the same memory are queued in appsrc up front, and the
 *           median time between consecutive fakesink handoffs (after a few
 *           warm-up frames) is the chain's cost per frame: the streaming
 *           thread runs both elements back to back on queued frames, so
 *           queueing and pushing are not timed.  Its output is 8-bit RGB, ours float: the job the
 *           element would otherwise need the chain for.
 * Both sides report the median ms per frame of a round; rounds alternate
 * ours and gst, and each side's best round is printed, then the ratio
 * ours / gst.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/model_builder.h"
#include "image/image_internal.h"
#include "nn_image.h"

#ifdef HAVE_GST
#include <gst/gst.h>
#endif

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct frame {
  nn_pixel_format f;
  const char *gst_name;
  int w, h;
  nn_image img;
  uint8_t *data;
  size_t size;
} frame;

/* A frame with smooth content plus noise (the content does not change the
 * cost of either side). */
static void frame_make(frame *fr, nn_pixel_format f, const char *gname, int w, int h) {
  memset(fr, 0, sizeof *fr);
  fr->f = f;
  fr->gst_name = gname;
  fr->w = w;
  fr->h = h;
  fr->img.format = f;
  fr->img.width = w;
  fr->img.height = h;
  fr->img.matrix = NN_YUV_BT709;
  size_t off[3] = {0, 0, 0};
  if (f == NN_PIX_BGRX) {
    fr->img.strides[0] = w * 4;
    fr->size = (size_t)w * 4 * h;
  } else {
    /* GStreamer's default layout for I420/NV12 at even sizes */
    fr->img.strides[0] = w;
    fr->img.strides[1] = f == NN_PIX_NV12 ? w : w / 2;
    fr->img.strides[2] = w / 2;
    off[1] = (size_t)w * h;
    off[2] = off[1] + (size_t)(w / 2) * (h / 2);
    fr->size = (size_t)w * h * 3 / 2;
  }
  fr->data = malloc(fr->size);
  uint32_t r = 12345;
  for (size_t i = 0; i < fr->size; i++) {
    r = r * 1664525u + 1013904223u;
    fr->data[i] = (uint8_t)((i % 251) + (r >> 28));
  }
  for (int p = 0; p < nn_pixel_format_planes(f); p++)
    fr->img.planes[p] = fr->data + off[p];
}

typedef struct target {
  int w, h;
  nn_tensor_layout layout;
  const char *name;
} target;

/* Median ms per frame of `frames` conversions. */
static double ours_round(nn_image_converter *cv, const frame *fr, const target *t, float *out,
                         nn_session *s, int frames) {
  nn_image_params p;
  nn_image_params_init(&p);
  nn_image_dest d = {out, (size_t)t->w * t->h * 3 * sizeof(float), NN_DTYPE_FLOAT, t->layout, 3,
                     t->w, t->h, 0};
  double *ms = malloc(sizeof(double) * frames);
  nn_error err;
  for (int i = 0; i < 3; i++)   /* warm: tables, scratch, caches */
    if (nn_image_convert(cv, &fr->img, &p, &d, s, NULL, &err) != NN_OK) {
      fprintf(stderr, "convert: %s\n", err.msg);
      exit(1);
    }
  for (int i = 0; i < frames; i++) {
    double t0 = now_ms();
    nn_image_convert(cv, &fr->img, &p, &d, s, NULL, &err);
    ms[i] = now_ms() - t0;
  }
  qsort(ms, frames, sizeof *ms, cmp_d);
  double med = ms[frames / 2];
  free(ms);
  return med;
}

#ifdef HAVE_GST
typedef struct handoffs {
  double *t;
  int n, cap;
} handoffs;

static void on_handoff(GstElement *sink, GstBuffer *buf, GstPad *pad, gpointer ud) {
  (void)sink, (void)buf, (void)pad;
  handoffs *h = ud;
  if (h->n < h->cap)
    h->t[h->n++] = now_ms();
}

static char g_negotiated[512];

/* ms per frame of the chain over `frames` frames after `warm` ones; < 0 on
 * failure. */
static double gst_round(const frame *fr, const target *t, int threads, int frames) {
  const int warm = 5, total = warm + frames;
  char desc[1024];
  snprintf(desc, sizeof desc,
           "appsrc name=src format=time max-bytes=0 caps=video/x-raw,format=%s,width=%d,"
           "height=%d,framerate=30/1 ! videoconvert name=conv n-threads=%d ! videoscale "
           "n-threads=%d ! video/x-raw,format=RGB,width=%d,height=%d ! fakesink name=sink "
           "sync=false signal-handoffs=true",
           fr->gst_name, fr->w, fr->h, threads, threads, t->w, t->h);
  GError *gerr = NULL;
  GstElement *pipe = gst_parse_launch(desc, &gerr);
  if (!pipe) {
    fprintf(stderr, "gst: %s\n", gerr ? gerr->message : "?");
    return -1;
  }
  GstElement *src = gst_bin_get_by_name(GST_BIN(pipe), "src");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipe), "sink");
  handoffs h = {calloc(total, sizeof(double)), 0, total};
  g_signal_connect(sink, "handoff", G_CALLBACK(on_handoff), &h);
  gst_element_set_state(pipe, GST_STATE_PLAYING);
  for (int i = 0; i < total; i++) {
    GstBuffer *b = gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, fr->data, fr->size, 0,
                                               fr->size, NULL, NULL);
    GST_BUFFER_PTS(b) = (GstClockTime)i * GST_SECOND / 30;
    GST_BUFFER_DURATION(b) = GST_SECOND / 30;
    GstFlowReturn ret;
    g_signal_emit_by_name(src, "push-buffer", b, &ret);
    gst_buffer_unref(b);
  }
  GstFlowReturn ret;
  g_signal_emit_by_name(src, "end-of-stream", &ret);
  GstBus *bus = gst_element_get_bus(pipe);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  double res = -1;
  if (msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS && h.n == total) {
    /* the median time between handoffs: the same statistic as ours */
    for (int i = 0; i < frames; i++)
      h.t[i] = h.t[warm + i] - h.t[warm + i - 1];
    qsort(h.t, frames, sizeof(double), cmp_d);
    res = h.t[frames / 2];
  } else
    fprintf(stderr, "gst: pipeline failed (%d of %d frames)\n", h.n, total);
  if (!g_negotiated[0]) {
    GstElement *conv = gst_bin_get_by_name(GST_BIN(pipe), "conv");
    GstPad *pad = gst_element_get_static_pad(conv, "src");
    GstCaps *caps = gst_pad_get_current_caps(pad);
    if (caps) {
      gchar *s = gst_caps_to_string(caps);
      snprintf(g_negotiated, sizeof g_negotiated, "%s", s);
      g_free(s);
      gst_caps_unref(caps);
    }
    gst_object_unref(pad);
    gst_object_unref(conv);
  }
  if (msg)
    gst_message_unref(msg);
  gst_object_unref(bus);
  gst_element_set_state(pipe, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipe);
  free(h.t);
  return res;
}
#endif

int main(int argc, char **argv) {
  int frames = 50, rounds = 3, use_gst = 1;
  int threads[8] = {1, 2}, n_threads = 2;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--frames") && i + 1 < argc) {
      frames = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      n_threads = 0;
      for (char *s = strtok(argv[++i], ","); s && n_threads < 8; s = strtok(NULL, ","))
        threads[n_threads++] = atoi(s);
    } else if (!strcmp(argv[i], "--no-gst")) {
      use_gst = 0;
    } else {
      fprintf(stderr, "usage: bench-image [--frames N] [--rounds R] [--threads 1,2] [--no-gst]\n");
      return 1;
    }
  }
  if (frames < 1)
    frames = 1;
  if (rounds < 1)
    rounds = 1;
#ifdef HAVE_GST
  if (use_gst)
    gst_init(NULL, NULL);
#else
  if (use_gst)
    printf("(built without GStreamer: ours only)\n");
  use_gst = 0;
#endif
  frame frs[3];
  frame_make(&frs[0], NN_PIX_NV12, "NV12", 1920, 1080);
  frame_make(&frs[1], NN_PIX_I420, "I420", 1920, 1080);
  frame_make(&frs[2], NN_PIX_BGRX, "BGRx", 1920, 1080);
  const target tgs[2] = {{128, 128, NN_LAYOUT_NHWC, "128x128x3 f32 NHWC"},
                         {640, 640, NN_LAYOUT_NCHW, "640x640x3 f32 NCHW"}};
  float *out = malloc(640 * 640 * 3 * sizeof(float));
  nn_image_converter *cv = NULL;
  nn_image_converter_new(&cv);

  printf("image kernels: %s; %d frames a round, best of %d rounds\n",
         nn_image_simd_get() ? "avx2" : "portable", frames, rounds);
  printf("%-5s %-19s %7s %10s %10s %8s\n", "src", "dst", "threads", "ours ms", "gst ms",
         "ours/gst");
  for (int ti = 0; ti < n_threads; ti++) {
    nn_session *s = threads[ti] > 1 ? mb_worker_session(threads[ti], NULL) : NULL;
    for (int fi = 0; fi < 3; fi++)
      for (int gi = 0; gi < 2; gi++) {
        double ours = 1e30, gst = 1e30;
        for (int r = 0; r < rounds; r++) {
          double o = ours_round(cv, &frs[fi], &tgs[gi], out, s, frames);
          ours = o < ours ? o : ours;
#ifdef HAVE_GST
          if (use_gst) {
            double g = gst_round(&frs[fi], &tgs[gi], threads[ti], frames);
            if (g > 0 && g < gst)
              gst = g;
          }
#endif
        }
        if (gst < 1e29)
          printf("%-5s %-19s %7d %10.3f %10.3f %8.3f\n", frs[fi].gst_name, tgs[gi].name,
                 threads[ti], ours, gst, ours / gst);
        else
          printf("%-5s %-19s %7d %10.3f %10s %8s\n", frs[fi].gst_name, tgs[gi].name, threads[ti],
                 ours, "-", "-");
        fflush(stdout);
      }
    nn_session_free(s);
  }
#ifdef HAVE_GST
  if (g_negotiated[0])
    printf("gst: videoconvert produced %s\n", g_negotiated);
#endif
  nn_image_converter_free(cv);
  for (int i = 0; i < 3; i++)
    free(frs[i].data);
  free(out);
  return 0;
}
