/* nms.c - the nms family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_nms[], collected by ops/registry.c),
 * and the selection that sizes the output (nms.h). */
#include <math.h>

#include "ops/inputs.h"
#include "ops/nms.h"

static const nn_value *in(const nn_node *n, int i) { return nn_op_in(n, i); }

/* true when a comes before b: best score first, then lowest index, as the
 * reference's ordering */
static inline bool nms_before(const nn_nms_cand *a, const nn_nms_cand *b) {
  if (a->score != b->score)
    return a->score > b->score;
  return a->idx < b->idx;
}

static void nms_sift(nn_nms_cand *v, int64_t r, int64_t n) {
  for (;;) {
    int64_t ch = 2 * r + 1;
    if (ch >= n)
      break;
    if (ch + 1 < n && nms_before(&v[ch], &v[ch + 1]))
      ch++;
    if (!nms_before(&v[r], &v[ch]))
      break;
    nn_nms_cand t = v[r];
    v[r] = v[ch];
    v[ch] = t;
    r = ch;
  }
}

/* Heap sort: in place and allocation-free (libc qsort may allocate), and the
 * order is total, so stability does not matter. */
static void nms_sort(nn_nms_cand *v, int64_t n) {
  for (int64_t i = n / 2 - 1; i >= 0; i--)
    nms_sift(v, i, n);
  for (int64_t end = n - 1; end > 0; end--) {
    nn_nms_cand t = v[0];
    v[0] = v[end];
    v[end] = t;
    nms_sift(v, 0, end);
  }
}

static bool nms_suppress(const float *boxes, int64_t base, int64_t i, int64_t j, bool center,
                         float iou_th) {
  float a[4], b[4];
  for (int k = 0; k < 4; k++) {
    a[k] = boxes[base + i * 4 + k];
    b[k] = boxes[base + j * 4 + k];
  }
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (!center) { /* [y1, x1, y2, x2], corners in any order */
    ax0 = fminf(a[1], a[3]), ax1 = fmaxf(a[1], a[3]);
    ay0 = fminf(a[0], a[2]), ay1 = fmaxf(a[0], a[2]);
    bx0 = fminf(b[1], b[3]), bx1 = fmaxf(b[1], b[3]);
    by0 = fminf(b[0], b[2]), by1 = fmaxf(b[0], b[2]);
  } else { /* [x_center, y_center, width, height] */
    ax0 = a[0] - a[2] / 2, ax1 = a[0] + a[2] / 2, ay0 = a[1] - a[3] / 2, ay1 = a[1] + a[3] / 2;
    bx0 = b[0] - b[2] / 2, bx1 = b[0] + b[2] / 2, by0 = b[1] - b[3] / 2, by1 = b[1] + b[3] / 2;
  }
  float ix0 = fmaxf(ax0, bx0), ix1 = fminf(ax1, bx1);
  if (!(ix1 > ix0))
    return false;
  float iy0 = fmaxf(ay0, by0), iy1 = fminf(ay1, by1);
  if (!(iy1 > iy0))
    return false;
  float inter = (ix1 - ix0) * (iy1 - iy0);
  float area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
  float uni = area_a + area_b - inter;
  if (!(inter > 0) || !(area_a > 0) || !(area_b > 0) || !(uni > 0))
    return false;
  return inter / uni > iou_th;
}

int64_t nn_nms_select(const nn_node *n, nn_nms_cand *cand, int64_t *sel, int64_t *out,
                      int64_t cap) {
  const nn_value *boxes = n->x[0], *scores = n->x[1];
  const nn_value *mo = in(n, 2), *iou = in(n, 3), *sth = in(n, 4);
  const float *bx = boxes->data, *sc = scores->data;
  bool center = nn_attr_int(n, "center_point_box", 0) == 1;
  int64_t B = boxes->dims[0], S = boxes->dims[1], C = scores->dims[1];
  int64_t max_out = mo && mo->numel ? nn_value_get_int(mo, 0) : 0;
  float iou_th = iou && iou->numel ? (float)nn_value_get_double(iou, 0) : 0.0f;
  bool has_sth = sth && sth->numel;
  float sc_th = has_sth ? (float)nn_value_get_double(sth, 0) : 0.0f;
  int64_t total = 0;
  if (max_out <= 0)
    return 0;
  for (int64_t b = 0; b < B; b++)
    for (int64_t c = 0; c < C; c++) {
      int64_t nc = 0;
      for (int64_t s = 0; s < S; s++) {
        float v = sc[(b * C + c) * S + s];
        if (!has_sth || v > sc_th) {
          cand[nc].score = v;
          cand[nc++].idx = s;
        }
      }
      nms_sort(cand, nc);
      int64_t nsel = 0;
      for (int64_t k = 0; k < nc && nsel < max_out; k++) {
        bool keep = true;
        for (int64_t j = 0; j < nsel && keep; j++)
          if (nms_suppress(bx, b * S * 4, cand[k].idx, sel[j], center, iou_th))
            keep = false;
        if (!keep)
          continue;
        sel[nsel++] = cand[k].idx;
        if (out && total < cap) {
          out[total * 3] = b;
          out[total * 3 + 1] = c;
          out[total * 3 + 2] = cand[k].idx;
        }
        total++;
      }
    }
  return total;
}

static nn_status nms_infer(nn_ctx *c, nn_node *n) {
  nn_value *boxes = n->x[0], *scores = nn_op_in(n, 1);
  if (!scores)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "scores is required");
  if (boxes->dtype != NN_DTYPE_FLOAT || scores->dtype != NN_DTYPE_FLOAT)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "boxes and scores must be float");
  if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 ||
      scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
    return nn_fail(c, NN_ERR_SHAPE, "expects boxes (B, S, 4) and scores (B, C, S)");
  int64_t cpb = nn_attr_int(n, "center_point_box", 0);
  if (cpb != 0 && cpb != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported center_point_box %lld", (long long)cpb);
  for (int i = 2; i < 5; i++) {
    nn_value *v = nn_op_in(n, i);
    if (!v)
      continue;
    bool index = v->dtype == NN_DTYPE_INT64 || v->dtype == NN_DTYPE_INT32;
    if (v->numel > 1 || (i == 2 ? !index : !nn_dtype_is_float(v->dtype)))
      return nn_fail(c, NN_ERR_SHAPE, "input %d must be a scalar of the right type", i);
  }
  for (int i = 0; i < n->n_in; i++)
    if (n->x[i] && !n->x[i]->data)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "input '%s' decides the number of selected boxes "
                     "but its value is not known when planning", n->x[i]->name);
  size_t scratch;
  if (nn_nms_scratch_bytes(boxes->dims[1], &scratch))
    return nn_fail(c, NN_ERR_LIMIT, "too many boxes");
  void *tmp = nn_malloc(scratch);
  if (!tmp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  int64_t count = nn_nms_select(n, tmp, nn_nms_scratch_sel(tmp, boxes->dims[1]), NULL, 0);
  nn_free(tmp);
  int64_t od[2] = {count, 3};
  return nn_set_output(c, n->y[0], NN_DTYPE_INT64, 2, od);
}

/* The family's operators (ops/registry.c), with their shape and dtype
 * inference: the selection itself, run on the known inputs. */
const nn_op_def nn_ops_nms[] = {
  /* every NMS input decides how many boxes survive, hence the output shape */
  {.name = "NonMaxSuppression", .versions = {10, 11}, .shape_inputs = 0x1f, .infer = nms_infer},
  {0},
};
