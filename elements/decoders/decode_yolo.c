/* decode_yolo.c - YOLOv5 and YOLOv8 detection heads as ultralytics exports
 * them to ONNX.
 *
 * YOLOv5  [1,N,5+C]: cx, cy, w, h (input pixels), objectness, C class
 *         probabilities; score = objectness * best class.
 * YOLOv8  [1,4+C,N]: cx, cy, w, h, C class probabilities (no objectness);
 *         channels first, i.e. transposed with respect to v5.
 *
 * Either layout may come transposed; ND_LAYOUT_AUTO takes the smaller of the
 * two axes as the channels (N is thousands, 4+C rarely more than a few
 * hundred).  Boxes are in the pixels of the (usually letterboxed) model
 * input; nd_transform maps them back to the frame.  Hard NMS per class
 * (ultralytics' default, agnostic=False) unless class_agnostic_nms.
 */
#include <stdio.h>
#include <stdlib.h>

#include "decode_internal.h"

static nd_status yolo_decode(nd_decoder *dec, const nd_tensor *ts, int n, nd_error *err) {
  const int v5 = dec->cfg.scheme == ND_SCHEME_YOLOV5;
  const int extra = v5 ? 5 : 4;
  const char *what = v5 ? "YOLOv5" : "YOLOv8";
  char got[192], d[96];
  const nd_tensor *t = NULL;

  if (dec->cfg.output_tensor) {
    t = nd_find_tensor(ts, n, dec->cfg.output_tensor);
    if (!t) {
      nd_tensors_str(ts, n, got, sizeof got);
      return nd_set_error(err, ND_ERR_MISSING, "%s: output '%s' not found (outputs: %s)", what,
                          dec->cfg.output_tensor, got);
    }
  } else {
    /* the first rank-3 output (detection models may add e.g. mask protos) */
    for (int i = 0; i < n && !t; i++)
      if (ts[i].n_dims == 3)
        t = &ts[i];
    if (!t && n > 0)
      t = &ts[0];
    if (!t)
      return nd_set_error(err, ND_ERR_MISSING, "%s: no outputs", what);
  }
  nd_dims_str(t, d, sizeof d);
  if (t->n_dims != 3 && t->n_dims != 2)
    return nd_set_error(err, ND_ERR_RANK, "%s: output '%s': expected rank 3 %s, got %s", what,
                        t->name ? t->name : "?", v5 ? "[1,N,5+C]" : "[1,4+C,N]", d);
  int64_t a0 = t->dims[t->n_dims - 2], a1 = t->dims[t->n_dims - 1];
  if (t->n_dims == 3 && t->dims[0] != 1)
    return nd_set_error(err, ND_ERR_DIMS, "%s: output '%s': batch %lld, expected 1, got %s",
                        what, t->name ? t->name : "?", (long long)t->dims[0], d);

  /* Which axis holds the channels (5+C or 4+C)? */
  int chan_first;
  switch (dec->cfg.layout) {
    case ND_LAYOUT_CHANNELS_FIRST: chan_first = 1; break;
    case ND_LAYOUT_CHANNELS_LAST: chan_first = 0; break;
    default:
      if (dec->cfg.num_classes > 0)
        chan_first = a0 == extra + dec->cfg.num_classes && a1 != extra + dec->cfg.num_classes
                         ? 1
                         : a1 == extra + dec->cfg.num_classes ? 0 : (a0 < a1);
      else
        chan_first = a1 == 0 ? 1 : a0 == 0 ? 0 : a0 < a1; /* N = 0: nothing to decode */
      break;
  }
  const int64_t K = chan_first ? a0 : a1, N = chan_first ? a1 : a0;
  if (K < extra + 1)
    return nd_set_error(err, ND_ERR_DIMS,
                        "%s: output '%s' %s: %lld channels, expected %d + classes (layout %s)",
                        what, t->name ? t->name : "?", d, (long long)K, extra,
                        chan_first ? "[1,K,N]" : "[1,N,K]");
  const int64_t C = K - extra;
  if (dec->cfg.num_classes > 0 && C != dec->cfg.num_classes)
    return nd_set_error(err, ND_ERR_DIMS, "%s: output '%s' %s has %lld classes, num-classes is %d",
                        what, t->name ? t->name : "?", d, (long long)C, dec->cfg.num_classes);
  if (N > (1 << 24))
    return nd_set_error(err, ND_ERR_DIMS, "%s: %lld candidate boxes is too many", what,
                        (long long)N);
  nd_status st = nd_tensor_validate(t, what, err);
  if (st != ND_OK)
    return st;
  st = nd_decoder_reserve(dec, N > 0 ? (int)N : 1, err);
  if (st != ND_OK)
    return st;

  /* value(ch, i) */
  const int64_t sc = chan_first ? N : 1, si = chan_first ? 1 : K;
  const float thr = dec->cfg.score_threshold;
  const int sig = dec->cfg.activation == ND_ACT_SIGMOID;
  const float nx = dec->cfg.box_normalized ? (float)dec->model_w : 1.0f;
  const float ny = dec->cfg.box_normalized ? (float)dec->model_h : 1.0f;
  int nc = 0;
  for (int64_t i = 0; i < N; i++) {
    const int64_t b = i * si;
    float obj = 1.0f;
    if (v5) {
      obj = nd_tget(t, b + 4 * sc);
      if (sig)
        obj = nd_sigmoid(obj);
      /* objectness bounds the score: skip the class scan early */
      if (!(obj >= thr))
        continue;
    }
    int best = -1;
    float bv = -INFINITY;
    for (int64_t c = 0; c < C; c++) {
      float v = nd_tget(t, b + (extra + c) * sc);
      if (v > bv)
        bv = v, best = (int)c;
    }
    if (sig)
      bv = nd_sigmoid(bv);
    float score = obj * bv;
    if (!(score >= thr))
      continue;
    float cx = nd_tget(t, b + 0 * sc) * nx, cy = nd_tget(t, b + 1 * sc) * ny;
    float w = nd_tget(t, b + 2 * sc) * nx, h = nd_tget(t, b + 3 * sc) * ny;
    nd_detection *dd = &dec->dets[nc];
    dd->x0 = cx - w * 0.5f;
    dd->y0 = cy - h * 0.5f;
    dd->x1 = cx + w * 0.5f;
    dd->y1 = cy + h * 0.5f;
    dd->score = score;
    dd->class_id = best;
    dd->n_keypoints = 0;
    if (dd->x1 > dd->x0 && dd->y1 > dd->y0)
      nc++;
  }
  dec->n_results = nd_nms(dec->dets, nc, dec->order, dec->cfg.iou_threshold,
                          dec->cfg.max_detections, dec->cfg.class_agnostic_nms, ND_NMS_HARD);
  return ND_OK;
}

nd_status nd_yolo_init(nd_decoder *dec, nd_error *err) {
  if ((unsigned)dec->cfg.layout > ND_LAYOUT_CHANNELS_FIRST)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "YOLO: unknown layout %d", (int)dec->cfg.layout);
  /* ultralytics' default export size */
  if (dec->model_w == 0)
    dec->model_w = 640;
  if (dec->model_h == 0)
    dec->model_h = 640;
  dec->decode = yolo_decode;
  return ND_OK;
}
