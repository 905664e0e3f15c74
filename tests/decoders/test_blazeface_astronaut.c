/* test_blazeface_astronaut.c - decode BlazeFace outputs saved by nn-run and
 * compare with a hand-labelled face (see blazeface_astronaut.py for the
 * labelling).
 *
 * Usage: test-blazeface-astronaut OUTDIR FRAME_W FRAME_H --expect x0,y0,x1,y1
 *          [--input-size N]
 * OUTDIR holds output_0.pb .. output_3.pb (TensorProto, as nn-run
 * --save-outputs writes them).  The frame was stretched to the model's NxN
 * input (128: the front model, 256: the back model).  The decoder learns N
 * the way tensordecoder does from onnxinfer's geometry
 * (nd_decoder_set_model_size) and maps the boxes back through that
 * geometry.  Passes when exactly one face is found and its IoU with the
 * expected box is >= 0.5.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "include/nn_file.h"
#include "onnx/loader.h"

/* Through the runtime's guarded reader; free with nn_file_free. */
static void *read_file(const char *path, size_t *size) {
  void *buf = NULL;
  nn_error err = {0};
  if (nn_file_read(path, (size_t)1 << 30, &buf, size, &err) != NN_OK)
    fprintf(stderr, "%s\n", err.msg);
  return buf;
}

int main(int argc, char **argv) {
  if ((argc != 6 && argc != 8) || strcmp(argv[4], "--expect") != 0 ||
      (argc == 8 && strcmp(argv[6], "--input-size") != 0)) {
    fprintf(stderr, "usage: %s OUTDIR FRAME_W FRAME_H --expect x0,y0,x1,y1 [--input-size N]\n",
            argv[0]);
    return 2;
  }
  int fw = atoi(argv[2]), fh = atoi(argv[3]);
  int in_size = argc == 8 ? atoi(argv[7]) : 128;
  nd_detection want = {0};
  if (sscanf(argv[5], "%f,%f,%f,%f", &want.x0, &want.y0, &want.x1, &want.y1) != 4) {
    fprintf(stderr, "bad --expect '%s'\n", argv[5]);
    return 2;
  }
  nn_tensor t[4];
  char *names[4] = {0};
  nd_tensor nt[4];
  int n_t = 0;
  for (int i = 0; i < 4; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/output_%d.pb", argv[1], i);
    size_t size = 0;
    void *buf = read_file(path, &size);
    nn_error err;
    if (!buf || nn_tensor_decode(buf, size, &t[i], &names[i], &err) != NN_OK) {
      fprintf(stderr, "cannot read %s\n", path);
      nn_file_free(buf);
      return 1;
    }
    nn_file_free(buf);
    memset(&nt[i], 0, sizeof nt[i]);
    nt[i].name = names[i];
    nt[i].dtype = (int)t[i].dtype;
    nt[i].n_dims = t[i].rank;
    for (int d = 0; d < t[i].rank; d++)
      nt[i].dims[d] = t[i].dims[d];
    nt[i].data = t[i].data;
    nt[i].size = t[i].nbytes;
    n_t++;
  }

  nd_config cfg;
  nd_config_init(&cfg, ND_SCHEME_BLAZEFACE);
  nd_decoder *dec = NULL;
  nd_error err = {0};
  const nd_detection *res = NULL;
  int n = 0, rc = 1;
  nd_transform tf;
  /* the frame stretched to the input, as onnxinfer records it */
  nd_geometry geom = {fw, fh, in_size, in_size, 0, 0, fw, fh, (double)in_size / fw,
                      (double)in_size / fh, 0, 0};
  if (nd_decoder_new(&cfg, &dec, &err) != ND_OK ||
      nd_decoder_set_model_size(dec, in_size, in_size, &err) != ND_OK ||
      nd_decoder_decode(dec, nt, n_t, &res, &n, &err) != ND_OK ||
      nd_transform_init_geometry(&tf, &geom, 0, 0, 0, 0, &err) != ND_OK) {
    fprintf(stderr, "decode: %s: %s\n", nd_status_str(err.status), err.msg);
    goto out;
  }
  printf("BlazeFace %s, %dx%d input\n", nd_decoder_variant(dec), in_size, in_size);
  printf("faces: %d\n", n);
  float best_iou = 0;
  for (int i = 0; i < n; i++) {
    nd_detection d = res[i];
    nd_transform_detection(&tf, &d);
    float iou = nd_iou(&d, &want);
    if (iou > best_iou)
      best_iou = iou;
    printf("face %d: score %.4f box (%.1f, %.1f)-(%.1f, %.1f) IoU %.3f with the hand label "
           "(%.0f, %.0f)-(%.0f, %.0f)\n",
           i, d.score, d.x0, d.y0, d.x1, d.y1, iou, want.x0, want.y0, want.x1, want.y1);
    for (int k = 0; k < d.n_keypoints; k++)
      printf("  %-18s (%.1f, %.1f)\n", nd_blazeface_keypoint_name(k), d.keypoints[k].x,
             d.keypoints[k].y);
  }
  if (n != 1)
    fprintf(stderr, "FAIL: expected exactly one face, found %d\n", n);
  else if (best_iou < 0.5f)
    fprintf(stderr, "FAIL: IoU %.3f < 0.5\n", best_iou);
  else
    rc = 0;
  printf("%s\n", rc == 0 ? "PASS" : "FAIL");
out:
  nd_decoder_free(dec);
  for (int i = 0; i < n_t; i++) {
    nn_aligned_free(t[i].data);
    nn_free(names[i]);
  }
  return rc;
}
