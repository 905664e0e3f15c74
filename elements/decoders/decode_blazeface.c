/* decode_blazeface.c - MediaPipe BlazeFace: face_detection_front (128x128)
 * and face_detection_back (256x256).
 *
 * Both models have two heads on the same grids: 16x16 cells x 2 anchors =
 * 512 and 8x8 x 6 = 384, at strides 8 and 16 of the front model's 128x128
 * input, 16 and 32 of the back model's 256x256.  Each head gives logits
 * [1,N,1] and regressors [1,N,16]: box center offset, size, then six
 * keypoints, all in input pixels relative to the anchor center (MediaPipe's
 * TensorsToDetectionsCalculator with x/y/w/h_scale = the input size,
 * reverse_output_order i.e. x before y).  Some exports concatenate the
 * heads ([1,896,1] and [1,896,16]); both are accepted.  Scores are
 * sigmoid(clip(logit, +-100)), the threshold 0.5 (front) or 0.65 (back),
 * then weighted NMS at IoU 0.3, exactly as the MediaPipe graphs.
 *
 * The two models cannot be told apart by their outputs (896 anchors each),
 * only by their input size, so the variant comes from the model input size
 * (nd_decoder_set_model_size(), i.e. the producer's geometry, or
 * nd_config.model_width/height); a size with no MediaPipe configuration, or
 * outputs that do not cover that configuration's anchors head by head, are
 * refused rather than decoded with the wrong scale.
 */
#include <stdio.h>
#include <stdlib.h>

#include "decode_internal.h"

#define BF_KEYPOINTS 6
#define BF_COORDS (4 + 2 * BF_KEYPOINTS)
#define BF_MAX_HEADS 4
#define BF_SCORE_CLIP 100.0f

/* The MediaPipe configurations the scheme knows, by input size. */
typedef struct {
  const char *name;
  int input_w, input_h;
  float score_threshold;       /* the graph's min_score_thresh */
  void (*options)(nd_anchor_options *o);
} bf_variant;

static const bf_variant variants[] = {
    {"front", 128, 128, 0.5f, nd_anchor_options_blazeface_front},
    {"back", 256, 256, 0.65f, nd_anchor_options_blazeface_back},
};
#define BF_N_VARIANTS ((int)(sizeof variants / sizeof variants[0]))

typedef struct {
  float *anchors;              /* n_anchors x (cx, cy, w, h), normalized */
  int n_anchors;
  int cap;                     /* anchors allocated */
  const bf_variant *v;
  /* anchor index where each stride's anchors end (head boundaries) */
  int group_end[ND_MAX_ANCHOR_LAYERS];
  int group_stride[ND_MAX_ANCHOR_LAYERS];
  int n_groups;
} bf_priv;

typedef struct {
  const nd_tensor *reg, *score;
  int64_t n;
} bf_head;

static const char *const keypoint_names[BF_KEYPOINTS] = {
    "right-eye", "left-eye", "nose-tip", "mouth-center", "right-ear-tragion",
    "left-ear-tragion",
};

const char *nd_blazeface_keypoint_name(int index) {
  return index >= 0 && index < BF_KEYPOINTS ? keypoint_names[index] : NULL;
}

static void bf_destroy(nd_decoder *dec) {
  bf_priv *p = dec->priv;
  if (p) {
    free(p->anchors);
    free(p);
  }
  dec->priv = NULL;
}

/* N of a regressor tensor [1,N,16] or [N,16]; -1 when t is not one. */
static int64_t reg_n(const nd_tensor *t) {
  if (t->n_dims == 3 && t->dims[0] == 1 && t->dims[2] == BF_COORDS)
    return t->dims[1];
  if (t->n_dims == 2 && t->dims[1] == BF_COORDS)
    return t->dims[0];
  return -1;
}

/* N of a score tensor [1,N,1], [1,N] or [N,1]; -1 otherwise. */
static int64_t score_n(const nd_tensor *t) {
  if (t->n_dims == 3 && t->dims[0] == 1 && t->dims[2] == 1)
    return t->dims[1];
  if (t->n_dims == 2 && t->dims[0] == 1)
    return t->dims[1];
  if (t->n_dims == 2 && t->dims[1] == 1)
    return t->dims[0];
  return -1;
}

static nd_status check_named(const nd_tensor *t, const char *role, int64_t n, nd_error *err) {
  char d[96];
  nd_dims_str(t, d, sizeof d);
  if (n < 0)
    return nd_set_error(err, t->n_dims == 3 || t->n_dims == 2 ? ND_ERR_DIMS : ND_ERR_RANK,
                        "BlazeFace %s '%s': expected %s, got %s", role, t->name, 
                        role[0] == 'r' ? "[1,N,16]" : "[1,N,1]", d);
  return nd_tensor_validate(t, role, err);
}

/* Pick the (regressors, scores) pairs and check they cover the anchors. */
static nd_status bf_find_heads(nd_decoder *dec, const nd_tensor *ts, int n, bf_head *heads,
                               int *n_heads, nd_error *err) {
  bf_priv *p = dec->priv;
  int nh = 0;
  char got[192];

  if (dec->cfg.boxes_tensor || dec->cfg.scores_tensor) {
    /* Named: one pair covering every anchor (concatenated export). */
    const nd_tensor *r = nd_find_tensor(ts, n, dec->cfg.boxes_tensor);
    const nd_tensor *s = nd_find_tensor(ts, n, dec->cfg.scores_tensor);
    nd_tensors_str(ts, n, got, sizeof got);
    if (!r || !s)
      return nd_set_error(err, ND_ERR_MISSING, "BlazeFace: output '%s' not found (outputs: %s)",
                          !r ? (dec->cfg.boxes_tensor ? dec->cfg.boxes_tensor : "(boxes unset)")
                             : (dec->cfg.scores_tensor ? dec->cfg.scores_tensor
                                                       : "(scores unset)"),
                          got);
    nd_status st = check_named(r, "regressors", reg_n(r), err);
    if (st == ND_OK)
      st = check_named(s, "scores", score_n(s), err);
    if (st != ND_OK)
      return st;
    heads[0].reg = r;
    heads[0].score = s;
    heads[0].n = reg_n(r);
    if (score_n(s) != heads[0].n)
      return nd_set_error(err, ND_ERR_DIMS,
                          "BlazeFace: regressors '%s' have %lld anchors, scores '%s' %lld",
                          r->name, (long long)heads[0].n, s->name, (long long)score_n(s));
    nh = 1;
  } else {
    /* By shape: every [1,N,16] with the [1,N,1] of the same N. */
    int used[64] = {0};
    for (int i = 0; i < n && i < 64; i++) {
      int64_t rn = reg_n(&ts[i]);
      if (rn < 0)
        continue;
      int si = -1;
      for (int j = 0; j < n && j < 64; j++)
        if (j != i && !used[j] && reg_n(&ts[j]) < 0 && score_n(&ts[j]) == rn) {
          si = j;
          break;
        }
      if (si < 0) {
        nd_tensors_str(ts, n, got, sizeof got);
        return nd_set_error(err, ND_ERR_MISSING,
                            "BlazeFace: no scores [1,%lld,1] for regressors '%s' (outputs: %s)",
                            (long long)rn, ts[i].name ? ts[i].name : "?", got);
      }
      if (nh == BF_MAX_HEADS)
        return nd_set_error(err, ND_ERR_DIMS, "BlazeFace: more than %d heads", BF_MAX_HEADS);
      used[si] = 1;
      heads[nh].reg = &ts[i];
      heads[nh].score = &ts[si];
      heads[nh].n = rn;
      nh++;
    }
    if (nh == 0) {
      nd_tensors_str(ts, n, got, sizeof got);
      return nd_set_error(err, ND_ERR_MISSING,
                          "BlazeFace: no regressors [1,N,16] among the outputs (%s)", got);
    }
    /* Finer strides have more anchors and come first in anchor order
     * (insertion sort: stable for equal sizes). */
    for (int i = 1; i < nh; i++)
      for (int j = i; j > 0 && heads[j].n > heads[j - 1].n; j--) {
        bf_head t = heads[j];
        heads[j] = heads[j - 1];
        heads[j - 1] = t;
      }
    for (int i = 0; i < nh; i++) {
      nd_status st = nd_tensor_validate(heads[i].reg, "regressors", err);
      if (st == ND_OK)
        st = nd_tensor_validate(heads[i].score, "scores", err);
      if (st != ND_OK)
        return st;
    }
  }
  int64_t total = 0;
  for (int i = 0; i < nh; i++)
    total += heads[i].n;
  char grids[96];
  size_t used = 0;
  grids[0] = '\0';
  for (int g = 0; g < p->n_groups && used < sizeof grids; g++)
    used += (size_t)snprintf(grids + used, sizeof grids - used, "%s%d at stride %d",
                             g ? " + " : "", p->group_end[g] - (g ? p->group_end[g - 1] : 0),
                             p->group_stride[g]);
  if (total != p->n_anchors) {
    nd_tensors_str(ts, n, got, sizeof got);
    return nd_set_error(err, ND_ERR_DIMS,
                        "BlazeFace: the outputs cover %lld anchors, the %dx%d %s model has "
                        "%d (%s) (outputs: %s)",
                        (long long)total, dec->model_w, dec->model_h, p->v->name, p->n_anchors,
                        grids, got);
  }
  /* Each head must end where a stride's anchors end, or anchors and
   * outputs would be paired across grids. */
  int64_t end = 0;
  for (int i = 0; i < nh; i++) {
    end += heads[i].n;
    int ok = 0;
    for (int g = 0; g < p->n_groups; g++)
      ok |= p->group_end[g] == end;
    if (!ok) {
      nd_tensors_str(ts, n, got, sizeof got);
      return nd_set_error(err, ND_ERR_DIMS,
                          "BlazeFace: an output head ends at anchor %lld, not where a stride of "
                          "the %dx%d %s model does (%s) (outputs: %s)",
                          (long long)end, dec->model_w, dec->model_h, p->v->name, grids, got);
    }
  }
  *n_heads = nh;
  return ND_OK;
}

static nd_status bf_decode(nd_decoder *dec, const nd_tensor *ts, int n, nd_error *err) {
  bf_priv *p = dec->priv;
  bf_head heads[BF_MAX_HEADS];
  int nh = 0;
  nd_status st = bf_find_heads(dec, ts, n, heads, &nh, err);
  if (st != ND_OK)
    return st;
  st = nd_decoder_reserve(dec, p->n_anchors, err);
  if (st != ND_OK)
    return st;

  const float mw = (float)dec->model_w, mh = (float)dec->model_h;
  const float thr = dec->cfg.score_threshold >= 0.0f ? dec->cfg.score_threshold
                                                     : p->v->score_threshold;
  int nc = 0, a = 0;
  for (int h = 0; h < nh; h++) {
    const nd_tensor *rt = heads[h].reg, *stt = heads[h].score;
    for (int64_t i = 0; i < heads[h].n; i++, a++) {
      float logit = nd_tget(stt, i);
      if (logit != logit) /* NaN: a broken model must not produce boxes */
        continue;
      logit = fminf(fmaxf(logit, -BF_SCORE_CLIP), BF_SCORE_CLIP);
      float score = nd_sigmoid(logit);
      if (score < thr)
        continue;
      const float *an = p->anchors + (size_t)a * 4;
      int64_t b = i * BF_COORDS;
      /* raw values are input pixels; anchors are normalized */
      float cx = nd_tget(rt, b + 0) / mw * an[2] + an[0];
      float cy = nd_tget(rt, b + 1) / mh * an[3] + an[1];
      float w = nd_tget(rt, b + 2) / mw * an[2];
      float hh = nd_tget(rt, b + 3) / mh * an[3];
      nd_detection *d = &dec->dets[nc];
      d->x0 = (cx - w * 0.5f) * mw;
      d->y0 = (cy - hh * 0.5f) * mh;
      d->x1 = (cx + w * 0.5f) * mw;
      d->y1 = (cy + hh * 0.5f) * mh;
      d->score = score;
      d->class_id = 0;
      d->n_keypoints = BF_KEYPOINTS;
      for (int k = 0; k < BF_KEYPOINTS; k++) {
        d->keypoints[k].x = (nd_tget(rt, b + 4 + 2 * k) / mw * an[2] + an[0]) * mw;
        d->keypoints[k].y = (nd_tget(rt, b + 5 + 2 * k) / mh * an[3] + an[1]) * mh;
      }
      if (!(d->x1 > d->x0 && d->y1 > d->y0)) /* degenerate or NaN box */
        continue;
      nc++;
    }
  }
  dec->n_results = nd_nms(dec->dets, nc, dec->order, dec->cfg.iou_threshold,
                          dec->cfg.max_detections, 1,
                          dec->cfg.weighted_nms ? ND_NMS_WEIGHTED : ND_NMS_HARD);
  return ND_OK;
}

/* Anchors of the MediaPipe configuration for a w x h input. */
static nd_status bf_set_size(nd_decoder *dec, int w, int h, nd_error *err) {
  bf_priv *p = dec->priv;
  const bf_variant *v = NULL;
  for (int i = 0; i < BF_N_VARIANTS; i++)
    if (variants[i].input_w == w && variants[i].input_h == h)
      v = &variants[i];
  if (!v)
    return nd_set_error(err, ND_ERR_UNSUPPORTED,
                        "BlazeFace: no anchor configuration for a %dx%d model input (known: "
                        "128x128 MediaPipe face_detection_front, 256x256 face_detection_back)",
                        w, h);
  nd_anchor_options opt;
  v->options(&opt);
  int n = 0;
  nd_anchors_generate(&opt, NULL, 0, &n, NULL);
  if (n > p->cap) {
    float *a = realloc(p->anchors, (size_t)n * 4 * sizeof(float));
    if (!a)
      return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
    p->anchors = a;
    p->cap = n;
  }
  nd_status st = nd_anchors_generate(&opt, p->anchors, p->cap, &p->n_anchors, err);
  if (st != ND_OK)
    return st;
  /* where each stride's anchors end: cells x anchors per cell, as
   * nd_anchors_generate() merges layers that share a stride */
  int per_cell = opt.n_aspect_ratios + (opt.interpolated_scale_aspect_ratio > 0.0f);
  int end = 0;
  p->n_groups = 0;
  for (int l = 0; l < opt.num_layers;) {
    int last = l;
    while (last < opt.num_layers && opt.strides[last] == opt.strides[l])
      last++;
    int fw = (w + opt.strides[l] - 1) / opt.strides[l];
    int fh = (h + opt.strides[l] - 1) / opt.strides[l];
    end += fw * fh * per_cell * (last - l);
    p->group_end[p->n_groups] = end;
    p->group_stride[p->n_groups] = opt.strides[l];
    p->n_groups++;
    l = last;
  }
  if (end != p->n_anchors)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "BlazeFace %s: %d anchors in the grids, %d made",
                        v->name, end, p->n_anchors);
  p->v = v;
  return nd_decoder_reserve(dec, p->n_anchors, err);
}

static const char *bf_variant_name(const nd_decoder *dec) {
  const bf_priv *p = dec->priv;
  return p && p->v ? p->v->name : NULL;
}

nd_status nd_blazeface_init(nd_decoder *dec, nd_error *err) {
  /* one side given: the models are square */
  if (dec->model_w == 0)
    dec->model_w = dec->model_h ? dec->model_h : 128;
  if (dec->model_h == 0)
    dec->model_h = dec->model_w;

  bf_priv *p = calloc(1, sizeof *p);
  if (!p)
    return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
  dec->priv = p;
  dec->decode = bf_decode;
  dec->destroy = bf_destroy;
  dec->set_size = bf_set_size;
  dec->variant = bf_variant_name;
  return bf_set_size(dec, dec->model_w, dec->model_h, err);
}
