/* ocr-read - read the text of images and videos with the onnxinfer cascade.
 *
 * SPDX-License-Identifier: Apache-2.0
 *
 * The application behind pipelines/ocr.sh, and an example of embedding the
 * plugin: one GStreamer pipeline,
 *
 *   filesrc ! decodebin ! videoconvert !
 *   onnxinfer (PP-OCRv4 det) ! tensordecoder scheme=dbnet !
 *   [onnxinfer (PP-OCR direction classifier, roi-list, pad-right) !
 *    tensordecoder scheme=text-direction !]
 *   onnxinfer (PP-OCRv4 rec, roi-list, pad-right) ! tensordecoder scheme=ctc !
 *   [roioverlay ! tee -> encoder ! filesink] appsink
 *
 * whose sessions live as long as the process: between files the pipeline
 * goes back to READY (onnxinfer keeps its sessions there) and the next file
 * is read.  Each frame's `text` regions are printed in reading order (top
 * to bottom; lines whose vertical centres are within half a line height of
 * each other, left to right), one per line on stdout; nothing else goes to
 * stdout.  Several files: each file's lines are preceded by "==> FILE <==".
 * A video prints a frame's lines when they differ from the previous frame's
 * (a blank line between two such blocks).
 *
 * Preprocessing is PaddleOCR's: the detector sees BGR with ImageNet
 * mean/std, the longer side limited to 960 (rounded to multiples of 32);
 * lines are cut upright along their rotated boxes, 48 high, as wide as
 * their aspect ratio (PaddleOCR's resize_norm_img), padded right; the
 * classifier's lines are (x/255 - 0.5) / 0.5 padded with 0; lines below
 * --min-confidence (PaddleOCR's drop_score, 0.5) are dropped.  Three
 * choices differ from PaddleOCR's defaults, each measured with
 * tools/bench-ocr on the hand-transcribed images: boxes are kept from a
 * mean probability of 0.5 (not 0.6); the recogniser reads one line a run
 * (its batch of 6 costs more per line on a CPU: 92 against 75 ms for a
 * 48x1632 line on 2 threads, the working set outgrowing the caches); and
 * its lines are x/255, padded with black (0), not (x/255 - 0.5) / 0.5
 * padded with 0: it then keeps more of the spaces between words (word
 * accuracy over the five images 76.7 -> 82.5 %, CER 0.92 -> 0.83 %; no
 * image worse, imageTextR 57 -> 67 %, scenetext06 20 -> 60 %; black
 * padding with (x/255 - 0.5) / 0.5, or grey with x/255, is worse than
 * either: 61 and 70 %).
 *
 * Exit status: 0 when every file was read, 1 when one failed (the error on
 * stderr), 2 for bad arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gst/gst.h>
#include <gst/video/video.h>

typedef struct
{
  gdouble top, bottom, left;    /* reading-order keys, frame pixels */
  gchar *text;
} Line;

typedef struct
{
  gchar *det, *rec, *cls, *dict, *annotate, *backend;
  gint threads;
  gdouble min_confidence, box_threshold, unclip_ratio, space_threshold;
} Options;

static void
line_clear (gpointer p)
{
  g_free (((Line *) p)->text);
}

/* Top to bottom; two lines overlapping vertically by more than half the
 * smaller height are one row, read left to right. */
static gint
line_order (gconstpointer pa, gconstpointer pb)
{
  const Line *a = pa, *b = pb;
  gdouble ha = a->bottom - a->top, hb = b->bottom - b->top;
  gdouble overlap = MIN (a->bottom, b->bottom) - MAX (a->top, b->top);

  if (overlap > 0.5 * MIN (ha, hb))
    return a->left < b->left ? -1 : a->left > b->left;
  return a->top < b->top ? -1 : a->top > b->top;
}

/* The vertical extent and left edge of a text region: its rotated box's
 * corners when it has one, else its rectangle. */
static void
region_extent (GstVideoRegionOfInterestMeta * roi, Line * l)
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi,
      "rotated-box");
  const GValue *pts = s ? gst_structure_get_value (s, "points") : NULL;
  guint k;

  l->top = roi->y;
  l->bottom = roi->y + roi->h;
  l->left = roi->x;
  if (!pts || !GST_VALUE_HOLDS_ARRAY (pts) ||
      gst_value_array_get_size (pts) != 4)
    return;
  /* the line's middle: the mean of the corners' y +- half the box height
   * keeps a slanted line's rows apart better than its bounding box */
  {
    gdouble cy = 0, h = 0, left = G_MAXDOUBLE;
    for (k = 0; k < 4; k++) {
      const GValue *p = gst_value_array_get_value (pts, k);
      if (!GST_VALUE_HOLDS_ARRAY (p) || gst_value_array_get_size (p) != 2)
        return;
      cy += g_value_get_double (gst_value_array_get_value (p, 1)) / 4;
      left = MIN (left, g_value_get_double (gst_value_array_get_value (p,
                  0)));
    }
    if (!gst_structure_get_double (s, "height", &h))
      return;
    l->top = cy - h / 2;
    l->bottom = cy + h / 2;
    l->left = left;
  }
}

/* The lines of one frame, in reading order, '\n'-terminated; caller-owned. */
static gchar *
frame_text (GstBuffer * buf, gdouble min_conf)
{
  GArray *lines = g_array_new (FALSE, TRUE, sizeof (Line));
  GstVideoRegionOfInterestMeta *roi;
  gpointer state = NULL;
  GString *out = g_string_new (NULL);
  guint i;

  g_array_set_clear_func (lines, line_clear);
  while ((roi = (GstVideoRegionOfInterestMeta *)
          gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstStructure *t = gst_video_region_of_interest_meta_get_param (roi,
        "text");
    const gchar *text;
    gdouble conf = 1.0;
    Line l;

    if (!t || !(text = gst_structure_get_string (t, "text")) || !text[0])
      continue;
    gst_structure_get_double (t, "confidence", &conf);
    if (conf < min_conf)
      continue;
    region_extent (roi, &l);
    l.text = g_strdup (text);
    g_array_append_val (lines, l);
  }
  g_array_sort (lines, line_order);
  for (i = 0; i < lines->len; i++)
    g_string_append_printf (out, "%s\n", g_array_index (lines, Line, i).text);
  g_array_free (lines, TRUE);
  return g_string_free (out, FALSE);
}

/* Prints the lines of a frame when they differ from the previous frame's
 * (*last, updated), a blank line between two blocks. */
static void
print_frame (GstBuffer * buf, gdouble min_conf, gchar ** last,
    gboolean * first)
{
  gchar *text = frame_text (buf, min_conf);

  if (*last && strcmp (text, *last) == 0) {
    g_free (text);
    return;
  }
  if (!*first)
    fputs ("\n", stdout);
  fputs (text, stdout);
  *first = FALSE;
  g_free (*last);
  *last = text;
}

static gboolean
is_image (const gchar * path)
{
  return g_str_has_suffix (path, ".png") || g_str_has_suffix (path, ".PNG") ||
      g_str_has_suffix (path, ".jpg") || g_str_has_suffix (path, ".jpeg") ||
      g_str_has_suffix (path, ".JPG") || g_str_has_suffix (path, ".bmp");
}

/* The annotated output of input `path`: the file itself for one input,
 * else DIR/<name>.png|.webm. */
static gchar *
annotate_path (const Options * o, const gchar * path, gboolean several)
{
  gchar *base, *dot, *res;

  if (!several)
    return g_strdup (o->annotate);
  base = g_path_get_basename (path);
  if ((dot = strrchr (base, '.')))
    *dot = '\0';
  res = g_strdup_printf ("%s/%s.%s", o->annotate, base,
      is_image (path) ? "png" : "webm");
  g_free (base);
  return res;
}

static gchar *
pipeline_description (const Options * o, gboolean image)
{
  GString *d = g_string_new (NULL);
  gchar *threads = o->threads > 0 ? g_strdup_printf (" threads=%d",
      o->threads) : g_strdup ("");
  const gchar *backend = o->backend ? o->backend : "auto";
  /* text-line inputs: 48 high, left-aligned, padded right; the
   * classifier's as PaddleOCR's, the recogniser's in [0, 1] on black (see
   * the header) */
  const gchar *cls_pre = "inference-region=roi-list object-class=text "
      "scale-mode=pad-right channel-order=bgr input-mean=127.5 "
      "input-std=127.5 pad-value=127.5";
  const gchar *rec_pre = "inference-region=roi-list object-class=text "
      "scale-mode=pad-right channel-order=bgr input-mean=0 "
      "input-std=255 pad-value=0";

  /* decodebin's pad is linked by on_pad_added, each file again */
  g_string_append_printf (d, "filesrc name=src ! decodebin name=dec "
      "videoconvert name=conv ! "
      "onnxinfer name=det model-location=\"%s\" backend=%s%s "
      "channel-order=bgr input-mean=\"123.675,116.28,103.53\" "
      "input-std=\"58.395,57.12,57.375\" max-input-size=960 ! "
      "tensordecoder scheme=dbnet model-id=det box-threshold=%g "
      "unclip-ratio=%g ! ", o->det, backend, threads, o->box_threshold,
      o->unclip_ratio);
  if (o->cls)
    g_string_append_printf (d, "onnxinfer name=cls model-location=\"%s\" "
        "backend=%s%s %s max-batch=6 input-height=48 input-width=192 "
        "max-input-size=192 ! "
        "tensordecoder scheme=text-direction model-id=cls ! ",
        o->cls, backend, threads, cls_pre);
  g_string_append_printf (d, "onnxinfer name=rec model-location=\"%s\" "
      "backend=%s%s %s max-batch=1 max-input-size=2560 ! "
      "tensordecoder scheme=ctc model-id=rec labels-file=\"%s\" "
      "space-threshold=%g ! ", o->rec, backend, threads, rec_pre, o->dict,
      o->space_threshold);
  if (o->annotate)
    g_string_append_printf (d, "roioverlay ! tee name=t ! queue ! "
        "appsink name=sink sync=false max-buffers=8 t. ! queue ! videoconvert ! %s ! "
        "filesink name=out", image ? "pngenc" :
        "vp8enc deadline=1 cpu-used=4 ! webmmux");
  else
    g_string_append (d, "appsink name=sink sync=false max-buffers=8");
  g_free (threads);
  return g_string_free (d, FALSE);
}

/* decodebin's video pad -> videoconvert (gst_parse_launch links a
 * sometimes-pad once only; the pipeline is reused for every file). */
static void
on_pad_added (GstElement * dec, GstPad * pad, gpointer conv)
{
  GstPad *sink = gst_element_get_static_pad (GST_ELEMENT (conv), "sink");
  GstCaps *caps = gst_pad_get_current_caps (pad);
  const gchar *name = caps ? gst_structure_get_name (gst_caps_get_structure
      (caps, 0)) : "";

  if (!gst_pad_is_linked (sink) && g_str_has_prefix (name, "video/"))
    gst_pad_link (pad, sink);
  if (caps)
    gst_caps_unref (caps);
  gst_object_unref (sink);
}

/* Runs the pipeline on one file; prints its lines.  FALSE on an error
 * (printed on stderr). */
static gboolean
read_file (GstElement * pipe, const Options * o, const gchar * path,
    const gchar * annotate)
{
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  GstElement *out = gst_bin_get_by_name (GST_BIN (pipe), "out");
  GstBus *bus = gst_element_get_bus (pipe);
  gchar *last = NULL;
  gboolean ok = TRUE, first = TRUE;

  g_object_set (src, "location", path, NULL);
  if (out)
    g_object_set (out, "location", annotate, NULL);
  if (gst_element_set_state (pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE)
    ok = FALSE;
  /* Drain the samples, then wait on the bus (EOS or error) for a short
   * while: the appsink's try-pull returns at once while the pipeline is not
   * yet running, so the bus provides the waiting (a loop on try-pull alone
   * would spin a core away from the models). */
  while (ok) {
    GstSample *sample = NULL;
    GstMessage *msg;
    gboolean eos = FALSE;

    while (g_signal_emit_by_name (sink, "try-pull-sample", (guint64) 0,
            &sample), sample) {
      print_frame (gst_sample_get_buffer (sample), o->min_confidence, &last,
          &first);
      gst_sample_unref (sample);
      sample = NULL;
    }
    msg = gst_bus_timed_pop_filtered (bus, 20 * GST_MSECOND,
        GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    if (!msg)
      continue;
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
      GError *err = NULL;
      gchar *dbg = NULL;
      gst_message_parse_error (msg, &err, &dbg);
      fprintf (stderr, "ocr-read: %s: %s\n", path, err->message);
      if (dbg)
        fprintf (stderr, "ocr-read: (%s)\n", dbg);
      g_clear_error (&err);
      g_free (dbg);
      ok = FALSE;
    } else {
      eos = TRUE;
    }
    gst_message_unref (msg);
    if (eos) {
      /* the pipeline's EOS comes after every sink's: drain what is left */
      while (g_signal_emit_by_name (sink, "try-pull-sample", (guint64) 0,
              &sample), sample) {
        print_frame (gst_sample_get_buffer (sample), o->min_confidence,
            &last, &first);
        gst_sample_unref (sample);
        sample = NULL;
      }
      break;
    }
  }
  fflush (stdout);
  g_free (last);
  /* READY: the sessions stay for the next file; the bus is flushed */
  gst_element_set_state (pipe, GST_STATE_READY);
  gst_bus_set_flushing (bus, TRUE);
  gst_bus_set_flushing (bus, FALSE);
  gst_object_unref (bus);
  gst_object_unref (src);
  gst_object_unref (sink);
  if (out)
    gst_object_unref (out);
  return ok;
}

int
main (int argc, char **argv)
{
  Options o = { 0 };
  GError *err = NULL;
  GOptionContext *ctx;
  GstElement *pipes[2] = { NULL, NULL };        /* images, videos */
  gint i, failed = 0, n_files;
  const GOptionEntry entries[] = {
    {"det", 0, 0, G_OPTION_ARG_FILENAME, &o.det, "Text detector (PP-OCRv4 "
          "det ONNX)", "MODEL"},
    {"rec", 0, 0, G_OPTION_ARG_FILENAME, &o.rec, "Text recogniser (PP-OCRv4 "
          "rec ONNX)", "MODEL"},
    {"cls", 0, 0, G_OPTION_ARG_FILENAME, &o.cls, "Optional 0/180 degree "
          "line classifier (PP-OCR mobile cls ONNX)", "MODEL"},
    {"dict", 0, 0, G_OPTION_ARG_FILENAME, &o.dict, "The recogniser's "
          "dictionary (ppocr_keys_v1.txt)", "FILE"},
    {"annotate", 0, 0, G_OPTION_ARG_FILENAME, &o.annotate, "Write the "
          "picture with boxes and text (one input: this file; several: into "
          "this directory)", "OUT"},
    {"threads", 0, 0, G_OPTION_ARG_INT, &o.threads, "Worker threads per "
          "model (0: one per core)", "N"},
    {"backend", 0, 0, G_OPTION_ARG_STRING, &o.backend, "cpu, vulkan or auto "
          "(default)", "NAME"},
    {"min-confidence", 0, 0, G_OPTION_ARG_DOUBLE, &o.min_confidence, "Drop "
          "lines read with less confidence (default 0.5)", "C"},
    {"box-threshold", 0, 0, G_OPTION_ARG_DOUBLE, &o.box_threshold, "Keep "
          "text boxes whose mean probability reaches this (default 0.5)", "T"},
    {"unclip-ratio", 0, 0, G_OPTION_ARG_DOUBLE, &o.unclip_ratio, "Grow "
          "the boxes by the DB rule with this ratio (default 1.5)", "R"},
    {"space-threshold", 0, 0, G_OPTION_ARG_DOUBLE, &o.space_threshold,
          "Put a space between two characters where the recogniser's space "
          "class reaches this probability (default 0.1; 1: PaddleOCR's "
          "greedy decoding)", "P"},
    {NULL}
  };

  o.min_confidence = 0.5;
  /* PaddleOCR's det_db_box_thresh is 0.6; 0.5 keeps the slanted lines of
   * a photographed page that 0.6 drops (measured: tools/bench-ocr, CER on
   * skimage's page 17% -> 0%, no other image worse) */
  o.box_threshold = 0.5;
  o.unclip_ratio = 1.5;         /* det_db_unclip_ratio */
  o.space_threshold = 0.1;      /* tensordecoder's default, see there */
  ctx = g_option_context_new ("FILE... - print the text of images and videos");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    fprintf (stderr, "ocr-read: %s\n", err->message);
    g_clear_error (&err);
    g_option_context_free (ctx);
    return 2;
  }
  g_option_context_free (ctx);
  if (!o.det || !o.rec || !o.dict || argc < 2) {
    fprintf (stderr, "usage: ocr-read --det MODEL --rec MODEL --dict FILE "
        "[--cls MODEL] [--annotate OUT] [--threads N] FILE...\n");
    return 2;
  }
  n_files = argc - 1;
  if (o.annotate && n_files > 1 &&
      g_mkdir_with_parents (o.annotate, 0755) != 0) {
    fprintf (stderr, "ocr-read: cannot create directory %s\n", o.annotate);
    return 2;
  }

  for (i = 1; i < argc; i++) {
    gboolean image = is_image (argv[i]);
    GstElement **pipe = &pipes[image ? 0 : 1];
    gchar *annotate = o.annotate ? annotate_path (&o, argv[i], n_files > 1) :
        NULL;

    if (!*pipe) {
      gchar *desc = pipeline_description (&o, image);
      *pipe = gst_parse_launch (desc, &err);
      g_free (desc);
      if (!*pipe || err) {
        fprintf (stderr, "ocr-read: cannot build the pipeline: %s\n",
            err ? err->message : "unknown error");
        g_clear_error (&err);
        g_free (annotate);
        if (*pipe)
          gst_object_unref (*pipe);
        *pipe = NULL;
        failed++;
        break;
      }
      {
        GstElement *dec = gst_bin_get_by_name (GST_BIN (*pipe), "dec");
        GstElement *conv = gst_bin_get_by_name (GST_BIN (*pipe), "conv");
        g_signal_connect (dec, "pad-added", G_CALLBACK (on_pad_added), conv);
        gst_object_unref (dec);
        gst_object_unref (conv);  /* the pipeline holds it */
      }
    }
    if (n_files > 1) {
      printf ("==> %s <==\n", argv[i]);
      fflush (stdout);
    }
    if (!g_file_test (argv[i], G_FILE_TEST_IS_REGULAR)) {
      fprintf (stderr, "ocr-read: %s: not a regular file\n", argv[i]);
      failed++;
    } else if (!read_file (*pipe, &o, argv[i], annotate)) {
      failed++;
    }
    g_free (annotate);
  }
  for (i = 0; i < 2; i++)
    if (pipes[i]) {
      gst_element_set_state (pipes[i], GST_STATE_NULL);
      gst_object_unref (pipes[i]);
    }
  g_free (o.det);
  g_free (o.rec);
  g_free (o.cls);
  g_free (o.dict);
  g_free (o.annotate);
  g_free (o.backend);
  return failed ? 1 : 0;
}
