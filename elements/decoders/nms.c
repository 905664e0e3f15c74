/* nms.c - non-maximum suppression shared by the detection schemes.
 *
 * Hard NMS (SSD, YOLO): the best box wins, every box of the same class whose
 * IoU with it exceeds the threshold is dropped.
 *
 * Weighted NMS (BlazeFace, as MediaPipe's NonMaxSuppressionCalculator with
 * algorithm WEIGHTED): the best box and all boxes overlapping it form a
 * cluster; the result is the score-weighted mean of the cluster's boxes and
 * keypoints with the best box's score.  Anchors of neighbouring cells fire
 * on the same face, and averaging them gives steadier boxes than keeping
 * one.
 */
#include <stdlib.h>

#include "decode_internal.h"

/* Best first; ties broken by position so the order does not depend on
 * qsort's (unstable) choices. */
static int cmp_score_desc(const void *pa, const void *pb) {
  const nd_detection *a = pa, *b = pb;
  if (a->score != b->score)
    return a->score > b->score ? -1 : 1;
  if (a->y0 != b->y0)
    return a->y0 < b->y0 ? -1 : 1;
  if (a->x0 != b->x0)
    return a->x0 < b->x0 ? -1 : 1;
  return 0;
}

int nd_nms(nd_detection *dets, int n, int *order, float iou_threshold, int max_out,
           int class_agnostic, nd_nms_kind kind) {
  if (!dets || !order || n <= 0 || max_out <= 0)
    return 0;
  qsort(dets, (size_t)n, sizeof *dets, cmp_score_desc);
  /* order[i] != 0: candidate i was suppressed (or merged). */
  memset(order, 0, (size_t)n * sizeof *order);

  int kept = 0;
  for (int i = 0; i < n && kept < max_out; i++) {
    if (order[i])
      continue;
    order[i] = 1;
    nd_detection best = dets[i];

    if (kind == ND_NMS_WEIGHTED) {
      /* The cluster: best itself (IoU 1) and every live box overlapping it. */
      double tw = 0, x0 = 0, y0 = 0, x1 = 0, y1 = 0;
      double kx[ND_MAX_KEYPOINTS] = {0}, ky[ND_MAX_KEYPOINTS] = {0};
      int nk = best.n_keypoints;
      for (int j = i; j < n; j++) {
        if (j != i && (order[j] || (!class_agnostic && dets[j].class_id != best.class_id)))
          continue;
        if (j != i && !(nd_iou(&best, &dets[j]) > iou_threshold))
          continue;
        order[j] = 1;
        double w = dets[j].score;
        tw += w;
        x0 += dets[j].x0 * w;
        y0 += dets[j].y0 * w;
        x1 += dets[j].x1 * w;
        y1 += dets[j].y1 * w;
        for (int k = 0; k < nk && k < dets[j].n_keypoints; k++) {
          kx[k] += dets[j].keypoints[k].x * w;
          ky[k] += dets[j].keypoints[k].y * w;
        }
      }
      if (tw > 0) {
        best.x0 = (float)(x0 / tw);
        best.y0 = (float)(y0 / tw);
        best.x1 = (float)(x1 / tw);
        best.y1 = (float)(y1 / tw);
        for (int k = 0; k < nk; k++) {
          best.keypoints[k].x = (float)(kx[k] / tw);
          best.keypoints[k].y = (float)(ky[k] / tw);
        }
      }
    } else {
      for (int j = i + 1; j < n; j++) {
        if (order[j] || (!class_agnostic && dets[j].class_id != best.class_id))
          continue;
        if (nd_iou(&best, &dets[j]) > iou_threshold)
          order[j] = 1;
      }
    }
    /* kept <= i: every slot below i is already consumed. */
    dets[kept++] = best;
  }
  return kept;
}
