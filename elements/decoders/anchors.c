/* anchors.c - SSD anchor generation, as MediaPipe's SsdAnchorsCalculator
 * (mediapipe/calculators/tflite/ssd_anchors_calculator.cc), and a priors
 * file reader.
 *
 * Layers that share a stride are merged: their anchors are emitted per cell
 * together, which is why BlazeFace front has 2 anchors per 16x16 cell
 * (stride 8) and 6 per 8x8 cell (three stride-16 layers), 896 in all, in
 * the order its two heads output them; BlazeFace back has the same grids at
 * strides 16 and 32 of its 256x256 input.
 */
#include <stdio.h>
#include <stdlib.h>

#include "decode_internal.h"
#include "nn_file.h"

void nd_anchor_options_blazeface_front(nd_anchor_options *o) {
  /* mediapipe/modules/face_detection/face_detection_front.pbtxt */
  memset(o, 0, sizeof *o);
  o->input_width = 128;
  o->input_height = 128;
  o->num_layers = 4;
  o->min_scale = 0.1484375f;
  o->max_scale = 0.75f;
  o->anchor_offset_x = 0.5f;
  o->anchor_offset_y = 0.5f;
  o->strides[0] = 8;
  o->strides[1] = 16;
  o->strides[2] = 16;
  o->strides[3] = 16;
  o->aspect_ratios[0] = 1.0f;
  o->n_aspect_ratios = 1;
  o->interpolated_scale_aspect_ratio = 1.0f;
  o->fixed_anchor_size = 1;
}

void nd_anchor_options_blazeface_back(nd_anchor_options *o) {
  /* mediapipe/modules/face_detection/face_detection_back_desktop_live.pbtxt:
   * the front options at twice the input size and twice the strides, so the
   * same 16x16x2 + 8x8x6 grids (with fixed anchor sizes the scales do not
   * matter) */
  nd_anchor_options_blazeface_front(o);
  o->input_width = 256;
  o->input_height = 256;
  o->min_scale = 0.15625f;
  o->strides[0] = 16;
  o->strides[1] = 32;
  o->strides[2] = 32;
  o->strides[3] = 32;
}

static float calc_scale(float min_scale, float max_scale, int index, int n) {
  if (n == 1)
    return (min_scale + max_scale) * 0.5f;
  return min_scale + (max_scale - min_scale) * (float)index / ((float)n - 1.0f);
}

nd_status nd_anchors_generate(const nd_anchor_options *o, float *anchors, int capacity, int *n,
                              nd_error *err) {
  if (!o || !n || capacity < 0 || (capacity > 0 && !anchors))
    return nd_set_error(err, ND_ERR_INVALID_ARG, "anchors: NULL argument");
  *n = 0;
  if (o->num_layers < 1 || o->num_layers > ND_MAX_ANCHOR_LAYERS || o->input_width < 1 ||
      o->input_height < 1 || o->n_aspect_ratios < 0 || o->n_aspect_ratios > ND_MAX_ANCHOR_LAYERS)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "anchors: bad options (layers %d, input %dx%d)",
                        o->num_layers, o->input_width, o->input_height);
  for (int i = 0; i < o->num_layers; i++)
    if (o->strides[i] < 1)
      return nd_set_error(err, ND_ERR_INVALID_ARG, "anchors: stride %d of layer %d",
                          o->strides[i], i);

  int count = 0;
  int layer = 0;
  while (layer < o->num_layers) {
    /* up to 3 per layer from reduce_boxes + aspect ratios + 1 interpolated */
    float w[ND_MAX_ANCHOR_LAYERS * (ND_MAX_ANCHOR_LAYERS + 3)];
    float h[ND_MAX_ANCHOR_LAYERS * (ND_MAX_ANCHOR_LAYERS + 3)];
    int na = 0;
    int last = layer;
    while (last < o->num_layers && o->strides[last] == o->strides[layer]) {
      float scale = calc_scale(o->min_scale, o->max_scale, last, o->num_layers);
      float ratios[ND_MAX_ANCHOR_LAYERS + 3], scales[ND_MAX_ANCHOR_LAYERS + 3];
      int nr = 0;
      if (last == 0 && o->reduce_boxes_in_lowest_layer) {
        ratios[nr] = 1.0f, scales[nr++] = 0.1f;
        ratios[nr] = 2.0f, scales[nr++] = scale;
        ratios[nr] = 0.5f, scales[nr++] = scale;
      } else {
        for (int a = 0; a < o->n_aspect_ratios; a++)
          ratios[nr] = o->aspect_ratios[a], scales[nr++] = scale;
        if (o->interpolated_scale_aspect_ratio > 0.0f) {
          float next = last == o->num_layers - 1
                           ? 1.0f
                           : calc_scale(o->min_scale, o->max_scale, last + 1, o->num_layers);
          scales[nr] = sqrtf(scale * next);
          ratios[nr++] = o->interpolated_scale_aspect_ratio;
        }
      }
      for (int r = 0; r < nr; r++) {
        float s = sqrtf(ratios[r]);
        h[na] = scales[r] / s;
        w[na] = scales[r] * s;
        na++;
      }
      last++;
    }
    int stride = o->strides[layer];
    int fh = (int)ceilf((float)o->input_height / (float)stride);
    int fw = (int)ceilf((float)o->input_width / (float)stride);
    for (int y = 0; y < fh; y++)
      for (int x = 0; x < fw; x++)
        for (int a = 0; a < na; a++) {
          if (count < capacity) {
            float *p = anchors + (size_t)count * 4;
            p[0] = ((float)x + o->anchor_offset_x) / (float)fw;
            p[1] = ((float)y + o->anchor_offset_y) / (float)fh;
            p[2] = o->fixed_anchor_size ? 1.0f : w[a];
            p[3] = o->fixed_anchor_size ? 1.0f : h[a];
          }
          count++;
        }
    layer = last;
  }
  *n = count;
  if (count > capacity)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "anchors: %d needed, room for %d", count,
                        capacity);
  return ND_OK;
}

/* Priors are a few thousand lines (SSD MobileNet: 1917); the caps keep a
 * hostile file from taking the process's memory or time. */
static const nn_text_limits priors_limits = {
  .max_bytes = (size_t)64 << 20,
  .max_line_bytes = 1024,
  .max_lines = 1000000,
};

nd_status nd_priors_load(const char *path, float **priors, int *n_priors, nd_error *err) {
  if (!path || !priors || !n_priors)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "priors: NULL argument");
  *priors = NULL;
  *n_priors = 0;
  /* the guarded reader: a FIFO, /dev/zero or a directory is refused by name
   * (fopen() blocked on the first, spun on the second reading NUL bytes as
   * blank lines, and read the third as a file without priors) */
  char **lines = NULL;
  size_t n_lines = 0;
  nn_error ferr = {0};
  nn_status fst = nn_file_read_lines(path, &priors_limits, &lines, &n_lines, &ferr);
  if (fst != NN_OK)
    return nd_set_error(err, nd_status_from_nn(fst), "priors file: %s", ferr.msg);
  float *p = NULL;
  int n = 0, cap = 0;
  nd_status st = ND_OK;
  for (size_t k = 0; k < n_lines && st == ND_OK; k++) {
    char *line = lines[k];
    size_t line_no = k + 1;
    char *hash = strchr(line, '#');
    if (hash)
      *hash = '\0';
    for (char *c = line; *c; c++)
      if (*c == ',' || *c == ';' || *c == '\t')
        *c = ' ';
    float v[4];
    char extra;
    int got = sscanf(line, "%f %f %f %f %c", &v[0], &v[1], &v[2], &v[3], &extra);
    if (got <= 0) {
      /* blank or comment line */
      char dummy;
      if (sscanf(line, " %c", &dummy) == 1)
        st = nd_set_error(err, ND_ERR_PARSE, "%s:%zu: expected 4 numbers 'cx cy w h'", path, line_no);
      continue;
    }
    if (got != 4) {
      st = nd_set_error(err, ND_ERR_PARSE, "%s:%zu: expected 4 numbers 'cx cy w h'", path, line_no);
      break;
    }
    if (n == cap) {
      int nc = cap ? cap * 2 : 1024;
      float *np = realloc(p, (size_t)nc * 4 * sizeof(float));
      if (!np) {
        st = nd_set_error(err, ND_ERR_NOMEM, "out of memory");
        break;
      }
      p = np;
      cap = nc;
    }
    memcpy(p + (size_t)n * 4, v, sizeof v);
    n++;
  }
  nn_file_free(lines);
  if (st == ND_OK && n == 0)
    st = nd_set_error(err, ND_ERR_PARSE, "%s: no priors (only blank or comment lines)", path);
  if (st != ND_OK) {
    free(p);
    return st;
  }
  *priors = p;
  *n_priors = n;
  return ND_OK;
}
