/* decode_classify.c - classification: one score per class -> top-k.
 *
 * The output is [C], [1,C] or [1,C,1,1] (any shape with a single axis
 * longer than 1).  Scores are probabilities already, or logits that go
 * through a softmax (ND_ACT_AUTO decides: values outside [0,1] or not
 * summing to 1 are logits) or a sigmoid (multi-label models).  Results are
 * "detections" covering the whole input, class_id = index, best first.
 */
#include <stdio.h>
#include <stdlib.h>

#include "decode_internal.h"

static nd_status cls_decode(nd_decoder *dec, const nd_tensor *ts, int n, nd_error *err) {
  char got[192], d[96];
  const nd_tensor *t = NULL;
  if (dec->cfg.output_tensor) {
    t = nd_find_tensor(ts, n, dec->cfg.output_tensor);
    if (!t) {
      nd_tensors_str(ts, n, got, sizeof got);
      return nd_set_error(err, ND_ERR_MISSING, "classify: output '%s' not found (outputs: %s)",
                          dec->cfg.output_tensor, got);
    }
  } else if (n > 0) {
    t = &ts[0];
  } else {
    return nd_set_error(err, ND_ERR_MISSING, "classify: no outputs");
  }
  nd_dims_str(t, d, sizeof d);
  if (t->n_dims < 1)
    return nd_set_error(err, ND_ERR_RANK, "classify: output '%s': expected [1,C], got a scalar",
                        t->name ? t->name : "?");
  int64_t C = 1;
  int long_axes = 0;
  for (int i = 0; i < t->n_dims; i++)
    if (t->dims[i] != 1) {
      long_axes++;
      C = t->dims[i];
    }
  if (long_axes > 1 || C < 1)
    return nd_set_error(err, ND_ERR_DIMS,
                        "classify: output '%s': expected one score per class [1,C], got %s",
                        t->name ? t->name : "?", d);
  if (dec->cfg.num_classes > 0 && C != dec->cfg.num_classes)
    return nd_set_error(err, ND_ERR_DIMS, "classify: output '%s' %s has %lld classes, num-classes is %d",
                        t->name ? t->name : "?", d, (long long)C, dec->cfg.num_classes);
  nd_status st = nd_tensor_validate(t, "classify", err);
  if (st != ND_OK)
    return st;
  int k = dec->cfg.top_k < dec->cfg.max_detections ? dec->cfg.top_k : dec->cfg.max_detections;
  if (k > C)
    k = (int)C;
  st = nd_decoder_reserve(dec, k, err);
  if (st != ND_OK)
    return st;

  nd_activation act = dec->cfg.activation;
  float mx = -INFINITY;
  double sum = 0;
  int probs = 1;
  for (int64_t c = 0; c < C; c++) {
    float v = nd_tget(t, c);
    if (v > mx)
      mx = v;
    if (!(v >= 0.0f && v <= 1.0f))
      probs = 0;
    sum += v;
  }
  if (act == ND_ACT_AUTO)
    act = probs && fabs(sum - 1.0) < 1e-3 ? ND_ACT_NONE : ND_ACT_SOFTMAX;
  double denom = 1.0;
  if (act == ND_ACT_SOFTMAX) {
    denom = 0;
    for (int64_t c = 0; c < C; c++)
      denom += exp((double)(nd_tget(t, c) - mx));
  }

  /* top-k by insertion into a sorted list of k: C*k, fine for k <= ~10 */
  int nk = 0;
  for (int64_t c = 0; c < C; c++) {
    float v = nd_tget(t, c);
    if (v != v)
      continue;
    float s = act == ND_ACT_SOFTMAX ? (float)(exp((double)(v - mx)) / denom)
              : act == ND_ACT_SIGMOID ? nd_sigmoid(v)
                                      : v;
    if (!(s >= dec->cfg.score_threshold))
      continue;
    int pos = nk;
    while (pos > 0 && dec->dets[pos - 1].score < s)
      pos--;
    if (pos >= k)
      continue;
    int last = nk < k ? nk : k - 1;
    for (int j = last; j > pos; j--)
      dec->dets[j] = dec->dets[j - 1];
    nd_detection *r = &dec->dets[pos];
    memset(r, 0, sizeof *r);
    r->x1 = (float)dec->model_w;
    r->y1 = (float)dec->model_h;
    r->score = s;
    r->class_id = (int)c;
    if (nk < k)
      nk++;
  }
  dec->n_results = nk;
  return ND_OK;
}

nd_status nd_classify_init(nd_decoder *dec, nd_error *err) {
  if ((unsigned)dec->cfg.activation > ND_ACT_SOFTMAX)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "classify: unknown activation %d",
                        (int)dec->cfg.activation);
  if (dec->model_w == 0)
    dec->model_w = 1;
  if (dec->model_h == 0)
    dec->model_h = 1;
  dec->decode = cls_decode;
  return ND_OK;
}
