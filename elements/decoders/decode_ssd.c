/* decode_ssd.c - SSD-style detectors.
 *
 * Two shapes of output are accepted:
 *
 * raw     boxes [1,N,4] and class scores [1,N,C] (or without the batch
 *         axis).  Boxes are absolute (corner or center form, normalized or
 *         pixels) or, when priors are given, center-size offsets against
 *         them: cx = pcx + dx*v0*pw, w = pw*exp(dw*v2) (the usual SSD
 *         encoding, v = variances 0.1,0.1,0.2,0.2).  Scores go through a
 *         sigmoid, a softmax over C, or nothing; an optional background
 *         class is ignored; then hard NMS per class.
 *
 * post-processed   what the TensorFlow Object Detection API exports with
 *         NMS inside the graph: detection_boxes [1,K,4] (ymin,xmin,ymax,
 *         xmax normalized), detection_scores [1,K], detection_classes [1,K]
 *         and num_detections [1].  Only the threshold and the maximum
 *         count apply.
 */
#include <stdio.h>
#include <stdlib.h>

#include "decode_internal.h"

typedef struct {
  const nd_tensor *boxes, *scores, *classes, *num;
  int64_t n;                   /* boxes */
  int64_t c;                   /* classes (raw) */
  int post;                    /* post-processed outputs */
} ssd_io;

/* N of a boxes tensor [1,N,4] / [N,4]; -1 otherwise. */
static int64_t boxes_n(const nd_tensor *t) {
  if (t->n_dims == 3 && t->dims[0] == 1 && t->dims[2] == 4)
    return t->dims[1];
  if (t->n_dims == 2 && t->dims[1] == 4)
    return t->dims[0];
  return -1;
}

static int is_vector_n(const nd_tensor *t, int64_t n) {
  return (t->n_dims == 2 && t->dims[0] == 1 && t->dims[1] == n) ||
         (t->n_dims == 1 && t->dims[0] == n);
}

static int is_raw_scores(const nd_tensor *t, const nd_tensor *boxes, int64_t n) {
  if (boxes->n_dims == 3)
    return t->n_dims == 3 && t->dims[0] == 1 && t->dims[1] == n && t->dims[2] >= 1;
  return t->n_dims == 2 && t->dims[0] == n && t->dims[1] >= 1;
}

static nd_status ssd_find(nd_decoder *dec, const nd_tensor *ts, int n, ssd_io *io,
                          nd_error *err) {
  char got[192], d[96];
  memset(io, 0, sizeof *io);
  nd_tensors_str(ts, n, got, sizeof got);

  /* boxes */
  if (dec->cfg.boxes_tensor) {
    io->boxes = nd_find_tensor(ts, n, dec->cfg.boxes_tensor);
    if (!io->boxes)
      return nd_set_error(err, ND_ERR_MISSING, "SSD: boxes output '%s' not found (outputs: %s)",
                          dec->cfg.boxes_tensor, got);
  } else {
    for (int i = 0; i < n; i++)
      if (boxes_n(&ts[i]) >= 0 && (!io->boxes || (!nd_name_has(io->boxes, "box") &&
                                                 (nd_name_has(&ts[i], "box") ||
                                                  nd_name_has(&ts[i], "loc")))))
        io->boxes = &ts[i];
    if (!io->boxes)
      return nd_set_error(err, ND_ERR_MISSING, "SSD: no boxes output [1,N,4] (outputs: %s)",
                          got);
  }
  io->n = boxes_n(io->boxes);
  if (io->n > (1 << 24))
    return nd_set_error(err, ND_ERR_DIMS, "SSD: boxes '%s': %lld boxes is too many",
                        io->boxes->name, (long long)io->n);
  if (io->n < 0) {
    nd_dims_str(io->boxes, d, sizeof d);
    return nd_set_error(err, io->boxes->n_dims == 2 || io->boxes->n_dims == 3 ? ND_ERR_DIMS
                                                                              : ND_ERR_RANK,
                        "SSD: boxes '%s': expected [1,N,4], got %s", io->boxes->name, d);
  }

  /* scores: [1,N,C] (raw) or [1,N] (post-processed) */
  if (dec->cfg.scores_tensor) {
    io->scores = nd_find_tensor(ts, n, dec->cfg.scores_tensor);
    if (!io->scores)
      return nd_set_error(err, ND_ERR_MISSING, "SSD: scores output '%s' not found (outputs: %s)",
                          dec->cfg.scores_tensor, got);
  } else {
    for (int i = 0; i < n && !io->scores; i++)
      if (&ts[i] != io->boxes && is_raw_scores(&ts[i], io->boxes, io->n))
        io->scores = &ts[i];
    for (int i = 0; i < n && !io->scores; i++)
      if (&ts[i] != io->boxes && is_vector_n(&ts[i], io->n) && nd_name_has(&ts[i], "score"))
        io->scores = &ts[i];
    if (!io->scores)
      return nd_set_error(err, ND_ERR_MISSING,
                          "SSD: no scores output [1,%lld,C] (or [1,%lld] named *score*) for "
                          "boxes '%s' (outputs: %s)",
                          (long long)io->n, (long long)io->n, io->boxes->name, got);
  }
  if (is_raw_scores(io->scores, io->boxes, io->n)) {
    io->c = io->scores->dims[io->scores->n_dims - 1];
  } else if (is_vector_n(io->scores, io->n)) {
    io->post = 1;
  } else {
    nd_dims_str(io->scores, d, sizeof d);
    return nd_set_error(err, ND_ERR_DIMS, "SSD: scores '%s': expected [1,%lld,C] or [1,%lld], got %s",
                        io->scores->name, (long long)io->n, (long long)io->n, d);
  }

  if (io->post) {
    if (dec->cfg.classes_tensor) {
      io->classes = nd_find_tensor(ts, n, dec->cfg.classes_tensor);
      if (!io->classes)
        return nd_set_error(err, ND_ERR_MISSING,
                            "SSD: classes output '%s' not found (outputs: %s)",
                            dec->cfg.classes_tensor, got);
    } else {
      for (int i = 0; i < n && !io->classes; i++)
        if (&ts[i] != io->scores && is_vector_n(&ts[i], io->n) && nd_name_has(&ts[i], "class"))
          io->classes = &ts[i];
    }
    if (io->classes && !is_vector_n(io->classes, io->n)) {
      nd_dims_str(io->classes, d, sizeof d);
      return nd_set_error(err, ND_ERR_DIMS, "SSD: classes '%s': expected [1,%lld], got %s",
                          io->classes->name, (long long)io->n, d);
    }
    for (int i = 0; i < n && !io->num; i++)
      if (nd_name_has(&ts[i], "num") && ts[i].n_dims <= 2 && nd_tensor_numel(&ts[i]) == 1)
        io->num = &ts[i];
  } else {
    if (dec->cfg.num_classes > 0 && io->c != dec->cfg.num_classes)
      return nd_set_error(err, ND_ERR_DIMS,
                          "SSD: scores '%s' have %lld classes, num-classes is %d",
                          io->scores->name, (long long)io->c, dec->cfg.num_classes);
    if (dec->cfg.n_priors > 0 && dec->cfg.n_priors != io->n)
      return nd_set_error(err, ND_ERR_DIMS, "SSD: %lld boxes but %d priors", (long long)io->n,
                          dec->cfg.n_priors);
  }

  nd_status st = nd_tensor_validate(io->boxes, "SSD boxes", err);
  if (st == ND_OK)
    st = nd_tensor_validate(io->scores, "SSD scores", err);
  if (st == ND_OK && io->classes)
    st = nd_tensor_validate(io->classes, "SSD classes", err);
  if (st == ND_OK && io->num)
    st = nd_tensor_validate(io->num, "SSD num_detections", err);
  return st;
}

/* Box i as normalized or pixel corners, per the configured format. */
static void read_box(const nd_decoder *dec, const nd_tensor *bt, int64_t i, float *x0, float *y0,
                     float *x1, float *y1) {
  float b0 = nd_tget(bt, i * 4 + 0), b1 = nd_tget(bt, i * 4 + 1);
  float b2 = nd_tget(bt, i * 4 + 2), b3 = nd_tget(bt, i * 4 + 3);
  float cx, cy, w, h;
  switch (dec->cfg.box_format) {
    case ND_BOX_XYXY:
      *x0 = b0, *y0 = b1, *x1 = b2, *y1 = b3;
      return;
    case ND_BOX_YXYX:
      *y0 = b0, *x0 = b1, *y1 = b2, *x1 = b3;
      return;
    case ND_BOX_CXCYWH:
      cx = b0, cy = b1, w = b2, h = b3;
      break;
    case ND_BOX_CYCXHW:
    default:
      cy = b0, cx = b1, h = b2, w = b3;
      break;
  }
  if (dec->priors) {
    const float *p = dec->priors + (size_t)i * 4;
    const float *v = dec->cfg.variances;
    cx = p[0] + cx * v[0] * p[2];
    cy = p[1] + cy * v[1] * p[3];
    w = p[2] * expf(w * v[2]);
    h = p[3] * expf(h * v[3]);
  }
  *x0 = cx - w * 0.5f;
  *y0 = cy - h * 0.5f;
  *x1 = cx + w * 0.5f;
  *y1 = cy + h * 0.5f;
}

static int push_box(nd_decoder *dec, int nc, const nd_tensor *bt, int64_t i, float score,
                    int cls) {
  float x0, y0, x1, y1;
  read_box(dec, bt, i, &x0, &y0, &x1, &y1);
  float sx = dec->cfg.box_normalized ? (float)dec->model_w : 1.0f;
  float sy = dec->cfg.box_normalized ? (float)dec->model_h : 1.0f;
  nd_detection *d = &dec->dets[nc];
  d->x0 = x0 * sx;
  d->y0 = y0 * sy;
  d->x1 = x1 * sx;
  d->y1 = y1 * sy;
  d->score = score;
  d->class_id = cls;
  d->n_keypoints = 0;
  return d->x1 > d->x0 && d->y1 > d->y0; /* drops empty and NaN boxes */
}

static nd_status ssd_decode(nd_decoder *dec, const nd_tensor *ts, int n, nd_error *err) {
  ssd_io io;
  nd_status st = ssd_find(dec, ts, n, &io, err);
  if (st != ND_OK)
    return st;
  st = nd_decoder_reserve(dec, io.n > 0 ? (int)io.n : 1, err);
  if (st != ND_OK)
    return st;
  const float thr = dec->cfg.score_threshold;
  int nc = 0;

  if (io.post) {
    int64_t count = io.n;
    if (io.num) {
      float v = nd_tget(io.num, 0);
      if (v >= 0 && v < (float)count)
        count = (int64_t)v;
    }
    for (int64_t i = 0; i < count; i++) {
      float s = nd_tget(io.scores, i);
      if (!(s >= thr))
        continue;
      float c = io.classes ? nd_tget(io.classes, i) : 0.0f;
      int cls = c >= 0 && c < 1e6f ? (int)(c + 0.5f) : -1;
      if (push_box(dec, nc, io.boxes, i, s, cls))
        nc++;
    }
    /* The graph already suppressed: only order and cap. */
    dec->n_results = nd_nms(dec->dets, nc, dec->order, 1.0f, dec->cfg.max_detections, 0,
                            ND_NMS_HARD);
    return ND_OK;
  }

  const int64_t C = io.c;
  const int bg = dec->cfg.background_class;
  const nd_activation act = dec->cfg.activation == ND_ACT_AUTO ? ND_ACT_SIGMOID
                                                                : dec->cfg.activation;
  for (int64_t i = 0; i < io.n; i++) {
    const int64_t base = i * C;
    int best = -1;
    float bv = -INFINITY, mx = -INFINITY;
    for (int64_t c = 0; c < C; c++) {
      float v = nd_tget(io.scores, base + c);
      if (v > mx)
        mx = v;
      if (c != bg && v > bv)
        bv = v, best = (int)c;
    }
    if (best < 0)
      continue;
    float score;
    if (act == ND_ACT_SOFTMAX) {
      double sum = 0;
      for (int64_t c = 0; c < C; c++)
        sum += exp((double)(nd_tget(io.scores, base + c) - mx));
      score = (float)(exp((double)(bv - mx)) / sum);
    } else if (act == ND_ACT_SIGMOID) {
      score = nd_sigmoid(bv);
    } else {
      score = bv;
    }
    if (!(score >= thr))
      continue;
    if (push_box(dec, nc, io.boxes, i, score, best))
      nc++;
  }
  dec->n_results = nd_nms(dec->dets, nc, dec->order, dec->cfg.iou_threshold,
                          dec->cfg.max_detections, 0, ND_NMS_HARD);
  return ND_OK;
}

nd_status nd_ssd_init(nd_decoder *dec, nd_error *err) {
  if ((unsigned)dec->cfg.box_format > ND_BOX_CYCXHW)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "SSD: unknown box format %d",
                        (int)dec->cfg.box_format);
  if (dec->priors && (dec->cfg.box_format == ND_BOX_XYXY || dec->cfg.box_format == ND_BOX_YXYX))
    return nd_set_error(err, ND_ERR_INVALID_ARG,
                        "SSD: priors decode center-size offsets: use box format cxcywh or "
                        "cycxhw");
  if (dec->priors && !dec->cfg.box_normalized)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "SSD: priors are normalized: boxes must be too");
  /* Normalized boxes need a pixel size to be expressed in; 300x300 is the
   * classic SSD input (the elements pass the real one). */
  if (dec->model_w == 0)
    dec->model_w = 300;
  if (dec->model_h == 0)
    dec->model_h = 300;
  dec->decode = ssd_decode;
  return ND_OK;
}
